# Each suite is a check program; shared helpers in tests/testutil.[ch].
TEST_LDADD = tests/libtestutil.la $(LNCSIM_LIBS) $(CHECK_LIBS) $(LNCSIM_EXT_LIBS)
# Suites use every library, private headers included where they test
# internals. The include path rides in TEST_CFLAGS, which every suite
# names already, so a new suite needs no _CPPFLAGS line of its own.
TEST_CPPFLAGS = -I$(srcdir)/tests $(LNCSIM_ALL_INCLUDES) \
	-DLNCSIM_SRCDIR='"$(abs_top_srcdir)"'
TEST_CFLAGS = $(TEST_CPPFLAGS) $(AM_CFLAGS) $(CHECK_CFLAGS)
check_LTLIBRARIES = tests/libtestutil.la
tests_libtestutil_la_SOURCES = tests/util.c tests/testutil.h
tests_libtestutil_la_CFLAGS = $(TEST_CFLAGS)
EXTRA_DIST += tests/fixtures tests/speedscope_probe.js

check_PROGRAMS += tests/test_model
tests_test_model_SOURCES = tests/test_model.c
tests_test_model_CFLAGS = $(TEST_CFLAGS)
tests_test_model_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/test_dtype
tests_test_dtype_SOURCES = tests/test_dtype.c
tests_test_dtype_CFLAGS = $(TEST_CFLAGS)
tests_test_dtype_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/test_npy
tests_test_npy_SOURCES = tests/test_npy.c
tests_test_npy_CFLAGS = $(TEST_CFLAGS)
tests_test_npy_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/test_verify
tests_test_verify_SOURCES = tests/test_verify.c
tests_test_verify_CFLAGS = $(TEST_CFLAGS)
tests_test_verify_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/test_cli
tests_test_cli_SOURCES = tests/test_cli.c
tests_test_cli_CFLAGS = $(TEST_CFLAGS)
tests_test_cli_LDADD = $(TEST_LDADD)

TESTS += tests/test_model tests/test_dtype tests/test_npy tests/test_verify tests/test_cli

check_PROGRAMS += tests/test_gen
tests_test_gen_SOURCES = tests/test_gen.c
tests_test_gen_CFLAGS = $(TEST_CFLAGS)
tests_test_gen_LDADD = $(TEST_LDADD)
TESTS += tests/test_gen

check_PROGRAMS += tests/test_db tests/test_report
tests_test_db_SOURCES = tests/test_db.c
tests_test_db_CFLAGS = $(TEST_CFLAGS)
tests_test_db_LDADD = $(TEST_LDADD)
tests_test_report_SOURCES = tests/test_report.c
tests_test_report_CFLAGS = $(TEST_CFLAGS)
tests_test_report_LDADD = $(TEST_LDADD)
TESTS += tests/test_db tests/test_report

check_PROGRAMS += tests/test_sim tests/test_sched tests/test_run_cli \
	tests/test_loops tests/test_regs tests/test_branch
tests_test_sim_SOURCES = tests/test_sim.c
tests_test_sim_CFLAGS = $(TEST_CFLAGS)
tests_test_sim_LDADD = $(TEST_LDADD)
tests_test_sched_SOURCES = tests/test_sched.c
tests_test_sched_CFLAGS = $(TEST_CFLAGS)
tests_test_sched_LDADD = $(TEST_LDADD)
tests_test_loops_SOURCES = tests/test_loops.c
tests_test_loops_CFLAGS = $(TEST_CFLAGS)
tests_test_loops_LDADD = $(TEST_LDADD)
tests_test_regs_SOURCES = tests/test_regs.c
tests_test_regs_CFLAGS = $(TEST_CFLAGS)
tests_test_regs_LDADD = $(TEST_LDADD)
tests_test_branch_SOURCES = tests/test_branch.c
tests_test_branch_CFLAGS = $(TEST_CFLAGS)
tests_test_branch_LDADD = $(TEST_LDADD)
tests_test_run_cli_SOURCES = tests/test_run_cli.c
tests_test_run_cli_CFLAGS = $(TEST_CFLAGS)
tests_test_run_cli_LDADD = $(TEST_LDADD)
TESTS += tests/test_sim tests/test_sched tests/test_run_cli tests/test_loops \
	tests/test_regs tests/test_branch

check_PROGRAMS += tests/test_compute
tests_test_compute_SOURCES = tests/test_compute.c
tests_test_compute_CFLAGS = $(TEST_CFLAGS)
tests_test_compute_LDADD = $(TEST_LDADD)
TESTS += tests/test_compute

check_PROGRAMS += tests/test_trace
tests_test_trace_SOURCES = tests/test_trace.c
tests_test_trace_CFLAGS = $(TEST_CFLAGS)
tests_test_trace_LDADD = $(TEST_LDADD)
TESTS += tests/test_trace

check_PROGRAMS += tests/test_diff
tests_test_diff_SOURCES = tests/test_diff.c
tests_test_diff_CFLAGS = $(TEST_CFLAGS)
tests_test_diff_LDADD = $(TEST_LDADD)
TESTS += tests/test_diff

check_PROGRAMS += tests/test_linker
tests_test_linker_SOURCES = tests/test_linker.c
tests_test_linker_CFLAGS = $(TEST_CFLAGS)
tests_test_linker_LDADD = $(TEST_LDADD)
TESTS += tests/test_linker

# the modular link: module definitions with several instances
check_PROGRAMS += tests/test_multidef
tests_test_multidef_SOURCES = tests/test_multidef.c
tests_test_multidef_CFLAGS = $(TEST_CFLAGS)
tests_test_multidef_LDADD = $(TEST_LDADD)
TESTS += tests/test_multidef

check_PROGRAMS += tests/test_klr tests/test_provision tests/test_klrops
tests_test_klr_SOURCES = tests/test_klr.c
tests_test_klr_CFLAGS = $(TEST_CFLAGS)
tests_test_klr_LDADD = $(TEST_LDADD)
tests_test_provision_SOURCES = tests/test_provision.c
tests_test_provision_CFLAGS = $(TEST_CFLAGS)
tests_test_provision_LDADD = $(TEST_LDADD)
tests_test_klrops_SOURCES = tests/test_klrops.c
tests_test_klrops_CFLAGS = $(TEST_CFLAGS)
tests_test_klrops_LDADD = $(TEST_LDADD)
TESTS += tests/test_klr tests/test_provision tests/test_klrops

# the NKI example kernels softmax, layernorm, rmsnorm (examples/nki/)
check_PROGRAMS += tests/test_nki_norm
tests_test_nki_norm_SOURCES = tests/test_nki_norm.c
tests_test_nki_norm_CFLAGS = $(TEST_CFLAGS)
tests_test_nki_norm_LDADD = $(TEST_LDADD)
TESTS += tests/test_nki_norm

# the NKI example kernels (examples/nki): tiled matmul, PE transpose
check_PROGRAMS += tests/test_nki_mm
tests_test_nki_mm_SOURCES = tests/test_nki_mm.c
tests_test_nki_mm_CFLAGS = $(TEST_CFLAGS)
tests_test_nki_mm_LDADD = $(TEST_LDADD)
TESTS += tests/test_nki_mm

check_PROGRAMS += tests/test_nki_attn
tests_test_nki_attn_SOURCES = tests/test_nki_attn.c
tests_test_nki_attn_CFLAGS = $(TEST_CFLAGS)
tests_test_nki_attn_LDADD = $(TEST_LDADD)
TESTS += tests/test_nki_attn

# the KLR 0.0.12 schema generations
check_PROGRAMS += tests/test_klrgen
tests_test_klrgen_SOURCES = tests/test_klrgen.c
tests_test_klrgen_CFLAGS = $(TEST_CFLAGS)
tests_test_klrgen_LDADD = $(TEST_LDADD)
TESTS += tests/test_klrgen

# NKIKernel (IT55) execution in the simulator
check_PROGRAMS += tests/test_it55
tests_test_it55_SOURCES = tests/test_it55.c
tests_test_it55_CFLAGS = $(TEST_CFLAGS)
tests_test_it55_LDADD = $(TEST_LDADD)
TESTS += tests/test_it55

check_PROGRAMS += tests/test_safeio
tests_test_safeio_SOURCES = tests/test_safeio.c
tests_test_safeio_CFLAGS = $(TEST_CFLAGS)
tests_test_safeio_LDADD = $(TEST_LDADD)
TESTS += tests/test_safeio

# the compiler's wire form: instruction header, module keys, op keys
check_PROGRAMS += tests/test_format
tests_test_format_SOURCES = tests/test_format.c
tests_test_format_CFLAGS = $(TEST_CFLAGS)
tests_test_format_LDADD = $(TEST_LDADD)
TESTS += tests/test_format
# the instruction-set tables model/ops.def and model/fields.def
check_PROGRAMS += tests/test_optable
tests_test_optable_SOURCES = tests/test_optable.c
tests_test_optable_CFLAGS = $(TEST_CFLAGS)
tests_test_optable_LDADD = $(TEST_LDADD)
TESTS += tests/test_optable
# the enum spellings table model/enums.def
check_PROGRAMS += tests/test_enumtab
tests_test_enumtab_SOURCES = tests/test_enumtab.c
tests_test_enumtab_CFLAGS = $(TEST_CFLAGS)
tests_test_enumtab_LDADD = $(TEST_LDADD)
TESTS += tests/test_enumtab
# the quasi-affine (pelican) expressions of the wire form
check_PROGRAMS += tests/test_affine
tests_test_affine_SOURCES = tests/test_affine.c
tests_test_affine_CFLAGS = $(TEST_CFLAGS)
tests_test_affine_LDADD = $(TEST_LDADD)
TESTS += tests/test_affine
# the rules every suite keeps (timeouts, scratch directories, ./lncsim.db)
check_PROGRAMS += tests/test_hygiene
tests_test_hygiene_SOURCES = tests/test_hygiene.c
tests_test_hygiene_CFLAGS = $(TEST_CFLAGS)
tests_test_hygiene_LDADD = $(TEST_LDADD)
TESTS += tests/test_hygiene

# the reader harnesses of tests/fuzz/, replayed over seeds and mutations
check_PROGRAMS += tests/test_fuzz_replay
tests_test_fuzz_replay_SOURCES = tests/test_fuzz_replay.c tests/fuzz/fuzz.h \
	tests/fuzz/fuzz_module.c tests/fuzz/fuzz_npy.c tests/fuzz/fuzz_klr.c \
	tests/fuzz/fuzz_affine.c
tests_test_fuzz_replay_CFLAGS = $(TEST_CFLAGS) -I$(srcdir)/tests/fuzz
tests_test_fuzz_replay_LDADD = $(TEST_LDADD)
TESTS += tests/test_fuzz_replay

# modules in the neuronx-cc 2.24 wire form (examples/handoff224, every
# example in both spellings)
check_PROGRAMS += tests/test_wire224
tests_test_wire224_SOURCES = tests/test_wire224.c
tests_test_wire224_CFLAGS = $(TEST_CFLAGS)
tests_test_wire224_LDADD = $(TEST_LDADD)
TESTS += tests/test_wire224

CLEANFILES += simcheck-key-table.md

# the wire form against hand-written fixtures of every op family
check_PROGRAMS += tests/test_wire
tests_test_wire_SOURCES = tests/test_wire.c
tests_test_wire_CFLAGS = $(TEST_CFLAGS)
tests_test_wire_LDADD = $(TEST_LDADD)
TESTS += tests/test_wire

# the IR builder (model/build.h)
check_PROGRAMS += tests/test_build
tests_test_build_SOURCES = tests/test_build.c
tests_test_build_CFLAGS = $(TEST_CFLAGS)
tests_test_build_LDADD = $(TEST_LDADD)
TESTS += tests/test_build

# fuzz campaigns: result records, signatures, the coordinator and the
# driver over a scripted transport, and `lncsim fuzz --jobs` end to end
check_PROGRAMS += tests/test_fuzz
tests_test_fuzz_SOURCES = tests/test_fuzz.c
tests_test_fuzz_CFLAGS = $(TEST_CFLAGS) -I$(srcdir)/cli
tests_test_fuzz_LDADD = cli/libcli.la $(TEST_LDADD)
TESTS += tests/test_fuzz
# campaigns under mpirun (./configure --with-mpi)
if WITH_MPI
check_PROGRAMS += tests/test_mpi
tests_test_mpi_SOURCES = tests/test_mpi.c
tests_test_mpi_CFLAGS = $(TEST_CFLAGS)
tests_test_mpi_LDADD = $(TEST_LDADD)
TESTS += tests/test_mpi
else
EXTRA_DIST += tests/test_mpi.c
endif
check_PROGRAMS += tests/test_select
tests_test_select_SOURCES = tests/test_select.c
tests_test_select_CFLAGS = $(TEST_CFLAGS)
tests_test_select_LDADD = $(TEST_LDADD)
TESTS += tests/test_select

check_PROGRAMS += tests/test_sync
tests_test_sync_SOURCES = tests/test_sync.c
tests_test_sync_CFLAGS = $(TEST_CFLAGS)
tests_test_sync_LDADD = $(TEST_LDADD)
TESTS += tests/test_sync
check_PROGRAMS += tests/test_dmablk
tests_test_dmablk_SOURCES = tests/test_dmablk.c
tests_test_dmablk_CFLAGS = $(TEST_CFLAGS)
tests_test_dmablk_LDADD = $(TEST_LDADD)
TESTS += tests/test_dmablk

check_PROGRAMS += tests/test_intalu
tests_test_intalu_SOURCES = tests/test_intalu.c
tests_test_intalu_CFLAGS = $(TEST_CFLAGS)
tests_test_intalu_LDADD = $(TEST_LDADD)
TESTS += tests/test_intalu

check_PROGRAMS += tests/test_race
tests_test_race_SOURCES = tests/test_race.c
tests_test_race_CFLAGS = $(TEST_CFLAGS)
tests_test_race_LDADD = $(TEST_LDADD)
TESTS += tests/test_race

check_PROGRAMS += tests/test_dma
tests_test_dma_SOURCES = tests/test_dma.c
tests_test_dma_CFLAGS = $(TEST_CFLAGS)
tests_test_dma_LDADD = $(TEST_LDADD)
TESTS += tests/test_dma

check_PROGRAMS += tests/test_elemfast
tests_test_elemfast_SOURCES = tests/test_elemfast.c
tests_test_elemfast_CFLAGS = $(TEST_CFLAGS)
tests_test_elemfast_LDADD = $(TEST_LDADD)
TESTS += tests/test_elemfast

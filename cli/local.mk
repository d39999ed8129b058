bin_PROGRAMS += lncsim
# the program uses every library
lncsim_CPPFLAGS = -I$(srcdir)/cli $(LNCSIM_ALL_INCLUDES)
lncsim_SOURCES = cli/main.c cli/cli.h cli/cmd_verify.c
lncsim_SOURCES += cli/cli_db.h cli/cli_db.c cli/cmd_db.c cli/cmd_report.c
lncsim_SOURCES += cli/cmd_gen.c cli/cmd_diff.c cli/cmd_fuzz.c
lncsim_LDADD = cli/libcli.la $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
lncsim_SOURCES += cli/cmd_run.c
lncsim_SOURCES += cli/cmd_link.c cli/cmd_mmt.c
lncsim_SOURCES += cli/cmd_lower.c cli/cmd_klr.c
# the MPI transport of fuzz campaigns (./configure --with-mpi)
if WITH_MPI
lncsim_SOURCES += cli/fuzz_mpi.c cli/fuzz_mpi.h
lncsim_CPPFLAGS += $(MPI_CFLAGS)
lncsim_LDADD += $(MPI_LIBS)
else
EXTRA_DIST += cli/fuzz_mpi.c cli/fuzz_mpi.h
endif

# The parts of the program the test suites drive on their own: one
# differential check (diff and fuzz), and what a fuzz campaign is made
# of -- its options and result records, the failure signatures, a case,
# the coordinator's state machine, the case servers, the driver loop and
# its sink. The MPI transport stays in the program.
noinst_LTLIBRARIES += cli/libcli.la
cli_libcli_la_CPPFLAGS = -I$(srcdir)/cli $(LNCSIM_ALL_INCLUDES)
cli_libcli_la_SOURCES = cli/diff_case.c cli/diff_case.h \
	cli/race_out.c cli/race_out.h \
	cli/fuzz.h cli/fuzz_rec.c cli/fuzz_sig.c cli/fuzz_case.c \
	cli/fuzz_coord.h cli/fuzz_coord.c \
	cli/fuzz_pool.h cli/fuzz_pool.c \
	cli/fuzz_run.h cli/fuzz_run.c cli/fuzz_sink.c

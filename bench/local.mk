# benches use every library
BENCH_CPPFLAGS = $(LNCSIM_ALL_INCLUDES) -DLNCSIM_SRCDIR='"$(abs_top_srcdir)"'
EXTRA_PROGRAMS += bench/bench_load
BENCH_PROGS += bench/bench_load
bench_bench_load_SOURCES = bench/bench_load.c
bench_bench_load_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_load_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
CLEANFILES += $(BENCH_PROGS)
EXTRA_PROGRAMS += bench/bench_db
BENCH_PROGS += bench/bench_db
bench_bench_db_SOURCES = bench/bench_db.c
bench_bench_db_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_db_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)

EXTRA_PROGRAMS += bench/bench_sim
BENCH_PROGS += bench/bench_sim
bench_bench_sim_SOURCES = bench/bench_sim.c
bench_bench_sim_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_sim_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)

EXTRA_PROGRAMS += bench/bench_mm
BENCH_PROGS += bench/bench_mm
bench_bench_mm_SOURCES = bench/bench_mm.c bench/blascpu.c bench/blascpu.h
bench_bench_mm_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_mm_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
if HAVE_OPENBLAS
bench_bench_mm_CPPFLAGS += -DLNCSIM_BENCH_OPENBLAS
bench_bench_mm_LDADD += -lopenblas
endif

EXTRA_PROGRAMS += bench/bench_dbmm
BENCH_PROGS += bench/bench_dbmm
bench_bench_dbmm_SOURCES = bench/bench_dbmm.c bench/blascpu.c bench/blascpu.h
bench_bench_dbmm_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_dbmm_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
if HAVE_OPENBLAS
bench_bench_dbmm_CPPFLAGS += -DLNCSIM_BENCH_OPENBLAS
bench_bench_dbmm_LDADD += -lopenblas
endif

EXTRA_PROGRAMS += bench/bench_link
BENCH_PROGS += bench/bench_link
bench_bench_link_SOURCES = bench/bench_link.c
bench_bench_link_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_link_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)

EXTRA_PROGRAMS += bench/bench_db_open
BENCH_PROGS += bench/bench_db_open
bench_bench_db_open_SOURCES = bench/bench_db_open.c
bench_bench_db_open_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_db_open_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)

EXTRA_PROGRAMS += bench/bench_attn
BENCH_PROGS += bench/bench_attn
bench_bench_attn_SOURCES = bench/bench_attn.c bench/attn_klr.c bench/attn_klr.h
bench_bench_attn_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_attn_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
if HAVE_OPENBLAS
bench_bench_attn_CPPFLAGS += -DLNCSIM_BENCH_OPENBLAS
bench_bench_attn_LDADD += -lopenblas
endif


# writes examples/nki/attention (not run by make bench)
EXTRA_PROGRAMS += bench/gen_attn
bench_gen_attn_SOURCES = bench/gen_attn.c bench/attn_klr.c bench/attn_klr.h
bench_gen_attn_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_gen_attn_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
CLEANFILES += bench/gen_attn

EXTRA_PROGRAMS += bench/bench_elem
BENCH_PROGS += bench/bench_elem
bench_bench_elem_SOURCES = bench/bench_elem.c
bench_bench_elem_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_bench_elem_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)

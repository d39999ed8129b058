EXTRA_PROGRAMS += bench/bench_load
BENCH_PROGS += bench/bench_load
bench_bench_load_SOURCES = bench/bench_load.c
bench_bench_load_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
CLEANFILES += $(BENCH_PROGS)

noinst_LTLIBRARIES += sim/libsim.la
# sim uses model only (never linker)
sim_libsim_la_CPPFLAGS = -I$(srcdir)/sim -I$(srcdir)/model
sim_libsim_la_SOURCES = sim/sim.h sim/sim_int.h sim/machine.c sim/apiter.c \
	sim/mmkernel.c sim/actfunc.c sim/exec.c sim/cost.c sim/sched.c \
	sim/trace.c sim/host.c sim/ctrl.c
sim_libsim_la_SOURCES += sim/simcheck.c sim/simcheck.h
sim_libsim_la_SOURCES += sim/diff.c sim/diff.h
sim_libsim_la_SOURCES += sim/gen.c sim/gen.h
sim_libsim_la_SOURCES += sim/reduce.c
sim_libsim_la_SOURCES += sim/waits.c
sim_libsim_la_SOURCES += sim/regs.c
sim_libsim_la_SOURCES += sim/select.c
sim_libsim_la_SOURCES += sim/search.c
sim_libsim_la_SOURCES += sim/bnstats.c
sim_libsim_la_SOURCES += sim/intalu.c
sim_libsim_la_SOURCES += sim/sync.c
sim_libsim_la_SOURCES += sim/dmablk.c
sim_libsim_la_SOURCES += sim/engacc.c
sim_libsim_la_SOURCES += sim/shuffle.c
sim_libsim_la_SOURCES += sim/race.c

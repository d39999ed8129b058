noinst_LTLIBRARIES += sim/libsim.la
sim_libsim_la_SOURCES = sim/placeholder.c
sim_libsim_la_SOURCES += sim/gen.c sim/gen.h

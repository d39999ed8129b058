noinst_LTLIBRARIES += sim/libsim.la
sim_libsim_la_SOURCES = sim/placeholder.c

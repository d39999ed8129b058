noinst_LTLIBRARIES += linker/liblinker.la
# linker uses model only
linker_liblinker_la_CPPFLAGS = -I$(srcdir)/linker -I$(srcdir)/model
linker_liblinker_la_SOURCES =
# bir_linker: one file per group of seed steps
linker_liblinker_la_SOURCES += linker/linker.h
linker_liblinker_la_SOURCES += linker/lk_int.h
linker_liblinker_la_SOURCES += linker/link.c
linker_liblinker_la_SOURCES += linker/copy.c
linker_liblinker_la_SOURCES += linker/fpass.c
linker_liblinker_la_SOURCES += linker/memlocs.c
linker_liblinker_la_SOURCES += linker/queues.c
linker_liblinker_la_SOURCES += linker/barriers.c
linker_liblinker_la_SOURCES += linker/tensormap.c
linker_liblinker_la_SOURCES += linker/linkdir.c
linker_liblinker_la_SOURCES += linker/mmt.c
linker_liblinker_la_SOURCES += linker/ctx.c

noinst_LTLIBRARIES += linker/liblinker.la
linker_liblinker_la_SOURCES =
# bir_linker (issue 4): one file per group of seed steps
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

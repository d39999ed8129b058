# Calls run one way, down these layers (the top first): a file calls only
# functions of the files on the layers below its own; link.c drives the
# steps, and what the steps share is in ctx.c (tests/test_hygiene checks).
#   link.c
#   copy.c linkdir.c
#   memlocs.c tensormap.c fpass.c queues.c barriers.c mmt.c netlist.c
#   ctx.c
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
linker_liblinker_la_SOURCES += linker/netlist.c
linker_liblinker_la_SOURCES += linker/ctx.c

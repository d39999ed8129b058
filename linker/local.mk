noinst_LTLIBRARIES += linker/liblinker.la
linker_liblinker_la_SOURCES = linker/placeholder.c

noinst_LTLIBRARIES += db/libdb.la
db_libdb_la_SOURCES = db/placeholder.c

noinst_LTLIBRARIES += db/libdb.la
db_libdb_la_SOURCES = db/db.h db/db_int.h db/db.c db/schema.c db/merge.c \
	db/query.c

noinst_LTLIBRARIES += db/libdb.la
# db uses model and sim.h (the run statistics it stores)
db_libdb_la_CPPFLAGS = -I$(srcdir)/db -I$(srcdir)/sim -I$(srcdir)/model
db_libdb_la_SOURCES = db/db.h db/db_int.h db/db.c db/schema.c db/merge.c \
	db/query.c db/campaign.c
# the default run log that `lncsim run` writes in the build directory
# when the test suites run it
CLEANFILES += lncsim.db lncsim.db-wal lncsim.db-shm

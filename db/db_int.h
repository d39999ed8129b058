/*
** db_int.h -- internals shared by the files of db/.
*/
#ifndef LNCSIM_DB_INT_H
#define LNCSIM_DB_INT_H

#include <sqlite3.h>
#include "db.h"

/* Matmul rows inserted per multi-row INSERT (fewer VM round trips). */
enum { MATMUL_BATCH = 64 };

/*
** The bounds of the write-ahead log (docs/database.md, "Keeping the log
** small"). A commit that leaves the log LDB_CKPT_FRAMES frames or longer
** folds it into the main file and truncates it to zero (a TRUNCATE
** checkpoint that does not wait: when another connection reads or
** writes, it is tried again after the next commit and at close).
** LDB_WAL_SIZE_LIMIT is journal_size_limit: a log that restarts from its
** start instead (after a checkpoint another client ran) is cut back to it.
*/
enum { LDB_CKPT_FRAMES = 256, LDB_WAL_SIZE_LIMIT = 1024 * 1024 };

/*
** The groups of tables only some runs write, made when first written
** (a file without them reads as if they were empty): fuzz campaigns,
** races, kernel calls.
*/
enum { LDB_G_CAMPAIGNS, LDB_G_RACES, LDB_G_KERNELS, LDB_N_GROUPS };

typedef struct {
	const char *name;
	struct {
		int migration;  /* ldb_migrations[migration] makes some ... */
		const char *from; /* ... from this text to its end */
	} part[2];              /* from NULL: no second part */
	const char *tables[3];  /* referenced ones first */
	int n_tables;
} ldb_group_def;

/* The prepared statements of a connection, prepared once, reused. */
enum {
	ST_INS_RUN,
	ST_UPD_RUN,
	ST_INS_EXEC,
	ST_INS_CORE,
	ST_INS_MATMUL,
	ST_INS_MATMUL_BATCH,   /* MATMUL_BATCH rows per statement */
	ST_INS_TENSOR,
	ST_INS_CASE,
	ST_INS_RACE,
	ST_INS_KERNEL,
	ST_INS_KENGINE,
	ST_INS_KQUEUE,
	ST_UPSERT_FAILURE,
	ST_SAVEPOINT,          /* a run inside a batch */
	ST_RELEASE,
	ST_COUNT
};

struct ldb {
	sqlite3 *h;
	char *path;
	char *uri;                  /* the URI it was opened with */
	ldb_run *open_run;          /* at most one */
	int in_batch;               /* a batch transaction is open */
	int batch_failed;           /* ... and was rolled back: batch_msg */
	char batch_msg[1100];
	sqlite3_stmt *st[ST_COUNT]; /* lazily prepared */
	int ckpt_frames;            /* checkpoint the log at this length
				       (0: a reader, never) */
	int wal_frames;             /* its length after the last commit */
	int reader;                 /* opened with LDB_READ */
	int ready[LDB_N_GROUPS];    /* ldb_group done (reset by a rollback) */
};

struct ldb_run {
	ldb *db;
	int64_t id;
	int failed;                 /* a log call failed: end rolls back */
	int race_checked;           /* ldb_log_races was called */
	int64_t n_races;            /* races logged (their next seq) */
};

/* The prepared statement i (ST_*), reset and unbound; NULL with err. */
sqlite3_stmt *ldb_stmt(ldb *db, int i, lm_error *err);
/* Step a bound insert/update to completion and reset it. */
int ldb_step_done(ldb *db, sqlite3_stmt *st, const char *where,
		  lm_error *err);
/* Bind a string, "" for NULL. */
void ldb_bind_text(sqlite3_stmt *st, int i, const char *s);
/* The time t (0: now) as "YYYY-MM-DDTHH:MM:SSZ" in buf (32 bytes). */
void ldb_utc(time_t t, char buf[32]);

/* Fill err with "PATH: where: <sqlite message>" (LM_EINPUT). */
int ldb_sqlerr(lm_error *err, ldb *db, const char *where);

extern const ldb_group_def ldb_groups[LDB_N_GROUPS];
/* The CREATE statements of group g into out (reset first; NUL-ended). */
void ldb_group_sql(int g, lm_buf *out);

/*
** Make group g's tables usable, once per connection: on a connection
** that writes, create them when the file has none (in the open
** transaction, else in one of their own), else run the corruption probe
** of their rightmost pages; on a reader only the probe, when they exist.
** 0, or err (a corrupt file, a file with part of a group).
*/
int ldb_group(ldb *db, int g, lm_error *err);
/* Make group g readable: when the file has none, empty TEMP tables in
** their place (for queries; ldb_group drops them when it makes the
** file's own). */
int ldb_see(ldb *db, int g, lm_error *err);
/* Whether the attached database `schema` holds group g (*has 0 or 1). */
int ldb_group_in(ldb *db, const char *schema, int g, int *has,
		 lm_error *err);
/* Execute SQL text (no result rows expected). */
int ldb_exec(ldb *db, const char *sql, const char *where, lm_error *err);

/* Change the checkpoint threshold of a connection opened for writing
** (frames; default LDB_CKPT_FRAMES): for benchmarks choosing it. */
void ldb_set_ckpt_frames(ldb *db, int frames);

/* The forward migrations: ldb_migrations[v] takes version v to v + 1. */
extern const char *const ldb_migrations[LDB_SCHEMA_VERSION];

#endif

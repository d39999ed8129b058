/*
** db.h -- the SQLite run log: schema, migrations, run logging,
** shard merge and the queries the CLI and the reports use.
**
** A database is versioned with PRAGMA user_version and migrated forward
** when it is opened (inside one BEGIN IMMEDIATE transaction); a database
** written by a newer lncsim is refused. Connections use WAL,
** synchronous=NORMAL, foreign keys and a busy timeout, so several processes
** can log into one file at the same time; a writer keeps the WAL short
** (a commit that leaves it past a threshold checkpoints and truncates it,
** without waiting for other connections).
**
** One run is ONE transaction: ldb_run_begin starts it (BEGIN IMMEDIATE and
** the runs row), ldb_log_* add rows, ldb_run_end commits. A run that is
** aborted, or a process that dies before ldb_run_end, leaves nothing. The
** write lock is held from ldb_run_begin to ldb_run_end: call ldb_run_begin
** after the simulation, right before logging its results (the start time is
** taken from ldb_run_info.started).
**
** A batch (ldb_batch_begin .. ldb_batch_commit) holds many runs in one
** transaction: each run is then a savepoint inside it (a run that fails
** or is aborted leaves nothing, the others stay), and the commit keeps
** them all or, when it fails, none. `lncsim fuzz` logs its cases so.
**
** Ownership: ldb_open gives a handle the caller frees with ldb_close; an
** ldb_run is freed by ldb_run_end or ldb_run_abort (exactly one of them).
** The ls_result passed to ldb_log_execution is only read.
*/
#ifndef LNCSIM_DB_H
#define LNCSIM_DB_H

#include <stdint.h>
#include <time.h>
#include "common.h"
#include "sim.h"

/* The schema version this lncsim writes (PRAGMA user_version). */
enum { LDB_SCHEMA_VERSION = 7 };

/* The default database path, and the environment variable overriding it. */
#define LDB_DEFAULT_PATH "lncsim.db"
#define LDB_ENV "LNCSIM_DB"

typedef struct ldb ldb;
typedef struct ldb_run ldb_run;

/* ldb_open flags */
enum {
	LDB_CREATE = 1, /* create the file when it does not exist */
	LDB_READ = 2    /* only read (reports, db runs): works on a read-only
			   file in a read-only directory */
};

/*
** Open (and with LDB_CREATE create) the database at path, migrate it to
** LDB_SCHEMA_VERSION. Errors: "PATH: no such database" (without
** LDB_CREATE), "PATH: not an lncsim database: ...", "PATH: schema version N
** is newer than this lncsim supports (3): ...", "PATH: database is
** read-only: ..." (without LDB_READ: nothing could be logged), "PATH:
** ...: database is corrupt (...)" (an existing file's pages that the next
** run writes are checked; docs/database.md). All LM_EINPUT.
**
** With LDB_READ the connection is read-only (mode=ro; immutable when the
** directory is read-only and the WAL is empty); a file that still needs
** migrating is opened for writing, or refused when it cannot be written.
*/
int ldb_open(ldb **out, const char *path, int flags, lm_error *err);
/*
** The full check of the file at path (PRAGMA integrity_check, every page;
** no migration): *problems gets SQLite's findings one a line, "" when the
** file is sound (caller frees). Returns 0 when the check ran.
*/
int ldb_check_file(const char *path, char **problems, lm_error *err);
/* Close; an open run is rolled back. NULL is allowed. */
void ldb_close(ldb *db);

/*
** Make every table readable on db: the tables only some runs write
** (campaigns, races, kernels), which a file may not have, read as empty
** (ldb_open does it for LDB_READ; for queries on a handle that logs).
*/
int ldb_readable(ldb *db, lm_error *err);
/* The path the database was opened with. */
const char *ldb_path(const ldb *db);
/* The underlying connection (for the reports' read-only queries). */
struct sqlite3 *ldb_sqlite(ldb *db);
/* Schema version of the file at path without migrating it (0 if empty). */
int ldb_file_version(const char *path, int *version, lm_error *err);

/* ---- logging --------------------------------------------------------- */

/* What a run was. Strings may be NULL (stored as ""). */
typedef struct ldb_run_info {
	const char *command;      /* the command line */
	const char *module;       /* module names (comma separated) */
	const char *arch;         /* arch name */
	int cores;                /* core count */
	uint64_t seed;            /* input seed (stored as a 64-bit pattern) */
	const char *tool_version; /* NULL: this lncsim's version */
	time_t started;           /* start time; 0: now */
	const char *uuid;         /* NULL: a new random UUID (merge key) */
} ldb_run_info;

/*
** Begin a run: BEGIN IMMEDIATE (waits up to the busy timeout for other
** writers) and insert the runs row. Fails if a run is already open on db.
*/
int ldb_run_begin(ldb *db, const ldb_run_info *info, ldb_run **out,
		  lm_error *err);
/*
** Log one simulated program of the run: mode "reference", "linked" or
** "single"; one executions row, a core_stats row per core and a matmuls
** row per matmul record. NaN reals are stored as NULL.
*/
int ldb_log_execution(ldb_run *run, const char *mode, const ls_result *r,
		      lm_error *err);
/* Log one compared tensor (first_index -1: none differ). */
int ldb_log_tensor(ldb_run *run, const char *name, int equal,
		   int64_t mismatches, int64_t first_index,
		   double max_abs_diff, lm_error *err);
/* One side of a race: the instruction that made the access. */
typedef struct ldb_race_access {
	const char *function;  /* function name */
	const char *block;     /* block name */
	const char *instr;     /* instruction name */
	const char *iteration; /* loop iteration, "i=3,j=0"; "" outside loops */
	int core;              /* the core that executed it */
	const char *engine;    /* engine name ("PE", "Activation", ...) */
} ldb_race_access;

/*
** One race the happens-before check found: two accesses to overlapping
** bytes [lo, hi) of one memory, at least one a write, not ordered. Strings
** may be NULL (stored as "").
*/
typedef struct ldb_race {
	const char *kind;      /* "RAW", "WAR" or "WAW" */
	const char *memory;    /* "SBUF", "PSUM" or "DRAM" */
	int core;              /* the memory's core; -1 for DRAM */
	const char *object;    /* the DRAM storage object; "" for SBUF/PSUM */
	int64_t lo, hi;        /* the overlapping byte range, 0 <= lo < hi */
	ldb_race_access a, b;  /* the two accesses */
	const char *common;    /* the last common ordering point; "" none */
} ldb_race;

/*
** Log that execution mode ("reference", "linked", "single") of the run was
** checked for races, and the n races it found (races may be NULL when n
** is 0: checked, none found). The run's races column counts them (NULL:
** never called, the run was not checked); a mode may be logged more than
** once. A run without races inserts nothing. A race with an unknown kind
** or memory, or an empty range, is refused (LM_EINTERNAL) and, like a
** failed insert, marks the run: ldb_run_end then rolls it back.
*/
int ldb_log_races(ldb_run *run, const char *mode, const ldb_race *races,
		  int n, lm_error *err);

/*
** Finish the run: status "pass", "fail" or "error", message (NULL: ""),
** wall time; COMMIT. *run_id (may be NULL) gets the runs.id. The run is
** freed whether or not the commit succeeds (on failure nothing is kept).
*/
int ldb_run_end(ldb_run *run, const char *status, const char *message,
		double wall_seconds, int64_t *run_id, lm_error *err);
/* Roll the run back and free it. NULL is allowed. */
void ldb_run_abort(ldb_run *run);
/* The runs.id of an open run. */
int64_t ldb_run_id(const ldb_run *run);

/*
** Open a batch on db: BEGIN IMMEDIATE; the runs logged until
** ldb_batch_commit are savepoints inside it. Fails if a run or a batch is
** open.
*/
int ldb_batch_begin(ldb *db, lm_error *err);
/* Commit the batch (no run may be open); on failure it is rolled back
** and no run of it is kept. */
int ldb_batch_commit(ldb *db, lm_error *err);
/* Roll the open batch back (an open run with it). No batch: nothing. */
void ldb_batch_abort(ldb *db);
/* Whether a batch is open. */
int ldb_batch_is_open(const ldb *db);

/* ---- fuzz campaigns -------------------------------------------------- */

/*
** A campaign of `lncsim fuzz`: its name (the campaign id, unique in a
** database), the generator options every case of it uses, as one
** canonical string, its first seed and seed count (0: no count, the
** campaign runs for a duration). Strings may be NULL when adding ("").
*/
typedef struct ldb_campaign {
	char *name;
	char *gen_options;
	char *tool_version;
	char *command;
	char started_utc[32];
	uint64_t first_seed;
	uint64_t count;
} ldb_campaign;

/*
** Add campaign c (started now; tool_version NULL: this lncsim's) in a
** transaction of its own. A name already present is refused: "PATH:
** campaign NAME exists".
*/
int ldb_campaign_add(ldb *db, const ldb_campaign *c, lm_error *err);
/*
** Read campaign name (NULL: the one added last) into *out (free with
** ldb_campaign_free); *found 0 when there is none (out untouched).
*/
int ldb_campaign_get(ldb *db, const char *name, ldb_campaign *out,
		     int *found, lm_error *err);
void ldb_campaign_free(ldb_campaign *c);

/* A closed range of seeds. */
typedef struct ldb_seed_range {
	uint64_t lo, hi;
} ldb_seed_range;

/*
** The seeds the cases of campaign name were recorded with, ascending, as
** disjoint closed ranges (*r, caller frees; *n of them); *total (may be
** NULL) the number of cases (a seed recorded twice counts twice).
*/
int ldb_campaign_seeds(ldb *db, const char *name, ldb_seed_range **r,
		       int *n, int64_t *total, lm_error *err);

/* One case of a campaign, logged with its run. */
typedef struct ldb_case_info {
	const char *campaign;     /* an existing campaign's name */
	uint64_t seed;
	const char *gen_options;  /* those the case ran with */
	const char *kind;         /* "" for a pass; the failure kind */
	const char *signature;    /* "" for a pass */
	const char *message;      /* the failure's message */
	const char *repro;        /* the command that reproduces it */
} ldb_case_info;

/*
** Log the case of an open run: a cases row, and for a failure
** (signature not "") its signature in failures: added with hits 1, or
** its hits counted up, its seed, message and repro those of the smallest
** seed that hit it.
*/
int ldb_log_case(ldb_run *run, const ldb_case_info *ci, lm_error *err);

/* ---- merge ----------------------------------------------------------- */

typedef struct ldb_merge_stats {
	int64_t runs, runs_skipped; /* added, already present (same uuid) */
	int64_t executions, core_stats, matmuls, tensors, races;
	int64_t campaigns, cases;   /* campaigns added, cases added */
} ldb_merge_stats;

/*
** Merge every run of the database at in_path into db (one transaction):
** ids re-keyed, runs whose uuid is already in db skipped, so merging the
** same shard twice adds nothing. in_path is migrated to the current schema
** first (like any lncsim command opening it). st (may be NULL) is
** incremented. Campaigns are matched by name: one that is new is added,
** one present in both must have the same generator options and first
** seed (else the merge is refused: "campaign NAME: generator options
** differ ..."); the cases follow their runs, and each failure signature
** keeps the smallest seed of both, its hits counted again from the cases.
*/
int ldb_merge(ldb *db, const char *in_path, ldb_merge_stats *st,
	      lm_error *err);

/* ---- queries --------------------------------------------------------- */

/* One row of the run list. */
typedef struct ldb_run_row {
	int64_t id;
	char uuid[40];
	char started_utc[32];
	char *command, *module, *arch, *message, *tool_version;
	int cores;
	uint64_t seed;
	char status[8];
	double wall_seconds;
	int n_executions;
	int64_t sim_time_ps;   /* longest execution, -1 if none */
	double pe_util;        /* mean over the cores of the executions, -1 */
	double mac_util;       /* idem */
	int64_t n_matmuls;
	char kind[16];         /* ldb_run_kind: "run", "diff", "fuzz", ... */
} ldb_run_row;

/*
** The last `last` runs (0: all) in id order, oldest first. Caller frees
** with ldb_run_rows_free.
*/
int ldb_query_runs(ldb *db, int last, ldb_run_row **rows, int *n,
		   lm_error *err);
void ldb_run_rows_free(ldb_run_row *rows, int n);

/* Which runs ldb_query_runs_where lists (NULL fields: no condition). */
typedef struct ldb_run_filter {
	const char *since;     /* started_utc >= since: "YYYY-MM-DD" or
				  "YYYY-MM-DDTHH:MM:SSZ" (ldb_check_since) */
	const char *kind;      /* ldb_run_kind of the run equals this */
} ldb_run_filter;

/*
** The kind of a run: "fuzz" for a fuzz campaign's case (it has a cases
** row: is_case), else the lncsim command its command line ran ("run",
** "diff", ...: the first word after the program name, the program name
** given again skipped), "" when there is none.
*/
void ldb_run_kind(const char *command, int is_case, char *kind, size_t n);

/* 0 if s is a --since value ldb_run_filter takes; else LM_EINPUT with
** err saying what is accepted. */
int ldb_check_since(const char *s, lm_error *err);

/*
** The last `last` runs (0: all) that pass filter f (NULL: every run), in
** id order, oldest first. Caller frees with ldb_run_rows_free.
*/
int ldb_query_runs_where(ldb *db, int last, const ldb_run_filter *f,
			 ldb_run_row **rows, int *n, lm_error *err);

/* A campaign and how its cases went. */
typedef struct ldb_campaign_row {
	ldb_campaign c;
	int64_t cases, passed, failed, errors; /* runs of its cases */
	int64_t seeds;                         /* distinct seeds */
	int64_t signatures;                    /* rows of failures */
} ldb_campaign_row;

/*
** Every campaign (name NULL) or campaign name, in the order added.
** Caller frees with ldb_campaign_rows_free.
*/
int ldb_query_campaigns(ldb *db, const char *name, ldb_campaign_row **rows,
			int *n, lm_error *err);
void ldb_campaign_rows_free(ldb_campaign_row *rows, int n);

/* One deduplicated failure signature. */
typedef struct ldb_failure_row {
	char *campaign, *signature, *kind, *message, *repro;
	uint64_t seed;   /* the smallest seed that hit it */
	int64_t hits;
} ldb_failure_row;

/*
** The failure signatures of campaign name (NULL: every campaign), by
** campaign (in the order added), then hits descending, then signature.
** Caller frees with ldb_failure_rows_free.
*/
int ldb_query_failures(ldb *db, const char *campaign, ldb_failure_row **rows,
		       int *n, lm_error *err);
void ldb_failure_rows_free(ldb_failure_row *rows, int n);

/* One logged race, its strings owned by the row. */
typedef struct ldb_race_row {
	int64_t run_id;
	int seq;               /* its place in the run, from 0 */
	char mode[16];
	ldb_race r;            /* the strings point into text */
	char *text;
} ldb_race_row;

/*
** The races of run run_id in the order logged (by mode as logged, then
** as found). Caller frees with ldb_race_rows_free.
*/
int ldb_query_races(ldb *db, int64_t run_id, ldb_race_row **rows, int *n,
		    lm_error *err);
void ldb_race_rows_free(ldb_race_row *rows, int n);

/* Whether a run was checked for races, and what it found. */
typedef struct ldb_race_check {
	int64_t run_id;
	int64_t races;         /* races logged; -1: not checked */
} ldb_race_check;

/*
** run_id > 0: that run (*n 0 when there is no such run; races -1 when it
** was not checked). run_id 0: the last `last` (0: all) runs that were
** checked, oldest first. Caller frees *out.
*/
int ldb_query_race_checks(ldb *db, int64_t run_id, int last,
			  ldb_race_check **out, int *n, lm_error *err);

#endif

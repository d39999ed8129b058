/*
** test_db.c -- the SQLite run log: migrations, logging round trip, errors,
** concurrent writers, a writer killed mid-run, merge, `lncsim db`.
*/
#include "common.h"
#include "testutil.h"
#include "db.h"
#include "db_int.h"
#include "dtype.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------- */

/*
** A hand-made simulator result: n_cores cores, n_mm matmul records, the
** numbers derived from tag so two results differ.
*/
static ls_result make_result(int n_cores, int n_mm, int tag)
{
	ls_result r;
	memset(&r, 0, sizeof r);
	r.n_cores = n_cores;
	r.sim_time_ps = 1000000 + tag * 1000 + n_mm;
	r.instructions = 100 * n_cores + tag;
	r.cores = lm_xcalloc((size_t)n_cores, sizeof *r.cores);
	for (int i = 0; i < n_cores; i++) {
		ls_core_stats *c = &r.cores[i];
		c->core = i;
		for (int e = 0; e < LS_ENGINES; e++)
			c->busy_ps[e] = 1000 * tag + 100 * i + e + 1;
		c->instructions = 50 + i + tag;
		c->matmuls = n_mm / (n_cores ? n_cores : 1);
		c->macs = (int64_t)1 << 40 | (int64_t)(i + tag);
		c->pe_util = 0.25 + 0.125 * i + 0.001 * tag;
		c->mac_util = 0.1 + 0.0625 * i;
		c->dma_bytes = 4096 * (i + 1);
		c->dma_transfers = 3 + i;
		c->barrier_wait_ps = 77 * i;
		c->semaphore_wait_ps = 99 * i + tag;
		c->end_ps = r.sim_time_ps - i;
		for (int e = 0; e < LS_ENGINES; e++) {
			c->wait_sem_ps[e] = 10 * tag + e + 1;
			c->wait_barrier_ps[e] = 20 * tag + e + 2;
			c->wait_dep_ps[e] = 30 * tag + e + 3;
		}
	}
	r.n_matmuls = n_mm;
	r.matmuls = n_mm ? lm_xcalloc((size_t)n_mm, sizeof *r.matmuls) : NULL;
	static const int ks[] = { 128, 64, 32, 128 }, ms[] = { 128, 128, 32, 64 };
	for (int j = 0; j < n_mm; j++) {
		ls_matmul_rec *m = &r.matmuls[j];
		m->core = j % (n_cores ? n_cores : 1);
		m->name = lm_xasprintf("mm_%d_%d", tag, j);
		m->k = ks[j % 4];
		m->m = ms[j % 4];
		m->n = 512;
		m->dtype = j % 2 ? LM_DT_BFLOAT16 : LM_DT_FLOAT32;
		m->start_ps = (int64_t)j * 900;
		m->duration_ps = 800 + j % 7;
		m->array_util = (double)m->k * m->m / 16384.0;
	}
	/* with cores: an NKIKernel call and one nested in it (odd tags) */
	r.n_kernels = n_cores ? 1 + (tag & 1) : 0;
	r.kernels = r.n_kernels ? lm_xcalloc((size_t)r.n_kernels,
					     sizeof *r.kernels) : NULL;
	for (int j = 0; j < r.n_kernels; j++) {
		ls_kernel_stats *k = &r.kernels[j];
		k->core = n_cores - 1;
		k->call = lm_xasprintf("inst__k%d_%d", tag, j);
		k->func = lm_xasprintf("k%d", j);
		k->caller = lm_xstrdup(j ? "k0" : "sg0000");
		k->parent = j - 1;
		k->depth = j;
		k->start_ps = 1000 + 10 * j + tag;
		k->end_ps = 900000 - 10 * j;
		k->instructions = 20 - j;
		for (int e = 0; e < LS_ENGINES; e++) {
			k->busy_ps[e] = 100 * tag + 10 * e + j + 1;
			k->wait_sem_ps[e] = 200 + e;
			k->wait_barrier_ps[e] = 300 + e;
			k->wait_dep_ps[e] = 400 + e + tag;
			k->idle_ps[e] = k->end_ps - k->start_ps - k->busy_ps[e] -
					k->wait_sem_ps[e] - k->wait_barrier_ps[e] -
					k->wait_dep_ps[e];
			k->last_end_ps[e] = k->end_ps - e;
		}
		k->dma_bytes = (int64_t)1 << 33 | tag;
		k->dma_transfers = 7 + j;
		k->dma_xfer_ps = 50000 + tag;
		k->dma_active_ps = 40000 + j;
		k->dma_end_ps = k->end_ps - 1;
		k->critical = j ? LS_ENGINES : 2;
		/* DMA on two queue instances (the nested call on one) */
		k->n_queues = 2 - j;
		k->queues = lm_xcalloc((size_t)k->n_queues, sizeof *k->queues);
		for (int q = 0; q < k->n_queues; q++) {
			ls_kernel_queue *kq = &k->queues[q];
			kq->queue = lm_xasprintf("dq%d/i%d", q, j);
			kq->bytes = 1000 * (q + 1) + tag;
			kq->transfers = 3 + q;
			kq->xfer_ps = 30000 + q;
			kq->active_ps = 20000 + j;
		}
	}
	return r;
}

/* One integer from a query on a separate connection. */
static int64_t sql_int(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL),
			 SQLITE_OK);
	sqlite3_busy_timeout(h, 10000);
	ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK,
		      "%s: %s", sql, sqlite3_errmsg(h));
	ck_assert_msg(sqlite3_step(st) == SQLITE_ROW, "%s: no row", sql);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* One text value (malloc'd) from a query on a separate connection. */
static char *sql_text(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL),
			 SQLITE_OK);
	ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK,
		      "%s: %s", sql, sqlite3_errmsg(h));
	ck_assert_msg(sqlite3_step(st) == SQLITE_ROW, "%s: no row", sql);
	const unsigned char *s = sqlite3_column_text(st, 0);
	char *out = lm_xstrdup(s ? (const char *)s : "(null)");
	sqlite3_finalize(st);
	sqlite3_close(h);
	return out;
}

/* Run raw SQL on a file (creating it). */
static void sql_exec(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	char *msg = NULL;
	ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK,
		      "%s", msg ? msg : "?");
	sqlite3_close(h);
}

/*
** Log one run: n_exec executions of make_result(cores, n_mm, tag + i),
** two tensors, the given status. Returns the run id.
*/
static int64_t log_run(ldb *db, int n_exec, int cores, int n_mm, int tag,
		       const char *status)
{
	static const char *const modes[] = { "reference", "linked", "single" };
	lm_error err;
	ldb_run_info info = {
		.command = "lncsim diff examples/handoff2",
		.module = "examples/handoff2/nc0/sg0/def.json,nc1",
		.arch = "trn2", .cores = cores,
		.seed = 0xfedcba9876543210ull + (uint64_t)tag,
	};
	ldb_run *run = NULL;
	ck_assert_msg(ldb_run_begin(db, &info, &run, &err) == 0, "%s", err.msg);
	for (int i = 0; i < n_exec; i++) {
		ls_result r = make_result(cores, n_mm, tag + i);
		ck_assert_msg(ldb_log_execution(run, modes[n_exec == 1 ? 2 : i],
						&r, &err) == 0, "%s", err.msg);
		ls_result_free(&r);
	}
	ck_assert_int_eq(ldb_log_tensor(run, "out", 1, 0, -1, 0.0, &err), 0);
	ck_assert_int_eq(ldb_log_tensor(run, "h", 0, 3, 17, NAN, &err), 0);
	int64_t id = 0;
	ck_assert_msg(ldb_run_end(run, status, status[0] == 'p' ? "" : "boom",
				  1.5, &id, &err) == 0, "%s", err.msg);
	return id;
}

/* The schema of version 1, as lncsim 0.1 wrote it (a fixture). */
static const char v1_schema[] =
	"CREATE TABLE runs(id INTEGER PRIMARY KEY, started_utc TEXT NOT NULL,"
	" command TEXT NOT NULL, module TEXT NOT NULL, arch TEXT NOT NULL,"
	" cores INTEGER NOT NULL, seed INTEGER NOT NULL, status TEXT NOT NULL"
	" CHECK (status IN ('pass', 'fail', 'error')), message TEXT NOT NULL,"
	" tool_version TEXT NOT NULL, wall_seconds REAL) STRICT;"
	"CREATE TABLE executions(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL"
	" REFERENCES runs(id) ON DELETE CASCADE, mode TEXT NOT NULL CHECK (mode"
	" IN ('reference', 'linked', 'single')), sim_time_ps INTEGER NOT NULL,"
	" instructions INTEGER NOT NULL) STRICT;"
	"CREATE TABLE core_stats(execution_id INTEGER NOT NULL REFERENCES"
	" executions(id) ON DELETE CASCADE, core INTEGER NOT NULL, busy_pe_ps"
	" INTEGER NOT NULL, busy_act_ps INTEGER NOT NULL, busy_dve_ps INTEGER"
	" NOT NULL, busy_pool_ps INTEGER NOT NULL, busy_sp_ps INTEGER NOT NULL,"
	" instructions INTEGER NOT NULL, matmuls INTEGER NOT NULL, macs INTEGER"
	" NOT NULL, pe_util REAL, mac_util REAL, dma_bytes INTEGER NOT NULL,"
	" barrier_wait_ps INTEGER NOT NULL, semaphore_wait_ps INTEGER NOT NULL,"
	" PRIMARY KEY (execution_id, core)) STRICT;"
	"CREATE TABLE matmuls(id INTEGER PRIMARY KEY, execution_id INTEGER NOT"
	" NULL REFERENCES executions(id) ON DELETE CASCADE, core INTEGER NOT"
	" NULL, name TEXT NOT NULL, k INTEGER NOT NULL, m INTEGER NOT NULL, n"
	" INTEGER NOT NULL, dtype TEXT NOT NULL, start_ps INTEGER NOT NULL,"
	" duration_ps INTEGER NOT NULL, array_util REAL) STRICT;"
	"CREATE TABLE tensors(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL"
	" REFERENCES runs(id) ON DELETE CASCADE, name TEXT NOT NULL, equal"
	" INTEGER NOT NULL, mismatches INTEGER NOT NULL, first_index INTEGER"
	" NOT NULL, max_abs_diff REAL) STRICT;"
	"INSERT INTO runs VALUES (1, '2024-01-01T00:00:00Z', 'lncsim run a',"
	" 'a', 'trn2', 1, 7, 'pass', '', '0.0.9', 0.5);"
	"INSERT INTO runs VALUES (2, '2024-01-02T00:00:00Z', 'lncsim run b',"
	" 'b', 'trn2', 1, 8, 'error', 'deadlock', '0.0.9', 0.25);"
	"INSERT INTO executions VALUES (1, 1, 'single', 5000, 12);"
	"INSERT INTO core_stats VALUES (1, 0, 10, 20, 30, 40, 50, 12, 1,"
	" 2097152, 0.5, 0.25, 1024, 0, 0);"
	"INSERT INTO matmuls VALUES (1, 1, 0, 'mm0', 128, 128, 128, 'bfloat16',"
	" 100, 2000, 1.0);"
	"INSERT INTO tensors VALUES (1, 1, 'out', 1, 0, -1, 0.0);"
	"PRAGMA user_version = 1;";

/* ---- opening and migrating ------------------------------------------- */

START_TEST(test_open_new)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "new.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_msg(ldb_open(&db, path, LDB_CREATE, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(ldb_path(db), path);
	ldb_close(db);
	int v = -1;
	ck_assert_int_eq(ldb_file_version(path, &v, &err), 0);
	ck_assert_int_eq(v, LDB_SCHEMA_VERSION);
	char *jm = sql_text(path, "PRAGMA journal_mode");
	ck_assert_str_eq(jm, "wal");
	free(jm);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM pragma_table_list "
				 "WHERE schema = 'main' AND strict = 1 AND name IN "
				 "('runs', 'executions', 'core_stats', 'matmuls', "
				 "'tensors')"), 5);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE type = 'index' AND name IN ('runs_uuid', "
				 "'executions_run', 'matmuls_execution', "
				 "'tensors_run')"), 4);
	/* a zero-byte file is an empty database */
	char *empty = tu_write(d, "empty.db", "");
	ck_assert_msg(ldb_open(&db, empty, 0, &err) == 0, "%s", err.msg);
	ldb_close(db);
	ck_assert_int_eq(sql_int(empty, "PRAGMA user_version"),
			 LDB_SCHEMA_VERSION);
	/* opening again changes nothing */
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	ldb_close(db);
	free(empty);
	free(path);
	free(d);
}
END_TEST

START_TEST(test_migrate_v1)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "v1.db");
	sql_exec(path, v1_schema);
	int v = -1;
	lm_error err;
	ck_assert_int_eq(ldb_file_version(path, &v, &err), 0);
	ck_assert_int_eq(v, 1);
	ldb *db = NULL;
	ck_assert_msg(ldb_open(&db, path, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sql_int(path, "PRAGMA user_version"),
			 LDB_SCHEMA_VERSION);
	/* old rows kept, uuids backfilled (distinct, v4 shape) */
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(DISTINCT uuid) FROM runs "
				 "WHERE length(uuid) = 36 AND "
				 "substr(uuid, 15, 1) = '4' AND "
				 "substr(uuid, 9, 1) = '-'"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT macs FROM core_stats"), 2097152);
	ck_assert_int_eq(sql_int(path, "SELECT dma_transfers + end_ps FROM "
				 "core_stats"), 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM matmuls WHERE "
				 "name = 'mm0' AND duration_ps = 2000"), 1);
	/* and the migrated file takes new runs */
	int64_t id = log_run(db, 1, 2, 10, 1, "pass");
	ck_assert_int_eq(id, 3);
	ldb_run_row *rows = NULL;
	int n = 0;
	ck_assert_int_eq(ldb_query_runs(db, 0, &rows, &n, &err), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(rows[0].command, "lncsim run a");
	ck_assert_int_eq(rows[0].sim_time_ps, 5000);
	ck_assert_int_eq(rows[1].n_executions, 0);
	ck_assert_int_eq(rows[1].sim_time_ps, -1);
	ck_assert_str_eq(rows[1].message, "deadlock");
	ldb_run_rows_free(rows, n);
	ldb_close(db);
	free(path);
	free(d);
}
END_TEST

/*
** A version-2 database (before fuzz campaigns) opens and upgrades: its
** runs stay, the campaign tables are not made until a campaign goes in,
** and then they are the tables a file made at version 3 has.
*/
START_TEST(test_migrate_v2)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "v2.db");
	sql_exec(path, v1_schema);
	char *up = lm_xasprintf("%s PRAGMA user_version = 2;",
				ldb_migrations[1]);
	sql_exec(path, up);
	free(up);
	int v = -1;
	lm_error err;
	ck_assert_int_eq(ldb_file_version(path, &v, &err), 0);
	ck_assert_int_eq(v, 2);
	/* a reader migrates it too (it is writable) */
	tu_run r = tu_lncsim(NULL, "db", "runs", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "deadlock");
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "PRAGMA user_version"),
			 LDB_SCHEMA_VERSION);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE name IN ('campaigns', 'cases', "
				 "'failures', 'cases_seed', 'cases_signature')"),
			 0);
	/* and a campaign goes in */
	r = tu_lncsim(NULL, "fuzz", "--db", path, "--count", "2", "--jobs", "1",
		      "-q", "--campaign", "after-v2", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM pragma_table_list "
				 "WHERE schema = 'main' AND strict = 1 AND name IN "
				 "('campaigns', 'cases', 'failures')"), 3);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE type = 'index' AND name IN ('cases_seed', "
				 "'cases_signature')"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM cases WHERE "
				 "campaign = 'after-v2'"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 5);
	free(path);
	free(d);
}
END_TEST

START_TEST(test_newer_refused)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "future.db");
	sql_exec(path, "CREATE TABLE runs(x); PRAGMA user_version = 99;");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), LM_EINPUT);
	ck_assert_ptr_null(db);
	char want[96];
	snprintf(want, sizeof want, "future.db: schema version 99 is newer "
		 "than this lncsim supports (%d)", LDB_SCHEMA_VERSION);
	ck_assert_contains(err.msg, want);
	ck_assert_int_eq(sql_int(path, "PRAGMA user_version"), 99);
	/* the CLI says the same and exits 2 */
	tu_run r = tu_lncsim(NULL, "db", "runs", "--db", path, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "schema version 99 is newer");
	tu_run_free(&r);
	free(path);
	free(d);
}
END_TEST

START_TEST(test_bad_files)
{
	char *d = tu_tmpdir("db");
	lm_error err;
	ldb *db = NULL;
	char *garbage = tu_write(d, "garbage.db", "this is not a database at "
				 "all, not even close; just some text.\n");
	ck_assert_int_eq(ldb_open(&db, garbage, LDB_CREATE, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "garbage.db: not an lncsim database");
	char *missing = lm_path_join(d, "missing.db");
	ck_assert_int_eq(ldb_open(&db, missing, 0, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "missing.db: no such database");
	ck_assert_int_eq(access(missing, F_OK), -1);
	ck_assert_int_eq(ldb_open(&db, d, LDB_CREATE, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "cannot open database");
	char *nodir = lm_path_join(d, "no/such/dir/x.db");
	ck_assert_int_eq(ldb_open(&db, nodir, LDB_CREATE, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "cannot open database");
	ck_assert_int_eq(ldb_open(&db, "", LDB_CREATE, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "empty database path");
	/* somebody else's SQLite file: the migration fails, nothing changes */
	char *other = lm_path_join(d, "other.db");
	sql_exec(other, "CREATE TABLE runs(a, b); INSERT INTO runs VALUES (1, 2)");
	ck_assert_int_eq(ldb_open(&db, other, 0, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "other.db: migrating to schema 1: table "
			   "runs already exists");
	ck_assert_int_eq(sql_int(other, "PRAGMA user_version"), 0);
	ck_assert_int_eq(sql_int(other, "SELECT count(*) FROM sqlite_master"), 1);
	/* a truncated database */
	char *good = lm_path_join(d, "good.db");
	ck_assert_int_eq(ldb_open(&db, good, LDB_CREATE, &err), 0);
	log_run(db, 2, 2, 2000, 1, "pass");
	ldb_close(db);
	/* move the run out of the WAL into the file (lncsim's connections
	** leave that to SQLite's automatic checkpoints), then damage it */
	sql_int(good, "PRAGMA wal_checkpoint(TRUNCATE)");
	FILE *f = fopen(good, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ftruncate(fileno(f), 8192), 0);
	fclose(f);
	int rc = ldb_open(&db, good, 0, &err);
	if (rc == 0) {
		/* the header survived: reading must then fail cleanly */
		ldb_run_row *rows = NULL;
		int n = 0;
		rc = ldb_query_runs(db, 0, &rows, &n, &err);
		ldb_run_rows_free(rows, n);
		ldb_close(db);
	}
	ck_assert_int_eq(rc, LM_EINPUT);
	ck_assert_contains(err.msg, "good.db: ");
	free(good);
	free(other);
	free(nodir);
	free(missing);
	free(garbage);
	free(d);
}
END_TEST

/* ---- logging --------------------------------------------------------- */

START_TEST(test_log_roundtrip)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "rt.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	ldb_run_info info = {
		.command = "lncsim run 'a b'", .module = "m1,m2",
		.arch = "trn2", .cores = 3, .seed = 0xffffffffffffffffull,
		.tool_version = "9.9.9", .started = 86400 * 365,
		.uuid = "0000aaaa-0000-4000-8000-000000000001",
	};
	ldb_run *run = NULL;
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ls_result r = make_result(3, 25, 5);
	r.cores[1].pe_util = NAN;
	r.matmuls[3].array_util = NAN;
	ck_assert_int_eq(ldb_log_execution(run, "single", &r, &err), 0);
	ck_assert_int_eq(ldb_log_tensor(run, "out", 0, 12, 40, 0.5, &err), 0);
	int64_t id = 0;
	ck_assert_int_eq(ldb_run_end(run, "fail", "out differs", 2.25, &id,
				     &err), 0);
	ck_assert_int_eq(id, 1);

	/* every number written equals the result passed in */
	sqlite3 *h = NULL;
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(h,
		"SELECT uuid, started_utc, command, module, arch, cores, seed, "
		"status, message, tool_version, wall_seconds FROM runs", -1, &st,
		NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), info.uuid);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 1),
			 "1971-01-01T00:00:00Z");
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 2),
			 "lncsim run 'a b'");
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 3), "m1,m2");
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 4), "trn2");
	ck_assert_int_eq(sqlite3_column_int(st, 5), 3);
	ck_assert_uint_eq((uint64_t)sqlite3_column_int64(st, 6), info.seed);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 7), "fail");
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 8),
			 "out differs");
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 9), "9.9.9");
	ck_assert_double_eq(sqlite3_column_double(st, 10), 2.25);
	sqlite3_finalize(st);

	ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT id, run_id, mode, "
		"sim_time_ps, instructions FROM executions", -1, &st, NULL),
		SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	int64_t exec_id = sqlite3_column_int64(st, 0);
	ck_assert_int_eq(sqlite3_column_int64(st, 1), 1);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 2), "single");
	ck_assert_int_eq(sqlite3_column_int64(st, 3), r.sim_time_ps);
	ck_assert_int_eq(sqlite3_column_int64(st, 4), r.instructions);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);

	ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT execution_id, core, "
		"busy_pe_ps, busy_act_ps, busy_dve_ps, busy_pool_ps, busy_sp_ps, "
		"instructions, matmuls, macs, pe_util, mac_util, dma_bytes, "
		"dma_transfers, barrier_wait_ps, semaphore_wait_ps, end_ps, "
		"wait_sem_pe_ps, wait_sem_act_ps, wait_sem_dve_ps, "
		"wait_sem_pool_ps, wait_sem_sp_ps, wait_barrier_pe_ps, "
		"wait_barrier_act_ps, wait_barrier_dve_ps, wait_barrier_pool_ps, "
		"wait_barrier_sp_ps, wait_dep_pe_ps, wait_dep_act_ps, "
		"wait_dep_dve_ps, wait_dep_pool_ps, wait_dep_sp_ps "
		"FROM core_stats ORDER BY core", -1, &st, NULL), SQLITE_OK);
	for (int i = 0; i < r.n_cores; i++) {
		const ls_core_stats *c = &r.cores[i];
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		ck_assert_int_eq(sqlite3_column_int64(st, 0), exec_id);
		ck_assert_int_eq(sqlite3_column_int(st, 1), c->core);
		for (int e = 0; e < LS_ENGINES; e++)
			ck_assert_int_eq(sqlite3_column_int64(st, 2 + e),
					 c->busy_ps[e]);
		ck_assert_int_eq(sqlite3_column_int64(st, 7), c->instructions);
		ck_assert_int_eq(sqlite3_column_int64(st, 8), c->matmuls);
		ck_assert_int_eq(sqlite3_column_int64(st, 9), c->macs);
		if (isnan(c->pe_util))
			ck_assert_int_eq(sqlite3_column_type(st, 10), SQLITE_NULL);
		else
			ck_assert_double_eq(sqlite3_column_double(st, 10),
					    c->pe_util);
		ck_assert_double_eq(sqlite3_column_double(st, 11), c->mac_util);
		ck_assert_int_eq(sqlite3_column_int64(st, 12), c->dma_bytes);
		ck_assert_int_eq(sqlite3_column_int64(st, 13), c->dma_transfers);
		ck_assert_int_eq(sqlite3_column_int64(st, 14),
				 c->barrier_wait_ps);
		ck_assert_int_eq(sqlite3_column_int64(st, 15),
				 c->semaphore_wait_ps);
		ck_assert_int_eq(sqlite3_column_int64(st, 16), c->end_ps);
		for (int e = 0; e < LS_ENGINES; e++) {
			ck_assert_int_eq(sqlite3_column_int64(st, 17 + e),
					 c->wait_sem_ps[e]);
			ck_assert_int_eq(sqlite3_column_int64(st, 22 + e),
					 c->wait_barrier_ps[e]);
			ck_assert_int_eq(sqlite3_column_int64(st, 27 + e),
					 c->wait_dep_ps[e]);
		}
	}
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);

	ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT execution_id, core, name, "
		"k, m, n, dtype, start_ps, duration_ps, array_util FROM matmuls "
		"ORDER BY id", -1, &st, NULL), SQLITE_OK);
	for (int j = 0; j < r.n_matmuls; j++) {
		const ls_matmul_rec *m = &r.matmuls[j];
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		ck_assert_int_eq(sqlite3_column_int64(st, 0), exec_id);
		ck_assert_int_eq(sqlite3_column_int(st, 1), m->core);
		ck_assert_str_eq((const char *)sqlite3_column_text(st, 2),
				 m->name);
		ck_assert_int_eq(sqlite3_column_int(st, 3), m->k);
		ck_assert_int_eq(sqlite3_column_int(st, 4), m->m);
		ck_assert_int_eq(sqlite3_column_int(st, 5), m->n);
		ck_assert_str_eq((const char *)sqlite3_column_text(st, 6),
				 lm_dtype_name(m->dtype));
		ck_assert_int_eq(sqlite3_column_int64(st, 7), m->start_ps);
		ck_assert_int_eq(sqlite3_column_int64(st, 8), m->duration_ps);
		if (isnan(m->array_util))
			ck_assert_int_eq(sqlite3_column_type(st, 9), SQLITE_NULL);
		else
			ck_assert_double_eq(sqlite3_column_double(st, 9),
					    m->array_util);
	}
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);

	ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT run_id, name, equal, "
		"mismatches, first_index, max_abs_diff FROM tensors", -1, &st,
		NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int64(st, 0), 1);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 1), "out");
	ck_assert_int_eq(sqlite3_column_int(st, 2), 0);
	ck_assert_int_eq(sqlite3_column_int64(st, 3), 12);
	ck_assert_int_eq(sqlite3_column_int64(st, 4), 40);
	ck_assert_double_eq(sqlite3_column_double(st, 5), 0.5);
	sqlite3_finalize(st);
	sqlite3_close(h);

	/* the run list aggregates the same numbers */
	ldb_run_row *rows = NULL;
	int n = 0;
	ck_assert_int_eq(ldb_query_runs(db, 0, &rows, &n, &err), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(rows[0].n_executions, 1);
	ck_assert_int_eq(rows[0].sim_time_ps, r.sim_time_ps);
	ck_assert_int_eq(rows[0].n_matmuls, 25);
	ck_assert_double_eq_tol(rows[0].pe_util,
				(r.cores[0].pe_util + r.cores[2].pe_util) / 2,
				1e-12);
	ck_assert_uint_eq(rows[0].seed, info.seed);
	ck_assert_str_eq(rows[0].status, "fail");
	ldb_run_rows_free(rows, n);
	ls_result_free(&r);

	/* the same uuid twice is refused, and nothing of it is kept */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "UNIQUE constraint failed: runs.uuid");
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 1);
	ldb_close(db);
	free(path);
	free(d);
}
END_TEST

START_TEST(test_log_errors)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "err.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	ldb_run_info info = { .command = "c", .cores = 1 };
	ldb_run *run = NULL, *run2 = NULL;
	ls_result r = make_result(1, 4, 1);

	/* a bad mode fails the call and then the whole run */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_execution(run, "sideways", &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "unknown execution mode 'sideways'");
	ck_assert_int_eq(ldb_run_end(run, "pass", NULL, 0, NULL, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "run not logged");
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 0);

	/* a bad status */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_execution(run, "single", &r, &err), 0);
	ck_assert_int_eq(ldb_run_end(run, "great", NULL, 0, NULL, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "unknown run status 'great'");
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM executions"), 0);

	/* one run at a time per connection; abort keeps nothing */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run2, &err), LM_EINTERNAL);
	ck_assert_contains(err.msg, "a run is already open");
	ck_assert_int_eq(ldb_log_execution(run, "single", &r, &err), 0);
	ldb_run_abort(run);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM matmuls"), 0);

	/* inconsistent counts */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ls_result bad = r;
	bad.matmuls = NULL;
	ck_assert_int_eq(ldb_log_execution(run, "single", &bad, &err),
			 LM_EINTERNAL);
	ck_assert_contains(err.msg, "inconsistent result counts");
	ldb_run_abort(run);

	/* closing with an open run rolls it back */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_execution(run, "single", &r, &err), 0);
	ldb_close(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 0);

	/* and the connection still works after all that */
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	log_run(db, 1, 1, 4, 1, "pass");
	ldb_close(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 1);
	ls_result_free(&r);
	free(path);
	free(d);
}
END_TEST

/* ---- concurrency and crashes ----------------------------------------- */

/* The longest WAL a checkpointing writer leaves: the threshold, plus the
** frames of the run that crossed it (fewer than extra), plus the header. */
static long long wal_bound(int extra)
{
	return (long long)(LDB_CKPT_FRAMES + extra) * (4096 + 24) + 32;
}

static long long wal_size(const char *path)
{
	char *wal = lm_xasprintf("%s-wal", path);
	struct stat st;
	long long n = stat(wal, &st) == 0 ? (long long)st.st_size : 0;
	free(wal);
	return n;
}

/* Runs counted on lncsim's own connection (a plain one closing last
** would checkpoint the WAL away). */
static int64_t count_runs(const char *path)
{
	ldb *db = NULL;
	lm_error err;
	sqlite3_stmt *st = NULL;
	ck_assert_msg(ldb_open(&db, path, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sqlite3_prepare_v2(ldb_sqlite(db), "SELECT count(*) "
					    "FROM runs", -1, &st, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	int64_t n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	ldb_close(db);
	return n;
}

enum { N_PROCS = 4, RUNS_PER_PROC = 16, MM_PER_RUN = 500 };

START_TEST(test_concurrent_writers)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "conc.db");
	pid_t pids[N_PROCS];
	/* every child creates and migrates the file itself: opening races too */
	for (int p = 0; p < N_PROCS; p++) {
		pids[p] = fork();
		ck_assert_int_ge(pids[p], 0);
		if (pids[p] == 0) {
			ldb *db = NULL;
			lm_error err;
			if (ldb_open(&db, path, LDB_CREATE, &err) != 0) {
				fprintf(stderr, "child %d: %s\n", p, err.msg);
				_exit(1);
			}
			for (int i = 0; i < RUNS_PER_PROC; i++) {
				ldb_run_info info = { .command = "conc",
						      .cores = 2, .seed = (uint64_t)p };
				ldb_run *run = NULL;
				ls_result r = make_result(2, MM_PER_RUN, p * 100 + i);
				if (ldb_run_begin(db, &info, &run, &err) != 0 ||
				    ldb_log_execution(run, "single", &r, &err) != 0 ||
				    ldb_run_end(run, "pass", NULL, 0, NULL, &err)) {
					fprintf(stderr, "child %d: %s\n", p, err.msg);
					_exit(1);
				}
				ls_result_free(&r);
			}
			ldb_close(db);
			_exit(0);
		}
	}
	for (int p = 0; p < N_PROCS; p++) {
		int st = 0;
		ck_assert_int_eq(waitpid(pids[p], &st, 0), pids[p]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "writer %d failed", p);
	}
	/* checkpoints the writers skipped while others held the file are
	** made up by the next writer alone */
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	log_run(db, 1, 2, MM_PER_RUN, 99, "pass");
	ldb_close(db);
	ck_assert_int_le(wal_size(path), wal_bound(64));
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"),
			 N_PROCS * RUNS_PER_PROC + 1);
	ck_assert_int_eq(sql_int(path, "SELECT count(DISTINCT uuid) FROM runs"),
			 N_PROCS * RUNS_PER_PROC + 1);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM matmuls"),
			 (N_PROCS * RUNS_PER_PROC + 1) * MM_PER_RUN);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM core_stats"),
			 (N_PROCS * RUNS_PER_PROC + 1) * 2);
	for (int p = 0; p < N_PROCS; p++) {
		char sql[128];
		snprintf(sql, sizeof sql, "SELECT count(*) FROM runs WHERE "
			 "seed = %d", p);
		ck_assert_int_eq(sql_int(path, sql), RUNS_PER_PROC);
	}
	char *ic = sql_text(path, "PRAGMA integrity_check");
	ck_assert_str_eq(ic, "ok");
	free(ic);
	free(path);
	free(d);
}
END_TEST

/*
** Runs logged one process after another into one file, each on a
** connection of its own (what `lncsim run` and `diff` do): each close
** folds its run into the main file and leaves the WAL empty (the next
** opener has no log to read), and no run is lost on the way. The same over one connection
** in batches (fuzz), and for a run bigger than the threshold.
*/
START_TEST(test_wal_bounded)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "wal.db");
	ldb *db = NULL;
	lm_error err;
	enum { RUNS = 300, BATCHES = 40, PER_BATCH = 10 };
	for (int i = 0; i < RUNS; i++) {
		ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
		log_run(db, 2, 4, 16, i, "pass");
		ldb_close(db);
		long long w = wal_size(path);
		ck_assert_msg(w == 0, "run %d: WAL %lld bytes", i, w);
	}
	ck_assert_int_eq(count_runs(path), RUNS);

	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	for (int b = 0; b < BATCHES; b++) {
		ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
		for (int i = 0; i < PER_BATCH; i++)
			log_run(db, 2, 4, 16, 1000 + b * PER_BATCH + i, "pass");
		ck_assert_msg(ldb_batch_commit(db, &err) == 0, "%s", err.msg);
		long long w = wal_size(path);
		ck_assert_msg(w <= wal_bound(128), "batch %d: WAL %lld bytes",
			      b, w);
	}
	ldb_close(db);
	ck_assert_int_eq(count_runs(path), RUNS + BATCHES * PER_BATCH);

	/* one run longer than the threshold is folded in at once */
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	log_run(db, 2, 4, 20000, 5000, "pass");
	ldb_close(db);
	ck_assert_int_eq(wal_size(path), 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM matmuls WHERE "
				 "execution_id IN (SELECT id FROM executions "
				 "WHERE run_id = (SELECT max(id) FROM runs))"),
			 2 * 20000);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"),
			 RUNS + BATCHES * PER_BATCH + 1);
	char *ic = sql_text(path, "PRAGMA integrity_check");
	ck_assert_str_eq(ic, "ok");
	free(ic);
	free(path);
	free(d);
}
END_TEST

/*
** A reader holding a snapshot keeps the checkpoint from truncating the
** WAL: writers neither wait for it nor fail, every run lands, and the
** first commit after the reader is gone folds the WAL in.
*/
START_TEST(test_wal_checkpoint_blocked)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "busy.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	log_run(db, 1, 1, 4, 0, "pass");
	ldb_close(db);

	sqlite3 *rd = NULL;
	sqlite3_stmt *st = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &rd, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	sqlite3_db_config(rd, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	ck_assert_int_eq(sqlite3_exec(rd, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(rd, "SELECT count(*) FROM runs", -1,
					    &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(st, 0), 1);
	sqlite3_reset(st);

	enum { RUNS = 40 };
	for (int i = 1; i <= RUNS; i++) {
		ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
		log_run(db, 2, 2, 500, i, "pass");
		ldb_close(db);
	}
	/* no checkpoint got through: the WAL is past the threshold */
	ck_assert_int_gt(wal_size(path), wal_bound(0));
	/* the reader still sees its snapshot */
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(st, 0), 1);
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_exec(rd, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(rd);

	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	log_run(db, 1, 1, 4, RUNS + 1, "pass");
	ldb_close(db);
	ck_assert_int_eq(wal_size(path), 0);
	ck_assert_int_eq(count_runs(path), RUNS + 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM matmuls"),
			 4 + RUNS * 2 * 500 + 4);
	free(path);
	free(d);
}
END_TEST

/*
** A log that another client checkpointed is not truncated: the next
** commit restarts it from its start, and journal_size_limit cuts the file
** back to LDB_WAL_SIZE_LIMIT.
*/
START_TEST(test_wal_size_limit)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "limit.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	log_run(db, 1, 1, 4, 0, "pass");
	ldb_close(db);

	/* a plain client holds a snapshot: the log grows past the limit */
	sqlite3 *other = NULL;
	sqlite3_stmt *st = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &other, SQLITE_OPEN_READWRITE,
					 NULL), SQLITE_OK);
	sqlite3_db_config(other, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	ck_assert_int_eq(sqlite3_exec(other, "BEGIN", NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(other, "SELECT count(*) FROM runs",
					    -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	for (int i = 1; i <= 10; i++)
		log_run(db, 1, 4, 3000, i, "pass");
	ck_assert_int_gt(wal_size(path), LDB_WAL_SIZE_LIMIT);
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL),
			 SQLITE_OK);
	/* ... then checkpoints it without truncating */
	int n_log = 0, n_done = 0;
	ck_assert_int_eq(sqlite3_wal_checkpoint_v2(other, "main",
						   SQLITE_CHECKPOINT_PASSIVE,
						   &n_log, &n_done), SQLITE_OK);
	ck_assert_int_eq(n_done, n_log);
	sqlite3_close(other);
	long long before = wal_size(path);
	ck_assert_int_gt(before, LDB_WAL_SIZE_LIMIT);
	/* a small run: the log restarts and is cut back */
	log_run(db, 1, 1, 4, 11, "pass");
	ck_assert_int_eq(wal_size(path), LDB_WAL_SIZE_LIMIT);
	ldb_close(db);
	ck_assert_int_eq(count_runs(path), 12);
	free(path);
	free(d);
}
END_TEST

START_TEST(test_killed_writer)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "kill.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	log_run(db, 2, 2, 1000, 1, "pass");
	ldb_close(db);

	for (int round = 0; round < 2; round++) {
		int fds[2];
		ck_assert_int_eq(pipe(fds), 0);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(fds[0]);
			ldb_run_info info = { .command = "doomed", .cores = 4 };
			ldb_run *run = NULL;
			ls_result a = make_result(4, 20000, 7);
			ls_result b = make_result(4, 400000, 8);
			if (ldb_open(&db, path, 0, &err) != 0)
				_exit(1);
			/* a tiny page cache: the open transaction spills
			** its pages into the WAL before any commit */
			sqlite3_exec(ldb_sqlite(db), "PRAGMA cache_size = 16",
				     NULL, NULL, NULL);
			if (ldb_run_begin(db, &info, &run, &err) != 0 ||
			    ldb_log_execution(run, "reference", &a, &err) != 0)
				_exit(1);
			/* round 0: killed while idle in the open transaction;
			** round 1: killed while inserting the second half */
			if (round == 0) {
				if (write(fds[1], "x", 1) != 1)
					_exit(1);
				pause();
			}
			if (write(fds[1], "x", 1) != 1)
				_exit(1);
			ldb_log_execution(run, "linked", &b, &err);
			pause();
			_exit(0);
		}
		close(fds[1]);
		char c;
		ck_assert_int_eq(read(fds[0], &c, 1), 1);
		close(fds[0]);
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		int st = 0;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

		/* uncommitted pages of the dead run did reach the WAL */
		char *wal = lm_xasprintf("%s-wal", path);
		struct stat sb;
		ck_assert_int_eq(stat(wal, &sb), 0);
		ck_assert_int_gt(sb.st_size, 500000);
		free(wal);
		char *ic = sql_text(path, "PRAGMA integrity_check");
		ck_assert_str_eq(ic, "ok");
		free(ic);
		ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"),
				 1 + round);
		ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs WHERE "
					 "command = 'doomed'"), 0);
		ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM executions"),
				 2 * (1 + round));
		ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM matmuls"),
				 2000 * (1 + round));
		ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM core_stats "
					 "WHERE core = 3"), 0);
		/* the file takes new runs at once (no stale lock) */
		ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
		log_run(db, 2, 2, 1000, 10 + round, "pass");
		ldb_close(db);
	}
	free(path);
	free(d);
}
END_TEST

/* ---- merge ----------------------------------------------------------- */

/* qsort comparator of strings. */
static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether an SQLite error names a missing table of those made on first
** use. */
static int lazy_missing(const char *msg)
{
	static const char *const lazy[] = { "races", "kernels",
		"kernel_engines", "kernel_queues", "cases", "campaigns",
		"failures" };
	for (size_t i = 0; i < sizeof lazy / sizeof lazy[0]; i++) {
		char want[48];
		snprintf(want, sizeof want, "no such table: %s", lazy[i]);
		if (!strcmp(msg, want))
			return 1;
	}
	return 0;
}

/*
** Every row of a database as text keyed by run uuid instead of ids, one
** line per row, sorted: equal dumps mean nothing was lost or changed.
*/
static char *dump(const char *path)
{
	static const char *const q[] = {
		"SELECT 'run|' || uuid || '|' || started_utc || '|' || command || "
		"'|' || module || '|' || arch || '|' || cores || '|' || seed || "
		"'|' || status || '|' || message || '|' || tool_version || '|' || "
		"wall_seconds || '|' || quote(races) FROM runs",
		"SELECT 'race|' || r.uuid || '|' || x.seq || '|' || x.mode || '|' "
		"|| x.kind || '|' || x.memory || '|' || x.core || '|' || x.object "
		"|| '|' || x.lo || '|' || x.hi || '|' || x.a_function || '/' || "
		"x.a_block || '/' || x.a_instr || '/' || x.a_iter || '/' || "
		"x.a_core || '/' || x.a_engine || '|' || x.b_function || '/' || "
		"x.b_block || '/' || x.b_instr || '/' || x.b_iter || '/' || "
		"x.b_core || '/' || x.b_engine || '|' || x.common FROM races x "
		"JOIN runs r ON x.run_id = r.id",
		"SELECT 'exec|' || r.uuid || '|' || e.mode || '|' || "
		"e.sim_time_ps || '|' || e.instructions FROM executions e "
		"JOIN runs r ON e.run_id = r.id",
		"SELECT 'core|' || r.uuid || '|' || e.mode || '|' || c.core || "
		"'|' || c.busy_pe_ps || '|' || c.busy_sp_ps || '|' || c.macs || "
		"'|' || quote(c.pe_util) || '|' || c.mac_util || '|' || "
		"c.dma_transfers || '|' || c.semaphore_wait_ps || '|' || c.end_ps "
		"FROM core_stats c JOIN executions e ON c.execution_id = e.id "
		"JOIN runs r ON e.run_id = r.id",
		"SELECT 'mm|' || r.uuid || '|' || e.mode || '|' || x.core || '|' "
		"|| x.name || '|' || x.k || 'x' || x.m || 'x' || x.n || '|' || "
		"x.dtype || '|' || x.start_ps || '|' || x.duration_ps || '|' || "
		"quote(x.array_util) FROM matmuls x JOIN executions e ON "
		"x.execution_id = e.id JOIN runs r ON e.run_id = r.id",
		"SELECT 'tensor|' || r.uuid || '|' || t.name || '|' || t.equal || "
		"'|' || t.mismatches || '|' || t.first_index || '|' || "
		"quote(t.max_abs_diff) FROM tensors t JOIN runs r ON "
		"t.run_id = r.id",
		"SELECT 'kern|' || r.uuid || '|' || e.mode || '|' || k.seq || '|' "
		"|| k.core || '|' || k.call || '|' || k.func || '|' || k.caller "
		"|| '|' || k.parent || '|' || k.depth || '|' || k.start_ps || '|' "
		"|| k.end_ps || '|' || k.instructions || '|' || k.critical || '|' "
		"|| k.dma_bytes || '|' || k.dma_transfers || '|' || k.dma_xfer_ps "
		"|| '|' || k.dma_active_ps || '|' || k.dma_end_ps FROM kernels k "
		"JOIN executions e ON k.execution_id = e.id JOIN runs r ON "
		"e.run_id = r.id",
		"SELECT 'keng|' || r.uuid || '|' || e.mode || '|' || k.seq || '|' "
		"|| k.engine || '|' || k.busy_ps || '|' || k.wait_sem_ps || '|' "
		"|| k.wait_barrier_ps || '|' || k.wait_dep_ps || '|' || k.idle_ps "
		"|| '|' || k.last_end_ps FROM kernel_engines k JOIN executions e "
		"ON k.execution_id = e.id JOIN runs r ON e.run_id = r.id",
		"SELECT 'kq|' || r.uuid || '|' || e.mode || '|' || k.seq || '|' "
		"|| k.queue || '|' || k.bytes || '|' || k.transfers || '|' || "
		"k.xfer_ps || '|' || k.active_ps FROM kernel_queues k JOIN "
		"executions e ON k.execution_id = e.id JOIN runs r ON "
		"e.run_id = r.id",
		"SELECT 'case|' || r.uuid || '|' || c.campaign || '|' || c.seed "
		"|| '|' || c.gen_options || '|' || c.kind || '|' || c.signature "
		"FROM cases c JOIN runs r ON r.id = c.run_id",
		"SELECT 'campaign|' || name || '|' || gen_options || '|' || "
		"first_seed || '|' || count FROM campaigns",
		"SELECT 'failure|' || campaign || '|' || signature || '|' || kind "
		"|| '|' || seed || '|' || hits || '|' || message || '|' || repro "
		"FROM failures",
	};
	sqlite3 *h = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	char **lines = NULL;
	int n = 0, cap = 0;
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		sqlite3_stmt *st = NULL;
		/* the tables made on first use read as empty when missing */
		if (sqlite3_prepare_v2(h, q[i], -1, &st, NULL) != SQLITE_OK &&
		    lazy_missing(sqlite3_errmsg(h)))
			continue;
		ck_assert_msg(st, "%s", sqlite3_errmsg(h));
		while (sqlite3_step(st) == SQLITE_ROW) {
			lm_grow(&lines, &cap, n + 1, sizeof *lines);
			lines[n++] = lm_xstrdup((const char *)
						sqlite3_column_text(st, 0));
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	qsort(lines, (size_t)n, sizeof *lines, cmp_line);
	lm_buf b = LM_BUF_INIT;
	for (int i = 0; i < n; i++) {
		lm_buf_puts(&b, lines[i]);
		lm_buf_puts(&b, "\n");
		free(lines[i]);
	}
	free(lines);
	return lm_buf_detach(&b);
}

/* Equal dumps; on a difference, both are left in files for diff. */
#define ck_assert_dump_eq(a, b) \
	do { \
		if (strcmp((a), (b)) != 0) { \
			lm_error e_; \
			lm_write_file_atomic("dump-got.txt", (a), strlen(a), &e_); \
			lm_write_file_atomic("dump-want.txt", (b), strlen(b), &e_); \
			ck_abort_msg("dumps differ: see dump-got.txt, " \
				     "dump-want.txt"); \
		} \
	} while (0)

/* The sorted lines of two dumps together. */
static char *dump_union(const char *a, const char *b)
{
	char *all = lm_xasprintf("%s%s", a, b);
	char **lines = NULL;
	int n = 0, cap = 0;
	for (char *s = strtok(all, "\n"); s; s = strtok(NULL, "\n")) {
		lm_grow(&lines, &cap, n + 1, sizeof *lines);
		lines[n++] = s;
	}
	qsort(lines, (size_t)n, sizeof *lines, cmp_line);
	lm_buf out = LM_BUF_INIT;
	for (int i = 0; i < n; i++) {
		lm_buf_puts(&out, lines[i]);
		lm_buf_puts(&out, "\n");
	}
	free(lines);
	free(all);
	return lm_buf_detach(&out);
}

START_TEST(test_merge)
{
	char *d = tu_tmpdir("db");
	char *pa = lm_path_join(d, "a.db"), *pb = lm_path_join(d, "b.db");
	char *po = lm_path_join(d, "out.db");
	ldb *a = NULL, *b = NULL, *o = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&a, pa, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_open(&b, pb, LDB_CREATE, &err), 0);
	log_run(a, 2, 2, 300, 1, "pass");
	log_run(a, 1, 1, 10, 2, "fail");
	ldb_run *run = NULL;
	ldb_run_info info = { .command = "err", .cores = 1 };
	ck_assert_int_eq(ldb_run_begin(a, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_run_end(run, "error", "deadlock", 0, NULL, &err), 0);
	log_run(b, 2, 4, 500, 3, "pass");
	log_run(b, 1, 2, 0, 4, "pass");
	ldb_close(a);
	ldb_close(b);
	/* out already holds a run of its own: ids must be re-keyed */
	ck_assert_int_eq(ldb_open(&o, po, LDB_CREATE, &err), 0);
	log_run(o, 1, 3, 20, 5, "pass");
	char *da = dump(pa), *db_ = dump(pb), *d0 = dump(po);

	ldb_merge_stats st = {0};
	ck_assert_msg(ldb_merge(o, pa, &st, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(st.runs, 3);
	ck_assert_int_eq(st.runs_skipped, 0);
	ck_assert_int_eq(st.executions, 3);
	ck_assert_int_eq(st.matmuls, 610);
	ck_assert_int_eq(st.tensors, 4);
	ck_assert_int_eq(ldb_merge(o, pb, &st, &err), 0);
	ck_assert_int_eq(st.runs, 5);
	ck_assert_int_eq(st.core_stats, 2 * 2 + 1 + 2 * 4 + 2);
	char *d1 = dump(po);
	char *ab = dump_union(da, db_), *want = dump_union(ab, d0);
	ck_assert_dump_eq(d1, want);
	ck_assert_int_eq(sql_int(po, "SELECT count(*) FROM runs"), 6);

	/* twice: nothing added */
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(ldb_merge(o, pa, &st, &err), 0);
	ck_assert_int_eq(ldb_merge(o, pb, &st, &err), 0);
	ck_assert_int_eq(st.runs, 0);
	ck_assert_int_eq(st.runs_skipped, 5);
	ck_assert_int_eq(st.matmuls, 0);
	char *d2 = dump(po);
	ck_assert_dump_eq(d2, d1);
	/* into itself: nothing added */
	ck_assert_int_eq(ldb_merge(o, po, &st, &err), 0);
	ck_assert_int_eq(st.runs, 0);
	/* a bad shard: error, out unchanged */
	char *junk = tu_write(d, "junk.db", "not a database, really not\n");
	ck_assert_int_eq(ldb_merge(o, junk, &st, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "junk.db: not an lncsim database");
	char *none = lm_path_join(d, "none.db");
	ck_assert_int_eq(ldb_merge(o, none, &st, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "none.db: no such database");
	ldb_close(o);
	char *d3 = dump(po);
	ck_assert_dump_eq(d3, d1);
	ck_assert_int_eq(sql_int(po, "SELECT count(*) FROM "
				 "pragma_foreign_key_check"), 0);

	/* the CLI: merge twice, then list */
	char *pc = lm_path_join(d, "cli.db");
	tu_run r = tu_lncsim(NULL, "db", "merge", pc, pa, pb, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "a.db: 3 runs merged, 0 already present");
	ck_assert_contains(r.out, "b.db: 2 runs merged, 0 already present "
			   "(3 executions, 10 core stats, 1000 matmuls, "
			   "4 tensors)");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "merge", pc, pa, pb, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "a.db: 0 runs merged, 3 already present");
	tu_run_free(&r);
	char *dc = dump(pc);
	ck_assert_dump_eq(dc, ab);
	r = tu_lncsim(NULL, "db", "merge", pc, junk, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: ");
	ck_assert_contains(r.err, "junk.db: not an lncsim database");
	tu_run_free(&r);

	free(dc);
	free(pc);
	free(none);
	free(junk);
	free(d3);
	free(d2);
	free(want);
	free(ab);
	free(d1);
	free(d0);
	free(db_);
	free(da);
	free(po);
	free(pb);
	free(pa);
	free(d);
}
END_TEST

/* ---- races ------------------------------------------------------------ */

/* n synthetic races whose every field depends on tag and the index; the
** strings live in bufs (n entries, freed with free_races). */
typedef struct race_bufs {
	char obj[32], fa[32], fb[32], ia[32], ib[32], common[48];
} race_bufs;

static ldb_race *make_races(int n, int tag, race_bufs **bufs)
{
	static const char *const kinds[] = { "RAW", "WAR", "WAW" };
	static const char *const mems[] = { "SBUF", "PSUM", "DRAM" };
	ldb_race *v = lm_xcalloc((size_t)(n ? n : 1), sizeof *v);
	race_bufs *b = lm_xcalloc((size_t)(n ? n : 1), sizeof *b);
	for (int i = 0; i < n; i++) {
		ldb_race *r = &v[i];
		int m = (i + tag) % 3;
		snprintf(b[i].obj, sizeof b[i].obj, "t%d_%d", tag, i);
		snprintf(b[i].fa, sizeof b[i].fa, "fa%d", i);
		snprintf(b[i].fb, sizeof b[i].fb, "fb%d", tag);
		snprintf(b[i].ia, sizeof b[i].ia, "i=%d,j=%d", i, tag);
		snprintf(b[i].common, sizeof b[i].common, "barrier %d", i);
		r->kind = kinds[i % 3];
		r->memory = mems[m];
		r->core = m == 2 ? -1 : i % 4;
		r->object = m == 2 ? b[i].obj : "";
		if (i % 5 == 4) { /* a barrier id held unordered */
			r->kind = "SLOT";
			r->memory = "BARRIER";
			r->core = -1;
			r->object = b[i].obj;
		}
		r->lo = ((int64_t)1 << 33) + 64 * i + tag;
		r->hi = r->lo + 1 + i;
		r->a = (ldb_race_access){ b[i].fa, "blk", "ins_a", b[i].ia,
					  i % 4, "PE" };
		r->b = (ldb_race_access){ b[i].fb, "blk2", "ins_b",
					  i % 2 ? NULL : "", (i + 1) % 4,
					  "Activation" };
		r->common = i % 2 ? b[i].common : NULL;
	}
	*bufs = b;
	return v;
}

/*
** A run with one execution per mode of modes ("reference,linked"); the
** last mode has n races (tag), the others none; n < 0: not checked.
** Returns the run id.
*/
static int64_t race_run(ldb *db, const char *modes, int n, int tag)
{
	lm_error err;
	ldb_run_info info = { .command = "lncsim diff --race x",
			      .module = "x", .arch = "trn2", .cores = 2,
			      .seed = (uint64_t)tag };
	ldb_run *run = NULL;
	ck_assert_msg(ldb_run_begin(db, &info, &run, &err) == 0, "%s", err.msg);
	char *m = lm_xstrdup(modes), *last = NULL;
	for (char *t = strtok(m, ","); t; t = strtok(NULL, ",")) {
		ls_result r = make_result(2, 3, tag);
		ck_assert_int_eq(ldb_log_execution(run, t, &r, &err), 0);
		ls_result_free(&r);
		if (last && n >= 0)
			ck_assert_int_eq(ldb_log_races(run, last, NULL, 0,
						       &err), 0);
		last = t;
	}
	if (n >= 0) {
		race_bufs *b = NULL;
		ldb_race *v = make_races(n, tag, &b);
		ck_assert_msg(ldb_log_races(run, last, v, n, &err) == 0, "%s",
			      err.msg);
		free(v);
		free(b);
	}
	free(m);
	int64_t id = 0;
	ck_assert_msg(ldb_run_end(run, "pass", "", 0.1, &id, &err) == 0, "%s",
		      err.msg);
	return id;
}

/* The races of run id as logged from make_races(n, tag), field by field. */
static void check_races(ldb *db, int64_t id, const char *mode, int n,
			int tag)
{
	lm_error err;
	ldb_race_row *rows = NULL;
	int got = -1;
	ck_assert_msg(ldb_query_races(db, id, &rows, &got, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(got, n);
	race_bufs *b = NULL;
	ldb_race *v = make_races(n, tag, &b);
	for (int i = 0; i < n; i++) {
		const ldb_race *w = &v[i], *r = &rows[i].r;
		ck_assert_int_eq(rows[i].run_id, id);
		ck_assert_int_eq(rows[i].seq, i);
		ck_assert_str_eq(rows[i].mode, mode);
		ck_assert_str_eq(r->kind, w->kind);
		ck_assert_str_eq(r->memory, w->memory);
		ck_assert_int_eq(r->core, w->core);
		ck_assert_str_eq(r->object, w->object);
		ck_assert_int_eq(r->lo, w->lo);
		ck_assert_int_eq(r->hi, w->hi);
		ck_assert_str_eq(r->a.function, w->a.function);
		ck_assert_str_eq(r->a.block, "blk");
		ck_assert_str_eq(r->a.instr, "ins_a");
		ck_assert_str_eq(r->a.iteration, w->a.iteration);
		ck_assert_int_eq(r->a.core, w->a.core);
		ck_assert_str_eq(r->a.engine, "PE");
		ck_assert_str_eq(r->b.function, w->b.function);
		ck_assert_str_eq(r->b.block, "blk2");
		ck_assert_str_eq(r->b.instr, "ins_b");
		ck_assert_str_eq(r->b.iteration, "");  /* NULL and "" alike */
		ck_assert_int_eq(r->b.core, w->b.core);
		ck_assert_str_eq(r->b.engine, "Activation");
		ck_assert_str_eq(r->common, w->common ? w->common : "");
	}
	free(v);
	free(b);
	ldb_race_rows_free(rows, got);
}

/* The races column of run id: -1 when the run was not checked. */
static int64_t race_count(ldb *db, int64_t id)
{
	lm_error err;
	ldb_race_check *ck = NULL;
	int n = 0;
	ck_assert_msg(ldb_query_race_checks(db, id, 0, &ck, &n, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(ck[0].run_id, id);
	int64_t v = ck[0].races;
	free(ck);
	return v;
}

/*
** Races logged with their run read back field by field; a run checked
** without races says so and inserts nothing; a run never checked says
** that; a bad race, or a bad mode, loses the whole run, with the error.
*/
START_TEST(test_races_roundtrip)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "races.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	int64_t clean = race_run(db, "reference,linked", 0, 1);
	/* checked without races: no races table yet */
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE name = 'races'"), 0);
	int64_t racy = race_run(db, "reference,linked", 7, 2);
	int64_t unchecked = race_run(db, "single", -1, 3);
	int64_t many = race_run(db, "single", 1000, 4);
	ck_assert_int_eq(race_count(db, clean), 0);
	ck_assert_int_eq(race_count(db, racy), 7);
	ck_assert_int_eq(race_count(db, unchecked), -1);
	ck_assert_int_eq(race_count(db, many), 1000);
	check_races(db, clean, "linked", 0, 1);
	check_races(db, racy, "linked", 7, 2);
	check_races(db, unchecked, "single", 0, 3);
	check_races(db, many, "single", 1000, 4);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM races"), 1007);
	/* no such run */
	ldb_race_check *ck = NULL;
	int n = -1;
	ck_assert_int_eq(ldb_query_race_checks(db, 99, 0, &ck, &n, &err), 0);
	ck_assert_int_eq(n, 0);
	free(ck);
	/* the checked runs, oldest first; the last two of them */
	ck_assert_int_eq(ldb_query_race_checks(db, 0, 0, &ck, &n, &err), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(ck[0].run_id, clean);
	ck_assert_int_eq(ck[1].run_id, racy);
	ck_assert_int_eq(ck[2].run_id, many);
	free(ck);
	ck_assert_int_eq(ldb_query_race_checks(db, 0, 2, &ck, &n, &err), 0);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(ck[0].run_id, racy);
	free(ck);

	/* a race with a kind that is none: refused, the run is lost */
	ldb_run_info info = { .command = "bad", .cores = 1 };
	ldb_run *run = NULL;
	race_bufs *b = NULL;
	ldb_race *v = make_races(3, 5, &b);
	v[2].kind = "RAR";
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "single", v, 3, &err),
			 LM_EINTERNAL);
	ck_assert_contains(err.msg, "race 2: kind 'RAR'");
	ck_assert_int_eq(ldb_run_end(run, "pass", "", 0, NULL, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "run not logged");
	/* SLOT only in BARRIER, BARRIER only for SLOT */
	for (int k = 0; k < 2; k++) {
		v[2].kind = k ? "WAR" : "SLOT";
		v[2].memory = k ? "BARRIER" : "DRAM";
		ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
		ck_assert_int_eq(ldb_log_races(run, "single", v, 3, &err),
				 LM_EINTERNAL);
		ck_assert_contains(err.msg, "race 2: kind '");
		ldb_run_abort(run);
	}
	v[2].memory = "DRAM";
	v[2].kind = "WAW";
	v[1].hi = v[1].lo;   /* an empty range */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "single", v, 3, &err),
			 LM_EINTERNAL);
	ck_assert_contains(err.msg, "race 1:");
	ldb_run_abort(run);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "sideways", v, 1, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "unknown execution mode 'sideways'");
	ck_assert_int_eq(ldb_run_end(run, "pass", "", 0, NULL, &err),
			 LM_EINPUT);
	free(v);
	free(b);
	/* an insert that fails (refused by a trigger): reported, nothing
	** kept */
	sql_exec(path, "CREATE TRIGGER no_races BEFORE INSERT ON races "
		 "BEGIN SELECT RAISE(ABORT, 'races refused here'); END");
	ldb_close(db);
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	v = make_races(2, 6, &b);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "single", v, 2, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "races refused here");
	ck_assert_int_eq(ldb_run_end(run, "pass", "", 0, NULL, &err),
			 LM_EINPUT);
	free(v);
	free(b);
	ldb_close(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 4);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM races"), 1007);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** A version-4 file (before races) migrates: its runs stay, not checked
** for races; the races table is made by the first run with races.
*/
START_TEST(test_migrate_v4)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "v4.db");
	sql_exec(path, v1_schema);
	char *up = lm_xasprintf("%s%s%s PRAGMA user_version = 4;",
				ldb_migrations[1], ldb_migrations[2],
				ldb_migrations[3]);
	sql_exec(path, up);
	free(up);
	int v = -1;
	lm_error err;
	ck_assert_int_eq(ldb_file_version(path, &v, &err), 0);
	ck_assert_int_eq(v, 4);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE name = 'races'"), 0);
	ldb *db = NULL;
	ck_assert_msg(ldb_open(&db, path, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sql_int(path, "PRAGMA user_version"),
			 LDB_SCHEMA_VERSION);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs WHERE "
				 "races IS NULL"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE name = 'races'"), 0);
	ck_assert_int_eq(race_count(db, 1), -1);
	int64_t id = race_run(db, "single", 4, 7);
	ck_assert_int_eq(id, 3);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM pragma_table_list "
				 "WHERE schema = 'main' AND strict = 1 AND "
				 "wr = 1 AND name = 'races'"), 1);
	check_races(db, id, "single", 4, 7);
	ck_assert_int_eq(race_count(db, id), 4);
	/* a run's races go with it */
	sql_exec(path, "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id = 3");
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM races"), 0);
	ldb_close(db);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** The kernels of an execution: every field of each call and of each of
** its engines round-trips; a run's kernels go with it.
*/
START_TEST(test_kernels_roundtrip)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "k.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	log_run(db, 2, 2, 2, 3, "pass"); /* tags 3 (two calls), 4 (one) */
	ldb_close(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernels"), 3);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernel_engines"),
			 15);
	char *t = sql_text(path, "SELECT group_concat(call || '/' || func || "
			   "'/' || caller || '/' || parent || '/' || depth || "
			   "'/' || core || '/' || start_ps || '/' || end_ps || "
			   "'/' || instructions || '/' || critical || '/' || "
			   "dma_bytes || '/' || dma_transfers || '/' || "
			   "dma_xfer_ps || '/' || dma_active_ps || '/' || "
			   "dma_end_ps, ' ') FROM (SELECT * FROM kernels ORDER "
			   "BY execution_id, seq)");
	ck_assert_str_eq(t, "inst__k3_0/k0/sg0000/-1/0/1/1003/900000/20/DVE/"
			 "8589934595/7/50003/40000/899999 "
			 "inst__k3_1/k1/k0/0/1/1/1013/899990/19/DMA/"
			 "8589934595/8/50003/40001/899989 "
			 "inst__k4_0/k0/sg0000/-1/0/1/1004/900000/20/DVE/"
			 "8589934596/7/50004/40000/899999");
	free(t);
	t = sql_text(path, "SELECT group_concat(engine || '=' || busy_ps || "
		     "'/' || wait_sem_ps || '/' || wait_barrier_ps || '/' || "
		     "wait_dep_ps || '/' || idle_ps || '/' || last_end_ps, ' ') "
		     "FROM (SELECT * FROM kernel_engines WHERE execution_id = 1 "
		     "AND seq = 1 ORDER BY engine)");
	ck_assert_str_eq(t, "ACT=312/201/301/404/897759/899989 "
			 "DVE=322/202/302/405/897746/899988 "
			 "PE=302/200/300/403/897772/899990 "
			 "POOL=332/203/303/406/897733/899987 "
			 "SP=342/204/304/407/897720/899986");
	free(t);
	/* the engine times of a call add up to its time */
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernel_engines x "
				 "JOIN kernels k USING (execution_id, seq) WHERE "
				 "busy_ps + wait_sem_ps + wait_barrier_ps + "
				 "wait_dep_ps + idle_ps <> end_ps - start_ps"), 0);
	/* per queue instance, by name */
	t = sql_text(path, "SELECT group_concat(seq || ':' || queue || '=' || "
		     "bytes || '/' || transfers || '/' || xfer_ps || '/' || "
		     "active_ps, ' ') FROM (SELECT * FROM kernel_queues WHERE "
		     "execution_id = 1 ORDER BY seq, queue)");
	ck_assert_str_eq(t, "0:dq0/i0=1003/3/30000/20000 "
			 "0:dq1/i0=2003/4/30001/20000 "
			 "1:dq0/i1=1003/3/30000/20001");
	free(t);
	sql_exec(path, "PRAGMA foreign_keys = ON; DELETE FROM runs");
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernels"), 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernel_engines"),
			 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernel_queues"),
			 0);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** A version-5 file (before kernels) migrates: its executions stay,
** without kernels; the two tables are made, STRICT, by the first
** execution with kernels.
*/
START_TEST(test_migrate_v5)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "v5.db");
	sql_exec(path, v1_schema);
	char *up = lm_xasprintf("%s%s%s%s PRAGMA user_version = 5;",
				ldb_migrations[1], ldb_migrations[2],
				ldb_migrations[3], ldb_migrations[4]);
	sql_exec(path, up);
	free(up);
	int v = -1;
	lm_error err;
	ck_assert_int_eq(ldb_file_version(path, &v, &err), 0);
	ck_assert_int_eq(v, 5);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE name IN ('kernels', 'kernel_engines')"),
			 0);
	int64_t n_exec = sql_int(path, "SELECT count(*) FROM executions");
	ldb *db = NULL;
	ck_assert_msg(ldb_open(&db, path, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sql_int(path, "PRAGMA user_version"),
			 LDB_SCHEMA_VERSION);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM executions"),
			 n_exec);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM sqlite_master "
				 "WHERE name IN ('kernels', 'kernel_engines')"),
			 0);
	log_run(db, 1, 1, 1, 5, "pass");
	ldb_close(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM pragma_table_list "
				 "WHERE schema = 'main' AND strict = 1 AND "
				 "wr = 1 AND name IN ('kernels', "
				 "'kernel_engines', 'kernel_queues')"), 3);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernels"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernel_engines"),
			 10);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** db merge carries races and the checked state: re-keyed to the new run
** ids, every field kept, merging twice adds nothing; `db merge` says how
** many; `db races` lists them.
*/
START_TEST(test_merge_races)
{
	char *d = tu_tmpdir("db");
	char *pa = lm_path_join(d, "a.db"), *pb = lm_path_join(d, "b.db");
	char *po = lm_path_join(d, "out.db");
	ldb *a = NULL, *b = NULL, *o = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&a, pa, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_open(&b, pb, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_open(&o, po, LDB_CREATE, &err), 0);
	race_run(a, "reference,linked", 3, 1);
	race_run(a, "single", -1, 2);
	race_run(b, "single", 0, 3);
	race_run(b, "reference,linked", 5, 4);
	race_run(o, "single", 2, 5);
	ldb_close(a);
	ldb_close(b);
	char *da = dump(pa), *db_ = dump(pb), *d0 = dump(po);
	ldb_merge_stats st = {0};
	ck_assert_msg(ldb_merge(o, pa, &st, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(st.runs, 2);
	ck_assert_int_eq(st.races, 3);
	ck_assert_msg(ldb_merge(o, pb, &st, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(st.races, 8);
	char *d1 = dump(po);
	char *ab = dump_union(da, db_), *want = dump_union(ab, d0);
	ck_assert_dump_eq(d1, want);
	/* the ids moved: run 1 of a is run 2 here, run 2 of b run 5 */
	check_races(o, 2, "linked", 3, 1);
	check_races(o, 5, "linked", 5, 4);
	ck_assert_int_eq(race_count(o, 3), -1);
	ck_assert_int_eq(race_count(o, 4), 0);
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(ldb_merge(o, pa, &st, &err), 0);
	ck_assert_int_eq(ldb_merge(o, pb, &st, &err), 0);
	ck_assert_int_eq(st.races, 0);
	char *d2 = dump(po);
	ck_assert_dump_eq(d2, d1);
	ldb_close(o);

	char *pc = lm_path_join(d, "cli.db");
	tu_run r = tu_lncsim(NULL, "db", "merge", pc, pa, pb, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "a.db: 2 runs merged, 0 already present "
			   "(3 executions, 6 core stats, 9 matmuls, "
			   "0 tensors); 3 races\n");
	ck_assert_contains(r.out, "b.db: 2 runs merged");
	tu_run_free(&r);

	/* db races: every checked run, one line a race */
	r = tu_lncsim(NULL, "db", "races", "--db", po, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "run 1: 2 races\n");
	ck_assert_contains(r.out, "run 2: 3 races\n");
	ck_assert_contains(r.out, "run 4: no races\n");
	ck_assert_contains(r.out, "run 5: 5 races\n");
	ck_assert(!strstr(r.out, "run 3:"));
	ck_assert_contains(r.out, "\n  linked RAW PSUM core 0 bytes "
			   "[8589934593, 8589934594): fa0/blk/ins_a [i=0,j=1] "
			   "(core 0 PE) vs fb1/blk2/ins_b (core 1 Activation); "
			   "last common point: (none)\n");
	ck_assert_contains(r.out, "\n  linked WAR DRAM t1_1 bytes "
			   "[8589934657, 8589934659): fa1/blk/ins_a [i=1,j=1] "
			   "(core 1 PE) vs fb1/blk2/ins_b (core 2 Activation); "
			   "last common point: barrier 1\n");
	ck_assert_contains(r.out, "10 races in 4 runs checked\n");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", po, "--run", "3", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out, "run 3: not checked for races\n");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", po, "--last", "1", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "run 5: 5 races\n");
	ck_assert(!strstr(r.out, "run 4:"));
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", po, "--run", "9", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "no run 9");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", po, "--run", "x", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--run needs a positive number");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", pc, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "8 races in 3 runs checked\n");
	tu_run_free(&r);

	free(pc);
	free(d2);
	free(want);
	free(ab);
	free(d1);
	free(d0);
	free(db_);
	free(da);
	free(po);
	free(pb);
	free(pa);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* ---- batches, campaigns -------------------------------------------- */

/* One run (a pass, no executions) in db; its id. */
static int64_t bare_run(ldb *db, uint64_t seed, const char *status)
{
	lm_error err;
	ldb_run_info info = { .command = "lncsim fuzz", .module = "gen",
			      .cores = 2, .seed = seed };
	ldb_run *run = NULL;
	int64_t id = 0;
	ck_assert_msg(ldb_run_begin(db, &info, &run, &err) == 0, "%s", err.msg);
	ck_assert_msg(ldb_run_end(run, status, "", 0.5, &id, &err) == 0, "%s",
		      err.msg);
	return id;
}

/*
** A batch keeps its runs in one transaction: committed, all are there;
** a run aborted or failing inside it leaves the others; a batch rolled
** back leaves none; nothing is visible to others before the commit.
*/
START_TEST(test_batch)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "batch.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_batch_is_open(db), 0);
	ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
	ck_assert_int_eq(ldb_batch_begin(db, &err), LM_EINTERNAL);
	bare_run(db, 1, "pass");
	bare_run(db, 2, "fail");
	/* aborted and failing runs inside it */
	ldb_run_info info = { .command = "x" };
	ldb_run *run = NULL;
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_batch_commit(db, &err), LM_EINTERNAL);
	ldb_run_abort(run);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_run_end(run, "maybe", "", 0, NULL, &err), LM_EINPUT);
	bare_run(db, 3, "pass");
	/* another connection sees nothing yet */
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 0);
	ck_assert_msg(ldb_batch_commit(db, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ldb_batch_is_open(db), 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 3);
	char *seeds = sql_text(path, "SELECT group_concat(seed) FROM (SELECT "
			       "seed FROM runs ORDER BY seed)");
	ck_assert_str_eq(seeds, "1,2,3");
	free(seeds);
	/* rolled back: none */
	ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
	bare_run(db, 4, "pass");
	ldb_batch_abort(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 3);
	/* closed with a batch open: rolled back */
	ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
	bare_run(db, 5, "pass");
	ldb_close(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 3);
	/* a full database inside a batch: the run fails, and the commit keeps
	** the runs before it or -- the transaction rolled back -- none, never
	** a part of one */
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
	bare_run(db, 6, "pass");
	int64_t pages = 0;
	{
		sqlite3_stmt *st = NULL;
		ck_assert_int_eq(sqlite3_prepare_v2(ldb_sqlite(db), "PRAGMA "
						    "page_count", -1, &st, NULL),
				 SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		pages = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	char *lim = lm_xasprintf("PRAGMA max_page_count = %lld",
				 (long long)pages);
	ck_assert_int_eq(sqlite3_exec(ldb_sqlite(db), lim, NULL, NULL, NULL),
			 SQLITE_OK);
	free(lim);
	int failed = 0;
	for (int i = 0; i < 2000 && !failed; i++) {
		ldb_run *r2 = NULL;
		ldb_run_info big = { .command = "a long command line to fill "
				     "pages quickly, a long command line to fill "
				     "pages quickly", .seed = 100 + (uint64_t)i };
		if (ldb_run_begin(db, &big, &r2, &err) != 0 ||
		    ldb_log_tensor(r2, "t", 1, 0, -1, 0, &err) != 0) {
			failed = 1;
			if (r2)
				ldb_run_abort(r2);
			break;
		}
		if (ldb_run_end(r2, "pass", "", 0, NULL, &err) != 0)
			failed = 1;
	}
	ck_assert_int_eq(failed, 1);
	ck_assert_contains(err.msg, "batch.db: ");
	int rc = ldb_batch_commit(db, &err);
	ldb_close(db);
	int64_t n = sql_int(path, "SELECT count(*) FROM runs");
	if (rc == 0)
		ck_assert_int_gt(n, 4);
	else
		ck_assert_int_eq(n, 3);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs WHERE "
				 "status = 'error'"), 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM tensors WHERE "
				 "run_id NOT IN (SELECT id FROM runs)"), 0);
	free(path);
	free(d);
}
END_TEST

/* Log fuzz case seed of campaign c (signature sig, "" a pass). */
static void log_fuzz_case(ldb *db, const char *c, uint64_t seed,
			  const char *sig, const char *msg)
{
	lm_error err;
	ldb_run_info info = { .command = "lncsim gen && lncsim diff",
			      .module = "gen", .cores = 2, .seed = seed };
	ldb_run *run = NULL;
	ck_assert_msg(ldb_run_begin(db, &info, &run, &err) == 0, "%s", err.msg);
	char *repro = lm_xasprintf("repro %llu", (unsigned long long)seed);
	ldb_case_info ci = { c, seed, "cores=2-2 size=small schedules=0 skip=",
			     *sig ? "mismatch" : "", sig, msg, repro };
	ck_assert_msg(ldb_log_case(run, &ci, &err) == 0, "%s", err.msg);
	ck_assert_msg(ldb_run_end(run, *sig ? "fail" : "pass", msg, 0.1, NULL,
				  &err) == 0, "%s", err.msg);
	free(repro);
}

/* A campaign: ldb_campaign_add/get. */
static void add_campaign(ldb *db, const char *name, const char *opts,
			 uint64_t first, uint64_t count)
{
	lm_error err;
	ldb_campaign c;
	memset(&c, 0, sizeof c);
	c.name = (char *)name;
	c.gen_options = (char *)opts;
	c.command = (char *)"lncsim fuzz";
	c.first_seed = first;
	c.count = count;
	ck_assert_msg(ldb_campaign_add(db, &c, &err) == 0, "%s", err.msg);
}

static const char opts2[] = "cores=2-2 size=small schedules=0 skip=";

/*
** Campaigns: added once by name, found by name or as the newest; the
** seeds recorded come back as ranges; each failure signature is kept
** once with its smallest seed (and that seed's message) and its hits.
*/
START_TEST(test_campaigns)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "camp.db");
	ldb *db = NULL;
	lm_error err;
	ldb_campaign k;
	int found = -1;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_campaign_get(db, NULL, &k, &found, &err), 0);
	ck_assert_int_eq(found, 0);
	add_campaign(db, "a", opts2, 1, 100);
	add_campaign(db, "b", "cores=1-4 size=large schedules=2 skip=verify",
		     7, 0);
	ldb_campaign dup;
	memset(&dup, 0, sizeof dup);
	dup.name = (char *)"a";
	ck_assert_int_eq(ldb_campaign_add(db, &dup, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "camp.db: campaign a exists");
	ck_assert_int_eq(ldb_campaign_get(db, NULL, &k, &found, &err), 0);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(k.name, "b");
	ck_assert_int_eq(k.first_seed, 7);
	ck_assert_int_eq(k.count, 0);
	ck_assert_str_eq(k.tool_version, PACKAGE_VERSION);
	ldb_campaign_free(&k);
	ck_assert_int_eq(ldb_campaign_get(db, "a", &k, &found, &err), 0);
	ck_assert_str_eq(k.gen_options, opts2);
	ck_assert_int_eq(k.count, 100);
	ldb_campaign_free(&k);
	ck_assert_int_eq(ldb_campaign_get(db, "zz", &k, &found, &err), 0);
	ck_assert_int_eq(found, 0);

	/* cases, in a batch as fuzz logs them */
	static const uint64_t seeds[] = { 8, 1, 2, 3, 5, 7, 9, 4000000000ull };
	static const char *const sigs[] = { "s1", "", "s1", "", "s2", "", "s1",
					    "" };
	ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
	for (int i = 0; i < 8; i++) {
		char *msg = lm_xasprintf("msg %llu", (unsigned long long)seeds[i]);
		log_fuzz_case(db, "a", seeds[i], sigs[i], msg);
		free(msg);
	}
	log_fuzz_case(db, "b", 7, "s1", "other campaign");
	ck_assert_int_eq(ldb_batch_commit(db, &err), 0);
	/* a case of a campaign that does not exist is refused */
	ldb_run_info info = { .command = "x" };
	ldb_run *run = NULL;
	ldb_case_info bad = { "nope", 1, opts2, "", "", "", "" };
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_case(run, &bad, &err), LM_EINPUT);
	ldb_run_abort(run);

	ldb_seed_range *r = NULL;
	int n = 0;
	int64_t total = 0;
	ck_assert_int_eq(ldb_campaign_seeds(db, "a", &r, &n, &total, &err), 0);
	ck_assert_int_eq(total, 8);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(r[0].lo, 1);
	ck_assert_int_eq(r[0].hi, 3);
	ck_assert_int_eq(r[1].lo, 5);
	ck_assert_int_eq(r[1].hi, 5);
	ck_assert_int_eq(r[2].lo, 7);
	ck_assert_int_eq(r[2].hi, 9);
	ck_assert_int_eq(r[3].lo, 4000000000ull);
	free(r);

	ldb_failure_row *f = NULL;
	ck_assert_int_eq(ldb_query_failures(db, "a", &f, &n, &err), 0);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(f[0].signature, "s1");
	ck_assert_int_eq(f[0].hits, 3);
	ck_assert_int_eq(f[0].seed, 2);
	ck_assert_str_eq(f[0].message, "msg 2");
	ck_assert_str_eq(f[0].repro, "repro 2");
	ck_assert_str_eq(f[0].kind, "mismatch");
	ck_assert_str_eq(f[1].signature, "s2");
	ck_assert_int_eq(f[1].hits, 1);
	ldb_failure_rows_free(f, n);
	ck_assert_int_eq(ldb_query_failures(db, NULL, &f, &n, &err), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(f[2].campaign, "b");
	ldb_failure_rows_free(f, n);

	ldb_campaign_row *c = NULL;
	ck_assert_int_eq(ldb_query_campaigns(db, NULL, &c, &n, &err), 0);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(c[0].c.name, "a");
	ck_assert_int_eq(c[0].cases, 8);
	ck_assert_int_eq(c[0].seeds, 8);
	ck_assert_int_eq(c[0].passed, 4);
	ck_assert_int_eq(c[0].failed, 4);
	ck_assert_int_eq(c[0].signatures, 2);
	ck_assert_int_eq(c[1].cases, 1);
	ldb_campaign_rows_free(c, n);
	/* a deleted run takes its case with it */
	ck_assert_int_eq(sqlite3_exec(ldb_sqlite(db), "DELETE FROM runs WHERE "
				      "seed = 5", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ldb_campaign_seeds(db, "a", &r, &n, &total, &err), 0);
	ck_assert_int_eq(total, 7);
	free(r);
	ldb_close(db);

	/* the CLI lists them */
	tu_run t = tu_lncsim(NULL, "db", "failures", "--db", path, NULL);
	ck_assert_msg(t.status == 0, "%s", t.err);
	ck_assert_contains(t.out, "campaign a  (cores=2-2 size=small "
			   "schedules=0 skip=, seeds 1..100; lncsim ");
	ck_assert_contains(t.out, "  7 cases (7 seeds): 4 passed, 3 failed, "
			   "0 errors; 2 signatures\n");
	ck_assert_contains(t.out, "         3           2  s1\n      msg 2\n"
			   "      repro: repro 2\n");
	ck_assert_contains(t.out, "campaign b  (cores=1-4 size=large "
			   "schedules=2 skip=verify, seeds 7..;");
	tu_run_free(&t);
	t = tu_lncsim(NULL, "db", "failures", "--db", path, "--campaign", "b",
		      NULL);
	ck_assert_int_eq(t.status, 0);
	ck_assert_msg(!strstr(t.out, "campaign a"), "%s", t.out);
	tu_run_free(&t);
	t = tu_lncsim(NULL, "db", "failures", "--db", path, "--campaign", "zz",
		      NULL);
	ck_assert_int_eq(t.status, 2);
	ck_assert_contains(t.err, "camp.db: no campaign zz");
	tu_run_free(&t);
	free(path);
	free(d);
}
END_TEST

/*
** Merging campaign shards: a campaign in both keeps one row, the cases
** follow their runs, each signature keeps the smallest seed of both
** with its hits recounted; twice adds nothing; a shard whose campaign of
** the same name has other generator options is refused, OUT unchanged.
*/
START_TEST(test_merge_campaigns)
{
	char *d = tu_tmpdir("db");
	char *pa = lm_path_join(d, "a.db"), *pb = lm_path_join(d, "b.db");
	char *pc = lm_path_join(d, "c.db"), *po = lm_path_join(d, "o.db");
	ldb *a = NULL, *b = NULL, *c = NULL, *o = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&a, pa, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_open(&b, pb, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_open(&c, pc, LDB_CREATE, &err), 0);
	add_campaign(a, "n", opts2, 1, 10);
	add_campaign(b, "n", opts2, 1, 10);
	add_campaign(b, "only-b", opts2, 1, 3);
	add_campaign(c, "n", "cores=3-3 size=small schedules=0 skip=", 1, 10);
	for (uint64_t s = 1; s <= 5; s++)
		log_fuzz_case(a, "n", s, s % 2 ? "odd" : "", "a");
	for (uint64_t s = 6; s <= 10; s++)
		log_fuzz_case(b, "n", s, s % 2 ? "odd" : "even", "b");
	log_fuzz_case(b, "only-b", 1, "", "");
	log_fuzz_case(c, "n", 1, "x", "c");
	ldb_close(a);
	ldb_close(b);
	ldb_close(c);
	ck_assert_int_eq(ldb_open(&o, po, LDB_CREATE, &err), 0);
	ldb_merge_stats st = {0};
	ck_assert_msg(ldb_merge(o, pa, &st, &err) == 0, "%s", err.msg);
	ck_assert_msg(ldb_merge(o, pb, &st, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(st.campaigns, 2);
	ck_assert_int_eq(st.cases, 11);
	char *d1 = dump(po);
	ck_assert_int_eq(sql_int(po, "SELECT count(*) FROM campaigns"), 2);
	ck_assert_int_eq(sql_int(po, "SELECT count(DISTINCT seed) FROM cases "
				 "WHERE campaign = 'n'"), 10);
	ck_assert_int_eq(sql_int(po, "SELECT hits FROM failures WHERE "
				 "signature = 'odd'"), 5);
	ck_assert_int_eq(sql_int(po, "SELECT seed FROM failures WHERE "
				 "signature = 'odd'"), 1);
	char *m = sql_text(po, "SELECT message FROM failures WHERE signature "
			   "= 'odd'");
	ck_assert_str_eq(m, "a");
	free(m);
	ck_assert_int_eq(sql_int(po, "SELECT hits FROM failures WHERE "
				 "signature = 'even'"), 3);
	ck_assert_int_eq(sql_int(po, "SELECT seed FROM failures WHERE "
				 "signature = 'even'"), 6);
	/* b into o before a would give the same */
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(ldb_merge(o, pb, &st, &err), 0);
	ck_assert_int_eq(ldb_merge(o, pa, &st, &err), 0);
	ck_assert_int_eq(st.runs, 0);
	ck_assert_int_eq(st.cases, 0);
	char *d2 = dump(po);
	ck_assert_dump_eq(d2, d1);
	/* the same name, other options: refused, nothing changes */
	ck_assert_int_eq(ldb_merge(o, pc, &st, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "campaign n: generator options differ");
	ck_assert_contains(err.msg, "cores=3-3");
	ldb_close(o);
	char *d3 = dump(po);
	ck_assert_dump_eq(d3, d1);
	tu_run r = tu_lncsim(NULL, "db", "merge", po, pc, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "campaign n: generator options differ");
	tu_run_free(&r);
	char *pn = lm_path_join(d, "new.db");
	r = tu_lncsim(NULL, "db", "merge", pn, pa, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "; 5 fuzz cases, 1 new campaign\n");
	tu_run_free(&r);
	free(pn);
	free(d3);
	free(d2);
	free(d1);
	free(po);
	free(pc);
	free(pb);
	free(pa);
	free(d);
}
END_TEST

/* ---- the CLI --------------------------------------------------------- */

START_TEST(test_cli_runs)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "cli.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	log_run(db, 2, 2, 100, 1, "pass");
	log_run(db, 1, 1, 10, 2, "fail");
	ldb_close(db);

	tu_run r = tu_lncsim(NULL, "db", "runs", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "ID  STARTED (UTC)");
	ck_assert_contains(r.out, "\n    1  ");
	ck_assert_contains(r.out, "pass");
	ck_assert_contains(r.out, "fail");
	ck_assert_contains(r.out, "-- boom");
	ck_assert_contains(r.out, "examples/handoff2/nc0/sg0/def.json,nc1");
	tu_run_free(&r);

	r = tu_lncsim(NULL, "db", "runs", "--db=" , NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--db needs a FILE");
	tu_run_free(&r);

	/* --last, and LNCSIM_DB instead of --db */
	setenv("LNCSIM_DB", path, 1);
	r = tu_lncsim(d, "db", "runs", "--last", "1", NULL);
	unsetenv("LNCSIM_DB");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\n    1  ") == NULL, "%s", r.out);
	ck_assert_contains(r.out, "\n    2  ");
	tu_run_free(&r);

	/* default ./lncsim.db: absent in d's subdirectory */
	char *sub = lm_path_join(d, "sub");
	lm_mkdirs(sub, &err);
	r = tu_lncsim(sub, "db", "runs", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: lncsim.db: no such database");
	tu_run_free(&r);

	static const struct { const char *a[6], *msg; } bad[] = {
		{ { "db", NULL }, "need a subcommand" },
		{ { "db", "frob", NULL }, "unknown subcommand 'frob'" },
		{ { "db", "runs", "--last", "0", NULL }, "--last needs a "
		  "positive number" },
		{ { "db", "runs", "--last", NULL }, "--last needs a positive" },
		{ { "db", "runs", "--no-db", NULL }, "--no-db" },
		{ { "db", "runs", "extra", NULL }, "unknown argument 'extra'" },
		{ { "db", "merge", "x.db", NULL }, "need OUT.db and at least" },
		{ { "db", "merge", "x.db", "--bad", NULL }, "unknown option" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		r = tu_lncsimv(sub, bad[i].a);
		ck_assert_int_eq(r.status, 2);
		ck_assert_contains(r.err, bad[i].msg);
		tu_run_free(&r);
	}
	r = tu_lncsim(NULL, "db", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "usage: lncsim db runs");
	tu_run_free(&r);
	free(sub);
	free(path);
	free(d);
}
END_TEST

/* ---- end to end: `lncsim run` logs what --stats prints ----------------- */

START_TEST(test_run_logs_stats)
{
	char *d = tu_tmpdir("db");
	char *ex0 = tu_srcpath("examples/matmul1");
	char *ex = realpath(ex0, NULL); /* the runs below change directory */
	free(ex0);
	ck_assert_ptr_nonnull(ex);
	char *path = lm_path_join(d, "e2e.db");
	tu_run r = tu_lncsim(d, "run", "--stats", "--db", path, "--seed", "3",
			     ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	/* "simulated time X us (N ps), I instructions, M matmuls" */
	const char *p = strstr(r.out, "simulated time ");
	ck_assert_ptr_nonnull(p);
	p = strchr(p, '(');
	long long ps = 0, instrs = 0;
	int n_mm = 0;
	ck_assert_int_eq(sscanf(p, "(%lld ps), %lld instructions, %d matmuls",
				&ps, &instrs, &n_mm), 3);
	ck_assert_int_gt(n_mm, 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs WHERE status "
				 "= 'pass' AND seed = 3 AND cores = 1"), 1);
	ck_assert_int_eq(sql_int(path, "SELECT sim_time_ps FROM executions "
				 "WHERE mode = 'single'"), ps);
	ck_assert_int_eq(sql_int(path, "SELECT instructions FROM executions"),
			 instrs);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM matmuls"), n_mm);
	/* the core line of the table */
	p = strstr(r.out, "end_us\n");
	ck_assert_ptr_nonnull(p);
	p += 7;
	int core = -1;
	long long ci = 0, cm = 0, macs = 0, dma = 0;
	double pe, mac, busy[5], barr, sem, end;
	ck_assert_int_eq(sscanf(p, "%d %lld %lld %lld %lf %lf %lf %lf %lf %lf "
				"%lf %lld %lf %lf %lf", &core, &ci, &cm, &macs,
				&pe, &mac, &busy[0], &busy[1], &busy[2],
				&busy[3], &busy[4], &dma, &barr, &sem, &end), 15);
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM core_stats WHERE "
		 "core = %d AND instructions = %lld AND matmuls = %lld AND "
		 "macs = %lld AND dma_bytes = %lld", core, ci, cm, macs, dma);
	ck_assert_int_eq(sql_int(path, sql), 1);
	static const char *const cols[] = { "busy_pe_ps", "busy_act_ps",
		"busy_dve_ps", "busy_pool_ps", "busy_sp_ps" };
	for (int e = 0; e < 5; e++) {
		snprintf(sql, sizeof sql, "SELECT %s FROM core_stats", cols[e]);
		ck_assert_double_eq_tol((double)sql_int(path, sql) / 1e6,
					busy[e], 0.0006);
	}
	ck_assert_double_eq_tol((double)sql_int(path, "SELECT barrier_wait_ps "
				"FROM core_stats") / 1e6, barr, 0.0006);
	ck_assert_double_eq_tol((double)sql_int(path, "SELECT "
				"semaphore_wait_ps FROM core_stats") / 1e6,
				sem, 0.0006);
	ck_assert_double_eq_tol((double)sql_int(path, "SELECT end_ps FROM "
				"core_stats") / 1e6, end, 0.0006);
	/* the database keeps fractions, --stats prints percent */
	ck_assert_double_eq_tol((double)sql_int(path, "SELECT "
				"CAST(pe_util * 1e6 AS INTEGER) FROM "
				"core_stats") / 1e4, pe, 0.051);
	ck_assert_double_eq_tol((double)sql_int(path, "SELECT "
				"CAST(mac_util * 1e7 AS INTEGER) FROM "
				"core_stats") / 1e5, mac, 0.0051);
	ck_assert_int_eq(sql_int(path, "SELECT sum(k * m * n) FROM matmuls"),
			 macs);
	tu_run_free(&r);

	/* a runtime error is logged as an error run with its message */
	r = tu_lncsim(d, "run", "--db", path, "--max-time", "1000", ex, NULL);
	ck_assert_int_eq(r.status, 1);
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs WHERE status "
				 "= 'error' AND message LIKE '%max-time%'"), 1);

	/* default ./lncsim.db (in d), LNCSIM_DB, --no-db; the suite's own
	** LNCSIM_DB (tu_main) is put back at the end */
	char *suite_db = getenv("LNCSIM_DB") ? lm_xstrdup(getenv("LNCSIM_DB"))
					      : NULL;
	unsetenv("LNCSIM_DB");
	r = tu_lncsim(d, "run", ex, NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	char *def = lm_path_join(d, "lncsim.db");
	ck_assert_int_eq(sql_int(def, "SELECT count(*) FROM runs"), 1);
	setenv("LNCSIM_DB", path, 1);
	r = tu_lncsim(d, "run", ex, NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	r = tu_lncsim(d, "run", "--no-db", ex, NULL);
	unsetenv("LNCSIM_DB");
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 3);
	ck_assert_int_eq(sql_int(def, "SELECT count(*) FROM runs"), 1);
	char *sub = lm_path_join(d, "fresh");
	lm_error err;
	lm_mkdirs(sub, &err);
	r = tu_lncsim(sub, "run", "--no-db", ex, NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	char *fresh_db = lm_path_join(sub, "lncsim.db");
	ck_assert_int_eq(access(fresh_db, F_OK), -1);
	/* option and database errors */
	r = tu_lncsim(sub, "run", ex, "--db", NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	r = tu_lncsim(sub, "run", "--db", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--db needs a FILE");
	tu_run_free(&r);
	char *junk = tu_write(d, "junk.db", "definitely not sqlite\n");
	r = tu_lncsim(sub, "run", "--db", junk, ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "junk.db: not an lncsim database");
	ck_assert_contains(r.err, "--no-db");
	tu_run_free(&r);
	free(junk);
	if (suite_db)
		setenv("LNCSIM_DB", suite_db, 1);
	free(suite_db);
	free(fresh_db);
	free(sub);
	free(def);
	free(path);
	free(ex);
	free(d);
}
END_TEST

/* ---- a run log that cannot be written, read-only, damaged ------------ */

/* The size of a file (-1: none). */
static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/*
** Leave committed frames in the WAL of path until it is at least bytes
** long: lncsim's connections fold their log in at close, a plain one
** with SQLite's checkpoints off (at commit and at close) does not.
*/
static void leave_wal(const char *path, long long bytes)
{
	char *wal = lm_xasprintf("%s-wal", path);
	sqlite3 *h = NULL;
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_db_config(h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
					   1, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "PRAGMA wal_autocheckpoint = 0",
				      NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; file_size(wal) < bytes; i++) {
		ck_assert_int_lt(i, 100000);
		/* two commits that leave the schema as it was */
		ck_assert_int_eq(sqlite3_exec(h, "CREATE TABLE leave_wal(x); "
					      "DROP TABLE leave_wal", NULL,
					      NULL, NULL), SQLITE_OK);
	}
	sqlite3_close(h);
	free(wal);
}

/* `lncsim ARGS` with options; NULL-terminated. */
static tu_run lncsim_opts(const tu_opts *o, const char *cwd, ...)
{
	const char *argv[32];
	int n = 0;
	va_list ap;
	va_start(ap, cwd);
	for (const char *a; n < 31 && (a = va_arg(ap, const char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return tu_lncsimo(o, cwd, argv);
}

/*
** A full disk, for real: RLIMIT_FSIZE at the current size of the
** database's WAL, left at 512 KiB of committed frames (every write of a
** run appends frames to it, and lncsim's connections do not checkpoint
** it away before a commit while it is shorter than the checkpoint
** threshold). Each command that logs must say the run was not logged and
** exit non-zero; `fuzz` used to exit 0 and drop the rows. (Its campaign
** is made before the disk fills: a campaign that cannot be added stops
** fuzz before any case, which is tested too.)
*/
START_TEST(test_log_failure_reported)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "full.db");
	char *wal = lm_path_join(d, "full.db-wal");
	lm_error err;
	ldb *db = NULL;
	ck_assert_msg(ldb_open(&db, path, LDB_CREATE, &err) == 0, "%s", err.msg);
	for (int i = 0; i < 8; i++)
		log_run(db, 2, 2, 2000, i, "pass");
	ldb_close(db);
	tu_run r = tu_lncsim(d, "fuzz", "--count", "1", "--jobs", "1", "-q",
			     "--db", path, "--campaign", "full", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	leave_wal(path, 512 * 1024);
	long long w = file_size(wal);
	/* no checkpoint yet */
	ck_assert_int_ge(w, 512 * 1024);
	ck_assert_int_lt(w, (long long)LDB_CKPT_FRAMES * 4096);
	/* counted through lncsim's own connection: a plain one closing last
	** would checkpoint the WAL away */
	int64_t runs = 0;
	{
		sqlite3_stmt *st = NULL;
		ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
		ck_assert_int_eq(sqlite3_prepare_v2(ldb_sqlite(db), "SELECT "
						    "count(*) FROM runs", -1,
						    &st, NULL), SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		runs = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		ldb_close(db);
	}
	ck_assert_int_gt(runs, 0);
	ck_assert_int_eq(file_size(wal), w);

	tu_opts full = TU_OPTS_INIT;
	full.fsize_limit = w;
	char *ex = tu_srcpath("examples/handoff2");

	/* the campaign goes on: its cases' batch cannot be committed */
	r = lncsim_opts(&full, d, "fuzz", "--count", "3", "--jobs", "1", "-q",
			"--db", path, "--resume", "--campaign", "full", NULL);
	ck_assert_msg(r.status == 2, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.err, "lncsim: fuzz: seed 2: ");
	ck_assert_contains(r.err, "full.db: ");
	ck_assert_contains(r.err, "(run not logged)");
	ck_assert_contains(r.out, "fuzz: 1 seed already recorded in campaign "
			   "full: skipped");
	ck_assert_contains(r.out, " not logged into ");
	ck_assert_contains(r.out, "stopped launching cases");
	tu_run_free(&r);
	/* a new campaign cannot even be added: nothing runs */
	r = lncsim_opts(&full, d, "fuzz", "--count", "3", "--jobs", "1", "-q",
			"--db", path, NULL);
	ck_assert_msg(r.status == 2, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.err, "full.db: adding a campaign: ");
	ck_assert_contains(r.err, "(campaign not logged)");
	ck_assert_msg(r.out[0] == 0, "ran: %s", r.out);
	tu_run_free(&r);

	r = lncsim_opts(&full, d, "run", "--db", path, ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "full.db: ");
	ck_assert_contains(r.err, "(run not logged)");
	tu_run_free(&r);

	r = lncsim_opts(&full, d, "diff", "--db", path, ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: ");
	ck_assert_contains(r.err, "full.db: ");
	tu_run_free(&r);

	char *shard = lm_path_join(d, "shard.db");
	ck_assert_int_eq(ldb_open(&db, shard, LDB_CREATE, &err), 0);
	log_run(db, 1, 1, 10, 99, "pass");
	ldb_close(db);
	r = lncsim_opts(&full, d, "db", "merge", path, shard, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "full.db: ");
	tu_run_free(&r);

	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), runs);
	/* with room again, fuzz logs every case and its summary */
	r = tu_lncsim(d, "fuzz", "--count", "3", "--jobs", "2", "-q", "--db",
		      path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), runs + 4);
	free(shard);
	free(ex);
	free(wal);
	free(path);
	free(d);
}
END_TEST

/*
** A read-only database: every command that logs refuses it before
** simulating; `db runs` reads it, in a read-only directory too, with and
** without its -wal/-shm files. As root (which writes read-only files) the
** commands run as nobody.
*/
START_TEST(test_read_only_database)
{
	if (!tu_can_drop_root()) {
		fprintf(stderr, "# skipped: no user nobody to drop root to\n");
		return;
	}
	char *d = tu_tmpdir("dbro");
	char *root = lm_dirname(d);
	ck_assert_int_eq(chmod(root, 0755), 0);
	char *path = lm_path_join(d, "ro.db");
	char *ex = tu_srcpath("examples/matmul1");
	char *ex2 = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(d, "run", "--db", path, ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	ck_assert_int_eq(chmod(path, 0444), 0);
	ck_assert_int_eq(chmod(d, 0555), 0);

	tu_opts ro = TU_OPTS_INIT;
	ro.unprivileged = 1;
	r = lncsim_opts(&ro, d, "db", "runs", "--db", path, NULL);
	if (r.status == 125) {
		fprintf(stderr, "# skipped: cannot run lncsim as nobody here\n");
		tu_run_free(&r);
		goto done;
	}
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "\n    1  ");
	tu_run_free(&r);

	const char *cmds[][10] = {
		{ "run", "--stats", "--db", path, ex, NULL },
		{ "diff", "--db", path, ex2, NULL },
		{ "fuzz", "--count", "2", "-q", "--db", path, NULL },
	};
	for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
		const char *const *argv = cmds[c];
		r = tu_lncsimo(&ro, d, argv);
		ck_assert_msg(r.status == 2, "%s: %d %s", argv[0], r.status,
			      r.err);
		ck_assert_contains(r.err, "ro.db: database is read-only");
		ck_assert_contains(r.err, "--no-db");
		/* refused before anything ran */
		ck_assert_msg(r.out[0] == 0, "%s printed: %s", argv[0], r.out);
		tu_run_free(&r);
	}

	/* a -wal with frames but no -shm, none can be made: refused, not
	** read without the newest runs (lncsim leaves its log empty) */
	char *wal = lm_xasprintf("%s-wal", path), *shm = lm_xasprintf("%s-shm",
								       path);
	ck_assert_int_eq(file_size(wal), 0);
	ck_assert_int_eq(chmod(d, 0755), 0);
	ck_assert_int_eq(chmod(path, 0644), 0);
	leave_wal(path, 1);
	ck_assert_int_eq(chmod(path, 0444), 0);
	ck_assert_int_eq(chmod(d, 0555), 0);
	ck_assert_int_gt(file_size(wal), 0);
	ck_assert_int_eq(unlink(shm), 0);
	r = lncsim_opts(&ro, d, "db", "runs", "--db", path, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "ro.db: cannot read: its -wal file holds "
			   "runs but it has no -shm file");
	tu_run_free(&r);

	/* no -wal/-shm left (a plain SQLite connection closing last
	** checkpoints and removes them): db runs reads it immutable */
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 1);
	ck_assert_int_eq(access(wal, F_OK), -1);
	ck_assert_int_eq(access(shm, F_OK), -1);
	r = lncsim_opts(&ro, d, "db", "runs", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "\n    1  ");
	tu_run_free(&r);
	ck_assert_int_eq(access(shm, F_OK), -1);
	r = lncsim_opts(&ro, d, "db", "check", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "ro.db: ok");
	tu_run_free(&r);
	/* a shard that is only read can be merged */
	char *outdir = lm_path_join(root, "dbro-out");
	ck_assert_int_eq(mkdir(outdir, 0777), 0);
	ck_assert_int_eq(chmod(outdir, 0777), 0);
	char *out = lm_path_join(outdir, "out.db");
	r = lncsim_opts(&ro, d, "db", "merge", out, path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "1 run merged");
	tu_run_free(&r);
	free(out);
	free(outdir);
	free(wal);
	free(shm);
done:
	chmod(d, 0755);
	free(ex2);
	free(ex);
	free(path);
	free(root);
	free(d);
}
END_TEST

/* Overwrite n bytes at page pgno (1-based) + off of a database file. */
static void damage(const char *path, int64_t pgno, int off, int n)
{
	int64_t psz = sql_int(path, "PRAGMA page_size");
	FILE *f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, (long)((pgno - 1) * psz + off), SEEK_SET), 0);
	for (int i = 0; i < n; i++)
		fputc(0xa5, f);
	fclose(f);
}

/*
** A damaged page where the next run is appended: refused at open, before
** simulating, with a clear message. A damaged page elsewhere is not read
** when a run is appended: `db check` finds it.
*/
START_TEST(test_corrupt_database)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "bad.db");
	lm_error err;
	ldb *db = NULL;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	for (int i = 0; i < 3; i++)
		log_run(db, 2, 2, 3000, i, "pass");
	ldb_close(db);
	/* into the main file, -wal and -shm removed */
	sql_int(path, "PRAGMA wal_checkpoint(TRUNCATE)");
	tu_run r = tu_lncsim(d, "db", "check", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "bad.db: ok");
	tu_run_free(&r);

	/* a matmuls leaf page in the middle: not on the path of an append */
	int64_t mid = 0;
	{
		sqlite3 *h = NULL;
		sqlite3_stmt *st = NULL;
		ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
		if (sqlite3_prepare_v2(h, "SELECT pageno FROM dbstat WHERE name = "
				       "'matmuls' AND pagetype = 'leaf' ORDER BY "
				       "pageno LIMIT 1 OFFSET 3", -1, &st,
				       NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			mid = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(h);
	}
	if (mid > 0) {
		damage(path, mid, 0, 12); /* the page header */
		r = tu_lncsim(d, "db", "check", "--db", path, NULL);
		ck_assert_int_eq(r.status, 1);
		ck_assert_contains(r.out, "bad.db: damaged (PRAGMA "
				   "integrity_check):\n");
		tu_run_free(&r);
	} else
		fprintf(stderr, "# no dbstat: the middle page is not damaged\n");

	/* the root page of runs, which every run is added to */
	int64_t root = sql_int(path, "SELECT rootpage FROM sqlite_schema "
			       "WHERE name = 'runs'");
	damage(path, root, 0, 12);
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "bad.db: checking the database: database "
			   "is corrupt (database disk image is malformed");
	ck_assert_contains(err.msg, "quick_check: ");
	ck_assert_contains(err.msg, "lncsim does not write to it");
	ck_assert_int_eq(ldb_open(&db, path, LDB_READ, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "database is corrupt");
	char *ex = tu_srcpath("examples/matmul1");
	r = tu_lncsim(d, "run", "--stats", "--db", path, ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: ");
	ck_assert_contains(r.err, "bad.db: checking the database: database is "
			   "corrupt");
	ck_assert_msg(r.out[0] == 0, "simulated: %s", r.out);
	tu_run_free(&r);
	r = tu_lncsim(d, "db", "check", "--db", path, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "bad.db: damaged");
	tu_run_free(&r);
	free(ex);
	free(path);
	free(d);
}
END_TEST

/*
** A damaged page of the campaign tables: an open for a run does not read
** them (nor does a run write them), adding or resuming a campaign refuses
** before any case runs.
*/
START_TEST(test_corrupt_campaigns)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "badc.db");
	lm_error err;
	ldb *db = NULL;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	log_run(db, 2, 2, 30, 1, "pass");
	add_campaign(db, "c1", opts2, 1, 10);
	ldb_close(db);
	sql_int(path, "PRAGMA wal_checkpoint(TRUNCATE)");
	int64_t root = sql_int(path, "SELECT rootpage FROM sqlite_schema "
			       "WHERE name = 'campaigns'");
	damage(path, root, 0, 12);
	ck_assert_msg(ldb_open(&db, path, 0, &err) == 0, "%s", err.msg);
	ldb_campaign c = {0};
	c.name = (char *)"c2";
	c.command = (char *)"lncsim fuzz";
	c.gen_options = (char *)opts2;
	c.first_seed = 1;
	c.count = 1;
	ck_assert_int_eq(ldb_campaign_add(db, &c, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "badc.db: checking the database: database "
			   "is corrupt");
	ck_assert_contains(err.msg, "lncsim does not write to it");
	/* a resumed campaign reads it first: refused the same way */
	int found = 0;
	ldb_campaign k;
	ck_assert_int_eq(ldb_campaign_get(db, "c1", &k, &found, &err),
			 LM_EINPUT);
	ck_assert_int_eq(found, 0);
	ck_assert_contains(err.msg, "badc.db: checking the database: database "
			   "is corrupt");
	ldb_close(db);
	free(path);
	free(d);
}
END_TEST

/*
** A damaged races b-tree: opening for logging does not read it, logging
** the first race probes it and refuses, the run is not kept; a run
** without races still logs; db check finds the damage; db merge of the
** file refuses it.
*/
START_TEST(test_corrupt_races)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "badr.db");
	char *out = lm_path_join(d, "out.db");
	lm_error err;
	ldb *db = NULL;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	race_run(db, "single", 3, 1);
	ldb_close(db);
	tu_run r = tu_lncsim(NULL, "db", "check", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	sql_int(path, "PRAGMA wal_checkpoint(TRUNCATE)");
	int64_t root = sql_int(path, "SELECT rootpage FROM sqlite_schema "
			       "WHERE name = 'races'");
	damage(path, root, 0, 12);
	ck_assert_msg(ldb_open(&db, path, 0, &err) == 0, "%s", err.msg);
	race_run(db, "single", 0, 2);
	race_run(db, "single", -1, 3);
	ldb_run_info info = { .command = "x", .cores = 1 };
	ldb_run *run = NULL;
	race_bufs *b = NULL;
	ldb_race *v = make_races(1, 4, &b);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "single", v, 1, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "badr.db: checking the database: database "
			   "is corrupt");
	ck_assert_int_eq(ldb_run_end(run, "pass", "", 0, NULL, &err),
			 LM_EINPUT);
	free(v);
	free(b);
	ldb_close(db);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 3);
	r = tu_lncsim(NULL, "db", "check", "--db", path, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "damaged (PRAGMA integrity_check)");
	tu_run_free(&r);
	ck_assert_int_eq(ldb_open(&db, out, LDB_CREATE, &err), 0);
	ck_assert_int_eq(ldb_merge(db, path, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "database is corrupt");
	ldb_close(db);
	free(out);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** A command that fails on bad input after the database is open leaves
** exactly one error run with the message: diff with a missing input (the
** check cannot run), diff whose --save-io cannot be written (the check
** ran: its executions stay with the error run), run with a missing input.
*/
START_TEST(test_failed_runs_logged)
{
	char *d = tu_tmpdir("dberr");
	char *path = lm_path_join(d, "err.db");
	char *ex = tu_srcpath("examples/handoff2");
	char *empty = lm_path_join(d, "empty");
	ck_assert_int_eq(mkdir(empty, 0755), 0);

	tu_run r = tu_lncsim(d, "diff", "--db", path, "--inputs", empty, ex,
			     NULL);
	ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
	ck_assert_contains(r.err, "missing input 'a'");
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 1);
	char *t = sql_text(path, "SELECT status || '|' || message FROM runs");
	ck_assert_contains(t, "error|");
	ck_assert_contains(t, "missing input 'a' (no ");
	free(t);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM executions"), 0);

	/* --save-io into a regular file */
	free(tu_write(d, "io", "not a directory\n"));
	r = tu_lncsim(d, "diff", "--db", path, "--save-io", "io", ex, NULL);
	ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
	ck_assert_contains(r.err, "lncsim: io: ");
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs WHERE id = "
				 "(SELECT max(id) FROM runs) AND status = "
				 "'error' AND message LIKE 'io: %'"), 1);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM executions WHERE "
				 "run_id = (SELECT max(id) FROM runs)"), 2);

	r = tu_lncsim(d, "run", "--db", path, "--inputs", empty, ex, NULL);
	ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
	ck_assert_contains(r.err, "missing input 'a'");
	tu_run_free(&r);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs"), 3);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM runs WHERE id = "
				 "(SELECT max(id) FROM runs) AND status = "
				 "'error' AND message LIKE '%missing input ''a''%'"),
			 1);
	tu_rmtree(d);
	free(empty);
	free(ex);
	free(path);
	free(d);
}
END_TEST

/* How many of the tables made on first use the file at path has. */
static int64_t lazy_tables(const char *path)
{
	return sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name "
		       "IN ('races', 'kernels', 'kernel_engines', "
		       "'kernel_queues', 'campaigns', 'cases', 'failures')");
}

/*
** A run of one execution without kernel calls, with n races (-1: not
** checked).
*/
static int64_t plain_run(ldb *db, int n, int tag)
{
	lm_error err;
	ldb_run_info info = { .command = "lncsim diff x", .module = "x",
			      .arch = "trn2", .cores = 2 };
	ldb_run *run = NULL;
	ck_assert_msg(ldb_run_begin(db, &info, &run, &err) == 0, "%s", err.msg);
	ls_result r = make_result(2, 3, tag);
	ls_kernel_stats *k = r.kernels;
	int nk = r.n_kernels;
	r.kernels = NULL;
	r.n_kernels = 0;
	ck_assert_int_eq(ldb_log_execution(run, "single", &r, &err), 0);
	r.kernels = k;
	r.n_kernels = nk;
	ls_result_free(&r);
	race_bufs *b = NULL;
	ldb_race *v = n >= 0 ? make_races(n, tag, &b) : NULL;
	if (n >= 0)
		ck_assert_msg(ldb_log_races(run, "single", v, n, &err) == 0,
			      "%s", err.msg);
	free(v);
	free(b);
	int64_t id = 0;
	ck_assert_msg(ldb_run_end(run, "pass", "", 0.1, &id, &err) == 0, "%s",
		      err.msg);
	return id;
}

/*
** The tables only some runs write are made when first written: a file
** of plain runs has none and reads as if they were empty (queries on the
** writer, the db commands, a report); a run that made one and was rolled
** back takes it with it, and the next run makes it again (alone and
** inside a batch); a version-6 file keeps the groups it wrote and loses
** the empty ones; a file holding part of a group is refused by name;
** merging carries a group only when the shard has it.
*/
START_TEST(test_tables_on_first_use)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "lazy.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	int64_t plain = plain_run(db, -1, 1);
	ck_assert_int_eq(lazy_tables(path), 0);
	ck_assert_int_eq(race_count(db, plain), -1);
	check_races(db, plain, "single", 0, 1);
	ldb_failure_row *fr = NULL;
	int n = -1;
	ck_assert_int_eq(ldb_query_failures(db, NULL, &fr, &n, &err), 0);
	ck_assert_int_eq(n, 0);
	ldb_failure_rows_free(fr, n);
	ldb_run_row *rr = NULL;
	ck_assert_int_eq(ldb_query_runs(db, 0, &rr, &n, &err), 0);
	ck_assert_int_eq(n, 1);
	ldb_run_rows_free(rr, n);
	ck_assert_int_eq(lazy_tables(path), 0);  /* reading made nothing */

	/* made in the run's transaction, gone with it, made again */
	ldb_run_info info = { .command = "x", .cores = 1 };
	ldb_run *run = NULL;
	race_bufs *b = NULL;
	ldb_race *v = make_races(2, 5, &b);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "single", v, 2, &err), 0);
	ldb_run_abort(run);
	ck_assert_int_eq(lazy_tables(path), 0);
	int64_t clean = plain_run(db, 0, 2);
	ck_assert_int_eq(race_count(db, clean), 0);
	ck_assert_int_eq(lazy_tables(path), 0);
	int64_t racy = plain_run(db, 3, 6);
	check_races(db, racy, "single", 3, 6);
	ck_assert_int_eq(lazy_tables(path), 1);
	/* in a batch: a run's savepoint takes the table it made */
	ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
	log_run(db, 1, 1, 1, 3, "pass");  /* with kernels: makes them */
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "single", v, 2, &err), 0);
	ldb_run_abort(run);
	ck_assert_int_eq(ldb_batch_commit(db, &err), 0);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM kernels"), 2);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM races"), 3);
	ck_assert_int_eq(ldb_batch_begin(db, &err), 0);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ck_assert_int_eq(ldb_log_races(run, "single", v, 2, &err), 0);
	ldb_run_abort(run);
	ldb_batch_abort(db);
	ldb_close(db);
	free(v);
	free(b);
	/* the db commands and a reader see empty campaign tables */
	tu_run r = tu_lncsim(NULL, "db", "failures", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "3 races in 2 runs checked");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "runs", "--db", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	ck_assert_int_eq(lazy_tables(path), 4);

	/* merging: a shard without a group adds none, one with it does */
	char *out = lm_path_join(d, "out.db"), *bare = lm_path_join(d, "b.db");
	ck_assert_int_eq(ldb_open(&db, bare, LDB_CREATE, &err), 0);
	plain_run(db, -1, 7);
	ldb_close(db);
	ck_assert_int_eq(ldb_open(&db, out, LDB_CREATE, &err), 0);
	ck_assert_msg(ldb_merge(db, bare, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(lazy_tables(out), 0);
	ck_assert_msg(ldb_merge(db, path, NULL, &err) == 0, "%s", err.msg);
	ldb_close(db);
	ck_assert_int_eq(lazy_tables(out), 4);
	ck_assert_int_eq(sql_int(out, "SELECT count(*) FROM races"), 3);
	ck_assert_int_eq(sql_int(out, "SELECT count(*) FROM runs"), 5);

	/* part of a group: refused by name, by a reader and a writer */
	sql_exec(path, "DROP TABLE kernel_engines");
	ck_assert_int_eq(ldb_open(&db, path, LDB_READ, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "lazy.db: not an lncsim database: table "
			   "kernel_engines is missing");
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
	ls_result res = make_result(1, 1, 3);
	ck_assert_int_eq(ldb_log_execution(run, "single", &res, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "table kernel_engines is missing");
	ls_result_free(&res);
	ldb_run_abort(run);
	ldb_close(db);

	/* a version-6 file: the groups it wrote stay, the empty ones go */
	char *v6 = lm_path_join(d, "v6.db");
	lm_buf up = LM_BUF_INIT;
	lm_buf_puts(&up, v1_schema);
	for (int i = 1; i < 6; i++)
		lm_buf_puts(&up, ldb_migrations[i]);
	lm_buf_puts(&up, "INSERT INTO races VALUES (1, 0, 'single', 'RAW', "
		    "'SBUF', 0, '', 0, 4, 'f', 'b', 'i', '', 0, 'PE', 'f', "
		    "'b', 'j', '', 0, 'ACT', ''); UPDATE runs SET races = 1 "
		    "WHERE id = 1; PRAGMA user_version = 6;");
	lm_buf_put(&up, "", 0);
	sql_exec(v6, up.ptr);
	lm_buf_free(&up);
	ck_assert_int_eq(lazy_tables(v6), 6);
	ck_assert_int_eq(ldb_open(&db, v6, 0, &err), 0);
	ldb_close(db);
	ck_assert_int_eq(sql_int(v6, "PRAGMA user_version"), LDB_SCHEMA_VERSION);
	ck_assert_int_eq(lazy_tables(v6), 1);
	ck_assert_int_eq(sql_int(v6, "SELECT count(*) FROM races"), 1);
	ck_assert_int_eq(sql_int(v6, "SELECT count(*) FROM runs"), 2);
	free(v6);
	free(out);
	free(bare);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** A connection that read a file without a group (its TEMP tables in
** place of the group) after another connection made the group: what it
** writes goes to the file, and it reads what the other wrote.
*/
START_TEST(test_group_made_elsewhere)
{
	char *d = tu_tmpdir("db");
	char *path = lm_path_join(d, "elsewhere.db");
	ldb *a = NULL, *b = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&a, path, LDB_CREATE, &err), 0);
	plain_run(a, -1, 1);
	ck_assert_msg(ldb_readable(a, &err) == 0, "%s", err.msg);
	/* another process makes the groups */
	ck_assert_int_eq(ldb_open(&b, path, 0, &err), 0);
	int64_t by_b = plain_run(b, 2, 2);
	ldb_campaign kb = { .name = "by-b", .gen_options = "o",
			    .first_seed = 1, .count = 5 };
	ck_assert_msg(ldb_campaign_add(b, &kb, &err) == 0, "%s", err.msg);
	ldb_close(b);
	/* a's campaign reaches the file */
	ldb_campaign ka = { .name = "by-a", .gen_options = "o",
			    .first_seed = 1, .count = 5 };
	ck_assert_msg(ldb_campaign_add(a, &ka, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM campaigns"), 2);
	/* a reads b's races, and logs its own */
	check_races(a, by_b, "single", 2, 2);
	int64_t by_a = plain_run(a, 3, 3);
	ldb_close(a);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM races"), 5);
	ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM races WHERE "
				 "run_id = 3"), by_a == 3 ? 3 : 0);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

static Suite *db_suite(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_open_new);
	tcase_add_test(tc, test_migrate_v1);
	tcase_add_test(tc, test_migrate_v2);
	tcase_add_test(tc, test_newer_refused);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_log_roundtrip);
	tcase_add_test(tc, test_log_errors);
	tcase_add_test(tc, test_concurrent_writers);
	tcase_add_test(tc, test_wal_bounded);
	tcase_add_test(tc, test_wal_checkpoint_blocked);
	tcase_add_test(tc, test_wal_size_limit);
	tcase_add_test(tc, test_killed_writer);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_campaigns);
	tcase_add_test(tc, test_merge_campaigns);
	tcase_add_test(tc, test_cli_runs);
	tcase_add_test(tc, test_run_logs_stats);
	tcase_add_test(tc, test_log_failure_reported);
	tcase_add_test(tc, test_read_only_database);
	tcase_add_test(tc, test_corrupt_database);
	tcase_add_test(tc, test_corrupt_campaigns);
	tcase_add_test(tc, test_failed_runs_logged);
	suite_add_tcase(s, tc);
	tc = tcase_create("races");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_races_roundtrip);
	tcase_add_test(tc, test_migrate_v4);
	tcase_add_test(tc, test_kernels_roundtrip);
	tcase_add_test(tc, test_migrate_v5);
	tcase_add_test(tc, test_merge_races);
	tcase_add_test(tc, test_corrupt_races);
	tcase_add_test(tc, test_tables_on_first_use);
	tcase_add_test(tc, test_group_made_elsewhere);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(db_suite());
}

/*
** bench_db_open.c -- what opening a big run log costs: a ~100 MB database
** is written through the logging API (runs of 20 000 matmul rows each,
** then checkpointed into the main file), and the best of 7 is printed for
** ldb_open for logging and for reading (both include lncsim's corruption
** probe), PRAGMA quick_check and PRAGMA integrity_check. The goal is an
** open check under 5 ms; the full checks show why they are not run at
** every open (docs/database.md, "Damaged databases").
**
** LNCSIM_BENCH_DB_MB overrides the size (default 100), LNCSIM_BENCH_DB a
** path to keep the file at (default: a temporary directory, removed).
*/
#include "common.h"
#include "db.h"
#include "sim.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "bench_db_open: %s: %s\n", what, msg);
	exit(1);
}

/* One run's result: 4 cores, n matmul records. */
static ls_result make_result(int n, int tag)
{
	ls_result r;
	memset(&r, 0, sizeof r);
	r.n_cores = 4;
	r.sim_time_ps = 1000000 + tag;
	r.instructions = 10 * n;
	r.cores = lm_xcalloc(4, sizeof *r.cores);
	for (int i = 0; i < 4; i++) {
		r.cores[i].core = i;
		r.cores[i].matmuls = n / 4;
		r.cores[i].pe_util = 0.5;
		r.cores[i].mac_util = 0.25;
	}
	r.n_matmuls = n;
	r.matmuls = lm_xcalloc((size_t)n, sizeof *r.matmuls);
	for (int j = 0; j < n; j++) {
		ls_matmul_rec *m = &r.matmuls[j];
		m->core = j % 4;
		m->name = lm_xasprintf("matmul_%d_%d", tag, j);
		m->k = 128;
		m->m = 128;
		m->n = 512;
		m->dtype = LM_DT_BFLOAT16;
		m->start_ps = (int64_t)j * 900;
		m->duration_ps = 800;
		m->array_util = 1.0;
	}
	return r;
}

static long long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

/* Best of 7 of one ldb_open + ldb_close, in ms. */
static double time_open(const char *path, int flags)
{
	double best = 1e30;
	for (int i = 0; i < 7; i++) {
		lm_error err;
		ldb *db = NULL;
		double t = now();
		if (ldb_open(&db, path, flags, &err) != 0)
			die("ldb_open", err.msg);
		ldb_close(db);
		t = now() - t;
		if (t < best)
			best = t;
	}
	return best * 1e3;
}

/* Best of n of a pragma on a fresh connection, in ms. */
static double time_pragma(const char *path, const char *sql, int n)
{
	double best = 1e30;
	for (int i = 0; i < n; i++) {
		sqlite3 *h = NULL;
		sqlite3_stmt *st = NULL;
		if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) !=
		    SQLITE_OK)
			die("open", sqlite3_errmsg(h));
		double t = now();
		if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
			die(sql, sqlite3_errmsg(h));
		while (sqlite3_step(st) == SQLITE_ROW)
			;
		sqlite3_finalize(st);
		t = now() - t;
		sqlite3_close(h);
		if (t < best)
			best = t;
	}
	return best * 1e3;
}

int main(void)
{
	const char *mb_env = getenv("LNCSIM_BENCH_DB_MB");
	long long want = (mb_env && atoi(mb_env) > 0 ? atoi(mb_env) : 100) *
			 1024LL * 1024;
	const char *keep = getenv("LNCSIM_BENCH_DB");
	char dir[] = "/tmp/lncsim-bench-dbopen-XXXXXX";
	char *path;
	if (keep && *keep)
		path = lm_xstrdup(keep);
	else {
		if (!mkdtemp(dir))
			die("mkdtemp", dir);
		path = lm_xasprintf("%s/big.db", dir);
	}
	lm_error err;
	ldb *db = NULL;
	if (file_size(path) < want) {
		if (ldb_open(&db, path, LDB_CREATE, &err) != 0)
			die("ldb_open", err.msg);
		char *wal = lm_xasprintf("%s-wal", path);
		/* WAL frames carry headers and reuse pages: aim 10 % higher */
		for (int tag = 0; file_size(path) + file_size(wal) < want + want / 10;
		     tag++) {
			ls_result r = make_result(20000, tag);
			ldb_run_info info = { .command = "lncsim bench", .module =
					      "bench", .arch = "trn2", .cores = 4 };
			ldb_run *run = NULL;
			if (ldb_run_begin(db, &info, &run, &err) != 0 ||
			    ldb_log_execution(run, "single", &r, &err) != 0 ||
			    ldb_run_end(run, "pass", "", 1.0, NULL, &err) != 0)
				die("logging", err.msg);
			ls_result_free(&r);
		}
		free(wal);
		ldb_close(db);
		/* fold the WAL in (a plain connection closing last does) */
		sqlite3 *h = NULL;
		sqlite3_open(path, &h);
		sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
			     NULL);
		sqlite3_close(h);
	}
	printf("database %s: %.1f MB\n", path, file_size(path) / 1048576.0);
	/* warm the page cache, as on a machine that just wrote it */
	time_pragma(path, "PRAGMA quick_check", 1);
	printf("ldb_open + close, for logging (probe included): %8.3f ms\n",
	       time_open(path, 0));
	printf("ldb_open + close, LDB_READ (probe included):    %8.3f ms\n",
	       time_open(path, LDB_READ));
	{
		char *small = lm_xasprintf("%s.small.db", path);
		if (ldb_open(&db, small, LDB_CREATE, &err) != 0)
			die("ldb_open", err.msg);
		ldb_close(db);
		printf("ldb_open + close of a one-page run log:         %8.3f ms\n",
		       time_open(small, 0));
		char *p2 = lm_xasprintf("%s-wal", small), *p3 = lm_xasprintf(
								"%s-shm", small);
		unlink(small);
		unlink(p2);
		unlink(p3);
		free(p2);
		free(p3);
		free(small);
	}
	printf("PRAGMA quick_check:                             %8.1f ms\n",
	       time_pragma(path, "PRAGMA quick_check", 3));
	printf("PRAGMA integrity_check:                         %8.1f ms\n",
	       time_pragma(path, "PRAGMA integrity_check", 3));
	if (!(keep && *keep)) {
		char *p2 = lm_xasprintf("%s-wal", path), *p3 = lm_xasprintf("%s-shm",
									     path);
		unlink(path);
		unlink(p2);
		unlink(p3);
		free(p2);
		free(p3);
		rmdir(dir);
	}
	free(path);
	return 0;
}

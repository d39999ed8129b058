/*
** bench_db.c -- run-log overhead: the wall time of simulating a
** matmul-heavy module (examples/matmul1 with its accumulation group
** repeated to >= 10 000 Matmults) with and without logging the result,
** measured in this one process; goal: logging adds <= 3 %.
**
** Also prints the raw logging rate (matmul rows per second).
** LNCSIM_BENCH_MATMULS overrides the Matmult count (default 12 000).
*/
#include "common.h"
#include "db.h"
#include "module.h"
#include "sim.h"
#include "verify.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process: insensitive to other load on the machine. */
static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const lm_error *err)
{
	fprintf(stderr, "bench_db: %s: %s\n", what, err ? err->msg : "");
	exit(1);
}

/*
** matmul1 with its two-tile accumulation group repeated n/2 times: every
** pair of Matmults accumulates into the same PSUM tile, the activation
** reads the last one.
*/
static lm_module *make_module(int n)
{
	const char *srcdir = getenv("srcdir");
	char *path = lm_xasprintf("%s/examples/matmul1/def.json",
				  srcdir && *srcdir ? srcdir : LNCSIM_SRCDIR);
	char *text = NULL;
	size_t len = 0;
	lm_error err;
	if (lm_read_file(path, &text, &len, &err) != 0)
		die("reading matmul1", &err);
	cJSON *root = cJSON_ParseWithLength(text, len);
	free(text);
	if (!root)
		die("parsing matmul1", NULL);
	cJSON *fn = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "functions"), 0);
	cJSON *blk = cJSON_GetArrayItem(cJSON_GetObjectItem(fn, "blocks"), 0);
	cJSON *insts = cJSON_GetObjectItem(blk, "instructions");
	cJSON *out = cJSON_CreateArray(), *mm[2] = { NULL, NULL }, *it;
	cJSON_ArrayForEach(it, insts) {
		const char *op = cJSON_GetObjectItem(it, "opcode")->valuestring;
		if (!strcmp(op, "Matmult")) {
			mm[mm[0] ? 1 : 0] = it;
			if (!mm[1])
				continue;
			for (int i = 0; i < n; i++) {
				cJSON *c = cJSON_Duplicate(mm[i % 2], 1);
				char name[32];
				snprintf(name, sizeof name, "mm_%d", i);
				cJSON_ReplaceItemInObject(c, "name",
							  cJSON_CreateString(name));
				if (i > 0)
					cJSON_DeleteItemFromObject(c, "wait");
				cJSON_AddItemToArray(out, c);
			}
			continue;
		}
		cJSON *c = cJSON_Duplicate(it, 1);
		if (!strcmp(op, "Activation")) {
			char name[32];
			snprintf(name, sizeof name, "mm_%d", n - 1);
			cJSON *deps = cJSON_CreateArray();
			cJSON_AddItemToArray(deps, cJSON_CreateString(name));
			cJSON_ReplaceItemInObject(c, "dependencies", deps);
		}
		cJSON_AddItemToArray(out, c);
	}
	cJSON_ReplaceItemInObject(blk, "instructions", out);
	char *json = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	lm_module *m = NULL;
	if (lm_module_parse(&m, json, strlen(json), path, &err) != 0 ||
	    lm_verify(m, NULL, &err) != 0)
		die("building the module", &err);
	free(json);
	free(path);
	return m;
}

/*
** Log one run of r; returns the seconds it took. *db NULL: open (and
** close afterwards), as `lncsim run` does; else use the open connection.
*/
static double log_once(ldb *db, const char *dbpath, const ls_result *r)
{
	lm_error err;
	double t0 = now();
	ldb *own = NULL;
	if (!db) {
		if (ldb_open(&own, dbpath, LDB_CREATE, &err) != 0)
			die("open", &err);
		db = own;
	}
	ldb_run_info info = { .command = "bench_db", .module = "matmul-heavy",
			      .arch = "gen3", .cores = r->n_cores };
	ldb_run *run = NULL;
	if (ldb_run_begin(db, &info, &run, &err) != 0 ||
	    ldb_log_execution(run, "single", r, &err) != 0 ||
	    ldb_run_end(run, "pass", NULL, 0, NULL, &err) != 0)
		die("log", &err);
	ldb_close(own);
	return now() - t0;
}

int main(void)
{
	const char *e = getenv("LNCSIM_BENCH_MATMULS");
	int n = e && atoi(e) >= 2 ? atoi(e) & ~1 : 12000;
	lm_module *m = make_module(n);
	lm_error err;
	ls_tensors inputs = {0, NULL};
	if (ls_make_inputs(&m, 1, NULL, 0, &inputs, &err) != 0)
		die("inputs", &err);
	char dir[] = "/tmp/lncsim-bench-db-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	char *dbpath = lm_xasprintf("%s/bench.db", dir);

	/* alternate: run alone, then run + open + log + close (what `lncsim
	** run` does); best of 5 each, wall and CPU time */
	ls_options opts;
	memset(&opts, 0, sizeof opts);
	double best_run = 1e30, best_both = 1e30, best_log = 1e30;
	double cpu_run = 1e30, cpu_log = 1e30;
	int n_mm = 0;
	for (int rep = 0; rep < 5; rep++) {
		ls_result r;
		memset(&r, 0, sizeof r);
		double t0 = now(), c0 = cpu();
		if (ls_run(m, &inputs, &opts, &r, &err) != 0)
			die("run", &err);
		double t_run = now() - t0, c_run = cpu() - c0;
		ls_result_free(&r);
		if (t_run < best_run)
			best_run = t_run;
		if (c_run < cpu_run)
			cpu_run = c_run;

		memset(&r, 0, sizeof r);
		t0 = now();
		if (ls_run(m, &inputs, &opts, &r, &err) != 0)
			die("run", &err);
		double c1 = cpu();
		double t_log = log_once(NULL, dbpath, &r);
		double c_log = cpu() - c1;
		double t_both = now() - t0;
		n_mm = r.n_matmuls;
		ls_result_free(&r);
		if (t_both < best_both)
			best_both = t_both;
		if (t_log < best_log)
			best_log = t_log;
		if (c_log < cpu_log)
			cpu_log = c_log;
	}
	printf("run log overhead: %d Matmults per run (%d requested), best "
	       "of 5\n", n_mm, n);
	printf("  simulate only          %8.1f ms wall  %8.1f ms CPU\n",
	       best_run * 1e3, cpu_run * 1e3);
	printf("  simulate + log         %8.1f ms wall\n", best_both * 1e3);
	printf("  logging (open..close)  %8.2f ms wall  %8.2f ms CPU  "
	       "(%.0f matmul rows/s wall)\n", best_log * 1e3, cpu_log * 1e3,
	       n_mm / best_log);
	printf("  overhead, wall         %8.2f %%   (logging / simulate; goal "
	       "<= 3 %%)\n", 100.0 * best_log / best_run);
	printf("  overhead, CPU          %8.2f %%\n", 100.0 * cpu_log / cpu_run);
	printf("  end to end, wall       %8.2f %%   ((simulate + log) / simulate "
	       "- 1; noisy on a loaded machine)\n",
	       100.0 * (best_both / best_run - 1));

	/* the raw rate on a warm connection, 10 runs */
	ls_result r;
	memset(&r, 0, sizeof r);
	if (ls_run(m, &inputs, &opts, &r, &err) != 0)
		die("run", &err);
	ldb *db = NULL;
	if (ldb_open(&db, dbpath, 0, &err) != 0)
		die("open", &err);
	double t0 = now();
	for (int i = 0; i < 10; i++)
		log_once(db, dbpath, &r);
	double t = now() - t0;
	ldb_close(db);
	printf("  warm connection        %8.2f ms per run (%.0f matmul rows/s)\n",
	       t * 100, 10.0 * r.n_matmuls / t);
	ls_result_free(&r);
	ls_tensors_free(&inputs);
	lm_module_free(m);
	static const char *const sufs[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		char *p = lm_xasprintf("%s%s", dbpath, sufs[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
	free(dbpath);
	return 0;
}

/*
** bench_db.c -- what the run log costs over many runs into one file.
**
** Two workloads, each logged RUNS times (default 1000) into one database
** that is never reset, the way a user's lncsim.db fills:
**
**   big   examples/matmul1 with its accumulation group repeated to 12 000
**         Matmults (LNCSIM_BENCH_MATMULS): each run opens the database,
**         logs the result, closes it -- what `lncsim run` does;
**   fuzz  a generated 4-core small set (what one fuzz case checks):
**         linked, both sides run; logged (a) opened and closed per run,
**         as `lncsim diff` does, and (b) as the fuzz coordinator does,
**         over one connection in batches, with each case's cases row.
**
** For each: the mean logging time per run, the means of the first and
** the last tenth of the runs (the trend: a log that slows down as the
** file fills shows here), the longest WAL seen, and the overhead: mean
** logging time / mean time of what is logged (simulated several times in
** this process). Goals: <= 3 % and flat for both; <= 5 % for fuzz-sized
** runs. The simulations are timed apart from the logging, so the ratio
** does not depend on running the same simulation 1000 times.
**
** usage: bench_db [RUNS [big|fuzz]] (default: both); LNCSIM_BENCH_CKPT_FRAMES overrides the
** checkpoint threshold (frames) for choosing it.
*/
#include "common.h"
#include "db.h"
#include "db_int.h"
#include "diff.h"
#include "gen.h"
#include "linker.h"
#include "module.h"
#include "sim.h"
#include "verify.h"

#include <cjson/cJSON.h>
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

/* CPU seconds of this process: less sensitive to other load. */
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

static int ckpt_frames; /* 0: the default */

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

/* What one run logs: executions and compared tensors. */
typedef struct payload {
	int n_exec;
	const char *modes[2];
	const ls_result *res[2];
	const ls_diff_result *diff; /* its plain-schedule tensors, or NULL */
	int cores;
} payload;

static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Log one run of p into the open db (inside a batch when one is open),
** with a cases row when campaign is not NULL. */
static void log_run(ldb *db, const payload *p, const char *campaign,
		    uint64_t seed)
{
	lm_error err;
	ldb_run_info info = { .command = "bench_db", .module = "bench",
			      .arch = "gen3", .cores = p->cores,
			      .seed = seed };
	ldb_run *run = NULL;
	if (ldb_run_begin(db, &info, &run, &err) != 0)
		die("log", &err);
	for (int i = 0; i < p->n_exec; i++)
		if (ldb_log_execution(run, p->modes[i], p->res[i], &err) != 0)
			die("log", &err);
	for (int i = 0; p->diff && i < p->diff->n_cmp; i++) {
		const ls_tensor_cmp *c = &p->diff->cmp[i];
		if (c->schedule == 0 &&
		    ldb_log_tensor(run, c->name, c->equal, c->mismatches,
				   c->first_index, c->max_abs_diff, &err) != 0)
			die("log", &err);
	}
	if (campaign) {
		ldb_case_info ci = { campaign, seed, "bench", "", "", "", "" };
		if (ldb_log_case(run, &ci, &err) != 0)
			die("log", &err);
	}
	if (ldb_run_end(run, "pass", NULL, 0, NULL, &err) != 0)
		die("log", &err);
}

static ldb *open_db(const char *path)
{
	ldb *db = NULL;
	lm_error err;
	if (ldb_open(&db, path, LDB_CREATE, &err) != 0)
		die("open", &err);
	if (ckpt_frames)
		ldb_set_ckpt_frames(db, ckpt_frames);
	return db;
}

/* Per-run times of one series, and the longest WAL seen. */
typedef struct series {
	double *wall, *cpu;
	double open, close;     /* summed wall seconds of ldb_open, ldb_close */
	int n;
	long long wal_max, wal_end;
} series;

static double mean(const double *v, int lo, int hi)
{
	double s = 0;
	for (int i = lo; i < hi; i++)
		s += v[i];
	return hi > lo ? s / (hi - lo) : 0;
}

/*
** Log p runs times into a fresh file at path: each run on a connection of
** its own (batch 0), or all over one connection, `batch` runs per
** transaction, each with a cases row, as the fuzz coordinator logs.
*/
static series log_series(const char *path, const payload *p, int runs,
			 int batch)
{
	series s = { lm_xcalloc((size_t)runs, sizeof(double)),
		     lm_xcalloc((size_t)runs, sizeof(double)), 0, 0, runs, 0, 0 };
	char *wal = lm_xasprintf("%s-wal", path);
	lm_error err;
	ldb *db = NULL;
	if (batch) {
		db = open_db(path);
		ldb_campaign c = { (char *)"bench", (char *)"bench", NULL,
				   (char *)"bench_db", "", 1, 0 };
		if (ldb_campaign_add(db, &c, &err) != 0)
			die("campaign", &err);
	}
	for (int i = 0; i < runs; i++) {
		double t0 = now(), c0 = cpu();
		if (!batch) {
			db = open_db(path);
			double t1 = now();
			log_run(db, p, NULL, (uint64_t)i);
			double t2 = now();
			ldb_close(db);
			db = NULL;
			s.open += t1 - t0;
			s.close += now() - t2;
		} else {
			if (!ldb_batch_is_open(db) &&
			    ldb_batch_begin(db, &err) != 0)
				die("batch", &err);
			log_run(db, p, "bench", (uint64_t)i);
			if ((i + 1) % batch == 0 || i + 1 == runs)
				if (ldb_batch_commit(db, &err) != 0)
					die("commit", &err);
		}
		s.wall[i] = now() - t0;
		s.cpu[i] = cpu() - c0;
		long long w = file_size(wal);
		if (w > s.wal_max)
			s.wal_max = w;
	}
	ldb_close(db);
	s.wal_end = file_size(wal);
	static const char *const sufs[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		char *f = lm_xasprintf("%s%s", path, sufs[i]);
		unlink(f);
		free(f);
	}
	free(wal);
	return s;
}

/* Print a series against the time of what it logs (sim seconds). */
static void report(const char *what, series *s, double sim, double sim_cpu)
{
	int d = s->n / 10 > 0 ? s->n / 10 : 1;
	double m = mean(s->wall, 0, s->n), mc = mean(s->cpu, 0, s->n);
	double first = mean(s->wall, 0, d), last = mean(s->wall, s->n - d, s->n);
	printf("  %s\n", what);
	printf("    logging, mean of %d   %8.3f ms wall  %8.3f ms CPU\n", s->n,
	       m * 1e3, mc * 1e3);
	double cfirst = mean(s->cpu, 0, d), clast = mean(s->cpu, s->n - d, s->n);
	printf("    first / last tenth    %8.3f / %.3f ms wall (last/first "
	       "%.2f), %.3f / %.3f ms CPU (%.2f)\n", first * 1e3, last * 1e3,
	       last / first, cfirst * 1e3, clast * 1e3, clast / cfirst);
	if (s->open > 0)
		printf("    of which open / close %8.3f / %.3f ms wall\n",
		       s->open * 1e3 / s->n, s->close * 1e3 / s->n);
	printf("    WAL longest / at end  %8.2f / %.2f MB\n",
	       s->wal_max / 1048576.0, s->wal_end / 1048576.0);
	printf("    overhead              %8.2f %% wall  %6.2f %% CPU  (last "
	       "tenth %.2f %% wall)\n", 100 * m / sim, 100 * mc / sim_cpu,
	       100 * last / sim);
	free(s->wall);
	free(s->cpu);
}

/* Mean wall and CPU seconds of k simulations of m. */
static void time_sim(const lm_module *m, const ls_tensors *in, int k,
		     double *wall, double *cp, ls_result *keep)
{
	ls_options opts;
	lm_error err;
	memset(&opts, 0, sizeof opts);
	double t0 = now(), c0 = cpu();
	for (int i = 0; i < k; i++) {
		ls_result r;
		memset(&r, 0, sizeof r);
		if (ls_run(m, in, &opts, &r, &err) != 0)
			die("run", &err);
		if (i == k - 1)
			*keep = r;
		else
			ls_result_free(&r);
	}
	*wall = (now() - t0) / k;
	*cp = (cpu() - c0) / k;
}

static void bench_big(const char *dbpath, int runs)
{
	const char *e = getenv("LNCSIM_BENCH_MATMULS");
	int n = e && atoi(e) >= 2 ? atoi(e) & ~1 : 12000;
	lm_module *m = make_module(n);
	lm_error err;
	ls_tensors inputs = {0, NULL};
	if (ls_make_inputs(&m, 1, NULL, 0, &inputs, &err) != 0)
		die("inputs", &err);
	double sim, sim_cpu;
	ls_result r;
	time_sim(m, &inputs, 3, &sim, &sim_cpu, &r);
	printf("big: %d Matmults per run, simulated in %.1f ms wall, %.1f ms "
	       "CPU (mean of 3)\n", r.n_matmuls, sim * 1e3, sim_cpu * 1e3);
	payload p = { 1, { "single" }, { &r }, NULL, r.n_cores };
	series s = log_series(dbpath, &p, runs, 0);
	report("open, log, close per run (lncsim run)", &s, sim, sim_cpu);
	ls_result_free(&r);
	ls_tensors_free(&inputs);
	lm_module_free(m);
}

static void bench_fuzz(const char *dbpath, int runs)
{
	ls_gen_opts go = { 4, 1, LS_GEN_SMALL, NULL, NULL, 0, 0, 0, 0, 0 };
	lm_module **mods = NULL;
	ls_gen_file *files = NULL;
	int n_files = 0;
	lm_error err;
	lm_fileset fs;
	if (ls_gen(&go, NULL, &mods, &files, &n_files, &err) != 0)
		die("gen", &err);
	lm_fileset_init(&fs);
	ls_gen_fileset(files, n_files, NULL, &fs);
	enum { K = 20 };
	ls_diff_result d;
	lm_module *linked = NULL;
	ls_tensors inputs = {0, NULL};
	double t0 = now(), c0 = cpu();
	for (int i = 0; i < K; i++) {
		lk_options lo;
		memset(&lo, 0, sizeof lo);
		lo.abs_file_paths = 1;
		lo.trust_inputs = 1;
		lo.files = &fs;
		lk_report rep;
		memset(&rep, 0, sizeof rep);
		if (i)
			ls_diff_result_free(&d);
		lm_module_free(linked);
		ls_tensors_free(&inputs);
		if (lk_link(mods, 4, &lo, &linked, &rep, &err) != 0)
			die("link", &err);
		lk_report_free(&rep);
		if (ls_make_inputs(mods, 4, NULL, 1, &inputs, &err) != 0)
			die("inputs", &err);
		ls_diff_opts o;
		memset(&o, 0, sizeof o);
		o.run.files = &fs;
		memset(&d, 0, sizeof d);
		if (ls_diff(mods, 4, linked, &inputs, &o, &d, &err) != 0)
			die("diff", &err);
	}
	double sim = (now() - t0) / K, sim_cpu = (cpu() - c0) / K;
	printf("fuzz: a 4-core small generated set, %lld + %lld "
	       "instructions, %d + %d Matmults, %d tensors; linked and both "
	       "sides run in %.2f ms wall, %.2f ms CPU (mean of %d; a fuzz "
	       "case also generates it)\n", (long long)d.ref.instructions,
	       (long long)d.linked.instructions, d.ref.n_matmuls,
	       d.linked.n_matmuls, d.n_cmp, sim * 1e3, sim_cpu * 1e3, K);
	payload p = { 2, { "reference", "linked" }, { &d.ref, &d.linked }, &d,
		      4 };
	series s = log_series(dbpath, &p, runs, 0);
	report("open, log, close per run (lncsim diff)", &s, sim, sim_cpu);
	/* the coordinator commits every 0.2 s: this many cases of one job */
	int batch = (int)(0.2 / sim) > 1 ? (int)(0.2 / sim) : 1;
	char title[128];
	snprintf(title, sizeof title, "one connection, %d cases per batch, "
		 "with their cases rows (lncsim fuzz)", batch);
	s = log_series(dbpath, &p, runs, batch);
	report(title, &s, sim, sim_cpu);
	ls_diff_result_free(&d);
	lm_module_free(linked);
	ls_tensors_free(&inputs);
	lm_fileset_free(&fs);
	ls_gen_files_free(files, n_files);
	for (int i = 0; i < 4; i++)
		lm_module_free(mods[i]);
	free(mods);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 1000;
	const char *e = getenv("LNCSIM_BENCH_CKPT_FRAMES");
	const char *only = argc > 2 ? argv[2] : "";
	if (runs < 10 || (*only && strcmp(only, "big") && strcmp(only, "fuzz"))) {
		fprintf(stderr, "usage: bench_db [RUNS >= 10 [big|fuzz]]\n");
		return 2;
	}
	if (e && atoi(e) > 0)
		ckpt_frames = atoi(e);
	char dir[] = "/tmp/lncsim-bench-db-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	char *dbpath = lm_xasprintf("%s/bench.db", dir);
	printf("run log cost: %d runs into one file per series%s\n", runs,
	       ckpt_frames ? " (checkpoint threshold overridden)" : "");
	if (ckpt_frames)
		printf("  checkpoint threshold %d frames\n", ckpt_frames);
	if (strcmp(only, "fuzz"))
		bench_big(dbpath, runs);
	if (strcmp(only, "big"))
		bench_fuzz(dbpath, runs);
	rmdir(dir);
	free(dbpath);
	return 0;
}

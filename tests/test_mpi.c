/*
** test_mpi.c -- `lncsim fuzz` as an MPI job (built with --with-mpi): a
** 3-rank campaign stores exactly what `--jobs 1` stores for the same
** seeds; a rank killed mid-campaign still leaves every seed's result;
** `--resume` after an interrupted job completes the campaign with no seed
** twice; a broken link gives one signature with the right count. Every
** mpirun runs under timeout(1), so a launcher that hangs ends the test,
** not the suite; ranks are oversubscribed (a 2-core machine runs 3).
*/
#include "common.h"
#include "testutil.h"

#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long one mpirun may take (the sanitizer build on a busy machine). */
#define MPI_SECONDS "240"

static const char *mpirun(void)
{
	const char *m = getenv("MPIRUN");
	return m && *m ? m : "mpirun";
}

/* Whether the launcher is MPICH's (hydra's mpiexec) rather than Open
** MPI's mpirun: configure says which MPI it built with (MPI_IMPL). */
static int hydra(void)
{
	const char *i = getenv("MPI_IMPL");
	return i && !strcmp(i, "mpich");
}

static const char *lncsim(void)
{
	const char *l = getenv("LNCSIM");
	return l && *l ? l : "../lncsim";
}

/* Cases of campaign c so far (0 before there is a file or a table). */
static int64_t cases_of(const char *path, const char *c)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v = 0;
	if (access(path, F_OK) != 0)
		return 0;
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT count(*) FROM cases WHERE campaign "
			       "= ?1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, c, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

static void wait_cases(const char *path, const char *c, int64_t n)
{
	struct timespec ts = { 0, 10000000L };
	for (int i = 0; i < 18000 && cases_of(path, c) < n; i++)
		nanosleep(&ts, NULL);
	ck_assert_int_ge(cases_of(path, c), n);
}

static void each_seed_once(const char *db, const char *c, int64_t n)
{
	char *q = lm_xasprintf("SELECT count(*) FROM cases WHERE campaign = "
			       "'%s'", c);
	ck_assert_int_eq(tu_sql_int(db, q), n);
	free(q);
	q = lm_xasprintf("SELECT count(DISTINCT seed) FROM cases WHERE "
			 "campaign = '%s' AND seed BETWEEN 1 AND %lld", c,
			 (long long)n);
	ck_assert_int_eq(tu_sql_int(db, q), n);
	free(q);
}

/*
** argv for `timeout mpirun [--enable-recovery ...] -np NP lncsim fuzz
** ARGS...` (NULL-terminated ARGS), or hydra's `mpiexec
** [-disable-auto-cleanup] -n NP ...`; the caller frees the array.
*/
static const char **mpi_argv(int np, int survive, const char *const *args)
{
	static char npbuf[16];
	const char **v = lm_xcalloc(64, sizeof *v);
	int n = 0;
	snprintf(npbuf, sizeof npbuf, "%d", np);
	v[n++] = "timeout";
	v[n++] = "-k";
	v[n++] = "20";
	v[n++] = MPI_SECONDS;
	v[n++] = mpirun();
	if (hydra()) {
		/* hydra runs more ranks than cores as asked; by default it
		** kills the job when one of them dies */
		if (survive)
			v[n++] = "-disable-auto-cleanup";
		v[n++] = "-n";
	} else {
		v[n++] = "--oversubscribe";
		if (survive) {
			/* a killed rank must not take the job down
			** (docs/distributed.md) */
			v[n++] = "--enable-recovery";
			v[n++] = "--mca";
			v[n++] = "orte_abort_on_non_zero_status";
			v[n++] = "0";
		}
		v[n++] = "-np";
	}
	v[n++] = npbuf;
	v[n++] = lncsim();
	v[n++] = "fuzz";
	for (int i = 0; args[i] && n < 63; i++)
		v[n++] = args[i];
	v[n] = NULL;
	return v;
}

/*
** Start the job. In a sanitizer build its ranks check no leaks: Open
** MPI's components leak at MPI_Finalize and are unloaded before
** LeakSanitizer could name them (nothing else is turned off, and the
** suites that run lncsim without MPI still check every leak).
*/
static void start_mpi(const char *cwd, int np, int survive,
		      const char *const *args, tu_proc *p)
{
	tu_opts o = TU_OPTS_INIT;
	const char **v = mpi_argv(np, survive, args);
	const char *was = getenv("ASAN_OPTIONS");
	char *keep = was ? lm_xstrdup(was) : NULL;
	char *opts = lm_xasprintf("%s%sdetect_leaks=0", was ? was : "",
				  was && *was ? ":" : "");
	o.program = "timeout";
	setenv("ASAN_OPTIONS", opts, 1);
	tu_start(&o, cwd, v, p);
	if (keep)
		setenv("ASAN_OPTIONS", keep, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(keep);
	free(opts);
	free(v);
}

static tu_run run_mpi(const char *cwd, int np, int survive,
		      const char *const *args)
{
	tu_proc p;
	start_mpi(cwd, np, survive, args, &p);
	return tu_finish(&p);
}

/*
** The same seeds, --jobs 1 without MPI and 3 ranks: the same rows (the
** results, executions, core stats, matmuls, tensors of every case).
*/
START_TEST(test_mpi_same_as_jobs_1)
{
	char *d = tu_tmpdir("mpi");
	char *db = lm_path_join(d, "same.db");
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "jobs1",
			     "--count", "18", "--cores", "1-6", "--schedules",
			     "1", "--jobs", "1", "-q", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, " cases/s, 1 job)");
	tu_run_free(&r);
	const char *args[] = { "--db", db, "--campaign", "ranks3", "--count",
			       "18", "--cores", "1-6", "--schedules", "1", "-q",
			       NULL };
	r = run_mpi(d, 3, 0, args);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 18 cases, 18 passed, 0 failed");
	ck_assert_contains(r.out, " cases/s, 3 workers)");
	tu_run_free(&r);
	char *a = tu_campaign_dump(db, "jobs1"), *b = tu_campaign_dump(db,
								     "ranks3");
	ck_assert_msg(strstr(a, "\nmm|") != NULL, "no matmuls stored");
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	each_seed_once(db, "ranks3", 18);
	/* the worker ranks never opened it: one writer, one campaign row */
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM campaigns WHERE "
				 "name = 'ranks3'"), 1);
	free(db);
	free(d);
}
END_TEST

/* /proc/PID/NAME into buf (NUL-terminated; its NULs kept): its size,
** -1 when it cannot be read. */
static long read_proc(int pid, const char *name, char *buf, size_t n)
{
	char *p = lm_xasprintf("/proc/%d/%s", pid, name);
	FILE *f = fopen(p, "r");
	free(p);
	if (!f)
		return -1;
	size_t m = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[m] = 0;
	return (long)m;
}

/* Whether the NUL-separated strings of buf (m bytes) hold s. */
static int holds(const char *buf, long m, const char *s)
{
	for (long i = 0; i < m; i += (long)strlen(buf + i) + 1)
		if (!strcmp(buf + i, s))
			return 1;
	return 0;
}

/*
** The process of rank `rank` of the job logging into db: the one with
** that rank in its environment and db on its command line whose parent
** is not an lncsim (its case server has the same environment and
** command line). 0 when there is none.
*/
static int find_rank(const char *db, int rank)
{
	char want[64], buf[65536];
	DIR *dp = opendir("/proc");
	struct dirent *e;
	int found = 0;
	snprintf(want, sizeof want, "%s=%d", hydra() ? "PMI_RANK" :
		 "OMPI_COMM_WORLD_RANK", rank);
	while (dp && !found && (e = readdir(dp))) {
		int pid = atoi(e->d_name), ppid = 0;
		long m;
		char st;
		if (pid <= 0)
			continue;
		if ((m = read_proc(pid, "environ", buf, sizeof buf)) < 0 ||
		    !holds(buf, m, want))
			continue;
		if ((m = read_proc(pid, "cmdline", buf, sizeof buf)) < 0 ||
		    !holds(buf, m, db))
			continue;
		const char *rp;
		if (read_proc(pid, "stat", buf, sizeof buf) < 0 ||
		    !(rp = strrchr(buf, ')')) ||
		    sscanf(rp + 1, " %c %d", &st, &ppid) != 2)
			continue;
		if (read_proc(ppid, "comm", buf, sizeof buf) < 0 ||
		    strncmp(buf, "lncsim", 6))
			found = pid;
	}
	if (dp)
		closedir(dp);
	return found;
}

/* Wait (up to 60 s) until no process of the job logging into db is
** left: mpirun may end before its ranks do. */
static void wait_job_gone(const char *db)
{
	char buf[65536];
	for (int i = 0; i < 600; i++) {
		DIR *dp = opendir("/proc");
		struct dirent *e;
		int left = 0;
		while (dp && !left && (e = readdir(dp))) {
			int pid = atoi(e->d_name);
			long m;
			if (pid > 0 && (m = read_proc(pid, "cmdline", buf,
						      sizeof buf)) > 0)
				left = holds(buf, m, db);
		}
		if (dp)
			closedir(dp);
		if (!left)
			return;
		usleep(100000);
	}
	ck_abort_msg("the job logging into %s is still running", db);
}

/* Whether process pid ends (exits, or is a zombie) within s seconds. */
static int ends_within(int pid, int s)
{
	char buf[4096];
	for (int i = 0; i < s * 10; i++) {
		const char *rp;
		char st;
		if (read_proc(pid, "stat", buf, sizeof buf) < 0 ||
		    !(rp = strrchr(buf, ')')) || sscanf(rp + 1, " %c", &st) != 1 ||
		    st == 'Z')
			return 1;
		usleep(100000);
	}
	return 0;
}

/*
** MPICH's mpiexec (hydra 4.0) kills every rank when one dies, with
** -disable-auto-cleanup too (docs/distributed.md): the job ends, what it
** logged stays, and --resume records the rest, no seed twice.
*/
static void killed_under_hydra(const char *d, const char *db, tu_proc *p)
{
	tu_run r = tu_finish(p);
	ck_assert_msg(r.status != 0 && r.status != 124, "status %d: %s%s",
		      r.status, r.out, r.err);
	tu_run_free(&r);
	wait_job_gone(db);
	int64_t k = cases_of(db, "kill");
	ck_assert_int_ge(k, 3);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(DISTINCT seed) FROM cases"),
			 k);
	const char *again[] = { "--db", db, "--campaign", "kill", "--resume",
				"-q", NULL };
	r = run_mpi(d, 3, 0, again);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	tu_run_free(&r);
	each_seed_once(db, "kill", 60);
}

/*
** Rank 1 killed mid-campaign: its case is lost, rank 0 notices its
** silence, hands the case out again, and every seed still has one
** result.
*/
START_TEST(test_mpi_rank_killed)
{
	char *d = tu_tmpdir("mpi");
	char *db = lm_path_join(d, "kill.db");
	const char *args[] = { "--db", db, "--campaign", "kill", "--count",
			       "60", "--cores", "3-6", "--lost-after", "5", "-q",
			       NULL };
	tu_proc p;
	start_mpi(d, 3, 1, args, &p);
	wait_cases(db, "kill", 3);
	int pid = 0;
	for (int i = 0; i < 200 && !(pid = find_rank(db, 1)); i++)
		usleep(50000);
	ck_assert_msg(pid > 0, "rank 1 not found");
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	if (hydra()) {
		killed_under_hydra(d, db, &p);
		free(db);
		free(d);
		return;
	}
	/* the campaign ends when its ranks do */
	for (int i = 0; i < 1200 && (find_rank(db, 0) || find_rank(db, 2));
	     i++)
		usleep(100000);
	ck_assert_msg(!find_rank(db, 0) && !find_rank(db, 2),
		      "ranks 0 and 2 still running after 120 s");
	/* Open MPI 4.1's mpirun, with the options that let a job outlive a
	** rank, at times does not exit once every rank has (its own
	** teardown, docs/distributed.md): that is ended here, and the
	** campaign judged by its summary and its database */
	int hung = !ends_within(p.pid, 30);
	if (hung)
		kill(p.pid, SIGTERM); /* timeout(1) passes it on to mpirun */
	tu_run r = tu_finish(&p);
	wait_job_gone(db);
	/* mpirun's own status says nothing of rank 0's with these options:
	** the summary and the database do */
	if (!hung)
		ck_assert_msg(r.status != 124 && r.status < 128,
			      "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 60 cases, 60 passed, 0 failed");
	ck_assert_contains(r.err, "lost on rank 1: rank 1 sent nothing for ");
	ck_assert_contains(r.err, "it is handed out again");
	ck_assert_contains(r.out, "handed out again; 0 lost twice");
	tu_run_free(&r);
	each_seed_once(db, "kill", 60);
	free(db);
	free(d);
}
END_TEST

/* A child of process ppid that is not a zombie (0: none). */
static int child_of(int ppid)
{
	char buf[4096];
	DIR *dp = opendir("/proc");
	struct dirent *e;
	int found = 0;
	while (dp && !found && (e = readdir(dp))) {
		int pid = atoi(e->d_name), pp = 0;
		const char *rp;
		char st;
		if (pid > 0 && read_proc(pid, "stat", buf, sizeof buf) > 0 &&
		    (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %c %d", &st, &pp) == 2 && pp == ppid &&
		    st != 'Z')
			found = pid;
	}
	if (dp)
		closedir(dp);
	return found;
}

/*
** Rank 1 stopped (SIGSTOP) longer than --lost-after, then let go on: it
** is taken for dead, its case goes out again, and when it speaks again
** it takes work again without losing its slot -- rank 0 hands it
** nothing until its last case has answered, so no case is ever sent to
** a slot still running one (which would take its case server down).
*/
START_TEST(test_mpi_rank_back)
{
	char *d = tu_tmpdir("mpi");
	char *db = lm_path_join(d, "back.db");
	const char *args[] = { "--db", db, "--campaign", "back", "--count",
			       "300", "--cores", "2-4", "--lost-after", "2", "-q",
			       NULL };
	tu_proc p;
	start_mpi(d, 3, 1, args, &p);
	wait_cases(db, "back", 3);
	int pid = 0;
	for (int i = 0; i < 200 && !(pid = find_rank(db, 1)); i++)
		usleep(50000);
	ck_assert_msg(pid > 0, "rank 1 not found");
	/* the rank and the case it runs stopped together (the case server
	** between them waits for the case) */
	int server = 0, kase = 0;
	for (int i = 0; i < 500 && !kase; i++) {
		ck_assert_int_eq(kill(pid, SIGSTOP), 0);
		if ((server = child_of(pid)) && (kase = child_of(server)) &&
		    kill(kase, SIGSTOP) == 0)
			break;
		kase = 0;
		kill(pid, SIGCONT);
		usleep(20000);
	}
	ck_assert_msg(kase > 0, "no case of rank 1 caught running");
	sleep(5);
	/* the rank speaks again (a heartbeat: its case still runs) ... */
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	sleep(3);
	/* ... and its case ends later */
	kill(kase, SIGCONT);
	tu_run r = tu_finish(&p);
	wait_job_gone(db);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 300 cases, 300 passed, 0 failed");
	ck_assert_contains(r.err, "rank 1 sent nothing for ");
	/* its case lost, its slot not: nothing was sent to a busy slot (it
	** would take the slot's case server down: "... is gone") */
	ck_assert_msg(!strstr(r.err, "is gone"), "%s", r.err);
	ck_assert_msg(!strstr(r.err, "while running seed"), "%s", r.err);
	tu_run_free(&r);
	each_seed_once(db, "back", 300);
	free(db);
	free(d);
}
END_TEST

/*
** An interrupted job (SIGINT to mpirun: every rank gets SIGTERM) keeps
** what it logged; the same job with --resume runs the rest, no seed
** twice.
*/
START_TEST(test_mpi_resume_after_sigint)
{
	char *d = tu_tmpdir("mpi");
	char *db = lm_path_join(d, "res.db");
	const char *args[] = { "--db", db, "--campaign", "res", "--count",
			       "120", "--cores", "3-6", "-q", NULL };
	tu_proc p;
	start_mpi(d, 3, 0, args, &p);
	wait_cases(db, "res", 5);
	/* timeout(1) passes the signal on to mpirun */
	ck_assert_int_eq(kill(p.pid, SIGINT), 0);
	tu_run r = tu_finish(&p);
	ck_assert_msg(r.status != 0 && r.status != 124, "status %d: %s%s",
		      r.status, r.out, r.err);
	tu_run_free(&r);
	wait_job_gone(db);
	int64_t k = cases_of(db, "res");
	ck_assert_int_ge(k, 5);
	ck_assert_int_lt(k, 120);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(DISTINCT seed) FROM cases"),
			 k);
	const char *again[] = { "--db", db, "--campaign", "res", "--resume",
				"-q", NULL };
	r = run_mpi(d, 3, 0, again);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	char *want = lm_xasprintf("fuzz: %lld seed%s already recorded in "
				  "campaign res: skipped", (long long)k,
				  k == 1 ? "" : "s");
	ck_assert_contains(r.out, want);
	free(want);
	tu_run_free(&r);
	each_seed_once(db, "res", 120);
	free(db);
	free(d);
}
END_TEST

/* A broken link over 3 ranks: one signature, its hits every failure. */
START_TEST(test_mpi_broken_link)
{
	char *d = tu_tmpdir("mpi");
	char *db = lm_path_join(d, "brk.db");
	const char *args[] = { "--db", db, "--campaign", "brk", "--count",
			       "24", "--cores", "2-3", "--keep-failures", "kept",
			       "--skip=fix_output_kind,verify", "-q", NULL };
	tu_run r = run_mpi(d, 3, 0, args);
	ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 1 failure signature (1 new)");
	tu_run_free(&r);
	/* the ranks kept their failing cases; of the one signature only the
	** smallest seed's stays (the others' relays removed theirs) */
	int64_t least = tu_sql_int(db, "SELECT seed FROM failures");
	char *kd = lm_path_join(d, "kept");
	char *want = lm_xasprintf("case-%lld", (long long)least);
	DIR *dp = opendir(kd);
	struct dirent *e;
	int n = 0;
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			ck_assert_str_eq(e->d_name, want);
			n++;
		}
	closedir(dp);
	ck_assert_int_eq(n, 1);
	free(want);
	free(kd);
	int64_t fails = tu_sql_int(db, "SELECT count(*) FROM runs r JOIN cases c "
				"ON r.id = c.run_id WHERE r.status = 'fail'");
	ck_assert_int_gt(fails, 12);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM failures"), 1);
	ck_assert_int_eq(tu_sql_int(db, "SELECT hits FROM failures"), fails);
	ck_assert_int_eq(tu_sql_int(db, "SELECT seed FROM failures"),
			 tu_sql_int(db, "SELECT min(c.seed) FROM cases c JOIN runs r "
				 "ON r.id = c.run_id WHERE r.status = 'fail'"));
	each_seed_once(db, "brk", 24);
	/* and the database merges like any other */
	char *out = lm_path_join(d, "merged.db");
	r = tu_lncsim(d, "db", "merge", out, db, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "; 24 fuzz cases, 1 new campaign");
	tu_run_free(&r);
	ck_assert_int_eq(tu_sql_int(out, "SELECT hits FROM failures"), fails);
	free(out);
	free(db);
	free(d);
}
END_TEST

/* The coordinator alone, fed by 2 ranks that answer at once. */
START_TEST(test_mpi_null_cases)
{
	char *d = tu_tmpdir("mpi");
	char *db = lm_path_join(d, "null.db");
	const char *args[] = { "--db", db, "--campaign", "null", "--count",
			       "3000", "--null-cases", "-q", NULL };
	tu_run r = run_mpi(d, 2, 0, args);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 3000 cases, 3000 passed");
	tu_run_free(&r);
	each_seed_once(db, "null", 3000);
	free(db);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mpi");
	TCase *tc = tcase_create("mpirun");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_mpi_same_as_jobs_1);
	tcase_add_test(tc, test_mpi_rank_killed);
	tcase_add_test(tc, test_mpi_rank_back);
	tcase_add_test(tc, test_mpi_resume_after_sigint);
	tcase_add_test(tc, test_mpi_broken_link);
	tcase_add_test(tc, test_mpi_null_cases);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* CI runs as root; Open MPI refuses that unless told */
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	return tu_main(suite());
}

/*
** test_fuzz.c -- fuzz campaigns: the result record's encoding, the
** campaign's options string, failure signatures, the coordinator's state
** machine (alone, and at random), the driver and its sink over a scripted
** transport (lost cases, dead workers, stops), and `lncsim fuzz --jobs`
** end to end: the same results whatever the jobs, one signature for a
** broken link, resume after SIGINT and SIGTERM with no seed twice, a
** killed case and a killed case server, --duration, the refusals.
*/
#include "common.h"
#include "testutil.h"
#include "db.h"
#include "fuzz.h"
#include "fuzz_coord.h"
#include "fuzz_run.h"
#include "linker.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------- */

static char *sql_text(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	char *out = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	sqlite3_busy_timeout(h, 10000);
	ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK,
		      "%s: %s", sql, sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		out = lm_xstrdup(t ? (const char *)t : "(null)");
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	return out ? out : lm_xstrdup("(no row)");
}

/* The number of cases of campaign c in the database at path (0 before
** the file or its tables exist). */
static int64_t cases_of(const char *path, const char *c)
{
	if (access(path, F_OK) != 0)
		return 0;
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v = 0;
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

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Wait (up to 120 s) until campaign c has at least n cases logged. */
static void wait_cases(const char *path, const char *c, int64_t n)
{
	for (int i = 0; i < 12000 && cases_of(path, c) < n; i++)
		nap_ms(10);
	ck_assert_int_ge(cases_of(path, c), n);
}

/*
** Wait until campaign c (first seed 1) logged at least n cases and no
** seed below its largest is missing: a case handed out again after a
** kill is then logged too.
*/
static void wait_settled(const char *path, const char *c, int64_t n)
{
	char *q = lm_xasprintf("SELECT count(DISTINCT seed) = max(seed) FROM "
			       "cases WHERE campaign = '%s'", c);
	int i;
	for (i = 0; i < 12000; i++) {
		if (cases_of(path, c) >= n && tu_sql_int(path, q) == 1)
			break;
		nap_ms(10);
	}
	free(q);
	ck_assert_msg(i < 12000, "campaign %s: the cases did not settle", c);
}

/* Every seed first .. first + n - 1 of campaign c exactly once. */
static void each_seed_once(const char *db, const char *c, int64_t first,
			   int64_t n)
{
	char *q = lm_xasprintf("SELECT count(*) FROM cases WHERE campaign = "
			       "'%s'", c);
	ck_assert_int_eq(tu_sql_int(db, q), n);
	free(q);
	q = lm_xasprintf("SELECT count(DISTINCT seed) FROM cases WHERE "
			 "campaign = '%s' AND seed BETWEEN %lld AND %lld", c,
			 (long long)first, (long long)(first + n - 1));
	ck_assert_int_eq(tu_sql_int(db, q), n);
	free(q);
}

/* stdout away (the sink prints FAIL lines) and back. */
static int hide_stdout(void)
{
	fflush(stdout);
	int saved = dup(1), nul = open("/dev/null", O_WRONLY);
	dup2(nul, 1);
	close(nul);
	return saved;
}

static void show_stdout(int saved)
{
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
}

/* ---- the record ------------------------------------------------------- */

/* Race i of a record: every field its own value. */
static void mk_race(ls_race *x, int i)
{
	static const char *const kinds[] = { "RAW", "WAR", "WAW" };
	static const char *const mems[] = { "SBUF", "PSUM", "DRAM" };
	x->kind = lm_xstrdup(i % 4 == 3 ? "SLOT" : kinds[i % 3]);
	x->memory = lm_xstrdup(i % 4 == 3 ? "BARRIER" : mems[i % 3]);
	x->core = i % 3 == 2 ? -1 : i;
	x->object = lm_xstrdup(i % 3 == 2 ? "x" : "");
	x->lo = 4 * i;
	x->hi = 4 * i + 8 + ((int64_t)1 << 40);
	x->a_func = lm_xasprintf("fa%d", i);
	x->a_block = lm_xasprintf("ba%d", i);
	x->a_inst = lm_xasprintf("ia%d", i);
	x->a_iter = lm_xstrdup(i ? "i=3,j=0" : "");
	x->a_core = 10 + i;
	x->a_engine = lm_xstrdup("PE");
	x->b_func = lm_xasprintf("fb%d", i);
	x->b_block = lm_xstrdup("");
	x->b_inst = lm_xasprintf("ib%d", i);
	x->b_iter = lm_xstrdup("k=1");
	x->b_core = 20 + i;
	x->b_engine = lm_xstrdup("queue qSyncIO0");
	x->last_common = lm_xasprintf("lc%d", i);
}

static void same_race(const ls_race *x, const ls_race *y)
{
	ck_assert_str_eq(y->kind, x->kind);
	ck_assert_str_eq(y->memory, x->memory);
	ck_assert_int_eq(y->core, x->core);
	ck_assert_str_eq(y->object, x->object);
	ck_assert_int_eq(y->lo, x->lo);
	ck_assert_int_eq(y->hi, x->hi);
	ck_assert_str_eq(y->a_func, x->a_func);
	ck_assert_str_eq(y->a_block, x->a_block);
	ck_assert_str_eq(y->a_inst, x->a_inst);
	ck_assert_str_eq(y->a_iter, x->a_iter);
	ck_assert_int_eq(y->a_core, x->a_core);
	ck_assert_str_eq(y->a_engine, x->a_engine);
	ck_assert_str_eq(y->b_func, x->b_func);
	ck_assert_str_eq(y->b_block, x->b_block);
	ck_assert_str_eq(y->b_inst, x->b_inst);
	ck_assert_str_eq(y->b_iter, x->b_iter);
	ck_assert_int_eq(y->b_core, x->b_core);
	ck_assert_str_eq(y->b_engine, x->b_engine);
	ck_assert_str_eq(y->last_common, x->last_common);
}

/* A record with every field set, doubles of every kind; both executions
** checked for races, the reference with none, the linked with 3 kept of
** 5 found. */
static void full_record(fz_record *r)
{
	fz_record_init(r);
	r->seed = 0x7fffffff00000011ull;
	r->cores = 3;
	r->status = FZ_FAIL;
	fz_record_set(&r->kind, "mismatch");
	fz_record_set(&r->message, "mismatch: tensor 'y_nc1': 3 of 16 "
		      "elements differ\nsecond line");
	fz_record_set(&r->signature, "mismatch|y_nc#|inner");
	fz_record_set(&r->arch, "gen3");
	fz_record_set(&r->version, "9.9.9");
	fz_record_set(&r->gen_options, "cores=1-4 size=small schedules=0 "
		      "skip=");
	fz_record_set(&r->kept, "kept/case-17");
	r->started = 1700000000;
	r->wall = 0.125;
	r->n_exec = 2;
	for (int e = 0; e < 2; e++) {
		fz_exec *x = &r->exec[e];
		snprintf(x->mode, sizeof x->mode, "%s", e ? "linked"
							  : "reference");
		x->r.sim_time_ps = 123456789 + e;
		x->r.instructions = 77 + e;
		x->r.n_cores = 2;
		x->r.cores = lm_xcalloc(2, sizeof *x->r.cores);
		for (int c = 0; c < 2; c++) {
			ls_core_stats *s = &x->r.cores[c];
			s->core = c;
			for (int k = 0; k < LS_ENGINES; k++)
				s->busy_ps[k] = 1000 * k + c;
			s->instructions = 5 + c;
			s->matmuls = 2;
			s->macs = (int64_t)1 << 41;
			s->pe_util = c ? NAN : 0.1;
			s->mac_util = -0.0;
			s->dma_bytes = 4096;
			s->dma_transfers = 3;
			s->barrier_wait_ps = 9;
			s->semaphore_wait_ps = 10;
			s->end_ps = INT64_MAX;
			for (int k = 0; k < LS_ENGINES; k++) {
				s->wait_sem_ps[k] = 11 + k;
				s->wait_barrier_ps[k] = 21 + k;
				s->wait_dep_ps[k] = 31 + k;
				s->idle_ps[k] = 41 + k;
			}
		}
		x->r.n_matmuls = 3;
		x->r.matmuls = lm_xcalloc(3, sizeof *x->r.matmuls);
		for (int m = 0; m < 3; m++) {
			ls_matmul_rec *mm = &x->r.matmuls[m];
			mm->core = m % 2;
			mm->name = lm_xasprintf("mm_%d", m);
			mm->k = 128;
			mm->m = 64 - m;
			mm->n = 512;
			mm->dtype = m ? LM_DT_BFLOAT16 : LM_DT_FLOAT32;
			mm->start_ps = 100 * m;
			mm->duration_ps = 50;
			mm->array_util = 0.5;
		}
		x->race = 1;
		if (e) {
			x->r.races_found = 5;
			x->r.n_races = 3;
			x->r.races = lm_xcalloc(3, sizeof *x->r.races);
			for (int i = 0; i < 3; i++)
				mk_race(&x->r.races[i], i);
		}
	}
	r->n_tensors = 2;
	r->tensors = lm_xcalloc(2, sizeof *r->tensors);
	r->tensors[0].name = lm_xstrdup("z");
	r->tensors[0].equal = 1;
	r->tensors[0].first_index = -1;
	r->tensors[1].name = lm_xstrdup("y_nc1");
	r->tensors[1].mismatches = 3;
	r->tensors[1].first_index = 5;
	r->tensors[1].max_abs_diff = INFINITY;
}

static int same_bits(double a, double b)
{
	return !memcmp(&a, &b, sizeof a);
}

START_TEST(test_record_roundtrip)
{
	fz_record a, b;
	lm_buf buf = LM_BUF_INIT;
	lm_error err;
	full_record(&a);
	fz_record_encode(&a, &buf);
	ck_assert_msg(fz_record_decode(buf.ptr, buf.size, &b, &err) == 0, "%s",
		      err.msg);
	ck_assert_uint_eq(b.seed, a.seed);
	ck_assert_int_eq(b.cores, 3);
	ck_assert_int_eq(b.status, FZ_FAIL);
	ck_assert_str_eq(b.kind, a.kind);
	ck_assert_str_eq(b.message, a.message);
	ck_assert_str_eq(b.signature, a.signature);
	ck_assert_str_eq(b.arch, "gen3");
	ck_assert_str_eq(b.version, "9.9.9");
	ck_assert_str_eq(b.gen_options, a.gen_options);
	ck_assert_str_eq(b.kept, "kept/case-17");
	ck_assert_int_eq(b.started, 1700000000);
	ck_assert(same_bits(b.wall, 0.125));
	ck_assert_int_eq(b.n_exec, 2);
	for (int e = 0; e < 2; e++) {
		const ls_result *x = &a.exec[e].r, *y = &b.exec[e].r;
		ck_assert_str_eq(b.exec[e].mode, a.exec[e].mode);
		ck_assert_int_eq(y->sim_time_ps, x->sim_time_ps);
		ck_assert_int_eq(y->instructions, x->instructions);
		ck_assert_int_eq(y->n_cores, 2);
		for (int c = 0; c < 2; c++) {
			const ls_core_stats *s = &x->cores[c], *t = &y->cores[c];
			ck_assert(!memcmp(s->busy_ps, t->busy_ps,
					  sizeof s->busy_ps));
			ck_assert_int_eq(t->macs, s->macs);
			ck_assert(same_bits(t->pe_util, s->pe_util));
			ck_assert(same_bits(t->mac_util, s->mac_util));
			ck_assert_int_eq(t->end_ps, INT64_MAX);
			ck_assert_int_eq(t->semaphore_wait_ps, 10);
			ck_assert(!memcmp(s->wait_sem_ps, t->wait_sem_ps,
					  sizeof s->wait_sem_ps));
			ck_assert(!memcmp(s->wait_barrier_ps, t->wait_barrier_ps,
					  sizeof s->wait_barrier_ps));
			ck_assert(!memcmp(s->wait_dep_ps, t->wait_dep_ps,
					  sizeof s->wait_dep_ps));
			ck_assert(!memcmp(s->idle_ps, t->idle_ps,
					  sizeof s->idle_ps));
		}
		ck_assert_int_eq(y->n_matmuls, 3);
		for (int m = 0; m < 3; m++) {
			ck_assert_str_eq(y->matmuls[m].name, x->matmuls[m].name);
			ck_assert_int_eq(y->matmuls[m].dtype, x->matmuls[m].dtype);
			ck_assert_int_eq(y->matmuls[m].m, x->matmuls[m].m);
			ck_assert_int_eq(y->matmuls[m].start_ps,
					 x->matmuls[m].start_ps);
		}
		ck_assert_int_eq(b.exec[e].race, 1);
		ck_assert_int_eq(y->races_found, e ? 5 : 0);
		ck_assert_int_eq(y->n_races, e ? 3 : 0);
		for (int i = 0; i < y->n_races; i++)
			same_race(&x->races[i], &y->races[i]);
	}
	ck_assert_int_eq(b.n_tensors, 2);
	ck_assert_str_eq(b.tensors[1].name, "y_nc1");
	ck_assert_int_eq(b.tensors[1].first_index, 5);
	ck_assert_int_eq(b.tensors[0].first_index, -1);
	ck_assert(same_bits(b.tensors[1].max_abs_diff, INFINITY));
	fz_record_free(&b);
	/* the leanest shape: the last execution's cores end the record
	   (no matmuls, no tensors) and still decode */
	{
		fz_record c, d;
		lm_buf cb = LM_BUF_INIT;
		full_record(&c);
		for (int e = 0; e < c.n_exec; e++)
			c.exec[e].r.n_matmuls = 0;
		c.n_tensors = 0;
		fz_record_encode(&c, &cb);
		ck_assert_msg(fz_record_decode(cb.ptr, cb.size, &d, &err) == 0,
			      "%s", err.msg);
		ck_assert_int_eq(d.exec[1].r.n_cores, 2);
		fz_record_free(&d);
		for (int e = 0; e < c.n_exec; e++)
			c.exec[e].r.n_matmuls = 3; /* freed as made */
		c.n_tensors = 2;
		fz_record_free(&c);
		lm_buf_free(&cb);
	}
	/* every truncation is refused, cleanly */
	for (size_t n = 0; n < buf.size; n++) {
		ck_assert_int_eq(fz_record_decode(buf.ptr, n, &b, &err),
				 LM_EINPUT);
		fz_record_free(&b);
	}
	/* a byte too many, another version, not a record */
	lm_buf_put(&buf, "x", 1);
	ck_assert_int_eq(fz_record_decode(buf.ptr, buf.size, &b, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "truncated or malformed");
	fz_record_free(&b);
	buf.ptr[4] = FZ_RECORD_VERSION + 1;
	ck_assert_int_eq(fz_record_decode(buf.ptr, buf.size - 1, &b, &err),
			 LM_EINPUT);
	char *vmsg = lm_xasprintf("version %d, this lncsim reads version %d",
				  FZ_RECORD_VERSION + 1, FZ_RECORD_VERSION);
	ck_assert_contains(err.msg, vmsg);
	free(vmsg);
	fz_record_free(&b);
	ck_assert_int_eq(fz_record_decode("LFZC\1", 5, &b, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "not a result record");
	fz_record_free(&b);
	/* a count no record can hold is refused before anything is made */
	fz_record z;
	lm_buf zb = LM_BUF_INIT;
	fz_record_init(&z);
	fz_record_encode(&z, &zb);
	memset(zb.ptr + zb.size - 4, 0xff, 4);
	ck_assert_int_eq(fz_record_decode(zb.ptr, zb.size, &b, &err), LM_EINPUT);
	fz_record_free(&b);
	fz_record_free(&z);
	lm_buf_free(&zb);
	lm_buf_free(&buf);
	fz_record_free(&a);
}
END_TEST

/*
** The races of a record: not checked (0 races, found 0) stays not
** checked; more than FZ_RECORD_RACES kept travel as the first
** FZ_RECORD_RACES with the count found; a race the run log would refuse
** is refused at decoding.
*/
START_TEST(test_record_races)
{
	fz_record a, b;
	lm_buf buf = LM_BUF_INIT;
	lm_error err;
	full_record(&a);
	a.exec[0].race = 0;
	ls_result *x = &a.exec[1].r;
	for (int i = 0; i < x->n_races; i++) {
		/* as ls_result_free does */
		ls_race *y = &x->races[i];
		char **f[] = { &y->kind, &y->memory, &y->object, &y->a_func,
			       &y->a_block, &y->a_inst, &y->a_iter,
			       &y->a_engine, &y->b_func, &y->b_block,
			       &y->b_inst, &y->b_iter, &y->b_engine,
			       &y->last_common };
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
			free(*f[k]);
	}
	free(x->races);
	x->n_races = FZ_RECORD_RACES + 6;
	x->races_found = 1000;
	x->races = lm_xcalloc((size_t)x->n_races, sizeof *x->races);
	for (int i = 0; i < x->n_races; i++)
		mk_race(&x->races[i], i);
	fz_record_encode(&a, &buf);
	ck_assert_msg(fz_record_decode(buf.ptr, buf.size, &b, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(b.exec[0].race, 0);
	ck_assert_int_eq(b.exec[0].r.n_races, 0);
	ck_assert_int_eq(b.exec[1].race, 1);
	ck_assert_int_eq(b.exec[1].r.races_found, 1000);
	ck_assert_int_eq(b.exec[1].r.n_races, FZ_RECORD_RACES);
	for (int i = 0; i < FZ_RECORD_RACES; i++)
		same_race(&x->races[i], &b.exec[1].r.races[i]);
	fz_record_free(&b);
	/* every truncation refused */
	for (size_t n = 0; n < buf.size; n++) {
		ck_assert_int_eq(fz_record_decode(buf.ptr, n, &b, &err),
				 LM_EINPUT);
		fz_record_free(&b);
	}
	lm_buf_free(&buf);
	/* a kind, a memory, a pairing of them or a range the run log
	   refuses (race 0 is RAW in SBUF) */
	for (int k = 0; k < 5; k++) {
		ls_race *y = &x->races[0];
		char *kind = y->kind, *mem = y->memory;
		int64_t hi = y->hi;
		if (k == 0)
			y->kind = lm_xstrdup("RAR");
		else if (k == 1)
			y->memory = lm_xstrdup("HBM");
		else if (k == 2)
			y->kind = lm_xstrdup("SLOT");
		else if (k == 3)
			y->memory = lm_xstrdup("BARRIER");
		else
			y->hi = y->lo;
		fz_record_encode(&a, &buf);
		ck_assert_int_eq(fz_record_decode(buf.ptr, buf.size, &b, &err),
				 LM_EINPUT);
		ck_assert_contains(err.msg, "truncated or malformed");
		fz_record_free(&b);
		lm_buf_free(&buf);
		if (y->kind != kind) {
			free(y->kind);
			y->kind = kind;
		}
		if (y->memory != mem) {
			free(y->memory);
			y->memory = mem;
		}
		y->hi = hi;
	}
	fz_record_free(&a);
}
END_TEST

/* The options string: canonical, read back, refused when it is not one;
** the config record; the repro line. */
START_TEST(test_config_strings)
{
	fz_config c = FZ_CONFIG_INIT, d = FZ_CONFIG_INIT;
	lm_error err;
	char *s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=1-4 size=small schedules=0 skip= mix");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert(d.mix == 1 && d.loops == 0 && d.sync == 0);
	free(s);
	/* each case draws one of the six forms by its seed, repro says it */
	int seen = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		int l, dy, sy, l2, dy2, sy2;
		fz_case_form(&c, seed, &l, &dy, &sy);
		fz_case_form(&c, seed, &l2, &dy2, &sy2);
		ck_assert(l == l2 && dy == dy2 && sy == sy2);
		ck_assert(!dy || l);
		seen |= 1 << (l + dy + 3 * (sy == LS_GEN_SYNC_SEMAPHORES));
		s = fz_repro(&c, seed, "D");
		ck_assert_int_eq(strstr(s, " --dynamic ") != NULL, dy);
		ck_assert_int_eq(strstr(s, " --loops ") != NULL, l && !dy);
		ck_assert_int_eq(strstr(s, " --sync semaphores ") != NULL,
				 sy == LS_GEN_SYNC_SEMAPHORES);
		free(s);
	}
	ck_assert_int_eq(seen, 0x3f);
	c.mix = 0;
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=1-4 size=small schedules=0 skip=");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert_int_eq(d.mix, 0);
	free(s);
	c.lo = 2;
	c.hi = 16;
	c.size = LS_GEN_LARGE;
	c.schedules = 3;
	/* given in any order, written in link order */
	ck_assert_int_eq(lk_parse_skip("verify,fix_output_kind", &c.skip, &err),
			 0);
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=2-16 size=large schedules=3 "
			 "skip=fix_output_kind,verify");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert_int_eq(d.lo, 2);
	ck_assert_int_eq(d.hi, 16);
	ck_assert_int_eq(d.size, LS_GEN_LARGE);
	ck_assert_int_eq(d.schedules, 3);
	ck_assert_uint_eq(d.skip, c.skip);
	free(s);
	static const char *const bad[] = {
		"", "cores=1-4", "cores=4-1 size=small schedules=0 skip=",
		"cores=1-4 size=huge schedules=0 skip=",
		"cores=1-4 size=small schedules=0 skip=nope",
		"cores=0-4 size=small schedules=0 skip=",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(fz_gen_options_parse(bad[i], &d) == -1, "%s",
			      bad[i]);
	s = fz_skip_option(&c);
	ck_assert_str_eq(s, "--skip=fix_output_kind,verify");
	free(s);
	s = fz_repro(&c, 42, "DIR");
	char *want = lm_xasprintf("lncsim gen --cores %d --seed 42 --size large "
				  "-o DIR && lncsim diff "
				  "--skip=fix_output_kind,verify --schedules 3 "
				  "--seed 42 DIR/gen42", fz_case_cores(&c, 42));
	ck_assert_str_eq(s, want);
	free(want);
	free(s);
	/* --loops: a suffix of the options, a flag of the repro's gen */
	c.loops = 1;
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=2-16 size=large schedules=3 "
			 "skip=fix_output_kind,verify loops");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert_int_eq(d.loops, 1);
	ck_assert_uint_eq(d.skip, c.skip);
	free(s);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= loops", &d), 0);
	ck_assert_int_eq(d.loops, 1);
	ck_assert_uint_eq(d.skip, 0);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip=", &d), 0);
	ck_assert_int_eq(d.loops, 0);
	s = fz_repro(&c, 42, "DIR");
	ck_assert_contains(s, "--size large --loops -o DIR");
	free(s);
	/* --race: the last suffix, a flag of the repro's diff */
	c.race = 1;
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=2-16 size=large schedules=3 "
			 "skip=fix_output_kind,verify loops race");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert_int_eq(d.race, 1);
	ck_assert_int_eq(d.loops, 1);
	ck_assert_uint_eq(d.skip, c.skip);
	free(s);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= race", &d), 0);
	ck_assert_int_eq(d.race, 1);
	ck_assert_int_eq(d.loops, 0);
	s = fz_repro(&c, 42, "DIR");
	ck_assert_contains(s, "--schedules 3 --race --seed 42 DIR/gen42");
	free(s);
	c.race = 0;
	/* --dynamic and --sync semaphores: words after " loops" */
	c.dynamic = 1;
	c.sync = LS_GEN_SYNC_SEMAPHORES;
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=2-16 size=large schedules=3 "
			 "skip=fix_output_kind,verify loops dynamic "
			 "sync=semaphores");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert(d.loops == 1 && d.dynamic == 1 &&
		  d.sync == LS_GEN_SYNC_SEMAPHORES);
	free(s);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= sync=semaphores",
					      &d), 0);
	ck_assert(d.loops == 0 && d.dynamic == 0 &&
		  d.sync == LS_GEN_SYNC_SEMAPHORES);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= sync=deps", &d),
			 -1);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= dynamic loops",
					      &d), -1);
	/* a word list with a stray space is not one this lncsim wrote */
	static const char *const stray[] = {
		"cores=1-4 size=small schedules=0 skip= ",
		"cores=1-4 size=small schedules=0 skip= loops ",
		"cores=1-4 size=small schedules=0 skip= loops  race",
		"cores=1-4 size=small schedules=0 skip= sync=semaphores ",
		"cores=1-4 size=small schedules=0 skip=  race",
	};
	for (size_t i = 0; i < sizeof stray / sizeof stray[0]; i++)
		ck_assert_msg(fz_gen_options_parse(stray[i], &d) == -1, "'%s'",
			      stray[i]);
	s = fz_repro(&c, 42, "DIR");
	ck_assert_contains(s, "--size large --dynamic --sync semaphores -o DIR");
	free(s);
	c.loops = c.dynamic = c.sync = 0;
	/* all the words, race last */
	c.loops = c.dynamic = c.race = 1;
	c.sync = LS_GEN_SYNC_SEMAPHORES;
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=2-16 size=large schedules=3 "
			 "skip=fix_output_kind,verify loops dynamic "
			 "sync=semaphores race");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert(d.loops == 1 && d.dynamic == 1 && d.race == 1 &&
		  d.sync == LS_GEN_SYNC_SEMAPHORES);
	free(s);
	c.loops = c.dynamic = c.sync = c.race = 0;
	/* the cores of a seed are in the range and the same every time */
	for (uint64_t seed = 0; seed < 200; seed++) {
		int k = fz_case_cores(&c, seed);
		ck_assert(k >= 2 && k <= 16 && k == fz_case_cores(&c, seed));
	}
	/* the config record, with its keep directory and null flag */
	lm_buf b = LM_BUF_INIT;
	snprintf(c.keep, sizeof c.keep, "kept here");
	c.null_cases = 1;
	c.case_timeout_ms = 1500;
	fz_config_encode(&c, &b);
	fz_config e = FZ_CONFIG_INIT;
	ck_assert_int_eq(e.case_timeout_ms, FZ_CASE_TIMEOUT_MS);
	ck_assert_int_eq(fz_config_decode(b.ptr, b.size, &e, &err), 0);
	ck_assert_str_eq(e.keep, "kept here");
	ck_assert_int_eq(e.null_cases, 1);
	ck_assert_int_eq(e.case_timeout_ms, 1500);
	ck_assert_uint_eq(e.skip, c.skip);
	ck_assert_int_eq(fz_config_decode(b.ptr, b.size - 1, &e, &err),
			 LM_EINPUT);
	b.ptr[4] = 7;
	ck_assert_int_eq(fz_config_decode(b.ptr, b.size, &e, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "version 7");
	lm_buf_free(&b);
}
END_TEST

START_TEST(test_signatures)
{
	char *s = fz_tensor_class("y_nc12.h3_0");
	ck_assert_str_eq(s, "y_nc#.h#_#");
	free(s);
	s = fz_error_class("verifier: gen12/nc3/sg0/def.json: function nc3: "
			   "instruction 'dma_17' waits on \"sem 4\" for 12 "
			   "values, 0x3f800000 and 1.5e-3");
	ck_assert_str_eq(s, "verifier: gen#/nc#/sg#/def.json: function nc#: "
			 "instruction '*' waits on \"*\" for # values, # and #");
	free(s);
	/* two seeds of one bug are one signature */
	char *a = fz_signature("output-set", "output set: the linked module "
			       "has an unexpected external output 'h0' (a "
			       "cross-core hand-off)", NULL, -1, 0, 0);
	char *b = fz_signature("output-set", "output set: the linked module "
			       "has an unexpected external output 'y_nc2_peek' "
			       "(a cross-core hand-off)", NULL, -1, 0, 0);
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(a, "output-set|output set: the linked module has an "
			 "unexpected external output '*' (a cross-core "
			 "hand-off)|-");
	free(a);
	free(b);
	/* positions */
	struct { int64_t first, mism, count; const char *pos; } p[] = {
		{ 0, 16, 16, "all" }, { 0, 3, 16, "first" }, { 15, 1, 16, "last" },
		{ 7, 2, 16, "inner" }, { 0, 1, 1, "all" },
	};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
		s = fz_signature("mismatch", "whatever 12", "z_nc4", p[i].first,
				 p[i].mism, p[i].count);
		char *want = lm_xasprintf("mismatch|z_nc#|%s", p[i].pos);
		ck_assert_str_eq(s, want);
		free(want);
		free(s);
	}
	/* the separator stays one, the class is bounded */
	s = fz_signature("link", "a|b", NULL, -1, 0, 0);
	ck_assert_str_eq(s, "link|a/b|-");
	free(s);
	char big[1000];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	s = fz_error_class(big);
	ck_assert_int_le(strlen(s), 161);
	free(s);
	s = fz_signature("", "", NULL, -1, 0, 0);
	ck_assert_str_eq(s, "error||-");
	free(s);
}
END_TEST

/* ---- the coordinator -------------------------------------------------- */

START_TEST(test_coord_handout)
{
	fz_plan p = { 10, 15, NULL, 0, 3 };
	fz_coord *c = fz_coord_new(&p);
	uint64_t s;
	fz_coord_stats st;
	fz_coord_get_stats(c, &st);
	ck_assert_uint_eq(st.total, 5);
	/* by request, in seed order */
	ck_assert_int_eq(fz_coord_next(c, 0, &s), FZ_NEXT_RUN);
	ck_assert_uint_eq(s, 10);
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_RUN);
	ck_assert_uint_eq(s, 11);
	ck_assert_int_eq(fz_coord_next(c, 2, &s), FZ_NEXT_RUN);
	ck_assert_uint_eq(s, 12);
	ck_assert_int_eq(fz_coord_running(c, 1, &s), 1);
	ck_assert_uint_eq(s, 11);
	/* worker 1 is fast: it gets the next ones */
	ck_assert_int_eq(fz_coord_result(c, 1, 11), 1);
	ck_assert_int_eq(fz_coord_running(c, 1, &s), 0);
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_RUN);
	ck_assert_uint_eq(s, 13);
	ck_assert_int_eq(fz_coord_result(c, 1, 13), 1);
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_RUN);
	ck_assert_uint_eq(s, 14);
	ck_assert_int_eq(fz_coord_result(c, 1, 14), 1);
	/* nothing new, but cases run: wait (one may come back) */
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_WAIT);
	/* a result of a case the worker does not run is dropped */
	ck_assert_int_eq(fz_coord_result(c, 0, 12), 0);
	ck_assert_int_eq(fz_coord_result(c, 1, 10), 0);
	ck_assert_int_eq(fz_coord_finished(c), 0);
	ck_assert_int_eq(fz_coord_result(c, 0, 10), 1);
	ck_assert_int_eq(fz_coord_result(c, 2, 12), 1);
	ck_assert_int_eq(fz_coord_finished(c), 1);
	ck_assert_int_eq(fz_coord_next(c, 0, &s), FZ_NEXT_NONE);
	fz_coord_get_stats(c, &st);
	ck_assert_uint_eq(st.results, 5);
	ck_assert_uint_eq(st.dropped, 2);
	ck_assert_uint_eq(st.handed, 5);
	fz_coord_free(c);
}
END_TEST

/* Recorded seeds are not handed out; they are counted as skipped. */
START_TEST(test_coord_resume)
{
	fz_range done[] = { { 1, 12 }, { 15, 15 }, { 17, 17 }, { 19, 30 } };
	fz_plan p = { 10, 20, done, 4, 1 };
	fz_coord *c = fz_coord_new(&p);
	fz_coord_stats st;
	uint64_t s, got[10];
	int n = 0;
	fz_coord_get_stats(c, &st);
	/* 10 11 12, 15, 17, 19 recorded: 13 14 16 18 run */
	ck_assert_uint_eq(st.skipped, 6);
	ck_assert_uint_eq(st.total, 4);
	while (fz_coord_next(c, 0, &s) == FZ_NEXT_RUN) {
		ck_assert_int_lt(n, 10);
		got[n++] = s;
		ck_assert_int_eq(fz_coord_result(c, 0, s), 1);
	}
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(got[0], 13);
	ck_assert_uint_eq(got[1], 14);
	ck_assert_uint_eq(got[2], 16);
	ck_assert_uint_eq(got[3], 18);
	ck_assert_int_eq(fz_coord_finished(c), 1);
	fz_coord_free(c);
	/* everything recorded: finished at once */
	fz_range all[] = { { 0, 100 } };
	fz_plan q = { 10, 20, all, 1, 2 };
	c = fz_coord_new(&q);
	ck_assert_int_eq(fz_coord_finished(c), 1);
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_NONE);
	fz_coord_free(c);
}
END_TEST

/* A lost case goes out again once, before new seeds; then it is final. */
START_TEST(test_coord_lost)
{
	fz_plan p = { 1, 4, NULL, 0, 3 };
	fz_coord *c = fz_coord_new(&p);
	uint64_t s, l;
	fz_coord_stats st;
	ck_assert_int_eq(fz_coord_next(c, 0, &s), FZ_NEXT_RUN);   /* 1 */
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_RUN);   /* 2 */
	ck_assert_int_eq(fz_coord_lost(c, 2, &l), FZ_LOST_NONE);
	ck_assert_int_eq(fz_coord_lost(c, 0, &l), FZ_LOST_REISSUE);
	ck_assert_uint_eq(l, 1);
	/* the lost case first, whoever asks */
	ck_assert_int_eq(fz_coord_next(c, 2, &s), FZ_NEXT_RUN);
	ck_assert_uint_eq(s, 1);
	ck_assert_int_eq(fz_coord_next(c, 0, &s), FZ_NEXT_RUN);
	ck_assert_uint_eq(s, 3);
	/* lost again: final */
	ck_assert_int_eq(fz_coord_lost(c, 2, &l), FZ_LOST_FINAL);
	ck_assert_uint_eq(l, 1);
	ck_assert_int_eq(fz_coord_result(c, 1, 2), 1);
	ck_assert_int_eq(fz_coord_result(c, 0, 3), 1);
	ck_assert_int_eq(fz_coord_finished(c), 1);
	fz_coord_get_stats(c, &st);
	ck_assert_uint_eq(st.reissued, 1);
	ck_assert_uint_eq(st.given_up, 1);
	ck_assert_uint_eq(st.results, 2);
	fz_coord_free(c);
}
END_TEST

/* Stopped: nothing more goes out (lost cases neither); running finish. */
START_TEST(test_coord_stop)
{
	fz_plan p = { 1, 100, NULL, 0, 2 };
	fz_coord *c = fz_coord_new(&p);
	uint64_t s, l;
	ck_assert_int_eq(fz_coord_next(c, 0, &s), FZ_NEXT_RUN);
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_RUN);
	ck_assert_int_eq(fz_coord_lost(c, 1, &l), FZ_LOST_REISSUE);
	fz_coord_stop(c);
	ck_assert_int_eq(fz_coord_stopped(c), 1);
	ck_assert_int_eq(fz_coord_next(c, 1, &s), FZ_NEXT_NONE);
	ck_assert_int_eq(fz_coord_finished(c), 0);
	ck_assert_int_eq(fz_coord_result(c, 0, 1), 1);
	ck_assert_int_eq(fz_coord_finished(c), 1);
	fz_coord_free(c);
	/* a first loss once stopped is dropped, not run again */
	c = fz_coord_new(&p);
	ck_assert_int_eq(fz_coord_next(c, 0, &s), FZ_NEXT_RUN);
	fz_coord_stop(c);
	ck_assert_int_eq(fz_coord_lost(c, 0, &l), FZ_LOST_DROPPED);
	ck_assert_int_eq(fz_coord_finished(c), 1);
	fz_coord_free(c);
}
END_TEST

/* A small random number generator (xorshift). */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
** At random: workers that finish, lose cases, die and come back; resume
** ranges. Whatever happens, each seed of the plan not recorded ends with
** exactly one result or one final loss, no seed runs on two workers at
** once, and a case is lost at most twice.
*/
START_TEST(test_coord_random)
{
	enum { W = 6, N = 300 };
	for (uint64_t round = 1; round <= 40; round++) {
		uint64_t x = round * 0x9e3779b97f4a7c15ULL;
		fz_range done[3] = { { 5, 9 }, { 100, 100 }, { 250, 260 } };
		fz_plan p = { 1, 1 + N, done, round % 2 ? 3 : 0, W };
		fz_coord *c = fz_coord_new(&p);
		int ends[N + 2], losses[N + 2], busy[W];
		uint64_t run[W];
		memset(ends, 0, sizeof ends);
		memset(losses, 0, sizeof losses);
		memset(busy, 0, sizeof busy);
		for (int step = 0; step < 100000 && !fz_coord_finished(c);
		     step++) {
			int w = (int)(rnd(&x) % W), what = (int)(rnd(&x) % 10);
			uint64_t s, l;
			if (!busy[w]) {
				int r = fz_coord_next(c, w, &s);
				if (r == FZ_NEXT_RUN) {
					for (int k = 0; k < W; k++)
						ck_assert(!busy[k] || run[k] != s);
					busy[w] = 1;
					run[w] = s;
				}
				continue;
			}
			if (what < 7) {
				ck_assert_int_eq(fz_coord_result(c, w, run[w]), 1);
				ends[run[w]]++;
				busy[w] = 0;
			} else {
				int r = fz_coord_lost(c, w, &l);
				ck_assert_uint_eq(l, run[w]);
				losses[l]++;
				ck_assert(r == FZ_LOST_REISSUE || r == FZ_LOST_FINAL);
				ck_assert_int_eq(r == FZ_LOST_FINAL, losses[l] == 2);
				if (r == FZ_LOST_FINAL)
					ends[l]++;
				busy[w] = 0;
			}
		}
		ck_assert_int_eq(fz_coord_finished(c), 1);
		for (uint64_t s = 1; s <= N; s++) {
			int recorded = p.n_done && ((s >= 5 && s <= 9) || s == 100 ||
						    (s >= 250 && s <= 260));
			ck_assert_msg(ends[s] == (recorded ? 0 : 1),
				      "round %llu seed %llu: %d ends",
				      (unsigned long long)round,
				      (unsigned long long)s, ends[s]);
			ck_assert_int_le(losses[s], 2);
		}
		fz_coord_free(c);
	}
}
END_TEST

/* ---- the driver and its sink over a scripted transport ---------------- */

/* What a scripted worker does with a case. */
enum { DO_PASS, DO_FAIL, DO_LOST, DO_DIE, DO_WRONG };

typedef struct script {
	int n;
	int announced;
	int busy[8], dead[8], gone_told[8], released[8];
	uint64_t seed[8];
	int cases_of[8];
	int lost_seen[64];
	lm_buf bufs[8];
	const fz_config *cfg;
	/* the plot */
	int (*plot)(struct script *s, int w, uint64_t seed);
	int interrupt_after;    /* > 0: raise the SIGINT flag after this many */
	int results;
} script;

static int scr_wait(fz_transport *t, double timeout, fz_event *ev, int max)
{
	script *s = t->impl;
	int k = 0;
	(void)timeout;
	if (!s->announced) {
		s->announced = 1;
		for (int w = 0; w < s->n; w++) {
			memset(&ev[k], 0, sizeof ev[k]);
			ev[k].kind = FZ_EV_READY;
			ev[k++].worker = w;
		}
		return k;
	}
	for (int w = 0; w < s->n && k < max; w++) {
		if (!s->busy[w])
			continue;
		s->busy[w] = 0;
		int what = s->plot(s, w, s->seed[w]);
		memset(&ev[k], 0, sizeof ev[k]);
		ev[k].worker = w;
		if (what == DO_DIE) {
			s->dead[w] = 1;
			ev[k].kind = FZ_EV_GONE;
			snprintf(ev[k].why, sizeof ev[k].why, "scripted death");
			k++;
			continue;
		}
		fz_record r;
		fz_record_init(&r);
		r.seed = s->seed[w] + (what == DO_WRONG ? 1000 : 0);
		r.cores = fz_case_cores(s->cfg, r.seed);
		char *opts = fz_gen_options(s->cfg);
		fz_record_set(&r.gen_options, opts);
		free(opts);
		if (what == DO_FAIL) {
			r.status = FZ_FAIL;
			fz_record_set(&r.kind, "mismatch");
			char *m = lm_xasprintf("mismatch: tensor 'y_nc%d' differs",
					       (int)(r.seed % 5));
			fz_record_set(&r.message, m);
			free(m);
			free(r.signature);
			m = lm_xasprintf("y_nc%d", (int)(r.seed % 5));
			r.signature = fz_signature("mismatch", r.message, m, 3, 1,
						   16);
			free(m);
		} else if (what == DO_LOST) {
			r.status = FZ_LOST;
			fz_record_set(&r.kind, "lost");
			fz_record_set(&r.message, "the case's process was killed by "
				      "signal 9 (Killed)");
		}
		s->bufs[w].size = 0;
		fz_record_encode(&r, &s->bufs[w]);
		fz_record_free(&r);
		ev[k].kind = FZ_EV_RESULT;
		ev[k].data = (const unsigned char *)s->bufs[w].ptr;
		ev[k].len = s->bufs[w].size;
		k++;
		if (++s->results == s->interrupt_after)
			fz_sigint_count = 1;
	}
	return k;
}

static void scr_assign(fz_transport *t, int w, uint64_t seed)
{
	script *s = t->impl;
	ck_assert(!s->busy[w] && !s->dead[w] && !s->released[w]);
	s->busy[w] = 1;
	s->seed[w] = seed;
	s->cases_of[w]++;
}

static void scr_release(fz_transport *t, int w)
{
	script *s = t->impl;
	s->released[w] = 1;
}

static int scr_live(fz_transport *t)
{
	script *s = t->impl;
	int k = 0;
	for (int w = 0; w < s->n; w++)
		k += !s->dead[w] && !s->released[w];
	return k;
}

static void scr_where(fz_transport *t, int w, char *buf, size_t n)
{
	(void)t;
	snprintf(buf, n, "scripted %d", w);
}

static void scr_transport(fz_transport *t, script *s)
{
	memset(t, 0, sizeof *t);
	t->n_workers = s->n;
	t->wait = scr_wait;
	t->assign = scr_assign;
	t->release = scr_release;
	t->live = scr_live;
	t->where = scr_where;
	t->impl = s;
}

/* Seeds % 7 fail; seed 13 is lost every time; seed 20 once; worker 2
** dies with its third case. */
static int plot_mixed(script *s, int w, uint64_t seed)
{
	if (w == 2 && s->cases_of[w] == 3)
		return DO_DIE;
	if (seed == 13)
		return DO_LOST;
	if (seed == 20 && !s->lost_seen[20]++)
		return DO_LOST;
	return seed % 7 ? DO_PASS : DO_FAIL;
}

/* A campaign of seeds 1..n driven over the script into a fresh
** database; returns how the drive ended. */
static int drive_script(script *s, const char *db_path, uint64_t n,
			int stop_on_fail, fz_coord_stats *st)
{
	static fz_config cfg = FZ_CONFIG_INIT;
	ldb *db = NULL;
	lm_error err;
	ldb_campaign k;
	memset(&k, 0, sizeof k);
	ck_assert_int_eq(ldb_open(&db, db_path, LDB_CREATE, &err), 0);
	char *opts = fz_gen_options(&cfg);
	k.name = (char *)"scripted";
	k.gen_options = opts;
	k.first_seed = 1;
	k.count = n;
	ck_assert_msg(ldb_campaign_add(db, &k, &err) == 0, "%s", err.msg);
	free(opts);
	s->cfg = &cfg;
	fz_transport t;
	scr_transport(&t, s);
	fz_plan p = { 1, 1 + n, NULL, 0, s->n };
	fz_coord *co = fz_coord_new(&p);
	fz_sink_opts so;
	memset(&so, 0, sizeof so);
	so.db = db;
	so.db_path = db_path;
	so.campaign = "scripted";
	so.cfg = &cfg;
	so.quiet = 1;
	fz_sink *sink = fz_sink_new(&so);
	fz_drive_opts o = { stop_on_fail, 0 };
	int saved = hide_stdout();
	int end = fz_drive(&t, co, sink, &o);
	fz_coord_get_stats(co, st);
	fz_sink_summary(sink, st, s->n, "job", 0, 0);
	show_stdout(saved);
	fz_sink_free(sink);
	fz_coord_free(co);
	ldb_close(db);
	for (int w = 0; w < 8; w++)
		lm_buf_free(&s->bufs[w]);
	return end;
}

/*
** The driver: every seed ends in the database once -- the failures
** under their signatures, a case lost twice as an error of kind lost,
** a case lost once (its process, its worker) run again and recorded
** once.
*/
START_TEST(test_drive_lost_cases)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "drive.db");
	script s;
	fz_coord_stats st;
	memset(&s, 0, sizeof s);
	s.n = 4;
	s.plot = plot_mixed;
	ck_assert_int_eq(drive_script(&s, db, 40, 0, &st), FZ_END_DONE);
	each_seed_once(db, "scripted", 1, 40);
	ck_assert_uint_eq(st.reissued, 3);
	ck_assert_uint_eq(st.given_up, 1);
	char *t = sql_text(db, "SELECT r.status || '|' || c.kind || '|' || "
			   "r.message FROM cases c JOIN runs r ON r.id = c.run_id "
			   "WHERE c.seed = 13");
	ck_assert_contains(t, "error|lost|lost twice: on scripted ");
	ck_assert_contains(t, "killed by signal 9");
	free(t);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM runs r JOIN cases c "
				 "ON r.id = c.run_id WHERE r.status = 'fail'"), 5);
	/* seeds 7, 14, 21, 28, 35: y_nc2, y_nc4, y_nc1, y_nc3, y_nc0 -- one
	** class (y_nc#), one position: one signature */
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM failures"), 2);
	ck_assert_int_eq(tu_sql_int(db, "SELECT hits FROM failures WHERE "
				 "signature = 'mismatch|y_nc#|inner'"), 5);
	ck_assert_int_eq(tu_sql_int(db, "SELECT seed FROM failures WHERE "
				 "signature = 'mismatch|y_nc#|inner'"), 7);
	ck_assert_int_eq(tu_sql_int(db, "SELECT hits FROM failures WHERE kind = "
				 "'lost'"), 1);
	t = sql_text(db, "SELECT signature FROM failures WHERE kind = 'lost'");
	ck_assert_str_eq(t, "lost|the case's process was killed by signal # "
			 "(Killed)|-");
	free(t);
	ck_assert_int_eq(s.dead[2], 1);
	for (int w = 0; w < 4; w++)
		ck_assert_int_eq(s.released[w], w != 2);
	free(db);
	free(d);
}
END_TEST

static int plot_die(script *s, int w, uint64_t seed)
{
	(void)s;
	(void)w;
	(void)seed;
	return DO_DIE;
}

static int plot_fail_9(script *s, int w, uint64_t seed)
{
	(void)s;
	(void)w;
	return seed == 9 ? DO_FAIL : DO_PASS;
}

static int plot_pass(script *s, int w, uint64_t seed)
{
	(void)s;
	(void)w;
	(void)seed;
	return DO_PASS;
}

/* Seed 5's first answer names another seed. */
static int plot_wrong_5(script *s, int w, uint64_t seed)
{
	(void)w;
	if (seed == 5 && !s->lost_seen[5]++)
		return DO_WRONG;
	return DO_PASS;
}

/*
** A worker that answers a case with another seed's result: its case is
** taken for lost and handed out again (the worker is idle, one frame per
** case), and the campaign ends with every seed recorded once.
*/
START_TEST(test_drive_wrong_seed)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "wrong.db");
	script s;
	fz_coord_stats st;
	memset(&s, 0, sizeof s);
	s.n = 2;
	s.plot = plot_wrong_5;
	ck_assert_int_eq(drive_script(&s, db, 12, 0, &st), FZ_END_DONE);
	each_seed_once(db, "scripted", 1, 12);
	ck_assert_uint_eq(st.reissued, 1);
	ck_assert_uint_eq(st.given_up, 0);
	free(db);
	free(d);
}
END_TEST

/* Every worker dead with work left; --stop; an interruption. */
START_TEST(test_drive_ends)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "die.db");
	script s;
	fz_coord_stats st;
	memset(&s, 0, sizeof s);
	s.n = 3;
	s.plot = plot_die;
	ck_assert_int_eq(drive_script(&s, db, 20, 0, &st), FZ_END_NO_WORKERS);
	/* three lost once, handed out again to nobody */
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM cases"), 0);
	free(db);

	db = lm_path_join(d, "stop.db");
	memset(&s, 0, sizeof s);
	s.n = 2;
	s.plot = plot_fail_9;
	ck_assert_int_eq(drive_script(&s, db, 100, 1, &st), FZ_END_DONE);
	/* the cases running at the failure finished; nothing after */
	ck_assert_int_le(tu_sql_int(db, "SELECT count(*) FROM cases"), 11);
	ck_assert_int_ge(tu_sql_int(db, "SELECT count(*) FROM cases"), 9);
	ck_assert_int_eq(tu_sql_int(db, "SELECT hits FROM failures"), 1);
	free(db);

	db = lm_path_join(d, "int.db");
	memset(&s, 0, sizeof s);
	s.n = 2;
	s.plot = plot_pass;
	s.interrupt_after = 10;
	int end = drive_script(&s, db, 100, 0, &st);
	fz_sigint_count = 0;
	ck_assert_int_eq(end, FZ_END_INTERRUPTED);
	ck_assert_int_ge(tu_sql_int(db, "SELECT count(*) FROM cases"), 10);
	ck_assert_int_le(tu_sql_int(db, "SELECT count(*) FROM cases"), 12);
	ck_assert_int_eq(st.running, 0);
	free(db);
	free(d);
}
END_TEST

/* ---- lncsim fuzz, end to end ------------------------------------------ */

/*
** fuzz --race logs its cases' runs as checked: with init_queues skipped
** the linked runs race (rows in races, listed by db races) and the cases
** that do not link have no run to check; a clean campaign's runs are
** checked with none ("no races"); without --race they are not checked.
*/
START_TEST(test_fuzz_race_rows)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "race.db");
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "racy",
			     "--race", "--skip=init_queues", "--count", "5",
			     NULL);
	ck_assert_msg(r.status == 1, "%d %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "  races: linked run ");
	tu_run_free(&r);
	/* seeds 3 and 5 fail to link (no executions); 1, 2, 4 ran, their
	   linked runs racing */
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM cases c JOIN "
				    "runs r ON r.id = c.run_id WHERE "
				    "c.campaign = 'racy' AND c.kind = 'link' "
				    "AND r.races IS NULL"), 2);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM cases c JOIN "
				    "runs r ON r.id = c.run_id WHERE "
				    "c.campaign = 'racy' AND r.races > 0"), 3);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM races"),
			 tu_sql_int(db, "SELECT sum(races) FROM runs"));
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM races WHERE "
				    "mode <> 'linked' OR a_function = '' OR "
				    "b_engine = '' OR hi <= lo"), 0);
	int64_t id = tu_sql_int(db, "SELECT c.run_id FROM cases c WHERE "
				"c.campaign = 'racy' AND c.seed = 4");
	int64_t n = tu_sql_int(db, "SELECT races FROM runs WHERE id = (SELECT "
			       "run_id FROM cases WHERE seed = 4)");
	ck_assert_int_gt(n, 1);
	char ids[32], want[64];
	snprintf(ids, sizeof ids, "%lld", (long long)id);
	snprintf(want, sizeof want, "run %lld: %lld races\n", (long long)id,
		 (long long)n);
	r = tu_lncsim(d, "db", "races", "--db", db, "--run", ids, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, want);
	ck_assert_contains(r.out, "  linked ");
	tu_run_free(&r);
	/* a clean campaign: checked, none */
	r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "clean", "-q",
		      "--race", "--count", "3", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM cases c JOIN "
				    "runs r ON r.id = c.run_id WHERE "
				    "c.campaign = 'clean' AND r.races = 0"), 3);
	id = tu_sql_int(db, "SELECT min(run_id) FROM cases WHERE "
			"campaign = 'clean'");
	snprintf(ids, sizeof ids, "%lld", (long long)id);
	snprintf(want, sizeof want, "run %lld: no races", (long long)id);
	r = tu_lncsim(d, "db", "races", "--db", db, "--run", ids, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, want);
	tu_run_free(&r);
	/* without --race: not checked */
	r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "plain", "-q",
		      "--count", "2", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM cases c JOIN "
				    "runs r ON r.id = c.run_id WHERE "
				    "c.campaign = 'plain' AND r.races IS NULL"),
			 2);
	free(db);
	free(d);
}
END_TEST

/*
** The same seeds give the same stored results whatever the number of
** jobs (and in whatever order the cases finish).
*/
START_TEST(test_fuzz_jobs_same_results)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "same.db");
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "one", "-q",
			     "--count", "16", "--cores", "1-6", "--schedules", "1",
			     "--jobs", "1", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "three", "-q",
		      "--count", "16", "--cores", "1-6", "--schedules", "1",
		      "--jobs", "3", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, " cases/s, 3 jobs)");
	tu_run_free(&r);
	char *a = tu_campaign_dump(db, "one"), *b = tu_campaign_dump(db, "three");
	ck_assert_int_gt(strlen(a), 1000);
	ck_assert_msg(strstr(a, "\nmm|") != NULL, "no matmuls stored");
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	each_seed_once(db, "one", 1, 16);
	free(db);
	free(d);
}
END_TEST

/*
** A broken link: every failing case of it has one signature, stored once
** with its smallest seed and the count of its hits; FAIL lines only for
** news.
*/
START_TEST(test_fuzz_broken_link_signature)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "brk.db");
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "brk", "-q",
			     "--count", "24", "--cores", "2-3",
			     "--skip=fix_output_kind,verify", NULL);
	ck_assert_msg(r.status == 1, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 1 failure signature (1 new): lncsim db "
			   "failures --db ");
	/* at most a few FAIL lines (news, or a smaller seed) for many fails */
	int lines = 0;
	for (const char *p = r.out; (p = strstr(p, "FAIL seed ")); p++)
		lines++;
	int64_t fails = tu_sql_int(db, "SELECT count(*) FROM runs r JOIN cases c "
				"ON r.id = c.run_id WHERE r.status = 'fail'");
	ck_assert_int_gt(fails, 12);
	ck_assert_int_ge(lines, 1);
	ck_assert_int_lt(lines, fails);
	tu_run_free(&r);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM failures"), 1);
	ck_assert_int_eq(tu_sql_int(db, "SELECT hits FROM failures"), fails);
	ck_assert_int_eq(tu_sql_int(db, "SELECT seed FROM failures"),
			 tu_sql_int(db, "SELECT min(c.seed) FROM cases c JOIN runs r "
				 "ON r.id = c.run_id WHERE r.status = 'fail'"));
	char *sig = sql_text(db, "SELECT signature FROM failures");
	ck_assert_str_eq(sig, "output-set|output set: the linked module has an "
			 "unexpected external output '*' (a cross-core "
			 "hand-off)|-");
	free(sig);
	r = tu_lncsim(d, "db", "failures", "--db", db, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "campaign brk  (cores=2-3 size=small "
			   "schedules=0 skip=fix_output_kind,verify mix, seeds 1..24");
	ck_assert_contains(r.out, "repro: lncsim gen --cores ");
	tu_run_free(&r);
	free(db);
	free(d);
}
END_TEST

/*
** Interrupted and resumed: SIGINT lets the running cases finish (exit
** 130), SIGTERM cuts them short (143); --resume then runs exactly the
** seeds without a result, with the stored options.
*/
static void interrupt_and_resume(int sig, const char *name)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "int.db");
	const char *argv[] = { "fuzz", "--db", db, "--campaign", name, "-q",
			       "--count", "150", "--cores", "3-5", "--jobs", "2",
			       NULL };
	tu_proc p;
	tu_start(NULL, d, argv, &p);
	wait_cases(db, name, 4);
	ck_assert_int_eq(kill(p.pid, sig), 0);
	tu_run r = tu_finish(&p);
	ck_assert_msg(r.status == (sig == SIGINT ? 130 : 143), "status %d: %s%s",
		      r.status, r.out, r.err);
	ck_assert_contains(r.out, "fuzz: interrupted: ");
	ck_assert_contains(r.out, "continue with: lncsim fuzz --db ");
	tu_run_free(&r);
	int64_t k = cases_of(db, name);
	ck_assert_int_ge(k, 4);
	ck_assert_int_lt(k, 150);
	char *q = lm_xasprintf("SELECT count(DISTINCT seed) FROM cases WHERE "
			       "campaign = '%s'", name);
	ck_assert_int_eq(tu_sql_int(db, q), k);
	free(q);
	/* the options come from the campaign; given ones must agree */
	r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "--campaign", name,
		      "--cores", "2-5", "-q", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--cores differs");
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "--campaign", name,
		      "-q", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	char *want = lm_xasprintf("fuzz: %lld case%s, ", (long long)(150 - k),
				  150 - k == 1 ? "" : "s");
	ck_assert_contains(r.out, want);
	free(want);
	want = lm_xasprintf("fuzz: %lld seed%s already recorded in campaign %s: "
			    "skipped", (long long)k, k == 1 ? "" : "s", name);
	ck_assert_contains(r.out, want);
	free(want);
	tu_run_free(&r);
	each_seed_once(db, name, 1, 150);
	/* once more: nothing left to run */
	r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "-q", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "fuzz: 0 cases, ");
	tu_run_free(&r);
	each_seed_once(db, name, 1, 150);
	free(db);
	free(d);
}

START_TEST(test_fuzz_sigint_resume)
{
	interrupt_and_resume(SIGINT, "int");
}
END_TEST

START_TEST(test_fuzz_sigterm_resume)
{
	interrupt_and_resume(SIGTERM, "term");
}
END_TEST

/* The state letter of process pid (R, S, T, Z, ...), 0 when it is gone. */
static char proc_state(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

/* Wait until what p wrote to its standard error holds text. */
static void wait_stderr(const tu_proc *p, const char *text)
{
	char buf[16384];
	int i;
	for (i = 0; i < 12000; i++) {
		ssize_t n = pread(p->err_fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		if (strstr(buf, text))
			break;
		nap_ms(10);
	}
	ck_assert_msg(i < 12000, "no '%s' on standard error: %s", text, buf);
}

/* The pids of lncsim's case servers (its children) and their cases. */
static int case_processes(int pid, int *out, int max)
{
	int servers[64], n = tu_children(pid, servers, 64), k = 0;
	for (int i = 0; i < n && k < max; i++)
		k += tu_children(servers[i], out + k, max - k);
	return k;
}

/*
** A case whose process is killed is lost and handed out again; a case
** server killed takes its case with it, which goes to another; every
** seed still ends with one result.
*/
START_TEST(test_fuzz_killed_case_and_server)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "kill.db");
	const char *argv[] = { "fuzz", "--db", db, "--campaign", "k", "-q",
			       "--count", "60", "--cores", "4-8", "--jobs", "2",
			       NULL };
	tu_proc p;
	tu_start(NULL, d, argv, &p);
	wait_cases(db, "k", 2);
	/* a case process may end between finding it and the kill (a zombie
	   takes a signal too, to no effect): stop it first, and kill it
	   only once it is seen stopped, so it surely dies by the signal */
	int pids[16], killed = 0;
	for (int i = 0; i < 6000 && !killed; i++) {
		int n = case_processes(p.pid, pids, 16);
		if (n > 0 && kill(pids[0], SIGSTOP) == 0) {
			for (int w = 0; w < 200 && !killed; w++) {
				char st = proc_state(pids[0]);
				if (st == 'T' || st == 't')
					killed = kill(pids[0], SIGKILL) == 0;
				else if (st == 'Z' || st == 0)
					break;
				else
					nap_ms(1);
			}
		}
		if (!killed)
			nap_ms(5);
	}
	ck_assert_msg(killed, "no case process to kill");
	/* the killed case's second try logged before a server is killed:
	   else that server may be running it, and it is lost twice. First
	   its server's report of the loss: until then the cases may look
	   settled with the killed one simply not logged yet, and killing
	   that server would lose the report */
	wait_stderr(&p, "the case's process was killed by signal 9");
	wait_settled(db, "k", 10);
	int servers[8];
	ck_assert_int_eq(tu_children(p.pid, servers, 8), 2);
	ck_assert_int_eq(kill(servers[1], SIGKILL), 0);
	tu_run r = tu_finish(&p);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.err, "the case's process was killed by signal 9");
	ck_assert_contains(r.err, "its case server (pid ");
	ck_assert_contains(r.err, "it is handed out again");
	ck_assert_contains(r.out, "handed out again; 0 lost twice");
	tu_run_free(&r);
	each_seed_once(db, "k", 1, 60);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM runs r JOIN cases c "
				 "ON c.run_id = r.id WHERE r.status <> 'pass'"),
			 0);
	free(db);
	free(d);
}
END_TEST

/*
** SIGUSR1 to the case servers and their cases (what MPICH's mpiexec
** sends a job's process groups when one of its ranks died) ends
** neither: no case is lost.
*/
START_TEST(test_fuzz_sigusr1_ignored)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "usr1.db");
	const char *argv[] = { "fuzz", "--db", db, "--campaign", "u", "-q",
			       "--count", "40", "--cores", "3-6", "--jobs", "2",
			       NULL };
	tu_proc p;
	tu_start(NULL, d, argv, &p);
	wait_cases(db, "u", 2);
	int servers[8], cases[16];
	ck_assert_int_eq(tu_children(p.pid, servers, 8), 2);
	int n = case_processes(p.pid, cases, 16);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kill(servers[i], SIGUSR1), 0);
	for (int i = 0; i < n; i++)
		kill(cases[i], SIGUSR1);   /* it may have ended meanwhile */
	wait_cases(db, "u", 6);
	ck_assert_int_eq(tu_children(p.pid, servers, 8), 2);
	tu_run r = tu_finish(&p);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 40 cases, 40 passed, 0 failed");
	ck_assert_msg(!strstr(r.err, "handed out again"), "%s", r.err);
	tu_run_free(&r);
	each_seed_once(db, "u", 1, 40);
	free(db);
	free(d);
}
END_TEST

/* --duration ends a campaign by time; a duration campaign stores no
** count; --null-cases runs the coordinator alone. */
START_TEST(test_fuzz_duration)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "dur.db");
	double t0 = lm_seconds();
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "dur", "-q",
			     "--duration", "2s", "--null-cases", "--jobs", "2",
			     NULL);
	double el = lm_seconds() - t0;
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_msg(el >= 2 && el < 60, "%.1f s", el);
	tu_run_free(&r);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count FROM campaigns"), 0);
	int64_t n = cases_of(db, "dur");
	ck_assert_int_gt(n, 100);
	each_seed_once(db, "dur", 1, n);
	/* resumed for another second: the seeds after */
	r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "-q", "--duration", "1",
		      NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	int64_t m = cases_of(db, "dur");
	ck_assert_int_gt(m, n);
	each_seed_once(db, "dur", 1, m);
	r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "3000",
		      "--null-cases", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "fuzz: 3000 cases, 3000 passed, 0 failed");
	ck_assert_contains(r.out, "fuzz: coordinator: ");
	tu_run_free(&r);
	free(db);
	free(d);
}
END_TEST

/* fz_kept_remove: only a case entry right beneath the keep directory. */
START_TEST(test_kept_remove)
{
	char *d = tu_tmpdir("fuzz");
	char *keep = lm_path_join(d, "kept");
	lm_error err;
	ck_assert_int_eq(mkdir(keep, 0755), 0);
	char *c7 = lm_path_join(keep, "case-7.2");
	ck_assert_int_eq(mkdir(c7, 0755), 0);
	char *f = tu_write(c7, "REPRO", "x\n");
	static const char *const bad[] = {
		"case-7.2", "/kept/case-7.2", "%s/case-7.2/REPRO",
		"%s/../kept/case-7.2", "%s/case-7.", "%s/case-", "%s/case-7x",
		"%s/notes", "%s/case-7.2/../../x", "%sx/case-7.2",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *p = lm_xasprintf(bad[i], keep);
		ck_assert_msg(fz_kept_remove(keep, p, &err) != 0, "%s", p);
		ck_assert_contains(err.msg, "left alone");
		free(p);
	}
	ck_assert_int_eq(access(f, F_OK), 0);
	ck_assert_int_eq(fz_kept_remove(keep, c7, &err), 0);
	ck_assert_int_eq(access(c7, F_OK), -1);
	ck_assert_int_eq(access(keep, F_OK), 0);
	/* the directory spelled with a trailing slash, as a user may */
	char *slash = lm_xasprintf("%s/", keep);
	char *c8 = lm_path_join(slash, "case-8");
	ck_assert_int_eq(mkdir(c8, 0755), 0);
	ck_assert_msg(fz_kept_remove(slash, c8, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(access(c8, F_OK), -1);
	free(c8);
	free(slash);
	free(f);
	free(c7);
	free(keep);
	free(d);
}
END_TEST

/*
** --case-timeout: a case still running at the limit is killed and
** recorded as a failure of kind timeout, under one signature (no real
** case ends within a millisecond: it forks, generates and simulates);
** the campaign goes on and ends.
*/
START_TEST(test_fuzz_case_timeout)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "to.db");
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "to", "-q",
			     "--count", "5", "--jobs", "2", "--cores", "2",
			     "--case-timeout", "0.001", NULL);
	ck_assert_msg(r.status == 1, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 5 cases, 0 passed, 5 failed");
	ck_assert_contains(r.out, "the case ran longer than --case-timeout "
			   "0.001 s and was killed");
	ck_assert_contains(r.out, "fuzz: 1 failure signature (1 new)");
	tu_run_free(&r);
	each_seed_once(db, "to", 1, 5);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM failures WHERE "
				 "signature LIKE 'timeout|%' AND hits = 5 AND "
				 "seed = 1"), 1);
	/* a case killed leaves nothing half written beneath --keep-failures */
	r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "4", "--jobs", "2",
		      "--cores", "2", "--case-timeout", "0.001",
		      "--keep-failures", "kt/", NULL);
	ck_assert_msg(r.status == 1, "%s%s", r.out, r.err);
	tu_run_free(&r);
	char *kt = lm_path_join(d, "kt");
	DIR *dp = opendir(kt);
	struct dirent *e;
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		ck_assert_msg(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
			      "left: %s", e->d_name);
	closedir(dp);
	free(kt);
	/* a limit the cases stay under changes nothing */
	r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "2", "--jobs", "1",
		      "--cores", "2", "--case-timeout", "10m", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "fuzz: 2 cases, 2 passed, 0 failed");
	tu_run_free(&r);
	free(db);
	free(d);
}
END_TEST

/*
** One campaign runs once at a time: a --resume while its first run is on
** is refused, naming the process; after it ends the resume runs. A lock
** file that is a symlink is not followed.
*/
START_TEST(test_fuzz_one_run_at_a_time)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "one.db");
	/* medium cases: the campaign must outlast the three commands
	   below by far, however fast the simulator gets */
	const char *argv[] = { "fuzz", "--db", db, "--campaign", "solo", "-q",
			       "--count", "400", "--cores", "2-3", "--size",
			       "medium", "--jobs", "1", NULL };
	tu_proc p;
	tu_start(NULL, d, argv, &p);
	wait_cases(db, "solo", 2);
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "--campaign",
			     "solo", "-q", NULL);
	ck_assert_msg(r.status == 2, "%d: %s%s", r.status, r.out, r.err);
	char *want = lm_xasprintf("campaign solo is being run by another "
				  "lncsim (process %ld)", (long)p.pid);
	ck_assert_contains(r.err, want);
	free(want);
	tu_run_free(&r);
	/* the newest campaign, resumed by default, is the same one */
	r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "-q", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "is being run by another lncsim");
	tu_run_free(&r);
	/* another campaign of the same database runs meanwhile */
	r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "other", "-q",
		      "--count", "2", "--null-cases", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	ck_assert_int_eq(kill(p.pid, SIGINT), 0);
	r = tu_finish(&p);
	ck_assert_int_eq(r.status, 130);
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "--campaign", "solo",
		      "-q", "--null-cases", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	each_seed_once(db, "solo", 1, 400);
	/* a symlink where the lock goes: refused, its target untouched */
	char *lock = lm_xasprintf("%s-fuzz.lock", db);
	char *target = lm_path_join(d, "target");
	ck_assert_int_eq(unlink(lock), 0);
	ck_assert_int_eq(symlink(target, lock), 0);
	r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "sym", "-q",
		      "--count", "1", "--null-cases", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "cannot open the campaign lock");
	tu_run_free(&r);
	ck_assert_int_eq(access(target, F_OK), -1);
	free(lock);
	free(target);
	free(db);
	free(d);
}
END_TEST

START_TEST(test_fuzz_refusals)
{
	char *d = tu_tmpdir("fuzz");
	char *db = lm_path_join(d, "ref.db");
	static const struct { const char *a[8], *msg; } bad[] = {
		{ { "fuzz", "--duration", "8x", NULL }, "--duration needs a time" },
		{ { "fuzz", "--duration", "0", NULL }, "--duration needs a time" },
		{ { "fuzz", "--campaign", "-x", NULL }, "--campaign needs a name" },
		{ { "fuzz", "--campaign", "a b", NULL }, "--campaign needs a name" },
		{ { "fuzz", "--resume", "--no-db", NULL }, "--resume needs the "
		  "database" },
		{ { "fuzz", "--campaign", "c", "--no-db", NULL }, "not with "
		  "--no-db" },
		{ { "fuzz", "--lost-after", "0", NULL }, "--lost-after must be" },
		{ { "fuzz", "--count", "0", NULL }, "--count must be" },
		{ { "fuzz", "--case-timeout", "soon", NULL }, "--case-timeout "
		  "needs a time" },
		{ { "fuzz", "--case-timeout", "8d", NULL }, "--case-timeout "
		  "needs a time" },
		/* --plain is none of the forms, in either order */
		{ { "fuzz", "--dynamic", "--plain", NULL }, "--plain is the "
		  "generator without" },
		{ { "fuzz", "--plain", "--loops", NULL }, "--plain is the "
		  "generator without" },
		{ { "fuzz", "--sync", "semaphores", "--plain", NULL }, "--plain "
		  "is the generator without" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tu_run r = tu_lncsimv(d, bad[i].a);
		ck_assert_msg(r.status == 2, "%s: %d", bad[i].msg, r.status);
		ck_assert_contains(r.err, bad[i].msg);
		tu_run_free(&r);
	}
	tu_run r = tu_lncsim(d, "fuzz", "--db", db, "--resume", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "ref.db: no campaign to resume");
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--db", db, "--resume", "--campaign", "nope",
		      NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "ref.db: no campaign nope to resume");
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "c", "--count", "2",
		      "-q", "--null-cases", NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--db", db, "--campaign", "c", "--count", "2",
		      "-q", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "campaign c exists: --resume continues it");
	tu_run_free(&r);
	/* a new campaign gets a name of its own, said in the summary */
	r = tu_lncsim(d, "fuzz", "--db", db, "--count", "2", "-q",
		      "--null-cases", "--skip=verify", NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	char *name = sql_text(db, "SELECT name FROM campaigns ORDER BY id DESC");
	ck_assert_msg(!strncmp(name, "fuzz-", 5) && strlen(name) == 25, "%s",
		      name);
	free(name);
	/* an MPI job's process in a build without MPI refuses */
#ifndef HAVE_MPI
	setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
	r = tu_lncsim(d, "fuzz", "--no-db", "--count", "2", NULL);
	unsetenv("OMPI_COMM_WORLD_SIZE");
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "built without MPI");
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--no-db", "--mpi", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--mpi: this lncsim is built without MPI");
	tu_run_free(&r);
#endif
	free(db);
	free(d);
}
END_TEST

/* --compute: the word " compute" before " race", read back; a string
** without it (every campaign made before it) means no compute ops; the
** repro's gen says --compute in the cases ordered by dependencies. */
START_TEST(test_config_compute)
{
	fz_config c = FZ_CONFIG_INIT, d = FZ_CONFIG_INIT;
	c.compute = 1;
	char *s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=1-4 size=small schedules=0 skip= mix "
			 "compute");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert(d.compute == 1 && d.mix == 1 && d.race == 0);
	free(s);
	c.race = 1;
	c.mix = 0;
	c.loops = 1;
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=1-4 size=small schedules=0 skip= loops "
			 "compute race");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert(d.compute == 1 && d.loops == 1 && d.race == 1 && !d.mix);
	free(s);
	s = fz_repro(&c, 7, "D");
	ck_assert_contains(s, " --loops --compute -o D ");
	free(s);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= loops race",
					      &d), 0);
	ck_assert(d.compute == 0 && d.loops == 1 && d.race == 1);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= compute", &d),
			 0);
	ck_assert(d.compute == 1 && d.loops == 0 && !d.mix);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= compute loops",
					      &d), -1);
	/* a mixed campaign: the cases drawn with semaphores have none */
	c.mix = 1;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		int l, dy, sy;
		fz_case_form(&c, seed, &l, &dy, &sy);
		s = fz_repro(&c, seed, "D");
		ck_assert_int_eq(strstr(s, " --compute ") != NULL,
				 sy == LS_GEN_SYNC_DEPS);
		free(s);
	}
}
END_TEST

/* --by-name: the word " by_name" after " compute", before " race", read
** back (in that order only); the repro's gen says --by-name. */
START_TEST(test_config_by_name)
{
	fz_config c = FZ_CONFIG_INIT, d = FZ_CONFIG_INIT;
	c.by_name = 1;
	char *s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=1-4 size=small schedules=0 skip= mix "
			 "by_name");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert(d.by_name == 1 && d.mix == 1 && d.compute == 0);
	free(s);
	c.compute = c.race = 1;
	s = fz_gen_options(&c);
	ck_assert_str_eq(s, "cores=1-4 size=small schedules=0 skip= mix "
			 "compute by_name race");
	ck_assert_int_eq(fz_gen_options_parse(s, &d), 0);
	ck_assert(d.by_name == 1 && d.compute == 1 && d.race == 1);
	free(s);
	s = fz_repro(&c, 7, "D");
	ck_assert_contains(s, " --by-name -o D ");
	free(s);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= mix race", &d),
			 0);
	ck_assert_int_eq(d.by_name, 0);
	ck_assert_int_eq(fz_gen_options_parse("cores=1-4 size=small "
					      "schedules=0 skip= mix by_name "
					      "compute", &d), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fuzz");
	TCase *unit = tcase_create("unit");
	tcase_set_timeout(unit, 120);
	tcase_add_test(unit, test_record_roundtrip);
	tcase_add_test(unit, test_record_races);
	tcase_add_test(unit, test_config_strings);
	tcase_add_test(unit, test_config_compute);
	tcase_add_test(unit, test_config_by_name);
	tcase_add_test(unit, test_signatures);
	tcase_add_test(unit, test_coord_handout);
	tcase_add_test(unit, test_coord_resume);
	tcase_add_test(unit, test_coord_lost);
	tcase_add_test(unit, test_coord_stop);
	tcase_add_test(unit, test_coord_random);
	tcase_add_test(unit, test_drive_lost_cases);
	tcase_add_test(unit, test_drive_wrong_seed);
	tcase_add_test(unit, test_drive_ends);
	tcase_add_test(unit, test_kept_remove);
	suite_add_tcase(s, unit);
	TCase *e2e = tcase_create("lncsim");
	tcase_set_timeout(e2e, 300);
	tcase_add_test(e2e, test_fuzz_jobs_same_results);
	tcase_add_test(e2e, test_fuzz_broken_link_signature);
	tcase_add_test(e2e, test_fuzz_sigint_resume);
	tcase_add_test(e2e, test_fuzz_sigterm_resume);
	tcase_add_test(e2e, test_fuzz_killed_case_and_server);
	tcase_add_test(e2e, test_fuzz_sigusr1_ignored);
	tcase_add_test(e2e, test_fuzz_duration);
	tcase_add_test(e2e, test_fuzz_case_timeout);
	tcase_add_test(e2e, test_fuzz_one_run_at_a_time);
	tcase_add_test(e2e, test_fuzz_refusals);
	tcase_add_test(e2e, test_fuzz_race_rows);
	suite_add_tcase(s, e2e);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_trace.c -- where each engine's time goes (the per-engine split of
** ls_core_stats adds up to the run time, with exact values on hand-built
** schedules) and the --trace file checked by a trace-event checker
** written here over cJSON: complete slices properly nested per track,
** every async begin closed by its end, metadata for every track with
** names distinct over the trace, every flow from a transfer's end to the
** start of an instruction slice, and the slice counts the run's
** statistics predict.
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "sim.h"
#include "linker.h"
#include "gen.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <locale.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

static char *tmpdir;

/* ---- the split ---------------------------------------------------------- */

/* Every engine of every core: the five parts add up to the run time. */
static void check_split(const ls_result *r)
{
	for (int i = 0; i < r->n_cores; i++) {
		const ls_core_stats *c = &r->cores[i];
		int64_t sem = 0, bar = 0;
		for (int e = 0; e < LS_ENGINES; e++) {
			ck_assert_int_ge(c->busy_ps[e], 0);
			ck_assert_int_ge(c->wait_sem_ps[e], 0);
			ck_assert_int_ge(c->wait_barrier_ps[e], 0);
			ck_assert_int_ge(c->wait_dep_ps[e], 0);
			ck_assert_int_ge(c->idle_ps[e], 0);
			ck_assert_int_eq(c->busy_ps[e] + c->wait_sem_ps[e] +
					 c->wait_barrier_ps[e] +
					 c->wait_dep_ps[e] + c->idle_ps[e],
					 r->sim_time_ps);
			sem += c->wait_sem_ps[e];
			bar += c->wait_barrier_ps[e];
		}
		ck_assert_int_eq(sem, c->semaphore_wait_ps);
		ck_assert_int_eq(bar, c->barrier_wait_ps);
	}
}

/* The slice (X, or a b / e pair) named name: start and end in ps. */
static void slice_of(const char *path, const char *name, const char *ph,
		     int64_t *start, int64_t *end)
{
	char *text = tu_read(path);
	cJSON *j = cJSON_Parse(text), *e;
	double id = -1;
	int found = 0;
	ck_assert_ptr_nonnull(j);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
		const char *p = cJSON_GetObjectItem(e, "ph")->valuestring;
		cJSON *n = cJSON_GetObjectItem(e, "name");
		cJSON *in = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"),
						"instruction");
		double ts;
		if (!strcmp(p, "e")) {
			if (cJSON_GetObjectItem(e, "id")->valuedouble != id)
				continue;
		} else if (strcmp(cJSON_IsString(in) ? in->valuestring :
				  n->valuestring, name)) {
			continue;
		}
		ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
		if (!strcmp(p, ph) && !strcmp(p, "X")) {
			*start = llround(ts * 1e6);
			*end = *start + llround(cJSON_GetObjectItem(e, "dur")
						->valuedouble * 1e6);
			found = 1;
		} else if (!strcmp(ph, "b") && !strcmp(p, "b")) {
			*start = llround(ts * 1e6);
			id = cJSON_GetObjectItem(e, "id")->valuedouble;
		} else if (!strcmp(ph, "b") && !strcmp(p, "e") &&
			   cJSON_GetObjectItem(e, "id")->valuedouble == id) {
			*end = llround(ts * 1e6);
			found = 1;
		}
	}
	ck_assert_msg(found, "no slice %s (%s)", name, ph);
	cJSON_Delete(j);
	free(text);
}

/*
** One core: Pool fills a tile; DVE's NoOp depends on it; SP copies a
** tile by DMA on q1 and Activation's NoOp waits for the queue's
** semaphore. DVE waits on a dependency until the fill ends, Activation
** on a semaphore until the transfer completes, PE idles all along.
*/
START_TEST(test_split_one_core)
{
	enum { P = 128, F = 256 };
	tb t;
	ls_result r;
	lm_error err;
	ls_options o = {0};
	char *tr = lm_path_join(tmpdir, "split1.json");
	float *x = calloc(P * F, sizeof(float));
	int64_t fs, fe, ws, we, ns, ne, ds, de;
	lm_module *m;

	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", P, F);
	tb_sb(&t, "xs", "float32", P, F);
	tb_sb(&t, "a", "float32", 1, 4096);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"fill\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":1}",
		AP("a", "float32", 1, 4096, 0));
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"after_fill\",\"engine\":"
		"\"DVE\",\"dependencies\":[\"fill\"]}");
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"copy\",\"engine\":"
		"\"SP\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", P, F, 0), AP("xs", "float32", P, F, 0));
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"after_copy\",\"engine\":"
		"\"Activation\",\"wait\":[{\"semaphore\":\"s1\",\"value\":1}]}");
	m = tb_module(&t, 0);
	o.trace_path = tr;
	ck_assert_msg(tb_run(&m, 1, x, P, F, &o, &r, &err) == 0, "%s", err.msg);
	check_split(&r);
	slice_of(tr, "fill", "X", &fs, &fe);
	slice_of(tr, "after_fill", "X", &ns, &ne);
	slice_of(tr, "after_copy", "X", &ws, &we);
	slice_of(tr, "copy", "b", &ds, &de);
	const ls_core_stats *c = &r.cores[0];
	ck_assert_int_eq(ns, fe);
	ck_assert_int_eq(c->wait_dep_ps[2], fe);        /* DVE */
	ck_assert_int_eq(c->wait_sem_ps[2], 0);
	ck_assert_int_eq(ws, de);
	ck_assert_int_eq(c->wait_sem_ps[1], de);        /* Activation */
	ck_assert_int_eq(c->wait_dep_ps[1], 0);
	ck_assert_int_eq(c->semaphore_wait_ps, de);
	ck_assert_int_eq(c->idle_ps[0], r.sim_time_ps); /* PE */
	ck_assert_int_eq(c->busy_ps[3], fe - fs);       /* Pool */
	ck_assert_int_eq(c->idle_ps[3], r.sim_time_ps - (fe - fs));
	ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
	free(x);
	free(tr);
}
END_TEST

/* Core c: Pool fills len elements, then meets barrier group g. */
static lm_module *barrier_core(int c, int len)
{
	tb t;
	lm_module *m;
	tb_init(&t);
	tb_sb(&t, "a", "float32", 1, 4096);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"pre%d\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":1}", c,
		AP("a", "float32", 1, len, 0));
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"bar%d\",\"engine\":"
		"\"Pool\",\"id\":3,\"cores\":[0,1],\"group\":\"g\"}", c);
	m = tb_module(&t, c);
	tb_free(&t);
	return m;
}

/* Two cores meet at a barrier: the early one's Pool waits there. */
START_TEST(test_split_barrier)
{
	lm_module *m[2];
	ls_result r;
	lm_error err;
	ls_options o = {0};
	char *tr = lm_path_join(tmpdir, "split2.json");
	int64_t s0, e0, s1, e1, bs, be;
	m[0] = barrier_core(0, 16);
	m[1] = barrier_core(1, 4000);
	o.trace_path = tr;
	ck_assert_msg(tb_run(m, 2, NULL, 0, 0, &o, &r, &err) == 0, "%s",
		      err.msg);
	check_split(&r);
	slice_of(tr, "pre0", "X", &s0, &e0);
	slice_of(tr, "pre1", "X", &s1, &e1);
	slice_of(tr, "bar0", "X", &bs, &be);
	ck_assert_int_eq(bs, e0);
	ck_assert_int_eq(r.cores[0].wait_barrier_ps[3], be - e0);
	ck_assert_int_eq(r.cores[1].wait_barrier_ps[3], be - e1);
	ck_assert_int_gt(r.cores[0].wait_barrier_ps[3],
			 r.cores[1].wait_barrier_ps[3]);
	ls_result_free(&r);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	free(tr);
}
END_TEST

/* ---- the trace checker -------------------------------------------------- */

typedef struct xs {
	double pid, tid, ts, end;
	double raw_ts, raw_dur;   /* as a reader parses them */
} xs;

static int cmp_xs(const void *pa, const void *pb)
{
	const xs *a = pa, *b = pb;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end; /* outer first */
}

/* What the checker found. */
typedef struct tcheck {
	int n_x, n_async, n_flows, n_threads;
	int max_overlap_async;   /* transfers in flight at once on one track */
	char problem[512];       /* empty: none */
} tcheck;

static void problem(tcheck *k, const char *what, double a, double b)
{
	if (!k->problem[0])
		snprintf(k->problem, sizeof k->problem, "%s (%g, %g)", what, a,
			 b);
}

/* The number of a key, or NAN; times (microseconds with six decimals)
** as whole picoseconds, so that sums compare exactly. */
static double num(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(e, key);
	if (!cJSON_IsNumber(v))
		return NAN;
	if (!strcmp(key, "ts") || !strcmp(key, "dur"))
		return (double)llround(v->valuedouble * 1e6);
	return v->valuedouble;
}

/* The number of a key as a reader's double, or NAN. */
static double raw(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(e, key);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/*
** Check the trace file: on each (pid, tid) its X slices nest (a slice
** starting inside another ends inside it too), also as readers compute
** them in doubles (a slice that ends where the next begins does not read
** as ending after it, from ts + dur, nor after shifting the track to
** start at zero as speedscope does); each b has one e of the
** same id, at or after it, on the same track; each pid has a
** process_name and a process_sort_index; each track used has a
** thread_name, distinct over the trace; each flow into a slice (bind_id,
** flow_in) comes out of exactly one transfer of its process (bind_id,
** flow_out on the b event) whose end is the slice's start.
*/
static void check_trace(const char *path, tcheck *k)
{
	char *text = tu_read(path);
	cJSON *j, *evs, *e;
	int n = 0, cap = 0, nb = 0, capb = 0;
	xs *x = NULL, *b = NULL;
	memset(k, 0, sizeof *k);
	ck_assert_ptr_nonnull(text);
	j = cJSON_Parse(text);
	ck_assert_msg(j != NULL, "%s is not JSON", path);
	evs = cJSON_GetObjectItem(j, "traceEvents");
	ck_assert(cJSON_IsArray(evs));
	/* X slices and async pairs */
	cJSON_ArrayForEach(e, evs) {
		const cJSON *ph = cJSON_GetObjectItem(e, "ph");
		ck_assert(cJSON_IsString(ph));
		if (!strcmp(ph->valuestring, "X")) {
			lm_grow(&x, &cap, n + 1, sizeof *x);
			x[n++] = (xs){ num(e, "pid"), num(e, "tid"),
				       num(e, "ts"),
				       num(e, "ts") + num(e, "dur"),
				       raw(e, "ts"), raw(e, "dur") };
			ck_assert(!isnan(x[n - 1].end));
		} else if (!strcmp(ph->valuestring, "b")) {
			const cJSON *f;
			int ends = 0;
			double id = num(e, "id");
			ck_assert(!isnan(id));
			cJSON_ArrayForEach(f, evs) {
				const cJSON *fp = cJSON_GetObjectItem(f, "ph");
				if (strcmp(fp->valuestring, "e") ||
				    num(f, "id") != id)
					continue;
				ends++;
				if (num(f, "ts") < num(e, "ts") ||
				    num(f, "tid") != num(e, "tid") ||
				    num(f, "pid") != num(e, "pid"))
					problem(k, "async end before its begin "
						"or on another track", id,
						num(f, "ts"));
				lm_grow(&b, &capb, nb + 1, sizeof *b);
				b[nb++] = (xs){ num(e, "pid"), num(e, "tid"),
						num(e, "ts"), num(f, "ts"), 0, 0 };
			}
			if (ends != 1)
				problem(k, "async begin without exactly one end",
					id, ends);
			/* one name per track: the queue instance's */
			cJSON_ArrayForEach(f, evs)
				if (!strcmp(cJSON_GetObjectItem(f, "ph")
					    ->valuestring, "b") &&
				    num(f, "pid") == num(e, "pid") &&
				    num(f, "tid") == num(e, "tid") &&
				    strcmp(cJSON_GetObjectItem(f, "name")
					   ->valuestring, cJSON_GetObjectItem(e,
					   "name")->valuestring))
					problem(k, "transfers of one track under "
						"two names", num(e, "tid"), id);
			k->n_async++;
		}
		/* a flow: into an X slice from a transfer that starts it */
		if (cJSON_GetObjectItem(e, "flow_in")) {
			const cJSON *f;
			int from = 0;
			double bid = num(e, "bind_id");
			cJSON_ArrayForEach(f, evs) {
				const cJSON *fp = cJSON_GetObjectItem(f, "ph");
				if (!strcmp(fp->valuestring, "b") &&
				    cJSON_IsTrue(cJSON_GetObjectItem(f,
						 "flow_out")) &&
				    num(f, "bind_id") == bid &&
				    num(f, "pid") == num(e, "pid"))
					from++;
				/* the flow's transfer ends where the slice
				   starts */
				if (!strcmp(fp->valuestring, "e") &&
				    num(f, "id") == bid &&
				    num(f, "ts") != num(e, "ts"))
					problem(k, "flow into a slice that does "
						"not start at the transfer's end",
						bid, num(e, "ts"));
			}
			if (from != 1 || strcmp(ph->valuestring, "X"))
				problem(k, "flow into a slice from no transfer",
					bid, from);
			k->n_flows++;
		}
	}
	k->n_x = n;
	if (n > 0)
		qsort(x, (size_t)n, sizeof *x, cmp_xs);
	/* nesting: a stack of open slices per track */
	{
		xs stack[64];
		int sp = 0;
		double t0 = 0;          /* the track's first start */
		for (int i = 0; i < n; i++) {
			if (i == 0 || x[i].pid != x[i - 1].pid ||
			    x[i].tid != x[i - 1].tid) {
				sp = 0;
				t0 = x[i].raw_ts;
			}
			while (sp > 0 && stack[sp - 1].end <= x[i].ts)
				sp--;
			if (sp > 0 && x[i].end > stack[sp - 1].end)
				problem(k, "X slices overlap without nesting",
					x[i].tid, x[i].ts);
			if (i > 0 && x[i].pid == x[i - 1].pid &&
			    x[i].tid == x[i - 1].tid &&
			    x[i - 1].end <= x[i].ts &&
			    (x[i - 1].raw_ts + x[i - 1].raw_dur > x[i].raw_ts ||
			     (x[i - 1].raw_ts - t0) + x[i - 1].raw_dur >
			     x[i].raw_ts - t0))
				problem(k, "a slice reads as ending after the "
					"next one's start", x[i].tid,
					x[i].raw_ts);
			if (sp < 64)
				stack[sp++] = x[i];
		}
	}
	/* async overlap per track (what X slices could not show) */
	if (nb > 0)
		qsort(b, (size_t)nb, sizeof *b, cmp_xs);
	for (int i = 0; i < nb; i++) {
		int over = 1;
		for (int h = i - 1; h >= 0 && b[h].pid == b[i].pid &&
		     b[h].tid == b[i].tid; h--)
			over += b[h].end > b[i].ts;
		if (over > k->max_overlap_async)
			k->max_overlap_async = over;
	}
	/* metadata */
	cJSON_ArrayForEach(e, evs) {
		const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
		const cJSON *f;
		int named = 0, pname = 0, psort = 0;
		if (!strcmp(ph, "M")) {
			const char *nm = cJSON_GetObjectItem(e, "name")->valuestring;
			if (strcmp(nm, "thread_name"))
				continue;
			k->n_threads++;
			const char *tn = cJSON_GetObjectItem(cJSON_GetObjectItem(
				e, "args"), "name")->valuestring;
			cJSON_ArrayForEach(f, evs)
				if (f != e && !strcmp(cJSON_GetObjectItem(f,
					"ph")->valuestring, "M") &&
				    !strcmp(cJSON_GetObjectItem(f,
					"name")->valuestring, "thread_name") &&
				    !strcmp(cJSON_GetObjectItem(
					cJSON_GetObjectItem(f, "args"),
					"name")->valuestring, tn))
					problem(k, "two tracks share a name",
						num(e, "tid"), num(f, "tid"));
			continue;
		}
		if (strcmp(ph, "X") && strcmp(ph, "b"))
			continue;
		cJSON_ArrayForEach(f, evs) {
			const char *fp = cJSON_GetObjectItem(f, "ph")->valuestring;
			const char *fn = cJSON_GetObjectItem(f, "name")->valuestring;
			if (strcmp(fp, "M") || num(f, "pid") != num(e, "pid"))
				continue;
			pname |= !strcmp(fn, "process_name");
			psort |= !strcmp(fn, "process_sort_index");
			named |= !strcmp(fn, "thread_name") &&
				 num(f, "tid") == num(e, "tid");
		}
		if (!named || !pname || !psort)
			problem(k, "a slice's track or process lacks its "
				"metadata", num(e, "pid"), num(e, "tid"));
	}
	free(x);
	free(b);
	cJSON_Delete(j);
	free(text);
}

/* The slice counts the statistics predict, and a clean check. */
static void check_run_trace(const char *path, const ls_result *r,
			    int min_overlap)
{
	tcheck k;
	int64_t transfers = 0;
	check_trace(path, &k);
	ck_assert_msg(!k.problem[0], "%s: %s", path, k.problem);
	for (int i = 0; i < r->n_cores; i++)
		transfers += r->cores[i].dma_transfers;
	ck_assert_int_eq(k.n_x, r->instructions);
	ck_assert_int_eq(k.n_async, transfers);
	ck_assert_int_ge(k.max_overlap_async, min_overlap);
	ck_assert_int_gt(k.n_flows, 0);
}

/*
** Each example side by side and linked: the split adds up, the trace is
** clean. Transfers of one queue instance overlap in every one of them
** (the case complete slices mis-nested).
*/
START_TEST(test_trace_examples)
{
	static const char *const ex[] = { "examples/handoff2",
					  "examples/mlp4" };
	for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
		lm_module *m[8], *lk = NULL;
		lk_options lo;
		lk_report rep;
		ls_tensors in;
		ls_result r;
		lm_error err;
		ls_options o = {0};
		char *tr = lm_path_join(tmpdir, "ex.json");
		int n;
		tu_load_example(ex[i], m, &n);
		ck_assert_int_eq(ls_make_inputs(m, n, NULL, 1, &in, &err), 0);
		o.trace_path = tr;
		ck_assert_msg(ls_run_multi(m, n, &in, &o, &r, &err) == 0, "%s",
			      err.msg);
		check_split(&r);
		check_run_trace(tr, &r, 2);
		ls_result_free(&r);
		memset(&lo, 0, sizeof lo);
		lo.abs_file_paths = 1;
		ck_assert_msg(lk_link(m, n, &lo, &lk, &rep, &err) == 0, "%s",
			      err.msg);
		lk_report_free(&rep);
		ck_assert_msg(ls_run(lk, &in, &o, &r, &err) == 0, "%s",
			      err.msg);
		check_split(&r);
		check_run_trace(tr, &r, 2);
		ls_result_free(&r);
		lm_module_free(lk);
		ls_tensors_free(&in);
		for (int c = 0; c < n; c++)
			lm_module_free(m[c]);
		free(tr);
	}
}
END_TEST

/*
** A generated 8-core set (medium, seed 3) run side by side: the trace is
** clean. A slice of it (16.268775 + 0.160417 on a track whose first
** slice starts at 4.148756) ended after the next one's start only when
** the track is shifted to start at zero, as speedscope reads it.
*/
START_TEST(test_trace_generated)
{
	ls_gen_opts go = { 8, 3, LS_GEN_MEDIUM, NULL, NULL, 0, 0, 0, 0, 0 };
	lm_module **mods = NULL;
	ls_gen_file *files = NULL;
	int n_files = 0;
	lm_error err;
	lm_fileset fs;
	ls_tensors in;
	ls_result r;
	ls_options o = {0};
	char *tr = lm_path_join(tmpdir, "gen.json");
	ck_assert_msg(ls_gen(&go, NULL, &mods, &files, &n_files, &err) == 0,
		      "%s", err.msg);
	lm_fileset_init(&fs);
	ls_gen_fileset(files, n_files, NULL, &fs);
	ck_assert_int_eq(ls_make_inputs(mods, 8, NULL, 1, &in, &err), 0);
	o.trace_path = tr;
	o.files = &fs;
	ck_assert_msg(ls_run_multi(mods, 8, &in, &o, &r, &err) == 0, "%s",
		      err.msg);
	check_split(&r);
	check_run_trace(tr, &r, 2);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_fileset_free(&fs);
	for (int c = 0; c < 8; c++)
		lm_module_free(mods[c]);
	free(mods);
	ls_gen_files_free(files, n_files);
	free(tr);
}
END_TEST

/* Whether the n bytes of p are well-formed UTF-8 (the C library's
** decoder, in a UTF-8 locale). */
static int valid_utf8(const char *p, size_t n)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	while (n) {
		size_t k = mbrtowc(NULL, p, n, &st);
		if (k == (size_t)-1 || k == (size_t)-2)
			return 0;
		if (k == 0)
			k = 1;
		p += k;
		n -= k;
	}
	return 1;
}

/*
** A queue whose name is long and not ASCII (200 two-byte characters, a
** quote, a backslash): the track names built from it are cut to fit, and
** the trace stays valid UTF-8 and JSON.
*/
START_TEST(test_trace_long_utf8_names)
{
	lm_buf nm = LM_BUF_INIT;
	lm_error err;
	ls_tensors in;
	ls_result r;
	ls_options o = {0};
	lm_module *m[2] = { NULL, NULL };
	char *tr = lm_path_join(tmpdir, "utf8.json");
	ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
	lm_buf_puts(&nm, "q\\\"q");
	for (int i = 0; i < 200; i++)
		lm_buf_puts(&nm, "\xc3\xa9");
	/* both cores of handoff2, each in a copy with its queue renamed */
	for (int c = 0; c < 2; c++) {
		char *src = lm_xasprintf("examples/handoff2/nc%d/sg0", c);
		char *sdir = tu_srcpath(src);
		char *sp = lm_path_join(sdir, "def.json");
		char *text = tu_read(sp);
		char *t = tu_replace_all(text, "qSyncIO0", lm_buf_cstr(&nm));
		char *sub = lm_xasprintf("utf8/nc%d/sg0", c);
		char *dir = lm_path_join(tmpdir, sub);
		char *def = tu_write(dir, "def.json", t);
		char *wc = lm_path_join(sdir, "wc.npy");
		if (access(wc, F_OK) == 0)
			tu_copy(wc, dir, "wc.npy");
		ck_assert_msg(lm_module_load(&m[c], def, &err) == 0, "%s",
			      err.msg);
		free(wc);
		free(def);
		free(dir);
		free(sub);
		free(t);
		free(text);
		free(sp);
		free(sdir);
		free(src);
	}
	ck_assert_int_eq(ls_make_inputs(m, 2, NULL, 1, &in, &err), 0);
	o.trace_path = tr;
	ck_assert_msg(ls_run_multi(m, 2, &in, &o, &r, &err) == 0, "%s",
		      err.msg);
	char *out = NULL;
	size_t len = 0;
	ck_assert_int_eq(lm_read_file(tr, &out, &len, &err), 0);
	ck_assert_msg(valid_utf8(out, len), "the trace is not valid UTF-8");
	cJSON *j = cJSON_ParseWithLength(out, len);
	ck_assert_ptr_nonnull(j);
	cJSON_Delete(j);
	check_run_trace(tr, &r, 1);
	free(out);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	lm_buf_free(&nm);
	free(tr);
}
END_TEST

/* The checker itself refuses what it must: mis-nested X slices, an
** unmatched begin, a flow from nowhere, a nameless track, transfers of
** one track under two names, back-to-back slices whose end reads past
** the next start. */
START_TEST(test_checker_refuses)
{
	static const char *const bad[] = {
		"{\"name\":\"a\",\"ph\":\"X\",\"ts\":0,\"dur\":2,\"pid\":0,"
		"\"tid\":1},{\"name\":\"b\",\"ph\":\"X\",\"ts\":1,\"dur\":2,"
		"\"pid\":0,\"tid\":1}",
		"{\"name\":\"a\",\"ph\":\"b\",\"ts\":0,\"id\":1,\"pid\":0,"
		"\"tid\":1}",
		"{\"name\":\"a\",\"ph\":\"X\",\"ts\":0,\"dur\":2,\"pid\":0,"
		"\"tid\":1,\"bind_id\":7,\"flow_in\":true}",
		"{\"name\":\"a\",\"ph\":\"X\",\"ts\":0,\"dur\":2,\"pid\":0,"
		"\"tid\":2}",
		"{\"name\":\"q\",\"ph\":\"b\",\"ts\":0,\"id\":1,\"pid\":0,"
		"\"tid\":1},{\"name\":\"q\",\"ph\":\"e\",\"ts\":1,\"id\":1,"
		"\"pid\":0,\"tid\":1},{\"name\":\"r\",\"ph\":\"b\",\"ts\":0,"
		"\"id\":2,\"pid\":0,\"tid\":1},{\"name\":\"r\",\"ph\":\"e\","
		"\"ts\":1,\"id\":2,\"pid\":0,\"tid\":1}",
		/* back to back in picoseconds, overlapping in doubles */
		"{\"name\":\"a\",\"ph\":\"X\",\"ts\":16.050861,\"dur\":0.193750,"
		"\"pid\":0,\"tid\":1},{\"name\":\"b\",\"ph\":\"X\","
		"\"ts\":16.244611,\"dur\":1,\"pid\":0,\"tid\":1}",
		/* ... only once the track is shifted to start at zero */
		"{\"name\":\"a\",\"ph\":\"X\",\"ts\":4.148756,\"dur\":0.1,"
		"\"pid\":0,\"tid\":1},{\"name\":\"b\",\"ph\":\"X\","
		"\"ts\":16.268775,\"dur\":0.160417,\"pid\":0,\"tid\":1},"
		"{\"name\":\"c\",\"ph\":\"X\",\"ts\":16.429192,\"dur\":1,"
		"\"pid\":0,\"tid\":1}",
	};
	const char *meta = "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,"
		"\"args\":{\"name\":\"core 0\"}},{\"name\":\"process_sort_index\","
		"\"ph\":\"M\",\"pid\":0,\"args\":{\"sort_index\":0}},"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":1,"
		"\"args\":{\"name\":\"PE\"}}";
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *doc = lm_xasprintf("{\"traceEvents\":[%s,%s]}", meta,
					 bad[i]);
		char *p = tu_write(tmpdir, "bad.json", doc);
		tcheck k;
		check_trace(p, &k);
		ck_assert_msg(k.problem[0], "case %zu passed the checker", i);
		free(p);
		free(doc);
	}
}
END_TEST

/* ---- speedscope ---------------------------------------------------------- */

/* The first program of PATH named name, or NULL. */
static char *on_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = lm_xstrdup(path ? path : "/usr/bin:/bin");
	char *found = NULL;
	for (char *dir = strtok(copy, ":"); dir && !found;
	     dir = strtok(NULL, ":")) {
		char *p = lm_path_join(dir, name);
		if (access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(copy);
	return found;
}

/* Whether directory path exists and holds anything. */
static int dir_has_files(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int any = 0;
	while (d && !any && (e = readdir(d)))
		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return any;
}

/* The n bytes of p in base64, appended to b. */
static void put_base64(lm_buf *b, const unsigned char *p, size_t n)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "abcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		char q[4] = { al[v >> 18 & 63], al[v >> 12 & 63],
			      i + 1 < n ? al[v >> 6 & 63] : '=',
			      i + 2 < n ? al[v & 63] : '=' };
		lm_buf_put(b, q, 4);
	}
}

/* %XX escapes decoded in place (the probe's result is URI-encoded). */
static void uri_decode(char *s)
{
	char *o = s;
	for (; *s; s++) {
		unsigned v;
		if (*s == '%' && sscanf(s + 1, "%2x", &v) == 1) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* The args.name of the M event named what for (pid, tid), tid < 0 for
** a process's, or NULL. */
static const char *meta_name(cJSON *evs, const char *what, double pid,
			     double tid)
{
	cJSON *e;
	cJSON_ArrayForEach(e, evs) {
		if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "M") ||
		    strcmp(cJSON_GetObjectItem(e, "name")->valuestring, what) ||
		    num(e, "pid") != pid || (tid >= 0 && num(e, "tid") != tid))
			continue;
		return cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"),
					   "name")->valuestring;
	}
	return NULL;
}

/* A track and its slice count, as speedscope names a profile. */
typedef struct sstrack {
	char *name;     /* "core 0 (pid 0), PE (core 0) (tid 1)" */
	int slices;
} sstrack;

/*
** The profiles speedscope should import from the trace at path: one per
** track with complete slices (speedscope reads B / E / X events only,
** so the transfers' async slices show in Perfetto, not there), named
** from the process and thread names, with that track's slice count.
*/
static int expected_tracks(const char *path, sstrack **out)
{
	char *text = tu_read(path);
	cJSON *j = cJSON_Parse(text), *evs, *e;
	sstrack *t = NULL;
	int n = 0, cap = 0;
	ck_assert_ptr_nonnull(j);
	evs = cJSON_GetObjectItem(j, "traceEvents");
	cJSON_ArrayForEach(e, evs) {
		if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X"))
			continue;
		double pid = num(e, "pid"), tid = num(e, "tid");
		const char *pn = meta_name(evs, "process_name", pid, -1);
		const char *tn = meta_name(evs, "thread_name", pid, tid);
		ck_assert(pn && tn);
		char *nm = lm_xasprintf("%s (pid %.0f), %s (tid %.0f)", pn, pid,
					tn, tid);
		int k = 0;
		while (k < n && strcmp(t[k].name, nm))
			k++;
		if (k == n) {
			lm_grow(&t, &cap, n + 1, sizeof *t);
			t[n++] = (sstrack){ nm, 0 };
		} else {
			free(nm);
		}
		t[k].slices++;
	}
	cJSON_Delete(j);
	free(text);
	*out = t;
	return n;
}

/*
** Load the trace at path in speedscope's page (the package directory
** ssdir) under headless chromium, with tests/speedscope_probe.js
** recording its warnings and counting what it imported. Returns the
** probe's result (cJSON, the caller frees).
*/
static cJSON *speedscope_load(const char *chromium, const char *ssdir,
			      const char *path, const char *tag)
{
	char *index = lm_path_join(ssdir, "dist/release/index.html");
	char *probe_src = tu_srcpath("tests/speedscope_probe.js");
	char *probe = tu_read(probe_src);
	char *trace = NULL, *dump = NULL;
	size_t len = 0, dlen = 0;
	lm_buf js = LM_BUF_INIT;
	lm_error err;
	ck_assert_msg(access(index, R_OK) == 0, "LNCSIM_SPEEDSCOPE=%s: no "
		      "%s (the speedscope npm package's directory is meant)",
		      ssdir, index);
	ck_assert_int_eq(lm_read_file(path, &trace, &len, &err), 0);
	lm_buf_printf(&js, "var lncsimTrace = { name: \"%s.json\", b64: \"",
		      tag);
	put_base64(&js, (const unsigned char *)trace, len);
	lm_buf_puts(&js, "\" };\n");
	lm_buf_puts(&js, probe);
	char *sub = lm_xasprintf("ss-%s", tag);
	char *dir = lm_path_join(tmpdir, sub);
	char *load = tu_write(dir, "load.js", lm_buf_cstr(&js));
	char *html = lm_path_join(dir, "dump.html");
	char *profile = lm_path_join(dir, "profile");
	char *home = lm_path_join(dir, "home");
	char *downloads = lm_path_join(home, "Downloads");
	char *abs_index = realpath(index, NULL);
	char *abs_load = realpath(load, NULL);
	ck_assert(abs_index && abs_load);
	/* no sandbox: the tests may run as root, where chromium needs it
	   off; the virtual time lets the probe's retries run to the end; a
	   home of its own, so that nothing it saves (a download, its
	   desktop settings) lands in the user's */
	char *env = tu_browser_env(home);
	char *cmd = lm_xasprintf("%s timeout 100 '%s' --headless --no-sandbox "
				 "--disable-gpu --user-data-dir='%s' "
				 "--virtual-time-budget=30000 --dump-dom "
				 "'file://%s#localProfilePath=%s' >'%s' "
				 "2>/dev/null", env, chromium, profile,
				 abs_index, abs_load, html);
	free(env);
	int st = system(cmd);
	ck_assert_msg(st == 0, "chromium --headless --dump-dom of speedscope "
		      "failed (status %d): %s", st, cmd);
	/* the probe reads speedscope's export; it saves no file */
	ck_assert_msg(!dir_has_files(downloads), "speedscope's export was "
		      "saved as a download: %s", downloads);
	ck_assert_int_eq(lm_read_file(html, &dump, &dlen, &err), 0);
	char *a = strstr(dump, "LNCSIM-PROBE "), *z;
	ck_assert_msg(a != NULL, "speedscope's page shows no probe result "
		      "(%s)", html);
	a += strlen("LNCSIM-PROBE ");
	z = strstr(a, " LNCSIM-END");
	ck_assert_ptr_nonnull(z);
	*z = 0;
	uri_decode(a);
	cJSON *res = cJSON_Parse(a);
	ck_assert_msg(res != NULL, "probe result is not JSON: %s", a);
	free(cmd);
	free(abs_load);
	free(abs_index);
	free(downloads);
	free(home);
	free(profile);
	free(html);
	free(load);
	free(dir);
	free(sub);
	lm_buf_free(&js);
	free(dump);
	free(trace);
	free(probe);
	free(probe_src);
	free(index);
	return res;
}

/*
** speedscope imported the trace at path with no warning or error, one
** profile per track with complete slices and each track's count; when
** fixed is not NULL, the tracks and counts are exactly those.
*/
static void check_speedscope(const char *chromium, const char *ssdir,
			     const char *path, const char *tag,
			     const sstrack *fixed, int n_fixed)
{
	cJSON *res = speedscope_load(chromium, ssdir, path, tag), *p;
	cJSON *warn = cJSON_GetObjectItem(res, "warnings");
	cJSON *errs = cJSON_GetObjectItem(res, "errors");
	cJSON *prof = cJSON_GetObjectItem(res, "profiles");
	sstrack *want = NULL;
	int n = expected_tracks(path, &want);
	ck_assert_msg(cJSON_GetArraySize(warn) == 0, "%s: speedscope warns "
		      "%d times, first: %s", tag, cJSON_GetArraySize(warn),
		      cJSON_GetArrayItem(warn, 0)->valuestring);
	ck_assert_msg(cJSON_GetArraySize(errs) == 0, "%s: speedscope: %s",
		      tag, cJSON_GetArrayItem(errs, 0)->valuestring);
	ck_assert_msg(cJSON_IsArray(prof), "%s: speedscope exported nothing",
		      tag);
	ck_assert_int_eq(cJSON_GetArraySize(prof), n);
	cJSON_ArrayForEach(p, prof) {
		const char *nm = cJSON_GetObjectItem(p, "name")->valuestring;
		int got = (int)num(p, "slices"), k = 0;
		while (k < n && strcmp(want[k].name, nm))
			k++;
		ck_assert_msg(k < n, "%s: speedscope profile '%s' is no track "
			      "of the trace", tag, nm);
		ck_assert_msg(got == want[k].slices, "%s: '%s': speedscope "
			      "has %d slices, the trace %d", tag, nm, got,
			      want[k].slices);
	}
	if (fixed) {
		ck_assert_int_eq(n, n_fixed);
		for (int i = 0; i < n_fixed; i++) {
			int k = 0;
			while (k < n && !strstr(want[k].name, fixed[i].name))
				k++;
			ck_assert_msg(k < n && want[k].slices ==
				      fixed[i].slices, "%s: track '%s': %d "
				      "slices expected", tag, fixed[i].name,
				      fixed[i].slices);
		}
	}
	for (int i = 0; i < n; i++)
		free(want[i].name);
	free(want);
	cJSON_Delete(res);
}

/*
** The trace loaded by a real trace-event importer: speedscope's, in its
** own page under headless chromium. LNCSIM_SPEEDSCOPE names the npm
** package's directory (.ci/run installs it and sets it, and then the
** case must run: a missing package or browser fails it); unset, the case
** is skipped with a note. Both multi-core examples, side by side and
** linked: no warning, every track with its instructions, and handoff2's
** tracks as counted by hand from its modules.
*/
START_TEST(test_trace_speedscope)
{
	static const char *const ex[] = { "examples/handoff2",
					  "examples/mlp4" };
	/* handoff2 side by side: each engine's instructions per core */
	static const sstrack h2[] = {
		{ "DVE (core 0)", 1 }, { "Pool (core 0)", 1 },
		{ "SP (core 0)", 3 }, { "Activation (core 1)", 1 },
		{ "DVE (core 1)", 1 }, { "Pool (core 1)", 2 },
		{ "SP (core 1)", 3 },
	};
	const char *ssdir = getenv("LNCSIM_SPEEDSCOPE");
	if (!ssdir || !*ssdir) {
		printf("# skip: LNCSIM_SPEEDSCOPE not set (npm install "
		       "speedscope, then set it to node_modules/speedscope): "
		       "the trace is not loaded in speedscope\n");
		return;
	}
	char *chromium = on_path("chromium");
	ck_assert_msg(chromium != NULL, "LNCSIM_SPEEDSCOPE is set but "
		      "chromium is not installed (Debian package chromium)");
	for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
		lm_module *m[8], *lk = NULL;
		lk_options lo;
		lk_report rep;
		ls_tensors in;
		ls_result r;
		lm_error err;
		ls_options o = {0};
		char *tr = lm_path_join(tmpdir, "ss.json");
		char *tag = lm_xasprintf("%s-side", ex[i] + strlen("examples/"));
		int n;
		tu_load_example(ex[i], m, &n);
		ck_assert_int_eq(ls_make_inputs(m, n, NULL, 1, &in, &err), 0);
		o.trace_path = tr;
		ck_assert_msg(ls_run_multi(m, n, &in, &o, &r, &err) == 0, "%s",
			      err.msg);
		ls_result_free(&r);
		check_speedscope(chromium, ssdir, tr, tag, i == 0 ? h2 : NULL,
				 i == 0 ? (int)(sizeof h2 / sizeof *h2) : 0);
		memset(&lo, 0, sizeof lo);
		lo.abs_file_paths = 1;
		ck_assert_msg(lk_link(m, n, &lo, &lk, &rep, &err) == 0, "%s",
			      err.msg);
		lk_report_free(&rep);
		ck_assert_msg(ls_run(lk, &in, &o, &r, &err) == 0, "%s",
			      err.msg);
		ls_result_free(&r);
		free(tag);
		tag = lm_xasprintf("%s-linked", ex[i] + strlen("examples/"));
		check_speedscope(chromium, ssdir, tr, tag, NULL, 0);
		free(tag);
		lm_module_free(lk);
		ls_tensors_free(&in);
		for (int c = 0; c < n; c++)
			lm_module_free(m[c]);
		free(tr);
	}
	free(chromium);
}
END_TEST

/*
** The probe sees what speedscope says: the two back-to-back pairs the
** checker refuses (one overlapping in doubles as read, one only once
** its track is shifted to start at zero) make speedscope warn, so a
** trace with that fault cannot pass test_trace_speedscope.
*/
START_TEST(test_trace_speedscope_warns)
{
	static const char *const bad[] = {
		"{\"name\":\"a\",\"ph\":\"X\",\"ts\":16.050861,\"dur\":0.193750,"
		"\"pid\":0,\"tid\":1},{\"name\":\"b\",\"ph\":\"X\","
		"\"ts\":16.244611,\"dur\":1,\"pid\":0,\"tid\":1}",
		"{\"name\":\"a\",\"ph\":\"X\",\"ts\":4.148756,\"dur\":0.1,"
		"\"pid\":0,\"tid\":1},{\"name\":\"b\",\"ph\":\"X\","
		"\"ts\":16.268775,\"dur\":0.160417,\"pid\":0,\"tid\":1},"
		"{\"name\":\"c\",\"ph\":\"X\",\"ts\":16.429192,\"dur\":1,"
		"\"pid\":0,\"tid\":1}",
	};
	const char *meta = "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,"
		"\"args\":{\"name\":\"core 0\"}},{\"name\":\"thread_name\","
		"\"ph\":\"M\",\"pid\":0,\"tid\":1,\"args\":{\"name\":\"PE\"}}";
	const char *ssdir = getenv("LNCSIM_SPEEDSCOPE");
	if (!ssdir || !*ssdir) {
		printf("# skip: LNCSIM_SPEEDSCOPE not set: the probe is not "
		       "shown seeing speedscope's warnings\n");
		return;
	}
	char *chromium = on_path("chromium");
	ck_assert_msg(chromium != NULL, "LNCSIM_SPEEDSCOPE is set but "
		      "chromium is not installed (Debian package chromium)");
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *doc = lm_xasprintf("{\"traceEvents\":[%s,%s]}", meta,
					 bad[i]);
		char *tag = lm_xasprintf("overlap%zu", i);
		char *p = tu_write(tmpdir, "overlap.json", doc);
		cJSON *res = speedscope_load(chromium, ssdir, p, tag);
		ck_assert_msg(cJSON_GetArraySize(cJSON_GetObjectItem(res,
			      "warnings")) > 0, "case %zu: speedscope did not "
			      "warn", i);
		cJSON_Delete(res);
		free(p);
		free(tag);
		free(doc);
	}
	free(chromium);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("split");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_split_one_core);
	tcase_add_test(tc, test_split_barrier);
	tcase_add_test(tc, test_checker_refuses);
	suite_add_tcase(s, tc);
	tc = tcase_create("examples");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_trace_examples);
	tcase_add_test(tc, test_trace_long_utf8_names);
	tcase_add_test(tc, test_trace_generated);
	suite_add_tcase(s, tc);
	/* four page loads in chromium, a few seconds each */
	tc = tcase_create("speedscope");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_trace_speedscope);
	suite_add_tcase(s, tc);
	/* two more */
	tc = tcase_create("speedscope_warns");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_trace_speedscope_warns);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	tmpdir = tu_tmpdir("trace");
	return tu_main(suite());
}

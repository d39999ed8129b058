/*
** test_sched.c -- the simulator's scheduler and machine: engine
** order, dependencies, DMA queue FIFO per instance, semaphores, barriers
** across 3 cores, every runtime error, determinism, the dispatcher, and
** the two examples checked against values computed here.
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "dtype.h"
#include "sim.h"
#include "npy.h"
#include "linker.h"
#include "gen.h"
#include "fileset.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

/* A trace file's slice (name, cat) -> start / duration in ps. */
static int trace_slice(const char *path, const char *name, const char *cat,
		       int64_t *start, int64_t *dur)
{
	char *text = tu_read(path);
	cJSON *j, *evs, *e;
	int found = 0;
	ck_assert_msg(text != NULL, "no trace %s", path);
	j = cJSON_Parse(text);
	ck_assert_msg(j != NULL, "trace is not JSON");
	evs = cJSON_GetObjectItem(j, "traceEvents");
	cJSON_ArrayForEach(e, evs) {
		cJSON *n = cJSON_GetObjectItem(e, "name");
		cJSON *c = cJSON_GetObjectItem(e, "cat");
		/* a transfer is named after its queue, the instruction in args */
		cJSON *in = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"),
						"instruction");
		if (cJSON_IsString(in))
			n = in;
		if (!cJSON_IsString(n) || !cJSON_IsString(c) ||
		    strcmp(n->valuestring, name) || strcmp(c->valuestring, cat))
			continue;
		if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X") &&
		    strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "b"))
			continue;
		*start = llround(cJSON_GetObjectItem(e, "ts")->valuedouble * 1e6);
		found = 1;
		if (cJSON_GetObjectItem(e, "dur")) {
			*dur = llround(cJSON_GetObjectItem(e, "dur")->valuedouble
				       * 1e6);
			break;
		}
		/* a DMA transfer: the end event with its id */
		cJSON *x, *id = cJSON_GetObjectItem(e, "id");
		found = 0;
		cJSON_ArrayForEach(x, evs) {
			cJSON *xi = cJSON_GetObjectItem(x, "id");
			if (!strcmp(cJSON_GetObjectItem(x, "ph")->valuestring,
				    "e") && xi && id &&
			    xi->valuedouble == id->valuedouble) {
				*dur = llround(cJSON_GetObjectItem(x, "ts")
					       ->valuedouble * 1e6) - *start;
				found = 1;
			}
		}
		break;
	}
	cJSON_Delete(j);
	free(text);
	return found;
}

static int64_t t_start(const char *tr, const char *name, const char *cat)
{
	int64_t s, d;
	ck_assert_msg(trace_slice(tr, name, cat, &s, &d), "no slice %s/%s",
		      name, cat);
	return s;
}

static int64_t t_end(const char *tr, const char *name, const char *cat)
{
	int64_t s, d;
	ck_assert_msg(trace_slice(tr, name, cat, &s, &d), "no slice %s/%s",
		      name, cat);
	return s + d;
}

static char *tmpdir;

static char *trace_path(const char *tag)
{
	char *f = lm_xasprintf("%s.json", tag);
	char *p = lm_path_join(tmpdir, f);
	free(f);
	return p;
}

static void free_mods(lm_module **m, int n)
{
	for (int i = 0; i < n; i++)
		lm_module_free(m[i]);
}

/* ---- order, dependencies, queues, semaphores ---------------------------- */

START_TEST(test_engine_order_and_dependencies)
{
	tb t;
	ls_result r;
	lm_error err;
	ls_options o = {0};
	char *tr = trace_path("order");
	lm_module *m;

	tb_init(&t);
	tb_sb(&t, "a", "float32", 4, 64);
	tb_sb(&t, "b", "float32", 4, 64);
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"m1\",\"engine\":\"DVE\","
		"\"outs\":[%s],\"value\":1}", AP("a", "float32", 4, 64, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"c2\",\"engine\":\"Pool\","
		"\"outs\":[%s],\"value\":3}", APS("b", "float32", 4, 32, 32, 64));
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"m2\",\"engine\":\"DVE\","
		"\"outs\":[%s],\"value\":2}", APS("b", "float32", 4, 32, 0, 64));
	tb_inst(&t, "{\"opcode\":\"Activation\","
		"\"acc\":\"Idle\",\"alpha\":0.0,\"op0\":\"bypass\","
		"\"op1\":\"bypass\",\"reduce_op\":\"bypass\","
		"\"scale\":1.0,\"name\":\"c1\",\"engine\":"
		"\"Activation\",\"ins\":[%s,%s],\"outs\":[%s],\"func\":\"Copy\","
		"\"dependencies\":[\"m2\",\"m1\"]}", APS("b", "float32", 4, 32, 0, 64),
		APS("a", "float32", 4, 1, 0, 64), APS("a", "float32", 4, 32, 0, 64));
	m = tb_module(&t, 0);
	o.trace_path = tr;
	ck_assert_msg(ls_run(m, NULL, &o, &r, &err) == 0, "%s", err.msg);
	/* same engine: in program order, back to back */
	ck_assert_int_eq(t_start(tr, "m1", "Memset"), 0);
	ck_assert_int_eq(t_start(tr, "m2", "Memset"), t_end(tr, "m1", "Memset"));
	/* another engine, no dependency: from time 0 */
	ck_assert_int_eq(t_start(tr, "c2", "Memset"), 0);
	/* across engines: after its last dependency completes */
	ck_assert_int_eq(t_start(tr, "c1", "Activation"),
			 t_end(tr, "m2", "Memset"));
	/* (64 elements + 58 fixed) DVE cycles at 0.96 GHz */
	ck_assert_int_eq(t_end(tr, "m1", "Memset"), 127084);
	ck_assert_int_eq(r.cores[0].instructions, 4);
	ck_assert_int_eq(r.cores[0].busy_ps[2], 2 * 127084 - 33334);
	ck_assert_int_eq(r.sim_time_ps, t_end(tr, "c1", "Activation"));
	ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
	free(tr);
}
END_TEST

/* big then small DMA on queue q1; with switch, small goes to instance q1b. */
static void dma_pair(int two_instances, int64_t *big_end, int64_t *small_end,
		     ls_result *r)
{
	enum { P = 128, F = 512 };
	tb t;
	lm_error err;
	ls_options o = {0};
	char *tr = trace_path(two_instances ? "dma2" : "dma1");
	float *x = calloc(P * F, sizeof(float));
	lm_module *m;

	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", P, F);
	tb_sb(&t, "xs", "float32", P, F);
	tb_sb(&t, "one", "float32", 1, 1);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"big\",\"engine\":\"SP\","
		"\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", P, F, 0), AP("xs", "float32", P, F, 0));
	if (two_instances)
		tb_inst(&t, "{\"opcode\":\"SwitchQueueInstance\",\"name\":"
			"\"sw\",\"engine\":\"SP\",\"queue\":\"q1\","
			"\"instance_name\":\"q1b\"}");
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"small\",\"engine\":"
		"\"SP\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", 1, 1, 0), AP("one", "float32", 1, 1, 0));
	/* waits on the instance semaphores: both transfers counted */
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"w\",\"engine\":\"Pool\","
		"\"wait\":[{\"semaphore\":\"%s\",\"value\":%d}]}",
		two_instances ? "s2" : "s1", two_instances ? 1 : 2);
	m = tb_module(&t, 0);
	o.trace_path = tr;
	ck_assert_msg(tb_run(&m, 1, x, P, F, &o, r, &err) == 0, "%s", err.msg);
	*big_end = t_end(tr, "big", "DMA");
	*small_end = t_end(tr, "small", "DMA");
	/* the waiting NoOp starts exactly at the counted completion */
	ck_assert_int_eq(t_start(tr, "w", "NoOp"), *small_end);
	lm_module_free(m);
	tb_free(&t);
	free(tr);
	free(x);
}

START_TEST(test_dma_fifo_one_instance_vs_two)
{
	int64_t b1, s1, b2, s2;
	ls_result r;
	dma_pair(0, &b1, &s1, &r);
	ck_assert_msg(s1 >= b1, "one instance: small (%lld) completed before "
		      "big (%lld)", (long long)s1, (long long)b1);
	ck_assert_int_eq(r.cores[0].dma_transfers, 2);
	ck_assert_int_eq(r.cores[0].dma_bytes, 128 * 512 * 4 + 4);
	ck_assert_int_gt(r.cores[0].semaphore_wait_ps, 0);
	ls_result_free(&r);
	dma_pair(1, &b2, &s2, &r);
	ck_assert_msg(s2 < b2, "two instances: small (%lld) should overtake "
		      "big (%lld)", (long long)s2, (long long)b2);
	ck_assert_int_eq(b1, b2);
	ls_result_free(&r);
}
END_TEST

/* ---- barriers ----------------------------------------------------------- */

/* Core c: a Pool Memset of len elements, then barrier, then a NoOp. */
static lm_module *barrier_core(int c, int len, const char *group, int id,
			       const char *cores, int twice)
{
	tb t;
	lm_module *m;
	tb_init(&t);
	tb_sb(&t, "a", "float32", 1, 4096);
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"pre%d\",\"engine\":"
		"\"Pool\",\"outs\":[%s],\"value\":1}", c,
		AP("a", "float32", 1, len, 0));
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"bar%d\",\"engine\":"
		"\"Pool\",\"id\":%d,\"cores\":[%s],\"group\":\"%s\"}", c, id,
		cores, group);
	if (twice)
		tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"again%d\","
			"\"engine\":\"Pool\",\"id\":%d,\"cores\":[%s],"
			"\"group\":\"%s\"}", c, id, cores, group);
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"post%d\",\"engine\":\"DVE\","
		"\"dependencies\":[\"bar%d\"]}", c, c);
	m = tb_module(&t, c);
	tb_free(&t);
	return m;
}

START_TEST(test_barrier_rendezvous_three_cores)
{
	lm_module *m[3];
	ls_result r;
	lm_error err;
	ls_options o = {0};
	char *tr = trace_path("bar3");
	int64_t rel;
	m[0] = barrier_core(0, 16, "g", 5, "0,1,2", 0);
	m[1] = barrier_core(1, 2000, "g", 5, "0,1,2", 0);
	m[2] = barrier_core(2, 4000, "g", 5, "0,1,2", 0);
	o.trace_path = tr;
	ck_assert_msg(tb_run(m, 3, NULL, 0, 0, &o, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(r.n_cores, 3);
	rel = t_end(tr, "pre2", "Memset") + 500000; /* last arrival + latency */
	for (int c = 0; c < 3; c++) {
		char b[16], p[16];
		snprintf(b, sizeof b, "bar%d", c);
		snprintf(p, sizeof p, "post%d", c);
		ck_assert_int_eq(t_end(tr, b, "CoreBarrier"), rel);
		ck_assert_int_eq(t_start(tr, p, "NoOp"), rel);
		ck_assert_int_eq(r.cores[c].barrier_wait_ps,
				 rel - t_end(tr, c == 0 ? "pre0" : c == 1 ?
					     "pre1" : "pre2", "Memset"));
	}
	ck_assert_int_gt(r.cores[0].barrier_wait_ps, r.cores[2].barrier_wait_ps);
	ls_result_free(&r);
	free_mods(m, 3);
	free(tr);
}
END_TEST

START_TEST(test_barrier_errors)
{
	lm_module *m[2];
	ls_result r;
	lm_error err;
	tb t;

	/* collision: two groups hold id 1 of one module's slot table */
	tb_init(&t);
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"A\",\"engine\":"
		"\"Pool\",\"id\":1,\"cores\":[0,1],\"group\":\"gA\"}");
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"B\",\"engine\":"
		"\"SP\",\"id\":1,\"cores\":[0],\"group\":\"gB\"}");
	m[0] = tb_module(&t, 0);
	tb_free(&t);
	ck_assert_int_eq(tb_run(m, 1, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "core 0/function sg0000/instruction B");
	ck_assert_contains(err.msg, "barrier ID collision: 'B' (group 'gB') "
			   "arrives at barrier id 1, which is held by 'A' "
			   "(group 'gA')");
	free_mods(m, 1);

	/* per-module tables: the same id in two modules is no collision */
	m[0] = barrier_core(0, 8, "g", 1, "0,1", 0);
	m[1] = barrier_core(1, 8, "g", 1, "0,1", 0);
	ck_assert_msg(tb_run(m, 2, NULL, 0, 0, NULL, &r, &err) == 0, "%s",
		      err.msg);
	ls_result_free(&r);
	free_mods(m, 2);

	/* a group reached twice by one core */
	m[0] = barrier_core(0, 8, "g", 1, "0", 1);
	ck_assert_int_eq(tb_run(m, 1, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "instruction again0");
	ck_assert_contains(err.msg, "barrier group 'g' reached twice by core 0");
	free_mods(m, 1);

	/* differing core lists */
	m[0] = barrier_core(0, 8, "g", 1, "0,1", 0);
	m[1] = barrier_core(1, 800, "g", 1, "1,0,2", 0);
	ck_assert_int_eq(tb_run(m, 2, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "core 1/function sg0000/instruction bar1");
	ck_assert_contains(err.msg, "differing core lists: 'bar1' lists [1, 0, "
			   "2] but 'bar0' (core 0) lists [0, 1]");
	free_mods(m, 2);
}
END_TEST

/* ---- deadlock, limits, inputs ------------------------------------------- */

START_TEST(test_deadlock_lists_blocked_engines)
{
	lm_module *m[2];
	ls_result r;
	lm_error err;
	tb t;

	tb_init(&t);
	tb_sb(&t, "a", "float32", 1, 4);
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"w\",\"engine\":\"SP\","
		"\"wait\":[{\"semaphore\":\"s3\",\"value\":1}]}");
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"d\",\"engine\":\"DVE\","
		"\"outs\":[%s],\"value\":0,\"dependencies\":[\"w\"]}",
		AP("a", "float32", 1, 4, 0));
	m[0] = tb_module(&t, 0);
	tb_free(&t);
	ck_assert_int_eq(tb_run(m, 1, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "deadlock at t=0 ps");
	ck_assert_contains(err.msg, "2 blocked engines");
	ck_assert_contains(err.msg, "core 0 SP: 'w' (NoOp) waits for semaphore "
			   "'s3' >= 1 (value 0)");
	ck_assert_contains(err.msg, "core 0 DVE: 'd' (Memset) waits for "
			   "instruction 'w' to complete");
	free_mods(m, 1);

	/* a barrier one core never reaches */
	m[0] = barrier_core(0, 8, "g", 1, "0,1", 0);
	tb_init(&t);
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"idle\",\"engine\":\"SP\"}");
	m[1] = tb_module(&t, 1);
	tb_free(&t);
	ck_assert_int_eq(tb_run(m, 2, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "deadlock");
	ck_assert_contains(err.msg, "core 0 Pool: 'bar0' (CoreBarrier) waits at "
			   "barrier group 'g' for cores [0, 1] (arrived: [0])");
	ck_assert_contains(err.msg, "core 0 DVE: 'post0' (NoOp) waits for "
			   "instruction 'bar0'");
	free_mods(m, 2);
}
END_TEST

START_TEST(test_limits)
{
	lm_module *m = barrier_core(0, 8, "g", 1, "0", 0);
	ls_result r;
	lm_error err;
	ls_options o = {0};
	o.max_time_ps = 1000;
	ck_assert_int_eq(ls_run(m, NULL, &o, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "simulated time exceeded --max-time 1000 ps");
	o.max_time_ps = 0;
	o.max_instructions = 2;
	ck_assert_int_eq(ls_run(m, NULL, &o, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "more than 2 instructions executed "
			   "(--max-instructions)");
	ck_assert_contains(err.msg, "instruction post0");
	o.max_instructions = 3;
	ck_assert_int_eq(ls_run(m, NULL, &o, &r, &err), 0);
	ls_result_free(&r);
	lm_module_free(m);
}
END_TEST

START_TEST(test_missing_input)
{
	tb t;
	lm_module *m;
	ls_result r;
	ls_tensors in;
	lm_error err;
	tb_init(&t);
	tb_io(&t, "float32", "float32", 1, 4);
	m = tb_module(&t, 0);
	tb_free(&t);
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "missing input 'x'");
	ck_assert_int_eq(ls_make_inputs(&m, 1, tmpdir, 0, &in, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "missing input 'x'");
	/* seeded inputs: uniform in [-1, 1), the same for the same seed */
	ck_assert_int_eq(ls_make_inputs(&m, 1, NULL, 42, &in, &err), 0);
	ck_assert_int_eq(in.n, 1);
	ck_assert_int_eq(in.t[0].count, 4);
	for (int i = 0; i < 4; i++) {
		float v = ((float *)in.t[0].data)[i];
		ck_assert(v >= -1.0f && v < 1.0f);
	}
	{
		ls_tensors in2;
		ck_assert_int_eq(ls_make_inputs(&m, 1, NULL, 42, &in2, &err), 0);
		ck_assert(memcmp(in.t[0].data, in2.t[0].data, 16) == 0);
		ls_tensors_free(&in2);
	}
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* ---- the examples ------------------------------------------------------- */

static const float *tensor_f(const ls_tensors *ts, const char *name)
{
	const ls_tensor *t = ls_tensors_find(ts, name);
	ck_assert_msg(t != NULL && t->dtype == LM_DT_FLOAT32, "tensor %s", name);
	return t->data;
}

START_TEST(test_example_matmul1)
{
	lm_module *m[1];
	int n;
	ls_tensors in;
	ls_result r;
	lm_error err;
	const float *x, *w, *b, *y;
	tu_load_example("examples/matmul1", m, &n);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(ls_make_inputs(m, 1, NULL, 7, &in, &err), 0);
	ck_assert_msg(ls_run(m[0], &in, NULL, &r, &err) == 0, "%s", err.msg);
	x = tensor_f(&in, "x");   /* [256, 64] */
	w = tensor_f(&in, "w");   /* [256, 128] */
	b = tensor_f(&in, "b");   /* [128, 1] */
	y = tensor_f(&r.outputs, "y"); /* [128, 64] */
	/* y[m][n] = relu(fmaf(sum_k w[k][m] x[k][n] (fmaf chain), 1, b[m])) */
	for (int mm = 0; mm < 128; mm++)
		for (int nn = 0; nn < 64; nn++) {
			float acc = 0.0f, v;
			for (int k = 0; k < 256; k++)
				acc = fmaf(w[k * 128 + mm], x[k * 64 + nn], acc);
			v = fmaf(acc, 1.0f, b[mm]);
			v = v > 0.0f ? v : 0.0f;
			ck_assert_same_f(y[mm * 64 + nn], v);
		}
	ck_assert_int_eq(r.n_matmuls, 2);
	ck_assert_int_eq(r.cores[0].matmuls, 2);
	ck_assert_int_eq(r.cores[0].macs, 2LL * 128 * 128 * 64);
	ck_assert(r.cores[0].pe_util > 0 && r.cores[0].pe_util < 1);
	ck_assert(r.cores[0].mac_util > 0 && r.cores[0].mac_util < 1);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m[0]);
}
END_TEST

/* Read a float32 .npy from the source tree. */
static float *read_npy_f(const char *rel, int64_t count)
{
	char *p = tu_srcpath(rel);
	lm_npy a;
	lm_error err;
	float *v;
	ck_assert_msg(lm_npy_read(p, &a, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(a.count, count);
	v = malloc(sizeof(float) * (size_t)count);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT32, v, p, &err), 0);
	lm_npy_free(&a);
	free(p);
	return v;
}

START_TEST(test_example_handoff2)
{
	lm_module *m[2];
	int n;
	ls_tensors in;
	ls_result r;
	lm_error err;
	float *wc0 = read_npy_f("examples/handoff2/nc0/sg0/wc.npy", 128 * 64);
	float *wc1 = read_npy_f("examples/handoff2/nc1/sg0/wc.npy", 128 * 64);
	const float *a, *h, *z;
	tu_load_example("examples/handoff2", m, &n);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(ls_make_inputs(m, 2, NULL, 3, &in, &err), 0);
	ck_assert_msg(ls_run_multi(m, 2, &in, NULL, &r, &err) == 0, "%s",
		      err.msg);
	a = tensor_f(&in, "a");
	h = tensor_f(&r.outputs, "h");
	z = tensor_f(&r.outputs, "z");
	for (int i = 0; i < 128 * 64; i++) {
		float hv = a[i] * wc0[i];
		ck_assert_same_f(h[i], hv);
		ck_assert_same_f(z[i], tanhf(fmaf(hv + wc1[i], 1.0f, 0.0f)));
	}
	ck_assert_int_eq(r.n_cores, 2);
	ck_assert_int_gt(r.cores[1].barrier_wait_ps, 0);

	/* core 1 alone: its remote_local_target producer is not in the run */
	ls_result_free(&r);
	ck_assert_int_eq(ls_run(m[1], &in, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "remote_local_target names allocation 'h' "
			   "of core 0, which is not part of this run");

	/* address identity: the view's address must be the producer's */
	m[1]->functions[0].allocs[0].memlocs[0].addr += 4;
	ck_assert_int_eq(ls_run_multi(m, 2, &in, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "address identity violated: view 'h_in' "
			   "has addr 65540 but its producer 'h' of core 0 has "
			   "addr 65536");
	m[1]->functions[0].allocs[0].memlocs[0].addr -= 4;

	/* an external output declared by two modules */
	free(m[1]->functions[0].allocs[2].name);
	m[1]->functions[0].allocs[2].name = lm_xstrdup("h");
	ck_assert_int_eq(ls_run_multi(m, 2, &in, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "external output 'h' is also declared by");

	ls_tensors_free(&in);
	free_mods(m, 2);
	free(wc0);
	free(wc1);
}
END_TEST

START_TEST(test_determinism)
{
	lm_module *m[2];
	int n;
	ls_tensors in;
	ls_result r1, r2, rp;
	lm_error err;
	ls_options o = {0};
	tu_load_example("examples/handoff2", m, &n);
	ck_assert_int_eq(ls_make_inputs(m, 2, NULL, 9, &in, &err), 0);
	ck_assert_int_eq(ls_run_multi(m, 2, &in, NULL, &r1, &err), 0);
	ck_assert_int_eq(ls_run_multi(m, 2, &in, NULL, &r2, &err), 0);
	ck_assert_int_eq(r1.sim_time_ps, r2.sim_time_ps);
	ck_assert(memcmp(r1.cores, r2.cores, sizeof *r1.cores * 2) == 0);
	for (int i = 0; i < r1.outputs.n; i++)
		ck_assert(memcmp(r1.outputs.t[i].data, r2.outputs.t[i].data,
				 (size_t)r1.outputs.t[i].count * 4) == 0);
	/* perturbed schedules: other times, the same bits */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		int64_t t1;
		o.perturb_seed = seed;
		ck_assert_int_eq(ls_run_multi(m, 2, &in, &o, &rp, &err), 0);
		t1 = rp.sim_time_ps;
		ck_assert_int_ne(t1, r1.sim_time_ps);
		for (int i = 0; i < r1.outputs.n; i++)
			ck_assert(memcmp(r1.outputs.t[i].data,
					 rp.outputs.t[i].data,
					 (size_t)r1.outputs.t[i].count * 4) == 0);
		ls_result_free(&rp);
		ck_assert_int_eq(ls_run_multi(m, 2, &in, &o, &rp, &err), 0);
		ck_assert_int_eq(rp.sim_time_ps, t1);
		ls_result_free(&rp);
	}
	ls_result_free(&r1);
	ls_result_free(&r2);
	ls_tensors_free(&in);
	free_mods(m, 2);
}
END_TEST

/* ---- a linked module: dispatcher, Calls, queue instances ---------------- */

static const char linked_json[] =
	"{\"version\":2,\"arch\":\"gen3\",\"name\":\"l/sgLnk\","
	"\"semaphores\":[{\"name\":\"nc0.s\",\"init\":0},{\"name\":\"nc1.s\","
	"\"init\":0}],\"queues\":[{\"name\":\"q\",\"instances\":["
	"{\"name\":\"nc0.q\",\"semaphore\":\"nc0.s\"},"
	"{\"name\":\"nc1.q\",\"semaphore\":\"nc1.s\"}]}],"
	"\"functions\":["
	"{\"name\":\"main\",\"kind\":\"dispatcher\",\"attributes\":[],"
	" \"allocations\":["
	"  {\"name\":\"x\",\"kind\":\"ExternalInput\",\"dtype\":\"float32\","
	"   \"tensor_shape\":[2,4],\"memorylocations\":[{\"name\":\"x\","
	"   \"type\":\"DRAM\",\"addr\":0,\"dims\":[2,16],\"allocated\":true}]},"
	"  {\"name\":\"y\",\"kind\":\"ExternalOutput\",\"dtype\":\"float32\","
	"   \"tensor_shape\":[2,4],\"memorylocations\":[{\"name\":\"y\","
	"   \"type\":\"DRAM\",\"addr\":64,\"dims\":[2,16],\"allocated\":true}]}],"
	" \"blocks\":[{\"name\":\"dispatcher\",\"instructions\":["
	"  {\"opcode\":\"Call\",\"name\":\"call_def_0_instance_0\","
	"   \"target\":\"nc0\"},"
	"  {\"opcode\":\"Call\",\"name\":\"call_def_1_instance_0\","
	"   \"target\":\"nc1\"}]}]},"
	"%s,%s]}";

/* Core function c: load row c of x, add c+1, store row c of y. */
static char *linked_core(int c)
{
	return lm_xasprintf(
		"{\"name\":\"nc%d\",\"neuron_core_id\":%d,\"attributes\":[],"
		"\"allocations\":[{\"name\":\"nc%d.t\",\"kind\":\"Internal\","
		"\"dtype\":\"float32\",\"tensor_shape\":[1,4],"
		"\"memorylocations\":[{\"name\":\"nc%d.t\",\"type\":\"SB\","
		"\"addr\":0,\"dims\":[1,16],\"bank\":0,\"base\":0,"
		"\"allocated\":true}]}],"
		"\"blocks\":[{\"name\":\"b\",\"instructions\":["
		"{\"opcode\":\"SwitchQueueInstance\",\"name\":"
		"\"I-SQI-q-call_def_%d_instance_0\",\"engine\":\"SP\","
		"\"queue\":\"q\",\"instance_name\":\"nc%d.q\"},"
		"{\"opcode\":\"DMACopy\",\"name\":\"nc%d.ld\",\"engine\":\"SP\","
		"\"queue\":\"q\",\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":"
		"\"x\",\"memref\":\"x\",\"offset\":%d,\"ap\":[[4,1],[1,4]],"
		"\"dtype\":\"float32\"}],\"outs\":[{\"kind\":\"physical_ap\","
		"\"memsetref\":\"nc%d.t\",\"memref\":\"nc%d.t\",\"offset\":0,"
		"\"ap\":[[4,1],[1,4]],\"dtype\":\"float32\"}]},"
		"{\"opcode\":\"TensorScalar\","
		"\"const1\":0.0,\"reverse0\":false,\"reverse1\":false,\"name\":\"nc%d.add\",\"engine\":"
		"\"DVE\",\"op0\":\"add\",\"const0\":%d,\"op1\":\"bypass\","
		"\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":\"nc%d.t\","
		"\"memref\":\"nc%d.t\",\"offset\":0,\"ap\":[[4,1],[1,4]],"
		"\"dtype\":\"float32\"}],\"outs\":[{\"kind\":\"physical_ap\","
		"\"memsetref\":\"nc%d.t\",\"memref\":\"nc%d.t\",\"offset\":0,"
		"\"ap\":[[4,1],[1,4]],\"dtype\":\"float32\"}],\"wait\":[{"
		"\"semaphore\":\"nc%d.s\",\"value\":1}]},"
		"{\"opcode\":\"DMACopy\",\"name\":\"nc%d.st\",\"engine\":\"SP\","
		"\"queue\":\"q\",\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":"
		"\"nc%d.t\",\"memref\":\"nc%d.t\",\"offset\":0,\"ap\":[[4,1],"
		"[1,4]],\"dtype\":\"float32\"}],\"outs\":[{\"kind\":"
		"\"physical_ap\",\"memsetref\":\"y\",\"memref\":\"y\",\"offset\":%d,"
		"\"ap\":[[4,1],[1,4]],\"dtype\":\"float32\"}],\"dependencies\":"
		"[\"nc%d.add\"]},"
		"{\"opcode\":\"CoreBarrier\",\"name\":"
		"\"cb_return_call_def_%d_instance_0\",\"engine\":\"Pool\","
		"\"id\":%d,\"cores\":[%d],\"dependencies\":[\"nc%d.st\"]},"
		"{\"opcode\":\"Return\",\"name\":\"nc%d.ret\",\"engine\":\"Pool\"}"
		"]}]}", c, c, c, c, c, c, c, 4 * c, c, c, c, c + 1, c, c, c, c, c,
		c, c, c, 4 * c, c, c, c, c, c, c);
}

START_TEST(test_linked_module_dispatcher)
{
	char *c0 = linked_core(0), *c1 = linked_core(1);
	char *j = lm_xasprintf(linked_json, c0, c1);
	lm_module *m;
	lm_error err;
	ls_result r;
	lm_verify_opts vo = {1};
	float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	ck_assert_msg(lm_module_parse(&m, j, strlen(j), "linked.json", &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(lm_verify(m, &vo, &err) == 0, "%s", err.msg);
	ck_assert_msg(tb_run(&m, 1, x, 2, 4, NULL, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(r.n_cores, 2);
	for (int i = 0; i < 8; i++)
		ck_assert_same_f(tb_out(&r, "y", i), x[i] + (float)(i / 4 + 1));
	ck_assert_int_eq(r.cores[1].dma_transfers, 2);
	ls_result_free(&r);
	lm_module_free(m);
	free(j);
	free(c0);
	free(c1);

	/* without its queue switch, core 1's load (issued first: core 0
	   spends a cycle on its switch) counts on nc0.s, so core 0's add
	   starts before its own load landed */
	c0 = linked_core(0);
	c1 = linked_core(1);
	{
		char *p = strstr(c1, "{\"opcode\":\"SwitchQueueInstance\"");
		char *q = strstr(p, "},") + 2;
		memmove(p, q, strlen(q) + 1);
	}
	j = lm_xasprintf(linked_json, c0, c1);
	ck_assert_int_eq(lm_module_parse(&m, j, strlen(j), "linked.json", &err),
			 0);
	ck_assert_int_eq(tb_run(&m, 1, x, 2, 4, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "core 0/function nc0/instruction nc0.add: "
			   "reads uninitialized memory: ins[0] 'nc0.t'");
	lm_module_free(m);
	free(j);
	free(c0);
	free(c1);
}
END_TEST

/* ---- Calls on a core: synchronous, in place ----------------------------- */

/* A CoreBarrier of group g for cores 0 and 1 (JSON). */
static char *cb_json(const char *name, const char *g)
{
	return lm_xasprintf("{\"opcode\":\"CoreBarrier\",\"name\":\"%s\","
			    "\"engine\":\"Pool\",\"id\":%d,\"cores\":[0,1],"
			    "\"group\":\"%s\"}", name, g[0] == 'A' ? 1 : 2, g);
}

/* A per-core module whose functions are given as JSON, parsed only. */
static lm_module *parse_calls(int core, const char *funcs)
{
	char *j = lm_xasprintf(
		"{\"version\":2,\"arch\":\"gen3\",\"name\":\"calls\","
		"\"attributes\":{\"neuron_core_id\":%d},\"semaphores\":[],"
		"\"queues\":[],\"functions\":[%s]}", core, funcs);
	char path[64];
	lm_module *m = NULL;
	lm_error err;
	snprintf(path, sizeof path, "calls/nc%d/sg0/def.json", core);
	if (lm_module_parse(&m, j, strlen(j), path, &err) != 0)
		ck_abort_msg("%s\n%s", err.msg, j);
	free(j);
	return m;
}

/* The same, verified (caller frees). */
static lm_module *calls_module(int core, const char *funcs)
{
	lm_module *m = parse_calls(core, funcs);
	lm_error err;
	if (lm_verify(m, NULL, &err) != 0)
		ck_abort_msg("%s\n%s", err.msg, funcs);
	return m;
}

static char *fn_json(const char *name, const char *insts)
{
	return lm_xasprintf("{\"name\":\"%s\",\"attributes\":[],"
			    "\"allocations\":[],\"blocks\":[{\"name\":\"b\","
			    "\"instructions\":[%s]}]}", name, insts);
}

/*
** Link the pair (check_barrier_order on unless skip_check), run the
** per-core modules side by side and the linked module. Returns the link
** code; *ref_rc / *lin_rc the runs' codes (the linked run uses the module
** linked with the check skipped when the check refused it).
*/
static int link_and_run(lm_module **m, lm_error *lerr, int *ref_rc,
			lm_error *rerr, int *lin_rc, lm_error *xerr)
{
	lk_options o;
	lk_report rep;
	lm_module *lk = NULL;
	ls_result r;
	int rc;
	memset(&o, 0, sizeof o);
	rc = lk_link(m, 2, &o, &lk, &rep, lerr);
	lk_report_free(&rep);
	if (rc) {
		o.skip = LK_SKIP(LK_STEP_CHECK_BARRIER_ORDER);
		ck_assert_msg(lk_link(m, 2, &o, &lk, &rep, xerr) == 0, "%s",
			      xerr->msg);
		lk_report_free(&rep);
	}
	*ref_rc = ls_run_multi(m, 2, NULL, NULL, &r, rerr);
	if (!*ref_rc)
		ls_result_free(&r);
	*lin_rc = ls_run(lk, NULL, NULL, &r, xerr);
	if (!*lin_rc)
		ls_result_free(&r);
	lm_module_free(lk);
	return rc;
}

/*
** Core 0's entry calls f, which meets barrier group A, and meets B after
** the call; NoOps stand around the call. A Call runs its target in place
** (synchronously), so core 0 meets A then B: with core 1 meeting A then B
** the static check and both runs accept; with core 1 meeting B then A the
** static check reports the order mismatch and both runs deadlock. (Were the
** callee queued behind the caller's instructions, core 0 would meet B
** first, and each verdict would flip in the simulator only.)
*/
START_TEST(test_call_barrier_order_agrees)
{
	char *ba = cb_json("bA", "A"), *bb = cb_json("bB", "B");
	char *i0 = lm_xasprintf(
		"{\"opcode\":\"NoOp\",\"name\":\"pre\",\"engine\":\"SP\"},"
		"{\"opcode\":\"Call\",\"name\":\"c\",\"target\":\"f\"},"
		"{\"opcode\":\"NoOp\",\"name\":\"mid\",\"engine\":\"Pool\"},"
		"%s,{\"opcode\":\"NoOp\",\"name\":\"post\",\"engine\":\"SP\"}", bb);
	char *f0 = fn_json("sg0", i0);
	char *ff = fn_json("f", ba);
	char *fs0 = lm_xasprintf("%s,%s", f0, ff);
	char *ab = lm_xasprintf("%s,%s", ba, bb), *ba_ = lm_xasprintf("%s,%s", bb, ba);
	char *g_ab = fn_json("sg0", ab), *g_ba = fn_json("sg0", ba_);
	lm_module *m[2];
	lm_error le, re, xe;
	int ref_rc, lin_rc;

	m[0] = calls_module(0, fs0);
	m[1] = calls_module(1, g_ab);
	ck_assert_msg(link_and_run(m, &le, &ref_rc, &re, &lin_rc, &xe) == 0,
		      "%s", le.msg);
	ck_assert_msg(ref_rc == 0, "reference: %s", re.msg);
	ck_assert_msg(lin_rc == 0, "linked: %s", xe.msg);
	lm_module_free(m[1]);

	m[1] = calls_module(1, g_ba);
	ck_assert_int_ne(link_and_run(m, &le, &ref_rc, &re, &lin_rc, &xe), 0);
	ck_assert_contains(le.msg, "barrier order mismatch: core 0 reaches "
			   "group 'A' before 'B' but core 1 reaches 'B' before "
			   "'A' (static deadlock)");
	ck_assert_int_eq(ref_rc, LM_ECHECK);
	ck_assert_contains(re.msg, "deadlock at t=");
	ck_assert_contains(re.msg, "core 0 Pool: 'bA' (CoreBarrier) waits at "
			   "barrier group 'A'");
	ck_assert_int_eq(lin_rc, LM_ECHECK);
	ck_assert_contains(xe.msg, "deadlock at t=");
	free_mods(m, 2);

	/* the same with an NKIKernel (IT55) call of a kernel function */
	{
		char *k0 = lm_xasprintf(
			"{\"opcode\":\"NoOp\",\"name\":\"pre\",\"engine\":\"SP\"},"
			"{\"opcode\":\"NKIKernel\",\"name\":\"c\",\"engine\":"
			"\"SP\",\"func\":\"k\"},%s", bb);
		char *kf = lm_xasprintf("{\"name\":\"k\",\"kind\":\"nki\","
					"\"attributes\":[],\"allocations\":[],"
					"\"blocks\":[{\"name\":\"b\","
					"\"instructions\":[%s]}]}", ba);
		char *kg = fn_json("sg0", k0);
		char *kfs = lm_xasprintf("%s,%s", kg, kf);
		m[0] = calls_module(0, kfs);
		m[1] = calls_module(1, g_ab);
		ck_assert_msg(link_and_run(m, &le, &ref_rc, &re, &lin_rc,
					   &xe) == 0, "%s", le.msg);
		ck_assert_msg(ref_rc == 0, "reference: %s", re.msg);
		ck_assert_msg(lin_rc == 0, "linked: %s", xe.msg);
		lm_module_free(m[1]);
		m[1] = calls_module(1, g_ba);
		ck_assert_int_ne(link_and_run(m, &le, &ref_rc, &re, &lin_rc,
					      &xe), 0);
		ck_assert_contains(le.msg, "barrier order mismatch: core 0 "
				   "reaches group 'A' before 'B'");
		ck_assert_int_eq(ref_rc, LM_ECHECK);
		ck_assert_contains(re.msg, "deadlock at t=");
		ck_assert_int_eq(lin_rc, LM_ECHECK);
		free_mods(m, 2);
		free(k0); free(kf); free(kg); free(kfs);
	}

	free(ba); free(bb); free(i0); free(f0); free(ff); free(fs0);
	free(ab); free(ba_); free(g_ab); free(g_ba);
}
END_TEST

/*
** A function's walk ends at its first Return, in the static check as in
** the simulator: f's barrier after its Return is never met, so core 0
** meets A then B like core 1 (the check used to count f's B first).
*/
START_TEST(test_call_return_ends_walk)
{
	char *ba = cb_json("bA", "A"), *bb = cb_json("bB", "B");
	char *bb2 = cb_json("bB2", "B");
	char *fi = lm_xasprintf("{\"opcode\":\"Return\",\"name\":\"r\","
				"\"engine\":\"SP\"},%s", bb2);
	char *i0 = lm_xasprintf("{\"opcode\":\"Call\",\"name\":\"c\","
				"\"target\":\"f\"},%s,%s", ba, bb);
	char *f0 = fn_json("sg0", i0), *ff = fn_json("f", fi);
	char *fs0 = lm_xasprintf("%s,%s", f0, ff);
	char *ab = lm_xasprintf("%s,%s", ba, bb), *g1 = fn_json("sg0", ab);
	lm_module *m[2];
	lm_error le, re, xe;
	int ref_rc, lin_rc;
	m[0] = calls_module(0, fs0);
	m[1] = calls_module(1, g1);
	ck_assert_msg(link_and_run(m, &le, &ref_rc, &re, &lin_rc, &xe) == 0,
		      "%s", le.msg);
	ck_assert_msg(ref_rc == 0, "reference: %s", re.msg);
	ck_assert_msg(lin_rc == 0, "linked: %s", xe.msg);
	free_mods(m, 2);
	free(ba); free(bb); free(bb2); free(fi); free(i0); free(f0); free(ff); free(fs0);
	free(ab); free(g1);
}
END_TEST

/* The body of a Call starts only when the call does; a Call of another
** core's function is a runtime error, recursion is refused at time 0. */
START_TEST(test_call_errors)
{
	char *self = fn_json("sg0", "{\"opcode\":\"Call\",\"name\":\"c\","
			     "\"target\":\"sg0\"}");
	char *gate = fn_json("sg0",
		"{\"opcode\":\"NoOp\",\"name\":\"w\",\"engine\":\"SP\","
		"\"wait\":[{\"semaphore\":\"s\",\"value\":1}]},"
		"{\"opcode\":\"Call\",\"name\":\"c\",\"target\":\"f\","
		"\"engine\":\"SP\"}");
	char *f = fn_json("f", "{\"opcode\":\"NoOp\",\"name\":\"n\","
			  "\"engine\":\"DVE\"}");
	char *fs = lm_xasprintf("%s,%s", gate, f);
	char *j;
	lm_module *m;
	ls_result r;
	lm_error err;

	/* refused before time 0 (the verifier refuses it first) */
	m = parse_calls(0, self);
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, "calls/nc0/sg0/def.json: function sg0: Call "
			 "cycle: the calls reach 'sg0' again");
	lm_module_free(m);

	j = lm_xasprintf("{\"version\":2,\"arch\":\"gen3\",\"name\":\"calls\","
			 "\"attributes\":{\"neuron_core_id\":0},\"semaphores\":"
			 "[{\"name\":\"s\",\"init\":0}],\"queues\":[],"
			 "\"functions\":[%s]}", fs);
	ck_assert_int_eq(lm_module_parse(&m, j, strlen(j), "g.json", &err), 0);
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "core 0 DVE: 'n' (NoOp) waits for the Call "
			   "'c' to start");
	free(j);
	lm_module_free(m);

	/* f tagged with core 1, called on core 0 */
	j = lm_xasprintf("{\"version\":2,\"arch\":\"gen3\",\"name\":\"calls\","
			 "\"attributes\":{\"neuron_core_id\":0},\"semaphores\":"
			 "[],\"queues\":[],\"functions\":[{\"name\":\"sg0\","
			 "\"attributes\":[],\"allocations\":[],\"blocks\":[{"
			 "\"name\":\"b\",\"instructions\":[{\"opcode\":\"Call\","
			 "\"name\":\"c\",\"target\":\"f\"}]}]},{\"name\":\"f\","
			 "\"neuron_core_id\":1,\"attributes\":[],\"allocations\":"
			 "[],\"blocks\":[{\"name\":\"b\",\"instructions\":[]}]}]}");
	ck_assert_int_eq(lm_module_parse(&m, j, strlen(j), "x.json", &err), 0);
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "Call target 'f' belongs to core 1: a Call "
			   "on a core runs its target on that core");
	free(j);
	lm_module_free(m);
	free(self);
	free(gate);
	free(f);
	free(fs);
}
END_TEST

/* ---- call trees refused before time 0 ------------------------------------ */

/* "Call NAME -> TARGET" (JSON). */
static char *call_json(const char *name, const char *target)
{
	return lm_xasprintf("{\"opcode\":\"Call\",\"name\":\"%s\",\"engine\":"
			    "\"SP\",\"target\":\"%s\"}", name, target);
}

/*
** sg0 calls f0; f<i> calls f<i+1> twice, levels deep; f<levels> returns
** (4 * 2^levels - 2 instructions queued in all). Caller frees.
*/
static char *fanout_json(int levels)
{
	lm_buf b = LM_BUF_INIT;
	char *c = call_json("c", "f0"), *fn = fn_json("sg0", c), *out;
	lm_buf_puts(&b, fn);
	free(c);
	free(fn);
	for (int i = 0; i < levels; i++) {
		char *t = lm_xasprintf("f%d", i + 1), *n = lm_xasprintf("f%d", i);
		char *a = lm_xasprintf("%s.a", n), *bb = lm_xasprintf("%s.b", n);
		char *ca = call_json(a, t), *cb = call_json(bb, t);
		char *body = lm_xasprintf("%s,%s,{\"opcode\":\"Return\",\"name\":"
					  "\"%s.r\",\"engine\":\"SP\"}", ca, cb, n);
		fn = fn_json(n, body);
		lm_buf_printf(&b, ",%s", fn);
		free(fn); free(body); free(ca); free(cb); free(a); free(bb);
		free(t); free(n);
	}
	fn = lm_xasprintf("f%d", levels);
	c = lm_xasprintf("{\"opcode\":\"Return\",\"name\":\"%s.r\",\"engine\":"
			 "\"SP\"}", fn);
	out = fn_json(fn, c);
	lm_buf_printf(&b, ",%s", out);
	free(out); free(c); free(fn);
	out = lm_xstrdup(lm_buf_cstr(&b));
	lm_buf_free(&b);
	return out;
}

/*
** A call cycle -- through a Loop's block, or a function calling itself
** twice -- is refused by the verifier, at the call of the cycle's first
** function; the verifier used to pass it and the run to queue 2^25
** instructions (10 s, 2 GB) before refusing.
*/
START_TEST(test_call_cycle_refused)
{
	char *cg = call_json("cg", "g"), *cf = call_json("cf", "f");
	char *lp = lm_xasprintf("{\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":"
				"\"SP\"},{\"opcode\":\"Loop\","
				"\"LoopAxis\":{\"name\":\"i\",\"lb\":0,\"ub\":1,\"stride\":1},\"name\":\"lp\","
				"\"engine\":\"SP\",\"blocks\":[{\"name\":\"lb\","
				"\"instructions\":[%s]}]}", cg);
	char *g1 = call_json("g.c1", "g"), *g2 = call_json("g.c2", "g");
	char *gb = lm_xasprintf("%s,%s,{\"opcode\":\"Return\",\"name\":\"g.r\","
				"\"engine\":\"SP\"}", g1, g2);
	char *c0 = call_json("c0", "f");
	char *f0 = fn_json("sg0", c0), *ff = fn_json("f", lp), *s0;
	char *fg = fn_json("g", cf), *gg = fn_json("g", gb);
	char *fs = lm_xasprintf("%s,%s,%s", f0, ff, fg);
	char *fs2 = lm_xasprintf("%s,%s", (s0 = fn_json("sg0", cg)), gg);
	lm_module *m;
	lm_error err;
	ls_result r;

	m = parse_calls(0, fs);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, "calls/nc0/sg0/def.json: function f/block "
			 "b/loop lp/block lb/instruction cg: Call cycle f -> g "
			 "-> f");
	lm_module_free(m);

	m = parse_calls(0, fs2);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, "calls/nc0/sg0/def.json: function g/block "
			 "b/instruction g.c1: Call cycle g -> g");
	/* unverified, the run refuses it before time 0 */
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, "calls/nc0/sg0/def.json: function sg0: Call "
			 "cycle: the calls reach 'sg0' again");
	lm_module_free(m);
	free(cg); free(cf); free(lp); free(g1); free(g2); free(gb); free(f0);
	free(ff); free(fg); free(gg); free(fs); free(fs2); free(c0); free(s0);
}
END_TEST

/*
** A call tree that fans out (no cycle) verifies, and the run refuses it
** at once from its static size: 30 levels against the queue limit, 8
** levels against a small --max-memory and --max-instructions; 8 levels
** within the limits run.
*/
START_TEST(test_call_fanout_refused)
{
	char *j30 = fanout_json(30), *j8 = fanout_json(8);
	lm_module *m = calls_module(0, j30);
	ls_options o = {0};
	ls_result r;
	lm_error err;

	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, "calls/nc0/sg0/def.json: function sg0: the "
			 "calls expand to 4294967294 instructions "
			 "(counted before time 0), more than the limit of 33554432 (the "
			 "lesser of 33554432 and the memory limit of "
			 "4294967296 bytes at 64 bytes an instruction)");
	lm_module_free(m);

	m = calls_module(0, j8);
	o.max_memory = 64 * 512;
	ck_assert_int_eq(ls_run(m, NULL, &o, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "the calls expand to 1022 instructions "
			   "(counted before time 0), more than the limit of "
			   "512 ");
	o.max_memory = 0;
	o.max_instructions = 1000;
	ck_assert_int_eq(ls_run(m, NULL, &o, &r, &err), LM_ECHECK);
	ck_assert_str_eq(err.msg, "calls/nc0/sg0/def.json: function sg0: the "
			 "calls expand to 1022 instructions, more than "
			 "--max-instructions 1000");
	o.max_instructions = 1022;
	ck_assert_msg(ls_run(m, NULL, &o, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(r.instructions, 1022);
	ls_result_free(&r);
	lm_module_free(m);
	free(j30);
	free(j8);
}
END_TEST

/*
** Straight-line timing is the program cursors' as it was the launch-time
** walk's: generated sets (3 cores, medium and large) run to the simulated
** times and instruction counts recorded from the walk, plain and perturbed.
*/
static const struct {
	ls_gen_size size;
	uint64_t seed, perturb;
	int64_t ps, instrs;
} figures[] = {
	{ LS_GEN_MEDIUM, 1, 0, 44246413, 153 },
	{ LS_GEN_MEDIUM, 1, 7, 53762783, 153 },
	{ LS_GEN_MEDIUM, 2, 0, 49603714, 148 },
	{ LS_GEN_MEDIUM, 2, 7, 59624239, 148 },
	{ LS_GEN_MEDIUM, 3, 0, 42417006, 167 },
	{ LS_GEN_MEDIUM, 3, 7, 53525107, 167 },
	{ LS_GEN_MEDIUM, 5, 0, 73828782, 149 },
	{ LS_GEN_MEDIUM, 5, 7, 91899355, 149 },
	{ LS_GEN_LARGE, 1, 0, 118588887, 435 },
	{ LS_GEN_LARGE, 1, 7, 148454550, 435 },
	{ LS_GEN_LARGE, 4, 0, 106844779, 412 },
	{ LS_GEN_LARGE, 4, 7, 130986509, 412 },
	{ LS_GEN_LARGE, 6, 0, 79646367, 439 },
	{ LS_GEN_LARGE, 6, 7, 101780698, 439 },
};

START_TEST(test_straight_line_figures)
{
	for (size_t i = 0; i < sizeof figures / sizeof *figures; i++) {
		ls_gen_opts go = {3, figures[i].seed, figures[i].size, "g",
				  NULL, 0, 0, 0, 0, 0};
		lm_module **mods;
		ls_gen_file *files;
		lm_fileset fs;
		ls_tensors in;
		ls_options o;
		ls_result r;
		lm_error err;
		int nf;
		ck_assert_msg(ls_gen(&go, "out", &mods, &files, &nf, &err) == 0,
			      "%s", err.msg);
		lm_fileset_init(&fs);
		ls_gen_fileset(files, nf, "out", &fs);
		memset(&in, 0, sizeof in);
		ck_assert_msg(ls_make_inputs(mods, 3, NULL, 0, &in, &err) == 0,
			      "%s", err.msg);
		memset(&o, 0, sizeof o);
		o.perturb_seed = figures[i].perturb;
		o.files = &fs;
		ck_assert_msg(ls_run_multi(mods, 3, &in, &o, &r, &err) == 0,
			      "%s", err.msg);
		ck_assert_msg(r.sim_time_ps == figures[i].ps &&
			      r.instructions == figures[i].instrs,
			      "row %zu: %lld ps, %lld instructions (expected "
			      "%lld, %lld)", i, (long long)r.sim_time_ps,
			      (long long)r.instructions,
			      (long long)figures[i].ps,
			      (long long)figures[i].instrs);
		ls_result_free(&r);
		ls_tensors_free(&in);
		lm_fileset_free(&fs);
		free_mods(mods, 3);
		free(mods);
		ls_gen_files_free(files, nf);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sched");
	TCase *tc = tcase_create("scheduler");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_engine_order_and_dependencies);
	tcase_add_test(tc, test_dma_fifo_one_instance_vs_two);
	tcase_add_test(tc, test_barrier_rendezvous_three_cores);
	tcase_add_test(tc, test_barrier_errors);
	tcase_add_test(tc, test_deadlock_lists_blocked_engines);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_missing_input);
	tcase_add_test(tc, test_example_matmul1);
	tcase_add_test(tc, test_example_handoff2);
	tcase_add_test(tc, test_determinism);
	tcase_add_test(tc, test_linked_module_dispatcher);
	tcase_add_test(tc, test_call_barrier_order_agrees);
	tcase_add_test(tc, test_call_return_ends_walk);
	tcase_add_test(tc, test_call_errors);
	tcase_add_test(tc, test_straight_line_figures);
	suite_add_tcase(s, tc);
	/* a refusal that queues the call tree first takes seconds */
	tc = tcase_create("call_trees");
	tcase_set_timeout(tc, 8);
	tcase_add_test(tc, test_call_cycle_refused);
	tcase_add_test(tc, test_call_fanout_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	tmpdir = tu_tmpdir("sched");
	return tu_main(suite());
}

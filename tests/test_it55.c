/*
** test_it55.c -- the simulator executes NKIKernel (IT55) calls: the called form of a lowered module (kernel
** functions of kind nki, not inlined) gives bit-identical outputs to the
** inlined form, for kernels of both mechanisms (B: BIR JSON, A: KLR);
** a call completes only when its whole body (DMAs included) completed;
** SB formals, a kernel called twice and kernels calling kernels are
** rebound through the argument maps; a two-core program whose cores each
** carry a kernel lowers, links and passes the differential check; and a
** lowered-not-inlined module runs through `lncsim run` / `lncsim diff`.
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"
#include "dtype.h"
#include "provision.h"
#include "linker.h"
#include "klr.h"
#include "sim.h"
#include "diff.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* ---- helpers ---------------------------------------------------------------- */

/* Run m with seeded inputs under perturbation seed ps. */
static void run_seeded(const lm_module *m, uint64_t seed, uint64_t ps,
		       ls_result *r)
{
	ls_tensors in = { 0, NULL };
	ls_options o;
	lm_error err;
	lm_module *mods[1];
	mods[0] = (lm_module *)m;
	memset(&o, 0, sizeof o);
	o.perturb_seed = ps;
	ck_assert_msg(ls_make_inputs(mods, 1, NULL, seed, &in, &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(ls_run(m, &in, &o, r, &err) == 0, "run: %s", err.msg);
	ls_tensors_free(&in);
}

/* The called and the inlined lowering of m give the same bits, under the
** plain cost model and two perturbed schedules. */
static void called_equals_inlined(const lm_module *m, int n_calls)
{
	lm_module *called = tu_lower_ok(m, 0, NULL), *inl = tu_lower_ok(m, 1, NULL);
	ck_assert_int_eq(tu_count_op(called, LM_OP_NKIKERNEL), n_calls);
	ck_assert_int_eq(tu_count_op(inl, LM_OP_NKIKERNEL), 0);
	for (uint64_t ps = 0; ps < 3; ps++) {
		ls_result rc, ri;
		run_seeded(called, 7, ps, &rc);
		run_seeded(inl, 7, ps, &ri);
		tu_same_outputs(&rc.outputs, &ri.outputs);
		ck_assert_int_gt(rc.instructions, 0);
		ls_result_free(&rc);
		ls_result_free(&ri);
	}
	lm_module_free(called);
	lm_module_free(inl);
}

/* ---- both mechanisms: called == inlined --------------------------------------- */

START_TEST(test_bir_called_equals_inlined)
{
	char *p = tu_fixture("provision", "b_caller.json");
	lm_module *m = tu_load(p);
	called_equals_inlined(m, 1);
	lm_module_free(m);
	free(p);
}
END_TEST

START_TEST(test_klr_called_equals_inlined)
{
	/* k_all: activation, copy, tensor_scalar, iota, tensor_tensor,
	** matmul, transposes through the cached identity, DMAs */
	const char *k[2] = { "k_all", "k_small" };
	const char *c[2] = { "a_caller.json", "a_caller_small.json" };
	for (int i = 0; i < 2; i++) {
		char *dir = tu_tmpdir("it55-klr"), *p;
		lm_module *m;
		tu_copy_fixture("provision", c[i], dir);
		tu_pack_klr(k[i], dir, NULL);
		p = lm_xasprintf("%s/%s", dir, c[i]);
		m = tu_load(p);
		called_equals_inlined(m, 1);
		lm_module_free(m);
		free(p);
		free(dir);
	}
}
END_TEST

START_TEST(test_called_values)
{
	/* the called form's values, computed here (Mechanism B: relu(2x +
	** bias[p]) with the kernel's Const bias) */
	char *p = tu_fixture("provision", "b_caller.json");
	lm_module *m = tu_load(p), *lo = tu_lower_ok(m, 0, NULL);
	ls_tensors in = { 0, NULL };
	ls_result r;
	lm_error err;
	int64_t shape[2] = { 128, 64 };
	float *x = lm_xmalloc(128 * 64 * sizeof *x);
	for (int i = 0; i < 128 * 64; i++)
		x[i] = (float)(i % 29 - 14) / 8.0f;
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	ck_assert_msg(ls_run(lo, &in, NULL, &r, &err) == 0, "%s", err.msg);
	for (int pp = 0; pp < 128; pp++)
		for (int j = 0; j < 64; j++) {
			float v = fmaf(x[pp * 64 + j], 2.0f,
				       (float)(pp % 8) / 4.0f);
			float want = v > 0 ? v : 0.0f;
			ck_assert(tb_out(&r, "y", pp * 64 + j) == want);
		}
	/* statistics count the call and the body */
	ck_assert_int_ge(r.instructions, 2 + 5);
	ls_result_free(&r);
	ls_tensors_free(&in);
	free(x);
	lm_module_free(lo);
	lm_module_free(m);
	free(p);
}
END_TEST

/* ---- hand-written kernels: SB formals, two calls, nesting, sync ----------- */

#define P_ 8
#define F_ 16

/*
** caller:  call0 = kload(src: x -> dst: xs)          (a DMA in the body)
**          call1 = k1(ka: xs -> kb: ys1)             after call0
**          call2 = k1(ka: ys1 -> kb: ys2)            after call1
**          st: ys2 -> y                               after call2
** k1:      ts: tmp = ka * 2 + 1; inner = k2(ja: tmp -> jb: tmp2);
**          cp: kb = tmp2; Return
** k2:      tt: jb = ja + ja; Return
** so ys1 = 2 (2x + 1) = 4x + 2 and y = 2 (2 ys1 + 1) = 16x + 10.
** wait_sem: a semaphore call1 waits for (NULL: none). once: without
** call2, st stores ys1 (every kernel called once).
*/
static lm_module *hand_module(const char *wait_sem, const char *ys1_dt,
			      int once)
{
	tb c;
	lm_module *m;
	char *wait;
	tb_init(&c);
	tb_dram(&c, "x", "ExternalInput", "float32", P_, F_);
	tb_dram(&c, "y", "ExternalOutput", "float32", P_, F_);
	tb_sb(&c, "xs", "float32", P_, F_);
	tb_sb(&c, "ys1", ys1_dt, P_, F_);
	tb_sb(&c, "ys2", "float32", P_, F_);
	wait = wait_sem ? lm_xasprintf(",\"wait\":[{\"semaphore\":\"%s\","
				       "\"value\":1}]", wait_sem)
			: lm_xstrdup("");
	tb_inst(&c, "{\"opcode\":\"NKIKernel\",\"name\":\"call0\",\"engine\":"
		"\"SP\",\"func\":\"kload\",\"func_args\":{\"src\":\"x\"},"
		"\"func_outs\":{\"dst\":\"xs\"},\"kernel_source\":\"Beta3\"}");
	tb_inst(&c, "{\"opcode\":\"NKIKernel\",\"name\":\"call1\",\"engine\":"
		"\"Pool\",\"func\":\"k1\",\"func_args\":{\"ka\":\"xs\"},"
		"\"func_outs\":{\"kb\":\"ys1\"},\"dependencies\":[\"call0\"]%s}",
		wait);
	if (!once)
		tb_inst(&c, "{\"opcode\":\"NKIKernel\",\"name\":\"call2\","
			"\"engine\":\"SP\",\"func\":\"k1\",\"func_args\":"
			"{\"ka\":\"ys1\"},\"func_outs\":{\"kb\":\"ys2\"},"
			"\"dependencies\":[\"call1\"]}");
	tb_inst(&c, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[\"%s\"]}",
		AP(once ? "ys1" : "ys2", "float32", P_, F_, 0),
		AP("y", "float32", P_, F_, 0), once ? "call1" : "call2");
	/* kload: a DMA, then a Return that does not wait for it */
	tb_function(&c, "kload", 1);
	c.dram_addr = 0; /* each kernel's tensors as a module of its own */
	c.sb_addr = 4096;
	tb_dram(&c, "src", "Input", "float32", P_, F_);
	tb_sb(&c, "dst", "float32", P_, F_);
	tb_inst(&c, "{\"opcode\":\"DMACopy\",\"name\":\"kl_dma\",\"engine\":"
		"\"SP\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s]}",
		AP("src", "float32", P_, F_, 0), AP("dst", "float32", P_, F_, 0));
	tb_inst(&c, "{\"opcode\":\"Return\",\"name\":\"kl_ret\",\"engine\":"
		"\"SP\"}");
	/* k1 (the inner call binds k1's own tensors) */
	tb_function(&c, "k1", 1);
	c.sb_addr = 8192;
	tb_sb(&c, "ka", "float32", P_, F_);
	tb_sb(&c, "kb", ys1_dt, P_, F_);
	tb_sb(&c, "tmp", "float32", P_, F_);
	tb_sb(&c, "tmp2", "float32", P_, F_);
	tb_inst(&c, "{\"opcode\":\"TensorScalar\","
		"\"reverse0\":false,\"reverse1\":false,\"name\":\"ts\",\"engine\":"
		"\"DVE\",\"op0\":\"mult\",\"const0\":2,\"op1\":\"add\","
		"\"const1\":1,\"ins\":[%s],\"outs\":[%s]}",
		AP("ka", "float32", P_, F_, 0), AP("tmp", "float32", P_, F_, 0));
	tb_inst(&c, "{\"opcode\":\"NKIKernel\",\"name\":\"inner\",\"engine\":"
		"\"Activation\",\"func\":\"k2\",\"func_args\":{\"ja\":\"tmp\"},"
		"\"func_outs\":{\"jb\":\"tmp2\"},\"dependencies\":[\"ts\"]}");
	tb_inst(&c, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
		"\"Activation\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[\"inner\"]}", AP("tmp2", "float32", P_, F_, 0),
		AP("kb", ys1_dt, P_, F_, 0));
	tb_inst(&c, "{\"opcode\":\"Return\",\"name\":\"k1_ret\",\"engine\":"
		"\"SP\",\"dependencies\":[\"cp\"]}");
	/* k2 */
	tb_function(&c, "k2", 1);
	c.sb_addr = 16384;
	tb_sb(&c, "ja", "float32", P_, F_);
	tb_sb(&c, "jb", "float32", P_, F_);
	tb_inst(&c, "{\"opcode\":\"TensorTensor\",\"name\":\"tt\",\"engine\":"
		"\"Pool\",\"op\":\"add\",\"ins\":[%s,%s],\"outs\":[%s]}",
		AP("ja", "float32", P_, F_, 0), AP("ja", "float32", P_, F_, 0),
		AP("jb", "float32", P_, F_, 0));
	tb_inst(&c, "{\"opcode\":\"Return\",\"name\":\"k2_ret\",\"engine\":"
		"\"Pool\"}");
	m = tb_module(&c, 0);
	free(wait);
	tb_free(&c);
	return m;
}

static float hx(int i)
{
	return (float)(i % 13 - 6) * 0.25f;
}

START_TEST(test_nested_sb_formals)
{
	lm_module *m = hand_module(NULL, "float32", 0), *m1, *inl;
	float x[P_ * F_];
	lm_error err;
	ls_result r, ri;
	for (int i = 0; i < P_ * F_; i++)
		x[i] = hx(i);
	/* k1 called twice (each call with its own bindings), k2 nested */
	ck_assert_msg(tb_run1(m, x, P_, F_, NULL, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < P_ * F_; i++)
		ck_assert_msg(tb_out(&r, "y", i) == 16.0f * x[i] + 10.0f,
			      "y[%d] = %g", i, (double)tb_out(&r, "y", i));
	/* 4 caller + 2 kload + 2 * (4 k1 + 2 k2) */
	ck_assert_int_eq(r.instructions, 4 + 2 + 2 * 6);
	ls_result_free(&r);
	/* perturbed schedules: same bits */
	for (uint64_t ps = 1; ps <= 4; ps++) {
		ls_options o;
		memset(&o, 0, sizeof o);
		o.perturb_seed = ps;
		ck_assert_msg(tb_run1(m, x, P_, F_, &o, &r, &err) == 0, "%s",
			      err.msg);
		for (int i = 0; i < P_ * F_; i++)
			ck_assert(tb_out(&r, "y", i) == 16.0f * x[i] + 10.0f);
		ls_result_free(&r);
	}
	/* every kernel once: the inlined form (nested kernels too) gives
	** the same bits as the called form */
	m1 = hand_module(NULL, "float32", 1);
	ck_assert_msg(tb_run1(m1, x, P_, F_, NULL, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < P_ * F_; i++)
		ck_assert(tb_out(&r, "y", i) == 4.0f * x[i] + 2.0f);
	inl = lm_module_clone(m1);
	ck_assert_msg(lp_inline_nki(inl, &err) == 0, "%s", err.msg);
	ck_assert_msg(lm_verify(inl, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tu_count_op(inl, LM_OP_NKIKERNEL), 0);
	ck_assert_msg(tb_run1(inl, x, P_, F_, NULL, &ri, &err) == 0, "%s",
		      err.msg);
	tu_same_outputs(&r.outputs, &ri.outputs);
	ls_result_free(&r);
	ls_result_free(&ri);
	lm_module_free(inl);
	/* k1 twice in one block: the second splice is renamed, the inlined
	** module verifies and gives the called form's bits */
	ck_assert_msg(tb_run1(m, x, P_, F_, NULL, &r, &err) == 0, "%s",
		      err.msg);
	inl = lm_module_clone(m);
	ck_assert_msg(lp_inline_nki(inl, &err) == 0, "%s", err.msg);
	ck_assert_msg(lm_verify(inl, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tu_count_op(inl, LM_OP_NKIKERNEL), 0);
	ck_assert_msg(tb_run1(inl, x, P_, F_, NULL, &ri, &err) == 0, "%s",
		      err.msg);
	tu_same_outputs(&r.outputs, &ri.outputs);
	ls_result_free(&r);
	ls_result_free(&ri);
	lm_module_free(inl);
	lm_module_free(m1);
	lm_module_free(m);
}
END_TEST

START_TEST(test_call_waits_for_body_dma)
{
	/* call1 reads xs, which only kload's DMA writes: had call0 completed
	** at the DMA's issue (or at the body's Return), call1 would read
	** uninitialized memory. The body's DMA must be done first, and the
	** call's completion is at least the DMA latency after time 0. */
	lm_module *m = hand_module(NULL, "float32", 0);
	float x[P_ * F_];
	ls_options o;
	lm_error err;
	ls_result r;
	char *dir = tu_tmpdir("it55-trace"), *tp = lm_xasprintf("%s/t.json",
								 dir);
	char *t, *ts;
	double dma_end = 0, ts_start = 0;
	for (int i = 0; i < P_ * F_; i++)
		x[i] = hx(i);
	memset(&o, 0, sizeof o);
	o.trace_path = tp;
	ck_assert_msg(tb_run1(m, x, P_, F_, &o, &r, &err) == 0, "%s", err.msg);
	ls_result_free(&r);
	/* from the trace: kl_dma's transfer ends before the first ts starts */
	t = tu_read(tp);
	ck_assert_ptr_nonnull(t);
	{
		/* the transfer's async slice: its begin names the
		** instruction, its end (the same id) is the completion */
		cJSON *j = cJSON_Parse(t), *e;
		double id = -1;
		dma_end = -1;
		ck_assert_ptr_nonnull(j);
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
			cJSON *in = cJSON_GetObjectItem(cJSON_GetObjectItem(e,
						"args"), "instruction");
			const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
			if (cJSON_IsString(in) && !strcmp(in->valuestring,
							  "kl_dma"))
				id = cJSON_GetObjectItem(e, "id")->valuedouble;
			else if (!strcmp(ph, "e") && id >= 0 &&
				 cJSON_GetObjectItem(e, "id")->valuedouble == id)
				dma_end = cJSON_GetObjectItem(e, "ts")->valuedouble;
		}
		cJSON_Delete(j);
		ck_assert_msg(dma_end >= 0, "no DMA slice in %s", t);
	}
	ts = strstr(t, "\"name\":\"ts\"");
	ck_assert_ptr_nonnull(ts);
	ck_assert(sscanf(strstr(ts, "\"ts\":") + 5, "%lf", &ts_start) == 1);
	ck_assert_msg(ts_start >= dma_end, "ts starts at %f us, the body DMA "
		      "ends at %f us", ts_start, dma_end);
	free(t);
	free(tp);
	free(dir);
	lm_module_free(m);
}
END_TEST

/* The engine times of kernel call k add up to its time. */
static void kernel_adds_up(const ls_kernel_stats *k)
{
	ck_assert_int_lt(k->start_ps, k->end_ps);
	for (int e = 0; e < LS_ENGINES; e++) {
		ck_assert_int_ge(k->idle_ps[e], 0);
		ck_assert_int_eq(k->busy_ps[e] + k->wait_sem_ps[e] +
				 k->wait_barrier_ps[e] + k->wait_dep_ps[e] +
				 k->idle_ps[e], k->end_ps - k->start_ps);
		ck_assert_int_le(k->last_end_ps[e], k->end_ps);
	}
	ck_assert_int_le(k->dma_active_ps, k->dma_xfer_ps);
	ck_assert_int_le(k->dma_active_ps, k->end_ps - k->start_ps);
	/* per queue instance: the totals split, each union inside the
	** union of all */
	int64_t bytes = 0, n = 0, xfer = 0, act = 0;
	for (int q = 0; q < k->n_queues; q++) {
		const ls_kernel_queue *kq = &k->queues[q];
		ck_assert_int_gt(kq->transfers, 0);
		ck_assert_int_le(kq->active_ps, kq->xfer_ps);
		ck_assert_int_le(kq->active_ps, k->dma_active_ps);
		for (int o = 0; o < q; o++)
			ck_assert_str_ne(k->queues[o].queue, kq->queue);
		bytes += kq->bytes;
		n += kq->transfers;
		xfer += kq->xfer_ps;
		act += kq->active_ps;
	}
	ck_assert_int_eq(bytes, k->dma_bytes);
	ck_assert_int_eq(n, k->dma_transfers);
	ck_assert_int_eq(xfer, k->dma_xfer_ps);
	ck_assert_int_ge(act, k->dma_active_ps);
}

START_TEST(test_kernel_stats)
{
	/* call0 (kload), call1 and call2 (k1), each k1 calling k2 (inner):
	** five kernel calls, listed by start */
	lm_module *m = hand_module(NULL, "float32", 0), *inl;
	float x[P_ * F_];
	lm_error err;
	ls_result r;
	for (int i = 0; i < P_ * F_; i++)
		x[i] = hx(i);
	ck_assert_msg(tb_run1(m, x, P_, F_, NULL, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(r.n_kernels, 5);
	static const char *const call[] = { "call0", "call1", "inner",
					    "call2", "inner" };
	static const char *const func[] = { "kload", "k1", "k2", "k1", "k2" };
	static const int parent[] = { -1, -1, 1, -1, 3 };
	static const int64_t instrs[] = { 2, 6, 2, 6, 2 };
	for (int i = 0; i < 5; i++) {
		const ls_kernel_stats *k = &r.kernels[i];
		ck_assert_str_eq(k->call, call[i]);
		ck_assert_str_eq(k->func, func[i]);
		ck_assert_int_eq(k->parent, parent[i]);
		ck_assert_int_eq(k->depth, parent[i] >= 0);
		ck_assert_int_eq(k->instructions, instrs[i]);
		ck_assert_int_eq(k->core, 0);
		kernel_adds_up(k);
		if (i > 0)
			ck_assert_int_ge(k->start_ps, r.kernels[i - 1].start_ps);
	}
	ck_assert_str_eq(r.kernels[2].caller, "k1");
	/* call1 starts when call0 is complete (its dependency) */
	ck_assert_int_ge(r.kernels[1].start_ps, r.kernels[0].end_ps);
	/* kload: one DMA, the call ends when it lands, after its Return */
	ck_assert_int_eq(r.kernels[0].dma_transfers, 1);
	ck_assert_int_eq(r.kernels[0].dma_bytes, P_ * F_ * 4);
	ck_assert_int_gt(r.kernels[0].dma_active_ps, 0);
	ck_assert_int_eq(r.kernels[0].dma_end_ps, r.kernels[0].end_ps);
	ck_assert_int_eq(r.kernels[0].n_queues, 1);
	ck_assert_str_eq(r.kernels[0].queues[0].queue, "q1/q1a");
	ck_assert_int_eq(r.kernels[0].queues[0].bytes, P_ * F_ * 4);
	ck_assert_int_eq(r.kernels[0].queues[0].active_ps,
			 r.kernels[0].dma_active_ps);
	ck_assert_int_eq(r.kernels[0].critical, LS_ENGINES);
	ck_assert_str_eq(ls_kernel_engine_name(r.kernels[0].critical), "DMA");
	for (int i = 1; i < 5; i++) {
		ck_assert_int_eq(r.kernels[i].dma_transfers, 0);
		ck_assert_int_eq(r.kernels[i].n_queues, 0);
	}
	/* k2 runs only on Pool: Pool is its critical engine */
	for (int e = 0; e < LS_ENGINES; e++)
		ck_assert(e == 3 ? r.kernels[2].busy_ps[e] > 0 :
			  r.kernels[2].busy_ps[e] == 0);
	ck_assert_int_eq(r.kernels[2].critical, 3);
	/* a nested call counts in the call around it: inside it, and its
	** busy time part of the outer's */
	for (int j = 1; j <= 3; j += 2) {
		const ls_kernel_stats *o = &r.kernels[j], *n = &r.kernels[j + 1];
		ck_assert_int_ge(n->start_ps, o->start_ps);
		ck_assert_int_le(n->end_ps, o->end_ps);
		ck_assert_int_ge(o->busy_ps[3], n->busy_ps[3]);
		/* cp (Activation) waits for inner: a dependency wait of k1 */
		ck_assert_int_gt(o->wait_dep_ps[1], 0);
		ck_assert_int_le(o->wait_dep_ps[1] + o->busy_ps[1],
				 r.cores[0].wait_dep_ps[1] + r.cores[0].busy_ps[1]);
	}
	/* the body busy time is part of the core's */
	for (int e = 0; e < LS_ENGINES; e++) {
		int64_t sum = 0;
		for (int i = 0; i < 5; i++)
			sum += r.kernels[i].parent < 0 ? r.kernels[i].busy_ps[e]
							: 0;
		ck_assert_int_le(sum, r.cores[0].busy_ps[e]);
	}
	ls_result_free(&r);
	ck_assert_int_eq(r.n_kernels, 0);
	ck_assert_ptr_null(r.kernels);
	/* the same program inlined makes no kernel call */
	inl = lm_module_clone(m);
	ck_assert_msg(lp_inline_nki(inl, &err) == 0, "%s", err.msg);
	ck_assert_msg(tb_run1(inl, x, P_, F_, NULL, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(r.n_kernels, 0);
	ck_assert_ptr_null(r.kernels);
	ls_result_free(&r);
	/* perturbed schedules: the same calls, adding up */
	for (uint64_t ps = 1; ps <= 3; ps++) {
		ls_options o;
		memset(&o, 0, sizeof o);
		o.perturb_seed = ps;
		ck_assert_msg(tb_run1(m, x, P_, F_, &o, &r, &err) == 0, "%s",
			      err.msg);
		ck_assert_int_eq(r.n_kernels, 5);
		for (int i = 0; i < 5; i++)
			kernel_adds_up(&r.kernels[i]);
		ls_result_free(&r);
	}
	lm_module_free(inl);
	lm_module_free(m);
}
END_TEST

/*
** A kernel whose body halts its DVE: the call never completes, nothing
** waits for it, the run ends normally and the call lasts to its end.
*/
START_TEST(test_kernel_stats_halted)
{
	tb c;
	lm_module *m;
	float x[P_ * F_] = { 0 };
	lm_error err;
	ls_result r;
	tb_init(&c);
	tb_dram(&c, "x", "ExternalInput", "float32", P_, F_);
	tb_dram(&c, "y", "ExternalOutput", "float32", P_, F_);
	tb_sb(&c, "xs", "float32", P_, F_);
	tb_sb(&c, "ys", "float32", P_, F_);
	tb_inst(&c, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", P_, F_, 0), AP("xs", "float32", P_, F_, 0));
	tb_inst(&c, "{\"opcode\":\"NKIKernel\",\"name\":\"hcall\",\"engine\":"
		"\"SP\",\"func\":\"kh\",\"func_args\":{\"ka\":\"xs\"},"
		"\"func_outs\":{\"kb\":\"ys\"},\"dependencies\":[\"ld\"],"
		"\"kernel_source\":\"Beta3\"}");
	tb_inst(&c, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[\"ld\"]}",
		AP("xs", "float32", P_, F_, 0), AP("y", "float32", P_, F_, 0));
	tb_function(&c, "kh", 1);
	c.sb_addr = 8192;
	tb_sb(&c, "ka", "float32", P_, F_);
	tb_sb(&c, "kb", "float32", P_, F_);
	tb_inst(&c, "{\"opcode\":\"TensorScalar\","
		"\"reverse0\":false,\"reverse1\":false,\"name\":\"ts\",\"engine\":"
		"\"DVE\",\"op0\":\"mult\",\"const0\":2,\"op1\":\"add\","
		"\"const1\":1,\"ins\":[%s],\"outs\":[%s]}",
		AP("ka", "float32", P_, F_, 0), AP("kb", "float32", P_, F_, 0));
	tb_inst(&c, "{\"opcode\":\"Halt\",\"name\":\"h\",\"engine\":\"DVE\","
		"\"dependencies\":[\"ts\"]}");
	tb_inst(&c, "{\"opcode\":\"Return\",\"name\":\"kh_ret\",\"engine\":"
		"\"SP\"}");
	m = tb_module(&c, 0);
	tb_free(&c);
	ck_assert_msg(tb_run1(m, x, P_, F_, NULL, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(r.n_kernels, 1);
	ck_assert_str_eq(r.kernels[0].call, "hcall");
	ck_assert_int_eq(r.kernels[0].end_ps, r.sim_time_ps);
	ck_assert_int_gt(r.kernels[0].busy_ps[2], 0);
	kernel_adds_up(&r.kernels[0]);
	ls_result_free(&r);
	lm_module_free(m);
}
END_TEST

START_TEST(test_call_errors)
{
	lm_module *m;
	float x[P_ * F_] = { 0 };
	lm_error err;
	ls_result r;
	/* bindings whose dtypes differ: k1's kb and ys1 are bfloat16, so
	** call2 binds ka (float32) to ys1 */
	m = hand_module(NULL, "bfloat16", 0);
	ck_assert_int_ne(tb_run1(m, x, P_, F_, NULL, &r, &err), 0);
	ck_assert_contains(err.msg, "instruction call2");
	ck_assert_contains(err.msg, "NKIKernel (IT55) call of 'k1': cannot "
			   "bind formal 'ka' (float32, 128 elements) to 'ys1' "
			   "(bfloat16, 128 elements)");
	lm_module_free(m);
	/* a call that never starts: its body waits for it; the deadlock
	** report says so */
	m = hand_module("s3", "float32", 0);
	ck_assert_int_ne(tb_run1(m, x, P_, F_, NULL, &r, &err), 0);
	ck_assert_contains(err.msg, "deadlock");
	ck_assert_contains(err.msg, "'call1' (NKIKernel) waits for semaphore "
			   "'s3' >= 1");
	ck_assert_contains(err.msg, "'ts' (TensorScalar) waits for the "
			   "NKIKernel call 'call1' to start");
	lm_module_free(m);
}
END_TEST

/* ---- two cores, each with a kernel: lower, link, diff --------------------- */

/* dir/cores/nc<c>/sg0/def.json: core 0 a BIR-JSON kernel, core 1 a KLR
** kernel (each beside its module), outputs y0 / y1. */
static void two_core_dir(const char *dir)
{
	const char *callers[2] = { "b_caller.json", "a_caller_small.json" };
	for (int c = 0; c < 2; c++) {
		char *p = tu_fixture("provision", callers[c]), *t = tu_read(p),
		     *t2, *t3;
		char *yname = lm_xasprintf("\"y%d\"", c);
		char *core = lm_xasprintf("\"neuron_core_id\": %d", c);
		char *sub = lm_xasprintf("%s/cores/nc%d/sg0", dir, c);
		t2 = tu_replace_all(t, "\"y\"", yname);
		t3 = tu_replace_all(t2, "\"neuron_core_id\": 0", core);
		free(tu_write(sub, "def.json", t3));
		if (c == 0) {
			tu_copy_fixture("provision", "b_kernel.json", sub);
			tu_copy_fixture("provision", "w.npy", sub);
		} else {
			tu_pack_klr("k_small", sub, NULL);
		}
		free(p); free(t); free(t2); free(t3);
		free(yname); free(core); free(sub);
	}
}

START_TEST(test_two_cores_link_diff)
{
	char *dir = tu_tmpdir("it55-two");
	lm_module *src[2], *called[2], *inl[2], *linked = NULL;
	lk_options lo;
	lk_report rep;
	ls_tensors in = { 0, NULL };
	ls_diff_opts dopt;
	ls_diff_result dr;
	ls_result ri;
	lm_error err;

	two_core_dir(dir);
	for (int c = 0; c < 2; c++) {
		char *p = lm_xasprintf("%s/cores/nc%d/sg0/def.json", dir, c);
		src[c] = tu_load(p);
		called[c] = tu_lower_ok(src[c], 0, NULL);
		inl[c] = tu_lower_ok(src[c], 1, NULL);
		ck_assert_int_eq(tu_count_op(called[c], LM_OP_NKIKERNEL), 1);
		free(p);
	}
	memset(&lo, 0, sizeof lo);
	memset(&rep, 0, sizeof rep);
	lo.abs_file_paths = 1;
	ck_assert_msg(lk_link(called, 2, &lo, &linked, &rep, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(tu_count_op(linked, LM_OP_NKIKERNEL), 2);
	ck_assert_msg(ls_make_inputs(called, 2, NULL, 11, &in, &err) == 0,
		      "%s", err.msg);
	/* reference = the per-core called modules side by side; linked =
	** lk_link's output, still calling the kernels */
	memset(&dopt, 0, sizeof dopt);
	dopt.schedules = 2;
	ck_assert_msg(ls_diff(called, 2, linked, &in, &dopt, &dr, &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(dr.status == LS_DIFF_PASS, "%s", dr.message);
	ck_assert_int_eq(dr.n_expected, 2);
	/* and the inlined per-core modules agree with the called ones */
	ck_assert_msg(ls_run_multi(inl, 2, &in, NULL, &ri, &err) == 0, "%s",
		      err.msg);
	tu_same_outputs(&dr.ref.outputs, &ri.outputs);
	ls_result_free(&ri);
	ls_diff_result_free(&dr);
	ls_tensors_free(&in);
	lk_report_free(&rep);
	lm_module_free(linked);
	for (int c = 0; c < 2; c++) {
		lm_module_free(src[c]);
		lm_module_free(called[c]);
		lm_module_free(inl[c]);
	}
	free(dir);
}
END_TEST

/*
** Inlining a linked module: the linker's packed calls (one with a 400 KB
** kernel_source, which gets a block of its own) are unpacked before their
** fields move; the inlined linked module still matches the per-core ones.
** Such a kernel_source is no KernelSource name, so the verifier would
** refuse the inputs and the linked module while the calls are in it: the
** link trusts its inputs and skips its verify step, and the inlined
** result (no calls left) is verified here instead.
*/
START_TEST(test_inline_linked)
{
	char *dir = tu_tmpdir("it55-inl");
	lm_module *called[2], *linked = NULL;
	lk_options lo;
	lk_report rep;
	ls_tensors in = { 0, NULL };
	ls_diff_opts dopt;
	ls_diff_result dr;
	lm_error err;

	two_core_dir(dir);
	for (int c = 0; c < 2; c++) {
		char *p = lm_xasprintf("%s/cores/nc%d/sg0/def.json", dir, c);
		lm_module *src = tu_load(p);
		called[c] = tu_lower_ok(src, 0, NULL);
		lm_module_free(src);
		free(p);
	}
	for (int f = 0; f < called[0]->n_functions; f++)
		for (int b = 0; b < called[0]->functions[f].n_blocks; b++)
			for (int i = 0; i < called[0]->functions[f].blocks[b].n_insts;
			     i++) {
				lm_inst *k = &called[0]->functions[f].blocks[b].insts[i];
				if (k->op != LM_OP_NKIKERNEL)
					continue;
				free(k->kernel_source);
				k->kernel_source = lm_xmalloc(400001);
				memset(k->kernel_source, '#', 400000);
				k->kernel_source[400000] = 0;
			}
	memset(&lo, 0, sizeof lo);
	memset(&rep, 0, sizeof rep);
	lo.abs_file_paths = 1;
	lo.trust_inputs = 1;
	lo.skip = LK_SKIP(LK_STEP_VERIFY);
	ck_assert_msg(lk_link(called, 2, &lo, &linked, &rep, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(tu_count_op(linked, LM_OP_NKIKERNEL), 2);
	ck_assert_msg(lp_inline_nki(linked, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tu_count_op(linked, LM_OP_NKIKERNEL), 0);
	{
		lm_verify_opts vo = { 1 };
		ck_assert_msg(lm_verify(linked, &vo, &err) == 0, "%s", err.msg);
	}
	ck_assert_msg(ls_make_inputs(called, 2, NULL, 5, &in, &err) == 0,
		      "%s", err.msg);
	memset(&dopt, 0, sizeof dopt);
	ck_assert_msg(ls_diff(called, 2, linked, &in, &dopt, &dr, &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(dr.status == LS_DIFF_PASS, "%s", dr.message);
	ls_diff_result_free(&dr);
	ls_tensors_free(&in);
	lk_report_free(&rep);
	lm_module_free(linked);
	for (int c = 0; c < 2; c++)
		lm_module_free(called[c]);
	free(dir);
}
END_TEST

/* ---- the command line ------------------------------------------------------ */

START_TEST(test_cli_run_called_form)
{
	char *dir = tu_tmpdir("it55-cli");
	tu_run r;
	char *a, *b;
	tu_copy_fixture("provision", "b_caller.json", dir);
	tu_copy_fixture("provision", "b_kernel.json", dir);
	tu_copy_fixture("provision", "w.npy", dir);
	r = tu_lncsim(dir, "lower", "-o", "called.json", "b_caller.json",
		      NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(dir, "lower", "--inline", "-o", "inl.json",
		      "b_caller.json", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(dir, "run", "--no-db", "--seed", "3", "--outputs",
		      "out_called", "--stats", "called.json", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	/* --stats: the call, its DMA per queue instance */
	ck_assert_contains(r.out, "\n1 kernel call\ncall  core depth "
			   "instruction");
	ck_assert_contains(r.out, "\nk0    0    0     inst__relu_k             "
			   "relu_k   ");
	ck_assert_contains(r.out, "\n      queue qSyncIO0_1/qSyncIO0_2: in "
			   "flight ");
	ck_assert_contains(r.out, "%, 66048 bytes, 3 transfers\n");
	tu_run_free(&r);
	r = tu_lncsim(dir, "run", "--no-db", "--seed", "3", "--outputs",
		      "out_inl", "--stats", "inl.json", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert(strstr(r.out, "kernel call") == NULL);
	tu_run_free(&r);
	a = lm_xasprintf("%s/out_called/y.npy", dir);
	b = lm_xasprintf("%s/out_inl/y.npy", dir);
	{
		char *ta = NULL, *tb2 = NULL;
		size_t na, nb;
		lm_error err;
		ck_assert_int_eq(lm_read_file(a, &ta, &na, &err), 0);
		ck_assert_int_eq(lm_read_file(b, &tb2, &nb, &err), 0);
		ck_assert_int_eq(na, nb);
		ck_assert(memcmp(ta, tb2, na) == 0);
		free(ta);
		free(tb2);
	}
	free(a);
	free(b);

	/* per-core directories lowered without --inline: lncsim diff */
	two_core_dir(dir);
	r = tu_lncsim(dir, "lower", "-o", "low", "cores", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(dir, "diff", "--no-db", "--schedules", "2", "low", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	ck_assert_contains(r.out, "2 outputs bit-identical");
	tu_run_free(&r);
	free(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("it55");
	TCase *c = tcase_create("core");
	tcase_add_test(c, test_bir_called_equals_inlined);
	tcase_add_test(c, test_klr_called_equals_inlined);
	tcase_add_test(c, test_called_values);
	tcase_add_test(c, test_nested_sb_formals);
	tcase_add_test(c, test_call_waits_for_body_dma);
	tcase_add_test(c, test_kernel_stats);
	tcase_add_test(c, test_kernel_stats_halted);
	tcase_add_test(c, test_call_errors);
	tcase_add_test(c, test_two_cores_link_diff);
	tcase_add_test(c, test_inline_linked);
	tcase_add_test(c, test_cli_run_called_form);
	tcase_set_timeout(c, 120);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

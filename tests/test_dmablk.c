/*
** test_dmablk.c -- DMA blocks in the simulator: a DMATrigger fires its
** blocks round robin, SwitchQueueInstance (with and without no_rearm) and
** ResetQueueInstance rewind it, a waiting descriptor holds its queue
** instance (head of line, a DMA issued behind it included), the CCE
** descriptor's add / max / min against values computed here, a block's
** timing against the DMACopys it replaces, a two-core module with
** triggers linked and compared with lncsim's differential check, and
** every bad input: the verifier's rows, the simulator's refusals, the
** deadlock report of a descriptor that never runs.
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "linker.h"
#include "arch.h"
#include "sim.h"
#include "sim_int.h"
#include "simcheck.h"
#include "diff.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- wire text ------------------------------------------------------------ */

/* A descriptor: {"opcode": op, "name": name, ins, outs, more}. */
static char *desc(const char *op, const char *name, const char *ins,
		  const char *outs, const char *more)
{
	return lm_xasprintf("{\"opcode\":\"DMADescriptor%s\",\"name\":\"%s\","
			    "\"engine\":\"DMA\",\"ins\":[%s],\"outs\":[%s]%s}",
			    op, name, ins, outs, more ? more : "");
}

/* A DMABlock name holding the descriptors body (more: its other keys). */
static void block(tb *t, const char *name, const char *body,
		  const char *more)
{
	tb_inst(t, "{\"opcode\":\"DMABlock\",\"name\":\"%s\",\"engine\":"
		"\"DMA\",\"ins\":[],\"outs\":[],\"blocks\":[{\"name\":\"%s_b\","
		"\"instructions\":[%s]}]%s}", name, name, body,
		more ? more : "");
}

/* A block of one descriptor (freed). */
static void block1(tb *t, const char *name, char *d, const char *more)
{
	block(t, name, d, more);
	free(d);
}

static void memset_(tb *t, const char *name, const char *opnd, double v)
{
	tb_inst(t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"%s\","
		"\"engine\":\"DVE\",\"outs\":[%s],\"value\":%g}", name, opnd, v);
}

/* A DMACopy on SP of queue q (deps: a "dependencies" list or ""). */
static void copy(tb *t, const char *name, const char *q, const char *in,
		 const char *out, const char *deps)
{
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"%s\",\"engine\":\"SP\","
		"\"queue\":\"%s\",\"ins\":[%s],\"outs\":[%s]%s}", name, q, in,
		out, deps);
}

/* A DMATrigger on SP of queue q firing blocks (a JSON list body). */
static char *trigger(const char *name, const char *q, const char *blocks,
		     const char *more)
{
	return lm_xasprintf("{\"opcode\":\"DMATrigger\",\"name\":\"%s\","
			    "\"engine\":\"SP\",\"queue\":\"%s\",\"dma_blocks\":"
			    "[%s],\"ins\":[],\"outs\":[]%s}", name, q, blocks,
			    more ? more : "");
}

#define F4(n) AP(n, "float32", 1, 4, 0)

/* "a,b" (one of 8 rotating buffers). */
static const char *two(const char *a, const char *b)
{
	static char bufs[8][1024];
	static int k;
	char *p = bufs[k++ % 8];
	snprintf(p, 1024, "%s,%s", a, b);
	return p;
}
#define DEPS1(a) ",\"dependencies\":[[\"" a "\",\"Flow\"]]"
#define DEPS2(a, b) ",\"dependencies\":[[\"" a "\",\"Flow\"],[\"" b \
	"\",\"Flow\"]]"

/* Run m (freed) with options o (NULL: none): the result in r. */
static void run_ok(lm_module *m, const ls_options *o, ls_result *r)
{
	lm_error err;
	int rc = tb_run1(m, NULL, 0, 0, o, r, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	lm_module_free(m);
}

/* Every element of y[off .. off + n) is v. */
static void expect_all(const ls_result *r, const char *y, int off, int n,
		       float v)
{
	for (int i = 0; i < n; i++)
		ck_assert_same_f(tb_out(r, y, off + i), v);
}

/* ---- round robin ---------------------------------------------------------- */

/*
** Blocks b0 (a := a + 1), b1 (c := a) and b2 (a := a + a), the trigger
** in a Loop of 4: b0 b1 b2 b0 leaves a = ((0 + 1) * 2) + 1 = 3 and c =
** 1; any other order leaves other values (b0 b0 b1 b2: a = 4, c = 2).
** A NoOp after the trigger waits for it (for its block) in each
** iteration: a descriptor reads at its transfer's start and writes at
** its completion, so blocks in flight together would race.
*/
static lm_module *round_robin(void)
{
	tb t;
	char *tr;
	tb_init(&t);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, 8);
	tb_sb(&t, "a", "float32", 1, 4);
	tb_sb(&t, "one", "float32", 1, 4);
	tb_sb(&t, "c", "float32", 1, 4);
	memset_(&t, "m0", F4("a"), 0);
	memset_(&t, "m1", F4("one"), 1);
	block1(&t, "b0", desc("CCE", "d0", two(F4("a"), F4("one")),
			      F4("a"), ",\"op\":\"add\""), NULL);
	block1(&t, "b1", desc("Copy", "d1", F4("a"), F4("c"), NULL), NULL);
	block1(&t, "b2", desc("CCE", "d2", two(F4("a"), F4("a")),
			      F4("a"), ",\"op\":\"add\""), NULL);
	tr = trigger("t", "q0", "\"b0\",\"b1\",\"b2\"", DEPS2("m0", "m1"));
	tb_inst(&t, "{\"opcode\":\"Loop\",\"name\":\"l\",\"engine\":\"SP\","
		"\"LoopAxis\":{\"name\":\"i\",\"lb\":0,\"ub\":4,\"stride\":1},"
		"\"ins\":[],\"outs\":[],\"blocks\":[{\"name\":\"lb\","
		"\"instructions\":[%s,{\"opcode\":\"NoOp\",\"name\":\"w\","
		"\"engine\":\"SP\",\"ins\":[],\"outs\":[]" DEPS1("t") "}]}]}",
		tr);
	free(tr);
	copy(&t, "s0", "q0", F4("a"), AP("y", "float32", 1, 4, 0), DEPS1("t"));
	copy(&t, "s1", "q0", F4("c"), AP("y", "float32", 1, 4, 4), DEPS1("t"));
	return tb_module(&t, 0);
}

START_TEST(test_round_robin)
{
	for (int k = 0; k < 5; k++) {
		ls_options o = {0};
		ls_result r;
		o.perturb_seed = (uint64_t)k;
		run_ok(round_robin(), &o, &r);
		expect_all(&r, "y", 0, 4, 3.0f);
		expect_all(&r, "y", 4, 4, 1.0f);
		/* 4 fires of one descriptor each */
		ck_assert_int_eq(r.cores[0].dma_transfers, 4 + 2);
		ls_result_free(&r);
	}
}
END_TEST

/* The trace of a run: one X slice per executed instruction (the trigger
** included, not its descriptors), one async transfer per descriptor and
** DMA, each on its queue instance's track. */
START_TEST(test_trace)
{
	char *dir = tu_tmpdir("dmablk-trace");
	char *path = lm_path_join(dir, "t.json");
	ls_options o = {0};
	ls_result r;
	char *text;
	cJSON *j, *ev;
	int nx = 0, nb = 0, nd = 0;
	o.trace_path = path;
	run_ok(round_robin(), &o, &r);
	text = tu_read(path);
	ck_assert_ptr_nonnull(text);
	j = cJSON_Parse(text);
	ck_assert_ptr_nonnull(j);
	ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	for (const cJSON *e = ev ? ev->child : NULL; e; e = e->next) {
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
		const cJSON *in = a ? cJSON_GetObjectItemCaseSensitive(
			a, "instruction") : NULL;
		if (!cJSON_IsString(ph))
			continue;
		nx += !strcmp(ph->valuestring, "X");
		nb += !strcmp(ph->valuestring, "b");
		nd += !strcmp(ph->valuestring, "b") && cJSON_IsString(in) &&
		      in->valuestring[0] == 'd';
	}
	ck_assert_int_eq(nx, (int)r.cores[0].instructions);
	ck_assert_int_eq(nb, (int)r.cores[0].dma_transfers);
	ck_assert_int_eq(nd, 4);
	cJSON_Delete(j);
	free(text);
	ls_result_free(&r);
	free(path);
	free(dir);
}
END_TEST

/* ---- rewinds -------------------------------------------------------------- */

/*
** Function g fires trigger t (blocks b0: a := a + 1, b1: a := a + a) on
** queue q1; the entry calls g, passes sw (a queue switch or reset), calls
** g twice more. Rewound: b0 b0 b1, a = (1 + 1) * 2 = 4; not rewound
** (no_rearm): b0 b1 b0, a = (1 * 2) + 1 = 3.
*/
static lm_module *rewind_module(const char *sw)
{
	tb t;
	char *tr;
	tb_init(&t);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, 4);
	tb_sb(&t, "a", "float32", 1, 4);
	tb_sb(&t, "one", "float32", 1, 4);
	memset_(&t, "m0", F4("a"), 0);
	memset_(&t, "m1", F4("one"), 1);
	tb_inst(&t, "{\"opcode\":\"Call\",\"name\":\"c1\",\"engine\":\"SP\","
		"\"target\":\"g\",\"ins\":[],\"outs\":[]" DEPS2("m0", "m1") "}");
	tb_inst(&t, "%s", sw);
	tb_inst(&t, "{\"opcode\":\"Call\",\"name\":\"c2\",\"engine\":\"SP\","
		"\"target\":\"g\",\"ins\":[],\"outs\":[]" DEPS1("c1") "}");
	tb_inst(&t, "{\"opcode\":\"Call\",\"name\":\"c3\",\"engine\":\"SP\","
		"\"target\":\"g\",\"ins\":[],\"outs\":[]" DEPS1("c2") "}");
	copy(&t, "s0", "q0", F4("a"), F4("y"), DEPS1("c3"));
	tb_inst(&t, "{\"opcode\":\"Return\",\"name\":\"r\",\"engine\":\"SP\","
		"\"ins\":[],\"outs\":[]}");
	tb_function(&t, "g", 0);
	block1(&t, "b0", desc("CCE", "d0", two(F4("a"), F4("one")),
			      F4("a"), ",\"op\":\"add\""), NULL);
	block1(&t, "b1", desc("CCE", "d1", two(F4("a"), F4("a")),
			      F4("a"), ",\"op\":\"add\""), NULL);
	tr = trigger("t", "q1", "\"b0\",\"b1\"", NULL);
	tb_inst(&t, "%s", tr);
	free(tr);
	tb_inst(&t, "{\"opcode\":\"Return\",\"name\":\"gr\",\"engine\":\"SP\","
		"\"ins\":[],\"outs\":[]}");
	return tb_module(&t, 0);
}

static void rewind_case(const char *sw, float want)
{
	for (int k = 0; k < 4; k++) {
		ls_options o = {0};
		ls_result r;
		o.perturb_seed = (uint64_t)k;
		run_ok(rewind_module(sw), &o, &r);
		expect_all(&r, "y", 0, 4, want);
		ls_result_free(&r);
	}
}

#define SWITCH(eng, more) "{\"opcode\":\"SwitchQueueInstance\",\"name\":" \
	"\"sw\",\"engine\":\"" eng "\",\"queue\":\"q1\",\"instance\":\"q1b\"," \
	"\"ins\":[],\"outs\":[]" more "}"

START_TEST(test_rewind)
{
	/* the switch on the trigger's engine and on another one: each
	   engine rewinds its own triggers where it passes the switch */
	rewind_case(SWITCH("SP", ""), 4.0f);
	rewind_case(SWITCH("Pool", ""), 4.0f);
	rewind_case(SWITCH("SP", ",\"no_rearm\":false"), 4.0f);
	rewind_case(SWITCH("SP", ",\"no_rearm\":true"), 3.0f);
	rewind_case(SWITCH("Pool", ",\"no_rearm\":true"), 3.0f);
	rewind_case("{\"opcode\":\"ResetQueueInstance\",\"name\":\"sw\","
		    "\"engine\":\"SP\",\"queue\":\"q1\",\"instance\":\"q1a\","
		    "\"ins\":[],\"outs\":[]}", 4.0f);
	/* a NoOp instead: no rewind at all */
	rewind_case("{\"opcode\":\"NoOp\",\"name\":\"sw\",\"engine\":\"SP\","
		    "\"ins\":[],\"outs\":[]}", 3.0f);
}
END_TEST

/* ---- head of line ----------------------------------------------------------- */

/*
** Trigger t1 fires b1 whose descriptor d1 (y[0..4) := z) waits for s3 >=
** want; t2 fires b2 (d2: y[4..8) := a) and the DMACopy cp (y[8..12) :=
** a, s2 + 1) is issued after both, all on q0. Pool sets a := 1, then a
** := 5 and only then signals s3. Held behind d1, d2 reads a = 5 (run
** past it, 1); cp reads a = 1 at its issue, like any DMA, but completes
** behind them: cw (Activation, queue q1), waiting for s2, reads a = 5
** into y[12..16) (were cp not held, it would complete first and cw read
** 1).
*/
static lm_module *hol_module(int want, const char *b1_sync)
{
	tb t;
	char *tr, *d, w[200];
	tb_init(&t);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, 16);
	tb_sb(&t, "a", "float32", 1, 4);
	tb_sb(&t, "z", "float32", 1, 4);
	tb_sb(&t, "long", "float32", 1, 16384);
	memset_(&t, "m1", F4("a"), 1);
	memset_(&t, "mz", F4("z"), 7);
	/* Pool is busy for 16384 cycles (~14 us, the DMA latency is 2 us)
	   before it sets a := 5 */
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"ml\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":0}",
		AP("long", "float32", 1, 16384, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"m5\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":5,"
		"\"sync_info\":{\"on_update\":[{\"semaphore\":\"s3\",\"mode\":"
		"\"sem-inc\"}]}" DEPS1("m1") "}", F4("a"));
	snprintf(w, sizeof w, ",\"sync_info\":{\"on_wait\":[{\"semaphore\":"
		 "\"s3\",\"mode\":\"sem-ge-imm\",\"value\":%d}]}", want);
	d = desc("Copy", "d1", F4("z"), AP("y", "float32", 1, 4, 0), w);
	block1(&t, "b1", d, b1_sync);
	block1(&t, "b2", desc("Copy", "d2", F4("a"), AP("y", "float32", 1, 4,
							 4), NULL), NULL);
	tr = trigger("t1", "q0", "\"b1\"", DEPS2("m1", "mz"));
	tb_inst(&t, "%s", tr);
	free(tr);
	tr = trigger("t2", "q0", "\"b2\"", NULL);
	tb_inst(&t, "%s", tr);
	free(tr);
	copy(&t, "cp", "q0", F4("a"), AP("y", "float32", 1, 4, 8),
	     ",\"sync_info\":{\"on_update\":[{\"semaphore\":\"s2\",\"mode\":"
	     "\"sem-inc\"}]}");
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"cw\",\"engine\":"
		"\"Activation\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s],"
		"\"sync_info\":{\"on_wait\":[{\"semaphore\":\"s2\",\"mode\":"
		"\"sem-ge-imm\",\"value\":1}]}}", F4("a"),
		AP("y", "float32", 1, 4, 12));
	return tb_module(&t, 0);
}

START_TEST(test_head_of_line)
{
	for (int k = 0; k < 4; k++) {
		ls_options o = {0};
		ls_result r;
		o.perturb_seed = (uint64_t)k;
		run_ok(hol_module(1, NULL), &o, &r);
		expect_all(&r, "y", 0, 4, 7.0f);
		expect_all(&r, "y", 4, 4, 5.0f);
		expect_all(&r, "y", 8, 4, 1.0f);
		expect_all(&r, "y", 12, 4, 5.0f);
		ls_result_free(&r);
	}
	/* the block's own wait holds its first descriptor the same way */
	{
		ls_result r;
		run_ok(hol_module(0, ",\"sync_info\":{\"on_wait\":[{"
				  "\"semaphore\":\"s3\",\"mode\":\"sem-ge-imm\","
				  "\"value\":1}]}"), NULL, &r);
		expect_all(&r, "y", 4, 4, 5.0f);
		expect_all(&r, "y", 12, 4, 5.0f);
		ls_result_free(&r);
	}
}
END_TEST

/* A descriptor waiting for a value never reached: the deadlock report
** names the instance, the descriptor, its block, the semaphore. */
START_TEST(test_descriptor_deadlock)
{
	lm_module *m = hol_module(2, NULL);
	ls_result r;
	lm_error err;
	ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "deadlock at t=");
	ck_assert_contains(err.msg, "queue instance 'q0' core 0: descriptor "
			   "'d1' of block 'b1' waits for semaphore 's3' >= 2 "
			   "(value 1)");
	lm_module_free(m);
	m = hol_module(0, ",\"sync_info\":{\"on_wait\":[{\"semaphore\":\"s2\","
		       "\"mode\":\"sem-ge-imm\",\"value\":1}]}");
	ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "queue instance 'q0' core 0: block 'b1' "
			   "waits for semaphore 's2' >= 1 (value 0)");
	lm_module_free(m);
}
END_TEST

/* ---- CCE -------------------------------------------------------------------- */

START_TEST(test_cce_values)
{
	static const float x[12] = {
		1.5f, -2.0f, 3.0f, -0.25f,
		-1.0f, -3.0f, 0.5f, 8.0f,
		2.0f, -1.0f, -4.0f, 0.125f,
	};
	/* a zeroed float32 accumulator folded over the three rows in order:
	   add 0 + r0 + r1 + r2; max and min start from 0 as well, so an
	   all-negative column's max is 0 and an all-positive one's min 0 */
	static const float add[4] = { 2.5f, -6.0f, -0.5f, 7.875f };
	static const float mx[4] = { 2.0f, 0.0f, 3.0f, 8.0f };
	static const float mn[4] = { -1.0f, -3.0f, -4.0f, -0.25f };
	const char *ops[3] = { "add", "max", "min" };
	const float *want[3] = { add, mx, mn };
	tb t;
	char *body = lm_xstrdup(""), *tr;
	lm_module *m;
	ls_result r;
	lm_error err;

	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 3, 4);
	tb_dram(&t, "y", "ExternalOutput", "float32", 3, 4);
	for (int k = 0; k < 3; k++) {
		char name[8], more[40], ins[600];
		char *d, *nb;
		snprintf(name, sizeof name, "d%d", k);
		snprintf(more, sizeof more, ",\"op\":\"%s\"", ops[k]);
		snprintf(ins, sizeof ins, "%s,%s,%s",
			 AP("x", "float32", 1, 4, 0), AP("x", "float32", 1, 4, 4),
			 AP("x", "float32", 1, 4, 8));
		d = desc("CCE", name, ins, AP("y", "float32", 1, 4, 4 * k),
			 more);
		nb = lm_xasprintf("%s%s%s", body, k ? "," : "", d);
		free(body);
		free(d);
		body = nb;
	}
	block(&t, "b", body, NULL);
	free(body);
	tr = trigger("t", "q0", "\"b\"", NULL);
	tb_inst(&t, "%s", tr);
	free(tr);
	m = tb_module(&t, 0);
	ck_assert_msg(tb_run1(m, x, 3, 4, NULL, &r, &err) == 0, "%s", err.msg);
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 4; i++)
			ck_assert_same_f(tb_out(&r, "y", 4 * k + i), want[k][i]);
	ck_assert_int_eq(r.cores[0].dma_transfers, 3);
	ls_result_free(&r);
	lm_module_free(m);
}
END_TEST

/* ---- timing ------------------------------------------------------------------- */

/* Four copies of x's rows [128, 64] into SB: a block of four
** descriptors fired by one trigger, or four DMACopys. */
static lm_module *four_copies(int as_block)
{
	tb t;
	char *body = lm_xstrdup("");
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 512, 64);
	tb_sb(&t, "xs", "float32", 128, 256);
	for (int k = 0; k < 4; k++) {
		char name[8], src[400], dst[400];
		snprintf(name, sizeof name, "c%d", k);
		snprintf(src, sizeof src, "%s", AP("x", "float32", 128, 64,
						    k * 128 * 64));
		snprintf(dst, sizeof dst, "%s", APS("xs", "float32", 128, 64,
						     k * 64, 256));
		if (as_block) {
			char *d = desc("Copy", name, src, dst, NULL);
			char *nb = lm_xasprintf("%s%s%s", body, k ? "," : "", d);
			free(body);
			free(d);
			body = nb;
		} else {
			copy(&t, name, "q0", src, dst, "");
		}
	}
	if (as_block) {
		char *tr = trigger("t", "q0", "\"b\"", NULL);
		block(&t, "b", body, NULL);
		tb_inst(&t, "%s", tr);
		free(tr);
	}
	free(body);
	return tb_module(&t, 0);
}

START_TEST(test_block_timing)
{
	const lm_arch *a = lm_arch_get("gen3");
	float *x = lm_xcalloc(512 * 64, sizeof *x);
	ls_result rb, rc;
	lm_error err;
	lm_module *mb = four_copies(1), *mc = four_copies(0);
	int64_t xfer = ls_cost_dma_ps(a, 128 * 64 * 4);

	tb_fill(x, 512 * 64, 3);
	ck_assert_msg(tb_run1(mb, x, 512, 64, NULL, &rb, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(tb_run1(mc, x, 512, 64, NULL, &rc, &err) == 0, "%s",
		      err.msg);
	/* a transfer is longer than a DMA's issue: both keep the instance
	   busy from t = 0, and the last one completes a latency after the
	   fourth transfer */
	ck_assert_int_gt(xfer, lm_arch_cycles_ps(a, LM_ENG_SP,
						 a->dma_issue_cycles));
	ck_assert_int_eq(rb.sim_time_ps, 4 * xfer + a->dma_latency_ps);
	ck_assert_int_eq(rc.sim_time_ps, rb.sim_time_ps);
	ck_assert_int_eq(rb.cores[0].dma_bytes, rc.cores[0].dma_bytes);
	ck_assert_int_eq(rb.cores[0].dma_transfers, 4);
	ck_assert_int_eq(rc.cores[0].dma_transfers, 4);
	/* the trigger keeps SP for one issue, the DMACopys for four */
	ck_assert_int_eq(rc.cores[0].busy_ps[4], 4 * rb.cores[0].busy_ps[4]);
	ls_result_free(&rb);
	ls_result_free(&rc);
	lm_module_free(mb);
	lm_module_free(mc);
	free(x);
}
END_TEST

/* ---- two cores, linked ---------------------------------------------------------- */

/* Core c: x<c> -> xs (a block fired twice, round robin over two blocks
** of two descriptors each: rows 0-1 then rows 2-3), xs -> y<c>. */
static lm_module *core_module(int c)
{
	tb t;
	char xn[8], yn[8], *d0, *d1, *b, *tr;
	snprintf(xn, sizeof xn, "x%d", c);
	snprintf(yn, sizeof yn, "y%d", c);
	tb_init(&t);
	tb_dram(&t, xn, "ExternalInput", "float32", 4, 8);
	tb_dram(&t, yn, "ExternalOutput", "float32", 4, 8);
	tb_sb(&t, "xs", "float32", 4, 8);
	for (int k = 0; k < 2; k++) {
		char n0[8], n1[8], bn[8];
		snprintf(n0, sizeof n0, "d%d0", k);
		snprintf(n1, sizeof n1, "d%d1", k);
		snprintf(bn, sizeof bn, "b%d", k);
		d0 = desc("Copy", n0, AP(xn, "float32", 1, 8, 16 * k),
			  APS("xs", "float32", 1, 8, 16 * k, 8), NULL);
		d1 = desc("Copy", n1, AP(xn, "float32", 1, 8, 16 * k + 8),
			  APS("xs", "float32", 1, 8, 16 * k + 8, 8), NULL);
		b = lm_xasprintf("%s,%s", d0, d1);
		block(&t, bn, b, ",\"sync_info\":{\"on_update\":[{\"semaphore\":"
		      "\"s3\",\"mode\":\"sem-inc\"}]}");
		free(d0);
		free(d1);
		free(b);
	}
	tr = trigger("t", "q0", "\"b0\",\"b1\"", NULL);
	tb_inst(&t, "{\"opcode\":\"Loop\",\"name\":\"l\",\"engine\":\"SP\","
		"\"LoopAxis\":{\"name\":\"i\",\"lb\":0,\"ub\":2,\"stride\":1},"
		"\"ins\":[],\"outs\":[],\"blocks\":[{\"name\":\"lb\","
		"\"instructions\":[%s]}]}", tr);
	free(tr);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":"
		"\"Activation\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s],"
		"\"sync_info\":{\"on_wait\":[{\"semaphore\":\"s3\",\"mode\":"
		"\"sem-ge-imm\",\"value\":2}]}}", AP("xs", "float32", 4, 8, 0),
		AP(yn, "float32", 4, 8, 0));
	return tb_module(&t, c);
}

START_TEST(test_two_cores_linked)
{
	lm_module *src[2] = { core_module(0), core_module(1) }, *linked = NULL;
	lm_verify_opts vo = { 1 };
	lk_options lo;
	lk_report rep;
	ls_tensors in = { 0, NULL };
	ls_diff_opts dopt;
	ls_diff_result dr;
	lm_error err;

	memset(&lo, 0, sizeof lo);
	memset(&rep, 0, sizeof rep);
	lo.abs_file_paths = 1;
	ck_assert_msg(lk_link(src, 2, &lo, &linked, &rep, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(lm_verify(linked, &vo, &err) == 0, "%s", err.msg);
	ck_assert_msg(ls_check_module(linked, &err) == 0, "%s", err.msg);
	ck_assert_msg(ls_make_inputs(src, 2, NULL, 5, &in, &err) == 0, "%s",
		      err.msg);
	memset(&dopt, 0, sizeof dopt);
	dopt.schedules = 3;
	ck_assert_msg(ls_diff(src, 2, linked, &in, &dopt, &dr, &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(dr.status == LS_DIFF_PASS, "%s", dr.message);
	/* y<c> is x<c> */
	for (int c = 0; c < 2; c++) {
		char xn[8], yn[8];
		const ls_tensor *xt, *yt;
		snprintf(xn, sizeof xn, "x%d", c);
		snprintf(yn, sizeof yn, "y%d", c);
		xt = ls_tensors_find(&in, xn);
		yt = ls_tensors_find(&dr.ref.outputs, yn);
		ck_assert(xt && yt);
		ck_assert_int_eq(memcmp(xt->data, yt->data, 32 * 4), 0);
	}
	ls_diff_result_free(&dr);
	ls_tensors_free(&in);
	lk_report_free(&rep);
	lm_module_free(linked);
	lm_module_free(src[0]);
	lm_module_free(src[1]);
}
END_TEST

/* The same per-core modules as files nc<c>/sg0/def.json: `lncsim diff`
** links and compares them. */
START_TEST(test_two_cores_cli_diff)
{
	char *dir = tu_tmpdir("dmablk-diff");
	tu_run r;
	for (int c = 0; c < 2; c++) {
		char *text, *rel, *p;
		lm_module *m = core_module(c);
		size_t n;
		lm_error err;
		ck_assert_int_eq(lm_module_to_json(m, 1, &text, &n, &err), 0);
		rel = lm_xasprintf("nc%d/sg0/def.json", c);
		p = tu_write(dir, rel, text);
		free(p);
		free(rel);
		free(text);
		lm_module_free(m);
	}
	r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "2", dir, NULL);
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	tu_run_free(&r);
	free(dir);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------ */

/* The trigger's text in the saved module (keys sorted). */
#define TRIG "{\"dependencies\":[[\"m\",\"Flow\"]],\"dma_blocks\""

/* A module of one trigger t (queue q0) and a DMA block b with one copy
** descriptor, the text rewritten from -> to (NULL: none). */
static char *one_block_text(const char *from, const char *to)
{
	tb t;
	char *tr, *txt, *r;
	tb_init(&t);
	tb_sb(&t, "a", "float32", 1, 4);
	tb_sb(&t, "c", "float32", 1, 4);
	memset_(&t, "m", F4("a"), 1);
	block1(&t, "b", desc("Copy", "d", F4("a"), F4("c"), NULL), NULL);
	tr = trigger("t", "q0", "\"b\"", DEPS1("m"));
	tb_inst(&t, "%s", tr);
	free(tr);
	txt = tb_json(&t, 0);
	tb_free(&t);
	if (!from)
		return txt;
	ck_assert_msg(strstr(txt, from) != NULL, "'%s' not in %s", from, txt);
	r = tu_replace_all(txt, from, to);
	free(txt);
	return r;
}

/* The text rewritten must fail the verifier with msg. */
static void verify_fails(const char *from, const char *to, const char *msg)
{
	char *txt = one_block_text(from, to);
	lm_error err;
	lm_module *m = tu_parse(txt, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, msg);
	lm_module_free(m);
	free(txt);
}

/* The text rewritten verifies and must be refused by the simulator
** with msg. */
static void sim_refuses(const char *from, const char *to, const char *msg)
{
	char *txt = one_block_text(from, to);
	lm_error err;
	lm_module *m = tu_parse(txt, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
	ck_assert_contains(err.msg, msg);
	lm_module_free(m);
	free(txt);
}

START_TEST(test_bad_verifier)
{
	lm_error err;
	char *txt = one_block_text(NULL, NULL);
	lm_module *m = tu_parse(txt, &err);
	ck_assert_msg(m && lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_msg(ls_check_module(m, &err) == 0, "%s", err.msg);
	lm_module_free(m);
	free(txt);
	verify_fails("\"dma_blocks\":[\"b\"]", "\"dma_blocks\":[\"bx\"]",
		     "instruction t: dma_blocks 'bx' names no DMABlock of "
		     "function 'sg0000'");
	verify_fails("\"dma_blocks\":[\"b\"]", "\"dma_blocks\":[]",
		     "instruction t: DMATrigger 't' fires no DMA block "
		     "(dma_blocks is empty)");
	verify_fails("\"name\":\"b\",", "\"name\":\"b\",\"queue\":\"qX\",",
		     "instruction b: DMA block 'b' names queue 'qX', which "
		     "does not exist");
	verify_fails("\"name\":\"b\",", "\"name\":\"b\",\"queue\":\"q1\",",
		     "instruction t: DMATrigger 't' (queue q0): dma_blocks 'b' "
		     "is a DMA block of another queue (queue q1)");
	verify_fails("\"name\":\"b\",", "\"name\":\"b\",\"dma_trigger\":"
		     "\"m\",", "instruction b: dma_trigger 'm' is not a "
		     "DMATrigger firing DMA block 'b'");
	verify_fails("\"kind\":\"physical_ap\",\"memref\":\"a\","
		     "\"memsetref\":\"a\",\"offset\":0}],\"name\":\"d\"",
		     "\"kind\":\"symbolic_ap\",\"memref\":\"a\","
		     "\"memsetref\":\"a\",\"addrs\":[{\"kind\":"
		     "\"AffExprKind\",\"terms\":[],\"c\":0}]}],\"name\":\"d\"",
		     "DMA descriptor cannot have dynamic AP");
}
END_TEST

/* Two triggers of different queues naming one block (the block says no
** queue): its queue is its triggers', and they disagree. */
START_TEST(test_bad_two_queues)
{
	char *txt = one_block_text(TRIG,
				   "{\"opcode\":\"DMATrigger\",\"name\":\"t2\","
				   "\"engine\":\"SP\",\"queue\":\"q1\","
				   "\"dma_blocks\":[\"b\"],\"ins\":[],\"outs\":"
				   "[]}," TRIG);
	lm_error err;
	lm_module *m = tu_parse(txt, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "instruction t: DMATrigger 't' (queue q0): "
			   "dma_blocks 'b' is a DMA block of another queue "
			   "(queue q1, of DMATrigger 't2')");
	lm_module_free(m);
	free(txt);
}
END_TEST

START_TEST(test_bad_simcheck)
{
	char *txt;
	lm_error err;
	lm_module *m;
	sim_refuses("\"opcode\":\"DMADescriptorCopy\"", "\"opcode\":"
		    "\"DMADescriptorCCE\",\"op\":\"max\",\"constants\":[2]",
		    "instruction b/block b_b/instruction d: opcode "
		    "'DMADescriptorCCE' key 'constants' = [2] is not modelled "
		    "by the simulator (constants scale the sources of an add "
		    "only)");
	sim_refuses("DMADescriptorCopy", "DMADescriptorCCE",
		    "instruction d: opcode 'DMADescriptorCCE' key 'op' = "
		    "\"bypass\" is not modelled by the simulator (the "
		    "descriptor reduces its sources with add, max or min)");
	sim_refuses("\"opcode\":\"DMADescriptorCopy\"", "\"opcode\":"
		    "\"DMADescriptorCCE\",\"op\":\"mult\"",
		    "key 'op' = \"mult\" is not modelled");
	sim_refuses("\"opcode\":\"DMADescriptorCopy\"", "\"opcode\":"
		    "\"DMADescriptorCCE\",\"op\":\"add\",\"constants\":[2,3]",
		    "key 'constants' = [2,3] is not modelled by the simulator "
		    "(one constant per source)");
	sim_refuses("\"name\":\"b\",", "\"name\":\"b\",\"on_wait\":[{\"id\":"
		    "1}],", "opcode 'DMABlock' key 'on_wait' = [{\"id\":1}] is "
		    "not modelled by the simulator (it models only its absence "
		    "(null))");
	sim_refuses("\"name\":\"b\",", "\"name\":\"b\",\"remote_notifications"
		    "\":[3],", "key 'remote_notifications' = [3] is not "
		    "modelled");
	/* a descriptor outside a block, something else inside one */
	sim_refuses("{\"constant\":0,\"engine\":\"DVE\"", "{\"opcode\":"
		    "\"DMADescriptorCopy\",\"name\":\"dd\",\"ins\":[],"
		    "\"outs\":[]},{\"constant\":0,\"engine\":\"DVE\"", "instruction dd: opcode 'DMADescriptorCopy' "
		    "outside a DMABlock is not modelled by the simulator (a "
		    "descriptor runs only when a DMATrigger fires its block)");
	sim_refuses("\"blocks\":[{\"instructions\":[{\"engine\":\"DMA\"",
		    "\"blocks\":[{\"instructions\":[{\"opcode\":\"NoOp\","
		    "\"name\":\"n\",\"engine\":\"SP\",\"ins\":[],\"outs\":"
		    "[]},{\"engine\":\"DMA\"", "instruction n: opcode 'NoOp' in a "
		    "DMABlock's body is not modelled by the simulator (a block "
		    "holds descriptors)");
	/* a no_rearm given as an expression */
	txt = one_block_text(TRIG, SWITCH("SP",
		",\"no_rearm\":{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":1}")
		"," TRIG);
	m = tu_parse(txt, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "opcode 'SwitchQueueInstance' key "
			   "'no_rearm' = {\"kind\":\"AffExprKind\"");
	lm_module_free(m);
	free(txt);
}
END_TEST

/* A DMABlock inside a Loop, and a dependency on a descriptor. */
START_TEST(test_bad_placement)
{
	tb t;
	lm_module *m;
	lm_error err;
	ls_result r;
	char *d = desc("Copy", "d", F4("a"), F4("c"), NULL);

	tb_init(&t);
	tb_sb(&t, "a", "float32", 1, 4);
	tb_sb(&t, "c", "float32", 1, 4);
	tb_inst(&t, "{\"opcode\":\"Loop\",\"name\":\"l\",\"engine\":\"SP\","
		"\"LoopAxis\":{\"name\":\"i\",\"lb\":0,\"ub\":2,\"stride\":1},"
		"\"ins\":[],\"outs\":[],\"blocks\":[{\"name\":\"lb\","
		"\"instructions\":[{\"opcode\":\"DMABlock\",\"name\":\"b\","
		"\"engine\":\"DMA\",\"ins\":[],\"outs\":[],\"blocks\":[{"
		"\"name\":\"bb\",\"instructions\":[%s]}]}]}]}", d);
	m = tb_module(&t, 0);
	ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "instruction b: opcode 'DMABlock' inside a "
			   "Loop is not modelled by the simulator");
	lm_module_free(m);

	tb_init(&t);
	tb_sb(&t, "a", "float32", 1, 4);
	tb_sb(&t, "c", "float32", 1, 4);
	memset_(&t, "m", F4("a"), 1);
	block(&t, "b", d, NULL);
	tb_inst(&t, "%s", "{\"opcode\":\"DMATrigger\",\"name\":\"t\","
		"\"engine\":\"SP\",\"queue\":\"q0\",\"dma_blocks\":[\"b\"],"
		"\"ins\":[],\"outs\":[]" DEPS1("m") "}");
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":\"DVE\","
		"\"ins\":[],\"outs\":[]" DEPS1("d") "}");
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "instruction n: dependency 'd' is not an "
			   "instruction the simulator runs in this function");
	lm_module_free(m);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dmablk");
	TCase *tc = tcase_create("dmablk");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_round_robin);
	tcase_add_test(tc, test_trace);
	tcase_add_test(tc, test_rewind);
	tcase_add_test(tc, test_head_of_line);
	tcase_add_test(tc, test_descriptor_deadlock);
	tcase_add_test(tc, test_cce_values);
	tcase_add_test(tc, test_block_timing);
	tcase_add_test(tc, test_two_cores_linked);
	tcase_add_test(tc, test_two_cores_cli_diff);
	tcase_add_test(tc, test_bad_verifier);
	tcase_add_test(tc, test_bad_two_queues);
	tcase_add_test(tc, test_bad_simcheck);
	tcase_add_test(tc, test_bad_placement);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_race.c -- the happens-before race detector (docs/race.md): for
** each ordering construct a program that leans on it (no race) and the
** same program without it (a race between the two named instructions):
** program order, every EdgeKind of dependencies, a counting semaphore
** satisfied by its second update, events, a DMA's completion (its
** semaphore, a dependency, Drain) against a read after its issue only,
** AllEngineBarrier, a DMATrigger's block, a Call and its Return, an
** NKIKernel call, a cross-core DRAM hand-off through a CoreBarrier, a
** loop-carried WAR, a branch loop, the end of a linked run (the host's
** read after the Returns), barrier ids; uninitialized reads kept;
** the same races under every perturbed schedule; the command line;
** generated programs race-free.
*/
#include "common.h"
#include "testutil.h"
#include "sim.h"
#include "gen.h"
#include "diff.h"
#include "linker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T64(n) AP(n, "float32", 1, 64, 0)

static float xin[64];
static int xrows = 1, xcols = 64; /* the shape of input x */

/* Run the modules (1: alone, else side by side) under schedule seed with
** the detector: the run must succeed; the races in r. */
static void run_race(lm_module **m, int n, uint64_t seed, ls_result *r)
{
	ls_options o;
	lm_error err;
	memset(&o, 0, sizeof o);
	o.race = 1;
	o.perturb_seed = seed;
	for (int i = 0; i < 64; i++)
		xin[i] = (float)i;
	ck_assert_msg(tb_run(m, n, xin, xrows, xcols, &o, r, &err) == 0, "%s",
		      err.msg);
}

/* The loop fixture's x is [4, 8]. */
static void lc_shape(int on)
{
	xrows = on ? 4 : 1;
	xcols = on ? 8 : 64;
}

/* Is there a race (of kind, NULL any) between instructions a and b (in
** either order)? */
static int has(const ls_result *r, const char *kind, const char *a,
	       const char *b)
{
	for (int i = 0; i < r->n_races; i++) {
		const ls_race *x = &r->races[i];
		if (kind && strcmp(x->kind, kind))
			continue;
		if ((!strcmp(x->a_inst, a) && !strcmp(x->b_inst, b)) ||
		    (!strcmp(x->a_inst, b) && !strcmp(x->b_inst, a)))
			return 1;
	}
	return 0;
}

/* The races of the module (freed) as one run: how many; *out when
** wanted (else freed). */
static int64_t races1(lm_module *m, uint64_t seed, ls_result *out)
{
	ls_result r;
	int64_t n;
	run_race(&m, 1, seed, &r);
	n = r.races_found;
	lm_module_free(m);
	if (out)
		*out = r;
	else
		ls_result_free(&r);
	return n;
}

static void memset_(tb *t, const char *name, const char *eng,
		    const char *dst, const char *more)
{
	tb_inst(t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"%s\","
		"\"engine\":\"%s\",\"ins\":[],\"outs\":[%s],\"value\":1%s}",
		name, eng, dst, more);
}

static void copy_(tb *t, const char *name, const char *eng, const char *src,
		  const char *dst, const char *more)
{
	tb_inst(t, "{\"opcode\":\"TensorCopy\",\"name\":\"%s\",\"engine\":"
		"\"%s\",\"ins\":[%s],\"outs\":[%s],\"can_read_uninit\":true%s}",
		name, eng, src, dst, more);
}

static void dma_(tb *t, const char *name, const char *src, const char *dst,
		 const char *more)
{
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"%s\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]%s}", name, src, dst,
		more);
}

/* A DRAM operand [1, 64] of float32. */
static const char *D64(const char *n)
{
	static char b[4][300];
	static int k;
	char *p = b[k++ % 4];
	snprintf(p, 300, "{\"kind\":\"physical_ap\",\"ap\":[[64,1],[1,64]],"
		 "\"dtype\":\"float32\",\"offset\":0,\"memsetref\":\"%s\","
		 "\"memref\":\"%s\"}", n, n);
	return p;
}

/* ---- program order and dependencies -------------------------------------- */

/* ms writes t on DVE; cp reads it on engine eng with more. */
static lm_module *ms_cp(const char *eng, const char *more)
{
	tb t;
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	memset_(&t, "ms", "DVE", T64("t"), "");
	copy_(&t, "cp", eng, T64("t"), T64("u"), more);
	return tb_module(&t, 0);
}

START_TEST(test_order_and_deps)
{
	static const char *const kinds[] = { "Flow", "Anti", "Output",
					     "Ordered" };
	ls_result r;
	char more[100];
	/* program order on one engine */
	ck_assert_int_eq(races1(ms_cp("DVE", ""), 0, NULL), 0);
	/* two engines, nothing between them: a RAW or WAR on t */
	ck_assert_int_eq(races1(ms_cp("Activation", ""), 0, &r), 1);
	ck_assert(has(&r, NULL, "ms", "cp"));
	ck_assert_str_eq(r.races[0].memory, "SBUF");
	ck_assert_int_eq(r.races[0].core, 0);
	ck_assert_str_eq(r.races[0].object, "");
	ck_assert_int_eq(r.races[0].lo, 0);
	ck_assert_int_eq(r.races[0].hi, 256);
	ls_result_free(&r);
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		snprintf(more, sizeof more, ",\"dependencies\":[[\"ms\","
			 "\"%s\"]]", kinds[k]);
		ck_assert_msg(races1(ms_cp("Activation", more), 0, NULL) == 0,
			      "%s", kinds[k]);
	}
}
END_TEST

/* ---- semaphores and events ---------------------------------------------- */

/*
** p1 and p2 (Activation, in program order) write t and u, each then
** sem-inc s3; w (DVE) reads u after a wait for s3 >= thr. At 2 the wait
** is satisfied by p2's update: ordered. At 1 only p1's: p2's write of u
** races with w.
*/
static lm_module *counting(int thr)
{
	tb t;
	char w[200];
	const char *inc = ",\"sync_info\":{\"on_update\":[{\"semaphore\":"
			  "\"s3\",\"mode\":\"sem-inc\"}]}";
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	tb_sb(&t, "v", "float32", 1, 64);
	memset_(&t, "p1", "Activation", T64("t"), inc);
	memset_(&t, "p2", "Activation", T64("u"), inc);
	snprintf(w, sizeof w, ",\"sync_info\":{\"on_wait\":[{\"semaphore\":"
		 "\"s3\",\"mode\":\"sem-ge-imm\",\"wait_value\":%d}]}", thr);
	copy_(&t, "w", "DVE", T64("u"), T64("v"), w);
	return tb_module(&t, 0);
}

START_TEST(test_counting_semaphore)
{
	ls_result r;
	for (uint64_t s = 0; s < 3; s++)
		ck_assert_int_eq(races1(counting(2), s, NULL), 0);
	ck_assert_int_eq(races1(counting(1), 0, &r), 1);
	ck_assert(has(&r, NULL, "p2", "w"));
	ls_result_free(&r);
}
END_TEST

/*
** p1 (Activation) writes t and sem-incs s3 (to 1); later (after the long
** px) pb on Pool updates s3 by mode (to 2); w (DVE) reads t after a wait
** for s3 >= 2. sem-add-imm 1 continues p1's increment: w is ordered after
** p1 too. sem-wr-imm 2 writes the value over it: w is ordered after pb
** alone, and p1's write of t races with w.
*/
static lm_module *sem_write(const char *mode)
{
	tb t;
	char pb[200];
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	tb_sb(&t, "v", "float32", 1, 64);
	tb_sb(&t, "big", "float32", 128, 1024);
	memset_(&t, "p1", "Activation", T64("t"), ",\"sync_info\":{"
		"\"on_update\":[{\"semaphore\":\"s3\",\"mode\":\"sem-inc\"}]}");
	memset_(&t, "px", "Pool", AP("big", "float32", 128, 1024, 0), "");
	snprintf(pb, sizeof pb, ",\"sync_info\":{\"on_update\":[{"
		 "\"semaphore\":\"s3\",\"mode\":\"%s\",\"value\":%d}]}",
		 mode, strcmp(mode, "sem-wr-imm") ? 1 : 2);
	memset_(&t, "pb", "Pool", T64("u"), pb);
	copy_(&t, "w", "DVE", T64("t"), T64("v"), ",\"sync_info\":{"
	      "\"on_wait\":[{\"semaphore\":\"s3\",\"mode\":\"sem-ge-imm\","
	      "\"value\":2}]}");
	return tb_module(&t, 0);
}

START_TEST(test_semaphore_write)
{
	ls_result r;
	ck_assert_int_eq(races1(sem_write("sem-add-imm"), 0, NULL), 0);
	ck_assert_int_eq(races1(sem_write("sem-wr-imm"), 0, &r), 1);
	ck_assert(has(&r, "RAW", "p1", "w"));
	ls_result_free(&r);
}
END_TEST

/* p (Activation) writes t and sets event 5; w (DVE) reads t, waiting for
** the event when wait. */
static lm_module *event(int wait)
{
	tb t;
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	memset_(&t, "p", "Activation", T64("t"), ",\"sync_info\":{"
		"\"on_update\":[{\"id\":5,\"mode\":\"evt-set\"}]}");
	copy_(&t, "w", "DVE", T64("t"), T64("u"), wait ?
	      ",\"sync_info\":{\"on_wait\":[{\"id\":5,\"mode\":"
	      "\"evt-set-then-clear\"}]}" : "");
	if (!wait) /* someone consumes the event */
		tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"c\",\"engine\":"
			"\"SP\",\"ins\":[],\"outs\":[],\"sync_info\":{"
			"\"on_wait\":[{\"id\":5,\"mode\":"
			"\"evt-set-then-clear\"}]}}");
	return tb_module(&t, 0);
}

START_TEST(test_event)
{
	ls_result r;
	ck_assert_int_eq(races1(event(1), 0, NULL), 0);
	ck_assert_int_eq(races1(event(0), 0, &r), 1);
	ck_assert(has(&r, NULL, "p", "w"));
	ls_result_free(&r);
}
END_TEST

/* ---- DMA ---------------------------------------------------------------- */

/* ld copies x into t on SP (q0: s0 + 1 at its completion); then before
** rd (on eng, reading t): pre; rd's more. */
static lm_module *dma_read(const char *eng, int drain, const char *more)
{
	tb t;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 1, 64);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	dma_(&t, "ld", D64("x"), T64("t"), "");
	if (drain)
		tb_inst(&t, "{\"opcode\":\"Drain\",\"name\":\"dr\",\"engine\":"
			"\"SP\",\"ins\":[],\"outs\":[]}");
	copy_(&t, "rd", eng, T64("t"), T64("u"), more);
	return tb_module(&t, 0);
}

START_TEST(test_dma)
{
	ls_result r;
	/* its queue's semaphore, a dependency, a Drain: ordered */
	ck_assert_int_eq(races1(dma_read("DVE", 0, ",\"sync_info\":{"
		"\"on_wait\":[{\"semaphore\":\"s0\",\"mode\":\"sem-ge-imm\","
		"\"wait_value\":1}]}"), 0, NULL), 0);
	ck_assert_int_eq(races1(dma_read("DVE", 0, ",\"dependencies\":"
					 "[[\"ld\",\"Flow\"]]"), 0, NULL), 0);
	ck_assert_int_eq(races1(dma_read("SP", 1, ""), 0, NULL), 0);
	/* read on the issuing engine after the issue only: the destination
	   is read before the completion is known */
	ck_assert_int_eq(races1(dma_read("SP", 0, ""), 0, &r), 1);
	ck_assert(has(&r, NULL, "ld", "rd"));
	ck_assert(!strncmp(r.races[0].a_engine, "queue", 5) ||
		  !strncmp(r.races[0].b_engine, "queue", 5));
	ls_result_free(&r);
}
END_TEST

/* A DMATrigger tr fires block bk (x -> t); rd (DVE) reads t after it
** when dep. */
static lm_module *trig(int dep)
{
	tb t;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 1, 64);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	tb_inst(&t, "{\"opcode\":\"DMABlock\",\"name\":\"bk\",\"engine\":"
		"\"DMA\",\"queue\":\"q0\",\"ins\":[],\"outs\":[],\"blocks\":"
		"[{\"name\":\"bk_b\",\"instructions\":[{\"opcode\":"
		"\"DMADescriptorCopy\",\"name\":\"d0\",\"engine\":\"DMA\","
		"\"ins\":[%s],\"outs\":[%s]}]}]}", D64("x"), T64("t"));
	tb_inst(&t, "{\"opcode\":\"DMATrigger\",\"name\":\"tr\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"dma_blocks\":[\"bk\"],\"ins\":[],"
		"\"outs\":[]}");
	copy_(&t, "rd", "DVE", T64("t"), T64("u"), dep ?
	      ",\"dependencies\":[[\"tr\",\"Flow\"]]" : "");
	return tb_module(&t, 0);
}

START_TEST(test_trigger)
{
	ls_result r;
	ck_assert_int_eq(races1(trig(1), 0, NULL), 0);
	ck_assert_int_eq(races1(trig(0), 0, &r), 1);
	ck_assert(has(&r, NULL, "d0", "rd"));
	ls_result_free(&r);
}
END_TEST

/* ---- joins, calls ------------------------------------------------------- */

static lm_module *join(int bar)
{
	tb t;
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	memset_(&t, "ms", "DVE", T64("t"), "");
	if (bar)
		tb_inst(&t, "{\"opcode\":\"AllEngineBarrier\",\"name\":\"ab\","
			"\"engine\":\"ALL\",\"ins\":[],\"outs\":[]}");
	copy_(&t, "cp", "Activation", T64("t"), T64("u"), "");
	return tb_module(&t, 0);
}

START_TEST(test_all_engine_barrier)
{
	ck_assert_int_eq(races1(join(1), 0, NULL), 0);
	ck_assert_int_eq(races1(join(0), 0, NULL), 1);
}
END_TEST

/*
** ms (eng) writes t, the Call c (DVE) runs g: g's gc (Activation) reads t
** and writes u; after (Pool) reads u, depending on c when dep.
*/
static lm_module *call(const char *eng, int dep)
{
	tb t;
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	tb_sb(&t, "v", "float32", 1, 64);
	memset_(&t, "ms", eng, T64("t"), "");
	tb_inst(&t, "{\"opcode\":\"Call\",\"name\":\"c\",\"engine\":\"DVE\","
		"\"target\":\"g\",\"ins\":[],\"outs\":[]}");
	copy_(&t, "after", "Pool", T64("u"), T64("v"), dep ?
	      ",\"dependencies\":[[\"c\",\"Flow\"]]" : "");
	tb_function(&t, "g", 0);
	copy_(&t, "gc", "Activation", T64("t"), T64("u"), "");
	tb_inst(&t, "{\"opcode\":\"Return\",\"name\":\"ret\",\"engine\":"
		"\"SP\",\"ins\":[],\"outs\":[]}");
	return tb_module(&t, 0);
}

START_TEST(test_call)
{
	ls_result r;
	/* ms before the call on its engine, after waits for the call */
	ck_assert_int_eq(races1(call("DVE", 1), 0, NULL), 0);
	/* the callee is not ordered after a write on another engine */
	ck_assert_int_eq(races1(call("Pool", 1), 0, &r), 1);
	ck_assert(has(&r, NULL, "ms", "gc"));
	ck_assert_str_eq(r.races[0].a_func[0] == 'g' ? r.races[0].a_func
						     : r.races[0].b_func, "g");
	ls_result_free(&r);
	/* after does not wait for the callee's write */
	ck_assert_int_eq(races1(call("DVE", 0), 0, &r), 1);
	ck_assert(has(&r, NULL, "gc", "after"));
	ls_result_free(&r);
}
END_TEST

/*
** The same with an NKIKernel call k (DVE) of kernel k1 bound to xs and
** ys: k1's kc (Activation) copies ka into kb.
*/
static lm_module *nki(const char *eng, int dep)
{
	tb t;
	tb_init(&t);
	tb_sb(&t, "xs", "float32", 1, 64);
	tb_sb(&t, "ys", "float32", 1, 64);
	tb_sb(&t, "v", "float32", 1, 64);
	memset_(&t, "ms", eng, T64("xs"), "");
	tb_inst(&t, "{\"opcode\":\"NKIKernel\",\"name\":\"k\",\"engine\":"
		"\"DVE\",\"func\":\"k1\",\"func_args\":{\"ka\":\"xs\"},"
		"\"func_outs\":{\"kb\":\"ys\"}}");
	copy_(&t, "after", "Pool", T64("ys"), T64("v"), dep ?
	      ",\"dependencies\":[[\"k\",\"Flow\"]]" : "");
	tb_function(&t, "k1", 1);
	t.sb_addr = 4096;
	tb_sb(&t, "ka", "float32", 1, 64);
	tb_sb(&t, "kb", "float32", 1, 64);
	copy_(&t, "kc", "Activation", T64("ka"), T64("kb"), "");
	tb_inst(&t, "{\"opcode\":\"Return\",\"name\":\"kr\",\"engine\":"
		"\"SP\"}");
	return tb_module(&t, 0);
}

START_TEST(test_nki_call)
{
	ls_result r;
	ck_assert_int_eq(races1(nki("DVE", 1), 0, NULL), 0);
	ck_assert_int_eq(races1(nki("Pool", 1), 0, &r), 1);
	ck_assert(has(&r, NULL, "ms", "kc"));
	ls_result_free(&r);
	ck_assert_int_eq(races1(nki("DVE", 0), 0, &r), 1);
	ck_assert(has(&r, NULL, "kc", "after"));
	ls_result_free(&r);
}
END_TEST

/* ---- across cores ------------------------------------------------------- */

/* Core 0's start: ms writes t, put copies it into its output h (DRAM). */
static void put_h(tb *t)
{
	tb_init(t);
	tb_dram(t, "h", "ExternalOutput", "float32", 1, 64);
	tb_sb(t, "t", "float32", 1, 64);
	memset_(t, "ms", "DVE", T64("t"), "");
	dma_(t, "put", T64("t"), D64("h"), ",\"dependencies\":[[\"ms\","
	     "\"Flow\"]]");
}

/*
** Core 0 writes t, copies it into its output h (DRAM), then reaches
** CoreBarrier cb; core 1 reaches cb and copies h into its SBUF, after
** cb when bar (else only after its own start).
*/
static void handoff(int bar, lm_module **m)
{
	tb t;
	put_h(&t);
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"cb\",\"engine\":"
		"\"Pool\",\"id\":1,\"cores\":[0,1],\"ins\":[],\"outs\":[],"
		"\"dependencies\":[[\"put\",\"Flow\"]]}");
	m[0] = tb_module(&t, 0);
	tb_init(&t);
	tb_dram(&t, "h", "ExternalInput", "float32", 1, 64);
	tb_sb(&t, "t1", "float32", 1, 64);
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"cb\",\"engine\":"
		"\"Pool\",\"id\":1,\"cores\":[0,1],\"ins\":[],\"outs\":[]}");
	dma_(&t, "get", D64("h"), T64("t1"), bar ?
	     ",\"dependencies\":[[\"cb\",\"Flow\"]]" :
	     ",\"can_read_uninit\":true");
	m[1] = tb_module(&t, 1);
}

START_TEST(test_cross_core_handoff)
{
	lm_module *m[2];
	ls_result r;
	for (int bar = 1; bar >= 0; bar--) {
		handoff(bar, m);
		run_race(m, 2, 0, &r);
		if (bar) {
			ck_assert_int_eq(r.races_found, 0);
		} else {
			ck_assert_int_eq(r.races_found, 1);
			ck_assert(has(&r, NULL, "put", "get"));
			ck_assert_str_eq(r.races[0].memory, "DRAM");
			ck_assert_int_eq(r.races[0].core, -1);
			ck_assert_str_eq(r.races[0].object, "h");
			ck_assert_int_eq(r.races[0].lo, 0);
			ck_assert_int_eq(r.races[0].hi, 256);
		}
		ls_result_free(&r);
		lm_module_free(m[0]);
		lm_module_free(m[1]);
	}
}
END_TEST

/*
** A read set wider than any fixed bound: core 0 writes h (a DMA after a
** Memset) while each of 63 other cores reads it with a DMA on each of its
** five engines, none ordered with the write: 315 readers unordered among
** themselves, each one race with the write.
*/
START_TEST(test_read_set_wide)
{
	static const char *const eng[] = { "SP", "Activation", "Pool", "DVE",
					   "PE" };
	enum { N = 64 };
	lm_module *m[N];
	ls_result r;
	tb t;
	put_h(&t);
	m[0] = tb_module(&t, 0);
	for (int c = 1; c < N; c++) {
		tb_init(&t);
		tb_dram(&t, "h", "ExternalInput", "float32", 1, 64);
		for (int e = 0; e < 5; e++) {
			char tn[8], gn[8];
			snprintf(tn, sizeof tn, "t%d", e);
			snprintf(gn, sizeof gn, "get%d", e);
			tb_sb(&t, tn, "float32", 1, 64);
			tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"%s\","
				"\"engine\":\"%s\",\"queue\":\"q0\",\"ins\":"
				"[%s],\"outs\":[%s],\"can_read_uninit\":true}",
				gn, eng[e], D64("h"), T64(tn));
		}
		m[c] = tb_module(&t, c);
	}
	run_race(m, N, 0, &r);
	ck_assert_int_eq(r.races_found, 5 * (N - 1));
	for (int i = 0; i < r.n_races; i++)
		ck_assert(!strcmp(r.races[i].a_inst, "put") ||
			  !strcmp(r.races[i].b_inst, "put"));
	ls_result_free(&r);
	for (int c = 0; c < N; c++)
		lm_module_free(m[c]);
}
END_TEST

/*
** Rows that do not ascend: ms writes t's elements 0-3, 8-11, 4-7, 12-15
** (the middle dimensions swapped); cp reads one element unordered with
** it. Every element is written, so every cp races with ms -- also those
** of the row that starts below where the row before it ended.
*/
START_TEST(test_rows_out_of_order)
{
	for (int off = 0; off < 16; off++) {
		char dst[300], src[300];
		tb t;
		tb_init(&t);
		tb_sb(&t, "t", "float32", 1, 64);
		tb_sb(&t, "u", "float32", 1, 64);
		snprintf(dst, sizeof dst, "{\"kind\":\"physical_ap\",\"ap\":"
			 "[[64,1],[4,2],[8,2],[1,4]],\"dtype\":\"float32\","
			 "\"offset\":0,\"memsetref\":\"t\",\"memref\":\"t\"}");
		snprintf(src, sizeof src, "{\"kind\":\"physical_ap\",\"ap\":"
			 "[[64,1],[1,1]],\"dtype\":\"float32\",\"offset\":%d,"
			 "\"memsetref\":\"t\",\"memref\":\"t\"}", off);
		memset_(&t, "ms", "DVE", dst, "");
		copy_(&t, "cp", "Activation", src, AP("u", "float32", 1, 1, 0),
		      "");
		ck_assert_msg(races1(tb_module(&t, 0), 0, NULL) == 1,
			      "element %d", off);
	}
}
END_TEST

/* ---- loops -------------------------------------------------------------- */

/*
** tests/fixtures/loops/lcdep.json: add (DVE) a -> b, then cp (Pool) b ->
** a in each iteration, add waiting for the previous iteration's cp by a
** loop-carried dependency. Without it, add of iteration i + 1 writes b
** while cp of iteration i may still read it: a WAR (and cp's write of a
** races with the next add's read).
*/
START_TEST(test_loop_carried)
{
	static const char *const drop[] = {
		",\n           \"loop_carried_dependencies\": [\n"
		"            [\n             \"cp\",\n             \"Flow\"\n"
		"            ]\n           ]", "", NULL };
	ls_result r;
	char *p = tu_fixture("loops", "lcdep.json");
	int ok = 0;
	lc_shape(1);
	ck_assert_int_eq(races1(tu_load(p), 0, NULL), 0);
	free(p);
	ck_assert_int_gt(races1(tu_fixture_subst("loops", "lcdep.json", drop),
				0, &r), 0);
	for (int i = 0; i < r.n_races; i++)
		ok |= !strcmp(r.races[i].kind, "WAR") &&
		      !strcmp(r.races[i].a_inst, "cp") &&
		      !strcmp(r.races[i].b_inst, "add") &&
		      r.races[i].a_iter[0] == 'i';
	lc_shape(0);
	ck_assert_msg(ok, "no WAR cp (i=k) vs add");
	ls_result_free(&r);
}
END_TEST

/*
** Branches: tests/fixtures/branch/cbrslices.json loads slice k of x into
** slice k of xs on each pass of a CompareAndBranch loop, tt (DVE)
** depending on the load of its own pass; race-free. In
** tests/fixtures/race/cfg_war.json every pass loads into the same slice:
** the next pass's load races with this pass's read (only that pair: the
** dependency orders each read after its own pass's load).
*/
START_TEST(test_branch_loop)
{
	for (uint64_t s = 0; s < 3; s++) {
		char *p = tu_fixture("branch", "cbrslices.json");
		ls_result r;
		ck_assert_int_eq(races1(tu_load(p), s * 31337, NULL), 0);
		free(p);
		p = tu_fixture("race", "cfg_war.json");
		ck_assert_int_gt(races1(tu_load(p), s * 31337, &r), 0);
		free(p);
		ck_assert(has(&r, NULL, "ldk", "tt"));
		ck_assert_int_eq(r.n_races, r.races_found);
		for (int i = 0; i < r.n_races; i++)
			ck_assert_msg((!strcmp(r.races[i].a_inst, "ldk") &&
				       !strcmp(r.races[i].b_inst, "tt")) ||
				      (!strcmp(r.races[i].a_inst, "tt") &&
				       !strcmp(r.races[i].b_inst, "ldk")),
				      "%s vs %s", r.races[i].a_inst,
				      r.races[i].b_inst);
		ls_result_free(&r);
	}
}
END_TEST

/* ---- errors ------------------------------------------------------------- */

/*
** An uninitialized read under --race is raised at the end of the run when
** no race explains it; the error of a run that races first says so.
*/
START_TEST(test_uninit_kept)
{
	tb t;
	lm_module *m;
	ls_options o;
	ls_result r;
	lm_error e;
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s]}", T64("t"), T64("u"));
	m = tb_module(&t, 0);
	memset(&o, 0, sizeof o);
	o.race = 1;
	ck_assert_int_ne(tb_run1(m, NULL, 1, 64, &o, &r, &e), 0);
	ck_assert_contains(e.msg, "instruction cp: reads uninitialized memory");
	lm_module_free(m);
	/* read before an unordered write: the race, and no error */
	tb_init(&t);
	tb_sb(&t, "t", "float32", 1, 64);
	tb_sb(&t, "u", "float32", 1, 64);
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s]}", T64("t"), T64("u"));
	memset_(&t, "late", "Pool", T64("t"), "");
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, NULL, 1, 64, &o, &r, &e), 0);
	ck_assert_int_eq(r.races_found, 1);
	ck_assert(has(&r, NULL, "cp", "late"));
	ls_result_free(&r);
	lm_module_free(m);
}
END_TEST

/* ---- indirect moves ----------------------------------------------------- */

/*
** Indirect move g (op) reads its indices ix (indirection_ins), written
** by mi on DVE, ordered after mi when dep; its rows come from xs (SB)
** or x (DRAM, IndirectLoad on SP). mx, before g on g's engine, lets mi
** finish first in time (no uninitialized read either way).
*/
static lm_module *indirect(const char *op, int dep)
{
	int ga = !strcmp(op, "Gather"), ld = !strcmp(op, "IndirectLoad");
	tb t;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 4, 16);
	tb_sb(&t, "ix", "int32", ga ? 4 : 1, ga ? 1 : 4);
	tb_sb(&t, "xs", "float32", 4, 16);
	tb_sb(&t, "ys", "float32", 4, ga ? 1 : 16);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"mi\",\"engine\":\"DVE\",\"ins\":[],\"outs\":[%s],"
		"\"value\":0}", AP("ix", "int32", ga ? 4 : 1, ga ? 1 : 4, 0));
	memset_(&t, "mx", ld ? "SP" : "Pool", AP("xs", "float32", 4, 16, 0),
		"");
	tb_inst(&t, "{\"opcode\":\"%s\",\"name\":\"g\",\"engine\":\"%s\"%s,"
		"\"ins\":[%s],\"outs\":[%s],\"indirection_ins\":[%s]%s}", op,
		ld ? "SP" : "Pool", ld ? ",\"queue\":\"q0\"" : ga ? "" :
		",\"num_valid_indices\":4",
		ld ? APS("x", "float32", 4, 16, 0, 16)
		   : AP("xs", "float32", 4, 16, 0),
		AP("ys", "float32", 4, ga ? 1 : 16, 0),
		AP("ix", "int32", ga ? 4 : 1, ga ? 1 : 4, 0),
		dep ? ",\"dependencies\":[[\"mi\",\"Flow\"]]" : "");
	return tb_module(&t, 0);
}

/* The index operand of IndirectLoad, IndirectCopy and Gather is read:
** written unordered before it, a race. */
START_TEST(test_indirect)
{
	static const char *const ops[] = { "IndirectLoad", "IndirectCopy",
					   "Gather" };
	xrows = 4;
	xcols = 16;
	for (int k = 0; k < 3; k++) {
		ls_result r;
		ck_assert_int_eq(races1(indirect(ops[k], 1), 0, NULL), 0);
		ck_assert_msg(races1(indirect(ops[k], 0), 0, &r) == 1, "%s",
			      ops[k]);
		ck_assert(has(&r, "RAW", "mi", "g"));
		ck_assert_str_eq(r.races[0].memory, "SBUF");
		ls_result_free(&r);
	}
	xrows = 1;
	xcols = 64;
}
END_TEST

/*
** IndirectLoad g (SP) gathers rows 0 and 1 of the table x (indices
** {0, 1, 1, 0}) into ys while wr (DMA on Pool's queue, unordered with
** g) writes row row of x: the rows g reads are the rows its indices
** name.
*/
static lm_module *iload_rows(int row)
{
	tb t;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 4, 16);
	tb_sb(&t, "ix", "int32", 1, 4);
	tb_sb(&t, "ys", "float32", 4, 16);
	tb_sb(&t, "w", "float32", 1, 16);
	for (int k = 0; k < 4; k++)
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"m%d\",\"engine\":\"SP\",\"ins\":[],\"outs\":[%s],"
			"\"value\":%d}", k, AP("ix", "int32", 1, 1, k),
			k == 1 || k == 2);
	memset_(&t, "mw", "Pool", AP("w", "float32", 1, 16, 0), "");
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"wr\",\"engine\":"
		"\"Pool\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s]}",
		AP("w", "float32", 1, 16, 0),
		APS("x", "float32", 1, 16, 16 * row, 16));
	tb_inst(&t, "{\"opcode\":\"IndirectLoad\",\"name\":\"g\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"indirection_ins\":[%s]}", APS("x", "float32", 4, 16, 0, 16),
		AP("ys", "float32", 4, 16, 0), AP("ix", "int32", 1, 4, 0));
	return tb_module(&t, 0);
}

/* An indirect move reads the rows its indices name, not its whole
** source. */
START_TEST(test_indirect_rows)
{
	ls_result r;
	xrows = 4;
	xcols = 16;
	ck_assert_int_eq(races1(iload_rows(3), 0, NULL), 0);
	ck_assert_int_eq(races1(iload_rows(1), 0, &r), 1);
	ck_assert(has(&r, NULL, "g", "wr"));
	ck_assert_str_eq(r.races[0].object, "x");
	ck_assert_int_eq(r.races[0].lo, 64);
	ck_assert_int_eq(r.races[0].hi, 128);
	ls_result_free(&r);
	/* IndirectCopy in SB: wr (Activation) writes row row of xs, the
	   others are written before g on Pool */
	for (int row = 1; row <= 3; row += 2) {
		tb t;
		tb_init(&t);
		tb_sb(&t, "ix", "int32", 1, 4);
		tb_sb(&t, "xs", "float32", 4, 16);
		tb_sb(&t, "ys", "float32", 4, 16);
		for (int k = 0; k < 4; k++)
			tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\","
				"\"name\":\"m%d\",\"engine\":\"Pool\",\"ins\":[],"
				"\"outs\":[%s],\"value\":%d}", k,
				AP("ix", "int32", 1, 1, k), k == 1 || k == 2);
		/* xs but row row on Pool (a write of both would leave only
		   the later in the shadow) */
		memset_(&t, "mx", "Pool", AP("xs", "float32", row, 16, 0), "");
		if (row < 3)
			memset_(&t, "my", "Pool", APS("xs", "float32", 3 - row,
						      16, 16 * (row + 1), 16),
				"");
		memset_(&t, "wr", "Activation", APS("xs", "float32", 1, 16,
						    16 * row, 16), "");
		tb_inst(&t, "{\"opcode\":\"IndirectCopy\",\"name\":\"g\","
			"\"engine\":\"Pool\",\"ins\":[%s],\"outs\":[%s],"
			"\"indirection_ins\":[%s],\"num_valid_indices\":4}",
			AP("xs", "float32", 4, 16, 0),
			AP("ys", "float32", 4, 16, 0), AP("ix", "int32", 1, 4, 0));
		races1(tb_module(&t, 0), 0, &r);
		ck_assert_int_eq(has(&r, NULL, "g", "wr"), row == 1);
		ls_result_free(&r);
	}
	xrows = 1;
	xcols = 64;
}
END_TEST

/* IndirectCopy g writes the first 2 of ys's 4 rows (num_valid_indices);
** tl on DVE, unordered with it, writes rows from row first on. */
static lm_module *icopy_tail(int first)
{
	tb t;
	tb_init(&t);
	tb_sb(&t, "ix", "int32", 1, 4);
	tb_sb(&t, "xs", "float32", 4, 16);
	tb_sb(&t, "ys", "float32", 4, 16);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"mi\",\"engine\":\"DVE\",\"ins\":[],\"outs\":[%s],"
		"\"value\":0}", AP("ix", "int32", 1, 4, 0));
	memset_(&t, "mx", "Pool", AP("xs", "float32", 4, 16, 0), "");
	tb_inst(&t, "{\"opcode\":\"IndirectCopy\",\"name\":\"g\",\"engine\":"
		"\"Pool\",\"ins\":[%s],\"outs\":[%s],\"indirection_ins\":[%s],"
		"\"num_valid_indices\":2,\"dependencies\":[[\"mi\",\"Flow\"]]}",
		AP("xs", "float32", 4, 16, 0), AP("ys", "float32", 4, 16, 0),
		AP("ix", "int32", 1, 4, 0));
	memset_(&t, "tl", "DVE", APS("ys", "float32", 4 - first, 16,
				    16 * first, 16), "");
	return tb_module(&t, 0);
}

/* A masked write (IndirectCopy past num_valid_indices) writes only the
** elements it writes. */
START_TEST(test_masked_write)
{
	ls_result r;
	ck_assert_int_eq(races1(icopy_tail(2), 0, NULL), 0);
	ck_assert_int_eq(races1(icopy_tail(1), 0, &r), 1);
	ck_assert(has(&r, "WAW", "g", "tl"));
	/* where they met: row 1 only (16 float32 of partition 1) */
	ck_assert_int_eq(r.races[0].hi - r.races[0].lo, 64);
	ls_result_free(&r);
}
END_TEST

/* --max-memory counts the race shadow of DRAM (twice its bytes): a 4 MiB
** DRAM tensor needs 8 MiB without the detector, 16 MiB with it. */
START_TEST(test_memory_limit)
{
	ls_options o;
	ls_result r;
	lm_error e;
	lm_module *m;
	tb t;
	tb_init(&t);
	tb_dram(&t, "big", "Internal", "float32", 1024, 1024);
	tb_sb(&t, "t", "float32", 1, 64);
	memset_(&t, "ms", "DVE", T64("t"), "");
	m = tb_module(&t, 0);
	memset(&o, 0, sizeof o);
	o.max_memory = 12 << 20;
	ck_assert_int_eq(tb_run1(m, NULL, 1, 64, &o, &r, &e), 0);
	ls_result_free(&r);
	o.race = 1;
	ck_assert_int_eq(tb_run1(m, NULL, 1, 64, &o, &r, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "big: the allocation needs 16777216 bytes "
			   "of simulated memory (DRAM storage and "
			   "initialization shadow, race shadow), over the "
			   "memory limit of 12582912 bytes");
	lm_module_free(m);
}
END_TEST

/*
** The detector's own state grows with the instructions run (an access
** record and a tick per instance): lcdep.json's loop run 50000 times
** needs a few MB of it, which a limit of 2 MB (the simulated memory
** being a few KB) does not leave: the run stops with LM_EINPUT naming
** the limit; with the default limit it runs.
*/
START_TEST(test_record_limit)
{
	static const char *const many[] = { "\"ub\": 8,", "\"ub\": 50000,",
					    NULL };
	ls_options o;
	ls_result r;
	lm_error e;
	lm_module *m = tu_fixture_subst("loops", "lcdep.json", many);
	lc_shape(1);
	memset(&o, 0, sizeof o);
	o.race = 1;
	o.max_memory = 2 << 20;
	ck_assert_int_eq(tb_run1(m, xin, xrows, xcols, &o, &r, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "the race detector's access records and "
			   "clocks need ");
	ck_assert_contains(e.msg, "more than the memory limit of 2097152 "
			   "bytes (--max-memory) leaves");
	o.max_memory = 0;
	ck_assert_msg(tb_run1(m, xin, xrows, xcols, &o, &r, &e) == 0, "%s",
		      e.msg);
	ck_assert_int_eq(r.races_found, 0);
	ls_result_free(&r);
	lc_shape(0);
	lm_module_free(m);
}
END_TEST

/*
** Only a race between two accesses excuses an uninitialized read: rd
** reads u, which nothing writes, while two one-core barriers b1 (Pool)
** and b2 (Activation, after a long copy) hold barrier id 1 unordered (a
** SLOT race, found without a collision: b1 is released before b2
** arrives). The run fails with the uninitialized read, its message
** naming the race before it.
*/
START_TEST(test_uninit_not_excused_by_slot)
{
	ls_options o;
	ls_result r;
	lm_error e;
	tb t;
	tb_init(&t);
	tb_sb(&t, "u", "float32", 1, 64);
	tb_sb(&t, "v", "float32", 1, 64);
	tb_sb(&t, "big", "float32", 128, 2048);
	tb_sb(&t, "big2", "float32", 128, 2048);
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"b1\",\"engine\":"
		"\"Pool\",\"id\":1,\"cores\":[0],\"ins\":[],\"outs\":[]}");
	copy_(&t, "long", "Activation", AP("big", "float32", 128, 2048, 0),
	      AP("big2", "float32", 128, 2048, 0), "");
	tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"b2\",\"engine\":"
		"\"Activation\",\"id\":1,\"cores\":[0],\"ins\":[],\"outs\":"
		"[]}");
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"rd\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s]}", T64("u"), T64("v"));
	lm_module *m = tb_module(&t, 0);
	memset(&o, 0, sizeof o);
	o.race = 1;
	ck_assert_int_eq(tb_run1(m, NULL, 1, 64, &o, &r, &e), LM_ECHECK);
	ck_assert_contains(e.msg, "uninitialized");
	ck_assert_contains(e.msg, "; --race: 1 race before it, first: SLOT "
			   "BARRIER[-1] id 1 [1,2): b1 ");
	lm_module_free(m);
}
END_TEST

/* ---- schedules ---------------------------------------------------------- */

/* The races of r as sorted lines "memory object pair", the pair sorted
** (the order two unordered accesses come in may change). */
static char *race_set(const ls_result *r)
{
	lm_buf b = LM_BUF_INIT;
	for (int i = 0; i < r->n_races; i++) {
		const ls_race *x = &r->races[i];
		int ab = strcmp(x->a_inst, x->b_inst) < 0;
		lm_buf_printf(&b, "%s[%lld] %s %s/%s\n", x->memory,
			      (long long)x->core, x->object,
			      ab ? x->a_inst : x->b_inst,
			      ab ? x->b_inst : x->a_inst);
	}
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

START_TEST(test_schedules)
{
	static const char *const drop[] = {
		",\n           \"loop_carried_dependencies\": [\n"
		"            [\n             \"cp\",\n             \"Flow\"\n"
		"            ]\n           ]", "", NULL };
	char *want = NULL;
	for (uint64_t s = 0; s <= 4; s++) {
		ls_result r;
		lm_module *m[2];
		char *got;
		lm_buf b = LM_BUF_INIT;
		lc_shape(1);
		races1(tu_fixture_subst("loops", "lcdep.json", drop),
		       s * 0x9e3779b97f4a7c15ull, &r);
		lc_shape(0);
		got = race_set(&r);
		lm_buf_puts(&b, got);
		free(got);
		ls_result_free(&r);
		races1(dma_read("SP", 0, ""), s * 7919, &r);
		got = race_set(&r);
		lm_buf_puts(&b, got);
		free(got);
		ls_result_free(&r);
		handoff(0, m);
		run_race(m, 2, s * 104729, &r);
		got = race_set(&r);
		lm_buf_puts(&b, got);
		free(got);
		ls_result_free(&r);
		lm_module_free(m[0]);
		lm_module_free(m[1]);
		lm_buf_put(&b, "", 0);
		got = lm_buf_detach(&b);
		if (!want)
			want = got;
		else {
			ck_assert_str_eq(got, want);
			free(got);
		}
	}
	ck_assert_msg(strstr(want, "DRAM[-1] h get/put") != NULL, "%s", want);
	free(want);
}
END_TEST

/* ---- command line, generated programs ----------------------------------- */

START_TEST(test_cli)
{
	char *p = tu_fixture("diff", "racy");
	tu_run r = tu_lncsim(NULL, "run", "--no-db", "--race", p, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "lncsim: race: WAW SBUF[0] - [0,");
	ck_assert_contains(r.out, "lncsim: 1 race found\n");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", "--race", "--race-limit", "0",
		      p, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert(strstr(r.out, "lncsim: race: ") == NULL);
	ck_assert_contains(r.out, "1 race found (0 printed, --race-limit)");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", "--race-limit", "3", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--race-limit needs --race");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--race-limit", "3", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--race-limit needs --race");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--race", p, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "lncsim: race: reference: WAW");
	ck_assert_contains(r.out, "lncsim: race: linked: WAW");
	ck_assert_contains(r.out, "FAIL racy (1 core): reference run: 1 race");
	tu_run_free(&r);
	free(p);
	p = tu_fixture("loops", "lcdep.json");
	r = tu_lncsim(NULL, "run", "--no-db", "--race", p, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "races: none");
	tu_run_free(&r);
	free(p);
}
END_TEST

/* run --race and diff --race log their races; a run without --race is
** "not checked"; a clean run checked is "no races". */
START_TEST(test_cli_db)
{
	char *dir = tu_tmpdir("race-db");
	char db[4096];
	snprintf(db, sizeof db, "%s/r.db", dir);
	char *p = tu_fixture("diff", "racy");
	char *q = tu_fixture("loops", "lcdep.json");
	tu_run r = tu_lncsim(NULL, "run", "--db", db, "--race", p, NULL);
	ck_assert_int_eq(r.status, 1);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--db", db, "--race", p, NULL);
	ck_assert_int_eq(r.status, 1);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--db", db, q, NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--db", db, "--race", q, NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", db, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "run 1: 1 race\n");
	ck_assert_contains(r.out, "run 2: 2 races\n");
	ck_assert(strstr(r.out, "run 3") == NULL);
	ck_assert_contains(r.out, "run 4: no races\n");
	ck_assert_contains(r.out, "  linked WAW SBUF core 0 bytes [0, ");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "races", "--db", db, "--run", "3", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "run 3: not checked for races\n");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "db", "runs", "--db", db, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "1 race found");
	tu_run_free(&r);
	free(p);
	free(q);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
** A run that fails after races were found (a link without
** fpass_insert_switch_queue_instances: every core's DMAs on core 0's
** instances race, then deadlock): `run --race` prints the races and the
** error, and logs the run as an error with its races (no execution).
*/
START_TEST(test_cli_failed_races)
{
	char *dir = tu_tmpdir("race-fail");
	tu_run r = tu_lncsim(dir, "gen", "--cores", "3", "--seed", "2", "-o",
			     "g", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(dir, "link", "--skip=fpass_insert_switch_queue_instances,"
		      "verify", "-o", "l", "g/gen2", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(dir, "run", "--race", "--db", "r.db",
		      "l/gen2/sgLnk/def.json", NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.err, "deadlock");
	ck_assert_contains(r.err, "; --race: 7 races before it, first: ");
	ck_assert_contains(r.out, "lncsim: race: WAR SBUF[0] ");
	ck_assert_contains(r.out, "lncsim: 7 races found");
	tu_run_free(&r);
	r = tu_lncsim(dir, "db", "races", "--db", "r.db", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "run 1: 7 races\n");
	tu_run_free(&r);
	r = tu_lncsim(dir, "db", "runs", "--db", "r.db", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "deadlock");
	tu_run_free(&r);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* Generated sets (both runs of each case) are race-free. */
START_TEST(test_generated)
{
	tu_run r = tu_lncsim(NULL, "fuzz", "--race", "--count", "24",
			     "--cores", "1-4", "--jobs", "2", "-q", "--no-db",
			     NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "24 cases, 24 passed");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "fuzz", "--race", "--loops", "--seed", "500",
		      "--count", "12", "--cores", "1-3", "--jobs", "2", "-q",
		      "--no-db", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "12 cases, 12 passed");
	tu_run_free(&r);
}
END_TEST

/* ---- teeth -------------------------------------------------------------- */

/* A generated set linked, with what the run needs. */
typedef struct glink {
	int cores;
	lm_module **mods, *lin;
	ls_gen_file *files;
	int nf;
	lm_fileset fs;
	ls_tensors in;
} glink;

/* Generated set seed (cores from the seed) linked with the steps of skip
** and the linker's verify switched off (the verifier would refuse some
** of these first). */
static void glink_make(glink *g, uint64_t seed, int loops, uint64_t skip)
{
	ls_gen_opts go = {2 + (int)(seed % 3), seed, LS_GEN_SMALL, NULL, NULL,
			  loops, 0, 0, 0, 0};
	lk_options lo;
	lk_report rep;
	lm_error e;
	memset(g, 0, sizeof *g);
	ck_assert_msg(ls_gen(&go, "out", &g->mods, &g->files, &g->nf, &e) == 0,
		      "%s", e.msg);
	g->cores = go.cores;
	lm_fileset_init(&g->fs);
	ls_gen_fileset(g->files, g->nf, "out", &g->fs);
	memset(&lo, 0, sizeof lo);
	memset(&rep, 0, sizeof rep);
	lo.skip = skip | LK_SKIP(LK_STEP_VERIFY);
	lo.abs_file_paths = 1;
	lo.trust_inputs = 1;
	lo.files = &g->fs;
	lo.threads = 1;
	ck_assert_msg(lk_link(g->mods, go.cores, &lo, &g->lin, &rep, &e) == 0,
		      "link: %s", e.msg);
	lk_report_free(&rep);
	ck_assert_msg(ls_make_inputs(&g->lin, 1, NULL, seed, &g->in, &e) == 0,
		      "%s", e.msg);
}

static void glink_free(glink *g)
{
	ls_tensors_free(&g->in);
	lm_module_free(g->lin);
	for (int c = 0; c < g->cores; c++)
		lm_module_free(g->mods[c]);
	free(g->mods);
	ls_gen_files_free(g->files, g->nf);
	lm_fileset_free(&g->fs);
}

/* Run the linked module under the detector (schedule perturbed by
** seed): 0 and the races in r, or the run's error in e. */
static int glink_run(glink *g, uint64_t seed, ls_result *r, lm_error *e)
{
	ls_options o;
	memset(&o, 0, sizeof o);
	o.race = 1;
	o.perturb_seed = seed;
	o.files = &g->fs;
	o.max_instructions = 10000000;
	return ls_run(g->lin, &g->in, &o, r, e);
}

/*
** The linked module of a link without step, run with the detector as it
** is (not verified). 1: a race found; 2: the run failed after a race was
** found; 0: the run passed race-free; -1 a run error and no race before
** it.
*/
static int teeth_case(lk_step step, uint64_t seed, int loops)
{
	glink g;
	ls_result r;
	lm_error e;
	int rc, got;
	glink_make(&g, seed, loops, LK_SKIP(step));
	rc = glink_run(&g, 0, &r, &e);
	got = rc ? (strstr(e.msg, "; --race: ") ? 2 : -1) : r.races_found > 0;
	if (!rc)
		ls_result_free(&r);
	glink_free(&g);
	return got;
}

/* Each completion barrier of the linked module through f. */
static void each_completion(glink *g, void (*f)(lm_inst *, int, void *),
			    void *arg)
{
	lm_module *m = g->lin;
	int k = 0;
	for (int fi = 0; fi < m->n_functions; fi++)
		for (int b = 0; b < m->functions[fi].n_blocks; b++)
			for (int i = 0; i < m->functions[fi].blocks[b].n_insts;
			     i++) {
				lm_inst *in = &m->functions[fi].blocks[b]
						       .insts[i];
				if (in->op == LM_OP_COREBARRIER && in->group &&
				    !strcmp(in->group,
					    LM_LINKED_COMPLETION_GROUP))
					f(in, k++, arg);
			}
}

/* The barrier becomes a NoOp waiting for nothing. */
static void to_noop(lm_inst *in, int k, void *arg)
{
	(void)k;
	(void)arg;
	for (int i = 0; i < in->n_deps; i++)
		free(in->deps[i]);
	in->n_deps = 0;
	in->op = LM_OP_NOOP;
}

/* The Return after the barrier becomes a NoOp too. */
static void and_return(lm_inst *in, int k, void *arg)
{
	to_noop(in, k, arg);
	ck_assert(in[1].op == LM_OP_RETURN);
	in[1].op = LM_OP_NOOP;
}

/*
** The end of a linked run: the host reads the outputs once the core
** functions returned. Linked as it is, every output write is ordered
** before the host's read (the completion barrier depends on each
** engine's last instruction and meets every core before any Return);
** with the barriers gone (each a NoOp, the Returns kept) or the Returns
** gone too, the writes of the engines that did not run the Return race
** with the host's read: RAW, DRAM, an output, against "end-of-run".
*/
START_TEST(test_completion)
{
	void (*cut[])(lm_inst *, int, void *) = { NULL, to_noop, and_return };
	for (size_t v = 0; v < sizeof cut / sizeof cut[0]; v++)
		for (uint64_t s = 1; s <= 3; s++) {
			glink g;
			ls_result r;
			lm_error e;
			glink_make(&g, s, 0, 0);
			if (cut[v])
				each_completion(&g, cut[v], NULL);
			ck_assert_msg(glink_run(&g, s, &r, &e) == 0, "%s",
				      e.msg);
			if (!cut[v])
				ck_assert_int_eq(r.races_found, 0);
			else
				ck_assert_msg(r.races_found > 0, "variant %d "
					      "seed %d", (int)v, (int)s);
			for (int i = 0; i < r.n_races; i++) {
				const ls_race *x = &r.races[i];
				ck_assert_str_eq(x->kind, "RAW");
				ck_assert_str_eq(x->memory, "DRAM");
				ck_assert_str_eq(x->b_inst, "end-of-run");
				ck_assert_str_eq(x->b_engine, "host");
				ck_assert_int_eq(x->b_core, -1);
				ck_assert(lm_module_find_alloc(g.lin, x->object, NULL));
			}
			ls_result_free(&r);
			glink_free(&g);
		}
}
END_TEST

/* The completion barrier of core k becomes its own group on its own
** core, at id *arg (+ k when *arg is odd). */
static void to_solo(lm_inst *in, int k, void *arg)
{
	int64_t id = *(const int64_t *)arg;
	free(in->group);
	in->group = lm_xasprintf("completion.own%d", k);
	in->cores[0] = in->cores[k];
	in->n_cores = 1;
	in->barrier_id = id + (id & 1 ? k : 0);
}

/*
** Barrier ids: a barrier holds its id from its group's first arrival to
** the release. The completion barriers made one-core groups: at ids of
** their own they are race-free; at one id they are unordered holders of
** it, a SLOT race between each and the one that held the id before it,
** under every schedule -- found in the
** schedules where the two do not meet (the run passes with the race) and
** in those where they do (the collision is a run error, the race before
** it named). Held in turn (one core's barriers ordered by its program)
** an id is not a race: tests/test_race.c test_teeth's generated sets
** reuse ids that way without the renumbering.
*/
START_TEST(test_barrier_ids)
{
	for (int64_t id = 101; id >= 100; id--)
		for (uint64_t s = 0; s < 6; s++) {
			glink g;
			ls_result r;
			lm_error e;
			int rc;
			glink_make(&g, 1 + (s & 1), 0, 0);
			each_completion(&g, to_solo, &id);
			rc = glink_run(&g, s, &r, &e);
			if (id & 1) {
				ck_assert_msg(rc == 0, "%s", e.msg);
				ck_assert_int_eq(r.races_found, 0);
			} else if (rc) {
				ck_assert_msg(strstr(e.msg, "barrier ID "
						     "collision") &&
					      strstr(e.msg, " before it, first: "
						     "SLOT BARRIER[-1] id 100 "
						     "[100,101): cb_return_"),
					      "%s", e.msg);
			} else {
				/* each holder against the one before it */
				ck_assert_int_eq(r.races_found, g.cores - 1);
				for (int i = 0; i < r.n_races; i++) {
					const ls_race *x = &r.races[i];
					ck_assert_str_eq(x->kind, "SLOT");
					ck_assert_str_eq(x->memory, "BARRIER");
					ck_assert_str_eq(x->object, "id 100");
					ck_assert(!strncmp(x->a_inst,
							   "cb_return_", 10));
					ck_assert(!strncmp(x->b_inst,
							   "cb_return_", 10));
					ck_assert_int_ne(x->a_core, x->b_core);
				}
			}
			if (!rc)
				ls_result_free(&r);
			glink_free(&g);
		}
}
END_TEST

/*
** The race column of the teeth table (docs/differential.md): the linked
** module of a link without init_queues (DMAs signal the wrong
** semaphores), without fpass_insert_switch_queue_instances (every
** core's DMAs on core 0's instances; mostly a deadlock after the race:
** the run's error says so), without fpass_insert_returns (no Return: the
** host's read of the outputs is ordered after nothing the cores did) or
** without renumber_core_barriers (unordered groups share a barrier id: a
** SLOT race) races, found by the detector alone within 20 seeds; a link
** without check_barrier_order or post_link_mmt_report (they order
** nothing) is race-free.
*/
START_TEST(test_teeth)
{
	static const lk_step caught[] = {
		LK_STEP_INIT_QUEUES,
		LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES,
		LK_STEP_FPASS_INSERT_RETURNS,
		LK_STEP_RENUMBER_CORE_BARRIERS,
	};
	static const lk_step clean[] = {
		LK_STEP_CHECK_BARRIER_ORDER, LK_STEP_POST_LINK_MMT_REPORT,
	};
	for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
		int found = 0;
		for (uint64_t s = 1; s <= 20 && !found; s++)
			found = teeth_case(caught[i], s, 0) >= 1;
		ck_assert_msg(found, "%s: no race in 20 seeds",
			      lk_step_name(caught[i]));
	}
	for (size_t i = 0; i < sizeof clean / sizeof clean[0]; i++)
		for (uint64_t s = 1; s <= 4; s++)
			ck_assert_msg(teeth_case(clean[i], s, 0) == 0,
				      "%s seed %d", lk_step_name(clean[i]),
				      (int)s);
}
END_TEST

/*
** ls_diff of a link without fpass_insert_switch_queue_instances (not
** verified): the linked run fails after races; with keep_races its
** result holds them (the CLI logs them), without it nothing.
*/
START_TEST(test_diff_failed_races)
{
	for (int keep = 0; keep < 2; keep++) {
		glink g;
		ls_diff_opts o;
		ls_diff_result d;
		lm_error e;
		glink_make(&g, 2, 0,
			   LK_SKIP(LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES));
		memset(&o, 0, sizeof o);
		o.run.race = 1;
		o.run.keep_races = keep;
		o.run.files = &g.fs;
		ck_assert_msg(ls_diff(g.mods, g.cores, g.lin, &g.in, &o, &d,
				      &e) == 0, "%s", e.msg);
		ck_assert_int_eq(d.status, LS_DIFF_LINKED_ERROR);
		ck_assert_contains(d.message, "; --race: ");
		if (keep) {
			ck_assert_int_gt(d.linked.races_found, 0);
			ck_assert_int_eq(d.linked.n_races,
					 d.linked.races_found);
			ck_assert_int_eq(d.linked.n_cores, 0);
		} else {
			ck_assert_int_eq(d.linked.races_found, 0);
			ck_assert_ptr_null(d.linked.races);
		}
		ls_diff_result_free(&d);
		glink_free(&g);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("race");
	TCase *tc = tcase_create("edges");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_order_and_deps);
	tcase_add_test(tc, test_counting_semaphore);
	tcase_add_test(tc, test_semaphore_write);
	tcase_add_test(tc, test_event);
	tcase_add_test(tc, test_dma);
	tcase_add_test(tc, test_trigger);
	tcase_add_test(tc, test_all_engine_barrier);
	tcase_add_test(tc, test_call);
	tcase_add_test(tc, test_nki_call);
	tcase_add_test(tc, test_cross_core_handoff);
	tcase_add_test(tc, test_read_set_wide);
	tcase_add_test(tc, test_rows_out_of_order);
	tcase_add_test(tc, test_loop_carried);
	tcase_add_test(tc, test_branch_loop);
	tcase_add_test(tc, test_uninit_kept);
	tcase_add_test(tc, test_indirect);
	tcase_add_test(tc, test_indirect_rows);
	tcase_add_test(tc, test_masked_write);
	tcase_add_test(tc, test_memory_limit);
	tcase_add_test(tc, test_record_limit);
	tcase_add_test(tc, test_uninit_not_excused_by_slot);
	tcase_add_test(tc, test_schedules);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_cli);
	tcase_add_test(tc, test_cli_db);
	tcase_add_test(tc, test_cli_failed_races);
	tcase_add_test(tc, test_generated);
	suite_add_tcase(s, tc);
	tc = tcase_create("teeth");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_teeth);
	tcase_add_test(tc, test_completion);
	tcase_add_test(tc, test_barrier_ids);
	tcase_add_test(tc, test_diff_failed_races);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

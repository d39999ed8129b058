/*
** test_linker.c -- the bir_linker model (linker/): one test per step on
** small hand-built inputs, the error messages, the link directory, the
** matmul report, N = 1, --skip, and the lncsim link / mmt commands.
** Every link goes through do_link, which also proves the inputs unchanged.
** The input modules are built through the IR builder (model/build.h);
** instructions whose operands the model only carries (registers, symbolic
** access patterns) and the kernel carriers are given in the wire form.
*/
#include "common.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include "module.h"
#include "linker.h"
#include "verify.h"
#include "safeio.h"
#include "json.h"
#include "build.h"
#include "affine.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- string helpers (freed by S_free at the end of each test) ---------- */

static char *strs[65536];
static int n_strs;

static const char *S(const char *fmt, ...) LM_PRINTF(1, 2);
static const char *S(const char *fmt, ...)
{
	va_list ap, ap2;
	char *p;
	int n;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	p = lm_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	ck_assert_int_lt(n_strs, 65536);
	return strs[n_strs++] = p;
}

static void S_free(void)
{
	for (int i = 0; i < n_strs; i++)
		free(strs[i]);
	n_strs = 0;
}

/* ---- module builders (the IR builder) ------------------------------------ */

/* The first failure of the builder a test is using (one at a time fails:
** the test stops there). */
static lm_error berr;

/*
** A module of arch: name t, core (< 0: no neuron_core_id), semaphores s
** (init 0) and s2 (init 3), queue q with instances qi (s) and qj (s2),
** queue q2 with q2i (s2). Functions follow (func).
*/
static lm_builder *mod(int core, const char *arch)
{
	lm_builder *b = lm_b_new(arch, 2, &berr);
	lm_b_name(b, "t");
	if (core >= 0)
		lm_b_core_id(b, core);
	lm_b_semaphore(b, "s", 0);
	lm_b_semaphore(b, "s2", 3);
	lm_b_queue(b, "q");
	lm_b_qinstance(b, "q", "qi", "s");
	lm_b_qinstance(b, "q", "qj", "s2");
	lm_b_queue(b, "q2");
	lm_b_qinstance(b, "q2", "q2i", "s2");
	return b;
}

/* A function with its one block b; what follows goes into it. */
static void func(lm_builder *b, const char *name)
{
	lm_b_function(b, name);
	lm_b_block(b, "b");
}

/* A float32 [128, 64] allocation of memory type mt at addr. */
static lm_alloc *tensor(lm_builder *b, const char *name, lm_tensorkind kind,
			lm_memtype mt, int64_t addr)
{
	int64_t shape[2] = { 128, 64 }, dims[2] = { 128, 256 };
	lm_alloc *a = lm_b_alloc(b, name, kind, LM_DT_FLOAT32, shape, 2);
	lm_b_memloc(b, a, mt, addr, dims, 2, 0);
	ck_assert_msg(a != NULL, "%s", berr.msg);
	return a;
}

static lm_alloc *dram(lm_builder *b, const char *name, lm_tensorkind kind,
		      int64_t addr)
{
	return tensor(b, name, kind, LM_MT_DRAM, addr);
}

static void sb(lm_builder *b, const char *name, int64_t addr)
{
	tensor(b, name, LM_TK_INTERNAL, LM_MT_SB, addr);
}

/* An instruction (the test fails when the builder did). */
static lm_inst *op(lm_builder *b, lm_opcode o, lm_engine e, const char *name)
{
	lm_inst *in = lm_b_inst(b, o, e, name);
	ck_assert_msg(in != NULL, "%s", berr.msg);
	return in;
}

/* The operand every instruction here has: alloc's [[64,128],[1,64]]. */
static void ap(lm_builder *b, lm_inst *in, int side, const char *alloc)
{
	lm_appair p[2] = { { 64, 128 }, { 1, 64 } };
	lm_b_ap(b, in, side, alloc, LM_DT_FLOAT32, 0, 0, p, 2);
}

/* The same operand in the wire form, for instructions given so. */
static const char *ap_json(const char *alloc)
{
	return S("{\"kind\":\"physical_ap\",\"memsetref\":\"%s\",\"memref\":"
		 "\"%s\",\"offset\":0,\"ap\":[[64,128],[1,64]],\"dtype\":"
		 "\"float32\"}", alloc, alloc);
}

/* An instruction in the wire form. */
static lm_inst *wire(lm_builder *b, const char *json)
{
	lm_inst *in = lm_b_inst_json(b, json);
	ck_assert_msg(in != NULL, "%s", berr.msg);
	return in;
}

static lm_inst *dma(lm_builder *b, const char *name, const char *src,
		    const char *dst, const char *q)
{
	lm_inst *in = op(b, LM_OP_DMACOPY, LM_ENG_SP, name);
	ap(b, in, LM_B_IN, src);
	ap(b, in, LM_B_OUT, dst);
	lm_b_dma_queue(b, in, q);
	return in;
}

static lm_inst *tt(lm_builder *b, const char *name, const char *x,
		   const char *y, const char *o)
{
	lm_inst *in = op(b, LM_OP_TENSORTENSOR, LM_ENG_DVE, name);
	lm_b_set_alu(in, LM_ALU_ADD);
	ap(b, in, LM_B_IN, x);
	ap(b, in, LM_B_IN, y);
	ap(b, in, LM_B_OUT, o);
	return in;
}

/* A barrier of cores 0 and 1 (group NULL: its name). */
static lm_inst *bar(lm_builder *b, const char *name, int id,
		    const char *group)
{
	static const int64_t cores[2] = { 0, 1 };
	lm_inst *in = op(b, LM_OP_COREBARRIER, LM_ENG_POOL, name);
	lm_b_set_barrier(in, id, cores, 2, group);
	return in;
}

/* A Call (on no engine) of function target. */
static lm_inst *call(lm_builder *b, const char *name, const char *target)
{
	lm_inst *in = op(b, LM_OP_CALL, LM_ENG_UNASSIGNED, name);
	lm_inst_set_str(in, &in->target, target);
	return in;
}

/* in depends on name (Flow); returns in. */
static lm_inst *dep(lm_inst *in, const char *name)
{
	lm_inst_add_dep(in, 0, name, LM_EDGE_FLOW);
	return in;
}

/* The module b built, as the file path. */
static lm_module *done(lm_builder *b, const char *path)
{
	lm_module *m = NULL;
	lm_b_path(b, path);
	ck_assert_msg(lm_b_finish(b, &m) == 0, "%s", berr.msg);
	return m;
}

/* The module b built, written as dir/name (for lm_module_load and the
** command); returns the path. */
static char *save(lm_builder *b, const char *dir, const char *name)
{
	lm_module *m = done(b, name);
	char *text, *p;
	size_t n;
	lm_error e;
	ck_assert_int_eq(lm_module_to_json(m, 1, &text, &n, &e), 0);
	p = tu_write(dir, name, text);
	free(text);
	lm_module_free(m);
	return p;
}

/* The standard pair: core 0 produces h, core 1 reads it through h_in. */
static lm_builder *core0(void)
{
	lm_builder *b = mod(0, "gen3");
	lm_inst *st;
	func(b, "sg0");
	dram(b, "x", LM_TK_EXTERNAL_INPUT, 0);
	dram(b, "w", LM_TK_INTERNAL, 4096);
	sb(b, "t", 0);
	dram(b, "h", LM_TK_EXTERNAL_OUTPUT, 65536);
	dma(b, "ld", "x", "t", "q");
	st = dep(dma(b, "st", "t", "h", "q"), "ld");
	lm_b_wait(b, st, "s", 1);
	dep(bar(b, "bar", 1, "g1"), "st");
	return b;
}

/* Core 1, its view h_in of allocation view_of of core view_core. */
static lm_builder *core1_viewing(const char *view_of, int64_t view_core)
{
	lm_builder *b = mod(1, "gen3");
	lm_inst *st;
	func(b, "sg0");
	dram(b, "x", LM_TK_EXTERNAL_INPUT, 0);
	sb(b, "t", 0);
	lm_b_set_view(dram(b, "h_in", LM_TK_INTERNAL, 65536), view_of,
		      view_core);
	dram(b, "y", LM_TK_EXTERNAL_OUTPUT, 131072);
	bar(b, "bar", 1, "g1");
	dep(dma(b, "ld", "h_in", "t", "q"), "bar");
	dma(b, "ld2", "x", "t", "q");
	st = dma(b, "st", "t", "y", "q");
	lm_b_signal(b, st, "s2");
	lm_b_wait(b, st, "s", 2);
	return b;
}

static lm_builder *core1(void)
{
	return core1_viewing("h", 0);
}

/* ---- linking ----------------------------------------------------------- */

/*
** Link with the given skip mask; asserts every input compares equal to a
** clone taken before (lm_module_compare). Returns lk_link's code.
*/
static int do_link(lm_module **mods, int n, unsigned skip, lm_module **out,
		   lk_report *rep, lm_error *err)
{
	lm_module *before[16];
	lk_options o;
	char where[256];
	int rc;
	memset(&o, 0, sizeof o);
	o.skip = skip;
	for (int i = 0; i < n; i++)
		before[i] = lm_module_clone(mods[i]);
	rc = lk_link(mods, n, &o, out, rep, err);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(lm_module_compare(before[i], mods[i], where,
						sizeof where) == 0,
			      "input %d mutated at %s", i, where);
		lm_module_free(before[i]);
	}
	return rc;
}

static lm_module *mods2[2];

/* The pair built by b0 and b1, as c0.json and c1.json. */
static void load2(lm_builder *b0, lm_builder *b1)
{
	mods2[0] = done(b0, "c0.json");
	mods2[1] = done(b1, "c1.json");
}

static void free2(void)
{
	lm_module_free(mods2[0]);
	lm_module_free(mods2[1]);
	mods2[0] = mods2[1] = NULL;
}

/* Link the standard pair with a skip mask; must succeed. */
static lm_module *link2(unsigned skip, lk_report *rep)
{
	lm_module *out = NULL;
	lm_error e;
	load2(core0(), core1());
	int rc = do_link(mods2, 2, skip, &out, rep, &e);
	ck_assert_msg(rc == 0, "link: %s", e.msg);
	ck_assert_ptr_nonnull(out);
	return out;
}

/* Link the pair mods2 holds; expect failure with msg. */
static void link_fails(const char *msg)
{
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	int rc = do_link(mods2, 2, 0, &out, &rep, &e);
	ck_assert_int_ne(rc, 0);
	ck_assert_ptr_null(out);
	ck_assert_contains(e.msg, msg);
	lk_report_free(&rep);
	free2();
}

/* Link the pair b0 and b1 build; expect failure with msg. */
static void link2_fails(lm_builder *b0, lm_builder *b1, const char *msg)
{
	load2(b0, b1);
	link_fails(msg);
}

static lm_function *fn(const lm_module *m, const char *name)
{
	lm_function *f = lm_module_find_function(m, name);
	ck_assert_msg(f != NULL, "no function %s", name);
	return f;
}

static lm_alloc *alloc_in(const lm_function *f, const char *name)
{
	for (int i = 0; i < f->n_allocs; i++)
		if (!strcmp(f->allocs[i].name, name))
			return &f->allocs[i];
	ck_abort_msg("no allocation %s in %s", name, f->name);
	return NULL;
}

static int has_alloc(const lm_function *f, const char *name)
{
	for (int i = 0; i < f->n_allocs; i++)
		if (!strcmp(f->allocs[i].name, name))
			return 1;
	return 0;
}

static lm_inst *inst(const lm_function *f, const char *name)
{
	for (int b = 0; b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts; i++)
			if (f->blocks[b].insts[i].name &&
			    !strcmp(f->blocks[b].insts[i].name, name))
				return &f->blocks[b].insts[i];
	ck_abort_msg("no instruction %s in %s", name, f->name);
	return NULL;
}

static int has_inst(const lm_function *f, const char *name)
{
	for (int b = 0; b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts; i++)
			if (f->blocks[b].insts[i].name &&
			    !strcmp(f->blocks[b].insts[i].name, name))
				return 1;
	return 0;
}

static void assert_verifies(const lm_module *m)
{
	lm_verify_opts vo = { 1 };
	lm_error e;
	ck_assert_msg(lm_verify(m, &vo, &e) == 0, "verify: %s", e.msg);
}

/* ---- step 1: copy_modules_as_functions ---------------------------------- */

START_TEST(test_copy_modules_as_functions)
{
	/* core 0 has a second function called from its entry */
	lm_builder *b0 = mod(0, "gen3"), *b1 = mod(1, "gen3");
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	func(b0, "sg0");
	dram(b0, "x", LM_TK_EXTERNAL_INPUT, 0);
	sb(b0, "t", 0);
	dma(b0, "ld", "x", "t", "q");
	call(b0, "call_helper", "helper");
	dep(bar(b0, "sync", 1, NULL), "ld");
	func(b0, "helper");
	sb(b0, "u", 1024);
	tt(b0, "add", "u", "u", "u");
	func(b1, "sg0");
	dram(b1, "x1", LM_TK_EXTERNAL_INPUT, 0);
	sb(b1, "t", 0);
	dma(b1, "ld", "x1", "t", "q");
	bar(b1, "sync", 1, NULL);
	load2(b0, b1);
	ck_assert_int_eq(do_link(mods2, 2, 0, &out, &rep, &e), 0);
	assert_verifies(out);
	ck_assert_str_eq(out->name, "t/sgLnk");
	ck_assert_int_eq(out->n_functions, 4);
	ck_assert_str_eq(out->functions[0].name, "main");
	ck_assert_int_eq(out->functions[0].kind, LM_FK_DISPATCHER);
	ck_assert_str_eq(out->functions[1].name, "nc0");
	ck_assert_str_eq(out->functions[2].name, "nc0.helper");
	ck_assert_str_eq(out->functions[3].name, "nc1");
	ck_assert_int_eq(out->functions[1].kind, LM_FK_REGULAR);
	ck_assert(out->functions[1].has_kind);
	ck_assert_int_eq(out->functions[3].neuron_core_id, 1);
	ck_assert(out->functions[3].has_core_id);
	ck_assert_int_eq(out->functions[2].neuron_core_id, 0);
	/* call targets follow the rename */
	ck_assert_str_eq(inst(fn(out, "nc0"), "call_helper")->target,
			 "nc0.helper");
	/* colliding instruction names renamed, dependencies follow */
	ck_assert(has_inst(fn(out, "nc0"), "nc0.ld"));
	ck_assert(has_inst(fn(out, "nc1"), "nc1.ld"));
	ck_assert_str_eq(inst(fn(out, "nc0"), "nc0.sync")->deps[0], "nc0.ld");
	/* unique names kept */
	ck_assert(has_inst(fn(out, "nc0.helper"), "add"));
	/* a renamed barrier keeps meeting its default group */
	ck_assert_str_eq(inst(fn(out, "nc0"), "nc0.sync")->group, "sync");
	ck_assert_str_eq(inst(fn(out, "nc1"), "nc1.sync")->group, "sync");
	ck_assert_int_eq(rep.n_input_insts, 6);
	ck_assert_int_eq(rep.collisions[0], 3); /* t, ld, sync */
	ck_assert(rep.ran & LK_SKIP(LK_STEP_COPY_MODULES_AS_FUNCTIONS));
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/*
** Many instructions: names declared by both cores are renamed, names of one
** core are kept, and every dependency follows its target, near or far
** back (beyond copy.c's cache of recent names), in either case.
*/
START_TEST(test_copy_many_names)
{
	enum { K = 400 };
	lm_builder *b0 = mod(0, "gen3"), *b1 = mod(1, "gen3");
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	func(b0, "sg0");
	sb(b0, "t", 0);
	func(b1, "sg0");
	sb(b1, "t", 0);
	for (int k = 0; k < K; k++) {
		/* core 0: i<k>, every 7th u<k> (its own); core 1: i<k> */
		const char *n0 = k % 7 == 3 ? S("u%d", k) : S("i%d", k);
		lm_inst *in = tt(b0, n0, "t", "t", "t");
		if (k >= 3) {
			dep(in, (k - 1) % 7 == 3 ? S("u%d", k - 1) :
			    S("i%d", k - 1));
			dep(in, (k / 3) % 7 == 3 ? S("u%d", k / 3) :
			    S("i%d", k / 3));
		}
		in = tt(b1, S("i%d", k), "t", "t", "t");
		if (k)
			dep(in, S("i%d", k / 5));
	}
	load2(b0, b1);
	ck_assert_int_eq(do_link(mods2, 2, 0, &out, &rep, &e), 0);
	assert_verifies(out);
	const lm_function *f0 = fn(out, "nc0"), *f1 = fn(out, "nc1");
	int renamed0 = 0;
	for (int k = 0; k < K; k++) {
		int own = k % 7 == 3;
		const char *n0 = own ? S("u%d", k) : S("nc0.i%d", k);
		const lm_inst *in = inst(f0, n0);
		renamed0 += !own;
		if (k >= 3) {
			ck_assert_int_eq(in->n_deps, 2);
			ck_assert_str_eq(in->deps[0], (k - 1) % 7 == 3 ?
					 S("u%d", k - 1) : S("nc0.i%d", k - 1));
			ck_assert_str_eq(in->deps[1], (k / 3) % 7 == 3 ?
					 S("u%d", k / 3) : S("nc0.i%d", k / 3));
		}
		/* core 1's i<k> collides only where core 0 has i<k> too */
		in = inst(f1, own ? S("i%d", k) : S("nc1.i%d", k));
		if (k) {
			int t = k / 5;
			ck_assert_str_eq(in->deps[0], t % 7 == 3 ? S("i%d", t) :
					 S("nc1.i%d", t));
		}
	}
	ck_assert_int_eq(rep.collisions[0], renamed0 + 1); /* + t */
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- step 2: copy_allocs ------------------------------------------------- */

START_TEST(test_copy_allocs)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	lm_function *n0 = fn(out, "nc0"), *n1 = fn(out, "nc1");
	assert_verifies(out);
	/* collisions renamed nc<c>. (allocation and memory location) */
	ck_assert(has_alloc(n0, "nc0.t"));
	ck_assert_str_eq(alloc_in(n0, "nc0.t")->memlocs[0].name, "nc0.t");
	ck_assert(has_alloc(n1, "nc1.t"));
	/* unique name kept */
	ck_assert(has_alloc(n0, "w"));
	/* references rewritten */
	ck_assert_str_eq(inst(n0, "nc0.ld")->outs[0].memsetref, "nc0.t");
	ck_assert_str_eq(inst(n0, "nc0.ld")->outs[0].memref, "nc0.t");
	/* the remote view: consumer reads the producer's unified allocation */
	ck_assert_str_eq(inst(n1, "nc1.ld")->ins[0].memsetref, "h");
	ck_assert_str_eq(inst(n1, "nc1.ld")->ins[0].memref, "h");
	lm_alloc *v = alloc_in(n1, "h_in");
	ck_assert_str_eq(v->alias_of, "h");
	ck_assert(!v->has_remote);
	ck_assert_int_eq(rep.n_views, 1);
	ck_assert_int_eq(rep.collisions[1], 4); /* t, bar, ld, st (x: merged) */
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* A producer renamed on collision: views follow; opaque operands, kernels. */
START_TEST(test_copy_allocs_renamed_producer)
{
	/* an opaque operand and a kernel call: given in the wire form */
	lm_builder *b0 = mod(0, "gen3"), *b1 = mod(1, "gen3");
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	func(b0, "sg0");
	dram(b0, "p", LM_TK_INTERNAL, 0);
	sb(b0, "k", 0);
	wire(b0, "{\"opcode\":\"Iota\",\"name\":\"io\",\"engine\":"
	     "\"Pool\",\"ins\":[],\"outs\":[{\"kind\":\"symbolic_ap\","
	     "\"memsetref\":\"p\",\"memref\":\"p\",\"expr\":\"i\"}],"
	     "\"pattern\":[[1,64]],\"base\":0,\"channel_multiplier\":0}");
	wire(b0, "{\"opcode\":\"NKIKernel\",\"name\":\"call_k\","
	     "\"func\":\"kern\",\"func_args\":{\"kin\":\"p\"},"
	     "\"func_outs\":{}}");
	func(b0, "kern");
	dram(b0, "kin", LM_TK_INPUT, 8192);
	func(b1, "sg0");
	dram(b1, "p", LM_TK_INTERNAL, 0);
	lm_b_set_view(dram(b1, "pv", LM_TK_INTERNAL, 0), "p", 0);
	dma(b1, "rd", "pv", "p", "q");
	load2(b0, b1);
	ck_assert_int_eq(do_link(mods2, 2, 0, &out, &rep, &e), 0);
	lm_function *n0 = fn(out, "nc0"), *n1 = fn(out, "nc1");
	ck_assert(has_alloc(n0, "nc0.p"));
	ck_assert(has_alloc(n1, "nc1.p"));
	ck_assert_str_eq(alloc_in(n1, "pv")->alias_of, "nc0.p");
	ck_assert_str_eq(inst(n1, "rd")->ins[0].memsetref, "nc0.p");
	ck_assert_str_eq(inst(n1, "rd")->outs[0].memsetref, "nc1.p");
	/* the opaque operand's JSON is rewritten too */
	lm_arg *oa = &inst(n0, "io")->outs[0];
	ck_assert_str_eq(oa->memsetref, "nc0.p");
	char *txt = NULL;
	size_t len;
	ck_assert_int_eq(lm_module_to_json(out, 0, &txt, &len, &e), 0);
	ck_assert_contains(txt, "{\"expr\":\"i\",\"kind\":\"symbolic_ap\","
			   "\"memref\":\"nc0.p\",\"memsetref\":\"nc0.p\"}");
	free(txt);
	lm_inst *k = inst(n0, "call_k");
	ck_assert_str_eq(k->func, "nc0.kern");
	ck_assert_str_eq(k->func_args[0].key, "kin");
	ck_assert_str_eq(k->func_args[0].value, "nc0.p");
	ck_assert_str_eq(out->aliases[0].producer, "nc0.p");
	ck_assert_str_eq(out->aliases[0].consumer, "pv");
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* A core using register r0 (an allocation whose memory location has type
** REG) through every spelling of a register name (the wire form). */
static lm_builder *reg_core(int core)
{
	const char *rap = "{\"opcode\":\"TensorCopy\",\"name\":\"rap\","
		"\"engine\":\"DVE\",\"ins\":[{\"kind\":\"register_ap\","
		"\"memsetref\":\"t\",\"memref\":\"t\",\"dtype\":\"float32\","
		"\"ap\":[[64,128],[1,64]],\"regref\":\"r0\","
		"\"reg_ap_offset\":\"r0\",\"reg_sub_tensor_id\":\"r0\"}],"
		"\"outs\":[%s]}";
	const char *acc = "{\"opcode\":\"TensorScalar\","
		"\"const1\":0.0,\"op1\":\"bypass\",\"reverse0\":false,"
		"\"reverse1\":false,\"name\":\"acc\","
		"\"engine\":\"DVE\",\"op0\":\"add\",\"const0\":1.0,"
		"\"ins\":[{\"kind\":\"register_access\",\"dtype\":\"int32\","
		"\"regref\":\"r0\"}],\"outs\":[%s]}";
	const char *sym = "{\"opcode\":\"TensorCopy\",\"name\":\"sym\","
		"\"engine\":\"DVE\",\"ins\":[{\"kind\":\"symbolic_ap\","
		"\"memsetref\":\"t\",\"dtype\":\"float32\",\"addrs\":[{"
		"\"kind\":\"SumKind\",\"n_terms\":2,\"terms\":[{\"kind\":"
		"\"ShardIDKind\",\"ub\":4},{\"kind\":\"IntRuntimeValueKind\","
		"\"regref\":\"r0\"}]}]}],\"outs\":[%s]}";
	const int64_t one[1] = { 1 };
	lm_builder *b = mod(core, "gen3");
	func(b, "sg0");
	sb(b, "t", 0);
	/* a register's location: no dims, not allocated */
	lm_memloc *l = lm_b_memloc(b, lm_b_alloc(b, "r0", LM_TK_INTERNAL,
						 LM_DT_INT32, one, 1),
				   LM_MT_REG, 0, NULL, 0, 0);
	ck_assert_msg(l != NULL, "%s", berr.msg);
	l->allocated = 0;
	wire(b, S(rap, ap_json("t")));
	wire(b, S(acc, ap_json("t")));
	wire(b, S(sym, ap_json("t")));
	return b;
}

/* Collects the register names of a walk. */
typedef struct reg_names {
	const char *names[8];
	int n;
} reg_names;

static int collect_reg(cJSON *j, void *arg)
{
	reg_names *r = arg;
	ck_assert(cJSON_IsString(j));
	ck_assert_int_lt(r->n, 8);
	r->names[r->n++] = j->valuestring;
	return 0;
}

/* Registers renamed on collision: every reference (regref, reg_ap_offset,
** reg_sub_tensor_id, runtime-value expressions) names its own core's. */
START_TEST(test_copy_allocs_registers)
{
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	static const struct { const char *inst; int n; } uses[] = {
		{ "rap", 3 }, { "acc", 1 }, { "sym", 1 },
	};
	load2(reg_core(0), reg_core(1));
	ck_assert_msg(do_link(mods2, 2, 0, &out, &rep, &e) == 0, "link: %s",
		      e.msg);
	for (int c = 0; c < 2; c++) {
		lm_function *f = fn(out, S("nc%d", c));
		const char *own = S("nc%d.r0", c);
		ck_assert(has_alloc(f, own));
		ck_assert_str_eq(alloc_in(f, own)->memlocs[0].name, own);
		for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
			reg_names r = { { NULL }, 0 };
			lm_inst *in = inst(f, S("nc%d.%s", c, uses[i].inst));
			lm_arg_each_regref(&in->ins[0], collect_reg, &r);
			ck_assert_int_eq(r.n, uses[i].n);
			for (int k = 0; k < r.n; k++)
				ck_assert_str_eq(r.names[k], own);
		}
	}
	assert_verifies(out);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* The instruction named name in f, at any depth (nested bodies too). */
static lm_inst *inst_in(const lm_block *bs, int nb, const char *name)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			lm_inst *in = &bs[b].insts[i], *r;
			if (in->name && !strcmp(in->name, name))
				return in;
			if (in->n_blocks &&
			    (r = inst_in(in->blocks, in->n_blocks, name)))
				return r;
		}
	return NULL;
}

static lm_inst *deep(const lm_function *f, const char *name)
{
	lm_inst *in = inst_in(f->blocks, f->n_blocks, name);
	ck_assert_msg(in != NULL, "no instruction %s in %s", name, f->name);
	return in;
}

#define BODY_NOP(n, deps) "{\"opcode\":\"NoOp\",\"name\":\"" n "\"," \
	"\"engine\":\"SP\",\"ins\":[],\"outs\":[]" deps "}"
#define BODY_C0 "{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":0}"
#define BODY_C1 "{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":1}"
#define BODY_RN "{\"kind\":\"AffExprKind\",\"terms\":[{\"idx\":{\"kind\":" \
	"\"IntRuntimeValueKind\",\"regref\":\"rn\"},\"coeff\":1}],\"c\":0}"

/*
** A core whose instructions live in nested bodies: a Loop (n1, and a
** branch back to its body's block, whose argument is rn; its register
** rn), a DynamicForLoop dl
** (n2 after n1, waiting for s to reach register rn; its trip count in rn),
** a DoWhile dw (n3, after dl, and a Break), a top-level NoOp after n3
** (its wait from n1), a DMA block (a descriptor) and its trigger;
** only<core> is a name of one core.
*/
static lm_builder *bodies_core(int core)
{
	lm_builder *b = mod(core, "gen3");
	int64_t one[1] = { 1 };
	func(b, "sg0");
	lm_b_memloc(b, lm_b_alloc(b, "rn", LM_TK_INTERNAL, LM_DT_INT32, one, 1),
		    LM_MT_REG, 0, NULL, 0, 0);
	wire(b, "{\"opcode\":\"Loop\",\"LoopAxis\":{\"name\":\"i\",\"lb\":0,"
	     "\"ub\":2,\"stride\":1},\"registers\":[\"rn\"],\"blocks\":[{"
	     "\"name\":\"lb\",\"arguments\":[{\"regref\":\"rn\","
	     "\"incoming_values\":[[\"rn\",\"lb\"],{\"regref\":\"rn\","
	     "\"block\":\"lb\"}]}],\"instructions\":[" BODY_NOP("n1", "") ","
	     "{\"opcode\":\"CompareAndBranch\",\"name\":\"back\",\"engine\":"
	     "\"SP\",\"ins\":[],\"outs\":[],\"on_true\":\"lb\",\"on_false\":"
	     "\"lb\"}]}]}");
	wire(b, S("{\"opcode\":\"DynamicForLoop\",\"name\":\"dl\",\"engine\":"
		  "\"SP\",\"ins\":[],\"outs\":[],\"DynamicForLoopAxis\":{"
		  "\"name\":\"j\",\"lb\":" BODY_C0 ",\"ub\":" BODY_RN ","
		  "\"stride\":" BODY_C1 "},\"blocks\":[{\"name\":\"db\","
		  "\"instructions\":[" BODY_NOP("n2", ",\"dependencies\":"
		  "[[\"n1\",\"Flow\"]],\"sync_info\":{\"on_wait\":[{"
		  "\"semaphore\":\"s\",\"mode\":\"sem-ge-reg\",\"regref\":"
		  "\"rn\"}]}") "," BODY_NOP("only%d", "") "]}]}", core));
	wire(b, "{\"opcode\":\"DoWhile\",\"name\":\"dw\",\"engine\":\"SP\","
	     "\"ins\":[],\"outs\":[],\"blocks\":[{\"name\":\"wb\","
	     "\"instructions\":[" BODY_NOP("n3", ",\"dependencies\":"
	     "[[\"dl\",\"Flow\"]]") ",{\"opcode\":\"Break\",\"name\":"
	     "\"brk\",\"engine\":\"SP\",\"ins\":[],\"outs\":[]}]}]}");
	wire(b, BODY_NOP("after", ",\"dependencies\":[[\"n3\",\"Flow\"]],"
			 "\"sync_info\":{\"on_wait\":[{\"semaphore\":\"s\","
			 "\"value\":1,\"from\":\"n1\"}]}"));
	wire(b, "{\"opcode\":\"DMABlock\",\"name\":\"dblk\",\"engine\":"
	     "\"DMA\",\"ins\":[],\"outs\":[],\"queue\":\"q\",\"dma_trigger\":"
	     "\"trig\",\"blocks\":[{\"name\":\"dbody\",\"instructions\":["
	     "{\"opcode\":\"DMADescriptorCopy\",\"name\":\"desc\","
	     "\"engine\":\"DMA\",\"ins\":[],\"outs\":[]}]}]}");
	wire(b, "{\"opcode\":\"DMATrigger\",\"name\":\"trig\",\"engine\":"
	     "\"SP\",\"ins\":[],\"outs\":[],\"queue\":\"q\",\"dma_blocks\":"
	     "[\"dblk\"]}");
	return b;
}

/*
** Two cores whose nested bodies declare the same instruction names link:
** every name inside a body is renamed nc<c>. like a top-level one, the
** dependencies into and out of bodies follow, a name of one core is
** kept, the register both declare is renamed where the fields name it (a
** Loop's registers, a DynamicForLoop's bound, a sem-ge-reg wait), so are
** the instruction names fields hold (a trigger's blocks, a block's
** trigger, a wait's from), and the linked module verifies.
*/
/* The first top-level Loop of f (the test fails without one). */
static const lm_inst *first_loop(const lm_function *f)
{
	for (int i = 0; i < f->blocks[0].n_insts; i++)
		if (f->blocks[0].insts[i].op == LM_OP_LOOP)
			return &f->blocks[0].insts[i];
	ck_abort_msg("no Loop in %s", f->name);
	return NULL;
}

START_TEST(test_copy_bodies)
{
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	load2(bodies_core(0), bodies_core(1));
	ck_assert_msg(do_link(mods2, 2, 0, &out, &rep, &e) == 0, "%s", e.msg);
	assert_verifies(out);
	for (int c = 0; c < 2; c++) {
		const lm_function *f = fn(out, S("nc%d", c));
		ck_assert_str_eq(deep(f, S("nc%d.n2", c))->deps[0],
				 S("nc%d.n1", c));
		ck_assert_str_eq(deep(f, S("nc%d.n3", c))->deps[0],
				 S("nc%d.dl", c));
		ck_assert_str_eq(deep(f, S("nc%d.after", c))->deps[0],
				 S("nc%d.n3", c));
		ck_assert_int_eq(deep(f, S("nc%d.dw", c))->n_blocks, 1);
		ck_assert_ptr_nonnull(deep(f, S("only%d", c)));
		ck_assert_ptr_null(inst_in(f->blocks, f->n_blocks, "n1"));
		/* after the switch of the trigger's queue */
		ck_assert_int_eq(f->blocks[0].insts[0].op, LM_OP_SWITCHQUEUE);
		ck_assert_str_eq(first_loop(f)->loop_regs[0],
				 S("nc%d.rn", c));
		{
			const lm_blockarg *a =
				&first_loop(f)->blocks[0].args[0];
			ck_assert_str_eq(a->regref, S("nc%d.rn", c));
			ck_assert_str_eq(a->incoming[0].value, S("nc%d.rn", c));
			ck_assert_str_eq(a->incoming[1].value, S("nc%d.rn", c));
			ck_assert_str_eq(a->incoming[1].block, "lb");
		}
		ck_assert_str_eq(deep(f, S("nc%d.n2", c))->wait[0].regref,
				 S("nc%d.rn", c));
		ck_assert_str_eq(deep(f, S("nc%d.n2", c))->wait[0].semaphore,
				 S("nc%d.s", c));
		{
			const char *reg = NULL;
			ck_assert_int_eq(lm_affine_terms(deep(f, S("nc%d.dl", c))->
							 axis.ub_e, NULL, NULL,
							 NULL, &reg, NULL), 0);
			ck_assert_str_eq(reg, S("nc%d.rn", c));
		}
	}
	for (int c = 0; c < 2; c++) {
		const lm_function *f = fn(out, S("nc%d", c));
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(
			deep(f, S("nc%d.dblk", c))->extra, "dma_trigger");
		ck_assert_str_eq(deep(f, S("nc%d.trig", c))->dma_blocks[0],
				 S("nc%d.dblk", c));
		ck_assert_str_eq(deep(f, S("nc%d.after", c))->wait[0].from,
				 S("nc%d.n1", c));
		ck_assert(cJSON_IsString(t));
		ck_assert_str_eq(t->valuestring, S("nc%d.trig", c));
		ck_assert_ptr_nonnull(deep(f, S("nc%d.desc", c)));
	}
	/* rn, n1, back, dl, n2, dw, n3, brk, after, dblk, desc, trig */
	ck_assert_int_eq(rep.collisions[0], 12);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- step 3: function passes --------------------------------------------- */

START_TEST(test_fpass_insert_returns)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	for (int c = 0; c < 2; c++) {
		lm_function *f = fn(out, c ? "nc1" : "nc0");
		lm_block *b = &f->blocks[f->n_blocks - 1];
		lm_inst *cb = &b->insts[b->n_insts - 2];
		ck_assert_int_eq(cb->op, LM_OP_COREBARRIER);
		ck_assert_str_eq(cb->name, c ? "cb_return_call_def_1_instance_0"
				 : "cb_return_call_def_0_instance_0");
		ck_assert_int_eq(cb->n_cores, 2);
		ck_assert_int_eq(cb->cores[0], 0);
		ck_assert_int_eq(cb->cores[1], 1);
		ck_assert_str_eq(cb->group, "sgLnk.completion");
		ck_assert(cb->renumber);
		ck_assert_int_eq(b->insts[b->n_insts - 1].op, LM_OP_RETURN);
		ck_assert_str_eq(b->insts[b->n_insts - 1].name, c ?
				 "return_call_def_1_instance_0" :
				 "return_call_def_0_instance_0");
	}
	/* it waits for the last instruction of each engine */
	lm_inst *cb0 = inst(fn(out, "nc0"), "cb_return_call_def_0_instance_0");
	ck_assert_int_eq(cb0->n_deps, 2);
	ck_assert_str_eq(cb0->deps[0], "nc0.bar");  /* Pool */
	ck_assert_str_eq(cb0->deps[1], "nc0.st");   /* SP */
	ck_assert_int_eq(rep.n_returns, 2);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* A function already ending with Return gets the barrier before it. */
START_TEST(test_fpass_existing_return)
{
	lm_builder *bl = mod(-1, "gen3");
	func(bl, "sg0");
	sb(bl, "t", 0);
	tt(bl, "a", "t", "t", "t");
	op(bl, LM_OP_RETURN, LM_ENG_UNASSIGNED, "ret");
	lm_module *m = done(bl, "one.json");
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	ck_assert_int_eq(do_link(&m, 1, 0, &out, &rep, &e), 0);
	lm_block *b = &fn(out, "nc0")->blocks[0];
	ck_assert_int_eq(b->n_insts, 3);
	ck_assert_str_eq(b->insts[1].name, "cb_return_call_def_0_instance_0");
	ck_assert_str_eq(b->insts[2].name, "ret");
	lm_module_free(out);
	lm_module_free(m);
	lk_report_free(&rep);
	S_free();
}
END_TEST

START_TEST(test_fpass_insert_switch_queue_instances)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	for (int c = 0; c < 2; c++) {
		lm_function *f = fn(out, c ? "nc1" : "nc0");
		lm_inst *s = &f->blocks[0].insts[0];
		ck_assert_int_eq(s->op, LM_OP_SWITCHQUEUE);
		ck_assert_str_eq(s->name, c ? "I-SQI-q-call_def_1_instance_0"
				 : "I-SQI-q-call_def_0_instance_0");
		ck_assert_str_eq(s->queue, "q");
		/* the core's first instance of q, renamed by init_queues */
		ck_assert_str_eq(s->instance_name, c ? "nc1.qi" : "nc0.qi");
		ck_assert_int_eq(s->engine, LM_ENG_SP);
		/* only the queues used: q2 is not */
		ck_assert_int_ne(f->blocks[0].insts[1].op, LM_OP_SWITCHQUEUE);
	}
	ck_assert_int_eq(rep.n_switches, 2);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- step 4: main memlocs and aliases ------------------------------------ */

START_TEST(test_build_main_memlocs)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	lm_function *m = &out->functions[0];
	/* core order: core 0's x, h; core 1's y (its x is the same input) */
	ck_assert_int_eq(m->n_allocs, 3);
	ck_assert_str_eq(m->allocs[0].name, "x");
	ck_assert_str_eq(m->allocs[0].memlocs[0].name, "x");
	ck_assert_str_eq(m->allocs[1].name, "h");
	ck_assert_str_eq(m->allocs[2].name, "y");
	ck_assert(!has_alloc(fn(out, "nc0"), "nc0.x"));
	ck_assert(!has_alloc(fn(out, "nc1"), "nc1.x"));
	/* both cores' references now read the one x */
	ck_assert_str_eq(inst(fn(out, "nc0"), "nc0.ld")->ins[0].memsetref, "x");
	ck_assert_str_eq(inst(fn(out, "nc1"), "ld2")->ins[0].memsetref, "x");
	ck_assert_str_eq(inst(fn(out, "nc1"), "ld2")->ins[0].memref, "x");
	ck_assert_int_eq(rep.n_shared_inputs, 1);
	ck_assert_int_eq(rep.n_main_allocs, 3);
	assert_verifies(out);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

START_TEST(test_build_main_aliases)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	ck_assert(out->has_aliases);
	ck_assert_int_eq(out->n_aliases, 1);
	ck_assert_str_eq(out->aliases[0].producer, "h");
	ck_assert_str_eq(out->aliases[0].consumer, "h_in");
	ck_assert_int_eq(out->aliases[0].producer_core, 0);
	ck_assert_int_eq(out->aliases[0].consumer_core, 1);
	ck_assert_int_eq(rep.n_aliases, 1);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* Core 1 reading core 0's output h by name: its ExternalInput h (dtype dt,
** shape [128, cols]) at its own address, read after the barrier. */
static lm_builder *core_named(int core, lm_dtype dt, int64_t cols)
{
	lm_builder *b = mod(core, "gen3");
	int64_t shape[2] = { 128, 0 }, dims[2] = { 128, 256 };
	lm_alloc *h;
	lm_inst *st;
	shape[1] = cols;
	dims[1] = cols * 4;
	func(b, "sg0");
	sb(b, "t", 0);
	h = lm_b_alloc(b, "h", LM_TK_EXTERNAL_INPUT, dt, shape, 2);
	lm_b_memloc(b, h, LM_MT_DRAM, 1 << 20, dims, 2, 0);
	dram(b, core == 1 ? "y" : "y2", LM_TK_EXTERNAL_OUTPUT, 131072);
	if (core == 1) {
		bar(b, "bar", 1, "g1");
		dep(dma(b, "ld", "h", "t", "q"), "bar");
	} else {
		dma(b, "ld", "h", "t", "q");
	}
	st = dep(dma(b, "st", "t", core == 1 ? "y" : "y2", "q"), "ld");
	lm_b_signal(b, st, "s2");
	return b;
}

static lm_builder *core1_named(lm_dtype dt, int64_t cols)
{
	return core_named(1, dt, cols);
}

START_TEST(test_copy_allocs_name_matched)
{
	lk_report rep;
	lm_module *out = NULL;
	lm_error e;
	lm_function *m, *f1;
	lm_alloc *v;
	load2(core0(), core1_named(LM_DT_FLOAT32, 64));
	ck_assert_msg(do_link(mods2, 2, 0, &out, &rep, &e) == 0, "%s", e.msg);
	m = &out->functions[0];
	f1 = fn(out, "nc1");
	/* the output keeps its name in main; the input is its view */
	ck_assert(has_alloc(m, "h"));
	ck_assert(!has_alloc(m, "nc1.h"));
	v = alloc_in(f1, "nc1.h");
	ck_assert_int_eq(v->kind, LM_TK_INTERNAL);
	ck_assert_str_eq(v->alias_of, "h");
	ck_assert_str_eq(v->memlocs[0].name, "nc1.h");
	ck_assert_str_eq(inst(f1, "nc1.ld")->ins[0].memsetref, "h");
	ck_assert_str_eq(inst(f1, "nc1.ld")->ins[0].memref, "h");
	/* the alias, the demotion (core 1 reads it), no tensor-map entry */
	ck_assert_int_eq(out->n_aliases, 1);
	ck_assert_str_eq(out->aliases[0].producer, "h");
	ck_assert_str_eq(out->aliases[0].consumer, "nc1.h");
	ck_assert_int_eq(out->aliases[0].producer_core, 0);
	ck_assert_int_eq(out->aliases[0].consumer_core, 1);
	ck_assert_int_eq(alloc_in(m, "h")->kind, LM_TK_INTERNAL);
	ck_assert_int_eq(rep.n_name_handoffs, 1);
	ck_assert_int_eq(rep.n_views, 0);
	for (int i = 0; i < rep.n_tensors; i++)
		ck_assert_str_ne(rep.tensors[i].layer_name, "h");
	assert_verifies(out);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();

	/* skipped copy_allocs: no inpMap, the two declarations are refused */
	load2(core0(), core1_named(LM_DT_FLOAT32, 64));
	ck_assert_int_ne(do_link(mods2, 2, LK_SKIP(LK_STEP_COPY_ALLOCS), &out,
				 &rep, &e), 0);
	ck_assert_contains(e.msg, "external input 'h' is also declared by "
			   "core 0");
	lk_report_free(&rep);
	free2();

	/* two cores read h by name: two views of the one output */
	{
		lm_module *m3[3];
		m3[0] = done(core0(), "c0.json");
		m3[1] = done(core1_named(LM_DT_FLOAT32, 64), "c1.json");
		m3[2] = done(core_named(2, LM_DT_FLOAT32, 64), "c2.json");
		ck_assert_msg(do_link(m3, 3, 0, &out, &rep, &e) == 0, "%s",
			      e.msg);
		ck_assert_int_eq(rep.n_name_handoffs, 2);
		ck_assert_int_eq(out->n_aliases, 2);
		ck_assert_str_eq(out->aliases[1].consumer, "nc2.h");
		ck_assert_str_eq(alloc_in(fn(out, "nc2"), "nc2.h")->alias_of,
				 "h");
		ck_assert_str_eq(inst(fn(out, "nc2"), "nc2.ld")->ins[0].memsetref,
				 "h");
		assert_verifies(out);
		lm_module_free(out);
		lk_report_free(&rep);
		for (int i = 0; i < 3; i++)
			lm_module_free(m3[i]);
	}

	/* the input's linked name is taken: refused, not a duplicate */
	{
		lm_builder *b = core1_named(LM_DT_FLOAT32, 64);
		dram(b, "nc1.h", LM_TK_INTERNAL, 1 << 21);
		link2_fails(core0(), b, "c1.json: function sg0/allocation h: "
			    "name-matched hand-off 'h': its input's linked name "
			    "'nc1.h' is already the name of an allocation");
	}

	/* one core's input and output of one name (the verifier refuses
	   the duplicate; trusted inputs reach the linker's own check) */
	{
		lm_builder *b = core1_named(LM_DT_FLOAT32, 64);
		lm_module *one;
		lk_options o;
		lm_alloc *h2;
		func(b, "f2");
		dram(b, "h2", LM_TK_EXTERNAL_OUTPUT, 1 << 22);
		one = done(b, "c1.json");
		h2 = lm_module_find_alloc(one, "h2", NULL);
		free(h2->name);
		h2->name = lm_xstrdup("h");
		memset(&o, 0, sizeof o);
		o.trust_inputs = 1;
		ck_assert_int_eq(lk_link(&one, 1, &o, &out, &rep, &e), LM_EINPUT);
		ck_assert_str_eq(e.msg, "c1.json: function sg0/allocation h: "
				 "external input 'h' has the name of an external "
				 "output of its own core 1 (a name-matched "
				 "hand-off joins two cores)");
		lk_report_free(&rep);
		lm_module_free(one);
	}

	/* a hand-off must agree with its output */
	link2_fails(core0(), core1_named(LM_DT_FLOAT16, 64),
		    "c1.json: function sg0/allocation h: name-matched hand-off "
		    "'h': the external input of core 1 has dtype float16 but "
		    "the external output of core 0 has float32");
	link2_fails(core0(), core1_named(LM_DT_FLOAT32, 128),
		    "c1.json: function sg0/allocation h: name-matched hand-off "
		    "'h': the external input of core 1 has tensor_shape "
		    "[128,128] but the external output of core 0 has [128,64]");
	S_free();
}
END_TEST

/* ---- step 5: fix_output_kind --------------------------------------------- */

START_TEST(test_fix_output_kind)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	lm_function *m = &out->functions[0];
	ck_assert_int_eq(alloc_in(m, "h")->kind, LM_TK_INTERNAL);
	ck_assert_int_eq(alloc_in(m, "y")->kind, LM_TK_EXTERNAL_OUTPUT);
	ck_assert_int_eq(rep.n_demoted, 1);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	/* skipped: h stays a host output */
	out = link2(LK_SKIP(LK_STEP_FIX_OUTPUT_KIND), &rep);
	ck_assert_int_eq(alloc_in(&out->functions[0], "h")->kind,
			 LM_TK_EXTERNAL_OUTPUT);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* How core 1 of the standard pair reads its view h_in (always declared). */
enum {
	READ_NONE,      /* nowhere */
	READ_HERE,      /* in sg0, after the barrier */
	READ_UNCALLED,  /* in helper, a function nobody calls */
	READ_CALLED     /* in helper, which sg0 calls after the barrier */
};

/* Core 1 of the standard pair reading h_in as `how` says, with a function
** helper (a NoOp unless it reads). */
static lm_builder *core1_reads(int how)
{
	lm_builder *b = mod(1, "gen3");
	lm_inst *st;
	func(b, "sg0");
	dram(b, "x", LM_TK_EXTERNAL_INPUT, 0);
	sb(b, "t", 0);
	lm_b_set_view(dram(b, "h_in", LM_TK_INTERNAL, 65536), "h", 0);
	dram(b, "y", LM_TK_EXTERNAL_OUTPUT, 131072);
	bar(b, "bar", 1, "g1");
	if (how == READ_HERE)
		dep(dma(b, "ld", "h_in", "t", "q"), "bar");
	if (how == READ_CALLED)
		dep(call(b, "c", "helper"), "bar");
	dma(b, "ld2", "x", "t", "q");
	st = dma(b, "st", "t", "y", "q");
	lm_b_signal(b, st, "s2");
	lm_b_wait(b, st, "s", 1);
	func(b, "helper");
	if (how == READ_UNCALLED || how == READ_CALLED)
		dma(b, "ld", "h_in", "t", "q");
	else
		op(b, LM_OP_NOOP, LM_ENG_SP, "n");
	return b;
}

/* Link core 0 (h's memory location of type h_type) with core 1 (b1). */
static lm_module *link_reads(lm_memtype h_type, lm_builder *b1,
			     lk_report *rep, lm_buf *log)
{
	lm_module *out = NULL;
	lk_options o;
	lm_error e;
	load2(core0(), b1);
	lm_module_find_alloc(mods2[0], "h", NULL)->memlocs[0].type = h_type;
	memset(&o, 0, sizeof o);
	o.log = log;
	ck_assert_msg(lk_link(mods2, 2, &o, &out, rep, &e) == 0, "%s", e.msg);
	assert_verifies(out);
	return out;
}

/*
** hasRealReaders: a view nobody reads keeps its producer a host output
** (as does a read in a function nobody calls); a read in code the
** consumer core runs (here in a helper it calls) demotes it; a model
** output (location type Output) that another core reads stays a host
** output, listed in the tensor map.
*/
START_TEST(test_fix_output_kind_reads)
{
	lk_report rep;
	lm_buf log = LM_BUF_INIT;
	lm_module *out = link_reads(LM_MT_DRAM, core1_reads(READ_NONE), &rep,
				    &log);
	ck_assert_int_eq(alloc_in(&out->functions[0], "h")->kind,
			 LM_TK_EXTERNAL_OUTPUT);
	ck_assert_int_eq(rep.n_demoted, 0);
	ck_assert_contains(lm_buf_cstr(&log), "fix_output_kind: 0 intermediate "
			   "outputs demoted ExternalOutput -> Internal; kept as "
			   "host outputs: 1 viewed but not read by another core "
			   "(h)\n");
	ck_assert_int_eq(rep.n_tensors, 3); /* x, h, y */
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	lm_buf_free(&log);

	/* read only in a function nobody calls: no reader */
	out = link_reads(LM_MT_DRAM, core1_reads(READ_UNCALLED), &rep, &log);
	ck_assert_int_eq(rep.n_demoted, 0);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	lm_buf_free(&log);

	/* read in a function the core calls */
	out = link_reads(LM_MT_DRAM, core1_reads(READ_CALLED), &rep, &log);
	ck_assert_int_eq(alloc_in(&out->functions[0], "h")->kind,
			 LM_TK_INTERNAL);
	ck_assert_int_eq(rep.n_demoted, 1);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	lm_buf_free(&log);

	/* a model output that core 1 reads stays a host output */
	out = link_reads(LM_MT_OUTPUT, core1_reads(READ_HERE), &rep, &log);
	ck_assert_int_eq(alloc_in(&out->functions[0], "h")->kind,
			 LM_TK_EXTERNAL_OUTPUT);
	ck_assert_int_eq(rep.n_demoted, 0);
	ck_assert_contains(lm_buf_cstr(&log), "kept as host outputs: 1 model "
			   "output (type Output) read by another core (h)");
	ck_assert_int_eq(rep.n_tensors, 3);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	lm_buf_free(&log);
	S_free();
}
END_TEST

/* ---- step 6: tensor map --------------------------------------------------- */

START_TEST(test_build_main_tensor_map)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	ck_assert_int_eq(rep.n_tensors, 2);
	lk_tensor_entry *x = &rep.tensors[0], *y = &rep.tensors[1];
	ck_assert_str_eq(x->layer_name, "x");
	ck_assert(!x->is_output);
	ck_assert_str_eq(x->sim_format, "HW");
	ck_assert_int_eq(x->n_shape, 2);
	ck_assert_int_eq(x->sim_shape[0], 128);
	ck_assert_int_eq(x->sim_shape[1], 64);
	ck_assert_str_eq(x->tf_file, "x.npy");
	ck_assert(x->sbuf_compatible);
	ck_assert(x->verified);
	ck_assert_int_eq(x->n_cores, 2);
	ck_assert_str_eq(y->layer_name, "y");
	ck_assert(y->is_output);
	ck_assert_int_eq(y->n_cores, 1);
	ck_assert_int_eq(y->cores[0], 1);
	char *j = lk_tensor_map_json(&rep);
	ck_assert_contains(j, "\"layer_name\":\t\"x\"");
	ck_assert_contains(j, "\"sim_format\":\t\"HW\"");
	ck_assert_contains(j, "\"tf_file\":\t\"y.npy\"");
	ck_assert_contains(j, "\"sbuf_compatible\":\ttrue");
	ck_assert_contains(j, "\"verified\":\ttrue");
	ck_assert(strstr(j, "\"h\"") == NULL); /* demoted: not a host output */
	free(j);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* The reader gives back what the writer wrote; a bad shape is refused. */
START_TEST(test_tensor_map_read)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	char *d = tu_tmpdir("lktmread");
	char *j = lk_tensor_map_json(&rep);
	char *p = tu_write(d, "tensor-map.json", j);
	lk_tensor_entry *t = NULL;
	int n = 0;
	lm_error e;
	ck_assert_msg(lk_tensor_map_read(p, &t, &n, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(n, rep.n_tensors);
	for (int i = 0; i < n; i++) {
		const lk_tensor_entry *a = &rep.tensors[i], *b = &t[i];
		ck_assert_str_eq(a->layer_name, b->layer_name);
		ck_assert_str_eq(a->sim_format, b->sim_format);
		ck_assert_str_eq(a->tf_file, b->tf_file);
		ck_assert_int_eq(a->is_output, b->is_output);
		ck_assert_int_eq(a->dtype, b->dtype);
		ck_assert_int_eq(a->sbuf_compatible, b->sbuf_compatible);
		ck_assert_int_eq(a->verified, b->verified);
		ck_assert_int_eq(a->n_shape, b->n_shape);
		for (int k = 0; k < a->n_shape; k++)
			ck_assert_int_eq(a->sim_shape[k], b->sim_shape[k]);
		ck_assert_int_eq(a->n_cores, b->n_cores);
		for (int k = 0; k < a->n_cores; k++)
			ck_assert_int_eq(a->cores[k], b->cores[k]);
	}
	lk_tensor_entries_free(t, n);
	free(p);
	p = tu_write(d, "bad.json", "{\"tensors\": [{\"layer_name\": \"x\", "
		     "\"sim_shape\": [2, -1]}]}");
	ck_assert_int_eq(lk_tensor_map_read(p, &t, &n, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "entry 'x': sim_shape must hold whole numbers");
	ck_assert_ptr_null(t);
	free(p);
	free(j);
	tu_rmtree(d);
	free(d);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- step 7: queues and semaphores ---------------------------------------- */

/* ---- the cores' own tensor maps (copyTensorMapForFunc) ------------------ */

/* A tensor-map entry of a [128, 64] float32 tensor (shape: its sim_shape;
** alloc: its "allocation" key, NULL: none). */
static const char *tme(const char *layer, const char *alloc, const char *kind,
		       const char *shape)
{
	return S("{\"layer_name\":\"%s\",%s\"kind\":\"%s\",\"dtype\":"
		 "\"float32\",\"sim_format\":\"HW\",\"sim_shape\":%s,"
		 "\"tf_file\":\"%s.npy\",\"sbuf_compatible\":false}", layer,
		 alloc ? S("\"allocation\":\"%s\",", alloc) : "", kind,
		 shape ? shape : "[128,64]", layer);
}

static lm_module *load_at(const char *path)
{
	lm_module *m = NULL;
	lm_error e;
	ck_assert_msg(lm_module_load(&m, path, &e) == 0, "%s", e.msg);
	return m;
}

/*
** The standard pair saved in d as nc0/def.json and nc1/def.json (one
** directory: both in d/), with tensor maps m0 and m1 beside them (NULL:
** none), linked. Returns lk_link's code.
*/
static unsigned maps_skip;

static int link_maps(const char *d, int one_dir, const char *m0,
		     const char *m1, lm_module **out, lk_report *rep,
		     lm_error *e)
{
	const char *n0 = one_dir ? "c0.json" : "nc0/def.json";
	const char *n1 = one_dir ? "c1.json" : "nc1/def.json";
	char *p0 = save(core0(), d, n0), *p1 = save(core1(), d, n1);
	lm_module *m[2];
	int rc;
	if (m0)
		free(tu_write(d, one_dir ? "tensor-map.json" :
			      "nc0/tensor-map.json",
			      S("{\"name\":\"t\",\"tensors\":[%s]}", m0)));
	if (m1 && !one_dir)
		free(tu_write(d, "nc1/tensor-map.json",
			      S("{\"name\":\"t\",\"tensors\":[%s]}", m1)));
	m[0] = load_at(p0);
	m[1] = load_at(p1);
	*out = NULL;
	rc = do_link(m, 2, maps_skip, out, rep, e);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	free(p0);
	free(p1);
	unlink(S("%s/nc0/tensor-map.json", d));
	unlink(S("%s/nc1/tensor-map.json", d));
	unlink(S("%s/tensor-map.json", d));
	return rc;
}

static const lk_tensor_entry *entry_of(const lk_report *r, const char *alloc)
{
	for (int i = 0; i < r->n_tensors; i++) {
		const lk_tensor_entry *t = &r->tensors[i];
		if (!strcmp(t->allocation ? t->allocation : t->layer_name, alloc))
			return t;
	}
	ck_abort_msg("no tensor-map entry binds %s", alloc);
	return NULL;
}

/* Link with the maps; must fail with msg (exit 2). */
static void maps_fail(const char *d, int one_dir, const char *m0,
		      const char *m1, const char *msg)
{
	lm_module *out;
	lk_report rep;
	lm_error e;
	ck_assert_int_eq(link_maps(d, one_dir, m0, m1, &out, &rep, &e),
			 LM_EINPUT);
	ck_assert_ptr_null(out);
	/* msg: "A /B" where the test's directory stands between A and /B */
	{
		const char *cut = strstr(msg, " /");
		if (cut) {
			ck_assert_contains(e.msg, S("%.*s", (int)(cut - msg) + 1,
						    msg));
			ck_assert_contains(e.msg, cut + 1);
		} else {
			ck_assert_contains(e.msg, msg);
		}
	}
	lk_report_free(&rep);
}

START_TEST(test_tensor_map_merge)
{
	char *d = tu_tmpdir("lktmmerge");
	const char *m0 = S("%s,%s", tme("input0", "x", "input", NULL),
			   tme("h", NULL, "output", NULL));
	const char *m1 = S("%s,%s", tme("input0", "x", "input", NULL),
			   tme("out", "y", "output", NULL));
	const lk_tensor_entry *t;
	lm_module *out;
	lk_report rep;
	lm_error e;
	char *j;

	/* both cores' layer names; h is demoted, so its entry goes */
	ck_assert_msg(link_maps(d, 0, m0, m1, &out, &rep, &e) == 0, "%s",
		      e.msg);
	ck_assert_int_eq(rep.n_core_maps, 2);
	ck_assert_int_eq(rep.n_tensors, 2);
	t = entry_of(&rep, "x");
	ck_assert_str_eq(t->layer_name, "input0");
	ck_assert_str_eq(t->tf_file, "input0.npy");
	ck_assert_int_eq(t->sbuf_compatible, 0);
	t = entry_of(&rep, "y");
	ck_assert_str_eq(t->layer_name, "out");
	j = lk_tensor_map_json(&rep);
	ck_assert_contains(j, "\"layer_name\":\t\"out\",\n\t\t\t\"allocation\":"
			   "\t\"y\"");
	{
		/* read back: the binding survives */
		char *p = tu_write(d, "linked-map.json", j);
		lk_tensor_entry *rt;
		int n;
		ck_assert_int_eq(lk_tensor_map_read(p, &rt, &n, &e), 0);
		ck_assert_str_eq(rt[1].allocation, "y");
		lk_tensor_entries_free(rt, n);
		unlink(p);
		free(p);
	}
	free(j);
	lm_module_free(out);
	lk_report_free(&rep);

	/* only core 1 has a map: x and y from it */
	ck_assert_msg(link_maps(d, 0, NULL, m1, &out, &rep, &e) == 0, "%s",
		      e.msg);
	ck_assert_int_eq(rep.n_core_maps, 1);
	ck_assert_str_eq(entry_of(&rep, "x")->layer_name, "input0");
	ck_assert_str_eq(entry_of(&rep, "y")->layer_name, "out");
	lm_module_free(out);
	lk_report_free(&rep);

	/* a map that contradicts its module */
	maps_fail(d, 0, S("%s,%s", tme("input0", "x", "input", "[128,32]"),
			  tme("h", NULL, "output", NULL)), NULL,
		  "nc0/tensor-map.json: entry 'input0' contradicts its module "
		  "/nc0/def.json: sim_shape [128,32] but 'x' has tensor_shape "
		  "[128,64]");
	maps_fail(d, 0, S("%s,%s", tme("input0", "x", "output", NULL),
			  tme("h", NULL, "output", NULL)), NULL,
		  "entry 'input0' contradicts its module /nc0/def.json: it is "
		  "an output but 'x' is an external input");
	maps_fail(d, 0, S("%s,%s,%s", tme("input0", "x", "input", NULL),
			  tme("h", NULL, "output", NULL),
			  tme("w", NULL, "input", NULL)), NULL,
		  "entry 'w' contradicts its module /nc0/def.json: allocation "
		  "'w' is not an external input or output there");
	maps_fail(d, 0, S("%s,%s", tme("input0", "x", "input", NULL),
			  tme("ghost", NULL, "output", NULL)), NULL,
		  "entry 'ghost' contradicts its module /nc0/def.json: no "
		  "allocation 'ghost'");
	maps_fail(d, 0, tme("input0", "x", "input", NULL), NULL,
		  "nc0/tensor-map.json: external output 'h' of /nc0/def.json "
		  "has no entry");
	maps_fail(d, 0, S("%s,%s,%s", tme("input0", "x", "input", NULL),
			  tme("again", "x", "input", NULL),
			  tme("h", NULL, "output", NULL)), NULL,
		  "allocation 'x' has two entries ('input0' and 'again')");
	maps_fail(d, 0, S("%s,%s", tme("h", "x", "input", NULL),
			  tme("h", NULL, "output", NULL)), NULL,
		  "layer 'h' appears twice");
	/* keys of the wrong type or value are refused, not taken for
	   defaults */
	{
		static const struct { const char *from, *to, *msg; } bad[] = {
			{ "\"dtype\":\"float32\"", "\"dtype\":\"float99\"",
			  "entry 'input0': unknown dtype 'float99'" },
			{ "\"dtype\":\"float32\"", "\"dtype\":7",
			  "entry 'input0': dtype must be a string" },
			{ "\"kind\":\"input\"", "\"kind\":\"bogus\"",
			  "entry 'input0': kind 'bogus' is not input or output" },
			{ "\"allocation\":\"x\"", "\"allocation\":5",
			  "entry 'input0': allocation must be a string" },
			{ "\"tf_file\":\"input0.npy\"", "\"tf_file\":7",
			  "entry 'input0': tf_file must be a string" },
			{ "\"tf_file\":\"input0.npy\"",
			  "\"tf_file\":\"../../etc/passwd\"",
			  "entry 'input0': tf_file '../../etc/passwd' is not one "
			  "plain file name" },
			{ "\"sim_format\":\"HW\"", "\"sim_format\":[1]",
			  "entry 'input0': sim_format must be a string" },
			{ "\"sbuf_compatible\":false",
			  "\"sbuf_compatible\":\"yes\"",
			  "entry 'input0': sbuf_compatible must be true or false" },
			{ "\"kind\":\"input\"",
			  "\"kind\":\"input\",\"layer_name\":\"other\"",
			  "entry 'input0': key 'layer_name' given twice" },
		};
		for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
			char *e0 = tu_replace_all(tme("input0", "x", "input",
						      NULL), bad[k].from,
						  bad[k].to);
			maps_fail(d, 0, S("%s,%s", e0, tme("h", NULL, "output",
							  NULL)), NULL,
				  bad[k].msg);
			free(e0);
		}
	}
	/* cores that disagree */
	maps_fail(d, 0, m0, S("%s,%s", tme("in_b", "x", "input", NULL),
			      tme("out", "y", "output", NULL)),
		  "nc1/tensor-map.json: external input 'x' is layer 'in_b' "
		  "here but 'input0' in core 0's tensor map");
	/* one layer name for two tensors of the link (h stays an output
	   when fix_output_kind is skipped) */
	maps_skip = LK_SKIP(LK_STEP_FIX_OUTPUT_KIND);
	maps_fail(d, 0, S("%s,%s", tme("input0", "x", "input", NULL),
			  tme("z", "h", "output", NULL)),
		  S("%s,%s", tme("input0", "x", "input", NULL),
		    tme("z", "y", "output", NULL)),
		  "tensor map: layer 'z' names both output 'h' and output 'y' "
		  "of the linked module");
	maps_skip = 0;
	/* two modules in one directory: whose map is it? */
	maps_fail(d, 1, m0, NULL, "tensor-map.json: one tensor map beside "
		  "the modules of core 0 and core 1");
	/* a symlink leaving the module's directory; a directory there */
	{
		char *outside = tu_write(d, "elsewhere.json", S("{\"tensors\""
					 ":[%s]}", m0));
		free(save(core0(), d, "nc0/def.json"));
		ck_assert_int_eq(symlink(outside, S("%s/nc0/tensor-map.json",
						    d)), 0);
		maps_fail(d, 0, NULL, NULL, "outside the module's directory");
		ck_assert_int_eq(mkdir(S("%s/nc0/tensor-map.json", d), 0755), 0);
		maps_fail(d, 0, NULL, NULL, "nc0/tensor-map.json");
		rmdir(S("%s/nc0/tensor-map.json", d));
		free(outside);
	}
	tu_rmtree(d);
	free(d);
	S_free();
}
END_TEST

START_TEST(test_init_queues)
{
	lk_report rep;
	lm_module *out = link2(0, &rep);
	/* semaphores: sum of the cores' (2 + 2), renamed nc<c>. */
	ck_assert_int_eq(out->n_semaphores, 4);
	ck_assert_str_eq(out->semaphores[0].name, "nc0.s");
	ck_assert_str_eq(out->semaphores[1].name, "nc0.s2");
	ck_assert_int_eq(out->semaphores[1].init, 3);
	ck_assert_str_eq(out->semaphores[3].name, "nc1.s2");
	/* one queue per name; instances nc<c>.<instance> */
	ck_assert_int_eq(out->n_queues, 2);
	lm_queue *q = lm_module_find_queue(out, "q");
	ck_assert_int_eq(q->n_instances, 4);
	ck_assert_str_eq(q->instances[0].name, "nc0.qi");
	ck_assert_str_eq(q->instances[0].semaphore, "nc0.s");
	ck_assert_str_eq(q->instances[3].name, "nc1.qj");
	ck_assert_str_eq(q->instances[3].semaphore, "nc1.s2");
	ck_assert_str_eq(lm_module_find_queue(out, "q2")->instances[1].name,
			 "nc1.q2i");
	/* waits and signals follow */
	ck_assert_str_eq(inst(fn(out, "nc0"), "nc0.st")->wait[0].semaphore,
			 "nc0.s");
	ck_assert_str_eq(inst(fn(out, "nc1"), "nc1.st")->wait[0].semaphore,
			 "nc1.s");
	ck_assert_str_eq(inst(fn(out, "nc1"), "nc1.st")->update[0].semaphore,
			 "nc1.s2");
	ck_assert_int_eq(rep.n_queues_copied, 4);
	ck_assert_int_eq(rep.n_new_queues, 2);
	ck_assert_int_eq(rep.n_instances_existing, 3);
	ck_assert_int_eq(rep.n_semaphores, 4);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	/* skipped: folded by name, shared */
	out = link2(LK_SKIP(LK_STEP_INIT_QUEUES), &rep);
	ck_assert_int_eq(out->n_semaphores, 2);
	ck_assert_str_eq(out->semaphores[0].name, "s");
	ck_assert_int_eq(lm_module_find_queue(out, "q")->n_instances, 2);
	ck_assert_str_eq(inst(fn(out, "nc1"), "nc1.st")->wait[0].semaphore, "s");
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- step 8: dispatcher ---------------------------------------------------- */

START_TEST(test_add_fn_call)
{
	lm_module *out = NULL, *rev[2];
	lk_report rep;
	lm_error e;
	load2(core0(), core1());
	rev[0] = mods2[1]; /* given in reverse: linked in core order */
	rev[1] = mods2[0];
	ck_assert_int_eq(do_link(rev, 2, 0, &out, &rep, &e), 0);
	lm_function *m = &out->functions[0];
	ck_assert_int_eq(m->n_blocks, 1);
	ck_assert_str_eq(m->blocks[0].name, "dispatcher");
	ck_assert_int_eq(m->blocks[0].n_insts, 2);
	ck_assert_int_eq(m->blocks[0].insts[0].op, LM_OP_CALL);
	ck_assert_str_eq(m->blocks[0].insts[0].name, "call_def_0_instance_0");
	ck_assert_str_eq(m->blocks[0].insts[0].target, "nc0");
	ck_assert_str_eq(m->blocks[0].insts[1].name, "call_def_1_instance_0");
	ck_assert_str_eq(m->blocks[0].insts[1].target, "nc1");
	ck_assert_str_eq(out->functions[1].name, "nc0");
	ck_assert_int_eq(rep.n_calls, 2);
	ck_assert_int_eq(rep.cores[0], 0);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- step 10: renumber core barriers ------------------------------------- */

START_TEST(test_renumber_core_barriers)
{
	/* renumber:false barriers hold ids 0 and 2: the counter skips them */
	lm_builder *b0 = core0();
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	lm_b_set_renumber(bar(b0, "keep", 0, "k"), 0);
	lm_b_set_renumber(bar(b0, "keep2", 2, "k2"), 0);
	load2(b0, core1());
	ck_assert_int_eq(do_link(mods2, 2, 0, &out, &rep, &e), 0);
	lm_function *n0 = fn(out, "nc0"), *n1 = fn(out, "nc1");
	ck_assert_int_eq(inst(n0, "nc0.bar")->barrier_id, 1);
	ck_assert_int_eq(inst(n0, "keep")->barrier_id, 0);
	ck_assert_int_eq(inst(n0, "keep2")->barrier_id, 2);
	ck_assert_int_eq(inst(n0, "cb_return_call_def_0_instance_0")->barrier_id, 3);
	ck_assert_int_eq(inst(n1, "nc1.bar")->barrier_id, 4);
	ck_assert_int_eq(inst(n1, "cb_return_call_def_1_instance_0")->barrier_id, 5);
	ck_assert_int_eq(rep.n_renumbered, 4);
	ck_assert_int_eq(rep.n_kept_ids, 2);
	assert_verifies(out);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* The base offset: lk_options.barrier_base, and the pre-merge overload
** over still separate modules. */
START_TEST(test_renumber_core_barriers_base)
{
	lm_builder *b0 = core0();
	lm_module *out = NULL;
	lk_report rep;
	lk_options o;
	lm_buf log = LM_BUF_INIT;
	lm_error e;
	int64_t next = 0;
	lm_b_set_renumber(bar(b0, "keep", 101, "k"), 0);
	load2(b0, core1());
	memset(&o, 0, sizeof o);
	o.barrier_base = 100;
	o.log = &log;
	ck_assert_msg(lk_link(mods2, 2, &o, &out, &rep, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(inst(fn(out, "nc0"), "nc0.bar")->barrier_id, 100);
	ck_assert_int_eq(inst(fn(out, "nc0"), "keep")->barrier_id, 101);
	ck_assert_int_eq(inst(fn(out, "nc0"),
			      "cb_return_call_def_0_instance_0")->barrier_id, 102);
	ck_assert_int_eq(inst(fn(out, "nc1"),
			      "cb_return_call_def_1_instance_0")->barrier_id, 104);
	ck_assert_contains(lm_buf_cstr(&log), "renumber_core_barriers: 4 "
			   "barriers renumbered (ids 100..104), 1 id kept");
	assert_verifies(out);
	lm_buf_free(&log);
	lm_module_free(out);
	lk_report_free(&rep);
	o.log = NULL;
	/* the last id must fit 32 bits */
	o.barrier_base = INT64_C(0xffffffff) - 2;
	ck_assert_int_eq(lk_link(mods2, 2, &o, &out, &rep, &e), LM_EINPUT);
	ck_assert_str_eq(e.msg, "barrier id 4294967296 does not fit the "
			 "barrier's 32 bits (4 barriers renumbered from base "
			 "4294967293)");
	ck_assert_ptr_null(out);
	lk_report_free(&rep);

	/* pre-merge: one counter over the modules, in the order given; the
	   ids kept by any of them skipped */
	ck_assert_msg(lk_renumber_core_barriers(mods2, 2, 100, &next, &e) == 0,
		      "%s", e.msg);
	ck_assert_int_eq(inst(&mods2[0]->functions[0], "bar")->barrier_id, 100);
	ck_assert_int_eq(inst(&mods2[0]->functions[0], "keep")->barrier_id, 101);
	ck_assert_int_eq(inst(&mods2[1]->functions[0], "bar")->barrier_id, 102);
	ck_assert_int_eq(next, 103);
	ck_assert_int_eq(lk_renumber_core_barriers(mods2, 2, -1, NULL, &e),
			 LM_EINPUT);
	ck_assert_str_eq(e.msg, "barrier base -1 is outside [0, 4294967295]");
	free2();
	S_free();
}
END_TEST

/* ---- step 11: barrier order ---------------------------------------------- */

/* A core whose sg0 (SB t) meets the barriers of groups A (ba, id 1) and B
** (bb, id 2) in the order `order` names them ("AB", "BA", "A"). */
static void met(lm_builder *b, const char *order)
{
	for (const char *g = order; *g; g++)
		bar(b, *g == 'A' ? "ba" : "bb", *g == 'A' ? 1 : 2,
		    *g == 'A' ? "A" : "B");
}

static lm_builder *barriers(int core, const char *order)
{
	lm_builder *b = mod(core, "gen3");
	func(b, "sg0");
	sb(b, "t", 0);
	met(b, order);
	return b;
}

/* Core 0: sg0 calls f1 and then meets B; f1 .. f<d-1> call the next; f<d>
** meets A and calls leaf twice. */
static lm_builder *deep_calls(int d)
{
	lm_builder *b = mod(0, "gen3");
	func(b, "sg0");
	sb(b, "t", 0);
	call(b, "c0", "f1");
	met(b, "B");
	for (int k = 1; k <= d; k++) {
		func(b, S("f%d", k));
		if (k < d) {
			call(b, S("c%d", k), S("f%d", k + 1));
		} else {
			met(b, "A");
			call(b, "leaf1", "leaf");
			call(b, "leaf2", "leaf");
		}
	}
	func(b, "leaf");
	return b;
}

START_TEST(test_check_barrier_order)
{
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	load2(barriers(0, "AB"), barriers(1, "AB"));
	ck_assert_int_eq(do_link(mods2, 2, 0, &out, &rep, &e), 0);
	ck_assert_int_eq(rep.n_groups_checked, 3); /* A, B, completion */
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	link2_fails(barriers(0, "AB"), barriers(1, "BA"), "module: barrier "
		    "order mismatch: core 0 reaches group 'A' before 'B' but "
		    "core 1 reaches 'B' before 'A' (static deadlock)");
	/* skipped: the mismatch is not noticed */
	load2(barriers(0, "AB"), barriers(1, "BA"));
	ck_assert_int_eq(do_link(mods2, 2, LK_SKIP(LK_STEP_CHECK_BARRIER_ORDER),
				 &out, &rep, &e), 0);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/*
** Calls are followed at any depth (here 12 nested functions, the barrier
** at the bottom): core 0 reaches A (deep in f12, which calls a leaf
** twice) before B. (A call cycle is refused by the verifier first.)
*/
START_TEST(test_check_barrier_order_calls)
{
	enum { D = 12 };
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	load2(deep_calls(D), barriers(1, "AB"));
	ck_assert_int_eq(do_link(mods2, 2, 0, &out, &rep, &e), 0);
	ck_assert_int_eq(rep.n_groups_checked, 3);
	lm_module_free(out);
	lk_report_free(&rep);
	free2();
	link2_fails(deep_calls(D), barriers(1, "BA"), "module: barrier order "
		    "mismatch: core 0 reaches group 'A' before 'B' but core 1 "
		    "reaches 'B' before 'A'");
	S_free();
}
END_TEST

/*
** Calls that fan out (f0 calls f1 twice, f1 calls f2 twice, ... 40 deep,
** no barriers): 2^40 paths, but each helper is walked once, so the link
** finishes at once. A chain that does meet barriers that often is cut and
** said so in the -v line.
*/
START_TEST(test_check_barrier_order_fanout)
{
	enum { D = 40 };
	lm_buf log = LM_BUF_INIT;
	lm_module *out = NULL;
	lk_report rep;
	lk_options o;
	lm_error e;
	for (int with_bar = 0; with_bar < 2; with_bar++) {
		lm_builder *b0 = mod(0, "gen3");
		func(b0, "sg0");
		sb(b0, "t", 0);
		call(b0, "c0", "f1");
		met(b0, "A");
		for (int k = 1; k <= D; k++) {
			func(b0, S("f%d", k));
			if (k < D) {
				call(b0, S("c%da", k), S("f%d", k + 1));
				call(b0, S("c%db", k), S("f%d", k + 1));
			} else if (with_bar) {
				bar(b0, "deep", 2, "B");
			} else {
				op(b0, LM_OP_NOOP, LM_ENG_SP, "n");
			}
		}
		load2(b0, barriers(1, "A"));
		memset(&o, 0, sizeof o);
		o.log = &log;
		ck_assert_msg(lk_link(mods2, 2, &o, &out, &rep, &e) == 0, "%s",
			      e.msg);
		if (with_bar)
			ck_assert_contains(lm_buf_cstr(&log), "the rest not "
					   "followed");
		else
			ck_assert_ptr_null(strstr(lm_buf_cstr(&log),
						  "not followed"));
		lm_module_free(out);
		lk_report_free(&rep);
		free2();
		lm_buf_free(&log);
	}
	S_free();
}
END_TEST

/* A NULL dependency (only reachable with trust_inputs) is kept, not
** renamed: the link does not crash; the verifier reports it. */
START_TEST(test_null_dependency_trusted)
{
	lm_module *out = NULL;
	lk_report rep;
	lk_options o;
	lm_error e;
	load2(core0(), core1());
	lm_inst *st = inst(&mods2[0]->functions[0], "st");
	ck_assert_int_eq(st->n_deps, 1);
	free(st->deps[0]);
	st->deps[0] = NULL;
	memset(&o, 0, sizeof o);
	o.trust_inputs = 1;
	ck_assert_int_ne(lk_link(mods2, 2, &o, &out, &rep, &e), 0);
	ck_assert_ptr_null(out);
	ck_assert_contains(e.msg, "empty dependency name");
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- step 12: matmul report ----------------------------------------------- */

START_TEST(test_mmt)
{
	/* K=128 (stationary partitions), M=64, N=512 fp32 moving: passes 4 */
	static const lm_appair st[2] = { { 64, 128 }, { 1, 64 } };
	static const lm_appair mv[2] = { { 512, 128 }, { 1, 512 } };
	static const lm_appair ps[2] = { { 512, 64 }, { 1, 512 } };
	int64_t bsh[2] = { 128, 512 }, bdims[2] = { 128, 2048 };
	int64_t psh[2] = { 64, 512 }, pdims[2] = { 64, 2048 };
	lm_builder *bl = mod(-1, "gen3");
	func(bl, "sg0");
	sb(bl, "a", 0);
	/* b and p: locations not marked allocated */
	lm_b_memloc(bl, lm_b_alloc(bl, "b", LM_TK_INTERNAL, LM_DT_FLOAT32, bsh,
				   2), LM_MT_SB, 4096, bdims, 2, 0);
	lm_b_memloc(bl, lm_b_alloc(bl, "p", LM_TK_INTERNAL, LM_DT_FLOAT32, psh,
				   2), LM_MT_PSUM, 0, pdims, 2, 0);
	for (int k = 0; k < 2; k++) {
		lm_inst *in = op(bl, LM_OP_MATMULT, LM_ENG_PE, k ? "mm2" : "mm");
		lm_b_ap(bl, in, LM_B_IN, "a", LM_DT_FLOAT32, 0, 0, st, 2);
		lm_b_ap(bl, in, LM_B_IN, "b", LM_DT_FLOAT32, 0, 0, mv, 2);
		lm_b_ap(bl, in, LM_B_OUT, "p", LM_DT_FLOAT32, 0, 0, ps, 2);
		lm_b_set_matmult(in, !k, 0, 0);
	}
	lm_module *m = done(bl, "mm.json");
	for (int k = 1; k < 3; k++)
		m->functions[0].allocs[k].memlocs[0].allocated = 0;
	lk_mmt_report r;
	lm_error e;
	ck_assert_int_eq(lk_matmul_report(m, &r, &e), 0);
	ck_assert_int_eq(r.n_rows, 1);
	ck_assert_int_eq(r.rows[0].matmuls, 2);
	ck_assert_int_eq(r.rows[0].macs, 2LL * 128 * 64 * 512);
	ck_assert_int_eq(r.rows[0].pe_cycles, 2 * (512 * 4 + 64));
	ck_assert_double_eq_tol(lk_mmt_fill(&r.rows[0]),
				(128.0 * 64) / (128.0 * 128 * 4), 1e-12);
	ck_assert_int_eq(r.total.matmuls, 2);
	lm_buf b = LM_BUF_INIT;
	lk_mmt_format_table(&r, &b);
	ck_assert_contains(lm_buf_cstr(&b), "array fill");
	ck_assert_contains(lm_buf_cstr(&b), "12.5%");
	lm_buf_free(&b);
	char *j = lk_mmt_json(&r);
	ck_assert_contains(j, "\"macs\":\t8388608");
	ck_assert_contains(j, "\"array_fill\":\t0.125");
	free(j);
	lk_mmt_report_free(&r);
	/* the post-link report of the same module linked (N = 1) */
	lm_module *out = NULL;
	lk_report rep;
	ck_assert_int_eq(do_link(&m, 1, 0, &out, &rep, &e), 0);
	ck_assert_int_eq(rep.mmt.total.matmuls, 2);
	ck_assert_str_eq(rep.mmt.rows[1].function, "nc0");
	ck_assert_int_eq(rep.mmt.rows[1].core, 0);
	lm_module_free(out);
	lk_report_free(&rep);
	lm_module_free(m);
	S_free();
}
END_TEST

/* ---- N = 1 ----------------------------------------------------------------- */

START_TEST(test_single_core)
{
	lm_builder *b = mod(-1, "gen3");
	func(b, "sg0");
	dram(b, "x", LM_TK_EXTERNAL_INPUT, 0);
	sb(b, "t", 0);
	dma(b, "ld", "x", "t", "q");
	lm_module *m = done(b, "one.json");
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	ck_assert_int_eq(do_link(&m, 1, 0, &out, &rep, &e), 0);
	assert_verifies(out);
	ck_assert_int_eq(out->n_functions, 2);
	lm_block *d = &out->functions[0].blocks[0];
	ck_assert_int_eq(d->n_insts, 1);
	ck_assert_str_eq(d->insts[0].name, "call_def_0_instance_0");
	ck_assert_str_eq(d->insts[0].target, "nc0");
	ck_assert_int_eq(fn(out, "nc0")->neuron_core_id, 0);
	ck_assert(has_inst(fn(out, "nc0"), "ld")); /* no collision: kept */
	ck_assert_str_eq(out->semaphores[0].name, "nc0.s");
	ck_assert_str_eq(inst(fn(out, "nc0"), "I-SQI-q-call_def_0_instance_0")
			 ->instance_name, "nc0.qi");
	lm_inst *cb = inst(fn(out, "nc0"), "cb_return_call_def_0_instance_0");
	ck_assert_int_eq(cb->n_cores, 1);
	ck_assert_int_eq(rep.n_cores, 1);
	lm_module_free(out);
	lk_report_free(&rep);
	lm_module_free(m);
	S_free();
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

/* A module of core (< 0: none) and arch whose sg0 holds SB t alone. */
static lm_builder *bare(int core, const char *arch)
{
	lm_builder *b = mod(core, arch);
	func(b, "sg0");
	sb(b, "t", 0);
	return b;
}

/* The first memory location of allocation name of the module. */
static lm_memloc *loc_of(lm_module *m, const char *name)
{
	return &lm_module_find_alloc(m, name, NULL)->memlocs[0];
}

START_TEST(test_error_core_ids)
{
	link2_fails(core0(), bare(-1, "gen3"), "c1.json: module: "
		    "neuron_core_id is missing (required to link 2 modules)");
	link2_fails(core0(), core0(), "c1.json: module: duplicate "
		    "neuron_core_id 0 (also in c0.json)");
	link2_fails(core0(), bare(1, "gen2"), "c1.json: module: arch 'gen2' "
		    "differs from 'gen3' of c0.json");
	link2_fails(core0(), bare(70, "gen3"), "c1.json: module: "
		    "neuron_core_id 70 is out of range [0, 64)");
	lm_module *out = NULL;
	lm_error e;
	ck_assert_int_eq(lk_link(NULL, 0, NULL, &out, NULL, &e), LM_EINPUT);
	ck_assert_str_eq(e.msg, "no modules to link");
	S_free();
}
END_TEST

START_TEST(test_error_remote)
{
	link2_fails(core0(), core1_viewing("h", 5), "c1.json: function "
		    "sg0/allocation h_in: remote_local_target producer 'h' not "
		    "found: core 5 is not linked");
	link2_fails(core0(), core1_viewing("nope", 0), "c1.json: function "
		    "sg0/allocation h_in: remote_local_target producer 'nope' "
		    "not found in core 0");
	/* address identity: the view sits at 65536, move the producer */
	load2(core0(), core1());
	loc_of(mods2[0], "h")->addr = 65540;
	link_fails("c1.json: function sg0/allocation h_in: address identity "
		   "violated: view 'h_in' (core 1) is at addr 65536 but "
		   "producer 'h' (core 0) is at addr 65540");
	S_free();
}
END_TEST

START_TEST(test_error_shared_input)
{
	lm_alloc *x;
	load2(core0(), core1());
	lm_module_find_alloc(mods2[1], "x", NULL)->dtype = LM_DT_FLOAT16;
	link_fails("c1.json: function sg0/allocation x: external input 'x' is "
		   "declared by core 0 and core 1 with different dtype "
		   "(float32 vs float16)");
	load2(core0(), core1());
	x = lm_module_find_alloc(mods2[1], "x", NULL);
	x->tensor_shape[0] = 64;
	x->tensor_shape[1] = 128;
	link_fails("c1.json: function sg0/allocation x: external input 'x' is "
		   "declared by core 0 and core 1 with different tensor_shape "
		   "([128,64] vs [64,128])");
	load2(core0(), core1());
	loc_of(mods2[1], "x")->addr = 8;
	link_fails("c1.json: function sg0/allocation x: external input 'x' is "
		   "declared by core 0 and core 1 with different address (0 vs "
		   "8)");
	/* an external output declared twice */
	lm_builder *y0 = mod(0, "gen3"), *y1 = mod(1, "gen3");
	func(y0, "sg0");
	dram(y0, "y", LM_TK_EXTERNAL_OUTPUT, 0);
	func(y1, "sg0");
	dram(y1, "y", LM_TK_EXTERNAL_OUTPUT, 0);
	link2_fails(y0, y1, "c1.json: function sg0/allocation y: external "
		    "output 'y' is also declared by core 0");
	S_free();
}
END_TEST

START_TEST(test_error_already_linked)
{
	lk_report rep;
	lm_module *out = link2(0, &rep), *again = NULL;
	lm_error e;
	free2();
	ck_assert_int_ne(lk_link(&out, 1, NULL, &again, NULL, &e), 0);
	ck_assert_contains(e.msg, "function main: module is already linked "
			   "(kind dispatcher)");
	lm_module_free(out);
	lk_report_free(&rep);
	S_free();
}
END_TEST

START_TEST(test_parse_skip)
{
	unsigned m = 0;
	lm_error e;
	ck_assert_int_eq(lk_parse_skip("init_queues,verify", &m, &e), 0);
	ck_assert_uint_eq(m, LK_SKIP(LK_STEP_INIT_QUEUES) | LK_SKIP(LK_STEP_VERIFY));
	m = 0;
	ck_assert_int_eq(lk_parse_skip("run_function_passes", &m, &e), 0);
	ck_assert_uint_eq(m, LK_SKIP(LK_STEP_FPASS_INSERT_RETURNS) |
			  LK_SKIP(LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES));
	ck_assert_int_eq(lk_parse_skip("frob", &m, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "unknown step 'frob' (steps: "
			   "copy_modules_as_functions, copy_allocs,");
	for (int s = 0; s < LK_N_STEPS; s++) {
		m = 0;
		ck_assert_int_eq(lk_parse_skip(lk_step_name(s), &m, &e), 0);
		ck_assert_uint_eq(m, LK_SKIP(s));
	}
	ck_assert_ptr_null(lk_step_name(LK_N_STEPS));
}
END_TEST

/*
** Every step can be switched off on its own: it does not run, the others
** do, the inputs stay untouched, and a step that shapes the module makes a
** different module (the checker's teeth need that).
*/
START_TEST(test_skip_each_step)
{
	lk_report full_rep;
	lm_module *full = link2(0, &full_rep);
	char *full_txt = NULL;
	size_t len;
	lm_error e;
	ck_assert_int_eq(lm_module_to_json(full, 0, &full_txt, &len, &e), 0);
	free2();
	for (int s = 0; s < LK_N_STEPS; s++) {
		lm_module *out = NULL;
		lk_report rep;
		char *txt = NULL;
		load2(core0(), core1());
		int rc = do_link(mods2, 2, LK_SKIP(s), &out, &rep, &e);
		/* without verify the module always comes back */
		if (rc != 0) {
			ck_assert_int_eq(rc, LM_ECHECK);
			ck_assert_contains(e.msg, "linked module fails the "
					   "verifier");
			lk_report_free(&rep);
			free2();
			load2(core0(), core1());
			rc = do_link(mods2, 2, LK_SKIP(s) |
				     LK_SKIP(LK_STEP_VERIFY), &out, &rep, &e);
		}
		ck_assert_msg(rc == 0, "skip %s: %s", lk_step_name(s), e.msg);
		ck_assert_msg(!(rep.ran & LK_SKIP(s)), "%s ran", lk_step_name(s));
		ck_assert_int_eq(lm_module_to_json(out, 0, &txt, &len, &e), 0);
		int changes = s != LK_STEP_CHECK_BARRIER_ORDER &&
			s != LK_STEP_POST_LINK_MMT_REPORT &&
			s != LK_STEP_VERIFY &&
			s != LK_STEP_BUILD_MAIN_TENSOR_MAP &&
			s != LK_STEP_SETUP_LINK_DIR && /* no file fields here */
			/* no netlist: nothing to bind */
			s != LK_STEP_MOVE_MODULES_AS_FUNCTIONS &&
			/* no register here (tests/test_diff.c: generated
			   sets with registers) */
			s != LK_STEP_REMAP_REGISTERS;
		if (changes)
			ck_assert_msg(strcmp(txt, full_txt) != 0,
				      "skipping %s changes nothing",
				      lk_step_name(s));
		else
			ck_assert_str_eq(txt, full_txt);
		free(txt);
		lm_module_free(out);
		lk_report_free(&rep);
		free2();
	}
	free(full_txt);
	lm_module_free(full);
	lk_report_free(&full_rep);
	S_free();
}
END_TEST

/* ---- dry run and -v ------------------------------------------------------- */

START_TEST(test_dry_run_and_log)
{
	lm_module *out = (lm_module *)1;
	lk_report rep;
	lk_options o;
	lm_buf log = LM_BUF_INIT;
	lm_error e;
	memset(&o, 0, sizeof o);
	o.dry_run = 1;
	o.log = &log;
	load2(core0(), core1());
	ck_assert_int_eq(lk_link(mods2, 2, &o, &out, &rep, &e), 0);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rep.n_aliases, 1);
	const char *l = lm_buf_cstr(&log);
	for (int s = 0; s < LK_N_STEPS; s++)
		ck_assert_contains(l, S("%s: ", lk_step_name(s)));
	ck_assert_contains(l, "copy_allocs: 8 allocations copied; collisions "
			   "resolved per core");
	ck_assert_contains(l, "remote_local_target views resolved (inpMap): 1");
	ck_assert_contains(l, "init_queues: 4 queues copied; 2 new queues; 3 "
			   "instances added to an existing queue; 4 semaphores");
	ck_assert_contains(l, "build_main_aliases: 1 alias (producer-out -> "
			   "consumer-in): h (core 0) -> h_in (core 1)");
	ck_assert_contains(l, "renumber_core_barriers: 4 barriers renumbered");
	/* the compiler's own diagnostics, one line per event */
	ck_assert(strncmp(l, "bir_linker cwd: /", 17) == 0);
	ck_assert_contains(l, "\nNum Module Definitions 2\n"
			   "Module Instance call_def_0_instance_0 DefID 0 "
			   "(c0.json)\nModule Instance call_def_1_instance_0 "
			   "DefID 1 (c1.json)\n");
	ck_assert_contains(l, "initQueues: module t_defId_1 getNumSemaphores 2\n"
			   "initQueues: copying queue q from module t_defId_1\n"
			   "initQueues: adding new qInst nc1.qi to existing q\n"
			   "initQueues: adding new qInst nc1.qj to existing q\n");
	ck_assert_contains(l, "initQueues: adding new qInst nc0.qi to new dmaQ "
			   "q\n");
	ck_assert_contains(l, "initQueues copied 4 queues, 4 semaphores\n");
	lm_buf_free(&log);
	lk_report_free(&rep);
	/* a failing check fails the dry run too */
	free2();
	o.log = NULL;
	load2(barriers(0, "AB"), barriers(1, "BA"));
	ck_assert_int_ne(lk_link(mods2, 2, &o, &out, &rep, &e), 0);
	ck_assert_contains(e.msg, "barrier order mismatch");
	lk_report_free(&rep);
	free2();
	S_free();
}
END_TEST

/* ---- handoff2 end to end -------------------------------------------------- */

static int load_dir(const char *dir, lm_module ***mods)
{
	char **paths = NULL;
	int n = 0;
	lm_error e;
	ck_assert_msg(lm_expand_module_arg(dir, &paths, &n, &e) == 0, "%s", e.msg);
	*mods = lm_xcalloc((size_t)n, sizeof **mods);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(lm_module_load(&(*mods)[i], paths[i], &e) == 0,
			      "%s", e.msg);
		free(paths[i]);
	}
	free(paths);
	return n;
}

static void free_mods(lm_module **mods, int n)
{
	for (int i = 0; i < n; i++)
		lm_module_free(mods[i]);
	free(mods);
}

/* The cores are cloned by parallel workers: 1, 2, 3 or 8 of them give the
** same module, byte for byte (examples/mlp4: 4 cores). */
START_TEST(test_threads_same_result)
{
	char *src = tu_srcpath("examples/mlp4");
	lm_module **mods;
	char *ref = NULL;
	int n = load_dir(src, &mods);
	ck_assert_int_eq(n, 4);
	for (int t = 1; t <= 8; t++) {
		lk_options o;
		lk_report rep;
		lm_module *out = NULL;
		lm_error e;
		char *txt;
		size_t len;
		if (t > 3 && t < 8)
			continue;
		memset(&o, 0, sizeof o);
		o.threads = t;
		ck_assert_msg(lk_link(mods, n, &o, &out, &rep, &e) == 0, "%s",
			      e.msg);
		ck_assert_int_eq(rep.copy_workers, t < n ? t : n);
		ck_assert_int_eq(lm_module_to_json(out, 0, &txt, &len, &e), 0);
		if (!ref)
			ref = txt;
		else {
			ck_assert_msg(strcmp(ref, txt) == 0, "%d workers differ",
				      t);
			free(txt);
		}
		lm_module_free(out);
		lk_report_free(&rep);
	}
	free(ref);
	for (int i = 0; i < n; i++)
		lm_module_free(mods[i]);
	free(mods);
	free(src);
}
END_TEST

START_TEST(test_handoff2)
{
	char *src = tu_srcpath("examples/handoff2");
	lm_module **mods, *out = NULL;
	lk_report rep;
	lm_error e;
	int n = load_dir(src, &mods);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(do_link(mods, n, 0, &out, &rep, &e), 0);
	assert_verifies(out);
	ck_assert_str_eq(out->name, "handoff2/sgLnk");
	/* shared names renamed per core */
	ck_assert(has_alloc(fn(out, "nc0"), "nc0.t0"));
	ck_assert(has_alloc(fn(out, "nc1"), "nc1.t2"));
	ck_assert(has_alloc(fn(out, "nc0"), "nc0.wc"));
	ck_assert(has_alloc(fn(out, "nc1"), "nc1.wc"));
	ck_assert_str_eq(out->semaphores[0].name, "nc0.s_dma");
	ck_assert_str_eq(out->semaphores[1].name, "nc1.s_dma");
	ck_assert_str_eq(out->queues[0].name, "qSyncIO0");
	ck_assert_str_eq(out->queues[0].instances[1].name, "nc1.qSyncIO0");
	/* h_in is a view of core 0's h */
	ck_assert_str_eq(alloc_in(fn(out, "nc1"), "h_in")->alias_of, "h");
	ck_assert_str_eq(inst(fn(out, "nc1"), "ld_h")->ins[0].memsetref, "h");
	ck_assert_str_eq(out->aliases[0].producer, "h");
	ck_assert_int_eq(alloc_in(&out->functions[0], "h")->kind, LM_TK_INTERNAL);
	/* the two barriers of group handoff_h still meet */
	ck_assert_str_eq(inst(fn(out, "nc0"), "nc0.bar_h")->group, "handoff_h");
	ck_assert_str_eq(inst(fn(out, "nc1"), "nc1.bar_h")->group, "handoff_h");
	ck_assert_int_ne(inst(fn(out, "nc0"), "nc0.bar_h")->barrier_id,
			 inst(fn(out, "nc1"), "nc1.bar_h")->barrier_id);
	/* the const files: renamed on collision, fields rewritten */
	ck_assert_int_eq(rep.n_artifacts, 2);
	ck_assert_str_eq(rep.artifacts[0].dst, "nc0.wc.npy");
	ck_assert_str_eq(rep.artifacts[1].dst, "nc1.wc.npy");
	ck_assert(!rep.artifacts[0].copy);
	ck_assert_contains(rep.artifacts[1].src, "nc1/sg0/wc.npy");
	ck_assert_str_eq(alloc_in(fn(out, "nc1"), "nc1.wc")->file, "nc1.wc.npy");
	lm_module_free(out);
	lk_report_free(&rep);
	free_mods(mods, n);
	free(src);
}
END_TEST

/* ---- step 9: the link directory ------------------------------------------- */

/* A core module directory with a const file, a host file and a kernel. */
static void make_core_dir(const char *root, int c, const char *wfile,
			  const char *hostfile)
{
	const char *d = S("%s/nc%d/sg0", root, c);
	lm_builder *b = mod(c, "gen3");
	func(b, "sg0");
	lm_b_set_file(dram(b, S("w%d", c), LM_TK_CONST, 0), wfile);
	lm_b_set_file(dram(b, "hostin", LM_TK_INTERNAL, 32768), hostfile);
	sb(b, "t", 0);
	dma(b, "ld", S("w%d", c), "t", "q");
	char *p = save(b, d, "def.json");
	free(p);
	p = tu_write(d, wfile, S("weights of core %d", c));
	free(p);
	p = tu_write(d, hostfile, S("host data of core %d", c));
	free(p);
}

static int is_link(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static int is_file(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

START_TEST(test_setup_link_dir)
{
	char *root = tu_tmpdir("lkdir");
	const char *mdir = S("%s/model", root), *od = S("%s/out", root);
	lm_module **mods, *out = NULL;
	lk_report rep;
	lk_options o;
	lm_error e;
	make_core_dir(mdir, 0, "sub/w.npy", "host.bin");
	make_core_dir(mdir, 1, "sub/w.npy", "host.bin");
	int n = load_dir(mdir, &mods);
	memset(&o, 0, sizeof o);
	o.out_dir = od;
	ck_assert_int_eq(lk_link(mods, n, &o, &out, &rep, &e), 0);
	assert_verifies(out);
	/* Const -> symlink, other file -> copy; same path, different files:
	   renamed nc<c>. */
	ck_assert_int_eq(rep.n_artifacts, 4);
	ck_assert_str_eq(rep.artifacts[0].dst, "sub/nc0.w.npy");
	ck_assert(!rep.artifacts[0].copy);
	ck_assert_str_eq(rep.artifacts[1].dst, "nc0.host.bin");
	ck_assert(rep.artifacts[1].copy);
	ck_assert_str_eq(rep.artifacts[2].dst, "sub/nc1.w.npy");
	ck_assert_str_eq(alloc_in(fn(out, "nc1"), "w1")->file, "sub/nc1.w.npy");
	ck_assert_str_eq(alloc_in(fn(out, "nc0"), "nc0.hostin")->file,
			 "nc0.host.bin");
	ck_assert_str_eq(out->dir, S("%s/t/sgLnk", od));
	ck_assert_int_eq(lk_write_link_dir(out, &rep, od, 0, &e), 0);
	const char *ld = S("%s/t/sgLnk", od);
	ck_assert(is_file(S("%s/def.json", ld)));
	ck_assert(is_file(S("%s/tensor-map.json", ld)));
	ck_assert(is_link(S("%s/sub/nc0.w.npy", ld)));
	ck_assert(is_link(S("%s/sub/nc1.w.npy", ld)));
	ck_assert(is_file(S("%s/nc1.host.bin", ld)));
	char *t = tu_read(S("%s/sub/nc1.w.npy", ld));
	ck_assert_str_eq(t, "weights of core 1");
	free(t);
	t = tu_read(S("%s/nc0.host.bin", ld));
	ck_assert_str_eq(t, "host data of core 0");
	free(t);
	/* the written module loads back and its files resolve from there */
	lm_module *back = NULL;
	ck_assert_msg(lm_module_load(&back, S("%s/def.json", ld), &e) == 0,
		      "%s", e.msg);
	ck_assert_int_eq(lm_module_compare(back, out, NULL, 0), 0);
	lm_module_free(back);
	t = tu_read(S("%s/.lncsim-link-manifest", ld));
	ck_assert_contains(t, "link sub/nc0.w.npy\n");
	ck_assert_contains(t, "copy nc0.host.bin\n");
	ck_assert_contains(t, "dir sub\n");
	ck_assert_contains(t, "file def.json\n");
	free(t);
	/* again: refused without force */
	ck_assert_int_ne(lk_write_link_dir(out, &rep, od, 0, &e), 0);
	ck_assert_str_eq(e.msg, S("%s: link directory exists (use --force to "
				  "replace it)", ld));
	/* --force replaces what we wrote, keeps a user's file */
	free(tu_write(ld, "notes.txt", "mine"));
	ck_assert_int_eq(lk_write_link_dir(out, &rep, od, 1, &e), 0);
	t = tu_read(S("%s/notes.txt", ld));
	ck_assert_str_eq(t, "mine");
	free(t);
	ck_assert(is_link(S("%s/sub/nc0.w.npy", ld)));
	/* a user's file where we would write: refused, not replaced */
	unlink(S("%s/.lncsim-link-manifest", ld));
	ck_assert_int_ne(lk_write_link_dir(out, &rep, od, 1, &e), 0);
	ck_assert_contains(e.msg, "refusing to replace a file not written by "
			   "lncsim link");
	lm_module_free(out);
	lk_report_free(&rep);
	/* abs_file_paths: in-memory use without a link dir */
	o.abs_file_paths = 1;
	o.out_dir = NULL;
	ck_assert_int_eq(lk_link(mods, n, &o, &out, &rep, &e), 0);
	ck_assert_str_eq(alloc_in(fn(out, "nc1"), "w1")->file,
			 rep.artifacts[2].src);
	ck_assert_int_eq(alloc_in(fn(out, "nc1"), "w1")->file[0], '/');
	lm_module_free(out);
	lk_report_free(&rep);
	free_mods(mods, n);
	free(root);
	S_free();
}
END_TEST

/* The same file reached by two cores is one artifact. */
START_TEST(test_link_dir_shared_file)
{
	char *root = tu_tmpdir("lkshare");
	free(tu_write(root, "w.npy", "w"));
	for (int c = 0; c < 2; c++) {
		lm_builder *b = mod(c, "gen3");
		func(b, "sg0");
		lm_b_set_file(dram(b, "w", LM_TK_CONST, 0), "w.npy");
		sb(b, "t", 0);
		free(save(b, root, S("c%d.json", c)));
	}
	lm_module *m[2], *out = NULL;
	lk_report rep;
	lm_error e;
	ck_assert_int_eq(lm_module_load(&m[0], S("%s/c0.json", root), &e), 0);
	ck_assert_int_eq(lm_module_load(&m[1], S("%s/c1.json", root), &e), 0);
	ck_assert_int_eq(do_link(m, 2, 0, &out, &rep, &e), 0);
	ck_assert_int_eq(rep.n_artifacts, 1);
	ck_assert_str_eq(rep.artifacts[0].dst, "w.npy");
	ck_assert_str_eq(alloc_in(fn(out, "nc0"), "nc0.w")->file, "w.npy");
	ck_assert_str_eq(alloc_in(fn(out, "nc1"), "nc1.w")->file, "w.npy");
	lm_module_free(out);
	lk_report_free(&rep);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	free(root);
	S_free();
}
END_TEST

/* An IT56 carrier's klir_binary is a custom-op artifact: symlinked. */
START_TEST(test_link_dir_klir_binary)
{
	char *root = tu_tmpdir("lkklir");
	for (int c = 0; c < 2; c++) {
		const char *d = S("%s/nc%d/sg0", root, c);
		lm_builder *b = bare(c, "gen3");
		wire(b, "{\"opcode\":\"NKIKLIRKernel\",\"name\":\"kern\","
		     "\"kernel_format\":\"klir\",\"klir_binary\":\"k.klr\","
		     "\"func_args\":{},\"func_outs\":{}}");
		free(tu_write(d, "k.klr", S("kernel %d", c)));
		free(save(b, d, "def.json"));
	}
	lm_module **mods, *out = NULL;
	lk_report rep;
	lm_error e;
	int n = load_dir(root, &mods);
	ck_assert_int_eq(do_link(mods, n, 0, &out, &rep, &e), 0);
	ck_assert_int_eq(rep.n_artifacts, 2);
	ck_assert_str_eq(rep.artifacts[1].dst, "nc1.k.klr");
	ck_assert(!rep.artifacts[1].copy);
	ck_assert_str_eq(inst(fn(out, "nc1"), "nc1.kern")->klir_binary,
			 "nc1.k.klr");
	lm_module_free(out);
	lk_report_free(&rep);
	free_mods(mods, n);
	free(root);
	S_free();
}
END_TEST

/* Core 0's module c0.json whose sg0 holds a Const w from file. */
static lm_module *const_file(const char *file)
{
	lm_builder *b = mod(0, "gen3");
	func(b, "sg0");
	lm_b_set_file(dram(b, "w", LM_TK_CONST, 0), file);
	return done(b, "c0.json");
}

START_TEST(test_error_paths)
{
	lm_module *m = const_file("../w.npy"), *out = NULL;
	lm_error e;
	ck_assert_int_ne(do_link(&m, 1, 0, &out, NULL, &e), 0);
	ck_assert_str_eq(e.msg, "c0.json: function sg0/allocation w: file "
			 "'../w.npy' contains '..' (path traversal refused)");
	lm_module_free(m);
	m = const_file("/etc/passwd");
	ck_assert_int_ne(do_link(&m, 1, 0, &out, NULL, &e), 0);
	ck_assert_str_eq(e.msg, "c0.json: function sg0/allocation w: file "
			 "'/etc/passwd' is an absolute path (artifacts must be "
			 "relative to the module)");
	/* a skipped setup_link_dir neither checks nor rewrites */
	ck_assert_int_eq(do_link(&m, 1, LK_SKIP(LK_STEP_SETUP_LINK_DIR), &out,
				 NULL, &e), 0);
	ck_assert_str_eq(alloc_in(fn(out, "nc0"), "w")->file, "/etc/passwd");
	lm_module_free(out);
	lm_module_free(m);
	m = const_file("missing.npy");
	ck_assert_int_ne(do_link(&m, 1, 0, &out, NULL, &e), 0);
	ck_assert_contains(e.msg, "c0.json: function sg0/allocation w: file "
			   "'missing.npy' not found");
	lm_module_free(m);
	/* a module name that would leave the output directory */
	lm_builder *b = bare(0, "gen3");
	lm_b_name(b, "../x");
	m = done(b, "c0.json");
	ck_assert_int_ne(do_link(&m, 1, 0, &out, NULL, &e), 0);
	ck_assert_str_eq(e.msg, "c0.json: module: module name '../x' cannot "
			 "name a link directory (absolute, or an empty, '.' or "
			 "'..' component)");
	lm_module_free(m);
	S_free();
}
END_TEST

/* ---- the link directory is hostile ground ---------------------------------- */

/* Link the single core of model dir mdir (made by make_core_dir) into od. */
static int link_into(const char *mdir, const char *od, int force,
		     lm_error *e)
{
	lm_module **mods, *out = NULL;
	lk_report rep;
	lk_options o;
	int n = load_dir(mdir, &mods), rc;
	memset(&o, 0, sizeof o);
	o.out_dir = od;
	rc = lk_link(mods, n, &o, &out, &rep, e);
	if (rc == 0)
		rc = lk_write_link_dir(out, &rep, od, force, e);
	lm_module_free(out);
	lk_report_free(&rep);
	free_mods(mods, n);
	return rc;
}

static void append_to(const char *path, const char *text)
{
	FILE *f = fopen(path, "ab");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void assert_text(const char *path, const char *want)
{
	char *t = tu_read(path);
	ck_assert_msg(t != NULL, "%s is missing", path);
	ck_assert_str_eq(t, want);
	free(t);
}

/* No .sgLnk.new.* / .sgLnk.old.* left beside sgLnk. */
static void assert_no_leftovers(const char *dir)
{
	FILE *p = popen(S("ls -A '%s'", dir), "r");
	char line[1024];
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof line, p))
		ck_assert_msg(!strcmp(line, "sgLnk\n"), "left in %s: %s", dir,
			      line);
	pclose(p);
}

/* --force never deletes through a symlink: neither our directory replaced
** by a symlink to an outside directory, nor a manifest line that goes
** through a symlinked component. */
START_TEST(test_link_dir_force_symlinks)
{
	char *root = tu_tmpdir("lkforce");
	const char *mdir = S("%s/model", root), *od = S("%s/out", root);
	const char *outside = S("%s/outside", root);
	const char *ld = S("%s/t/sgLnk", od);
	lm_error e;
	make_core_dir(mdir, 0, "w.npy", "sub/h.bin");
	free(tu_write(outside, "h.bin", "precious"));
	free(tu_write(outside, "victim", "precious too"));
	ck_assert_msg(link_into(mdir, od, 0, &e) == 0, "%s", e.msg);
	assert_text(S("%s/sub/h.bin", ld), "host data of core 0");
	/* our sub/ replaced by a symlink to an outside directory */
	ck_assert_int_eq(unlink(S("%s/sub/h.bin", ld)), 0);
	ck_assert_int_eq(rmdir(S("%s/sub", ld)), 0);
	ck_assert_int_eq(symlink(outside, S("%s/sub", ld)), 0);
	ck_assert_int_ne(link_into(mdir, od, 1, &e), 0);
	assert_text(S("%s/h.bin", outside), "precious");
	assert_text(S("%s/victim", outside), "precious too");
	ck_assert_str_eq(e.msg, S("%s: sub: refusing to replace a file not "
				  "written by lncsim link", ld));
	ck_assert(is_file(S("%s/def.json", ld)));
	ck_assert(is_link(S("%s/sub", ld)));
	assert_no_leftovers(S("%s/t", od));
	/* a manifest line through a symlinked component */
	ck_assert_int_eq(unlink(S("%s/sub", ld)), 0);
	ck_assert_int_eq(mkdir(S("%s/sub", ld), 0755), 0);
	free(tu_write(ld, "sub/h.bin", "host data of core 0"));
	ck_assert_int_eq(symlink(outside, S("%s/evil", ld)), 0);
	append_to(S("%s/.lncsim-link-manifest", ld),
		  "dir evil\ncopy evil/victim\nfile evil/h.bin\n");
	ck_assert_msg(link_into(mdir, od, 1, &e) == 0, "%s", e.msg);
	assert_text(S("%s/h.bin", outside), "precious");
	assert_text(S("%s/victim", outside), "precious too");
	/* evil is the user's: moved into the new link directory as it was */
	ck_assert(is_link(S("%s/evil", ld)));
	ck_assert(is_file(S("%s/def.json", ld)));
	assert_text(S("%s/sub/h.bin", ld), "host data of core 0");
	assert_no_leftovers(S("%s/t", od));
	lm_remove_tree_at(AT_FDCWD, root);
	free(root);
	S_free();
}
END_TEST

/* A refused --force leaves the previous link as it was, and a later
** --force works; copies keep their mode. */
START_TEST(test_link_dir_force_atomic)
{
	char *root = tu_tmpdir("lkatomic");
	const char *m1 = S("%s/m1", root), *m2 = S("%s/m2", root);
	const char *od = S("%s/out", root), *ld = S("%s/t/sgLnk", od);
	struct stat st;
	lm_error e;
	char *def1, *man1;
	make_core_dir(m1, 0, "w.npy", "h.bin");
	make_core_dir(m2, 0, "w.npy", "h2.bin");
	ck_assert_int_eq(chmod(S("%s/nc0/sg0/h2.bin", m2), 0600), 0);
	ck_assert_msg(link_into(m1, od, 0, &e) == 0, "%s", e.msg);
	def1 = tu_read(S("%s/def.json", ld));
	man1 = tu_read(S("%s/.lncsim-link-manifest", ld));
	/* the user's file where the new link writes: refused, nothing changed */
	free(tu_write(ld, "h2.bin", "mine"));
	ck_assert_int_ne(link_into(m2, od, 1, &e), 0);
	assert_text(S("%s/def.json", ld), def1);
	ck_assert_str_eq(e.msg, S("%s: h2.bin: refusing to replace a file not "
				  "written by lncsim link", ld));
	assert_text(S("%s/.lncsim-link-manifest", ld), man1);
	assert_text(S("%s/h.bin", ld), "host data of core 0");
	assert_text(S("%s/h2.bin", ld), "mine");
	ck_assert(is_link(S("%s/w.npy", ld)));
	assert_no_leftovers(S("%s/t", od));
	/* again, refused the same way (the old manifest is still there) */
	ck_assert_int_ne(link_into(m2, od, 1, &e), 0);
	ck_assert_contains(e.msg, "refusing to replace a file not written");
	assert_text(S("%s/def.json", ld), def1);
	/* the user moves the file away: --force works */
	ck_assert_int_eq(unlink(S("%s/h2.bin", ld)), 0);
	free(tu_write(ld, "notes.txt", "kept"));
	ck_assert_msg(link_into(m2, od, 1, &e) == 0, "%s", e.msg);
	assert_text(S("%s/h2.bin", ld), "host data of core 0");
	ck_assert_int_eq(lstat(S("%s/h2.bin", ld), &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_ne(access(S("%s/h.bin", ld), F_OK), 0);
	assert_text(S("%s/notes.txt", ld), "kept");
	char *def2 = tu_read(S("%s/def.json", ld));
	ck_assert_str_ne(def2, def1);
	ck_assert_ptr_nonnull(strstr(def2, "h2.bin"));
	assert_no_leftovers(S("%s/t", od));
	free(def1);
	free(def2);
	free(man1);
	lm_remove_tree_at(AT_FDCWD, root);
	free(root);
	S_free();
}
END_TEST

/* A file reached through a symlink that leaves the module's directory is
** refused; one that stays inside is fine. */
START_TEST(test_link_dir_symlink_outside_module)
{
	char *root = tu_tmpdir("lkout");
	const char *mdir = S("%s/model", root), *od = S("%s/out", root);
	const char *victim = S("%s/outside/passwd", root);
	const char *host = S("%s/nc0/sg0/h.bin", mdir);
	lm_error e;
	make_core_dir(mdir, 0, "w.npy", "h.bin");
	free(tu_write(S("%s/outside", root), "passwd", "root:x:0:0"));
	ck_assert_int_eq(unlink(host), 0);
	ck_assert_int_eq(symlink(victim, host), 0);
	ck_assert_int_ne(link_into(mdir, od, 0, &e), 0);
	ck_assert_str_eq(e.msg, S("%s/nc0/sg0/def.json: function sg0/allocation "
				  "hostin: file 'h.bin' resolves to '%s', outside "
				  "the module's directory (a symlink leaving it is "
				  "refused)", mdir, victim));
	ck_assert_int_ne(access(S("%s/t/sgLnk", od), F_OK), 0);
	/* a symlink inside the module's directory */
	ck_assert_int_eq(unlink(host), 0);
	free(tu_write(S("%s/nc0/sg0/real", mdir), "h.bin", "inside"));
	ck_assert_int_eq(symlink("real/h.bin", host), 0);
	ck_assert_msg(link_into(mdir, od, 0, &e) == 0, "%s", e.msg);
	assert_text(S("%s/t/sgLnk/h.bin", od), "inside");
	assert_text(victim, "root:x:0:0");
	lm_remove_tree_at(AT_FDCWD, root);
	free(root);
	S_free();
}
END_TEST

/* ---- the commands ---------------------------------------------------------- */

/* A [1, 4] float32 DRAM allocation, its memory location of its name. */
static const char *j14(const char *name, const char *kind, int addr)
{
	return S("{\"name\":\"%s\",\"kind\":\"%s\",\"dtype\":\"float32\","
		 "\"tensor_shape\":[1,4],\"memorylocations\":[{\"name\":\"%s\","
		 "\"type\":\"%s\",\"addr\":%d,\"dims\":[1,16],\"bank\":0,"
		 "\"base\":0,\"allocated\":true}]}", name, kind, name,
		 strcmp(kind, "Internal") ? "DRAM" : "SB", addr);
}

static const char *jdma(const char *name, const char *src, const char *dst,
			const char *more)
{
	const char *ap = "\"offset\":0,\"ap\":[[4,1],[1,4]],\"dtype\":\"float32\"";
	return S("{\"opcode\":\"DMACopy\",\"name\":\"%s\",\"engine\":\"SP\","
		 "\"queue\":\"q\",\"ins\":[{\"kind\":\"physical_ap\","
		 "\"memsetref\":\"%s\",\"memref\":\"%s\",%s}],\"outs\":[{"
		 "\"kind\":\"physical_ap\",\"memsetref\":\"%s\",\"memref\":"
		 "\"%s\",%s}]%s}", name, src, src, ap, dst, dst, ap, more);
}

/* Core c of the runnable name-matched pair, as DIR/nm/nc<c>/sg0/def.json. */
static char *nm_core(const char *dir, int c)
{
	const char *wait = ",\"wait\":[{\"semaphore\":\"s\",\"value\":1}]";
	const char *bar = "{\"opcode\":\"CoreBarrier\",\"name\":\"bar\","
		"\"engine\":\"Pool\",\"id\":1,\"cores\":[0,1],\"group\":\"g\"";
	const char *allocs = c == 0 ?
		S("%s,%s,%s", j14("x", "ExternalInput", 0),
		  j14("h", "ExternalOutput", 64), j14("t", "Internal", 0)) :
		S("%s,%s,%s", j14("h", "ExternalInput", 512),
		  j14("z", "ExternalOutput", 192), j14("t", "Internal", 0));
	const char *insts = c == 0 ?
		S("%s,%s,%s,\"dependencies\":[\"st\"]}",
		  jdma("ld", "x", "t", ""), jdma("st", "t", "h", wait), bar) :
		S("%s},%s,%s", bar, jdma("ld", "h", "t",
					 ",\"dependencies\":[\"bar\"]"),
		  jdma("st", "t", "z", wait));
	return tu_write(dir, S("nm/nc%d/sg0/def.json", c), S(
		"{\"version\":2,\"arch\":\"gen3\",\"name\":\"nm\","
		"\"attributes\":{\"neuron_core_id\":%d},\"semaphores\":[{"
		"\"name\":\"s\",\"init\":0}],\"queues\":[{\"name\":\"q\","
		"\"instances\":[{\"name\":\"qi\",\"semaphore\":\"s\"}]}],"
		"\"functions\":[{\"name\":\"sg0\",\"attributes\":[],"
		"\"allocations\":[%s],\"blocks\":[{\"name\":\"b\","
		"\"instructions\":[%s]}]}]}", c, allocs, insts));
}

static const char *nm_entry(const char *layer, const char *alloc,
			    const char *kind, const char *shape)
{
	return S("{\"layer_name\":\"%s\",\"allocation\":\"%s\",\"kind\":"
		 "\"%s\",\"dtype\":\"float32\",\"sim_shape\":%s}", layer, alloc,
		 kind, shape);
}

/*
** A name-matched hand-off with the cores' own tensor maps, through the
** commands: link merges the maps (the layer names, each entry bound to its
** allocation), diff --linked proves the link against the per-core
** modules and checks the tensor map by its bindings; a map that
** contradicts its module is exit 2.
*/
START_TEST(test_cli_link_name_matched_maps)
{
	char *d = tu_tmpdir("clinm");
	char *p0 = nm_core(d, 0), *p1 = nm_core(d, 1);
	const char *ld = S("%s/out/nm/sgLnk", d);
	char *text;
	tu_run r;
	free(tu_write(d, "nm/nc0/sg0/tensor-map.json", S("{\"tensors\":[%s,%s]}",
		      nm_entry("in0", "x", "input", "[1,4]"),
		      nm_entry("hand", "h", "output", "[1,4]"))));
	free(tu_write(d, "nm/nc1/sg0/tensor-map.json", S("{\"tensors\":[%s,%s]}",
		      nm_entry("hin", "h", "input", "[1,4]"),
		      nm_entry("final", "z", "output", "[1,4]"))));
	r = tu_lncsim(NULL, "link", "-v", "-o", S("%s/out", d), p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "copy_allocs: Replacing from inpMap: input h "
			   "of core 1 -> output h of core 0");
	ck_assert_contains(r.out, "fix_output_kind: 1 intermediate output "
			   "demoted ExternalOutput -> Internal (h)");
	ck_assert_contains(r.out, "2 from the cores' own tensor maps");
	tu_run_free(&r);
	text = tu_read(S("%s/tensor-map.json", ld));
	ck_assert_contains(text, "\"layer_name\":\t\"final\",\n\t\t\t"
			   "\"allocation\":\t\"z\"");
	ck_assert(strstr(text, "\"hand\"") == NULL);
	free(text);
	r = tu_lncsim(NULL, "diff", "--linked", S("%s/def.json", ld), p0, p1,
		      NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS nm (2 cores): 1 output bit-identical, "
			   "1 hand-off");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	/* the barrier base */
	r = tu_lncsim(NULL, "link", "--dry-run", "-v", "--barrier-base", "7",
		      p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "4 barriers renumbered (ids 7..10)");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", "--dry-run", "--barrier-base=4294967296",
		      p0, p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--barrier-base '4294967296': expected a "
			   "whole number in [0, 4294967295]");
	tu_run_free(&r);

	free(tu_write(d, "nm/nc1/sg0/tensor-map.json", S("{\"tensors\":[%s,%s]}",
		      nm_entry("hin", "h", "input", "[1,4]"),
		      nm_entry("final", "z", "output", "[4,1]"))));
	r = tu_lncsim(NULL, "link", "--dry-run", p0, p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "nm/nc1/sg0/tensor-map.json: entry 'final' "
			   "contradicts its module ");
	ck_assert_contains(r.err, "sim_shape [4,1] but 'z' has tensor_shape "
			   "[1,4]");
	tu_run_free(&r);
	unlink(S("%s/nm/nc1/sg0/tensor-map.json", d));

	/* modular-flow metadata beside the per-core layout is read (the
	   modular link: tests/test_multidef.c) */
	free(tu_write(d, "nm/hlo_netlist.json", "{}"));
	r = tu_lncsim(NULL, "link", "--dry-run", p0, p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "nm/hlo_netlist.json: 'definitions' and "
			   "'instances' must be arrays");
	tu_run_free(&r);
	free(p0);
	free(p1);
	tu_rmtree(d);
	free(d);
	S_free();
}
END_TEST


START_TEST(test_cli_link)
{
	char *src = tu_srcpath("examples/handoff2");
	char *od = tu_tmpdir("clilink");
	tu_run r = tu_lncsim(NULL, "link", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "usage: lncsim link");
	for (int s = 0; s < LK_N_STEPS; s++)
		ck_assert_contains(r.out, lk_step_name(s));
	tu_run_free(&r);

	r = tu_lncsim(NULL, "link", "-v", "-o", od, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "copy_modules_as_functions: 2 modules");
	ck_assert_contains(r.out, "build_main_aliases: 1 alias");
	ck_assert_contains(r.out, "handoff2/sgLnk: 2 cores -> 3 functions");
	ck_assert_contains(r.out, "wrote ");
	tu_run_free(&r);
	const char *ld = S("%s/handoff2/sgLnk", od);
	ck_assert(is_file(S("%s/def.json", ld)));
	ck_assert(is_link(S("%s/nc1.wc.npy", ld)));
	/* the written module verifies with the linked rules */
	r = tu_lncsim(NULL, "verify", "--linked", S("%s/def.json", ld), NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	/* existing: exit 2 with the message; --force replaces */
	r = tu_lncsim(NULL, "link", "-o", od, src, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, S("lncsim: %s: link directory exists (use "
				    "--force to replace it)", ld));
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", "--force", "-o", od, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	/* def.json is compact; --pretty indents the same module */
	{
		char *compact = tu_read(S("%s/def.json", ld)), *pretty;
		lm_module *a, *b;
		lm_error e;
		char where[256];
		ck_assert_ptr_nonnull(compact);
		/* one line: the only newline ends the file */
		ck_assert_ptr_eq(strchr(compact, '\n'),
				 compact + strlen(compact) - 1);
		ck_assert_ptr_null(strchr(compact, '\t'));
		ck_assert_int_eq(lm_module_load(&a, S("%s/def.json", ld), &e), 0);
		r = tu_lncsim(NULL, "link", "--force", "--pretty", "-o", od, src,
			      NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		pretty = tu_read(S("%s/def.json", ld));
		ck_assert_ptr_nonnull(pretty);
		ck_assert_contains(pretty, "\n\t\"functions\":\t[");
		ck_assert_uint_gt(strlen(pretty), strlen(compact));
		ck_assert_int_eq(lm_module_load(&b, S("%s/def.json", ld), &e), 0);
		ck_assert_msg(lm_module_compare(a, b, where, sizeof where) == 0,
			      "compact and pretty differ at %s", where);
		lm_module_free(a);
		lm_module_free(b);
		free(compact);
		free(pretty);
	}
	/* dry run: the report, nothing written */
	const char *od2 = S("%s/dry", od);
	r = tu_lncsim(NULL, "link", "--dry-run", "-o", od2, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "dry run: nothing written");
	ck_assert_contains(r.out, "tensor input a [float32] a.npy");
	ck_assert_contains(r.out, "array fill");
	ck_assert(access(od2, F_OK) != 0);
	tu_run_free(&r);
	/* --skip: a step off, the verifier notices (exit 1) */
	r = tu_lncsim(NULL, "link", "--dry-run", "--skip=fpass_insert_returns",
		      src, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.err, "linked module fails the verifier");
	ck_assert_contains(r.err, "must end with CoreBarrier "
			   "'cb_return_call_def_0_instance_0' followed by Return");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", "--dry-run", "-v", "--skip",
		      "renumber_core_barriers,verify", src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "renumber_core_barriers: skipped");
	ck_assert_contains(r.out, "verify: skipped");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", "--skip=bogus", src, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "unknown step 'bogus'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "no MODULE given");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", "--frob", src, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "unknown option '--frob'");
	tu_run_free(&r);
	free(src);
	free(od);
	S_free();
}
END_TEST

/* Concurrent `lncsim link --force` of one name: every run succeeds and the
** link directory ends complete (manifest, a def.json that verifies). */
START_TEST(test_cli_link_concurrent_force)
{
	char *src = tu_srcpath("examples/handoff2");
	char *od = tu_tmpdir("cliconc");
	const char *ld = S("%s/handoff2/sgLnk", od);
	tu_run r = tu_lncsim(NULL, "link", "-o", od, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	for (int round = 0; round < 3; round++) {
		pid_t kids[3];
		for (int k = 0; k < 3; k++) {
			kids[k] = fork();
			ck_assert_int_ge(kids[k], 0);
			if (kids[k] == 0) {
				tu_run c = tu_lncsim(NULL, "link", "--force",
						     "-o", od, src, NULL);
				if (c.status != 0)
					fprintf(stderr, "%s", c.err);
				_exit(c.status);
			}
		}
		for (int k = 0; k < 3; k++) {
			int st;
			ck_assert_int_eq(waitpid(kids[k], &st, 0), kids[k]);
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
				      "round %d: a concurrent link failed "
				      "(status %d)", round, st);
		}
		char *man = tu_read(S("%s/.lncsim-link-manifest", ld));
		ck_assert_ptr_nonnull(man);
		ck_assert_contains(man, "file def.json\n");
		ck_assert_contains(man, "link nc1.wc.npy\n");
		free(man);
		ck_assert(is_link(S("%s/nc1.wc.npy", ld)));
		r = tu_lncsim(NULL, "verify", "--linked", S("%s/def.json", ld),
			      NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		assert_no_leftovers(S("%s/handoff2", od));
	}
	lm_remove_tree_at(AT_FDCWD, od);
	free(src);
	free(od);
	S_free();
}
END_TEST

/*
** Two cores use wc.npy for different files, and core 0 also has a file
** literally named nc1.wc.npy (Const wc2): the renamed core-1 file may not
** take that name, or core 0's wc2 would read core 1's data.
*/
START_TEST(test_cli_link_rename_taken)
{
	char *src = tu_srcpath("examples/handoff2");
	char *root = tu_tmpdir("clitaken");
	const char *col = S("%s/col", root), *od = S("%s/out", root);
	const char *d0 = S("%s/nc0/sg0", col);
	const char *ld = S("%s/handoff2/sgLnk", od);
	char *txt, *p, *all, *man, buf[4096];
	char *tgt = buf;
	ssize_t n;
	ck_assert_int_eq(system(S("cp -r '%s' '%s'", src, col)), 0);
	p = tu_write(S("%s/nc1/sg0", col), "wc.npy", "core 1's weights");
	free(p);
	p = tu_write(d0, "nc1.wc.npy", "core 0's second weights");
	free(p);
	/* wc2: a copy of core 0's Const wc with its own file and location */
	txt = tu_read(S("%s/def.json", d0));
	ck_assert_ptr_nonnull(txt);
	{
		cJSON *j = cJSON_Parse(txt), *f, *al, *wc = NULL, *cp, *l;
		ck_assert_ptr_nonnull(j);
		f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "functions"), 0);
		al = cJSON_GetObjectItem(f, "allocations");
		cJSON_ArrayForEach(cp, al)
			if (!strcmp(cJSON_GetObjectItem(cp, "name")->valuestring,
				    "wc"))
				wc = cp;
		ck_assert_ptr_nonnull(wc);
		cp = cJSON_Duplicate(wc, 1);
		cJSON_ReplaceItemInObject(cp, "name", cJSON_CreateString("wc2"));
		cJSON_ReplaceItemInObject(cp, "file",
					  cJSON_CreateString("nc1.wc.npy"));
		l = cJSON_GetArrayItem(cJSON_GetObjectItem(cp, "memorylocations"),
				       0);
		cJSON_ReplaceItemInObject(l, "name", cJSON_CreateString("wc2"));
		cJSON_ReplaceItemInObject(l, "addr", cJSON_CreateNumber(1048576));
		cJSON_AddItemToArray(al, cp);
		all = cJSON_Print(j);
		cJSON_Delete(j);
	}
	p = tu_write(d0, "def.json", all);
	free(p);

	tu_run r = tu_lncsim(NULL, "link", "-o", od, col, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	man = tu_read(S("%s/.lncsim-link-manifest", ld));
	ck_assert_ptr_nonnull(man);
	ck_assert_contains(man, "link nc0.wc.npy\nlink nc1.wc.npy\n"
			   "link nc1_2.wc.npy\n");
	/* each name leads to its own file */
	n = readlink(S("%s/nc1.wc.npy", ld), tgt, sizeof buf - 1);
	ck_assert_int_gt(n, 0);
	tgt[n] = 0;
	ck_assert_contains(tgt, "nc0/sg0/nc1.wc.npy");
	n = readlink(S("%s/nc1_2.wc.npy", ld), tgt, sizeof buf - 1);
	ck_assert_int_gt(n, 0);
	tgt[n] = 0;
	ck_assert_contains(tgt, "nc1/sg0/wc.npy");
	free(man);
	free(txt);
	free(all);
	lm_remove_tree_at(AT_FDCWD, root);
	free(root);
	free(src);
	S_free();
}
END_TEST

/* --force with a FIFO where the manifest was: refused at once (exit 2),
** not a hang holding the lock; no scratch directory left. */
START_TEST(test_cli_link_fifo_manifest)
{
	char *src = tu_srcpath("examples/handoff2");
	char *od = tu_tmpdir("clififo");
	const char *ld = S("%s/handoff2/sgLnk", od);
	const char *man = S("%s/.lncsim-link-manifest", ld);
	const char *av[] = { "link", "--force", "-o", od, src, NULL };
	tu_opts o = TU_OPTS_INIT;
	tu_run r = tu_lncsim(NULL, "link", "-o", od, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	ck_assert_int_eq(unlink(man), 0);
	ck_assert_int_eq(mkfifo(man, 0644), 0);
	o.timeout_s = 30;
	r = tu_lncsimo(&o, NULL, av);
	ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
	ck_assert_contains(r.err, S("lncsim: %s: not a regular file (a FIFO)",
				    man));
	tu_run_free(&r);
	assert_no_leftovers(S("%s/handoff2", od));
	lm_remove_tree_at(AT_FDCWD, od);
	free(od);
	free(src);
	S_free();
}
END_TEST

/* A host file over LM_READ_MAX (sparse) is refused by its size: exit 2,
** nothing read, no scratch directory left. */
START_TEST(test_cli_link_host_file_too_large)
{
	char *src = tu_srcpath("examples/handoff2");
	char *root = tu_tmpdir("clibig");
	const char *col = S("%s/col", root), *od = S("%s/out", root);
	const char *d0 = S("%s/nc0/sg0", col);
	char *txt, *all, *p;
	int fd;
	ck_assert_int_eq(system(S("cp -r '%s' '%s'", src, col)), 0);
	fd = open(S("%s/big.bin", d0), O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)LM_READ_MAX + 1), 0);
	close(fd);
	txt = tu_read(S("%s/def.json", d0));
	ck_assert_ptr_nonnull(txt);
	{
		/* the first allocation's host file is the big one */
		cJSON *j = cJSON_Parse(txt), *f, *a0;
		ck_assert_ptr_nonnull(j);
		f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "functions"), 0);
		a0 = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "allocations"), 0);
		cJSON_ReplaceItemInObject(a0, "file",
					  cJSON_CreateString("big.bin"));
		all = cJSON_Print(j);
		cJSON_Delete(j);
	}
	p = tu_write(d0, "def.json", all);
	free(p);
	tu_run r = tu_lncsim(NULL, "link", "-o", od, col, NULL);
	ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
	ck_assert_contains(r.err, S("nc0/sg0/big.bin: file too large: %lld "
				    "bytes (at most %lld)",
				    (long long)LM_READ_MAX + 1,
				    (long long)LM_READ_MAX));
	tu_run_free(&r);
	ck_assert(access(S("%s/handoff2/sgLnk", od), F_OK) != 0);
	assert_no_leftovers(S("%s/handoff2", od));
	free(txt);
	free(all);
	lm_remove_tree_at(AT_FDCWD, root);
	free(root);
	free(src);
	S_free();
}
END_TEST

START_TEST(test_cli_link_errors)
{
	char *d = tu_tmpdir("clierr");
	char *a = save(core0(), d, "a/def.json");
	char *b = save(core0(), d, "b/def.json");
	tu_run r = tu_lncsim(NULL, "link", "--dry-run", a, b, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "b/def.json: module: duplicate neuron_core_id "
			   "0 (also in ");
	tu_run_free(&r);
	free(a);
	free(b);
	free(d);
	S_free();
}
END_TEST

START_TEST(test_cli_mmt)
{
	char *src = tu_srcpath("examples/matmul1/def.json");
	tu_run r = tu_lncsim(NULL, "mmt", src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "function");
	ck_assert_contains(r.out, "PE cycles");
	ck_assert_contains(r.out, "total");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "mmt", "--json", src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "\"arch\":");
	ck_assert_contains(r.out, "\"array_fill\":");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "mmt", NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "mmt", "/no/such.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: /no/such.json:");
	tu_run_free(&r);
	free(src);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("linker");
	TCase *tc = tcase_create("steps");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_copy_modules_as_functions);
	tcase_add_test(tc, test_copy_many_names);
	tcase_add_test(tc, test_copy_allocs);
	tcase_add_test(tc, test_copy_allocs_renamed_producer);
	tcase_add_test(tc, test_copy_allocs_registers);
	tcase_add_test(tc, test_copy_bodies);
	tcase_add_test(tc, test_fpass_insert_returns);
	tcase_add_test(tc, test_fpass_existing_return);
	tcase_add_test(tc, test_fpass_insert_switch_queue_instances);
	tcase_add_test(tc, test_build_main_memlocs);
	tcase_add_test(tc, test_build_main_aliases);
	tcase_add_test(tc, test_copy_allocs_name_matched);
	tcase_add_test(tc, test_fix_output_kind);
	tcase_add_test(tc, test_fix_output_kind_reads);
	tcase_add_test(tc, test_build_main_tensor_map);
	tcase_add_test(tc, test_tensor_map_read);
	tcase_add_test(tc, test_tensor_map_merge);
	tcase_add_test(tc, test_init_queues);
	tcase_add_test(tc, test_add_fn_call);
	tcase_add_test(tc, test_setup_link_dir);
	tcase_add_test(tc, test_link_dir_shared_file);
	tcase_add_test(tc, test_link_dir_klir_binary);
	tcase_add_test(tc, test_link_dir_force_symlinks);
	tcase_add_test(tc, test_link_dir_force_atomic);
	tcase_add_test(tc, test_link_dir_symlink_outside_module);
	tcase_add_test(tc, test_renumber_core_barriers);
	tcase_add_test(tc, test_renumber_core_barriers_base);
	tcase_add_test(tc, test_check_barrier_order);
	tcase_add_test(tc, test_check_barrier_order_calls);
	tcase_add_test(tc, test_check_barrier_order_fanout);
	tcase_add_test(tc, test_null_dependency_trusted);
	tcase_add_test(tc, test_mmt);
	tcase_add_test(tc, test_single_core);
	tcase_add_test(tc, test_handoff2);
	tcase_add_test(tc, test_threads_same_result);
	tcase_add_test(tc, test_skip_each_step);
	tcase_add_test(tc, test_dry_run_and_log);
	tcase_add_test(tc, test_parse_skip);
	suite_add_tcase(s, tc);
	TCase *te = tcase_create("errors");
	tcase_set_timeout(te, 120);
	tcase_add_test(te, test_error_core_ids);
	tcase_add_test(te, test_error_remote);
	tcase_add_test(te, test_error_shared_input);
	tcase_add_test(te, test_error_already_linked);
	tcase_add_test(te, test_error_paths);
	suite_add_tcase(s, te);
	TCase *tcli = tcase_create("cli");
	tcase_set_timeout(tcli, 180);
	tcase_add_test(tcli, test_cli_link);
	tcase_add_test(tcli, test_cli_link_name_matched_maps);
	tcase_add_test(tcli, test_cli_link_concurrent_force);
	tcase_add_test(tcli, test_cli_link_errors);
	tcase_add_test(tcli, test_cli_link_rename_taken);
	tcase_add_test(tcli, test_cli_link_fifo_manifest);
	tcase_add_test(tcli, test_cli_link_host_file_too_large);
	tcase_add_test(tcli, test_cli_mmt);
	suite_add_tcase(s, tcli);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

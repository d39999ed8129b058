/*
** test_provision.c -- kernel provision: TranslateNKIASTToBIR by
** both mechanisms, the LNC gate, the argument maps and every error
** message, the codegen helpers' caching, InlineNKIKernel, and the lowered
** + inlined modules running in the simulator with outputs checked against
** values computed here independently. Plus `lncsim lower`.
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"
#include "dtype.h"
#include "provision.h"
#include "json.h"
#include "klr.h"
#include "safeio.h"
#include "sim.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------- */

static lm_module *load_fx(const char *name)
{
	char *p = tu_fixture("provision", name);
	lm_module *m = tu_load(p);
	free(p);
	return m;
}

/* A module ready for Mechanism A: caller fixture + packed kernel in dir. */
static lm_module *setup_a(const char *dir, const char *caller,
			  const char *kernel)
{
	char *p = lm_xasprintf("%s/%s", dir, caller);
	lm_module *m;
	tu_copy_fixture("provision", caller, dir);
	tu_pack_klr(kernel, dir, NULL);
	m = tu_load(p);
	free(p);
	return m;
}

/* Lower expecting an error containing want. */
static void lower_fails(const lm_module *m, const char *want)
{
	lm_module *out = NULL;
	lm_error err;
	lp_warnings w = { 0, 0, NULL };
	ck_assert_int_ne(lp_lower(&out, m, NULL, &w, &err), 0);
	ck_assert_ptr_null(out);
	ck_assert_contains(err.msg, want);
	lp_warnings_free(&w);
}

/* The instruction named name (top-level blocks), or NULL. */
static lm_inst *find_inst(const lm_module *m, const char *name,
			  lm_function **owner)
{
	for (int f = 0; f < m->n_functions; f++)
		for (int b = 0; b < m->functions[f].n_blocks; b++)
			for (int i = 0; i < m->functions[f].blocks[b].n_insts;
			     i++) {
				lm_inst *in = &m->functions[f].blocks[b].insts[i];
				if (in->name && !strcmp(in->name, name)) {
					if (owner)
						*owner = &m->functions[f];
					return in;
				}
			}
	return NULL;
}

/* Number of allocations (and of instructions) whose name starts with p. */
static int count_prefix(const lm_function *f, const char *p, int insts)
{
	int n = 0;
	size_t k = strlen(p);
	if (!insts) {
		for (int a = 0; a < f->n_allocs; a++)
			n += !strncmp(f->allocs[a].name, p, k);
		return n;
	}
	for (int b = 0; b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts; i++)
			n += !strncmp(f->blocks[b].insts[i].name, p, k);
	return n;
}

static const char *kv_get(const lm_kv *kv, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

static int has_dep(const lm_inst *in, const char *name)
{
	for (int i = 0; i < in->n_deps; i++)
		if (!strcmp(in->deps[i], name))
			return 1;
	return 0;
}

/* The input x of the fixtures: exact small values plus a few odd bits. */
static float xval(int p, int j)
{
	return (float)((p * 7 + j * 3) % 23 - 11) / 8.0f +
	       (float)(p % 3) * 0.001f;
}

/* Run m with input x [P, Fr]; returns the result (caller frees). */
static void run(const lm_module *m, int P, int Fr, ls_result *res)
{
	ls_tensors in = { 0, NULL };
	ls_options o;
	lm_error err;
	int64_t shape[2] = { P, Fr };
	float *x = lm_xmalloc((size_t)P * (size_t)Fr * sizeof *x);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < Fr; j++)
			x[p * Fr + j] = xval(p, j);
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	memset(&o, 0, sizeof o);
	memset(res, 0, sizeof *res);
	ck_assert_msg(ls_run(m, &in, &o, res, &err) == 0, "run: %s", err.msg);
	ls_tensors_free(&in);
	free(x);
}

/* The file at path holds exactly text. */
static void assert_file_text(const char *path, const char *text)
{
	char *t = tu_read(path);
	ck_assert_msg(t != NULL, "%s missing", path);
	ck_assert_str_eq(t, text);
	free(t);
}

/* ---- Mechanism B ---------------------------------------------------------------- */

START_TEST(test_bir_lower_structure)
{
	lm_module *m = load_fx("b_caller.json"), *lo;
	lm_function *kf = NULL;
	lm_inst *call, *after;
	lp_warnings w = { 0, 0, NULL };

	lo = tu_lower_ok(m, 0, &w);
	ck_assert_int_eq(w.n, 0);
	ck_assert_int_eq(tu_count_op(lo, LM_OP_NKIKLIRKERNEL), 0);
	ck_assert_ptr_null(find_inst(lo, "kern", NULL));
	call = find_inst(lo, "inst__relu_k", NULL);
	ck_assert_ptr_nonnull(call);
	ck_assert_int_eq(call->op, LM_OP_NKIKERNEL);
	ck_assert_str_eq(call->func, "relu_k");
	ck_assert_str_eq(call->kernel_source, "Beta3");
	ck_assert_str_eq(kv_get(call->func_args, call->n_func_args, "kin"), "x");
	ck_assert_str_eq(kv_get(call->func_outs, call->n_func_outs, "kout"), "y");
	ck_assert_int_eq(call->n_ins, 1);
	ck_assert_str_eq(call->ins[0].memsetref, "x");
	ck_assert_str_eq(call->outs[0].memsetref, "y");
	ck_assert(has_dep(call, "caller_ms"));
	/* budget from the re-scan: SB high-water 512 + 4, no PSUM */
	ck_assert(call->has_sb_buf_shape);
	ck_assert_int_eq((int)call->sb_buf_shape[0], 516);
	ck_assert_int_eq((int)call->sb_buf_shape[1], 128);
	ck_assert_int_eq((int)call->psum_buf_shape[2], 0);
	/* the call site stands where the carrier stood */
	ck_assert_str_eq(lo->functions[0].blocks[0].insts[1].name,
			 "inst__relu_k");
	after = find_inst(lo, "after", NULL);
	ck_assert(has_dep(after, "inst__relu_k"));
	/* the new function: kind nki, names made unique, sync merged */
	kf = lm_module_find_function(lo, "relu_k");
	ck_assert_ptr_nonnull(kf);
	ck_assert(kf->has_kind && kf->kind == LM_FK_NKI);
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo, "t_1", NULL));
	ck_assert_ptr_nonnull(lm_module_find_queue(lo, "qSyncIO0_1"));
	ck_assert_ptr_nonnull(lm_module_find_semaphore(lo, "s_dma_1"));
	ck_assert_str_eq(find_inst(lo, "relu_k_ld", NULL)->queue, "qSyncIO0_1");
	/* the Const file, relative to the module's directory */
	ck_assert_str_eq(lm_module_find_alloc(lo, "w", NULL)->file, "w.npy");
	/* the input is untouched */
	ck_assert_int_eq(tu_count_op(m, LM_OP_NKIKLIRKERNEL), 1);
	ck_assert_int_eq(m->n_functions, 1);
	lm_module_free(lo);
	lm_module_free(m);
	lp_warnings_free(&w);
}
END_TEST

START_TEST(test_bir_inline_runs)
{
	lm_module *m = load_fx("b_caller.json"), *lo;
	ls_result r;
	lo = tu_lower_ok(m, 1, NULL);
	ck_assert_int_eq(lo->n_functions, 1);
	ck_assert_int_eq(tu_count_op(lo, LM_OP_NKIKERNEL), 0);
	/* the call's name survives as the closing NoOp */
	ck_assert_int_eq(find_inst(lo, "inst__relu_k", NULL)->op, LM_OP_NOOP);
	ck_assert(has_dep(find_inst(lo, "relu_k_ld", NULL), "caller_ms"));
	run(lo, 128, 64, &r);
	for (int p = 0; p < 128; p++)
		for (int j = 0; j < 64; j++) {
			float v = fmaf(xval(p, j), 2.0f, (float)(p % 8) / 4.0f);
			float want = v > 0 ? v : 0.0f;
			ck_assert_msg(tb_out(&r, "y", p * 64 + j) == want,
				      "y[%d][%d] = %g, want %g", p, j,
				      tb_out(&r, "y", p * 64 + j), want);
		}
	ls_result_free(&r);
	lm_module_free(lo);
	lm_module_free(m);
}
END_TEST

START_TEST(test_bir_const_copied)
{
	char *dir = tu_tmpdir("prov-const");
	lm_module *m = load_fx("b_caller.json"), *lo = NULL;
	lp_lower_opts o;
	lm_error err;
	char *w;
	memset(&o, 0, sizeof o);
	o.out_dir = dir;
	ck_assert_msg(lp_lower(&lo, m, &o, NULL, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(lm_module_find_alloc(lo, "w", NULL)->file,
			 "relu_k.const/w.npy");
	w = lm_xasprintf("%s/relu_k.const/w.npy", dir);
	ck_assert_int_eq(access(w, R_OK), 0);
	free(w);
	lm_module_free(lo);
	lm_module_free(m);
	free(dir);
}
END_TEST

/* A kernel's Const file reached through "..": `lower -o` refuses it (the
** rule `link` applies) and copies nothing. */
START_TEST(test_cli_lower_kernel_const_traversal)
{
	char *dir = tu_tmpdir("prov-trav");
	char *kp = tu_fixture("provision", "b_kernel.json"), *k = tu_read(kp), *bad;
	char *leak = lm_xasprintf("%s/pvout/relu_k.const/passwd", dir);
	tu_run r;
	ck_assert_ptr_nonnull(k);
	bad = tu_replace_all(k, "\"file\": \"w.npy\"", "\"file\": \"../../../../../"
			  "../../../../../../../../../../../etc/passwd\"");
	ck_assert_ptr_nonnull(strstr(bad, "etc/passwd"));
	tu_copy_fixture("provision", "b_caller.json", dir);
	free(tu_write(dir, "b_kernel.json", bad));
	r = tu_lncsim(dir, "lower", "-o", "pvout/", "b_caller.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "b_kernel.json: function relu_k/allocation w: "
			   "file '../../../../../../../../../../../../../../../"
			   "../etc/passwd' contains '..' (path traversal "
			   "refused)");
	tu_run_free(&r);
	ck_assert_int_ne(access(leak, F_OK), 0);
	lm_remove_tree_at(AT_FDCWD, dir);
	free(kp);
	free(k);
	free(bad);
	free(leak);
	free(dir);
}
END_TEST

/* `lower -o DIR` of a per-core directory: a symlink planted below DIR
** (DIR/nc0 -> elsewhere) is refused, nothing is written through it. */
START_TEST(test_cli_lower_dir_symlink_below_out)
{
	char *src = tu_srcpath("examples/handoff2");
	char *dir = tu_tmpdir("prov-lo-lnk");
	char *lo = lm_xasprintf("%s/lo", dir);
	char *elsewhere = lm_xasprintf("%s/elsewhere", dir);
	char *lnk = lm_xasprintf("%s/nc0", lo);
	char *planted = lm_xasprintf("%s/sg0", elsewhere);
	char *want = lm_xasprintf("lncsim: %s: is a symlink; refusing to go "
				  "through it", lnk);
	tu_run r;
	ck_assert_int_eq(mkdir(lo, 0755), 0);
	ck_assert_int_eq(mkdir(elsewhere, 0755), 0);
	ck_assert_int_eq(symlink(elsewhere, lnk), 0);
	r = tu_lncsim(NULL, "lower", "-o", lo, src, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, want);
	tu_run_free(&r);
	ck_assert_int_ne(access(planted, F_OK), 0);
	/* without the symlink the same command writes the layout */
	ck_assert_int_eq(unlink(lnk), 0);
	r = tu_lncsim(NULL, "lower", "-o", lo, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	free(planted);
	planted = lm_xasprintf("%s/nc0/sg0/def.json", lo);
	ck_assert_int_eq(access(planted, R_OK), 0);
	lm_remove_tree_at(AT_FDCWD, dir);
	free(src);
	free(dir);
	free(lo);
	free(elsewhere);
	free(lnk);
	free(planted);
	free(want);
}
END_TEST

/* Make allocation a of the caller's first function a Const of file. */
static void make_const(lm_module *m, int a, const char *file)
{
	lm_alloc *al = &m->functions[0].allocs[a];
	ck_assert_int_lt(a, m->functions[0].n_allocs);
	al->kind = LM_TK_CONST;
	free(al->file);
	al->file = lm_xstrdup(file);
}

/*
** The module's own Consts under `lower -o` follow the same rule: "../A"
** is refused (it was copied to consts/wc.npy, where "../B/wc.npy"
** overwrote it); a module Const at the path a kernel's copy would take
** keeps it, and the kernel's copy gets another name.
*/
START_TEST(test_lower_module_const_rule)
{
	char *dir = tu_tmpdir("prov-modconst");
	char *md = lm_xasprintf("%s/mod", dir), *od = lm_xasprintf("%s/out",
								  dir);
	char *cp, *t;
	lm_module *m, *lo = NULL;
	lp_lower_opts o;
	lm_error err;
	const lm_alloc *w;
	ck_assert_int_eq(mkdir(md, 0755), 0);
	tu_copy_fixture("provision", "b_caller.json", md);
	tu_copy_fixture("provision", "b_kernel.json", md);
	tu_copy_fixture("provision", "w.npy", md);
	free(tu_write(dir, "A/wc.npy", "A's weights"));
	free(tu_write(dir, "B/wc.npy", "B's weights"));
	free(tu_write(md, "relu_k.const/w.npy", "the module's own"));
	cp = lm_xasprintf("%s/b_caller.json", md);
	memset(&o, 0, sizeof o);
	o.out_dir = od;

	m = tu_load(cp);
	make_const(m, 0, "../A/wc.npy");
	make_const(m, 1, "../B/wc.npy");
	ck_assert_int_ne(lp_lower(&lo, m, &o, NULL, &err), 0);
	ck_assert_contains(err.msg, "/allocation ");
	ck_assert_contains(err.msg, ": file '../A/wc.npy' contains '..' (path "
			   "traversal refused)");
	ck_assert_ptr_null(lo);
	t = lm_xasprintf("%s/consts/wc.npy", od);
	ck_assert_int_ne(access(t, F_OK), 0);
	free(t);
	lm_module_free(m);

	m = tu_load(cp);
	make_const(m, 0, "relu_k.const/w.npy");
	ck_assert_msg(lp_lower(&lo, m, &o, NULL, &err) == 0, "%s", err.msg);
	w = lm_module_find_alloc(lo, "w", NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_str_eq(w->file, "relu_k.const/w.npy_1");
	t = lm_xasprintf("%s/relu_k.const/w.npy", od);
	assert_file_text(t, "the module's own");
	free(t);
	t = lm_xasprintf("%s/relu_k.const/w.npy_1", od);
	ck_assert_int_eq(access(t, R_OK), 0);
	free(t);
	lm_module_free(lo);
	lm_module_free(m);
	lm_remove_tree_at(AT_FDCWD, dir);
	free(cp);
	free(md);
	free(od);
	free(dir);
}
END_TEST

/* A kernel function name that would leave the output directory: `lower
** -o` refuses it and writes nothing outside. */
START_TEST(test_cli_lower_hostile_function_name)
{
	char *dir = tu_tmpdir("prov-hostile");
	char *kp = tu_fixture("provision", "b_kernel.json"), *k = tu_read(kp), *bad;
	char *outside = lm_xasprintf("%s/outside", dir);
	char *od = lm_xasprintf("%s/o1/o2", dir);
	tu_run r;
	ck_assert_ptr_nonnull(k);
	bad = tu_replace_all(k, "\"relu_k\"", "\"../../outside/pwn\"");
	ck_assert_ptr_nonnull(strstr(bad, "../../outside/pwn"));
	tu_copy_fixture("provision", "b_caller.json", dir);
	tu_copy_fixture("provision", "w.npy", dir);
	free(tu_write(dir, "b_kernel.json", bad));
	r = tu_lncsim(dir, "lower", "-o", "o1/o2/", "b_caller.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "kernel function name '../../outside/pwn' "
			   "cannot name a directory under the output directory "
			   "(it must be one plain path component)");
	tu_run_free(&r);
	ck_assert_int_ne(access(outside, F_OK), 0);
	/* the library says the same */
	{
		char *cp = lm_xasprintf("%s/b_caller.json", dir);
		lm_module *m = tu_load(cp), *lo = NULL;
		lp_lower_opts o;
		lm_error err;
		memset(&o, 0, sizeof o);
		o.out_dir = od;
		ck_assert_int_ne(lp_lower(&lo, m, &o, NULL, &err), 0);
		ck_assert_contains(err.msg, "kernel function name "
				   "'../../outside/pwn' cannot name a directory");
		ck_assert_ptr_null(lo);
		ck_assert_int_ne(access(outside, F_OK), 0);
		lm_module_free(m);
		free(cp);
	}
	lm_remove_tree_at(AT_FDCWD, dir);
	free(kp);
	free(k);
	free(bad);
	free(outside);
	free(od);
	free(dir);
}
END_TEST

/* The output directory's subdirectory planted as a symlink: the Const
** copy is refused, the outside directory stays empty. */
START_TEST(test_bir_const_symlinked_out)
{
	char *dir = tu_tmpdir("prov-const-lnk");
	char *outside = lm_xasprintf("%s/outside", dir);
	char *od = lm_xasprintf("%s/out", dir);
	char *lnk = lm_xasprintf("%s/relu_k.const", od);
	char *w = lm_xasprintf("%s/w.npy", outside);
	lm_module *m = load_fx("b_caller.json"), *lo = NULL;
	lp_lower_opts o;
	lm_error err;
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	ck_assert_int_eq(mkdir(od, 0755), 0);
	ck_assert_int_eq(symlink(outside, lnk), 0);
	memset(&o, 0, sizeof o);
	o.out_dir = od;
	ck_assert_int_ne(lp_lower(&lo, m, &o, NULL, &err), 0);
	ck_assert_contains(err.msg, "relu_k.const: is a symlink; refusing to go "
			   "through it");
	ck_assert_int_ne(access(w, F_OK), 0);
	lm_module_free(m);
	lm_remove_tree_at(AT_FDCWD, dir);
	free(outside);
	free(od);
	free(lnk);
	free(w);
	free(dir);
}
END_TEST

START_TEST(test_lnc_gate)
{
	lm_module *m = load_fx("b_caller_lnc2.json"), *lo;
	lp_warnings w = { 0, 0, NULL };
	ls_result r;

	/* unset core id, two functions: error */
	ck_assert(!m->has_core_id);
	lower_fails(m, "NeuronCoreId must be set when the LNC count is "
		    "greater than 1");
	lower_fails(m, "function sg0000/block main/instruction kern");
	/* core 1 picks functions[1] (scale 3) */
	m->has_core_id = 1;
	m->neuron_core_id = 1;
	lo = tu_lower_ok(m, 0, &w);
	ck_assert_ptr_nonnull(lm_module_find_function(lo, "lnc_k1"));
	ck_assert_ptr_null(lm_module_find_function(lo, "lnc_k0"));
	lm_module_free(lo);
	lo = tu_lower_ok(m, 1, &w);
	ck_assert_int_eq(w.n, 0);
	run(lo, 128, 64, &r);
	for (int i = 0; i < 128 * 64; i += 7) {
		float v = fmaf(xval(i / 64, i % 64), 3.0f, 0.0f);
		ck_assert(tb_out(&r, "y", i) == (v > 0 ? v : 0.0f));
	}
	ls_result_free(&r);
	lm_module_free(lo);
	/* core 0 picks functions[0] */
	m->neuron_core_id = 0;
	lo = tu_lower_ok(m, 0, &w);
	ck_assert_ptr_nonnull(lm_module_find_function(lo, "lnc_k0"));
	lm_module_free(lo);
	/* core 2 >= count: skipped with the seed's message, not an error */
	m->neuron_core_id = 2;
	lo = tu_lower_ok(m, 0, &w);
	ck_assert_int_eq(w.n, 1);
	ck_assert_contains(w.msgs[0], "The kernel is compiled for LNC count "
			   "lower than the current core_id 2 skip lowering");
	ck_assert_int_eq(lo->n_functions, 1);
	ck_assert_int_eq(tu_count_op(lo, LM_OP_NKIKLIRKERNEL), 0);
	ck_assert_int_eq(tu_count_op(lo, LM_OP_NKIKERNEL), 0);
	/* the dependency on the skipped carrier is gone, nothing dangles */
	ck_assert_int_eq(find_inst(lo, "after", NULL)->n_deps, 0);
	lm_module_free(lo);
	/* a function's own core id wins over the module's */
	m->functions[0].has_core_id = 1;
	m->functions[0].neuron_core_id = 1;
	lo = tu_lower_ok(m, 0, &w);
	ck_assert_ptr_nonnull(lm_module_find_function(lo, "lnc_k1"));
	lm_module_free(lo);
	lm_module_free(m);
	lp_warnings_free(&w);
}
END_TEST

START_TEST(test_bir_single_function_without_core)
{
	lm_module *m = load_fx("b_caller.json"), *lo;
	m->has_core_id = 0;   /* one function: no core id needed */
	lo = tu_lower_ok(m, 0, NULL);
	ck_assert_ptr_nonnull(lm_module_find_function(lo, "relu_k"));
	lm_module_free(lo);
	lm_module_free(m);
}
END_TEST

START_TEST(test_bir_errors)
{
	lm_module *m = load_fx("b_caller.json");
	lm_inst *k = find_inst(m, "kern", NULL);
	char *save = k->klir_binary;
	k->klir_binary = lm_xstrdup("missing.json");
	lower_fails(m, "cannot load the BIR JSON kernel");
	lower_fails(m, "missing.json");
	free(k->klir_binary);
	k->klir_binary = save;
	/* a formal the kernel does not have */
	free(k->func_args[0].key);
	k->func_args[0].key = lm_xstrdup("nope");
	lower_fails(m, "nope input cannot be found ");
	free(k->func_args[0].key);
	k->func_args[0].key = lm_xstrdup("kin");
	free(k->func_outs[0].key);
	k->func_outs[0].key = lm_xstrdup("nope");
	lower_fails(m, "nope output cannot be found ");
	free(k->func_outs[0].key);
	k->func_outs[0].key = lm_xstrdup("kout");
	/* a caller allocation that does not exist */
	free(k->func_args[0].value);
	k->func_args[0].value = lm_xstrdup("zzz");
	lower_fails(m, "func_args maps 'kin' to 'zzz', which is not an "
		    "allocation of the module");
	lm_module_free(m);
}
END_TEST

/* ---- Mechanism A ---------------------------------------------------------------- */

START_TEST(test_klr_lower_structure)
{
	char *dir = tu_tmpdir("prov-a");
	lm_module *m = setup_a(dir, "a_caller.json", "k_all"), *lo;
	lp_warnings w = { 0, 0, NULL };
	lm_function *kf;
	lm_inst *call;
	lm_alloc *a;

	lo = tu_lower_ok(m, 0, &w);
	call = find_inst(lo, "inst__k_all", NULL);
	ck_assert_ptr_nonnull(call);
	ck_assert_str_eq(call->kernel_source, "Beta2");
	ck_assert_str_eq(call->func, "k_all");
	ck_assert_str_eq(kv_get(call->func_args, call->n_func_args, "a"), "x");
	ck_assert_str_eq(kv_get(call->func_outs, call->n_func_outs, "o4"), "y4");
	kf = lm_module_find_function(lo, "k_all");
	ck_assert(kf->has_kind && kf->kind == LM_FK_NKI);
	/* formals */
	ck_assert_int_eq(lm_module_find_alloc(lo, "a", NULL)->kind, LM_TK_INPUT);
	ck_assert_int_eq(lm_module_find_alloc(lo, "o1", NULL)->kind,
			 LM_TK_OUTPUT);
	/* two bias-less activations -> one zero-bias tensor and memset */
	ck_assert_int_eq(count_prefix(kf, "COMPILER-GENERATED-zero_bias_act_",
				      0), 1);
	ck_assert_int_eq(count_prefix(kf, "COMPILER-GENERATED-memset_zero_"
				      "bias_", 1), 1);
	a = lm_module_find_alloc(lo, "COMPILER-GENERATED-zero_bias_act_0", NULL);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->dtype, LM_DT_FLOAT32);
	ck_assert_int_eq((int)a->tensor_shape[0], 128);
	ck_assert_int_eq((int)a->tensor_shape[1], 1);
	/* two float32 transposes -> one identity; bfloat16 -> a second */
	ck_assert_int_eq(count_prefix(kf, "COMPILER-GENERATED-id.", 0), 2);
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo,
				"COMPILER-GENERATED-id.float32", NULL));
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo,
				"COMPILER-GENERATED-id.bfloat16", NULL));
	ck_assert_int_eq(count_prefix(kf, "COMPILER-GENERATED-id.float32_"
				      "memset", 1), 1);
	ck_assert_int_eq(count_prefix(kf, "COMPILER-GENERATED-id.float32="
				      "IDAffineSelect(mask,fill=1)", 1), 1);
	{
		lm_inst *sel = find_inst(lo, "COMPILER-GENERATED-id.float32="
					 "IDAffineSelect(mask,fill=1)", NULL);
		ck_assert_int_eq(sel->op, LM_OP_AFFINESELECT);
		ck_assert(sel->fill_value == 1.0);
		ck_assert_int_eq(sel->alu, LM_ALU_NOT_EQUAL);
		ck_assert_int_eq((int)sel->channel_multiplier, -1);
	}
	/* the transposes are PE Matmults in transpose mode; into their
	   PSUM bank, one partition is 2048 bytes (512 float32) */
	ck_assert(find_inst(lo, "tr_a", NULL)->is_transpose);
	ck_assert_int_eq(find_inst(lo, "tr_a", NULL)->outs[0].ap[0].step, 512);
	ck_assert_int_eq(find_inst(lo, "tr_a", NULL)->op, LM_OP_MATMULT);
	/* the performance warning, once */
	ck_assert_int_eq(w.n, 1);
	ck_assert_contains(w.msgs[0], "Emitting dynamic Identity matrix "
			   "generation code, this might affect performance.");
	/* PSUM bank ids */
	ck_assert_int_eq((int)lm_module_find_alloc(lo, "pt", NULL)->memlocs[0].bank,
			 1);
	a = lm_module_find_alloc(lo, "COMPILER-GENERATED-transpose_psum_1", NULL);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq((int)a->memlocs[0].bank, 2);
	ck_assert_int_eq((int)a->memlocs[0].addr, 4096);
	/* budget from the codegen context */
	ck_assert_int_eq((int)call->psum_buf_shape[2], 3);
	ck_assert_int_eq((int)call->sb_buf_shape[1], 128);
	ck_assert_int_gt((int)call->sb_buf_shape[0], 1664);
	/* the empty KLR block is pruned; the section 9 I is placed */
	ck_assert_int_eq(kf->n_blocks, 2);
	ck_assert(lm_module_find_alloc(lo, "I", NULL)->memlocs[0].allocated);
	lm_module_free(lo);
	lm_module_free(m);
	lp_warnings_free(&w);
	free(dir);
}
END_TEST

START_TEST(test_klr_inline_runs)
{
	char *dir = tu_tmpdir("prov-a-run");
	lm_module *m = setup_a(dir, "a_caller.json", "k_all"), *lo;
	float a[64][32], tt[64][32];
	ls_result r;

	lo = tu_lower_ok(m, 1, NULL);
	ck_assert_int_eq(lo->n_functions, 1);
	run(lo, 64, 32, &r);
	/* the kernel's program, computed here */
	for (int p = 0; p < 64; p++)
		for (int j = 0; j < 32; j++) {
			float v, s;
			a[p][j] = xval(p, j);
			v = fmaf(a[p][j], 2.0f, 0.0f);
			v = v > 0 ? v : 0.0f;          /* relu, scale 2 */
			v = fmaf(v, 1.0f, 0.0f);       /* copy */
			s = v * 0.5f;
			s = s + 1.0f;                  /* tensor_scalar */
			tt[p][j] = s + (float)(p + j); /* + iota */
		}
	for (int p = 0; p < 64; p++)
		for (int j = 0; j < 32; j++)
			ck_assert_msg(tb_out(&r, "y1", p * 32 + j) == tt[p][j],
				      "y1[%d][%d]", p, j);
	for (int mm = 0; mm < 32; mm++)
		for (int n = 0; n < 32; n++) {
			float acc = 0.0f;
			for (int k = 0; k < 64; k++)
				acc = fmaf(tt[k][mm], a[k][n], acc);
			ck_assert_msg(tb_out(&r, "y_mm", mm * 32 + n) == acc,
				      "y_mm[%d][%d] = %g want %g", mm, n,
				      tb_out(&r, "y_mm", mm * 32 + n), acc);
		}
	for (int f = 0; f < 32; f++)
		for (int p = 0; p < 64; p++) {
			int i = f * 64 + p;
			ck_assert(tb_out(&r, "y2", i) == a[p][f]);
			ck_assert(tb_out(&r, "y3", i) == a[p][f]);
			ck_assert(tb_out(&r, "y4", i) ==
				  lm_round_to(LM_DT_BFLOAT16, a[p][f]));
			ck_assert(tb_out(&r, "y5", i) == tt[p][f]);
		}
	ls_result_free(&r);
	lm_module_free(lo);
	lm_module_free(m);
	free(dir);
}
END_TEST

START_TEST(test_two_kernels_one_module)
{
	char *dir = tu_tmpdir("prov-two");
	lm_module *m = setup_a(dir, "a_caller_small.json", "k_small"), *lo;
	lm_function *f = &m->functions[0];
	lm_block *b = &f->blocks[0];
	lm_alloc y2;
	lm_inst k2;
	ls_result r;

	/* a second carrier of the same kernel writing y2 */
	lm_alloc_copy(&y2, lm_module_find_alloc(m, "y", NULL));
	free(y2.name);
	free(y2.memlocs[0].name);
	y2.name = lm_xstrdup("y2");
	y2.memlocs[0].name = lm_xstrdup("y2");
	f->allocs = lm_xrealloc(f->allocs, (size_t)(f->n_allocs + 1) *
				sizeof *f->allocs);
	f->allocs[f->n_allocs++] = y2;
	lm_inst_copy(&k2, find_inst(m, "kern", NULL));
	free(k2.name);
	k2.name = lm_xstrdup("kern2");
	free(k2.func_outs[0].value);
	k2.func_outs[0].value = lm_xstrdup("y2");
	free(k2.outs[0].memsetref);
	free(k2.outs[0].memref);
	k2.outs[0].memsetref = lm_xstrdup("y2");
	k2.outs[0].memref = lm_xstrdup("y2");
	b->insts = lm_xrealloc(b->insts, (size_t)(b->n_insts + 1) *
			       sizeof *b->insts);
	b->insts[b->n_insts++] = k2;

	lo = tu_lower_ok(m, 0, NULL);
	ck_assert_ptr_nonnull(lm_module_find_function(lo, "k_small"));
	ck_assert_ptr_nonnull(lm_module_find_function(lo, "k_small_1"));
	ck_assert_ptr_nonnull(find_inst(lo, "inst__k_small", NULL));
	ck_assert_ptr_nonnull(find_inst(lo, "inst__k_small_1", NULL));
	/* each kernel has its own zero bias, with distinct ids */
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo,
				"COMPILER-GENERATED-zero_bias_act_0", NULL));
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo,
				"COMPILER-GENERATED-zero_bias_act_1", NULL));
	/* colliding kernel names were renamed */
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo, "t_1", NULL));
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo, "kin_1", NULL));
	ck_assert_str_eq(kv_get(find_inst(lo, "inst__k_small_1", NULL)->func_args,
				1, "kin_1"), "x");
	lm_module_free(lo);

	lo = tu_lower_ok(m, 1, NULL);
	run(lo, 128, 64, &r);
	for (int i = 0; i < 128 * 64; i += 5) {
		float v = fmaf(xval(i / 64, i % 64), 3.0f, 0.0f);
		v = v > 0 ? v : 0.0f;
		ck_assert(tb_out(&r, "y", i) == v);
		ck_assert(tb_out(&r, "y2", i) == v);
	}
	ls_result_free(&r);
	lm_module_free(lo);
	lm_module_free(m);
	free(dir);
}
END_TEST

START_TEST(test_klr_errors)
{
	char *dir = tu_tmpdir("prov-a-err");
	lm_module *m = setup_a(dir, "a_caller_small.json", "k_small");
	lm_inst *k = find_inst(m, "kern", NULL);
	char *p;
	lm_error err;

	/* missing file */
	free(k->klir_binary);
	k->klir_binary = lm_xstrdup("nope.klr");
	lower_fails(m, "fail to locate KLIR artifact");
	lower_fails(m, "function sg0000/block main/instruction kern");
	/* wrong version */
	tu_pack_klr("k_small", dir, "0.0.11");
	free(k->klir_binary);
	k->klir_binary = lm_xstrdup("k_small.klr");
	lower_fails(m, "Wrong KLR version 0.0.11");
	tu_pack_klr("k_small", dir, NULL);
	/* wrong content type: an hlo payload */
	{
		const char *t = "{\"contents\": {\"hlo\": \"h\"}}";
		lp_klr_file f;
		lm_buf b = LM_BUF_INIT;
		ck_assert_int_eq(lp_klr_from_json(&f, t, strlen(t), "h", &err), 0);
		ck_assert_int_eq(lp_klr_encode_file(&f, &b, &err), 0);
		p = lm_xasprintf("%s/hlo.klr", dir);
		ck_assert_int_eq(lm_write_file_atomic(p, b.ptr, b.size, &err), 0);
		/* truncated too */
		free(p);
		p = lm_xasprintf("%s/trunc.klr", dir);
		ck_assert_int_eq(lm_write_file_atomic(p, b.ptr, b.size - 1,
						      &err), 0);
		free(p);
		lm_buf_free(&b);
		lp_klr_file_free(&f);
	}
	free(k->klir_binary);
	k->klir_binary = lm_xstrdup("hlo.klr");
	lower_fails(m, "Wrong KLIR content type");
	free(k->klir_binary);
	k->klir_binary = lm_xstrdup("trunc.klr");
	lower_fails(m, "truncated CBOR");
	free(k->klir_binary);
	k->klir_binary = lm_xstrdup("k_small.klr");
	/* argument maps, per pair */
	free(k->func_args[0].key);
	k->func_args[0].key = lm_xstrdup("q");
	lower_fails(m, "q input cannot be found ");
	free(k->func_args[0].key);
	k->func_args[0].key = lm_xstrdup("kin");
	free(k->func_outs[0].key);
	k->func_outs[0].key = lm_xstrdup("r");
	lower_fails(m, "r output cannot be found ");
	free(k->func_outs[0].key);
	k->func_outs[0].key = lm_xstrdup("kout");
	free(k->func_outs[0].value);
	k->func_outs[0].value = lm_xstrdup("nowhere");
	lower_fails(m, "func_outs maps 'kout' to 'nowhere'");
	free(k->func_outs[0].value);
	k->func_outs[0].value = lm_xstrdup("y");
	/* an operator the codegen does not lower */
	tu_pack_klr("k_unsupported", dir, NULL);
	free(k->klir_binary);
	k->klir_binary = lm_xstrdup("k_unsupported.klr");
	lower_fails(m, "operator 'loadStationary' (serde tag 160) is not "
		    "supported by the KLR lowering");
	lower_fails(m, "kernel k_unsup/block main/statement #0 dt");
	lm_module_free(m);
	free(dir);
}
END_TEST

START_TEST(test_inline_errors)
{
	lm_module *m = load_fx("b_caller.json"), *lo;
	lm_inst *call;
	lm_error err;
	lo = tu_lower_ok(m, 0, NULL);
	call = find_inst(lo, "inst__relu_k", NULL);
	/* bind the DRAM formal to the caller's SB tensor */
	free(call->func_args[0].value);
	call->func_args[0].value = lm_xstrdup("t");
	ck_assert_int_ne(lp_inline_nki(lo, &err), 0);
	ck_assert_contains(err.msg, "cannot bind formal 'kin'");
	lm_module_free(lo);
	lo = tu_lower_ok(m, 0, NULL);
	call = find_inst(lo, "inst__relu_k", NULL);
	free(call->func);
	call->func = lm_xstrdup("ghost");
	ck_assert_int_ne(lp_inline_nki(lo, &err), 0);
	ck_assert_contains(err.msg, "NKIKernel calls 'ghost', which is not a "
			   "function of the module");
	lm_module_free(lo);
	lm_module_free(m);
}
END_TEST

START_TEST(test_called_form_in_simulator)
{
	/* The simulator executes IT55: the called form runs (its bits are
	** compared with the inlined form's in tests/test_it55.c). */
	lm_module *m = load_fx("b_caller.json"), *lo = tu_lower_ok(m, 0, NULL);
	ls_tensors in = { 0, NULL };
	ls_options o;
	ls_result r;
	lm_error err;
	int64_t shape[2] = { 128, 64 };
	float *x = lm_xcalloc(128 * 64, sizeof *x);
	int rc;
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	memset(&o, 0, sizeof o);
	memset(&r, 0, sizeof r);
	rc = ls_run(lo, &in, &o, &r, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	ls_result_free(&r);
	ls_tensors_free(&in);
	free(x);
	lm_module_free(lo);
	lm_module_free(m);
}
END_TEST

/* ---- the command ----------------------------------------------------------------- */

START_TEST(test_cli_lower)
{
	char *dir = tu_tmpdir("prov-cli");
	char *out, *t;
	tu_run r;
	tu_copy_fixture("provision", "b_caller.json", dir);
	tu_copy_fixture("provision", "b_kernel.json", dir);
	tu_copy_fixture("provision", "w.npy", dir);
	tu_copy_fixture("provision", "b_caller_lnc2.json", dir);
	tu_copy_fixture("provision", "b_lnc2.json", dir);

	/* default output beside the input */
	r = tu_lncsim(dir, "lower", "b_caller.json", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "b_caller.lowered.json: 1 kernel carrier: 1 "
			   "lowered, 0 skipped");
	tu_run_free(&r);
	out = lm_xasprintf("%s/b_caller.lowered.json", dir);
	t = tu_read(out);
	ck_assert_contains(t, "\"inst__relu_k\"");
	ck_assert_contains(t, "\"Beta3\"");
	free(t);
	free(out);
	r = tu_lncsim(dir, "verify", "b_caller.lowered.json", NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);

	/* -o elsewhere with --inline; the result runs */
	r = tu_lncsim(dir, "lower", "--inline", "-o", "sub/low.json",
		      "b_caller.json", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "lowered and inlined");
	tu_run_free(&r);
	out = lm_xasprintf("%s/sub/relu_k.const/w.npy", dir);
	ck_assert_int_eq(access(out, R_OK), 0);
	free(out);
	r = tu_lncsim(dir, "run", "--no-db", "--seed", "2", "sub/low.json",
		      NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);

	/* the LNC gate from the command line */
	r = tu_lncsim(dir, "lower", "b_caller_lnc2.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: b_caller_lnc2.json: function sg0000"
			   "/block main/instruction kern: NeuronCoreId must be "
			   "set when the LNC count is greater than 1");
	tu_run_free(&r);

	/* per-core directories: core 0 and core 1 of the LNC=2 kernel, and
	** core 2 skipped with a warning */
	for (int c = 0; c < 3; c++) {
		char *sub = lm_xasprintf("cores/nc%d/sg0", c);
		char *full = lm_xasprintf("%s/%s", dir, sub), *json;
		lm_module *m;
		lm_error err;
		ck_assert_int_eq(lm_mkdirs(full, &err), 0);
		m = load_fx("b_caller_lnc2.json");
		m->has_core_id = 1;
		m->neuron_core_id = c;
		free(find_inst(m, "kern", NULL)->klir_binary);
		find_inst(m, "kern", NULL)->klir_binary =
			lm_xstrdup("../../../b_lnc2.json");
		json = lm_xasprintf("%s/def.json", full);
		ck_assert_int_eq(lm_module_save(m, json, 1, &err), 0);
		lm_module_free(m);
		free(json);
		free(sub);
		free(full);
	}
	r = tu_lncsim(dir, "lower", "-o", "lowered", "cores", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "lowered/nc0/sg0/def.json: 1 kernel carrier: "
			   "1 lowered, 0 skipped");
	ck_assert_contains(r.out, "lowered/nc2/sg0/def.json: 1 kernel carrier: "
			   "0 lowered, 1 skipped");
	ck_assert_contains(r.err, "lncsim: warning: ../../../b_lnc2.json: The "
			   "kernel is compiled for LNC count lower than the "
			   "current core_id 2 skip lowering");
	tu_run_free(&r);
	out = lm_xasprintf("%s/lowered/nc1/sg0/def.json", dir);
	t = tu_read(out);
	ck_assert_contains(t, "\"lnc_k1\"");
	free(t);
	free(out);

	/* errors */
	r = tu_lncsim(dir, "lower", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "no MODULE given");
	tu_run_free(&r);
	r = tu_lncsim(dir, "lower", "--frob", "b_caller.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "unknown option '--frob'");
	tu_run_free(&r);
	r = tu_lncsim(dir, "lower", "nothere.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "nothere.json");
	tu_run_free(&r);
	r = tu_lncsim(dir, "lower", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "usage: lncsim lower");
	tu_run_free(&r);
	free(dir);
}
END_TEST

START_TEST(test_cli_lower_klr)
{
	char *dir = tu_tmpdir("prov-cli-a");
	tu_run r;
	tu_copy_fixture("provision", "a_caller.json", dir);
	tu_pack_klr("k_all", dir, NULL);
	r = tu_lncsim(dir, "lower", "--inline", "-o", "a.json",
		      "a_caller.json", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.err, "lncsim: warning: ");
	ck_assert_contains(r.err, "Emitting dynamic Identity matrix");
	tu_run_free(&r);
	r = tu_lncsim(dir, "run", "--no-db", "--seed", "5", "a.json", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	/* a missing kernel file */
	tu_pack_klr("k_all", dir, NULL);
	unlink("k_all.klr");
	{
		char *k = lm_xasprintf("%s/k_all.klr", dir);
		unlink(k);
		free(k);
	}
	r = tu_lncsim(dir, "lower", "a_caller.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "fail to locate KLIR artifact");
	tu_run_free(&r);
	free(dir);
}
END_TEST

START_TEST(test_cli_two_cores_link_diff)
{
	/* core 0 carries a BIR-JSON kernel, core 1 a KLR kernel; both lower,
	** inline, link and pass the differential check */
	char *dir = tu_tmpdir("prov-two-cores");
	const char *callers[2] = { "b_caller.json", "a_caller_small.json" };
	const char *kern[2] = { "\"b_kernel.json\"", "\"k_small.klr\"" };
	tu_run r;
	tu_copy_fixture("provision", "b_kernel.json", dir);
	tu_copy_fixture("provision", "w.npy", dir);
	tu_pack_klr("k_small", dir, NULL);
	for (int c = 0; c < 2; c++) {
		char *p = tu_fixture("provision", callers[c]), *t = tu_read(p), *t2, *t3, *t4;
		char *sub = lm_xasprintf("cores/nc%d/sg0", c);
		char *yname = lm_xasprintf("\"y%d\"", c);
		char *kpath = lm_xasprintf("\"../../../%.*s\"",
					   (int)strlen(kern[c]) - 2, kern[c] + 1);
		char *core = lm_xasprintf("\"neuron_core_id\": %d", c);
		char *path;
		t2 = tu_replace_all(t, "\"y\"", yname);
		t3 = tu_replace_all(t2, kern[c], kpath);
		t4 = tu_replace_all(t3, "\"neuron_core_id\": 0", core);
		path = lm_xasprintf("%s/def.json", sub);
		free(tu_write(dir, path, t4));
		free(path);
		free(p); free(t); free(t2); free(t3); free(t4);
		free(sub); free(yname); free(kpath); free(core);
	}
	r = tu_lncsim(dir, "lower", "--inline", "-o", "low", "cores", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(dir, "diff", "--no-db", "low", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	ck_assert_contains(r.out, "2 outputs bit-identical");
	tu_run_free(&r);
	free(dir);
}
END_TEST

/* ---- PSUM accumulation groups ---------------------------------------------- */

/* Remove the test's temporary directory (files only) and free its name. */
static void rm_tmpdir(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		char *p;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = lm_xasprintf("%s/%s", dir, e->d_name);
		ck_assert_msg(unlink(p) == 0, "cannot remove %s", p);
		free(p);
	}
	closedir(d);
	ck_assert_int_eq(rmdir(dir), 0);
	free(dir);
}

/* A TensorName of kernel k_small's shape conventions (float32, 2-D). */
static char *tn(const char *name, const char *mem, int par, int fr)
{
	return lm_xasprintf("{\"name\": \"%s\", \"dtype\": \"float32\", "
			    "\"shape\": {\"parDim\": %d, \"freeDims\": [%d]}, "
			    "\"address\": {\"name\": \"%s\", \"memory\": \"%s\", "
			    "\"parSize\": 128, \"freeSize\": %d}}", name, par,
			    fr, name, mem, strcmp(mem, "hbm") ? fr * 4 : 256);
}

/* A birPattern operand: [par x fr] at element offset off, row step. */
static char *opnd(const char *tensor, int off, int step, int par, int fr)
{
	return lm_xasprintf("{\"abstract\": {\"birPattern\": {\"tensor\": %s, "
			    "\"offset\": %d, \"pattern\": [{\"step\": %d, "
			    "\"num\": %d}, {\"step\": 1, \"num\": %d}]}}}",
			    tensor, off, step, par, fr);
}

/*
** The accumulation kernels read kin = x [128, 64] into SBUF xs; K tile t
** (t = 0, 1, 2) is A_t = xs[:, 16t : 16t+16] (stationary) and B_t =
** xs[:, 16t+16 : 16t+32] (moving), so one group over the three tiles is
** A^T B with A, B of 384 rows. `flag` is "" or a ", \"psumAccumulateFlag\":
** N" member for the matmuls (the schema generation that carried it).
*/
static char *mm_stmt(const char *name, const char *dst, int t,
		     const char *flag)
{
	char *xs = tn("xs", "sbuf", 128, 64);
	char *st = opnd(xs, 16 * t, 64, 128, 16);
	char *mv = opnd(xs, 16 * t + 16, 64, 128, 16);
	char *r = lm_xasprintf("{\"name\": \"%s\", \"op\": {\"ncMatMul\": "
			       "{\"dst\": %s, \"stationary\": %s, \"moving\": "
			       "%s%s}}}", name, dst, st, mv, flag);
	free(xs);
	free(st);
	free(mv);
	return r;
}

/* ncCopy psum tile -> sbuf tile ys, then DMA ys -> kout[0:16, col:col+16]. */
static char *evac_stmts(const char *tag, const char *psum, const char *ys,
			int col)
{
	char *pt = tn(psum, "psum", 16, 16), *st = tn(ys, "sbuf", 16, 16);
	char *ko = tn("kout", "hbm", 128, 64);
	char *src = opnd(pt, 0, 16, 16, 16), *dst = opnd(st, 0, 16, 16, 16);
	char *hb = opnd(ko, col, 64, 16, 16);
	char *r = lm_xasprintf("{\"name\": \"cp_%s\", \"op\": {\"ncCopy\": "
			       "{\"dst\": %s, \"src\": %s}}}, {\"name\": "
			       "\"st_%s\", \"op\": {\"ncDmaCopy\": {\"dst\": "
			       "%s, \"src\": %s}}}", tag, dst, src, tag, hb,
			       dst);
	free(pt); free(st); free(ko); free(src); free(dst); free(hb);
	return r;
}

/* The whole kernel JSON around the statements `body` (after the load). */
static char *acc_kernel(const char *body)
{
	char *kin = tn("kin", "hbm", 128, 64), *kout = tn("kout", "hbm", 128, 64);
	char *xs = tn("xs", "sbuf", 128, 64);
	char *ld_dst = opnd(xs, 0, 64, 128, 64), *ld_src = opnd(kin, 0, 64, 128, 64);
	char *r = lm_xasprintf("{\"contents\": {\"lnc\": {\"name\": \"k_acc\", "
			       "\"inputs\": [%s], \"outputs\": [%s], "
			       "\"bodies\": [[{\"label\": \"main\", \"body\": "
			       "[{\"name\": \"ld\", \"op\": {\"ncDmaCopy\": "
			       "{\"dst\": %s, \"src\": %s}}}, %s]}]]}}}", kin,
			       kout, ld_dst, ld_src, body);
	free(kin); free(kout); free(xs); free(ld_dst); free(ld_src);
	return r;
}

/* The matmul dst operand on PSUM tile `psum` [16, 16]. */
static char *ps_dst(const char *psum)
{
	char *pt = tn(psum, "psum", 16, 16), *r = opnd(pt, 0, 16, 16, 16);
	free(pt);
	return r;
}

/* Three K tiles into one PSUM tile, then its evacuation to kout[:, 0:16]. */
static char *acc3_kernel(const char *flag)
{
	char *d = ps_dst("ps"), *m0 = mm_stmt("mm0", d, 0, flag);
	char *m1 = mm_stmt("mm1", d, 1, flag), *m2 = mm_stmt("mm2", d, 2, flag);
	char *ev = evac_stmts("a", "ps", "ys", 0);
	char *body = lm_xasprintf("%s, %s, %s, %s", m0, m1, m2, ev);
	char *r = acc_kernel(body);
	free(d); free(m0); free(m1); free(m2); free(ev); free(body);
	return r;
}

/*
** Separate groups: mm0 -> ps, read (cp_a), mm1 -> ps again (flag1 on it),
** read (cp_b); then mm2 -> ps2, mm3 -> ps3, mm4 -> ps2 (interleaved groups
** on two tiles), both read. kout[:, 0:16] = ps after mm0, [16:32] = ps
** after mm1, [32:48] = ps2, [48:64] = ps3.
*/
static char *sep_kernel(const char *flag1)
{
	char *d = ps_dst("ps"), *d2 = ps_dst("ps2"), *d3 = ps_dst("ps3");
	char *m0 = mm_stmt("mm0", d, 0, ""), *m1 = mm_stmt("mm1", d, 1, flag1);
	char *m2 = mm_stmt("mm2", d2, 2, ""), *m3 = mm_stmt("mm3", d3, 0, "");
	char *m4 = mm_stmt("mm4", d2, 1, "");
	char *ea = evac_stmts("a", "ps", "ys", 0);
	char *eb = evac_stmts("b", "ps", "ys1", 16);
	char *ec = evac_stmts("c", "ps2", "ys2", 32);
	char *ed = evac_stmts("d", "ps3", "ys3", 48);
	char *body = lm_xasprintf("%s, %s, %s, %s, %s, %s, %s, %s, %s", m0, ea,
				  m1, eb, m2, m3, m4, ec, ed);
	char *r = acc_kernel(body);
	free(d); free(d2); free(d3); free(m0); free(m1); free(m2); free(m3);
	free(m4); free(ea); free(eb); free(ec); free(ed); free(body);
	return r;
}

/* Pack kernel JSON text as dir/k_small.klr (the name the caller uses). */
static void pack_text(const char *json, const char *dir)
{
	char *out = lm_xasprintf("%s/k_small.klr", dir);
	lp_klr_file f;
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	ck_assert_msg(lp_klr_from_json(&f, json, strlen(json), "k_acc.json",
				       &err) == 0, "%s", err.msg);
	ck_assert_int_eq(lp_klr_encode_file(&f, &b, &err), 0);
	ck_assert_int_eq(lm_write_file_atomic(out, b.ptr, b.size, &err), 0);
	lm_buf_free(&b);
	lp_klr_file_free(&f);
	free(out);
}

/*
** Caller a_caller_small.json + kernel JSON text, ready to lower. These
** kernels write only the blocks of y they check, so y is marked
** "partial_output" (an unwritten element of an output is otherwise a run
** error).
*/
static lm_module *setup_text(const char *dir, const char *json)
{
	char *p = lm_xasprintf("%s/a_caller_small.json", dir);
	lm_module *m;
	lm_alloc *y;
	tu_copy_fixture("provision", "a_caller_small.json", dir);
	pack_text(json, dir);
	m = tu_load(p);
	free(p);
	y = lm_module_find_alloc(m, "y", NULL);
	ck_assert(y != NULL);
	if (!y->extra)
		y->extra = cJSON_CreateObject();
	cJSON_AddTrueToObject(y->extra, "partial_output");
	return m;
}

/* acc[m][n] continued over K tiles t of the list, k = 0..127 in order. */
static float mm_ref(const int *tiles, int n_tiles, int m, int n)
{
	float acc = 0.0f;
	for (int i = 0; i < n_tiles; i++)
		for (int k = 0; k < 128; k++)
			acc = fmaf(xval(k, 16 * tiles[i] + m),
				   xval(k, 16 * tiles[i] + 16 + n), acc);
	return acc;
}

/* kout[0:16, col:col+16] equals the chain over tiles, bit for bit. */
static void check_block(const ls_result *r, int col, const int *tiles,
			int n_tiles)
{
	for (int m = 0; m < 16; m++)
		for (int n = 0; n < 16; n++) {
			float got = tb_out(r, "y", m * 64 + col + n);
			float want = mm_ref(tiles, n_tiles, m, n);
			ck_assert_msg(got == want, "y[%d][%d] = %.9g, want %.9g",
				      m, col + n, got, want);
		}
}

/* start / stop bits of the Matmult named name. */
static void check_bits(const lm_module *lo, const char *name, int start,
		       int stop)
{
	lm_inst *in = find_inst(lo, name, NULL);
	ck_assert_msg(in != NULL, "no instruction %s", name);
	ck_assert_int_eq(in->op, LM_OP_MATMULT);
	ck_assert_msg(in->start_tensor_calc == start, "%s start_tensor_calc "
		      "%d, want %d", name, in->start_tensor_calc, start);
	ck_assert(in->has_stop_tensor_calc);
	ck_assert_msg(in->stop_tensor_calc == stop, "%s stop_tensor_calc %d, "
		      "want %d", name, in->stop_tensor_calc, stop);
}

/*
** The partition pair's step of a lowered operand is pe, the elements of
** one partition of the memory location it addresses, not the tensor's row:
** xs holds 64 float32 per partition in a 512-byte partition (pe 128). The
** copy through it runs (the walk strides one partition).
*/
START_TEST(test_klr_partition_step_is_pe)
{
	char *dir = tu_tmpdir("prov-pe");
	char *kin = tn("kin", "hbm", 128, 64), *kout = tn("kout", "hbm", 128, 64);
	char *xs = lm_xstrdup("{\"name\": \"xs\", \"dtype\": \"float32\", "
			      "\"shape\": {\"parDim\": 128, \"freeDims\": [64]}, "
			      "\"address\": {\"name\": \"xs\", \"memory\": "
			      "\"sbuf\", \"parSize\": 128, \"freeSize\": 512}}");
	char *a = opnd(kin, 0, 64, 128, 64), *b = opnd(xs, 0, 64, 128, 64);
	char *c = opnd(kout, 0, 64, 128, 64);
	char *k = lm_xasprintf("{\"contents\": {\"lnc\": {\"name\": \"k_pe\", "
			       "\"inputs\": [%s], \"outputs\": [%s], \"bodies\": "
			       "[[{\"label\": \"main\", \"body\": [{\"name\": "
			       "\"ld\", \"op\": {\"ncDmaCopy\": {\"dst\": %s, "
			       "\"src\": %s}}}, {\"name\": \"st\", \"op\": "
			       "{\"ncDmaCopy\": {\"dst\": %s, \"src\": %s}}}]}]]}}}",
			       kin, kout, b, a, c, b);
	lm_module *m = setup_text(dir, k), *lo;
	lm_inst *ld, *st;
	ls_result r;
	lo = tu_lower_ok(m, 0, NULL);
	ld = find_inst(lo, "ld", NULL);
	st = find_inst(lo, "st", NULL);
	ck_assert_int_eq(lm_module_find_alloc(lo, "xs", NULL)->memlocs[0].dims[1],
			 512);
	ck_assert_int_eq(ld->outs[0].ap[0].step, 128);
	ck_assert_int_eq(st->ins[0].ap[0].step, 128);
	ck_assert_int_eq(ld->ins[0].ap[0].step, 64); /* DRAM: the row */
	lm_module_free(lo);
	lo = tu_lower_ok(m, 1, NULL);
	run(lo, 128, 64, &r);
	for (int p = 0; p < 128; p++)
		for (int j = 0; j < 64; j++)
			ck_assert(tb_out(&r, "y", p * 64 + j) == xval(p, j));
	ls_result_free(&r);
	lm_module_free(lo);
	lm_module_free(m);
	free(kin); free(kout); free(xs); free(a); free(b); free(c); free(k);
	rm_tmpdir(dir);
}
END_TEST

START_TEST(test_klr_psum_accumulate_3_tiles)
{
	/* with no flag (KLR at HEAD) and with the tracer's default flag 3 */
	const char *flags[2] = { "", ", \"psumAccumulateFlag\": 3" };
	const int all[3] = { 0, 1, 2 };
	for (int v = 0; v < 2; v++) {
		char *dir = tu_tmpdir("prov-acc3"), *k = acc3_kernel(flags[v]);
		lm_module *m = setup_text(dir, k), *lo;
		ls_result r;
		lo = tu_lower_ok(m, 0, NULL);
		check_bits(lo, "mm0", 1, 0);
		check_bits(lo, "mm1", 0, 0);
		check_bits(lo, "mm2", 0, 1);
		lm_module_free(lo);
		lo = tu_lower_ok(m, 1, NULL);
		run(lo, 128, 64, &r);
		/* one fmaf chain over the 384-deep contraction, as here */
		check_block(&r, 0, all, 3);
		ls_result_free(&r);
		lm_module_free(lo);
		lm_module_free(m);
		free(k);
		rm_tmpdir(dir);
	}
}
END_TEST

START_TEST(test_klr_psum_separate_groups)
{
	const int t0[1] = { 0 }, t1[1] = { 1 }, t01[2] = { 0, 1 };
	const int t21[2] = { 2, 1 };
	for (int v = 0; v < 2; v++) {
		/* v = 1: mm1 says '+=' (flag 128) and accumulates after the read */
		char *dir = tu_tmpdir("prov-sep");
		char *k = sep_kernel(v ? ", \"psumAccumulateFlag\": 128" : "");
		lm_module *m = setup_text(dir, k), *lo;
		ls_result r;
		lo = tu_lower_ok(m, 0, NULL);
		check_bits(lo, "mm0", 1, 1);
		check_bits(lo, "mm1", v ? 0 : 1, 1);
		check_bits(lo, "mm2", 1, 0);
		check_bits(lo, "mm3", 1, 1);
		check_bits(lo, "mm4", 0, 1);
		lm_module_free(lo);
		lo = tu_lower_ok(m, 1, NULL);
		run(lo, 128, 64, &r);
		check_block(&r, 0, t0, 1);
		if (v)
			check_block(&r, 16, t01, 2);
		else
			check_block(&r, 16, t1, 1);
		check_block(&r, 32, t21, 2);
		check_block(&r, 48, t0, 1);
		ls_result_free(&r);
		lm_module_free(lo);
		lm_module_free(m);
		free(k);
		rm_tmpdir(dir);
	}
}
END_TEST

START_TEST(test_klr_psum_flag_refused)
{
	char *dir = tu_tmpdir("prov-flag"), *k;
	lm_module *m;
	k = acc3_kernel(", \"psumAccumulateFlag\": 5");
	m = setup_text(dir, k);
	lower_fails(m, "ncMatMul psumAccumulateFlag 5 is not modelled "
		    "(lncsim models 3, the default, and 128, the '+=' form)");
	lower_fails(m, "kernel k_acc/block main/statement #1 mm0");
	lm_module_free(m);
	free(k);
	rm_tmpdir(dir);
}
END_TEST

/* ---- NaN and Inf through each operator class ------------------------------ */

/* A TensorName of any dtype. */
static char *tnd(const char *name, const char *mem, const char *dt, int par,
		 int fr)
{
	int es = !strcmp(dt, "float32") ? 4 : !strcmp(dt, "bfloat16") ? 2 : 1;
	return lm_xasprintf("{\"name\": \"%s\", \"dtype\": \"%s\", "
			    "\"shape\": {\"parDim\": %d, \"freeDims\": [%d]}, "
			    "\"address\": {\"name\": \"%s\", \"memory\": \"%s\", "
			    "\"parSize\": 128, \"freeSize\": %d}}", name, dt,
			    par, fr, name, mem, strcmp(mem, "hbm") ? fr * es
								    : 256);
}

/* Operand: [16 x 16] block at (row, col) of a [par, 64] float32 tile. */
static char *blk64(const char *name, const char *mem, int par, int row,
		   int col)
{
	char *t = tnd(name, mem, "float32", par, 64);
	char *r = opnd(t, row * 64 + col, 64, 16, 16);
	free(t);
	return r;
}

/* Operand: a whole [16 x 16] tile of dtype dt. */
static char *tile16(const char *name, const char *mem, const char *dt)
{
	char *t = tnd(name, mem, dt, 16, 16), *r = opnd(t, 0, 16, 16, 16);
	free(t);
	return r;
}

/* One statement {"name": name, "op": {op: {fields}}}; frees fields. */
static char *stmt(const char *name, const char *op, char *fields)
{
	char *r = lm_xasprintf("{\"name\": \"%s\", \"op\": {\"%s\": {%s}}}",
			       name, op, fields);
	free(fields);
	return r;
}

/*
** The NaN kernel: xs = kin [128, 64] in SBUF; A = xs[0:16, 0:16] holds the
** specials, B = xs[0:16, 16:32] is finite. Each operator class writes one
** 16 x 16 block of ys [48, 64] (blocks numbered row-major, 4 per row
** band); ys goes to kout[0:48, :].
*/
static char *nan_kernel(void)
{
	char *A = blk64("xs", "sbuf", 128, 0, 0), *B = blk64("xs", "sbuf", 128, 0, 16);
	char *ys[12], *st[20], *body, *r;
	char *xb = tile16("xb", "sbuf", "bfloat16");
	char *x8 = tile16("x8", "sbuf", "float8e4");
	char *pm = tile16("pm", "psum", "float32");
	char *kin = tnd("kin", "hbm", "float32", 128, 64);
	char *kout = tnd("kout", "hbm", "float32", 128, 64);
	char *xs = tnd("xs", "sbuf", "float32", 128, 64);
	char *ysf = tnd("ys", "sbuf", "float32", 48, 64);
	char *xs_all = opnd(xs, 0, 64, 128, 64), *kin_all = opnd(kin, 0, 64, 128, 64);
	char *ys_all = opnd(ysf, 0, 64, 48, 64), *kout48 = opnd(kout, 0, 64, 48, 64);
	const char *one = "\"scale\": {\"imm\": {\"float\": 1.0}}";
	lm_buf b = LM_BUF_INIT;
	int n = 0;

	for (int i = 0; i < 12; i++)
		ys[i] = blk64("ys", "sbuf", 48, 16 * (i / 4), 16 * (i % 4));
	st[n++] = stmt("ld", "ncDmaCopy", lm_xasprintf("\"dst\": %s, \"src\": "
						      "%s", xs_all, kin_all));
	/* 0: DMA, same dtype */
	st[n++] = stmt("dma", "ncDmaCopy", lm_xasprintf("\"dst\": %s, \"src\": "
						       "%s", ys[0], A));
	/* 1: DMA to bfloat16 and back */
	st[n++] = stmt("dma_bf", "ncDmaCopy", lm_xasprintf("\"dst\": %s, "
							  "\"src\": %s", xb, A));
	st[n++] = stmt("dma_bf2", "ncDmaCopy", lm_xasprintf("\"dst\": %s, "
							   "\"src\": %s", ys[1], xb));
	/* 2: tensor copy cast to float8e4 and back */
	st[n++] = stmt("cp8", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s",
						     x8, A));
	st[n++] = stmt("cp8b", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s",
						      ys[2], x8));
	/* 3, 4: activation copy, relu */
	st[n++] = stmt("act", "ncActivate", lm_xasprintf(
		"\"dst\": %s, \"src\": %s, \"activationFunc\": \"copy\", %s",
		ys[3], A, one));
	st[n++] = stmt("relu", "ncActivate", lm_xasprintf(
		"\"dst\": %s, \"src\": %s, \"activationFunc\": \"relu\", %s",
		ys[4], A, one));
	/* 5, 6, 10: tensor-tensor add, max, is_equal */
	st[n++] = stmt("tt_add", "tensorTensor", lm_xasprintf(
		"\"dst\": %s, \"src0\": %s, \"src1\": %s, \"op\": \"add\"",
		ys[5], A, B));
	st[n++] = stmt("tt_max", "tensorTensor", lm_xasprintf(
		"\"dst\": %s, \"src0\": %s, \"src1\": %s, \"op\": \"max\"",
		ys[6], A, B));
	st[n++] = stmt("tt_eq", "tensorTensor", lm_xasprintf(
		"\"dst\": %s, \"src0\": %s, \"src1\": %s, \"op\": \"is_equal\"",
		ys[10], A, A));
	/* 7: tensor-scalar mult by -2; 11: tensor-scalar max with 0 */
	st[n++] = stmt("ts_mul", "tensorScalar", lm_xasprintf(
		"\"dst\": %s, \"src\": %s, \"imm0\": {\"imm\": {\"float\": "
		"-2.0}}, \"op0\": \"mult\"", ys[7], A));
	st[n++] = stmt("ts_max", "tensorScalar", lm_xasprintf(
		"\"dst\": %s, \"src\": %s, \"imm0\": {\"imm\": {\"float\": "
		"0.0}}, \"op0\": \"max\"", ys[11], A));
	/* 8: transpose; 9: matmul A^T B */
	st[n++] = stmt("tr", "transpose", lm_xasprintf("\"dst\": %s, \"src\": %s",
						       ys[8], A));
	st[n++] = stmt("mm", "ncMatMul", lm_xasprintf(
		"\"dst\": %s, \"stationary\": %s, \"moving\": %s", pm, A, B));
	st[n++] = stmt("mm_cp", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s",
						       ys[9], pm));
	st[n++] = stmt("st", "ncDmaCopy", lm_xasprintf("\"dst\": %s, \"src\": "
						      "%s", kout48, ys_all));
	for (int i = 0; i < n; i++) {
		lm_buf_puts(&b, i ? ", " : "");
		lm_buf_puts(&b, st[i]);
		free(st[i]);
	}
	body = lm_buf_detach(&b);
	r = lm_xasprintf("{\"contents\": {\"lnc\": {\"name\": \"k_nan\", "
			 "\"inputs\": [%s], \"outputs\": [%s], \"bodies\": "
			 "[[{\"label\": \"main\", \"body\": [%s]}]]}}}", kin, kout,
			 body);
	for (int i = 0; i < 12; i++)
		free(ys[i]);
	free(A); free(B); free(xb); free(x8); free(pm); free(kin); free(kout);
	free(xs); free(ysf); free(xs_all); free(kin_all); free(ys_all);
	free(kout48); free(body);
	return r;
}

/* Bits of kout[row][col]. */
static uint32_t out_bits(const ls_result *r, int row, int col)
{
	return lm_f32_bits(tb_out(r, "y", row * 64 + col));
}

/*
** NaN and Inf through each operator class, as docs/dtypes.md states:
** data movement is bit for bit; conversions quiet the NaN and keep its
** sign (payload cut to the narrow format); arithmetic returns the NaN
** operand quieted; max / min return it as it is; comparisons say unequal.
*/
START_TEST(test_klr_nan_per_operator)
{
	/* the specials, on the diagonal of block A */
	static const uint32_t sp[5] = { 0x7fc12345u, 0xffc00001u, 0x7f800123u,
					0x7f800000u, 0xff800000u };
	char *dir = tu_tmpdir("prov-nan"), *k = nan_kernel();
	lm_module *m = setup_text(dir, k), *lo;
	ls_tensors in = { 0, NULL };
	ls_options o;
	ls_result r;
	lm_error err;
	int64_t shape[2] = { 128, 64 };
	float *x = lm_xmalloc(128 * 64 * sizeof *x);

	for (int p = 0; p < 128; p++)
		for (int j = 0; j < 64; j++)
			x[p * 64 + j] = xval(p, j);
	for (int i = 0; i < 5; i++)
		x[i * 64 + i] = lm_bits_f32(sp[i]);
	lo = tu_lower_ok(m, 1, NULL);
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	memset(&o, 0, sizeof o);
	ck_assert_msg(ls_run(lo, &in, &o, &r, &err) == 0, "run: %s", err.msg);
	for (int i = 0; i < 5; i++) {
		uint32_t v = sp[i], sgn = v & 0x80000000u, q = v | 0x00400000u;
		int nan = (v & 0x7fffffffu) > 0x7f800000u, neg = sgn != 0;
		uint32_t bv = lm_f32_bits(xval(i, 16 + i));
		/* data movement: bit for bit, a signalling NaN included */
		ck_assert_uint_eq(out_bits(&r, i, i), v);               /* DMA */
		ck_assert_uint_eq(out_bits(&r, 32 + i, i), v);          /* transpose */
		/* DMA through bfloat16: quiet, payload cut to 7 bits, sign kept */
		ck_assert_uint_eq(out_bits(&r, i, 16 + i),
				  nan ? ((v & 0xffff0000u) | 0x00400000u) : v);
		/* cast through float8e4: the NaN of the sign; Inf saturates */
		ck_assert_uint_eq(out_bits(&r, i, 32 + i),
				  nan ? sgn | 0x7fc00000u : sgn | 0x43e00000u);
		/* arithmetic: the NaN operand, quieted, sign and payload kept */
		ck_assert_uint_eq(out_bits(&r, i, 48 + i), nan ? q : v);      /* act copy */
		ck_assert_uint_eq(out_bits(&r, 16 + i, 16 + i), nan ? q : v); /* add */
		ck_assert_uint_eq(out_bits(&r, 16 + i, 48 + i),              /* * -2 */
				  nan ? q : v ^ 0x80000000u);
		ck_assert_uint_eq(out_bits(&r, 16 + i, i),                   /* relu */
				  nan ? q : neg ? 0u : v);
		/* max: the NaN operand itself (a signalling NaN stays so) */
		ck_assert_uint_eq(out_bits(&r, 16 + i, 32 + i),
				  nan || !neg ? v : bv);
		ck_assert_uint_eq(out_bits(&r, 32 + i, 48 + i),
				  nan || !neg ? v : 0u);
		/* comparisons: a NaN is unequal to itself */
		ck_assert_uint_eq(out_bits(&r, 32 + i, 32 + i),
				  nan ? 0u : 0x3f800000u);
		/* matmul: a NaN of the stationary reaches its whole output row,
		** quieted, sign and payload kept */
		for (int c = 0; nan && c < 16; c++)
			ck_assert_uint_eq(out_bits(&r, 32 + i, 16 + c), q);
	}
	ls_result_free(&r);
	ls_tensors_free(&in);
	free(x);
	lm_module_free(lo);
	lm_module_free(m);
	free(k);
	rm_tmpdir(dir);
}
END_TEST

/* ---- registers and opaque operands through provision and inlining -------- */

/* JSON text written with ' for "; caller frees. */
static char *dq(const char *s)
{
	return tu_replace_all(s, "'", "\"");
}

/* A physical operand on the whole [128, 64] float32 tensor t. */
#define REG_AP(t) "{'kind':'physical_ap','ap':[[64,128],[1,64]],"       \
	"'dtype':'float32','offset':0,'memsetref':'" t "','memref':'" t "'}"
/* [128, 64] float32 tensors and a register (REG memory location). */
#define REG_DRAM(n, k) "{'name':'" n "','kind':'" k "','dtype':'float32',"  \
	"'tensor_shape':[128,64],'addr_space':'Shared','file':'',"         \
	"'memorylocations':[{'name':'" n "','type':'DRAM','addr':0,"       \
	"'dims':[128,256],'bank':0,'base':0,'allocated':true}]}"
#define REG_SB(n) "{'name':'" n "','kind':'Internal','dtype':'float32',"    \
	"'tensor_shape':[128,64],'addr_space':'Shared','file':'',"         \
	"'memorylocations':[{'name':'" n "','type':'SB','addr':0,"         \
	"'dims':[128,256],'bank':0,'base':0,'allocated':true}]}"
#define REG_REG(n) "{'name':'" n "','kind':'Internal','dtype':'int32',"     \
	"'tensor_shape':[1],'memorylocations':[{'name':'" n "',"           \
	"'type':'REG','addr':0}]}"

/*
** A BIR-JSON kernel reg_k naming registers through every spelling
** (regref, reg_ap_offset, reg_sub_tensor_id, a symbolic_ap's runtime-value
** node, a Loop axis) and tensors inside symbolic_ap operands. t and r0
** collide with the caller's; kin / kout / kr are formals (kr a register).
*/
static const char reg_kernel[] =
	"{'version':2,'arch':'gen3','functions':[{'name':'reg_k',"
	"'attributes':[],'allocations':[" REG_DRAM("kin", "Input") ","
	REG_DRAM("kout", "Output") "," REG_SB("t") "," REG_REG("r0") ","
	REG_REG("kr") "],'blocks':[{'name':'b0','instructions':["
	"{'opcode':'TensorCopy','name':'k_rap','engine':'DVE','ins':[{"
	"'kind':'register_ap','memsetref':'t','memref':'t','dtype':'float32',"
	"'ap':[[64,128],[1,64]],'regref':'r0','reg_ap_offset':'r0',"
	"'reg_sub_tensor_id':'kr'}],'outs':[" REG_AP("t") "]},"
	"{'opcode':'TensorScalar',"
	"'const1':0.0,'op1':'bypass','reverse0':false,"
	"'reverse1':false,'name':'k_acc','engine':'DVE','op0':'add',"
	"'const0':1.0,'ins':[{'kind':'register_access','dtype':'int32',"
	"'regref':'kr'}],'outs':[" REG_AP("t") "],'dependencies':['k_rap']},"
	"{'opcode':'TensorCopy','name':'k_sym','engine':'DVE','ins':[{"
	"'kind':'symbolic_ap','memsetref':'t','memref':'t','dtype':'float32',"
	"'addrs':[{'kind':'SumKind','n_terms':2,'terms':[{'kind':'ShardIDKind',"
	"'ub':4},{'kind':'IntRuntimeValueKind','regref':'r0'}]}]}],"
	"'outs':[" REG_AP("t") "],'dependencies':['k_acc']},"
	"{'opcode':'TensorCopy','name':'k_symf','engine':'DVE','ins':[{"
	"'kind':'symbolic_ap','memsetref':'kin','memref':'kin','dtype':"
	"'float32','addrs':[{'kind':'ShardIDKind','ub':4}]}],"
	"'outs':[" REG_AP("t") "],'dependencies':['k_sym']}%s]}]}]}";

/* reg_kernel's Loop, a register among its registers, with an empty
** body. */
static const char reg_loop[] =
	",{'opcode':'Loop','name':'k_loop','engine':'SP','LoopAxis':{"
	"'name':'i','lb':0,'ub':4,'stride':1},'registers':['r0'],"
	"'blocks':[{'name':'lb','instructions':[]}]}";

/* The caller: its own t and r0 (used), the register rc bound to kr. */
static const char reg_caller[] =
	"{'version':2,'arch':'gen3','name':'rcall','functions':[{"
	"'name':'sg0000','attributes':[],'allocations':["
	REG_DRAM("x", "ExternalInput") "," REG_DRAM("y", "ExternalOutput") ","
	REG_SB("t") "," REG_REG("r0") "," REG_REG("rc") "],"
	"'blocks':[{'name':'main','instructions':["
	"{'opcode':'TensorScalar',"
	"'const1':0.0,'op1':'bypass','reverse0':false,"
	"'reverse1':false,'name':'caller_acc','engine':'DVE',"
	"'op0':'add','const0':1.0,'ins':[{'kind':'register_access',"
	"'dtype':'int32','regref':'r0'}],'outs':[" REG_AP("t") "]},"
	"{'opcode':'NKIKLIRKernel','name':'kern','engine':'SP',"
	"'ins':[" REG_AP("x") "],'outs':[" REG_AP("y") "],"
	"'kernel_format':'bir','klir_binary':'reg_kernel.json',"
	"'func_args':{'kin':'x','kr':'rc'},'func_outs':{'kout':'y'},"
	"'dependencies':['caller_acc']}]}]}],"
	"'attributes':{'neuron_core_id':0}}";

/* The caller module of reg_kernel (with_loop: and its Loop) in a fresh
** directory *dir. */
static lm_module *reg_setup(char **dir, int with_loop)
{
	char *kt = lm_xasprintf(reg_kernel, with_loop ? reg_loop : "");
	char *k = dq(kt), *c = dq(reg_caller), *pk, *pc;
	lm_module *m;
	free(kt);
	*dir = tu_tmpdir("prov-regs");
	pk = tu_write(*dir, "reg_kernel.json", k);
	pc = tu_write(*dir, "reg_caller.json", c);
	m = tu_load(pc);
	free(k);
	free(c);
	free(pk);
	free(pc);
	return m;
}

/* The register names of a walk, joined by ',' (a static buffer). */
typedef struct reg_list {
	char s[256];
} reg_list;

static int add_reg(cJSON *j, void *arg)
{
	reg_list *r = arg;
	size_t n = strlen(r->s);
	ck_assert(cJSON_IsString(j));
	snprintf(r->s + n, sizeof r->s - n, "%s%s", n ? "," : "",
		 j->valuestring);
	return 0;
}

/* One register of a Loop's fields, added to the list. */
static int add_field_reg(void *arg, const char *key, const char *name)
{
	reg_list *r = arg;
	size_t n = strlen(r->s);
	(void)key;
	snprintf(r->s + n, sizeof r->s - n, "%s%s", n ? "," : "", name);
	return 0;
}

/* Registers named by operand ins[0] of instruction name, by a Loop's
** fields ("" if none). */
static const char *regs_of(const lm_module *m, const char *name)
{
	static reg_list r;
	lm_inst *in = find_inst(m, name, NULL);
	ck_assert_msg(in != NULL, "no instruction %s", name);
	r.s[0] = 0;
	if (in->op == LM_OP_LOOP)
		lm_inst_each_regname(in, add_field_reg, &r);
	else
		lm_arg_each_regref(&in->ins[0], add_reg, &r);
	return r.s;
}

/* The string member key of instruction name's opaque ins[0]. */
static const char *opaque_key(const lm_module *m, const char *name,
			      const char *key)
{
	lm_inst *in = find_inst(m, name, NULL);
	cJSON *j;
	ck_assert_msg(in != NULL, "no instruction %s", name);
	ck_assert_int_eq(in->ins[0].kind, LM_ARG_OPAQUE);
	j = cJSON_GetObjectItemCaseSensitive(in->ins[0].extra, key);
	ck_assert_msg(cJSON_IsString(j), "%s: no %s", name, key);
	return j->valuestring;
}

/* The lowered module written and read back still verifies (the names in
** the carried JSON are the ones the file holds). */
static void reg_round_trip(const lm_module *lo)
{
	char *txt = NULL;
	size_t len;
	lm_module *back = NULL;
	lm_error err;
	ck_assert_int_eq(lm_module_to_json(lo, 0, &txt, &len, &err), 0);
	ck_assert_msg(lm_module_parse(&back, txt, len, "lowered.json",
				      &err) == 0, "%s", err.msg);
	ck_assert_msg(lm_verify(back, NULL, &err) == 0, "%s", err.msg);
	lm_module_free(back);
	free(txt);
}

/* Mechanism B: the kernel's colliding register and tensor are renamed
** (r0_1, t_1) and so is every reference to them, at any depth of the
** opaque operands and in the Loop's axis; the caller's r0 is untouched. */
START_TEST(test_bir_lower_registers_renamed)
{
	char *dir;
	lm_module *m = reg_setup(&dir, 1), *lo = tu_lower_ok(m, 0, NULL);
	lm_function *kf = lm_module_find_function(lo, "reg_k");
	lm_inst *call = find_inst(lo, "inst__reg_k", NULL);
	ck_assert_ptr_nonnull(kf);
	ck_assert_int_eq(count_prefix(kf, "r0_1", 0), 1);
	ck_assert_int_eq(count_prefix(kf, "t_1", 0), 1);
	ck_assert_str_eq(regs_of(lo, "k_rap"), "r0_1,r0_1,kr");
	ck_assert_str_eq(opaque_key(lo, "k_rap", "memsetref"), "t_1");
	ck_assert_str_eq(opaque_key(lo, "k_rap", "memref"), "t_1");
	ck_assert_str_eq(find_inst(lo, "k_rap", NULL)->ins[0].memsetref, "t_1");
	ck_assert_str_eq(regs_of(lo, "k_acc"), "kr");
	ck_assert_str_eq(regs_of(lo, "k_sym"), "r0_1");
	ck_assert_str_eq(opaque_key(lo, "k_sym", "memsetref"), "t_1");
	ck_assert_str_eq(opaque_key(lo, "k_sym", "memref"), "t_1");
	ck_assert_str_eq(opaque_key(lo, "k_symf", "memsetref"), "kin");
	ck_assert_str_eq(regs_of(lo, "k_loop"), "r0_1");
	ck_assert_str_eq(regs_of(lo, "caller_acc"), "r0");
	ck_assert_str_eq(kv_get(call->func_args, call->n_func_args, "kr"), "rc");
	reg_round_trip(lo);
	lm_module_free(lo);
	lm_module_free(m);
	rm_tmpdir(dir);
}
END_TEST

/* lower --inline: the formals met inside opaque operands and as registers
** are rebound to the caller's (kin -> x, kr -> rc), the kernel's own
** renamed ones (r0_1, t_1) move into the caller with their references, a
** Loop's axis too. The Loop (empty body) adds no dependency to the
** closing NoOp. */
START_TEST(test_bir_inline_registers_rebound)
{
	char *dir;
	lm_module *m = reg_setup(&dir, 1), *lo = tu_lower_ok(m, 1, NULL);
	lm_inst *nop = find_inst(lo, "inst__reg_k", NULL);
	lm_function *f = &lo->functions[0];
	ck_assert_int_eq(lo->n_functions, 1);
	ck_assert_int_eq(tu_count_op(lo, LM_OP_NKIKERNEL), 0);
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo, "r0_1", NULL));
	ck_assert_ptr_nonnull(lm_module_find_alloc(lo, "t_1", NULL));
	ck_assert_ptr_null(lm_module_find_alloc(lo, "kr", NULL));
	ck_assert_ptr_null(lm_module_find_alloc(lo, "kin", NULL));
	ck_assert_int_eq(count_prefix(f, "r0", 0), 2);
	ck_assert_str_eq(regs_of(lo, "k_rap"), "r0_1,r0_1,rc");
	ck_assert_str_eq(opaque_key(lo, "k_rap", "memsetref"), "t_1");
	ck_assert_str_eq(regs_of(lo, "k_acc"), "rc");
	ck_assert_str_eq(regs_of(lo, "k_sym"), "r0_1");
	ck_assert_str_eq(opaque_key(lo, "k_sym", "memsetref"), "t_1");
	ck_assert_str_eq(opaque_key(lo, "k_symf", "memsetref"), "x");
	ck_assert_str_eq(opaque_key(lo, "k_symf", "memref"), "x");
	ck_assert_str_eq(find_inst(lo, "k_symf", NULL)->ins[0].memsetref, "x");
	ck_assert_str_eq(regs_of(lo, "caller_acc"), "r0");
	ck_assert_str_eq(regs_of(lo, "k_loop"), "r0_1");
	ck_assert_ptr_nonnull(nop);
	ck_assert_int_eq(nop->n_deps, 1);
	ck_assert_str_eq(nop->deps[0], "k_symf");
	reg_round_trip(lo);
	lm_module_free(lo);
	lm_module_free(m);
	rm_tmpdir(dir);
}
END_TEST

/* A Memset of the whole SB tensor t, after dependency dep ("" for none). */
#define REG_MS(name, t, deps) "{'opcode':'Memset','name':'" name "',"       \
	"'engine':'DVE','ins':[],'outs':[" REG_AP(t) "],'mode':'Const',"   \
	"'constant':0,'value':0.0,'dependencies':[" deps "]}"

/* Memsets of function f writing allocation name. */
static int memsets_on(const lm_function *f, const char *name)
{
	int n = 0;
	for (int b = 0; b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts; i++) {
			const lm_inst *in = &f->blocks[b].insts[i];
			n += in->op == LM_OP_MEMSET && in->n_outs == 1 &&
			     !strcmp(in->outs[0].memsetref, name);
		}
	return n;
}

/*
** A kernel k1 passing its own tensor t on to a kernel k2, inlined twice:
** the second copy's t is renamed t_1 (the first took t), and the caller
** side of its nested call's argument map follows, so that copy's k2
** writes t_1, not the first copy's t.
*/
START_TEST(test_inline_nested_map_renamed)
{
	static const char text[] =
		"{'version':2,'arch':'gen3','name':'nest','functions':["
		"{'name':'sg0000','attributes':[],'allocations':["
		REG_DRAM("x", "ExternalInput") "," REG_DRAM("y", "ExternalOutput")
		"],'blocks':[{'name':'main','instructions':["
		"{'opcode':'NKIKernel','name':'call1','engine':'SP','func':'k1',"
		"'func_args':{'a':'x'},'func_outs':{'b':'y'},'ins':[" REG_AP("x")
		"],'outs':[" REG_AP("y") "]},"
		"{'opcode':'NKIKernel','name':'call1b','engine':'SP','func':'k1',"
		"'func_args':{'a':'x'},'func_outs':{'b':'y'},'ins':[" REG_AP("x")
		"],'outs':[" REG_AP("y") "],'dependencies':['call1']}]}]},"
		"{'name':'k1','kind':'nki','attributes':[],'allocations':["
		REG_DRAM("a", "Input") "," REG_DRAM("b", "Output") "," REG_SB("t")
		"],'blocks':[{'name':'b0','instructions':["
		REG_MS("k1_ms", "t", "") ","
		"{'opcode':'NKIKernel','name':'call2','engine':'SP','func':'k2',"
		"'func_args':{'c':'t'},'func_outs':{},'ins':[" REG_AP("t") "],"
		"'outs':[],'dependencies':['k1_ms']}]}]},"
		"{'name':'k2','kind':'nki','attributes':[],'allocations':["
		REG_SB("c") "],'blocks':[{'name':'b0','instructions':["
		REG_MS("k2_ms", "c", "") "]}]}]}";
	char *t = dq(text);
	lm_module *m = NULL;
	lm_error err;
	ck_assert_msg(lm_module_parse(&m, t, strlen(t), "nest.json", &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_msg(lp_inline_nki(m, &err) == 0, "%s", err.msg);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(m->n_functions, 1);
	ck_assert_int_eq(tu_count_op(m, LM_OP_NKIKERNEL), 0);
	ck_assert_ptr_nonnull(lm_module_find_alloc(m, "t_1", NULL));
	/* each copy: k1's Memset and k2's, on that copy's tensor */
	ck_assert_int_eq(memsets_on(&m->functions[0], "t"), 2);
	ck_assert_int_eq(memsets_on(&m->functions[0], "t_1"), 2);
	lm_module_free(m);
	free(t);
}
END_TEST

/*
** A BIR-JSON kernel whose last instruction is a Loop (named, or unnamed
** when name is ""): a Memset, then the Loop, its body two TensorCopies,
** the first after the Memset. Its caller runs a Memset "pre" first, so
** the inlined Memset inherits a dependency.
*/
static const char loop_kernel[] =
	"{'version':2,'arch':'gen3','functions':[{'name':'loop_k',"
	"'attributes':[],'allocations':[" REG_DRAM("kin", "Input") ","
	REG_DRAM("kout", "Output") "," REG_SB("lt") "],'blocks':[{'name':"
	"'b0','instructions':[" REG_MS("lk_ms", "lt", "") ","
	"{'opcode':'Loop',%s'engine':'SP','LoopAxis':{'name':'i','lb':0,"
	"'ub':2,'stride':1},'blocks':[{'name':'lb','instructions':["
	"{'opcode':'TensorCopy','name':'lk_cp','engine':'DVE','ins':["
	REG_AP("lt") "],'outs':[" REG_AP("lt") "],'dependencies':['lk_ms']},"
	"{'opcode':'TensorCopy','name':'lk_cp2','engine':'DVE','ins':["
	REG_AP("lt") "],'outs':[" REG_AP("lt") "],'dependencies':['lk_cp']}"
	"]}]}]}]}]}";

static const char loop_caller[] =
	"{'version':2,'arch':'gen3','name':'lcall','functions':[{"
	"'name':'sg0000','attributes':[],'allocations':["
	REG_DRAM("x", "ExternalInput") "," REG_DRAM("y", "ExternalOutput")
	"," REG_SB("ct") "],'blocks':[{'name':'main','instructions':["
	REG_MS("pre", "ct", "") ","
	"{'opcode':'NKIKLIRKernel','name':'kern','engine':'SP',"
	"'ins':[" REG_AP("x") "],'outs':[" REG_AP("y") "],"
	"'kernel_format':'bir','klir_binary':'loop_kernel.json',"
	"'func_args':{'kin':'x'},'func_outs':{'kout':'y'},"
	"'dependencies':['pre']},"
	"{'opcode':'NoOp','name':'after','engine':'SP','ins':[],'outs':[],"
	"'dependencies':['kern']}]}]}],'attributes':{'neuron_core_id':0}}";

/*
** lower --inline of a kernel ending in a Loop, named and unnamed: no
** crash, and the closing NoOp (the call inst__loop_k) depends on the sink of the Loop's
** body (lk_cp2; lk_ms and lk_cp are used), never on the Loop, so the
** module verifies, also written and read back.
*/
START_TEST(test_inline_kernel_ending_in_loop)
{
	static const char *const names[] = { "", "'name':'lk_loop'," };
	for (size_t v = 0; v < sizeof names / sizeof names[0]; v++) {
		char *kt = lm_xasprintf(loop_kernel, names[v]);
		char *k = dq(kt), *c = dq(loop_caller), *dir, *pc;
		lm_module *m, *lo;
		lm_inst *nop;
		lm_function *f;
		free(kt);
		dir = tu_tmpdir("prov-loop");
		free(tu_write(dir, "loop_kernel.json", k));
		pc = tu_write(dir, "loop_caller.json", c);
		m = tu_load(pc);
		/* lowered only: the kernel function keeps its Loop */
		lo = tu_lower_ok(m, 0, NULL);
		lm_module_free(lo);
		lo = tu_lower_ok(m, 1, NULL);
		ck_assert_int_eq(lo->n_functions, 1);
		f = &lo->functions[0];
		ck_assert_int_eq(f->n_blocks, 1);
		ck_assert_int_eq(f->blocks[0].n_insts, 5);
		ck_assert_int_eq(f->blocks[0].insts[2].op, LM_OP_LOOP);
		if (*names[v])
			ck_assert_str_eq(f->blocks[0].insts[2].name, "lk_loop");
		else
			ck_assert_ptr_null(f->blocks[0].insts[2].name);
		ck_assert_str_eq(find_inst(lo, "lk_ms", NULL)->deps[0], "pre");
		nop = find_inst(lo, "inst__loop_k", NULL);
		ck_assert_ptr_nonnull(nop);
		ck_assert_int_eq(nop->op, LM_OP_NOOP);
		ck_assert_int_eq(nop->n_deps, 1);
		ck_assert_str_eq(nop->deps[0], "lk_cp2");
		reg_round_trip(lo);
		lm_module_free(lo);
		lm_module_free(m);
		free(k);
		free(c);
		free(pc);
		ck_assert_int_eq(tu_rm_tree(dir), 0);
		free(dir);
	}
}
END_TEST

/*
** An NKI call whose SB formal has 64 elements per partition, bound to a
** caller tensor of 32: the formal's ap[0].step 64 is one partition of the
** formal but two of the caller's location. The run refuses it by name
** (the geometry of the bound location) instead of striding one partition;
** the inlined module is refused before time 0.
*/
START_TEST(test_bound_partition_stride_refused)
{
	char *src = tu_srcpath("tests/fixtures/provision/stride_bind/def.json");
	char *dir = tu_tmpdir("stride");
	char *inl = lm_xasprintf("%s/inl.json", dir);
	tu_run r = tu_lncsim(NULL, "run", "--no-db", "--seed", "3", src, NULL);
	ck_assert_int_ne(r.status, 0);
	ck_assert_contains(r.err, "function relu_k/instruction k_tc: access "
			   "of 'cs': ap[0].step 64 strides 2 partitions: not "
			   "modelled by the simulator");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "lower", "--inline", "-o", inl, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", "--sim", inl, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "ap[0].step 64 strides 2 partitions: not "
			   "modelled by the simulator");
	tu_run_free(&r);
	free(inl);
	free(dir);
	free(src);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("provision");
	TCase *c = tcase_create("core");
	tcase_add_test(c, test_bir_lower_structure);
	tcase_add_test(c, test_bir_inline_runs);
	tcase_add_test(c, test_bir_const_copied);
	tcase_add_test(c, test_cli_lower_kernel_const_traversal);
	tcase_add_test(c, test_lower_module_const_rule);
	tcase_add_test(c, test_cli_lower_dir_symlink_below_out);
	tcase_add_test(c, test_bir_const_symlinked_out);
	tcase_add_test(c, test_cli_lower_hostile_function_name);
	tcase_add_test(c, test_lnc_gate);
	tcase_add_test(c, test_bir_single_function_without_core);
	tcase_add_test(c, test_bir_errors);
	tcase_add_test(c, test_klr_lower_structure);
	tcase_add_test(c, test_klr_inline_runs);
	tcase_add_test(c, test_two_kernels_one_module);
	tcase_add_test(c, test_klr_errors);
	tcase_add_test(c, test_inline_errors);
	tcase_add_test(c, test_called_form_in_simulator);
	tcase_add_test(c, test_cli_lower);
	tcase_add_test(c, test_cli_lower_klr);
	tcase_add_test(c, test_cli_two_cores_link_diff);
	tcase_add_test(c, test_bir_lower_registers_renamed);
	tcase_add_test(c, test_bir_inline_registers_rebound);
	tcase_add_test(c, test_inline_nested_map_renamed);
	tcase_add_test(c, test_inline_kernel_ending_in_loop);
	tcase_set_timeout(c, 120);
	suite_add_tcase(s, c);
	c = tcase_create("klr_kernels");
	tcase_add_test(c, test_klr_partition_step_is_pe);
	tcase_add_test(c, test_klr_psum_accumulate_3_tiles);
	tcase_add_test(c, test_klr_psum_separate_groups);
	tcase_add_test(c, test_klr_psum_flag_refused);
	tcase_add_test(c, test_klr_nan_per_operator);
	tcase_add_test(c, test_bound_partition_stride_refused);
	tcase_set_timeout(c, 180);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

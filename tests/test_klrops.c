/*
** test_klrops.c -- the KLR operators lowered beyond the first set:
** tensorReduce, tensorScalar with tile operands, reciprocal, max8,
** findIndex8, matchReplace8, batchNormStats / batchNormAggregate,
** selectReduce, ncRangeSelect / rangeSelect, coreBarrier, the register
** operators and cmpBranch loops. Each kernel is KLR JSON (the `lncsim klr
** pack` input form), packed, lowered and run; the outputs are compared
** with values computed here by plain loops in float32, and the called
** and inlined forms must agree bit for bit. Plus the refusals.
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"
#include "dtype.h"
#include "provision.h"
#include "klr.h"
#include "safeio.h"
#include "sim.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P 16
#define FW 64

/* ---- kernel text --------------------------------------------------------- */

/* A TensorName [par, fr] of dtype dt in memory mem. */
static char *tn(const char *name, const char *mem, const char *dt, int par,
		int fr)
{
	int es = !strcmp(dt, "float32") || !strcmp(dt, "uint32") ||
		 !strcmp(dt, "int32") ? 4 : 2;
	return lm_xasprintf("{\"name\": \"%s\", \"dtype\": \"%s\", "
			    "\"shape\": {\"parDim\": %d, \"freeDims\": [%d]}, "
			    "\"address\": {\"name\": \"%s\", \"memory\": \"%s\", "
			    "\"parSize\": 128, \"freeSize\": %d}}", name, dt,
			    par, fr, name, mem, strcmp(mem, "hbm") ? fr * es
								    : 256);
}

/* birPattern operand of tensor name [tp, tf] (dtype dt): rows r0.., par
** rows of fr elements from column c0. */
static char *op_(const char *name, const char *mem, const char *dt, int tp,
		 int tf, int r0, int c0, int par, int fr)
{
	char *t = tn(name, mem, dt, tp, tf);
	char *r = lm_xasprintf("{\"abstract\": {\"birPattern\": {\"tensor\": "
			       "%s, \"offset\": %d, \"pattern\": [{\"step\": "
			       "%d, \"num\": %d}, {\"step\": 1, \"num\": "
			       "%d}]}}}", t, r0 * tf + c0, tf, par, fr);
	free(t);
	return r;
}

/* Shorthands: float32 SBUF tiles [P, 64] and the input xs [128, 64]. */
static char *sb(const char *name, int c0, int fr)
{
	return op_(name, "sbuf", "float32", P, FW, 0, c0, P, fr);
}
static char *xs(int c0, int fr)
{
	return op_("xs", "sbuf", "float32", 128, FW, 0, c0, P, fr);
}

/* The statement list under construction. */
typedef struct body {
	lm_buf b;
	int n;
} body;

/* Append {"name": name, "op": {op: {fields}}}; frees fields. */
static void st(body *bd, const char *name, const char *op, char *fields)
{
	lm_buf_puts(&bd->b, bd->n++ ? ", " : "");
	lm_buf_printf(&bd->b, "{\"name\": \"%s\", \"op\": {\"%s\": {%s}}}",
		      name, op, fields);
	free(fields);
}

/* Frees its arguments (a NULL-terminated list). */
static void frees(char *p, ...)
{
	va_list ap;
	va_start(ap, p);
	while (p) {
		free(p);
		p = va_arg(ap, char *);
	}
	va_end(ap);
}

/* The kernel k_ops around body text (kin -> xs first). */
static char *kernel(const char *name, body *bd, const char *extra_blocks)
{
	char *kin = tn("kin", "hbm", "float32", 128, FW);
	char *kout = tn("kout", "hbm", "float32", 128, FW);
	char *xd = op_("xs", "sbuf", "float32", 128, FW, 0, 0, 128, FW);
	char *xsrc = op_("kin", "hbm", "float32", 128, FW, 0, 0, 128, FW);
	char *stmts = lm_buf_detach(&bd->b);
	char *r = lm_xasprintf("{\"contents\": {\"lnc\": {\"name\": \"%s\", "
			       "\"inputs\": [%s], \"outputs\": [%s], "
			       "\"bodies\": [[{\"label\": \"main\", \"body\": "
			       "[{\"name\": \"ld\", \"op\": {\"ncDmaCopy\": "
			       "{\"dst\": %s, \"src\": %s}}}%s%s]}%s]]}}}",
			       name, kin, kout, xd, xsrc, bd->n ? ", " : "",
			       stmts, extra_blocks ? extra_blocks : "");
	frees(kin, kout, xd, xsrc, stmts, NULL);
	bd->n = 0;
	return r;
}

/* Store tile name [P, 64] to kout rows r0..r0+P. */
static void store(body *bd, const char *sname, const char *tile, int r0)
{
	char *d = op_("kout", "hbm", "float32", 128, FW, r0, 0, P, FW);
	char *s = sb(tile, 0, FW);
	st(bd, sname, "ncDmaCopy", lm_xasprintf("\"dst\": %s, \"src\": %s", d,
						 s));
	frees(d, s, NULL);
}

/* memSet of tile [P, 64] to 0. */
static void zero(body *bd, const char *sname, const char *tile)
{
	char *d = sb(tile, 0, FW);
	st(bd, sname, "memSet", lm_xasprintf("\"dst\": %s, \"value\": "
					     "{\"float\": 0}, \"dtype\": "
					     "\"float32\"", d));
	free(d);
}

/* ---- lowering and running ----------------------------------------------------- */

static void pack_text(const char *json, const char *dir)
{
	char *out = lm_xasprintf("%s/k_small.klr", dir);
	lp_klr_file f;
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	ck_assert_msg(lp_klr_from_json(&f, json, strlen(json), "k.json",
				       &err) == 0, "%s", err.msg);
	ck_assert_int_eq(lp_klr_encode_file(&f, &b, &err), 0);
	ck_assert_int_eq(lm_write_file_atomic(out, b.ptr, b.size, &err), 0);
	lm_buf_free(&b);
	lp_klr_file_free(&f);
	free(out);
}

/* The caller fixture (x -> kin, kout -> y, y partial) + the kernel. */
static lm_module *setup(const char *dir, const char *json)
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

/* Lowering fails with an input error (exit 2) whose text holds want. */
static void lower_fails(const char *json, const char *want)
{
	char *dir = tu_tmpdir("klrops-bad");
	lm_module *m = setup(dir, json), *out = NULL;
	lm_error err;
	lp_warnings w = { 0, 0, NULL };
	ck_assert_int_ne(lp_lower(&out, m, NULL, &w, &err), 0);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(err.code, LM_EINPUT);
	ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'",
		      err.msg, want);
	lp_warnings_free(&w);
	lm_module_free(m);
	tu_rmtree(dir);
	free(dir);
}

/* The input: exact small values with duplicates, a few odd bits. */
static float xval(int p, int j)
{
	return (float)((p * 7 + j * 3) % 23 - 11) / 8.0f +
	       (float)(p % 3) * 0.001f;
}

static void run(const lm_module *m, ls_result *res)
{
	ls_tensors in = { 0, NULL };
	ls_options o;
	lm_error err;
	int64_t shape[2] = { 128, FW };
	float *x = lm_xmalloc(128 * FW * sizeof *x);
	for (int p = 0; p < 128; p++)
		for (int j = 0; j < FW; j++)
			x[p * FW + j] = xval(p, j);
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	memset(&o, 0, sizeof o);
	memset(res, 0, sizeof *res);
	ck_assert_msg(ls_run(m, &in, &o, res, &err) == 0, "run: %s", err.msg);
	ls_tensors_free(&in);
	free(x);
}

/*
** Lower json called and inlined, run both, check they agree bit for bit
** on rows [0, rows) of y, and return the inlined run's result.
*/
static void lower_run(const char *json, int rows, ls_result *r)
{
	char *dir = tu_tmpdir("klrops");
	lm_module *m = setup(dir, json), *called = tu_lower_ok(m, 0, NULL);
	lm_module *inl = tu_lower_ok(m, 1, NULL);
	ls_result rc;
	run(called, &rc);
	run(inl, r);
	for (int i = 0; i < rows * FW; i++)
		ck_assert_msg(tb_bits(tb_out(&rc, "y", i)) ==
			      tb_bits(tb_out(r, "y", i)), "called and inlined "
			      "forms differ at y[%d][%d]", i / FW, i % FW);
	ls_result_free(&rc);
	lm_module_free(called);
	lm_module_free(inl);
	lm_module_free(m);
	tu_rmtree(dir);
	free(dir);
}

static float yv(const ls_result *r, int row, int col)
{
	return tb_out(r, "y", row * FW + col);
}

#define EQ_F(got, want, what, p, j) ck_assert_msg(tb_bits(got) == \
	tb_bits(want), "%s [%d][%d]: got %.9g (0x%08x), want %.9g (0x%08x)", \
	what, p, j, (double)(got), tb_bits(got), (double)(want), tb_bits(want))

/* ---- references -------------------------------------------------------------- */

/* The top 8 of a row by the documented insertion (no NaN here). */
static void ref_max8(const float *d, int n, float *out)
{
	int filled = 0;
	for (int i = 0; i < n; i++) {
		float v = d[i];
		for (int s = 0; s < 8; s++) {
			if (s >= filled) {
				out[s] = v;
				filled++;
				break;
			}
			if (v > out[s]) {
				float t = out[s];
				out[s] = v;
				v = t;
			}
		}
	}
}

/* Index slots: each element matches the first unmatched equal value. */
static void ref_match(const float *vals, const float *d, int n, uint32_t *idx,
		      float *repl, float imm)
{
	int used[8] = { 0 };
	for (int s = 0; s < 8; s++)
		idx[s] = 0xffffffffu;
	for (int i = 0; i < n; i++) {
		repl[i] = d[i];
		for (int s = 0; s < 8; s++)
			if (!used[s] && vals[s] == d[i]) {
				used[s] = 1;
				idx[s] = (uint32_t)i;
				repl[i] = imm;
				break;
			}
	}
}

/* BNStats of one row (docs/semantics.md, each line one float32 op). */
static void ref_bnstats(const float *x, int n, float *o)
{
	float c = 0, mean[2] = { 0, 0 }, m2[2] = { 0, 0 };
	for (int i = 0; i < n; i++) {
		int L = i & 1;
		float r, old, a, b;
		if (!L)
			c = c + 1;
		r = 1 / c;
		old = mean[L];
		a = 1 - r;
		a = a * old;
		b = r * x[i];
		mean[L] = a + b;
		m2[L] = m2[L] + (x[i] - mean[L]) * (x[i] - old);
	}
	o[0] = (float)((n + 1) / 2);
	o[1] = mean[0];
	o[2] = m2[0];
	o[3] = (float)(n / 2);
	o[4] = mean[1];
	o[5] = m2[1];
}

/* BNStatsAggregate of 4 triples (two BNStats results). */
static void ref_bnaggr(const float *s, float *o)
{
	float n = 0, mean = 0, var = 0;
	for (int t = 0; t < 4; t++) {
		float nt = s[3 * t], mt = s[3 * t + 1], m2 = s[3 * t + 2];
		float tot = nt + n, r = 1 / tot, delta = mean - mt, v, cross;
		mean = (mean * n + nt * mt) * r;
		v = (var * n + m2) * r;
		cross = nt * n * delta * delta * r * r;
		var = v + cross;
		n = n + nt;
	}
	o[0] = mean;
	o[1] = var;
}

/* ---- the vector-engine operators ---------------------------------------- */

/*
** ys [16, 64]: col 0 the row sum (tensorReduce add), col 1 minus the row
** max (tensorReduce max, negated), cols 8..23 1/x (reciprocal), 24..39
** (x - sum) * 0.5 (tensorScalar, tile then immediate), 40..55 (-max -
** x) + sum (tensorScalar, two tiles, reverse first), 56..63 the row's top
** 8 (max8). zs: cols 0..1 bnAggr of cols 2..7 (bnStats), 8..15 the
** indices of the top 8 (findIndex8), 16..23 those of matchReplace8's
** dstIdx, 24..39 x > 0 ? x : 7 (selectReduce, immediate on_false),
** 40..55 x > 0 ? x2 : x (reversePred, tile on_false). ws: the row with
** the top 8 replaced by -100 (matchReplace8). rs: e in [4, 20) ? x :
** -inf (ncRangeSelect); r2: 10 < e <= 30 ? x : -1 (rangeSelect).
** kout rows 0..79 hold ys, zs, ws, rs, r2.
*/
static char *vector_kernel(void)
{
	body bd = { LM_BUF_INIT, 0 };
	char *a64 = xs(0, FW), *a16 = xs(0, 16), *b16 = xs(16, 16);
	char *d, *s0, *s1, *t, *u;
	char *bs = op_("bs", "sbuf", "float32", P, 12, 0, 0, P, 12);
	char *ix = op_("ix", "sbuf", "uint32", P, 8, 0, 0, P, 8);
	char *ix2 = op_("ix2", "sbuf", "uint32", P, 8, 0, 0, P, 8);
	char *pf = op_("pf", "sbuf", "float32", P, 16, 0, 0, P, 16);
	char *pr = op_("pr", "sbuf", "int32", P, 16, 0, 0, P, 16);
	char *b0 = op_("b0", "sbuf", "float32", P, 1, 0, 0, P, 1);
	char *b1 = op_("b1", "sbuf", "float32", P, 1, 0, 0, P, 1);
	char *r;

	zero(&bd, "z_ys", "ys");
	zero(&bd, "z_zs", "zs");
	d = sb("ys", 0, 1);
	st(&bd, "red_add", "tensorReduce", lm_xasprintf("\"dst\": %s, \"src\": "
	   "%s, \"op\": \"add\", \"opDim\": \"X\"", d, a64));
	free(d);
	d = sb("ys", 1, 1);
	st(&bd, "red_max", "tensorReduce", lm_xasprintf("\"dst\": %s, \"src\": "
	   "%s, \"op\": \"max\", \"opDim\": \"X\", \"negated\": true", d, a64));
	free(d);
	d = sb("ys", 8, 16);
	st(&bd, "recip", "reciprocal", lm_xasprintf("\"dst\": %s, \"src\": %s",
						      d, a16));
	free(d);
	d = sb("ys", 24, 16);
	s0 = sb("ys", 0, 1);
	st(&bd, "ts1", "tensorScalar", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"imm0\": {\"tile\": %s}, \"op0\": \"subtract\", \"imm1\": {\"imm\": "
	   "{\"float\": 0.5}}, \"op1\": \"mult\"", d, a16, s0));
	free(d);
	d = sb("ys", 40, 16);
	s1 = sb("ys", 1, 1);
	st(&bd, "ts2", "tensorScalar", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"imm0\": {\"tile\": %s}, \"op0\": \"subtract\", \"imm1\": {\"tile\": "
	   "%s}, \"op1\": \"add\", \"reverse\": \"first\"", d, b16, s1, s0));
	frees(d, s0, s1, NULL);
	d = sb("ys", 56, 8);
	st(&bd, "mx8", "max8", lm_xasprintf("\"dst\": %s, \"src\": %s", d, a64));
	free(d);
	store(&bd, "st_y", "ys", 0);

	st(&bd, "bn", "batchNormStats", lm_xasprintf("\"dst\": %s, \"src\": %s",
	   t = op_("bs", "sbuf", "float32", P, 12, 0, 0, P, 6), a64));
	free(t);
	st(&bd, "bn2", "batchNormStats", lm_xasprintf("\"dst\": %s, \"src\": %s",
	   t = op_("bs", "sbuf", "float32", P, 12, 0, 6, P, 6), b16));
	free(t);
	d = sb("zs", 0, 2);
	st(&bd, "bnag", "batchNormAggregate", lm_xasprintf("\"dst\": %s, "
	   "\"src\": %s", d, bs));
	free(d);
	d = sb("zs", 2, 6);
	st(&bd, "bn_cp", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s", d,
	   t = op_("bs", "sbuf", "float32", P, 12, 0, 0, P, 6)));
	frees(d, t, NULL);
	s0 = sb("ys", 56, 8);
	st(&bd, "fi8", "findIndex8", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"vals\": %s", ix, a64, s0));
	d = sb("zs", 8, 8);
	st(&bd, "fi8_cp", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s", d,
						 ix));
	free(d);
	d = sb("ws", 0, FW);
	st(&bd, "mr8", "matchReplace8", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"vals\": %s, \"replaceValue\": {\"float\": -100}, \"dstIdx\": %s",
	   d, a64, s0, ix2));
	frees(d, s0, NULL);
	d = sb("zs", 16, 8);
	st(&bd, "mr8_cp", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s", d,
						 ix2));
	free(d);
	st(&bd, "pf", "tensorScalar", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"imm0\": {\"imm\": {\"float\": 0}}, \"op0\": \"is_gt\"", pf, a16));
	st(&bd, "pr", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s", pr, pf));
	d = sb("zs", 24, 16);
	st(&bd, "sel", "selectReduce", lm_xasprintf("\"dst\": %s, \"predicate\": "
	   "%s, \"onTrue\": %s, \"onFalse\": {\"imm\": {\"float\": 7}}", d, pr,
	   a16));
	free(d);
	d = sb("zs", 40, 16);
	st(&bd, "sel2", "selectReduce", lm_xasprintf("\"dst\": %s, "
	   "\"predicate\": %s, \"onTrue\": %s, \"onFalse\": {\"tile\": %s}, "
	   "\"reversePred\": true", d, pr, a16, b16));
	free(d);
	store(&bd, "st_z", "zs", 16);
	store(&bd, "st_w", "ws", 32);

	st(&bd, "b0", "memSet", lm_xasprintf("\"dst\": %s, \"value\": {\"float\": "
	   "4}, \"dtype\": \"float32\"", b0));
	st(&bd, "b1", "memSet", lm_xasprintf("\"dst\": %s, \"value\": {\"float\": "
	   "20}, \"dtype\": \"float32\"", b1));
	d = sb("rs", 0, FW);
	st(&bd, "rsel", "ncRangeSelect", lm_xasprintf("\"dst\": %s, \"compOp0\": "
	   "\"is_ge\", \"compOp1\": \"is_lt\", \"bound0\": %s, \"bound1\": %s, "
	   "\"rangeStart\": {\"float\": 0}, \"onTrueTile\": %s, \"onFalseValue\": "
	   "{\"float\": \"-inf\"}, \"reduceOp\": \"max\"", d, b0, b1, a64));
	free(d);
	d = sb("r2", 0, FW);
	st(&bd, "rsel_old", "rangeSelect", lm_xasprintf("\"dst\": %s, \"src\": "
	   "%s, \"reduceOp\": \"max\", \"base\": 0, \"fillValue\": -1, "
	   "\"compOp0\": \"is_gt\", \"compOp1\": \"is_le\", \"bound0\": "
	   "{\"float\": 10}, \"bound1\": {\"int\": 30}", d, a64));
	free(d);
	store(&bd, "st_rs", "rs", 48);
	store(&bd, "st_r2", "r2", 64);
	u = NULL;
	r = kernel("k_ops", &bd, u);
	frees(a64, a16, b16, bs, ix, ix2, pf, pr, b0, b1, NULL);
	return r;
}

START_TEST(test_vector_ops)
{
	char *k = vector_kernel();
	ls_result r;
	lower_run(k, 80, &r);
	for (int p = 0; p < P; p++) {
		float x[FW], sum, mx, top[8], repl[FW], st[12], ag[2];
		uint32_t idx[8];
		for (int j = 0; j < FW; j++)
			x[j] = xval(p, j);
		sum = x[0];
		mx = x[0];
		for (int j = 1; j < FW; j++) {
			sum = sum + x[j];
			mx = x[j] >= mx ? x[j] : mx;
		}
		EQ_F(yv(&r, p, 0), sum, "tensorReduce add", p, 0);
		EQ_F(yv(&r, p, 1), -mx, "tensorReduce max negated", p, 1);
		for (int j = 0; j < 16; j++) {
			float t = -mx - x[16 + j];
			EQ_F(yv(&r, p, 8 + j), 1.0f / x[j], "reciprocal", p, j);
			EQ_F(yv(&r, p, 24 + j), (x[j] - sum) * 0.5f,
			     "tensorScalar tile, imm", p, j);
			EQ_F(yv(&r, p, 40 + j), t + sum,
			     "tensorScalar tiles, reverse first", p, j);
		}
		ref_max8(x, FW, top);
		for (int s = 0; s < 8; s++)
			EQ_F(yv(&r, p, 56 + s), top[s], "max8", p, s);
		ref_bnstats(x, FW, st);
		ref_bnstats(x + 16, 16, st + 6);
		ref_bnaggr(st, ag);
		EQ_F(yv(&r, 16 + p, 0), ag[0], "bnAggr mean", p, 0);
		EQ_F(yv(&r, 16 + p, 1), ag[1], "bnAggr var", p, 1);
		for (int s = 0; s < 6; s++)
			EQ_F(yv(&r, 16 + p, 2 + s), st[s], "bnStats", p, s);
		ref_match(top, x, FW, idx, repl, -100.0f);
		for (int s = 0; s < 8; s++) {
			EQ_F(yv(&r, 16 + p, 8 + s), (float)idx[s], "findIndex8",
			     p, s);
			EQ_F(yv(&r, 16 + p, 16 + s), (float)idx[s],
			     "matchReplace8 dstIdx", p, s);
		}
		for (int j = 0; j < FW; j++) {
			EQ_F(yv(&r, 32 + p, j), repl[j], "matchReplace8", p, j);
			EQ_F(yv(&r, 48 + p, j), j >= 4 && j < 20 ? x[j] :
			     -INFINITY, "ncRangeSelect", p, j);
			EQ_F(yv(&r, 64 + p, j), j > 10 && j <= 30 ? x[j] : -1.0f,
			     "rangeSelect", p, j);
		}
		for (int j = 0; j < 16; j++) {
			EQ_F(yv(&r, 16 + p, 24 + j), x[j] > 0 ? x[j] : 7.0f,
			     "selectReduce", p, j);
			EQ_F(yv(&r, 16 + p, 40 + j), x[j] > 0 ? x[16 + j] : x[j],
			     "selectReduce reversePred", p, j);
		}
	}
	ls_result_free(&r);
	free(k);
}
END_TEST


/* ---- barriers, registers, branches ------------------------------------------ */

/* A block {"label": l, "body": [statements]} (statements freed). */
static char *block(const char *label, body *bd)
{
	char *stmts = lm_buf_detach(&bd->b);
	char *r = lm_xasprintf(", {\"label\": \"%s\", \"body\": [%s]}", label,
			       stmts ? stmts : "");
	free(stmts);
	bd->n = 0;
	return r;
}

/* cmpBranch statement fields. */
static char *br(const char *r1, const char *r2, int imm, const char *op,
		const char *t, const char *f)
{
	return lm_xasprintf("\"reg1\": \"%s\", \"reg2\": \"%s\", \"imm\": %d, "
			    "\"op\": \"%s\", \"trueLabel\": \"%s\", "
			    "\"falseLabel\": \"%s\"", r1, r2, imm, op, t, f);
}

/*
** The frontend's dynamic loop: main zeroes acc, loads the trip count 3
** from an int32 tile into register rn (tensorLoad), sets ri := 0 and
** jumps to loop; loop adds xs[0:16, :] to acc, ri := ri + 1, and branches
** back while ri < rn (lt_reg); check branches on ri == 3 (eq_imm) to the
** empty block `empty` (which falls through to ok) or to `bad`, which
** would overwrite acc with -1; ok stores acc to kout rows 0..15 and ri
** (tensorStore) as a float to kout[16][0]. A coreBarrier of core 0 alone
** sits between the loop and the check.
*/
static char *loop_kernel(void)
{
	body bd = { LM_BUF_INIT, 0 };
	char *acc = sb("acc", 0, FW), *a64 = xs(0, FW), *blocks, *b1, *b2, *b3;
	char *b4, *b5, *r;
	char *nt = op_("nt", "sbuf", "int32", 1, 1, 0, 0, 1, 1);
	char *cnt = op_("cnt", "sbuf", "int32", 1, 1, 0, 0, 1, 1);
	char *cf = op_("cf", "sbuf", "float32", 1, 1, 0, 0, 1, 1);
	char *ko = op_("kout", "hbm", "float32", 128, FW, 16, 0, 1, 1);

	zero(&bd, "z_acc", "acc");
	st(&bd, "n3", "memSet", lm_xasprintf("\"dst\": %s, \"value\": {\"int\": "
	   "3}, \"dtype\": \"int32\"", nt));
	st(&bd, "load", "tensorLoad", lm_xasprintf("\"dst\": \"rn\", \"src\": %s",
						   nt));
	st(&bd, "mv", "registerMove", lm_xasprintf("\"dst\": \"ri\", \"imm\": 0"));
	st(&bd, "jmp", "cmpBranch", br("", "", 0, "always", "loop", ""));
	{
		/* the main block's statements go in the kernel's first block */
		char *stmts = lm_buf_detach(&bd.b);
		int n = bd.n;
		bd.n = 0;
		st(&bd, "tt", "tensorTensor", lm_xasprintf("\"dst\": %s, "
		   "\"src0\": %s, \"src1\": %s, \"op\": \"add\"", acc, acc, a64));
		st(&bd, "inc", "registerAluOp", lm_xasprintf("\"dst\": \"ri\", "
		   "\"src\": \"ri\", \"imm\": 1, \"op\": \"add\""));
		st(&bd, "brlt", "cmpBranch", br("ri", "rn", 0, "lt_reg", "loop",
						"check"));
		b1 = block("loop", &bd);
		st(&bd, "bar", "coreBarrier", lm_xasprintf("\"data\": %s, "
		   "\"cores\": [0]", nt));
		st(&bd, "breq", "cmpBranch", br("ri", "", 3, "eq_imm", "empty",
						"bad"));
		b2 = block("check", &bd);
		st(&bd, "ms_bad", "memSet", lm_xasprintf("\"dst\": %s, \"value\": "
		   "{\"float\": -1}, \"dtype\": \"float32\"", acc));
		b3 = block("bad", &bd);
		b4 = block("empty", &bd);
		store(&bd, "st_acc", "acc", 0);
		st(&bd, "save", "tensorStore", lm_xasprintf("\"dst\": %s, "
		   "\"src\": \"ri\"", cnt));
		st(&bd, "cnt_f", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s",
							cf, cnt));
		st(&bd, "st_cnt", "ncDmaCopy", lm_xasprintf("\"dst\": %s, "
		   "\"src\": %s", ko, cf));
		b5 = block("ok", &bd);
		blocks = lm_xasprintf("%s%s%s%s%s", b1, b2, b3, b4, b5);
		lm_buf_puts(&bd.b, stmts);
		bd.n = n;
		free(stmts);
	}
	r = kernel("k_loop", &bd, blocks);
	frees(acc, a64, blocks, b1, b2, b3, b4, b5, nt, cnt, cf, ko, NULL);
	return r;
}

/* The outputs of two runs are the same bits. */
static void same_outputs(const ls_result *a, const ls_result *b)
{
	ck_assert_int_eq(a->outputs.n, b->outputs.n);
	for (int i = 0; i < a->outputs.n; i++) {
		const ls_tensor *x = &a->outputs.t[i], *y = &b->outputs.t[i];
		ck_assert_str_eq(x->name, y->name);
		ck_assert_int_eq(x->dtype, y->dtype);
		ck_assert_int_eq(x->count, y->count);
		ck_assert(memcmp(x->data, y->data, (size_t)x->count *
				 lm_dtype_size(x->dtype)) == 0);
	}
}

START_TEST(test_register_loop)
{
	char *k = loop_kernel(), *dir = tu_tmpdir("klrops-loop");
	lm_module *m = setup(dir, k), *lo = tu_lower_ok(m, 0, NULL);
	lm_module *il = tu_lower_ok(m, 1, NULL);
	ls_result r, ri;

	run(lo, &r);
	/* inlined: the kernel's blocks in the caller's, the loop kept */
	run(il, &ri);
	same_outputs(&r, &ri);
	ck_assert_int_eq(ri.n_kernels, 0);
	const lm_function *f = &il->functions[0];
	ck_assert_int_eq(il->n_functions, 1);
	int loop = -1, ret = -1;
	for (int b = 0; b < f->n_blocks; b++) {
		if (!strcmp(f->blocks[b].name, "inst__k_loop.loop"))
			loop = b;
		if (!strcmp(f->blocks[b].name, "inst__k_loop.return"))
			ret = b;
	}
	ck_assert_int_gt(loop, 0);
	ck_assert_int_gt(ret, loop);
	/* the back edge names the renamed block; the continuation starts
	   with the call's NoOp */
	const lm_block *lb = &f->blocks[loop];
	const lm_inst *br = &lb->insts[lb->n_insts - 1];
	ck_assert_int_eq(br->op, LM_OP_CMPBRANCH);
	ck_assert_str_eq(br->on_true, "inst__k_loop.loop");
	ck_assert_str_eq(br->on_false, "inst__k_loop.check");
	ck_assert_int_eq(f->blocks[ret].insts[0].op, LM_OP_NOOP);
	ck_assert_str_eq(f->blocks[ret].insts[0].name, "inst__k_loop");
	ls_result_free(&ri);
	lm_module_free(il);
	lm_module_free(lo);
	lm_module_free(m);
	tu_rmtree(dir);
	free(dir);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < FW; j++) {
			float x = xval(p, j), want = ((0.0f + x) + x) + x;
			EQ_F(yv(&r, p, j), want, "loop sum", p, j);
		}
	EQ_F(yv(&r, 16, 0), 3.0f, "loop counter", 16, 0);
	ls_result_free(&r);
	free(k);
}
END_TEST

/* A one-row birPattern of tensor [tp, 64] at static offset off with the
** register reg as its scalarOffset. */
static char *dyn(const char *name, const char *mem, int tp, int off,
		 const char *reg)
{
	char *t = tn(name, mem, "float32", tp, FW);
	char *r = lm_xasprintf("{\"abstract\": {\"birPattern\": {\"tensor\": "
			       "%s, \"offset\": %d, \"pattern\": [{\"step\": "
			       "%d, \"num\": 1}, {\"step\": 1, \"num\": %d}], "
			       "\"scalarOffset\": {\"reg\": \"%s\"}}}}", t, off,
			       FW, FW, reg);
	free(t);
	return r;
}

/*
** Register offsets: for i = 0..3 (ro = 64 i, rd = 64 (3 - i), rq = ro +
** 512): kout row 3-i := kin row i (a DMA placed by registers on both
** sides), row := xs row i (tensor_copy_dynamic_src), kout row 8+i :=
** row (a DMA with a register-placed destination). `last` is the loop
** bound of ro (256; more walks kin past its end).
*/
static char *dyn_kernel(int last)
{
	body bd = { LM_BUF_INIT, 0 };
	char *b1, *b2, *r, *s, *d;
	char *row = op_("row", "sbuf", "float32", 1, FW, 0, 0, 1, FW);

	st(&bd, "mo", "registerMove", lm_xasprintf("\"dst\": \"ro\", \"imm\": 0"));
	st(&bd, "md", "registerMove", lm_xasprintf("\"dst\": \"rd\", \"imm\": "
						   "192"));
	{
		char *stmts = lm_buf_detach(&bd.b);
		int n = bd.n;
		bd.n = 0;
		d = dyn("kout", "hbm", 128, 0, "rd");
		s = dyn("kin", "hbm", 128, 0, "ro");
		st(&bd, "dma1", "ncDmaCopy", lm_xasprintf("\"dst\": %s, "
		   "\"src\": %s", d, s));
		frees(d, s, NULL);
		s = dyn("xs", "sbuf", 128, 0, "ro");
		st(&bd, "cp", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s",
						     row, s));
		free(s);
		st(&bd, "q", "registerAluOp", lm_xasprintf("\"dst\": \"rq\", "
		   "\"src\": \"ro\", \"imm\": 512, \"op\": \"add\""));
		d = dyn("kout", "hbm", 128, 0, "rq");
		st(&bd, "dma2", "ncDmaCopy", lm_xasprintf("\"dst\": %s, "
		   "\"src\": %s", d, row));
		free(d);
		st(&bd, "inc", "registerAluOp", lm_xasprintf("\"dst\": \"ro\", "
		   "\"src\": \"ro\", \"imm\": 64, \"op\": \"add\""));
		st(&bd, "dec", "registerAluOp", lm_xasprintf("\"dst\": \"rd\", "
		   "\"src\": \"rd\", \"imm\": 64, \"op\": \"subtract\""));
		st(&bd, "br", "cmpBranch", br("ro", "", last, "lt_imm", "loop",
					      "done"));
		b1 = block("loop", &bd);
		b2 = block("done", &bd);
		s = lm_xasprintf("%s%s", b1, b2);
		lm_buf_puts(&bd.b, stmts);
		bd.n = n;
		frees(stmts, b1, b2, NULL);
	}
	r = kernel("k_dyn", &bd, s);
	frees(s, row, NULL);
	return r;
}

START_TEST(test_register_offsets)
{
	char *k = dyn_kernel(256), *dir = tu_tmpdir("klrops-dyn");
	lm_module *m = setup(dir, k), *lo = tu_lower_ok(m, 0, NULL);
	lm_module *il = tu_lower_ok(m, 1, NULL);
	ls_result r, ri;
	run(lo, &r);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < FW; j++) {
			EQ_F(yv(&r, 3 - i, j), xval(i, j), "dynamic DMA", i, j);
			EQ_F(yv(&r, 8 + i, j), xval(i, j), "dynamic copy", i, j);
		}
	/* inlined (its loop a branch of the caller now): the same bits */
	run(il, &ri);
	same_outputs(&r, &ri);
	ls_result_free(&ri);
	ls_result_free(&r);
	lm_module_free(il);
	lm_module_free(lo);
	lm_module_free(m);
	tu_rmtree(dir);
	free(dir);
	free(k);
}
END_TEST

/* A register offset that walks past the tensor is a run error. */
START_TEST(test_register_offset_out_of_range)
{
	char *k = dyn_kernel(64 * 130), *dir = tu_tmpdir("klrops-dyn");
	lm_module *m = setup(dir, k), *lo = tu_lower_ok(m, 0, NULL);
	ls_tensors in = { 0, NULL };
	ls_options o;
	ls_result r;
	lm_error err;
	int64_t shape[2] = { 128, FW };
	float *x = lm_xcalloc(128 * FW, sizeof *x);
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	memset(&o, 0, sizeof o);
	memset(&r, 0, sizeof r);
	ck_assert_int_ne(ls_run(lo, &in, &o, &r, &err), 0);
	ck_assert_msg(strstr(err.msg, "puts the access outside memory "
			     "location") != NULL, "%s", err.msg);
	ls_result_free(&r);
	ls_tensors_free(&in);
	free(x);
	lm_module_free(lo);
	lm_module_free(m);
	tu_rmtree(dir);
	free(dir);
	free(k);
}
END_TEST

/*
** Two cores, each with the caller fixture calling one kernel that stores
** xs, meets the other core at a coreBarrier of cores [0, 1] and stores
** again: lowered called and inlined, linked by `lncsim diff`, which runs
** them and checks the outputs bit for bit against its reference run.
*/
START_TEST(test_core_barrier_two_cores)
{
	char *dir = tu_tmpdir("klrops-lnc2");
	body bd = { LM_BUF_INIT, 0 };
	char *nt = op_("nt", "sbuf", "int32", 1, 1, 0, 0, 1, 1), *k;
	const char *modes[2] = { NULL, "--inline" };
	tu_run r;

	store(&bd, "st0", "xs16", 0);
	st(&bd, "bar", "coreBarrier", lm_xasprintf("\"data\": %s, \"cores\": "
						   "[0, 1]", nt));
	store(&bd, "st1", "xs16", 16);
	{
		/* xs16 := xs[0:16, :] first */
		char *d = sb("xs16", 0, FW), *s = xs(0, FW), *rest;
		body b0 = { LM_BUF_INIT, 0 };
		st(&b0, "cp", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s",
						     d, s));
		rest = lm_buf_detach(&bd.b);
		lm_buf_printf(&b0.b, ", %s", rest);
		b0.n += bd.n;
		k = kernel("k_bar", &b0, NULL);
		frees(d, s, rest, NULL);
	}
	pack_text(k, dir);
	for (int c = 0; c < 2; c++) {
		char *p = tu_fixture("provision", "a_caller_small.json");
		char *t = tu_read(p), *t2, *t3, *t4, *path;
		char *yname = lm_xasprintf("\"y%d\"", c);
		char *core = lm_xasprintf("\"neuron_core_id\": %d", c);
		t2 = tu_replace_all(t, "\"y\"", yname);
		t3 = tu_replace_all(t2, "\"k_small.klr\"",
				    "\"../../../k_small.klr\"");
		t4 = tu_replace_all(t3, "\"neuron_core_id\": 0", core);
		free(t3);
		/* the kernel writes rows 0..31 of y only */
		t3 = tu_replace_all(t4, "\"kind\": \"ExternalOutput\"",
				    "\"kind\": \"ExternalOutput\", "
				    "\"partial_output\": true");
		path = lm_xasprintf("cores/nc%d/sg0/def.json", c);
		free(tu_write(dir, path, t3));
		frees(path, p, t, t2, t3, t4, yname, core, NULL);
	}
	for (int i = 0; i < 2; i++) {
		char *out = lm_xasprintf("low%d", i);
		r = modes[i] ? tu_lncsim(dir, "lower", modes[i], "-o", out,
					 "cores", NULL)
			     : tu_lncsim(dir, "lower", "-o", out, "cores", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(dir, "diff", "--no-db", out, NULL);
		ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
		ck_assert_msg(strstr(r.out, "PASS") != NULL, "%s", r.out);
		tu_run_free(&r);
		free(out);
	}
	frees(nt, k, NULL);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- sendRecv, sendRecvCompute ------------------------------------------------ */

/* sendRecv fields: dst, src, ranks to / from, useGpsimdDma (freed). */
static char *sr_fields(char *dst, char *src, int to, int from, int gpsimd)
{
	char *r = lm_xasprintf("\"dst\": %s, \"src\": %s, \"sendToRank\": "
			       "{\"int\": %d}, \"recvFromRank\": {\"int\": %d}, "
			       "\"pipeId\": {\"int\": 0}, \"useGpsimdDma\": %s",
			       dst, src, to, from, gpsimd ? "true" : "false");
	frees(dst, src, NULL);
	return r;
}

/* sendRecvCompute fields (lists of one; freed). */
static char *src_fields(char *dst, char *src, int to, int from,
			const char *op)
{
	char *r = lm_xasprintf("\"dsts\": [%s], \"srcs\": [%s], "
			       "\"sendToRanks\": [{\"int\": %d}], "
			       "\"recvFromRanks\": [{\"int\": %d}], \"pipeId\": "
			       "{\"int\": 3}, \"op\": \"%s\"", dst, src, to,
			       from, op);
	frees(dst, src, NULL);
	return r;
}

/*
** The statements of core c: a := xs rows 16c..16c+15; r := the peer's a
** (sendRecv; core 1 through the GpSimd DMA); a coreBarrier; s := a +
** the peer's a and
** a := max(a, the peer's a), in place (sendRecvCompute); r, s and a go
** to kout rows 0..15, 16..31 and 32..47.
*/
static char *sr_body(int c)
{
	body bd = { LM_BUF_INIT, 0 };
	char *d = sb("a", 0, FW);
	char *s = op_("xs", "sbuf", "float32", 128, FW, 16 * c, 0, P, FW);
	st(&bd, "cp", "ncCopy", lm_xasprintf("\"dst\": %s, \"src\": %s", d,
					     s));
	frees(d, s, NULL);
	st(&bd, "sr", "sendRecv", sr_fields(sb("r", 0, FW), sb("a", 0, FW),
					    1 - c, 1 - c, c == 1));
	store(&bd, "st_r", "r", 0);
	s = op_("nt", "sbuf", "int32", 1, 1, 0, 0, 1, 1);
	st(&bd, "bar", "coreBarrier", lm_xasprintf("\"data\": %s, \"cores\": "
						   "[0, 1]", s));
	free(s);
	st(&bd, "sra", "sendRecvCompute", src_fields(sb("s", 0, FW),
		sb("a", 0, FW), 1 - c, 1 - c, "add"));
	store(&bd, "st_s", "s", 16);
	st(&bd, "srm", "sendRecvCompute", src_fields(sb("a", 0, FW),
		sb("a", 0, FW), 1 - c, 1 - c, "max"));
	store(&bd, "st_a", "a", 32);
	return lm_buf_detach(&bd.b);
}

/* The kernel k_sr with one body per core (kin -> xs first in each). */
static char *sr_kernel(void)
{
	char *kin = tn("kin", "hbm", "float32", 128, FW);
	char *kout = tn("kout", "hbm", "float32", 128, FW);
	char *xd = op_("xs", "sbuf", "float32", 128, FW, 0, 0, 128, FW);
	char *xsrc = op_("kin", "hbm", "float32", 128, FW, 0, 0, 128, FW);
	char *b0 = sr_body(0), *b1 = sr_body(1), *r;
	char *ld = lm_xasprintf("{\"name\": \"ld\", \"op\": {\"ncDmaCopy\": "
				"{\"dst\": %s, \"src\": %s}}}", xd, xsrc);
	r = lm_xasprintf("{\"contents\": {\"lnc\": {\"name\": \"k_sr\", "
			 "\"inputs\": [%s], \"outputs\": [%s], \"bodies\": "
			 "[[{\"label\": \"main\", \"body\": [%s, %s]}], "
			 "[{\"label\": \"main\", \"body\": [%s, %s]}]]}}}",
			 kin, kout, ld, b0, ld, b1);
	frees(kin, kout, xd, xsrc, b0, b1, ld, NULL);
	return r;
}

/* Write cores/nc<c>/sg0/def.json: the caller fixture on core c, output
** y<c> (partial), calling ../../../k_small.klr. */
static void sr_cores(const char *dir)
{
	for (int c = 0; c < 2; c++) {
		char *p = tu_fixture("provision", "a_caller_small.json");
		char *t = tu_read(p), *t2, *t3, *t4, *path;
		char *yname = lm_xasprintf("\"y%d\"", c);
		char *core = lm_xasprintf("\"neuron_core_id\": %d", c);
		t2 = tu_replace_all(t, "\"y\"", yname);
		t3 = tu_replace_all(t2, "\"k_small.klr\"",
				    "\"../../../k_small.klr\"");
		t4 = tu_replace_all(t3, "\"neuron_core_id\": 0", core);
		free(t3);
		t3 = tu_replace_all(t4, "\"kind\": \"ExternalOutput\"",
				    "\"kind\": \"ExternalOutput\", "
				    "\"partial_output\": true");
		path = lm_xasprintf("cores/nc%d/sg0/def.json", c);
		free(tu_write(dir, path, t3));
		frees(path, p, t, t2, t3, t4, yname, core, NULL);
	}
}

/* The caller's carrier 'kern' once more, as 'kern2' after it. */
static void call_twice(lm_module *m)
{
	lm_block *blk = &m->functions[0].blocks[0];
	int k = -1;
	lm_inst *n;
	for (int i = 0; i < blk->n_insts; i++)
		if (!strcmp(blk->insts[i].name, "kern"))
			k = i;
	ck_assert_int_ge(k, 0);
	n = lm_b_append_inst(blk, LM_OP_NOOP, LM_ENG_SP, "kern2");
	lm_inst_clear(n);
	lm_inst_copy(n, &blk->insts[k]);
	lm_inst_set_str(n, &n->name, "kern2");
	ck_assert_int_eq(n->n_deps, 1);
	lm_inst_set_dep(n, 0, 0, "kern");
}

/* The two cores' modules (calling the kernel twice when twice) lowered
** (inlined when do_inline), run side by side into *res. */
static void sr_run(const char *dir, int do_inline, int twice, ls_result *res)
{
	lm_module *m[2], *lo[2];
	ls_tensors in = { 0, NULL };
	ls_options o;
	lm_error err;
	int64_t shape[2] = { 128, FW };
	float *x = lm_xmalloc(128 * FW * sizeof *x);
	for (int c = 0; c < 2; c++) {
		char *p = lm_xasprintf("%s/cores/nc%d/sg0/def.json", dir, c);
		m[c] = tu_load(p);
		if (twice)
			call_twice(m[c]);
		lo[c] = tu_lower_ok(m[c], do_inline, NULL);
		free(p);
		if (twice) {
			/* the second call's view names the second call's
			   stage on the peer */
			const lm_alloc *v = lm_module_find_alloc(lo[c],
				"k_sr.sendrecv_1.peer_1", NULL);
			ck_assert_ptr_nonnull(v);
			ck_assert(v->has_remote);
			ck_assert_str_eq(v->remote_name,
					 "k_sr.sendrecv_1.stage_1");
		}
	}
	for (int p = 0; p < 128; p++)
		for (int j = 0; j < FW; j++)
			x[p * FW + j] = xval(p, j);
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	memset(&o, 0, sizeof o);
	memset(res, 0, sizeof *res);
	ck_assert_msg(ls_run_multi(lo, 2, &in, &o, res, &err) == 0, "run: %s",
		      err.msg);
	if (!do_inline && !twice) {
		/* each exchange: DMA, barrier, DMA, barrier; core 1's
		   sendRecv issued from Pool (useGpsimdDma); the coreBarrier
		   between is the kernel's first, with the next id */
		for (int c = 0; c < 2; c++) {
			const lm_inst *snd = NULL, *bar = NULL;
			ck_assert_int_eq(tu_count_op(lo[c], LM_OP_COREBARRIER),
					 7);
			for (int f = 0; f < lo[c]->n_functions; f++) {
				const lm_function *fn = &lo[c]->functions[f];
				for (int b = 0; b < fn->n_blocks; b++)
					for (int i = 0; i < fn->blocks[b].n_insts;
					     i++)
						if (!strcmp(fn->blocks[b].insts[i]
							    .name, "sr.send"))
							snd = &fn->blocks[b]
								.insts[i];
						else if (!strcmp(fn->blocks[b]
							 .insts[i].name, "bar"))
							bar = &fn->blocks[b]
								.insts[i];
			}
			ck_assert_ptr_nonnull(snd);
			ck_assert_ptr_nonnull(bar);
			ck_assert_str_eq(bar->group, "k_sr.core_barrier_1");
			ck_assert_int_eq(bar->barrier_id, 3);
			ck_assert_int_eq(snd->engine, c ? LM_ENG_POOL
							: LM_ENG_SP);
		}
	}
	for (int c = 0; c < 2; c++) {
		lm_module_free(lo[c]);
		lm_module_free(m[c]);
	}
	ls_tensors_free(&in);
	free(x);
}

/*
** Two cores exchange tiles: sendRecv, sendRecvCompute add and max (in
** place). The called and inlined forms run side by side give the bits
** computed here; both forms, linked by `lncsim diff`, give its reference
** run's bits; the race detector finds no race.
*/
START_TEST(test_sendrecv_two_cores)
{
	char *dir = tu_tmpdir("klrops-sr"), *k = sr_kernel();
	const char *modes[2] = { NULL, "--inline" };
	ls_result rc, ri;
	tu_run r;

	pack_text(k, dir);
	sr_cores(dir);
	sr_run(dir, 0, 0, &rc);
	sr_run(dir, 1, 0, &ri);
	same_outputs(&rc, &ri);
	ls_result_free(&ri);
	/* a kernel called twice on each core: both calls exchange */
	sr_run(dir, 0, 1, &ri);
	same_outputs(&rc, &ri);
	ls_result_free(&ri);
	sr_run(dir, 1, 1, &ri);
	same_outputs(&rc, &ri);
	for (int c = 0; c < 2; c++) {
		char yn[4];
		snprintf(yn, sizeof yn, "y%d", c);
		for (int p = 0; p < P; p++)
			for (int j = 0; j < FW; j++) {
				float mine = xval(16 * c + p, j);
				float theirs = xval(16 * (1 - c) + p, j);
				float x0 = xval(p, j), x1 = xval(16 + p, j);
				EQ_F(tb_out(&rc, yn, p * FW + j), theirs,
				     "sendRecv", p, j);
				EQ_F(tb_out(&rc, yn, (16 + p) * FW + j),
				     x0 + x1, "sendRecvCompute add", p, j);
				EQ_F(tb_out(&rc, yn, (32 + p) * FW + j),
				     fmaxf(mine, theirs), "sendRecvCompute max",
				     p, j);
			}
	}
	ls_result_free(&rc);
	ls_result_free(&ri);
	for (int i = 0; i < 2; i++) {
		char *out = lm_xasprintf("low%d", i);
		r = modes[i] ? tu_lncsim(dir, "lower", modes[i], "-o", out,
					 "cores", NULL)
			     : tu_lncsim(dir, "lower", "-o", out, "cores", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(dir, "diff", "--no-db", out, NULL);
		ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
		ck_assert_msg(strstr(r.out, "PASS") != NULL, "%s", r.out);
		tu_run_free(&r);
		/* the barriers order every cross-core access (happens-before) */
		r = tu_lncsim(dir, "run", "--race", "--no-db", out, NULL);
		ck_assert_msg(r.status == 0 && strstr(r.out, "races: none"),
			      "%s%s", r.out, r.err);
		tu_run_free(&r);
		free(out);
	}
	free(k);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------ */

/* A kernel of one statement after the load. */
static char *one(const char *name, const char *op, char *fields)
{
	body bd = { LM_BUF_INIT, 0 };
	st(&bd, name, op, fields);
	return kernel("k_bad", &bd, NULL);
}

START_TEST(test_refusals)
{
	char *a16 = xs(0, 16), *d = sb("ys", 0, 16), *c8 = op_("c", "sbuf",
		"float32", 8, 1, 0, 0, 8, 1), *d2 = sb("ys", 0, 2), *k;

	/* an operator outside the set: its name and its serde tag */
	/* a tile operand of 8 partitions for data of 16 */
	k = one("ts", "tensorScalar", lm_xasprintf("\"dst\": %s, \"src\": %s, "
		"\"imm0\": {\"tile\": %s}, \"op0\": \"add\"", d, a16, c8));
	lower_fails(k, "imm0 must be a [16, 1] tile: one scalar for each of "
		    "the 16 partitions of the data (got 8 elements over 8 "
		    "partitions)");
	free(k);
	k = one("rs", "ncRangeSelect", lm_xasprintf("\"dst\": %s, \"compOp0\": "
		"\"is_ge\", \"compOp1\": \"is_lt\", \"bound0\": %s, \"bound1\": "
		"%s, \"rangeStart\": {\"float\": 0}, \"onTrueTile\": %s, "
		"\"onFalseValue\": {\"float\": 0}", d, c8, c8, a16));
	lower_fails(k, "bound0 must be a [16, 1] tile");
	free(k);
	/* a reduce result of two elements per partition */
	k = one("red", "tensorReduce", lm_xasprintf("\"dst\": %s, \"src\": %s, "
		"\"op\": \"add\", \"opDim\": \"X\"", d2, a16));
	lower_fails(k, "tensorReduce dst must hold the 1 reduced element of "
		    "each of the 16 partitions of src (each reduces 16 "
		    "elements), got 32 elements over 16 partitions");
	free(k);
	/* an out-of-range index (a coordinate past the dimension) */
	{
		char *t = tn("xs", "sbuf", "float32", 128, FW);
		char *ab = lm_xasprintf("{\"abstract\": {\"basic\": {\"tensor\": "
					"%s, \"indexes\": [{\"coord\": 128}]}}}",
					t);
		k = one("red", "tensorReduce", lm_xasprintf("\"dst\": %s, "
			"\"src\": %s, \"op\": \"add\", \"opDim\": \"X\"", d2,
			ab));
		lower_fails(k, "index 128 out of dimension 0 (128)");
		frees(k, t, ab, NULL);
	}
	/* the reduction outputs the BIR instructions lack */
	k = one("sel", "selectReduce", lm_xasprintf("\"dst\": %s, "
		"\"predicate\": %s, \"onTrue\": %s, \"onFalse\": {\"imm\": "
		"{\"float\": 0}}, \"reduceRes\": %s, \"reduceCmd\": "
		"\"ZeroAccumulate\"", d, a16, a16, c8));
	lower_fails(k, "selectReduce with a reduction (reduceCmd "
		    "'ZeroAccumulate', a reduceRes) is not modelled");
	free(k);
	k = one("rs", "ncRangeSelect", lm_xasprintf("\"dst\": %s, \"compOp0\": "
		"\"is_ge\", \"compOp1\": \"is_lt\", \"bound0\": %s, \"bound1\": "
		"%s, \"rangeStart\": {\"float\": 3}, \"onTrueTile\": %s, "
		"\"onFalseValue\": {\"float\": 0}", d, c8, c8, a16));
	lower_fails(k, "ncRangeSelect rangeStart 3 is not modelled");
	free(k);
	/* a barrier core listed twice */
	k = one("bar", "coreBarrier", lm_xasprintf("\"data\": %s, \"cores\": "
		"[0, 1, 0]", c8));
	lower_fails(k, "coreBarrier lists core 0 twice");
	free(k);
	frees(a16, d, c8, d2, NULL);
}
END_TEST

/* Each sendRecv / sendRecvCompute refusal, by its message. */
START_TEST(test_sendrecv_refusals)
{
	char *k;
	struct { char *fields; const char *want; int compute; } c[] = {
		{ sr_fields(sb("r", 0, FW), sb("a", 0, FW), 2, 1, 0),
		  "sendRecv sendToRank 2 is not a rank of the Logical "
		  "NeuronCore (0 or 1)", 0 },
		{ sr_fields(sb("r", 0, FW), sb("a", 0, FW), 1, 0, 0),
		  "sendRecv recvFromRank 0 is the kernel's own core: the "
		  "exchange is with the peer core 1", 0 },
		{ sr_fields(sb("r", 0, FW), sb("a", 0, 16), 1, 1, 0),
		  "sendRecv src [16, 16] and dst [16, 64] differ in shape", 0 },
		{ sr_fields(op_("r", "sbuf", "bfloat16", P, FW, 0, 0, P, FW),
			    sb("a", 0, FW), 1, 1, 0),
		  "sendRecv src is float32 and dst bfloat16", 0 },
		{ sr_fields(sb("r", 0, FW), op_("kin", "hbm", "float32", 128,
						 FW, 0, 0, P, FW), 1, 1, 0),
		  "sendRecv src 'kin' is not in SBUF", 0 },
		{ src_fields(sb("r", 0, FW), sb("a", 0, FW), 1, 1, "mult"),
		  "sendRecvCompute op 'mult' is not modelled (add, max and "
		  "min are)", 1 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		k = one("sr", c[i].compute ? "sendRecvCompute" : "sendRecv",
			c[i].fields);
		lower_fails(k, c[i].want);
		free(k);
	}
	/* two tiles in one sendRecvCompute */
	{
		char *d = sb("r", 0, FW), *s = sb("a", 0, FW);
		k = one("sr", "sendRecvCompute", lm_xasprintf("\"dsts\": [%s, "
			"%s], \"srcs\": [%s, %s], \"sendToRanks\": [{\"int\": "
			"1}, {\"int\": 1}], \"recvFromRanks\": [{\"int\": 1}, "
			"{\"int\": 1}], \"pipeId\": {\"int\": 0}, \"op\": "
			"\"add\"", d, d, s, s));
		lower_fails(k, "sendRecvCompute with 2 srcs is not modelled "
			    "(one src, one dst, one rank each way)");
		frees(k, d, s, NULL);
	}
	/* a carrier without a core id: not one of the two cores */
	{
		char *dir = tu_tmpdir("klrops-sr-nocore");
		lm_module *m, *out = NULL;
		lm_error err;
		lp_warnings w = { 0, 0, NULL };
		k = one("sr", "sendRecv", sr_fields(sb("r", 0, FW),
						    sb("a", 0, FW), 1, 1, 0));
		m = setup(dir, k);
		m->has_core_id = 0;
		ck_assert_int_ne(lp_lower(&out, m, NULL, &w, &err), 0);
		ck_assert_int_eq(err.code, LM_EINPUT);
		ck_assert_msg(strstr(err.msg, "sendRecv exchanges tiles between "
				     "the two cores of a Logical NeuronCore "
				     "(LNC=2): the kernel must run on core 0 "
				     "or 1, and its carrier has no core id"),
			      "%s", err.msg);
		lp_warnings_free(&w);
		lm_module_free(m);
		tu_rmtree(dir);
		frees(dir, k, NULL);
	}
	/* one core alone: the peer's stage is not part of the run */
	{
		char *dir = tu_tmpdir("klrops-sr-alone");
		lm_module *m, *lo;
		ls_tensors in = { 0, NULL };
		ls_options o;
		ls_result res;
		lm_error err;
		int64_t shape[2] = { 128, FW };
		float *x = lm_xcalloc(128 * FW, sizeof *x);
		k = one("sr", "sendRecv", sr_fields(sb("r", 0, FW),
						    xs(0, FW), 1, 1, 0));
		m = setup(dir, k);
		lo = tu_lower_ok(m, 0, NULL);
		ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
		memset(&o, 0, sizeof o);
		memset(&res, 0, sizeof res);
		ck_assert_int_ne(ls_run(lo, &in, &o, &res, &err), 0);
		ck_assert_msg(strstr(err.msg, "remote_local_target names "
				     "allocation 'k_bad.sendrecv_1.stage' of "
				     "core 1, which is not part of this run"),
			      "%s", err.msg);
		ls_result_free(&res);
		ls_tensors_free(&in);
		lm_module_free(lo);
		lm_module_free(m);
		tu_rmtree(dir);
		frees(dir, k, x, NULL);
	}
}
END_TEST

/*
** tensorScalar with a tile operand and op1 but no imm1: the step-1
** scalar is 0, as with immediate operands (KLR's own evaluator):
** ys = max(x - x[p][0], 0) over columns 0..15.
*/
START_TEST(test_tile_scalar_op1_alone)
{
	body bd = { LM_BUF_INIT, 0 };
	char *a16 = xs(0, 16), *s0 = xs(0, 1), *d = sb("ys", 0, 16), *k;
	ls_result r;
	zero(&bd, "z_ys", "ys");
	st(&bd, "ts", "tensorScalar", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"imm0\": {\"tile\": %s}, \"op0\": \"subtract\", \"op1\": "
	   "\"max\"", d, a16, s0));
	store(&bd, "st_y", "ys", 0);
	k = kernel("k_ts", &bd, NULL);
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < 16; j++) {
			float t = xval(p, j) - xval(p, 0);
			EQ_F(yv(&r, p, j), t > 0.0f ? t : 0.0f, "op1 alone", p,
			     j);
		}
	ls_result_free(&r);
	frees(k, a16, s0, d, NULL);
}
END_TEST

/*
** dmaTranspose (nisa.dma_transpose): a 16 x 16 block of xs into ys,
** ys[j][p] = xs[p][j] bit for bit, the rest of ys untouched (0); a dtype
** other than the destination's and bounds from a register are refused
** (the latter on an ncDmaCopy too).
*/
START_TEST(test_dma_transpose)
{
	body bd = { LM_BUF_INIT, 0 };
	char *src = op_("xs", "sbuf", "float32", 128, FW, 0, 0, 16, 16);
	char *dst = op_("ys", "sbuf", "float32", P, FW, 0, 0, 16, 16), *k;
	ls_result r;
	zero(&bd, "z_ys", "ys");
	st(&bd, "tr", "dmaTranspose", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"axes\": \"XYZW\"", dst, src));
	store(&bd, "st_y", "ys", 0);
	k = kernel("k_dt", &bd, NULL);
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < FW; j++)
			EQ_F(yv(&r, p, j), p < 16 && j < 16 ? xval(j, p) : 0.0f,
			     "dma transpose", p, j);
	ls_result_free(&r);
	free(k);
	st(&bd, "tr", "dmaTranspose", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"axes\": \"XYZW\", \"dtype\": \"bfloat16\"", dst, src));
	k = kernel("k_dt", &bd, NULL);
	lower_fails(k, "dmaTranspose dtype bfloat16 differs from its "
		    "destination's float32");
	free(k);
	st(&bd, "tr", "dmaTranspose", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"axes\": \"XYZW\", \"oobMode\": {\"reg\": 3}", dst, src));
	k = kernel("k_dt", &bd, NULL);
	lower_fails(k, "dmaTranspose oobMode 'reg'");
	free(k);
	st(&bd, "cp", "ncDmaCopy", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"oobMode\": {\"reg\": 3}", dst, src));
	k = kernel("k_dt", &bd, NULL);
	lower_fails(k, "ncDmaCopy oobMode 'reg'");
	frees(k, src, dst, NULL);
}
END_TEST

/*
** exponential (nisa.exponential): ys[:, 8..24) = expf(x - rowmax) (the
** max a [P, 1] tile from a tensorReduce), bit for bit, and their sum read
** into ys[:, 1] (reducecmd ZeroAccumulate, summed in float32); an
** immediate maxValue goes through a scratch tile. LoadAccumulate, a
** reduceInit other than 0 and a reduceRes with Idle are refused.
*/
static char *exp_kernel(const char *maxv, const char *cmd, const char *init,
			int with_res)
{
	body bd = { LM_BUF_INIT, 0 };
	char *a64 = xs(0, FW), *a16 = xs(0, 16), *d = sb("ys", 0, 1);
	char *e = sb("ys", 8, 16), *rr = sb("ys", 1, 1), *k, *res;
	zero(&bd, "z_ys", "ys");
	st(&bd, "red_max", "tensorReduce", lm_xasprintf("\"dst\": %s, \"src\": "
	   "%s, \"op\": \"max\", \"opDim\": \"X\"", d, a16));
	res = with_res ? lm_xasprintf(", \"reduceRes\": %s", rr)
		       : lm_xstrdup("");
	st(&bd, "ex", "exponential", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"maxValue\": %s, \"reducecmd\": \"%s\", \"reduceInit\": "
	   "{\"imm\": {\"float\": %s}}%s", e, a16, maxv ? maxv : "", cmd,
	   init, res));
	store(&bd, "st_y", "ys", 0);
	k = kernel("k_exp", &bd, NULL);
	frees(a64, a16, d, e, rr, res, NULL);
	return k;
}

START_TEST(test_exponential)
{
	char *m = sb("ys", 0, 1);
	char *tile = lm_xasprintf("{\"tile\": %s}", m);
	char *k = exp_kernel(tile, "ZeroAccumulate", "0", 1);
	ls_result r;
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++) {
		float mx = xval(p, 0), sum = 0.0f;
		for (int j = 1; j < 16; j++)
			mx = xval(p, j) > mx ? xval(p, j) : mx;
		for (int j = 0; j < 16; j++) {
			float y = expf(xval(p, j) - mx);
			EQ_F(yv(&r, p, 8 + j), y, "exp", p, j);
			sum += y;
		}
		ck_assert_msg(fabsf(yv(&r, p, 1) - sum) <= 1e-6f * sum,
			      "row %d: sum %.9g, want %.9g", p,
			      (double)yv(&r, p, 1), (double)sum);
	}
	ls_result_free(&r);
	free(k);
	/* an immediate max, no reduction */
	k = exp_kernel("{\"imm\": {\"float\": 0.5}}", "Idle", "0", 0);
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < 16; j++)
			EQ_F(yv(&r, p, 8 + j), expf(xval(p, j) - 0.5f), "exp imm",
			     p, j);
	ls_result_free(&r);
	free(k);
	k = exp_kernel(tile, "LoadAccumulate", "0", 1);
	lower_fails(k, "exponential reducecmd LoadAccumulate is not modelled");
	free(k);
	k = exp_kernel(tile, "ZeroAccumulate", "1.5", 1);
	lower_fails(k, "exponential reduceInit other than 0 is not modelled");
	free(k);
	k = exp_kernel(tile, "Idle", "0", 1);
	lower_fails(k, "exponential reduceRes with reducecmd Idle");
	frees(k, tile, m, NULL);
}
END_TEST

/*
** A coreBarrier is a fence for allocations first used after it too: a
** memSet of a tile no statement touched before the barrier depends on
** the barrier (with two cores, what the other core wrote before its
** barrier is complete when this core's later statements run).
*/
START_TEST(test_core_barrier_fences_later_tensors)
{
	body bd = { LM_BUF_INIT, 0 };
	char *nt = op_("nt", "sbuf", "int32", 1, 1, 0, 0, 1, 1), *k;
	char *dir = tu_tmpdir("klrops-fence");
	lm_module *m, *lo;
	lm_function *f;
	int found = 0;

	st(&bd, "bar", "coreBarrier", lm_xasprintf("\"data\": %s, \"cores\": "
						   "[0]", nt));
	zero(&bd, "ms", "ys");
	store(&bd, "st", "ys", 0);
	k = kernel("k_fence", &bd, NULL);
	m = setup(dir, k);
	lo = tu_lower_ok(m, 0, NULL);
	f = lm_module_find_function(lo, "k_fence");
	ck_assert_ptr_nonnull(f);
	for (int b = 0; b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts; i++) {
			const lm_inst *in = &f->blocks[b].insts[i];
			int dep = 0;
			if (strcmp(in->name, "ms") != 0)
				continue;
			found = 1;
			for (int d = 0; d < in->n_deps; d++)
				dep |= !strcmp(in->deps[d], "bar");
			ck_assert_msg(dep, "memSet 'ms' after the barrier does "
				      "not depend on it");
		}
	ck_assert(found);
	lm_module_free(lo);
	lm_module_free(m);
	tu_rmtree(dir);
	frees(dir, nt, k, NULL);
}
END_TEST

/*
** activationReduce (nisa.activation_reduce): exp of two 16-column slices
** into ys[:, 8..24) and ys[:, 24..40), each row's float32 results summed
** from its first element into the activation engine's registers
** (ZeroAccumulate, then Accumulate) and read out into ys[:, 1] and
** ys[:, 2], bit for bit. A reduceOp other than add, LoadAccumulate, no
** reduceRes, reduceRes with Idle, and an ncActivate that accumulates are
** refused.
*/
static char *ar_kernel(const char *cmd1, const char *rop, int with_res)
{
	body bd = { LM_BUF_INIT, 0 };
	char *a = xs(0, 16), *b = xs(16, 16), *e1 = sb("ys", 8, 16);
	char *e2 = sb("ys", 24, 16), *r1 = sb("ys", 1, 1), *r2 = sb("ys", 2, 1);
	char *res = with_res ? lm_xasprintf(", \"reduceRes\": %s", r1)
			     : lm_xstrdup("");
	char *k;
	zero(&bd, "z_ys", "ys");
	st(&bd, "ar1", "activationReduce", lm_xasprintf("\"dst\": %s, "
	   "\"src\": %s, \"activationFunc\": \"exp\", \"scale\": {\"imm\": "
	   "{\"float\": 1}}, \"reduceOp\": \"%s\"%s, \"accumulatorCmd\": "
	   "\"%s\"", e1, a, rop, res, cmd1));
	st(&bd, "ar2", "activationReduce", lm_xasprintf("\"dst\": %s, "
	   "\"src\": %s, \"activationFunc\": \"exp\", \"scale\": {\"imm\": "
	   "{\"float\": 0.5}}, \"reduceOp\": \"add\", \"reduceRes\": %s, "
	   "\"accumulatorCmd\": \"Accumulate\"", e2, b, r2));
	store(&bd, "st_y", "ys", 0);
	k = kernel("k_ar", &bd, NULL);
	frees(a, b, e1, e2, r1, r2, res, NULL);
	return k;
}

START_TEST(test_activation_reduce)
{
	char *k = ar_kernel("ZeroAccumulate", "add", 1), *d, *a;
	ls_result r;
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++) {
		float s1 = yv(&r, p, 8), s2 = yv(&r, p, 24), reg;
		for (int j = 1; j < 16; j++) {
			s1 += yv(&r, p, 8 + j);
			s2 += yv(&r, p, 24 + j);
		}
		/* the results are the activation's (exp), not a copy */
		ck_assert(yv(&r, p, 8) > 0.0f && yv(&r, p, 8) != xval(p, 0));
		reg = 0.0f + s1;
		EQ_F(yv(&r, p, 1), reg, "ZeroAccumulate read-out", p, 1);
		reg = reg + s2;
		EQ_F(yv(&r, p, 2), reg, "Accumulate read-out", p, 2);
	}
	ls_result_free(&r);
	free(k);
	k = ar_kernel("ZeroAccumulate", "max", 1);
	lower_fails(k, "activationReduce reduceOp 'max' is not modelled");
	free(k);
	k = ar_kernel("LoadAccumulate", "add", 1);
	lower_fails(k, "activationReduce accumulatorCmd 'LoadAccumulate' is "
		    "not modelled");
	free(k);
	k = ar_kernel("ZeroAccumulate", "add", 0);
	lower_fails(k, "activationReduce without a reduceRes");
	free(k);
	k = ar_kernel("Idle", "add", 1);
	lower_fails(k, "activationReduce reduceRes with accumulatorCmd Idle");
	free(k);
	d = sb("ys", 8, 16);
	a = xs(0, 16);
	k = one("act", "ncActivate", lm_xasprintf("\"dst\": %s, \"src\": %s, "
		"\"activationFunc\": \"exp\", \"scale\": {\"imm\": "
		"{\"float\": 1}}, \"accumulatorCmd\": \"ZeroAccumulate\"", d, a));
	lower_fails(k, "activation accumulatorCmd 'ZeroAccumulate' is not "
		    "supported (only Idle; activationReduce accumulates)");
	frees(k, d, a, NULL);
}
END_TEST

/*
** tensorScalarReduce (nisa.tensor_scalar_reduce): ys[:, 8..24) = 0.75 - x
** (reverse0) with the row's float32 sum into ys[:, 1]; then ys[:, 24..40)
** = x * ys[p][1] (a tile operand) with the row's max into ys[:, 2]; bit
** for bit, folded from the first element. Another reduceCmd, a
** reduceInit, no reduceOp and a reduceRes of two elements per partition
** are refused.
*/
static char *tsr_kernel(const char *cmd, const char *init, int res_w)
{
	body bd = { LM_BUF_INIT, 0 };
	char *a = xs(0, 16), *b = xs(16, 16), *e1 = sb("ys", 8, 16);
	char *e2 = sb("ys", 24, 16), *r1 = sb("ys", 1, res_w);
	char *r2 = sb("ys", 2, 1), *t = sb("ys", 1, 1), *k;
	zero(&bd, "z_ys", "ys");
	st(&bd, "tsr1", "tensorScalarReduce", lm_xasprintf("\"dst\": %s, "
	   "\"src\": %s, \"operand0\": {\"imm\": {\"float\": 0.75}}, "
	   "\"op0\": \"subtract\", \"reverse0\": true, \"reduceOp\": "
	   "\"add\", \"reduceRes\": %s, \"reduceCmd\": \"%s\"%s", e1, a, r1,
	   cmd, init));
	st(&bd, "tsr2", "tensorScalarReduce", lm_xasprintf("\"dst\": %s, "
	   "\"src\": %s, \"operand0\": {\"tile\": %s}, \"op0\": \"mult\", "
	   "\"reverse0\": false, \"reduceOp\": \"max\", \"reduceRes\": %s, "
	   "\"reduceCmd\": \"ZeroAccumulate\"", e2, b, t, r2));
	store(&bd, "st_y", "ys", 0);
	k = kernel("k_tsr", &bd, NULL);
	frees(a, b, e1, e2, r1, r2, t, NULL);
	return k;
}

START_TEST(test_tensor_scalar_reduce)
{
	char *k = tsr_kernel("ZeroAccumulate", "", 1);
	ls_result r;
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++) {
		float sum = 0.0f, mx = 0.0f;
		for (int j = 0; j < 16; j++) {
			float y = 0.75f - xval(p, j);
			EQ_F(yv(&r, p, 8 + j), y, "0.75 - x", p, j);
			sum = j ? sum + y : y;
		}
		EQ_F(yv(&r, p, 1), sum, "row sum", p, 1);
		for (int j = 0; j < 16; j++) {
			float y = xval(p, 16 + j) * sum;
			EQ_F(yv(&r, p, 24 + j), y, "x * sum", p, j);
			mx = j && !(y > mx) ? mx : y;
		}
		EQ_F(yv(&r, p, 2), mx, "row max", p, 2);
	}
	ls_result_free(&r);
	free(k);
	k = tsr_kernel("Accumulate", "", 1);
	lower_fails(k, "tensorScalarReduce reduceCmd 'Accumulate' is not "
		    "modelled");
	free(k);
	k = tsr_kernel("ZeroAccumulate", ", \"reduceInit\": {\"float\": 0}", 1);
	lower_fails(k, "tensorScalarReduce reduceInit is not modelled");
	free(k);
	k = tsr_kernel("ZeroAccumulate", "", 2);
	lower_fails(k, "tensorScalarReduce reduceRes must be a [16, 1] tile");
	free(k);
}
END_TEST

/*
** ncScalarTensorTensor (nisa.scalar_tensor_tensor): ys[:, 8..24) =
** (0.75 - x) * x' (reverse0: the immediate on the left, x' the next 16
** columns); the legacy scalarTensorTensor: ys[:, 24..40) = x' / (x +
** 0.5) (reverse1); tensorTensorScan (nisa.tensor_tensor_scan):
** ys[:, 40..56) with r = ys[p][8] (a tile initial), r = (x[j] + r) * 0.5
** ... (op0 add, op1 mult by x' halved). Bit for bit against float32.
*/
static char *stt_kernel(const char *src1, const char *acc)
{
	body bd = { LM_BUF_INIT, 0 };
	char *a = xs(0, 16), *b = xs(16, 16), *e1 = sb("ys", 8, 16);
	char *e2 = sb("ys", 24, 16), *e3 = sb("ys", 40, 16), *t = sb("ys", 8, 1);
	char *k, *bt = lm_xasprintf("{\"tile\": %s}", b);
	zero(&bd, "z_ys", "ys");
	st(&bd, "stt", "ncScalarTensorTensor", lm_xasprintf("\"dst\": %s, "
	   "\"data\": %s, \"src0\": {\"imm\": {\"float\": 0.75}}, "
	   "\"src1\": %s, \"op0\": \"subtract\", \"op1\": \"mult\", "
	   "\"reverseOperands\": \"first\"", e1, a, src1 ? src1 : bt));
	st(&bd, "stt_old", "scalarTensorTensor", lm_xasprintf("\"dst\": %s, "
	   "\"src0\": %s, \"src1\": %s, \"op0\": \"add\", \"op1\": "
	   "\"divide\", \"reverseOperands\": \"second\", \"imm0\": {\"float\": "
	   "0.5}, \"accumulatorCmd\": \"%s\"", e2, a, b, acc));
	st(&bd, "scan", "tensorTensorScan", lm_xasprintf("\"dst\": %s, "
	   "\"src0\": %s, \"src1\": %s, \"op0\": \"add\", \"op1\": "
	   "\"mult\", \"reverseOperands\": \"none\", \"imm0\": {\"tile\": %s}, "
	   "\"accumulatorCmd\": \"Idle\"", e3, a, b, t));
	store(&bd, "st_y", "ys", 0);
	k = kernel("k_stt", &bd, NULL);
	frees(a, b, bt, e1, e2, e3, t, NULL);
	return k;
}

START_TEST(test_scalar_tensor_tensor_and_scan)
{
	char *k = stt_kernel(NULL, "Idle");
	ls_result r;
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++) {
		float run;
		for (int j = 0; j < 16; j++) {
			float x = xval(p, j), x1 = xval(p, 16 + j);
			EQ_F(yv(&r, p, 8 + j), (0.75f - x) * x1, "stt", p, j);
			EQ_F(yv(&r, p, 24 + j), x1 / (x + 0.5f), "stt legacy",
			     p, j);
		}
		run = yv(&r, p, 8);
		for (int j = 0; j < 16; j++) {
			run = (xval(p, j) + run) * xval(p, 16 + j);
			EQ_F(yv(&r, p, 40 + j), run, "scan", p, j);
		}
	}
	ls_result_free(&r);
	free(k);
	k = stt_kernel("{\"imm\": {\"float\": 1}}", "Idle");
	lower_fails(k, "ncScalarTensorTensor src1 must be a tile of the data's "
		    "shape, not an immediate");
	free(k);
	k = stt_kernel(NULL, "ZeroAccumulate");
	lower_fails(k, "scalarTensorTensor accumulatorCmd 'ZeroAccumulate' is "
		    "not modelled (only Idle)");
	free(k);
}
END_TEST

/*
** dmaCompute (nisa.dma_compute): ys[:, 8..24) = a + 0.5 * b (scales [1,
** 0.5], add) and ys[:, 24..40) = fmaxf(fmaxf(0, a), b) (max: the CCE
** accumulator starts at 0), a and b the first two 16-column slices of x;
** shuffle (nisa.nc_stream_shuffle): ys[p, 40..56) = x[mask[p]] with
** mask[i] = 15 - i on the 16 partitions of the tile, 255 elsewhere.
** Bit for bit; bad scales, reduce ops and masks are refused.
*/
static char *dc_kernel(const char *scales, const char *rop2,
		       const char *mask)
{
	body bd = { LM_BUF_INIT, 0 };
	char *a = xs(0, 16), *b = xs(16, 16), *e1 = sb("ys", 8, 16);
	char *e2 = sb("ys", 24, 16), *e3 = sb("ys", 40, 16), *k;
	zero(&bd, "z_ys", "ys");
	st(&bd, "dc", "dmaCompute", lm_xasprintf("\"dst\": %s, \"srcs\": [%s, "
	   "%s], \"scales\": %s, \"reduceOp\": \"add\"", e1, a, b, scales));
	st(&bd, "dc_max", "dmaCompute", lm_xasprintf("\"dst\": %s, \"srcs\": "
	   "[%s, %s], \"scales\": [], \"reduceOp\": \"%s\"", e2, a, b, rop2));
	st(&bd, "sh", "shuffle", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"shuffleMask\": %s", e3, a, mask));
	store(&bd, "st_y", "ys", 0);
	k = kernel("k_dc", &bd, NULL);
	frees(a, b, e1, e2, e3, NULL);
	return k;
}

static char *rev_mask(int n, const char *first)
{
	lm_buf b = LM_BUF_INIT;
	lm_buf_printf(&b, "[%s", first ? first : "{\"int\": 15}");
	for (int i = 1; i < n; i++)
		lm_buf_printf(&b, ", {\"int\": %d}", i < 16 ? 15 - i : 255);
	lm_buf_printf(&b, "]");
	return lm_buf_detach(&b);
}

START_TEST(test_dma_compute_and_shuffle)
{
	char *m32 = rev_mask(32, NULL), *m31 = rev_mask(31, NULL);
	char *mbad = rev_mask(32, "{\"int\": 40}");
	const char *sc = "[{\"float\": 1}, {\"float\": 0.5}]";
	char *k = dc_kernel(sc, "max", m32);
	ls_result r;
	lower_run(k, P, &r);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < 16; j++) {
			float a = xval(p, j), b = xval(p, 16 + j);
			float half = 0.5f * b;
			EQ_F(yv(&r, p, 8 + j), (0.0f + a) + half, "add", p, j);
			EQ_F(yv(&r, p, 24 + j), fmaxf(fmaxf(0.0f, a), b), "max",
			     p, j);
			EQ_F(yv(&r, p, 40 + j), xval(15 - p, j), "shuffle", p,
			     j);
		}
	ls_result_free(&r);
	free(k);
	k = dc_kernel(sc, "mult", m32);
	lower_fails(k, "dmaCompute reduceOp 'mult' is not modelled");
	free(k);
	k = dc_kernel("[{\"float\": 1}]", "max", m32);
	lower_fails(k, "dmaCompute has 1 scales for 2 sources");
	free(k);
	k = dc_kernel(sc, "max", m31);
	lower_fails(k, "shuffle shuffleMask has 31 entries (32)");
	free(k);
	k = dc_kernel(sc, "max", mbad);
	lower_fails(k, "shuffle shuffleMask[0] must be an int 0..31 or 255");
	frees(k, m32, m31, mbad, NULL);
}
END_TEST

/* ---- local gather (nisa.local_gather) ------------------------------------ */

#define LG_P 32   /* two 16-partition groups */
#define LG_F 100  /* src elements per partition */
#define LG_J 3    /* index elements per partition */

/* src [32, 100] float32 = 1000 p + f, index [32, 3] uint16 = base + 2 p
** + 5 j (both by iota), out [32, 64] zeroed, then local_gather with
** numElemPerIdx n and numValidIndicies nv (text, or NULL for none) into
** out[:, 0 .. V n), out stored to kout rows 0..31. */
static char *lg_kernel(int n, const char *nv, int V, int base)
{
	body bd = { LM_BUF_INIT, 0 };
	char *s = op_("lsrc", "sbuf", "float32", LG_P, LG_F, 0, 0, LG_P, LG_F);
	char *ix = op_("lidx", "sbuf", "uint16", LG_P, LG_J, 0, 0, LG_P, LG_J);
	char *o = op_("lout", "sbuf", "float32", LG_P, FW, 0, 0, LG_P, FW);
	char *d = op_("lout", "sbuf", "float32", LG_P, FW, 0, 0, LG_P, V * n);
	char *ko = op_("kout", "hbm", "float32", 128, FW, 0, 0, LG_P, FW), *k;
	st(&bd, "src_iota", "iota", lm_xasprintf("\"dst\": %s, \"pattern\": "
	   "{\"offset\": 0, \"channelMultiplier\": 1000, \"pattern\": "
	   "[{\"step\": 1, \"num\": %d}]}", s, LG_F));
	st(&bd, "idx_iota", "iota", lm_xasprintf("\"dst\": %s, \"pattern\": "
	   "{\"offset\": %d, \"channelMultiplier\": 2, \"pattern\": "
	   "[{\"step\": 5, \"num\": %d}]}", ix, base, LG_J));
	st(&bd, "z_out", "memSet", lm_xasprintf("\"dst\": %s, \"value\": "
	   "{\"float\": 0}, \"dtype\": \"float32\"", o));
	st(&bd, "lg", "ncLocalGather", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"index\": %s, \"numElemPerIdx\": {\"int\": %d}%s%s", d, s, ix, n,
	   nv ? ", \"numValidIndicies\": " : "", nv ? nv : ""));
	st(&bd, "st_out", "ncDmaCopy", lm_xasprintf("\"dst\": %s, \"src\": %s",
	   ko, o));
	k = kernel("k_lg", &bd, NULL);
	frees(s, ix, o, d, ko, NULL);
	return k;
}

/* The documented operation, in C: group g's indices flattened partition
** first, every partition of the group reading its own src partition. */
static float lg_ref(int p, int col, int n, int V, int base)
{
	int g = p / 16, k = col / n, e = col % n, q;
	unsigned idx;
	if (col >= V * n)
		return 0.0f;
	q = 16 * g + k % 16;                      /* the index's partition */
	idx = (unsigned)(base + 2 * q + 5 * (k / 16));
	return (float)(1000 * p) + (float)(idx + (unsigned)e);
}

/*
** local_gather bit for bit against the documented operation: one
** element per index with all 48 indices of a group (16 q, no tail), two
** per index with 21 (16 + 5), four per index with 13 (a tail only), one
** with 37; partitions read indices held by the other 15 partitions of
** their group, never the other group's. Called and inlined agree.
*/
START_TEST(test_local_gather)
{
	static const struct { int n, V; const char *nv; } c[] = {
		{ 1, 48, NULL }, { 2, 21, "{\"int\": 21}" },
		{ 4, 13, "{\"int\": 13}" }, { 1, 37, "{\"int\": 37}" },
		{ 1, 48, "{\"int\": 0}" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char *k = lg_kernel(c[i].n, c[i].nv, c[i].V, 1);
		ls_result r;
		lower_run(k, LG_P, &r);
		for (int p = 0; p < LG_P; p++)
			for (int j = 0; j < FW; j++)
				EQ_F(yv(&r, p, j), lg_ref(p, j, c[i].n, c[i].V,
							  1), "local gather",
				     p, j);
		/* partition 3 of group 1 read partition 17's first index */
		ck_assert(yv(&r, 19, c[i].n) == 19000.0f + 1 + 2 * 17);
		ls_result_free(&r);
		free(k);
	}
}
END_TEST

/* Lowered, the kernel's run fails with an error holding want. */
static void run_fails(const char *json, const char *want)
{
	char *dir = tu_tmpdir("klrops-runbad");
	lm_module *m = setup(dir, json), *lo = tu_lower_ok(m, 0, NULL);
	ls_tensors in = { 0, NULL };
	ls_options o;
	ls_result r;
	lm_error err;
	int64_t shape[2] = { 128, FW };
	float *x = lm_xcalloc(128 * FW, sizeof *x);
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	memset(&o, 0, sizeof o);
	memset(&r, 0, sizeof r);
	ck_assert_int_ne(ls_run(lo, &in, &o, &r, &err), 0);
	ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'",
		      err.msg, want);
	ls_result_free(&r);
	ls_tensors_free(&in);
	free(x);
	lm_module_free(lo);
	lm_module_free(m);
	tu_rmtree(dir);
	free(dir);
}

/* An index past src (I + e >= 100) is a run error of the Gather that
** reads it: element 0 at index 100, element 1 at index 99. */
START_TEST(test_local_gather_out_of_range)
{
	char *k = lg_kernel(1, "{\"int\": 1}", 1, 100);
	run_fails(k, "index 100 (indirection_ins[0] partition 0, element 0) "
		  "is out of range: ins[0] 'lsrc' has 100 elements per "
		  "partition (0..99) (Gather)");
	free(k);
	/* group 1's first index is 67 + 2 * 16 = 99: element 0 is in
	** src, element 1 (99 + 1) is not */
	k = lg_kernel(4, "{\"int\": 1}", 1, 67);
	run_fails(k, "instruction lg.elem1: index 99 (indirection_ins[0] "
		  "partition 16, element 0) is out of range: ins[0] 'lsrc' has "
		  "99 elements per partition (0..98) (Gather)");
	free(k);
}
END_TEST

/* ncLocalGather with its operands replaced (NULL keeps the default). */
static char *lg_bad(const char *dst, const char *src, const char *ix,
		    const char *n, const char *nv)
{
	body bd = { LM_BUF_INIT, 0 };
	char *s = op_("lsrc", "sbuf", "float32", LG_P, LG_F, 0, 0, LG_P, LG_F);
	char *i = op_("lidx", "sbuf", "uint16", LG_P, LG_J, 0, 0, LG_P, LG_J);
	char *d = op_("lout", "sbuf", "float32", LG_P, FW, 0, 0, LG_P, 48);
	char *k;
	st(&bd, "lg", "ncLocalGather", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"index\": %s, \"numElemPerIdx\": %s%s%s", dst ? dst : d,
	   src ? src : s, ix ? ix : i, n ? n : "{\"int\": 1}",
	   nv ? ", \"numValidIndicies\": " : "", nv ? nv : ""));
	k = kernel("k_lg_bad", &bd, NULL);
	frees(s, i, d, NULL);
	return k;
}

START_TEST(test_local_gather_refusals)
{
	char *k, *t, *u;
	k = lg_bad(NULL, NULL, NULL, "{\"int\": 3}", NULL);
	lower_fails(k, "ncLocalGather numElemPerIdx 3 is not one of 1, 2, 4, "
		    "8, 16, 32");
	free(k);
	k = lg_bad(NULL, NULL, NULL, "{\"float\": 1}", NULL);
	lower_fails(k, "ncLocalGather numElemPerIdx must be an int immediate "
		    "(got 'float')");
	free(k);
	k = lg_bad(NULL, NULL, NULL, NULL, "{\"float\": 4}");
	lower_fails(k, "ncLocalGather numValidIndicies must be an int "
		    "immediate (got 'float')");
	free(k);
	k = lg_bad(NULL, NULL, NULL, NULL, "{\"int\": 49}");
	lower_fails(k, "ncLocalGather numValidIndicies 49 exceeds the 48 "
		    "indices of a 16-partition group of index");
	free(k);
	t = op_("lidx", "sbuf", "uint32", LG_P, LG_J, 0, 0, LG_P, LG_J);
	k = lg_bad(NULL, NULL, t, NULL, NULL);
	lower_fails(k, "ncLocalGather index has dtype uint32: the indices are "
		    "uint16");
	frees(k, t, NULL);
	t = op_("lout", "sbuf", "int32", LG_P, FW, 0, 0, LG_P, 48);
	k = lg_bad(t, NULL, NULL, NULL, NULL);
	lower_fails(k, "ncLocalGather dst dtype int32 differs from src's "
		    "float32 (local_gather does not convert)");
	frees(k, t, NULL);
	t = op_("lout", "sbuf", "float32", LG_P, FW, 0, 0, LG_P, 40);
	k = lg_bad(t, NULL, NULL, NULL, NULL);
	lower_fails(k, "ncLocalGather dst must hold 32 x 48 elements (48 "
		    "indices of 1 elements per partition), got 1280");
	frees(k, t, NULL);
	t = op_("lsrc", "sbuf", "float32", LG_P, LG_F, 0, 0, 8, LG_F);
	u = op_("lidx", "sbuf", "uint16", LG_P, LG_J, 0, 0, 8, LG_J);
	k = lg_bad(NULL, t, u, NULL, NULL);
	lower_fails(k, "ncLocalGather src, index and dst must span the same "
		    "partitions, a multiple of 16 (got 8, 8 and 32)");
	frees(k, t, u, NULL);
	t = op_("lsrc", "sbuf", "float32", 48, LG_F, 16, 0, LG_P, LG_F);
	k = lg_bad(NULL, t, NULL, NULL, NULL);
	lower_fails(k, "ncLocalGather src, index and dst must start at the "
		    "same partition, a multiple of 16 (the first of a GpSimd "
		    "core's 16): got 16, 0 and 0");
	frees(k, t, NULL);
	t = op_("lout", "hbm", "float32", LG_P, 48, 0, 0, LG_P, 48);
	k = lg_bad(t, NULL, NULL, NULL, NULL);
	lower_fails(k, "ncLocalGather src, index and dst must be in SBUF");
	frees(k, t, NULL);
	/* an index [32, 2, 3]: free pairs [6, 2] [1, 3] are one run; [8, 2]
	** [1, 3] of a [32, 16] tensor are two */
	t = lm_xasprintf("{\"abstract\": {\"birPattern\": {\"tensor\": %s, "
			 "\"offset\": 0, \"pattern\": [{\"step\": 16, \"num\": "
			 "32}, {\"step\": 8, \"num\": 2}, {\"step\": 1, "
			 "\"num\": 3}]}}}", u = tn("lidx2", "sbuf", "uint16",
						   LG_P, 16));
	free(u);
	k = lg_bad(NULL, NULL, t, NULL, NULL);
	lower_fails(k, "ncLocalGather index with 2 free dimensions is not "
		    "modelled (the documents flatten a [P, J] index tile, "
		    "partition first)");
	frees(k, t, NULL);
	/* two elements per index from a src of two runs per partition */
	t = lm_xasprintf("{\"abstract\": {\"birPattern\": {\"tensor\": %s, "
			 "\"offset\": 0, \"pattern\": [{\"step\": %d, \"num\": "
			 "32}, {\"step\": 50, \"num\": 2}, {\"step\": 1, "
			 "\"num\": 40}]}}}", u = tn("lsrc", "sbuf", "float32",
						   LG_P, LG_F), LG_F);
	free(u);
	u = op_("lout", "sbuf", "float32", LG_P, FW, 0, 0, LG_P, 16);
	k = lg_bad(u, t, NULL, "{\"int\": 2}", "{\"int\": 8}");
	lower_fails(k, "ncLocalGather with numElemPerIdx 2 needs src and dst "
		    "patterns of one run of elements per partition (src has 2, "
		    "dst 1)");
	frees(k, t, u, NULL);
}
END_TEST

/* localGather (the pool-buffer record without an index operand) stays
** refused when the kernel is read: its name and payload serde tag. */
START_TEST(test_local_gather_pool_record_refused)
{
	char *s = sb("ys", 0, 16), *d = sb("zs", 0, 16);
	body bd = { LM_BUF_INIT, 0 };
	char *k;
	lp_klr_file f;
	lm_error err;
	st(&bd, "pg", "localGather", lm_xasprintf("\"dst\": %s, \"src\": %s, "
	   "\"indexMissBehavior\": \"skip\", \"freePoolBuffer\": true", d, s));
	k = kernel("k_pg", &bd, NULL);
	ck_assert_int_ne(lp_klr_from_json(&f, k, strlen(k), "k.json", &err),
			 0);
	ck_assert_msg(strstr(err.msg, "Operator 'localGather' (payload serde "
			     "tag 162) is not supported by lncsim") != NULL,
		      "%s", err.msg);
	frees(s, d, k, NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("klrops");
	TCase *tc = tcase_create("ops");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_vector_ops);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_tile_scalar_op1_alone);
	tcase_add_test(tc, test_dma_transpose);
	tcase_add_test(tc, test_exponential);
	tcase_add_test(tc, test_activation_reduce);
	tcase_add_test(tc, test_tensor_scalar_reduce);
	tcase_add_test(tc, test_scalar_tensor_tensor_and_scan);
	tcase_add_test(tc, test_dma_compute_and_shuffle);
	tcase_add_test(tc, test_register_loop);
	tcase_add_test(tc, test_register_offsets);
	tcase_add_test(tc, test_core_barrier_two_cores);
	tcase_add_test(tc, test_sendrecv_two_cores);
	tcase_add_test(tc, test_sendrecv_refusals);
	tcase_add_test(tc, test_core_barrier_fences_later_tensors);
	tcase_add_test(tc, test_register_offset_out_of_range);
	tcase_add_test(tc, test_local_gather);
	tcase_add_test(tc, test_local_gather_out_of_range);
	tcase_add_test(tc, test_local_gather_refusals);
	tcase_add_test(tc, test_local_gather_pool_record_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_nki_mm.c -- the NKI example kernels of examples/nki/matmul (float32
** and its bfloat16 variant matmul/bf16) and examples/nki/transpose: each
** carrier module is lowered (called and inlined) and run on inputs made
** here; every output element is checked against a float64 reference
** computed here (the matmul within the bound its README gives, the
** transpose exactly); the committed matmul .klr files are `lncsim klr
** pack` of their JSON; the
** called, inlined and two-core linked forms must agree bit for bit; and
** a run logged into a scratch database has its matmul rows and PE
** utilization, and `lncsim report` on that database succeeds.
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"
#include "dtype.h"
#include "provision.h"
#include "linker.h"
#include "sim.h"
#include "diff.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* matmul: lhsT [K, M], rhs [K, N] -> result [M, N] */
#define MK 512
#define MM 256
#define MN 512
/* transpose: ref [D0 * B, N] -> dst [D0 * N, B] */
#define TD0 2
#define TB 128
#define TN 256

static lm_module *load_example(const char *rel)
{
	char *p = tu_srcpath(rel);
	lm_module *m = tu_load(p);
	free(p);
	return m;
}

static const float *out_f32(const ls_tensors *ts, const char *name,
			    int64_t count)
{
	const ls_tensor *t = ls_tensors_find(ts, name);
	ck_assert_msg(t != NULL, "no output %s", name);
	ck_assert_int_eq(t->dtype, LM_DT_FLOAT32);
	ck_assert_int_eq(t->count, count);
	return t->data;
}

static void add_input(ls_tensors *in, const char *name, int rows, int cols,
		      uint32_t seed, float **keep)
{
	int64_t shape[2] = { rows, cols };
	float *v = lm_xmalloc((size_t)rows * cols * sizeof *v);
	tb_fill(v, (int64_t)rows * cols, seed);
	ls_tensors_add(in, name, LM_DT_FLOAT32, shape, 2, v);
	*keep = v;
}

/* As add_input, in bfloat16: the values rounded to bfloat16 (*keep holds
** them, exactly, as float32) and added as bfloat16 bits. */
static void add_input_bf16(ls_tensors *in, const char *name, int rows,
			   int cols, uint32_t seed, float **keep)
{
	int64_t shape[2] = { rows, cols }, n = (int64_t)rows * cols;
	float *v = lm_xmalloc((size_t)n * sizeof *v);
	uint16_t *h = lm_xmalloc((size_t)n * sizeof *h);
	tb_fill(v, n, seed);
	for (int64_t i = 0; i < n; i++) {
		h[i] = lm_f32_to_bf16(v[i]);
		v[i] = lm_bf16_to_f32(h[i]);
	}
	ls_tensors_add(in, name, LM_DT_BFLOAT16, shape, 2, h);
	free(h);
	*keep = v;
}

static const uint16_t *out_bf16(const ls_tensors *ts, const char *name,
				int64_t count)
{
	const ls_tensor *t = ls_tensors_find(ts, name);
	ck_assert_msg(t != NULL, "no output %s", name);
	ck_assert_int_eq(t->dtype, LM_DT_BFLOAT16);
	ck_assert_int_eq(t->count, count);
	return t->data;
}

static void run1(const lm_module *m, const ls_tensors *in, ls_result *r)
{
	ls_options o;
	lm_error err;
	memset(&o, 0, sizeof o);
	memset(r, 0, sizeof *r);
	ck_assert_msg(ls_run(m, in, &o, r, &err) == 0, "run: %s", err.msg);
}

/*
** The two-core form of an example (DIR/lnc2/nc<c>/sg0/def.json): both
** cores lowered called and inlined; the called ones linked and checked by
** the differential checker against their side-by-side run; the inlined
** ones run side by side and agree with it. The checker's result is
** returned (the caller frees it).
*/
static void two_cores(const char *dir, const ls_tensors *in,
		      ls_diff_result *dr)
{
	lm_module *src[2], *called[2], *inl[2], *linked = NULL;
	lk_options lo;
	lk_report rep;
	ls_diff_opts dopt;
	ls_result ri;
	lm_error err;

	for (int c = 0; c < 2; c++) {
		char *rel = lm_xasprintf("%s/lnc2/nc%d/sg0/def.json", dir, c);
		src[c] = load_example(rel);
		called[c] = tu_lower_ok(src[c], 0, NULL);
		inl[c] = tu_lower_ok(src[c], 1, NULL);
		ck_assert_int_eq(tu_count_op(called[c], LM_OP_NKIKERNEL), 1);
		ck_assert_int_eq(tu_count_op(inl[c], LM_OP_NKIKERNEL), 0);
		free(rel);
	}
	memset(&lo, 0, sizeof lo);
	memset(&rep, 0, sizeof rep);
	lo.abs_file_paths = 1;
	ck_assert_msg(lk_link(called, 2, &lo, &linked, &rep, &err) == 0, "%s",
		      err.msg);
	memset(&dopt, 0, sizeof dopt);
	dopt.schedules = 1;
	memset(dr, 0, sizeof *dr);
	ck_assert_msg(ls_diff(called, 2, linked, in, &dopt, dr, &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(dr->status == LS_DIFF_PASS, "%s", dr->message);
	ck_assert_int_eq(dr->n_expected, 2);
	memset(&ri, 0, sizeof ri);
	ck_assert_msg(ls_run_multi(inl, 2, in, NULL, &ri, &err) == 0, "%s",
		      err.msg);
	tu_same_outputs(&dr->ref.outputs, &ri.outputs);
	tu_same_outputs(&dr->ref.outputs, &dr->linked.outputs);
	ls_result_free(&ri);
	lk_report_free(&rep);
	lm_module_free(linked);
	for (int c = 0; c < 2; c++) {
		lm_module_free(src[c]);
		lm_module_free(called[c]);
		lm_module_free(inl[c]);
	}
}

/*
** The tiled matmul: result = lhsT^T rhs over K = 512 in four 128-deep
** ncMatMuls accumulated in one PSUM bank per output tile. Reference: the
** float64 sum; bound (README): |got - ref| <= gamma_K * sum |a b| with
** gamma_K = K u / (1 - K u), u = 2^-24, for float32 accumulation of K
** products in any order. And the simulator's own order: bit for bit the
** in-order float32 fmaf chain over k = 0..511, which says the four
** matmuls of a tile formed one accumulation group.
*/
START_TEST(test_matmul)
{
	lm_module *m = load_example("examples/nki/matmul/def.json");
	lm_module *called = tu_lower_ok(m, 0, NULL), *inl = tu_lower_ok(m, 1, NULL);
	ls_tensors in = { 0, NULL };
	ls_result rc, ri;
	ls_diff_result dr;
	float *a, *b;
	const float *y, *h0, *h1;
	const double u = ldexp(1.0, -24), gamma = MK * u / (1 - MK * u);
	double worst = 0;

	tu_check_packed("examples/nki/matmul/kernel.klr.json",
			"examples/nki/matmul/kernel.klr");
	tu_check_packed("examples/nki/matmul/kernel_lnc2.klr.json",
			"examples/nki/matmul/kernel_lnc2.klr");
	ck_assert_int_eq(tu_count_op(called, LM_OP_NKIKERNEL), 1);
	ck_assert_int_eq(tu_count_op(inl, LM_OP_MATMULT), 8);
	add_input(&in, "lhsT", MK, MM, 3, &a);
	add_input(&in, "rhs", MK, MN, 4, &b);
	run1(called, &in, &rc);
	run1(inl, &in, &ri);
	tu_same_outputs(&rc.outputs, &ri.outputs);
	ck_assert_int_eq(ri.n_matmuls, 8);
	y = out_f32(&ri.outputs, "result", (int64_t)MM * MN);
	for (int i = 0; i < MM; i++)
		for (int j = 0; j < MN; j++) {
			double ref = 0, mag = 0, err;
			float chain = 0.0f, got = y[i * MN + j];
			for (int k = 0; k < MK; k++) {
				double p = (double)a[k * MM + i] *
					   (double)b[k * MN + j];
				ref += p;
				mag += fabs(p);
				chain = fmaf(a[k * MM + i], b[k * MN + j],
					     chain);
			}
			err = fabs((double)got - ref);
			ck_assert_msg(err <= gamma * mag, "result[%d][%d] = "
				      "%.9g, float64 reference %.17g: error "
				      "%.3g over the bound %.3g", i, j,
				      (double)got, ref, err, gamma * mag);
			if (mag > 0 && err / mag > worst)
				worst = err / mag;
			ck_assert_msg(tb_bits(got) == tb_bits(chain),
				      "result[%d][%d] = %.9g, the in-order "
				      "fmaf chain %.9g", i, j, (double)got,
				      (double)chain);
		}
	/* the bound is far from tight: the worst element used a small part */
	ck_assert_msg(worst < gamma / 8, "worst relative error %.3g", worst);

	/* two cores, each rows [128 c, 128 c + 128) of the result */
	two_cores("examples/nki/matmul", &in, &dr);
	h0 = out_f32(&dr.linked.outputs, "result_nc0", (int64_t)128 * MN);
	h1 = out_f32(&dr.linked.outputs, "result_nc1", (int64_t)128 * MN);
	ck_assert(memcmp(h0, y, (size_t)128 * MN * sizeof *y) == 0);
	ck_assert(memcmp(h1, y + 128 * MN, (size_t)128 * MN * sizeof *y) ==
		  0);
	ls_diff_result_free(&dr);
	ls_result_free(&rc);
	ls_result_free(&ri);
	ls_tensors_free(&in);
	free(a);
	free(b);
	lm_module_free(called);
	lm_module_free(inl);
	lm_module_free(m);
}
END_TEST

/*
** The bfloat16 variant (examples/nki/matmul/bf16): lhsT, rhs, their SBUF
** tiles, res_sb and result bfloat16, res_psum float32. Each product of
** two bfloat16 values is exact in float32, PSUM sums them in float32 and
** the ncCopy to res_sb rounds once to bfloat16 (u = 2^-8): bound
** (README) |got - ref| <= g M + u (|ref| + g M), g = gamma_K, M = sum |a
** b|. And bit for bit: the in-order float32 fmaf chain over k rounded
** once to bfloat16. The same inputs give the float32 kernel's sums, so
** its output rounded to bfloat16 is this one (the accumulation is the
** float32 one; only the copy rounds).
*/
START_TEST(test_matmul_bf16)
{
	lm_module *m = load_example("examples/nki/matmul/bf16/def.json");
	lm_module *m32 = load_example("examples/nki/matmul/def.json");
	lm_module *called = tu_lower_ok(m, 0, NULL);
	lm_module *inl = tu_lower_ok(m, 1, NULL);
	lm_module *inl32 = tu_lower_ok(m32, 1, NULL);
	ls_tensors in = { 0, NULL }, in32 = { 0, NULL };
	ls_result rc, ri, r32;
	ls_diff_result dr;
	float *a, *b;
	const uint16_t *y, *h0, *h1;
	const float *y32;
	const double u = ldexp(1.0, -24), gamma = MK * u / (1 - MK * u);
	const double ub = ldexp(1.0, -8);
	double worst = 0;
	int64_t shp[2];

	tu_check_packed("examples/nki/matmul/bf16/kernel.klr.json",
			"examples/nki/matmul/bf16/kernel.klr");
	tu_check_packed("examples/nki/matmul/bf16/kernel_lnc2.klr.json",
			"examples/nki/matmul/bf16/kernel_lnc2.klr");
	ck_assert_int_eq(tu_count_op(called, LM_OP_NKIKERNEL), 1);
	ck_assert_int_eq(tu_count_op(inl, LM_OP_MATMULT), 8);
	add_input_bf16(&in, "lhsT", MK, MM, 3, &a);
	add_input_bf16(&in, "rhs", MK, MN, 4, &b);
	run1(called, &in, &rc);
	run1(inl, &in, &ri);
	tu_same_outputs(&rc.outputs, &ri.outputs);
	ck_assert_int_eq(ri.n_matmuls, 8);
	y = out_bf16(&ri.outputs, "result", (int64_t)MM * MN);
	for (int i = 0; i < MM; i++)
		for (int j = 0; j < MN; j++) {
			double ref = 0, mag = 0, err, bound;
			float chain = 0.0f, got = lm_bf16_to_f32(y[i * MN + j]);
			for (int k = 0; k < MK; k++) {
				double p = (double)a[k * MM + i] *
					   (double)b[k * MN + j];
				ref += p;
				mag += fabs(p);
				chain = fmaf(a[k * MM + i], b[k * MN + j],
					     chain);
			}
			err = fabs((double)got - ref);
			bound = gamma * mag + ub * (fabs(ref) + gamma * mag);
			ck_assert_msg(err <= bound, "result[%d][%d] = %.9g, "
				      "float64 reference %.17g: error %.3g "
				      "over the bound %.3g", i, j, (double)got,
				      ref, err, bound);
			if (err / bound > worst)
				worst = err / bound;
			ck_assert_msg(y[i * MN + j] == lm_f32_to_bf16(chain),
				      "result[%d][%d] = %.9g, the in-order "
				      "fmaf chain rounded to bfloat16 %.9g", i,
				      j, (double)got,
				      (double)lm_round_to(LM_DT_BFLOAT16,
							  chain));
		}
	fprintf(stderr, "# matmul/bf16: largest error %.3f of the bound\n",
		worst);

	/* the float32 kernel on the same values, rounded once */
	shp[0] = MK;
	shp[1] = MM;
	ls_tensors_add(&in32, "lhsT", LM_DT_FLOAT32, shp, 2, a);
	shp[1] = MN;
	ls_tensors_add(&in32, "rhs", LM_DT_FLOAT32, shp, 2, b);
	run1(inl32, &in32, &r32);
	y32 = out_f32(&r32.outputs, "result", (int64_t)MM * MN);
	for (int64_t i = 0; i < (int64_t)MM * MN; i++)
		ck_assert_msg(y[i] == lm_f32_to_bf16(y32[i]), "result[%lld] "
			      "is not the float32 kernel's rounded",
			      (long long)i);

	/* two cores, each rows [128 c, 128 c + 128) of the result */
	two_cores("examples/nki/matmul/bf16", &in, &dr);
	h0 = out_bf16(&dr.linked.outputs, "result_nc0", (int64_t)128 * MN);
	h1 = out_bf16(&dr.linked.outputs, "result_nc1", (int64_t)128 * MN);
	ck_assert(memcmp(h0, y, (size_t)128 * MN * sizeof *y) == 0);
	ck_assert(memcmp(h1, y + 128 * MN, (size_t)128 * MN * sizeof *y) ==
		  0);
	ls_diff_result_free(&dr);
	ls_result_free(&rc);
	ls_result_free(&ri);
	ls_result_free(&r32);
	ls_tensors_free(&in);
	ls_tensors_free(&in32);
	free(a);
	free(b);
	lm_module_free(called);
	lm_module_free(inl);
	lm_module_free(inl32);
	lm_module_free(m);
	lm_module_free(m32);
}
END_TEST

/*
** The PE transpose: dst[d0 N + n][b] = ref[d0 B + b][n], exactly (a
** float32 identity matmul adds x * 1 to products 0 * y = +-0: no
** rounding for finite inputs).
*/
START_TEST(test_transpose)
{
	lm_module *m = load_example("examples/nki/transpose/def.json");
	lm_module *called = tu_lower_ok(m, 0, NULL), *inl = tu_lower_ok(m, 1, NULL);
	ls_tensors in = { 0, NULL };
	ls_result rc, ri;
	ls_diff_result dr;
	float *x;
	const float *y, *h[2];

	ck_assert_int_eq(tu_count_op(inl, LM_OP_MATMULT), 4);
	add_input(&in, "ref", TD0 * TB, TN, 5, &x);
	run1(called, &in, &rc);
	run1(inl, &in, &ri);
	tu_same_outputs(&rc.outputs, &ri.outputs);
	y = out_f32(&ri.outputs, "dst", (int64_t)TD0 * TN * TB);
	for (int d = 0; d < TD0; d++)
		for (int n = 0; n < TN; n++)
			for (int b = 0; b < TB; b++) {
				float got = y[(d * TN + n) * TB + b];
				float want = x[(d * TB + b) * TN + n];
				ck_assert_msg(tb_bits(got) == tb_bits(want),
					      "dst[%d][%d][%d] = %.9g, want "
					      "%.9g", d, n, b, (double)got,
					      (double)want);
			}
	two_cores("examples/nki/transpose", &in, &dr);
	h[0] = out_f32(&dr.linked.outputs, "dst_nc0", (int64_t)TN * TB);
	h[1] = out_f32(&dr.linked.outputs, "dst_nc1", (int64_t)TN * TB);
	for (int c = 0; c < 2; c++)
		ck_assert_msg(memcmp(h[c], y + c * TN * TB, (size_t)TN * TB *
				     sizeof *y) == 0, "core %d differs", c);
	ls_diff_result_free(&dr);
	ls_result_free(&rc);
	ls_result_free(&ri);
	ls_tensors_free(&in);
	free(x);
	lm_module_free(called);
	lm_module_free(inl);
	lm_module_free(m);
}
END_TEST

/*
** `lncsim lower` then `lncsim run --db` of the matmul into a scratch
** database: 8 matmul rows of a full 128 x 128 array, a PE utilization,
** and `lncsim report` on that database writes an index naming the run.
*/
START_TEST(test_matmul_logged_and_reported)
{
	char *dir = tu_tmpdir("nki-mm-db");
	char *src = tu_srcpath("examples/nki/matmul/def.json");
	char *db = lm_xasprintf("%s/x.db", dir);
	char *low = lm_xasprintf("%s/low/", dir);
	char *def = lm_xasprintf("%s/low/def.json", dir);
	char *rep = lm_xasprintf("%s/rep", dir);
	char *idx = lm_xasprintf("%s/rep/index.html", dir), *html, *want;
	char *gp = NULL;
	lm_error err;
	tu_run r;

	r = tu_lncsim(NULL, "lower", "-o", low, src, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--db", db, def, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM runs"), 1);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM matmuls"), 8);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM matmuls WHERE "
				    "array_util = 1.0 AND duration_ps > 0"),
			 8);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM core_stats "
				    "WHERE matmuls = 8 AND macs = 67108864 "
				    "AND pe_util > 0 AND pe_util <= 1"), 1);
	if (lr_find_gnuplot(NULL, &gp, &err) != 0) {
		/* the report renders with gnuplot: without it, skip */
		printf("# skip: %s\n", err.msg);
		goto done;
	}
	free(gp);
	r = tu_lncsim(NULL, "report", "--db", db, "-o", rep, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	html = tu_read(idx);
	ck_assert_msg(html != NULL, "no %s", idx);
	/* the runs table's row of run 1 names its module */
	want = lm_xasprintf("<td class=\"num\">1</td>");
	ck_assert_msg(strstr(html, want) != NULL, "index.html lacks run 1");
	free(want);
	want = lm_xasprintf("<td>%s</td>", def);
	ck_assert_msg(strstr(html, want) != NULL, "index.html does not name "
		      "%s", def);
	free(want);
	free(html);
done:
	tu_rmtree(dir);
	free(idx);
	free(rep);
	free(def);
	free(low);
	free(db);
	free(src);
	free(dir);
}
END_TEST

/*
** The ncMatMul keys the lowering carries on, one variant each: the
** text the lowered module must hold (spaces and tabs removed; NULL:
** none), the run's exit status and what its error must say. A perfMode
** other than None becomes perf_mode, refused by the simulator by name; a
** tilePosition / tileSize becomes tile_position / tile_size (where the
** matmul sits in the PE array: the run gives the same bits); the 0/1
** promises reach is_weight_onezero / is_fmap_onezero, which the data
** (not 0/1) breaks at run time; a tilePosition that is not a pair is
** refused by the lowering.
*/
START_TEST(test_matmul_keys_carried)
{
	static const struct {
		const char *from, *to, *low, *err;
		int lower_rc, run_rc;
	} v[] = {
		{ "\"perfMode\": \"None\"", "\"perfMode\": \"DoubleRow\"",
		  "\"perf_mode\":\"DoubleRow\"", "perf_mode", 0, 2 },
		{ "\"tilePosition\": []", "\"tilePosition\": [0, 64]",
		  "\"tile_position\":[0,64]", NULL, 0, 0 },
		{ "\"tileSize\": []", "\"tileSize\": [128, 128]",
		  "\"tile_size\":[128,128]", NULL, 0, 0 },
		{ "\"isStationaryOneZero\": false",
		  "\"isStationaryOneZero\": true",
		  "\"is_weight_onezero\":true",
		  "is_weight_onezero: ins[0] holds ", 0, 1 },
		{ "\"isMovingZero\": false", "\"isMovingZero\": true",
		  "\"is_fmap_onezero\":true",
		  "is_fmap_onezero: ins[1] holds ", 0, 1 },
		{ "\"tilePosition\": []", "\"tilePosition\": [0, 64, 7]", NULL,
		  "ncMatMul tilePosition has 3 values (a pair [row, column] "
		  "or none)", 2, 0 },
	};
	char *dir = tu_tmpdir("nki-mm-keys");
	char *kp = tu_srcpath("examples/nki/matmul/kernel.klr.json");
	char *dp = tu_srcpath("examples/nki/matmul/def.json");
	char *kj = tu_read(kp), *dj = tu_read(dp);
	ck_assert_ptr_nonnull(kj);
	ck_assert_ptr_nonnull(dj);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char *k = tu_replace_all(kj, v[i].from, v[i].to);
		char *lp = lm_path_join(dir, "low/def.json");
		tu_run r;
		ck_assert_msg(strcmp(k, kj) != 0, "%s not in the kernel",
			      v[i].from);
		free(tu_write(dir, "m/kernel.klr.json", k));
		free(tu_write(dir, "m/def.json", dj));
		r = tu_lncsim(dir, "klr", "pack", "-o", "m/kernel.klr",
			      "m/kernel.klr.json", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(dir, "lower", "-o", "low/", "m/def.json", NULL);
		ck_assert_msg(r.status == v[i].lower_rc, "variant %d: %s",
			      (int)i, r.err);
		if (v[i].lower_rc) {
			ck_assert_contains(r.err, v[i].err);
			tu_run_free(&r);
			free(lp);
			free(k);
			continue;
		}
		tu_run_free(&r);
		char *low = tu_read(lp), *t = tu_replace_all(low, " ", "");
		char *u = tu_replace_all(t, "\t", "");
		ck_assert_msg(strstr(u, v[i].low) != NULL, "variant %d: no %s "
			      "in the lowered module", (int)i, v[i].low);
		r = tu_lncsim(dir, "run", "--no-db", "low/def.json", NULL);
		ck_assert_msg(r.status == v[i].run_rc, "variant %d: %s",
			      (int)i, r.err);
		if (v[i].err)
			ck_assert_contains(r.err, v[i].err);
		tu_run_free(&r);
		free(u);
		free(t);
		free(low);
		free(lp);
		free(k);
	}
	tu_rmtree(dir);
	free(kj);
	free(dj);
	free(kp);
	free(dp);
	free(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nki_mm");
	TCase *tc = tcase_create("examples");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_matmul);
	tcase_add_test(tc, test_matmul_bf16);
	tcase_add_test(tc, test_transpose);
	tcase_add_test(tc, test_matmul_logged_and_reported);
	tcase_add_test(tc, test_matmul_keys_carried);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

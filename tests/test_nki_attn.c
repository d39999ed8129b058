/*
** test_nki_attn.c -- the fused self-attention example
** (examples/nki/attention): softmax(0.125 Q K^T) V over seq 256, head
** dim 64, float32 in and out, bfloat16 PE operands. The committed
** kernel is lowered called and inlined and run; both outputs must agree
** bit for bit and match two float64 references within the tolerances
** the example's README gives; the two-core form (each core half of the
** query rows) is lowered, run side by side and linked and must give the
** single-core rows bit for bit, and `lncsim diff` must pass it.
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"
#include "dtype.h"
#include "provision.h"
#include "linker.h"
#include "klr.h"
#include "safeio.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEQ 256
#define DH 64

/* Absolute tolerances (examples/nki/attention/README.md, "Accuracy"). */
#define TOL_EXACT 4e-3    /* against softmax(0.125 Q K^T) V in float64 */
#define TOL_BF16 5e-5     /* against the same with the kernel's bf16 roundings */

static float in_q[SEQ * DH], in_k[SEQ * DH], in_v[SEQ * DH];

/* Inputs uniform in [0, 1) as the sample's np.random.rand: an LCG. */
static void make_inputs(void)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	float *ts[3] = { in_q, in_k, in_v };
	for (int t = 0; t < 3; t++)
		for (int i = 0; i < SEQ * DH; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			ts[t][i] = (float)(s >> 40) / 16777216.0f;
		}
}

static double bf(double x)
{
	return lm_bf16_to_f32(lm_f32_to_bf16((float)x));
}

/*
** softmax(0.125 Q K^T) V in float64 into ref; with round_bf16 the
** operands of the two matmuls are rounded to bfloat16 where the kernel
** rounds them (0.125 q, k, the unnormalised exponentials, v).
*/
static void reference(double *ref, int round_bf16)
{
	static double s[SEQ];
	for (int i = 0; i < SEQ; i++) {
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < SEQ; j++) {
			double a = 0;
			for (int c = 0; c < DH; c++) {
				double q = 0.125 * in_q[i * DH + c];
				double k = in_k[j * DH + c];
				if (round_bf16) {
					q = bf(q);
					k = bf(k);
				}
				a += q * k;
			}
			s[j] = round_bf16 ? (float)a : a;
			mx = fmax(mx, s[j]);
		}
		for (int j = 0; j < SEQ; j++) {
			s[j] = exp(s[j] - mx);
			sum += s[j];
			if (round_bf16)
				s[j] = bf(s[j]);
		}
		for (int c = 0; c < DH; c++) {
			double o = 0;
			for (int j = 0; j < SEQ; j++)
				o += s[j] * (round_bf16 ? bf(in_v[j * DH + c])
							: in_v[j * DH + c]);
			ref[i * DH + c] = o / sum;
		}
	}
}

static void inputs(ls_tensors *in)
{
	int64_t shape[2] = { SEQ, DH };
	memset(in, 0, sizeof *in);
	ls_tensors_add(in, "q", LM_DT_FLOAT32, shape, 2, in_q);
	ls_tensors_add(in, "k", LM_DT_FLOAT32, shape, 2, in_k);
	ls_tensors_add(in, "v", LM_DT_FLOAT32, shape, 2, in_v);
}

/* Run mods (n of them side by side when n > 1) on the inputs. */
static void run(lm_module *const *mods, int n, ls_result *res)
{
	ls_tensors in;
	ls_options o;
	lm_error err;
	inputs(&in);
	memset(&o, 0, sizeof o);
	memset(res, 0, sizeof *res);
	if (n == 1)
		ck_assert_msg(ls_run(mods[0], &in, &o, res, &err) == 0,
			      "run: %s", err.msg);
	else
		ck_assert_msg(ls_run_multi(mods, n, &in, &o, res, &err) == 0,
			      "run: %s", err.msg);
	ls_tensors_free(&in);
}

/* The single-core example lowered (inlined or called) and run. */
static void run_single(int do_inline, ls_result *r)
{
	char *p = tu_srcpath("examples/nki/attention/def.json");
	lm_module *m = tu_load(p), *low = tu_lower_ok(m, do_inline, NULL);
	run(&low, 1, r);
	lm_module_free(low);
	lm_module_free(m);
	free(p);
}

/* The committed .klr files are their .klr.json packed. */
START_TEST(test_attn_klr_is_packed_json)
{
	const char *files[2][2] = {
		{ "examples/nki/attention/attn.klr.json",
		  "examples/nki/attention/attn.klr" },
		{ "examples/nki/attention/lnc2/attn2.klr.json",
		  "examples/nki/attention/lnc2/attn2.klr" }
	};
	for (int i = 0; i < 2; i++) {
		char *jp = tu_srcpath(files[i][0]), *kp = tu_srcpath(files[i][1]);
		char *json = tu_read(jp);
		lp_klr_file f;
		lm_buf b = LM_BUF_INIT;
		lm_error err;
		FILE *fp = fopen(kp, "rb");
		char *bytes = lm_xmalloc(1 << 20);
		size_t n;
		ck_assert_msg(fp != NULL, "%s", kp);
		n = fread(bytes, 1, 1 << 20, fp);
		fclose(fp);
		ck_assert_msg(lp_klr_from_json(&f, json, strlen(json), jp,
					       &err) == 0, "%s", err.msg);
		ck_assert_int_eq(lp_klr_encode_file(&f, &b, &err), 0);
		ck_assert_msg(b.size == n && !memcmp(b.ptr, bytes, n),
			      "%s is not %s packed (pack it again)", kp, jp);
		lm_buf_free(&b);
		lp_klr_file_free(&f);
		free(bytes);
		free(json);
		free(jp);
		free(kp);
	}
}
END_TEST

/*
** Called and inlined: bit-identical, and within the tolerances of both
** references; the bf16-rounded reference is much closer than the exact
** one, so the check can tell a wrong rounding from a wrong formula.
*/
START_TEST(test_attn_against_reference)
{
	ls_result rc, ri;
	double *exact = lm_xmalloc(SEQ * DH * sizeof *exact);
	double *rnd = lm_xmalloc(SEQ * DH * sizeof *rnd);
	double e_exact = 0, e_rnd = 0;
	make_inputs();
	reference(exact, 0);
	reference(rnd, 1);
	run_single(0, &rc);
	run_single(1, &ri);
	for (int i = 0; i < SEQ * DH; i++) {
		float c = tb_out(&rc, "out", i), o = tb_out(&ri, "out", i);
		ck_assert_msg(tb_bits(c) == tb_bits(o), "called and inlined "
			      "differ at out[%d][%d]: %.9g, %.9g", i / DH,
			      i % DH, (double)c, (double)o);
		e_exact = fmax(e_exact, fabs(o - exact[i]));
		e_rnd = fmax(e_rnd, fabs(o - rnd[i]));
		ck_assert_msg(fabs(o - exact[i]) <= TOL_EXACT &&
			      fabs(o - rnd[i]) <= TOL_BF16, "out[%d][%d] = "
			      "%.9g, float64 reference %.9g, with the bf16 "
			      "roundings %.9g", i / DH, i % DH, (double)o,
			      exact[i], rnd[i]);
	}
	fprintf(stderr, "attention %dx%d: max |error| %.3g against float64, "
		"%.3g against float64 with the kernel's bf16 roundings\n", SEQ,
		DH, e_exact, e_rnd);
	ck_assert_int_eq(rc.n_matmuls, ri.n_matmuls);
	ls_result_free(&rc);
	ls_result_free(&ri);
	free(exact);
	free(rnd);
}
END_TEST

/*
** The two-core form, lowered called and inlined, run side by side and
** linked (lk_link) and run: out0 / out1 are rows [0, 128) / [128, 256)
** of the single-core out, bit for bit, in all four.
*/
START_TEST(test_attn_two_cores_bit_identical)
{
	ls_result one;
	make_inputs();
	run_single(1, &one);
	for (int inl = 0; inl < 2; inl++) {
		lm_module *m[2], *low[2], *lk = NULL;
		ls_result two, linked;
		lk_options lo;
		lk_report rep;
		lm_error err;
		memset(&lo, 0, sizeof lo);
		for (int c = 0; c < 2; c++) {
			char *rel = lm_xasprintf("examples/nki/attention/lnc2/"
						 "nc%d/sg0/def.json", c);
			char *p = tu_srcpath(rel);
			m[c] = tu_load(p);
			low[c] = tu_lower_ok(m[c], inl, NULL);
			free(p);
			free(rel);
		}
		run(low, 2, &two);
		ck_assert_msg(lk_link(low, 2, &lo, &lk, &rep, &err) == 0, "%s",
			      err.msg);
		lk_report_free(&rep);
		run(&lk, 1, &linked);
		for (int i = 0; i < SEQ * DH; i++) {
			const char *name = i < SEQ * DH / 2 ? "out0" : "out1";
			float a = tb_out(&two, name, i % (SEQ * DH / 2));
			float l = tb_out(&linked, name, i % (SEQ * DH / 2));
			float b = tb_out(&one, "out", i);
			ck_assert_msg(tb_bits(a) == tb_bits(b) &&
				      tb_bits(l) == tb_bits(b), "two cores "
				      "(%s; side by side, linked) differ from "
				      "one at out[%d][%d]: %.9g, %.9g, %.9g",
				      inl ? "inlined" : "called", i / DH,
				      i % DH, (double)a, (double)l, (double)b);
		}
		ls_result_free(&two);
		ls_result_free(&linked);
		lm_module_free(lk);
		for (int c = 0; c < 2; c++) {
			lm_module_free(low[c]);
			lm_module_free(m[c]);
		}
	}
	ls_result_free(&one);
}
END_TEST

/* `lncsim lower [--inline]` then `lncsim diff` of the two-core form. */
START_TEST(test_attn_two_cores_diff)
{
	char *dir = tu_tmpdir("nki-attn");
	char *src = tu_srcpath("examples/nki/attention/lnc2");
	for (int inl = 0; inl < 2; inl++) {
		const char *out = inl ? "low1" : "low0";
		tu_run r = inl ? tu_lncsim(dir, "lower", "--inline", "-o",
					   out, src, NULL)
			       : tu_lncsim(dir, "lower", "-o", out, src, NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(dir, "diff", "--no-db", out, NULL);
		ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
		ck_assert_msg(strstr(r.out, "PASS") != NULL &&
			      strstr(r.out, "2 outputs bit-identical") != NULL,
			      "%s", r.out);
		tu_run_free(&r);
	}
	tu_rmtree(dir);
	free(dir);
	free(src);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nki_attn");
	TCase *tc = tcase_create("attention");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_attn_klr_is_packed_json);
	tcase_add_test(tc, test_attn_against_reference);
	tcase_add_test(tc, test_attn_two_cores_bit_identical);
	tcase_add_test(tc, test_attn_two_cores_diff);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

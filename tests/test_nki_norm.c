/*
** test_nki_norm.c -- the NKI example kernels softmax, layernorm and
** rmsnorm (examples/nki/<kernel>/): each committed kernel.klr is what
** `lncsim klr pack` makes of its kernel.klr.json; each kernel is lowered
** called and inlined, run, and every output element is compared with a
** float64 reference computed here within the tolerance its README states;
** the called, inlined and two-core linked forms (lnc2/, checked by
** ls_diff) give bit-identical outputs; and a run logged into a scratch
** database makes a report.
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"
#include "dtype.h"
#include "provision.h"
#include "klr.h"
#include "linker.h"
#include "diff.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ROWS 256

/* One example kernel: its directory, size and host inputs. */
typedef struct nk {
	const char *dir;          /* examples/nki/<dir> */
	int cols;                 /* the free size of x and y */
	int n_vecs;               /* vectors [1, cols] after x */
	const char *vecs[2];      /* their host names */
} nk;

static const nk k_softmax = { "softmax", 512, 0, { NULL, NULL } };
static const nk k_rmsnorm = { "rmsnorm", 512, 1, { "g", NULL } };
static const nk k_layernorm = { "layernorm", 1024, 2, { "gamma", "beta" } };

/* The inputs: x in [-2, 2), the vectors in [0.5, 1.5) (positive weights
** as the samples' np.random.rand draws, shifted away from zero). */
typedef struct nk_in {
	float *x;
	float *v[2];
	ls_tensors t;
} nk_in;

static void inputs_make(const nk *k, nk_in *in)
{
	int64_t xs[2] = { ROWS, k->cols }, vs[2] = { 1, k->cols };
	memset(in, 0, sizeof *in);
	in->x = lm_xmalloc((size_t)ROWS * k->cols * sizeof *in->x);
	tb_fill(in->x, (int64_t)ROWS * k->cols, 7);
	ls_tensors_add(&in->t, "x", LM_DT_FLOAT32, xs, 2, in->x);
	for (int v = 0; v < k->n_vecs; v++) {
		in->v[v] = lm_xmalloc((size_t)k->cols * sizeof *in->v[v]);
		tb_fill(in->v[v], k->cols, 11 + (uint32_t)v);
		for (int j = 0; j < k->cols; j++)
			in->v[v][j] = in->v[v][j] / 4.0f + 1.0f;
		ls_tensors_add(&in->t, k->vecs[v], LM_DT_FLOAT32, vs, 2,
			       in->v[v]);
	}
}

static void inputs_free(nk_in *in)
{
	ls_tensors_free(&in->t);
	free(in->x);
	free(in->v[0]);
	free(in->v[1]);
}

/* ---- float64 references ------------------------------------------------ */

/* softmax(x) = exp(x - max x) / sum exp(x - max x), per row. */
static void ref_softmax(const nk *k, const nk_in *in, int p, double *y)
{
	const float *x = in->x + (size_t)p * k->cols;
	double m = x[0], s = 0;
	for (int j = 1; j < k->cols; j++)
		m = x[j] > m ? x[j] : m;
	for (int j = 0; j < k->cols; j++)
		s += (y[j] = exp((double)x[j] - m));
	for (int j = 0; j < k->cols; j++)
		y[j] /= s;
}

/* x / sqrt(mean(x^2)) * g, per row. */
static void ref_rmsnorm(const nk *k, const nk_in *in, int p, double *y)
{
	const float *x = in->x + (size_t)p * k->cols;
	double s = 0, r;
	for (int j = 0; j < k->cols; j++)
		s += (double)x[j] * x[j];
	r = 1.0 / sqrt(s / k->cols);
	for (int j = 0; j < k->cols; j++)
		y[j] = x[j] * r * in->v[0][j];
}

/* (x - mean) / sqrt(var + eps) * gamma + beta, per row; var the
** population variance, eps the kernel's 1e-5 as float32. */
static void ref_layernorm(const nk *k, const nk_in *in, int p, double *y)
{
	const float *x = in->x + (size_t)p * k->cols;
	double mean = 0, var = 0, r;
	for (int j = 0; j < k->cols; j++)
		mean += x[j];
	mean /= k->cols;
	for (int j = 0; j < k->cols; j++)
		var += (x[j] - mean) * (x[j] - mean);
	var /= k->cols;
	r = 1.0 / sqrt(var + (double)1e-5f);
	for (int j = 0; j < k->cols; j++)
		y[j] = (x[j] - mean) * r * in->v[0][j] + in->v[1][j];
}

/*
** The tolerance of one element (each kernel's README, "Tolerance"):
** |got - ref| <= (cols + 16) * 2^-24 * scale, the a-priori bound of the
** float32 row sum (cols - 1 roundings of a sum of same-signed terms)
** plus a few roundings of the element-wise steps; scale is |ref| for
** softmax and rmsnorm, |(x - mean) * r * gamma| + |beta| + 1 for
** layernorm (whose mean and variance are sums of terms of both signs).
*/
static double tolerance(const nk *k, const nk_in *in, int p, int j,
			double ref)
{
	double eps = ldexp(1.0, -24) * (k->cols + 16);
	if (k == &k_layernorm) {
		double b = in->v[1][j];
		return eps * (fabs(ref - b) + fabs(b) + 1.0);
	}
	(void)in;
	(void)p;
	return eps * fabs(ref);
}

/* The float32 output name of r, with at least n elements. */
static const float *out_f32(const ls_result *r, const char *name, int64_t n)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, name);
	ck_assert_msg(t != NULL, "no output %s", name);
	ck_assert_msg(t->dtype == LM_DT_FLOAT32 && t->count >= n, "output %s: "
		      "%lld elements of %s, want %lld float32", name,
		      (long long)t->count, lm_dtype_name(t->dtype),
		      (long long)n);
	return t->data;
}

/* Every element of y against the reference; returns the largest error
** in units of the element's tolerance (< 1 passes). */
static double check_ref(const nk *k, const nk_in *in, const ls_result *r)
{
	double *y = lm_xmalloc((size_t)k->cols * sizeof *y), worst = 0;
	const float *out = out_f32(r, "y", (int64_t)ROWS * k->cols);
	for (int p = 0; p < ROWS; p++) {
		if (k == &k_softmax)
			ref_softmax(k, in, p, y);
		else if (k == &k_rmsnorm)
			ref_rmsnorm(k, in, p, y);
		else
			ref_layernorm(k, in, p, y);
		for (int j = 0; j < k->cols; j++) {
			double got = out[(size_t)p * k->cols + j];
			double tol = tolerance(k, in, p, j, y[j]);
			double e = fabs(got - y[j]) / tol;
			if (!(e < 1.0))
				ck_abort_msg("%s y[%d][%d] = %.9g, float64 "
					     "reference %.17g, off by %.3g "
					     "(tolerance %.3g)", k->dir, p, j,
					     got, y[j], fabs(got - y[j]), tol);
			worst = e > worst ? e : worst;
		}
	}
	free(y);
	return worst;
}

/* ---- lowering and running ---------------------------------------------- */

static void run_ok(const lm_module *m, const nk_in *in, ls_result *r)
{
	ls_options o;
	lm_error err;
	memset(&o, 0, sizeof o);
	memset(r, 0, sizeof *r);
	ck_assert_msg(ls_run(m, &in->t, &o, r, &err) == 0, "run: %s", err.msg);
}

/* Rows [r0, r1) of tensor na in a and nb in b bit for bit (the element
** loops test without ck_assert, which writes down every passing check). */
static void same_rows(const nk *k, const ls_result *a, const char *na,
		      const ls_result *b, const char *nb, int r0, int r1,
		      const char *what)
{
	const float *va = out_f32(a, na, (int64_t)r1 * k->cols);
	const float *vb = out_f32(b, nb, (int64_t)r1 * k->cols);
	for (int64_t i = (int64_t)r0 * k->cols; i < (int64_t)r1 * k->cols;
	     i++)
		if (tb_bits(va[i]) != tb_bits(vb[i]))
			ck_abort_msg("%s: %s: %s and %s differ at [%lld][%lld]",
				     k->dir, what, na, nb,
				     (long long)(i / k->cols),
				     (long long)(i % k->cols));
}

/* The committed kernel.klr is `klr pack` of kernel.klr.json. */
static void check_packed(const char *dir)
{
	char *jp = lm_xasprintf("examples/nki/%s/kernel.klr.json", dir);
	char *kp = lm_xasprintf("examples/nki/%s/kernel.klr", dir);
	char *jf = tu_srcpath(jp), *kf = tu_srcpath(kp);
	char *json = tu_read(jf);
	FILE *f;
	lp_klr_file kl;
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	char *disk;
	long n;
	ck_assert_msg(json != NULL, "%s missing", jf);
	ck_assert_msg(lp_klr_from_json(&kl, json, strlen(json), jf, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(lp_klr_encode_file(&kl, &b, &err), 0);
	f = fopen(kf, "rb");
	ck_assert_msg(f != NULL, "%s missing", kf);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	disk = lm_xmalloc((size_t)n + 1);
	ck_assert_int_eq(fread(disk, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	ck_assert_msg((size_t)n == b.size && !memcmp(disk, b.ptr, b.size),
		      "%s is not `lncsim klr pack` of %s (%ld bytes, packed "
		      "%zu)", kf, jf, n, b.size);
	free(disk);
	lm_buf_free(&b);
	lp_klr_file_free(&kl);
	free(json);
	free(jp);
	free(kp);
	free(jf);
	free(kf);
}

/*
** One kernel: the packed files; called and inlined, against the float64
** reference, bit-identical to each other; the two-core version lowered
** called and inlined, linked, checked by ls_diff (reference side by side
** against the linked run) and bit-identical to the one-core output.
*/
static void kernel_case(const nk *k)
{
	char *rel = lm_xasprintf("examples/nki/%s/def.json", k->dir);
	char *lnc2 = lm_xasprintf("examples/nki/%s/lnc2", k->dir);
	char *path = tu_srcpath(rel), *sub;
	lm_module *m = tu_load(path), *called = tu_lower_ok(m, 0, NULL);
	lm_module *inl = tu_lower_ok(m, 1, NULL);
	ls_result rc, ri;
	nk_in in;
	double worst;

	check_packed(k->dir);
	sub = lm_xasprintf("%s/lnc2", k->dir);
	check_packed(sub);
	free(sub);

	inputs_make(k, &in);
	run_ok(called, &in, &rc);
	run_ok(inl, &in, &ri);
	same_rows(k, &rc, "y", &ri, "y", 0, ROWS, "called vs inlined");
	worst = check_ref(k, &in, &ri);
	fprintf(stderr, "# %s: largest error %.3f of the tolerance\n", k->dir,
		worst);

	for (int mode = 0; mode < 2; mode++) {
		lm_module *pc[2], *low[2], *lk = NULL;
		lk_options lo;
		lk_report rep;
		ls_diff_result dr;
		lm_error err;
		int n = 0;
		tu_load_example(lnc2, pc, &n);
		ck_assert_int_eq(n, 2);
		for (int c = 0; c < 2; c++)
			low[c] = tu_lower_ok(pc[c], mode, NULL);
		memset(&lo, 0, sizeof lo);
		ck_assert_msg(lk_link(low, 2, &lo, &lk, &rep, &err) == 0, "%s",
			      err.msg);
		lk_report_free(&rep);
		ck_assert_msg(ls_diff(low, 2, lk, &in.t, NULL, &dr, &err) == 0,
			      "%s", err.msg);
		ck_assert_msg(dr.status == LS_DIFF_PASS, "%s (%s): %s", k->dir,
			      mode ? "inlined" : "called", dr.message);
		same_rows(k, &dr.linked, "y0", &rc, "y", 0, ROWS / 2,
			  "two-core linked vs one core");
		same_rows(k, &dr.linked, "y1", &rc, "y", ROWS / 2, ROWS,
			  "two-core linked vs one core");
		ls_diff_result_free(&dr);
		lm_module_free(lk);
		for (int c = 0; c < 2; c++) {
			lm_module_free(low[c]);
			lm_module_free(pc[c]);
		}
	}

	ls_result_free(&rc);
	ls_result_free(&ri);
	inputs_free(&in);
	lm_module_free(called);
	lm_module_free(inl);
	lm_module_free(m);
	free(path);
	free(rel);
	free(lnc2);
}

START_TEST(test_softmax)
{
	kernel_case(&k_softmax);
}
END_TEST

START_TEST(test_rmsnorm)
{
	kernel_case(&k_rmsnorm);
}
END_TEST

START_TEST(test_layernorm)
{
	kernel_case(&k_layernorm);
}
END_TEST

/*
** The CLI path: each kernel lowered, run into a scratch database, the
** two-core version lowered and diffed into it too; `lncsim report` on
** that database writes index.html.
*/
START_TEST(test_cli_db_report)
{
	static const nk *const ks[3] = { &k_softmax, &k_rmsnorm, &k_layernorm };
	char *dir = tu_tmpdir("nki-norm-cli");
	char *db = lm_xasprintf("%s/x.db", dir);
	char *rep = lm_xasprintf("%s/rep", dir), *idx;
	struct stat sb;
	tu_run r;

	for (int i = 0; i < 3; i++) {
		char *rel = lm_xasprintf("examples/nki/%s/def.json",
					 ks[i]->dir);
		char *rel2 = lm_xasprintf("examples/nki/%s/lnc2", ks[i]->dir);
		char *src = tu_srcpath(rel), *src2 = tu_srcpath(rel2);
		char *low = lm_xasprintf("%s/%s.json", dir, ks[i]->dir);
		char *low2 = lm_xasprintf("%s/%s_lnc2", dir, ks[i]->dir);
		r = tu_lncsim(NULL, "lower", "--inline", "-o", low, src, NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(NULL, "run", "--db", db, low, NULL);
		ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
		tu_run_free(&r);
		r = tu_lncsim(NULL, "lower", "-o", low2, src2, NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(NULL, "diff", "--db", db, low2, NULL);
		ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
		ck_assert_msg(strstr(r.out, "PASS") != NULL, "%s", r.out);
		tu_run_free(&r);
		free(rel);
		free(rel2);
		free(src);
		free(src2);
		free(low);
		free(low2);
	}
	r = tu_lncsim(NULL, "report", "--db", db, "-o", rep, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	idx = lm_xasprintf("%s/index.html", rep);
	ck_assert_msg(stat(idx, &sb) == 0 && S_ISREG(sb.st_mode) &&
		      sb.st_size > 0, "%s not written", idx);
	free(idx);
	free(rep);
	free(db);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nki_norm");
	TCase *tc = tcase_create("kernels");
	TCase *cli = tcase_create("cli");
	tcase_set_timeout(tc, 240);
	tcase_set_timeout(cli, 300);
	tcase_add_test(tc, test_softmax);
	tcase_add_test(tc, test_rmsnorm);
	tcase_add_test(tc, test_layernorm);
	tcase_add_test(cli, test_cli_db_report);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, cli);
	return tu_main(s);
}

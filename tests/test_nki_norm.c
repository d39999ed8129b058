/*
** test_nki_norm.c -- the NKI example kernels softmax, layernorm and
** rmsnorm (examples/nki/<kernel>/) and the bfloat16 variants of rmsnorm
** and layernorm (<kernel>/bf16/): each committed kernel.klr is what
** `lncsim klr pack` makes of its kernel.klr.json; each kernel is lowered
** called and inlined, run, and every output element is compared with a
** float64 reference computed here within the tolerance its README states
** (bfloat16 rmsnorm also bit for bit with its roundings replayed here);
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

enum nk_kind { NK_SOFTMAX, NK_RMSNORM, NK_LAYERNORM };

/* One example kernel: its directory, size, host inputs and dtype. */
typedef struct nk {
	const char *dir;          /* examples/nki/<dir> */
	enum nk_kind kind;
	int cols;                 /* the free size of x and y */
	int n_vecs;               /* vectors [1, cols] after x */
	const char *vecs[2];      /* their host names */
	lm_dtype dt;              /* of every host tensor */
} nk;

static const nk k_softmax = { "softmax", NK_SOFTMAX, 512, 0, { NULL, NULL },
			      LM_DT_FLOAT32 };
static const nk k_rmsnorm = { "rmsnorm", NK_RMSNORM, 512, 1, { "g", NULL },
			      LM_DT_FLOAT32 };
static const nk k_layernorm = { "layernorm", NK_LAYERNORM, 1024, 2,
				{ "gamma", "beta" }, LM_DT_FLOAT32 };
static const nk k_rmsnorm_bf16 = { "rmsnorm/bf16", NK_RMSNORM, 512, 1,
				   { "g", NULL }, LM_DT_BFLOAT16 };
static const nk k_layernorm_bf16 = { "layernorm/bf16", NK_LAYERNORM, 1024, 2,
				     { "gamma", "beta" }, LM_DT_BFLOAT16 };

/* The inputs: x in [-2, 2), the vectors in [0.5, 1.5) (positive weights
** as the samples' np.random.rand draws, shifted away from zero); for a
** bfloat16 kernel each rounded to bfloat16 (x and v hold the rounded
** values, exactly, for the references). */
typedef struct nk_in {
	float *x;
	float *v[2];
	ls_tensors t;
} nk_in;

/* Host tensor name [rows, cols] of v in dtype dt (v rounded in place to
** bfloat16 when dt is). */
static void input_add(ls_tensors *t, const char *name, lm_dtype dt, int rows,
		      int cols, float *v)
{
	int64_t shape[2] = { rows, cols }, n = (int64_t)rows * cols;
	uint16_t *h;
	if (dt == LM_DT_FLOAT32) {
		ls_tensors_add(t, name, dt, shape, 2, v);
		return;
	}
	ck_assert_int_eq(dt, LM_DT_BFLOAT16);
	h = lm_xmalloc((size_t)n * sizeof *h);
	for (int64_t i = 0; i < n; i++) {
		h[i] = lm_f32_to_bf16(v[i]);
		v[i] = lm_bf16_to_f32(h[i]);
	}
	ls_tensors_add(t, name, dt, shape, 2, h);
	free(h);
}

static void inputs_make(const nk *k, nk_in *in)
{
	memset(in, 0, sizeof *in);
	in->x = lm_xmalloc((size_t)ROWS * k->cols * sizeof *in->x);
	tb_fill(in->x, (int64_t)ROWS * k->cols, 7);
	input_add(&in->t, "x", k->dt, ROWS, k->cols, in->x);
	for (int v = 0; v < k->n_vecs; v++) {
		in->v[v] = lm_xmalloc((size_t)k->cols * sizeof *in->v[v]);
		tb_fill(in->v[v], k->cols, 11 + (uint32_t)v);
		for (int j = 0; j < k->cols; j++)
			in->v[v][j] = in->v[v][j] / 4.0f + 1.0f;
		input_add(&in->t, k->vecs[v], k->dt, 1, k->cols, in->v[v]);
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
** The tolerance of one element (each kernel's README, "Tolerance").
** float32: |got - ref| <= (cols + 16) * 2^-24 * scale, the a-priori
** bound of the float32 row sum (cols - 1 roundings of a sum of
** same-signed terms) plus a few roundings of the element-wise steps;
** scale is |ref| for softmax and rmsnorm, |(x - mean) * r * gamma| +
** |beta| + 1 for layernorm (whose mean and variance are sums of terms of
** both signs). bfloat16 (u = 2^-8, v = 2^-24, N = cols; the READMEs in
** <kernel>/bf16/ derive them): rmsnorm (4 u + (N + 3) v / 2) |ref|, the
** first-order sum of its roundings; layernorm u (2 |z| + |ref|) plus
** the float32 bound above, z = ref - beta; both times (1 + 8 u) for the
** products of the roundings.
*/
static double tolerance(const nk *k, const nk_in *in, int p, int j,
			double ref)
{
	double v = ldexp(1.0, -24), u = ldexp(1.0, -8);
	double eps = v * (k->cols + 16);
	(void)p;
	if (k->kind == NK_LAYERNORM) {
		double b = in->v[1][j], z = fabs(ref - b);
		double f32 = eps * (z + fabs(b) + 1.0);
		if (k->dt == LM_DT_FLOAT32)
			return f32;
		return (1 + 8 * u) * (u * (2 * z + fabs(ref)) + f32);
	}
	if (k->dt == LM_DT_FLOAT32)
		return eps * fabs(ref);
	return (1 + 8 * u) * (4 * u + (k->cols + 3) * v / 2) * fabs(ref);
}

/* The output name of r in the kernel's dtype, with at least n elements,
** widened to float32 (exact). The caller frees. */
static float *out_vals(const nk *k, const ls_result *r, const char *name,
		       int64_t n)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, name);
	float *v;
	ck_assert_msg(t != NULL, "no output %s", name);
	ck_assert_msg(t->dtype == k->dt && t->count >= n, "output %s: "
		      "%lld elements of %s, want %lld %s", name,
		      (long long)t->count, lm_dtype_name(t->dtype),
		      (long long)n, lm_dtype_name(k->dt));
	v = lm_xmalloc((size_t)n * sizeof *v);
	for (int64_t i = 0; i < n; i++)
		v[i] = lm_load_elem(t->dtype, (const char *)t->data +
				    i * lm_dtype_size(t->dtype));
	return v;
}

/*
** bfloat16 rmsnorm replayed with the simulator's roundings (docs/
** semantics.md, docs/activation.md): every statement computes in float32
** from its bfloat16 operands and rounds once to its bfloat16 tile; the
** row sum is the float32 fold from the first element. Row p into y.
*/
static void replay_rmsnorm_bf16(const nk *k, const nk_in *in, int p, float *y)
{
	const lm_dtype b = LM_DT_BFLOAT16;
	const float *x = in->x + (size_t)p * k->cols;
	float s = 0, m, r;
	for (int j = 0; j < k->cols; j++) {
		float q = lm_round_to(b, x[j] * x[j]);   /* in_square */
		s = j ? s + q : q;                       /* square_sum */
	}
	m = lm_round_to(b, lm_round_to(b, s) / 512.0f); /* mean */
	r = lm_round_to(b, 1.0f / sqrtf(m));           /* rms_reciprocal */
	for (int j = 0; j < k->cols; j++)
		y[j] = lm_round_to(b, lm_round_to(b, x[j] * r) * in->v[0][j]);
}

/*
** bfloat16 layernorm replayed the same way: BNStats over each 512-column
** chunk (two Welford lanes, even and odd elements, sharing the weight
** 1/c), BNStatsAggregate merging the four (n, mean, m2) triples in order
** (docs/semantics.md gives both line by line), var + eps and 1 / sqrtf in
** float32 (mean_var, var_eps and scale_var are float32 tiles), then the
** three bfloat16 tiles: (x - mean) * r, * gamma, + beta. Row p into y.
*/
static void replay_layernorm_bf16(const nk *k, const nk_in *in, int p,
				  float *y)
{
	const lm_dtype b = LM_DT_BFLOAT16;
	const float *x = in->x + (size_t)p * k->cols;
	float st[4][3], n = 0, mean = 0, var = 0, r;
	for (int ch = 0; ch < k->cols / 512; ch++) {
		const float *xc = x + ch * 512;
		float c = 0, mn[2] = { 0, 0 }, m2[2] = { 0, 0 };
		for (int i = 0; i < 512; i++) {
			int l = i & 1;
			float rc, old = mn[l], a, bb;
			if (!l)
				c = c + 1;
			rc = 1 / c;
			a = 1 - rc;
			a = a * old;
			bb = rc * xc[i];
			mn[l] = a + bb;
			m2[l] = m2[l] + (xc[i] - mn[l]) * (xc[i] - old);
		}
		for (int l = 0; l < 2; l++) {
			st[2 * ch + l][0] = 256;
			st[2 * ch + l][1] = mn[l];
			st[2 * ch + l][2] = m2[l];
		}
	}
	for (int t = 0; t < 2 * (k->cols / 512); t++) {
		float nt = st[t][0], mt = st[t][1], tot = nt + n, rt = 1 / tot;
		float delta = mean - mt, v, cross;
		mean = (mean * n + nt * mt) * rt;
		v = (var * n + st[t][2]) * rt;
		cross = nt * n * delta * delta * rt * rt;
		var = v + cross;
		n = n + nt;
	}
	r = 1.0f / sqrtf((var + 1e-5f) * 1.0f + 0.0f);
	for (int j = 0; j < k->cols; j++) {
		float t = lm_round_to(b, (x[j] - mean) * r);
		float g = lm_round_to(b, t * in->v[0][j]);
		y[j] = lm_round_to(b, g + in->v[1][j]);
	}
}

/* Every element of y against the reference; returns the largest error
** in units of the element's tolerance (< 1 passes). */
static double check_ref(const nk *k, const nk_in *in, const ls_result *r)
{
	double *y = lm_xmalloc((size_t)k->cols * sizeof *y), worst = 0;
	float *out = out_vals(k, r, "y", (int64_t)ROWS * k->cols);
	float *rp = lm_xmalloc((size_t)k->cols * sizeof *rp);
	for (int p = 0; p < ROWS; p++) {
		if (k->kind == NK_SOFTMAX)
			ref_softmax(k, in, p, y);
		else if (k->kind == NK_RMSNORM)
			ref_rmsnorm(k, in, p, y);
		else
			ref_layernorm(k, in, p, y);
		if (k->dt == LM_DT_BFLOAT16) {
			if (k->kind == NK_RMSNORM)
				replay_rmsnorm_bf16(k, in, p, rp);
			else
				replay_layernorm_bf16(k, in, p, rp);
			for (int j = 0; j < k->cols; j++)
				if (tb_bits(rp[j]) !=
				    tb_bits(out[(size_t)p * k->cols + j]))
					ck_abort_msg("%s y[%d][%d] = %.9g, the "
						     "replayed roundings give "
						     "%.9g", k->dir, p, j,
						     (double)out[(size_t)p *
								 k->cols + j],
						     (double)rp[j]);
		}
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
	free(rp);
	free(out);
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
	const ls_tensor *t0 = ls_tensors_find(&a->outputs, na);
	const ls_tensor *t1 = ls_tensors_find(&b->outputs, nb);
	const int64_t n = (int64_t)r1 * k->cols;
	const size_t es = (size_t)lm_dtype_size(k->dt);
	ck_assert_msg(t0 != NULL && t1 != NULL, "no output %s or %s", na, nb);
	ck_assert_msg(t0->dtype == k->dt && t1->dtype == k->dt &&
		      t0->count >= n && t1->count >= n, "%s: %s: %s and %s "
		      "are not %lld %s elements", k->dir, what, na, nb,
		      (long long)n, lm_dtype_name(k->dt));
	for (int64_t i = (int64_t)r0 * k->cols; i < n; i++)
		if (memcmp((const char *)t0->data + (size_t)i * es,
			   (const char *)t1->data + (size_t)i * es, es))
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
	tu_check_packed(jp, kp);
	free(jp);
	free(kp);
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

START_TEST(test_rmsnorm_bf16)
{
	kernel_case(&k_rmsnorm_bf16);
}
END_TEST

START_TEST(test_layernorm_bf16)
{
	kernel_case(&k_layernorm_bf16);
}
END_TEST

/*
** The CLI path: each kernel lowered, run into a scratch database, the
** two-core version lowered and diffed into it too; `lncsim report` on
** that database writes index.html.
*/
START_TEST(test_cli_db_report)
{
	static const nk *const ks[] = { &k_softmax, &k_rmsnorm, &k_layernorm,
					&k_rmsnorm_bf16, &k_layernorm_bf16 };
	char *dir = tu_tmpdir("nki-norm-cli");
	char *db = lm_xasprintf("%s/x.db", dir);
	char *rep = lm_xasprintf("%s/rep", dir), *idx;
	struct stat sb;
	tu_run r;

	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
		char *rel = lm_xasprintf("examples/nki/%s/def.json",
					 ks[i]->dir);
		char *rel2 = lm_xasprintf("examples/nki/%s/lnc2", ks[i]->dir);
		char *src = tu_srcpath(rel), *src2 = tu_srcpath(rel2);
		char *low = lm_xasprintf("%s/%zu.json", dir, i);
		char *low2 = lm_xasprintf("%s/%zu_lnc2", dir, i);
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
	tcase_add_test(tc, test_rmsnorm_bf16);
	tcase_add_test(tc, test_layernorm_bf16);
	tcase_add_test(cli, test_cli_db_report);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, cli);
	return tu_main(s);
}

/*
** test_sim.c -- instruction semantics of the simulator: every
** opcode against hand-computed or independently computed values, with the
** edge cases (bf16 rounding, three K tiles, NaN/Inf through a transpose,
** the identity check, divide by zero, Activation at +-Inf/NaN), and the
** matmul kernel variants against each other.
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "dtype.h"
#include "sim.h"
#include "sim_int.h"
#include "simcheck.h"
#include "verify.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run a module built by t with input x; asserts success. */
static void run_ok(tb *t, const float *x, int P, int F, ls_result *r)
{
	lm_module *m = tb_module(t, 0);
	lm_error err;
	int rc = tb_run1(m, x, P, F, NULL, r, &err);
	ck_assert_msg(rc == 0, "run: %s", err.msg);
	lm_module_free(m);
}

/* Run expecting a runtime error; returns the message (static). */
static const char *run_err(tb *t, const float *x, int P, int F)
{
	static lm_error err;
	lm_module *m = tb_module(t, 0);
	ls_result r;
	int rc = tb_run1(m, x, P, F, NULL, &r, &err);
	ck_assert_msg(rc != 0, "run unexpectedly succeeded");
	lm_module_free(m);
	return err.msg;
}

/* ---- Matmult ------------------------------------------------------------ */

/*
** y = sum over three K tiles (K = 128 each) of st^T mv, accumulated in one
** PSUM bank, evacuated to SB (float32 or bfloat16), compared with a naive
** loop doing the same fmaf chain.
*/
static void matmul3(const char *in_dt, const char *out_dt)
{
	enum { K = 128, M = 64, N = 96, T = 3 };
	tb t;
	ls_result r;
	float *st = malloc(sizeof(float) * T * K * M);
	float *mv = malloc(sizeof(float) * T * K * N);
	float *x = calloc((size_t)K * (T * M + T * N), sizeof(float));
	int F = T * M + T * N;

	tb_fill(st, T * K * M, 1);
	tb_fill(mv, T * K * N, 2);
	/* x[k][tile*M + m] = st, then x[k][T*M + tile*N + n] = mv */
	for (int tl = 0; tl < T; tl++)
		for (int k = 0; k < K; k++) {
			for (int m = 0; m < M; m++)
				x[k * F + tl * M + m] = st[(tl * K + k) * M + m];
			for (int n = 0; n < N; n++)
				x[k * F + T * M + tl * N + n] =
					mv[(tl * K + k) * N + n];
		}
	/* the test computes in the input dtype's values */
	for (int i = 0; i < K * F; i++)
		x[i] = lm_round_to(lm_dtype_parse(in_dt), x[i]);

	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", in_dt, K, F);
	tb_dram(&t, "y", "ExternalOutput", out_dt, M, N);
	tb_sb(&t, "xs", in_dt, K, F);
	tb_sb(&t, "ys", out_dt, M, N);
	tb_psum(&t, "acc", M, N, 2);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", in_dt, K, F, 0), AP("xs", in_dt, K, F, 0));
	for (int tl = 0; tl < T; tl++) {
		char st_ap[400], mv_ap[400];
		snprintf(st_ap, sizeof st_ap, "{\"kind\":\"physical_ap\","
			 "\"memsetref\":\"xs\",\"memref\":\"xs\",\"offset\":%d,"
			 "\"ap\":[[%d,%d],[1,%d]],\"dtype\":\"%s\"}", tl * M, F,
			 K, M, in_dt);
		snprintf(mv_ap, sizeof mv_ap, "{\"kind\":\"physical_ap\","
			 "\"memsetref\":\"xs\",\"memref\":\"xs\",\"offset\":%d,"
			 "\"ap\":[[%d,%d],[1,%d]],\"dtype\":\"%s\"}",
			 T * M + tl * N, F, K, N, in_dt);
		tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm%d\",\"engine\":"
			"\"PE\",\"ins\":[%s,%s],\"outs\":[%s],"
			"\"start_tensor_calc\":%s,\"wait\":[{\"semaphore\":\"s0\","
			"\"value\":1}]}", tl, st_ap, mv_ap,
			AP("acc", "float32", M, N, 0), tl ? "false" : "true");
	}
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\",\"engine\":"
		"\"Activation\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"mm2\"]}", AP("acc", "float32", M, N, 0),
		AP("ys", out_dt, M, N, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"ev\"]}", AP("ys", out_dt, M, N, 0), AP("y", out_dt, M, N, 0));
	run_ok(&t, x, K, F, &r);

	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			float acc = 0.0f;
			for (int tl = 0; tl < T; tl++)
				for (int k = 0; k < K; k++)
					acc = fmaf(x[k * F + tl * M + m],
						   x[k * F + T * M + tl * N + n],
						   acc);
			ck_assert_same_f(tb_out(&r, "y", m * N + n),
					 lm_round_to(lm_dtype_parse(out_dt), acc));
		}
	ck_assert_int_eq(r.n_matmuls, 3);
	ck_assert_int_eq(r.matmuls[0].k, K);
	ck_assert_int_eq(r.matmuls[0].m, M);
	ck_assert_int_eq(r.matmuls[0].n, N);
	ck_assert_int_eq(r.cores[0].macs, (int64_t)T * K * M * N);
	ck_assert(fabs(r.matmuls[0].array_util - (double)K * M / 16384) < 1e-12);
	ls_result_free(&r);
	tb_free(&t);
	free(st);
	free(mv);
	free(x);
}

START_TEST(test_matmul_three_k_tiles_f32)
{
	matmul3("float32", "float32");
}
END_TEST

START_TEST(test_matmul_bf16_inputs_and_bf16_result)
{
	matmul3("bfloat16", "bfloat16");
}
END_TEST

/* float8 inputs (both formats) widen exactly and accumulate in float32 */
START_TEST(test_matmul_f8_inputs)
{
	matmul3("float8_e4m3fn", "float32");
	matmul3("float8_e5m2", "bfloat16");
}
END_TEST

START_TEST(test_matmul_psum_bank_boundary_rejected)
{
	/* [64, 512] float32 from byte 1024 of bank 0 crosses into bank 1 */
	tb t;
	char *j;
	lm_module *m;
	lm_error err;
	tb_init(&t);
	tb_sb(&t, "a", "float32", 64, 64);
	tb_sb(&t, "b", "float32", 64, 512);
	tb_alloc_raw(&t, "{\"name\":\"acc\",\"kind\":\"Internal\","
		     "\"dtype\":\"float32\",\"tensor_shape\":[64,768],\"file\":"
		     "\"\",\"memorylocations\":[{\"name\":\"acc\",\"type\":"
		     "\"PSUM\",\"addr\":0,\"dims\":[64,4096],\"bank\":0,"
		     "\"base\":0,\"allocated\":true}]}");
	tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm\",\"engine\":\"PE\","
		"\"ins\":[%s,%s],\"outs\":[{\"kind\":\"physical_ap\","
		"\"memsetref\":\"acc\",\"memref\":\"acc\",\"offset\":256,\"ap\":"
		"[[1024,64],[1,512]],\"dtype\":\"float32\"}],"
		"\"start_tensor_calc\":true}", AP("a", "float32", 64, 64, 0),
		AP("b", "float32", 64, 512, 0));
	j = tb_json(&t, 0);
	ck_assert_int_eq(lm_module_parse(&m, j, strlen(j), "bank.json", &err), 0);
	ck_assert_int_ne(lm_verify(m, NULL, &err), 0);
	ck_assert_contains(err.msg, "PSUM bank boundary");
	lm_module_free(m);
	free(j);
	tb_free(&t);
}
END_TEST

/*
** Identity [F, F] built as the codegen does: Memset 0 then an
** AffineSelect with v = p - j, not_equal -> keep, else fill 1.0.
*/
static void build_identity(tb *t, const char *name, const char *dt, int F)
{
	tb_sb(t, name, dt, F, F);
	tb_inst(t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"%s_zero\",\"engine\":"
		"\"Pool\",\"outs\":[%s],\"constant\":0}", name,
		AP(name, dt, F, F, 0));
	tb_inst(t, "{\"opcode\":\"TensorScalarAffineSelect\",\"name\":\"%s_sel\","
		"\"engine\":\"Pool\",\"ins\":[%s],\"outs\":[%s],\"pattern\":"
		"[[-1,%d]],\"channel_multiplier\":1,\"base\":0,\"compare_op\":"
		"\"not_equal\",\"fill_value\":1.0}", name, AP(name, dt, F, F, 0),
		AP(name, dt, F, F, 0), F);
}

/* More keys of the transpose's Matmult (",\"key\":value"). */
static const char *tr_extra = "";

/* PE transpose: [P, F] -> [F, P], bit-exact, NaN / Inf / -0 preserved. */
static void transpose_case(const char *dt, int break_identity, const char **msg)
{
	enum { P = 8, F = 5 };
	float x[P * F];
	tb t;
	ls_result r;

	for (int i = 0; i < P * F; i++)
		x[i] = (float)i * 0.25f - 3.0f;
	x[3] = NAN;
	x[7] = INFINITY;
	x[11] = -INFINITY;
	x[13] = -0.0f;
	x[20] = lm_bits_f32(0x7fc12345u); /* NaN with a payload */
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", dt, P, F);
	tb_dram(&t, "y", "ExternalOutput", dt, F, P);
	tb_sb(&t, "xs", dt, P, F);
	tb_sb(&t, "ys", dt, F, P);
	tb_psum(&t, "tp", F, P, 0);
	build_identity(&t, "ident", dt, F);
	if (break_identity)
		tb_inst(&t, "{\"opcode\":\"Memset\","
			"\"mode\":\"Const\",\"name\":\"spoil\","
			"\"engine\":\"Pool\",\"outs\":[{\"kind\":\"physical_ap\","
			"\"memsetref\":\"ident\",\"memref\":\"ident\",\"offset\":"
			"2,\"ap\":[[%d,1],[1,1]],\"dtype\":\"%s\"}],\"value\":0.5}",
			F, dt);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", dt, P, F, 0), AP("xs", dt, P, F, 0));
	tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"tr\",\"engine\":\"PE\","
		"\"ins\":[%s,%s],\"outs\":[%s],\"is_transpose\":true,"
		"\"start_tensor_calc\":true,\"wait\":[{\"semaphore\":\"s0\","
		"\"value\":1}],\"dependencies\":[\"%s\"]%s}",
		AP("ident", dt, F, F, 0), AP("xs", dt, P, F, 0),
		APS("tp", dt, F, P, 0, P * 4 / tb_esize(dt)),
		break_identity ? "spoil" : "ident_sel", tr_extra);
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":[\"tr\"]}",
		APS("tp", dt, F, P, 0, P * 4 / tb_esize(dt)),
		AP("ys", dt, F, P, 0));
	tb_io_end(&t, dt, F, P, "ev");
	if (msg) {
		*msg = run_err(&t, x, P, F);
		tb_free(&t);
		return;
	}
	run_ok(&t, x, P, F, &r);
	{
		const ls_tensor *y = ls_tensors_find(&r.outputs, "y");
		int es = lm_dtype_size(y->dtype);
		for (int p = 0; p < P; p++)
			for (int f = 0; f < F; f++) {
				uint8_t want[4];
				lm_store_elem(y->dtype, want, x[p * F + f]);
				ck_assert_msg(memcmp((char *)y->data +
						     (f * P + p) * es, want,
						     (size_t)es) == 0,
					      "transpose differs at [%d][%d]", f,
					      p);
			}
	}
	ls_result_free(&r);
	tb_free(&t);
}

/*
** is_weight_onezero / is_fmap_onezero: a promise that the operand holds
** only 0 and 1, checked when the matmul runs. The identity keeps the
** stationary's promise (the same bits as without it); x breaks the moving
** one at its first element (-3), a spoiled identity the stationary's.
*/
START_TEST(test_matmul_onezero)
{
	const char *msg = NULL;
	tr_extra = ",\"is_weight_onezero\":true";
	transpose_case("float32", 0, NULL);
	transpose_case("bfloat16", 0, NULL);
	transpose_case("float32", 1, &msg);
	ck_assert_contains(msg, "is_weight_onezero: ins[0] holds 0.5 at "
			   "element 2, not 0 or 1");
	tr_extra = ",\"is_fmap_onezero\":true";
	transpose_case("float32", 0, &msg);
	ck_assert_contains(msg, "is_fmap_onezero: ins[1] holds -3 at element "
			   "0, not 0 or 1");
	tr_extra = "";
}
END_TEST

START_TEST(test_transpose_nan_inf_bit_exact)
{
	transpose_case("float32", 0, NULL);
	transpose_case("bfloat16", 0, NULL);
}
END_TEST

START_TEST(test_transpose_identity_check_fails)
{
	const char *msg;
	transpose_case("float32", 1, &msg);
	ck_assert_contains(msg, "instruction tr");
	ck_assert_contains(msg, "not an identity matrix");
	ck_assert_contains(msg, "element [0][2] is 0.5");
}
END_TEST

/* ---- Activation --------------------------------------------------------- */

/* y = func(x * scale + bias[p]) for x over one partition row. */
static void act_run(const char *func, const float *x, int F, float scale,
		    float *y)
{
	tb t;
	ls_result r;
	tb_init(&t);
	tb_io(&t, "float32", "float32", 1, F);
	tb_sb(&t, "bias", "float32", 1, 1);
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"zb\",\"engine\":\"Pool\","
		"\"outs\":[%s],\"value\":0}", AP("bias", "float32", 1, 1, 0));
	tb_inst(&t, "{\"opcode\":\"Activation\","
		"\"acc\":\"Idle\",\"alpha\":0.0,\"op0\":\"bypass\","
		"\"op1\":\"bypass\",\"reduce_op\":\"bypass\",\"name\":\"act\",\"engine\":"
		"\"Activation\",\"ins\":[%s,%s],\"outs\":[%s],\"func\":\"%s\","
		"\"scale\":%.9g,\"wait\":[{\"semaphore\":\"s0\",\"value\":1}],"
		"\"dependencies\":[\"zb\"]}", AP("xs", "float32", 1, F, 0),
		AP("bias", "float32", 1, 1, 0), AP("ys", "float32", 1, F, 0),
		func, (double)scale);
	tb_io_end(&t, "float32", 1, F, "act");
	run_ok(&t, x, 1, F, &r);
	for (int i = 0; i < F; i++)
		y[i] = tb_out(&r, "y", i);
	ls_result_free(&r);
	tb_free(&t);
}

START_TEST(test_activation_functions)
{
	const float inf = INFINITY, nan = NAN;
	float x[6] = {-inf, -1.0f, 0.0f, 0.5f, inf, nan};
	float y[6];
	struct { const char *f; float want[6]; } cases[] = {
		{ "Identity", {-inf, -1.0f, 0.0f, 0.5f, inf, nan} },
		{ "Copy", {-inf, -1.0f, 0.0f, 0.5f, inf, nan} },
		{ "Relu", {0.0f, 0.0f, 0.0f, 0.5f, inf, nan} },
		{ "Exp", {0.0f, expf(-1.0f), 1.0f, expf(0.5f), inf, nan} },
		{ "Tanh", {-1.0f, tanhf(-1.0f), 0.0f, tanhf(0.5f), 1.0f, nan} },
		{ "Sigmoid", {0.0f, 1.0f / (1.0f + expf(1.0f)), 0.5f,
			      1.0f / (1.0f + expf(-0.5f)), 1.0f, nan} },
		{ "Silu", {-0.0f, -1.0f / (1.0f + expf(1.0f)), 0.0f,
			   0.5f / (1.0f + expf(-0.5f)), inf, nan} },
		{ "Square", {inf, 1.0f, 0.0f, 0.25f, inf, nan} },
		{ "Sqrt", {nan, nan, 0.0f, sqrtf(0.5f), inf, nan} },
		{ "Rsqrt", {nan, nan, inf, 1.0f / sqrtf(0.5f), 0.0f, nan} },
		{ "Reciprocal", {-0.0f, -1.0f, inf, 2.0f, 0.0f, nan} },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		act_run(cases[c].f, x, 6, 1.0f, y);
		for (int i = 0; i < 6; i++)
			ck_assert_msg((isnan(y[i]) && isnan(cases[c].want[i])) ||
				      tb_bits(y[i]) == tb_bits(cases[c].want[i]),
				      "%s(%g) = %.9g, expected %.9g", cases[c].f,
				      (double)x[i], (double)y[i],
				      (double)cases[c].want[i]);
	}
	/* Gelu_apprx_tanh: the documented formula, and its limits */
	act_run("Gelu_apprx_tanh", x, 6, 1.0f, y);
	{
		float v = -1.0f;
		float g = 0.5f * v * (1.0f + tanhf(0.7978845608028654f *
					   (v + 0.044715f * (v * v * v))));
		ck_assert_same_f(y[1], g);
		ck_assert_same_f(y[0], -0.0f);
		ck_assert_same_f(y[2], 0.0f);
		ck_assert_same_f(y[4], inf);
		ck_assert(isnan(y[5]));
	}
}
END_TEST

START_TEST(test_activation_scale_bias)
{
	enum { P = 4, F = 3 };
	float x[P * F];
	tb t;
	ls_result r;
	tb_fill(x, P * F, 7);
	tb_init(&t);
	tb_io(&t, "float32", "bfloat16", P, F);
	tb_sb(&t, "bias", "float32", P, 1);
	tb_inst(&t, "{\"opcode\":\"Iota\",\"name\":\"bi\",\"engine\":\"Pool\","
		"\"outs\":[%s],\"pattern\":[[0,1]],\"channel_multiplier\":3,"
		"\"base\":-5}", AP("bias", "float32", P, 1, 0));
	tb_inst(&t, "{\"opcode\":\"Activation\","
		"\"acc\":\"Idle\",\"alpha\":0.0,\"op0\":\"bypass\","
		"\"op1\":\"bypass\",\"reduce_op\":\"bypass\",\"name\":\"act\",\"engine\":"
		"\"Activation\",\"ins\":[%s,%s],\"outs\":[%s],\"func\":"
		"\"Identity\",\"scale\":1.7,\"wait\":[{\"semaphore\":\"s0\","
		"\"value\":1}],\"dependencies\":[\"bi\"]}",
		AP("xs", "float32", P, F, 0), AP("bias", "float32", P, 1, 0),
		AP("ys", "bfloat16", P, F, 0));
	tb_io_end(&t, "bfloat16", P, F, "act");
	run_ok(&t, x, P, F, &r);
	for (int p = 0; p < P; p++)
		for (int f = 0; f < F; f++) {
			float want = x[p * F + f] * 1.7f;
			want = want + (float)(-5 + 3 * p);
			ck_assert_same_f(tb_out(&r, "y", p * F + f),
					 lm_bf16_to_f32(lm_f32_to_bf16(want)));
		}
	ls_result_free(&r);
	tb_free(&t);
}
END_TEST

/* ---- elementwise -------------------------------------------------------- */

/* TensorTensor op over pairs (a[i], b[i]) -> out. */
static void tt_run(const char *op, const float *a, const float *b, int F,
		   float *out)
{
	float x[2 * 16];
	tb t;
	ls_result r;
	for (int i = 0; i < F; i++) {
		x[i] = a[i];
		x[F + i] = b[i];
	}
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 2, F);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, F);
	tb_sb(&t, "xs", "float32", 1, 2 * F);
	tb_sb(&t, "ys", "float32", 1, F);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[{\"kind\":\"physical_ap\","
		"\"memsetref\":\"x\",\"memref\":\"x\",\"offset\":0,\"ap\":"
		"[[%d,1],[1,%d]],\"dtype\":\"float32\"}],\"outs\":[%s]}", 2 * F,
		2 * F, AP("xs", "float32", 1, 2 * F, 0));
	tb_inst(&t, "{\"opcode\":\"TensorTensor\",\"name\":\"tt\",\"engine\":"
		"\"DVE\",\"op\":\"%s\",\"ins\":[%s,%s],\"outs\":[%s],\"wait\":"
		"[{\"semaphore\":\"s0\",\"value\":1}]}", op,
		AP("xs", "float32", 1, F, 0), AP("xs", "float32", 1, F, F),
		AP("ys", "float32", 1, F, 0));
	tb_io_end(&t, "float32", 1, F, "tt");
	run_ok(&t, x, 2, F, &r);
	for (int i = 0; i < F; i++)
		out[i] = tb_out(&r, "y", i);
	ls_result_free(&r);
	tb_free(&t);
}

START_TEST(test_tensortensor_ops)
{
	float a[5] = {1.0f, -1.0f, 0.0f, 3.0f, NAN};
	float b[5] = {0.0f, 0.0f, 0.0f, 1.5f, 2.0f};
	float y[5];
	tt_run("divide", a, b, 5, y);
	ck_assert_same_f(y[0], INFINITY);
	ck_assert_same_f(y[1], -INFINITY);
	ck_assert(isnan(y[2]));
	ck_assert_same_f(y[3], 2.0f);
	ck_assert(isnan(y[4]));
	tt_run("add", a, b, 5, y);
	ck_assert_same_f(y[3], 4.5f);
	tt_run("subtract", a, b, 5, y);
	ck_assert_same_f(y[3], 1.5f);
	tt_run("mult", a, b, 5, y);
	ck_assert_same_f(y[3], 4.5f);
	ck_assert_same_f(y[1], -0.0f);
	tt_run("max", a, b, 5, y);
	ck_assert_same_f(y[1], 0.0f);
	ck_assert_same_f(y[3], 3.0f);
	ck_assert(isnan(y[4])); /* NaN propagates */
	tt_run("min", a, b, 5, y);
	ck_assert_same_f(y[1], -1.0f);
	ck_assert_same_f(y[3], 1.5f);
}
END_TEST

/* TensorScalar with op0/op1 and reverse flags. */
static void ts_run(const char *fields, const float *x, int F, float *y)
{
	tb t;
	ls_result r;
	tb_init(&t);
	tb_io(&t, "float32", "float32", 1, F);
	tb_inst(&t, "{\"opcode\":\"TensorScalar\",\"name\":\"ts\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],%s,\"wait\":[{\"semaphore\":"
		"\"s0\",\"value\":1}]}", AP("xs", "float32", 1, F, 0),
		AP("ys", "float32", 1, F, 0), fields);
	tb_io_end(&t, "float32", 1, F, "ts");
	run_ok(&t, x, 1, F, &r);
	for (int i = 0; i < F; i++)
		y[i] = tb_out(&r, "y", i);
	ls_result_free(&r);
	tb_free(&t);
}

START_TEST(test_tensorscalar_reverse)
{
	float x[3] = {2.0f, 0.0f, -4.0f}, y[3];
	ts_run("\"op0\":\"subtract\",\"const0\":1,\"reverse0\":false,\"op1\":"
	       "\"mult\",\"const1\":3,\"reverse1\":false", x, 3, y);
	ck_assert_same_f(y[0], 3.0f);
	ck_assert_same_f(y[2], -15.0f);
	ts_run("\"op0\":\"subtract\",\"const0\":1,\"reverse0\":true,\"op1\":"
	       "\"divide\",\"const1\":8,\"reverse1\":true", x, 3, y);
	ck_assert_same_f(y[0], -8.0f);        /* 8 / (1 - 2) */
	ck_assert_same_f(y[1], 8.0f);         /* 8 / (1 - 0) */
	ck_assert_same_f(y[2], 1.6f);         /* 8 / 5 */
	/* each step rounds to fp32: (x + 2^-30) - 1 loses the tiny term */
	x[0] = 1.0f;
	ts_run("\"op0\":\"add\",\"const0\":9.313225746154785e-10,\"reverse0\":"
	       "false,\"op1\":\"subtract\",\"const1\":1,\"reverse1\":false",
	       x, 1, y);
	ck_assert_same_f(y[0], 0.0f);
}
END_TEST

START_TEST(test_memset_bf16_rounding)
{
	/* 1 + 2^-8 is a tie in bf16 (-> 1.0, even); 1 + 3*2^-8 -> 1 + 2^-6 */
	tb t;
	ls_result r;
	tb_init(&t);
	tb_dram(&t, "y", "ExternalOutput", "bfloat16", 1, 4);
	tb_sb(&t, "ys", "bfloat16", 1, 4);
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"m0\",\"engine\":\"DVE\","
		"\"outs\":[%s],\"value\":1.00390625}", AP("ys", "bfloat16", 1, 2, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"m1\",\"engine\":\"DVE\","
		"\"outs\":[%s],\"value\":1.01171875}", AP("ys", "bfloat16", 1, 1, 2));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"name\":\"m2\",\"engine\":\"Pool\","
		"\"outs\":[%s],\"mode\":\"Const\",\"constant\":-3}",
		AP("ys", "bfloat16", 1, 1, 3));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"m1\",\"m2\"]}", AP("ys", "bfloat16", 1, 4, 0),
		AP("y", "bfloat16", 1, 4, 0));
	run_ok(&t, NULL, 0, 0, &r);
	ck_assert_same_f(tb_out(&r, "y", 0), 1.0f);
	ck_assert_same_f(tb_out(&r, "y", 1), 1.0f);
	ck_assert_same_f(tb_out(&r, "y", 2), 1.015625f);
	ck_assert_same_f(tb_out(&r, "y", 3), -3.0f);
	ls_result_free(&r);
	tb_free(&t);
}
END_TEST

START_TEST(test_iota_and_affine_select)
{
	enum { P = 3, F = 6 };
	float x[P * F];
	tb t;
	ls_result r;
	tb_fill(x, P * F, 3);
	tb_init(&t);
	tb_io(&t, "float32", "float32", P, F);
	tb_dram(&t, "io", "ExternalOutput", "int32", P, F);
	tb_sb(&t, "ios", "int32", P, F);
	/* v = 5 + 10p + 100*i + j over pattern [[100,2],[1,3]] */
	tb_inst(&t, "{\"opcode\":\"Iota\",\"name\":\"io1\",\"engine\":\"Pool\","
		"\"outs\":[%s],\"pattern\":[[100,2],[1,3]],\"channel_multiplier\":"
		"10,\"base\":5}", AP("ios", "int32", P, F, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st_io\",\"engine\":"
		"\"SP\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[\"io1\"]}", AP("ios", "int32", P, F, 0),
		AP("io", "int32", P, F, 0));
	/* keep x where j - 2p >= 0 (upper band), else -7.5 */
	tb_inst(&t, "{\"opcode\":\"TensorScalarAffineSelect\",\"name\":\"sel\","
		"\"engine\":\"Pool\",\"ins\":[%s],\"outs\":[%s],\"pattern\":"
		"[[1,%d]],\"channel_multiplier\":-2,\"base\":0,\"compare_op\":"
		"\"is_ge\",\"fill_value\":-7.5,\"wait\":[{\"semaphore\":\"s0\","
		"\"value\":1}]}", AP("xs", "float32", P, F, 0),
		AP("ys", "float32", P, F, 0), F);
	tb_io_end(&t, "float32", P, F, "sel");
	run_ok(&t, x, P, F, &r);
	{
		const ls_tensor *io = ls_tensors_find(&r.outputs, "io");
		const int32_t *v = io->data;
		for (int p = 0; p < P; p++)
			for (int j = 0; j < F; j++) {
				ck_assert_int_eq(v[p * F + j], 5 + 10 * p +
						 100 * (j / 3) + j % 3);
				ck_assert_same_f(tb_out(&r, "y", p * F + j),
						 j - 2 * p >= 0 ? x[p * F + j]
								: -7.5f);
			}
	}
	ls_result_free(&r);
	tb_free(&t);
}
END_TEST

/* ---- uninitialized reads, unsupported instructions ---------------------- */

START_TEST(test_uninit_read_error_and_allowed)
{
	tb t;
	ls_result r;
	const char *msg;
	/* ys is never written: the store reads it */
	tb_init(&t);
	tb_io(&t, "float32", "float32", 2, 4);
	tb_io_end(&t, "float32", 2, 4, "ld");
	msg = run_err(&t, (float[8]){0}, 2, 4);
	ck_assert_contains(msg, "instruction st");
	ck_assert_contains(msg, "reads uninitialized memory");
	ck_assert_contains(msg, "'ys' (SB partition 0, byte 16)");
	tb_free(&t);

	/* the same with can_read_uninit: NaN */
	tb_init(&t);
	tb_io(&t, "float32", "float32", 2, 4);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"can_read_uninit\":"
		"true,\"dependencies\":[\"ld\"]}", AP("ys", "float32", 2, 4, 0),
		AP("y", "float32", 2, 4, 0));
	run_ok(&t, (float[8]){0}, 2, 4, &r);
	ck_assert(isnan(tb_out(&r, "y", 5)));
	ls_result_free(&r);
	tb_free(&t);

	/* PSUM accumulation into never-written PSUM */
	tb_init(&t);
	tb_io(&t, "float32", "float32", 4, 4);
	tb_psum(&t, "acc", 4, 4, 1);
	tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm\",\"engine\":\"PE\","
		"\"ins\":[%s,%s],\"outs\":[%s],\"start_tensor_calc\":false,"
		"\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]}",
		AP("xs", "float32", 4, 4, 0), AP("xs", "float32", 4, 4, 0),
		AP("acc", "float32", 4, 4, 0));
	msg = run_err(&t, (float[16]){0}, 4, 4);
	ck_assert_contains(msg, "instruction mm");
	ck_assert_contains(msg, "outs[0] (accumulator) 'acc' (PSUM partition 0, "
			   "byte 2048)");
	tb_free(&t);
}
END_TEST

/*
** An opcode the simulator does not execute is refused before time 0 (the
** NoOp before it never runs): carriers and Loop with a note, other
** opcodes of every family plainly.
*/
static const struct { const char *inst, *want; } op_cases[] = {
	{ "{\"opcode\":\"NKIKLIRKernel\",\"name\":\"k\",\"engine\":\"Pool\","
	  "\"kernel_format\":\"bir\",\"klir_binary\":\"k.json\",\"ins\":[],"
	  "\"outs\":[]}",
	  "opcode 'NKIKLIRKernel' is not modelled by the simulator (IT56 "
	  "kernel carriers must be lowered before a run: lncsim lower)" },
	/* IT54: lower does not lower it either, and the message says so */
	{ "{\"opcode\":\"BIRKernel\",\"name\":\"k\",\"engine\":\"SP\","
	  "\"kernel_name\":\"k\",\"ins\":[],\"outs\":[]}",
	  "opcode 'BIRKernel' is not modelled by the simulator (BIRKernel "
	  "(IT54) carriers are not executed or lowered by lncsim)" },
	{ "{\"opcode\":\"Loop\","
		"\"LoopAxis\":{\"name\":\"i\",\"lb\":0,\"ub\":1,\"stride\":1},\"name\":\"k\",\"engine\":\"SP\","
	  "\"isParallel\":true,\"blocks\":[]}",
	  "opcode 'Loop' key 'isParallel' = true is not modelled by the "
	  "simulator (it models only false)" },
	{ "{\"opcode\":\"Pool\",\"name\":\"k\",\"engine\":\"Pool\","
	  "\"func\":\"Max\",\"ins\":[],\"outs\":[]}",
	  "opcode 'Pool' is not modelled by the simulator" },
	{ "{\"opcode\":\"CollectiveRecv\",\"name\":\"k\",\"engine\":\"Pool\","
	  "\"peer_id\":1,\"ins\":[],\"outs\":[]}",
	  "opcode 'CollectiveRecv' is not modelled by the simulator" },
	{ "{\"opcode\":\"UnconditionalBranch\",\"name\":\"k\",\"engine\":"
	  "\"SP\",\"target\":\"b\",\"ins\":[{\"kind\":\"imm_value\","
	  "\"dtype\":\"int32\",\"value\":1}]}",
	  "opcode 'UnconditionalBranch' key 'ins' = 1 operand (imm_value) is "
	  "not modelled by the simulator (it reads nothing)" },
	{ "{\"opcode\":\"InlineASMBytes\",\"name\":\"k\",\"engine\":\"SP\","
	  "\"asm_bytes\":[1,2]}",
	  "opcode 'InlineASMBytes' is not modelled by the simulator" },
	/* the opcodes the model reads but the simulator does not run yet
	   (a Break only in a loop's body: refused with its loop), and the
	   forms of the ones it runs that it refuses */
	{ "{\"opcode\":\"DoWhile\",\"name\":\"k\",\"engine\":\"SP\""
	  ",\"cond\":\"wb\",\"blocks\":[{\"name\":\"wb\",\"instructions\":[{\"o"
	  "pcode\":\"Break\",\"name\":\"brk\",\"engine\":\"SP\"}]}]"
	  "}",
	  "opcode 'DoWhile' key 'cond' = \"wb\" is not modelled by the "
	  "simulator (cond as a block reference is not modelled: the "
	  "compiler's simulator reads a register (give an expression))" },
	{ "{\"opcode\":\"CompareAndBranch\",\"name\":\"k\",\"engine"
	  "\":\"SP\",\"comp_op\":\"IS_NEIMM\",\"on_true\":\"b\",\"o"
	  "n_false\":\"b\"}",
	  "opcode 'CompareAndBranch' key 'ins' = 0 operands is not modelled "
	  "by the simulator (CompareAndBranch takes ins [lhs, rhs])" },
	{ "{\"opcode\":\"BranchHint\",\"name\":\"k\",\"engine\":\"S"
	  "P\",\"associate_branch\":\"b\",\"outs\":[{\"kind\":"
	  "\"register_access\",\"dtype\":\"int32\",\"regref\":\"r\"}]}",
	  "opcode 'BranchHint' key 'outs' = 1 operand (register_access) is "
	  "not modelled by the simulator (it writes nothing)" },
	{ "{\"opcode\":\"Exit\",\"name\":\"k\",\"engine\":\"SP\"}",
	  "opcode 'Exit' key 'engine' = \"SP\" is not modelled by the "
	  "simulator (Exit ends the core's launch for every engine: it is a "
	  "join on ALL; on one engine it is not modelled)" },
	{ "{\"opcode\":\"Drain\",\"name\":\"k\",\"engine\":\"SP\","
	  "\"is_reset_sema\":true}",
	  "opcode 'Drain' key 'is_reset_sema' = true is not modelled by the "
	  "simulator (it models only false or 0)" },
	{ "{\"opcode\":\"Halt\",\"name\":\"k\",\"engine\":\"SP\","
	  "\"ins\":[{\"kind\":\"imm_value\",\"dtype\":\"int32\","
	  "\"value\":1}]}",
	  "opcode 'Halt' key 'ins' = 1 operand (imm_value) is not modelled by "
	  "the simulator (it reads nothing)" },
	{ "{\"opcode\":\"RegisterAlu\",\"name\":\"k\",\"engine\":\""
	  "SP\",\"op\":\"pow\"}",
	  "opcode 'RegisterAlu' key 'op' = \"pow\" is not modelled by the "
	  "simulator (RegisterAlu computes bypass, add, subtract, mult, "
	  "divide, mod, the shifts, the bitwise ops, max, min and the is_* "
	  "compares)" },
	{ "{\"opcode\":\"RegisterMove\",\"name\":\"k\",\"engine\":\""
	  "SP\"}",
	  "opcode 'RegisterMove' key 'ins' = 0 operands is not modelled by "
	  "the simulator (RegisterMove takes ins [src] and outs [dst])" },
	{ "{\"opcode\":\"TensorLoad\",\"name\":\"k\",\"engine\":\"S"
	  "P\"}",
	  "opcode 'TensorLoad' key 'ins' = 0 operands is not modelled by the "
	  "simulator (one tensor element of int32, uint32, float32, int64 or "
	  "uint64 is moved)" },
	{ "{\"opcode\":\"TensorSave\",\"name\":\"k\",\"engine\":\"S"
	  "P\"}",
	  "opcode 'TensorSave' key 'outs' = 0 operands is not modelled by the "
	  "simulator (one tensor element of int32, uint32, float32, int64 or "
	  "uint64 is moved)" },
	{ "{\"opcode\":\"DMADescriptorCopy\",\"name\":\"k\",\"engin"
	  "e\":\"SP\"}",
	  "opcode 'DMADescriptorCopy' outside a DMABlock is not modelled by "
	  "the simulator (a descriptor runs only when a DMATrigger fires its "
	  "block)" },
	{ "{\"opcode\":\"DMADescriptorCCE\",\"name\":\"k\",\"engine"
	  "\":\"SP\"}",
	  "opcode 'DMADescriptorCCE' outside a DMABlock is not modelled by "
	  "the simulator (a descriptor runs only when a DMATrigger fires its "
	  "block)" },
	{ "{\"opcode\":\"DMADescriptorTranspose\",\"name\":\"k\",\""
	  "engine\":\"SP\"}",
	  "opcode 'DMADescriptorTranspose' outside a DMABlock is not modelled "
	  "by the simulator (a descriptor runs only when a DMATrigger fires "
	  "its block)" },
	{ "{\"opcode\":\"DMADescriptorReplicate\",\"name\":\"k\",\""
	  "engine\":\"SP\"}",
	  "opcode 'DMADescriptorReplicate' outside a DMABlock is not modelled "
	  "by the simulator (a descriptor runs only when a DMATrigger fires "
	  "its block)" },
	{ "{\"opcode\":\"TensorScalarCache\",\"name\":\"k\",\"engine\""
	  ":\"DVE\",\"op0\":\"add\",\"op1\":\"add\"}",
	  "opcode 'TensorScalarCache' is not modelled by the simulator (its "
	  "recurrence is not modelled: the references disagree on what op0 "
	  "reads and on the initial value each acc gives)" },
	{ "{\"opcode\":\"TensorCopyDynamicSrc\",\"name\":\"k\",\"en"
	  "gine\":\"SP\"}",
	  "opcode 'TensorCopyDynamicSrc' key 'ins' = 0 operands is not "
	  "modelled by the simulator (TensorCopyDynamicSrc takes ins [src] "
	  "and outs [dst])" },
	{ "{\"opcode\":\"TensorCopyDynamicDst\",\"name\":\"k\",\"en"
	  "gine\":\"SP\"}",
	  "opcode 'TensorCopyDynamicDst' key 'ins' = 0 operands is not "
	  "modelled by the simulator (TensorCopyDynamicDst takes ins [src] "
	  "and outs [dst])" },
};

START_TEST(test_unexecuted_opcode_refused)
{
	tb t;
	lm_module *m;
	lm_error err;
	ls_result r;
	char want[400];
	tb_init(&t);
	tb_alloc_raw(&t, "{\"name\":\"r\",\"kind\":\"Internal\",\"dtype\":"
		     "\"int32\",\"tensor_shape\":[1],\"memorylocations\":[{"
		     "\"name\":\"r\",\"type\":\"REG\",\"addr\":0}]}");
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":\"SP\"}");
	tb_inst(&t, "%s", op_cases[_i].inst);
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err), LM_EINPUT);
	snprintf(want, sizeof want, "tb-core0.json: function sg0000/block b/"
		 "instruction k: %s", op_cases[_i].want);
	ck_assert_str_eq(err.msg, want);
	/* verify --sim says the same */
	ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, want);
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/* ---- keys the simulator does not model ---------------------------------- */

/*
** Run a program around one instruction 'i' of kind op whose JSON ends with
** the extra keys kv (",\"acc\":\"Idle\"" or ""). Returns ls_run's status.
*/
static int key_run(const char *op, const char *kv, lm_error *err)
{
	enum { P = 4, F = 4 };
	float x[P * F];
	const char *src = AP("xs", "float32", P, F, 0);
	const char *dst = AP("ys", "float32", P, F, 0);
	const char *wait = "\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]";
	const char *last = "i";
	tb t;
	ls_result r;
	lm_module *m;
	int rc;

	tb_fill(x, P * F, 3);
	tb_init(&t);
	tb_io(&t, "float32", "float32", P, F);
	if (!strcmp(op, "Activation") || !strcmp(op, "Lrelu")) {
		tb_sb(&t, "bias", "float32", P, 1);
		tb_inst(&t, "{\"opcode\":\"Memset\","
			"\"mode\":\"Const\",\"name\":\"mb\",\"engine\":"
			"\"DVE\",\"outs\":[%s],\"value\":0}",
			AP("bias", "float32", P, 1, 0));
		tb_inst(&t, "{\"opcode\":\"Activation\","
			"\"acc\":\"Idle\",\"alpha\":0.0,\"op0\":\"bypass\","
			"\"op1\":\"bypass\",\"reduce_op\":\"bypass\","
			"\"scale\":1.0,\"name\":\"i\",\"engine\":"
			"\"Activation\",\"func\":\"%s\",\"ins\":[%s,%s],\"outs\":"
			"[%s],\"dependencies\":[\"mb\"],%s%s}",
			!strcmp(op, "Lrelu") ? "Lrelu" : "Relu", src,
			AP("bias", "float32", P, 1, 0), dst, wait, kv);
	} else if (!strcmp(op, "DMACopy")) {
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"i\",\"engine\":"
			"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],%s%s}",
			src, dst, wait, kv);
	} else if (!strcmp(op, "Memset")) {
		tb_inst(&t, "{\"opcode\":\"Memset\","
			"\"mode\":\"Const\",\"name\":\"i\",\"engine\":"
			"\"DVE\",\"outs\":[%s],\"constant\":2%s}", dst, kv);
	} else if (!strcmp(op, "Matmult")) {
		tb_psum(&t, "acc", P, F, 0);
		tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"i\",\"engine\":"
			"\"PE\",\"ins\":[%s,%s],\"outs\":[%s],\"start_tensor_calc\":"
			"true,\"stop_tensor_calc\":true,%s%s}", src, src,
			AP("acc", "float32", P, F, 0), wait, kv);
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\",\"engine\":"
			"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
			"[\"i\"]}", AP("acc", "float32", P, F, 0), dst);
		last = "ev";
	} else if (!strcmp(op, "TensorTensor")) {
		tb_inst(&t, "{\"opcode\":\"TensorTensor\",\"name\":\"i\","
			"\"engine\":\"DVE\",\"op\":\"add\",\"ins\":[%s,%s],"
			"\"outs\":[%s],%s%s}", src, src, dst, wait, kv);
	} else if (!strcmp(op, "TensorCopy")) {
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"i\",\"engine\":"
			"\"DVE\",\"ins\":[%s],\"outs\":[%s],%s%s}", src, dst, wait,
			kv);
	} else {
		/* a data-less instruction beside a copy */
		if (!strcmp(op, "SwitchQueueInstance"))
			tb_inst(&t, "{\"opcode\":\"SwitchQueueInstance\",\"name\":"
				"\"i\",\"engine\":\"SP\",\"queue\":\"q1\","
				"\"instance_name\":\"q1b\"%s}", kv);
		else if (!strcmp(op, "CoreBarrier"))
			tb_inst(&t, "{\"opcode\":\"CoreBarrier\",\"name\":\"i\","
				"\"engine\":\"Pool\",\"id\":1,\"cores\":[0]%s}", kv);
		else
			ck_abort_msg("key_run: no program for %s", op);
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\","
			"\"engine\":\"DVE\",\"ins\":[%s],\"outs\":[%s],%s}", src,
			dst, wait);
		last = "cp";
	}
	tb_io_end(&t, "float32", P, F, last);
	m = tb_module(&t, 0);
	rc = tb_run1(m, x, P, F, NULL, &r, err);
	if (rc == 0)
		ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* A key at a value the simulator does not model, and one it accepts. */
typedef struct key_case {
	const char *op, *key, *bad, *good;
} key_case;

static const key_case key_cases[] = {
	/* the reported ones */
	{ "Activation", "op0", "\"add\"", "\"bypass\"" },
	{ "Activation", "op1", "\"mult\"", "\"bypass\"" },
	{ "Activation", "reduce_op", "\"max\"", "\"bypass\"" },
	{ "Activation", "acc", "\"LoadAccumulate\"", "\"Idle\"" },
	{ "Activation", "is_activate2", "true", "false" },
	{ "Activation", "alpha", "0.5", "0" },
	{ "Activation", "reverse0", "true", "false" },
	{ "DMACopy", "mode", "\"Dynamic\"", "\"Copy\"" },
	{ "Memset", "mode", "\"Random\"", "\"Const\"" },
	/* the rest of the table, one row per kind */
	{ "DMACopy", "transpose_op", "\"WZXY\"", "\"None\"" },
	{ "DMACopy", "cce_op", "\"add\"", "\"bypass\"" },
	{ "DMACopy", "constants", "[1.5]", "[]" },
	{ "DMACopy", "duplicate", "true", "false" },
	{ "DMACopy", "dge_type", NULL, "\"HWDGE\"" },
	{ "Matmult", "perf_mode", "\"DoubleRow\"", "\"None\"" },
	{ "Matmult", "psum_zero_region", "1", "0" },
	{ "Matmult", "accumulation_flag", "7", "3" },
	{ "Matmult", "tile_position", NULL, "[0, 0]" },
	{ "TensorTensor", "acc", "\"ZeroAccumulate\"", "\"Idle\"" },
	{ "TensorCopy", "predicates", "[{\"a\":1}]", "[]" },
	{ "TensorCopy", "sync_info", "{\"wait_mode\":1}", "{}" },
	{ "TensorCopy", "indirection_ins", "[{}]", "[]" },
	{ "TensorCopy", "frobnicate", "7", NULL },
	{ "TensorCopy", "debug", NULL, "{\"file\": \"k.py\", \"line\": 3}" },
	{ "TensorCopy", "_comment", NULL, "\"why\"" },
	{ "SwitchQueueInstance", "no_rearm",
	  "{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":1}", "true" },
	{ "CoreBarrier", "runtime_semaphore", NULL, "5" },
};

START_TEST(test_unmodelled_key_refused)
{
	const key_case *k = &key_cases[_i];
	lm_error err;
	char kv[200], want[300];
	int rc;
	if (k->bad) {
		snprintf(kv, sizeof kv, ",\"%s\":%s", k->key, k->bad);
		rc = key_run(k->op, kv, &err);
		ck_assert_msg(rc == LM_EINPUT, "%s %s=%s: rc %d (%s)", k->op,
			      k->key, k->bad, rc, err.msg);
		snprintf(want, sizeof want, "tb-core0.json: function sg0000/"
			 "block b/instruction i: opcode '%s' key '%s' = %s is "
			 "not modelled by the simulator",
			 !strcmp(k->op, "Lrelu") ? "Activation" : k->op, k->key,
			 k->bad);
		if (!strcmp(k->key, "sync_info")) /* the wait joins it */
			*strrchr(want, '}') = 0;
		ck_assert_contains(err.msg, want);
	}
	if (k->good) {
		snprintf(kv, sizeof kv, ",\"%s\":%s", k->key, k->good);
		rc = key_run(k->op, kv, &err);
		ck_assert_msg(rc == 0, "%s %s=%s: %s", k->op, k->key, k->good,
			      err.msg);
	}
}
END_TEST

/* alpha is modelled where it is used (Lrelu / Prelu) */
START_TEST(test_alpha_modelled_for_lrelu)
{
	lm_error err;
	int rc = key_run("Lrelu", ",\"alpha\":0.25", &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	rc = key_run("Activation", ",\"alpha\":0.25", &err);
	ck_assert_int_eq(rc, LM_EINPUT);
	ck_assert_contains(err.msg, "opcode 'Activation' key 'alpha' = 0.25 is "
			   "not modelled by the simulator (alpha is modelled "
			   "for Lrelu and Prelu only)");
}
END_TEST

/*
** The notes of documented keys come from model/fields.def: its default
** (an enum by its spelling), metadata at any value, a modelled key in a
** form the loader does not read, a key of another opcode.
*/
static const struct { const char *op, *kv, *want; } note_cases[] = {
	{ "Activation", ",\"acc\":\"LoadAccumulate\"", "opcode 'Activation' "
	  "key 'acc' = \"LoadAccumulate\" is not modelled by the simulator "
	  "(Idle, Zero, Accumulate, ZeroAccumulate and AddAccumulate are "
	  "modelled; what LoadAccumulate loads is not documented)" },
	{ "Activation", ",\"acc\":5", "opcode 'Activation' key 'acc' = "
	  "\"LoadAccumulate\" is not modelled by the simulator (Idle, Zero, "
	  "Accumulate" },
	{ "TensorTensor", ",\"acc\":\"Accumulate\"", "opcode 'TensorTensor' "
	  "key 'acc' = \"Accumulate\" is not modelled by the simulator (it "
	  "models only \"Idle\")" },
	{ "Activation", ",\"is_activate2\":1", "opcode 'Activation' key "
	  "'is_activate2' = 1 is not modelled by the simulator (it models "
	  "only false or 0)" },
	{ "Matmult", ",\"replication_resolution\":2", "opcode 'Matmult' key "
	  "'replication_resolution' = 2 is not modelled by the simulator (it "
	  "models only 0)" },
	{ "Matmult", ",\"is_transpose\":{\"kind\":\"ShardIDKind\",\"ub\":"
	  "4}", "opcode 'Matmult' key 'is_transpose' = {\"kind\":"
	  "\"ShardIDKind\",\"ub\":4} is not modelled by the simulator "
	  "(affine expressions are not modelled)" },
	{ "DMACopy", ",\"replica_groups\":[[0,1]]", "opcode 'DMACopy' key "
	  "'replica_groups' = [[0,1]] is not modelled by the simulator (it "
	  "models only [])" },
	{ "TensorCopy", ",\"axis\":\"X\"", "opcode 'TensorCopy' key 'axis' = "
	  "\"X\" is not modelled by the simulator (not a key the simulator "
	  "knows here)" },
	{ "DMACopy", ",\"dma_qos\":\"P1\",\"oob_is_err\":true,"
	  "\"use_gpsimd_dma\":true,\"dge_type\":\"None\"", NULL },
	{ "CoreBarrier", ",\"runtime_semaphore\":{\"kind\":\"ShardIDKind\","
	  "\"ub\":4}", NULL },
};

START_TEST(test_table_key_notes)
{
	lm_error err;
	int rc = key_run(note_cases[_i].op, note_cases[_i].kv, &err);
	if (!note_cases[_i].want) {
		ck_assert_msg(rc == 0, "%s", err.msg);
		return;
	}
	ck_assert_int_eq(rc, LM_EINPUT);
	ck_assert_contains(err.msg, "tb-core0.json: function sg0000/block b/"
			   "instruction i: ");
	ck_assert_contains(err.msg, note_cases[_i].want);
}
END_TEST

/*
** A module made in memory may carry a documented key at its default in
** `extra` (the loader would have dropped it): allowed; any other value
** of it is refused.
*/
START_TEST(test_default_in_extra_allowed)
{
	static const char *const vals[][2] = {
		{ "\"Copy\"", NULL }, { "0", NULL },
		{ "\"Dynamic\"", "opcode 'DMACopy' key 'mode' = \"Dynamic\" "
		  "is not modelled by the simulator (Copy, Transpose, CCE and "
		  "Replicate are modelled)" },
	};
	for (size_t v = 0; v < sizeof vals / sizeof *vals; v++) {
		tb t;
		lm_module *m;
		lm_error err;
		lm_inst *in;
		tb_init(&t);
		tb_io(&t, "float32", "float32", 2, 4);
		tb_io_end(&t, "float32", 2, 4, "ld");
		m = tb_module(&t, 0);
		in = &m->functions[0].blocks[0].insts[0];
		ck_assert_int_eq(in->op, LM_OP_DMACOPY);
		if (!in->extra)
			in->extra = cJSON_CreateObject();
		cJSON_AddItemToObject(in->extra, "mode", cJSON_Parse(vals[v][0]));
		if (!vals[v][1]) {
			ck_assert_msg(ls_check_module(m, &err) == 0, "%s",
				      err.msg);
		} else {
			ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
			ck_assert_contains(err.msg, vals[v][1]);
		}
		lm_module_free(m);
		tb_free(&t);
	}
}
END_TEST

/* simcheck's rows agree with fields.def. */
START_TEST(test_simcheck_tables)
{
	lm_error err;
	ck_assert_msg(ls_check_tables(&err) == 0, "%s", err.msg);
}
END_TEST

/*
** docs/simulator.md carries ls_format_key_table's output between its
** markers; when it does not, the table to paste is written to
** ./simcheck-key-table.md.
*/
START_TEST(test_doc_key_table)
{
	static const char begin[] = "<!-- simcheck key table: begin -->\n";
	static const char end[] = "<!-- simcheck key table: end -->";
	char *p = tu_srcpath("docs/simulator.md");
	char *doc = tu_read(p);
	lm_buf b = LM_BUF_INIT;
	const char *s, *e;
	ck_assert_ptr_nonnull(doc);
	ls_format_key_table(&b);
	s = strstr(doc, begin);
	e = s ? strstr(s, end) : NULL;
	ck_assert_msg(s && e, "docs/simulator.md has no key table markers");
	s += strlen(begin);
	if ((size_t)(e - s) != b.size ||
	    memcmp(s, lm_buf_cstr(&b), b.size) != 0) {
		FILE *f = fopen("simcheck-key-table.md", "w");
		if (f) {
			fputs(lm_buf_cstr(&b), f);
			fclose(f);
		}
		ck_abort_msg("docs/simulator.md: the documented-key table is "
			     "not ls_format_key_table's output; the new one "
			     "is in simcheck-key-table.md");
	}
	lm_buf_free(&b);
	free(doc);
	free(p);
}
END_TEST

/* Operand, allocation and memory-location keys. */
/*
** The simulator strides one partition per step of an SB / PSUM operand's
** first pair: a step of 2 * pe (every other partition) or 0 (one partition
** again) verifies and is refused by name before time 0; a pair of one
** partition runs whatever its step, and so does the copy striding one.
*/
START_TEST(test_partition_step_refused)
{
	static const struct { int step, parts; const char *msg; } cases[] = {
		{ 8, 2, "instruction cp/operand ins[0]: ap[0].step 8 strides 2 "
		  "partitions: not modelled by the simulator" },
		{ 0, 2, "instruction cp/operand ins[0]: ap[0].step 0 strides 0 "
		  "partitions: not modelled by the simulator" },
		{ 5, 1, NULL },
		{ 4, 4, NULL },
	};
	float x[16];
	for (int i = 0; i < 16; i++)
		x[i] = (float)i;
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		tb t;
		lm_module *m;
		lm_error err;
		ls_result r;
		int P = cases[c].parts, rows = cases[c].msg ? 4 : P;
		tb_init(&t);
		tb_io(&t, "float32", "float32", rows, 4);
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
			"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"wait\":[{\"semaphore\":"
			"\"s0\",\"value\":1}]}",
			APS("xs", "float32", P, 4, 0, cases[c].step),
			AP("ys", "float32", P, 4, 0));
		tb_io_end(&t, "float32", P, 4, "cp");
		m = tb_module(&t, 0);
		ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
		if (cases[c].msg) {
			ck_assert_int_eq(ls_check_module_each(m, NULL, NULL), 1);
			ck_assert_int_eq(tb_run1(m, x, rows, 4, NULL, &r, &err),
					 LM_EINPUT);
			ck_assert_contains(err.msg, cases[c].msg);
		} else {
			ck_assert_int_eq(ls_check_module_each(m, NULL, NULL), 0);
			ck_assert_msg(tb_run1(m, x, rows, 4, NULL, &r, &err) ==
				      0, "%s", err.msg);
			for (int i = 0; i < P * 4; i++)
				ck_assert(tb_out(&r, "y", i) == x[i]);
			ls_result_free(&r);
		}
		lm_module_free(m);
		tb_free(&t);
	}
}
END_TEST

/* Collect refusals (ls_check_module_each) into a buffer. */
static void add_refusal(void *arg, const char *msg)
{
	lm_buf *b = arg;
	lm_buf_puts(b, msg);
	lm_buf_puts(b, "\n");
}

/*
** The sync_info entries the simulator cannot run are refused by name
** before a run (a mode without the value it needs, a key of an entry or
** of sync_info it does not know); every mode with its value, ids, a
** register threshold and a target core are not.
*/
START_TEST(test_sync_entries_refused)
{
#define SY_NOP(n, si) "{\"opcode\":\"NoOp\",\"name\":\"" n "\"," \
	"\"engine\":\"SP\",\"ins\":[],\"outs\":[],\"sync_info\":" si "}"
	static const char text[] =
		"{\"version\":2,\"arch\":\"gen3\",\"semaphores\":[{\"name\":\"s\","
		"\"init\":0},{\"name\":\"sid\",\"init\":0,\"id\":7}],\"functions\":"
		"[{\"name\":\"f\",\"allocations\":[{\"name\":\"r\",\"kind\":"
		"\"Internal\",\"dtype\":\"int32\",\"tensor_shape\":[1],"
		"\"memorylocations\":[{\"name\":\"r\",\"type\":\"REG\",\"addr\":"
		"0}]}],\"blocks\":[{\"name\":\"b\",\"instructions\":["
		SY_NOP("ok", "{\"on_wait\":[{\"semaphore\":\"s\",\"value\":0,"
		       "\"from\":\"x\"},{\"id\":7,\"wait_value\":0},{\"semaphore\":"
		       "\"s\",\"mode\":\"sem-ge-reg\",\"regref\":\"r\"},{\"id\":2,"
		       "\"mode\":\"evt-set-then-clear\"}],\"on_update\":[{"
		       "\"semaphore\":\"s\"},{\"id\":7,\"mode\":\"sem-add-imm\","
		       "\"update_value\":2},{\"id\":7,\"mode\":\"sem-sub-imm\","
		       "\"update_value\":2},{\"id\":7,\"mode\":\"sem-dec\"},{\"id\":"
		       "7,\"mode\":\"sem-wr-imm\",\"update_value\":2,\"core\":0},"
		       "{\"id\":2,\"mode\":\"evt-set\"}]}") ","
		SY_NOP("a", "{\"on_wait\":[{\"id\":7,\"mode\":\"sem-ge-imm\"}]}")
		","
		SY_NOP("c", "{\"on_update\":[{\"semaphore\":\"s\",\"mode\":"
		       "\"sem-add-imm\"}]}") ","
		SY_NOP("e", "{\"on_update\":[{\"id\":7,\"x_k\":1}]}") ","
		SY_NOP("t", "{\"on_update\":[],\"x_top\":1}")
		"]}]}]}";
	lm_module *m = NULL;
	lm_error err;
	lm_buf b = LM_BUF_INIT;
	const char *why = " is not modelled by the simulator (the simulator "
		"runs every on_wait mode (a sem-ge-imm with its value) and every "
		"on_update mode (add, sub and wr with their value, inc and dec "
		"by 1) but 'invalid'; keys of an entry beyond id / semaphore, "
		"mode, value, regref, from and core are not modelled)\n";
	char *want;
	ck_assert_msg(lm_module_parse(&m, text, strlen(text), "y.json",
				      &err) == 0, "%s", err.msg);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ls_check_module_each(m, add_refusal, &b), 4);
	want = lm_xasprintf(
		"y.json: function f/block b/instruction a: opcode 'NoOp' key "
		"'sync_info' = {\"on_wait\":[{\"id\":7,\"mode\":\"sem-ge-imm\"}]}"
		"%s"
		"y.json: function f/block b/instruction c: opcode 'NoOp' key "
		"'sync_info' = {\"on_update\":[{\"semaphore\":\"s\",\"mode\":"
		"\"sem-add-imm\"}]}%s"
		"y.json: function f/block b/instruction e: opcode 'NoOp' key "
		"'sync_info' = {\"on_update\":[{\"id\":7,\"mode\":\"sem-inc\","
		"\"...\":true}]}%s"
		"y.json: function f/block b/instruction t: opcode 'NoOp' key "
		"'sync_info' = {\"x_top\":1} is not modelled by the simulator "
		"(only its on_wait and on_update lists are modelled)\n",
		why, why, why);
	ck_assert_str_eq(lm_buf_cstr(&b), want);
	free(want);
	lm_buf_free(&b);
	lm_module_free(m);
#undef SY_NOP
}
END_TEST

/*
** What the module, a semaphore, a queue, a queue instance, a function and
** a block carry is refused by name before a run: the Call argument
** binding, unknown keys, a queue's own blocks, a function's second
** spelling of its allocations, a block's arguments (their incoming
** values); each of them verifies.
*/
START_TEST(test_carried_structures_refused)
{
	static const char text[] =
		"{\"version\":2,\"arch\":\"gen3\",\"call_to_physical_memlocs\":"
		"{\"c\":[]},\"semaphores\":[{\"name\":\"s\",\"init\":0,"
		"\"frob\":1}],"
		"\"queues\":[{\"name\":\"q\",\"instances\":[{\"name\":\"qa\","
		"\"semaphore\":\"s\",\"_comment\":\"x\",\"prio\":2}],"
		"\"blocks\":[{\"name\":\"qb\","
		"\"instructions\":[]}]}],\"functions\":[{\"name\":\"f\","
		"\"storages\":[],"
		"\"allocations\":[],\"blocks\":[{\"name\":\"b\",\"arguments\":"
		"[{\"incoming_values\":[]}],\"instructions\":[{\"opcode\":"
		"\"Call\",\"name\":\"c\",\"engine\":\"SP\",\"target\":\"g\","
		"\"ins\":[],\"outs\":[]}]}]},{\"name\":\"g\",\"allocations\":[],"
		"\"blocks\":[{\"name\":\"gb\",\"instructions\":[]}]}]}";
	lm_module *m = NULL;
	lm_error err;
	lm_buf b = LM_BUF_INIT;
	ck_assert_msg(lm_module_parse(&m, text, strlen(text), "c.json",
				      &err) == 0, "%s", err.msg);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ls_check_module_each(m, add_refusal, &b), 6);
	ck_assert_str_eq(lm_buf_cstr(&b),
		"c.json: module: module key 'call_to_physical_memlocs' = "
		"{\"c\":[]} is not modelled by the simulator (binding a call's "
		"arguments to memory locations is not modelled)\n"
		"c.json: semaphore s: semaphore key 'frob' = 1 is not modelled "
		"by the simulator (not a key the simulator knows here)\n"
		"c.json: queue q: queue key 'blocks' = [{\"name\":\"qb\","
		"\"instructions\":[]}] is not modelled by the simulator (a queue's "
		"own blocks (its DMA blocks) are not modelled)\n"
		"c.json: queue q/instance qa: queue instance key 'prio' = 2 is "
		"not modelled by the simulator (not a key the simulator knows "
		"here)\n"
		"c.json: function f: function key 'allocations' = [] is not "
		"modelled by the simulator (not a key the simulator knows "
		"here)\n"
		"c.json: function f/block b: block key 'arguments' = "
		"[{\"incoming_values\":[]}] is not modelled by the simulator "
		"(an argument is modelled with its regref and that register "
		"as every incoming value)\n");
	ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "module key 'call_to_physical_memlocs'");
	lm_buf_free(&b);
	lm_module_free(m);
}
END_TEST

START_TEST(test_unmodelled_object_keys)
{
	tb t;
	lm_error err;
	ls_result r;
	lm_module *m;
	const char *cases[][2] = {
		/* allocation JSON tail, expected message */
		{ ",\"tensor_class\":\"NeuronTensor\"", NULL },
		{ ",\"frob\":1", "function sg0000/allocation zz: allocation key "
		  "'frob' = 1 is not modelled by the simulator" },
		{ ",\"partial_output\":true", "function sg0000/allocation zz: "
		  "allocation key 'partial_output' = true is only meaningful "
		  "on an ExternalOutput (this is Internal)" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char al[600];
		tb_init(&t);
		snprintf(al, sizeof al, "{\"name\":\"zz\",\"kind\":\"Internal\","
			 "\"dtype\":\"float32\",\"tensor_shape\":[1,4],"
			 "\"file\":\"\",\"memorylocations\":[{\"name\":\"zz\","
			 "\"type\":\"DRAM\",\"addr\":4096,\"dims\":[1,16],"
			 "\"bank\":0,\"base\":0,\"allocated\":true}]%s}",
			 cases[c][0]);
		tb_alloc_raw(&t, al);
		tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":"
			"\"SP\"}");
		m = tb_module(&t, 0);
		int rc = tb_run1(m, NULL, 0, 0, NULL, &r, &err);
		if (cases[c][1]) {
			ck_assert_int_eq(rc, LM_EINPUT);
			ck_assert_contains(err.msg, cases[c][1]);
		} else {
			ck_assert_msg(rc == 0, "%s", err.msg);
			ls_result_free(&r);
		}
		lm_module_free(m);
		tb_free(&t);
	}

	/* a memory-location alias edge (to another DRAM location) */
	tb_init(&t);
	tb_alloc_raw(&t, "{\"name\":\"zw\",\"kind\":\"Internal\",\"dtype\":"
		     "\"float32\",\"tensor_shape\":[1,4],\"file\":\"\","
		     "\"memorylocations\":[{\"name\":\"x\",\"type\":\"DRAM\","
		     "\"addr\":64,\"dims\":[1,16],\"bank\":0,\"base\":0}]}");
	tb_alloc_raw(&t, "{\"name\":\"zz\",\"kind\":\"Internal\",\"dtype\":"
		     "\"float32\",\"tensor_shape\":[1,4],\"file\":\"\","
		     "\"memorylocations\":[{\"name\":\"zm\",\"type\":\"DRAM\","
		     "\"addr\":0,\"dims\":[1,16],\"bank\":0,\"base\":0,"
		     "\"allocated\":true,\"tensor_id\":3,\"alias\":[[\"zw\",\"x\","
		     "1]]}]}");
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":\"SP\"}");
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "function sg0000/allocation zz/memory "
			   "location zm: memory location key 'alias' = "
			   "[[\"zw\",\"x\",1]] is not modelled by the simulator");
	lm_module_free(m);
	tb_free(&t);

	/* an operand with an indirect access pattern */
	tb_init(&t);
	tb_io(&t, "float32", "float32", 2, 4);
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
		"\"DVE\",\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":\"xs\","
		"\"memref\":\"xs\",\"offset\":0,\"ap\":[[4,2],[1,4]],\"dtype\":"
		"\"float32\",\"access_shape\":[2,4],\"dynamic_ap_info\":"
		"{\"indirect_dim\":1}}],\"outs\":[%s],\"wait\":[{\"semaphore\":"
		"\"s0\",\"value\":1}]}", AP("ys", "float32", 2, 4, 0));
	tb_io_end(&t, "float32", 2, 4, "cp");
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, (float[8]){0}, 2, 4, NULL, &r, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "instruction cp/operand ins[0]: opcode "
			   "'TensorCopy' operand key 'dynamic_ap_info' = "
			   "{\"indirect_dim\":1} is not modelled by the simulator");
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/*
** A Call carrying operands: the call runs its target, and what operands
** on the call itself would mean is not modelled, so the run is refused
** by instruction and key (ins, outs, any operand kind); the same Call
** without operands runs.
*/
START_TEST(test_call_operands_refused)
{
	static const struct { const char *args, *want; } cases[] = {
		{ "\"ins\":[],\"outs\":[]", NULL },
		{ "\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":\"zs\","
		  "\"memref\":\"zs\",\"offset\":0,\"ap\":[[4,2],[1,4]],"
		  "\"dtype\":\"float32\"}],\"outs\":[]",
		  "key 'ins' = 1 operand (physical_ap 'zs')" },
		{ "\"ins\":[],\"outs\":[{\"kind\":\"physical_ap\","
		  "\"memsetref\":\"zs\",\"memref\":\"zs\",\"offset\":0,"
		  "\"ap\":[[4,2],[1,4]],\"dtype\":\"float32\"},{\"kind\":"
		  "\"imm_value\",\"dtype\":\"float32\",\"value\":1.0}]",
		  "key 'outs' = 2 operands (physical_ap 'zs', ...)" },
		{ "\"ins\":[{\"kind\":\"imm_value\",\"dtype\":\"float32\","
		  "\"value\":2.0}]",
		  "key 'ins' = 1 operand (imm_value)" },
		{ "\"ins\":[{\"kind\":\"symbolic_ap\",\"memsetref\":\"zs\","
		  "\"dtype\":\"float32\"}]",
		  "key 'ins' = 1 operand (symbolic_ap 'zs')" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char *j = lm_xasprintf(
			"{\"version\":2,\"arch\":\"gen3\",\"name\":\"c\","
			"\"attributes\":{\"neuron_core_id\":0},\"semaphores\":[],"
			"\"queues\":[],\"functions\":[{\"name\":\"sg0000\","
			"\"attributes\":[],\"allocations\":[{\"name\":\"zs\","
			"\"kind\":\"Internal\",\"dtype\":\"float32\","
			"\"tensor_shape\":[2,4],\"memorylocations\":[{\"name\":"
			"\"zs\",\"type\":\"SB\",\"addr\":0,\"dims\":[2,16],"
			"\"bank\":0,\"base\":0}]}],\"blocks\":[{\"name\":\"b\","
			"\"instructions\":[{\"opcode\":\"Call\",\"name\":\"c\","
			"\"engine\":\"SP\",\"target\":\"f\",%s}]}]},"
			"{\"name\":\"f\",\"attributes\":[],\"allocations\":[],"
			"\"blocks\":[{\"name\":\"b\",\"instructions\":[{"
			"\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":\"SP\"}"
			"]}]}]}", cases[c].args);
		lm_module *m = NULL;
		lm_error err;
		ls_result r;
		char want[400];
		int rc;
		ck_assert_msg(lm_module_parse(&m, j, strlen(j), "c.json",
					      &err) == 0, "%s", err.msg);
		ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
		rc = ls_run(m, NULL, NULL, &r, &err);
		if (!cases[c].want) {
			ck_assert_msg(rc == 0, "%s", err.msg);
			ls_result_free(&r);
		} else {
			snprintf(want, sizeof want, "c.json: function sg0000/"
				 "block b/instruction c: opcode 'Call' %s is "
				 "not modelled by the simulator (a Call runs "
				 "its target on the tensors the target names; "
				 "operands on the call itself are not "
				 "modelled)", cases[c].want);
			ck_assert_int_eq(rc, LM_EINPUT);
			ck_assert_str_eq(err.msg, want);
		}
		lm_module_free(m);
		free(j);
	}
}
END_TEST

/* ---- external outputs no instruction (fully) wrote ---------------------- */

START_TEST(test_unwritten_output_refused)
{
	tb t;
	ls_result r;
	lm_error err;
	lm_module *m;
	const ls_tensor *y;

	/* y is never written */
	tb_init(&t);
	tb_dram(&t, "y", "ExternalOutput", "float32", 2, 4);
	tb_inst(&t, "{\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":\"SP\"}");
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "tb-core0.json: function sg0000/allocation "
			   "y: external output 'y' is not fully written: "
			   "element [0, 0] (flat index 0) was never written "
			   "(8 of 8 elements unwritten");
	lm_module_free(m);
	tb_free(&t);

	/* only its first row: the first hole is [1, 0] */
	tb_init(&t);
	tb_io(&t, "float32", "float32", 2, 4);
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"wait\":[{\"semaphore\":"
		"\"s0\",\"value\":1}]}", AP("xs", "float32", 2, 4, 0),
		AP("ys", "float32", 2, 4, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"cp\"]}", AP("ys", "float32", 1, 4, 0),
		AP("y", "float32", 1, 4, 0));
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, (float[8]){0}, 2, 4, NULL, &r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "external output 'y' is not fully written: "
			   "element [1, 0] (flat index 4) was never written (4 "
			   "of 8 elements unwritten");
	lm_module_free(m);
	tb_free(&t);

	/* the same with "partial_output": true: the hole reads 0xff bytes */
	tb_init(&t);
	tb_alloc_raw(&t, "{\"name\":\"y\",\"kind\":\"ExternalOutput\","
		     "\"dtype\":\"float32\",\"tensor_shape\":[2,4],\"file\":"
		     "\"\",\"partial_output\":true,\"memorylocations\":[{"
		     "\"name\":\"y\",\"type\":\"DRAM\",\"addr\":0,\"dims\":"
		     "[2,16],\"bank\":0,\"base\":0,\"allocated\":true}]}");
	tb_dram(&t, "x", "ExternalInput", "float32", 2, 4);
	tb_sb(&t, "xs", "float32", 2, 4);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", 2, 4, 0), AP("xs", "float32", 2, 4, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":1}]}",
		AP("xs", "float32", 1, 4, 0), AP("y", "float32", 1, 4, 0));
	m = tb_module(&t, 0);
	ck_assert_msg(tb_run1(m, (float[8]){1, 2, 3, 4, 5, 6, 7, 8}, 2, 4, NULL,
			      &r, &err) == 0, "%s", err.msg);
	y = ls_tensors_find(&r.outputs, "y");
	ck_assert_ptr_nonnull(y);
	ck_assert_same_f(tb_out(&r, "y", 3), 4.0f);
	for (int i = 4; i < 8; i++)
		ck_assert_uint_eq(((const uint32_t *)y->data)[i], 0xffffffffu);
	ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/* A rank above 64: the first hole's index is computed over every
** dimension (not read from uninitialized stack). */
START_TEST(test_unwritten_output_high_rank)
{
	tb t;
	ls_result r;
	lm_error err;
	lm_module *m;
	lm_buf shape = LM_BUF_INIT, want = LM_BUF_INIT;

	lm_buf_puts(&shape, "2,4");
	lm_buf_puts(&want, "element [1, 0");
	for (int d = 2; d < 66; d++) {
		lm_buf_puts(&shape, ",1");
		lm_buf_puts(&want, ", 0");
	}
	lm_buf_puts(&want, "] (flat index 4) was never written (4 of 8 "
		    "elements unwritten");
	char *y = lm_xasprintf("{\"name\":\"y\",\"kind\":\"ExternalOutput\","
		"\"dtype\":\"float32\",\"tensor_shape\":[%s],\"file\":"
		"\"\",\"memorylocations\":[{\"name\":\"y\",\"type\":"
		"\"DRAM\",\"addr\":0,\"dims\":[2,16],\"bank\":0,\"base\":"
		"0,\"allocated\":true}]}", lm_buf_cstr(&shape));
	tb_init(&t);
	tb_alloc_raw(&t, y);
	free(y);
	tb_dram(&t, "x", "ExternalInput", "float32", 2, 4);
	tb_sb(&t, "xs", "float32", 2, 4);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", 2, 4, 0), AP("xs", "float32", 2, 4, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":1}]}",
		AP("xs", "float32", 1, 4, 0), AP("y", "float32", 1, 4, 0));
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, (float[8]){0}, 2, 4, NULL, &r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "external output 'y' is not fully written: ");
	ck_assert_contains(err.msg, lm_buf_cstr(&want));
	lm_module_free(m);
	tb_free(&t);
	lm_buf_free(&shape);
	lm_buf_free(&want);
}
END_TEST

/* ---- the matmul kernel variants ----------------------------------------- */

/* The k-ordered fmaf chain per element, acc [M] rows ldc apart. */
static void mm_ref(int K, int M, int N, const float *st, const float *mv,
		   float *acc, int ldc)
{
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++)
			for (int k = 0; k < K; k++)
				acc[m * ldc + n] = fmaf(st[k * M + m],
							mv[k * N + n],
							acc[m * ldc + n]);
}

/* src [K][W] -> rows ld elements apart, the gap filled with NaN (a
** kernel that read it would give NaN); float32 (es 4) or bfloat16. */
static void *mm_strided(const void *src, int K, int W, int ld, int es)
{
	uint8_t *p = malloc((size_t)es * K * ld);
	const uint16_t nan16 = 0x7fc0;
	const float nan32 = NAN;
	for (int k = 0; k < K; k++)
		for (int j = 0; j < ld; j++)
			memcpy(p + (size_t)es * (k * ld + j), j < W ?
			       (const uint8_t *)src + (size_t)es * (k * W + j) :
			       es == 4 ? (const void *)&nan32 :
			       (const void *)&nan16, (size_t)es);
	return p;
}

START_TEST(test_mm_kernel_variants_identical)
{
	/* every variant this CPU runs (the generic one always) gives the
	** reference's bits, on shapes cut at every block edge (6x16, 4x16,
	** 4x64) and at every step of the bfloat16 widening (16, 8, 4, 1),
	** float32 and bfloat16 operands, rows of each operand contiguous or
	** apart by more than their width, into an accumulator whose rows are
	** apart by more than N (PSUM rows; the gap stays as is) */
	static const int shapes[][3] = {
		{128, 128, 512}, {3, 5, 17}, {128, 7, 100}, {1, 128, 1},
		{64, 130, 65}, {9, 6, 16}, {5, 13, 47}, {2, 1, 70},
		{7, 11, 129}, {33, 67, 31}, {17, 3, 95},
	};
	int n_run = 0;
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int K = shapes[s][0], M = shapes[s][1], N = shapes[s][2];
		int ldc = N + 3, lda = M + 5, ldb = N + 7;
		float *st = malloc(sizeof(float) * K * M);
		float *mv = malloc(sizeof(float) * K * N);
		float *stb = malloc(sizeof(float) * K * M);
		float *mvb = malloc(sizeof(float) * K * N);
		uint16_t *st16 = malloc(2 * (size_t)K * M);
		uint16_t *mv16 = malloc(2 * (size_t)K * N);
		float *c0 = malloc(sizeof(float) * M * ldc);
		float *c1 = malloc(sizeof(float) * M * ldc);
		float *ref = malloc(sizeof(float) * M * ldc);
		float *ref16 = malloc(sizeof(float) * M * ldc);
		void *sts, *mvs, *st16s, *mv16s;
		tb_fill(st, K * M, 11);
		tb_fill(mv, K * N, 12);
		tb_fill(c0, M * ldc, 13);
		for (int i = 0; i < K * M; i++)
			stb[i] = lm_bf16_to_f32(st16[i] = lm_f32_to_bf16(st[i]));
		for (int i = 0; i < K * N; i++)
			mvb[i] = lm_bf16_to_f32(mv16[i] = lm_f32_to_bf16(mv[i]));
		sts = mm_strided(st, K, M, lda, 4);
		mvs = mm_strided(mv, K, N, ldb, 4);
		st16s = mm_strided(st16, K, M, lda, 2);
		mv16s = mm_strided(mv16, K, N, ldb, 2);
		memcpy(ref, c0, sizeof(float) * M * ldc);
		mm_ref(K, M, N, st, mv, ref, ldc);
		memcpy(ref16, c0, sizeof(float) * M * ldc);
		mm_ref(K, M, N, stb, mvb, ref16, ldc);
		for (int v = 0; ls_mm_kernel_variant(v); v++) {
			const struct {
				ls_mm_src a, b;
				const float *want;
			} runs[3] = {
				{ { st16, M, 1 }, { mv16, N, 1 }, ref16 },
				{ { st16s, lda, 1 }, { mv16s, ldb, 1 }, ref16 },
				{ { sts, lda, 0 }, { mvs, ldb, 0 }, ref },
			};
			if (ls_mm_kernel_force(ls_mm_kernel_variant(v)) != 0)
				continue; /* this CPU lacks it */
			n_run++;
			ck_assert_str_eq(ls_mm_kernel_name(),
					 ls_mm_kernel_variant(v));
			for (int r = 0; r < 3; r++) {
				memcpy(c1, c0, sizeof(float) * M * ldc);
				ls_mm_kernel_ld(K, M, N, &runs[r].a, &runs[r].b,
						c1, ldc);
				ck_assert_msg(memcmp(c1, runs[r].want,
						     sizeof(float) * M * ldc)
					      == 0, "kernel %s differs for %s "
					      "%dx%dx%d (operand rows %s)",
					      ls_mm_kernel_name(), r < 2 ?
					      "bfloat16" : "float32", K, M, N,
					      r ? "apart" : "contiguous");
			}
			/* float32 through the plain entry point, rows N apart,
			   into a buffer of exactly M x N (an overrun is a
			   sanitizer's or valgrind's error) */
			float *cx = malloc(sizeof(float) * M * N);
			for (int m = 0; m < M; m++)
				memcpy(cx + m * N, c0 + m * ldc,
				       sizeof(float) * N);
			ls_mm_kernel(K, M, N, st, mv, cx);
			for (int m = 0; m < M; m++)
				ck_assert_msg(memcmp(cx + m * N, ref + m * ldc,
						     sizeof(float) * N) == 0,
					      "kernel %s differs for %dx%dx%d",
					      ls_mm_kernel_name(), K, M, N);
			free(cx);
		}
		ls_mm_kernel_force(NULL);
		free(st);
		free(mv);
		free(stb);
		free(mvb);
		free(st16);
		free(mv16);
		free(sts);
		free(mvs);
		free(st16s);
		free(mv16s);
		free(c0);
		free(c1);
		free(ref);
		free(ref16);
	}
	ck_assert_int_ge(n_run, 11); /* the generic one, on every shape */
}
END_TEST

START_TEST(test_mm_kernel_dispatch)
{
	/* automatic choice: the first listed variant this CPU runs; the
	** generic one is last and always runs; an unknown name or a variant
	** the CPU lacks is refused and changes nothing */
	const char *first = NULL, *last = NULL;
	for (int v = 0; ls_mm_kernel_variant(v); v++) {
		const char *name = ls_mm_kernel_variant(v);
		if (!first && ls_mm_kernel_force(name) == 0)
			first = name;
		last = name;
	}
	ck_assert_str_eq(last, "generic");
	ck_assert_ptr_nonnull(first);
	ck_assert_int_eq(ls_mm_kernel_force(NULL), 0);
	ck_assert_str_eq(ls_mm_kernel_name(), first);
	ck_assert_int_eq(ls_mm_kernel_force("generic"), 0);
	ck_assert_str_eq(ls_mm_kernel_name(), "generic");
	ck_assert_int_eq(ls_mm_kernel_force("avx9000"), -1);
	ck_assert_str_eq(ls_mm_kernel_name(), "generic");
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	ck_assert_int_eq(ls_mm_kernel_force("avx512"),
			 __builtin_cpu_supports("avx512f") ? 0 : -1);
	ck_assert_int_eq(ls_mm_kernel_force("avx2"),
			 __builtin_cpu_supports("avx2") &&
			 __builtin_cpu_supports("fma") ? 0 : -1);
#endif
	ls_mm_kernel_force(NULL);
}
END_TEST

/*
** A Matmult accumulating into PSUM while another engine writes its
** accumulator (what = 0) or its moving operand (what = 1) before it
** completes: the result is the one read at its start (reads at start,
** write at completion), under every kernel variant.
*/
START_TEST(test_matmult_region_written_in_flight)
{
	enum { P = 4, F = 128 };
	for (int what = 0; what < 2; what++) {
		tb t;
		ls_result r;
		lm_module *mod;
		float x[P * F];
		tb_fill(x, P * F, 21 + what);
		tb_init(&t);
		tb_io(&t, "float32", "float32", P, F);
		tb_psum(&t, "acc", P, F, 1);
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"w0\","
			"\"engine\":\"DVE\",\"ins\":[%s],\"outs\":[%s],\"wait\":"
			"[{\"semaphore\":\"s0\",\"value\":1}]}",
			AP("xs", "float32", P, F, 0), AP("acc", "float32", P, F, 0));
		/* 576 PE cycles (240 ns) against the 68-cycle (57 ns) Memset
		** on Pool, both started when w0 completes */
		tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm\",\"engine\":"
			"\"PE\",\"ins\":[%s,%s],\"outs\":[%s],\"start_tensor_calc\":"
			"false,\"dependencies\":[\"w0\"]}",
			APS("xs", "float32", P, P, 0, F),
			AP("xs", "float32", P, F, 0), AP("acc", "float32", P, F, 0));
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"w1\",\"engine\":\"Pool\",\"outs\":[%s],\"constant\":7,"
			"\"dependencies\":[\"w0\"]}",
			APS(what ? "xs" : "acc", "float32", P, 4, 8, F));
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\","
			"\"engine\":\"DVE\",\"ins\":[%s],\"outs\":[%s],"
			"\"dependencies\":[\"mm\",\"w1\"]}",
			AP("acc", "float32", P, F, 0), AP("ys", "float32", P, F, 0));
		tb_io_end(&t, "float32", P, F, "ev");
		mod = tb_module(&t, 0);
		for (int v = 0; ls_mm_kernel_variant(v); v++) {
			lm_error err;
			if (ls_mm_kernel_force(ls_mm_kernel_variant(v)) != 0)
				continue;
			ck_assert_msg(tb_run1(mod, x, P, F, NULL, &r, &err) == 0,
				      "run: %s", err.msg);
			for (int m = 0; m < P; m++)
				for (int n = 0; n < F; n++) {
					float acc = x[m * F + n];
					for (int k = 0; k < P; k++)
						acc = fmaf(x[k * F + m],
							   x[k * F + n], acc);
					ck_assert_same_f(tb_out(&r, "y",
								m * F + n),
							 acc);
				}
			ls_result_free(&r);
		}
		ls_mm_kernel_force(NULL);
		lm_module_free(mod);
		tb_free(&t);
	}
}
END_TEST

/* ---- the compact SB / PSUM layout and in-place Matmult operands ---------- */

/* An SB allocation [parts, free] float32 at byte addr of every partition. */
static void sb_at(tb *t, const char *name, int parts, int free, int addr)
{
	char buf[600];
	snprintf(buf, sizeof buf, "{\"name\":\"%s\",\"kind\":\"Internal\","
		 "\"dtype\":\"float32\",\"tensor_shape\":[%d,%d],\"file\":\"\","
		 "\"memorylocations\":[{\"name\":\"%s\",\"type\":\"SB\","
		 "\"addr\":%d,\"dims\":[%d,%d],\"bank\":0,\"base\":0,"
		 "\"allocated\":true}]}", name, parts, free, name, addr, parts,
		 free * 4);
	tb_alloc_raw(t, buf);
}

START_TEST(test_layout_far_apart_addresses)
{
	/* tensors near both ends of the SB partition and in the last PSUM
	** bank: values right, and messages name arch addresses */
	tb t;
	ls_result r;
	const char *msg;
	float x[16];
	for (int i = 0; i < 16; i++)
		x[i] = (float)i - 5.5f;
	tb_init(&t);
	tb_io(&t, "float32", "float32", 4, 4);
	sb_at(&t, "hi", 4, 4, 229376 - 16);   /* the last 16 bytes */
	sb_at(&t, "mid", 4, 4, 100000);
	tb_psum(&t, "acc", 4, 4, 7);
	tb_inst(&t, "{\"opcode\":\"TensorScalar\","
		"\"reverse0\":false,\"reverse1\":false,\"name\":\"ts\",\"engine\":"
		"\"DVE\",\"op0\":\"mult\",\"const0\":2,\"op1\":\"add\","
		"\"const1\":0.5,\"ins\":[%s],\"outs\":[%s],\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":1}]}", AP("xs", "float32", 4, 4, 0),
		AP("hi", "float32", 4, 4, 0));
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":[\"ts\"]}",
		AP("hi", "float32", 4, 4, 0), AP("acc", "float32", 4, 4, 0));
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":[\"cp\"]}",
		AP("acc", "float32", 4, 4, 0), AP("ys", "float32", 4, 4, 0));
	tb_io_end(&t, "float32", 4, 4, "ev");
	run_ok(&t, x, 4, 4, &r);
	for (int i = 0; i < 16; i++)
		ck_assert(tb_out(&r, "y", i) == x[i] * 2.0f + 0.5f);
	ls_result_free(&r);
	tb_free(&t);

	/* reading never-written bytes far up the partition */
	tb_init(&t);
	tb_io(&t, "float32", "float32", 4, 4);
	sb_at(&t, "hi", 4, 4, 229376 - 16);
	sb_at(&t, "mid", 4, 4, 100000);
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s]}",
		"{\"kind\":\"physical_ap\",\"memsetref\":\"hi\",\"memref\":\"hi\","
		"\"offset\":1,\"ap\":[[4,3],[1,3]],\"dtype\":\"float32\"}",
		APS("mid", "float32", 3, 3, 0, 4));
	msg = run_err(&t, x, 4, 4);
	ck_assert_contains(msg, "instruction cp");
	ck_assert_contains(msg, "ins[0] 'hi' (SB partition 0, byte 229364)");
	tb_free(&t);
}
END_TEST

START_TEST(test_matmul_operand_paths)
{
	/* moving operand strided (every other column: gathered), stationary
	** contiguous (read in place); bfloat16 and float32; then moving
	** partly never written: the error, and NaN with can_read_uninit */
	enum { K = 8, M = 4, N = 6, F = 2 * N + M };
	const char *dts[2] = { "float32", "bfloat16" };
	for (int d = 0; d < 2; d++) {
		tb t;
		ls_result r;
		float x[K * F];
		char mv_ap[300];
		const char *dt = dts[d];
		tb_fill(x, K * F, 5 + d);
		for (int i = 0; i < K * F; i++)
			x[i] = lm_round_to(lm_dtype_parse(dt), x[i]);
		snprintf(mv_ap, sizeof mv_ap, "{\"kind\":\"physical_ap\","
			 "\"memsetref\":\"xs\",\"memref\":\"xs\",\"offset\":%d,"
			 "\"ap\":[[%d,%d],[2,%d]],\"dtype\":\"%s\"}", M, F, K, N,
			 dt);
		tb_init(&t);
		tb_dram(&t, "x", "ExternalInput", dt, K, F);
		tb_dram(&t, "y", "ExternalOutput", "float32", M, N);
		tb_sb(&t, "xs", dt, K, F);
		tb_sb(&t, "ys", "float32", M, N);
		tb_psum(&t, "acc", M, N, 3);
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":"
			"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
			AP("x", dt, K, F, 0), AP("xs", dt, K, F, 0));
		tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm\",\"engine\":"
			"\"PE\",\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":"
			"\"xs\",\"memref\":\"xs\",\"offset\":0,\"ap\":[[%d,%d],"
			"[1,%d]],\"dtype\":\"%s\"},%s],\"outs\":[%s],"
			"\"start_tensor_calc\":true,\"dependencies\":[\"ld\"]}",
			F, K, M, dt, mv_ap, AP("acc", "float32", M, N, 0));
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\","
			"\"engine\":\"Activation\",\"ins\":[%s],\"outs\":[%s],"
			"\"dependencies\":[\"mm\"]}", AP("acc", "float32", M, N, 0),
			AP("ys", "float32", M, N, 0));
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":"
			"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
			"\"dependencies\":[\"ev\"]}", AP("ys", "float32", M, N, 0),
			AP("y", "float32", M, N, 0));
		run_ok(&t, x, K, F, &r);
		for (int m = 0; m < M; m++)
			for (int n = 0; n < N; n++) {
				float acc = 0.0f;
				for (int k = 0; k < K; k++)
					acc = fmaf(x[k * F + m],
						   x[k * F + M + 2 * n], acc);
				ck_assert_same_f(tb_out(&r, "y", m * N + n), acc);
			}
		ls_result_free(&r);
		tb_free(&t);
	}
	/* the stationary operand partly never written (in-place check fails,
	** the gather reports it), then allowed: NaN in the rows it reaches */
	for (int allow = 0; allow < 2; allow++) {
		tb t;
		ls_result r;
		float x[16];
		tb_fill(x, 16, 9);
		tb_init(&t);
		tb_io(&t, "float32", "float32", 4, 4);
		sb_at(&t, "st", 4, 4, 4096);
		tb_psum(&t, "acc", 4, 4, 0);
		/* only partitions 0..1 of st are written */
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"w\",\"engine\":"
			"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"wait\":[{"
			"\"semaphore\":\"s0\",\"value\":1}]}",
			AP("xs", "float32", 2, 4, 0), AP("st", "float32", 2, 4, 0));
		tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm\",\"engine\":"
			"\"PE\",\"ins\":[%s,%s],\"outs\":[%s],\"start_tensor_calc\":"
			"true,\"dependencies\":[\"w\"]%s}",
			AP("st", "float32", 4, 4, 0), AP("xs", "float32", 4, 4, 0),
			AP("acc", "float32", 4, 4, 0),
			allow ? ",\"can_read_uninit\":true" : "");
		tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\",\"engine\":"
			"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
			"[\"mm\"]}", AP("acc", "float32", 4, 4, 0),
			AP("ys", "float32", 4, 4, 0));
		tb_io_end(&t, "float32", 4, 4, "ev");
		if (!allow) {
			const char *msg = run_err(&t, x, 4, 4);
			ck_assert_contains(msg, "instruction mm");
			ck_assert_contains(msg, "ins[0] 'st' (SB partition 2, "
					   "byte 4096)");
		} else {
			run_ok(&t, x, 4, 4, &r);
			for (int i = 0; i < 16; i++)
				ck_assert(isnan(tb_out(&r, "y", i)));
			ls_result_free(&r);
		}
		tb_free(&t);
	}
}
END_TEST

/* ---- simulated memory --------------------------------------------------- */

/*
** The library refuses a run whose simulated memory is over the limit
** before allocating it: a 2^40-element tensor, a 2^40-byte DRAM location
** and a small opts.max_memory give LM_EINPUT (not an abort), with the
** allocation named; ls_check_memory counts matmul1 exactly.
*/
START_TEST(test_run_memory_limit)
{
	char *path = tu_srcpath("examples/matmul1/def.json");
	lm_module *m;
	lm_alloc *x;
	lm_error err;
	ls_result r;
	ls_options o;
	int64_t shape[2], dims[2];

	ck_assert_msg(lm_module_load(&m, path, &err) == 0, "%s", err.msg);
	x = &m->functions[0].allocs[0];
	ck_assert_str_eq(x->name, "x");
	ck_assert_int_eq(ls_check_memory(&m, 1, 0, &err), 0);
	ck_assert_int_eq(ls_check_memory(&m, 1, 689664, &err), 0);
	ck_assert_int_eq(ls_check_memory(&m, 1, 689663, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "the run needs 689664 bytes of simulated "
			   "memory in all");

	memset(&o, 0, sizeof o);
	o.max_memory = 100000;
	ck_assert_int_eq(ls_run(m, NULL, &o, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "def.json: x: the allocation needs 196608 "
			   "bytes of simulated memory");
	ck_assert_contains(err.msg, "over the memory limit of 100000 bytes");

	memcpy(shape, x->tensor_shape, sizeof shape);
	x->tensor_shape[0] = x->tensor_shape[1] = (int64_t)1 << 20;
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "x: the allocation needs 13194139533312 "
			   "bytes of simulated memory");
	ck_assert_contains(err.msg, "limit of 4294967296 bytes");
	x->tensor_shape[0] = x->tensor_shape[1] = (int64_t)1 << 40;
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "x: the size of the allocation overflows "
			   "int64");
	memcpy(x->tensor_shape, shape, sizeof shape);

	memcpy(dims, x->memlocs[0].dims, sizeof dims);
	x->memlocs[0].dims[0] = x->memlocs[0].dims[1] = (int64_t)1 << 20;
	ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "x: the allocation needs 2199023321088 "
			   "bytes");
	memcpy(x->memlocs[0].dims, dims, sizeof dims);
	ck_assert_int_eq(ls_check_memory(&m, 1, 0, &err), 0);
	lm_module_free(m);
	free(path);
}
END_TEST

/*
** The simulator lays an operand out from the verifier's geometry
** (lm_arg_geometry): an access past its memory location's bytes, still
** inside the SBUF partition, is the verifier's refusal and, in a run of
** the unverified module, a fault with the same words -- not a write into
** the neighbouring allocation.
*/
START_TEST(test_operand_geometry_shared)
{
	char *path = tu_srcpath("examples/matmul1/def.json");
	const char *what = "element range 1..64 (float32) outside memory "
			   "location 'y_sb' (256 bytes per partition)";
	lm_module *m;
	lm_inst *act = NULL;
	ls_tensors in = { 0, NULL };
	lm_error err;
	ls_result r;
	lm_block *bl;

	ck_assert_msg(lm_module_load(&m, path, &err) == 0, "%s", err.msg);
	bl = &m->functions[0].blocks[0];
	for (int i = 0; i < bl->n_insts; i++)
		if (!strcmp(bl->insts[i].name, "act"))
			act = &bl->insts[i];
	ck_assert_ptr_nonnull(act);
	ck_assert_str_eq(act->outs[0].memsetref, "y_sb");
	ck_assert_int_eq(ls_make_inputs(&m, 1, NULL, 1, &in, &err), 0);
	ck_assert_msg(ls_run(m, &in, NULL, &r, &err) == 0, "%s", err.msg);
	ls_result_free(&r);
	act->outs[0].offset = 1;
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, what);
	ck_assert_int_ne(ls_run(m, &in, NULL, &r, &err), 0);
	ck_assert_contains(err.msg, "instruction act");
	ck_assert_contains(err.msg, what);
	ls_tensors_free(&in);
	lm_module_free(m);
	free(path);
}
END_TEST

/* The host file name of a tensor: '%', '/', backslash and control bytes
** escaped as %XX, one plain component, too long refused. */
START_TEST(test_tensor_file_names)
{
	static const char *const cases[][2] = {
		{ "x", "x.npy" },
		{ "a/b", "a%2Fb.npy" },
		{ "a_b", "a_b.npy" },
		{ "a%2Fb", "a%252Fb.npy" },
		{ "../../etc/x", "..%2F..%2Fetc%2Fx.npy" },
		{ "/abs", "%2Fabs.npy" },
		{ "..", "...npy" },
		{ "w\\v\n\x7f", "w%5Cv%0A%7F.npy" },
		{ "layer:0 (out)", "layer:0 (out).npy" },
	};
	char *f, long_name[260];
	lm_error err;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ck_assert_int_eq(ls_tensor_file_name(&f, cases[i][0], "D",
						     &err), 0);
		ck_assert_str_eq(f, cases[i][1]);
		free(f);
	}
	/* 251 bytes + ".npy" = 255: the longest file name */
	memset(long_name, 'n', 251);
	long_name[251] = 0;
	ck_assert_int_eq(ls_tensor_file_name(&f, long_name, "D", &err), 0);
	ck_assert_int_eq(strlen(f), 255);
	free(f);
	long_name[250] = '/';
	ck_assert_int_eq(ls_tensor_file_name(&f, long_name, "D", &err),
			 LM_EINPUT);
	ck_assert(f == NULL);
	ck_assert_contains(err.msg, "D: tensor 'nnn");
	ck_assert_contains(err.msg, "': its file name would be 257 bytes "
			   "(at most 255)");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("semantics");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_matmul_three_k_tiles_f32);
	tcase_add_test(tc, test_matmul_bf16_inputs_and_bf16_result);
	tcase_add_test(tc, test_matmul_f8_inputs);
	tcase_add_test(tc, test_matmul_psum_bank_boundary_rejected);
	tcase_add_test(tc, test_transpose_nan_inf_bit_exact);
	tcase_add_test(tc, test_matmul_onezero);
	tcase_add_test(tc, test_transpose_identity_check_fails);
	tcase_add_test(tc, test_activation_functions);
	tcase_add_test(tc, test_activation_scale_bias);
	tcase_add_test(tc, test_tensortensor_ops);
	tcase_add_test(tc, test_tensorscalar_reverse);
	tcase_add_test(tc, test_memset_bf16_rounding);
	tcase_add_test(tc, test_iota_and_affine_select);
	tcase_add_test(tc, test_uninit_read_error_and_allowed);
	tcase_add_loop_test(tc, test_unexecuted_opcode_refused, 0,
			    sizeof op_cases / sizeof *op_cases);
	tcase_add_test(tc, test_mm_kernel_variants_identical);
	tcase_add_test(tc, test_mm_kernel_dispatch);
	tcase_add_test(tc, test_matmult_region_written_in_flight);
	tcase_add_test(tc, test_layout_far_apart_addresses);
	tcase_add_test(tc, test_matmul_operand_paths);
	suite_add_tcase(s, tc);
	tc = tcase_create("memory");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_memory_limit);
	tcase_add_test(tc, test_operand_geometry_shared);
	suite_add_tcase(s, tc);
	tc = tcase_create("host_io");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tensor_file_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("refuse");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_unmodelled_key_refused, 0,
			    (int)(sizeof key_cases / sizeof *key_cases));
	tcase_add_test(tc, test_alpha_modelled_for_lrelu);
	tcase_add_loop_test(tc, test_table_key_notes, 0,
			    sizeof note_cases / sizeof *note_cases);
	tcase_add_test(tc, test_default_in_extra_allowed);
	tcase_add_test(tc, test_simcheck_tables);
	tcase_add_test(tc, test_doc_key_table);
	tcase_add_test(tc, test_unmodelled_object_keys);
	tcase_add_test(tc, test_carried_structures_refused);
	tcase_add_test(tc, test_sync_entries_refused);
	tcase_add_test(tc, test_partition_step_refused);
	tcase_add_test(tc, test_call_operands_refused);
	tcase_add_test(tc, test_unwritten_output_refused);
	tcase_add_test(tc, test_unwritten_output_high_rank);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

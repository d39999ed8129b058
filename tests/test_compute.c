/*
** test_compute.c -- the compute instructions of docs/semantics.md against
** values computed in the test (by hand, or by a plain loop written here
** and sharing nothing with sim/): the order of each fold, the dtype each
** step is rounded to, NaN / Inf / -0, and each refusal with its message.
*/
#include "common.h"
#include "testutil.h"
#include "dtype.h"
#include "arch.h"
#include "sim.h"
#include "simcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the harness -------------------------------------------------------- */

/*
** x [P, F] (float32 host data, stored as in_dt) is loaded into SB xs; one
** TensorReduce reads xs through the access pattern pairs `pairs` (JSON
** text of its "ap", e.g. "[[8,2],[1,8]]") and writes ys [P, R] (out_dt),
** which is stored into the output y. keys: the instruction's op-specific
** keys as JSON members. Returns ls_run's status; on success y holds the
** P * R outputs as float32.
*/
static int reduce_run(const char *in_dt, const char *out_dt, int P, int F,
		      int R, const char *pairs, const char *keys,
		      const float *x, float *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	int rc;

	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", in_dt, P, F);
	tb_dram(&t, "y", "ExternalOutput", out_dt, P, R);
	tb_sb(&t, "xs", in_dt, P, F);
	tb_sb(&t, "ys", out_dt, P, R);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", in_dt, P, F, 0), AP("xs", in_dt, P, F, 0));
	tb_inst(&t, "{\"opcode\":\"TensorReduce\",\"name\":\"red\",\"engine\":"
		"\"DVE\",\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":"
		"\"xs\",\"memref\":\"xs\",\"offset\":0,\"ap\":%s,\"dtype\":"
		"\"%s\"}],\"outs\":[%s],%s,\"wait\":[{\"semaphore\":\"s0\","
		"\"value\":1}]}", pairs, in_dt, AP("ys", out_dt, P, R, 0),
		keys);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"red\"]}", AP("ys", out_dt, P, R, 0), AP("y", out_dt, P, R, 0));
	m = tb_module(&t, 0);
	rc = tb_run1(m, x, P, F, NULL, &r, err);
	if (rc == 0) {
		for (int i = 0; i < P * R; i++)
			y[i] = tb_out(&r, "y", i);
		ls_result_free(&r);
	}
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* reduce_run over [P, F] along X (one output per partition). */
static void reduce_x(const char *keys, int P, int F, const float *x,
		     float *y)
{
	char pairs[64];
	lm_error err;
	snprintf(pairs, sizeof pairs, "[[%d,%d],[1,%d]]", F, P, F);
	ck_assert_msg(reduce_run("float32", "float32", P, F, 1, pairs, keys,
				 x, y, &err) == 0, "run: %s", err.msg);
}

/* ---- Activation: the affine step ---------------------------------------- */

/*
** y = Identity(x * scale + bias) over one partition of F elements, bias
** set by a Memset to `bias` (JSON text, so that -0.0 can be given).
*/
static void act_affine(const float *x, int F, const char *scale,
		       const char *bias, float *y)
{
	tb t;
	ls_result r;
	lm_module *m;
	lm_error err;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 1, F);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, F);
	tb_sb(&t, "xs", "float32", 1, F);
	tb_sb(&t, "ys", "float32", 1, F);
	tb_sb(&t, "bias", "float32", 1, 1);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", 1, F, 0), AP("xs", "float32", 1, F, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"mb\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":%s}",
		AP("bias", "float32", 1, 1, 0), bias);
	tb_inst(&t, "{\"opcode\":\"Activation\",\"acc\":\"Idle\",\"alpha\":0.0,"
		"\"op0\":\"bypass\",\"op1\":\"bypass\",\"reduce_op\":\"bypass\","
		"\"name\":\"act\",\"engine\":\"Activation\",\"ins\":[%s,%s],"
		"\"outs\":[%s],\"func\":\"Identity\",\"scale\":%s,\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":1}],\"dependencies\":[\"mb\"]}",
		AP("xs", "float32", 1, F, 0), AP("bias", "float32", 1, 1, 0),
		AP("ys", "float32", 1, F, 0), scale);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"act\"]}", AP("ys", "float32", 1, F, 0),
		AP("y", "float32", 1, F, 0));
	m = tb_module(&t, 0);
	ck_assert_msg(tb_run1(m, x, 1, F, NULL, &r, &err) == 0, "%s", err.msg);
	for (int i = 0; i < F; i++)
		y[i] = tb_out(&r, "y", i);
	ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
}

/*
** The product is rounded before the bias is added: (1 + 2^-12)^2 =
** 1 + 2^-11 + 2^-24 rounds (a tie, to even) to 1 + 2^-11, and - 1 leaves
** 2^-11; a fused multiply-add would give 2^-11 + 2^-24. A -0 bias keeps
** -0 * 1 at -0, a +0 bias makes it +0.
*/
START_TEST(test_activation_mul_then_add)
{
	float x[3] = { 1.0f + 0x1p-12f, -0.0f, 0.0f }, y[3];
	act_affine(x, 1, "1.000244140625", "-1", y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(0x1p-11f));
	ck_assert_uint_ne(tb_bits(y[0]),
			  tb_bits(fmaf(x[0], 1.0f + 0x1p-12f, -1.0f)));
	act_affine(x + 1, 2, "1.0", "-0.0", y);
	ck_assert_uint_eq(tb_bits(y[0]), 0x80000000u);
	ck_assert_uint_eq(tb_bits(y[1]), 0x00000000u);
	act_affine(x + 1, 2, "1.0", "0.0", y);
	ck_assert_uint_eq(tb_bits(y[0]), 0x00000000u);
}
END_TEST

/* ---- TensorReduce: hand-computed cases ---------------------------------- */

/*
** add folds left to right from the first element, in float32:
** 1e8 + 1 = 1e8 (the spacing there is 8), - 1e8 = 0, + 1 = 1; pairwise
** summation would give 0 and a sum in double 2. A row of -0 sums to -0
** (the fold starts at the first element, not at +0).
*/
START_TEST(test_reduce_add_order)
{
	float x[3 * 4] = {
		1e8f, 1.0f, -1e8f, 1.0f,
		-0.0f, -0.0f, -0.0f, -0.0f,
		INFINITY, 1.0f, -INFINITY, 2.0f,
	};
	float y[3];
	reduce_x("\"op\":\"add\",\"axis\":\"X\"", 3, 4, x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(1.0f));
	ck_assert_uint_eq(tb_bits(y[1]), 0x80000000u);
	ck_assert(isnan(y[2])); /* inf + -inf */
}
END_TEST

/*
** max / min: a NaN anywhere in the row gives NaN (the first NaN met);
** on a tie the later element wins, so max(+0, -0) = -0, max(-0, +0) = +0.
*/
START_TEST(test_reduce_max_min_nan_zero)
{
	const float nan = NAN;
	float x[4 * 3] = {
		1.0f, nan, 3.0f,
		0.0f, -0.0f, -1.0f,
		-0.0f, 0.0f, -1.0f,
		-INFINITY, -5.0f, -INFINITY,
	};
	float y[4];
	reduce_x("\"op\":\"max\",\"axis\":\"X\"", 4, 3, x, y);
	ck_assert(isnan(y[0]));
	ck_assert_uint_eq(tb_bits(y[1]), 0x80000000u);
	ck_assert_uint_eq(tb_bits(y[2]), 0x00000000u);
	ck_assert_uint_eq(tb_bits(y[3]), tb_bits(-5.0f));
	reduce_x("\"op\":\"min\",\"axis\":\"X\"", 4, 3, x, y);
	ck_assert(isnan(y[0]));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(-1.0f));
	ck_assert_uint_eq(tb_bits(y[3]), tb_bits(-INFINITY));
}
END_TEST

/* negate flips the folded value's sign bit, a NaN's and a zero's too. */
START_TEST(test_reduce_negate)
{
	float x[3 * 2] = { 1.0f, 2.0f, NAN, 1.0f, 0.0f, 0.0f };
	float y[3];
	reduce_x("\"op\":\"add\",\"axis\":\"X\",\"negate\":true", 3, 2, x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(-3.0f));
	ck_assert_uint_eq(tb_bits(y[1]), 0xffc00000u); /* -(qNaN) */
	ck_assert_uint_eq(tb_bits(y[2]), 0x80000000u);
}
END_TEST

/*
** average: the first element divided by n, then each further element
** times 1/n (both float32) added. Ten ones: 1/10 = 0x3dcccccd, and nine
** additions of it end at 0x3f800001, one ulp above 1 -- a sum divided by
** n would give exactly 1.
*/
START_TEST(test_reduce_average)
{
	float x[2 * 10], y[2];
	for (int i = 0; i < 10; i++) {
		x[i] = 1.0f;
		x[10 + i] = (float)(i + 1);
	}
	reduce_x("\"op\":\"average\",\"axis\":\"X\"", 2, 10, x, y);
	ck_assert_uint_eq(tb_bits(y[0]), 0x3f800001u);
	/* 1..10: exact steps 0.1f * k summed, against the same chain here */
	{
		float acc = 1.0f / 10.0f;
		for (int i = 1; i < 10; i++)
			acc = acc + 0.1f * (float)(i + 1);
		ck_assert_uint_eq(tb_bits(y[1]), tb_bits(acc));
	}
}
END_TEST

/*
** The fold runs in float32 and only its result is rounded to the output
** dtype: 1 + 2^-8 + 2^-8 = 1 + 2^-7 is a bfloat16; rounding each step to
** bfloat16 would give 1 (1 + 2^-8 is a tie, to even).
*/
START_TEST(test_reduce_rounds_once)
{
	float x[3] = { 1.0f, 0x1p-8f, 0x1p-8f };
	float y[1];
	lm_error err;
	ck_assert_msg(reduce_run("float32", "bfloat16", 1, 3, 1,
				 "[[3,1],[1,3]]", "\"op\":\"add\",\"axis\":"
				 "\"X\"", x, y, &err) == 0, "run: %s", err.msg);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(1.0f + 0x1p-7f));
}
END_TEST

/* ---- TensorReduce: a plain reference, randomized ------------------------ */

/* float32 fold of n values in the order the docs give, written afresh. */
static float ref_fold(const char *op, const float *v, int n)
{
	float acc = v[0];
	if (!strcmp(op, "average"))
		acc = acc / (float)n;
	for (int j = 1; j < n; j++) {
		float b = v[j];
		if (!strcmp(op, "add"))
			acc = acc + b;
		else if (!strcmp(op, "subtract"))
			acc = acc - b;
		else if (!strcmp(op, "mult"))
			acc = acc * b;
		else if (!strcmp(op, "max") || !strcmp(op, "min")) {
			/* NaN sticks; otherwise the later one unless the
			   earlier is strictly greater (max) / less (min) */
			int keep = !strcmp(op, "max") ? acc > b : acc < b;
			if (!isnan(acc) && (isnan(b) || !keep))
				acc = b;
		}
		else
			acc = acc + (1.0f / (float)n) * b;
	}
	return acc;
}

static const char *const fold_ops[] = {
	"add", "subtract", "mult", "max", "min", "average",
};

/*
** x [P, A*B*C] walked as [P][A][B][C]; axis X gives [P, A*B] outputs,
** XY [P, A], XYZ [P, 1], each against ref_fold over the reduced block.
** Values in [-2, 2) with some NaN, -0 and ties planted.
*/
START_TEST(test_reduce_random)
{
	enum { P = 8, A = 3, B = 4, C = 5, F = A * B * C };
	const char *op = fold_ops[_i];
	static const char *const axes[] = { "X", "XY", "XYZ" };
	static const int per[] = { C, B * C, A * B * C };
	float x[P * F], y[P * F], v[F];
	char pairs[96], keys[96];
	lm_error err;

	tb_fill(x, P * F, 11 + (uint32_t)_i);
	x[7] = NAN;
	x[F + 3] = -0.0f;
	x[F + 4] = 0.0f;
	x[2 * F + 1] = x[2 * F + 2];
	snprintf(pairs, sizeof pairs, "[[%d,%d],[%d,%d],[%d,%d],[1,%d]]", F,
		 P, B * C, A, C, B, C);
	for (int k = 0; k < 3; k++) {
		int n = per[k], R = F / n;
		snprintf(keys, sizeof keys, "\"op\":\"%s\",\"axis\":\"%s\"", op,
			 axes[k]);
		ck_assert_msg(reduce_run("float32", "float32", P, F, R, pairs,
					 keys, x, y, &err) == 0, "%s %s: %s",
			      op, axes[k], err.msg);
		for (int p = 0; p < P; p++)
			for (int r = 0; r < R; r++) {
				memcpy(v, x + p * F + r * n, sizeof(float) * n);
				ck_assert_same_f(y[p * R + r],
						 ref_fold(op, v, n));
			}
	}
}
END_TEST

/* ---- TensorReduce: refusals ---------------------------------------------- */

/* The module the reduce_run harness makes, checked only (no run). */
static int reduce_check(const char *keys, lm_error *err)
{
	tb t;
	lm_module *m;
	int rc;
	tb_init(&t);
	tb_sb(&t, "xs", "float32", 2, 4);
	tb_sb(&t, "ys", "float32", 2, 1);
	tb_inst(&t, "{\"opcode\":\"TensorReduce\",\"name\":\"red\",\"engine\":"
		"\"Pool\",\"ins\":[%s],\"outs\":[%s],%s}",
		AP("xs", "float32", 2, 4, 0), AP("ys", "float32", 2, 1, 0), keys);
	m = tb_module(&t, 0);
	rc = ls_check_module(m, err);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

static const struct { const char *keys, *want; } reduce_refusals[] = {
	{ "\"op\":\"add\",\"axis\":\"XYZW\"", "opcode 'TensorReduce' key "
	  "'axis' = \"XYZW\" is not modelled by the simulator (the free-axis "
	  "lists X, XY and XYZ are modelled; a reduction across partitions is "
	  "not)" },
	{ "\"op\":\"add\",\"axis\":\"C\"", "opcode 'TensorReduce' key 'axis' "
	  "= \"C\" is not modelled" },
	{ "\"op\":\"pow\",\"axis\":\"X\"", "opcode 'TensorReduce' key 'op' = "
	  "\"pow\" is not modelled by the simulator (TensorReduce folds with "
	  "add, subtract, mult, max, min and average)" },
	{ "\"op\":\"bitwise_and\",\"axis\":\"X\"", "key 'op' = "
	  "\"bitwise_and\" is not modelled" },
	{ "\"op\":\"add\",\"axis\":\"X\",\"negate\":{\"kind\":\"AffExprKind\","
	  "\"terms\":[],\"c\":1}", "opcode 'TensorReduce' key 'negate' = "
	  "{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":1} is not modelled by "
	  "the simulator (affine expressions are not modelled)" },
	{ "\"op\":\"add\",\"axis\":\"X\",\"apply_transpose\":1",
	  "opcode 'TensorReduce' key 'apply_transpose' = true is not modelled "
	  "by the simulator (the partition transpose before the reduction is "
	  "not modelled)" },
};

START_TEST(test_reduce_refused)
{
	lm_error err;
	ck_assert_int_eq(reduce_check(reduce_refusals[_i].keys, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, reduce_refusals[_i].want);
	ck_assert_contains(err.msg, "instruction red");
}
END_TEST

/* The modelled forms pass the check (negate at either value). */
START_TEST(test_reduce_accepted)
{
	lm_error err;
	ck_assert_msg(reduce_check("\"op\":\"max\",\"axis\":\"X\",\"negate\":"
				   "true", &err) == 0, "%s", err.msg);
	ck_assert_msg(reduce_check("\"op\":\"min\",\"axis\":\"XY\","
				   "\"negate\":1", &err) == 0, "%s", err.msg);
	ck_assert_msg(reduce_check("\"op\":\"average\",\"axis\":\"XYZ\","
				   "\"negate\":false,\"apply_transpose\":false",
				   &err) == 0, "%s", err.msg);
}
END_TEST

/* Errors at run time: the data and shapes the fold does not take. */
START_TEST(test_reduce_run_errors)
{
	float x[2 * 4] = {0}, y[8];
	lm_error err;
	/* an output that is not one element per reduced row */
	ck_assert_int_eq(reduce_run("float32", "float32", 2, 4, 2,
				    "[[4,2],[1,4]]", "\"op\":\"add\",\"axis\":"
				    "\"X\"", x, y, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "outs[0] must hold the 2 reduced elements "
			   "over 2 partitions (ins[0] reduces 4 elements each), "
			   "got 4 over 2");
	/* XY of a [P, F] pattern would fold the partitions */
	ck_assert_int_eq(reduce_run("float32", "float32", 2, 4, 1,
				    "[[4,2],[1,4]]", "\"op\":\"add\",\"axis\":"
				    "\"XY\"", x, y, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "axis 'XY' reduces 2 free dimensions; "
			   "ins[0] has 1");
}
END_TEST

/*
** A TensorReduce of SB tensor xs (dtype dt, [2, 4], set to 1 by a Memset
** first when set) into ys [2, 1], run; the run's status.
*/
static int reduce_sb(const char *dt, int set, lm_error *err)
{
	tb t;
	lm_module *m;
	ls_result r;
	int rc;
	tb_init(&t);
	tb_sb(&t, "xs", dt, 2, 4);
	tb_sb(&t, "ys", "float32", 2, 1);
	if (set)
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\","
			"\"name\":\"ms\",\"engine\":\"Pool\",\"outs\":[%s],"
			"\"value\":1}", AP("xs", dt, 2, 4, 0));
	tb_inst(&t, "{\"opcode\":\"TensorReduce\",\"name\":\"red\",\"engine\":"
		"\"Pool\",\"ins\":[%s],\"outs\":[%s],\"op\":\"add\",\"axis\":"
		"\"X\"%s}", AP("xs", dt, 2, 4, 0), AP("ys", "float32", 2, 1, 0),
		set ? ",\"dependencies\":[\"ms\"]" : "");
	m = tb_module(&t, 0);
	rc = tb_run1(m, NULL, 0, 0, NULL, &r, err);
	if (rc == 0)
		ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* Integer data is refused at run time; never-written input is an error
** naming the operand. */
START_TEST(test_reduce_int_uninit)
{
	lm_error err;
	ck_assert_int_eq(reduce_sb("float32", 1, &err), 0);
	ck_assert_int_eq(reduce_sb("int32", 1, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "instruction red: integer data (int32 to "
			   "float32) is not modelled (TensorReduce)");
	ck_assert_int_eq(reduce_sb("float32", 0, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "reads uninitialized memory: ins[0]");
}
END_TEST

/*
** The cost streams the input: a TensorReduce of [2, 64] on DVE keeps it
** busy 64 + elem_fixed cycles (one per input element of a partition),
** not 1 + elem_fixed (its output's).
*/
START_TEST(test_reduce_cost)
{
	tb t;
	lm_module *m;
	ls_result r;
	lm_error err;
	const lm_arch *a = lm_arch_get("gen3");
	tb_init(&t);
	tb_sb(&t, "xs", "float32", 2, 64);
	tb_sb(&t, "ys", "float32", 2, 1);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"m\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":1}",
		AP("xs", "float32", 2, 64, 0));
	tb_inst(&t, "{\"opcode\":\"TensorReduce\",\"name\":\"red\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"op\":\"add\",\"axis\":"
		"\"X\",\"dependencies\":[\"m\"]}", AP("xs", "float32", 2, 64, 0),
		AP("ys", "float32", 2, 1, 0));
	m = tb_module(&t, 0);
	ck_assert_msg(tb_run1(m, NULL, 0, 0, NULL, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(r.cores[0].busy_ps[LM_ENG_DVE - LM_ENG_PE],
			 lm_arch_cycles_ps(a, LM_ENG_DVE,
					   64 + a->elem_fixed[LM_ENG_DVE]));
	ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/* ---- TensorScalarPtr ---------------------------------------------------- */

/*
** x [P, F + 2] is loaded into SB xs: columns 0..F-1 the data, column F
** the scalar s0, column F + 1 the scalar s1. One TensorScalarPtr reads
** the data, ins[1] = column F and (when three) ins[2] = column F + 1,
** writes ys [P, F] (out_dt), stored into y. keys: op-specific members.
*/
static int tsp_run(const char *out_dt, int P, int F, int three,
		   const char *keys, const float *x, float *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	int W = F + 2, rc;
	char data[200], s0[200], s1[200];

	snprintf(data, sizeof data, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":0,\"ap\":[[%d,%d],[1,%d]],"
		 "\"dtype\":\"float32\"}", W, P, F);
	snprintf(s0, sizeof s0, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":%d,\"ap\":[[%d,%d],[1,1]],"
		 "\"dtype\":\"float32\"}", F, W, P);
	snprintf(s1, sizeof s1, ",{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":%d,\"ap\":[[%d,%d],[1,1]],"
		 "\"dtype\":\"float32\"}", F + 1, W, P);
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", P, W);
	tb_dram(&t, "y", "ExternalOutput", out_dt, P, F);
	tb_sb(&t, "xs", "float32", P, W);
	tb_sb(&t, "ys", out_dt, P, F);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", P, W, 0), AP("xs", "float32", P, W, 0));
	tb_inst(&t, "{\"opcode\":\"TensorScalarPtr\",\"name\":\"tsp\","
		"\"engine\":\"DVE\",\"ins\":[%s,%s%s],\"outs\":[%s],%s,"
		"\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]}", data, s0,
		three ? s1 : "", AP("ys", out_dt, P, F, 0), keys);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"tsp\"]}", AP("ys", out_dt, P, F, 0), AP("y", out_dt, P, F, 0));
	m = tb_module(&t, 0);
	rc = tb_run1(m, x, P, W, NULL, &r, err);
	if (rc == 0) {
		for (int i = 0; i < P * F; i++)
			y[i] = tb_out(&r, "y", i);
		ls_result_free(&r);
	}
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

static void tsp_ok(const char *out_dt, int P, int F, int three,
		   const char *keys, const float *x, float *y)
{
	lm_error err;
	ck_assert_msg(tsp_run(out_dt, P, F, three, keys, x, y, &err) == 0,
		      "run: %s", err.msg);
}

/*
** Each step is rounded to float32 before the next: (1 + 2^-24) * 3 is
** 1 * 3 = 3 (1 + 2^-24 is a tie, to even), where one rounding of the
** exact value would give 3 + 2^-22. The scalars are per partition.
*/
START_TEST(test_tsp_step_rounding)
{
	float x[2 * 4] = {
		1.0f, 2.0f, 0x1p-24f, 3.0f,
		1.0f, -1.0f, 0.5f, 4.0f,
	};
	float y[4];
	tsp_ok("float32", 2, 2, 1, "\"op0\":\"add\",\"reverse0\":false,"
	       "\"op1\":\"mult\",\"reverse1\":false", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(3.0f));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(6.0f));  /* 2 + 2^-24 = 2 */
	ck_assert_uint_eq(tb_bits(y[2]), tb_bits(6.0f));  /* (1+.5)*4 */
	ck_assert_uint_eq(tb_bits(y[3]), tb_bits(-2.0f)); /* (-1+.5)*4 */
}
END_TEST

/* reverseN puts the scalar first: s1 / (s0 - x); the scalars are taken
** per partition. */
START_TEST(test_tsp_reverse)
{
	float x[2 * 4] = {
		4.0f, 1.0f, 1.0f, 6.0f,
		4.0f, 10.0f, 10.0f, -3.0f,
	};
	float y[4];
	tsp_ok("float32", 2, 2, 1, "\"op0\":\"subtract\",\"reverse0\":true,"
	       "\"op1\":\"divide\",\"reverse1\":true", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(-2.0f));     /* 6 / (1 - 4) */
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(INFINITY));  /* 6 / +0 */
	ck_assert_uint_eq(tb_bits(y[2]), tb_bits(-0.5f));     /* -3 / 6 */
	ck_assert_uint_eq(tb_bits(y[3]), tb_bits(-INFINITY)); /* -3 / +0 */
}
END_TEST

/* -0, Inf and NaN through both steps (IEEE in each). */
START_TEST(test_tsp_specials)
{
	const float nan = NAN, inf = INFINITY;
	float x[3 * 5] = {
		-0.0f, 1.0f, 0.0f, -0.0f, -1.0f,
		1.0f, inf, -inf, 0.0f, 0.0f,
		2.0f, nan, -5.0f, nan, 1.0f,
	};
	float y[9];
	/* (x + s0) * s1 */
	tsp_ok("float32", 3, 3, 1, "\"op0\":\"add\",\"reverse0\":false,"
	       "\"op1\":\"mult\",\"reverse1\":false", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), 0x00000000u); /* (-0 + -0) * -1 */
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(-1.0f));
	ck_assert_uint_eq(tb_bits(y[2]), 0x80000000u); /* (0 + -0) * -1 */
	ck_assert_uint_eq(tb_bits(y[3]), 0x00000000u); /* 1 * 0 */
	ck_assert(isnan(y[4]) && isnan(y[5]));         /* +-inf * 0 */
	for (int i = 6; i < 9; i++)
		ck_assert(isnan(y[i]));                /* x + NaN */
	/* min(max(x, s0), s1): a NaN scalar gives that NaN */
	tsp_ok("float32", 3, 3, 1, "\"op0\":\"max\",\"reverse0\":false,"
	       "\"op1\":\"min\",\"reverse1\":false", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(-1.0f));
	ck_assert_uint_eq(tb_bits(y[4]), 0x00000000u); /* min(inf, 0) */
	ck_assert_uint_eq(tb_bits(y[5]), 0x00000000u); /* min(max(-inf, 0), 0) */
	for (int i = 6; i < 9; i++)
		ck_assert(isnan(y[i]));
}
END_TEST

/*
** The two steps stay in float32; only the result is rounded to the
** output dtype: (1 + 2^-8) + 2^-8 = 1 + 2^-7 in bfloat16, where rounding
** after the first step would give 1 (a tie, to even).
*/
START_TEST(test_tsp_rounds_once)
{
	float x[1 * 3] = { 1.0f, 0x1p-8f, 0x1p-8f };
	float y[1];
	tsp_ok("bfloat16", 1, 1, 1, "\"op0\":\"add\",\"reverse0\":false,"
	       "\"op1\":\"add\",\"reverse1\":false", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(1.0f + 0x1p-7f));
}
END_TEST

/* One scalar (two inputs): op1 must be bypass. */
START_TEST(test_tsp_one_scalar)
{
	float x[2 * 3] = { 3.0f, 2.0f, 0.0f, 5.0f, 3.0f, 0.0f };
	float y[2];
	lm_error err;
	tsp_ok("float32", 2, 1, 0, "\"op0\":\"subtract\",\"reverse0\":false,"
	       "\"op1\":\"bypass\",\"reverse1\":false", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(1.0f));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(2.0f));
	ck_assert_int_eq(tsp_run("float32", 2, 1, 0, "\"op0\":\"subtract\","
				 "\"reverse0\":false,\"op1\":\"mult\","
				 "\"reverse1\":false", x, y, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "instruction tsp: op1 'mult' has no "
			   "scalar: ins[2] is missing (TensorScalarPtr)");
}
END_TEST

/* Plain reference: one ALU step, as docs/simulator.md lists the ops. */
static float ref_alu(const char *op, float a, float b)
{
	if (!strcmp(op, "add"))
		return a + b;
	if (!strcmp(op, "subtract"))
		return a - b;
	if (!strcmp(op, "mult"))
		return a * b;
	if (!strcmp(op, "divide"))
		return a / b;
	if (!strcmp(op, "max"))
		return isnan(a) || isnan(b) ? (isnan(a) ? a : b) : a > b ? a : b;
	if (!strcmp(op, "min"))
		return isnan(a) || isnan(b) ? (isnan(a) ? a : b) : a < b ? a : b;
	return a; /* bypass */
}

static const struct { const char *op0, *op1; int rev0, rev1; } tsp_ops[] = {
	{ "subtract", "mult", 0, 0 },   /* softmax: (x - max) * 1/sum */
	{ "subtract", "divide", 0, 0 },
	{ "add", "max", 1, 0 },
	{ "subtract", "min", 1, 1 },
	{ "mult", "add", 0, 1 },
	{ "divide", "subtract", 1, 1 },
};

/* Random data and per-partition scalars against ref_alu twice. */
START_TEST(test_tsp_random)
{
	enum { P = 16, F = 24, W = F + 2 };
	float x[P * W], y[P * F];
	char keys[160];
	tb_fill(x, P * W, 40 + (uint32_t)_i);
	x[5] = NAN;
	x[W + F] = 0.0f;        /* a zero divisor */
	x[2 * W + F] = -0.0f;
	snprintf(keys, sizeof keys, "\"op0\":\"%s\",\"reverse0\":%s,\"op1\":"
		 "\"%s\",\"reverse1\":%s", tsp_ops[_i].op0,
		 tsp_ops[_i].rev0 ? "true" : "false", tsp_ops[_i].op1,
		 tsp_ops[_i].rev1 ? "true" : "false");
	tsp_ok("float32", P, F, 1, keys, x, y);
	for (int p = 0; p < P; p++) {
		float s0 = x[p * W + F], s1 = x[p * W + F + 1];
		for (int f = 0; f < F; f++) {
			float v = x[p * W + f], t;
			t = tsp_ops[_i].rev0 ? ref_alu(tsp_ops[_i].op0, s0, v)
					     : ref_alu(tsp_ops[_i].op0, v, s0);
			t = tsp_ops[_i].rev1 ? ref_alu(tsp_ops[_i].op1, s1, t)
					     : ref_alu(tsp_ops[_i].op1, t, s1);
			ck_assert_same_f(y[p * F + f], t);
		}
	}
}
END_TEST

/* The keys of the other forms, refused by name before time 0; the two
** tensor datapaths only alone and with every other form's key at its
** default. */
static const struct { const char *kv, *want; } tsp_refusals[] = {
	{ "\"acc\":\"ZeroAccumulate\"", "key 'acc' = \"ZeroAccumulate\" is not "
	  "modelled by the simulator (it models only \"Idle\")" },
	{ "\"is_tensor_scalar_addr\":true", "key 'is_tensor_scalar_addr' = true "
	  "is not modelled" },
	{ "\"apply_transpose\":true", "key 'apply_transpose' = true is not "
	  "modelled" },
	{ "\"negate_second_output\":true", "key 'negate_second_output' = true "
	  "is not modelled" },
	{ "\"is_scalar_tensor_tensor\":true,\"is_tensor_tensor_scan\":true",
	  "key 'is_tensor_tensor_scan' = true is not modelled by the simulator "
	  "(it is modelled alone; with is_scalar_tensor_tensor also true the "
	  "datapath is not defined)" },
	{ "\"is_scalar_tensor_tensor\":true,\"is_tensor_scalar_addr\":true",
	  "key 'is_tensor_scalar_addr' = true is not modelled" },
	{ "\"is_tensor_tensor_scan\":true,\"is_tensor_scalar_addr\":1",
	  "key 'is_tensor_scalar_addr' = 1 is not modelled" },
	{ "\"is_scalar_tensor_tensor\":true,\"apply_transpose\":true",
	  "key 'apply_transpose' = true is not modelled" },
	{ "\"is_tensor_tensor_scan\":true,\"apply_transpose\":true",
	  "key 'apply_transpose' = true is not modelled" },
	{ "\"is_scalar_tensor_tensor\":true,\"negate_second_output\":true",
	  "key 'negate_second_output' = true is not modelled" },
	{ "\"is_tensor_tensor_scan\":true,\"negate_second_output\":true",
	  "key 'negate_second_output' = true is not modelled" },
	{ "\"is_scalar_tensor_tensor\":true,\"acc\":\"AddAccumulate\"",
	  "key 'acc' = \"AddAccumulate\" is not modelled" },
	{ "\"is_tensor_tensor_scan\":true,\"acc\":\"ZeroAccumulate\"",
	  "key 'acc' = \"ZeroAccumulate\" is not modelled" },
	{ "\"reverse0\":{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":1}",
	  "key 'reverse0' = {\"kind\":\"AffExprKind\",\"terms\":[],\"c\":1} is "
	  "not modelled by the simulator (affine expressions are not "
	  "modelled)" },
};

static int tsp_check(const char *kv, lm_error *err)
{
	tb t;
	lm_module *m;
	char keys[300];
	int rc;
	/* kv replaces a default key or adds one */
	snprintf(keys, sizeof keys, "%s%s%s%s%s",
		 strncmp(kv, "\"op0\"", 5) ? "\"op0\":\"add\"," : "",
		 strncmp(kv, "\"reverse0\"", 10) ? "\"reverse0\":false," : "",
		 "\"op1\":\"bypass\",\"reverse1\":false", *kv ? "," : "", kv);
	tb_init(&t);
	tb_sb(&t, "xs", "float32", 2, 4);
	tb_sb(&t, "sc", "float32", 2, 1);
	tb_sb(&t, "ys", "float32", 2, 4);
	tb_inst(&t, "{\"opcode\":\"TensorScalarPtr\",\"name\":\"tsp\","
		"\"engine\":\"DVE\",\"ins\":[%s,%s],\"outs\":[%s],%s}",
		AP("xs", "float32", 2, 4, 0), AP("sc", "float32", 2, 1, 0),
		AP("ys", "float32", 2, 4, 0), keys);
	m = tb_module(&t, 0);
	rc = ls_check_module(m, err);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

START_TEST(test_tsp_refused)
{
	lm_error err;
	ck_assert_int_eq(tsp_check(tsp_refusals[_i].kv, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "instruction tsp: opcode "
			   "'TensorScalarPtr' ");
	ck_assert_contains(err.msg, tsp_refusals[_i].want);
}
END_TEST

START_TEST(test_tsp_accepted)
{
	lm_error err;
	ck_assert_msg(tsp_check("", &err) == 0, "%s", err.msg);
	ck_assert_msg(tsp_check("\"acc\":\"Idle\",\"apply_transpose\":false,"
				"\"is_tensor_scalar_addr\":0", &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(tsp_check("\"is_scalar_tensor_tensor\":true,"
				"\"is_tensor_tensor_scan\":false,\"acc\":"
				"\"Idle\"", &err) == 0, "%s", err.msg);
	ck_assert_msg(tsp_check("\"is_tensor_tensor_scan\":true,"
				"\"is_scalar_tensor_tensor\":0,"
				"\"apply_transpose\":false", &err) == 0,
		      "%s", err.msg);
}
END_TEST

/* Shapes and data the two steps do not take stop the run. */
START_TEST(test_tsp_run_errors)
{
	tb t;
	lm_module *m;
	ls_result r;
	lm_error err;
	static const struct { const char *sdt, *sap, *want; } c[] = {
		{ "float32", "[[2,2],[1,2]]", "ins[1] must be [2, 1]: one "
		  "scalar per partition of ins[0] (got 4 elements over 2 "
		  "partitions)" },
		{ "int32", "[[2,2],[1,1]]", "integer data (ins[1] int32, "
		  "outs[0] float32) is not modelled" },
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		tb_init(&t);
		tb_sb(&t, "xs", "float32", 2, 4);
		tb_sb(&t, "sc", c[i].sdt, 2, 2);
		tb_sb(&t, "ys", "float32", 2, 4);
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"m1\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":1}",
			AP("xs", "float32", 2, 4, 0));
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"m2\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":1}",
			AP("sc", c[i].sdt, 2, 2, 0));
		tb_inst(&t, "{\"opcode\":\"TensorScalarPtr\",\"name\":\"tsp\","
			"\"engine\":\"DVE\",\"ins\":[%s,{\"kind\":\"physical_ap\","
			"\"memsetref\":\"sc\",\"memref\":\"sc\",\"offset\":0,"
			"\"ap\":%s,\"dtype\":\"%s\"}],\"outs\":[%s],\"op0\":"
			"\"add\",\"reverse0\":false,\"op1\":\"bypass\","
			"\"reverse1\":false,\"dependencies\":[\"m1\",\"m2\"]}",
			AP("xs", "float32", 2, 4, 0), c[i].sap, c[i].sdt,
			AP("ys", "float32", 2, 4, 0));
		m = tb_module(&t, 0);
		ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err),
				 LM_ECHECK);
		ck_assert_contains(err.msg, c[i].want);
		lm_module_free(m);
		tb_free(&t);
	}
}
END_TEST

/* ---- TensorScalarPtr: scalar_tensor_tensor and tensor_tensor_scan ------- */

/*
** x [P, 2F + 1] is loaded into SB xs: columns 0..F-1 the data (ins[0]),
** columns F..2F-1 the second tensor, column 2F the value per partition.
** scan 0: is_scalar_tensor_tensor, ins = [data, column 2F, tensor];
** scan 1: is_tensor_tensor_scan, ins = [data, tensor, column 2F]. ys [P, F]
** (out_dt) is stored into y. tap / pap replace the access pattern of the
** tensor / the per-partition operand when not NULL; two leaves out the
** third input.
*/
static int tt_run(int scan, const char *out_dt, int P, int F,
		  const char *keys, const char *tap, const char *pap, int two,
		  const float *x, float *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	int W = 2 * F + 1, rc;
	char data[200], ten[200], per[200], tapd[40], papd[40];

	snprintf(tapd, sizeof tapd, "[[%d,%d],[1,%d]]", W, P, F);
	snprintf(papd, sizeof papd, "[[%d,%d],[1,1]]", W, P);
	snprintf(data, sizeof data, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":0,\"ap\":[[%d,%d],[1,%d]],"
		 "\"dtype\":\"float32\"}", W, P, F);
	snprintf(ten, sizeof ten, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":%d,\"ap\":%s,"
		 "\"dtype\":\"float32\"}", F, tap ? tap : tapd);
	snprintf(per, sizeof per, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":%d,\"ap\":%s,"
		 "\"dtype\":\"float32\"}", 2 * F, pap ? pap : papd);
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", P, W);
	tb_dram(&t, "y", "ExternalOutput", out_dt, P, F);
	tb_sb(&t, "xs", "float32", P, W);
	tb_sb(&t, "ys", out_dt, P, F);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", P, W, 0), AP("xs", "float32", P, W, 0));
	tb_inst(&t, "{\"opcode\":\"TensorScalarPtr\",\"name\":\"tsp\","
		"\"engine\":\"DVE\",\"ins\":[%s,%s%s%s],\"outs\":[%s],\"%s\":"
		"true,%s,\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]}", data,
		scan ? ten : per, two ? "" : ",", two ? "" : scan ? per : ten,
		AP("ys", out_dt, P, F, 0), scan ? "is_tensor_tensor_scan"
		: "is_scalar_tensor_tensor", keys);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"tsp\"]}", AP("ys", out_dt, P, F, 0), AP("y", out_dt, P, F, 0));
	m = tb_module(&t, 0);
	rc = tb_run1(m, x, P, W, NULL, &r, err);
	if (rc == 0) {
		for (int i = 0; i < P * F; i++)
			y[i] = tb_out(&r, "y", i);
		ls_result_free(&r);
	}
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

static void tt_ok(int scan, const char *out_dt, int P, int F,
		  const char *keys, const float *x, float *y)
{
	lm_error err;
	ck_assert_msg(tt_run(scan, out_dt, P, F, keys, NULL, NULL, 0, x, y,
			     &err) == 0, "run: %s", err.msg);
}

static void rev_keys(char *k, size_t n, const char *op0, const char *op1,
		     int rev)
{
	snprintf(k, n, "\"op0\":\"%s\",\"reverse0\":%s,\"op1\":\"%s\","
		 "\"reverse1\":%s", op0, rev & 1 ? "true" : "false", op1,
		 rev & 2 ? "true" : "false");
}

/*
** scalar_tensor_tensor, op0 subtract, op1 divide, each reverse flag
** (loop index: bit 0 reverse0, bit 1 reverse1). Partition 0: data 5, 3,
** s0 1, data1 2, 8; partition 1: data 1, -2, s0 4, data1 3, 3.
*/
START_TEST(test_stt_reverse)
{
	static const float want[4][4] = {
		{ 2.0f, 0.25f, -1.0f, -2.0f },   /* (d - s0) / d1 */
		{ -2.0f, -0.25f, 1.0f, 2.0f },   /* (s0 - d) / d1 */
		{ 0.5f, 4.0f, -1.0f, -0.5f },    /* d1 / (d - s0) */
		{ -0.5f, -4.0f, 1.0f, 0.5f },    /* d1 / (s0 - d) */
	};
	float x[2 * 5] = {
		5.0f, 3.0f, 2.0f, 8.0f, 1.0f,
		1.0f, -2.0f, 3.0f, 3.0f, 4.0f,
	};
	float y[4];
	char keys[160];
	rev_keys(keys, sizeof keys, "subtract", "divide", _i);
	tt_ok(0, "float32", 2, 2, keys, x, y);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(tb_bits(y[i]), tb_bits(want[_i][i]));
}
END_TEST

/*
** scalar_tensor_tensor keeps float32 between the steps and rounds once:
** (1 + 2^-8) * 3 = 3 + 3 * 2^-8 is bfloat16 3.015625 (the nearer of 3 and
** 3 + 2^-6); rounding 1 + 2^-8 to bfloat16 first (a tie, to even: 1)
** would give 3.
*/
START_TEST(test_stt_bf16_once)
{
	float x[1 * 3] = { 1.0f, 3.0f, 0x1p-8f };
	float y[1];
	tt_ok(0, "bfloat16", 1, 1, "\"op0\":\"add\",\"reverse0\":false,"
	      "\"op1\":\"mult\",\"reverse1\":false", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(3.015625f));
}
END_TEST

/*
** tensor_tensor_scan, op0 subtract, op1 divide, each reverse flag (bit 0
** reverse0, bit 1 reverse1): initial 4, data0 2, 0, 3, data1 1, 2, 2;
** partition 1 with initial 1, data0 0, 0, 0, data1 1, 1, 1.
*/
START_TEST(test_tts_reverse)
{
	static const float want[4][6] = {
		/* r = (d0 - r) / d1 */
		{ -2.0f, 1.0f, 1.0f, -1.0f, 1.0f, -1.0f },
		/* r = (r - d0) / d1 */
		{ 2.0f, 1.0f, -1.0f, 1.0f, 1.0f, 1.0f },
		/* r = d1 / (d0 - r) */
		{ -0.5f, 4.0f, -2.0f, -1.0f, 1.0f, -1.0f },
		/* r = d1 / (r - d0) */
		{ 0.5f, 4.0f, 2.0f, 1.0f, 1.0f, 1.0f },
	};
	float x[2 * 7] = {
		2.0f, 0.0f, 3.0f, 1.0f, 2.0f, 2.0f, 4.0f,
		0.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f,
	};
	float y[6];
	char keys[160];
	rev_keys(keys, sizeof keys, "subtract", "divide", _i);
	tt_ok(1, "float32", 2, 3, keys, x, y);
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(tb_bits(y[i]), tb_bits(want[_i][i]));
}
END_TEST

/*
** The scan carries its running value in float32, rounding only what it
** writes: initial 1, data0 2^-8, 2^-8, 0 added, data1 0 added. r goes
** 1 + 2^-8 (written as bfloat16 1, a tie to even), 1 + 2^-7, 1 + 2^-7;
** carrying the rounded bfloat16 value would give 1, 1, 1.
*/
START_TEST(test_tts_f32_carry)
{
	float x[1 * 7] = { 0x1p-8f, 0x1p-8f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f };
	float y[3];
	tt_ok(1, "bfloat16", 1, 3, "\"op0\":\"add\",\"reverse0\":false,"
	      "\"op1\":\"add\",\"reverse1\":false", x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(1.0f));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(1.0f + 0x1p-7f));
	ck_assert_uint_eq(tb_bits(y[2]), tb_bits(1.0f + 0x1p-7f));
}
END_TEST

/* Inputs of the wrong shape or count stop the run before anything is
** written, naming the input. */
START_TEST(test_tt_shapes)
{
	static const struct {
		int scan, two;
		const char *tap, *pap, *want;
	} c[] = {
		{ 0, 0, "[[5,2],[1,1]]", NULL, "instruction tsp: with "
		  "is_scalar_tensor_tensor true ins[2] must have the shape of "
		  "ins[0] (4 elements over 2 partitions), got 2 over 2" },
		{ 0, 0, NULL, "[[5,1],[1,1]]", "instruction tsp: ins[1] must be "
		  "[2, 1]: one scalar per partition of ins[0] (got 1 elements "
		  "over 1 partitions)" },
		{ 1, 0, "[[5,1],[1,2]]", NULL, "instruction tsp: with "
		  "is_tensor_tensor_scan true ins[1] must have the shape of "
		  "ins[0] (4 elements over 2 partitions), got 2 over 1" },
		{ 1, 0, NULL, "[[5,1],[1,1]]", "instruction tsp: ins[2] must be "
		  "[2, 1]: one initial value per partition of ins[0] (got 1 "
		  "elements over 1 partitions)" },
		{ 0, 1, NULL, NULL, "instruction tsp: with "
		  "is_scalar_tensor_tensor true needs 3 inputs, got 2" },
		{ 1, 1, NULL, NULL, "instruction tsp: with "
		  "is_tensor_tensor_scan true needs 3 inputs, got 2" },
	};
	float x[2 * 5] = { 0 }, y[4];
	lm_error err;
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		ck_assert_int_eq(tt_run(c[i].scan, "float32", 2, 2,
					"\"op0\":\"add\",\"reverse0\":false,"
					"\"op1\":\"add\",\"reverse1\":false",
					c[i].tap, c[i].pap, c[i].two, x, y,
					&err), LM_ECHECK);
		ck_assert_contains(err.msg, c[i].want);
	}
}
END_TEST

/* Integer data on either datapath is refused by name. */
START_TEST(test_tt_int_refused)
{
	tb t;
	lm_module *m;
	ls_result r;
	lm_error err;
	for (int scan = 0; scan < 2; scan++) {
		tb_init(&t);
		tb_sb(&t, "xs", "int32", 2, 4);
		tb_sb(&t, "sc", "int32", 2, 1);
		tb_sb(&t, "ys", "int32", 2, 4);
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"m1\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":1}",
			AP("xs", "int32", 2, 4, 0));
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"m2\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":1}",
			AP("sc", "int32", 2, 1, 0));
		tb_inst(&t, "{\"opcode\":\"TensorScalarPtr\",\"name\":\"tsp\","
			"\"engine\":\"DVE\",\"ins\":[%s,%s,%s],\"outs\":[%s],"
			"\"op0\":\"add\",\"reverse0\":false,\"op1\":\"add\","
			"\"reverse1\":false,\"%s\":true,\"dependencies\":"
			"[\"m1\",\"m2\"]}", AP("xs", "int32", 2, 4, 0),
			scan ? AP("xs", "int32", 2, 4, 0) : AP("sc", "int32", 2,
			1, 0), scan ? AP("sc", "int32", 2, 1, 0) : AP("xs",
			"int32", 2, 4, 0), AP("ys", "int32", 2, 4, 0), scan ?
			"is_tensor_tensor_scan" : "is_scalar_tensor_tensor");
		m = tb_module(&t, 0);
		ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err),
				 LM_ECHECK);
		ck_assert_contains(err.msg, scan ? "with is_tensor_tensor_scan "
				   "true integer data (ins[0] int32, outs[0] "
				   "int32) is not modelled" : "with "
				   "is_scalar_tensor_tensor true integer data "
				   "(ins[0] int32, outs[0] int32) is not "
				   "modelled");
		lm_module_free(m);
		tb_free(&t);
	}
}
END_TEST

/* The two keys survive a save and a load; at false they are not written. */
START_TEST(test_tt_json_round_trip)
{
	for (int scan = 0; scan < 3; scan++) {
		const char *key = scan == 1 ? "is_tensor_tensor_scan"
					    : "is_scalar_tensor_tensor";
		tb t;
		lm_module *m, *m2;
		lm_error err;
		char *text, *text2, want[60];
		size_t len, len2;
		const lm_inst *in = NULL;
		tb_init(&t);
		tb_sb(&t, "xs", "float32", 2, 4);
		tb_sb(&t, "sc", "float32", 2, 1);
		tb_inst(&t, "{\"opcode\":\"TensorScalarPtr\",\"name\":\"tsp\","
			"\"engine\":\"DVE\",\"ins\":[%s,%s,%s],\"outs\":[%s],"
			"\"op0\":\"add\",\"reverse0\":true,\"op1\":\"add\","
			"\"reverse1\":false,\"%s\":%s}",
			AP("xs", "float32", 2, 4, 0), AP("sc", "float32", 2, 1,
			0), AP("xs", "float32", 2, 4, 0), AP("xs", "float32", 2,
			4, 0), key, scan == 2 ? "false" : "true");
		m = tb_module(&t, 0);
		ck_assert_int_eq(lm_module_to_json(m, 0, &text, &len, &err), 0);
		snprintf(want, sizeof want, "\"%s\":true", key);
		if (scan == 2)
			ck_assert_ptr_null(strstr(text, "is_scalar_tensor"));
		else
			ck_assert_contains(text, want);
		ck_assert_msg(lm_module_parse(&m2, text, len, NULL, &err) == 0,
			      "%s", err.msg);
		for (int f = 0; f < m2->n_functions; f++)
			for (int b = 0; b < m2->functions[f].n_blocks; b++)
				for (int i = 0; i < m2->functions[f].blocks[b]
				     .n_insts; i++)
					if (!strcmp(m2->functions[f].blocks[b]
						    .insts[i].name, "tsp"))
						in = &m2->functions[f]
						     .blocks[b].insts[i];
		ck_assert_ptr_nonnull(in);
		ck_assert_int_eq(in->is_scalar_tensor_tensor, scan == 0);
		ck_assert_int_eq(in->is_tensor_tensor_scan, scan == 1);
		ck_assert_int_eq(in->reverse0, 1);
		ck_assert_int_eq(lm_module_to_json(m2, 0, &text2, &len2, &err),
				 0);
		ck_assert_str_eq(text, text2);
		free(text);
		free(text2);
		lm_module_free(m2);
		lm_module_free(m);
		tb_free(&t);
	}
}
END_TEST

/* ---- Reciprocal ---------------------------------------------------------- */

/* One instruction op (JSON members keys) from xs [1, F] (float32) to ys
** (out_dt); y gets the F outputs. */
static void unary_run(const char *op, const char *keys, const char *out_dt,
		      int F, const float *x, float *y)
{
	tb t;
	ls_result r;
	lm_module *m;
	lm_error err;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 1, F);
	tb_dram(&t, "y", "ExternalOutput", out_dt, 1, F);
	tb_sb(&t, "xs", "float32", 1, F);
	tb_sb(&t, "ys", out_dt, 1, F);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", 1, F, 0), AP("xs", "float32", 1, F, 0));
	tb_inst(&t, "{\"opcode\":\"%s\",\"name\":\"u\",\"engine\":\"DVE\","
		"\"ins\":[%s],\"outs\":[%s]%s,\"wait\":[{\"semaphore\":\"s0\","
		"\"value\":1}]}", op, AP("xs", "float32", 1, F, 0),
		AP("ys", out_dt, 1, F, 0), keys);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"u\"]}", AP("ys", out_dt, 1, F, 0), AP("y", out_dt, 1, F, 0));
	m = tb_module(&t, 0);
	ck_assert_msg(tb_run1(m, x, 1, F, NULL, &r, &err) == 0, "%s", err.msg);
	for (int i = 0; i < F; i++)
		y[i] = tb_out(&r, "y", i);
	ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
}

/* 1 / x, IEEE in float32: the signed zeros and infinities swap, a
** subnormal's reciprocal overflows, 1/3 rounds to nearest; a bfloat16
** destination rounds the float32 quotient once. */
START_TEST(test_reciprocal)
{
	float x[8] = { 2.0f, -0.0f, 0.0f, INFINITY, -INFINITY, NAN, 3.0f,
		       0x1p-130f };
	float y[8];
	unary_run("Reciprocal", "", "float32", 8, x, y);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(0.5f));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(-INFINITY));
	ck_assert_uint_eq(tb_bits(y[2]), tb_bits(INFINITY));
	ck_assert_uint_eq(tb_bits(y[3]), 0x00000000u);
	ck_assert_uint_eq(tb_bits(y[4]), 0x80000000u);
	ck_assert(isnan(y[5]));
	ck_assert_uint_eq(tb_bits(y[6]), 0x3eaaaaabu);
	ck_assert_uint_eq(tb_bits(y[7]), tb_bits(INFINITY));
	unary_run("Reciprocal", "", "bfloat16", 8, x, y);
	ck_assert_uint_eq(tb_bits(y[6]), 0x3eab0000u); /* 0x3eaa|aaab up */
}
END_TEST

/* Random data against 1.0f / x written here. */
START_TEST(test_reciprocal_random)
{
	enum { F = 200 };
	float x[F], y[F];
	tb_fill(x, F, 77);
	unary_run("Reciprocal", "", "float32", F, x, y);
	for (int i = 0; i < F; i++)
		ck_assert_same_f(y[i], 1.0f / x[i]);
}
END_TEST

/* Integer data stops the run. */
START_TEST(test_reciprocal_int)
{
	tb t;
	lm_module *m;
	ls_result r;
	lm_error err;
	tb_init(&t);
	tb_sb(&t, "xs", "int32", 1, 4);
	tb_sb(&t, "ys", "float32", 1, 4);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"m\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":2}",
		AP("xs", "int32", 1, 4, 0));
	tb_inst(&t, "{\"opcode\":\"Reciprocal\",\"name\":\"u\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":[\"m\"]}",
		AP("xs", "int32", 1, 4, 0), AP("ys", "float32", 1, 4, 0));
	m = tb_module(&t, 0);
	ck_assert_int_eq(tb_run1(m, NULL, 0, 0, NULL, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "instruction u: integer data (int32 to "
			   "float32) is not modelled (Reciprocal)");
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/* ---- StreamTranspose ----------------------------------------------------- */

/* x [P, E] (float32 host data stored as dt) through one StreamTranspose
** into ys [OP, OE] (out_dt); the run's status, y the outputs. */
static int st_run(const char *dt, const char *out_dt, int P, int E, int OP,
		  int OE, const float *x, float *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	int rc;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", dt, P, E);
	tb_dram(&t, "y", "ExternalOutput", out_dt, OP, OE);
	tb_sb(&t, "xs", dt, P, E);
	tb_sb(&t, "ys", out_dt, OP, OE);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", dt, P, E, 0), AP("xs", dt, P, E, 0));
	tb_inst(&t, "{\"opcode\":\"StreamTranspose\",\"name\":\"tr\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"wait\":[{\"semaphore\":"
		"\"s0\",\"value\":1}]}", AP("xs", dt, P, E, 0),
		AP("ys", out_dt, OP, OE, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"tr\"]}", AP("ys", out_dt, OP, OE, 0),
		AP("y", out_dt, OP, OE, 0));
	m = tb_module(&t, 0);
	rc = tb_run1(m, x, P, E, NULL, &r, err);
	if (rc == 0) {
		for (int i = 0; i < OP * OE; i++)
			y[i] = tb_out(&r, "y", i);
		ls_result_free(&r);
	}
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* Within one block it is the plain transpose: [4, 8] -> [8, 4]; the
** element bits move unchanged (a signalling NaN's payload, -0). */
START_TEST(test_stream_transpose_small)
{
	enum { P = 4, E = 8 };
	float x[P * E], y[P * E];
	lm_error err;
	for (int i = 0; i < P * E; i++)
		x[i] = (float)(i + 1);
	x[3] = lm_bits_f32(0x7fa00001u);
	x[10] = -0.0f;
	ck_assert_msg(st_run("float32", "float32", P, E, E, P, x, y, &err) == 0,
		      "%s", err.msg);
	for (int e = 0; e < E; e++)
		for (int p = 0; p < P; p++)
			ck_assert_uint_eq(tb_bits(y[e * P + p]),
					  tb_bits(x[p * E + e]));
	ck_assert_uint_eq(tb_bits(y[3 * P + 0]), 0x7fa00001u);
	ck_assert_uint_eq(tb_bits(y[2 * P + 1]), 0x80000000u);
}
END_TEST

/* [64, 96] bfloat16: every aligned 32 x 32 block transposed where it is,
** against out[a][b] = in[32(a/32) + b%32][32(b/32) + a%32]. */
START_TEST(test_stream_transpose_blocks)
{
	enum { P = 64, E = 96 };
	static float x[P * E], y[P * E];
	lm_error err;
	tb_fill(x, P * E, 5);
	for (int i = 0; i < P * E; i++)
		x[i] = lm_round_to(LM_DT_BFLOAT16, x[i]);
	ck_assert_msg(st_run("bfloat16", "bfloat16", P, E, P, E, x, y, &err)
		      == 0, "%s", err.msg);
	for (int a = 0; a < P; a++)
		for (int b = 0; b < E; b++)
			ck_assert_uint_eq(tb_bits(y[a * E + b]),
					  tb_bits(x[(32 * (a / 32) + b % 32) * E +
						    32 * (b / 32) + a % 32]));
	/* the diagonal of a block stays */
	ck_assert_uint_eq(tb_bits(y[33 * E + 65]), tb_bits(x[33 * E + 65]));
}
END_TEST

/* A cast or an output of another shape stops the run. */
START_TEST(test_stream_transpose_errors)
{
	float x[4 * 8] = {0}, y[64];
	lm_error err;
	ck_assert_int_eq(st_run("float32", "bfloat16", 4, 8, 8, 4, x, y, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "instruction tr: a stream transpose does "
			   "not convert dtypes (float32 to bfloat16) "
			   "(StreamTranspose)");
	ck_assert_int_eq(st_run("float32", "float32", 4, 8, 4, 8, x, y, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "outs[0] must be [8, 4], the 32 x 32 block "
			   "transpose of ins[0] [4, 8] (got [4, 8])");
}
END_TEST


/* ---- the accumulator registers: Activation acc, Exponential -------------- */

/*
** A module over x [P, F] (float32, loaded into xs): the caller's compute
** instructions (acc_step) read xs and write ys (ydt) and rs ([P, 1]
** float32); then ys goes to y and rs to r. bias is a zero [P, 1] tile
** (Memset mb). The steps run in order on their engine (each waits for
** the load and depends on the step before it: `dep`).
*/
static void acc_begin(tb *t, int P, int F, const char *ydt)
{
	tb_init(t);
	tb_dram(t, "x", "ExternalInput", "float32", P, F);
	tb_dram(t, "y", "ExternalOutput", ydt, P, F);
	tb_dram(t, "r", "ExternalOutput", "float32", P, 1);
	tb_sb(t, "xs", "float32", P, F);
	tb_sb(t, "ys", ydt, P, F);
	tb_sb(t, "bias", "float32", P, 1);
	tb_sb(t, "rs", "float32", P, 1);
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", P, F, 0), AP("xs", "float32", P, F, 0));
	tb_inst(t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"mb\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":0.0}",
		AP("bias", "float32", P, 1, 0));
}

/*
** Activation `name` (func, scale, keys: acc / reduce_op ...) on columns
** [off, off + n) of xs into the same columns of ys; with r1, outs[1] is
** rs. After dep.
*/
static void act_step(tb *t, int P, int F, const char *ydt, const char *name,
		     const char *func, const char *scale, const char *keys,
		     int off, int n, int r1, const char *dep)
{
	char outs[900];
	snprintf(outs, sizeof outs, "%s%s%s", APS("ys", ydt, P, n, off, F),
		 r1 ? "," : "", r1 ? AP("rs", "float32", P, 1, 0) : "");
	tb_inst(t, "{\"opcode\":\"Activation\",\"alpha\":0.0,\"op0\":"
		"\"bypass\",\"op1\":\"bypass\",%s,\"name\":\"%s\",\"engine\":"
		"\"Activation\",\"ins\":[%s,%s],\"outs\":[%s],\"func\":\"%s\","
		"\"scale\":%s,\"wait\":[{\"semaphore\":\"s0\",\"value\":1}],"
		"\"dependencies\":[\"%s\"]}", keys, name,
		APS("xs", "float32", P, n, off, F),
		AP("bias", "float32", P, 1, 0), outs, func, scale, dep);
}

/* Exponential on engine eng: ys = expf(xs - bias) with reduce_cmd cmd
** (with r1, outs[1] is rs). */
static void exp_step(tb *t, int P, int F, const char *ydt, const char *name,
		     const char *eng, const char *cmd, int off, int n, int r1,
		     const char *dep)
{
	char outs[900];
	snprintf(outs, sizeof outs, "%s%s%s", APS("ys", ydt, P, n, off, F),
		 r1 ? "," : "", r1 ? AP("rs", "float32", P, 1, 0) : "");
	tb_inst(t, "{\"opcode\":\"Exponential\",\"reduce_cmd\":\"%s\","
		"\"name\":\"%s\",\"engine\":\"%s\",\"ins\":[%s,%s],\"outs\":"
		"[%s],\"wait\":[{\"semaphore\":\"s0\",\"value\":1}],"
		"\"dependencies\":[\"%s\"]}", cmd, name, eng,
		APS("xs", "float32", P, n, off, F),
		AP("bias", "float32", P, 1, 0), outs, dep);
}

/* Store ys and rs (after dep), run; y and r as float32 (y may be NULL). */
static int acc_end(tb *t, int P, int F, const char *ydt, const char *dep,
		   const float *x, float *y, float *r, lm_error *err)
{
	ls_result res;
	lm_module *m;
	int rc;
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"%s\"]}", AP("ys", ydt, P, F, 0), AP("y", ydt, P, F, 0),
		dep);
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"sr\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"%s\"]}", AP("rs", "float32", P, 1, 0),
		AP("r", "float32", P, 1, 0), dep);
	m = tb_module(t, 0);
	rc = tb_run1(m, x, P, F, NULL, &res, err);
	if (rc == 0) {
		for (int i = 0; y && i < P * F; i++)
			y[i] = tb_out(&res, "y", i);
		for (int i = 0; i < P; i++)
			r[i] = tb_out(&res, "r", i);
		ls_result_free(&res);
	}
	lm_module_free(m);
	tb_free(t);
	return rc;
}

#define ZACC "\"acc\":\"ZeroAccumulate\",\"reduce_op\":\"add\""
#define ACC "\"acc\":\"Accumulate\",\"reduce_op\":\"add\""

/*
** The register state crosses instructions, and each instruction adds its
** row's own sum (folded from the row's first element) to it: with
** x = [1, 2^-24, 2^-24], ZeroAccumulate over [1] leaves 1, Accumulate
** over [2^-24, 2^-24] adds 2^-23 (exact): 1 + 2^-23. Adding element by
** element into the register would give 1 (each 1 + 2^-24 ties to even).
*/
START_TEST(test_act_acc_state)
{
	tb t;
	lm_error err;
	float x[3] = { 1.0f, 0x1p-24f, 0x1p-24f }, y[3], r[1];
	acc_begin(&t, 1, 3, "float32");
	act_step(&t, 1, 3, "float32", "a0", "Identity", "1.0", ZACC, 0, 1, 0,
		 "mb");
	act_step(&t, 1, 3, "float32", "a1", "Identity", "1.0", ACC, 1, 2, 1,
		 "a0");
	ck_assert_msg(acc_end(&t, 1, 3, "float32", "a1", x, y, r, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(tb_bits(r[0]), tb_bits(1.0f + 0x1p-23f));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(tb_bits(y[i]), tb_bits(x[i]));
}
END_TEST

/*
** The sum is over the float32 results, before they are rounded to the
** output's dtype: [1, 2^-9, 2^-9] into bfloat16 stores 1, 1 + 2^-9 ->
** 1, ... but sums to 1 + 2^-8. ZeroAccumulate adds the sum to +0, so a
** row of -0 reads out as +0; Zero alone reads out 0; AddAccumulate adds
** like Accumulate.
*/
START_TEST(test_act_acc_float32_sum)
{
	tb t;
	lm_error err;
	float x[3] = { 1.0f, 0x1p-9f, 0x1p-9f }, y[3], r[2];
	float z[2 * 2] = { -0.0f, -0.0f, 3.0f, 4.0f };
	acc_begin(&t, 1, 3, "bfloat16");
	act_step(&t, 1, 3, "bfloat16", "a0", "Identity", "1.0", ZACC, 0, 3, 1,
		 "mb");
	ck_assert_msg(acc_end(&t, 1, 3, "bfloat16", "a0", x, y, r, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(tb_bits(r[0]), tb_bits(1.0f + 0x1p-8f));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(0x1p-9f));
	/* -0 row: +0; the second partition: 0 + (3 + 4) */
	acc_begin(&t, 2, 2, "float32");
	act_step(&t, 2, 2, "float32", "a0", "Identity", "1.0", ZACC, 0, 2, 1,
		 "mb");
	ck_assert_msg(acc_end(&t, 2, 2, "float32", "a0", z, NULL, r, &err)
		      == 0, "%s", err.msg);
	ck_assert_uint_eq(tb_bits(r[0]), 0x00000000u);
	ck_assert_uint_eq(tb_bits(r[1]), tb_bits(7.0f));
	/* Zero, then AddAccumulate of column 1 only: 0 + -0 = +0, 0 + 4 */
	acc_begin(&t, 2, 2, "float32");
	act_step(&t, 2, 2, "float32", "a0", "Identity", "1.0",
		 "\"acc\":\"Zero\",\"reduce_op\":\"bypass\"", 0, 1, 1,
		 "mb");
	act_step(&t, 2, 2, "float32", "a1", "Square", "1.0",
		 "\"acc\":\"AddAccumulate\",\"reduce_op\":\"add\"", 1, 1, 1,
		 "a0");
	ck_assert_msg(acc_end(&t, 2, 2, "float32", "a1", z, NULL, r, &err)
		      == 0, "%s", err.msg);
	ck_assert_uint_eq(tb_bits(r[0]), 0x00000000u);
	ck_assert_uint_eq(tb_bits(r[1]), tb_bits(16.0f));
}
END_TEST

/*
** Exponential: expf(x - max[p]) and its row sum; NaN and infinities go
** through IEEE (expf(-inf) = 0, a NaN makes the sum NaN). Its registers
** are its engine's: an Accumulate on DVE after a ZeroAccumulate on the
** Activation engine finds DVE's never cleared.
*/
START_TEST(test_exponential)
{
	tb t;
	lm_error err;
	float x[2 * 3] = { 1.0f, 2.0f, -INFINITY, 0.5f, NAN, 1.0f };
	float y[6], r[2];
	acc_begin(&t, 2, 3, "float32");
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"m1\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":1.0,"
		"\"dependencies\":[\"mb\"]}", AP("bias", "float32", 2, 1, 0));
	exp_step(&t, 2, 3, "float32", "e0", "Activation", "ZeroAccumulate", 0,
		 3, 1, "m1");
	ck_assert_msg(acc_end(&t, 2, 3, "float32", "e0", x, y, r, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(1.0f));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(expf(1.0f)));
	ck_assert_uint_eq(tb_bits(y[2]), 0u);
	ck_assert_uint_eq(tb_bits(y[3]), tb_bits(expf(-0.5f)));
	ck_assert(isnan(y[4]));
	ck_assert_uint_eq(tb_bits(r[0]), tb_bits(0.0f + ((1.0f + expf(1.0f))
							  + 0.0f)));
	ck_assert(isnan(r[1]));
	/* the registers are per engine */
	acc_begin(&t, 2, 3, "float32");
	exp_step(&t, 2, 3, "float32", "e0", "Activation", "ZeroAccumulate", 0,
		 3, 0, "mb");
	exp_step(&t, 2, 3, "float32", "e1", "DVE", "Accumulate", 0, 3, 1,
		 "e0");
	ck_assert_int_eq(acc_end(&t, 2, 3, "float32", "e1", x, y, r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "instruction e1: acc 'Accumulate' adds to "
			   "the accumulator register of partition 0, which no "
			   "Zero or ZeroAccumulate cleared (Exponential)");
}
END_TEST

/*
** ActivationReadAccumulator reads the registers out later (rounded once
** to its output's dtype); Idle leaves them as they were.
*/
START_TEST(test_act_read_accumulator)
{
	tb t;
	lm_error err;
	float x[1 * 2] = { 1.0f, 0x1p-10f }, r[1];
	acc_begin(&t, 1, 2, "float32");
	act_step(&t, 1, 2, "float32", "a0", "Identity", "1.0", ZACC, 0, 2, 0,
		 "mb");
	act_step(&t, 1, 2, "float32", "a1", "Exp", "1.0",
		 "\"acc\":\"Idle\",\"reduce_op\":\"bypass\"", 0, 2, 0,
		 "a0");
	tb_inst(&t, "{\"opcode\":\"ActivationReadAccumulator\",\"name\":"
		"\"rd\",\"engine\":\"Activation\",\"ins\":[],\"outs\":[%s],"
		"\"dependencies\":[\"a1\"]}", AP("rs", "float32", 1, 1, 0));
	ck_assert_msg(acc_end(&t, 1, 2, "float32", "rd", x, NULL, r, &err)
		      == 0, "%s", err.msg);
	ck_assert_uint_eq(tb_bits(r[0]), tb_bits(1.0f + 0x1p-10f));
}
END_TEST

/*
** An immediate max (an imm_value ins[1], rounded to float32) is
** subtracted from every element: 0.1 -> 0x3dcccccd, and 1 - that is one
** float32 subtraction before expf.
*/
START_TEST(test_exponential_imm_max)
{
	tb t;
	lm_error err;
	float x[2] = { 1.0f, 0.1f }, y[2], r[1];
	acc_begin(&t, 1, 2, "float32");
	tb_inst(&t, "{\"opcode\":\"Exponential\",\"reduce_cmd\":"
		"\"ZeroAccumulate\",\"name\":\"e0\",\"engine\":\"Activation\","
		"\"ins\":[%s,{\"kind\":\"imm_value\",\"dtype\":\"float32\","
		"\"value\":0.1}],\"outs\":[%s,%s],\"dependencies\":[\"mb\"],"
		"\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]}",
		AP("xs", "float32", 1, 2, 0), AP("ys", "float32", 1, 2, 0),
		AP("rs", "float32", 1, 1, 0));
	ck_assert_msg(acc_end(&t, 1, 2, "float32", "e0", x, y, r, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(tb_bits(y[0]), tb_bits(expf(1.0f - 0.1f)));
	ck_assert_uint_eq(tb_bits(y[1]), tb_bits(1.0f));
	ck_assert_uint_eq(tb_bits(r[0]), tb_bits(0.0f + (expf(1.0f - 0.1f) +
							  1.0f)));
}
END_TEST

/* DveReadAccumulator reads DVE's registers: an Exponential on DVE. */
START_TEST(test_dve_read_accumulator)
{
	tb t;
	lm_error err;
	float x[2 * 2] = { 0.0f, 0.0f, 1.0f, -INFINITY }, r[2];
	acc_begin(&t, 2, 2, "float32");
	exp_step(&t, 2, 2, "float32", "e0", "DVE", "ZeroAccumulate", 0, 2, 0,
		 "mb");
	tb_inst(&t, "{\"opcode\":\"DveReadAccumulator\",\"name\":\"rd\","
		"\"engine\":\"DVE\",\"ins\":[],\"outs\":[%s],"
		"\"dependencies\":[\"e0\"]}", AP("rs", "float32", 2, 1, 0));
	ck_assert_msg(acc_end(&t, 2, 2, "float32", "rd", x, NULL, r, &err)
		      == 0, "%s", err.msg);
	ck_assert_uint_eq(tb_bits(r[0]), tb_bits(2.0f));
	ck_assert_uint_eq(tb_bits(r[1]), tb_bits(expf(1.0f)));
}
END_TEST

/* acc, reduce_op and reduce_cmd are read into the IR and written back. */
START_TEST(test_acc_keys_roundtrip)
{
	tb t;
	lm_module *m = NULL;
	lm_error err;
	char *text, *out;
	size_t n;
	acc_begin(&t, 2, 2, "float32");
	act_step(&t, 2, 2, "float32", "a0", "Identity", "1.0", ZACC, 0, 2, 1,
		 "mb");
	exp_step(&t, 2, 2, "float32", "e0", "Activation", "AddAccumulate", 0,
		 2, 0, "a0");
	text = tb_json(&t, 0);
	ck_assert_msg(lm_module_parse(&m, text, strlen(text), "t.json", &err)
		      == 0, "%s", err.msg);
	ck_assert_int_eq(lm_module_to_json(m, 0, &out, &n, &err), 0);
	ck_assert_msg(strstr(out, "\"acc\":\"ZeroAccumulate\""), "acc");
	ck_assert_msg(strstr(out, "\"reduce_op\":\"add\""), "reduce_op");
	ck_assert_msg(strstr(out, "\"reduce_cmd\":\"AddAccumulate\""),
		      "reduce_cmd");
	free(out);
	free(text);
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/* What stops the run: a register read or added to before any clear, a
** read-out with Idle, an Exponential's max not [P, 1]. */
START_TEST(test_act_acc_run_errors)
{
	tb t;
	lm_error err;
	float x[2 * 2] = { 1.0f, 2.0f, 3.0f, 4.0f }, r[2];
	acc_begin(&t, 2, 2, "float32");
	act_step(&t, 2, 2, "float32", "a0", "Identity", "1.0", ACC, 0, 2, 1,
		 "mb");
	ck_assert_int_eq(acc_end(&t, 2, 2, "float32", "a0", x, NULL, r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "instruction a0: acc 'Accumulate' adds to "
			   "the accumulator register of partition 0, which no "
			   "Zero or ZeroAccumulate cleared (Activation)");
	acc_begin(&t, 2, 2, "float32");
	tb_inst(&t, "{\"opcode\":\"ActivationReadAccumulator\",\"name\":"
		"\"rd\",\"engine\":\"Activation\",\"ins\":[],\"outs\":[%s],"
		"\"dependencies\":[\"mb\"]}", AP("rs", "float32", 2, 1, 0));
	ck_assert_int_eq(acc_end(&t, 2, 2, "float32", "rd", x, NULL, r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "instruction rd: reads the accumulator "
			   "register of partition 0, which no Zero or "
			   "ZeroAccumulate cleared "
			   "(ActivationReadAccumulator)");
	acc_begin(&t, 2, 2, "float32");
	act_step(&t, 2, 2, "float32", "a0", "Identity", "1.0",
		 "\"acc\":\"Idle\",\"reduce_op\":\"bypass\"", 0, 2, 1,
		 "mb");
	ck_assert_int_eq(acc_end(&t, 2, 2, "float32", "a0", x, NULL, r, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "outs[1] reads the accumulator out, but "
			   "the command is Idle (Activation)");
	acc_begin(&t, 2, 2, "float32");
	tb_inst(&t, "{\"opcode\":\"Exponential\",\"reduce_cmd\":\"Zero\","
		"\"name\":\"e0\",\"engine\":\"Activation\",\"ins\":[%s,%s],"
		"\"outs\":[%s],\"dependencies\":[\"mb\"],\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":1}]}",
		AP("xs", "float32", 2, 2, 0), AP("xs", "float32", 2, 2, 0),
		AP("ys", "float32", 2, 2, 0));
	ck_assert_int_eq(acc_end(&t, 2, 2, "float32", "e0", x, NULL, r, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "ins[1] must be [2, 1]: one max per "
			   "partition of ins[0] (got 4 elements over 2 "
			   "partitions) (Exponential)");
}
END_TEST

/* Refused before time 0, by key and value. */
static const struct { const char *op, *kv, *want; } acc_refusals[] = {
	{ "Activation", "\"acc\":\"LoadAccumulate\",\"reduce_op\":\"add\"",
	  "key 'acc' = \"LoadAccumulate\" is not modelled by the simulator "
	  "(Idle, Zero, Accumulate, ZeroAccumulate and AddAccumulate are "
	  "modelled; what LoadAccumulate loads is not documented)" },
	{ "Activation", "\"acc\":\"ZeroAccumulate\",\"reduce_op\":\"bypass\"",
	  "key 'reduce_op' = \"bypass\" is not modelled by the simulator (an "
	  "accumulating acc sums with reduce_op add (the registers only "
	  "add))" },
	{ "Activation", "\"acc\":\"Accumulate\",\"reduce_op\":\"max\"",
	  "key 'reduce_op' = \"max\" is not modelled" },
	{ "Activation", "\"acc\":\"Idle\",\"reduce_op\":\"mult\"",
	  "key 'reduce_op' = \"mult\" is not modelled by the simulator (the "
	  "accumulator registers only add (reduce_op add or bypass))" },
	{ "Activation", "\"acc\":\"Idle\",\"reduce_op\":\"bypass\","
	  "\"is_activate2\":true", "key 'is_activate2' = true is not "
	  "modelled" },
	{ "Activation@Pool", "\"acc\":\"Zero\",\"reduce_op\":\"bypass\"",
	  "key 'acc' = \"Zero\" is not modelled by the simulator "
	  "(Activation's accumulator is the Activation engine's; on another "
	  "engine it is not modelled)" },
	{ "Exponential", "\"reduce_cmd\":\"LoadAccumulate\"",
	  "key 'reduce_cmd' = \"LoadAccumulate\" is not modelled" },
	{ "DveReadAccumulator", "\"negated\":true",
	  "key 'negated' = true is not modelled" },
};

static int acc_check(const char *op, const char *kv, lm_error *err)
{
	tb t;
	lm_module *m;
	int rc;
	tb_init(&t);
	tb_sb(&t, "xs", "float32", 2, 4);
	tb_sb(&t, "b", "float32", 2, 1);
	tb_sb(&t, "ys", "float32", 2, 4);
	if (!strncmp(op, "Activation", 10))
		tb_inst(&t, "{\"opcode\":\"Activation\",\"name\":\"i\","
			"\"engine\":\"%s\",\"alpha\":0.0,\"scale\":1.0,"
			"\"func\":\"Exp\",\"op0\":\"bypass\",\"op1\":"
			"\"bypass\","
			"\"ins\":[%s,%s],\"outs\":[%s],%s}",
			strchr(op, '@') ? strchr(op, '@') + 1 : "Activation",
			AP("xs", "float32", 2, 4, 0),
			AP("b", "float32", 2, 1, 0),
			AP("ys", "float32", 2, 4, 0), kv);
	else if (strstr(op, "ReadAccumulator"))
		tb_inst(&t, "{\"opcode\":\"%s\",\"name\":\"i\",\"engine\":"
			"\"DVE\",\"ins\":[],\"outs\":[%s],%s}", op,
			AP("b", "float32", 2, 1, 0), kv);
	else
		tb_inst(&t, "{\"opcode\":\"%s\",\"name\":\"i\",\"engine\":"
			"\"Activation\",\"ins\":[%s],\"outs\":[%s],%s}", op,
			AP("xs", "float32", 2, 4, 0),
			AP("ys", "float32", 2, 4, 0), kv);
	m = tb_module(&t, 0);
	rc = ls_check_module(m, err);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

START_TEST(test_acc_refused)
{
	lm_error err;
	ck_assert_int_eq(acc_check(acc_refusals[_i].op, acc_refusals[_i].kv,
				   &err), LM_EINPUT);
	ck_assert_contains(err.msg, acc_refusals[_i].want);
}
END_TEST

START_TEST(test_acc_accepted)
{
	static const char *const ok[] = {
		"\"acc\":\"Idle\",\"reduce_op\":\"bypass\"",
		"\"acc\":\"Zero\",\"reduce_op\":\"bypass\"",
		"\"acc\":\"Accumulate\",\"reduce_op\":\"add\"",
		"\"acc\":\"ZeroAccumulate\",\"reduce_op\":\"add\"",
		"\"acc\":\"AddAccumulate\",\"reduce_op\":\"add\"",
	};
	lm_error err;
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		ck_assert_msg(acc_check("Activation", ok[i], &err) == 0,
			      "%s: %s", ok[i], err.msg);
	ck_assert_msg(acc_check("Exponential", "\"reduce_cmd\":\"Accumulate\"",
				&err) == 0, "%s", err.msg);
}
END_TEST

/*
** Random data against a plain loop: P = 4, F = 16; ZeroAccumulate over
** Exp(x * 0.5) of columns 0..6, Accumulate over Tanh(x * 0.5) of
** columns 7..15, read out with the second.
*/
START_TEST(test_act_acc_random)
{
	enum { P = 4, F = 16, H = 7 };
	tb t;
	lm_error err;
	float x[P * F], y[P * F], r[P];
	tb_fill(x, P * F, 77u + (uint32_t)_i);
	acc_begin(&t, P, F, "float32");
	act_step(&t, P, F, "float32", "a0", "Exp", "0.5", ZACC, 0, H, 0,
		 "mb");
	act_step(&t, P, F, "float32", "a1", "Tanh", "0.5", ACC, H, F - H, 1,
		 "a0");
	ck_assert_msg(acc_end(&t, P, F, "float32", "a1", x, y, r, &err) == 0,
		      "%s", err.msg);
	for (int p = 0; p < P; p++) {
		float reg = 0.0f, part = 0.0f;
		for (int j = 0; j < F; j++) {
			float v = x[p * F + j] * 0.5f + 0.0f;
			float want = j < H ? expf(v) : tanhf(v);
			ck_assert_uint_eq(tb_bits(y[p * F + j]), tb_bits(want));
			part = j == 0 || j == H ? want : part + want;
			if (j == H - 1 || j == F - 1)
				reg = reg + part;
		}
		ck_assert_uint_eq(tb_bits(r[p]), tb_bits(reg));
	}
}
END_TEST


/* ---- StreamShuffle ------------------------------------------------------- */

/* ys (float32 [P, E], memset to -1 first) = StreamShuffle(xs, mask);
** y as float32. mask: 32 entries (JSON text). */
static int shuf_run(int P, int E, const char *mask, const char *ydt,
		    const float *x, float *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	int rc;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", P, E);
	tb_dram(&t, "y", "ExternalOutput", ydt, P, E);
	tb_sb(&t, "xs", "float32", P, E);
	tb_sb(&t, "ys", ydt, P, E);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "float32", P, E, 0), AP("xs", "float32", P, E, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"mb\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":-1.0}",
		AP("ys", ydt, P, E, 0));
	tb_inst(&t, "{\"opcode\":\"StreamShuffle\",\"name\":\"sh\",\"engine\":"
		"\"DVE\",\"mask\":%s,\"ins\":[%s],\"outs\":[%s],\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":1}],\"dependencies\":[\"mb\"]}",
		mask, AP("xs", "float32", P, E, 0), AP("ys", ydt, P, E, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"sh\"]}", AP("ys", ydt, P, E, 0), AP("y", ydt, P, E, 0));
	m = tb_module(&t, 0);
	rc = ls_check_module(m, err);
	if (rc == 0)
		rc = tb_run1(m, x, P, E, NULL, &r, err);
	if (rc == 0) {
		for (int i = 0; i < P * E; i++)
			y[i] = tb_out(&r, "y", i);
		ls_result_free(&r);
	}
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* The mask as JSON text. */
static void shuf_mask(const int *mask, char *buf, size_t n)
{
	size_t k = 0;
	k += (size_t)snprintf(buf + k, n - k, "[");
	for (int i = 0; i < 32; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "",
				      mask[i]);
	snprintf(buf + k, n - k, "]");
}

/*
** Two blocks of 32 partitions, each shuffled by the same mask: output
** partition b + i is input partition b + mask[i]; 255 leaves the output
** partition as it was (-1 here). mask = [31, 30, ..., 0] but entries 3
** and 33 -> 255, entry 5 -> 5 (kept in place).
*/
START_TEST(test_shuffle_blocks)
{
	enum { P = 64, E = 2 };
	float x[P * E], y[P * E];
	int mask[32];
	char mtxt[200];
	lm_error err;
	for (int i = 0; i < P * E; i++)
		x[i] = (float)(i / E * 10 + i % E);
	for (int i = 0; i < 32; i++)
		mask[i] = 31 - i;
	mask[3] = 255;
	mask[5] = 5;
	shuf_mask(mask, mtxt, sizeof mtxt);
	ck_assert_msg(shuf_run(P, E, mtxt, "float32", x, y, &err) == 0, "%s",
		      err.msg);
	ck_assert_uint_eq(tb_bits(y[0 * E + 0]), tb_bits(310.0f));
	ck_assert_uint_eq(tb_bits(y[0 * E + 1]), tb_bits(311.0f));
	ck_assert_uint_eq(tb_bits(y[3 * E + 0]), tb_bits(-1.0f));
	ck_assert_uint_eq(tb_bits(y[5 * E + 1]), tb_bits(51.0f));
	ck_assert_uint_eq(tb_bits(y[32 * E + 0]), tb_bits(630.0f));
	ck_assert_uint_eq(tb_bits(y[35 * E + 1]), tb_bits(-1.0f));
	ck_assert_uint_eq(tb_bits(y[63 * E + 0]), tb_bits(320.0f));
}
END_TEST

/* Random masks (one entry in 8 a 255) and data against a plain loop. */
START_TEST(test_shuffle_random)
{
	enum { P = 96, E = 5 };
	float x[P * E], y[P * E];
	int mask[32];
	char mtxt[200];
	uint32_t st = 1234u + 77u * (uint32_t)_i;
	lm_error err;
	tb_fill(x, P * E, 900u + (uint32_t)_i);
	for (int i = 0; i < 32; i++) {
		st = st * 1103515245u + 12345u;
		mask[i] = (st >> 16) % 8 == 0 ? 255 : (int)((st >> 8) % 32);
	}
	shuf_mask(mask, mtxt, sizeof mtxt);
	ck_assert_msg(shuf_run(P, E, mtxt, "float32", x, y, &err) == 0, "%s",
		      err.msg);
	for (int q = 0; q < P; q++) {
		int m = mask[q % 32];
		for (int e = 0; e < E; e++) {
			float want = m == 255 ? -1.0f
				     : x[((q / 32) * 32 + m) * E + e];
			ck_assert_uint_eq(tb_bits(y[q * E + e]),
					  tb_bits(want));
		}
	}
}
END_TEST

/* Refused masks (before time 0) and shapes that stop the run. */
START_TEST(test_shuffle_errors)
{
	float x[40 * 2] = { 0 }, y[40 * 2];
	int mask[32];
	char mtxt[200];
	lm_error err;
	for (int i = 0; i < 32; i++)
		mask[i] = i;
	mask[7] = 32;
	shuf_mask(mask, mtxt, sizeof mtxt);
	ck_assert_int_eq(shuf_run(40, 2, mtxt, "float32", x, y, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "opcode 'StreamShuffle' key 'mask' = 32 is "
			   "not modelled by the simulator (each mask entry is "
			   "a partition 0..31 of the block, or 255");
	ck_assert_int_eq(shuf_run(40, 2, "[0,1,2]", "float32", x, y, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "key 'mask' = [0,1,2] is not modelled by "
			   "the simulator (the mask is an array of 32 "
			   "entries)");
	/* the second block has 8 partitions: entry 0 -> 20 reaches 52 */
	mask[7] = 7;
	mask[0] = 20;
	shuf_mask(mask, mtxt, sizeof mtxt);
	ck_assert_int_eq(shuf_run(40, 2, mtxt, "float32", x, y, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "mask[0] = 20 moves partition 52 of ins[0] "
			   "to 32; ins[0] has 40 partitions (StreamShuffle)");
	mask[0] = 0;
	shuf_mask(mask, mtxt, sizeof mtxt);
	ck_assert_int_eq(shuf_run(40, 2, mtxt, "bfloat16", x, y, &err),
			 LM_EINPUT);
	ck_assert_contains(err.msg, "a stream shuffle does not convert dtypes "
			   "(float32 to bfloat16) (StreamShuffle)");
	/* an entry beyond int: refused by value, never converted to int
	** first (undefined behaviour; -fsanitize=float-cast-overflow) */
	ck_assert_int_eq(shuf_run(40, 2, "[4294967296,0,0,0,0,0,0,0,0,0,0,0,0,"
				  "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]",
				  "float32", x, y, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "key 'mask' = 4294967296 is not modelled");
}
END_TEST

/*
** Busy time: an Exponential on DVE (with its accumulator command) and a
** StreamShuffle on Pool each cost their output's elements per partition
** plus the engine's fixed cost; a DveReadAccumulator one element.
*/
START_TEST(test_acc_shuffle_cost)
{
	tb t;
	lm_module *m;
	ls_result r;
	lm_error err;
	const lm_arch *a = lm_arch_get("gen3");
	char mask[200];
	int id[32];
	for (int i = 0; i < 32; i++)
		id[i] = i;
	shuf_mask(id, mask, sizeof mask);
	ck_assert_ptr_nonnull(a);
	tb_init(&t);
	tb_sb(&t, "xs", "float32", 2, 48);
	tb_sb(&t, "ys", "float32", 2, 48);
	tb_sb(&t, "rs", "float32", 2, 1);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"m\","
		"\"engine\":\"SP\",\"outs\":[%s],\"value\":1}",
		AP("xs", "float32", 2, 48, 0));
	tb_inst(&t, "{\"opcode\":\"Exponential\",\"name\":\"e\",\"engine\":"
		"\"DVE\",\"reduce_cmd\":\"ZeroAccumulate\",\"ins\":[%s],"
		"\"outs\":[%s],\"dependencies\":[\"m\"]}",
		AP("xs", "float32", 2, 48, 0), AP("ys", "float32", 2, 48, 0));
	tb_inst(&t, "{\"opcode\":\"DveReadAccumulator\",\"name\":\"rd\","
		"\"engine\":\"DVE\",\"ins\":[],\"outs\":[%s],"
		"\"dependencies\":[\"e\"]}", AP("rs", "float32", 2, 1, 0));
	tb_inst(&t, "{\"opcode\":\"StreamShuffle\",\"name\":\"sh\",\"engine\":"
		"\"Pool\",\"mask\":%s,\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[\"e\"]}", mask,
		AP("ys", "float32", 2, 48, 0), AP("xs", "float32", 2, 48, 0));
	m = tb_module(&t, 0);
	ck_assert_msg(tb_run1(m, NULL, 0, 0, NULL, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(r.cores[0].busy_ps[LM_ENG_DVE - LM_ENG_PE],
			 lm_arch_cycles_ps(a, LM_ENG_DVE,
					   48 + a->elem_fixed[LM_ENG_DVE]) +
			 lm_arch_cycles_ps(a, LM_ENG_DVE,
					   1 + a->elem_fixed[LM_ENG_DVE]));
	ck_assert_int_eq(r.cores[0].busy_ps[LM_ENG_POOL - LM_ENG_PE],
			 lm_arch_cycles_ps(a, LM_ENG_POOL,
					   48 + a->elem_fixed[LM_ENG_POOL]));
	ls_result_free(&r);
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/* ---- the suite ----------------------------------------------------------- */

static Suite *suite(void)
{
	Suite *s = suite_create("compute");
	TCase *tc = tcase_create("activation");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_activation_mul_then_add);
	suite_add_tcase(s, tc);
	tc = tcase_create("tensor_reduce");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_reduce_add_order);
	tcase_add_test(tc, test_reduce_max_min_nan_zero);
	tcase_add_test(tc, test_reduce_negate);
	tcase_add_test(tc, test_reduce_average);
	tcase_add_test(tc, test_reduce_rounds_once);
	tcase_add_loop_test(tc, test_reduce_random, 0,
			    (int)(sizeof fold_ops / sizeof *fold_ops));
	tcase_add_loop_test(tc, test_reduce_refused, 0,
			    (int)(sizeof reduce_refusals /
				  sizeof *reduce_refusals));
	tcase_add_test(tc, test_reduce_accepted);
	tcase_add_test(tc, test_reduce_run_errors);
	tcase_add_test(tc, test_reduce_int_uninit);
	tcase_add_test(tc, test_reduce_cost);
	suite_add_tcase(s, tc);
	tc = tcase_create("tensor_scalar_ptr");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_tsp_step_rounding);
	tcase_add_test(tc, test_tsp_reverse);
	tcase_add_test(tc, test_tsp_specials);
	tcase_add_test(tc, test_tsp_rounds_once);
	tcase_add_test(tc, test_tsp_one_scalar);
	tcase_add_loop_test(tc, test_tsp_random, 0,
			    (int)(sizeof tsp_ops / sizeof *tsp_ops));
	tcase_add_loop_test(tc, test_tsp_refused, 0,
			    (int)(sizeof tsp_refusals / sizeof *tsp_refusals));
	tcase_add_test(tc, test_tsp_accepted);
	tcase_add_test(tc, test_tsp_run_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("tensor_scalar_ptr_tensor");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_stt_reverse, 0, 4);
	tcase_add_test(tc, test_stt_bf16_once);
	tcase_add_loop_test(tc, test_tts_reverse, 0, 4);
	tcase_add_test(tc, test_tts_f32_carry);
	tcase_add_test(tc, test_tt_shapes);
	tcase_add_test(tc, test_tt_int_refused);
	tcase_add_test(tc, test_tt_json_round_trip);
	suite_add_tcase(s, tc);
	tc = tcase_create("reciprocal");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_reciprocal);
	tcase_add_test(tc, test_reciprocal_random);
	tcase_add_test(tc, test_reciprocal_int);
	suite_add_tcase(s, tc);
	tc = tcase_create("stream_transpose");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stream_transpose_small);
	tcase_add_test(tc, test_stream_transpose_blocks);
	tcase_add_test(tc, test_stream_transpose_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("accumulator");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_act_acc_state);
	tcase_add_test(tc, test_act_acc_float32_sum);
	tcase_add_test(tc, test_exponential);
	tcase_add_test(tc, test_act_read_accumulator);
	tcase_add_test(tc, test_dve_read_accumulator);
	tcase_add_test(tc, test_exponential_imm_max);
	tcase_add_test(tc, test_acc_keys_roundtrip);
	tcase_add_test(tc, test_act_acc_run_errors);
	tcase_add_loop_test(tc, test_acc_refused, 0,
			    (int)(sizeof acc_refusals / sizeof *acc_refusals));
	tcase_add_test(tc, test_acc_accepted);
	tcase_add_loop_test(tc, test_act_acc_random, 0, 4);
	suite_add_tcase(s, tc);
	tc = tcase_create("stream_shuffle");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_shuffle_blocks);
	tcase_add_loop_test(tc, test_shuffle_random, 0, 4);
	tcase_add_test(tc, test_shuffle_errors);
	tcase_add_test(tc, test_acc_shuffle_cost);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

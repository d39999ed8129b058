/*
** test_intalu.c -- integer and float8 data through the simulated ops
** (docs/dtypes.md, docs/semantics.md "The ALU on integer data"): the
** TensorTensor / TensorScalar ALU on integer data against hand-computed
** values and against a reference written here with plain 64-bit C
** arithmetic (nothing shared with sim/), its refusals by name, float8
** e4m3 / e4m3fn / e5m2 through DMA and the ALU, and Matmult with float8
** inputs accumulating in float32.
*/
#include "common.h"
#include "testutil.h"
#include "dtype.h"
#include "sim.h"
#include "simcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the harness -------------------------------------------------------- */

/*
** Inputs x<i> [P, F] (dtype dt[i], raw bytes data[i]) are loaded into SB
** s<i>; `op` (JSON members: opcode, keys; its ins read s<i>, its outs
** write ys [P, F] of out_dt) runs on DVE after the loads; ys is stored to
** y. Returns the status; on success r holds the outputs.
*/
static int run_op(int n_in, const char *const *dt, const void *const *data,
		  int P, int F, const char *out_dt, const char *op,
		  ls_result *r, lm_error *err)
{
	tb t;
	lm_module *m;
	ls_tensors host = {0, NULL};
	char nm[16], nm2[16];
	int rc;

	tb_init(&t);
	for (int i = 0; i < n_in; i++) {
		snprintf(nm, sizeof nm, "x%d", i);
		snprintf(nm2, sizeof nm2, "s%d", i);
		tb_dram(&t, nm, "ExternalInput", dt[i], P, F);
		tb_sb(&t, nm2, dt[i], P, F);
	}
	tb_dram(&t, "y", "ExternalOutput", out_dt, P, F);
	tb_sb(&t, "ys", out_dt, P, F);
	for (int i = 0; i < n_in; i++) {
		snprintf(nm, sizeof nm, "x%d", i);
		snprintf(nm2, sizeof nm2, "s%d", i);
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld%d\","
			"\"engine\":\"SP\",\"queue\":\"q0\",\"ins\":[%s],"
			"\"outs\":[%s]}", i, AP(nm, dt[i], P, F, 0),
			AP(nm2, dt[i], P, F, 0));
	}
	tb_inst(&t, "{%s,\"name\":\"op\",\"engine\":\"DVE\",\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":%d}]}", op, n_in);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"op\"]}", AP("ys", out_dt, P, F, 0), AP("y", out_dt, P, F, 0));
	m = tb_module(&t, 0);
	for (int i = 0; i < n_in; i++) {
		int64_t shape[2] = { P, F };
		snprintf(nm, sizeof nm, "x%d", i);
		ls_tensors_add(&host, nm, lm_dtype_parse(dt[i]), shape, 2,
			       data[i]);
	}
	rc = ls_run(m, &host, NULL, r, err);
	ls_tensors_free(&host);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* The ins JSON of a TensorTensor over s0, s1 and outs ys. */
static char *tt_op(const char *alu, const char *dt0, const char *dt1,
		   const char *out_dt, int P, int F)
{
	char *s = lm_xasprintf("\"opcode\":\"TensorTensor\",\"op\":\"%s\","
			       "\"ins\":[%s,", alu, AP("s0", dt0, P, F, 0));
	char *s2 = lm_xasprintf("%s%s],\"outs\":[", s, AP("s1", dt1, P, F, 0));
	char *s3 = lm_xasprintf("%s%s]", s2, AP("ys", out_dt, P, F, 0));
	free(s);
	free(s2);
	return s3;
}

/* Output element i of y widened by its dtype (signed or unsigned). */
static int64_t out_int(const ls_result *r, int64_t i)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, "y");
	int64_t v = 0;
	int es;
	ck_assert_ptr_nonnull(t);
	es = lm_dtype_size(t->dtype);
	ck_assert(i < t->count);
	memcpy(&v, (const char *)t->data + i * es, (size_t)es);
	if (es < 8 && t->dtype >= LM_DT_INT8 && t->dtype <= LM_DT_INT64 &&
	    (v >> (8 * es - 1)) & 1)
		v -= (int64_t)1 << (8 * es);
	return v;
}

/* Run TensorTensor alu over int arrays a, b of dtypes dt0, dt1 into
** out_dt; y holds the n outputs. */
static void tt_run(const char *alu, const char *dt0, const void *a,
		   const char *dt1, const void *b, const char *out_dt, int n,
		   int64_t *y)
{
	const char *dts[2] = { dt0, dt1 };
	const void *dat[2] = { a, b };
	char *op = tt_op(alu, dt0, dt1, out_dt, 1, n);
	ls_result r;
	lm_error err;
	ck_assert_msg(run_op(2, dts, dat, 1, n, out_dt, op, &r, &err) == 0,
		      "%s: %s", alu, err.msg);
	for (int i = 0; i < n; i++)
		y[i] = out_int(&r, i);
	ls_result_free(&r);
	free(op);
}

/* ---- TensorTensor on integer data: hand-computed ------------------------- */

/*
** int32: add and mult saturate at the int32 limits (through float32 they
** would be off by the rounding: 2^24 + 1 is not a float32), subtract
** exact beyond 2^24, the comparisons give 0 / 1, min / max exact.
*/
START_TEST(test_tt_int32_arith)
{
	static const int32_t a[6] = { 2147483647, -2147483647 - 1, 16777217,
				      -7, 46341, 0 };
	static const int32_t b[6] = { 1, -1, 1, 2, 46341, -5 };
	int64_t y[6];

	tt_run("add", "int32", a, "int32", b, "int32", 6, y);
	ck_assert_int_eq(y[0], 2147483647);   /* saturates */
	ck_assert_int_eq(y[1], -2147483647 - 1);
	ck_assert_int_eq(y[2], 16777218);     /* exact: not via float32 */
	ck_assert_int_eq(y[3], -5);
	tt_run("subtract", "int32", a, "int32", b, "int32", 6, y);
	ck_assert_int_eq(y[0], 2147483646);
	ck_assert_int_eq(y[1], -2147483647);
	ck_assert_int_eq(y[2], 16777216);
	ck_assert_int_eq(y[5], 5);
	tt_run("mult", "int32", a, "int32", b, "int32", 6, y);
	ck_assert_int_eq(y[1], 2147483647);   /* INT32_MIN * -1 saturates */
	ck_assert_int_eq(y[3], -14);
	ck_assert_int_eq(y[4], 2147483647);   /* 46341^2 = 2147488281 */
	tt_run("divide", "int32", a, "int32", b, "int32", 6, y);
	ck_assert_int_eq(y[3], -4);           /* floor(-7 / 2) */
	ck_assert_int_eq(y[5], 0);
	tt_run("mod", "int32", a, "int32", b, "int32", 6, y);
	ck_assert_int_eq(y[3], 1);            /* -7 - 2 * -4 */
	tt_run("max", "int32", a, "int32", b, "int32", 6, y);
	ck_assert_int_eq(y[1], -1);
	ck_assert_int_eq(y[2], 16777217);
	tt_run("min", "int32", a, "int32", b, "int32", 6, y);
	ck_assert_int_eq(y[2], 1);
	ck_assert_int_eq(y[5], -5);
	tt_run("is_gt", "int32", a, "int32", b, "int32", 6, y);
	ck_assert(y[0] == 1 && y[1] == 0 && y[2] == 1 && y[3] == 0 &&
		  y[4] == 0 && y[5] == 1);
	tt_run("is_equal", "int32", a, "int32", b, "float32", 6, y);
}
END_TEST

/*
** int64 mod at its limits: INT64_MAX mod -2 and INT64_MIN mod 3 (floor
** remainders -1 and 1) must not overflow on the way (b * floor(a / b)
** is beyond int64 for both).
*/
START_TEST(test_tt_int64_mod)
{
	static const int64_t a[4] = { INT64_MIN, INT64_MAX, INT64_MIN,
				      INT64_MAX };
	static const int64_t b[4] = { -1, -2, 3, 2 };
	int64_t y[4];

	tt_run("mod", "int64", a, "int64", b, "int64", 4, y);
	ck_assert(y[0] == 0);
	ck_assert(y[1] == -1);
	ck_assert(y[2] == 1);
	ck_assert(y[3] == 1);
}
END_TEST

/*
** int64 divide at its limits: the exact floor quotient, saturated.
** INT64_MIN / -1 is 2^63 (INT64_MAX in int64, INT32_MAX in int32), not
** the wrapped INT64_MIN.
*/
START_TEST(test_tt_int64_divide)
{
	static const int64_t a[4] = { INT64_MIN, INT64_MAX, INT64_MIN,
				      INT64_MIN };
	static const int64_t b[4] = { -1, -2, 3, -1 };
	int64_t y[4];

	tt_run("divide", "int64", a, "int64", b, "int64", 4, y);
	ck_assert(y[0] == INT64_MAX);
	ck_assert(y[1] == -4611686018427387904LL);  /* floor(-(2^62 - 0.5)) */
	ck_assert(y[2] == -3074457345618258603LL);  /* floor(-2^63 / 3) */
	tt_run("divide", "int64", a, "int64", b, "int32", 4, y);
	ck_assert(y[0] == 2147483647 && y[3] == 2147483647);
}
END_TEST

/* Bit operations keep the low bits of the output dtype; the shifts. */
START_TEST(test_tt_bits)
{
	static const uint8_t a[4] = { 0x0f, 0x80, 0xff, 0x01 };
	static const uint8_t b[4] = { 0x3c, 1, 4, 9 };
	static const int8_t sa[4] = { -128, -1, 64, 5 };
	static const int8_t sb[4] = { 1, 7, 1, 2 };
	int64_t y[4];

	tt_run("bitwise_and", "uint8", a, "uint8", b, "uint8", 4, y);
	ck_assert(y[0] == 0x0c && y[1] == 0 && y[2] == 4 && y[3] == 1);
	tt_run("bitwise_or", "uint8", a, "uint8", b, "uint8", 4, y);
	ck_assert(y[0] == 0x3f && y[1] == 0x81 && y[2] == 0xff && y[3] == 9);
	tt_run("bitwise_xor", "uint8", a, "uint8", b, "uint8", 4, y);
	ck_assert(y[0] == 0x33 && y[1] == 0x81 && y[2] == 0xfb && y[3] == 8);
	tt_run("bitwise_not", "uint8", a, "uint8", b, "uint8", 4, y);
	ck_assert(y[0] == 0xf0 && y[1] == 0x7f && y[2] == 0 && y[3] == 0xfe);
	tt_run("logical_shift_left", "uint8", a, "uint8", b, "uint8", 4, y);
	/* 0x0f << 0x3c and 0x01 << 9 leave the 8 bits: 0 */
	ck_assert(y[0] == 0 && y[1] == 0 && y[2] == 0xf0 && y[3] == 0);
	tt_run("logical_shift_right", "int8", sa, "int8", sb, "int8", 4, y);
	/* the 8 bits of -128 (0x80) >> 1 = 0x40; -1 >> 7 = 1 */
	ck_assert(y[0] == 0x40 && y[1] == 1 && y[2] == 32 && y[3] == 1);
	tt_run("arith_shift_right", "int8", sa, "int8", sb, "int8", 4, y);
	ck_assert(y[0] == -64 && y[1] == -1 && y[2] == 32 && y[3] == 1);
	tt_run("arith_shift_left", "int8", sa, "int8", sb, "int8", 4, y);
	/* -128 << 1 wraps to 0; 64 << 1 = 0x80 = -128 */
	ck_assert(y[0] == 0 && y[1] == -128 && y[2] == -128 && y[3] == 20);
	/* into a wider type the widened bits show: ~int8 5 = -6 as int32 */
	tt_run("bitwise_not", "int8", sa, "int8", sb, "int32", 4, y);
	ck_assert(y[0] == 127 && y[1] == 0 && y[2] == -65 && y[3] == -6);
	tt_run("logical_and", "int8", sa, "uint8", a, "int16", 4, y);
	ck_assert(y[0] == 1 && y[1] == 1 && y[2] == 1 && y[3] == 1);
	tt_run("logical_xor", "int8", sa, "uint8", b, "int16", 4, y);
	ck_assert(y[0] == 0 && y[3] == 0);
}
END_TEST

/* Mixed widths and signedness: exact values, saturated into the output. */
START_TEST(test_tt_mixed)
{
	static const uint32_t a[3] = { 4294967295u, 3000000000u, 5 };
	static const int16_t b[3] = { -1, 1, -7 };
	int64_t y[3];
	tt_run("add", "uint32", a, "int16", b, "int32", 3, y);
	ck_assert(y[0] == 2147483647 && y[1] == 2147483647 && y[2] == -2);
	tt_run("add", "uint32", a, "int16", b, "uint32", 3, y);
	ck_assert(y[0] == 4294967294LL && y[1] == 3000000001LL && y[2] == 0);
	tt_run("is_gt", "uint32", a, "int16", b, "uint8", 3, y);
	ck_assert(y[0] == 1 && y[1] == 1 && y[2] == 1);
	tt_run("min", "uint32", a, "int16", b, "int8", 3, y);
	ck_assert(y[0] == -1 && y[1] == 1 && y[2] == -7);
}
END_TEST

/* ---- randomized differential against plain C ----------------------------- */

/* The reference: op on exact values a, b (widened by their dtypes),
** then fitted into an int32 output. 0: no value (divide by zero). */
static int ref_op(const char *op, int64_t a, int64_t b, int64_t *r)
{
	int64_t v;
	int bits = 0;
	if (!strcmp(op, "add")) v = a + b;
	else if (!strcmp(op, "subtract")) v = a - b;
	else if (!strcmp(op, "mult")) v = a * b;
	else if (!strcmp(op, "max")) v = a > b ? a : b;
	else if (!strcmp(op, "min")) v = a < b ? a : b;
	else if (!strcmp(op, "is_le")) v = a <= b;
	else if (!strcmp(op, "not_equal")) v = a != b;
	else if (!strcmp(op, "divide") || !strcmp(op, "mod")) {
		int64_t q;
		if (b == 0)
			return 0;
		q = a / b;
		if (a % b != 0 && ((a < 0) != (b < 0)))
			q--;
		v = op[0] == 'd' ? q : a - b * q;
	} else {
		bits = 1;
		if (!strcmp(op, "bitwise_and")) v = a & b;
		else if (!strcmp(op, "bitwise_or")) v = a | b;
		else v = a ^ b;
	}
	if (bits) /* the low 32 bits, as int32 */
		v = (int64_t)(int32_t)(uint32_t)(uint64_t)v;
	else
		v = v > 2147483647 ? 2147483647
				   : v < -2147483648LL ? -2147483648LL : v;
	*r = v;
	return 1;
}

START_TEST(test_tt_random)
{
	enum { N = 257 };
	static const char *const ops[] = {
		"add", "subtract", "mult", "max", "min", "is_le", "not_equal",
		"divide", "mod", "bitwise_and", "bitwise_or", "bitwise_xor",
	};
	int32_t a[N];
	int16_t b[N];
	int64_t y[N], want;
	uint32_t s = 12345;

	for (int i = 0; i < N; i++) {
		s = s * 1664525u + 1013904223u;
		a[i] = (int32_t)s >> (s & 15);
		s = s * 1664525u + 1013904223u;
		b[i] = (int16_t)(s >> 16);
		if (i % 17 == 0)
			b[i] = (int16_t)(i % 3 - 1);
	}
	b[3] = 1; /* no divide by zero */
	for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
		int16_t bb[N];
		memcpy(bb, b, sizeof bb);
		if (!strcmp(ops[k], "divide") || !strcmp(ops[k], "mod"))
			for (int i = 0; i < N; i++)
				if (bb[i] == 0)
					bb[i] = 3;
		tt_run(ops[k], "int32", a, "int16", bb, "int32", N, y);
		for (int i = 0; i < N; i++) {
			ck_assert(ref_op(ops[k], a[i], bb[i], &want));
			ck_assert_msg(y[i] == want, "%s(%d, %d) = %lld, want "
				      "%lld", ops[k], a[i], bb[i],
				      (long long)y[i], (long long)want);
		}
	}
}
END_TEST

/* ---- TensorScalar on integer data ----------------------------------------- */

static int ts_run(const char *dt, const void *a, int n, const char *out_dt,
		  const char *keys, int64_t *y, lm_error *err)
{
	const char *dts[1] = { dt };
	const void *dat[1] = { a };
	char *op = lm_xasprintf("\"opcode\":\"TensorScalar\",%s,\"ins\":[%s],",
				keys, AP("s0", dt, 1, n, 0));
	/* the keys each TensorScalar carries, defaulted when not given */
	static const char *const dflt[] = { "reverse0", "reverse1", "const0",
					    "const1" };
	for (int k = 0; k < 4; k++)
		if (!strstr(keys, dflt[k])) {
			char *o = lm_xasprintf("%s\"%s\":%s,", op, dflt[k],
					       k < 2 ? "false" : "0");
			free(op);
			op = o;
		}
	char *op2 = lm_xasprintf("%s\"outs\":[%s]", op, AP("ys", out_dt, 1, n,
							   0));
	ls_result r;
	int rc = run_op(1, dts, dat, 1, n, out_dt, op2, &r, err);
	if (rc == 0) {
		for (int i = 0; i < n; i++)
			y[i] = out_int(&r, i);
		ls_result_free(&r);
	}
	free(op);
	free(op2);
	return rc;
}

/* Each step is fitted into the output dtype: (x + 100) saturates in int8
** before the subtract; reverse0 makes the constant the left operand. */
START_TEST(test_ts_int_steps)
{
	static const int8_t a[4] = { 100, -100, 27, 0 };
	int64_t y[4];
	lm_error err;

	ck_assert_msg(ts_run("int8", a, 4, "int8", "\"op0\":\"add\","
			     "\"const0\":100,\"op1\":\"subtract\","
			     "\"const1\":100", y, &err) == 0, "%s", err.msg);
	/* 100 + 100 -> 127, - 100 = 27 (not 100: the step saturated) */
	ck_assert(y[0] == 27 && y[1] == -100 && y[2] == 27 && y[3] == 0);
	ck_assert_msg(ts_run("int8", a, 4, "int32", "\"op0\":\"subtract\","
			     "\"const0\":1,\"reverse0\":true,\"op1\":"
			     "\"logical_shift_left\",\"const1\":24", y,
			     &err) == 0, "%s", err.msg);
	/* (1 - x) << 24 at 32 bits */
	ck_assert_int_eq(y[0], (int64_t)(int32_t)((uint32_t)(1 - 100) << 24));
	ck_assert_int_eq(y[1], (int64_t)(int32_t)((uint32_t)101 << 24));
	ck_assert_int_eq(y[3], 1 << 24);
	ck_assert_msg(ts_run("int8", a, 4, "uint8", "\"op0\":\"is_ge\","
			     "\"const0\":27,\"op1\":\"bypass\"", y, &err) == 0,
		      "%s", err.msg);
	ck_assert(y[0] == 1 && y[1] == 0 && y[2] == 1 && y[3] == 0);
}
END_TEST

/*
** A step with a uint64 operand is unsigned 64-bit: exact while every
** value of a signed operand is >= 0 (uint64 2^63 + int8 5); a negative
** one (int8 -1 + uint64 5 would be 2^64 + 4, saturated to UINT64_MAX;
** is_gt(-1, 5) would be 1; uint64 5 + const -1 likewise) is refused by
** name at the element, not computed.
*/
START_TEST(test_int_uint64_signed)
{
	static const uint64_t u[2] = { 9223372036854775808ULL, 5 };
	static const int8_t pos[2] = { 5, 0 }, neg[2] = { 3, -1 };
	static const uint64_t u5[2] = { 5, 6 };
	static const char *const dts[2] = { "int8", "uint64" };
	const void *dat[2] = { neg, u };
	int64_t y[2];
	ls_result r;
	lm_error err;
	char *op;

	tt_run("add", "uint64", u, "int8", pos, "uint64", 2, y);
	ck_assert((uint64_t)y[0] == 9223372036854775813ULL && y[1] == 5);
	tt_run("is_gt", "uint64", u, "int8", pos, "uint8", 2, y);
	ck_assert(y[0] == 1 && y[1] == 1);
	tt_run("bitwise_and", "int8", neg, "uint64", u, "uint64", 2, y);
	ck_assert(y[0] == 0 && y[1] == 5);   /* patterns: -1 & 5 = 5 */
	for (int k = 0; k < 2; k++) {
		op = tt_op(k ? "is_gt" : "add", "int8", "uint64", "uint64", 1,
			   2);
		ck_assert(run_op(2, (const char *const *)dts, dat, 1, 2,
				 "uint64", op, &r, &err) != 0);
		ck_assert_msg(strstr(err.msg, "of -1 and a uint64 operand at "
				     "element 1 is not modelled"), "%s",
			      err.msg);
		free(op);
	}
	ck_assert(ts_run("uint64", u5, 2, "uint64", "\"op0\":\"add\","
			 "\"const0\":-1,\"op1\":\"bypass\"", y, &err) != 0);
	ck_assert_msg(strstr(err.msg, "integer add of -1 and a uint64 operand "
			     "at element 0"), "%s", err.msg);
}
END_TEST

/* Refusals by name: ops with no integer meaning, non-integer constants,
** divide by zero, bit ops on float data. */
START_TEST(test_int_refused)
{
	static const int32_t a[2] = { 1, 2 }, z[2] = { 1, 0 };
	static const float f[2] = { 1.0f, 2.0f };
	const char *dts[2] = { "int32", "int32" };
	const void *dat[2] = { a, z };
	int64_t y[2];
	ls_result r;
	lm_error err;
	char *op;

	ck_assert_int_eq(ts_run("int32", a, 2, "int32", "\"op0\":\"pow\","
				"\"const0\":2,\"op1\":\"bypass\"", y, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "ALU op0 'pow' is not modelled on integer "
			   "data (TensorScalar)");
	ck_assert_int_eq(ts_run("int32", a, 2, "int32", "\"op0\":\"add\","
				"\"const0\":1,\"op1\":\"rsqrt\"", y, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "ALU op1 'rsqrt' is not modelled");
	ck_assert_int_eq(ts_run("int32", a, 2, "int32", "\"op0\":\"add\","
				"\"const0\":1.5,\"op1\":\"bypass\"", y, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "const0 1.5 is not a 64-bit integer");

	op = tt_op("average", "int32", "int32", "int32", 1, 2);
	ck_assert_int_eq(run_op(2, dts, dat, 1, 2, "int32", op, &r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "ALU op 'average' is not modelled on "
			   "integer data (TensorTensor)");
	free(op);
	op = tt_op("divide", "int32", "int32", "int32", 1, 2);
	ck_assert_int_eq(run_op(2, dts, dat, 1, 2, "int32", op, &r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "integer divide by zero at element 1");
	free(op);

	/* read and written back, refused by name before time 0 */
	static const char *const unmodelled[] = { "abs_max", "abs_min",
						  "elemwise_mul", "mod_int" };
	for (int k = 0; k < 4; k++) {
		char want[100];
		op = tt_op(unmodelled[k], "int32", "int32", "int32", 1, 2);
		ck_assert_int_eq(run_op(2, dts, dat, 1, 2, "int32", op, &r,
					&err), LM_EINPUT);
		snprintf(want, sizeof want, "key 'op' = \"%s\" is not modelled "
			 "by the simulator", unmodelled[k]);
		ck_assert_contains(err.msg, want);
		ck_assert_int_eq(lm_aluop_parse(unmodelled[k]), LM_ALU_ABS_MAX + k);
		ck_assert_str_eq(lm_aluop_name(LM_ALU_ABS_MAX + k), unmodelled[k]);
		free(op);
	}

	dts[0] = dts[1] = "float32";
	dat[0] = dat[1] = f;
	op = tt_op("bitwise_and", "float32", "float32", "float32", 1, 2);
	ck_assert_int_eq(run_op(2, dts, dat, 1, 2, "float32", op, &r, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "ALU op 'bitwise_and' is not supported on "
			   "float data");
	free(op);
}
END_TEST

/* ---- TensorScalarPtr on integer data, integer DMA ------------------------ */

/*
** x [P, F + 2] int32 loaded into SB xs: columns 0..F-1 the data, column F
** the scalar s0, column F + 1 s1 (both int32); one TensorScalarPtr writes
** ys [P, F] (out_dt), stored into y.
*/
static int tsp_int(const char *out_dt, int P, int F, const char *keys,
		   const int32_t *x, int64_t *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	ls_tensors host = {0, NULL};
	int64_t shape[2] = { P, F + 2 };
	int W = F + 2, rc;
	char data[200], s0[200], s1[200];

	snprintf(data, sizeof data, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":0,\"ap\":[[%d,%d],[1,%d]],"
		 "\"dtype\":\"int32\"}", W, P, F);
	snprintf(s0, sizeof s0, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":%d,\"ap\":[[%d,%d],[1,1]],"
		 "\"dtype\":\"int32\"}", F, W, P);
	snprintf(s1, sizeof s1, "{\"kind\":\"physical_ap\",\"memsetref\":"
		 "\"xs\",\"memref\":\"xs\",\"offset\":%d,\"ap\":[[%d,%d],[1,1]],"
		 "\"dtype\":\"int32\"}", F + 1, W, P);
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "int32", P, W);
	tb_dram(&t, "y", "ExternalOutput", out_dt, P, F);
	tb_sb(&t, "xs", "int32", P, W);
	tb_sb(&t, "ys", out_dt, P, F);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "int32", P, W, 0), AP("xs", "int32", P, W, 0));
	tb_inst(&t, "{\"opcode\":\"TensorScalarPtr\",\"name\":\"tsp\","
		"\"engine\":\"DVE\",\"ins\":[%s,%s,%s],\"outs\":[%s],%s,"
		"\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]}", data, s0, s1,
		AP("ys", out_dt, P, F, 0), keys);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"tsp\"]}", AP("ys", out_dt, P, F, 0), AP("y", out_dt, P, F, 0));
	m = tb_module(&t, 0);
	ls_tensors_add(&host, "x", LM_DT_INT32, shape, 2, x);
	rc = ls_run(m, &host, NULL, &r, err);
	if (rc == 0) {
		for (int i = 0; i < P * F; i++)
			y[i] = out_int(&r, i);
		ls_result_free(&r);
	}
	ls_tensors_free(&host);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* The scalars apply per partition; (x & s0) << s1, then x - s0 into
** uint8 saturating at 0 with reverse1 making s1 the shifted value. */
START_TEST(test_tsp_int)
{
	static const int32_t x[2 * 6] = {
		0x7f, 0x13, -1, 0x100, /* s0 */ 0x0f, /* s1 */ 4,
		5, 6, 7, 8, /* s0 */ 6, /* s1 */ 30,
	};
	int64_t y[8];
	lm_error err;

	ck_assert_msg(tsp_int("int32", 2, 4, "\"op0\":\"bitwise_and\","
			      "\"reverse0\":false,\"op1\":"
			      "\"logical_shift_left\",\"reverse1\":false", x,
			      y, &err) == 0, "%s", err.msg);
	ck_assert(y[0] == 0xf0 && y[1] == 0x30 && y[2] == 0xf0 && y[3] == 0);
	/* (5 & 6) << 30 = 4 << 30 = 2^32: the low 32 bits are 0 */
	ck_assert(y[4] == 0 && y[5] == (int64_t)(int32_t)0x80000000u &&
		  y[6] == (int64_t)(int32_t)0x80000000u && y[7] == 0);
	ck_assert_msg(tsp_int("uint8", 2, 4, "\"op0\":\"subtract\","
			      "\"reverse0\":false,\"op1\":\"arith_shift_right\","
			      "\"reverse1\":true", x, y, &err) == 0, "%s",
		      err.msg);
	/* row 0: s1 >> (x - 15) with x - 15 fitted into uint8 first:
	** 0x7f - 15 = 112 -> 4 >> 112 = 0; 0x13 - 15 = 4 -> 4 >> 4 = 0;
	** -1 - 15 saturates to 0 -> 4; 256 - 15 = 241 -> 0 */
	ck_assert(y[0] == 0 && y[1] == 0 && y[2] == 4 && y[3] == 0);
	/* row 1: 5 - 6 -> 0, 30 >> 0 = 30; 6 - 6 = 0 -> 30; 1 -> 15; 2 -> 7 */
	ck_assert(y[4] == 30 && y[5] == 30 && y[6] == 15 && y[7] == 7);
	ck_assert_int_eq(tsp_int("int32", 2, 4, "\"op0\":\"pow\","
				 "\"reverse0\":false,\"op1\":\"bypass\","
				 "\"reverse1\":false", x, y, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "ALU op0 'pow' is not modelled on integer "
			   "data (TensorScalarPtr)");
}
END_TEST

/* A DMA between integer dtypes converts the exact value, saturating (not
** through float32: 2^24 + 1 stays). */
START_TEST(test_dma_int_convert)
{
	static const int32_t a[4] = { 16777217, -5, 300, -2147483647 - 1 };
	const char *dts[1] = { "int32" };
	const void *dat[1] = { a };
	ls_result r;
	lm_error err;
	char *op;
	static const struct { const char *dt; int64_t want[4]; } c[] = {
		{ "int64", { 16777217, -5, 300, -2147483647LL - 1 } },
		{ "uint32", { 16777217, 0, 300, 0 } },
		{ "int8", { 127, -5, 127, -128 } },
		{ "uint16", { 65535, 0, 300, 0 } },
	};
	for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
		op = lm_xasprintf("\"opcode\":\"TensorCopy\",\"ins\":[%s],"
				  "\"outs\":[%s]", AP("s0", "int32", 1, 4, 0),
				  AP("ys", c[k].dt, 1, 4, 0));
		ck_assert_msg(run_op(1, dts, dat, 1, 4, c[k].dt, op, &r, &err)
			      == 0, "%s", err.msg);
		for (int i = 0; i < 4; i++)
			ck_assert_msg(out_int(&r, i) == c[k].want[i],
				      "%s [%d] = %lld", c[k].dt, i,
				      (long long)out_int(&r, i));
		ls_result_free(&r);
		free(op);
	}
}
END_TEST

/*
** TensorReduce on integer data, [2, 3] int8 along X into [2, 1] of
** out_dt: the fold saturates at every step in the output dtype.
*/
static int reduce_int(const char *keys, const char *out_dt, const int8_t *x,
		      int64_t *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	ls_tensors host = {0, NULL};
	int64_t shape[2] = { 2, 3 };
	int rc;

	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "int8", 2, 3);
	tb_dram(&t, "y", "ExternalOutput", out_dt, 2, 1);
	tb_sb(&t, "xs", "int8", 2, 3);
	tb_sb(&t, "ys", out_dt, 2, 1);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", "int8", 2, 3, 0), AP("xs", "int8", 2, 3, 0));
	tb_inst(&t, "{\"opcode\":\"TensorReduce\",\"name\":\"red\",\"engine\":"
		"\"DVE\",\"ins\":[%s],\"outs\":[%s],\"axis\":\"X\",%s,\"wait\":"
		"[{\"semaphore\":\"s0\",\"value\":1}]}",
		AP("xs", "int8", 2, 3, 0), AP("ys", out_dt, 2, 1, 0), keys);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"red\"]}", AP("ys", out_dt, 2, 1, 0), AP("y", out_dt, 2, 1, 0));
	m = tb_module(&t, 0);
	ls_tensors_add(&host, "x", LM_DT_INT8, shape, 2, x);
	rc = ls_run(m, &host, NULL, &r, err);
	if (rc == 0) {
		y[0] = out_int(&r, 0);
		y[1] = out_int(&r, 1);
		ls_result_free(&r);
	}
	ls_tensors_free(&host);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

START_TEST(test_reduce_int)
{
	static const int8_t x[6] = { 100, 100, -100, -128, 1, -1 };
	int64_t y[2];
	lm_error err;

	ck_assert_msg(reduce_int("\"op\":\"add\"", "int8", x, y, &err) == 0,
		      "%s", err.msg);
	ck_assert(y[0] == 27 && y[1] == -128);  /* 100 + 100 saturates */
	ck_assert_msg(reduce_int("\"op\":\"add\"", "int32", x, y, &err) == 0,
		      "%s", err.msg);
	ck_assert(y[0] == 100 && y[1] == -128);
	ck_assert_msg(reduce_int("\"op\":\"add\",\"negate\":true", "int8", x,
				 y, &err) == 0, "%s", err.msg);
	ck_assert(y[0] == -27 && y[1] == 127);  /* -(-128) saturates */
	ck_assert_msg(reduce_int("\"op\":\"subtract\"", "int16", x, y, &err)
		      == 0, "%s", err.msg);
	ck_assert(y[0] == 100 && y[1] == -128);
	ck_assert_msg(reduce_int("\"op\":\"mult\"", "int16", x, y, &err) == 0,
		      "%s", err.msg);
	ck_assert(y[0] == -32768 && y[1] == 128);
	ck_assert_msg(reduce_int("\"op\":\"max\"", "uint8", x, y, &err) == 0,
		      "%s", err.msg);
	/* the seed is fitted first: -128 -> 0, then max(0, 1, -1) */
	ck_assert(y[0] == 100 && y[1] == 1);
	ck_assert_int_eq(reduce_int("\"op\":\"average\"", "int8", x, y, &err),
			 LM_ECHECK);
	ck_assert_contains(err.msg, "op 'average' is not modelled on integer "
			   "data (TensorReduce)");
}
END_TEST

/* Memset of an integer value into an integer dtype is exact (16777217
** is not a float32) and saturates; a fraction goes through float32. */
START_TEST(test_memset_int)
{
	static const struct { const char *dt, *val; int64_t want; } c[] = {
		{ "int32", "16777217", 16777217 },
		{ "int64", "-9007199254740991", -9007199254740991LL },
		{ "uint8", "300", 255 },
		{ "int8", "-300", -128 },
		{ "int32", "2.5", 2 },
	};
	for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
		tb t;
		ls_result r;
		lm_error err;
		lm_module *m;
		tb_init(&t);
		tb_dram(&t, "y", "ExternalOutput", c[k].dt, 1, 2);
		tb_sb(&t, "ys", c[k].dt, 1, 2);
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"ms\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":%s}",
			AP("ys", c[k].dt, 1, 2, 0), c[k].val);
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":"
			"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
			"\"dependencies\":[\"ms\"]}", AP("ys", c[k].dt, 1, 2, 0),
			AP("y", c[k].dt, 1, 2, 0));
		m = tb_module(&t, 0);
		ck_assert_msg(tb_run1(m, NULL, 0, 0, NULL, &r, &err) == 0, "%s",
			      err.msg);
		ck_assert_msg(out_int(&r, 0) == c[k].want && out_int(&r, 1) ==
			      c[k].want, "%s %s: %lld", c[k].dt, c[k].val,
			      (long long)out_int(&r, 0));
		ls_result_free(&r);
		lm_module_free(m);
		tb_free(&t);
	}
	/* past 2^53 the number no longer names one integer: refused */
	{
		tb t;
		ls_result r;
		lm_error err;
		lm_module *m;
		tb_init(&t);
		tb_dram(&t, "y", "ExternalOutput", "uint64", 1, 2);
		tb_sb(&t, "ys", "uint64", 1, 2);
		tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"ms\",\"engine\":\"Pool\",\"outs\":[%s],\"value\":"
			"18446744073709551615}", AP("ys", "uint64", 1, 2, 0));
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":"
			"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
			"\"dependencies\":[\"ms\"]}", AP("ys", "uint64", 1, 2, 0),
			AP("y", "uint64", 1, 2, 0));
		m = tb_module(&t, 0);
		ck_assert_int_ne(tb_run1(m, NULL, 0, 0, NULL, &r, &err), 0);
		ck_assert_contains(err.msg, "is beyond 2^53: the JSON number "
				   "does not hold an integer that large exactly "
				   "(into uint64)");
		lm_module_free(m);
		tb_free(&t);
	}
}
END_TEST

/* ---- float8 spellings through the ops ------------------------------------- */

/* Output element i of y as float (by its dtype) and as raw byte. */
static uint8_t out_byte(const ls_result *r, int64_t i)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, "y");
	ck_assert_ptr_nonnull(t);
	return ((const uint8_t *)t->data)[i];
}

/*
** DMA between two spellings of one format is exact for all 256 codes;
** TensorTensor add on float8_e5m2 data computes in float32 and rounds
** once into float8_e4m3fn (saturating) / float8_e5m2 (to Inf).
*/
START_TEST(test_f8_through_ops)
{
	uint8_t codes[256], a[4] = { 0x7b, 0x3c, 0x01, 0x80 };
	uint8_t b[4] = { 0x7b, 0x3d, 0x01, 0x80 };
	const char *dts[2] = { "float8_e4m3", "float8_e4m3" };
	const void *dat[2] = { codes, codes };
	ls_result r;
	lm_error err;
	char *op;

	for (int i = 0; i < 256; i++)
		codes[i] = (uint8_t)i;
	op = lm_xasprintf("\"opcode\":\"TensorCopy\",\"ins\":[%s],\"outs\":"
			  "[%s]", AP("s0", "float8_e4m3", 1, 256, 0),
			  AP("ys", "float8_e4m3fn", 1, 256, 0));
	ck_assert_msg(run_op(1, dts, dat, 1, 256, "float8_e4m3fn", op, &r,
			     &err) == 0, "%s", err.msg);
	for (int i = 0; i < 256; i++)
		ck_assert_uint_eq(out_byte(&r, i), i);
	ls_result_free(&r);
	free(op);

	dts[0] = dts[1] = "float8_e5m2";
	dat[0] = a;
	dat[1] = b;
	op = tt_op("add", "float8_e5m2", "float8_e5m2", "float8_e5m2", 1, 4);
	ck_assert_msg(run_op(2, dts, dat, 1, 4, "float8_e5m2", op, &r, &err)
		      == 0, "%s", err.msg);
	/* 57344 + 57344 overflows to Inf; 1 + 1.25 = 2.25 -> 2 (tie, even);
	** 2^-16 + 2^-16 = 2^-15 (0x02); -0 + -0 = -0 */
	ck_assert_uint_eq(out_byte(&r, 0), 0x7c);
	ck_assert_uint_eq(out_byte(&r, 1), 0x40);
	ck_assert_uint_eq(out_byte(&r, 2), 0x02);
	ck_assert_uint_eq(out_byte(&r, 3), 0x80);
	ls_result_free(&r);
	free(op);
	op = tt_op("add", "float8_e5m2", "float8_e5m2", "float8_e4m3fn", 1, 4);
	ck_assert_msg(run_op(2, dts, dat, 1, 4, "float8_e4m3fn", op, &r,
			     &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(out_byte(&r, 0), 0x7e); /* saturates at 448 */
	ck_assert_uint_eq(out_byte(&r, 1), 0x41); /* 2.25 is exact: 2 + 2/8 */
	ck_assert_uint_eq(out_byte(&r, 2), 0x00); /* 2^-15 < 2^-10: to 0 */
	ck_assert_uint_eq(out_byte(&r, 3), 0x80);
	ls_result_free(&r);
	free(op);
}
END_TEST

/*
** Matmult, stationary float8_e4m3fn [K=2, M=1], moving float8_e5m2
** [2, N=2]: out[n] = sum_k st[k] * mv[k][n] in float32. Column 0:
** 2^-9 * 2^-16 = 2^-25 (exact in float32, 0 in either float8); column 1:
** 448 * 57344 = 25690112, beyond both float8 ranges: the inputs widen
** exactly and the accumulator is float32. A third start=false matmul adds
** the same product again: 2^-24 and 51380224.
*/
START_TEST(test_matmul_f8)
{
	static const uint8_t st[2] = { 0x01, 0x7e };       /* 2^-9, 448 */
	static const uint8_t mv[4] = { 0x01, 0x00,        /* 2^-16, 0 */
				       0x00, 0x7b };      /* 0, 57344 */
	ls_tensors host = {0, NULL};
	int64_t s1[2] = { 2, 1 }, s2[2] = { 2, 2 };
	ls_result r;
	lm_error err;
	lm_module *m;
	tb t;

	tb_init(&t);
	tb_dram(&t, "a", "ExternalInput", "float8_e4m3fn", 2, 1);
	tb_dram(&t, "b", "ExternalInput", "float8_e5m2", 2, 2);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, 2);
	tb_sb(&t, "as", "float8_e4m3fn", 2, 1);
	tb_sb(&t, "bs", "float8_e5m2", 2, 2);
	tb_sb(&t, "ys", "float32", 1, 2);
	tb_psum(&t, "acc", 1, 2, 0);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"la\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("a", "float8_e4m3fn", 2, 1, 0),
		AP("as", "float8_e4m3fn", 2, 1, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"lb\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("b", "float8_e5m2", 2, 2, 0), AP("bs", "float8_e5m2", 2, 2, 0));
	for (int k = 0; k < 2; k++)
		tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm%d\","
			"\"engine\":\"PE\",\"ins\":[%s,%s],\"outs\":[%s],"
			"\"start_tensor_calc\":%s,\"wait\":[{\"semaphore\":"
			"\"s0\",\"value\":2}]%s}", k,
			AP("as", "float8_e4m3fn", 2, 1, 0),
			AP("bs", "float8_e5m2", 2, 2, 0),
			AP("acc", "float32", 1, 2, 0), k ? "false" : "true",
			k ? ",\"dependencies\":[\"mm0\"]" : "");
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\",\"engine\":"
		"\"Activation\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"mm1\"]}", AP("acc", "float32", 1, 2, 0),
		AP("ys", "float32", 1, 2, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"ev\"]}", AP("ys", "float32", 1, 2, 0),
		AP("y", "float32", 1, 2, 0));
	m = tb_module(&t, 0);
	ls_tensors_add(&host, "a", LM_DT_FLOAT8_E4M3FN, s1, 2, st);
	ls_tensors_add(&host, "b", LM_DT_FLOAT8_E5M2, s2, 2, mv);
	ck_assert_msg(ls_run(m, &host, NULL, &r, &err) == 0, "%s", err.msg);
	ck_assert(tb_out(&r, "y", 0) == 0x1p-24f);
	ck_assert(tb_out(&r, "y", 1) == 51380224.0f);
	ls_result_free(&r);
	ls_tensors_free(&host);
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/*
** float8e5 and float8_e5m2 are one format: a copy between them moves the
** byte, all 256 codes, the signalling NaNs 0x7d / 0xfd (quiet bit clear)
** included -- a conversion through float32 would quiet them to 0x7f /
** 0xff.
*/
START_TEST(test_f8_e5_spellings_copy)
{
	static const char *const pairs[2][2] = {
		{ "float8e5", "float8_e5m2" }, { "float8_e5m2", "float8e5" },
	};
	uint8_t codes[256];
	const void *dat[1] = { codes };
	ls_result r;
	lm_error err;

	for (int i = 0; i < 256; i++)
		codes[i] = (uint8_t)i;
	for (int k = 0; k < 2; k++) {
		const char *dts[1] = { pairs[k][0] };
		char *op = lm_xasprintf("\"opcode\":\"TensorCopy\",\"ins\":[%s],"
					"\"outs\":[%s]", AP("s0", pairs[k][0],
					1, 256, 0), AP("ys", pairs[k][1], 1,
					256, 0));
		ck_assert_msg(run_op(1, dts, dat, 1, 256, pairs[k][1], op, &r,
				     &err) == 0, "%s", err.msg);
		for (int i = 0; i < 256; i++)
			ck_assert_msg(out_byte(&r, i) == i, "%s to %s: 0x%02x "
				      "became 0x%02x", pairs[k][0], pairs[k][1],
				      i, out_byte(&r, i));
		ls_result_free(&r);
		free(op);
	}
}
END_TEST

/*
** Matmult of a [2, 1] of dtype da by a [2, 2] of dtype db (raw bytes a,
** b) into float32 y [1, 2]. Returns the status.
*/
static int mm_int(const char *da, const void *a, const char *db,
		  const void *b, ls_result *r, lm_error *err)
{
	ls_tensors host = {0, NULL};
	int64_t s1[2] = { 2, 1 }, s2[2] = { 2, 2 };
	lm_module *m;
	tb t;
	int rc;

	tb_init(&t);
	tb_dram(&t, "a", "ExternalInput", da, 2, 1);
	tb_dram(&t, "b", "ExternalInput", db, 2, 2);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, 2);
	tb_sb(&t, "as", da, 2, 1);
	tb_sb(&t, "bs", db, 2, 2);
	tb_sb(&t, "ys", "float32", 1, 2);
	tb_psum(&t, "acc", 1, 2, 0);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"la\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("a", da, 2, 1, 0), AP("as", da, 2, 1, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"lb\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("b", db, 2, 2, 0), AP("bs", db, 2, 2, 0));
	tb_inst(&t, "{\"opcode\":\"Matmult\",\"name\":\"mm\",\"engine\":\"PE\","
		"\"ins\":[%s,%s],\"outs\":[%s],\"start_tensor_calc\":true,"
		"\"wait\":[{\"semaphore\":\"s0\",\"value\":2}]}",
		AP("as", da, 2, 1, 0), AP("bs", db, 2, 2, 0),
		AP("acc", "float32", 1, 2, 0));
	tb_inst(&t, "{\"opcode\":\"TensorCopy\",\"name\":\"ev\",\"engine\":"
		"\"Activation\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"mm\"]}", AP("acc", "float32", 1, 2, 0),
		AP("ys", "float32", 1, 2, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"ev\"]}", AP("ys", "float32", 1, 2, 0),
		AP("y", "float32", 1, 2, 0));
	m = tb_module(&t, 0);
	ls_tensors_add(&host, "a", lm_dtype_parse(da), s1, 2, a);
	ls_tensors_add(&host, "b", lm_dtype_parse(db), s2, 2, b);
	rc = ls_run(m, &host, NULL, r, err);
	ls_tensors_free(&host);
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/*
** The PE array takes float data and uint8 only: uint8 is read as its
** value (200 * 250 + 3 * 7 = 50021, exact in float32); an int8 (or any
** other integer) operand is refused by name, not read through float32.
*/
START_TEST(test_matmul_int)
{
	static const uint8_t ua[2] = { 200, 3 }, ub[4] = { 250, 1, 7, 2 };
	static const int8_t ia[2] = { -2, 3 };
	static const int32_t ib[4] = { 1, 2, 3, 4 };
	ls_result r;
	lm_error err;

	ck_assert_msg(mm_int("uint8", ua, "uint8", ub, &r, &err) == 0, "%s",
		      err.msg);
	ck_assert(tb_out(&r, "y", 0) == 50021.0f);
	ck_assert(tb_out(&r, "y", 1) == 206.0f);
	ls_result_free(&r);
	ck_assert(mm_int("int8", ia, "uint8", ub, &r, &err) != 0);
	ck_assert_msg(strstr(err.msg, "ins[0] int8: integer data other than "
			     "uint8 is not modelled for the PE array"), "%s",
		      err.msg);
	ck_assert(mm_int("uint8", ua, "int32", ib, &r, &err) != 0);
	ck_assert_msg(strstr(err.msg, "ins[1] int32"), "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("intalu");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_tt_int32_arith);
	tcase_add_test(tc, test_tt_bits);
	tcase_add_test(tc, test_tt_int64_mod);
	tcase_add_test(tc, test_tt_int64_divide);
	tcase_add_test(tc, test_tt_mixed);
	tcase_add_test(tc, test_tt_random);
	tcase_add_test(tc, test_ts_int_steps);
	tcase_add_test(tc, test_int_uint64_signed);
	tcase_add_test(tc, test_int_refused);
	tcase_add_test(tc, test_tsp_int);
	tcase_add_test(tc, test_dma_int_convert);
	tcase_add_test(tc, test_reduce_int);
	tcase_add_test(tc, test_memset_int);
	tcase_add_test(tc, test_f8_through_ops);
	tcase_add_test(tc, test_f8_e5_spellings_copy);
	tcase_add_test(tc, test_matmul_f8);
	tcase_add_test(tc, test_matmul_int);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_dma.c -- the DMA copy modes in the simulator: DMACopy's
** Transpose (every TransposeOps permutation), Replicate and CCE (with
** constants), and the descriptors DMADescriptorTranspose and
** DMADescriptorReplicate fired from a DMA block. Each has a case
** computed by hand that a wrong element order fails, a randomized
** comparison with a plain-loop reference written here, and its errors:
** the refusals before time 0 (a mode or a key value not modelled), the
** verifier's rows and the run errors of operands of the wrong shape.
** The indirect moves IndirectLoad, IndirectCopy and Gather likewise (an
** index out of range is named by its value), and the conversions on the
** way into another dtype.
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "sim.h"
#include "simcheck.h"
#include "json.h"
#include "linker.h"
#include "diff.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- wire text ---------------------------------------------------------- */

/* A 4-D DRAM operand of contiguous row-major dims n (one of 8 rotating
** buffers). */
static const char *ap4(const char *name, const int64_t n[4])
{
	static char bufs[8][400];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, 400, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
		 "\"memref\":\"%s\",\"offset\":0,\"ap\":[[%lld,%lld],[%lld,"
		 "%lld],[%lld,%lld],[1,%lld]],\"dtype\":\"float32\"}", name,
		 name, (long long)(n[1] * n[2] * n[3]), (long long)n[0],
		 (long long)(n[2] * n[3]), (long long)n[1], (long long)n[3],
		 (long long)n[2], (long long)n[3]);
	return b;
}

/* A 2-D DRAM operand [rows, cols] from element off. */
static const char *ap2(const char *name, int rows, int cols, int off)
{
	return APS(name, "float32", rows, cols, off, cols);
}

/* A DMACopy on SP of queue q0 (more: its mode keys). */
static void dmacopy(tb *t, const char *ins, const char *out,
		    const char *more)
{
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"c\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]%s}", ins, out,
		more);
}

/* A block b of one descriptor DMADescriptor<kind> and its trigger. */
static void desc_block(tb *t, const char *kind, const char *in,
		       const char *out, const char *more)
{
	tb_inst(t, "{\"opcode\":\"DMABlock\",\"name\":\"b\",\"engine\":\"DMA\","
		"\"ins\":[],\"outs\":[],\"blocks\":[{\"name\":\"b_b\","
		"\"instructions\":[{\"opcode\":\"DMADescriptor%s\",\"name\":"
		"\"d\",\"engine\":\"DMA\",\"ins\":[%s],\"outs\":[%s]%s}]}]}",
		kind, in, out, more);
	tb_inst(t, "{\"opcode\":\"DMATrigger\",\"name\":\"t\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"dma_blocks\":[\"b\"],\"ins\":[],"
		"\"outs\":[]}");
}

/* Run m (freed) on input x of n elements; 0 or the error in err. */
static int run(lm_module *m, const float *x, int n, ls_result *r,
	       lm_error *err)
{
	int rc = tb_run1(m, x, 1, n, NULL, r, err);
	lm_module_free(m);
	return rc;
}

static void run_ok(lm_module *m, const float *x, int n, ls_result *r)
{
	lm_error err;
	ck_assert_msg(run(m, x, n, r, &err) == 0, "%s", err.msg);
}

/* Run m (freed): a run error containing msg. */
static void run_fails(lm_module *m, const float *x, int n, const char *msg)
{
	ls_result r;
	lm_error err;
	ck_assert_int_ne(run(m, x, n, &r, &err), 0);
	ck_assert_contains(err.msg, msg);
}

/* ---- transpose -------------------------------------------------------- */

/* The TransposeOps spellings, ordinal order; None is WZYX. */
static const char *const tops[14] = {
	"None", "WZXY", "WXZY", "WYXZ", "ZWYX", "ZYWX", "ZYXW", "YXWZ",
	"YXZW", "YWZX", "XWZY", "XZYW", "XYZW", "XYWZ",
};

/* A transpose of x (dims sn) into y by op (DMACopy or descriptor). */
static lm_module *transpose_module(int op, const int64_t sn[4],
				   const int64_t dn[4], int as_desc)
{
	tb t;
	char more[80];
	int64_t cnt = sn[0] * sn[1] * sn[2] * sn[3];
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 1, (int)cnt);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, (int)cnt);
	if (as_desc) {
		snprintf(more, sizeof more, ",\"transpose_op\":\"%s\"",
			 tops[op]);
		desc_block(&t, "Transpose", ap4("x", sn), ap4("y", dn), more);
	} else {
		snprintf(more, sizeof more, ",\"mode\":\"Transpose\","
			 "\"transpose_op\":\"%s\"", tops[op]);
		dmacopy(&t, ap4("x", sn), ap4("y", dn), more);
	}
	return tb_module(&t, 0);
}

/*
** x = [[0 1 2] [3 4 5]] as [W 2, Z 1, Y 1, X 3]; XYZW reverses the axes,
** y [3, 1, 1, 2] = x's transpose [0 3 1 4 2 5] (an identity copy or a
** wrong walk gives another order), by DMACopy and by the descriptor.
*/
START_TEST(test_transpose_hand)
{
	static const float x[6] = { 0, 1, 2, 3, 4, 5 };
	static const float want[6] = { 0, 3, 1, 4, 2, 5 };
	const int64_t sn[4] = { 2, 1, 1, 3 }, dn[4] = { 3, 1, 1, 2 };
	for (int as_desc = 0; as_desc < 2; as_desc++) {
		ls_result r;
		run_ok(transpose_module(12, sn, dn, as_desc), x, 6, &r);
		for (int i = 0; i < 6; i++)
			ck_assert_same_f(tb_out(&r, "y", i), want[i]);
		ck_assert_int_eq(r.cores[0].dma_transfers, 1);
		ls_result_free(&r);
	}
}
END_TEST

/*
** Each of the 14 permutations on random dims and data against a
** reference that reads the permutation off the spelling (destination
** axis k is letter k of the name, found in "WZYX") and scatters every
** source element to its destination position.
*/
START_TEST(test_transpose_random)
{
	uint32_t seed = 12345;
	for (int op = 0; op < 14; op++)
		for (int rep = 0; rep < 3; rep++) {
			const char *nm = op ? tops[op] : "WZYX";
			int64_t sn[4], dn[4], ax[4], cnt = 1, s[4];
			float x[256], want[256];
			ls_result r;
			for (int k = 0; k < 4; k++) {
				seed = seed * 1103515245u + 12345u;
				sn[k] = 1 + (seed >> 16) % 4;
				cnt *= sn[k];
			}
			for (int k = 0; k < 4; k++) {
				ax[k] = strchr("WZYX", nm[k]) - "WZYX";
				dn[k] = sn[ax[k]];
			}
			tb_fill(x, cnt, seed);
			for (s[0] = 0; s[0] < sn[0]; s[0]++)
			for (s[1] = 0; s[1] < sn[1]; s[1]++)
			for (s[2] = 0; s[2] < sn[2]; s[2]++)
			for (s[3] = 0; s[3] < sn[3]; s[3]++) {
				int64_t si = ((s[0] * sn[1] + s[1]) * sn[2] +
					      s[2]) * sn[3] + s[3];
				int64_t di = ((s[ax[0]] * dn[1] + s[ax[1]]) *
					      dn[2] + s[ax[2]]) * dn[3] +
					     s[ax[3]];
				want[di] = x[si];
			}
			run_ok(transpose_module(op, sn, dn, rep == 2), x,
			       (int)cnt, &r);
			for (int64_t i = 0; i < cnt; i++)
				ck_assert_msg(tb_bits(tb_out(&r, "y", i)) ==
					      tb_bits(want[i]), "%s dims %lld "
					      "%lld %lld %lld: y[%lld]", tops[op],
					      (long long)sn[0], (long long)sn[1],
					      (long long)sn[2], (long long)sn[3],
					      (long long)i);
			ls_result_free(&r);
		}
}
END_TEST

/* Operands that are not 4-D, or whose dims the permutation does not
** map onto each other: run errors naming what is wrong. */
START_TEST(test_transpose_errors)
{
	static const float x[6] = { 0 };
	const int64_t sn[4] = { 2, 1, 1, 3 }, bad[4] = { 2, 1, 1, 3 };
	tb t;
	run_fails(transpose_module(12, sn, bad, 0), x, 6, "transpose_op "
		  "'XYZW': outs[0] ap[0].num 2 is not ins[0] ap[3].num 3");
	run_fails(transpose_module(12, sn, bad, 1), x, 6, "transpose_op "
		  "'XYZW': outs[0] ap[0].num 2 is not ins[0] ap[3].num 3 "
		  "(DMADescriptorTranspose)");
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 2, 3);
	tb_dram(&t, "y", "ExternalOutput", "float32", 3, 2);
	dmacopy(&t, ap2("x", 2, 3, 0), ap2("y", 3, 2, 0), ",\"mode\":"
		"\"Transpose\",\"transpose_op\":\"XYZW\"");
	run_fails(tb_module(&t, 0), x, 6, "a DMA transpose takes 4-D "
		  "physical_ap operands [W, Z, Y, X] (ins[0] has 2 pairs, "
		  "outs[0] 2) (DMACopy)");
}
END_TEST

/* ---- replicate ---------------------------------------------------------- */

static lm_module *replicate_dt(int P, int F, int R, int as_desc,
				const char *dt)
{
	tb t;
	char out[400];
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", P, F);
	tb_dram(&t, "y", "ExternalOutput", dt, P * R, F);
	snprintf(out, sizeof out, "%s", APS("y", dt, P * R, F, 0, F));
	if (as_desc)
		desc_block(&t, "Replicate", ap2("x", P, F, 0), out, "");
	else
		dmacopy(&t, ap2("x", P, F, 0), out, ",\"mode\":\"Replicate\"");
	return tb_module(&t, 0);
}

static lm_module *replicate_module(int P, int F, int R, int as_desc)
{
	return replicate_dt(P, F, R, as_desc, "float32");
}

/* x [2, 3] replicated into y [6, 3]: the two rows three times over,
** r0 r1 r0 r1 r0 r1 (not r0 r0 r0 r1 r1 r1). */
START_TEST(test_replicate_hand)
{
	static const float x[6] = { 1, 2, 3, 4, 5, 6 };
	static const float want[18] = {
		1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6,
	};
	for (int as_desc = 0; as_desc < 2; as_desc++) {
		ls_result r;
		run_ok(replicate_module(2, 3, 3, as_desc), x, 6, &r);
		for (int i = 0; i < 18; i++)
			ck_assert_same_f(tb_out(&r, "y", i), want[i]);
		ls_result_free(&r);
	}
}
END_TEST

/* Into bfloat16: each element rounded once, to nearest even: 1 + 2^-8
** (a tie) to 1, 1 + 3 * 2^-8 (a tie) to 1 + 2^-6, 3.5 exact. */
START_TEST(test_replicate_convert)
{
	static const float x[3] = { 1.00390625f, 1.01171875f, 3.5f };
	static const float want[3] = { 1.0f, 1.015625f, 3.5f };
	for (int as_desc = 0; as_desc < 2; as_desc++) {
		ls_result r;
		run_ok(replicate_dt(1, 3, 2, as_desc, "bfloat16"), x, 3, &r);
		for (int i = 0; i < 6; i++)
			ck_assert_same_f(tb_out(&r, "y", i), want[i % 3]);
		ls_result_free(&r);
	}
}
END_TEST

START_TEST(test_replicate_random)
{
	uint32_t seed = 777;
	for (int rep = 0; rep < 12; rep++) {
		int P, F, R;
		float x[64], want[512];
		ls_result r;
		seed = seed * 1103515245u + 12345u;
		P = 1 + (int)((seed >> 16) % 4);
		F = 1 + (int)((seed >> 8) % 5);
		R = 1 + (int)((seed >> 4) % 4);
		tb_fill(x, P * F, seed);
		for (int k = 0; k < R; k++)
			for (int p = 0; p < P; p++)
				for (int f = 0; f < F; f++)
					want[(k * P + p) * F + f] = x[p * F + f];
		run_ok(replicate_module(P, F, R, rep & 1), x, P * F, &r);
		for (int i = 0; i < P * F * R; i++)
			ck_assert_same_f(tb_out(&r, "y", i), want[i]);
		ls_result_free(&r);
	}
}
END_TEST

START_TEST(test_replicate_errors)
{
	static const float x[6] = { 0 };
	tb t;
	lm_module *m;
	lm_error err;
	char *txt;
	/* a destination of other rows than the source's */
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 2, 3);
	tb_dram(&t, "y", "ExternalOutput", "float32", 3, 4);
	dmacopy(&t, ap2("x", 2, 3, 0), ap2("y", 3, 4, 0),
		",\"mode\":\"Replicate\"");
	run_fails(tb_module(&t, 0), x, 6, "a DMA replicate writes whole "
		  "copies of its source: outs[0] is 3 x 4, ins[0] 2 x 3");
	/* the verifier: not a whole number of copies */
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 2, 3);
	tb_dram(&t, "y", "ExternalOutput", "float32", 3, 3);
	dmacopy(&t, ap2("x", 2, 3, 0), ap2("y", 3, 3, 0),
		",\"mode\":\"Replicate\"");
	txt = tb_json(&t, 0);
	tb_free(&t);
	m = tu_parse(txt, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "DMACopy mode Replicate writes whole "
			   "copies of its source: outs[0] has 9 elements, "
			   "ins[0] 6");
	lm_module_free(m);
	free(txt);
}
END_TEST

/* ---- CCE -------------------------------------------------------------------- */

/* A DMACopy in mode CCE of the n rows of x [n, F] into y [1, F]. */
static lm_module *cce_module(int n, int F, const char *more)
{
	tb t;
	char ins[4096] = "";
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", n, F);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, F);
	for (int k = 0; k < n; k++) {
		size_t l = strlen(ins);
		snprintf(ins + l, sizeof ins - l, "%s%s", k ? "," : "",
			 ap2("x", 1, F, k * F));
	}
	dmacopy(&t, ins, ap2("y", 1, F, 0), more);
	return tb_module(&t, 0);
}

/*
** Rows r0 {1 2 3 4}, r1 {0.5 -1 8 0}, r2 {4 4 -2 1} with constants
** [2, -1, 0.5]: y = 2 r0 - r1 + 0.5 r2 = {3.5 7 -3 8.5} (the plain add
** is {5.5 5 9 5}); max from a zeroed accumulator {4 4 8 4}.
*/
START_TEST(test_cce_hand)
{
	static const float x[12] = { 1, 2, 3, 4, 0.5f, -1, 8, 0, 4, 4, -2, 1 };
	static const float scaled[4] = { 3.5f, 7, -3, 8.5f };
	static const float mx[4] = { 4, 4, 8, 4 };
	ls_result r;
	run_ok(cce_module(3, 4, ",\"mode\":\"CCE\",\"cce_op\":\"add\","
			  "\"constants\":[2,-1,0.5]"), x, 12, &r);
	for (int i = 0; i < 4; i++)
		ck_assert_same_f(tb_out(&r, "y", i), scaled[i]);
	ls_result_free(&r);
	run_ok(cce_module(3, 4, ",\"mode\":\"CCE\",\"cce_op\":\"max\""), x,
	       12, &r);
	for (int i = 0; i < 4; i++)
		ck_assert_same_f(tb_out(&r, "y", i), mx[i]);
	ls_result_free(&r);
}
END_TEST

/* Random sources, ops and constants against a float32 loop here. */
START_TEST(test_cce_random)
{
	uint32_t seed = 99;
	for (int rep = 0; rep < 12; rep++) {
		int n, F = 7, op, use_c;
		float x[64], c[4], want[8];
		char more[200];
		ls_result r;
		seed = seed * 1103515245u + 12345u;
		n = 1 + (int)((seed >> 16) % 4);
		op = (int)((seed >> 8) % 3);
		use_c = op == 0 && (seed >> 4) % 2;
		tb_fill(x, n * F, seed);
		tb_fill(c, n, seed + 1);
		snprintf(more, sizeof more, ",\"mode\":\"CCE\",\"cce_op\":"
			 "\"%s\"", op == 0 ? "add" : op == 1 ? "max" : "min");
		if (use_c) {
			size_t l = strlen(more);
			snprintf(more + l, sizeof more - l, ",\"constants\":[");
			for (int k = 0; k < n; k++) {
				l = strlen(more);
				snprintf(more + l, sizeof more - l, "%s%.9g",
					 k ? "," : "", (double)c[k]);
			}
			l = strlen(more);
			snprintf(more + l, sizeof more - l, "]");
		}
		for (int i = 0; i < F; i++) {
			volatile float acc = 0.0f;
			for (int k = 0; k < n; k++) {
				float v = x[k * F + i];
				if (use_c) {
					volatile float p = c[k] * v;
					acc = acc + p;
				} else if (op == 0) {
					acc = acc + v;
				} else if (op == 1) {
					acc = acc > v ? acc : v;
				} else {
					acc = acc < v ? acc : v;
				}
			}
			want[i] = acc;
		}
		run_ok(cce_module(n, F, more), x, n * F, &r);
		for (int i = 0; i < F; i++)
			ck_assert_same_f(tb_out(&r, "y", i), want[i]);
		ls_result_free(&r);
	}
}
END_TEST

/* ---- refusals before time 0 --------------------------------------------- */

/* A DMACopy of x [2, 3] into y with keys more: refused with msg. */
static void refused(int n, const char *more, const char *msg)
{
	lm_error err;
	lm_module *m = cce_module(n, 3, more);
	ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
	ck_assert_contains(err.msg, msg);
	lm_module_free(m);
}

START_TEST(test_refusals)
{
	refused(1, ",\"mode\":\"Dynamic\"", "opcode 'DMACopy' key 'mode' = "
		"\"Dynamic\" is not modelled by the simulator (Copy, "
		"Transpose, CCE and Replicate are modelled)");
	refused(1, ",\"transpose_op\":\"XYZW\"", "key 'transpose_op' = "
		"\"XYZW\" is not modelled by the simulator (read in mode "
		"\"Transpose\" only)");
	refused(2, ",\"mode\":\"CCE\",\"cce_op\":\"mult\"", "key 'cce_op' = "
		"\"mult\" is not modelled by the simulator (mode CCE reduces "
		"its sources with add, max or min)");
	refused(2, ",\"mode\":\"CCE\"", "key 'cce_op' = \"bypass\" is not "
		"modelled");
	refused(1, ",\"cce_op\":\"add\"", "key 'cce_op' = \"add\" is not "
		"modelled by the simulator (read in mode \"CCE\" only)");
	refused(2, ",\"mode\":\"CCE\",\"cce_op\":\"add\",\"constants\":[1]",
		"key 'constants' = [1] is not modelled by the simulator (one "
		"constant per source)");
	refused(2, ",\"mode\":\"CCE\",\"cce_op\":\"max\",\"constants\":"
		"[1,2]", "(constants scale the sources of an add only)");
	refused(1, ",\"constants\":[1]", "key 'constants' = [1] is not "
		"modelled by the simulator (read in mode \"CCE\" only)");
}
END_TEST

/* ---- indirect moves -------------------------------------------------- */

/*
** Index tile ix [parts, per] of dtype dt in SB, element (p, j) set to
** v[p * per + j] by a Memset each (m0, m1, ...); the dependencies on all
** of them into deps.
*/
static void indices(tb *t, const char *dt, int parts, int per,
		    const double *v, char *deps, size_t n)
{
	size_t l;
	tb_sb(t, "ix", dt, parts, per);
	snprintf(deps, n, ",\"dependencies\":[");
	for (int k = 0; k < parts * per; k++) {
		tb_inst(t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
			"\"m%d\",\"engine\":\"DVE\",\"outs\":[%s],\"value\":%.17g}",
			k, APS("ix", dt, 1, 1, k, per), v[k]);
		l = strlen(deps);
		snprintf(deps + l, n - l, "%s[\"m%d\",\"Flow\"]", k ? "," : "",
			 k);
	}
	l = strlen(deps);
	snprintf(deps + l, n - l, "]");
}

/* IndirectLoad of rows of x [rows, F] (DRAM) by K indices v (dtype dt)
** into y [K, F]. */
static lm_module *iload_dt(int rows, int F, int K, const char *dt,
			   const double *v, const char *ydt)
{
	tb t;
	char deps[4096];
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", rows, F);
	tb_dram(&t, "y", "ExternalOutput", ydt, K, F);
	indices(&t, dt, 1, K, v, deps, sizeof deps);
	tb_inst(&t, "{\"opcode\":\"IndirectLoad\",\"name\":\"g\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"indirection_ins\":[%s]%s}", ap2("x", rows, F, 0),
		APS("y", ydt, K, F, 0, F), AP("ix", dt, 1, K, 0), deps);
	return tb_module(&t, 0);
}

static lm_module *iload_module(int rows, int F, int K, const char *dt,
			       const double *v)
{
	return iload_dt(rows, F, K, dt, v, "float32");
}

/* x rows r_i = {10 i, 10 i + 1, 10 i + 2}; indices {3, 0, 4, 0} give
** r3 r0 r4 r0, in index order (a row read twice is read twice). */
START_TEST(test_iload_hand)
{
	static const double v[4] = { 3, 0, 4, 0 };
	static const int rows[4] = { 3, 0, 4, 0 };
	const char *dts[3] = { "int32", "uint16", "int64" };
	float x[15];
	for (int i = 0; i < 15; i++)
		x[i] = (float)(10 * (i / 3) + i % 3);
	for (int d = 0; d < 3; d++) {
		ls_result r;
		run_ok(iload_module(5, 3, 4, dts[d], v), x, 15, &r);
		for (int k = 0; k < 4; k++)
			for (int f = 0; f < 3; f++)
				ck_assert_same_f(tb_out(&r, "y", 3 * k + f),
						 (float)(10 * rows[k] + f));
		ck_assert_int_eq(r.cores[0].dma_transfers, 1);
		ls_result_free(&r);
	}
}
END_TEST

/* Rows gathered into bfloat16, each element rounded once (ties to even):
** row 1 {1 + 2^-8, 1 + 3 * 2^-8} -> {1, 1 + 2^-6}. */
START_TEST(test_iload_convert)
{
	static const float x[4] = { 2.0f, 3.0f, 1.00390625f, 1.01171875f };
	static const double v[3] = { 1, 0, 1 };
	static const float want[6] = { 1.0f, 1.015625f, 2.0f, 3.0f, 1.0f,
				       1.015625f };
	ls_result r;
	run_ok(iload_dt(2, 2, 3, "int16", v, "bfloat16"), x, 4, &r);
	for (int i = 0; i < 6; i++)
		ck_assert_same_f(tb_out(&r, "y", i), want[i]);
	ls_result_free(&r);
}
END_TEST

START_TEST(test_iload_random)
{
	uint32_t seed = 4242;
	for (int rep = 0; rep < 10; rep++) {
		int rows, F, K;
		double v[16];
		float x[128], want[256];
		ls_result r;
		seed = seed * 1103515245u + 12345u;
		rows = 1 + (int)((seed >> 16) % 8);
		F = 1 + (int)((seed >> 8) % 6);
		K = 1 + (int)((seed >> 4) % 12);
		tb_fill(x, rows * F, seed);
		for (int k = 0; k < K; k++) {
			seed = seed * 1103515245u + 12345u;
			v[k] = (double)((seed >> 16) % (uint32_t)rows);
		}
		for (int k = 0; k < K; k++)
			for (int f = 0; f < F; f++)
				want[k * F + f] = x[(int)v[k] * F + f];
		run_ok(iload_module(rows, F, K, rep & 1 ? "uint32" : "int32",
				    v), x, rows * F, &r);
		for (int i = 0; i < K * F; i++)
			ck_assert_same_f(tb_out(&r, "y", i), want[i]);
		ls_result_free(&r);
	}
}
END_TEST

/* IndirectCopy in SB: xs [rows, F] from x, ys [K, F] preset to -7, the
** first nv rows gathered by the K indices v. */
static lm_module *icopy_module(int rows, int F, int K, int nv,
			       const double *v)
{
	tb t;
	char deps[4096], nvs[40];
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", rows, F);
	tb_dram(&t, "y", "ExternalOutput", "float32", K, F);
	tb_sb(&t, "xs", "float32", rows, F);
	tb_sb(&t, "ys", "float32", K, F);
	indices(&t, "int32", 1, K, v, deps, sizeof deps);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"in\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		ap2("x", rows, F, 0), AP("xs", "float32", rows, F, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"pre\",\"engine\":\"DVE\",\"outs\":[%s],\"value\":-7}",
		AP("ys", "float32", K, F, 0));
	snprintf(nvs, sizeof nvs, "%d", nv);
	tb_inst(&t, "{\"opcode\":\"IndirectCopy\",\"name\":\"g\",\"engine\":"
		"\"Pool\",\"ins\":[%s],\"outs\":[%s],\"indirection_ins\":[%s],"
		"\"num_valid_indices\":%s%.*s,[\"in\",\"Flow\"],[\"pre\","
		"\"Flow\"]]}", AP("xs", "float32", rows, F, 0),
		AP("ys", "float32", K, F, 0), AP("ix", "int32", 1, K, 0), nvs,
		(int)strlen(deps) - 1, deps);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"out\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[[\"g\",\"Flow\"]]}",
		AP("ys", "float32", K, F, 0), ap2("y", K, F, 0));
	return tb_module(&t, 0);
}

/* Partitions r_i of xs; indices {2, 2, 0, 1} with num_valid_indices 3:
** ys rows r2 r2 r0, the fourth row keeps -7. */
START_TEST(test_icopy_hand)
{
	static const double v[4] = { 2, 2, 0, 1 };
	static const int rows[3] = { 2, 2, 0 };
	float x[6];
	ls_result r;
	for (int i = 0; i < 6; i++)
		x[i] = (float)(10 * (i / 2) + i % 2);
	run_ok(icopy_module(3, 2, 4, 3, v), x, 6, &r);
	for (int k = 0; k < 3; k++)
		for (int f = 0; f < 2; f++)
			ck_assert_same_f(tb_out(&r, "y", 2 * k + f),
					 (float)(10 * rows[k] + f));
	ck_assert_same_f(tb_out(&r, "y", 6), -7.0f);
	ck_assert_same_f(tb_out(&r, "y", 7), -7.0f);
	ls_result_free(&r);
}
END_TEST

/* Gather: data xs [P, Fin] from x, indices ix [P, Fout] (dtype dt),
** ys [P, Fout] to y. */
static lm_module *gather_module(int P, int Fin, int Fout, const char *dt,
				const double *v)
{
	tb t;
	char deps[8192];
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", P, Fin);
	tb_dram(&t, "y", "ExternalOutput", "float32", P, Fout);
	tb_sb(&t, "xs", "float32", P, Fin);
	tb_sb(&t, "ys", "float32", P, Fout);
	indices(&t, dt, P, Fout, v, deps, sizeof deps);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"in\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		ap2("x", P, Fin, 0), AP("xs", "float32", P, Fin, 0));
	tb_inst(&t, "{\"opcode\":\"Gather\",\"name\":\"g\",\"engine\":"
		"\"Pool\",\"ins\":[%s],\"outs\":[%s],\"indirection_ins\":[%s]"
		"%.*s,[\"in\",\"Flow\"]]}", AP("xs", "float32", P, Fin, 0),
		AP("ys", "float32", P, Fout, 0), AP("ix", dt, P, Fout, 0),
		(int)strlen(deps) - 1, deps);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"out\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[[\"g\",\"Flow\"]]}",
		AP("ys", "float32", P, Fout, 0), ap2("y", P, Fout, 0));
	return tb_module(&t, 0);
}

/* x = [[0 1 2 3 4] [10 11 12 13 14]], indices [[4 0 2] [1 1 3]]: each
** partition indexes its own elements, [[4 0 2] [11 11 13]] (indices
** taken over the whole tile would give [[4 0 2] [1 1 3]]). */
START_TEST(test_gather_hand)
{
	static const float x[10] = { 0, 1, 2, 3, 4, 10, 11, 12, 13, 14 };
	static const double v[6] = { 4, 0, 2, 1, 1, 3 };
	static const float want[6] = { 4, 0, 2, 11, 11, 13 };
	ls_result r;
	run_ok(gather_module(2, 5, 3, "uint32", v), x, 10, &r);
	for (int i = 0; i < 6; i++)
		ck_assert_same_f(tb_out(&r, "y", i), want[i]);
	ls_result_free(&r);
}
END_TEST

START_TEST(test_gather_random)
{
	uint32_t seed = 31337;
	for (int rep = 0; rep < 8; rep++) {
		int P, Fin, Fout;
		double v[64];
		float x[64], want[64];
		ls_result r;
		seed = seed * 1103515245u + 12345u;
		P = 1 + (int)((seed >> 16) % 4);
		Fin = 1 + (int)((seed >> 8) % 6);
		Fout = 1 + (int)((seed >> 4) % 5);
		tb_fill(x, P * Fin, seed);
		for (int k = 0; k < P * Fout; k++) {
			seed = seed * 1103515245u + 12345u;
			v[k] = (double)((seed >> 16) % (uint32_t)Fin);
		}
		for (int p = 0; p < P; p++)
			for (int j = 0; j < Fout; j++)
				want[p * Fout + j] =
					x[p * Fin + (int)v[p * Fout + j]];
		run_ok(gather_module(P, Fin, Fout, "int32", v), x, P * Fin, &r);
		for (int i = 0; i < P * Fout; i++)
			ck_assert_same_f(tb_out(&r, "y", i), want[i]);
		ls_result_free(&r);
	}
}
END_TEST

/* An index out of range stops the run naming its value, the
** instruction and the bound; a float index dtype is the verifier's; no
** indirection_ins is refused before time 0; too many valid indices. */
START_TEST(test_indirect_errors)
{
	static const double big[4] = { 3, 0, 5, 0 }, neg[4] = { 3, -1, 0, 0 };
	static const double gbig[6] = { 4, 0, 2, 1, 5, 3 };
	float x[15] = { 0 };
	tb t;
	lm_module *m;
	lm_error err;
	char *txt;
	run_fails(iload_module(5, 3, 4, "int32", big), x, 15, "instruction "
		  "g: index 5 (indirection_ins[0] element 2) is out of range: "
		  "ins[0] 'x' has 5 rows (0..4) (IndirectLoad)");
	run_fails(iload_module(5, 3, 4, "int32", neg), x, 15, "index -1 "
		  "(indirection_ins[0] element 1) is out of range");
	run_fails(gather_module(2, 5, 3, "int32", gbig), x, 10, "instruction "
		  "g: index 5 (indirection_ins[0] partition 1, element 1) is "
		  "out of range: ins[0] 'xs' has 5 elements per partition "
		  "(0..4) (Gather)");
	run_fails(icopy_module(3, 2, 4, 5, big), x, 6, "num_valid_indices 5 "
		  "exceeds the 4 indices of indirection_ins[0] (IndirectCopy)");
	/* float indices: the verifier */
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 5, 3);
	tb_dram(&t, "y", "ExternalOutput", "float32", 4, 3);
	tb_sb(&t, "ix", "float32", 1, 4);
	tb_inst(&t, "{\"opcode\":\"IndirectLoad\",\"name\":\"g\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"indirection_ins\":[%s]}", ap2("x", 5, 3, 0), ap2("y", 4, 3, 0),
		AP("ix", "float32", 1, 4, 0));
	txt = tb_json(&t, 0);
	tb_free(&t);
	m = tu_parse(txt, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "instruction g: IndirectLoad indices "
			   "(indirection_ins[0]) must be int16, uint16, int32, "
			   "uint32, int64 or uint64 (got float32)");
	lm_module_free(m);
	free(txt);
	/* Gather on Pool reads SBUF / PSUM only: the verifier */
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 2, 5);
	tb_sb(&t, "ix", "int32", 2, 3);
	tb_sb(&t, "ys", "float32", 2, 3);
	tb_inst(&t, "{\"opcode\":\"Gather\",\"name\":\"g\",\"engine\":"
		"\"Pool\",\"ins\":[%s],\"outs\":[%s],\"indirection_ins\":"
		"[%s]}", ap2("x", 2, 5, 0), AP("ys", "float32", 2, 3, 0),
		AP("ix", "int32", 2, 3, 0));
	txt = tb_json(&t, 0);
	tb_free(&t);
	m = tu_parse(txt, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "Gather operands must be in SBUF or PSUM "
			   "('x' is");
	lm_module_free(m);
	free(txt);
	/* no indices: refused before time 0 */
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 5, 3);
	tb_dram(&t, "y", "ExternalOutput", "float32", 4, 3);
	tb_inst(&t, "{\"opcode\":\"IndirectLoad\",\"name\":\"g\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		ap2("x", 5, 3, 0), ap2("y", 4, 3, 0));
	m = tb_module(&t, 0);
	ck_assert_int_eq(ls_check_module(m, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "opcode 'IndirectLoad' key "
			   "'indirection_ins' = 0 operands is not modelled by the "
			   "simulator (the indices are one operand of "
			   "indirection_ins)");
	lm_module_free(m);
}
END_TEST

/* The linker's renaming reaches the indices: an allocation renamed is
** renamed in indirection_ins too. */
START_TEST(test_indirect_rename)
{
	static const double v[4] = { 3, 0, 4, 0 };
	lm_module *m = iload_module(5, 3, 4, "int32", v);
	lm_strmap allocs, locs;
	lm_inst *in = NULL;
	char *txt;
	lm_block *b = &m->functions[0].blocks[0];
	for (int i = 0; i < b->n_insts; i++)
		if (b->insts[i].op == LM_OP_INDIRECTLOAD)
			in = &b->insts[i];
	ck_assert_ptr_nonnull(in);
	lm_strmap_init(&allocs);
	lm_strmap_init(&locs);
	lm_strmap_put(&allocs, "ix", (void *)"ix_1");
	lm_strmap_put(&locs, "ix", (void *)"ix_1");
	lm_inst_rename_json_refs(in, &allocs, &locs);
	txt = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(
		in->extra, "indirection_ins"));
	ck_assert_contains(txt, "\"memsetref\":\"ix_1\"");
	ck_assert_contains(txt, "\"memref\":\"ix_1\"");
	cJSON_free(txt);
	lm_strmap_free(&allocs);
	lm_strmap_free(&locs);
	lm_module_free(m);
}
END_TEST

/*
** A core whose queue carries an IndirectLoad only: the linked core
** selects its own instance of that queue (a SwitchQueueInstance at the
** head of nc1), so the load signals nc1's semaphore and the copy that
** waits for it runs; the linked module computes the per-core bits.
*/
START_TEST(test_indirect_linked_queue)
{
	static const double v[3] = { 2, 0, 3 };
	static const float x[4] = { 1, 2, 3, 4 };
	float w[8];
	lm_module *m[2], *lk = NULL;
	lk_options o;
	lk_report rep;
	ls_tensors in = {0, NULL};
	ls_diff_result dr;
	int64_t xs[2] = {1, 4}, ws[2] = {4, 2};
	char deps[1024];
	lm_error e;
	tb t;
	int found = 0;
	for (int i = 0; i < 8; i++)
		w[i] = (float)(10 * (i / 2) + i % 2);
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 1, 4);
	tb_dram(&t, "y", "ExternalOutput", "float32", 1, 4);
	dmacopy(&t, ap2("x", 1, 4, 0), ap2("y", 1, 4, 0), "");
	m[0] = tb_module(&t, 0);
	tb_init(&t);
	tb_dram(&t, "w", "ExternalInput", "float32", 4, 2);
	tb_dram(&t, "z", "Internal", "float32", 3, 2);
	tb_dram(&t, "z2", "ExternalOutput", "float32", 3, 2);
	indices(&t, "int32", 1, 3, v, deps, sizeof deps);
	tb_inst(&t, "{\"opcode\":\"IndirectLoad\",\"name\":\"g\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"indirection_ins\":[%s]%s}", ap2("w", 4, 2, 0),
		ap2("z", 3, 2, 0), AP("ix", "int32", 1, 3, 0), deps);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"c2\",\"engine\":"
		"\"SP\",\"queue\":\"q1\",\"ins\":[%s],\"outs\":[%s],"
		"\"sync_info\":{\"on_wait\":[{\"mode\":\"sem-ge-imm\","
		"\"semaphore\":\"s0\",\"value\":1}]}}", ap2("z", 3, 2, 0),
		ap2("z2", 3, 2, 0));
	m[1] = tb_module(&t, 1);
	memset(&o, 0, sizeof o);
	ck_assert_msg(lk_link(m, 2, &o, &lk, &rep, &e) == 0, "%s", e.msg);
	lk_report_free(&rep);
	for (int f = 0; f < lk->n_functions; f++) {
		const lm_block *b = &lk->functions[f].blocks[0];
		if (strcmp(lk->functions[f].name, "nc1") != 0)
			continue;
		for (int i = 0; i < b->n_insts; i++)
			if (b->insts[i].op == LM_OP_SWITCHQUEUE &&
			    !strcmp(b->insts[i].queue, "q0"))
				found = 1;
	}
	ck_assert_msg(found, "nc1 selects no instance of q0");
	ck_assert_msg(lm_verify(lk, NULL, &e) == 0, "%s", e.msg);
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, xs, 2, x);
	ls_tensors_add(&in, "w", LM_DT_FLOAT32, ws, 2, w);
	ck_assert_msg(ls_diff(m, 2, lk, &in, NULL, &dr, &e) == 0, "%s", e.msg);
	ck_assert_msg(dr.status == LS_DIFF_PASS, "%s", dr.message);
	ls_diff_result_free(&dr);
	ls_tensors_free(&in);
	lm_module_free(lk);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
}
END_TEST

/*
** The race detector sees the indices read: m2 overwrites ix with no
** ordering after the IndirectLoad g that reads it (a write after read
** on another engine); ordered after g, no race.
*/
static lm_module *iload_war(int ordered)
{
	tb t;
	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", "float32", 4, 2);
	tb_dram(&t, "y", "ExternalOutput", "float32", 3, 2);
	tb_sb(&t, "ix", "int32", 1, 3);
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"m1\",\"engine\":\"DVE\",\"outs\":[%s],\"value\":1}",
		AP("ix", "int32", 1, 3, 0));
	tb_inst(&t, "{\"opcode\":\"IndirectLoad\",\"name\":\"g\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"indirection_ins\":[%s],\"dependencies\":[[\"m1\","
		"\"Flow\"]]}", ap2("x", 4, 2, 0), ap2("y", 3, 2, 0),
		AP("ix", "int32", 1, 3, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		"\"m2\",\"engine\":\"DVE\",\"outs\":[%s],\"value\":0%s}",
		AP("ix", "int32", 1, 3, 0), ordered ? ",\"dependencies\":"
		"[[\"g\",\"Flow\"]]" : "");
	return tb_module(&t, 0);
}

START_TEST(test_indirect_race)
{
	float x[8] = { 0 };
	for (int ordered = 0; ordered < 2; ordered++) {
		lm_module *m = iload_war(ordered);
		ls_options o;
		ls_result r;
		lm_error err;
		int found = 0;
		memset(&o, 0, sizeof o);
		o.race = 1;
		ck_assert_msg(tb_run1(m, x, 4, 2, &o, &r, &err) == 0, "%s",
			      err.msg);
		for (int i = 0; i < r.n_races; i++)
			if ((!strcmp(r.races[i].a_inst, "g") &&
			     !strcmp(r.races[i].b_inst, "m2")) ||
			    (!strcmp(r.races[i].a_inst, "m2") &&
			     !strcmp(r.races[i].b_inst, "g")))
				found = 1;
		ck_assert_int_eq(found, !ordered);
		ck_assert_int_eq(r.races_found, !ordered);
		ls_result_free(&r);
		lm_module_free(m);
	}
}
END_TEST

static Suite *dma_suite(void)
{
	Suite *s = suite_create("dma");
	TCase *tc = tcase_create("modes");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_transpose_hand);
	tcase_add_test(tc, test_transpose_random);
	tcase_add_test(tc, test_transpose_errors);
	tcase_add_test(tc, test_replicate_hand);
	tcase_add_test(tc, test_replicate_random);
	tcase_add_test(tc, test_replicate_convert);
	tcase_add_test(tc, test_replicate_errors);
	tcase_add_test(tc, test_cce_hand);
	tcase_add_test(tc, test_cce_random);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_iload_hand);
	tcase_add_test(tc, test_iload_random);
	tcase_add_test(tc, test_iload_convert);
	tcase_add_test(tc, test_icopy_hand);
	tcase_add_test(tc, test_gather_hand);
	tcase_add_test(tc, test_gather_random);
	tcase_add_test(tc, test_indirect_errors);
	tcase_add_test(tc, test_indirect_rename);
	tcase_add_test(tc, test_indirect_linked_queue);
	tcase_add_test(tc, test_indirect_race);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(dma_suite());
}

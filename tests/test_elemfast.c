/*
** test_elemfast.c -- the element loops of TensorCopy, TensorTensor,
** TensorScalar, TensorReduce, Activation and Exponential on the shapes
** their fast paths take (float32 partition rows read in place, results
** computed into the staging buffer, reduce rows folded eight at a time)
** and on the shapes they do not (strided and permuted patterns, bfloat16,
** odd sizes, an unaligned row, partly written memory), each result
** compared bit for bit with a plain loop written here from the formulas
** of docs/semantics.md, over data with NaN, Inf, -0 and denormals.
*/
#include "common.h"
#include "testutil.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the harness -------------------------------------------------------- */

static float bits_f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* Round to bfloat16 and widen back (nearest even; finite or Inf only). */
static float via_bf16(float f)
{
	uint32_t u = f_bits(f);
	u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
	return bits_f(u);
}

/*
** Test data [P, W]: values in [-2, 2) with NaN, +-Inf, +-0, denormals,
** huge and tiny values sprinkled in (NaN only when has_nan: bfloat16 data
** is rounded on load by a rule of its own).
*/
static void fill(float *x, int P, int W, uint32_t seed, int has_nan)
{
	static const uint32_t special[] = {
		0x80000000u, 0x00000000u, 0x7f800000u, 0xff800000u,
		0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x42b00000u,
		0xc2d00000u, 0x3f800000u, 0x00400000u, 0x7fc00000u,
		0xffc00123u,
	};
	int n_sp = has_nan ? 13 : 11;
	tb_fill(x, (int64_t)P * W, seed);
	for (int i = 0; i < P * W; i += 3)
		x[i] = bits_f(special[(i / 3 + seed) % n_sp]);
}

/*
** xs [P, W] (dtype in_dt, after pad bytes of a bfloat16 pad tensor when
** pad) gets x's first wc columns by a DMA; the instructions inst0 (unless
** NULL) and inst, named op (JSON, naming xs and ys; they wait for the
** load) run; ys [P, Fo] (out_dt) is
** stored into y, read back as float32. Returns ls_run's status.
*/
static int run_op(const char *in_dt, const char *out_dt, int P, int W, int wc,
		  int Fo, int pad, const char *inst0, const char *inst,
		  const float *x, float *y, lm_error *err)
{
	tb t;
	ls_result r;
	lm_module *m;
	int rc;

	tb_init(&t);
	tb_dram(&t, "x", "ExternalInput", in_dt, P, W);
	tb_dram(&t, "y", "ExternalOutput", out_dt, P, Fo);
	if (pad)
		tb_sb(&t, "pad", "bfloat16", P, 1);
	tb_sb(&t, "xs", in_dt, P, W);
	tb_sb(&t, "ys", out_dt, P, Fo);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		APS("x", in_dt, P, wc, 0, W), APS("xs", in_dt, P, wc, 0, W));
	if (inst0)
		tb_inst(&t, "%s", inst0);
	tb_inst(&t, "%s", inst);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"op\"]}", AP("ys", out_dt, P, Fo, 0),
		AP("y", out_dt, P, Fo, 0));
	m = tb_module(&t, 0);
	rc = tb_run1(m, x, P, W, NULL, &r, err);
	if (rc == 0) {
		for (int i = 0; i < P * Fo; i++)
			y[i] = tb_out(&r, "y", i);
		ls_result_free(&r);
	}
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* An SB operand of xs or ys: P partitions of W elements, the pattern
** pairs after the partition pair (JSON), from element off. */
static const char *OPND(const char *name, const char *dt, int P, int W,
			int off, const char *pairs)
{
	static char bufs[8][300];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, 300, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
		 "\"memref\":\"%s\",\"offset\":%d,\"ap\":[[%d,%d],%s],"
		 "\"dtype\":\"%s\"}", name, name, off, W, P, pairs, dt);
	return b;
}

/* Every output bit equal (a bfloat16 output: or both NaN). */
static void same(const char *what, const float *want, const float *got,
		 int n, int is_bf16)
{
	for (int i = 0; i < n; i++) {
		if (is_bf16 && isnan(want[i]) && isnan(got[i]))
			continue;
		ck_assert_msg(f_bits(want[i]) == f_bits(got[i]),
			      "%s: element %d is %08x (%g), want %08x (%g)",
			      what, i, f_bits(got[i]), (double)got[i],
			      f_bits(want[i]), (double)want[i]);
	}
}

/* The shapes: P partitions, F elements per row of the result, the
** pattern of the source ("row": [1,F], contiguous; "stride2": [2,F];
** "perm": [[1,2],[2,F/2]], the two halves of each pair swapped in order),
** bf16 source, unaligned row. */
struct shape {
	const char *name;
	int P, F;
	const char *pat;
	int is_bf16, pad;
};

static const struct shape shapes[] = {
	{ "rows 128x64", 128, 64, "row", 0, 0 },
	{ "rows 5x13", 5, 13, "row", 0, 0 },
	{ "rows 1x1", 1, 1, "row", 0, 0 },
	{ "rows 3x8", 3, 8, "row", 0, 0 },
	{ "rows 19x7 unaligned", 19, 7, "row", 0, 1 },
	{ "stride2 9x11", 9, 11, "stride2", 0, 0 },
	{ "perm 4x10", 4, 10, "perm", 0, 0 },
	{ "bf16 rows 6x13", 6, 13, "row", 1, 0 },
	{ "bf16 stride2 3x9", 3, 9, "stride2", 1, 0 },
};
#define N_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* Row width of xs for a source of sh at element offset base (two
** sources side by side: base F or 2F). */
static int xs_width(const struct shape *sh, int n_src)
{
	int per = strcmp(sh->pat, "stride2") == 0 ? 2 * sh->F : sh->F;
	return per * n_src + 1; /* + one column for a per-partition scalar */
}

/* The source pattern of sh from element off, and the element index in
** a row of xs of source element j. */
static const char *src_pairs(const struct shape *sh, char *buf, size_t n)
{
	if (strcmp(sh->pat, "stride2") == 0)
		snprintf(buf, n, "[2,%d]", sh->F);
	else if (strcmp(sh->pat, "perm") == 0)
		snprintf(buf, n, "[1,2],[2,%d]", sh->F / 2);
	else
		snprintf(buf, n, "[1,%d]", sh->F);
	return buf;
}

static int src_col(const struct shape *sh, int j)
{
	if (strcmp(sh->pat, "stride2") == 0)
		return 2 * j;
	if (strcmp(sh->pat, "perm") == 0)
		return j / (sh->F / 2) + 2 * (j % (sh->F / 2));
	return j;
}

/* Element j of partition p of the source at column base of xs [P, W], as
** the simulator reads it (the first wc columns written; the rest read as
** NaN under can_read_uninit). */
static float src_val(const struct shape *sh, const float *x, int W, int wc,
		     int p, int base, int j)
{
	int c = base + src_col(sh, j);
	if (c >= wc)
		return bits_f(0xffffffffu);
	return sh->is_bf16 ? via_bf16(x[p * W + c]) : x[p * W + c];
}

static const char *dt_of(const struct shape *sh)
{
	return sh->is_bf16 ? "bfloat16" : "float32";
}

/* The columns one source of sh takes in a row of xs. */
static int src_cols(const struct shape *sh)
{
	return strcmp(sh->pat, "stride2") == 0 ? 2 * sh->F : sh->F;
}

/*
** Run body (an instruction's JSON members after its name, naming xs and
** ys) twice, the second after the first: the second reads rows the first
** found written and writes rows it wrote. The result of the second is
** checked against want.
*/
static void check_op(const char *what, const struct shape *sh, int W, int wc,
		     const char *out_dt, int Fo, const char *body,
		     const float *x, const float *want)
{
	char inst0[2048], inst[2048];
	lm_error err;
	float *y = calloc((size_t)sh->P * Fo, sizeof *y);
	char label[200];
	snprintf(inst0, sizeof inst0, "{\"name\":\"op0\",%s}", body);
	snprintf(inst, sizeof inst, "{\"name\":\"op\",\"dependencies\":"
		 "[\"op0\"],%s}", body);
	ck_assert_msg(run_op(dt_of(sh), out_dt, sh->P, W, wc, Fo, sh->pad,
			     inst0, inst, x, y, &err) == 0, "%s %s: %s", what,
		      sh->name, err.msg);
	snprintf(label, sizeof label, "%s, %s, out %s", what, sh->name, out_dt);
	same(label, want, y, sh->P * Fo, strcmp(out_dt, "bfloat16") == 0);
	free(y);
}

/* want rounded to out_dt (float32: as is). */
static void round_out(float *want, int n, const char *out_dt)
{
	if (strcmp(out_dt, "bfloat16") == 0)
		for (int i = 0; i < n; i++)
			if (!isnan(want[i]))
				want[i] = via_bf16(want[i]);
}

static const char *const outs_dt[] = { "float32", "bfloat16" };

/* ---- TensorCopy ----------------------------------------------------------- */

START_TEST(test_copy_shapes)
{
	for (int k = 0; k < N_SHAPES; k++)
		for (int o = 0; o < 2; o++) {
			const struct shape *sh = &shapes[k];
			int W = xs_width(sh, 1), P = sh->P, F = sh->F;
			float *x = malloc(sizeof *x * P * W);
			float *want = malloc(sizeof *want * P * F);
			char pairs[64], body[1024];
			fill(x, P, W, 7 + k, !sh->is_bf16);
			for (int p = 0; p < P; p++)
				for (int j = 0; j < F; j++)
					want[p * F + j] = src_val(sh, x, W, W,
								  p, 0, j);
			round_out(want, P * F, outs_dt[o]);
			snprintf(body, sizeof body, "\"opcode\":\"TensorCopy\","
				 "\"engine\":\"DVE\",\"ins\":[%s],\"outs\":[%s],"
				 "\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]",
				 OPND("xs", dt_of(sh), P, W, 0, src_pairs(sh,
				 pairs, sizeof pairs)), AP("ys", outs_dt[o], P,
				 F, 0));
			check_op("TensorCopy", sh, W, W, outs_dt[o], F, body, x,
				 want);
			free(x);
			free(want);
		}
}
END_TEST

/* ---- TensorTensor ---------------------------------------------------------- */

/* a with its quiet bit set */
static float quiet(float a)
{
	return bits_f(f_bits(a) | 0x00400000u);
}

/*
** The float ALU; a NaN operand gives its own NaN, quieted, a's when both
** are NaN (the hardware rule the simulator follows; a C expression leaves
** the operand order to the compiler).
*/
static float alu(const char *op, float a, float b)
{
	if ((!strcmp(op, "add") || !strcmp(op, "subtract") ||
	     !strcmp(op, "mult") || !strcmp(op, "divide")) &&
	    (isnan(a) || isnan(b)))
		return isnan(a) ? quiet(a) : quiet(b);
	if (!strcmp(op, "add"))
		return a + b;
	if (!strcmp(op, "subtract"))
		return a - b;
	if (!strcmp(op, "mult"))
		return a * b;
	if (!strcmp(op, "divide"))
		return a / b;
	if (!strcmp(op, "max"))
		return isnan(a) ? a : isnan(b) ? b : a > b ? a : b;
	if (!strcmp(op, "min"))
		return isnan(a) ? a : isnan(b) ? b : a < b ? a : b;
	ck_abort_msg("alu %s", op);
	return 0;
}

static const char *const tt_ops[] = {
	"add", "subtract", "mult", "divide", "max", "min",
};

START_TEST(test_tensortensor_shapes)
{
	for (int k = 0; k < N_SHAPES; k++)
		for (size_t q = 0; q < sizeof tt_ops / sizeof tt_ops[0]; q++) {
			const struct shape *sh = &shapes[k];
			int W = xs_width(sh, 2), P = sh->P, F = sh->F;
			int b1 = src_cols(sh);
			const char *o_dt = outs_dt[q % 2];
			float *x = malloc(sizeof *x * P * W);
			float *want = malloc(sizeof *want * P * F);
			char pairs[64], body[1024];
			fill(x, P, W, 11 + k + (uint32_t)q, !sh->is_bf16);
			if (!sh->is_bf16) /* row 0: NaN op NaN, payloads apart */
				for (int j = 0; j < F; j++) {
					int c = src_col(sh, j);
					x[c] = bits_f(0x7fc00001u + (uint32_t)j);
					x[b1 + c] = bits_f(0xffc00100u +
							   (uint32_t)j);
				}
			for (int p = 0; p < P; p++)
				for (int j = 0; j < F; j++)
					want[p * F + j] = alu(tt_ops[q],
						src_val(sh, x, W, W, p, 0, j),
						src_val(sh, x, W, W, p, b1, j));
			round_out(want, P * F, o_dt);
			src_pairs(sh, pairs, sizeof pairs);
			snprintf(body, sizeof body, "\"opcode\":\"TensorTensor\","
				 "\"engine\":\"DVE\",\"op\":\"%s\",\"ins\":[%s,%s],"
				 "\"outs\":[%s],\"wait\":[{\"semaphore\":\"s0\","
				 "\"value\":1}]", tt_ops[q],
				 OPND("xs", dt_of(sh), P, W, 0, pairs),
				 OPND("xs", dt_of(sh), P, W, b1, pairs),
				 AP("ys", o_dt, P, F, 0));
			check_op(tt_ops[q], sh, W, W, o_dt, F, body, x, want);
			free(x);
			free(want);
		}
}
END_TEST

/* ---- TensorScalar ---------------------------------------------------------- */

static const struct ts_case {
	const char *op0, *op1;
	float c0, c1;
	int rev0, rev1;
} ts_cases[] = {
	{ "mult", "add", 2.5f, -1.0f, 0, 0 },
	{ "subtract", "divide", 1.0f, 3.0f, 1, 1 },
	{ "add", "mult", -0.0f, 0.1f, 1, 0 },
	{ "max", "min", 0.0f, 1.5f, 0, 1 },
	{ "divide", "subtract", 7.0f, 0.25f, 0, 0 },
};

START_TEST(test_tensorscalar_shapes)
{
	for (int k = 0; k < N_SHAPES; k++)
		for (size_t q = 0; q < sizeof ts_cases / sizeof ts_cases[0];
		     q++) {
			const struct shape *sh = &shapes[k];
			const struct ts_case *c = &ts_cases[q];
			int W = xs_width(sh, 1), P = sh->P, F = sh->F;
			const char *o_dt = outs_dt[(k + q) % 2];
			float *x = malloc(sizeof *x * P * W);
			float *want = malloc(sizeof *want * P * F);
			char pairs[64], body[1024];
			fill(x, P, W, 23 + k + (uint32_t)q, !sh->is_bf16);
			for (int p = 0; p < P; p++)
				for (int j = 0; j < F; j++) {
					float v = src_val(sh, x, W, W, p, 0, j);
					v = c->rev0 ? alu(c->op0, c->c0, v) :
					    alu(c->op0, v, c->c0);
					v = c->rev1 ? alu(c->op1, c->c1, v) :
					    alu(c->op1, v, c->c1);
					want[p * F + j] = v;
				}
			round_out(want, P * F, o_dt);
			snprintf(body, sizeof body, "\"opcode\":\"TensorScalar\","
				 "\"engine\":\"DVE\",\"op0\":\"%s\",\"const0\":"
				 "%.9g,\"op1\":\"%s\",\"const1\":%.9g,"
				 "\"reverse0\":%s,\"reverse1\":%s,\"ins\":[%s],"
				 "\"outs\":[%s],\"wait\":[{\"semaphore\":\"s0\","
				 "\"value\":1}]", c->op0, (double)c->c0, c->op1,
				 (double)c->c1, c->rev0 ? "true" : "false",
				 c->rev1 ? "true" : "false",
				 OPND("xs", dt_of(sh), P, W, 0, src_pairs(sh,
				 pairs, sizeof pairs)), AP("ys", o_dt, P, F, 0));
			check_op(c->op0, sh, W, W, o_dt, F, body, x, want);
			free(x);
			free(want);
		}
}
END_TEST

/* ---- TensorReduce ---------------------------------------------------------- */

static const char *const red_ops[] = {
	"add", "subtract", "mult", "max", "min", "average",
};

START_TEST(test_reduce_shapes)
{
	for (int k = 0; k < N_SHAPES; k++)
		for (size_t q = 0; q < sizeof red_ops / sizeof red_ops[0];
		     q++) {
			const struct shape *sh = &shapes[k];
			int W = xs_width(sh, 1), P = sh->P, F = sh->F;
			int neg = (int)(q + k) % 3 == 0;
			const char *op = red_ops[q];
			float *x = malloc(sizeof *x * P * W);
			float *want = malloc(sizeof *want * P);
			char pairs[64], body[1024];
			fill(x, P, W, 31 + k + (uint32_t)q, !sh->is_bf16);
			if (!strcmp(op, "mult")) /* keep products finite */
				for (int i = 0; i < P * W; i++)
					if (isfinite(x[i]) && fabsf(x[i]) > 4)
						x[i] = 1.25f;
			if (!sh->is_bf16) /* row 0: NaNs, payloads apart */
				for (int j = 0; j < W; j++)
					x[j] = bits_f(0x7fc00001u + (uint32_t)j *
						      0x80000011u);
			for (int p = 0; p < P; p++) {
				float acc = src_val(sh, x, W, W, p, 0, 0);
				if (!strcmp(op, "average")) {
					acc = alu("divide", acc, (float)F);
					for (int j = 1; j < F; j++)
						acc = alu("add", acc, alu("mult",
							  1.0f / (float)F,
							  src_val(sh, x, W, W,
								  p, 0, j)));
				} else {
					for (int j = 1; j < F; j++)
						acc = alu(op, acc, src_val(sh, x,
							  W, W, p, 0, j));
				}
				want[p] = neg ? -acc : acc;
			}
			snprintf(body, sizeof body, "\"opcode\":\"TensorReduce\","
				 "\"engine\":\"DVE\",\"op\":\"%s\",\"axis\":\"%s\","
				 "\"negate\":%s,\"ins\":[%s],\"outs\":[%s],"
				 "\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]",
				 op, strcmp(sh->pat, "perm") ? "X" : "XY",
				 neg ? "true" : "false",
				 OPND("xs", dt_of(sh), P, W, 0, src_pairs(sh,
				 pairs, sizeof pairs)), AP("ys", "float32", P,
				 1, 0));
			check_op(op, sh, W, W, "float32", 1, body, x, want);
			free(x);
			free(want);
		}
}
END_TEST

/* ---- Activation and Exponential --------------------------------------- */

static float act(const char *f, float v)
{
	if (!strcmp(f, "Exp"))
		return expf(v);
	if (!strcmp(f, "Relu"))
		return isnan(v) ? v : v > 0.0f ? v : 0.0f;
	if (!strcmp(f, "Square"))
		return v * v;
	return v; /* Identity */
}

static const char *const act_funcs[] = { "Exp", "Identity", "Relu", "Square" };

START_TEST(test_activation_shapes)
{
	for (int k = 0; k < N_SHAPES; k++)
		for (size_t q = 0; q < sizeof act_funcs / sizeof act_funcs[0];
		     q++) {
			const struct shape *sh = &shapes[k];
			if (sh->is_bf16)
				continue; /* the bias is float32 only */
			int W = xs_width(sh, 1), P = sh->P, F = sh->F;
			const char *o_dt = outs_dt[(k + q) % 2];
			const float scale = 0.5f;
			float *x = malloc(sizeof *x * P * W);
			float *want = malloc(sizeof *want * P * F);
			char pairs[64], body[1024];
			fill(x, P, W, 41 + k + (uint32_t)q, !sh->is_bf16);
			for (int p = 0; p < P; p++) {
				float b = x[p * W + W - 1];
				for (int j = 0; j < F; j++) {
					float v = src_val(sh, x, W, W, p, 0, j) *
						  scale;
					v = v + b;
					want[p * F + j] = act(act_funcs[q], v);
				}
			}
			round_out(want, P * F, o_dt);
			snprintf(body, sizeof body, "\"opcode\":\"Activation\","
				 "\"acc\":\"Idle\",\"alpha\":0.0,\"op0\":"
				 "\"bypass\",\"op1\":\"bypass\",\"reduce_op\":"
				 "\"bypass\",\"engine\":\"Activation\",\"func\":"
				 "\"%s\",\"scale\":0.5,\"ins\":[%s,%s],\"outs\":"
				 "[%s],\"wait\":[{\"semaphore\":\"s0\","
				 "\"value\":1}]", act_funcs[q],
				 OPND("xs", dt_of(sh), P, W, 0, src_pairs(sh,
				 pairs, sizeof pairs)), OPND("xs", dt_of(sh), P,
				 W, W - 1, "[1,1]"), AP("ys", o_dt, P, F, 0));
			check_op(act_funcs[q], sh, W, W, o_dt, F, body, x, want);
			free(x);
			free(want);
		}
}
END_TEST

START_TEST(test_exponential_shapes)
{
	for (int k = 0; k < N_SHAPES; k++)
		for (int has_max = 0; has_max < 2; has_max++) {
			const struct shape *sh = &shapes[k];
			int W = xs_width(sh, 1), P = sh->P, F = sh->F;
			const char *o_dt = outs_dt[(k + has_max) % 2];
			float *x = malloc(sizeof *x * P * W);
			float *want = malloc(sizeof *want * P * F);
			char pairs[64], body[1024], mx[320];
			fill(x, P, W, 53 + k + (uint32_t)has_max, !sh->is_bf16);
			for (int p = 0; p < P; p++) {
				float m = sh->is_bf16 ? via_bf16(x[p * W + W -
					  1]) : x[p * W + W - 1];
				for (int j = 0; j < F; j++) {
					float v = src_val(sh, x, W, W, p, 0, j);
					want[p * F + j] = expf(has_max ? v - m :
							       v);
				}
			}
			round_out(want, P * F, o_dt);
			snprintf(mx, sizeof mx, ",%s", OPND("xs", dt_of(sh), P,
				 W, W - 1, "[1,1]"));
			snprintf(body, sizeof body, "\"opcode\":\"Exponential\","
				 "\"reduce_cmd\":\"Idle\",\"engine\":"
				 "\"Activation\",\"ins\":[%s%s],\"outs\":[%s],"
				 "\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]",
				 OPND("xs", dt_of(sh), P, W, 0, src_pairs(sh,
				 pairs, sizeof pairs)), has_max ? mx : "",
				 AP("ys", o_dt, P, F, 0));
			check_op("Exponential", sh, W, W, o_dt, F, body, x,
				 want);
			free(x);
			free(want);
		}
}
END_TEST

/* ---- partly written sources ------------------------------------------- */

/*
** Only the first columns of xs are written and the ops may read
** uninitialized memory: rows that are not all written take the checked
** loops, whose never-written elements read as NaN (all bits set), on the
** first and the second read alike.
*/
START_TEST(test_partly_written)
{
	const struct shape sh = { "rows 16x24", 16, 24, "row", 0, 0 };
	const int P = sh.P, F = sh.F, W = xs_width(&sh, 1), wc = 17;
	float x[16 * 25], want[16 * 24], y1[16];
	char body[1024], pairs[64];
	fill(x, P, W, 5, 1);
	src_pairs(&sh, pairs, sizeof pairs);

	for (int p = 0; p < P; p++)
		for (int j = 0; j < F; j++)
			want[p * F + j] = src_val(&sh, x, W, wc, p, 0, j);
	snprintf(body, sizeof body, "\"opcode\":\"TensorCopy\",\"engine\":"
		 "\"DVE\",\"can_read_uninit\":true,\"ins\":[%s],\"outs\":[%s],"
		 "\"wait\":[{\"semaphore\":\"s0\",\"value\":1}]",
		 OPND("xs", "float32", P, W, 0, pairs),
		 AP("ys", "float32", P, F, 0));
	check_op("TensorCopy partly written", &sh, W, wc, "float32", F, body,
		 x, want);

	for (int p = 0; p < P; p++)
		for (int j = 0; j < F; j++)
			want[p * F + j] = expf(src_val(&sh, x, W, wc, p, 0, j));
	snprintf(body, sizeof body, "\"opcode\":\"Exponential\",\"reduce_cmd\":"
		 "\"Idle\",\"engine\":\"Activation\",\"can_read_uninit\":true,"
		 "\"ins\":[%s],\"outs\":[%s],\"wait\":[{\"semaphore\":\"s0\","
		 "\"value\":1}]", OPND("xs", "float32", P, W, 0, pairs),
		 AP("ys", "float32", P, F, 0));
	check_op("Exponential partly written", &sh, W, wc, "float32", F, body,
		 x, want);

	for (int p = 0; p < P; p++) {
		float acc = src_val(&sh, x, W, wc, p, 0, 0);
		for (int j = 1; j < F; j++)
			acc = alu("add", acc, src_val(&sh, x, W, wc, p, 0, j));
		y1[p] = acc;
	}
	snprintf(body, sizeof body, "\"opcode\":\"TensorReduce\",\"engine\":"
		 "\"DVE\",\"op\":\"add\",\"axis\":\"X\",\"negate\":false,"
		 "\"can_read_uninit\":true,\"ins\":[%s],\"outs\":[%s],\"wait\":"
		 "[{\"semaphore\":\"s0\",\"value\":1}]",
		 OPND("xs", "float32", P, W, 0, pairs),
		 AP("ys", "float32", P, 1, 0));
	check_op("TensorReduce partly written", &sh, W, wc, "float32", 1, body,
		 x, y1);
}
END_TEST

/* Without can_read_uninit a partly written source is still refused. */
START_TEST(test_partly_written_refused)
{
	const int P = 4, F = 16, W = F + 1;
	float x[4 * 17], y[4 * 16];
	char inst[2048];
	lm_error err;
	fill(x, P, W, 9, 1);
	snprintf(inst, sizeof inst, "{\"name\":\"op\",\"opcode\":"
		 "\"TensorTensor\",\"engine\":\"DVE\",\"op\":\"add\",\"ins\":"
		 "[%s,%s],\"outs\":[%s],\"wait\":[{\"semaphore\":\"s0\","
		 "\"value\":1}]}", OPND("xs", "float32", P, W, 0, "[1,16]"),
		 OPND("xs", "float32", P, W, 0, "[1,16]"),
		 AP("ys", "float32", P, F, 0));
	ck_assert_int_ne(run_op("float32", "float32", P, W, 12, F, 0, NULL,
				inst, x, y, &err), 0);
	ck_assert_msg(strstr(err.msg, "reads uninitialized memory") != NULL,
		      "%s", err.msg);
}
END_TEST

/*
** A TensorCopy, TensorTensor add or TensorScalar mult+add (computed at
** its commit straight from its sources) while a short Memset on another
** engine writes part of its source (what = 0) or of its destination
** (what = 1) before it completes: it writes what its sources held at its
** start, after the Memset. what = 2: the op writes its own source (the
** same rows), no Memset.
*/
START_TEST(test_source_written_in_flight)
{
	enum { P = 4, F = 512 };
	static const char *const ops[] = {
		"\"opcode\":\"TensorCopy\"",
		"\"opcode\":\"TensorTensor\",\"op\":\"add\"",
		"\"opcode\":\"TensorScalar\",\"op0\":\"mult\",\"const0\":2,"
		"\"op1\":\"add\",\"const1\":1,\"reverse0\":false,"
		"\"reverse1\":false",
	};
	for (int op = 0; op < 3; op++)
	for (int what = 0; what < 3; what++)
		for (int dt = 0; dt < 2; dt++) {
			const char *d = dt ? "bfloat16" : "float32";
			const char *out = what == 2 ? "xs" : "ys";
			float x[P * F];
			char ins[800];
			tb t;
			ls_result r;
			lm_module *m;
			lm_error err;
			tb_fill(x, P * F, 61 + what);
			tb_init(&t);
			tb_dram(&t, "x", "ExternalInput", d, P, F);
			tb_dram(&t, "y", "ExternalOutput", d, P, F);
			tb_sb(&t, "xs", d, P, F);
			tb_sb(&t, "ys", d, P, F);
			tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\","
				"\"engine\":\"SP\",\"queue\":\"q0\",\"ins\":[%s],"
				"\"outs\":[%s]}", AP("x", d, P, F, 0),
				AP("xs", d, P, F, 0));
			snprintf(ins, sizeof ins, "%s%s%s", AP("xs", d, P, F, 0),
				 op == 1 ? "," : "", op == 1 ? AP("xs", d, P,
				 F, 0) : "");
			/* 512 elements a partition on DVE against a Memset of
			** 4 on Pool, both started by the load */
			tb_inst(&t, "{%s,\"name\":\"cp\",\"engine\":\"DVE\","
				"\"ins\":[%s],\"outs\":[%s],\"wait\":[{"
				"\"semaphore\":\"s0\",\"value\":1}]}", ops[op],
				ins, AP(out, d, P, F, 0));
			tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\","
				"\"name\":\"w1\",\"engine\":\"Pool\",\"outs\":"
				"[%s],\"constant\":7,\"wait\":[{\"semaphore\":"
				"\"s0\",\"value\":1}]}",
				APS(what ? "ys" : "xs", d, P, 4, 8, F));
			tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\","
				"\"engine\":\"SP\",\"queue\":\"q0\",\"ins\":[%s],"
				"\"outs\":[%s],\"dependencies\":[\"cp\",\"w1\"]}",
				AP(out, d, P, F, 0), AP("y", d, P, F, 0));
			m = tb_module(&t, 0);
			ck_assert_msg(tb_run1(m, x, P, F, NULL, &r, &err) == 0,
				      "run: %s", err.msg);
			for (int i = 0; i < P * F; i++) {
				float v = dt ? via_bf16(x[i]) : x[i], want;
				if (op == 1)
					v = alu("add", v, v);
				else if (op == 2)
					v = alu("add", alu("mult", v, 2.0f),
						1.0f);
				want = dt ? via_bf16(v) : v;
				ck_assert_msg(f_bits(tb_out(&r, "y", i)) ==
					      f_bits(want), "op %d what %d %s: "
					      "element %d is %g, want %g", op,
					      what, d, i,
					      (double)tb_out(&r, "y", i),
					      (double)want);
			}
			ls_result_free(&r);
			lm_module_free(m);
			tb_free(&t);
		}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("elemfast");
	TCase *tc = tcase_create("elemfast");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_copy_shapes);
	tcase_add_test(tc, test_tensortensor_shapes);
	tcase_add_test(tc, test_tensorscalar_shapes);
	tcase_add_test(tc, test_reduce_shapes);
	tcase_add_test(tc, test_activation_shapes);
	tcase_add_test(tc, test_exponential_shapes);
	tcase_add_test(tc, test_partly_written);
	tcase_add_test(tc, test_partly_written_refused);
	tcase_add_test(tc, test_source_written_in_flight);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

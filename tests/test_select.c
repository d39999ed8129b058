/*
** test_select.c -- the predicated moves, the top-8 search and the
** batch-norm statistics of docs/semantics.md against values computed in
** the test by plain loops that share nothing with sim/: the operand
** order, the dtype each value is rounded to, NaN / -0, ties, and each
** refusal with its message and exit kind (LM_EINPUT: a malformed module,
** exit 2; LM_ECHECK: found in the data, exit 1).
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

/* One host input: DRAM tensor x<i> [P, F] of dtype dt, raw bytes. */
typedef struct tin {
	const char *dt;
	int P, F;
	const void *data;
} tin;

/* One output: SB ys<k> [P, F] of dtype dt, stored into DRAM y<k>. */
typedef struct tout {
	const char *dt;
	int P, F;
	int init;               /* >= 0: preloaded from input init */
} tout;

/*
** Inputs i are loaded into SB s<i> (queue q0, each signals s0); outputs
** into SB ys<k> (preloaded from x<init> when init >= 0); the instruction
** `op` (JSON members without the braces: opcode, keys, ins, outs over
** s<i> / ys<k>) waits for every load, and each ys<k> is stored to y<k>
** after it. check_only: ls_check_module instead of a run. Returns the
** status; on success r holds the outputs (caller frees).
*/
static int run_op(const tin *in, int n_in, const tout *out, int n_out,
		  const char *op, int check_only, ls_result *r, lm_error *err)
{
	tb t;
	lm_module *m;
	ls_tensors host = {0, NULL};
	char nm[16], nm2[16];
	int loads = 0, rc;

	tb_init(&t);
	for (int i = 0; i < n_in; i++) {
		snprintf(nm, sizeof nm, "x%d", i);
		snprintf(nm2, sizeof nm2, "s%d", i);
		tb_dram(&t, nm, "ExternalInput", in[i].dt, in[i].P, in[i].F);
		tb_sb(&t, nm2, in[i].dt, in[i].P, in[i].F);
	}
	for (int k = 0; k < n_out; k++) {
		snprintf(nm, sizeof nm, "y%d", k);
		snprintf(nm2, sizeof nm2, "ys%d", k);
		tb_dram(&t, nm, "ExternalOutput", out[k].dt, out[k].P,
			out[k].F);
		tb_sb(&t, nm2, out[k].dt, out[k].P, out[k].F);
	}
	for (int i = 0; i < n_in; i++) {
		snprintf(nm, sizeof nm, "x%d", i);
		snprintf(nm2, sizeof nm2, "s%d", i);
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld%d\","
			"\"engine\":\"SP\",\"queue\":\"q0\",\"ins\":[%s],"
			"\"outs\":[%s]}", i, AP(nm, in[i].dt, in[i].P,
			in[i].F, 0), AP(nm2, in[i].dt, in[i].P, in[i].F, 0));
		loads++;
	}
	for (int k = 0; k < n_out; k++) {
		int i = out[k].init;
		if (i < 0)
			continue;
		snprintf(nm, sizeof nm, "x%d", i);
		snprintf(nm2, sizeof nm2, "ys%d", k);
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ldy%d\","
			"\"engine\":\"SP\",\"queue\":\"q0\",\"ins\":[%s],"
			"\"outs\":[%s]}", k, AP(nm, in[i].dt, in[i].P,
			in[i].F, 0), AP(nm2, out[k].dt, out[k].P, out[k].F,
			0));
		loads++;
	}
	tb_inst(&t, "{%s,\"name\":\"op\",\"engine\":\"DVE\",\"wait\":[{"
		"\"semaphore\":\"s0\",\"value\":%d}]}", op, loads);
	for (int k = 0; k < n_out; k++) {
		snprintf(nm, sizeof nm, "ys%d", k);
		snprintf(nm2, sizeof nm2, "y%d", k);
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st%d\","
			"\"engine\":\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
			"[\"op\"]}", k, AP(nm, out[k].dt, out[k].P, out[k].F,
			0), AP(nm2, out[k].dt, out[k].P, out[k].F, 0));
	}
	m = tb_module(&t, 0);
	if (check_only) {
		rc = ls_check_module(m, err);
	} else {
		for (int i = 0; i < n_in; i++) {
			int64_t shape[2] = { in[i].P, in[i].F };
			snprintf(nm, sizeof nm, "x%d", i);
			ls_tensors_add(&host, nm, lm_dtype_parse(in[i].dt),
				       shape, 2, in[i].data);
		}
		rc = ls_run(m, &host, NULL, r, err);
		ls_tensors_free(&host);
	}
	lm_module_free(m);
	tb_free(&t);
	return rc;
}

/* Raw output element i of y<k> (esize bytes) as an unsigned value. */
static uint64_t out_raw(const ls_result *r, int k, int64_t i)
{
	char nm[16];
	const ls_tensor *t;
	uint64_t v = 0;
	int es;
	snprintf(nm, sizeof nm, "y%d", k);
	t = ls_tensors_find(&r->outputs, nm);
	ck_assert_msg(t != NULL, "no output %s", nm);
	es = lm_dtype_size(t->dtype);
	ck_assert(i < t->count);
	memcpy(&v, (const char *)t->data + i * es, (size_t)es);
	return v;
}

/* Round float32 bits to bfloat16 bits, to nearest even (NaN: quiet). */
static uint16_t ref_bf16(uint32_t u)
{
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float bitsf(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* "{"kind":"physical_ap",...}" of s<i> / ys<k> (rotating buffers). */
#define SI(i, dt, P, F) AP("s" #i, dt, P, F, 0)
#define YS(k, dt, P, F) AP("ys" #k, dt, P, F, 0)

/* ---- Select ------------------------------------------------------------- */

/*
** dst = pred ? on_true : on_false, a bit copy between equal dtypes: a
** signalling NaN's payload and -0 move unchanged; the predicate is uint8.
*/
START_TEST(test_select_bits)
{
	enum { P = 2, F = 4 };
	const uint32_t tv[P * F] = {
		0x3f800000u, 0x7fa00001u, 0x80000000u, 0x40490fdbu,
		0xff800000u, 0x00000001u, 0xbf800000u, 0x7fc12345u,
	};
	const uint32_t fv[P * F] = {
		0x7f812345u, 0x00000000u, 0x3f000000u, 0x80000001u,
		0x7f800000u, 0xc0000000u, 0x80000000u, 0x12345678u,
	};
	const uint8_t pv[P * F] = { 1, 0, 1, 0, 0, 1, 1, 0 };
	tin in[3] = { { "float32", P, F, tv }, { "float32", P, F, fv },
		      { "uint8", P, F, pv } };
	tout out[1] = { { "float32", P, F, -1 } };
	char op[1024];
	ls_result r;
	lm_error err;

	snprintf(op, sizeof op, "\"opcode\":\"Select\",\"ins\":[%s,%s,%s],"
		 "\"outs\":[%s]", SI(0, "float32", P, F),
		 SI(1, "float32", P, F), SI(2, "uint8", P, F),
		 YS(0, "float32", P, F));
	ck_assert_msg(run_op(in, 3, out, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < P * F; i++)
		ck_assert_uint_eq(out_raw(&r, 0, i), pv[i] ? tv[i] : fv[i]);
	ls_result_free(&r);
}
END_TEST

/*
** Another float dtype and an immediate: a float32 on_true is rounded
** once to the bfloat16 destination (1 + 2^-8 is a tie: to even, 1;
** 1 + 3 * 2^-9 rounds up to 1 + 2^-7), the immediate 0.1 is rounded to
** float32 and then to bfloat16; the predicate is int32.
*/
START_TEST(test_select_convert_imm)
{
	enum { P = 1, F = 4 };
	const float tv[F] = { 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-9f, -0.0f,
			      65504.0f };
	const int32_t pv[F] = { 1, 1, 1, 0 };
	tin in[2] = { { "float32", P, F, tv }, { "int32", P, F, pv } };
	tout out[1] = { { "bfloat16", P, F, -1 } };
	char op[1024];
	ls_result r;
	lm_error err;

	snprintf(op, sizeof op, "\"opcode\":\"Select\",\"ins\":[%s,{\"kind\":"
		 "\"imm_value\",\"value\":0.1,\"dtype\":\"float32\"},%s],"
		 "\"outs\":[%s]", SI(0, "float32", P, F),
		 SI(1, "int32", P, F), YS(0, "bfloat16", P, F));
	ck_assert_msg(run_op(in, 2, out, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < F; i++) {
		uint16_t want = pv[i] ? ref_bf16(fbits(tv[i]))
				      : ref_bf16(fbits((float)0.1));
		ck_assert_uint_eq(out_raw(&r, 0, i), want);
	}
	ck_assert_uint_eq(out_raw(&r, 0, 0), 0x3f80);
	ck_assert_uint_eq(out_raw(&r, 0, 1), 0x3f81);
	ls_result_free(&r);
}
END_TEST

/* A predicate value other than 0 or 1 stops the run, naming it. */
START_TEST(test_select_bad_pred)
{
	const float tv[4] = { 1, 2, 3, 4 };
	const uint16_t pv[4] = { 0, 1, 2, 0 };
	tin in[3] = { { "float32", 1, 4, tv }, { "float32", 1, 4, tv },
		      { "uint16", 1, 4, pv } };
	tout out[1] = { { "float32", 1, 4, -1 } };
	char op[1024];
	ls_result r;
	lm_error err;
	snprintf(op, sizeof op, "\"opcode\":\"Select\",\"ins\":[%s,%s,%s],"
		 "\"outs\":[%s]", SI(0, "float32", 1, 4),
		 SI(1, "float32", 1, 4), SI(2, "uint16", 1, 4),
		 YS(0, "float32", 1, 4));
	ck_assert_int_eq(run_op(in, 3, out, 1, op, 0, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "predicate (ins[2]) partition 0 element 2 "
			   "is 2: Select takes only 0 or 1 (Select)");
}
END_TEST

/* Malformed operands: exit 2 with the operand named. */
static const struct { const char *ins, *want; } select_bad[] = {
	{ "S0F,S1F,S2FLOAT", "the predicate (ins[2]) must be of an integer "
	  "dtype, got float32 (Select)" },
	{ "S0F,S1F,S2P1", "ins[2] must have the shape of outs[0] (8 elements "
	  "over 2 partitions), got 4 over 1 (Select)" },
	{ "S0F,S3F,S2U8", "ins[1] must have the shape of outs[0] (8 elements "
	  "over 2 partitions), got 8 over 4 (Select)" },
	{ "S0F,S2U8", "needs 3 inputs (on_true, on_false, predicate) and 1 "
	  "output, got 2 and 1 (Select)" },
	{ "S0I,S1F,S2U8", "ins[0] must have the dtype of outs[0] (float32), "
	  "got int32 (Select)" },
};

START_TEST(test_select_malformed)
{
	const float f8[8] = { 0 };
	const uint8_t u8[8] = { 0 };
	tin in[4] = { { "float32", 2, 4, f8 }, { "float32", 2, 4, f8 },
		      { "uint8", 2, 4, u8 }, { "float32", 4, 2, f8 } };
	tout out[1] = { { "float32", 2, 4, -1 } };
	char op[2048], ins[1024] = "";
	const char *p = select_bad[_i].ins;
	ls_result r;
	lm_error err;

	/* the tokens name the operands: S<i><kind> */
	while (*p) {
		char tok[16];
		size_t n = strcspn(p, ",");
		const char *a;
		memcpy(tok, p, n);
		tok[n] = 0;
		p += n + (p[n] == ',');
		if (!strcmp(tok, "S0F")) a = SI(0, "float32", 2, 4);
		else if (!strcmp(tok, "S1F")) a = SI(1, "float32", 2, 4);
		else if (!strcmp(tok, "S2U8")) a = SI(2, "uint8", 2, 4);
		else if (!strcmp(tok, "S2P1")) a = SI(2, "uint8", 1, 4);
		else if (!strcmp(tok, "S3F")) a = SI(3, "float32", 4, 2);
		/* another dtype over the same bytes */
		else if (!strcmp(tok, "S2FLOAT")) a = AP("s1", "float32", 2, 4, 0);
		else a = AP("s0", "int32", 2, 4, 0);
		strcat(ins, *ins ? "," : "");
		strcat(ins, a);
	}
	snprintf(op, sizeof op, "\"opcode\":\"Select\",\"ins\":[%s],\"outs\":"
		 "[%s]", ins, YS(0, "float32", 2, 4));
	ck_assert_int_eq(run_op(in, 4, out, 1, op, 0, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, select_bad[_i].want);
}
END_TEST

/* ---- CopyPredicated ----------------------------------------------------- */

/*
** dst[i] = src[i] where pred[i] != 0 (== 0 with reverse_pred), the other
** elements keep the destination's earlier bits; any non-zero uint32 is
** true.
*/
START_TEST(test_copypred)
{
	enum { P = 2, F = 4 };
	const uint32_t sv[P * F] = {
		0x3f800000u, 0x7fa00001u, 0x80000000u, 0x40000000u,
		0x40400000u, 0x40800000u, 0x40a00000u, 0x40c00000u,
	};
	const uint32_t dv[P * F] = {
		0xbf800000u, 0xc0000000u, 0xc0400000u, 0x00000000u,
		0x7fc00000u, 0xc0a00000u, 0xc0c00000u, 0xc0e00000u,
	};
	const uint32_t pv[P * F] = { 0, 1, 7, 0xffffffffu, 0x100, 0, 0, 1 };
	tin in[3] = { { "float32", P, F, sv }, { "uint32", P, F, pv },
		      { "float32", P, F, dv } };
	tout out[1] = { { "float32", P, F, 2 } };
	for (int rev = 0; rev < 2; rev++) {
		char op[1024];
		ls_result r;
		lm_error err;
		snprintf(op, sizeof op, "\"opcode\":\"CopyPredicated\","
			 "\"reverse_pred\":%s,\"ins\":[%s,%s],\"outs\":[%s]",
			 rev ? "true" : "false", SI(0, "float32", P, F),
			 SI(1, "uint32", P, F), YS(0, "float32", P, F));
		ck_assert_msg(run_op(in, 3, out, 1, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int i = 0; i < P * F; i++) {
			int sel = (pv[i] != 0) != rev;
			ck_assert_uint_eq(out_raw(&r, 0, i),
					  sel ? sv[i] : dv[i]);
		}
		ls_result_free(&r);
	}
}
END_TEST

/*
** A 64-bit predicate is read whole: 2^32 and 2^63 (zero low halves) hold
** for CopyPredicated; Select takes an int64 0 / 1 and refuses 2^32.
*/
START_TEST(test_pred_64bit)
{
	enum { P = 1, F = 4 };
	const float sv[F] = { 1, 2, 3, 4 }, dv[F] = { -1, -2, -3, -4 };
	const uint64_t pv[F] = { 0, 1ull << 32, 1ull << 63, 1 };
	const int64_t p01[F] = { 1, 0, 0, 1 };
	tin in[3] = { { "float32", P, F, sv }, { "uint64", P, F, pv },
		      { "float32", P, F, dv } };
	tin in2[3] = { { "float32", P, F, sv }, { "float32", P, F, dv },
		       { "int64", P, F, p01 } };
	tout out[1] = { { "float32", P, F, 2 } };
	tout out2[1] = { { "float32", P, F, -1 } };
	char op[1024];
	ls_result r;
	lm_error err;

	snprintf(op, sizeof op, "\"opcode\":\"CopyPredicated\",\"ins\":"
		 "[%s,%s],\"outs\":[%s]", SI(0, "float32", P, F),
		 SI(1, "uint64", P, F), YS(0, "float32", P, F));
	ck_assert_msg(run_op(in, 3, out, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < F; i++)
		ck_assert_uint_eq(out_raw(&r, 0, i),
				  fbits(pv[i] ? sv[i] : dv[i]));
	ls_result_free(&r);
	snprintf(op, sizeof op, "\"opcode\":\"Select\",\"ins\":[%s,%s,%s],"
		 "\"outs\":[%s]", SI(0, "float32", P, F),
		 SI(1, "float32", P, F), SI(2, "int64", P, F),
		 YS(0, "float32", P, F));
	ck_assert_msg(run_op(in2, 3, out2, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < F; i++)
		ck_assert_uint_eq(out_raw(&r, 0, i),
				  fbits(p01[i] ? sv[i] : dv[i]));
	ls_result_free(&r);
	in2[2].data = pv;
	ck_assert_int_ne(run_op(in2, 3, out2, 1, op, 0, &r, &err), 0);
	ck_assert_msg(strstr(err.msg, "partition 0 element 1 is 4294967296: "
			     "Select takes only 0 or 1") != NULL, "%s",
		      err.msg);
}
END_TEST

/*
** An element not copied is not written: a destination never written
** stays so (the store then reads it and stops); when every element is
** copied, the store succeeds. An immediate source is rounded to float32.
*/
START_TEST(test_copypred_unwritten_imm)
{
	const uint8_t some[4] = { 1, 0, 1, 1 }, all[4] = { 1, 1, 1, 1 };
	tin in[1] = { { "uint8", 1, 4, some } };
	tout out[1] = { { "float32", 1, 4, -1 } };
	char op[1024];
	ls_result r;
	lm_error err;
	snprintf(op, sizeof op, "\"opcode\":\"CopyPredicated\",\"ins\":[{"
		 "\"kind\":\"imm_value\",\"value\":0.1,\"dtype\":\"float32\"},"
		 "%s],\"outs\":[%s]", SI(0, "uint8", 1, 4),
		 YS(0, "float32", 1, 4));
	ck_assert_int_eq(run_op(in, 1, out, 1, op, 0, &r, &err), LM_ECHECK);
	ck_assert_contains(err.msg, "reads uninitialized memory");
	ck_assert_contains(err.msg, "instruction st0");
	in[0].data = all;
	ck_assert_msg(run_op(in, 1, out, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(out_raw(&r, 0, i), fbits((float)0.1));
	ls_result_free(&r);
}
END_TEST

static const struct { const char *op, *want; int code; } copypred_bad[] = {
	{ "\"ins\":[SRC_BF16,PRED],\"outs\":[DST]", "ins[0] must have the "
	  "dtype of outs[0] (float32), got bfloat16 (CopyPredicated)",
	  LM_EINPUT },
	{ "\"ins\":[SRC,PRED_F],\"outs\":[DST]", "the predicate (ins[1]) must "
	  "be of an integer dtype, got float32 (CopyPredicated)", LM_EINPUT },
	{ "\"ins\":[SRC,PRED_1P],\"outs\":[DST]", "ins[1] must have the shape "
	  "of outs[0] (8 elements over 2 partitions), got 4 over 1 "
	  "(CopyPredicated)", LM_EINPUT },
	{ "\"ins\":[SRC],\"outs\":[DST]", "needs 2 inputs (source, predicate) "
	  "and 1 output, got 1 and 1 (CopyPredicated)", LM_EINPUT },
	{ "\"reduce_op\":\"add\",\"ins\":[SRC,PRED],\"outs\":[DST]",
	  "opcode 'CopyPredicated' key 'reduce_op' = \"add\" is not modelled "
	  "by the simulator", LM_EINPUT },
	{ "\"accumulator_cmd\":\"Accumulate\",\"ins\":[SRC,PRED],\"outs\":"
	  "[DST]", "opcode 'CopyPredicated' key 'accumulator_cmd' = "
	  "\"Accumulate\" is not modelled by the simulator", LM_EINPUT },
};

/* Replace every token of s by its operand text into out. */
static void expand(const char *s, char *out, size_t n)
{
	static const char *const toks[] = {
		"SRC_BF16", "SRC", "PRED_F", "PRED_1P", "PRED", "DST",
	};
	size_t o = 0;
	while (*s && o + 1 < n) {
		const char *rep = NULL;
		size_t tl = 0;
		for (size_t k = 0; k < sizeof toks / sizeof *toks; k++)
			if (!strncmp(s, toks[k], strlen(toks[k]))) {
				tl = strlen(toks[k]);
				switch (k) {
				case 0: rep = AP("s2", "bfloat16", 2, 4, 0); break;
				case 1: rep = SI(0, "float32", 2, 4); break;
				case 2: rep = AP("s0", "float32", 2, 4, 0); break;
				case 3: rep = SI(1, "uint32", 1, 4); break;
				case 4: rep = SI(1, "uint32", 2, 4); break;
				default: rep = YS(0, "float32", 2, 4); break;
				}
				break;
			}
		if (rep) {
			size_t rl = strlen(rep);
			ck_assert(o + rl < n);
			memcpy(out + o, rep, rl);
			o += rl;
			s += tl;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = 0;
}

START_TEST(test_copypred_malformed)
{
	const float f8[8] = { 0 };
	const uint32_t u8[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	const uint16_t b8[8] = { 0 };
	tin in[3] = { { "float32", 2, 4, f8 }, { "uint32", 2, 4, u8 },
		      { "bfloat16", 2, 4, b8 } };
	tout out[1] = { { "float32", 2, 4, -1 } };
	char body[1024], op[4096];
	ls_result r;
	lm_error err;
	expand(copypred_bad[_i].op, body, sizeof body);
	snprintf(op, sizeof op, "\"opcode\":\"CopyPredicated\",%s", body);
	ck_assert_int_eq(run_op(in, 3, out, 1, op, 0, &r, &err),
			 copypred_bad[_i].code);
	ck_assert_contains(err.msg, copypred_bad[_i].want);
	if (copypred_bad[_i].code == LM_EINPUT && strstr(body, "reduce_op"))
		ck_assert_int_eq(run_op(in, 3, out, 1, op, 1, &r, &err),
				 LM_EINPUT);
}
END_TEST

/* A randomized Select and CopyPredicated against plain loops. */
START_TEST(test_select_random)
{
	enum { P = 8, F = 37 };
	static float a[P * F], b[P * F], d[P * F];
	static uint8_t p01[P * F], pany[P * F];
	uint32_t s = 12345u + (uint32_t)_i;
	tb_fill(a, P * F, s);
	tb_fill(b, P * F, s + 1);
	tb_fill(d, P * F, s + 2);
	for (int i = 0; i < P * F; i++) {
		s = s * 1664525u + 1013904223u;
		p01[i] = (uint8_t)(s >> 31);
		pany[i] = (uint8_t)(s >> 24) & 3;
	}
	{
		tin in[3] = { { "float32", P, F, a }, { "float32", P, F, b },
			      { "uint8", P, F, p01 } };
		tout out[1] = { { "bfloat16", P, F, -1 } };
		char op[1024];
		ls_result r;
		lm_error err;
		snprintf(op, sizeof op, "\"opcode\":\"Select\",\"ins\":[%s,%s,"
			 "%s],\"outs\":[%s]", SI(0, "float32", P, F),
			 SI(1, "float32", P, F), SI(2, "uint8", P, F),
			 YS(0, "bfloat16", P, F));
		ck_assert_msg(run_op(in, 3, out, 1, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int i = 0; i < P * F; i++)
			ck_assert_uint_eq(out_raw(&r, 0, i), ref_bf16(fbits(
					  p01[i] ? a[i] : b[i])));
		ls_result_free(&r);
	}
	{
		tin in[3] = { { "float32", P, F, a }, { "uint8", P, F, pany },
			      { "float32", P, F, d } };
		tout out[1] = { { "float32", P, F, 2 } };
		char op[1024];
		ls_result r;
		lm_error err;
		snprintf(op, sizeof op, "\"opcode\":\"CopyPredicated\","
			 "\"ins\":[%s,%s],\"outs\":[%s]",
			 SI(0, "float32", P, F), SI(1, "uint8", P, F),
			 YS(0, "float32", P, F));
		ck_assert_msg(run_op(in, 3, out, 1, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int i = 0; i < P * F; i++)
			ck_assert_uint_eq(out_raw(&r, 0, i),
					  fbits(pany[i] ? a[i] : d[i]));
		ls_result_free(&r);
	}
}
END_TEST


/* ---- the top-8 search --------------------------------------------------- */

/*
** Max by hand: equal values keep data order (-0 before +0 when -0 comes
** first), and a NaN stays in the slot it filled among the first eight
** (row 2: [1, NaN, 3, 2, 0, 0, 0, 0, 9, 8] gives [9, NaN, 8, 3, 2, 1, 0,
** 0], traced by hand through the 8-slot insertion).
*/
START_TEST(test_max8_hand)
{
	enum { P = 3, F = 10 };
	const float nan = NAN;
	const float x[P * F] = {
		-0.0f, 0.0f, -1, -2, -3, -4, -5, -6, -7, -8,
		5, 1, 5, 2, 2, 7, 1, 1, 1, 1,
		1, nan, 3, 2, 0, 0, 0, 0, 9, 8,
	};
	const uint32_t want[P][8] = {
		{ 0x80000000u, 0x00000000u, 0xbf800000u, 0xc0000000u,
		  0xc0400000u, 0xc0800000u, 0xc0a00000u, 0xc0c00000u },
		{ 0x40e00000u, 0x40a00000u, 0x40a00000u, 0x40000000u,
		  0x40000000u, 0x3f800000u, 0x3f800000u, 0x3f800000u },
		{ 0x41100000u, 0x7fc00000u, 0x41000000u, 0x40400000u,
		  0x40000000u, 0x3f800000u, 0x00000000u, 0x00000000u },
	};
	tin in[1] = { { "float32", P, F, x } };
	tout out[1] = { { "float32", P, 8, -1 } };
	char op[1024];
	ls_result r;
	lm_error err;
	snprintf(op, sizeof op, "\"opcode\":\"Max\",\"ins\":[%s],\"outs\":"
		 "[%s]", SI(0, "float32", P, F), YS(0, "float32", P, 8));
	ck_assert_msg(run_op(in, 1, out, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int p = 0; p < P; p++)
		for (int k = 0; k < 8; k++) {
			uint32_t got = (uint32_t)out_raw(&r, 0, p * 8 + k);
			if (p == 2 && k == 1)
				ck_assert(isnan(bitsf(got)));
			else
				ck_assert_uint_eq(got, want[p][k]);
		}
	ls_result_free(&r);
}
END_TEST

/* The values and data of the index / replace cases: duplicates matched
** one to one in data order, -0 == +0, a NaN and an absent value never
** found. */
static const float srch_vals[8] = { 8, 8, 5, 7, NAN, 0.0f, -0.0f, 8 };
static const float srch_data[10] = { 3, 8, 8, 2, -0.0f, 8, 1, 5, 8, 0 };
static const uint32_t srch_idx[8] = { 1, 2, 7, 0xffffffffu, 0xffffffffu,
				      4, 9, 5 };

/* MaxIndex (uint32 and uint16), MatchReplace, MaxIndexAndMatchReplace. */
START_TEST(test_search8_hand)
{
	tin in[2] = { { "float32", 1, 8, srch_vals },
		      { "float32", 1, 10, srch_data } };
	const int replaced[10] = { 0, 1, 1, 0, 1, 1, 0, 1, 0, 1 };
	char op[2048];
	ls_result r;
	lm_error err;
	for (int u16 = 0; u16 < 2; u16++) {
		const char *dt = u16 ? "uint16" : "uint32";
		tout out[1] = { { dt, 1, 8, -1 } };
		snprintf(op, sizeof op, "\"opcode\":\"MaxIndex\",\"ins\":[%s,"
			 "%s],\"outs\":[%s]", SI(0, "float32", 1, 8),
			 SI(1, "float32", 1, 10), YS(0, dt, 1, 8));
		ck_assert_msg(run_op(in, 2, out, 1, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int k = 0; k < 8; k++)
			ck_assert_uint_eq(out_raw(&r, 0, k), u16 ?
					  (srch_idx[k] & 0xffffu) : srch_idx[k]);
		ls_result_free(&r);
	}
	{
		tout out[1] = { { "float32", 1, 10, -1 } };
		snprintf(op, sizeof op, "\"opcode\":\"MatchReplace\","
			 "\"imm_value\":-1.5,\"ins\":[%s,%s],\"outs\":[%s]",
			 SI(0, "float32", 1, 8), SI(1, "float32", 1, 10),
			 YS(0, "float32", 1, 10));
		ck_assert_msg(run_op(in, 2, out, 1, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int i = 0; i < 10; i++)
			ck_assert_uint_eq(out_raw(&r, 0, i), replaced[i] ?
					  fbits(-1.5f) : fbits(srch_data[i]));
		ls_result_free(&r);
	}
	{
		tout out[2] = { { "float32", 1, 10, -1 },
				{ "uint32", 1, 8, -1 } };
		snprintf(op, sizeof op, "\"opcode\":\"MaxIndexAndMatchReplace\","
			 "\"imm_value\":-1.5,\"ins\":[%s,%s],\"outs\":[%s,%s]",
			 SI(0, "float32", 1, 8), SI(1, "float32", 1, 10),
			 YS(0, "float32", 1, 10), YS(1, "uint32", 1, 8));
		ck_assert_msg(run_op(in, 2, out, 2, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int i = 0; i < 10; i++)
			ck_assert_uint_eq(out_raw(&r, 0, i), replaced[i] ?
					  fbits(-1.5f) : fbits(srch_data[i]));
		for (int k = 0; k < 8; k++)
			ck_assert_uint_eq(out_raw(&r, 1, k), srch_idx[k]);
		ls_result_free(&r);
	}
}
END_TEST

/* Malformed operands: exit 2, naming the operand. */
static const struct { const char *op, *want; } search_bad[] = {
	{ "\"opcode\":\"Max\",\"ins\":[D7],\"outs\":[O8]", "the data (ins[0]) "
	  "must hold 8 to 16384 elements in each partition, got 14 over 2 "
	  "partitions (Max)" },
	{ "\"opcode\":\"Max\",\"ins\":[D10],\"outs\":[O4]", "outs[0] must be "
	  "[2, 8]: 8 values for each partition of the data, got 8 elements "
	  "over 2 partitions (Max)" },
	{ "\"opcode\":\"MaxIndex\",\"ins\":[V8,D10],\"outs\":[OF]", "the "
	  "indices (outs[0]) must be uint32 or uint16, got float32 "
	  "(MaxIndex)" },
	{ "\"opcode\":\"MaxIndex\",\"ins\":[V1P,D10],\"outs\":[OU]", "ins[0] "
	  "must be [2, 8]: 8 values for each partition of the data, got 8 "
	  "elements over 1 partitions (MaxIndex)" },
	{ "\"opcode\":\"MatchReplace\",\"imm_value\":0,\"ins\":[V8,D10],"
	  "\"outs\":[O8]", "outs[0] must have the shape of the data, ins[1] "
	  "(20 elements over 2 partitions), got 16 over 2 (MatchReplace)" },
	{ "\"opcode\":\"MatchReplace\",\"imm_value\":0,\"ins\":[V8,DI],"
	  "\"outs\":[OD]", "ins[1] must be float data, got int32 "
	  "(MatchReplace)" },
};

START_TEST(test_search8_malformed)
{
	static const float z[64];
	tin in[3] = { { "float32", 2, 7, z }, { "float32", 2, 10, z },
		      { "float32", 2, 8, z } };
	tout out[1] = { { "float32", 2, 10, -1 } };
	static const char *const toks[][2] = {
		/* name|dtype|P|F|elements per partition of the location */
		{ "D7", "s0|float32|2|7|7" }, { "D10", "s1|float32|2|10|10" },
		{ "DI", "s1|int32|2|10|10" }, { "V8", "s2|float32|2|8|8" },
		{ "V1P", "s2|float32|1|8|8" }, { "O8", "ys0|float32|2|8|10" },
		{ "O4", "ys0|float32|2|4|10" }, { "OF", "ys0|float32|2|8|10" },
		{ "OU", "ys0|uint32|2|8|10" }, { "OD", "ys0|float32|2|10|10" },
	};
	const char *s = search_bad[_i].op;
	char op[4096];
	size_t o = 0;
	ls_result r;
	lm_error err;
	while (*s) {
		size_t best = 0, bl = 0;
		for (size_t k = 0; k < sizeof toks / sizeof *toks; k++) {
			size_t l = strlen(toks[k][0]);
			if (!strncmp(s, toks[k][0], l) &&
			    (s[l] == ',' || s[l] == ']') && l > bl)
				best = k, bl = l;
		}
		if (bl) {
			char nm[8], dt[16];
			int P, F, pe;
			const char *a;
			ck_assert(sscanf(toks[best][1], "%7[^|]|%15[^|]|%d|%d|%d",
					 nm, dt, &P, &F, &pe) == 5);
			a = APS(nm, dt, P, F, 0, pe);
			memcpy(op + o, a, strlen(a));
			o += strlen(a);
			s += bl;
		} else {
			op[o++] = *s++;
		}
	}
	op[o] = 0;
	ck_assert_int_eq(run_op(in, 3, out, 1, op, 0, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, search_bad[_i].want);
}
END_TEST

/* The reference of Max on data without NaN, written another way: the 8
** first of a stable descending sort (equal values in data order). */
static void ref_max8(const float *d, int n, float *out)
{
	int idx[64];
	for (int i = 0; i < n; i++)
		idx[i] = i;
	for (int i = 1; i < n; i++) /* insertion sort, stable */
		for (int j = i; j > 0 && d[idx[j]] > d[idx[j - 1]]; j--) {
			int t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (int k = 0; k < 8; k++)
		out[k] = d[idx[k]];
}

/*
** Randomized: values on a coarse grid (many ties, both zeros), Max into
** bfloat16 and float32, then MaxIndexAndMatchReplace of Max's float32
** result against the reference's (first unmatched equal slot in data
** order, -inf replacing).
*/
START_TEST(test_search8_random)
{
	enum { P = 4, F = 40 };
	static float x[P * F], top[P * 8];
	uint32_t s = 777u + (uint32_t)_i;
	for (int i = 0; i < P * F; i++) {
		s = s * 1664525u + 1013904223u;
		x[i] = (float)((int)(s >> 28) - 8) * 0.25f;
		if (x[i] == 0 && (s & 0x100))
			x[i] = -0.0f;
	}
	for (int p = 0; p < P; p++)
		ref_max8(x + p * F, F, top + p * 8);
	{
		tin in[1] = { { "float32", P, F, x } };
		tout out[1] = { { "float32", P, 8, -1 } };
		char op[1024];
		ls_result r;
		lm_error err;
		snprintf(op, sizeof op, "\"opcode\":\"Max\",\"ins\":[%s],"
			 "\"outs\":[%s]", SI(0, "float32", P, F),
			 YS(0, "float32", P, 8));
		ck_assert_msg(run_op(in, 1, out, 1, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int i = 0; i < P * 8; i++)
			ck_assert_uint_eq(out_raw(&r, 0, i), fbits(top[i]));
		ls_result_free(&r);
	}
	{
		tin in[2] = { { "float32", P, 8, top }, { "float32", P, F, x } };
		tout out[2] = { { "float32", P, F, -1 },
				{ "uint32", P, 8, -1 } };
		char op[2048];
		ls_result r;
		lm_error err;
		snprintf(op, sizeof op, "\"opcode\":\"MaxIndexAndMatchReplace\","
			 "\"imm_value\":\"-inf\",\"ins\":[%s,%s],\"outs\":"
			 "[%s,%s]", SI(0, "float32", P, 8),
			 SI(1, "float32", P, F), YS(0, "float32", P, F),
			 YS(1, "uint32", P, 8));
		ck_assert_msg(run_op(in, 2, out, 2, op, 0, &r, &err) == 0,
			      "%s", err.msg);
		for (int p = 0; p < P; p++) {
			int used[F] = {0};
			for (int k = 0; k < 8; k++) {
				int at = -1;
				for (int i = 0; i < F && at < 0; i++)
					if (!used[i] && x[p * F + i] ==
					    top[p * 8 + k])
						at = i;
				ck_assert_int_ge(at, 0);
				used[at] = 1;
				ck_assert_uint_eq(out_raw(&r, 1, p * 8 + k),
						  (uint32_t)at);
			}
			for (int i = 0; i < F; i++)
				ck_assert_uint_eq(out_raw(&r, 0, p * F + i),
						  used[i] ? fbits(-INFINITY)
						  : fbits(x[p * F + i]));
		}
		ls_result_free(&r);
	}
}
END_TEST

/* ---- BNStats / BNStatsAggregate ---------------------------------------- */

/* The reference, from the formulas of docs/semantics.md, one float32
** operation per line. */
static void ref_bnstats(const float *x, int n, float *o)
{
	volatile float c = 0;
	o[0] = (float)((n + 1) / 2);
	o[3] = (float)(n / 2);
	o[1] = o[2] = o[4] = o[5] = 0;
	for (int i = 0; i < n; i++) {
		int L = 3 * (i % 2);
		volatile float r, t1, t2, m, d1, d2, pr;
		if (i % 2 == 0)
			c = c + 1;
		r = 1 / c;
		t1 = 1 - r;
		t1 = t1 * o[L + 1];
		t2 = r * x[i];
		m = t1 + t2;
		d1 = x[i] - m;
		d2 = x[i] - o[L + 1];
		pr = d1 * d2;
		o[L + 1] = m;
		o[L + 2] = o[L + 2] + pr;
	}
}

static void ref_bnaggr(const float *t, int k, float *o)
{
	volatile float n = 0, mean = 0, var = 0;
	for (int j = 0; j < k; j++) {
		volatile float tot = t[3 * j] + n, r, d, a, b, v, c;
		r = 1 / tot;
		d = mean - t[3 * j + 1];
		a = mean * n;
		b = t[3 * j] * t[3 * j + 1];
		mean = (a + b) * r;
		v = var * n;
		v = (v + t[3 * j + 2]) * r;
		c = t[3 * j] * n;
		c = c * d;
		c = c * d;
		c = c * r;
		c = c * r;
		var = v + c;
		n = n + t[3 * j];
	}
	o[0] = mean;
	o[1] = var;
}

/*
** Runs BNStats over x [P, F] into s [P, 6], then BNStatsAggregate of s
** (read back as input 1) into [P, 2]; in float32.
*/
static void bn_run(const float *x, int P, int F, float *st, float *ag)
{
	tin in[1] = { { "float32", P, F, x } };
	tout out[1] = { { "float32", P, 6, -1 } };
	char op[1024];
	ls_result r;
	lm_error err;
	snprintf(op, sizeof op, "\"opcode\":\"BNStats\",\"apply_transpose\":"
		 "false,\"ins\":[%s],\"outs\":[%s]", SI(0, "float32", P, F),
		 YS(0, "float32", P, 6));
	ck_assert_msg(run_op(in, 1, out, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < P * 6; i++)
		st[i] = bitsf((uint32_t)out_raw(&r, 0, i));
	ls_result_free(&r);
	in[0].F = 6;
	in[0].data = st;
	out[0].F = 2;
	snprintf(op, sizeof op, "\"opcode\":\"BNStatsAggregate\",\"ins\":[%s],"
		 "\"outs\":[%s]", SI(0, "float32", P, 6),
		 YS(0, "float32", P, 2));
	ck_assert_msg(run_op(in, 1, out, 1, op, 0, &r, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < P * 2; i++)
		ag[i] = bitsf((uint32_t)out_raw(&r, 0, i));
	ls_result_free(&r);
}

/*
** By hand: [1, 2, 3, 4] has lanes {1, 3} and {2, 4}: [2, 2, 2, 2, 3, 2];
** merged, the mean 2.5 and the population variance 1.25. A single
** element: [1, 5, 0, 0, 0, 0], merged 5 and 0.
*/
START_TEST(test_bn_hand)
{
	const float x[2 * 4] = { 1, 2, 3, 4, 5, 5, 5, 5 };
	const float one[1] = { 5 };
	float st[12], ag[4];
	const float want[6] = { 2, 2, 2, 2, 3, 2 };
	bn_run(x, 2, 4, st, ag);
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(fbits(st[i]), fbits(want[i]));
	ck_assert_uint_eq(fbits(ag[0]), fbits(2.5f));
	ck_assert_uint_eq(fbits(ag[1]), fbits(1.25f));
	ck_assert_uint_eq(fbits(ag[2]), fbits(5.0f));
	ck_assert_uint_eq(fbits(ag[3]), fbits(0.0f));
	bn_run(one, 1, 1, st, ag);
	ck_assert_uint_eq(fbits(st[0]), fbits(1.0f));
	ck_assert_uint_eq(fbits(st[1]), fbits(5.0f));
	for (int i = 2; i < 6; i++)
		ck_assert_uint_eq(fbits(st[i]), 0);
	ck_assert_uint_eq(fbits(ag[0]), fbits(5.0f));
	ck_assert_uint_eq(fbits(ag[1]), 0);
}
END_TEST

/*
** Randomized against the reference, bit for bit; and the order matters:
** the canonical Welford step (mean + (x - mean) / k) gives other bits
** for some of these rows, which the simulator must not produce.
*/
START_TEST(test_bn_random)
{
	enum { P = 16, F = 61 };
	static float x[P * F], st[P * 6], ag[P * 2];
	int differs = 0;
	tb_fill(x, P * F, 99u + (uint32_t)_i);
	for (int i = 0; i < P * F; i++)
		x[i] = x[i] * 100.0f + 1000.0f;
	bn_run(x, P, F, st, ag);
	for (int p = 0; p < P; p++) {
		float w[6], a[2];
		volatile float cm = 0;
		ref_bnstats(x + p * F, F, w);
		for (int k = 0; k < 6; k++)
			ck_assert_uint_eq(fbits(st[p * 6 + k]), fbits(w[k]));
		ref_bnaggr(w, 2, a);
		ck_assert_uint_eq(fbits(ag[2 * p]), fbits(a[0]));
		ck_assert_uint_eq(fbits(ag[2 * p + 1]), fbits(a[1]));
		/* the canonical running mean of the even lane */
		for (int i = 0, k = 1; i < F; i += 2, k++)
			cm = cm + (x[p * F + i] - cm) / (float)k;
		differs += fbits(cm) != fbits(w[1]);
	}
	ck_assert_int_gt(differs, 0);
}
END_TEST

static const struct { const char *op, *want; int check; } bn_bad[] = {
	{ "\"opcode\":\"BNStats\",\"apply_transpose\":false,\"ins\":[X8],"
	  "\"outs\":[Y4]", "outs[0] must be [2, 6]: 6 statistics for each "
	  "partition of ins[0], got 8 elements over 2 partitions (BNStats)",
	  0 },
	{ "\"opcode\":\"BNStatsAggregate\",\"ins\":[X9],\"outs\":[Y2]",
	  "ins[0] must hold a multiple of 6 statistics in each partition "
	  "(BNStats results), got 18 elements over 2 partitions "
	  "(BNStatsAggregate)", 0 },
	{ "\"opcode\":\"BNStatsAggregate\",\"ins\":[X12],\"outs\":[Y4]",
	  "outs[0] must be [2, 2]: 2 statistics for each partition of ins[0], "
	  "got 8 elements over 2 partitions (BNStatsAggregate)", 0 },
	{ "\"opcode\":\"BNStats\",\"apply_transpose\":true,\"ins\":[X8],"
	  "\"outs\":[Y6]", "opcode 'BNStats' key 'apply_transpose' = true is "
	  "not modelled by the simulator", 1 },
};

START_TEST(test_bn_malformed)
{
	static const float z[64];
	tin in[1] = { { "float32", 2, 12, z } };
	tout out[1] = { { "float32", 2, 6, -1 } };
	static const char *const toks[][2] = {
		{ "X8", "s0|2|8" }, { "X9", "s0|2|9" }, { "X12", "s0|2|12" },
		{ "Y4", "ys0|2|4" }, { "Y2", "ys0|2|2" }, { "Y6", "ys0|2|6" },
	};
	const char *s = bn_bad[_i].op;
	char op[4096];
	size_t o = 0;
	ls_result r;
	lm_error err;
	while (*s) {
		size_t bl = 0, best = 0;
		for (size_t k = 0; k < sizeof toks / sizeof *toks; k++) {
			size_t l = strlen(toks[k][0]);
			if (!strncmp(s, toks[k][0], l) && s[l] == ']')
				best = k, bl = l;
		}
		if (bl) {
			char nm[8];
			int P, F;
			const char *a;
			ck_assert(sscanf(toks[best][1], "%7[^|]|%d|%d", nm, &P,
					 &F) == 3);
			a = APS(nm, "float32", P, F, 0, nm[0] == 's' ? 12 : 6);
			memcpy(op + o, a, strlen(a));
			o += strlen(a);
			s += bl;
		} else {
			op[o++] = *s++;
		}
	}
	op[o] = 0;
	ck_assert_int_eq(run_op(in, 1, out, 1, op, bn_bad[_i].check, &r,
				&err), LM_EINPUT);
	ck_assert_contains(err.msg, bn_bad[_i].want);
}
END_TEST

/* ---- RangeSelect -------------------------------------------------------- */

/* RangeSelect over x [P, F] with bounds b0, b1 ([P, 1]); extra: more
** keys (JSON members, may be ""). */
static int range_run(const float *x, const float *b0, const float *b1,
		     int P, int F, const char *out_dt, const char *keys,
		     int check_only, ls_result *r, lm_error *err)
{
	tin in[3] = { { "float32", P, F, x }, { "float32", P, 1, b0 },
		      { "float32", P, 1, b1 } };
	tout out[1] = { { out_dt, P, F, -1 } };
	char op[2048];
	snprintf(op, sizeof op, "\"opcode\":\"RangeSelect\",%s\"ins\":[%s,"
		 "%s,%s],\"outs\":[%s]", keys, SI(0, "float32", P, F),
		 SI(1, "float32", P, 1), SI(2, "float32", P, 1),
		 YS(0, out_dt, P, F));
	return run_op(in, 3, out, 1, op, check_only, r, err);
}

/*
** Element e of partition p is kept where e >= b0[p] and e < b1[p], else
** fill_value (then the other comparisons); a NaN bound keeps nothing
** (IEEE), a signalling NaN kept moves bit for bit.
*/
START_TEST(test_range_select)
{
	enum { P = 3, F = 6 };
	float x[P * F];
	const float b0[P] = { 1, 3, NAN }, b1[P] = { 4, 6.5f, 6 };
	ls_result r;
	lm_error err;
	for (int i = 0; i < P * F; i++)
		x[i] = (float)(i + 1) * 1.5f;
	x[3] = bitsf(0x7fa00001u);
	ck_assert_msg(range_run(x, b0, b1, P, F, "float32", "\"compare_op0\":"
				"\"is_ge\",\"compare_op1\":\"is_lt\","
				"\"fill_value\":-3.5,", 0, &r, &err) == 0,
		      "%s", err.msg);
	for (int p = 0; p < P; p++)
		for (int e = 0; e < F; e++) {
			int keep = (float)e >= b0[p] && (float)e < b1[p];
			ck_assert_uint_eq(out_raw(&r, 0, p * F + e),
					  keep ? fbits(x[p * F + e])
					  : fbits(-3.5f));
		}
	ck_assert_uint_eq(out_raw(&r, 0, 3), 0x7fa00001u);
	ls_result_free(&r);
	/* not_equal / is_le into bfloat16: e != b0 and e <= b1 */
	ck_assert_msg(range_run(x, b0, b1, P, F, "bfloat16", "\"compare_op0\":"
				"\"not_equal\",\"compare_op1\":\"is_le\","
				"\"fill_value\":0.1,", 0, &r, &err) == 0,
		      "%s", err.msg);
	for (int p = 0; p < P; p++)
		for (int e = 0; e < F; e++) {
			int keep = (float)e != b0[p] && (float)e <= b1[p];
			ck_assert_uint_eq(out_raw(&r, 0, p * F + e),
					  ref_bf16(fbits(keep ? x[p * F + e]
							 : (float)0.1)));
		}
	ls_result_free(&r);
	/* is_gt / is_equal: e > b0 and e <= b1, then e >= b0 and e == b1 */
	for (int k = 0; k < 2; k++) {
		ck_assert_msg(range_run(x, b0, b1, P, F, "float32", k == 0 ?
					"\"compare_op0\":\"is_gt\",\"compare_op1\":"
					"\"is_le\",\"fill_value\":-1," :
					"\"compare_op0\":\"is_ge\",\"compare_op1\":"
					"\"is_equal\",\"fill_value\":-1,", 0, &r,
					&err) == 0, "%s", err.msg);
		for (int p = 0; p < P; p++)
			for (int e = 0; e < F; e++) {
				float fe = (float)e;
				int keep = k == 0 ? fe > b0[p] && fe <= b1[p]
						  : fe >= b0[p] && fe == b1[p];
				ck_assert_uint_eq(out_raw(&r, 0, p * F + e),
						  keep ? fbits(x[p * F + e])
						  : fbits(-1.0f));
			}
		/* partition 0 keeps 2, 3, 4 (is_gt) and 4 alone (is_equal) */
		ck_assert_uint_eq(out_raw(&r, 0, 1), fbits(-1.0f));
		ck_assert_uint_eq(out_raw(&r, 0, 4), fbits(x[4]));
		ls_result_free(&r);
	}
}
END_TEST

static const struct { const char *keys, *want; int check; } range_bad[] = {
	{ "\"compare_op1\":\"is_lt\",\"fill_value\":0,", "opcode "
	  "'RangeSelect' key 'compare_op0' = \"bypass\" is not modelled by the "
	  "simulator (RangeSelect compares with is_equal, not_equal, is_ge, "
	  "is_gt, is_le and is_lt)", 1 },
	{ "\"compare_op0\":\"is_ge\",\"compare_op1\":\"add\",\"fill_value\":0,",
	  "key 'compare_op1' = \"add\" is not modelled", 1 },
	{ "\"compare_op0\":\"is_ge\",\"compare_op1\":\"is_lt\",\"reduce_cmd\":"
	  "\"ZeroAccumulate\",\"fill_value\":0,", "key 'reduce_cmd' = "
	  "\"ZeroAccumulate\" is not modelled", 1 },
	{ "\"compare_op0\":\"is_ge\",\"compare_op1\":\"is_lt\",\"reduce_op\":"
	  "\"max\",\"fill_value\":0,", "key 'reduce_op' = \"max\" is not "
	  "modelled", 1 },
	{ "\"compare_op0\":\"is_ge\",\"compare_op1\":\"is_lt\",\"base\":true,"
	  "\"fill_value\":0,", "key 'base' = true is not modelled", 1 },
	{ "\"compare_op0\":\"is_ge\",\"compare_op1\":\"is_lt\","
	  "\"num_active_channels\":2,\"fill_value\":0,",
	  "key 'num_active_channels' = 2 is not modelled", 1 },
};

START_TEST(test_range_select_refused)
{
	const float x[4] = { 0 }, b[2] = { 0 };
	ls_result r;
	lm_error err;
	ck_assert_int_eq(range_run(x, b, b, 2, 2, "float32", range_bad[_i].keys,
				   1, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, range_bad[_i].want);
}
END_TEST

/* A bound that is not [P, 1]: exit 2 when the instruction starts. */
START_TEST(test_range_select_malformed)
{
	const float x[8] = { 0 }, b[8] = { 0 };
	tin in[3] = { { "float32", 2, 4, x }, { "float32", 2, 2, b },
		      { "float32", 2, 1, b } };
	tout out[1] = { { "float32", 2, 4, -1 } };
	char op[2048];
	ls_result r;
	lm_error err;
	snprintf(op, sizeof op, "\"opcode\":\"RangeSelect\",\"compare_op0\":"
		 "\"is_ge\",\"compare_op1\":\"is_lt\",\"fill_value\":0,"
		 "\"ins\":[%s,%s,%s],\"outs\":[%s]", SI(0, "float32", 2, 4),
		 SI(1, "float32", 2, 2), SI(2, "float32", 2, 1),
		 YS(0, "float32", 2, 4));
	ck_assert_int_eq(run_op(in, 3, out, 1, op, 0, &r, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "the bound ins[1] must be float data [2, "
			   "1], one value per partition of outs[0] (got "
			   "float32, 4 elements over 2 partitions) "
			   "(RangeSelect)");
}
END_TEST

/* ---- through the command line ------------------------------------------ */

/*
** `lncsim run` of a module whose Max has 7 elements per partition exits
** 2 with the operand named; `verify --sim` of a CopyPredicated with a
** reduce_op exits 2 before any run.
*/
START_TEST(test_cli_exit_codes)
{
	char *dir = tu_tmpdir("cli"), *path, *json;
	tu_run r;
	tb t;
	tb_init(&t);
	tb_dram(&t, "x0", "ExternalInput", "float32", 2, 7);
	tb_dram(&t, "y0", "ExternalOutput", "float32", 2, 8);
	tb_sb(&t, "s0", "float32", 2, 7);
	tb_sb(&t, "ys0", "float32", 2, 8);
	tb_sb(&t, "pr", "uint8", 2, 8);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x0", "float32", 2, 7, 0), AP("s0", "float32", 2, 7, 0));
	tb_inst(&t, "{\"opcode\":\"Max\",\"name\":\"op\",\"engine\":\"DVE\","
		"\"ins\":[%s],\"outs\":[%s],\"wait\":[{\"semaphore\":\"s0\","
		"\"value\":1}]}", AP("s0", "float32", 2, 7, 0),
		AP("ys0", "float32", 2, 8, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"op\"]}", AP("ys0", "float32", 2, 8, 0),
		AP("y0", "float32", 2, 8, 0));
	tb_inst(&t, "{\"opcode\":\"CopyPredicated\",\"name\":\"cp\","
		"\"engine\":\"DVE\",\"reduce_op\":\"max\",\"ins\":[%s,%s],"
		"\"outs\":[%s],\"dependencies\":[\"st\"]}",
		AP("ys0", "float32", 2, 8, 0), AP("pr", "uint8", 2, 8, 0),
		AP("ys0", "float32", 2, 8, 0));
	json = tb_json(&t, 0);
	path = tu_write(dir, "m.json", json);
	r = tu_lncsim(NULL, "verify", "--sim", path, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "instruction cp: opcode 'CopyPredicated' "
			   "key 'reduce_op' = \"max\" is not modelled");
	tu_run_free(&r);
	free(path);
	free(json);
	tb_free(&t);
	tb_init(&t);
	tb_dram(&t, "x0", "ExternalInput", "float32", 2, 7);
	tb_dram(&t, "y0", "ExternalOutput", "float32", 2, 8);
	tb_sb(&t, "s0", "float32", 2, 7);
	tb_sb(&t, "ys0", "float32", 2, 8);
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x0", "float32", 2, 7, 0), AP("s0", "float32", 2, 7, 0));
	tb_inst(&t, "{\"opcode\":\"Max\",\"name\":\"op\",\"engine\":\"DVE\","
		"\"ins\":[%s],\"outs\":[%s],\"wait\":[{\"semaphore\":\"s0\","
		"\"value\":1}]}", AP("s0", "float32", 2, 7, 0),
		AP("ys0", "float32", 2, 8, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"op\"]}", AP("ys0", "float32", 2, 8, 0),
		AP("y0", "float32", 2, 8, 0));
	json = tb_json(&t, 0);
	path = tu_write(dir, "m2.json", json);
	r = tu_lncsim(NULL, "run", "--seed", "1", path, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "instruction op: the data (ins[0]) must hold "
			   "8 to 16384 elements in each partition, got 14 over "
			   "2 partitions (Max)");
	tu_run_free(&r);
	free(path);
	free(json);
	tb_free(&t);
	tu_rm_tree(dir);
	free(dir);
}
END_TEST

/*
** A TensorSave staged on an engine after a CopyPredicated (its write
** masked) or a MaxIndexAndMatchReplace (a second output) on the same
** engine writes its own element only: the mask and the second output
** belong to the instruction that staged them. _i 0: CopyPredicated with
** an all-false predicate, then the save (its element written, not
** masked out); _i 1: the second output zeroed by a Memset on Pool between
** MaxIndexAndMatchReplace and the save (not written again by the save).
*/
START_TEST(test_stage_reset)
{
	enum { P = 1, F = 8 };
	static const float x[F] = { 5, 1, 4, 2, 8, 3, 7, 6 };
	tb t;
	lm_module *m;
	ls_tensors host = {0, NULL};
	int64_t shape[2] = { P, F };
	ls_result r;
	lm_error err;
	const ls_tensor *c, *ix;

	tb_init(&t);
	tb_dram(&t, "x0", "ExternalInput", "float32", P, F);
	tb_dram(&t, "cnt", "ExternalOutput", "int32", 1, 1);
	tb_dram(&t, "yi", "ExternalOutput", "uint32", P, 8);
	tb_sb(&t, "s0", "float32", P, F);
	tb_sb(&t, "d", "float32", P, F);
	tb_sb(&t, "pr", "uint8", P, F);
	tb_sb(&t, "rep", "float32", P, F);
	tb_sb(&t, "ix", "uint32", P, 8);
	tb_sb(&t, "cs", "int32", 1, 1);
	tb_alloc_raw(&t, "{\"name\":\"r\",\"kind\":\"Internal\",\"dtype\":"
		     "\"int32\",\"tensor_shape\":[1],\"memorylocations\":[{"
		     "\"name\":\"r\",\"type\":\"REG\",\"addr\":0}]}");
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x0", "float32", P, F, 0), AP("s0", "float32", P, F, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"mp\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":0}",
		AP("pr", "uint8", P, F, 0));
	if (_i == 0)
		tb_inst(&t, "{\"opcode\":\"CopyPredicated\",\"name\":\"op\","
			"\"engine\":\"DVE\",\"ins\":[%s,%s],\"outs\":[%s],"
			"\"wait\":[{\"semaphore\":\"s0\",\"value\":1}],"
			"\"dependencies\":[\"mp\"]}",
			AP("s0", "float32", P, F, 0),
			AP("pr", "uint8", P, F, 0),
			AP("d", "float32", P, F, 0));
	else
		tb_inst(&t, "{\"opcode\":\"MaxIndexAndMatchReplace\",\"name\":"
			"\"op\",\"engine\":\"DVE\",\"imm_value\":0,\"ins\":"
			"[%s,%s],\"outs\":[%s,%s],\"wait\":[{\"semaphore\":"
			"\"s0\",\"value\":1}],\"dependencies\":[\"mp\"]}",
			AP("s0", "float32", P, 8, 0),
			AP("s0", "float32", P, F, 0),
			AP("rep", "float32", P, F, 0),
			AP("ix", "uint32", P, 8, 0));
	tb_inst(&t, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"mz\","
		"\"engine\":\"Pool\",\"outs\":[%s],\"value\":0,"
		"\"dependencies\":[\"op\"]}", AP("ix", "uint32", P, 8, 0));
	tb_inst(&t, "{\"opcode\":\"RegisterMove\",\"name\":\"mv\",\"engine\":"
		"\"DVE\",\"ins\":[{\"kind\":\"imm_value\",\"dtype\":\"int32\","
		"\"value\":7}],\"outs\":[{\"kind\":\"register_access\","
		"\"dtype\":\"int32\",\"regref\":\"r\"}]}");
	tb_inst(&t, "{\"opcode\":\"TensorSave\",\"name\":\"ts\",\"engine\":"
		"\"DVE\",\"ins\":[{\"kind\":\"register_access\",\"dtype\":"
		"\"int32\",\"regref\":\"r\"}],\"outs\":[%s],\"dependencies\":"
		"[\"mz\"]}", AP("cs", "int32", 1, 1, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"ts\"]}", AP("cs", "int32", 1, 1, 0),
		AP("cnt", "int32", 1, 1, 0));
	tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"sti\",\"engine\":"
		"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[\"ts\"]}", AP("ix", "uint32", P, 8, 0),
		AP("yi", "uint32", P, 8, 0));
	m = tb_module(&t, 0);
	ls_tensors_add(&host, "x0", LM_DT_FLOAT32, shape, 2, x);
	ck_assert_msg(ls_run(m, &host, NULL, &r, &err) == 0, "%s", err.msg);
	c = ls_tensors_find(&r.outputs, "cnt");
	ix = ls_tensors_find(&r.outputs, "yi");
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(ix);
	ck_assert_int_eq(*(const int32_t *)c->data, 7);
	for (int k = 0; k < 8; k++)
		ck_assert_uint_eq(((const uint32_t *)ix->data)[k], 0);
	ls_result_free(&r);
	ls_tensors_free(&host);
	lm_module_free(m);
	tb_free(&t);
}
END_TEST

/* ---- the suite ---------------------------------------------------------- */

static Suite *select_suite(void)
{
	Suite *s = suite_create("select");
	TCase *tc = tcase_create("select");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_select_bits);
	tcase_add_test(tc, test_select_convert_imm);
	tcase_add_test(tc, test_select_bad_pred);
	tcase_add_loop_test(tc, test_select_malformed, 0,
			    (int)(sizeof select_bad / sizeof *select_bad));
	tcase_add_test(tc, test_copypred);
	tcase_add_test(tc, test_copypred_unwritten_imm);
	tcase_add_test(tc, test_pred_64bit);
	tcase_add_loop_test(tc, test_copypred_malformed, 0,
			    (int)(sizeof copypred_bad / sizeof *copypred_bad));
	tcase_add_loop_test(tc, test_select_random, 0, 3);
	tcase_add_test(tc, test_range_select);
	tcase_add_loop_test(tc, test_range_select_refused, 0,
			    (int)(sizeof range_bad / sizeof *range_bad));
	tcase_add_test(tc, test_range_select_malformed);
	suite_add_tcase(s, tc);
	tc = tcase_create("search8");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_max8_hand);
	tcase_add_test(tc, test_search8_hand);
	tcase_add_loop_test(tc, test_search8_malformed, 0,
			    (int)(sizeof search_bad / sizeof *search_bad));
	tcase_add_loop_test(tc, test_search8_random, 0, 3);
	suite_add_tcase(s, tc);
	tc = tcase_create("bnstats");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_bn_hand);
	tcase_add_loop_test(tc, test_bn_random, 0, 3);
	tcase_add_loop_test(tc, test_bn_malformed, 0,
			    (int)(sizeof bn_bad / sizeof *bn_bad));
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cli_exit_codes);
	tcase_add_loop_test(tc, test_stage_reset, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(select_suite());
}

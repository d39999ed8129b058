/*
** test_regs.c -- registers in the simulator: the RegisterAlu ops at int32
** and uint32 against values computed here, RegisterMove, the register
** files of each engine (engine ALL writes every engine's copy), register
** leaves of expressions (a symbolic_ap address read from a register),
** DynamicForLoop (ub from a register) and DoWhile (cond a register
** expression), and the errors: an unwritten register, a divide by zero,
** a negative trip count, the ops and forms refused. The modules are
** hand-made fixtures in the 2.24 wire form (tests/fixtures/regs/).
*/
#include "common.h"
#include "testutil.h"
#include "json.h"
#include "verify.h"
#include "sim.h"
#include "sim_int.h"
#include "simcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference ALU -------------------------------------------------- */

static const char *const ops[] = {
	"bypass", "add", "subtract", "mult", "divide", "mod",
	"arith_shift_left", "arith_shift_right", "logical_shift_left",
	"logical_shift_right", "bitwise_and", "bitwise_or", "bitwise_xor",
	"bitwise_not", "max", "min", "is_equal", "not_equal", "is_ge", "is_gt",
	"is_le", "is_lt",
};
#define N_OPS ((int)(sizeof ops / sizeof *ops))

/* a op b at int32 (is_signed) or uint32, written from the definitions
** (floor division through doubles, shifts through powers of two): -1 for
** a division by zero, else 0 with *r. */
static int ref_alu(const char *op, int is_signed, uint32_t a, uint32_t b,
		   uint32_t *r)
{
	double x = is_signed ? (double)(int32_t)a : (double)a;
	double y = is_signed ? (double)(int32_t)b : (double)b;
	double p2 = b < 32 ? ldexp(1.0, (int)b) : 0.0;
	if (!strcmp(op, "bypass")) *r = a;
	else if (!strcmp(op, "add")) *r = (uint32_t)((uint64_t)a + b);
	else if (!strcmp(op, "subtract")) *r = (uint32_t)((uint64_t)a - b);
	else if (!strcmp(op, "mult")) *r = (uint32_t)((uint64_t)a * b);
	else if (!strcmp(op, "divide") || !strcmp(op, "mod")) {
		double q;
		if (y == 0)
			return -1;
		q = floor(x / y);
		*r = (uint32_t)(int64_t)(op[0] == 'd' ? q : x - y * q);
	} else if (!strcmp(op, "arith_shift_left") ||
		   !strcmp(op, "logical_shift_left"))
		*r = (uint32_t)fmod((double)a * p2, 4294967296.0);
	else if (!strcmp(op, "logical_shift_right"))
		*r = b < 32 ? (uint32_t)floor((double)a / p2) : 0;
	else if (!strcmp(op, "arith_shift_right"))
		*r = b < 32 ? (uint32_t)(int64_t)floor(x / p2)
		     : (uint32_t)(x < 0 ? -1 : 0);
	else if (!strcmp(op, "bitwise_and")) *r = a & b;
	else if (!strcmp(op, "bitwise_or")) *r = a | b;
	else if (!strcmp(op, "bitwise_xor")) *r = a ^ b;
	else if (!strcmp(op, "bitwise_not")) *r = ~a;
	else if (!strcmp(op, "max")) *r = x >= y ? a : b;
	else if (!strcmp(op, "min")) *r = x <= y ? a : b;
	else if (!strcmp(op, "is_equal")) *r = x == y;
	else if (!strcmp(op, "not_equal")) *r = x != y;
	else if (!strcmp(op, "is_ge")) *r = x >= y;
	else if (!strcmp(op, "is_gt")) *r = x > y;
	else if (!strcmp(op, "is_le")) *r = x <= y;
	else if (!strcmp(op, "is_lt")) *r = x < y;
	else
		ck_abort_msg("no reference for %s", op);
	return 0;
}

static const uint32_t vals[] = {
	0, 1, 2, 3, 5, 7, 31, 32, 33, 1000, 123456789, 0x7fffffffu,
	0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu, 0xfffffff9u,
	(uint32_t)-1000, (uint32_t)-123456789,
};
#define N_VALS ((int)(sizeof vals / sizeof *vals))

/* Every op at both dtypes over pairs of interesting values. */
START_TEST(test_alu_table)
{
	for (int o = 0; o < N_OPS; o++) {
		lm_aluop op = lm_aluop_parse(ops[o]);
		ck_assert_msg(ls_reg_op_modelled(op), "%s", ops[o]);
		for (int s = 0; s < 2; s++)
			for (int i = 0; i < N_VALS; i++)
				for (int j = 0; j < N_VALS; j++) {
					uint32_t want = 0, got = 0;
					int rw = ref_alu(ops[o], s, vals[i],
							 vals[j], &want);
					int rg = ls_reg_alu(op, s ? LM_DT_INT32
							    : LM_DT_UINT32,
							    vals[i], vals[j],
							    &got);
					ck_assert_msg(rw == rg && (rw ||
						      want == got),
						      "%s %s %u %u: %d %u, "
						      "want %d %u", ops[o],
						      s ? "int32" : "uint32",
						      vals[i], vals[j], rg, got,
						      rw, want);
				}
	}
	/* the ops not modelled */
	ck_assert(!ls_reg_op_modelled(LM_ALU_POW));
	ck_assert(!ls_reg_op_modelled(LM_ALU_ABS));
	ck_assert(!ls_reg_op_modelled(LM_ALU_AVERAGE));
	ck_assert(!ls_reg_op_modelled(LM_ALU_LOGICAL_AND));
	ck_assert(!ls_reg_op_modelled(LM_ALU_RSQRT));
}
END_TEST

/* ---- running the fixtures ----------------------------------------------- */

/* The fixture's text with the pairs (a, b) of subs replaced (NULL ends). */
static lm_module *fixture(const char *name, const char *const *subs)
{
	return tu_fixture_subst("regs", name, subs);
}

/* x[i] = i */
static void inputs(ls_tensors *in)
{
	float x[64];
	int64_t shape[2] = { 1, 64 };
	for (int i = 0; i < 64; i++)
		x[i] = (float)i;
	memset(in, 0, sizeof *in);
	ls_tensors_add(in, "x", LM_DT_FLOAT32, shape, 2, x);
}

/* Verify and run m (perturbed schedule seed): 0 with *r, or the error. */
static int run(lm_module *m, uint64_t seed, ls_result *r, lm_error *err)
{
	ls_tensors in;
	ls_options o;
	int rc;
	memset(&o, 0, sizeof o);
	o.perturb_seed = seed;
	if ((rc = lm_verify(m, NULL, err)) != 0)
		return rc;
	inputs(&in);
	rc = ls_run(m, &in, &o, r, err);
	ls_tensors_free(&in);
	return rc;
}

static const float *out_y(const ls_result *r)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, "y");
	ck_assert_ptr_nonnull(t);
	return (const float *)t->data;
}

/* The value alu.json leaves in rc: its base-64 digits, y[0] lowest. */
static uint32_t rc_value(const ls_result *r)
{
	const float *y = out_y(r);
	uint64_t v = 0;
	for (int k = 5; k >= 0; k--)
		v = v * 64 + (uint64_t)y[k];
	ck_assert_msg(v <= 0xffffffffu, "rc = %llu", (unsigned long long)v);
	return (uint32_t)v;
}

/* alu.json with op, dtype, a and b and the pairs of more (NULL: none);
** 0 with rc's value, or the error. */
static int run_alu(const char *op, int is_signed, int64_t a, int64_t b,
		   const char *const *more, uint32_t *v, ls_result *out,
		   lm_error *err)
{
	char sa[32], sb[32], sop[64];
	const char *subs[32];
	int n = 0, rc;
	ls_result r;
	lm_module *m;
	snprintf(sa, sizeof sa, "\"value\": %lld", (long long)a);
	snprintf(sb, sizeof sb, "\"value\": %lld", (long long)b);
	snprintf(sop, sizeof sop, "\"op\": \"%s\"", op);
	subs[n++] = "\"value\": 1111111"; subs[n++] = sa;
	subs[n++] = "\"value\": 2222222"; subs[n++] = sb;
	subs[n++] = "\"op\": \"add\""; subs[n++] = sop;
	subs[n++] = "\"int32\"";
	subs[n++] = is_signed ? "\"int32\"" : "\"uint32\"";
	for (int i = 0; more && more[i] && n < 30; i++)
		subs[n++] = more[i];
	subs[n] = NULL;
	m = fixture("alu.json", subs);
	rc = run(m, 0, &r, err);
	if (rc == 0) {
		*v = rc_value(&r);
		if (out)
			*out = r;
		else
			ls_result_free(&r);
	}
	lm_module_free(m);
	return rc;
}

static const int64_t pairs[][2] = {
	{ 1234567, 89 }, { -1234567, 89 }, { 1234567, -89 }, { -7, -3 },
	{ 2147483647, 1 }, { -2147483647 - 1, -1 }, { 3, 5 },
	{ 4000000000, 3 }, { 0x40000001, 4000000001 },
};
#define N_PAIRS ((int)(sizeof pairs / sizeof *pairs))

/* RegisterMove of immediates, RegisterAlu, the result read back through
** a register-addressed copy: every op x dtype against the reference. */
START_TEST(test_alu_runs)
{
	for (int o = 0; o < N_OPS; o++)
		for (int s = 0; s < 2; s++)
			for (int p = 0; p < N_PAIRS; p++) {
				uint32_t a = (uint32_t)pairs[p][0];
				uint32_t b = (uint32_t)pairs[p][1];
				uint32_t want = 0, got = 0;
				lm_error err;
				int rw = ref_alu(ops[o], s, a, b, &want);
				int rg = run_alu(ops[o], s, pairs[p][0],
						 pairs[p][1], NULL, &got, NULL,
						 &err);
				ck_assert_msg(rw == 0 && rg == 0, "%s %d %lld "
					      "%lld: %s", ops[o], s,
					      (long long)pairs[p][0],
					      (long long)pairs[p][1],
					      rg ? err.msg : "");
				ck_assert_msg(got == want, "%s %s %lld %lld: "
					      "%u, want %u", ops[o],
					      s ? "int32" : "uint32",
					      (long long)pairs[p][0],
					      (long long)pairs[p][1], got,
					      want);
			}
}
END_TEST

/* Divide and mod by a zero register: a run error naming it. */
START_TEST(test_divide_by_zero)
{
	for (int k = 0; k < 2; k++) {
		lm_error err;
		uint32_t v;
		int rc = run_alu(k ? "mod" : "divide", 1, 5, 0, NULL, &v, NULL,
				 &err);
		ck_assert_int_ne(rc, 0);
		ck_assert_msg(strstr(err.msg, "instruction alu") &&
			      strstr(err.msg, k ? "mod by zero: ins[1] "
				     "register 'rb' is 0 on SP"
				     : "divide by zero: ins[1] register 'rb' "
				     "is 0 on SP"), "%s", err.msg);
	}
}
END_TEST

/*
** Registers are per engine: a register written on SP is unwritten on DVE
** (the message names the engine and the last writer); an instruction on
** engine ALL writes every engine's copy, one instance per engine.
*/
START_TEST(test_per_engine)
{
	static const char *const on_dve[] = {
		"\"name\": \"alu\", \"engine\": \"SP\"",
		"\"name\": \"alu\", \"engine\": \"DVE\", \"dependencies\": "
		"[[\"mvb\", \"Flow\"]]",
		"\"name\": \"strc0\", \"engine\": \"SP\"",
		"\"name\": \"strc0\", \"engine\": \"SP\", \"dependencies\": "
		"[[\"alu\", \"Flow\"]]", NULL };
	static const char *const all_dve[] = {
		"\"name\": \"mva\", \"engine\": \"SP\"",
		"\"name\": \"mva\", \"engine\": \"ALL\"",
		"\"name\": \"mvb\", \"engine\": \"SP\"",
		"\"name\": \"mvb\", \"engine\": \"ALL\"",
		"\"name\": \"alu\", \"engine\": \"SP\"",
		"\"name\": \"alu\", \"engine\": \"DVE\"", NULL };
	static const char *const all[] = {
		"\"name\": \"mva\", \"engine\": \"SP\"",
		"\"name\": \"mva\", \"engine\": \"ALL\"",
		"\"name\": \"mvb\", \"engine\": \"SP\"",
		"\"name\": \"mvb\", \"engine\": \"ALL\"",
		"\"name\": \"alu\", \"engine\": \"SP\"",
		"\"name\": \"alu\", \"engine\": \"ALL\"", NULL };
	static const char *const all_dep[] = {
		"\"name\": \"mva\", \"engine\": \"SP\"",
		"\"name\": \"mva\", \"engine\": \"ALL\"",
		"\"name\": \"mvb\", \"engine\": \"SP\"",
		"\"name\": \"mvb\", \"engine\": \"SP\", \"dependencies\": "
		"[[\"mva\", \"Flow\"]]", NULL };
	static const char *const all_dep_late[] = {
		"{\"opcode\": \"RegisterMove\", \"name\": \"mva\", "
		"\"engine\": \"SP\"",
		"{\"opcode\": \"NoOp\", \"name\": \"w\", \"engine\": "
		"\"DVE\", \"sync_info\": {\"on_wait\": [{\"semaphore\": "
		"\"s_dma\", \"mode\": \"sem-ge-imm\", \"value\": 1}]}}, "
		"{\"opcode\": \"RegisterMove\", \"name\": \"mva\", "
		"\"engine\": \"ALL\"",
		"\"name\": \"mvb\", \"engine\": \"SP\"",
		"\"name\": \"mvb\", \"engine\": \"SP\", \"dependencies\": "
		"[[\"mva\", \"Flow\"]]", NULL };
	lm_error err;
	ls_result r;
	uint32_t v;
	/* the ALU after the moves, the copies after the ALU (dependencies):
	   the ALU reads first and knows the last writer */
	int rc = run_alu("add", 1, 40, 2, on_dve, &v, NULL, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "instruction alu: on DVE: ins[0] reads "
			     "register 'ra', which no instruction has written "
			     "on DVE (last written on SP by 'mva'): registers "
			     "are per engine"), "%s", err.msg);
	/* ALL moves, the ALU on DVE: SP's copy reads rc, never written on
	   SP (an expression's register leaf) */
	rc = run_alu("add", 1, 40, 2, all_dve, &v, NULL, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "instruction strc0: ins symbolic_ap "
			     "addrs[0]: reads register 'rc', which no "
			     "instruction has written on SP"), "%s", err.msg);
	/* a dependency on an ALL instruction waits for every engine's copy
	   (the linker's completion barrier names one): met here ... */
	rc = run_alu("add", 1, 40, 2, all_dep, &v, NULL, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	ck_assert_uint_eq(v, 42);
	/* ... and not when DVE's copy waits for a DMA issued after mvb */
	rc = run_alu("add", 1, 40, 2, all_dep_late, &v, NULL, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "deadlock") && strstr(err.msg,
		      "core 0 SP: 'mvb' (RegisterMove) waits for instruction "
		      "'mva' to complete"), "%s", err.msg);
	rc = run_alu("add", 1, 40, 2, all, &v, &r, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	ck_assert_uint_eq(v, 42);
	/* 3 instructions x 5 engines, 6 copies */
	ck_assert_int_eq(r.instructions, 3 * 5 + 6);
	ls_result_free(&r);
}
END_TEST

/* ---- DynamicForLoop and DoWhile ----------------------------------------- */

/* Fixture name with the pairs of subs, under schedules 0..4: each time y
** equals want and the instructions executed are instructions. */
static void run_loop(const char *name, const char *const *subs,
		     const float *want, int64_t instructions)
{
	lm_module *m = fixture(name, subs);
	for (uint64_t seed = 0; seed <= 4; seed++) {
		ls_result r;
		lm_error err;
		const float *y;
		int rc = run(m, seed, &r, &err);
		ck_assert_msg(rc == 0, "%s seed %llu: %s", name,
			      (unsigned long long)seed, err.msg);
		y = out_y(&r);
		for (int i = 0; i < 6; i++)
			ck_assert_msg(y[i] == want[i], "%s seed %llu: y[%d] = "
				      "%g, want %g", name,
				      (unsigned long long)seed, i, y[i],
				      want[i]);
		ck_assert_int_eq(r.instructions, instructions);
		ls_result_free(&r);
	}
	lm_module_free(m);
}

static void run_fails(const char *name, const char *const *subs,
		      const char *want)
{
	lm_module *m = fixture(name, subs);
	ls_result r;
	lm_error err;
	int rc = run(m, 0, &r, &err);
	if (rc == 0)
		ls_result_free(&r);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, want), "%s: %s", name, err.msg);
	lm_module_free(m);
}

/* ub from a register: y[j] = x[j] for j < rn, the rest from the copy of
** x[58..63] before the loop; each iteration's end a back edge. */
START_TEST(test_dynloop)
{
	static const char *const n4[] = { NULL };
	static const char *const n6[] = { "\"value\": 4", "\"value\": 6",
					  NULL };
	static const char *const n0[] = { "\"value\": 4", "\"value\": 0",
					  NULL };
	/* ub = 2 * rn - 3, lb 1, stride 2 over rn = 4: j = 1, 3 */
	static const char *const affine[] = {
		"\"regref\": \"rn\"}, \"coeff\": 1}], \"c\": 0}",
		"\"regref\": \"rn\"}, \"coeff\": 2}], \"c\": -3}",
		"\"lb\": {\"kind\": \"AffExprKind\", \"terms\": [], \"c\": 0}",
		"\"lb\": {\"kind\": \"AffExprKind\", \"terms\": [], \"c\": 1}",
		"\"stride\": {\"kind\": \"AffExprKind\", \"terms\": [], "
		"\"c\": 1}", "\"stride\": {\"kind\": \"AffExprKind\", "
		"\"terms\": [], \"c\": 2}", NULL };
	float w4[6] = { 0, 1, 2, 3, 62, 63 };
	float w6[6] = { 0, 1, 2, 3, 4, 5 };
	float w0[6] = { 58, 59, 60, 61, 62, 63 };
	float wa[6] = { 58, 1, 60, 3, 62, 63 };
	/* pre, mvn, n copies and n back edges */
	run_loop("dynloop.json", n4, w4, 2 + 2 * 4);
	run_loop("dynloop.json", n6, w6, 2 + 2 * 6);
	run_loop("dynloop.json", n0, w0, 2);
	run_loop("dynloop.json", affine, wa, 2 + 2 * 2);
}
END_TEST

START_TEST(test_dynloop_errors)
{
	static const char *const neg[] = { "\"value\": 4", "\"value\": -1",
					   NULL };
	static const char *const unwritten[] = {
		"\"name\": \"mvn\", \"engine\": \"SP\"",
		"\"name\": \"mvn\", \"engine\": \"PE\"", NULL };
	run_fails("dynloop.json", neg, "instruction dl: on SP: "
		  "DynamicForLoop axis 'j': ub = -1 is below lb 0: negative "
		  "trip count");
	run_fails("dynloop.json", unwritten, "instruction dl: on SP: ub: "
		  "reads register 'rn', which no instruction has written on "
		  "SP (last written on PE by 'mvn')");
}
END_TEST

/*
** An induction value that would pass INT64_MAX ends the loop: ub =
** rn * 2^32 with rn = 2^31 - 1 (2^63 - 2^32), stride 2^53: j = 0, 2^53,
** ..., 1023 * 2^53, 1024 iterations (the body copies y[0] = x[0]).
*/
START_TEST(test_dynloop_iv_overflow)
{
	static const char *const subs[] = {
		"\"value\": 4", "\"value\": 2147483647",
		"\"regref\": \"rn\"}, \"coeff\": 1}",
		"\"regref\": \"rn\"}, \"coeff\": 4294967296}",
		"\"stride\": {\"kind\": \"AffExprKind\", \"terms\": [], "
		"\"c\": 1}", "\"stride\": {\"kind\": \"AffExprKind\", "
		"\"terms\": [], \"c\": 9007199254740992}",
		"\"axis\": \"j\"}, \"coeff\": 1}", "\"axis\": \"j\"}, "
		"\"coeff\": 0}", NULL };
	lm_module *m = fixture("dynloop.json", subs);
	ls_tensors in;
	ls_options o;
	ls_result r;
	lm_error err;
	int rc;
	memset(&o, 0, sizeof o);
	o.max_instructions = 10000;
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	inputs(&in);
	rc = ls_run(m, &in, &o, &r, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	/* pre, mvn, 1024 copies and back edges */
	ck_assert_int_eq(r.instructions, 2 + 2 * 1024);
	ck_assert(out_y(&r)[0] == 0 && out_y(&r)[1] == 59);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* do { y[rk] = x[rk]; rk -= 1 } while (rk): rk = 3, 2, 1; the body runs
** once even when the condition is 0 on entry. */
START_TEST(test_dowhile)
{
	static const char *const k3[] = { NULL };
	static const char *const k0[] = { "\"value\": 3", "\"value\": 0",
					  NULL };
	float w3[6] = { 58, 1, 2, 3, 62, 63 };
	/* pre, mvk, 3 x (copy, dec, back edge) */
	run_loop("dowhile.json", k3, w3, 2 + 3 * 3);
	/* rk = 0: the copy of y[0], rk = -1, the loop goes on until
	   rk = -6 addresses outside y */
	run_fails("dowhile.json", k0, "instruction cpk");
}
END_TEST

/* The cond's register of a DoWhile: "cond" names it, and the linker's
** rename reaches it. */
static int cond_reg(void *arg, const char *key, const char *name)
{
	if (!strcmp(key, "cond"))
		snprintf(arg, 32, "%s", name);
	return 0;
}

START_TEST(test_dowhile_cond_renamed)
{
	lm_module *m = fixture("dowhile.json", NULL);
	lm_inst *dw = &m->functions[0].blocks[0].insts[2];
	lm_strmap map;
	char got[32] = "";
	ck_assert_str_eq(dw->name, "dw");
	lm_strmap_init(&map);
	lm_strmap_put(&map, "rk", (void *)"nc0.rk");
	lm_inst_rename_registers(dw, &map);
	lm_inst_each_regname(dw, cond_reg, got);
	ck_assert_str_eq(got, "nc0.rk");
	lm_strmap_free(&map);
	lm_module_free(m);
}
END_TEST

/* A DoWhile that never ends stops at --max-instructions. */
START_TEST(test_dowhile_runaway)
{
	static const char *const subs[] = {
		"\"op\": \"subtract\"", "\"op\": \"bypass\"", NULL };
	lm_module *m = fixture("dowhile.json", subs);
	ls_tensors in;
	ls_options o;
	ls_result r;
	lm_error err;
	int rc;
	memset(&o, 0, sizeof o);
	o.max_instructions = 1000;
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	inputs(&in);
	rc = ls_run(m, &in, &o, &r, &err);
	if (rc == 0)
		ls_result_free(&r);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "more than 1000 instructions executed "
			     "(--max-instructions)"), "%s", err.msg);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* A Loop's registers receive the induction value at each iteration's
** start, on each engine of the loop: y[ri] = x[ri] for i = 1, 3, 5. */
START_TEST(test_loop_registers)
{
	static const char *const none[] = { NULL };
	static const char *const bad[] = { "\"registers\": [\"ri\"]",
					   "\"registers\": [\"x\"]", NULL };
	float w[6] = { 58, 1, 60, 3, 62, 5 };
	/* pre, 3 copies, 3 back edges */
	run_loop("loopreg.json", none, w, 1 + 3 + 3);
	/* the verifier refuses a name that is no register ... */
	run_fails("loopreg.json", bad, "loop lr: registers 'x' names "
		  "allocation 'x', which is not a register");
	/* ... and so does a run of the module unverified */
	{
		lm_module *m = fixture("loopreg.json", bad);
		ls_tensors in;
		ls_options o;
		ls_result r;
		lm_error err;
		int rc;
		memset(&o, 0, sizeof o);
		inputs(&in);
		rc = ls_run(m, &in, &o, &r, &err);
		if (rc == 0)
			ls_result_free(&r);
		ck_assert_int_ne(rc, 0);
		ck_assert_msg(strstr(err.msg, "instruction lr: registers: 'x' "
				     "is no register allocation of the module"),
			      "%s", err.msg);
		ls_tensors_free(&in);
		lm_module_free(m);
	}
}
END_TEST

/* ---- refused before time 0 ---------------------------------------------- */

static void refused(const char *name, const char *const *subs,
		    const char *want)
{
	lm_module *m = fixture(name, subs);
	lm_error err;
	ck_assert_int_ne(ls_check_module(m, &err), 0);
	ck_assert_msg(strstr(err.msg, want), "%s: %s", name, err.msg);
	lm_module_free(m);
}

START_TEST(test_refused)
{
	static const char *const pow_op[] = {
		"\"op\": \"add\"", "\"op\": \"pow\"", NULL };
	static const char *const f32[] = {
		"\"outs\": [{\"kind\": \"register_access\", \"dtype\": "
		"\"int32\", \"regref\": \"rc\"}", "\"outs\": [{\"kind\": "
		"\"register_access\", \"dtype\": \"float32\", \"regref\": "
		"\"rc\"}", NULL };
	static const char *const wide[] = {
		"\"op\": \"add\"", "\"op\": \"add\", \"is_64bit\": true", NULL };
	static const char *const all_sync[] = {
		"\"name\": \"mva\", \"engine\": \"SP\"",
		"\"name\": \"mva\", \"engine\": \"ALL\", \"sync_info\": "
		"{\"on_update\": [{\"semaphore\": \"s_dma\", \"mode\": "
		"\"sem-inc\"}]}", NULL };
	static const char *const cond_block[] = {
		"\"cond\": {\"kind\": \"IntRuntimeValueKind\", \"regref\": "
		"\"rk\"}", "\"cond\": \"dw_body\"", NULL };
	static const char *const no_cond[] = {
		"\"cond\": {\"kind\": \"IntRuntimeValueKind\", \"regref\": "
		"\"rk\"}, ", "", NULL };
	static const char *const stride0[] = {
		"\"stride\": {\"kind\": \"AffExprKind\", \"terms\": [], "
		"\"c\": 1}", "\"stride\": {\"kind\": \"AffExprKind\", "
		"\"terms\": [], \"c\": 0}", NULL };
	refused("alu.json", pow_op, "instruction alu: opcode 'RegisterAlu' "
		"key 'op' = \"pow\" is not modelled by the simulator");
	refused("alu.json", f32, "instruction alu: opcode 'RegisterAlu' key "
		"'outs' = 1 operand (register_access) is not modelled by the "
		"simulator (registers are read and written as int32 or "
		"uint32)");
	refused("alu.json", wide, "instruction alu: opcode 'RegisterAlu' key "
		"'ins' = 2 operands is not modelled by the simulator "
		"(RegisterAlu is_64bit takes ins [a.lo, a.hi, b.lo, b.hi] or "
		"[a.lo, a.hi, imm] and outs [lo, hi])");
	/* a register_access without its register: refused before time 0,
	   not a run error */
	{
		static const char *const noref[] = {
			"\"dtype\": \"int32\", \"regref\": \"ra\"}]}",
			"\"dtype\": \"int32\"}]}", NULL };
		refused("alu.json", noref, "instruction mva: opcode "
			"'RegisterMove' key 'outs' = 1 operand "
			"(register_access) is not modelled by the simulator (a "
			"register_access names its register in regref)");
	}
	/* an immediate's dtype sets its bits: only int32 / uint32 */
	for (int k = 0; k < 2; k++) {
		const char *const imm[] = {
			"\"dtype\": \"int32\", \"value\": 1111111",
			k ? "\"dtype\": \"float32\", \"value\": 1111111"
			  : "\"dtype\": \"uint8\", \"value\": 1111111",
			NULL };
		refused("alu.json", imm, "instruction mva: opcode "
			"'RegisterMove' key 'ins' = 1 operand (imm_value) is "
			"not modelled by the simulator (an immediate is "
			"modelled as an int32 or uint32 imm_value)");
	}
	refused("alu.json", all_sync, "instruction mva: opcode "
		"'RegisterMove' key 'engine' = \"ALL\" is not modelled");
	refused("dowhile.json", cond_block, "opcode 'DoWhile' key 'cond' = "
		"\"dw_body\" is not modelled by the simulator (cond as a block "
		"reference is not modelled");
	refused("dowhile.json", no_cond, "instruction dw: opcode 'DoWhile' "
		"key 'cond' = null is not modelled by the simulator (a DoWhile "
		"needs its condition)");
	/* the verifier's DynamicForLoop contract, for a module unverified */
	refused("dynloop.json", stride0, "instruction dl: opcode "
		"'DynamicForLoop' key 'DynamicForLoopAxis' = {\"name\":\"j\","
		"...} is not modelled by the simulator (lb and stride must be "
		"constants, stride > 0, and ub given)");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("regs");
	TCase *tc = tcase_create("regs");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_alu_table);
	tcase_add_test(tc, test_alu_runs);
	tcase_add_test(tc, test_divide_by_zero);
	tcase_add_test(tc, test_per_engine);
	tcase_add_test(tc, test_dynloop);
	tcase_add_test(tc, test_dynloop_errors);
	tcase_add_test(tc, test_dynloop_iv_overflow);
	tcase_add_test(tc, test_dowhile);
	tcase_add_test(tc, test_dowhile_runaway);
	tcase_add_test(tc, test_dowhile_cond_renamed);
	tcase_add_test(tc, test_loop_registers);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

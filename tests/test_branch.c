/*
** test_branch.c -- branches in the simulator: a CompareAndBranch loop
** whose on_true names its own block, forward targets (an
** UnconditionalBranch over a block, on_false to a later one), every
** compare at every dtype against values computed here, BranchHint and
** TensorCompletion as no-ops, a Return in the middle of the function,
** Halt, the dependency rule across block entries (under perturbed
** schedules), block arguments, and the errors: an unknown block, a
** branch out of its region, a runaway loop, diverging engines, a halted
** engine others wait for; and two cores of such a module linked against
** side by side (lncsim diff). The modules are hand-made fixtures in the 2.24
** wire form (tests/fixtures/branch/).
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "sim.h"
#include "simcheck.h"
#include "provision.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fixture's text with the pairs (a, b) of subs replaced (NULL ends). */
static lm_module *fixture(const char *name, const char *const *subs)
{
	return tu_fixture_subst("branch", name, subs);
}

/* x[i] = i + 0.25 (float32: exact), and n = {trips} when trips >= 0 */
static void inputs(ls_tensors *in, int trips)
{
	float x[64];
	int32_t n[1] = { trips };
	int64_t shape[2] = { 1, 64 }, one[2] = { 1, 1 };
	for (int i = 0; i < 64; i++)
		x[i] = (float)i + 0.25f;
	memset(in, 0, sizeof *in);
	ls_tensors_add(in, "x", LM_DT_FLOAT32, shape, 2, x);
	if (trips >= 0)
		ls_tensors_add(in, "n", LM_DT_INT32, one, 2, n);
}

/* Verify (when verify) and run m: 0 with *r, or the error. */
static int run_opts(lm_module *m, int verify, const ls_options *o,
		    int trips, ls_result *r, lm_error *err)
{
	ls_tensors in;
	int rc;
	if (verify && (rc = lm_verify(m, NULL, err)) != 0)
		return rc;
	if ((rc = ls_check_module(m, err)) != 0)
		return rc;
	inputs(&in, trips);
	rc = ls_run(m, &in, o, r, err);
	ls_tensors_free(&in);
	return rc;
}

static int run(lm_module *m, uint64_t seed, ls_result *r, lm_error *err)
{
	ls_options o;
	memset(&o, 0, sizeof o);
	o.perturb_seed = seed;
	return run_opts(m, 1, &o, -1, r, err);
}

static const float *out_y(const ls_result *r)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, "y");
	ck_assert_ptr_nonnull(t);
	return (const float *)t->data;
}

/* The run of name with subs fails with want in the message. */
static void run_fails(const char *name, const char *const *subs,
		      const char *want)
{
	lm_module *m = fixture(name, subs);
	ls_result r;
	lm_error err;
	int rc = run(m, 0, &r, &err);
	if (rc == 0)
		ls_result_free(&r);
	ck_assert_msg(rc != 0, "%s: the run passed", name);
	ck_assert_msg(strstr(err.msg, want), "%s: %s", name, err.msg);
	lm_module_free(m);
}

/* y = acc after `trips` passes of acc := acc + x[0..8) from acc = 0, in
** float32 */
static void want_sum(int trips, float *w)
{
	for (int k = 0; k < 8; k++) {
		float a = 0.0f;
		for (int t = 0; t < trips; t++)
			a = a + ((float)k + 0.25f);
		w[k] = a;
	}
}

/*
** cbrloop.json: entry (load x, acc := 0, r_n := 5, r_i := 0, a branch over
** the block `skip`), body (acc += x, r_i += 1, a hint, r_i < r_n ->
** body, else done), done (store acc, TensorCompletion, Return), tail
** (never reached: it would write 7s). Five passes, every engine follows
** the branches on ALL; the instructions counted by hand; the same bits
** under perturbed schedules.
*/
START_TEST(test_cbr_loop)
{
	static const char *const none[] = { NULL };
	static const char *const one[] = { "\"value\": 5", "\"value\": 1",
					   NULL };
	float w[8];
	for (int v = 0; v < 2; v++) {
		int trips = v ? 1 : 5;
		want_sum(trips, w);
		for (uint64_t seed = 0; seed < 4; seed++) {
			lm_module *m = fixture("cbrloop.json", v ? one : none);
			ls_result r;
			lm_error err;
			const float *y;
			ck_assert_msg(run(m, seed, &r, &err) == 0, "%s",
				      err.msg);
			y = out_y(&r);
			for (int k = 0; k < 8; k++)
				ck_assert_msg(y[k] == w[k], "trips %d seed %d "
					      "y[%d] = %g, want %g", trips,
					      (int)seed, k, y[k], w[k]);
			/* entry: 2 + 3 ALL x 5 engines; body: 1 + 3 x 5 per
			   pass; done: 3 */
			ck_assert_int_eq(r.instructions, 17 + 16 * trips + 3);
			ls_result_free(&r);
			lm_module_free(m);
		}
	}
}
END_TEST

/*
** cbrslices.json: pass i loads x[8i .. 8i+8) on SP into its own slice of
** xs (a register-addressed copy) and DVE adds that slice into acc: the
** dependencies (DVE's add on SP's load of this pass, the store on the
** last pass's add) hold across block entries under every schedule.
*/
START_TEST(test_cbr_slices)
{
	for (uint64_t seed = 0; seed < 6; seed++) {
		lm_module *m = fixture("cbrslices.json", NULL);
		ls_result r;
		lm_error err;
		const float *y;
		ck_assert_msg(run(m, seed, &r, &err) == 0, "%s", err.msg);
		y = out_y(&r);
		for (int k = 0; k < 8; k++) {
			float a = 0.0f;
			for (int t = 0; t < 5; t++)
				a = a + ((float)(8 * t + k) + 0.25f);
			ck_assert_msg(y[k] == a, "seed %d y[%d] = %g, want %g",
				      (int)seed, k, y[k], a);
		}
		ck_assert_int_eq(r.instructions, 21 + 17 * 5 + 1);
		ls_result_free(&r);
		lm_module_free(m);
	}
}
END_TEST

/* ---- the compares ------------------------------------------------------- */

static const char *const cmp_names[12] = {
	"IS_LTIMM", "IS_LEIMM", "IS_EQIMM", "IS_NEIMM", "IS_GEIMM", "IS_GTIMM",
	"IS_LTREG", "IS_LEREG", "IS_EQREG", "IS_NEREG", "IS_GEREG", "IS_GTREG",
};

/* The 32-bit cell v read at dtype dt, as a double. */
static double at(const char *dt, uint32_t v)
{
	float f;
	if (!strcmp(dt, "uint8")) return (double)(v & 0xff);
	if (!strcmp(dt, "int8")) return (double)(int8_t)(v & 0xff);
	if (!strcmp(dt, "uint16")) return (double)(v & 0xffff);
	if (!strcmp(dt, "int16")) return (double)(int16_t)(v & 0xffff);
	if (!strcmp(dt, "int32")) return (double)(int32_t)v;
	if (!strcmp(dt, "float32")) {
		memcpy(&f, &v, sizeof f);
		return (double)f;
	}
	return (double)v;
}

static int holds(int op, double a, double b)
{
	switch (op % 6) {
	case 0: return a < b;
	case 1: return a <= b;
	case 2: return a == b;
	case 3: return a != b;
	case 4: return a >= b;
	default: return a > b;
	}
}

/* cmp.json: the compare of ra and rb (or an immediate) at dtype dt goes
** to `yes` (y = x[1]) or `no` (y = x[2], then a branch over `yes`). */
static void check_cmp(int op, const char *dt, uint32_t a, uint32_t b)
{
	char sa[64], sb[64], sop[64], sdt[32], simm[160];
	const char *subs[16];
	int n = 0, want;
	lm_module *m;
	ls_result r;
	lm_error err;
	double bv = at(dt, b);
	snprintf(sa, sizeof sa, "\"value\": %u", a);
	snprintf(sb, sizeof sb, "\"value\": %u", b);
	snprintf(sop, sizeof sop, "\"comp_op\": \"%s\"", cmp_names[op]);
	snprintf(sdt, sizeof sdt, "\"%s\"", dt);
	subs[n++] = "\"value\": 1111111"; subs[n++] = sa;
	subs[n++] = "\"value\": 2222222"; subs[n++] = sb;
	subs[n++] = "\"comp_op\": \"IS_LTREG\""; subs[n++] = sop;
	if (op < 6) {
		snprintf(simm, sizeof simm, "{\"kind\": \"imm_value\", "
			 "\"dtype\": \"%s\", \"value\": %.17g}", dt, bv);
		subs[n++] = "{\"kind\": \"register_access\", \"dtype\": "
			    "\"DTYPE\", \"regref\": \"rb\"}";
		subs[n++] = simm;
	}
	subs[n++] = "\"DTYPE\""; subs[n++] = sdt;
	subs[n] = NULL;
	m = fixture("cmp.json", subs);
	ck_assert_msg(run(m, 0, &r, &err) == 0, "%s %s %u %u: %s",
		      cmp_names[op], dt, a, b, err.msg);
	want = holds(op, at(dt, a), bv);
	ck_assert_msg(out_y(&r)[0] == (want ? 1.25f : 2.25f), "%s %s %u %u: "
		      "y = %g", cmp_names[op], dt, a, b, out_y(&r)[0]);
	/* 2 moves and the compare on 5 engines, a copy, and on `no` the
	   branch on 5 */
	ck_assert_int_eq(r.instructions, 15 + 1 + (want ? 0 : 5));
	ls_result_free(&r);
	lm_module_free(m);
}

START_TEST(test_cbr_ops)
{
	static const char *const dts[] = { "uint8", "int8", "uint16",
					   "int16", "uint32", "int32",
					   "float32" };
	static const uint32_t ints[][2] = {
		{ 3, 5 }, { 5, 3 }, { 4, 4 }, { 0xff, 1 }, { 0x1ff, 0xff },
		{ 0xffff, 0 }, { 0x80000000u, 1 }, { 0xffffffffu, 0 },
		{ 0x7fff, 0x8000 },
	};
	/* float32 bits: 1.5, -2, 0, -0, 3.25, NaN */
	static const uint32_t flts[][2] = {
		{ 0x3fc00000u, 0xc0000000u }, { 0xc0000000u, 0x3fc00000u },
		{ 0x00000000u, 0x80000000u }, { 0x40500000u, 0x40500000u },
		{ 0x7fc00000u, 0x3fc00000u },
	};
	for (int op = 0; op < 12; op++)
		for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
			int is_f = !strcmp(dts[d], "float32");
			size_t np = is_f ? sizeof flts / sizeof *flts
					 : sizeof ints / sizeof *ints;
			for (size_t p = 0; p < np; p++) {
				uint32_t a = is_f ? flts[p][0] : ints[p][0];
				uint32_t b = is_f ? flts[p][1] : ints[p][1];
				/* an immediate holds b's value at the dtype;
				   NaN has no immediate spelling in JSON */
				if (op < 6 && is_f && isnan(at(dts[d], b)))
					continue;
				check_cmp(op, dts[d], a, b);
			}
		}
}
END_TEST

/* ---- Return, Halt -------------------------------------------------------- */

/* A Halt on every engine in place of the Return stops the run there (the
** store in flight completes); a Halt on DVE before its add leaves the
** store waiting: a deadlock naming the Halt. */
START_TEST(test_halt)
{
	static const char *const all[] = {
		"{\"opcode\": \"Return\", \"name\": \"ret\", \"engine\": \"SP\"}",
		"{\"opcode\": \"Halt\", \"name\": \"h\"}", NULL };
	static const char *const dve[] = {
		"{\"opcode\": \"TensorTensor\", \"name\": \"tt\"",
		"{\"opcode\": \"Halt\", \"name\": \"h\", \"engine\": \"DVE\"}, "
		"{\"opcode\": \"TensorTensor\", \"name\": \"tt\"", NULL };
	lm_module *m = fixture("cbrloop.json", all);
	ls_result r;
	lm_error err;
	float w[8];
	want_sum(5, w);
	ck_assert_msg(run(m, 0, &r, &err) == 0, "%s", err.msg);
	for (int k = 0; k < 8; k++)
		ck_assert(out_y(&r)[k] == w[k]);
	/* the Return's place: a Halt on each of the 5 engines */
	ck_assert_int_eq(r.instructions, 17 + 16 * 5 + 2 + 5);
	ls_result_free(&r);
	lm_module_free(m);
	run_fails("cbrloop.json", dve, "core 0 DVE: halted by 'h'");
	run_fails("cbrloop.json", dve, "core 0 SP: 'st' (DMACopy) waits for "
		  "instruction 'tt' to complete");
}
END_TEST

/* ---- errors -------------------------------------------------------------- */

/* Each engine follows only its own branches and those on ALL: a back edge
** on SP alone parts SP from the others. */
START_TEST(test_diverge)
{
	static const char *const sp[] = {
		"\"name\": \"cb\", \"engine\": \"ALL\"",
		"\"name\": \"cb\", \"engine\": \"SP\"", NULL };
	run_fails("cbrloop.json", sp, "engines diverge: ");
	run_fails("cbrloop.json", sp, "as block entry 2 of the function");
	run_fails("cbrloop.json", sp, "put the branch on ALL");
}
END_TEST

/* A loop that never ends stops at --max-instructions, naming the block
** and the block entry. */
START_TEST(test_runaway)
{
	static const char *const ever[] = { "\"on_false\": \"done\"",
					    "\"on_false\": \"body\"", NULL };
	lm_module *m = fixture("cbrloop.json", ever);
	ls_options o;
	ls_result r;
	lm_error err;
	int rc;
	memset(&o, 0, sizeof o);
	o.max_instructions = 1000;
	rc = run_opts(m, 1, &o, -1, &r, &err);
	if (rc == 0)
		ls_result_free(&r);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "more than 1000 instructions executed "
			     "(--max-instructions)") &&
		      strstr(err.msg, "in block 'body', block entry"), "%s",
		      err.msg);
	lm_module_free(m);
}
END_TEST

/* Verifier errors: an unknown block, a block of another region; the
** simulator refuses what it does not model before time 0. */
START_TEST(test_bad_targets)
{
	static const char *const unknown[] = { "\"on_true\": \"body\"",
					       "\"on_true\": \"nowhere\"", NULL };
	static const char *const target[] = { "\"target\": \"body\"",
					      "\"target\": \"sg0000\"", NULL };
	struct { const char *const *subs; const char *want; } v[] = {
		{ unknown, "instruction cb: CompareAndBranch 'cb': on_true "
		  "'nowhere' names no block of the region" },
		{ target, "UnconditionalBranch 'go': target 'sg0000' names no "
		  "block of the region" },
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		lm_module *m = fixture("cbrloop.json", v[i].subs);
		lm_error err;
		ck_assert_int_ne(lm_verify(m, NULL, &err), 0);
		ck_assert_msg(strstr(err.msg, v[i].want), "%s", err.msg);
		lm_module_free(m);
	}
}
END_TEST

/* A branch out of a Loop's body into the function's blocks: the verifier
** says it leaves its region; the simulator refuses a branch in a body. */
START_TEST(test_branch_out_of_region)
{
	static const char *const in_loop[] = {
		"{\"opcode\": \"TensorCompletion\", \"name\": \"tc\", "
		"\"engine\": \"SP\", \"mode\": \"Default\"}",
		"{\"opcode\": \"Loop\", \"name\": \"l\", \"engine\": \"SP\", "
		"\"LoopAxis\": {\"name\": \"i\", \"lb\": 0, \"ub\": 2, \"stride\": "
		"1}, \"blocks\": [{\"name\": \"lb\", \"instructions\": "
		"[{\"opcode\": \"UnconditionalBranch\", \"name\": \"out\", "
		"\"target\": \"TARGET\"}]}]}", NULL };
	const char *subs[6];
	lm_module *m;
	lm_error err;
	memcpy(subs, in_loop, sizeof in_loop);
	subs[1] = tu_replace_all(in_loop[1], "TARGET", "tail");
	m = fixture("cbrloop.json", subs);
	ck_assert_int_ne(lm_verify(m, NULL, &err), 0);
	ck_assert_msg(strstr(err.msg, "UnconditionalBranch 'out': target "
			     "'tail' names no block of the region (a block of "
			     "another region of the function"), "%s", err.msg);
	lm_module_free(m);
	free((char *)subs[1]);
	subs[1] = tu_replace_all(in_loop[1], "TARGET", "lb");
	m = fixture("cbrloop.json", subs);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_ne(ls_check_module(m, &err), 0);
	ck_assert_msg(strstr(err.msg, "opcode 'UnconditionalBranch' inside a "
			     "Loop is not modelled by the simulator"), "%s",
		      err.msg);
	lm_module_free(m);
	free((char *)subs[1]);
}
END_TEST

/* Operands and compares the simulator does not model are refused by name
** before time 0. */
START_TEST(test_cbr_refused)
{
	static const char *const unsup[] = {
		"\"comp_op\": \"IS_LTREG\"", "\"comp_op\": \"Unsupported\"",
		NULL };
	static const char *const mixed[] = {
		"\"ins\": [{\"kind\": \"register_access\", \"dtype\": "
		"\"DTYPE\", \"regref\": \"ra\"}, {\"kind\": \"register_access\", "
		"\"dtype\": \"DTYPE\"", "\"ins\": [{\"kind\": "
		"\"register_access\", \"dtype\": \"int32\", \"regref\": \"ra\"}, "
		"{\"kind\": \"register_access\", \"dtype\": \"uint32\"", NULL };
	static const char *const imm_reg[] = {
		"\"comp_op\": \"IS_LTREG\"", "\"comp_op\": \"IS_LTIMM\"",
		"\"DTYPE\"", "\"int32\"", NULL };
	static const char *const wide[] = { "\"DTYPE\"", "\"int64\"", NULL };
	/* an immediate beyond every integer range (its conversion to an
	   integer would be undefined) */
	static const char *const huge[] = {
		"\"comp_op\": \"IS_LTREG\"", "\"comp_op\": \"IS_LTIMM\"",
		"{\"kind\": \"register_access\", \"dtype\": \"DTYPE\", "
		"\"regref\": \"rb\"}", "{\"kind\": \"imm_value\", \"dtype\": "
		"\"int32\", \"value\": 1e300}", "\"DTYPE\"", "\"int32\"", NULL };
	static const char *const sync_all[] = {
		"\"name\": \"cb\",", "\"name\": \"cb\", \"engine\": \"ALL\", "
		"\"sync_info\": {\"on_update\": [{\"semaphore\": \"s_dma\", "
		"\"mode\": \"sem-inc\"}]},", "\"DTYPE\"", "\"int32\"", NULL };
	struct { const char *const *subs; const char *want; } v[] = {
		{ unsup, "key 'comp_op' = \"Unsupported\" is not modelled by "
		  "the simulator" },
		{ mixed, "key 'ins' = 1 operand (register_access) is not "
		  "modelled by the simulator (an *REG compare takes ins[1] at "
		  "ins[0]'s dtype)" },
		{ imm_reg, "key 'ins' = 1 operand (register_access) is not "
		  "modelled by the simulator (an *IMM compare takes an "
		  "imm_value as ins[1])" },
		{ wide, "dtype 'int64'" },
		{ huge, "ins[1] imm_value 1.0000000000000001e+300 is not a value "
		  "of ins[0]'s dtype int32" },
		{ sync_all, "key 'engine' = \"ALL\" is not modelled by the "
		  "simulator (an instruction on engine ALL runs once per "
		  "engine" },
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		const char *const *s = v[i].subs;
		const char *subs[12];
		int n = 0, has_dt = 0;
		lm_module *m;
		lm_error err;
		ls_result r;
		int rc;
		for (; s[n]; n++) {
			subs[n] = s[n];
			has_dt |= n % 2 == 0 && strstr(s[n], "DTYPE") != NULL;
		}
		if (!has_dt) {
			subs[n++] = "\"DTYPE\"";
			subs[n++] = "\"int32\"";
		}
		subs[n] = NULL;
		m = fixture("cmp.json", subs);
		rc = run_opts(m, 0, &(ls_options){ 0 }, -1, &r, &err);
		if (rc == 0)
			ls_result_free(&r);
		ck_assert_int_ne(rc, 0);
		ck_assert_msg(strstr(err.msg, v[i].want), "%zu: %s", i,
			      err.msg);
		lm_module_free(m);
	}
}
END_TEST

/* Block arguments: an argument whose incoming values are its own register
** runs (the values travel in the register); one that needs a copy on the
** edge is refused by name. */
START_TEST(test_block_args)
{
	static const char *const same[] = {
		"\"name\": \"body\",", "\"name\": \"body\", \"arguments\": "
		"[{\"regref\": \"r_i\", \"incoming_values\": [{\"regref\": "
		"\"r_i\", \"block\": \"entry\"}, {\"regref\": \"r_i\", "
		"\"block\": \"body\"}]}],", NULL };
	static const char *const copy[] = {
		"\"name\": \"body\",", "\"name\": \"body\", \"arguments\": "
		"[{\"regref\": \"r_i\", \"incoming_values\": [{\"regref\": "
		"\"r_n\", \"block\": \"entry\"}]}],", NULL };
	lm_module *m = fixture("cbrloop.json", same);
	ls_result r;
	lm_error err;
	float w[8];
	want_sum(5, w);
	ck_assert_msg(run(m, 0, &r, &err) == 0, "%s", err.msg);
	for (int k = 0; k < 8; k++)
		ck_assert(out_y(&r)[k] == w[k]);
	ls_result_free(&r);
	lm_module_free(m);
	run_fails("cbrloop.json", copy, "block argument 'r_i' of block "
		  "'body': incoming 'r_n' from 'entry' would need a copy on "
		  "the edge, which the simulator does not model");
}
END_TEST

/*
** Two cores running fixture name (core 1 with `from` replaced by `to`),
** with the same register and block names: `lncsim diff` runs them side
** by side and linked (registers renamed per core, the block targets
** kept, the completion barrier not waiting on the copies on ALL) and
** finds the same bits under perturbed schedules.
*/
static void write_cores(const char *dir, const char *text, const char *from,
			const char *to)
{
	for (int c = 0; c < 2; c++) {
		char core[40], y[16], path[40];
		char *t1, *t2, *t3, *out;
		snprintf(core, sizeof core, "\"neuron_core_id\": %d", c);
		snprintf(y, sizeof y, "\"y%d\"", c);
		snprintf(path, sizeof path, "nc%d/sg0/def.json", c);
		t1 = tu_replace_all(text, "\"neuron_core_id\": 0", core);
		t2 = tu_replace_all(t1, "\"y\"", y);
		t3 = tu_replace_all(t2, from, c ? to : from);
		out = tu_write(dir, path, t3);
		free(out);
		free(t1);
		free(t2);
		free(t3);
	}
}

static void two_cores(const char *name, const char *from, const char *to)
{
	char *dir = tu_tmpdir("branch-2c");
	char *p = tu_fixture("branch", name);
	char *text = tu_read(p), want[120];
	tu_run r;
	ck_assert_ptr_nonnull(text);
	write_cores(dir, text, from, to);
	r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "4", dir, NULL);
	ck_assert_msg(r.status == 0, "%s: %s%s", name, r.out, r.err);
	snprintf(want, sizeof want, "PASS %.*s (2 cores): 2 outputs "
		 "bit-identical", (int)(strlen(name) - 5), name);
	ck_assert_contains(r.out, want);
	tu_run_free(&r);
	tu_rmtree(dir);
	free(dir);
	free(text);
	free(p);
}

/* A CFG loop (5 and 3 passes) and a register-addressed copy (element
** offsets 19 and 35) on two cores. */
START_TEST(test_cbr_two_cores)
{
	two_cores("cbrslices.json", "\"value\": 5}", "\"value\": 3}");
	two_cores("regap.json", "\"value\": 19}", "\"value\": 35}");
}
END_TEST

/*
** tests/fixtures/branch/kcall_loop.json: cbrloop.json with an NKIKernel
** call kc at the top of the loop's block. One pass runs; a second would
** reuse the call's body activation (open and over already): refused by
** name instead of running the body unordered with its call.
*/
START_TEST(test_call_again)
{
	char *p = tu_fixture("branch", "kcall_loop.json");
	char *dir = tu_tmpdir("branch-again"), *text = tu_read(p), *one, *q;
	tu_run r = tu_lncsim(NULL, "run", "--no-db", p, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.err, "instruction kc: NKIKernel call 'kc' "
			   "reached again (its block entered once more "
			   "through a branch): a call whose body runs more "
			   "than once from one activation is not modelled");
	tu_run_free(&r);
	ck_assert_ptr_nonnull(text);
	one = tu_replace_all(text, "\"value\": 5\n", "\"value\": 1\n");
	ck_assert(strcmp(one, text) != 0);
	q = tu_write(dir, "once.json", one);
	r = tu_lncsim(NULL, "run", "--no-db", q, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	tu_rmtree(dir);
	free(q);
	free(one);
	free(text);
	free(dir);
	free(p);
}
END_TEST

/*
** cbrloop.json leaves through the Return in block 'done' (the last block,
** 'tail', is never reached): linked on two cores, each core gets a
** completion barrier before that Return too, depending on the last
** instruction of each engine before it (the store, not the
** TensorCompletion after it), and both cores meet there.
*/
START_TEST(test_return_barrier)
{
	static const char *const bars[] = {
		"\"cb_return_call_def_0_instance_0.1\"",
		"\"cb_return_call_def_1_instance_0.1\"" };
	char *dir = tu_tmpdir("branch-ret");
	char *p = tu_fixture("branch", "cbrloop.json");
	char *text = tu_read(p), *def, *trace, *src;
	tu_run r;
	ck_assert_ptr_nonnull(text);
	src = lm_xasprintf("%s/m", dir);
	write_cores(src, text, "\"value\": 5}", "\"value\": 3}");
	r = tu_lncsim(dir, "link", "--pretty", "-o", "lk", "m", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	def = lm_xasprintf("%s/lk/cbrloop/sgLnk/def.json", dir);
	trace = tu_read(def);
	ck_assert_ptr_nonnull(trace);
	ck_assert_contains(trace, "\"cb_return_call_def_0_instance_0.1\"");
	ck_assert_contains(trace, "[\"nc0.st\", \"Flow\"]");
	ck_assert_msg(!strstr(trace, "[\"nc0.tc\""), "the barrier waits on "
		      "the TensorCompletion");
	free(trace);
	r = tu_lncsim(dir, "run", "--no-db", "--trace", "t.json",
		      "lk/cbrloop/sgLnk", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	free(def);
	def = lm_xasprintf("%s/t.json", dir);
	trace = tu_read(def);
	ck_assert_ptr_nonnull(trace);
	for (int c = 0; c < 2; c++)
		ck_assert_msg(strstr(trace, bars[c]), "%s not run", bars[c]);
	free(trace);
	free(def);
	free(src);
	tu_rmtree(dir);
	free(dir);
	free(text);
	free(p);
	two_cores("cbrloop.json", "\"value\": 5}", "\"value\": 3}");
}
END_TEST

/* ---- TensorLoad / TensorSave --------------------------------------------- */

/* cbrload.json with subs, the input n holding n64 (an int64 when is64):
** 0 with *r, or the error. */
static int run_load(const char *const *subs, int64_t n64, int is64,
		    uint64_t seed, ls_result *r, lm_error *err)
{
	lm_module *m = fixture("cbrload.json", subs);
	ls_tensors in;
	ls_options o;
	int64_t one[2] = { 1, 1 };
	int rc;
	memset(&o, 0, sizeof o);
	o.perturb_seed = seed;
	if ((rc = lm_verify(m, NULL, err)) == 0 &&
	    (rc = ls_check_module(m, err)) == 0) {
		inputs(&in, -1);
		if (is64)
			ls_tensors_add(&in, "n", LM_DT_INT64, one, 2, &n64);
		else {
			int32_t n32 = (int32_t)n64;
			ls_tensors_add(&in, "n", LM_DT_INT32, one, 2, &n32);
		}
		rc = ls_run(m, &in, &o, r, err);
		ls_tensors_free(&in);
	}
	lm_module_free(m);
	return rc;
}

/* y after `trips` passes of cbrslices / cbrload */
static void check_slices(const ls_result *r, int trips)
{
	const float *y = out_y(r);
	for (int k = 0; k < 8; k++) {
		float a = 0.0f;
		for (int t = 0; t < trips; t++)
			a = a + ((float)(8 * t + k) + 0.25f);
		ck_assert_msg(y[k] == a, "trips %d y[%d] = %g, want %g", trips,
			      k, y[k], a);
	}
}

/*
** The loop's trip count comes from memory: a TensorLoad on ALL puts n
** into every engine's r_n, the CompareAndBranch loop runs n passes, and
** a TensorSave writes the pass count r_i into cnt. The same bits under
** perturbed schedules.
*/
START_TEST(test_tensorload_trips)
{
	static const int trips[] = { 1, 2, 7 };
	for (size_t i = 0; i < sizeof trips / sizeof *trips; i++)
		for (uint64_t seed = 0; seed < 3; seed++) {
			ls_result r;
			lm_error err;
			const ls_tensor *c;
			ck_assert_msg(run_load(NULL, trips[i], 0, seed, &r,
					       &err) == 0, "%s", err.msg);
			check_slices(&r, trips[i]);
			c = ls_tensors_find(&r.outputs, "cnt");
			ck_assert_ptr_nonnull(c);
			ck_assert_int_eq(*(const int32_t *)c->data, trips[i]);
			/* entry: ms + 4 ALL x 5; per pass 2 + 3 x 5; done: the
			   store and the save */
			ck_assert_int_eq(r.instructions, 21 + 17 * trips[i] + 2);
			ls_result_free(&r);
		}
}
END_TEST

/*
** The 64-bit element moves through the pair (lo, hi): n = 3 + 5 * 2^32
** loads lo 3 (the trip count) and hi 5; the pair (r_i, r_hi) saved into
** an int64 cnt is 3 + 5 * 2^32 again.
*/
START_TEST(test_tensorload_pair)
{
	static const char *const pair[] = {
		"\"name\": \"n\",\n     \"kind\": \"ExternalInput\",\n     "
		"\"dtype\": \"int32\"", "\"name\": \"n\",\n     \"kind\": "
		"\"ExternalInput\",\n     \"dtype\": \"int64\"",
		"\"name\": \"cnt\",\n     \"kind\": \"ExternalOutput\",\n     "
		"\"dtype\": \"int32\"", "\"name\": \"cnt\",\n     \"kind\": "
		"\"ExternalOutput\",\n     \"dtype\": \"int64\"",
		"\"dims\": [\n        1,\n        4\n       ]",
		"\"dims\": [\n        1,\n        8\n       ]",
		"\"dtype\": \"int32\", \"offset\": 0, \"memsetref\": \"n\"",
		"\"dtype\": \"int64\", \"offset\": 0, \"memsetref\": \"n\"",
		"\"dtype\": \"int32\", \"offset\": 0, \"memsetref\": \"cnt\"",
		"\"dtype\": \"int64\", \"offset\": 0, \"memsetref\": \"cnt\"",
		"\"regref\": \"r_n\"}]}", "\"regref\": \"r_n\"}, {\"kind\": "
		"\"register_access\", \"dtype\": \"int32\", \"regref\": "
		"\"r_hi\"}]}",
		"\"ins\": [{\"kind\": \"register_access\", \"dtype\": "
		"\"int32\", \"regref\": \"r_i\"}], \"outs\"",
		"\"ins\": [{\"kind\": \"register_access\", \"dtype\": "
		"\"int32\", \"regref\": \"r_i\"}, {\"kind\": "
		"\"register_access\", \"dtype\": \"int32\", \"regref\": "
		"\"r_hi\"}], \"outs\"", NULL };
	int64_t n = 3 + ((int64_t)5 << 32);
	ls_result r;
	lm_error err;
	const ls_tensor *c;
	ck_assert_msg(run_load(pair, n, 1, 0, &r, &err) == 0, "%s", err.msg);
	check_slices(&r, 3);
	c = ls_tensors_find(&r.outputs, "cnt");
	ck_assert_ptr_nonnull(c);
	ck_assert(*(const int64_t *)c->data == n);
	ls_result_free(&r);
}
END_TEST

/* The errors: an element never written, a register never written, the
** forms refused before time 0. */
START_TEST(test_tensorload_errors)
{
	static const char *const unwritten[] = {
		"\"name\": \"ts\", \"engine\": \"SP\", \"ins\": [{\"kind\": "
		"\"register_access\", \"dtype\": \"int32\", \"regref\": "
		"\"r_i\"}]", "\"name\": \"ts\", \"engine\": \"SP\", \"ins\": "
		"[{\"kind\": \"register_access\", \"dtype\": \"int32\", "
		"\"regref\": \"r_hi\"}]", NULL };
	static const char *const two[] = {
		"\"regref\": \"r_n\"}]}", "\"regref\": \"r_n\"}, {\"kind\": "
		"\"register_access\", \"dtype\": \"int32\", \"regref\": "
		"\"r_hi\"}]}", NULL };
	static const char *const wide[] = {
		"\"ap\": [[1, 1], [1, 1]], \"dtype\": \"int32\", \"offset\": 0, "
		"\"memsetref\": \"n\", \"memref\": \"n\"", "\"ap\": [[64, 1], "
		"[1, 2]], \"dtype\": \"float32\", \"offset\": 0, \"memsetref\": "
		"\"x\", \"memref\": \"x\"", NULL };
	static const char *const save_all[] = {
		"\"name\": \"ts\", \"engine\": \"SP\"",
		"\"name\": \"ts\", \"engine\": \"ALL\"", NULL };
	ls_result r;
	lm_error err;
	int rc = run_load(unwritten, 2, 0, 0, &r, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "instruction ts: on SP: ins[0] reads "
			     "register 'r_hi', which no instruction has "
			     "written on SP"), "%s", err.msg);
	rc = run_load(two, 2, 0, 0, &r, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "opcode 'TensorLoad' key 'outs' = 2 "
			     "operands is not modelled by the simulator (a "
			     "32-bit element moves through one register)"),
		      "%s", err.msg);
	rc = run_load(wide, 2, 0, 0, &r, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "instruction tl: opcode 'TensorLoad' "
			     "key 'ins' = 1 operand (physical_ap 'x') is not "
			     "modelled by the simulator (one tensor element"),
		      "%s", err.msg);
	rc = run_load(save_all, 2, 0, 0, &r, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "opcode 'TensorSave' key 'engine' = "
			     "\"ALL\" is not modelled"), "%s", err.msg);
}
END_TEST

/* A TensorLoad of an element nothing wrote is the memory error. */
START_TEST(test_tensorload_uninit)
{
	static const char *const sb[] = {
		"\"memsetref\": \"n\", \"memref\": \"n\"",
		"\"memsetref\": \"acc\", \"memref\": \"acc\"",
		"\"ap\": [[1, 1], [1, 1]], \"dtype\": \"int32\", \"offset\": 0, "
		"\"memsetref\": \"acc\"", "\"ap\": [[8, 1], [1, 1]], \"dtype\": "
		"\"int32\", \"offset\": 0, \"memsetref\": \"acc\"", NULL };
	ls_result r;
	lm_error err;
	int rc = run_load(sb, 2, 0, 0, &r, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "instruction tl: on PE: reads "
			     "uninitialized memory: ins[0] "), "%s", err.msg);
}
END_TEST

/* ---- register_ap ---------------------------------------------------------- */

/* regap.json with r_a := value and the pairs of more: 0 with y checked
** against xs[1 + p][3 + j] = x[16 (1 + p) + 3 + j], or the error. */
static int run_regap(int64_t value, const char *const *more, lm_error *err)
{
	char sv[40];
	const char *subs[24];
	int n = 0, rc;
	lm_module *m;
	ls_result r;
	snprintf(sv, sizeof sv, "\"value\": %lld}", (long long)value);
	subs[n++] = "\"value\": 19}";
	subs[n++] = sv;
	for (int i = 0; more && more[i] && n < 22; i++)
		subs[n++] = more[i];
	subs[n] = NULL;
	m = fixture("regap.json", subs);
	rc = run(m, 0, &r, err);
	if (rc == 0) {
		const float *y = out_y(&r);
		for (int p = 0; p < 2; p++)
			for (int j = 0; j < 4; j++)
				ck_assert_msg(y[p * 4 + j] == (float)(16 * (1 + p)
					      + 3 + j) + 0.25f, "y[%d][%d] = %g",
					      p, j, y[p * 4 + j]);
		ls_result_free(&r);
	}
	lm_module_free(m);
	return rc;
}

/*
** A register_ap reads its address from the register at the issue: as an
** element offset (is_regloc_offset: partition * 16 + element, plus
** const_ap_offset), or as an SB arch address (partition * 0x40000 + the
** byte in the partition); both reach the same elements.
*/
START_TEST(test_regap_modes)
{
	static const char *const with_c[] = {
		"\"const_ap_offset\": 0", "\"const_ap_offset\": 3", NULL };
	static const char *const arch[] = {
		"\"is_regloc_offset\": true", "\"is_regloc_offset\": false",
		NULL };
	lm_error err;
	ck_assert_msg(run_regap(19, NULL, &err) == 0, "%s", err.msg);
	ck_assert_msg(run_regap(16, with_c, &err) == 0, "%s", err.msg);
	/* partition 1 at byte 256 + 3 * 4 of it */
	ck_assert_msg(run_regap(0x40000 + 256 + 12, arch, &err) == 0, "%s",
		      err.msg);
}
END_TEST

/* An address outside the operand's memory location is a run error naming
** the instruction, the register, its value and the bounds. */
START_TEST(test_regap_oob)
{
	static const char *const arch[] = {
		"\"is_regloc_offset\": true", "\"is_regloc_offset\": false",
		NULL };
	static const struct { int64_t v; int is_arch; const char *want; } c[] = {
		{ 67, 0, "instruction cp: on DVE: ins[0] register_ap 'xs': "
		  "register 'r_a' = 67 (element offset 67) puts the access "
		  "outside memory location 'xs' (partitions 0..3, bytes "
		  "256..319)" },
		{ -1, 0, "register 'r_a' = -1 (element offset -1) puts the "
		  "access outside" },
		{ 4 * 0x40000 + 256, 1, "register 'r_a' = 1048832 (SB "
		  "partition 4, byte 256) puts the access outside memory "
		  "location 'xs' (partitions 0..3, bytes 256..319)" },
		{ 0x40000 + 128, 1, "(SB partition 1, byte 128) puts the "
		  "access outside" },
		{ 0x40000 + 258, 1, "(SB partition 1, byte 258) puts the "
		  "access outside" },
		{ 0x40000 + 256 + 13 * 4, 1, "(SB partition 1, byte 308) puts "
		  "the access outside" },
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		lm_error err;
		int rc = run_regap(c[i].v, c[i].is_arch ? arch : NULL, &err);
		ck_assert_msg(rc != 0, "%zu: the run passed", i);
		ck_assert_msg(strstr(err.msg, c[i].want), "%zu: %s", i, err.msg);
	}
}
END_TEST

/* A register_ap in DRAM (the load of regap.json from register r_a,
** written on SP first): 64 elements read of 64, so only element 0 (byte
** 0) fits; the message gives the starts that fit, not the location's
** size. */
START_TEST(test_regap_dram)
{
	static const struct { const char *v, *mode, *want; } c[] = {
		{ "0", "true", NULL },
		{ "1", "true", "register 'r_a' = 1 (element offset 1) puts the "
		  "access outside memory location 'x' (the access fits starting "
		  "at elements 0..0)" },
		{ "0", "false", NULL },
		{ "2", "false", "(DRAM byte 2) puts the access outside" },
		{ "4", "false", "(DRAM byte 4) puts the access outside memory "
		  "location 'x' (the access fits starting at elements 0..0)" },
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		char mv[400], ap[400];
		const char *subs[5];
		lm_module *m;
		lm_error err;
		ls_result r;
		int rc;
		snprintf(mv, sizeof mv, "{\"opcode\": \"RegisterMove\", "
			 "\"name\": \"mvb\", \"engine\": \"SP\", \"ins\": "
			 "[{\"kind\": \"imm_value\", \"dtype\": \"int32\", "
			 "\"value\": %s}], \"outs\": [{\"kind\": "
			 "\"register_access\", \"dtype\": \"int32\", "
			 "\"regref\": \"r_a\"}]}, {\"opcode\": \"DMACopy\", "
			 "\"name\": \"ld\"", c[i].v);
		snprintf(ap, sizeof ap, "{\"kind\": \"register_ap\", \"ap\": "
			 "[[16, 4], [1, 16]], \"dtype\": \"float32\", "
			 "\"memsetref\": \"x\", \"memref\": \"x\", "
			 "\"regref\": \"r_a\", \"is_regloc_offset\": %s}",
			 c[i].mode);
		subs[0] = "{\"opcode\": \"DMACopy\", \"name\": \"ld\"";
		subs[1] = mv;
		subs[2] = "{\"kind\": \"physical_ap\", \"ap\": [[16, 4], "
			  "[1, 16]], \"dtype\": \"float32\", \"offset\": 0, "
			  "\"memsetref\": \"x\", \"memref\": \"x\"}";
		subs[3] = ap;
		subs[4] = NULL;
		m = fixture("regap.json", subs);
		rc = run(m, 0, &r, &err);
		if (rc == 0)
			ls_result_free(&r);
		if (!c[i].want)
			ck_assert_msg(rc == 0, "%zu: %s", i, err.msg);
		else
			ck_assert_msg(rc != 0 && strstr(err.msg, c[i].want),
				      "%zu: %s", i, rc ? err.msg : "passed");
		lm_module_free(m);
	}
}
END_TEST

/* The forms not modelled, named when the instruction is reached. */
START_TEST(test_regap_refused)
{
	static const char *const key[] = {
		"\"const_ap_offset\": 0", "\"const_ap_offset\": 0, \"frob\": 1",
		NULL };
	static const char *const sub[] = {
		"\"const_ap_offset\": 0", "\"const_ap_offset\": 0, "
		"\"const_sub_tensor_id\": 2", NULL };
	static const char *const prov[] = {
		"\"const_ap_offset\": 0", "\"const_ap_offset\": 0, "
		"\"reg_ap_offset\": \"xs\"", NULL };
	static const char *const arch_c[] = {
		"\"const_ap_offset\": 0", "\"const_ap_offset\": 2",
		"\"is_regloc_offset\": true", "\"is_regloc_offset\": false",
		NULL };
	static const char *const dram[] = {
		"\"memsetref\": \"xs\", \"memref\": \"xs\", \"regref\"",
		"\"memsetref\": \"x\", \"memref\": \"x\", \"regref\"", NULL };
	struct { const char *const *subs; const char *want; } v[] = {
		{ key, "instruction cp: register_ap key 'frob' is not modelled "
		  "by the simulator" },
		{ sub, "register_ap const_sub_tensor_id other than -1" },
		{ prov, "reg_ap_offset 'xs' names allocation 'xs', which is "
		  "not a register" },
		{ arch_c, "register_ap const_ap_offset 2 with an address "
		  "register (is_regloc_offset false) is not modelled" },
		{ dram, "a register_ap in DRAM is modelled on DMACopy, Load, "
		  "Save and TensorLoad only" },
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		lm_error err;
		int rc = run_regap(19, v[i].subs, &err);
		ck_assert_msg(rc != 0, "%zu: the run passed", i);
		ck_assert_msg(strstr(err.msg, v[i].want), "%zu: %s", i,
			      err.msg);
	}
}
END_TEST

/*
** TensorCopyDynamicSrc copies from a register-addressed source,
** TensorCopyDynamicDst into a register-addressed destination: the same
** elements as the TensorCopy; `scale` is refused away from 0, and a DRAM
** operand on the compute engine is refused.
*/
START_TEST(test_tcdynamic)
{
	static const char *const src[] = {
		"\"opcode\": \"TensorCopy\", \"name\": \"cp\"",
		"\"opcode\": \"TensorCopyDynamicSrc\", \"name\": \"cp\"", NULL };
	static const char *const dst[] = {
		"{\"opcode\": \"TensorCopy\", \"name\": \"cp\", \"engine\": "
		"\"DVE\", \"ins\": [{\"kind\": \"register_ap\", \"ap\": [[16, 2], "
		"[1, 4]], \"dtype\": \"float32\", \"memsetref\": \"xs\", "
		"\"memref\": \"xs\", \"regref\": \"r_a\", \"is_regloc_offset\": "
		"true, \"const_ap_offset\": 0}], \"outs\": [{\"kind\": "
		"\"physical_ap\", \"ap\": [[4, 2], [1, 4]], \"dtype\": \"float32\", "
		"\"offset\": 0, \"memsetref\": \"ys\", \"memref\": \"ys\"}]",
		"{\"opcode\": \"TensorCopyDynamicDst\", \"name\": \"cp\", "
		"\"engine\": \"DVE\", \"ins\": [{\"kind\": \"physical_ap\", \"ap\": "
		"[[16, 2], [1, 4]], \"dtype\": \"float32\", \"offset\": 19, "
		"\"memsetref\": \"xs\", \"memref\": \"xs\"}], \"outs\": "
		"[{\"kind\": \"register_ap\", \"ap\": [[4, 2], [1, 4]], \"dtype\": "
		"\"float32\", \"memsetref\": \"ys\", \"memref\": \"ys\", "
		"\"regref\": \"r_a\", \"is_regloc_offset\": true}]", NULL };
	static const char *const scale[] = {
		"\"opcode\": \"TensorCopy\", \"name\": \"cp\"",
		"\"opcode\": \"TensorCopyDynamicSrc\", \"name\": \"cp\", "
		"\"scale\": 2", NULL };
	static const char *const dram[] = {
		"\"opcode\": \"TensorCopy\", \"name\": \"cp\"",
		"\"opcode\": \"TensorCopyDynamicSrc\", \"name\": \"cp\"",
		"\"outs\": [{\"kind\": \"physical_ap\", \"ap\": [[4, 2], [1, 4]], "
		"\"dtype\": \"float32\", \"offset\": 0, \"memsetref\": \"ys\", "
		"\"memref\": \"ys\"}], \"dependencies\"",
		"\"outs\": [{\"kind\": \"physical_ap\", \"ap\": [[4, 2], [1, 4]], "
		"\"dtype\": \"float32\", \"offset\": 0, \"memsetref\": \"y\", "
		"\"memref\": \"y\"}], \"dependencies\"", NULL };
	lm_error err;
	ck_assert_msg(run_regap(19, src, &err) == 0, "%s", err.msg);
	ck_assert_msg(run_regap(0, dst, &err) == 0, "%s", err.msg);
	ck_assert_int_ne(run_regap(19, scale, &err), 0);
	ck_assert_msg(strstr(err.msg, "opcode 'TensorCopyDynamicSrc' key "
			     "'scale' = 2 is not modelled by the simulator"),
		      "%s", err.msg);
	ck_assert_int_ne(run_regap(19, dram, &err), 0);
	ck_assert_msg(strstr(err.msg, "instruction cp: TensorCopyDynamicSrc "
			     "on a compute engine reads and writes SBUF and "
			     "PSUM only"), "%s", err.msg);
}
END_TEST

/* ---- RegisterAlu is_64bit -------------------------------------------------- */

/*
** cbrload.json with n an int64 loaded into (r_n, r_hi), then on ALL
** (r_x, r_y) := (r_n, r_hi) op b, b an immediate (is_imm) or the pair
** itself, saved as the int64 cnt: 0 with *got, or the error.
*/
static int run_alu64(const char *op, const char *dt, int64_t a,
		     const char *b, uint64_t *got, lm_error *err)
{
	char alu[900];
	const char *subs[20];
	int n = 0, rc;
	ls_result r;
	snprintf(alu, sizeof alu, "\"regref\": \"r_n\"}, {\"kind\": "
		 "\"register_access\", "
		 "\"dtype\": \"%s\", \"regref\": \"r_hi\"}]}, "
		 "{\"opcode\": \"RegisterAlu\", \"name\": \"a64\", "
		 "\"engine\": \"ALL\", \"op\": \"%s\", \"is_64bit\": "
		 "true, \"ins\": [{\"kind\": \"register_access\", "
		 "\"dtype\": \"%s\", \"regref\": \"r_n\"}, {\"kind\": "
		 "\"register_access\", \"dtype\": \"%s\", \"regref\": "
		 "\"r_hi\"}, %s], \"outs\": [{\"kind\": "
		 "\"register_access\", \"dtype\": \"%s\", \"regref\": "
		 "\"r_x\"}, {\"kind\": \"register_access\", \"dtype\": "
		 "\"%s\", \"regref\": \"r_y\"}]}", dt, op, dt, dt, b,
		 dt, dt);
	subs[n++] = "\"name\": \"n\",\n     \"kind\": \"ExternalInput\",\n     "
		    "\"dtype\": \"int32\"";
	subs[n++] = "\"name\": \"n\",\n     \"kind\": \"ExternalInput\",\n     "
		    "\"dtype\": \"int64\"";
	subs[n++] = "\"name\": \"cnt\",\n     \"kind\": \"ExternalOutput\",\n     "
		    "\"dtype\": \"int32\"";
	subs[n++] = "\"name\": \"cnt\",\n     \"kind\": \"ExternalOutput\",\n     "
		    "\"dtype\": \"int64\"";
	subs[n++] = "\"dims\": [\n        1,\n        4\n       ]";
	subs[n++] = "\"dims\": [\n        1,\n        8\n       ]";
	subs[n++] = "\"dtype\": \"int32\", \"offset\": 0, \"memsetref\": \"n\"";
	subs[n++] = "\"dtype\": \"int64\", \"offset\": 0, \"memsetref\": \"n\"";
	subs[n++] = "\"dtype\": \"int32\", \"offset\": 0, \"memsetref\": \"cnt\"";
	subs[n++] = "\"dtype\": \"int64\", \"offset\": 0, \"memsetref\": \"cnt\"";
	subs[n++] = "\"regref\": \"r_n\"}]}";
	subs[n++] = alu;
	subs[n++] = "\"ins\": [{\"kind\": \"register_access\", \"dtype\": "
		    "\"int32\", \"regref\": \"r_i\"}], \"outs\"";
	subs[n++] = "\"ins\": [{\"kind\": \"register_access\", \"dtype\": "
		    "\"int32\", \"regref\": \"r_x\"}, {\"kind\": "
		    "\"register_access\", \"dtype\": \"int32\", \"regref\": "
		    "\"r_y\"}], \"outs\"";
	subs[n] = NULL;
	rc = run_load(subs, a, 1, 0, &r, err);
	if (rc == 0) {
		const ls_tensor *c = ls_tensors_find(&r.outputs, "cnt");
		ck_assert_ptr_nonnull(c);
		memcpy(got, c->data, sizeof *got);
		ls_result_free(&r);
	}
	return rc;
}

/* Values worked out by hand: carries and borrows across the halves,
** floor division and mod at int64, the shifts, signed and unsigned
** compares, the four-register form. */
START_TEST(test_alu64)
{
	static const struct {
		const char *op, *dt;
		int64_t a;
		const char *b;
		uint64_t want;
	} c[] = {
#define IMM(v) "{\"kind\": \"imm_value\", \"dtype\": \"int32\", \"value\": " #v "}"
#define SELF "{\"kind\": \"register_access\", \"dtype\": \"int32\", " \
	     "\"regref\": \"r_n\"}, {\"kind\": \"register_access\", " \
	     "\"dtype\": \"int32\", \"regref\": \"r_hi\"}"
		{ "add", "int32", 0x1ffffffffLL, IMM(1), 0x200000000ULL },
		{ "subtract", "int32", 0x200000000LL, IMM(1), 0x1ffffffffULL },
		{ "mult", "uint32", 0x100000000LL, IMM(3), 0x300000000ULL },
		{ "divide", "int32", -7, IMM(2), (uint64_t)-4 },
		{ "mod", "int32", -7, IMM(2), 1 },
		{ "divide", "uint32", -8, IMM(2), 0x7ffffffffffffffcULL },
		{ "logical_shift_right", "int32", INT64_MIN, IMM(63), 1 },
		{ "arith_shift_right", "int32", INT64_MIN, IMM(63),
		  UINT64_MAX },
		{ "is_lt", "int32", -1, IMM(1), 1 },
		{ "is_lt", "uint32", -1, IMM(1), 0 },
		{ "add", "int32", 0x180000000LL, SELF, 0x300000000ULL },
		{ "bitwise_xor", "uint32", 0x500000003LL, SELF, 0 },
		{ "add", "int32", 5, IMM(-6), UINT64_MAX },
#undef IMM
#undef SELF
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		uint64_t got = 0;
		lm_error err;
		ck_assert_msg(run_alu64(c[i].op, c[i].dt, c[i].a, c[i].b, &got,
					&err) == 0, "%zu %s: %s", i, c[i].op,
			      err.msg);
		ck_assert_msg(got == c[i].want, "%zu %s %s %lld: 0x%llx, want "
			      "0x%llx", i, c[i].op, c[i].dt, (long long)c[i].a,
			      (unsigned long long)got,
			      (unsigned long long)c[i].want);
	}
}
END_TEST

/*
** kbranch.json: sg0000 loads x[0..8) (its queue's semaphore counts it),
** calls kf (waiting for that semaphore), stores acc; kf zeroes kacc, adds
** kxs five times in a CompareAndBranch loop, then checks the count: 5
** returns from block kok (in the middle of the kernel), anything else
** falls into kbad, which would write -1s. Inlined, the kernel's blocks
** join the caller's (renamed kc.BLOCK), the Return in kok becomes a
** branch to the continuation kc.return (the last Return is dropped), the
** call's wait moves to the NoOp kc.entry; the outputs are the called
** form's bits, 5 x in float32. Inside a Loop the call is refused.
*/
START_TEST(test_inline_branching)
{
	static const char *const blocks[] = { "entry", "kc.k0", "kc.kb",
		"kc.kx", "kc.kok", "kc.kbad", "kc.return" };
	lm_module *m = fixture("kbranch.json", NULL);
	lm_module *il = lm_module_clone(m);
	ls_result rc, ri;
	lm_error err;
	float w[8];
	ck_assert_msg(run(m, 0, &rc, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rc.n_kernels, 1);
	ck_assert_msg(lp_inline_nki(il, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(il->n_functions, 1);
	const lm_function *f = &il->functions[0];
	ck_assert_int_eq(f->n_blocks, 7);
	for (int b = 0; b < 7; b++)
		ck_assert_str_eq(f->blocks[b].name, blocks[b]);
	const lm_block *e = &f->blocks[0], *ok = &f->blocks[4],
		       *bad = &f->blocks[5], *ret = &f->blocks[6];
	ck_assert_int_eq(e->n_insts, 2);
	ck_assert_int_eq(e->insts[1].op, LM_OP_NOOP);
	ck_assert_str_eq(e->insts[1].name, "kc.entry");
	ck_assert_int_eq(e->insts[1].n_wait, 1);
	ck_assert_int_eq(ok->n_insts, 1);
	ck_assert_int_eq(ok->insts[0].op, LM_OP_UBRANCH);
	ck_assert_str_eq(ok->insts[0].branch_target, "kc.return");
	ck_assert_int_eq(bad->n_insts, 1);
	ck_assert_int_eq(bad->insts[0].op, LM_OP_MEMSET);
	ck_assert_str_eq(f->blocks[2].insts[2].on_true, "kc.kb");
	ck_assert_str_eq(f->blocks[2].insts[2].on_false, "kc.kx");
	ck_assert_int_eq(ret->insts[0].op, LM_OP_NOOP);
	ck_assert_str_eq(ret->insts[0].name, "kc");
	ck_assert_int_gt(ret->insts[0].n_deps, 0);
	ck_assert_msg(run(il, 0, &ri, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(ri.n_kernels, 0);
	want_sum(5, w);
	ck_assert(memcmp(out_y(&rc), w, sizeof w) == 0);
	ck_assert(memcmp(out_y(&ri), w, sizeof w) == 0);
	ls_result_free(&ri);
	ls_result_free(&rc);
	lm_module_free(il);
	lm_module_free(m);

	/* the command says what it inlined: no carrier, the module's call */
	char *dir = tu_tmpdir("branch-inl"), *src = tu_fixture("branch",
							     "kbranch.json");
	tu_run r = tu_lncsim(dir, "lower", "--inline", "-o", "inl.json", src,
			     NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "inl.json: 0 kernel carriers: 0 lowered and "
			   "inlined, 0 skipped; 1 NKIKernel call of the module "
			   "inlined\n");
	tu_run_free(&r);
	tu_rmtree(dir);
	free(dir);
	free(src);

	m = fixture("kbranch_loop.json", NULL);
	ck_assert_int_ne(lp_inline_nki(m, &err), 0);
	ck_assert_contains(err.msg, "kc: NKIKernel function 'kf' branches "
			   "between its blocks (CompareAndBranch 'kcb') and is "
			   "called inside a Loop, where a branch cannot go");
	lm_module_free(m);
}
END_TEST

/* The called and inlined forms of fixture name give the same y. */
static void inline_same(const char *name)
{
	lm_module *m = fixture(name, NULL);
	lm_module *il = lm_module_clone(m);
	ls_result rc, ri;
	lm_error err;
	ck_assert_msg(run(m, 0, &rc, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_msg(lp_inline_nki(il, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_int_eq(il->n_functions, 1);
	ck_assert_msg(run(il, 0, &ri, &err) == 0, "%s inlined: %s", name,
		      err.msg);
	ck_assert_int_eq(ri.n_kernels, 0);
	ck_assert(memcmp(out_y(&rc), out_y(&ri), 8 * sizeof(float)) == 0);
	ls_result_free(&ri);
	ls_result_free(&rc);
	lm_module_free(il);
	lm_module_free(m);
}

/*
** A branching kernel inlined at the top of a function when reached
** through a straight kernel (kbranch_outer.json: sg0000 -> kouter -> kf),
** from a branching kernel (kbranch_nested.json: kf's block kok calls kf2,
** a renamed kf), with a BranchHint naming its own block
** (kbranch_hint.json), with an early Return that signals the semaphore
** the caller's store waits for (kbranch_retsync.json: inlined, or
** refused naming the Return's sync_info); and the caller's block after
** the call takes a block argument from the cut block (kbranch_phi.json):
** its predecessor is then kc.return.
*/
START_TEST(test_inline_branching_outer)
{
	inline_same("kbranch_outer.json");
}
END_TEST

START_TEST(test_inline_branching_nested)
{
	inline_same("kbranch_nested.json");
}
END_TEST

START_TEST(test_inline_branching_hint)
{
	inline_same("kbranch_hint.json");
}
END_TEST

START_TEST(test_inline_branching_retsync)
{
	lm_error err;
	lm_module *m = fixture("kbranch_retsync.json", NULL);
	ck_assert_int_ne(lp_inline_nki(m, &err), 0);
	ck_assert_contains(err.msg, "kc: NKIKernel function 'kf': its Return "
			   "'kret1' carries sync_info, which inlining cannot "
			   "keep: lower without --inline");
	lm_module_free(m);
}
END_TEST

START_TEST(test_inline_branching_phi)
{
	lm_error err;
	lm_module *m = fixture("kbranch_phi.json", NULL);
	ck_assert_msg(lp_inline_nki(m, &err) == 0, "%s", err.msg);
	const lm_function *f = &m->functions[0];
	const lm_block *b2 = &f->blocks[f->n_blocks - 1];
	ck_assert_str_eq(b2->name, "b2");
	ck_assert_str_eq(f->blocks[f->n_blocks - 2].name, "kc.return");
	ck_assert_int_eq(b2->n_args, 1);
	ck_assert_int_eq(b2->args[0].n_incoming, 1);
	ck_assert_str_eq(b2->args[0].incoming[0].block, "kc.return");
	lm_module_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("branch");
	TCase *tc = tcase_create("branch");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_cbr_loop);
	tcase_add_test(tc, test_cbr_slices);
	tcase_add_test(tc, test_cbr_ops);
	tcase_add_test(tc, test_halt);
	tcase_add_test(tc, test_diverge);
	tcase_add_test(tc, test_runaway);
	tcase_add_test(tc, test_bad_targets);
	tcase_add_test(tc, test_branch_out_of_region);
	tcase_add_test(tc, test_cbr_refused);
	tcase_add_test(tc, test_block_args);
	tcase_add_test(tc, test_cbr_two_cores);
	tcase_add_test(tc, test_return_barrier);
	tcase_add_test(tc, test_call_again);
	tcase_add_test(tc, test_inline_branching);
	tcase_add_test(tc, test_inline_branching_outer);
	tcase_add_test(tc, test_inline_branching_nested);
	tcase_add_test(tc, test_inline_branching_hint);
	tcase_add_test(tc, test_inline_branching_retsync);
	tcase_add_test(tc, test_inline_branching_phi);
	tcase_add_test(tc, test_tensorload_trips);
	tcase_add_test(tc, test_tensorload_pair);
	tcase_add_test(tc, test_tensorload_errors);
	tcase_add_test(tc, test_tensorload_uninit);
	tcase_add_test(tc, test_regap_modes);
	tcase_add_test(tc, test_regap_oob);
	tcase_add_test(tc, test_regap_dram);
	tcase_add_test(tc, test_regap_refused);
	tcase_add_test(tc, test_tcdynamic);
	tcase_add_test(tc, test_alu64);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_loops.c -- structured loops in the simulator: static Loops run with
** their iterators (engine cursors, no copies of the body), the dependency
** rule inside loops and loop-carried dependencies, per-iteration values
** (an affine accumulation_flag, symbolic_ap addresses), Break, the
** runaway stop and what is refused. The modules are hand-made fixtures in
** the 2.24 wire form (tests/fixtures/loops/); expected values are computed
** here. Every result is also checked under perturbed schedules.
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* The fixture's module with every occurrence of a replaced by b. */
static lm_module *fixture(const char *name, const char *a, const char *b)
{
	char *p = tu_fixture("loops", name);
	char *text = tu_read(p), *t;
	lm_module *m;
	lm_error err;
	ck_assert_ptr_nonnull(text);
	t = a ? tu_replace_all(text, a, b) : lm_xstrdup(text);
	m = tu_parse(t, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	free(t);
	free(text);
	free(p);
	return m;
}

/* Inputs: tensor name -> data (float32, row-major). */
static void add_input(ls_tensors *in, const char *name, int64_t r, int64_t c,
		      const float *v)
{
	int64_t shape[2] = { r, c };
	ls_tensors_add(in, name, LM_DT_FLOAT32, shape, 2, v);
}

static const float *out_f(const ls_result *r, const char *name)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, name);
	ck_assert_msg(t != NULL, "no output %s", name);
	return (const float *)t->data;
}

/* Run m plain and under perturbed schedules 1..4; each time the output
** y must equal want (n floats, bit for bit). */
static void run_all(lm_module *m, const ls_tensors *in, const float *want,
		    int n, ls_result *plain)
{
	for (uint64_t seed = 0; seed <= 4; seed++) {
		ls_options o;
		ls_result r;
		lm_error err;
		const float *y;
		memset(&o, 0, sizeof o);
		o.perturb_seed = seed;
		ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
		ck_assert_msg(ls_run(m, in, &o, &r, &err) == 0, "seed %llu: %s",
			      (unsigned long long)seed, err.msg);
		y = out_f(&r, "y");
		for (int i = 0; i < n; i++)
			ck_assert_msg(memcmp(&y[i], &want[i], 4) == 0,
				      "seed %llu: y[%d] = %.9g, want %.9g",
				      (unsigned long long)seed, i, y[i],
				      want[i]);
		if (seed == 0 && plain)
			*plain = r;
		else
			ls_result_free(&r);
	}
}

/* ---- K-tile accumulation ------------------------------------------------ */

enum { T = 4, K = 4, M = 4, N = 8 };

/*
** A Loop k in [0, T) around one Matmult reading tile k of A and B through
** symbolic_ap addresses (k*M, k*N) and an affine accumulation_flag that
** starts the group on k = 0: C = sum over the tiles of A_k^T B_k, each
** product accumulated in the kernel's order (fmaf over the rows).
*/
START_TEST(test_matmult_k_tiles)
{
	float a[K * T * M], b[K * T * N], want[M * N];
	ls_tensors in;
	ls_result r;
	lm_module *m = fixture("kacc.json", NULL, NULL);
	for (int i = 0; i < K * T * M; i++)
		a[i] = (float)((i * 7) % 11) / 8.0f - 0.5f;
	for (int i = 0; i < K * T * N; i++)
		b[i] = (float)((i * 5) % 13) / 4.0f - 1.25f;
	for (int mi = 0; mi < M; mi++)
		for (int ni = 0; ni < N; ni++) {
			float c = 0.0f;
			for (int t = 0; t < T; t++)
				for (int k = 0; k < K; k++)
					c = fmaf(a[k * T * M + t * M + mi],
						 b[k * T * N + t * N + ni], c);
			want[mi * N + ni] = c;
		}
	memset(&in, 0, sizeof in);
	add_input(&in, "a", K, T * M, a);
	add_input(&in, "b", K, T * N, b);
	run_all(m, &in, want, M * N, &r);
	/* 2 loads, T matmuls and T back edges on PE, the copy and the store */
	ck_assert_int_eq(r.instructions, 2 + 2 * T + 2);
	ck_assert_int_eq(r.n_matmuls, T);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/*
** The same accumulation with the loads inside the body: two DMAs on SP
** whose sources are symbolic_ap operands (placed at each issue) are in
** flight together, and each writes its own destination; the Matmult on
** PE waits for its iteration's loads even when SP stands at the Loop's
** header, not yet inside, when PE reaches the Matmult (kbody_sqi: a
** SwitchQueueInstance before the loop, as the linker places one, holds SP
** back).
*/
START_TEST(test_loads_in_body)
{
	static const char *const files[] = { "kbody.json", "kbody_sqi.json" };
	float a[K * T * M], b[K * T * N], want[M * N];
	ls_tensors in;
	for (int i = 0; i < K * T * M; i++)
		a[i] = (float)((i * 7) % 11) / 8.0f - 0.5f;
	for (int i = 0; i < K * T * N; i++)
		b[i] = (float)((i * 5) % 13) / 4.0f - 1.25f;
	for (int mi = 0; mi < M; mi++)
		for (int ni = 0; ni < N; ni++) {
			float c = 0.0f;
			for (int t = 0; t < T; t++)
				for (int k = 0; k < K; k++)
					c = fmaf(a[k * T * M + t * M + mi],
						 b[k * T * N + t * N + ni], c);
			want[mi * N + ni] = c;
		}
	memset(&in, 0, sizeof in);
	add_input(&in, "a", K, T * M, a);
	add_input(&in, "b", K, T * N, b);
	for (int f = 0; f < 2; f++) {
		lm_module *m = fixture(files[f], NULL, NULL);
		run_all(m, &in, want, M * N, NULL);
		lm_module_free(m);
	}
	ls_tensors_free(&in);
}
END_TEST

/* An address that leaves the memory location at some iteration is a run
** error naming the operand, the offset and the iteration. */
START_TEST(test_symbolic_ap_out_of_bounds)
{
	float a[K * T * M] = {0}, b[K * T * N] = {0};
	ls_tensors in;
	ls_result r;
	lm_error err;
	lm_module *m = fixture("kacc.json", "\"coeff\": 8", "\"coeff\": 9");
	memset(&in, 0, sizeof in);
	add_input(&in, "a", K, T * M, a);
	add_input(&in, "b", K, T * N, b);
	ck_assert_int_eq(ls_run(m, &in, NULL, &r, &err), LM_ECHECK);
	ck_assert_msg(strstr(err.msg, "instruction mm: ins[1] symbolic_ap "
			     "'b_sb': offset 27 puts the access outside its "
			     "memory location") != NULL, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "(core 0 PE in loop 'kl' iteration 3)"),
		      "%s", err.msg);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* An accumulation_flag outside its two bits at some iteration. */
START_TEST(test_acc_flag_bounds)
{
	float a[K * T * M] = {0}, b[K * T * N] = {0};
	ls_tensors in;
	ls_result r;
	lm_error err;
	lm_module *m = fixture("kacc.json", "\"scale\": 2", "\"scale\": 4");
	memset(&in, 0, sizeof in);
	add_input(&in, "a", K, T * M, a);
	add_input(&in, "b", K, T * N, b);
	ck_assert_int_eq(ls_run(m, &in, NULL, &r, &err), LM_ECHECK);
	ck_assert_msg(strstr(err.msg, "instruction mm: accumulation_flag = 4 "
			     "is outside [0, 3] (core 0 PE in loop 'kl' "
			     "iteration 3)") != NULL, "%s", err.msg);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/*
** can_read_uninit and psum_zero_region given as expressions are evaluated
** at each issue: a copy of a never-written tile may read it (as NaN) on
** the iteration whose flag is 1 and not on the next; a psum_zero_region
** that becomes 1 on the last K tile is refused there.
*/
START_TEST(test_affine_flags_per_issue)
{
	float x[4] = {1, 2, 3, 4}, zero[K * T * N] = {0};
	ls_tensors in;
	ls_result r;
	lm_error err;
	lm_module *m = fixture("uninit.json", "\"ub\": 3", "\"ub\": 1");
	memset(&in, 0, sizeof in);
	add_input(&in, "x", 1, 4, x);
	ck_assert_msg(ls_run(m, &in, NULL, &r, &err) == 0, "%s", err.msg);
	for (int i = 0; i < 4; i++)
		ck_assert(isnan(out_f(&r, "y")[i]));
	ls_result_free(&r);
	lm_module_free(m);
	m = fixture("uninit.json", NULL, NULL);
	ck_assert_int_eq(ls_run(m, &in, NULL, &r, &err), LM_ECHECK);
	ck_assert_msg(strstr(err.msg, "instruction c: reads uninitialized "
			     "memory: ins[0] 'a_sb'") != NULL, "%s", err.msg);
	ls_tensors_free(&in);
	lm_module_free(m);
	m = fixture("kacc.json", "\"loopnest\": [", "\"psum_zero_region\": {"
		    "\"kind\": \"FloorDivKind\", \"numer\": {\"kind\": "
		    "\"AffIVKind\", \"axis\": \"k\"}, \"denom\": 3}, "
		    "\"loopnest\": [");
	memset(&in, 0, sizeof in);
	add_input(&in, "a", K, T * M, zero);
	add_input(&in, "b", K, T * N, zero);
	ck_assert_int_eq(ls_run(m, &in, NULL, &r, &err), LM_ECHECK);
	ck_assert_msg(strstr(err.msg, "instruction mm: psum_zero_region = 1 "
			     "is outside [0, 0] (core 0 PE in loop 'kl' "
			     "iteration 3)") != NULL, "%s", err.msg);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* ---- dependencies in loops ---------------------------------------------- */

enum { P = 4, F = 8 };

static void chain_input(ls_tensors *in, float *x)
{
	for (int i = 0; i < P * F; i++)
		x[i] = (float)(i % 9) / 3.0f - 1.0f;
	memset(in, 0, sizeof *in);
	add_input(in, "x", P, F, x);
}

/*
** b := a + 1 on DVE, a := b on Pool, eight iterations: the add of
** iteration i+1 waits for the copy of iteration i only through its
** loop-carried dependency. Without it DVE runs ahead and the result
** differs.
*/
START_TEST(test_loop_carried_dependency)
{
	float x[P * F], want[P * F];
	ls_tensors in;
	ls_result r;
	lm_error err;
	lm_module *m = fixture("lcdep.json", NULL, NULL);
	const float *y;
	int differs = 0;
	chain_input(&in, x);
	for (int i = 0; i < P * F; i++) {
		want[i] = x[i];
		for (int k = 0; k < 8; k++)
			want[i] = want[i] + 1.0f;
	}
	run_all(m, &in, want, P * F, &r);
	/* 1 + 8 * 2 + 1 instructions, 8 back edges on each of DVE and Pool */
	ck_assert_int_eq(r.instructions, 2 + 16 + 16);
	ls_result_free(&r);
	lm_module_free(m);
	m = fixture("lcdep.json", "\"loop_carried_dependencies\"", "\"_comment\"");
	ck_assert_int_eq(ls_run(m, &in, NULL, &r, &err), 0);
	y = out_f(&r, "y");
	for (int i = 0; i < P * F; i++)
		differs |= memcmp(&y[i], &want[i], 4) != 0;
	ck_assert_msg(differs, "the result did not depend on the loop-carried "
		      "dependency");
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* A deadlock inside a loop: the report names the iteration a dependency
** waits in. */
START_TEST(test_deadlock_in_loop)
{
	float x[P * F];
	ls_tensors in;
	ls_result r;
	lm_error err;
	lm_module *m = fixture("lcdep.json", "\"name\": \"add\",",
			       "\"name\": \"add\", \"wait\": [{\"semaphore\": "
			       "\"s_dma\", \"value\": 100}],");
	chain_input(&in, x);
	ck_assert_int_eq(ls_run(m, &in, NULL, &r, &err), LM_ECHECK);
	ck_assert_msg(strstr(err.msg, "core 0 DVE: 'add' (TensorScalar) waits "
			     "for semaphore 's_dma' >= 100 (value 1)") != NULL,
		      "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "core 0 Pool: 'cp' (TensorCopy) waits "
			     "for instruction 'add' to complete (iteration 0 "
			     "of loop 'li')") != NULL, "%s", err.msg);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/*
** Nested loops (i in [0, 6) step 2: 3 iterations) around an inner loop
** whose Break ends it after its first pass, then an all-zero axis (one
** pass): y = x + 1 + 1 + 1 + 1.
*/
START_TEST(test_nest_break_zero_axis)
{
	float x[P * F], want[P * F];
	ls_tensors in;
	ls_result r;
	lm_module *m = fixture("nest.json", NULL, NULL);
	chain_input(&in, x);
	for (int i = 0; i < P * F; i++)
		want[i] = x[i] + 1.0f + 1.0f + 1.0f + 1.0f;
	run_all(m, &in, want, P * F, &r);
	/* the Break leaves the inner loop without a back edge; the outer
	   loop has 3 on each of DVE and Pool; the zero axis none */
	ck_assert_int_eq(r.instructions, 2 + 3 * 2 + 3 * 2 + 2);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/*
** Four DMAs of one instruction in flight at once (row i of x to partition
** i of a_sb through symbolic_ap addresses); the copy after the loop
** depends on the DMA, so it waits for every iteration's transfer; the
** loads' bytes count (a symbolic operand is placed after the rest of the
** instruction, and the cost is taken again then).
*/
START_TEST(test_dma_instances_in_flight)
{
	float x[4 * 8];
	ls_tensors in;
	ls_result r;
	lm_module *m = fixture("rows.json", NULL, NULL);
	for (int i = 0; i < 32; i++)
		x[i] = (float)i * 0.5f - 3.0f;
	memset(&in, 0, sizeof in);
	add_input(&in, "x", 4, 8, x);
	run_all(m, &in, x, 32, &r);
	/* 4 DMAs and their back edges on SP, the copy, the store */
	ck_assert_int_eq(r.instructions, 4 + 4 + 2);
	/* the bytes of each symbolic_ap load are costed (a row of 8
	   float32 each time), and the store's 32 floats */
	ck_assert_int_eq(r.n_cores, 1);
	ck_assert_int_eq(r.cores[0].dma_bytes, 4 * 8 * 4 + 32 * 4);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* ---- a long loop -------------------------------------------------------- */

static long max_rss_kib(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

/*
** 10^5 iterations of a copy whose symbolic_ap address is i mod 16: the
** body is not copied (the peak RSS grows by less than 16 MiB over the
** run), every iteration runs (the instruction count), and the element
** each iteration copies ends in y.
*/
START_TEST(test_1e5_iterations)
{
	float x[16], want[16];
	ls_tensors in;
	ls_result r;
	lm_error err;
	lm_module *m = fixture("big.json", NULL, NULL);
	long before;
	for (int i = 0; i < 16; i++)
		want[i] = x[i] = (float)i * 0.25f;
	memset(&in, 0, sizeof in);
	add_input(&in, "x", 1, 16, x);
	before = max_rss_kib();
	ck_assert_msg(ls_run(m, &in, NULL, &r, &err) == 0, "%s", err.msg);
	ck_assert_msg(max_rss_kib() - before < 16 * 1024, "peak RSS grew by "
		      "%ld KiB", max_rss_kib() - before);
	ck_assert_int_eq(r.instructions, 2 + 100000 + 100000);
	for (int i = 0; i < 16; i++)
		ck_assert_msg(out_f(&r, "y")[i] == want[i], "y[%d]", i);
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* --max-instructions stops a long loop, naming the loop and iteration;
** the back edges count. */
START_TEST(test_max_instructions_in_loop)
{
	float x[16] = {0};
	ls_tensors in;
	ls_options o;
	ls_result r;
	lm_error err;
	lm_module *m = fixture("big.json", NULL, NULL);
	memset(&in, 0, sizeof in);
	add_input(&in, "x", 1, 16, x);
	memset(&o, 0, sizeof o);
	o.max_instructions = 1000;
	ck_assert_int_eq(ls_run(m, &in, &o, &r, &err), LM_ECHECK);
	ck_assert_msg(strstr(err.msg, "core 0/function sg0000/instruction "
			     "big: more than 1000 instructions executed "
			     "(--max-instructions) at t=") != NULL, "%s",
		      err.msg);
	ck_assert_msg(strstr(err.msg, " ps (core 0 DVE in loop 'big' "
			     "iteration 499)") != NULL, "%s", err.msg);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* ---- refused ------------------------------------------------------------ */

/* Refused before time 0, with the verifier's rule where it has one. */
START_TEST(test_refused)
{
	static const struct {
		const char *a, *b, *verify, *run;
	} cases[] = {
		{ "\"ub\": 4,", "\"ub\": -1,",
		  "Loop 'kl' axis 'k': lb 0, ub -1, stride 1: negative trip "
		  "count",
		  "instruction kl: opcode 'Loop' key 'LoopAxis' = {\"lb\":0,"
		  "\"ub\":-1,\"stride\":1} is not modelled by the simulator "
		  "(negative trip count)" },
		{ "\"isBasicBlock\": true", "\"isParallel\": true", NULL,
		  "instruction kl: opcode 'Loop' key 'isParallel' = true is "
		  "not modelled by the simulator (it models only false)" },
		{ "\"opcode\": \"TensorCopy\"", "\"opcode\": \"Return\", "
		  "\"_x\": \"TensorCopy\"", NULL,
		  "Return" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		lm_module *m = fixture(i < 2 ? "kacc.json" : "nest.json",
				       cases[i].a, cases[i].b);
		ls_result r;
		lm_error err;
		if (cases[i].verify) {
			ck_assert_int_ne(lm_verify(m, NULL, &err), 0);
			ck_assert_msg(strstr(err.msg, cases[i].verify), "%s",
				      err.msg);
		}
		ck_assert_int_eq(ls_run(m, NULL, NULL, &r, &err), LM_EINPUT);
		ck_assert_msg(strstr(err.msg, cases[i].run), "%zu: %s", i,
			      err.msg);
		lm_module_free(m);
	}
}
END_TEST

/*
** An engine that waits at a Loop header and then passes the loop without
** issuing anything (an inner loop of no trips, or the end of its stream)
** closes the wait there: its dependency wait is the same whatever the
** outer trip count, and every engine's five parts add up to the run.
*/
static void check_parts(const ls_result *r)
{
	for (int i = 0; i < r->n_cores; i++) {
		const ls_core_stats *c = &r->cores[i];
		for (int e = 0; e < LS_ENGINES; e++) {
			ck_assert_int_ge(c->idle_ps[e], 0);
			ck_assert_int_eq(c->busy_ps[e] + c->wait_sem_ps[e] +
					 c->wait_barrier_ps[e] +
					 c->wait_dep_ps[e] + c->idle_ps[e],
					 r->sim_time_ps);
		}
	}
}

/* Pool's index in the statistics (PE, ACT, DVE, POOL, SP). */
enum { POOL = 3 };

/* ls_run of m on inputs made from seed 1. */
static int run_seeded(lm_module *m, ls_result *r, lm_error *err)
{
	ls_tensors in;
	memset(&in, 0, sizeof in);
	int rc = ls_make_inputs(&m, 1, NULL, 1, &in, err);
	if (!rc)
		rc = ls_run(m, &in, NULL, r, err);
	ls_tensors_free(&in);
	return rc;
}

START_TEST(test_waits_at_loop_headers)
{
	static const char *const trips[] = { "\"ub\": 1,", "\"ub\": 1000,",
					     "\"ub\": 4000," };
	int64_t dep = -1;
	for (int i = 0; i < 4; i++) {
		lm_module *m = i < 3
			? fixture("hdrwait.json", "\"ub\": 1000,", trips[i])
			: fixture("hdrwait_end.json", NULL, NULL);
		ls_result r;
		lm_error err;
		ck_assert_msg(run_seeded(m, &r, &err) == 0, "%s",
			      err.msg);
		check_parts(&r);
		ck_assert_int_gt(r.cores[0].wait_dep_ps[POOL], 0);
		if (dep < 0)
			dep = r.cores[0].wait_dep_ps[POOL];
		ck_assert_int_eq(r.cores[0].wait_dep_ps[POOL], dep);
		ls_result_free(&r);
		lm_module_free(m);
	}
}
END_TEST

/*
** An affine accumulation_flag's start bit holds on the path that
** accumulates straight into PSUM too: with the accumulator written before
** the loop (a Memset), the first tile still starts from zero, so the
** result equals the one of the plain K-tile loop.
*/
START_TEST(test_k_tiles_over_written_psum)
{
	ls_result a, b;
	lm_error err;
	ls_tensors in;
	float av[K * T * M], bv[K * T * N];
	lm_module *m = fixture("kacc.json", NULL, NULL);
	lm_module *p = fixture("kacc_pre.json", NULL, NULL);
	for (int i = 0; i < K * T * M; i++)
		av[i] = (float)((i * 7) % 11) / 8.0f - 0.5f;
	for (int i = 0; i < K * T * N; i++)
		bv[i] = (float)((i * 5) % 13) / 4.0f - 1.25f;
	memset(&in, 0, sizeof in);
	add_input(&in, "a", K, T * M, av);
	add_input(&in, "b", K, T * N, bv);
	ck_assert_msg(ls_run(m, &in, NULL, &a, &err) == 0, "%s", err.msg);
	ck_assert_msg(ls_run(p, &in, NULL, &b, &err) == 0, "%s", err.msg);
	const float *x = out_f(&a, "y"), *y = out_f(&b, "y");
	for (int i = 0; i < M * N; i++)
		ck_assert_msg(memcmp(&x[i], &y[i], 4) == 0, "y[%d] = %.9g over "
			      "a written accumulator, %.9g without", i, y[i],
			      x[i]);
	ls_result_free(&a);
	ls_result_free(&b);
	ls_tensors_free(&in);
	lm_module_free(m);
	lm_module_free(p);
}
END_TEST

/* A wait or update on a Loop or a Break is refused (nothing would wait or
** post), and a loop-carried dependency of a Loop header from outside the
** loop is the run error it is on any other instruction. */
START_TEST(test_refused_at_headers)
{
	static const struct { const char *file, *msg; } cases[] = {
		{ "loopwait.json", "opcode 'Loop' key 'sync_info' = "
		  "{\"on_wait\":" },
		{ "breakwait.json", "opcode 'Break' key 'sync_info' = "
		  "{\"on_wait\":" },
		{ "lc_hdr.json", "instruction li: loop-carried dependency on "
		  "'ld' outside a common loop is not modelled" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		lm_module *m = fixture(cases[i].file, NULL, NULL);
		ls_result r;
		lm_error err;
		ck_assert_int_ne(run_seeded(m, &r, &err), 0);
		ck_assert_msg(strstr(err.msg, cases[i].msg), "%s: %s",
			      cases[i].file, err.msg);
		lm_module_free(m);
	}
	/* the same update on a Loop, not only a wait */
	ls_result r;
	lm_error err;
	char *path = tu_fixture("loops", "loopwait.json");
	char *text = tu_read(path);
	char *t1 = tu_replace_all(text, "\"on_wait\"", "\"on_update\"");
	char *t2 = tu_replace_all(t1, "sem-ge-imm", "sem-inc");
	char *t3 = tu_replace_all(t2, "\"value\": 100", "\"value\": 1");
	lm_module *m = tu_parse(t3, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	free(path);
	free(text);
	free(t1);
	free(t2);
	free(t3);
	int rc = run_seeded(m, &r, &err);
	if (rc == 0)
		ls_result_free(&r);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(err.msg, "opcode 'Loop' key 'sync_info'"), "%s",
		      err.msg);
	lm_module_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("loops");
	TCase *tc = tcase_create("loops");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_matmult_k_tiles);
	tcase_add_test(tc, test_loads_in_body);
	tcase_add_test(tc, test_symbolic_ap_out_of_bounds);
	tcase_add_test(tc, test_acc_flag_bounds);
	tcase_add_test(tc, test_affine_flags_per_issue);
	tcase_add_test(tc, test_loop_carried_dependency);
	tcase_add_test(tc, test_deadlock_in_loop);
	tcase_add_test(tc, test_nest_break_zero_axis);
	tcase_add_test(tc, test_dma_instances_in_flight);
	tcase_add_test(tc, test_max_instructions_in_loop);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_waits_at_loop_headers);
	tcase_add_test(tc, test_k_tiles_over_written_psum);
	tcase_add_test(tc, test_refused_at_headers);
	suite_add_tcase(s, tc);
	tc = tcase_create("long");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_1e5_iterations);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** bench_dbmm.c -- a double-buffered matmul loop synchronized by
** semaphores, through ls_run, against OpenBLAS cblas_sgemm on the same
** shape in the same run.
**
** The module (one core, written in the wire form and parsed): C[M][N] =
** A^T B, A [K][M] and B [K][N] in DRAM, M = 256, N = 1024, K = 128 T.
** A Loop j in [0, T/2) holds two halves, one per SBUF buffer h = 0, 1;
** half h of iteration j works on K tile t = 2j + h:
**
**   SP   EventSemaphore  wait empty_h >= 1, then empty_h - 1
**   SP   DMACopy A tile t -> a_sb_h, then full_h + 1
**   SP   DMACopy B tile t -> b_sb_h, then full_h + 1
**   PE   4 Matmults a_sb_h[:, 128 m] x b_sb_h[:, 512 n] into PSUM bank
**        2m + n, the start bit on tile 0, the stop bit on tile T-1; the
**        first waits full_h >= 2, the last then does full_h - 2 and
**        empty_h + 1
**
** No dependency orders the loop: the engines go round their own parts
** of the body, SP loading tile t+1 into one buffer while PE multiplies
** tile t out of the other, held apart only by the four semaphores (the
** post-synchronizer form). After the loop DVE copies the four banks to
** SBUF and SP stores the result (these by dependencies). The result is
** compared bit for bit with a plain C k-ordered fmaf product, and one
** run with the race detector must find no race, so the figures cannot
** come from a wrong program.
**
** Printed: host seconds of ls_run (thread CPU time, its preparation
** included), 2 M N K / those seconds, single-threaded sgemm GFLOP/s on
** the same shape, their ratio (goal >= 0.6), the simulated time and PE
** utilization; float32 and bfloat16 operands (sgemm is float32 in both
** ratios). Best of interleaved rounds.
**
** Usage: bench_dbmm [T]   (K tiles of 128, even, 4..1024; default 16)
*/
#include "common.h"
#include "module.h"
#include "verify.h"
#include "sim.h"
#include "dtype.h"
#include "blascpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef LNCSIM_BENCH_OPENBLAS
#include <cblas.h>
#endif

enum { M_ = 256, N_ = 1024, KT = 128, MT = 128, NT = 512 };

/* CPU seconds of this thread (sgemm runs single-threaded in it too). */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *msg)
{
	fprintf(stderr, "bench_dbmm: %s\n", msg);
	exit(1);
}

/* ---- the module ----------------------------------------------------------- */

/* An allocation with one memory location [rows, row_bytes], after a
** comma unless it is the list's first. */
static void alloc(lm_buf *b, const char *name, const char *kind,
		  const char *dt, const char *mem, int64_t addr, int rows,
		  int cols, int es, int bank)
{
	lm_buf_printf(b, "%s{\"name\":\"%s\",\"kind\":\"%s\",\"dtype\":\"%s\","
		      "\"tensor_shape\":[%d,%d],\"addr_space\":\"Shared\","
		      "\"file\":\"\",\"memorylocations\":[{\"name\":\"%s\","
		      "\"type\":\"%s\",\"addr\":%lld,\"dims\":[%d,%d],\"bank\":%d,"
		      "\"base\":0,\"allocated\":true}]}",
		      b->ptr[b->size - 1] == '[' ? "" : ",", name, kind, dt, rows,
		      cols, name, mem, (long long)addr, rows, cols * es, bank);
}

/* A physical_ap [[stride, parts], [1, n]] from element offset off. */
static void ap(lm_buf *b, const char *name, const char *dt, int stride,
	       int parts, int n, int64_t off)
{
	lm_buf_printf(b, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
		      "\"memref\":\"%s\",\"offset\":%lld,\"ap\":[[%d,%d],[1,%d]],"
		      "\"dtype\":\"%s\"}", name, name, (long long)off, stride,
		      parts, n, dt);
}

/* A symbolic_ap [[cols, KT], [1, cols]] of a DRAM operand [K][cols] at
** K tile 2j + h: element offset (2j + h) KT cols. */
static void tile_ap(lm_buf *b, const char *name, const char *dt, int cols,
		    int h)
{
	int64_t step = (int64_t)KT * cols;
	lm_buf_printf(b, "{\"kind\":\"symbolic_ap\",\"memsetref\":\"%s\","
		      "\"memref\":\"%s\",\"ap\":[[%d,%d],[1,%d]],\"dtype\":\"%s\","
		      "\"addrs\":[{\"kind\":\"AffExprKind\",\"terms\":[{\"idx\":"
		      "{\"kind\":\"AffIVKind\",\"axis\":\"j\"},\"coeff\":%lld}],"
		      "\"c\":%lld}]}", name, name, cols, KT, cols, dt,
		      (long long)(2 * step), (long long)(h * step));
}

/* One semaphore entry of a sync_info list. */
static void sem(lm_buf *b, int first, const char *mode, const char *name,
		int h, int value)
{
	lm_buf_printf(b, "%s{\"semaphore\":\"%s%d\",\"mode\":\"%s\","
		      "\"value\":%d}", first ? "" : ",", name, h, mode, value);
}

/*
** The Matmult's accumulation_flag over j in [0, J) for half h: the start
** bit (1) on j = 0 of half 0, the stop bit (2) on j = J-1 of half 1:
** (J-1-j) floordiv (J-1) and 2 (j floordiv (J-1)).
*/
static void acc_flag(lm_buf *b, int h, int J)
{
	if (h == 0)
		lm_buf_printf(b, "{\"kind\":\"FloorDivKind\",\"numer\":{\"kind\":"
			      "\"AffExprKind\",\"terms\":[{\"idx\":{\"kind\":"
			      "\"AffIVKind\",\"axis\":\"j\"},\"coeff\":-1}],"
			      "\"c\":%d},\"denom\":%d}", J - 1, J - 1);
	else
		lm_buf_printf(b, "{\"kind\":\"MultKind\",\"var\":{\"kind\":"
			      "\"FloorDivKind\",\"numer\":{\"kind\":\"AffIVKind\","
			      "\"axis\":\"j\"},\"denom\":%d},\"scale\":2}", J - 1);
}

/* DMACopy NAMEh: K tile 2j + h of DRAM operand dram [K][cols] into its
** buffer dram_sb<h>, then full_h + 1. */
static void dma(lm_buf *b, const char *name, const char *dram,
		const char *dt, int cols, int h)
{
	lm_buf_printf(b, ",{\"opcode\":\"DMACopy\",\"name\":\"%s%d\","
		      "\"engine\":\"SP\",\"queue\":\"q0\",\"ins\":[", name, h);
	tile_ap(b, dram, dt, cols, h);
	lm_buf_puts(b, "],\"outs\":[");
	lm_buf_printf(b, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s_sb%d\","
		      "\"memref\":\"%s_sb%d\",\"offset\":0,\"ap\":[[%d,%d],"
		      "[1,%d]],\"dtype\":\"%s\"}", dram, h, dram, h, cols, KT,
		      cols, dt);
	lm_buf_puts(b, "],\"sync_info\":{\"on_update\":[");
	sem(b, 1, "sem-inc", "full", h, 1);
	lm_buf_puts(b, "]}}");
}

/* The module for T K tiles of dtype dt ("float32", "bfloat16"). */
static lm_module *dbmm_module(const char *dt, int T)
{
	lm_buf b = LM_BUF_INIT;
	int es = strcmp(dt, "float32") == 0 ? 4 : 2, J = T / 2;
	int64_t K = (int64_t)KT * T, a_bytes = K * M_ * es;
	int64_t b_bytes = K * N_ * es;
	lm_module *m;
	lm_error err;

	lm_buf_puts(&b, "{\"version\":2,\"arch\":\"gen3\",\"name\":\"dbmm\","
		    "\"attributes\":{\"neuron_core_id\":0},\"semaphores\":["
		    "{\"name\":\"s_dma\",\"init\":0},"
		    "{\"name\":\"full0\",\"init\":0},{\"name\":\"full1\",\"init\":0},"
		    "{\"name\":\"empty0\",\"init\":1},"
		    "{\"name\":\"empty1\",\"init\":1}],"
		    "\"queues\":[{\"name\":\"q0\",\"instances\":[{\"name\":"
		    "\"q0a\",\"semaphore\":\"s_dma\"}]}],"
		    "\"functions\":[{\"name\":\"sg0000\",\"attributes\":[],"
		    "\"allocations\":[");
	alloc(&b, "a", "ExternalInput", dt, "DRAM", 0, (int)K, M_, es, 0);
	alloc(&b, "b", "ExternalInput", dt, "DRAM", a_bytes, (int)K, N_, es,
	      0);
	alloc(&b, "y", "ExternalOutput", "float32", "DRAM", a_bytes + b_bytes,
	      M_, N_, 4, 0);
	for (int h = 0; h < 2; h++) {
		char an[16], bn[16];
		snprintf(an, sizeof an, "a_sb%d", h);
		snprintf(bn, sizeof bn, "b_sb%d", h);
		alloc(&b, an, "Internal", dt, "SB",
		      (int64_t)h * (M_ + N_) * es, KT, M_, es, 0);
		alloc(&b, bn, "Internal", dt, "SB",
		      (int64_t)h * (M_ + N_) * es + M_ * es, KT, N_, es, 0);
	}
	alloc(&b, "y_sb", "Internal", "float32", "SB",
	      (int64_t)2 * (M_ + N_) * es, MT, 2 * N_, 4, 0);
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "acc%d", i);
		alloc(&b, name, "Internal", "float32", "PSUM", i * NT * 4, MT,
		      NT, 4, i);
	}
	lm_buf_printf(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":["
		      "{\"opcode\":\"Loop\",\"name\":\"kl\",\"engine\":\"PE\","
		      "\"ins\":[],\"outs\":[],\"LoopAxis\":{\"name\":\"j\","
		      "\"lb\":0,\"ub\":%d,\"stride\":1},\"isBasicBlock\":true,"
		      "\"unroll\":1,\"blocks\":[{\"name\":\"kl_body\","
		      "\"instructions\":[", J);
	for (int h = 0; h < 2; h++) {
		lm_buf_printf(&b, "%s{\"opcode\":\"EventSemaphore\",\"name\":"
			      "\"acq%d\",\"engine\":\"SP\",\"ins\":[],\"outs\":[],"
			      "\"sync_info\":{\"on_wait\":[", h ? "," : "", h);
		sem(&b, 1, "sem-ge-imm", "empty", h, 1);
		lm_buf_puts(&b, "],\"on_update\":[");
		sem(&b, 1, "sem-dec", "empty", h, 1);
		lm_buf_puts(&b, "]}}");
		dma(&b, "lda", "a", dt, M_, h);
		dma(&b, "ldb", "b", dt, N_, h);
		for (int i = 0; i < 4; i++) {
			int mt = i / 2, nt = i % 2;
			char an[16], bn[16], cn[16];
			snprintf(an, sizeof an, "a_sb%d", h);
			snprintf(bn, sizeof bn, "b_sb%d", h);
			snprintf(cn, sizeof cn, "acc%d", i);
			lm_buf_printf(&b, ",{\"opcode\":\"Matmult\",\"name\":"
				      "\"mm%d%d\",\"engine\":\"PE\",\"ins\":[",
				      h, i);
			ap(&b, an, dt, M_, KT, MT, mt * MT);
			lm_buf_puts(&b, ",");
			ap(&b, bn, dt, N_, KT, NT, nt * NT);
			lm_buf_puts(&b, "],\"outs\":[");
			ap(&b, cn, "float32", NT, MT, NT, 0);
			lm_buf_puts(&b, "],\"accumulation_flag\":");
			acc_flag(&b, h, J);
			if (i == 0) {
				lm_buf_puts(&b, ",\"sync_info\":{\"on_wait\":[");
				sem(&b, 1, "sem-ge-imm", "full", h, 2);
				lm_buf_puts(&b, "]}");
			} else if (i == 3) {
				lm_buf_puts(&b, ",\"sync_info\":{\"on_update\":[");
				sem(&b, 1, "sem-sub-imm", "full", h, 2);
				sem(&b, 0, "sem-inc", "empty", h, 1);
				lm_buf_puts(&b, "]}");
			}
			lm_buf_puts(&b, ",\"loopnest\":[\"j\"]}");
		}
	}
	lm_buf_puts(&b, "]}]}");
	/* the epilogue: PSUM -> SBUF -> DRAM */
	for (int i = 0; i < 4; i++) {
		int mt = i / 2, nt = i % 2;
		char cn[16];
		snprintf(cn, sizeof cn, "acc%d", i);
		lm_buf_printf(&b, ",{\"opcode\":\"TensorCopy\",\"name\":\"cp%d\","
			      "\"engine\":\"DVE\",\"dependencies\":[[\"mm1%d\","
			      "\"Flow\"]],\"ins\":[", i, i);
		ap(&b, cn, "float32", NT, MT, NT, 0);
		lm_buf_puts(&b, "],\"outs\":[");
		ap(&b, "y_sb", "float32", 2 * N_, MT, NT, mt * N_ + nt * NT);
		lm_buf_puts(&b, "]}");
	}
	for (int mt = 0; mt < 2; mt++) {
		lm_buf_printf(&b, ",{\"opcode\":\"DMACopy\",\"name\":\"st%d\","
			      "\"engine\":\"SP\",\"queue\":\"q0\",\"dependencies\":"
			      "[[\"cp%d\",\"Flow\"],[\"cp%d\",\"Flow\"]],\"ins\":[",
			      mt, 2 * mt, 2 * mt + 1);
		ap(&b, "y_sb", "float32", 2 * N_, MT, N_, mt * N_);
		lm_buf_puts(&b, "],\"outs\":[");
		ap(&b, "y", "float32", N_, MT, N_, (int64_t)mt * MT * N_);
		lm_buf_puts(&b, "]}");
	}
	lm_buf_puts(&b, "]}]}]}");
	if (lm_module_parse(&m, b.ptr, b.size, "dbmm.json", &err) ||
	    lm_verify(m, NULL, &err))
		die(err.msg);
	lm_buf_free(&b);
	return m;
}

/* ---- data and the reference ------------------------------------------------ */

/* Deterministic values in [-1, 1) with few mantissa bits (exact in
** bfloat16, so both dtypes multiply the same numbers). */
static void fill(float *p, int64_t n, uint32_t seed)
{
	uint32_t x = seed;
	for (int64_t i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		p[i] = (float)((int)(x >> 24) - 128) / 128.0f;
	}
}

/* c[m][n] = fmaf(a[k][m], b[k][n], c) for k = 0..K-1 in order, from 0:
** what the Matmults compute, tile after tile in one PSUM chain. */
#define REFERENCE_BODY							\
	memset(c, 0, sizeof(float) * M_ * N_);				\
	for (int m = 0; m < M_; m++) {					\
		float *cr = c + (int64_t)m * N_;			\
		for (int64_t k = 0; k < K; k++) {			\
			float av = a[k * M_ + m];			\
			const float *br = b + k * N_;			\
			for (int n = 0; n < N_; n++)			\
				cr[n] = fmaf(av, br[n], cr[n]);		\
		}							\
	}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same with fmaf an instruction (the FMA of the CPU, not a libm call):
** the same rounding, many times faster. */
__attribute__((target("fma")))
static void reference_fma(const float *a, const float *b, float *c, int64_t K)
{
	REFERENCE_BODY
}
#endif

static void reference(const float *a, const float *b, float *c, int64_t K)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (bench_cpu_has("fma")) {
		reference_fma(a, b, c, K);
		return;
	}
#endif
	REFERENCE_BODY
}

/* The host inputs a and b of dtype dt from the float32 values. */
static void make_inputs(ls_tensors *in, const char *dt, const float *a,
			const float *b, int64_t K)
{
	int64_t sa[2] = { K, M_ }, sb[2] = { K, N_ };
	if (strcmp(dt, "float32") == 0) {
		ls_tensors_add(in, "a", LM_DT_FLOAT32, sa, 2, a);
		ls_tensors_add(in, "b", LM_DT_FLOAT32, sb, 2, b);
		return;
	}
	uint16_t *ha = malloc(sizeof(uint16_t) * K * M_);
	uint16_t *hb = malloc(sizeof(uint16_t) * K * N_);
	if (!ha || !hb)
		die("out of memory");
	for (int64_t i = 0; i < K * M_; i++)
		ha[i] = lm_f32_to_bf16(a[i]);
	for (int64_t i = 0; i < K * N_; i++)
		hb[i] = lm_f32_to_bf16(b[i]);
	ls_tensors_add(in, "a", LM_DT_BFLOAT16, sa, 2, ha);
	ls_tensors_add(in, "b", LM_DT_BFLOAT16, sb, 2, hb);
	free(ha);
	free(hb);
}

/* ---- runs ------------------------------------------------------------------ */

/* One ls_run (race: with the race detector); its thread CPU seconds. */
static double run(const lm_module *m, const ls_tensors *in, int race,
		  ls_result *r)
{
	ls_options o = { 0 };
	lm_error err;
	double t;
	o.race = race;
	t = now();
	if (ls_run(m, in, &o, r, &err))
		die(err.msg);
	return now() - t;
}

/* Stop unless the run's output y equals the reference bit for bit. */
static void check(const ls_result *r, const float *ref, const char *dt)
{
	const ls_tensor *y = ls_tensors_find(&r->outputs, "y");
	int64_t bad = 0;
	float worst = 0;
	if (!y || y->dtype != LM_DT_FLOAT32 || y->count != (int64_t)M_ * N_)
		die("the run has no float32 output y of M x N");
	for (int64_t i = 0; i < y->count; i++) {
		float v = ((const float *)y->data)[i];
		if (memcmp(&v, &ref[i], sizeof v) != 0) {
			bad++;
			if (fabsf(v - ref[i]) > worst || isnan(v))
				worst = isnan(v) ? INFINITY : fabsf(v - ref[i]);
		}
	}
	if (bad) {
		fprintf(stderr, "bench_dbmm: %s: %lld of %d outputs differ from "
			"the reference (largest difference %g)\n", dt,
			(long long)bad, M_ * N_, (double)worst);
		exit(1);
	}
}

#ifdef LNCSIM_BENCH_OPENBLAS
/* Seconds of one sgemm C = A^T B on the float32 operands. */
static double time_sgemm(const float *a, const float *b, float *c,
			 int64_t K)
{
	double t = now();
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M_, N_, (int)K,
		    1.0f, a, M_, b, N_, 0.0f, c, N_);
	return now() - t;
}
#endif

static void keep_min(double *best, double t)
{
	if (t < *best)
		*best = t;
}

int main(int argc, char **argv)
{
	enum { ROUNDS = 5 };
	const char *dts[2] = { "float32", "bfloat16" };
	int T = argc > 1 ? atoi(argv[1]) : 16;
	int64_t K;
	double flop, sim_s[2] = { 1e30, 1e30 }, blas = 1e30;
	double sim_us[2] = { 0, 0 }, pe_util[2] = { 0, 0 }, mac_util[2] = { 0, 0 };
	float *a, *b, *ref, *c;
	lm_module *mods[2];
	ls_tensors ins[2] = { { 0, NULL }, { 0, NULL } };
	char model[256];

	if (T < 4 || T % 2 || T > 1024) {
		fprintf(stderr, "usage: bench_dbmm [T: K tiles of 128, even, "
			"4..1024]\n");
		return 2;
	}
#ifdef LNCSIM_BENCH_OPENBLAS
	bench_fix_openblas_coretype("bench_dbmm", argv);
	openblas_set_num_threads(1);
#endif
	K = (int64_t)KT * T;
	flop = 2.0 * M_ * N_ * (double)K;
	bench_cpu_model(model, sizeof model);
	printf("cpu: %s (avx2 %s, fma %s, avx512f %s)\n", model,
	       bench_cpu_has("avx2") ? "yes" : "no",
	       bench_cpu_has("fma") ? "yes" : "no",
	       bench_cpu_has("avx512f") ? "yes" : "no");
	a = malloc(sizeof(float) * K * M_);
	b = malloc(sizeof(float) * K * N_);
	ref = malloc(sizeof(float) * M_ * N_);
	c = malloc(sizeof(float) * M_ * N_);
	if (!a || !b || !ref || !c)
		die("out of memory");
	fill(a, K * M_, 1);
	fill(b, K * N_, 2);
	reference(a, b, ref, K);

	/* correctness first: the result, and no race in the schedule */
	for (int d = 0; d < 2; d++) {
		ls_result r;
		mods[d] = dbmm_module(dts[d], T);
		make_inputs(&ins[d], dts[d], a, b, K);
		run(mods[d], &ins[d], 1, &r);
		check(&r, ref, dts[d]);
		if (r.races_found) {
			lm_buf rb = LM_BUF_INIT;
			ls_race_format(&r.races[0], &rb);
			fprintf(stderr, "bench_dbmm: %s: %lld races, first: "
				"%s\n", dts[d], (long long)r.races_found, rb.ptr);
			exit(1);
		}
		ls_result_free(&r);
	}
	/* interleaved rounds, best of each: a busy machine slows all alike */
	for (int round = 0; round < ROUNDS; round++) {
		for (int d = 0; d < 2; d++) {
			ls_result r;
			keep_min(&sim_s[d], run(mods[d], &ins[d], 0, &r));
			if (round == 0) {
				check(&r, ref, dts[d]);
				sim_us[d] = (double)r.sim_time_ps * 1e-6;
				pe_util[d] = r.cores[0].pe_util;
				mac_util[d] = r.cores[0].mac_util;
			}
			ls_result_free(&r);
		}
#ifdef LNCSIM_BENCH_OPENBLAS
		keep_min(&blas, time_sgemm(a, b, c, K));
#endif
	}
	printf("C[%d x %d] = A^T B, K = %lld in %d double-buffered tiles of "
	       "%d (%d Matmults, semaphores), thread CPU time, best of %d "
	       "interleaved rounds; output bit-exact, no race\n", M_, N_,
	       (long long)K, T, KT, 4 * T, ROUNDS);
	for (int d = 0; d < 2; d++)
		printf("%-8s ls_run: %.4f host s, %7.2f simulated GFLOP/s; "
		       "simulated %.2f us, PE busy %.1f %%, MAC array %.1f %%\n",
		       dts[d], sim_s[d], flop / sim_s[d] / 1e9, sim_us[d],
		       100 * pe_util[d], 100 * mac_util[d]);
#ifdef LNCSIM_BENCH_OPENBLAS
	printf("OpenBLAS sgemm, 1 thread: %.4f s, %7.2f GFLOP/s (core %s%s)\n",
	       blas, flop / blas / 1e9, openblas_get_corename(),
	       getenv("OPENBLAS_CORETYPE") ? ", OPENBLAS_CORETYPE set" : "");
	for (int d = 0; d < 2; d++)
		printf("ratio %-8s ls_run / OpenBLAS sgemm: %5.2f (goal >= 0.6)"
		       "\n", dts[d], blas / sim_s[d]);
#else
	(void)blas;
	(void)c;
	printf("OpenBLAS not found at configure time: no anchor, no ratio.\n"
	       "  Install it (Debian: apt-get install libopenblas-dev), then "
	       "run ./configure and make bench again.\n");
#endif
	for (int d = 0; d < 2; d++) {
		lm_module_free(mods[d]);
		ls_tensors_free(&ins[d]);
	}
	free(a);
	free(b);
	free(ref);
	free(c);
	return 0;
}

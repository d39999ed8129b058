/*
** bench_mm.c -- Matmult emulation against OpenBLAS cblas_sgemm, measured
** in one run on the same shape (K = 128, M = 128, N = 512; a fresh
** accumulator every fourth product, as a PSUM bank is used):
**   1. the kernel alone (ls_mm_kernel_src over float32 and bfloat16
**      operands, one accumulator), next to sgemm;
**   2. Matmults through ls_run (the simulator's whole Matmult path:
**      operands read in place, the accumulator read and written back),
**      next to sgemm.
** Goal: each ratio >= 0.9 with the exact k-ordered fmaf result.
**
** The CPU and the OpenBLAS kernel family are printed with the figures
** (blascpu.c chooses the family).
**
** Usage: bench_mm [N_MATMULS]
*/
#include "common.h"
#include "module.h"
#include "verify.h"
#include "sim.h"
#include "sim_int.h"
#include "dtype.h"
#include "blascpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef LNCSIM_BENCH_OPENBLAS
#include <cblas.h>
#endif

enum { K_ = 128, M_ = 128, N_ = 512 };

/* CPU seconds of this thread: time the machine gave to others does not
** count (sgemm runs single-threaded in this thread too). */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the anchor ------------------------------------------------------------ */

static void fill(float *p, int n, int mod, float scale)
{
	for (int i = 0; i < n; i++)
		p[i] = (float)(i % mod) * scale - 0.3f;
}

#ifdef LNCSIM_BENCH_OPENBLAS
/* Seconds of n sgemms C[M][N] (+)= A^T B, A [K][M], B [K][N]. */
static double time_sgemm(int n)
{
	float *a = malloc(sizeof(float) * K_ * M_);
	float *b = malloc(sizeof(float) * K_ * N_);
	float *c = calloc((size_t)M_ * N_, sizeof(float));
	double t0, t;
	fill(a, K_ * M_, 97, 0.01f);
	fill(b, K_ * N_, 89, 0.02f);
	openblas_set_num_threads(1);
	t0 = now();
	for (int i = 0; i < n; i++)
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M_, N_, K_,
			    1.0f, a, M_, b, N_, i % 4 ? 1.0f : 0.0f, c, N_);
	t = now() - t0;
	free(a);
	free(b);
	free(c);
	return t;
}
#endif

/* ---- the kernel alone ------------------------------------------------------- */

/* Seconds of n kernel calls (bf16: bfloat16 operands). */
static double time_kernel(int n, int bf16)
{
	size_t es = bf16 ? 2 : 4;
	float *a = malloc(sizeof(float) * K_ * M_);
	float *b = malloc(sizeof(float) * K_ * N_);
	void *ra = malloc(es * K_ * M_), *rb = malloc(es * K_ * N_);
	float *c = calloc((size_t)M_ * N_, sizeof(float));
	ls_mm_src sa, sb;
	double t0, t;
	fill(a, K_ * M_, 97, 0.01f);
	fill(b, K_ * N_, 89, 0.02f);
	if (bf16) {
		for (int i = 0; i < K_ * M_; i++)
			((uint16_t *)ra)[i] = lm_f32_to_bf16(a[i]);
		for (int i = 0; i < K_ * N_; i++)
			((uint16_t *)rb)[i] = lm_f32_to_bf16(b[i]);
	} else {
		memcpy(ra, a, es * K_ * M_);
		memcpy(rb, b, es * K_ * N_);
	}
	sa = (ls_mm_src){ ra, M_, bf16 };
	sb = (ls_mm_src){ rb, N_, bf16 };
	t0 = now();
	for (int i = 0; i < n; i++) {
		if (i % 4 == 0)
			memset(c, 0, sizeof(float) * M_ * N_);
		ls_mm_kernel_src(K_, M_, N_, &sa, &sb, c);
	}
	t = now() - t0;
	free(a);
	free(b);
	free(ra);
	free(rb);
	free(c);
	return t;
}

/* ---- through ls_run --------------------------------------------------------- */

static void sb_alloc(lm_buf *b, const char *name, const char *dt, int parts,
		     int bytes, int addr, int first)
{
	lm_buf_printf(b, "%s{\"name\":\"%s\",\"kind\":\"Internal\",\"dtype\":"
		      "\"%s\",\"tensor_shape\":[%d,%d],\"memorylocations\":[{"
		      "\"name\":\"%s\",\"type\":\"SB\",\"addr\":%d,\"dims\":[%d,%d],"
		      "\"bank\":0,\"base\":0,\"allocated\":true}]}",
		      first ? "" : ",", name, dt, parts, bytes, name, addr, parts,
		      bytes);
}

static void ap(lm_buf *b, const char *name, const char *dt, int parts,
	       int free)
{
	lm_buf_printf(b, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
		      "\"memref\":\"%s\",\"offset\":0,\"ap\":[[%d,%d],[1,%d]],"
		      "\"dtype\":\"%s\"}", name, name, free, parts, free, dt);
}

/* n Matmults [K x M] x [K x N] of dtype dt into one PSUM bank. */
static lm_module *matmul_module(const char *dt, int n)
{
	lm_buf b = LM_BUF_INIT;
	int es = strcmp(dt, "float32") == 0 ? 4 : 2;
	lm_module *m;
	lm_error err;
	lm_buf_puts(&b, "{\"version\":2,\"arch\":\"gen3\",\"attributes\":{"
		    "\"neuron_core_id\":0},\"semaphores\":[],\"queues\":[],"
		    "\"functions\":[{\"name\":\"sg0000\",\"attributes\":[],"
		    "\"allocations\":[");
	sb_alloc(&b, "st", dt, K_, M_ * es, 0, 1);
	sb_alloc(&b, "mv", dt, K_, N_ * es, M_ * es, 0);
	lm_buf_printf(&b, ",{\"name\":\"acc\",\"kind\":\"Internal\",\"dtype\":"
		      "\"float32\",\"tensor_shape\":[%d,%d],\"memorylocations\":"
		      "[{\"name\":\"acc\",\"type\":\"PSUM\",\"addr\":0,\"dims\":"
		      "[%d,%d],\"bank\":0,\"base\":0,\"allocated\":true}]}", M_,
		      N_, M_, N_ * 4);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	lm_buf_puts(&b, "{\"opcode\":\"Iota\",\"name\":\"i0\",\"engine\":\"Pool\","
		    "\"pattern\":[[3,128]],\"channel_multiplier\":7,\"base\":-300,"
		    "\"outs\":[");
	ap(&b, "st", dt, K_, M_);
	lm_buf_puts(&b, "]},{\"opcode\":\"Iota\",\"name\":\"i1\",\"engine\":"
		    "\"Pool\",\"pattern\":[[5,512]],\"channel_multiplier\":-3,"
		    "\"base\":11,\"outs\":[");
	ap(&b, "mv", dt, K_, N_);
	lm_buf_puts(&b, "]}");
	for (int i = 0; i < n; i++) {
		lm_buf_printf(&b, ",{\"opcode\":\"Matmult\",\"name\":\"mm%d\","
			      "\"engine\":\"PE\",\"start_tensor_calc\":%s,"
			      "\"dependencies\":[\"i1\"],\"ins\":[", i,
			      i % 4 ? "false" : "true");
		ap(&b, "st", dt, K_, M_);
		lm_buf_puts(&b, ",");
		ap(&b, "mv", dt, K_, N_);
		lm_buf_puts(&b, "],\"outs\":[");
		ap(&b, "acc", "float32", M_, N_);
		lm_buf_puts(&b, "]}");
	}
	lm_buf_puts(&b, "]}]}]}");
	if (lm_module_parse(&m, b.ptr, b.size, "bench.json", &err) ||
	    lm_verify(m, NULL, &err)) {
		fprintf(stderr, "bench_mm: %s\n", err.msg);
		exit(1);
	}
	lm_buf_free(&b);
	return m;
}

/* Seconds of one ls_run of m (its preparation is a few microseconds). */
static double time_run(const lm_module *m)
{
	ls_result r;
	lm_error err;
	double t = now();
	if (ls_run(m, NULL, NULL, &r, &err)) {
		fprintf(stderr, "bench_mm: %s\n", err.msg);
		exit(1);
	}
	t = now() - t;
	ls_result_free(&r);
	return t;
}

static void keep_min(double *best, double t)
{
	if (t < *best)
		*best = t;
}

int main(int argc, char **argv)
{
	enum { ROUNDS = 5, MAXV = 8 };
	const double flop = 2.0 * K_ * M_ * N_;
	const char *dts[2] = { "float32", "bfloat16" };
	int n = argc > 1 ? atoi(argv[1]) : 200, nv = 0;
	double kern[MAXV][2], run[2] = { 1e30, 1e30 }, blas = 1e30;
	const char *vname[MAXV], *dflt;
	lm_module *mods[2];
	char model[256];

	if (n < 4) {
		fprintf(stderr, "usage: bench_mm [N_MATMULS >= 4]\n");
		return 2;
	}
#ifdef LNCSIM_BENCH_OPENBLAS
	bench_fix_openblas_coretype("bench_mm", argv);
#endif
	bench_cpu_model(model, sizeof model);
	printf("cpu: %s (avx2 %s, fma %s, avx512f %s)\n", model,
	       bench_cpu_has("avx2") ? "yes" : "no",
	       bench_cpu_has("fma") ? "yes" : "no",
	       bench_cpu_has("avx512f") ? "yes" : "no");
	dflt = ls_mm_kernel_name();
	printf("matmul kernel: %s (the best this CPU runs)\n", dflt);
	/* every vector variant this CPU runs, the chosen one first */
	vname[nv++] = dflt;
	for (int i = 0; ls_mm_kernel_variant(i) && nv < MAXV; i++) {
		const char *v = ls_mm_kernel_variant(i);
		if (strcmp(v, dflt) && strcmp(v, "generic") &&
		    ls_mm_kernel_force(v) == 0)
			vname[nv++] = v;
	}
	ls_mm_kernel_force(NULL);
	for (int v = 0; v < nv; v++)
		kern[v][0] = kern[v][1] = 1e30;
	for (int d = 0; d < 2; d++)
		mods[d] = matmul_module(dts[d], n);
	/* interleaved rounds, best of each: a busy machine slows all alike */
	for (int round = 0; round < ROUNDS; round++) {
		for (int d = 0; d < 2; d++) {
			keep_min(&run[d], time_run(mods[d]));
			for (int v = 0; v < nv; v++) {
				ls_mm_kernel_force(vname[v]);
				keep_min(&kern[v][d], time_kernel(n, d));
			}
			ls_mm_kernel_force(NULL);
		}
#ifdef LNCSIM_BENCH_OPENBLAS
		keep_min(&blas, time_sgemm(n));
#endif
	}
	for (int d = 0; d < 2; d++)
		lm_module_free(mods[d]);
	printf("%d Matmults %dx%dx%d a figure, thread CPU time, best of "
	       "%d interleaved rounds\n", n, K_, M_, N_, ROUNDS);
	for (int d = 0; d < 2; d++) {
		printf("%-8s ls_run              : %7.2f simulated GFLOP/s\n",
		       dts[d], flop * n / run[d] / 1e9);
		for (int v = 0; v < nv; v++)
			printf("%-8s kernel %-12s: %7.2f GFLOP/s\n", dts[d],
			       vname[v], flop * n / kern[v][d] / 1e9);
	}
#ifdef LNCSIM_BENCH_OPENBLAS
	printf("OpenBLAS sgemm, 1 thread   : %7.2f GFLOP/s (core %s%s)\n",
	       flop * n / blas / 1e9, openblas_get_corename(),
	       getenv("OPENBLAS_CORETYPE") ? ", OPENBLAS_CORETYPE set" : "");
	for (int d = 0; d < 2; d++) {
		printf("ratio %-8s ls_run / OpenBLAS : %5.2f (goal >= 0.9)\n",
		       dts[d], blas / run[d]);
		for (int v = 0; v < nv; v++)
			printf("ratio %-8s kernel %s / OpenBLAS : %5.2f\n",
			       dts[d], vname[v], blas / kern[v][d]);
	}
#else
	(void)blas;
	printf("OpenBLAS not found at configure time: no anchor, no ratio.\n"
	       "  Install it (Debian: apt-get install libopenblas-dev), then "
	       "run ./configure and make bench again.\n");
#endif
	return 0;
}

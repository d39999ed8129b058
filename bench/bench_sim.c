/*
** bench_sim.c -- simulator throughput:
**   1. Matmult: simulated GFLOP/s of 128x128x512 tiles (float32 and
**      bfloat16 operands) run through ls_run, next to OpenBLAS
**      cblas_sgemm single-threaded on the same shape in the same run
**      (goal: ratio >= 0.6, with the exact k-ordered fmaf result);
**   2. dispatch rate of tiny instructions (1-partition TensorCopy),
**      goal >= 5 M instructions/s;
**   3. a 3-deep nest of static Loops around one 1-partition TensorCopy
**      whose symbolic_ap addresses are linear in (i, j, k), at 10^4, 10^5
**      and 10^6 iterations: the event loop's dispatch rate (goal >= 5 M
**      instructions/s) and each run's peak RSS, measured in a child
**      process of its own (goal: equal within 1 MiB).
*/
#include "common.h"
#include "module.h"
#include "verify.h"
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#ifdef LNCSIM_BENCH_OPENBLAS
#include <cblas.h>
#endif

/* The matmul kernel variant in use (sim/mmkernel.c). */
const char *ls_mm_kernel_name(void);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char head[] =
	"{\"version\":2,\"arch\":\"gen3\",\"attributes\":{\"neuron_core_id\":0},"
	"\"semaphores\":[],\"queues\":[],\"functions\":[{\"name\":\"sg0000\","
	"\"attributes\":[],\"allocations\":[";

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

static lm_module *parse(lm_buf *b)
{
	lm_module *m;
	lm_error err;
	if (lm_module_parse(&m, b->ptr, b->size, "bench.json", &err) ||
	    lm_verify(m, NULL, &err)) {
		fprintf(stderr, "bench_sim: %s\n", err.msg);
		exit(1);
	}
	return m;
}

/* n Matmults [128 x 128] x [128 x 512] of dtype dt into one PSUM bank. */
static lm_module *matmul_module(const char *dt, int n)
{
	lm_buf b = LM_BUF_INIT;
	int es = strcmp(dt, "float32") == 0 ? 4 : 2;
	lm_module *m;
	lm_buf_puts(&b, head);
	sb_alloc(&b, "st", dt, 128, 128 * es, 0, 1);
	sb_alloc(&b, "mv", dt, 128, 512 * es, 128 * es, 0);
	lm_buf_puts(&b, ",{\"name\":\"acc\",\"kind\":\"Internal\",\"dtype\":"
		    "\"float32\",\"tensor_shape\":[128,512],\"memorylocations\":"
		    "[{\"name\":\"acc\",\"type\":\"PSUM\",\"addr\":0,\"dims\":"
		    "[128,2048],\"bank\":0,\"base\":0,\"allocated\":true}]}");
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	lm_buf_puts(&b, "{\"opcode\":\"Iota\",\"name\":\"i0\",\"engine\":\"Pool\","
		    "\"pattern\":[[3,128]],\"channel_multiplier\":7,\"base\":-300,"
		    "\"outs\":[");
	ap(&b, "st", dt, 128, 128);
	lm_buf_puts(&b, "]},{\"opcode\":\"Iota\",\"name\":\"i1\",\"engine\":"
		    "\"Pool\",\"pattern\":[[5,512]],\"channel_multiplier\":-3,"
		    "\"base\":11,\"outs\":[");
	ap(&b, "mv", dt, 128, 512);
	lm_buf_puts(&b, "]}");
	for (int i = 0; i < n; i++) {
		lm_buf_printf(&b, ",{\"opcode\":\"Matmult\",\"name\":\"mm%d\","
			      "\"engine\":\"PE\",\"start_tensor_calc\":%s,"
			      "\"dependencies\":[\"i1\"],\"ins\":[", i,
			      i % 4 ? "false" : "true");
		ap(&b, "st", dt, 128, 128);
		lm_buf_puts(&b, ",");
		ap(&b, "mv", dt, 128, 512);
		lm_buf_puts(&b, "],\"outs\":[");
		ap(&b, "acc", "float32", 128, 512);
		lm_buf_puts(&b, "]}");
	}
	lm_buf_puts(&b, "]}]}]}");
	m = parse(&b);
	lm_buf_free(&b);
	return m;
}

/* Best-of-3 seconds of one ls_run of m (*loop: of its event loop). */
static double time_run(const lm_module *m, int64_t *instrs, double *loop)
{
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		ls_result r;
		lm_error err;
		double t0 = now();
		if (ls_run(m, NULL, NULL, &r, &err)) {
			fprintf(stderr, "bench_sim: %s\n", err.msg);
			exit(1);
		}
		double t = now() - t0;
		if (t < best)
			best = t;
		if (rep == 0 || r.wall_run_s < *loop)
			*loop = r.wall_run_s;
		*instrs = r.instructions;
		ls_result_free(&r);
	}
	return best;
}

#ifdef LNCSIM_BENCH_OPENBLAS
/* Best-of-3 seconds of n sgemms C[M][N] = A^T B with A [K][M], B [K][N]. */
static double time_sgemm(int n)
{
	const int K = 128, M = 128, N = 512;
	float *a = malloc(sizeof(float) * K * M), *b = malloc(sizeof(float) * K * N);
	float *c = calloc((size_t)M * N, sizeof(float));
	double best = 1e30;
	for (int i = 0; i < K * M; i++)
		a[i] = (float)(i % 97) * 0.01f;
	for (int i = 0; i < K * N; i++)
		b[i] = (float)(i % 89) * 0.02f;
	openblas_set_num_threads(1);
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now();
		for (int i = 0; i < n; i++)
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M,
				    N, K, 1.0f, a, M, b, N, i % 4 ? 1.0f : 0.0f,
				    c, N);
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	free(a);
	free(b);
	free(c);
	return best;
}
#endif

/* n 1-partition TensorCopy [1 x 4] float32 on DVE. */
static lm_module *tiny_module(int n)
{
	lm_buf b = LM_BUF_INIT;
	lm_module *m;
	lm_buf_puts(&b, head);
	sb_alloc(&b, "a", "float32", 1, 16, 0, 1);
	sb_alloc(&b, "c", "float32", 1, 16, 16, 0);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	lm_buf_puts(&b, "{\"opcode\":\"Memset\",\"name\":\"z\",\"engine\":\"DVE\","
		    "\"mode\":\"Const\",\"value\":1,\"outs\":[");
	ap(&b, "a", "float32", 1, 4);
	lm_buf_puts(&b, "]}");
	for (int i = 0; i < n; i++) {
		lm_buf_printf(&b, ",{\"opcode\":\"TensorCopy\",\"name\":\"c%d\","
			      "\"engine\":\"DVE\",\"ins\":[", i);
		ap(&b, "a", "float32", 1, 4);
		lm_buf_puts(&b, "],\"outs\":[");
		ap(&b, "c", "float32", 1, 4);
		lm_buf_puts(&b, "]}");
	}
	lm_buf_puts(&b, "]}]}]}");
	m = parse(&b);
	lm_buf_free(&b);
	return m;
}

/* A symbolic_ap of 4 float32 elements of 1-partition tensor name at
** element i + j + k. */
static void sym_ap(lm_buf *b, const char *name)
{
	lm_buf_printf(b, "{\"kind\":\"symbolic_ap\",\"memsetref\":\"%s\","
		      "\"memref\":\"%s\",\"ap\":[[1024,1],[1,4]],\"dtype\":"
		      "\"float32\",\"addrs\":[{\"kind\":\"AffExprKind\","
		      "\"terms\":[{\"idx\":{\"kind\":\"AffIVKind\",\"axis\":"
		      "\"i\"},\"coeff\":1},{\"idx\":{\"kind\":\"AffIVKind\","
		      "\"axis\":\"j\"},\"coeff\":1},{\"idx\":{\"kind\":"
		      "\"AffIVKind\",\"axis\":\"k\"},\"coeff\":1}],\"c\":0}]}",
		      name, name);
}

/* Loops i < ni, j < nj, k < nk around one TensorCopy [1 x 4] on DVE. */
static lm_module *nest_module(int ni, int nj, int nk)
{
	lm_buf b = LM_BUF_INIT;
	lm_module *m;
	const char *ax[3] = {"i", "j", "k"};
	int n[3] = {ni, nj, nk};
	lm_buf_puts(&b, head);
	sb_alloc(&b, "a", "float32", 1, 4096, 0, 1);
	sb_alloc(&b, "c", "float32", 1, 4096, 4096, 0);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	lm_buf_puts(&b, "{\"opcode\":\"Memset\",\"name\":\"z\",\"engine\":"
		    "\"DVE\",\"mode\":\"Const\",\"value\":1,\"outs\":[");
	lm_buf_puts(&b, "{\"kind\":\"physical_ap\",\"memsetref\":\"a\","
		    "\"memref\":\"a\",\"offset\":0,\"ap\":[[1024,1],"
		    "[1,1024]],\"dtype\":\"float32\"}]}");
	for (int d = 0; d < 3; d++)
		lm_buf_printf(&b, "%s{\"opcode\":\"Loop\",\"name\":\"l%s\","
			      "\"engine\":\"DVE\",\"LoopAxis\":{\"name\":"
			      "\"%s\",\"lb\":0,\"ub\":%d,\"stride\":1},"
			      "\"blocks\":[{\"name\":\"b%s\",\"instructions\":[",
			      d ? "" : ",", ax[d], ax[d], n[d], ax[d]);
	lm_buf_puts(&b, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\","
		    "\"engine\":\"DVE\",\"ins\":[");
	sym_ap(&b, "a");
	lm_buf_puts(&b, "],\"outs\":[");
	sym_ap(&b, "c");
	lm_buf_puts(&b, "]}");
	for (int d = 0; d < 3; d++)
		lm_buf_puts(&b, "]}]}");
	lm_buf_puts(&b, "]}]}]}");
	m = parse(&b);
	lm_buf_free(&b);
	return m;
}

/* One loop-nest run in a child process: its dispatch rate and peak RSS. */
static void nest_run(int ni, int nj, int nk)
{
	struct rusage u;
	int status;
	pid_t pid;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		lm_module *m = nest_module(ni, nj, nk);
		ls_result r;
		lm_error err;
		if (ls_run(m, NULL, NULL, &r, &err)) {
			fprintf(stderr, "bench_sim: %s\n", err.msg);
			_exit(1);
		}
		printf("loop nest %3d x %3d x %3d: %8lld copies, %8lld "
		       "dispatched (back edges included) in %.3f s: %.2f M "
		       "instructions/s in the event loop (goal >= 5)",
		       ni, nj, nk, (long long)ni * nj * nk,
		       (long long)r.instructions, r.wall_run_s,
		       (double)r.instructions / r.wall_run_s / 1e6);
		fflush(stdout);
		ls_result_free(&r);
		lm_module_free(m);
		_exit(0);
	}
	if (pid < 0 || wait4(pid, &status, 0, &u) != pid || status != 0) {
		fprintf(stderr, "bench_sim: loop nest run failed\n");
		exit(1);
	}
	printf(", peak RSS %.1f MiB\n", (double)u.ru_maxrss / 1024.0);
}

/*
** OpenBLAS picks its kernels from CPUID at load time and misdetects some
** virtual machines (a KVM guest with AVX-512 reports "Prescott", the SSE3
** kernel). For a fair comparison, re-run ourselves once with
** OPENBLAS_CORETYPE set to the best kernel family this CPU supports,
** unless the user set it.
*/
static void fix_openblas_coretype(char **argv)
{
#if defined(LNCSIM_BENCH_OPENBLAS) && defined(__x86_64__)
	const char *core = NULL;
	if (getenv("OPENBLAS_CORETYPE"))
		return;
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		core = "SkylakeX";
	else if (__builtin_cpu_supports("avx2"))
		core = "Haswell";
	if (!core)
		return;
	setenv("OPENBLAS_CORETYPE", core, 1);
	execv("/proc/self/exe", argv);
#else
	(void)argv;
#endif
}

int main(int argc, char **argv)
{
	const int n_mm = 200, n_tiny = 500000;
	const double flop = 2.0 * 128 * 128 * 512;
	const char *dts[2] = {"float32", "bfloat16"};
	double gf[2], blas = 0;
	int64_t ni;

	(void)argc;
	fix_openblas_coretype(argv);
	/* first, while this process is small: the children's peak RSS */
	nest_run(10, 10, 100);
	nest_run(10, 100, 100);
	nest_run(100, 100, 100);
	printf("matmul kernel: %s\n", ls_mm_kernel_name());
	for (int d = 0; d < 2; d++) {
		lm_module *m = matmul_module(dts[d], n_mm);
		double lp, t = time_run(m, &ni, &lp);
		gf[d] = flop * n_mm / t / 1e9;
		printf("Matmult 128x128x512 %-8s: %7.2f simulated GFLOP/s "
		       "(%d matmuls in %.3f s, best of 3)\n", dts[d], gf[d], n_mm,
		       t);
		lm_module_free(m);
	}
#ifdef LNCSIM_BENCH_OPENBLAS
	{
		double t = time_sgemm(n_mm);
		blas = flop * n_mm / t / 1e9;
		printf("OpenBLAS cblas_sgemm 1 thread : %7.2f GFLOP/s "
		       "(OPENBLAS_CORETYPE=%s)\n", blas,
		       getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE")
						   : "auto");
		printf("ratio float32  sim / OpenBLAS : %5.2f (goal >= 0.6)\n",
		       gf[0] / blas);
		printf("ratio bfloat16 sim / OpenBLAS : %5.2f (goal >= 0.6)\n",
		       gf[1] / blas);
	}
#else
	(void)blas;
	printf("OpenBLAS not available: no sgemm comparison\n");
#endif
	{
		lm_module *m = tiny_module(n_tiny);
		double lp, t = time_run(m, &ni, &lp);
		printf("dispatch, 1-partition TensorCopy: %.2f M instructions/s "
		       "in the event loop (%lld instructions in %.3f s; goal "
		       ">= 5)\n", (double)ni / lp / 1e6, (long long)ni, lp);
		printf("  end to end, ls_run incl. preparation: %.2f M "
		       "instructions/s (%.3f s)\n", (double)ni / t / 1e6, t);
		lm_module_free(m);
	}
	return 0;
}

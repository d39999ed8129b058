/*
** bench_sim.c -- simulator throughput:
**   1. dispatch rate of tiny instructions (1-partition TensorCopy),
**      goal >= 5 M instructions/s;
**   2. a 3-deep nest of static Loops around one 1-partition TensorCopy
**      whose symbolic_ap addresses are linear in (i, j, k), at 10^4, 10^5
**      and 10^6 iterations: the event loop's dispatch rate (goal >= 5 M
**      instructions/s) and each run's peak RSS, measured in a child
**      process of its own (goal: equal within 1 MiB).
** (Matmult against OpenBLAS: bench_mm.c.)
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

/* n 1-partition TensorCopy [1 x 4] float32 on DVE. */
static lm_module *tiny_module(int n)
{
	lm_buf b = LM_BUF_INIT;
	lm_module *m;
	lm_buf_puts(&b, head);
	sb_alloc(&b, "a", "float32", 1, 16, 0, 1);
	sb_alloc(&b, "c", "float32", 1, 16, 16, 0);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	lm_buf_puts(&b, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"z\","
		    "\"engine\":\"DVE\",\"constant\":1,\"outs\":[");
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
		    "\"DVE\",\"mode\":\"Const\",\"constant\":1,\"outs\":[");
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

int main(void)
{
	const int n_tiny = 500000;
	int64_t ni;

	/* first, while this process is small: the children's peak RSS */
	nest_run(10, 10, 100);
	nest_run(10, 100, 100);
	nest_run(100, 100, 100);
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

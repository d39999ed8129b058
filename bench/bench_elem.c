/*
** bench_elem.c -- TensorCopy over a 128 x 2048 fp32 SBUF tile against a
** memcpy of the same bytes in the same run (best of 3). Other ops: not yet.
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


/* n TensorCopy [128 x 2048] float32 on DVE; the only op measured so far. */
static lm_module *copy_module(int n)
{
	lm_buf b = LM_BUF_INIT;
	lm_module *m;
	lm_buf_puts(&b, head);
	sb_alloc(&b, "a", "float32", 128, 8192, 0, 1);
	sb_alloc(&b, "c", "float32", 128, 8192, 8192, 0);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	lm_buf_puts(&b, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":\"z\","
		    "\"engine\":\"DVE\",\"constant\":1,\"outs\":[");
	ap(&b, "a", "float32", 128, 2048);
	lm_buf_puts(&b, "]}");
	for (int i = 0; i < n; i++) {
		lm_buf_printf(&b, ",{\"opcode\":\"TensorCopy\",\"name\":\"c%d\","
			      "\"engine\":\"DVE\",\"ins\":[", i);
		ap(&b, "a", "float32", 128, 2048);
		lm_buf_puts(&b, "],\"outs\":[");
		ap(&b, "c", "float32", 128, 2048);
		lm_buf_puts(&b, "]}");
	}
	lm_buf_puts(&b, "]}]}]}");
	m = parse(&b);
	lm_buf_free(&b);
	return m;
}

int main(void)
{
	const int n = 50;
	const size_t bytes = (size_t)128 * 2048 * 4;
	lm_module *m = copy_module(n);
	char *src = malloc(bytes), *dst = malloc(bytes);
	double best = 1e30, mbest = 1e30;
	memset(src, 1, bytes);
	for (int rep = 0; rep < 3; rep++) {
		ls_result r;
		lm_error err;
		double t0 = now();
		if (ls_run(m, NULL, NULL, &r, &err)) {
			fprintf(stderr, "bench_elem: %s\n", err.msg);
			return 1;
		}
		t0 = now() - t0;
		best = t0 < best ? t0 : best;
		ls_result_free(&r);
		t0 = now();
		for (int i = 0; i < n; i++) {
			memcpy(dst, src, bytes);
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		t0 = now() - t0;
		mbest = t0 < mbest ? t0 : mbest;
	}
	double el = (double)n * 128 * 2048;
	printf("TensorCopy 128x2048 fp32: %.3g elements/s; memcpy of the same "
	       "4-byte elements (one read + one write each): %.3g elements/s; "
	       "ratio %.3f (goal >= 0.25) %s\n", el / best, el / mbest,
	       mbest / best, mbest / best >= 0.25 ? "PASS" : "BELOW");
	free(src);
	free(dst);
	lm_module_free(m);
	return 0;
}

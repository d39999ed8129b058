/*
** bench_elem.c -- elementwise, reduce and activation ops over a
** 128 x 2048 fp32 SBUF tile against a memcpy of the same bytes in the
** same run (median of 5); last, libm's expf alone over the same tile,
** the ceiling of the ops that call it once per element.
*/
#include "common.h"
#include "module.h"
#include "verify.h"
#include "sim.h"

#include <math.h>
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


/*
** n copies of one instruction over a [128 x 2048] float32 tile "a" into
** "c" (the reduce writes [128 x 1] into "r"); body is the JSON from the
** opcode up to its "ins", ins/outs are appended here.
*/
struct op {
	const char *name, *body;
	int reduce, two_in;
	double goal;
};

static lm_module *op_module(const struct op *o, int n)
{
	lm_buf b = LM_BUF_INIT;
	lm_module *m;
	const char *eng = strstr(o->body, "\"engine\":\"Activation\"") ?
		"Activation" : "DVE";
	lm_buf_puts(&b, head);
	sb_alloc(&b, "a", "float32", 128, 8192, 0, 1);
	sb_alloc(&b, "c", "float32", 128, 8192, 8192, 0);
	sb_alloc(&b, "r", "float32", 128, 4, 16384, 0);
	sb_alloc(&b, "s", "float32", 128, 4, 16388, 0);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	/* the inputs are set on the op's own engine: no semaphores needed */
	lm_buf_printf(&b, "{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		      "\"z\",\"engine\":\"%s\",\"constant\":0,\"outs\":[", eng);
	ap(&b, "a", "float32", 128, 2048);
	lm_buf_printf(&b, "]},{\"opcode\":\"Memset\",\"mode\":\"Const\",\"name\":"
		      "\"zs\",\"engine\":\"%s\",\"constant\":0,\"outs\":[", eng);
	ap(&b, "s", "float32", 128, 1);
	lm_buf_puts(&b, "]}");
	for (int i = 0; i < n; i++) {
		lm_buf_printf(&b, ",{%s,\"name\":\"i%d\",\"ins\":[", o->body, i);
		ap(&b, "a", "float32", 128, 2048);
		if (o->two_in == 1) {
			lm_buf_puts(&b, ",");
			ap(&b, "a", "float32", 128, 2048);
		} else if (o->two_in == 2) {
			lm_buf_puts(&b, ",");
			ap(&b, "s", "float32", 128, 1);
		}
		lm_buf_puts(&b, "],\"outs\":[");
		if (o->reduce)
			ap(&b, "r", "float32", 128, 1);
		else
			ap(&b, "c", "float32", 128, 2048);
		lm_buf_puts(&b, "]}");
	}
	lm_buf_puts(&b, "]}]}]}");
	m = parse(&b);
	lm_buf_free(&b);
	return m;
}

static const struct op ops[] = {
	{ "TensorCopy", "\"opcode\":\"TensorCopy\",\"engine\":\"DVE\"", 0, 0,
	  0.25 },
	{ "TensorTensor add", "\"opcode\":\"TensorTensor\",\"engine\":\"DVE\","
	  "\"op\":\"add\"", 0, 1, 0.25 },
	{ "TensorScalar mult+add", "\"opcode\":\"TensorScalar\",\"engine\":"
	  "\"DVE\",\"op0\":\"mult\",\"const0\":2,\"op1\":\"add\",\"const1\":1,"
	  "\"reverse0\":false,\"reverse1\":false", 0, 0, 0.25 },
	{ "TensorReduce add X", "\"opcode\":\"TensorReduce\",\"engine\":\"DVE\","
	  "\"op\":\"add\",\"axis\":\"X\",\"negate\":false", 1, 0, 0.25 },
	{ "Activation Exp", "\"opcode\":\"Activation\",\"acc\":\"Idle\","
	  "\"alpha\":0.0,\"op0\":\"bypass\",\"op1\":\"bypass\",\"reduce_op\":"
	  "\"bypass\",\"engine\":\"Activation\",\"func\":\"Exp\",\"scale\":1.0",
	  0, 2, 0.15 },
	{ "Exponential", "\"opcode\":\"Exponential\",\"reduce_cmd\":\"Zero\","
	  "\"engine\":\"Activation\"", 0, 2, 0.15 },
};

static void cpu_model(char *buf, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	snprintf(buf, n, "unknown");
	while (f && fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':');
		if (c && strncmp(line, "model name", 10) == 0) {
			c += 1 + (c[1] == ' ');
			c[strcspn(c, "\n")] = 0;
			snprintf(buf, n, "%s", c);
			break;
		}
	}
	if (f)
		fclose(f);
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

#define REPS 5

int main(void)
{
	const int n = 50;
	const size_t bytes = (size_t)128 * 2048 * 4;
	char *src = malloc(bytes), *dst = malloc(bytes), model[256];
	double el = (double)n * 128 * 2048;
	cpu_model(model, sizeof model);
	printf("cpu: %s\n%d x [128 x 2048] fp32 per run, median of %d; memcpy "
	       "of the same bytes (one read + one write per element)\n", model,
	       n, REPS);
	printf("%-22s %12s %12s %7s %5s\n", "op", "sim el/s", "memcpy el/s",
	       "ratio", "goal");
	memset(src, 1, bytes);
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		lm_module *m = op_module(&ops[k], n);
		double ts[REPS], tm[REPS];
		for (int rep = 0; rep < REPS; rep++) {
			ls_result r;
			lm_error err;
			double t0 = now();
			if (ls_run(m, NULL, NULL, &r, &err)) {
				fprintf(stderr, "bench_elem: %s: %s\n",
					ops[k].name, err.msg);
				return 1;
			}
			ts[rep] = now() - t0;
			ls_result_free(&r);
			t0 = now();
			for (int i = 0; i < n; i++) {
				memcpy(dst, src, bytes);
				__asm__ volatile("" : : "r"(dst) : "memory");
			}
			tm[rep] = now() - t0;
		}
		qsort(ts, REPS, sizeof ts[0], cmp);
		qsort(tm, REPS, sizeof tm[0], cmp);
		double s = ts[REPS / 2], mc = tm[REPS / 2];
		printf("%-22s %12.3g %12.3g %7.3f %5.2f %s\n", ops[k].name,
		       el / s, el / mc, mc / s, ops[k].goal,
		       mc / s >= ops[k].goal ? "PASS" : "BELOW");
		lm_module_free(m);
	}
	/* the ceiling of the transcendental ops: libm's expf alone, one call
	** per element over the same tile of zeros (the ops' input) */
	{
		const size_t ne = bytes / sizeof(float);
		float *fi = calloc(ne, sizeof *fi), *fo = malloc(bytes);
		double ts[REPS], tm[REPS];
		for (int rep = 0; rep < REPS; rep++) {
			double t0 = now();
			for (int i = 0; i < n; i++) {
				for (size_t e = 0; e < ne; e++)
					fo[e] = expf(fi[e]);
				__asm__ volatile("" : : "r"(fo) : "memory");
			}
			ts[rep] = now() - t0;
			t0 = now();
			for (int i = 0; i < n; i++) {
				memcpy(dst, src, bytes);
				__asm__ volatile("" : : "r"(dst) : "memory");
			}
			tm[rep] = now() - t0;
		}
		qsort(ts, REPS, sizeof ts[0], cmp);
		qsort(tm, REPS, sizeof tm[0], cmp);
		printf("%-22s %12.3g %12.3g %7.3f   (a plain loop, no "
		       "simulation)\n", "libm expf loop", el / ts[REPS / 2],
		       el / tm[REPS / 2], tm[REPS / 2] / ts[REPS / 2]);
		free(fi);
		free(fo);
	}
	free(src);
	free(dst);
	return 0;
}

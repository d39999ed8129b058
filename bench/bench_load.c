/*
** bench_load.c -- IR load / save throughput on a ~50 MB module in the
** compiler's 2.24 wire form, next to a raw cJSON parse of the same bytes
** (goals: load >= 1.5x the raw parse, save >= 1 GB/s). Times are this
** thread's CPU seconds (system time included), so a busy machine's other
** work does not count.
*/
#include "common.h"
#include "module.h"

#include <cjson/cJSON.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A module with n instructions over a handful of SBUF tensors. */
static char *make_text(int n, size_t *len)
{
	lm_buf b = LM_BUF_INIT;
	lm_buf_puts(&b, "{\"version\":2,\"arch\":\"gen3\",\"attributes\":"
		    "{\"neuron_core_id\":0},\"semaphores\":[{\"name\":\"s\","
		    "\"init\":0}],\"queues\":[{\"name\":\"q\",\"instances\":"
		    "[{\"name\":\"q\",\"semaphore\":\"s\"}]}],\"functions\":"
		    "[{\"name\":\"sg0000\",\"attributes\":[],\"allocations\":[");
	for (int t = 0; t < 8; t++)
		lm_buf_printf(&b, "%s{\"name\":\"t%d\",\"kind\":\"Internal\","
			      "\"dtype\":\"float32\",\"tensor_shape\":[128,64],"
			      "\"memorylocations\":[{\"name\":\"t%d\",\"type\":\"SB\","
			      "\"addr\":%d,\"dims\":[128,256],\"bank\":0,\"base\":0,"
			      "\"allocated\":true}]}", t ? "," : "", t, t, t * 256);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	/* three of four TensorTensor, then a Matmult (its 13 keys) or a
	   DMACopy with a wait (sync_info) */
	for (int i = 0; i < n; i++) {
		const char *op = i % 8 == 3 ? "\"opcode\":\"Matmult\",\"engine\":"
			"\"PE\",\"accumulation_flag\":3" :
			i % 8 == 7 ? "\"opcode\":\"DMACopy\",\"engine\":\"SP\","
			"\"queue\":\"q\",\"wait\":[{\"semaphore\":\"s\",\"value\":1}]"
			: "\"opcode\":\"TensorTensor\",\"engine\":\"DVE\",\"op\":\"add\"";
		lm_buf_printf(&b, "%s{%s,\"name\":\"i%d\",\"ins\":["
			      "{\"kind\":\"physical_ap\",\"ap\":[[64,128],[1,64]],"
			      "\"dtype\":\"float32\",\"offset\":0,\"memsetref\":\"t%d\","
			      "\"memref\":\"t%d\"}", i ? "," : "", op, i, i % 8, i % 8);
		if (i % 8 != 7)
			lm_buf_printf(&b, ",{\"kind\":\"physical_ap\",\"ap\":"
				      "[[64,128],[1,64]],\"dtype\":\"float32\","
				      "\"offset\":0,\"memsetref\":\"t%d\","
				      "\"memref\":\"t%d\"}", (i + 1) % 8, (i + 1) % 8);
		lm_buf_printf(&b, "],\"outs\":[{\"kind\":\"physical_ap\",\"ap\":"
			      "[[64,128],[1,64]],\"dtype\":\"float32\",\"offset\":0,"
			      "\"memsetref\":\"t%d\",\"memref\":\"t%d\"}],"
			      "\"dependencies\":[\"i%d\"]}", (i + 2) % 8, (i + 2) % 8,
			      i ? i - 1 : 0);
	}
	lm_buf_puts(&b, "]}]}]}");
	*len = b.size;
	return lm_buf_detach(&b);
}

/* The same module in the 2.24 form: read, then written by lncsim. */
static char *wire_text(int n, size_t *len)
{
	size_t l0;
	char *t0 = make_text(n, &l0), *out;
	lm_module *m;
	lm_error err;
	if (lm_module_parse(&m, t0, l0, "bench.json", &err)) {
		fprintf(stderr, "bench_load: %s\n", err.msg);
		exit(1);
	}
	lm_module_to_json(m, 0, &out, len, &err);
	lm_module_free(m);
	free(t0);
	return out;
}

enum { N_INSTS = 93000 };

/* Usage: bench_load [N_INSTRUCTIONS [ROUNDS]] (profiling: a small module) */
int main(int argc, char **argv)
{
	size_t len;
	int n_insts = argc > 1 ? atoi(argv[1]) : N_INSTS;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	char *text;
	double mb;
	double best_raw = 1e9, best_load = 1e9, best_save = 1e9;
	if (n_insts < 1 || rounds < 1) {
		fprintf(stderr, "usage: bench_load [N_INSTRUCTIONS [ROUNDS]]\n");
		return 2;
	}
	text = wire_text(n_insts, &len);
	mb = (double)len / 1e6;
	for (int rep = 0; rep < rounds; rep++) {
		/* each phase starts from a trimmed heap, so none pays for the
		** previous phase's frees (glibc consolidates lazily) */
		malloc_trim(0);
		double t0 = now();
		cJSON *j = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
		double t1 = now();
		if (!j) {
			fprintf(stderr, "bench_load: raw parse failed\n");
			return 1;
		}
		cJSON_Delete(j);
		lm_module *m;
		lm_error err;
		malloc_trim(0);
		double t2 = now();
		if (lm_module_parse(&m, text, len, "bench.json", &err)) {
			fprintf(stderr, "bench_load: %s\n", err.msg);
			return 1;
		}
		double t3 = now();
		char *out;
		size_t n;
		malloc_trim(0);
		double t4 = now();
		lm_module_to_json(m, 0, &out, &n, &err);
		double t5 = now();
		free(out);
		lm_module_free(m);
		if (t1 - t0 < best_raw) best_raw = t1 - t0;
		if (t3 - t2 < best_load) best_load = t3 - t2;
		if (t5 - t4 < best_save) best_save = t5 - t4;
	}
	printf("module: %.1f MB in the 2.24 form, %d instructions (best of "
	       "%d)\n", mb, n_insts, rounds);
	printf("raw cJSON parse : %8.1f MB/s\n", mb / best_raw);
	printf("IR load         : %8.1f MB/s  (%.2fx raw parse; goal >= 1.5x)\n",
	       mb / best_load, best_raw / best_load);
	printf("IR save         : %8.1f MB/s  (goal >= 1000 MB/s)\n",
	       mb / best_save);
	free(text);
	return 0;
}

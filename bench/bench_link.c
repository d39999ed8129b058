/*
** bench_link.c -- linker throughput: link N = 8 generated cores of 100k
** instructions each (goal >= 1M instructions linked per second, measured
** on the link steps with the inputs trusted and no final verify; also
** printed with the inputs verified and with lk_link's defaults, which
** verify both sides), then a table for N = 1, 2, 4, ... 64 at a fixed
** instruction count per core (lk_link defaults), to show the time grows
** linearly with N. Extra arguments run one configuration and print the
** time of every step (see main).
**
** The generated cores collide on every name (allocations, instructions,
** semaphores, queue instances), share an external input, hand a tensor to
** the next core through a remote_local_target view and meet in barriers:
** every step has work to do.
*/
#include "common.h"
#include "module.h"
#include "linker.h"
#include "verify.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void ap(lm_buf *b, const char *t)
{
	lm_buf_printf(b, "{\"kind\":\"physical_ap\",\"ap\":[[64,128],[1,64]],"
		      "\"dtype\":\"float32\",\"offset\":0,\"memsetref\":\"%s\","
		      "\"memref\":\"%s\"}", t, t);
}

static void dram(lm_buf *b, const char *name, const char *kind, int addr,
		 const char *more)
{
	lm_buf_printf(b, ",{\"name\":\"%s\",\"kind\":\"%s\",\"dtype\":"
		      "\"float32\",\"tensor_shape\":[128,64],\"memorylocations\":"
		      "[{\"name\":\"%s\",\"type\":\"DRAM\",\"addr\":%d,\"dims\":"
		      "[128,256],\"allocated\":true}]%s}", name, kind, name, addr,
		      more);
}

/* Core c of n: n_inst instructions. */
static lm_module *make_core(int c, int n, int n_inst)
{
	lm_buf b = LM_BUF_INIT;
	lm_module *m = NULL;
	lm_error e;
	char t[32], view[128], hn[32];
	int last_dma = ((n_inst - 1) / 100) * 100;
	lm_buf_printf(&b, "{\"version\":2,\"arch\":\"gen3\",\"name\":\"bench\","
		      "\"attributes\":{\"neuron_core_id\":%d},\"semaphores\":["
		      "{\"name\":\"s\",\"init\":0}],\"queues\":[{\"name\":\"q\","
		      "\"instances\":[{\"name\":\"qi\",\"semaphore\":\"s\"}]}],"
		      "\"functions\":[{\"name\":\"sg0000\",\"attributes\":[],"
		      "\"allocations\":[", c);
	for (int k = 0; k < 8; k++)
		lm_buf_printf(&b, "%s{\"name\":\"t%d\",\"kind\":\"Internal\","
			      "\"dtype\":\"float32\",\"tensor_shape\":[128,64],"
			      "\"memorylocations\":[{\"name\":\"t%d\",\"type\":"
			      "\"SB\",\"addr\":%d,\"dims\":[128,256],\"bank\":0,"
			      "\"base\":0,\"allocated\":true}]}", k ? "," : "", k,
			      k, k * 256);
	dram(&b, "x", "ExternalInput", 0, "");
	snprintf(hn, sizeof hn, "h%d", c);
	dram(&b, hn, "ExternalOutput", 65536 * (c + 1), "");
	snprintf(view, sizeof view, ",\"remote_local_target\":{\"name\":"
		 "\"h%d\",\"core\":%d}", c - 1, c - 1);
	if (c > 0)
		dram(&b, "hv", "Internal", 65536 * c, view);
	lm_buf_puts(&b, "],\"blocks\":[{\"name\":\"b\",\"instructions\":[");
	for (int i = 0; i < n_inst; i++) {
		if (i)
			lm_buf_puts(&b, ",");
		if (i % 1000 == 500) {
			lm_buf_printf(&b, "{\"opcode\":\"CoreBarrier\",\"name\":"
				      "\"i%d\",\"engine\":\"Pool\",\"id\":%d,"
				      "\"group\":\"g%d\",\"cores\":[", i, i / 1000,
				      i / 1000);
			for (int k = 0; k < n; k++)
				lm_buf_printf(&b, "%s%d", k ? "," : "", k);
			lm_buf_puts(&b, "]}");
		} else if (i % 100 == 0) {
			const char *src = i == 0 ? "x" : c > 0 && i == 100 ? "hv"
				: "t0";
			lm_buf_printf(&b, "{\"opcode\":\"DMACopy\",\"name\":\"i%d\","
				      "\"engine\":\"SP\",\"queue\":\"q\",\"ins\":[",
				      i);
			ap(&b, src);
			lm_buf_puts(&b, "],\"outs\":[");
			ap(&b, i == last_dma && i > 0 ? hn : "t1");
			lm_buf_printf(&b, "],\"wait\":[{\"semaphore\":\"s\","
				      "\"value\":%d}]}", i / 100);
		} else {
			lm_buf_printf(&b, "{\"opcode\":\"TensorTensor\",\"name\":"
				      "\"i%d\",\"engine\":\"DVE\",\"op\":\"add\","
				      "\"ins\":[", i);
			snprintf(t, sizeof t, "t%d", i % 8);
			ap(&b, t);
			lm_buf_puts(&b, ",");
			snprintf(t, sizeof t, "t%d", (i + 1) % 8);
			ap(&b, t);
			lm_buf_puts(&b, "],\"outs\":[");
			snprintf(t, sizeof t, "t%d", (i + 2) % 8);
			ap(&b, t);
			lm_buf_printf(&b, "],\"dependencies\":[\"i%d\"]}", i - 1);
		}
	}
	lm_buf_puts(&b, "]}]}]}");
	if (lm_module_parse(&m, b.ptr, b.size, "bench.json", &e) != 0) {
		fprintf(stderr, "bench_link: %s\n", e.msg);
		exit(1);
	}
	lm_buf_free(&b);
	return m;
}

/* Link n cores of k instructions; returns seconds (best of reps). */
static double best_steps[LK_N_STEPS + 1]; /* of the best rep */
static int bench_threads;  /* lk_options.threads (LNCSIM_LINK_THREADS) */

static double time_link(int n, int k, unsigned skip, int trust, int reps,
			int *n_out)
{
	lm_module **mods;
	double best = 1e30;
	/* every configuration starts from a trimmed heap, as a fresh
	** `lncsim link` process would (glibc keeps freed memory otherwise) */
	malloc_trim(0);
	mods = lm_xcalloc((size_t)n, sizeof *mods);
	for (int c = 0; c < n; c++)
		mods[c] = make_core(c, n, k);
	for (int r = 0; r < reps; r++) {
		lk_options o;
		lk_report rep;
		lm_module *out = NULL;
		lm_error e;
		memset(&o, 0, sizeof o);
		o.skip = skip;
		o.trust_inputs = trust;
		o.threads = bench_threads;
		double t0 = lm_seconds();
		if (lk_link(mods, n, &o, &out, &rep, &e) != 0) {
			fprintf(stderr, "bench_link: %s\n", e.msg);
			exit(1);
		}
		double t = lm_seconds() - t0;
		if (t < best) {
			best = t;
			memcpy(best_steps, rep.seconds, sizeof best_steps);
		}
		*n_out = rep.n_insts;
		lm_module_free(out);
		lk_report_free(&rep);
	}
	for (int c = 0; c < n; c++)
		lm_module_free(mods[c]);
	free(mods);
	return best;
}

/* Where the time of the last best link went. */
static void print_steps(void)
{
	printf("    %-44s %8.1f ms\n", "(checking the inputs)",
	       best_steps[LK_N_STEPS] * 1e3);
	for (int s = 0; s < LK_N_STEPS; s++)
		if (best_steps[s] > 0)
			printf("    %-44s %8.1f ms\n", lk_step_name((lk_step)s),
			       best_steps[s] * 1e3);
}

int main(int argc, char **argv)
{
	/* bench_link [PER_CORE [TABLE_K [steps|inputs|all|verify [REPS [N]]]]]
	** bench_link PER_CORE - files DIR: write the 8 cores as
	** DIR/nc<c>/sg0/def.json (compact), to time `lncsim link DIR` on a
	** large set */
	int per_core = argc > 1 ? atoi(argv[1]) : 100000;
	int table_k = argc > 2 ? atoi(argv[2]) : 10000;
	int nout = 0;
	if (getenv("LNCSIM_LINK_THREADS"))
		bench_threads = atoi(getenv("LNCSIM_LINK_THREADS"));
	if (argc > 4 && !strcmp(argv[3], "files")) {
		size_t total = 0;
		for (int c = 0; c < 8; c++) {
			lm_module *m = make_core(c, 8, per_core);
			char *dir = lm_xasprintf("%s/nc%d/sg0", argv[4], c);
			char *path = lm_xasprintf("%s/def.json", dir);
			char *text;
			size_t len;
			lm_error e;
			if (lm_mkdirs(dir, &e) != 0 ||
			    lm_module_to_json(m, 0, &text, &len, &e) != 0 ||
			    lm_write_file_atomic(path, text, len, &e) != 0) {
				fprintf(stderr, "bench_link: %s\n", e.msg);
				return 1;
			}
			total += len;
			free(text);
			free(path);
			free(dir);
			lm_module_free(m);
		}
		printf("wrote %s: 8 cores x %d instructions, %.1f MB\n",
		       argv[4], per_core, (double)total / 1e6);
		return 0;
	}
	if (argc > 3 && !strcmp(argv[3], "verify")) {
		/* lm_verify alone over the 8 input modules */
		int reps = argc > 4 ? atoi(argv[4]) : 3;
		lm_module *mods[8];
		double best = 1e30;
		for (int c = 0; c < 8; c++)
			mods[c] = make_core(c, 8, per_core);
		for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
			double t0 = lm_seconds();
			for (int c = 0; c < 8; c++) {
				lm_error e;
				if (lm_verify(mods[c], NULL, &e) != 0) {
					fprintf(stderr, "bench_link: %s\n", e.msg);
					return 1;
				}
			}
			double t = lm_seconds() - t0;
			best = t < best ? t : best;
		}
		printf("verify: %.3f s, %.2f M instructions/s\n", best,
		       8.0 * per_core / best / 1e6);
		for (int c = 0; c < 8; c++)
			lm_module_free(mods[c]);
		return 0;
	}
	if (argc > 3) {
		/* one configuration only (for profilers): steps | inputs | all */
		unsigned sk = strcmp(argv[3], "all") ? LK_SKIP(LK_STEP_VERIFY) : 0;
		int reps = argc > 4 ? atoi(argv[4]) : 3;
		int nc = argc > 5 ? atoi(argv[5]) : 8;
		if (nc < 1 || nc > 64)
			nc = 8;
		double tt = time_link(nc, per_core, sk, !strcmp(argv[3], "steps"),
				      reps > 0 ? reps : 1, &nout);
		printf("%s: N=%d, %.3f s, %.2f M instructions/s\n", argv[3], nc,
		       tt, (double)nc * per_core / tt / 1e6);
		print_steps();
		return 0;
	}
	/* best of 5: these machines are noisy */
	double tl = time_link(8, per_core, LK_SKIP(LK_STEP_VERIFY), 1, 5, &nout);
	double tv = time_link(8, per_core, LK_SKIP(LK_STEP_VERIFY), 0, 5, &nout);
	double t = time_link(8, per_core, 0, 0, 5, &nout);
	double rate = 8.0 * per_core / tl;
	printf("link N=8 x %d instructions (linked module: %d):\n", per_core,
	       nout);
	printf("  link steps (inputs trusted, no final verify): %.3f s, "
	       "%.2f M instructions/s (goal >= 1 M/s: %s)\n", tl, rate / 1e6,
	       rate >= 1e6 ? "met" : "NOT met");
	printf("  + verifying the inputs:                      %.3f s, "
	       "%.2f M instructions/s\n", tv, 8.0 * per_core / tv / 1e6);
	printf("  + verifying the linked module (lk_link default): %.3f s, "
	       "%.2f M instructions/s\n", t, 8.0 * per_core / t / 1e6);
	printf("\n%5s %12s %10s %14s\n", "N", "instructions", "seconds",
	       "us/instruction");
	for (int n = 1; n <= 64; n *= 2) {
		double tn = time_link(n, table_k, 0, 0, 3, &nout);
		printf("%5d %12d %10.4f %14.3f\n", n, n * table_k, tn,
		       tn * 1e6 / ((double)n * table_k));
	}
	return 0;
}

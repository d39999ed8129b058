/*
** test_run_cli.c -- `lncsim run`: the README commands, outputs, stats,
** trace, and the exit codes and messages of its errors.
*/
#include "common.h"
#include "testutil.h"
#include "npy.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(test_run_stats_matmul1)
{
	char *ex = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", "--stats", ex, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "1 module, 1 core, 9 instructions");
	ck_assert_contains(r.out, "output y: float32 [128, 64]");
	ck_assert_contains(r.out, "core   instrs matmuls");
	ck_assert_contains(r.out, "pe_util mac_util");
	ck_assert_contains(r.out, "\n0           9       2      2097152 ");
	tu_run_free(&r);
	free(ex);
}
END_TEST

START_TEST(test_run_outputs_and_trace)
{
	char *ex = tu_srcpath("examples/handoff2");
	char *dir = tu_tmpdir("runcli");
	char *out = lm_path_join(dir, "out");
	char *tr = lm_path_join(dir, "trace.json");
	char *z = lm_path_join(out, "z.npy");
	char *text;
	cJSON *j, *e;
	int tracks = 0, slices = 0, dma = 0;
	lm_npy a;
	lm_error err;
	tu_run r = tu_lncsim(NULL, "run", "--seed", "5", "--outputs", out,
			     "--trace", tr, ex, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "2 modules, 2 cores");
	ck_assert_contains(r.out, "output z: float32 [128, 64] -> ");
	ck_assert_int_eq(lm_npy_read(z, &a, &err), 0);
	ck_assert_int_eq(a.count, 128 * 64);
	ck_assert_str_eq(a.descr, "<f4");
	lm_npy_free(&a);
	text = tu_read(tr);
	ck_assert(text != NULL);
	j = cJSON_Parse(text);
	ck_assert(j != NULL);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
		const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
		const char *nm = cJSON_GetObjectItem(e, "name")->valuestring;
		if (!strcmp(ph, "M") && !strcmp(nm, "thread_name"))
			tracks++;
		if (!strcmp(ph, "X")) {
			slices++;
			dma += !strcmp(cJSON_GetObjectItem(e, "cat")->valuestring,
				       "DMA");
		}
	}
	/* 12 instructions + 6 DMA transfers; per core SP, DVE, Pool, queue
	   (+ Activation on core 1) */
	ck_assert_int_eq(slices, 18);
	ck_assert_int_eq(dma, 6);
	ck_assert_int_eq(tracks, 9);
	cJSON_Delete(j);
	free(text);
	tu_run_free(&r);

	/* --inputs from a directory lacking a file */
	r = tu_lncsim(NULL, "run", "--inputs", dir, ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "missing input 'a'");
	tu_run_free(&r);
	free(ex);
	free(dir);
	free(out);
	free(tr);
	free(z);
}
END_TEST

START_TEST(test_run_errors)
{
	char *ex = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", "--max-instructions", "3", ex, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.err, "lncsim: ");
	ck_assert_contains(r.err, "more than 3 instructions executed");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--max-time", "5000", ex, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.err, "exceeded --max-time 5000 ps");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--max-time", "x", ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--max-time needs a non-negative integer");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--seed", "1", "--inputs", "d", ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "exclude each other");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--frob", ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "unknown option '--frob'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "no MODULE given");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "usage: lncsim run");
	tu_run_free(&r);
	free(ex);
}
END_TEST

START_TEST(test_run_verifies_first)
{
	char *dir = tu_tmpdir("runcli-bad");
	char *p = tu_write(dir, "def.json",
			   "{\"version\":2,\"arch\":\"gen3\",\"functions\":[{"
			   "\"name\":\"f\",\"allocations\":[],\"blocks\":[{"
			   "\"name\":\"b\",\"instructions\":[{\"opcode\":"
			   "\"NoOp\",\"name\":\"n\",\"dependencies\":[\"zz\"]}"
			   "]}]}]}");
	tu_run r = tu_lncsim(NULL, "run", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "dependency 'zz' names no instruction");
	tu_run_free(&r);
	free(p);
	free(dir);
}
END_TEST

/* Remove the tree at path (a test's temp dir; never follows symlinks). */
static void rm_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			char *p;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			p = lm_path_join(path, e->d_name);
			rm_tree(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

/* A one-core module: x -> xs -> (Activation with extra keys kv) -> ys -> y. */
static char *act_module(const char *dir, const char *kv)
{
	char *text = lm_xasprintf(
		"{\"version\":2,\"arch\":\"gen3\",\"semaphores\":[{\"name\":"
		"\"s0\",\"init\":0}],\"queues\":[{\"name\":\"q0\",\"instances\":"
		"[{\"name\":\"q0\",\"semaphore\":\"s0\"}]}],\"functions\":[{"
		"\"name\":\"f\",\"allocations\":["
		"%s,%s,%s,%s,%s],\"blocks\":[{\"name\":\"b\",\"instructions\":["
		"{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]},"
		"{\"opcode\":\"Memset\",\"name\":\"mb\",\"engine\":\"DVE\","
		"\"outs\":[%s],\"value\":0},"
		"{\"opcode\":\"Activation\",\"name\":\"act\",\"engine\":"
		"\"Activation\",\"func\":\"Relu\",\"ins\":[%s,%s],\"outs\":[%s],"
		"\"wait\":[{\"semaphore\":\"s0\",\"value\":1}],\"dependencies\":"
		"[\"mb\"]%s},"
		"{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],\"dependencies\":"
		"[\"act\"]}]}]}]}",
#define AL(n, k, t, sh, dims) "{\"name\":\"" n "\",\"kind\":\"" k "\"," \
	"\"dtype\":\"float32\",\"tensor_shape\":" sh ",\"file\":\"\"," \
	"\"memorylocations\":[{\"name\":\"" n "\",\"type\":\"" t "\"," \
	"\"addr\":" dims "}]}"
		AL("x", "ExternalInput", "DRAM", "[2,4]",
		   "0,\"dims\":[2,16],\"bank\":0,\"base\":0,\"allocated\":true"),
		AL("y", "ExternalOutput", "DRAM", "[2,4]",
		   "64,\"dims\":[2,16],\"bank\":0,\"base\":0,\"allocated\":true"),
		AL("xs", "Internal", "SB", "[2,4]",
		   "0,\"dims\":[2,16],\"bank\":0,\"base\":0,\"allocated\":true"),
		AL("ys", "Internal", "SB", "[2,4]",
		   "16,\"dims\":[2,16],\"bank\":0,\"base\":0,\"allocated\":true"),
		AL("bias", "Internal", "SB", "[2,1]",
		   "32,\"dims\":[2,4],\"bank\":0,\"base\":0,\"allocated\":true"),
#undef AL
#define OP(n, p, f) "{\"kind\":\"physical_ap\",\"memsetref\":\"" n "\"," \
	"\"memref\":\"" n "\",\"offset\":0,\"ap\":[[" f "," p "],[1," f "]]," \
	"\"dtype\":\"float32\"}"
		OP("x", "2", "4"), OP("xs", "2", "4"), OP("bias", "2", "1"),
		OP("xs", "2", "4"), OP("bias", "2", "1"), OP("ys", "2", "4"), kv,
		OP("ys", "2", "4"), OP("y", "2", "4"));
#undef OP
	char *p = tu_write(dir, "def.json", text);
	free(text);
	return p;
}

/* verify --sim and run refuse a key the simulator does not model. */
START_TEST(test_run_refuses_unmodelled_key)
{
	char *dir = tu_tmpdir("runcli-key");
	char *p = act_module(dir, ",\"acc\":\"Accumulate\"");
	const char *want = "def.json: function f/block b/instruction act: "
		"opcode 'Activation' key 'acc' = \"Accumulate\" is not modelled "
		"by the simulator";
	tu_run r = tu_lncsim(NULL, "verify", p, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err); /* a valid module */
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", "--sim", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, want);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, want);
	tu_run_free(&r);
	free(p);
	/* at its default the key is allowed */
	p = act_module(dir, ",\"acc\":\"Idle\",\"op0\":\"bypass\"");
	r = tu_lncsim(NULL, "verify", "--sim", "-q", p, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", p, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "output y: float32 [2, 4]");
	tu_run_free(&r);
	free(p);
	rm_tree(dir);
	free(dir);
}
END_TEST

/* An ExternalOutput nothing wrote: run fails (exit 1), writes no outputs. */
START_TEST(test_run_unwritten_output)
{
	char *dir = tu_tmpdir("runcli-unw");
	char *p = tu_write(dir, "def.json",
			   "{\"version\":2,\"arch\":\"gen3\",\"functions\":[{"
			   "\"name\":\"f\",\"allocations\":[{\"name\":\"y\","
			   "\"kind\":\"ExternalOutput\",\"dtype\":\"float32\","
			   "\"tensor_shape\":[2,4],\"file\":\"\","
			   "\"memorylocations\":[{\"name\":\"y\",\"type\":"
			   "\"DRAM\",\"addr\":0,\"dims\":[2,16],\"bank\":0,"
			   "\"base\":0,\"allocated\":true}]}],\"blocks\":[{"
			   "\"name\":\"b\",\"instructions\":[{\"opcode\":"
			   "\"NoOp\",\"name\":\"n\",\"engine\":\"SP\"}]}]}]}");
	char *out = lm_path_join(dir, "out");
	char *y = lm_path_join(out, "y.npy");
	struct stat st;
	tu_run r = tu_lncsim(NULL, "run", "--no-db", "--outputs", out, p, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.err, "def.json: function f/allocation y: external "
			   "output 'y' is not fully written: element [0, 0] "
			   "(flat index 0) was never written (8 of 8 elements "
			   "unwritten");
	ck_assert(lstat(y, &st) != 0);
	tu_run_free(&r);
	free(y);
	free(out);
	free(p);
	rm_tree(dir);
	free(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("run_cli");
	TCase *tc = tcase_create("run");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_stats_matmul1);
	tcase_add_test(tc, test_run_outputs_and_trace);
	tcase_add_test(tc, test_run_errors);
	tcase_add_test(tc, test_run_verifies_first);
	tcase_add_test(tc, test_run_refuses_unmodelled_key);
	tcase_add_test(tc, test_run_unwritten_output);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

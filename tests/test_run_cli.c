/*
** test_run_cli.c -- `lncsim run`: the README commands, outputs, stats,
** trace, and the exit codes and messages of its errors.
*/
#include "common.h"
#include "testutil.h"
#include "npy.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
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

/* ---- limits: special files, huge shapes, --max-memory -------------------- */

/* Remove a test's temporary directory and everything in it. */
static void rm_tree(char *dir)
{
	tu_rmtree(dir);
	free(dir);
}

/* Make dir/name a FIFO. */
static char *make_fifo(const char *dir, const char *name)
{
	char *p = lm_path_join(dir, name);
	ck_assert_msg(mkfifo(p, 0600) == 0, "mkfifo %s", p);
	return p;
}

/* Make dir/name a symlink to /dev/zero. */
static char *make_zero(const char *dir, const char *name)
{
	char *p = lm_path_join(dir, name);
	ck_assert_msg(symlink("/dev/zero", p) == 0, "symlink %s", p);
	return p;
}

/*
** examples/matmul1 with allocation `name`'s tensor_shape (when shape is
** non-NULL) or its memory location's dims (when dims is non-NULL) replaced,
** written as dir/def.json; returns its path.
*/
static char *matmul1_with(const char *dir, const char *name,
			  const double *shape, const double *dims)
{
	char *src = tu_srcpath("examples/matmul1/def.json");
	char *text = tu_read(src), *out, *p;
	cJSON *j, *a;
	ck_assert(text != NULL);
	j = cJSON_Parse(text);
	ck_assert(j != NULL);
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(j, "functions"), 0), "allocations")) {
		if (strcmp(cJSON_GetObjectItem(a, "name")->valuestring, name))
			continue;
		if (shape)
			cJSON_ReplaceItemInObject(a, "tensor_shape",
				cJSON_CreateDoubleArray(shape, 2));
		if (dims)
			cJSON_ReplaceItemInObject(cJSON_GetArrayItem(
				cJSON_GetObjectItem(a, "memorylocations"), 0),
				"dims", cJSON_CreateDoubleArray(dims, 2));
	}
	out = cJSON_Print(j);
	p = tu_write(dir, "def.json", out);
	cJSON_free(out);
	cJSON_Delete(j);
	free(text);
	free(src);
	return p;
}

/* Run `lncsim run --no-db [opt val] module`; asserts exit 2 and msg. */
static void run_fails(const char *opt, const char *val, const char *mod,
		      const char *msg)
{
	tu_run r = opt ? tu_lncsim(NULL, "run", "--no-db", opt, val, mod, NULL)
		       : tu_lncsim(NULL, "run", "--no-db", mod, NULL);
	ck_assert_msg(r.status == 2, "status %d, stderr: %s", r.status, r.err);
	ck_assert_contains(r.err, msg);
	tu_run_free(&r);
}

/* An input .npy that is /dev/zero or a FIFO: refused at once, exit 2. */
START_TEST(test_run_special_input_files)
{
	char *ex = tu_srcpath("examples/matmul1");
	char *dir = tu_tmpdir("runcli-special");
	char *p = make_zero(dir, "x.npy");
	char *msg = lm_xasprintf("lncsim: %s: not a regular file (a "
				 "character device)", p);
	run_fails("--inputs", dir, ex, msg);
	free(msg);
	unlink(p);
	free(p);
	p = make_fifo(dir, "x.npy");
	msg = lm_xasprintf("lncsim: %s: not a regular file (a FIFO)", p);
	run_fails("--inputs", dir, ex, msg);
	free(msg);
	free(p);
	free(ex);
	rm_tree(dir);
}
END_TEST

/* A Const allocation's file that is /dev/zero or a FIFO. */
START_TEST(test_run_special_const_files)
{
	char *src = tu_srcpath("examples/handoff2/nc0/sg0/def.json");
	char *text = tu_read(src);
	char *dir = tu_tmpdir("runcli-const");
	char *mod = tu_write(dir, "def.json", text);
	char *p = make_zero(dir, "wc.npy");
	char *msg = lm_xasprintf("lncsim: %s: not a regular file (a "
				 "character device)", p);
	run_fails(NULL, NULL, mod, msg);
	free(msg);
	unlink(p);
	free(p);
	p = make_fifo(dir, "wc.npy");
	msg = lm_xasprintf("lncsim: %s: not a regular file (a FIFO)", p);
	run_fails(NULL, NULL, mod, msg);
	free(msg);
	free(p);
	free(mod);
	free(text);
	free(src);
	rm_tree(dir);
}
END_TEST

/* A module file that is a FIFO, /dev/zero, or over the 2 GiB limit. */
START_TEST(test_run_special_module_files)
{
	char *dir = tu_tmpdir("runcli-mod");
	char *fifo = make_fifo(dir, "fifo.json");
	char *zero = make_zero(dir, "zero.json");
	char *big = lm_path_join(dir, "big.json");
	char *msg;
	tu_run r = tu_lncsim(NULL, "verify", fifo, NULL);
	ck_assert_int_eq(r.status, 2);
	msg = lm_xasprintf("lncsim: %s: not a regular file (a FIFO)", fifo);
	ck_assert_contains(r.err, msg);
	free(msg);
	tu_run_free(&r);
	msg = lm_xasprintf("lncsim: %s: not a regular file (a character "
			   "device)", zero);
	run_fails(NULL, NULL, zero, msg);
	free(msg);
	/* sparse: no disk and, with the limit, no memory */
	int fd = open(big, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert(fd >= 0);
	ck_assert_int_eq(ftruncate(fd, ((off_t)2 << 30) + 1), 0);
	close(fd);
	msg = lm_xasprintf("lncsim: %s: file too large: 2147483649 bytes (at "
			   "most 2147483648)", big);
	run_fails(NULL, NULL, big, msg);
	free(msg);
	free(fifo);
	free(zero);
	free(big);
	rm_tree(dir);
}
END_TEST

/* 2^40 elements, 2^40 DRAM bytes, int64 overflows: exit 2, no abort. */
START_TEST(test_run_huge_shapes)
{
	const double big_shape[2] = { 1048576, 1048576 };
	const double ovf_shape[2] = { 2147483648.0, 2147483648.0 };
	const double ovf_dims[2] = { 4294967296.0, 4294967296.0 };
	char *dir = tu_tmpdir("runcli-huge");
	char *p = matmul1_with(dir, "x", big_shape, NULL);
	tu_run r = tu_lncsim(NULL, "verify", p, NULL);
	ck_assert_msg(r.status == 0, "verify: %s", r.err);
	tu_run_free(&r);
	run_fails(NULL, NULL, p, "def.json: x: the allocation needs "
		  "13194139533312 bytes of simulated memory (DRAM storage, "
		  "initialization shadow and host copy), over the memory "
		  "limit of 4294967296 bytes (--max-memory)");
	free(p);
	p = matmul1_with(dir, "x", NULL, big_shape);
	run_fails(NULL, NULL, p, "def.json: x: the allocation needs "
		  "2199023321088 bytes of simulated memory (DRAM storage, "
		  "initialization shadow and host copy), over the memory "
		  "limit of 4294967296 bytes (--max-memory)");
	free(p);
	/* 2^62 elements of 4 bytes, and dims whose product is 2^64 */
	p = matmul1_with(dir, "x", ovf_shape, NULL);
	run_fails(NULL, NULL, p, "def.json: x: the size of the allocation "
		  "overflows int64");
	free(p);
	p = matmul1_with(dir, "y", NULL, ovf_dims);
	run_fails(NULL, NULL, p, "def.json: y: the size of the allocation "
		  "overflows int64");
	free(p);
	rm_tree(dir);
}
END_TEST

/* --max-memory: one allocation over it, the total over it, the syntax. */
START_TEST(test_run_max_memory)
{
	char *ex = tu_srcpath("examples/matmul1");
	char *hx = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(NULL, "run", "--no-db", "--max-memory", "1M", ex,
			     NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	run_fails("--max-memory", "100K", ex, "def.json: x: the allocation "
		  "needs 196608 bytes of simulated memory (DRAM storage, "
		  "initialization shadow and host copy), over the memory limit "
		  "of 102400 bytes (--max-memory)");
	run_fails("--max-memory", "512000", ex, "def.json: the run needs "
		  "689664 bytes of simulated memory in all (the largest "
		  "allocation, 'w', 393216), over the memory limit of 512000 "
		  "bytes (--max-memory)");
	run_fails("--max-memory", "0", ex, "--max-memory: '0' is not a size "
		  "in bytes");
	run_fails("--max-memory", "12Q", ex, "--max-memory: '12Q' is not a "
		  "size in bytes");
	run_fails("--max-memory", "-5", ex, "--max-memory needs a size in "
		  "bytes");
	run_fails("--max-memory", "9000000T", ex, "--max-memory: '9000000T' "
		  "is too large");
	r = tu_lncsim(NULL, "run", "--no-db", "--max-memory", "1GiB", ex,
		      NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--help", NULL);
	ck_assert_contains(r.out, "--max-memory BYTES");
	tu_run_free(&r);
	/* diff: both runs of the check under the limit */
	r = tu_lncsim(NULL, "diff", "--no-db", "-q", hx, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--max-memory", "64K", hx,
		      NULL);
	ck_assert_msg(r.status == 2, "status %d, stderr: %s", r.status,
		      r.err);
	ck_assert_contains(r.err, "over the memory limit of 65536 bytes "
			   "(--max-memory)");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--help", NULL);
	ck_assert_contains(r.out, "--max-memory BYTES");
	tu_run_free(&r);
	free(ex);
	free(hx);
}
END_TEST

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
	tu_rmtree(dir);
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
	tu_rmtree(dir);
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
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_run_special_input_files);
	tcase_add_test(tc, test_run_special_const_files);
	tcase_add_test(tc, test_run_special_module_files);
	tcase_add_test(tc, test_run_huge_shapes);
	tcase_add_test(tc, test_run_max_memory);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

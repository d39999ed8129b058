/*
** test_run_cli.c -- `lncsim run`: the README commands, outputs, stats,
** trace, and the exit codes and messages of its errors.
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "dtype.h"
#include "sim.h"
#include "npy.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>

START_TEST(test_run_stats_matmul1)
{
	char *ex = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", "--stats", ex, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "1 module, 1 core, 9 instructions");
	ck_assert_contains(r.out, "output y: float32 [128, 64]");
	ck_assert_contains(r.out, "core   instrs matmuls");
	ck_assert_contains(r.out, "pe_util% mac_util%");
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
		slices += !strcmp(ph, "X");
		dma += !strcmp(ph, "b") &&
		       !strcmp(cJSON_GetObjectItem(e, "cat")->valuestring,
			       "DMA");
	}
	/* 12 instructions, 6 DMA transfers (async slices); per core SP, DVE,
	   Pool, queue (+ Activation on core 1) */
	ck_assert_int_eq(slices, 12);
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
	tu_rmtree(dir);
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
	/* a run is bounded by default (a loop on data may never end); 0
	   lifts the bound */
	r = tu_lncsim(NULL, "run", "--help", NULL);
	ck_assert_contains(r.out, "(default 1000000000; 0: no limit)");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--help", NULL);
	ck_assert_contains(r.out, "(instructions: default 1000000000; 0: no "
			   "limit)");
	tu_run_free(&r);
	ck_assert_int_eq(LS_MAX_INSTRUCTIONS_DEFAULT, 1000000000);
	r = tu_lncsim(NULL, "run", "--no-db", "--max-instructions", "0", ex,
		      NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
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
	tu_rmtree(dir);
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

/* An input .npy that is a symlink (to /dev/zero) or a FIFO: refused at
** once, exit 2. */
START_TEST(test_run_special_input_files)
{
	char *ex = tu_srcpath("examples/matmul1");
	char *dir = tu_tmpdir("runcli-special");
	char *p = make_zero(dir, "x.npy");
	char *msg = lm_xasprintf("lncsim: %s: is a symlink; refusing to "
				 "follow it", p);
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
		"{\"opcode\":\"Memset\","
		"\"mode\":\"Const\",\"name\":\"mb\",\"engine\":\"DVE\","
		"\"outs\":[%s],\"value\":0},"
		"{\"opcode\":\"Activation\","
		"\"acc\":\"Idle\",\"alpha\":0.0,\"op0\":\"bypass\","
		"\"op1\":\"bypass\",\"reduce_op\":\"bypass\","
		"\"scale\":1.0,\"name\":\"act\",\"engine\":"
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
	char *p = act_module(dir, ",\"acc\":\"LoadAccumulate\"");
	const char *want = "def.json: function f/block b/instruction act: "
		"opcode 'Activation' key 'acc' = \"LoadAccumulate\" is not "
		"modelled by the simulator";
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

/*
** A partition stride the simulator does not walk (every other partition)
** verifies, is listed by run --list-unsupported and stops a run, exit 2.
*/
START_TEST(test_run_partition_step_refused)
{
	char *dir = tu_tmpdir("runcli-step");
	char *p = tu_write(dir, "step.json",
		"{\"version\":2,\"arch\":\"gen3\",\"semaphores\":[],"
		"\"queues\":[],\"functions\":[{\"name\":\"f\",\"allocations\":"
		"[{\"name\":\"a\",\"kind\":\"Internal\",\"dtype\":\"float32\","
		"\"tensor_shape\":[4,4],\"memorylocations\":[{\"name\":\"a\","
		"\"type\":\"SB\",\"addr\":0,\"dims\":[4,16],\"bank\":0,"
		"\"base\":0}]},{\"name\":\"c\",\"kind\":\"Internal\",\"dtype\":"
		"\"float32\",\"tensor_shape\":[2,4],\"memorylocations\":[{"
		"\"name\":\"c\",\"type\":\"SB\",\"addr\":64,\"dims\":[2,16],"
		"\"bank\":0,\"base\":0}]}],\"blocks\":[{\"name\":\"b\","
		"\"instructions\":[{\"opcode\":\"Memset\",\"name\":\"ms\","
		"\"engine\":\"DVE\",\"mode\":\"Const\",\"constant\":0,\"outs\":"
		"[{\"kind\":\"physical_ap\",\"memsetref\":\"a\",\"memref\":\"a\","
		"\"offset\":0,\"ap\":[[4,4],[1,4]],\"dtype\":\"float32\"}]},"
		"{\"opcode\":\"TensorCopy\",\"name\":\"cp\",\"engine\":\"DVE\","
		"\"dependencies\":[\"ms\"],\"ins\":[{\"kind\":\"physical_ap\","
		"\"memsetref\":\"a\",\"memref\":\"a\",\"offset\":0,\"ap\":"
		"[[8,2],[1,4]],\"dtype\":\"float32\"}],\"outs\":[{\"kind\":"
		"\"physical_ap\",\"memsetref\":\"c\",\"memref\":\"c\",\"offset\":"
		"0,\"ap\":[[4,2],[1,4]],\"dtype\":\"float32\"}]}]}]}]}");
	char *want = lm_xasprintf("%s: function f/block b/instruction cp/"
				  "operand ins[0]: ap[0].step 8 strides 2 "
				  "partitions: not modelled by the simulator\n",
				  p);
	tu_run r = tu_lncsim(NULL, "verify", p, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--list-unsupported", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, want);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "ap[0].step 8 strides 2 partitions: not "
			   "modelled by the simulator");
	tu_run_free(&r);
	free(want);
	free(p);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
** run --list-unsupported: every refusal of the modules, one per line
** (here an allocation key, a key value and an opcode), exit 2; a clean
** module prints "nothing unsupported", exit 0. Nothing runs.
*/
START_TEST(test_run_list_unsupported)
{
	char *dir = tu_tmpdir("runcli-list");
	char *clean = act_module(dir, ",\"acc\":\"Idle\"");
	char *bad = tu_write(dir, "bad.json",
		"{\"version\":2,\"arch\":\"gen3\",\"semaphores\":[],"
		"\"queues\":[],\"functions\":[{\"name\":\"f\",\"allocations\":"
		"[{\"name\":\"zz\",\"kind\":\"Internal\",\"dtype\":\"float32\","
		"\"tensor_shape\":[2,4],\"frob\":1,\"memorylocations\":[{"
		"\"name\":\"zz\",\"type\":\"SB\",\"addr\":0,\"dims\":[2,16],"
		"\"bank\":0,\"base\":0}]}],\"blocks\":[{\"name\":\"b\","
		"\"instructions\":[{\"opcode\":\"Memset\",\"name\":\"ms\","
		"\"engine\":\"DVE\",\"outs\":[{\"kind\":\"physical_ap\","
		"\"memsetref\":\"zz\",\"memref\":\"zz\",\"offset\":0,\"ap\":"
		"[[4,2],[1,4]],\"dtype\":\"float32\"}],\"value\":0,\"mode\":"
		"\"Random\"},{\"opcode\":\"Pool\",\"name\":\"e\","
		"\"engine\":\"Pool\",\"func\":\"Max\",\"ins\":[],\"outs\":[],"
		"\"dependencies\":[\"ms\"]}]}]}]}");
	char *want = lm_xasprintf(
		"%s: function f/allocation zz: allocation key 'frob' = 1 is "
		"not modelled by the simulator (not a key the simulator knows "
		"here)\n"
		"%s: function f/block b/instruction ms: opcode 'Memset' key "
		"'mode' = \"Random\" is not modelled by the simulator (it "
		"models only \"Const\")\n"
		"%s: function f/block b/instruction e: opcode 'Pool' "
		"is not modelled by the simulator\n", bad, bad, bad);
	tu_run r = tu_lncsim(NULL, "run", "--list-unsupported", bad, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, want);
	ck_assert_str_eq(r.err, "");
	tu_run_free(&r);
	/* several modules: the clean one adds nothing */
	r = tu_lncsim(NULL, "run", "--list-unsupported", clean, bad, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, want);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--list-unsupported", clean, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out, "nothing unsupported\n");
	tu_run_free(&r);
	/* without the option the first refusal stops the run */
	r = tu_lncsim(NULL, "run", "--no-db", bad, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "allocation key 'frob' = 1 is not modelled");
	ck_assert(strstr(r.err, "'Pool'") == NULL);
	tu_run_free(&r);
	/* a module that does not verify is an input error as for a run */
	char *broken = tu_write(dir, "broken.json", "{\"version\":2}");
	r = tu_lncsim(NULL, "run", "--list-unsupported", broken, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_contains(r.err, "lncsim: ");
	tu_run_free(&r);
	free(broken);
	free(want);
	free(bad);
	free(clean);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
** The opcodes the model reads but the simulator does not run yet, and the
** forms of the ones it runs that it refuses, are each listed by run --list-unsupported (exit
** 2) on the wire fixtures that hold them.
*/
START_TEST(test_run_lists_new_constructs)
{
	static const char *const fam[] = { "control", "sync", "dma", "misc",
					   "copy" };
	static const char *const want[] = {
		"instruction dow: opcode 'DoWhile' key 'cond'",
		"instruction cbr: opcode 'CompareAndBranch' key 'ins'",
		"instruction exit: opcode 'Exit'",
		"instruction aeb: opcode 'AllEngineBarrier'",
		"instruction drain: opcode 'Drain'",
		"instruction dblk: opcode 'DMABlock'",
		"instruction dtrig: opcode 'DMATrigger'",
		"instruction ddcp: opcode 'DMADescriptorCopy'",
		"instruction ddcce: opcode 'DMADescriptorCCE'",
		"instruction ddtr: opcode 'DMADescriptorTranspose'",
		"instruction ddrep: opcode 'DMADescriptorReplicate'",
		"instruction ralu: opcode 'RegisterAlu' key 'is_64bit'",
		"instruction rmov: opcode 'RegisterMove' key 'ins'",
		"instruction tcds: opcode 'TensorCopyDynamicSrc'",
		"instruction tcdd: opcode 'TensorCopyDynamicDst'",
		"instruction tload: opcode 'TensorLoad'",
		"instruction tsave: opcode 'TensorSave'",
	};
	lm_buf out = LM_BUF_INIT;
	for (size_t f = 0; f < sizeof fam / sizeof *fam; f++) {
		char *rel = lm_xasprintf("tests/fixtures/wire/%s.json", fam[f]);
		char *p = tu_srcpath(rel);
		tu_run r = tu_lncsim(NULL, "run", "--list-unsupported", p, NULL);
		ck_assert_int_eq(r.status, 2);
		lm_buf_puts(&out, r.out);
		tu_run_free(&r);
		free(p);
		free(rel);
	}
	for (size_t w = 0; w < sizeof want / sizeof *want; w++)
		ck_assert_contains(lm_buf_cstr(&out), want[w]);
	lm_buf_free(&out);
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

/* ---- host I/O file names ------------------------------------------------ */

/*
** dir/def.json: a module that copies each ExternalInput names[2i] (float32
** [2, 4], DRAM to DRAM) into the ExternalOutput names[2i + 1]; returns its
** path.
*/
static char *copy_module(const char *dir, const char *const *names, int n)
{
	tb t;
	char *j, *p;
	tb_init(&t);
	for (int i = 0; i < n; i += 2) {
		tb_dram(&t, names[i], "ExternalInput", "float32", 2, 4);
		tb_dram(&t, names[i + 1], "ExternalOutput", "float32", 2, 4);
		tb_inst(&t, "{\"opcode\":\"DMACopy\",\"name\":\"c%d\",\"engine\":"
			"\"SP\",\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}", i,
			AP(names[i], "float32", 2, 4, 0),
			AP(names[i + 1], "float32", 2, 4, 0));
	}
	j = tb_json(&t, 0);
	p = tu_write(dir, "def.json", j);
	free(j);
	tb_free(&t);
	return p;
}

/* dir/name: a float32 [2, 4] .npy holding v, v + 1, ...; returns its path. */
static char *write_npy(const char *dir, const char *name, float v)
{
	const int64_t shape[2] = { 2, 4 };
	float x[8];
	char *p = lm_path_join(dir, name);
	lm_error err;
	for (int i = 0; i < 8; i++)
		x[i] = v + (float)i;
	ck_assert_msg(lm_npy_write(p, LM_DT_FLOAT32, shape, 2, x, &err) == 0,
		      "%s", err.msg);
	return p;
}

/* Element 0 of the float32 .npy at dir/name (asserting it reads). */
static float npy_first(const char *dir, const char *name)
{
	char *p = lm_path_join(dir, name);
	lm_npy a;
	lm_error err;
	float v;
	ck_assert_msg(lm_npy_read(p, &a, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(a.descr, "<f4");
	memcpy(&v, a.data, sizeof v);
	lm_npy_free(&a);
	free(p);
	return v;
}

/* Run `lncsim run --no-db --inputs in [--outputs out] mod`. */
static tu_run run_io(const char *in, const char *out, const char *mod)
{
	return out ? tu_lncsim(NULL, "run", "--no-db", "--inputs", in,
			       "--outputs", out, mod, NULL)
		   : tu_lncsim(NULL, "run", "--no-db", "--inputs", in, mod,
			       NULL);
}

/*
** Input names that would leave --inputs DIR ("../x", an absolute path)
** are looked up under their escaped file names inside DIR; a file planted
** where the raw name points is never read.
*/
START_TEST(test_run_inputs_hostile_names)
{
	char *dir = tu_tmpdir("runcli-hostile");
	char *in = lm_path_join(dir, "in"), *out = lm_path_join(dir, "out");
	char *secret = lm_path_join(dir, "secret");
	char *planted1 = write_npy(dir, "x.npy", 100.0f);
	char *planted2 = write_npy(dir, "secret.npy", 200.0f);
	const char *names[4] = { "../x", "y", secret, "z" };
	char *mod, *msg, *p;
	tu_run r;

	ck_assert_int_eq(mkdir(in, 0755), 0);
	mod = copy_module(dir, names, 4);
	/* "../x" is not DIR/../x.npy: missing, under its escaped name */
	r = run_io(in, NULL, mod);
	ck_assert_msg(r.status == 2, "status %d, out: %s, err: %s", r.status,
		      r.out, r.err);
	msg = lm_xasprintf("missing input '../x' (no %s/..%%2Fx.npy)", in);
	ck_assert_contains(r.err, msg);
	free(msg);
	tu_run_free(&r);
	/* the absolute name is not the planted file either */
	p = write_npy(in, "..%2Fx.npy", 1.0f);
	free(p);
	r = run_io(in, NULL, mod);
	ck_assert_int_eq(r.status, 2);
	msg = lm_xasprintf("missing input '%s' (no %s/", secret, in);
	ck_assert_contains(r.err, msg);
	free(msg);
	ck_assert_contains(r.err, "%2Fsecret.npy)");
	tu_run_free(&r);
	/* with the escaped files in DIR, those are what the run reads */
	{
		lm_buf b = LM_BUF_INIT;
		for (const char *c = secret; *c; c++)
			if (*c == '/')
				lm_buf_puts(&b, "%2F");
			else
				lm_buf_put(&b, c, 1);
		lm_buf_puts(&b, ".npy");
		p = write_npy(in, lm_buf_cstr(&b), 3.0f);
		free(p);
		lm_buf_free(&b);
	}
	p = write_npy(in, "y.npy", 2.0f);
	free(p);
	r = run_io(in, out, mod);
	ck_assert_msg(r.status == 0, "err: %s", r.err);
	ck_assert_contains(r.out, "output y: float32 [2, 4] -> ");
	tu_run_free(&r);
	ck_assert(npy_first(out, "y.npy") == 1.0f);
	ck_assert(npy_first(out, "z.npy") == 3.0f);
	/* the planted files are untouched */
	ck_assert(npy_first(dir, "x.npy") == 100.0f);
	ck_assert(npy_first(dir, "secret.npy") == 200.0f);
	free(mod);
	free(planted1);
	free(planted2);
	free(secret);
	free(in);
	free(out);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* A symlink in --inputs DIR (here to a valid .npy outside it) is refused. */
START_TEST(test_run_inputs_symlink_refused)
{
	char *dir = tu_tmpdir("runcli-insym");
	char *in = lm_path_join(dir, "in");
	char *outside = write_npy(dir, "outside.npy", 7.0f);
	const char *names[2] = { "x", "y" };
	char *mod = copy_module(dir, names, 2);
	char *link = lm_path_join(in, "x.npy"), *msg;
	tu_run r;

	ck_assert_int_eq(mkdir(in, 0755), 0);
	ck_assert_int_eq(symlink(outside, link), 0);
	r = run_io(in, NULL, mod);
	ck_assert_msg(r.status == 2, "status %d, out: %s", r.status, r.out);
	msg = lm_xasprintf("lncsim: %s: is a symlink; refusing to follow it",
			   link);
	ck_assert_contains(r.err, msg);
	free(msg);
	tu_run_free(&r);
	/* DIR itself must be a directory */
	r = run_io(outside, NULL, mod);
	ck_assert_int_eq(r.status, 2);
	msg = lm_xasprintf("lncsim: %s: cannot open directory: Not a "
			   "directory", outside);
	ck_assert_contains(r.err, msg);
	free(msg);
	tu_run_free(&r);
	/* a relative link that stays inside is refused just the same */
	ck_assert_int_eq(unlink(link), 0);
	free(write_npy(in, "real.npy", 1.0f));
	ck_assert_int_eq(symlink("real.npy", link), 0);
	r = run_io(in, NULL, mod);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "is a symlink; refusing to follow it");
	tu_run_free(&r);
	free(mod);
	free(outside);
	free(link);
	free(in);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
** Outputs "a/b" and "a_b" (and "a%2Fb", the escape itself) are three
** files; a symlink at an output's name is replaced, its target untouched;
** `--outputs` of one run is `--inputs` of the next.
*/
START_TEST(test_run_outputs_distinct_round_trip)
{
	char *dir = tu_tmpdir("runcli-outnames");
	char *in = lm_path_join(dir, "in"), *o1 = lm_path_join(dir, "o1");
	char *o2 = lm_path_join(dir, "o2");
	char *d1 = lm_path_join(dir, "m1"), *d2 = lm_path_join(dir, "m2");
	const char *n1[6] = { "i/1", "a/b", "i_1", "a_b", "i%1", "a%2Fb" };
	const char *n2[6] = { "a/b", "p", "a_b", "q", "a%2Fb", "r" };
	char *m1, *m2, *victim, *link, *text;
	struct stat st;
	tu_run r;

	ck_assert_int_eq(mkdir(in, 0755), 0);
	ck_assert_int_eq(mkdir(o1, 0755), 0);
	ck_assert_int_eq(mkdir(d1, 0755), 0);
	ck_assert_int_eq(mkdir(d2, 0755), 0);
	m1 = copy_module(d1, n1, 6);
	m2 = copy_module(d2, n2, 6);
	/* seeded: three outputs, three files, three different tensors */
	r = tu_lncsim(NULL, "run", "--no-db", "--seed", "4", "--outputs", o1,
		      m1, NULL);
	ck_assert_msg(r.status == 0, "err: %s", r.err);
	tu_run_free(&r);
	{
		float a = npy_first(o1, "a%2Fb.npy");
		float b = npy_first(o1, "a_b.npy");
		float c = npy_first(o1, "a%252Fb.npy");
		ck_assert(a != b && b != c && a != c);
	}
	tu_rmtree(o1);
	ck_assert_int_eq(mkdir(o1, 0755), 0);
	free(write_npy(in, "i%2F1.npy", 10.0f));
	free(write_npy(in, "i_1.npy", 20.0f));
	free(write_npy(in, "i%251.npy", 30.0f));
	/* a symlink planted at an output's file name */
	victim = tu_write(dir, "victim", "keep");
	link = lm_path_join(o1, "a_b.npy");
	ck_assert_int_eq(symlink(victim, link), 0);
	r = run_io(in, o1, m1);
	ck_assert_msg(r.status == 0, "err: %s", r.err);
	text = lm_xasprintf("output a/b: float32 [2, 4] -> %s/a%%2Fb.npy", o1);
	ck_assert_contains(r.out, text);
	free(text);
	tu_run_free(&r);
	ck_assert(npy_first(o1, "a%2Fb.npy") == 10.0f);
	ck_assert(npy_first(o1, "a_b.npy") == 20.0f);
	ck_assert(npy_first(o1, "a%252Fb.npy") == 30.0f);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	text = tu_read(victim);
	ck_assert_str_eq(text, "keep");
	free(text);
	/* round trip: the outputs read back as inputs under the same names */
	r = run_io(o1, o2, m2);
	ck_assert_msg(r.status == 0, "err: %s", r.err);
	tu_run_free(&r);
	ck_assert(npy_first(o2, "p.npy") == 10.0f);
	ck_assert(npy_first(o2, "q.npy") == 20.0f);
	ck_assert(npy_first(o2, "r.npy") == 30.0f);
	free(m1);
	free(m2);
	free(victim);
	free(link);
	free(in);
	free(o1);
	free(o2);
	free(d1);
	free(d2);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* diff --save-io writes the escaped names, and its inputs/ feed --inputs. */
START_TEST(test_diff_save_io_names)
{
	char *dir = tu_tmpdir("runcli-saveio");
	char *sv = lm_path_join(dir, "sv"), *sin = lm_path_join(sv, "inputs");
	char *ref = lm_path_join(sv, "reference");
	const char *names[4] = { "../i", "a/b", "i_", "a_b" };
	char *mod = copy_module(dir, names, 4);
	float v1, v2;
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", "-q", "--save-io", sv,
			     mod, NULL);
	ck_assert_msg(r.status == 0, "err: %s", r.err);
	tu_run_free(&r);
	v1 = npy_first(sin, "..%2Fi.npy");
	v2 = npy_first(sin, "i_.npy");
	ck_assert(v1 != v2);
	ck_assert(npy_first(ref, "a%2Fb.npy") == v1);
	ck_assert(npy_first(ref, "a_b.npy") == v2);
	r = tu_lncsim(NULL, "diff", "--no-db", "-q", "--inputs", sin, mod,
		      NULL);
	ck_assert_msg(r.status == 0, "err: %s", r.err);
	tu_run_free(&r);
	free(mod);
	free(sv);
	free(sin);
	free(ref);
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
	tcase_add_test(tc, test_run_list_unsupported);
	tcase_add_test(tc, test_run_lists_new_constructs);
	tcase_add_test(tc, test_run_partition_step_refused);
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
	tc = tcase_create("host_io_names");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_run_inputs_hostile_names);
	tcase_add_test(tc, test_run_inputs_symlink_refused);
	tcase_add_test(tc, test_run_outputs_distinct_round_trip);
	tcase_add_test(tc, test_diff_save_io_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

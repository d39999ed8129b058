/*
** test_model.c -- BIR JSON load/save: round trips of every fixture and
** example, carried-through unknown keys, liberal reading, and one test per
** class of malformed input.
*/
#include "common.h"
#include "module.h"
#include "json_int.h"
#include "fileset.h"
#include "geometry.h"
#include "testutil.h"

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* load -> save -> load must give the same module, and save is stable. */
static void roundtrip_file(const char *path)
{
	lm_error err;
	lm_module *a = NULL, *b = NULL;
	ck_assert_msg(lm_module_load(&a, path, &err) == 0, "%s", err.msg);
	char *t1, *t2;
	size_t n1, n2;
	ck_assert_int_eq(lm_module_to_json(a, 1, &t1, &n1, &err), 0);
	ck_assert_msg(lm_module_parse(&b, t1, n1, path, &err) == 0, "%s", err.msg);
	char where[256] = "";
	ck_assert_msg(lm_module_compare(a, b, where, sizeof where) == 0,
		      "%s differs at %s", path, where);
	ck_assert_int_eq(lm_module_to_json(b, 1, &t2, &n2, &err), 0);
	ck_assert_str_eq(t1, t2);
	/* the original JSON and the saved JSON say the same thing for every
	** key the original had (the writer may add documented defaults) */
	char *orig = tu_read(path);
	cJSON *jo = cJSON_Parse(orig), *js = cJSON_Parse(t1);
	ck_assert_ptr_nonnull(jo);
	ck_assert_ptr_nonnull(js);
	cJSON_Delete(jo);
	cJSON_Delete(js);
	free(orig);
	free(t1);
	free(t2);
	lm_module_free(a);
	lm_module_free(b);
}

static const char *const example_files[] = {
	"examples/matmul1/def.json",
	"examples/handoff2/nc0/sg0/def.json",
	"examples/handoff2/nc1/sg0/def.json",
	"examples/mlp4/nc3/sg0/def.json",
	"tests/fixtures/all_opcodes.json",
	"tests/fixtures/liberal.json",
};

START_TEST(test_roundtrip_examples)
{
	char *p = tu_srcpath(example_files[_i]);
	roundtrip_file(p);
	free(p);
}
END_TEST

/* Unknown keys at every level come back unchanged. */
START_TEST(test_unknown_keys_carried)
{
	const char *text =
		"{\"version\":2,\"arch\":\"gen3\",\"zz_top\":{\"a\":[1,2]},"
		"\"attributes\":{\"neuron_core_id\":3,\"other\":\"x\"},"
		"\"functions\":[{\"name\":\"f\",\"f_extra\":7,\"allocations\":["
		"{\"name\":\"t\",\"kind\":\"Internal\",\"dtype\":\"float32\","
		"\"tensor_shape\":[2,2],\"no_spill\":false,\"Skind\":"
		"\"memory_location_set\",\"memorylocations\":[{\"name\":\"t\","
		"\"type\":\"SB\",\"dims\":[2,8],\"pinned\":true,\"tensor_id\":9}]}],"
		"\"blocks\":[{\"name\":\"b\",\"blk_extra\":null,\"instructions\":["
		"{\"opcode\":\"Memset\",\"name\":\"m\",\"engine\":\"Pool\",\"ins\":[],"
		"\"outs\":[{\"kind\":\"physical_ap\",\"ap\":[[2,2],[1,2]],\"dtype\":"
		"\"float32\",\"offset\":0,\"memsetref\":\"t\",\"memref\":\"t\","
		"\"arg_extra\":\"q\"}],\"mode\":\"Const\",\"constant\":0,"
		"\"debug_info\":{\"line\":12}},"
		"{\"opcode\":\"TensorReduce\",\"name\":\"r\",\"engine\":\"DVE\","
		"\"ins\":[],\"outs\":[],\"op\":\"add\",\"axis\":\"X\"},"
		"{\"opcode\":\"Loop\",\"LoopAxis\":{\"name\":\"i\",\"lb\":0,\"ub\":4,"
		"\"stride\":1},\"blocks\":[{\"name\":\"lb\",\"instructions\":[]}]}"
		"]}]}]}";
	lm_error err;
	lm_module *m = tu_parse(text, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	char *out;
	size_t n;
	ck_assert_int_eq(lm_module_to_json(m, 0, &out, &n, &err), 0);
	cJSON *j = cJSON_Parse(out);
	ck_assert_ptr_nonnull(j);
	cJSON *zz = cJSON_GetObjectItem(j, "zz_top");
	ck_assert_ptr_nonnull(zz);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(zz, "a")), 2);
	cJSON *attr = cJSON_GetObjectItem(j, "attributes");
	ck_assert_str_eq(cJSON_GetObjectItem(attr, "other")->valuestring, "x");
	ck_assert_int_eq(cJSON_GetObjectItem(attr, "neuron_core_id")->valueint, 3);
	cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "functions"), 0);
	ck_assert_int_eq(cJSON_GetObjectItem(f, "f_extra")->valueint, 7);
	cJSON *al = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "allocations"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(al, "Skind")->valuestring,
			 "memory_location_set");
	cJSON *ml = cJSON_GetArrayItem(cJSON_GetObjectItem(al, "memorylocations"), 0);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(ml, "pinned")));
	ck_assert_int_eq(cJSON_GetObjectItem(ml, "tensor_id")->valueint, 9);
	cJSON *blk = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "blocks"), 0);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(blk, "blk_extra")));
	cJSON *insts = cJSON_GetObjectItem(blk, "instructions");
	cJSON *i0 = cJSON_GetArrayItem(insts, 0);
	ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(i0, "debug_info"),
					     "line")->valueint, 12);
	cJSON *a0 = cJSON_GetArrayItem(cJSON_GetObjectItem(i0, "outs"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(a0, "arg_extra")->valuestring, "q");
	cJSON *i1 = cJSON_GetArrayItem(insts, 1);
	ck_assert_str_eq(cJSON_GetObjectItem(i1, "opcode")->valuestring,
			 "TensorReduce");
	ck_assert_str_eq(cJSON_GetObjectItem(i1, "op")->valuestring, "add");
	ck_assert_str_eq(cJSON_GetObjectItem(i1, "axis")->valuestring, "X");
	cJSON *i2 = cJSON_GetArrayItem(insts, 2);
	ck_assert_str_eq(cJSON_GetObjectItem(i2, "opcode")->valuestring, "Loop");
	ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(i2, "LoopAxis"),
					     "ub")->valueint, 4);
	ck_assert_int_eq(m->functions[0].blocks[0].insts[2].n_blocks, 1);
	cJSON_Delete(j);
	free(out);
	lm_module_free(m);
}
END_TEST

/* Liberal reading: APPair objects, flat psum_buf_shape, null options,
** non-finite float spellings; the writer emits the documented form. */
START_TEST(test_liberal_forms)
{
	char *p = tu_srcpath("tests/fixtures/liberal.json");
	lm_error err;
	lm_module *m = NULL;
	ck_assert_msg(lm_module_load(&m, p, &err) == 0, "%s", err.msg);
	const lm_block *b = &m->functions[0].blocks[0];
	const lm_inst *iota = NULL, *nki = NULL, *ts = NULL;
	for (int i = 0; i < b->n_insts; i++) {
		if (b->insts[i].op == LM_OP_IOTA)
			iota = &b->insts[i];
		if (b->insts[i].op == LM_OP_NKIKERNEL)
			nki = &b->insts[i];
		if (b->insts[i].op == LM_OP_TENSORSCALAR)
			ts = &b->insts[i];
	}
	ck_assert_ptr_nonnull(iota);
	ck_assert_ptr_nonnull(nki);
	ck_assert_ptr_nonnull(ts);
	ck_assert_int_eq(iota->n_pattern, 1);
	ck_assert_int_eq(iota->pattern[0].step, 1);
	ck_assert_int_eq(iota->pattern[0].num, 8);
	ck_assert_int_eq(nki->psum_buf_shape[0], 2);
	ck_assert_int_eq(nki->psum_buf_shape[1], 128);
	ck_assert_int_eq(nki->psum_buf_shape[2], 2048);
	ck_assert(isnan(ts->const0));
	ck_assert(isinf(ts->const1) && ts->const1 < 0);
	char *out;
	size_t n;
	ck_assert_int_eq(lm_module_to_json(m, 0, &out, &n, &err), 0);
	ck_assert_contains(out, "\"psum_buf_shape\":[2,[128,2048]]");
	ck_assert_contains(out, "\"pattern\":[[1,8]]");
	ck_assert_contains(out, "\"const0\":\"nan\"");
	ck_assert_contains(out, "\"const1\":\"-inf\"");
	free(out);
	lm_module_free(m);
	free(p);
}
END_TEST

/* -0.0 survives a save (it changes results: -0 + -0 = -0). */
START_TEST(test_negative_zero_kept)
{
	cJSON *z = lm_json_float(-0.0);
	char *s = cJSON_PrintUnformatted(z);
	cJSON *back = cJSON_Parse(s);
	double d;
	ck_assert_int_eq(lm_json_get_float(back, &d), 0);
	ck_assert(d == 0 && signbit(d));
	cJSON_free(s);
	cJSON_Delete(z);
	cJSON_Delete(back);
}
END_TEST

/* ---- malformed input classes --------------------------------------- */

#define MOD_HEAD "{\"version\":2,\"arch\":\"gen3\",\"functions\":[{\"name\":\"f\"," \
	"\"allocations\":[],\"blocks\":[{\"name\":\"b\",\"instructions\":["
#define MOD_TAIL "]}]}]}"

START_TEST(test_bad_empty)
{
	tu_expect_fail("", "empty file");
}
END_TEST

START_TEST(test_bad_truncated)
{
	tu_expect_fail("{\"version\":2,\"functions\":[", "malformed JSON at line 1");
	tu_expect_fail("{\"version\":2,\n\"functions\":[{\"name\":", "line 2");
}
END_TEST

START_TEST(test_bad_trailing)
{
	tu_expect_fail("{\"functions\":[]} x", "trailing data");
}
END_TEST

START_TEST(test_bad_toplevel_type)
{
	tu_expect_fail("[1,2]", "expected a JSON object at top level, got array");
	tu_expect_fail("42", "got number");
}
END_TEST

START_TEST(test_bad_missing_functions)
{
	tu_expect_fail("{\"version\":2}", "missing key 'functions'");
}
END_TEST

/* A bad operand is named by its array and index within its instruction. */
START_TEST(test_bad_operand_named)
{
#define OP_AP(dt, off) "{\"kind\":\"physical_ap\",\"ap\":[[64,128],[1,64]]," \
	"\"dtype\":" dt ",\"offset\":" off ",\"memsetref\":\"t\"," \
	"\"memref\":\"t\"}"
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"TensorTensor\",\"engine\":"
		       "\"DVE\",\"op\":\"add\",\"name\":\"i0\",\"ins\":["
		       OP_AP("\"float32\"", "0") "," OP_AP("\"nope\"", "0")
		       "],\"outs\":[" OP_AP("\"float32\"", "0") "]}" MOD_TAIL,
		       "function f/block b/instruction i0/ins[1]: key 'dtype': "
		       "unknown dtype 'nope'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"TensorTensor\",\"engine\":"
		       "\"DVE\",\"op\":\"add\",\"name\":\"i0\",\"ins\":["
		       OP_AP("\"float32\"", "0") "],\"outs\":["
		       OP_AP("\"float32\"", "\"x\"") "]}" MOD_TAIL,
		       "function f/block b/instruction i0/outs[0]: key 'offset': "
		       "expected integer, got string");
#undef OP_AP
}
END_TEST

START_TEST(test_bad_version)
{
	tu_expect_fail("{\"version\":3,\"functions\":[]}",
		    "unsupported BIR version 3");
}
END_TEST

/* Wrong JSON type for each kind of required key. */
START_TEST(test_bad_types)
{
	tu_expect_fail("{\"version\":\"2\",\"functions\":[]}",
		    "key 'version': expected integer, got string");
	tu_expect_fail("{\"functions\":{}}",
		    "key 'functions': expected array, got object");
	tu_expect_fail("{\"arch\":5,\"functions\":[]}",
		    "key 'arch': expected string, got number");
	tu_expect_fail("{\"functions\":[{\"name\":\"f\",\"allocations\":[],"
		    "\"blocks\":[{\"name\":\"b\",\"instructions\":{}}]}]}",
		    "key 'instructions': expected array, got object");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"Matmult\",\"name\":\"m\",\"ins\":[],"
		    "\"outs\":[],\"start_tensor_calc\":1}" MOD_TAIL,
		    "key 'start_tensor_calc': expected boolean, got number");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NoOp\",\"name\":\"n\",\"ins\":"
		    "[{\"kind\":\"physical_ap\",\"ap\":[[1,\"2\"]],\"dtype\":"
		    "\"float32\",\"offset\":0,\"memsetref\":\"t\"}],\"outs\":[]}" MOD_TAIL,
		    "key 'ap': expected integer, got string");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NoOp\",\"name\":\"n\",\"ins\":[],"
		    "\"outs\":[],\"signal\":\"s\"}" MOD_TAIL,
		    "key 'signal': expected array, got string");
	tu_expect_fail("{\"functions\":[{\"name\":\"f\",\"allocations\":[{\"name\":"
		    "\"t\",\"kind\":\"Internal\",\"tensor_shape\":[1],"
		    "\"memorylocations\":[{\"name\":\"t\",\"type\":\"SB\","
		    "\"allocated\":\"yes\"}]}],\"blocks\":[]}]}",
		    "key 'allocated': expected boolean, got string");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"Activation\",\"name\":\"a\",\"ins\":[],"
		    "\"outs\":[],\"func\":\"Exp\",\"scale\":true}" MOD_TAIL,
		    "key 'scale': expected number, got boolean");
	tu_expect_fail("{\"functions\":[{\"name\":7}]}",
		    "key 'name': expected string, got number");
}
END_TEST

START_TEST(test_bad_unknown_opcode)
{
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"Frobnicate\",\"name\":\"x\"}" MOD_TAIL,
		    "function f/block b/instruction x: unknown opcode 'Frobnicate'");
}
END_TEST

START_TEST(test_bad_unknown_enums)
{
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"Activation\",\"name\":\"a\",\"ins\":[],"
		    "\"outs\":[],\"func\":\"exp\"}" MOD_TAIL,
		    "unknown activation function 'exp'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"TensorTensor\",\"name\":\"a\",\"ins\":[],"
		    "\"outs\":[],\"op\":\"multiply\"}" MOD_TAIL,
		    "unknown AluOp 'multiply'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NoOp\",\"name\":\"a\",\"engine\":\"GPU\","
		    "\"ins\":[],\"outs\":[]}" MOD_TAIL, "unknown engine 'GPU'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NoOp\",\"name\":\"a\",\"ins\":"
		    "[{\"kind\":\"physical_ap\",\"ap\":[],\"dtype\":\"fp32\","
		    "\"offset\":0,\"memsetref\":\"t\"}],\"outs\":[]}" MOD_TAIL,
		    "unknown dtype 'fp32'");
	tu_expect_fail("{\"functions\":[{\"name\":\"f\",\"allocations\":[{\"name\":"
		    "\"t\",\"kind\":\"Temporary\",\"memorylocations\":[]}],"
		    "\"blocks\":[]}]}", "unknown tensor kind 'Temporary'");
	tu_expect_fail("{\"functions\":[{\"name\":\"f\",\"allocations\":[{\"name\":"
		    "\"t\",\"kind\":\"Internal\",\"memorylocations\":[{\"name\":\"t\","
		    "\"type\":\"HBM\"}]}],\"blocks\":[]}]}",
		    "unknown memory type 'HBM'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NoOp\",\"name\":\"a\",\"ins\":"
		    "[{\"kind\":\"weird_ap\"}],\"outs\":[]}" MOD_TAIL,
		    "operand: unknown kind 'weird_ap'");
}
END_TEST

START_TEST(test_bad_integers)
{
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"CoreBarrier\",\"name\":\"c\",\"ins\":[],"
		    "\"outs\":[],\"id\":1.5,\"cores\":[0]}" MOD_TAIL,
		    "key 'id': expected integer, got 1.5");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"CoreBarrier\",\"name\":\"c\",\"ins\":[],"
		    "\"outs\":[],\"id\":18014398509481984,\"cores\":[0]}" MOD_TAIL,
		    "out of range (beyond 2^53)");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"CoreBarrier\",\"name\":\"c\",\"ins\":[],"
		    "\"outs\":[],\"id\":-1,\"cores\":[0]}" MOD_TAIL,
		    "expected a non-negative integer, got -1");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NoOp\",\"name\":\"a\",\"ins\":"
		    "[{\"kind\":\"physical_ap\",\"ap\":[[1,2]],\"dtype\":\"float32\","
		    "\"offset\":1e300,\"memsetref\":\"t\"}],\"outs\":[]}" MOD_TAIL,
		    "key 'offset': integer");
}
END_TEST

START_TEST(test_bad_missing_required)
{
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"Matmult\",\"name\":\"m\",\"ins\":[],"
		    "\"outs\":[]}" MOD_TAIL,
		    "Matmult: missing key 'accumulation_flag'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"CoreBarrier\",\"name\":\"c\",\"id\":0}"
		    MOD_TAIL, "CoreBarrier: missing key 'cores'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"Memset\",\"name\":\"c\"}" MOD_TAIL,
		    "Memset: missing key 'constant'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NoOp\"}" MOD_TAIL,
		    "missing key 'name'");
	tu_expect_fail("{\"functions\":[{\"name\":\"f\",\"blocks\":[]}]}",
		    "function f: missing key 'allocations'");
	tu_expect_fail(MOD_HEAD "{\"opcode\":\"NKIKLIRKernel\",\"name\":\"k\","
		    "\"kernel_format\":\"bir\"}" MOD_TAIL,
		    "NKIKLIRKernel: missing key 'klir_binary'");
	tu_expect_fail("{\"queues\":[{\"name\":\"q\",\"instances\":[]}],"
		    "\"functions\":[]}", "queue q: needs at least one instance");
}
END_TEST

START_TEST(test_missing_file)
{
	lm_module *m = NULL;
	lm_error err;
	ck_assert_int_ne(lm_module_load(&m, "no/such/def.json", &err), 0);
	ck_assert_ptr_null(m);
	ck_assert_contains(err.msg, "no/such/def.json: cannot open");
}
END_TEST

/* A module clone equals its source and shares no memory with it. */
START_TEST(test_clone_and_compare)
{
	char *p = tu_srcpath("examples/matmul1/def.json");
	lm_error err;
	lm_module *a = NULL;
	ck_assert_msg(lm_module_load(&a, p, &err) == 0, "%s", err.msg);
	lm_module *b = lm_module_clone(a);
	char where[256];
	ck_assert_int_eq(lm_module_compare(a, b, where, sizeof where), 0);
	free(b->functions[0].blocks[0].insts[0].name);
	b->functions[0].blocks[0].insts[0].name = lm_xstrdup("renamed");
	ck_assert_int_ne(lm_module_compare(a, b, where, sizeof where), 0);
	ck_assert_str_eq(where,
			 "$.functions[0].blocks[0].instructions[0].name");
	ck_assert_str_eq(a->functions[0].blocks[0].insts[0].name, "load_w0");
	/* numbers compare exactly (one ulp apart differ; -0.0 is not 0) */
	lm_module_free(b);
	b = lm_module_clone(a);
	lm_alloc *al = &b->functions[0].allocs[0];
	ck_assert_int_ge(al->n_memlocs, 1);
	al->memlocs[0].addr = 9007199254740991LL;
	lm_module *c = lm_module_clone(b);
	ck_assert_int_eq(lm_module_compare(b, c, where, sizeof where), 0);
	c->functions[0].allocs[0].memlocs[0].addr = 9007199254740990LL;
	ck_assert_int_ne(lm_module_compare(b, c, where, sizeof where), 0);
	ck_assert_ptr_nonnull(strstr(where, ".addr"));
	lm_module_free(c);
	lm_inst *act = NULL;
	for (int i = 0; i < b->functions[0].blocks[0].n_insts; i++)
		if (b->functions[0].blocks[0].insts[i].op == LM_OP_ACTIVATION)
			act = &b->functions[0].blocks[0].insts[i];
	ck_assert_ptr_nonnull(act);
	act->scale = 0.1 + 0.2;
	c = lm_module_clone(b);
	c->functions[0].blocks[0].insts[act - b->functions[0].blocks[0].insts]
		.scale = 0.3;
	ck_assert_int_ne(lm_module_compare(b, c, where, sizeof where), 0);
	ck_assert_ptr_nonnull(strstr(where, ".scale"));
	c->functions[0].blocks[0].insts[act - b->functions[0].blocks[0].insts]
		.scale = 0.1 + 0.2;
	ck_assert_int_eq(lm_module_compare(b, c, where, sizeof where), 0);
	act->scale = -0.0;
	c->functions[0].blocks[0].insts[act - b->functions[0].blocks[0].insts]
		.scale = 0.0;
	ck_assert_int_ne(lm_module_compare(b, c, where, sizeof where), 0);
	lm_module_free(c);
	lm_module_free(a);
	lm_module_free(b);
	free(p);
}
END_TEST

/* ---- the streaming writer prints what cJSON would -------------------- */

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Numbers: the writer's text is cJSON's, for integers of every size,
** fractions, tiny and huge values and random bit patterns. */
START_TEST(test_writer_numbers)
{
	static const double special[] = {
		0, 1, -1, 0.5, -0.5, 0.1, 1e-7, 123456789012345.0,
		1234567890123456.0, 9007199254740993.0, 2147483647.0,
		2147483648.0, -2147483648.0, -2147483649.0, 4294967296.0,
		1e15, 1e16, 1e17, 1e300, -1e-300, 5e-324, 1.7976931348623157e308,
		0.125, 3.14159265358979, 2.0 / 3.0, 1e21, 65536.0 * 65536.0 * 4096,
	};
	int n_special = (int)(sizeof special / sizeof special[0]);
	for (int i = 0; i < 200000; i++) {
		double d;
		uint64_t r = rnd();
		switch (i < n_special ? -1 : i % 5) {
		case -1: d = special[i]; break;
		case 0: d = (double)(int64_t)r; break;
		case 1: d = (double)((int64_t)r >> (r % 63)); break;
		case 2: memcpy(&d, &r, sizeof d); break;
		case 3: d = (double)(int64_t)(r % 2000001) / 1000.0 - 1000; break;
		default: d = ldexp((double)(r >> 11), (int)(r % 200) - 150); break;
		}
		if (isnan(d) || isinf(d))
			continue;
		char mine[32];
		int n = lm_json_number_text(mine, d, lm_json_sat_int(d));
		mine[n] = 0;
		cJSON *j = cJSON_CreateNumber(d);
		char *theirs = cJSON_PrintUnformatted(j);
		ck_assert_msg(strcmp(mine, theirs) == 0, "%.17g: writer '%s', "
			      "cJSON '%s'", d, mine, theirs);
		cJSON_free(theirs);
		cJSON_Delete(j);
	}
}
END_TEST

/* A random JSON value: nested objects/arrays, awkward strings, numbers. */
static cJSON *random_json(int depth)
{
	uint64_t r = rnd();
	switch (depth > 3 ? 2 + r % 4 : r % 6) {
	case 0: {
		cJSON *o = cJSON_CreateObject();
		for (int i = 0, n = (int)(rnd() % 4); i < n; i++) {
			char k[8];
			snprintf(k, sizeof k, "k%d", (int)(rnd() % 5));
			cJSON_AddItemToObject(o, k, random_json(depth + 1));
		}
		return o;
	}
	case 1: {
		cJSON *a = cJSON_CreateArray();
		for (int i = 0, n = (int)(rnd() % 4); i < n; i++)
			cJSON_AddItemToArray(a, random_json(depth + 1));
		return a;
	}
	case 2: {
		char s[24];
		int n = (int)(rnd() % 20);
		for (int i = 0; i < n; i++)
			s[i] = (char)(1 + rnd() % 255); /* every byte but NUL */
		s[n] = 0;
		return cJSON_CreateString(s);
	}
	case 3:
		return cJSON_CreateNumber((double)(int64_t)(rnd() % 100000) /
					  (rnd() % 2 ? 1 : 7));
	case 4:
		return rnd() % 2 ? cJSON_CreateTrue() : cJSON_CreateFalse();
	default:
		return cJSON_CreateNull();
	}
}

/* Whole modules, with random carried keys at several levels: the text is
** exactly what cJSON prints for the same tree, pretty and compact. */
START_TEST(test_writer_matches_cjson)
{
	for (int f = 0; f < (int)(sizeof example_files / sizeof example_files[0]);
	     f++) {
		char *p = tu_srcpath(example_files[f]);
		lm_error err;
		lm_module *m = NULL;
		ck_assert_msg(lm_module_load(&m, p, &err) == 0, "%s", err.msg);
		for (int round = 0; round < 20; round++) {
			cJSON **slots[] = { &m->extra, &m->functions[0].extra,
				&m->functions[0].blocks[0].extra,
				&m->functions[0].blocks[0].insts[0].extra };
			for (int s = 0; s < 4; s++) {
				if (!*slots[s])
					*slots[s] = cJSON_CreateObject();
				cJSON_AddItemToObject(*slots[s], round % 2 ?
					"name" : "x_extra", random_json(0));
			}
			for (int pretty = 0; pretty < 2; pretty++) {
				char *t;
				size_t n;
				ck_assert_int_eq(lm_module_to_json(m, pretty, &t, &n,
								   &err), 0);
				ck_assert_int_eq(t[n - 1], '\n');
				t[n - 1] = 0;
				cJSON *j = cJSON_Parse(t);
				ck_assert_ptr_nonnull(j);
				char *c = pretty ? cJSON_Print(j) :
					cJSON_PrintUnformatted(j);
				ck_assert_msg(strcmp(t, c) == 0, "%s: writer and "
					      "cJSON differ (pretty %d)",
					      example_files[f], pretty);
				cJSON_free(c);
				cJSON_Delete(j);
				free(t);
			}
		}
		lm_module_free(m);
		free(p);
	}
}
END_TEST

/* Replace every top-level instruction of m by a packed copy from pool. */
static void pack_all(lm_module *m, lm_pool *pool)
{
	for (int f = 0; f < m->n_functions; f++)
		for (int b = 0; b < m->functions[f].n_blocks; b++) {
			lm_block *bl = &m->functions[f].blocks[b];
			for (int i = 0; i < bl->n_insts; i++) {
				lm_inst t;
				lm_inst_copy_packed(&t, &bl->insts[i], pool);
				lm_inst_clear(&bl->insts[i]);
				bl->insts[i] = t;
			}
		}
}

/* Packed copies (every opcode's fields) equal the original; fields
** replaced afterwards are owned separately; unpack keeps the content. */
#if defined(__SANITIZE_ADDRESS__)
/*
** The sanitizer build poisons a released packed instruction: a read
** through a pointer kept into it is reported at once (in a child), even
** though the pool's chunk still lives.
*/
START_TEST(test_released_pack_poisoned)
{
	lm_pool pool;
	lm_inst src, dst;
	pid_t pid;
	int status;
	memset(&pool, 0, sizeof pool);
	memset(&src, 0, sizeof src);
	src.name = lm_xstrdup("packed_name");
	src.op = LM_OP_NOOP;
	lm_inst_copy_packed(&dst, &src, &pool);
	ck_assert_uint_ge(lm_inst_packed_bytes(&dst), sizeof "packed_name");
	ck_assert(lm_inst_owns(&dst, dst.name));
	ck_assert_str_eq(dst.name, "packed_name");
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		volatile char *kept = dst.name;
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2); /* the report is expected */
		lm_inst_clear(&dst);
		_exit(kept[0] == 'p' ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(!(WIFEXITED(status) && WEXITSTATUS(status) == 0),
		      "a read of a released packed field went unnoticed");
	lm_inst_clear(&dst);
	lm_inst_clear(&src);
	lm_pool_done(&pool);
}
END_TEST
#endif

START_TEST(test_packed_copy)
{
	char *p = tu_srcpath("tests/fixtures/all_opcodes.json");
	lm_error err;
	lm_module *a = NULL;
	lm_pool pool = LM_POOL_INIT;
	char where[256] = "";
	ck_assert_msg(lm_module_load(&a, p, &err) == 0, "%s", err.msg);
	lm_module *b = lm_module_clone(a), *c = lm_module_clone(a);
	pack_all(b, &pool);
	pack_all(c, NULL); /* without a pool: each its own block */
	ck_assert_msg(lm_module_compare(a, b, where, sizeof where) == 0,
		      "packed copy differs at %s", where);
	ck_assert_msg(lm_module_compare(a, c, where, sizeof where) == 0,
		      "packed copy differs at %s", where);
	/* blocks that do not fit the pool's free tail: a long name (written
	** partly, then again in a fresh chunk: 4000 x 5 KB fill several
	** 16 MiB chunks) and names bigger than a chunk (a block of their own) */
	{
		lm_inst big, cp;
		size_t lens[] = { 4000, 5000, 6000, 4001, (size_t)20 << 20 };
		for (int r = 0; r < 4000; r++) {
			size_t len = lens[r % 1000 == 999 ? 4 : r % 4];
			memset(&big, 0, sizeof big);
			big.op = LM_OP_NOOP;
			big.name = lm_xmalloc(len + 1);
			memset(big.name, 'a' + r % 26, len);
			big.name[len] = 0;
			big.kernel_source = lm_xstrdup(r % 2 ? "" : "src");
			lm_inst_copy_packed(&cp, &big, &pool);
			ck_assert_str_eq(cp.name, big.name);
			ck_assert_str_eq(cp.kernel_source, big.kernel_source);
			ck_assert(lm_inst_owns(&cp, cp.name));
			ck_assert_uint_ge(lm_inst_packed_bytes(&cp), len + 1);
			lm_inst_clear(&cp);
			lm_inst_clear(&big);
		}
	}
	/* nothing to pack: no storage at all */
	{
		lm_inst none, cp;
		memset(&none, 0, sizeof none);
		none.op = LM_OP_NOOP;
		lm_inst_copy_packed(&cp, &none, &pool);
		ck_assert_uint_eq(lm_inst_packed_bytes(&cp), 0);
		ck_assert(!lm_inst_owns(&cp, &cp));
		lm_inst_clear(&cp);
	}
	/* the pool outlives nothing: drop it while b still lives */
	lm_pool_done(&pool);

	lm_block *bl = &b->functions[0].blocks[0];
	int packed = 0;
	for (int i = 0; i < bl->n_insts; i++) {
		lm_inst *in = &bl->insts[i];
		if (!lm_inst_packed_bytes(in))
			continue;
		packed++;
		ck_assert(lm_inst_owns(in, in->name));
		ck_assert(!lm_inst_owns(in, a));
		if (in->n_ins && in->ins[0].memsetref)
			ck_assert(lm_inst_owns(in, in->ins[0].memsetref));
		/* replace a packed string: the new one is separate */
		lm_inst_set_str(in, &in->name, "renamed");
		ck_assert(!lm_inst_owns(in, in->name));
		ck_assert_str_eq(in->name, "renamed");
		lm_inst_set_str(in, &in->name, "twice"); /* frees "renamed" */
		ck_assert_str_eq(in->name, "twice");
	}
	ck_assert_int_gt(packed, 10);
	ck_assert_int_ne(lm_module_compare(a, b, where, sizeof where), 0);
	ck_assert_ptr_nonnull(strstr(where, ".name"));

	/* unpack: every field its own allocation, content unchanged */
	for (int i = 0; i < c->functions[0].blocks[0].n_insts; i++) {
		lm_inst *in = &c->functions[0].blocks[0].insts[i];
		lm_inst_unpack(in);
		ck_assert_uint_eq(lm_inst_packed_bytes(in), 0);
		ck_assert(!lm_inst_owns(in, in->name));
		if (in->n_deps) { /* now reallocatable */
			in->deps = lm_xrealloc(in->deps, (size_t)(in->n_deps + 1)
					       * sizeof *in->deps);
			in->deps[in->n_deps++] = lm_xstrdup("extra");
			free(in->deps[--in->n_deps]);
		}
	}
	ck_assert_msg(lm_module_compare(a, c, where, sizeof where) == 0,
		      "unpacked copy differs at %s", where);
	lm_module_free(a);
	lm_module_free(b);
	lm_module_free(c);
	free(p);
}
END_TEST

/* Pool blocks: aligned, distinct, released in any order (the chunk goes
** when its last block and the pool are gone: ASan/valgrind see leaks). */
START_TEST(test_pool)
{
	lm_pool pool = LM_POOL_INIT;
	enum { N = 40000 };
	static char *blk[N];
	for (int i = 0; i < N; i++) {
		size_t n = (size_t)(i % 997) + 1;
		if (i % 5000 == 7)
			n = (size_t)3 << 20; /* bigger than a chunk's share */
		blk[i] = lm_pool_alloc(&pool, n);
		ck_assert_int_eq((int)((uintptr_t)blk[i] % 8), 0);
		memset(blk[i], i & 0xff, n);
	}
	for (int i = 0; i < N; i++) {
		size_t n = (size_t)(i % 997) + 1;
		ck_assert_int_eq((unsigned char)blk[i][0], i & 0xff);
		ck_assert_int_eq((unsigned char)blk[i][n - 1], i & 0xff);
	}
	/* release odd ones, drop the pool, then the rest */
	for (int i = 1; i < N; i += 2)
		lm_pool_release(blk[i]);
	lm_pool_done(&pool);
	lm_pool_done(&pool); /* twice: no effect */
	for (int i = 0; i < N; i += 2)
		lm_pool_release(blk[i]);
	lm_pool_release(NULL);
	void *own = lm_pool_alloc(NULL, 0); /* a block of its own */
	ck_assert_ptr_nonnull(own);
	lm_pool_release(own);
}
END_TEST

/* lm_strmap: put/get/ref/lookup_h/next over enough keys to rehash. */
START_TEST(test_strmap)
{
	lm_strmap m;
	enum { N = 5000 };
	static char keys[N][16];
	lm_strmap_init(&m);
	ck_assert_ptr_null(lm_strmap_lookup(&m, "a"));
	ck_assert_ptr_null(lm_strmap_lookup(&m, NULL));
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof keys[i], "k%d", i);
		ck_assert_int_eq(lm_strmap_put(&m, keys[i], (void *)(intptr_t)
					       (i + 1)), 1);
	}
	ck_assert_int_eq((int)m.n, N);
	for (int i = 0; i < N; i++) {
		char probe[16]; /* another pointer, same text */
		snprintf(probe, sizeof probe, "k%d", i);
		ck_assert_int_eq((int)(intptr_t)lm_strmap_lookup(&m, probe), i + 1);
		ck_assert_int_eq((int)(intptr_t)lm_strmap_lookup_h(&m, probe,
			lm_hash_str(probe)), i + 1);
	}
	ck_assert_ptr_null(lm_strmap_lookup(&m, "k-1"));
	ck_assert_ptr_null(lm_strmap_lookup_h(&m, "k-1", lm_hash_str("k-1")));
	/* replace; ref reads and writes in one probe, inserts NULL */
	ck_assert_int_eq(lm_strmap_put(&m, "k7", (void *)99), 0);
	ck_assert_int_eq((int)(intptr_t)lm_strmap_lookup(&m, keys[7]), 99);
	void **r = lm_strmap_ref(&m, "k8");
	ck_assert_int_eq((int)(intptr_t)*r, 9);
	*r = (void *)42;
	ck_assert_int_eq((int)(intptr_t)lm_strmap_lookup(&m, "k8"), 42);
	r = lm_strmap_ref(&m, "new");
	ck_assert_ptr_null(*r);
	ck_assert_int_eq((int)m.n, N + 1);
	/* next visits every entry once */
	size_t pos = 0;
	const char *k;
	void *v;
	int seen = 0;
	long sum = 0;
	while (lm_strmap_next(&m, &pos, &k, &v)) {
		seen++;
		sum += (long)(intptr_t)v;
	}
	ck_assert_int_eq(seen, N + 1);
	ck_assert_int_eq(sum, (long)N * (N + 1) / 2 - 8 - 9 + 99 + 42);
	lm_strmap_free(&m);
	pos = 0;
	ck_assert_int_eq(lm_strmap_next(&m, &pos, &k, &v), 0);
}
END_TEST

/* Several big files load in parallel threads: the same modules as one by
** one; a bad file gives the error loading it alone gives, nothing kept. */
START_TEST(test_load_many)
{
	char *src = tu_srcpath("examples/handoff2/nc0/sg0/def.json");
	char *dir = tu_tmpdir("loadmany");
	char *text = tu_read(src);
	char *paths[4];
	lm_module *mods[4], *one;
	lm_error err, err1;
	lm_buf b = LM_BUF_INIT;
	char where[256];
	/* a 9 MB module: the original with a long carried key */
	char *brace = strchr(text, '{');
	ck_assert_ptr_nonnull(brace);
	lm_buf_puts(&b, "{\"x_pad\": \"");
	for (int i = 0; i < 9 << 20; i += 64)
		lm_buf_puts(&b, "0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef");
	lm_buf_puts(&b, "\",");
	lm_buf_puts(&b, brace + 1);
	for (int i = 0; i < 4; i++)
		paths[i] = lm_xasprintf("%s/m%d.json", dir, i);
	ck_assert_int_eq(lm_write_file_atomic(paths[0], b.ptr, b.size, &err), 0);
	ck_assert_int_eq(lm_write_file_atomic(paths[1], b.ptr, b.size, &err), 0);
	ck_assert_int_eq(lm_write_file_atomic(paths[2], b.ptr, b.size / 2, &err),
			 0); /* truncated */
	ck_assert_int_eq(lm_write_file_atomic(paths[3], b.ptr, b.size, &err), 0);

	char *good[3] = { paths[0], paths[1], paths[3] };
	ck_assert_msg(lm_modules_load(good, 3, mods, &err) == 0, "%s", err.msg);
	for (int i = 0; i < 3; i++) {
		ck_assert_msg(lm_module_load(&one, good[i], &err) == 0, "%s",
			      err.msg);
		ck_assert_msg(lm_module_compare(one, mods[i], where,
						sizeof where) == 0, "%s", where);
		ck_assert_ptr_nonnull(cJSON_GetObjectItem(mods[i]->extra, "x_pad"));
		lm_module_free(one);
		lm_module_free(mods[i]);
	}
	ck_assert_int_ne(lm_modules_load(paths, 4, mods, &err), 0);
	ck_assert_int_ne(lm_module_load(&one, paths[2], &err1), 0);
	ck_assert_str_eq(err.msg, err1.msg);
	for (int i = 0; i < 4; i++)
		ck_assert_ptr_null(mods[i]);
	for (int i = 0; i < 4; i++)
		free(paths[i]);
	lm_buf_free(&b);
	free(text);
	free(src);
	free(dir);
}
END_TEST

/* lm_parallel_for: every item once, by a worker in range. */
typedef struct pfor_seen {
	int count[100];
	int worker[100];
} pfor_seen;

static void pfor_mark(void *ctx, int worker, int item)
{
	pfor_seen *p = ctx;
	p->count[item]++; /* each item is taken by one worker only */
	p->worker[item] = worker;
}

START_TEST(test_parallel_for)
{
	static const int workers[] = { 0, 1, 2, 3, 8, 200 };
	for (size_t k = 0; k < sizeof workers / sizeof *workers; k++) {
		pfor_seen p;
		memset(&p, 0, sizeof p);
		lm_parallel_for(100, workers[k], pfor_mark, &p);
		for (int i = 0; i < 100; i++) {
			ck_assert_int_eq(p.count[i], 1);
			ck_assert_int_ge(p.worker[i], 0);
			ck_assert_int_lt(p.worker[i], workers[k] > 1 ?
					 workers[k] : 1);
		}
	}
	lm_parallel_for(0, 4, pfor_mark, NULL); /* no item: fn not called */
	/* the count rule: requested, else CPUs if big, else 1; capped */
	ck_assert_int_eq(lm_worker_count(3, 8, 10, 0), 3);
	ck_assert_int_eq(lm_worker_count(12, 8, 10, 0), 8);
	ck_assert_int_eq(lm_worker_count(5, 8, 2, 1), 2);
	ck_assert_int_eq(lm_worker_count(0, 8, 10, 0), 1);
	ck_assert_int_eq(lm_worker_count(-1, 8, 10, 0), 1);
	ck_assert_int_eq(lm_worker_count(0, 8, 0, 1), 0);
	int big = lm_worker_count(0, 8, 10, 1);
	ck_assert_int_ge(big, 1);
	ck_assert_int_le(big, 8);
}
END_TEST

START_TEST(test_expand_dir)
{
	char *p = tu_srcpath("examples/handoff2");
	char **paths = NULL;
	int n = 0;
	lm_error err;
	ck_assert_msg(lm_expand_module_arg(p, &paths, &n, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(n, 2);
	ck_assert_contains(paths[0], "nc0/sg0/def.json");
	ck_assert_contains(paths[1], "nc1/sg0/def.json");
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(p);
	paths = NULL;
	n = 0;
	ck_assert_int_ne(lm_expand_module_arg("/nonexistent-dir", &paths, &n,
					      &err), 0);
	ck_assert_contains(err.msg, "no such file or directory");
}
END_TEST

START_TEST(test_display_name)
{
	char *p = tu_srcpath("examples/handoff2/nc1/sg0/def.json");
	lm_error err;
	lm_module *m = NULL;
	ck_assert_msg(lm_module_load(&m, p, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(lm_module_display_name(m), "handoff2");
	free(m->name);
	m->name = NULL;
	ck_assert_str_eq(lm_module_display_name(m), "handoff2");
	ck_assert_int_eq(lm_module_core_id(m), 1);
	lm_module_free(m);
	free(p);
}
END_TEST

/* A module carrying under "deep" arrays nested so that the document is
** `levels` deep (the module object is level 1); caller frees. With
** broken, the document stops inside the deepest array. */
static char *nested_module(int levels, const char *prefix)
{
	lm_buf b = LM_BUF_INIT;
	lm_buf_puts(&b, prefix);
	lm_buf_puts(&b, "{\"functions\":[],\"deep\":");
	for (int i = 1; i < levels; i++)
		lm_buf_puts(&b, "[");
	for (int i = 1; i < levels; i++)
		lm_buf_puts(&b, "]");
	lm_buf_puts(&b, "}");
	lm_buf_put(&b, "", 1);
	return lm_buf_detach(&b);
}

/* Deeper than cJSON's nesting limit: the message says so, with the
** position of the bracket that opens the level too many. */
START_TEST(test_bad_nesting)
{
	lm_error err;
	lm_module *m;
	char *t = nested_module(1001, "");
	m = tu_parse(t, &err);
	ck_assert_ptr_null(m);
	ck_assert_str_eq(err.msg, "t.json: JSON nested deeper than 1000 levels "
			 "at line 1, column 1023");
	free(t);
	/* a bare 1001-deep array, on line 2; brackets in strings don't count */
	{
		lm_buf b = LM_BUF_INIT;
		lm_buf_puts(&b, "\n");
		for (int i = 0; i < 1001; i++)
			lm_buf_puts(&b, i == 1 ? "[\"[[{\"," : "[");
		lm_buf_put(&b, "", 1);
		m = tu_parse(b.ptr, &err);
		ck_assert_ptr_null(m);
		ck_assert_str_eq(err.msg, "t.json: JSON nested deeper than 1000 "
				 "levels at line 2, column 1007");
		lm_buf_free(&b);
	}
	/* 999 and 1000 levels load (and the nesting is carried) */
	for (int levels = 999; levels <= 1000; levels++) {
		t = nested_module(levels, "");
		m = tu_parse(t, &err);
		ck_assert_msg(m != NULL, "%d levels: %s", levels, err.msg);
		ck_assert_ptr_nonnull(cJSON_GetObjectItem(m->extra, "deep"));
		lm_module_free(m);
		free(t);
	}
	/* other malformed input keeps its message */
	t = nested_module(999, "");
	t[strlen(t) - 2] = ',';
	m = tu_parse(t, &err);
	ck_assert_ptr_null(m);
	ck_assert_contains(err.msg, "malformed JSON at line 1, column");
	free(t);
}
END_TEST

/* ---- repeated keys ------------------------------------------------------ */

/*
** b with every member of every object, at every depth, preceded by a
** member of the same key: a's value under that key when a has one, else
** a copy of b's own. Arrays pair their elements with a's.
*/
static cJSON *interleave(const cJSON *a, const cJSON *b)
{
	if (cJSON_IsObject(b)) {
		cJSON *o = cJSON_CreateObject();
		for (const cJSON *c = b->child; c; c = c->next) {
			const cJSON *d = cJSON_IsObject(a) ?
				cJSON_GetObjectItemCaseSensitive(a, c->string) : NULL;
			cJSON_AddItemToObject(o, c->string,
					      cJSON_Duplicate(d ? d : c, 1));
			cJSON_AddItemToObject(o, c->string, interleave(d, c));
		}
		return o;
	}
	if (cJSON_IsArray(b)) {
		cJSON *r = cJSON_CreateArray();
		const cJSON *d = cJSON_IsArray(a) ? a->child : NULL;
		for (const cJSON *c = b->child; c; c = c->next) {
			cJSON_AddItemToArray(r, interleave(d, c));
			d = d ? d->next : NULL;
		}
		return r;
	}
	return cJSON_Duplicate(b, 1);
}

/* b with every leaf changed: strings get a suffix, numbers grow by one,
** booleans flip. */
static cJSON *mutate(const cJSON *b)
{
	cJSON *r;
	if (cJSON_IsObject(b) || cJSON_IsArray(b)) {
		r = cJSON_IsObject(b) ? cJSON_CreateObject() : cJSON_CreateArray();
		for (const cJSON *c = b->child; c; c = c->next) {
			if (cJSON_IsObject(b))
				cJSON_AddItemToObject(r, c->string, mutate(c));
			else
				cJSON_AddItemToArray(r, mutate(c));
		}
		return r;
	}
	if (cJSON_IsString(b)) {
		char *v = lm_xasprintf("%s_first", b->valuestring);
		r = cJSON_CreateString(v);
		free(v);
		return r;
	}
	if (cJSON_IsNumber(b))
		return cJSON_CreateNumber(b->valuedouble + 1);
	if (cJSON_IsBool(b))
		return cJSON_CreateBool(!cJSON_IsTrue(b));
	return cJSON_Duplicate(b, 1);
}

/* all_opcodes.json with the keys it lacks (aliases, remote_local_target,
** alias_of, start_partition, carried keys of a semaphore, a queue instance
** and an operand) so every level of the loader has something to read. */
static cJSON *rich_fixture(void)
{
	char *p = tu_srcpath("tests/fixtures/all_opcodes.json");
	char *text = tu_read(p);
	cJSON *root, *f0, *a0, *in0;
	ck_assert_ptr_nonnull(text);
	root = cJSON_Parse(text);
	ck_assert_ptr_nonnull(root);
	cJSON_AddItemToObject(root, "aliases", cJSON_Parse(
		"[{\"producer\":\"p\",\"consumer\":\"c\",\"producer_core\":0,"
		"\"consumer_core\":1,\"note\":\"n\"}]"));
	cJSON_AddStringToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(root,
		"semaphores"), 0), "note", "s");
	cJSON_AddStringToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(root, "queues"), 0),
		"instances"), 0), "note", "qi");
	f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "functions"), 0);
	a0 = cJSON_GetArrayItem(cJSON_GetObjectItem(f0, "allocations"), 0);
	cJSON_AddItemToObject(a0, "remote_local_target", cJSON_Parse(
		"{\"name\":\"elsewhere\",\"core\":1}"));
	cJSON_AddStringToObject(a0, "alias_of", "other");
	in0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(f0,
		"blocks"), 0), "instructions"), 0), "ins"), 0);
	ck_assert_ptr_nonnull(in0);
	cJSON_AddNumberToObject(in0, "start_partition", 0);
	cJSON_AddItemToObject(in0, "note", cJSON_Parse("{\"k\":[1,{\"j\":2}]}"));
	free(text);
	free(p);
	return root;
}

/* Load a tree's text; the loader must accept it. */
static lm_module *load_tree(const cJSON *t)
{
	char *text = cJSON_PrintUnformatted(t);
	lm_error err;
	lm_module *m = tu_parse(text, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	free(text);
	return m;
}

/*
** Every key of every object given twice: the last one counts, nothing of
** the first stays behind (the sanitizer build checks that the dropped
** members leak nothing), and the carried keys are not repeated on save.
*/
/* Each name the linked module uses, spelled by its one rule. */
START_TEST(test_linked_names)
{
	char b[LM_LINKED_NAME_MAX], big[64];
	char *p;

	ck_assert_str_eq(lm_core_name(b, 0), "nc0");
	ck_assert_str_eq(lm_core_name(b, 63), "nc63");
	ck_assert_str_eq(lm_core_name(b, INT64_MAX), "nc9223372036854775807");
	p = lm_core_scoped(big, 12, "w.x");
	ck_assert_str_eq(big, "nc12.w.x");
	ck_assert_ptr_eq(p, big + strlen("nc12.w.x") + 1);
	ck_assert_int_eq(lm_core_of_name("nc0"), 0);
	ck_assert_int_eq(lm_core_of_name("nc17"), 17);
	ck_assert_int_eq(lm_core_of_name("nc07"), -1);
	ck_assert_int_eq(lm_core_of_name("nc"), -1);
	ck_assert_int_eq(lm_core_of_name("nc1.a"), -1);
	ck_assert_int_eq(lm_core_of_name("main"), -1);
	ck_assert_int_eq(lm_core_of_name(NULL), -1);
	ck_assert_str_eq(lm_linked_call_name(b, 3), "call_def_3_instance_0");
	ck_assert_str_eq(lm_linked_return_name(b, 3),
			 "return_call_def_3_instance_0");
	ck_assert_str_eq(lm_linked_barrier_name(b, 3),
			 "cb_return_call_def_3_instance_0");
	ck_assert_str_eq(lm_linked_barrier_name(b, INT64_MAX),
			 "cb_return_call_def_9223372036854775807_instance_0");
	ck_assert_int_eq(lm_linked_sqi_name(NULL, 0, "q0", 2),
			 (int)strlen("I-SQI-q0-call_def_2_instance_0"));
	lm_linked_sqi_name(big, sizeof big, "q0", 2);
	ck_assert_str_eq(big, "I-SQI-q0-call_def_2_instance_0");
	p = lm_linked_module_name("mlp");
	ck_assert_str_eq(p, "mlp/sgLnk");
	free(p);
	ck_assert_str_eq(LM_LINKED_MAIN, "main");
	ck_assert_str_eq(LM_LINKED_DISPATCHER, "dispatcher");
	ck_assert_str_eq(LM_LINKED_COMPLETION_GROUP, "sgLnk.completion");
}
END_TEST

START_TEST(test_repeated_keys_last_wins)
{
	cJSON *b = rich_fixture(), *decoy = mutate(b);
	cJSON *same = interleave(NULL, b), *other = interleave(decoy, b);
	lm_module *want = load_tree(b), *m1 = load_tree(same);
	lm_module *m2 = load_tree(other);
	char where[256] = "", *t0, *t1, *t2;
	size_t n0, n1, n2;
	lm_error err;
	ck_assert_msg(lm_module_compare(want, m1, where, sizeof where) == 0,
		      "repeated keys (same values) differ at %s", where);
	ck_assert_msg(lm_module_compare(want, m2, where, sizeof where) == 0,
		      "repeated keys (first values differ) differ at %s",
		      where);
	ck_assert_str_eq(m2->name, want->name);
	ck_assert_str_eq(m2->functions[0].blocks[0].insts[0].name,
			 want->functions[0].blocks[0].insts[0].name);
	ck_assert_str_eq(m2->functions[0].allocs[0].alias_of, "other");
	ck_assert_str_eq(m2->functions[0].allocs[0].remote_name, "elsewhere");
	ck_assert_int_eq(m2->n_aliases, 1);
	ck_assert_str_eq(m2->aliases[0].producer, "p");
	ck_assert_int_eq(m2->aliases[0].consumer_core, 1);
	/* saved, the carried keys appear once */
	ck_assert_int_eq(lm_module_to_json(want, 0, &t0, &n0, &err), 0);
	ck_assert_int_eq(lm_module_to_json(m1, 0, &t1, &n1, &err), 0);
	ck_assert_int_eq(lm_module_to_json(m2, 0, &t2, &n2, &err), 0);
	ck_assert_str_eq(t1, t0);
	ck_assert_str_eq(t2, t0);
	/* the first values (every string leaf changed) are nowhere */
	ck_assert_ptr_null(strstr(t2, "_first"));
	free(t0);
	free(t1);
	free(t2);
	/* a tree handed over whole takes the same path */
	{
		lm_module *m3 = NULL;
		ck_assert_int_eq(lm_module_from_cjson(&m3, cJSON_Duplicate(other,
						1), "t.json", &err), 0);
		ck_assert_msg(lm_module_compare(want, m3, where, sizeof where)
			      == 0, "from_cjson differs at %s", where);
		lm_module_free(m3);
	}
	lm_module_free(want);
	lm_module_free(m1);
	lm_module_free(m2);
	cJSON_Delete(b);
	cJSON_Delete(decoy);
	cJSON_Delete(same);
	cJSON_Delete(other);
}
END_TEST

/* A big object (a kernel argument map of 40 keys, each given twice). */
START_TEST(test_repeated_keys_big_object)
{
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	lm_module *m;
	lm_buf_puts(&b, "{\"functions\":[{\"name\":\"f\",\"allocations\":[],"
		    "\"blocks\":[{\"name\":\"b\",\"instructions\":[{\"opcode\":"
		    "\"NKIKernel\",\"name\":\"k\",\"func\":\"g\",\"func_args\":{");
	for (int i = 0; i < 40; i++)
		lm_buf_printf(&b, "%s\"a%d\":\"first%d\",\"a%d\":\"v%d\"",
			      i ? "," : "", i, i, i, i);
	lm_buf_puts(&b, "}}]}]}]}");
	lm_buf_put(&b, "", 1);
	m = tu_parse(b.ptr, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	const lm_inst *k = &m->functions[0].blocks[0].insts[0];
	ck_assert_int_eq(k->n_func_args, 40);
	for (int i = 0; i < 40; i++) {
		char want[16];
		snprintf(want, sizeof want, "a%d", i);
		ck_assert_str_eq(k->func_args[i].key, want);
		snprintf(want, sizeof want, "v%d", i);
		ck_assert_str_eq(k->func_args[i].value, want);
	}
	lm_module_free(m);
	lm_buf_free(&b);
}
END_TEST

/* A file set names a file by its absolute lexical path, however spelled. */
START_TEST(test_fileset)
{
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	char *want = lm_xasprintf("%s/gen1/nc0/w.npy", strcmp(cwd, "/") ? cwd
				  : "");
	char *p = lm_fileset_path("./gen1//nc0/./w.npy");
	ck_assert_str_eq(p, want);
	free(p);
	p = lm_fileset_path("/a//b/./c/");
	ck_assert_str_eq(p, "/a/b/c");
	free(p);
	lm_fileset fs;
	lm_fileset_init(&fs);
	lm_fileset_add(&fs, "gen1/nc0/w.npy", lm_xstrdup("one"), 3);
	lm_fileset_add(&fs, "gen1/nc1/w.npy", lm_xstrdup("two"), 3);
	const lm_memfile *f = lm_fileset_find(&fs, want);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->bytes, "one");
	ck_assert_ptr_nonnull(lm_fileset_find(&fs, "./gen1/nc1/w.npy"));
	ck_assert_ptr_null(lm_fileset_find(&fs, "gen1/nc2/w.npy"));
	lm_fileset_add(&fs, "./gen1/nc0/w.npy", lm_xstrdup("ONE"), 3);
	ck_assert_int_eq(fs.n, 2);
	ck_assert_str_eq(lm_fileset_find(&fs, "gen1/nc0/w.npy")->bytes, "ONE");
	lm_fileset_free(&fs);
	free(want);
}
END_TEST

/* ---- operand geometry ---------------------------------------------------- */

/* One operand, its allocation and memory location, built on the stack. */
typedef struct gfix {
	lm_appair ap[4];
	int64_t dims[2], shape[2];
	lm_arg a;
	lm_memloc loc;
	lm_alloc al;
} gfix;

/* float32 ap over memory location "l" of allocation "x" of type t with
** dims d0, d1 (SB / PSUM: partitions, bytes; DRAM: bytes when d1 is 0). */
static void gfix_init(gfix *f, lm_memtype t, int64_t d0, int64_t d1)
{
	memset(f, 0, sizeof *f);
	f->dims[0] = d0;
	f->dims[1] = d1;
	f->loc.name = "l";
	f->loc.type = t;
	f->loc.n_dims = d1 ? 2 : 1;
	f->loc.dims = f->dims;
	f->al.name = "x";
	f->al.dtype = LM_DT_FLOAT32;
	f->al.n_memlocs = 1;
	f->al.memlocs = &f->loc;
	f->a.kind = LM_ARG_PHYSICAL_AP;
	f->a.dtype = LM_DT_FLOAT32;
	f->a.dtype_str = "float32";
	f->a.memsetref = "x";
	f->a.memref = "l";
	f->a.ap = f->ap;
}

/* Set the access pattern: n (step, num) pairs. */
static void gfix_ap(gfix *f, int n, const int64_t *pairs)
{
	f->a.n_ap = n;
	for (int i = 0; i < n; i++) {
		f->ap[i].step = pairs[2 * i];
		f->ap[i].num = pairs[2 * i + 1];
	}
}

/* lm_arg_geometry must refuse f with exactly `msg` (and without why). */
static void geom_refused(gfix *f, const char *msg)
{
	lm_geom g;
	char *why = (char *)"untouched";
	ck_assert_int_eq(lm_arg_geometry(&g, &f->a, &f->al, &f->loc, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_str_eq(why, msg);
	free(why);
	ck_assert_int_eq(lm_arg_geometry(&g, &f->a, &f->al, &f->loc, NULL), -1);
}

/* SB: the first pair is the partitions, the others walk bytes of each. */
START_TEST(test_geometry_sb)
{
	gfix f;
	lm_geom g;
	char *why = (char *)"untouched";
	gfix_init(&f, LM_MT_SB, 16, 256);
	f.loc.base = 4;
	f.loc.addr = 64;
	f.a.start_partition = 2;
	f.a.offset = 3;
	gfix_ap(&f, 2, (int64_t[]){ 64, 8, 1, 16 });
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, &why), 0);
	ck_assert_ptr_null(why);
	ck_assert_int_eq(g.is_dram, 0);
	ck_assert_int_eq(g.esize, 4);
	ck_assert_int_eq(g.count, 128);
	ck_assert_int_eq(g.parts, 8);
	ck_assert_int_eq(g.free, 16);
	ck_assert_int_eq(g.part, 6);      /* base + start_partition */
	ck_assert_int_eq(g.elo, 3);
	ck_assert_int_eq(g.ehi, 18);
	ck_assert_int_eq(g.lo, 12);
	ck_assert_int_eq(g.hi, 76);
	/* the last byte of the last of the location's partitions: inside */
	f.a.start_partition = 8;
	f.a.offset = 48;
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.hi, 256);
	/* PSUM is addressed the same way */
	f.loc.type = LM_MT_PSUM;
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.part, 12);
}
END_TEST

/* Negative steps walk down from offset; below element 0 is refused. */
START_TEST(test_geometry_negative_steps)
{
	gfix f;
	lm_geom g;
	gfix_init(&f, LM_MT_SB, 4, 64);
	f.a.offset = 5;
	gfix_ap(&f, 3, (int64_t[]){ 16, 2, -1, 4, 8, 1 });
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.elo, 2);
	ck_assert_int_eq(g.ehi, 5);
	ck_assert_int_eq(g.lo, 8);
	ck_assert_int_eq(g.hi, 24);
	f.a.offset = 2;
	geom_refused(&f, "access pattern reaches element -1, before the start "
		     "of memory location 'l'");
	/* on DRAM the first pair walks elements too, downwards as well */
	gfix_init(&f, LM_MT_DRAM, 256, 0);
	f.a.offset = 40;
	gfix_ap(&f, 2, (int64_t[]){ -16, 3, 1, 8 });
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.elo, 8);
	ck_assert_int_eq(g.ehi, 47);
	ck_assert_int_eq(g.lo, 32);
	ck_assert_int_eq(g.hi, 192);
	f.a.offset = 31;
	geom_refused(&f, "access pattern reaches element -1, before the start "
		     "of memory location 'l'");
}
END_TEST

/* Every product and sum of input numbers is checked. */
START_TEST(test_geometry_overflow)
{
	gfix f;
	lm_geom g;
	gfix_init(&f, LM_MT_SB, 4, 64);
	gfix_ap(&f, 2, (int64_t[]){ 1, 1, (int64_t)1 << 62, 3 });
	geom_refused(&f, "access pattern index arithmetic overflows");
	gfix_ap(&f, 2, (int64_t[]){ 1, 1, INT64_MIN / 2 - 1, 3 });
	geom_refused(&f, "access pattern index arithmetic overflows");
	f.a.offset = INT64_MAX - 2;
	gfix_ap(&f, 2, (int64_t[]){ 1, 1, 1, 4 });
	geom_refused(&f, "access pattern index arithmetic overflows");
	f.a.offset = 0;
	/* a step of any size is fine when its pair walks one element */
	gfix_ap(&f, 2, (int64_t[]){ 1, 1, INT64_MAX, 1 });
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.hi, 4);
	/* element counts: the product overflows, or passes the bound */
	gfix_ap(&f, 2, (int64_t[]){ 1, INT64_MAX, 0, 2 });
	geom_refused(&f, "access pattern walks more than 2147483647 elements");
	gfix_ap(&f, 2, (int64_t[]){ 1, (int64_t)1 << 16, 0, (int64_t)1 << 15 });
	geom_refused(&f, "access pattern walks more than 2147483647 elements");
	gfix_ap(&f, 2, (int64_t[]){ 1, 1, 0, LM_MAX_OPERAND_ELEMS });
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.count, LM_MAX_OPERAND_ELEMS);
	/* bytes: the element range in range, its bytes not */
	gfix_init(&f, LM_MT_DRAM, 0, 0);
	f.loc.n_dims = 0;
	f.a.offset = INT64_MAX / 2;
	gfix_ap(&f, 1, (int64_t[]){ 1, 1 });
	geom_refused(&f, "access pattern index arithmetic overflows");
	gfix_init(&f, LM_MT_SB, 4, 64);
	f.a.offset = INT64_MAX / 2;
	gfix_ap(&f, 1, (int64_t[]){ 1, 1 });
	geom_refused(&f, "element range 4611686018427387903..4611686018427387903 "
		     "(float32) outside memory location 'l' (64 bytes per "
		     "partition)");
}
END_TEST

/* Partitions: inside the 128, and inside the location's own. */
START_TEST(test_geometry_partitions)
{
	gfix f;
	lm_geom g;
	gfix_init(&f, LM_MT_SB, 8, 64);
	f.loc.base = 120;
	gfix_ap(&f, 2, (int64_t[]){ 16, 8, 1, 16 });
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.part, 120);
	f.a.start_partition = 4;
	geom_refused(&f, "partitions 124..131 exceed the 128 partitions");
	f.loc.base = 0;
	geom_refused(&f, "partitions 4..11 of memory location 'l' outside its "
		     "8 partitions");
	f.a.start_partition = INT64_MAX - 2;
	{
		lm_geom h;
		char *why = NULL;
		ck_assert_int_eq(lm_arg_geometry(&h, &f.a, &f.al, &f.loc, &why),
				 -1);
		ck_assert_contains(why, "exceed the 128 partitions");
		free(why);
	}
	f.loc.base = 1;
	f.a.start_partition = INT64_MAX;
	gfix_ap(&f, 2, (int64_t[]){ 16, 1, 1, 16 });
	{
		char *why = NULL;
		ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, &why),
				 -1);
		ck_assert_contains(why, "exceed the 128 partitions");
		free(why);
	}
	/* a location without dims has no partitions to walk */
	gfix_init(&f, LM_MT_SB, 8, 64);
	f.loc.n_dims = 0;
	gfix_ap(&f, 1, (int64_t[]){ 1, 1 });
	geom_refused(&f, "partitions 0..0 of memory location 'l' outside its "
		     "0 partitions");
	/* bytes per partition */
	gfix_init(&f, LM_MT_SB, 8, 64);
	f.a.offset = 1;
	gfix_ap(&f, 2, (int64_t[]){ 16, 8, 1, 16 });
	geom_refused(&f, "element range 1..16 (float32) outside memory location "
		     "'l' (64 bytes per partition)");
}
END_TEST

/* The same pattern on DRAM and on SB: the first pair is a stride there,
** partitions here. DRAM bounds: the tensor's elements, the location's
** bytes. */
START_TEST(test_geometry_dram_vs_sb)
{
	gfix f;
	lm_geom g;
	const int64_t pat[] = { 16, 4, 1, 16 };
	gfix_init(&f, LM_MT_DRAM, 256, 0);
	f.al.n_shape = 2;
	f.al.tensor_shape = f.shape;
	f.shape[0] = 4;
	f.shape[1] = 16;
	gfix_ap(&f, 2, pat);
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.is_dram, 1);
	ck_assert_int_eq(g.count, 64);
	ck_assert_int_eq(g.parts, 4);
	ck_assert_int_eq(g.free, 16);
	ck_assert_int_eq(g.part, 0);
	ck_assert_int_eq(g.elo, 0);
	ck_assert_int_eq(g.ehi, 63);
	ck_assert_int_eq(g.lo, 0);
	ck_assert_int_eq(g.hi, 256);
	f.loc.type = LM_MT_INPUT;   /* Input and Output are DRAM too */
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.is_dram, 1);
	f.shape[1] = 15;
	geom_refused(&f, "element range 0..63 outside allocation 'x' (60 "
		     "elements)");
	f.shape[1] = 16;
	f.dims[0] = 128;
	geom_refused(&f, "element range 0..63 (float32) outside memory location "
		     "'l' (128 bytes)");
	/* no tensor_shape, no dims: no bound but the arithmetic's */
	f.al.n_shape = 0;
	f.loc.n_dims = 0;
	f.a.offset = 1000;
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.ehi, 1063);

	gfix_init(&f, LM_MT_SB, 4, 64);
	gfix_ap(&f, 2, pat);
	ck_assert_int_eq(lm_arg_geometry(&g, &f.a, &f.al, &f.loc, NULL), 0);
	ck_assert_int_eq(g.is_dram, 0);
	ck_assert_int_eq(g.parts, 4);
	ck_assert_int_eq(g.free, 16);
	ck_assert_int_eq(g.ehi, 15);
	ck_assert_int_eq(g.hi, 64);
}
END_TEST

/* The checks before any arithmetic, in the verifier's order. */
START_TEST(test_geometry_refusals)
{
	gfix f;
	gfix_init(&f, LM_MT_SB, 4, 64);
	gfix_ap(&f, 2, (int64_t[]){ 16, 4, 1, 0 });
	geom_refused(&f, "access pattern pair 1 has num 0 (must be > 0)");
	f.ap[0].num = -1;
	geom_refused(&f, "access pattern pair 0 has num -1 (must be > 0)");
	f.a.start_partition = -1;
	geom_refused(&f, "negative start_partition -1");
	f.a.offset = -2;
	geom_refused(&f, "negative offset -2");
	f.a.n_ap = 0;
	geom_refused(&f, "access pattern is empty");
	f.loc.type = LM_MT_REG;
	geom_refused(&f, "memory location 'l' has type REG, which an access "
		     "pattern cannot address");
	f.a.dtype = LM_DT_INVALID;
	f.a.dtype_str = "float3";
	geom_refused(&f, "invalid dtype 'float3'");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("json");
	tcase_set_timeout(tc, 300);
	int n = (int)(sizeof example_files / sizeof example_files[0]);
	tcase_add_loop_test(tc, test_roundtrip_examples, 0, n);
	tcase_add_test(tc, test_unknown_keys_carried);
	tcase_add_test(tc, test_bad_operand_named);
	tcase_add_test(tc, test_fileset);
	tcase_add_test(tc, test_liberal_forms);
	tcase_add_test(tc, test_negative_zero_kept);
	tcase_add_test(tc, test_bad_empty);
	tcase_add_test(tc, test_bad_truncated);
	tcase_add_test(tc, test_bad_trailing);
	tcase_add_test(tc, test_bad_nesting);
	tcase_add_test(tc, test_bad_toplevel_type);
	tcase_add_test(tc, test_bad_missing_functions);
	tcase_add_test(tc, test_bad_version);
	tcase_add_test(tc, test_bad_types);
	tcase_add_test(tc, test_bad_unknown_opcode);
	tcase_add_test(tc, test_bad_unknown_enums);
	tcase_add_test(tc, test_bad_integers);
	tcase_add_test(tc, test_bad_missing_required);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_clone_and_compare);
	tcase_add_test(tc, test_writer_numbers);
	tcase_add_test(tc, test_writer_matches_cjson);
	tcase_add_test(tc, test_packed_copy);
#if defined(__SANITIZE_ADDRESS__)
	tcase_add_test(tc, test_released_pack_poisoned);
#endif
	tcase_add_test(tc, test_pool);
	tcase_add_test(tc, test_strmap);
	tcase_add_test(tc, test_load_many);
	tcase_add_test(tc, test_parallel_for);
	tcase_add_test(tc, test_expand_dir);
	tcase_add_test(tc, test_display_name);
	tcase_add_test(tc, test_repeated_keys_last_wins);
	tcase_add_test(tc, test_repeated_keys_big_object);
	tcase_add_test(tc, test_linked_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("geometry");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_geometry_sb);
	tcase_add_test(tc, test_geometry_negative_steps);
	tcase_add_test(tc, test_geometry_overflow);
	tcase_add_test(tc, test_geometry_partitions);
	tcase_add_test(tc, test_geometry_dram_vs_sb);
	tcase_add_test(tc, test_geometry_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

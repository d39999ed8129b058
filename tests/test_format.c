/*
** test_format.c -- the instruction header and module keys of the
** compiler's wire form: dependency kinds, loop-carried dependencies,
** sync_info, origin and engine, Matmult accumulation flags, the partition
** encoding of operands, versions, ArchLevel and MemoryType spellings, and
** the documented op keys the model carries (defaults dropped, always-keys
** written, types and enum names checked). Each bad input has its message.
*/
#include "common.h"
#include "module.h"
#include "verify.h"
#include "json_int.h"
#include "affine.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A one-function module around the given allocations and instructions. */
static char *module_text(int version, const char *arch, const char *allocs,
			 const char *insts)
{
	return lm_xasprintf(
		"{\"version\":%d,\"arch\":\"%s\",\"semaphores\":[{\"name\":\"s\","
		"\"init\":0}],\"functions\":[{\"name\":\"f\",\"allocations\":"
		"[%s],\"blocks\":[{\"name\":\"b\",\"instructions\":[%s]}]}]}",
		version, arch, allocs, insts);
}

#define SB_T "{\"name\":\"t\",\"kind\":\"Internal\",\"dtype\":\"float32\"," \
	"\"tensor_shape\":[4,8],\"memorylocations\":[{\"name\":\"t\"," \
	"\"type\":\"SB\",\"addr\":0,\"dims\":[4,64],\"bank\":0,\"base\":0," \
	"\"allocated\":true}]}"
#define AP_T(off) "{\"kind\":\"physical_ap\",\"ap\":[[16,2],[1,8]]," \
	"\"dtype\":\"float32\",\"offset\":" off ",\"memsetref\":\"t\"," \
	"\"memref\":\"t\"}"
#define NOP(n, extra) "{\"opcode\":\"NoOp\",\"name\":\"" n "\",\"engine\":" \
	"\"SP\",\"ins\":[],\"outs\":[]" extra "}"

static char *save(const lm_module *m)
{
	lm_error err;
	char *t;
	size_t n;
	ck_assert_int_eq(lm_module_to_json(m, 0, &t, &n, &err), 0);
	return t;
}

/* save(tu_parse(save(m))) == save(m) and the IR compares equal. */
static void roundtrip(const lm_module *m)
{
	char *a = save(m), where[256] = "";
	lm_module *b = tu_parse_ok(a);
	char *c = save(b);
	ck_assert_str_eq(a, c);
	ck_assert_msg(lm_module_compare(m, b, where, sizeof where) == 0,
		      "differs at %s", where);
	lm_module_free(b);
	free(a);
	free(c);
}

static lm_inst *inst(lm_module *m, int i)
{
	return &m->functions[0].blocks[0].insts[i];
}

START_TEST(test_dependency_kinds)
{
	char *t = module_text(2, "gen3", "", NOP("a", "") "," NOP("b", "") ","
		NOP("c", ",\"dependencies\":[[\"a\",\"Anti\"],[\"b\",3],\"a\","
		    "[\"b\",\"Ordered\"]]"));
	lm_module *m = tu_parse_ok(t);
	lm_inst *c = inst(m, 2);
	ck_assert_int_eq(c->n_deps, 4);
	ck_assert_int_eq(lm_inst_dep_kind(c, 0, 0), LM_EDGE_ANTI);
	ck_assert_int_eq(lm_inst_dep_kind(c, 0, 1), LM_EDGE_OUTPUT);
	ck_assert_int_eq(lm_inst_dep_kind(c, 0, 2), LM_EDGE_FLOW);
	ck_assert_int_eq(lm_inst_dep_kind(c, 0, 3), LM_EDGE_ORDERED);
	char *s = save(m);
	ck_assert_contains(s, "\"dependencies\":[[\"a\",\"Anti\"],[\"b\","
			   "\"Output\"],[\"a\",\"Flow\"],[\"b\",\"Ordered\"]]");
	roundtrip(m);
	/* kinds follow their entries through removal and addition */
	lm_inst_remove_dep(c, 0, 0);
	ck_assert_int_eq(c->n_deps, 3);
	ck_assert_str_eq(c->deps[0], "b");
	ck_assert_int_eq(lm_inst_dep_kind(c, 0, 0), LM_EDGE_ORDERED);
	lm_inst_add_dep(c, 0, "a", LM_EDGE_OUTPUT);
	ck_assert_int_eq(lm_inst_dep_kind(c, 0, 3), LM_EDGE_OUTPUT);
	free(s);
	lm_module_free(m);
	free(t);
}
END_TEST

START_TEST(test_dependency_bad)
{
	static const char *const cases[][2] = {
		{ "[[\"a\",\"Sideways\"]]", "EdgeKind 'Sideways' does not exist" },
		{ "[[\"a\",7]]", "EdgeKind 7 does not exist" },
		{ "[[\"a\",0]]", "EdgeKind 0 does not exist" },
		{ "[[\"a\"]]", "expected [name, EdgeKind], got an array of 1" },
		{ "[[\"a\",\"Flow\",1]]", "got an array of 3" },
		{ "[[7,\"Flow\"]]", "expected an instruction name, got number" },
		{ "[[\"a\",true]]", "EdgeKind: expected string, got boolean" },
		{ "{}", "key 'dependencies': expected array, got object" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *x = lm_xasprintf(",\"dependencies\":%s", cases[i][0]);
		char *n = lm_xasprintf("{\"opcode\":\"NoOp\",\"name\":\"c\","
				       "\"engine\":\"SP\",\"ins\":[],\"outs\":[]"
				       "%s}", x);
		char *t = module_text(2, "gen3", "", NOP("a", "") "," "%s");
		char *u = lm_xasprintf(t, n);
		tu_expect_fail(u, cases[i][1]);
		free(u);
		free(t);
		free(n);
		free(x);
	}
}
END_TEST

/* A dependency on a name that is no instruction of the function. */
START_TEST(test_dependency_unknown_name)
{
	char *t = module_text(2, "gen3", "", NOP("a", ",\"dependencies\":"
					       "[[\"zz\",\"Flow\"]]"));
	lm_module *m = tu_parse_ok(t);
	lm_error err;
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "dependency 'zz' names no instruction");
	lm_module_free(m);
	free(t);
	t = module_text(2, "gen3", "", NOP("a", ",\"loop_carried_dependencies\":"
					   "[[\"zz\",\"Anti\"]]"));
	m = tu_parse_ok(t);
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "loop-carried dependency 'zz' names no "
			   "instruction");
	lm_module_free(m);
	free(t);
}
END_TEST

START_TEST(test_loop_carried)
{
	char *t = module_text(2, "gen3", "", NOP("a", ",\"loop_carried_"
		"dependencies\":[[\"b\",\"Anti\"],\"a\"]") "," NOP("b", ""));
	lm_module *m = tu_parse_ok(t);
	lm_error err;
	lm_inst *a = inst(m, 0);
	ck_assert_int_eq(a->n_lc_deps, 2);
	ck_assert_str_eq(a->lc_deps[0], "b");
	ck_assert_int_eq(lm_inst_dep_kind(a, 1, 0), LM_EDGE_ANTI);
	ck_assert_int_eq(lm_inst_dep_kind(a, 1, 1), LM_EDGE_FLOW);
	ck_assert_int_eq(a->n_deps, 0);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	char *s = save(m);
	ck_assert_contains(s, "\"loop_carried_dependencies\":[[\"b\",\"Anti\"],"
			   "[\"a\",\"Flow\"]]");
	roundtrip(m);
	free(s);
	lm_module_free(m);
	free(t);
}
END_TEST

START_TEST(test_sync_info)
{
	/* the name form */
	char *t = module_text(2, "gen3", "", NOP("a", ",\"sync_info\":{"
		"\"on_wait\":[{\"semaphore\":\"s\",\"mode\":\"sem-ge-imm\","
		"\"value\":2}],\"on_update\":[{\"semaphore\":\"s\",\"mode\":"
		"\"sem-inc\",\"value\":1}]}"));
	lm_module *m = tu_parse_ok(t);
	lm_inst *a = inst(m, 0);
	ck_assert_int_eq(a->n_wait, 1);
	ck_assert_str_eq(a->wait[0].semaphore, "s");
	ck_assert_int_eq(a->wait[0].mode, LM_WAIT_SEM_GE_IMM);
	ck_assert_int_eq(a->wait[0].value, 2);
	ck_assert_int_eq(a->n_update, 1);
	ck_assert_int_eq(a->update[0].mode, LM_UPD_SEM_INC);
	ck_assert_ptr_null(a->extra);
	char *s = save(m);
	ck_assert_contains(s, "\"sync_info\":{\"on_update\":[{\"mode\":"
			   "\"sem-inc\",\"semaphore\":\"s\",\"value\":1}],"
			   "\"on_wait\":[{\"mode\":\"sem-ge-imm\",\"semaphore\":"
			   "\"s\",\"value\":2}]}");
	roundtrip(m);
	free(s);
	lm_module_free(m);
	free(t);

	/* the id form, every key of an entry, the modes by default */
	t = module_text(2, "gen3", "", NOP("a", ",\"sync_info\":{"
		"\"on_wait\":[{\"id\":3,\"wait_value\":2,\"from\":\"p\"},"
		"{\"id\":4,\"mode\":\"sem-ge-reg\",\"regref\":\"r\"},"
		"{\"id\":5,\"mode\":\"evt-set-then-clear\",\"x_k\":1}],"
		"\"on_update\":[{\"id\":3},{\"id\":4,\"mode\":\"sem-wr-imm\","
		"\"update_value\":7,\"core\":1}],\"x_top\":[]}"));
	m = tu_parse_ok(t);
	a = inst(m, 0);
	ck_assert_int_eq(a->n_wait, 3);
	ck_assert_ptr_null(a->wait[0].semaphore);
	ck_assert_int_eq(a->wait[0].id, 3);
	ck_assert_int_eq(a->wait[0].mode, LM_WAIT_SEM_GE_IMM);
	ck_assert(a->wait[0].has_value && a->wait[0].value == 2);
	ck_assert_str_eq(a->wait[0].from, "p");
	ck_assert_int_eq(a->wait[1].mode, LM_WAIT_SEM_GE_REG);
	ck_assert_str_eq(a->wait[1].regref, "r");
	ck_assert(!a->wait[1].has_value);
	ck_assert_int_eq(a->wait[2].mode, LM_WAIT_EVT_SET_THEN_CLEAR);
	ck_assert_ptr_nonnull(a->wait[2].extra);
	ck_assert_int_eq(a->n_update, 2);
	ck_assert_int_eq(a->update[0].mode, LM_UPD_SEM_INC);
	ck_assert(!a->update[0].has_value);
	ck_assert_int_eq(a->update[1].mode, LM_UPD_SEM_WR_IMM);
	ck_assert(a->update[1].has_core && a->update[1].core == 1);
	ck_assert_int_eq(a->update[1].value, 7);
	ck_assert_ptr_nonnull(a->sync_extra);
	s = save(m);
	ck_assert_contains(s, "\"sync_info\":{\"on_update\":[{\"id\":3,"
			   "\"mode\":\"sem-inc\"},{\"core\":1,\"id\":4,\"mode\":"
			   "\"sem-wr-imm\",\"update_value\":7}],\"on_wait\":[{"
			   "\"from\":\"p\",\"id\":3,\"mode\":\"sem-ge-imm\","
			   "\"wait_value\":2},{\"id\":4,\"mode\":\"sem-ge-reg\","
			   "\"regref\":\"r\"},{\"id\":5,\"mode\":"
			   "\"evt-set-then-clear\",\"x_k\":1}],\"x_top\":[]}");
	roundtrip(m);
	free(s);
	lm_module_free(m);
	free(t);

	/* the legacy keys write as sync_info, before the entries read
	   there */
	t = module_text(2, "gen3", "", NOP("a", ",\"wait\":[{\"semaphore\":"
		"\"s\",\"value\":1}],\"signal\":[\"s\"],\"sync_info\":{"
		"\"on_update\":[{\"semaphore\":\"s\",\"mode\":\"sem-wr-imm\","
		"\"value\":5}]}"));
	m = tu_parse_ok(t);
	a = inst(m, 0);
	ck_assert_int_eq(a->n_wait, 1);
	ck_assert_int_eq(a->n_update, 2);
	s = save(m);
	ck_assert_contains(s, "\"sync_info\":{\"on_update\":[{\"mode\":"
			   "\"sem-inc\",\"semaphore\":\"s\",\"value\":1},{"
			   "\"mode\":\"sem-wr-imm\",\"semaphore\":\"s\","
			   "\"value\":5}],\"on_wait\":[{\"mode\":\"sem-ge-imm\","
			   "\"semaphore\":\"s\",\"value\":1}]}");
	ck_assert_msg(!strstr(s, "\"wait\"") && !strstr(s, "\"signal\""),
		      "%s", s);
	roundtrip(m);
	free(s);
	lm_module_free(m);
	free(t);

	static const struct { const char *si, *msg; } bad[] = {
		{ "{\"on_wait\":[{\"semaphore\":\"s\",\"mode\":1}]}",
		  "key 'sync_info': 'on_wait': key 'mode': expected string, got "
		  "number" },
		{ "{\"on_wait\":3}",
		  "key 'sync_info': 'on_wait': expected array, got number" },
		{ "{\"on_wait\":[{\"semaphore\":\"s\",\"mode\":\"sem-inc\"}]}",
		  "key 'sync_info': 'on_wait' entry 0: unknown WaitMode "
		  "'sem-inc' (evt-set-then-clear, sem-ge-imm, sem-ge-reg, "
		  "invalid)" },
		{ "{\"on_update\":[{\"id\":1},{\"semaphore\":\"s\",\"id\":2}]}",
		  "key 'sync_info': 'on_update' entry 1: both 'id' and "
		  "'semaphore'" },
		{ "{\"on_update\":[{\"mode\":\"sem-inc\"}]}",
		  "key 'sync_info': 'on_update' entry 0: needs 'semaphore' (a "
		  "name) or 'id'" },
		{ "{\"on_wait\":[{\"id\":1,\"value\":1,\"wait_value\":2}]}",
		  "key 'sync_info': 'on_wait' entry 0: both 'value' and "
		  "'wait_value'" },
		{ "{\"on_wait\":[{\"id\":-1}]}",
		  "key 'id': expected a non-negative integer, got -1" },
		{ "{\"on_update\":[{\"id\":1,\"core\":\"a\"}]}",
		  "key 'core': expected integer, got string" },
		{ "{\"on_wait\":[7]}",
		  "key 'sync_info': 'on_wait': expected object entries, got "
		  "number" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *x = lm_xasprintf(",\"sync_info\":%s", bad[i].si);
		char *inst_text = lm_xasprintf(NOP("a", "%s"), x);
		t = module_text(2, "gen3", "", inst_text);
		tu_expect_fail(t, bad[i].msg);
		free(t);
		free(inst_text);
		free(x);
	}
}
END_TEST

START_TEST(test_header_keys)
{
	char *t = module_text(2, "gen3", "", "{\"opcode\":\"NoOp\",\"name\":"
		"\"a\",\"engine\":\"ALL\",\"origin\":\"NKI\",\"engine_id\":3,"
		"\"scheduled_start\":10,\"scheduled_end\":12,\"optin_passes\":"
		"[\"p\"],\"debug\":{\"line\":3},\"order\":[],\"ins\":[],"
		"\"outs\":[]}");
	lm_module *m = tu_parse_ok(t);
	lm_inst *a = inst(m, 0);
	ck_assert_int_eq(a->engine, LM_ENG_ALL);
	ck_assert_int_eq(a->origin, LM_ORIGIN_NKI);
	ck_assert_int_eq(a->engine_id, 3);
	ck_assert_int_eq(a->sched_start, 10);
	ck_assert_int_eq(a->sched_end, 12);
	char *s = save(m);
	ck_assert_contains(s, "{\"debug\":{\"line\":3},\"engine\":\"ALL\","
			   "\"engine_id\":3,\"ins\":[],\"name\":\"a\",\"opcode\":"
			   "\"NoOp\",\"optin_passes\":[\"p\"],\"origin\":\"NKI\","
			   "\"outs\":[],\"scheduled_end\":12,\"scheduled_start\":10}");
	roundtrip(m);
	free(s);
	lm_module_free(m);
	free(t);
	/* the header is always written */
	t = module_text(2, "gen3", "", NOP("a", ""));
	m = tu_parse_ok(t);
	s = save(m);
	ck_assert_contains(s, "{\"engine\":\"SP\",\"engine_id\":0,\"ins\":[],"
			   "\"name\":\"a\",\"opcode\":\"NoOp\",\"origin\":"
			   "\"Internal\",\"outs\":[],\"scheduled_end\":0,"
			   "\"scheduled_start\":0}");
	ck_assert_contains(s, "{\"arch\":\"gen3\",\"attributes\":{},");
	ck_assert_contains(s, "\"version\":2}");
	free(s);
	lm_module_free(m);
	free(t);
	t = module_text(2, "gen3", "", NOP("a", ",\"origin\":\"Lean\""));
	tu_expect_fail(t, "key 'origin': unknown NamedObjectOrigin 'Lean'");
	free(t);
	t = module_text(2, "gen3", "", NOP("a", ",\"engine_id\":-1"));
	tu_expect_fail(t, "key 'engine_id': expected a non-negative integer");
	free(t);
	t = module_text(2, "gen3", "", NOP("a", ",\"order\":{}"));
	tu_expect_fail(t, "key 'order': expected array, got object");
	free(t);
	t = module_text(2, "gen3", "", "{\"opcode\":\"Frobnicate\",\"name\":\"a\","
			"\"engine\":\"SP\",\"ins\":[],\"outs\":[]}");
	tu_expect_fail(t, "unknown opcode 'Frobnicate'");
	free(t);
}
END_TEST

#define MM(flag) "{\"opcode\":\"Matmult\",\"name\":\"m\",\"engine\":\"PE\"," \
	"\"ins\":[],\"outs\":[]" flag "}"

START_TEST(test_accumulation_flag)
{
	static const struct { const char *in; int start, stop, rest; } c[] = {
		{ ",\"accumulation_flag\":0", 0, 0, 0 },
		{ ",\"accumulation_flag\":1", 1, 0, 0 },
		{ ",\"accumulation_flag\":2", 0, 1, 0 },
		{ ",\"accumulation_flag\":3", 1, 1, 0 },
		{ ",\"accumulation_flag\":129", 1, 0, 128 },
		{ ",\"start_tensor_calc\":true,\"stop_tensor_calc\":true", 1, 1, 0 },
		{ ",\"start_tensor_calc\":false", 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char *x = lm_xasprintf(MM("%s"), c[i].in);
		char *t = module_text(2, "gen3", "", x);
		lm_module *m = tu_parse_ok(t);
		lm_inst *mm = inst(m, 0);
		ck_assert_int_eq(mm->start_tensor_calc, c[i].start);
		ck_assert_int_eq(mm->stop_tensor_calc, c[i].stop);
		ck_assert_int_eq(mm->acc_flag_rest, c[i].rest);
		char *s = save(m), want[64];
		snprintf(want, sizeof want, "\"accumulation_flag\":%d",
			 c[i].start | c[i].stop << 1 | c[i].rest);
		ck_assert_contains(s, want);
		/* the 13 keys of the matmul record are always written */
		ck_assert_contains(s, "\"psum_zero_region\":0");
		ck_assert_contains(s, "\"is_transpose\":false");
		ck_assert_contains(s, "\"perf_mode\":\"None\"");
		ck_assert_contains(s, "\"tile_size\":[0,0]");
		ck_assert_contains(s, "\"replication_num_rows\":0");
		ck_assert_msg(!strstr(s, "start_tensor_calc"), "%s", s);
		roundtrip(m);
		free(s);
		lm_module_free(m);
		free(t);
		free(x);
	}
	char *t = module_text(2, "gen3", "", MM(",\"accumulation_flag\":256"));
	tu_expect_fail(t, "key 'accumulation_flag': 256 does not fit its 8 bits");
	free(t);
	t = module_text(2, "gen3", "", MM(""));
	tu_expect_fail(t, "Matmult: missing key 'accumulation_flag'");
	free(t);
}
END_TEST

START_TEST(test_partition_encoding)
{
	/* the wire folds the start partition into offset: 2 * 16 + 3 */
	char *t = module_text(2, "gen3", SB_T, "{\"opcode\":\"Memset\","
		"\"name\":\"z\",\"engine\":\"DVE\",\"ins\":[],\"outs\":["
		AP_T("35") "],\"mode\":\"Const\",\"constant\":0}");
	lm_module *m = tu_parse_ok(t);
	lm_arg *o = &inst(m, 0)->outs[0];
	ck_assert_int_eq(o->start_partition, 2);
	ck_assert_int_eq(o->offset, 3);
	char *s = save(m);
	ck_assert_contains(s, "\"offset\":35");
	ck_assert_msg(!strstr(s, "start_partition"), "%s", s);
	roundtrip(m);
	free(s);
	lm_module_free(m);
	free(t);
	/* the legacy key is read, and written folded */
	t = module_text(2, "gen3", SB_T, "{\"opcode\":\"Memset\",\"name\":\"z\","
		"\"engine\":\"DVE\",\"ins\":[],\"outs\":[{\"kind\":\"physical_ap\","
		"\"ap\":[[16,2],[1,8]],\"dtype\":\"float32\",\"offset\":3,"
		"\"start_partition\":1,\"memsetref\":\"t\",\"memref\":\"t\"}],"
		"\"mode\":\"Const\",\"constant\":0}");
	m = tu_parse_ok(t);
	s = save(m);
	ck_assert_contains(s, "\"offset\":19");
	ck_assert_msg(!strstr(s, "start_partition"), "%s", s);
	free(s);
	lm_module_free(m);
	free(t);
	/* a legacy operand strode one partition whatever its first step:
	   its step becomes pe (16 float32 here), and is written so */
	t = module_text(2, "gen3", SB_T, "{\"opcode\":\"Memset\",\"name\":\"z\","
		"\"engine\":\"DVE\",\"ins\":[],\"outs\":[{\"kind\":\"physical_ap\","
		"\"ap\":[[8,2],[1,8]],\"dtype\":\"float32\",\"offset\":3,"
		"\"start_partition\":1,\"memsetref\":\"t\",\"memref\":\"t\"}],"
		"\"mode\":\"Const\",\"constant\":0}");
	m = tu_parse_ok(t);
	ck_assert_int_eq(inst(m, 0)->outs[0].ap[0].step, 16);
	s = save(m);
	ck_assert_contains(s, "\"ap\":[[16,2],[1,8]]");
	ck_assert_contains(s, "\"offset\":19");
	free(s);
	roundtrip(m);
	lm_module_free(m);
	free(t);
	/* in the wire form the step is the stride: 32 is two partitions */
	t = module_text(2, "gen3", SB_T, "{\"opcode\":\"Memset\",\"name\":\"z\","
		"\"engine\":\"DVE\",\"ins\":[],\"outs\":[{\"kind\":\"physical_ap\","
		"\"ap\":[[32,2],[1,8]],\"dtype\":\"float32\",\"offset\":0,"
		"\"memsetref\":\"t\",\"memref\":\"t\"}],\"mode\":\"Const\","
		"\"constant\":0}");
	m = tu_parse_ok(t);
	ck_assert_int_eq(inst(m, 0)->outs[0].ap[0].step, 32);
	ck_assert_int_eq(lm_arg_part_step(&inst(m, 0)->outs[0],
			 &m->functions[0].allocs[0].memlocs[0]), 2);
	lm_module_free(m);
	free(t);
}
END_TEST

START_TEST(test_versions_and_spellings)
{
	/* version 1: an affine op value is written in version 2 form */
	char *t = module_text(1, "sunda", "", "{\"opcode\":\"Drain\",\"name\":"
		"\"d\",\"engine\":\"SP\",\"ins\":[],\"outs\":[],\"is_reset_sema\":"
		"{\"terms\":[{\"AxisLabel\":\"i\",\"coef\":1}],\"c\":0}}");
	lm_module *m = tu_parse_ok(t);
	lm_error verr;
	ck_assert_str_eq(m->arch, "gen2");
	/* read into version 2 form: a module the tools take as it is */
	ck_assert_int_eq(m->version, 2);
	{
		char *t1 = module_text(1, "gen3", "", NOP("n", ""));
		lm_module *m1 = tu_parse_ok(t1);
		ck_assert_int_eq(m1->version, 2);
		ck_assert_msg(lm_verify(m1, NULL, &verr) == 0, "%s", verr.msg);
		lm_module_free(m1);
		free(t1);
	}
	char *s = save(m);
	ck_assert_contains(s, "\"arch\":\"sunda\"");
	ck_assert_contains(s, "\"version\":2");
	ck_assert_contains(s, "\"is_reset_sema\":{");
	ck_assert_contains(s, "AffExprKind");
	ck_assert_msg(!strstr(s, "AxisLabel"), "%s", s);
	lm_module *b = tu_parse_ok(s);
	char *s2 = save(b);
	ck_assert_str_eq(s, s2);
	free(s2);
	lm_module_free(b);
	free(s);
	lm_module_free(m);
	free(t);

	/* a symbolic operand's addresses are affine expressions */
	t = module_text(2, "gen3", "", "{\"opcode\":\"TensorCopy\",\"name\":"
		"\"c\",\"engine\":\"DVE\",\"ins\":[{\"kind\":\"symbolic_ap\","
		"\"memsetref\":\"t\",\"dtype\":\"float32\",\"addrs\":[{"
		"\"kind\":\"SumExpr\"}]}],\"outs\":[]}");
	tu_expect_fail(t, "key 'addrs': affine expression (version 2): expr: "
		    "unknown kind 'SumExpr'");
	free(t);
	t = module_text(3, "gen3", "", "");
	tu_expect_fail(t, "unsupported BIR version 3 (1 or 2)");
	free(t);
	t = module_text(2, "gen3", "", "{\"opcode\":\"Drain\",\"name\":\"d\","
		"\"engine\":\"SP\",\"ins\":[],\"outs\":[],\"is_reset_sema\":"
		"{\"kind\":\"NoSuchKind\"}}");
	tu_expect_fail(t, "key 'is_reset_sema': affine expression (version 2)");
	free(t);

	/* a memory location's type by name or by its MemoryType bit */
	t = module_text(2, "gen3", "{\"name\":\"t\",\"kind\":\"Internal\","
		"\"dtype\":\"float32\",\"tensor_shape\":[4,8],\"memorylocations\":"
		"[{\"name\":\"t\",\"type\":16,\"addr\":0,\"dims\":[4,64],\"bank\":"
		"0,\"base\":0,\"allocated\":true}]}", "");
	m = tu_parse_ok(t);
	ck_assert_int_eq(m->functions[0].allocs[0].memlocs[0].type, LM_MT_SB);
	s = save(m);
	ck_assert_contains(s, "\"type\":16");
	free(s);
	lm_module_free(m);
	free(t);
	t = module_text(2, "gen3", "{\"name\":\"t\",\"kind\":\"Internal\","
		"\"dtype\":\"float32\",\"tensor_shape\":[4,8],\"memorylocations\":"
		"[{\"name\":\"t\",\"type\":3,\"dims\":[4,64]}]}", "");
	tu_expect_fail(t, "key 'type': MemoryType 3 does not exist");
	free(t);
}
END_TEST

/* Documented keys: the ones the model reads into the IR (TensorReduce's)
** and the ones it does not interpret (DMACopy's here): checked, defaults
** dropped (and re-written where always written), others carried. */
START_TEST(test_documented_keys)
{
	char *t = module_text(2, "gen3", "", "{\"opcode\":\"TensorReduce\","
		"\"name\":\"r\",\"engine\":\"DVE\",\"ins\":[],\"outs\":[],\"op\":"
		"\"add\",\"axis\":\"X\",\"negate\":false},"
		"{\"opcode\":\"DMACopy\",\"name\":\"c\",\"engine\":\"SP\",\"ins\":[],"
		"\"outs\":[],\"queue\":\"q\",\"dge_type\":\"Unassigned\","
		"\"dma_qos\":0,\"mode\":\"Transpose\"}");
	lm_module *m = tu_parse_ok(t);
	lm_inst *r = inst(m, 0), *c = inst(m, 1);
	/* the default values are not kept */
	ck_assert_ptr_null(cJSON_GetObjectItem(r->extra, "axis"));
	ck_assert_ptr_null(cJSON_GetObjectItem(r->extra, "negate"));
	ck_assert_ptr_null(cJSON_GetObjectItem(r->extra, "op"));
	ck_assert_int_eq(r->alu, LM_ALU_ADD);
	ck_assert_ptr_null(cJSON_GetObjectItem(c->extra, "dge_type"));
	ck_assert_ptr_null(cJSON_GetObjectItem(c->extra, "dma_qos"));
	ck_assert_ptr_nonnull(cJSON_GetObjectItem(c->extra, "mode"));
	char *s = save(m);
	/* TensorReduce axis is always written, negate and dge_type are not */
	ck_assert_contains(s, "\"axis\":\"X\"");
	ck_assert_msg(!strstr(s, "negate") && !strstr(s, "dge_type") &&
		      !strstr(s, "dma_qos"), "%s", s);
	ck_assert_contains(s, "\"mode\":\"Transpose\"");
	roundtrip(m);
	free(s);
	lm_module_free(m);
	free(t);

	static const char *const bad[][2] = {
		{ "\"axis\":\"Q\"", "key 'axis': unknown AxisListType 'Q' (" },
		{ "\"axis\":99", "key 'axis': AxisListType 99 does not exist" },
		{ "\"axis\":[1]", "key 'axis': expected string, got array" },
		{ "\"negate\":\"yes\"", "key 'negate': expected boolean or affine "
		  "expression, got string" },
		{ "\"apply_transpose\":2", "key 'apply_transpose': expected "
		  "boolean or affine expression, got number" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *x = lm_xasprintf("{\"opcode\":\"TensorReduce\",\"name\":"
				       "\"r\",\"engine\":\"DVE\",\"ins\":[],"
				       "\"outs\":[],\"op\":\"add\",%s}", bad[i][0]);
		t = module_text(2, "gen3", "", x);
		tu_expect_fail(t, bad[i][1]);
		free(t);
		free(x);
	}
}
END_TEST

/* Every one of the 110 opcodes loads and writes back by name. */
START_TEST(test_every_opcode_loads)
{
	const char *names[] = {
#define LM_OPDEF(ord, name, fam, eng, flags, g1, g2, nin, nout) #name,
#include "ops.def"
#undef LM_OPDEF
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *x = lm_xasprintf("{\"opcode\":\"%s\",\"name\":\"i\","
				       "\"engine\":\"SP\",\"ins\":[],\"outs\":[]"
				       "%s}", names[i],
				       !strcmp(names[i], "Matmult") ||
				       !strcmp(names[i], "MatmultSparse") ||
				       !strcmp(names[i], "MatmultMx") ?
				       ",\"accumulation_flag\":3" :
				       !strcmp(names[i], "Activation") ?
				       ",\"func\":\"Identity\"" :
				       !strcmp(names[i], "TensorTensor") ?
				       ",\"op\":\"add\"" : "");
		char *t = module_text(2, "gen3", "", x);
		lm_error err;
		lm_module *m = tu_parse(t, &err);
		if (m) {
			char *s = save(m), want[96];
			snprintf(want, sizeof want, "\"opcode\":\"%s\"", names[i]);
			ck_assert_contains(s, want);
			free(s);
			lm_module_free(m);
		} else {
			/* a few need keys of their own: the message names it */
			ck_assert_msg(strstr(err.msg, "missing key"),
				      "%s: %s", names[i], err.msg);
		}
		free(t);
		free(x);
	}
}
END_TEST

/* What `lncsim gen` writes is the 2.24 form and round-trips. */
START_TEST(test_generated_modules_roundtrip)
{
	char *d = tu_tmpdir("fmtgen");
	for (int seed = 1; seed <= 3; seed++) {
		char sd[16], nm[32];
		snprintf(sd, sizeof sd, "%d", seed);
		snprintf(nm, sizeof nm, "g%d", seed);
		tu_run r = tu_lncsim(d, "gen", "--cores", "2", "--seed", sd,
				     "--name", nm, "-o", "out", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		for (int c = 0; c < 2; c++) {
			char *p = lm_xasprintf("%s/out/%s/nc%d/sg0/def.json", d,
					       nm, c);
			char *txt = tu_read(p);
			lm_error err;
			lm_module *m = NULL;
			ck_assert_ptr_nonnull(txt);
			ck_assert_msg(!strstr(txt, "start_tensor_calc") &&
				      !strstr(txt, "\"wait\"") &&
				      !strstr(txt, "\"signal\"") &&
				      !strstr(txt, "start_partition"),
				      "%s has a legacy key", p);
			ck_assert_contains(txt, "\"version\":\t2");
			ck_assert_msg(lm_module_load(&m, p, &err) == 0, "%s",
				      err.msg);
			roundtrip(m);
			lm_module_free(m);
			free(txt);
			free(p);
		}
	}
	tu_rmtree(d);
	free(d);
}
END_TEST

/* The loader's IR key table stays sorted (a binary search reads it), and
** Memset's mode is a MemsetMode. */
START_TEST(test_ir_key_table)
{
	ck_assert(lm_json_ir_keys_sorted());
	ck_assert(lm_json_iw_keys_sorted());
	char *t = module_text(2, "gen3", "", "{\"opcode\":\"Memset\",\"name\":"
			      "\"m\",\"engine\":\"DVE\",\"ins\":[],\"outs\":[],"
			      "\"mode\":\"Bogus\",\"constant\":0}");
	tu_expect_fail(t, "key 'mode': unknown MemsetMode 'Bogus' (Const, Random");
	free(t);
}
END_TEST

/* Carried references by name resolve: a branch's block, a queue. */
START_TEST(test_carried_refs_verified)
{
	static const char *const cases[][2] = {
		{ "{\"opcode\":\"UnconditionalBranch\",\"name\":\"j\","
		  "\"engine\":\"SP\",\"ins\":[],\"outs\":[],\"target\":"
		  "\"nowhere\"}", "UnconditionalBranch 'j': target 'nowhere' names no "
		  "block of the region" },
		{ "{\"opcode\":\"IndirectLoad\",\"name\":\"g\",\"engine\":"
		  "\"SP\",\"ins\":[],\"outs\":[],\"queue\":\"qq\"}",
		  "queue 'qq' is not a module queue" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *t = module_text(2, "gen3", "", cases[i][0]);
		lm_module *m = tu_parse_ok(t);
		lm_error err;
		ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
		ck_assert_contains(err.msg, cases[i][1]);
		lm_module_free(m);
		free(t);
	}
	/* the block that exists is fine */
	char *t = module_text(2, "gen3", "", "{\"opcode\":\"UnconditionalBranch\","
			      "\"name\":\"j\",\"engine\":\"SP\",\"ins\":[],"
			      "\"outs\":[],\"target\":\"b\"}");
	lm_module *m = tu_parse_ok(t);
	lm_error err;
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	lm_module_free(m);
	free(t);
}
END_TEST

/* The ALL engine loads and is refused by the simulator, by name. */
START_TEST(test_engine_all_refused)
{
	char *d = tu_tmpdir("fmtall");
	/* a NoOp on ALL runs once per engine: with an update it is refused */
	char *t = module_text(2, "gen3", "", "{\"opcode\":\"NoOp\",\"name\":"
			      "\"a\",\"engine\":\"ALL\",\"ins\":[],\"outs\":[],"
			      "\"sync_info\":{\"on_update\":[{\"semaphore\":"
			      "\"s\"}]}}");
	char *p = tu_write(d, "def.json", t);
	tu_run r = tu_lncsim(d, "run", "--list-unsupported", p, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.out, "instruction a: opcode 'NoOp' key 'engine' = "
			   "\"ALL\" is not modelled by the simulator");
	tu_run_free(&r);
	free(p);
	free(t);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* Allocation enums: MemoryAddressSpace by name or number, TensorClass. */
START_TEST(test_allocation_enums)
{
	static const char *const bad[][2] = {
		{ "\"addr_space\":\"Remote\"", "key 'addr_space': unknown "
		  "MemoryAddressSpace 'Remote' (Local, Shared, Debug)" },
		{ "\"addr_space\":7", "key 'addr_space': MemoryAddressSpace 7 "
		  "does not exist" },
		{ "\"tensor_class\":\"Blob\"", "key 'tensor_class': unknown "
		  "TensorClass 'Blob'" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *al = lm_xasprintf("{\"name\":\"t\",\"kind\":\"Internal\","
			"\"dtype\":\"float32\",\"tensor_shape\":[4,8],%s,"
			"\"memorylocations\":[{\"name\":\"t\",\"type\":\"DRAM\","
			"\"dims\":[4,32]}]}", bad[i][0]);
		char *t = module_text(2, "gen3", al, "");
		tu_expect_fail(t, bad[i][1]);
		free(t);
		free(al);
	}
	char *t = module_text(2, "gen3", "{\"name\":\"t\",\"kind\":\"Internal\","
		"\"dtype\":\"float32\",\"tensor_shape\":[4,8],\"addr_space\":1,"
		"\"tensor_class\":\"NeuronSBTensor\",\"memorylocations\":[{"
		"\"name\":\"t\",\"type\":\"DRAM\",\"dims\":[4,32]}]}", "");
	lm_module *m = tu_parse_ok(t);
	ck_assert_str_eq(m->functions[0].allocs[0].addr_space, "Shared");
	char *s2 = save(m);
	ck_assert_contains(s2, "\"addr_space\":\"Shared\"");
	ck_assert_contains(s2, "\"tensor_class\":\"NeuronSBTensor\"");
	free(s2);
	lm_module_free(m);
	free(t);
}
END_TEST

/* Review cases: a null beside a legacy key, sync_info checked whatever
** the key order, a wait added to a kept sync_info, a record in a
** version 1 module, Activation's always-written alpha. */
START_TEST(test_review_cases)
{
	char *t = module_text(2, "gen3", "", MM(",\"accumulation_flag\":null,"
					       "\"start_tensor_calc\":true"));
	lm_module *m = tu_parse_ok(t);
	char *s2 = save(m);
	ck_assert_contains(s2, "\"accumulation_flag\":1");
	roundtrip(m);
	free(s2);
	lm_module_free(m);
	free(t);

	t = module_text(2, "gen3", "", NOP("a", ",\"sync_info\":{\"a\":1,"
					   "\"on_wait\":5}"));
	tu_expect_fail(t, "key 'sync_info': 'on_wait': expected array, got number");
	free(t);
	t = module_text(2, "gen3", "", NOP("a", ",\"sync_info\":{\"a\":1,"
		"\"on_wait\":[{\"semaphore\":\"s\",\"mode\":[]}]}"));
	tu_expect_fail(t, "key 'sync_info': 'on_wait': key 'mode': expected string");
	free(t);

	t = module_text(2, "gen3", "", NOP("a", ",\"sync_info\":{\"on_update\":"
		"[{\"semaphore\":\"s\",\"mode\":\"sem-add-imm\",\"value\":4}]}"));
	m = tu_parse_ok(t);
	lm_inst_add_wait(inst(m, 0), "s", 5);
	s2 = save(m);
	ck_assert_contains(s2, "\"sync_info\":{\"on_update\":[{\"mode\":"
			   "\"sem-add-imm\",\"semaphore\":\"s\",\"value\":4}],"
			   "\"on_wait\":[{\"mode\":\"sem-ge-imm\",\"semaphore\":"
			   "\"s\",\"value\":5}]}");
	free(s2);
	lm_module_free(m);
	free(t);

	t = module_text(1, "gen3", "", "{\"opcode\":\"Loop\",\"name\":\"lp\","
		"\"engine\":\"SP\",\"ins\":[],\"outs\":[],\"LoopAxis\":{"
		"\"name\":\"i\",\"lb\":0,\"ub\":4,\"stride\":1},\"blocks\":[]}");
	m = tu_parse_ok(t);
	s2 = save(m);
	ck_assert_contains(s2, "\"LoopAxis\":{\"lb\":0,\"name\":\"i\","
			   "\"stride\":1,\"ub\":4}");
	free(s2);
	lm_module_free(m);
	free(t);

	t = module_text(2, "gen3", "", "{\"opcode\":\"Activation\","
		"\"acc\":\"Idle\",\"alpha\":0.0,\"op0\":\"bypass\",\"op1\":"
		"\"bypass\",\"reduce_op\":\"bypass\",\"scale\":1.0,\"name\":"
		"\"a\",\"engine\":\"Activation\",\"ins\":[],\"outs\":[],"
		"\"func\":\"Relu\"}");
	m = tu_parse_ok(t);
	s2 = save(m);
	ck_assert_contains(s2, "\"alpha\":0,");
	roundtrip(m);
	free(s2);
	lm_module_free(m);
	free(t);
}
END_TEST

/* ---- carried structures: their shapes on load -------------------------- */

#define DRAM_A(n, extra) "{\"name\":\"" n "\",\"kind\":\"Internal\"," \
	"\"dtype\":\"float32\",\"tensor_shape\":[4],\"memorylocations\":" \
	"[{\"name\":\"" n "\",\"type\":\"DRAM\",\"addr\":0,\"dims\":[1,16]" \
	extra "}]}"

/* A module text with the given module keys, queues, allocations, block
** keys and instructions (each may be ""). */
static char *carry_text(const char *modkeys, const char *queues,
			const char *allocs, const char *blockkeys,
			const char *insts)
{
	return lm_xasprintf(
		"{\"version\":2,\"arch\":\"gen3\",%s\"semaphores\":[{\"name\":"
		"\"s\",\"init\":0}],\"queues\":[{\"name\":\"q\",\"instances\":"
		"[{\"name\":\"qa\",\"semaphore\":\"s\"}]%s}],\"functions\":"
		"[{\"name\":\"f\",\"allocations\":[%s],\"blocks\":[{\"name\":"
		"\"b\",%s\"instructions\":[%s]}]}]}", modkeys, queues, allocs,
		blockkeys, insts);
}

/* A DynamicForLoop axis (version 2 expressions). */
#define CONST0 "{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":0}"
#define AXIS "{\"name\":\"j\",\"lb\":" CONST0 ",\"ub\":" CONST0 "," \
	"\"stride\":" CONST0 "}"

/* Each shape, wrong: the loader's message names the key. */
START_TEST(test_carried_shapes)
{
	static const struct { const char *mod, *queue, *alloc, *blk, *inst,
			      *msg; } cases[] = {
		{ "", "", DRAM_A("a", ",\"alias\":3"), "", "",
		  "function f/allocation a: memory location a: key 'alias': "
		  "expected an array, got number" },
		{ "", "", DRAM_A("a", ",\"alias\":[[\"a\"]]"), "", "",
		  "memory location a: key 'alias': entry 0: expected "
		  "[allocation, memory location, kind] or [memory location, "
		  "kind], got another length" },
		{ "", "", DRAM_A("a", ",\"alias\":[[\"a\",\"a\",9]]"), "", "",
		  "memory location a: key 'alias': entry 0: the kind must be "
		  "an integer 0..7 (its bits), got another number" },
		{ "", "", DRAM_A("a", ",\"alias\":[[\"a\",1,1]]"), "", "",
		  "memory location a: key 'alias': entry 0: expected a name "
		  "(string), got number" },
		{ "", "", "", "\"arguments\":[{\"incoming_values\":{}}],", "",
		  "function f/block b: key 'incoming_values': expected an "
		  "array of [value, block] pairs, got object" },
		{ "", "", "", "\"arguments\":[{\"incoming_values\":[[\"v\"]]}],",
		  "", "function f/block b: key 'incoming_values': entry 0: "
		  "expected [value, block] (two names) or {\"regref\": V, "
		  "\"block\": B}, got another array" },
		{ "\"call_to_physical_memlocs\":1,", "", "", "", "",
		  "t.json: key 'call_to_physical_memlocs': expected an object "
		  "of call names or an array of [call, [memory location, ...]] "
		  "pairs, got number" },
		{ "\"call_to_physical_memlocs\":{\"c\":\"a\"},", "", "", "", "",
		  "key 'call_to_physical_memlocs': entry 0: expected an array "
		  "of memory location names, got string" },
		{ "\"call_to_physical_memlocs\":[[\"c\"]],", "", "", "", "",
		  "key 'call_to_physical_memlocs': entry 0: expected [call, "
		  "[memory location, ...]], got another array" },
		{ "\"call_to_physical_memlocs\":{\"c\":[\"a\",2]},", "", "", "",
		  "", "key 'call_to_physical_memlocs': entry 0: expected a "
		  "memory location name (string), got number" },
		{ "", "", "", "", "{\"opcode\":\"DoWhile\",\"name\":\"dw\","
		  "\"engine\":\"SP\",\"ins\":[],\"outs\":[],\"blocks\":3}",
		  "function f/block b/instruction dw: key 'blocks': expected "
		  "array, got number" },
		{ "", "", "", "", "{\"opcode\":\"DynamicForLoop\",\"name\":"
		  "\"dl\",\"engine\":\"SP\",\"ins\":[],\"outs\":[],"
		  "\"DynamicForLoopAxis\":" AXIS ",\"blocks\":[{\"name\":"
		  "\"body\"}]}",
		  "function f/block body: missing key 'instructions'" },
		{ "", "", "", "", "{\"opcode\":\"DynamicForLoop\",\"name\":"
		  "\"dl\",\"engine\":\"SP\",\"ins\":[],\"outs\":[],"
		  "\"DynamicForLoopAxis\":{\"name\":\"j\",\"lb\":" CONST0 ","
		  "\"stride\":" CONST0 "}}",
		  "instruction dl: key 'DynamicForLoopAxis': missing key 'ub'" },
		{ "", "", "", "", "{\"opcode\":\"DynamicForLoop\",\"name\":"
		  "\"dl\",\"engine\":\"SP\",\"ins\":[],\"outs\":[],"
		  "\"DynamicForLoopAxis\":{\"name\":\"j\",\"lb\":0,\"ub\":"
		  CONST0 ",\"stride\":" CONST0 "}}",
		  "key 'DynamicForLoopAxis': key 'lb': expected affine "
		  "expression object, got number" },
		{ "", "", "", "", "{\"opcode\":\"DynamicForLoop\",\"name\":"
		  "\"dl\",\"engine\":\"SP\",\"ins\":[],\"outs\":[],"
		  "\"DynamicForLoopAxis\":{\"name\":3,\"lb\":" CONST0 ",\"ub\":"
		  CONST0 ",\"stride\":" CONST0 "}}",
		  "key 'DynamicForLoopAxis': key 'name': expected string, got "
		  "number" },
		{ "", "", "", "", "{\"opcode\":\"DMABlock\",\"name\":\"db\","
		  "\"engine\":\"DMA\",\"ins\":[],\"outs\":[],\"blocks\":"
		  "[{\"name\":\"body\",\"instructions\":[{\"opcode\":\"NoOp\"}]}]}",
		  "function f/block body: NoOp instruction: missing key 'name'" },
		{ "", ",\"blocks\":[{\"name\":\"qb\",\"instructions\":"
		  "[{\"opcode\":\"Frob\",\"name\":\"x\"}]}]", "", "", "",
		  "queue q/block qb/instruction x: unknown opcode 'Frob'" },
		{ "", ",\"basic_blocks\":{}", "", "", "",
		  "key 'basic_blocks': expected array, got object" },
		{ "", ",\"blocks\":[],\"basic_blocks\":[]", "", "", "",
		  "queue q: keys 'blocks' and 'basic_blocks' both given (one "
		  "list of blocks)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *t = carry_text(cases[i].mod, cases[i].queue,
				     cases[i].alloc, cases[i].blk,
				     cases[i].inst);
		tu_expect_fail(t, cases[i].msg);
		free(t);
	}
	/* the same shapes, right, load, save and read back */
	char *t = carry_text("\"call_to_physical_memlocs\":[[\"c\",[\"a\"]]],",
			     ",\"blocks\":[{\"name\":\"qb\",\"instructions\":[]}]",
			     DRAM_A("a", ",\"alias\":[[\"a\",\"a\",3],[\"a\","
				    "true]]"),
			     "\"arguments\":[{\"incoming_values\":[[\"a\","
			     "\"b\"]]}],",
			     "{\"opcode\":\"DoWhile\",\"name\":\"dw\",\"engine\":"
			     "\"SP\",\"ins\":[],\"outs\":[],\"cond\":\"wb\","
			     "\"blocks\":[{\"name\":\"wb\",\"instructions\":["
			     NOP("wn", "") "]}]}");
	lm_module *m = tu_parse_ok(t);
	char *s2;
	roundtrip(m);
	lm_module_free(m);
	free(t);
	/* a queue's blocks are named as the queue's in the verifier's words */
	{
		static const struct { const char *queue, *inst, *msg; } vc[] = {
			{ ",\"blocks\":[{\"name\":\"qb\",\"instructions\":["
			  NOP("x", "") "]}]", NOP("x", ""),
			  "duplicate instruction name 'x' (also in function "
			  "'f')" },
			{ ",\"blocks\":[{\"name\":\"qb\",\"instructions\":["
			  NOP("qx", "") "]}]", NOP("x", ",\"dependencies\":"
			  "[[\"qx\",\"Flow\"]]"),
			  "dependency 'qx' is an instruction of queue 'q', not of "
			  "function 'f'" },
		};
		for (size_t i = 0; i < sizeof vc / sizeof *vc; i++) {
			lm_error e;
			t = carry_text("", vc[i].queue, "", "", vc[i].inst);
			m = tu_parse_ok(t);
			ck_assert_int_eq(lm_verify(m, NULL, &e), LM_EINPUT);
			ck_assert_contains(e.msg, vc[i].msg);
			lm_module_free(m);
			free(t);
		}
	}
	/* a version 1 module's body is read as a Loop's is: its affine
	   values written in version 2 form */
	t = lm_xasprintf("{\"version\":1,\"arch\":\"gen3\",\"functions\":[{"
			 "\"name\":\"f\",\"allocations\":[],\"blocks\":[{\"name\":"
			 "\"b\",\"instructions\":[{\"opcode\":\"DoWhile\","
			 "\"name\":\"dw\",\"engine\":\"SP\",\"ins\":[],\"outs\":"
			 "[],\"blocks\":[{\"name\":\"wb\",\"instructions\":["
			 "{\"opcode\":\"NoOp\",\"name\":\"wn\",\"engine\":\"SP\","
			 "\"ins\":[],\"outs\":[],\"order\":[{\"terms\":[],\"c\":3}]}"
			 "]}]}]}]}]}");
	m = tu_parse_ok(t);
	s2 = save(m);
	ck_assert_contains(s2, "\"order\":[{\"c\":3,\"kind\":\"AffExprKind\"");
	free(s2);
	lm_module_free(m);
	free(t);
	/* a version 1 axis is written in version 2 form */
	t = lm_xasprintf("{\"version\":1,\"arch\":\"gen3\",\"functions\":[{"
			 "\"name\":\"f\",\"allocations\":[],\"blocks\":[{\"name\":"
			 "\"b\",\"instructions\":[{\"opcode\":\"DynamicForLoop\","
			 "\"name\":\"dl\",\"engine\":\"SP\",\"ins\":[],\"outs\":"
			 "[],\"DynamicForLoopAxis\":{\"name\":\"j\",\"lb\":{"
			 "\"terms\":[],\"c\":0},\"ub\":{\"terms\":[],\"c\":4},"
			 "\"stride\":{\"terms\":[],\"c\":1}}}]}]}]}");
	m = tu_parse_ok(t);
	s2 = save(m);
	ck_assert_contains(s2, "\"DynamicForLoopAxis\":{\"lb\":{\"c\":0,"
			   "\"kind\":\"AffExprKind\",\"terms\":[]}");
	ck_assert_contains(s2, "\"ub\":{\"c\":4,\"kind\":\"AffExprKind\"");
	free(s2);
	lm_module_free(m);
	free(t);
}
END_TEST

/* The loader refuses a bad shape with exit status 2 on the command line. */
START_TEST(test_carried_shape_exit_status)
{
	char *d = tu_tmpdir("fmtcarry");
	char *t = carry_text("", "", DRAM_A("a", ",\"alias\":[[\"a\"]]"), "",
			     "");
	char *p = tu_write(d, "def.json", t);
	tu_run r = tu_lncsim(d, "verify", "def.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "def.json: function f/allocation a: memory "
			   "location a: key 'alias': entry 0:");
	tu_run_free(&r);
	free(p);
	free(t);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* ---- the control-flow, register, sync and DMA-block fields -------------- */

#define REG_R0 "{\"name\":\"r0\",\"kind\":\"Internal\",\"dtype\":\"int32\"," \
	"\"tensor_shape\":[1],\"memorylocations\":[{\"name\":\"r0\"," \
	"\"type\":\"REG\",\"addr\":0}]}"
#define AFF_C(c) "{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":" c "}"
#define AFF_R0 "{\"kind\":\"AffExprKind\",\"terms\":[{\"idx\":{\"kind\":" \
	"\"IntRuntimeValueKind\",\"regref\":\"r0\"},\"coeff\":1}],\"c\":0}"

/* A module with a queue q, the register r0 and instructions insts. */
static char *control_text(const char *insts)
{
	return lm_xasprintf(
		"{\"version\":2,\"arch\":\"gen3\",\"semaphores\":[{\"name\":\"s\","
		"\"init\":0}],\"queues\":[{\"name\":\"q\",\"instances\":[{"
		"\"name\":\"qa\",\"semaphore\":\"s\"}]}],\"functions\":[{"
		"\"name\":\"f\",\"allocations\":[" REG_R0 "],\"blocks\":[{"
		"\"name\":\"b\",\"instructions\":[%s]}]}]}", insts);
}

static const char control_insts[] =
	"{\"opcode\":\"Loop\",\"LoopAxis\":{\"name\":\"i\",\"lb\":2,"
	"\"ub\":10,\"stride\":3,\"x_note\":1},\"registers\":[\"r0\"],"
	"\"blocks\":[{\"name\":\"lb\",\"instructions\":[" NOP("ln", "") "]}]},"
	"{\"opcode\":\"DynamicForLoop\",\"name\":\"dl\",\"engine\":\"SP\","
	"\"ins\":[],\"outs\":[],\"DynamicForLoopAxis\":{\"name\":\"j\","
	"\"lb\":" AFF_C("0") ",\"ub\":" AFF_R0 ",\"stride\":" AFF_C("1") "},"
	"\"blocks\":[{\"name\":\"dlb\",\"instructions\":[" NOP("dn", "")
	"]}]},"
	"{\"opcode\":\"DoWhile\",\"name\":\"dw\",\"engine\":\"SP\",\"ins\":[],"
	"\"outs\":[],\"cond\":{\"kind\":\"IntRuntimeValueKind\",\"regref\":"
	"\"r0\"},\"blocks\":[{\"name\":\"dwb\",\"instructions\":["
	NOP("wn", "") "]}]},"
	"{\"opcode\":\"CompareAndBranch\",\"name\":\"cb\",\"engine\":\"SP\","
	"\"ins\":[],\"outs\":[],\"comp_op\":\"IS_LTREG\",\"on_true\":\"b\","
	"\"on_false\":\"lb\"},"
	"{\"opcode\":\"UnconditionalBranch\",\"name\":\"ub\",\"engine\":\"SP\","
	"\"ins\":[],\"outs\":[],\"target\":\"dwb\"},"
	"{\"opcode\":\"RegisterAlu\",\"name\":\"ra\",\"engine\":\"SP\","
	"\"ins\":[],\"outs\":[],\"op\":\"mod_int\",\"is_64bit\":true},"
	"{\"opcode\":\"GroupResetSemaphores\",\"name\":\"gr\",\"engine\":\"SP\","
	"\"ins\":[],\"outs\":[],\"sema_group\":[1,2]},"
	"{\"opcode\":\"DMABlock\",\"name\":\"db\",\"engine\":\"DMA\",\"ins\":[],"
	"\"outs\":[],\"queue\":\"q\",\"blocks\":[{\"name\":\"dbb\","
	"\"instructions\":[]}]},"
	"{\"opcode\":\"DMATrigger\",\"name\":\"dt\",\"engine\":\"SP\","
	"\"ins\":[],\"outs\":[],\"queue\":\"q\",\"dma_blocks\":[\"db\"]}";

/* Each field is read into the IR, written back in order, and a module
** with all of them saves and loads back to itself. */
START_TEST(test_control_fields)
{
	char *t = control_text(control_insts), *s2;
	lm_module *m = tu_parse_ok(t);
	lm_inst *lp = inst(m, 0), *dl = inst(m, 1), *dw = inst(m, 2);
	lm_inst *cb = inst(m, 3), *ub = inst(m, 4), *ra = inst(m, 5);
	lm_inst *gr = inst(m, 6), *db = inst(m, 7), *dt = inst(m, 8);
	int64_t v;
	ck_assert(lp->has_axis);
	ck_assert_str_eq(lp->axis.name, "i");
	ck_assert_int_eq(lp->axis.lb, 2);
	ck_assert_int_eq(lp->axis.ub, 10);
	ck_assert_int_eq(lp->axis.stride, 3);
	ck_assert_int_eq(lp->n_loop_regs, 1);
	ck_assert_str_eq(lp->loop_regs[0], "r0");
	ck_assert(dl->has_axis);
	ck_assert_str_eq(dl->axis.name, "j");
	ck_assert_int_eq(lm_affine_const(dl->axis.stride_e, &v), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(lm_affine_const(dl->axis.ub_e, &v), -1);
	ck_assert_int_eq(dl->n_blocks, 1);
	ck_assert_ptr_nonnull(dw->cond);
	ck_assert_int_eq(lm_affine_kind(dw->cond), LM_AFF_REG);
	ck_assert_int_eq(cb->comp_op, 6); /* IS_LTREG */
	ck_assert_str_eq(cb->on_true, "b");
	ck_assert_str_eq(cb->on_false, "lb");
	ck_assert_str_eq(ub->branch_target, "dwb");
	ck_assert_int_eq(ra->reg_alu, 32); /* mod_int */
	ck_assert(ra->is_64bit);
	ck_assert_int_eq(gr->n_sema_group, 2);
	ck_assert_int_eq(gr->sema_group[1], 2);
	ck_assert_str_eq(db->queue, "q");
	ck_assert_int_eq(dt->n_dma_blocks, 1);
	ck_assert_str_eq(dt->dma_blocks[0], "db");
	ck_assert_ptr_null(lp->extra);
	ck_assert_ptr_null(dl->extra);
	ck_assert_ptr_null(dt->extra);
	s2 = save(m);
	ck_assert_contains(s2, "\"LoopAxis\":{\"lb\":2,\"name\":\"i\","
			   "\"stride\":3,\"ub\":10,\"x_note\":1}");
	ck_assert_contains(s2, "\"registers\":[\"r0\"]");
	ck_assert_contains(s2, "\"cond\":{\"kind\":\"IntRuntimeValueKind\","
			   "\"regref\":\"r0\"}");
	ck_assert_contains(s2, "\"comp_op\":\"IS_LTREG\"");
	ck_assert_contains(s2, "\"op\":\"mod_int\"");
	ck_assert_contains(s2, "\"is_64bit\":true");
	ck_assert_contains(s2, "\"sema_group\":[1,2]");
	ck_assert_contains(s2, "\"dma_blocks\":[\"db\"]");
	ck_assert_contains(s2, "\"queue\":\"q\"");
	free(s2);
	roundtrip(m);
	/* defaults are left out */
	cb->comp_op = 0;
	ra->reg_alu = 0;
	ra->is_64bit = 0;
	s2 = save(m);
	ck_assert_ptr_null(strstr(s2, "comp_op"));
	ck_assert_ptr_null(strstr(s2, "is_64bit"));
	ck_assert_ptr_null(strstr(s2, "mod_int"));
	free(s2);
	lm_module_free(m);
	free(t);
}
END_TEST

/* A block's arguments: the register, every form of an incoming value
** (written back in the form it was read), other keys kept. */
START_TEST(test_block_arguments)
{
	char *t = lm_xasprintf(
		"{\"version\":2,\"arch\":\"gen3\",\"functions\":[{\"name\":"
		"\"f\",\"allocations\":[" REG_R0 "],\"blocks\":[{\"name\":"
		"\"b\",\"arguments\":[{\"regref\":\"r0\",\"x_k\":2,"
		"\"incoming_values\":[[\"r0\",\"b\"],{\"regref\":\"r0\","
		"\"block\":\"b\"},{\"value\":\"r0\",\"block\":\"b\"}]},{}],"
		"\"instructions\":[]}]}]}"), *s2;
	lm_module *m = tu_parse_ok(t);
	const lm_block *b = &m->functions[0].blocks[0];
	lm_error err;
	ck_assert(b->has_args);
	ck_assert_int_eq(b->n_args, 2);
	ck_assert_str_eq(b->args[0].regref, "r0");
	ck_assert_int_eq(b->args[0].n_incoming, 3);
	ck_assert_int_eq(b->args[0].incoming[0].form, LM_IN_PAIR);
	ck_assert_int_eq(b->args[0].incoming[1].form, LM_IN_REGREF);
	ck_assert_int_eq(b->args[0].incoming[2].form, LM_IN_VALUE);
	ck_assert_str_eq(b->args[0].incoming[2].block, "b");
	ck_assert_ptr_nonnull(b->args[0].extra);
	ck_assert_ptr_null(b->extra);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	s2 = save(m);
	ck_assert_contains(s2, "\"arguments\":[{\"incoming_values\":[[\"r0\","
			   "\"b\"],{\"block\":\"b\",\"regref\":\"r0\"},{"
			   "\"block\":\"b\",\"value\":\"r0\"}],\"regref\":"
			   "\"r0\",\"x_k\":2},{\"incoming_values\":[]}]");
	roundtrip(m);
	free(s2);
	lm_module_free(m);
	free(t);
	t = lm_xasprintf("{\"version\":2,\"arch\":\"gen3\",\"functions\":[{"
			 "\"name\":\"f\",\"allocations\":[],\"blocks\":[{"
			 "\"name\":\"b\",\"arguments\":[3],\"instructions\":"
			 "[]}]}]}");
	tu_expect_fail(t, "function f/block b: key 'arguments': expected an "
		       "object per argument, got number");
	free(t);
}
END_TEST

/* The fields' bad values, each with its message. */
START_TEST(test_control_fields_bad)
{
	static const struct { const char *from, *to, *msg; } cases[] = {
		{ "\"ub\":10,", "\"ub\":2.5,", "function f/block b: LoopAxis.ub: "
		  "expected an integer, got 2.5" },
		{ "\"lb\":2,", "\"lb\":\"2\",", "LoopAxis.lb: expected an "
		  "integer, got string" },
		{ "\"stride\":3,", "", "LoopAxis: missing key 'stride'" },
		{ "{\"name\":\"i\",", "{\"name\":7,", "LoopAxis.name: expected "
		  "string, got number" },
		{ "\"IS_LTREG\"", "\"IS_LT\"", "instruction cb: key 'comp_op': "
		  "unknown BranchCompareOp 'IS_LT' (IS_LTIMM, " },
		{ "\"mod_int\"", "\"modulo\"", "instruction ra: key 'op': "
		  "unknown AluOpType 'modulo'" },
		{ "\"sema_group\":[1,2]", "\"sema_group\":[1,-2]",
		  "instruction gr: key 'sema_group': expected a non-negative "
		  "integer, got -2" },
		{ "\"dma_blocks\":[\"db\"]", "\"dma_blocks\":[3]",
		  "instruction dt: key 'dma_blocks': expected string, got "
		  "number" },
		{ "\"cond\":{\"kind\":\"IntRuntimeValueKind\",\"regref\":\"r0\"}",
		  "\"cond\":{\"kind\":\"Frob\"}", "instruction dw: key 'cond': "
		  "affine expression (version 2): " },
		{ "\"registers\":[\"r0\"]", "\"registers\":\"r0\"",
		  "key 'registers': expected array, got string" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *in = tu_replace_all(control_insts, cases[i].from, cases[i].to);
		char *t = control_text(in);
		tu_expect_fail(t, cases[i].msg);
		free(t);
		free(in);
	}
	/* cond as a block name is carried as it is */
	char *in = tu_replace_all(control_insts, "\"cond\":{\"kind\":"
			      "\"IntRuntimeValueKind\",\"regref\":\"r0\"}",
			      "\"cond\":\"dwb\"");
	char *t = control_text(in), *s2;
	lm_module *m = tu_parse_ok(t);
	ck_assert_ptr_null(inst(m, 2)->cond);
	s2 = save(m);
	ck_assert_contains(s2, "\"cond\":\"dwb\"");
	roundtrip(m);
	free(s2);
	lm_module_free(m);
	free(t);
	free(in);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("wire");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_dependency_kinds);
	tcase_add_test(tc, test_dependency_bad);
	tcase_add_test(tc, test_dependency_unknown_name);
	tcase_add_test(tc, test_loop_carried);
	tcase_add_test(tc, test_sync_info);
	tcase_add_test(tc, test_header_keys);
	tcase_add_test(tc, test_accumulation_flag);
	tcase_add_test(tc, test_partition_encoding);
	tcase_add_test(tc, test_versions_and_spellings);
	tcase_add_test(tc, test_documented_keys);
	tcase_add_test(tc, test_every_opcode_loads);
	tcase_add_test(tc, test_generated_modules_roundtrip);
	tcase_add_test(tc, test_ir_key_table);
	tcase_add_test(tc, test_carried_refs_verified);
	tcase_add_test(tc, test_carried_shapes);
	tcase_add_test(tc, test_carried_shape_exit_status);
	tcase_add_test(tc, test_engine_all_refused);
	tcase_add_test(tc, test_allocation_enums);
	tcase_add_test(tc, test_review_cases);
	tcase_add_test(tc, test_control_fields);
	tcase_add_test(tc, test_control_fields_bad);
	tcase_add_test(tc, test_block_arguments);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_verify.c -- the module verifier: one test per error class.
**
** Modules are written as JSON with single quotes (turned into double quotes
** by q()) so they read well in C. Each error test starts from a valid module
** (which must pass: the "corrected version"), applies one textual change,
** and checks the exact message. Cases JSON cannot express (the loader
** rejects them) are built by mutating a loaded module.
**
** Text or builder, decided per test: a test that changes one of the
** fixtures below (BASE, TRANSPOSE, LINKED) keeps the text, and so does a
** test whose subject is how a module is spelled; what JSON cannot express
** is a loaded fixture changed in the IR. A test that needs a module of its
** own, whatever its spelling, builds it with the IR builder
** (model/build.h; docs/build.md says the same for every suite).
*/
#include "common.h"
#include "module.h"
#include "verify.h"
#include "json.h"
#include "build.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixtures ----------------------------------------------------------- */

#define APT(n, ap, dt) \
	"{'kind':'physical_ap','memsetref':'" n "','memref':'" n "'," \
	"'offset':0,'ap':" ap ",'dtype':'" dt "'}"
#define AP(n, ap) APT(n, ap, "float32")
#define ML(n, type, addr, dims) \
	"{'name':'" n "','type':'" type "','addr':" addr ",'dims':" dims \
	",'bank':0,'base':0}"
#define ALLOC(n, kind, dt, shape, ml) \
	"{'name':'" n "','kind':'" kind "','dtype':'" dt "','tensor_shape':" \
	shape ",'memorylocations':[" ml "]}"
#define NOARGS "'ins':[],'outs':[]"

/* A valid per-core module using every opcode the simulator executes. */
static const char *BASE =
"{'version':2,'arch':'gen3','name':'vt','attributes':{'neuron_core_id':0},"
"'semaphores':[{'name':'s_dma','init':0},{'name':'s_b','init':0}],"
"'queues':[{'name':'q0','instances':[{'name':'q0a','semaphore':'s_dma'},"
"  {'name':'q0b','semaphore':'s_b'}]}],"
"'functions':["
" {'name':'sg0','allocations':["
"  " ALLOC("in_x", "ExternalInput", "float32", "[128,64]",
	   ML("in_x", "Input", "0", "[128,256]")) ","
"  {'name':'w','kind':'Const','dtype':'float32','tensor_shape':[128,32],"
"   'file':'w.npy','memorylocations':["
	   ML("w", "DRAM", "65536", "[128,128]") "]},"
"  " ALLOC("x_sb", "Internal", "float32", "[128,64]",
	   ML("x_sb", "SB", "0", "[128,256]")) ","
"  " ALLOC("w_sb", "Internal", "float32", "[128,32]",
	   ML("w_sb", "SB", "256", "[128,128]")) ","
"  " ALLOC("bias", "Internal", "float32", "[32,1]",
	   ML("bias", "SB", "384", "[32,4]")) ","
"  {'name':'ps','kind':'Internal','dtype':'float32','tensor_shape':[32,64],"
"   'memorylocations':[{'name':'ps','type':'PSUM',"
"   'addr':2048,'dims':[32,256],'bank':1,'base':0}]},"
"  " ALLOC("y_sb", "Internal", "float32", "[32,64]",
	   ML("y_sb", "SB", "512", "[32,256]")) ","
"  " ALLOC("t_sb", "Internal", "bfloat16", "[32,64]",
	   ML("t_sb", "SB", "768", "[32,128]")) ","
"  " ALLOC("io_sb", "Internal", "float32", "[32,64]",
	   ML("io_sb", "SB", "1024", "[32,256]")) ","
"  " ALLOC("out_y", "ExternalOutput", "float32", "[32,64]",
	   ML("out_y", "Output", "131072", "[32,256]")) ","
"  {'name':'view','kind':'Internal','dtype':'float32','tensor_shape':[32,64],"
"   'remote_local_target':{'name':'out_y','core':1},'memorylocations':["
	   ML("view", "DRAM", "131072", "[32,256]") "]},"
"  {'name':'al','kind':'Internal','dtype':'float32','tensor_shape':[32,64],"
"   'alias_of':'out_y','memorylocations':["
	   ML("al", "DRAM", "196608", "[32,256]") "]}"
" ],'blocks':[{'name':'b0','instructions':["
"  {'opcode':'Load','name':'ld_x','engine':'SP','queue':'q0',"
"   'ins':[" AP("in_x", "[[64,128],[1,64]]") "],"
"   'outs':[" AP("x_sb", "[[64,128],[1,64]]") "]},"
"  {'opcode':'SwitchQueueInstance','name':'sqi','engine':'SP',"
"   'queue':'q0','instance_name':'q0b'," NOARGS "},"
"  {'opcode':'Load','name':'ld_w','engine':'SP','queue':'q0',"
"   'ins':[" AP("w", "[[32,128],[1,32]]") "],"
"   'outs':[" AP("w_sb", "[[32,128],[1,32]]") "]},"
"  {'opcode':'Memset','name':'ms_b','engine':'Pool','mode':'Const',"
"   'constant':0,'value':0.0,'ins':[],"
"   'outs':[" AP("bias", "[[1,32],[1,1]]") "]},"
"  {'opcode':'Matmult','name':'mm','engine':'PE','start_tensor_calc':true,"
"   'stop_tensor_calc':true,'is_transpose':false,"
"   'dependencies':['ld_x','ld_w'],"
"   'wait':[{'semaphore':'s_dma','value':1},{'semaphore':'s_b','value':1}],"
"   'ins':[" AP("w_sb", "[[32,128],[1,32]]") ","
	   AP("x_sb", "[[64,128],[1,64]]") "],"
"   'outs':[" AP("ps", "[[64,32],[1,64]]") "]},"
"  {'opcode':'Activation',"
"'acc':'Idle','alpha':0.0,'op0':'bypass','op1':'bypass',"
"'reduce_op':'bypass','name':'act','engine':'Activation','func':'Relu',"
"   'scale':1.0,'dependencies':['mm','ms_b'],"
"   'ins':[" AP("ps", "[[64,32],[1,64]]") ","
	   AP("bias", "[[1,32],[1,1]]") "],"
"   'outs':[" AP("y_sb", "[[64,32],[1,64]]") "]},"
"  {'opcode':'TensorTensor','name':'tt','engine':'DVE','op':'add',"
"   'ins':[" AP("y_sb", "[[64,32],[1,64]]") ","
	   AP("y_sb", "[[64,32],[1,64]]") "],"
"   'outs':[" AP("y_sb", "[[64,32],[1,64]]") "]},"
"  {'opcode':'TensorScalar','name':'ts','engine':'DVE','op0':'mult',"
"   'const0':2.0,'reverse0':false,'op1':'add','const1':1.0,'reverse1':false,"
"   'ins':[" AP("y_sb", "[[64,32],[1,64]]") "],"
"   'outs':[" APT("t_sb", "[[64,32],[1,64]]", "bfloat16") "]},"
"  {'opcode':'TensorCopy','name':'tc','engine':'Activation',"
"   'ins':[" APT("t_sb", "[[64,32],[1,64]]", "bfloat16") "],"
"   'outs':[" AP("y_sb", "[[64,32],[1,64]]") "]},"
"  {'opcode':'Iota','name':'iota','engine':'Pool','base':0,"
"   'channel_multiplier':64,'pattern':[[1,64]],'ins':[],"
"   'outs':[" AP("io_sb", "[[64,32],[1,64]]") "]},"
"  {'opcode':'TensorScalarAffineSelect','name':'sel','engine':'Pool',"
"   'base':0,'channel_multiplier':1,'pattern':[{'step':-1,'num':64}],"
"   'compare_op':'is_ge','fill_value':0.0,"
"   'ins':[" AP("y_sb", "[[64,32],[1,64]]") "],"
"   'outs':[" AP("io_sb", "[[64,32],[1,64]]") "]},"
"  {'opcode':'Save','name':'st','engine':'SP','queue':'q0','signal':['s_b'],"
"   'dependencies':['sel'],"
"   'ins':[" AP("y_sb", "[[64,32],[1,64]]") "],"
"   'outs':[" AP("out_y", "[[64,32],[1,64]]") "]},"
"  {'opcode':'DMACopy','name':'cp','engine':'SP','queue':'q0','mode':'Copy',"
"   'ins':[" AP("out_y", "[[64,32],[1,64]]") "],"
"   'outs':[" AP("al", "[[1,2048]]") "]},"
"  {'opcode':'NoOp','name':'nop','engine':'Pool',"
"   'wait':[{'semaphore':'s_dma','value':3}],'signal':['s_b']," NOARGS "},"
"  {'opcode':'CoreBarrier','name':'cb','engine':'Pool','id':1,'cores':[0,1],"
   NOARGS "},"
"  {'opcode':'Loop','LoopAxis':{'name':'i','lb':0,'ub':2,'stride':1},"
"   'blocks':[{'name':'lb','instructions':[{'opcode':'NoOp',"
"   'name':'loop_nop','engine':'Pool','dependencies':['cb']," NOARGS "}]}]},"
"  {'opcode':'Call','name':'call','engine':'SP','target':'helper'," NOARGS "},"
"  {'opcode':'NKIKernel','name':'k55','engine':'SP','func':'kern',"
"   'sb_buf_shape':[0,0],'psum_buf_shape':[0,[0,0]],"
"   'func_args':{'k_in':'y_sb'},'func_outs':{'k_out':'out_y'}," NOARGS "},"
"  {'opcode':'NKIKLIRKernel','name':'k56','engine':'SP',"
"   'kernel_format':'bir','klir_binary':'k.json'," NOARGS "},"
"  {'opcode':'Return','name':'ret','engine':'SP'," NOARGS "}"
" ]}]},"
" {'name':'helper','allocations':[],'blocks':[{'name':'hb','instructions':["
"  {'opcode':'Return','name':'h_ret','engine':'SP'," NOARGS "}]}]},"
" {'name':'kern','kind':'nki','allocations':["
"  " ALLOC("k_in", "Internal", "float32", "[32,64]",
	   ML("k_in", "SB", "4096", "[32,256]")) ","
"  " ALLOC("k_out", "Internal", "float32", "[32,64]",
	   ML("k_out", "DRAM", "0", "[32,256]")) "],"
"  'blocks':[{'name':'kb','instructions':["
"  {'opcode':'Return','name':'k_ret','engine':'SP'," NOARGS "}]}]}"
"]}";

/* A PE transpose: data [P=128, F=64] -> [64 partitions, 128]. */
static const char *TRANSPOSE =
"{'version':2,'arch':'gen2','functions':[{'name':'f','allocations':["
"  " ALLOC("d", "Internal", "bfloat16", "[128,64]",
	   ML("d", "SB", "0", "[128,128]")) ","
"  " ALLOC("id", "Internal", "bfloat16", "[64,64]",
	   ML("id", "SB", "128", "[64,128]")) ","
"  {'name':'o','kind':'Internal','dtype':'bfloat16','tensor_shape':[64,128],"
"   'memorylocations':[{'name':'o','type':'PSUM','addr':4096,"
"   'dims':[64,256],'bank':2,'base':0}]}"
" ],'blocks':[{'name':'b','instructions':["
"  {'opcode':'Matmult','name':'tr','engine':'PE','start_tensor_calc':true,"
"   'is_transpose':true,"
"   'ins':[" APT("id", "[[64,64],[1,64]]", "bfloat16") ","
	   APT("d", "[[64,128],[1,64]]", "bfloat16") "],"
"   'outs':[" APT("o", "[[128,64],[1,128]]", "bfloat16") "]}"
"]}]}]}";

/* A linked module: dispatcher main and two core functions. */
#define LINKED_FUNCS \
"{'version':2,'arch':'gen3','name':'lk/sgLnk',"                               \
"'semaphores':[{'name':'nc0.s','init':0},{'name':'nc1.s','init':0}],"         \
"'queues':[{'name':'q','instances':[{'name':'nc0.q','semaphore':'nc0.s'},"    \
"  {'name':'nc1.q','semaphore':'nc1.s'}]}],"                                  \
"'functions':["                                                               \
" {'name':'main','kind':'dispatcher','allocations':["                         \
"  " ALLOC("in", "ExternalInput", "float32", "[128,4]",                       \
	   ML("in", "Input", "0", "[128,16]")) "],"                           \
"  'blocks':[{'name':'dispatcher','instructions':["                           \
"  {'opcode':'Call','name':'call_def_0_instance_0','engine':'Unassigned',"    \
"   'target':'nc0'," NOARGS "},"                                              \
"  {'opcode':'Call','name':'call_def_1_instance_0','engine':'Unassigned',"    \
"   'target':'nc1'," NOARGS "}]}]},"                                          \
" {'name':'nc0','neuron_core_id':0,'allocations':["                           \
"  " ALLOC("sb0", "Internal", "float32", "[128,4]",                           \
	   ML("sb0", "SB", "0", "[128,16]")) "],"                             \
"  'blocks':[{'name':'b0','instructions':["                                   \
"  {'opcode':'SwitchQueueInstance','name':'I-SQI-q-call_def_0_instance_0',"   \
"   'engine':'SP','queue':'q','instance_name':'nc0.q'," NOARGS "},"           \
"  {'opcode':'Load','name':'nc0.ld','engine':'SP','queue':'q',"               \
"   'ins':[" AP("in", "[[4,128],[1,4]]") "],"                                 \
"   'outs':[" AP("sb0", "[[4,128],[1,4]]") "]},"                              \
"  {'opcode':'CoreBarrier','name':'nc0.bar','engine':'Pool','id':0,"          \
"   'cores':[0,1],'group':'bar'," NOARGS "},"                                 \
"  {'opcode':'CoreBarrier','name':'cb_return_call_def_0_instance_0',"         \
"   'engine':'Pool','id':1,'cores':[0,1],'group':'ret'," NOARGS "},"          \
"  {'opcode':'Return','name':'nc0.ret','engine':'Pool'," NOARGS "}]}]},"      \
" {'name':'nc1','neuron_core_id':1,'allocations':["                           \
"  " ALLOC("sb1", "Internal", "float32", "[128,4]",                           \
	   ML("sb1", "SB", "0", "[128,16]")) "],"                             \
"  'blocks':[{'name':'b1','instructions':["                                   \
"  {'opcode':'SwitchQueueInstance','name':'I-SQI-q-call_def_1_instance_0',"   \
"   'engine':'SP','queue':'q','instance_name':'nc1.q'," NOARGS "},"           \
"  {'opcode':'Load','name':'nc1.ld','engine':'SP','queue':'q',"               \
"   'ins':[" AP("in", "[[4,128],[1,4]]") "],"                                 \
"   'outs':[" AP("sb1", "[[4,128],[1,4]]") "]},"                              \
"  {'opcode':'CoreBarrier','name':'nc1.bar','engine':'Pool','id':0,"          \
"   'cores':[0,1],'group':'bar'," NOARGS "},"                                 \
"  {'opcode':'CoreBarrier','name':'cb_return_call_def_1_instance_0',"         \
"   'engine':'Pool','id':1,'cores':[0,1],'group':'ret'," NOARGS "},"          \
"  {'opcode':'Return','name':'nc1.ret','engine':'Pool'," NOARGS "}]}]}"
static const char *LINKED = LINKED_FUNCS "]}";

/* ---- helpers ------------------------------------------------------------ */

/* The text with ' turned into " (caller frees). */
static char *q(const char *s)
{
	char *t = lm_xstrdup(s);
	for (char *p = t; *p; p++)
		if (*p == '\'')
			*p = '"';
	return t;
}

/*
** Replace the first occurrence of `from` that follows `anchor` (NULL: the
** start) in s; both must exist. Returns a new string (caller frees).
*/
static char *subst_after(const char *s, const char *anchor, const char *from,
			 const char *to)
{
	const char *a = anchor ? strstr(s, anchor) : s;
	ck_assert_msg(a != NULL, "anchor \"%s\" not in fixture", anchor);
	const char *p = strstr(a, from);
	ck_assert_msg(p != NULL, "\"%s\" not in fixture", from);
	size_t n1 = (size_t)(p - s), n2 = strlen(to), n3 = strlen(p + strlen(from));
	char *r = lm_xmalloc(n1 + n2 + n3 + 1);
	memcpy(r, s, n1);
	memcpy(r + n1, to, n2);
	memcpy(r + n1 + n2, p + strlen(from), n3 + 1);
	return r;
}

/* Load a fixture (single-quoted JSON); the loader must accept it. */
static lm_module *load(const char *text)
{
	char *t = q(text);
	lm_module *m = NULL;
	lm_error e = {{0}, 0};
	int rc = lm_module_parse(&m, t, strlen(t), "t/def.json", &e);
	ck_assert_msg(rc == 0, "loader rejected fixture: %s", e.msg);
	free(t);
	return m;
}

/* Verify a loaded module; returns rc, message in e. */
static int verify(const lm_module *m, int linked, lm_error *e)
{
	lm_verify_opts o = {linked};
	lm_error_clear(e);
	return lm_verify(m, &o, e);
}

/* The fixture must verify clean. */
static void expect_ok(const char *text, int linked)
{
	lm_module *m = load(text);
	lm_error e;
	int rc = verify(m, linked, &e);
	ck_assert_msg(rc == 0, "unexpected verifier error: %s", e.msg);
	lm_module_free(m);
}

/* The loader must refuse the fixture with a message containing msg. */
static void expect_load_fails(const char *text, const char *msg)
{
	char *t = q(text);
	lm_module *m = NULL;
	lm_error e = {{0}, 0};
	int rc = lm_module_parse(&m, t, strlen(t), "t/def.json", &e);
	ck_assert_msg(rc == LM_EINPUT, "loader accepted a bad fixture "
		      "(expected \"%s\")", msg);
	ck_assert_contains(e.msg, msg);
	free(t);
}

/* The fixture must fail with a message containing msg. */
static void expect_bad(const char *text, int linked, const char *msg)
{
	lm_module *m = load(text);
	lm_error e;
	int rc = verify(m, linked, &e);
	ck_assert_msg(rc == LM_EINPUT, "verifier accepted a bad module "
		      "(expected \"%s\")", msg);
	ck_assert_contains(e.msg, msg);
	ck_assert_contains(e.msg, "t/def.json: ");
	lm_module_free(m);
}

/*
** The base passes; with `from` (after `anchor`) replaced by `to` it fails
** with msg.
*/
static void vary(const char *base, int linked, const char *anchor,
		 const char *from, const char *to, const char *msg)
{
	expect_ok(base, linked);
	char *t = subst_after(base, anchor, from, to);
	expect_bad(t, linked, msg);
	free(t);
}

/* Same for the per-core base module. */
#define VARY(name, anchor, from, to, msg)                                   \
	START_TEST(name) { vary(BASE, 0, anchor, from, to, msg); } END_TEST

/* Same for the linked base module, verified with linked = 1. */
#define LVARY(name, anchor, from, to, msg)                                  \
	START_TEST(name) { vary(LINKED, 1, anchor, from, to, msg); } END_TEST

/* Find an instruction by name in the first function (top-level blocks). */
static lm_inst *inst(lm_module *m, const char *name)
{
	lm_function *f = &m->functions[0];
	for (int b = 0; b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts; i++)
			if (f->blocks[b].insts[i].name &&
			    !strcmp(f->blocks[b].insts[i].name, name))
				return &f->blocks[b].insts[i];
	ck_abort_msg("no instruction %s", name);
	return NULL;
}

/* ---- valid modules ------------------------------------------------------ */

START_TEST(valid_multi_opcode)
{
	expect_ok(BASE, 0);
}
END_TEST

START_TEST(valid_transpose)
{
	expect_ok(TRANSPOSE, 0);
}
END_TEST

START_TEST(valid_linked)
{
	expect_ok(LINKED, 1);
	expect_ok(LINKED, 0);
	/* a per-core module is not a linked module */
	expect_bad(BASE, 1, "function sg0: linked module: the entry function "
		   "must be 'main' (got 'sg0')");
}
END_TEST

START_TEST(resolve_arg)
{
	lm_module *m = load(BASE);
	lm_alloc *a;
	lm_memloc *l;
	lm_inst *in = inst(m, "mm");
	ck_assert_int_eq(lm_resolve_arg(m, &in->outs[0], &a, &l), 0);
	ck_assert_str_eq(a->name, "ps");
	ck_assert_str_eq(l->name, "ps");
	free(in->outs[0].memref);
	in->outs[0].memref = lm_xstrdup("x_sb");
	ck_assert_int_ne(lm_resolve_arg(m, &in->outs[0], &a, &l), 0);
	ck_assert_ptr_null(a);
	ck_assert_ptr_null(l);
	lm_module_free(m);
}
END_TEST

/* ---- module ------------------------------------------------------------- */

START_TEST(bad_version)
{
	lm_module *m = load(BASE);
	lm_error e;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	m->version = 3;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_str_eq(e.msg, "t/def.json: module: unsupported version 3 "
			 "(expected 2)");
	lm_module_free(m);
}
END_TEST

VARY(bad_arch, NULL, "'arch':'gen3'", "'arch':'gen9'",
     "t/def.json: module: unknown arch 'gen9'")

/* A gen4 module t/def.json holding one empty function f, or none. */
static lm_module *functions(int n)
{
	lm_error e;
	lm_builder *b = lm_b_new("gen4", 2, &e);
	lm_module *m = NULL, *back;
	char *text;
	size_t len;
	lm_b_path(b, "t/def.json");
	if (n)
		lm_b_function(b, "f");
	ck_assert_msg(lm_b_finish(b, &m) == 0, "%s", e.msg);
	/* and the loader takes what it saves */
	ck_assert_int_eq(lm_module_to_json(m, 0, &text, &len, &e), 0);
	ck_assert_msg(lm_module_parse(&back, text, len, "t/def.json", &e) == 0,
		      "%s", e.msg);
	lm_module_free(back);
	free(text);
	return m;
}

START_TEST(no_functions)
{
	lm_module *m = functions(1);
	lm_error e;
	ck_assert_msg(verify(m, 0, &e) == 0, "%s", e.msg);
	lm_module_free(m);
	m = functions(0);
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "module: module has no functions");
	ck_assert_contains(e.msg, "t/def.json: ");
	lm_module_free(m);
}
END_TEST

/* ---- names -------------------------------------------------------------- */

VARY(dup_function, NULL, "'name':'helper'", "'name':'kern'",
     "function kern: duplicate function name 'kern'")
VARY(dup_allocation, "'name':'kern'", "'name':'k_in'", "'name':'x_sb'",
     "function kern/allocation x_sb: duplicate allocation name 'x_sb' "
     "(also in function 'sg0')")
VARY(dup_memloc, "'name':'kern'", "{'name':'k_out','type'",
     "{'name':'w_sb','type'",
     "function kern/allocation k_out/memory location w_sb: duplicate memory "
     "location name 'w_sb' (also in function 'sg0')")
VARY(dup_instruction, NULL, "'name':'h_ret'", "'name':'tc'",
     "function helper/block hb/instruction tc: duplicate instruction name "
     "'tc' (also in function 'sg0')")
VARY(dup_instruction_same_function, NULL, "'name':'tt'", "'name':'act'",
     "function sg0/block b0/instruction act: duplicate instruction name "
     "'act' (also in function 'sg0')")
VARY(dup_semaphore, NULL, "{'name':'s_b','init':0}",
     "{'name':'s_dma','init':0}",
     "semaphore s_dma: duplicate semaphore name 's_dma'")
START_TEST(dup_queue)
{
	vary(BASE, 0, NULL, "'queues':[",
	     "'queues':[{'name':'q0','instances':[{'name':'qq',"
	     "'semaphore':'s_b'}]},",
	     "queue q0: duplicate queue name 'q0'");
}
END_TEST
VARY(dup_queue_instance, NULL, "{'name':'q0b'", "{'name':'q0a'",
     "queue q0/instance q0a: duplicate queue instance name 'q0a' (also in "
     "queue 'q0')")
VARY(queue_instance_semaphore, NULL, "'semaphore':'s_b'}]}]",
     "'semaphore':'s_x'}]}]",
     "queue q0/instance q0b: queue instance semaphore 's_x' is not a module "
     "semaphore")

/* ---- operands: resolution ----------------------------------------------- */

VARY(memsetref_unknown, "'name':'tc'", "'memsetref':'y_sb'",
     "'memsetref':'nope'",
     "function sg0/block b0/instruction tc/operand outs[0]: memsetref "
     "'nope' names no allocation")
VARY(memref_wrong_alloc, "'name':'tc'", "'memref':'y_sb'", "'memref':'x_sb'",
     "instruction tc/operand outs[0]: memref 'x_sb' is not a memory "
     "location of allocation 'y_sb'")

START_TEST(operand_dtype_invalid)
{
	lm_module *m = load(BASE);
	lm_error e;
	inst(m, "tc")->ins[0].dtype = LM_DT_INVALID;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction tc/operand ins[0]: invalid dtype");
	lm_module_free(m);
}
END_TEST


/* ---- operands: bounds --------------------------------------------------- */

VARY(sb_partitions_over_128, "'name':'ld_x'",
     "'memref':'x_sb','offset':0,", "'memref':'x_sb','offset':0,"
     "'start_partition':1,",
     "instruction ld_x/operand outs[0]: partitions 1..128 exceed the 128 "
     "partitions")
VARY(sb_partitions_outside_memloc, "'name':'tc'", "[[64,32],[1,64]]",
     "[[64,33],[1,64]]",
     "instruction tc/operand ins[0]: partitions 0..32 of memory location "
     "'t_sb' outside its 32 partitions")
VARY(sb_bytes_outside_memloc, "'name':'tc'", "'offset':0",
     "'offset':1",
     "instruction tc/operand ins[0]: element range 1..64 (bfloat16) outside "
     "memory location 't_sb' (128 bytes per partition)")
VARY(sb_negative_step, "'name':'tc'", "[[64,32],[1,64]]",
     "[[64,32],[-1,64]]",
     "instruction tc/operand ins[0]: access pattern reaches element -63, "
     "before the start of memory location 't_sb'")
VARY(psum_bank_mismatch, NULL, "'addr':2048,'dims':[32,256],'bank':1",
     "'addr':2048,'dims':[32,256],'bank':3",
     "function sg0/allocation ps/memory location ps: PSUM bank 3 does not "
     "match addr 2048 (bank 1)")
VARY(psum_capacity, NULL, "'addr':2048,'dims':[32,256],'bank':1",
     "'addr':16384,'dims':[32,256],'bank':8",
     "memory location ps: PSUM memory location ends at byte 16640, beyond "
     "the 16384-byte PSUM partition")
VARY(dram_outside_tensor, "'name':'ld_x'", "'offset':0", "'offset':1",
     "instruction ld_x/operand ins[0]: element range 1..8192 outside "
     "allocation 'in_x' (8192 elements)")
VARY(dram_outside_dims, "'name':'in_x','type'", "'dims':[128,256]",
     "'dims':[128,255]",
     "instruction ld_x/operand ins[0]: element range 0..8191 (float32) "
     "outside memory location 'in_x' (32640 bytes)")
VARY(dram_negative_element, "'name':'cp'", "[[1,2048]]", "[[-1,2]]",
     "instruction cp/operand outs[0]: access pattern reaches element -1")
VARY(num_not_positive, "'name':'cp'", "[[1,2048]]", "[[1,0]]",
     "instruction cp/operand outs[0]: access pattern pair 0 has num 0 "
     "(must be > 0)")
VARY(ap_empty, "'name':'cp'", "[[1,2048]]", "[]",
     "instruction cp/operand outs[0]: access pattern is empty")
VARY(ap_overflow_json, "'name':'cp'", "[[1,2048]]",
     "[[9007199254740992,1024],[9007199254740992,1024]]",
     "instruction cp/operand outs[0]: access pattern index arithmetic "
     "overflows")
VARY(ap_too_many_elements, "'name':'cp'", "[[1,2048]]",
     "[[0,65536],[0,65536]]",
     "instruction cp/operand outs[0]: access pattern walks more than "
     "2147483647 elements")

START_TEST(ap_overflow_2_62)
{
	lm_module *m = load(BASE);
	lm_error e;
	lm_arg *a = &inst(m, "cp")->outs[0];
	a->ap[0].step = (int64_t)1 << 62;
	a->ap[0].num = 3;  /* 2^62 * 2 = 2^63: overflows int64 */
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction cp/operand outs[0]: access "
			   "pattern index arithmetic overflows");
	/* 2^62 * 1 does not overflow, but is far outside the tensor */
	a->ap[0].num = 2;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "element range 0..4611686018427387904 "
			   "outside allocation 'al'");
	lm_module_free(m);
}
END_TEST

START_TEST(negative_offset_and_start)
{
	lm_module *m = load(BASE);
	lm_error e;
	lm_arg *a = &inst(m, "tc")->ins[0];
	a->offset = -1;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "operand ins[0]: negative offset -1");
	a->offset = 0;
	a->start_partition = -2;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "operand ins[0]: negative start_partition -2");
	a->start_partition = 0;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	lm_module_free(m);
}
END_TEST

/* ---- operand counts and shapes ------------------------------------------ */

VARY(count_mismatch, "'name':'tc'", "[[64,32],[1,64]]", "[[64,32],[1,32]]",
     "instruction tc: element counts differ: ins[0] has 1024, outs[0] has "
     "2048")
VARY(count_mismatch_dma, "'name':'cp'", "[[1,2048]]", "[[1,2047]]",
     "instruction cp: element counts differ: ins[0] has 2048, outs[0] has "
     "2047")
VARY(tensortensor_second_input, "'name':'tt'",
     "'ins':[" AP("y_sb", "[[64,32],[1,64]]") ",",
     "'ins':[" AP("y_sb", "[[64,32],[1,64]]") ","
     AP("y_sb", "[[64,32],[1,64]]") ",",
     "instruction tt: TensorTensor needs 2 inputs, got 3")
VARY(memset_has_input, "'name':'ms_b'", "'ins':[]",
     "'ins':[" AP("bias", "[[1,32],[1,1]]") "]",
     "instruction ms_b: Memset needs 0 inputs, got 1")
VARY(noop_has_output, "'name':'nop'", "'outs':[]",
     "'outs':[" AP("bias", "[[1,32],[1,1]]") "]",
     "instruction nop: NoOp needs 0 outputs, got 1")
VARY(engine_operand_in_dram, "'name':'tc'", "'outs':[" AP("y_sb", "[[64,32],[1,64]]"),
     "'outs':[" AP("out_y", "[[64,32],[1,64]]"),
     "instruction tc/operand outs[0]: TensorCopy operands must be in SBUF "
     "or PSUM ('out_y' is Output)")
VARY(imm_where_tensor_expected, "'name':'tc'",
     "'ins':[" APT("t_sb", "[[64,32],[1,64]]", "bfloat16") "]",
     "'ins':[{'kind':'imm_value','dtype':'float32','value':1.0}]",
     "instruction tc/operand ins[0]: TensorCopy operands must be access "
     "patterns (physical_ap), not imm_value")

/* A register: an allocation whose memory location has type REG. */
#define REG_ALLOC(n) \
	"{'name':'" n "','kind':'Internal','dtype':'int32','tensor_shape':[1]," \
	"'memorylocations':[{'name':'" n "','type':'REG','addr':0}]}"

/* BASE with registers r0, r1 in sg0 and tc's input replaced by operand. */
static char *with_reg_operand(const char *operand)
{
	char *t = subst_after(BASE, NULL, "'allocations':[",
			      "'allocations':[" REG_ALLOC("r0") ","
			      REG_ALLOC("r1") ",");
	char *t2 = subst_after(t, "'name':'tc'",
		"'ins':[" APT("t_sb", "[[64,32],[1,64]]", "bfloat16") "]",
		operand);
	free(t);
	return t2;
}

START_TEST(opaque_operand_skips_shapes)
{
	/* a register operand: carried, resolved by the simulator later */
	char *t = with_reg_operand("'ins':[{'kind':'register_access',"
				   "'dtype':'float32','regref':'r0'}]");
	expect_ok(t, 0);
	free(t);
}
END_TEST

/* Every spelling of a register name resolves to a register allocation;
** the exact message names the operand and the key. */
START_TEST(register_reference_dangling)
{
	static const char *const ok[] = {
		"'ins':[{'kind':'register_access','dtype':'float32',"
		"'regref':'r0'}]",
		"'ins':[{'kind':'register_ap','memsetref':'t_sb','dtype':"
		"'bfloat16','ap':[[64,32],[1,64]],'regref':'r0',"
		"'reg_ap_offset':'r1','reg_sub_tensor_id':'r0',"
		"'const_ap_offset':0,'is_regloc_offset':false}]",
		"'ins':[{'kind':'symbolic_ap','memsetref':'t_sb','dtype':"
		"'bfloat16','addrs':[{'kind':'SumKind','n_terms':1,'terms':[{"
		"'kind':'IntRuntimeValueKind','regref':'r1'}]}]}]",
		"'ins':[{'kind':'register_ap','memsetref':'t_sb','dtype':"
		"'bfloat16','regref':'r0','reg_ap_offset':null}]",
	};
	static const struct { const char *operand, *what; } bad[] = {
		{ "'ins':[{'kind':'register_access','dtype':'float32',"
		  "'regref':'r9'}]",
		  "regref 'r9' names no register allocation" },
		{ "'ins':[{'kind':'register_ap','memsetref':'t_sb','dtype':"
		  "'bfloat16','regref':'r0','reg_ap_offset':'r7'}]",
		  "reg_ap_offset 'r7' names no register allocation" },
		{ "'ins':[{'kind':'register_ap','memsetref':'t_sb','dtype':"
		  "'bfloat16','regref':'r0','reg_sub_tensor_id':'rs'}]",
		  "reg_sub_tensor_id 'rs' names no register allocation" },
		{ "'ins':[{'kind':'symbolic_ap','memsetref':'t_sb','dtype':"
		  "'bfloat16','addrs':[{'kind':'SumKind','n_terms':2,'terms':[{"
		  "'kind':'AffIVKind','axis':'i'},{'kind':'IntRuntimeValueKind',"
		  "'regref':'r5'}]}]}]",
		  "regref 'r5' names no register allocation" },
		{ "'ins':[{'kind':'register_access','dtype':'float32',"
		  "'regref':'t_sb'}]",
		  "regref 't_sb' names allocation 't_sb', which is not a "
		  "register (no REG memory location)" },
		{ "'ins':[{'kind':'register_access','dtype':'float32',"
		  "'regref':3}]",
		  "regref: expected a register name (string)" },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char *t = with_reg_operand(ok[i]);
		expect_ok(t, 0);
		free(t);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *t = with_reg_operand(bad[i].operand);
		lm_module *m = load(t);
		lm_error e;
		char want[512];
		snprintf(want, sizeof want, "t/def.json: function sg0/block "
			 "b0/instruction tc/operand ins[0]: %s", bad[i].what);
		ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
		ck_assert_str_eq(e.msg, want);
		lm_module_free(m);
		free(t);
	}
}
END_TEST

/* An opaque operand's memsetref / memref (at its top or in an access
** pattern nested in it, or in another operand's carried keys) names an
** allocation and one of its memory locations; the exact message names
** the operand and the key. */
START_TEST(tensor_reference_dangling)
{
	static const char *const ok[] = {
		"'ins':[{'kind':'symbolic_ap','memsetref':'t_sb','dtype':"
		"'bfloat16','ap':[[64,32],[1,64]]}]",
		"'ins':[{'kind':'symbolic_ap','memsetref':'t_sb','memref':"
		"'t_sb','dtype':'bfloat16'}]",
		"'ins':[{'kind':'symbolic_ap','memsetref':null,'dtype':"
		"'bfloat16'}]",
		"'ins':[{'kind':'register_ap','memsetref':'t_sb','dtype':"
		"'bfloat16','regref':'r0','dynamic_ap_info':{'index':{'kind':"
		"'physical_ap','memsetref':'x_sb','memref':'x_sb'}}}]",
		"'ins':[{'kind':'imm_array','dtype':'float32','src':{"
		"'memref':'w'}}]",
	};
	static const struct { const char *operand, *what; } bad[] = {
		{ "'ins':[{'kind':'symbolic_ap','memsetref':'x','dtype':"
		  "'bfloat16','ap':[[64,32],[1,64]]}]",
		  "memsetref 'x' names no allocation" },
		{ "'ins':[{'kind':'register_ap','memsetref':'nc1.t_sb',"
		  "'dtype':'bfloat16','regref':'r0'}]",
		  "memsetref 'nc1.t_sb' names no allocation" },
		{ "'ins':[{'kind':'symbolic_ap','memsetref':'t_sb','memref':"
		  "'x_sb','dtype':'bfloat16'}]",
		  "memref 'x_sb' is not a memory location of allocation "
		  "'t_sb'" },
		{ "'ins':[{'kind':'register_ap','memsetref':'t_sb','dtype':"
		  "'bfloat16','regref':'r0','dynamic_ap_info':{'index':{"
		  "'kind':'physical_ap','memsetref':'gone','memref':'gone'}}}]",
		  "memsetref 'gone' names no allocation" },
		{ "'ins':[{'kind':'imm_array','dtype':'float32','src':{"
		  "'memref':'nowhere'}}]",
		  "memref 'nowhere' names no memory location" },
		{ "'ins':[{'kind':'symbolic_ap','memsetref':3,'dtype':"
		  "'bfloat16'}]",
		  "memsetref: expected an allocation name (string)" },
		{ "'ins':[{'kind':'symbolic_ap','memsetref':'t_sb','memref':"
		  "['t_sb'],'dtype':'bfloat16'}]",
		  "memref: expected a memory location name (string)" },
		/* a physical_ap's carried keys are walked too */
		{ "'ins':[{'kind':'physical_ap','memsetref':'t_sb','memref':"
		  "'t_sb','offset':0,'ap':[[64,32],[1,64]],'dtype':'bfloat16',"
		  "'dynamic_ap_info':{'index':{'memsetref':'gone2'}}}]",
		  "memsetref 'gone2' names no allocation" },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char *t = with_reg_operand(ok[i]);
		expect_ok(t, 0);
		free(t);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *t = with_reg_operand(bad[i].operand);
		lm_module *m = load(t);
		lm_error e;
		char want[512];
		snprintf(want, sizeof want, "t/def.json: function sg0/block "
			 "b0/instruction tc/operand ins[0]: %s", bad[i].what);
		ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
		ck_assert_str_eq(e.msg, want);
		lm_module_free(m);
		free(t);
	}
}
END_TEST

/* The renamers and the verifier see the same tensor references: a rename
** through lm_inst_rename_json_refs reaches the nested reference the
** verifier then resolves (and a name renamed away dangles). */
START_TEST(tensor_reference_renamed_like_verified)
{
	char *t = with_reg_operand(
		"'ins':[{'kind':'symbolic_ap','memsetref':'t_sb','dtype':"
		"'bfloat16','dynamic_ap_info':{'ap':{'kind':'physical_ap',"
		"'memsetref':'x_sb','memref':'x_sb'}}}]");
	lm_module *m = load(t);
	lm_strmap allocs, memlocs;
	lm_inst *tc = NULL;
	lm_error e;
	lm_block *b = &m->functions[0].blocks[0];
	for (int i = 0; i < b->n_insts; i++)
		if (b->insts[i].name && !strcmp(b->insts[i].name, "tc"))
			tc = &b->insts[i];
	ck_assert_ptr_nonnull(tc);
	lm_strmap_init(&allocs);
	lm_strmap_init(&memlocs);
	lm_strmap_put(&allocs, "x_sb", (void *)"x_sb2");
	lm_strmap_put(&memlocs, "x_sb", (void *)"x_sb3");
	lm_inst_rename_json_refs(tc, &allocs, &memlocs);
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_str_eq(e.msg, "t/def.json: function sg0/block b0/"
			 "instruction tc/operand ins[0]: memsetref 'x_sb2' "
			 "names no allocation");
	lm_strmap_free(&allocs);
	lm_strmap_free(&memlocs);
	lm_module_free(m);
	free(t);
}
END_TEST

/* Register names among an instruction's fields: a Loop's registers. */
START_TEST(register_reference_in_loop_axis)
{
	char *t = with_reg_operand("'ins':[{'kind':'register_access','dtype':"
				   "'float32','regref':'r0'}]");
	char *ok = subst_after(t, "'opcode':'Loop'", "'stride':1}",
			       "'stride':1},'registers':['r1']");
	char *bad = subst_after(t, "'opcode':'Loop'", "'stride':1}",
				"'stride':1},'registers':['nc0.r1']");
	lm_module *m;
	lm_error e;
	expect_ok(ok, 0);
	m = load(bad);
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_str_eq(e.msg, "t/def.json: function sg0/block b0/loop #15: "
			 "registers 'nc0.r1' names no register allocation");
	lm_module_free(m);
	free(t);
	free(ok);
	free(bad);
}
END_TEST


/* Matmult */
VARY(matmul_contraction, "'name':'mm'", "[[32,128],[1,32]]",
     "[[32,64],[1,32]]",
     "instruction mm: matmul contraction mismatch: stationary has K=64 "
     "partitions, moving has 128")
VARY(matmul_output_shape, "'name':'mm'", "'outs':[" AP("ps", "[[64,32],[1,64]]"),
     "'outs':[" AP("ps", "[[64,32],[1,32]]"),
     "instruction mm: matmul output is [32, 32], expected [M=32, N=64]")
VARY(matmul_output_dtype, "'name':'mm'",
     "'outs':[" AP("ps", "[[64,32],[1,64]]"),
     "'outs':[" APT("ps", "[[128,32],[1,64]]", "bfloat16"),
     "instruction mm: matmul output dtype must be float32 (got bfloat16)")
VARY(matmul_output_not_psum, "'name':'mm'",
     "'outs':[" AP("ps", "[[64,32],[1,64]]"),
     "'outs':[" AP("y_sb", "[[64,32],[1,64]]"),
     "instruction mm: matmul output must be in PSUM")
VARY(matmul_moving_not_sb, "'name':'mm'",
     AP("x_sb", "[[64,128],[1,64]]"),
     "{'kind':'physical_ap','memsetref':'ps','memref':'ps','offset':0,"
     "'ap':[[64,32],[1,64]],'dtype':'float32'}",
     "instruction mm: matmul moving (ins[1]) must be in SB")
VARY(matmul_m_over_128, "'name':'mm'", "'ap':[[32,128],[1,32]]",
     "'ap':[[32,128],[0,129]]",
     "instruction mm: matmul M=129 exceeds 128")

START_TEST(matmul_n_over_512)
{
	/* a [1, 640] fp32 tile in a 4-bank PSUM region */
	char *t = subst_after(BASE, NULL, "'addr':2048,'dims':[32,256],'bank':1",
			      "'addr':0,'dims':[32,8192],'bank':0");
	char *t2 = subst_after(t, "'name':'mm'", "[[64,128],[1,64]]",
			       "[[64,128],[0,640]]");
	char *t3 = subst_after(t2, "'name':'mm'", "[[64,32],[1,64]]",
			       "[[2048,32],[1,640]]");
	expect_bad(t3, 0, "instruction mm: matmul N=640 exceeds 512");
	free(t);
	free(t2);
	free(t3);
}
END_TEST


START_TEST(matmul_bank_crossing_real)
{
	vary(BASE, 0, NULL, "'addr':2048,'dims':[32,256],'bank':1",
	     "'addr':3968,'dims':[32,256],'bank':1",
	     "instruction mm: matmul output crosses a PSUM bank boundary "
	     "(bytes 3968..4223, banks 1..2)");
}
END_TEST


START_TEST(transpose_rules)
{
	char *t;
	t = subst_after(TRANSPOSE, "'name':'tr'", "[[64,64],[1,64]]",
			"[[64,64],[1,32]]");
	expect_bad(t, 0, "instruction tr: transpose stationary must be square "
		   "[F, F] with F=64 (got [64, 32])");
	free(t);
	t = subst_after(TRANSPOSE, "'name':'tr'", "[[128,64],[1,128]]",
			"[[128,64],[1,64]]");
	expect_bad(t, 0, "instruction tr: transpose output is [64, 64], "
		   "expected [F=64, P=128]");
	free(t);
	t = subst_after(TRANSPOSE, "'name':'tr'",
			APT("o", "[[128,64],[1,128]]", "bfloat16"),
			APT("o", "[[128,64],[1,128]]", "float16"));
	expect_bad(t, 0, "instruction tr: transpose output dtype must be "
		   "float32 or bfloat16 (got float16)");
	free(t);
	/* float32 output of a bfloat16 transpose is fine (it fits one bank) */
	t = subst_after(TRANSPOSE, "'name':'tr'",
			APT("o", "[[128,64],[1,128]]", "bfloat16"),
			APT("o", "[[128,64],[1,128]]", "float32"));
	char *t2 = subst_after(t, NULL, "'dims':[64,256]", "'dims':[64,512]");
	expect_ok(t2, 0);
	free(t);
	free(t2);
}
END_TEST

/* Activation */
VARY(activation_needs_bias, "'name':'act'",
     "," AP("bias", "[[1,32],[1,1]]") "]", "]",
     "instruction act: Activation needs 2 inputs, got 1")
VARY(activation_bias_dtype, "'name':'act'",
     AP("bias", "[[1,32],[1,1]]"), APT("bias", "[[2,32],[1,1]]", "bfloat16"),
     "instruction act: Activation bias (ins[1]) must be float32 (got "
     "bfloat16)")
VARY(activation_bias_shape, "'name':'act'",
     AP("bias", "[[1,32],[1,1]]"), AP("bias", "[[1,16],[1,1]]"),
     "instruction act: Activation bias (ins[1]) must be [P, 1] with P=32 "
     "(got [16, 1])")

/* Iota / AffineSelect */
VARY(iota_pattern_size, "'name':'iota'", "'pattern':[[1,64]]",
     "'pattern':[[1,32]]",
     "instruction iota: pattern walks 32 elements per partition, the output "
     "has 64")
VARY(affine_pattern_num, "'name':'sel'", "{'step':-1,'num':64}",
     "{'step':-1,'num':0}",
     "instruction sel: pattern pair 0 has num 0 (must be > 0)")

START_TEST(pattern_missing)
{
	lm_module *m = load(BASE);
	lm_error e;
	lm_inst *in = inst(m, "iota");
	int n = in->n_pattern;
	in->n_pattern = 0;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction iota: Iota needs a pattern");
	in->n_pattern = n;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	lm_module_free(m);
}
END_TEST

/* ---- opcode fields and references --------------------------------------- */

/* lncsim needs a DMA's queue: the loader wants the key, the verifier a
** name in the IR */
START_TEST(dma_needs_queue)
{
	char *t = subst_after(BASE, "'name':'ld_w'", "'queue':'q0',", "");
	expect_load_fails(t, "function sg0/block b0/instruction ld_w: Load: "
			  "missing key 'queue'");
	free(t);
	lm_module *m = load(BASE);
	lm_error e;
	lm_inst *in = inst(m, "ld_w");
	char *s = in->queue;
	in->queue = NULL;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction ld_w: Load needs queue");
	in->queue = s;
	in = inst(m, "call");
	s = in->target;
	in->target = NULL;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction call: Call needs target");
	in->target = s;
	in = inst(m, "sqi");
	s = in->instance_name;
	in->instance_name = NULL;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction sqi: SwitchQueueInstance needs "
			   "instance");
	in->instance_name = s;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	lm_module_free(m);
}
END_TEST
VARY(dma_unknown_queue, "'name':'st'", "'queue':'q0'", "'queue':'q9'",
     "instruction st: queue 'q9' is not a module queue")
VARY(sqi_unknown_instance, "'name':'sqi'", "'instance_name':'q0b'",
     "'instance_name':'q7'",
     "instruction sqi: queue instance 'q7' does not exist")

START_TEST(sqi_instance_of_other_queue)
{
	char *t = subst_after(BASE, NULL, "'queues':[",
			      "'queues':[{'name':'q1','instances':[{'name':"
			      "'q1a','semaphore':'s_b'}]},");
	vary(t, 0, "'name':'sqi'", "'instance_name':'q0b'",
	     "'instance_name':'q1a'",
	     "instruction sqi: instance 'q1a' is not an instance of queue 'q0' "
	     "(it belongs to 'q1')");
	free(t);
}
END_TEST

VARY(call_unknown_target, "'name':'call'", "'target':'helper'",
     "'target':'nope'",
     "instruction call: Call target 'nope' is not a function of the module")
VARY(nkikernel_unknown_func, "'name':'k55'", "'func':'kern'",
     "'func':'kern2'",
     "instruction k55: NKIKernel func 'kern2' is not a function of the "
     "module")
VARY(nkikernel_dangling_arg, "'name':'k55'", "{'k_in':'y_sb'}",
     "{'k_in':'zz'}",
     "instruction k55: func_args maps 'k_in' to 'zz', which names no "
     "allocation")
VARY(nkikernel_unknown_formal, "'name':'k55'", "{'k_out':'out_y'}",
     "{'k_zz':'out_y'}",
     "instruction k55: func_outs formal 'k_zz' is not an allocation of "
     "function 'kern'")

START_TEST(carrier_fields)
{
	lm_module *m = load(BASE);
	lm_error e;
	lm_inst *in = inst(m, "k56");
	char *s = in->klir_binary;
	in->klir_binary = NULL;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction k56: NKIKLIRKernel needs "
			   "klir_binary");
	in->klir_binary = s;
	s = in->kernel_format;
	in->kernel_format = NULL;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "NKIKLIRKernel needs kernel_format");
	in->kernel_format = s;
	in = inst(m, "k55");
	s = in->func;
	in->func = NULL;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction k55: NKIKernel needs func");
	in->func = s;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	lm_module_free(m);
}
END_TEST

/* kernel_source is one of the KernelSource names (or absent) */
START_TEST(nkikernel_kernel_source)
{
	lm_module *m = load(BASE);
	lm_error e;
	lm_inst *in = inst(m, "k55");
	const char *ok[] = { "Beta1", "Beta2", "Beta3", NULL };
	for (int i = 0; i < 4; i++) {
		lm_inst_set_str(in, &in->kernel_source, ok[i]);
		ck_assert_msg(verify(m, 0, &e) == 0, "%s: %s",
			      ok[i] ? ok[i] : "absent", e.msg);
	}
	lm_inst_set_str(in, &in->kernel_source, "Beta4");
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction k55: Unknown KernelSource "
			   "'Beta4' (kernel_source must be Beta1, Beta2 or "
			   "Beta3)");
	lm_inst_set_str(in, &in->kernel_source, "");
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "Unknown KernelSource ''");
	lm_module_free(m);
}
END_TEST

START_TEST(opcode_enums_missing)
{
	lm_module *m = load(BASE);
	lm_error e;
	inst(m, "act")->act_func = LM_ACT_INVALID;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction act: Activation needs func");
	inst(m, "act")->act_func = LM_ACT_RELU;
	inst(m, "ts")->alu1 = LM_ALU_INVALID;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction ts: TensorScalar needs op1");
	inst(m, "ts")->alu1 = LM_ALU_ADD;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	lm_module_free(m);
}
END_TEST

/* ---- references by name, one per kind of fields.def's REF column --------- */

/* Opcodes lncsim carries, each naming what its rows say it names. */
static const char *REFS =
"{'version':2,'arch':'gen3',"
"'semaphores':[{'name':'s','init':0}],"
"'queues':[{'name':'q','instances':[{'name':'qa','semaphore':'s'}]},"
"  {'name':'q2','instances':[{'name':'q2a','semaphore':'s'}]}],"
"'functions':["
" {'name':'f','allocations':["
"  " ALLOC("r", "Internal", "int32", "[1]", ML("r", "REG", "0", "[1,4]")) ","
"  " ALLOC("t", "Internal", "float32", "[1,4]", ML("t", "SB", "0", "[1,16]"))
" ],'blocks':[{'name':'b','instructions':["
"  {'opcode':'UnconditionalBranch','name':'j','engine':'SP',"
"   'target':'b2'," NOARGS "},"
"  {'opcode':'CompareAndBranch','name':'cbr','engine':'SP','on_true':'b',"
"   'on_false':'b2'," NOARGS "},"
"  {'opcode':'BranchHint','name':'h','engine':'SP',"
"   'associate_branch':'b2'," NOARGS "},"
"  {'opcode':'CollectiveSend','name':'cs','engine':'Pool','queue':'q',"
"   'peer_id':{'kind':'AffExprKind','terms':[],'c':1}," NOARGS "},"
"  {'opcode':'DMATrigger','name':'dt','engine':'SP','queue':'q',"
"   'dma_blocks':['db']," NOARGS "},"
"  {'opcode':'DMABlock','name':'db','engine':'DMA','dma_trigger':'dt',"
   NOARGS "},"
"  {'opcode':'DoWhile','name':'dw','engine':'SP','cond':'wc',"
"   'blocks':[{'name':'wb','instructions':[]},"
"   {'name':'wc','instructions':[]}]," NOARGS "},"
"  {'opcode':'Loop','LoopAxis':{'name':'i','lb':0,'ub':2,'stride':1},"
"   'registers':['r'],'blocks':[{'name':'lb','instructions':[]}]},"
"  {'opcode':'Call','name':'c','engine':'SP','target':'g',"
"   'arguments':{'gx':'t'}," NOARGS "},"
"  {'opcode':'NKIKLIRKernel','name':'k','engine':'SP',"
"   'kernel_format':'bir','klir_binary':'k.json','func_args':{'a':'t'},"
   NOARGS "},"
"  {'opcode':'ResetQueueInstance','name':'rq','engine':'SP','queue':'q',"
"   'instance':'qa'," NOARGS "},"
"  {'opcode':'Return','name':'ret','engine':'SP'," NOARGS "}"
" ]},{'name':'b2','instructions':[]}]},"
" {'name':'g','allocations':["
"  " ALLOC("gx", "Internal", "float32", "[1,4]", ML("gx", "SB", "64", "[1,16]"))
" ],'blocks':[{'name':'gb','instructions':[]}]}"
"]}";

#define RVARY(name, anchor, from, to, msg)                                  \
	START_TEST(name) { vary(REFS, 0, anchor, from, to, msg); } END_TEST

RVARY(ref_queue, "'name':'cs'", "'queue':'q'", "'queue':'qq'",
      "function f/block b/instruction cs: queue 'qq' is not a module queue")
RVARY(ref_qinst_unknown, "'name':'rq'", "'instance':'qa'",
      "'instance':'qz'",
      "instruction rq: queue instance 'qz' does not exist")
RVARY(ref_qinst_of_other_queue, "'name':'rq'", "'instance':'qa'",
      "'instance':'q2a'",
      "instruction rq: instance 'q2a' is not an instance of queue 'q' (it "
      "belongs to 'q2')")
RVARY(ref_func, "'name':'c'", "'target':'g'", "'target':'gg'",
      "instruction c: Call target 'gg' is not a function of the module")
RVARY(ref_block_target, "'name':'j'", "'target':'b2'", "'target':'b3'",
      "function f/block b/instruction j: UnconditionalBranch 'j': target "
      "'b3' names no block of the region")
RVARY(ref_block_on_false, "'name':'cbr'", "'on_false':'b2'",
      "'on_false':'lb2'",
      "instruction cbr: CompareAndBranch 'cbr': on_false 'lb2' names no "
      "block of the region")
/* a block of the function, but of a loop's body: a branch stays in its
** region */
RVARY(branch_other_region, "'name':'cbr'", "'on_false':'b2'",
      "'on_false':'lb'",
      "instruction cbr: CompareAndBranch 'cbr': on_false 'lb' names no "
      "block of the region (a block of another region of the function: a "
      "branch stays in its own)")
RVARY(ref_block_hint, "'name':'h'", "'associate_branch':'b2'",
      "'associate_branch':'zz'",
      "instruction h: associate_branch 'zz' is not a block of function 'f'")
RVARY(ref_block_cond, "'name':'dw'", "'cond':'wc'", "'cond':'wd'",
      "instruction dw: cond 'wd' is not a block of function 'f'")
RVARY(ref_inst, "'name':'db'", "'dma_trigger':'dt'", "'dma_trigger':'dx'",
      "instruction db: dma_trigger 'dx' names no instruction of function "
      "'f'")
RVARY(ref_dmablock_unknown, "'name':'dt'", "'dma_blocks':['db']",
      "'dma_blocks':['db','dz']",
      "instruction dt: dma_blocks 'dz' names no DMABlock of function 'f'")
RVARY(ref_dmablock_not_one, "'name':'dt'", "'dma_blocks':['db']",
      "'dma_blocks':['j']",
      "instruction dt: dma_blocks 'j' names no DMABlock of function 'f'")
RVARY(ref_alloc_call, "'name':'c'", "{'gx':'t'}", "{'gx':'tt'}",
      "instruction c: arguments maps 'gx' to 'tt', which names no "
      "allocation")
RVARY(ref_alloc_kernel, "'name':'k'", "{'a':'t'}", "{'a':'u'}",
      "instruction k: func_args maps 'a' to 'u', which names no allocation")
RVARY(ref_call_formal, "'name':'c'", "{'gx':'t'}", "{'gy':'t'}",
      "instruction c: arguments formal 'gy' is not an allocation of "
      "function 'g'")
RVARY(ref_register_not_one, NULL, "'registers':['r']", "'registers':['t']",
      "function f/block b/loop #7: registers 't' names allocation 't', "
      "which is not a register (no REG memory location)")
RVARY(ref_register_unknown, NULL, "'registers':['r']",
      "'registers':['r','r9']",
      "loop #7: registers 'r9' names no register allocation")

/* A required key without a default, carried, missing: the verifier says
** so (a module built in memory; the loader refuses the text). */
START_TEST(ref_required_carried_missing)
{
	lm_module *m = load(REFS);
	lm_error e;
	lm_inst *in = inst(m, "cbr");
	char *x = in->on_true;
	ck_assert_ptr_nonnull(x);
	in->on_true = NULL;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "function f/block b/instruction cbr: "
			   "CompareAndBranch needs on_true");
	in->on_true = x;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	lm_module_free(m);
	char *t = subst_after(REFS, NULL, "'on_true':'b',", "");
	expect_load_fails(t, "function f/block b/instruction cbr: "
			  "CompareAndBranch: missing key 'on_true'");
	free(t);
}
END_TEST

/* ---- loops, branches, sync_info entries, DMA blocks ----------------------- */

#define IV(a) "{'kind':'AffIVKind','axis':'" a "'}"
#define CONST(c) "{'kind':'AffExprKind','terms':[],'c':" c "}"
#define NOP_(n, more) "{'opcode':'NoOp','name':'" n "','engine':'SP'," \
	NOARGS more "}"

/*
** Loop lp (axis i) around a branch back to its block and DynamicForLoop
** dl (axis j, its trip count in register r) around dn and a Break; sync
** entries of both forms on w and wr (s by name, sid slot 7 of the bank),
** a group reset of slot 7, DMA block db of queue q and its trigger.
*/
static const char *LOOPS =
"{'version':2,'arch':'gen3',"
"'semaphores':[{'name':'s','init':0},{'name':'sid','init':0,'id':7}],"
"'queues':[{'name':'q','instances':[{'name':'qa','semaphore':'s'}]},"
"  {'name':'q2','instances':[{'name':'q2a','semaphore':'s'}]}],"
"'functions':["
" {'name':'f','allocations':["
"  " ALLOC("r", "Internal", "int32", "[1]", ML("r", "REG", "0", "[1,4]")) ","
"  " ALLOC("t", "Internal", "float32", "[1,4]", ML("t", "SB", "0", "[1,16]"))
" ],'blocks':[{'name':'b','instructions':["
"  {'opcode':'Loop','name':'lp','LoopAxis':{'name':'i','lb':0,'ub':4,"
"   'stride':1},'blocks':[{'name':'lb','instructions':["
"   {'opcode':'CompareAndBranch','name':'cb','engine':'SP','on_true':'lb',"
"    'on_false':'lb'," NOARGS "},"
"   {'opcode':'DynamicForLoop','name':'dl','engine':'SP',"
"    'DynamicForLoopAxis':{'name':'j','lb':" CONST("0") ",'ub':{'kind':"
"'AffExprKind','terms':[{'idx':{'kind':'IntRuntimeValueKind','regref':"
"'r'},'coeff':2}],'c':1},'stride':" CONST("1") "},"
"    'blocks':[{'name':'db','instructions':["
"     " NOP_("dn", ",'order':[" IV("j") "," IV("i") "]") ","
"     {'opcode':'Break','name':'brk','engine':'SP'," NOARGS "}]}],"
     NOARGS "}]}]},"
"  " NOP_("w", ",'sync_info':{'on_wait':[{'id':7,'wait_value':1}],"
"   'on_update':[{'semaphore':'s','mode':'sem-inc','value':1},"
"   {'id':7,'mode':'sem-dec'},{'id':3,'mode':'evt-set'}]}") ","
"  " NOP_("wr", ",'sync_info':{'on_wait':[{'semaphore':'s','mode':"
"   'sem-ge-reg','regref':'r'}]}") ","
"  {'opcode':'GroupResetSemaphores','name':'gr','engine':'SP',"
"   'sema_group':[7]," NOARGS "},"
"  {'opcode':'DMABlock','name':'db0','engine':'DMA','queue':'q'," NOARGS
"   ,'blocks':[{'name':'dbb','instructions':[{'opcode':"
"   'DMADescriptorCopy','name':'dc','engine':'DMA','ins':["
    AP("t", "[[4,1],[1,4]]") "],'outs':[" AP("t", "[[4,1],[1,4]]") "]}]}]},"
"  {'opcode':'DMATrigger','name':'dt','engine':'SP','queue':'q',"
"   'dma_blocks':['db0']," NOARGS "},"
"  {'opcode':'UnconditionalBranch','name':'j','engine':'SP',"
"   'target':'b2'," NOARGS "}"
" ]},{'name':'b2','instructions':[]}]}"
"]}";

#define LPVARY(name, anchor, from, to, msg)                                 \
	START_TEST(name) { vary(LOOPS, 0, anchor, from, to, msg); } END_TEST

LPVARY(loop_negative_trip, "'name':'lp'", "'lb':0,'ub':4", "'lb':4,'ub':0",
       "t/def.json: function f/block b/loop lp: Loop 'lp' axis 'i': lb 4, "
       "ub 0, stride 1: negative trip count")
LPVARY(loop_stride_zero, "'name':'lp'", "'stride':1}", "'stride':0}",
       "function f/block b/loop lp: Loop 'lp' axis 'i': lb 0, ub 4, "
       "stride 0: stride 0")
LPVARY(loop_stride_negative, "'name':'lp'", "'stride':1}", "'stride':-1}",
       "Loop 'lp' axis 'i': lb 0, ub 4, stride -1: negative stride (a loop "
       "counts up)")
LPVARY(dynloop_ub_not_register, "'name':'dl'", "'regref':'r'},'coeff':2}]",
       "'regref':'r'},'coeff':2},{'idx':{'kind':'ShardIDKind','ub':2},"
       "'coeff':1}]",
       "function f/block b/loop lp/block lb/instruction dl: "
       "DynamicForLoop 'dl' axis 'j': ub must be one IntRuntimeValueKind "
       "term (coeff * register + c)")
LPVARY(dynloop_ub_constant, "'name':'dl'", "'ub':{'kind':'AffExprKind',"
       "'terms':[{'idx':{'kind':'IntRuntimeValueKind','regref':'r'},"
       "'coeff':2}],'c':1}", "'ub':" CONST("3"),
       "DynamicForLoop 'dl' axis 'j': ub must be one IntRuntimeValueKind "
       "term (coeff * register + c)")
LPVARY(dynloop_lb_not_constant, "'name':'dl'", "'lb':" CONST("0"),
       "'lb':{'kind':'AffExprKind','terms':[{'idx':{'kind':"
       "'IntRuntimeValueKind','regref':'r'},'coeff':1}],'c':0}",
       "DynamicForLoop 'dl' axis 'j': lb must be a constant (an AffExprKind "
       "without terms)")
LPVARY(dynloop_stride_zero, "'name':'dl'", "'stride':" CONST("1"),
       "'stride':" CONST("0"),
       "DynamicForLoop 'dl' axis 'j': stride must be a constant > 0 (an "
       "AffExprKind without terms)")
LPVARY(iv_unknown, "'name':'dn'", IV("j") "," IV("i"), IV("j") "," IV("k"),
       "function f/block b/loop lp/block lb/instruction dl/block db/"
       "instruction dn: order: AffIVKind 'k' names no enclosing loop axis "
       "(enclosing: j, i)")
LPVARY(iv_outside_loops, "'name':'w'", "'ins':[]", "'order':[" IV("i")
       "],'ins':[]", "function f/block b/instruction w: order: AffIVKind "
       "'i' names no enclosing loop axis (enclosing: none)")
LPVARY(iv_own_axis_in_bounds, "'name':'dl'", "'lb':" CONST("0"),
       "'lb':{'kind':'AffExprKind','terms':[{'idx':" IV("j") ",'coeff':1}],"
       "'c':0}", "instruction dl: DynamicForLoopAxis: AffIVKind 'j' names "
       "no enclosing loop axis (enclosing: i)")
LPVARY(branch_unknown_block, "'name':'cb'", "'on_false':'lb'",
       "'on_false':'x'", "function f/block b/loop lp/block lb/instruction "
       "cb: CompareAndBranch 'cb': on_false 'x' names no block of the "
       "region")
LPVARY(branch_out_of_loop, "'name':'cb'", "'on_true':'lb'",
       "'on_true':'b2'", "CompareAndBranch 'cb': on_true 'b2' names no "
       "block of the region (a block of another region of the function: a "
       "branch stays in its own)")
LPVARY(break_outside_loop, NULL, "'opcode':'UnconditionalBranch',"
       "'name':'j'", "'opcode':'Break','name':'j'",
       "function f/block b/instruction j: Break 'j' is not inside a loop")
LPVARY(sem_id_undeclared, "'name':'w'", "{'id':7,'wait_value':1}",
       "{'id':8,'wait_value':1}", "function f/block b/instruction w: "
       "on_wait: semaphore id 8 is not declared by the module (core 0)")
LPVARY(sem_id_out_of_range, "'name':'w'", "{'id':7,'mode':'sem-dec'}",
       "{'id':300,'mode':'sem-dec'}",
       "instruction w: on_update: semaphore id 300 is outside 0..255")
LPVARY(sem_inc_value, "'name':'w'", "'mode':'sem-inc','value':1",
       "'mode':'sem-inc','value':2", "instruction w: on_update sem-inc: "
       "value 2 (Semaphore inc value must be 1)")
LPVARY(sem_dec_value, "'name':'w'", "{'id':7,'mode':'sem-dec'}",
       "{'id':7,'mode':'sem-dec','update_value':3}", "instruction w: "
       "on_update sem-dec: value 3 (Semaphore dec value must be 1)")
LPVARY(sem_event_by_name, "'name':'w'", "{'id':3,'mode':'evt-set'}",
       "{'semaphore':'s','mode':'evt-set'}", "instruction w: on_update "
       "evt-set: an event is given by its id, not by a name ('s')")
LPVARY(sem_mode_invalid, "'name':'w'", "{'id':7,'wait_value':1}",
       "{'id':7,'wait_value':1,'mode':'invalid'}",
       "instruction w: on_wait: mode 'invalid' has no meaning")
LPVARY(sem_ge_reg_no_register, "'name':'wr'", ",'regref':'r'", "",
       "instruction wr: on_wait sem-ge-reg: needs regref (the register "
       "holding the threshold)")
LPVARY(sem_ge_reg_not_register, "'name':'wr'", "'regref':'r'",
       "'regref':'t'", "instruction wr: on_wait regref 't' names "
       "allocation 't', which is not a register (no REG memory location)")
LPVARY(sem_regref_without_ge_reg, "'name':'wr'", "'sem-ge-reg'",
       "'sem-ge-imm'", "instruction wr: on_wait sem-ge-imm: regref 'r' "
       "given (only a sem-ge-reg wait reads a register)")
LPVARY(sema_group_undeclared, "'name':'gr'", "[7]", "[7,9]",
       "instruction gr: sema_group: semaphore id 9 is not declared by the "
       "module (core 0)")
LPVARY(dmablock_queue_missing, "'name':'db0'", "'queue':'q'",
       "'queue':'qX'", "function f/block b/instruction db0: DMA block 'db0' "
       "names queue 'qX', which does not exist")
LPVARY(dmatrigger_other_queue, "'name':'db0'", "'queue':'q'",
       "'queue':'q2'", "function f/block b/instruction dt: DMATrigger 'dt' "
       "(queue q): dma_blocks 'db0' is a DMA block of another queue (queue "
       "q2)")

LPVARY(descriptor_dynamic_ap, "'name':'dc'", "'ins':[{'kind':'physical_ap'",
       "'ins':[{'kind':'register_ap','regref':'r','memsetref':'t',"
       "'dtype':'float32'},{'kind':'physical_ap'",
       "function f/block b/instruction db0/block dbb/instruction dc: ins[0]: "
       "register_ap: DMA descriptor cannot have dynamic AP (a descriptor's "
       "operands are physical_ap)")

/* An axis with no bound (all three 0) is one pass: valid. */
START_TEST(loop_zero_axis_ok)
{
	char *t = subst_after(LOOPS, "'name':'lp'", "'lb':0,'ub':4",
			      "'lb':0,'ub':0");
	char *t2 = subst_after(t, "'name':'lp'", "'stride':1}", "'stride':0}");
	expect_ok(t2, 0);
	free(t);
	free(t2);
}
END_TEST

/* A numbered semaphore is a slot of its core's bank: of the module's own
** core when its declaration says none, of the core it says else. */
START_TEST(sem_id_of_core)
{
	char *c1 = subst_after(LOOPS, NULL, "{'version':2,",
			       "{'version':2,'attributes':{'neuron_core_id':1},");
	char *bad = subst_after(c1, NULL, "'init':0,'id':7}",
				"'init':0,'id':7,'core':0}");
	char *ok = subst_after(c1, NULL, "'init':0,'id':7}",
			       "'init':0,'id':7,'core':1}");
	expect_ok(c1, 0);
	expect_ok(ok, 0);
	expect_bad(bad, 0, "function f/block b/instruction w: on_wait: "
		   "semaphore id 7 is not declared by the module (core 1)");
	free(c1);
	free(bad);
	free(ok);
}
END_TEST

/* ---- the partition stride of an SB / PSUM operand ------------------------- */

/* a: 8 partitions of 4 float32 (pe 4); the copy reads every other one. */
static const char *STEPS =
"{'version':2,'arch':'gen3','functions':[{'name':'f','allocations':["
"  " ALLOC("a", "Internal", "float32", "[8,4]", ML("a", "SB", "0", "[8,16]"))
"  ," ALLOC("b", "Internal", "float32", "[4,4]", ML("b", "SB", "64", "[4,16]"))
" ],'blocks':[{'name':'b0','instructions':["
"  {'opcode':'TensorCopy','name':'cp','engine':'DVE',"
"   'ins':[" AP("a", "[[8,4],[1,4]]") "],'outs':[" AP("b", "[[4,4],[1,4]]")
"   ]}]}]}]}";

#define SVARY(name, from, to, msg)                                          \
	START_TEST(name) { vary(STEPS, 0, NULL, from, to, msg); } END_TEST

SVARY(step0_not_a_multiple, "[[8,4],[1,4]]", "[[6,4],[1,4]]",
      "function f/block b0/instruction cp/operand ins[0]: ap[0].step 6 is "
      "not a multiple of 4, the elements of one partition of memory "
      "location 'a' (the first pair walks the partitions)")
SVARY(step0_negative, "[[8,4],[1,4]]", "[[-4,4],[1,4]]",
      "instruction cp/operand ins[0]: ap[0].step -4 is negative (the first "
      "pair walks the partitions)")
SVARY(step0_beyond_location, "[[8,4],[1,4]]", "[[12,4],[1,4]]",
      "instruction cp/operand ins[0]: partitions 0..9 of memory location "
      "'a' outside its 8 partitions")

/* Strides of k partitions that stay in bounds verify (the simulator is
** another matter): 2 (the base), 0 (one partition again), any step of a
** pair that walks one partition. */
START_TEST(step0_strides_verify)
{
	static const char *const ok[][2] = {
		{ "[[8,4],[1,4]]", "[[4,4],[1,4]]" },
		{ "[[0,4],[1,4]]", "[[4,4],[1,4]]" },
		{ "[[28,2],[1,4]]", "[[4,2],[1,4]]" },  /* partitions 0, 7 */
		{ "[[6,1],[1,4]]", "[[4,1],[1,4]]" },
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		char *t = subst_after(STEPS, NULL, "[[8,4],[1,4]]", ok[i][0]);
		char *t2 = subst_after(t, NULL, "[[4,4],[1,4]]", ok[i][1]);
		expect_ok(t2, 0);
		free(t);
		free(t2);
	}
	/* with a start partition: 1, 3, 5, 7 fit, 2 .. 8 does not */
	char *t = subst_after(STEPS, NULL, "'offset':0,'ap':[[8,4]",
			      "'offset':4,'ap':[[8,4]");
	expect_ok(t, 0);
	free(t);
	t = subst_after(STEPS, NULL, "'offset':0,'ap':[[8,4]",
			"'offset':8,'ap':[[8,4]");
	expect_bad(t, 0, "partitions 2..8 of memory location 'a' outside its "
		   "8 partitions");
	free(t);
}
END_TEST

/* ---- carried structures: the names they hold ------------------------------ */

/* A module carrying each structure the loader checks the shape of. */
static const char *CARRY =
"{'version':2,'arch':'gen3','call_to_physical_memlocs':{'c':['gx']},"
"'semaphores':[{'name':'s','init':0}],"
"'queues':[{'name':'q','instances':[{'name':'qa','semaphore':'s'}],"
"  'blocks':[{'name':'qb','instructions':[{'opcode':'DMABlock',"
"   'name':'qdb','engine':'DMA','dma_trigger':'qt'," NOARGS "}]}]}],"
"'functions':["
" {'name':'f','allocations':["
"  " ALLOC("d1", "Internal", "float32", "[4]",
	   "{'name':'d1','type':'DRAM','addr':0,'dims':[1,16],'bank':0,"
	   "'base':0,'alias':[['d2','d2',3]]}") ","
"  " ALLOC("d2", "Internal", "float32", "[4]", ML("d2", "DRAM", "64",
						   "[1,16]")) ","
"  " ALLOC("t", "Internal", "float32", "[1,4]", ML("t", "SB", "0", "[1,16]"))
" ],'blocks':[{'name':'b','arguments':[{'incoming_values':[['d1','b2']]}],"
"  'instructions':["
"  {'opcode':'DMATrigger','name':'qt','engine':'SP','queue':'q',"
"   'dma_blocks':['qdb']," NOARGS "},"
"  {'opcode':'DoWhile','name':'dw','engine':'SP','cond':'wc',"
"   'blocks':[{'name':'wb','instructions':[{'opcode':'NoOp','name':'wn',"
"   'engine':'SP','dependencies':['qt']," NOARGS "}]},"
"   {'name':'wc','instructions':[]}]," NOARGS "},"
"  {'opcode':'Call','name':'c','engine':'SP','target':'g'," NOARGS "},"
"  {'opcode':'Return','name':'ret','engine':'SP'," NOARGS "}"
" ]},{'name':'b2','instructions':[]}]},"
" {'name':'g','allocations':["
"  " ALLOC("gx", "Internal", "float32", "[4]", ML("gx", "DRAM", "128",
						   "[1,16]"))
" ],'blocks':[{'name':'gb','instructions':[]}]}"
"]}";

#define CVARY(name, anchor, from, to, msg)                                  \
	START_TEST(name) { vary(CARRY, 0, anchor, from, to, msg); } END_TEST

CVARY(alias_tuple_allocation, NULL, "['d2','d2',3]", "['dz','d2',3]",
      "function f/allocation d1/memory location d1: alias #0: 'dz' is not "
      "an allocation of function 'f'")
CVARY(alias_tuple_memloc, NULL, "['d2','d2',3]", "['d2','d1',3]",
      "memory location d1: alias #0: 'd1' is not a memory location of "
      "allocation 'd2'")
CVARY(alias_pair_memloc, NULL, "['d2','d2',3]", "['zz',1]",
      "memory location d1: alias #0: 'zz' is not a memory location of "
      "function 'f'")
CVARY(alias_not_dram, NULL, "['d2','d2',3]", "['d2','d2',1],['t','t',3]",
      "memory location d1: alias #1: d1 -> t: aliasing is only permitted "
      "between DRAM memory locations (DRAM, SB)")
CVARY(call_memlocs_call, NULL, "{'c':['gx']}", "{'ret':['gx']}",
      "t/def.json: module: call_to_physical_memlocs: 'ret' names no Call "
      "instruction")
CVARY(call_memlocs_memloc, NULL, "{'c':['gx']}", "[['c',['gx','d1']]]",
      "module: call_to_physical_memlocs: 'd1' (of call 'c') is not a "
      "memory location of function 'g'")
CVARY(incoming_block, NULL, "['d1','b2']", "['d1','b9']",
      "function f/block b: incoming_values: 'b9' is not a block of "
      "function 'f'")
CVARY(incoming_value, NULL, "['d1','b2']", "['zz','b2']",
      "function f/block b: incoming_values: 'zz' names no allocation or "
      "memory location")
CVARY(incoming_regref_not_register, NULL, "[['d1','b2']]",
      "[{'regref':'d1','block':'b2'}]",
      "function f/block b: incoming_values regref 'd1' names allocation "
      "'d1', which is not a register (no REG memory location)")
CVARY(argument_regref_not_register, NULL, "[{'incoming_values'",
      "[{'regref':'t','incoming_values'",
      "function f/block b: arguments regref 't' names allocation 't', "
      "which is not a register (no REG memory location)")
CVARY(body_dependency, "'name':'wn'", "['qt']", "['zz']",
      "function f/block b/instruction dw/block wb/instruction wn: "
      "dependency 'zz' names no instruction")
CVARY(body_duplicate_name, NULL, "'name':'wn'", "'name':'qt'",
      "function f/block b/instruction dw/block wb/instruction qt: "
      "duplicate instruction name 'qt' (also in function 'f')")
CVARY(body_later_dependency, "'name':'wn'", "['qt']", "['c']",
      "instruction wn: dependency 'c' is not an earlier instruction")
CVARY(queue_dma_block, "'name':'qt'", "['qdb']", "['qzz']",
      "function f/block b/instruction qt: dma_blocks 'qzz' names no "
      "DMABlock of function 'f' or of queue 'q'")
CVARY(queue_block_inst, NULL, "'dma_trigger':'qt'", "'dma_trigger':'qq'",
      "t/def.json: queue q/block qb/instruction qdb: dma_trigger 'qq' "
      "names no instruction of the module")

/* ---- dependencies and semaphores ---------------------------------------- */

VARY(dependency_later, "'name':'mm'", "'dependencies':['ld_x','ld_w']",
     "'dependencies':['ld_x','act']",
     "instruction mm: dependency 'act' is not an earlier instruction of "
     "function 'sg0' (dependencies point backwards, so cycles cannot form)")
VARY(dependency_self, "'name':'mm'", "'dependencies':['ld_x','ld_w']",
     "'dependencies':['mm']",
     "instruction mm: dependency 'mm' is the instruction itself")
VARY(dependency_other_function, "'name':'mm'",
     "'dependencies':['ld_x','ld_w']", "'dependencies':['h_ret']",
     "instruction mm: dependency 'h_ret' is an instruction of function "
     "'helper', not of function 'sg0'")
VARY(dependency_unknown, "'name':'act'", "'dependencies':['mm','ms_b']",
     "'dependencies':['mm','ghost']",
     "instruction act: dependency 'ghost' names no instruction")
VARY(dependency_in_loop, "'name':'loop_nop'", "'dependencies':['cb']",
     "'dependencies':['ret']",
     "function sg0/block b0/loop #15/block lb/instruction loop_nop: "
     "dependency 'ret' is not an earlier instruction")
VARY(wait_unknown_semaphore, "'name':'nop'", "'semaphore':'s_dma'",
     "'semaphore':'s_zz'",
     "instruction nop: wait semaphore 's_zz' is not a module semaphore")
VARY(signal_unknown_semaphore, "'name':'nop'", "'signal':['s_b']",
     "'signal':['s_b','s_q']",
     "instruction nop: signal semaphore 's_q' is not a module semaphore")

/* ---- allocations: views and aliases ------------------------------------- */

VARY(remote_view_not_dram, "'name':'view'", "'type':'DRAM'", "'type':'SB'",
     "function sg0/allocation view: remote_local_target view must be a "
     "DRAM allocation")

START_TEST(remote_core_negative)
{
	lm_module *m = load(BASE);
	lm_error e;
	lm_function *f = &m->functions[0];
	lm_alloc *a = NULL;
	for (int i = 0; i < f->n_allocs; i++)
		if (!strcmp(f->allocs[i].name, "view"))
			a = &f->allocs[i];
	ck_assert_ptr_nonnull(a);
	a->remote_core = -1;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "allocation view: remote_local_target core "
			   "-1 is negative");
	a->remote_core = 3;
	ck_assert_int_eq(verify(m, 0, &e), 0);
	lm_module_free(m);
}
END_TEST

VARY(alias_unknown, NULL, "'alias_of':'out_y'", "'alias_of':'gone'",
     "function sg0/allocation al: alias_of 'gone' names no allocation")
VARY(alias_shape, "'name':'al'", "'tensor_shape':[32,64]",
     "'tensor_shape':[64,32]",
     "allocation al: alias_of 'out_y': tensor_shape differs")
VARY(alias_dtype, "'name':'al'", "'dtype':'float32'", "'dtype':'float16'",
     "allocation al: alias_of 'out_y': dtype float32 differs from float16")
VARY(alias_target_not_dram, NULL, "'alias_of':'out_y'", "'alias_of':'y_sb'",
     "allocation al: alias_of 'y_sb' is not a DRAM allocation")

START_TEST(alias_cycle)
{
	char *t = subst_after(BASE, "'name':'view'", "'remote_local_target'",
			      "'alias_of':'al','remote_local_target'");
	char *t2 = subst_after(t, NULL, "'alias_of':'out_y'",
			       "'alias_of':'view'");
	expect_bad(t2, 0, "allocation view: alias_of cycle through 'al'");
	free(t);
	free(t2);
}
END_TEST

START_TEST(module_aliases)
{
	char *ok = subst_after(BASE, NULL, "'functions':[",
			       "'aliases':[{'producer':'out_y','consumer':'al',"
			       "'producer_core':0,'consumer_core':1}],"
			       "'functions':[");
	vary(ok, 0, "'aliases'", "'consumer':'al'", "'consumer':'none'",
	     "aliases #0: consumer 'none' names no allocation");
	free(ok);
}
END_TEST

/* ---- memory locations --------------------------------------------------- */

VARY(sbuf_capacity_gen3, "'name':'k_in','type'", "'addr':4096",
     "'addr':229300",
     "function kern/allocation k_in/memory location k_in: SB memory location "
     "ends at byte 229556, beyond the 229376-byte SBUF partition of gen3")
VARY(memloc_partitions, "'name':'k_in','type'", "'base':0", "'base':100",
     "memory location k_in: partitions 100..131 exceed the 128 partitions")
VARY(memloc_needs_dims, "'name':'k_in','type'", "'dims':[32,256]",
     "'dims':[8192]",
     "memory location k_in: SB memory location needs dims [partitions, "
     "bytes_per_partition]")

START_TEST(operand_on_unaddressable_memloc)
{
	char *t = subst_after(BASE, "'name':'k_out'", "'type':'DRAM'",
			      "'type':'Unallocated'");
	char *t3 = subst_after(t, "'name':'k55'", "'ins':[]",
			       "'ins':[" AP("k_out", "[[1,8]]") "]");
	expect_bad(t3, 0, "instruction k55/operand ins[0]: memory location "
		   "'k_out' has type Unallocated, which an access pattern "
		   "cannot address");
	expect_ok(BASE, 0);
	free(t);
	free(t3);
}
END_TEST

/* ---- core barriers ------------------------------------------------------ */

VARY(barrier_cores_empty, "'name':'cb'", "'cores':[0,1]", "'cores':[]",
     "instruction cb: CoreBarrier cores is empty")
VARY(barrier_core_range, "'name':'cb'", "'cores':[0,1]", "'cores':[0,64]",
     "instruction cb: CoreBarrier core 64 out of range [0, 64)")
VARY(barrier_core_twice, "'name':'cb'", "'cores':[0,1]", "'cores':[1,0,1]",
     "instruction cb: CoreBarrier core 1 listed twice")

START_TEST(barrier_id_negative)
{
	lm_module *m = load(BASE);
	lm_error e;
	inst(m, "cb")->barrier_id = -1;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "instruction cb: CoreBarrier id -1 is "
			   "negative");
	lm_module_free(m);
}
END_TEST

/* ---- linked modules ----------------------------------------------------- */

LVARY(linked_entry_name, NULL, "'name':'main'", "'name':'entry'",
      "function entry: linked module: the entry function must be 'main' "
      "(got 'entry')")
LVARY(linked_entry_kind, NULL, "'kind':'dispatcher',", "",
      "function main: linked module: 'main' must have kind dispatcher")
LVARY(linked_no_dispatcher_block, NULL, "'name':'dispatcher'",
      "'name':'calls'",
      "function main: linked module: 'main' holds instructions outside "
      "block 'dispatcher'")
LVARY(linked_call_name, NULL, "'name':'call_def_1_instance_0'",
      "'name':'call_def_7_instance_0'",
      "function main/block dispatcher/instruction call_def_7_instance_0: "
      "linked module: the Call of 'nc1' must be named "
      "'call_def_1_instance_0'")
LVARY(linked_dispatcher_not_call, NULL,
      "{'opcode':'Call','name':'call_def_1_instance_0'",
      "{'opcode':'NoOp','name':'nop'},"
      "{'opcode':'Call','name':'call_def_1_instance_0'",
      "instruction nop: linked module: dispatcher instruction is NoOp, not "
      "Call")
LVARY(linked_core_id, NULL, "'neuron_core_id':1", "'neuron_core_id':2",
      "function nc1: linked module: function 'nc1' must have "
      "neuron_core_id 1")
LVARY(linked_missing_sqi, NULL, "'name':'I-SQI-q-call_def_1_instance_0'",
      "'name':'sqi1'",
      "function nc1: linked module: function 'nc1' uses queue 'q' but does "
      "not start with SwitchQueueInstance 'I-SQI-q-call_def_1_instance_0'")
LVARY(linked_missing_cb_return, NULL,
      "'name':'cb_return_call_def_0_instance_0'", "'name':'cbr0'",
      "function nc0: linked module: function 'nc0' must end with CoreBarrier "
      "'cb_return_call_def_0_instance_0' followed by Return")
LVARY(linked_return_last, NULL, "{'opcode':'Return','name':'nc1.ret'",
      "{'opcode':'NoOp','name':'nc1.ret'",
      "function nc1: linked module: function 'nc1' must end with CoreBarrier "
      "'cb_return_call_def_1_instance_0' followed by Return")
LVARY(linked_barrier_id_collision, "'name':'cb_return_call_def_1_instance_0'",
      "'id':1", "'id':0",
      "module: barrier id 0 of 'cb_return_call_def_1_instance_0' (group "
      "'ret') is also used by 'nc0.bar' (group 'bar'); a linked module needs "
      "unique barrier ids")

START_TEST(linked_core_order)
{
	/* swap the two Calls: nc1 first, then nc0 */
	char *t1 = subst_after(LINKED, NULL, "'name':'call_def_0_instance_0'",
			       "'name':'call_def_1_instance_0'");
	char *t2 = subst_after(t1, NULL, "'target':'nc0'", "'target':'nc1'");
	char *t3 = subst_after(t2, "'target':'nc1'",
			       "'name':'call_def_1_instance_0'",
			       "'name':'call_def_0_instance_0'");
	char *t4 = subst_after(t3, "'name':'call_def_0_instance_0'",
			       "'target':'nc1'", "'target':'nc0'");
	expect_bad(t4, 1, "instruction call_def_0_instance_0: linked module: "
		   "dispatcher calls core 0 after core 1 (cores must "
		   "increase)");
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}
END_TEST

START_TEST(linked_uncalled_core)
{
	expect_ok(LINKED, 1);
	expect_bad(LINKED_FUNCS ",{'name':'nc2','neuron_core_id':2,"
		   "'allocations':[],'blocks':[]}]}", 1,
		   "function nc2: linked module: core function 'nc2' is not "
		   "called by the dispatcher");
	/* a callee of a core function (nc0.<name>) is not a core function */
	expect_ok(LINKED_FUNCS ",{'name':'nc0.sub','allocations':[],"
		  "'blocks':[]}]}", 1);
}
END_TEST


/* Linked modules: an alias_of view must be listed in module `aliases`,
** and every alias entry's consumer must be a view of its producer. */
START_TEST(linked_alias_listing)
{
	const char *view = ALLOC("sb1", "Internal", "float32", "[128,4]",
				 ML("sb1", "SB", "0", "[128,16]"));
	const char *with_view = ALLOC("sb1", "Internal", "float32", "[128,4]",
		ML("sb1", "SB", "0", "[128,16]")) ","
		"{'name':'in_view','kind':'Internal','dtype':'float32',"
		"'tensor_shape':[128,4],'alias_of':'in','memorylocations':["
		ML("in_view", "DRAM", "0", "[128,16]") "]}";
	char *t = subst_after(LINKED, "'name':'nc1'", view, with_view);
	expect_bad(t, 1, "function nc1/allocation in_view: linked module: "
		   "alias_of view of 'in' has no entry in module aliases");
	expect_ok(t, 0);
	char *t2 = subst_after(t, NULL, "'semaphores':",
			       "'aliases':[{'producer':'in','consumer':'in_view',"
			       "'producer_core':0,'consumer_core':1}],'semaphores':");
	expect_ok(t2, 1);
	char *t3 = subst_after(t2, NULL, "'consumer':'in_view'",
			       "'consumer':'sb1'");
	expect_bad(t3, 1, "aliases #0: consumer 'sb1' is not an alias_of view "
		   "of producer 'in'");
	free(t);
	free(t2);
	free(t3);
}
END_TEST

/* ---- robustness --------------------------------------------------------- */

/*
** Strip names and arrays the loader would never leave empty: the verifier
** must report an error (or pass) and never crash.
*/
START_TEST(never_crashes)
{
	for (int k = 0; k < 12; k++) {
		lm_module *m = load(k < 10 ? BASE : LINKED);
		lm_function *f = &m->functions[0];
		lm_inst *in0 = &f->blocks[0].insts[0];
		lm_error e;
		char *saved = NULL, **slot = NULL;
		switch (k) {
		case 0: slot = &m->arch; break;
		case 1: slot = &f->name; break;
		case 2: slot = &f->allocs[0].name; break;
		case 3: slot = &f->allocs[0].memlocs[0].name; break;
		case 4: slot = &in0->name; break;
		case 5: slot = &in0->ins[0].memsetref; break;
		case 6: slot = &in0->ins[0].memref; break;
		case 7: slot = &m->semaphores[0].name; break;
		case 8: slot = &m->queues[0].instances[0].semaphore; break;
		case 9: in0->n_ins = 0; break;
		case 10: slot = &f->blocks[0].insts[0].target; break;
		case 11: slot = &m->functions[1].blocks[0].name; break;
		}
		if (slot) {
			saved = *slot;
			*slot = NULL;
		}
		int rc = verify(m, k >= 10, &e);
		ck_assert_msg(k == 11 ? rc == 0 : rc == LM_EINPUT,
			      "case %d: rc %d (%s)", k, rc, e.msg);
		if (slot)
			*slot = saved;
		if (k == 9)
			in0->n_ins = 1;
		lm_module_free(m);
	}
}
END_TEST

/* A module with no path and an empty module-level where. */
START_TEST(no_path)
{
	lm_module *m = load(BASE);
	lm_error e;
	free(m->path);
	m->path = NULL;
	m->version = 1;
	ck_assert_int_eq(verify(m, 0, &e), LM_EINPUT);
	ck_assert_str_eq(e.msg, "module: unsupported version 1 (expected 2)");
	lm_module_free(m);
}
END_TEST

/* ---- suite -------------------------------------------------------------- */

static Suite *verify_suite(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("verify");
	tcase_set_timeout(tc, 120);
	TTest const *tests[] = {
		valid_multi_opcode, valid_transpose, valid_linked, resolve_arg,
		linked_alias_listing,
		bad_version, bad_arch, no_functions,
		dup_function, dup_allocation, dup_memloc, dup_instruction,
		dup_instruction_same_function, dup_semaphore, dup_queue,
		dup_queue_instance, queue_instance_semaphore,
		memsetref_unknown, memref_wrong_alloc, operand_dtype_invalid,
		sb_partitions_over_128, sb_partitions_outside_memloc,
		sb_bytes_outside_memloc, sb_negative_step, psum_bank_mismatch,
		psum_capacity, dram_outside_tensor, dram_outside_dims,
		dram_negative_element, num_not_positive, ap_empty,
		ap_overflow_json, ap_too_many_elements, ap_overflow_2_62,
		negative_offset_and_start,
		count_mismatch, count_mismatch_dma, tensortensor_second_input,
		memset_has_input, noop_has_output, engine_operand_in_dram,
		imm_where_tensor_expected, opaque_operand_skips_shapes,
		register_reference_dangling, register_reference_in_loop_axis,
		tensor_reference_dangling, tensor_reference_renamed_like_verified,
		matmul_contraction, matmul_output_shape, matmul_output_dtype,
		matmul_output_not_psum, matmul_moving_not_sb,
		matmul_m_over_128, matmul_n_over_512, matmul_bank_crossing_real,
		transpose_rules,
		activation_needs_bias, activation_bias_dtype,
		activation_bias_shape, iota_pattern_size, affine_pattern_num,
		pattern_missing,
		dma_needs_queue, dma_unknown_queue, sqi_unknown_instance,
		sqi_instance_of_other_queue, call_unknown_target,
		nkikernel_unknown_func, nkikernel_dangling_arg,
		nkikernel_unknown_formal, carrier_fields,
		nkikernel_kernel_source, opcode_enums_missing,
		ref_queue, ref_qinst_unknown, ref_qinst_of_other_queue,
		ref_func, ref_block_target, ref_block_on_false,
		branch_other_region,
		loop_negative_trip, loop_stride_zero, loop_stride_negative,
		loop_zero_axis_ok, dynloop_ub_not_register, dynloop_ub_constant,
		dynloop_lb_not_constant, dynloop_stride_zero, iv_unknown,
		iv_outside_loops, iv_own_axis_in_bounds, branch_unknown_block,
		branch_out_of_loop, break_outside_loop, sem_id_undeclared,
		sem_id_out_of_range, sem_inc_value, sem_dec_value,
		sem_event_by_name, sem_mode_invalid, sem_ge_reg_no_register,
		sem_ge_reg_not_register, sem_regref_without_ge_reg,
		sema_group_undeclared, dmablock_queue_missing,
		dmatrigger_other_queue, sem_id_of_core, descriptor_dynamic_ap,
		ref_block_hint, ref_block_cond, ref_inst,
		ref_dmablock_unknown, ref_dmablock_not_one, ref_alloc_call,
		ref_alloc_kernel, ref_call_formal, ref_register_not_one,
		ref_register_unknown, ref_required_carried_missing,
		step0_not_a_multiple, step0_negative, step0_beyond_location,
		step0_strides_verify,
		alias_tuple_allocation, alias_tuple_memloc, alias_pair_memloc,
		alias_not_dram, call_memlocs_call, call_memlocs_memloc,
		incoming_block, incoming_value, incoming_regref_not_register,
		argument_regref_not_register, body_dependency,
		body_duplicate_name, body_later_dependency, queue_dma_block,
		queue_block_inst,
		dependency_later, dependency_self, dependency_other_function,
		dependency_unknown, dependency_in_loop, wait_unknown_semaphore,
		signal_unknown_semaphore,
		remote_view_not_dram, remote_core_negative, alias_unknown,
		alias_shape, alias_dtype, alias_target_not_dram, alias_cycle,
		module_aliases,
		sbuf_capacity_gen3, memloc_partitions, memloc_needs_dims,
		operand_on_unaddressable_memloc,
		barrier_cores_empty, barrier_core_range, barrier_core_twice,
		barrier_id_negative,
		linked_entry_name, linked_entry_kind, linked_no_dispatcher_block,
		linked_call_name, linked_dispatcher_not_call, linked_core_id,
		linked_missing_sqi, linked_missing_cb_return,
		linked_return_last, linked_barrier_id_collision,
		linked_core_order, linked_uncalled_core,
		never_crashes, no_path,
	};
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(verify_suite());
}

/*
** test_build.c -- the IR builder (model/build.h): every filler and setter
** on the objects it fills; the checked builder's module, which verifies,
** round-trips load -> save -> load and runs in the simulator to values
** computed here; every failure it reports (names given twice, names the
** module does not have, arguments out of range, calls after a failure);
** the wire-form entries; and the setters' opcode asserts.
*/
#include "common.h"
#include "testutil.h"
#include "build.h"
#include "affine.h"
#include <cjson/cJSON.h>
#include "module.h"
#include "verify.h"
#include "sim.h"
#include "dtype.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the fillers ------------------------------------------------------------ */

START_TEST(test_fill_module_objects)
{
	lm_module *m = lm_xcalloc(1, sizeof *m);
	lm_b_set_path(m, "out/set/nc3/sg0/def.json");
	ck_assert_str_eq(m->path, "out/set/nc3/sg0/def.json");
	ck_assert_str_eq(m->dir, "out/set/nc3/sg0");
	ck_assert_str_eq(m->display, "set");
	lm_b_set_path(m, "x/def.json");
	ck_assert_str_eq(m->dir, "x");
	ck_assert_str_eq(m->display, "x");
	lm_b_set_path(m, NULL);
	ck_assert_str_eq(m->path, "");
	ck_assert_str_eq(m->dir, ".");
	ck_assert_str_eq(m->display, "module");

	lm_semaphore *s = lm_b_append_semaphore(m, "s", 3);
	ck_assert_str_eq(s->name, "s");
	ck_assert_int_eq(s->init, 3);
	lm_queue *q = lm_b_append_queue(m, "q");
	ck_assert_int_eq(q->n_instances, 0);
	lm_qinstance *qi = lm_b_append_qinstance(q, "qa", "s");
	ck_assert_str_eq(qi->name, "qa");
	ck_assert_str_eq(qi->semaphore, "s");
	ck_assert_int_eq(m->n_queues, 1);
	ck_assert_int_eq(m->queues[0].n_instances, 1);

	lm_function *f = lm_b_append_function(m, "f");
	ck_assert(!f->has_kind);
	lm_b_set_kind(f, LM_FK_NKI);
	ck_assert(f->has_kind);
	ck_assert_int_eq(f->kind, LM_FK_NKI);
	lm_block *b = lm_b_append_block(f, "b");
	ck_assert_str_eq(b->name, "b");
	ck_assert_int_eq(m->functions[0].n_blocks, 1);

	int64_t shape[3] = { 2, 3, 4 }, dims[2] = { 2, 48 };
	lm_alloc *a = lm_b_append_alloc(f, "t", LM_TK_INTERNAL, LM_DT_FLOAT32,
					shape, 3);
	ck_assert_int_eq(a->n_shape, 3);
	ck_assert_int_eq(a->tensor_shape[2], 4);
	ck_assert_int_eq(a->n_memlocs, 0);
	ck_assert_ptr_null(a->file);
	lm_memloc *l = lm_b_append_memloc(a, LM_MT_PSUM, 3 * 2048, dims, 2, 5);
	ck_assert_str_eq(l->name, "t");
	ck_assert_int_eq(l->type, LM_MT_PSUM);
	ck_assert_int_eq(l->bank, 3);
	ck_assert_int_eq(l->base, 5);
	ck_assert_int_eq(l->dims[1], 48);
	ck_assert(l->allocated);
	lm_b_set_file(a, "t.npy");
	ck_assert_str_eq(a->file, "t.npy");
	lm_b_set_addr_space(a, "Shared");
	ck_assert_str_eq(a->addr_space, "Shared");
	lm_b_set_view(a, "src", 2);
	ck_assert(a->has_remote);
	ck_assert_str_eq(a->remote_name, "src");
	ck_assert_int_eq(a->remote_core, 2);
	a = lm_b_append_alloc(f, "d", LM_TK_EXTERNAL_INPUT, LM_DT_INT8, NULL,
			      0);
	l = lm_b_append_memloc(a, LM_MT_DRAM, 70000, NULL, 0, 0);
	ck_assert_int_eq(l->bank, 0);
	ck_assert_ptr_null(a->tensor_shape);
	lm_module_free(m);
}
END_TEST

START_TEST(test_fill_instructions)
{
	lm_block blk;
	lm_inst in;
	lm_appair ap[2] = { { 8, 4 }, { 1, 8 } };
	memset(&blk, 0, sizeof blk);

	lm_b_init_inst(&in, LM_OP_TENSORSCALAR, LM_ENG_DVE, "ts");
	ck_assert_str_eq(in.name, "ts");
	ck_assert_int_eq(in.engine, LM_ENG_DVE);
	ck_assert_int_eq(in.alu1, LM_ALU_BYPASS);
	ck_assert(in.renumber);
	ck_assert(in.scale == 1.0);
	lm_b_set_tensor_scalar(&in, LM_ALU_MULT, 2.5, 1, LM_ALU_ADD, -1.0, 0);
	ck_assert_int_eq(in.alu0, LM_ALU_MULT);
	ck_assert(in.has_const0 && in.const0 == 2.5 && in.reverse0);
	ck_assert_int_eq(in.alu1, LM_ALU_ADD);
	ck_assert(in.has_const1 && in.const1 == -1.0 && !in.reverse1);
	lm_arg *a = lm_b_append_ap(&in, LM_B_IN, "x", NULL, LM_DT_BFLOAT16, 2,
				   3, ap, 2);
	ck_assert_int_eq(a->kind, LM_ARG_PHYSICAL_AP);
	ck_assert_str_eq(a->memsetref, "x");
	ck_assert_str_eq(a->memref, "x");
	ck_assert_int_eq(a->dtype, LM_DT_BFLOAT16);
	ck_assert_int_eq(a->start_partition, 2);
	ck_assert(a->has_start_partition);
	ck_assert_int_eq(a->offset, 3);
	ck_assert_int_eq(a->n_ap, 2);
	ck_assert_int_eq(a->ap[0].step, 8);
	ck_assert_int_eq(a->ap[1].num, 8);
	a = lm_b_append_ap(&in, LM_B_OUT, "y", "yloc", LM_DT_FLOAT32, 0, 0, ap,
			   1);
	ck_assert_str_eq(a->memref, "yloc");
	ck_assert(!a->has_start_partition);
	a = lm_b_append_imm(&in, LM_DT_FLOAT32, 0.5);
	ck_assert_int_eq(a->kind, LM_ARG_IMM);
	ck_assert(a->imm == 0.5);
	ck_assert_int_eq(in.n_ins, 2);
	ck_assert_int_eq(in.n_outs, 1);
	lm_inst_clear(&in);

	lm_inst *p = lm_b_append_inst(&blk, LM_OP_MATMULT, LM_ENG_PE, "mm");
	lm_b_set_matmult(p, 1, 0, 1);
	ck_assert(p->start_tensor_calc && !p->stop_tensor_calc);
	ck_assert(p->has_stop_tensor_calc && p->is_transpose);
	p = lm_b_append_inst(&blk, LM_OP_ACTIVATION, LM_ENG_ACT, "act");
	lm_b_set_activation(p, LM_ACT_RELU, 0.25);
	ck_assert_int_eq(p->act_func, LM_ACT_RELU);
	ck_assert(p->has_scale && p->scale == 0.25);
	p = lm_b_append_inst(&blk, LM_OP_TENSORTENSOR, LM_ENG_POOL, "tt");
	lm_b_set_alu(p, LM_ALU_MAX);
	ck_assert_int_eq(p->alu, LM_ALU_MAX);
	p = lm_b_append_inst(&blk, LM_OP_MEMSET, LM_ENG_POOL, "ms");
	lm_b_set_memset(p, "Const", -3);
	lm_b_set_memset_value(p, 0.75);
	ck_assert_str_eq(p->memset_mode, "Const");
	ck_assert(p->has_constant && p->constant == -3);
	ck_assert(p->has_value && p->value == 0.75);
	p = lm_b_append_inst(&blk, LM_OP_AFFINESELECT, LM_ENG_POOL, "sel");
	lm_b_set_pattern(p, 4, -1, ap, 2);
	lm_b_set_pattern(p, 5, -2, ap + 1, 1); /* replaces */
	lm_b_set_alu(p, LM_ALU_IS_GE);
	lm_b_set_fill(p, -7.5);
	ck_assert(p->has_base && p->base == 5);
	ck_assert(p->has_channel_multiplier && p->channel_multiplier == -2);
	ck_assert_int_eq(p->n_pattern, 1);
	ck_assert_int_eq(p->pattern[0].step, 1);
	ck_assert(p->has_fill_value && p->fill_value == -7.5);
	p = lm_b_append_inst(&blk, LM_OP_IOTA, LM_ENG_POOL, "io");
	lm_b_set_pattern(p, 0, 0, NULL, 0);
	ck_assert_int_eq(p->n_pattern, 0);
	p = lm_b_append_inst(&blk, LM_OP_COREBARRIER, LM_ENG_POOL, "cb");
	int64_t cores[2] = { 0, 3 };
	lm_b_set_barrier(p, 7, cores, 2, "g");
	ck_assert_int_eq(p->barrier_id, 7);
	ck_assert_int_eq(p->n_cores, 2);
	ck_assert_int_eq(p->cores[1], 3);
	ck_assert_str_eq(p->group, "g");
	ck_assert(p->renumber && !p->has_renumber);
	lm_b_set_barrier(p, 8, cores, 1, NULL);
	ck_assert_ptr_null(p->group);
	ck_assert_int_eq(p->n_cores, 1);
	lm_b_set_renumber(p, 0);
	ck_assert(p->has_renumber && !p->renumber);
	p = lm_b_append_inst(&blk, LM_OP_LOOP, LM_ENG_UNASSIGNED, NULL);
	ck_assert_ptr_null(p->name);
	ck_assert_int_eq(blk.n_insts, 8);
	ck_assert_str_eq(blk.insts[0].name, "mm");
	lm_block_clear(&blk);
}
END_TEST

/* A setter on an instruction of another opcode is the caller's bug: it
** asserts (the sanitizer build keeps asserts). */
START_TEST(test_setter_asserts_opcode)
{
	lm_inst in;
	lm_b_init_inst(&in, LM_OP_TENSORCOPY, LM_ENG_DVE, "cp");
	lm_b_set_matmult(&in, 1, 1, 0);
	lm_inst_clear(&in);
}
END_TEST

/* ---- the checked builder: a module that runs -------------------------------- */

enum { P = 4, F = 8 };

static void ap2(lm_appair *ap, int parts, int elems)
{
	ap[0].step = elems;
	ap[0].num = parts;
	ap[1].step = 1;
	ap[1].num = elems;
}

/* A [P, F] operand of allocation name. */
static lm_arg *op(lm_builder *b, lm_inst *in, int side, const char *name,
		  lm_dtype dt, int parts, int elems)
{
	lm_appair ap[2];
	ap2(ap, parts, elems);
	return lm_b_ap(b, in, side, name, dt, 0, 0, ap, 2);
}

static lm_alloc *dram(lm_builder *b, const char *name, lm_tensorkind kind,
		      lm_dtype dt, int64_t addr)
{
	int64_t shape[2] = { P, F }, dims[2] = { P, F * lm_dtype_size(dt) };
	lm_alloc *a = lm_b_alloc(b, name, kind, dt, shape, 2);
	lm_b_memloc(b, a, LM_MT_DRAM, addr, dims, 2, 0);
	return a;
}

static void sb(lm_builder *b, const char *name, lm_dtype dt, int parts,
	       int elems, int64_t addr)
{
	int64_t shape[2] = { parts, elems };
	int64_t dims[2] = { parts, elems * lm_dtype_size(dt) };
	lm_b_memloc(b, lm_b_alloc(b, name, LM_TK_INTERNAL, dt, shape, 2),
		    LM_MT_SB, addr, dims, 2, 0);
}

/*
** A program of every opcode the builder makes: y = the upper band
** (j >= p) of (2x + 1) + x, else -1, through an identity matmul; z an iota
** 5 + 10p + j, stored on the other instance of q1; a barrier, a NoOp that
** waits for z's store and signals, a Call of a helper function.
*/
static lm_module *program(const char *path)
{
	lm_error err;
	lm_builder *b = lm_b_new("gen3", 2, &err);
	lm_module *m;
	lm_inst *in;
	lm_appair pat[1] = { { 1, F } }, idp[1] = { { 1, P } };
	int64_t psh[2] = { P, F }, pdims[2] = { P, F * 4 };
	int64_t core0[1] = { 0 };

	lm_b_path(b, path);
	lm_b_name(b, "built");
	lm_b_core_id(b, 0);
	lm_b_semaphore(b, "s0", 0);
	lm_b_semaphore(b, "s1", 0);
	lm_b_semaphore(b, "s2", 0);
	lm_b_semaphore(b, "s3", 0);
	lm_b_queue(b, "q0");
	lm_b_qinstance(b, "q0", "q0a", "s0");
	lm_b_queue(b, "q1");
	lm_b_qinstance(b, "q1", "q1a", "s1");
	lm_b_qinstance(b, "q1", "q1b", "s2");
	lm_b_function(b, "sg0");
	dram(b, "x", LM_TK_EXTERNAL_INPUT, LM_DT_FLOAT32, 0);
	dram(b, "y", LM_TK_EXTERNAL_OUTPUT, LM_DT_FLOAT32, 4096);
	dram(b, "z", LM_TK_EXTERNAL_OUTPUT, LM_DT_INT32, 8192);
	sb(b, "xs", LM_DT_FLOAT32, P, F, 0);
	sb(b, "as", LM_DT_FLOAT32, P, F, 64);
	sb(b, "ys", LM_DT_FLOAT32, P, F, 128);
	sb(b, "zb", LM_DT_FLOAT32, P, 1, 192);
	sb(b, "id", LM_DT_FLOAT32, P, P, 256);
	sb(b, "io", LM_DT_INT32, P, F, 320);
	sb(b, "y2", LM_DT_FLOAT32, P, F, 384);
	lm_b_memloc(b, lm_b_alloc(b, "ps", LM_TK_INTERNAL, LM_DT_FLOAT32, psh,
				  2), LM_MT_PSUM, 2048, pdims, 2, 0);
	lm_b_block(b, "b0");

	in = lm_b_inst(b, LM_OP_DMACOPY, LM_ENG_SP, "ld");
	op(b, in, LM_B_IN, "x", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_OUT, "xs", LM_DT_FLOAT32, P, F);
	lm_b_dma_queue(b, in, "q0");

	in = lm_b_inst(b, LM_OP_MEMSET, LM_ENG_POOL, "zero_b");
	op(b, in, LM_B_OUT, "zb", LM_DT_FLOAT32, P, 1);
	lm_b_set_memset(in, "Const", 0);
	lm_b_set_memset_value(in, 0.0);

	in = lm_b_inst(b, LM_OP_ACTIVATION, LM_ENG_ACT, "act");
	op(b, in, LM_B_IN, "xs", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_IN, "zb", LM_DT_FLOAT32, P, 1);
	op(b, in, LM_B_OUT, "as", LM_DT_FLOAT32, P, F);
	lm_b_set_activation(in, LM_ACT_IDENTITY, 2.0);
	lm_b_wait(b, in, "s0", 1);
	lm_inst_add_dep(in, 0, "zero_b", LM_EDGE_FLOW);

	in = lm_b_inst(b, LM_OP_TENSORSCALAR, LM_ENG_DVE, "ts");
	op(b, in, LM_B_IN, "as", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_OUT, "ys", LM_DT_FLOAT32, P, F);
	lm_b_set_tensor_scalar(in, LM_ALU_MULT, 1.0, 0, LM_ALU_ADD, 1.0, 0);
	lm_inst_add_dep(in, 0, "act", LM_EDGE_FLOW);

	in = lm_b_inst(b, LM_OP_TENSORTENSOR, LM_ENG_DVE, "tt");
	op(b, in, LM_B_IN, "ys", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_IN, "xs", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_OUT, "ys", LM_DT_FLOAT32, P, F);
	lm_b_set_alu(in, LM_ALU_ADD);
	lm_inst_add_dep(in, 0, "ts", LM_EDGE_FLOW);

	in = lm_b_inst(b, LM_OP_AFFINESELECT, LM_ENG_POOL, "band");
	op(b, in, LM_B_IN, "ys", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_OUT, "ys", LM_DT_FLOAT32, P, F);
	lm_b_set_pattern(in, 0, -1, pat, 1);
	lm_b_set_alu(in, LM_ALU_IS_GE);
	lm_b_set_fill(in, -1.0);
	lm_inst_add_dep(in, 0, "tt", LM_EDGE_FLOW);

	/* the identity: zeros, then 1 where e - p == 0 */
	in = lm_b_inst(b, LM_OP_MEMSET, LM_ENG_POOL, "id0");
	op(b, in, LM_B_OUT, "id", LM_DT_FLOAT32, P, P);
	lm_b_set_memset(in, "Const", 0);
	in = lm_b_inst(b, LM_OP_AFFINESELECT, LM_ENG_POOL, "id1");
	op(b, in, LM_B_IN, "id", LM_DT_FLOAT32, P, P);
	op(b, in, LM_B_OUT, "id", LM_DT_FLOAT32, P, P);
	lm_b_set_pattern(in, 0, -1, idp, 1);
	lm_b_set_alu(in, LM_ALU_NOT_EQUAL);
	lm_b_set_fill(in, 1.0);
	lm_inst_add_dep(in, 0, "id0", LM_EDGE_FLOW);

	in = lm_b_inst(b, LM_OP_MATMULT, LM_ENG_PE, "mm");
	op(b, in, LM_B_IN, "id", LM_DT_FLOAT32, P, P);
	op(b, in, LM_B_IN, "ys", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_OUT, "ps", LM_DT_FLOAT32, P, F);
	lm_b_set_matmult(in, 1, 1, 0);
	lm_inst_add_dep(in, 0, "id1", LM_EDGE_FLOW);
	lm_inst_add_dep(in, 0, "band", LM_EDGE_FLOW);

	in = lm_b_inst(b, LM_OP_TENSORCOPY, LM_ENG_ACT, "ev");
	op(b, in, LM_B_IN, "ps", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_OUT, "y2", LM_DT_FLOAT32, P, F);
	lm_inst_add_dep(in, 0, "mm", LM_EDGE_FLOW);

	in = lm_b_inst(b, LM_OP_IOTA, LM_ENG_POOL, "iota");
	op(b, in, LM_B_OUT, "io", LM_DT_INT32, P, F);
	lm_b_set_pattern(in, 5, 10, pat, 1);

	in = lm_b_inst(b, LM_OP_SWITCHQUEUE, LM_ENG_SP, "sqi");
	lm_b_switch_queue(b, in, "q1", "q1b");

	in = lm_b_inst(b, LM_OP_DMACOPY, LM_ENG_SP, "st_z");
	op(b, in, LM_B_IN, "io", LM_DT_INT32, P, F);
	op(b, in, LM_B_OUT, "z", LM_DT_INT32, P, F);
	lm_b_dma_queue(b, in, "q1");
	lm_inst_add_dep(in, 0, "iota", LM_EDGE_FLOW);

	in = lm_b_inst(b, LM_OP_COREBARRIER, LM_ENG_POOL, "cb");
	lm_b_set_barrier(in, 1, core0, 1, "solo");
	lm_b_set_renumber(in, 0);

	in = lm_b_inst(b, LM_OP_NOOP, LM_ENG_POOL, "nop");
	lm_b_wait(b, in, "s2", 1);
	lm_b_signal(b, in, "s3");
	lm_inst_add_dep(in, 0, "cb", LM_EDGE_ORDERED);

	in = lm_b_inst(b, LM_OP_CALL, LM_ENG_SP, "call");
	lm_inst_set_str(in, &in->target, "helper");

	in = lm_b_inst(b, LM_OP_DMACOPY, LM_ENG_SP, "st_y");
	op(b, in, LM_B_IN, "y2", LM_DT_FLOAT32, P, F);
	op(b, in, LM_B_OUT, "y", LM_DT_FLOAT32, P, F);
	lm_b_dma_queue(b, in, "q0");
	lm_inst_add_dep(in, 0, "ev", LM_EDGE_FLOW);
	lm_b_wait(b, in, "s3", 1);

	in = lm_b_inst(b, LM_OP_RETURN, LM_ENG_SP, "ret");
	lm_inst_add_dep(in, 0, "st_y", LM_EDGE_FLOW);
	lm_inst_add_dep(in, 0, "call", LM_EDGE_FLOW);

	lm_b_function(b, "helper");
	lm_b_block(b, "hb");
	lm_b_inst(b, LM_OP_RETURN, LM_ENG_SP, "h_ret");

	ck_assert_int_eq(lm_b_status(b), 0);
	ck_assert_int_eq(lm_b_module(b)->n_functions, 2);
	ck_assert_msg(lm_b_finish(b, &m) == 0, "%s", err.msg);
	return m;
}

START_TEST(test_module_verifies_and_round_trips)
{
	lm_module *m = program("b/def.json"), *m2 = NULL, *m3 = NULL;
	lm_error err;
	char *t1, *t2, where[256] = "";
	size_t n1, n2;
	char *dir = tu_tmpdir("build"), *p = lm_path_join(dir, "def.json");
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(m->path, "b/def.json");
	ck_assert_str_eq(m->name, "built");
	ck_assert_int_eq(lm_module_core_id(m), 0);
	/* save -> parse -> save: the same text, the same module */
	ck_assert_int_eq(lm_module_to_json(m, 1, &t1, &n1, &err), 0);
	ck_assert_msg(lm_module_parse(&m2, t1, n1, "b/def.json", &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(lm_module_compare(m, m2, where, sizeof where) == 0,
		      "differs at %s", where);
	ck_assert_int_eq(lm_module_to_json(m2, 1, &t2, &n2, &err), 0);
	ck_assert_str_eq(t1, t2);
	/* and through a file */
	ck_assert_int_eq(lm_module_save(m, p, 0, &err), 0);
	ck_assert_msg(lm_module_load(&m3, p, &err) == 0, "%s", err.msg);
	ck_assert_msg(lm_module_compare(m, m3, where, sizeof where) == 0,
		      "differs at %s", where);
	ck_assert_msg(lm_verify(m3, NULL, &err) == 0, "%s", err.msg);
	/* what the builder wrote is what the wire form says */
	ck_assert_contains(t1, "\"accumulation_flag\":\t3");
	ck_assert_contains(t1, "\"renumber\":\tfalse");
	ck_assert_contains(t1, "\"mode\":\t\"sem-ge-imm\"");
	ck_assert_contains(t1, "[\"cb\", \"Ordered\"]");
	free(t1);
	free(t2);
	free(p);
	free(dir);
	lm_module_free(m);
	lm_module_free(m2);
	lm_module_free(m3);
}
END_TEST

START_TEST(test_module_runs)
{
	lm_module *m = program("run.json");
	ls_tensors in = {0, NULL};
	ls_result r;
	lm_error err;
	float x[P * F];
	int64_t shape[2] = { P, F };
	for (int i = 0; i < P * F; i++)
		x[i] = (float)(i % 7) - 3.0f;
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	ck_assert_msg(ls_run(m, &in, NULL, &r, &err) == 0, "%s", err.msg);
	const ls_tensor *y = ls_tensors_find(&r.outputs, "y");
	const ls_tensor *z = ls_tensors_find(&r.outputs, "z");
	ck_assert_ptr_nonnull(y);
	ck_assert_ptr_nonnull(z);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < F; j++) {
			float v = x[p * F + j];
			float want = j >= p ? (v * 2.0f) * 1.0f + 1.0f + v : -1.0f;
			float got = ((const float *)y->data)[p * F + j];
			ck_assert_msg(got == want, "y[%d][%d] = %g, want %g", p,
				      j, (double)got, (double)want);
			ck_assert_int_eq(((const int32_t *)z->data)[p * F + j],
					 5 + 10 * p + j);
		}
	ls_result_free(&r);
	ls_tensors_free(&in);
	lm_module_free(m);
}
END_TEST

/* ---- the checked builder: failures ------------------------------------------ */

/* A builder "t.json" with semaphore s, queue q (instance qi), function f
** with block b, allocation t (SB [4, 8]) and instruction i. */
static lm_builder *base(lm_error *err)
{
	lm_builder *b = lm_b_new("gen3", 2, err);
	int64_t shape[2] = { 4, 8 }, dims[2] = { 4, 32 };
	lm_b_path(b, "t.json");
	lm_b_semaphore(b, "s", 0);
	lm_b_queue(b, "q");
	lm_b_qinstance(b, "q", "qi", "s");
	lm_b_function(b, "f");
	lm_b_memloc(b, lm_b_alloc(b, "t", LM_TK_INTERNAL, LM_DT_FLOAT32,
				  shape, 2), LM_MT_SB, 0, dims, 2, 0);
	lm_b_block(b, "b");
	lm_b_inst(b, LM_OP_NOOP, LM_ENG_SP, "i");
	ck_assert_msg(lm_b_status(b) == 0, "%s", err->msg);
	return b;
}

/* The builder failed with want, stays failed, and finishes with nothing. */
static void failed(lm_builder *b, lm_error *err, const char *want)
{
	lm_module *m = (lm_module *)1;
	ck_assert_int_eq(lm_b_status(b), LM_EINPUT);
	ck_assert_str_eq(err->msg, want);
	/* every later call does nothing and answers the first failure */
	ck_assert_ptr_null(lm_b_semaphore(b, "fresh", 0));
	ck_assert_ptr_null(lm_b_function(b, "fresh"));
	ck_assert_ptr_null(lm_b_inst(b, LM_OP_NOOP, LM_ENG_SP, "fresh"));
	ck_assert_int_eq(lm_b_name(b, "fresh"), LM_EINPUT);
	ck_assert_str_eq(err->msg, want);
	ck_assert_int_eq(lm_b_finish(b, &m), LM_EINPUT);
	ck_assert_ptr_null(m);
}

/* The control-flow, register, sync and DMA-block fields: set by the
** fillers, they are what a loaded module holds, and a module of them
** saves and loads back to itself. */
START_TEST(test_fill_control_fields)
{
	lm_error err;
	lm_builder *b = base(&err);
	lm_module *m, *m2;
	lm_inst *in;
	lm_block *body;
	lm_affine *e0 = NULL, *e4 = NULL;
	int64_t ids[2] = { 3, 5 }, shape[1] = { 1 };
	char *text, where[256] = "";
	size_t n;
	cJSON *j0 = cJSON_Parse("{\"kind\":\"AffExprKind\",\"terms\":[],"
				"\"c\":0}");
	ck_assert_int_eq(lm_affine_from_json(&e0, j0, 2, NULL, 0), 0);
	cJSON_Delete(j0);
	lm_b_memloc(b, lm_b_alloc(b, "r0", LM_TK_INTERNAL, LM_DT_INT32, shape,
				  1), LM_MT_REG, 0, NULL, 0, 0);
	in = lm_b_inst(b, LM_OP_DYNLOOP, LM_ENG_SP, "dl");
	e4 = lm_affine_copy(e0);
	lm_b_set_dynloop_axis(in, "j", e0, e4, e0);
	body = lm_b_append_body(in, "body");
	lm_b_append_inst(body, LM_OP_NOOP, LM_ENG_SP, "inner");
	ck_assert_int_eq(in->n_blocks, 1);
	ck_assert_str_eq(in->axis.name, "j");
	in = lm_b_inst(b, LM_OP_DOWHILE, LM_ENG_SP, "dw");
	lm_b_set_cond(in, e0);
	lm_b_append_inst(lm_b_append_body(in, "wb"), LM_OP_NOOP, LM_ENG_SP,
			 "winner");
	in = lm_b_inst(b, LM_OP_CMPBRANCH, LM_ENG_SP, "cb");
	lm_b_set_branch(in, 10, "b", "body");
	ck_assert_int_eq(in->comp_op, 10);
	ck_assert_str_eq(in->on_false, "body");
	in = lm_b_inst(b, LM_OP_UBRANCH, LM_ENG_SP, "j");
	lm_b_set_jump(in, "wb");
	ck_assert_str_eq(in->branch_target, "wb");
	in = lm_b_inst(b, LM_OP_REGALU, LM_ENG_SP, "ra");
	lm_b_set_register_alu(in, 27, 1);
	ck_assert(in->reg_alu == 27 && in->is_64bit);
	in = lm_b_inst(b, LM_OP_GROUPRESET, LM_ENG_SP, "gr");
	lm_b_set_sema_group(in, ids, 2);
	ck_assert_int_eq(in->sema_group[1], 5);
	in = lm_b_inst(b, LM_OP_DMABLOCK, LM_ENG_DMA, "blk");
	lm_b_append_body(in, "blk_body");
	ck_assert_int_eq(lm_b_dma_queue(b, in, "q"), 0);
	in = lm_b_inst(b, LM_OP_DMATRIGGER, LM_ENG_SP, "tr");
	lm_b_add_dma_block(in, "blk");
	ck_assert_int_eq(lm_b_dma_queue(b, in, "q"), 0);
	ck_assert_str_eq(in->dma_blocks[0], "blk");
	ck_assert_msg(lm_b_finish(b, &m) == 0, "%s", err.msg);
	in = lm_b_append_inst(&m->functions[0].blocks[0], LM_OP_LOOP,
			      LM_ENG_UNASSIGNED, NULL);
	lm_b_set_loop_axis(in, "i", 0, 8, 2);
	lm_b_add_loop_register(in, "r0");
	ck_assert_int_eq(in->n_loop_regs, 1);
	ck_assert_int_eq(lm_module_to_json(m, 0, &text, &n, &err), 0);
	ck_assert_msg(lm_module_parse(&m2, text, n, "t.json", &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(lm_module_compare(m, m2, where, sizeof where) == 0,
		      "differs at %s", where);
	ck_assert_contains(text, "\"comp_op\":\"IS_GEREG\"");
	ck_assert_contains(text, "\"op\":\"mod\"");
	ck_assert_contains(text, "\"sema_group\":[3,5]");
	ck_assert_contains(text, "\"LoopAxis\":{\"lb\":0,\"name\":\"i\","
			   "\"stride\":2,\"ub\":8}");
	free(text);
	lm_module_free(m);
	lm_module_free(m2);
	lm_affine_free(e0);
	lm_affine_free(e4);
}
END_TEST

START_TEST(test_names_given_twice)
{
	static const char *const want[] = {
		"t.json: function f/block b: duplicate semaphore name 's'",
		"t.json: function f/block b: duplicate queue name 'q'",
		"t.json: function f/block b: duplicate queue instance name 'qi' "
		"(also in queue 'q')",
		"t.json: function f/block b: duplicate function name 'f'",
		"t.json: function f/block b: duplicate allocation name 't' (also "
		"in function 'f')",
		"t.json: function f/block b/instruction i: duplicate instruction "
		"name 'i' (also in function 'f')",
		"t.json: function g: duplicate allocation name 't' (also in "
		"function 'f')",
		"t.json: function g/block c/instruction i: duplicate instruction "
		"name 'i' (also in function 'f')",
		"t.json: function f/block b: allocation u: duplicate memory "
		"location name 'u' (also in function 'f')",
	};
	int64_t shape[1] = { 4 }, dims[2] = { 4, 4 };
	for (int k = 0; k < 9; k++) {
		lm_error err;
		lm_builder *b = base(&err);
		lm_alloc *a;
		switch (k) {
		case 0: ck_assert_ptr_null(lm_b_semaphore(b, "s", 1)); break;
		case 1: ck_assert_ptr_null(lm_b_queue(b, "q")); break;
		case 2:
			lm_b_queue(b, "q2");
			ck_assert_ptr_null(lm_b_qinstance(b, "q2", "qi", "s"));
			break;
		case 3: ck_assert_ptr_null(lm_b_function(b, "f")); break;
		case 4:
			ck_assert_ptr_null(lm_b_alloc(b, "t", LM_TK_INTERNAL,
						      LM_DT_FLOAT32, shape, 1));
			break;
		case 5:
			ck_assert_ptr_null(lm_b_inst(b, LM_OP_NOOP, LM_ENG_SP,
						     "i"));
			break;
		case 6:
			/* the names are the module's, not the function's */
			lm_b_function(b, "g");
			ck_assert_ptr_null(lm_b_alloc(b, "t", LM_TK_INTERNAL,
						      LM_DT_FLOAT32, shape, 1));
			break;
		case 7:
			lm_b_function(b, "g");
			lm_b_block(b, "c");
			ck_assert_ptr_null(lm_b_inst(b, LM_OP_NOOP, LM_ENG_POOL,
						     "i"));
			break;
		case 8:
			/* one memory location per allocation */
			a = lm_b_alloc(b, "u", LM_TK_INTERNAL, LM_DT_FLOAT32,
				       shape, 1);
			ck_assert_ptr_nonnull(lm_b_memloc(b, a, LM_MT_SB, 64,
							  dims, 2, 0));
			ck_assert_ptr_null(lm_b_memloc(b, a, LM_MT_SB, 128,
						       dims, 2, 0));
			break;
		}
		failed(b, &err, want[k]);
	}
}
END_TEST

START_TEST(test_names_the_module_lacks)
{
	static const char *const want[] = {
		"t.json: function f/block b/instruction i: ins[0]: memsetref "
		"'nope' names no allocation",
		"t.json: function f/block b/instruction i: wait semaphore 'nope' "
		"is not a module semaphore",
		"t.json: function f/block b/instruction i: signal semaphore "
		"'nope' is not a module semaphore",
		"t.json: function f/block b/instruction d: queue 'nope' is not a "
		"module queue",
		"t.json: function f/block b/instruction w: queue instance 'nope' "
		"does not exist",
		"t.json: function f/block b/instruction w: instance 'ri' is not "
		"an instance of queue 'q'",
		"t.json: function f/block b: queue 'nope' is not a module queue",
		"t.json: function f/block b: queue instance semaphore 'nope' is "
		"not a module semaphore",
		"t.json: function f/block b/instruction w: queue 'nope' is not a "
		"module queue",
	};
	lm_appair ap[1] = { { 1, 4 } };
	for (int k = 0; k < 9; k++) {
		lm_error err;
		lm_builder *b = base(&err);
		lm_inst *i = &(lm_b_module(b))->functions[0]
				      .blocks[0].insts[0];
		lm_inst *in;
		switch (k) {
		case 0:
			ck_assert_ptr_null(lm_b_ap(b, i, LM_B_IN, "nope",
						   LM_DT_FLOAT32, 0, 0, ap, 1));
			break;
		case 1: ck_assert_int_eq(lm_b_wait(b, i, "nope", 1), LM_EINPUT);
			break;
		case 2: ck_assert_int_eq(lm_b_signal(b, i, "nope"), LM_EINPUT);
			break;
		case 3:
			in = lm_b_inst(b, LM_OP_DMACOPY, LM_ENG_SP, "d");
			ck_assert_int_eq(lm_b_dma_queue(b, in, "nope"),
					 LM_EINPUT);
			break;
		case 4:
			in = lm_b_inst(b, LM_OP_SWITCHQUEUE, LM_ENG_SP, "w");
			ck_assert_int_eq(lm_b_switch_queue(b, in, "q", "nope"),
					 LM_EINPUT);
			break;
		case 5:
			lm_b_queue(b, "r");
			lm_b_qinstance(b, "r", "ri", "s");
			in = lm_b_inst(b, LM_OP_SWITCHQUEUE, LM_ENG_SP, "w");
			ck_assert_int_eq(lm_b_switch_queue(b, in, "q", "ri"),
					 LM_EINPUT);
			break;
		case 6:
			ck_assert_ptr_null(lm_b_qinstance(b, "nope", "x", "s"));
			break;
		case 7:
			ck_assert_ptr_null(lm_b_qinstance(b, "q", "x", "nope"));
			break;
		case 8:
			in = lm_b_inst(b, LM_OP_SWITCHQUEUE, LM_ENG_SP, "w");
			ck_assert_int_eq(lm_b_switch_queue(b, in, "nope", "qi"),
					 LM_EINPUT);
			break;
		}
		failed(b, &err, want[k]);
	}
}
END_TEST

START_TEST(test_arguments_out_of_range)
{
	static const char *const want[] = {
		"unknown arch 'gen9' (gen2, gen3, gen4)",
		"unsupported BIR version 3 (1 or 2)",
		"t.json: function f/block b: allocation u: invalid tensor kind 0",
		"t.json: function f/block b: allocation u: invalid dtype 99",
		"t.json: function f/block b: allocation u: no tensor_shape of 2 "
		"dimensions",
		"t.json: function f/block b: allocation u: invalid memory type 0",
		"t.json: function f/block b: allocation u: no dims of 2 entries",
		"t.json: function f/block b/instruction k: opcode 20 is not built "
		"here (a Loop or a carried opcode is given in the wire form)",
		"t.json: function f/block b/instruction k: invalid engine 42",
		"t.json: function f/block b/instruction i: ins[0]: invalid dtype 0",
		"t.json: function f/block b/instruction i: outs[0]: no access "
		"pattern of 2 pairs",
		"t.json: function f/block b/instruction i: wait on 's' for a "
		"negative value -1",
		"t.json: function f/block b/instruction i: a queue on NoOp, not a "
		"DMA",
		"t.json: function f/block b/instruction i: a queue switch on NoOp",
		"t.json: function f/block b: negative neuron_core_id -2",
		"t.json: function f/block b: semaphore 'n': negative init -1",
		"t.json: function f/block b: instruction without a name",
		"t.json: function f/block b: memory location of an allocation "
		"that is not the module's",
		"t.json: function f/block b/instruction i: operand list 2 "
		"(LM_B_IN, LM_B_OUT)",
		"t.json: function f/block b: function without a name",
		"t.json: function f/block b: block without a name",
		"t.json: function f/block b: module without a name",
		"t.json: function f/block b: no instruction",
	};
	int64_t shape[2] = { 4, 8 };
	lm_appair ap[1] = { { 1, 4 } };
	for (int k = 0; k < 23; k++) {
		lm_error err;
		lm_builder *b = k < 2 ? lm_b_new(k ? "gen3" : "gen9", k ? 3 : 2,
						 &err) : base(&err);
		lm_inst *i = k < 2 ? NULL : &(lm_b_module(b))
			->functions[0].blocks[0].insts[0];
		lm_alloc other;
		memset(&other, 0, sizeof other);
		other.name = "t";
		switch (k) {
		case 2: lm_b_alloc(b, "u", LM_TK_INVALID, LM_DT_FLOAT32, shape,
				   2); break;
		case 3: lm_b_alloc(b, "u", LM_TK_INTERNAL, (lm_dtype)99, shape,
				   2); break;
		case 4: lm_b_alloc(b, "u", LM_TK_INTERNAL, LM_DT_FLOAT32, NULL,
				   2); break;
		case 5:
			lm_b_memloc(b, lm_b_alloc(b, "u", LM_TK_INTERNAL,
						  LM_DT_FLOAT32, shape, 2),
				    LM_MT_INVALID, 0, shape, 2, 0);
			break;
		case 6:
			lm_b_memloc(b, lm_b_alloc(b, "u", LM_TK_INTERNAL,
						  LM_DT_FLOAT32, shape, 2),
				    LM_MT_SB, 0, NULL, 2, 0);
			break;
		case 7: lm_b_inst(b, LM_OP_LOOP, LM_ENG_SP, "k"); break;
		case 8: lm_b_inst(b, LM_OP_NOOP, (lm_engine)42, "k"); break;
		case 9: lm_b_ap(b, i, LM_B_IN, "t", LM_DT_INVALID, 0, 0, ap, 1);
			break;
		case 10: lm_b_ap(b, i, LM_B_OUT, "t", LM_DT_FLOAT32, 0, 0, NULL,
				 2); break;
		case 11: lm_b_wait(b, i, "s", -1); break;
		case 12: lm_b_dma_queue(b, i, "q"); break;
		case 13: lm_b_switch_queue(b, i, "q", "qi"); break;
		case 14: lm_b_core_id(b, -2); break;
		case 15: lm_b_semaphore(b, "n", -1); break;
		case 16: lm_b_inst(b, LM_OP_NOOP, LM_ENG_SP, ""); break;
		case 17: lm_b_memloc(b, &other, LM_MT_SB, 0, shape, 2, 0);
			break;
		case 18: lm_b_ap(b, i, 2, "t", LM_DT_FLOAT32, 0, 0, ap, 1);
			break;
		case 19: lm_b_function(b, NULL); break;
		case 20: lm_b_block(b, ""); break;
		case 21: lm_b_name(b, ""); break;
		case 22: lm_b_wait(b, NULL, "s", 1); break;
		}
		failed(b, &err, want[k]);
	}
}
END_TEST

/* Objects outside the function or block they need. */
START_TEST(test_outside_a_function)
{
	int64_t shape[1] = { 1 };
	lm_error err;
	lm_builder *b = lm_b_new("gen2", 1, &err);
	ck_assert_ptr_null(lm_b_block(b, "b"));
	failed(b, &err, "block 'b' outside a function");
	b = lm_b_new("gen2", 1, &err);
	ck_assert_ptr_null(lm_b_alloc(b, "a", LM_TK_INTERNAL, LM_DT_INT32,
				      shape, 1));
	failed(b, &err, "allocation 'a' outside a function");
	b = lm_b_new("gen2", 1, &err);
	lm_b_function(b, "f");
	ck_assert_ptr_null(lm_b_inst(b, LM_OP_NOOP, LM_ENG_SP, "i"));
	failed(b, &err, "function f: instruction 'i' outside a block");
	b = lm_b_new("gen2", 1, &err);
	ck_assert_ptr_null(lm_b_inst_json(b, "{}"));
	failed(b, &err, "an instruction outside a block");
	b = lm_b_new("gen4", 2, &err);
	ck_assert_ptr_null(lm_b_alloc_json(b, "{}"));
	failed(b, &err, "allocation outside a function");
	/* no lm_error of the caller's: the status still says it */
	b = lm_b_new("gen5", 2, NULL);
	ck_assert_int_eq(lm_b_status(b), LM_EINPUT);
	lm_b_free(b);
	/* a builder dropped half way frees what it made */
	b = lm_b_new("gen4", 2, &err);
	lm_b_function(b, "f");
	lm_b_alloc(b, "a", LM_TK_INTERNAL, LM_DT_INT32, shape, 1);
	lm_b_free(b);
	lm_b_free(NULL);
}
END_TEST

/* ---- the wire-form entries --------------------------------------------------- */

START_TEST(test_wire_form_entries)
{
	lm_error err;
	lm_builder *b = base(&err);
	lm_module *m;
	lm_alloc *a;
	lm_inst *in;
	/* an allocation with keys the model carries as they are */
	a = lm_b_alloc_json(b, "{\"name\":\"w\",\"kind\":\"Internal\","
			    "\"dtype\":\"float32\",\"tensor_shape\":[2,4],"
			    "\"frob\":1,\"memorylocations\":[{\"name\":\"wl\","
			    "\"type\":\"SB\",\"addr\":64,\"dims\":[2,16]}]}");
	ck_assert_msg(a != NULL, "%s", err.msg);
	ck_assert_str_eq(a->memlocs[0].name, "wl");
	ck_assert_ptr_nonnull(a->extra);
	/* an instruction: SB offsets hold the start partition (2 * 8 + 1 of
	   t's 8 elements a partition), the memory location its own */
	in = lm_b_inst_json(b, "{\"opcode\":\"TensorCopy\",\"name\":\"cp\","
			    "\"engine\":\"DVE\",\"ins\":[{\"kind\":"
			    "\"physical_ap\",\"memsetref\":\"t\",\"offset\":17,"
			    "\"ap\":[[8,2],[1,4]],\"dtype\":\"float32\"}],"
			    "\"outs\":[{\"kind\":\"physical_ap\",\"memsetref\":"
			    "\"w\",\"memref\":\"wl\",\"offset\":0,\"ap\":[[4,2],"
			    "[1,4]],\"dtype\":\"float32\"}],\"wait\":[{"
			    "\"semaphore\":\"s\",\"value\":2}],\"frob\":[1]}");
	ck_assert_msg(in != NULL, "%s", err.msg);
	ck_assert_int_eq(in->ins[0].start_partition, 2);
	ck_assert_int_eq(in->ins[0].offset, 1);
	ck_assert_str_eq(in->outs[0].memref, "wl");
	ck_assert_int_eq(in->n_wait, 1);
	ck_assert_ptr_nonnull(in->extra);
	/* a Loop and its body */
	in = lm_b_inst_json(b, "{\"opcode\":\"Loop\",\"LoopAxis\":{\"name\":"
			    "\"i\",\"lb\":0,\"ub\":4,\"stride\":1},"
			    "\"blocks\":[{\"name\":"
			    "\"lb\",\"instructions\":[{\"opcode\":\"NoOp\","
			    "\"name\":\"inner\",\"engine\":\"Pool\"}]}]}");
	ck_assert_msg(in != NULL, "%s", err.msg);
	ck_assert_int_eq(in->n_blocks, 1);
	ck_assert_msg(lm_b_finish(b, &m) == 0, "%s", err.msg);
	ck_assert_msg(lm_verify(m, NULL, &err) == 0, "%s", err.msg);
	lm_module_free(m);

	static const struct { const char *text, *want; } bad[] = {
		{ "{\"opcode\":\"NoOp\",\"name\":\"i\",\"engine\":\"SP\"}",
		  "t.json: function f/block b/instruction i: duplicate "
		  "instruction name 'i' (also in function 'f')" },
		{ "{\"opcode\":\"Loop\",\"LoopAxis\":{\"name\":\"i\",\"lb\":0,"
		  "\"ub\":4,\"stride\":1},\"blocks\":[{\"name\":\"lb\","
		  "\"instructions\":[{\"opcode\":\"NoOp\",\"name\":\"i\","
		  "\"engine\":\"SP\"}]}]}",
		  "t.json: function f/block b/instruction i: duplicate "
		  "instruction name 'i' (also in function 'f')" },
		{ "{\"opcode\":\"TensorCopy\",\"name\":\"c\",\"engine\":\"DVE\","
		  "\"ins\":[{\"kind\":\"physical_ap\",\"memsetref\":\"zz\","
		  "\"offset\":0,\"ap\":[[1,1]],\"dtype\":\"float32\"}]}",
		  "t.json: function f/block b/instruction c: ins[0]: memsetref "
		  "'zz' names no allocation" },
		{ "{\"opcode\":\"NoOp\",\"name\":\"n\",\"engine\":\"SP\"} x",
		  "t.json: function f/block b: malformed JSON instruction" },
		{ "{\"opcode\":\"Frob\",\"name\":\"n\"}",
		  "t.json: function f/block b/instruction n: unknown opcode "
		  "'Frob'" },
		{ NULL, "t.json: function f/block b: malformed JSON "
		  "instruction" },
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		b = base(&err);
		ck_assert_ptr_null(lm_b_inst_json(b, bad[k].text));
		failed(b, &err, bad[k].want);
	}
	static const struct { const char *text, *want; } bad_a[] = {
		{ "{\"name\":\"t\",\"kind\":\"Internal\",\"memorylocations\":[]}",
		  "t.json: function f/block b: duplicate allocation name 't' "
		  "(also in function 'f')" },
		{ "{\"name\":\"v\",\"kind\":\"Internal\",\"memorylocations\":"
		  "[{\"name\":\"t\",\"type\":\"SB\"}]}",
		  "t.json: function f/block b: allocation v: duplicate memory "
		  "location name 't' (also in function 'f')" },
		{ "{\"name\":\"v\",\"kind\":\"Frob\",\"memorylocations\":[]}",
		  "t.json: function f/allocation v: key 'kind': unknown tensor "
		  "kind 'Frob'" },
		{ "[1]", "t.json: function f: expected allocation object, got "
		  "array" },
	};
	for (size_t k = 0; k < sizeof bad_a / sizeof *bad_a; k++) {
		b = base(&err);
		ck_assert_ptr_null(lm_b_alloc_json(b, bad_a[k].text));
		failed(b, &err, bad_a[k].want);
	}
}
END_TEST

/* The version and arch asked for are the module's (the verifier wants
** version 2: a version 1 module is one the loader rewrites as it reads). */
START_TEST(test_version_and_arch)
{
	lm_error err;
	lm_builder *b = lm_b_new("gen2", 1, &err);
	lm_module *m;
	lm_b_function(b, "f");
	lm_b_block(b, "b");
	ck_assert_ptr_nonnull(lm_b_inst(b, LM_OP_NOOP, LM_ENG_SP, "n"));
	ck_assert_int_eq(lm_b_finish(b, &m), 0);
	ck_assert_int_eq(m->version, 1);
	ck_assert_str_eq(m->arch, "gen2");
	ck_assert_str_eq(m->path, "");
	ck_assert_str_eq(lm_module_display_name(m), "module");
	ck_assert_int_eq(lm_verify(m, NULL, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "unsupported version 1 (expected 2)");
	lm_module_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("build");
	TCase *tc = tcase_create("fill");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fill_module_objects);
	tcase_add_test(tc, test_fill_instructions);
	tcase_add_test(tc, test_fill_control_fields);
	tcase_add_test_raise_signal(tc, test_setter_asserts_opcode, SIGABRT);
	suite_add_tcase(s, tc);
	tc = tcase_create("builder");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_module_verifies_and_round_trips);
	tcase_add_test(tc, test_module_runs);
	tcase_add_test(tc, test_names_given_twice);
	tcase_add_test(tc, test_names_the_module_lacks);
	tcase_add_test(tc, test_arguments_out_of_range);
	tcase_add_test(tc, test_outside_a_function);
	tcase_add_test(tc, test_wire_form_entries);
	tcase_add_test(tc, test_version_and_arch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** simtb.h -- a small module builder for the simulator suites, on the IR
** builder (model/build.h): a per-core module (gen3, semaphores s0..s3,
** queue q0 -> s0, queue q1 with instances q1a -> s1 and q1b -> s2, one
** function sg0000 with one block b) whose allocations are made in the IR
** (tb_dram, tb_sb, tb_psum) and whose instructions are given in the wire
** form (tb_inst, one JSON object each: the suites spell the keys the
** simulator refuses or models as the compiler writes them). Each object
** goes in as it is given, so an instruction names allocations made
** before it. Header-only (static) so each suite includes it.
*/
#ifndef LNCSIM_SIMTB_H
#define LNCSIM_SIMTB_H

#include "common.h"
#include "module.h"
#include "build.h"
#include "verify.h"
#include "sim.h"
#include "dtype.h"

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TB_UNUSED __attribute__((unused))

typedef struct tb {
	lm_builder *b;         /* the module (NULL once tb_module took it) */
	lm_error err;          /* the builder's first failure */
	int64_t dram_addr, sb_addr;
} tb;

/* Stop the test when the builder failed (what is the builder's message). */
static TB_UNUSED void tb_check(tb *t, const char *what)
{
	if (lm_b_status(t->b))
		ck_abort_msg("%s: %s", what, t->err.msg);
}

/* A builder holding the frame above. */
static TB_UNUSED void tb_init(tb *t)
{
	memset(t, 0, sizeof *t);
	t->b = lm_b_new("gen3", 2, &t->err);
	lm_b_name(t->b, "t");
	for (int i = 0; i < 4; i++) {
		char s[4] = { 's', (char)('0' + i), 0, 0 };
		lm_b_semaphore(t->b, s, 0);
	}
	lm_b_queue(t->b, "q0");
	lm_b_qinstance(t->b, "q0", "q0", "s0");
	lm_b_queue(t->b, "q1");
	lm_b_qinstance(t->b, "q1", "q1a", "s1");
	lm_b_qinstance(t->b, "q1", "q1b", "s2");
	lm_b_function(t->b, "sg0000");
	lm_b_block(t->b, "b");
	tb_check(t, "tb_init");
}

static TB_UNUSED void tb_free(tb *t)
{
	lm_b_free(t->b);
	t->b = NULL;
}

/* A further function (kind nki when nki) with one block b; what follows
** goes into it. */
static TB_UNUSED void tb_function(tb *t, const char *name, int nki)
{
	lm_function *f = lm_b_function(t->b, name);
	if (f && nki)
		lm_b_set_kind(f, LM_FK_NKI);
	lm_b_block(t->b, "b");
	tb_check(t, name);
}

static TB_UNUSED int tb_esize(const char *dt)
{
	return lm_dtype_size(lm_dtype_parse(dt));
}

/* An allocation [rows, cols] of dtype dt at addr of memory type mt. */
static TB_UNUSED void tb_alloc(tb *t, const char *name, lm_tensorkind kind,
			       const char *dt, int rows, int cols,
			       lm_memtype mt, int64_t addr)
{
	int64_t shape[2] = { rows, cols };
	int64_t dims[2] = { rows, (int64_t)cols * tb_esize(dt) };
	lm_alloc *a = lm_b_alloc(t->b, name, kind, lm_dtype_parse(dt), shape,
				 2);
	lm_b_memloc(t->b, a, mt, addr, dims, 2, 0);
	tb_check(t, name);
}

/* A DRAM allocation [rows, cols] of kind (ExternalInput, Internal, ...). */
static TB_UNUSED void tb_dram(tb *t, const char *name, const char *kind,
			      const char *dt, int rows, int cols)
{
	tb_alloc(t, name, lm_tensorkind_parse(kind), dt, rows, cols,
		 LM_MT_DRAM, t->dram_addr);
	t->dram_addr += (int64_t)rows * cols * tb_esize(dt);
}

/* An SB tensor [parts, free] at the next free SB offset. */
static TB_UNUSED void tb_sb(tb *t, const char *name, const char *dt, int parts,
			    int free)
{
	tb_alloc(t, name, LM_TK_INTERNAL, dt, parts, free, LM_MT_SB,
		 t->sb_addr);
	t->sb_addr += (int64_t)free * tb_esize(dt);
}

/* A float32 PSUM tensor [parts, free] in bank. */
static TB_UNUSED void tb_psum(tb *t, const char *name, int parts, int free,
			      int bank)
{
	tb_alloc(t, name, LM_TK_INTERNAL, "float32", parts, free, LM_MT_PSUM,
		 (int64_t)bank * LM_PSUM_BANK_BYTES);
}

/* An allocation in the wire form (keys the model carries as they are). */
static TB_UNUSED void tb_alloc_raw(tb *t, const char *json)
{
	if (!lm_b_alloc_json(t->b, json))
		ck_abort_msg("tb_alloc_raw: %s\n%s", t->err.msg, json);
}

/* One instruction in the wire form (a JSON object, printf-style). */
static TB_UNUSED void LM_PRINTF(2, 3) tb_inst(tb *t, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (!lm_b_inst_json(t->b, buf))
		ck_abort_msg("tb_inst: %s\n%s", t->err.msg, buf);
}

/* An SB/PSUM operand [parts, free] from element off (rotating buffers). */
static TB_UNUSED const char *AP(const char *name, const char *dt, int parts,
				int free, int off)
{
	static char bufs[16][400];
	static int k;
	char *b = bufs[k++ % 16];
	snprintf(b, 400, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
		 "\"memref\":\"%s\",\"offset\":%d,\"ap\":[[%d,%d],[1,%d]],"
		 "\"dtype\":\"%s\"}", name, name, off, free, parts, free, dt);
	return b;
}

/* AP's operand [parts, free] from element 0, made in the IR. */
static TB_UNUSED void tb_op(tb *t, lm_inst *in, int side, const char *name,
			    const char *dt, int parts, int free)
{
	lm_appair ap[2] = { { free, parts }, { 1, free } };
	lm_b_ap(t->b, in, side, name, lm_dtype_parse(dt), 0, 0, ap, 2);
}

/* The module's wire text as core core (caller frees); the builder keeps
** the module. */
static TB_UNUSED char *tb_json(tb *t, int core)
{
	char *text;
	size_t n;
	lm_error err;
	lm_b_core_id(t->b, core);
	tb_check(t, "tb_json");
	ck_assert_int_eq(lm_module_to_json(lm_b_module(t->b), 0, &text, &n,
					   &err), 0);
	return text;
}

/* The module as core core, file tb-core<core>.json, verified (asserting
** both); the builder is done (tb_free still may be called). */
static TB_UNUSED lm_module *tb_module(tb *t, int core)
{
	lm_module *m = NULL;
	char path[64];
	snprintf(path, sizeof path, "tb-core%d.json", core);
	lm_b_path(t->b, path);
	lm_b_core_id(t->b, core);
	if (lm_b_finish(t->b, &m) != 0)
		ck_abort_msg("build: %s", t->err.msg);
	t->b = NULL;
	if (lm_verify(m, NULL, &t->err) != 0)
		ck_abort_msg("verify: %s", t->err.msg);
	return m;
}

/*
** The common harness: x [P, F] (dtype dt_in, ExternalInput) is DMA'd into
** SB xs on q0 (s0 +1); the caller's instructions compute ys (dt_out);
** tb_io_end stores ys into the ExternalOutput y after instruction dep.
*/
static TB_UNUSED void tb_io(tb *t, const char *dt_in, const char *dt_out,
			    int P, int F)
{
	lm_inst *in;
	tb_dram(t, "x", "ExternalInput", dt_in, P, F);
	tb_dram(t, "y", "ExternalOutput", dt_out, P, F);
	tb_sb(t, "xs", dt_in, P, F);
	tb_sb(t, "ys", dt_out, P, F);
	in = lm_b_inst(t->b, LM_OP_DMACOPY, LM_ENG_SP, "ld");
	tb_op(t, in, LM_B_IN, "x", dt_in, P, F);
	tb_op(t, in, LM_B_OUT, "xs", dt_in, P, F);
	lm_b_dma_queue(t->b, in, "q0");
	tb_check(t, "tb_io");
}

static TB_UNUSED void tb_io_end(tb *t, const char *dt_out, int P, int F,
				const char *dep)
{
	lm_inst *in = lm_b_inst(t->b, LM_OP_DMACOPY, LM_ENG_SP, "st");
	tb_op(t, in, LM_B_IN, "ys", dt_out, P, F);
	tb_op(t, in, LM_B_OUT, "y", dt_out, P, F);
	lm_b_dma_queue(t->b, in, "q0");
	if (in)
		lm_inst_add_dep(in, 0, dep, LM_EDGE_FLOW);
	tb_check(t, "tb_io_end");
}

/* Run one module with x as input (f32 data, converted to the tensor). */
static TB_UNUSED int tb_run1(lm_module *m, const float *x, int P, int F,
			     const ls_options *o, ls_result *r, lm_error *err)
{
	ls_tensors in = {0, NULL};
	int64_t shape[2] = {P, F};
	int rc;
	if (x)
		ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	rc = ls_run(m, &in, o, r, err);
	ls_tensors_free(&in);
	return rc;
}

/* Output element i of tensor name as float32. */
static TB_UNUSED float tb_out(const ls_result *r, const char *name, int64_t i)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, name);
	ck_assert_msg(t != NULL, "no output %s", name);
	return lm_load_elem(t->dtype, (const char *)t->data +
			    i * lm_dtype_size(t->dtype));
}

static TB_UNUSED uint32_t tb_bits(float f)
{
	return lm_f32_bits(f);
}

/* Bit-equal, or both NaN. */
#define ck_assert_same_f(a, b) do { \
	float a_ = (a), b_ = (b); \
	ck_assert_msg((isnan(a_) && isnan(b_)) || \
		      lm_f32_bits(a_) == lm_f32_bits(b_), \
		      "%s = %.9g (0x%08x) != %s = %.9g (0x%08x)", #a, \
		      (double)a_, lm_f32_bits(a_), #b, (double)b_, \
		      lm_f32_bits(b_)); \
} while (0)

/* Deterministic test data in [-2, 2). */
static TB_UNUSED void tb_fill(float *v, int64_t n, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 1;
	for (int64_t i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		v[i] = (float)(int32_t)(s >> 8) / (float)(1 << 23) - 1.0f;
		v[i] *= 2.0f;
	}
}

#endif

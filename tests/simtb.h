/*
** simtb.h -- a small module builder for the simulator suites: allocations
** and instructions as JSON text, assembled into a per-core module (gen3,
** semaphores s0..s3, queue q0 -> s0, queue q1 with instances q1a -> s1 and
** q1b -> s2). Header-only (static) so each suite includes it.
*/
#ifndef LNCSIM_SIMTB_H
#define LNCSIM_SIMTB_H

#include "common.h"
#include "module.h"
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
	lm_buf al, in;
	int na, ni;
	int64_t dram_addr, sb_addr;
} tb;

static TB_UNUSED void tb_init(tb *t)
{
	memset(t, 0, sizeof *t);
}

static TB_UNUSED void tb_free(tb *t)
{
	lm_buf_free(&t->al);
	lm_buf_free(&t->in);
}

static TB_UNUSED int tb_esize(const char *dt)
{
	return lm_dtype_size(lm_dtype_parse(dt));
}

/* A DRAM allocation [rows, cols] of kind (ExternalInput, Internal, ...). */
static TB_UNUSED void tb_dram(tb *t, const char *name, const char *kind,
			      const char *dt, int rows, int cols)
{
	int bytes = rows * cols * tb_esize(dt);
	lm_buf_printf(&t->al, "%s{\"name\":\"%s\",\"kind\":\"%s\",\"dtype\":"
		      "\"%s\",\"tensor_shape\":[%d,%d],\"file\":\"\","
		      "\"memorylocations\":[{\"name\":\"%s\",\"type\":\"DRAM\","
		      "\"addr\":%lld,\"dims\":[%d,%d],\"bank\":0,\"base\":0,"
		      "\"allocated\":true}]}", t->na++ ? "," : "", name, kind,
		      dt, rows, cols, name, (long long)t->dram_addr, rows,
		      cols * tb_esize(dt));
	t->dram_addr += bytes;
}

/* An SB tensor [parts, free] at the next free SB offset. */
static TB_UNUSED void tb_sb(tb *t, const char *name, const char *dt, int parts,
			    int free)
{
	int bytes = free * tb_esize(dt);
	lm_buf_printf(&t->al, "%s{\"name\":\"%s\",\"kind\":\"Internal\","
		      "\"dtype\":\"%s\",\"tensor_shape\":[%d,%d],\"file\":\"\","
		      "\"memorylocations\":[{\"name\":\"%s\",\"type\":\"SB\","
		      "\"addr\":%lld,\"dims\":[%d,%d],\"bank\":0,\"base\":0,"
		      "\"allocated\":true}]}", t->na++ ? "," : "", name, dt,
		      parts, free, name, (long long)t->sb_addr, parts, bytes);
	t->sb_addr += bytes;
}

/* A float32 PSUM tensor [parts, free] in bank. */
static TB_UNUSED void tb_psum(tb *t, const char *name, int parts, int free,
			      int bank)
{
	lm_buf_printf(&t->al, "%s{\"name\":\"%s\",\"kind\":\"Internal\","
		      "\"dtype\":\"float32\",\"tensor_shape\":[%d,%d],"
		      "\"file\":\"\",\"memorylocations\":[{\"name\":\"%s\","
		      "\"type\":\"PSUM\",\"addr\":%d,\"dims\":[%d,%d],\"bank\":%d,"
		      "\"base\":0,\"allocated\":true}]}", t->na++ ? "," : "",
		      name, parts, free, name, bank * 2048, parts, free * 4,
		      bank);
}

/* Raw allocation JSON. */
static TB_UNUSED void tb_alloc_raw(tb *t, const char *json)
{
	lm_buf_printf(&t->al, "%s%s", t->na++ ? "," : "", json);
}

/* One instruction (a JSON object, printf-style). */
static TB_UNUSED void LM_PRINTF(2, 3) tb_inst(tb *t, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	lm_buf_printf(&t->in, "%s%s", t->ni++ ? ",\n" : "", buf);
}

/*
** An SB/PSUM operand [parts, free] from element off (rotating buffers),
** whose first pair steps pe elements, one partition of its memory location
** (APS; AP: a location of free elements per partition).
*/
static TB_UNUSED const char *APS(const char *name, const char *dt, int parts,
				 int free, int off, int pe)
{
	static char bufs[16][400];
	static int k;
	char *b = bufs[k++ % 16];
	snprintf(b, 400, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
		 "\"memref\":\"%s\",\"offset\":%d,\"ap\":[[%d,%d],[1,%d]],"
		 "\"dtype\":\"%s\"}", name, name, off, pe, parts, free, dt);
	return b;
}

static TB_UNUSED const char *AP(const char *name, const char *dt, int parts,
				int free, int off)
{
	return APS(name, dt, parts, free, off, free);
}

/* A module around the allocations and instructions (caller frees). */
static TB_UNUSED char *tb_json(tb *t, int core)
{
	return lm_xasprintf(
		"{\"version\":2,\"arch\":\"gen3\",\"name\":\"t\","
		"\"attributes\":{\"neuron_core_id\":%d},"
		"\"semaphores\":[{\"name\":\"s0\",\"init\":0},{\"name\":\"s1\","
		"\"init\":0},{\"name\":\"s2\",\"init\":0},{\"name\":\"s3\","
		"\"init\":0}],\"queues\":[{\"name\":\"q0\",\"instances\":"
		"[{\"name\":\"q0\",\"semaphore\":\"s0\"}]},{\"name\":\"q1\","
		"\"instances\":[{\"name\":\"q1a\",\"semaphore\":\"s1\"},"
		"{\"name\":\"q1b\",\"semaphore\":\"s2\"}]}],"
		"\"functions\":[{\"name\":\"sg0000\",\"attributes\":[],"
		"\"allocations\":[%s],\"blocks\":[{\"name\":\"b\","
		"\"instructions\":[%s]}]}]}", core, lm_buf_cstr(&t->al),
		lm_buf_cstr(&t->in));
}

/* Parse + verify (asserting both succeed). */
static TB_UNUSED lm_module *tb_module(tb *t, int core)
{
	char *j = tb_json(t, core);
	lm_module *m = NULL;
	lm_error err;
	char path[64];
	snprintf(path, sizeof path, "tb-core%d.json", core);
	if (lm_module_parse(&m, j, strlen(j), path, &err) != 0)
		ck_abort_msg("parse: %s\n%s", err.msg, j);
	if (lm_verify(m, NULL, &err) != 0)
		ck_abort_msg("verify: %s\n%s", err.msg, j);
	free(j);
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
	tb_dram(t, "x", "ExternalInput", dt_in, P, F);
	tb_dram(t, "y", "ExternalOutput", dt_out, P, F);
	tb_sb(t, "xs", dt_in, P, F);
	tb_sb(t, "ys", dt_out, P, F);
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"ld\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s]}",
		AP("x", dt_in, P, F, 0), AP("xs", dt_in, P, F, 0));
}

static TB_UNUSED void tb_io_end(tb *t, const char *dt_out, int P, int F,
				const char *dep)
{
	tb_inst(t, "{\"opcode\":\"DMACopy\",\"name\":\"st\",\"engine\":\"SP\","
		"\"queue\":\"q0\",\"ins\":[%s],\"outs\":[%s],"
		"\"dependencies\":[\"%s\"]}", AP("ys", dt_out, P, F, 0),
		AP("y", dt_out, P, F, 0), dep);
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

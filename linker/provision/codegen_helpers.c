/*
** codegen_helpers.c -- the shared helpers of the KLR -> BIR codegen (seed
** 003 part 1).
**
**   lp_cg_zero_bias   getActBiasTensor: ONE cached float32 zero bias
**                     [partitions, 1] per kernel, named
**                     COMPILER-GENERATED-zero_bias_act_<id> and zeroed by
**                     COMPILER-GENERATED-memset_zero_bias_<id>
**   lp_cg_identity    getIdentityMatrix: one 128x128 SBUF identity per
**                     dtype, COMPILER-GENERATED-id.<dtype>, built at most
**                     once (memset 0 + affine select filling 1.0 on the
**                     diagonal); the performance warning once per run
**   lp_cg_bank_id     getBankId: PSUM bank of an address (addr / 2048)
**
** plus instruction emission with dependency tracking (the codegen emits
** BIR for a sequential KLR program; instructions on different engines only
** stay ordered through `dependencies`) and tensor placement.
*/
#include "common.h"
#include "provision_int.h"
#include "arch.h"
#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Alignment of the tensors the codegen places itself (bytes). */
#define PLACE_ALIGN 64

/* ---- codegen context ------------------------------------------------------ */

void lp_cg_init(lp_cg *cg, lp_lower_ctx *lc, const char *path, lm_error *err)
{
	const lm_arch *arch = lm_arch_get(lc->m->arch ? lc->m->arch : "gen3");
	memset(cg, 0, sizeof *cg);
	cg->lc = lc;
	cg->path = path;
	cg->err = err;
	cg->f = lm_xcalloc(1, sizeof *cg->f);
	cg->n_partitions = LM_PARTITIONS;
	cg->sbuf_bytes = arch ? arch->sbuf_bytes : 224 * 1024;
	cg->psum_max_bank = -1;
	lm_strmap_init(&cg->tensors);
	lm_strmap_init(&cg->hazards);
	lm_strmap_init(&cg->inst_names);
}

/* Free a hazard record. */
static void hazard_free(cg_hazard *h)
{
	free(h->writer);
	for (int i = 0; i < h->n_readers; i++)
		free(h->readers[i]);
	free(h->readers);
	free(h);
}

void lp_cg_free(lp_cg *cg)
{
	size_t pos = 0;
	void *h;
	while (lm_strmap_next(&cg->hazards, &pos, NULL, &h))
		hazard_free(h);
	lm_strmap_free(&cg->hazards);
	lm_strmap_free(&cg->tensors);
	lm_strmap_free(&cg->inst_names);
	if (cg->f) {
		lm_function_clear(cg->f);
		free(cg->f);
	}
	free(cg->kname);
	free(cg->zero_bias);
	free(cg->transpose_psum);
	free(cg->queue);
	free(cg->unplaced);
	free(cg->fence);
	memset(cg, 0, sizeof *cg);
}

char *lp_cg_inst_name(lp_cg *cg, const char *base)
{
	return lp_ir_unique_name(base, &cg->inst_names, NULL);
}

/* The hazard record of an allocation (created on first use). */
static cg_hazard *hazard(lp_cg *cg, const char *alloc)
{
	cg_hazard *h = lm_strmap_lookup(&cg->hazards, alloc);
	int idx;
	if (h)
		return h;
	/* key: the allocation's own name string, alive as long as f */
	idx = (int)(intptr_t)lm_strmap_lookup(&cg->tensors, alloc) - 1;
	h = lm_xcalloc(1, sizeof *h);
	/* an allocation first used after a fence still follows it */
	h->writer = cg->fence ? lm_xstrdup(cg->fence) : NULL;
	lm_strmap_put(&cg->hazards, idx >= 0 ? cg->f->allocs[idx].name
					     : alloc, h);
	return h;
}

/* Dependencies of one instruction from its operands, then record it. */
void lp_cg_emit(lp_cg *cg, lm_inst *in)
{
	for (int i = 0; i < in->n_ins; i++) {
		cg_hazard *h;
		if (!in->ins[i].memsetref)
			continue;
		h = hazard(cg, in->ins[i].memsetref);
		if (h->writer)
			lp_ir_add_dep(in, h->writer);
	}
	for (int i = 0; i < in->n_outs; i++) {
		cg_hazard *h;
		if (!in->outs[i].memsetref)
			continue;
		h = hazard(cg, in->outs[i].memsetref);
		if (h->writer)
			lp_ir_add_dep(in, h->writer);
		for (int k = 0; k < h->n_readers; k++)
			lp_ir_add_dep(in, h->readers[k]);
	}
	for (int i = 0; i < in->n_ins; i++) {
		cg_hazard *h;
		int seen = 0;
		if (!in->ins[i].memsetref)
			continue;
		h = hazard(cg, in->ins[i].memsetref);
		for (int k = 0; k < h->n_readers && !seen; k++)
			seen = strcmp(h->readers[k], in->name) == 0;
		if (!seen) {
			lm_grow(&h->readers, &h->cap_readers, h->n_readers + 1,
				sizeof *h->readers);
			h->readers[h->n_readers++] = lm_xstrdup(in->name);
		}
	}
	for (int i = 0; i < in->n_outs; i++) {
		cg_hazard *h;
		if (!in->outs[i].memsetref)
			continue;
		h = hazard(cg, in->outs[i].memsetref);
		free(h->writer);
		h->writer = lm_xstrdup(in->name);
		for (int k = 0; k < h->n_readers; k++)
			free(h->readers[k]);
		h->n_readers = 0;
	}
	/* a dependency on itself (in-place ops) is not one */
	for (int i = 0; i < in->n_deps; i++)
		if (strcmp(in->deps[i], in->name) == 0) {
			lm_inst_remove_dep(in, 0, i);
			i--;
		}
	in->has_dependencies = in->n_deps > 0;
	lp_ir_block_append(cg->blk, in);
	lm_strmap_put(&cg->inst_names, cg->blk->insts[cg->blk->n_insts - 1].name,
		      (void *)1);
	cg->n_insts_made++;
}

/* Forget every recorded access (after a join of all engines). */
void lp_cg_hazards_reset(lp_cg *cg)
{
	size_t pos = 0;
	const char *key;
	void *val;
	while (lm_strmap_next(&cg->hazards, &pos, &key, &val)) {
		cg_hazard *h = val;
		free(h->writer);
		h->writer = NULL;
		for (int k = 0; k < h->n_readers; k++)
			free(h->readers[k]);
		h->n_readers = 0;
	}
	free(cg->fence);
	cg->fence = NULL;
}

/*
** A fence: *in depends on every recorded writer and reader, and becomes
** the writer of every allocation, seen or first seen later, so every
** later access follows it.
*/
void lp_cg_emit_fence(lp_cg *cg, lm_inst *in)
{
	size_t pos = 0;
	const char *key;
	void *val;
	char *name = lm_xstrdup(in->name);
	while (lm_strmap_next(&cg->hazards, &pos, &key, &val)) {
		cg_hazard *h = val;
		if (h->writer)
			lp_ir_add_dep(in, h->writer);
		for (int k = 0; k < h->n_readers; k++)
			lp_ir_add_dep(in, h->readers[k]);
	}
	lp_cg_emit(cg, in);
	pos = 0;
	while (lm_strmap_next(&cg->hazards, &pos, &key, &val)) {
		cg_hazard *h = val;
		free(h->writer);
		h->writer = lm_xstrdup(name);
		for (int k = 0; k < h->n_readers; k++)
			free(h->readers[k]);
		h->n_readers = 0;
	}
	free(cg->fence);
	cg->fence = name;
}

int lp_cg_add_tensor(lp_cg *cg, const char *name, lm_tensorkind kind,
		     lm_dtype dt, lm_memtype mt, const int64_t *shape,
		     int n_shape, int64_t partitions, int64_t bytes_pp,
		     int placed, int64_t addr, int64_t base)
{
	int64_t dims[2] = { partitions, bytes_pp };
	lm_alloc *a = lm_b_append_alloc(cg->f, name, kind, dt, shape, n_shape);
	int idx = cg->f->n_allocs - 1;
	lm_b_set_addr_space(a, "Shared");
	lm_b_set_file(a, "");
	/* one not placed yet gets its place from lp_cg_place */
	lm_b_append_memloc(a, mt, addr, dims, 2, base)->allocated = placed;
	lm_strmap_put(&cg->tensors, a->name, (void *)(intptr_t)(idx + 1));
	if (!placed && (mt == LM_MT_SB || mt == LM_MT_PSUM)) {
		lm_grow(&cg->unplaced, &cg->cap_unplaced, cg->n_unplaced + 1,
			sizeof *cg->unplaced);
		cg->unplaced[cg->n_unplaced++] = idx;
	}
	return idx;
}

/* getBankId */
int64_t lp_cg_bank_id(int64_t addr)
{
	return addr / LM_PSUM_BANK_BYTES;
}

/* A Memset of value v over a whole [p, n] tensor. */
static void emit_memset(lp_cg *cg, const char *name, const char *alloc,
			lm_dtype dt, int64_t p, int64_t n)
{
	lm_inst in;
	lm_appair ap[2] = { { n, p }, { 1, n } };
	lm_b_init_inst(&in, LM_OP_MEMSET, LM_ENG_POOL, name);
	lm_b_append_ap(&in, LM_B_OUT, alloc, NULL, dt, 0, 0, ap, 2);
	lm_b_set_memset(&in, "Const", 0);
	lm_b_set_memset_value(&in, 0.0);
	lp_cg_emit(cg, &in);
}

/* getActBiasTensor */
const char *lp_cg_zero_bias(lp_cg *cg)
{
	int64_t shape[2] = { cg->n_partitions, 1 };
	int id;
	char *name, *mname;
	if (cg->zero_bias)
		return cg->zero_bias;
	id = cg->lc->next_id++;
	name = lm_xasprintf("COMPILER-GENERATED-zero_bias_act_%d", id);
	mname = lm_xasprintf("COMPILER-GENERATED-memset_zero_bias_%d", id);
	/* the dtype is float32 whatever the activation's data dtype */
	lp_cg_add_tensor(cg, name, LM_TK_INTERNAL, LM_DT_FLOAT32, LM_MT_SB,
			 shape, 2, cg->n_partitions, 4, 0, 0, 0);
	emit_memset(cg, mname, name, LM_DT_FLOAT32, cg->n_partitions, 1);
	free(mname);
	cg->zero_bias = name;
	return name;
}

/* getIdentityMatrix */
const char *lp_cg_identity(lp_cg *cg, lm_dtype dt)
{
	char name[96], buf[160];
	int64_t shape[2] = { 128, 128 };
	lm_appair full[2] = { { 128, 128 }, { 1, 128 } }, diag[1] = { { 1, 128 } };
	lm_inst in;
	int idx;

	snprintf(name, sizeof name, "COMPILER-GENERATED-id.%s",
		 lm_dtype_name(dt));
	idx = (int)(intptr_t)lm_strmap_lookup(&cg->tensors, name) - 1;
	if (idx >= 0)
		return cg->f->allocs[idx].name;
	if (!cg->lc->warned_identity) {
		lp_warn(cg->lc->warn, "%s: Emitting dynamic Identity matrix "
			"generation code, this might affect performance. You "
			"can bypass this by pass in an explicit identity matrix "
			"and use nc_matmul for transpose", cg->path);
		cg->lc->warned_identity = 1;
	}
	idx = lp_cg_add_tensor(cg, name, LM_TK_INTERNAL, dt, LM_MT_SB, shape, 2,
			       128, 128 * lm_dtype_size(dt), 0, 0, 0);
	snprintf(buf, sizeof buf, "%s_memset", name);
	emit_memset(cg, buf, name, dt, 128, 128);
	/* out[p, e] = (e - p != 0) ? out[p, e] : 1.0 */
	snprintf(buf, sizeof buf, "%s=IDAffineSelect(mask,fill=1)", name);
	lm_b_init_inst(&in, LM_OP_AFFINESELECT, LM_ENG_POOL, buf);
	lm_b_append_ap(&in, LM_B_IN, name, NULL, dt, 0, 0, full, 2);
	lm_b_append_ap(&in, LM_B_OUT, name, NULL, dt, 0, 0, full, 2);
	lm_b_set_alu(&in, LM_ALU_NOT_EQUAL);
	lm_b_set_fill(&in, 1.0);
	lm_b_set_pattern(&in, 0, -1, diag, 1);
	lp_cg_emit(cg, &in);
	return cg->f->allocs[idx].name;
}

/* One PSUM bank of float32 for transposes into SBUF. */
const char *lp_cg_transpose_psum(lp_cg *cg)
{
	int64_t shape[2] = { 128, LM_PSUM_BANK_BYTES / 4 };
	if (cg->transpose_psum)
		return cg->transpose_psum;
	cg->transpose_psum = lm_xasprintf("COMPILER-GENERATED-transpose_psum_%d",
					  cg->lc->next_id++);
	lp_cg_add_tensor(cg, cg->transpose_psum, LM_TK_INTERNAL, LM_DT_FLOAT32,
			 LM_MT_PSUM, shape, 2, 128, LM_PSUM_BANK_BYTES, 0, 0, 0);
	return cg->transpose_psum;
}

/* Names of a list of module objects, for uniqueness checks. */
static void name_set(lm_strmap *s, const void *base, int n, size_t size,
		     size_t name_off)
{
	for (int i = 0; i < n; i++) {
		char *const *p = (char *const *)((const char *)base +
						 (size_t)i * size + name_off);
		if (*p)
			lm_strmap_put(s, *p, (void *)1);
	}
}

/* The kernel's own DMA queue (its semaphore counts only kernel DMAs). */
const char *lp_cg_queue(lp_cg *cg)
{
	lm_module *m = cg->lc->m;
	lm_strmap sems, queues, insts;
	char *base, *qname, *sname;
	lm_queue *q;

	if (cg->queue)
		return cg->queue;
	lm_strmap_init(&sems);
	lm_strmap_init(&queues);
	lm_strmap_init(&insts);
	name_set(&sems, m->semaphores, m->n_semaphores, sizeof *m->semaphores,
		 offsetof(lm_semaphore, name));
	name_set(&queues, m->queues, m->n_queues, sizeof *m->queues,
		 offsetof(lm_queue, name));
	for (int i = 0; i < m->n_queues; i++)
		name_set(&insts, m->queues[i].instances,
			 m->queues[i].n_instances, sizeof(lm_qinstance),
			 offsetof(lm_qinstance, name));
	base = lm_xasprintf("qNKI_%s", cg->kname ? cg->kname : "kernel");
	qname = lp_ir_unique_name(base, &queues, &insts);
	free(base);
	base = lm_xasprintf("s_nki_%s", cg->kname ? cg->kname : "kernel");
	sname = lp_ir_unique_name(base, &sems, NULL);
	free(base);
	lm_strmap_free(&sems);
	lm_strmap_free(&queues);
	lm_strmap_free(&insts);

	lm_b_append_semaphore(m, sname, 0);
	q = lm_b_append_queue(m, qname);
	lm_b_append_qinstance(q, qname, sname);
	free(sname);
	cg->queue = qname;
	return qname;
}

/* Round up to a multiple of a (a power of two). */
static int64_t align_up(int64_t v, int64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
** Place the tensors whose KLR address left the offsets to the compiler
** (the section 9 identity, the helpers): SBUF tensors after the highest
** placed SBUF byte, PSUM tensors in whole banks after the highest placed
** PSUM bank. Then the budget: SBUF high-water mark and last PSUM bank.
*/
int lp_cg_place(lp_cg *cg)
{
	lm_function *f = cg->f;
	int64_t sb_end = 0, ps_end = 0;
	for (int i = 0; i < f->n_allocs; i++) {
		lm_memloc *l = &f->allocs[i].memlocs[0];
		if (f->allocs[i].n_memlocs < 1 || !l->allocated)
			continue;
		if (l->type == LM_MT_SB && l->addr + l->dims[1] > sb_end)
			sb_end = l->addr + l->dims[1];
		if (l->type == LM_MT_PSUM && l->addr + l->dims[1] > ps_end)
			ps_end = l->addr + l->dims[1];
	}
	sb_end = align_up(sb_end, PLACE_ALIGN);
	ps_end = align_up(ps_end, LM_PSUM_BANK_BYTES);
	for (int k = 0; k < cg->n_unplaced; k++) {
		lm_alloc *a = &f->allocs[cg->unplaced[k]];
		lm_memloc *l = &a->memlocs[0];
		if (l->type == LM_MT_SB) {
			l->addr = sb_end;
			sb_end = align_up(sb_end + l->dims[1], PLACE_ALIGN);
			if (l->addr + l->dims[1] > cg->sbuf_bytes)
				return lm_err(cg->err, cg->path, "placement",
					      "kernel SBUF tensors need %lld "
					      "bytes per partition, more than "
					      "the %lld of the arch",
					      (long long)(l->addr + l->dims[1]),
					      (long long)cg->sbuf_bytes);
		} else {
			l->addr = ps_end;
			ps_end = align_up(ps_end + l->dims[1],
					  LM_PSUM_BANK_BYTES);
			if (l->addr + l->dims[1] > (int64_t)LM_PSUM_BANKS *
			    LM_PSUM_BANK_BYTES)
				return lm_err(cg->err, cg->path, "placement",
					      "kernel PSUM tensors need more "
					      "than the %d PSUM banks",
					      LM_PSUM_BANKS);
			l->bank = lp_cg_bank_id(l->addr);
		}
		l->base = 0;
		l->allocated = 1;
	}
	cg->sb_max = 0;
	cg->psum_max_bank = -1;
	for (int i = 0; i < f->n_allocs; i++) {
		lm_memloc *l = &f->allocs[i].memlocs[0];
		if (f->allocs[i].n_memlocs < 1)
			continue;
		if (l->type == LM_MT_SB && l->addr + l->dims[1] > cg->sb_max)
			cg->sb_max = l->addr + l->dims[1];
		if (l->type == LM_MT_PSUM && l->dims[1] > 0) {
			int64_t last = lp_cg_bank_id(l->addr + l->dims[1] - 1);
			if (last > cg->psum_max_bank)
				cg->psum_max_bank = last;
		}
	}
	return 0;
}

/*
** dmablk.c -- DMA blocks: what the preparation of a function adds for
** DMATrigger, DMABlock and the queue switches, and the triggers' fire
** counters at run time.
**
** A DMABlock is an instruction of a function block whose body holds its
** descriptors; preparation flattens the body right after it (machine.c)
** and keeps both out of every engine's stream. A DMATrigger names its
** blocks (dma_blocks); each issue fires the next one, round robin, on
** the queue instance active at the trigger (sched.c runs the descriptors
** there). A SwitchQueueInstance (unless no_rearm) and a
** ResetQueueInstance set the fire counters of the triggers of their
** queue back to 0, each engine for its own triggers where it passes the
** switch in program order. docs/simulator.md, "DMA blocks".
*/
#include "common.h"
#include "sim_int.h"

#include "enumtab.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *S(const char *s)
{
	return s ? s : "";
}

int ls_op_is_desc(lm_opcode op)
{
	return op == LM_OP_DESC_COPY || op == LM_OP_DESC_CCE ||
	       op == LM_OP_DESC_TRANSPOSE || op == LM_OP_DESC_REPLICATE;
}

static ls_sdq *dq_of(ls_sinst *si)
{
	if (!si->dq) {
		si->dq = lm_xcalloc(1, sizeof *si->dq);
		si->dq->trig = -1;
		si->dq->n_valid = -1;
	}
	return si->dq;
}

ls_sdq *ls_dmablk_dq(ls_sinst *si)
{
	return dq_of(si);
}

int ls_op_is_indirect(lm_opcode op)
{
	return op == LM_OP_INDIRECTLOAD || op == LM_OP_GATHER ||
	       op == LM_OP_INDIRECTCOPY;
}

lm_aluop ls_dmablk_cce_op(const lm_inst *in)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "op") : NULL;
	const char *name = NULL;
	if (cJSON_IsString(v))
		name = v->valuestring;
	else if (cJSON_IsNumber(v))
		name = lm_enum_name(LM_ET_AluOpType, (int64_t)v->valuedouble);
	else if (!v || cJSON_IsNull(v))
		return LM_ALU_BYPASS;
	return name ? lm_aluop_parse(name) : LM_ALU_INVALID;
}

int ls_dma_enum(const lm_inst *in, const char *key, int et)
{
	lm_enumtype t = (lm_enumtype)et;
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, key) : NULL;
	int64_t o;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsString(v) && !lm_enum_parse(t, v->valuestring, &o))
		return (int)o;
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    v->valuedouble < 65536 && v->valuedouble == (int)v->valuedouble &&
	    lm_enum_name(t, (int64_t)v->valuedouble))
		return (int)v->valuedouble;
	return -1;
}

int ls_dma_constants(const lm_inst *in, const char *key, float *out,
		     int cap)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, key) : NULL;
	int n = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return -1;
	for (const cJSON *c = v->child; c; c = c->next) {
		if (!cJSON_IsNumber(c) || n >= cap)
			return -1;
		out[n++] = (float)c->valuedouble;
	}
	return n;
}

/* The source axis at each destination position of TransposeOps t
** (None: the identity), t in 0..13. */
static const signed char transpose_perm[14][4] = {
	{ 0, 1, 2, 3 }, { 0, 1, 3, 2 }, { 0, 3, 1, 2 }, { 0, 2, 3, 1 },
	{ 1, 0, 2, 3 }, { 1, 2, 0, 3 }, { 1, 2, 3, 0 }, { 2, 3, 0, 1 },
	{ 2, 3, 1, 0 }, { 2, 0, 1, 3 }, { 3, 0, 1, 2 }, { 3, 1, 2, 0 },
	{ 3, 2, 1, 0 }, { 3, 2, 0, 1 },
};

const signed char *ls_dma_perm(int t)
{
	return t >= 0 && t < 14 ? transpose_perm[t] : NULL;
}

void ls_dmablk_body(ls_sinst *si, int end)
{
	dq_of(si)->end = end;
}

void ls_dmablk_free(ls_sinst *si)
{
	if (!si->dq)
		return;
	free(si->dq->blocks);
	free(si->dq->idx);
	free(si->dq);
	si->dq = NULL;
}

static void set_fault(ls_sinst *si, char *msg)
{
	if (si->fault)
		free(msg);
	else
		si->fault = msg;
}

/* Does the no_rearm of switch in say so (true or 1; an affine form is
** refused by ls_check_module)? */
static int is_no_rearm(const lm_inst *in)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "no_rearm") : NULL;
	return cJSON_IsTrue(v) || (cJSON_IsNumber(v) && v->valuedouble != 0);
}

/* The blocks trigger t (index ti of sf) fires: resolved through the map
** of the function's DMABlocks, each block's queue the trigger's. */
static void prep_trigger(ls_machine *mc, ls_sfunc *sf, int ti,
			 const lm_strmap *blocks)
{
	ls_sinst *si = &sf->insts[ti];
	const lm_inst *in = si->in;
	ls_sdq *dq = dq_of(si);
	ls_strig *tr;

	dq->blocks = lm_xcalloc((size_t)in->n_dma_blocks + 1, sizeof(int));
	for (int i = 0; i < in->n_dma_blocks; i++) {
		int b = (int)(intptr_t)lm_strmap_lookup(blocks,
							S(in->dma_blocks[i])) - 1;
		ls_sinst *bs;
		if (b < 0) {
			set_fault(si, lm_xasprintf("dma_blocks '%s' names no "
				"DMABlock of the function",
				S(in->dma_blocks[i])));
			return;
		}
		bs = &sf->insts[b];
		if (bs->queue < 0)
			bs->queue = si->queue; /* its queue: its triggers' */
		else if (bs->queue != si->queue) {
			set_fault(si, lm_xasprintf("dma_blocks '%s' is a DMA "
				"block of queue '%s', not of the trigger's "
				"queue '%s'", S(in->dma_blocks[i]),
				S(mc->queues[bs->queue].name), S(in->queue)));
			return;
		}
		dq->blocks[dq->n_blocks++] = b;
	}
	if (!dq->n_blocks)
		set_fault(si, lm_xasprintf("DMATrigger '%s' fires no DMA block "
			"(dma_blocks is empty)", S(in->name)));
	if (si->queue < 0)
		set_fault(si, lm_xasprintf("queue '%s' is unknown",
					   S(in->queue)));
	lm_grow(&mc->trigs, &mc->cap_trigs, mc->n_trigs + 1,
		sizeof *mc->trigs);
	tr = &mc->trigs[mc->n_trigs];
	tr->queue = si->queue;
	tr->eng = si->eng;
	dq->trig = mc->n_trigs++;
}

void ls_dmablk_prepare(ls_machine *mc, int mi, ls_sfunc *sf)
{
	lm_strmap blocks;
	int n_trig = 0;
	(void)mi;
	lm_strmap_init(&blocks);
	for (int i = 0; i < sf->n; i++) {
		ls_sinst *si = &sf->insts[i];
		if (si->op == LM_OP_DMABLOCK && si->in->name)
			lm_strmap_put(&blocks, si->in->name,
				      (void *)(intptr_t)(i + 1));
		n_trig += si->op == LM_OP_DMATRIGGER;
		if (si->op == LM_OP_DESC_CCE)
			dq_of(si)->alu = ls_dmablk_cce_op(si->in);
		if (si->op == LM_OP_SWITCHQUEUE || si->op == LM_OP_RESETQUEUE)
			dq_of(si)->rewind = si->op == LM_OP_RESETQUEUE ||
					    !is_no_rearm(si->in);
	}
	for (int i = 0; n_trig && i < sf->n; i++)
		if (sf->insts[i].op == LM_OP_DMATRIGGER)
			prep_trigger(mc, sf, i, &blocks);
	lm_strmap_free(&blocks);
}

int ls_dmablk_fire(int64_t *fire, const ls_sinst *si)
{
	const ls_sdq *dq = si->dq;
	int64_t k = fire[dq->trig]++;
	return dq->blocks[k % dq->n_blocks];
}

void ls_dmablk_rewind(const ls_machine *mc, int64_t *fire,
		      const ls_sinst *si, int eng)
{
	if (!si->dq || !si->dq->rewind || si->queue < 0)
		return;
	for (int t = 0; t < mc->n_trigs; t++)
		if (mc->trigs[t].queue == si->queue && mc->trigs[t].eng == eng)
			fire[t] = 0;
}

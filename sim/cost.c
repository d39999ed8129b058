/*
** cost.c -- the cost model: how long an instruction keeps its
** engine, from its shape only (never from values). All figures come from
** the arch table (model/arch.[ch]); docs/cost-model.md explains them.
**
**   Matmult                N * passes(moving dtype) + matmul_fixed   PE cycles
**                          (lm_matmult_pe_cost, shared with linker/mmt.c)
**   ACT / DVE / Pool ops   elements per partition + elem_fixed[eng]  own clock
**   DMA (issuing engine)   dma_issue_cycles                          own clock
**   DMA (transfer)         latency + bytes / bandwidth               ps
**   DMATrigger             dma_issue_cycles; each descriptor a transfer
**   NoOp, Call, Return, SwitchQueueInstance   sem_op_cycles          own clock
**   TensorLoad / TensorSave  sem_op_cycles, + latency on DRAM        own clock
**   CoreBarrier            release barrier_latency_ps after the last arrival
*/
#include "common.h"
#include "sim_int.h"
#include "arch.h"

/* lm_engine of an engine index 0..4. */
static lm_engine engine_of(int eng)
{
	return (lm_engine)(eng + LM_ENG_PE);
}

int64_t ls_cost_dma_ps(const lm_arch *a, int64_t bytes)
{
	double ps = (double)bytes / a->dma_bytes_per_ps;
	int64_t r = (int64_t)ps;
	if ((double)r < ps)
		r++;
	return r;
}

void ls_cost_prepare(const lm_arch *a, ls_sinst *si)
{
	lm_engine e = engine_of(si->eng);
	int64_t cyc = a->sem_op_cycles > 0 ? a->sem_op_cycles : 1;

	si->dma_bytes = 0;
	switch (si->op) {
	case LM_OP_MATMULT:
		if (si->n_ins == 2 && si->n_outs == 1 &&
		    si->ins[0].space && si->ins[1].space && si->outs[0].space) {
			const ls_opnd *st = &si->ins[0], *mv = &si->ins[1];
			lm_matmult_cost mc;
			lm_matmult_pe_cost(a, st->parts, st->free, mv->free,
					   si->outs[0].free, mv->dtype,
					   si->in->is_transpose, &mc);
			si->mm_k = (int)mc.k;
			si->mm_m = (int)mc.m;
			si->mm_n = (int)mc.n;
			cyc = mc.pe_cycles;
		}
		break;
	case LM_OP_ACTIVATION: case LM_OP_TENSORTENSOR: case LM_OP_TENSORSCALAR:
	case LM_OP_TENSORCOPY: case LM_OP_MEMSET: case LM_OP_IOTA:
	case LM_OP_TCDYNSRC: case LM_OP_TCDYNDST:
	case LM_OP_AFFINESELECT: case LM_OP_TSPTR: case LM_OP_RECIPROCAL:
	case LM_OP_STREAMTRANSPOSE: case LM_OP_SELECT: case LM_OP_COPYPRED:
	case LM_OP_RANGESELECT: case LM_OP_EXPONENTIAL: case LM_OP_ACTREADACC:
	case LM_OP_READACTACC: case LM_OP_STREAMSHUFFLE: case LM_OP_DVEREADACC:
	case LM_OP_GATHER: case LM_OP_INDIRECTCOPY:
		if (si->n_outs >= 1 && si->outs[0].space)
			cyc = si->outs[0].free + a->elem_fixed[e];
		else
			cyc = a->elem_fixed[e];
		break;
	case LM_OP_MAX8: case LM_OP_MAXINDEX: case LM_OP_MATCHREPLACE:
	case LM_OP_MIMR: /* stream their data, the last input */
		if (si->n_ins >= 1 && si->ins[si->n_ins - 1].space)
			cyc = si->ins[si->n_ins - 1].free + a->elem_fixed[e];
		else
			cyc = a->elem_fixed[e];
		break;
	case LM_OP_TENSORREDUCE: case LM_OP_BNSTATS:
	case LM_OP_BNAGGR: /* stream their input */
		if (si->n_ins >= 1 && si->ins[0].space)
			cyc = si->ins[0].free + a->elem_fixed[e];
		else
			cyc = a->elem_fixed[e];
		break;
	case LM_OP_DESC_COPY: case LM_OP_DESC_CCE: case LM_OP_DESC_TRANSPOSE:
	case LM_OP_DESC_REPLICATE:
		/* no engine: its transfer is the bytes it writes at the
		   widest dtype of its operands, for each source it reads */
		if (si->n_ins >= 1 && si->n_outs >= 1 && si->outs[0].space) {
			int es = si->outs[0].esize;
			for (int i = 0; i < si->n_ins; i++)
				if (si->ins[i].esize > es)
					es = si->ins[i].esize;
			si->dma_bytes = si->outs[0].count * es * si->n_ins;
		}
		break;
	case LM_OP_DMATRIGGER:
		cyc = a->dma_issue_cycles > 0 ? a->dma_issue_cycles : 1;
		break;
	case LM_OP_DMACOPY: case LM_OP_LOAD: case LM_OP_SAVE:
	case LM_OP_INDIRECTLOAD:
		cyc = a->dma_issue_cycles > 0 ? a->dma_issue_cycles : 1;
		if (si->n_ins >= 1 && si->n_outs >= 1 && si->ins[0].space &&
		    si->outs[0].space) {
			/* a DMACopy in mode CCE reads several sources: as
			   the CCE descriptor, once per source */
			int es = si->outs[0].esize;
			for (int i = 0; i < si->n_ins; i++)
				if (si->ins[i].esize > es)
					es = si->ins[i].esize;
			si->dma_bytes = si->outs[0].count * es * si->n_ins;
			/* an IndirectLoad reads its indices too */
			if (si->dq && si->dq->idx && si->dq->idx->space)
				si->dma_bytes += si->dq->idx->count *
						 si->dq->idx->esize;
		}
		break;
	default:
		break;
	}
	if (cyc < 1)
		cyc = 1;
	si->cycles = cyc;
	si->dur_ps = lm_arch_cycles_ps(a, e, cyc);
	/* a register load / store of DRAM waits for the memory's latency */
	if ((si->op == LM_OP_TENSORLOAD && si->n_ins >= 1 &&
	     si->ins[0].space == LS_SP_DRAM) ||
	    (si->op == LM_OP_TENSORSAVE && si->n_outs >= 1 &&
	     si->outs[0].space == LS_SP_DRAM))
		si->dur_ps += a->dma_latency_ps;
}

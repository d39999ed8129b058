/*
** engacc.c -- the reduction registers of an engine: per core and engine
** one float32 register per partition, which Activation (acc) and
** Exponential (reduce_cmd) clear and add row sums into, and which a
** second output of theirs or an ActivationReadAccumulator reads out.
** docs/semantics.md ("The accumulator registers") has the rules.
**
** The registers live from one instruction to the next of the engine; an
** engine runs its instructions in order, so updating them when an
** instruction starts is the order the engine sees. A register no
** instruction cleared is not read: the run stops.
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"
#include "enumtab.h"

#include <stdlib.h>
#include <string.h>

#define ACC_PARTS 128

struct ls_engacc {
	float v[LS_ENGINES][ACC_PARTS];
	uint8_t set[LS_ENGINES][ACC_PARTS];
};

static ls_engacc *regs_of(ls_machine *mc, int core)
{
	if (!mc->acc[core])
		mc->acc[core] = lm_xcalloc(1, sizeof *mc->acc[core]);
	return mc->acc[core];
}

static const char *cmd_name(int cmd)
{
	const char *s = lm_enum_name(LM_ET_EngineAccumulationType, cmd);
	return s ? s : "?";
}

int ls_acc_update(ls_exec *x, int cmd, const float *y, int64_t P,
		  int64_t fr)
{
	ls_engacc *a;
	float *v;
	uint8_t *set;

	if (cmd == LS_ACC_IDLE)
		return 0;
	if (cmd != LS_ACC_ZERO && cmd != LS_ACC_ACCUMULATE &&
	    cmd != LS_ACC_ZEROACC && cmd != LS_ACC_ADDACC)
		return ls_xfail(x, LM_EINPUT, "accumulator command '%s' is not "
				"modelled", cmd_name(cmd));
	if (P > ACC_PARTS)
		return ls_xfail(x, LM_EINPUT, "the accumulator has %d "
				"registers, one per partition; the data has "
				"%lld partitions", ACC_PARTS, (long long)P);
	a = regs_of(x->mc, x->core);
	v = a->v[x->si->eng];
	set = a->set[x->si->eng];
	for (int64_t p = 0; p < P; p++) {
		const float *row = y + p * fr;
		float s;
		if (cmd == LS_ACC_ZERO || cmd == LS_ACC_ZEROACC) {
			v[p] = 0.0f;
			set[p] = 1;
		}
		if (cmd == LS_ACC_ZERO)
			continue;
		if (!set[p])
			return ls_xfail(x, LM_ECHECK, "acc '%s' adds to the "
					"accumulator register of partition "
					"%lld, which no Zero or ZeroAccumulate "
					"cleared", cmd_name(cmd), (long long)p);
		if (fr < 1)
			continue;
		/* the row's sum from its first element, then into the
		** register: two float32 roundings apart */
		s = row[0];
		for (int64_t j = 1; j < fr; j++)
			s = s + row[j];
		v[p] = v[p] + s;
	}
	return 0;
}

int ls_acc_readout(ls_exec *x, int k, int64_t P)
{
	const ls_opnd *o = &x->si->outs[k];
	ls_engacc *a = regs_of(x->mc, x->core);
	const float *v = a->v[x->si->eng];
	const uint8_t *set = a->set[x->si->eng];
	uint8_t *b;

	if (o->parts != P || o->count != P)
		return ls_xfail(x, LM_EINPUT, "outs[%d] must be [%lld, 1]: one "
				"accumulator register per partition (got %lld "
				"elements over %lld partitions)", k,
				(long long)P, (long long)o->count,
				(long long)o->parts);
	if (P > ACC_PARTS)
		return ls_xfail(x, LM_EINPUT, "the accumulator has %d "
				"registers, one per partition; outs[%d] has "
				"%lld partitions", ACC_PARTS, k, (long long)P);
	if (o->dtype >= LM_DT_INT8 && o->dtype <= LM_DT_UINT64)
		return ls_xfail(x, LM_EINPUT, "outs[%d] reads the float32 "
				"accumulator: integer %s is not modelled", k,
				lm_dtype_name(o->dtype));
	for (int64_t p = 0; p < P; p++)
		if (!set[p])
			return ls_xfail(x, LM_ECHECK, "reads the accumulator "
					"register of partition %lld, which no "
					"Zero or ZeroAccumulate cleared",
					(long long)p);
	b = ls_xstage(x, k);
	ls_f32_to_dtype(o->dtype, v, b, P);
	return 0;
}

/* ActivationReadAccumulator, ReadActivationAccumulator,
** DveReadAccumulator (negated false: simcheck.c refuses true):
** outs[0][p] = the register of partition p of the engine it runs on,
** rounded once to outs[0]'s dtype. */
int ls_exec_readacc(ls_exec *x)
{
	if (x->si->n_ins != 0 || x->si->n_outs != 1)
		return ls_xfail(x, LM_EINPUT, "takes no ins and outs [dst] "
				"(has %d and %d)", x->si->n_ins, x->si->n_outs);
	return ls_acc_readout(x, 0, x->si->outs[0].parts);
}

void ls_acc_reset(ls_machine *mc)
{
	for (int c = 0; c < LS_MAX_CORES; c++)
		if (mc->acc[c])
			memset(mc->acc[c], 0, sizeof *mc->acc[c]);
}

void ls_acc_free(ls_machine *mc)
{
	for (int c = 0; c < LS_MAX_CORES; c++) {
		free(mc->acc[c]);
		mc->acc[c] = NULL;
	}
}

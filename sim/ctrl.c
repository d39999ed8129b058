/*
** ctrl.c -- the program structure at run time: positions inside an
** activation and their order, loop trip counts, and the values an
** instruction takes per iteration (linear forms over the induction
** values, or the expression evaluated with them).
**
** A position is where an engine's cursor stands, or where an instance of
** an instruction was issued: the loops around it (outermost first) with
** the iteration each is in, and the flattened index of the instruction.
** Positions compare along the loops they share, iteration by iteration,
** then by the index of the construct (an instruction, or the header of
** the loop that holds it) where they part: sequential program order. In
** a function with branches a position also counts the blocks entered
** before its own (the block entry it is in), compared first: the order
** stays sequential program order as long as every engine enters the
** same blocks in the same order (sched.c checks it as they go).
*/
#include "common.h"
#include "sim_int.h"

#include <string.h>

int ls_pos_cmp(const ls_sfunc *sf, const ls_pos *a, const ls_pos *b)
{
	if (a->bseq != b->bseq)
		return a->bseq < b->bseq ? -1 : 1;
	for (int j = 0;; j++) {
		int ina = j < a->depth, inb = j < b->depth, xa, xb;
		if (ina && inb && a->loops[j] == b->loops[j]) {
			if (a->ords[j] != b->ords[j])
				return a->ords[j] < b->ords[j] ? -1 : 1;
			continue;
		}
		xa = ina ? sf->loops[a->loops[j]].hdr : a->idx;
		xb = inb ? sf->loops[b->loops[j]].hdr : b->idx;
		/* a cursor at a loop's header has not entered it yet: it
		   comes before every position inside that loop */
		if (xa == xb && ina != inb)
			return ina ? 1 : -1;
		return xa < xb ? -1 : xa > xb;
	}
}

int64_t ls_loop_trips(const ls_sloop *l)
{
	if (l->is_pass)
		return 1;
	if (l->stride <= 0 || l->ub <= l->lb)
		return 0;
	return (l->ub - l->lb - 1) / l->stride + 1;
}

/* The leaf values lm_affine_eval asks for. */
typedef struct leaf_env {
	ls_machine *mc;
	const ls_sfunc *sf;
	int loop;               /* innermost loop around the instruction */
	const int64_t *iv;      /* by depth */
	int core, eng;
	char why[400];          /* a register leaf without a value: why */
} leaf_env;

/* A register's value on the engine evaluating: its 32-bit cell at the
** register's dtype (uint32 unsigned, any other signed). */
static int reg_leaf(leaf_env *L, const char *name, int64_t *v)
{
	int slot = ls_reg_slot(L->mc, L->sf->mod, name);
	uint32_t u;
	if (slot < 0) {
		snprintf(L->why, sizeof L->why, "register '%s' is no register "
			 "allocation of the module", name);
		return -1;
	}
	if (ls_reg_read(L->mc, L->core, L->eng, slot, &u)) {
		char what[sizeof L->why - 8];
		ls_reg_unwritten(L->mc, L->core, L->eng, slot, what,
				 sizeof what);
		snprintf(L->why, sizeof L->why, "reads %s", what);
		return -1;
	}
	*v = L->mc->reg_allocs[slot]->dtype == LM_DT_UINT32 ? (int64_t)u
		: (int64_t)(int32_t)u;
	return 0;
}

static int leaf(void *ctx, int kind, const char *name, int64_t *v)
{
	leaf_env *L = ctx;
	if (kind == LM_AFF_IV) {
		for (int l = L->loop; l >= 0; l = L->sf->loops[l].parent)
			if (L->sf->loops[l].axis &&
			    strcmp(L->sf->loops[l].axis, name) == 0) {
				*v = L->iv[L->sf->loops[l].depth];
				return 0;
			}
		return -1;
	}
	if (kind == LM_AFF_SHARD) {
		*v = L->core;
		return 0;
	}
	if (kind == LM_AFF_REG)
		return reg_leaf(L, name, v);
	return -1;
}

int ls_expr_eval(ls_machine *mc, const ls_sfunc *sf, int loop,
		 const struct lm_affine *e, const int64_t *iv, int core,
		 int eng, int64_t *v, char *err, size_t n)
{
	leaf_env L;
	L.mc = mc;
	L.sf = sf;
	L.loop = loop;
	L.iv = iv;
	L.core = core;
	L.eng = eng;
	L.why[0] = 0;
	if (lm_affine_eval(e, leaf, &L, v, err, n) == 0)
		return 0;
	if (L.why[0])
		snprintf(err, n, "%s", L.why);
	return -1;
}

int ls_dyn_eval(ls_machine *mc, const ls_sfunc *sf, const ls_sinst *si,
		const ls_dyn *d, const int64_t *iv, int core, int eng,
		int64_t *v, char *err, size_t n)
{
	if (d->is_lin) {
		if (lm_affine_lin_eval(&d->lin, iv, v) == 0)
			return 0;
		snprintf(err, n, "integer overflow");
		return -1;
	}
	return ls_expr_eval(mc, sf, si->loop, d->expr, iv, core, eng, v, err,
			    n);
}

/* The slot of an axis for the instruction whose innermost loop is ctx. */
typedef struct slot_env {
	const ls_sfunc *sf;
	int loop;
} slot_env;

static int slot_of(void *ctx, const char *axis)
{
	const slot_env *E = ctx;
	for (int l = E->loop; l >= 0; l = E->sf->loops[l].parent)
		if (E->sf->loops[l].axis && strcmp(E->sf->loops[l].axis,
						   axis) == 0)
			return E->sf->loops[l].depth;
	return -1;
}

int ls_dyn_prepare(const ls_sfunc *sf, const ls_sinst *si, ls_dyn *d,
		   const struct lm_affine *e)
{
	slot_env E;
	E.sf = sf;
	E.loop = si->loop;
	d->expr = NULL;
	d->is_lin = lm_affine_compile_lin(e, slot_of, &E, &d->lin) == 0;
	if (!d->is_lin)
		d->expr = lm_affine_copy(e);
	return 0;
}

const char *ls_dyn_name(const ls_dyn *d)
{
	switch (d->what) {
	case LS_DYN_ACC_FLAG: return "accumulation_flag";
	case LS_DYN_PSUM_ZERO: return "psum_zero_region";
	case LS_DYN_UNINIT: return "can_read_uninit";
	case LS_DYN_IN_OFF:
		return d->reg ? "ins register_ap regref" : "ins symbolic_ap "
		       "addrs[0]";
	default:
		return d->reg ? "outs register_ap regref" : "outs symbolic_ap "
		       "addrs[0]";
	}
}

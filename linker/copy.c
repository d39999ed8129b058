/*
** copy.c -- steps 1 and 2 of the link (seed 3 and 4):
** copy_modules_as_functions clones every core's functions into the new
** module, copy_allocs copies their allocations under unified names
** (inpMap / outMap / memMap), resolve_remote_targets follows each
** remote_local_target view to its producer, and copy_instrs clones every
** instruction, rewriting its references through the per-core maps.
*/
#include "common.h"
#include "lk_int.h"
#include "json.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COLLIDED ((void *)(intptr_t)-1)

/*
** Name census over all cores. Allocations and memory locations: name ->
** first core index + 1, or COLLIDED. Instructions: name -> 1 + an index
** into masks, the set of core indexes declaring the name (bit i: core
** index i); each core also keeps the index of each of its instructions in
** visiting order (lk_core.name_seq), so cloning an instruction finds
** whether its own name is renamed without another lookup.
*/
typedef struct census {
	lm_strmap allocs, memlocs, insts;
	lm_strmap queues;    /* of the core being counted */
	uint64_t *masks;
	int n_masks, cap_masks;
} census;

/* Record one name seen in core index ci. */
static void census_add(lm_strmap *m, const char *name, int ci)
{
	void *v;
	if (!name)
		return;
	if (!lm_strmap_get(m, name, &v))
		lm_strmap_put(m, name, (void *)(intptr_t)(ci + 1));
	else if (v != COLLIDED && (intptr_t)v != ci + 1)
		lm_strmap_put(m, name, COLLIDED);
}

/* Instruction names of blocks, recursing into nested bodies (the order
** clone_blocks visits them: an instruction, then its body). A Loop
** declares no name of its own. */
static void census_blocks(census *cs, lk_core *c, const lm_block *bs, int nb)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			int idx = -1;
			if (in->op == LM_OP_LOOP) {
				census_blocks(cs, c, in->blocks, in->n_blocks);
				continue;
			}
			if ((lm_opcode_uses_queue(in->op) ||
			     in->op == LM_OP_DMATRIGGER) && in->queue &&
			    lm_strmap_put(&cs->queues, in->queue, NULL)) {
				const lm_queue *q = lm_module_find_queue(c->src,
									 in->queue);
				c->sqi_gap += q && q->n_instances >= 1;
			}
			if (in->name) {
				void **v = lm_strmap_ref(&cs->insts, in->name);
				if (!*v) {
					lm_grow(&cs->masks, &cs->cap_masks,
						cs->n_masks + 1, sizeof *cs->masks);
					cs->masks[cs->n_masks] = 0;
					*v = (void *)(intptr_t)++cs->n_masks;
				}
				idx = (int)(intptr_t)*v - 1;
				cs->masks[idx] |= (uint64_t)1 << c->idx;
			}
			lm_grow(&c->name_seq, &c->cap_name_seq, c->n_name_seq + 1,
				sizeof *c->name_seq);
			c->name_seq[c->n_name_seq++] = idx;
			if (in->n_blocks)
				census_blocks(cs, c, in->blocks, in->n_blocks);
		}
}

/* Names colliding across cores (allocations only when copy_allocs runs). */
static void take_census(lk_ctx *x, census *cs, int do_allocs)
{
	lm_strmap_init(&cs->allocs);
	lm_strmap_init(&cs->memlocs);
	lm_strmap_init(&cs->insts);
	{
		/* the biggest core's top-level instruction count: per-core
		   modules mostly use the same names, and an oversized table
		   costs a cache miss per probe */
		long most = 0;
		for (int ci = 0; ci < x->n; ci++) {
			long n = lk_top_insts(x->cores[ci].src->functions,
					      x->cores[ci].src->n_functions);
			most = n > most ? n : most;
		}
		lm_strmap_reserve(&cs->insts, (size_t)most);
	}
	cs->masks = NULL;
	cs->n_masks = cs->cap_masks = 0;
	for (int ci = 0; ci < x->n; ci++) {
		const lm_module *m = x->cores[ci].src;
		lm_strmap_init(&cs->queues);
		x->cores[ci].sqi_gap = 0;
		for (int f = 0; f < m->n_functions; f++) {
			const lm_function *fn = &m->functions[f];
			for (int a = 0; do_allocs && a < fn->n_allocs; a++) {
				census_add(&cs->allocs, fn->allocs[a].name, ci);
				for (int l = 0; l < fn->allocs[a].n_memlocs; l++)
					census_add(&cs->memlocs,
						   fn->allocs[a].memlocs[l].name, ci);
			}
			census_blocks(cs, &x->cores[ci], fn->blocks, fn->n_blocks);
		}
		lm_strmap_free(&cs->queues);
		if (x->opts->skip &
		    LK_SKIP(LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES))
			x->cores[ci].sqi_gap = 0;
	}
}

static void census_free(census *cs)
{
	lm_strmap_free(&cs->allocs);
	lm_strmap_free(&cs->memlocs);
	lm_strmap_free(&cs->insts);
	free(cs->masks);
}

static const char *cpath(const lk_core *c)
{
	return c->src->path && *c->src->path ? c->src->path
		: lm_module_display_name(c->src);
}

static int same_shape(const lm_alloc *a, const lm_alloc *b)
{
	int same = a->n_shape == b->n_shape;
	for (int i = 0; same && i < a->n_shape; i++)
		same = a->tensor_shape[i] == b->tensor_shape[i];
	return same;
}

/* "[128,64]" */
static void shape_text(const lm_alloc *a, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < a->n_shape && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "",
				      (long long)a->tensor_shape[i]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

/* A consumer's input and the producer's output of a name-matched hand-off
** agree in dtype and tensor_shape (the address is not compared: nothing
** gave the two names one address before the link). */
static int check_handoff(lk_ctx *x, int ci, const lm_function *sf,
			 const lm_alloc *in, const lk_handoff *h)
{
	const lk_core *c = &x->cores[ci], *p = &x->cores[h->producer_ci];
	char s0[128], s1[128];
	if (p == c)
		return lm_err(x->err, cpath(c), "", "function %s/allocation %s:"
			      " external input '%s' has the name of an external"
			      " output of its own core %lld (a name-matched "
			      "hand-off joins two cores)", sf->name, in->name,
			      in->name, (long long)c->core);
	if (in->dtype != h->out->dtype)
		return lm_err(x->err, cpath(c), "", "function %s/allocation %s:"
			      " name-matched hand-off '%s': the external input "
			      "of core %lld has dtype %s but the external output "
			      "of core %lld has %s", sf->name, in->name, in->name,
			      (long long)c->core, lm_dtype_name(in->dtype),
			      (long long)p->core, lm_dtype_name(h->out->dtype));
	if (!same_shape(in, h->out)) {
		shape_text(in, s0, sizeof s0);
		shape_text(h->out, s1, sizeof s1);
		return lm_err(x->err, cpath(c), "", "function %s/allocation %s:"
			      " name-matched hand-off '%s': the external input "
			      "of core %lld has tensor_shape %s but the external "
			      "output of core %lld has %s", sf->name, in->name,
			      in->name, (long long)c->core, s0,
			      (long long)p->core, s1);
	}
	return 0;
}

/* An allocation that is a plain declaration (not a view). */
static int is_decl(const lm_alloc *a)
{
	return !a->alias_of && !a->has_remote;
}

/*
** The outMap / inpMap of the seed's copyAllocs2Inst for hand-offs made by
** name: an ExternalOutput of core p and an ExternalInput of the same name
** of another core c are one tensor -- c's input is p's output. Planned
** before anything is copied (copy_allocs renames by it). A name with two
** external outputs is no hand-off (plan_main_memlocs refuses it). The
** input and the output must agree in dtype and shape.
*/
int plan_handoffs(lk_ctx *x)
{
	lm_strmap outs;      /* output name -> ci + 1 (COLLIDED: twice) */
	int rc = 0;
	lm_strmap_init(&outs);
	for (int ci = 0; ci < x->n; ci++) {
		const lm_module *m = x->cores[ci].src;
		for (int f = 0; f < m->n_functions; f++)
			for (int a = 0; a < m->functions[f].n_allocs; a++) {
				const lm_alloc *sa = &m->functions[f].allocs[a];
				if (lm_tensorkind_is_ext_output(sa->kind) &&
				    is_decl(sa))
					census_add(&outs, sa->name, ci);
			}
	}
	for (int ci = 0; ci < x->n && !rc; ci++) {
		const lm_module *m = x->cores[ci].src;
		for (int f = 0; f < m->n_functions && !rc; f++) {
			const lm_function *sf = &m->functions[f];
			for (int a = 0; a < sf->n_allocs && !rc; a++) {
				const lm_alloc *sa = &sf->allocs[a];
				lk_handoff *h;
				void *v;
				int pci;
				if (!lm_tensorkind_is_ext_input(sa->kind) ||
				    !is_decl(sa) ||
				    !lm_strmap_get(&outs, sa->name, &v) ||
				    v == COLLIDED)
					continue;
				pci = (int)(intptr_t)v - 1;
				h = lm_strmap_lookup(&x->handoffs, sa->name);
				if (!h) {
					const lm_alloc *o = lm_strmap_lookup(
						&x->cores[pci].allocs_by_name,
						sa->name);
					if (!x->hos)
						x->hos = lm_xcalloc(
							(size_t)outs.n + 1,
							sizeof *x->hos);
					h = &x->hos[x->n_hos++];
					h->out = o;
					h->producer_ci = pci;
					lm_strmap_put(&x->handoffs, sa->name, h);
				}
				if ((rc = check_handoff(x, ci, sf, sa, h)) != 0)
					break;
				h->consumer_mask |= 1ull << ci;
				x->n_handoff_inputs++;
			}
		}
	}
	lm_strmap_free(&outs);
	return rc;
}

/* Core c's part in a name-matched hand-off through allocation sa: 1 the
** producer, 2 a consumer, 0 none. */
static int handoff_role(const lk_ctx *x, const lk_core *c,
			const lm_alloc *sa, const lk_handoff **ph)
{
	const lk_handoff *h;
	if (!x->n_hos || !is_decl(sa) ||
	    !(h = lm_strmap_lookup(&x->handoffs, sa->name)))
		return 0;
	*ph = h;
	if (lm_tensorkind_is_ext_output(sa->kind) && h->out == sa)
		return 1;
	if (lm_tensorkind_is_ext_input(sa->kind) &&
	    (h->consumer_mask >> c->idx & 1))
		return 2;
	return 0;
}

/*
** A consumer's input of a name-matched hand-off (the seed's "Replacing
** from inpMap"): its references name the producer's output and its memory
** locations', and the allocation stays as nc<c>.<name>, an Internal
** alias_of view of the output (listed in the module aliases).
*/
static int copy_handoff_input(lk_ctx *x, lk_core *c, const lm_function *sf,
			      lm_alloc *da, const lm_alloc *sa,
			      const lk_handoff *h)
{
	const lk_core *pc = &x->cores[h->producer_ci];
	char *nn = lk_nc(x, c->core, sa->name);
	lk_view *v;
	if (lm_strmap_lookup(&x->census->allocs, nn))
		return lm_err(x->err, cpath(c), "", "function %s/allocation "
			      "%s: name-matched hand-off '%s': its input's "
			      "linked name '%s' is already the name of an "
			      "allocation", sf->name, sa->name, sa->name, nn);
	for (int l = 0; l < sa->n_memlocs; l++)
		if (lm_strmap_lookup(&x->census->memlocs, lk_nc(x, c->core,
				     sa->memlocs[l].name)))
			return lm_err(x->err, cpath(c), "", "function %s/"
				      "allocation %s: name-matched hand-off "
				      "'%s': its input's linked memory location "
				      "name 'nc%lld.%s' is already taken",
				      sf->name, sa->name, sa->name,
				      (long long)c->core, sa->memlocs[l].name);
	lk_set(&da->name, nn);
	da->kind = LM_TK_INTERNAL;
	lk_set(&da->alias_of, h->out->name);
	for (int l = 0; l < sa->n_memlocs; l++) {
		const char *pl = h->out->n_memlocs > 0 ? h->out->memlocs[
			l < h->out->n_memlocs ? l : 0].name : NULL;
		lk_set(&da->memlocs[l].name, lk_nc(x, c->core,
						   sa->memlocs[l].name));
		if (pl)
			lm_strmap_put(&c->memloc_ref, sa->memlocs[l].name,
				      (void *)pl);
	}
	lm_grow(&x->views, &x->cap_views, x->n_views + 1, sizeof *x->views);
	v = &x->views[x->n_views++];
	v->producer = lk_str(x, "%s", h->out->name);
	v->consumer = nn;
	v->producer_core = pc->core;
	v->consumer_core = c->core;
	x->rep->n_name_handoffs++;
	lk_log(x, "copy_allocs: Replacing from inpMap: input %s of core %lld "
	       "-> output %s of core %lld (name-matched hand-off; the input "
	       "stays as %s, alias_of %s)", sa->name, (long long)c->core,
	       h->out->name, (long long)pc->core, nn, h->out->name);
	return 0;
}

/*
** Step 2 for one function: copy its allocations into dst. A name declared
** by more than one core is renamed nc<c>.<name> (memMap); the maps remember
** it for every reference. remote_local_target views are resolved later by
** resolve_remote_targets, once every core's names are known.
*/
int copy_allocs(lk_ctx *x, int ci, lm_function *dst, const lm_function *src)
{
	lk_core *c = &x->cores[ci];
	const census *cs = x->census;
	int do_allocs = !(x->opts->skip & LK_SKIP(LK_STEP_COPY_ALLOCS));
	c->remap_regs = !(x->opts->skip & LK_SKIP(LK_STEP_REMAP_REGISTERS));
	const lk_merge *mg;
	const lk_handoff *ho = NULL;
	int rc, param;
	dst->n_allocs = src->n_allocs;
	dst->allocs = src->n_allocs ? lm_xcalloc((size_t)src->n_allocs,
						 sizeof *dst->allocs) : NULL;
	for (int a = 0; a < src->n_allocs; a++) {
		const lm_alloc *sa = &src->allocs[a];
		lm_alloc *da = &dst->allocs[a];
		lm_alloc_copy(da, sa);
		lm_strmap_put(&c->allocs_by_name, sa->name, (void *)sa);
		x->rep->n_allocs++;
		if (!do_allocs)
			continue;
		switch (handoff_role(x, c, sa, &ho)) {
		case 1:      /* the producer keeps its declared names */
			continue;
		case 2:
			if ((rc = copy_handoff_input(x, c, src, da, sa, ho)))
				return rc;
			continue;
		}
		mg = lm_tensorkind_is_ext_input(sa->kind) ?
			lm_strmap_lookup(&x->merged, sa->name) : NULL;
		if (mg) {
			/* one input of several cores: its declared name, the
			   first declarer's memory location names */
			for (int l = 0; l < sa->n_memlocs &&
				     mg->first->n_memlocs > 0; l++) {
				const lm_memloc *fl = &mg->first->memlocs[
					l < mg->first->n_memlocs ? l : 0];
				if (strcmp(fl->name, sa->memlocs[l].name) == 0)
					continue;
				lm_strmap_put(&c->memloc_ref, sa->memlocs[l].name,
					      (void *)fl->name);
				lk_set(&da->memlocs[l].name, fl->name);
			}
			continue;
		}
		/* a modular link's parameters are the definition's own
		   (nc<d>.<name>): the instances' tensors take the names the
		   netlist gives */
		param = x->net && (lm_tensorkind_is_ext_input(sa->kind) ||
				   lm_tensorkind_is_ext_output(sa->kind));
		if (param ||
		    lm_strmap_lookup(&cs->allocs, sa->name) == COLLIDED) {
			char *nn = lk_nc(x, c->core, sa->name);
			lm_strmap_put(&c->alloc_ref, sa->name, nn);
			lk_set(&da->name, nn);
			c->n_collisions++;
		}
		for (int l = 0; l < sa->n_memlocs; l++) {
			const char *ln = sa->memlocs[l].name;
			if (!param &&
			    lm_strmap_lookup(&cs->memlocs, ln) != COLLIDED)
				continue;
			char *nn = lk_nc(x, c->core, ln);
			lm_strmap_put(&c->memloc_ref, ln, nn);
			lk_set(&da->memlocs[l].name, nn);
		}
	}
	return 0;
}

/*
** The linked name of core ci's (non-view) allocation / memory location.
** Views are in the same maps, but a producer is never a view (chains are
** followed to their root), so this gives the producer's own name.
*/
static const char *self_alloc(const lk_core *c, const char *name)
{
	const char *v = lm_strmap_lookup(&c->alloc_ref, name);
	return v ? v : name;
}

static const char *self_memloc(const lk_core *c, const char *name)
{
	const char *v = lm_strmap_lookup(&c->memloc_ref, name);
	return v ? v : name;
}

/*
** The inpMap of the seed: every remote_local_target view of a consumer core
** resolves to its producer's unified allocation (following chains of views).
** Address identity is checked on each hop. The consumer's
** references are mapped to the producer; the view stays as an alias_of
** allocation without its remote_local_target.
*/
int resolve_remote_targets(lk_ctx *x)
{
	for (int ci = 0; ci < x->n; ci++) {
		lk_core *c = &x->cores[ci];
		for (int f = 0; f < c->src->n_functions; f++) {
			const lm_function *sf = &c->src->functions[f];
			lm_function *df = &x->out->functions[c->first_func + f];
			for (int a = 0; a < sf->n_allocs; a++) {
				const lm_alloc *view = &sf->allocs[a], *cur = view;
				int pci = ci, hops = 0;
				if (!view->has_remote)
					continue;
				while (cur->has_remote) {
					const lm_alloc *p;
					int nci = lk_core_index(x, cur->remote_core);
					if (nci < 0)
						return lm_err(x->err, c->src->path,
							"", "function %s/allocation %s: "
							"remote_local_target producer "
							"'%s' not found: core %lld is "
							"not linked", sf->name,
							view->name, cur->remote_name,
							(long long)cur->remote_core);
					p = lm_strmap_lookup(
						&x->cores[nci].allocs_by_name,
						cur->remote_name);
					if (!p)
						return lm_err(x->err, c->src->path,
							"", "function %s/allocation %s: "
							"remote_local_target producer "
							"'%s' not found in core %lld",
							sf->name, view->name,
							cur->remote_name,
							(long long)cur->remote_core);
					for (int l = 0; l < cur->n_memlocs &&
						     l < p->n_memlocs; l++) {
						const lm_memloc *vl = &cur->memlocs[l];
						const lm_memloc *pl = &p->memlocs[l];
						if (vl->allocated && pl->allocated &&
						    vl->addr != pl->addr)
							return lm_err(x->err,
								c->src->path, "",
								"function %s/allocation"
								" %s: address identity "
								"violated: view '%s' "
								"(core %lld) is at addr "
								"%lld but producer '%s' "
								"(core %lld) is at addr"
								" %lld", sf->name,
								view->name, cur->name,
								(long long)x->cores[pci].core,
								(long long)vl->addr,
								p->name,
								(long long)cur->remote_core,
								(long long)pl->addr);
					}
					if (++hops > 64)
						return lm_err(x->err, c->src->path,
							"", "function %s/allocation %s: "
							"remote_local_target cycle",
							sf->name, view->name);
					cur = p;
					pci = nci;
				}
				/* cur: the root producer in core pci */
				const lk_core *pc = &x->cores[pci];
				const char *root = self_alloc(pc, cur->name);
				lm_strmap_put(&c->alloc_ref, view->name, (void *)root);
				for (int l = 0; l < view->n_memlocs &&
					     cur->n_memlocs > 0; l++) {
					int pl = l < cur->n_memlocs ? l : 0;
					lm_strmap_put(&c->memloc_ref,
						      view->memlocs[l].name,
						      (void *)self_memloc(pc,
							cur->memlocs[pl].name));
				}
				lm_alloc *dv = &df->allocs[a];
				dv->has_remote = 0;
				free(dv->remote_name);
				dv->remote_name = NULL;
				dv->remote_core = 0;
				lk_set(&dv->alias_of, root);
				lm_grow(&x->views, &x->cap_views, x->n_views + 1,
					sizeof *x->views);
				lk_view *v = &x->views[x->n_views++];
				v->producer = lk_str(x, "%s", root);
				v->consumer = lk_str(x, "%s", dv->name);
				v->producer_core = pc->core;
				v->consumer_core = c->core;
				x->rep->n_views++;
			}
		}
	}
	return 0;
}

/* The name to reference for name in core c (a map value or name itself). */
static char *mapped(const lm_strmap *m, char *name)
{
	char *v;
	if (name && m->n && (v = lm_strmap_lookup(m, name)) != NULL)
		return v;
	return name;
}

/* Grow a scratch array of copy_instrs. */
static void *scratch(void *parray, int *cap, int need, size_t elem)
{
	lm_grow(parray, cap, need, elem);
	return *(void **)parray;
}

/*
** Remapped operands: shallow copies of src's operands whose reference
** pointers are swapped for the mapped names (lm_inst_copy then makes the
** deep copy, so each string is duplicated once).
*/
static lm_arg *map_args(const lk_core *c, lm_arg *dst, const lm_arg *src,
			int n)
{
	for (int i = 0; i < n; i++) {
		dst[i] = src[i];
		if (src[i].kind == LM_ARG_IMM)
			continue;
		dst[i].memsetref = mapped(&c->alloc_ref, src[i].memsetref);
		dst[i].memref = mapped(&c->memloc_ref, src[i].memref);
	}
	return n ? dst : NULL;
}

static lm_kv *map_kvs(const lk_core *c, lm_kv *dst, const lm_kv *src, int n)
{
	for (int i = 0; i < n; i++) {
		dst[i].key = mapped(&c->alloc_ref, src[i].key);
		dst[i].value = mapped(&c->alloc_ref, src[i].value);
	}
	return n ? dst : NULL;
}

/* After the copy: the names an instruction carries in JSON (opaque
** operands' references, registers in any operand and in its carried
** keys), renamed with the allocations and memory locations. */
static void map_json_refs(const lk_core *c, lm_inst *in)
{
	lm_inst_rename_tensor_refs(in, &c->alloc_ref, &c->memloc_ref);
	if (c->remap_regs)
		lm_inst_rename_registers(in, &c->alloc_ref);
}

static void clone_blocks(lk_copier *cp, lk_core *c, lm_block *dst,
			 const lm_block *src, int nb);

/* A block's arguments after its storage names: a register (an argument's
** own, an incoming one) through the allocations' map, another incoming
** value through it or the memory locations'. */
static void map_block_args(const lk_core *c, lm_block *b)
{
	const char *v;
	for (int i = 0; i < b->n_args; i++) {
		lm_blockarg *a = &b->args[i];
		if (a->regref && c->remap_regs &&
		    (v = mapped(&c->alloc_ref, a->regref)) != a->regref)
			lk_set(&a->regref, v);
		for (int k = 0; k < a->n_incoming; k++) {
			lm_incoming *x = &a->incoming[k];
			if (x->form == LM_IN_REGREF && !c->remap_regs)
				continue;
			if ((v = mapped(&c->alloc_ref, x->value)) == x->value &&
			    x->form != LM_IN_REGREF)
				v = mapped(&c->memloc_ref, x->value);
			if (v != x->value)
				lk_set(&x->value, v);
		}
	}
}

/* Is the instruction name with census index idx renamed in core c
** (declared by c and by another core)? */
static int idx_renamed(const lk_ctx *x, const lk_core *c, int idx)
{
	uint64_t m;
	if (idx < 0)
		return 0;
	m = x->census->masks[idx];
	return (m >> c->idx & 1) && (m & (m - 1));
}

/*
** Is the dependency name renamed in core c? Dependencies mostly name
** instructions cloned shortly before: a small cache of the latest names
** (by hash) answers those from hot memory; others go to the census.
*/
static int dep_renamed(const lk_ctx *x, lk_core *c, const char *name)
{
	uint64_t h = lm_hash_str(name);
	const lk_recent *r = &c->recent[h & (LK_RECENT - 1)];
	if (r->name && r->hash == h && strcmp(r->name, name) == 0)
		return idx_renamed(x, c, r->idx);
	return idx_renamed(x, c, (int)(intptr_t)lm_strmap_lookup_h(
				   &x->census->insts, name, h) - 1);
}

/* The instruction names of dst's fields other than its dependencies (a
** trigger's DMA blocks, a wait's provenance, a DMA block's trigger) after
** the dependency rule: nc<c>.<name> when the name is declared by several
** cores. */
static void map_inst_names(const lk_ctx *x, lk_core *c, lm_inst *dst)
{
	char buf[LM_LINKED_NAME_MAX + 256], *p;
	for (int k = 0; k < dst->n_dma_blocks + dst->n_wait; k++) {
		char **s = k < dst->n_dma_blocks ? &dst->dma_blocks[k]
			: &dst->wait[k - dst->n_dma_blocks].from;
		size_t n;
		if (!*s || !dep_renamed(x, c, *s))
			continue;
		n = strlen(*s) + 24;
		p = n <= sizeof buf ? buf : lm_xmalloc(n);
		lm_core_scoped(p, c->core, *s);
		lm_inst_set_str(dst, s, p);
		if (p != buf)
			free(p);
	}
	/* a DMA block's trigger, carried as it is */
	cJSON *t = dst->extra ? cJSON_GetObjectItemCaseSensitive(dst->extra,
								 "dma_trigger")
			      : NULL;
	if (cJSON_IsString(t) && dep_renamed(x, c, t->valuestring)) {
		size_t n = strlen(t->valuestring) + 24;
		p = n <= sizeof buf ? buf : lm_xmalloc(n);
		lm_core_scoped(p, c->core, t->valuestring);
		cJSON_SetValuestring(t, p);
		if (p != buf)
			free(p);
	}
}

/* The nested body of src (a Loop's, a DynamicForLoop's, ...) cloned into
** dst's, after dst itself. */
static void clone_body(lk_copier *cp, lk_core *c, lm_inst *dst,
		       const lm_inst *src)
{
	dst->n_blocks = src->n_blocks;
	dst->blocks = src->n_blocks ? lm_xcalloc((size_t)src->n_blocks,
						 sizeof *dst->blocks) : NULL;
	clone_blocks(cp, c, dst->blocks, src->blocks, src->n_blocks);
}

/*
** The seed's fullClone + remap of one instruction of core c: references
** (allocations and memory locations, dependencies, the instruction's own
** name on collision, call targets, kernel functions and argument maps) go
** through the core's maps. A renamed CoreBarrier without a group keeps
** meeting its old name's group. A nested body is cloned the same way,
** after its instruction (the census's order), so the names inside it are
** renamed by the rule of every other name.
*/
static void clone_inst(lk_copier *cp, lk_core *c, lm_inst *dst,
		       const lm_inst *src)
{
	const lk_ctx *x = cp->x;
	lm_inst t = *src;
	int nargs = src->n_ins + src->n_outs;
	t.n_blocks = 0;
	t.blocks = NULL;
	if (src->op == LM_OP_LOOP) {
		lm_inst_copy_packed(dst, &t, &cp->pool);
		clone_body(cp, c, dst, src);
		map_json_refs(c, dst);
		return;
	}
	/* the own name and dependencies: nc<c>.<name> when the name is
	   declared by several cores (formatted into scratch; the packed copy
	   below copies them) */
	{
		int idx = c->name_pos < c->n_name_seq ?
			c->name_seq[c->name_pos++] : -1;
		int rn = idx_renamed(x, c, idx);
		size_t need = rn ? strlen(src->name) + 24 : 0;
		int nd = src->n_deps + src->n_lc_deps;
		char **d = NULL, *p;
		if (nd) {
			/* both lists in one scratch array: deps, then the
			   loop-carried ones */
			d = scratch(&cp->s_strs, &cp->cap_strs_s, nd, sizeof *d);
			for (int i = 0; i < nd; i++) {
				const char *s = i < src->n_deps ? src->deps[i] :
					src->lc_deps[i - src->n_deps];
				int r = s && dep_renamed(x, c, s);
				d[i] = r ? NULL : (char *)s;
				need += r ? strlen(s) + 24 : 0;
			}
			t.deps = src->n_deps ? d : NULL;
			t.lc_deps = src->n_lc_deps ? d + src->n_deps : NULL;
		}
		p = need ? scratch(&cp->s_names, &cp->cap_names, (int)need, 1)
			 : NULL;
		if (rn) {
			t.name = p;
			p = lm_core_scoped(p, c->core, src->name);
			c->n_collisions++;
			if (src->op == LM_OP_COREBARRIER && !src->group)
				t.group = src->name;
		}
		for (int i = 0; i < nd; i++) {
			const char *s = i < src->n_deps ? src->deps[i] :
				src->lc_deps[i - src->n_deps];
			if (!d[i] && s) { /* renamed (NULL kept) */
				d[i] = p;
				p = lm_core_scoped(p, c->core, s);
			}
		}
		if (src->name) {
			uint64_t h = lm_hash_str(src->name);
			lk_recent *r = &c->recent[h & (LK_RECENT - 1)];
			r->hash = h;
			r->name = src->name;
			r->idx = idx;
		}
	}
	if (nargs) {
		lm_arg *a = scratch(&cp->s_args, &cp->cap_args, nargs, sizeof *a);
		t.ins = map_args(c, a, src->ins, src->n_ins);
		t.outs = map_args(c, a + src->n_ins, src->outs, src->n_outs);
	}
	t.target = mapped(&c->funcs, src->target);
	t.func = mapped(&c->funcs, src->func);
	if (src->n_func_args + src->n_func_outs) {
		lm_kv *k = scratch(&cp->s_kvs, &cp->cap_kvs, src->n_func_args +
				   src->n_func_outs, sizeof *k);
		t.func_args = map_kvs(c, k, src->func_args, src->n_func_args);
		t.func_outs = map_kvs(c, k + src->n_func_args, src->func_outs,
				      src->n_func_outs);
	}
	lm_inst_copy_packed(dst, &t, &cp->pool);
	map_json_refs(c, dst);
	map_inst_names(x, c, dst);
	if (src->n_blocks)
		clone_body(cp, c, dst, src);
}

/*
** spare[b]: extra instruction slots to allocate for block b (or NULL);
** head: zeroed slots before block 0's instructions (counted in n_insts).
*/
static void clone_blocks_spare(lk_copier *cp, lk_core *c, lm_block *dst,
			       const lm_block *src, int nb, const int *spare,
			       int head)
{
	for (int b = 0; b < nb; b++) {
		const lm_block *sb = &src[b];
		lm_block *db = &dst[b];
		int h = b == 0 ? head : 0;
		size_t cap = (size_t)sb->n_insts + (size_t)h +
			(spare ? (size_t)spare[b] : 0);
		db->name = sb->name ? lm_xstrdup(sb->name) : NULL;
		db->extra = sb->extra ? cJSON_Duplicate(sb->extra, 1) : NULL;
		lm_block_args_copy(db, sb);
		map_block_args(c, db);
		db->n_insts = sb->n_insts + h;
		db->insts = cap ? lm_xmalloc(cap * sizeof *db->insts) : NULL;
		lm_advise_huge(db->insts, cap * sizeof *db->insts);
		if (h)
			memset(db->insts, 0, (size_t)h * sizeof *db->insts);
		for (int i = 0; i < sb->n_insts; i++)
			clone_inst(cp, c, &db->insts[h + i], &sb->insts[i]);
		cp->n_insts += sb->n_insts;
	}
}

static void clone_blocks(lk_copier *cp, lk_core *c, lm_block *dst,
			 const lm_block *src, int nb)
{
	clone_blocks_spare(cp, c, dst, src, nb, NULL, 0);
}

/*
** The seed's copyInstrs2BB: clone every block and instruction of src into
** dst, each instruction's references rewritten through core ci's maps.
*/
int copy_instrs(lk_copier *cp, int ci, lm_function *dst,
		const lm_function *src)
{
	lk_ctx *x = cp->x;
	lk_core *c = &x->cores[ci];
	int nb = src->n_blocks, *spare = NULL, head = 0;
	dst->n_blocks = nb;
	dst->blocks = nb ? lm_xcalloc((size_t)nb, sizeof *dst->blocks) : NULL;
	if (nb && dst == &x->out->functions[c->first_func]) {
		/* room for step 3, so the passes do not move the arrays: the
		   census counted the switches step 3b will put at the head of
		   the first block (zeroed slots until then, c->sqi_gap), and
		   the completion barrier + Return go at the end of the last */
		spare = lm_xcalloc((size_t)nb, sizeof *spare);
		head = c->sqi_gap;
		if (!(x->opts->skip & LK_SKIP(LK_STEP_FPASS_INSERT_RETURNS)))
			spare[nb - 1] += 2;
	} else if (dst == &x->out->functions[c->first_func]) {
		c->sqi_gap = 0; /* no block: step 3b makes one */
	}
	clone_blocks_spare(cp, c, dst->blocks, src->blocks, nb, spare, head);
	if (spare) {
		c->slack[0] = dst->blocks[0].insts;
		c->slack_cap[0] = dst->blocks[0].n_insts + spare[0];
		c->slack[1] = dst->blocks[nb - 1].insts;
		c->slack_cap[1] = dst->blocks[nb - 1].n_insts + spare[nb - 1];
		free(spare);
	}
	return 0;
}

/* One item of copy_all_instrs: worker clones core ci with its own copier. */
static void copy_core(void *arg, int worker, int ci)
{
	lk_copier *cp = &((lk_copier *)arg)[worker];
	lk_ctx *x = cp->x;
	lk_core *c = &x->cores[ci];
	for (int f = 0; f < c->n_funcs; f++)
		copy_instrs(cp, ci, &x->out->functions[c->first_func + f],
			    &c->src->functions[f]);
}

/* Workers for copy_all_instrs: opts->threads, else one per online CPU
** (one for small links, where a thread costs more than it saves); never
** more than cores to clone or LK_MAX_THREADS. */
static int copy_workers(const lk_ctx *x)
{
	long insts = 0;
	if (x->opts->threads <= 0)
		for (int ci = 0; ci < x->n; ci++)
			insts += lk_top_insts(x->cores[ci].src->functions,
					      x->cores[ci].src->n_functions);
	return lm_worker_count(x->opts->threads, LK_MAX_THREADS, x->n,
			       insts >= 16384);
}

/*
** Clone every core's instructions (copy_instrs), the cores in parallel
** (lm_parallel_for): each core is cloned by one worker with its own
** scratch and pool, and only reads what is shared (the census, the
** sources, the maps). The result does not depend on the number of workers.
*/
static void copy_all_instrs(lk_ctx *x)
{
	lk_copier cps[LK_MAX_THREADS];
	int nw = copy_workers(x);
	lm_json_hooks(); /* cJSON's hooks fixed before any worker uses cJSON */
	memset(cps, 0, sizeof cps);
	for (int t = 0; t < nw; t++)
		cps[t].x = x;
	lm_parallel_for(x->n, nw, copy_core, cps);
	for (int t = 0; t < nw; t++) {
		lk_copier *cp = &cps[t];
		x->rep->n_input_insts += (int)cp->n_insts;
		free(cp->s_args);
		free(cp->s_strs);
		free(cp->s_kvs);
		free(cp->s_names);
		lm_pool_done(&cp->pool);
	}
	x->rep->copy_workers = nw;
}

/*
** Step 1 (seed copyModulesAsFunctions): each core's entry function becomes
** nc<c> (kind regular, neuron_core_id c), its other functions nc<c>.<name>;
** allocations through copy_allocs (step 2, unless skipped: then verbatim),
** instructions through copy_instrs. Instruction names that collide across
** cores are renamed nc<c>.<name> (instruction names are module-wide).
*/
int copy_modules_as_functions(lk_ctx *x)
{
	int do_allocs = !(x->opts->skip & LK_SKIP(LK_STEP_COPY_ALLOCS));
	int total = x->out->n_functions, k, rc = 0;
	char nm[LM_LINKED_NAME_MAX];
	census cs;

	for (int ci = 0; ci < x->n; ci++)
		total += x->cores[ci].src->n_functions;
	x->out->functions = lm_xrealloc(x->out->functions, (size_t)total *
					sizeof *x->out->functions);
	k = x->out->n_functions;
	memset(&x->out->functions[k], 0, (size_t)(total - k) *
	       sizeof *x->out->functions);
	for (int ci = 0; ci < x->n; ci++) {
		lk_core *c = &x->cores[ci];
		c->first_func = k;
		c->n_funcs = c->src->n_functions;
		for (int f = 0; f < c->src->n_functions; f++, k++) {
			const lm_function *sf = &c->src->functions[f];
			lm_function *df = &x->out->functions[k];
			df->name = f == 0 ? lk_str(x, "%s",
						   lm_core_name(nm, c->core))
				: lk_nc(x, c->core, sf->name);
			lm_strmap_put(&c->funcs, sf->name, df->name);
			df->name = lm_xstrdup(df->name);
			df->n_attributes = sf->n_attributes;
			df->attributes = sf->n_attributes ?
				lm_xcalloc((size_t)sf->n_attributes,
					   sizeof *df->attributes) : NULL;
			for (int i = 0; i < sf->n_attributes; i++)
				df->attributes[i] = lm_xstrdup(sf->attributes[i]
							       ? sf->attributes[i] : "");
			df->has_kind = f == 0 ? 1 : sf->has_kind;
			df->kind = f == 0 ? LM_FK_REGULAR : sf->kind;
			df->has_core_id = 1;
			df->neuron_core_id = c->core;
			df->extra = sf->extra ? cJSON_Duplicate(sf->extra, 1) : NULL;
		}
	}
	x->out->n_functions = total;

	if (do_allocs) {
		/* allocs_by_name first: plan_handoffs finds outputs in it */
		for (int ci = 0; ci < x->n; ci++) {
			const lm_module *m = x->cores[ci].src;
			for (int f = 0; f < m->n_functions; f++)
				for (int a = 0; a < m->functions[f].n_allocs; a++)
					lm_strmap_put(&x->cores[ci].allocs_by_name,
						      m->functions[f].allocs[a].name,
						      &m->functions[f].allocs[a]);
		}
		/* a modular link binds instances through arguments: no
		   name-matched hand-off, no input shared by name */
		if (!x->net && (rc = plan_handoffs(x)) != 0)
			return rc;
	}
	if (!x->net &&
	    !(x->opts->skip & LK_SKIP(LK_STEP_BUILD_MAIN_MEMLOCS)) &&
	    (rc = plan_main_memlocs(x)) != 0)
		return rc;
	take_census(x, &cs, do_allocs);
	x->census = &cs;
	for (int ci = 0; ci < x->n && rc == 0; ci++) {
		lk_core *c = &x->cores[ci];
		for (int f = 0; f < c->n_funcs && rc == 0; f++)
			rc = copy_allocs(x, ci,
					 &x->out->functions[c->first_func + f],
					 &c->src->functions[f]);
	}
	if (do_allocs && rc == 0)
		rc = resolve_remote_targets(x);
	if (rc == 0)
		copy_all_instrs(x);
	x->census = NULL;
	census_free(&cs);
	if (rc)
		return rc;
	{
		lm_buf b = LM_BUF_INIT;
		for (int ci = 0; ci < x->n; ci++) {
			x->rep->collisions[ci] = x->cores[ci].n_collisions;
			lm_buf_printf(&b, "%score %lld: %d", ci ? ", " : "",
				      (long long)x->cores[ci].core,
				      x->cores[ci].n_collisions);
		}
		lk_log(x, "copy_modules_as_functions: %d modules -> %d "
		       "functions, %d instructions cloned", x->n,
		       total - 1, x->rep->n_input_insts);
		if (do_allocs)
			lk_log(x, "copy_allocs: %d allocations copied; "
			       "collisions resolved per core (allocations, "
			       "memory locations and instructions renamed "
			       "nc<c>.): %s; remote_local_target views "
			       "resolved (inpMap): %d; name-matched "
			       "hand-offs: %d", x->rep->n_allocs,
			       lm_buf_cstr(&b), x->rep->n_views,
			       x->rep->n_name_handoffs);
		else
			lk_log(x, "copy_allocs: skipped (%d allocations copied "
			       "verbatim)", x->rep->n_allocs);
		lm_buf_free(&b);
	}
	return 0;
}

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

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define COLLIDED ((void *)(intptr_t)-1)

/* Name census over all cores: name -> first core index + 1, or COLLIDED. */
typedef struct census {
	lm_strmap allocs, memlocs, insts;
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

/* Instruction names of blocks, recursing into Loops. */
static void census_blocks(census *cs, const lm_block *bs, int nb, int ci)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in->op == LM_OP_LOOP)
				census_blocks(cs, in->blocks, in->n_blocks, ci);
			else
				census_add(&cs->insts, in->name, ci);
		}
}

/* Names colliding across cores (allocations only when copy_allocs runs). */
static void take_census(lk_ctx *x, census *cs, int do_allocs)
{
	lm_strmap_init(&cs->allocs);
	lm_strmap_init(&cs->memlocs);
	lm_strmap_init(&cs->insts);
	for (int ci = 0; ci < x->n; ci++) {
		const lm_module *m = x->cores[ci].src;
		for (int f = 0; f < m->n_functions; f++) {
			const lm_function *fn = &m->functions[f];
			for (int a = 0; do_allocs && a < fn->n_allocs; a++) {
				census_add(&cs->allocs, fn->allocs[a].name, ci);
				for (int l = 0; l < fn->allocs[a].n_memlocs; l++)
					census_add(&cs->memlocs,
						   fn->allocs[a].memlocs[l].name, ci);
			}
			census_blocks(cs, fn->blocks, fn->n_blocks, ci);
		}
	}
}

static void census_free(census *cs)
{
	lm_strmap_free(&cs->allocs);
	lm_strmap_free(&cs->memlocs);
	lm_strmap_free(&cs->insts);
}

/* Fill core ci's instruction map with the names that collide. */
static void map_insts(lk_ctx *x, census *cs, int ci, const lm_block *bs,
		      int nb)
{
	lk_core *c = &x->cores[ci];
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in->op == LM_OP_LOOP) {
				map_insts(x, cs, ci, in->blocks, in->n_blocks);
			} else if (in->name && lm_strmap_lookup(&cs->insts,
								in->name) == COLLIDED) {
				lm_strmap_put(&c->insts, in->name,
					      lk_nc(x, c->core, in->name));
				c->n_collisions++;
			}
		}
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
	int do_allocs = cs != NULL;
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
		if (lm_strmap_lookup(&cs->allocs, sa->name) == COLLIDED) {
			char *nn = lk_nc(x, c->core, sa->name);
			lm_strmap_put(&c->alloc_self, sa->name, nn);
			lk_set(&da->name, nn);
			c->n_collisions++;
		}
		for (int l = 0; l < sa->n_memlocs; l++) {
			const char *ln = sa->memlocs[l].name;
			if (lm_strmap_lookup(&cs->memlocs, ln) != COLLIDED)
				continue;
			char *nn = lk_nc(x, c->core, ln);
			lm_strmap_put(&c->memloc_self, ln, nn);
			lk_set(&da->memlocs[l].name, nn);
		}
	}
	return 0;
}

/* The linked name of core ci's (non-view) allocation / memory location. */
static const char *self_alloc(const lk_core *c, const char *name)
{
	const char *v = lm_strmap_lookup(&c->alloc_self, name);
	return v ? v : name;
}

static const char *self_memloc(const lk_core *c, const char *name)
{
	const char *v = lm_strmap_lookup(&c->memloc_self, name);
	return v ? v : name;
}

/*
** The inpMap of the seed: every remote_local_target view of a consumer core
** resolves to its producer's unified allocation (following chains of views).
** Address identity (SPEC 2.1) is checked on each hop. The consumer's
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
				lm_strmap_put(&c->alloc_view, view->name, (void *)root);
				for (int l = 0; l < view->n_memlocs &&
					     cur->n_memlocs > 0; l++) {
					int pl = l < cur->n_memlocs ? l : 0;
					lm_strmap_put(&c->memloc_view,
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

/* Reference rewriting: view first, then collision rename. */
static void ref_alloc(const lk_core *c, char **p)
{
	const char *v;
	if (!*p)
		return;
	if ((v = lm_strmap_lookup(&c->alloc_view, *p)) != NULL ||
	    (v = lm_strmap_lookup(&c->alloc_self, *p)) != NULL)
		lk_set(p, v);
}

static void ref_memloc(const lk_core *c, char **p)
{
	const char *v;
	if (!*p)
		return;
	if ((v = lm_strmap_lookup(&c->memloc_view, *p)) != NULL ||
	    (v = lm_strmap_lookup(&c->memloc_self, *p)) != NULL)
		lk_set(p, v);
}

/* Rewrite a string member of an opaque operand's JSON object. */
static void ref_json(cJSON *o, const char *key, const lk_core *c, int is_loc)
{
	cJSON *j = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	char *s;
	if (!cJSON_IsString(j))
		return;
	s = lm_xstrdup(j->valuestring);
	if (is_loc)
		ref_memloc(c, &s);
	else
		ref_alloc(c, &s);
	if (strcmp(s, j->valuestring) != 0)
		cJSON_SetValuestring(j, s);
	free(s);
}

static void remap_args(const lk_core *c, lm_arg *as, int n)
{
	for (int i = 0; i < n; i++) {
		lm_arg *a = &as[i];
		if (a->kind == LM_ARG_IMM)
			continue;
		ref_alloc(c, &a->memsetref);
		ref_memloc(c, &a->memref);
		if (a->kind == LM_ARG_OPAQUE) {
			ref_json(a->extra, "memsetref", c, 0);
			ref_json(a->extra, "memref", c, 1);
		}
	}
}

/* Clone-side remap of one instruction (already a copy) of core c. */
static void remap_inst(const lk_core *c, lm_inst *in)
{
	const char *v;
	if (in->op == LM_OP_LOOP) {
		for (int b = 0; b < in->n_blocks; b++)
			for (int i = 0; i < in->blocks[b].n_insts; i++)
				remap_inst(c, &in->blocks[b].insts[i]);
		return;
	}
	if (in->name && (v = lm_strmap_lookup(&c->insts, in->name)) != NULL) {
		/* a renamed barrier keeps meeting its group */
		if (in->op == LM_OP_COREBARRIER && !in->group)
			in->group = in->name;
		else
			free(in->name);
		in->name = lm_xstrdup(v);
	}
	for (int i = 0; i < in->n_deps; i++)
		if ((v = lm_strmap_lookup(&c->insts, in->deps[i])) != NULL)
			lk_set(&in->deps[i], v);
	remap_args(c, in->ins, in->n_ins);
	remap_args(c, in->outs, in->n_outs);
	if (in->target && (v = lm_strmap_lookup(&c->funcs, in->target)) != NULL)
		lk_set(&in->target, v);
	if (in->func && (v = lm_strmap_lookup(&c->funcs, in->func)) != NULL)
		lk_set(&in->func, v);
	for (int i = 0; i < in->n_func_args; i++) {
		if (in->func_args[i].key)
			lk_set(&in->func_args[i].key,
			       self_alloc(c, in->func_args[i].key));
		ref_alloc(c, &in->func_args[i].value);
	}
	for (int i = 0; i < in->n_func_outs; i++) {
		if (in->func_outs[i].key)
			lk_set(&in->func_outs[i].key,
			       self_alloc(c, in->func_outs[i].key));
		ref_alloc(c, &in->func_outs[i].value);
	}
}

/*
** The seed's copyInstrs2BB: clone every block and instruction of src into
** dst and rewrite the clone's references through core ci's maps.
*/
int copy_instrs(lk_ctx *x, int ci, lm_function *dst, const lm_function *src)
{
	const lk_core *c = &x->cores[ci];
	dst->n_blocks = src->n_blocks;
	dst->blocks = src->n_blocks ? lm_xcalloc((size_t)src->n_blocks,
						 sizeof *dst->blocks) : NULL;
	for (int b = 0; b < src->n_blocks; b++) {
		const lm_block *sb = &src->blocks[b];
		lm_block *db = &dst->blocks[b];
		db->name = sb->name ? lm_xstrdup(sb->name) : NULL;
		db->extra = sb->extra ? cJSON_Duplicate(sb->extra, 1) : NULL;
		db->n_insts = sb->n_insts;
		db->insts = sb->n_insts ? lm_xmalloc((size_t)sb->n_insts *
						     sizeof *db->insts) : NULL;
		for (int i = 0; i < sb->n_insts; i++) {
			lm_inst_copy(&db->insts[i], &sb->insts[i]);
			remap_inst(c, &db->insts[i]);
		}
		x->rep->n_input_insts += sb->n_insts;
	}
	return 0;
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
			df->name = f == 0 ? lk_str(x, "nc%lld", (long long)c->core)
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

	take_census(x, &cs, do_allocs);
	x->census = do_allocs ? &cs : NULL;
	for (int ci = 0; ci < x->n && rc == 0; ci++) {
		lk_core *c = &x->cores[ci];
		for (int f = 0; f < c->n_funcs; f++)
			copy_allocs(x, ci, &x->out->functions[c->first_func + f],
				    &c->src->functions[f]);
		for (int f = 0; f < c->n_funcs; f++)
			map_insts(x, &cs, ci, c->src->functions[f].blocks,
				  c->src->functions[f].n_blocks);
	}
	if (do_allocs)
		rc = resolve_remote_targets(x);
	for (int ci = 0; ci < x->n && rc == 0; ci++) {
		lk_core *c = &x->cores[ci];
		for (int f = 0; f < c->n_funcs; f++)
			copy_instrs(x, ci, &x->out->functions[c->first_func + f],
				    &c->src->functions[f]);
	}
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
			       "resolved (inpMap): %d", x->rep->n_allocs,
			       lm_buf_cstr(&b), x->rep->n_views);
		else
			lk_log(x, "copy_allocs: skipped (%d allocations copied "
			       "verbatim)", x->rep->n_allocs);
		lm_buf_free(&b);
	}
	return 0;
}

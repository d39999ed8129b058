/*
** memlocs.c -- steps 4 and 5 of the link (seed 5b-5d): build_main_memlocs
** gathers the external I/O into main and unifies an external input declared
** by several cores, build_main_aliases lists the producer-out -> consumer-in
** pairs, fix_output_kind demotes outputs that another core reads.
*/
#include "common.h"
#include "lk_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One external allocation of a core (position in the out module). */
typedef struct ext_ref {
	int ci, f, a;        /* core index, function offset, allocation */
	const lm_alloc *src;
	int group;           /* index of the first declarer of the name */
	int n_group;         /* declarers (on the first one) */
} ext_ref;

static const char *srcpath(const lk_core *c)
{
	return c->src->path && *c->src->path ? c->src->path
		: lm_module_display_name(c->src);
}

static void shape_str(const lm_alloc *a, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < a->n_shape && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "",
				      (long long)a->tensor_shape[i]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

/* Do two declarations of one external input agree? Fills err if not. */
static int check_agree(lk_ctx *x, const ext_ref *r0, const ext_ref *r)
{
	const lm_alloc *a = r0->src, *b = r->src;
	const lk_core *c0 = &x->cores[r0->ci], *c = &x->cores[r->ci];
	const lm_function *sf = &c->src->functions[r->f];
	char s0[128], s1[128];
	int same = a->n_shape == b->n_shape;
	for (int i = 0; same && i < a->n_shape; i++)
		same = a->tensor_shape[i] == b->tensor_shape[i];
	if (a->dtype != b->dtype)
		return lm_err(x->err, srcpath(c), "", "function %s/allocation %s:"
			      " external input '%s' is declared by core %lld and "
			      "core %lld with different dtype (%s vs %s)",
			      sf->name, b->name, b->name, (long long)c0->core,
			      (long long)c->core, lm_dtype_name(a->dtype),
			      lm_dtype_name(b->dtype));
	if (!same) {
		shape_str(a, s0, sizeof s0);
		shape_str(b, s1, sizeof s1);
		return lm_err(x->err, srcpath(c), "", "function %s/allocation %s:"
			      " external input '%s' is declared by core %lld and "
			      "core %lld with different tensor_shape (%s vs %s)",
			      sf->name, b->name, b->name, (long long)c0->core,
			      (long long)c->core, s0, s1);
	}
	for (int l = 0; l < a->n_memlocs && l < b->n_memlocs; l++)
		if (a->memlocs[l].allocated && b->memlocs[l].allocated &&
		    a->memlocs[l].addr != b->memlocs[l].addr)
			return lm_err(x->err, srcpath(c), "", "function %s/"
				      "allocation %s: external input '%s' is "
				      "declared by core %lld and core %lld with "
				      "different address (%lld vs %lld)", sf->name,
				      b->name, b->name, (long long)c0->core,
				      (long long)c->core,
				      (long long)a->memlocs[l].addr,
				      (long long)b->memlocs[l].addr);
	return 0;
}

/* Global rename (linked name -> unified name) of the merged inputs. */
typedef struct renames {
	lm_strmap allocs, memlocs;
} renames;

static void rn(const lm_strmap *m, char **p)
{
	const char *v;
	if (*p && (v = lm_strmap_lookup(m, *p)) != NULL)
		lk_set(p, v);
}

static void rn_json(const lm_strmap *m, cJSON *o, const char *key)
{
	cJSON *j = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	const char *v;
	if (cJSON_IsString(j) && (v = lm_strmap_lookup(m, j->valuestring)))
		cJSON_SetValuestring(j, v);
}

static void rename_args(const renames *r, lm_arg *as, int n)
{
	for (int i = 0; i < n; i++) {
		rn(&r->allocs, &as[i].memsetref);
		rn(&r->memlocs, &as[i].memref);
		if (as[i].kind == LM_ARG_OPAQUE) {
			rn_json(&r->allocs, as[i].extra, "memsetref");
			rn_json(&r->memlocs, as[i].extra, "memref");
		}
	}
}

static void rename_inst(lk_ctx *x, int ci, lm_inst *in, void *arg)
{
	const renames *r = arg;
	(void)x;
	(void)ci;
	rename_args(r, in->ins, in->n_ins);
	rename_args(r, in->outs, in->n_outs);
	for (int i = 0; i < in->n_func_args; i++)
		rn(&r->allocs, &in->func_args[i].value);
	for (int i = 0; i < in->n_func_outs; i++)
		rn(&r->allocs, &in->func_outs[i].value);
}

/* Apply the renames to every reference of the out module. */
static void apply_renames(lk_ctx *x, const renames *r)
{
	lm_module *o = x->out;
	for (int f = 0; f < o->n_functions; f++) {
		lm_function *fn = &o->functions[f];
		for (int a = 0; a < fn->n_allocs; a++)
			rn(&r->allocs, &fn->allocs[a].alias_of);
		lk_walk_blocks(x, -1, fn->blocks, fn->n_blocks, rename_inst,
			       (void *)r);
	}
	for (int i = 0; i < x->n_views; i++) {
		const char *v = lm_strmap_lookup(&r->allocs, x->views[i].producer);
		if (v)
			x->views[i].producer = (char *)v;
	}
}

/*
** Step 4a (seed buildMainMemlocs): main holds the unified external I/O.
** Every ExternalInput / ExternalOutput allocation of the core functions moves
** to main, in core order. An external input declared by several cores
** becomes ONE allocation under its own name (shape, dtype and address must
** agree); the cores' references are rewritten to it. Two cores declaring the
** same external output is an error.
*/
int build_main_memlocs(lk_ctx *x)
{
	lm_module *o = x->out;
	lm_function *mf = &o->functions[0];
	ext_ref *refs = NULL;
	int nr = 0, cap = 0, rc = 0, n_in = 0, n_out = 0, ri = 0;
	lm_strmap first;
	renames r;
	lm_buf shared = LM_BUF_INIT;

	lm_strmap_init(&first);
	lm_strmap_init(&r.allocs);
	lm_strmap_init(&r.memlocs);
	/* the census, by the name each core declared */
	for (int ci = 0; ci < x->n; ci++) {
		const lk_core *c = &x->cores[ci];
		if (c->first_func < 0)
			continue;
		for (int f = 0; f < c->n_funcs; f++) {
			const lm_function *sf = &c->src->functions[f];
			for (int a = 0; a < sf->n_allocs; a++) {
				const lm_alloc *sa = &sf->allocs[a];
				void *v;
				if (!lm_tensorkind_is_ext_input(sa->kind) &&
				    !lm_tensorkind_is_ext_output(sa->kind))
					continue;
				lm_grow(&refs, &cap, nr + 1, sizeof *refs);
				refs[nr] = (ext_ref){ ci, f, a, sa, nr, 1 };
				if (lm_strmap_get(&first, sa->name, &v)) {
					ext_ref *r0 = &refs[(intptr_t)v - 1];
					int both_in = lm_tensorkind_is_ext_input(
						r0->src->kind) &&
						lm_tensorkind_is_ext_input(sa->kind);
					if (!both_in) {
						rc = lm_err(x->err, srcpath(c), "",
							"function %s/allocation %s: "
							"external %s '%s' is also "
							"declared by core %lld",
							sf->name, sa->name,
							lm_tensorkind_is_ext_input(
								sa->kind) ? "input"
								: "output", sa->name,
							(long long)x->cores[r0->ci].core);
						goto done;
					}
					if ((rc = check_agree(x, r0, &refs[nr])) != 0)
						goto done;
					refs[nr].group = r0->group;
					r0->n_group++;
				} else {
					lm_strmap_put(&first, sa->name,
						      (void *)(intptr_t)(nr + 1));
				}
				nr++;
			}
		}
	}
	x->decls = lm_xcalloc((size_t)(nr ? nr : 1), sizeof *x->decls);
	/* the unified names of shared inputs: each core's linked name ->
	   the declared name; memory locations by position */
	for (int i = 0; i < nr; i++) {
		const ext_ref *r0 = &refs[refs[i].group];
		const lm_alloc *da, *d0;
		if (r0->n_group < 2)
			continue;
		da = &o->functions[x->cores[refs[i].ci].first_func +
				   refs[i].f].allocs[refs[i].a];
		d0 = r0->src;
		if (strcmp(da->name, r0->src->name) != 0)
			lm_strmap_put(&r.allocs, lk_str(x, "%s", da->name),
				      lk_str(x, "%s", r0->src->name));
		for (int l = 0; l < da->n_memlocs && d0->n_memlocs > 0; l++) {
			int k = l < d0->n_memlocs ? l : 0;
			if (strcmp(da->memlocs[l].name, d0->memlocs[k].name))
				lm_strmap_put(&r.memlocs, lk_str(x, "%s",
					      da->memlocs[l].name),
					      lk_str(x, "%s", d0->memlocs[k].name));
		}
	}
	/* move: first declarers to main (renamed), other declarers dropped */
	for (int ci = 0; ci < x->n; ci++) {
		const lk_core *c = &x->cores[ci];
		if (c->first_func < 0)
			continue;
		for (int f = 0; f < c->n_funcs; f++) {
			lm_function *df = &o->functions[c->first_func + f];
			int keep = 0;
			for (int a = 0; a < df->n_allocs; a++) {
				lm_alloc *da = &df->allocs[a];
				const ext_ref *ref = NULL;
				/* refs were made in this same order */
				if (ri < nr && refs[ri].ci == ci &&
				    refs[ri].f == f && refs[ri].a == a)
					ref = &refs[ri++];
				if (!ref) {
					df->allocs[keep++] = *da;
					continue;
				}
				const ext_ref *r0 = &refs[ref->group];
				if (ref->group != (int)(ref - refs)) {
					lk_decl *d = lm_strmap_lookup(&x->main_origin,
						r0->src->name);
					if (d)
						d->core_mask |= 1ull << ci;
					lm_alloc_clear(da);
					continue;
				}
				if (r0->n_group > 1) {
					lk_set(&da->name, r0->src->name);
					for (int l = 0; l < da->n_memlocs; l++)
						lk_set(&da->memlocs[l].name,
						       r0->src->memlocs[l].name);
					lm_buf_printf(&shared, "%s%s",
						      shared.size ? ", " : "",
						      da->name);
					x->rep->n_shared_inputs++;
				}
				lk_decl *d = &x->decls[x->n_decls++];
				d->name = lk_str(x, "%s", da->name);
				d->orig = r0->src->name;
				d->core_mask = 1ull << ci;
				lm_strmap_put(&x->main_origin, d->name, d);
				if (lm_tensorkind_is_ext_input(da->kind))
					n_in++;
				else
					n_out++;
				mf->allocs = lm_xrealloc(mf->allocs,
					(size_t)(mf->n_allocs + 1) * sizeof *mf->allocs);
				mf->allocs[mf->n_allocs++] = *da;
			}
			df->n_allocs = keep;
		}
	}
	if (r.allocs.n || r.memlocs.n)
		apply_renames(x, &r);
	x->rep->n_main_allocs = mf->n_allocs;
	lk_log(x, "build_main_memlocs: %d external allocation%s in main (%d "
	       "input%s, %d output%s); %d external input%s declared by "
	       "several cores unified%s%s%s", mf->n_allocs,
	       mf->n_allocs == 1 ? "" : "s", n_in, n_in == 1 ? "" : "s",
	       n_out, n_out == 1 ? "" : "s", x->rep->n_shared_inputs,
	       x->rep->n_shared_inputs == 1 ? "" : "s",
	       shared.size ? " (" : "", lm_buf_cstr(&shared),
	       shared.size ? ")" : "");
done:
	free(refs);
	lm_buf_free(&shared);
	lm_strmap_free(&first);
	lm_strmap_free(&r.allocs);
	lm_strmap_free(&r.memlocs);
	return rc;
}

/*
** Step 4b (seed buildMainAliases): the module `aliases` list every
** producer-out -> consumer-in pair found by resolve_remote_targets:
** {producer, consumer, producer_core, consumer_core}.
*/
int build_main_aliases(lk_ctx *x)
{
	lm_module *o = x->out;
	lm_buf b = LM_BUF_INIT;
	o->has_aliases = 1;
	o->aliases = x->n_views ? lm_xcalloc((size_t)x->n_views,
					     sizeof *o->aliases) : NULL;
	for (int i = 0; i < x->n_views; i++) {
		const lk_view *v = &x->views[i];
		lm_alias *al = &o->aliases[o->n_aliases++];
		al->producer = lm_xstrdup(v->producer);
		al->consumer = lm_xstrdup(v->consumer);
		al->producer_core = v->producer_core;
		al->consumer_core = v->consumer_core;
		if (i < 4)
			lm_buf_printf(&b, "%s%s (core %lld) -> %s (core %lld)",
				      i ? ", " : ": ", v->producer,
				      (long long)v->producer_core, v->consumer,
				      (long long)v->consumer_core);
		else if (i == 4)
			lm_buf_puts(&b, ", ...");
	}
	x->rep->n_aliases = o->n_aliases;
	lk_log(x, "build_main_aliases: %d alias%s (producer-out -> "
	       "consumer-in)%s", o->n_aliases, o->n_aliases == 1 ? "" : "es",
	       lm_buf_cstr(&b));
	lm_buf_free(&b);
	return 0;
}

/*
** Step 5 (seed fixOutputKind): an ExternalOutput that another core reads
** (the producer of a remote_local_target view of a different core) is
** demoted to Internal: it is a hand-off, not a host output of the link.
*/
int fix_output_kind(lk_ctx *x)
{
	lm_strmap byname;
	lm_buf b = LM_BUF_INIT;
	lm_strmap_init(&byname);
	for (int f = 0; f < x->out->n_functions; f++) {
		lm_function *fn = &x->out->functions[f];
		for (int a = 0; a < fn->n_allocs; a++)
			lm_strmap_put(&byname, fn->allocs[a].name, &fn->allocs[a]);
	}
	for (int i = 0; i < x->n_views; i++) {
		const lk_view *v = &x->views[i];
		lm_alloc *p = lm_strmap_lookup(&byname, v->producer);
		if (!p || v->producer_core == v->consumer_core ||
		    !lm_tensorkind_is_ext_output(p->kind))
			continue;
		p->kind = LM_TK_INTERNAL;
		x->rep->n_demoted++;
		lm_buf_printf(&b, "%s%s", b.size ? ", " : " (", p->name);
	}
	if (b.size)
		lm_buf_puts(&b, ")");
	lk_log(x, "fix_output_kind: %d intermediate output%s demoted "
	       "ExternalOutput -> Internal%s", x->rep->n_demoted,
	       x->rep->n_demoted == 1 ? "" : "s", lm_buf_cstr(&b));
	lm_buf_free(&b);
	lm_strmap_free(&byname);
	return 0;
}

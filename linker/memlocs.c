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

/*
** The plan of step 4a, made before step 1 copies anything so that every
** reference is written once: the external I/O census by declared name.
** An external input declared by several cores is merged (shape, dtype and
** address must agree) -- copy_allocs then gives every declarer's copy the
** declared name instead of nc<c>.<name>; two cores declaring one external
** output is an error. Only when build_main_memlocs runs.
*/
int plan_main_memlocs(lk_ctx *x)
{
	ext_ref *refs = NULL;
	int nr = 0, cap = 0, rc = 0;
	lm_strmap first;
	lm_strmap_init(&first);
	for (int ci = 0; ci < x->n && !rc; ci++) {
		const lk_core *c = &x->cores[ci];
		for (int f = 0; f < c->src->n_functions && !rc; f++) {
			const lm_function *sf = &c->src->functions[f];
			for (int a = 0; a < sf->n_allocs && !rc; a++) {
				const lm_alloc *sa = &sf->allocs[a];
				void *v;
				if (!lm_tensorkind_is_ext_input(sa->kind) &&
				    !lm_tensorkind_is_ext_output(sa->kind))
					continue;
				lm_grow(&refs, &cap, nr + 1, sizeof *refs);
				refs[nr] = (ext_ref){ ci, f, a, sa, nr, 1 };
				if (!lm_strmap_get(&first, sa->name, &v)) {
					lm_strmap_put(&first, sa->name,
						      (void *)(intptr_t)(nr + 1));
					nr++;
					continue;
				}
				ext_ref *r0 = &refs[(intptr_t)v - 1];
				if (!lm_tensorkind_is_ext_input(r0->src->kind) ||
				    !lm_tensorkind_is_ext_input(sa->kind))
					rc = lm_err(x->err, srcpath(c), "",
						"function %s/allocation %s: external "
						"%s '%s' is also declared by core "
						"%lld", sf->name, sa->name,
						lm_tensorkind_is_ext_input(sa->kind)
						? "input" : "output", sa->name,
						(long long)x->cores[r0->ci].core);
				else
					rc = check_agree(x, r0, &refs[nr]);
				if (rc)
					break;
				refs[nr].group = r0->group;
				r0->n_group++;
				nr++;
			}
		}
	}
	if (!rc) {
		x->merges = lm_xcalloc((size_t)(nr ? nr : 1), sizeof *x->merges);
		for (int i = 0; i < nr; i++) {
			const ext_ref *r = &refs[i], *r0 = &refs[r->group];
			lk_merge *mg;
			if (r0->n_group < 2)
				continue;
			if (r->group == i) {
				mg = &x->merges[x->n_merges++];
				mg->first = r->src;
				mg->first_ci = r->ci;
				lm_strmap_put(&x->merged, r->src->name, mg);
			}
			mg = lm_strmap_lookup(&x->merged, r->src->name);
			mg->core_mask |= 1ull << r->ci;
		}
	}
	free(refs);
	lm_strmap_free(&first);
	return rc;
}

/*
** Step 4a (seed buildMainMemlocs): main holds the unified external I/O.
** Every ExternalInput / ExternalOutput allocation of the core functions moves
** to main, in core order; an external input several cores declared (merged
** by plan_main_memlocs, all references already name it) is moved once, the
** other declarers' copies dropped.
*/
int build_main_memlocs(lk_ctx *x)
{
	lm_module *o = x->out;
	lm_function *mf = &o->functions[0];
	int n_in = 0, n_out = 0, total = 0;
	lm_buf shared = LM_BUF_INIT;

	for (int ci = 0; ci < x->n; ci++)
		for (int f = 0; x->cores[ci].first_func >= 0 &&
			     f < x->cores[ci].n_funcs; f++)
			total += o->functions[x->cores[ci].first_func + f].n_allocs;
	x->decls = lm_xcalloc((size_t)(total ? total : 1), sizeof *x->decls);
	for (int ci = 0; ci < x->n; ci++) {
		const lk_core *c = &x->cores[ci];
		if (c->first_func < 0)
			continue;
		for (int f = 0; f < c->n_funcs; f++) {
			lm_function *df = &o->functions[c->first_func + f];
			const lm_function *sf = &c->src->functions[f];
			int keep = 0;
			for (int a = 0; a < df->n_allocs; a++) {
				lm_alloc *da = &df->allocs[a];
				const lm_alloc *sa = &sf->allocs[a];
				const lk_merge *mg = NULL;
				lk_decl *d;
				if (!lm_tensorkind_is_ext_input(da->kind) &&
				    !lm_tensorkind_is_ext_output(da->kind)) {
					df->allocs[keep++] = *da;
					continue;
				}
				if (lm_tensorkind_is_ext_input(sa->kind))
					mg = lm_strmap_lookup(&x->merged, sa->name);
				if (mg && mg->first != sa) {
					lm_alloc_clear(da); /* the same input */
					continue;
				}
				d = &x->decls[x->n_decls++];
				d->name = lk_str(x, "%s", da->name);
				d->orig = sa->name;
				d->core_mask = mg ? mg->core_mask : 1ull << ci;
				lm_strmap_put(&x->main_origin, d->name, d);
				if (mg) {
					lm_buf_printf(&shared, "%s%s",
						      shared.size ? ", " : "",
						      da->name);
					x->rep->n_shared_inputs++;
				}
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
	x->rep->n_main_allocs = mf->n_allocs;
	lk_log(x, "build_main_memlocs: %d external allocation%s in main (%d "
	       "input%s, %d output%s); %d external input%s declared by "
	       "several cores unified%s%s%s", mf->n_allocs,
	       mf->n_allocs == 1 ? "" : "s", n_in, n_in == 1 ? "" : "s",
	       n_out, n_out == 1 ? "" : "s", x->rep->n_shared_inputs,
	       x->rep->n_shared_inputs == 1 ? "" : "s",
	       shared.size ? " (" : "", lm_buf_cstr(&shared),
	       shared.size ? ")" : "");
	lm_buf_free(&shared);
	return 0;
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

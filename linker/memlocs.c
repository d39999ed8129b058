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
				/* a name-matched hand-off (plan_handoffs) */
				if (x->n_hos && !sa->alias_of && !sa->has_remote &&
				    lm_strmap_lookup(&x->handoffs, sa->name))
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

/* A hand-off candidate of fix_output_kind: an ExternalOutput that a core
** other than its producer holds a remote_local_target view of. */
typedef struct out_cand {
	lm_alloc *a;
	uint64_t viewers;    /* bit i: core index i holds a view of it */
	uint64_t readers;    /* bit i: core index i (a viewer) reads it */
} out_cand;

typedef struct reader_scan {
	lm_strmap leads;     /* candidate name, or an alias_of chain to one
				-> out_cand */
	lm_strmap funcs;     /* linked function name -> index + 1 */
	int lo, hi;          /* the scanned core's functions [lo, hi) */
	unsigned char *queued; /* per function of the module */
	int *work;           /* functions to scan, in call order */
	int n_work;
	uint64_t bit;        /* the scanned core index's bit */
	int n_left;          /* candidates it views and has not read yet */
} reader_scan;

/* The scanned core reads allocation name. */
static void note_read(reader_scan *r, const char *name)
{
	out_cand *oc = name ? lm_strmap_lookup(&r->leads, name) : NULL;
	if (oc && (oc->viewers & r->bit) && !(oc->readers & r->bit)) {
		oc->readers |= r->bit;
		r->n_left--;
	}
}

/* A Call / NKIKernel of the scanned core reaches function name. */
static void note_call(reader_scan *r, const char *name)
{
	void *v;
	int f;
	if (!name || !lm_strmap_get(&r->funcs, name, &v))
		return;
	f = (int)(intptr_t)v - 1;
	if (f < r->lo || f >= r->hi || r->queued[f])
		return;
	r->queued[f] = 1;
	r->work[r->n_work++] = f;
}

enum { SCAN_ON, SCAN_RETURN, SCAN_DONE };

/*
** The seed's hasRealReaders, over one function of the scanned core, in
** program order up to its first Return (what runs): a real reader reads
** the tensor through an input operand (ins) or passes it to an NKI kernel
** as an argument (func_args); the functions it calls are queued. Returns
** SCAN_DONE once the core read everything it views.
*/
static int scan_reads(reader_scan *r, const lm_block *bs, int nb)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			int rc;
			if (in->op == LM_OP_RETURN)
				return SCAN_RETURN;
			if (in->n_blocks &&
			    (rc = scan_reads(r, in->blocks, in->n_blocks)) !=
			    SCAN_ON)
				return rc;
			if (in->op == LM_OP_CALL)
				note_call(r, in->target);
			if (in->op == LM_OP_NKIKERNEL)
				note_call(r, in->func);
			for (int k = 0; k < in->n_ins; k++)
				if (in->ins[k].kind != LM_ARG_IMM)
					note_read(r, in->ins[k].memsetref);
			for (int k = 0; k < in->n_func_args; k++)
				note_read(r, in->func_args[k].value);
			if (r->n_left == 0)
				return SCAN_DONE;
		}
	return SCAN_ON;
}

/* Bound to the host-boundary output buffer (a memory location of type
** Output)? Then it is a model output of the program. */
static int is_host_boundary(const lm_alloc *a)
{
	for (int l = 0; l < a->n_memlocs; l++)
		if (a->memlocs[l].type == LM_MT_OUTPUT)
			return 1;
	return 0;
}

/* A demoted output has no host output left to be partial: its
** "partial_output" key goes with the ExternalOutput kind (an extra object
** left empty becomes NULL, as the loader keeps it). */
static void drop_partial_output(lm_alloc *a)
{
	if (!a->extra)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(a->extra, "partial_output");
	if (!a->extra->child) {
		cJSON_Delete(a->extra);
		a->extra = NULL;
	}
}

/*
** Step 5 (seed fixOutputKind, hasRealReaders): an ExternalOutput that an
** instruction of another core reads (through that core's
** remote_local_target view, resolved by copy_allocs to the producer; the
** instructions that run: nc<c> and the functions it calls, each up to its
** first Return) is a hand-off, not a host output of the link: it is
** demoted to Internal.
** Kept as ExternalOutput: an output whose views no instruction reads (the
** per-core program hands it to the host, so the linked one does too), and
** a model output -- bound to the host-boundary buffer (memory location
** type Output) -- that another core also reads. Nothing is erased.
*/
int fix_output_kind(lk_ctx *x)
{
	reader_scan r;
	lm_strmap byname, cidx;
	out_cand *cands = NULL;
	int n_cands = 0, cap = 0, n_unread = 0, n_model = 0;
	lm_buf b = LM_BUF_INIT, unread = LM_BUF_INIT, model = LM_BUF_INIT;
	memset(&r, 0, sizeof r);
	lm_strmap_init(&r.leads);
	lm_strmap_init(&r.funcs);
	lm_strmap_init(&byname);
	lm_strmap_init(&cidx);
	for (int f = 0; f < x->out->n_functions; f++) {
		lm_function *fn = &x->out->functions[f];
		for (int a = 0; a < fn->n_allocs; a++)
			lm_strmap_put(&byname, fn->allocs[a].name,
				      &fn->allocs[a]);
	}
	for (int i = 0; i < x->n_views; i++) {
		const lk_view *v = &x->views[i];
		lm_alloc *p = lm_strmap_lookup(&byname, v->producer);
		void *kv;
		int k;
		if (!p || v->producer_core == v->consumer_core ||
		    !lm_tensorkind_is_ext_output(p->kind))
			continue;
		if (lm_strmap_get(&cidx, p->name, &kv)) {
			k = (int)(intptr_t)kv - 1;
		} else {
			lm_grow(&cands, &cap, n_cands + 1, sizeof *cands);
			k = n_cands++;
			cands[k] = (out_cand){ p, 0, 0 };
			lm_strmap_put(&cidx, p->name, (void *)(intptr_t)(k + 1));
		}
		for (int ci = 0; ci < x->n; ci++)
			if (x->cores[ci].core == v->consumer_core)
				cands[k].viewers |= 1ull << ci;
	}
	for (int i = 0; i < n_cands; i++)
		lm_strmap_put(&r.leads, cands[i].a->name, &cands[i]);
	/* names that reach a candidate through alias_of also read it */
	for (int f = 0; n_cands && f < x->out->n_functions; f++) {
		const lm_function *fn = &x->out->functions[f];
		for (int a = 0; a < fn->n_allocs; a++) {
			const lm_alloc *al = &fn->allocs[a];
			const char *t = al->alias_of;
			out_cand *oc = NULL;
			for (int hop = 0; t && !oc && hop < 64; hop++) {
				const lm_alloc *ta;
				oc = lm_strmap_lookup(&r.leads, t);
				ta = oc ? NULL : lm_strmap_lookup(&byname, t);
				t = ta ? ta->alias_of : NULL;
			}
			if (oc)
				lm_strmap_put(&r.leads, al->name, oc);
		}
	}
	/* each viewing core from its entry nc<c>, following its calls */
	r.queued = lm_xcalloc((size_t)x->out->n_functions + 1, 1);
	r.work = lm_xcalloc((size_t)x->out->n_functions + 1, sizeof *r.work);
	for (int f = 0; n_cands && f < x->out->n_functions; f++)
		if (x->out->functions[f].name)
			lm_strmap_put(&r.funcs, x->out->functions[f].name,
				      (void *)(intptr_t)(f + 1));
	for (int ci = 0; ci < x->n; ci++) {
		const lk_core *c = &x->cores[ci];
		r.bit = 1ull << ci;
		r.n_left = 0;
		for (int i = 0; i < n_cands; i++)
			r.n_left += (cands[i].viewers & r.bit) != 0;
		if (!r.n_left || c->first_func < 0 || c->n_funcs < 1)
			continue;
		r.lo = c->first_func;
		r.hi = c->first_func + c->n_funcs;
		memset(r.queued + r.lo, 0, (size_t)c->n_funcs);
		r.n_work = 0;
		r.queued[r.lo] = 1;
		r.work[r.n_work++] = r.lo;
		for (int w = 0; w < r.n_work; w++) {
			const lm_function *fn = &x->out->functions[r.work[w]];
			if (scan_reads(&r, fn->blocks, fn->n_blocks) == SCAN_DONE)
				break;
		}
	}
	free(r.queued);
	free(r.work);
	for (int i = 0; i < n_cands; i++) {
		lm_alloc *p = cands[i].a;
		if (!cands[i].readers) {
			lm_buf_printf(&unread, "%s%s", n_unread++ ? ", " : "",
				      p->name);
			continue;
		}
		if (is_host_boundary(p)) {
			lm_buf_printf(&model, "%s%s", n_model++ ? ", " : "",
				      p->name);
			continue;
		}
		p->kind = LM_TK_INTERNAL;
		drop_partial_output(p);
		x->rep->n_demoted++;
		lm_buf_printf(&b, "%s%s", b.size ? ", " : " (", p->name);
	}
	if (b.size)
		lm_buf_puts(&b, ")");
	if (n_unread || n_model)
		lm_buf_puts(&b, "; kept as host outputs:");
	if (n_unread)
		lm_buf_printf(&b, " %d viewed but not read by another core "
			      "(%s)%s", n_unread, lm_buf_cstr(&unread),
			      n_model ? "," : "");
	if (n_model)
		lm_buf_printf(&b, " %d model output%s (type Output) read by "
			      "another core (%s)", n_model,
			      n_model == 1 ? "" : "s", lm_buf_cstr(&model));
	lk_log(x, "fix_output_kind: %d intermediate output%s demoted "
	       "ExternalOutput -> Internal%s", x->rep->n_demoted,
	       x->rep->n_demoted == 1 ? "" : "s", lm_buf_cstr(&b));
	lm_buf_free(&b);
	lm_buf_free(&unread);
	lm_buf_free(&model);
	free(cands);
	lm_strmap_free(&byname);
	lm_strmap_free(&cidx);
	lm_strmap_free(&r.leads);
	lm_strmap_free(&r.funcs);
	return 0;
}

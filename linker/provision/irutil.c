/*
** irutil.c -- the small IR-building utilities of the kernel provision:
** the warnings list, operands and appends, unique names, walks over
** instructions, the name sets of a module, and adopting a function's names
** into a module. The lowest file of the provision: it calls no other file
** of it.
*/
#include "common.h"
#include "provision_int.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- warnings ----------------------------------------------------------- */

void lp_warn(lp_warnings *w, const char *fmt, ...)
{
	va_list ap;
	lm_buf b = LM_BUF_INIT;
	char tmp[1024];
	if (!w)
		return;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	lm_buf_puts(&b, tmp);
	lm_grow(&w->msgs, &w->cap, w->n + 1, sizeof *w->msgs);
	w->msgs[w->n++] = lm_buf_detach(&b);
}

void lp_warnings_free(lp_warnings *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->n; i++)
		free(w->msgs[i]);
	free(w->msgs);
	memset(w, 0, sizeof *w);
}

/* ---- operands, appends, names ------------------------------------------ */

void lp_ir_block_append(lm_block *b, lm_inst *in)
{
	b->insts = lm_xrealloc(b->insts, (size_t)(b->n_insts + 1) *
			       sizeof *b->insts);
	b->insts[b->n_insts++] = *in;
	memset(in, 0, sizeof *in);
}

int lp_ir_add_alloc(lm_function *f, lm_alloc *a)
{
	f->allocs = lm_xrealloc(f->allocs, (size_t)(f->n_allocs + 1) *
				sizeof *f->allocs);
	f->allocs[f->n_allocs] = *a;
	memset(a, 0, sizeof *a);
	return f->n_allocs++;
}

char *lp_ir_unique_name(const char *name, const lm_strmap *a, const lm_strmap *b)
{
	char *s = lm_xstrdup(name);
	for (int k = 1; (a && lm_strmap_lookup(a, s)) ||
			(b && lm_strmap_lookup(b, s)); k++) {
		free(s);
		s = lm_xasprintf("%s_%d", name, k);
	}
	return s;
}

void lp_ir_add_dep(lm_inst *in, const char *name)
{
	for (int i = 0; i < in->n_deps; i++)
		if (strcmp(in->deps[i], name) == 0)
			return;
	lm_inst_add_dep(in, 0, name, LM_EDGE_FLOW);
}

/* ---- walking instructions ---------------------------------------------- */

void lp_ir_walk(lm_block *bs, int nb, lp_ir_inst_fn fn, void *ud)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			lm_inst *in = &bs[b].insts[i];
			if (in->op != LM_OP_LOOP)
				fn(in, ud);
			if (in->n_blocks)
				lp_ir_walk(in->blocks, in->n_blocks, fn, ud);
		}
}

void lp_ir_walk_loops(lm_block *bs, int nb, lp_ir_inst_fn fn, void *ud)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			lm_inst *in = &bs[b].insts[i];
			fn(in, ud);
			if (in->n_blocks)
				lp_ir_walk_loops(in->blocks, in->n_blocks, fn,
						 ud);
		}
}

void lp_ir_remap(char **s, const lm_strmap *map)
{
	const char *n;
	if (!*s || !(n = lm_strmap_lookup(map, *s)))
		return;
	free(*s);
	*s = lm_xstrdup(n);
}

/* ---- module name sets ------------------------------------------------------ */

static void collect_inst(lm_inst *in, void *ud)
{
	lp_ir_names *n = ud;
	if (in->name)
		lm_strmap_put(&n->insts, in->name, (void *)1);
}

void lp_ir_names_of(lp_ir_names *n, lm_module *m, int skip)
{
	lm_strmap_init(&n->allocs);
	lm_strmap_init(&n->memlocs);
	lm_strmap_init(&n->insts);
	lm_strmap_init(&n->funcs);
	for (int f = 0; f < m->n_functions; f++) {
		lm_function *fn = &m->functions[f];
		if (f == skip)
			continue;
		if (fn->name)
			lm_strmap_put(&n->funcs, fn->name, (void *)1);
		for (int a = 0; a < fn->n_allocs; a++) {
			if (fn->allocs[a].name)
				lm_strmap_put(&n->allocs, fn->allocs[a].name,
					      (void *)1);
			for (int l = 0; l < fn->allocs[a].n_memlocs; l++)
				if (fn->allocs[a].memlocs[l].name)
					lm_strmap_put(&n->memlocs,
						      fn->allocs[a].memlocs[l].name,
						      (void *)1);
		}
		lp_ir_walk(fn->blocks, fn->n_blocks, collect_inst, n);
	}
}

void lp_ir_names_free(lp_ir_names *n)
{
	lm_strmap_free(&n->allocs);
	lm_strmap_free(&n->memlocs);
	lm_strmap_free(&n->insts);
	lm_strmap_free(&n->funcs);
}

/* ---- renaming a function's names ------------------------------------------ */

/* Old name -> new name maps of one function, and the strings they own. */
typedef struct renames {
	lm_strmap allocs, memlocs, insts;
	int n, cap;
	char **owned;
} renames;

static void renames_init(renames *r)
{
	memset(r, 0, sizeof *r);
	lm_strmap_init(&r->allocs);
	lm_strmap_init(&r->memlocs);
	lm_strmap_init(&r->insts);
}

static void renames_free(renames *r)
{
	lm_strmap_free(&r->allocs);
	lm_strmap_free(&r->memlocs);
	lm_strmap_free(&r->insts);
	for (int i = 0; i < r->n; i++)
		free(r->owned[i]);
	free(r->owned);
}

/* Keep s alive until r is freed; returns s. */
static char *own(renames *r, char *s)
{
	lm_grow(&r->owned, &r->cap, r->n + 1, sizeof *r->owned);
	r->owned[r->n++] = s;
	return s;
}

/*
** Rewrite the references of one instruction (a Loop's too): operands,
** the names carried in JSON (opaque operands, registers anywhere:
** lm_inst_rename_json_refs, the rule the link's copy follows), the
** caller side of a nested call's argument maps (the keys are the callee's
** formals), dependencies.
*/
static void rewrite_refs(lm_inst *in, void *ud)
{
	renames *r = ud;
	for (int k = 0; k < 2; k++) {
		lm_arg *args = k ? in->outs : in->ins;
		int n = k ? in->n_outs : in->n_ins;
		for (int i = 0; i < n; i++) {
			lp_ir_remap(&args[i].memsetref, &r->allocs);
			lp_ir_remap(&args[i].memref, &r->memlocs);
		}
	}
	lm_inst_rename_json_refs(in, &r->allocs, &r->memlocs);
	for (int i = 0; i < in->n_func_args; i++)
		lp_ir_remap(&in->func_args[i].value, &r->allocs);
	for (int i = 0; i < in->n_func_outs; i++)
		lp_ir_remap(&in->func_outs[i].value, &r->allocs);
	for (int i = 0; i < in->n_deps; i++)
		lp_ir_remap(&in->deps[i], &r->insts);
}

/* Pick new names for colliding instructions (first pass). */
typedef struct inst_pick {
	lp_ir_names *mod;
	lm_strmap *own_names;
	renames *r;
} inst_pick;

static void pick_inst(lm_inst *in, void *ud)
{
	inst_pick *p = ud;
	if (in->name && lm_strmap_lookup(&p->mod->insts, in->name)) {
		char *nn = own(p->r, lp_ir_unique_name(in->name, &p->mod->insts,
						    p->own_names));
		lm_strmap_put(p->own_names, nn, (void *)1);
		lm_strmap_put(&p->r->insts, own(p->r, lm_xstrdup(in->name)), nn);
	}
}

static void rename_inst(lm_inst *in, void *ud)
{
	lp_ir_remap(&in->name, &((renames *)ud)->insts);
}

static void collect_inst_map(lm_inst *in, void *ud)
{
	if (in->name)
		lm_strmap_put(ud, in->name, (void *)1);
}

/* A CoreBarrier group the codegen named after the function (`F.rest`)
** follows the function's new name. */
typedef struct group_rename {
	const char *old_name, *new_name;
} group_rename;

static void rename_group(lm_inst *in, void *ud)
{
	const group_rename *g = ud;
	size_t n = strlen(g->old_name);
	char *ng;
	if (in->op != LM_OP_COREBARRIER || !in->group ||
	    strncmp(in->group, g->old_name, n) != 0 || in->group[n] != '.')
		return;
	ng = lm_xasprintf("%s%s", g->new_name, in->group + n);
	lm_inst_set_str(in, &in->group, ng);
	free(ng);
}

void lp_ir_adopt_names(lm_module *m, int skip, lm_function *f)
{
	lp_ir_names mod;
	lm_strmap fa, fl, fi;
	renames r;
	inst_pick pick;

	lp_ir_names_of(&mod, m, skip);
	lm_strmap_init(&fa);
	lm_strmap_init(&fl);
	lm_strmap_init(&fi);
	renames_init(&r);
	for (int a = 0; a < f->n_allocs; a++) {
		lm_strmap_put(&fa, f->allocs[a].name, (void *)1);
		for (int l = 0; l < f->allocs[a].n_memlocs; l++)
			lm_strmap_put(&fl, f->allocs[a].memlocs[l].name,
				      (void *)1);
	}
	lp_ir_walk(f->blocks, f->n_blocks, collect_inst_map, &fi);
	for (int a = 0; a < f->n_allocs; a++) {
		lm_alloc *al = &f->allocs[a];
		if (lm_strmap_lookup(&mod.allocs, al->name)) {
			char *nn = own(&r, lp_ir_unique_name(al->name, &mod.allocs,
							  &fa));
			lm_strmap_put(&fa, nn, (void *)1);
			lm_strmap_put(&r.allocs, own(&r, lm_xstrdup(al->name)), nn);
		}
		for (int l = 0; l < al->n_memlocs; l++) {
			lm_memloc *ml = &al->memlocs[l];
			if (lm_strmap_lookup(&mod.memlocs, ml->name)) {
				char *nn = own(&r, lp_ir_unique_name(ml->name,
						&mod.memlocs, &fl));
				lm_strmap_put(&fl, nn, (void *)1);
				lm_strmap_put(&r.memlocs,
					      own(&r, lm_xstrdup(ml->name)), nn);
			}
		}
	}
	pick.mod = &mod;
	pick.own_names = &fi;
	pick.r = &r;
	lp_ir_walk(f->blocks, f->n_blocks, pick_inst, &pick);
	/* references first (they still hold the old strings), then names */
	lp_ir_walk_loops(f->blocks, f->n_blocks, rewrite_refs, &r);
	lp_ir_walk(f->blocks, f->n_blocks, rename_inst, &r);
	for (int a = 0; a < f->n_allocs; a++) {
		for (int l = 0; l < f->allocs[a].n_memlocs; l++)
			lp_ir_remap(&f->allocs[a].memlocs[l].name, &r.memlocs);
		lp_ir_remap(&f->allocs[a].name, &r.allocs);
		/* a view of another core's copy of one of f's own allocations
		   (a sendRecv stage) follows it: that core, lowering alike,
		   renames its copy the same way */
		if (f->allocs[a].has_remote)
			lp_ir_remap(&f->allocs[a].remote_name, &r.allocs);
	}
	if (f->name && lm_strmap_lookup(&mod.funcs, f->name)) {
		char *nn = lp_ir_unique_name(f->name, &mod.funcs, NULL);
		/* a kernel lowered twice meets the peer's second copy at
		   barriers of its own */
		group_rename g = { f->name, nn };
		lp_ir_walk(f->blocks, f->n_blocks, rename_group, &g);
		free(f->name);
		f->name = nn;
	}
	renames_free(&r);
	lm_strmap_free(&fa);
	lm_strmap_free(&fl);
	lm_strmap_free(&fi);
	lp_ir_names_free(&mod);
}

/*
** inline.c -- InlineNKIKernel: every NKIKernel (IT55) call is replaced by
** the body of the function it calls, with its operands rebound through the
** call's argument maps, then the called functions are removed.
**
** For one call of kernel K from function C:
**   - each formal allocation of K named by func_args / func_outs is bound
**     to its caller allocation (lm_it55_bind, the rule the simulator's
**     call sites share): operands on the formal are rewritten to the
**     caller's allocation (memsetref) and memory location (memref, matched
**     by position); the formal allocations disappear;
**   - K's other allocations move into C; names that collide with names of
**     the module (a kernel called twice) are renamed NAME_1, ...;
**   - K's instructions (without its Returns) take the call's place, in
**     block order; those without dependencies inherit the call's
**     dependencies and waits;
**   - a NoOp carrying the call's NAME and signals, depending on every
**     inlined instruction no other inlined instruction depends on, ends the
**     splice, so dependencies on the call still mean "the kernel is done".
**     A Loop among them is represented by the sinks of its body (no
**     dependency may name a Loop).
*/
#include "common.h"
#include "provision_int.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deepest chain of kernels calling kernels that is inlined. */
#define MAX_PASSES 32

/* Index of the function named name, or -1. */
static int func_index(const lm_module *m, const char *name)
{
	for (int i = 0; name && i < m->n_functions; i++)
		if (m->functions[i].name && !strcmp(m->functions[i].name, name))
			return i;
	return -1;
}

/* One formal -> caller binding (lm_it55_bind). */
typedef lm_it55_binding binding;

/* The operand rewrite of one call: formal names -> caller names. */
typedef struct rebind {
	lm_strmap allocs, memlocs;
} rebind;

static void rebind_inst(lm_inst *in, void *ud)
{
	rebind *r = ud;
	for (int k = 0; k < 2; k++) {
		lm_arg *args = k ? in->outs : in->ins;
		int n = k ? in->n_outs : in->n_ins;
		for (int i = 0; i < n; i++) {
			const char *a, *l;
			if (args[i].memsetref &&
			    (a = lm_strmap_lookup(&r->allocs, args[i].memsetref))) {
				l = args[i].memref ? lm_strmap_lookup(&r->memlocs,
						args[i].memref) : NULL;
				free(args[i].memsetref);
				args[i].memsetref = lm_xstrdup(a);
				if (l) {
					free(args[i].memref);
					args[i].memref = lm_xstrdup(l);
				}
			}
		}
	}
	/* a formal named inside an opaque operand or as a register (any
	   depth, a Loop's axes too): the same rule as the link's copy */
	lm_inst_rename_json_refs(in, &r->allocs, &r->memlocs);
	/* a nested call passes the formals on: its maps name them too */
	for (int k = 0; k < 2; k++) {
		lm_kv *kv = k ? in->func_outs : in->func_args;
		int n = k ? in->n_func_outs : in->n_func_args;
		for (int i = 0; i < n; i++) {
			const char *a = kv[i].value ?
				lm_strmap_lookup(&r->allocs, kv[i].value) : NULL;
			if (a) {
				free(kv[i].value);
				kv[i].value = lm_xstrdup(a);
			}
		}
	}
}

/* Describe an allocation for messages. */
static void describe(const lm_alloc *a, char *buf, size_t n)
{
	static const char *const cls[] = { "DRAM", "SB", "PSUM", "other" };
	snprintf(buf, n, "%s, %lld elements, %s",
		 lm_dtype_name(a->dtype)[0] ? lm_dtype_name(a->dtype) : "?",
		 (long long)lm_alloc_elems(a), cls[lm_alloc_class(a)]);
}

static const lm_alloc *find_alloc(void *m, const char *name)
{
	return lm_module_find_alloc(m, name, NULL);
}

/* Resolve the bindings of a call's maps (lm_it55_bind: the rule the
** simulator's call sites share); checks the two sides agree. */
static int bindings(lm_module *m, const lm_inst *call, const lm_function *k,
		    binding **out, int *n_out, lm_error *err)
{
	int n = call->n_func_args + call->n_func_outs, nb, rc;
	binding *b = n ? lm_xcalloc((size_t)n, sizeof *b) : NULL;
	char *why = NULL;
	*out = b;
	*n_out = 0;
	rc = lm_it55_bind(call, k, find_alloc, m, b, &nb, &why);
	if (rc == LM_IT55_MISMATCH) {
		const lm_kv *kv = nb < call->n_func_args ? &call->func_args[nb]
			: &call->func_outs[nb - call->n_func_args];
		char d1[128], d2[128];
		describe(&k->allocs[b[nb].formal], d1, sizeof d1);
		describe(b[nb].caller, d2, sizeof d2);
		return lm_err(err, m->path, call->name, "cannot bind "
			      "formal '%s' (%s) to '%s' (%s)", kv->key,
			      d1, kv->value, d2);
	}
	if (rc) {
		rc = lm_err(err, m->path, call->name, "%s", why);
		free(why);
		return rc;
	}
	*n_out = nb;
	return 0;
}

/* Append a copy of name to a string list (no duplicates). */
static void add_name(char ***v, int *n, int *cap, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp((*v)[i], name))
			return;
	lm_grow(v, cap, *n + 1, sizeof **v);
	(*v)[(*n)++] = lm_xstrdup(name);
}

/* Record the dependencies of n instructions, a Loop's own and its
** body's (at any depth), in used. */
static void note_deps(lm_strmap *used, const lm_inst *v, int n)
{
	for (int i = 0; i < n; i++) {
		for (int d = 0; d < v[i].n_deps; d++)
			if (v[i].deps[d])
				lm_strmap_put(used, v[i].deps[d], (void *)1);
		for (int b = 0; b < v[i].n_blocks; b++)
			note_deps(used, v[i].blocks[b].insts,
				  v[i].blocks[b].n_insts);
	}
}

/*
** The sinks among n spliced instructions: those no dependency in used
** names. A Loop is no sink itself (no dependency may name a Loop, and a
** Loop may have no name): it stands for the sinks of its body, at any
** depth, which the verifier accepts as earlier instructions. A Loop whose
** body holds no instruction contributes nothing.
*/
static void add_sinks(char ***sinks, int *n_sinks, int *cap,
		      const lm_strmap *used, const lm_inst *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (v[i].op == LM_OP_LOOP) {
			for (int b = 0; b < v[i].n_blocks; b++)
				add_sinks(sinks, n_sinks, cap, used,
					  v[i].blocks[b].insts,
					  v[i].blocks[b].n_insts);
			continue;
		}
		if (v[i].name && !lm_strmap_lookup(used, v[i].name))
			add_name(sinks, n_sinks, cap, v[i].name);
	}
}

/* Output list of one block being rebuilt. */
typedef struct ilist {
	lm_inst *v;
	int n, cap;
} ilist;

static void ilist_push(ilist *l, lm_inst *in)
{
	lm_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = *in;
	memset(in, 0, sizeof *in);
}

/*
** Splice one call (moved out of *call) into list out of function ci.
*/
/*
** The splice puts a kernel's blocks one after the other into the call's
** block, so a kernel whose blocks branch to each other (a KLR cmpBranch
** loop) cannot be inlined: refused, it runs called.
*/
static int no_branches(lm_module *m, const lm_inst *call,
		       const lm_function *k, lm_error *err)
{
	for (int b = 0; b < k->n_blocks; b++)
		for (int i = 0; i < k->blocks[b].n_insts; i++) {
			const lm_inst *in = &k->blocks[b].insts[i];
			if (in->op == LM_OP_CMPBRANCH || in->op == LM_OP_UBRANCH)
				return lm_err(err, m->path, call->name,
					      "NKIKernel function '%s' "
					      "branches between its blocks "
					      "(%s '%s'), which inlining "
					      "cannot keep: lower without "
					      "--inline", k->name,
					      lm_opcode_name(in->op),
					      in->name ? in->name : "");
		}
	return 0;
}

static int expand(lm_module *m, int ci, lm_inst *call, ilist *out,
		  lm_strmap *callees, char ***cnames, int *n_cn, int *cap_cn,
		  lm_error *err)
{
	int ki = func_index(m, call->func), nb = 0, rc, start = out->n;
	lm_function k;
	binding *b = NULL;
	rebind rb;
	lm_strmap dropped, used;
	lm_inst nop;
	char **sinks = NULL;
	int n_sinks = 0, cap_sinks = 0;

	lm_inst_unpack(call); /* no-op: inline_blocks did it (fields move) */
	if (ki < 0)
		return lm_err(err, m->path, call->name, "NKIKernel calls '%s', "
			      "which is not a function of the module",
			      call->func ? call->func : "");
	if (ki == ci)
		return lm_err(err, m->path, call->name, "NKIKernel function "
			      "'%s' calls itself", call->func);
	if ((rc = no_branches(m, call, &m->functions[ki], err)) != 0)
		return rc;
	if ((rc = bindings(m, call, &m->functions[ki], &b, &nb, err)) != 0) {
		free(b);
		return rc;
	}
	if (!lm_strmap_lookup(callees, call->func)) {
		add_name(cnames, n_cn, cap_cn, call->func);
		lm_strmap_put(callees, (*cnames)[*n_cn - 1], (void *)1);
	}
	lm_function_copy(&k, &m->functions[ki]);
	lp_ir_adopt_names(m, ki, &k);
	/* formal -> caller (formal indexes survive the renaming) */
	lm_strmap_init(&rb.allocs);
	lm_strmap_init(&rb.memlocs);
	for (int i = 0; i < nb; i++) {
		lm_alloc *fa = &k.allocs[b[i].formal];
		lm_strmap_put(&rb.allocs, fa->name, b[i].caller->name);
		for (int l = 0; l < fa->n_memlocs; l++)
			lm_strmap_put(&rb.memlocs, fa->memlocs[l].name,
				      b[i].caller->memlocs[l <
				      b[i].caller->n_memlocs ? l : 0].name);
	}
	lp_ir_walk_loops(k.blocks, k.n_blocks, rebind_inst, &rb);
	lm_strmap_free(&rb.allocs);
	lm_strmap_free(&rb.memlocs);

	/* the kernel's instructions, without Returns */
	lm_strmap_init(&dropped);
	for (int bl = 0; bl < k.n_blocks; bl++)
		for (int i = 0; i < k.blocks[bl].n_insts; i++)
			if (k.blocks[bl].insts[i].op == LM_OP_RETURN)
				lm_strmap_put(&dropped,
					      k.blocks[bl].insts[i].name,
					      (void *)1);
	for (int bl = 0; bl < k.n_blocks; bl++)
		for (int i = 0; i < k.blocks[bl].n_insts; i++) {
			lm_inst *in = &k.blocks[bl].insts[i];
			int had = in->n_deps;
			if (in->op == LM_OP_RETURN)
				continue;
			for (int d = 0; d < in->n_deps; d++)
				if (lm_strmap_lookup(&dropped, in->deps[d])) {
					lm_inst_remove_dep(in, 0, d);
					d--;
				}
			if (in->n_deps == 0 && had == 0) {
				for (int d = 0; d < call->n_deps; d++)
					lp_ir_add_dep(in, call->deps[d]);
				for (int w = 0; w < call->n_wait; w++)
					lm_inst_add_sync(in, 0, &call->wait[w]);
			}
			in->has_dependencies = in->n_deps > 0;
			ilist_push(out, in);
		}
	lm_strmap_free(&dropped);

	/* the kernel's own allocations join the caller */
	for (int a = 0; a < k.n_allocs; a++) {
		int formal = 0;
		for (int i = 0; i < nb && !formal; i++)
			formal = b[i].formal == a;
		if (!formal)
			lp_ir_add_alloc(&m->functions[ci], &k.allocs[a]);
	}

	/* the closing NoOp: the call's name, signals, and the sinks */
	lm_strmap_init(&used);
	note_deps(&used, out->v + start, out->n - start);
	add_sinks(&sinks, &n_sinks, &cap_sinks, &used, out->v + start,
		  out->n - start);
	lm_strmap_free(&used);
	memset(&nop, 0, sizeof nop);
	nop.name = call->name;
	call->name = NULL;
	nop.op = LM_OP_NOOP;
	nop.engine = call->engine != LM_ENG_UNASSIGNED ? call->engine
						       : LM_ENG_SP;
	nop.renumber = 1;
	if (n_sinks == 0) {
		/* an empty kernel (or only empty Loops): the NoOp is the
		   whole call */
		nop.deps = call->deps;
		nop.n_deps = call->n_deps;
		nop.dep_kind = call->dep_kind;
		nop.wait = call->wait;
		nop.n_wait = call->n_wait;
		call->deps = NULL;
		call->n_deps = 0;
		call->dep_kind = NULL;
		call->wait = NULL;
		call->n_wait = 0;
	} else {
		nop.deps = sinks;
		nop.n_deps = n_sinks;
		sinks = NULL;
		n_sinks = 0;
	}
	nop.has_dependencies = nop.n_deps > 0;
	nop.update = call->update;
	nop.n_update = call->n_update;
	call->update = NULL;
	call->n_update = 0;
	ilist_push(out, &nop);

	for (int i = 0; i < n_sinks; i++)
		free(sinks[i]);
	free(sinks);
	free(b);
	lm_function_clear(&k);
	lm_inst_clear(call);
	return 0;
}

/* Inline the calls of blocks of function ci (recursing into Loops). */
static int inline_blocks(lm_module *m, int ci, lm_block *bs, int nb,
			 lm_strmap *callees, char ***cnames, int *n_cn,
			 int *cap_cn, int *found, lm_error *err)
{
	for (int b = 0; b < nb; b++) {
		ilist out = { NULL, 0, 0 };
		int rc = 0, i;
		for (i = 0; i < bs[b].n_insts && !rc; i++) {
			lm_inst *in = &bs[b].insts[i];
			if (in->n_blocks)
				rc = inline_blocks(m, ci, in->blocks,
						   in->n_blocks, callees,
						   cnames, n_cn, cap_cn, found,
						   err);
			if (in->op != LM_OP_NKIKERNEL || rc) {
				ilist_push(&out, in);
				continue;
			}
			*found = 1;
			/* its fields move to the closing NoOp: own them first,
			   before the view below copies the struct */
			lm_inst_unpack(in);
			/*
			** While expanding, the block must read as it stands now
			** (spliced so far + the rest), so that the renaming of
			** the kernel's names sees earlier splices of this block.
			*/
			lm_inst *saved = bs[b].insts;
			int saved_n = bs[b].n_insts, nv = out.n + saved_n - i;
			lm_inst *view = lm_xmalloc((size_t)nv * sizeof *view);
			if (out.n)
				memcpy(view, out.v, (size_t)out.n * sizeof *view);
			memcpy(view + out.n, saved + i,
			       (size_t)(saved_n - i) * sizeof *view);
			bs[b].insts = view;
			bs[b].n_insts = nv;
			rc = expand(m, ci, in, &out, callees, cnames, n_cn, cap_cn,
				    err);
			bs[b].insts = saved;
			bs[b].n_insts = saved_n;
			free(view);
			if (rc)
				ilist_push(&out, in);
		}
		for (; i < bs[b].n_insts; i++)
			ilist_push(&out, &bs[b].insts[i]);
		free(bs[b].insts);
		bs[b].insts = out.v;
		bs[b].n_insts = out.n;
		if (rc)
			return rc;
	}
	return 0;
}

int lp_inline_nki(lm_module *m, lm_error *err)
{
	lm_strmap callees;
	char **cnames = NULL;
	int n_cn = 0, cap_cn = 0, rc = 0, found = 1, pass;

	lm_strmap_init(&callees);
	for (pass = 0; found && !rc && pass < MAX_PASSES; pass++) {
		found = 0;
		for (int fi = 0; fi < m->n_functions && !rc; fi++)
			rc = inline_blocks(m, fi, m->functions[fi].blocks,
					   m->functions[fi].n_blocks, &callees,
					   &cnames, &n_cn, &cap_cn, &found, err);
	}
	if (!rc && found)
		rc = lm_err(err, m->path, "", "NKI kernels call each other more "
			    "than %d levels deep", MAX_PASSES);
	/* remove the inlined functions */
	for (int i = 0; !rc && i < n_cn; i++) {
		int k = func_index(m, cnames[i]);
		if (k < 0)
			continue;
		lm_function_clear(&m->functions[k]);
		memmove(&m->functions[k], &m->functions[k + 1],
			(size_t)(m->n_functions - k - 1) *
			sizeof *m->functions);
		m->n_functions--;
	}
	for (int i = 0; i < n_cn; i++)
		free(cnames[i]);
	free(cnames);
	lm_strmap_free(&callees);
	return rc;
}

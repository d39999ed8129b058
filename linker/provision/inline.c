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
** A kernel whose blocks branch to each other keeps its blocks instead
** (expand_blocks): the caller's block is cut at the call and the
** kernel's blocks, renamed, go in between.
*/
#include "common.h"
#include "provision_int.h"
#include "json.h"
#include "build.h"

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

/* The first branch between k's blocks (NULL: none). */
static const lm_inst *first_branch(const lm_function *k)
{
	for (int b = 0; b < k->n_blocks; b++)
		for (int i = 0; i < k->blocks[b].n_insts; i++) {
			const lm_inst *in = &k->blocks[b].insts[i];
			if (in->op == LM_OP_CMPBRANCH || in->op == LM_OP_UBRANCH)
				return in;
		}
	return NULL;
}

/*
** The kernel a call runs, ready to splice into function ci: checked,
** bound, a copy with names adopted into the module and its formals
** rebound to the caller's operands (*k, free with lm_function_clear; *b
** the bindings, freed by the caller). The callee is noted for removal.
*/
static int take_kernel(lm_module *m, int ci, lm_inst *call, lm_function *k,
		       binding **b, int *nb, lm_strmap *callees,
		       char ***cnames, int *n_cn, int *cap_cn, lm_error *err)
{
	int ki = func_index(m, call->func), rc;
	rebind rb;
	*b = NULL;
	*nb = 0;
	if (ki < 0)
		return lm_err(err, m->path, call->name, "NKIKernel calls '%s', "
			      "which is not a function of the module",
			      call->func ? call->func : "");
	if (ki == ci)
		return lm_err(err, m->path, call->name, "NKIKernel function "
			      "'%s' calls itself", call->func);
	/* the Returns are dropped or become branches: what they wait for
	   or signal would be lost */
	const lm_function *kf = &m->functions[ki];
	for (int bl = 0; bl < kf->n_blocks; bl++)
		for (int i = 0; i < kf->blocks[bl].n_insts; i++) {
			const lm_inst *r = &kf->blocks[bl].insts[i];
			if (r->op == LM_OP_RETURN && (r->n_wait || r->n_update))
				return lm_err(err, m->path, call->name,
					      "NKIKernel function '%s': its "
					      "Return '%s' carries sync_info, "
					      "which inlining cannot keep: "
					      "lower without --inline",
					      call->func, r->name ? r->name
								: "");
		}
	if ((rc = bindings(m, call, &m->functions[ki], b, nb, err)) != 0) {
		free(*b);
		*b = NULL;
		return rc;
	}
	if (!lm_strmap_lookup(callees, call->func)) {
		add_name(cnames, n_cn, cap_cn, call->func);
		lm_strmap_put(callees, (*cnames)[*n_cn - 1], (void *)1);
	}
	lm_function_copy(k, &m->functions[ki]);
	lp_ir_adopt_names(m, ki, k);
	/* formal -> caller (formal indexes survive the renaming) */
	lm_strmap_init(&rb.allocs);
	lm_strmap_init(&rb.memlocs);
	for (int i = 0; i < *nb; i++) {
		lm_alloc *fa = &k->allocs[(*b)[i].formal];
		const lm_alloc *ca = (*b)[i].caller;
		lm_strmap_put(&rb.allocs, fa->name, ca->name);
		for (int l = 0; l < fa->n_memlocs; l++)
			lm_strmap_put(&rb.memlocs, fa->memlocs[l].name,
				      ca->memlocs[l < ca->n_memlocs ? l :
						  0].name);
	}
	lp_ir_walk_loops(k->blocks, k->n_blocks, rebind_inst, &rb);
	lm_strmap_free(&rb.allocs);
	lm_strmap_free(&rb.memlocs);
	return 0;
}

/*
** Dependencies on the kernel's Returns go (the Returns are dropped or
** become branches); an instruction that had none takes the call's
** dependencies and waits, or, with entry non-NULL, a dependency on that
** NoOp instead (which carries them).
*/
static void rebase_deps(lm_function *k, const lm_inst *call,
			const char *entry)
{
	lm_strmap dropped;
	lm_strmap_init(&dropped);
	for (int bl = 0; bl < k->n_blocks; bl++)
		for (int i = 0; i < k->blocks[bl].n_insts; i++)
			if (k->blocks[bl].insts[i].op == LM_OP_RETURN)
				lm_strmap_put(&dropped,
					      k->blocks[bl].insts[i].name,
					      (void *)1);
	for (int bl = 0; bl < k->n_blocks; bl++)
		for (int i = 0; i < k->blocks[bl].n_insts; i++) {
			lm_inst *in = &k->blocks[bl].insts[i];
			int had = in->n_deps;
			if (in->op == LM_OP_RETURN)
				continue;
			for (int d = 0; d < in->n_deps; d++)
				if (lm_strmap_lookup(&dropped, in->deps[d])) {
					lm_inst_remove_dep(in, 0, d);
					d--;
				}
			if (in->n_deps == 0 && had == 0 && entry) {
				lp_ir_add_dep(in, entry);
			} else if (in->n_deps == 0 && had == 0) {
				for (int d = 0; d < call->n_deps; d++)
					lp_ir_add_dep(in, call->deps[d]);
				for (int w = 0; w < call->n_wait; w++)
					lm_inst_add_sync(in, 0, &call->wait[w]);
			}
			in->has_dependencies = in->n_deps > 0;
		}
	lm_strmap_free(&dropped);
}

/* The kernel's own allocations (not its formals) join function ci. */
static void move_allocs(lm_module *m, int ci, lm_function *k,
			const binding *b, int nb)
{
	for (int a = 0; a < k->n_allocs; a++) {
		int formal = 0;
		for (int i = 0; i < nb && !formal; i++)
			formal = b[i].formal == a;
		if (!formal)
			lp_ir_add_alloc(&m->functions[ci], &k->allocs[a]);
	}
}

/* A NoOp named name (owned from here) on the call's engine (SP when it
** has none), renumbered, with nothing else yet. */
static void nop_for(const lm_inst *call, char *name, lm_inst *nop)
{
	memset(nop, 0, sizeof *nop);
	nop->name = name;
	nop->op = LM_OP_NOOP;
	nop->engine = call->engine != LM_ENG_UNASSIGNED ? call->engine
						       : LM_ENG_SP;
	nop->renumber = 1;
}

/*
** The closing NoOp into *nop: the call's name and signals, depending on
** the sinks of the spliced instructions (blocks v[0..nv), each n[j]
** long); an empty kernel's NoOp takes the call's own dependencies and
** waits. The call's fields move.
*/
static void closing_nop(lm_inst *call, lm_inst *const *v, const int *n,
			int nv, lm_inst *nop)
{
	lm_strmap used;
	char **sinks = NULL;
	int n_sinks = 0, cap_sinks = 0;
	lm_strmap_init(&used);
	for (int j = 0; j < nv; j++)
		note_deps(&used, v[j], n[j]);
	for (int j = 0; j < nv; j++)
		add_sinks(&sinks, &n_sinks, &cap_sinks, &used, v[j], n[j]);
	lm_strmap_free(&used);
	nop_for(call, call->name, nop);
	call->name = NULL;
	if (n_sinks == 0) {
		/* an empty kernel (or only empty Loops): the NoOp is the
		   whole call */
		nop->deps = call->deps;
		nop->n_deps = call->n_deps;
		nop->dep_kind = call->dep_kind;
		nop->wait = call->wait;
		nop->n_wait = call->n_wait;
		call->deps = NULL;
		call->n_deps = 0;
		call->dep_kind = NULL;
		call->wait = NULL;
		call->n_wait = 0;
	} else {
		nop->deps = sinks;
		nop->n_deps = n_sinks;
		sinks = NULL;
		n_sinks = 0;
	}
	nop->has_dependencies = nop->n_deps > 0;
	nop->update = call->update;
	nop->n_update = call->n_update;
	call->update = NULL;
	call->n_update = 0;
	free(sinks);
}

/*
** Splice one call (moved out of *call) into list out of function ci: a
** kernel without branches, its blocks one after the other.
*/
static int expand(lm_module *m, int ci, lm_inst *call, ilist *out,
		  lm_strmap *callees, char ***cnames, int *n_cn, int *cap_cn,
		  lm_error *err)
{
	int nb = 0, rc, start = out->n;
	lm_function k;
	binding *b = NULL;
	lm_inst nop, *v;

	lm_inst_unpack(call); /* no-op: inline_blocks did it (fields move) */
	if ((rc = take_kernel(m, ci, call, &k, &b, &nb, callees, cnames,
			      n_cn, cap_cn, err)) != 0)
		return rc;
	/* the kernel's instructions, without Returns */
	rebase_deps(&k, call, NULL);
	for (int bl = 0; bl < k.n_blocks; bl++)
		for (int i = 0; i < k.blocks[bl].n_insts; i++)
			if (k.blocks[bl].insts[i].op != LM_OP_RETURN)
				ilist_push(out, &k.blocks[bl].insts[i]);
	move_allocs(m, ci, &k, b, nb);
	v = out->v + start;
	int nv = out->n - start;
	closing_nop(call, &v, &nv, 1, &nop);
	ilist_push(out, &nop);
	free(b);
	lm_function_clear(&k);
	lm_inst_clear(call);
	return 0;
}

/* The block names of f, and those given so far (for unique names). */
static void block_names(const lm_function *f, lm_strmap *names)
{
	lm_strmap_init(names);
	for (int i = 0; i < f->n_blocks; i++)
		if (f->blocks[i].name)
			lm_strmap_put(names, f->blocks[i].name, (void *)1);
}

/* A block name of the function new in names (added to it), from base. */
static char *new_block_name(lm_strmap *names, const char *base)
{
	char *nn = lp_ir_unique_name(base, names, NULL);
	lm_strmap_put(names, nn, (void *)1);
	return nn;
}

/* Rename a block reference through map (nothing when not in it). */
static void remap_block(char **ref, const lm_strmap *map)
{
	const char *to = *ref ? lm_strmap_lookup(map, *ref) : NULL;
	if (to) {
		free(*ref);
		*ref = lm_xstrdup(to);
	}
}

/*
** Splice the call at instruction i of block bi of function ci (at the
** top of the function: a branch inside a Loop is not modelled) when its
** kernel branches between its blocks (a KLR cmpBranch loop), keeping
** the kernel's blocks: block bi is cut at the call and keeps what came
** before it; the kernel's blocks follow, renamed CALL.BLOCK; then a new
** block CALL.return holds the closing NoOp and what came after the
** call. A Return of the kernel becomes an UnconditionalBranch on ALL to
** CALL.return (the one ending the last block is dropped: it falls
** through). The call's dependencies go to the kernel's instructions that
** have none, as in the straight splice; its semaphore waits, which a
** block entered again would wait for again, go to a NoOp CALL.entry in
** the call's place at the end of block bi (run once, as the call), on
** which those instructions depend instead. *next: the index of the
** block CALL.return.
*/
static int expand_blocks(lm_module *m, int ci, int bi, int i, int *next,
			 lm_strmap *callees, char ***cnames, int *n_cn,
			 int *cap_cn, lm_error *err)
{
	lm_function *f = &m->functions[ci];
	lm_inst *call = &f->blocks[bi].insts[i];
	lm_function k;
	binding *b = NULL;
	lm_strmap names, map;
	lm_inst nop, entry;
	int nb = 0, rc;
	char *cont, *entry_name = NULL;

	lm_inst_unpack(call);
	if ((rc = take_kernel(m, ci, call, &k, &b, &nb, callees, cnames,
			      n_cn, cap_cn, err)) != 0)
		return rc;
	if (k.n_blocks > 0 && k.blocks[0].n_args > 0) {
		rc = lm_err(err, m->path, call->name, "NKIKernel function '%s' "
			    "has block arguments on its first block, which "
			    "inlining cannot bind: lower without --inline",
			    call->func);
		free(b);
		lm_function_clear(&k);
		return rc;
	}
	/* block names unique in the caller */
	const char *cname = call->name ? call->name : "call";
	block_names(f, &names);
	lm_strmap_init(&map);
	char **old_names = lm_xcalloc((size_t)k.n_blocks + 1,
				      sizeof *old_names);
	for (int bl = 0; bl < k.n_blocks; bl++) {
		char *base = lm_xasprintf("%s.%s", cname, k.blocks[bl].name ?
					  k.blocks[bl].name : "b");
		char *nn = new_block_name(&names, base);
		free(base);
		old_names[bl] = k.blocks[bl].name;
		if (old_names[bl])
			lm_strmap_put(&map, old_names[bl], nn);
		k.blocks[bl].name = nn;
	}
	{
		char *base = lm_xasprintf("%s.return", cname);
		cont = new_block_name(&names, base);
		free(base);
	}
	/* the map holds the old names as keys and the blocks' new names as
	   values: remap before those strings change hands */
	for (int bl = 0; bl < k.n_blocks; bl++) {
		lm_block *kb = &k.blocks[bl];
		for (int j = 0; j < kb->n_insts; j++) {
			lm_inst *in = &kb->insts[j];
			remap_block(&in->on_true, &map);
			remap_block(&in->on_false, &map);
			remap_block(&in->branch_target, &map);
			/* a BranchHint names its branch's block (a carried
			   key) */
			cJSON *h = in->extra ? cJSON_GetObjectItemCaseSensitive(
				in->extra, "associate_branch") : NULL;
			const char *to = cJSON_IsString(h) ?
				lm_strmap_lookup(&map, h->valuestring) : NULL;
			if (to)
				cJSON_SetValuestring(h, to);
		}
		for (int a = 0; a < kb->n_args; a++)
			for (int x = 0; x < kb->args[a].n_incoming; x++)
				remap_block(&kb->args[a].incoming[x].block,
					    &map);
	}
	lm_strmap_free(&map);
	for (int bl = 0; bl < k.n_blocks; bl++)
		free(old_names[bl]);
	free(old_names);
	if (call->n_wait > 0) {
		lp_ir_names mod;
		lp_ir_names_of(&mod, m, -1);
		char *base = lm_xasprintf("%s.entry", cname);
		entry_name = lp_ir_unique_name(base, &mod.insts, NULL);
		free(base);
		lp_ir_names_free(&mod);
	}
	rebase_deps(&k, call, entry_name);
	/* Returns: dropped at the very end, elsewhere branches out */
	for (int bl = 0; bl < k.n_blocks; bl++) {
		lm_block *kb = &k.blocks[bl];
		for (int j = 0; j < kb->n_insts; j++) {
			lm_inst *in = &kb->insts[j];
			if (in->op != LM_OP_RETURN)
				continue;
			if (bl == k.n_blocks - 1 && j == kb->n_insts - 1) {
				lm_inst_clear(in);
				kb->n_insts--;
				break;
			}
			lm_inst br;
			lm_b_init_inst(&br, LM_OP_UBRANCH, LM_ENG_ALL, in->name);
			lm_b_set_jump(&br, cont);
			lm_inst_clear(in);
			*in = br;
		}
	}
	if (entry_name) {
		nop_for(call, entry_name, &entry);
		for (int d = 0; d < call->n_deps; d++)
			lp_ir_add_dep(&entry, call->deps[d]);
		for (int w = 0; w < call->n_wait; w++)
			lm_inst_add_sync(&entry, 0, &call->wait[w]);
		entry.has_dependencies = entry.n_deps > 0;
	}
	move_allocs(m, ci, &k, b, nb);
	free(b);

	/* the closing NoOp over every kernel block */
	lm_inst **vs = lm_xcalloc((size_t)k.n_blocks + 1, sizeof *vs);
	int *ns = lm_xcalloc((size_t)k.n_blocks + 1, sizeof *ns);
	for (int bl = 0; bl < k.n_blocks; bl++) {
		vs[bl] = k.blocks[bl].insts;
		ns[bl] = k.blocks[bl].n_insts;
	}
	closing_nop(call, vs, ns, k.n_blocks, &nop);
	free(vs);
	free(ns);

	/* the continuation block: the NoOp, then the rest of block bi */
	lm_block after;
	lm_block *cut = &f->blocks[bi];
	memset(&after, 0, sizeof after);
	after.name = cont;
	after.n_insts = cut->n_insts - i;
	after.insts = lm_xcalloc((size_t)after.n_insts, sizeof *after.insts);
	after.insts[0] = nop;
	memcpy(after.insts + 1, cut->insts + i + 1,
	       (size_t)(cut->n_insts - i - 1) * sizeof *after.insts);
	lm_inst_clear(call);
	cut->n_insts = i;
	if (entry_name)
		cut->insts[cut->n_insts++] = entry;

	/* blocks: [0, bi], the kernel's, the continuation, the rest */
	int add = k.n_blocks + 1, old = f->n_blocks;
	f->blocks = lm_xrealloc(f->blocks, (size_t)(old + add) *
				sizeof *f->blocks);
	memmove(f->blocks + bi + 1 + add, f->blocks + bi + 1,
		(size_t)(old - bi - 1) * sizeof *f->blocks);
	memcpy(f->blocks + bi + 1, k.blocks,
	       (size_t)k.n_blocks * sizeof *f->blocks);
	f->blocks[bi + 1 + k.n_blocks] = after;
	f->n_blocks = old + add;
	*next = bi + 1 + k.n_blocks;
	/* what left block bi at its end leaves CALL.return now: the
	   caller's block arguments name it as their predecessor */
	for (int b2 = 0; b2 < f->n_blocks; b2++) {
		if (b2 > bi && b2 <= bi + k.n_blocks)
			continue;
		for (int a = 0; a < f->blocks[b2].n_args; a++) {
			lm_blockarg *ba = &f->blocks[b2].args[a];
			for (int x = 0; x < ba->n_incoming; x++)
				if (ba->incoming[x].block && f->blocks[bi].name &&
				    !strcmp(ba->incoming[x].block,
					    f->blocks[bi].name)) {
					free(ba->incoming[x].block);
					ba->incoming[x].block = lm_xstrdup(cont);
				}
		}
	}
	/* the blocks moved: k keeps none of them */
	free(k.blocks);
	k.blocks = NULL;
	k.n_blocks = 0;
	lm_function_clear(&k);
	lm_strmap_free(&names);
	return 0;
}

/*
** The calls of kernels that branch, at the top of every function's
** blocks: spliced with their blocks (expand_blocks). The blocks spliced
** in are not looked into again this pass (the next pass does, as for the
** straight splice).
*/
static int inline_branching(lm_module *m, lm_strmap *callees, char ***cnames,
			    int *n_cn, int *cap_cn, int *found, lm_error *err)
{
	for (int ci = 0; ci < m->n_functions; ci++)
		for (int bi = 0; bi < m->functions[ci].n_blocks; bi++)
			for (int i = 0; i < m->functions[ci].blocks[bi].n_insts;
			     i++) {
				const lm_inst *in =
					&m->functions[ci].blocks[bi].insts[i];
				int ki, next, rc;
				if (in->op != LM_OP_NKIKERNEL)
					continue;
				ki = func_index(m, in->func);
				if (ki < 0 || ki == ci ||
				    !first_branch(&m->functions[ki]))
					continue;
				*found = 1;
				rc = expand_blocks(m, ci, bi, i, &next, callees,
						   cnames, n_cn, cap_cn, err);
				if (rc)
					return rc;
				/* on in the continuation, after its NoOp */
				bi = next;
				i = 0;
			}
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
			{
				int ki = func_index(m, in->func);
				const lm_inst *br = ki >= 0 && ki != ci ?
					first_branch(&m->functions[ki]) : NULL;
				if (br && ki != ci &&
				    bs == m->functions[ci].blocks) {
					/* at the top of the function: the
					   next pass splices it with its
					   blocks */
					ilist_push(&out, in);
					continue;
				}
				if (br) {
					rc = lm_err(err, m->path, in->name,
						    "NKIKernel function '%s' "
						    "branches between its "
						    "blocks (%s '%s') and is "
						    "called inside a Loop, "
						    "where a branch cannot go: "
						    "lower without --inline",
						    in->func,
						    lm_opcode_name(br->op),
						    br->name ? br->name : "");
					ilist_push(&out, in);
					continue;
				}
			}
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
		rc = inline_branching(m, &callees, &cnames, &n_cn, &cap_cn,
				      &found, err);
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

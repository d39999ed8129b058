/*
** machine.c -- the machine of one run: per-core SBUF and PSUM, the DRAM
** storages, and the prepared form of every module.
**
** Preparation resolves every name once (semaphores, queues, instances,
** functions, dependencies, barrier groups: to indices) and every tensor
** operand to an ls_opnd byte pattern, so the run never looks a name up.
**
** DRAM is storage per allocation, not raw addresses: each root allocation
** (neither alias_of nor remote_local_target) owns a storage; an alias_of
** allocation shares its target's; a remote_local_target view shares the
** storage of allocation `name` of the module of core `core`. When both the
** view and the producer carry an allocated address, the addresses must be
** equal (address identity). In a side-by-side run, an ExternalInput
** declared by several modules is one storage (one host tensor), and one
** named like another module's ExternalOutput is that output's storage (a
** name-matched hand-off, no host tensor).
*/
#include "common.h"
#include "sim_int.h"
#include "simcheck.h"
#include "npy.h"
#include "dtype.h"
#include "geometry.h"
#include "json.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* ---- small helpers ------------------------------------------------------ */

static const char *S(const char *s)
{
	return s ? s : "";
}

static int smap_get(const lm_strmap *m, const char *k)
{
	void *v;
	if (!k || !lm_strmap_get(m, k, &v))
		return -1;
	return (int)(intptr_t)v - 1;
}

static void smap_put(lm_strmap *m, const char *k, int i)
{
	lm_strmap_put(m, k, (void *)(intptr_t)(i + 1));
}

/* Engine index of an instruction (its field, else the opcode's home). */
static int engine_index(const lm_inst *in)
{
	switch (in->engine) {
	case LM_ENG_PE: return 0;
	case LM_ENG_ACT: return 1;
	case LM_ENG_DVE: return 2;
	case LM_ENG_POOL: return 3;
	case LM_ENG_SP: return 4;
	default: break;
	}
	switch (in->op) {
	case LM_OP_MATMULT: return 0;
	case LM_OP_ACTIVATION: return 1;
	case LM_OP_TENSORTENSOR: case LM_OP_TENSORSCALAR: case LM_OP_TENSORCOPY:
	case LM_OP_MEMSET: case LM_OP_TCDYNSRC: case LM_OP_TCDYNDST:
		return 2;
	case LM_OP_IOTA: case LM_OP_AFFINESELECT: case LM_OP_COREBARRIER:
		return 3;
	default:
		return 4;
	}
}

const char *ls_engine_name(int eng)
{
	static const char *const names[] = { "PE", "Activation", "DVE", "Pool",
					     "SP" };
	return eng >= 0 && eng < 5 ? names[eng] : "?";
}

void ls_where(const ls_machine *mc, int core, const ls_sinst *si, char *buf,
	      size_t n)
{
	const ls_sfunc *f = &mc->fns[si->fn];
	if (core < 0)
		snprintf(buf, n, "host/function %s/instruction %s",
			 S(f->f->name), S(si->in->name));
	else
		snprintf(buf, n, "core %d/function %s/instruction %s", core,
			 S(f->f->name), S(si->in->name));
}

/* ---- memory ------------------------------------------------------------ */

/* Blocks up to this size are populated at once (see mem_block). */
#define POPULATE_MAX ((size_t)8 << 20)

/*
** One block per core holds its SB, PSUM and their shadows, zeroed. On
** Linux it is mapped with MAP_POPULATE when small (the compact layout of
** a short program): the kernel hands over zeroed pages in one call instead
** of one page fault per page first touched, and such a run touches most
** of them. A large block (a program spread over the whole SBUF) is mapped
** lazily: only the pages touched cost.
*/
static uint8_t *mem_block(size_t n, int *mapped)
{
	*mapped = 0;
#if defined(__linux__) && defined(MAP_POPULATE)
	{
		int pop = n <= POPULATE_MAX ? MAP_POPULATE : 0;
		void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | pop, -1, 0);
		if (p != MAP_FAILED) {
			*mapped = 1;
			return p;
		}
	}
#endif
	return lm_xcalloc(n, 1);
}

static void mem_block_free(uint8_t *p, size_t n, int mapped)
{
	if (!p)
		return;
#if defined(__linux__) && defined(MAP_POPULATE)
	if (mapped) {
		munmap(p, n);
		return;
	}
#endif
	(void)n;
	(void)mapped;
	free(p);
}

ls_core_mem *ls_core_memory(ls_machine *mc, int core)
{
	ls_core_mem *cm = &mc->mem[core];
	if (!cm->sb) {
		size_t sb = (size_t)LM_PARTITIONS * (size_t)mc->sb_part_bytes;
		size_t ps = (size_t)LM_PARTITIONS * (size_t)mc->psum_part_bytes;
		cm->bytes = 2 * sb + 2 * ps;
		cm->block = mem_block(cm->bytes, &cm->mapped);
		cm->sb = cm->block;
		cm->sb_init = cm->sb + sb;
		cm->psum = cm->sb_init + sb;
		cm->psum_init = cm->psum + ps;
	}
	return cm;
}

void ls_bind(ls_machine *mc, int core, const ls_opnd *o, ls_view *v)
{
	v->o = o;
	if (o->space == LS_SP_DRAM) {
		ls_storage *s = &mc->storages[o->storage];
		v->data = s->data + o->off;
		v->init = s->init + o->off;
	} else {
		ls_core_mem *cm = ls_core_memory(mc, core);
		if (o->space == LS_SP_SB) {
			v->data = cm->sb + o->off;
			v->init = cm->sb_init + o->off;
		} else {
			v->data = cm->psum + o->off;
			v->init = cm->psum_init + o->off;
		}
	}
}

/* The arch byte of compact in-partition byte x of layout l. */
static int64_t layout_unmap(const ls_layout *l, int64_t x)
{
	for (int i = 0; i < l->n; i++)
		if (x >= l->base[i] && x < l->base[i] + (l->hi[i] - l->lo[i]))
			return l->lo[i] + (x - l->base[i]);
	return x;
}

int64_t ls_layout_unmap(const ls_layout *l, int64_t x)
{
	return layout_unmap(l, x);
}

void ls_describe_byte(ls_machine *mc, int core, const ls_opnd *o,
		      const uint8_t *p, char *buf, size_t n)
{
	if (o->space == LS_SP_DRAM) {
		ls_storage *s = &mc->storages[o->storage];
		int64_t off = p - s->data;
		int64_t es = o->alloc_esize > 0 ? o->alloc_esize : 1;
		snprintf(buf, n, "'%s' (DRAM storage '%s', element %lld, byte "
			 "%lld)", S(o->alloc), S(s->name),
			 (long long)(off / es), (long long)off);
	} else {
		ls_core_mem *cm = ls_core_memory(mc, core);
		int is_sb = o->space == LS_SP_SB;
		const ls_layout *l = is_sb ? &mc->sb_layout : &mc->psum_layout;
		int64_t off = p - (is_sb ? cm->sb : cm->psum);
		snprintf(buf, n, "'%s' (%s partition %lld, byte %lld)",
			 S(o->alloc), is_sb ? "SB" : "PSUM",
			 (long long)(off / l->pb),
			 (long long)layout_unmap(l, off % l->pb));
	}
}

/* ---- the compact SB / PSUM layout ----------------------------------------- */

/* Record that some operand touches bytes [lo, hi) of partitions of l. */
static void layout_note(ls_layout *l, int64_t lo, int64_t hi)
{
	uint64_t h = ((uint64_t)lo * 0x9e3779b97f4a7c15ull) ^ (uint64_t)hi;
	int64_t *e = l->seen[(h ^ (h >> 29)) & 63];
	if (e[0] == lo && e[1] == hi)
		return;
	e[0] = lo;
	e[1] = hi;
	lm_grow(&l->ext, &l->cap_ext, 2 * (l->n_ext + 1), sizeof *l->ext);
	l->ext[2 * l->n_ext] = lo;
	l->ext[2 * l->n_ext + 1] = hi;
	l->n_ext++;
}

static int cmp_ext(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

/* Merge the collected extents into intervals and place them. */
static void layout_build(ls_layout *l)
{
	int64_t at = 0;
	if (l->n_ext > 1)
		qsort(l->ext, (size_t)l->n_ext, 2 * sizeof *l->ext, cmp_ext);
	l->lo = lm_xcalloc((size_t)l->n_ext + 1, sizeof *l->lo);
	l->hi = lm_xcalloc((size_t)l->n_ext + 1, sizeof *l->hi);
	l->base = lm_xcalloc((size_t)l->n_ext + 1, sizeof *l->base);
	l->n = 0;
	for (int i = 0; i < l->n_ext; i++) {
		int64_t lo = l->ext[2 * i], hi = l->ext[2 * i + 1];
		if (l->n > 0 && lo <= l->hi[l->n - 1]) {
			if (hi > l->hi[l->n - 1])
				l->hi[l->n - 1] = hi;
			continue;
		}
		l->lo[l->n] = lo;
		l->hi[l->n++] = hi;
	}
	for (int i = 0; i < l->n; i++) {
		/* keep the address modulo 64 (vector alignment) */
		at = (at + 63) & ~(int64_t)63;
		l->base[i] = at + (l->lo[i] & 63);
		at = l->base[i] + (l->hi[i] - l->lo[i]);
	}
	l->pb = (at + 63) & ~(int64_t)63;
	if (l->pb < 64)
		l->pb = 64;
	if (l->pb >= l->arch_pb) { /* nothing to gain: the arch layout */
		l->n = 1;
		l->lo[0] = l->base[0] = 0;
		l->hi[0] = l->arch_pb;
		l->pb = l->arch_pb;
	}
	free(l->ext);
	l->ext = NULL;
	l->n_ext = l->cap_ext = 0;
}

/* Compact in-partition byte of arch byte x (inside a collected extent). */
static int64_t layout_map(const ls_layout *l, int64_t x)
{
	int a = 0, b = l->n - 1;
	while (a < b) { /* the last interval with lo <= x */
		int m = (a + b + 1) / 2;
		if (l->lo[m] <= x)
			a = m;
		else
			b = m - 1;
	}
	return l->base[a] + (x - l->lo[a]);
}

/* Place an SB / PSUM operand in the compact layout. */
static void layout_apply(ls_machine *mc, ls_opnd *o)
{
	const ls_layout *l = o->space == LS_SP_SB ? &mc->sb_layout
						   : &mc->psum_layout;
	o->off = o->part * l->pb + layout_map(l, o->pstart);
	if (o->pdim >= 0)
		o->stride[o->pdim] = l->pb;
}

static void layout_free(ls_layout *l)
{
	free(l->lo);
	free(l->hi);
	free(l->base);
	free(l->ext);
}

/* ---- operands ----------------------------------------------------------- */

/* Bytes between the elements of pair p: 0 when it walks one element
** (any step then; the product could overflow). */
static int64_t pair_stride(const lm_appair *p, int esize)
{
	return p->num > 1 ? p->step * esize : 0;
}

/*
** Resolve one operand of module mi in function sf (whose bindings apply
** when sf is an NKI call site). Its geometry is lm_arg_geometry's, the
** verifier's. Problems the verifier does not rule out (an opaque operand
** kind, too many dimensions, a binding that puts an access outside the
** memory) become a fault message reported when the instruction is
** reached. SB / PSUM operands are resolved against the arch layout here
** and placed in the compact layout later (layout_apply).
*/
/* Is opaque operand a of kind `kind`? */
static int is_kind(const lm_arg *a, const char *kind)
{
	const cJSON *k = a->extra ? cJSON_GetObjectItemCaseSensitive(a->extra,
								     "kind")
				  : NULL;
	return cJSON_IsString(k) && strcmp(k->valuestring, kind) == 0;
}

/* Is opaque operand a a symbolic_ap (or a register_ap: its address is a
** register's value, prepared as a symbolic_ap's)? */
static int is_symbolic_ap(const lm_arg *a)
{
	return is_kind(a, "symbolic_ap") || is_kind(a, "register_ap");
}

static void prep_opnd(ls_machine *mc, int mi, const ls_sfunc *sf,
		      const lm_arg *a, ls_opnd *o, char **fault)
{
	ls_smod *sm = &mc->mods[mi];
	const lm_alloc *al;
	const lm_memloc *loc;
	const char *aname = a->memsetref, *lname = a->memref;
	int64_t st[64], nm[64];
	int nd = 0, pdim = -1;
	lm_geom g;
	char *why;

	/* o is zeroed (calloc) */
	o->pdim = -1;
	if (a->kind == LM_ARG_IMM)
		return; /* space NONE: an immediate */
	if (a->kind == LM_ARG_OPAQUE && is_symbolic_ap(a))
		return; /* prep_dyn */
	if (a->kind != LM_ARG_PHYSICAL_AP) {
		if (!*fault)
			*fault = lm_xasprintf("operand kind is not supported "
					      "by the simulator (only "
					      "physical_ap)");
		return;
	}
	if (sf->is_callsite && aname) {
		const char *r = lm_strmap_lookup(&sf->bind_allocs, aname);
		if (r) {
			aname = r;
			r = lname ? lm_strmap_lookup(&sf->bind_locs, lname)
				  : NULL;
			if (r)
				lname = r;
		}
	}
	if (sm->last_alloc && aname &&
	    strcmp(sm->last_alloc->name, aname) == 0)
		al = sm->last_alloc;
	else
		al = lm_strmap_lookup(&sm->allocs, aname);
	sm->last_alloc = al;
	loc = al ? lm_alloc_find_memloc(al, lname) : NULL;
	if (!al || !loc || a->n_ap < 1 || a->n_ap > 64) {
		if (!*fault)
			*fault = lm_xasprintf("operand '%s' does not resolve",
					      S(aname));
		return;
	}
	/* the verifier's numbers, for the location the binding chose */
	if (lm_arg_geometry(&g, a, al, loc, &why)) {
		if (!*fault)
			*fault = lm_xasprintf("access of '%s': %s", S(al->name),
					      why);
		free(why);
		return;
	}
	/* one partition per step of the first pair, measured against the
	   location the binding chose (ls_check_module checked the formal's;
	   a binding may give a location of other bytes per partition) */
	if (!g.is_dram && g.pstep != 1) {
		if (!*fault)
			*fault = lm_xasprintf("access of '%s': ap[0].step %lld "
					      "strides %lld partitions: not "
					      "modelled by the simulator",
					      S(al->name),
					      (long long)a->ap[0].step,
					      (long long)g.pstep);
		return;
	}
	o->dtype = a->dtype;
	o->esize = g.esize;
	o->alloc = al->name;
	o->alloc_esize = lm_dtype_size(al->dtype);
	o->count = g.count;
	o->parts = g.parts;
	o->free = g.free;
	if (g.is_dram) {
		o->space = LS_SP_DRAM;
		o->storage = smap_get(&sm->storages, al->name);
		o->off = a->offset * o->esize;
		for (int i = 0; i < a->n_ap; i++) {
			st[nd] = pair_stride(&a->ap[i], o->esize);
			nm[nd++] = a->ap[i].num;
		}
		if (o->storage < 0) {
			o->space = LS_SP_NONE;
			if (!*fault)
				*fault = lm_xasprintf("DRAM allocation '%s' has no "
					      "storage", S(al->name));
			return;
		}
	} else {
		int64_t pb, lo, hi;
		ls_layout *l;
		o->space = loc->type == LM_MT_SB ? LS_SP_SB : LS_SP_PSUM;
		l = o->space == LS_SP_SB ? &mc->sb_layout : &mc->psum_layout;
		pb = l->arch_pb;
		o->part = g.part;
		o->pstart = loc->addr + a->offset * o->esize;
		o->off = o->part * pb + o->pstart;
		lo = loc->addr + g.lo;
		hi = loc->addr + g.hi;
		pdim = 0;
		st[nd] = pb;
		nm[nd++] = a->ap[0].num;
		for (int i = 1; i < a->n_ap; i++) {
			st[nd] = pair_stride(&a->ap[i], o->esize);
			nm[nd++] = a->ap[i].num;
		}
		/* inside the memory location; it may still exceed the
		** partition of this machine's arch */
		if (hi > pb) {
			o->space = LS_SP_NONE;
			if (!*fault)
				*fault = lm_xasprintf("access of '%s' is "
					      "outside %s (partitions %lld..%lld, "
					      "bytes %lld..%lld of %lld)",
					      S(al->name), loc->type == LM_MT_SB
					      ? "SB" : "PSUM", (long long)o->part,
					      (long long)(o->part + o->parts - 1),
					      (long long)lo, (long long)hi - 1,
					      (long long)pb);
			return;
		}
		if (o->count > 0)
			layout_note(l, lo, hi);
	}
	/* Drop unit dimensions, merge contiguous neighbours. */
	for (int i = 0; i < nd; i++) {
		if (nm[i] == 1 && nd > 1) {
			memmove(&st[i], &st[i + 1], (size_t)(nd - i - 1) * 8);
			memmove(&nm[i], &nm[i + 1], (size_t)(nd - i - 1) * 8);
			if (pdim == i)
				pdim = -1;
			else if (pdim > i)
				pdim--;
			nd--;
			i--;
		}
	}
	for (int i = nd - 1; i > 0; i--) {
		if (st[i - 1] == st[i] * nm[i]) {
			nm[i - 1] *= nm[i];
			st[i - 1] = st[i];
			memmove(&st[i], &st[i + 1], (size_t)(nd - i - 1) * 8);
			memmove(&nm[i], &nm[i + 1], (size_t)(nd - i - 1) * 8);
			/* the partition dimension merged with its rows: the
			** operand spans whole partitions, so its extent made
			** the layout the arch's (the stride stays right) */
			if (pdim == i - 1 || pdim == i)
				pdim = -1;
			else if (pdim > i)
				pdim--;
			nd--;
		}
	}
	if (nd > LS_MAX_DIMS) {
		o->space = LS_SP_NONE;
		if (!*fault)
			*fault = lm_xasprintf("access pattern of '%s' has %d "
					      "non-contiguous dimensions (the "
					      "simulator handles %d)",
					      S(al->name), nd, LS_MAX_DIMS);
		return;
	}
	o->ndim = nd;
	o->pdim = pdim;
	memcpy(o->stride, st, (size_t)nd * 8);
	memcpy(o->num, nm, (size_t)nd * 8);
}

/* ---- registration ------------------------------------------------------- */

static int add_group(ls_machine *mc, const char *name)
{
	int g = smap_get(&mc->group_index, name);
	if (g >= 0)
		return g;
	lm_grow(&mc->groups, &mc->cap_groups, mc->n_groups + 1,
		sizeof *mc->groups);
	mc->groups[mc->n_groups] = lm_xstrdup(name);
	smap_put(&mc->group_index, mc->groups[mc->n_groups], mc->n_groups);
	return mc->n_groups++;
}

/* Semaphores (sync.c), queues and instances of module mi. */
static int register_sync(ls_machine *mc, int mi, lm_error *err)
{
	ls_smod *sm = &mc->mods[mi];
	const lm_module *m = sm->m;
	char why[600];
	if (ls_sync_declare(mc, mi, why, sizeof why))
		return lm_err(err, sm->path, "semaphores", "%s", why);
	sm->queue_base = mc->n_queues;
	sm->n_queues = m->n_queues;
	for (int i = 0; i < m->n_queues; i++) {
		const lm_queue *q = &m->queues[i];
		ls_squeue *sq;
		lm_grow(&mc->queues, &mc->cap_queues, mc->n_queues + 1,
			sizeof *mc->queues);
		sq = &mc->queues[mc->n_queues];
		memset(sq, 0, sizeof *sq);
		sq->name = q->name;
		sq->mod = mi;
		sq->n_inst = q->n_instances;
		sq->insts = lm_xcalloc((size_t)q->n_instances + 1, sizeof(int));
		for (int j = 0; j < q->n_instances; j++) {
			ls_sqinst *qi;
			lm_grow(&mc->qinsts, &mc->cap_qinsts, mc->n_qinsts + 1,
				sizeof *mc->qinsts);
			qi = &mc->qinsts[mc->n_qinsts];
			memset(qi, 0, sizeof *qi);
			qi->name = q->instances[j].name;
			qi->queue = mc->n_queues;
			qi->sem = smap_get(&sm->sems, q->instances[j].semaphore);
			smap_put(&sm->qinsts, qi->name, mc->n_qinsts);
			sq->insts[j] = mc->n_qinsts++;
		}
		smap_put(&sm->queues, q->name, mc->n_queues);
		mc->n_queues++;
	}
	return 0;
}

static int is_dram_alloc(const lm_alloc *a)
{
	for (int i = 0; i < a->n_memlocs; i++)
		if (lm_memtype_is_dram(a->memlocs[i].type))
			return 1;
	return 0;
}

/* Bytes of the tensor of a (elements * dtype size), or -1 on overflow. */
static int64_t tensor_bytes(const lm_alloc *a)
{
	int64_t b;
	if (__builtin_mul_overflow(lm_alloc_elems(a),
				   (int64_t)lm_dtype_size(a->dtype), &b) ||
	    b == INT64_MAX)
		return -1;
	return b;
}

/*
** Bytes a DRAM allocation needs: its tensor, or its largest memory
** location (product of dims); -1 when a product overflows int64.
*/
static int64_t alloc_bytes_checked(const lm_alloc *a)
{
	int64_t b = tensor_bytes(a);
	if (b < 0)
		return -1;
	for (int i = 0; i < a->n_memlocs; i++) {
		int64_t lb = 1;
		if (a->memlocs[i].n_dims == 0)
			continue;
		for (int j = 0; j < a->memlocs[i].n_dims; j++)
			if (__builtin_mul_overflow(lb, a->memlocs[i].dims[j],
						   &lb))
				return -1;
		if (lb > b)
			b = lb;
	}
	return b;
}

/* alloc_bytes_checked after ls_check_memory (which refused overflows). */
static int64_t alloc_bytes(const lm_alloc *a)
{
	int64_t b = alloc_bytes_checked(a);
	return b < 0 ? INT64_MAX : b;
}

/* a + b, saturating at INT64_MAX (both non-negative). */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/*
** The simulated memory a run of mods will allocate, against max_bytes
** (0: LS_MAX_MEMORY_DEFAULT). Walks the allocations the way setup_storages
** does: every root DRAM allocation is a storage of its bytes plus as many
** for the initialization shadow; an external input (one per name across
** the modules) or output adds its host copy, a Const allocation the
** contents of its file. SBUF and PSUM are fixed by the architecture and
** not counted. One allocation over the limit is named; else the total.
*/
int ls_check_memory(lm_module *const *mods, int n_mods, int64_t max_bytes,
		    lm_error *err)
{
	return ls_check_memory_race(mods, n_mods, max_bytes, 0, err);
}

int ls_check_memory_race(lm_module *const *mods, int n_mods,
			 int64_t max_bytes, int race, lm_error *err)
{
	const int64_t limit = max_bytes > 0 ? max_bytes : LS_MAX_MEMORY_DEFAULT;
	int64_t total = 0, big = -1;
	const char *big_name = NULL, *path0 = "";
	lm_strmap inputs;
	int rc = 0;

	lm_strmap_init(&inputs);
	for (int mi = 0; mi < n_mods && !rc; mi++) {
		const lm_module *m = mods[mi];
		const char *path = m->path && *m->path ? m->path
			: lm_module_display_name(m);
		if (mi == 0)
			path0 = path;
		for (int f = 0; f < m->n_functions && !rc; f++) {
			const lm_function *fn = &m->functions[f];
			for (int i = 0; i < fn->n_allocs && !rc; i++) {
				const lm_alloc *a = &fn->allocs[i];
				int64_t b, tb, need = 0;
				int dram = is_dram_alloc(a), host = 0;
				if (a->alias_of || a->has_remote)
					continue;
				b = alloc_bytes_checked(a);
				tb = tensor_bytes(a);
				if (b < 0 || tb < 0) {
					rc = lm_err(err, path, S(a->name),
						    "the size of the allocation "
						    "overflows int64 (tensor_"
						    "shape or memory location "
						    "dims)");
					break;
				}
				if (lm_tensorkind_is_ext_input(a->kind)) {
					/* one host tensor and storage per name */
					if (a->name && lm_strmap_get(&inputs,
								     a->name,
								     NULL))
						continue;
					if (a->name)
						lm_strmap_put(&inputs, a->name,
							      NULL);
					need = tb;
					host = 1;
				} else if (dram &&
					   (lm_tensorkind_is_ext_output(a->kind) ||
					    a->kind == LM_TK_CONST)) {
					need = tb;
					host = 1;
				}
				if (dram)
					need = sat_add(need, sat_add(b, b));
				if (dram && race)
					need = sat_add(need, sat_add(b, b));
				if (need > limit) {
					rc = lm_err(err, path, S(a->name),
						    "the allocation needs %lld "
						    "bytes of simulated memory "
						    "(%s%s), over the memory "
						    "limit of %lld bytes "
						    "(--max-memory)",
						    (long long)need,
						    !dram ? "its host copy"
						    : host
						    ? "DRAM storage, "
						      "initialization shadow "
						      "and host copy"
						    : "DRAM storage and "
						      "initialization shadow",
						    dram && race ? ", race "
						    "shadow" : "",
						    (long long)limit);
					break;
				}
				if (need > big) {
					big = need;
					big_name = a->name;
				}
				total = sat_add(total, need);
			}
		}
	}
	lm_strmap_free(&inputs);
	if (!rc && total > limit)
		rc = lm_err(err, path0, "", "the run needs %lld bytes of "
			    "simulated memory in all (the largest allocation, "
			    "'%s', %lld), over the memory limit of %lld bytes "
			    "(--max-memory)", (long long)total, S(big_name),
			    (long long)big, (long long)limit);
	return rc;
}

static int new_storage(ls_machine *mc, int mi, const lm_alloc *a)
{
	ls_storage *s;
	lm_grow(&mc->storages, &mc->cap_storages, mc->n_storages + 1,
		sizeof *mc->storages);
	s = &mc->storages[mc->n_storages];
	memset(s, 0, sizeof *s);
	s->name = a->name;
	s->mod = mi;
	s->alloc = a;
	s->bytes = alloc_bytes(a);
	/* data is only read where its shadow says written */
	s->data = lm_xmalloc((size_t)s->bytes + 1);
	s->init = lm_xcalloc((size_t)s->bytes + 1, 1);
	return mc->n_storages++;
}

/* The first allocated memory location's address, or -1. */
static int64_t alloc_addr(const lm_alloc *a)
{
	for (int i = 0; i < a->n_memlocs; i++)
		if (a->memlocs[i].allocated)
			return a->memlocs[i].addr;
	return -1;
}

/* Module of core c, or -1. */
static int module_of_core(const ls_machine *mc, int64_t c)
{
	for (int i = 0; i < mc->n_mods; i++)
		if (mc->mods[i].core == c)
			return i;
	return -1;
}

/*
** Storage of allocation a of module mi, resolving views (depth-bounded).
** Returns the storage index or fills err.
*/
static int resolve_storage(ls_machine *mc, int mi, const lm_alloc *a,
			   int depth, lm_error *err)
{
	ls_smod *sm = &mc->mods[mi];
	int s = smap_get(&sm->storages, a->name);
	if (s >= 0)
		return s;
	if (depth > 64)
		return lm_err(err, sm->path, a->name, "alias_of / "
			      "remote_local_target chain is too long or "
			      "cyclic");
	if (a->alias_of) {
		const lm_alloc *t = lm_strmap_lookup(&sm->allocs, a->alias_of);
		if (!t)
			return lm_err(err, sm->path, a->name, "alias_of '%s' "
				      "names no allocation", a->alias_of);
		s = resolve_storage(mc, mi, t, depth + 1, err);
		if (s < 0)
			return s;
	} else if (a->has_remote) {
		int pm = module_of_core(mc, a->remote_core);
		const lm_alloc *t;
		int64_t va, pa;
		if (pm < 0)
			return lm_errc(err, LM_EINPUT, sm->path, a->name,
				       "remote_local_target names allocation "
				       "'%s' of core %lld, which is not part "
				       "of this run", S(a->remote_name),
				       (long long)a->remote_core);
		t = lm_strmap_lookup(&mc->mods[pm].allocs, a->remote_name);
		if (!t || !is_dram_alloc(t))
			return lm_err(err, sm->path, a->name,
				      "remote_local_target '%s' is not a DRAM "
				      "allocation of core %lld",
				      S(a->remote_name),
				      (long long)a->remote_core);
		va = alloc_addr(a);
		pa = alloc_addr(t);
		if (va >= 0 && pa >= 0 && va != pa)
			return lm_err(err, sm->path, a->name, "address identity "
				      "violated: view '%s' has addr %lld but "
				      "its producer '%s' of core %lld has "
				      "addr %lld", a->name, (long long)va,
				      t->name, (long long)a->remote_core,
				      (long long)pa);
		s = resolve_storage(mc, pm, t, depth + 1, err);
		if (s < 0)
			return s;
	} else {
		return lm_errc(err, LM_EINTERNAL, sm->path, a->name,
			       "root allocation without storage");
	}
	if (alloc_bytes(a) > mc->storages[s].bytes)
		return lm_err(err, sm->path, a->name, "view needs %lld bytes "
			      "but its storage '%s' has %lld",
			      (long long)alloc_bytes(a), mc->storages[s].name,
			      (long long)mc->storages[s].bytes);
	smap_put(&sm->storages, a->name, s);
	return s;
}

/* Fill storage s from a host tensor or .npy contents; data stays what a
** reset puts back (own: data's buffer, now the storage's; NULL: data is
** borrowed). */
static void fill_storage(ls_storage *s, const void *data, int64_t bytes,
			 uint8_t *own)
{
	if (bytes > s->bytes)
		bytes = s->bytes;
	memcpy(s->data, data, (size_t)bytes);
	memset(s->init, 1, (size_t)bytes);
	free(s->own_copy);
	s->own_copy = own;
	s->pristine = data;
	s->filled = bytes;
}

/* Load a Const allocation's .npy file (relative to the module's dir). */
static int load_const(ls_machine *mc, int mi, int s, lm_error *err)
{
	ls_smod *sm = &mc->mods[mi];
	ls_storage *st = &mc->storages[s];
	const lm_alloc *a = st->alloc;
	lm_npy arr;
	char *path;
	int rc;
	void *buf;

	if (!a->file || !*a->file)
		return lm_err(err, sm->path, a->name, "Const allocation has no "
			      "file");
	path = lm_path_join(sm->m->dir ? sm->m->dir : ".", a->file);
	if (mc->files) {
		/* held in memory: nothing on disk is looked at */
		const lm_memfile *f = lm_fileset_find(mc->files, path);
		rc = f ? lm_npy_parse(f->bytes, f->len, path, &arr, err)
		       : lm_err(err, path, "", "cannot open: %s",
				strerror(ENOENT));
	} else {
		/* the element count from the header first: no payload is
		 * read for a file of the wrong size */
		rc = lm_npy_read_header(path, &arr, err);
		if (!rc && arr.count == lm_alloc_elems(a))
			rc = lm_npy_read(path, &arr, err);
	}
	if (rc) {
		free(path);
		return rc;
	}
	if (arr.count != lm_alloc_elems(a)) {
		rc = lm_err(err, path, a->name, "Const file has %lld elements, "
			    "the allocation %lld", (long long)arr.count,
			    (long long)lm_alloc_elems(a));
		goto done;
	}
	buf = lm_xmalloc((size_t)arr.count * (size_t)lm_dtype_size(a->dtype) +
			 1);
	rc = lm_npy_convert(&arr, a->dtype, buf, path, err);
	if (rc == 0)
		fill_storage(st, buf, arr.count * lm_dtype_size(a->dtype), buf);
	else
		free(buf);
done:
	lm_npy_free(&arr);
	free(path);
	return rc;
}

/* Bind an external input storage to its host tensor. */
static int bind_input(ls_machine *mc, int s, const ls_tensors *inputs,
		      lm_error *err)
{
	ls_storage *st = &mc->storages[s];
	const lm_alloc *a = st->alloc;
	const char *path = mc->mods[st->mod].path;
	ls_tensor *t = inputs ? ls_tensors_find(inputs, a->name) : NULL;
	int64_t n = lm_alloc_elems(a);
	int es = lm_dtype_size(a->dtype);

	if (!t)
		return lm_err(err, path, a->name, "missing input '%s'",
			      a->name);
	if (t->count != n)
		return lm_err(err, path, a->name, "input '%s' has %lld "
			      "elements, the allocation %lld", a->name,
			      (long long)t->count, (long long)n);
	if (t->dtype == a->dtype) {
		fill_storage(st, t->data, n * es, NULL);
	} else if (t->dtype == LM_DT_FLOAT32 && lm_dtype_is_float(a->dtype)) {
		uint8_t *buf = lm_xmalloc((size_t)(n * es) + 1);
		ls_f32_to_dtype(a->dtype, t->data, buf, n);
		fill_storage(st, buf, n * es, buf);
	} else {
		return lm_err(err, path, a->name, "input '%s' is %s, the "
			      "allocation %s", a->name,
			      lm_dtype_name(t->dtype), lm_dtype_name(a->dtype));
	}
	return 0;
}

/* All DRAM storages: roots, shared inputs, views, inputs, consts. */
static int setup_storages(ls_machine *mc, const ls_tensors *inputs,
			  lm_error *err)
{
	lm_strmap in_by_name, out_by_name, owners;
	lm_module **ms = lm_xcalloc((size_t)mc->n_mods + 1, sizeof *ms);
	int rc = 0;

	lm_strmap_init(&in_by_name);
	lm_strmap_init(&out_by_name);
	for (int mi = 0; mi < mc->n_mods; mi++)
		ms[mi] = (lm_module *)mc->mods[mi].m;
	ls_output_owners(ms, mc->n_mods, &owners);
	free(ms);
	for (int mi = 0; mi < mc->n_mods && !rc; mi++) {
		ls_smod *sm = &mc->mods[mi];
		for (int f = 0; f < sm->m->n_functions && !rc; f++) {
			const lm_function *fn = &sm->m->functions[f];
			for (int i = 0; i < fn->n_allocs && !rc; i++) {
				const lm_alloc *a = &fn->allocs[i];
				int s;
				if (!is_dram_alloc(a) || a->alias_of ||
				    a->has_remote ||
				    ls_handoff_owner(&owners, mi, a) >= 0)
					continue;
				if (lm_tensorkind_is_ext_input(a->kind)) {
					s = smap_get(&in_by_name, a->name);
					if (s >= 0) {
						const lm_alloc *o =
							mc->storages[s].alloc;
						int same = o->dtype == a->dtype &&
							lm_alloc_elems(o) ==
							lm_alloc_elems(a);
						if (!same)
							rc = lm_err(err, sm->path,
								a->name,
								"external input "
								"'%s' is declared "
								"with another "
								"dtype or shape "
								"by %s", a->name,
								mc->mods[mc->storages[s].mod].path);
						else
							smap_put(&sm->storages,
								 a->name, s);
						continue;
					}
					s = new_storage(mc, mi, a);
					mc->storages[s].is_input = 1;
					smap_put(&in_by_name, a->name, s);
				} else {
					s = new_storage(mc, mi, a);
				}
				smap_put(&sm->storages, a->name, s);
				if (lm_tensorkind_is_ext_output(a->kind)) {
					int o = smap_get(&out_by_name, a->name);
					if (o >= 0) {
						rc = lm_err(err, sm->path,
							    a->name, "external "
							    "output '%s' is "
							    "also declared by "
							    "%s", a->name,
							    mc->mods[mc->storages[o].mod].path);
						continue;
					}
					smap_put(&out_by_name, a->name, s);
					mc->storages[s].is_output = 1;
				}
				if (a->kind == LM_TK_CONST)
					rc = load_const(mc, mi, s, err);
			}
		}
	}
	/* a name-matched hand-off's input shares its output's storage */
	for (int mi = 0; owners.n && mi < mc->n_mods && !rc; mi++) {
		ls_smod *sm = &mc->mods[mi];
		for (int f = 0; f < sm->m->n_functions && !rc; f++) {
			const lm_function *fn = &sm->m->functions[f];
			for (int i = 0; i < fn->n_allocs && !rc; i++) {
				const lm_alloc *a = &fn->allocs[i], *o;
				int pm = ls_handoff_owner(&owners, mi, a);
				int s = pm < 0 ? -1 :
					smap_get(&mc->mods[pm].storages, a->name);
				if (pm < 0 || !is_dram_alloc(a))
					continue;
				if (s < 0) {
					rc = lm_err(err, sm->path, a->name,
						    "external input '%s' is "
						    "the external output of "
						    "%s, which is not a DRAM "
						    "allocation", a->name,
						    mc->mods[pm].path);
					break;
				}
				o = mc->storages[s].alloc;
				if (o->dtype != a->dtype ||
				    lm_alloc_elems(o) != lm_alloc_elems(a)) {
					rc = lm_err(err, sm->path, a->name,
						    "external input '%s' is "
						    "the external output of %s "
						    "with another dtype or "
						    "shape", a->name,
						    mc->mods[pm].path);
					break;
				}
				smap_put(&sm->storages, a->name, s);
			}
		}
	}
	for (int mi = 0; mi < mc->n_mods && !rc; mi++) {
		ls_smod *sm = &mc->mods[mi];
		for (int f = 0; f < sm->m->n_functions && !rc; f++) {
			const lm_function *fn = &sm->m->functions[f];
			for (int i = 0; i < fn->n_allocs && !rc; i++)
				if (is_dram_alloc(&fn->allocs[i]) &&
				    resolve_storage(mc, mi, &fn->allocs[i], 0,
						    err) < 0)
					rc = err->code ? err->code : LM_EINPUT;
		}
	}
	for (int s = 0; s < mc->n_storages && !rc; s++)
		if (mc->storages[s].is_input)
			rc = bind_input(mc, s, inputs, err);
	lm_strmap_free(&in_by_name);
	lm_strmap_free(&out_by_name);
	lm_strmap_free(&owners);
	return rc;
}

/* ---- functions ---------------------------------------------------------- */

/* A register slot for allocation al of module sm when it is a register (a
** REG memory location) not numbered yet. */
static void add_register(ls_machine *mc, ls_smod *sm, const lm_alloc *al)
{
	int is_reg = 0;
	for (int i = 0; i < al->n_memlocs; i++)
		is_reg |= al->memlocs[i].type == LM_MT_REG;
	if (!is_reg || !al->name || lm_strmap_lookup(&sm->regs, al->name))
		return;
	lm_grow(&mc->reg_allocs, &mc->cap_regs, mc->n_regs + 1,
		sizeof *mc->reg_allocs);
	mc->reg_allocs[mc->n_regs] = al;
	smap_put(&sm->regs, al->name, mc->n_regs);
	mc->n_regs++;
}

/* Does op head a structured loop (its body nested in it)? */
static int is_loop_op(lm_opcode op)
{
	return op == LM_OP_LOOP || op == LM_OP_DYNLOOP || op == LM_OP_DOWHILE;
}

/* Does op carry a body the simulator flattens after it (a loop's, a
** DMABlock's descriptors)? */
static int has_body(lm_opcode op)
{
	return is_loop_op(op) || op == LM_OP_DMABLOCK;
}

/* Is op in no engine's stream (a DMABlock, a descriptor: a DMATrigger
** runs them)? */
static int is_dma_body(lm_opcode op)
{
	return op == LM_OP_DMABLOCK || ls_op_is_desc(op);
}

/* Instructions of blocks bs, the bodies of their Loops included. */
static void count_insts(const lm_block *bs, int nb, int *n)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			(*n)++;
			if (has_body(in->op))
				count_insts(in->blocks, in->n_blocks, n);
		}
}

/*
** Per-function storage of the instructions' arrays: one allocation per
** element type, carved in program order (preparation is O(instructions)
** with few mallocs; a module may hold hundreds of thousands).
*/
typedef struct arena {
	ls_opnd *opnds;
	int *ints;
	int64_t *i64s;
	size_t n_opnds, n_ints, n_i64s;
} arena;

static void *carve(void *base, size_t *used, size_t n, size_t size)
{
	void *p = (char *)base + *used * size;
	*used += n;
	return p;
}

/*
** Is in on engine ALL one copy per engine, each on its engine's registers
** (the compiler's per-engine expansion)? The register instructions, the
** sync-only instructions, and the branches and no-ops every engine
** follows; the control-flow ops without an engine (Unassigned) are ALL,
** as the compiler defaults them.
*/
static int is_expanded_all(const lm_inst *in)
{
	switch (in->op) {
	case LM_OP_REGMOVE: case LM_OP_REGALU: case LM_OP_TCOMPLETION:
	case LM_OP_TENSORLOAD: case LM_OP_NOOP: case LM_OP_EVENTSEM:
	case LM_OP_GROUPRESET: case LM_OP_DRAIN:
		return in->engine == LM_ENG_ALL;
	case LM_OP_CMPBRANCH: case LM_OP_UBRANCH: case LM_OP_BRANCHHINT:
	case LM_OP_HALT:
		return in->engine == LM_ENG_ALL ||
		       in->engine == LM_ENG_UNASSIGNED;
	default:
		return 0;
	}
}

/* A join: AllEngineBarrier on ALL, Exit on ALL (its default). */
static int is_join_op(const lm_inst *in)
{
	return (in->op == LM_OP_AEBARRIER && in->engine == LM_ENG_ALL) ||
	       (in->op == LM_OP_EXIT && (in->engine == LM_ENG_ALL ||
					 in->engine == LM_ENG_UNASSIGNED));
}

/* Prepare one instruction of function fi (module mi); its dependencies
** are resolved later (prep_deps). */
/*
** The index operand of an indirect move (its one indirection_ins entry,
** read from the wire form and unfolded as the loader does the others)
** and IndirectCopy's num_valid_indices, into si's DMA-side state.
*/
static void prep_indirection(ls_machine *mc, int mi, const ls_sfunc *sf,
			     ls_sinst *si)
{
	const cJSON *ii = si->in->extra ? cJSON_GetObjectItemCaseSensitive(
		si->in->extra, "indirection_ins") : NULL;
	const cJSON *nv = si->in->extra ? cJSON_GetObjectItemCaseSensitive(
		si->in->extra, "num_valid_indices") : NULL;
	ls_sdq *dq = ls_dmablk_dq(si);
	const lm_alloc *al;
	lm_arg a;
	char msg[300];
	if (cJSON_IsNumber(nv))
		dq->n_valid = (int64_t)nv->valuedouble;
	if (!cJSON_IsArray(ii) || cJSON_GetArraySize(ii) != 1) {
		if (!si->fault)
			si->fault = lm_xasprintf("%s takes its indices as one "
				"indirection_ins operand (has %d)",
				lm_opcode_name(si->op), cJSON_IsArray(ii) ?
				cJSON_GetArraySize(ii) : 0);
		return;
	}
	if (lm_arg_from_json(&a, ii->child, msg, sizeof msg)) {
		if (!si->fault)
			si->fault = lm_xasprintf("indirection_ins[0]: %s", msg);
		return;
	}
	al = a.memsetref ? lm_strmap_lookup(&mc->mods[mi].allocs, a.memsetref)
			 : NULL;
	if (a.kind == LM_ARG_PHYSICAL_AP && !a.has_start_partition)
		lm_arg_unfold(&a, lm_arg_part_elems(&a, al ?
			lm_alloc_find_memloc(al, a.memref) : NULL));
	dq->idx = lm_xcalloc(1, sizeof *dq->idx);
	prep_opnd(mc, mi, sf, &a, dq->idx, &si->fault);
	lm_arg_clear(&a);
}

static void prep_inst(ls_machine *mc, int mi, int fi, const lm_inst *in,
		      ls_sinst *si, arena *ar)
{
	ls_smod *sm = &mc->mods[mi];
	ls_sfunc *sf = &mc->fns[fi];

	si->in = in;
	si->op = in->op;
	si->fn = fi;
	si->eng = engine_index(in);
	si->is_join = is_join_op(in);
	si->is_all = si->is_join || is_expanded_all(in);
	si->can_read_uninit = in->has_can_read_uninit && in->can_read_uninit;
	si->queue = si->qinst = si->target = si->group = -1;
	si->dq = NULL;
	si->n_ins = in->n_ins;
	si->n_outs = in->n_outs;
	si->ins = carve(ar->opnds, &ar->n_opnds, (size_t)in->n_ins,
			sizeof *si->ins);
	si->outs = carve(ar->opnds, &ar->n_opnds, (size_t)in->n_outs,
			 sizeof *si->outs);
	si->tblk = si->fblk = -1;
	if (in->op == LM_OP_REGMOVE || in->op == LM_OP_REGALU) {
		ls_reg_prepare(mc, mi, si);
	} else if (in->op == LM_OP_CMPBRANCH) {
		ls_cmp_prepare(mc, mi, si);
	} else if (in->op == LM_OP_TENSORLOAD || in->op == LM_OP_TENSORSAVE) {
		/* the tensor element as any operand, the registers apart */
		if (in->op == LM_OP_TENSORLOAD && in->n_ins == 1)
			prep_opnd(mc, mi, sf, &in->ins[0], &si->ins[0],
				  &si->fault);
		if (in->op == LM_OP_TENSORSAVE && in->n_outs == 1)
			prep_opnd(mc, mi, sf, &in->outs[0], &si->outs[0],
				  &si->fault);
		ls_tls_prepare(mc, mi, si);
	} else if (ls_opcode_executed(in->op) && in->op != LM_OP_NKIKERNEL) {
		for (int i = 0; i < in->n_ins; i++)
			prep_opnd(mc, mi, sf, &in->ins[i], &si->ins[i],
				  &si->fault);
		for (int i = 0; i < in->n_outs; i++)
			prep_opnd(mc, mi, sf, &in->outs[i], &si->outs[i],
				  &si->fault);
	}
	if (ls_op_is_indirect(in->op))
		prep_indirection(mc, mi, sf, si);
	ls_sync_prepare(mc, mi, in, &si->sy, &si->fault);
	if (in->queue)
		si->queue = smap_get(&sm->queues, in->queue);
	if (in->op == LM_OP_SWITCHQUEUE)
		si->qinst = smap_get(&sm->qinsts, in->instance_name);
	if (in->op == LM_OP_CALL)
		si->target = smap_get(&sm->funcs, in->target);
	if (in->op == LM_OP_NKIKERNEL) {
		si->target = smap_get(&sm->funcs, in->func);
		sf->n_callsites++;
	}
	if (in->op == LM_OP_COREBARRIER)
		si->group = add_group(mc, in->group ? in->group : S(in->name));
	if (lm_opcode_uses_queue(in->op) &&
	    si->queue < 0 && !si->fault)
		si->fault = lm_xasprintf("queue '%s' is unknown", S(in->queue));
	ls_cost_prepare(mc->arch, si);
}

/* State of the flattening walk of one function. */
typedef struct flat {
	ls_machine *mc;
	int mi, fi;
	arena ar;
	int k;                  /* next instruction index */
	int cap_loops;
} flat;

/* A Loop header at index h (its lm_inst in) opens loop sf->loops[id]. */
static int open_loop(flat *F, ls_sfunc *sf, const lm_inst *in, int h,
		     int parent)
{
	ls_sloop *l;
	int id = sf->n_loops;
	lm_grow(&sf->loops, &F->cap_loops, sf->n_loops + 1, sizeof *sf->loops);
	sf->n_loops++;
	l = &sf->loops[id];
	memset(l, 0, sizeof *l);
	l->hdr = h;
	l->parent = parent;
	l->depth = parent < 0 ? 0 : sf->loops[parent].depth + 1;
	if (parent >= 0)
		memcpy(l->chain, sf->loops[parent].chain,
		       sizeof l->chain);
	if (l->depth < LS_MAX_NEST)
		l->chain[l->depth] = id;
	l->axis = in->axis.name;
	l->lb = in->axis.lb;
	l->ub = in->axis.ub;
	l->stride = in->axis.stride;
	l->is_pass = l->lb == 0 && l->ub == 0 && l->stride == 0;
	if (in->op == LM_OP_DYNLOOP) {
		/* the verifier's contract: lb and stride constants, ub one
		   register term (ls_check_module for a module unverified) */
		l->kind = LS_LOOP_DYN;
		l->is_pass = 0;
		l->ub_e = in->axis.ub_e;
		if (!in->axis.lb_e || lm_affine_const(in->axis.lb_e, &l->lb))
			l->lb = 0;
		if (!in->axis.stride_e ||
		    lm_affine_const(in->axis.stride_e, &l->stride))
			l->stride = 0;
	} else if (in->op == LM_OP_LOOP && in->n_loop_regs > 0) {
		l->iv_regs = lm_xcalloc((size_t)in->n_loop_regs,
					sizeof *l->iv_regs);
		l->n_iv_regs = in->n_loop_regs;
		for (int i = 0; i < in->n_loop_regs; i++) {
			l->iv_regs[i] = ls_reg_slot(F->mc, F->mi,
						    in->loop_regs[i]);
			if (l->iv_regs[i] < 0 && !sf->insts[h].fault)
				sf->insts[h].fault = lm_xasprintf("registers: "
					"'%s' is no register allocation of the "
					"module", S(in->loop_regs[i]));
		}
	} else if (in->op == LM_OP_DOWHILE) {
		l->kind = LS_LOOP_DOWHILE;
		l->is_pass = 0;
		l->axis = NULL;
		l->cond = in->cond;
	}
	return id;
}

static char *prep_symbolic(ls_machine *mc, ls_sfunc *sf, ls_sinst *si,
			   int k, int is_out);
static void dyn_bounds(ls_machine *mc, ls_dyn *d);

/*
** The keys whose affine values the simulator evaluates at each issue (the
** values accepted: 0..hi): a Matmult's accumulation_flag (bits 0 and 1)
** and psum_zero_region (0: a start clears the region it writes), the
** can_read_uninit flag of the opcodes that read it.
*/
static const struct {
	lm_opmask ops;
	const char *key;
	int what;
	int64_t hi;
} affine_keys[] = {
	{ LM_OPM(MATMULT), "accumulation_flag", LS_DYN_ACC_FLAG, 3 },
	{ LM_OPM(MATMULT), "psum_zero_region", LS_DYN_PSUM_ZERO, 0 },
	{ LM_OPM(DMACOPY) | LM_OPM(LOAD) | LM_OPM(SAVE) | LM_OPM(TENSORCOPY) |
	  LM_OPM(ACTIVATION) | LM_OPM(TCDYNSRC) | LM_OPM(TCDYNDST),
	  "can_read_uninit", LS_DYN_UNINIT, 1 },
};

/* The values of si given as affine expressions (affine_keys, symbolic_ap
** addresses), prepared. */
static int prep_dyn(ls_machine *mc, ls_sfunc *sf, ls_sinst *si)
{
	const cJSON *v;
	lm_affine *e;
	ls_dyn *d;
	char err[200];
	int placed = 0;
	for (int k = 0; k < si->in->n_ins + si->in->n_outs; k++) {
		int is_out = k >= si->in->n_ins, i = is_out ? k - si->in->n_ins
							     : k;
		const lm_arg *a = is_out ? &si->in->outs[i] : &si->in->ins[i];
		char *why;
		if (a->kind != LM_ARG_OPAQUE || !is_symbolic_ap(a) ||
		    !ls_opcode_executed(si->op))
			continue;
		why = prep_symbolic(mc, sf, si, i, is_out);
		if (why && !si->fault)
			si->fault = why;
		else
			free(why);
		placed++;
	}
	for (size_t r = 0; si->in->extra && r < sizeof affine_keys /
	     sizeof *affine_keys; r++) {
		if (!(affine_keys[r].ops & ((lm_opmask)1 << si->op)))
			continue;
		v = cJSON_GetObjectItemCaseSensitive(si->in->extra,
						     affine_keys[r].key);
		if (!cJSON_IsObject(v))
			continue;
		if (lm_affine_from_json(&e, v, 2, err, sizeof err)) {
			if (!si->fault)
				si->fault = lm_xasprintf("%s: %s",
							 affine_keys[r].key,
							 err);
			return placed;
		}
		if (!si->dyn)
			si->dyn = lm_xcalloc(LS_MAX_DYN, sizeof *si->dyn);
		if (si->n_dyn == LS_MAX_DYN) {
			lm_affine_free(e);
			if (!si->fault)
				si->fault = lm_xasprintf("more than %d values "
					"evaluated per issue", LS_MAX_DYN);
			return placed;
		}
		d = &si->dyn[si->n_dyn++];
		memset(d, 0, sizeof *d);
		d->what = affine_keys[r].what;
		d->opnd = -1;
		d->lo = 0;
		d->hi = affine_keys[r].hi;
		ls_dyn_prepare(sf, si, d, e);
		lm_affine_free(e);
	}
	return placed;
}

/*
** The keys of register_ap j of instruction in (module mi): its register
** (d->reg), the mode (d->arch) and, into *addr, the expression its
** address is (the register, plus const_ap_offset in the offset mode).
** reg_ap_offset and reg_sub_tensor_id are the registers the compiler
** folded into the address: they must be registers, and are not added.
** NULL, or why it is not modelled.
*/
static char *prep_register_ap(ls_machine *mc, int mi, const lm_inst *in,
			      const cJSON *j, ls_dyn *d, cJSON **addr)
{
	static const char *const keys[] = { "kind", "ap", "dtype",
		"memsetref", "memref", "regref", "reg_ap_offset",
		"reg_sub_tensor_id", "const_ap_offset", "const_sub_tensor_id",
		"is_regloc_offset" };
	const cJSON *rr = cJSON_GetObjectItemCaseSensitive(j, "regref");
	const cJSON *co = cJSON_GetObjectItemCaseSensitive(j,
							   "const_ap_offset");
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(j,
							   "const_sub_tensor_id");
	const cJSON *io = cJSON_GetObjectItemCaseSensitive(j,
							   "is_regloc_offset");
	const char *prov[2] = { "reg_ap_offset", "reg_sub_tensor_id" };
	int slot, is_off = cJSON_IsTrue(io);
	double c = cJSON_IsNumber(co) ? co->valuedouble : 0;
	cJSON *leaf;
	(void)in;
	for (const cJSON *k = j->child; k; k = k->next) {
		size_t i = 0;
		while (i < sizeof keys / sizeof *keys && strcmp(keys[i],
								k->string))
			i++;
		if (i == sizeof keys / sizeof *keys)
			return lm_xasprintf("register_ap key '%s' is not "
					    "modelled by the simulator",
					    k->string);
	}
	if (!cJSON_IsString(rr) ||
	    (slot = ls_reg_slot(mc, mi, rr->valuestring)) < 0)
		return lm_xasprintf("register_ap regref %s%s%s is no register "
				    "allocation of the module",
				    cJSON_IsString(rr) ? "'" : "",
				    cJSON_IsString(rr) ? rr->valuestring
				    : "(absent)", cJSON_IsString(rr) ? "'" : "");
	for (int i = 0; i < 2; i++) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, prov[i]);
		if (p && !cJSON_IsNull(p) && (!cJSON_IsString(p) ||
		    ls_reg_slot(mc, mi, p->valuestring) < 0))
			return lm_xasprintf("register_ap %s must name a "
					    "register", prov[i]);
	}
	if (cs && !cJSON_IsNull(cs) &&
	    !(cJSON_IsNumber(cs) && cs->valuedouble == -1))
		return lm_xasprintf("register_ap const_sub_tensor_id other than "
				    "-1 (a sub-tensor chosen by id) is not "
				    "modelled");
	if (io && !cJSON_IsBool(io) && !cJSON_IsNull(io))
		return lm_xasprintf("register_ap is_regloc_offset must be true "
				    "or false");
	if (co && !cJSON_IsNull(co) &&
	    (!cJSON_IsNumber(co) || c != (double)(int64_t)c ||
	     c > 2147483647.0 || c < -2147483648.0))
		return lm_xasprintf("register_ap const_ap_offset must be a "
				    "32-bit integer");
	if (!is_off && c != 0)
		return lm_xasprintf("register_ap const_ap_offset %.17g with an "
				    "address register (is_regloc_offset false) "
				    "is not modelled", c);
	d->reg = mc->reg_allocs[slot]->name;
	d->arch = is_off ? LS_SP_NONE : -1; /* the space, once prepared */
	leaf = cJSON_CreateObject();
	cJSON_AddStringToObject(leaf, "kind", "IntRuntimeValueKind");
	cJSON_AddStringToObject(leaf, "regref", rr->valuestring);
	if (c == 0) {
		*addr = leaf;
	} else {
		cJSON *t = cJSON_CreateObject(), *terms = cJSON_CreateArray();
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "kind", "AffExprKind");
		cJSON_AddItemToObject(x, "idx", leaf);
		cJSON_AddNumberToObject(x, "coeff", 1);
		cJSON_AddItemToArray(terms, x);
		cJSON_AddItemToObject(t, "terms", terms);
		cJSON_AddNumberToObject(t, "c", c);
		*addr = t;
	}
	return NULL;
}

/*
** Operand k of si (is_out: of its outs), a symbolic_ap with one address:
** the start element offset in physical_ap's folded encoding, evaluated at
** each issue. Its physical form at offset 0 is prepared as the template
** (strides and sizes), the whole memory location is noted in the layout
** (any in-bounds offset is backed), and the address is prepared as a
** dynamic value. NULL, or the fault.
*/
static char *prep_register_ap(ls_machine *mc, int mi, const lm_inst *in,
			      const cJSON *j, ls_dyn *d, cJSON **addr);

static char *prep_symbolic(ls_machine *mc, ls_sfunc *sf, ls_sinst *si,
			   int k, int is_out)
{
	const lm_arg *a = is_out ? &si->in->outs[k] : &si->in->ins[k];
	ls_opnd *o = is_out ? &si->outs[k] : &si->ins[k];
	ls_smod *sm = &mc->mods[sf->mod];
	const cJSON *j = a->extra, *ap, *ad = NULL, *mr, *ms;
	cJSON *made = NULL;
	lm_affine *e;
	ls_dyn *d;
	ls_dyn rd;
	char err[200], *fault = NULL;
	int n, is_reg = is_kind(a, "register_ap");

	memset(&rd, 0, sizeof rd);
	if (is_reg && (fault = prep_register_ap(mc, sf->mod, si->in, j, &rd,
						&made)) != NULL)
		return fault;
	for (const cJSON *c = j->child; c && !is_reg; c = c->next)
		if (strcmp(c->string, "kind") && strcmp(c->string, "ap") &&
		    strcmp(c->string, "dtype") && strcmp(c->string, "addrs") &&
		    strcmp(c->string, "memsetref") &&
		    strcmp(c->string, "memref"))
			return lm_xasprintf("symbolic_ap key '%s' is not "
					    "modelled by the simulator",
					    c->string);
	ap = cJSON_GetObjectItemCaseSensitive(j, "ap");
	ms = cJSON_GetObjectItemCaseSensitive(j, "memsetref");
	mr = cJSON_GetObjectItemCaseSensitive(j, "memref");
	if (!is_reg) {
		ad = cJSON_GetObjectItemCaseSensitive(j, "addrs");
		if (!cJSON_IsArray(ad) || cJSON_GetArraySize(ad) != 1)
			return lm_xasprintf("symbolic_ap with %d addrs: the "
					    "simulator runs one (the start "
					    "element offset)", cJSON_IsArray(ad)
					    ? cJSON_GetArraySize(ad) : 0);
		ad = cJSON_GetArrayItem(ad, 0);
	} else {
		ad = made;
	}
	n = cJSON_IsArray(ap) ? cJSON_GetArraySize(ap) : 0;
	if (n < 1 || n > 64 || !cJSON_IsString(ms)) {
		cJSON_Delete(made);
		return lm_xasprintf("%s needs ap pairs and a memsetref",
				    is_reg ? "register_ap" : "symbolic_ap");
	}
	if (si->n_dyn == LS_MAX_DYN) {
		cJSON_Delete(made);
		return lm_xasprintf("more than %d symbolic_ap / register_ap "
				    "operands", LS_MAX_DYN - 1);
	}
	if (!si->dyn)
		si->dyn = lm_xcalloc(LS_MAX_DYN, sizeof *si->dyn);
	d = &si->dyn[si->n_dyn];
	memset(d, 0, sizeof *d);
	d->reg = rd.reg;
	d->arch = rd.arch;
	d->what = is_out ? LS_DYN_OUT_OFF : LS_DYN_IN_OFF;
	d->opnd = k;
	d->arg.kind = LM_ARG_PHYSICAL_AP;
	d->arg.dtype = a->dtype;
	d->arg.memsetref = ms->valuestring;
	d->arg.memref = cJSON_IsString(mr) ? mr->valuestring : ms->valuestring;
	d->arg.has_start_partition = 1;
	d->arg.n_ap = n;
	d->arg.ap = lm_xcalloc((size_t)n, sizeof *d->arg.ap);
	for (int i = 0; i < n; i++) {
		const cJSON *p = cJSON_GetArrayItem(ap, i);
		const cJSON *st = cJSON_GetArrayItem(p, 0);
		const cJSON *nm = cJSON_GetArrayItem(p, 1);
		if (!cJSON_IsNumber(st) || !cJSON_IsNumber(nm)) {
			free(d->arg.ap);
			cJSON_Delete(made);
			return lm_xasprintf("symbolic_ap ap[%d] is not a pair "
					    "[step, num]", i);
		}
		d->arg.ap[i].step = (int64_t)st->valuedouble;
		d->arg.ap[i].num = (int64_t)nm->valuedouble;
	}
	prep_opnd(mc, sf->mod, sf, &d->arg, o, &fault);
	if (!fault && is_reg && o->space == LS_SP_DRAM &&
	    !lm_opcode_is_dma(si->op) && si->op != LM_OP_TENSORLOAD)
		fault = lm_xasprintf("a register_ap in DRAM is modelled on "
				     "DMACopy, Load, Save and TensorLoad only");
	if (fault) {
		free(d->arg.ap);
		cJSON_Delete(made);
		return fault;
	}
	d->al = lm_strmap_lookup(&sm->allocs, d->arg.memsetref);
	d->loc = d->al ? lm_alloc_find_memloc(d->al, d->arg.memref) : NULL;
	if (d->arch < 0)
		d->arch = o->space;
	if (o->space == LS_SP_SB || o->space == LS_SP_PSUM) {
		ls_layout *l = o->space == LS_SP_SB ? &mc->sb_layout
						    : &mc->psum_layout;
		d->pe = lm_arg_part_elems(&d->arg, d->loc);
		if (d->loc->n_dims >= 2)
			layout_note(l, d->loc->addr, d->loc->addr +
				    d->loc->dims[1]);
	}
	if (lm_affine_from_json(&e, ad, 2, err, sizeof err)) {
		free(d->arg.ap);
		cJSON_Delete(made);
		return lm_xasprintf("%s: %s", is_reg ? "register_ap regref"
				    : "symbolic_ap addrs[0]", err);
	}
	cJSON_Delete(made);
	ls_dyn_prepare(sf, si, d, e);
	lm_affine_free(e);
	dyn_bounds(mc, d);
	si->n_dyn++;
	return NULL;
}

/* Is d's operand in bounds at start partition p and element offset e? */
static int dyn_ok(const ls_dyn *d, int64_t p, int64_t e)
{
	lm_arg a = d->arg;
	lm_geom g;
	a.start_partition = p;
	a.offset = e;
	return lm_arg_geometry(&g, &a, d->al, d->loc, NULL) == 0;
}

/* The largest x in [0, hi] with ok(x) (ok holds up to some x and fails
** beyond: the reach of an access grows with its offset), or -1. */
static int64_t dyn_max(const ls_dyn *d, int is_part, int64_t hi)
{
	int64_t lo = 0;
	if (!dyn_ok(d, 0, 0))
		return -1;
	while (lo < hi) {
		int64_t m = lo + (hi - lo + 1) / 2;
		if (is_part ? dyn_ok(d, m, 0) : dyn_ok(d, 0, m))
			lo = m;
		else
			hi = m - 1;
	}
	return lo;
}

/* The bounds of d's offsets (its template prepared). */
static void dyn_bounds(ls_machine *mc, ls_dyn *d)
{
	if (d->pe > 0) {
		d->pmax = dyn_max(d, 1, LM_PARTITIONS);
		d->emax = dyn_max(d, 0, d->pe);
	} else {
		int64_t n = 0;
		for (int s = 0; s < mc->n_storages; s++)
			if (mc->storages[s].alloc == d->al)
				n = mc->storages[s].bytes;
		d->pmax = 0;
		d->emax = dyn_max(d, 0, n > 0 ? n : INT32_MAX);
	}
}

/* "(SB partition 4, byte 0) puts the access outside memory location 'x'
** (partitions 0..3, bytes 0..2047)": register_ap d's address v (arch:
** an arch address, else an element offset) out of bounds. */
static char *regap_why(const ls_dyn *d, int64_t v)
{
	const lm_memloc *l = d->loc;
	int64_t ps = d->arch == LS_SP_SB ? 0x40000 : 0x8000;
	char at[120], ext[160];
	if (d->arch == LS_SP_SB || d->arch == LS_SP_PSUM)
		snprintf(at, sizeof at, "%s partition %lld, byte %lld",
			 d->arch == LS_SP_SB ? "SB" : "PSUM",
			 (long long)(v >= 0 ? v / ps : -1),
			 (long long)(v >= 0 ? v % ps : v));
	else if (d->arch == LS_SP_DRAM)
		snprintf(at, sizeof at, "DRAM byte %lld", (long long)v);
	else
		snprintf(at, sizeof at, "element offset %lld", (long long)v);
	if (l && l->n_dims >= 2 && d->pe > 0)
		snprintf(ext, sizeof ext, "partitions %lld..%lld, bytes "
			 "%lld..%lld", (long long)l->base,
			 (long long)(l->base + l->dims[0] - 1),
			 (long long)l->addr,
			 (long long)(l->addr + l->dims[1] - 1));
	else
		snprintf(ext, sizeof ext, "the access fits starting at "
			 "elements 0..%lld", (long long)d->emax);
	return lm_xasprintf("(%s) puts the access outside memory location "
			    "'%s' (%s)", at, l && l->name ? l->name : "", ext);
}

/* register_ap d's arch address v as an element offset of its memory
** location (folded encoding) into *e: 0, or -1 when it is none. */
static int arch_offset(const ls_dyn *d, int64_t v, int64_t *e)
{
	int64_t es = lm_dtype_size(d->arg.dtype), ps, p, b;
	if (es <= 0 || v < 0 || !d->loc)
		return -1;
	if (d->arch == LS_SP_DRAM) {
		if (v % es)
			return -1;
		*e = v / es;
		return 0;
	}
	ps = d->arch == LS_SP_SB ? 0x40000 : 0x8000;
	p = v / ps - d->loc->base;
	b = v % ps - d->loc->addr;
	if (p < 0 || b < 0 || b % es || b / es >= d->pe)
		return -1;
	*e = p * d->pe + b / es;
	return 0;
}

int ls_dyn_place(ls_machine *mc, const ls_dyn *d, int64_t v, ls_opnd *o,
		 char **why)
{
	int64_t p = 0, e = v, v0 = v;
	lm_arg a = d->arg;
	lm_geom g;
	if (d->reg && d->arch != LS_SP_NONE) {
		int64_t x;
		if (arch_offset(d, v, &x)) {
			*why = regap_why(d, v);
			return -1;
		}
		e = v = x;
	}
	if (d->pe > 0 && v >= 0) {
		p = v / d->pe;
		e = v % d->pe;
	}
	if (v < 0 || p > d->pmax || e > d->emax) {
		a.start_partition = p;
		a.offset = e;
		if (d->reg)
			*why = regap_why(d, v0);
		else if (v < 0 || !lm_arg_geometry(&g, &a, d->al, d->loc, why))
			*why = lm_xasprintf("%s", v < 0 ? "a negative offset"
					    : "out of bounds");
		return -1;
	}
	if (d->pe > 0) {
		const ls_layout *l = o->space == LS_SP_SB ? &mc->sb_layout
							   : &mc->psum_layout;
		o->part = d->loc->base + p;
		o->pstart = d->loc->addr + e * o->esize;
		o->off = o->part * l->pb + layout_map(l, o->pstart);
	} else {
		o->off = e * o->esize;
	}
	return 0;
}

/* The index of the function's block named name, or -1. */
static int block_index(const ls_sfunc *sf, const char *name)
{
	for (int b = 0; name && b < sf->f->n_blocks; b++)
		if (sf->f->blocks[b].name &&
		    strcmp(sf->f->blocks[b].name, name) == 0)
			return b;
	return -1;
}

/* The blocks branch si goes to (a branch in a loop's body: a fault). */
static void prep_branch(ls_sfunc *sf, ls_sinst *si)
{
	const lm_inst *in = si->in;
	const char *to = in->op == LM_OP_UBRANCH ? in->branch_target
						 : in->on_true;
	sf->is_cfg = 1;
	if (si->loop >= 0) {
		if (!si->fault)
			si->fault = lm_xasprintf("%s inside a loop's body is not "
						 "modelled", lm_opcode_name(in->op));
		return;
	}
	si->tblk = block_index(sf, to);
	if (in->op == LM_OP_CMPBRANCH)
		si->fblk = block_index(sf, in->on_false);
	if (!si->fault && (si->tblk < 0 ||
			   (in->op == LM_OP_CMPBRANCH && si->fblk < 0)))
		si->fault = lm_xasprintf("%s '%s' names no block of function "
					 "'%s'", in->op == LM_OP_UBRANCH ? "target"
					 : si->tblk < 0 ? "on_true" : "on_false",
					 S(si->tblk < 0 ? to : in->on_false),
					 S(sf->f->name));
}

/* Flatten blocks bs (inside loop `loop`, -1: none; blk: the function's
** block they are in, -1: bs are the function's blocks) into sf->insts. */
static void flatten(flat *F, ls_sfunc *sf, const lm_block *bs, int nb,
		    int loop, int blk)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			int h = F->k++;
			ls_sinst *si = &sf->insts[h];
			memset(si, 0, sizeof *si);
			prep_inst(F->mc, F->mi, F->fi, in, si, &F->ar);
			si->loop = loop;
			si->heads = -1;
			si->blk = blk < 0 ? b : blk;
			if (in->op == LM_OP_CMPBRANCH || in->op == LM_OP_UBRANCH)
				prep_branch(sf, si);
			/* a symbolic operand is placed only now: its bytes
			   and elements enter the cost then */
			if (prep_dyn(F->mc, sf, si) > 0)
				ls_cost_prepare(F->mc->arch, si);
			if (in->op == LM_OP_DMABLOCK) {
				flatten(F, sf, in->blocks, in->n_blocks, loop,
					si->blk);
				ls_dmablk_body(si, F->k);
				continue;
			}
			if (!is_loop_op(in->op))
				continue;
			si->heads = open_loop(F, sf, in, h, loop);
			if (!si->fault && sf->loops[si->heads].kind ==
			    LS_LOOP_DYN && (!sf->loops[si->heads].ub_e ||
					    sf->loops[si->heads].stride <= 0))
				si->fault = lm_xasprintf("DynamicForLoop axis: "
					"needs a constant lb, a constant stride "
					"> 0 and an ub");
			if (!si->fault && sf->loops[si->heads].kind ==
			    LS_LOOP_DOWHILE && !sf->loops[si->heads].cond)
				si->fault = lm_xasprintf("DoWhile: cond must be "
					"an expression");
			if (sf->loops[si->heads].depth >= LS_MAX_NEST &&
			    !si->fault)
				si->fault = lm_xasprintf("Loops nested more "
					"than %d deep", LS_MAX_NEST);
			flatten(F, sf, in->blocks, in->n_blocks, si->heads,
				si->blk);
			sf->loops[si->heads].end = F->k;
		}
}

/* The construct of the body of loop `lp` (-1: top level) that holds
** instruction i: i itself or the header of a loop around it. */
static int construct_in(const ls_sfunc *sf, int i, int lp)
{
	int l = sf->insts[i].heads >= 0 ? sf->insts[i].heads
					 : sf->insts[i].loop;
	int at = i;
	while (l >= 0 && l != lp) {
		at = sf->loops[l].hdr;
		l = sf->loops[l].parent;
	}
	return at;
}

/* The innermost loop enclosing both i and j (-1: none). */
static int common_loop(const ls_sfunc *sf, int i, int j)
{
	for (int a = sf->insts[i].loop; a >= 0; a = sf->loops[a].parent)
		for (int b = sf->insts[j].loop; b >= 0; b = sf->loops[b].parent)
			if (a == b)
				return a;
	return -1;
}

/* The dependency of b on a (is_lc: loop-carried) in the rule's form. */
static ls_sdep make_dep(const ls_sfunc *sf, int b, int a, int is_lc)
{
	ls_sdep d;
	int ca, cb;
	d.a = a;
	d.loop = common_loop(sf, a, b);
	ca = construct_in(sf, a, d.loop);
	cb = construct_in(sf, b, d.loop);
	d.x = -1;
	if (d.loop < 0 || (!is_lc && ca < cb))
		d.x = sf->insts[ca].heads >= 0 ? sf->loops[sf->insts[ca].heads].end
					       : ca + 1;
	return d;
}

/* Instructions a dependency on i stands for: i, or a Loop's body. */
static int dep_span(const ls_sfunc *sf, int i, int *lo, int *hi)
{
	if (sf->insts[i].heads < 0) {
		*lo = i;
		*hi = i + 1;
		return 1;
	}
	*lo = i + 1;
	*hi = sf->loops[sf->insts[i].heads].end;
	return 0;
}

/*
** Resolve the dependencies (and loop-carried dependencies) of every
** instruction of sf: a Loop named stands for every instruction of its
** body (Loop headers excluded: they do not complete).
*/
static void prep_deps(ls_sfunc *sf)
{
	size_t n = 0;
	ls_sdep *all;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			all = lm_xcalloc(n + 1, sizeof *all);
			sf->deps = all;
			n = 0;
		}
		for (int b = 0; b < sf->n; b++) {
			ls_sinst *si = &sf->insts[b];
			const lm_inst *in = si->in;
			if (pass == 1) {
				si->deps = all + n;
				si->n_deps = 0;
			}
			for (int k = 0; k < in->n_deps + in->n_lc_deps; k++) {
				int is_lc = k >= in->n_deps;
				const char *nm = is_lc ? in->lc_deps[k - in->n_deps]
						       : in->deps[k];
				int a = smap_get(&sf->index, nm), lo, hi;
				if (a < 0) {
					if (pass == 0 && !si->fault)
						si->fault = lm_xasprintf(
							"dependency '%s' is not "
							"an instruction the "
							"simulator runs in this "
							"function", S(nm));
					continue;
				}
				dep_span(sf, a, &lo, &hi);
				for (int t = lo; t < hi; t++) {
					if (sf->insts[t].heads >= 0)
						continue;
					if (pass == 0) {
						n++;
						continue;
					}
					si->deps[si->n_deps++] = make_dep(sf, b,
								t, is_lc);
					/* an expanded ALL instruction: every
					   engine's copy, by the engines'
					   cursors; a join runs once */
					sf->insts[t].is_target =
						!sf->insts[t].is_all ||
						sf->insts[t].is_join;
					sf->has_targets = 1;
				}
				if (pass == 0 && is_lc && !si->fault &&
				    common_loop(sf, a, b) < 0)
					si->fault = lm_xasprintf("loop-carried "
						"dependency on '%s' outside a "
						"common loop is not modelled",
						S(nm));
			}
			if (pass == 1)
				n += (size_t)si->n_deps;
		}
	}
}

/* Is i an item every engine's stream holds (a descend point, a queue
** switch, a Break, a top-level Return of a function with branches)? */
static int is_passive(const ls_sfunc *sf, const ls_sinst *si)
{
	return si->op == LM_OP_CALL || si->op == LM_OP_NKIKERNEL ||
	       si->op == LM_OP_SWITCHQUEUE || si->op == LM_OP_BREAK ||
	       si->op == LM_OP_RESETQUEUE ||
	       (si->op == LM_OP_RETURN && sf->is_cfg && si->loop < 0);
}

/*
** The engine streams of sf and each loop's engines: a loop holds an
** engine when its body holds an instruction of that engine or a passive
** item (bottom-up, nested loops included).
*/
static void prep_streams(ls_sfunc *sf)
{
	sf->n_run = sf->n;
	/* with branches, a Return ends the function where it is reached */
	for (int i = 0; i < sf->n && !sf->is_cfg; i++)
		if (sf->insts[i].op == LM_OP_RETURN && sf->insts[i].loop < 0) {
			sf->n_run = i + 1;
			break;
		}
	for (int i = sf->n - 1; i >= 0; i--) {
		const ls_sinst *si = &sf->insts[i];
		unsigned m;
		if (si->heads >= 0)
			m = sf->loops[si->heads].engmask;
		else if (si->op == LM_OP_BREAK || is_dma_body(si->op))
			m = 0;
		else if (is_passive(sf, si) || si->is_all)
			m = (1u << LS_ENGINES) - 1;
		else
			m = 1u << si->eng;
		if (si->loop >= 0)
			sf->loops[si->loop].engmask |= m;
		if (is_passive(sf, si))
			sf->has_calls |= si->op == LM_OP_CALL ||
					 si->op == LM_OP_NKIKERNEL;
	}
	for (int e = 0; e < LS_ENGINES; e++) {
		int n = 0;
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 1)
				sf->stream[e] = lm_xcalloc((size_t)n + 1,
							   sizeof(int));
			n = 0;
			for (int i = 0; i < sf->n_run; i++) {
				const ls_sinst *si = &sf->insts[i];
				int in_s;
				if (si->op == LM_OP_DMABLOCK) {
					i = si->dq->end - 1;
					continue;
				}
				in_s = si->heads >= 0 ?
					(sf->loops[si->heads].engmask >> e & 1) :
					is_passive(sf, si) || si->is_all ||
					si->eng == e;
				if (!in_s) {
					if (si->heads >= 0)
						i = sf->loops[si->heads].end - 1;
					continue;
				}
				if (pass == 1)
					sf->stream[e][n] = i;
				n++;
			}
		}
		sf->n_stream[e] = n;
		/* the stream position of each block's first item */
		sf->bpos[e] = lm_xcalloc((size_t)sf->n_blocks + 1, sizeof(int));
		for (int b = 0, p = 0; b <= sf->n_blocks; b++) {
			while (p < n && sf->insts[sf->stream[e][p]].blk < b)
				p++;
			sf->bpos[e][b] = p;
		}
		/* the stream position after each loop's body */
		for (int l = 0; l < sf->n_loops; l++) {
			int p = 0;
			while (p < n && sf->stream[e][p] < sf->loops[l].end)
				p++;
			sf->loops[l].skip_pos[e] = p;
		}
	}
}

/* The sizes of the arrays the instructions of bs (bodies included) need. */
static void size_insts(const lm_block *bs, int nb, size_t *no, size_t *ni,
		       size_t *n64, int *has_deps)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			*no += (size_t)in->n_ins + (size_t)in->n_outs;
			*ni += (size_t)in->n_wait + (size_t)in->n_update;
			*n64 += (size_t)in->n_wait;
			*has_deps |= in->n_deps > 0 || in->n_lc_deps > 0;
			if (has_body(in->op))
				size_insts(in->blocks, in->n_blocks, no, ni,
					   n64, has_deps);
		}
}

/* Name -> flattened index for the instructions of bs from *k on. */
static void index_names(ls_sfunc *sf, const lm_block *bs, int nb, int *k)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			/* DMA blocks and descriptors run when a trigger fires
			   them: a dependency names the trigger */
			if (in->name && !is_dma_body(in->op))
				smap_put(&sf->index, in->name, *k);
			(*k)++;
			if (has_body(in->op))
				index_names(sf, in->blocks, in->n_blocks, k);
		}
}

/* Flatten and prepare function fi (module mi) from sf->f. */
static void prep_function(ls_machine *mc, int mi, int fi)
{
	ls_sfunc *sf = &mc->fns[fi];
	const lm_function *fn = sf->f;
	size_t no = 0, ni = 0, n64 = 0;
	int n = 0, k = 0, has_deps = 0;
	flat F;
	count_insts(fn->blocks, fn->n_blocks, &n);
	memset(&F, 0, sizeof F);
	sf->n = n;
	sf->insts = lm_xcalloc((size_t)n + 1, sizeof *sf->insts);
	size_insts(fn->blocks, fn->n_blocks, &no, &ni, &n64, &has_deps);
	/* the name index is only needed to resolve dependencies */
	if (has_deps)
		index_names(sf, fn->blocks, fn->n_blocks, &k);
	F.mc = mc;
	F.mi = mi;
	F.fi = fi;
	sf->opnds = F.ar.opnds = lm_xcalloc(no + 1, sizeof *F.ar.opnds);
	sf->ints = F.ar.ints = lm_xcalloc(ni + 1, sizeof *F.ar.ints);
	sf->i64s = F.ar.i64s = lm_xcalloc(n64 + 1, sizeof *F.ar.i64s);
	flatten(&F, sf, fn->blocks, fn->n_blocks, -1, -1);
	sf->n_blocks = fn->n_blocks;
	sf->bnames = lm_xcalloc((size_t)fn->n_blocks + 1, sizeof *sf->bnames);
	for (int b = 0; b < fn->n_blocks; b++)
		sf->bnames[b] = fn->blocks[b].name;
	ls_dmablk_prepare(mc, mi, sf);
	prep_deps(sf);
	prep_streams(sf);
}

/* Flatten and prepare the functions of module mi. */
static void prep_functions(ls_machine *mc, int mi)
{
	ls_smod *sm = &mc->mods[mi];
	for (int f = 0; f < sm->m->n_functions; f++)
		prep_function(mc, mi, sm->fn_base + f);
}

/* ---- NKI call sites (IT55) ------------------------------------------------ */

/* Deepest nesting of NKI kernels calling kernels that is prepared. */
#define MAX_NKI_DEPTH 32

typedef struct caller_names {
	const ls_sfunc *caller;
	const ls_smod *sm;
} caller_names;

/* A caller allocation by name, through the caller's own bindings when it
** is a call site. */
static const lm_alloc *find_caller_alloc(void *ctx, const char *name)
{
	const caller_names *c = ctx;
	const char *r;
	if (c->caller->is_callsite &&
	    (r = lm_strmap_lookup(&c->caller->bind_allocs, name)))
		name = r;
	return lm_strmap_lookup(&c->sm->allocs, name);
}

/*
** Bind the formals of call si (an IT55 of function cf) in the new call
** site nf: formal allocation -> caller allocation, formal memory location
** -> the caller's memory location at the same position (as
** InlineNKIKernel rebinds). When cf is itself a call site, the caller's
** names go through cf's bindings first. The rule is lm_it55_bind's, the
** one InlineNKIKernel applies. Returns NULL or a fault message.
*/
static char *bind_formals(ls_machine *mc, int cf, const lm_inst *in,
			  ls_sfunc *nf)
{
	caller_names cn;
	const lm_function *k = nf->f;
	int n = in->n_func_args + in->n_func_outs, nb, rc;
	lm_it55_binding *b = n ? lm_xcalloc((size_t)n, sizeof *b) : NULL;
	char *why = NULL;

	cn.caller = &mc->fns[cf];
	cn.sm = &mc->mods[cn.caller->mod];
	rc = lm_it55_bind(in, k, find_caller_alloc, &cn, b, &nb, &why);
	if (rc == LM_IT55_MISMATCH) {
		const lm_kv *kv = nb < in->n_func_args ? &in->func_args[nb]
			: &in->func_outs[nb - in->n_func_args];
		const lm_alloc *fa = &k->allocs[b[nb].formal];
		const lm_alloc *ca = b[nb].caller;
		why = lm_xasprintf("cannot bind formal '%s' (%s, %lld "
				   "elements) to '%s' (%s, %lld "
				   "elements): dtype, size or memory "
				   "differ", S(kv->key),
				   lm_dtype_name(fa->dtype),
				   (long long)lm_alloc_elems(fa),
				   S(ca->name), lm_dtype_name(ca->dtype),
				   (long long)lm_alloc_elems(ca));
	}
	for (int i = 0; !rc && i < nb; i++) {
		const lm_alloc *fa = &k->allocs[b[i].formal];
		const lm_alloc *ca = b[i].caller;
		lm_strmap_put(&nf->bind_allocs, fa->name, (void *)ca->name);
		for (int l = 0; l < fa->n_memlocs; l++)
			lm_strmap_put(&nf->bind_locs, fa->memlocs[l].name,
				      (void *)ca->memlocs[l < ca->n_memlocs ? l
							  : 0].name);
	}
	free(b);
	return why;
}

/*
** Give every IT55 its own prepared copy of the kernel function (a call
** site) with the call's argument maps applied, and point the call's
** target at it. Call sites inside call sites are handled as the loop
** reaches them (mc->fns grows while it runs).
*/
static void prep_callsites(ls_machine *mc)
{
	for (int f = 0; f < mc->n_fns; f++) {
		if (mc->fns[f].n_callsites == 0)
			continue;
		for (int i = 0; i < mc->fns[f].n; i++) {
			ls_sinst *si = &mc->fns[f].insts[i]; /* array is stable */
			int mi = mc->fns[f].mod, depth = mc->fns[f].depth;
			ls_sfunc *nf;
			char *why;
			int nfi;
			if (si->op != LM_OP_NKIKERNEL || si->fault)
				continue;
			if (si->target < 0) {
				si->fault = lm_xasprintf("NKIKernel func '%s' "
					"is not a function of the module",
					S(si->in->func));
				continue;
			}
			if (depth >= MAX_NKI_DEPTH) {
				si->fault = lm_xasprintf("NKI kernels call "
					"each other more than %d levels deep",
					MAX_NKI_DEPTH);
				continue;
			}
			lm_grow(&mc->fns, &mc->cap_fns, mc->n_fns + 1,
				sizeof *mc->fns);
			nfi = mc->n_fns++;
			nf = &mc->fns[nfi];
			memset(nf, 0, sizeof *nf);
			nf->f = mc->fns[si->target].f;
			nf->mod = mi;
			nf->core = -1;
			nf->is_callsite = 1;
			nf->depth = depth + 1;
			lm_strmap_init(&nf->index);
			lm_strmap_init(&nf->bind_allocs);
			lm_strmap_init(&nf->bind_locs);
			why = bind_formals(mc, f, si->in, nf);
			if (why) {
				si->fault = why;
				continue; /* nf stays empty (n = 0) */
			}
			prep_function(mc, mi, nfi);
			si->target = nfi;
		}
	}
}

/*
** The instance Calls of a linked dispatcher (a modular link, docs/linker.md):
** each gets its own prepared copy of its definition's function with the
** Call's `arguments` applied -- parameter -> the instance's tensor, by
** the rule of an IT55 call site -- tagged with the Call's neuron_core_id,
** the core the dispatcher launches it on.
*/
static void prep_instance_calls(ls_machine *mc)
{
	for (int f = 0; f < mc->n_fns; f++) {
		if (!mc->fns[f].is_dispatcher)
			continue;
		for (int i = 0; i < mc->fns[f].n; i++) {
			ls_sinst *si = &mc->fns[f].insts[i]; /* array is stable */
			const cJSON *ex = si->in->extra, *core, *args, *a;
			lm_inst call;
			ls_sfunc *nf;
			int nfi, n = 0;
			char *why;
			core = ex ? cJSON_GetObjectItemCaseSensitive(ex,
				"neuron_core_id") : NULL;
			if (si->op != LM_OP_CALL || !core || si->fault ||
			    si->target < 0)
				continue;
			args = cJSON_GetObjectItemCaseSensitive(ex, "arguments");
			call = *si->in;
			call.n_func_outs = 0;
			call.func_outs = NULL;
			call.func_args = lm_xcalloc((size_t)cJSON_GetArraySize(
				args) + 1, sizeof *call.func_args);
			cJSON_ArrayForEach(a, args)
				if (cJSON_IsString(a)) {
					call.func_args[n].key = a->string;
					call.func_args[n++].value = a->valuestring;
				}
			call.n_func_args = n;
			lm_grow(&mc->fns, &mc->cap_fns, mc->n_fns + 1,
				sizeof *mc->fns);
			nfi = mc->n_fns++;
			nf = &mc->fns[nfi];
			memset(nf, 0, sizeof *nf);
			nf->f = mc->fns[si->target].f;
			nf->mod = mc->fns[f].mod;
			nf->core = (int64_t)core->valuedouble;
			nf->is_callsite = 1;
			lm_strmap_init(&nf->index);
			lm_strmap_init(&nf->bind_allocs);
			lm_strmap_init(&nf->bind_locs);
			why = bind_formals(mc, f, &call, nf);
			free(call.func_args);
			if (why) {
				si->fault = why;
				continue;
			}
			prep_function(mc, nf->mod, nfi);
			si->target = nfi;
		}
	}
}

/* Place every SB / PSUM operand of the run in the compact layouts. */
static void apply_layouts(ls_machine *mc)
{
	layout_build(&mc->sb_layout);
	layout_build(&mc->psum_layout);
	mc->sb_part_bytes = mc->sb_layout.pb;
	mc->psum_part_bytes = mc->psum_layout.pb;
	for (int f = 0; f < mc->n_fns; f++)
		for (int i = 0; i < mc->fns[f].n; i++) {
			ls_sinst *si = &mc->fns[f].insts[i];
			for (int k = 0; k < si->n_ins + si->n_outs; k++) {
				ls_opnd *o = k < si->n_ins ? &si->ins[k]
					     : &si->outs[k - si->n_ins];
				if (o->space == LS_SP_SB ||
				    o->space == LS_SP_PSUM)
					layout_apply(mc, o);
			}
			if (si->dq && si->dq->idx &&
			    (si->dq->idx->space == LS_SP_SB ||
			     si->dq->idx->space == LS_SP_PSUM))
				layout_apply(mc, si->dq->idx);
		}
}

/* ---- the machine -------------------------------------------------------- */

int ls_machine_new(ls_machine **out, lm_module *const *mods, int n_mods,
		   int multi, const ls_tensors *inputs,
		   const lm_fileset *files, lm_error *err)
{
	ls_machine *mc;
	int rc = 0;

	*out = NULL;
	if (n_mods < 1)
		return lm_err(err, "", "", "no module to run");
	/* refuse every key that would change a result and is not modelled */
	for (int mi = 0; mi < n_mods; mi++)
		if ((rc = ls_check_module(mods[mi], err)) != 0)
			return rc;
	mc = lm_xcalloc(1, sizeof *mc);
	mc->files = files;
	mc->multi = multi;
	lm_strmap_init(&mc->group_index);
	mc->arch = lm_arch_get(mods[0]->arch);
	if (!mc->arch) {
		rc = lm_err(err, mods[0]->path, "module", "unknown arch '%s'",
			    S(mods[0]->arch));
		goto fail;
	}
	mc->sb_layout.arch_pb = mc->arch->sbuf_bytes;
	mc->psum_layout.arch_pb = mc->arch->psum_bytes;
	mc->sb_part_bytes = mc->arch->sbuf_bytes;
	mc->psum_part_bytes = mc->arch->psum_bytes;
	mc->n_mods = n_mods;
	mc->mods = lm_xcalloc((size_t)n_mods, sizeof *mc->mods);
	for (int mi = 0; mi < n_mods; mi++) {
		ls_smod *sm = &mc->mods[mi];
		const lm_module *m = mods[mi];
		sm->m = m;
		sm->path = m->path && *m->path ? m->path : lm_module_display_name(m);
		sm->core = lm_module_core_id(m);
		lm_strmap_init(&sm->sems);
		lm_strmap_init(&sm->queues);
		lm_strmap_init(&sm->qinsts);
		lm_strmap_init(&sm->funcs);
		lm_strmap_init(&sm->storages);
		lm_strmap_init(&sm->allocs);
		lm_strmap_init(&sm->regs);
		if (lm_arch_get(m->arch) != mc->arch) {
			rc = lm_err(err, sm->path, "module", "arch '%s' differs "
				    "from '%s' of %s", S(m->arch),
				    mc->arch->name, mc->mods[0].path);
			goto fail;
		}
		if (sm->core < 0 || sm->core >= LS_MAX_CORES) {
			rc = lm_err(err, sm->path, "module", "neuron_core_id "
				    "%lld is outside [0, %d)",
				    (long long)sm->core, LS_MAX_CORES);
			goto fail;
		}
		for (int j = 0; j < mi && n_mods > 1; j++)
			if (mc->mods[j].core == sm->core) {
				rc = lm_err(err, sm->path, "module", "core %lld "
					    "is also the core of %s",
					    (long long)sm->core,
					    mc->mods[j].path);
				goto fail;
			}
		if ((rc = register_sync(mc, mi, err)))
			goto fail;
		sm->fn_base = mc->n_fns;
		sm->n_fns = m->n_functions;
		for (int f = 0; f < m->n_functions; f++) {
			const lm_function *fn = &m->functions[f];
			ls_sfunc *sf;
			lm_grow(&mc->fns, &mc->cap_fns, mc->n_fns + 1,
				sizeof *mc->fns);
			sf = &mc->fns[mc->n_fns];
			memset(sf, 0, sizeof *sf);
			sf->f = fn;
			sf->mod = mi;
			sf->core = fn->has_core_id ? fn->neuron_core_id : -1;
			sf->is_dispatcher = fn->kind == LM_FK_DISPATCHER;
			lm_strmap_init(&sf->index);
			lm_strmap_init(&sf->bind_allocs);
			lm_strmap_init(&sf->bind_locs);
			smap_put(&sm->funcs, fn->name, mc->n_fns);
			mc->n_fns++;
			for (int i = 0; i < fn->n_allocs; i++) {
				lm_strmap_put(&sm->allocs, fn->allocs[i].name,
					      (void *)&fn->allocs[i]);
				add_register(mc, sm, &fn->allocs[i]);
			}
		}
	}
	rc = setup_storages(mc, inputs, err);
	mc->files = NULL; /* borrowed for the Const files only */
	if (rc)
		goto fail;
	for (int mi = 0; mi < n_mods; mi++)
		prep_functions(mc, mi);
	prep_instance_calls(mc);
	prep_callsites(mc);
	apply_layouts(mc);
	*out = mc;
	return 0;
fail:
	ls_machine_free(mc);
	return rc;
}

void ls_machine_free(ls_machine *mc)
{
	if (!mc)
		return;
	for (int f = 0; f < mc->n_fns; f++) {
		ls_sfunc *sf = &mc->fns[f];
		for (int i = 0; i < sf->n; i++) {
			free(sf->insts[i].fault);
			for (int d = 0; d < sf->insts[i].n_dyn; d++) {
				lm_affine_free(sf->insts[i].dyn[d].expr);
				free(sf->insts[i].dyn[d].arg.ap);
			}
			free(sf->insts[i].dyn);
			free(sf->insts[i].reg);
			ls_sync_free(&sf->insts[i].sy);
			ls_dmablk_free(&sf->insts[i]);
		}
		free(sf->insts);
		free(sf->deps);
		for (int l = 0; l < sf->n_loops; l++)
			free(sf->loops[l].iv_regs);
		free(sf->loops);
		for (int e = 0; e < LS_ENGINES; e++) {
			free(sf->stream[e]);
			free(sf->bpos[e]);
		}
		free(sf->bnames);
		free(sf->opnds);
		free(sf->ints);
		free(sf->i64s);
		lm_strmap_free(&sf->index);
		lm_strmap_free(&sf->bind_allocs);
		lm_strmap_free(&sf->bind_locs);
	}
	free(mc->fns);
	for (int mi = 0; mi < mc->n_mods; mi++) {
		ls_smod *sm = &mc->mods[mi];
		lm_strmap_free(&sm->sems);
		lm_strmap_free(&sm->queues);
		lm_strmap_free(&sm->qinsts);
		lm_strmap_free(&sm->funcs);
		lm_strmap_free(&sm->storages);
		lm_strmap_free(&sm->allocs);
		lm_strmap_free(&sm->regs);
		free(sm->slot_id);
		free(sm->slot_group);
		free(sm->slot_inst_fn);
		free(sm->slot_inst_idx);
	}
	free(mc->mods);
	free(mc->sems);
	for (int q = 0; q < mc->n_queues; q++)
		free(mc->queues[q].insts);
	free(mc->queues);
	free(mc->qinsts);
	free(mc->trigs);
	for (int s = 0; s < mc->n_storages; s++) {
		free(mc->storages[s].data);
		free(mc->storages[s].init);
		free(mc->storages[s].own_copy);
	}
	free(mc->storages);
	for (int g = 0; g < mc->n_groups; g++)
		free(mc->groups[g]);
	free(mc->groups);
	lm_strmap_free(&mc->group_index);
	layout_free(&mc->sb_layout);
	layout_free(&mc->psum_layout);
	ls_regs_free(mc);
	ls_sync_free_all(mc);
	ls_acc_free(mc);
	for (int c = 0; c < LS_MAX_CORES; c++)
		mem_block_free(mc->mem[c].block, mc->mem[c].bytes,
			       mc->mem[c].mapped);
	free(mc);
}

/* Storages at least this big get a fresh zeroed shadow on reset (the
** kernel's lazily zeroed pages) instead of a memset of every byte. */
#define RESET_FRESH_MIN ((int64_t)1 << 20)

void ls_machine_reset(ls_machine *mc)
{
	for (int s = 0; s < mc->n_storages; s++) {
		ls_storage *st = &mc->storages[s];
		int64_t rest = st->bytes - st->filled;
		if (st->filled == 0 && st->bytes >= RESET_FRESH_MIN) {
			free(st->init);
			st->init = lm_xcalloc((size_t)st->bytes + 1, 1);
			continue;
		}
		if (st->filled > 0) {
			memcpy(st->data, st->pristine, (size_t)st->filled);
			memset(st->init, 1, (size_t)st->filled);
		}
		memset(st->init + st->filled, 0, (size_t)rest + 1);
	}
	/* SBUF and PSUM: a small block is cleared in place, a big one (mapped
	** lazily) given back and mapped again on first use */
	for (int c = 0; c < LS_MAX_CORES; c++) {
		ls_core_mem *cm = &mc->mem[c];
		if (!cm->block)
			continue;
		if (cm->bytes <= POPULATE_MAX) {
			memset(cm->block, 0, cm->bytes);
			continue;
		}
		mem_block_free(cm->block, cm->bytes, cm->mapped);
		memset(cm, 0, sizeof *cm);
	}
	ls_sync_reset(mc);
	for (int i = 0; i < mc->n_qinsts; i++)
		mc->qinsts[i].bw_free_ps = mc->qinsts[i].last_done_ps = 0;
	for (int mi = 0; mi < mc->n_mods; mi++)
		mc->mods[mi].n_slots = 0;
	ls_regs_reset(mc);
	ls_acc_reset(mc);
}

/* dst[i] = src[i] wherever init[i] is set (n bytes), 8 at a time. */
static void copy_written(uint8_t *dst, const uint8_t *src,
			 const uint8_t *init, int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, init + i, 8);
		if (w == 0x0101010101010101ull) {
			memcpy(dst + i, src + i, 8);
			continue;
		}
		for (int j = 0; j < 8; j++)
			if (init[i + j])
				dst[i + j] = src[i + j];
	}
	for (; i < n; i++)
		if (init[i])
			dst[i] = src[i];
}

/* Does allocation a say its unwritten elements are allowed? */
static int is_partial_output(const lm_alloc *a)
{
	const cJSON *p = a->extra ? cJSON_GetObjectItemCaseSensitive(
		a->extra, "partial_output") : NULL;
	return cJSON_IsTrue(p);
}

/*
** An external output with elements no instruction wrote: the error names
** the tensor, the first such element (row-major index into its shape)
** and how many there are. LM_ECHECK, like an uninitialized read.
*/
static int unwritten_output(ls_machine *mc, const ls_storage *st,
			    int64_t bytes, const uint8_t *first,
			    lm_error *err)
{
	const lm_alloc *a = st->alloc;
	const lm_module *m = mc->mods[st->mod].m;
	const char *fname = "?";
	int es = lm_dtype_size(a->dtype);
	int64_t e = (first - st->init) / es, n = bytes / es, left = 0, r = e;
	int64_t *idx = lm_xcalloc((size_t)(a->n_shape > 0 ? a->n_shape : 1),
				  sizeof *idx);
	char where[300], at[300];
	int rc;
	size_t k;

	for (int f = 0; f < m->n_functions; f++)
		if (a >= m->functions[f].allocs &&
		    a < m->functions[f].allocs + m->functions[f].n_allocs)
			fname = S(m->functions[f].name);
	for (int64_t i = e; i < n; i++)
		if (!ls_all_written(st->init + i * es, es))
			left++;
	/* the row-major index over every dimension, whatever the rank (a
	** long one is cut short in the message with "...") */
	for (int d = a->n_shape - 1; d >= 0; d--) {
		int64_t sz = a->tensor_shape[d] > 0 ? a->tensor_shape[d] : 1;
		idx[d] = r % sz;
		r /= sz;
	}
	k = (size_t)snprintf(at, sizeof at, "[");
	for (int d = 0; d < a->n_shape && k < sizeof at; d++)
		k += (size_t)snprintf(at + k, sizeof at - k, "%s%lld",
				      d ? ", " : "", (long long)idx[d]);
	if (k < sizeof at - 1)
		snprintf(at + k, sizeof at - k, "]");
	else
		memcpy(at + sizeof at - 5, "...]", 5);
	free(idx);
	snprintf(where, sizeof where, "function %s/allocation %s", fname,
		 S(a->name));
	rc = lm_errc(err, LM_ECHECK, mc->mods[st->mod].path, where,
		       "external output '%s' is not fully written: element "
		       "%s (flat index %lld) was never written (%lld of %lld "
		       "elements unwritten; an allocation with "
		       "\"partial_output\": true may be partial)", S(a->name),
		       at, (long long)e, (long long)left, (long long)n);
	return rc;
}

int ls_collect_outputs(ls_machine *mc, ls_tensors *out, lm_error *err)
{
	for (int s = 0; s < mc->n_storages; s++) {
		ls_storage *st = &mc->storages[s];
		const lm_alloc *a = st->alloc;
		int64_t shape[8], n = lm_alloc_elems(a);
		int nd = a->n_shape > 8 ? 8 : a->n_shape;
		int64_t bytes = n * lm_dtype_size(a->dtype);
		uint8_t *buf;
		if (!st->is_output)
			continue;
		for (int i = 0; i < nd; i++)
			shape[i] = a->tensor_shape[i];
		if (a->n_shape > 8) { /* fold extra dims into the last */
			for (int i = 8; i < a->n_shape; i++)
				shape[7] *= a->tensor_shape[i];
		}
		if (!is_partial_output(a) && bytes > 0) {
			/* the storage holds at least the tensor's bytes; an
			** element is written when all its bytes are */
			const uint8_t *hole = memchr(st->init, 0,
						     (size_t)bytes);
			if (hole)
				return unwritten_output(mc, st, bytes, hole,
							err);
		}
		/* partial: never-written bytes are 0xff (NaN in every
		** float format), the uninitialized pattern */
		buf = lm_xmalloc((size_t)bytes + 1);
		memset(buf, 0xff, (size_t)bytes);
		copy_written(buf, st->data, st->init,
			     bytes < st->bytes ? bytes : st->bytes);
		ls_tensors_add(out, a->name, a->dtype, shape, nd, buf);
		free(buf);
	}
	return 0;
}

/*
** verify.c -- the module verifier.
**
** lm_verify() walks a loaded module once, in a fixed order, and reports the
** FIRST problem it finds as "FILE: where: what". The order is:
**
**   1. module header (version, arch, at least one function)
**   2. semaphores, queues and queue instances (names, semaphore references)
**   3. function names
**   4. allocations and memory locations of every function (names, PSUM
**      banks, capacities), then alias tuples, remote_local_target /
**      alias_of / aliases
**   5. instruction names of every function (module-wide uniqueness),
**      nested bodies included, then of the queues' carried blocks
**   6. every instruction in program order: dependencies, wait / signal,
**      operands (resolution and bounds), tensor and register references
**      carried in JSON, then the opcode's own rules (the rows of
**      fields.def), then its nested body; a block's incoming values;
**      then the queues' blocks
**   7. the module's call_to_physical_memlocs; no function reaches itself
**      through Calls / NKIKernel calls
**   8. with opts->linked: the linked-module shape (dispatcher, core
**      functions, completion barriers, queue switches, barrier ids)
**
** `where` is a slash-separated path from the module down to the item:
**   module
**   semaphore S
**   queue Q/instance I
**   function F/allocation A/memory location L
**   function F/block B/instruction I/operand ins[0]
**   function F/block B/loop #3/block B2/instruction I
** Unnamed items are written "#index". docs/verifier.md lists every rule.
**
** The verifier never modifies the module and never crashes on a module the
** loader accepted: every string may be NULL and every array may be empty.
** All index arithmetic is checked 64-bit arithmetic.
*/
#include "common.h"
#include "verify.h"
#include "optable.h"
#include "module.h"
#include "arch.h"
#include "dtype.h"
#include "geometry.h"
#include "json_int.h"
#include "enumtab.h"
#include "affine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cores a CoreBarrier may list: [0, MAX_BARRIER_CORES). */
#define MAX_BARRIER_CORES 64
/* Matmult limits. */
#define MM_MAX_K 128
#define MM_MAX_M 128
#define MM_MAX_N 512

/* One component of the current path (see wpush). */
enum { WF_TEXT, WF_NAMED, WF_IN, WF_OUT };
typedef struct wframe {
	int type;
	const char *kind, *name; /* WF_NAMED */
	int idx;                 /* index; WF_TEXT: offset in vctx.text */
	size_t text_len;         /* vctx.text.size before this frame */
} wframe;

/* The verifier's state: the module, the name maps and the current path. */
typedef struct vctx {
	const lm_module *m;
	int linked;
	lm_error *err;
	const char *file;
	const lm_arch *arch;
	lm_strmap sems;     /* name -> lm_semaphore */
	lm_strmap queues;   /* name -> lm_queue */
	lm_strmap qinsts;   /* instance name -> its lm_queue */
	lm_strmap funcs;    /* name -> lm_function */
	lm_strmap allocs;   /* name -> lm_function owning it */
	lm_strmap allocp;   /* name -> lm_alloc */
	lm_strmap memlocs;  /* name -> lm_function owning it */
	lm_strmap insts;    /* name -> lm_function owning it */
	lm_strmap blkq;     /* DMA block name -> the first DMATrigger naming
			       it (the queue of a block that names none) */
	/* insts values: 1 + index into inst_at, in visiting order; check_blocks
	   visits the same order, so "an earlier instruction of this
	   function" is an index below v->pos with the same function */
	const lm_function **inst_at;
	const lm_inst **inst_ptr; /* the instruction of each inst_at entry */
	int n_inst_at, cap_inst_at, cap_inst_ptr, pos;
	const lm_function *fn; /* function being checked */
	const lm_block *rbs;   /* the region being checked: its blocks */
	int rnb;
	/* the loops around the instruction being checked, innermost last:
	   their axis names (NULL: none) */
	const char **loops;
	int n_loops, cap_loops;
	/* per module queue: its carried blocks as a function of its name
	   (no blocks: n_blocks 0) */
	lm_function *qfns;
	wframe *frames;     /* the current path */
	int depth, cap_frames;
	lm_buf text;        /* WF_TEXT components, each NUL-terminated */
	char where[768];    /* the rendered path of an error */
	size_t wlen;
} vctx;

/* What one resolved physical_ap operand touches. */
typedef struct opnd {
	const lm_arg *arg;
	const lm_alloc *alloc;
	const lm_memloc *loc;
	int is_dram;
	int size;         /* bytes per element */
	int64_t parts;    /* the first pair's num (SB/PSUM: partitions) */
	int64_t free;     /* elements per partition: count / parts */
	int64_t count;    /* all elements */
	int64_t lo, hi;   /* byte range [lo, hi) (SB/PSUM: per partition)
			     within the memloc */
} opnd;

/* ---- small helpers ------------------------------------------------------ */

/* s, or "" when NULL (for messages). */
static const char *S(const char *s)
{
	return s ? s : "";
}

/* Checked a + b; returns 1 on overflow. */
static int add_ovf(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}

/* Checked a * b; returns 1 on overflow. */
static int mul_ovf(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_mul_overflow(a, b, r);
}

/*
** The path is a stack of frames, rendered into text only when an error is
** reported: pushing costs a few stores for every block, instruction and
** operand. wpush* return the previous depth, for wpop().
*/
static wframe *wframe_new(vctx *v, int type)
{
	wframe *f;
	lm_grow(&v->frames, &v->cap_frames, v->depth + 1, sizeof *v->frames);
	f = &v->frames[v->depth++];
	f->type = type;
	f->text_len = v->text.size;
	return f;
}

/* A formatted component ("function F", "allocation A", ...). */
static size_t LM_PRINTF(2, 3) wpush(vctx *v, const char *fmt, ...)
{
	size_t old = (size_t)v->depth;
	va_list ap;
	wframe *f = wframe_new(v, WF_TEXT);
	f->idx = (int)v->text.size;
	va_start(ap, fmt);
	lm_buf_vprintf(&v->text, fmt, ap);
	va_end(ap);
	lm_buf_put(&v->text, "", 1); /* the component's NUL */
	return old;
}

/* Cut the path back to depth n. */
static void wpop(vctx *v, size_t n)
{
	if ((int)n < v->depth) {
		v->text.size = v->frames[n].text_len;
		v->depth = (int)n;
	}
}

/* "KIND NAME", or "KIND #idx" when the name is NULL or empty. */
static size_t wpush_named(vctx *v, const char *kind, const char *name, int idx)
{
	size_t old = (size_t)v->depth;
	wframe *f = wframe_new(v, WF_NAMED);
	f->kind = kind;
	f->name = name;
	f->idx = idx;
	return old;
}

/* "operand ins[i]" / "operand outs[i]". */
static size_t wpush_operand(vctx *v, int is_out, int i)
{
	size_t old = (size_t)v->depth;
	wframe *f = wframe_new(v, is_out ? WF_OUT : WF_IN);
	f->idx = i;
	return old;
}

/* Append to v->where, truncating at its capacity. */
static void wput(vctx *v, const char *s)
{
	size_t n = strlen(s), room = sizeof v->where - 1 - v->wlen;
	if (n > room)
		n = room;
	memcpy(v->where + v->wlen, s, n);
	v->wlen += n;
	v->where[v->wlen] = 0;
}

/* Render the frames into v->where. */
static const char *wrender(vctx *v)
{
	char num[32];
	v->wlen = 0;
	v->where[0] = 0;
	for (int i = 0; i < v->depth; i++) {
		const wframe *f = &v->frames[i];
		if (i)
			wput(v, "/");
		switch (f->type) {
		case WF_TEXT:
			wput(v, v->text.ptr + f->idx);
			break;
		case WF_NAMED:
			wput(v, f->kind);
			wput(v, " ");
			if (f->name && *f->name) {
				wput(v, f->name);
			} else {
				snprintf(num, sizeof num, "#%d", f->idx);
				wput(v, num);
			}
			break;
		default:
			snprintf(num, sizeof num, "operand %s[%d]",
				 f->type == WF_OUT ? "outs" : "ins", f->idx);
			wput(v, num);
			break;
		}
	}
	return v->where;
}

/* Report an error at the current path. Returns LM_EINPUT. */
static int LM_PRINTF(2, 3) fail(vctx *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = lm_verr(v->err, LM_EINPUT, v->file, wrender(v), fmt, ap);
	va_end(ap);
	return rc;
}

/* Report an error at the path "module". */
static int LM_PRINTF(2, 3) fail_module(vctx *v, const char *fmt, ...)
{
	va_list ap;
	wpop(v, 0);
	wpush(v, "module");
	va_start(ap, fmt);
	int rc = lm_verr(v->err, LM_EINPUT, v->file, wrender(v), fmt, ap);
	va_end(ap);
	return rc;
}

/* A function's name for messages. */
static const char *fname(const lm_function *f)
{
	return f && f->name ? f->name : "?";
}

/* 1 when every memory location of the allocation is DRAM storage. */
static int alloc_is_dram(const lm_alloc *a)
{
	for (int i = 0; i < a->n_memlocs; i++)
		if (!lm_memtype_is_dram(a->memlocs[i].type))
			return 0;
	return 1;
}

/* dtype name for messages. */
static const char *dtname(lm_dtype t)
{
	const char *s = lm_dtype_name(t);
	return s && *s ? s : "invalid";
}

/* The memory type's name for messages. */
static const char *mtname(lm_memtype t)
{
	const char *s = lm_memtype_name(t);
	return s && *s ? s : "invalid";
}

/* The opcode's name for messages. */
static const char *opname(const lm_inst *in)
{
	if (in->op == LM_OP_OTHER && in->opcode_str)
		return in->opcode_str;
	const char *s = lm_opcode_name(in->op);
	return s && *s ? s : "?";
}

/* ---- module header, semaphores, queues ---------------------------------- */

/* Version, arch and function count. */
static int check_header(vctx *v)
{
	const lm_module *m = v->m;
	if (m->version != 2)
		return fail_module(v, "unsupported version %lld (expected 2)",
				   (long long)m->version);
	v->arch = m->arch ? lm_arch_get(m->arch) : NULL;
	if (!v->arch)
		return fail_module(v, "unknown arch '%s'",
				   m->arch ? m->arch : "(none)");
	if (m->n_functions < 1)
		return fail_module(v, "module has no functions");
	wpop(v, 0);
	return 0;
}

/* Semaphore names, queue names, queue instance names and semaphores. */
static int check_sync_objects(vctx *v)
{
	const lm_module *m = v->m;
	int rc = 0;
	for (int i = 0; i < m->n_semaphores; i++) {
		const lm_semaphore *s = &m->semaphores[i];
		size_t w = wpush_named(v, "semaphore", s->name, i);
		if (!s->name || !*s->name)
			return fail(v, "semaphore without a name");
		if (!lm_strmap_put(&v->sems, s->name, (void *)s))
			return fail(v, "duplicate semaphore name '%s'", s->name);
		wpop(v, w);
	}
	for (int i = 0; i < m->n_queues; i++) {
		const lm_queue *q = &m->queues[i];
		size_t w = wpush_named(v, "queue", q->name, i);
		if (!q->name || !*q->name)
			return fail(v, "queue without a name");
		if (!lm_strmap_put(&v->queues, q->name, (void *)q))
			return fail(v, "duplicate queue name '%s'", q->name);
		if (q->n_instances < 1)
			return fail(v, "queue '%s' has no instances", q->name);
		for (int j = 0; j < q->n_instances; j++) {
			const lm_qinstance *qi = &q->instances[j];
			size_t w2 = wpush_named(v, "instance", qi->name, j);
			void *prev;
			if (!qi->name || !*qi->name)
				return fail(v, "queue instance without a name");
			if (lm_strmap_get(&v->qinsts, qi->name, &prev))
				return fail(v, "duplicate queue instance name "
					    "'%s' (also in queue '%s')", qi->name,
					    S(((const lm_queue *)prev)->name));
			lm_strmap_put(&v->qinsts, qi->name, (void *)q);
			if (!qi->semaphore || !*qi->semaphore)
				return fail(v, "queue instance '%s' has no "
					    "semaphore", qi->name);
			if (!lm_strmap_lookup(&v->sems, qi->semaphore))
				return fail(v, "queue instance semaphore '%s' is "
					    "not a module semaphore", qi->semaphore);
			wpop(v, w2);
		}
		wpop(v, w);
	}
	return rc;
}

/* Function names: present and unique. */
static int check_function_names(vctx *v)
{
	const lm_module *m = v->m;
	for (int i = 0; i < m->n_functions; i++) {
		const lm_function *f = &m->functions[i];
		size_t w = wpush_named(v, "function", f->name, i);
		if (!f->name || !*f->name)
			return fail(v, "function without a name");
		if (!lm_strmap_put(&v->funcs, f->name, (void *)f))
			return fail(v, "duplicate function name '%s'", f->name);
		wpop(v, w);
	}
	return 0;
}

/* ---- allocations and memory locations ----------------------------------- */

/*
** One memory location on its own: dims present for SB / PSUM, partitions
** inside the 128, bytes inside SBUF / PSUM, the PSUM bank matching addr.
*/
static int check_memloc(vctx *v, const lm_memloc *l)
{
	int64_t end;
	if (l->addr < 0 || l->base < 0 || l->bank < 0)
		return fail(v, "negative addr, base or bank");
	for (int i = 0; i < l->n_dims; i++)
		if (l->dims[i] < 0)
			return fail(v, "negative dims[%d] %lld", i,
				    (long long)l->dims[i]);
	if (l->type != LM_MT_SB && l->type != LM_MT_PSUM)
		return 0;
	if (l->n_dims != 2)
		return fail(v, "%s memory location needs dims [partitions, "
			    "bytes_per_partition]", mtname(l->type));
	if (add_ovf(l->base, l->dims[0], &end) || end > LM_PARTITIONS)
		return fail(v, "partitions %lld..%lld exceed the %d partitions",
			    (long long)l->base, (long long)l->base +
			    (long long)l->dims[0] - 1, LM_PARTITIONS);
	if (add_ovf(l->addr, l->dims[1], &end))
		end = INT64_MAX;
	if (l->type == LM_MT_SB) {
		if (end > v->arch->sbuf_bytes)
			return fail(v, "SB memory location ends at byte %lld, "
				    "beyond the %lld-byte SBUF partition of %s",
				    (long long)end,
				    (long long)v->arch->sbuf_bytes,
				    v->arch->name);
		return 0;
	}
	if (l->bank != l->addr / LM_PSUM_BANK_BYTES)
		return fail(v, "PSUM bank %lld does not match addr %lld "
			    "(bank %lld)", (long long)l->bank,
			    (long long)l->addr,
			    (long long)(l->addr / LM_PSUM_BANK_BYTES));
	if (end > v->arch->psum_bytes)
		return fail(v, "PSUM memory location ends at byte %lld, beyond "
			    "the %lld-byte PSUM partition", (long long)end,
			    (long long)v->arch->psum_bytes);
	return 0;
}

/*
** Allocation and memory-location names (module-wide, two namespaces), the
** allocation's dtype and shape, and every memory location.
*/
static int check_allocs(vctx *v, const lm_function *f)
{
	for (int i = 0; i < f->n_allocs; i++) {
		const lm_alloc *a = &f->allocs[i];
		size_t w = wpush_named(v, "allocation", a->name, i);
		void *prev;
		int64_t elems = 1;
		if (!a->name || !*a->name)
			return fail(v, "allocation without a name");
		if (lm_strmap_get(&v->allocs, a->name, &prev))
			return fail(v, "duplicate allocation name '%s' (also in "
				    "function '%s')", a->name,
				    fname((const lm_function *)prev));
		lm_strmap_put(&v->allocs, a->name, (void *)f);
		lm_strmap_put(&v->allocp, a->name, (void *)a);
		for (int j = 0; j < a->n_shape; j++)
			if (a->tensor_shape[j] < 0 ||
			    mul_ovf(elems, a->tensor_shape[j], &elems))
				return fail(v, "tensor_shape is negative or "
					    "overflows");
		for (int j = 0; j < a->n_memlocs; j++) {
			const lm_memloc *l = &a->memlocs[j];
			size_t w2 = wpush_named(v, "memory location", l->name, j);
			int rc;
			if (!l->name || !*l->name)
				return fail(v, "memory location without a name");
			if (lm_strmap_get(&v->memlocs, l->name, &prev))
				return fail(v, "duplicate memory location name "
					    "'%s' (also in function '%s')",
					    l->name,
					    fname((const lm_function *)prev));
			lm_strmap_put(&v->memlocs, l->name, (void *)f);
			if ((rc = check_memloc(v, l)) != 0)
				return rc;
			wpop(v, w2);
		}
		wpop(v, w);
	}
	return 0;
}

/* The memory location of function f named name (NULL: none). */
static const lm_memloc *fn_memloc(const lm_function *f, const char *name)
{
	for (int i = 0; i < f->n_allocs; i++) {
		const lm_memloc *l = lm_alloc_find_memloc(&f->allocs[i], name);
		if (l)
			return l;
	}
	return NULL;
}

/*
** A memory location's alias tuples (its carried "alias"): the destination
** is a memory location of the function (of the named allocation in a
** triple), and both ends are DRAM, the only memory the compiler lets
** alias ("Aliasing only permitted for DRAM locations").
*/
static int check_memloc_alias(vctx *v, const lm_function *f,
			      const lm_memloc *l)
{
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(l->extra, "alias");
	const cJSON *e;
	int i = 0;
	if (!cJSON_IsArray(al))
		return 0;
	cJSON_ArrayForEach(e, al) {
		int n = cJSON_GetArraySize(e);
		const cJSON *a0 = e->child, *a1 = a0 ? a0->next : NULL;
		const lm_memloc *d = NULL;
		if (n == 3 && cJSON_IsString(a0) && cJSON_IsString(a1)) {
			const lm_alloc *da = lm_strmap_lookup(&v->allocp,
							      a0->valuestring);
			if (!da || lm_strmap_lookup(&v->allocs,
						    a0->valuestring) != f)
				return fail(v, "alias #%d: '%s' is not an "
					    "allocation of function '%s'", i,
					    a0->valuestring, fname(f));
			d = lm_alloc_find_memloc(da, a1->valuestring);
			if (!d)
				return fail(v, "alias #%d: '%s' is not a memory "
					    "location of allocation '%s'", i,
					    a1->valuestring, a0->valuestring);
		} else if (n == 2 && cJSON_IsString(a0)) {
			d = fn_memloc(f, a0->valuestring);
			if (!d)
				return fail(v, "alias #%d: '%s' is not a memory "
					    "location of function '%s'", i,
					    a0->valuestring, fname(f));
		} else {
			i++;
			continue; /* the loader checked the shape */
		}
		if (l->type != LM_MT_DRAM || d->type != LM_MT_DRAM)
			return fail(v, "alias #%d: %s -> %s: aliasing is only "
				    "permitted between DRAM memory locations "
				    "(%s, %s)", i, S(l->name), S(d->name),
				    mtname(l->type), mtname(d->type));
		i++;
	}
	return 0;
}

/*
** remote_local_target and alias_of of one function's allocations (run after
** every allocation is known).
*/
static int check_alloc_links(vctx *v, const lm_function *f)
{
	for (int i = 0; i < f->n_allocs; i++) {
		const lm_alloc *a = &f->allocs[i];
		size_t w = wpush(v, "allocation %s", a->name);
		if (a->has_remote) {
			if (!a->remote_name || !*a->remote_name)
				return fail(v, "remote_local_target has no "
					    "allocation name");
			if (a->remote_core < 0)
				return fail(v, "remote_local_target core %lld "
					    "is negative",
					    (long long)a->remote_core);
			if (!alloc_is_dram(a))
				return fail(v, "remote_local_target view must be "
					    "a DRAM allocation");
		}
		for (int j = 0; j < a->n_memlocs; j++) {
			size_t w2;
			int rc;
			if (!a->memlocs[j].extra)
				continue;
			w2 = wpush_named(v, "memory location",
					 a->memlocs[j].name, j);
			if ((rc = check_memloc_alias(v, f, &a->memlocs[j])) != 0)
				return rc;
			wpop(v, w2);
		}
		if (a->alias_of) {
			const lm_alloc *t, *c;
			if (strcmp(a->alias_of, a->name) == 0)
				return fail(v, "alias_of names the allocation "
					    "itself");
			t = lm_strmap_lookup(&v->allocp, a->alias_of);
			if (!t)
				return fail(v, "alias_of '%s' names no "
					    "allocation", a->alias_of);
			if (!alloc_is_dram(a))
				return fail(v, "an alias_of allocation must be "
					    "DRAM");
			if (!alloc_is_dram(t))
				return fail(v, "alias_of '%s' is not a DRAM "
					    "allocation", a->alias_of);
			if (t->dtype != a->dtype)
				return fail(v, "alias_of '%s': dtype %s differs "
					    "from %s", a->alias_of,
					    dtname(t->dtype), dtname(a->dtype));
			int same = t->n_shape == a->n_shape;
			for (int j = 0; same && j < a->n_shape; j++)
				same = t->tensor_shape[j] == a->tensor_shape[j];
			if (!same)
				return fail(v, "alias_of '%s': tensor_shape "
					    "differs", a->alias_of);
			/* Chains are allowed, cycles are not. */
			c = t;
			for (int k = 0; c && c->alias_of; k++) {
				if (k > (int)v->allocp.n)
					return fail(v, "alias_of cycle through "
						    "'%s'", a->alias_of);
				c = lm_strmap_lookup(&v->allocp, c->alias_of);
			}
		}
		wpop(v, w);
	}
	return 0;
}

/* Module `aliases`: both sides name allocations. */
static int check_aliases(vctx *v)
{
	const lm_module *m = v->m;
	for (int i = 0; i < m->n_aliases; i++) {
		const lm_alias *al = &m->aliases[i];
		size_t w = wpush(v, "aliases #%d", i);
		if (!al->producer || !lm_strmap_lookup(&v->allocp, al->producer))
			return fail(v, "producer '%s' names no allocation",
				    S(al->producer));
		const lm_alloc *c = al->consumer ?
			lm_strmap_lookup(&v->allocp, al->consumer) : NULL;
		if (!c)
			return fail(v, "consumer '%s' names no allocation",
				    S(al->consumer));
		if (v->linked && (!c->alias_of || strcmp(c->alias_of, al->producer)))
			return fail(v, "consumer '%s' is not an alias_of view of "
				    "producer '%s'", al->consumer, al->producer);
		wpop(v, w);
	}
	return 0;
}


/* Linked modules: every alias_of view is listed in module `aliases`. */
static int check_linked_aliases(vctx *v)
{
	const lm_module *m = v->m;
	wpop(v, 0);
	for (int f = 0; f < m->n_functions; f++) {
		const lm_function *fn = &m->functions[f];
		for (int a = 0; a < fn->n_allocs; a++) {
			const lm_alloc *al = &fn->allocs[a];
			int found = 0;
			if (!al->alias_of)
				continue;
			for (int i = 0; i < m->n_aliases && !found; i++)
				found = m->aliases[i].consumer &&
					!strcmp(m->aliases[i].consumer, al->name);
			if (!found) {
				size_t w = wpush_named(v, "function", fn->name, f);
				size_t w2 = wpush_named(v, "allocation", al->name, a);
				int rc = fail(v, "linked module: alias_of view of '%s' "
					      "has no entry in module aliases",
					      al->alias_of);
				wpop(v, w2);
				wpop(v, w);
				return rc;
			}
		}
	}
	return 0;
}

/* ---- instruction names -------------------------------------------------- */

/* A reader's message without its "FILE: " (the verifier adds its own). */
static const char *unfiled(vctx *v, const char *msg)
{
	size_t n = strlen(v->file);
	if (n && !strncmp(msg, v->file, n) && !strncmp(msg + n, ": ", 2))
		return msg + n + 2;
	return msg;
}

/* What f is, for a message: a module queue's blocks are held as a
** function of the queue's name. */
static const char *owner_kind(const vctx *v, const lm_function *f)
{
	return v->qfns && f >= v->qfns && f < v->qfns + v->m->n_queues ?
		"queue" : "function";
}

/* Record the names of the instructions of blocks (recursing into the
** bodies of Loops and of the other opcodes with blocks). */
static int collect_names(vctx *v, const lm_function *f, const lm_block *bs,
			 int nb)
{
	for (int b = 0; b < nb; b++) {
		const lm_block *bl = &bs[b];
		size_t w = wpush_named(v, "block", bl->name, b);
		for (int i = 0; i < bl->n_insts; i++) {
			const lm_inst *in = &bl->insts[i];
			if (in->op == LM_OP_LOOP) {
				size_t w2 = wpush_named(v, "loop", in->name, i);
				int rc = collect_names(v, f, in->blocks,
						       in->n_blocks);
				if (rc)
					return rc;
				wpop(v, w2);
				continue;
			}
			size_t w2 = wpush_named(v, "instruction", in->name, i);
			if (!in->name || !*in->name)
				return fail(v, "instruction without a name");
			void **slot = lm_strmap_ref(&v->insts, in->name);
			if (*slot)
				return fail(v, "duplicate instruction name '%s' "
					    "(also in %s '%s')", in->name,
					    owner_kind(v, v->inst_at[(intptr_t)
								*slot - 1]),
					    fname(v->inst_at[(intptr_t)*slot - 1]));
			lm_grow(&v->inst_at, &v->cap_inst_at, v->n_inst_at + 1,
				sizeof *v->inst_at);
			lm_grow(&v->inst_ptr, &v->cap_inst_ptr,
				v->n_inst_at + 1, sizeof *v->inst_ptr);
			v->inst_ptr[v->n_inst_at] = in;
			v->inst_at[v->n_inst_at++] = f;
			*slot = (void *)(intptr_t)v->n_inst_at;
			if (in->n_blocks) {
				int rc = collect_names(v, f, in->blocks,
						       in->n_blocks);
				if (rc)
					return rc;
			}
			wpop(v, w2);
		}
		wpop(v, w);
	}
	return 0;
}

/*
** The blocks a queue carries (its "blocks" or "basic_blocks": the
** compiler's queue holds its DMA blocks), read into v->qfns as a function
** of the queue's name, and the names of their instructions recorded.
*/
static int collect_queue_blocks(vctx *v)
{
	const lm_module *m = v->m;
	v->qfns = lm_xcalloc((size_t)m->n_queues + 1, sizeof *v->qfns);
	for (int q = 0; q < m->n_queues; q++) {
		const lm_queue *qu = &m->queues[q];
		const cJSON *b = NULL;
		lm_function *qf = &v->qfns[q];
		lm_error e;
		size_t w;
		int rc;
		if (qu->extra &&
		    !(b = cJSON_GetObjectItemCaseSensitive(qu->extra, "blocks")))
			b = cJSON_GetObjectItemCaseSensitive(qu->extra,
							     "basic_blocks");
		if (!cJSON_IsArray(b))
			continue;
		qf->name = qu->name;
		w = wpush_named(v, "queue", qu->name, q);
		if (lm_blocks_from_json(b, m, &qf->blocks, &qf->n_blocks, &e))
			return fail(v, "its blocks do not read: %s",
				    unfiled(v, e.msg));
		if ((rc = collect_names(v, qf, qf->blocks, qf->n_blocks)) != 0)
			return rc;
		wpop(v, w);
	}
	return 0;
}

/* ---- operands ----------------------------------------------------------- */

/*
** Resolve one physical_ap operand and bounds-check it (lm_arg_geometry),
** filling *o. `label` ("ins[0]") is already on the path.
*/
static int check_operand(vctx *v, const lm_arg *a, opnd *o)
{
	const lm_alloc *al;
	const lm_memloc *loc;
	lm_geom g;
	char *why;

	memset(o, 0, sizeof *o);
	o->arg = a;
	if (!a->memsetref || !*a->memsetref)
		return fail(v, "operand has no memsetref");
	al = lm_strmap_lookup(&v->allocp, a->memsetref);
	if (!al)
		return fail(v, "memsetref '%s' names no allocation",
			    a->memsetref);
	loc = a->memref ? lm_alloc_find_memloc(al, a->memref) : NULL;
	if (!loc)
		return fail(v, "memref '%s' is not a memory location of "
			    "allocation '%s'", S(a->memref), a->memsetref);
	o->alloc = al;
	o->loc = loc;
	if (lm_arg_geometry(&g, a, al, loc, &why)) {
		int rc = fail(v, "%s", why);
		free(why);
		return rc;
	}
	o->is_dram = g.is_dram;
	o->size = g.esize;
	o->parts = g.parts;
	o->free = g.free;
	o->count = g.count;
	o->lo = g.lo;
	o->hi = g.hi;
	return 0;
}

/* ---- opcode rules ------------------------------------------------------- */

/* A DMACopy's CopyMode ordinal (carried in extra when not Copy); -1
** when it names none. */
static int dma_mode(const lm_inst *in)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "mode") : NULL;
	int64_t o;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsString(v) && !lm_enum_parse(LM_ET_CopyMode, v->valuestring,
						&o))
		return (int)o;
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    v->valuedouble <= 3 && v->valuedouble == (int)v->valuedouble)
		return (int)v->valuedouble;
	return -1;
}

/* Expected operand counts of the instruction's opcode (-1: not
** checked): the NIN / NOUT columns of ops.def; a DMACopy in mode CCE
** reads one source or more. */
static void expected_counts(const lm_inst *in, int *nin, int *nout)
{
	const lm_opinfo *o = lm_op_info(lm_inst_it(in));
	*nin = o ? o->n_ins : -1;
	*nout = o ? o->n_outs : -1;
	if (in->op == LM_OP_DMACOPY && dma_mode(in) == 2 && in->n_ins >= 1)
		*nin = in->n_ins;
}

/* 1 for opcodes whose tensor operands a compute engine reads and writes
** (SBUF / PSUM only): LM_OPF_ONCHIP in ops.def. */
static int is_onchip_op(const lm_inst *in)
{
	const lm_opinfo *o = lm_op_info(lm_inst_it(in));
	return o && (o->flags & LM_OPF_ONCHIP);
}

/* Element counts of operands a (ins[ia]) and b (outs[0]) must agree. */
static int check_same_count(vctx *v, const opnd *a, int ia, const opnd *b)
{
	if (a->count != b->count)
		return fail(v, "element counts differ: ins[%d] has %lld, outs[0] "
			    "has %lld", ia, (long long)a->count,
			    (long long)b->count);
	return 0;
}

/* Matmult shapes, dtypes, memories and the one-bank rule. */
static int check_matmult(vctx *v, const lm_inst *in, const opnd *st,
			 const opnd *mv, const opnd *out)
{
	int64_t first_bank, last_bank, lo, hi;
	if (st->is_dram || st->loc->type != LM_MT_SB)
		return fail(v, "matmul stationary (ins[0]) must be in SB");
	if (mv->is_dram || mv->loc->type != LM_MT_SB)
		return fail(v, "matmul moving (ins[1]) must be in SB");
	if (out->is_dram || out->loc->type != LM_MT_PSUM)
		return fail(v, "matmul output must be in PSUM");
	if (in->is_transpose) {
		int64_t P = mv->parts, F = mv->free;
		if (st->parts != F || st->free != F)
			return fail(v, "transpose stationary must be square "
				    "[F, F] with F=%lld (got [%lld, %lld])",
				    (long long)F, (long long)st->parts,
				    (long long)st->free);
		if (F > MM_MAX_M)
			return fail(v, "transpose F=%lld exceeds %d",
				    (long long)F, MM_MAX_M);
		if (out->parts != F || out->free != P)
			return fail(v, "transpose output is [%lld, %lld], "
				    "expected [F=%lld, P=%lld]",
				    (long long)out->parts, (long long)out->free,
				    (long long)F, (long long)P);
		if (out->arg->dtype != LM_DT_FLOAT32 &&
		    out->arg->dtype != mv->arg->dtype)
			return fail(v, "transpose output dtype must be float32 "
				    "or %s (got %s)", dtname(mv->arg->dtype),
				    dtname(out->arg->dtype));
	} else {
		int64_t K = st->parts, M = st->free, N = mv->free;
		if (mv->parts != K)
			return fail(v, "matmul contraction mismatch: stationary "
				    "has K=%lld partitions, moving has %lld",
				    (long long)K, (long long)mv->parts);
		if (K > MM_MAX_K)
			return fail(v, "matmul K=%lld exceeds %d",
				    (long long)K, MM_MAX_K);
		if (M > MM_MAX_M)
			return fail(v, "matmul M=%lld exceeds %d",
				    (long long)M, MM_MAX_M);
		if (N > MM_MAX_N)
			return fail(v, "matmul N=%lld exceeds %d",
				    (long long)N, MM_MAX_N);
		if (out->parts != M || out->free != N)
			return fail(v, "matmul output is [%lld, %lld], expected "
				    "[M=%lld, N=%lld]", (long long)out->parts,
				    (long long)out->free, (long long)M,
				    (long long)N);
		if (out->arg->dtype != LM_DT_FLOAT32)
			return fail(v, "matmul output dtype must be float32 "
				    "(got %s)", dtname(out->arg->dtype));
	}
	/* check_operand and check_memloc bound these far below INT64_MAX. */
	lo = out->loc->addr + out->lo;
	hi = out->loc->addr + out->hi;
	first_bank = lo / LM_PSUM_BANK_BYTES;
	last_bank = (hi - 1) / LM_PSUM_BANK_BYTES;
	if (first_bank != last_bank)
		return fail(v, "matmul output crosses a PSUM bank boundary "
			    "(bytes %lld..%lld, banks %lld..%lld)",
			    (long long)lo, (long long)hi - 1,
			    (long long)first_bank, (long long)last_bank);
	return 0;
}

/* Iota / AffineSelect pattern: present, positive nums, covers the output. */
static int check_pattern(vctx *v, const lm_inst *in, const opnd *out)
{
	int64_t n = 1;
	if (in->n_pattern < 1)
		return fail(v, "%s needs a pattern", opname(in));
	for (int i = 0; i < in->n_pattern; i++) {
		if (in->pattern[i].num <= 0)
			return fail(v, "pattern pair %d has num %lld (must be "
				    "> 0)", i, (long long)in->pattern[i].num);
		if (mul_ovf(n, in->pattern[i].num, &n))
			return fail(v, "pattern element count overflows");
	}
	if (out && n != out->free)
		return fail(v, "pattern walks %lld elements per partition, the "
			    "output has %lld", (long long)n,
			    (long long)out->free);
	return 0;
}

/* The opcode's operand shapes (all its tensor operands resolved). */
static int check_shapes(vctx *v, const lm_inst *in, const opnd *ins,
			const opnd *outs)
{
	int rc;
	switch (in->op) {
	case LM_OP_DMACOPY:
		if (dma_mode(in) == 2) { /* CCE: every source as the output */
			for (int i = 0; i < in->n_ins; i++)
				if ((rc = check_same_count(v, &ins[i], i,
							   &outs[0])) != 0)
					return rc;
			return 0;
		}
		if (dma_mode(in) == 3) { /* Replicate: whole copies */
			if (ins[0].count < 1 || outs[0].count % ins[0].count)
				return fail(v, "DMACopy mode Replicate writes "
					    "whole copies of its source: "
					    "outs[0] has %lld elements, ins[0] "
					    "%lld", (long long)outs[0].count,
					    (long long)ins[0].count);
			return 0;
		}
		return check_same_count(v, &ins[0], 0, &outs[0]);
	case LM_OP_LOAD: case LM_OP_SAVE:
	case LM_OP_TENSORSCALAR: case LM_OP_TENSORCOPY:
		return check_same_count(v, &ins[0], 0, &outs[0]);
	case LM_OP_TENSORTENSOR:
		if ((rc = check_same_count(v, &ins[0], 0, &outs[0])) != 0)
			return rc;
		return check_same_count(v, &ins[1], 1, &outs[0]);
	case LM_OP_ACTIVATION:
		if (in->n_outs < 1 || in->n_outs > 2)
			return fail(v, "Activation needs 1 output (2 with the "
				    "read-out of its accumulator), got %d",
				    in->n_outs);
		if ((rc = check_same_count(v, &ins[0], 0, &outs[0])) != 0)
			return rc;
		if (in->n_outs == 2 && (outs[1].parts != ins[0].parts ||
					outs[1].free != 1))
			return fail(v, "Activation's accumulator read-out "
				    "(outs[1]) must be [P, 1] with P=%lld (got "
				    "[%lld, %lld])", (long long)ins[0].parts,
				    (long long)outs[1].parts,
				    (long long)outs[1].free);
		if (ins[1].arg->dtype != LM_DT_FLOAT32)
			return fail(v, "Activation bias (ins[1]) must be "
				    "float32 (got %s)", dtname(ins[1].arg->dtype));
		if (ins[1].parts != ins[0].parts || ins[1].free != 1)
			return fail(v, "Activation bias (ins[1]) must be [P, 1] "
				    "with P=%lld (got [%lld, %lld])",
				    (long long)ins[0].parts,
				    (long long)ins[1].parts,
				    (long long)ins[1].free);
		return 0;
	case LM_OP_MATMULT:
		return check_matmult(v, in, &ins[0], &ins[1], &outs[0]);
	case LM_OP_IOTA:
		return check_pattern(v, in, &outs[0]);
	case LM_OP_AFFINESELECT:
		if ((rc = check_same_count(v, &ins[0], 0, &outs[0])) != 0)
			return rc;
		return check_pattern(v, in, &outs[0]);
	default:
		return 0;
	}
}

/* ---- opcode fields and references (the rows of fields.def) -------------- */

/*
** One pair of a KV value (formal -> actual name): from the IR's pairs
** (kv) or a carried value, an object of names or an array of [name,
** name] pairs (the loader checked the shape).
*/
typedef int (*kv_fn)(vctx *v, const char *key, const char *formal,
		     const char *actual, void *arg);

static int each_kv(vctx *v, const char *key, const lm_keyview *kv,
		   kv_fn fn, void *arg)
{
	int rc;
	for (int i = 0; i < kv->n_kv; i++)
		if ((rc = fn(v, key, kv->kv[i].key, kv->kv[i].value, arg)) != 0)
			return rc;
	if (!kv->json)
		return 0;
	for (const cJSON *e = kv->json->child; e; e = e->next) {
		const char *formal = NULL, *actual = NULL;
		if (cJSON_IsObject(kv->json)) {
			formal = e->string;
			actual = cJSON_IsString(e) ? e->valuestring : NULL;
		} else if (cJSON_IsArray(e) && e->child) {
			formal = cJSON_IsString(e->child) ? e->child->valuestring
							  : NULL;
			actual = e->child->next && cJSON_IsString(e->child->next)
				 ? e->child->next->valuestring : NULL;
		}
		if ((rc = fn(v, key, formal, actual, arg)) != 0)
			return rc;
	}
	return 0;
}

/* A block of blocks bs named name, nested bodies included (those of
** Loops and of the other opcodes with blocks). */
static int has_block(const lm_block *bs, int nb, const char *name)
{
	for (int b = 0; b < nb; b++) {
		if (bs[b].name && !strcmp(bs[b].name, name))
			return 1;
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in->n_blocks &&
			    has_block(in->blocks, in->n_blocks, name))
				return 1;
		}
	}
	return 0;
}

/* The instruction of this function named name (NULL: none). */
static const lm_inst *fn_inst(vctx *v, const char *name)
{
	intptr_t at = (intptr_t)lm_strmap_lookup(&v->insts, name) - 1;
	return at >= 0 && v->inst_at[at] == v->fn ? v->inst_ptr[at] : NULL;
}

/* 1 while the blocks of a queue are checked (v->fn is a queue's). */
static int in_queue_blocks(const vctx *v)
{
	return v->qfns && v->fn >= v->qfns &&
	       v->fn < v->qfns + v->m->n_queues;
}

/* The instruction named name among the blocks of module queue qn. */
static const lm_inst *queue_inst(vctx *v, const char *qn, const char *name)
{
	const lm_queue *q = lm_strmap_lookup(&v->queues, qn);
	intptr_t at = (intptr_t)lm_strmap_lookup(&v->insts, name) - 1;
	return q && at >= 0 && v->inst_at[at] == &v->qfns[q - v->m->queues] ?
		v->inst_ptr[at] : NULL;
}

/* The name the instruction's QUEUE row gives (NULL: none). */
static const char *inst_queue(const lm_inst *in)
{
	const lm_opinfo *o = lm_op_info(lm_inst_it(in));
	lm_keyview kv;
	for (int i = 0; o && i < o->n_fields; i++)
		if (o->fields[i]->ref == LM_REF_QUEUE &&
		    lm_inst_key_view(in, o->fields[i], &kv) > 0)
			return kv.json ? (cJSON_IsString(kv.json) ?
					  kv.json->valuestring : NULL)
				       : kv.name;
	return NULL;
}

/* A register name: an allocation with a REG memory location. */
static int check_reg_name(vctx *v, const char *key, const char *name)
{
	const lm_alloc *al = lm_strmap_lookup(&v->allocp, name);
	if (!al)
		return fail(v, "%s '%s' names no register allocation", key,
			    name);
	for (int i = 0; i < al->n_memlocs; i++)
		if (al->memlocs[i].type == LM_MT_REG)
			return 0;
	return fail(v, "%s '%s' names allocation '%s', which is not a "
		    "register (no REG memory location)", key, name, al->name);
}

/* Reference name of kind ref, the value of key of in, resolves. */
static int check_ref(vctx *v, const lm_inst *in, const char *key,
		     lm_refkind ref, const char *name)
{
	const lm_queue *q, *owner;
	const lm_inst *t;
	const char *qn;
	switch (ref) {
	case LM_REF_QUEUE:
		if (!lm_strmap_lookup(&v->queues, name))
			return fail(v, "%s '%s' is not a module queue", key,
				    name);
		return 0;
	case LM_REF_QINST:
		owner = lm_strmap_lookup(&v->qinsts, name);
		if (!owner)
			return fail(v, "queue instance '%s' does not exist",
				    name);
		qn = inst_queue(in);
		q = qn ? lm_strmap_lookup(&v->queues, qn) : NULL;
		if (q && owner != q)
			return fail(v, "instance '%s' is not an instance of "
				    "queue '%s' (it belongs to '%s')", name,
				    qn, S(owner->name));
		return 0;
	case LM_REF_FUNC:
		if (!lm_strmap_lookup(&v->funcs, name))
			return fail(v, "%s %s '%s' is not a function of the "
				    "module", opname(in), key, name);
		return 0;
	case LM_REF_BLOCK:
		if (!has_block(v->fn->blocks, v->fn->n_blocks, name))
			return fail(v, "%s '%s' is not a block of function "
				    "'%s'", key, name, fname(v->fn));
		return 0;
	case LM_REF_INST:
		if (in_queue_blocks(v)) { /* its trigger is a function's */
			if (!lm_strmap_lookup(&v->insts, name))
				return fail(v, "%s '%s' names no instruction of "
					    "the module", key, name);
			return 0;
		}
		if (!fn_inst(v, name))
			return fail(v, "%s '%s' names no instruction of "
				    "function '%s'", key, name, fname(v->fn));
		return 0;
	case LM_REF_DMABLOCK:
		/* the compiler finds it among its queue's blocks; lncsim
		   there or in the function */
		qn = inst_queue(in);
		t = fn_inst(v, name);
		if (!t && qn)
			t = queue_inst(v, qn, name);
		if (t && lm_inst_it(t) == LM_IT_DMABlock)
			return 0;
		if (qn && (q = lm_strmap_lookup(&v->queues, qn)) != NULL &&
		    v->qfns[q - v->m->queues].n_blocks)
			return fail(v, "%s '%s' names no DMABlock of function "
				    "'%s' or of queue '%s'", key, name,
				    fname(v->fn), qn);
		return fail(v, "%s '%s' names no DMABlock of function '%s'",
			    key, name, fname(v->fn));
	case LM_REF_ALLOC:
		if (!lm_strmap_lookup(&v->allocp, name))
			return fail(v, "%s '%s' names no allocation", key, name);
		return 0;
	case LM_REF_REG:
		return check_reg_name(v, key, name);
	default:
		return 0;
	}
}

/* A KV pair: its actual (a caller allocation) resolves. */
static int check_kv_actual(vctx *v, const char *key, const char *formal,
			   const char *actual, void *arg)
{
	(void)arg;
	if (!actual || !lm_strmap_lookup(&v->allocp, actual))
		return fail(v, "%s maps '%s' to '%s', which names no "
			    "allocation", key, S(formal), S(actual));
	return 0;
}

/* The references of row f's value (kv) resolve. */
static int check_value_refs(vctx *v, const lm_inst *in, const lm_field *f,
			    const lm_keyview *kv)
{
	int rc;
	if (f->ref == LM_REF_NONE)
		return 0;
	if (f->type == LM_FT_KV)
		return f->ref == LM_REF_ALLOC ?
			each_kv(v, f->key, kv, check_kv_actual, NULL) : 0;
	for (int i = 0; i < kv->n_names; i++)
		if (kv->names[i] &&
		    (rc = check_ref(v, in, f->key, f->ref, kv->names[i])) != 0)
			return rc;
	if (!kv->json)
		return kv->name ? check_ref(v, in, f->key, f->ref, kv->name) : 0;
	if (cJSON_IsString(kv->json))
		return check_ref(v, in, f->key, f->ref,
				 kv->json->valuestring);
	if (f->type != LM_FT_NAME_LIST || !cJSON_IsArray(kv->json))
		return 0; /* a JSON value that is no name */
	for (const cJSON *e = kv->json->child; e; e = e->next)
		if (cJSON_IsString(e) &&
		    (rc = check_ref(v, in, f->key, f->ref, e->valuestring)))
			return rc;
	return 0;
}

/* ---- the structural rules a row cannot say ------------------------------ */

/* A formal -> caller map of a call: formals are allocations of the
** callee (arg). */
static int check_kv_formal(vctx *v, const char *key, const char *formal,
			   const char *actual, void *arg)
{
	const lm_function *callee = arg;
	(void)actual;
	for (int j = 0; formal && j < callee->n_allocs; j++)
		if (callee->allocs[j].name &&
		    strcmp(callee->allocs[j].name, formal) == 0)
			return 0;
	return fail(v, "%s formal '%s' is not an allocation of function '%s'",
		    key, S(formal), fname(callee));
}

/* The formals of a call's argument maps (the KV rows) name allocations
** of its callee (the FUNC row), once the callee resolved. */
static int check_call_formals(vctx *v, const lm_inst *in)
{
	const lm_opinfo *o = lm_op_info(lm_inst_it(in));
	const lm_function *callee = NULL;
	lm_keyview kv;
	int rc;
	for (int i = 0; o && i < o->n_fields && !callee; i++)
		if (o->fields[i]->ref == LM_REF_FUNC &&
		    lm_inst_key_view(in, o->fields[i], &kv) > 0) {
			const char *c = kv.json ? (cJSON_IsString(kv.json) ?
				kv.json->valuestring : NULL) : kv.name;
			callee = c ? lm_strmap_lookup(&v->funcs, c) : NULL;
		}
	for (int i = 0; callee && i < o->n_fields; i++)
		if (o->fields[i]->type == LM_FT_KV &&
		    lm_inst_key_view(in, o->fields[i], &kv) > 0 &&
		    (rc = each_kv(v, o->fields[i]->key, &kv, check_kv_formal,
				  (void *)callee)) != 0)
			return rc;
	return 0;
}

/*
** NKIKernel kernel_source: one of the KernelSource names (KernelSource2string
** has no other value and fails with "Unknown KernelSource"). Absent is
** allowed. Then its formals.
*/
static int check_nkikernel(vctx *v, const lm_inst *in)
{
	static const char *const names[] = { "Beta1", "Beta2", "Beta3" };
	int ok = !in->kernel_source;
	for (size_t i = 0; !ok && i < sizeof names / sizeof *names; i++)
		ok = strcmp(in->kernel_source, names[i]) == 0;
	if (!ok)
		return fail(v, "Unknown KernelSource '%s' (kernel_source must "
			    "be Beta1, Beta2 or Beta3)", in->kernel_source);
	return check_call_formals(v, in);
}

/* CoreBarrier: id >= 0; cores not empty, each in range, none twice; an
** explicit group not empty. */
static int check_corebarrier(vctx *v, const lm_inst *in)
{
	if (in->barrier_id < 0)
		return fail(v, "CoreBarrier id %lld is negative",
			    (long long)in->barrier_id);
	if (in->n_cores < 1)
		return fail(v, "CoreBarrier cores is empty");
	for (int i = 0; i < in->n_cores; i++) {
		if (in->cores[i] < 0 || in->cores[i] >= MAX_BARRIER_CORES)
			return fail(v, "CoreBarrier core %lld out of range "
				    "[0, %d)", (long long)in->cores[i],
				    MAX_BARRIER_CORES);
		for (int j = 0; j < i; j++)
			if (in->cores[j] == in->cores[i])
				return fail(v, "CoreBarrier core %lld listed "
					    "twice", (long long)in->cores[i]);
	}
	if (in->group && !*in->group)
		return fail(v, "CoreBarrier group is empty");
	return 0;
}

/* The core whose bank an id-form entry of the current function uses: the
** function's neuron_core_id, else the module's. */
static int64_t fn_core(const vctx *v)
{
	return v->fn && v->fn->has_core_id ? v->fn->neuron_core_id
					   : lm_module_core_id(v->m);
}

/* A semaphore declaration of slot id of core's bank (NULL: none). */
static const lm_semaphore *declared_id(const vctx *v, int64_t core,
				       int64_t id)
{
	int64_t own = lm_module_core_id(v->m);
	for (int i = 0; i < v->m->n_semaphores; i++) {
		const lm_semaphore *s = &v->m->semaphores[i];
		if (s->has_id && s->id == id &&
		    (s->has_core ? s->core : own) == core)
			return s;
	}
	return NULL;
}

/* "Loop 'l'" / "Loop" (no name) / "DynamicForLoop 'dl'" into buf. */
static const char *loop_label(const lm_inst *in, char *buf, size_t n)
{
	if (in->name && *in->name)
		snprintf(buf, n, "%s '%s'", opname(in), in->name);
	else
		snprintf(buf, n, "%s", opname(in));
	return buf;
}

/*
** A Loop's axis: stride > 0 and ub >= lb, or all three 0 (an axis with no
** bound: one pass of the body). The compiler's simulator runs a loop whose
** bounds count down, or that does not advance, zero times; lncsim refuses
** what has no agreed meaning.
*/
static int check_loop(vctx *v, const lm_inst *in)
{
	const lm_axis *a = &in->axis;
	char lbl[300];
	const char *why = NULL;
	if (!in->has_axis || (!a->lb && !a->ub && !a->stride))
		return 0;
	if (a->stride == 0)
		why = "stride 0";
	else if (a->stride < 0)
		why = "negative stride (a loop counts up)";
	else if (a->ub < a->lb)
		why = "negative trip count";
	if (!why)
		return 0;
	return fail(v, "%s axis '%s': lb %lld, ub %lld, stride %lld: %s",
		    loop_label(in, lbl, sizeof lbl), S(a->name),
		    (long long)a->lb, (long long)a->ub, (long long)a->stride,
		    why);
}

/*
** A DynamicForLoop's axis, the compiler's contract for it: lb and stride
** constants (AffExprKind without terms), stride > 0, ub one
** IntRuntimeValueKind term (coeff * register + c).
*/
static int check_dynloop(vctx *v, const lm_inst *in)
{
	const lm_axis *a = &in->axis;
	int n = 0, kind = 0;
	int64_t c = 0;
	char lbl[300];
	if (!in->has_axis)
		return 0;
	loop_label(in, lbl, sizeof lbl);
	if (lm_affine_terms(a->lb_e, &n, NULL, NULL, NULL, NULL) || n)
		return fail(v, "%s axis '%s': lb must be a constant (an "
			    "AffExprKind without terms)", lbl, S(a->name));
	if (lm_affine_terms(a->stride_e, &n, &c, NULL, NULL, NULL) || n ||
	    c <= 0)
		return fail(v, "%s axis '%s': stride must be a constant > 0 "
			    "(an AffExprKind without terms)", lbl, S(a->name));
	if (lm_affine_terms(a->ub_e, &n, NULL, &kind, NULL, NULL) || n != 1 ||
	    kind != LM_AFF_REG)
		return fail(v, "%s axis '%s': ub must be one IntRuntimeValueKind "
			    "term (coeff * register + c)", lbl, S(a->name));
	return 0;
}

/* Is name a block of the region being checked (the blocks around the
** instruction: its function's, or the body's it is in)? */
static int in_region(const vctx *v, const char *name)
{
	for (int b = 0; b < v->rnb; b++)
		if (v->rbs[b].name && !strcmp(v->rbs[b].name, name))
			return 1;
	return 0;
}

/* A branch goes to a block of its own region: a CompareAndBranch's
** on_true / on_false, an UnconditionalBranch's target. */
static int check_branch(vctx *v, const lm_inst *in)
{
	const char *key[2] = { "on_true", "on_false" };
	const char *to[2] = { in->on_true, in->on_false };
	int n = 2;
	if (in->op == LM_OP_UBRANCH) {
		key[0] = "target";
		to[0] = in->branch_target;
		n = 1;
	}
	for (int i = 0; i < n; i++)
		if (to[i] && !in_region(v, to[i]))
			return fail(v, "%s '%s': %s '%s' names no block of the "
				    "region%s", opname(in), S(in->name), key[i],
				    to[i], has_block(v->fn->blocks,
						     v->fn->n_blocks, to[i]) ?
				    " (a block of another region of the function"
				    ": a branch stays in its own)" : "");
	return 0;
}

/* A Break leaves the innermost loop around it (Loop, DynamicForLoop,
** DoWhile): there must be one. */
static int check_break(vctx *v, const lm_inst *in)
{
	if (!v->n_loops)
		return fail(v, "Break '%s' is not inside a loop", S(in->name));
	return 0;
}

/* Does trigger t fire the block named name? */
static int fires(const lm_inst *t, const char *name)
{
	for (int i = 0; i < t->n_dma_blocks; i++)
		if (t->dma_blocks[i] && !strcmp(t->dma_blocks[i], name))
			return 1;
	return 0;
}

/* A DMABlock's queue (lncsim's extension), when it says one, exists; its
** dma_trigger, when it names an instruction, names a trigger firing it. */
static int check_dmablock(vctx *v, const lm_inst *in)
{
	const cJSON *t = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "dma_trigger") : NULL;
	const lm_inst *ti;
	if (in->queue && !lm_strmap_lookup(&v->queues, in->queue))
		return fail(v, "DMA block '%s' names queue '%s', which does not "
			    "exist", S(in->name), in->queue);
	if (!cJSON_IsString(t) || in_queue_blocks(v))
		return 0;
	ti = fn_inst(v, t->valuestring);
	if (ti && (lm_inst_it(ti) != LM_IT_DMATrigger ||
		   !fires(ti, S(in->name))))
		return fail(v, "dma_trigger '%s' is not a DMATrigger firing DMA "
			    "block '%s'", t->valuestring, S(in->name));
	return 0;
}

/* A trigger fires at least one block; the blocks it fires are blocks of
** its queue: the one they say, else the queue of every trigger naming
** them. */
static int check_dmatrigger(vctx *v, const lm_inst *in)
{
	if (!in->n_dma_blocks)
		return fail(v, "DMATrigger '%s' fires no DMA block (dma_blocks "
			    "is empty)", S(in->name));
	for (int i = 0; i < in->n_dma_blocks; i++) {
		const lm_inst *b = in->dma_blocks[i] ?
			fn_inst(v, in->dma_blocks[i]) : NULL;
		const lm_inst *o;
		void **slot;
		if (b && b->queue && in->queue && strcmp(b->queue, in->queue))
			return fail(v, "DMATrigger '%s' (queue %s): dma_blocks "
				    "'%s' is a DMA block of another queue (queue "
				    "%s)", S(in->name), in->queue,
				    in->dma_blocks[i], b->queue);
		if (!b || b->queue || !in->queue)
			continue;
		slot = lm_strmap_ref(&v->blkq, in->dma_blocks[i]);
		o = *slot;
		if (!o)
			*slot = (void *)in;
		else if (o->queue && strcmp(o->queue, in->queue))
			return fail(v, "DMATrigger '%s' (queue %s): dma_blocks "
				    "'%s' is a DMA block of another queue (queue "
				    "%s, of DMATrigger '%s')", S(in->name),
				    in->queue, in->dma_blocks[i], o->queue,
				    S(o->name));
	}
	return 0;
}

/* The semaphores a GroupResetSemaphores resets are declared slots of its
** core's bank. */
static int check_groupreset(vctx *v, const lm_inst *in)
{
	int64_t core = fn_core(v);
	for (int i = 0; i < in->n_sema_group; i++)
		if (in->sema_group[i] > 255 ||
		    !declared_id(v, core, in->sema_group[i]))
			return fail(v, "sema_group: semaphore id %lld is not "
				    "declared by the module (core %lld)",
				    (long long)in->sema_group[i],
				    (long long)core);
	return 0;
}

/* A DMA descriptor's operands are access patterns the descriptor holds
** (physical_ap): a register or symbolic one has no place in it. */
static int check_descriptor(vctx *v, const lm_inst *in)
{
	for (int k = 0; k < 2; k++) {
		int n = k ? in->n_outs : in->n_ins;
		const lm_arg *args = k ? in->outs : in->ins;
		for (int i = 0; i < n; i++) {
			const cJSON *kind;
			if (args[i].kind == LM_ARG_PHYSICAL_AP)
				continue;
			kind = args[i].extra ? cJSON_GetObjectItemCaseSensitive(
				args[i].extra, "kind") : NULL;
			return fail(v, "%s[%d]: %s: DMA descriptor cannot have "
				    "dynamic AP (a descriptor's operands are "
				    "physical_ap)", k ? "outs" : "ins", i,
				    args[i].kind == LM_ARG_IMM ? "imm_value" :
				    cJSON_IsString(kind) ? kind->valuestring
				    : "?");
		}
	}
	return 0;
}

/* The rules of single opcodes that their rows cannot say. */
static const struct {
	int it;
	int (*check)(vctx *v, const lm_inst *in);
	int first;  /* before the rows' references are resolved */
} field_hooks[] = {
	{ LM_IT_CoreBarrier, check_corebarrier, 0 },
	{ LM_IT_NKIKernel, check_nkikernel, 0 },
	{ LM_IT_Call, check_call_formals, 0 },
	{ LM_IT_Loop, check_loop, 0 },
	{ LM_IT_DynamicForLoop, check_dynloop, 0 },
	{ LM_IT_CompareAndBranch, check_branch, 1 },
	{ LM_IT_UnconditionalBranch, check_branch, 1 },
	{ LM_IT_Break, check_break, 0 },
	{ LM_IT_DMABlock, check_dmablock, 0 },
	{ LM_IT_DMATrigger, check_dmatrigger, 0 },
	{ LM_IT_GroupResetSemaphores, check_groupreset, 0 },
	{ LM_IT_DMADescriptorCopy, check_descriptor, 0 },
	{ LM_IT_DMADescriptorCCE, check_descriptor, 0 },
	{ LM_IT_DMADescriptorTranspose, check_descriptor, 0 },
	{ LM_IT_DMADescriptorReplicate, check_descriptor, 0 },
};

/* The hooks of opcode it of one kind (first: those before the rows'
** references). */
static int run_hooks(vctx *v, const lm_inst *in, int it, int first)
{
	int rc;
	for (size_t h = 0; h < sizeof field_hooks / sizeof *field_hooks; h++)
		if (field_hooks[h].it == it && field_hooks[h].first == first &&
		    (rc = field_hooks[h].check(v, in)) != 0)
			return rc;
	return 0;
}

/*
** The opcode's own keys, row by row (fields.def): a required key (REQ,
** NEED) the instruction holds no value for, where a missing key reads as
** no value, is missing ("Call needs target"); then the hooks that come
** first (a branch's region), then every reference resolves; then the
** opcode's other hooks.
*/
static int check_fields(vctx *v, const lm_inst *in)
{
	int it = lm_inst_it(in), rc;
	const lm_opinfo *o = lm_op_info(it);
	lm_keyview kv;
	for (int i = 0; o && i < o->n_fields; i++) {
		const lm_field *f = o->fields[i];
		int has = lm_inst_key_view(in, f, &kv);
		if (has <= 0 && lm_field_required(f, in->op != LM_OP_OTHER) &&
		    (has < 0 || !lm_field_has_default(f)))
			return fail(v, "%s needs %s", opname(in), f->key);
	}
	if ((rc = run_hooks(v, in, it, 1)) != 0)
		return rc;
	for (int i = 0; o && i < o->n_fields; i++) {
		const lm_field *f = o->fields[i];
		if (lm_inst_key_view(in, f, &kv) > 0 &&
		    (rc = check_value_refs(v, in, f, &kv)) != 0)
			return rc;
	}
	return run_hooks(v, in, it, 0);
}

/*
** One sync_info entry (upd: an on_update): a named semaphore is a module
** semaphore, a numbered one (0..255) is declared for the core whose bank
** it uses, an event (the evt modes) is numbered; sem-ge-reg names a
** register and only it does; sem-inc / sem-dec add 1; a wait's threshold
** is not negative; the modes are not invalid.
*/
static int check_sync_entry(vctx *v, const lm_sync *e, int upd)
{
	const char *list = upd ? "on_update" : "on_wait";
	const char *mode = lm_enum_name(upd ? LM_ET_UpdateMode : LM_ET_WaitMode,
					e->mode);
	int evt = upd ? e->mode == LM_UPD_EVT_SET
		      : e->mode == LM_WAIT_EVT_SET_THEN_CLEAR;
	int64_t core = upd && e->has_core ? e->core : fn_core(v);
	if (!mode)
		mode = "?";
	if ((upd && e->mode == LM_UPD_INVALID) ||
	    (!upd && e->mode == LM_WAIT_INVALID))
		return fail(v, "%s: mode 'invalid' has no meaning", list);
	if (e->semaphore && evt)
		return fail(v, "%s %s: an event is given by its id, not by a "
			    "name ('%s')", list, mode, e->semaphore);
	if (e->semaphore && !lm_strmap_lookup(&v->sems, e->semaphore))
		return fail(v, "%s semaphore '%s' is not a module semaphore",
			    upd ? "signal" : "wait", e->semaphore);
	if (!e->semaphore && (e->id < 0 || e->id > 255))
		return fail(v, "%s: %s id %lld is outside 0..255", list,
			    evt ? "event" : "semaphore", (long long)e->id);
	if (!e->semaphore && !evt && !declared_id(v, core, e->id))
		return fail(v, "%s: semaphore id %lld is not declared by the "
			    "module (core %lld)", list, (long long)e->id,
			    (long long)core);
	if (!upd && e->mode == LM_WAIT_SEM_GE_REG && !e->regref)
		return fail(v, "on_wait sem-ge-reg: needs regref (the register "
			    "holding the threshold)");
	if (!upd && e->regref && e->mode != LM_WAIT_SEM_GE_REG)
		return fail(v, "on_wait %s: regref '%s' given (only a "
			    "sem-ge-reg wait reads a register)", mode,
			    e->regref);
	if (upd && (e->mode == LM_UPD_SEM_INC || e->mode == LM_UPD_SEM_DEC) &&
	    e->has_value && e->value != 1)
		return fail(v, "on_update %s: value %lld (Semaphore %s value "
			    "must be 1)", mode, (long long)e->value,
			    e->mode == LM_UPD_SEM_INC ? "inc" : "dec");
	if (!upd && e->has_value && e->value < 0)
		return fail(v, "wait value %lld is negative",
			    (long long)e->value);
	return 0;
}

/* dependencies (earlier, same function), wait and signal semaphores. */
static int check_sync(vctx *v, const lm_inst *in)
{
	int rc;
	for (int i = 0; i < in->n_deps; i++) {
		const char *d = in->deps[i];
		const lm_function *owner;
		if (!d || !*d)
			return fail(v, "empty dependency name");
		if (in->name && strcmp(d, in->name) == 0)
			return fail(v, "dependency '%s' is the instruction "
				    "itself", d);
		intptr_t at = (intptr_t)lm_strmap_lookup(&v->insts, d) - 1;
		owner = at >= 0 ? v->inst_at[at] : NULL;
		if (owner == v->fn && at < v->pos)
			continue;
		if (!owner)
			return fail(v, "dependency '%s' names no instruction",
				    d);
		if (owner != v->fn)
			return fail(v, "dependency '%s' is an instruction of "
				    "%s '%s', not of %s '%s'", d,
				    owner_kind(v, owner), fname(owner),
				    owner_kind(v, v->fn), fname(v->fn));
		return fail(v, "dependency '%s' is not an earlier instruction "
			    "of function '%s' (dependencies point backwards, "
			    "so cycles cannot form)", d, fname(v->fn));
	}
	/* loop-carried: from an earlier iteration, so any instruction of
	   the function (itself included) */
	for (int i = 0; i < in->n_lc_deps; i++) {
		const char *d = in->lc_deps[i];
		intptr_t at;
		if (!d || !*d)
			return fail(v, "empty loop-carried dependency name");
		at = (intptr_t)lm_strmap_lookup(&v->insts, d) - 1;
		if (at < 0)
			return fail(v, "loop-carried dependency '%s' names no "
				    "instruction", d);
		if (v->inst_at[at] != v->fn)
			return fail(v, "loop-carried dependency '%s' is an "
				    "instruction of function '%s', not of '%s'",
				    d, fname(v->inst_at[at]), fname(v->fn));
	}
	for (int i = 0; i < in->n_wait; i++)
		if ((rc = check_sync_entry(v, &in->wait[i], 0)) != 0)
			return rc;
	for (int i = 0; i < in->n_update; i++)
		if ((rc = check_sync_entry(v, &in->update[i], 1)) != 0)
			return rc;
	return 0;
}

/*
** The index operand of an indirect move (IndirectLoad, Gather,
** IndirectCopy) given in indirection_ins: one entry, a physical access
** pattern that resolves and stays in bounds, of an integer dtype of 16
** bits or more (int16, uint16, int32, uint32, int64, uint64). Without
** indirection_ins the indices are given in a form lncsim does not read
** (the simulator refuses it).
*/
static int check_indirection(vctx *v, const lm_inst *in)
{
	const cJSON *ii = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "indirection_ins") : NULL;
	const lm_alloc *al;
	lm_arg a;
	opnd o;
	char msg[300];
	int rc;
	if ((in->op != LM_OP_INDIRECTLOAD && in->op != LM_OP_GATHER &&
	     in->op != LM_OP_INDIRECTCOPY) || !ii || cJSON_IsNull(ii))
		return 0;
	if (!cJSON_IsArray(ii) || cJSON_GetArraySize(ii) != 1)
		return fail(v, "%s takes its indices as one indirection_ins "
			    "operand (has %d)", opname(in), cJSON_IsArray(ii) ?
			    cJSON_GetArraySize(ii) : 0);
	if (lm_arg_from_json(&a, ii->child, msg, sizeof msg))
		return fail(v, "indirection_ins[0]: %s", msg);
	rc = 0;
	if (a.kind != LM_ARG_PHYSICAL_AP) {
		rc = fail(v, "indirection_ins[0] must be a physical_ap");
		goto done;
	}
	switch (a.dtype) {
	case LM_DT_INT16: case LM_DT_UINT16: case LM_DT_INT32:
	case LM_DT_UINT32: case LM_DT_INT64: case LM_DT_UINT64:
		break;
	default:
		rc = fail(v, "%s indices (indirection_ins[0]) must be int16, "
			  "uint16, int32, uint32, int64 or uint64 (got %s)",
			  opname(in), dtname(a.dtype));
		goto done;
	}
	al = a.memsetref ? lm_strmap_lookup(&v->allocp, a.memsetref) : NULL;
	if (!a.has_start_partition)
		lm_arg_unfold(&a, lm_arg_part_elems(&a, al && a.memref ?
			lm_alloc_find_memloc(al, a.memref) : NULL));
	rc = check_operand(v, &a, &o);
done:
	lm_arg_clear(&a);
	return rc;
}

/* Every operand (resolution and bounds), then the opcode's shape rules. */
static int check_operands(vctx *v, const lm_inst *in)
{
	int nin, nout, rc = 0, shaped = 1;
	opnd *ins = NULL, *outs = NULL, small[8];

	expected_counts(in, &nin, &nout);
	if (nin >= 0 && in->n_ins != nin)
		return fail(v, "%s needs %d input%s, got %d", opname(in), nin,
			    nin == 1 ? "" : "s", in->n_ins);
	if (nout >= 0 && in->n_outs != nout)
		return fail(v, "%s needs %d output%s, got %d", opname(in), nout,
			    nout == 1 ? "" : "s", in->n_outs);

	if (in->n_ins + in->n_outs + 2 <= 8) {
		memset(small, 0, (size_t)(in->n_ins + in->n_outs + 2) *
		       sizeof *small);
		ins = small;
		outs = small + in->n_ins + 1;
	} else {
		ins = lm_xcalloc((size_t)in->n_ins + 1, sizeof *ins);
		outs = lm_xcalloc((size_t)in->n_outs + 1, sizeof *outs);
	}
	for (int k = 0; k < 2 && rc == 0; k++) {
		int n = k ? in->n_outs : in->n_ins;
		const lm_arg *args = k ? in->outs : in->ins;
		opnd *res = k ? outs : ins;
		for (int i = 0; i < n && rc == 0; i++) {
			const lm_arg *a = &args[i];
			size_t w = wpush_operand(v, k, i);
			if (a->kind == LM_ARG_PHYSICAL_AP) {
				rc = check_operand(v, a, &res[i]);
				if (rc == 0 && is_onchip_op(in) &&
				    res[i].is_dram)
					rc = fail(v, "%s operands must be in "
						  "SBUF or PSUM ('%s' is %s)",
						  opname(in),
						  S(res[i].loc->name),
						  mtname(res[i].loc->type));
			} else if (nin >= 0 && a->kind == LM_ARG_IMM) {
				rc = fail(v, "%s operands must be access "
					  "patterns (physical_ap), not "
					  "imm_value", opname(in));
			} else {
				shaped = 0; /* opaque: the simulator decides */
			}
			if (rc == 0)
				wpop(v, w);
		}
	}
	if (rc == 0 && shaped && nin >= 0)
		rc = check_shapes(v, in, ins, outs);
	if (rc == 0)
		rc = check_indirection(v, in);
	if (ins != small) {
		free(ins);
		free(outs);
	}
	return rc;
}

/* ---- register references ------------------------------------------------ */

/* One register reference (lm_json_each_regref): it names an allocation
** with a REG memory location. */
static int check_regref(cJSON *j, void *arg)
{
	vctx *v = arg;
	const lm_alloc *al;
	if (!cJSON_IsString(j) || !j->valuestring)
		return fail(v, "%s: expected a register name (string)",
			    j->string);
	al = lm_strmap_lookup(&v->allocp, j->valuestring);
	if (!al)
		return fail(v, "%s '%s' names no register allocation",
			    j->string, j->valuestring);
	for (int i = 0; i < al->n_memlocs; i++)
		if (al->memlocs[i].type == LM_MT_REG)
			return 0;
	return fail(v, "%s '%s' names allocation '%s', which is not a "
		    "register (no REG memory location)", j->string,
		    j->valuestring, al->name);
}

/* One register name of an instruction's fields (lm_inst_each_regname). */
static int check_field_reg(void *arg, const char *key, const char *name)
{
	return check_reg_name(arg, key, name);
}

/*
** Every register reference of an instruction resolves: those of each
** operand (path .../operand ins[i]), those among the instruction's
** carried keys (a Loop's too) and those its fields hold.
*/
static int check_registers(vctx *v, const lm_inst *in)
{
	int rc;
	for (int k = 0; k < 2; k++) {
		int n = k ? in->n_outs : in->n_ins;
		const lm_arg *args = k ? in->outs : in->ins;
		for (int i = 0; i < n; i++) {
			size_t w;
			if (!args[i].extra)
				continue;
			w = wpush_operand(v, k, i);
			if ((rc = lm_arg_each_regref(&args[i], check_regref,
						     v)) != 0)
				return rc;
			wpop(v, w);
		}
	}
	if (in->extra &&
	    (rc = lm_json_each_regref(in->extra, check_regref, v)) != 0)
		return rc;
	return lm_inst_each_regname(in, check_field_reg, v);
}

/* ---- tensor references in carried JSON ---------------------------------- */

/*
** One tensor reference (lm_json_each_tensorref) of an operand's carried
** JSON: its memsetref names an allocation of the module and its memref a
** memory location of that allocation (of any allocation when the object
** has no memsetref).
*/
static int check_tensorref(cJSON *obj, cJSON *ms, cJSON *mr, void *arg)
{
	vctx *v = arg;
	const lm_alloc *al = NULL;
	(void)obj;
	if (ms) {
		if (!cJSON_IsString(ms) || !ms->valuestring)
			return fail(v, "memsetref: expected an allocation name "
				    "(string)");
		al = lm_strmap_lookup(&v->allocp, ms->valuestring);
		if (!al)
			return fail(v, "memsetref '%s' names no allocation",
				    ms->valuestring);
	}
	if (!mr)
		return 0;
	if (!cJSON_IsString(mr) || !mr->valuestring)
		return fail(v, "memref: expected a memory location name "
			    "(string)");
	if (al && !lm_alloc_find_memloc(al, mr->valuestring))
		return fail(v, "memref '%s' is not a memory location of "
			    "allocation '%s'", mr->valuestring, al->name);
	if (!al && !lm_strmap_lookup(&v->memlocs, mr->valuestring))
		return fail(v, "memref '%s' names no memory location",
			    mr->valuestring);
	return 0;
}

/*
** The tensor references an instruction's operands carry in JSON resolve
** (an opaque operand's memsetref / memref, nested access patterns); path
** .../operand ins[i]. The struct members of physical_ap operands are
** check_operand's.
*/
static int check_tensorrefs(vctx *v, const lm_inst *in)
{
	int rc;
	for (int k = 0; k < 2; k++) {
		int n = k ? in->n_outs : in->n_ins;
		const lm_arg *args = k ? in->outs : in->ins;
		for (int i = 0; i < n; i++) {
			size_t w;
			if (!args[i].extra)
				continue;
			w = wpush_operand(v, k, i);
			if ((rc = lm_arg_each_tensorref(&args[i],
							check_tensorref,
							v)) != 0)
				return rc;
			wpop(v, w);
		}
	}
	return 0;
}

/* ---- loop axes in expressions ------------------------------------------- */

/* One loop axis named by an expression: an axis of a loop around the
** instruction, else the error names the axes there are (innermost
** first). */
static int check_axis_name(vctx *v, const char *key, const char *axis)
{
	lm_buf b = LM_BUF_INIT;
	int rc;
	for (int i = 0; i < v->n_loops; i++)
		if (v->loops[i] && !strcmp(v->loops[i], axis))
			return 0;
	for (int i = v->n_loops - 1; i >= 0; i--)
		if (v->loops[i])
			lm_buf_printf(&b, "%s%s", b.size ? ", " : "",
				      v->loops[i]);
	rc = fail(v, "%s: AffIVKind '%s' names no enclosing loop axis "
		  "(enclosing: %s)", key, axis, b.size ? lm_buf_cstr(&b)
		  : "none");
	lm_buf_free(&b);
	return rc;
}

/* Every AffIVKind node of carried JSON j (under the key key). */
static int check_axes_json(vctx *v, const char *key, const cJSON *j)
{
	const cJSON *k, *a;
	int rc;
	if (cJSON_IsObject(j) && (k = cJSON_GetObjectItemCaseSensitive(
					  j, "kind")) != NULL &&
	    cJSON_IsString(k) && !strcmp(k->valuestring, "AffIVKind") &&
	    cJSON_IsString(a = cJSON_GetObjectItemCaseSensitive(j, "axis")))
		return check_axis_name(v, key, a->valuestring);
	if (!cJSON_IsObject(j) && !cJSON_IsArray(j))
		return 0;
	/* the tree is at most as deep as cJSON parses (1000) */
	for (const cJSON *c = j->child; c; c = c->next)
		if ((rc = check_axes_json(v, key, c)) != 0)
			return rc;
	return 0;
}

/* The state of a walk of an expression's axes (lm_affine_each_name). */
typedef struct axis_walk {
	vctx *v;
	const char *key;
} axis_walk;

static int axis_leaf(void *ctx, int kind, char **name)
{
	axis_walk *w = ctx;
	return kind == LM_AFF_IV ? check_axis_name(w->v, w->key, *name) : 0;
}

/*
** Every loop axis the instruction's expressions name (AffIVKind) is the
** axis of a loop around it: in its carried keys (the MaybeAffine values,
** order, unroll_dependencies, predicates, ...), in its operands'
** (symbolic access patterns, dynamic offsets), in a DynamicForLoop's
** bounds (outside its own body: not its own axis) and a DoWhile's cond.
*/
static int check_loop_axes(vctx *v, const lm_inst *in)
{
	lm_affine *const e[4] = { in->axis.lb_e, in->axis.ub_e,
				  in->axis.stride_e, in->cond };
	int rc;
	for (const cJSON *c = in->extra ? in->extra->child : NULL; c;
	     c = c->next)
		if ((rc = check_axes_json(v, c->string ? c->string : "", c)))
			return rc;
	for (int k = 0; k < 2; k++) {
		int n = k ? in->n_outs : in->n_ins;
		const lm_arg *args = k ? in->outs : in->ins;
		for (int i = 0; i < n; i++) {
			size_t w;
			if (!args[i].extra)
				continue;
			w = wpush_operand(v, k, i);
			for (const cJSON *c = args[i].extra->child; c;
			     c = c->next)
				if ((rc = check_axes_json(v, c->string ?
							  c->string : "", c)))
					return rc;
			wpop(v, w);
		}
	}
	for (int i = 0; i < 4; i++) {
		axis_walk w = { v, i < 3 ? "DynamicForLoopAxis" : "cond" };
		if (e[i] && (rc = lm_affine_each_name(e[i], axis_leaf, &w)))
			return rc;
	}
	return 0;
}

/* Enter the body of a loop whose axis is named axis (NULL: none). */
static void push_loop(vctx *v, const char *axis)
{
	lm_grow(&v->loops, &v->cap_loops, v->n_loops + 1, sizeof *v->loops);
	v->loops[v->n_loops++] = axis;
}

/* One instruction: synchronization, operands, registers, loop axes,
** fields. */
static int check_inst(vctx *v, const lm_inst *in)
{
	int rc;
	if ((rc = check_sync(v, in)) != 0)
		return rc;
	if ((rc = check_operands(v, in)) != 0)
		return rc;
	if ((rc = check_tensorrefs(v, in)) != 0 ||
	    (rc = check_registers(v, in)) != 0 ||
	    (rc = check_loop_axes(v, in)) != 0)
		return rc;
	return check_fields(v, in);
}

/*
** A block's arguments: an argument's register is a register allocation;
** each incoming value comes from a block of the function and is a storage
** of the module (a register for the {"regref", "block"} form; an
** allocation or a memory location otherwise).
*/
static int check_incoming(vctx *v, const lm_block *bl)
{
	int rc;
	for (int i = 0; i < bl->n_args; i++) {
		const lm_blockarg *a = &bl->args[i];
		if (a->regref &&
		    (rc = check_reg_name(v, "arguments regref", a->regref)))
			return rc;
		for (int k = 0; k < a->n_incoming; k++) {
			const lm_incoming *x = &a->incoming[k];
			if (!has_block(v->fn->blocks, v->fn->n_blocks, x->block))
				return fail(v, "incoming_values: '%s' is not a "
					    "block of function '%s'", x->block,
					    fname(v->fn));
			if (x->form == LM_IN_REGREF) {
				if ((rc = check_reg_name(v, "incoming_values "
							 "regref", x->value)))
					return rc;
			} else if (!lm_strmap_lookup(&v->allocp, x->value) &&
				   !lm_strmap_lookup(&v->memlocs, x->value)) {
				return fail(v, "incoming_values: '%s' names no "
					    "allocation or memory location",
					    x->value);
			}
		}
	}
	return 0;
}

static int check_region(vctx *v, const lm_block *bs, int nb);

/* The instructions of blocks in program order (recursing into the bodies
** of Loops and of the other opcodes with blocks); the region being
** checked is bs for their time. */
static int check_blocks(vctx *v, const lm_block *bs, int nb)
{
	const lm_block *rbs = v->rbs;
	int rnb = v->rnb, rc = check_region(v, bs, nb);
	v->rbs = rbs;
	v->rnb = rnb;
	return rc;
}

/* check_blocks over the blocks bs of one region: each instruction, then
** its body (inside the loop it is, when it is one). */
static int check_region(vctx *v, const lm_block *bs, int nb)
{
	v->rbs = bs;
	v->rnb = nb;
	for (int b = 0; b < nb; b++) {
		const lm_block *bl = &bs[b];
		size_t w = wpush_named(v, "block", bl->name, b);
		int rc2;
		for (int i = 0; i < bl->n_insts; i++) {
			const lm_inst *in = &bl->insts[i];
			int rc;
			int loop = in->op == LM_OP_LOOP ||
				   in->op == LM_OP_DYNLOOP ||
				   in->op == LM_OP_DOWHILE;
			size_t w2;
			if (in->op == LM_OP_LOOP) {
				w2 = wpush_named(v, "loop", in->name, i);
				if ((rc = check_tensorrefs(v, in)) != 0 ||
				    (rc = check_registers(v, in)) != 0 ||
				    (rc = check_loop_axes(v, in)) != 0 ||
				    (rc = check_fields(v, in)) != 0)
					return rc;
			} else {
				w2 = wpush_named(v, "instruction", in->name, i);
				if ((rc = check_inst(v, in)) != 0)
					return rc;
				v->pos++;
			}
			if (loop)
				push_loop(v, in->axis.name);
			if (in->n_blocks && (rc = check_blocks(v, in->blocks,
							       in->n_blocks)) != 0)
				return rc;
			if (loop)
				v->n_loops--;
			wpop(v, w2);
		}
		if ((rc2 = check_incoming(v, bl)) != 0)
			return rc2;
		wpop(v, w);
	}
	return 0;
}

/* ---- the module's call_to_physical_memlocs ---------------------------------- */

/* One entry: call names a Call of the module, each of names (an array)
** a memory location of the function it calls. */
static int check_call_memloc(vctx *v, const char *call, const cJSON *names)
{
	intptr_t at = (intptr_t)lm_strmap_lookup(&v->insts, call) - 1;
	const lm_inst *c = at >= 0 ? v->inst_ptr[at] : NULL;
	const lm_function *callee;
	const cJSON *x;
	if (!c || c->op != LM_OP_CALL)
		return fail(v, "call_to_physical_memlocs: '%s' names no Call "
			    "instruction", call);
	callee = c->target ? lm_strmap_lookup(&v->funcs, c->target) : NULL;
	cJSON_ArrayForEach(x, names)
		if (cJSON_IsString(x) && callee &&
		    !fn_memloc(callee, x->valuestring))
			return fail(v, "call_to_physical_memlocs: '%s' (of call "
				    "'%s') is not a memory location of function "
				    "'%s'", x->valuestring, call, fname(callee));
	return 0;
}

/*
** The module's call_to_physical_memlocs (the memory locations bound as a
** Call's actual arguments), an object of call names or an array of
** [call, [memory location, ...]] pairs (the loader checked the shape).
*/
static int check_call_memlocs(vctx *v)
{
	const cJSON *cm = v->m->extra ? cJSON_GetObjectItemCaseSensitive(
		v->m->extra, "call_to_physical_memlocs") : NULL;
	const cJSON *e;
	int rc;
	if (!cm || cJSON_IsNull(cm))
		return 0;
	wpop(v, 0);
	wpush(v, "module");
	cJSON_ArrayForEach(e, cm) {
		if (cJSON_IsObject(cm))
			rc = check_call_memloc(v, e->string, e);
		else if (cJSON_IsString(e->child))
			rc = check_call_memloc(v, e->child->valuestring,
					       e->child->next);
		else
			rc = 0;
		if (rc)
			return rc;
	}
	wpop(v, 0);
	return 0;
}

/* ---- call cycles ---------------------------------------------------------- */

/* A Call or NKIKernel of a function: its callee and the instruction. */
typedef struct call_edge {
	int to;                 /* index of the callee in m->functions */
	const lm_inst *in;
} call_edge;

/* Append the calls of blocks (Loops' bodies included) to *e. */
static void collect_calls(vctx *v, const lm_block *bs, int nb,
			  call_edge **e, int *n, int *cap)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			const char *t = in->op == LM_OP_CALL ? in->target :
				in->op == LM_OP_NKIKERNEL ? in->func : NULL;
			const lm_function *f;
			if (in->n_blocks)
				collect_calls(v, in->blocks, in->n_blocks, e, n,
					      cap);
			if (!t || !(f = lm_strmap_lookup(&v->funcs, t)))
				continue;
			lm_grow(e, cap, *n + 1, sizeof **e);
			(*e)[*n].to = (int)(f - v->m->functions);
			(*e)[*n].in = in;
			(*n)++;
		}
}

/* Push the path of instruction want within blocks; 1 when found. */
static int push_inst_path(vctx *v, const lm_block *bs, int nb,
			  const lm_inst *want)
{
	for (int b = 0; b < nb; b++) {
		size_t w = wpush_named(v, "block", bs[b].name, b);
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in == want) {
				wpush_named(v, "instruction", in->name, i);
				return 1;
			}
			if (in->n_blocks) {
				size_t w2 = in->op == LM_OP_LOOP ?
					wpush_named(v, "loop", in->name, i) :
					wpush_named(v, "instruction", in->name,
						    i);
				if (push_inst_path(v, in->blocks, in->n_blocks,
						   want))
					return 1;
				wpop(v, w2);
			}
		}
		wpop(v, w);
	}
	return 0;
}

/*
** No function reaches itself through Calls and NKIKernel calls (in any
** block, Loop bodies included): the simulator expands a call in place, so
** a cycle never ends. Depth-first over the call graph with an explicit
** stack; the first cycle found is reported at the call of its first
** function: "function f/block b/instruction c: Call cycle f -> g -> f".
*/
static int check_call_cycles(vctx *v)
{
	const lm_module *m = v->m;
	int nf = m->n_functions, n_e = 0, cap_e = 0, rc = 0;
	call_edge *e = NULL;
	int *start = lm_xcalloc((size_t)nf + 1, sizeof *start);
	unsigned char *color = lm_xcalloc((size_t)nf + 1, 1);
	int *stk_fn = lm_xcalloc((size_t)nf + 1, sizeof *stk_fn);
	int *stk_next = lm_xcalloc((size_t)nf + 1, sizeof *stk_next);

	for (int f = 0; f < nf; f++) {
		start[f] = n_e;
		collect_calls(v, m->functions[f].blocks,
			      m->functions[f].n_blocks, &e, &n_e, &cap_e);
	}
	start[nf] = n_e;
	for (int root = 0; root < nf && !rc; root++) {
		int sp = 0;
		if (color[root])
			continue;
		color[root] = 1;
		stk_fn[sp] = root;
		stk_next[sp++] = start[root];
		while (sp > 0 && !rc) {
			int f = stk_fn[sp - 1], k;
			const call_edge *ce;
			if (stk_next[sp - 1] >= start[f + 1]) {
				color[f] = 2;
				sp--;
				continue;
			}
			ce = &e[stk_next[sp - 1]++];
			if (color[ce->to] == 0) {
				color[ce->to] = 1;
				stk_fn[sp] = ce->to;
				stk_next[sp++] = start[ce->to];
				continue;
			}
			if (color[ce->to] != 1)
				continue;
			/* a cycle: stk_fn[k..sp-1], back to stk_fn[k] */
			for (k = 0; stk_fn[k] != ce->to; k++)
				;
			{
				const lm_function *cf = &m->functions[stk_fn[k]];
				lm_buf b = LM_BUF_INIT;
				size_t w = wpush(v, "function %s", cf->name);
				push_inst_path(v, cf->blocks, cf->n_blocks,
					       e[stk_next[k] - 1].in);
				for (int j = k; j < sp; j++)
					lm_buf_printf(&b, "%s -> ",
						      fname(&m->functions[stk_fn[j]]));
				lm_buf_puts(&b, fname(cf));
				rc = fail(v, "Call cycle %s", lm_buf_cstr(&b));
				lm_buf_free(&b);
				wpop(v, w);
			}
		}
	}
	free(e);
	free(start);
	free(color);
	free(stk_fn);
	free(stk_next);
	return rc;
}

/* ---- linked modules ---------------------------------------- */

/* Does the queue list q[0..n) hold name? */
static int has_name(const char **q, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(q[i], name) == 0)
			return 1;
	return 0;
}

/* Collect the distinct queues used by DMA instructions (and IndirectLoad)
** of blocks. */
static void used_queues(const lm_block *bs, int nb, const char ***q, int *n,
			int *cap)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in->n_blocks)
				used_queues(in->blocks, in->n_blocks, q, n, cap);
			if (lm_opcode_uses_queue(in->op) && in->queue &&
				 !has_name(*q, *n, in->queue)) {
				lm_grow(q, cap, *n + 1, sizeof **q);
				(*q)[(*n)++] = in->queue;
			}
		}
}

/*
** Core function nc<c>: neuron_core_id c; leading SwitchQueueInstance
** I-SQI-<queue>-call_def_<c>_instance_0 for every queue it uses; ends with
** CoreBarrier cb_return_call_def_<c>_instance_0 then Return.
*/
static int check_core_function(vctx *v, const lm_function *f, int64_t c)
{
	const char **q = NULL;
	int nq = 0, cap = 0, rc = 0, lead = 0;
	const lm_block *first, *last;
	char want[300];

	if (!f->has_core_id || f->neuron_core_id != c)
		return fail(v, "linked module: function '%s' must have "
			    "neuron_core_id %lld", fname(f), (long long)c);
	if (f->n_blocks < 1)
		return fail(v, "linked module: function '%s' has no blocks",
			    fname(f));
	first = &f->blocks[0];
	last = &f->blocks[f->n_blocks - 1];
	while (lead < first->n_insts &&
	       first->insts[lead].op == LM_OP_SWITCHQUEUE)
		lead++;
	used_queues(f->blocks, f->n_blocks, &q, &nq, &cap);
	for (int i = 0; i < nq && rc == 0; i++) {
		int found = 0;
		lm_linked_sqi_name(want, sizeof want, q[i], c);
		for (int j = 0; j < lead && !found; j++) {
			const lm_inst *in = &first->insts[j];
			found = in->queue && strcmp(in->queue, q[i]) == 0 &&
				in->name && strcmp(in->name, want) == 0;
		}
		if (!found)
			rc = fail(v, "linked module: function '%s' uses queue "
				  "'%s' but does not start with "
				  "SwitchQueueInstance '%s'",
				  fname(f), q[i], want);
	}
	free(q);
	if (rc)
		return rc;
	lm_linked_barrier_name(want, c);
	if (last->n_insts < 2 ||
	    last->insts[last->n_insts - 2].op != LM_OP_COREBARRIER ||
	    !last->insts[last->n_insts - 2].name ||
	    strcmp(last->insts[last->n_insts - 2].name, want) != 0 ||
	    last->insts[last->n_insts - 1].op != LM_OP_RETURN)
		return fail(v, "linked module: function '%s' must end with "
			    "CoreBarrier '%s' followed by Return", fname(f),
			    want);
	return 0;
}

/* A CoreBarrier seen in the module, for the id-uniqueness rule. */
typedef struct barrier_ref {
	const lm_inst *in;
	const char *group;
	int seq;
} barrier_ref;

/* Order by id, then program order. */
static int cmp_barrier(const void *pa, const void *pb)
{
	const barrier_ref *a = pa, *b = pb;
	if (a->in->barrier_id != b->in->barrier_id)
		return a->in->barrier_id < b->in->barrier_id ? -1 : 1;
	return a->seq - b->seq;
}

/* Collect every CoreBarrier of blocks. */
static void collect_barriers(const lm_block *bs, int nb, barrier_ref **r,
			     int *n, int *cap)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in->n_blocks)
				collect_barriers(in->blocks, in->n_blocks, r, n,
						 cap);
			if (in->op == LM_OP_COREBARRIER) {
				lm_grow(r, cap, *n + 1, sizeof **r);
				(*r)[*n].in = in;
				(*r)[*n].group = in->group ? in->group
							   : S(in->name);
				(*r)[*n].seq = *n;
				(*n)++;
			}
		}
}

/* Barrier ids are unique module-wide (barriers of one group may share). */
static int check_barrier_ids(vctx *v)
{
	barrier_ref *r = NULL;
	int n = 0, cap = 0, rc = 0;
	for (int f = 0; f < v->m->n_functions; f++)
		collect_barriers(v->m->functions[f].blocks,
				 v->m->functions[f].n_blocks, &r, &n, &cap);
	if (n > 1)
		qsort(r, (size_t)n, sizeof *r, cmp_barrier);
	for (int i = 1, head = 0; i < n && rc == 0; i++) {
		if (r[i].in->barrier_id != r[head].in->barrier_id) {
			head = i;
			continue;
		}
		if (strcmp(r[i].group, r[head].group) != 0) {
			wpop(v, 0);
			wpush(v, "module");
			rc = fail(v, "barrier id %lld of '%s' (group '%s') is also "
				  "used by '%s' (group '%s'); a linked module "
				  "needs unique barrier ids",
				  (long long)r[i].in->barrier_id,
				  S(r[i].in->name), r[i].group,
				  S(r[head].in->name), r[head].group);
		}
	}
	free(r);
	return rc;
}

/*
** A dispatcher Call of an instance of a module definition (a modular
** link) carries the core it runs on, `neuron_core_id`, an integer in
** [0, 64) no other Call names (each instance has a core of its own),
** and binds the definition's parameters in `arguments` (checked as every
** argument map is). Returns 1 for such a Call, 0 for a plain one, -1
** after fail().
*/
static int check_instance_call(vctx *v, const lm_inst *in, uint64_t *cores)
{
	const cJSON *c = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "neuron_core_id") : NULL;
	const cJSON *a = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "arguments") : NULL;
	double d;
	if (!c) {
		if (a && a->child) {
			fail(v, "linked module: dispatcher Call '%s' binds "
			     "arguments but names no neuron_core_id (the core "
			     "its instance runs on)", S(in->name));
			return -1;
		}
		return 0;
	}
	d = cJSON_IsNumber(c) ? c->valuedouble : -1;
	if (d < 0 || d >= 64 || d != (double)(int)d) {
		fail(v, "linked module: dispatcher Call '%s': neuron_core_id "
		     "must be an integer in [0, 64)", S(in->name));
		return -1;
	}
	if (*cores >> (int)d & 1) {
		fail(v, "linked module: dispatcher Call '%s' runs on core %d, "
		     "the core of an earlier Call (each instance runs on a "
		     "core of its own)", S(in->name), (int)d);
		return -1;
	}
	*cores |= 1ull << (int)d;
	return 1;
}

/* The external input (1) or output (2) of main named s, else 0. */
static int main_io(const lm_function *mainf, const char *s)
{
	for (int a = 0; s && a < mainf->n_allocs; a++) {
		const lm_alloc *al = &mainf->allocs[a];
		if (!al->name || strcmp(al->name, s) != 0)
			continue;
		return lm_tensorkind_is_ext_input(al->kind) ? 1 :
		       lm_tensorkind_is_ext_output(al->kind) ? 2 : 0;
	}
	return 0;
}

/*
** The bindings of the instance Calls (those naming neuron_core_id): each
** actual an external input or output of main bound by no other argument
** (an instance reads and writes tensors of its own); the Calls of one
** function bind the same parameters, each to the same kind (an output
** bound in one instance is bound in each); when every Call is an
** instance Call, every external input and output of main is bound.
*/
static int check_instance_bindings(vctx *v, const lm_function *mainf,
				   const lm_block *disp)
{
	lm_strmap bound;
	int rc = 0, all = 1;
	lm_strmap_init(&bound);
	for (int i = 0; i < disp->n_insts && !rc; i++) {
		const lm_inst *in = &disp->insts[i], *first = NULL;
		const cJSON *a, *fa = NULL;
		int n = 0, nf = 0;
		if (!cJSON_GetObjectItemCaseSensitive(in->extra,
						      "neuron_core_id")) {
			all = 0;
			continue;
		}
		for (int j = 0; j < i && !first; j++)
			if (disp->insts[j].target && in->target &&
			    !strcmp(disp->insts[j].target, in->target))
				first = &disp->insts[j];
		a = cJSON_GetObjectItemCaseSensitive(in->extra, "arguments");
		if (first)
			fa = cJSON_GetObjectItemCaseSensitive(first->extra,
							      "arguments");
		nf = cJSON_IsObject(fa) ? cJSON_GetArraySize(fa) : 0;
		for (const cJSON *e = cJSON_IsObject(a) ? a->child : NULL;
		     e && !rc; e = e->next, n++) {
			const char *act = cJSON_IsString(e) ? e->valuestring
							     : NULL;
			int k = main_io(mainf, act);
			const cJSON *fe;
			if (!k)
				rc = fail(v, "linked module: instance Call '%s' "
					  "binds '%s' to '%s', which is not an "
					  "external input or output of '"
					  LM_LINKED_MAIN "'", S(in->name),
					  S(e->string), S(act));
			else if (!lm_strmap_put(&bound, act, NULL))
				rc = fail(v, "linked module: instance Call '%s' "
					  "binds '%s' to '%s', a tensor bound "
					  "already (each instance has tensors "
					  "of its own)", S(in->name),
					  S(e->string), act);
			else if (first &&
				 (!(fe = cJSON_GetObjectItemCaseSensitive(
					 fa, e->string)) || !cJSON_IsString(fe) ||
				  main_io(mainf, fe->valuestring) != k))
				rc = fail(v, "linked module: instance Call '%s' "
					  "binds '%s' to an external %s, '%s' "
					  "does not (the Calls of a function "
					  "bind the same parameters alike)",
					  S(in->name), S(e->string),
					  k == 1 ? "input" : "output",
					  S(first->name));
		}
		if (!rc && first && n != nf)
			rc = fail(v, "linked module: instance Call '%s' binds "
				  "%d parameters, '%s' %d (the Calls of a "
				  "function bind the same parameters)",
				  S(in->name), n, S(first->name), nf);
	}
	for (int a = 0; all && !rc && a < mainf->n_allocs; a++) {
		const lm_alloc *al = &mainf->allocs[a];
		if (main_io(mainf, al->name) &&
		    !lm_strmap_get(&bound, al->name, NULL))
			rc = fail(v, "linked module: external %s '%s' of '"
				  LM_LINKED_MAIN "' is bound by no instance "
				  "Call", lm_tensorkind_is_ext_input(al->kind)
				  ? "input" : "output", al->name);
	}
	lm_strmap_free(&bound);
	return rc;
}

/* The linked-module shape: dispatcher main, core functions, barrier ids. */
static int check_linked(vctx *v)
{
	const lm_module *m = v->m;
	const lm_function *mainf = &m->functions[0];
	const lm_block *disp = NULL;
	int64_t prev = -1;
	uint64_t inst_cores = 0;
	int ncalls = 0, rc, ordinal = 0;
	char want[128];

	wpop(v, 0);
	wpush(v, "function %s", fname(mainf));
	if (!mainf->name || strcmp(mainf->name, LM_LINKED_MAIN) != 0)
		return fail(v, "linked module: the entry function must be "
			    "'" LM_LINKED_MAIN "' (got '%s')", fname(mainf));
	if (mainf->kind != LM_FK_DISPATCHER)
		return fail(v, "linked module: '" LM_LINKED_MAIN "' must "
			    "have kind dispatcher");
	for (int b = 0; b < mainf->n_blocks; b++) {
		const lm_block *bl = &mainf->blocks[b];
		if (bl->name && !disp &&
		    strcmp(bl->name, LM_LINKED_DISPATCHER) == 0)
			disp = bl;
		else if (bl->n_insts > 0)
			return fail(v, "linked module: '" LM_LINKED_MAIN
				    "' holds instructions outside block '"
				    LM_LINKED_DISPATCHER "'");
	}
	if (!disp)
		return fail(v, "linked module: '" LM_LINKED_MAIN "' has no "
			    "block '" LM_LINKED_DISPATCHER "'");
	wpush(v, "block " LM_LINKED_DISPATCHER);
	for (int i = 0; i < disp->n_insts; i++) {
		const lm_inst *in = &disp->insts[i];
		int64_t c;
		size_t w = wpush_named(v, "instruction", in->name, i);
		if (in->op != LM_OP_CALL)
			return fail(v, "linked module: dispatcher instruction "
				    "is %s, not Call", opname(in));
		c = lm_core_of_name(in->target);
		if (c < 0)
			return fail(v, "linked module: dispatcher Call target "
				    "'%s' is not a core function nc<c>",
				    S(in->target));
		if ((rc = check_instance_call(v, in, &inst_cores)) < 0)
			return LM_EINPUT;
		if (rc == 0 && c == prev)
			return fail(v, "linked module: dispatcher calls core "
				    "function '%s' twice without instance "
				    "arguments (a definition with several "
				    "instances binds each)", in->target);
		ordinal = c == prev ? ordinal + 1 : 0;
		snprintf(want, sizeof want, "call_def_%lld_instance_%d",
			 (long long)c, ordinal);
		if (!in->name || strcmp(in->name, want) != 0)
			return fail(v, "linked module: the Call of '%s' must be "
				    "named '%s'", in->target, want);
		if (c < prev)
			return fail(v, "linked module: dispatcher calls core "
				    "%lld after core %lld (cores must increase)",
				    (long long)c, (long long)prev);
		prev = c;
		ncalls++;
		wpop(v, w);
	}
	if (ncalls == 0)
		return fail(v, "linked module: the dispatcher calls no core");
	if (inst_cores && (rc = check_instance_bindings(v, mainf, disp)) != 0)
		return rc;
	/* Every core function is called, and has the core-function shape. */
	for (int f = 0; f < m->n_functions; f++) {
		const lm_function *fn = &m->functions[f];
		int64_t c = lm_core_of_name(fn->name);
		int called = 0;
		if (c < 0)
			continue;
		for (int i = 0; i < disp->n_insts && !called; i++)
			called = strcmp(disp->insts[i].target, fn->name) == 0;
		wpop(v, 0);
		wpush(v, "function %s", fn->name);
		if (!called)
			return fail(v, "linked module: core function '%s' is not "
				    "called by the dispatcher", fn->name);
		if ((rc = check_core_function(v, fn, c)) != 0)
			return rc;
	}
	return check_barrier_ids(v);
}

/* ---- entry points ------------------------------------------------------- */

/*
** Verify a module: 0 when valid, else LM_EINPUT with err filled with the
** first problem found. opts may be NULL (per-core rules only).
*/
int lm_verify(const lm_module *m, const lm_verify_opts *opts, lm_error *err)
{
	vctx v;
	int rc = 0;

	memset(&v, 0, sizeof v);
	v.m = m;
	v.linked = opts ? opts->linked : 0;
	v.err = err;
	v.file = m->path ? m->path : "";
	lm_strmap_init(&v.sems);
	lm_strmap_init(&v.queues);
	lm_strmap_init(&v.qinsts);
	lm_strmap_init(&v.funcs);
	lm_strmap_init(&v.allocs);
	lm_strmap_init(&v.allocp);
	lm_strmap_init(&v.memlocs);
	lm_strmap_init(&v.insts);
	lm_strmap_init(&v.blkq);

	if ((rc = check_header(&v)) != 0)
		goto done;
	if ((rc = check_sync_objects(&v)) != 0)
		goto done;
	if ((rc = check_function_names(&v)) != 0)
		goto done;
	for (int f = 0; f < m->n_functions; f++) {
		size_t w = wpush(&v, "function %s", m->functions[f].name);
		if ((rc = check_allocs(&v, &m->functions[f])) != 0)
			goto done;
		wpop(&v, w);
	}
	for (int f = 0; f < m->n_functions; f++) {
		size_t w = wpush(&v, "function %s", m->functions[f].name);
		if ((rc = check_alloc_links(&v, &m->functions[f])) != 0)
			goto done;
		wpop(&v, w);
	}
	if ((rc = check_aliases(&v)) != 0)
		goto done;
	{
		size_t n = 0; /* top-level instructions: enough, mostly */
		for (int f = 0; f < m->n_functions; f++)
			for (int b = 0; b < m->functions[f].n_blocks; b++)
				n += (size_t)m->functions[f].blocks[b].n_insts;
		lm_strmap_reserve(&v.insts, n);
	}
	for (int f = 0; f < m->n_functions; f++) {
		const lm_function *fn = &m->functions[f];
		size_t w = wpush(&v, "function %s", fn->name);
		if ((rc = collect_names(&v, fn, fn->blocks, fn->n_blocks)) != 0)
			goto done;
		wpop(&v, w);
	}
	if ((rc = collect_queue_blocks(&v)) != 0)
		goto done;
	for (int f = 0; f < m->n_functions; f++) {
		const lm_function *fn = &m->functions[f];
		size_t w = wpush(&v, "function %s", fn->name);
		v.fn = fn;
		if ((rc = check_blocks(&v, fn->blocks, fn->n_blocks)) != 0)
			goto done;
		wpop(&v, w);
	}
	for (int q = 0; q < m->n_queues; q++) {
		const lm_function *qf = &v.qfns[q];
		size_t w;
		if (!qf->n_blocks)
			continue;
		w = wpush(&v, "queue %s", qf->name);
		v.fn = qf;
		if ((rc = check_blocks(&v, qf->blocks, qf->n_blocks)) != 0)
			goto done;
		wpop(&v, w);
	}
	if ((rc = check_call_memlocs(&v)) != 0)
		goto done;
	if ((rc = check_call_cycles(&v)) != 0)
		goto done;
	if (v.linked)
		rc = check_linked(&v);
	if (!rc && v.linked)
		rc = check_linked_aliases(&v);

done:
	lm_strmap_free(&v.sems);
	lm_strmap_free(&v.queues);
	lm_strmap_free(&v.qinsts);
	lm_strmap_free(&v.funcs);
	lm_strmap_free(&v.allocs);
	lm_strmap_free(&v.allocp);
	lm_strmap_free(&v.memlocs);
	lm_strmap_free(&v.insts);
	lm_strmap_free(&v.blkq);
	free(v.inst_at);
	free(v.inst_ptr);
	for (int q = 0; v.qfns && q < m->n_queues; q++) {
		for (int b = 0; b < v.qfns[q].n_blocks; b++)
			lm_block_clear(&v.qfns[q].blocks[b]);
		free(v.qfns[q].blocks);
	}
	free(v.qfns);
	free(v.frames);
	free(v.loops);
	lm_buf_free(&v.text);
	return rc;
}

/*
** Resolve an operand to its allocation (module-wide) and memory location.
** Returns 0, or LM_EINPUT with both outputs NULL.
*/
int lm_resolve_arg(const lm_module *m, const lm_arg *a, lm_alloc **alloc,
		   lm_memloc **loc)
{
	lm_alloc *al = NULL;
	lm_memloc *l = NULL;
	if (alloc)
		*alloc = NULL;
	if (loc)
		*loc = NULL;
	if (!m || !a || a->kind != LM_ARG_PHYSICAL_AP || !a->memsetref ||
	    !a->memref)
		return LM_EINPUT;
	al = lm_module_find_alloc(m, a->memsetref, NULL);
	if (!al)
		return LM_EINPUT;
	l = lm_alloc_find_memloc(al, a->memref);
	if (!l)
		return LM_EINPUT;
	if (alloc)
		*alloc = al;
	if (loc)
		*loc = l;
	return 0;
}

/* ---- several modules at once ---------------------------------------------- */

typedef struct verifier_batch {
	lm_module *const *mods;
	const lm_verify_opts *opts;
	lm_error *errs;
	int *rcs;
} verifier_batch;

static void verify_one(void *arg, int worker, int i)
{
	verifier_batch *b = arg;
	(void)worker;
	b->rcs[i] = lm_verify(b->mods[i], b->opts, &b->errs[i]);
}

int lm_verify_modules(lm_module *const *mods, int n,
		      const lm_verify_opts *opts, lm_error *err)
{
	verifier_batch b;
	int rc = 0;
	if (n == 1)
		return lm_verify(mods[0], opts, err);
	b.mods = mods;
	b.opts = opts;
	b.errs = lm_xcalloc((size_t)n + 1, sizeof *b.errs);
	b.rcs = lm_xcalloc((size_t)n + 1, sizeof *b.rcs);
	lm_parallel_for(n, lm_worker_count(0, 8, n, 1), verify_one, &b);
	/* the first failure in module order, as a loop would report it */
	for (int i = 0; i < n && !rc; i++)
		if (b.rcs[i]) {
			rc = b.rcs[i];
			if (err)
				*err = b.errs[i];
		}
	free(b.errs);
	free(b.rcs);
	return rc;
}

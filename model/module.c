/*
** module.c -- freeing, deep copies, structural comparison and lookups of
** the IR. Copies duplicate every string and every `extra` cJSON object.
*/
#include "common.h"
#include "module.h"
#include "optable.h"
#include "json_int.h"
#include "affine.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup0(const char *s)
{
	return s ? lm_xstrdup(s) : NULL;
}

static cJSON *jdup(const cJSON *j)
{
	return j ? cJSON_Duplicate(j, 1) : NULL;
}

static void *memdup0(const void *p, size_t n)
{
	if (!p || !n)
		return NULL;
	void *q = lm_xmalloc(n);
	memcpy(q, p, n);
	return q;
}

static char **strv_dup(char *const *v, int n)
{
	if (!n)
		return NULL;
	char **r = lm_xcalloc((size_t)n, sizeof *r);
	for (int i = 0; i < n; i++)
		r[i] = dup0(v[i]);
	return r;
}

static void strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Products of input numbers saturate: INT64_MAX when they overflow (the
** verifier refuses such shapes; the saturation keeps unverified callers
** free of undefined behaviour). */
int64_t lm_arg_count(const lm_arg *a)
{
	int64_t c = 1;
	for (int i = 0; i < a->n_ap; i++)
		if (__builtin_mul_overflow(c, a->ap[i].num, &c))
			return INT64_MAX;
	return c;
}

int64_t lm_alloc_elems(const lm_alloc *a)
{
	int64_t c = 1;
	for (int i = 0; i < a->n_shape; i++)
		if (__builtin_mul_overflow(c, a->tensor_shape[i], &c))
			return INT64_MAX;
	return c;
}

/* ---- operands -------------------------------------------------------- */

void lm_arg_clear(lm_arg *a)
{
	free(a->dtype_str);
	free(a->memsetref);
	free(a->memref);
	free(a->ap);
	cJSON_Delete(a->extra);
	memset(a, 0, sizeof *a);
}

void lm_arg_copy(lm_arg *dst, const lm_arg *src)
{
	*dst = *src;
	dst->dtype_str = dup0(src->dtype_str);
	dst->memsetref = dup0(src->memsetref);
	dst->memref = dup0(src->memref);
	dst->ap = memdup0(src->ap, (size_t)src->n_ap * sizeof *src->ap);
	dst->extra = jdup(src->extra);
}

static lm_arg *args_dup(const lm_arg *v, int n)
{
	if (!n)
		return NULL;
	lm_arg *r = lm_xcalloc((size_t)n, sizeof *r);
	for (int i = 0; i < n; i++)
		lm_arg_copy(&r[i], &v[i]);
	return r;
}

static lm_kv *kv_dup(const lm_kv *v, int n)
{
	if (!n)
		return NULL;
	lm_kv *r = lm_xcalloc((size_t)n, sizeof *r);
	for (int i = 0; i < n; i++) {
		r[i].key = dup0(v[i].key);
		r[i].value = dup0(v[i].value);
	}
	return r;
}

/* ---- instructions and blocks ----------------------------------------- */

/* The loop axis, cond and the other keys of sync_info of src, deep
** copies into dst (never packed). */
static void copy_axis_cond(lm_inst *dst, const lm_inst *src)
{
	dst->sync_extra = jdup(src->sync_extra);
	dst->axis.name = dup0(src->axis.name);
	dst->axis.extra = jdup(src->axis.extra);
	dst->axis.lb_e = lm_affine_copy(src->axis.lb_e);
	dst->axis.ub_e = lm_affine_copy(src->axis.ub_e);
	dst->axis.stride_e = lm_affine_copy(src->axis.stride_e);
	dst->cond = lm_affine_copy(src->cond);
}

static void copy_blocks_extra(lm_inst *dst, const lm_inst *src)
{
	if (src->n_blocks) {
		dst->blocks = lm_xcalloc((size_t)src->n_blocks, sizeof *dst->blocks);
		for (int i = 0; i < src->n_blocks; i++)
			lm_block_copy(&dst->blocks[i], &src->blocks[i]);
	} else {
		dst->blocks = NULL;
	}
	dst->extra = jdup(src->extra);
	copy_axis_cond(dst, src);
}

/*
** The packed storage of one instruction (lm_inst_copy_packed): one pool
** block, this header then the strings and arrays the instruction's fields
** point into. Only this file knows the layout; released as a whole by
** lm_inst_clear (lm_pool_release; the sanitizer build poisons it).
*/
struct lm_inst_pack {
	size_t pack_used;       /* bytes of pack_bytes in use */
	uint64_t pack_bytes[];  /* 8-aligned */
};

int lm_inst_owns(const lm_inst *in, const void *p)
{
	const char *c = p, *b;
	if (!in->pack)
		return 0;
	b = (const char *)in->pack->pack_bytes;
	return c >= b && c < b + in->pack->pack_used;
}

size_t lm_inst_packed_bytes(const lm_inst *in)
{
	return in->pack ? in->pack->pack_used : 0;
}

/* free(p) unless it lies in in's packed block. */
static void ifree(const lm_inst *in, void *p)
{
	if (!lm_inst_owns(in, p))
		free(p);
}

static void iargs_free(const lm_inst *in, lm_arg *v, int n)
{
	for (int i = 0; i < n; i++) {
		ifree(in, v[i].dtype_str);
		ifree(in, v[i].memsetref);
		ifree(in, v[i].memref);
		ifree(in, v[i].ap);
		cJSON_Delete(v[i].extra);
	}
	ifree(in, v);
}

static void istrv_free(const lm_inst *in, char **v, int n)
{
	for (int i = 0; i < n; i++)
		ifree(in, v[i]);
	ifree(in, v);
}

static void isyncs_free(const lm_inst *in, lm_sync *v, int n)
{
	for (int i = 0; i < n; i++) {
		ifree(in, v[i].semaphore);
		ifree(in, v[i].regref);
		ifree(in, v[i].from);
		cJSON_Delete(v[i].extra);
	}
	ifree(in, v);
}

static void ikv_free(const lm_inst *in, lm_kv *v, int n)
{
	for (int i = 0; i < n; i++) {
		ifree(in, v[i].key);
		ifree(in, v[i].value);
	}
	ifree(in, v);
}

/*
** The instruction's own allocations, one list for clear, copy and the
** packed copy: strings, arrays of strings (with their count), and flat
** arrays (with their element count). Operands, waits, kernel argument
** maps, nested bodies, the loop axis, cond and `extra` are handled by
** name below.
*/
#define INST_STRINGS(X) X(name) X(opcode_str) X(queue) X(instance_name) \
	X(target) X(memset_mode) X(group) X(kernel_format) X(klir_binary) \
	X(func) X(kernel_source) X(on_true) X(on_false) X(branch_target)
#define INST_STRVS(X) X(deps, n_deps) X(lc_deps, n_lc_deps) \
	X(loop_regs, n_loop_regs) \
	X(dma_blocks, n_dma_blocks)
#define INST_ARRAYS(X) X(dep_kind, n_deps) X(lc_dep_kind, n_lc_deps) \
	X(pattern, n_pattern) X(cores, n_cores) X(sema_group, n_sema_group)

void lm_inst_clear(lm_inst *in)
{
#define X(f) ifree(in, in->f);
	INST_STRINGS(X)
#undef X
#define X(f, n) istrv_free(in, in->f, in->n);
	INST_STRVS(X)
#undef X
#define X(f, n) ifree(in, in->f);
	INST_ARRAYS(X)
#undef X
	iargs_free(in, in->ins, in->n_ins);
	iargs_free(in, in->outs, in->n_outs);
	isyncs_free(in, in->wait, in->n_wait);
	isyncs_free(in, in->update, in->n_update);
	cJSON_Delete(in->sync_extra);
	ikv_free(in, in->func_args, in->n_func_args);
	ikv_free(in, in->func_outs, in->n_func_outs);
	for (int i = 0; i < in->n_blocks; i++)
		lm_block_clear(&in->blocks[i]);
	free(in->blocks);
	free(in->axis.name);
	cJSON_Delete(in->axis.extra);
	lm_affine_free(in->axis.lb_e);
	lm_affine_free(in->axis.ub_e);
	lm_affine_free(in->axis.stride_e);
	lm_affine_free(in->cond);
	cJSON_Delete(in->extra);
	lm_pool_release(in->pack);
	memset(in, 0, sizeof *in);
}

void lm_inst_set_str(lm_inst *in, char **field, const char *v)
{
	char *old = *field;
	*field = dup0(v);
	ifree(in, old);
}

/* The list lc selects: its names, kinds and count. */
static void dep_list(lm_inst *in, int lc, char ****names, uint8_t ***kinds,
		     int **n)
{
	*names = lc ? &in->lc_deps : &in->deps;
	*kinds = lc ? &in->lc_dep_kind : &in->dep_kind;
	*n = lc ? &in->n_lc_deps : &in->n_deps;
}

void lm_inst_add_dep(lm_inst *in, int lc, const char *name, int kind)
{
	char ***names;
	uint8_t **kinds;
	int *n;
	lm_inst_unpack(in);
	dep_list(in, lc, &names, &kinds, &n);
	*names = lm_xrealloc(*names, (size_t)(*n + 1) * sizeof **names);
	(*names)[*n] = dup0(name);
	if (kind != LM_EDGE_FLOW && !*kinds) {
		*kinds = lm_xmalloc((size_t)*n + 1);
		memset(*kinds, LM_EDGE_FLOW, (size_t)*n + 1);
	} else if (*kinds) {
		*kinds = lm_xrealloc(*kinds, (size_t)*n + 1);
	}
	if (*kinds)
		(*kinds)[*n] = (uint8_t)kind;
	(*n)++;
	if (!lc)
		in->has_dependencies = 1;
}

/* A deep copy of sync entry src into dst. */
static void sync_copy(lm_sync *dst, const lm_sync *src)
{
	*dst = *src;
	dst->semaphore = dup0(src->semaphore);
	dst->regref = dup0(src->regref);
	dst->from = dup0(src->from);
	dst->extra = jdup(src->extra);
}

static lm_sync *syncs_dup(const lm_sync *v, int n)
{
	lm_sync *r;
	if (!n)
		return NULL;
	r = lm_xcalloc((size_t)n, sizeof *r);
	for (int i = 0; i < n; i++)
		sync_copy(&r[i], &v[i]);
	return r;
}

void lm_inst_add_sync(lm_inst *in, int update, const lm_sync *e)
{
	lm_sync **v = update ? &in->update : &in->wait;
	int *n = update ? &in->n_update : &in->n_wait;
	lm_inst_unpack(in);
	*v = lm_xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
	sync_copy(&(*v)[(*n)++], e);
}

void lm_inst_add_wait(lm_inst *in, const char *sem, int64_t value)
{
	lm_sync e;
	memset(&e, 0, sizeof e);
	e.semaphore = (char *)sem;
	e.mode = LM_WAIT_SEM_GE_IMM;
	e.has_value = 1;
	e.value = value;
	lm_inst_add_sync(in, 0, &e);
}

void lm_inst_add_signal(lm_inst *in, const char *sem)
{
	lm_sync e;
	memset(&e, 0, sizeof e);
	e.semaphore = (char *)sem;
	e.mode = LM_UPD_SEM_INC;
	e.has_value = 1;
	e.value = 1;
	lm_inst_add_sync(in, 1, &e);
}

void lm_inst_set_kvs(lm_inst *in, int outs, lm_kv *v, int n)
{
	lm_kv **f = outs ? &in->func_outs : &in->func_args;
	int *nf = outs ? &in->n_func_outs : &in->n_func_args;
	ikv_free(in, *f, *nf);
	*f = v;
	*nf = n;
}

void lm_inst_remove_dep(lm_inst *in, int lc, int i)
{
	char ***names;
	uint8_t **kinds;
	int *n;
	lm_inst_unpack(in);
	dep_list(in, lc, &names, &kinds, &n);
	if (i < 0 || i >= *n)
		return;
	free((*names)[i]);
	(*n)--;
	(*names)[i] = (*names)[*n];
	if (*kinds)
		(*kinds)[i] = (*kinds)[*n];
}

void lm_inst_set_dep(lm_inst *in, int lc, int i, const char *name)
{
	char ***names;
	uint8_t **kinds;
	int *n;
	lm_inst_unpack(in);
	dep_list(in, lc, &names, &kinds, &n);
	if (i < 0 || i >= *n)
		return;
	free((*names)[i]);
	(*names)[i] = dup0(name);
}

int lm_inst_dep_kind(const lm_inst *in, int lc, int i)
{
	const uint8_t *k = lc ? in->lc_dep_kind : in->dep_kind;
	return k ? k[i] : LM_EDGE_FLOW;
}

void lm_inst_unpack(lm_inst *in)
{
	lm_inst t;
	if (!in->pack)
		return;
	lm_inst_copy(&t, in);
	lm_inst_clear(in);
	*in = t;
}

void lm_inst_copy(lm_inst *dst, const lm_inst *src)
{
	*dst = *src;
	dst->pack = NULL;
#define X(f) dst->f = dup0(src->f);
	INST_STRINGS(X)
#undef X
#define X(f, n) dst->f = strv_dup(src->f, src->n);
	INST_STRVS(X)
#undef X
#define X(f, n) dst->f = src->f ? memdup0(src->f, (size_t)src->n * \
					  sizeof *src->f) : NULL;
	INST_ARRAYS(X)
#undef X
	dst->ins = args_dup(src->ins, src->n_ins);
	dst->outs = args_dup(src->outs, src->n_outs);
	dst->wait = syncs_dup(src->wait, src->n_wait);
	dst->update = syncs_dup(src->update, src->n_update);
	dst->func_args = kv_dup(src->func_args, src->n_func_args);
	dst->func_outs = kv_dup(src->func_outs, src->n_func_outs);
	copy_blocks_extra(dst, src);
}

/*
** The packer behind lm_inst_copy_packed. With base == NULL it only
** measures. With a base it writes up to lim bytes; past that it keeps
** measuring (over is set), so a failed write pass still gives the size.
** Both kinds of pass take the same pieces in the same order.
*/
typedef struct packer {
	char *base;
	size_t off, lim;
	int over;
} packer;

static void *pk_mem(packer *k, const void *src, size_t len)
{
	char *p = NULL;
	if (!src || !len)
		return NULL;
	k->off = (k->off + 7) & ~(size_t)7;
	if (k->base && k->off + len <= k->lim) {
		p = k->base + k->off;
		memcpy(p, src, len);
	} else if (k->base) {
		k->over = 1;
	}
	k->off += len;
	return p;
}

static char *pk_str(packer *k, const char *s)
{
	size_t n;
	char *p = NULL;
	if (!s)
		return NULL;
	n = strlen(s) + 1;
	if (k->base && k->off + n <= k->lim) {
		p = k->base + k->off;
		memcpy(p, s, n);
	} else if (k->base) {
		k->over = 1;
	}
	k->off += n;
	return p;
}

static lm_arg *pk_args(packer *k, const lm_arg *v, int n)
{
	lm_arg *d = pk_mem(k, v, (size_t)n * sizeof *v);
	for (int i = 0; i < n; i++) {
		lm_appair *ap = pk_mem(k, v[i].ap, (size_t)v[i].n_ap *
				       sizeof *v[i].ap);
		char *t = pk_str(k, v[i].dtype_str);
		char *s = pk_str(k, v[i].memsetref);
		char *r = pk_str(k, v[i].memref);
		if (d) {
			d[i].ap = ap;
			d[i].dtype_str = t;
			d[i].memsetref = s;
			d[i].memref = r;
		}
	}
	return d;
}

static char **pk_strv(packer *k, char *const *v, int n)
{
	char **d = pk_mem(k, v, (size_t)n * sizeof *v);
	for (int i = 0; i < n; i++) {
		char *s = pk_str(k, v[i]);
		if (d)
			d[i] = s;
	}
	return d;
}

static lm_kv *pk_kvs(packer *k, const lm_kv *v, int n)
{
	lm_kv *d = pk_mem(k, v, (size_t)n * sizeof *v);
	for (int i = 0; i < n; i++) {
		char *a = pk_str(k, v[i].key), *b = pk_str(k, v[i].value);
		if (d) {
			d[i].key = a;
			d[i].value = b;
		}
	}
	return d;
}

static lm_sync *pk_syncs(packer *k, const lm_sync *v, int n)
{
	lm_sync *d = pk_mem(k, v, (size_t)n * sizeof *v);
	for (int i = 0; i < n; i++) {
		char *a = pk_str(k, v[i].semaphore), *b = pk_str(k, v[i].regref);
		char *c = pk_str(k, v[i].from);
		if (d) {
			d[i].semaphore = a;
			d[i].regref = b;
			d[i].from = c;
			d[i].extra = NULL; /* copied after (copy_sync_extras) */
		}
	}
	return d;
}

/* The entries' extra objects of a packed copy: their own allocations. */
static void copy_sync_extras(lm_sync *dst, const lm_sync *src, int n)
{
	for (int i = 0; i < n; i++)
		dst[i].extra = jdup(src[i].extra);
}

/* Every string and array of src into k (dst written when k->base). */
static void pk_inst(packer *k, lm_inst *dst, const lm_inst *src)
{
	dst->ins = pk_args(k, src->ins, src->n_ins);
	dst->outs = pk_args(k, src->outs, src->n_outs);
#define X(f, n) dst->f = pk_strv(k, src->f, src->n);
	INST_STRVS(X)
#undef X
#define X(f, n) dst->f = pk_mem(k, src->f, (size_t)src->n * sizeof *src->f);
	INST_ARRAYS(X)
#undef X
	dst->wait = pk_syncs(k, src->wait, src->n_wait);
	dst->update = pk_syncs(k, src->update, src->n_update);
	dst->func_args = pk_kvs(k, src->func_args, src->n_func_args);
	dst->func_outs = pk_kvs(k, src->func_outs, src->n_func_outs);
#define X(f) dst->f = pk_str(k, src->f);
	INST_STRINGS(X)
#undef X
}

void lm_inst_copy_packed(lm_inst *dst, const lm_inst *src, lm_pool *pool)
{
	const size_t hdr = sizeof(struct lm_inst_pack);
	packer k = { NULL, 0, 0, 0 };
	struct lm_inst_pack *pk = NULL;
	char *tail = NULL;
	size_t avail = 0;
	*dst = *src;
	dst->pack = NULL;
	/* with a pool: write straight into its free tail, one pass */
	if (pool && (tail = lm_pool_tail(pool, &avail)) != NULL && avail > hdr) {
		pk = (struct lm_inst_pack *)(void *)tail;
		k.base = (char *)pk->pack_bytes;
		k.lim = avail - hdr;
		pk_inst(&k, dst, src);
		if (k.over)
			pk = NULL;
		else
			pk = k.off ? lm_pool_commit(pool, hdr + k.off) : NULL;
	} else {
		pk_inst(&k, dst, src); /* measure */
	}
	if (k.over || !k.base) {
		/* did not fit (or no pool): a block of the measured size */
		size_t n = k.off;
		pk = n ? lm_pool_alloc(pool, hdr + n) : NULL;
		k.base = pk ? (char *)pk->pack_bytes : NULL;
		k.off = 0;
		k.lim = n;
		k.over = 0;
		pk_inst(&k, dst, src);
	}
	if (pk)
		pk->pack_used = k.off;
	dst->pack = pk;
	for (int i = 0; i < src->n_ins; i++)
		dst->ins[i].extra = jdup(src->ins[i].extra);
	for (int i = 0; i < src->n_outs; i++)
		dst->outs[i].extra = jdup(src->outs[i].extra);
	copy_sync_extras(dst->wait, src->wait, src->n_wait);
	copy_sync_extras(dst->update, src->update, src->n_update);
	copy_blocks_extra(dst, src);
}

void lm_block_clear(lm_block *b)
{
	for (int i = 0; i < b->n_args; i++) {
		free(b->args[i].regref);
		for (int k = 0; k < b->args[i].n_incoming; k++) {
			free(b->args[i].incoming[k].value);
			free(b->args[i].incoming[k].block);
		}
		free(b->args[i].incoming);
		cJSON_Delete(b->args[i].extra);
	}
	free(b->args);
	free(b->name);
	for (int i = 0; i < b->n_insts; i++)
		lm_inst_clear(&b->insts[i]);
	free(b->insts);
	cJSON_Delete(b->extra);
	memset(b, 0, sizeof *b);
}

void lm_block_args_copy(lm_block *dst, const lm_block *src)
{
	dst->has_args = src->has_args;
	dst->n_args = src->n_args;
	dst->args = src->n_args ? lm_xcalloc((size_t)src->n_args,
					     sizeof *dst->args) : NULL;
	for (int i = 0; i < src->n_args; i++) {
		const lm_blockarg *s = &src->args[i];
		lm_blockarg *d = &dst->args[i];
		d->regref = dup0(s->regref);
		d->extra = jdup(s->extra);
		d->n_incoming = s->n_incoming;
		d->incoming = s->n_incoming ? lm_xcalloc((size_t)s->n_incoming,
						       sizeof *d->incoming) : NULL;
		for (int k = 0; k < s->n_incoming; k++) {
			d->incoming[k].value = dup0(s->incoming[k].value);
			d->incoming[k].block = dup0(s->incoming[k].block);
			d->incoming[k].form = s->incoming[k].form;
		}
	}
}

void lm_block_copy(lm_block *dst, const lm_block *src)
{
	lm_block_args_copy(dst, src);
	dst->name = dup0(src->name);
	dst->n_insts = src->n_insts;
	dst->insts = src->n_insts ? lm_xcalloc((size_t)src->n_insts,
					       sizeof *dst->insts) : NULL;
	for (int i = 0; i < src->n_insts; i++)
		lm_inst_copy(&dst->insts[i], &src->insts[i]);
	dst->extra = jdup(src->extra);
}

/* ---- allocations ----------------------------------------------------- */

static void memloc_clear(lm_memloc *l)
{
	free(l->name);
	free(l->dims);
	cJSON_Delete(l->extra);
	memset(l, 0, sizeof *l);
}

void lm_alloc_clear(lm_alloc *a)
{
	free(a->name);
	free(a->tensor_shape);
	free(a->addr_space);
	free(a->file);
	for (int i = 0; i < a->n_memlocs; i++)
		memloc_clear(&a->memlocs[i]);
	free(a->memlocs);
	free(a->remote_name);
	free(a->alias_of);
	cJSON_Delete(a->extra);
	memset(a, 0, sizeof *a);
}

void lm_alloc_copy(lm_alloc *dst, const lm_alloc *src)
{
	*dst = *src;
	dst->name = dup0(src->name);
	dst->tensor_shape = memdup0(src->tensor_shape,
				    (size_t)src->n_shape * sizeof(int64_t));
	dst->addr_space = dup0(src->addr_space);
	dst->file = dup0(src->file);
	if (src->n_memlocs) {
		dst->memlocs = lm_xcalloc((size_t)src->n_memlocs,
					  sizeof *dst->memlocs);
		for (int i = 0; i < src->n_memlocs; i++) {
			const lm_memloc *s = &src->memlocs[i];
			lm_memloc *d = &dst->memlocs[i];
			*d = *s;
			d->name = dup0(s->name);
			d->dims = memdup0(s->dims, (size_t)s->n_dims * sizeof(int64_t));
			d->extra = jdup(s->extra);
		}
	} else {
		dst->memlocs = NULL;
	}
	dst->remote_name = dup0(src->remote_name);
	dst->alias_of = dup0(src->alias_of);
	dst->extra = jdup(src->extra);
}

/* ---- functions and modules ------------------------------------------- */

void lm_function_clear(lm_function *f)
{
	free(f->name);
	strv_free(f->attributes, f->n_attributes);
	for (int i = 0; i < f->n_allocs; i++)
		lm_alloc_clear(&f->allocs[i]);
	free(f->allocs);
	for (int i = 0; i < f->n_blocks; i++)
		lm_block_clear(&f->blocks[i]);
	free(f->blocks);
	cJSON_Delete(f->extra);
	memset(f, 0, sizeof *f);
}

void lm_function_copy(lm_function *dst, const lm_function *src)
{
	*dst = *src;
	dst->name = dup0(src->name);
	dst->attributes = strv_dup(src->attributes, src->n_attributes);
	dst->allocs = src->n_allocs ? lm_xcalloc((size_t)src->n_allocs,
						 sizeof *dst->allocs) : NULL;
	for (int i = 0; i < src->n_allocs; i++)
		lm_alloc_copy(&dst->allocs[i], &src->allocs[i]);
	dst->blocks = src->n_blocks ? lm_xcalloc((size_t)src->n_blocks,
						 sizeof *dst->blocks) : NULL;
	for (int i = 0; i < src->n_blocks; i++)
		lm_block_copy(&dst->blocks[i], &src->blocks[i]);
	dst->extra = jdup(src->extra);
}

void lm_module_free(lm_module *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->dir);
	free(m->arch);
	free(m->name);
	free(m->display);
	cJSON_Delete(m->attributes_extra);
	for (int i = 0; i < m->n_semaphores; i++) {
		free(m->semaphores[i].name);
		cJSON_Delete(m->semaphores[i].extra);
	}
	free(m->semaphores);
	for (int i = 0; i < m->n_queues; i++) {
		lm_queue *q = &m->queues[i];
		free(q->name);
		for (int j = 0; j < q->n_instances; j++) {
			free(q->instances[j].name);
			free(q->instances[j].semaphore);
			cJSON_Delete(q->instances[j].extra);
		}
		free(q->instances);
		cJSON_Delete(q->extra);
	}
	free(m->queues);
	for (int i = 0; i < m->n_aliases; i++) {
		free(m->aliases[i].producer);
		free(m->aliases[i].consumer);
		cJSON_Delete(m->aliases[i].extra);
	}
	free(m->aliases);
	for (int i = 0; i < m->n_functions; i++)
		lm_function_clear(&m->functions[i]);
	free(m->functions);
	cJSON_Delete(m->extra);
	free(m);
}

lm_module *lm_module_clone(const lm_module *src)
{
	lm_module *m = lm_xcalloc(1, sizeof *m);
	*m = *src;
	m->path = dup0(src->path);
	m->dir = dup0(src->dir);
	m->arch = dup0(src->arch);
	m->name = dup0(src->name);
	m->display = dup0(src->display);
	m->attributes_extra = jdup(src->attributes_extra);
	m->semaphores = src->n_semaphores ?
		lm_xcalloc((size_t)src->n_semaphores, sizeof *m->semaphores) : NULL;
	for (int i = 0; i < src->n_semaphores; i++) {
		m->semaphores[i] = src->semaphores[i];
		m->semaphores[i].name = dup0(src->semaphores[i].name);
		m->semaphores[i].extra = jdup(src->semaphores[i].extra);
	}
	m->queues = src->n_queues ?
		lm_xcalloc((size_t)src->n_queues, sizeof *m->queues) : NULL;
	for (int i = 0; i < src->n_queues; i++) {
		const lm_queue *s = &src->queues[i];
		lm_queue *d = &m->queues[i];
		d->name = dup0(s->name);
		d->extra = jdup(s->extra);
		d->n_instances = s->n_instances;
		d->instances = s->n_instances ?
			lm_xcalloc((size_t)s->n_instances, sizeof *d->instances) : NULL;
		for (int j = 0; j < s->n_instances; j++) {
			d->instances[j].name = dup0(s->instances[j].name);
			d->instances[j].semaphore = dup0(s->instances[j].semaphore);
			d->instances[j].extra = jdup(s->instances[j].extra);
		}
	}
	m->aliases = src->n_aliases ?
		lm_xcalloc((size_t)src->n_aliases, sizeof *m->aliases) : NULL;
	for (int i = 0; i < src->n_aliases; i++) {
		m->aliases[i] = src->aliases[i];
		m->aliases[i].producer = dup0(src->aliases[i].producer);
		m->aliases[i].consumer = dup0(src->aliases[i].consumer);
		m->aliases[i].extra = jdup(src->aliases[i].extra);
	}
	m->functions = src->n_functions ?
		lm_xcalloc((size_t)src->n_functions, sizeof *m->functions) : NULL;
	for (int i = 0; i < src->n_functions; i++)
		lm_function_copy(&m->functions[i], &src->functions[i]);
	m->extra = jdup(src->extra);
	return m;
}

/* ---- structural comparison ------------------------------------------- */

/*
** Compare two JSON trees: objects by key set (order-insensitive), arrays by
** position, numbers by value. Writes the path of the first difference.
*/
static int json_diff(const cJSON *a, const cJSON *b, lm_buf *path)
{
	if ((a->type & 0xff) != (b->type & 0xff))
		return 1;
	if (cJSON_IsNumber(a)) /* -0.0 and 0 differ */
		return a->valuedouble != b->valuedouble ||
		       !signbit(a->valuedouble) != !signbit(b->valuedouble);
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) != 0;
	if (cJSON_IsArray(a)) {
		int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
		const cJSON *x = a->child, *y = b->child;
		for (int i = 0; x && y; i++, x = x->next, y = y->next) {
			size_t keep = path->size;
			lm_buf_printf(path, "[%d]", i);
			if (json_diff(x, y, path))
				return 1;
			path->size = keep;
			path->ptr[keep] = 0;
		}
		if (na != nb) {
			lm_buf_printf(path, " (length %d vs %d)", na, nb);
			return 1;
		}
		return 0;
	}
	if (cJSON_IsObject(a)) {
		for (const cJSON *x = a->child; x; x = x->next) {
			const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
			size_t keep = path->size;
			lm_buf_printf(path, ".%s", x->string);
			if (!y || json_diff(x, y, path))
				return 1;
			path->size = keep;
			path->ptr[keep] = 0;
		}
		for (const cJSON *y = b->child; y; y = y->next)
			if (!cJSON_GetObjectItemCaseSensitive(a, y->string)) {
				lm_buf_printf(path, ".%s", y->string);
				return 1;
			}
		return 0;
	}
	return 0; /* null, true, false: equal by type */
}

int lm_json_compare(const struct cJSON *a, const struct cJSON *b, char *where,
		    size_t where_len)
{
	lm_buf path = LM_BUF_INIT;
	lm_buf_puts(&path, "$");
	int d = json_diff(a, b, &path);
	if (d && where && where_len) {
		strncpy(where, lm_buf_cstr(&path), where_len - 1);
		where[where_len - 1] = 0;
	}
	lm_buf_free(&path);
	return d;
}

int lm_module_compare(const lm_module *a, const lm_module *b, char *where,
		      size_t where_len)
{
	cJSON *ja = lm_module_to_cjson(a), *jb = lm_module_to_cjson(b);
	int d;
	if (ja && jb) {
		d = lm_json_compare(ja, jb, where, where_len);
	} else {
		/* too deep for cJSON's parser: the exact texts, in order */
		size_t na, nb;
		char *ta = lm_module_exact_text(a, &na);
		char *tb = lm_module_exact_text(b, &nb);
		d = na != nb || memcmp(ta, tb, na) != 0;
		if (d && where && where_len)
			snprintf(where, where_len, "$");
		free(ta);
		free(tb);
	}
	cJSON_Delete(ja);
	cJSON_Delete(jb);
	return d;
}

/* ---- lookups --------------------------------------------------------- */

lm_function *lm_module_find_function(const lm_module *m, const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < m->n_functions; i++)
		if (m->functions[i].name && strcmp(m->functions[i].name, name) == 0)
			return &m->functions[i];
	return NULL;
}

lm_alloc *lm_module_find_alloc(const lm_module *m, const char *name,
			       lm_function **owner)
{
	if (!name)
		return NULL;
	for (int i = 0; i < m->n_functions; i++) {
		lm_function *f = &m->functions[i];
		for (int j = 0; j < f->n_allocs; j++)
			if (f->allocs[j].name && strcmp(f->allocs[j].name, name) == 0) {
				if (owner)
					*owner = f;
				return &f->allocs[j];
			}
	}
	return NULL;
}

int lm_alloc_class(const lm_alloc *a)
{
	if (a->n_memlocs < 1)
		return 3;
	if (lm_memtype_is_dram(a->memlocs[0].type))
		return 0;
	return a->memlocs[0].type == LM_MT_SB ? 1
	       : a->memlocs[0].type == LM_MT_PSUM ? 2 : 3;
}

int lm_it55_bind(const lm_inst *call, const lm_function *k,
		 lm_alloc_find_fn find, void *ctx, lm_it55_binding *b,
		 int *n_bound, char **why)
{
	int n = call->n_func_args + call->n_func_outs;
	*n_bound = 0;
	*why = NULL;
	for (int i = 0; i < n; i++) {
		const lm_kv *kv = i < call->n_func_args ? &call->func_args[i]
			: &call->func_outs[i - call->n_func_args];
		const lm_alloc *fa = NULL, *ca;
		b[i].formal = -1;
		b[i].caller = NULL;
		for (int a = 0; kv->key && a < k->n_allocs; a++)
			if (k->allocs[a].name &&
			    strcmp(k->allocs[a].name, kv->key) == 0) {
				b[i].formal = a;
				fa = &k->allocs[a];
			}
		if (!fa) {
			*why = lm_xasprintf("formal '%s' is not an allocation "
					    "of function '%s'",
					    kv->key ? kv->key : "",
					    k->name ? k->name : "");
			return LM_IT55_NO_FORMAL;
		}
		ca = kv->value ? find(ctx, kv->value) : NULL;
		if (!ca) {
			*why = lm_xasprintf("caller allocation '%s' of formal "
					    "'%s' does not exist",
					    kv->value ? kv->value : "",
					    kv->key);
			return LM_IT55_NO_CALLER;
		}
		b[i].caller = ca;
		if (fa->dtype != ca->dtype ||
		    lm_alloc_elems(fa) != lm_alloc_elems(ca) ||
		    lm_alloc_class(fa) != lm_alloc_class(ca) ||
		    ca->n_memlocs < 1)
			return LM_IT55_MISMATCH;
		(*n_bound)++;
	}
	return 0;
}

lm_memloc *lm_alloc_find_memloc(const lm_alloc *a, const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < a->n_memlocs; i++)
		if (a->memlocs[i].name && strcmp(a->memlocs[i].name, name) == 0)
			return &a->memlocs[i];
	return NULL;
}

lm_semaphore *lm_module_find_semaphore(const lm_module *m, const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < m->n_semaphores; i++)
		if (strcmp(m->semaphores[i].name, name) == 0)
			return &m->semaphores[i];
	return NULL;
}

lm_queue *lm_module_find_queue(const lm_module *m, const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < m->n_queues; i++)
		if (strcmp(m->queues[i].name, name) == 0)
			return &m->queues[i];
	return NULL;
}

int64_t lm_module_core_id(const lm_module *m)
{
	return m->has_core_id ? m->neuron_core_id : 0;
}

const char *lm_module_display_name(const lm_module *m)
{
	if (m->name && *m->name)
		return m->name;
	return m->display ? m->display : "module";
}

/* ---- names the linked module uses ---------------------------------------- */

char *lm_core_prefix(char *p, int64_t core)
{
	char d[24];
	int n = 0;
	uint64_t v = core < 0 ? 0 : (uint64_t)core;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	*p++ = LM_CORE_PREFIX[0];
	*p++ = LM_CORE_PREFIX[1];
	while (n)
		*p++ = d[--n];
	return p;
}

char *lm_core_scoped(char *p, int64_t core, const char *name)
{
	size_t len = strlen(name) + 1;
	p = lm_core_prefix(p, core);
	*p++ = '.';
	memcpy(p, name, len);
	return p + len;
}

int64_t lm_core_of_name(const char *s)
{
	const size_t np = sizeof LM_CORE_PREFIX - 1;
	int64_t c = 0;
	if (!s || strncmp(s, LM_CORE_PREFIX, np) != 0 || !s[np])
		return -1;
	if (s[np] == '0' && s[np + 1])
		return -1;
	for (const char *p = s + np; *p; p++) {
		if (*p < '0' || *p > '9' || c > (INT64_MAX - 9) / 10)
			return -1;
		c = c * 10 + (*p - '0');
	}
	return c;
}

char *lm_core_name(char *buf, int64_t core)
{
	*lm_core_prefix(buf, core) = '\0';
	return buf;
}

#define LM_CALL_FMT "call_def_%lld_instance_0"

char *lm_linked_call_name(char *buf, int64_t core)
{
	snprintf(buf, LM_LINKED_NAME_MAX, LM_CALL_FMT, (long long)core);
	return buf;
}

char *lm_linked_return_name(char *buf, int64_t core)
{
	snprintf(buf, LM_LINKED_NAME_MAX, "return_" LM_CALL_FMT,
		 (long long)core);
	return buf;
}

char *lm_linked_barrier_name(char *buf, int64_t core)
{
	snprintf(buf, LM_LINKED_NAME_MAX, "cb_return_" LM_CALL_FMT,
		 (long long)core);
	return buf;
}

int lm_linked_sqi_name(char *buf, size_t n, const char *queue, int64_t core)
{
	return snprintf(buf, n, "I-SQI-%s-" LM_CALL_FMT, queue,
			(long long)core);
}

char *lm_linked_module_name(const char *base)
{
	return lm_xasprintf("%s/" LM_LINKED_DIR, base);
}

int lm_inst_it(const lm_inst *in)
{
	static int it_of[LM_OP_COUNT];
	static int ready; /* it_of is filled the same way by every thread */
	if (in->op == LM_OP_OTHER || in->op <= LM_OP_INVALID ||
	    in->op >= LM_OP_COUNT)
		return lm_it_parse(in->opcode_str);
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (int o = 1; o < LM_OP_COUNT; o++)
			__atomic_store_n(&it_of[o], lm_it_parse(lm_opcode_name(
				(lm_opcode)o)), __ATOMIC_RELAXED);
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&it_of[in->op], __ATOMIC_RELAXED);
}

void lm_arg_unfold(lm_arg *a, int64_t pe)
{
	if (a->kind != LM_ARG_PHYSICAL_AP || a->has_start_partition ||
	    pe <= 0 || a->offset < pe)
		return;
	a->start_partition = a->offset / pe;
	a->offset %= pe;
}

int64_t lm_arg_folded_offset(const lm_arg *a, int64_t pe)
{
	int64_t p;
	if (!a->start_partition)
		return a->offset;
	if (pe <= 0 || __builtin_mul_overflow(a->start_partition, pe, &p) ||
	    __builtin_add_overflow(p, a->offset, &p))
		return -1;
	return p;
}

int64_t lm_arg_part_elems(const lm_arg *a, const lm_memloc *l)
{
	int64_t es = lm_dtype_size(a->dtype);
	if (!l || (l->type != LM_MT_SB && l->type != LM_MT_PSUM) ||
	    l->n_dims < 2 || es <= 0 || l->dims[1] <= 0)
		return 0;
	return l->dims[1] / es;
}

int64_t lm_arg_part_step(const lm_arg *a, const lm_memloc *l)
{
	int64_t pe = lm_arg_part_elems(a, l);
	if (pe <= 0 || a->n_ap < 1 || a->ap[0].num == 1)
		return 1;
	if (a->ap[0].step < 0 || a->ap[0].step % pe)
		return -1;
	return a->ap[0].step / pe;
}

const lm_memloc *lm_arg_memloc(const lm_module *m, const lm_strmap *allocs,
			       const lm_arg *a)
{
	const lm_alloc *al = NULL;
	if (!a->memsetref)
		return NULL;
	if (allocs)
		al = lm_strmap_lookup(allocs, a->memsetref);
	if (!al && m)
		al = lm_module_find_alloc(m, a->memsetref, NULL);
	return al ? lm_alloc_find_memloc(al, a->memref ? a->memref
					      : a->memsetref) : NULL;
}

static void each_arg_blocks(lm_block *b, int n, lm_arg_fn fn, void *ctx)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < b[i].n_insts; k++) {
			lm_inst *in = &b[i].insts[k];
			for (int x = 0; x < in->n_ins; x++)
				fn(&in->ins[x], ctx);
			for (int x = 0; x < in->n_outs; x++)
				fn(&in->outs[x], ctx);
			each_arg_blocks(in->blocks, in->n_blocks, fn, ctx);
		}
}

void lm_function_each_arg(lm_function *f, lm_arg_fn fn, void *ctx)
{
	each_arg_blocks(f->blocks, f->n_blocks, fn, ctx);
}

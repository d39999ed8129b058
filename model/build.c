/*
** build.c -- building IR in memory (build.h): the fillers of IR objects,
** and the checked builder that keeps a module's name sets while it grows.
*/
#include "common.h"
#include "build.h"
#include "arch.h"
#include "enumtab.h"
#include "json_int.h"
#include "affine.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup0(const char *s)
{
	return s ? lm_xstrdup(s) : NULL;
}

/* Room for one more element at the end of *v (n elements of size sz),
** zeroed; returns it. */
static void *push(void *pv, int *n, size_t sz)
{
	char **v = pv, *e;
	*v = lm_xrealloc(*v, (size_t)(*n + 1) * sz);
	e = *v + (size_t)*n * sz;
	memset(e, 0, sz);
	(*n)++;
	return e;
}

/* ---- the module's file ------------------------------------------------- */

/* The name for messages when the module has none: the directory above
** nc<c>/sg<k>/, else the file's directory. */
static char *derive_display(const char *path)
{
	if (!path || !*path)
		return lm_xstrdup("module");
	char *d = lm_dirname(path);          /* .../name/nc0/sg0 */
	const char *b = strrchr(d, '/');
	const char *base = b ? b + 1 : d;
	char *res = NULL;
	if (!strncmp(base, "sg", 2) && b) {
		char *d2 = lm_dirname(d);        /* .../name/nc0 */
		const char *b2 = strrchr(d2, '/');
		const char *base2 = b2 ? b2 + 1 : d2;
		if (!strncmp(base2, "nc", 2)) {
			char *d3 = b2 ? lm_dirname(d2) : lm_xstrdup(".");
			const char *b3 = strrchr(d3, '/');
			res = lm_xstrdup(b3 ? b3 + 1 : d3);
			free(d3);
		}
		free(d2);
	}
	if (!res || !*res || !strcmp(res, ".")) {
		free(res);
		res = lm_xstrdup(!strcmp(base, ".") ? "module" : base);
	}
	free(d);
	return res;
}

void lm_b_set_path(lm_module *m, const char *path)
{
	const char *p = path ? path : "";
	free(m->path);
	free(m->dir);
	free(m->display);
	m->path = lm_xstrdup(p);
	m->dir = lm_dirname(*p ? p : "./x");
	m->display = derive_display(p);
}

/* ---- module objects ------------------------------------------------------ */

lm_semaphore *lm_b_append_semaphore(lm_module *m, const char *name,
				    int64_t init)
{
	lm_semaphore *s = push(&m->semaphores, &m->n_semaphores, sizeof *s);
	s->name = dup0(name);
	s->init = init;
	return s;
}

lm_queue *lm_b_append_queue(lm_module *m, const char *name)
{
	lm_queue *q = push(&m->queues, &m->n_queues, sizeof *q);
	q->name = dup0(name);
	return q;
}

lm_qinstance *lm_b_append_qinstance(lm_queue *q, const char *name,
				    const char *semaphore)
{
	lm_qinstance *qi = push(&q->instances, &q->n_instances, sizeof *qi);
	qi->name = dup0(name);
	qi->semaphore = dup0(semaphore);
	return qi;
}

lm_function *lm_b_append_function(lm_module *m, const char *name)
{
	lm_function *f = push(&m->functions, &m->n_functions, sizeof *f);
	f->name = dup0(name);
	return f;
}

void lm_b_set_kind(lm_function *f, lm_funckind kind)
{
	assert(kind >= LM_FK_REGULAR && kind <= LM_FK_NKI);
	f->has_kind = 1;
	f->kind = kind;
}

lm_block *lm_b_append_block(lm_function *f, const char *name)
{
	lm_block *b = push(&f->blocks, &f->n_blocks, sizeof *b);
	b->name = dup0(name);
	return b;
}

/* ---- allocations --------------------------------------------------------- */

lm_alloc *lm_b_append_alloc(lm_function *f, const char *name,
			    lm_tensorkind kind, lm_dtype dt,
			    const int64_t *shape, int n_shape)
{
	lm_alloc *a = push(&f->allocs, &f->n_allocs, sizeof *a);
	a->name = dup0(name);
	a->kind = kind;
	a->dtype = dt;
	a->n_shape = n_shape;
	if (n_shape > 0) {
		a->tensor_shape = lm_xmalloc((size_t)n_shape * sizeof *shape);
		memcpy(a->tensor_shape, shape, (size_t)n_shape * sizeof *shape);
	}
	return a;
}

lm_memloc *lm_b_append_memloc(lm_alloc *a, lm_memtype type, int64_t addr,
			      const int64_t *dims, int n_dims, int64_t base)
{
	lm_memloc *l = push(&a->memlocs, &a->n_memlocs, sizeof *l);
	l->name = dup0(a->name);
	l->type = type;
	l->addr = addr;
	l->n_dims = n_dims;
	if (n_dims > 0) {
		l->dims = lm_xmalloc((size_t)n_dims * sizeof *dims);
		memcpy(l->dims, dims, (size_t)n_dims * sizeof *dims);
	}
	l->bank = type == LM_MT_PSUM ? addr / LM_PSUM_BANK_BYTES : 0;
	l->base = base;
	l->allocated = 1;
	return l;
}

void lm_b_set_file(lm_alloc *a, const char *file)
{
	free(a->file);
	a->file = dup0(file);
}

void lm_b_set_addr_space(lm_alloc *a, const char *space)
{
	int64_t o;
	assert(space && !lm_enum_parse(LM_ET_MemoryAddressSpace, space, &o));
	free(a->addr_space);
	a->addr_space = lm_xstrdup(lm_enum_name(LM_ET_MemoryAddressSpace, o));
}

void lm_b_set_view(lm_alloc *a, const char *producer, int64_t core)
{
	free(a->remote_name);
	a->remote_name = dup0(producer);
	a->remote_core = core;
	a->has_remote = 1;
}

/* ---- instructions and operands ------------------------------------------ */

void lm_b_init_inst(lm_inst *in, lm_opcode op, lm_engine eng,
		    const char *name)
{
	memset(in, 0, sizeof *in);
	in->op = op;
	in->engine = eng;
	in->name = dup0(name);
	in->renumber = 1;
	in->scale = 1.0;
	if (op == LM_OP_TENSORSCALAR)
		in->alu1 = LM_ALU_BYPASS;
}

lm_inst *lm_b_append_inst(lm_block *blk, lm_opcode op, lm_engine eng,
			  const char *name)
{
	lm_inst *in = push(&blk->insts, &blk->n_insts, sizeof *in);
	lm_b_init_inst(in, op, eng, name);
	return in;
}

void lm_b_init_ap(lm_arg *a, const char *alloc, const char *memloc,
		  lm_dtype dt, int64_t start_partition, int64_t offset,
		  const lm_appair *ap, int n_ap)
{
	memset(a, 0, sizeof *a);
	a->kind = LM_ARG_PHYSICAL_AP;
	a->dtype = dt;
	a->memsetref = dup0(alloc);
	a->memref = dup0(memloc ? memloc : alloc);
	a->offset = offset;
	a->start_partition = start_partition;
	a->has_start_partition = start_partition != 0;
	a->n_ap = n_ap;
	if (n_ap > 0) {
		a->ap = lm_xmalloc((size_t)n_ap * sizeof *ap);
		memcpy(a->ap, ap, (size_t)n_ap * sizeof *ap);
	}
}

/* A new last operand of in's side list. */
static lm_arg *push_arg(lm_inst *in, int side)
{
	return side == LM_B_OUT ? push(&in->outs, &in->n_outs, sizeof(lm_arg))
				: push(&in->ins, &in->n_ins, sizeof(lm_arg));
}

lm_arg *lm_b_append_ap(lm_inst *in, int side, const char *alloc,
		       const char *memloc, lm_dtype dt,
		       int64_t start_partition, int64_t offset,
		       const lm_appair *ap, int n_ap)
{
	lm_arg *a = push_arg(in, side);
	lm_b_init_ap(a, alloc, memloc, dt, start_partition, offset, ap, n_ap);
	return a;
}

lm_arg *lm_b_append_imm(lm_inst *in, lm_dtype dt, double value)
{
	lm_arg *a = push_arg(in, LM_B_IN);
	a->kind = LM_ARG_IMM;
	a->dtype = dt;
	a->imm = value;
	return a;
}

/* ---- op fields ---------------------------------------------------------- */

void lm_b_set_matmult(lm_inst *in, int start, int stop, int is_transpose)
{
	assert(in->op == LM_OP_MATMULT);
	in->start_tensor_calc = start != 0;
	in->has_stop_tensor_calc = 1;
	in->stop_tensor_calc = stop != 0;
	in->has_is_transpose = 1;
	in->is_transpose = is_transpose != 0;
}

void lm_b_set_activation(lm_inst *in, lm_actfunc func, double scale)
{
	assert(in->op == LM_OP_ACTIVATION);
	assert(func > LM_ACT_INVALID && func < LM_ACT_COUNT);
	in->act_func = func;
	in->has_scale = 1;
	in->scale = scale;
}

void lm_b_set_alu(lm_inst *in, lm_aluop op)
{
	assert(in->op == LM_OP_TENSORTENSOR || in->op == LM_OP_AFFINESELECT);
	assert(op > LM_ALU_INVALID && op < LM_ALU_COUNT);
	in->alu = op;
}

void lm_b_set_tensor_scalar(lm_inst *in, lm_aluop op0, double const0,
			    int reverse0, lm_aluop op1, double const1,
			    int reverse1)
{
	assert(in->op == LM_OP_TENSORSCALAR);
	assert(op0 > LM_ALU_INVALID && op0 < LM_ALU_COUNT);
	assert(op1 > LM_ALU_INVALID && op1 < LM_ALU_COUNT);
	in->alu0 = op0;
	in->has_const0 = 1;
	in->const0 = const0;
	in->reverse0 = reverse0 != 0;
	in->alu1 = op1;
	in->has_const1 = 1;
	in->const1 = const1;
	in->reverse1 = reverse1 != 0;
}

void lm_b_set_memset(lm_inst *in, const char *mode, int64_t constant)
{
	int64_t o;
	assert(in->op == LM_OP_MEMSET);
	assert(mode && !lm_enum_parse(LM_ET_MemsetMode, mode, &o));
	lm_inst_set_str(in, &in->memset_mode, mode);
	in->has_constant = 1;
	in->constant = constant;
}

void lm_b_set_memset_value(lm_inst *in, double value)
{
	assert(in->op == LM_OP_MEMSET);
	in->has_value = 1;
	in->value = value;
}

void lm_b_set_pattern(lm_inst *in, int64_t base, int64_t channel_multiplier,
		      const lm_appair *pattern, int n)
{
	assert(in->op == LM_OP_IOTA || in->op == LM_OP_AFFINESELECT);
	assert(n >= 0);
	lm_inst_unpack(in);
	in->has_base = 1;
	in->base = base;
	in->has_channel_multiplier = 1;
	in->channel_multiplier = channel_multiplier;
	free(in->pattern);
	in->pattern = NULL;
	in->n_pattern = n;
	if (n > 0) {
		in->pattern = lm_xmalloc((size_t)n * sizeof *pattern);
		memcpy(in->pattern, pattern, (size_t)n * sizeof *pattern);
	}
}

void lm_b_set_fill(lm_inst *in, double fill_value)
{
	assert(in->op == LM_OP_AFFINESELECT);
	in->has_fill_value = 1;
	in->fill_value = fill_value;
}

void lm_b_set_barrier(lm_inst *in, int64_t id, const int64_t *cores,
		      int n_cores, const char *group)
{
	assert(in->op == LM_OP_COREBARRIER);
	assert(n_cores >= 0);
	lm_inst_unpack(in);
	in->barrier_id = id;
	free(in->cores);
	in->cores = NULL;
	in->n_cores = n_cores;
	if (n_cores > 0) {
		in->cores = lm_xmalloc((size_t)n_cores * sizeof *cores);
		memcpy(in->cores, cores, (size_t)n_cores * sizeof *cores);
	}
	lm_inst_set_str(in, &in->group, group);
}

lm_block *lm_b_append_body(lm_inst *in, const char *name)
{
	lm_block *b;
	assert(in->op == LM_OP_LOOP || in->op == LM_OP_DYNLOOP ||
	       in->op == LM_OP_DOWHILE || in->op == LM_OP_DMABLOCK);
	b = push(&in->blocks, &in->n_blocks, sizeof *b);
	b->name = dup0(name);
	return b;
}

void lm_b_set_loop_axis(lm_inst *in, const char *name, int64_t lb,
			int64_t ub, int64_t stride)
{
	assert(in->op == LM_OP_LOOP);
	free(in->axis.name);
	in->axis.name = dup0(name);
	in->axis.lb = lb;
	in->axis.ub = ub;
	in->axis.stride = stride;
	in->has_axis = 1;
}

void lm_b_set_dynloop_axis(lm_inst *in, const char *name,
			   const lm_affine *lb, const lm_affine *ub,
			   const lm_affine *stride)
{
	assert(in->op == LM_OP_DYNLOOP);
	free(in->axis.name);
	in->axis.name = dup0(name);
	lm_affine_free(in->axis.lb_e);
	lm_affine_free(in->axis.ub_e);
	lm_affine_free(in->axis.stride_e);
	in->axis.lb_e = lm_affine_copy(lb);
	in->axis.ub_e = lm_affine_copy(ub);
	in->axis.stride_e = lm_affine_copy(stride);
	in->has_axis = 1;
}

/* Append a copy of s to the string list *v (count *n) of in. */
static void push_str(lm_inst *in, char ***v, int *n, const char *s)
{
	lm_inst_unpack(in);
	*(char **)push(v, n, sizeof **v) = dup0(s);
}

void lm_b_add_loop_register(lm_inst *in, const char *reg)
{
	assert(in->op == LM_OP_LOOP);
	push_str(in, &in->loop_regs, &in->n_loop_regs, reg);
}

void lm_b_set_cond(lm_inst *in, const lm_affine *e)
{
	assert(in->op == LM_OP_DOWHILE);
	lm_affine_free(in->cond);
	in->cond = lm_affine_copy(e);
}

void lm_b_set_branch(lm_inst *in, int comp_op, const char *on_true,
		     const char *on_false)
{
	assert(in->op == LM_OP_CMPBRANCH);
	in->comp_op = comp_op;
	lm_inst_set_str(in, &in->on_true, on_true);
	lm_inst_set_str(in, &in->on_false, on_false);
}

void lm_b_set_jump(lm_inst *in, const char *target)
{
	assert(in->op == LM_OP_UBRANCH);
	lm_inst_set_str(in, &in->branch_target, target);
}

void lm_b_set_register_alu(lm_inst *in, int op, int is_64bit)
{
	assert(in->op == LM_OP_REGALU);
	in->reg_alu = op;
	in->is_64bit = is_64bit != 0;
}

void lm_b_set_sema_group(lm_inst *in, const int64_t *ids, int n)
{
	assert(in->op == LM_OP_GROUPRESET);
	assert(n >= 0);
	lm_inst_unpack(in);
	free(in->sema_group);
	in->sema_group = NULL;
	in->n_sema_group = n;
	if (n > 0) {
		in->sema_group = lm_xmalloc((size_t)n * sizeof *ids);
		memcpy(in->sema_group, ids, (size_t)n * sizeof *ids);
	}
}

void lm_b_add_dma_block(lm_inst *in, const char *block)
{
	assert(in->op == LM_OP_DMATRIGGER);
	push_str(in, &in->dma_blocks, &in->n_dma_blocks, block);
}

void lm_b_set_renumber(lm_inst *in, int renumber)
{
	assert(in->op == LM_OP_COREBARRIER);
	in->has_renumber = 1;
	in->renumber = renumber != 0;
}

/* ---- the checked builder ------------------------------------------------ */

/* Where an allocation of the module is: function fi, allocation ai. */
typedef struct alloc_at {
	int fi, ai;
} alloc_at;

struct lm_builder {
	lm_module *m;
	lm_error *err;         /* the caller's, else own */
	lm_error own;
	int rc;                /* the first failure, then every answer */
	int fi, bi;            /* the current function and block, -1 none */
	/* the module-wide names, keyed by the IR's own name strings (indexes,
	   not pointers, as values: the arrays move as they grow): for
	   functions, memory locations and instructions the function's index
	   + 1, for queues and queue instances the queue's index + 1, for
	   allocations an alloc_at index + 1, for semaphores 1 */
	lm_strmap sems, queues, qinsts, funcs, allocs, memlocs, insts;
	alloc_at *at;
	int n_at, cap_at;
};

/*
** Fail with "PATH: function F/block B/instruction I: what" (the current
** function and block, instruction inst when given). Returns LM_EINPUT; a
** failed builder stays failed.
*/
static int bfail(lm_builder *b, const char *inst, const char *fmt, ...)
	LM_PRINTF(3, 4);
static int bfail(lm_builder *b, const char *inst, const char *fmt, ...)
{
	char where[512];
	size_t n = 0;
	va_list ap;
	where[0] = 0;
	if (b->fi >= 0)
		n += (size_t)snprintf(where, sizeof where, "function %s",
				      b->m->functions[b->fi].name);
	if (b->fi >= 0 && b->bi >= 0 && n < sizeof where)
		n += (size_t)snprintf(where + n, sizeof where - n, "/block %s",
				      b->m->functions[b->fi].blocks[b->bi].name);
	if (inst && n < sizeof where)
		snprintf(where + n, sizeof where - n, "%sinstruction %s",
			 n ? "/" : "", inst);
	va_start(ap, fmt);
	b->rc = lm_verr(b->err, LM_EINPUT, b->m->path, where, fmt, ap);
	va_end(ap);
	return b->rc;
}

/* The name of function index fi + 1 (a map value). */
static const char *fname_of(const lm_builder *b, void *v)
{
	return b->m->functions[(intptr_t)v - 1].name;
}

/* A name given: present and not empty. */
static int named(lm_builder *b, const char *what, const char *name)
{
	if (!name || !*name)
		return bfail(b, NULL, "%s without a name", what);
	return 0;
}

/* A name of the module-wide set `set` (what it names: "semaphore", ...)
** not given yet: 0, or the failure. */
static int new_name(lm_builder *b, const lm_strmap *set, const char *what,
		    const char *name)
{
	if (named(b, what, name))
		return b->rc;
	if (lm_strmap_lookup(set, name))
		return bfail(b, NULL, "duplicate %s name '%s'", what, name);
	return 0;
}

lm_builder *lm_b_new(const char *arch, int64_t version, lm_error *err)
{
	lm_builder *b = lm_xcalloc(1, sizeof *b);
	b->m = lm_xcalloc(1, sizeof *b->m);
	b->err = err ? err : &b->own;
	b->fi = b->bi = -1;
	lm_b_set_path(b->m, NULL);
	b->m->version = version;
	b->m->arch = lm_xstrdup(arch ? arch : "");
	lm_strmap_init(&b->sems);
	lm_strmap_init(&b->queues);
	lm_strmap_init(&b->qinsts);
	lm_strmap_init(&b->funcs);
	lm_strmap_init(&b->allocs);
	lm_strmap_init(&b->memlocs);
	lm_strmap_init(&b->insts);
	if (!lm_arch_get(arch))
		bfail(b, NULL, "unknown arch '%s' (gen2, gen3, gen4)",
		      arch ? arch : "");
	else if (version != 1 && version != 2)
		bfail(b, NULL, "unsupported BIR version %lld (1 or 2)",
		      (long long)version);
	return b;
}

/* The builder without its module. */
static void drop(lm_builder *b)
{
	lm_strmap_free(&b->sems);
	lm_strmap_free(&b->queues);
	lm_strmap_free(&b->qinsts);
	lm_strmap_free(&b->funcs);
	lm_strmap_free(&b->allocs);
	lm_strmap_free(&b->memlocs);
	lm_strmap_free(&b->insts);
	free(b->at);
	free(b);
}

void lm_b_free(lm_builder *b)
{
	if (!b)
		return;
	lm_module_free(b->m);
	drop(b);
}

int lm_b_finish(lm_builder *b, lm_module **out)
{
	int rc = b->rc;
	*out = rc ? NULL : b->m;
	if (rc)
		lm_module_free(b->m);
	drop(b);
	return rc;
}

int lm_b_status(const lm_builder *b)
{
	return b->rc;
}

lm_module *lm_b_module(lm_builder *b)
{
	return b->m;
}

int lm_b_path(lm_builder *b, const char *path)
{
	if (!b->rc)
		lm_b_set_path(b->m, path);
	return b->rc;
}

int lm_b_name(lm_builder *b, const char *name)
{
	if (b->rc || named(b, "module", name))
		return b->rc;
	free(b->m->name);
	b->m->name = lm_xstrdup(name);
	return 0;
}

int lm_b_core_id(lm_builder *b, int64_t core)
{
	if (b->rc)
		return b->rc;
	if (core < 0)
		return bfail(b, NULL, "negative neuron_core_id %lld",
			     (long long)core);
	b->m->has_core_id = 1;
	b->m->neuron_core_id = core;
	return 0;
}

lm_semaphore *lm_b_semaphore(lm_builder *b, const char *name, int64_t init)
{
	lm_semaphore *s;
	if (b->rc || new_name(b, &b->sems, "semaphore", name))
		return NULL;
	if (init < 0) {
		bfail(b, NULL, "semaphore '%s': negative init %lld", name,
		      (long long)init);
		return NULL;
	}
	s = lm_b_append_semaphore(b->m, name, init);
	lm_strmap_put(&b->sems, s->name, (void *)1);
	return s;
}

lm_queue *lm_b_queue(lm_builder *b, const char *name)
{
	lm_queue *q;
	if (b->rc || new_name(b, &b->queues, "queue", name))
		return NULL;
	q = lm_b_append_queue(b->m, name);
	lm_strmap_put(&b->queues, q->name, (void *)(intptr_t)b->m->n_queues);
	return q;
}

lm_qinstance *lm_b_qinstance(lm_builder *b, const char *queue,
			     const char *name, const char *semaphore)
{
	void *qv, *prev;
	lm_queue *q;
	lm_qinstance *qi;
	if (b->rc || named(b, "queue instance", name))
		return NULL;
	if (!queue || !(qv = lm_strmap_lookup(&b->queues, queue))) {
		bfail(b, NULL, "queue '%s' is not a module queue",
		      queue ? queue : "");
		return NULL;
	}
	q = &b->m->queues[(intptr_t)qv - 1];
	if (lm_strmap_get(&b->qinsts, name, &prev)) {
		bfail(b, NULL, "duplicate queue instance name '%s' (also in "
		      "queue '%s')", name,
		      b->m->queues[(intptr_t)prev - 1].name);
		return NULL;
	}
	if (!semaphore || !lm_strmap_lookup(&b->sems, semaphore)) {
		bfail(b, NULL, "queue instance semaphore '%s' is not a module "
		      "semaphore", semaphore ? semaphore : "");
		return NULL;
	}
	qi = lm_b_append_qinstance(q, name, semaphore);
	lm_strmap_put(&b->qinsts, qi->name, qv);
	return qi;
}

lm_function *lm_b_function(lm_builder *b, const char *name)
{
	lm_function *f;
	if (b->rc || new_name(b, &b->funcs, "function", name))
		return NULL;
	f = lm_b_append_function(b->m, name);
	b->fi = b->m->n_functions - 1;
	b->bi = -1;
	lm_strmap_put(&b->funcs, f->name, (void *)(intptr_t)(b->fi + 1));
	return f;
}

lm_block *lm_b_block(lm_builder *b, const char *name)
{
	lm_function *f;
	if (b->rc)
		return NULL;
	if (b->fi < 0) {
		bfail(b, NULL, "block '%s' outside a function",
		      name ? name : "");
		return NULL;
	}
	if (named(b, "block", name))
		return NULL;
	f = &b->m->functions[b->fi];
	lm_b_append_block(f, name);
	b->bi = f->n_blocks - 1;
	return &f->blocks[b->bi];
}

/* The memory location names of a (of function fi): new ones, put. */
static int put_memlocs(lm_builder *b, const lm_alloc *a, int fi)
{
	for (int i = 0; i < a->n_memlocs; i++) {
		const char *n = a->memlocs[i].name;
		void *prev;
		if (named(b, "memory location", n))
			return b->rc;
		if (lm_strmap_get(&b->memlocs, n, &prev))
			return bfail(b, NULL, "allocation %s: duplicate memory "
				     "location name '%s' (also in function "
				     "'%s')", a->name, n, fname_of(b, prev));
		lm_strmap_put(&b->memlocs, n, (void *)(intptr_t)(fi + 1));
	}
	return 0;
}

/* Register allocation ai of the current function (name checked). */
static void put_alloc(lm_builder *b, int ai)
{
	const lm_alloc *a = &b->m->functions[b->fi].allocs[ai];
	lm_grow(&b->at, &b->cap_at, b->n_at + 1, sizeof *b->at);
	b->at[b->n_at].fi = b->fi;
	b->at[b->n_at++].ai = ai;
	lm_strmap_put(&b->allocs, a->name, (void *)(intptr_t)b->n_at);
}

/* The allocation of the module named name, or NULL. */
static lm_alloc *find_alloc(const lm_builder *b, const char *name, int *fi)
{
	void *v = name ? lm_strmap_lookup(&b->allocs, name) : NULL;
	const alloc_at *at;
	if (!v)
		return NULL;
	at = &b->at[(intptr_t)v - 1];
	if (fi)
		*fi = at->fi;
	return &b->m->functions[at->fi].allocs[at->ai];
}

/* A new allocation name of the current function (0), or the failure. */
static int new_alloc_name(lm_builder *b, const char *name)
{
	int fi;
	if (b->fi < 0)
		return bfail(b, NULL, "allocation '%s' outside a function",
			     name ? name : "");
	if (named(b, "allocation", name))
		return b->rc;
	if (find_alloc(b, name, &fi))
		return bfail(b, NULL, "duplicate allocation name '%s' (also in "
			     "function '%s')", name,
			     b->m->functions[fi].name);
	return 0;
}

lm_alloc *lm_b_alloc(lm_builder *b, const char *name, lm_tensorkind kind,
		     lm_dtype dt, const int64_t *shape, int n_shape)
{
	lm_function *f;
	if (b->rc || new_alloc_name(b, name))
		return NULL;
	if (kind <= LM_TK_INVALID || kind >= LM_TK_COUNT) {
		bfail(b, NULL, "allocation %s: invalid tensor kind %d", name,
		      (int)kind);
		return NULL;
	}
	if (dt <= LM_DT_INVALID || dt >= LM_DT_COUNT) {
		bfail(b, NULL, "allocation %s: invalid dtype %d", name, (int)dt);
		return NULL;
	}
	if (n_shape < 0 || (n_shape > 0 && !shape)) {
		bfail(b, NULL, "allocation %s: no tensor_shape of %d "
		      "dimensions", name, n_shape);
		return NULL;
	}
	f = &b->m->functions[b->fi];
	lm_b_append_alloc(f, name, kind, dt, shape, n_shape);
	put_alloc(b, f->n_allocs - 1);
	return &f->allocs[f->n_allocs - 1];
}

lm_memloc *lm_b_memloc(lm_builder *b, lm_alloc *a, lm_memtype type,
		       int64_t addr, const int64_t *dims, int n_dims,
		       int64_t base)
{
	int fi;
	if (b->rc)
		return NULL;
	if (!a || find_alloc(b, a->name, &fi) != a) {
		bfail(b, NULL, "memory location of an allocation that is not "
		      "the module's");
		return NULL;
	}
	if (type <= LM_MT_INVALID || type >= LM_MT_COUNT) {
		bfail(b, NULL, "allocation %s: invalid memory type %d", a->name,
		      (int)type);
		return NULL;
	}
	if (n_dims < 0 || (n_dims > 0 && !dims)) {
		bfail(b, NULL, "allocation %s: no dims of %d entries", a->name,
		      n_dims);
		return NULL;
	}
	if (lm_strmap_lookup(&b->memlocs, a->name)) {
		bfail(b, NULL, "allocation %s: duplicate memory location name "
		      "'%s' (also in function '%s')", a->name, a->name,
		      fname_of(b, lm_strmap_lookup(&b->memlocs, a->name)));
		return NULL;
	}
	lm_b_append_memloc(a, type, addr, dims, n_dims, base);
	lm_strmap_put(&b->memlocs, a->memlocs[a->n_memlocs - 1].name,
		      (void *)(intptr_t)(fi + 1));
	return &a->memlocs[a->n_memlocs - 1];
}

lm_alloc *lm_b_alloc_json(lm_builder *b, const char *text)
{
	lm_alloc a;
	lm_function *f;
	if (b->rc)
		return NULL;
	if (b->fi < 0) {
		bfail(b, NULL, "allocation outside a function");
		return NULL;
	}
	f = &b->m->functions[b->fi];
	if ((b->rc = lm_json_read_alloc(&a, text ? text : "",
					text ? strlen(text) : 0, b->m,
					f->name, b->err)) != 0)
		return NULL;
	if (new_alloc_name(b, a.name)) {
		lm_alloc_clear(&a);
		return NULL;
	}
	/* the module keeps it from here on, failed or not (the names the
	   maps hold are its strings) */
	*(lm_alloc *)push(&f->allocs, &f->n_allocs, sizeof a) = a;
	put_alloc(b, f->n_allocs - 1);
	if (put_memlocs(b, &f->allocs[f->n_allocs - 1], b->fi))
		return NULL;
	return &f->allocs[f->n_allocs - 1];
}

/* The current block, or the failure for instruction name. */
static lm_block *cur_block(lm_builder *b, const char *name)
{
	if (b->bi < 0) {
		if (name)
			bfail(b, NULL, "instruction '%s' outside a block", name);
		else
			bfail(b, NULL, "an instruction outside a block");
		return NULL;
	}
	return &b->m->functions[b->fi].blocks[b->bi];
}

/* Instruction name not in the module yet (0), or the failure. */
static int new_inst_name(lm_builder *b, const char *name)
{
	void *prev;
	if (named(b, "instruction", name))
		return b->rc;
	if (lm_strmap_get(&b->insts, name, &prev))
		return bfail(b, name, "duplicate instruction name '%s' (also in "
			     "function '%s')", name, fname_of(b, prev));
	return 0;
}

/* Put the name of in (the module's string) in the set. */
static void put_inst(lm_builder *b, const lm_inst *in)
{
	lm_strmap_put(&b->insts, in->name, (void *)(intptr_t)(b->fi + 1));
}

lm_inst *lm_b_inst(lm_builder *b, lm_opcode op, lm_engine eng,
		   const char *name)
{
	lm_block *blk;
	lm_inst *in;
	if (b->rc || !(blk = cur_block(b, name)))
		return NULL;
	if (op <= LM_OP_INVALID || op >= LM_OP_COUNT || op == LM_OP_OTHER ||
	    op == LM_OP_LOOP) {
		bfail(b, name, "opcode %d is not built here (a Loop or a "
		      "carried opcode is given in the wire form)", (int)op);
		return NULL;
	}
	if ((int)eng < 0 || eng >= LM_ENG_COUNT) {
		bfail(b, name, "invalid engine %d", (int)eng);
		return NULL;
	}
	if (new_inst_name(b, name))
		return NULL;
	in = lm_b_append_inst(blk, op, eng, name);
	put_inst(b, in);
	return in;
}

/* The memory location operand a names, or NULL. */
static const lm_memloc *arg_memloc(const lm_builder *b, const lm_arg *a)
{
	const lm_alloc *al = find_alloc(b, a->memsetref, NULL);
	return al ? lm_alloc_find_memloc(al, a->memref ? a->memref
					      : a->memsetref) : NULL;
}

/*
** Take in (read from the wire form, now in the module) and its Loop
** bodies into the builder's sets: names new, physical operands on module
** allocations, their offsets unfolded (lm_arg_unfold).
*/
static int adopt_inst(lm_builder *b, lm_inst *in)
{
	if (in->op != LM_OP_LOOP) {
		if (new_inst_name(b, in->name))
			return b->rc;
		put_inst(b, in);
	}
	for (int s = 0; s < 2; s++) {
		lm_arg *v = s ? in->outs : in->ins;
		int n = s ? in->n_outs : in->n_ins;
		for (int i = 0; i < n; i++) {
			if (v[i].kind != LM_ARG_PHYSICAL_AP)
				continue;
			if (!find_alloc(b, v[i].memsetref, NULL))
				return bfail(b, in->name, "%s[%d]: memsetref "
					     "'%s' names no allocation",
					     s ? "outs" : "ins", i,
					     v[i].memsetref);
			lm_arg_unfold(&v[i], lm_arg_part_elems(&v[i],
							arg_memloc(b, &v[i])));
		}
	}
	for (int k = 0; k < in->n_blocks; k++)
		for (int i = 0; i < in->blocks[k].n_insts; i++)
			if (adopt_inst(b, &in->blocks[k].insts[i]))
				return b->rc;
	return 0;
}

lm_inst *lm_b_inst_json(lm_builder *b, const char *text)
{
	lm_block *blk;
	lm_inst in, *p;
	lm_function *f;
	if (b->rc || !(blk = cur_block(b, NULL)))
		return NULL;
	f = &b->m->functions[b->fi];
	if ((b->rc = lm_json_read_inst(&in, text ? text : "",
				       text ? strlen(text) : 0, b->m, f->name,
				       blk->name, b->err)) != 0)
		return NULL;
	/* the module keeps it from here on, failed or not */
	p = push(&blk->insts, &blk->n_insts, sizeof in);
	*p = in;
	return adopt_inst(b, p) ? NULL : p;
}

/* The instruction a call names: 0 when there is one. */
static int have_inst(lm_builder *b, const lm_inst *in)
{
	if (b->rc)
		return b->rc;
	if (!in)
		return bfail(b, NULL, "no instruction");
	return 0;
}

lm_arg *lm_b_ap(lm_builder *b, lm_inst *in, int side, const char *alloc,
		lm_dtype dt, int64_t start_partition, int64_t offset,
		const lm_appair *ap, int n_ap)
{
	const lm_alloc *al;
	const char *list = side == LM_B_OUT ? "outs" : "ins";
	int n;
	if (have_inst(b, in))
		return NULL;
	n = side == LM_B_OUT ? in->n_outs : in->n_ins;
	if (side != LM_B_IN && side != LM_B_OUT) {
		bfail(b, in->name, "operand list %d (LM_B_IN, LM_B_OUT)", side);
		return NULL;
	}
	if (!(al = find_alloc(b, alloc, NULL))) {
		bfail(b, in->name, "%s[%d]: memsetref '%s' names no allocation",
		      list, n, alloc ? alloc : "");
		return NULL;
	}
	if (dt <= LM_DT_INVALID || dt >= LM_DT_COUNT) {
		bfail(b, in->name, "%s[%d]: invalid dtype %d", list, n, (int)dt);
		return NULL;
	}
	if (n_ap < 0 || (n_ap > 0 && !ap)) {
		bfail(b, in->name, "%s[%d]: no access pattern of %d pairs", list,
		      n, n_ap);
		return NULL;
	}
	return lm_b_append_ap(in, side, alloc, al->n_memlocs ?
			      al->memlocs[0].name : alloc, dt,
			      start_partition, offset, ap, n_ap);
}

lm_arg *lm_b_imm(lm_builder *b, lm_inst *in, lm_dtype dt, double value)
{
	if (have_inst(b, in))
		return NULL;
	if (dt <= LM_DT_INVALID || dt >= LM_DT_COUNT) {
		bfail(b, in->name, "ins[%d]: invalid dtype %d", in->n_ins,
		      (int)dt);
		return NULL;
	}
	return lm_b_append_imm(in, dt, value);
}

int lm_b_wait(lm_builder *b, lm_inst *in, const char *semaphore,
	      int64_t value)
{
	if (have_inst(b, in))
		return b->rc;
	if (!semaphore || !lm_strmap_lookup(&b->sems, semaphore))
		return bfail(b, in->name, "wait semaphore '%s' is not a module "
			     "semaphore", semaphore ? semaphore : "");
	if (value < 0)
		return bfail(b, in->name, "wait on '%s' for a negative value "
			     "%lld", semaphore, (long long)value);
	lm_inst_add_wait(in, semaphore, value);
	return 0;
}

int lm_b_signal(lm_builder *b, lm_inst *in, const char *semaphore)
{
	if (have_inst(b, in))
		return b->rc;
	if (!semaphore || !lm_strmap_lookup(&b->sems, semaphore))
		return bfail(b, in->name, "signal semaphore '%s' is not a "
			     "module semaphore", semaphore ? semaphore : "");
	lm_inst_add_signal(in, semaphore);
	return 0;
}

int lm_b_dma_queue(lm_builder *b, lm_inst *in, const char *queue)
{
	if (have_inst(b, in))
		return b->rc;
	if (!lm_opcode_uses_queue(in->op) && in->op != LM_OP_DMATRIGGER &&
	    in->op != LM_OP_DMABLOCK)
		return bfail(b, in->name, "a queue on %s, not a DMA",
			     lm_opcode_name(in->op));
	if (!queue || !lm_strmap_lookup(&b->queues, queue))
		return bfail(b, in->name, "queue '%s' is not a module queue",
			     queue ? queue : "");
	lm_inst_set_str(in, &in->queue, queue);
	return 0;
}

int lm_b_switch_queue(lm_builder *b, lm_inst *in, const char *queue,
		      const char *instance)
{
	void *qv, *iq;
	if (have_inst(b, in))
		return b->rc;
	if (in->op != LM_OP_SWITCHQUEUE)
		return bfail(b, in->name, "a queue switch on %s",
			     lm_opcode_name(in->op));
	if (!queue || !(qv = lm_strmap_lookup(&b->queues, queue)))
		return bfail(b, in->name, "queue '%s' is not a module queue",
			     queue ? queue : "");
	if (!instance || !(iq = lm_strmap_lookup(&b->qinsts, instance)))
		return bfail(b, in->name, "queue instance '%s' does not exist",
			     instance ? instance : "");
	if (iq != qv)
		return bfail(b, in->name, "instance '%s' is not an instance of "
			     "queue '%s'", instance, queue);
	lm_inst_set_str(in, &in->queue, queue);
	lm_inst_set_str(in, &in->instance_name, instance);
	return 0;
}

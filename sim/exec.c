/*
** exec.c -- instruction semantics: one exec_* function per
** opcode family, reached through one table. Each reads its inputs (the
** instruction's start), computes in float32 and stages its write in
** x->pend, rounded to the destination dtype (RNE); the scheduler commits
** the staged write when the instruction completes. Nothing here knows
** about time, engines or synchronization.
**
** Reading bytes no instruction or host wrote is an error naming the
** instruction and the region, unless the instruction has can_read_uninit
** (then such elements read as NaN).
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"
#include "enumtab.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef int (*exec_fn)(ls_exec *x);

/* ---- helpers ------------------------------------------------------------ */

static const char *S(const char *s)
{
	return s ? s : "";
}

static const char *mod_path(const ls_exec *x)
{
	return x->mc->mods[x->mc->fns[x->si->fn].mod].path;
}

/* An LM_ECHECK error at the current instruction. */
static int LM_PRINTF(2, 3) fail(ls_exec *x, const char *fmt, ...)
{
	char where[512], what[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	ls_where(x->mc, x->core, x->si, where, sizeof where);
	return lm_errc(x->err, LM_ECHECK, mod_path(x), where, "%s (%s)", what,
		       lm_opcode_name(x->si->op));
}

static float *grow_f(float **p, size_t *cap, int64_t n)
{
	if ((size_t)n > *cap) {
		*cap = (size_t)n + (size_t)n / 2 + 16;
		free(*p);
		*p = lm_xmalloc(*cap * sizeof(float));
	}
	return *p;
}

static uint8_t *grow_b(uint8_t **p, size_t *cap, int64_t n)
{
	if ((size_t)n > *cap) {
		*cap = (size_t)n + (size_t)n / 2 + 64;
		free(*p);
		*p = lm_xmalloc(*cap);
	}
	return *p;
}

#define N_WRITTEN ((int)(sizeof ((ls_exec *)0)->written / \
			   sizeof ((ls_exec *)0)->written[0]))

/* 1 if an entry of x's cache says these shadow rows are all written. */
static int known_written(const ls_exec *x, const uint8_t *init, int64_t rows,
			 int64_t rb, int64_t ld)
{
	for (int i = 0; i < N_WRITTEN; i++) {
		const struct ls_written *w = &x->written[i];
		if (w->init == init && w->rows == rows && w->rb == rb &&
		    w->ld == ld)
			return 1;
	}
	return 0;
}

static void remember_written(ls_exec *x, const uint8_t *init, int64_t rows,
			     int64_t rb, int64_t ld)
{
	struct ls_written *w = &x->written[x->next_written];
	x->next_written = (x->next_written + 1) % N_WRITTEN;
	w->init = init;
	w->rows = rows;
	w->rb = rb;
	w->ld = ld;
}

/*
** 1 if rows rows of rb shadow bytes, ld bytes apart from init, are all
** written. Shadow bytes are only ever set during a run, so a range found
** written is remembered and not scanned again.
*/
static int rows_written(ls_exec *x, const uint8_t *init, int64_t rows,
			int64_t rb, int64_t ld)
{
	if (known_written(x, init, rows, rb, ld))
		return 1;
	for (int64_t r = 0; r < rows; r++)
		if (!ls_all_written(init + r * ld, rb))
			return 0;
	remember_written(x, init, rows, rb, ld);
	return 1;
}

/*
** The element stride between the partitions of o when each partition's
** free elements are contiguous (rows), else 0.
*/
static int64_t row_ld(const ls_opnd *o)
{
	if (o->parts < 1 || o->free < 1 || o->parts * o->free != o->count)
		return 0;
	if (o->ndim == 2 && o->stride[1] == o->esize && o->num[1] == o->free &&
	    o->num[0] == o->parts && o->stride[0] > 0 &&
	    o->stride[0] % o->esize == 0)
		return o->stride[0] / o->esize;
	if (o->ndim == 1 && o->stride[0] == o->esize)
		return o->free;
	return 0;
}

static int can_read_uninit(const ls_exec *x)
{
	for (int i = 0; i < x->si->n_dyn; i++)
		if (x->si->dyn[i].what == LS_DYN_UNINIT)
			return (int)x->dynv[i];
	return x->si->can_read_uninit;
}

static int uninit_error(ls_exec *x, const char *label, const ls_opnd *o,
			const uint8_t *p)
{
	char region[300];
	ls_describe_byte(x->mc, x->core, o, p, region, sizeof region);
	return fail(x, "reads uninitialized memory: %s %s was never written "
		    "(can_read_uninit is not set)", label, region);
}

/*
** Under the race detector an uninitialized read is kept, not raised
** (docs/race.md): it is often a race's first symptom, and the write it
** missed comes later. The error is made and handed to race.c, which
** raises it at the end of the run when no race was found; the read goes
** on (as NaN). 1 if it was kept.
*/
static int uninit_kept(ls_exec *x, const char *label, const ls_opnd *o,
		       const uint8_t *bad)
{
	if (!x->mc->race)
		return 0;
	uninit_error(x, label, o, bad);
	ls_race_keep_error(x->mc->race, x->err);
	lm_error_clear(x->err);
	return 1;
}

/*
** 1 if operand o (bound as v) is rows (row_ld) whose bytes are all
** written (the cache of rows_written): its element loops may skip the
** shadow. *ld: the bytes between its rows.
*/
static int opnd_written(ls_exec *x, const ls_opnd *o, const ls_view *v,
			int64_t *ld)
{
	int64_t rl = row_ld(o);
	*ld = rl * o->esize;
	return rl && rows_written(x, v->init, o->parts, o->free * o->esize,
				  *ld);
}

/* Gather input operand i as float32 into out. */
static int read_f32(ls_exec *x, int i, float *out)
{
	const ls_opnd *o = &x->si->ins[i];
	ls_view v;
	const uint8_t *bad;
	char label[32];
	int64_t ld;
	ls_bind(x->mc, x->core, o, &v);
	if (opnd_written(x, o, &v, &ld)) {
		ls_rows_to_f32(&v, o->parts, o->free, ld, out);
		return 0;
	}
	bad = ls_gather_f32(&v, out, can_read_uninit(x));
	if (!bad)
		return 0;
	snprintf(label, sizeof label, "ins[%d]", i);
	if (uninit_kept(x, label, &x->si->ins[i], bad)) {
		ls_gather_f32(&v, out, 1);
		return 0;
	}
	return uninit_error(x, label, &x->si->ins[i], bad);
}

/* Gather operand o (label for messages) as raw element bytes. */
static int read_raw(ls_exec *x, const ls_opnd *o, const char *label,
		    void *out)
{
	ls_view v;
	const uint8_t *bad;
	int64_t ld;
	ls_bind(x->mc, x->core, o, &v);
	if (opnd_written(x, o, &v, &ld)) {
		ls_rows_get_raw(&v, o->parts, o->free, ld, out);
		return 0;
	}
	bad = ls_gather_raw(&v, out, can_read_uninit(x));
	if (bad && uninit_kept(x, label, o, bad)) {
		ls_gather_raw(&v, out, 1);
		return 0;
	}
	return bad ? uninit_error(x, label, o, bad) : 0;
}

/*
** Input i as float32 rows of L elements, row r at *p + r * *ld: read in
** place when it is float32 rows of L elements (aligned) whose bytes are
** all written, else gathered into *buf (grown; *ld = L).
*/
static int in_rows(ls_exec *x, int i, int64_t L, float **buf, size_t *cap,
		   const float **p, int64_t *ld)
{
	const ls_opnd *o = &x->si->ins[i];
	int64_t rl = row_ld(o);
	int rc;
	if ((o->dtype == LM_DT_FLOAT32 || o->dtype == LM_DT_FLOAT32R) && rl &&
	    o->free == L) {
		ls_view v;
		ls_bind(x->mc, x->core, o, &v);
		if ((uintptr_t)v.data % sizeof(float) == 0 &&
		    rows_written(x, v.init, o->parts, L * 4, rl * 4)) {
			*p = (const float *)(const void *)v.data;
			*ld = rl;
			return 0;
		}
	}
	if ((rc = read_f32(x, i, grow_f(buf, cap, o->count))) != 0)
		return rc;
	*p = *buf;
	*ld = L;
	return 0;
}

/* The staging buffer of outs[0], bound and sized. */
static uint8_t *stage_buf(ls_exec *x)
{
	const ls_opnd *o = &x->si->outs[0];
	ls_pending *p = x->pend;
	p->dsto = *o;
	ls_bind(x->mc, x->core, &p->dsto, &p->dst);
	grow_b(&p->buf, &p->cap, o->count * o->esize);
	p->active = 1;
	return p->buf;
}

/* Stage float32 values for outs[0], rounded to its dtype. */
static void stage_f32(ls_exec *x, const float *vals)
{
	uint8_t *b = stage_buf(x);
	ls_f32_to_dtype(x->si->outs[0].dtype, vals, b, x->si->outs[0].count);
}

/*
** Where to compute outs[0]'s float32 values: its staging buffer itself
** when it is float32, else the scratch x->fc; out_done stages them then.
** Called once every read of the instruction is done.
*/
static float *out_f32(ls_exec *x)
{
	const ls_opnd *o = &x->si->outs[0];
	if (o->dtype == LM_DT_FLOAT32 || o->dtype == LM_DT_FLOAT32R)
		return (float *)(void *)stage_buf(x);
	return grow_f(&x->fc, &x->cap_c, o->count);
}

static void out_done(ls_exec *x, const float *vals)
{
	if (!x->pend->active || vals != (const float *)(void *)x->pend->buf)
		stage_f32(x, vals);
}

int ls_alu(lm_aluop op, float a, float b, float *r)
{
	switch (op) {
	case LM_ALU_ADD: *r = a + b; return 1;
	case LM_ALU_SUBTRACT: *r = a - b; return 1;
	case LM_ALU_MULT: *r = a * b; return 1;
	case LM_ALU_DIVIDE: *r = a / b; return 1;
	case LM_ALU_MAX:
		*r = isnan(a) ? a : isnan(b) ? b : (a > b ? a : b);
		return 1;
	case LM_ALU_MIN:
		*r = isnan(a) ? a : isnan(b) ? b : (a < b ? a : b);
		return 1;
	case LM_ALU_BYPASS: *r = a; return 1;
	case LM_ALU_ABS: *r = fabsf(a); return 1;
	case LM_ALU_POW: *r = powf(a, b); return 1;
	case LM_ALU_MOD: *r = fmodf(a, b); return 1;
	case LM_ALU_AVERAGE: *r = (a + b) * 0.5f; return 1;
	case LM_ALU_RSQRT: *r = 1.0f / sqrtf(a); return 1;
	case LM_ALU_IS_EQUAL: *r = a == b ? 1.0f : 0.0f; return 1;
	case LM_ALU_NOT_EQUAL: *r = a != b ? 1.0f : 0.0f; return 1;
	case LM_ALU_IS_GE: *r = a >= b ? 1.0f : 0.0f; return 1;
	case LM_ALU_IS_GT: *r = a > b ? 1.0f : 0.0f; return 1;
	case LM_ALU_IS_LE: *r = a <= b ? 1.0f : 0.0f; return 1;
	case LM_ALU_IS_LT: *r = a < b ? 1.0f : 0.0f; return 1;
	default: return 0;
	}
}

/*
** Element loops of the ALU with the op switch hoisted out (the common ops
** vectorize); every other op goes through ls_alu per element. Same
** formulas as ls_alu, so the bits are the same.
*/
#define ALU_LOOP(EXPR) do { \
	for (int64_t i_ = 0; i_ < n; i_++) { \
		const float x = a[i_], y = B(i_); \
		out[i_] = (EXPR); \
	} \
} while (0)
/*
** On x86-64 the four arithmetic ops run four lanes at a time: one IEEE
** operation per lane, as the scalar loop. The instruction is written
** out because its operand order decides which NaN a NaN op NaN returns
** (the first source's, quieted): x first, as the scalar code compiles;
** the compiler would be free to swap the operands of a C + or *.
*/
/* Four float32 lanes (GCC / clang vector extension). */
typedef float v4f __attribute__((vector_size(16)));
#if defined(__x86_64__) && defined(__SSE2__)
#define ALU_VLOOP(OP, INSN) do { \
	int64_t i_ = 0; \
	for (; i_ + 4 <= n; i_ += 4) { \
		v4f va_, vb_; \
		memcpy(&va_, a + i_, sizeof va_); \
		VB(vb_, i_); \
		__asm__(INSN " %1, %0" : "+x"(va_) : "x"(vb_)); \
		memcpy(out + i_, &va_, sizeof va_); \
	} \
	for (; i_ < n; i_++) { \
		const float x = a[i_], y = B(i_); \
		out[i_] = x OP y; \
	} \
} while (0)
#else
#define ALU_VLOOP(OP, INSN) ALU_LOOP(x OP y)
#endif
#define ALU_OPS() \
	switch (op) { \
	case LM_ALU_ADD: ALU_VLOOP(+, "addps"); return; \
	case LM_ALU_SUBTRACT: ALU_VLOOP(-, "subps"); return; \
	case LM_ALU_MULT: ALU_VLOOP(*, "mulps"); return; \
	case LM_ALU_DIVIDE: ALU_VLOOP(/, "divps"); return; \
	case LM_ALU_MAX: \
		ALU_LOOP(isnan(x) ? x : isnan(y) ? y : (x > y ? x : y)); \
		return; \
	case LM_ALU_MIN: \
		ALU_LOOP(isnan(x) ? x : isnan(y) ? y : (x < y ? x : y)); \
		return; \
	default: \
		for (int64_t i_ = 0; i_ < n; i_++) \
			ls_alu(op, a[i_], B(i_), &out[i_]); \
		return; \
	}

/* out[i] = a[i] op b[i] (out may be a). */
static void alu_vv(lm_aluop op, const float *a, const float *b, float *out,
		   int64_t n)
{
#define B(i) b[i]
#define VB(v, i) memcpy(&(v), b + (i), sizeof(v))
	ALU_OPS()
#undef VB
#undef B
}

/* out[i] = a[i] op c (out may be a). */
static void alu_vs(lm_aluop op, const float *a, float c, float *out,
		   int64_t n)
{
#if defined(__x86_64__) && defined(__SSE2__)
	const v4f cv = { c, c, c, c };
#endif
#define B(i) c
#define VB(v, i) ((v) = cv)
	ALU_OPS()
#undef VB
#undef B
}

/* out[i] = c op b[i] (out may be b). */
static void alu_sv(lm_aluop op, float c, const float *b, float *out,
		   int64_t n)
{
	/* add and mult commute (with a non-NaN constant, NaN payloads
	** included) */
	if ((op == LM_ALU_ADD || op == LM_ALU_MULT) && !isnan(c)) {
		alu_vs(op, b, c, out, n);
		return;
	}
	for (int64_t i = 0; i < n; i++)
		ls_alu(op, c, b[i], &out[i]);
}

#undef ALU_OPS
#undef ALU_VLOOP
#undef ALU_LOOP

/* 0..3 for add, subtract, mult, divide; else -1. */
static int arith_code(lm_aluop op)
{
	switch (op) {
	case LM_ALU_ADD: return 0;
	case LM_ALU_SUBTRACT: return 1;
	case LM_ALU_MULT: return 2;
	case LM_ALU_DIVIDE: return 3;
	default: return -1;
	}
}

/*
** TensorScalar's two steps out[i] = (a[i] op0 c0) op1 c1 in one pass,
** four lanes at a time, for the arithmetic ops with the constants on
** the right and not NaN (so one operand at most is NaN and the operand
** order cannot change a bit). Each step is rounded to float32 as in the
** two passes. 0 if the ops are not such.
*/
#define TS2(O0, O1) do { \
	const v4f c0v_ = { c0, c0, c0, c0 }, c1v_ = { c1, c1, c1, c1 }; \
	int64_t i_ = 0; \
	for (; i_ + 4 <= n; i_ += 4) { \
		v4f v_; \
		memcpy(&v_, a + i_, sizeof v_); \
		v_ = v_ O0 c0v_; \
		v_ = v_ O1 c1v_; \
		memcpy(out + i_, &v_, sizeof v_); \
	} \
	for (; i_ < n; i_++) { \
		float v_ = a[i_] O0 c0; \
		v_ = v_ O1 c1; \
		out[i_] = v_; \
	} \
} while (0)
#define TS_OP1(O0) do { \
	switch (k1) { \
	case 0: TS2(O0, +); break; \
	case 1: TS2(O0, -); break; \
	case 2: TS2(O0, *); break; \
	default: TS2(O0, /); break; \
	} \
} while (0)

static int ts_fused(lm_aluop op0, float c0, lm_aluop op1, float c1,
		    const float *a, float *out, int64_t n)
{
	const int k0 = arith_code(op0), k1 = arith_code(op1);
	if (k0 < 0 || k1 < 0 || isnan(c0) || isnan(c1))
		return 0;
	switch (k0) {
	case 0: TS_OP1(+); break;
	case 1: TS_OP1(-); break;
	case 2: TS_OP1(*); break;
	default: TS_OP1(/); break;
	}
	return 1;
}

#undef TS_OP1
#undef TS2

/* TensorTensor's rows: out row k = a row k op b row k, rows of L. */
static void tt_rows(lm_aluop op, const float *a, int64_t lda, const float *b,
		    int64_t ldb, int64_t rows, int64_t L, float *out,
		    int64_t ldo)
{
	for (int64_t k = 0; k < rows; k++)
		alu_vv(op, a + k * lda, b + k * ldb, out + k * ldo, L);
}

/* TensorScalar's rows: (a op0 const0) op1 const1, each step float32. */
static void ts_rows(const lm_inst *in, const float *a, int64_t lda,
		    int64_t rows, int64_t L, float *out, int64_t ldo)
{
	const float c0 = in->has_const0 ? (float)in->const0 : 0.0f;
	const float c1 = in->has_const1 ? (float)in->const1 : 0.0f;
	const int fuse = !in->reverse0 && !in->reverse1;
	for (int64_t k = 0; k < rows; k++) {
		float *orow = out + k * ldo;
		if (fuse && ts_fused(in->alu0, c0, in->alu1, c1, a + k * lda,
				     orow, L))
			continue;
		if (in->reverse0)
			alu_sv(in->alu0, c0, a + k * lda, orow, L);
		else
			alu_vs(in->alu0, a + k * lda, c0, orow, L);
		if (in->reverse1)
			alu_sv(in->alu1, c1, orow, orow, L);
		else
			alu_vs(in->alu1, orow, c1, orow, L);
	}
}

/* ---- the opcode families ------------------------------------------------ */

/* 1 if a and b are one format (two spellings of a float8 format, say):
** a move between them copies the bits. */
static int same_format(lm_dtype a, lm_dtype b)
{
	return lm_dtype_format(a) == lm_dtype_format(b);
}

/* DMACopy / Load / Save: copy with dtype conversion (bit copy if one
** format). */
static int int_convert(ls_exec *x);

static int exec_dma(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	if (same_format(src->dtype, dst->dtype))
		return read_raw(x, src, "ins[0]", stage_buf(x));
	if (lm_dtype_is_int(src->dtype) && lm_dtype_is_int(dst->dtype))
		return int_convert(x);
	float *f = grow_f(&x->fa, &x->cap_a, src->count);
	int rc = read_f32(x, 0, f);
	if (rc)
		return rc;
	stage_f32(x, f);
	return 0;
}

/*
** CCE: out = op folded over its sources, element by element, in float32
** from a zeroed accumulator (acc = 0; acc = acc op in[k] for k in order;
** max / min as fmaxf / fminf), rounded to the output's dtype. With
** constants (add only) each source is scaled first, acc = acc +
** c[k] * in[k], the product rounded to float32 before the add
** (docs/semantics.md, "DMA CCE").
*/
static int cce_fold(ls_exec *x, lm_aluop op, const char *what,
		    const float *c, int nc)
{
	const ls_sinst *si = x->si;
	int64_t n = si->outs[0].count;
	float *acc = grow_f(&x->fb, &x->cap_b, n);
	float *f = grow_f(&x->fa, &x->cap_a, n);
	if (op != LM_ALU_ADD && op != LM_ALU_MAX && op != LM_ALU_MIN)
		return fail(x, "%s '%s' is not modelled (add, max, min)", what,
			    lm_aluop_name(op) ? lm_aluop_name(op) : "?");
	if (nc < 0)
		return fail(x, "constants is not a list of numbers");
	if (nc && op != LM_ALU_ADD)
		return fail(x, "constants scale the sources of an add only "
			    "(%s is '%s')", what, lm_aluop_name(op));
	if (nc && nc != si->n_ins)
		return fail(x, "constants has %d values for %d sources", nc,
			    si->n_ins);
	for (int64_t i = 0; i < n; i++)
		acc[i] = 0.0f;
	for (int k = 0; k < si->n_ins; k++) {
		int rc;
		if (si->ins[k].count != n)
			return fail(x, "ins[%d] has %lld elements, outs[0] %lld",
				    k, (long long)si->ins[k].count,
				    (long long)n);
		if ((rc = read_f32(x, k, f)) != 0)
			return rc;
		if (nc) {
			const float ck = c[k];
			for (int64_t i = 0; i < n; i++) {
				const float t = ck * f[i];
				acc[i] = acc[i] + t;
			}
			continue;
		}
		for (int64_t i = 0; i < n; i++)
			acc[i] = op == LM_ALU_ADD ? acc[i] + f[i] :
				 op == LM_ALU_MAX ? fmaxf(acc[i], f[i]) :
				 fminf(acc[i], f[i]);
	}
	stage_f32(x, acc);
	return 0;
}

#define MAX_CONSTANTS 64

/* DMADescriptorCCE: its op and constants (docs/simulator.md, "DMA
** blocks"). */
static int exec_cce(ls_exec *x)
{
	const ls_sinst *si = x->si;
	float c[MAX_CONSTANTS];
	lm_aluop op = si->dq ? (lm_aluop)si->dq->alu : LM_ALU_INVALID;
	int nc = ls_dma_constants(si->in, "constants", c, MAX_CONSTANTS);
	return cce_fold(x, op, "DMADescriptorCCE op", c, nc);
}

/*
** The source of a DMA transpose, replicate or copy as raw elements of
** the destination's dtype (converted through float32 when the dtypes
** differ) into x->raw; its element size in *es.
*/
static int read_as_dst(ls_exec *x, uint8_t **out, int *es)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	uint8_t *b = grow_b(&x->raw, &x->cap_raw, src->count * dst->esize);
	*es = dst->esize;
	*out = b;
	if (same_format(src->dtype, dst->dtype))
		return read_raw(x, src, "ins[0]", b);
	float *f = grow_f(&x->fa, &x->cap_a, src->count);
	int rc = read_f32(x, 0, f);
	if (rc)
		return rc;
	ls_f32_to_dtype(dst->dtype, f, b, src->count);
	return 0;
}

static int one_src_dst(ls_exec *x, const char *what)
{
	const ls_sinst *si = x->si;
	if (si->n_ins == 1 && si->n_outs == 1)
		return 0;
	return fail(x, "%s takes ins [src] and outs [dst] (has %d and %d)",
		    what, si->n_ins, si->n_outs);
}

/*
** DMA transpose (DMACopy mode Transpose, DMADescriptorTranspose): both
** access patterns 4-D, [W, Z, Y, X]; destination axis k walks source
** axis perm[k] of TransposeOps t, so dst[d0][d1][d2][d3] =
** src[s] with s[perm[k]] = d[k]. A raw copy between equal dtypes, else
** converted through float32 (docs/semantics.md, "DMA transpose").
*/
static int exec_dma_transpose(ls_exec *x, int t)
{
	const ls_sinst *si = x->si;
	const signed char *perm = ls_dma_perm(t);
	const lm_arg *sa, *da;
	int64_t sn[4], dn[4], sst[4], sp[4];
	uint8_t *src, *dst;
	int es, rc;
	if ((rc = one_src_dst(x, "a DMA transpose")) != 0)
		return rc;
	if (!perm)
		return fail(x, "transpose_op %d is no TransposeOps value", t);
	sa = &si->in->ins[0];
	da = &si->in->outs[0];
	if (sa->kind != LM_ARG_PHYSICAL_AP || da->kind != LM_ARG_PHYSICAL_AP ||
	    sa->n_ap != 4 || da->n_ap != 4)
		return fail(x, "a DMA transpose takes 4-D physical_ap "
			    "operands [W, Z, Y, X] (ins[0] has %d pairs, "
			    "outs[0] %d)", sa->n_ap, da->n_ap);
	for (int k = 0; k < 4; k++) {
		sn[k] = sa->ap[k].num;
		dn[k] = da->ap[k].num;
	}
	for (int k = 0; k < 4; k++)
		if (dn[k] != sn[perm[k]])
			return fail(x, "transpose_op '%s': outs[0] ap[%d].num "
				    "%lld is not ins[0] ap[%d].num %lld",
				    lm_enum_name(LM_ET_TransposeOps, t), k,
				    (long long)dn[k], perm[k],
				    (long long)sn[perm[k]]);
	if ((rc = read_as_dst(x, &src, &es)) != 0)
		return rc;
	dst = stage_buf(x);
	sst[3] = 1;
	for (int k = 2; k >= 0; k--)
		sst[k] = sst[k + 1] * sn[k + 1];
	for (int k = 0; k < 4; k++)
		sp[k] = sst[perm[k]]; /* source stride of destination axis k */
	for (int64_t a = 0; a < dn[0]; a++)
		for (int64_t b = 0; b < dn[1]; b++)
			for (int64_t c = 0; c < dn[2]; c++) {
				int64_t s0 = a * sp[0] + b * sp[1] + c * sp[2];
				for (int64_t d = 0; d < dn[3]; d++) {
					memcpy(dst, src + (s0 + d * sp[3]) * es,
					       (size_t)es);
					dst += es;
				}
			}
	return 0;
}

/*
** DMA replicate (DMACopy mode Replicate, DMADescriptorReplicate): 2-D
** access patterns, the source [P][F] written R = P' / P times down the
** destination's P' partitions, dst[r * P + p][f] = src[p][f]
** (docs/semantics.md, "DMA replicate").
*/
static int exec_dma_replicate(ls_exec *x)
{
	const ls_sinst *si = x->si;
	const lm_arg *sa, *da;
	uint8_t *src, *dst;
	int64_t bytes, reps;
	int es, rc;
	if ((rc = one_src_dst(x, "a DMA replicate")) != 0)
		return rc;
	sa = &si->in->ins[0];
	da = &si->in->outs[0];
	if (sa->kind != LM_ARG_PHYSICAL_AP || da->kind != LM_ARG_PHYSICAL_AP ||
	    sa->n_ap != 2 || da->n_ap != 2)
		return fail(x, "a DMA replicate takes 2-D physical_ap operands "
			    "[partitions, elements] (ins[0] has %d pairs, "
			    "outs[0] %d)", sa->n_ap, da->n_ap);
	if (da->ap[1].num != sa->ap[1].num || sa->ap[0].num < 1 ||
	    da->ap[0].num % sa->ap[0].num)
		return fail(x, "a DMA replicate writes whole copies of its "
			    "source: outs[0] is %lld x %lld, ins[0] %lld x "
			    "%lld", (long long)da->ap[0].num,
			    (long long)da->ap[1].num, (long long)sa->ap[0].num,
			    (long long)sa->ap[1].num);
	if ((rc = read_as_dst(x, &src, &es)) != 0)
		return rc;
	dst = stage_buf(x);
	reps = da->ap[0].num / sa->ap[0].num;
	bytes = si->ins[0].count * es;
	for (int64_t r = 0; r < reps; r++)
		memcpy(dst + r * bytes, src, (size_t)bytes);
	return 0;
}

static int exec_desc_transpose(ls_exec *x)
{
	return exec_dma_transpose(x, ls_dma_enum(x->si->in, "transpose_op",
						 LM_ET_TransposeOps));
}

/*
** DMACopy: its CopyMode. Copy is the plain copy; Transpose, CCE and
** Replicate the bodies the descriptors of those kinds run. A key of
** another mode away from its default is refused by ls_check_module.
*/
static int exec_dmacopy(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	float c[MAX_CONSTANTS];
	int nc;
	int mode = ls_dma_enum(in, "mode", LM_ET_CopyMode);
	switch (mode) {
	case 0:
		return exec_dma(x);
	case 1:
		return exec_dma_transpose(x, ls_dma_enum(in, "transpose_op",
							 LM_ET_TransposeOps));
	case 2:
		nc = ls_dma_constants(in, "constants", c, MAX_CONSTANTS);
		return cce_fold(x, lm_aluop_parse(S(lm_enum_name(
			LM_ET_AluOpType, ls_dma_enum(in, "cce_op",
						     LM_ET_AluOpType)))),
			"DMACopy cce_op", c, nc);
	case 3:
		return exec_dma_replicate(x);
	default:
		return fail(x, "DMACopy mode '%s' is not modelled (Copy, "
			    "Transpose, CCE, Replicate)",
			    S(lm_enum_name(LM_ET_CopyMode, mode)));
	}
}

/* ---- indirect moves (docs/semantics.md, "IndirectLoad and
** IndirectCopy", "Gather") ---------------------------------------------- */

/* Is t an index dtype (an integer of 16 bits or more)? */
static int is_index_dtype(lm_dtype t)
{
	return t == LM_DT_INT16 || t == LM_DT_UINT16 || t == LM_DT_INT32 ||
	       t == LM_DT_UINT32 || t == LM_DT_INT64 || t == LM_DT_UINT64;
}

/* Index k of raw indices b (dtype t): 1 when 0 <= value < bound (into
** *v), else 0 with the value's text in txt. */
static int index_in(lm_dtype t, const uint8_t *b, int64_t k, int64_t bound,
		    int64_t *v, char *txt, size_t n)
{
	int64_t sv = 0;
	uint64_t uv = 0;
	int is_signed = 1;
	switch (t) {
	case LM_DT_INT16: { int16_t w; memcpy(&w, b + 2 * k, 2); sv = w; break; }
	case LM_DT_INT32: { int32_t w; memcpy(&w, b + 4 * k, 4); sv = w; break; }
	case LM_DT_INT64: memcpy(&sv, b + 8 * k, 8); break;
	case LM_DT_UINT16: { uint16_t w; memcpy(&w, b + 2 * k, 2); uv = w;
			     is_signed = 0; break; }
	case LM_DT_UINT32: { uint32_t w; memcpy(&w, b + 4 * k, 4); uv = w;
			     is_signed = 0; break; }
	default: memcpy(&uv, b + 8 * k, 8); is_signed = 0; break;
	}
	if (is_signed ? sv >= 0 && sv < bound : uv < (uint64_t)bound) {
		*v = is_signed ? sv : (int64_t)uv;
		return 1;
	}
	if (is_signed)
		snprintf(txt, n, "%lld", (long long)sv);
	else
		snprintf(txt, n, "%llu", (unsigned long long)uv);
	return 0;
}

/* The indices of si (its index operand, read raw) into *out; their
** count in *n. */
static int read_indices(ls_exec *x, const uint8_t **out, int64_t *n)
{
	const ls_opnd *o = x->si->dq ? x->si->dq->idx : NULL;
	uint8_t *b;
	if (!o || !o->space)
		return fail(x, "%s has no index operand",
			    lm_opcode_name(x->si->op));
	if (!is_index_dtype(o->dtype))
		return fail(x, "indirection_ins[0] has dtype %s: indices are "
			    "int16, uint16, int32, uint32, int64 or uint64",
			    lm_dtype_name(o->dtype));
	b = (uint8_t *)grow_f(&x->fc, &x->cap_c, (o->count * o->esize + 3) / 4);
	*out = b;
	*n = o->count;
	return read_raw(x, o, "indirection_ins[0]", b);
}

/*
** Row r of operand o whose access pattern's first pair has n rows: the
** elements r * (count / n) .. of its walk. The first dimension of o is
** that pair's, merged with the pairs after it when they are contiguous
** (a unit pair was dropped).
*/
static void row_of(const ls_opnd *o, int64_t n, int64_t r, ls_opnd *row)
{
	*row = *o;
	if (n <= 1)
		return;
	int64_t m = o->num[0] / n;
	row->count = o->count / n;
	if (m > 1) {
		row->num[0] = m;
		row->off += r * m * o->stride[0];
		return;
	}
	row->off += r * o->stride[0];
	if (o->ndim > 1) {
		memmove(row->stride, row->stride + 1,
			(size_t)(o->ndim - 1) * sizeof *row->stride);
		memmove(row->num, row->num + 1,
			(size_t)(o->ndim - 1) * sizeof *row->num);
		row->ndim--;
	} else {
		row->num[0] = 1;
	}
	if (o->pdim == 0) {
		row->part += r;
		row->parts = 1;
		row->pdim = -1;
	}
}

/*
** IndirectLoad, IndirectCopy: out row k = ins[0] row idx[k], the rows
** of ins[0] its access pattern's first pair; IndirectCopy writes the
** first num_valid_indices rows only. A raw copy between equal dtypes,
** else through float32.
*/
static int exec_indirect_rows(ls_exec *x)
{
	const ls_sinst *si = x->si;
	const ls_opnd *src = &si->ins[0], *dst = &si->outs[0];
	const lm_arg *sa = &si->in->ins[0];
	const uint8_t *ix;
	uint8_t *out;
	int64_t n_rows, rlen, k_n, n_valid;
	int es = dst->esize, rc;
	if ((rc = one_src_dst(x, lm_opcode_name(si->op))) != 0)
		return rc;
	if (sa->kind != LM_ARG_PHYSICAL_AP || sa->n_ap < 1)
		return fail(x, "ins[0], the rows gathered from, must be a "
			    "physical_ap");
	if ((rc = read_indices(x, &ix, &k_n)) != 0)
		return rc;
	x->n_rows = 0;
	n_rows = sa->ap[0].num;
	rlen = n_rows > 0 ? src->count / n_rows : 0;
	n_valid = si->dq->n_valid >= 0 ? si->dq->n_valid : k_n;
	if (n_valid > k_n)
		return fail(x, "num_valid_indices %lld exceeds the %lld "
			    "indices of indirection_ins[0]",
			    (long long)n_valid, (long long)k_n);
	if (dst->count != k_n * rlen)
		return fail(x, "outs[0] has %lld elements: %lld indices of "
			    "rows of %lld elements write %lld",
			    (long long)dst->count, (long long)k_n,
			    (long long)rlen, (long long)(k_n * rlen));
	out = stage_buf(x);
	for (int64_t k = 0; k < n_valid; k++) {
		ls_opnd row;
		ls_view v;
		const uint8_t *bad;
		int64_t r;
		char txt[32];
		if (!index_in(si->dq->idx->dtype, ix, k, n_rows, &r, txt,
			      sizeof txt))
			return fail(x, "index %s (indirection_ins[0] element "
				    "%lld) is out of range: ins[0] '%s' has "
				    "%lld rows (0..%lld)", txt, (long long)k,
				    S(src->alloc), (long long)n_rows,
				    (long long)n_rows - 1);
		row_of(src, n_rows, r, &row);
		if (x->mc->race) {
			lm_grow(&x->rows, &x->cap_rows, x->n_rows + 1,
				sizeof *x->rows);
			x->rows[x->n_rows++] = row;
		}
		ls_bind(x->mc, x->core, &row, &v);
		if (same_format(src->dtype, dst->dtype)) {
			bad = ls_gather_raw(&v, out + k * rlen * es,
					    can_read_uninit(x));
		} else {
			float *f = grow_f(&x->fa, &x->cap_a, rlen);
			bad = ls_gather_f32(&v, f, can_read_uninit(x));
			if (!bad)
				ls_f32_to_dtype(dst->dtype, f,
						out + k * rlen * es, rlen);
		}
		if (bad)
			return uninit_error(x, "ins[0]", &row, bad);
	}
	if (n_valid < k_n) {
		ls_pending *p = x->pend;
		if ((size_t)dst->count > p->cap_mask) {
			p->cap_mask = (size_t)dst->count + 64;
			free(p->mask);
			p->mask = lm_xmalloc(p->cap_mask);
		}
		memset(p->mask, 1, (size_t)(n_valid * rlen));
		memset(p->mask + n_valid * rlen, 0,
		       (size_t)((k_n - n_valid) * rlen));
		p->is_masked = 1;
	}
	return 0;
}

/*
** Gather: per partition p, out[p][j] = data[p][idx[p][j]], idx the
** element index within the partition's data (ins[0]), one index per
** output element, both walked partition by partition.
*/
static int exec_gather(ls_exec *x)
{
	const ls_sinst *si = x->si;
	const ls_opnd *src = &si->ins[0], *dst = &si->outs[0];
	const ls_opnd *io = si->dq ? si->dq->idx : NULL;
	const uint8_t *ix;
	uint8_t *data, *out;
	int64_t k_n, parts, f_in, f_out;
	int es, rc;
	if ((rc = one_src_dst(x, "Gather")) != 0)
		return rc;
	if ((rc = read_indices(x, &ix, &k_n)) != 0)
		return rc;
	parts = src->parts;
	if (io->parts != parts || dst->parts != parts ||
	    k_n != dst->count)
		return fail(x, "Gather reads one index per output element, "
			    "partition by partition: ins[0] has %lld "
			    "partitions, indirection_ins[0] %lld (%lld "
			    "indices), outs[0] %lld (%lld elements)",
			    (long long)parts, (long long)io->parts,
			    (long long)k_n, (long long)dst->parts,
			    (long long)dst->count);
	if ((rc = read_as_dst(x, &data, &es)) != 0)
		return rc;
	f_in = src->free;
	f_out = dst->free;
	out = stage_buf(x);
	for (int64_t p = 0; p < parts; p++)
		for (int64_t j = 0; j < f_out; j++) {
			int64_t k = p * f_out + j, e;
			char txt[32];
			if (!index_in(io->dtype, ix, k, f_in, &e, txt,
				      sizeof txt))
				return fail(x, "index %s (indirection_ins[0] "
					    "partition %lld, element %lld) is "
					    "out of range: ins[0] '%s' has %lld "
					    "elements per partition (0..%lld)",
					    txt, (long long)p, (long long)j,
					    S(src->alloc), (long long)f_in,
					    (long long)f_in - 1);
			memcpy(out + k * es, data + (p * f_in + e) * es,
			       (size_t)es);
		}
	return 0;
}

/* TensorCopy: as DMA, on an engine. */
static int copy_defer(ls_exec *x);

static int exec_copy(ls_exec *x)
{
	if (copy_defer(x))
		return 0;
	return exec_dma(x);
}

/* TensorCopyDynamicSrc / Dst: a TensorCopy whose source (destination)
** is placed at the issue (register_ap, symbolic_ap); the compute engine
** reads and writes SBUF and PSUM only. */
static int exec_tcdynamic(ls_exec *x)
{
	const ls_sinst *si = x->si;
	if (si->n_ins != 1 || si->n_outs != 1)
		return fail(x, "%s takes ins [src] and outs [dst] (has %d and "
			    "%d)", lm_opcode_name(si->op), si->n_ins,
			    si->n_outs);
	if (si->ins[0].space == LS_SP_DRAM || si->outs[0].space == LS_SP_DRAM)
		return fail(x, "%s on a compute engine reads and writes SBUF "
			    "and PSUM only", lm_opcode_name(si->op));
	if (si->ins[0].count != si->outs[0].count)
		return fail(x, "ins[0] has %lld elements, outs[0] %lld",
			    (long long)si->ins[0].count,
			    (long long)si->outs[0].count);
	return exec_dma(x);
}

/*
** is_weight_onezero / is_fmap_onezero: the hardware may take operand k
** (0 stationary, 1 moving) for 0s and 1s; the product is the same when
** it is, so the simulator computes it as usual after checking that every
** element is +0, -0 or 1 (a NaN or any other value is a run error).
*/
static int check_onezero(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const char *key[2] = { "is_weight_onezero", "is_fmap_onezero" };
	int on[2] = { in->is_weight_onezero, in->is_fmap_onezero };
	for (int k = 0; k < 2; k++) {
		const ls_opnd *o = &x->si->ins[k];
		float *v;
		int rc;
		if (!on[k])
			continue;
		v = grow_f(&x->fa, &x->cap_a, o->count);
		if ((rc = read_f32(x, k, v)) != 0)
			return rc;
		for (int64_t i = 0; i < o->count; i++)
			if (!(v[i] == 0.0f || v[i] == 1.0f))
				return fail(x, "%s: ins[%d] holds %g at "
					    "element %lld, not 0 or 1", key[k],
					    k, (double)v[i], (long long)i);
	}
	return 0;
}

/* PE transpose: out[f][p] = mv[p][f] bit-exactly, stationary = identity. */
static int exec_transpose(ls_exec *x)
{
	const ls_opnd *st = &x->si->ins[0], *mv = &x->si->ins[1];
	const ls_opnd *out = &x->si->outs[0];
	int64_t F = st->parts, P = mv->parts, Fm = mv->free;
	float *id = grow_f(&x->fa, &x->cap_a, st->count);
	int rc = read_f32(x, 0, id);
	int es = mv->esize;
	uint8_t *raw, *dst;

	if (rc)
		return rc;
	for (int64_t i = 0; i < F; i++)
		for (int64_t j = 0; j < st->free; j++) {
			float want = i == j ? 1.0f : 0.0f;
			float got = id[i * st->free + j];
			if (!(got == want))
				return fail(x, "is_transpose: the stationary "
					    "operand is not an identity matrix "
					    "(element [%lld][%lld] is %g, "
					    "expected %g)", (long long)i,
					    (long long)j, (double)got,
					    (double)want);
		}
	raw = grow_b(&x->raw, &x->cap_raw, mv->count * es);
	if ((rc = read_raw(x, mv, "ins[1]", raw)) != 0)
		return rc;
	dst = stage_buf(x);
	if (same_format(out->dtype, mv->dtype)) {
		for (int64_t p = 0; p < P; p++)
			for (int64_t f = 0; f < Fm; f++)
				memcpy(dst + (f * P + p) * es,
				       raw + (p * Fm + f) * es, (size_t)es);
	} else {
		/* widening to float32 is exact, NaN payloads included */
		for (int64_t p = 0; p < P; p++)
			for (int64_t f = 0; f < Fm; f++) {
				float v = lm_load_elem(mv->dtype,
						       raw + (p * Fm + f) * es);
				lm_store_elem(out->dtype,
					      dst + (f * P + p) * out->esize, v);
			}
	}
	return 0;
}

/* ---- Matmult ------------------------------------------------------------ */

/*
** Matmult operand i read in place: float32 or bfloat16, each partition's
** free elements contiguous, every byte written (checked per row). Else 0:
** the caller gathers a float32 copy (which reports never-written bytes,
** or reads them as NaN under can_read_uninit). *lo, *hi: its bytes.
*/
static int mm_in_place(ls_exec *x, int i, ls_mm_src *src, uintptr_t *lo,
		       uintptr_t *hi)
{
	const ls_opnd *o = &x->si->ins[i];
	int64_t ld = row_ld(o), rb = o->free * o->esize;
	ls_view v;

	if (o->dtype != LM_DT_FLOAT32 && o->dtype != LM_DT_FLOAT32R &&
	    o->dtype != LM_DT_BFLOAT16)
		return 0;
	if (!ld)
		return 0;
	ls_bind(x->mc, x->core, o, &v);
	if (!rows_written(x, v.init, o->parts, rb, ld * o->esize))
		return 0;
	src->p = v.data;
	src->ld = ld;
	src->is_bf16 = o->dtype == LM_DT_BFLOAT16;
	*lo = (uintptr_t)v.data;
	*hi = *lo + (uintptr_t)((o->parts - 1) * ld * o->esize + rb);
	return 1;
}

static int overlaps(uintptr_t lo, uintptr_t hi, uintptr_t lo2, uintptr_t hi2)
{
	return lo < hi2 && lo2 < hi;
}

/* Matmult operand i gathered as float32 into *buf (grown). */
static int mm_gather(ls_exec *x, int i, float **buf, size_t *cap,
		     ls_mm_src *src)
{
	const ls_opnd *o = &x->si->ins[i];
	int rc;
	if ((rc = read_f32(x, i, grow_f(buf, cap, o->count))) != 0)
		return rc;
	src->p = *buf;
	src->ld = o->free;
	src->is_bf16 = 0;
	return 0;
}

/* A Matmult's start bit: its accumulation_flag, or the value that flag
** took at this issue when it is an expression. */
static int acc_start(const ls_exec *x)
{
	for (int i = 0; i < x->si->n_dyn; i++)
		if (x->si->dyn[i].what == LS_DYN_ACC_FLAG)
			return (int)(x->dynv[i] & 1);
	return x->si->in->start_tensor_calc;
}

/*
** Stage the Matmult as one accumulating straight into PSUM at completion
** (ls_mm_defer): 1 if done, 0 if its accumulator is not rows of N floats
** all written (unless it starts), or an operand read in place overlaps it
** (then the caller stages it the plain way), or an error.
*/
static void defer(ls_exec *x, ls_pending *p);

static int mm_defer(ls_exec *x)
{
	const ls_opnd *st = &x->si->ins[0], *mv = &x->si->ins[1];
	const ls_opnd *out = &x->si->outs[0];
	const int K = (int)st->parts, M = (int)st->free, N = (int)mv->free;
	const int is_start = acc_start(x);
	ls_pending *p = x->pend;
	ls_mm_defer *d = &p->mm;
	int64_t ldc = row_ld(out);
	int in_st, in_mv, rc;
	uintptr_t lo[3], hi[3];
	ls_view v;

	if (ldc < N || out->parts != M || out->free != N ||
	    out->esize != (int)sizeof(float))
		return 0;
	ls_bind(x->mc, x->core, out, &v);
	lo[0] = (uintptr_t)v.data;
	hi[0] = lo[0] + (uintptr_t)(((int64_t)(M - 1) * ldc + N) * 4);
	if (!is_start && !rows_written(x, v.init, M, (int64_t)N * 4, ldc * 4))
		return 0;
	in_st = mm_in_place(x, 0, &d->st, &lo[1], &hi[1]);
	in_mv = mm_in_place(x, 1, &d->mv, &lo[1 + in_st], &hi[1 + in_st]);
	for (int r = 1; r < 1 + in_st + in_mv; r++)
		if (overlaps(lo[0], hi[0], lo[r], hi[r]))
			return 0;
	if (!in_st && (rc = mm_gather(x, 0, &d->a, &d->cap_a, &d->st)) != 0)
		return rc;
	if (!in_mv && (rc = mm_gather(x, 1, &d->b, &d->cap_b, &d->mv)) != 0)
		return rc;
	d->K = K;
	d->M = M;
	d->N = N;
	d->is_start = is_start;
	d->acc = (float *)(void *)v.data;
	d->acc_init = v.init;
	d->ldc = ldc;
	d->n_rng = 1 + in_st + in_mv;
	memcpy(d->lo, lo, sizeof lo);
	memcpy(d->hi, hi, sizeof hi);
	p->dsto = *v.o;
	p->dst = v;
	p->dst.o = &p->dsto;
	p->is_copy = 0;
	p->is_ew = 0;
	defer(x, p);
	return 1;
}

static void undefer(ls_exec *x, ls_pending *p)
{
	for (int i = 0; i < x->n_deferred; i++)
		if (x->deferred[i] == p) {
			x->deferred[i] = x->deferred[--x->n_deferred];
			break;
		}
	p->is_deferred = 0;
	p->is_copy = 0;
	p->is_ew = 0;
}

static void defer(ls_exec *x, ls_pending *p)
{
	p->active = 1;
	p->is_deferred = 1;
	lm_grow(&x->deferred, &x->cap_deferred, x->n_deferred + 1,
		sizeof *x->deferred);
	x->deferred[x->n_deferred++] = p;
}

/*
** 1 if no row of rb bytes at a + k * sa meets one at b + k * sb when the
** rows are interleaved: both strides the same (the partition stride)
** and each row of one inside the gap between two rows of the other.
*/
static int rows_apart(uintptr_t a, uintptr_t b, int64_t rb, int64_t sa,
		      int64_t sb)
{
	int64_t d;
	if (sa != sb || sa < 2 * rb)
		return 0;
	d = (int64_t)((b > a ? b - a : a - b) % (uint64_t)sa);
	return d >= rb && sa - d >= rb;
}

/*
** A TensorCopy between rows of one format, its source all written and
** apart from its destination, copies at its commit straight from the
** source (one copy instead of two through the staging buffer): exact as
** long as nothing writes the source in between, and a commit that would
** has the copy stage its rows first (copy_stage_now). 1 if deferred.
*/
static int copy_defer(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	const int64_t sl = row_ld(src), dl = row_ld(dst);
	const int64_t rb = src->free * src->esize;
	ls_pending *p = x->pend;
	uintptr_t slo, shi, dlo, dhi;
	ls_view sv;

	if (x->si->n_ins != 1 || !same_format(src->dtype, dst->dtype) ||
	    src->esize != dst->esize || !sl || !dl ||
	    src->parts != dst->parts || src->free != dst->free)
		return 0;
	ls_bind(x->mc, x->core, src, &sv);
	if (!rows_written(x, sv.init, src->parts, rb, sl * src->esize))
		return 0;
	slo = (uintptr_t)sv.data;
	shi = slo + (uintptr_t)((src->parts - 1) * sl * src->esize + rb);
	p->dsto = *dst;
	ls_bind(x->mc, x->core, &p->dsto, &p->dst);
	dlo = (uintptr_t)p->dst.data;
	dhi = dlo + (uintptr_t)((dst->parts - 1) * dl * dst->esize + rb);
	if (overlaps(slo, shi, dlo, dhi) && !rows_apart(slo, dlo, rb,
							 sl * src->esize,
							 dl * dst->esize))
		return 0;
	p->mm.lo[0] = slo;
	p->mm.hi[0] = shi;
	p->mm.n_rng = 1;
	p->cp_src = sv.data;
	p->cp_ld = sl * src->esize;
	p->is_copy = 1;
	defer(x, p);
	return 1;
}

/* A deferred copy reads its source now (nothing wrote it since its
** start) into its staging buffer: from here an ordinary staged write. */
static void copy_stage_now(ls_exec *x, ls_pending *p)
{
	const ls_opnd *o = &p->dsto;
	const int64_t rb = o->free * o->esize;
	uint8_t *b = grow_b(&p->buf, &p->cap, o->count * o->esize);
	for (int64_t r = 0; r < o->parts; r++)
		memcpy(b + r * rb, p->cp_src + r * p->cp_ld, (size_t)rb);
	undefer(x, p);
}

/* Complete a deferred copy: the rows from the source, marked written. */
static void copy_finish(ls_exec *x, ls_pending *p)
{
	const ls_opnd *o = &p->dsto;
	const int64_t rb = o->free * o->esize, ld = row_ld(o) * o->esize;
	const int is_known = known_written(x, p->dst.init, o->parts, rb, ld);
	for (int64_t r = 0; r < o->parts; r++) {
		memcpy(p->dst.data + r * ld, p->cp_src + r * p->cp_ld,
		       (size_t)rb);
		if (!is_known)
			memset(p->dst.init + r * ld, 1, (size_t)rb);
	}
	if (!is_known)
		remember_written(x, p->dst.init, o->parts, rb, ld);
	undefer(x, p);
}

/*
** A float32 TensorTensor / TensorScalar whose sources are read in place
** (a, and b unless NULL; rows of L floats, lda / ldb apart) and whose
** destination is float32 rows of L, each apart from every source row or
** the very same row: computed at its commit straight into the
** destination (no staging buffer), exact while nothing writes a source
** in between (settle stages it first: ew_stage_now). 1 if deferred.
*/
static int ew_defer(ls_exec *x, const float *a, int64_t lda, const float *b,
		    int64_t ldb, int64_t L)
{
	const ls_opnd *dst = &x->si->outs[0];
	const int64_t dl = row_ld(dst), rb = L * 4;
	ls_pending *p = x->pend;
	const float *src[2] = { a, b };
	const int64_t sld[2] = { lda, ldb };
	uintptr_t dlo, dhi;
	int n_src = b ? 2 : 1;

	if ((dst->dtype != LM_DT_FLOAT32 && dst->dtype != LM_DT_FLOAT32R) ||
	    !dl || dst->free != L || dst->parts * L != dst->count)
		return 0;
	p->dsto = *dst;
	ls_bind(x->mc, x->core, &p->dsto, &p->dst);
	if ((uintptr_t)p->dst.data % sizeof(float) != 0)
		return 0;
	dlo = (uintptr_t)p->dst.data;
	dhi = dlo + (uintptr_t)(((dst->parts - 1) * dl + L) * 4);
	for (int i = 0; i < n_src; i++) {
		uintptr_t lo = (uintptr_t)src[i];
		uintptr_t hi = lo + (uintptr_t)(((dst->parts - 1) * sld[i] + L) *
						4);
		if (overlaps(lo, hi, dlo, dhi) && !(lo == dlo &&
		    sld[i] == dl) && !rows_apart(lo, dlo, rb, sld[i] * 4,
						 dl * 4))
			return 0;
		p->mm.lo[i] = lo;
		p->mm.hi[i] = hi;
	}
	p->mm.n_rng = n_src;
	p->ew_in = x->si->in;
	p->ew_a = a;
	p->ew_b = b;
	p->ew_lda = lda;
	p->ew_ldb = ldb;
	p->ew_rows = dst->parts;
	p->ew_L = L;
	p->is_ew = 1;
	defer(x, p);
	return 1;
}

/* The rows of deferred p into out, rows ldo floats apart. */
static void ew_compute(const ls_pending *p, float *out, int64_t ldo)
{
	if (p->ew_b)
		tt_rows(p->ew_in->alu, p->ew_a, p->ew_lda, p->ew_b, p->ew_ldb,
			p->ew_rows, p->ew_L, out, ldo);
	else
		ts_rows(p->ew_in, p->ew_a, p->ew_lda, p->ew_rows, p->ew_L, out,
			ldo);
}

/* A deferred op computes now (nothing wrote its sources since its
** start) into its staging buffer: from here an ordinary staged write. */
static void ew_stage_now(ls_exec *x, ls_pending *p)
{
	uint8_t *b = grow_b(&p->buf, &p->cap, p->ew_rows * p->ew_L * 4);
	ew_compute(p, (float *)(void *)b, p->ew_L);
	undefer(x, p);
}

/* Complete a deferred op: its rows into the destination, marked
** written. */
static void ew_finish(ls_exec *x, ls_pending *p)
{
	const ls_opnd *o = &p->dsto;
	const int64_t rb = p->ew_L * 4, ld = row_ld(o) * 4;
	ew_compute(p, (float *)(void *)p->dst.data, ld / 4);
	if (!known_written(x, p->dst.init, o->parts, rb, ld)) {
		for (int64_t r = 0; r < o->parts; r++)
			memset(p->dst.init + r * ld, 1, (size_t)rb);
		remember_written(x, p->dst.init, o->parts, rb, ld);
	}
	undefer(x, p);
}

/*
** Compute a deferred Matmult now, from memory as it still is (nothing
** wrote its ranges since its start), into its staging buffer: from here
** it is an ordinary staged write.
*/
static void mm_stage_now(ls_exec *x, ls_pending *p)
{
	const ls_mm_defer *d = &p->mm;
	size_t row = (size_t)d->N * sizeof(float);
	float *c = (float *)(void *)grow_b(&p->buf, &p->cap,
					   (int64_t)d->M * d->N * 4);
	for (int m = 0; m < d->M; m++) {
		if (d->is_start)
			memset(c + (size_t)m * d->N, 0, row);
		else
			memcpy(c + (size_t)m * d->N, d->acc + m * d->ldc, row);
	}
	ls_mm_kernel_ld(d->K, d->M, d->N, &d->st, &d->mv, c, d->N);
	undefer(x, p);
}

/* Complete a deferred Matmult: accumulate in PSUM, mark it written. */
static void mm_finish(ls_exec *x, ls_pending *p)
{
	const ls_mm_defer *d = &p->mm;
	size_t row = (size_t)d->N * sizeof(float);
	if (d->is_start)
		for (int m = 0; m < d->M; m++)
			memset(d->acc + m * d->ldc, 0, row);
	ls_mm_kernel_ld(d->K, d->M, d->N, &d->st, &d->mv, d->acc, d->ldc);
	if (d->is_start && !known_written(x, d->acc_init, d->M,
					  (int64_t)row, d->ldc * 4)) {
		for (int m = 0; m < d->M; m++)
			memset(d->acc_init + m * d->ldc * 4, 1, row);
		remember_written(x, d->acc_init, d->M, (int64_t)row,
				 d->ldc * 4);
	}
	undefer(x, p);
}

static int is_int_dtype(lm_dtype t);

/* Matmult: acc = start ? 0 : dst; acc = fmaf(st[k][m], mv[k][n], acc). */
static int exec_matmult(ls_exec *x)
{
	const ls_opnd *st = &x->si->ins[0], *mv = &x->si->ins[1];
	const ls_opnd *out = &x->si->outs[0];
	int K = (int)st->parts, M = (int)st->free, N = (int)mv->free;
	ls_mm_src sa, sb;
	uintptr_t lo, hi;
	float *c;
	int rc;

	if ((rc = check_onezero(x)) != 0)
		return rc;
	if (x->si->in->is_transpose)
		return exec_transpose(x);
	/* the PE array takes float data and uint8 (read as its value) */
	for (int k = 0; k < 2; k++)
		if (is_int_dtype(x->si->ins[k].dtype) &&
		    x->si->ins[k].dtype != LM_DT_UINT8)
			return fail(x, "ins[%d] %s: integer data other than "
				    "uint8 is not modelled for the PE array", k,
				    lm_dtype_name(x->si->ins[k].dtype));
	if ((rc = mm_defer(x)) != 0)
		return rc < 0 ? rc : 0;
	if (!mm_in_place(x, 0, &sa, &lo, &hi) &&
	    (rc = mm_gather(x, 0, &x->fa, &x->cap_a, &sa)) != 0)
		return rc;
	if (!mm_in_place(x, 1, &sb, &lo, &hi) &&
	    (rc = mm_gather(x, 1, &x->fb, &x->cap_b, &sb)) != 0)
		return rc;
	c = (float *)(void *)stage_buf(x); /* dst is float32 (verified) */
	if (acc_start(x)) {
		memset(c, 0, (size_t)M * (size_t)N * sizeof(float));
	} else {
		ls_view v;
		const uint8_t *bad;
		ls_bind(x->mc, x->core, out, &v);
		bad = ls_gather_f32(&v, c, can_read_uninit(x));
		if (bad && uninit_kept(x, "outs[0] (accumulator)", out, bad))
			ls_gather_f32(&v, c, 1);
		else if (bad)
			return uninit_error(x, "outs[0] (accumulator)", out, bad);
	}
	ls_mm_kernel_src(K, M, N, &sa, &sb, c);
	return 0;
}

static int acc_outs(ls_exec *x, int cmd);
static int acc_finish(ls_exec *x, int cmd, const float *y, int64_t P,
		      int64_t fr);

/* One row of Activation: out[j] = f(s[j] * scale + b), the steps of
** exec_activation's element loop. */
static void act_row(lm_actfunc f, const float *s, float scale, float b,
		    float alpha, float *out, int64_t n)
{
	if (f == LM_ACT_EXP) {
		for (int64_t j = 0; j < n; j++) {
			float v = s[j] * scale;
			v = v + b;
			out[j] = expf(v);
		}
		return;
	}
	for (int64_t j = 0; j < n; j++) {
		float v = s[j] * scale;
		v = v + b;
		out[j] = ls_act_apply(f, v, alpha);
	}
}

/*
** Activation: dst = func(src * scale + bias[p]), the product rounded to
** float32 before the sum (two operations, not a fused multiply-add).
*/
static int exec_activation(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const ls_opnd *src = &x->si->ins[0];
	float scale = in->has_scale ? (float)in->scale : 1.0f;
	float alpha = in->has_alpha ? (float)in->alpha : 0.0f;
	int64_t n = src->count, fr = src->free > 0 ? src->free : 1;
	float *s, *bias;
	int rc;

	if (!ls_act_supported(in->act_func))
		return fail(x, "activation function '%s' is not supported",
			    lm_actfunc_name(in->act_func));
	if ((rc = acc_outs(x, in->eng_acc)) != 0)
		return rc;
	bias = grow_f(&x->fb, &x->cap_b, x->si->ins[1].count);
	if (n > 0 && src->free > 0 && n % src->free == 0 &&
	    x->si->outs[0].count == n) {
		/* row by row, a float32 source read in place; Exp calls
		** expf as ls_act_apply does */
		const float *ps;
		int64_t lds;
		float *o;
		if ((rc = in_rows(x, 0, fr, &x->fa, &x->cap_a, &ps, &lds)) ||
		    (rc = read_f32(x, 1, bias)) != 0)
			return rc;
		o = out_f32(x);
		for (int64_t r = 0; r < n / fr; r++)
			act_row(in->act_func, ps + r * lds, scale, bias[r],
				alpha, o + r * fr, fr);
		return acc_finish(x, in->eng_acc, o, src->parts, fr);
	}
	s = grow_f(&x->fa, &x->cap_a, n);
	if ((rc = read_f32(x, 0, s)) != 0 || (rc = read_f32(x, 1, bias)) != 0)
		return rc;
	for (int64_t i = 0; i < n; i++) {
		float v = s[i] * scale;
		v = v + bias[i / fr];
		s[i] = ls_act_apply(in->act_func, v, alpha);
	}
	return acc_finish(x, in->eng_acc, s, src->parts, fr);
}

/*
** The outputs of an instruction with an accumulator command: outs[0],
** and outs[1] (the registers read out) only with a command other than
** Idle.
*/
static int acc_outs(ls_exec *x, int cmd)
{
	if (x->si->n_outs < 1 || x->si->n_outs > 2)
		return ls_xfail(x, LM_EINPUT, "takes outs [dst] or [dst, "
				"accumulator], got %d", x->si->n_outs);
	if (x->si->n_outs == 2 && cmd == LS_ACC_IDLE)
		return ls_xfail(x, LM_EINPUT, "outs[1] reads the accumulator "
				"out, but the command is Idle");
	return 0;
}

/* Stage outs[0] from the float32 results y (P rows of fr), run the
** accumulator command on them, stage outs[1] from the registers. */
static int acc_finish(ls_exec *x, int cmd, const float *y, int64_t P,
		      int64_t fr)
{
	int rc;
	if (x->si->outs[0].count != P * fr)
		return ls_xfail(x, LM_EINPUT, "outs[0] must have the %lld "
				"elements of ins[0], got %lld",
				(long long)(P * fr),
				(long long)x->si->outs[0].count);
	if ((rc = ls_acc_update(x, cmd, y, P, fr)) != 0)
		return rc;
	out_done(x, y);
	if (x->si->n_outs == 2)
		return ls_acc_readout(x, 1, P);
	return 0;
}

/* ---- the ALU on integer data (intalu.c) ---------------------------------- */

/* 1 if ins[0 .. n_in-1] and outs[0] all have integer dtypes. */
static int all_int(const ls_exec *x, int n_in)
{
	for (int k = 0; k < n_in; k++)
		if (!is_int_dtype(x->si->ins[k].dtype))
			return 0;
	return is_int_dtype(x->si->outs[0].dtype);
}

/* Input i's elements widened to int64 into a new array (*v, n). */
static int int_read(ls_exec *x, int i, int64_t **v)
{
	const ls_opnd *o = &x->si->ins[i];
	uint8_t *raw = grow_b(&x->raw, &x->cap_raw, o->count * o->esize);
	char label[32];
	int rc;
	snprintf(label, sizeof label, "ins[%d]", i);
	*v = lm_xmalloc((size_t)o->count * sizeof **v + 8);
	if ((rc = read_raw(x, o, label, raw)) != 0)
		return rc;
	for (int64_t e = 0; e < o->count; e++)
		(*v)[e] = ls_int_load(o->dtype, raw + e * o->esize);
	return 0;
}

/*
** Exponential: dst = expf(src - max[p]), the difference one float32
** subtraction, max the element of ins[1] ([P, 1]) of the element's
** partition, or ins[1]'s imm_value rounded to float32 (no subtraction
** without ins[1]); then reduce_cmd on the results.
*/
static int exec_exponential(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0];
	int64_t n = src->count, P = src->parts;
	int64_t fr = src->free > 0 ? src->free : 1;
	int cmd = x->si->in->eng_acc;
	float *s, *mx = NULL;
	int rc;

	if (x->si->n_ins < 1 || x->si->n_ins > 2)
		return ls_xfail(x, LM_EINPUT, "takes ins [src] or [src, max], "
				"got %d", x->si->n_ins);
	if ((rc = acc_outs(x, cmd)) != 0)
		return rc;
	for (int k = 0; k < x->si->n_ins; k++)
		if (is_int_dtype(x->si->ins[k].dtype))
			return ls_xfail(x, LM_EINPUT, "integer data (ins[%d] "
					"%s) is not modelled", k, lm_dtype_name(
					x->si->ins[k].dtype));
	if (is_int_dtype(x->si->outs[0].dtype))
		return ls_xfail(x, LM_EINPUT, "integer data (outs[0] %s) is "
				"not modelled", lm_dtype_name(
				x->si->outs[0].dtype));
	if (x->si->n_ins == 2 && x->si->ins[1].space == LS_SP_NONE) {
		/* an imm_value: the same max for every partition */
		float c = (float)x->si->in->ins[1].imm;
		mx = grow_f(&x->fb, &x->cap_b, P);
		for (int64_t p = 0; p < P; p++)
			mx[p] = c;
	} else if (x->si->n_ins == 2) {
		const ls_opnd *o = &x->si->ins[1];
		if (o->parts != P || o->count != P)
			return ls_xfail(x, LM_EINPUT, "ins[1] must be [%lld, "
					"1]: one max per partition of ins[0] "
					"(got %lld elements over %lld "
					"partitions)", (long long)P,
					(long long)o->count,
					(long long)o->parts);
		mx = grow_f(&x->fb, &x->cap_b, P);
		if ((rc = read_f32(x, 1, mx)) != 0)
			return rc;
	}
	if (n > 0 && n % fr == 0 && x->si->outs[0].count == n) {
		/* row by row, a float32 source read in place */
		const float *ps;
		int64_t lds;
		float *o;
		if ((rc = in_rows(x, 0, fr, &x->fa, &x->cap_a, &ps, &lds)) != 0)
			return rc;
		o = out_f32(x);
		for (int64_t r = 0; r < n / fr; r++) {
			const float *srow = ps + r * lds;
			float *orow = o + r * fr;
			if (mx) {
				const float m = mx[r];
				for (int64_t j = 0; j < fr; j++)
					orow[j] = expf(srow[j] - m);
			} else {
				for (int64_t j = 0; j < fr; j++)
					orow[j] = expf(srow[j]);
			}
		}
		return acc_finish(x, cmd, o, P, fr);
	}
	s = grow_f(&x->fa, &x->cap_a, n);
	if ((rc = read_f32(x, 0, s)) != 0)
		return rc;
	for (int64_t i = 0; i < n; i++) {
		float d = mx ? s[i] - mx[i / fr] : s[i];
		s[i] = expf(d);
	}
	return acc_finish(x, cmd, s, P, fr);
}

/*
** out[i] = a(i) op b(i), a(i) = a ? a[i] : ca (likewise b), of dtype adt,
** fitted into outs[0]'s dtype; uns: unsigned 64-bit.
*/
static int int_step(ls_exec *x, lm_aluop op, int uns, lm_dtype adt,
		    lm_dtype bdt, const int64_t *a, int64_t ca,
		    const int64_t *b, int64_t cb, int64_t *out, int64_t n,
		    int64_t base)
{
	lm_dtype od = x->si->outs[0].dtype;
	int cls = ls_int_alu_class(op);
	/* an unsigned 64-bit step reads a negative value as 2^64 + it */
	int by_value = uns && cls != LS_IA_BITS && op != LM_ALU_LOGICAL_AND &&
		       op != LM_ALU_LOGICAL_OR && op != LM_ALU_LOGICAL_XOR;
	for (int64_t i = 0; i < n; i++) {
		int64_t r, av = a ? a[i] : ca, bv = b ? b[i] : cb;
		if (by_value && ((adt != LM_DT_UINT64 && av < 0) ||
				 (bdt != LM_DT_UINT64 && bv < 0)))
			return fail(x, "integer %s of %lld and a uint64 operand "
				    "at element %lld is not modelled (a "
				    "negative value with uint64)",
				    lm_aluop_name(op), (long long)(adt !=
				    LM_DT_UINT64 && av < 0 ? av : bv),
				    (long long)(base + i));
		if (ls_int_alu(op, uns, adt, av, bv, &r))
			return fail(x, "integer %s by zero at element %lld",
				    lm_aluop_name(op), (long long)(base + i));
		out[i] = ls_int_fit(od, cls, uns, r);
	}
	return 0;
}

/* Stage int64 values v into outs[0] (an integer dtype). */
static void int_stage(ls_exec *x, const int64_t *v)
{
	const ls_opnd *o = &x->si->outs[0];
	uint8_t *b = stage_buf(x);
	for (int64_t i = 0; i < o->count; i++)
		ls_int_store(o->dtype, b + i * o->esize, v[i]);
}

/* An integer constant of an op: 0, or an error naming it. */
static int int_const(ls_exec *x, const char *what, int has, double c,
		     int64_t *v)
{
	*v = 0;
	if (!has)
		return 0;
	if (!(c >= -9223372036854775808.0 && c < 9223372036854775808.0) ||
	    c != (double)(int64_t)c)
		return fail(x, "%s %.17g is not a 64-bit integer: an op on "
			    "integer data takes integer constants", what, c);
	*v = (int64_t)c;
	return 0;
}

/* Integer to integer (a DMA or copy): the exact value, saturated. */
static int int_convert(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0];
	int64_t *v = NULL;
	int rc;
	if (src->count != x->si->outs[0].count)
		return fail(x, "ins[0] has %lld elements, outs[0] %lld",
			    (long long)src->count,
			    (long long)x->si->outs[0].count);
	if ((rc = int_read(x, 0, &v)) == 0) {
		for (int64_t i = 0; i < src->count; i++)
			v[i] = ls_int_fit(x->si->outs[0].dtype, LS_IA_ARITH,
					  src->dtype == LM_DT_UINT64, v[i]);
		int_stage(x, v);
	}
	free(v);
	return rc;
}

/*
** TensorScalarPtr on integer data: per partition p, (src op0 s0[p]) op1
** s1[p], each step fitted into the output dtype (as TensorScalar). The
** shapes are checked by the caller.
*/
static int exec_int_tensorscalarptr(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const ls_opnd *src = &x->si->ins[0];
	lm_dtype od = x->si->outs[0].dtype, sdt;
	int ns = x->si->n_ins - 1, rc = 0;
	int64_t P = src->parts, fr = src->free, *v = NULL, *s[2] = {0, 0};
	lm_aluop op;

	if (in->is_scalar_tensor_tensor || in->is_tensor_tensor_scan)
		return fail(x, "%s on integer data is not modelled",
			    in->is_scalar_tensor_tensor ?
			    "is_scalar_tensor_tensor" : "is_tensor_tensor_scan");
	if (!ls_int_alu_class(in->alu0) || !ls_int_alu_class(in->alu1))
		return fail(x, "ALU op%d '%s' is not modelled on integer data",
			    ls_int_alu_class(in->alu0) ? 1 : 0, lm_aluop_name(
			    ls_int_alu_class(in->alu0) ? in->alu1 : in->alu0));
	for (int k = 0; k <= ns && rc == 0; k++)
		rc = int_read(x, k, k ? &s[k - 1] : &v);
	for (int64_t p = 0; p < P && rc == 0; p++) {
		int64_t *row = v + p * fr;
		for (int k = 0; k < ns && rc == 0; k++) {
			int rev = k ? in->reverse1 : in->reverse0;
			op = k ? in->alu1 : in->alu0;
			sdt = x->si->ins[k + 1].dtype;
			/* step 0 reads the data's dtype, step 1 the output's */
			lm_dtype ddt = k ? od : src->dtype;
			lm_dtype adt = rev ? sdt : ddt, bdt = rev ? ddt : sdt;
			int uns = adt == LM_DT_UINT64 || sdt == LM_DT_UINT64;
			rc = rev ? int_step(x, op, uns, adt, bdt, NULL,
					    s[k][p], row, 0, row, fr, p * fr)
				 : int_step(x, op, uns, adt, bdt, row, 0,
					    NULL, s[k][p], row, fr, p * fr);
		}
	}
	if (rc == 0)
		int_stage(x, v);
	free(v);
	free(s[0]);
	free(s[1]);
	return rc;
}

/*
** TensorReduce on integer data: each row folded from its first element,
** every step fitted into the output dtype (saturating), then negated
** (saturating) if asked.
*/
static int int_reduce(ls_exec *x, int64_t rows, int64_t n)
{
	const lm_inst *in = x->si->in;
	lm_dtype sdt = x->si->ins[0].dtype, od = x->si->outs[0].dtype;
	int uns = sdt == LM_DT_UINT64, rc;
	int64_t *v = NULL, acc, r;

	if ((rc = int_read(x, 0, &v)) != 0)
		goto done;
	for (int64_t i = 0; i < rows; i++) {
		const int64_t *row = v + i * n;
		acc = ls_int_fit(od, LS_IA_ARITH, uns, row[0]);
		for (int64_t j = 1; j < n; j++) {
			ls_int_alu(in->alu, uns, od, acc, row[j], &r);
			acc = ls_int_fit(od, LS_IA_ARITH, uns, r);
		}
		if (in->negate) {
			ls_int_alu(LM_ALU_SUBTRACT, uns, od, 0, acc, &r);
			acc = ls_int_fit(od, LS_IA_ARITH, uns, r);
		}
		v[i] = acc;
	}
	int_stage(x, v);
done:
	free(v);
	return rc;
}

/* TensorTensor on integer data: dst = a op b, exact. */
static int exec_int_tensortensor(ls_exec *x)
{
	lm_aluop op = x->si->in->alu;
	const ls_opnd *a = &x->si->ins[0], *b = &x->si->ins[1];
	int64_t n = x->si->outs[0].count, *va = NULL, *vb = NULL;
	int uns = a->dtype == LM_DT_UINT64 || b->dtype == LM_DT_UINT64;
	int rc;

	if (!ls_int_alu_class(op))
		return fail(x, "ALU op '%s' is not modelled on integer data",
			    lm_aluop_name(op));
	if (a->count != n || b->count != n)
		return fail(x, "ins[0], ins[1] and outs[0] must have as many "
			    "elements (%lld, %lld, %lld)", (long long)a->count,
			    (long long)b->count, (long long)n);
	if ((rc = int_read(x, 0, &va)) == 0 && (rc = int_read(x, 1, &vb)) == 0
	    && (rc = int_step(x, op, uns, a->dtype, b->dtype, va, 0, vb, 0,
			       va, n, 0)) == 0)
		int_stage(x, va);
	free(va);
	free(vb);
	return rc;
}

/* TensorScalar on integer data: (src op0 const0) op1 const1, each step
** fitted into the output dtype. */
static int exec_int_tensorscalar(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const ls_opnd *src = &x->si->ins[0];
	lm_dtype od = x->si->outs[0].dtype;
	int64_t n = x->si->outs[0].count, c0, c1, *v = NULL;
	int rc;

	if (!ls_int_alu_class(in->alu0) || !ls_int_alu_class(in->alu1))
		return fail(x, "ALU op%d '%s' is not modelled on integer data",
			    ls_int_alu_class(in->alu0) ? 1 : 0, lm_aluop_name(
			    ls_int_alu_class(in->alu0) ? in->alu1 : in->alu0));
	if (src->count != n)
		return fail(x, "outs[0] must have the %lld elements of ins[0], "
			    "got %lld", (long long)src->count, (long long)n);
	if ((rc = int_const(x, "const0", in->has_const0, in->const0, &c0)) ||
	    (rc = int_const(x, "const1", in->has_const1, in->const1, &c1)))
		return rc;
	if ((rc = int_read(x, 0, &v)) != 0)
		goto done;
	if (in->reverse0)
		rc = int_step(x, in->alu0, src->dtype == LM_DT_UINT64,
			      LM_DT_INT64, src->dtype, NULL, c0, v, 0, v, n, 0);
	else
		rc = int_step(x, in->alu0, src->dtype == LM_DT_UINT64,
			      src->dtype, LM_DT_INT64, v, 0, NULL, c0, v, n, 0);
	if (rc)
		goto done;
	if (in->reverse1)
		rc = int_step(x, in->alu1, od == LM_DT_UINT64, LM_DT_INT64,
			      od, NULL, c1, v, 0, v, n, 0);
	else
		rc = int_step(x, in->alu1, od == LM_DT_UINT64, od,
			      LM_DT_INT64, v, 0, NULL, c1, v, n, 0);
	if (rc == 0)
		int_stage(x, v);
done:
	free(v);
	return rc;
}

/* TensorTensor: dst = a op b. */
static int ew_defer(ls_exec *x, const float *a, int64_t lda, const float *b,
		    int64_t ldb, int64_t L);

static int exec_tensortensor(ls_exec *x)
{
	lm_aluop op = x->si->in->alu;
	int64_t n = x->si->outs[0].count;
	float *a = grow_f(&x->fa, &x->cap_a, n);
	float *b = grow_f(&x->fb, &x->cap_b, n);
	int rc;
	float r;

	if (all_int(x, 2))
		return exec_int_tensortensor(x);
	if (!ls_alu(op, 1.0f, 1.0f, &r))
		return fail(x, "ALU op '%s' is not supported on float data",
			    lm_aluop_name(op));
	if (n > 0 && x->si->ins[0].count == n && x->si->ins[1].count == n &&
	    x->si->ins[0].free > 0 && n % x->si->ins[0].free == 0) {
		/* row by row, float32 rows read in place */
		const int64_t L = x->si->ins[0].free;
		const float *pa, *pb;
		int64_t lda, ldb;
		float *o;
		if ((rc = in_rows(x, 0, L, &x->fa, &x->cap_a, &pa, &lda)) ||
		    (rc = in_rows(x, 1, L, &x->fb, &x->cap_b, &pb, &ldb)))
			return rc;
		if (pa != x->fa && pb != x->fb && ew_defer(x, pa, lda, pb, ldb,
							   L))
			return 0;
		o = out_f32(x);
		tt_rows(op, pa, lda, pb, ldb, n / L, L, o, L);
		out_done(x, o);
		return 0;
	}
	if ((rc = read_f32(x, 0, a)) != 0 || (rc = read_f32(x, 1, b)) != 0)
		return rc;
	alu_vv(op, a, b, a, n);
	stage_f32(x, a);
	return 0;
}

/* TensorScalar: (src op0 const0) op1 const1, each step fp32; reverse swaps. */
static int exec_tensorscalar(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	int64_t n = x->si->outs[0].count;
	float c0 = in->has_const0 ? (float)in->const0 : 0.0f;
	float c1 = in->has_const1 ? (float)in->const1 : 0.0f;
	float *a = grow_f(&x->fa, &x->cap_a, n);
	float r;
	int rc;

	if (all_int(x, 1))
		return exec_int_tensorscalar(x);
	if (!ls_alu(in->alu0, 1.0f, 1.0f, &r))
		return fail(x, "ALU op0 '%s' is not supported on float data",
			    lm_aluop_name(in->alu0));
	if (!ls_alu(in->alu1, 1.0f, 1.0f, &r))
		return fail(x, "ALU op1 '%s' is not supported on float data",
			    lm_aluop_name(in->alu1));
	if (n > 0 && x->si->ins[0].count == n && x->si->ins[0].free > 0 &&
	    n % x->si->ins[0].free == 0) {
		/* row by row (each step rounded to float32 either way), a
		** float32 source read in place */
		const int64_t L = x->si->ins[0].free;
		const float *pa;
		int64_t lda;
		float *o;
		if ((rc = in_rows(x, 0, L, &x->fa, &x->cap_a, &pa, &lda)) != 0)
			return rc;
		if (pa != x->fa && ew_defer(x, pa, lda, NULL, 0, L))
			return 0;
		o = out_f32(x);
		ts_rows(in, pa, lda, n / L, L, o, L);
		out_done(x, o);
		return 0;
	}
	if ((rc = read_f32(x, 0, a)) != 0)
		return rc;
	/* step by step over the whole tile: each step is rounded to fp32
	** either way */
	if (in->reverse0)
		alu_sv(in->alu0, c0, a, a, n);
	else
		alu_vs(in->alu0, a, c0, a, n);
	if (in->reverse1)
		alu_sv(in->alu1, c1, a, a, n);
	else
		alu_vs(in->alu1, a, c1, a, n);
	stage_f32(x, a);
	return 0;
}

/* Memset: every element = value (else constant). */
static int exec_memset(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	int64_t n = x->si->outs[0].count;
	double d = in->has_value ? in->value : in->constant;
	float v = (float)d;
	float *a;

	/* an integer value into an integer dtype: exact, saturated; past
	   2^53 the wire's number (a double) no longer names one integer */
	if (is_int_dtype(x->si->outs[0].dtype) && d == floor(d) &&
	    fabs(d) > 0x1p53)
		return ls_xfail(x, LM_EINPUT, "value %.17g is beyond 2^53: the "
				"JSON number does not hold an integer that "
				"large exactly (into %s)", d,
				lm_dtype_name(x->si->outs[0].dtype));
	if (is_int_dtype(x->si->outs[0].dtype) && d >= -0x1p63 && d < 0x1p63 &&
	    d == (double)(int64_t)d) {
		int64_t *iv = lm_xmalloc((size_t)n * sizeof *iv + 8);
		for (int64_t i = 0; i < n; i++)
			iv[i] = ls_int_fit(x->si->outs[0].dtype, LS_IA_ARITH, 0,
					   (int64_t)d);
		int_stage(x, iv);
		free(iv);
		return 0;
	}
	a = grow_f(&x->fa, &x->cap_a, n);
	for (int64_t i = 0; i < n; i++)
		a[i] = v;
	stage_f32(x, a);
	return 0;
}

/*
** v[i] = base + channel_multiplier * p + sum(step_k * idx_k) in int32
** (wrapping), p the partition within the output, idx the row-major
** position of the element in `pattern`.
*/
static void iota_values(const lm_inst *in, int64_t parts, int64_t fr,
			int32_t *v)
{
	int64_t idx[64] = {0};
	int np = in->n_pattern > 64 ? 64 : in->n_pattern;
	for (int64_t p = 0; p < parts; p++) {
		uint32_t pv = (uint32_t)in->base +
			      (uint32_t)in->channel_multiplier * (uint32_t)p;
		memset(idx, 0, sizeof idx);
		for (int64_t j = 0; j < fr; j++) {
			uint32_t s = pv;
			for (int k = 0; k < np; k++)
				s += (uint32_t)in->pattern[k].step *
				     (uint32_t)idx[k];
			v[p * fr + j] = (int32_t)s;
			for (int k = np - 1; k >= 0; k--) {
				if (++idx[k] < in->pattern[k].num)
					break;
				idx[k] = 0;
			}
		}
	}
}

static int is_int_dtype(lm_dtype t)
{
	return t >= LM_DT_INT8 && t <= LM_DT_UINT64;
}

/* Store int32 values into the staging buffer of outs[0]. */
static void stage_i32(ls_exec *x, const int32_t *v, float *tmp)
{
	const ls_opnd *o = &x->si->outs[0];
	if (is_int_dtype(o->dtype)) {
		uint8_t *b = stage_buf(x);
		for (int64_t i = 0; i < o->count; i++) {
			int64_t w = v[i];
			memcpy(b + i * o->esize, &w, (size_t)o->esize); /* LE */
		}
		return;
	}
	for (int64_t i = 0; i < o->count; i++)
		tmp[i] = (float)v[i];
	stage_f32(x, tmp);
}

/* Iota: the int32 pattern value, converted to the dst dtype. */
static int exec_iota(ls_exec *x)
{
	const ls_opnd *o = &x->si->outs[0];
	int32_t *v = lm_xmalloc((size_t)o->count * sizeof *v + 4);
	float *tmp = grow_f(&x->fa, &x->cap_a, o->count);
	iota_values(x->si->in, o->parts, o->free, v);
	stage_i32(x, v, tmp);
	free(v);
	return 0;
}

/* Does compare_op(v, 0) hold? */
static int compare0(lm_aluop op, int32_t v, int *ok)
{
	*ok = 1;
	switch (op) {
	case LM_ALU_IS_EQUAL: return v == 0;
	case LM_ALU_NOT_EQUAL: return v != 0;
	case LM_ALU_IS_GE: return v >= 0;
	case LM_ALU_IS_GT: return v > 0;
	case LM_ALU_IS_LE: return v <= 0;
	case LM_ALU_IS_LT: return v < 0;
	default: *ok = 0; return 0;
	}
}

/* TensorScalarAffineSelect: dst = compare_op(v, 0) ? src : fill_value. */
static int exec_affine_select(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const ls_opnd *o = &x->si->outs[0];
	float fill = (float)in->fill_value;
	float *a = grow_f(&x->fa, &x->cap_a, o->count);
	int32_t *v;
	int ok, rc;

	compare0(in->alu, 0, &ok);
	if (!ok)
		return fail(x, "compare_op '%s' is not a comparison",
			    lm_aluop_name(in->alu));
	if ((rc = read_f32(x, 0, a)) != 0)
		return rc;
	v = lm_xmalloc((size_t)o->count * sizeof *v + 4);
	iota_values(in, o->parts, o->free, v);
	for (int64_t i = 0; i < o->count; i++)
		if (!compare0(in->alu, v[i], &ok))
			a[i] = fill;
	free(v);
	stage_f32(x, a);
	return 0;
}

/*
** The two tensor datapaths of TensorScalarPtr, float data only:
** is_scalar_tensor_tensor: out = (data op0 s0[p]) op1 data1, elementwise,
** s0 the element of ins[1] ([P, 1]) of the element's partition p, data1
** (ins[2]) shaped as ins[0];
** is_tensor_tensor_scan: per partition r = initial[p] (ins[2], [P, 1]),
** then along the partition's elements in order r = (data0[i] op0 r) op1
** data1[i], out[i] = r, r carried in float32.
** reverseN swaps step N's operands; each step is rounded to float32, the
** result once to the output dtype.
*/
static int exec_tsp_tensor(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int scan = in->is_tensor_tensor_scan;
	const char *form = scan ? "is_tensor_tensor_scan"
				: "is_scalar_tensor_tensor";
	/* the input shaped as ins[0] and the one with a value per partition */
	int kt = scan ? 1 : 2, kp = scan ? 2 : 1;
	int64_t n = src->count, P = src->parts, fr = src->free;
	float *a, *t, *s, r;
	int rc;

	if (x->si->n_ins != 3)
		return fail(x, "with %s true needs 3 inputs, got %d", form,
			    x->si->n_ins);
	for (int k = 0; k < 3; k++)
		if (is_int_dtype(x->si->ins[k].dtype) || is_int_dtype(dst->dtype))
			return fail(x, "with %s true integer data (ins[%d] %s, "
				    "outs[0] %s) is not modelled", form, k,
				    lm_dtype_name(x->si->ins[k].dtype),
				    lm_dtype_name(dst->dtype));
	if (!ls_alu(in->alu0, 1.0f, 1.0f, &r) ||
	    !ls_alu(in->alu1, 1.0f, 1.0f, &r))
		return fail(x, "ALU op '%s' is not supported on float data",
			    lm_aluop_name(ls_alu(in->alu0, 1.0f, 1.0f, &r) ?
					  in->alu1 : in->alu0));
	if (dst->count != n || dst->parts != P)
		return fail(x, "outs[0] must have the shape of ins[0] (%lld "
			    "elements over %lld partitions), got %lld over %lld",
			    (long long)n, (long long)P, (long long)dst->count,
			    (long long)dst->parts);
	if (x->si->ins[kt].count != n || x->si->ins[kt].parts != P)
		return fail(x, "with %s true ins[%d] must have the shape of "
			    "ins[0] (%lld elements over %lld partitions), got "
			    "%lld over %lld", form, kt, (long long)n,
			    (long long)P, (long long)x->si->ins[kt].count,
			    (long long)x->si->ins[kt].parts);
	if (x->si->ins[kp].count != P || x->si->ins[kp].parts != P)
		return fail(x, "ins[%d] must be [%lld, 1]: one %s per "
			    "partition of ins[0] (got %lld elements over %lld "
			    "partitions)", kp, (long long)P,
			    scan ? "initial value" : "scalar",
			    (long long)x->si->ins[kp].count,
			    (long long)x->si->ins[kp].parts);
	a = grow_f(&x->fa, &x->cap_a, n);
	t = grow_f(&x->fb, &x->cap_b, n);
	s = grow_f(&x->fc, &x->cap_c, P);
	if ((rc = read_f32(x, 0, a)) != 0 || (rc = read_f32(x, kt, t)) != 0 ||
	    (rc = read_f32(x, kp, s)) != 0)
		return rc;
	for (int64_t p = 0; p < P && !scan; p++) {
		float *row = a + p * fr, *row1 = t + p * fr;
		if (in->reverse0)
			alu_sv(in->alu0, s[p], row, row, fr);
		else
			alu_vs(in->alu0, row, s[p], row, fr);
		if (in->reverse1)
			alu_vv(in->alu1, row1, row, row, fr);
		else
			alu_vv(in->alu1, row, row1, row, fr);
	}
	for (int64_t p = 0; p < P && scan; p++) {
		float *row = a + p * fr, *row1 = t + p * fr, v;
		r = s[p];
		for (int64_t i = 0; i < fr; i++) {
			if (in->reverse0)
				ls_alu(in->alu0, r, row[i], &v);
			else
				ls_alu(in->alu0, row[i], r, &v);
			if (in->reverse1)
				ls_alu(in->alu1, row1[i], v, &r);
			else
				ls_alu(in->alu1, v, row1[i], &r);
			row[i] = r;
		}
	}
	stage_f32(x, a);
	return 0;
}

/*
** TensorScalarPtr: out = (src op0 s0[p]) op1 s1[p], each step in float32,
** s0 / s1 the element of ins[1] / ins[2] ([P, 1]) of the element's
** partition p; reverseN swaps step N's operands; without ins[2], op1 must
** be bypass. Float data only.
*/
static int exec_tensorscalarptr(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int ns = x->si->n_ins - 1;
	int64_t n = src->count, P = src->parts, fr = src->free;
	float *s[2], *a, r;
	int rc;

	if (in->is_scalar_tensor_tensor || in->is_tensor_tensor_scan)
		return exec_tsp_tensor(x);
	if (ns < 1 || ns > 2)
		return fail(x, "needs 2 or 3 inputs (the data and one scalar "
			    "per step), got %d", x->si->n_ins);
	if (!all_int(x, x->si->n_ins) && (!ls_alu(in->alu0, 1.0f, 1.0f, &r) ||
					  !ls_alu(in->alu1, 1.0f, 1.0f, &r)))
		return fail(x, "ALU op '%s' is not supported on float data",
			    lm_aluop_name(ls_alu(in->alu0, 1.0f, 1.0f, &r) ?
					  in->alu1 : in->alu0));
	if (ns == 1 && in->alu1 != LM_ALU_BYPASS)
		return fail(x, "op1 '%s' has no scalar: ins[2] is missing",
			    lm_aluop_name(in->alu1));
	if (dst->count != n || dst->parts != P)
		return fail(x, "outs[0] must have the shape of ins[0] (%lld "
			    "elements over %lld partitions), got %lld over %lld",
			    (long long)n, (long long)P, (long long)dst->count,
			    (long long)dst->parts);
	if (all_int(x, x->si->n_ins)) {
		for (int k = 1; k <= ns; k++)
			if (x->si->ins[k].parts != P || x->si->ins[k].count != P)
				return fail(x, "ins[%d] must be [%lld, 1]: one "
					    "scalar per partition of ins[0] (got "
					    "%lld elements over %lld partitions)",
					    k, (long long)P, (long long)
					    x->si->ins[k].count, (long long)
					    x->si->ins[k].parts);
		return exec_int_tensorscalarptr(x);
	}
	for (int k = 0; k < x->si->n_ins; k++)
		if (is_int_dtype(x->si->ins[k].dtype) || is_int_dtype(dst->dtype))
			return fail(x, "integer data (ins[%d] %s, outs[0] %s) is "
				    "not modelled", k, lm_dtype_name(
				    x->si->ins[k].dtype), lm_dtype_name(
				    dst->dtype));
	for (int k = 1; k <= ns; k++) {
		const ls_opnd *o = &x->si->ins[k];
		if (o->parts != P || o->count != P)
			return fail(x, "ins[%d] must be [%lld, 1]: one scalar "
				    "per partition of ins[0] (got %lld elements "
				    "over %lld partitions)", k, (long long)P,
				    (long long)o->count, (long long)o->parts);
		s[k - 1] = k == 1 ? grow_f(&x->fb, &x->cap_b, P)
				  : grow_f(&x->fc, &x->cap_c, P);
		if ((rc = read_f32(x, k, s[k - 1])) != 0)
			return rc;
	}
	a = grow_f(&x->fa, &x->cap_a, n);
	if ((rc = read_f32(x, 0, a)) != 0)
		return rc;
	/* step by step over each partition's row: each step is rounded to
	** float32 either way */
	for (int64_t p = 0; p < P; p++) {
		float *row = a + p * fr;
		if (in->reverse0)
			alu_sv(in->alu0, s[0][p], row, row, fr);
		else
			alu_vs(in->alu0, row, s[0][p], row, fr);
		if (ns < 2)
			continue; /* op1 is bypass */
		if (in->reverse1)
			alu_sv(in->alu1, s[1][p], row, row, fr);
		else
			alu_vs(in->alu1, row, s[1][p], row, fr);
	}
	stage_f32(x, a);
	return 0;
}

/* Reciprocal: dst = 1 / src, one float32 division per element. */
static int exec_reciprocal(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int64_t n = src->count;
	float *a;
	int rc;

	if (is_int_dtype(src->dtype) || is_int_dtype(dst->dtype))
		return fail(x, "integer data (%s to %s) is not modelled",
			    lm_dtype_name(src->dtype), lm_dtype_name(dst->dtype));
	if (dst->count != n)
		return fail(x, "outs[0] must have the %lld elements of ins[0], "
			    "got %lld", (long long)n, (long long)dst->count);
	a = grow_f(&x->fa, &x->cap_a, n);
	if ((rc = read_f32(x, 0, a)) != 0)
		return rc;
	for (int64_t i = 0; i < n; i++)
		a[i] = 1.0f / a[i];
	stage_f32(x, a);
	return 0;
}

/*
** StreamTranspose: each aligned 32 x 32 block of ins[0] transposed in
** place, a raw element copy: src[p][e] goes to partition (p & ~31) |
** (e & 31), element (p & 31) | (e & ~31) of outs[0]. outs[0] must hold
** exactly the positions that reaches, and the dtypes must agree.
*/
static int exec_streamtranspose(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int64_t P = src->parts, E = src->free, op, oe;
	int es = src->esize, rc;
	uint8_t *raw, *out;

	if (src->dtype != dst->dtype)
		return fail(x, "a stream transpose does not convert dtypes "
			    "(%s to %s)", lm_dtype_name(src->dtype),
			    lm_dtype_name(dst->dtype));
	/* the largest partition and element reached: the high bits of one
	** index with the low five of the other */
	op = ((P - 1) & ~(int64_t)31) | (E > 32 ? 31 : E - 1);
	oe = (P > 32 ? 31 : P - 1) | ((E - 1) & ~(int64_t)31);
	if (dst->parts != op + 1 || dst->free != oe + 1 ||
	    dst->count != P * E)
		return fail(x, "outs[0] must be [%lld, %lld], the 32 x 32 block "
			    "transpose of ins[0] [%lld, %lld] (got [%lld, %lld])",
			    (long long)(op + 1), (long long)(oe + 1),
			    (long long)P, (long long)E, (long long)dst->parts,
			    (long long)dst->free);
	raw = grow_b(&x->raw, &x->cap_raw, src->count * es);
	if ((rc = read_raw(x, src, "ins[0]", raw)) != 0)
		return rc;
	out = stage_buf(x);
	for (int64_t p = 0; p < P; p++)
		for (int64_t e = 0; e < E; e++) {
			int64_t a = (p & ~(int64_t)31) | (e & 31);
			int64_t b = (p & 31) | (e & ~(int64_t)31);
			memcpy(out + (a * dst->free + b) * es,
			       raw + (p * E + e) * es, (size_t)es);
		}
	return 0;
}

/* The free dimensions an AxisListType reduces (0: not a free-axis list). */
static int reduce_dims(int axis)
{
	switch (axis) {
	case 0: return 1; /* X */
	case 1: return 2; /* XY */
	case 2: return 3; /* XYZ */
	default: return 0;
	}
}

/*
** TensorReduce: the innermost 1, 2 or 3 dimensions of ins[0]'s access
** pattern (axis X, XY, XYZ) folded into one element of outs[0]
** (ls_reduce_rows), float data only.
*/
static int exec_tensorreduce(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const lm_arg *a = &in->ins[0];
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int nd = reduce_dims(in->reduce_axis);
	int64_t n = 1, rows, ld;
	const float *f;
	float *o;
	int rc;

	if (!nd)
		return fail(x, "axis '%s' is not modelled (X, XY and XYZ are)",
			    lm_enum_name(LM_ET_AxisListType, in->reduce_axis));
	if (!ls_reduce_supported(in->alu))
		return fail(x, "op '%s' is not modelled for TensorReduce",
			    lm_aluop_name(in->alu));
	if (is_int_dtype(src->dtype) != is_int_dtype(dst->dtype))
		return fail(x, "integer data (%s to %s) is not modelled",
			    lm_dtype_name(src->dtype), lm_dtype_name(dst->dtype));
	if (is_int_dtype(src->dtype) && in->alu == LM_ALU_AVERAGE)
		return fail(x, "op 'average' is not modelled on integer data");
	if (a->n_ap - 1 < nd)
		return fail(x, "axis '%s' reduces %d free dimension%s; ins[0] "
			    "has %d", lm_enum_name(LM_ET_AxisListType,
			    in->reduce_axis), nd, nd == 1 ? "" : "s",
			    a->n_ap - 1);
	for (int k = a->n_ap - nd; k < a->n_ap; k++)
		n *= a->ap[k].num;
	rows = n > 0 ? src->count / n : 0;
	if (n < 1 || dst->count != rows || dst->parts != src->parts)
		return fail(x, "outs[0] must hold the %lld reduced elements "
			    "over %lld partitions (ins[0] reduces %lld "
			    "elements each), got %lld over %lld",
			    (long long)rows, (long long)src->parts,
			    (long long)n, (long long)dst->count,
			    (long long)dst->parts);
	if (is_int_dtype(src->dtype))
		return int_reduce(x, rows, n);
	/* a float32 source of rows of n read in place */
	if ((rc = in_rows(x, 0, n, &x->fa, &x->cap_a, &f, &ld)) != 0)
		return rc;
	o = out_f32(x);
	ls_reduce_rows(in->alu, in->negate, f, rows, n, ld, o);
	out_done(x, o);
	return 0;
}

/* ---- for the families in other files ------------------------------------ */

int ls_xfail(ls_exec *x, int code, const char *fmt, ...)
{
	char where[512], what[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	ls_where(x->mc, x->core, x->si, where, sizeof where);
	return lm_errc(x->err, code, mod_path(x), where, "%s (%s)", what,
		       lm_opcode_name(x->si->op));
}

int ls_xuninit_ok(const ls_exec *x)
{
	return can_read_uninit(x);
}

int ls_xread_raw(ls_exec *x, const ls_opnd *o, const char *label, void *out)
{
	return read_raw(x, o, label, out);
}

void *ls_xscratch(ls_exec *x, int which, int64_t n)
{
	int64_t nf = (n + 3) / 4;
	switch (which) {
	case 0: return grow_f(&x->fa, &x->cap_a, nf);
	case 1: return grow_f(&x->fb, &x->cap_b, nf);
	case 2: return grow_f(&x->fc, &x->cap_c, nf);
	default: return grow_b(&x->raw, &x->cap_raw, n);
	}
}

uint8_t *ls_xstage(ls_exec *x, int k)
{
	const ls_opnd *o;
	ls_pending *p = x->pend;
	if (k == 0)
		return stage_buf(x);
	o = &x->si->outs[1];
	p->dsto2 = *o;
	ls_bind(x->mc, x->core, &p->dsto2, &p->dst2);
	grow_b(&p->buf2, &p->cap2, o->count * o->esize);
	p->has2 = 1;
	return p->buf2;
}

/* ---- dispatch ----------------------------------------------------------- */

static const exec_fn exec_table[LM_OP_COUNT] = {
	[LM_OP_DMACOPY] = exec_dmacopy,
	[LM_OP_LOAD] = exec_dma,
	[LM_OP_SAVE] = exec_dma,
	[LM_OP_MATMULT] = exec_matmult,
	[LM_OP_ACTIVATION] = exec_activation,
	[LM_OP_TENSORTENSOR] = exec_tensortensor,
	[LM_OP_TENSORSCALAR] = exec_tensorscalar,
	[LM_OP_TENSORCOPY] = exec_copy,
	[LM_OP_TCDYNSRC] = exec_tcdynamic,
	[LM_OP_TCDYNDST] = exec_tcdynamic,
	[LM_OP_MEMSET] = exec_memset,
	[LM_OP_IOTA] = exec_iota,
	[LM_OP_AFFINESELECT] = exec_affine_select,
	[LM_OP_TENSORREDUCE] = exec_tensorreduce,
	[LM_OP_TSPTR] = exec_tensorscalarptr,
	[LM_OP_RECIPROCAL] = exec_reciprocal,
	[LM_OP_STREAMTRANSPOSE] = exec_streamtranspose,
	[LM_OP_DESC_COPY] = exec_dma,
	[LM_OP_DESC_CCE] = exec_cce,
	[LM_OP_DESC_TRANSPOSE] = exec_desc_transpose,
	[LM_OP_DESC_REPLICATE] = exec_dma_replicate,
	[LM_OP_INDIRECTLOAD] = exec_indirect_rows,
	[LM_OP_INDIRECTCOPY] = exec_indirect_rows,
	[LM_OP_GATHER] = exec_gather,
	[LM_OP_SELECT] = ls_exec_select,
	[LM_OP_COPYPRED] = ls_exec_copypred,
	[LM_OP_MAX8] = ls_exec_max8,
	[LM_OP_MAXINDEX] = ls_exec_search8,
	[LM_OP_MATCHREPLACE] = ls_exec_search8,
	[LM_OP_MIMR] = ls_exec_search8,
	[LM_OP_BNSTATS] = ls_exec_bnstats,
	[LM_OP_BNAGGR] = ls_exec_bnaggr,
	[LM_OP_RANGESELECT] = ls_exec_rangeselect,
	[LM_OP_EXPONENTIAL] = exec_exponential,
	[LM_OP_ACTREADACC] = ls_exec_readacc,
	[LM_OP_READACTACC] = ls_exec_readacc,
	[LM_OP_DVEREADACC] = ls_exec_readacc,
	[LM_OP_STREAMSHUFFLE] = ls_exec_shuffle,
};

int ls_exec_start(ls_exec *x)
{
	exec_fn fn;
	assert(!x->pend->is_deferred);
	x->pend->active = 0;
	x->pend->is_masked = 0;
	x->pend->has2 = 0;
	x->pend->x = x;
	x->n_rows = -1;
	if (x->si->fault)
		return fail(x, "%s", x->si->fault);
	fn = exec_table[x->si->op];
	if (!fn)
		return 0; /* no data effect */
	for (int i = 0; i < x->si->n_ins; i++)
		if (x->si->ins[i].space == LS_SP_NONE &&
		    !(x->si->in->ins[i].kind == LM_ARG_IMM &&
		      ls_sel_imm_ok(x->si->op, i)))
			return fail(x, "ins[%d] is not a tensor operand", i);
	if (x->si->n_outs < 1 || x->si->outs[0].space == LS_SP_NONE)
		return fail(x, "outs[0] is not a tensor operand");
	return fn(x);
}

/* The bytes a staged write to view v covers: [*lo, *hi). */
static void view_extent(const ls_view *v, uintptr_t *lo, uintptr_t *hi)
{
	const ls_opnd *o = v->o;
	intptr_t a = 0, b = 0;
	for (int d = 0; d < o->ndim; d++) {
		intptr_t span = (intptr_t)(o->stride[d] * (o->num[d] - 1));
		if (span < 0)
			a += span;
		else
			b += span;
	}
	*lo = (uintptr_t)v->data + (uintptr_t)a;
	*hi = (uintptr_t)v->data + (uintptr_t)b + (uintptr_t)o->esize;
}

/* The bytes staged write p covers (its first output): [*lo, *hi). */
static void write_extent(const ls_pending *p, uintptr_t *lo, uintptr_t *hi)
{
	if (p->is_deferred && !p->is_copy && !p->is_ew) {
		*lo = p->mm.lo[0];
		*hi = p->mm.hi[0];
		return;
	}
	view_extent(&p->dst, lo, hi);
}

/*
** Before p writes: every other deferred Matmult one of whose ranges p
** writes computes its product now, from the memory it read at its start.
*/
static void settle(ls_exec *x, const ls_pending *p)
{
	uintptr_t lo[2], hi[2];
	int nw = 1;
	write_extent(p, &lo[0], &hi[0]);
	if (p->has2)
		view_extent(&p->dst2, &lo[nw], &hi[nw]), nw++;
	for (int i = x->n_deferred - 1; i >= 0; i--) {
		ls_pending *q = x->deferred[i];
		int hit = 0;
		if (q == p)
			continue;
		for (int r = 0; r < q->mm.n_rng && !hit; r++)
			for (int w = 0; w < nw && !hit; w++)
				hit = overlaps(lo[w], hi[w], q->mm.lo[r],
					       q->mm.hi[r]);
		if (hit && q->is_copy)
			copy_stage_now(x, q);
		else if (hit && q->is_ew)
			ew_stage_now(x, q);
		else if (hit)
			mm_stage_now(x, q);
	}
}

/*
** Scatter a staged write: into rows known written, the data only; rows
** just written are remembered (the shadow is only ever set in a run).
*/
static void scatter(ls_exec *x, const ls_view *v, const void *buf)
{
	const ls_opnd *o = v->o;
	int64_t rl = row_ld(o), rb = o->free * o->esize, ld = rl * o->esize;
	if (!x || !rl) {
		ls_scatter_raw(v, buf);
		return;
	}
	if (known_written(x, v->init, o->parts, rb, ld)) {
		ls_rows_put_raw(v, o->parts, o->free, ld, buf);
		return;
	}
	ls_scatter_raw(v, buf);
	remember_written(x, v->init, o->parts, rb, ld);
}

void ls_exec_commit(ls_pending *p)
{
	if (!p->active)
		return;
	p->dst.o = &p->dsto;
	if (p->has2)
		p->dst2.o = &p->dsto2;
	if (p->x && p->x->n_deferred)
		settle(p->x, p);
	if (p->is_deferred && p->is_copy)
		copy_finish(p->x, p);
	else if (p->is_deferred && p->is_ew)
		ew_finish(p->x, p);
	else if (p->is_deferred)
		mm_finish(p->x, p);
	else if (p->is_masked)
		ls_scatter_masked(&p->dst, p->buf, p->mask);
	else
		scatter(p->x, &p->dst, p->buf);
	if (p->has2)
		ls_scatter_raw(&p->dst2, p->buf2);
	/* the mask and the second output are this write's: a write staged
	** in p later without ls_exec_start (TensorSave) has neither */
	p->active = 0;
	p->is_masked = 0;
	p->has2 = 0;
}

void ls_pending_free(ls_pending *p)
{
	if (p->is_deferred && p->x)
		undefer(p->x, p);
	free(p->buf);
	free(p->mask);
	free(p->buf2);
	free(p->mm.a);
	free(p->mm.b);
	memset(p, 0, sizeof *p);
}

void ls_exec_free(ls_exec *x)
{
	free(x->rows);
	free(x->fa);
	free(x->fb);
	free(x->fc);
	free(x->raw);
	free(x->deferred);
	x->deferred = NULL;
	x->n_deferred = x->cap_deferred = 0;
	x->fa = x->fb = x->fc = NULL;
	x->raw = NULL;
	x->cap_a = x->cap_b = x->cap_c = x->cap_raw = 0;
}

/*
** select.c -- the predicated moves: Select (dst = pred ? on_true :
** on_false) and CopyPredicated (dst = src where the predicate holds, the
** other elements of dst left as they are). docs/semantics.md has the
** rules: operand order, the predicate's dtypes and values, how a value
** moves (bit for bit between equal dtypes, else through float32 with one
** rounding), and which inputs stop the run.
**
** An operand that breaks a shape or dtype rule is a malformed module: the
** error is LM_EINPUT (exit 2). A predicate value Select does not take is
** found in the data: LM_ECHECK (exit 1), like every other run-time error.
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"

#include <stdlib.h>
#include <string.h>

static int is_int(lm_dtype t)
{
	return t >= LM_DT_INT8 && t <= LM_DT_UINT64;
}

/* The integer element of dtype t at p (little-endian), widened. */
static int64_t load_int(lm_dtype t, const uint8_t *p)
{
	switch (t) {
	case LM_DT_INT8: return (int8_t)p[0];
	case LM_DT_UINT8: return p[0];
	case LM_DT_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
	case LM_DT_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case LM_DT_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
	case LM_DT_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { int64_t v; memcpy(&v, p, 8); return v; }
	}
}

int ls_sel_imm_ok(lm_opcode op, int i)
{
	return (op == LM_OP_SELECT && (i == 0 || i == 1)) ||
	       (op == LM_OP_COPYPRED && i == 0) ||
	       (op == LM_OP_EXPONENTIAL && i == 1);
}

/* ins[k] must walk the shape of outs[0]: as many elements, as many
** partitions. */
static int same_shape(ls_exec *x, int k)
{
	const ls_opnd *o = &x->si->ins[k], *d = &x->si->outs[0];
	if (o->count == d->count && o->parts == d->parts)
		return 0;
	return ls_xfail(x, LM_EINPUT, "ins[%d] must have the shape of outs[0] "
			"(%lld elements over %lld partitions), got %lld over "
			"%lld", k, (long long)d->count, (long long)d->parts,
			(long long)o->count, (long long)o->parts);
}

static int is_imm(const ls_exec *x, int k)
{
	return x->si->ins[k].space == LS_SP_NONE;
}

/* The predicate ins[k]: an integer tensor of outs[0]'s shape, read into
** vals (count elements). */
static int read_pred(ls_exec *x, int k, int64_t *vals)
{
	const ls_opnd *o = &x->si->ins[k];
	char label[16];
	uint8_t *raw;
	int rc;

	if (!is_int(o->dtype))
		return ls_xfail(x, LM_EINPUT, "the predicate (ins[%d]) must be "
				"of an integer dtype, got %s", k,
				lm_dtype_name(o->dtype));
	if ((rc = same_shape(x, k)) != 0)
		return rc;
	raw = ls_xscratch(x, 3, o->count * o->esize);
	snprintf(label, sizeof label, "ins[%d]", k);
	if ((rc = ls_xread_raw(x, o, label, raw)) != 0)
		return rc;
	for (int64_t i = 0; i < o->count; i++)
		vals[i] = load_int(o->dtype, raw + i * o->esize);
	return 0;
}

/*
** Value operand ins[k] as count elements of outs[0]'s dtype in out: a
** tensor of the same dtype bit for bit; of another float dtype widened to
** float32 (exact) and rounded once to the destination; an immediate
** rounded to float32, then to the destination, and repeated. same_dtype:
** a tensor must have the destination's dtype (CopyPredicated).
*/
static int read_value(ls_exec *x, int k, int same_dtype, uint8_t *out)
{
	const ls_opnd *o = &x->si->ins[k], *d = &x->si->outs[0];
	const int es = d->esize;
	char label[16];
	int rc;

	if (is_imm(x, k)) {
		uint8_t one[8];
		if (is_int(d->dtype))
			return ls_xfail(x, LM_EINPUT, "an immediate (ins[%d]) "
					"into integer data (%s) is not "
					"modelled", k, lm_dtype_name(d->dtype));
		lm_store_elem(d->dtype, one, (float)x->si->in->ins[k].imm);
		for (int64_t i = 0; i < d->count; i++)
			memcpy(out + i * es, one, (size_t)es);
		return 0;
	}
	if ((rc = same_shape(x, k)) != 0)
		return rc;
	snprintf(label, sizeof label, "ins[%d]", k);
	if (o->dtype == d->dtype)
		return ls_xread_raw(x, o, label, out);
	if (same_dtype || is_int(o->dtype) || is_int(d->dtype))
		return ls_xfail(x, LM_EINPUT, "ins[%d] must have the dtype of "
				"outs[0] (%s), got %s", k,
				lm_dtype_name(d->dtype),
				lm_dtype_name(o->dtype));
	{
		uint8_t *raw = malloc((size_t)(o->count * o->esize) + 1);
		float *f = malloc((size_t)o->count * sizeof *f + 1);
		rc = ls_xread_raw(x, o, label, raw);
		if (rc == 0) {
			ls_dtype_to_f32(o->dtype, raw, f, o->count);
			ls_f32_to_dtype(d->dtype, f, out, o->count);
		}
		free(raw);
		free(f);
	}
	return rc;
}

/* "partition p, element e" of element i of outs[0]. */
static void elem_pos(const ls_exec *x, int64_t i, int64_t *p, int64_t *e)
{
	int64_t fr = x->si->outs[0].free > 0 ? x->si->outs[0].free : 1;
	*p = i / fr;
	*e = i % fr;
}

/*
** Select: ins[0] on_true, ins[1] on_false (each a tensor of outs[0]'s
** shape or an immediate), ins[2] the predicate (0 or 1 per element).
*/
int ls_exec_select(ls_exec *x)
{
	const ls_opnd *d;
	int64_t n, *pred;
	uint8_t *t, *f, *out;
	int es, rc;

	if (x->si->n_ins != 3 || x->si->n_outs != 1)
		return ls_xfail(x, LM_EINPUT, "needs 3 inputs (on_true, "
				"on_false, predicate) and 1 output, got %d and "
				"%d", x->si->n_ins, x->si->n_outs);
	d = &x->si->outs[0];
	n = d->count;
	es = d->esize;
	pred = ls_xscratch(x, 0, n * (int64_t)sizeof *pred);
	t = ls_xscratch(x, 1, n * es);
	f = ls_xscratch(x, 2, n * es);
	if ((rc = read_pred(x, 2, pred)) != 0 ||
	    (rc = read_value(x, 0, 0, t)) != 0 ||
	    (rc = read_value(x, 1, 0, f)) != 0)
		return rc;
	out = ls_xstage(x, 0);
	for (int64_t i = 0; i < n; i++) {
		if (pred[i] != 0 && pred[i] != 1) {
			int64_t p, e;
			elem_pos(x, i, &p, &e);
			return ls_xfail(x, LM_ECHECK, "predicate (ins[2]) "
					"partition %lld element %lld is %lld: "
					"Select takes only 0 or 1",
					(long long)p, (long long)e,
					(long long)pred[i]);
		}
		memcpy(out + i * es, (pred[i] ? t : f) + i * es, (size_t)es);
	}
	return 0;
}

/*
** CopyPredicated: ins[0] the source (a tensor of outs[0]'s shape and
** dtype, or an immediate), ins[1] the predicate; an element of outs[0]
** is written where the predicate is non-zero (zero with reverse_pred),
** the others are left alone.
*/
int ls_exec_copypred(ls_exec *x)
{
	const ls_opnd *d;
	ls_pending *p = x->pend;
	const int rev = !!x->si->in->reverse_pred;
	int64_t n, *pred;
	uint8_t *out;
	int rc;

	if (x->si->n_ins != 2 || x->si->n_outs != 1)
		return ls_xfail(x, LM_EINPUT, "needs 2 inputs (source, "
				"predicate) and 1 output, got %d and %d",
				x->si->n_ins, x->si->n_outs);
	d = &x->si->outs[0];
	n = d->count;
	pred = ls_xscratch(x, 0, n * (int64_t)sizeof *pred);
	if ((rc = read_pred(x, 1, pred)) != 0)
		return rc;
	if ((size_t)n > p->cap_mask) {
		p->cap_mask = (size_t)n + 64;
		free(p->mask);
		p->mask = lm_xmalloc(p->cap_mask);
	}
	out = ls_xstage(x, 0);
	if ((rc = read_value(x, 0, 1, out)) != 0) {
		p->active = 0;
		return rc;
	}
	for (int64_t i = 0; i < n; i++)
		p->mask[i] = (uint8_t)((pred[i] != 0) != rev);
	p->is_masked = 1;
	return 0;
}

/* a cmp b for the comparison op (IEEE: false on NaN, but not_equal). */
static int compare(lm_aluop op, float a, float b)
{
	switch (op) {
	case LM_ALU_IS_EQUAL: return a == b;
	case LM_ALU_NOT_EQUAL: return a != b;
	case LM_ALU_IS_GE: return a >= b;
	case LM_ALU_IS_GT: return a > b;
	case LM_ALU_IS_LE: return a <= b;
	default: return a < b; /* is_lt (simcheck admits no other) */
	}
}

/* A bound ins[k]: [P, 1] float data, read as float32 into b. */
static int read_bound(ls_exec *x, int k, float *b)
{
	const ls_opnd *o = &x->si->ins[k], *d = &x->si->outs[0];
	char label[16];
	uint8_t *raw;
	int rc;
	if (is_int(o->dtype) || o->parts != d->parts || o->count != d->parts)
		return ls_xfail(x, LM_EINPUT, "the bound ins[%d] must be float "
				"data [%lld, 1], one value per partition of "
				"outs[0] (got %s, %lld elements over %lld "
				"partitions)", k, (long long)d->parts,
				lm_dtype_name(o->dtype), (long long)o->count,
				(long long)o->parts);
	raw = ls_xscratch(x, 3, o->count * o->esize);
	snprintf(label, sizeof label, "ins[%d]", k);
	if ((rc = ls_xread_raw(x, o, label, raw)) != 0)
		return rc;
	ls_dtype_to_f32(o->dtype, raw, b, o->count);
	return 0;
}

/*
** RangeSelect: ins[0] the data, ins[1] / ins[2] the bounds ([P, 1]);
** element e of partition p is kept where (e compare_op0 bound0[p]) and
** (e compare_op1 bound1[p]), e its index within the partition as
** float32, else it becomes fill_value.
*/
int ls_exec_rangeselect(ls_exec *x)
{
	const lm_inst *in = x->si->in;
	const ls_opnd *d = &x->si->outs[0];
	int64_t n = d->count, fr = d->free > 0 ? d->free : 1;
	float *b0, *b1;
	uint8_t *v, *out, fill[8];
	int es = d->esize, rc;

	if (is_int(d->dtype))
		return ls_xfail(x, LM_EINPUT, "integer data (%s) is not "
				"modelled", lm_dtype_name(d->dtype));
	b0 = ls_xscratch(x, 0, d->parts * 4);
	b1 = ls_xscratch(x, 1, d->parts * 4);
	v = ls_xscratch(x, 2, n * es);
	if ((rc = read_bound(x, 1, b0)) != 0 ||
	    (rc = read_bound(x, 2, b1)) != 0 ||
	    (rc = read_value(x, 0, 0, v)) != 0)
		return rc;
	lm_store_elem(d->dtype, fill, (float)in->fill_value);
	out = ls_xstage(x, 0);
	for (int64_t i = 0; i < n; i++) {
		int64_t p = i / fr;
		float e = (float)(i % fr);
		int keep = compare(in->alu0, e, b0[p]) &&
			   compare(in->alu1, e, b1[p]);
		memcpy(out + i * es, keep ? v + i * es : fill, (size_t)es);
	}
	return 0;
}

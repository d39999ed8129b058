/*
** search.c -- the top-8 search of the vector engine: Max (the 8 largest
** values of each partition), MaxIndex (where 8 given values first occur),
** MatchReplace (those occurrences replaced by an immediate) and
** MaxIndexAndMatchReplace (both at once), as the compiler's BIR
** simulator evaluates them: every value widened to float32, an 8-slot
** insertion with a strict '>' (the earliest of equal values keeps its
** slot), matches by IEEE '==' one-to-one in data order
** (docs/semantics.md, "The top-8 search").
**
** A malformed operand (counts, shapes, dtypes) is LM_EINPUT (exit 2).
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 8
#define MIN_DATA 8
#define MAX_DATA 16384
#define NOT_FOUND 0xffffffffu

static int is_int(lm_dtype t)
{
	return t >= LM_DT_INT8 && t <= LM_DT_UINT64;
}

/* ins[k] or outs[k] (label) must be float data. */
static int float_data(ls_exec *x, const ls_opnd *o, const char *label)
{
	if (!is_int(o->dtype))
		return 0;
	return ls_xfail(x, LM_EINPUT, "%s must be float data, got %s", label,
			lm_dtype_name(o->dtype));
}

/* The data operand ins[k]: float, between 8 and 16384 elements in each
** of its partitions. */
static int check_data(ls_exec *x, int k)
{
	const ls_opnd *o = &x->si->ins[k];
	char label[16];
	snprintf(label, sizeof label, "ins[%d]", k);
	if (o->free < MIN_DATA || o->free > MAX_DATA || o->free * o->parts !=
	    o->count)
		return ls_xfail(x, LM_EINPUT, "the data (%s) must hold 8 to "
				"16384 elements in each partition, got %lld "
				"over %lld partitions", label,
				(long long)o->count, (long long)o->parts);
	return float_data(x, o, label);
}

/* o (label) must be [P, 8]: 8 elements in each of P partitions. */
static int check_eight(ls_exec *x, const ls_opnd *o, const char *label,
		       int64_t P)
{
	if (o->parts == P && o->count == SLOTS * P)
		return 0;
	return ls_xfail(x, LM_EINPUT, "%s must be [%lld, 8]: 8 values for "
			"each partition of the data, got %lld elements over "
			"%lld partitions", label, (long long)P,
			(long long)o->count, (long long)o->parts);
}

/* Operand o read as count float32 values into f (widened exactly). */
static int read_f32(ls_exec *x, const ls_opnd *o, const char *label,
		    float *f)
{
	uint8_t *raw = ls_xscratch(x, 3, o->count * o->esize);
	int rc = ls_xread_raw(x, o, label, raw);
	if (rc == 0)
		ls_dtype_to_f32(o->dtype, raw, f, o->count);
	return rc;
}

/*
** The 8 largest of n values, descending, as the compiler's BIR simulator
** keeps them: each value is carried down the slots; it fills the first
** empty one, or takes a slot whose value it exceeds (strict '>'), the
** value it displaces carried on. An equal value never displaces (the
** earliest keeps the higher slot) and a NaN never compares greater, so a
** NaN stays in the slot it first filled and never displaces anything.
*/
static void top8(const float *d, int64_t n, float *slot)
{
	int used = 0;
	for (int64_t i = 0; i < n; i++) {
		float carry = d[i];
		for (int k = 0; k < SLOTS; k++) {
			if (k == used) {
				slot[k] = carry;
				used++;
				break;
			}
			if (carry > slot[k]) {
				float t = slot[k];
				slot[k] = carry;
				carry = t;
			}
		}
	}
}

/* Max: outs[0] [P, 8] = the 8 largest values of each partition of ins[0]. */
int ls_exec_max8(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int64_t P = src->parts, n = src->free;
	float *d, *out;
	int rc;

	if ((rc = check_data(x, 0)) != 0 ||
	    (rc = check_eight(x, dst, "outs[0]", P)) != 0 ||
	    (rc = float_data(x, dst, "outs[0]")) != 0)
		return rc;
	d = ls_xscratch(x, 0, src->count * 4);
	out = ls_xscratch(x, 1, SLOTS * P * 4);
	if ((rc = read_f32(x, src, "ins[0]", d)) != 0)
		return rc;
	for (int64_t p = 0; p < P; p++)
		top8(d + p * n, n, out + p * SLOTS);
	ls_f32_to_dtype(dst->dtype, out, ls_xstage(x, 0), dst->count);
	return 0;
}

/* An index output (label): uint32, or uint16 (the low half, 0xffff not
** found), [P, 8]. */
static int check_index(ls_exec *x, const ls_opnd *o, const char *label,
		       int64_t P)
{
	if (o->dtype != LM_DT_UINT32 && o->dtype != LM_DT_UINT16)
		return ls_xfail(x, LM_EINPUT, "the indices (%s) must be uint32 "
				"or uint16, got %s", label,
				lm_dtype_name(o->dtype));
	return check_eight(x, o, label, P);
}

static void store_index(const ls_opnd *o, uint8_t *b, int64_t i, uint32_t v)
{
	if (o->dtype == LM_DT_UINT16) {
		uint16_t h = (uint16_t)v;
		memcpy(b + 2 * i, &h, 2);
	} else {
		memcpy(b + 4 * i, &v, 4);
	}
}

/*
** MaxIndex, MatchReplace, MaxIndexAndMatchReplace: ins[0] the 8 values of
** each partition ([P, 8]), ins[1] the data. Each data element, in order,
** is matched (IEEE ==) with the first value not yet matched that equals
** it; its index goes to that value's slot (MaxIndex: outs[0];
** MaxIndexAndMatchReplace: outs[1]), and a matched element is replaced
** by imm_value in the copy of the data (MatchReplace and
** MaxIndexAndMatchReplace: outs[0]). A slot never matched holds
** 0xffffffff (0xffff as uint16).
*/
int ls_exec_search8(ls_exec *x)
{
	const lm_opcode op = x->si->op;
	const ls_opnd *vo = &x->si->ins[0], *data = &x->si->ins[1];
	const ls_opnd *io = NULL, *ro = NULL;
	const int with_index = op != LM_OP_MATCHREPLACE;
	const int with_replace = op != LM_OP_MAXINDEX;
	int64_t P = data->parts, n = data->free;
	float *vals, *d;
	uint8_t *ib = NULL, *rb = NULL, *raw = NULL;
	float imm = (float)x->si->in->fill_value;
	int rc;

	if ((rc = check_data(x, 1)) != 0 ||
	    (rc = check_eight(x, vo, "ins[0]", P)) != 0 ||
	    (rc = float_data(x, vo, "ins[0]")) != 0)
		return rc;
	if (with_index) {
		int k = op == LM_OP_MIMR ? 1 : 0;
		io = &x->si->outs[k];
		if ((rc = check_index(x, io, k ? "outs[1]" : "outs[0]", P)))
			return rc;
	}
	if (with_replace) {
		ro = &x->si->outs[0];
		if (ro->parts != P || ro->count != data->count)
			return ls_xfail(x, LM_EINPUT, "outs[0] must have the "
					"shape of the data, ins[1] (%lld "
					"elements over %lld partitions), got "
					"%lld over %lld",
					(long long)data->count, (long long)P,
					(long long)ro->count,
					(long long)ro->parts);
		if ((rc = float_data(x, ro, "outs[0]")) != 0)
			return rc;
	}
	vals = ls_xscratch(x, 0, vo->count * 4);
	if ((rc = read_f32(x, vo, "ins[0]", vals)) != 0)
		return rc;
	d = ls_xscratch(x, 1, data->count * 4);
	if (ro && ro->dtype == data->dtype) {
		/* the data's own bits are what is copied through */
		raw = malloc((size_t)(data->count * data->esize) + 1);
		rc = ls_xread_raw(x, data, "ins[1]", raw);
		if (rc == 0)
			ls_dtype_to_f32(data->dtype, raw, d, data->count);
	} else {
		rc = read_f32(x, data, "ins[1]", d);
	}
	if (rc) {
		free(raw);
		return rc;
	}
	if (ro) {
		rb = ls_xstage(x, 0);
		if (raw)
			memcpy(rb, raw, (size_t)(data->count * data->esize));
		else
			ls_f32_to_dtype(ro->dtype, d, rb, data->count);
	}
	if (io) {
		ib = ls_xstage(x, io == &x->si->outs[1] ? 1 : 0);
		for (int64_t i = 0; i < io->count; i++)
			store_index(io, ib, i, NOT_FOUND);
	}
	for (int64_t p = 0; p < P; p++) {
		const float *v = vals + p * SLOTS, *row = d + p * n;
		int matched[SLOTS] = {0};
		for (int64_t i = 0; i < n; i++)
			for (int k = 0; k < SLOTS; k++) {
				if (matched[k] || !(row[i] == v[k]))
					continue;
				matched[k] = 1;
				if (ib)
					store_index(io, ib, p * SLOTS + k,
						    (uint32_t)i);
				if (rb)
					lm_store_elem(ro->dtype, rb + (p * n +
						      i) * ro->esize, imm);
				break;
			}
	}
	free(raw);
	return 0;
}

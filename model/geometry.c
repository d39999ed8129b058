/*
** geometry.c -- the geometry of a physical_ap operand (see geometry.h).
** Every sum and product of input numbers is checked; a failure says what
** is wrong in the verifier's words.
*/
#include "common.h"
#include "geometry.h"
#include "dtype.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *S(const char *s)
{
	return s ? s : "";
}

static const char *dtname(lm_dtype t)
{
	const char *s = lm_dtype_name(t);
	return s && *s ? s : "invalid";
}

static const char *mtname(lm_memtype t)
{
	const char *s = lm_memtype_name(t);
	return s && *s ? s : "invalid";
}

/* Checked a + b, a * b; 1 on overflow. */
static int add_ovf(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}

static int mul_ovf(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_mul_overflow(a, b, r);
}

/* a + b + c for a message: wraps instead of overflowing. */
static long long msum(int64_t a, int64_t b, int64_t c)
{
	return (long long)((uint64_t)a + (uint64_t)b + (uint64_t)c);
}

/* Fill *why (when asked) and return -1. */
static int LM_PRINTF(2, 3) refuse(char **why, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	if (why) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof buf, fmt, ap);
		va_end(ap);
		*why = lm_xstrdup(buf);
	}
	return -1;
}

/* Product of n dims (INT64_MAX when it overflows). */
static int64_t product(const int64_t *v, int n)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++)
		if (mul_ovf(p, v[i], &p))
			return INT64_MAX;
	return p;
}

/* DRAM: the element range inside the tensor and the location's bytes. */
static int dram_bounds(lm_geom *g, const lm_arg *a, const lm_alloc *al,
		       const lm_memloc *loc, char **why)
{
	int64_t end;
	if (al->n_shape > 0) {
		int64_t elems = product(al->tensor_shape, al->n_shape);
		if (g->ehi >= elems)
			return refuse(why, "element range %lld..%lld outside "
				      "allocation '%s' (%lld elements)",
				      (long long)g->elo, (long long)g->ehi,
				      S(al->name), (long long)elems);
	}
	if (loc->n_dims > 0) {
		int64_t bytes = product(loc->dims, loc->n_dims);
		if (add_ovf(g->ehi, 1, &end) || mul_ovf(end, g->esize, &end) ||
		    end > bytes)
			return refuse(why, "element range %lld..%lld (%s) "
				      "outside memory location '%s' (%lld "
				      "bytes)", (long long)g->elo,
				      (long long)g->ehi, dtname(a->dtype),
				      S(loc->name), (long long)bytes);
	}
	return 0;
}

/* SB / PSUM: partitions inside the 128 and loc's, bytes inside loc's. */
static int onchip_bounds(lm_geom *g, const lm_arg *a, const lm_memloc *loc,
			 char **why)
{
	int64_t k = lm_arg_part_step(a, loc), span, last, end;
	if (k < 0 && a->ap[0].step < 0)
		return refuse(why, "ap[0].step %lld is negative (the first "
			      "pair walks the partitions)",
			      (long long)a->ap[0].step);
	if (k < 0)
		return refuse(why, "ap[0].step %lld is not a multiple of %lld, "
			      "the elements of one partition of memory location "
			      "'%s' (the first pair walks the partitions)",
			      (long long)a->ap[0].step,
			      (long long)lm_arg_part_elems(a, loc),
			      S(loc->name));
	g->pstep = k;
	/* k <= the location's partitions when it walks more than one, so
	   only a huge start or base overflows: it exceeds them anyway */
	if (mul_ovf(k, g->parts - 1, &span))
		return refuse(why, "access pattern index arithmetic overflows");
	if (add_ovf(loc->base, a->start_partition, &g->part) ||
	    add_ovf(a->start_partition, span, &last) ||
	    add_ovf(loc->base, last, &end) || end >= LM_PARTITIONS)
		return refuse(why, "partitions %lld..%lld exceed the %d "
			      "partitions", msum(loc->base, a->start_partition,
						  0),
			      msum(loc->base, a->start_partition, span),
			      LM_PARTITIONS);
	if (loc->n_dims < 2 || last >= loc->dims[0])
		return refuse(why, "partitions %lld..%lld of memory location "
			      "'%s' outside its %lld partitions",
			      (long long)a->start_partition, (long long)last,
			      S(loc->name),
			      (long long)(loc->n_dims ? loc->dims[0] : 0));
	if (mul_ovf(g->elo, g->esize, &g->lo) ||
	    add_ovf(g->ehi, 1, &end) || mul_ovf(end, g->esize, &g->hi) ||
	    g->hi > loc->dims[1])
		return refuse(why, "element range %lld..%lld (%s) outside "
			      "memory location '%s' (%lld bytes per "
			      "partition)", (long long)g->elo,
			      (long long)g->ehi, dtname(a->dtype), S(loc->name),
			      (long long)loc->dims[1]);
	return 0;
}

int lm_arg_geometry(lm_geom *g, const lm_arg *a, const lm_alloc *al,
		    const lm_memloc *loc, char **why)
{
	int64_t count = 1, d;

	memset(g, 0, sizeof *g);
	if (why)
		*why = NULL;
	g->esize = lm_dtype_size(a->dtype);
	if (a->dtype == LM_DT_INVALID || g->esize <= 0)
		return refuse(why, "invalid dtype '%s'", S(a->dtype_str));
	g->is_dram = lm_memtype_is_dram(loc->type);
	if (!g->is_dram && loc->type != LM_MT_SB && loc->type != LM_MT_PSUM)
		return refuse(why, "memory location '%s' has type %s, which an "
			      "access pattern cannot address", S(loc->name),
			      mtname(loc->type));
	if (a->n_ap < 1)
		return refuse(why, "access pattern is empty");
	if (a->offset < 0)
		return refuse(why, "negative offset %lld", (long long)a->offset);
	if (a->start_partition < 0)
		return refuse(why, "negative start_partition %lld",
			      (long long)a->start_partition);
	for (int i = 0; i < a->n_ap; i++) {
		if (a->ap[i].num <= 0)
			return refuse(why, "access pattern pair %d has num %lld "
				      "(must be > 0)", i,
				      (long long)a->ap[i].num);
		if (mul_ovf(count, a->ap[i].num, &count) ||
		    count > LM_MAX_OPERAND_ELEMS)
			return refuse(why, "access pattern walks more than %lld "
				      "elements",
				      (long long)LM_MAX_OPERAND_ELEMS);
	}
	g->count = count;
	g->parts = a->ap[0].num;
	g->free = count / g->parts;

	/* Element range walked from offset: SB/PSUM skip the partition pair. */
	g->elo = g->ehi = a->offset;
	for (int i = g->is_dram ? 0 : 1; i < a->n_ap; i++) {
		int64_t *end;
		if (mul_ovf(a->ap[i].step, a->ap[i].num - 1, &d))
			return refuse(why, "access pattern index arithmetic "
				      "overflows");
		end = d < 0 ? &g->elo : &g->ehi;
		if (add_ovf(*end, d, end))
			return refuse(why, "access pattern index arithmetic "
				      "overflows");
	}
	if (g->elo < 0)
		return refuse(why, "access pattern reaches element %lld, before "
			      "the start of memory location '%s'",
			      (long long)g->elo, S(loc->name));

	if (!g->is_dram)
		return onchip_bounds(g, a, loc, why);
	if (dram_bounds(g, a, al, loc, why))
		return -1;
	if (mul_ovf(g->elo, g->esize, &g->lo) || add_ovf(g->ehi, 1, &d) ||
	    mul_ovf(d, g->esize, &g->hi))
		return refuse(why, "access pattern index arithmetic overflows");
	return 0;
}

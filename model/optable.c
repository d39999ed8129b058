/*
** optable.c -- the instruction set tables of ops.def / fields.def as
** lookups: opcode name <-> ordinal, each opcode's keys sorted by name.
** Built once, on first use (thread-safe).
*/
#include "common.h"
#include "optable.h"
#include "enumtab.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The field groups, each a run of rows of fields.def. */
#define LM_FIELD(g, key, type, et, dflt, flags, ref) \
	{ #g, { key, LM_FT_##type, LM_ET_##et, (int64_t)(dflt), (flags), \
		LM_REF_##ref } },
typedef struct field_row {
	const char *group;
	lm_field f;
} field_row;
static const field_row field_rows[] = {
#include "fields.def"
};
#undef LM_FIELD

typedef struct op_row {
	int it;
	const char *name;
	lm_opfamily family;
	unsigned engines, flags;
	const char *g1, *g2;
	int n_ins, n_outs;
} op_row;
#define LM_OPDEF(ord, name, fam, eng, flags, g1, g2, nin, nout) \
	{ ord, #name, LM_FAM_##fam, (eng), (flags), #g1, #g2, nin, nout },
static const op_row op_rows[] = {
#include "ops.def"
};
#undef LM_OPDEF

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static lm_opinfo infos[LM_IT_COUNT];
static const lm_field **field_ptrs; /* every op's run, one array */
static int by_name[LM_IT_COUNT];     /* ordinals sorted by name */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int cmp_field(const void *a, const void *b)
{
	const lm_field *x = *(const lm_field *const *)a;
	const lm_field *y = *(const lm_field *const *)b;
	return strcmp(x->key, y->key);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(op_rows[*(const int *)a].name,
		      op_rows[*(const int *)b].name);
}

/* Append the rows of group g to v (from n; v NULL: count only); returns
** the new count. */
static int add_group(const char *g, const lm_field **v, int n)
{
	if (strcmp(g, "NONE") == 0)
		return n;
	for (int i = 0; i < COUNT(field_rows); i++)
		if (strcmp(field_rows[i].group, g) == 0) {
			if (v)
				v[n] = &field_rows[i].f;
			n++;
		}
	return n;
}

static void build(void)
{
	int n = 0;
	for (int i = 0; i < COUNT(op_rows); i++) {
		n = add_group(op_rows[i].g1, NULL, n);
		n = add_group(op_rows[i].g2, NULL, n);
	}
	field_ptrs = lm_xmalloc((size_t)(n ? n : 1) * sizeof *field_ptrs);
	n = 0;
	for (int i = 0; i < COUNT(op_rows); i++) {
		const op_row *r = &op_rows[i];
		lm_opinfo *o = &infos[r->it];
		int start = n;
		o->it = r->it;
		o->name = r->name;
		o->family = r->family;
		o->engines = r->engines;
		o->flags = r->flags;
		o->n_ins = r->n_ins;
		o->n_outs = r->n_outs;
		n = add_group(r->g1, field_ptrs, n);
		n = add_group(r->g2, field_ptrs, n);
		o->n_fields = n - start;
		o->fields = field_ptrs + start;
		qsort(field_ptrs + start, (size_t)o->n_fields,
		      sizeof *field_ptrs, cmp_field);
		by_name[i] = i;
	}
	qsort(by_name, LM_IT_COUNT, sizeof *by_name, cmp_name);
}

typedef char one_row_per_op[COUNT(op_rows) == LM_IT_COUNT ? 1 : -1];

const lm_opinfo *lm_op_info(int it)
{
	pthread_once(&once, build);
	return it >= 0 && it < LM_IT_COUNT ? &infos[it] : NULL;
}

int lm_it_parse(const char *name)
{
	int lo = 0, hi = LM_IT_COUNT - 1;
	if (!name)
		return -1;
	pthread_once(&once, build);
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(op_rows[by_name[mid]].name, name);
		if (c == 0)
			return op_rows[by_name[mid]].it;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

const lm_field *lm_op_field(int it, const char *key)
{
	const lm_opinfo *o = lm_op_info(it);
	int lo = 0, hi;
	if (!o || !key)
		return NULL;
	hi = o->n_fields - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(o->fields[mid]->key, key);
		if (c == 0)
			return o->fields[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

const char *lm_opfamily_name(lm_opfamily f)
{
	static const char *const names[] = {
#define LM_X_(x) #x,
		LM_OPFAMILY_LIST(LM_X_)
#undef LM_X_
	};
	return f >= 0 && f < LM_FAM_COUNT ? names[f] : "";
}

const char *lm_fieldtype_name(lm_fieldtype t)
{
	static const char *const names[] = {
#define LM_X_(x) #x,
		LM_FIELDTYPE_LIST(LM_X_)
#undef LM_X_
	};
	return t >= 0 && t < LM_FT_COUNT ? names[t] : "";
}

const char *lm_refkind_name(lm_refkind r)
{
	static const char *const names[] = {
#define LM_X_(x) #x,
		LM_REFKIND_LIST(LM_X_)
#undef LM_X_
	};
	return r >= 0 && r < LM_REF_COUNT ? names[r] : "";
}

int lm_field_has_default(const lm_field *f)
{
	switch (f->type) {
	case LM_FT_STR: case LM_FT_NAME: case LM_FT_RECORD: case LM_FT_JSON:
	case LM_FT_AFFINE:
		return 0;
	default:
		return 1;
	}
}

int lm_field_required(const lm_field *f, int modelled)
{
	return (f->flags & LM_FF_REQ) || ((f->flags & LM_FF_NEED) && modelled);
}

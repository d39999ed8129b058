/*
** enumtab.c -- the enum tables of model/enums.def and their lookups.
**
** Each type's rows are one static array built from enums.def. On first use
** two permutations of every type's rows are sorted once, by spelling and by
** ordinal, so a parse is a binary search over one type's spellings and a
** name lookup a binary search over its ordinals (the canonical row of an
** ordinal sorts first, the sort being stable). The same pass checks the
** table: every row under its own type, no spelling twice in a type, the
** default ordinal present.
*/
#include "common.h"
#include "enumtab.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>

typedef struct erow {
	lm_enumtype type; /* the LM_ENUMT the row follows, for the check */
	int64_t ord;
	const char *s;
} erow;

/*
** rows_NONE opens the chain of arrays: each LM_ENUMT line closes the
** array before it and opens its own, so rows_T holds exactly T's rows.
*/
static const erow rows_NONE[] = {
	{LM_ET_NONE, 0, NULL}
#define LM_ENUMT(T, dflt) }; static const erow rows_##T[] = {
#define LM_ENUMV(T, ord, s) {LM_ET_##T, (ord), (s)},
#include "enums.def"
#undef LM_ENUMT
#undef LM_ENUMV
};

enum {
	N_ROWS = 0
#define LM_ENUMT(T, dflt)
#define LM_ENUMV(T, ord, s) + 1
#include "enums.def"
#undef LM_ENUMT
#undef LM_ENUMV
};

typedef struct etype {
	const char *name;
	int64_t dflt;
	const erow *rows;
	int n;
} etype;

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const etype types[LM_ET_COUNT] = {
	[LM_ET_NONE] = {"", 0, rows_NONE, 0},
#define LM_ENUMT(T, dflt) [LM_ET_##T] = {#T, (dflt), rows_##T, COUNT(rows_##T)},
#define LM_ENUMV(T, ord, s)
#include "enums.def"
#undef LM_ENUMT
#undef LM_ENUMV
};

/* Row indices within a type, type t's slice starting at first[t]. */
static uint16_t by_name[N_ROWS];
static uint16_t by_ord[N_ROWS];
static int first[LM_ET_COUNT];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static int is_type(lm_enumtype t)
{
	return (int)t > LM_ET_NONE && (int)t < LM_ET_COUNT;
}

/* Stable insertion sort of ix[0..n) by spelling (by_s) or by ordinal. */
static void sort_rows(uint16_t *ix, int n, const erow *rows, int by_s)
{
	for (int i = 1; i < n; i++) {
		uint16_t v = ix[i];
		int j = i;
		while (j > 0) {
			const erow *a = &rows[ix[j - 1]], *b = &rows[v];
			int gt = by_s ? strcmp(a->s, b->s) > 0 : a->ord > b->ord;
			if (!gt)
				break;
			ix[j] = ix[j - 1];
			j--;
		}
		ix[j] = v;
	}
}

/* Build the two permutations and check the table (once). */
static void build_index(void)
{
	int at = 0;

	for (int t = LM_ET_NONE + 1; t < LM_ET_COUNT; t++) {
		const etype *ty = &types[t];
		int has_dflt = 0;

		assert(ty->n > 0 && ty->n <= UINT16_MAX);
		first[t] = at;
		for (int i = 0; i < ty->n; i++) {
			assert(ty->rows[i].type == (lm_enumtype)t);
			assert(ty->rows[i].s && ty->rows[i].s[0]);
			by_name[at + i] = (uint16_t)i;
			by_ord[at + i] = (uint16_t)i;
			if (ty->rows[i].ord == ty->dflt)
				has_dflt = 1;
		}
		sort_rows(by_name + at, ty->n, ty->rows, 1);
		sort_rows(by_ord + at, ty->n, ty->rows, 0);
		for (int i = 1; i < ty->n; i++)
			assert(strcmp(ty->rows[by_name[at + i - 1]].s,
				      ty->rows[by_name[at + i]].s) != 0);
		assert(has_dflt);
		(void)has_dflt;
		at += ty->n;
	}
	assert(at == N_ROWS);
}

const char *lm_enumtype_name(lm_enumtype t)
{
	return is_type(t) ? types[t].name : "";
}

int lm_enum_parse(lm_enumtype t, const char *s, int64_t *ord)
{
	if (!is_type(t) || !s)
		return -1;
	pthread_once(&index_once, build_index);

	const erow *rows = types[t].rows;
	const uint16_t *ix = by_name + first[t];
	int lo = 0, hi = types[t].n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = strcmp(s, rows[ix[mid]].s);
		if (c == 0) {
			if (ord)
				*ord = rows[ix[mid]].ord;
			return 0;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

const char *lm_enum_name(lm_enumtype t, int64_t ord)
{
	if (!is_type(t))
		return NULL;
	pthread_once(&index_once, build_index);

	const erow *rows = types[t].rows;
	const uint16_t *ix = by_ord + first[t];
	int lo = 0, hi = types[t].n;
	while (lo < hi) { /* the first row with rows[].ord >= ord */
		int mid = lo + (hi - lo) / 2;
		if (rows[ix[mid]].ord < ord)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < types[t].n && rows[ix[lo]].ord == ord)
		return rows[ix[lo]].s;
	return NULL;
}

int64_t lm_enum_default(lm_enumtype t)
{
	return is_type(t) ? types[t].dflt : 0;
}

const char *lm_enum_spellings(lm_enumtype t, char *buf, size_t n)
{
	size_t at = 0;

	if (!buf || n == 0)
		return buf;
	buf[0] = '\0';
	if (!is_type(t))
		return buf;
	/* an item goes in when ", ..." still fits after it (or it is last) */
	for (int i = 0; i < types[t].n; i++) {
		const char *s = types[t].rows[i].s;
		size_t len = strlen(s), sep = i ? 2 : 0;
		size_t end = at + sep + len;
		if (end >= n || (i + 1 < types[t].n && end + 5 >= n)) {
			if (at)
				memcpy(buf + at, ", ...", 6);
			else if (n >= 4)
				memcpy(buf, "...", 4);
			return buf;
		}
		memcpy(buf + at, ", ", sep);
		memcpy(buf + at + sep, s, len + 1);
		at = end;
	}
	return buf;
}

int lm_enum_count(lm_enumtype t)
{
	return is_type(t) ? types[t].n : 0;
}

const char *lm_enum_row(lm_enumtype t, int i, int64_t *ord)
{
	if (!is_type(t) || i < 0 || i >= types[t].n)
		return NULL;
	if (ord)
		*ord = types[t].rows[i].ord;
	return types[t].rows[i].s;
}

/*
** fuzz_affine.c -- libFuzzer harness for the quasi-affine expression
** reader (lm_affine_from_json). The input is a JSON expression, or an
** array of them (an "addrs" list); each is read as version 1 and as
** version 2. What reads is written back in version 2 (and in version 1
** when it has that form) and read again, copied and compared, folded,
** evaluated and renamed; each answer must agree with the others. Built and run by tests/fuzz/run.sh; replayed by
** tests/test_fuzz_replay.c.
*/
#include "common.h"
#include "fuzz.h"
#include "affine.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A value for every leaf from its name: some unknown, most small, and a
** shard id always inside [0, ub). */
static int leaf(void *ctx, int kind, const char *name, int64_t *v)
{
	uint64_t h = lm_hash_str(name);
	(void)ctx;
	if (kind == LM_AFF_SHARD) {
		*v = 0;
		return 0;
	}
	if (h % 11 == 0)
		return -1;
	*v = (int64_t)(h % 2001) - 1000;
	return 0;
}

/* Count the names; rename each to itself plus a quote. */
static int rename_leaf(void *ctx, int kind, char **name)
{
	char *n = lm_xasprintf("%s'", *name);
	(void)kind;
	(*(int *)ctx)++;
	free(*name);
	*name = n;
	return 0;
}

/* Read j written in version (from e's writer) back; 1 unless it equals e. */
static int reads_back(const lm_affine *e, const cJSON *j, int version)
{
	lm_affine *again = NULL;
	char err[256];
	int bad = !j || lm_affine_from_json(&again, j, version, err,
					    sizeof err) != 0 ||
		  !lm_affine_equal(e, again);
	lm_affine_free(again);
	return bad;
}

/* The properties of one expression read in version. */
static int check(const lm_affine *e, int version)
{
	cJSON *w2 = lm_affine_to_json(e, 2), *w1 = lm_affine_to_json(e, 1);
	lm_affine *c = NULL;
	int64_t v, k;
	char err[256];
	int bad = 0, names = 0;

	bad |= reads_back(e, w2, 2);
	/* what reads as version 1 writes as version 1 */
	bad |= (w1 || version == 1) && reads_back(e, w1, 1);
	cJSON_Delete(w1);
	cJSON_Delete(w2);

	/* a folded constant is what evaluation gives, when it succeeds */
	if (lm_affine_eval(e, leaf, NULL, &v, err, sizeof err) == 0 &&
	    lm_affine_const(e, &k) == 0)
		bad |= v != k;
	if (lm_affine_eval(e, NULL, NULL, &v, err, sizeof err) == 0)
		bad |= lm_affine_const(e, &k) != 0 || v != k;

	c = lm_affine_copy(e);
	bad |= !lm_affine_equal(e, c);
	bad |= lm_affine_each_name(c, rename_leaf, &names) != 0;
	bad |= lm_affine_equal(e, c) != (names == 0);
	lm_affine_free(c);
	return bad;
}

static int one(const cJSON *j)
{
	int bad = 0;
	for (int version = 1; version <= 2; version++) {
		lm_affine *e = (lm_affine *)1;
		char err[256] = "";
		if (lm_affine_from_json(&e, j, version, err, sizeof err)) {
			bad |= e != NULL || !err[0];
			continue;
		}
		bad |= check(e, version);
		lm_affine_free(e);
	}
	return bad;
}

int lncsim_fuzz_affine(const uint8_t *data, size_t size)
{
	cJSON *j = cJSON_ParseWithLength((const char *)data, size);
	const cJSON *c;
	int bad = 0;
	if (!j)
		return 0;
	if (cJSON_IsArray(j)) {
		cJSON_ArrayForEach(c, j)
			bad |= one(c);
	} else {
		bad = one(j);
	}
	cJSON_Delete(j);
	return bad;
}

LNCSIM_FUZZ_ENTRY(lncsim_fuzz_affine)

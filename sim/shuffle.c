/*
** shuffle.c -- StreamShuffle: whole partitions moved within each block
** of 32, as a 32-entry mask says (docs/semantics.md, "StreamShuffle").
** The mask is the instruction's `mask` key, carried in its extra JSON
** (the loader does not read it); simcheck.c's row refuses every mask
** this file would not take, so a run never meets one.
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define SHUF_N 32
#define SHUF_KEEP 255

int ls_shuffle_mask(const lm_inst *in, int *mask)
{
	const cJSON *a = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "mask") : NULL;
	int i = 0;
	const cJSON *e;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != SHUF_N)
		return -1;
	cJSON_ArrayForEach(e, a) {
		double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
		if (!((v >= 0 && v < SHUF_N) || v == SHUF_KEEP) || v != (int)v)
			return i;
		mask[i++] = (int)v;
	}
	return SHUF_N;
}

/* out partition b + i = in partition b + mask[i] for each block b of 32
** partitions; mask[i] = 255 leaves partition b + i as it is. */
int ls_exec_shuffle(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	ls_pending *p = x->pend;
	int64_t P = src->parts, E = src->free;
	int mask[SHUF_N], es = src->esize, rc;
	uint8_t *raw, *out;

	if (x->si->n_ins != 1 || x->si->n_outs != 1)
		return ls_xfail(x, LM_EINPUT, "takes ins [src] and outs [dst] "
				"(has %d and %d)", x->si->n_ins, x->si->n_outs);
	if (ls_shuffle_mask(x->si->in, mask) != SHUF_N)
		return ls_xfail(x, LM_EINPUT, "mask must be 32 entries, each "
				"0..31 or 255");
	if (src->dtype != dst->dtype)
		return ls_xfail(x, LM_EINPUT, "a stream shuffle does not "
				"convert dtypes (%s to %s)",
				lm_dtype_name(src->dtype),
				lm_dtype_name(dst->dtype));
	if (dst->parts != P || dst->free != E || dst->count != src->count)
		return ls_xfail(x, LM_EINPUT, "outs[0] must be [%lld, %lld] as "
				"ins[0] (got [%lld, %lld])", (long long)P,
				(long long)E, (long long)dst->parts,
				(long long)dst->free);
	for (int64_t q = 0; q < P; q++) {
		int m = mask[q % SHUF_N];
		if (m != SHUF_KEEP && q - q % SHUF_N + m >= P)
			return ls_xfail(x, LM_EINPUT, "mask[%d] = %d moves "
					"partition %lld of ins[0] to %lld; "
					"ins[0] has %lld partitions",
					(int)(q % SHUF_N), m,
					(long long)(q - q % SHUF_N + m),
					(long long)q, (long long)P);
	}
	raw = ls_xscratch(x, 3, src->count * es);
	if ((rc = ls_xread_raw(x, src, "ins[0]", raw)) != 0)
		return rc;
	if ((size_t)dst->count > p->cap_mask) {
		p->cap_mask = (size_t)dst->count + 64;
		free(p->mask);
		p->mask = lm_xmalloc(p->cap_mask);
	}
	out = ls_xstage(x, 0);
	for (int64_t q = 0; q < P; q++) {
		int m = mask[q % SHUF_N];
		int64_t from = q - q % SHUF_N + m;
		memset(p->mask + q * E, m != SHUF_KEEP, (size_t)E);
		if (m != SHUF_KEEP)
			memcpy(out + q * E * es, raw + from * E * es,
			       (size_t)(E * es));
	}
	p->is_masked = 1;
	return 0;
}

/*
** bnstats.c -- the batch-norm statistics: BNStats (two interleaved
** Welford accumulations per partition, even and odd elements) and
** BNStatsAggregate (Chan's merge of such triples into a mean and a
** population variance), in the compiler's BIR simulator's order of
** float32 operations (docs/semantics.md). Every step below is one float32
** operation (the build uses -ffp-contract=off), so the bits follow from
** the order written here.
**
** A malformed operand (counts, shapes, dtypes) is LM_EINPUT (exit 2).
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"

static int is_int(lm_dtype t)
{
	return t >= LM_DT_INT8 && t <= LM_DT_UINT64;
}

/* ins[0] / outs[0]: float data over the same P partitions; outs[0] holds
** `per` elements in each. */
static int check_io(ls_exec *x, int per)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	if (is_int(src->dtype) || is_int(dst->dtype))
		return ls_xfail(x, LM_EINPUT, "integer data (%s to %s) is not "
				"modelled", lm_dtype_name(src->dtype),
				lm_dtype_name(dst->dtype));
	if (dst->parts != src->parts || dst->count != per * src->parts)
		return ls_xfail(x, LM_EINPUT, "outs[0] must be [%lld, %d]: %d "
				"statistics for each partition of ins[0], got "
				"%lld elements over %lld partitions",
				(long long)src->parts, per, per,
				(long long)dst->count, (long long)dst->parts);
	return 0;
}

/* ins[0] as float32 into f (widened exactly). */
static int read_in(ls_exec *x, float *f)
{
	const ls_opnd *o = &x->si->ins[0];
	uint8_t *raw = ls_xscratch(x, 3, o->count * o->esize);
	int rc = ls_xread_raw(x, o, "ins[0]", raw);
	if (rc == 0)
		ls_dtype_to_f32(o->dtype, raw, f, o->count);
	return rc;
}

/*
** One partition's BNStats: out = [n_even, mean_even, m2_even, n_odd,
** mean_odd, m2_odd]. The counts are the lanes' sizes; the running weight
** c is shared by the two lanes and grows by one at each even element, so
** the k-th element of either lane is weighted 1/k.
*/
static void stats_row(const float *x, int64_t n, float *out)
{
	float c = 0.0f;
	out[0] = (float)((n + 1) >> 1);
	out[3] = (float)(n >> 1);
	out[1] = out[2] = out[4] = out[5] = 0.0f;
	for (int64_t i = 0; i < n; i++) {
		float *lane = out + 3 * (i & 1);
		float r, a, b, mean, old, dx, dn;
		if ((i & 1) == 0)
			c = c + 1.0f;
		r = 1.0f / c;
		old = lane[1];
		a = 1.0f - r;
		a = a * old;
		b = r * x[i];
		mean = a + b;
		lane[1] = mean;
		dn = x[i] - mean;
		dx = x[i] - old;
		lane[2] = lane[2] + dn * dx;
	}
}

/* BNStats: outs[0] [P, 6], the statistics of each partition of ins[0]. */
int ls_exec_bnstats(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int64_t P = src->parts, n = src->free;
	float *f, *out;
	int rc;

	if ((rc = check_io(x, 6)) != 0)
		return rc;
	f = ls_xscratch(x, 0, src->count * 4);
	out = ls_xscratch(x, 1, 6 * P * 4);
	if ((rc = read_in(x, f)) != 0)
		return rc;
	for (int64_t p = 0; p < P; p++)
		stats_row(f + p * n, n, out + 6 * p);
	ls_f32_to_dtype(dst->dtype, out, ls_xstage(x, 0), dst->count);
	return 0;
}

/*
** One partition's aggregate of k triples (count, mean, m2) in order:
** out = [mean, variance], the variance a population one (divided by the
** total count), no epsilon.
*/
static void aggr_row(const float *t, int64_t k, float *out)
{
	float n = 0.0f, mean = 0.0f, var = 0.0f;
	for (int64_t j = 0; j < k; j++) {
		const float nt = t[3 * j], mt = t[3 * j + 1], m2 = t[3 * j + 2];
		float tot, r, delta, a, b, v, cross;
		tot = nt + n;
		r = 1.0f / tot;
		delta = mean - mt;
		a = mean * n;
		b = nt * mt;
		a = a + b;
		mean = a * r;
		v = var * n;
		v = v + m2;
		v = v * r;
		cross = nt * n;
		cross = cross * delta;
		cross = cross * delta;
		cross = cross * r;
		cross = cross * r;
		var = v + cross;
		n = n + nt;
	}
	out[0] = mean;
	out[1] = var;
}

/* BNStatsAggregate: outs[0] [P, 2] from ins[0] [P, 6k]. */
int ls_exec_bnaggr(ls_exec *x)
{
	const ls_opnd *src = &x->si->ins[0], *dst = &x->si->outs[0];
	int64_t P = src->parts, n = src->free;
	float *f, out[2];
	uint8_t *b;
	int rc;

	if (n < 6 || n % 6 != 0 || n * P != src->count)
		return ls_xfail(x, LM_EINPUT, "ins[0] must hold a multiple of "
				"6 statistics in each partition (BNStats "
				"results), got %lld elements over %lld "
				"partitions", (long long)src->count,
				(long long)P);
	if ((rc = check_io(x, 2)) != 0)
		return rc;
	f = ls_xscratch(x, 0, src->count * 4);
	if ((rc = read_in(x, f)) != 0)
		return rc;
	b = ls_xstage(x, 0);
	for (int64_t p = 0; p < P; p++) {
		aggr_row(f + p * n, n / 3, out);
		ls_f32_to_dtype(dst->dtype, out, b + 2 * p * dst->esize, 2);
	}
	return 0;
}

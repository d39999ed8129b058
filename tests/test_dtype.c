/*
** test_dtype.c -- dtype names and sizes, and the bit-exact conversions.
**
** The 16-bit and 8-bit formats are checked exhaustively: every pattern
** widens to the value an independent ldexp-based decoder gives, narrows
** back to itself, and every rounding boundary (the float32 midpoint between
** two neighbours, and one float32 ulp either side of it) rounds the right
** way. A strided sweep over float32 compares the narrowing conversions with
** a nearest-value search in double arithmetic and, for float16, with the
** compiler's own _Float16 conversion.
*/
#include "common.h"
#include "dtype.h"
#include "testutil.h"

#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
** Assert for the hot loops: check's ck_assert records a mark point (a
** write to its report channel) on every success, which would dominate
** millions of checks; this one only calls into check on failure.
*/
#define HOT_ASSERT(expr, ...)                                               \
	do {                                                                \
		if (!(expr))                                                \
			ck_abort_msg(__VA_ARGS__);                          \
	} while (0)

/* ---- independent reference: formats decoded with ldexp ------------------ */

/* A small float format for the reference decoder and oracle. */
typedef struct ref_fmt {
	const char *name;
	int ebits, mbits;
	int has_inf;           /* IEEE-like; 0 = e4m3fn (saturating) */
	uint32_t (*narrow)(float);
	float (*widen)(uint32_t);
} ref_fmt;

/* Adapters from the typed conversions to ref_fmt's uniform signatures. */
static uint32_t nar_bf16(float f) { return lm_f32_to_bf16(f); }
static float wid_bf16(uint32_t h) { return lm_bf16_to_f32((uint16_t)h); }
static uint32_t nar_f16(float f) { return lm_f32_to_f16(f); }
static float wid_f16(uint32_t h) { return lm_f16_to_f32((uint16_t)h); }
static uint32_t nar_e4(float f) { return lm_f32_to_f8e4(f); }
static float wid_e4(uint32_t h) { return lm_f8e4_to_f32((uint8_t)h); }
static uint32_t nar_e5(float f) { return lm_f32_to_f8e5(f); }
static float wid_e5(uint32_t h) { return lm_f8e5_to_f32((uint8_t)h); }

/* float8e3 only through the generic element API (e3m4, IEEE-like). */
static uint32_t nar_e3(float f)
{
	uint8_t b;
	lm_store_elem(LM_DT_FLOAT8E3, &b, f);
	return b;
}
static float wid_e3(uint32_t h)
{
	uint8_t b = (uint8_t)h;
	return lm_load_elem(LM_DT_FLOAT8E3, &b);
}

/* A dtype reached only through the generic element API. */
#define ELEM_ADAPTERS(NAME, DT)                                             \
	static uint32_t nar_##NAME(float f)                                  \
	{                                                                   \
		uint8_t b;                                                  \
		lm_store_elem(DT, &b, f);                                   \
		return b;                                                   \
	}                                                                   \
	static float wid_##NAME(uint32_t h)                                  \
	{                                                                   \
		uint8_t b = (uint8_t)h;                                     \
		return lm_load_elem(DT, &b);                                \
	}
ELEM_ADAPTERS(e4m3, LM_DT_FLOAT8_E4M3)
ELEM_ADAPTERS(e4m3fn, LM_DT_FLOAT8_E4M3FN)
ELEM_ADAPTERS(e5m2, LM_DT_FLOAT8_E5M2)

static const ref_fmt FMTS[] = {
	{"bfloat16", 8, 7, 1, nar_bf16, wid_bf16},
	{"float16", 5, 10, 1, nar_f16, wid_f16},
	{"float8e4", 4, 3, 0, nar_e4, wid_e4},
	{"float8e5", 5, 2, 1, nar_e5, wid_e5},
	{"float8e3", 3, 4, 1, nar_e3, wid_e3},
	{"float8_e4m3", 4, 3, 0, nar_e4m3, wid_e4m3},
	{"float8_e4m3fn", 4, 3, 0, nar_e4m3fn, wid_e4m3fn},
	{"float8_e5m2", 5, 2, 1, nar_e5m2, wid_e5m2},
};
enum { N_FMTS = sizeof FMTS / sizeof FMTS[0] };

static int fmt_bits(const ref_fmt *f) { return 1 + f->ebits + f->mbits; }
static uint32_t fmt_count(const ref_fmt *f) { return 1u << fmt_bits(f); }
static uint32_t fmt_sign(const ref_fmt *f) { return 1u << (fmt_bits(f) - 1); }

/* 1 if pattern h of format f is a NaN. */
static int ref_isnan(const ref_fmt *f, uint32_t h)
{
	uint32_t e = (h >> f->mbits) & ((1u << f->ebits) - 1);
	uint32_t m = h & ((1u << f->mbits) - 1);
	if (f->has_inf)
		return e == (1u << f->ebits) - 1 && m != 0;
	return e == (1u << f->ebits) - 1 && m == (1u << f->mbits) - 1;
}

/* The largest finite positive pattern of format f. */
static uint32_t ref_maxfin(const ref_fmt *f)
{
	uint32_t emax = (1u << f->ebits) - 1;
	if (f->has_inf)
		return (emax << f->mbits) - 1;
	return (emax << f->mbits) | ((1u << f->mbits) - 2);
}

/* Decode pattern h of f as a double with ldexp (NaN for NaN patterns). */
static double ref_decode(const ref_fmt *f, uint32_t h)
{
	int bias = (1 << (f->ebits - 1)) - 1;
	uint32_t emax = (1u << f->ebits) - 1;
	uint32_t e = (h >> f->mbits) & emax;
	uint32_t m = h & ((1u << f->mbits) - 1);
	double s = (h & fmt_sign(f)) ? -1.0 : 1.0;

	if (ref_isnan(f, h))
		return NAN;
	if (f->has_inf && e == emax)
		return s * INFINITY;
	if (e == 0)
		return s * ldexp((double)m, 1 - bias - f->mbits);
	return s * ldexp((double)((1u << f->mbits) | m),
			 (int)e - bias - f->mbits);
}

/*
** The correctly rounded pattern for x in format f, found by a binary
** search over the decoded positive values (table: pattern i at index i)
** and an explicit tie rule. x is not NaN.
*/
static uint32_t ref_round(const ref_fmt *f, const double *table, double x)
{
	uint32_t sign = signbit(x) ? fmt_sign(f) : 0;
	uint32_t maxfin = ref_maxfin(f), lo = 0, hi = maxfin, mid;
	double ax = fabs(x), top;

	if (isinf(x))   /* Inf, or for e4m3fn the NaN pattern 0x7f */
		return sign | (maxfin + 1);
	top = table[maxfin] + (table[maxfin] - table[maxfin - 1]) / 2;
	if (ax >= top)   /* max is odd: the tie goes up, to Inf */
		return f->has_inf ? sign | (maxfin + 1) : sign | maxfin;
	if (ax >= table[maxfin])
		return sign | maxfin;
	/* table[lo] <= ax < table[hi] */
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (table[mid] <= ax)
			lo = mid;
		else
			hi = mid;
	}
	if (ax - table[lo] < table[hi] - ax)
		return sign | lo;
	if (ax - table[lo] > table[hi] - ax)
		return sign | hi;
	return sign | ((lo & 1) ? hi : lo);
}

/* ---- names and sizes ------------------------------------------------------ */

START_TEST(test_names)
{
	static const struct { const char *name; int size; int is_float; } t[] = {
		{"float32", 4, 1}, {"bfloat16", 2, 1}, {"float16", 2, 1},
		{"float8e4", 1, 1}, {"float8e5", 1, 1}, {"float8e3", 1, 0},
		{"float32r", 4, 1}, {"int8", 1, 0}, {"int16", 2, 0},
		{"int32", 4, 0}, {"int64", 8, 0}, {"uint8", 1, 0},
		{"uint16", 2, 0}, {"uint32", 4, 0}, {"uint64", 8, 0},
		{"float8_e4m3", 1, 1}, {"float8_e4m3fn", 1, 1},
		{"float8_e5m2", 1, 1},
	};
	size_t i;
	ck_assert_int_eq(sizeof t / sizeof t[0], LM_DT_COUNT - 1);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		lm_dtype d = lm_dtype_parse(t[i].name);
		ck_assert_int_ne(d, LM_DT_INVALID);
		ck_assert_str_eq(lm_dtype_name(d), t[i].name);
		ck_assert_int_eq(lm_dtype_size(d), t[i].size);
		ck_assert_int_eq(lm_dtype_is_float(d), t[i].is_float);
	}
	ck_assert_int_eq(lm_dtype_parse("float64"), LM_DT_INVALID);
	ck_assert_int_eq(lm_dtype_parse("Float32"), LM_DT_INVALID);
	ck_assert_int_eq(lm_dtype_parse(""), LM_DT_INVALID);
	ck_assert_int_eq(lm_dtype_parse(NULL), LM_DT_INVALID);
	ck_assert_int_eq(lm_dtype_size(LM_DT_INVALID), 0);
	ck_assert_int_eq(lm_dtype_size(LM_DT_COUNT), 0);
	ck_assert_int_eq(lm_dtype_is_float(LM_DT_INVALID), 0);
	ck_assert_str_eq(lm_dtype_name(LM_DT_INVALID), "invalid");
	ck_assert_uint_eq(lm_f32_bits(1.0f), 0x3f800000u);
	ck_assert(lm_bits_f32(0xc0000000u) == -2.0f);
}
END_TEST

/* ---- exhaustive: widening and round trips --------------------------------- */

/* Every pattern of format f: widening agrees with ref_decode; non-NaN
** patterns come back unchanged; NaN stays NaN (sign kept). */
static void check_exhaustive(const ref_fmt *f)
{
	uint32_t h, n = fmt_count(f), back;
	double ref;
	float w;

	for (h = 0; h < n; h++) {
		w = f->widen(h);
		ref = ref_decode(f, h);
		back = f->narrow(w);
		if (isnan(ref)) {
			HOT_ASSERT(isnan(w), "%s %#x: widened not NaN",
				   f->name, h);
			HOT_ASSERT(ref_isnan(f, back), "%s %#x: NaN came back "
				   "as %#x", f->name, h, back);
			HOT_ASSERT((back & fmt_sign(f)) == (h & fmt_sign(f)),
				   "%s %#x: NaN sign lost", f->name, h);
			continue;
		}
		HOT_ASSERT((double)w == ref &&
			   !signbit(w) == !signbit(ref),
			   "%s %#x: widened %a, reference %a", f->name, h,
			   (double)w, ref);
		HOT_ASSERT(back == h, "%s %#x: round trip gave %#x",
			   f->name, h, back);
	}
}

START_TEST(test_exhaustive_bf16) { check_exhaustive(&FMTS[0]); }
END_TEST
START_TEST(test_exhaustive_f16) { check_exhaustive(&FMTS[1]); }
END_TEST
START_TEST(test_exhaustive_f8)
{
	check_exhaustive(&FMTS[2]);
	check_exhaustive(&FMTS[3]);
	check_exhaustive(&FMTS[4]);
	check_exhaustive(&FMTS[5]);
	check_exhaustive(&FMTS[6]);
	check_exhaustive(&FMTS[7]);
}
END_TEST

/* bfloat16 widening is exactly the top half of the float32 pattern. */
START_TEST(test_bf16_widen_bits)
{
	uint32_t h;
	for (h = 0; h < 65536; h++)
		HOT_ASSERT(lm_f32_bits(lm_bf16_to_f32((uint16_t)h)) == h << 16,
			   "bfloat16 %#x", h);
}
END_TEST

/* ---- exhaustive: rounding boundaries -------------------------------------- */

/* Next float32 above (dir > 0) or below (dir < 0) in magnitude. */
static float step_mag(float x, int dir)
{
	return lm_bits_f32(lm_f32_bits(x) + (dir > 0 ? 1u : (uint32_t)-1));
}

/*
** For every pair of neighbours (h, h+1) with h finite and >= 0: the float32
** midpoint rounds to the even one, one float32 ulp below it rounds to h,
** one above to h+1; the same negated. The last pair of an IEEE format has
** h+1 = Inf (the overflow threshold); for a saturating format values above
** the maximum stay at the maximum.
*/
static void check_boundaries(const ref_fmt *f)
{
	uint32_t h, maxfin = ref_maxfin(f), s = fmt_sign(f), last;
	uint32_t hi, even;
	double a, b;
	float mid, below, above;
	int neg;

	last = f->has_inf ? maxfin : maxfin - 1;
	for (h = 0; h <= last; h++) {
		a = ref_decode(f, h);
		b = f->has_inf && h == maxfin
			    ? a + (a - ref_decode(f, h - 1)) /* "2^emax+1" */
			    : ref_decode(f, h + 1);
		mid = (float)((a + b) / 2); /* exact */
		HOT_ASSERT((double)mid == (a + b) / 2, "%s %#x: midpoint "
			   "not exact", f->name, h);
		below = step_mag(mid, -1);
		above = step_mag(mid, +1);
		hi = h + 1;
		even = (h & 1) ? hi : h;
		for (neg = 0; neg < 2; neg++) {
			uint32_t sg = neg ? s : 0;
			float m = neg ? -mid : mid;
			float lo_ = neg ? -below : below;
			float hi_ = neg ? -above : above;
			HOT_ASSERT(f->narrow(m) == (sg | even),
				   "%s: midpoint %a of %#x/%#x gave %#x",
				   f->name, (double)m, h, hi, f->narrow(m));
			HOT_ASSERT(f->narrow(lo_) == (sg | h),
				   "%s: %a below the midpoint of %#x/%#x "
				   "gave %#x", f->name, (double)lo_, h, hi,
				   f->narrow(lo_));
			HOT_ASSERT(f->narrow(hi_) == (sg | hi),
				   "%s: %a above the midpoint of %#x/%#x "
				   "gave %#x", f->name, (double)hi_, h, hi,
				   f->narrow(hi_));
		}
	}
}

START_TEST(test_boundaries_bf16) { check_boundaries(&FMTS[0]); }
END_TEST
START_TEST(test_boundaries_f16) { check_boundaries(&FMTS[1]); }
END_TEST
START_TEST(test_boundaries_f8)
{
	check_boundaries(&FMTS[2]);
	check_boundaries(&FMTS[3]);
	check_boundaries(&FMTS[4]);
	check_boundaries(&FMTS[5]);
	check_boundaries(&FMTS[6]);
	check_boundaries(&FMTS[7]);
}
END_TEST

/* The conversions do not depend on the FPU rounding mode. */
START_TEST(test_rounding_mode_independent)
{
	static const int modes[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
	size_t i;
	int k;
	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		ck_assert_int_eq(fesetround(modes[i]), 0);
		for (k = 0; k < N_FMTS; k++)
			check_boundaries(&FMTS[k]);
		ck_assert_int_eq(fesetround(FE_TONEAREST), 0);
	}
}
END_TEST

/* ---- strided sweeps over float32 against independent oracles ------------ */

/* Every stride-th float32 pattern, narrowed by f and by ref_round. */
static void check_sweep(const ref_fmt *f, uint32_t stride)
{
	uint32_t n = fmt_count(f) / 2, i, got, want;
	double *table = lm_xmalloc(n * sizeof *table);
	uint64_t u;
	float x;

	for (i = 0; i < n; i++)
		table[i] = ref_isnan(f, i) ? INFINITY : ref_decode(f, i);
	for (u = 0; u < ((uint64_t)1 << 32); u += stride) {
		x = lm_bits_f32((uint32_t)u);
		got = f->narrow(x);
		if (isnan(x)) {
			HOT_ASSERT(ref_isnan(f, got), "%s: NaN %#x gave %#x",
				   f->name, (uint32_t)u, got);
			continue;
		}
		want = ref_round(f, table, (double)x);
		HOT_ASSERT(got == want, "%s: %a (%#x) gave %#x, want %#x",
			   f->name, (double)x, (uint32_t)u, got, want);
	}
	free(table);
}

START_TEST(test_sweep_bf16) { check_sweep(&FMTS[0], 1021); }
END_TEST
START_TEST(test_sweep_f16) { check_sweep(&FMTS[1], 1021); }
END_TEST
START_TEST(test_sweep_f8)
{
	check_sweep(&FMTS[2], 4093);
	check_sweep(&FMTS[3], 4093);
	check_sweep(&FMTS[4], 4093);
	check_sweep(&FMTS[5], 4093);
	check_sweep(&FMTS[6], 4093);
	check_sweep(&FMTS[7], 4093);
}
END_TEST

#if defined(__FLT16_MAX__)
/* float16 against the compiler's _Float16 conversion (libgcc soft-fp). */
START_TEST(test_sweep_f16_compiler)
{
	uint64_t u;
	uint16_t want, got;
	_Float16 h;
	float x;

	for (u = 7; u < ((uint64_t)1 << 32); u += 1021) {
		x = lm_bits_f32((uint32_t)u);
		h = (_Float16)x;
		memcpy(&want, &h, 2);
		got = lm_f32_to_f16(x);
		if (isnan(x))
			HOT_ASSERT((got & 0x7c00) == 0x7c00 && (got & 0x3ff)
				   && (got & 0x8000) == (want & 0x8000),
				   "NaN %#x gave %#x", (uint32_t)u, got);
		else
			HOT_ASSERT(got == want, "%a (%#x): %#x, compiler "
				   "%#x", (double)x, (uint32_t)u, got, want);
	}
	for (u = 0; u < 65536; u++) {
		memcpy(&h, &(uint16_t){(uint16_t)u}, 2);
		x = (float)h;
		if (!isnan(x))
			HOT_ASSERT(lm_f32_bits(x) ==
				   lm_f32_bits(lm_f16_to_f32((uint16_t)u)),
				   "widening %#x differs from the compiler's",
				   (unsigned)u);
	}
}
END_TEST
#endif

/* ---- named cases ---------------------------------------------------------- */

START_TEST(test_overflow_thresholds)
{
	/* float16: max 65504, threshold 65520 (tie goes to even = Inf). */
	ck_assert_uint_eq(lm_f32_to_f16(65504.0f), 0x7bff);
	ck_assert_uint_eq(lm_f32_to_f16(nextafterf(65520.0f, 0)), 0x7bff);
	ck_assert_uint_eq(lm_f32_to_f16(65520.0f), 0x7c00);
	ck_assert_uint_eq(lm_f32_to_f16(-65520.0f), 0xfc00);
	ck_assert_uint_eq(lm_f32_to_f16(1e10f), 0x7c00);
	ck_assert_uint_eq(lm_f32_to_f16(FLT_MAX), 0x7c00);
	ck_assert_uint_eq(lm_f32_to_f16(INFINITY), 0x7c00);
	ck_assert_uint_eq(lm_f32_to_f16(-INFINITY), 0xfc00);
	/* bfloat16: FLT_MAX rounds up to Inf, 0x7f7f0000 stays. */
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x7f7f0000u)), 0x7f7f);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x7f7f7fffu)), 0x7f7f);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x7f7f8000u)), 0x7f80);
	ck_assert_uint_eq(lm_f32_to_bf16(FLT_MAX), 0x7f80);
	ck_assert_uint_eq(lm_f32_to_bf16(-FLT_MAX), 0xff80);
	ck_assert_uint_eq(lm_f32_to_bf16(INFINITY), 0x7f80);
	/* float8e5: max 57344, threshold 61440. */
	ck_assert_uint_eq(lm_f32_to_f8e5(57344.0f), 0x7b);
	ck_assert_uint_eq(lm_f32_to_f8e5(nextafterf(61440.0f, 0)), 0x7b);
	ck_assert_uint_eq(lm_f32_to_f8e5(61440.0f), 0x7c);
	ck_assert_uint_eq(lm_f32_to_f8e5(-1e30f), 0xfc);
	ck_assert_uint_eq(lm_f32_to_f8e5(INFINITY), 0x7c);
	ck_assert(isinf(lm_f8e5_to_f32(0x7c)) && lm_f8e5_to_f32(0x7c) > 0);
	ck_assert(isinf(lm_f8e5_to_f32(0xfc)) && lm_f8e5_to_f32(0xfc) < 0);
	/* float8e4 (e4m3fn): saturates at 448, Inf included. */
	ck_assert(lm_f8e4_to_f32(0x7e) == 448.0f);
	ck_assert(lm_f8e4_to_f32(0xfe) == -448.0f);
	ck_assert_uint_eq(lm_f32_to_f8e4(448.0f), 0x7e);
	ck_assert_uint_eq(lm_f32_to_f8e4(464.0f), 0x7e);
	ck_assert_uint_eq(lm_f32_to_f8e4(480.0f), 0x7e);
	ck_assert_uint_eq(lm_f32_to_f8e4(1e30f), 0x7e);
	ck_assert_uint_eq(lm_f32_to_f8e4(FLT_MAX), 0x7e);
	ck_assert_uint_eq(lm_f32_to_f8e4(-1e30f), 0xfe);
	ck_assert_uint_eq(lm_f32_to_f8e4(INFINITY), 0x7e);
	ck_assert_uint_eq(lm_f32_to_f8e4(-INFINITY), 0xfe);
	ck_assert(isnan(lm_f8e4_to_f32(0x7f)) && isnan(lm_f8e4_to_f32(0xff)));
	ck_assert(!signbit(lm_f8e4_to_f32(0x7f)) && signbit(lm_f8e4_to_f32(0xff)));
	/* 0x78..0x7e are normal numbers in e4m3fn (256..448). */
	ck_assert(lm_f8e4_to_f32(0x78) == 256.0f);
	ck_assert(lm_f8e4_to_f32(0x7d) == 416.0f);
}
END_TEST

/*
** float8e4 (e4m3fn) at the top of its range: the saturating conversion
** (docs/dtypes.md). The grid there is 256 * (1 + m/8): ..., 416, 448; 432
** is the tie between them (even mantissa: 448); 464 is the midpoint above
** 448, where a non-saturating cast (OCP "overflow to NaN", ml_dtypes)
** starts giving NaN; here everything above saturates.
*/
START_TEST(test_f8e4_saturation)
{
	static const struct { float f; uint8_t want; } cases[] = {
		{ 416.0f, 0x7d }, { 431.99997f, 0x7d }, { 432.0f, 0x7e },
		{ 447.99997f, 0x7e }, { 448.0f, 0x7e }, { 448.00003f, 0x7e },
		{ 463.99997f, 0x7e }, { 464.0f, 0x7e }, { 464.00003f, 0x7e },
		{ 465.0f, 0x7e }, { 480.0f, 0x7e }, { 1e6f, 0x7e },
		{ FLT_MAX, 0x7e }, { INFINITY, 0x7e },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		float f = cases[i].f;
		uint8_t b;
		ck_assert_msg(lm_f32_to_f8e4(f) == cases[i].want, "%.9g -> 0x%02x",
			      f, lm_f32_to_f8e4(f));
		ck_assert_msg(lm_f32_to_f8e4(-f) == (cases[i].want | 0x80),
			      "%.9g -> 0x%02x", -f, lm_f32_to_f8e4(-f));
		/* the element store and lm_round_to agree */
		lm_store_elem(LM_DT_FLOAT8E4, &b, f);
		ck_assert_uint_eq(b, cases[i].want);
		ck_assert(lm_round_to(LM_DT_FLOAT8E4, -f) ==
			  lm_f8e4_to_f32(cases[i].want | 0x80));
	}
	ck_assert(lm_round_to(LM_DT_FLOAT8E4, INFINITY) == 448.0f);
	ck_assert(lm_round_to(LM_DT_FLOAT8E4, -INFINITY) == -448.0f);
	/* NaN, of either sign and any payload, is the NaN pattern of its sign */
	ck_assert_uint_eq(lm_f32_to_f8e4(NAN), 0x7f);
	ck_assert_uint_eq(lm_f32_to_f8e4(-NAN), 0xff);
	ck_assert_uint_eq(lm_f32_to_f8e4(lm_bits_f32(0x7f800001u)), 0x7f);
	ck_assert_uint_eq(lm_f32_to_f8e4(lm_bits_f32(0xffbfffffu)), 0xff);
	ck_assert(isnan(lm_round_to(LM_DT_FLOAT8E4, NAN)));
}
END_TEST

/*
** The NKI / KLR spellings: float8_e4m3 and float8_e4m3fn have float8e4's
** format, float8_e5m2 float8e5's (docs/dtypes.md). Hand-decoded codes of
** each, then every code and every float32 boundary gives the same bits as
** the legacy name.
*/
START_TEST(test_f8_spellings)
{
	static const struct { uint8_t b; float e4, e5; } codes[] = {
		{ 0x00, 0.0f, 0.0f },
		{ 0x01, 0x1p-9f, 0x1p-16f },    /* least subnormal */
		{ 0x07, 0x7p-9f, 0x7p-16f },    /* e4: largest subnormal */
		{ 0x08, 0x1p-6f, 0x1p-13f },
		{ 0x04, 0x4p-9f, 0x1p-14f },    /* e5: least normal */
		{ 0x38, 1.0f, 0.5f },
		{ 0x3c, 1.5f, 1.0f },
		{ 0x7b, 0x1.6p+8f, 57344.0f },   /* 352; e5 max finite */
		{ 0x7e, 448.0f, NAN },           /* e4 max finite */
		{ 0xb8, -1.0f, -0.5f },
		{ 0xc0, -2.0f, -2.0f },
	};
	static const lm_dtype e4[] = { LM_DT_FLOAT8_E4M3, LM_DT_FLOAT8_E4M3FN };
	uint8_t b, x, y;
	float f;

	for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
		b = codes[i].b;
		for (int k = 0; k < 2; k++)
			ck_assert_msg(lm_load_elem(e4[k], &b) == codes[i].e4,
				      "%s 0x%02x", lm_dtype_name(e4[k]), b);
		if (!isnan(codes[i].e5))
			ck_assert_msg(lm_load_elem(LM_DT_FLOAT8_E5M2, &b) ==
				      codes[i].e5, "float8_e5m2 0x%02x", b);
	}
	b = 0x80; /* -0 */
	ck_assert(signbit(lm_load_elem(LM_DT_FLOAT8_E4M3FN, &b)));
	ck_assert(signbit(lm_load_elem(LM_DT_FLOAT8_E5M2, &b)));
	b = 0x7f;
	ck_assert(isnan(lm_load_elem(LM_DT_FLOAT8_E4M3, &b)));
	ck_assert(isnan(lm_load_elem(LM_DT_FLOAT8_E5M2, &b)));
	b = 0x7c;
	ck_assert(isinf(lm_load_elem(LM_DT_FLOAT8_E5M2, &b)));
	ck_assert(lm_load_elem(LM_DT_FLOAT8_E4M3, &b) == 384.0f);
	/* saturation (e4m3) and overflow to Inf (e5m2) */
	lm_store_elem(LM_DT_FLOAT8_E4M3, &x, -INFINITY);
	ck_assert_uint_eq(x, 0xfe);
	lm_store_elem(LM_DT_FLOAT8_E4M3FN, &x, 1e9f);
	ck_assert_uint_eq(x, 0x7e);
	lm_store_elem(LM_DT_FLOAT8_E5M2, &x, 61440.0f);
	ck_assert_uint_eq(x, 0x7c);

	for (int c = 0; c < 256; c++) {
		b = (uint8_t)c;
		for (int k = 0; k < 2; k++) {
			float w = lm_load_elem(e4[k], &b);
			float r = lm_f8e4_to_f32(b);
			HOT_ASSERT(lm_f32_bits(w) == lm_f32_bits(r), "%s 0x%02x",
				   lm_dtype_name(e4[k]), c);
		}
		HOT_ASSERT(lm_f32_bits(lm_load_elem(LM_DT_FLOAT8_E5M2, &b)) ==
			   lm_f32_bits(lm_f8e5_to_f32(b)), "e5m2 0x%02x", c);
	}
	/* every float32 whose top 20 bits vary (the rest a fixed odd tail,
	** so ties are avoided and exact codes hit through the zero tail) */
	for (uint32_t u = 0; u < (1u << 20); u++) {
		for (uint32_t tail = 0; tail < 0x1000; tail += 0xfff) {
			f = lm_bits_f32(u << 12 | tail);
			lm_store_elem(LM_DT_FLOAT8_E4M3, &x, f);
			lm_store_elem(LM_DT_FLOAT8_E4M3FN, &y, f);
			HOT_ASSERT(x == lm_f32_to_f8e4(f) && y == x,
				   "e4m3 %#x", u << 12 | tail);
			lm_store_elem(LM_DT_FLOAT8_E5M2, &x, f);
			HOT_ASSERT(x == lm_f32_to_f8e5(f), "e5m2 %#x",
				   u << 12 | tail);
		}
	}
	ck_assert_int_eq(lm_dtype_format(LM_DT_FLOAT8_E4M3), LM_DT_FLOAT8E4);
	ck_assert_int_eq(lm_dtype_format(LM_DT_FLOAT8_E4M3FN), LM_DT_FLOAT8E4);
	ck_assert_int_eq(lm_dtype_format(LM_DT_FLOAT8_E5M2), LM_DT_FLOAT8E5);
	ck_assert_int_eq(lm_dtype_format(LM_DT_INT8), LM_DT_INT8);
	ck_assert(lm_dtype_is_int(LM_DT_UINT64) && !lm_dtype_is_int(
		  LM_DT_FLOAT8_E5M2));
	ck_assert(lm_dtype_is_signed_int(LM_DT_INT16) &&
		  !lm_dtype_is_signed_int(LM_DT_UINT16));
}
END_TEST

START_TEST(test_subnormals)
{
	/* float16: least subnormal 2^-24, least normal 2^-14. */
	ck_assert(lm_f16_to_f32(0x0001) == ldexpf(1, -24));
	ck_assert(lm_f16_to_f32(0x03ff) == ldexpf(1023, -24));
	ck_assert(lm_f16_to_f32(0x0400) == ldexpf(1, -14));
	ck_assert_uint_eq(lm_f32_to_f16(ldexpf(1, -24)), 0x0001);
	ck_assert_uint_eq(lm_f32_to_f16(ldexpf(1, -25)), 0x0000);
	ck_assert_uint_eq(lm_f32_to_f16(nextafterf(ldexpf(1, -25), 1)), 0x0001);
	ck_assert_uint_eq(lm_f32_to_f16(ldexpf(3, -25)), 0x0002);
	ck_assert_uint_eq(lm_f32_to_f16(ldexpf(2047, -25)), 0x0400);
	ck_assert_uint_eq(lm_f32_to_f16(ldexpf(1, -30)), 0x0000);
	ck_assert_uint_eq(lm_f32_to_f16(-ldexpf(1, -30)), 0x8000);
	ck_assert_uint_eq(lm_f32_to_f16(lm_bits_f32(1)), 0x0000);
	ck_assert_uint_eq(lm_f32_to_f16(ldexpf(1, -14)), 0x0400);
	/* bfloat16 subnormals are float32 subnormals. */
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x00000001u)), 0x0000);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x00008000u)), 0x0000);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x00008001u)), 0x0001);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x00018000u)), 0x0002);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x007fffffu)), 0x0080);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x807f8000u)), 0x8080);
	/* float8: least subnormals 2^-9 (e4) and 2^-16 (e5). */
	ck_assert(lm_f8e4_to_f32(0x01) == ldexpf(1, -9));
	ck_assert(lm_f8e4_to_f32(0x08) == ldexpf(1, -6));
	ck_assert(lm_f8e5_to_f32(0x01) == ldexpf(1, -16));
	ck_assert(lm_f8e5_to_f32(0x04) == ldexpf(1, -14));
	ck_assert_uint_eq(lm_f32_to_f8e4(ldexpf(1, -10)), 0x00);
	ck_assert_uint_eq(lm_f32_to_f8e4(ldexpf(3, -11)), 0x01);
	ck_assert_uint_eq(lm_f32_to_f8e4(-ldexpf(1, -10)), 0x80);
	ck_assert_uint_eq(lm_f32_to_f8e5(ldexpf(1, -17)), 0x00);
	ck_assert_uint_eq(lm_f32_to_f8e5(ldexpf(3, -17)), 0x02);
}
END_TEST

START_TEST(test_signed_zero)
{
	ck_assert_uint_eq(lm_f32_to_f16(0.0f), 0x0000);
	ck_assert_uint_eq(lm_f32_to_f16(-0.0f), 0x8000);
	ck_assert_uint_eq(lm_f32_to_bf16(-0.0f), 0x8000);
	ck_assert_uint_eq(lm_f32_to_f8e4(-0.0f), 0x80);
	ck_assert_uint_eq(lm_f32_to_f8e5(-0.0f), 0x80);
	ck_assert(signbit(lm_f16_to_f32(0x8000)) && lm_f16_to_f32(0x8000) == 0);
	ck_assert(signbit(lm_bf16_to_f32(0x8000)));
	ck_assert(signbit(lm_f8e4_to_f32(0x80)));
	ck_assert(signbit(lm_f8e5_to_f32(0x80)));
	ck_assert(signbit(lm_round_to(LM_DT_FLOAT16, -1e-30f)));
	ck_assert(!signbit(lm_round_to(LM_DT_FLOAT16, 1e-30f)));
}
END_TEST

START_TEST(test_nan_payloads)
{
	/* Payload truncated, quiet bit set, never Inf; sign kept. */
	ck_assert_uint_eq(lm_f32_to_f16(lm_bits_f32(0x7fc00000u)), 0x7e00);
	ck_assert_uint_eq(lm_f32_to_f16(lm_bits_f32(0xffc00000u)), 0xfe00);
	ck_assert_uint_eq(lm_f32_to_f16(lm_bits_f32(0x7f800001u)), 0x7e00);
	ck_assert_uint_eq(lm_f32_to_f16(lm_bits_f32(0x7fa00000u)), 0x7f00);
	ck_assert_uint_eq(lm_f32_to_f16(lm_bits_f32(0x7fffffffu)), 0x7fff);
	ck_assert_uint_eq(lm_f32_to_f16(lm_bits_f32(0x7f802000u)), 0x7e01);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x7f800001u)), 0x7fc0);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x7f810000u)), 0x7fc1);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0xffffffffu)), 0xffff);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bits_f32(0x7fffffffu)), 0x7fff);
	ck_assert_uint_eq(lm_f32_to_f8e5(lm_bits_f32(0x7f800001u)), 0x7e);
	ck_assert_uint_eq(lm_f32_to_f8e5(lm_bits_f32(0xffc00000u)), 0xfe);
	ck_assert_uint_eq(lm_f32_to_f8e5(lm_bits_f32(0x7fe00000u)), 0x7f);
	ck_assert_uint_eq(lm_f32_to_f8e4(lm_bits_f32(0x7f800001u)), 0x7f);
	ck_assert_uint_eq(lm_f32_to_f8e4(lm_bits_f32(0xffc00000u)), 0xff);
	/* Widening keeps the payload exactly. */
	ck_assert_uint_eq(lm_f32_bits(lm_f16_to_f32(0x7c01)), 0x7f802000u);
	ck_assert_uint_eq(lm_f32_bits(lm_f16_to_f32(0xfe00)), 0xffc00000u);
	ck_assert_uint_eq(lm_f32_bits(lm_f8e5_to_f32(0x7d)), 0x7fa00000u);
	ck_assert_uint_eq(lm_f32_bits(lm_f8e4_to_f32(0xff)), 0xffc00000u);
	/* A signalling NaN comes back quiet. */
	ck_assert_uint_eq(lm_f32_to_f16(lm_f16_to_f32(0x7c01)), 0x7e01);
	ck_assert_uint_eq(lm_f32_to_bf16(lm_bf16_to_f32(0x7f81)), 0x7fc1);
}
END_TEST

START_TEST(test_ties_to_even)
{
	/* 1 + 2^-11 is the midpoint of 1 and 1+2^-10 in float16. */
	ck_assert_uint_eq(lm_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);
	ck_assert_uint_eq(lm_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
	ck_assert_uint_eq(lm_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
	ck_assert_uint_eq(lm_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);
	ck_assert_uint_eq(lm_f32_to_f8e4(1.0625f), 0x38);    /* 1 + 1/16 */
	ck_assert_uint_eq(lm_f32_to_f8e4(1.1875f), 0x3a);    /* 1 + 3/16 */
	ck_assert_uint_eq(lm_f32_to_f8e5(1.125f), 0x3c);
	ck_assert_uint_eq(lm_f32_to_f8e5(1.375f), 0x3e);
	/* Rounding up carries into the exponent. */
	ck_assert_uint_eq(lm_f32_to_f16(nextafterf(2.0f, 0)), 0x4000);
	ck_assert(lm_round_to(LM_DT_BFLOAT16, 1.00390625f) == 1.0f);
	ck_assert(lm_round_to(LM_DT_FLOAT16, 0.1f) == lm_f16_to_f32(0x2e66));
}
END_TEST

/* ---- element API ---------------------------------------------------------- */

START_TEST(test_elem_float)
{
	unsigned char buf[16];
	float f = 3.14159265f;

	/* Unaligned stores and loads. */
	lm_store_elem(LM_DT_FLOAT32, buf + 1, f);
	ck_assert(lm_load_elem(LM_DT_FLOAT32, buf + 1) == f);
	lm_store_elem(LM_DT_FLOAT32R, buf + 3, f);
	ck_assert(lm_load_elem(LM_DT_FLOAT32R, buf + 3) == f);
	lm_store_elem(LM_DT_BFLOAT16, buf + 1, f);
	ck_assert_uint_eq(buf[1] | buf[2] << 8, lm_f32_to_bf16(f));
	ck_assert(lm_load_elem(LM_DT_BFLOAT16, buf + 1) ==
		  lm_bf16_to_f32(lm_f32_to_bf16(f)));
	lm_store_elem(LM_DT_FLOAT16, buf + 5, f);
	ck_assert_uint_eq(buf[5] | buf[6] << 8, lm_f32_to_f16(f));
	lm_store_elem(LM_DT_FLOAT8E4, buf + 7, f);
	ck_assert_uint_eq(buf[7], lm_f32_to_f8e4(f));
	lm_store_elem(LM_DT_FLOAT8E5, buf + 8, f);
	ck_assert_uint_eq(buf[8], lm_f32_to_f8e5(f));
	ck_assert(lm_round_to(LM_DT_FLOAT32, f) == f);
	ck_assert(lm_round_to(LM_DT_FLOAT32R, f) == f);
	ck_assert(lm_round_to(LM_DT_FLOAT16, f) == lm_f16_to_f32(0x4248));
	ck_assert(lm_round_to(LM_DT_FLOAT8E4, f) == 3.25f);
	ck_assert(lm_round_to(LM_DT_FLOAT8E5, f) == 3.0f);
	ck_assert(lm_round_to(LM_DT_FLOAT8E3, f) == 3.125f);
	ck_assert(isnan(lm_round_to(LM_DT_BFLOAT16, NAN)));
	ck_assert(isinf(lm_round_to(LM_DT_FLOAT16, 1e6f)));
	ck_assert(lm_round_to(LM_DT_FLOAT8E4, 1e6f) == 448.0f);
	/* float8e3 is e3m4: bias 3, max 15.5, Inf at 0x70. */
	ck_assert(lm_round_to(LM_DT_FLOAT8E3, 15.5f) == 15.5f);
	ck_assert(isinf(lm_round_to(LM_DT_FLOAT8E3, 16.0f)));
	ck_assert(lm_round_to(LM_DT_FLOAT8E3, ldexpf(1, -6)) == ldexpf(1, -6));
}
END_TEST

/* Round f into integer dtype t and read it back as an int64. */
static int64_t int_store(lm_dtype t, float f)
{
	union { int8_t i8; int16_t i16; int32_t i32; int64_t i64;
		uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; } v;
	memset(&v, 0xa5, sizeof v);
	lm_store_elem(t, &v, f);
	switch (t) {
	case LM_DT_INT8: return v.i8;
	case LM_DT_INT16: return v.i16;
	case LM_DT_INT32: return v.i32;
	case LM_DT_INT64: return v.i64;
	case LM_DT_UINT8: return v.u8;
	case LM_DT_UINT16: return v.u16;
	case LM_DT_UINT32: return v.u32;
	default: return (int64_t)v.u64;
	}
}

START_TEST(test_elem_int)
{
	unsigned char b[8];
	uint64_t u;

	ck_assert_int_eq(int_store(LM_DT_INT8, 2.5f), 2);
	ck_assert_int_eq(int_store(LM_DT_INT8, 3.5f), 4);
	ck_assert_int_eq(int_store(LM_DT_INT8, -2.5f), -2);
	ck_assert_int_eq(int_store(LM_DT_INT8, -3.5f), -4);
	ck_assert_int_eq(int_store(LM_DT_INT8, 2.4999998f), 2);
	ck_assert_int_eq(int_store(LM_DT_INT8, -0.7f), -1);
	ck_assert_int_eq(int_store(LM_DT_INT8, 127.5f), 127);
	ck_assert_int_eq(int_store(LM_DT_INT8, -128.5f), -128);
	ck_assert_int_eq(int_store(LM_DT_INT8, 1e9f), 127);
	ck_assert_int_eq(int_store(LM_DT_INT8, -INFINITY), -128);
	ck_assert_int_eq(int_store(LM_DT_INT8, NAN), 0);
	ck_assert_int_eq(int_store(LM_DT_INT16, 40000.0f), 32767);
	ck_assert_int_eq(int_store(LM_DT_INT16, -40000.0f), -32768);
	ck_assert_int_eq(int_store(LM_DT_INT32, 3e9f), INT32_MAX);
	ck_assert_int_eq(int_store(LM_DT_INT32, -3e9f), INT32_MIN);
	ck_assert_int_eq(int_store(LM_DT_INT32, 2147483520.0f), 2147483520);
	ck_assert_int_eq(int_store(LM_DT_INT32, 16777217.0f), 16777216);
	ck_assert_int_eq(int_store(LM_DT_INT64, 1e19f), INT64_MAX);
	ck_assert_int_eq(int_store(LM_DT_INT64, -1e19f), INT64_MIN);
	ck_assert_int_eq(int_store(LM_DT_INT64, -9223372036854775808.0f),
			 INT64_MIN);
	ck_assert_int_eq(int_store(LM_DT_UINT8, -1.0f), 0);
	ck_assert_int_eq(int_store(LM_DT_UINT8, 255.5f), 255);
	ck_assert_int_eq(int_store(LM_DT_UINT8, 254.5f), 254);
	ck_assert_int_eq(int_store(LM_DT_UINT16, 70000.0f), 65535);
	ck_assert_int_eq(int_store(LM_DT_UINT32, 5e9f), UINT32_MAX);
	ck_assert_int_eq(int_store(LM_DT_UINT32, NAN), 0);
	u = (uint64_t)int_store(LM_DT_UINT64, 1.5e19f);
	ck_assert(u == (uint64_t)1.5e19f);
	u = (uint64_t)int_store(LM_DT_UINT64, 2e19f);
	ck_assert(u == UINT64_MAX);
	u = (uint64_t)int_store(LM_DT_UINT64, 0.5f);
	ck_assert(u == 0);
	u = (uint64_t)int_store(LM_DT_UINT64, 1.5f);
	ck_assert(u == 2);

	/* Loads widen exactly where float32 can hold the value. */
	memcpy(b, &(int16_t){-1234}, 2);
	ck_assert(lm_load_elem(LM_DT_INT16, b) == -1234.0f);
	memcpy(b, &(uint32_t){4000000000u}, 4);
	ck_assert(lm_load_elem(LM_DT_UINT32, b) == 4e9f);
	memcpy(b, &(int64_t){-(1LL << 40)}, 8);
	ck_assert(lm_load_elem(LM_DT_INT64, b) == -ldexpf(1, 40));
	b[0] = 0xff;
	ck_assert(lm_load_elem(LM_DT_UINT8, b) == 255.0f);
	ck_assert(lm_load_elem(LM_DT_INT8, b) == -1.0f);
	ck_assert(lm_round_to(LM_DT_INT32, 2.5f) == 2.0f);
	ck_assert(lm_round_to(LM_DT_UINT8, 300.0f) == 255.0f);
}
END_TEST

static Suite *dtype_suite(void)
{
	Suite *s = suite_create("dtype");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_exhaustive_bf16);
	tcase_add_test(tc, test_exhaustive_f16);
	tcase_add_test(tc, test_exhaustive_f8);
	tcase_add_test(tc, test_bf16_widen_bits);
	tcase_add_test(tc, test_boundaries_bf16);
	tcase_add_test(tc, test_boundaries_f16);
	tcase_add_test(tc, test_boundaries_f8);
	tcase_add_test(tc, test_rounding_mode_independent);
	tcase_add_test(tc, test_sweep_bf16);
	tcase_add_test(tc, test_sweep_f16);
	tcase_add_test(tc, test_sweep_f8);
#if defined(__FLT16_MAX__)
	tcase_add_test(tc, test_sweep_f16_compiler);
#endif
	tcase_add_test(tc, test_overflow_thresholds);
	tcase_add_test(tc, test_f8e4_saturation);
	tcase_add_test(tc, test_f8_spellings);
	tcase_add_test(tc, test_subnormals);
	tcase_add_test(tc, test_signed_zero);
	tcase_add_test(tc, test_nan_payloads);
	tcase_add_test(tc, test_ties_to_even);
	tcase_add_test(tc, test_elem_float);
	tcase_add_test(tc, test_elem_int);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(dtype_suite());
}

/*
** dtype.c -- element types and bit-exact conversions.
**
** Every narrowing conversion from float32 is done on the bit pattern with
** integer arithmetic only: the result does not depend on the FPU rounding
** mode, on -ffast-math or on the host having half-precision instructions.
** One generic routine (narrow_bits) handles all the small formats, each
** described by a minifloat_fmt; widening (widen_bits) is exact.
**
** Choices (see docs/dtypes.md):
**   - rounding is to nearest, ties to even, with gradual underflow;
**   - NaN stays NaN: sign kept, payload truncated, quiet bit set (so a
**     payload that truncates to zero never turns into Inf);
**   - widening is exact, NaN payload and quiet bit included;
**   - IEEE-like formats (bfloat16, float16, float8e5, float8e3) overflow to
**     +-Inf; float8e4 (e4m3fn, no Inf) saturates: finite overflow and +-Inf
**     become +-448 (0x7e / 0xfe), the saturating conversion of the OCP
**     OFP8 specification; only NaN becomes the NaN pattern 0x7f / 0xff.
*/
#include "common.h"
#include "dtype.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/*
** A binary floating-point format narrower than float32: ebits exponent
** bits, mbits mantissa bits, bias 2^(ebits-1)-1.  has_inf is 1 for the
** IEEE-like layout (all-ones exponent = Inf/NaN); 0 for the "fn" layout
** of e4m3fn, where only the all-ones pattern is NaN and the all-ones
** exponent otherwise holds normal numbers.
*/
typedef struct minifloat_fmt {
	int ebits;
	int mbits;
	int has_inf;
} minifloat_fmt;

static const minifloat_fmt FMT_BF16 = {8, 7, 1};
static const minifloat_fmt FMT_F16 = {5, 10, 1};
static const minifloat_fmt FMT_E4M3 = {4, 3, 0};
static const minifloat_fmt FMT_E5M2 = {5, 2, 1};
static const minifloat_fmt FMT_E3M4 = {3, 4, 1};

/* Names indexed by lm_dtype. */
static const char *const dtype_names[LM_DT_COUNT] = {
	[LM_DT_INVALID] = NULL,
	[LM_DT_FLOAT32] = "float32",
	[LM_DT_BFLOAT16] = "bfloat16",
	[LM_DT_FLOAT16] = "float16",
	[LM_DT_FLOAT8E4] = "float8e4",
	[LM_DT_FLOAT8E5] = "float8e5",
	[LM_DT_FLOAT8E3] = "float8e3",
	[LM_DT_FLOAT32R] = "float32r",
	[LM_DT_INT8] = "int8",
	[LM_DT_INT16] = "int16",
	[LM_DT_INT32] = "int32",
	[LM_DT_INT64] = "int64",
	[LM_DT_UINT8] = "uint8",
	[LM_DT_UINT16] = "uint16",
	[LM_DT_UINT32] = "uint32",
	[LM_DT_UINT64] = "uint64",
	[LM_DT_FLOAT8_E4M3] = "float8_e4m3",
	[LM_DT_FLOAT8_E4M3FN] = "float8_e4m3fn",
	[LM_DT_FLOAT8_E5M2] = "float8_e5m2",
};

/* Element sizes indexed by lm_dtype. */
static const int dtype_sizes[LM_DT_COUNT] = {
	[LM_DT_INVALID] = 0,
	[LM_DT_FLOAT32] = 4,
	[LM_DT_BFLOAT16] = 2,
	[LM_DT_FLOAT16] = 2,
	[LM_DT_FLOAT8E4] = 1,
	[LM_DT_FLOAT8E5] = 1,
	[LM_DT_FLOAT8E3] = 1,
	[LM_DT_FLOAT32R] = 4,
	[LM_DT_INT8] = 1,
	[LM_DT_INT16] = 2,
	[LM_DT_INT32] = 4,
	[LM_DT_INT64] = 8,
	[LM_DT_UINT8] = 1,
	[LM_DT_UINT16] = 2,
	[LM_DT_UINT32] = 4,
	[LM_DT_UINT64] = 8,
	[LM_DT_FLOAT8_E4M3] = 1,
	[LM_DT_FLOAT8_E4M3FN] = 1,
	[LM_DT_FLOAT8_E5M2] = 1,
};

/*
** The BIR spelling of t, or "invalid" for LM_DT_INVALID and out-of-range
** values (never NULL, so it can go straight into a message).
*/
const char *lm_dtype_name(lm_dtype t)
{
	if ((int)t <= LM_DT_INVALID || (int)t >= LM_DT_COUNT)
		return "invalid";
	return dtype_names[t];
}

/* The dtype spelled s (exact, case-sensitive), or LM_DT_INVALID. */
lm_dtype lm_dtype_parse(const char *s)
{
	int i;
	if (!s)
		return LM_DT_INVALID;
	for (i = LM_DT_INVALID + 1; i < LM_DT_COUNT; i++)
		if (strcmp(s, dtype_names[i]) == 0)
			return (lm_dtype)i;
	return LM_DT_INVALID;
}

/* Size in bytes of one element of t; 0 for INVALID or out of range. */
int lm_dtype_size(lm_dtype t)
{
	if ((int)t <= LM_DT_INVALID || (int)t >= LM_DT_COUNT)
		return 0;
	return dtype_sizes[t];
}

/* 1 for the types the simulator computes with (see dtype.h), else 0. */
int lm_dtype_is_float(lm_dtype t)
{
	switch (t) {
	case LM_DT_FLOAT32:
	case LM_DT_FLOAT32R:
	case LM_DT_BFLOAT16:
	case LM_DT_FLOAT16:
	case LM_DT_FLOAT8E4:
	case LM_DT_FLOAT8E5:
	case LM_DT_FLOAT8_E4M3:
	case LM_DT_FLOAT8_E4M3FN:
	case LM_DT_FLOAT8_E5M2:
		return 1;
	default:
		return 0;
	}
}

/* 1 for int8 .. uint64. */
int lm_dtype_is_int(lm_dtype t)
{
	return t >= LM_DT_INT8 && t <= LM_DT_UINT64;
}

/* 1 for int8 .. int64. */
int lm_dtype_is_signed_int(lm_dtype t)
{
	return t >= LM_DT_INT8 && t <= LM_DT_INT64;
}

/*
** The type with t's format. The compiler gives float8e4 and the KLR
** spelling float8_e4m3 one BIR type, and float8_e4m3fn the same hardware
** tag; float8_e5m2 is float8e5's NKI spelling.
*/
lm_dtype lm_dtype_format(lm_dtype t)
{
	switch (t) {
	case LM_DT_FLOAT8_E4M3:
	case LM_DT_FLOAT8_E4M3FN:
		return LM_DT_FLOAT8E4;
	case LM_DT_FLOAT8_E5M2:
		return LM_DT_FLOAT8E5;
	default:
		return t;
	}
}

/* The bit pattern of f. */
uint32_t lm_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* The float whose bit pattern is u. */
float lm_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/*
** Round the float32 pattern x to format fmt, to nearest, ties to even.
** Returns the narrow pattern in the low 1 + ebits + mbits bits.
*/
static uint32_t narrow_bits(uint32_t x, const minifloat_fmt *fmt)
{
	const int m = fmt->mbits;
	const int bias = (1 << (fmt->ebits - 1)) - 1;
	const int emin = 1 - bias;             /* exponent of the least normal */
	const uint32_t expmax = (1u << fmt->ebits) - 1;
	const uint32_t sign = (x >> 31) << (fmt->ebits + m);
	const uint32_t ax = x & 0x7fffffffu;
	/* fn formats: largest finite is all ones but the last mantissa bit. */
	const uint32_t maxfin = fmt->has_inf ? ((expmax << m) - 1)
					     : ((expmax << m) | ((1u << m) - 2));
	uint32_t sig, out, rem, half;
	int e, shift;

	if (ax > 0x7f800000u) {                /* NaN */
		if (!fmt->has_inf)
			return sign | (expmax << m) | ((1u << m) - 1);
		return sign | (expmax << m) | (1u << (m - 1)) |
		       ((ax & 0x7fffffu) >> (23 - m));
	}
	if (ax == 0x7f800000u)                 /* Inf: saturates in fn */
		return sign | (fmt->has_inf ? (expmax << m) : maxfin);

	/* ax = sig * 2^(e - 23), sig without the implicit bit if subnormal. */
	if (ax >> 23) {
		e = (int)(ax >> 23) - 127;
		sig = (ax & 0x7fffffu) | 0x800000u;
	} else {
		e = -126;
		sig = ax;
	}

	/* Overflow before rounding: exponent beyond the format's range. */
	if (e + bias >= (int)expmax + (fmt->has_inf ? 0 : 1))
		return sign | (fmt->has_inf ? (expmax << m) : maxfin);

	if (e >= emin) {
		shift = 23 - m;
		/*
		** The implicit bit adds 1 to the biased exponent. (Only for
		** bfloat16 can a float32 subnormal get here: e = emin, out = 0.)
		*/
		out = (uint32_t)(e + bias - 1) << m;
	} else {
		shift = 23 - m + (emin - e);
		out = 0;
		if (shift > 24)        /* below half the least subnormal */
			return sign;
	}

	rem = sig & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	sig >>= shift;
	if (rem > half || (rem == half && (sig & 1)))
		sig++;
	out += sig;            /* a mantissa carry bumps the exponent */

	if (out > maxfin)
		out = fmt->has_inf ? (expmax << m) : maxfin;
	return sign | out;
}

/*
** Widen the narrow pattern h of format fmt to a float32 pattern. Exact:
** every narrow value is a float32 value; NaN payload bits are shifted up
** unchanged (the fn NaN becomes the default quiet NaN with its sign).
*/
static uint32_t widen_bits(uint32_t h, const minifloat_fmt *fmt)
{
	const int m = fmt->mbits;
	const int bias = (1 << (fmt->ebits - 1)) - 1;
	const uint32_t expmax = (1u << fmt->ebits) - 1;
	const uint32_t sign = ((h >> (fmt->ebits + m)) & 1u) << 31;
	uint32_t ex = (h >> m) & expmax;
	uint32_t man = h & ((1u << m) - 1);
	int e;

	if (fmt->has_inf && ex == expmax)
		return sign | 0x7f800000u | (man << (23 - m));
	if (!fmt->has_inf && ex == expmax && man == (1u << m) - 1)
		return sign | 0x7fc00000u;
	if (ex != 0)
		return sign | ((uint32_t)((int)ex - bias + 127) << 23) |
		       (man << (23 - m));
	if (man == 0)
		return sign;
	/* Subnormal: man * 2^(1 - bias - m); normalize into float32. */
	e = 1 - bias;
	while (!(man & (1u << m))) {
		man <<= 1;
		e--;
	}
	assert(e + 127 > 0); /* true for every format here except bfloat16 */
	return sign | ((uint32_t)(e + 127) << 23) |
	       ((man & ((1u << m) - 1)) << (23 - m));
}

/* float32 -> bfloat16 pattern, RNE; overflow to Inf, NaN kept quiet. */
uint16_t lm_f32_to_bf16(float f)
{
	return (uint16_t)narrow_bits(lm_f32_bits(f), &FMT_BF16);
}

/* bfloat16 pattern -> float32 (exact: the top half of a float32). */
float lm_bf16_to_f32(uint16_t h)
{
	return lm_bits_f32((uint32_t)h << 16);
}

/* float32 -> IEEE binary16 pattern, RNE; overflow to Inf. */
uint16_t lm_f32_to_f16(float f)
{
	return (uint16_t)narrow_bits(lm_f32_bits(f), &FMT_F16);
}

/* IEEE binary16 pattern -> float32 (exact). */
float lm_f16_to_f32(uint16_t h)
{
	return lm_bits_f32(widen_bits(h, &FMT_F16));
}

/* float32 -> float8e4 (e4m3fn) pattern, RNE; saturating (Inf -> +-448). */
uint8_t lm_f32_to_f8e4(float f)
{
	return (uint8_t)narrow_bits(lm_f32_bits(f), &FMT_E4M3);
}

/* float8e4 (e4m3fn) pattern -> float32 (exact). */
float lm_f8e4_to_f32(uint8_t b)
{
	return lm_bits_f32(widen_bits(b, &FMT_E4M3));
}

/* float32 -> float8e5 (e5m2) pattern, RNE; overflow to Inf. */
uint8_t lm_f32_to_f8e5(float f)
{
	return (uint8_t)narrow_bits(lm_f32_bits(f), &FMT_E5M2);
}

/* float8e5 (e5m2) pattern -> float32 (exact). */
float lm_f8e5_to_f32(uint8_t b)
{
	return lm_bits_f32(widen_bits(b, &FMT_E5M2));
}

/*
** Round f to an integer, ties to even, independently of the rounding mode.
** Requires |f| < 2^63 (callers saturate first).
*/
static int64_t round_even_int(float f)
{
	int64_t i = (int64_t)f;          /* truncation toward zero */
	float frac = f - (float)i;       /* exact: |frac| < 1 */
	if (frac > 0.5f || (frac == 0.5f && (i & 1)))
		i++;
	else if (frac < -0.5f || (frac == -0.5f && (i & 1)))
		i--;
	return i;
}

/*
** Convert f to a signed integer in [lo, hi]: NaN -> 0, RNE, saturating.
** lo and hi are exact float32 values or powers of two bounding them.
*/
static int64_t to_sint(float f, int64_t lo, int64_t hi)
{
	if (isnan(f))
		return 0;
	if (f <= (float)lo)
		return lo;
	if (f >= (float)hi) /* (float)hi may be hi+1: a power of two */
		return hi;
	return round_even_int(f);
}

/* Convert f to an unsigned integer in [0, hi]: NaN -> 0, RNE, saturating. */
static uint64_t to_uint(float f, uint64_t hi)
{
	if (isnan(f) || f <= 0.0f)
		return 0;
	if (f >= (float)hi)
		return hi;
	if (f >= 9223372036854775808.0f) /* 2^63: already an integer */
		return (uint64_t)f;
	return (uint64_t)round_even_int(f);
}

/* Load the element of type t at p (any alignment) as a float32. */
float lm_load_elem(lm_dtype t, const void *p)
{
	union {
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64;
		int8_t i8;
		int16_t i16;
		int32_t i32;
		int64_t i64;
		float f;
	} v;
	int n = lm_dtype_size(t);

	assert(n > 0);
	memcpy(&v, p, (size_t)n);
	switch (lm_dtype_format(t)) {
	case LM_DT_FLOAT32:
	case LM_DT_FLOAT32R:
		return v.f;
	case LM_DT_BFLOAT16:
		return lm_bf16_to_f32(v.u16);
	case LM_DT_FLOAT16:
		return lm_f16_to_f32(v.u16);
	case LM_DT_FLOAT8E4:
		return lm_f8e4_to_f32(v.u8);
	case LM_DT_FLOAT8E5:
		return lm_f8e5_to_f32(v.u8);
	case LM_DT_FLOAT8E3:
		return lm_bits_f32(widen_bits(v.u8, &FMT_E3M4));
	case LM_DT_INT8:
		return (float)v.i8;
	case LM_DT_INT16:
		return (float)v.i16;
	case LM_DT_INT32:
		return (float)v.i32;
	case LM_DT_INT64:
		return (float)v.i64;
	case LM_DT_UINT8:
		return (float)v.u8;
	case LM_DT_UINT16:
		return (float)v.u16;
	case LM_DT_UINT32:
		return (float)v.u32;
	case LM_DT_UINT64:
		return (float)v.u64;
	default:
		assert(0);
		return NAN;
	}
}

/* Store f, rounded to t (see the file comment and docs), at p. */
void lm_store_elem(lm_dtype t, void *p, float f)
{
	union {
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64;
		int8_t i8;
		int16_t i16;
		int32_t i32;
		int64_t i64;
		float f;
	} v;
	int n = lm_dtype_size(t);

	assert(n > 0);
	switch (lm_dtype_format(t)) {
	case LM_DT_FLOAT32:
	case LM_DT_FLOAT32R:
		v.f = f;
		break;
	case LM_DT_BFLOAT16:
		v.u16 = lm_f32_to_bf16(f);
		break;
	case LM_DT_FLOAT16:
		v.u16 = lm_f32_to_f16(f);
		break;
	case LM_DT_FLOAT8E4:
		v.u8 = lm_f32_to_f8e4(f);
		break;
	case LM_DT_FLOAT8E5:
		v.u8 = lm_f32_to_f8e5(f);
		break;
	case LM_DT_FLOAT8E3:
		v.u8 = (uint8_t)narrow_bits(lm_f32_bits(f), &FMT_E3M4);
		break;
	case LM_DT_INT8:
		v.i8 = (int8_t)to_sint(f, INT8_MIN, INT8_MAX);
		break;
	case LM_DT_INT16:
		v.i16 = (int16_t)to_sint(f, INT16_MIN, INT16_MAX);
		break;
	case LM_DT_INT32:
		v.i32 = (int32_t)to_sint(f, INT32_MIN, INT32_MAX);
		break;
	case LM_DT_INT64:
		v.i64 = to_sint(f, INT64_MIN, INT64_MAX);
		break;
	case LM_DT_UINT8:
		v.u8 = (uint8_t)to_uint(f, UINT8_MAX);
		break;
	case LM_DT_UINT16:
		v.u16 = (uint16_t)to_uint(f, UINT16_MAX);
		break;
	case LM_DT_UINT32:
		v.u32 = (uint32_t)to_uint(f, UINT32_MAX);
		break;
	case LM_DT_UINT64:
		v.u64 = to_uint(f, UINT64_MAX);
		break;
	default:
		assert(0);
		return;
	}
	memcpy(p, &v, (size_t)n);
}

/* f rounded to t and widened back: what a store then a load gives. */
float lm_round_to(lm_dtype t, float f)
{
	unsigned char tmp[8];

	if (t == LM_DT_FLOAT32 || t == LM_DT_FLOAT32R)
		return f;
	lm_store_elem(t, tmp, f);
	return lm_load_elem(t, tmp);
}

/*
** dtype.h -- element types and exact conversions.
**
** Every conversion from float32 rounds to nearest, ties to even, and is
** correct for NaN (quiet NaN kept, payload truncated, never turned into Inf),
** +-Inf, subnormals (gradual underflow) and overflow (to Inf, or to the
** largest finite value for the float8e4 "fn" format that has no Inf; its
** +-Inf saturates too).
*/
#ifndef LNCSIM_DTYPE_H
#define LNCSIM_DTYPE_H

#include <stdint.h>

typedef enum lm_dtype {
	LM_DT_INVALID = 0,
	LM_DT_FLOAT32,
	LM_DT_BFLOAT16,
	LM_DT_FLOAT16,
	LM_DT_FLOAT8E4, /* e4m3 (bias 7, no Inf, 0x7f/0xff NaN, max 448) */
	LM_DT_FLOAT8E5, /* e5m2 (bias 15, IEEE-like: Inf and NaN) */
	LM_DT_FLOAT8E3,
	LM_DT_FLOAT32R,
	LM_DT_INT8,
	LM_DT_INT16,
	LM_DT_INT32,
	LM_DT_INT64,
	LM_DT_UINT8,
	LM_DT_UINT16,
	LM_DT_UINT32,
	LM_DT_UINT64,
	/* The NKI / KLR spellings of the float8 formats; after the integer
	** types so that LM_DT_INT8..LM_DT_UINT64 stays one range. */
	LM_DT_FLOAT8_E4M3,   /* the format of float8e4 */
	LM_DT_FLOAT8_E4M3FN, /* the format of float8e4 */
	LM_DT_FLOAT8_E5M2,   /* the format of float8e5 */
	LM_DT_COUNT
} lm_dtype;

/* BIR spelling ("float32", "bfloat16", ...) <-> enum. Unknown -> INVALID. */
const char *lm_dtype_name(lm_dtype t);
lm_dtype lm_dtype_parse(const char *s);
/* Size in bytes of one element (0 for INVALID). */
int lm_dtype_size(lm_dtype t);
/* 1 if the simulator can compute with this type (float32, bfloat16,
** float16, the float8 e4m3 and e5m2 spellings, float32r treated as
** float32). */
int lm_dtype_is_float(lm_dtype t);
/* 1 for int8 .. uint64. */
int lm_dtype_is_int(lm_dtype t);
/* 1 for the signed integer types. */
int lm_dtype_is_signed_int(lm_dtype t);
/* The type whose format t has: float8e4 for float8_e4m3 and
** float8_e4m3fn, float8e5 for float8_e5m2, else t. */
lm_dtype lm_dtype_format(lm_dtype t);

/* Bit-exact conversions. */
uint16_t lm_f32_to_bf16(float f);
float lm_bf16_to_f32(uint16_t h);
uint16_t lm_f32_to_f16(float f);
float lm_f16_to_f32(uint16_t h);
uint8_t lm_f32_to_f8e4(float f);
float lm_f8e4_to_f32(uint8_t b);
uint8_t lm_f32_to_f8e5(float f);
float lm_f8e5_to_f32(uint8_t b);

/* Round a float32 value to dtype t and back (what a store then load does). */
float lm_round_to(lm_dtype t, float f);
/* Load element of type t at p as float32; store f (rounded) at p. */
float lm_load_elem(lm_dtype t, const void *p);
void lm_store_elem(lm_dtype t, void *p, float f);

/* Reinterpret helpers. */
uint32_t lm_f32_bits(float f);
float lm_bits_f32(uint32_t u);

#endif

/*
** intalu.c -- the tensor ALU on integer data (TensorTensor, TensorScalar
** with every operand an integer type): exact 64-bit integer arithmetic,
** never through float32. docs/semantics.md, "The ALU on integer data".
**
** Each element's operands are widened by their own dtype (sign- or
** zero-extended) to 64 bits. The result of a step is fitted into the
** output dtype by the op's class: arithmetic saturates at the dtype's
** limits, bit operations keep the low bits (two's complement wrap),
** comparisons are 0 or 1. With a uint64 operand the step is unsigned
** 64-bit, else signed 64-bit.
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"

#include <stdint.h>
#include <string.h>

int ls_int_alu_class(lm_aluop op)
{
	switch (op) {
	case LM_ALU_BYPASS: case LM_ALU_ADD: case LM_ALU_SUBTRACT:
	case LM_ALU_MULT: case LM_ALU_DIVIDE: case LM_ALU_MOD:
	case LM_ALU_MAX: case LM_ALU_MIN: case LM_ALU_ABS:
		return LS_IA_ARITH;
	case LM_ALU_BITWISE_AND: case LM_ALU_BITWISE_OR:
	case LM_ALU_BITWISE_XOR: case LM_ALU_BITWISE_NOT:
	case LM_ALU_ARITH_SHIFT_LEFT: case LM_ALU_ARITH_SHIFT_RIGHT:
	case LM_ALU_LOGICAL_SHIFT_LEFT: case LM_ALU_LOGICAL_SHIFT_RIGHT:
		return LS_IA_BITS;
	case LM_ALU_IS_EQUAL: case LM_ALU_NOT_EQUAL: case LM_ALU_IS_GE:
	case LM_ALU_IS_GT: case LM_ALU_IS_LE: case LM_ALU_IS_LT:
	case LM_ALU_LOGICAL_AND: case LM_ALU_LOGICAL_OR:
	case LM_ALU_LOGICAL_XOR:
		return LS_IA_BOOL;
	default:
		return LS_IA_NONE; /* pow, rsqrt, average */
	}
}

int64_t ls_int_load(lm_dtype t, const void *p)
{
	union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16;
		int32_t i32; uint32_t u32; int64_t i64; } v;
	memcpy(&v, p, (size_t)lm_dtype_size(t));
	switch (t) {
	case LM_DT_INT8: return v.i8;
	case LM_DT_UINT8: return v.u8;
	case LM_DT_INT16: return v.i16;
	case LM_DT_UINT16: return v.u16;
	case LM_DT_INT32: return v.i32;
	case LM_DT_UINT32: return v.u32;
	default: return v.i64; /* int64; uint64 as its bits */
	}
}

void ls_int_store(lm_dtype t, void *p, int64_t v)
{
	memcpy(p, &v, (size_t)lm_dtype_size(t)); /* little-endian: low bytes */
}

/* The limits of integer dtype t (uint64's maximum as its bits, -1). */
static void limits(lm_dtype t, int64_t *lo, int64_t *hi)
{
	int bits = 8 * lm_dtype_size(t);
	if (lm_dtype_is_signed_int(t)) {
		*hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
		*lo = -*hi - 1;
	} else {
		*lo = 0;
		*hi = bits == 64 ? -1 : ((int64_t)1 << bits) - 1;
	}
}

int64_t ls_int_fit(lm_dtype t, int cls, int is_unsigned, int64_t v)
{
	int64_t lo, hi;
	unsigned char b[8];

	if (cls == LS_IA_BITS) {
		ls_int_store(t, b, v);
		return ls_int_load(t, b);
	}
	limits(t, &lo, &hi);
	if (t == LM_DT_UINT64)
		return !is_unsigned && v < 0 ? 0 : v;
	if (is_unsigned)
		return (uint64_t)v > (uint64_t)hi ? hi : v;
	return v < lo ? lo : v > hi ? hi : v;
}

/* a op b for the add / subtract / mult / abs, saturating at 64 bits. */
static int64_t sat64(lm_aluop op, int is_unsigned, int64_t a, int64_t b)
{
	if (is_unsigned) {
		uint64_t r, x = (uint64_t)a, y = (uint64_t)b;
		switch (op) {
		case LM_ALU_ADD:
			return __builtin_add_overflow(x, y, &r) ? -1
							       : (int64_t)r;
		case LM_ALU_SUBTRACT:
			return __builtin_sub_overflow(x, y, &r) ? 0
							       : (int64_t)r;
		case LM_ALU_MULT:
			return __builtin_mul_overflow(x, y, &r) ? -1
							       : (int64_t)r;
		default: /* abs */
			return a;
		}
	} else {
		int64_t r;
		int ov;
		switch (op) {
		case LM_ALU_ADD:
			ov = __builtin_add_overflow(a, b, &r);
			return ov ? (a < 0 ? INT64_MIN : INT64_MAX) : r;
		case LM_ALU_SUBTRACT:
			ov = __builtin_sub_overflow(a, b, &r);
			return ov ? (a < 0 ? INT64_MIN : INT64_MAX) : r;
		case LM_ALU_MULT:
			ov = __builtin_mul_overflow(a, b, &r);
			return ov ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX)
				  : r;
		default: /* abs */
			return a == INT64_MIN ? INT64_MAX : a < 0 ? -a : a;
		}
	}
}

int ls_int_alu(lm_aluop op, int is_unsigned, lm_dtype adt, int64_t a,
	       int64_t b, int64_t *r)
{
	uint64_t w;
	int rc;

	switch (op) {
	case LM_ALU_ADD: case LM_ALU_SUBTRACT: case LM_ALU_MULT:
	case LM_ALU_ABS:
		*r = sat64(op, is_unsigned, a, b);
		return 0;
	case LM_ALU_DIVIDE:
		/* 2^63 saturates, as a product does (the 64-bit register ALU
		** wraps it to INT64_MIN) */
		if (!is_unsigned && a == INT64_MIN && b == -1) {
			*r = INT64_MAX;
			return 0;
		}
		break;
	case LM_ALU_LOGICAL_AND: *r = a != 0 && b != 0; return 0;
	case LM_ALU_LOGICAL_OR: *r = a != 0 || b != 0; return 0;
	case LM_ALU_LOGICAL_XOR: *r = (a != 0) != (b != 0); return 0;
	case LM_ALU_LOGICAL_SHIFT_RIGHT:
		/* a's own bits move: zero-extended from its width */
		if (lm_dtype_size(adt) < 8)
			a &= ((int64_t)1 << (8 * lm_dtype_size(adt))) - 1;
		break;
	default:
		break;
	}
	rc = ls_reg_alu64(op, !is_unsigned, (uint64_t)a, (uint64_t)b, &w);
	*r = (int64_t)w;
	return rc;
}

/*
** reduce.c -- the fold of TensorReduce: each row of n float32 values
** becomes one float32 value, folded left to right from its first element
** (docs/semantics.md, "TensorReduce"). Every step is one float32
** operation (the build uses -ffp-contract=off), so the bits follow from
** the order written here.
*/
#include "common.h"
#include "sim_int.h"

#include <math.h>

int ls_reduce_supported(lm_aluop op)
{
	switch (op) {
	case LM_ALU_ADD: case LM_ALU_SUBTRACT: case LM_ALU_MULT:
	case LM_ALU_MAX: case LM_ALU_MIN: case LM_ALU_AVERAGE:
		return 1;
	default:
		return 0;
	}
}

/* The fold of one row, the op switch hoisted out of the element loop. */
#define FOLD(EXPR) do { \
	for (int64_t j_ = 1; j_ < n; j_++) { \
		const float v = x[j_]; \
		acc = (EXPR); \
	} \
} while (0)

static float fold_row(lm_aluop op, const float *x, int64_t n, float inv_n)
{
	float acc = x[0];
	switch (op) {
	case LM_ALU_ADD: FOLD(acc + v); break;
	case LM_ALU_SUBTRACT: FOLD(acc - v); break;
	case LM_ALU_MULT: FOLD(acc * v); break;
	case LM_ALU_MAX:
		FOLD(isnan(acc) ? acc : isnan(v) ? v : (acc > v ? acc : v));
		break;
	case LM_ALU_MIN:
		FOLD(isnan(acc) ? acc : isnan(v) ? v : (acc < v ? acc : v));
		break;
	case LM_ALU_AVERAGE:
		/* the seed divided by n, then each element times 1/n added */
		acc = acc / (float)n;
		FOLD(acc + inv_n * v);
		break;
	default:
		break; /* not reached: ls_reduce_supported */
	}
	return acc;
}

#undef FOLD

void ls_reduce_rows(lm_aluop op, int negate, const float *in, int64_t rows,
		    int64_t n, int64_t ld, float *out)
{
	const float inv_n = 1.0f / (float)n;
	for (int64_t r = 0; r < rows; r++) {
		float acc = fold_row(op, in + r * ld, n, inv_n);
		out[r] = negate ? -acc : acc;
	}
}

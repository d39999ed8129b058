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

/*
** The fold of every row with the op switch hoisted out, eight rows at a
** time: each row is still one chain folded left to right from its first
** element (the same operations in the same order as one row alone), but
** eight independent chains keep the FPU busy where one waits on the
** latency of the previous step.
*/
#define S_ADD(a, v) ((a) + (v))
#define S_SUB(a, v) ((a) - (v))
#define S_MUL(a, v) ((a) * (v))
#define S_MAX(a, v) (isnan(a) ? (a) : isnan(v) ? (v) : ((a) > (v) ? (a) : (v)))
#define S_MIN(a, v) (isnan(a) ? (a) : isnan(v) ? (v) : ((a) < (v) ? (a) : (v)))
/* the seed divided by n, then each element times 1/n added */
#define S_AVG(a, v) ((a) + inv_n * (v))

#define EIGHT(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define SEED_(k) const float *x##k = in + (r_ + k) * ld; \
	float a##k = is_avg ? x##k[0] / (float)n : x##k[0];
#define STEP_(S, k) { const float v_ = x##k[j_]; a##k = S(a##k, v_); }
#define STEPS_(S) STEP_(S, 0) STEP_(S, 1) STEP_(S, 2) STEP_(S, 3) \
	STEP_(S, 4) STEP_(S, 5) STEP_(S, 6) STEP_(S, 7)
#define OUT_(k) out[r_ + k] = negate ? -a##k : a##k;
#define FOLD_ROWS(S) do { \
	int64_t r_ = 0; \
	for (; r_ + 8 <= rows; r_ += 8) { \
		EIGHT(SEED_) \
		for (int64_t j_ = 1; j_ < n; j_++) { \
			STEPS_(S) \
		} \
		EIGHT(OUT_) \
	} \
	for (; r_ < rows; r_++) { \
		SEED_(0) \
		for (int64_t j_ = 1; j_ < n; j_++) \
			STEP_(S, 0) \
		OUT_(0) \
	} \
} while (0)

void ls_reduce_rows(lm_aluop op, int negate, const float *in, int64_t rows,
		    int64_t n, int64_t ld, float *out)
{
	const float inv_n = 1.0f / (float)n;
	const int is_avg = op == LM_ALU_AVERAGE;
	switch (op) {
	case LM_ALU_ADD: FOLD_ROWS(S_ADD); break;
	case LM_ALU_SUBTRACT: FOLD_ROWS(S_SUB); break;
	case LM_ALU_MULT: FOLD_ROWS(S_MUL); break;
	case LM_ALU_MAX: FOLD_ROWS(S_MAX); break;
	case LM_ALU_MIN: FOLD_ROWS(S_MIN); break;
	case LM_ALU_AVERAGE: FOLD_ROWS(S_AVG); break;
	default:
		break; /* not reached: ls_reduce_supported */
	}
}

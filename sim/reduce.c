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

#if defined(__x86_64__) && defined(__SSE2__)
/*
** Eight rows folded at once (add, mult, average): eight independent
** chains keep the FPU busy where one row waits on the latency of its
** previous step, and each row is still its own chain, folded left to
** right from its first element. The instructions are written out with
** the accumulator as their first operand, as fold_row compiles: that
** operand's NaN is the one a NaN op NaN returns, and the compiler would
** be free to swap the operands of a C + or *.
*/
#define ACC_OP(INSN, a, v) __asm__(INSN " %1, %0" : "+x"(a) : "x"(v))
#define LANES(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define SEED_(k) const float *x##k = in + (r + k) * ld; float a##k = x##k[0];
#define AVG_(k) a##k = a##k / (float)n;
#define ADD_(k) { float v_ = x##k[j]; ACC_OP("addss", a##k, v_); }
#define MUL_(k) { float v_ = x##k[j]; ACC_OP("mulss", a##k, v_); }
#define AVGSTEP_(k) { float v_ = inv_n * x##k[j]; ACC_OP("addss", a##k, v_); }
#define OUT_(k) out[r + k] = negate ? -a##k : a##k;

static int64_t fold8(lm_aluop op, int negate, const float *in, int64_t rows,
		     int64_t n, int64_t ld, float inv_n, float *out)
{
	int64_t r = 0;
	if (op != LM_ALU_ADD && op != LM_ALU_MULT && op != LM_ALU_AVERAGE)
		return 0;
	for (; r + 8 <= rows; r += 8) {
		LANES(SEED_)
		if (op == LM_ALU_ADD) {
			for (int64_t j = 1; j < n; j++) {
				LANES(ADD_)
			}
		} else if (op == LM_ALU_MULT) {
			for (int64_t j = 1; j < n; j++) {
				LANES(MUL_)
			}
		} else {
			LANES(AVG_)
			for (int64_t j = 1; j < n; j++) {
				LANES(AVGSTEP_)
			}
		}
		LANES(OUT_)
	}
	return r;
}

#undef OUT_
#undef AVGSTEP_
#undef MUL_
#undef ADD_
#undef AVG_
#undef SEED_
#undef LANES
#undef ACC_OP
#else
static int64_t fold8(lm_aluop op, int negate, const float *in, int64_t rows,
		     int64_t n, int64_t ld, float inv_n, float *out)
{
	return 0;
}
#endif

void ls_reduce_rows(lm_aluop op, int negate, const float *in, int64_t rows,
		    int64_t n, int64_t ld, float *out)
{
	const float inv_n = 1.0f / (float)n;
	/* out may be in: fold8 writes the rows it read */
	for (int64_t r = fold8(op, negate, in, rows, n, ld, inv_n, out);
	     r < rows; r++) {
		float acc = fold_row(op, in + r * ld, n, inv_n);
		out[r] = negate ? -acc : acc;
	}
}

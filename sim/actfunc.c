/*
** actfunc.c -- the Activation functions, in float32 with libm's
** float functions. docs/activation.md lists every formula; each operation
** below is one float32 operation (the build uses -ffp-contract=off, so
** nothing is fused behind our back) and results are deterministic on one
** machine and libm.
*/
#include "common.h"
#include "sim_int.h"

#include <math.h>

/* 1 / (1 + e^-x), the form used by Sigmoid, Silu and friends. */
static float sigmoidf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* log(1 + e^x); e^x overflows above ~88, where the result is x itself. */
static float softplusf(float x)
{
	if (x > 20.0f)
		return x;
	return log1pf(expf(x));
}

int ls_act_supported(lm_actfunc f)
{
	return f > LM_ACT_INVALID && f < LM_ACT_COUNT && f != LM_ACT_UNKNOWN;
}

float ls_act_apply(lm_actfunc f, float x, float alpha)
{
	const float sqrt_2_over_pi = 0.7978845608028654f;
	const float inv_sqrt2 = 0.7071067811865476f;
	const float two_over_sqrt_pi = 1.1283791670955126f;
	const float inv_sqrt_2pi = 0.3989422804014327f;

	/* x * (something -> 0) at -Inf: the limit, not Inf * 0 = NaN */
	if (isinf(x) && (f == LM_ACT_SILU || f == LM_ACT_GELU ||
			 f == LM_ACT_GELU_APPRX_TANH ||
			 f == LM_ACT_GELU_APPRX_SIGMOID || f == LM_ACT_MISH))
		return x > 0.0f ? x : -0.0f;
	switch (f) {
	case LM_ACT_IDENTITY:
	case LM_ACT_COPY:
		return x;
	case LM_ACT_RELU:
		if (isnan(x))
			return x;
		return x > 0.0f ? x : 0.0f;
	case LM_ACT_LRELU:
	case LM_ACT_PRELU:
		if (isnan(x))
			return x;
		return x > 0.0f ? x : alpha * x;
	case LM_ACT_EXP:
		return expf(x);
	case LM_ACT_TANH:
		return tanhf(x);
	case LM_ACT_SIGMOID:
		return sigmoidf(x);
	case LM_ACT_SILU:
		return x * sigmoidf(x);
	case LM_ACT_GELU_APPRX_TANH: {
		float x3 = x * x * x;
		float inner = sqrt_2_over_pi * (x + 0.044715f * x3);
		return 0.5f * x * (1.0f + tanhf(inner));
	}
	case LM_ACT_GELU_APPRX_SIGMOID:
		return x * sigmoidf(1.702f * x);
	case LM_ACT_GELU:
		return 0.5f * x * (1.0f + erff(x * inv_sqrt2));
	case LM_ACT_DERIVATIVE_GELU:
		return 0.5f * (1.0f + erff(x * inv_sqrt2)) +
		       x * inv_sqrt_2pi * expf(-0.5f * x * x);
	case LM_ACT_SQUARE:
		return x * x;
	case LM_ACT_SQRT:
		return sqrtf(x);
	case LM_ACT_RSQRT:
		return 1.0f / sqrtf(x);
	case LM_ACT_ABS_RECIPROCAL_SQRT:
		return 1.0f / sqrtf(fabsf(x));
	case LM_ACT_RECIPROCAL:
		return 1.0f / x;
	case LM_ACT_ABS:
		return fabsf(x);
	case LM_ACT_SIGN:
		if (x > 0.0f)
			return 1.0f;
		if (x < 0.0f)
			return -1.0f;
		return x; /* +-0 and NaN pass through */
	case LM_ACT_ARCTAN:
		return atanf(x);
	case LM_ACT_SIN:
		return sinf(x);
	case LM_ACT_ERF:
		return erff(x);
	case LM_ACT_DERIVATIVE_ERF:
		return two_over_sqrt_pi * expf(-(x * x));
	case LM_ACT_LN:
		return logf(x);
	case LM_ACT_LN_PRIME:
		return 1.0f / x;
	case LM_ACT_DSQRT:
		return 0.5f / sqrtf(x);
	case LM_ACT_DERIVATIVE_SILU: {
		float s = sigmoidf(x);
		return s * (1.0f + x * (1.0f - s));
	}
	case LM_ACT_SOFTPLUS:
		return softplusf(x);
	case LM_ACT_MISH:
		return x * tanhf(softplusf(x));
	case LM_ACT_IS_FINITE:
		return isfinite(x) ? 1.0f : 0.0f;
	case LM_ACT_MEMSETZERO:
		return 0.0f;
	default:
		return lm_bits_f32(0x7fc00000u);
	}
}

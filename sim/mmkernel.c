/*
** mmkernel.c -- the Matmult kernel: acc[m][n] = fmaf(st[k][m], mv[k][n],
** acc[m][n]) for k = 0..K-1 in order.
**
** Each output element is one in-order chain of fused multiply-adds, so the
** result is bit-exact whatever the blocking: the vector variants only
** compute many chains side by side (a register block of MR rows x NR
** columns, one vector FMA per row and column vector per k; a vector FMA
** is the same single-rounding operation as fmaf). The variant is picked at
** run time (__builtin_cpu_supports), so the binary runs on any x86-64.
**
** Layout: st is packed into MR-row panels [k][MR] and mv into NR-column
** panels [k][NR] (zero padded), which keeps the inner loop in L1 and makes
** every shape take the same path; when M or N is not a multiple of the
** block, the accumulator is padded too. The operands are read where they
** are (a row stride per operand, ls_mm_src), float32 or bfloat16: the
** packing widens bfloat16 exactly, so the simulator does not gather
** contiguous tiles into a float32 copy first.
*/
#include "common.h"
#include "sim_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86_KERNELS 1
#endif

typedef void (*mm_fn)(int K, int M, int N, const ls_mm_src *st,
		      const ls_mm_src *mv, float *acc);

/* Element [k][j] of src, widened to float32 (exact). */
static inline float src_at(const ls_mm_src *s, int k, int j)
{
	size_t i = (size_t)k * (size_t)s->ld + (size_t)j;
	if (s->is_bf16) {
		uint16_t h;
		uint32_t u;
		memcpy(&h, (const uint8_t *)s->p + 2 * i, 2);
		u = (uint32_t)h << 16;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	return ((const float *)s->p)[i];
}

/* The portable kernel: plain loops, libm fmaf. */
static void mm_generic(int K, int M, int N, const ls_mm_src *st,
		       const ls_mm_src *mv, float *acc)
{
	for (int k = 0; k < K; k++)
		for (int m = 0; m < M; m++) {
			const float a = src_at(st, k, m);
			float *c = acc + (size_t)m * N;
			for (int n = 0; n < N; n++)
				c[n] = fmaf(a, src_at(mv, k, n), c[n]);
		}
}

/* n elements of row k of src from column j0 -> float32 out. */
static void src_row(const ls_mm_src *s, int k, int j0, int n, float *out)
{
	size_t i = (size_t)k * (size_t)s->ld + (size_t)j0;
	if (!s->is_bf16) {
		memcpy(out, (const float *)s->p + i, (size_t)n * sizeof(float));
		return;
	}
	{
		/* bfloat16 -> float32 is a 16-bit shift: 8 at a time */
		typedef uint16_t v8h __attribute__((vector_size(16)));
		typedef uint32_t v8w __attribute__((vector_size(32)));
		const uint8_t *h = (const uint8_t *)s->p + 2 * i;
		uint8_t *o = (uint8_t *)out;
		int j = 0;
		for (; j + 8 <= n; j += 8) {
			v8h x;
			v8w w;
			memcpy(&x, h + 2 * j, 16);
			w = __builtin_convertvector(x, v8w) << 16;
			memcpy(o + 4 * j, &w, 32);
		}
		for (; j < n; j++) {
			uint16_t x;
			uint32_t w;
			memcpy(&x, h + 2 * j, 2);
			w = (uint32_t)x << 16;
			memcpy(o + 4 * j, &w, 4);
		}
	}
}

/*
** st [K][M] -> panels of MR rows: out[(mb * K + k) * MR + r], zero
** padded; row is scratch for MR * ceil(M / MR) floats.
*/
static void pack_st(int K, int M, const ls_mm_src *st, int MR, float *out,
		    float *row)
{
	int nmb = (M + MR - 1) / MR, Mp = nmb * MR;
	for (int m = M; m < Mp; m++)
		row[m] = 0.0f;
	for (int k = 0; k < K; k++) {
		src_row(st, k, 0, M, row);
		if (MR == 4) {
			for (int mb = 0; mb < nmb; mb++)
				memcpy(out + ((size_t)mb * K + k) * 4,
				       row + 4 * mb, 4 * sizeof(float));
			continue;
		}
		for (int mb = 0; mb < nmb; mb++)
			memcpy(out + ((size_t)mb * K + k) * MR, row + MR * mb,
			       (size_t)MR * sizeof(float));
	}
}

/* Columns n0..n0+NR-1 of mv [K][N] -> out[k * NR + j], zero padded. */
static void pack_mv(int K, int N, const ls_mm_src *mv, int n0, int NR,
		    float *out)
{
	int w = N - n0 < NR ? N - n0 : NR;
	for (int k = 0; k < K; k++) {
		src_row(mv, k, n0, w, out + (size_t)k * NR);
		for (int j = w; j < NR; j++)
			out[(size_t)k * NR + j] = 0.0f;
	}
}

/*
** Drive a micro-kernel over the blocks. micro(K, stp, mvp, c, ldc) updates
** an MR x NR block of c (row stride ldc) in place.
*/
typedef void (*micro_fn)(int K, const float *stp, const float *mvp, float *c,
			 int ldc);

static void mm_blocked(int K, int M, int N, const ls_mm_src *st,
		       const ls_mm_src *mv, float *acc, int MR, int NR,
		       micro_fn micro)
{
	int nmb = (M + MR - 1) / MR, nnb = (N + NR - 1) / NR;
	int Mp = nmb * MR, Np = nnb * NR;
	float *stp = malloc(((size_t)Mp * K + (size_t)Mp) * sizeof(float) + 64);
	float *mvp = malloc((size_t)NR * K * sizeof(float) + 64);
	float *c = acc;
	int ldc = N;

	if (!stp || !mvp)
		abort();
	if (Mp != M || Np != N) {
		c = lm_xcalloc((size_t)Mp * Np, sizeof(float));
		for (int m = 0; m < M; m++)
			memcpy(c + (size_t)m * Np, acc + (size_t)m * N,
			       (size_t)N * sizeof(float));
		ldc = Np;
	}
	pack_st(K, M, st, MR, stp, stp + (size_t)Mp * K);
	for (int nb = 0; nb < nnb; nb++) {
		pack_mv(K, N, mv, nb * NR, NR, mvp);
		for (int mb = 0; mb < nmb; mb++)
			micro(K, stp + (size_t)mb * K * MR, mvp,
			      c + (size_t)mb * MR * ldc + (size_t)nb * NR, ldc);
	}
	if (c != acc) {
		for (int m = 0; m < M; m++)
			memcpy(acc + (size_t)m * N, c + (size_t)m * Np,
			       (size_t)N * sizeof(float));
		free(c);
	}
	free(stp);
	free(mvp);
}

#ifdef HAVE_X86_KERNELS

/* AVX2 + FMA: 4 rows x 16 columns (8 ymm accumulators). */
__attribute__((target("avx2,fma")))
static void micro_avx2(int K, const float *stp, const float *mvp, float *c,
		       int ldc)
{
	__m256 c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
	__m256 c10 = _mm256_loadu_ps(c + ldc), c11 = _mm256_loadu_ps(c + ldc + 8);
	__m256 c20 = _mm256_loadu_ps(c + 2 * ldc);
	__m256 c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
	__m256 c30 = _mm256_loadu_ps(c + 3 * ldc);
	__m256 c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
	for (int k = 0; k < K; k++) {
		const float *a = stp + 4 * k;
		__m256 b0 = _mm256_loadu_ps(mvp + 16 * k);
		__m256 b1 = _mm256_loadu_ps(mvp + 16 * k + 8);
		__m256 a0 = _mm256_broadcast_ss(a);
		__m256 a1 = _mm256_broadcast_ss(a + 1);
		__m256 a2 = _mm256_broadcast_ss(a + 2);
		__m256 a3 = _mm256_broadcast_ss(a + 3);
		c00 = _mm256_fmadd_ps(a0, b0, c00);
		c01 = _mm256_fmadd_ps(a0, b1, c01);
		c10 = _mm256_fmadd_ps(a1, b0, c10);
		c11 = _mm256_fmadd_ps(a1, b1, c11);
		c20 = _mm256_fmadd_ps(a2, b0, c20);
		c21 = _mm256_fmadd_ps(a2, b1, c21);
		c30 = _mm256_fmadd_ps(a3, b0, c30);
		c31 = _mm256_fmadd_ps(a3, b1, c31);
	}
	_mm256_storeu_ps(c, c00);
	_mm256_storeu_ps(c + 8, c01);
	_mm256_storeu_ps(c + ldc, c10);
	_mm256_storeu_ps(c + ldc + 8, c11);
	_mm256_storeu_ps(c + 2 * ldc, c20);
	_mm256_storeu_ps(c + 2 * ldc + 8, c21);
	_mm256_storeu_ps(c + 3 * ldc, c30);
	_mm256_storeu_ps(c + 3 * ldc + 8, c31);
}

static void mm_avx2(int K, int M, int N, const ls_mm_src *st,
		    const ls_mm_src *mv, float *acc)
{
	mm_blocked(K, M, N, st, mv, acc, 4, 16, micro_avx2);
}

/* AVX-512: 4 rows x 64 columns (16 zmm accumulators, kept in registers). */
#define LD4(i) \
	__m512 c##i##0 = _mm512_loadu_ps(c + (size_t)(i) * ldc); \
	__m512 c##i##1 = _mm512_loadu_ps(c + (size_t)(i) * ldc + 16); \
	__m512 c##i##2 = _mm512_loadu_ps(c + (size_t)(i) * ldc + 32); \
	__m512 c##i##3 = _mm512_loadu_ps(c + (size_t)(i) * ldc + 48)
#define FMA4(i) do { \
	__m512 a_ = _mm512_set1_ps(a[i]); \
	c##i##0 = _mm512_fmadd_ps(a_, b0, c##i##0); \
	c##i##1 = _mm512_fmadd_ps(a_, b1, c##i##1); \
	c##i##2 = _mm512_fmadd_ps(a_, b2, c##i##2); \
	c##i##3 = _mm512_fmadd_ps(a_, b3, c##i##3); \
} while (0)
#define ST4(i) do { \
	_mm512_storeu_ps(c + (size_t)(i) * ldc, c##i##0); \
	_mm512_storeu_ps(c + (size_t)(i) * ldc + 16, c##i##1); \
	_mm512_storeu_ps(c + (size_t)(i) * ldc + 32, c##i##2); \
	_mm512_storeu_ps(c + (size_t)(i) * ldc + 48, c##i##3); \
} while (0)

__attribute__((target("avx512f")))
static void micro_avx512(int K, const float *stp, const float *mvp, float *c,
			 int ldc)
{
	LD4(0);
	LD4(1);
	LD4(2);
	LD4(3);
	for (int k = 0; k < K; k++) {
		const float *a = stp + 4 * k;
		const float *b = mvp + 64 * k;
		__m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
		__m512 b2 = _mm512_loadu_ps(b + 32), b3 = _mm512_loadu_ps(b + 48);
		FMA4(0);
		FMA4(1);
		FMA4(2);
		FMA4(3);
	}
	ST4(0);
	ST4(1);
	ST4(2);
	ST4(3);
}

static void mm_avx512(int K, int M, int N, const ls_mm_src *st,
		      const ls_mm_src *mv, float *acc)
{
	mm_blocked(K, M, N, st, mv, acc, 4, 64, micro_avx512);
}

#endif

static mm_fn chosen;
static const char *chosen_name;

/* Pick the best variant this CPU runs. */
static void choose(void)
{
	chosen = mm_generic;
	chosen_name = "generic";
#ifdef HAVE_X86_KERNELS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		chosen = mm_avx512;
		chosen_name = "avx512";
	} else if (__builtin_cpu_supports("avx2") &&
		   __builtin_cpu_supports("fma")) {
		chosen = mm_avx2;
		chosen_name = "avx2";
	}
#endif
}

void ls_mm_kernel_force(const char *name)
{
	choose();
	if (!name)
		return;
	if (strcmp(name, "generic") == 0) {
		chosen = mm_generic;
		chosen_name = "generic";
	}
#ifdef HAVE_X86_KERNELS
	else if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2") &&
		 __builtin_cpu_supports("fma")) {
		chosen = mm_avx2;
		chosen_name = "avx2";
	} else if (strcmp(name, "avx512") == 0 &&
		   __builtin_cpu_supports("avx512f")) {
		chosen = mm_avx512;
		chosen_name = "avx512";
	}
#endif
}

const char *ls_mm_kernel_name(void)
{
	if (!chosen)
		choose();
	return chosen_name;
}

void ls_mm_kernel_src(int K, int M, int N, const ls_mm_src *st,
		      const ls_mm_src *mv, float *acc)
{
	if (!chosen)
		choose();
	if (K <= 0 || M <= 0 || N <= 0)
		return;
	chosen(K, M, N, st, mv, acc);
}

void ls_mm_kernel(int K, int M, int N, const float *st, const float *mv,
		  float *acc)
{
	ls_mm_src a = { st, M, 0 }, b = { mv, N, 0 };
	ls_mm_kernel_src(K, M, N, &a, &b, acc);
}

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
** every shape take the same path; a block cut by the edge of the
** accumulator runs in a padded tile. The accumulator has a row stride of
** its own, so the simulator accumulates straight into PSUM. The operands are
** read where they are (a row stride per operand, ls_mm_src), float32 or
** bfloat16: the packing widens bfloat16 exactly, so the simulator does not
** gather contiguous tiles into a float32 copy first.
**
** The blocked kernel and its packing are inlined into one function per
** variant (mm_avx512, ...): the block shape is a constant there, so each
** piece of a panel is a few vector moves of that instruction set rather
** than a call to memcpy, and the panels of st are written in order.
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

#define INLINE static inline __attribute__((always_inline))

/*
** n bfloat16 at h -> float32 at o: a bfloat16 is the top half of its
** float32, so widening is a 16-bit shift (exact), 16 or 8 at a time.
** Inlined into each variant's packing, so it runs with its vector width.
*/
INLINE void widen_bf16(const uint8_t *h, float *o, int n)
{
	typedef uint16_t v16h __attribute__((vector_size(32)));
	typedef uint32_t v16w __attribute__((vector_size(64)));
	typedef uint16_t v8h __attribute__((vector_size(16)));
	typedef uint32_t v8w __attribute__((vector_size(32)));
	uint8_t *ob = (uint8_t *)o;
	int j = 0;
	for (; j + 16 <= n; j += 16) {
		v16h x;
		v16w w;
		memcpy(&x, h + 2 * j, 32);
		w = __builtin_convertvector(x, v16w) << 16;
		memcpy(ob + 4 * j, &w, 64);
	}
	for (; j + 8 <= n; j += 8) {
		v8h x;
		v8w w;
		memcpy(&x, h + 2 * j, 16);
		w = __builtin_convertvector(x, v8w) << 16;
		memcpy(ob + 4 * j, &w, 32);
	}
	for (; j + 4 <= n; j += 4) {
		uint64_t x;
		uint32_t w[4];
		memcpy(&x, h + 2 * j, 8);
		for (int i = 0; i < 4; i++)
			w[i] = (uint32_t)(x >> (16 * i)) << 16;
		memcpy(ob + 4 * j, w, 16);
	}
	for (; j < n; j++) {
		uint16_t x;
		uint32_t w;
		memcpy(&x, h + 2 * j, 2);
		w = (uint32_t)x << 16;
		memcpy(ob + 4 * j, &w, 4);
	}
}

/* n elements of row k of src from column j0 -> float32 out. */
INLINE void src_row(const ls_mm_src *s, int k, int j0, int n, float *out)
{
	size_t i = (size_t)k * (size_t)s->ld + (size_t)j0;
	if (s->is_bf16)
		widen_bf16((const uint8_t *)s->p + 2 * i, out, n);
	else
		memcpy(out, (const float *)s->p + i, (size_t)n * sizeof(float));
}

/*
** st [K][M] -> panels of MR rows: out[(mb * K + k) * MR + r], zero
** padded; panel by panel, so the writes run in order. MR is a constant
** where this is inlined: each piece is a few moves.
*/
INLINE void pack_st(int K, int M, const ls_mm_src *st, const int MR,
		    float *out)
{
	const int nmb = (M + MR - 1) / MR;
	for (int mb = 0; mb < nmb; mb++) {
		const int w = M - mb * MR < MR ? M - mb * MR : MR;
		float *o = out + (size_t)mb * K * MR;
		if (w == MR) {
			for (int k = 0; k < K; k++)
				src_row(st, k, mb * MR, MR, o + (size_t)k * MR);
			continue;
		}
		for (int k = 0; k < K; k++) {
			src_row(st, k, mb * MR, w, o + (size_t)k * MR);
			for (int j = w; j < MR; j++)
				o[(size_t)k * MR + j] = 0.0f;
		}
	}
}

/* Columns n0..n0+NR-1 of mv [K][N] -> out[k * NR + j], zero padded. */
INLINE void pack_mv(int K, int N, const ls_mm_src *mv, int n0, const int NR,
		    float *out)
{
	int w = N - n0 < NR ? N - n0 : NR;
	if (w == NR) {
		for (int k = 0; k < K; k++)
			src_row(mv, k, n0, NR, out + (size_t)k * NR);
		return;
	}
	for (int k = 0; k < K; k++) {
		src_row(mv, k, n0, w, out + (size_t)k * NR);
		for (int j = w; j < NR; j++)
			out[(size_t)k * NR + j] = 0.0f;
	}
}

/*
** A micro-kernel: micro(K, stp, mvp, c, ldc) updates the MR x NR block of
** c (row stride ldc floats) in place from one st and one mv panel.
*/
typedef void (*micro_fn)(int K, const float *stp, const float *mvp, float *c,
			 int64_t ldc);

/* A whole kernel: acc (rows ldc floats apart) += st^T mv, k in order. */
typedef void (*kernel_fn)(int K, int M, int N, const ls_mm_src *st,
			  const ls_mm_src *mv, float *acc, int64_t ldc);

/* A kernel variant: its name (the block shape, unless the first of its
** instruction set) and kernel. */
typedef struct mm_variant {
	const char *name;
	kernel_fn run;
	int (*runs)(void);      /* 1 if this CPU runs it */
} mm_variant;

/* The portable kernel: plain loops, k outer, libm fmaf. */
static void mm_generic(int K, int M, int N, const ls_mm_src *st,
		       const ls_mm_src *mv, float *acc, int64_t ldc)
{
	float *a = lm_xmalloc(sizeof(float) * (size_t)M);
	float *b = lm_xmalloc(sizeof(float) * (size_t)N);
	for (int k = 0; k < K; k++) {
		src_row(st, k, 0, M, a);
		src_row(mv, k, 0, N, b);
		for (int m = 0; m < M; m++) {
			float *c = acc + (size_t)m * ldc;
			for (int n = 0; n < N; n++)
				c[n] = fmaf(a[m], b[n], c[n]);
		}
	}
	free(a);
	free(b);
}

/*
** The blocked kernel: st packed once, then per mv panel (kept in L1) every
** MR x NR block of acc; a block cut by the edge of acc runs in a padded
** tile (its elements' chains are the same, the padding is thrown away).
** Inlined into one function per variant (MR, NR and micro constant, the
** packing compiled for the variant's instruction set).
*/
INLINE void mm_blocked(const int MR, const int NR, micro_fn micro, int K,
		       int M, int N, const ls_mm_src *st, const ls_mm_src *mv,
		       float *acc, int64_t ldc)
{
	int nmb = (M + MR - 1) / MR, nnb = (N + NR - 1) / NR;
	size_t Mp = (size_t)nmb * MR;
	float *stp = lm_xmalloc(Mp * K * sizeof(float));
	float *mvp = lm_xmalloc((size_t)NR * K * sizeof(float));
	float tile[LS_MM_MAX_TILE];

	pack_st(K, M, st, MR, stp);
	for (int nb = 0; nb < nnb; nb++) {
		int cols = N - nb * NR < NR ? N - nb * NR : NR;
		pack_mv(K, N, mv, nb * NR, NR, mvp);
		for (int mb = 0; mb < nmb; mb++) {
			const float *sp = stp + (size_t)mb * K * MR;
			int rows = M - mb * MR < MR ? M - mb * MR : MR;
			float *c = acc + (size_t)mb * MR * ldc + (size_t)nb * NR;
			if (rows == MR && cols == NR) {
				micro(K, sp, mvp, c, ldc);
				continue;
			}
			memset(tile, 0, sizeof(float) * (size_t)(MR * NR));
			for (int r = 0; r < rows; r++)
				memcpy(tile + r * NR, c + (size_t)r * ldc,
				       sizeof(float) * (size_t)cols);
			micro(K, sp, mvp, tile, NR);
			for (int r = 0; r < rows; r++)
				memcpy(c + (size_t)r * ldc, tile + r * NR,
				       sizeof(float) * (size_t)cols);
		}
	}
	free(stp);
	free(mvp);
}

#ifdef HAVE_X86_KERNELS

/*
** AVX2 + FMA: 6 rows x 16 columns, 12 ymm accumulators (two FMA pipes of
** 4-cycle latency need at least 8 chains in flight; 12 leave room for the
** loads), two column vectors and one broadcast per row and k.
*/
#define AVX2_ROW(r) \
	__m256 c##r##0 = _mm256_loadu_ps(c + (r) * ldc); \
	__m256 c##r##1 = _mm256_loadu_ps(c + (r) * ldc + 8)
#define AVX2_FMA(r) do { \
	__m256 a_ = _mm256_broadcast_ss(a + (r)); \
	c##r##0 = _mm256_fmadd_ps(a_, b0, c##r##0); \
	c##r##1 = _mm256_fmadd_ps(a_, b1, c##r##1); \
} while (0)
#define AVX2_STORE(r) do { \
	_mm256_storeu_ps(c + (r) * ldc, c##r##0); \
	_mm256_storeu_ps(c + (r) * ldc + 8, c##r##1); \
} while (0)

__attribute__((target("avx2,fma")))
static void micro_avx2(int K, const float *stp, const float *mvp, float *c,
		       int64_t ldc)
{
	AVX2_ROW(0);
	AVX2_ROW(1);
	AVX2_ROW(2);
	AVX2_ROW(3);
	AVX2_ROW(4);
	AVX2_ROW(5);
	for (int k = 0; k < K; k++) {
		const float *a = stp + 6 * k;
		__m256 b0 = _mm256_loadu_ps(mvp + 16 * k);
		__m256 b1 = _mm256_loadu_ps(mvp + 16 * k + 8);
		AVX2_FMA(0);
		AVX2_FMA(1);
		AVX2_FMA(2);
		AVX2_FMA(3);
		AVX2_FMA(4);
		AVX2_FMA(5);
	}
	AVX2_STORE(0);
	AVX2_STORE(1);
	AVX2_STORE(2);
	AVX2_STORE(3);
	AVX2_STORE(4);
	AVX2_STORE(5);
}

/* AVX2 + FMA, the earlier shape: 4 rows x 16 columns (8 accumulators). */
__attribute__((target("avx2,fma")))
static void micro_avx2_4x16(int K, const float *stp, const float *mvp,
			    float *c, int64_t ldc)
{
	AVX2_ROW(0);
	AVX2_ROW(1);
	AVX2_ROW(2);
	AVX2_ROW(3);
	for (int k = 0; k < K; k++) {
		const float *a = stp + 4 * k;
		__m256 b0 = _mm256_loadu_ps(mvp + 16 * k);
		__m256 b1 = _mm256_loadu_ps(mvp + 16 * k + 8);
		AVX2_FMA(0);
		AVX2_FMA(1);
		AVX2_FMA(2);
		AVX2_FMA(3);
	}
	AVX2_STORE(0);
	AVX2_STORE(1);
	AVX2_STORE(2);
	AVX2_STORE(3);
}

/* AVX-512: 4 rows x 64 columns (16 zmm accumulators, kept in registers). */
#define LD4(i) \
	__m512 c##i##0 = _mm512_loadu_ps(c + (i) * ldc); \
	__m512 c##i##1 = _mm512_loadu_ps(c + (i) * ldc + 16); \
	__m512 c##i##2 = _mm512_loadu_ps(c + (i) * ldc + 32); \
	__m512 c##i##3 = _mm512_loadu_ps(c + (i) * ldc + 48)
#define FMA4(i) do { \
	__m512 a_ = _mm512_set1_ps(a[i]); \
	c##i##0 = _mm512_fmadd_ps(a_, b0, c##i##0); \
	c##i##1 = _mm512_fmadd_ps(a_, b1, c##i##1); \
	c##i##2 = _mm512_fmadd_ps(a_, b2, c##i##2); \
	c##i##3 = _mm512_fmadd_ps(a_, b3, c##i##3); \
} while (0)
#define ST4(i) do { \
	_mm512_storeu_ps(c + (i) * ldc, c##i##0); \
	_mm512_storeu_ps(c + (i) * ldc + 16, c##i##1); \
	_mm512_storeu_ps(c + (i) * ldc + 32, c##i##2); \
	_mm512_storeu_ps(c + (i) * ldc + 48, c##i##3); \
} while (0)

__attribute__((target("avx512f")))
static void micro_avx512(int K, const float *stp, const float *mvp, float *c,
			 int64_t ldc)
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

/* The variants' kernels: the blocked kernel with their micro-kernel. */
__attribute__((target("avx512f")))
static void mm_avx512(int K, int M, int N, const ls_mm_src *st,
		      const ls_mm_src *mv, float *acc, int64_t ldc)
{
	mm_blocked(4, 64, micro_avx512, K, M, N, st, mv, acc, ldc);
}

__attribute__((target("avx2,fma")))
static void mm_avx2(int K, int M, int N, const ls_mm_src *st,
		    const ls_mm_src *mv, float *acc, int64_t ldc)
{
	mm_blocked(6, 16, micro_avx2, K, M, N, st, mv, acc, ldc);
}

__attribute__((target("avx2,fma")))
static void mm_avx2_4x16(int K, int M, int N, const ls_mm_src *st,
			 const ls_mm_src *mv, float *acc, int64_t ldc)
{
	mm_blocked(4, 16, micro_avx2_4x16, K, M, N, st, mv, acc, ldc);
}

static int runs_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static int runs_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
}

#endif

static int runs_always(void)
{
	return 1;
}

/* Every variant, the preferred first; the generic one last. */
static const mm_variant variants[] = {
#ifdef HAVE_X86_KERNELS
	{ "avx512", mm_avx512, runs_avx512 },
	{ "avx2", mm_avx2, runs_avx2 },
	{ "avx2-4x16", mm_avx2_4x16, runs_avx2 },
#endif
	{ "generic", mm_generic, runs_always },
};
#define N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

static const mm_variant *chosen;

/* The first variant this CPU runs. */
static const mm_variant *best(void)
{
	for (int i = 0; i < N_VARIANTS; i++)
		if (variants[i].runs())
			return &variants[i];
	return &variants[N_VARIANTS - 1];
}

int ls_mm_kernel_force(const char *name)
{
	if (!name) {
		chosen = best();
		return 0;
	}
	for (int i = 0; i < N_VARIANTS; i++)
		if (strcmp(name, variants[i].name) == 0) {
			if (!variants[i].runs())
				return -1;
			chosen = &variants[i];
			return 0;
		}
	return -1;
}

const char *ls_mm_kernel_name(void)
{
	if (!chosen)
		chosen = best();
	return chosen->name;
}

const char *ls_mm_kernel_variant(int i)
{
	return i >= 0 && i < N_VARIANTS ? variants[i].name : NULL;
}

void ls_mm_kernel_ld(int K, int M, int N, const ls_mm_src *st,
		     const ls_mm_src *mv, float *acc, int64_t ldc)
{
	if (!chosen)
		chosen = best();
	if (K <= 0 || M <= 0 || N <= 0)
		return;
	chosen->run(K, M, N, st, mv, acc, ldc);
}

void ls_mm_kernel_src(int K, int M, int N, const ls_mm_src *st,
		      const ls_mm_src *mv, float *acc)
{
	ls_mm_kernel_ld(K, M, N, st, mv, acc, N);
}

void ls_mm_kernel(int K, int M, int N, const float *st, const float *mv,
		  float *acc)
{
	ls_mm_src a = { st, M, 0 }, b = { mv, N, 0 };
	ls_mm_kernel_src(K, M, N, &a, &b, acc);
}

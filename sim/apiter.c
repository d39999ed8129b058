/*
** apiter.c -- the element loops over access patterns and the contiguous
** dtype conversions: the simulator's hottest code after the matmul kernel.
**
** A pattern (ls_opnd) is a row-major walk of byte strides; the innermost
** dimension is handled as a "run" (contiguous runs use memcpy and block
** conversions). Every byte of memory has a shadow byte: 1 once written.
** Reads check the shadow; a read of never-written bytes is reported to the
** caller (who turns it into the uninitialized-read error) or, when allowed,
** reads as NaN (raw: 0xff bytes, a NaN in every float format).
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"

#include <math.h>
#include <string.h>

#define ONES64 0x0101010101010101ull

/*
** 1 if the n shadow bytes at p are all set. Shadow bytes are 0 or 1, so
** the AND of every 8-byte word is ONES64 exactly when all are set: an
** and-reduction over 64-byte blocks (vectorized by the compiler), with
** an early exit every 4 KiB.
*/
static int all_set(const uint8_t *p, int64_t n)
{
	typedef uint64_t v2u __attribute__((vector_size(16)));
	while (n >= 64) {
		int64_t blk = n < 4096 ? n & ~(int64_t)63 : 4096;
		v2u a0, a1, a2, a3, w0, w1, w2, w3;
		uint64_t r;
		memcpy(&a0, p, 16);
		memcpy(&a1, p + 16, 16);
		memcpy(&a2, p + 32, 16);
		memcpy(&a3, p + 48, 16);
		for (int64_t i = 64; i < blk; i += 64) {
			memcpy(&w0, p + i, 16);
			memcpy(&w1, p + i + 16, 16);
			memcpy(&w2, p + i + 32, 16);
			memcpy(&w3, p + i + 48, 16);
			a0 &= w0;
			a1 &= w1;
			a2 &= w2;
			a3 &= w3;
		}
		a0 &= a1 & a2 & a3;
		r = a0[0] & a0[1];
		if (r != ONES64)
			return 0;
		p += blk;
		n -= blk;
	}
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		if (w != ONES64)
			return 0;
		p += 8;
		n -= 8;
	}
	while (n-- > 0)
		if (*p++ != 1)
			return 0;
	return 1;
}

int ls_all_written(const uint8_t *init, int64_t n)
{
	return all_set(init, n);
}

/* 1 if the element's shadow bytes are all set. */
static inline int elem_set(const uint8_t *ip, int es)
{
	switch (es) {
	case 4: { uint32_t w; memcpy(&w, ip, 4); return w == 0x01010101u; }
	case 2: return ip[0] == 1 && ip[1] == 1;
	case 1: return ip[0] == 1;
	default: return all_set(ip, es);
	}
}

/* Advance the odometer over dims 0..nd-2; returns the new byte offset. */
#define NEXT_RUN(o, idx, off) do { \
	for (int d_ = (o)->ndim - 2; d_ >= 0; d_--) { \
		(off) += (o)->stride[d_]; \
		if (++(idx)[d_] < (o)->num[d_]) \
			break; \
		(off) -= (o)->stride[d_] * (o)->num[d_]; \
		(idx)[d_] = 0; \
	} \
} while (0)

/* Float32 view of the contiguous n elements of dtype t at in. */
void ls_dtype_to_f32(lm_dtype t, const void *in, float *out, int64_t n)
{
	const uint8_t *p = in;
	switch (t) {
	case LM_DT_FLOAT32:
	case LM_DT_FLOAT32R:
		memcpy(out, in, (size_t)n * 4);
		return;
	case LM_DT_BFLOAT16:
		for (int64_t i = 0; i < n; i++) {
			uint16_t h;
			uint32_t u;
			memcpy(&h, p + 2 * i, 2);
			u = (uint32_t)h << 16;
			memcpy(&out[i], &u, 4);
		}
		return;
	default: {
		int es = lm_dtype_size(t);
		for (int64_t i = 0; i < n; i++)
			out[i] = lm_load_elem(t, p + es * i);
	}
	}
}

/* Store n float32 values contiguously as dtype t, rounding to nearest even. */
void ls_f32_to_dtype(lm_dtype t, const float *in, void *out, int64_t n)
{
	uint8_t *p = out;
	switch (t) {
	case LM_DT_FLOAT32:
	case LM_DT_FLOAT32R:
		memcpy(out, in, (size_t)n * 4);
		return;
	case LM_DT_BFLOAT16:
		for (int64_t i = 0; i < n; i++) {
			uint32_t u;
			uint16_t h;
			memcpy(&u, &in[i], 4);
			if ((u & 0x7fffffffu) > 0x7f800000u)
				h = lm_f32_to_bf16(in[i]); /* NaN: the model's rule */
			else
				h = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
			memcpy(p + 2 * i, &h, 2);
		}
		return;
	default: {
		int es = lm_dtype_size(t);
		for (int64_t i = 0; i < n; i++)
			lm_store_elem(t, p + es * i, in[i]);
	}
	}
}

/* The NaN of dtype t's float32 view (what unwritten memory reads as). */
static float uninit_value(void)
{
	return lm_bits_f32(0xffffffffu);
}

const uint8_t *ls_gather_f32(const ls_view *v, float *out, int allow_uninit)
{
	const ls_opnd *o = v->o;
	const int nd = o->ndim, es = o->esize;
	const int64_t n = o->num[nd - 1], s = o->stride[nd - 1];
	const int64_t outer = o->count / n;
	int64_t idx[LS_MAX_DIMS] = {0}, off = 0;

	for (int64_t r = 0; r < outer; r++, out += n) {
		const uint8_t *p = v->data + off, *ip = v->init + off;
		if (s == es && all_set(ip, n * es)) {
			ls_dtype_to_f32(o->dtype, p, out, n);
		} else {
			for (int64_t i = 0; i < n; i++, p += s, ip += s) {
				if (elem_set(ip, es))
					out[i] = lm_load_elem(o->dtype, p);
				else if (allow_uninit)
					out[i] = uninit_value();
				else
					return p;
			}
		}
		NEXT_RUN(o, idx, off);
	}
	return NULL;
}

const uint8_t *ls_gather_raw(const ls_view *v, void *outv, int allow_uninit)
{
	const ls_opnd *o = v->o;
	const int nd = o->ndim, es = o->esize;
	const int64_t n = o->num[nd - 1], s = o->stride[nd - 1];
	const int64_t outer = o->count / n;
	int64_t idx[LS_MAX_DIMS] = {0}, off = 0;
	uint8_t *out = outv;

	for (int64_t r = 0; r < outer; r++, out += n * es) {
		const uint8_t *p = v->data + off, *ip = v->init + off;
		if (s == es && all_set(ip, n * es)) {
			memcpy(out, p, (size_t)(n * es));
		} else {
			uint8_t *q = out;
			for (int64_t i = 0; i < n; i++, p += s, ip += s, q += es) {
				if (elem_set(ip, es))
					memcpy(q, p, (size_t)es);
				else if (allow_uninit)
					memset(q, 0xff, (size_t)es);
				else
					return p;
			}
		}
		NEXT_RUN(o, idx, off);
	}
	return NULL;
}

void ls_scatter_raw(const ls_view *v, const void *inv)
{
	const ls_opnd *o = v->o;
	const int nd = o->ndim, es = o->esize;
	const int64_t n = o->num[nd - 1], s = o->stride[nd - 1];
	const int64_t outer = o->count / n;
	int64_t idx[LS_MAX_DIMS] = {0}, off = 0;
	const uint8_t *in = inv;

	for (int64_t r = 0; r < outer; r++, in += n * es) {
		uint8_t *p = v->data + off, *ip = v->init + off;
		if (s == es) {
			memcpy(p, in, (size_t)(n * es));
			memset(ip, 1, (size_t)(n * es));
		} else if (es == 4) {
			for (int64_t i = 0; i < n; i++, p += s, ip += s) {
				memcpy(p, in + 4 * i, 4);
				memset(ip, 1, 4);
			}
		} else {
			for (int64_t i = 0; i < n; i++, p += s, ip += s) {
				memcpy(p, in + es * i, (size_t)es);
				memset(ip, 1, (size_t)es);
			}
		}
		NEXT_RUN(o, idx, off);
	}
}

void ls_scatter_masked(const ls_view *v, const void *inv, const uint8_t *mask)
{
	const ls_opnd *o = v->o;
	const int nd = o->ndim, es = o->esize;
	const int64_t n = o->num[nd - 1], s = o->stride[nd - 1];
	const int64_t outer = o->count / n;
	int64_t idx[LS_MAX_DIMS] = {0}, off = 0;
	const uint8_t *in = inv;

	for (int64_t r = 0; r < outer; r++, in += n * es, mask += n) {
		uint8_t *p = v->data + off, *ip = v->init + off;
		for (int64_t i = 0; i < n; i++, p += s, ip += s)
			if (mask[i]) {
				memcpy(p, in + es * i, (size_t)es);
				memset(ip, 1, (size_t)es);
			}
		NEXT_RUN(o, idx, off);
	}
}

/*
** Rows whose shadow the caller knows to be all written (rows rows of n
** elements, ld bytes apart from v->data): the same copies and
** conversions as the loops above, without reading or setting the shadow.
*/
void ls_rows_to_f32(const ls_view *v, int64_t rows, int64_t n, int64_t ld,
		    float *out)
{
	for (int64_t r = 0; r < rows; r++)
		ls_dtype_to_f32(v->o->dtype, v->data + r * ld, out + r * n, n);
}

void ls_rows_get_raw(const ls_view *v, int64_t rows, int64_t n, int64_t ld,
		     void *outv)
{
	const size_t rb = (size_t)(n * v->o->esize);
	uint8_t *out = outv;
	for (int64_t r = 0; r < rows; r++)
		memcpy(out + (size_t)r * rb, v->data + r * ld, rb);
}

void ls_rows_put_raw(const ls_view *v, int64_t rows, int64_t n, int64_t ld,
		     const void *inv)
{
	const size_t rb = (size_t)(n * v->o->esize);
	const uint8_t *in = inv;
	for (int64_t r = 0; r < rows; r++)
		memcpy(v->data + r * ld, in + (size_t)r * rb, rb);
}

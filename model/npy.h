/*
** npy.h -- NumPy .npy read/write (format versions 1.0 and 2.0, C order).
**
** Element types: '<f4' (float32), '<f2' (float16), '<u2' (raw bfloat16
** bits, the convention NumPy users follow for bf16), '|u1' and '|i1' for
** the float8 formats' raw bytes. Malformed headers are errors, never crashes.
*/
#ifndef LNCSIM_NPY_H
#define LNCSIM_NPY_H

#include <stdint.h>
#include "common.h"
#include "dtype.h"

enum { LM_NPY_MAX_DIMS = 16 };

typedef struct lm_npy {
	char descr[8];      /* "<f4", "<f2", "<u2", "|u1", ... as in the header */
	int ndim;
	int64_t shape[LM_NPY_MAX_DIMS];
	int64_t count;      /* product of shape (1 for a 0-d array) */
	int elem_size;
	void *data;         /* count * elem_size bytes, little-endian, C order */
} lm_npy;

/*
** Read a file; *out is filled (free with lm_npy_free). Only a regular file
** is opened (a FIFO or a device is refused at once); the header is at most
** 10000 bytes (NumPy's default limit), and the payload must have exactly
** the bytes the header's shape needs (at most 16 GiB), both checked before
** the payload is read.
*/
int lm_npy_read(const char *path, lm_npy *out, lm_error *err);
/* The header only (descr, shape, count; data stays NULL): to check a file
** against what it must hold before reading its payload. */
int lm_npy_read_header(const char *path, lm_npy *out, lm_error *err);
/* lm_npy_read_header and lm_npy_read of the file name (one plain
** component) of the directory dirfd, never through a symlink
** (lm_open_regular_at: "PATH: is a symlink; refusing to follow it"). path
** names the file in errors. */
int lm_npy_read_header_at(int dirfd, const char *name, const char *path,
			  lm_npy *out, lm_error *err);
int lm_npy_read_at(int dirfd, const char *name, const char *path,
		   lm_npy *out, lm_error *err);
/* Parse from memory (path used in messages only). */
int lm_npy_parse(const void *bytes, size_t len, const char *path, lm_npy *out,
		 lm_error *err);
void lm_npy_free(lm_npy *a);

/*
** Write `count` elements of dtype t (raw bytes at data) with the given shape,
** version 1.0 header (2.0 when the header needs it), atomically.
** bfloat16 is written as '<u2'.
*/
int lm_npy_write(const char *path, lm_dtype t, const int64_t *shape, int ndim,
		 const void *data, lm_error *err);
/* Serialize to a malloc'd buffer instead of a file. */
int lm_npy_serialize(lm_dtype t, const int64_t *shape, int ndim,
		     const void *data, char **out, size_t *out_len,
		     lm_error *err);

/*
** Convert the array's elements to dtype t into dst (count elements of t).
** '<f4' converts (rounding) to any float type; otherwise the descr must be
** the one of t ('<f2' for float16, '<u2' for bfloat16, '|u1' for float8).
*/
int lm_npy_convert(const lm_npy *a, lm_dtype t, void *dst, const char *path,
		   lm_error *err);
/* The descr lncsim writes for dtype t ("<f4", "<f2", "<u2", "|u1"...). */
const char *lm_npy_descr_for(lm_dtype t);

#endif

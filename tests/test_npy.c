/*
** test_npy.c -- .npy reading, writing and conversion.
**
** Round trips for every dtype and for 0-d, 1-d, 3-d and empty shapes;
** byte-for-byte agreement with files written by NumPy's np.save; version
** 2.0 and 3.0 headers; one test per class of malformed header with the
** message asserted; every truncation of a valid file failing cleanly.
*/
#include "common.h"
#include "npy.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers -------------------------------------------------------------- */

/*
** Build a .npy image by hand: magic, version major.0, header length of
** the given width (2 or 4 bytes), header text as given (no padding), then
** data. Caller frees.
*/
static char *craft(int major, const char *header, const void *data,
		   size_t data_len, size_t *len)
{
	size_t hl = strlen(header), lw = major == 1 ? 2 : 4;
	size_t n = 8 + lw + hl + data_len;
	char *b = lm_xmalloc(n);

	memcpy(b, "\x93NUMPY", 6);
	b[6] = (char)major;
	b[7] = 0;
	b[8] = (char)(hl & 0xff);
	b[9] = (char)(hl >> 8 & 0xff);
	if (lw == 4) {
		b[10] = (char)(hl >> 16 & 0xff);
		b[11] = (char)(hl >> 24 & 0xff);
	}
	memcpy(b + 8 + lw, header, hl);
	if (data_len)
		memcpy(b + 8 + lw + hl, data, data_len);
	*len = n;
	return b;
}

/*
** Parse a v1.0 image with header text h and data_len zero bytes of data;
** return the error message (static buffer), or NULL if it parsed.
*/
static const char *parse_msg(const char *h, size_t data_len)
{
	static lm_error err;
	char *zeros = lm_xcalloc(1, data_len + 1);
	size_t len;
	char *b = craft(1, h, zeros, data_len, &len);
	lm_npy a;
	int rc;

	memset(&err, 0, sizeof err);
	rc = lm_npy_parse(b, len, "x.npy", &a, &err);
	free(b);
	free(zeros);
	if (rc == 0) {
		lm_npy_free(&a);
		return NULL;
	}
	ck_assert_int_eq(rc, LM_EINPUT);
	ck_assert_ptr_null(a.data);
	return err.msg;
}

/* Assert the header h (with data_len bytes) fails with text in the msg. */
#define ck_header_fails(h, data_len, text)                                  \
	do {                                                                \
		const char *m_ = parse_msg((h), (data_len));                \
		ck_assert_msg(m_ != NULL, "header parsed: %s", (h));        \
		ck_assert_contains(m_, (text));                             \
		ck_assert_contains(m_, "x.npy: npy ");                      \
	} while (0)

/* Parse bytes that must be valid; fills *a. */
static void parse_ok(const void *b, size_t len, lm_npy *a)
{
	lm_error err = {{0}, 0};
	int rc = lm_npy_parse(b, len, "ok.npy", a, &err);
	ck_assert_msg(rc == 0, "parse failed: %s", err.msg);
}

/* Deterministic filler bytes. */
static void fill(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;
	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

/* ---- round trips ---------------------------------------------------------- */

START_TEST(test_roundtrip_all_dtypes)
{
	static const int64_t shapes[][3] = {{0}, {5}, {2, 3, 4}, {0, 3}, {1}};
	static const int ndims[] = {0, 1, 3, 2, 1};
	int t, k, i;

	for (t = LM_DT_INVALID + 1; t < LM_DT_COUNT; t++) {
		for (k = 0; k < 5; k++) {
			int64_t count = 1;
			size_t es = (size_t)lm_dtype_size((lm_dtype)t);
			unsigned char src[24 * 8], dst[24 * 8];
			char *img;
			size_t len, hdr;
			lm_npy a;
			lm_error err;

			for (i = 0; i < ndims[k]; i++)
				count *= shapes[k][i];
			fill(src, sizeof src, (unsigned)(t * 7 + k));
			ck_assert_int_eq(lm_npy_serialize((lm_dtype)t,
				shapes[k], ndims[k], src, &img, &len, &err), 0);
			/* Header (magic to '\n') is a multiple of 64. */
			hdr = 10 + (size_t)((unsigned char)img[8] |
					    (unsigned char)img[9] << 8);
			ck_assert_uint_eq(hdr % 64, 0);
			ck_assert_int_eq(img[hdr - 1], '\n');
			ck_assert_uint_eq(len, hdr + (size_t)count * es);
			parse_ok(img, len, &a);
			ck_assert_str_eq(a.descr,
					 lm_npy_descr_for((lm_dtype)t));
			ck_assert_int_eq(a.ndim, ndims[k]);
			for (i = 0; i < ndims[k]; i++)
				ck_assert_int_eq(a.shape[i], shapes[k][i]);
			ck_assert_int_eq(a.count, count);
			ck_assert_int_eq(a.elem_size, es);
			ck_assert_ptr_nonnull(a.data);
			ck_assert(memcmp(a.data, src, (size_t)count * es) == 0);
			memset(dst, 0, sizeof dst);
			ck_assert_int_eq(lm_npy_convert(&a, (lm_dtype)t, dst,
							"ok.npy", &err), 0);
			ck_assert(memcmp(dst, src, (size_t)count * es) == 0);
			lm_npy_free(&a);
			lm_npy_free(&a); /* harmless */
			free(img);
		}
	}
}
END_TEST

START_TEST(test_write_read_file)
{
	char *dir = tu_tmpdir("npy");
	char *path = lm_xasprintf("%s/t.npy", dir);
	int64_t shape[3] = {2, 3, 4};
	float v[24];
	lm_npy a;
	lm_error err;
	int i;

	for (i = 0; i < 24; i++)
		v[i] = (float)i * 0.25f - 3.0f;
	ck_assert_int_eq(lm_npy_write(path, LM_DT_FLOAT32, shape, 3, v, &err),
			 0);
	ck_assert_int_eq(lm_npy_read(path, &a, &err), 0);
	ck_assert_str_eq(a.descr, "<f4");
	ck_assert_int_eq(a.count, 24);
	ck_assert(memcmp(a.data, v, sizeof v) == 0);
	lm_npy_free(&a);

	/* Overwrite atomically with a bfloat16 array. */
	{
		uint16_t bf[6] = {0x3f80, 0x4000, 0xbf80, 0x7f80, 0x7fc0, 0};
		int64_t s2[1] = {6};
		ck_assert_int_eq(lm_npy_write(path, LM_DT_BFLOAT16, s2, 1, bf,
					      &err), 0);
		ck_assert_int_eq(lm_npy_read(path, &a, &err), 0);
		ck_assert_str_eq(a.descr, "<u2");
		ck_assert(memcmp(a.data, bf, sizeof bf) == 0);
		lm_npy_free(&a);
	}

	/* Missing file and unwritable directory. */
	free(path);
	path = lm_xasprintf("%s/missing.npy", dir);
	ck_assert_int_ne(lm_npy_read(path, &a, &err), 0);
	ck_assert_contains(err.msg, "missing.npy");
	ck_assert_ptr_null(a.data);
	free(path);
	path = lm_xasprintf("%s/no/such/dir/t.npy", dir);
	ck_assert_int_ne(lm_npy_write(path, LM_DT_FLOAT32, shape, 3, v, &err),
			 0);
	ck_assert_contains(err.msg, "t.npy");
	free(path);

	path = lm_xasprintf("%s/t.npy", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0); /* no temp file left behind */
	free(path);
	free(dir);
}
END_TEST

/* Files written by NumPy 1.24's np.save, byte for byte. */
START_TEST(test_numpy_golden)
{
	static const char pad[] =
		"                                                          "
		"                    ";
	static const struct {
		lm_dtype t;
		int ndim;
		int64_t shape[2];
		const char *dict;
		const char *data;
		size_t data_len;
	} g[] = {
		{LM_DT_FLOAT32, 2, {2, 3},
		 "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
		 "\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@"
		 "\x00\x00\xa0@\x00\x00\xc0@", 24},
		{LM_DT_FLOAT16, 0, {0},
		 "{'descr': '<f2', 'fortran_order': False, 'shape': (), }",
		 "\x00G", 2},
		{LM_DT_BFLOAT16, 1, {5},
		 "{'descr': '<u2', 'fortran_order': False, 'shape': (5,), }",
		 "\x00\x00\x01\x00\x02\x00\x03\x00\x04\x00", 10},
		{LM_DT_FLOAT8E4, 2, {0, 3},
		 "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 3), }",
		 "", 0},
	};
	size_t i, len, dl;
	char want[128 + 24], *img;
	lm_error err;

	for (i = 0; i < sizeof g / sizeof g[0]; i++) {
		dl = strlen(g[i].dict);
		memcpy(want, "\x93NUMPY\x01\x00v\x00", 10);
		memcpy(want + 10, g[i].dict, dl);
		memcpy(want + 10 + dl, pad, 117 - dl);
		want[127] = '\n';
		memcpy(want + 128, g[i].data, g[i].data_len);
		ck_assert_int_eq(lm_npy_serialize(g[i].t, g[i].shape, g[i].ndim,
						  g[i].data, &img, &len, &err),
				 0);
		ck_assert_uint_eq(len, 128 + g[i].data_len);
		ck_assert_msg(memcmp(img, want, len) == 0, "golden %zu differs",
			      i);
		free(img);
	}
}
END_TEST

START_TEST(test_v2_v3_headers)
{
	const char *h = "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (3,), }   \n";
	float v[3] = {1.5f, -2.0f, 0.25f};
	size_t len;
	char *b;
	lm_npy a;
	int major;

	for (major = 2; major <= 3; major++) {
		b = craft(major, h, v, sizeof v, &len);
		parse_ok(b, len, &a);
		ck_assert_str_eq(a.descr, "<f4");
		ck_assert_int_eq(a.ndim, 1);
		ck_assert_int_eq(a.shape[0], 3);
		ck_assert(memcmp(a.data, v, sizeof v) == 0);
		lm_npy_free(&a);
		free(b);
	}
	/* A v2.0 header of 10000 bytes (spaces): NumPy's limit, accepted. */
	{
		size_t n = 10000;
		char *big = lm_xmalloc(n + 1);
		memset(big, ' ', n);
		memcpy(big, h, strlen(h) - 1);
		big[n - 1] = '\n';
		big[n] = 0;
		b = craft(2, big, v, sizeof v, &len);
		parse_ok(b, len, &a);
		ck_assert_int_eq(a.count, 3);
		lm_npy_free(&a);
		free(b);
		free(big);
	}
}
END_TEST

/*
** Headers over 10000 bytes are refused, as NumPy's np.load does by
** default: a valid dict padded to 10001 and to 70000 bytes (the latter
** needs a v2.0 length field).
*/
START_TEST(test_err_header_too_long)
{
	const char *h = "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (3,), }";
	static const size_t sizes[2] = { 10001, 70000 };
	float v[3] = {1.5f, -2.0f, 0.25f};
	lm_error err;
	lm_npy a;
	char msg[200];

	for (int i = 0; i < 2; i++) {
		size_t n = sizes[i], len;
		char *big = lm_xmalloc(n + 1), *b;
		memset(big, ' ', n);
		memcpy(big, h, strlen(h));
		big[n - 1] = '\n';
		big[n] = 0;
		b = craft(2, big, v, sizeof v, &len);
		ck_assert_int_eq(lm_npy_parse(b, len, "x.npy", &a, &err),
				 LM_EINPUT);
		snprintf(msg, sizeof msg, "x.npy: npy header: header length "
			 "%zu exceeds the limit of 10000 bytes", n);
		ck_assert_str_eq(err.msg, msg);
		ck_assert_ptr_null(a.data);
		free(b);
		free(big);
	}
}
END_TEST

/*
** lm_npy_read opens regular files only: /dev/zero, a FIFO (no writer: the
** open must not wait) and a directory fail at once, exit-2 errors.
*/
START_TEST(test_read_special_files)
{
	char *dir = tu_tmpdir("npy-special");
	char *fifo = lm_path_join(dir, "f.npy");
	char msg[600];
	lm_error err;
	lm_npy a;

	ck_assert_int_eq(lm_npy_read("/dev/zero", &a, &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, "/dev/zero: not a regular file (a "
			 "character device)");
	ck_assert_ptr_null(a.data);
	ck_assert_int_eq(lm_npy_read_header("/dev/zero", &a, &err), LM_EINPUT);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(lm_npy_read(fifo, &a, &err), LM_EINPUT);
	snprintf(msg, sizeof msg, "%s: not a regular file (a FIFO)", fifo);
	ck_assert_str_eq(err.msg, msg);
	ck_assert_int_eq(lm_npy_read(dir, &a, &err), LM_EINPUT);
	snprintf(msg, sizeof msg, "%s: is a directory", dir);
	ck_assert_str_eq(err.msg, msg);
	free(fifo);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
** Sizes are checked from the file's size and the header before anything
** big is read: a 64 MiB header (a sparse file), a header length beyond
** the end, a payload of the wrong size; lm_npy_read_header reads the
** header only.
*/
START_TEST(test_read_checks_sizes_first)
{
	char *dir = tu_tmpdir("npy-sizes");
	char *p, msg[600];
	unsigned char pre[12] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0 };
	const size_t hl = (size_t)64 << 20;
	float v[3] = {1.5f, -2.0f, 0.25f};
	lm_error err;
	lm_npy a;
	size_t len;
	char *b;

	pre[8] = (unsigned char)(hl & 0xff);
	pre[9] = (unsigned char)(hl >> 8 & 0xff);
	pre[10] = (unsigned char)(hl >> 16 & 0xff);
	pre[11] = (unsigned char)(hl >> 24 & 0xff);
	p = tu_write_bytes(dir, "hdr.npy", pre, sizeof pre);
	ck_assert_int_eq(truncate(p, (off_t)(sizeof pre + hl)), 0);
	ck_assert_int_eq(lm_npy_read(p, &a, &err), LM_EINPUT);
	snprintf(msg, sizeof msg, "%s: npy header: header length %zu exceeds "
		 "the limit of 10000 bytes", p, hl);
	ck_assert_str_eq(err.msg, msg);
	free(p);

	pre[8] = pre[9] = pre[10] = pre[11] = 0xff;
	p = tu_write_bytes(dir, "beyond.npy", pre, sizeof pre);
	ck_assert_int_eq(lm_npy_read(p, &a, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "npy header: header length 4294967295 "
			   "beyond end of file (12 bytes)");
	free(p);

	/* 3 floats declared, a 1 GiB payload (sparse) */
	b = craft(1, "{'descr': '<f4', 'fortran_order': False, "
		  "'shape': (3,), }", v, sizeof v, &len);
	p = tu_write_bytes(dir, "long.npy", b, len);
	ck_assert_int_eq(truncate(p, (off_t)len + ((off_t)1 << 30)), 0);
	ck_assert_int_eq(lm_npy_read(p, &a, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "npy data: data too long: shape (3,) of "
			   "'<f4' needs 12 bytes, file has 1073741836");
	ck_assert_int_eq(lm_npy_read_header(p, &a, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "data too long");
	free(p);

	p = tu_write_bytes(dir, "ok.npy", b, len);
	ck_assert_int_eq(lm_npy_read_header(p, &a, &err), 0);
	ck_assert_int_eq(a.count, 3);
	ck_assert_str_eq(a.descr, "<f4");
	ck_assert_ptr_null(a.data);
	ck_assert_int_eq(lm_npy_read(p, &a, &err), 0);
	ck_assert(memcmp(a.data, v, sizeof v) == 0);
	lm_npy_free(&a);
	free(p);
	free(b);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_header_syntax_variants)
{
	static const struct { const char *h; int ndim; int64_t d0, d1; } ok[] = {
		{"{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
		 2, 2, 3},
		{"{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(6,)}",
		 1, 6, 0},
		{"  {  'descr' : '<f4' ,\n 'fortran_order' : False ,"
		 " 'shape' : ( 2 , 3 , ) , }  \n", 2, 2, 3},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
		 2, 2, 3},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (6), }",
		 1, 6, 0},
		{"{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }",
		 1, 6, 0},
		{"{'descr': '<f4', 'fortran_order': True, 'shape': (1, 6, 1), }",
		 3, 1, 6},
	};
	size_t i;
	const char *m;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		size_t len;
		char *b = craft(1, ok[i].h, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
				"\0\0\0\0\0\0\0\0", 24, &len);
		lm_npy a;
		parse_ok(b, len, &a);
		ck_assert_int_eq(a.ndim, ok[i].ndim);
		ck_assert_int_eq(a.shape[0], ok[i].d0);
		if (ok[i].ndim > 1)
			ck_assert_int_eq(a.shape[1], ok[i].d1);
		ck_assert_int_eq(a.count, 6);
		lm_npy_free(&a);
		free(b);
	}
	/* One-byte types take any byte-order mark and read back as '|'. */
	m = parse_msg("{'descr': '>u1', 'fortran_order': False, 'shape': (4,)}",
		      4);
	ck_assert_ptr_null(m);
	m = parse_msg("{'descr': '<i1', 'fortran_order': False, 'shape': (4,)}",
		      4);
	ck_assert_ptr_null(m);
	/* 0-d: one element. */
	m = parse_msg("{'descr': '<f8', 'fortran_order': False, 'shape': ()}",
		      8);
	ck_assert_ptr_null(m);
}
END_TEST

/* ---- malformed headers, one class per test -------------------------------- */

START_TEST(test_err_bad_magic)
{
	static const char junk[] = "PK\x03\x04 not an npy file at all";
	lm_error err;
	lm_npy a;
	ck_assert_int_ne(lm_npy_parse(junk, sizeof junk - 1, "x.npy", &a,
				      &err), 0);
	ck_assert_str_eq(err.msg, "x.npy: npy header: bad magic (not a .npy "
			 "file)");
	ck_assert_int_ne(lm_npy_parse("\x93NUMPz", 6, "x.npy", &a, &err), 0);
	ck_assert_contains(err.msg, "bad magic");
	ck_assert_int_ne(lm_npy_parse("\x92", 1, "x.npy", &a, &err), 0);
	ck_assert_contains(err.msg, "bad magic");
}
END_TEST

START_TEST(test_err_version)
{
	lm_error err;
	lm_npy a;
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x04\x00\x10\x00", 10, "x.npy",
				      &a, &err), 0);
	ck_assert_contains(err.msg, "x.npy: npy header: unsupported version "
			   "4.0");
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x01\x01\x10\x00", 10, "x.npy",
				      &a, &err), 0);
	ck_assert_contains(err.msg, "unsupported version 1.1");
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x00\x00\x10\x00", 10, "x.npy",
				      &a, &err), 0);
	ck_assert_contains(err.msg, "unsupported version 0.0");
}
END_TEST

START_TEST(test_err_truncated_header)
{
	lm_error err;
	lm_npy a;
	ck_assert_int_ne(lm_npy_parse("", 0, "x.npy", &a, &err), 0);
	ck_assert_contains(err.msg, "truncated header");
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x01", 7, "x.npy", &a, &err),
			 0);
	ck_assert_contains(err.msg, "truncated header");
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x01\x00\x10", 9, "x.npy", &a,
				      &err), 0);
	ck_assert_contains(err.msg, "truncated header");
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x02\x00\x10\x00\x00", 11,
				      "x.npy", &a, &err), 0);
	ck_assert_contains(err.msg, "truncated header");
	/* A dict cut short inside the declared length. */
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (2,",
			0, "expected a dimension in 'shape', found end of "
			"header");
	ck_header_fails("{'descr': '<f4", 0, "unterminated string");
	ck_header_fails("", 0, "expected '{' at the start of the header");
}
END_TEST

START_TEST(test_err_header_len_beyond_file)
{
	lm_error err;
	lm_npy a;
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x01\x00\xc8\x00{}", 12,
				      "x.npy", &a, &err), 0);
	ck_assert_str_eq(err.msg, "x.npy: npy header: header length 200 "
			 "beyond end of file (12 bytes)");
	ck_assert_int_ne(lm_npy_parse("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14,
				      "x.npy", &a, &err), 0);
	ck_assert_contains(err.msg, "header length 4294967295 beyond end");
}
END_TEST

START_TEST(test_err_missing_key)
{
	ck_header_fails("{'fortran_order': False, 'shape': (2,), }", 8,
			"missing key 'descr'");
	ck_header_fails("{'descr': '<f4', 'shape': (2,), }", 8,
			"missing key 'fortran_order'");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, }", 8,
			"missing key 'shape'");
	ck_header_fails("{}", 0, "missing key 'descr'");
}
END_TEST

START_TEST(test_err_bad_keys_and_syntax)
{
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (2,), 'extra': 1}", 8,
			"unexpected key 'extra'");
	ck_header_fails("{'descr': '<f4', 'descr': '<f4', "
			"'fortran_order': False, 'shape': (2,)}", 8,
			"duplicate key 'descr'");
	ck_header_fails("{'descr': '<f4' 'fortran_order': False, "
			"'shape': (2,)}", 8, "expected ',' or '}'");
	ck_header_fails("{'descr' '<f4', 'fortran_order': False, "
			"'shape': (2,)}", 8, "expected ':' after a key");
	ck_header_fails("{'descr': '<f4', 'fortran_order': false, "
			"'shape': (2,)}", 8, "expected True or False");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': [2]}", 8, "expected '(' for 'shape'");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (2 3)}", 24, "expected ',' or ')'");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (2,)} x", 8, "unexpected 'x' after the header");
	ck_header_fails("{'descr': 3, 'fortran_order': False, "
			"'shape': (2,)}", 8, "expected a string for 'descr'");
	ck_header_fails("{'descr': [('a', '<f4')], 'fortran_order': False, "
			"'shape': (2,)}", 8, "expected a string for 'descr'");
	ck_header_fails("{'de\\x': '<f4'}", 0, "unsupported character");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", 4,
			"too many dimensions");
}
END_TEST

START_TEST(test_err_fortran_order)
{
	ck_header_fails("{'descr': '<f4', 'fortran_order': True, "
			"'shape': (2, 3), }", 24,
			"x.npy: npy header: fortran_order True not supported");
}
END_TEST

START_TEST(test_err_descr)
{
	ck_header_fails("{'descr': '<c8', 'fortran_order': False, "
			"'shape': (2,), }", 16, "descr '<c8' not supported");
	ck_header_fails("{'descr': '<U10', 'fortran_order': False, "
			"'shape': (2,), }", 80, "descr '<U10' not supported");
	ck_header_fails("{'descr': 'O', 'fortran_order': False, "
			"'shape': (2,), }", 16, "descr 'O' not supported");
	ck_header_fails("{'descr': '=f4', 'fortran_order': False, "
			"'shape': (2,), }", 8, "descr '=f4' not supported");
	ck_header_fails("{'descr': '<f16', 'fortran_order': False, "
			"'shape': (2,), }", 32, "descr '<f16' not supported");
}
END_TEST

START_TEST(test_err_big_endian)
{
	ck_header_fails("{'descr': '>f4', 'fortran_order': False, "
			"'shape': (2,), }", 8,
			"x.npy: npy header: big-endian descr '>f4' not "
			"supported");
	ck_header_fails("{'descr': '>u2', 'fortran_order': False, "
			"'shape': (2,), }", 4, "big-endian descr '>u2'");
}
END_TEST

START_TEST(test_err_dims)
{
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (-1, 3), }", 0, "negative dimension");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (99999999999999999999,), }", 0,
			"dimension too large");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (4611686018427387905,), }", 0,
			"dimension too large");
	/* Each dimension fine, the product overflows int64. */
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (4294967296, 4294967296), }", 0,
			"array too large");
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (2147483648, 2147483648, 2147483648), }", 0,
			"array too large");
	/* Just over the 16 GiB cap. */
	ck_header_fails("{'descr': '<f4', 'fortran_order': False, "
			"'shape': (4294967297,), }", 0, "array too large");
	/* A zero dimension makes the array empty whatever the others. */
	ck_assert_ptr_null(parse_msg("{'descr': '<f4', 'fortran_order': "
				     "False, 'shape': (0, 4294967296), }", 0));
}
END_TEST

START_TEST(test_err_data_size)
{
	const char *h = "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (2, 3), }";
	ck_header_fails(h, 20, "x.npy: npy data: data too short: shape (2, 3) "
			"of '<f4' needs 24 bytes, file has 20");
	ck_header_fails(h, 28, "data too long: shape (2, 3) of '<f4' needs 24 "
			"bytes, file has 28");
	ck_header_fails(h, 0, "data too short");
	ck_assert_ptr_null(parse_msg(h, 24));
	ck_header_fails("{'descr': '<f2', 'fortran_order': False, "
			"'shape': (), }", 4, "shape () of '<f2' needs 2 bytes");
	ck_header_fails("{'descr': '<f2', 'fortran_order': False, "
			"'shape': (3,), }", 4, "shape (3,) of '<f2' needs 6");
}
END_TEST

/* ---- robustness ----------------------------------------------------------- */

/* Parse an exact-size heap copy (so a sanitizer sees any over-read). */
static int parse_copy(const char *b, size_t len, lm_error *err)
{
	char *c = lm_xmalloc(len ? len : 1);
	lm_npy a;
	int rc;

	memcpy(c, b, len);
	rc = lm_npy_parse(c, len, "f.npy", &a, err);
	if (rc == 0)
		lm_npy_free(&a);
	else
		ck_assert_ptr_null(a.data);
	free(c);
	return rc;
}

START_TEST(test_every_truncation_fails)
{
	int64_t shapes[2][3] = {{2, 3, 4}, {0}};
	int ndims[2] = {3, 0};
	unsigned char v[24 * 4];
	lm_error err;
	char *img;
	size_t len, n;
	int k;

	fill(v, sizeof v, 5);
	for (k = 0; k < 2; k++) {
		ck_assert_int_eq(lm_npy_serialize(LM_DT_FLOAT32, shapes[k],
						  ndims[k], v, &img, &len, &err),
				 0);
		ck_assert_int_eq(parse_copy(img, len, &err), 0);
		for (n = 0; n < len; n++) {
			err.msg[0] = 0;
			ck_assert_msg(parse_copy(img, n, &err) == LM_EINPUT,
				      "truncation to %zu bytes parsed", n);
			ck_assert_contains(err.msg, "f.npy: npy ");
		}
		free(img);
	}
}
END_TEST

/* Every header byte replaced by a few values: no crash, no over-read. */
START_TEST(test_header_byte_mutations)
{
	static const char vals[] = {0, ' ', '\'', '"', '(', ')', ',', ':', '{',
				    '}', '-', '9', 'T', '\n', (char)0xff};
	int64_t shape[2] = {3, 2};
	unsigned char v[6 * 2];
	lm_error err;
	char *img;
	size_t len, i, j, hdr;
	int n_ok = 0;

	fill(v, sizeof v, 9);
	ck_assert_int_eq(lm_npy_serialize(LM_DT_FLOAT16, shape, 2, v, &img,
					  &len, &err), 0);
	hdr = len - sizeof v;
	for (i = 0; i < hdr; i++) {
		char keep = img[i];
		for (j = 0; j < sizeof vals; j++) {
			img[i] = vals[j];
			if (parse_copy(img, len, &err) == 0)
				n_ok++;
			else
				ck_assert_contains(err.msg, "f.npy: npy ");
		}
		img[i] = keep;
	}
	ck_assert_int_gt(n_ok, 0); /* e.g. padding spaces -> ' ' */
	free(img);
}
END_TEST

/* ---- writer errors -------------------------------------------------------- */

START_TEST(test_write_errors)
{
	int64_t shape[LM_NPY_MAX_DIMS + 1] = {2, -1};
	char *img;
	size_t len;
	lm_error err;
	float v[2] = {0, 0};

	ck_assert_int_ne(lm_npy_serialize(LM_DT_INVALID, shape, 1, v, &img,
					  &len, &err), 0);
	ck_assert_contains(err.msg, "cannot write dtype invalid");
	ck_assert_int_ne(lm_npy_serialize(LM_DT_FLOAT32, shape, 2, v, &img,
					  &len, &err), 0);
	ck_assert_contains(err.msg, "negative dimension -1");
	ck_assert_int_ne(lm_npy_serialize(LM_DT_FLOAT32, shape,
					  LM_NPY_MAX_DIMS + 1, v, &img, &len,
					  &err), 0);
	ck_assert_contains(err.msg, "17 dimensions");
	shape[0] = (int64_t)1 << 40;
	shape[1] = 1;
	ck_assert_int_ne(lm_npy_serialize(LM_DT_FLOAT32, shape, 2, v, &img,
					  &len, &err), 0);
	ck_assert_contains(err.msg, "array too large");
	ck_assert_int_ne(lm_npy_write("w.npy", LM_DT_FLOAT32, shape, 2, v,
				      &err), 0);
	ck_assert_contains(err.msg, "w.npy: npy write: array too large");
	/* The largest shape header still fits in version 1.0. */
	{
		int64_t big[LM_NPY_MAX_DIMS];
		int i;
		for (i = 0; i < LM_NPY_MAX_DIMS; i++)
			big[i] = i ? 1 : 0;
		big[1] = (int64_t)1 << 62;
		ck_assert_int_eq(lm_npy_serialize(LM_DT_UINT64, big,
						  LM_NPY_MAX_DIMS, NULL, &img,
						  &len, &err), 0);
		ck_assert_int_eq(img[6], 1);
		ck_assert_uint_eq(len % 64, 0);
		free(img);
	}
}
END_TEST

/* ---- conversion ----------------------------------------------------------- */

/* An lm_npy over caller memory (not to be freed). */
static lm_npy view(const char *descr, int elem_size, int64_t count,
		   void *data)
{
	lm_npy a;
	memset(&a, 0, sizeof a);
	snprintf(a.descr, sizeof a.descr, "%s", descr);
	a.ndim = 1;
	a.shape[0] = count;
	a.count = count;
	a.elem_size = elem_size;
	a.data = data;
	return a;
}

START_TEST(test_convert)
{
	float f[5] = {1.0f + 1.0f / 256, 0.1f, -70000.0f, NAN, 500.0f};
	uint16_t h[5], want16[5];
	uint8_t b[5];
	float back[5];
	lm_error err;
	lm_npy a = view("<f4", 4, 5, f);
	int i;

	/* '<f4' rounds into every float type. */
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_BFLOAT16, h, "c.npy", &err),
			 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(h[i], lm_f32_to_bf16(f[i]));
	ck_assert_uint_eq(h[0], 0x3f80);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT16, h, "c.npy", &err),
			 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(h[i], lm_f32_to_f16(f[i]));
	ck_assert_uint_eq(h[2], 0xfc00);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT8E4, b, "c.npy", &err),
			 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(b[i], lm_f32_to_f8e4(f[i]));
	ck_assert_uint_eq(b[4], 0x7e);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT8E5, b, "c.npy", &err),
			 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(b[i], lm_f32_to_f8e5(f[i]));
	/* the NKI spellings: float8e4's / float8e5's format, raw '|u1' */
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT8_E4M3), "|u1");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT8_E4M3FN), "|u1");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT8_E5M2), "|u1");
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT8_E4M3FN, b, "c.npy",
					&err), 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(b[i], lm_f32_to_f8e4(f[i]));
	ck_assert_uint_eq(b[2], 0xfe); /* -70000 saturates */
	ck_assert_uint_eq(b[3], 0x7f);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT8_E5M2, b, "c.npy",
					&err), 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(b[i], lm_f32_to_f8e5(f[i]));
	ck_assert_uint_eq(b[2], 0xfc); /* -70000 is beyond 61440: -Inf */
	ck_assert_uint_eq(b[4], 0x60); /* 500 -> 512 (RNE) */
	{
		lm_npy r = view("|u1", 1, 5, b), r2 = view("|i1", 1, 5, b);
		uint8_t c[5];
		ck_assert_int_eq(lm_npy_convert(&r, LM_DT_FLOAT8_E4M3, c,
						"c.npy", &err), 0);
		ck_assert(memcmp(c, b, 5) == 0);
		memset(c, 0, 5);
		ck_assert_int_eq(lm_npy_convert(&r2, LM_DT_FLOAT8_E5M2, c,
						"c.npy", &err), 0);
		ck_assert(memcmp(c, b, 5) == 0);
	}
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT32R, back, "c.npy",
					&err), 0);
	ck_assert(memcmp(back, f, sizeof f) == 0);

	/* '<f2' copies into float16, widens into float32. */
	for (i = 0; i < 5; i++)
		want16[i] = lm_f32_to_f16(f[i]);
	a = view("<f2", 2, 5, want16);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT16, h, "c.npy", &err),
			 0);
	ck_assert(memcmp(h, want16, sizeof h) == 0);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT32, back, "c.npy",
					&err), 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(lm_f32_bits(back[i]),
				  lm_f32_bits(lm_f16_to_f32(want16[i])));
	ck_assert_int_ne(lm_npy_convert(&a, LM_DT_BFLOAT16, h, "c.npy", &err),
			 0);
	ck_assert_str_eq(err.msg, "c.npy: npy: dtype mismatch: file has "
			 "'<f2', tensor is bfloat16");

	/* '<u2' is bfloat16 bits; '|u1' and '|i1' are float8 bytes. */
	a = view("<u2", 2, 5, want16);
	ck_assert_int_eq(lm_npy_convert(&a, LM_DT_BFLOAT16, h, "c.npy", &err),
			 0);
	ck_assert(memcmp(h, want16, sizeof h) == 0);
	ck_assert_int_ne(lm_npy_convert(&a, LM_DT_FLOAT16, h, "c.npy", &err),
			 0);
	ck_assert_contains(err.msg, "file has '<u2', tensor is float16");
	{
		uint8_t raw[5] = {0x00, 0x38, 0x7f, 0x80, 0xfe}, out[5];
		a = view("|u1", 1, 5, raw);
		ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT8E4, out,
						"c.npy", &err), 0);
		ck_assert(memcmp(out, raw, 5) == 0);
		a = view("|i1", 1, 5, raw);
		ck_assert_int_eq(lm_npy_convert(&a, LM_DT_FLOAT8E5, out,
						"c.npy", &err), 0);
		ck_assert(memcmp(out, raw, 5) == 0);
		ck_assert_int_ne(lm_npy_convert(&a, LM_DT_FLOAT32, back,
						"c.npy", &err), 0);
		ck_assert_contains(err.msg, "file has '|i1', tensor is "
				   "float32");
	}
	{
		int64_t big[2] = {1, 2};
		a = view("<i8", 8, 2, big);
		ck_assert_int_ne(lm_npy_convert(&a, LM_DT_FLOAT32, back,
						"c.npy", &err), 0);
		ck_assert_str_eq(err.msg, "c.npy: npy: dtype mismatch: file "
				 "has '<i8', tensor is float32");
		ck_assert_int_eq(lm_npy_convert(&a, LM_DT_INT64, back,
						"c.npy", &err), 0);
		ck_assert(memcmp(back, big, sizeof big) == 0);
		ck_assert_int_ne(lm_npy_convert(&a, LM_DT_INVALID, back,
						"c.npy", &err), 0);
	}
	/* '<f4' does not go into an integer tensor. */
	a = view("<f4", 4, 5, f);
	ck_assert_int_ne(lm_npy_convert(&a, LM_DT_INT32, back, "c.npy", &err),
			 0);
	ck_assert_contains(err.msg, "file has '<f4', tensor is int32");
}
END_TEST

START_TEST(test_descr_for)
{
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT32), "<f4");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT32R), "<f4");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT16), "<f2");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_BFLOAT16), "<u2");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT8E4), "|u1");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_FLOAT8E5), "|u1");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_INT8), "|i1");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_INT64), "<i8");
	ck_assert_str_eq(lm_npy_descr_for(LM_DT_UINT32), "<u4");
	ck_assert_ptr_null(lm_npy_descr_for(LM_DT_INVALID));
}
END_TEST

static Suite *npy_suite(void)
{
	Suite *s = suite_create("npy");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_roundtrip_all_dtypes);
	tcase_add_test(tc, test_write_read_file);
	tcase_add_test(tc, test_numpy_golden);
	tcase_add_test(tc, test_v2_v3_headers);
	tcase_add_test(tc, test_err_header_too_long);
	tcase_add_test(tc, test_read_special_files);
	tcase_add_test(tc, test_read_checks_sizes_first);
	tcase_add_test(tc, test_header_syntax_variants);
	tcase_add_test(tc, test_err_bad_magic);
	tcase_add_test(tc, test_err_version);
	tcase_add_test(tc, test_err_truncated_header);
	tcase_add_test(tc, test_err_header_len_beyond_file);
	tcase_add_test(tc, test_err_missing_key);
	tcase_add_test(tc, test_err_bad_keys_and_syntax);
	tcase_add_test(tc, test_err_fortran_order);
	tcase_add_test(tc, test_err_descr);
	tcase_add_test(tc, test_err_big_endian);
	tcase_add_test(tc, test_err_dims);
	tcase_add_test(tc, test_err_data_size);
	tcase_add_test(tc, test_every_truncation_fails);
	tcase_add_test(tc, test_header_byte_mutations);
	tcase_add_test(tc, test_write_errors);
	tcase_add_test(tc, test_convert);
	tcase_add_test(tc, test_descr_for);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(npy_suite());
}

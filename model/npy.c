/*
** npy.c -- NumPy .npy read/write.
**
** A .npy file is the magic "\x93NUMPY", a major and a minor version byte,
** a little-endian header length (2 bytes for 1.0, 4 bytes for 2.0 and
** 3.0), a header that is a Python dict literal
**
**     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
**
** padded with spaces and a '\n', then the raw elements.  The header is
** parsed by a small hand-written scanner that never leaves the header's
** bytes; every malformed input is an error "PATH: npy header: what" (or
** "PATH: npy data: what" for a payload of the wrong size).
**
** The writer produces the same bytes as NumPy's np.save: keys sorted, the
** spare spaces NumPy leaves for growing the first axis, and the whole
** prefix padded to a multiple of 64 bytes.
*/
#include "common.h"
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
/* Largest payload accepted or written: 16 GiB. */
#define NPY_MAX_BYTES ((int64_t)1 << 34)
/*
** Longest header accepted: 10000 bytes, NumPy's own default
** (np.load refuses a longer one unless given max_header_size). A header
** of the dtypes and at most 16 dimensions read here is under 600 bytes.
*/
#define NPY_MAX_HEADER 10000
/* NumPy's GROWTH_AXIS_MAX_DIGITS: spare room for the first axis. */
#define NPY_GROWTH_DIGITS 21

/* ---- header scanner ---------------------------------------------------- */

/* The state of a header parse: the bytes left, and where errors go. */
typedef struct hscan {
	const char *p;
	const char *end;
	const char *path;
	lm_error *err;
} hscan;

/* Report a header error; returns -1 (LM_EINPUT). */
#define HERR(s, ...) lm_err((s)->err, (s)->path, "npy header", __VA_ARGS__)

/* Skip Python whitespace. */
static void skip_ws(hscan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
				 *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* A printable rendering of the next character, for messages. */
static const char *next_desc(hscan *s, char buf[8])
{
	unsigned char c;
	if (s->p >= s->end)
		return "end of header";
	c = (unsigned char)*s->p;
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 8, "'%c'", c);
	else
		snprintf(buf, 8, "0x%02x", c);
	return buf;
}

/* Consume the character c (after whitespace) or fail naming what. */
static int expect_char(hscan *s, char c, const char *what)
{
	char buf[8];
	skip_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return 0;
	}
	return HERR(s, "expected %s, found %s", what, next_desc(s, buf));
}

/*
** Parse a quoted Python string (single or double quotes, no escapes) into
** out (cap bytes, NUL terminated). what names the item for messages.
*/
static int scan_string(hscan *s, char *out, size_t cap, const char *what)
{
	char q, buf[8];
	size_t n = 0;

	skip_ws(s);
	if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
		return HERR(s, "expected a string for %s, found %s", what,
			    next_desc(s, buf));
	q = *s->p++;
	while (s->p < s->end && *s->p != q) {
		unsigned char c = (unsigned char)*s->p;
		if (c == '\\' || c < 0x20 || c >= 0x7f)
			return HERR(s, "unsupported character in %s", what);
		if (n + 1 >= cap)
			return HERR(s, "%s too long", what);
		out[n++] = *s->p++;
	}
	if (s->p >= s->end)
		return HERR(s, "unterminated string in %s", what);
	s->p++;
	out[n] = 0;
	return 0;
}

/* Parse the Python literal True or False into *v. */
static int scan_bool(hscan *s, int *v)
{
	char buf[8];
	skip_ws(s);
	if (s->end - s->p >= 4 && memcmp(s->p, "True", 4) == 0) {
		s->p += 4;
		*v = 1;
	} else if (s->end - s->p >= 5 && memcmp(s->p, "False", 5) == 0) {
		s->p += 5;
		*v = 0;
	} else {
		return HERR(s, "expected True or False for 'fortran_order', "
			    "found %s", next_desc(s, buf));
	}
	return 0;
}

/*
** Parse one dimension: a non-negative decimal integer (an 'L' suffix as
** written by Python 2 is accepted). Refuses signs and values above 2^62.
*/
static int scan_dim(hscan *s, int64_t *v)
{
	const int64_t limit = (int64_t)1 << 62;
	int64_t x = 0;
	char buf[8];

	skip_ws(s);
	if (s->p < s->end && *s->p == '-')
		return HERR(s, "negative dimension in 'shape'");
	if (s->p < s->end && *s->p == '+')
		s->p++;
	if (s->p >= s->end || *s->p < '0' || *s->p > '9')
		return HERR(s, "expected a dimension in 'shape', found %s",
			    next_desc(s, buf));
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		int d = *s->p++ - '0';
		if (x > (limit - d) / 10)
			return HERR(s, "dimension too large in 'shape'");
		x = x * 10 + d;
	}
	if (s->p < s->end && (*s->p == 'L' || *s->p == 'l'))
		s->p++;
	*v = x;
	return 0;
}

/*
** Parse a shape tuple "()", "(5,)", "(2, 3)", "(2, 3,)" into a->shape and
** a->ndim.
*/
static int scan_shape(hscan *s, lm_npy *a)
{
	char buf[8];

	if (expect_char(s, '(', "'(' for 'shape'"))
		return -1;
	a->ndim = 0;
	for (;;) {
		skip_ws(s);
		if (s->p < s->end && *s->p == ')') {
			s->p++;
			return 0;
		}
		if (a->ndim >= LM_NPY_MAX_DIMS)
			return HERR(s, "too many dimensions in 'shape' "
				    "(at most %d)", LM_NPY_MAX_DIMS);
		if (scan_dim(s, &a->shape[a->ndim]))
			return -1;
		a->ndim++;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == ')')
			continue;
		return HERR(s, "expected ',' or ')' in 'shape', found %s",
			    next_desc(s, buf));
	}
}

/*
** Check a descr and normalize it into a->descr: little-endian ('<') for
** multi-byte types, '|' for one-byte types (whatever byte-order character
** the file used). Sets a->elem_size.
*/
static int check_descr(hscan *s, const char *d, lm_npy *a)
{
	static const char *const kinds[] = {
		"f2", "f4", "f8", "i1", "i2", "i4", "i8",
		"u1", "u2", "u4", "u8", "b1", NULL
	};
	int i, size;

	if (strlen(d) == 3 && strchr("<>|=", d[0]) != NULL) {
		for (i = 0; kinds[i]; i++)
			if (memcmp(d + 1, kinds[i], 2) == 0)
				break;
		if (kinds[i]) {
			size = d[2] - '0';
			if (size > 1 && d[0] == '>')
				return HERR(s, "big-endian descr '%s' not "
					    "supported", d);
			if (size > 1 && d[0] != '<')
				return HERR(s, "descr '%s' not supported "
					    "(byte order must be '<')", d);
			a->descr[0] = size == 1 ? '|' : '<';
			memcpy(a->descr + 1, d + 1, 3);
			a->elem_size = size;
			return 0;
		}
	}
	return HERR(s, "descr '%s' not supported", d);
}

/* Format a shape like Python does ("()", "(5,)", "(2, 3)") into buf. */
static void format_shape(char *buf, size_t cap, const int64_t *shape,
			 int ndim)
{
	size_t n = 0;
	int i;

	n += (size_t)snprintf(buf + n, cap - n, "(");
	for (i = 0; i < ndim && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%lld",
				      i ? ", " : "", (long long)shape[i]);
	if (n < cap)
		snprintf(buf + n, cap - n, ndim == 1 ? ",)" : ")");
}

/*
** Element count of a shape, refusing a payload above NPY_MAX_BYTES (a
** zero dimension makes the count 0 whatever the others are).
*/
static int shape_count(const int64_t *shape, int ndim, int elem_size,
		       int64_t *count)
{
	const int64_t max = NPY_MAX_BYTES / elem_size;
	int64_t c = 1;
	int i;

	for (i = 0; i < ndim; i++)
		if (shape[i] == 0) {
			*count = 0;
			return 0;
		}
	for (i = 0; i < ndim; i++) {
		if (shape[i] < 0 || shape[i] > max / c)
			return -1;
		c *= shape[i];
	}
	*count = c;
	return 0;
}

/*
** Parse the header dict in s into a (descr, ndim, shape, count,
** elem_size). Keys may come in any order; each must appear exactly once.
*/
static int parse_dict(hscan *s, lm_npy *a)
{
	char key[32], descr[64], buf[8], sh[400];
	int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0;
	int i, big;

	if (expect_char(s, '{', "'{' at the start of the header"))
		return -1;
	for (;;) {
		skip_ws(s);
		if (s->p < s->end && *s->p == '}')
			break;
		if (scan_string(s, key, sizeof key, "a key"))
			return -1;
		if (expect_char(s, ':', "':' after a key"))
			return -1;
		if (strcmp(key, "descr") == 0) {
			if (have_descr++)
				return HERR(s, "duplicate key 'descr'");
			if (scan_string(s, descr, sizeof descr, "'descr'"))
				return -1;
		} else if (strcmp(key, "fortran_order") == 0) {
			if (have_fortran++)
				return HERR(s, "duplicate key "
					    "'fortran_order'");
			if (scan_bool(s, &fortran))
				return -1;
		} else if (strcmp(key, "shape") == 0) {
			if (have_shape++)
				return HERR(s, "duplicate key 'shape'");
			if (scan_shape(s, a))
				return -1;
		} else {
			return HERR(s, "unexpected key '%s'", key);
		}
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == '}')
			continue;
		return HERR(s, "expected ',' or '}' in the header dict, "
			    "found %s", next_desc(s, buf));
	}
	s->p++; /* the '}' */
	skip_ws(s);
	if (s->p < s->end)
		return HERR(s, "unexpected %s after the header dict",
			    next_desc(s, buf));
	if (!have_descr)
		return HERR(s, "missing key 'descr'");
	if (!have_fortran)
		return HERR(s, "missing key 'fortran_order'");
	if (!have_shape)
		return HERR(s, "missing key 'shape'");
	if (check_descr(s, descr, a))
		return -1;
	if (fortran) {
		/* Same bytes as C order when at most one axis exceeds 1. */
		for (i = 0, big = 0; i < a->ndim; i++)
			big += a->shape[i] > 1;
		if (big > 1)
			return HERR(s, "fortran_order True not supported");
	}
	if (shape_count(a->shape, a->ndim, a->elem_size, &a->count)) {
		format_shape(sh, sizeof sh, a->shape, a->ndim);
		return HERR(s, "array too large: shape %s of '%s' exceeds "
			    "%lld bytes", sh, a->descr,
			    (long long)NPY_MAX_BYTES);
	}
	return 0;
}

/* ---- reading ----------------------------------------------------------- */

/*
** Parse the prefix and header of a .npy image of total bytes, of which the
** first avail are at b (avail covers the whole header whenever its length
** is within NPY_MAX_HEADER). Fills a (no data) and *data_off, and checks
** that the payload has exactly the bytes the shape needs, so a reader can
** refuse a file before reading its payload.
*/
static int parse_head(const unsigned char *b, size_t avail, uint64_t total,
		      const char *path, lm_npy *a, size_t *data_off,
		      lm_error *err)
{
	size_t prefix, hlen;
	uint64_t data_len, need;
	hscan s;
	char sh[400];
	int major, minor;

	memset(a, 0, sizeof *a);
	s.path = path;
	s.err = err;
	if (total == 0)
		return HERR(&s, "truncated header (empty file)");
	if (memcmp(b, NPY_MAGIC, avail < NPY_MAGIC_LEN ? avail : NPY_MAGIC_LEN))
		return HERR(&s, "bad magic (not a .npy file)");
	if (total < NPY_MAGIC_LEN + 2)
		return HERR(&s, "truncated header (file has %llu bytes)",
			    (unsigned long long)total);
	major = b[6];
	minor = b[7];
	if (major == 1 && minor == 0) {
		prefix = NPY_MAGIC_LEN + 2 + 2;
	} else if ((major == 2 || major == 3) && minor == 0) {
		prefix = NPY_MAGIC_LEN + 2 + 4;
	} else {
		return HERR(&s, "unsupported version %d.%d", major, minor);
	}
	if (total < prefix)
		return HERR(&s, "truncated header (file has %llu bytes)",
			    (unsigned long long)total);
	hlen = (size_t)b[8] | (size_t)b[9] << 8;
	if (prefix == 12)
		hlen |= (size_t)b[10] << 16 | (size_t)b[11] << 24;
	if (hlen > total - prefix)
		return HERR(&s, "header length %zu beyond end of file "
			    "(%llu bytes)", hlen, (unsigned long long)total);
	if (hlen > NPY_MAX_HEADER)
		return HERR(&s, "header length %zu exceeds the limit of %d "
			    "bytes", hlen, NPY_MAX_HEADER);
	if (prefix + hlen > avail) /* callers pass the whole header */
		return lm_errc(err, LM_EINTERNAL, path, "npy header",
			       "header not in the buffer");
	s.p = (const char *)b + prefix;
	s.end = s.p + hlen;
	if (parse_dict(&s, a)) {
		memset(a, 0, sizeof *a);
		return LM_EINPUT;
	}
	data_len = total - prefix - hlen;
	need = (uint64_t)a->count * (uint64_t)a->elem_size;
	if (data_len != need) {
		format_shape(sh, sizeof sh, a->shape, a->ndim);
		lm_err(err, path, "npy data", "data too %s: shape %s of '%s' "
		       "needs %llu bytes, file has %llu",
		       data_len < need ? "short" : "long", sh, a->descr,
		       (unsigned long long)need, (unsigned long long)data_len);
		memset(a, 0, sizeof *a);
		return LM_EINPUT;
	}
	*data_off = prefix + hlen;
	return 0;
}

/*
** Parse a whole .npy image (bytes, len). On success *out owns a copy of
** the payload; on failure *out is empty and err says why.
*/
int lm_npy_parse(const void *bytes, size_t len, const char *path, lm_npy *out,
		 lm_error *err)
{
	size_t off, need;
	int rc = parse_head(bytes, len, len, path, out, &off, err);
	if (rc)
		return rc;
	need = (size_t)out->count * (size_t)out->elem_size;
	out->data = lm_xmalloc(need ? need : 1);
	memcpy(out->data, (const unsigned char *)bytes + off, need);
	return 0;
}

/*
** Open the file (a regular file only) and parse its header; *fd is left
** open at the start of the payload. name NULL: the file at path; else the
** file name beneath the directory dirfd, a symlink refused
** (lm_open_regular_at), path naming it in errors. Reads at most the prefix
** and NPY_MAX_HEADER bytes: a huge header or payload is refused from the
** file's size and the header's word before it is read.
*/
static int open_head(int dirfd, const char *name, const char *path,
		     lm_npy *out, int *fd, lm_error *err)
{
	unsigned char head[12 + NPY_MAX_HEADER];
	int64_t size;
	size_t want, off;
	int rc;

	memset(out, 0, sizeof *out);
	rc = name ? lm_open_regular_at(dirfd, name, path, fd, &size, err)
		  : lm_open_regular(path, fd, &size, err);
	if (rc)
		return rc;
	want = (uint64_t)size < sizeof head ? (size_t)size : sizeof head;
	rc = lm_read_full(*fd, head, want, path, err);
	if (!rc)
		rc = parse_head(head, want, (uint64_t)size, path, out, &off,
				err);
	if (!rc && lseek(*fd, (off_t)off, SEEK_SET) != (off_t)off)
		rc = lm_err(err, path, "", "cannot seek: %s", strerror(errno));
	if (rc) {
		close(*fd);
		*fd = -1;
		memset(out, 0, sizeof *out);
	}
	return rc;
}

/* The header only (out->data stays NULL); see open_head for name. */
static int read_header(int dirfd, const char *name, const char *path,
		       lm_npy *out, lm_error *err)
{
	int fd;
	int rc = open_head(dirfd, name, path, out, &fd, err);
	if (!rc)
		close(fd);
	return rc;
}

/* Read and parse the whole file; see open_head for name. */
static int read_npy(int dirfd, const char *name, const char *path,
		    lm_npy *out, lm_error *err)
{
	size_t need;
	int fd;
	int rc = open_head(dirfd, name, path, out, &fd, err);
	if (rc)
		return rc;
	need = (size_t)out->count * (size_t)out->elem_size;
	out->data = lm_xmalloc(need ? need : 1);
	lm_advise_huge(out->data, need);
	rc = lm_read_full(fd, out->data, need, path, err);
	close(fd);
	if (rc)
		lm_npy_free(out);
	return rc;
}

int lm_npy_read_header(const char *path, lm_npy *out, lm_error *err)
{
	return read_header(-1, NULL, path, out, err);
}

int lm_npy_read(const char *path, lm_npy *out, lm_error *err)
{
	return read_npy(-1, NULL, path, out, err);
}

int lm_npy_read_header_at(int dirfd, const char *name, const char *path,
			  lm_npy *out, lm_error *err)
{
	return read_header(dirfd, name, path, out, err);
}

int lm_npy_read_at(int dirfd, const char *name, const char *path,
		   lm_npy *out, lm_error *err)
{
	return read_npy(dirfd, name, path, out, err);
}

/* Free the payload of a; a is left empty (freeing twice is harmless). */
void lm_npy_free(lm_npy *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof *a);
}

/* ---- writing ----------------------------------------------------------- */

/* The descr lncsim writes for t, or NULL for an invalid type. */
const char *lm_npy_descr_for(lm_dtype t)
{
	switch (t) {
	case LM_DT_FLOAT32:
	case LM_DT_FLOAT32R:
		return "<f4";
	case LM_DT_FLOAT16:
		return "<f2";
	case LM_DT_BFLOAT16:
	case LM_DT_UINT16:
		return "<u2";
	case LM_DT_FLOAT8E4:
	case LM_DT_FLOAT8E5:
	case LM_DT_FLOAT8E3:
	case LM_DT_FLOAT8_E4M3:
	case LM_DT_FLOAT8_E4M3FN:
	case LM_DT_FLOAT8_E5M2:
	case LM_DT_UINT8:
		return "|u1";
	case LM_DT_INT8:
		return "|i1";
	case LM_DT_INT16:
		return "<i2";
	case LM_DT_INT32:
		return "<i4";
	case LM_DT_INT64:
		return "<i8";
	case LM_DT_UINT32:
		return "<u4";
	case LM_DT_UINT64:
		return "<u8";
	default:
		return NULL;
	}
}

/*
** Build the .npy image of an array into a malloc'd buffer. path (may be
** NULL) only prefixes error messages.
*/
static int serialize(const char *path, lm_dtype t, const int64_t *shape,
		     int ndim, const void *data, char **out, size_t *out_len,
		     lm_error *err)
{
	const char *descr = lm_npy_descr_for(t);
	lm_buf h = LM_BUF_INIT;
	char sh[400], *img;
	size_t hlen, pad, prefix, nbytes, total;
	int64_t count;
	int i, major;

	*out = NULL;
	*out_len = 0;
	if (!descr)
		return lm_err(err, path, "npy write", "cannot write dtype %s",
			      lm_dtype_name(t));
	if (ndim < 0 || ndim > LM_NPY_MAX_DIMS)
		return lm_err(err, path, "npy write", "%d dimensions (at most "
			      "%d)", ndim, LM_NPY_MAX_DIMS);
	for (i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return lm_err(err, path, "npy write",
				      "negative dimension %lld",
				      (long long)shape[i]);
	if (shape_count(shape, ndim, lm_dtype_size(t), &count)) {
		format_shape(sh, sizeof sh, shape, ndim);
		return lm_err(err, path, "npy write", "array too large: "
			      "shape %s of %s", sh, lm_dtype_name(t));
	}
	nbytes = (size_t)count * (size_t)lm_dtype_size(t);

	/* The dict as NumPy writes it: keys sorted, trailing ", ". */
	format_shape(sh, sizeof sh, shape, ndim);
	lm_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, "
		      "'shape': %s, }", descr, sh);
	if (ndim > 0) {
		int digits = snprintf(NULL, 0, "%lld", (long long)shape[0]);
		for (i = digits; i < NPY_GROWTH_DIGITS; i++)
			lm_buf_puts(&h, " ");
	}
	hlen = h.size + 1; /* with the final '\n' */

	/* NumPy pads to the next multiple of 64, a full 64 if aligned. */
	major = 1;
	prefix = NPY_MAGIC_LEN + 2 + 2;
	pad = NPY_ALIGN - (prefix + hlen) % NPY_ALIGN;
	if (hlen + pad > 0xffff) {
		major = 2;
		prefix = NPY_MAGIC_LEN + 2 + 4;
		pad = NPY_ALIGN - (prefix + hlen) % NPY_ALIGN;
	}
	hlen += pad;
	total = prefix + hlen + nbytes;

	img = lm_xmalloc(total ? total : 1);
	memcpy(img, NPY_MAGIC, NPY_MAGIC_LEN);
	img[6] = (char)major;
	img[7] = 0;
	img[8] = (char)(hlen & 0xff);
	img[9] = (char)(hlen >> 8 & 0xff);
	if (major == 2) {
		img[10] = (char)(hlen >> 16 & 0xff);
		img[11] = (char)(hlen >> 24 & 0xff);
	}
	memcpy(img + prefix, h.ptr, h.size);
	memset(img + prefix + h.size, ' ', pad);
	img[prefix + hlen - 1] = '\n';
	if (nbytes)
		memcpy(img + prefix + hlen, data, nbytes);
	lm_buf_free(&h);
	*out = img;
	*out_len = total;
	return 0;
}

/* Serialize an array to a malloc'd buffer (caller frees *out). */
int lm_npy_serialize(lm_dtype t, const int64_t *shape, int ndim,
		     const void *data, char **out, size_t *out_len,
		     lm_error *err)
{
	return serialize(NULL, t, shape, ndim, data, out, out_len, err);
}

/* Write an array to path atomically (temp file + rename). */
int lm_npy_write(const char *path, lm_dtype t, const int64_t *shape, int ndim,
		 const void *data, lm_error *err)
{
	char *img;
	size_t len;
	int rc;

	if (serialize(path, t, shape, ndim, data, &img, &len, err))
		return LM_EINPUT;
	rc = lm_write_file_atomic(path, img, len, err);
	free(img);
	return rc;
}

/* ---- conversion -------------------------------------------------------- */

/*
** Copy or convert a's elements into dst as dtype t: the file's own descr
** is copied bit for bit; '<f4' rounds to any floating type; '<f2' widens
** to float32; float8 tensors also take '|i1' bytes.
*/
int lm_npy_convert(const lm_npy *a, lm_dtype t, void *dst, const char *path,
		   lm_error *err)
{
	const char *want = lm_npy_descr_for(t);
	const unsigned char *src = a->data;
	unsigned char *d = dst;
	lm_dtype ft = lm_dtype_format(t);
	int is_f8 = ft == LM_DT_FLOAT8E4 || ft == LM_DT_FLOAT8E5 ||
		    ft == LM_DT_FLOAT8E3;
	int64_t i;
	float f;
	uint16_t h;

	if (!want)
		return lm_err(err, path, "npy", "cannot load into a tensor "
			      "of dtype %s", lm_dtype_name(t));
	if (strcmp(a->descr, want) == 0 ||
	    (is_f8 && strcmp(a->descr, "|i1") == 0)) {
		if (a->count)
			memcpy(dst, a->data,
			       (size_t)a->count * (size_t)a->elem_size);
		return 0;
	}
	if (strcmp(a->descr, "<f4") == 0 &&
	    (lm_dtype_is_float(t) || t == LM_DT_FLOAT8E3)) {
		int n = lm_dtype_size(t);
		for (i = 0; i < a->count; i++) {
			memcpy(&f, src + 4 * i, 4);
			lm_store_elem(t, d + n * i, f);
		}
		return 0;
	}
	if (strcmp(a->descr, "<f2") == 0 &&
	    (t == LM_DT_FLOAT32 || t == LM_DT_FLOAT32R)) {
		for (i = 0; i < a->count; i++) {
			memcpy(&h, src + 2 * i, 2);
			f = lm_f16_to_f32(h);
			memcpy(d + 4 * i, &f, 4);
		}
		return 0;
	}
	return lm_err(err, path, "npy", "dtype mismatch: file has '%s', "
		      "tensor is %s", a->descr, lm_dtype_name(t));
}

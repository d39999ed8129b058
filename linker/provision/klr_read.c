/*
** klr_read.c -- decoding KLR CBOR files (the on-disk format, docs/klr.md).
**
** A recursive-descent reader driven by the schema of klr_schema.c: every
** value is decoded against the field type the schema expects, so the three
** structures whose array header counts proof fields that are never written
** (TensorName, Slice, AccessBasic) decode correctly. The reader accepts the
** longer integer forms, checks every length against the bytes that remain
** before allocating, bounds the nesting depth, and reports the first
** problem with its byte offset. It never reads past the buffer.
*/
#include "common.h"
#include "klr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deepest value nesting accepted (a real kernel stays far below). */
#define MAX_DEPTH 96
/* Longest string accepted (the generated C++ reader stops at 64 KiB). */
#define MAX_STRING 65536
/*
** Largest KLR file read: 64 MiB. A KLR file is the instruction tree of one
** kernel, no tensor data (real kernels are kilobytes to a few MB), and
** every CBOR item decodes into a value of ~50 bytes: 64 MiB can already
** cost gigabytes decoded.
*/
#define MAX_FILE ((int64_t)64 << 20)
/* Bytes holding the longest header d9 d9 f7 + array head + 3 integers. */
#define HEAD_BYTES 64

typedef struct rd {
	const uint8_t *p;
	size_t n, pos;
	const char *path;
	lm_error *err;
	int depth;
	char what[160];   /* what is being read, for messages */
	const lp_kgen *gen;   /* the generation whose record shapes are read */
	/*
	 * A record whose shape this generation does not have (a type tag,
	 * constructor or header count it does not expect): 1 when the error
	 * is one, with the record's current type tag, constructor name and
	 * header count (count < 0: a tag or constructor mismatch).
	 */
	int shape, shape_cur, shape_count;
	const char *shape_ctor;
	size_t shape_at;
} rd;

/* Report a problem at the current offset. Returns LM_EINPUT. */
static int LM_PRINTF(2, 3) bad(rd *r, const char *fmt, ...)
{
	char where[200], msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(where, sizeof where, "byte %zu%s%s", r->pos,
		 r->what[0] ? " in " : "", r->what);
	return lm_err(r->err, r->path, where, "%s", msg);
}

/* Truncation error. */
static int truncated(rd *r, size_t need)
{
	return bad(r, "truncated CBOR: %zu more byte%s needed, %zu left", need,
		   need == 1 ? "" : "s", r->n - r->pos);
}

void lp_klr_file_free(lp_klr_file *f)
{
	if (!f)
		return;
	free(f->format);
	lp_kval_clear(&f->contents);
	memset(f, 0, sizeof *f);
}

/*
** Read a CBOR head: major type (0..7) and argument. Indefinite lengths and
** reserved additional-information values are errors. For major 7 the raw
** additional information is returned in *ai (floats, true/false).
*/
static int head(rd *r, int *major, uint64_t *arg, int *ai)
{
	uint8_t b;
	int k, len;
	if (r->pos >= r->n)
		return truncated(r, 1);
	b = r->p[r->pos];
	*major = b >> 5;
	k = b & 31;
	*ai = k;
	if (k < 24) {
		r->pos++;
		*arg = (uint64_t)k;
		return 0;
	}
	if (k > 27)
		return bad(r, "unsupported CBOR item 0x%02x (indefinite length or "
			   "reserved)", b);
	len = 1 << (k - 24);
	if (r->n - r->pos < (size_t)len + 1)
		return truncated(r, (size_t)len + 1 - (r->n - r->pos));
	r->pos++;
	*arg = 0;
	for (int i = 0; i < len; i++)
		*arg = (*arg << 8) | r->p[r->pos++];
	return 0;
}

/* Expect a major type with its argument. */
static int expect(rd *r, int want, const char *name, uint64_t *arg)
{
	size_t at = r->pos;
	int major, ai, rc;
	if ((rc = head(r, &major, arg, &ai)) != 0)
		return rc;
	if (major != want) {
		r->pos = at;
		return bad(r, "expected %s, found CBOR item 0x%02x", name,
			   r->p[at]);
	}
	return 0;
}

/* A definite-length array header; its count must fit in what remains. */
static int array_head(rd *r, uint64_t *count)
{
	size_t at = r->pos;
	int rc = expect(r, 4, "an array", count);
	if (rc)
		return rc;
	if (*count > r->n - r->pos) {
		r->pos = at;
		return bad(r, "array of %llu items cannot fit in the %zu bytes "
			   "left", (unsigned long long)*count, r->n - r->pos);
	}
	return 0;
}

/* Check that s[0..n) is valid UTF-8 without NUL bytes. */
static int valid_utf8(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		int k;
		uint32_t cp;
		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) { k = 1; cp = c & 0x1f; }
		else if ((c & 0xf0) == 0xe0) { k = 2; cp = c & 0x0f; }
		else if ((c & 0xf8) == 0xf0) { k = 3; cp = c & 0x07; }
		else return 0;
		if (n - i <= (size_t)k)
			return 0;
		for (int j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) ||
		    (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += (size_t)k + 1;
	}
	return 1;
}

/* A definite-length UTF-8 text string. */
static int read_string(rd *r, char **out)
{
	uint64_t len;
	size_t at = r->pos;
	int rc = expect(r, 3, "a string", &len);
	if (rc)
		return rc;
	if (len > MAX_STRING) {
		r->pos = at;
		return bad(r, "string of %llu bytes is longer than %d",
			   (unsigned long long)len, MAX_STRING);
	}
	if (len > r->n - r->pos)
		return truncated(r, (size_t)len - (r->n - r->pos));
	if (!valid_utf8(r->p + r->pos, (size_t)len)) {
		r->pos = at;
		return bad(r, "string is not valid UTF-8 (or holds a NUL byte)");
	}
	*out = lm_xstrndup((const char *)r->p + r->pos, (size_t)len);
	r->pos += (size_t)len;
	return 0;
}

/* A tagged-object head "d9 TT CC 8N": returns type, ctor and count. */
static int object_head(rd *r, int *type, int *ctor, int *count)
{
	size_t at = r->pos;
	uint64_t tag, cnt;
	int rc;
	if ((rc = expect(r, 6, "a tagged KLR object (d9 TT CC)", &tag)) != 0)
		return rc;
	if (r->p[at] != 0xd9) {
		r->pos = at;
		return bad(r, "expected a 16-bit tag d9 TT CC, found CBOR item "
			   "0x%02x", r->p[at]);
	}
	*type = (int)(tag >> 8);
	*ctor = (int)(tag & 0xff);
	at = r->pos;
	if ((rc = expect(r, 4, "a field array", &cnt)) != 0)
		return rc;
	if (cnt >= 24 || r->p[at] != (0x80 | cnt)) {
		r->pos = at;
		return bad(r, "object field count must be one byte 0x80..0x97, "
			   "found 0x%02x", r->p[at]);
	}
	*count = (int)cnt;
	return 0;
}

static int read_value(rd *r, const char *type, lp_kval *v);

/* Note that the error being reported is a record shape mismatch. */
static void shape_mismatch(rd *r, size_t at, int cur, const char *ctor,
			   int count)
{
	r->shape = 1;
	r->shape_at = at;
	r->shape_cur = cur;
	r->shape_ctor = ctor;
	r->shape_count = count;
}

/* An object of type tag `want` (any constructor of it). */
static int read_object(rd *r, int want, lp_kval *v)
{
	int cur, gcur;
	const lp_ktype *t = lp_klr_gen_type(r->gen, want, &cur);
	const lp_kctor *c;
	int type, ctor, count, rc;
	size_t at = r->pos;
	char saved[sizeof r->what];

	if (!t)
		return lm_errc(r->err, LM_EINTERNAL, r->path, "",
			       "type tag %d is not in generation %s", want,
			       r->gen->name);
	if ((rc = object_head(r, &type, &ctor, &count)) != 0)
		return rc;
	if (type != want) {
		const lp_ktype *got = lp_klr_gen_type(r->gen, type, &gcur);
		r->pos = at;
		shape_mismatch(r, at, cur, NULL, -1);
		return bad(r, "expected %s (type tag %d), found type tag %d%s%s",
			   t->name, want, type, got ? " " : "",
			   got ? got->name : "");
	}
	c = lp_klr_ctor(t, ctor);
	if (!c) {
		r->pos = at;
		shape_mismatch(r, at, cur, NULL, -1);
		return bad(r, "unknown constructor %d of %s", ctor, t->name);
	}
	if (c->n_fields < 0) {
		r->pos = at;
		if (want == LP_T_CONTENTS)
			return bad(r, "Wrong KLIR content type: contents "
				   "constructor %d '%s' (the lowering needs "
				   "'lnc', 3)", ctor, c->name);
		if (c->wire_count > 0)
			return bad(r, "%s '%s' (constructor %d, payload serde "
				   "tag %d) is not supported by lncsim",
				   t->name, c->name, ctor, c->wire_count);
		return bad(r, "%s '%s' (constructor %d) is not supported by "
			   "lncsim", t->name, c->name, ctor);
	}
	c = lp_klr_layout_for_count(c, count);
	if (count != c->wire_count) {
		r->pos = at;
		shape_mismatch(r, at, cur, c->name, count);
		return bad(r, "%s.%s: the array header counts %d fields, "
			   "expected %d", t->name, c->name, count,
			   c->wire_count);
	}
	v->kind = LP_KV_OBJ;
	v->type_tag = type;
	v->ctor = ctor;
	v->n = c->n_fields;
	v->items = c->n_fields ? lm_xcalloc((size_t)c->n_fields,
					    sizeof *v->items) : NULL;
	memcpy(saved, r->what, sizeof saved);
	for (int i = 0; i < c->n_fields; i++) {
		snprintf(r->what, sizeof r->what, "%s.%s", t->name,
			 c->fields[i].name);
		if ((rc = read_value(r, c->fields[i].type, &v->items[i])) != 0)
			return rc;
	}
	memcpy(r->what, saved, sizeof saved);
	return 0;
}

/* One value of field type `type` (see klr.h). */
static int read_value(rd *r, const char *type, lp_kval *v)
{
	uint64_t arg;
	int major, ai, rc = 0;
	size_t at = r->pos;

	if (++r->depth > MAX_DEPTH) {
		r->depth--;
		return bad(r, "values nested deeper than %d", MAX_DEPTH);
	}
	switch (type[0]) {
	case 'n':
		v->kind = LP_KV_NAT;
		rc = expect(r, 0, "a Nat (unsigned integer)", &v->u);
		break;
	case 'i':
		v->kind = LP_KV_INT;
		if ((rc = head(r, &major, &arg, &ai)) != 0)
			break;
		if (major == 0 && arg <= (uint64_t)INT64_MAX) {
			v->i = (int64_t)arg;
		} else if (major == 1 && arg <= (uint64_t)INT64_MAX) {
			v->i = -1 - (int64_t)arg;
		} else {
			r->pos = at;
			rc = bad(r, major <= 1 ? "Int does not fit in 64 bits"
				 : "expected an Int, found CBOR item 0x%02x",
				 r->p[at]);
		}
		break;
	case 'b':
		v->kind = LP_KV_BOOL;
		if (r->pos >= r->n) {
			rc = truncated(r, 1);
		} else if (r->p[r->pos] == 0xf4 || r->p[r->pos] == 0xf5) {
			v->b = r->p[r->pos++] == 0xf5;
		} else {
			rc = bad(r, "expected a Bool (f4/f5), found CBOR item "
				 "0x%02x", r->p[r->pos]);
		}
		break;
	case 's':
		v->kind = LP_KV_STR;
		rc = read_string(r, &v->s);
		break;
	case 'f':
		v->kind = LP_KV_F32;
		if (r->pos >= r->n) {
			rc = truncated(r, 1);
		} else if (r->p[r->pos] != 0xfa) {
			rc = bad(r, "expected a Float32 (fa + 4 bytes), found "
				 "CBOR item 0x%02x", r->p[r->pos]);
		} else if (r->n - r->pos < 5) {
			rc = truncated(r, 5 - (r->n - r->pos));
		} else {
			const uint8_t *q = r->p + r->pos + 1;
			v->fbits = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
				   (uint32_t)q[2] << 8 | q[3];
			r->pos += 5;
		}
		break;
	case '[':
		v->kind = LP_KV_LIST;
		if ((rc = array_head(r, &arg)) != 0)
			break;
		v->items = arg ? lm_xcalloc((size_t)arg, sizeof *v->items)
			       : NULL;
		for (uint64_t i = 0; i < arg && rc == 0; i++) {
			v->n++;
			rc = read_value(r, type + 1, &v->items[i]);
		}
		break;
	case '?': {
		int t, c, cnt;
		v->kind = LP_KV_OPTION;
		if ((rc = object_head(r, &t, &c, &cnt)) != 0)
			break;
		if (t != LP_T_OPTION || c > 1 || cnt != c) {
			r->pos = at;
			rc = bad(r, "expected an Option (d9 ff 00 80 or "
				 "d9 ff 01 81), found d9 %02x %02x %02x", t, c,
				 0x80 | cnt);
			break;
		}
		if (c == 1) {
			v->items = lm_xcalloc(1, sizeof *v->items);
			v->n = 1;
			rc = read_value(r, type + 1, &v->items[0]);
		}
		break;
	}
	case 'T':
		rc = read_object(r, atoi(type + 1), v);
		break;
	default:
		rc = lm_errc(r->err, LM_EINTERNAL, r->path, "",
			     "bad schema type '%s'", type);
	}
	r->depth--;
	return rc;
}

/* The file header "d9 d9 f7 83 M m p" and the version check. */
static int read_header(rd *r, lp_klr_file *f)
{
	uint64_t cnt;
	int rc;
	size_t k = r->n < 3 ? r->n : 3;
	if (r->n == 0)
		return bad(r, "empty file: not a KLR file");
	if (memcmp(r->p, "\xd9\xd9\xf7", k) != 0)
		return bad(r, "not a KLR file: it does not start with the KLR "
			   "header d9 d9 f7");
	if (r->n < 4)
		return truncated(r, 4 - r->n);
	r->pos = 3;
	snprintf(r->what, sizeof r->what, "KLRFile header");
	if ((rc = array_head(r, &cnt)) != 0)
		return rc;
	if (cnt != 3)
		return bad(r, "KLRFile header has %llu fields, expected 3",
			   (unsigned long long)cnt);
	for (int i = 0; i < 3; i++)
		if ((rc = expect(r, 0, "a version number", &f->version[i])) != 0)
			return rc;
	if (f->version[0] != LP_KLR_MAJOR || f->version[1] != LP_KLR_MINOR ||
	    f->version[2] != LP_KLR_PATCH)
		return lm_err(r->err, r->path, "KLRFile header",
			      "Wrong KLR version %llu.%llu.%llu (lncsim reads "
			      "%d.%d.%d)", (unsigned long long)f->version[0],
			      (unsigned long long)f->version[1],
			      (unsigned long long)f->version[2], LP_KLR_MAJOR,
			      LP_KLR_MINOR, LP_KLR_PATCH);
	return 0;
}

/* Metadata and contents from r->pos in generation r->gen; nothing after. */
static int decode_body(rd *r, lp_klr_file *out)
{
	lp_kval meta;
	int rc;
	memset(&meta, 0, sizeof meta);
	r->what[0] = 0;
	if ((rc = read_value(r, "T235", &meta)) != 0) {
		lp_kval_clear(&meta);
		return rc;
	}
	out->format = meta.items[0].s;
	meta.items[0].s = NULL;
	lp_kval_clear(&meta);
	r->what[0] = 0;
	if ((rc = read_value(r, "T236", &out->contents)) != 0)
		return rc;
	if (r->pos != r->n) {
		r->what[0] = 0;
		return bad(r, "%zu trailing byte%s after the KLR contents",
			   r->n - r->pos, r->n - r->pos == 1 ? "" : "s");
	}
	return 0;
}

/* What one generation's attempt stopped at. */
typedef struct attempt {
	lm_error err;
	int rc, shape, cur, count;
	const char *ctor;
	size_t pos;
	char what[160];
} attempt;

/* The header counts generation g expects for constructor `ctor` of the
 * current type `cur` ("8", "9 or 10", or "none"). */
static void expected_counts(const lp_kgen *g, int cur, const char *ctor,
			    char *out, size_t size)
{
	const lp_ktype *t = lp_klr_gen_type_cur(g, cur);
	const lp_kctor *c = lp_klr_ctor_by_name(t, ctor);
	if (!c || c->n_fields < 0)
		snprintf(out, size, "none");
	else if (c->alt)
		snprintf(out, size, "%d or %d", c->wire_count,
			 c->alt->wire_count);
	else
		snprintf(out, size, "%d", c->wire_count);
}

/*
** No generation reads the whole file and the attempt that got furthest
** stopped at a record shape: name the record, its offset and the header
** counts seen vs expected in each generation (runs of equal ones joined).
*/
static int no_match(const attempt *a, const lp_kgen *g, const char *path,
		    lm_error *err)
{
	const lp_ktype *t = lp_klr_type(a->cur);
	char where[200], list[700], e[32], prev[32];
	size_t k = 0;
	int first = 0;
	snprintf(where, sizeof where, "byte %zu%s%s", a->pos,
		 a->what[0] ? " in " : "", a->what);
	if (a->count < 0) {
		size_t m;
		*err = a->err;
		m = strlen(err->msg);
		snprintf(err->msg + m, sizeof err->msg - m, "; no KLR 0.0.12 "
			 "schema generation lncsim knows reads the file up to "
			 "here (furthest as %s)", g->name);
		return a->rc;
	}
	list[0] = 0;
	prev[0] = 0;
	for (int i = 0; i <= lp_klr_n_gens; i++) {
		if (i < lp_klr_n_gens)
			expected_counts(lp_klr_gens[i], a->cur, a->ctor, e,
					sizeof e);
		if (i > 0 && (i == lp_klr_n_gens || strcmp(e, prev))) {
			k += (size_t)snprintf(list + k, sizeof list - k,
				"%s%s in %s%s%s", k ? ", " : "", prev,
				lp_klr_gens[first]->name, i - 1 > first ?
				".." : "", i - 1 > first ?
				lp_klr_gens[i - 1]->name : "");
			if (k >= sizeof list)
				k = sizeof list - 1;
			first = i;
		}
		memcpy(prev, e, sizeof prev);
	}
	return lm_err(err, path, where, "%s.%s: the array header counts %d "
		      "fields, and no KLR 0.0.12 schema generation lncsim "
		      "knows reads the file up to here (furthest as %s); "
		      "expected: %s", t ? t->name : "?", a->ctor, a->count,
		      g->name, list);
}

/* Does generation g number Dtype as 2025-12-03 and older did? */
static int old_dtypes(const lp_kgen *g)
{
	int cur;
	return lp_klr_gen_type(g, LP_T_DTYPE, &cur) != lp_klr_type(LP_T_DTYPE);
}

/* The first Dtype of v whose constructor the older numbering gives
** another meaning (15..18), or NULL. */
static const lp_kval *moved_dtype(const lp_kval *v)
{
	if (v->kind == LP_KV_OBJ && v->type_tag == LP_T_DTYPE &&
	    v->ctor >= 15 && v->ctor <= 18)
		return v;
	for (int i = 0; i < v->n; i++) {
		const lp_kval *d = moved_dtype(&v->items[i]);
		if (d)
			return d;
	}
	return NULL;
}

/* Read the body from `start` in generation g into *f (current form). */
static int read_as(const uint8_t *p, size_t n, const char *path,
		   size_t start, const lp_kgen *g, lp_klr_file *f, rd *r,
		   lm_error *err)
{
	int rc;
	memset(r, 0, sizeof *r);
	r->p = p;
	r->n = n;
	r->path = path ? path : "";
	r->err = err;
	r->gen = g;
	r->pos = start;
	rc = decode_body(r, f);
	if (rc == 0 && g != lp_klr_gens[0])
		rc = lp_klr_gen_convert(g, &f->contents, r->path, err);
	return rc;
}

/*
** f read in generation lp_klr_gens[i], whose Dtype numbering is the
** current one. When it holds a Dtype constructor 15..18 and a generation
** of the older numbering reads the file as well, which one wrote it is
** not known and the dtype would be a guess: refused.
*/
static int dtype_ambiguous(const uint8_t *p, size_t n, const char *path,
			   size_t start, int i, const lp_klr_file *f,
			   lm_error *err)
{
	const lp_kval *d = moved_dtype(&f->contents);
	if (!d || old_dtypes(lp_klr_gens[i]))
		return 0;
	for (int j = i + 1; j < lp_klr_n_gens; j++) {
		lp_klr_file g;
		lm_error ignore;
		const lp_ktype *t;
		const lp_kctor *c;
		rd r;
		int rc, cur;
		if (!old_dtypes(lp_klr_gens[j]))
			continue;
		memset(&g, 0, sizeof g);
		rc = read_as(p, n, path, start, lp_klr_gens[j], &g, &r,
			     &ignore);
		t = lp_klr_gen_type(lp_klr_gens[j], LP_T_DTYPE, &cur);
		c = lp_klr_ctor(t, d->ctor);
		if (rc == 0) {
			rc = lm_err(err, path ? path : "", "Dtype", "Dtype "
				    "constructor %d is %s in KLR schema "
				    "generation %s and %s in generation %s, "
				    "and the file reads in both: which one "
				    "wrote it is not known (ambiguous, not "
				    "guessed)", d->ctor,
				    lp_kval_ctor_name(d),
				    lp_klr_gens[i]->name, c ? c->name : "?",
				    lp_klr_gens[j]->name);
			lp_klr_file_free(&g);
			return rc;
		}
		lp_klr_file_free(&g);
	}
	return 0;
}

/*
** Decode header, metadata and contents; nothing may follow. The record
** shapes are tried generation by generation, newest first (docs/klr.md);
** the first that reads the whole file is converted to the current form.
*/
int lp_klr_decode_file(lp_klr_file *out, const uint8_t *p, size_t n,
		       const char *path, lm_error *err)
{
	attempt *at;
	rd r;
	size_t start;
	int rc, best = 0;

	memset(out, 0, sizeof *out);
	memset(&r, 0, sizeof r);
	r.p = p;
	r.n = n;
	r.path = path ? path : "";
	r.err = err;
	if ((rc = read_header(&r, out)) != 0) {
		lp_klr_file_free(out);
		return rc;
	}
	start = r.pos;
	at = lm_xcalloc((size_t)lp_klr_n_gens, sizeof *at);
	for (int i = 0; i < lp_klr_n_gens; i++) {
		lp_klr_file f;
		memset(&f, 0, sizeof f);
		memcpy(f.version, out->version, sizeof f.version);
		rc = read_as(p, n, path, start, lp_klr_gens[i], &f, &r,
			     &at[i].err);
		if (rc == 0 && (rc = dtype_ambiguous(p, n, path, start, i, &f,
						     err)) != 0) {
			lp_klr_file_free(&f);
			free(at);
			lp_klr_file_free(out);
			return rc;
		}
		if (rc == 0) {
			*out = f;
			out->generation = r.gen->name;
			free(at);
			return 0;
		}
		lp_klr_file_free(&f);
		at[i].rc = rc;
		at[i].shape = r.shape;
		at[i].cur = r.shape_cur;
		at[i].count = r.shape_count;
		at[i].ctor = r.shape_ctor;
		at[i].pos = r.shape ? r.shape_at : r.pos;
		memcpy(at[i].what, r.what, sizeof at[i].what);
		/* a broken file of the current generation: its own error */
		if (i == 0 && !r.shape && !strstr(at[0].err.msg,
						  "is not supported by"))
			break;
		if (at[i].pos > at[best].pos)
			best = i;
	}
	if (!at[0].shape || !at[best].shape) {
		int w = at[0].shape ? best : 0;
		*err = at[w].err;
		if (w > 0) {
			size_t k = strlen(err->msg);
			snprintf(err->msg + k, sizeof err->msg - k, " (read "
				 "as KLR schema generation %s, the one that "
				 "got furthest)", lp_klr_gens[w]->name);
		}
		rc = at[w].rc;
	} else {
		rc = no_match(&at[best], lp_klr_gens[best], r.path, err);
	}
	free(at);
	lp_klr_file_free(out);
	return rc;
}

/*
** Read and decode a .klr file. Only a regular file is opened (a FIFO or a
** device is refused at once), of at most MAX_FILE bytes (from its size,
** before reading), and its first bytes must be a KLR header with the
** right version before the rest is read.
*/
int lp_klr_read(lp_klr_file *out, const char *path, lm_error *err)
{
	uint8_t *data = NULL;
	int64_t size;
	size_t head;
	struct stat st;
	int fd = -1, rc;
	rd r;

	memset(out, 0, sizeof *out);
	/* stat first: the bir_linker message for a file that is not there */
	if (stat(path, &st) != 0)
		return lm_err(err, path, "", "fail to locate KLIR artifact (%s)",
			      strerror(errno));
	if ((rc = lm_open_regular(path, &fd, &size, err)) != 0)
		return rc;
	if (size > MAX_FILE) {
		close(fd);
		return lm_err(err, path, "", "KLR file too large: %lld bytes "
			      "(at most %lld)", (long long)size,
			      (long long)MAX_FILE);
	}
	data = lm_xmalloc((size_t)size + 1);
	head = (size_t)size < HEAD_BYTES ? (size_t)size : HEAD_BYTES;
	if ((rc = lm_read_full(fd, data, head, path, err)) != 0)
		goto done;
	/* the header alone: it fits in HEAD_BYTES, so its errors are the
	 * ones a decode of the whole file would give */
	memset(&r, 0, sizeof r);
	r.p = data;
	r.n = head;
	r.path = path;
	r.err = err;
	if ((rc = read_header(&r, out)) != 0)
		goto done;
	if ((rc = lm_read_full(fd, data + head, (size_t)size - head, path,
			       err)) != 0)
		goto done;
	rc = lp_klr_decode_file(out, data, (size_t)size, path, err);
done:
	if (rc)
		memset(out, 0, sizeof *out);
	close(fd);
	free(data);
	return rc;
}

/* Decode one value spanning the whole buffer. */
int lp_klr_decode_value(lp_kval **out, const char *type, const uint8_t *p,
			size_t n, lm_error *err)
{
	rd r;
	lp_kval *v = lm_xcalloc(1, sizeof *v);
	int rc;
	memset(&r, 0, sizeof r);
	r.p = p;
	r.n = n;
	r.path = "";
	r.err = err;
	rc = read_value(&r, type, v);
	if (rc == 0 && r.pos != r.n)
		rc = bad(&r, "%zu trailing byte%s", r.n - r.pos,
			 r.n - r.pos == 1 ? "" : "s");
	if (rc) {
		lp_kval_free(v);
		v = NULL;
	}
	*out = v;
	return rc;
}

/*
** klr_write.c -- encoding KLR values and files as CBOR (docs/klr.md):
** shortest integer forms, `fa` floats, definite
** lengths, exact array-header counts (including the proof fields of
** TensorName, Slice and AccessBasic, for which no bytes are written).
** Values are checked against the schema while they are written, so a
** malformed tree is an error, never a malformed file.
*/
#include "common.h"
#include "klr.h"

#include <stdlib.h>
#include <string.h>

/* A CBOR head: major type and argument, shortest form. */
static void put_head(lm_buf *b, int major, uint64_t v)
{
	uint8_t t[9];
	int n;
	uint8_t m = (uint8_t)(major << 5);
	if (v < 24) {
		t[0] = m | (uint8_t)v;
		n = 1;
	} else if (v <= 0xff) {
		t[0] = m | 24;
		t[1] = (uint8_t)v;
		n = 2;
	} else if (v <= 0xffff) {
		t[0] = m | 25;
		t[1] = (uint8_t)(v >> 8);
		t[2] = (uint8_t)v;
		n = 3;
	} else if (v <= 0xffffffffu) {
		t[0] = m | 26;
		for (int i = 0; i < 4; i++)
			t[1 + i] = (uint8_t)(v >> (24 - 8 * i));
		n = 5;
	} else {
		t[0] = m | 27;
		for (int i = 0; i < 8; i++)
			t[1 + i] = (uint8_t)(v >> (56 - 8 * i));
		n = 9;
	}
	lm_buf_put(b, t, (size_t)n);
}

/* The tagged-object head "d9 TT CC 8N". */
static void put_object_head(lm_buf *b, int type, int ctor, int count)
{
	uint8_t t[4] = { 0xd9, (uint8_t)type, (uint8_t)ctor,
			 (uint8_t)(0x80 | count) };
	lm_buf_put(b, t, 4);
}

static int put_value(const lp_kval *v, const char *type, lm_buf *b,
		     lm_error *err, int depth);

/* Kind mismatch between the tree and the schema. */
static int mismatch(lm_error *err, const char *type, const lp_kval *v)
{
	return lm_err(err, "", "KLR writer", "value of kind %d does not "
		      "match schema type '%s'", (int)v->kind, type);
}

/* An object of type tag `want`. */
static int put_object(const lp_kval *v, int want, lm_buf *b, lm_error *err,
		      int depth)
{
	const lp_ktype *t = lp_klr_type(want);
	const lp_kctor *c = lp_klr_layout_for_n(lp_klr_ctor(t, v->ctor), v->n);
	int rc;
	if (v->kind != LP_KV_OBJ || v->type_tag != want || !c ||
	    c->n_fields < 0 || v->n != c->n_fields)
		return lm_err(err, "", "KLR writer", "object of type %d "
			      "constructor %d does not match the schema of "
			      "type %d", v->type_tag, v->ctor, want);
	put_object_head(b, want, v->ctor, c->wire_count);
	for (int i = 0; i < c->n_fields; i++)
		if ((rc = put_value(&v->items[i], c->fields[i].type, b, err,
				    depth + 1)) != 0)
			return rc;
	return 0;
}

/* One value of field type `type`. */
static int put_value(const lp_kval *v, const char *type, lm_buf *b,
		     lm_error *err, int depth)
{
	int rc;
	if (depth > 200)
		return lm_err(err, "", "KLR writer", "value nested too deeply");
	switch (type[0]) {
	case 'n':
		if (v->kind != LP_KV_NAT)
			return mismatch(err, type, v);
		put_head(b, 0, v->u);
		return 0;
	case 'i':
		if (v->kind != LP_KV_INT)
			return mismatch(err, type, v);
		if (v->i >= 0)
			put_head(b, 0, (uint64_t)v->i);
		else
			put_head(b, 1, (uint64_t)(-1 - v->i));
		return 0;
	case 'b':
		if (v->kind != LP_KV_BOOL)
			return mismatch(err, type, v);
		lm_buf_put(b, v->b ? "\xf5" : "\xf4", 1);
		return 0;
	case 's': {
		size_t n;
		if (v->kind != LP_KV_STR || !v->s)
			return mismatch(err, type, v);
		n = strlen(v->s);
		put_head(b, 3, n);
		lm_buf_put(b, v->s, n);
		return 0;
	}
	case 'f': {
		uint8_t t[5] = { 0xfa, (uint8_t)(v->fbits >> 24),
				 (uint8_t)(v->fbits >> 16),
				 (uint8_t)(v->fbits >> 8), (uint8_t)v->fbits };
		if (v->kind != LP_KV_F32)
			return mismatch(err, type, v);
		lm_buf_put(b, t, 5);
		return 0;
	}
	case '[':
		if (v->kind != LP_KV_LIST)
			return mismatch(err, type, v);
		put_head(b, 4, (uint64_t)v->n);
		for (int i = 0; i < v->n; i++)
			if ((rc = put_value(&v->items[i], type + 1, b, err,
					    depth + 1)) != 0)
				return rc;
		return 0;
	case '?':
		if (v->kind != LP_KV_OPTION || v->n > 1)
			return mismatch(err, type, v);
		put_object_head(b, LP_T_OPTION, v->n, v->n);
		if (v->n)
			return put_value(&v->items[0], type + 1, b, err,
					 depth + 1);
		return 0;
	case 'T':
		return put_object(v, atoi(type + 1), b, err, depth);
	default:
		return lm_errc(err, LM_EINTERNAL, "", "KLR writer",
			       "bad schema type '%s'", type);
	}
}

/* Encode one value of field type `type`, appended to out. */
int lp_klr_encode_value(const lp_kval *v, const char *type, lm_buf *out,
			lm_error *err)
{
	return put_value(v, type, out, err, 0);
}

/* Encode a whole file: header, metadata, contents. */
int lp_klr_encode_file(const lp_klr_file *f, lm_buf *out, lm_error *err)
{
	size_t n;
	lm_buf_put(out, "\xd9\xd9\xf7\x83", 4);
	for (int i = 0; i < 3; i++)
		put_head(out, 0, f->version[i]);
	put_object_head(out, LP_T_METADATA, 0, 1);
	n = f->format ? strlen(f->format) : 0;
	put_head(out, 3, n);
	if (n)
		lm_buf_put(out, f->format, n);
	return put_value(&f->contents, "T236", out, err, 0);
}

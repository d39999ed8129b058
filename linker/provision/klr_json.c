/*
** klr_json.c -- the JSON rendering of KLR files (docs/klr.md), used by
** `lncsim klr dump` (CBOR -> JSON) and `lncsim klr pack` (JSON -> CBOR).
**
** The rendering follows the schema of klr_schema.c:
**   structure (one constructor)     {"field": value, ...} in wire order
**   enum constructor / no fields    "name"
**   constructor with one field      {"name": value}
**   constructor with more fields    {"name": {"field": value, ...}}
**   Option                          null, or the value
**   Nat / Int                       number (string beyond 2^53)
**   Float32                         number printed to round-trip exactly;
**                                   "inf", "-inf", "nan", "nan:0xXXXXXXXX"
** The dump writes every field, so pack -> dump -> pack is byte-identical.
** The parser also accepts missing fields that have an obvious default
** (docs/klr.md lists them), which keeps hand-written kernels short.
*/
#include "common.h"
#include "klr.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers beyond this magnitude are written as strings. */
#define EXACT_INT 9007199254740992.0 /* 2^53 */
/* A compact rendering up to this width goes on one line. */
#define INLINE_WIDTH 76

/* ---- rendering ----------------------------------------------------------- */

/* A JSON string literal. */
static void put_str(lm_buf *b, const char *s)
{
	lm_buf_puts(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			lm_buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			lm_buf_puts(b, "\\n");
		else if (*p == '\t')
			lm_buf_puts(b, "\\t");
		else if (*p < 0x20)
			lm_buf_printf(b, "\\u%04x", *p);
		else
			lm_buf_put(b, p, 1);
	}
	lm_buf_puts(b, "\"");
}

/* A float32 that parses back to the same bits. */
static void put_f32(lm_buf *b, uint32_t bits)
{
	float f;
	char s[48];
	memcpy(&f, &bits, sizeof f);
	if (isnan(f)) {
		if (bits == 0x7fc00000u)
			lm_buf_puts(b, "\"nan\"");
		else
			lm_buf_printf(b, "\"nan:0x%08x\"", (unsigned)bits);
		return;
	}
	if (isinf(f)) {
		lm_buf_puts(b, f > 0 ? "\"inf\"" : "\"-inf\"");
		return;
	}
	snprintf(s, sizeof s, "%.9g", (double)f);
	if (strtof(s, NULL) != f)
		snprintf(s, sizeof s, "%.17g", (double)f);
	lm_buf_puts(b, s);
}

static void render(lm_buf *b, const lp_kval *v, const char *type, int indent,
		   int pretty);

/* Newline and indentation (pretty) or a space (compact). */
static void sep(lm_buf *b, int indent, int pretty)
{
	if (!pretty)
		return;
	lm_buf_puts(b, "\n");
	for (int i = 0; i < indent; i++)
		lm_buf_puts(b, "  ");
}

/* The fields of an object as a JSON object. */
static void render_fields(lm_buf *b, const lp_kval *v, const lp_kctor *c,
			  int indent, int pretty)
{
	lm_buf_puts(b, "{");
	for (int i = 0; i < c->n_fields && i < v->n; i++) {
		if (i)
			lm_buf_puts(b, pretty ? "," : ", ");
		sep(b, indent + 1, pretty);
		put_str(b, c->fields[i].name);
		lm_buf_puts(b, ": ");
		render(b, &v->items[i], c->fields[i].type, indent + 1, pretty);
	}
	sep(b, indent, pretty);
	lm_buf_puts(b, "}");
}

/* The value itself, pretty or compact. */
static void render_one(lm_buf *b, const lp_kval *v, const char *type,
		       int indent, int pretty)
{
	switch (v->kind) {
	case LP_KV_NAT:
		if (v->u > ((uint64_t)1 << 53))
			lm_buf_printf(b, "\"%llu\"", (unsigned long long)v->u);
		else
			lm_buf_printf(b, "%llu", (unsigned long long)v->u);
		return;
	case LP_KV_INT:
		if (v->i > ((int64_t)1 << 53) || v->i < -((int64_t)1 << 53))
			lm_buf_printf(b, "\"%lld\"", (long long)v->i);
		else
			lm_buf_printf(b, "%lld", (long long)v->i);
		return;
	case LP_KV_BOOL:
		lm_buf_puts(b, v->b ? "true" : "false");
		return;
	case LP_KV_STR:
		put_str(b, v->s ? v->s : "");
		return;
	case LP_KV_F32:
		put_f32(b, v->fbits);
		return;
	case LP_KV_OPTION:
		if (v->n == 0)
			lm_buf_puts(b, "null");
		else
			render(b, &v->items[0], type + 1, indent, pretty);
		return;
	case LP_KV_LIST:
		lm_buf_puts(b, "[");
		for (int i = 0; i < v->n; i++) {
			if (i)
				lm_buf_puts(b, pretty ? "," : ", ");
			sep(b, indent + 1, pretty);
			render(b, &v->items[i], type + 1, indent + 1, pretty);
		}
		if (v->n)
			sep(b, indent, pretty);
		lm_buf_puts(b, "]");
		return;
	case LP_KV_OBJ: {
		const lp_ktype *t = lp_klr_type(v->type_tag);
		const lp_kctor *c = lp_klr_layout_for_n(lp_klr_ctor(t, v->ctor),
						      v->n);
		if (!c) {
			lm_buf_puts(b, "null");
			return;
		}
		if (lp_klr_is_struct(t)) {
			render_fields(b, v, c, indent, pretty);
		} else if (c->n_fields == 0) {
			put_str(b, c->name);
		} else {
			lm_buf_puts(b, "{");
			put_str(b, c->name);
			lm_buf_puts(b, ": ");
			if (c->n_fields == 1)
				render(b, &v->items[0], c->fields[0].type,
				       indent, pretty);
			else
				render_fields(b, v, c, indent, pretty);
			lm_buf_puts(b, "}");
		}
		return;
	}
	}
}

/* A value: on one line when its compact form is short, else pretty. */
static void render(lm_buf *b, const lp_kval *v, const char *type, int indent,
		   int pretty)
{
	if (pretty && (v->kind == LP_KV_OBJ || v->kind == LP_KV_LIST ||
		       v->kind == LP_KV_OPTION)) {
		lm_buf c = LM_BUF_INIT;
		render_one(&c, v, type, indent, 0);
		if (c.size + (size_t)indent * 2 <= INLINE_WIDTH) {
			lm_buf_put(b, lm_buf_cstr(&c), c.size);
			lm_buf_free(&c);
			return;
		}
		lm_buf_free(&c);
	}
	render_one(b, v, type, indent, pretty);
}

/* The whole file. */
void lp_klr_to_json(const lp_klr_file *f, lm_buf *out)
{
	lm_buf_printf(out, "{\n  \"version\": \"%llu.%llu.%llu\",\n"
		      "  \"format\": ", (unsigned long long)f->version[0],
		      (unsigned long long)f->version[1],
		      (unsigned long long)f->version[2]);
	put_str(out, f->format ? f->format : "");
	/* the schema generation it was read in (pack writes the current) */
	lm_buf_puts(out, ",\n  \"generation\": ");
	put_str(out, f->generation ? f->generation : lp_klr_gens[0]->name);
	lm_buf_puts(out, ",\n  \"contents\": ");
	render(out, &f->contents, "T236", 1, 1);
	lm_buf_puts(out, "\n}\n");
}

/* ---- parsing ------------------------------------------------------------- */

typedef struct jp {
	const char *path;
	lm_error *err;
	char where[512];
	size_t wlen;
} jp;

static size_t LM_PRINTF(2, 3) push(jp *p, const char *fmt, ...)
{
	size_t old = p->wlen;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(p->where + p->wlen, sizeof p->where - p->wlen, fmt,
			  ap);
	va_end(ap);
	if (k > 0)
		p->wlen += (size_t)k;
	if (p->wlen >= sizeof p->where)
		p->wlen = sizeof p->where - 1;
	return old;
}

static void pop(jp *p, size_t n)
{
	p->wlen = n;
	p->where[n] = 0;
}

static int LM_PRINTF(2, 3) jfail(jp *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = lm_verr(p->err, LM_EINPUT, p->path,
			 p->wlen ? p->where : "(top)", fmt, ap);
	va_end(ap);
	return rc;
}

/* JSON type name for messages. */
static const char *jtype(const cJSON *j)
{
	if (!j) return "nothing";
	if (cJSON_IsObject(j)) return "an object";
	if (cJSON_IsArray(j)) return "an array";
	if (cJSON_IsString(j)) return "a string";
	if (cJSON_IsNumber(j)) return "a number";
	if (cJSON_IsBool(j)) return "a boolean";
	if (cJSON_IsNull(j)) return "null";
	return "?";
}

/* An integer: a JSON number (integral, |v| <= 2^53) or a decimal string. */
static int get_integer(jp *p, const cJSON *j, int is_signed, uint64_t *u,
		       int64_t *i)
{
	if (cJSON_IsNumber(j)) {
		double d = j->valuedouble;
		if (d != floor(d) || fabs(d) > EXACT_INT)
			return jfail(p, "expected an integer, got %.17g", d);
		if (!is_signed && d < 0)
			return jfail(p, "expected a Nat (>= 0), got %.17g", d);
		*u = (uint64_t)(d < 0 ? 0 : d);
		*i = (int64_t)d;
		return 0;
	}
	if (cJSON_IsString(j) && j->valuestring[0]) {
		char *end;
		errno = 0;
		if (is_signed) {
			*i = strtoll(j->valuestring, &end, 10);
		} else {
			if (j->valuestring[0] == '-')
				return jfail(p, "expected a Nat (>= 0), got "
					     "\"%s\"", j->valuestring);
			*u = strtoull(j->valuestring, &end, 10);
		}
		if (*end || errno)
			return jfail(p, "expected an integer, got \"%s\"",
				     j->valuestring);
		return 0;
	}
	return jfail(p, "expected an integer, got %s", jtype(j));
}

/* A float32 from a number or one of the special strings. */
static int get_f32(jp *p, const cJSON *j, uint32_t *bits)
{
	float f;
	if (cJSON_IsNumber(j)) {
		f = (float)j->valuedouble;
		if (isinf(f) && !isinf(j->valuedouble))
			return jfail(p, "%.17g overflows float32",
				     j->valuedouble);
		memcpy(bits, &f, sizeof f);
		return 0;
	}
	if (cJSON_IsString(j)) {
		const char *s = j->valuestring;
		unsigned long v;
		char *end;
		if (!strcmp(s, "nan")) { *bits = 0x7fc00000u; return 0; }
		if (!strcmp(s, "inf")) { *bits = 0x7f800000u; return 0; }
		if (!strcmp(s, "-inf")) { *bits = 0xff800000u; return 0; }
		if (!strncmp(s, "nan:0x", 6)) {
			errno = 0;
			v = strtoul(s + 6, &end, 16);
			memcpy(&f, &(uint32_t){ (uint32_t)v }, sizeof f);
			if (!*end && !errno && v <= 0xffffffffu && isnan(f) &&
			    strlen(s + 6) == 8) {
				*bits = (uint32_t)v;
				return 0;
			}
		}
		return jfail(p, "expected a float, \"inf\", \"-inf\", \"nan\" "
			     "or \"nan:0xXXXXXXXX\", got \"%s\"", s);
	}
	return jfail(p, "expected a float, got %s", jtype(j));
}

static int parse_value(jp *p, const cJSON *j, const char *type, lp_kval *v);

/* Product of Shape.freeDims of a TensorName being built (freeElements). */
static uint64_t free_elements(const lp_kval *tn, const lp_kctor *c)
{
	uint64_t n = 1;
	for (int i = 0; i < c->n_fields; i++)
		if (!strcmp(c->fields[i].name, "shape")) {
			const lp_kval *fd = &tn->items[i].items[1];
			for (int k = 0; k < fd->n; k++)
				n *= fd->items[k].u;
		}
	return n;
}

/* The fields of constructor c from JSON object j. */
static int parse_fields(jp *p, const cJSON *j, const lp_ktype *t,
			const lp_kctor *c, lp_kval *v)
{
	int rc;
	if (!cJSON_IsObject(j))
		return jfail(p, "%s.%s: expected an object with its fields, "
			     "got %s", t->name, c->name, jtype(j));
	/* a key only the other layout has selects that layout */
	for (const cJSON *k = j->child; c->alt && k; k = k->next) {
		int in_c = 0, in_alt = 0;
		for (int i = 0; i < c->n_fields; i++)
			in_c |= !strcmp(c->fields[i].name, k->string);
		for (int i = 0; i < c->alt->n_fields; i++)
			in_alt |= !strcmp(c->alt->fields[i].name, k->string);
		if (!in_c && in_alt) {
			c = c->alt;
			break;
		}
	}
	for (const cJSON *k = j->child; k; k = k->next) {
		int known = 0;
		for (int i = 0; i < c->n_fields && !known; i++)
			known = !strcmp(c->fields[i].name, k->string);
		if (!known)
			return jfail(p, "%s has no field '%s'", t->name,
				     k->string);
	}
	v->n = c->n_fields;
	v->items = v->n ? lm_xcalloc((size_t)v->n, sizeof *v->items) : NULL;
	for (int i = 0; i < c->n_fields; i++) {
		const lp_kfield *f = &c->fields[i];
		const cJSON *fj = cJSON_GetObjectItemCaseSensitive(j, f->name);
		size_t w = push(p, ".%s", f->name);
		if (!fj && t->tag == LP_T_TENSORNAME &&
		    !strcmp(f->name, "freeElements")) {
			v->items[i].kind = LP_KV_NAT;
			v->items[i].u = free_elements(v, c);
		} else if (!fj) {
			if (lp_kval_default(f->type, t->name, f->name, NULL,
					    &v->items[i]) != 0)
				return jfail(p, "missing field '%s' of %s",
					     f->name, t->name);
		} else if ((rc = parse_value(p, fj, f->type, &v->items[i])) != 0) {
			return rc;
		}
		pop(p, w);
	}
	return 0;
}

/* An object of type tag `tag`. */
static int parse_object(jp *p, const cJSON *j, int tag, lp_kval *v)
{
	const lp_ktype *t = lp_klr_type(tag);
	const lp_kctor *c;
	int rc;
	if (!t)
		return jfail(p, "type %d is not in the schema", tag);
	v->kind = LP_KV_OBJ;
	v->type_tag = tag;
	if (lp_klr_is_struct(t)) {
		v->ctor = t->ctors[0].tag;
		return parse_fields(p, j, t, &t->ctors[0], v);
	}
	if (cJSON_IsString(j)) {
		c = lp_klr_ctor_by_name(t, j->valuestring);
		if (!c)
			return jfail(p, "unknown %s '%s'", t->name,
				     j->valuestring);
		if (c->n_fields != 0)
			return jfail(p, "%s '%s' needs its field%s: write "
				     "{\"%s\": ...}", t->name, c->name,
				     c->n_fields == 1 ? "" : "s", c->name);
		v->ctor = c->tag;
		return 0;
	}
	if (!cJSON_IsObject(j) || !j->child || j->child->next)
		return jfail(p, "expected a %s: a constructor name or an object "
			     "with one key naming the constructor, got %s",
			     t->name, jtype(j));
	c = lp_klr_ctor_by_name(t, j->child->string);
	if (!c)
		return jfail(p, "unknown %s '%s'", t->name, j->child->string);
	if (c->n_fields < 0 && c->wire_count > 0)
		return jfail(p, "%s '%s' (payload serde tag %d) is not "
			     "supported by lncsim", t->name, c->name,
			     c->wire_count);
	if (c->n_fields < 0)
		return jfail(p, "%s '%s' is not supported by lncsim", t->name,
			     c->name);
	v->ctor = c->tag;
	size_t w = push(p, ".%s", c->name);
	if (c->n_fields == 0) {
		if (!cJSON_IsNull(j->child) && !(cJSON_IsObject(j->child) &&
						 !j->child->child))
			return jfail(p, "%s '%s' has no fields", t->name,
				     c->name);
		rc = 0;
	} else if (c->n_fields == 1) {
		v->n = 1;
		v->items = lm_xcalloc(1, sizeof *v->items);
		rc = parse_value(p, j->child, c->fields[0].type, &v->items[0]);
	} else {
		rc = parse_fields(p, j->child, t, c, v);
	}
	if (!rc)
		pop(p, w);
	return rc;
}

/* One value of field type `type`. */
static int parse_value(jp *p, const cJSON *j, const char *type, lp_kval *v)
{
	int rc;
	memset(v, 0, sizeof *v);
	switch (type[0]) {
	case 'n':
		v->kind = LP_KV_NAT;
		return get_integer(p, j, 0, &v->u, &v->i);
	case 'i':
		v->kind = LP_KV_INT;
		return get_integer(p, j, 1, &v->u, &v->i);
	case 'b':
		v->kind = LP_KV_BOOL;
		if (!cJSON_IsBool(j))
			return jfail(p, "expected true or false, got %s",
				     jtype(j));
		v->b = cJSON_IsTrue(j);
		return 0;
	case 's':
		v->kind = LP_KV_STR;
		if (!cJSON_IsString(j))
			return jfail(p, "expected a string, got %s", jtype(j));
		v->s = lm_xstrdup(j->valuestring);
		return 0;
	case 'f':
		v->kind = LP_KV_F32;
		return get_f32(p, j, &v->fbits);
	case '[': {
		int n = cJSON_GetArraySize(j), i = 0;
		v->kind = LP_KV_LIST;
		if (!cJSON_IsArray(j))
			return jfail(p, "expected an array, got %s", jtype(j));
		v->items = n ? lm_xcalloc((size_t)n, sizeof *v->items) : NULL;
		for (const cJSON *e = j->child; e; e = e->next, i++) {
			size_t w = push(p, "[%d]", i);
			v->n++;
			if ((rc = parse_value(p, e, type + 1, &v->items[i])) != 0)
				return rc;
			pop(p, w);
		}
		return 0;
	}
	case '?':
		v->kind = LP_KV_OPTION;
		if (cJSON_IsNull(j))
			return 0;
		v->n = 1;
		v->items = lm_xcalloc(1, sizeof *v->items);
		return parse_value(p, j, type + 1, &v->items[0]);
	case 'T':
		return parse_object(p, j, atoi(type + 1), v);
	default:
		return lm_errc(p->err, LM_EINTERNAL, p->path, "",
			       "bad schema type '%s'", type);
	}
}

/* "M.m.p" -> three numbers. */
static int parse_version(const char *s, uint64_t v[3])
{
	unsigned long long a, b, c;
	char tail;
	if (sscanf(s, "%llu.%llu.%llu%c", &a, &b, &c, &tail) != 3)
		return -1;
	v[0] = a;
	v[1] = b;
	v[2] = c;
	return 0;
}

/* Parse the JSON rendering of a whole file. */
int lp_klr_from_json(lp_klr_file *out, const char *text, size_t len,
		     const char *path, lm_error *err)
{
	jp p;
	cJSON *root, *ver, *fmt, *con;
	const char *end = NULL;
	int rc = 0;

	memset(out, 0, sizeof *out);
	memset(&p, 0, sizeof p);
	p.path = path ? path : "";
	p.err = err;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;
		return lm_err(err, p.path, "", "malformed JSON near byte %zu",
			      off);
	}
	if (!cJSON_IsObject(root)) {
		rc = jfail(&p, "expected an object {\"version\", \"format\", "
			   "\"contents\"}");
		goto done;
	}
	for (const cJSON *k = root->child; k; k = k->next)
		if (strcmp(k->string, "version") && strcmp(k->string, "format") &&
		    strcmp(k->string, "generation") &&
		    strcmp(k->string, "contents")) {
			rc = jfail(&p, "unknown key '%s' (expected version, "
				   "format, generation, contents)", k->string);
			goto done;
		}
	/* "generation" says what a dump was read in; the tree is current */
	{
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(root,
								  "generation");
		int i = 0;
		while (g && cJSON_IsString(g) && i < lp_klr_n_gens &&
		       strcmp(g->valuestring, lp_klr_gens[i]->name))
			i++;
		if (g && (!cJSON_IsString(g) || i == lp_klr_n_gens)) {
			push(&p, "generation");
			rc = jfail(&p, "expected the name of a KLR schema "
				   "generation (docs/klr.md), e.g. \"%s\"",
				   lp_klr_gens[0]->name);
			goto done;
		}
	}
	ver = cJSON_GetObjectItemCaseSensitive(root, "version");
	fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
	con = cJSON_GetObjectItemCaseSensitive(root, "contents");
	out->version[0] = LP_KLR_MAJOR;
	out->version[1] = LP_KLR_MINOR;
	out->version[2] = LP_KLR_PATCH;
	if (ver && (!cJSON_IsString(ver) ||
		    parse_version(ver->valuestring, out->version) != 0)) {
		push(&p, "version");
		rc = jfail(&p, "expected a version string \"M.m.p\"");
		goto done;
	}
	if (fmt && !cJSON_IsString(fmt)) {
		push(&p, "format");
		rc = jfail(&p, "expected a string");
		goto done;
	}
	out->format = lm_xstrdup(fmt ? fmt->valuestring : "NKI");
	if (!con) {
		rc = jfail(&p, "missing key 'contents'");
		goto done;
	}
	push(&p, "contents");
	rc = parse_value(&p, con, "T236", &out->contents);
done:
	cJSON_Delete(root);
	if (rc)
		lp_klr_file_free(out);
	return rc;
}

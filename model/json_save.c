/*
** json_save.c -- IR -> BIR JSON, in the compiler's 2.24 wire form
** (docs/bir-json.md): keys in strcmp order, version 2, access-pattern and
** Iota / AffineSelect pattern pairs as [step, num], psum_buf_shape nested
** [a, [b, c]], non-finite floats as "nan" / "inf" / "-inf".
** Keys the loader did not interpret (`extra`) are written back unchanged.
*/
#include "common.h"
#include "module.h"
#include "json_int.h"
#include "optable.h"
#include "enumtab.h"
#include "affine.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *lm_json_float(double v)
{
	if (isnan(v))
		return cJSON_CreateString("nan");
	if (isinf(v))
		return cJSON_CreateString(v > 0 ? "inf" : "-inf");
	if (v == 0 && signbit(v))
		return cJSON_CreateRaw("-0.0");
	return cJSON_CreateNumber(v);
}

/* ---- the writer ----------------------------------------------------------
**
** Modules are written by streaming, not by building a cJSON tree and
** printing it (that allocated every value and printed every number with
** sprintf + sscanf). The bytes are the ones cJSON_Print /
** cJSON_PrintUnformatted would give for the tree of the same keys in the
** same order: tab indentation, "key":<TAB>value, arrays on one line with
** ", ", numbers as cJSON prints them (tests/test_model.c compares the two
** on every fixture and on random values).
*/

typedef struct jlevel {
	int obj;            /* object (else array) */
	int n;              /* items written */
	const char **keys;  /* keys written (for add_extra's "o wins") */
	size_t *off;        /* where each key's member starts (after its
			       separator), for the sort at jw_close */
	int n_keys, cap_keys, cap_off;
	int is_unsorted;    /* some key came before the one written ahead */
	int is_last_stable; /* the last key is a stable one (jw_member) */
} jlevel;

typedef struct jw {
	char *p;            /* buffer */
	size_t len, cap;
	int pretty;
	int exact;          /* numbers as %.17g (for lm_module_compare) */
	int depth;          /* open containers */
	jlevel *lv;
	int cap_lv;
	char *tmp;          /* scratch of jw_sort */
	size_t cap_tmp;
	const lm_module *m; /* what operands resolve in (partition folding) */
	lm_strmap *allocs;  /* the current function's allocations */
	/* stable keys seen, by address: "key": ready to copy (stable: the
	** code's literals and the module's strings, which do not change
	** while it is written; not the keys of a cJSON tree, which may be a
	** temporary one whose memory is reused) */
	struct jkey { const char *k; unsigned len; char lit[44]; } keys[256];
	/* key pairs compared, by address: a, then b, is in order */
	struct jpair { const char *a, *b; int in_order; } pairs[1024];
} jw;

/* 1 if key a may come before key b (strcmp order, equal keys too). */
static int keys_in_order(jw *w, const char *a, const char *b)
{
	struct jpair *c = &w->pairs[(((uint64_t)(uintptr_t)a * 31u +
				      (uint64_t)(uintptr_t)b) *
				     0x9e3779b97f4a7c15ull) >> 54];
	if (c->a != a || c->b != b) {
		c->a = a;
		c->b = b;
		c->in_order = strcmp(a, b) <= 0;
	}
	return c->in_order;
}

static void jw_grow(jw *w, size_t n);

/* Room for n more bytes and a NUL. */
static inline void jw_need(jw *w, size_t n)
{
	if (w->len + n + 1 > w->cap)
		jw_grow(w, n);
}

static void jw_grow(jw *w, size_t n)
{
	size_t c = w->cap ? w->cap : 4096;
	while (w->len + n + 1 > c)
		c *= 2;
	w->p = lm_xrealloc(w->p, c);
	w->cap = c;
	if (c >= (size_t)8 << 20) /* fewer page faults on big text */
		lm_advise_huge(w->p, c);
}

static void jw_put(jw *w, const char *s, size_t n)
{
	jw_need(w, n);
	memcpy(w->p + w->len, s, n);
	w->len += n;
}

static void jw_tabs(jw *w, int n)
{
	jw_need(w, (size_t)n);
	memset(w->p + w->len, '\t', (size_t)n);
	w->len += (size_t)n;
}

/* 1 for the bytes that end a plain run of a string: NUL, controls, '"',
** '\\' */
static const unsigned char stop[256] = {
	[0] = 1, [1] = 1, [2] = 1, [3] = 1, [4] = 1, [5] = 1, [6] = 1,
	[7] = 1, [8] = 1, [9] = 1, [10] = 1, [11] = 1, [12] = 1, [13] = 1,
	[14] = 1, [15] = 1, [16] = 1, [17] = 1, [18] = 1, [19] = 1,
	[20] = 1, [21] = 1, [22] = 1, [23] = 1, [24] = 1, [25] = 1,
	[26] = 1, [27] = 1, [28] = 1, [29] = 1, [30] = 1, [31] = 1,
	['"'] = 1, ['\\'] = 1,
};

/* The length of the plain run at u: 4 bytes a step, never past its end
** (a byte is read only after the one before it was not a stop). */
static inline size_t plain_run(const unsigned char *u)
{
	size_t n = 0;
	for (;;) {
		if (stop[u[n]])
			return n;
		if (stop[u[n + 1]])
			return n + 1;
		if (stop[u[n + 2]])
			return n + 2;
		if (stop[u[n + 3]])
			return n + 3;
		n += 4;
	}
}

/* A string literal as cJSON writes it (NULL: ""). */
static void jw_string(jw *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = plain_run(u), esc = 0;
	for (; u[n]; n++) /* the rare string with something to escape */
		if (u[n] < 32 || u[n] == '"' || u[n] == '\\')
			esc++;
	jw_need(w, n + 6 * esc + 2);
	char *o = w->p + w->len;
	*o++ = '"';
	if (!esc) {
		memcpy(o, u, n);
		o += n;
	} else {
		for (size_t i = 0; i < n; i++) {
			unsigned char c = u[i];
			if (c >= 32 && c != '"' && c != '\\') {
				*o++ = (char)c;
				continue;
			}
			*o++ = '\\';
			switch (c) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '\b': *o++ = 'b'; break;
			case '\f': *o++ = 'f'; break;
			case '\n': *o++ = 'n'; break;
			case '\r': *o++ = 'r'; break;
			case '\t': *o++ = 't'; break;
			default:
				*o++ = 'u';
				*o++ = '0';
				*o++ = '0';
				*o++ = hex[c >> 4];
				*o++ = hex[c & 15];
				break;
			}
		}
	}
	*o++ = '"';
	w->len = (size_t)(o - w->p);
}

/* Before a value: the separator of the enclosing array. */
static void jw_item(jw *w)
{
	jlevel *l;
	if (!w->depth)
		return;
	l = &w->lv[w->depth - 1];
	if (!l->obj && l->n++)
		jw_put(w, w->pretty ? ", " : ",", w->pretty ? 2 : 1);
}

/* The separator and key of a member of the innermost object, recorded
** for the key sort of jw_close; is_stable: k is a stable key (see jw). */
static void jw_member(jw *w, const char *k, int is_stable)
{
	jlevel *l = &w->lv[w->depth - 1];
	if (l->n++)
		jw_put(w, w->pretty ? ",\n" : ",", w->pretty ? 2 : 1);
	if (l->n_keys >= l->cap_keys || l->n_keys >= l->cap_off) {
		lm_grow(&l->keys, &l->cap_keys, l->n_keys + 1, sizeof *l->keys);
		lm_grow(&l->off, &l->cap_off, l->n_keys + 1, sizeof *l->off);
	}
	if (l->n_keys && !(is_stable && l->is_last_stable ?
			   keys_in_order(w, l->keys[l->n_keys - 1], k) :
			   strcmp(l->keys[l->n_keys - 1], k) <= 0))
		l->is_unsorted = 1;
	l->is_last_stable = is_stable;
	l->keys[l->n_keys] = k;
	l->off[l->n_keys++] = w->len;
	if (w->pretty)
		jw_tabs(w, w->depth);
	if (is_stable) {
		/* a short key without escapes (every key of the code): its
		** literal "key": (with the tab when pretty), made once */
		struct jkey *c = &w->keys[((uint64_t)(uintptr_t)k *
					   0x9e3779b97f4a7c15ull) >> 56];
		if (c->k != k) {
			size_t n = plain_run((const unsigned char *)k);
			if (k[n] || n + 4 > sizeof c->lit)
				goto slow;
			c->lit[0] = '"';
			memcpy(c->lit + 1, k, n);
			c->lit[n + 1] = '"';
			c->lit[n + 2] = ':';
			c->lit[n + 3] = '\t';
			c->len = (unsigned)n + 3 + (w->pretty != 0);
			c->k = k;
		}
		jw_need(w, sizeof c->lit);
		memcpy(w->p + w->len, c->lit, sizeof c->lit);
		w->len += c->len;
		return;
	}
slow:
	jw_string(w, k);
	jw_put(w, w->pretty ? ":\t" : ":", w->pretty ? 2 : 1);
}

/*
** Objects are written with their keys in strcmp order, as the compiler's
** JSON library prints them (its objects are ordered maps). Members are
** written in whatever order the code has them; at close an object whose
** keys are out of order has its members moved into order (stable: equal
** keys keep their order).
*/
static void jw_sort(jw *w, jlevel *l)
{
	int n = l->n_keys;
	size_t sep = w->pretty ? 2 : 1, base, len;
	if (!l->is_unsorted)
		return;
	int *ix = lm_xmalloc((size_t)n * sizeof *ix);
	for (int i = 0; i < n; i++) {
		int j = i;
		while (j > 0 && strcmp(l->keys[ix[j - 1]], l->keys[i]) > 0) {
			ix[j] = ix[j - 1];
			j--;
		}
		ix[j] = i;
	}
	/* members before the first one out of place stay where they are */
	int r0 = 0;
	while (r0 < n && ix[r0] == r0)
		r0++;
	base = l->off[r0];
	len = w->len - base;
	if (len > w->cap_tmp) {
		w->tmp = lm_xrealloc(w->tmp, len);
		w->cap_tmp = len;
	}
	memcpy(w->tmp, w->p + base, len);
	char *o = w->p + base;
	for (int r = r0; r < n; r++) {
		int i = ix[r];
		size_t a = l->off[i] - base;
		size_t b = (i + 1 < n ? l->off[i + 1] - sep : w->len) - base;
		if (r > r0) {
			memcpy(o, w->pretty ? ",\n" : ",", sep);
			o += sep;
		}
		memcpy(o, w->tmp + a, b - a);
		o += b - a;
	}
	free(ix);
}

/* A key of the innermost object (NULL: nothing is written, as cJSON
** refuses to add an item without a key). Returns 0 when skipped. */
static int jw_key(jw *w, const char *k)
{
	if (!k)
		return 0;
	jw_member(w, k, 1);
	return 1;
}

static void jw_open(jw *w, int obj)
{
	jlevel *l;
	jw_item(w);
	if (w->depth + 1 > w->cap_lv) {
		int old = w->cap_lv;
		lm_grow(&w->lv, &w->cap_lv, w->depth + 1, sizeof *w->lv);
		memset(&w->lv[old], 0, (size_t)(w->cap_lv - old) *
		       sizeof *w->lv);
	}
	l = &w->lv[w->depth++];
	l->obj = obj;
	l->n = 0;
	l->n_keys = 0;
	l->is_unsorted = 0;
	if (obj)
		jw_put(w, w->pretty ? "{\n" : "{", w->pretty ? 2 : 1);
	else
		jw_put(w, "[", 1);
}

static void jw_close(jw *w)
{
	jlevel *l = &w->lv[--w->depth];
	if (!l->obj) {
		jw_put(w, "]", 1);
		return;
	}
	jw_sort(w, l);
	if (w->pretty) {
		if (l->n)
			jw_put(w, "\n", 1);
		jw_tabs(w, w->depth);
	}
	jw_put(w, "}", 1);
}

int lm_json_number_text(char buf[32], double d, int valueint)
{
	int n;
	if (isnan(d) || isinf(d)) {
		n = snprintf(buf, 32, "null");
	} else if (d == (double)valueint) {
		/* integers: the common case, no printf */
		char t[16];
		unsigned v = valueint < 0 ? 0u - (unsigned)valueint
					  : (unsigned)valueint;
		int k = 0;
		do
			t[k++] = (char)('0' + v % 10);
		while ((v /= 10) != 0);
		n = 0;
		if (valueint < 0)
			buf[n++] = '-';
		while (k)
			buf[n++] = t[--k];
	} else {
		double test = 0;
		n = snprintf(buf, 32, "%1.15g", d);
		if (sscanf(buf, "%lg", &test) != 1 ||
		    !(fabs(test - d) <= fmax(fabs(test), fabs(d)) * DBL_EPSILON))
			n = snprintf(buf, 32, "%1.17g", d);
	}
	return n;
}

static void jw_number(jw *w, double d, int valueint)
{
	char buf[32];
	if (w->exact && d != (double)valueint && !isnan(d) && !isinf(d))
		jw_put(w, buf, (size_t)snprintf(buf, sizeof buf, "%.17g", d));
	else
		jw_put(w, buf, (size_t)lm_json_number_text(buf, d, valueint));
}

int lm_json_sat_int(double d)
{
	if (d >= INT_MAX)
		return INT_MAX;
	if (d <= (double)INT_MIN)
		return INT_MIN;
	return (int)d;
}

static void jw_int(jw *w, int64_t v)
{
	jw_item(w);
	if (v > INT_MIN && v < INT_MAX) {
		/* what lm_json_number_text prints for it, without doubles */
		char t[12], *o;
		unsigned u = v < 0 ? (unsigned)-v : (unsigned)v;
		int k = 0;
		do
			t[k++] = (char)('0' + u % 10);
		while ((u /= 10) != 0);
		jw_need(w, 12);
		o = w->p + w->len;
		if (v < 0)
			*o++ = '-';
		while (k)
			*o++ = t[--k];
		w->len = (size_t)(o - w->p);
		return;
	}
	jw_number(w, (double)v, lm_json_sat_int((double)v));
}

/* A float as lm_json_float writes it. */
static void jw_float(jw *w, double v)
{
	jw_item(w);
	if (isnan(v))
		jw_string(w, "nan");
	else if (isinf(v))
		jw_string(w, v > 0 ? "inf" : "-inf");
	else if (v == 0 && signbit(v))
		jw_put(w, "-0.0", 4);
	else
		jw_number(w, v, lm_json_sat_int(v));
}

static void jw_str(jw *w, const char *s)
{
	jw_item(w);
	if (s)
		jw_string(w, s);
	else
		jw_put(w, "null", 4);
}

static void jw_bool(jw *w, int b)
{
	jw_item(w);
	jw_put(w, b ? "true" : "false", b ? 4 : 5);
}

/* Any cJSON value (carried `extra` keys, opaque operands). */
static void jw_cjson(jw *w, const cJSON *j)
{
	if (cJSON_IsObject(j)) {
		jw_open(w, 1);
		for (const cJSON *c = j->child; c; c = c->next) {
			/* cJSON prints a key-less member with key "" */
			jw_member(w, c->string ? c->string : "", 0);
			jw_cjson(w, c);
		}
		jw_close(w);
		return;
	}
	if (cJSON_IsArray(j)) {
		jw_open(w, 0);
		for (const cJSON *c = j->child; c; c = c->next)
			jw_cjson(w, c);
		jw_close(w);
		return;
	}
	jw_item(w);
	if (cJSON_IsString(j))
		jw_string(w, j->valuestring);
	else if (cJSON_IsNumber(j))
		jw_number(w, j->valuedouble, j->valueint);
	else if (cJSON_IsRaw(j))
		jw_put(w, j->valuestring ? j->valuestring : "",
		       j->valuestring ? strlen(j->valuestring) : 0);
	else if (cJSON_IsTrue(j))
		jw_put(w, "true", 4);
	else if (cJSON_IsFalse(j))
		jw_put(w, "false", 5);
	else
		jw_put(w, "null", 4);
}

/* key + value helpers (the value is skipped with its key, as cJSON does
** for a key-less item) */
static void kstr(jw *w, const char *k, const char *s)
{
	if (jw_key(w, k))
		jw_str(w, s);
}

static void kint(jw *w, const char *k, int64_t v)
{
	if (jw_key(w, k))
		jw_int(w, v);
}

static void kfloat(jw *w, const char *k, double v)
{
	if (jw_key(w, k))
		jw_float(w, v);
}

static void kbool(jw *w, const char *k, int b)
{
	if (jw_key(w, k))
		jw_bool(w, b);
}

static void int_array(jw *w, const int64_t *v, int n)
{
	jw_open(w, 0);
	for (int i = 0; i < n; i++)
		jw_int(w, v[i]);
	jw_close(w);
}

/* Strings; NULL entries are left out (cJSON_CreateString(NULL) fails). */
static void str_array(jw *w, char *const *v, int n)
{
	jw_open(w, 0);
	for (int i = 0; i < n; i++)
		if (v[i])
			jw_str(w, v[i]);
	jw_close(w);
}

/* Every key of extra the innermost object does not have yet (keys already
** written win; the first of duplicate extra keys wins). */
static void add_extra(jw *w, const cJSON *extra)
{
	if (!extra)
		return;
	for (const cJSON *c = extra->child; c; c = c->next) {
		jlevel *l = &w->lv[w->depth - 1];
		int have = !c->string;
		for (int i = 0; i < l->n_keys && !have; i++)
			have = strcmp(l->keys[i], c->string) == 0;
		if (!have && jw_key(w, c->string))
			jw_cjson(w, c);
	}
}

static void appairs(jw *w, const lm_appair *p, int n, int as_objects)
{
	jw_open(w, 0);
	for (int i = 0; i < n; i++) {
		if (as_objects) {
			jw_open(w, 1);
			kint(w, "step", p[i].step);
			kint(w, "num", p[i].num);
		} else {
			jw_open(w, 0);
			jw_int(w, p[i].step);
			jw_int(w, p[i].num);
		}
		jw_close(w);
	}
	jw_close(w);
}

static void arg_json(jw *w, const lm_arg *a)
{
	if (a->kind == LM_ARG_OPAQUE) {
		if (a->extra) /* a NULL one is left out, as before */
			jw_cjson(w, a->extra);
		return;
	}
	jw_open(w, 1); /* keys in the order they are printed */
	if (a->kind == LM_ARG_PHYSICAL_AP) {
		jw_key(w, "ap");
		appairs(w, a->ap, a->n_ap, 0);
		int64_t pe = lm_arg_part_elems(a, lm_arg_memloc(w->m, w->allocs,
								 a));
		int64_t off = a->offset;
		int keep = a->has_start_partition || a->start_partition;
		if (pe > 0 && a->offset >= 0 && a->offset < pe &&
		    (off = lm_arg_folded_offset(a, pe)) >= 0)
			keep = 0;  /* folded into offset */
		else
			off = a->offset;
		kstr(w, "dtype", lm_dtype_name(a->dtype));
		kstr(w, "kind", "physical_ap");
		kstr(w, "memref", a->memref);
		kstr(w, "memsetref", a->memsetref);
		kint(w, "offset", off);
		if (keep)
			kint(w, "start_partition", a->start_partition);
	} else {
		kstr(w, "dtype", lm_dtype_name(a->dtype));
		kstr(w, "kind", "imm_value");
		kfloat(w, "value", a->imm);
	}
	add_extra(w, a->extra);
	jw_close(w);
}

static void args_json(jw *w, const char *k, const lm_arg *v, int n)
{
	jw_key(w, k);
	jw_open(w, 0);
	for (int i = 0; i < n; i++)
		arg_json(w, &v[i]);
	jw_close(w);
}

static void kv_json(jw *w, const char *k, const lm_kv *v, int n)
{
	jw_key(w, k);
	jw_open(w, 1);
	for (int i = 0; i < n; i++)
		kstr(w, v[i].key, v[i].value);
	jw_close(w);
}

/* A dependency list as [name, EdgeKind] pairs (nothing when empty). */
static void deps_json(jw *w, const char *k, char *const *names,
		      const uint8_t *kinds, int n)
{
	if (!n)
		return;
	jw_key(w, k);
	jw_open(w, 0);
	for (int i = 0; i < n; i++) {
		jw_open(w, 0);
		jw_str(w, names[i]);
		jw_str(w, lm_edgekind_name(kinds ? kinds[i] : LM_EDGE_FLOW));
		jw_close(w);
	}
	jw_close(w);
}


static void block_json(jw *w, const lm_block *b);

/*
** ---- an instruction's keys, in printing order -----------------------------
**
** One row per key of the IR and the opcodes it is written for (0: every
** opcode: the header), sorted by key: inst_json walks the rows and, in
** between, the opcode's always-written keys of the field table the IR
** leaves at their default, so the object comes out in order; only carried
** keys (`extra`) are sorted in when it closes. A writer may write
** nothing (a key at its skip-default).
*/

/* The instruction carries key k as it is (an affine value of a key the
** model holds as a constant): that value is written, not the field. */
static int carried(const lm_inst *in, const char *k)
{
	const cJSON *x = in->extra ?
		cJSON_GetObjectItemCaseSensitive(in->extra, k) : NULL;
	return x && !cJSON_IsNull(x); /* a null is an absent value */
}

typedef void (*iw_fn)(jw *w, const lm_inst *in, const char *k);

typedef struct iw_key {
	const char *key;
	lm_opmask ops;     /* bits 1 << lm_opcode; 0: every opcode */
	iw_fn write;
} iw_key;

#define OPM(x) LM_OPM(x)
#define OPM_DMA (OPM(DMACOPY) | OPM(LOAD) | OPM(SAVE))
#define OPM_KERNELS (OPM(NKIKERNEL) | OPM(NKIKLIRKERNEL))
/* the opcodes that hold nested blocks (LM_OPF_BLOCKS) */
#define OPM_BLOCKS (OPM(LOOP) | OPM(DYNLOOP) | OPM(DOWHILE) | OPM(DMABLOCK))
/* the opcodes whose queue the IR holds */
#define OPM_QUEUE (OPM_DMA | OPM(INDIRECTLOAD) | OPM(SWITCHQUEUE) | \
		   OPM(RESETQUEUE) | OPM(DMATRIGGER) | OPM(DMABLOCK))

/* A Loop's body always; another opcode's when it has one. */
static void wr_blocks(jw *w, const lm_inst *in, const char *k)
{
	if (!in->n_blocks && in->op != LM_OP_LOOP)
		return;
	jw_key(w, k);
	jw_open(w, 0);
	for (int i = 0; i < in->n_blocks; i++)
		block_json(w, &in->blocks[i]);
	jw_close(w);
}

/* An affine expression in version 2 form (null when it has none). */
static void affine_value(jw *w, const lm_affine *e)
{
	cJSON *j = e ? lm_affine_to_json(e, 2) : NULL;
	if (j)
		jw_cjson(w, j);
	else
		jw_str(w, NULL);
	cJSON_Delete(j);
}

/* LoopAxis {lb, name, stride, ub} (integers); DynamicForLoopAxis the
** same with affine bounds. */
static void wr_axis(jw *w, const lm_inst *in, const char *k)
{
	const lm_axis *a = &in->axis;
	if (!in->has_axis)
		return;
	jw_key(w, k);
	jw_open(w, 1);
	if (in->op == LM_OP_LOOP) {
		kint(w, "lb", a->lb);
		if (a->name)
			kstr(w, "name", a->name);
		kint(w, "stride", a->stride);
		kint(w, "ub", a->ub);
	} else {
		jw_key(w, "lb");
		affine_value(w, a->lb_e);
		if (a->name)
			kstr(w, "name", a->name);
		jw_key(w, "stride");
		affine_value(w, a->stride_e);
		jw_key(w, "ub");
		affine_value(w, a->ub_e);
	}
	add_extra(w, a->extra);
	jw_close(w);
}

static void wr_loop_regs(jw *w, const lm_inst *in, const char *k)
{
	if (!in->n_loop_regs)
		return;
	jw_key(w, k);
	str_array(w, in->loop_regs, in->n_loop_regs);
}

static void wr_cond(jw *w, const lm_inst *in, const char *k)
{
	if (in->cond && !carried(in, k)) {
		jw_key(w, k);
		affine_value(w, in->cond);
	}
}

/* An enum field at a non-default ordinal, by its canonical name. */
static void enum_key(jw *w, const char *k, int type, int64_t ord)
{
	const char *e = lm_enum_name(type, ord);
	if (ord != lm_enum_default(type) && e)
		kstr(w, k, e);
}

static void wr_comp_op(jw *w, const lm_inst *in, const char *k)
{
	enum_key(w, k, LM_ET_BranchCompareOp, in->comp_op);
}

static void wr_on_true(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->on_true);
}

static void wr_on_false(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->on_false);
}

static void wr_branch_target(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->branch_target);
}

static void wr_reg_alu(jw *w, const lm_inst *in, const char *k)
{
	enum_key(w, k, LM_ET_AluOpType, in->reg_alu);
}

static void wr_is_64bit(jw *w, const lm_inst *in, const char *k)
{
	if (in->is_64bit && !carried(in, k))
		kbool(w, k, 1);
}

static void wr_sema_group(jw *w, const lm_inst *in, const char *k)
{
	if (!in->n_sema_group)
		return;
	jw_key(w, k);
	int_array(w, in->sema_group, in->n_sema_group);
}

static void wr_dma_blocks(jw *w, const lm_inst *in, const char *k)
{
	if (!in->n_dma_blocks)
		return;
	jw_key(w, k);
	str_array(w, in->dma_blocks, in->n_dma_blocks);
}

static void wr_deps(jw *w, const lm_inst *in, const char *k)
{
	deps_json(w, k, in->deps, in->dep_kind, in->n_deps);
}

static void wr_lc_deps(jw *w, const lm_inst *in, const char *k)
{
	deps_json(w, k, in->lc_deps, in->lc_dep_kind, in->n_lc_deps);
}

static void wr_engine(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, lm_engine_name(in->engine));
}

static void wr_engine_id(jw *w, const lm_inst *in, const char *k)
{
	kint(w, k, in->engine_id);
}

static void wr_ins(jw *w, const lm_inst *in, const char *k)
{
	args_json(w, k, in->ins, in->n_ins);
}

static void wr_outs(jw *w, const lm_inst *in, const char *k)
{
	args_json(w, k, in->outs, in->n_outs);
}

static void wr_name(jw *w, const lm_inst *in, const char *k)
{
	if (in->name || in->op != LM_OP_LOOP)
		kstr(w, k, in->name);
}

static void wr_opcode(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->op == LM_OP_OTHER ? in->opcode_str
					  : lm_opcode_name(in->op));
}

static void wr_origin(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, lm_origin_name(in->origin));
}

static void wr_sched_end(jw *w, const lm_inst *in, const char *k)
{
	kint(w, k, in->sched_end);
}

static void wr_sched_start(jw *w, const lm_inst *in, const char *k)
{
	kint(w, k, in->sched_start);
}

/* One sync_info entry: the name form {mode, semaphore, value}, the id
** form {id, mode, wait_value | update_value}, the rest as read. */
static void sync_entry(jw *w, const lm_sync *e, int upd)
{
	const char *mode = lm_enum_name(upd ? LM_ET_UpdateMode : LM_ET_WaitMode,
					e->mode);
	jw_open(w, 1);
	if (e->has_core)
		kint(w, "core", e->core);
	if (e->from)
		kstr(w, "from", e->from);
	if (!e->semaphore)
		kint(w, "id", e->id);
	if (mode)
		kstr(w, "mode", mode);
	if (e->regref)
		kstr(w, "regref", e->regref);
	if (e->semaphore)
		kstr(w, "semaphore", e->semaphore);
	if (e->has_value)
		kint(w, e->semaphore ? "value" : upd ? "update_value"
		     : "wait_value", e->value);
	add_extra(w, e->extra);
	jw_close(w);
}

/* waits and updates as sync_info (keys in order: on_update, on_wait) */
static void wr_sync(jw *w, const lm_inst *in, const char *k)
{
	if (!in->n_wait && !in->n_update && !in->sync_extra)
		return;
	jw_key(w, k);
	jw_open(w, 1);
	if (in->n_update) {
		jw_key(w, "on_update");
		jw_open(w, 0);
		for (int i = 0; i < in->n_update; i++)
			sync_entry(w, &in->update[i], 1);
		jw_close(w);
	}
	if (in->n_wait) {
		jw_key(w, "on_wait");
		jw_open(w, 0);
		for (int i = 0; i < in->n_wait; i++)
			sync_entry(w, &in->wait[i], 0);
		jw_close(w);
	}
	add_extra(w, in->sync_extra);
	jw_close(w);
}

static void wr_can_read_uninit(jw *w, const lm_inst *in, const char *k)
{
	if (in->can_read_uninit && !carried(in, k))
		kbool(w, k, 1);
}

static void wr_queue(jw *w, const lm_inst *in, const char *k)
{
	if (in->queue || in->op == LM_OP_SWITCHQUEUE ||
	    in->op == LM_OP_RESETQUEUE)
		kstr(w, k, in->queue);
}

static void wr_instance(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->instance_name);
}

static void wr_target(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->target);
}

static void wr_acc_flag(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kint(w, k, (int64_t)(in->start_tensor_calc ? 1 : 0) |
		     (in->stop_tensor_calc ? 2 : 0) | in->acc_flag_rest);
}

static void wr_psum_zero(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kint(w, k, in->psum_zero_region);
}

static void wr_is_transpose(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kbool(w, k, in->is_transpose);
}

static void wr_weight_onezero(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kbool(w, k, in->is_weight_onezero);
}

static void wr_fmap_onezero(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kbool(w, k, in->is_fmap_onezero);
}

static void wr_act_func(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, lm_actfunc_name(in->act_func));
}

static void wr_scale(jw *w, const lm_inst *in, const char *k)
{
	kfloat(w, k, in->scale);
}

static void wr_alpha(jw *w, const lm_inst *in, const char *k)
{
	kfloat(w, k, in->alpha); /* always written, 0 by default */
}

/* Activation acc, Exponential reduce_cmd: always written. */
static void wr_eng_acc(jw *w, const lm_inst *in, const char *k)
{
	const char *e = lm_enum_name(LM_ET_EngineAccumulationType,
				     in->eng_acc);
	if (!carried(in, k))
		kstr(w, k, e ? e : "Idle");
}

/* Activation reduce_op: always written, bypass by default. */
static void wr_reduce_alu(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kstr(w, k, in->reduce_alu == LM_ALU_INVALID ? "bypass"
		     : lm_aluop_name(in->reduce_alu));
}

static void wr_alu(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, lm_aluop_name(in->alu));
}

static void wr_alu0(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, lm_aluop_name(in->alu0));
}

/* RangeSelect's compare_op0 / compare_op1: written when given. */
static void wr_cmp0(jw *w, const lm_inst *in, const char *k)
{
	if (in->alu0 != LM_ALU_INVALID)
		kstr(w, k, lm_aluop_name(in->alu0));
}

static void wr_cmp1(jw *w, const lm_inst *in, const char *k)
{
	if (in->alu1 != LM_ALU_INVALID)
		kstr(w, k, lm_aluop_name(in->alu1));
}

static void wr_alu1(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, lm_aluop_name(in->alu1));
}

static void wr_const0(jw *w, const lm_inst *in, const char *k)
{
	kfloat(w, k, in->const0);
}

static void wr_const1(jw *w, const lm_inst *in, const char *k)
{
	kfloat(w, k, in->const1);
}

static void wr_reverse0(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kbool(w, k, in->reverse0);
}

static void wr_reverse1(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kbool(w, k, in->reverse1);
}

static void wr_is_stt(jw *w, const lm_inst *in, const char *k)
{
	if (in->is_scalar_tensor_tensor && !carried(in, k))
		kbool(w, k, 1);
}

static void wr_is_tts(jw *w, const lm_inst *in, const char *k)
{
	if (in->is_tensor_tensor_scan && !carried(in, k))
		kbool(w, k, 1);
}

static void wr_reverse_pred(jw *w, const lm_inst *in, const char *k)
{
	if (in->reverse_pred && !carried(in, k))
		kbool(w, k, 1);
}

static void wr_reduce_axis(jw *w, const lm_inst *in, const char *k)
{
	const char *e = lm_enum_name(LM_ET_AxisListType, in->reduce_axis);
	if (!carried(in, k))
		kstr(w, k, e ? e : "X");
}

static void wr_negate(jw *w, const lm_inst *in, const char *k)
{
	if (in->negate && !carried(in, k))
		kbool(w, k, 1);
}

static void wr_apply_transpose(jw *w, const lm_inst *in, const char *k)
{
	/* BNStats always writes it (a required key) */
	if ((in->apply_transpose || in->op == LM_OP_BNSTATS) &&
	    !carried(in, k))
		kbool(w, k, in->apply_transpose);
}

static void wr_memset_mode(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->memset_mode ? in->memset_mode : "Const");
}

static void wr_constant(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kint(w, k, in->has_constant ? in->constant : 0);
}

static void wr_value(jw *w, const lm_inst *in, const char *k)
{
	if (in->has_value)
		kfloat(w, k, in->value);
}

static void wr_base(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kint(w, k, in->base);
}

static void wr_chmul(jw *w, const lm_inst *in, const char *k)
{
	if (in->channel_multiplier && !carried(in, k))
		kint(w, k, in->channel_multiplier);
}

static void wr_pattern(jw *w, const lm_inst *in, const char *k)
{
	jw_key(w, k);
	appairs(w, in->pattern, in->n_pattern, 0);
}

static void wr_fill_value(jw *w, const lm_inst *in, const char *k)
{
	kfloat(w, k, in->fill_value);
}

static void wr_barrier_id(jw *w, const lm_inst *in, const char *k)
{
	if (!carried(in, k))
		kint(w, k, in->barrier_id);
}

static void wr_cores(jw *w, const lm_inst *in, const char *k)
{
	jw_key(w, k);
	int_array(w, in->cores, in->n_cores);
}

static void wr_group(jw *w, const lm_inst *in, const char *k)
{
	if (in->group)
		kstr(w, k, in->group);
}

static void wr_renumber(jw *w, const lm_inst *in, const char *k)
{
	if (in->has_renumber || !in->renumber)
		kbool(w, k, in->renumber);
}

static void wr_kernel_format(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->kernel_format);
}

static void wr_klir_binary(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->klir_binary);
}

static void wr_nki_func(jw *w, const lm_inst *in, const char *k)
{
	kstr(w, k, in->func);
}

static void wr_kernel_source(jw *w, const lm_inst *in, const char *k)
{
	if (in->kernel_source)
		kstr(w, k, in->kernel_source);
}

static void wr_func_args(jw *w, const lm_inst *in, const char *k)
{
	kv_json(w, k, in->func_args, in->n_func_args);
}

static void wr_func_outs(jw *w, const lm_inst *in, const char *k)
{
	kv_json(w, k, in->func_outs, in->n_func_outs);
}

static void wr_sb_buf(jw *w, const lm_inst *in, const char *k)
{
	if (!in->has_sb_buf_shape)
		return;
	jw_key(w, k);
	int_array(w, in->sb_buf_shape, 2);
}

static void wr_psum_buf(jw *w, const lm_inst *in, const char *k)
{
	if (!in->has_psum_buf_shape)
		return;
	jw_key(w, k);
	jw_open(w, 0);
	jw_int(w, in->psum_buf_shape[0]);
	int_array(w, in->psum_buf_shape + 1, 2);
	jw_close(w);
}

/* Sorted by key (tests check it: lm_json_iw_keys_sorted). */
static const iw_key iw_keys[] = {
	{ "DynamicForLoopAxis", OPM(DYNLOOP), wr_axis },
	{ "LoopAxis", OPM(LOOP), wr_axis },
	{ "acc", OPM(ACTIVATION), wr_eng_acc },
	{ "accumulation_flag", OPM(MATMULT), wr_acc_flag },
	{ "alpha", OPM(ACTIVATION), wr_alpha },
	{ "apply_transpose", OPM(TENSORREDUCE) | OPM(BNSTATS),
	  wr_apply_transpose },
	{ "axis", OPM(TENSORREDUCE), wr_reduce_axis },
	{ "base", OPM(IOTA) | OPM(AFFINESELECT), wr_base },
	{ "blocks", OPM_BLOCKS, wr_blocks },
	{ "can_read_uninit", 0, wr_can_read_uninit },
	{ "channel_multiplier", OPM(IOTA) | OPM(AFFINESELECT), wr_chmul },
	{ "comp_op", OPM(CMPBRANCH), wr_comp_op },
	{ "compare_op", OPM(AFFINESELECT), wr_alu },
	{ "compare_op0", OPM(RANGESELECT), wr_cmp0 },
	{ "compare_op1", OPM(RANGESELECT), wr_cmp1 },
	{ "cond", OPM(DOWHILE), wr_cond },
	{ "const0", OPM(TENSORSCALAR), wr_const0 },
	{ "const1", OPM(TENSORSCALAR), wr_const1 },
	{ "constant", OPM(MEMSET), wr_constant },
	{ "cores", OPM(COREBARRIER), wr_cores },
	{ "dependencies", 0, wr_deps },
	{ "dma_blocks", OPM(DMATRIGGER), wr_dma_blocks },
	{ "engine", 0, wr_engine },
	{ "engine_id", 0, wr_engine_id },
	{ "fill_value", OPM(AFFINESELECT) | OPM(RANGESELECT), wr_fill_value },
	{ "func", OPM(ACTIVATION), wr_act_func },
	{ "func", OPM(NKIKERNEL), wr_nki_func },
	{ "func_args", OPM_KERNELS, wr_func_args },
	{ "func_outs", OPM_KERNELS, wr_func_outs },
	{ "group", OPM(COREBARRIER), wr_group },
	{ "id", OPM(COREBARRIER), wr_barrier_id },
	{ "imm_value", OPM(MATCHREPLACE) | OPM(MIMR), wr_fill_value },
	{ "ins", 0, wr_ins },
	{ "instance", OPM(SWITCHQUEUE) | OPM(RESETQUEUE), wr_instance },
	{ "is_64bit", OPM(REGALU), wr_is_64bit },
	{ "is_fmap_onezero", OPM(MATMULT), wr_fmap_onezero },
	{ "is_scalar_tensor_tensor", OPM(TSPTR), wr_is_stt },
	{ "is_tensor_tensor_scan", OPM(TSPTR), wr_is_tts },
	{ "is_transpose", OPM(MATMULT), wr_is_transpose },
	{ "is_weight_onezero", OPM(MATMULT), wr_weight_onezero },
	{ "kernel_format", OPM(NKIKLIRKERNEL), wr_kernel_format },
	{ "kernel_source", OPM(NKIKERNEL), wr_kernel_source },
	{ "klir_binary", OPM(NKIKLIRKERNEL), wr_klir_binary },
	{ "loop_carried_dependencies", 0, wr_lc_deps },
	{ "mode", OPM(MEMSET), wr_memset_mode },
	{ "name", 0, wr_name },
	{ "negate", OPM(TENSORREDUCE), wr_negate },
	{ "on_false", OPM(CMPBRANCH), wr_on_false },
	{ "on_true", OPM(CMPBRANCH), wr_on_true },
	{ "op", OPM(TENSORTENSOR) | OPM(TENSORREDUCE), wr_alu },
	{ "op", OPM(REGALU), wr_reg_alu },
	{ "op0", OPM(TENSORSCALAR) | OPM(TSPTR), wr_alu0 },
	{ "op1", OPM(TENSORSCALAR) | OPM(TSPTR), wr_alu1 },
	{ "opcode", 0, wr_opcode },
	{ "origin", 0, wr_origin },
	{ "outs", 0, wr_outs },
	{ "pattern", OPM(IOTA) | OPM(AFFINESELECT), wr_pattern },
	{ "psum_buf_shape", OPM_KERNELS, wr_psum_buf },
	{ "psum_zero_region", OPM(MATMULT), wr_psum_zero },
	{ "queue", OPM_QUEUE, wr_queue },
	{ "reduce_cmd", OPM(EXPONENTIAL), wr_eng_acc },
	{ "reduce_op", OPM(ACTIVATION), wr_reduce_alu },
	{ "registers", OPM(LOOP), wr_loop_regs },
	{ "renumber", OPM(COREBARRIER), wr_renumber },
	{ "reverse0", OPM(TENSORSCALAR) | OPM(TSPTR), wr_reverse0 },
	{ "reverse1", OPM(TENSORSCALAR) | OPM(TSPTR), wr_reverse1 },
	{ "reverse_pred", OPM(COPYPRED), wr_reverse_pred },
	{ "sb_buf_shape", OPM_KERNELS, wr_sb_buf },
	{ "scale", OPM(ACTIVATION), wr_scale },
	{ "scheduled_end", 0, wr_sched_end },
	{ "scheduled_start", 0, wr_sched_start },
	{ "sema_group", OPM(GROUPRESET), wr_sema_group },
	{ "sync_info", 0, wr_sync },
	{ "target", OPM(CALL), wr_target },
	{ "target", OPM(UBRANCH), wr_branch_target },
	{ "value", OPM(MEMSET), wr_value },
};
enum { N_IW_KEYS = sizeof iw_keys / sizeof *iw_keys };

int lm_json_iw_keys_sorted(void)
{
	for (int i = 1; i < N_IW_KEYS; i++)
		if (strcmp(iw_keys[i - 1].key, iw_keys[i].key) > 0)
			return 0;
	return 1;
}

/* The opcode's field f written at its default: an always-written key the
** IR leaves out (nothing for names, records, JSON: nothing to invent). */
static void default_key(jw *w, const lm_field *f)
{
	const char *e;
	switch (f->type) {
	case LM_FT_BOOL:
	case LM_FT_MA_BOOL:
		kbool(w, f->key, f->deflt != 0);
		break;
	case LM_FT_INT: case LM_FT_UINT:
	case LM_FT_MA_INT: case LM_FT_MA_UINT:
		kint(w, f->key, f->deflt);
		break;
	case LM_FT_FLOAT:
		kfloat(w, f->key, (double)f->deflt);
		break;
	case LM_FT_ENUM:
		if ((e = lm_enum_name(f->enumtype, f->deflt)) != NULL)
			kstr(w, f->key, e);
		break;
	case LM_FT_MA_INT_PAIR:
		jw_key(w, f->key);
		jw_open(w, 0);
		jw_int(w, f->deflt);
		jw_int(w, f->deflt);
		jw_close(w);
		break;
	case LM_FT_APPAIRS: case LM_FT_INT_LIST: case LM_FT_FLOAT_LIST:
	case LM_FT_INT_LIST_LIST: case LM_FT_MA_UINT_LIST:
	case LM_FT_ENUM_LIST: case LM_FT_STR_LIST: case LM_FT_NAME_LIST:
		jw_key(w, f->key);
		jw_open(w, 0);
		jw_close(w);
		break;
	default:
		break;
	}
}

/* Write the opcode's always-written fields from *fi on whose keys sort
** before `before` (NULL: all the rest); a key the IR rows write
** (`before` itself) or the instruction carries is not one of them. */
static void defaults_before(jw *w, const lm_inst *in, const lm_opinfo *o,
			    int *fi, const char *before)
{
	for (; o && *fi < o->n_fields; (*fi)++) {
		const lm_field *f = o->fields[*fi];
		int c = before ? strcmp(f->key, before) : -1;
		if (c > 0)
			return;
		if (c < 0 && (f->flags & LM_FF_ALWAYS) && !carried(in, f->key))
			default_key(w, f);
	}
}

static void inst_json(jw *w, const lm_inst *in)
{
	const lm_opinfo *o = lm_op_info(lm_inst_it(in));
	lm_opmask bit = in->op > LM_OP_INVALID && in->op < LM_OP_COUNT ?
		(lm_opmask)1 << in->op : 0;
	int fi = 0;
	jw_open(w, 1);
	for (int r = 0; r < N_IW_KEYS; r++) {
		const iw_key *k = &iw_keys[r];
		if (k->ops && !(k->ops & bit))
			continue;
		defaults_before(w, in, o, &fi, k->key);
		k->write(w, in, k->key);
	}
	defaults_before(w, in, o, &fi, NULL);
	add_extra(w, in->extra);
	jw_close(w);
}

/* A block's arguments, each entry in the form it was read. */
static void block_args(jw *w, const lm_block *b)
{
	jw_key(w, "arguments");
	jw_open(w, 0);
	for (int i = 0; i < b->n_args; i++) {
		const lm_blockarg *a = &b->args[i];
		jw_open(w, 1);
		jw_key(w, "incoming_values");
		jw_open(w, 0);
		for (int k = 0; k < a->n_incoming; k++) {
			const lm_incoming *x = &a->incoming[k];
			if (x->form == LM_IN_PAIR) {
				jw_open(w, 0);
				jw_str(w, x->value);
				jw_str(w, x->block);
			} else {
				jw_open(w, 1);
				kstr(w, "block", x->block);
				kstr(w, x->form == LM_IN_REGREF ? "regref"
				     : "value", x->value);
			}
			jw_close(w);
		}
		jw_close(w);
		if (a->regref)
			kstr(w, "regref", a->regref);
		add_extra(w, a->extra);
		jw_close(w);
	}
	jw_close(w);
}

static void block_json(jw *w, const lm_block *b)
{
	jw_open(w, 1);
	if (b->has_args)
		block_args(w, b);
	jw_key(w, "instructions");
	jw_open(w, 0);
	for (int i = 0; i < b->n_insts; i++)
		inst_json(w, &b->insts[i]);
	jw_close(w);
	kstr(w, "name", b->name);
	add_extra(w, b->extra);
	jw_close(w);
}

static void alloc_json(jw *w, const lm_alloc *al)
{
	jw_open(w, 1);
	kstr(w, "name", al->name);
	kstr(w, "kind", lm_tensorkind_name(al->kind));
	if (al->dtype)
		kstr(w, "dtype", lm_dtype_name(al->dtype));
	jw_key(w, "tensor_shape");
	int_array(w, al->tensor_shape, al->n_shape);
	if (al->addr_space)
		kstr(w, "addr_space", al->addr_space);
	kstr(w, "file", al->file ? al->file : "");
	jw_key(w, "memorylocations");
	jw_open(w, 0);
	for (int i = 0; i < al->n_memlocs; i++) {
		const lm_memloc *l = &al->memlocs[i];
		jw_open(w, 1);
		int64_t bit;
		kstr(w, "name", l->name);
		/* MemoryType by its bit value, as the compiler writes it */
		if (!lm_enum_parse(LM_ET_MemoryType, lm_memtype_name(l->type),
				   &bit))
			kint(w, "type", bit);
		else
			kstr(w, "type", lm_memtype_name(l->type));
		kint(w, "addr", l->addr);
		jw_key(w, "dims");
		int_array(w, l->dims, l->n_dims);
		kint(w, "bank", l->bank);
		kint(w, "base", l->base);
		kbool(w, "allocated", l->allocated);
		if (al->has_remote) { /* the view's target, on its location */
			jw_key(w, "remote_local_target");
			jw_open(w, 1);
			kstr(w, "name", al->remote_name);
			kint(w, "core", al->remote_core);
			jw_close(w);
		}
		add_extra(w, l->extra);
		jw_close(w);
	}
	jw_close(w);
	if (al->has_remote && !al->n_memlocs) {
		jw_key(w, "remote_local_target");
		jw_open(w, 1);
		kstr(w, "name", al->remote_name);
		kint(w, "core", al->remote_core);
		jw_close(w);
	}
	if (al->alias_of)
		kstr(w, "alias_of", al->alias_of);
	add_extra(w, al->extra);
	jw_close(w);
}

static void function_json(jw *w, const lm_function *f)
{
	lm_strmap allocs;
	lm_strmap_init(&allocs);
	for (int k = f->n_allocs - 1; k >= 0; k--)
		lm_strmap_put(&allocs, f->allocs[k].name, &f->allocs[k]);
	w->allocs = &allocs;
	jw_open(w, 1); /* keys in the order they are printed */
	jw_key(w, "allocations");
	jw_open(w, 0);
	for (int i = 0; i < f->n_allocs; i++)
		alloc_json(w, &f->allocs[i]);
	jw_close(w);
	jw_key(w, "attributes");
	str_array(w, f->attributes, f->n_attributes);
	jw_key(w, "blocks");
	jw_open(w, 0);
	for (int i = 0; i < f->n_blocks; i++)
		block_json(w, &f->blocks[i]);
	jw_close(w);
	if (f->has_kind)
		kstr(w, "kind", lm_funckind_name(f->kind));
	kstr(w, "name", f->name);
	if (f->has_core_id)
		kint(w, "neuron_core_id", f->neuron_core_id);
	add_extra(w, f->extra);
	jw_close(w);
	w->allocs = NULL;
	lm_strmap_free(&allocs);
}

static void module_json(jw *w, const lm_module *m)
{
	w->m = m;
	jw_open(w, 1); /* keys in the order they are printed */
	if (m->has_aliases || m->n_aliases) {
		jw_key(w, "aliases");
		jw_open(w, 0);
		for (int i = 0; i < m->n_aliases; i++) {
			const lm_alias *a = &m->aliases[i];
			jw_open(w, 1);
			kstr(w, "producer", a->producer);
			kstr(w, "consumer", a->consumer);
			kint(w, "producer_core", a->producer_core);
			kint(w, "consumer_core", a->consumer_core);
			add_extra(w, a->extra);
			jw_close(w);
		}
		jw_close(w);
	}
	{
		/* ArchLevel by the compiler's name (gen2 is "sunda", ...) */
		int64_t lv;
		const char *a = m->arch ? m->arch : "gen3", *e;
		if (!lm_enum_parse(LM_ET_ArchLevel, a, &lv) &&
		    (e = lm_enum_name(LM_ET_ArchLevel, lv)) != NULL)
			a = e;
		kstr(w, "arch", a);
	}
	jw_key(w, "attributes");
	jw_open(w, 1);
	if (m->has_core_id)
		kint(w, "neuron_core_id", m->neuron_core_id);
	add_extra(w, m->attributes_extra);
	jw_close(w);
	jw_key(w, "functions");
	jw_open(w, 0);
	for (int i = 0; i < m->n_functions; i++)
		function_json(w, &m->functions[i]);
	jw_close(w);
	if (m->name)
		kstr(w, "name", m->name);
	if (m->n_queues) {
		jw_key(w, "queues");
		jw_open(w, 0);
		for (int i = 0; i < m->n_queues; i++) {
			const lm_queue *q = &m->queues[i];
			jw_open(w, 1);
			kstr(w, "name", q->name);
			jw_key(w, "instances");
			jw_open(w, 0);
			for (int j = 0; j < q->n_instances; j++) {
				jw_open(w, 1);
				kstr(w, "name", q->instances[j].name);
				kstr(w, "semaphore", q->instances[j].semaphore);
				add_extra(w, q->instances[j].extra);
				jw_close(w);
			}
			jw_close(w);
			add_extra(w, q->extra);
			jw_close(w);
		}
		jw_close(w);
	}
	if (m->n_semaphores) {
		jw_key(w, "semaphores");
		jw_open(w, 0);
		for (int i = 0; i < m->n_semaphores; i++) {
			jw_open(w, 1);
			kstr(w, "name", m->semaphores[i].name);
			kint(w, "init", m->semaphores[i].init);
			if (m->semaphores[i].has_id)
				kint(w, "id", m->semaphores[i].id);
			if (m->semaphores[i].has_core)
				kint(w, "core", m->semaphores[i].core);
			add_extra(w, m->semaphores[i].extra);
			jw_close(w);
		}
		jw_close(w);
	}
	kint(w, "version", 2); /* the form written is always 2 */
	add_extra(w, m->extra);
	jw_close(w);
}

/* The module's JSON text plus a newline; caller frees. */
static char *module_text(const lm_module *m, int pretty, int exact,
			 size_t *len)
{
	jw w;
	memset(&w, 0, sizeof w);
	w.pretty = pretty;
	w.exact = exact;
	module_json(&w, m);
	jw_put(&w, "\n", 1);
	w.p[w.len] = 0;
	for (int i = 0; i < w.cap_lv; i++) {
		free(w.lv[i].keys);
		free(w.lv[i].off);
	}
	free(w.lv);
	free(w.tmp);
	*len = w.len;
	return w.p;
}

char *lm_module_exact_text(const lm_module *m, size_t *len)
{
	return module_text(m, 0, 1, len);
}

cJSON *lm_module_to_cjson(const lm_module *m)
{
	size_t n;
	char *s = lm_module_exact_text(m, &n);
	cJSON *j = cJSON_ParseWithLength(s, n);
	free(s);
	return j;
}

int lm_module_to_json(const lm_module *m, int pretty, char **out_text,
		      size_t *out_len, lm_error *err)
{
	size_t n;
	(void)err; /* writing cannot fail (allocation failure aborts) */
	*out_text = module_text(m, pretty, 0, &n);
	if (out_len)
		*out_len = n;
	return 0;
}

int lm_module_save(const lm_module *m, const char *path, int pretty,
		   lm_error *err)
{
	char *s;
	size_t n;
	if (lm_module_to_json(m, pretty, &s, &n, err))
		return LM_EINPUT;
	int rc = lm_write_file_atomic(path, s, n, err);
	free(s);
	return rc;
}

/*
** affine.c -- the quasi-affine ("pelican") expressions of the BIR JSON
** wire form: the version 2 tree and the version 1 flat form read and
** written, copy, structural compare, free, constant folding and
** evaluation (affine.h; the wire forms and the choices in docs/affine.md).
**
** One table (kinds[]) holds what each version 2 kind carries: its tag,
** the keys of its integer fields and their ranges, its sub-tree and its
** name. The version 2 reader and writer loop over its rows; copy, compare
** and free need no per-kind code at all, as every node has the same
** shape (struct lm_affine).
*/
#include "common.h"
#include "affine.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXACT 9007199254740992.0 /* 2^53: every integer a double holds */

/*
** A node. Which fields a kind uses is in its kinds[] row; the others stay
** zero, so copy, compare and free treat every node alike.
*/
struct lm_affine {
	int kind;          /* LM_AFF_* */
	int n;             /* AFFINE terms, SUM operands */
	int64_t k[2];      /* the integer fields, in the order of ikey[] */
	char *name;        /* IV axis, REG register */
	lm_affine *sub;    /* MULT var; FLOORDIV, MOD, CCDIV numer */
	lm_affine **op;    /* n: SUM operands, AFFINE term indices */
	int64_t *coeff;    /* n: AFFINE coefficients (never 0) */
};

/* What an integer field accepts. */
enum { R_ANY, R_NAT /* >= 0 */, R_POS /* > 0 */ };

/* A list a kind carries under "terms". */
enum { L_NONE, L_AFFINE /* [{idx, coeff}] */, L_SUM /* [expr], n_terms */ };

typedef struct kind_row {
	int kind;
	const char *tag;       /* the version 2 "kind" */
	const char *sub;       /* key of the sub-tree */
	const char *name;      /* key of the name */
	const char *ikey[2];   /* keys of k[0], k[1] */
	signed char range[2];
	signed char list;
	signed char read_only; /* read as its kind's first row; k[1] optional
				  and dropped */
} kind_row;

/* The version 2 kinds; the writer uses the first row of a kind. The key
** order of each row (list, sub, name, integers) is the compiler's. */
static const kind_row kinds[] = {
	{ LM_AFF_CCGETRANK, "CCGetRankKind", NULL, NULL,
	  { "iteration_id", "channel_id" }, { R_NAT, R_NAT }, L_NONE, 0 },
	{ LM_AFF_INDIRECT, "IndirectArgId", NULL, NULL,
	  { "arg_id", NULL }, { R_NAT, 0 }, L_NONE, 0 },
	{ LM_AFF_IV, "AffIVKind", NULL, "axis",
	  { NULL, NULL }, { 0, 0 }, L_NONE, 0 },
	{ LM_AFF_REG, "IntRuntimeValueKind", NULL, "regref",
	  { NULL, NULL }, { 0, 0 }, L_NONE, 0 },
	{ LM_AFF_SHARD, "ShardIDKind", NULL, NULL,
	  { "ub", NULL }, { R_POS, 0 }, L_NONE, 0 },
	{ LM_AFF_AFFINE, "AffExprKind", NULL, NULL,
	  { "c", NULL }, { R_ANY, 0 }, L_AFFINE, 0 },
	{ LM_AFF_SUM, "SumKind", NULL, NULL,
	  { NULL, NULL }, { 0, 0 }, L_SUM, 0 },
	{ LM_AFF_MULT, "MultKind", "var", NULL,
	  { "scale", NULL }, { R_ANY, 0 }, L_NONE, 0 },
	{ LM_AFF_FLOORDIV, "FloorDivKind", "numer", NULL,
	  { "denom", NULL }, { R_POS, 0 }, L_NONE, 0 },
	{ LM_AFF_MOD, "ModuloKind", "numer", NULL,
	  { "denom", NULL }, { R_POS, 0 }, L_NONE, 0 },
	{ LM_AFF_CCDIV, "CCDivKind", "numer", NULL,
	  { "denom", "replica_groups_id" }, { R_POS, R_NAT }, L_NONE, 0 },
	/* read, never written: the compiler reads it as a ModuloKind */
	{ LM_AFF_MOD, "CCModKind", "numer", NULL,
	  { "denom", "replica_groups_id" }, { R_POS, R_NAT }, L_NONE, 1 },
};
#define N_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

static const kind_row *row_of_kind(int kind)
{
	for (int i = 0; i < N_KINDS; i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

static const kind_row *row_of_tag(const char *tag)
{
	for (int i = 0; i < N_KINDS; i++)
		if (!strcmp(kinds[i].tag, tag))
			return &kinds[i];
	return NULL;
}

static int is_index(int kind)
{
	return kind == LM_AFF_IV || kind == LM_AFF_REG || kind == LM_AFF_SHARD;
}

/* ---- the walk: path of the current node, error text ------------------- */

/* One step of a path: ".key" or ".key[index]" (index < 0: none). */
typedef struct step {
	const char *key;
	int index;
} step;

typedef struct walk {
	step path[2 * LM_AFFINE_MAX_DEPTH + 8];
	int n_steps;
	int depth;             /* expression nodes entered */
	char *err;
	size_t errlen;
	lm_affine_leaf_fn fn;  /* eval */
	void *ctx;
} walk;

static void push(walk *W, const char *key, int index)
{
	/* two steps per node at most, and the depth is bounded first */
	if (W->n_steps < (int)(sizeof W->path / sizeof W->path[0]))
		W->path[W->n_steps] = (step){ key, index };
	W->n_steps++;
}

static void pop(walk *W)
{
	W->n_steps--;
}

/* Fill W->err with "path: what"; returns -1. */
static int fail(walk *W, const char *fmt, ...) LM_PRINTF(2, 3);
static int fail(walk *W, const char *fmt, ...)
{
	lm_buf b = LM_BUF_INIT;
	va_list ap;
	int n = W->n_steps;
	if (!W->errlen)
		return -1;
	lm_buf_puts(&b, "expr");
	if (n > (int)(sizeof W->path / sizeof W->path[0]))
		n = (int)(sizeof W->path / sizeof W->path[0]);
	for (int i = 0; i < n; i++) {
		lm_buf_printf(&b, ".%s", W->path[i].key);
		if (W->path[i].index >= 0)
			lm_buf_printf(&b, "[%d]", W->path[i].index);
	}
	lm_buf_puts(&b, ": ");
	va_start(ap, fmt);
	lm_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	snprintf(W->err, W->errlen, "%s", lm_buf_cstr(&b));
	lm_buf_free(&b);
	return -1;
}

static const char *type_name(const cJSON *j)
{
	if (!j)
		return "nothing";
	if (cJSON_IsObject(j))
		return "an object";
	if (cJSON_IsArray(j))
		return "an array";
	if (cJSON_IsString(j))
		return "a string";
	if (cJSON_IsNumber(j))
		return "a number";
	if (cJSON_IsBool(j))
		return "a boolean";
	if (cJSON_IsNull(j))
		return "null";
	return "an invalid item";
}

/* Check that every key of the object j is one of keys[0 .. n-1] (NULL
** entries skipped). */
static int check_keys(walk *W, const cJSON *j, const char *const *keys, int n,
		      const char *what)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, j) {
		int i;
		for (i = 0; i < n; i++)
			if (keys[i] && c->string && !strcmp(keys[i], c->string))
				break;
		if (i == n)
			return fail(W, "unknown key '%s' in %s",
				    c->string ? c->string : "", what);
	}
	return 0;
}

/* An integral JSON number within +-2^53 that range r accepts. */
static int get_int(walk *W, const cJSON *j, const char *key, int r,
		   int64_t *out)
{
	if (!j)
		return fail(W, "missing key '%s'", key);
	if (!cJSON_IsNumber(j))
		return fail(W, "key '%s': expected an integer, got %s", key,
			    type_name(j));
	double d = j->valuedouble;
	if (!(d == floor(d)))
		return fail(W, "key '%s': expected an integer, got %.17g", key,
			    d);
	if (d > MAX_EXACT || d < -MAX_EXACT)
		return fail(W, "key '%s': integer %.17g out of range (beyond "
			    "2^53)", key, d);
	*out = (int64_t)d;
	if (r == R_NAT && *out < 0)
		return fail(W, "key '%s': expected a non-negative integer, "
			    "got %" PRId64, key, *out);
	if (r == R_POS && *out <= 0)
		return fail(W, "key '%s': expected a positive integer, got %"
			    PRId64, key, *out);
	return 0;
}

/* A non-empty string. */
static int get_name(walk *W, const cJSON *j, const char *key, char **out)
{
	if (!j)
		return fail(W, "missing key '%s'", key);
	if (!cJSON_IsString(j) || !j->valuestring)
		return fail(W, "key '%s': expected a string, got %s", key,
			    type_name(j));
	if (!j->valuestring[0])
		return fail(W, "key '%s': empty name", key);
	*out = lm_xstrdup(j->valuestring);
	return 0;
}

/* j (the value of key) is an array. */
static int check_array(walk *W, const cJSON *j, const char *key)
{
	if (!j)
		return fail(W, "missing key '%s'", key);
	if (!cJSON_IsArray(j))
		return fail(W, "key '%s': expected an array, got %s", key,
			    type_name(j));
	return 0;
}

/* The member key of the object j; of a key given twice, the last (as the
** module reader, JavaScript and the compiler's JSON library read it). */
static const cJSON *item(const cJSON *j, const char *key)
{
	const cJSON *c, *last = NULL;
	cJSON_ArrayForEach(c, j)
		if (c->string && !strcmp(c->string, key))
			last = c;
	return last;
}

/* ---- nodes ------------------------------------------------------------- */

static lm_affine *node_new(int kind)
{
	lm_affine *e = lm_xcalloc(1, sizeof *e);
	e->kind = kind;
	return e;
}

void lm_affine_free(lm_affine *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->n; i++)
		lm_affine_free(e->op[i]);
	free(e->op);
	free(e->coeff);
	lm_affine_free(e->sub);
	free(e->name);
	free(e);
}

lm_affine *lm_affine_copy(const lm_affine *e)
{
	if (!e)
		return NULL;
	lm_affine *c = node_new(e->kind);
	c->k[0] = e->k[0];
	c->k[1] = e->k[1];
	c->name = e->name ? lm_xstrdup(e->name) : NULL;
	c->sub = lm_affine_copy(e->sub);
	if (e->n) {
		c->op = lm_xcalloc((size_t)e->n, sizeof *c->op);
		if (e->coeff) {
			c->coeff = lm_xmalloc((size_t)e->n * sizeof *c->coeff);
			memcpy(c->coeff, e->coeff,
			       (size_t)e->n * sizeof *c->coeff);
		}
		for (int i = 0; i < e->n; i++)
			c->op[i] = lm_affine_copy(e->op[i]);
		c->n = e->n;
	}
	return c;
}

/* The AFFINE term of e whose index equals idx, or -1. */
static int find_term(const lm_affine *e, const lm_affine *idx, int n)
{
	for (int i = 0; i < n; i++)
		if (lm_affine_equal(e->op[i], idx))
			return i;
	return -1;
}

int lm_affine_equal(const lm_affine *a, const lm_affine *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->n != b->n || a->k[0] != b->k[0] ||
	    a->k[1] != b->k[1] || !a->name != !b->name ||
	    (a->name && strcmp(a->name, b->name)) ||
	    !lm_affine_equal(a->sub, b->sub))
		return 0;
	if (a->kind == LM_AFF_AFFINE) {
		/* a set: the indices are distinct (the reader refuses
		** repeats), so same size and each found is the same set */
		for (int i = 0; i < a->n; i++) {
			int j = find_term(b, a->op[i], b->n);
			if (j < 0 || b->coeff[j] != a->coeff[i])
				return 0;
		}
		return 1;
	}
	for (int i = 0; i < a->n; i++)
		if (!lm_affine_equal(a->op[i], b->op[i]))
			return 0;
	return 1;
}

int lm_affine_terms(const lm_affine *e, int *n_terms, int64_t *c, int *kind,
		    const char **name, int64_t *coeff)
{
	if (!e || e->kind != LM_AFF_AFFINE)
		return -1;
	if (n_terms)
		*n_terms = e->n;
	if (c)
		*c = e->k[0];
	if (e->n > 0) {
		if (kind)
			*kind = e->op[0]->kind;
		if (name)
			*name = e->op[0]->name;
		if (coeff)
			*coeff = e->coeff[0];
	}
	return 0;
}

int lm_affine_kind(const lm_affine *e)
{
	return e->kind;
}

/* ---- reading version 2 ------------------------------------------------- */

static int read_v2(walk *W, const cJSON *j, lm_affine **out);

/* The terms of an AffExprKind: [{idx: index, coeff}], zero coefficients
** dropped (the compiler's factory drops them), an index twice refused. */
static int read_affine_terms(walk *W, const cJSON *arr, lm_affine *e)
{
	static const char *const keys[] = { "idx", "coeff" };
	const cJSON *t;
	int i = 0, cap = cJSON_GetArraySize(arr);
	e->op = lm_xcalloc((size_t)(cap ? cap : 1), sizeof *e->op);
	e->coeff = lm_xcalloc((size_t)(cap ? cap : 1), sizeof *e->coeff);
	cJSON_ArrayForEach(t, arr) {
		lm_affine *idx = NULL;
		int64_t coeff;
		int at;
		push(W, "terms", i++);
		if (!cJSON_IsObject(t))
			return fail(W, "expected a term object, got %s",
				    type_name(t));
		if (check_keys(W, t, keys, 2, "a term"))
			return -1;
		if (!item(t, "idx"))
			return fail(W, "missing key 'idx'");
		push(W, "idx", -1);
		if (read_v2(W, item(t, "idx"), &idx))
			return -1;
		if (!is_index(idx->kind)) {
			const char *tag = row_of_kind(idx->kind)->tag;
			lm_affine_free(idx);
			return fail(W, "kind '%s' is not an index (AffIVKind, "
				    "IntRuntimeValueKind or ShardIDKind)", tag);
		}
		pop(W);
		if (get_int(W, item(t, "coeff"), "coeff", R_ANY, &coeff)) {
			lm_affine_free(idx);
			return -1;
		}
		if (coeff == 0) {
			lm_affine_free(idx);
		} else if ((at = find_term(e, idx, e->n)) >= 0) {
			lm_affine_free(idx);
			return fail(W, "the same index as an earlier term "
				    "(terms hold each index once)");
		} else {
			e->op[e->n] = idx;
			e->coeff[e->n++] = coeff;
		}
		pop(W);
	}
	return 0;
}

/* The terms of a SumKind, n_terms of them. */
static int read_sum_terms(walk *W, const cJSON *j, const cJSON *arr,
			  lm_affine *e)
{
	const cJSON *t;
	int64_t n_terms;
	int cap = cJSON_GetArraySize(arr);
	if (get_int(W, item(j, "n_terms"), "n_terms", R_NAT, &n_terms))
		return -1;
	if (n_terms != cap)
		return fail(W, "n_terms is %" PRId64 " but there are %d terms",
			    n_terms, cap);
	e->op = lm_xcalloc((size_t)(cap ? cap : 1), sizeof *e->op);
	cJSON_ArrayForEach(t, arr) {
		push(W, "terms", e->n);
		if (read_v2(W, t, &e->op[e->n]))
			return -1;
		e->n++;
		pop(W);
	}
	return 0;
}

/* One version 2 node and its sub-trees. */
static int read_v2(walk *W, const cJSON *j, lm_affine **out)
{
	const char *keys[8];
	const kind_row *r;
	const cJSON *kind;
	lm_affine *e;
	int nk = 0;

	*out = NULL;
	if (W->depth >= LM_AFFINE_MAX_DEPTH)
		return fail(W, "nested deeper than %d expressions",
			    LM_AFFINE_MAX_DEPTH);
	if (!cJSON_IsObject(j))
		return fail(W, "expected an expression object, got %s",
			    type_name(j));
	kind = item(j, "kind");
	if (!kind)
		return fail(W, "missing key 'kind'");
	if (!cJSON_IsString(kind) || !kind->valuestring)
		return fail(W, "key 'kind': expected a string, got %s",
			    type_name(kind));
	if (!(r = row_of_tag(kind->valuestring)))
		return fail(W, "unknown kind '%s'", kind->valuestring);

	keys[nk++] = "kind";
	keys[nk++] = r->sub;
	keys[nk++] = r->name;
	keys[nk++] = r->ikey[0];
	keys[nk++] = r->ikey[1];
	keys[nk++] = r->list ? "terms" : NULL;
	keys[nk++] = r->list == L_SUM ? "n_terms" : NULL;
	if (check_keys(W, j, keys, nk, r->tag))
		return -1;

	e = node_new(r->kind);
	W->depth++;
	for (int i = 0; i < 2; i++) {
		if (!r->ikey[i] || (r->read_only && i == 1 &&
				    !item(j, r->ikey[i])))
			continue;
		if (get_int(W, item(j, r->ikey[i]), r->ikey[i], r->range[i],
			    &e->k[i]))
			goto fail;
	}
	if (r->read_only)
		e->k[1] = 0;
	if (r->name && get_name(W, item(j, r->name), r->name, &e->name))
		goto fail;
	if (r->sub) {
		if (!item(j, r->sub)) {
			fail(W, "missing key '%s'", r->sub);
			goto fail;
		}
		push(W, r->sub, -1);
		if (read_v2(W, item(j, r->sub), &e->sub))
			goto fail;
		pop(W);
	}
	if (r->list) {
		const cJSON *arr = item(j, "terms");
		if (check_array(W, arr, "terms") ||
		    (r->list == L_AFFINE ? read_affine_terms(W, arr, e)
					 : read_sum_terms(W, j, arr, e)))
			goto fail;
	}
	W->depth--;
	*out = e;
	return 0;
fail:
	lm_affine_free(e);
	return -1;
}

/* ---- reading version 1 ------------------------------------------------- */

/* The v1 "op" values and the node each one builds. */
static const struct v1_op {
	const char *op;
	int kind;
} v1_ops[] = {
	{ "Div", LM_AFF_FLOORDIV },
	{ "Mod", LM_AFF_MOD },
	{ "CCGetRank", LM_AFF_CCDIV },   /* a CCDiv, replica group 0 */
	{ "IndirectArgId", LM_AFF_INDIRECT },
};
#define N_V1_OPS ((int)(sizeof v1_ops / sizeof v1_ops[0]))

/* The flat affine body: terms [{AxisLabel, coef}] and c (both may be
** absent when optional). */
static int read_v1_body(walk *W, const cJSON *j, int optional, lm_affine **out)
{
	static const char *const keys[] = { "AxisLabel", "coef" };
	const cJSON *arr = item(j, "terms"), *t;
	lm_affine *e = node_new(LM_AFF_AFFINE);
	int i = 0, cap;

	*out = e;
	if ((item(j, "c") || !optional) &&
	    get_int(W, item(j, "c"), "c", R_ANY, &e->k[0]))
		return -1;
	if (!arr && optional)
		return 0;
	if (check_array(W, arr, "terms"))
		return -1;
	cap = cJSON_GetArraySize(arr);
	e->op = lm_xcalloc((size_t)(cap ? cap : 1), sizeof *e->op);
	e->coeff = lm_xcalloc((size_t)(cap ? cap : 1), sizeof *e->coeff);
	cJSON_ArrayForEach(t, arr) {
		lm_affine *iv;
		int64_t coef;
		push(W, "terms", i++);
		if (!cJSON_IsObject(t))
			return fail(W, "expected a term object, got %s",
				    type_name(t));
		if (check_keys(W, t, keys, 2, "a term"))
			return -1;
		iv = node_new(LM_AFF_IV);
		if (get_name(W, item(t, "AxisLabel"), "AxisLabel", &iv->name) ||
		    get_int(W, item(t, "coef"), "coef", R_ANY, &coef)) {
			lm_affine_free(iv);
			return -1;
		}
		if (coef == 0) {
			lm_affine_free(iv);
		} else if (find_term(e, iv, e->n) >= 0) {
			lm_affine_free(iv);
			return fail(W, "the same AxisLabel as an earlier term "
				    "(terms hold each axis once)");
		} else {
			e->op[e->n] = iv;
			e->coeff[e->n++] = coef;
		}
		pop(W);
	}
	return 0;
}

/* A version 1 expression: a flat affine, the same with an op, or a shard
** id written as in version 2. */
static int read_v1(walk *W, const cJSON *j, lm_affine **out)
{
	static const char *const keys[] = { "terms", "c", "op", "op_param" };
	static const char *const shard_keys[] = { "kind", "ub" };
	const cJSON *op = item(j, "op"), *kind = item(j, "kind");
	const struct v1_op *o = NULL;
	lm_affine *body = NULL, *e;
	int64_t param = 0;

	*out = NULL;
	if (!cJSON_IsObject(j))
		return fail(W, "expected an expression object, got %s",
			    type_name(j));
	if (kind) {
		if (!cJSON_IsString(kind) || !kind->valuestring)
			return fail(W, "key 'kind': expected a string, got %s",
				    type_name(kind));
		if (strcmp(kind->valuestring, "ShardIDKind"))
			return fail(W, "kind '%s' is not in the version 1 form "
				    "(only ShardIDKind is)", kind->valuestring);
		if (check_keys(W, j, shard_keys, 2, "ShardIDKind"))
			return -1;
		e = node_new(LM_AFF_SHARD);
		if (get_int(W, item(j, "ub"), "ub", R_POS, &e->k[0])) {
			lm_affine_free(e);
			return -1;
		}
		*out = e;
		return 0;
	}
	if (check_keys(W, j, keys, 4, "a version 1 expression"))
		return -1;
	if (op) {
		if (!cJSON_IsString(op) || !op->valuestring)
			return fail(W, "key 'op': expected a string, got %s",
				    type_name(op));
		for (int i = 0; i < N_V1_OPS && !o; i++)
			if (!strcmp(v1_ops[i].op, op->valuestring))
				o = &v1_ops[i];
		if (!o)
			return fail(W, "unknown op '%s' (Div, Mod, CCGetRank "
				    "or IndirectArgId)", op->valuestring);
		if (get_int(W, item(j, "op_param"), "op_param",
			    o->kind == LM_AFF_INDIRECT ? R_NAT : R_POS, &param))
			return -1;
	} else if (item(j, "op_param")) {
		return fail(W, "key 'op_param' without 'op'");
	}
	if (read_v1_body(W, j, o && o->kind == LM_AFF_INDIRECT, &body)) {
		lm_affine_free(body);
		return -1;
	}
	if (!o) {
		*out = body;
		return 0;
	}
	if (o->kind == LM_AFF_INDIRECT) {
		int zero = body->n == 0 && body->k[0] == 0;
		lm_affine_free(body);
		if (!zero)
			return fail(W, "op 'IndirectArgId' with a non-zero "
				    "affine body");
		e = node_new(LM_AFF_INDIRECT);
		e->k[0] = param;
	} else {
		e = node_new(o->kind);
		e->sub = body;
		e->k[0] = param;
	}
	*out = e;
	return 0;
}

int lm_affine_from_json(lm_affine **out, const cJSON *j, int version,
			char *err, size_t errlen)
{
	walk W;
	W.n_steps = 0;
	W.depth = 0;
	W.err = err;
	W.errlen = err ? errlen : 0;
	W.fn = NULL;
	W.ctx = NULL;
	*out = NULL;
	if (version == 2)
		return read_v2(&W, j, out);
	if (version == 1)
		return read_v1(&W, j, out);
	return fail(&W, "version %d: should be 1 (old) or 2 (new)", version);
}

/* ---- writing ----------------------------------------------------------- */

/* Add a number (exact: every field is within 2^53); 0 or -1 (no memory). */
static int put_num(cJSON *o, const char *key, int64_t v)
{
	return cJSON_AddNumberToObject(o, key, (double)v) ? 0 : -1;
}

static int put(cJSON *o, const char *key, cJSON *v)
{
	if (!v)
		return -1;
	if (!cJSON_AddItemToObject(o, key, v)) {
		cJSON_Delete(v);
		return -1;
	}
	return 0;
}

static cJSON *write_v2(const lm_affine *e)
{
	const kind_row *r = row_of_kind(e->kind);
	cJSON *o = cJSON_CreateObject(), *arr;
	int bad = !o;
	if (bad)
		return NULL;
	bad |= !cJSON_AddStringToObject(o, "kind", r->tag);
	if (r->list == L_SUM)
		bad |= put_num(o, "n_terms", e->n);
	if (r->list) {
		bad |= put(o, "terms", arr = cJSON_CreateArray());
		for (int i = 0; i < e->n && !bad; i++) {
			cJSON *t = write_v2(e->op[i]);
			if (t && r->list == L_AFFINE) {
				cJSON *term = cJSON_CreateObject();
				bad |= put(term, "idx", t) |
				       put_num(term, "coeff", e->coeff[i]);
				t = term;
			}
			bad |= !t || !cJSON_AddItemToArray(arr, t);
		}
	}
	if (r->sub)
		bad |= put(o, r->sub, write_v2(e->sub));
	if (r->name)
		bad |= !cJSON_AddStringToObject(o, r->name, e->name);
	for (int i = 0; i < 2; i++)
		if (r->ikey[i])
			bad |= put_num(o, r->ikey[i], e->k[i]);
	if (bad) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* e is an AFFINE over loop axes only (what v1's AxisLabel can name). */
static int is_v1_body(const lm_affine *e)
{
	if (!e || e->kind != LM_AFF_AFFINE)
		return 0;
	for (int i = 0; i < e->n; i++)
		if (e->op[i]->kind != LM_AFF_IV)
			return 0;
	return 1;
}

/* Add the flat body of the AFFINE b (NULL: the empty one) to o; 0 or -1
** (no memory). */
static int put_v1_body(cJSON *o, const lm_affine *b)
{
	cJSON *arr = cJSON_CreateArray();
	if (put(o, "terms", arr))
		return -1;
	for (int i = 0; b && i < b->n; i++) {
		cJSON *t = cJSON_CreateObject();
		if (put(t, "AxisLabel", cJSON_CreateString(b->op[i]->name)) ||
		    put_num(t, "coef", b->coeff[i]) ||
		    !cJSON_AddItemToArray(arr, t)) {
			cJSON_Delete(t);
			return -1;
		}
	}
	return put_num(o, "c", b ? b->k[0] : 0);
}

/* The v1 form of e, NULL when there is none that reads back as e. */
static cJSON *write_v1(const lm_affine *e)
{
	const char *op = NULL;
	cJSON *o;
	int bad;

	switch (e->kind) {
	case LM_AFF_AFFINE:
		if (!is_v1_body(e))
			return NULL;
		break;
	case LM_AFF_FLOORDIV: op = "Div"; break;
	case LM_AFF_MOD: op = "Mod"; break;
	case LM_AFF_CCDIV:
		if (e->k[1] != 0)   /* v1 has no replica group */
			return NULL;
		op = "CCGetRank";
		break;
	case LM_AFF_INDIRECT: op = "IndirectArgId"; break;
	case LM_AFF_SHARD:
		return write_v2(e);   /* the same in both versions */
	default:
		return NULL;
	}
	if (op && e->kind != LM_AFF_INDIRECT && !is_v1_body(e->sub))
		return NULL;
	if (!(o = cJSON_CreateObject()))
		return NULL;
	bad = 0;
	if (op) {
		bad |= !cJSON_AddStringToObject(o, "op", op);
		bad |= put_num(o, "op_param", e->k[0]);
	}
	bad |= put_v1_body(o, e->kind == LM_AFF_AFFINE ? e
			   : e->kind == LM_AFF_INDIRECT ? NULL : e->sub);
	if (bad) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *lm_affine_to_json(const lm_affine *e, int version)
{
	if (!e)
		return NULL;
	if (version == 2)
		return write_v2(e);
	if (version == 1)
		return write_v1(e);
	return NULL;
}

/* ---- evaluation -------------------------------------------------------- */

/* floor(n / d) for d > 0. */
static int64_t floor_div(int64_t n, int64_t d)
{
	int64_t q = n / d;
	return (n % d != 0 && n < 0) ? q - 1 : q;
}

/* n mod d in [0, d) for d > 0. */
static int64_t euclid_mod(int64_t n, int64_t d)
{
	int64_t r = n % d;
	return r < 0 ? r + d : r;
}

/* The text a leaf is known by: its name, or its fields. */
static void leaf_label(const lm_affine *e, char *buf, size_t n)
{
	switch (e->kind) {
	case LM_AFF_SHARD:
		snprintf(buf, n, "ub=%" PRId64, e->k[0]);
		break;
	case LM_AFF_CCGETRANK:
		snprintf(buf, n, "iteration_id=%" PRId64 ",channel_id=%"
			 PRId64, e->k[0], e->k[1]);
		break;
	case LM_AFF_INDIRECT:
		snprintf(buf, n, "arg_id=%" PRId64, e->k[0]);
		break;
	default:
		snprintf(buf, n, "%s", e->name ? e->name : "");
		break;
	}
}

static int eval_node(walk *W, const lm_affine *e, int64_t *v);

static int eval_leaf(walk *W, const lm_affine *e, int64_t *v)
{
	const char *tag = row_of_kind(e->kind)->tag;
	char label[96];
	const char *name = e->name;
	if (!name) {
		leaf_label(e, label, sizeof label);
		name = label;
	}
	if (!W->fn || W->fn(W->ctx, e->kind, name, v) != 0)
		return fail(W, e->name ? "no value for %s '%s'"
				       : "no value for %s (%s)", tag, name);
	if (e->kind == LM_AFF_SHARD && (*v < 0 || *v >= e->k[0]))
		return fail(W, "shard id %" PRId64 " outside [0, %" PRId64 ")",
			    *v, e->k[0]);
	return 0;
}

static int eval_node(walk *W, const lm_affine *e, int64_t *v)
{
	int64_t x, acc;
	switch (e->kind) {
	case LM_AFF_AFFINE:
		acc = e->k[0];
		for (int i = 0; i < e->n; i++) {
			push(W, "terms", i);
			push(W, "idx", -1);
			if (eval_node(W, e->op[i], &x))
				return -1;
			pop(W);
			if (__builtin_mul_overflow(x, e->coeff[i], &x) ||
			    __builtin_add_overflow(acc, x, &acc))
				return fail(W, "integer overflow");
			pop(W);
		}
		*v = acc;
		return 0;
	case LM_AFF_SUM:
		acc = 0;
		for (int i = 0; i < e->n; i++) {
			push(W, "terms", i);
			if (eval_node(W, e->op[i], &x))
				return -1;
			if (__builtin_add_overflow(acc, x, &acc))
				return fail(W, "integer overflow");
			pop(W);
		}
		*v = acc;
		return 0;
	case LM_AFF_MULT:
		push(W, "var", -1);
		if (eval_node(W, e->sub, &x))
			return -1;
		pop(W);
		if (__builtin_mul_overflow(x, e->k[0], v))
			return fail(W, "integer overflow (%" PRId64 " * %"
				    PRId64 ")", x, e->k[0]);
		return 0;
	case LM_AFF_FLOORDIV:
	case LM_AFF_CCDIV:
	case LM_AFF_MOD:
		push(W, "numer", -1);
		if (eval_node(W, e->sub, &x))
			return -1;
		pop(W);
		*v = e->kind == LM_AFF_MOD ? euclid_mod(x, e->k[0])
					   : floor_div(x, e->k[0]);
		return 0;
	default:
		return eval_leaf(W, e, v);
	}
}

int lm_affine_eval(const lm_affine *e, lm_affine_leaf_fn fn, void *ctx,
		   int64_t *v, char *err, size_t errlen)
{
	walk W;
	W.n_steps = 0;
	W.depth = 0;
	W.err = err;
	W.errlen = err ? errlen : 0;
	W.fn = fn;
	W.ctx = ctx;
	return eval_node(&W, e, v);
}

/* ---- constant folding: the range of values a node can take ------------ */

/* [lo, hi], or every int64 when !known. */
typedef struct range {
	int known;
	int64_t lo, hi;
} range;

static const range unknown_range = { 0, 0, 0 };

/* r * k (k != 0), unknown on overflow. */
static range range_mul(range r, int64_t k)
{
	range o = { 1, 0, 0 };
	if (!r.known || __builtin_mul_overflow(r.lo, k, &o.lo) ||
	    __builtin_mul_overflow(r.hi, k, &o.hi))
		return unknown_range;
	if (k < 0) {
		int64_t t = o.lo;
		o.lo = o.hi;
		o.hi = t;
	}
	return o;
}

static range range_add(range a, range b)
{
	range o = { 1, 0, 0 };
	if (!a.known || !b.known || __builtin_add_overflow(a.lo, b.lo, &o.lo) ||
	    __builtin_add_overflow(a.hi, b.hi, &o.hi))
		return unknown_range;
	return o;
}

/*
** The values e can take: a sound over-approximation of every value
** lm_affine_eval can return for it (leaves without a known range are
** unknown; a shard id is in [0, ub), a modulo in [0, denom)).
*/
static range range_of(const lm_affine *e)
{
	range r = { 1, 0, 0 }, x;
	switch (e->kind) {
	case LM_AFF_AFFINE:
		r.lo = r.hi = e->k[0];
		for (int i = 0; i < e->n && r.known; i++)
			r = range_add(r, range_mul(range_of(e->op[i]),
						   e->coeff[i]));
		return r;
	case LM_AFF_SUM:
		for (int i = 0; i < e->n && r.known; i++)
			r = range_add(r, range_of(e->op[i]));
		return r;
	case LM_AFF_MULT:
		if (e->k[0] == 0)
			return r;   /* [0, 0] whatever var is */
		return range_mul(range_of(e->sub), e->k[0]);
	case LM_AFF_FLOORDIV:
	case LM_AFF_CCDIV:
		x = range_of(e->sub);
		if (!x.known)
			return x;
		r.lo = floor_div(x.lo, e->k[0]);
		r.hi = floor_div(x.hi, e->k[0]);
		return r;
	case LM_AFF_MOD:
		x = range_of(e->sub);
		if (x.known && floor_div(x.lo, e->k[0]) ==
		    floor_div(x.hi, e->k[0])) {
			/* one period: the modulo is x shifted */
			r.lo = euclid_mod(x.lo, e->k[0]);
			r.hi = euclid_mod(x.hi, e->k[0]);
		} else {
			r.hi = e->k[0] - 1;
		}
		return r;
	case LM_AFF_SHARD:
		r.hi = e->k[0] - 1;
		return r;
	default:
		return unknown_range;
	}
}

int lm_affine_const(const lm_affine *e, int64_t *v)
{
	range r = range_of(e);
	if (!r.known || r.lo != r.hi)
		return -1;
	*v = r.lo;
	return 0;
}

/* ---- names ------------------------------------------------------------- */

int lm_affine_each_name(lm_affine *e, lm_affine_name_fn fn, void *ctx)
{
	int rc;
	if (e->kind == LM_AFF_IV || e->kind == LM_AFF_REG)
		return fn(ctx, e->kind, &e->name);
	for (int i = 0; i < e->n; i++)
		if ((rc = lm_affine_each_name(e->op[i], fn, ctx)))
			return rc;
	return e->sub ? lm_affine_each_name(e->sub, fn, ctx) : 0;
}

/* ---- linear forms ------------------------------------------------------ */

/* e * k added to *f; -1 when e is not linear in the slots slot_of gives. */
static int lin_add(lm_affine_lin *f, const lm_affine *e, int64_t k,
		   lm_affine_slot_fn slot_of, void *ctx)
{
	int64_t x;
	switch (e->kind) {
	case LM_AFF_AFFINE:
		if (__builtin_mul_overflow(e->k[0], k, &x) ||
		    __builtin_add_overflow(f->c, x, &f->c))
			return -1;
		for (int i = 0; i < e->n; i++) {
			int64_t kk;
			if (__builtin_mul_overflow(e->coeff[i], k, &kk) ||
			    lin_add(f, e->op[i], kk, slot_of, ctx))
				return -1;
		}
		return 0;
	case LM_AFF_SUM:
		for (int i = 0; i < e->n; i++)
			if (lin_add(f, e->op[i], k, slot_of, ctx))
				return -1;
		return 0;
	case LM_AFF_MULT:
		if (__builtin_mul_overflow(e->k[0], k, &x))
			return -1;
		return lin_add(f, e->sub, x, slot_of, ctx);
	case LM_AFF_IV: {
		int s = slot_of(ctx, e->name), j;
		if (s < 0)
			return -1;
		for (j = 0; j < f->n && f->slot[j] != s; j++)
			;
		if (j == f->n) {
			if (f->n == LM_AFFINE_LIN_MAX)
				return -1;
			f->slot[f->n] = s;
			f->coef[f->n++] = 0;
		}
		return __builtin_add_overflow(f->coef[j], k, &f->coef[j]) ? -1
									   : 0;
	}
	default:
		if (lm_affine_const(e, &x) == 0) {
			if (__builtin_mul_overflow(x, k, &x) ||
			    __builtin_add_overflow(f->c, x, &f->c))
				return -1;
			return 0;
		}
		return -1;
	}
}

int lm_affine_compile_lin(const lm_affine *e, lm_affine_slot_fn slot_of,
			  void *ctx, lm_affine_lin *out)
{
	lm_affine_lin f;
	int64_t v;
	memset(&f, 0, sizeof f);
	if (e->kind != LM_AFF_AFFINE && e->kind != LM_AFF_SUM &&
	    e->kind != LM_AFF_MULT && e->kind != LM_AFF_IV) {
		if (lm_affine_const(e, &v))
			return -1;
		f.c = v;
	} else if (lin_add(&f, e, 1, slot_of, ctx)) {
		return -1;
	}
	*out = f;
	return 0;
}

int lm_affine_lin_eval(const lm_affine_lin *f, const int64_t *slots,
		       int64_t *v)
{
	int64_t acc = f->c, x;
	for (int i = 0; i < f->n; i++)
		if (__builtin_mul_overflow(f->coef[i], slots[f->slot[i]], &x) ||
		    __builtin_add_overflow(acc, x, &acc))
			return -1;
	*v = acc;
	return 0;
}

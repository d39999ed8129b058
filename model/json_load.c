/*
** json_load.c -- BIR JSON -> IR.
**
** The text is parsed once by cJSON; the tree is then walked object by
** object. Keys the model interprets are converted (their strings stolen from
** the tree, not copied); every other key is detached and kept in the
** object's `extra`, so the writer can emit it back unchanged. Liberal where
** the wire form leaves room (docs/bir-json.md): null is "absent" for
** optional keys, APPairs may be [step, num] or {"step","num"},
** psum_buf_shape may be flat [a,b,c] or nested [a,[b,c]], floats may be
** "nan" / "inf" / "-inf" (or Lean's "NaN" / "Infinity" / "-Infinity"); a
** key given twice in one object counts once, with its last value
** (unique_keys, before each object is read).
*/
#include "common.h"
#include "module.h"
#include "json_int.h"
#include "optable.h"
#include "enumtab.h"
#include "affine.h"
#include "build.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_EXACT_INT 9007199254740992.0 /* 2^53 */

/*
** The parse arena. cJSON allocates one block per node and per string; for a
** large module malloc + free of those blocks cost more than the parse. While
** lm_module_parse runs cJSON, cJSON's allocations in that thread come from
** this bump allocator; the tree is then read (every string and carried
** object copied out with the normal allocator) and the arena dropped whole.
** cJSON's hooks are global, so they are installed once and for all
** (lm_json_hooks): they use the calling thread's arena while it parses and
** malloc / free otherwise, so modules may be parsed in several threads.
*/
typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
} arena_chunk;

static _Thread_local arena_chunk *arena_head;
static _Thread_local int arena_on; /* this thread is parsing a module */

static void *arena_malloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!arena_head || arena_head->used + n > arena_head->cap) {
		size_t cap = n > (8u << 20) ? n : (8u << 20);
		arena_chunk *c = lm_xmalloc(sizeof *c + cap);
		c->next = arena_head;
		c->used = 0;
		c->cap = cap;
		arena_head = c;
	}
	void *p = (char *)arena_head->data + arena_head->used;
	arena_head->used += n;
	return p;
}

static void *hook_malloc(size_t n)
{
	return arena_on ? arena_malloc(n) : malloc(n);
}

static void hook_free(void *p)
{
	if (!arena_on) /* arena blocks go with the arena */
		free(p);
}

static void install_hooks(void)
{
	cJSON_Hooks hooks = { hook_malloc, hook_free };
	cJSON_InitHooks(&hooks);
}

void lm_json_hooks(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install_hooks);
}

static void arena_release(void)
{
	while (arena_head) {
		arena_chunk *n = arena_head->next;
		free(arena_head);
		arena_head = n;
	}
}

/* Loader state: the file for messages and a "where" path. */
typedef struct ld {
	const char *path;
	lm_error *err;
	int owned; /* the tree is malloc'd, not the parse arena's */
	const char *queue; /* the queue whose blocks are read, or NULL */
	const char *fn, *blk, *inst, *ctx; /* current names, may be NULL */
	/* else, when set: the context is element ctx_index of the array
	** ctx_key, formatted only when a message needs it */
	const char *ctx_key;
	int ctx_index;
	int version; /* the module's: 1 or 2 (affine expressions) */
	char where[512];
} ld;

/*
** A key given twice in one object: the last one counts (as in JavaScript's
** JSON.parse and Python's json). Every object the loader reads goes
** through unique_keys first, which unlinks the earlier members of a
** repeated key, so each getter sees one member per key; an object kept
** in `extra` is copied through drop_repeated_keys, which does the same at
** every depth. Unlinked members of an arena tree go with the arena, those
** of a malloc'd tree (owned) are deleted. A 64-bit filter of cheap key
** fingerprints (first and last byte, length) finds the objects worth a
** closer look: small ones compare their keys pairwise, big ones go
** through a map.
*/
static void dedupe_object(cJSON *j, int owned)
{
	uint64_t seen = 0;
	int maybe = 0, n = 0;
	/* keys in strictly rising order (as the compiler and lncsim write
	   them) cannot repeat */
	const cJSON *p = j->child;
	while (p && p->next && p->string && p->next->string &&
	       strcmp(p->string, p->next->string) < 0)
		p = p->next;
	if (!p || !p->next)
		return;
	for (cJSON *c = j->child; c; c = c->next, n++) {
		const unsigned char *k = (const unsigned char *)
			(c->string ? c->string : "");
		unsigned len = 0, f;
		uint64_t bit;
		while (k[len]) /* keys are short: no call */
			len++;
		f = k[0] * 3u + len * 5u + (len ? k[len - 1] : 0u);
		bit = (uint64_t)1 << (f & 63);
		maybe |= (seen & bit) != 0;
		seen |= bit;
	}
	if (!maybe)
		return;
	if (n <= 16) {
		for (cJSON *c = j->child, *next; c; c = next) {
			next = c->next;
			for (cJSON *d = next; d; d = d->next)
				if (c->string && d->string &&
				    !strcmp(c->string, d->string)) {
					cJSON_DetachItemViaPointer(j, c);
					if (owned)
						cJSON_Delete(c);
					break;
				}
		}
		return;
	}
	/* the map holds each key's last member (its key string is the first
	   member's: deletions wait for the end) */
	lm_strmap last;
	cJSON *gone = owned ? cJSON_CreateArray() : NULL;
	lm_strmap_init(&last);
	lm_strmap_reserve(&last, (size_t)n);
	for (cJSON *c = j->child; c; c = c->next)
		if (c->string)
			lm_strmap_put(&last, c->string, c);
	for (cJSON *c = j->child, *next; c; c = next) {
		next = c->next;
		if (!c->string || lm_strmap_lookup(&last, c->string) == c)
			continue;
		cJSON_DetachItemViaPointer(j, c);
		if (gone)
			cJSON_AddItemToArray(gone, c);
	}
	lm_strmap_free(&last);
	cJSON_Delete(gone);
}

/* An object the loader reads: one member per key. */
static void unique_keys(ld *L, cJSON *j)
{
	if (cJSON_IsObject(j))
		dedupe_object(j, L->owned);
}

/* Every object of a tree, at every depth (a carried copy: owned). */
static void drop_repeated_keys(cJSON *j, int owned)
{
	if (cJSON_IsObject(j))
		dedupe_object(j, owned);
	/* the tree is at most as deep as cJSON parses (1000) */
	for (cJSON *c = cJSON_IsObject(j) || cJSON_IsArray(j) ? j->child : NULL;
	     c; c = c->next)
		if (c->child)
			drop_repeated_keys(c, owned);
}

/* Build the "function F/block B/instruction I" prefix of messages. */
static const char *where(ld *L)
{
	size_t n = 0, cap = sizeof L->where;
	L->where[0] = 0;
	if (L->queue)
		n += (size_t)snprintf(L->where + n, cap - n, "queue %s", L->queue);
	if (L->fn && n < cap)
		n += (size_t)snprintf(L->where + n, cap - n, "%sfunction %s",
				      n ? "/" : "", L->fn);
	if (L->blk && n < cap)
		n += (size_t)snprintf(L->where + n, cap - n, "%sblock %s",
				      n ? "/" : "", L->blk);
	if (L->inst && n < cap)
		n += (size_t)snprintf(L->where + n, cap - n, "%sinstruction %s",
				      n ? "/" : "", L->inst);
	if (L->ctx && n < cap) {
		snprintf(L->where + n, cap - n, "%s%s", n ? "/" : "", L->ctx);
	} else if (L->ctx_key && n < cap) {
		char ctx[32];
		snprintf(ctx, sizeof ctx, "%s[%d]", L->ctx_key, L->ctx_index);
		snprintf(L->where + n, cap - n, "%s%s", n ? "/" : "", ctx);
	}
	return L->where;
}

#define FAIL(L, ...) lm_err((L)->err, (L)->path, where(L), __VA_ARGS__)

static const char *type_name(const cJSON *j)
{
	if (!j)
		return "nothing";
	switch (j->type & 0xff) {
	case cJSON_False:
	case cJSON_True: return "boolean";
	case cJSON_NULL: return "null";
	case cJSON_Number: return "number";
	case cJSON_String: return "string";
	case cJSON_Array: return "array";
	case cJSON_Object: return "object";
	default: return "invalid";
	}
}

static int is_null(const cJSON *j)
{
	return !j || cJSON_IsNull(j);
}

/* Copy a string value out of the tree (the tree may live in an arena). */
static int get_str(ld *L, cJSON *j, const char *key, char **out)
{
	if (!cJSON_IsString(j) || !j->valuestring)
		return FAIL(L, "key '%s': expected string, got %s", key,
			    type_name(j));
	free(*out);
	*out = lm_xstrdup(j->valuestring);
	return 0;
}

/* Integral JSON number within +-2^53. */
static int get_int(ld *L, const cJSON *j, const char *key, int64_t *out)
{
	if (!cJSON_IsNumber(j))
		return FAIL(L, "key '%s': expected integer, got %s", key,
			    type_name(j));
	double d = j->valuedouble;
	if (!(d == floor(d)))
		return FAIL(L, "key '%s': expected integer, got %.17g", key, d);
	if (d > MAX_EXACT_INT || d < -MAX_EXACT_INT)
		return FAIL(L, "key '%s': integer %.17g out of range (beyond 2^53)",
			    key, d);
	*out = (int64_t)d;
	return 0;
}

static int get_nat(ld *L, const cJSON *j, const char *key, int64_t *out)
{
	if (get_int(L, j, key, out))
		return LM_EINPUT;
	if (*out < 0)
		return FAIL(L, "key '%s': expected a non-negative integer, got %lld",
			    key, (long long)*out);
	return 0;
}

static int get_bool(ld *L, const cJSON *j, const char *key, int *out)
{
	if (!cJSON_IsBool(j))
		return FAIL(L, "key '%s': expected boolean, got %s", key,
			    type_name(j));
	*out = cJSON_IsTrue(j) ? 1 : 0;
	return 0;
}

int lm_json_get_float(const cJSON *j, double *out)
{
	if (cJSON_IsNumber(j)) {
		*out = j->valuedouble;
		return 0;
	}
	if (cJSON_IsString(j) && j->valuestring) {
		const char *s = j->valuestring;
		if (!strcmp(s, "nan") || !strcmp(s, "NaN")) {
			*out = NAN;
			return 0;
		}
		if (!strcmp(s, "inf") || !strcmp(s, "Infinity")) {
			*out = INFINITY;
			return 0;
		}
		if (!strcmp(s, "-inf") || !strcmp(s, "-Infinity")) {
			*out = -INFINITY;
			return 0;
		}
	}
	return -1;
}

static int get_float(ld *L, const cJSON *j, const char *key, double *out)
{
	if (lm_json_get_float(j, out))
		return FAIL(L, "key '%s': expected number, got %s", key,
			    type_name(j));
	return 0;
}

static int want_array(ld *L, const cJSON *j, const char *key)
{
	if (!cJSON_IsArray(j))
		return FAIL(L, "key '%s': expected array, got %s", key,
			    type_name(j));
	return 0;
}

static int want_object(ld *L, const cJSON *j, const char *key)
{
	if (!cJSON_IsObject(j))
		return FAIL(L, "key '%s': expected object, got %s", key,
			    type_name(j));
	return 0;
}

/* Copy child j (of parent) into *extra (created on demand). The tree is
** left intact: it may live in the parse arena. */
static void keep_extra(cJSON **extra, cJSON *parent, cJSON *j)
{
	(void)parent;
	cJSON *copy = cJSON_Duplicate(j, 1);
	drop_repeated_keys(copy, 1);
	if (!*extra)
		*extra = cJSON_CreateObject();
	cJSON_AddItemToObject(*extra, j->string, copy);
}

/* Array of integers (natural numbers when nat). */
static int get_int_array(ld *L, const cJSON *j, const char *key, int nat,
			 int64_t **out, int *n)
{
	if (want_array(L, j, key))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(j);
	int64_t *v = cnt ? lm_xcalloc((size_t)cnt, sizeof *v) : NULL;
	int i = 0;
	for (const cJSON *e = j->child; e; e = e->next, i++) {
		int rc = nat ? get_nat(L, e, key, &v[i]) : get_int(L, e, key, &v[i]);
		if (rc) {
			free(v);
			return rc;
		}
	}
	free(*out);
	*out = v;
	*n = cnt;
	return 0;
}

static int get_str_array(ld *L, cJSON *j, const char *key, char ***out, int *n)
{
	if (want_array(L, j, key))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(j);
	char **v = cnt ? lm_xcalloc((size_t)cnt, sizeof *v) : NULL;
	int i = 0;
	for (cJSON *e = j->child; e; e = e->next, i++)
		if (get_str(L, e, key, &v[i])) {
			for (int k = 0; k < i; k++)
				free(v[k]);
			free(v);
			return LM_EINPUT;
		}
	for (int k = 0; k < *n; k++) /* what it replaces */
		free((*out)[k]);
	free(*out);
	*out = v;
	*n = cnt;
	return 0;
}

/* An APPair: [step, num] or {"step": s, "num": n}. */
static int get_appair(ld *L, cJSON *j, const char *key, lm_appair *p,
		      int *as_object)
{
	if (cJSON_IsArray(j) && cJSON_GetArraySize(j) == 2) {
		if (as_object)
			*as_object = 0;
		return get_int(L, j->child, key, &p->step) ||
		       get_int(L, j->child->next, key, &p->num) ? LM_EINPUT : 0;
	}
	if (cJSON_IsObject(j)) {
		unique_keys(L, j);
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "step");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "num");
		if (!s || !n)
			return FAIL(L, "key '%s': access pair needs 'step' and 'num'",
				    key);
		if (as_object)
			*as_object = 1;
		return get_int(L, s, key, &p->step) || get_int(L, n, key, &p->num)
			? LM_EINPUT : 0;
	}
	return FAIL(L, "key '%s': expected [step, num], got %s", key,
		    type_name(j));
}

static int get_appairs(ld *L, const cJSON *j, const char *key, lm_appair **out,
		       int *n, int *as_object)
{
	if (want_array(L, j, key))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(j);
	lm_appair *v = cnt ? lm_xcalloc((size_t)cnt, sizeof *v) : NULL;
	int i = 0;
	for (cJSON *e = j->child; e; e = e->next, i++)
		if (get_appair(L, e, key, &v[i], as_object)) {
			free(v);
			return LM_EINPUT;
		}
	free(*out);
	*out = v;
	*n = cnt;
	return 0;
}

static int get_dtype(ld *L, cJSON *j, const char *key, lm_dtype *out)
{
	if (!cJSON_IsString(j))
		return FAIL(L, "key '%s': expected string, got %s", key,
			    type_name(j));
	lm_dtype t = lm_dtype_parse(j->valuestring);
	if (t == LM_DT_INVALID)
		return FAIL(L, "key '%s': unknown dtype '%s'", key, j->valuestring);
	*out = t;
	return 0;
}

static int get_alu(ld *L, const cJSON *j, const char *key, lm_aluop *out)
{
	if (!cJSON_IsString(j))
		return FAIL(L, "key '%s': expected string, got %s", key,
			    type_name(j));
	lm_aluop op = lm_aluop_parse(j->valuestring);
	if (op == LM_ALU_INVALID)
		return FAIL(L, "key '%s': unknown AluOp '%s'", key, j->valuestring);
	*out = op;
	return 0;
}

/* An enum value by name (any spelling) or by ordinal: its ordinal. */
static int get_enum_ord(ld *L, const cJSON *c, const char *key, int type,
			int64_t *out)
{
	char names[400];
	if (cJSON_IsString(c) && c->valuestring &&
	    !lm_enum_parse(type, c->valuestring, out))
		return 0;
	if (cJSON_IsNumber(c) && c->valuedouble >= 0 &&
	    c->valuedouble == floor(c->valuedouble) &&
	    c->valuedouble <= MAX_EXACT_INT &&
	    lm_enum_name(type, (int64_t)c->valuedouble)) {
		*out = (int64_t)c->valuedouble;
		return 0;
	}
	lm_enum_spellings(type, names, sizeof names);
	if (cJSON_IsString(c))
		return FAIL(L, "key '%s': unknown %s '%s' (%s)", key,
			    lm_enumtype_name(type), c->valuestring, names);
	if (cJSON_IsNumber(c))
		return FAIL(L, "key '%s': %s %.17g does not exist (%s)", key,
			    lm_enumtype_name(type), c->valuedouble, names);
	return FAIL(L, "key '%s': expected string, got %s", key,
		    type_name(c));
}

/* Key match helper. */
/* (the first byte first: most keys differ there) */
#define IS(k) (key[0] == (k)[0] && strcmp(key, (k)) == 0)

/* ---- operands -------------------------------------------------------- */

static int each_affine(ld *L, const char *key, cJSON *v, int conv);

static int load_arg(ld *L, cJSON *j, lm_arg *a)
{
	if (!cJSON_IsObject(j))
		return FAIL(L, "expected operand object, got %s", type_name(j));
	unique_keys(L, j);
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
	if (!cJSON_IsString(kind))
		return FAIL(L, "operand: key 'kind': expected string, got %s",
			    type_name(kind));
	int has_ap = 0, has_ref = 0, has_dt = 0, has_val = 0;
	if (!strcmp(kind->valuestring, "physical_ap")) {
		a->kind = LM_ARG_PHYSICAL_AP;
	} else if (!strcmp(kind->valuestring, "imm_value")) {
		a->kind = LM_ARG_IMM;
	} else if (!strcmp(kind->valuestring, "symbolic_ap") ||
		   !strcmp(kind->valuestring, "symbolic_pwap") ||
		   !strcmp(kind->valuestring, "register_ap") ||
		   !strcmp(kind->valuestring, "register_access") ||
		   !strcmp(kind->valuestring, "imm_array") ||
		   !strcmp(kind->valuestring, "symbolic_imm_value")) {
		/* carried whole; the reference names are read for remapping */
		a->kind = LM_ARG_OPAQUE;
		cJSON *ms = cJSON_GetObjectItemCaseSensitive(j, "memsetref");
		if (cJSON_IsString(ms))
			a->memsetref = lm_xstrdup(ms->valuestring);
		cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
		if (cJSON_IsString(dt))
			a->dtype = lm_dtype_parse(dt->valuestring);
		a->extra = cJSON_Duplicate(j, 1);
		drop_repeated_keys(a->extra, 1);
		{
			/* its affine addresses: checked, and in a version 1
			   module rewritten into the form the writer writes */
			cJSON *ad = cJSON_GetObjectItemCaseSensitive(a->extra,
								     "addrs");
			if (cJSON_IsArray(ad) && each_affine(L, "addrs", ad,
							     L->version != 2))
				return LM_EINPUT;
		}
		return 0;
	} else {
		return FAIL(L, "operand: unknown kind '%s'", kind->valuestring);
	}
	for (cJSON *c = j->child, *next; c; c = next) {
		next = c->next;
		const char *key = c->string;
		int rc = 0;
		if (IS("kind")) {
			continue;
		} else if (IS("dtype")) {
			rc = get_dtype(L, c, "dtype", &a->dtype);
			has_dt = 1;
		} else if (a->kind == LM_ARG_PHYSICAL_AP && IS("ap")) {
			rc = get_appairs(L, c, "ap", &a->ap, &a->n_ap, NULL);
			has_ap = 1;
		} else if (a->kind == LM_ARG_PHYSICAL_AP && IS("offset")) {
			rc = get_nat(L, c, "offset", &a->offset);
		} else if (a->kind == LM_ARG_PHYSICAL_AP && IS("start_partition")) {
			rc = get_nat(L, c, "start_partition", &a->start_partition);
			a->has_start_partition = 1;
		} else if (a->kind == LM_ARG_PHYSICAL_AP && IS("memsetref")) {
			rc = get_str(L, c, "memsetref", &a->memsetref);
			has_ref |= 1;
		} else if (a->kind == LM_ARG_PHYSICAL_AP && IS("memref")) {
			rc = get_str(L, c, "memref", &a->memref);
			has_ref |= 2;
		} else if (a->kind == LM_ARG_IMM && IS("value")) {
			rc = get_float(L, c, "value", &a->imm);
			has_val = 1;
		} else {
			keep_extra(&a->extra, j, c);
		}
		if (rc)
			return rc;
	}
	if (!has_dt)
		return FAIL(L, "operand: missing key 'dtype'");
	if (a->kind == LM_ARG_PHYSICAL_AP) {
		if (!has_ap)
			return FAIL(L, "operand: missing key 'ap'");
		if (!(has_ref & 1))
			return FAIL(L, "operand: missing key 'memsetref'");
		if (!(has_ref & 2)) /* liberal: memref defaults to memsetref */
			a->memref = lm_xstrdup(a->memsetref);
	} else if (!has_val) {
		return FAIL(L, "operand: missing key 'value'");
	}
	return 0;
}

int lm_arg_from_json(lm_arg *a, const cJSON *j, char *msg, size_t n)
{
	ld L;
	lm_error err;
	cJSON *c = cJSON_Duplicate(j, 1);
	int rc;
	memset(&L, 0, sizeof L);
	memset(a, 0, sizeof *a);
	L.path = "";
	L.err = &err;
	L.owned = 1;
	L.version = 2;
	err.msg[0] = 0;
	rc = c ? load_arg(&L, c, a) : FAIL(&L, "expected operand object");
	cJSON_Delete(c);
	if (rc) {
		const char *m = err.msg;
		/* drop the empty path and place of the message */
		while (*m == ':' || *m == ' ')
			m++;
		snprintf(msg, n, "%s", m);
		lm_arg_clear(a);
		return LM_EINPUT;
	}
	return 0;
}

/* ---- register references in carried JSON ------------------------------ */

/* Is key a wire spelling of a register name? */
static int is_regref_key(const char *key)
{
	return key && (!strcmp(key, "regref") || !strcmp(key, "reg_ap_offset") ||
		       !strcmp(key, "reg_sub_tensor_id"));
}

int lm_json_each_regref(cJSON *j, lm_regref_fn fn, void *arg)
{
	int in_object = cJSON_IsObject(j);
	if (!in_object && !cJSON_IsArray(j))
		return 0;
	for (cJSON *c = j->child; c; c = c->next) {
		int rc;
		if (in_object && is_regref_key(c->string)) {
			if (!cJSON_IsNull(c) && (rc = fn(c, arg)) != 0)
				return rc;
			continue;
		}
		/* the tree is at most as deep as cJSON parses (1000) */
		if ((rc = lm_json_each_regref(c, fn, arg)) != 0)
			return rc;
	}
	return 0;
}

int lm_arg_each_regref(const lm_arg *a, lm_regref_fn fn, void *arg)
{
	return a->extra ? lm_json_each_regref(a->extra, fn, arg) : 0;
}

/* ---- tensor references in carried JSON -------------------------------- */

/* obj's member key, or NULL when absent or null (an absent Option). */
static cJSON *present_member(cJSON *obj, const char *key)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, key);
	return c && !cJSON_IsNull(c) ? c : NULL;
}

int lm_json_each_tensorref(cJSON *j, lm_tensorref_fn fn, void *arg)
{
	int rc;
	if (cJSON_IsObject(j)) {
		cJSON *ms = present_member(j, "memsetref");
		cJSON *mr = present_member(j, "memref");
		if ((ms || mr) && (rc = fn(j, ms, mr, arg)) != 0)
			return rc;
	} else if (!cJSON_IsArray(j)) {
		return 0;
	}
	/* the tree is at most as deep as cJSON parses (1000) */
	for (cJSON *c = j->child; c; c = c->next)
		if (c->child && (rc = lm_json_each_tensorref(c, fn, arg)) != 0)
			return rc;
	return 0;
}

int lm_arg_each_tensorref(const lm_arg *a, lm_tensorref_fn fn, void *arg)
{
	return a->extra ? lm_json_each_tensorref(a->extra, fn, arg) : 0;
}

/* A string member renamed through m (lm_inst_rename_json_refs). */
static void rename_string(cJSON *j, const lm_strmap *m)
{
	const char *v;
	if (cJSON_IsString(j) && j->valuestring &&
	    (v = lm_strmap_lookup(m, j->valuestring)) != NULL)
		cJSON_SetValuestring(j, v);
}

/* One register reference (lm_json_each_regref), renamed through arg. */
static int rename_regref(cJSON *j, void *arg)
{
	rename_string(j, arg);
	return 0;
}

/* The two maps of one rename (lm_inst_rename_json_refs). */
typedef struct rename_maps {
	const lm_strmap *allocs, *memlocs;
} rename_maps;

/* One tensor reference (lm_json_each_tensorref), renamed through arg. */
static int rename_tensorref(cJSON *obj, cJSON *memsetref, cJSON *memref,
			    void *arg)
{
	const rename_maps *r = arg;
	(void)obj;
	if (memsetref && r->allocs)
		rename_string(memsetref, r->allocs);
	if (memref && r->memlocs)
		rename_string(memref, r->memlocs);
	return 0;
}

/* The state of lm_inst_each_regname's walk of one expression. */
typedef struct regname_walk {
	lm_regname_fn fn;
	void *arg;
	const char *key;
	const lm_strmap *regs;  /* renaming: the map (fn unused) */
} regname_walk;

/* One named leaf of an expression: a register is visited or renamed. */
static int regname_leaf(void *ctx, int kind, char **name)
{
	regname_walk *r = ctx;
	const char *v;
	if (kind != LM_AFF_REG)
		return 0;
	if (!r->regs)
		return r->fn(r->arg, r->key, *name);
	if ((v = lm_strmap_lookup(r->regs, *name)) != NULL) {
		free(*name);
		*name = lm_xstrdup(v);
	}
	return 0;
}

/* The register leaves of the instruction's expressions (its axis bounds,
** its cond), visited (r->fn) or renamed (r->regs). */
static int each_expr_reg(const lm_inst *in, regname_walk *r)
{
	lm_affine *const e[4] = { in->axis.lb_e, in->axis.ub_e,
				  in->axis.stride_e, in->cond };
	int rc;
	for (int i = 0; i < 4; i++) {
		r->key = i < 3 ? "DynamicForLoopAxis" : "cond";
		if (e[i] && (rc = lm_affine_each_name(e[i], regname_leaf, r)))
			return rc;
	}
	return 0;
}

int lm_inst_each_regname(const lm_inst *in, lm_regname_fn fn, void *arg)
{
	regname_walk r = { fn, arg, "registers", NULL };
	int rc;
	for (int i = 0; i < in->n_loop_regs; i++)
		if (in->loop_regs[i] &&
		    (rc = fn(arg, "registers", in->loop_regs[i])) != 0)
			return rc;
	if ((rc = each_expr_reg(in, &r)) != 0)
		return rc;
	for (int i = 0; i < in->n_wait; i++)
		if (in->wait[i].regref &&
		    (rc = fn(arg, "on_wait regref", in->wait[i].regref)) != 0)
			return rc;
	return 0;
}

void lm_inst_rename_registers(lm_inst *in, const lm_strmap *regs)
{
	regname_walk r = { NULL, NULL, NULL, regs };
	const char *v;
	if (!regs || !regs->n)
		return;
	for (int k = 0; k < 2; k++) {
		lm_arg *as = k ? in->outs : in->ins;
		int n = k ? in->n_outs : in->n_ins;
		for (int i = 0; i < n; i++)
			if (as[i].extra)
				lm_json_each_regref(as[i].extra, rename_regref,
						    (void *)regs);
	}
	if (in->extra)
		lm_json_each_regref(in->extra, rename_regref, (void *)regs);
	for (int i = 0; i < in->n_loop_regs; i++)
		if (in->loop_regs[i] &&
		    (v = lm_strmap_lookup(regs, in->loop_regs[i])) != NULL)
			lm_inst_set_str(in, &in->loop_regs[i], v);
	each_expr_reg(in, &r);
	for (int i = 0; i < in->n_wait; i++)
		if (in->wait[i].regref &&
		    (v = lm_strmap_lookup(regs, in->wait[i].regref)) != NULL)
			lm_inst_set_str(in, &in->wait[i].regref, v);
}

void lm_inst_rename_tensor_refs(lm_inst *in, const lm_strmap *allocs,
				const lm_strmap *memlocs)
{
	int by_alloc = allocs && allocs->n, by_memloc = memlocs && memlocs->n;
	rename_maps r = { by_alloc ? allocs : NULL,
			  by_memloc ? memlocs : NULL };
	if (!by_alloc && !by_memloc)
		return;
	for (int k = 0; k < 2; k++) {
		lm_arg *as = k ? in->outs : in->ins;
		int n = k ? in->n_outs : in->n_ins;
		for (int i = 0; i < n; i++)
			if (as[i].extra)
				lm_json_each_tensorref(as[i].extra,
						       rename_tensorref, &r);
	}
	/* the operands an indirect move carries (its indices) */
	if (in->extra) {
		cJSON *ii = cJSON_GetObjectItemCaseSensitive(in->extra,
							     "indirection_ins");
		if (ii)
			lm_json_each_tensorref(ii, rename_tensorref, &r);
	}
}

void lm_inst_rename_json_refs(lm_inst *in, const lm_strmap *allocs,
			      const lm_strmap *memlocs)
{
	lm_inst_rename_tensor_refs(in, allocs, memlocs);
	if (allocs && allocs->n)
		lm_inst_rename_registers(in, allocs);
}

static int load_args(ld *L, cJSON *j, const char *key, lm_arg **out, int *n)
{
	if (is_null(j))
		return 0;
	if (want_array(L, j, key))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(j);
	for (int k = 0; k < *n; k++) /* what it replaces */
		lm_arg_clear(&(*out)[k]);
	free(*out);
	*out = cnt ? lm_xcalloc((size_t)cnt, sizeof **out) : NULL;
	*n = cnt;
	int i = 0;
	for (cJSON *e = j->child; e; e = e->next, i++) {
		L->ctx = NULL;
		L->ctx_key = key;
		L->ctx_index = i;
		int rc = load_arg(L, e, &(*out)[i]);
		L->ctx_key = NULL;
		if (rc)
			return rc;
	}
	return 0;
}

/* {"formal": "caller", ...} argument maps of the kernel carriers. */
static int load_kv(ld *L, cJSON *j, const char *key, lm_kv **out, int *n)
{
	if (want_object(L, j, key))
		return LM_EINPUT;
	unique_keys(L, j);
	int cnt = cJSON_GetArraySize(j);
	for (int k = 0; k < *n; k++) { /* what it replaces */
		free((*out)[k].key);
		free((*out)[k].value);
	}
	free(*out);
	*out = cnt ? lm_xcalloc((size_t)cnt, sizeof **out) : NULL;
	*n = 0;
	for (cJSON *e = j->child; e; e = e->next) {
		lm_kv *kv = &(*out)[*n];
		if (get_str(L, e, key, &kv->value))
			return LM_EINPUT;
		kv->key = lm_xstrdup(e->string);
		(*n)++;
	}
	return 0;
}

/* sb_buf_shape [a, b]; psum_buf_shape [a, b, c] or [a, [b, c]]. */
static int load_shape(ld *L, const cJSON *j, const char *key, int64_t *v,
		      int want)
{
	int64_t tmp[3] = {0, 0, 0};
	int n = 0;
	if (!cJSON_IsArray(j))
		return FAIL(L, "key '%s': expected array, got %s", key,
			    type_name(j));
	for (const cJSON *e = j->child; e; e = e->next) {
		if (cJSON_IsArray(e)) {
			for (const cJSON *f = e->child; f; f = f->next) {
				if (n >= want || get_nat(L, f, key, &tmp[n]))
					goto bad;
				n++;
			}
		} else {
			if (n >= want || get_nat(L, e, key, &tmp[n]))
				goto bad;
			n++;
		}
	}
	if (n != want)
		goto bad;
	memcpy(v, tmp, sizeof(int64_t) * (size_t)want);
	return 0;
bad:
	if (L->err->msg[0] && strstr(L->err->msg, "integer"))
		return LM_EINPUT;
	return FAIL(L, "key '%s': expected %d natural numbers", key, want);
}

/* ---- instructions ---------------------------------------------------- */


/*
** A dependency list: each entry a [name, EdgeKind] pair (the kind by name
** or by number), or a bare name (Flow). Kinds are kept only when one is
** not Flow.
*/
static int load_deps(ld *L, cJSON *j, const char *key, char ***names,
		     uint8_t **kinds, int *n)
{
	if (want_array(L, j, key))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(j), i = 0, rc = 0;
	char **v = cnt ? lm_xcalloc((size_t)cnt, sizeof *v) : NULL;
	uint8_t *k = cnt ? lm_xmalloc((size_t)cnt) : NULL;
	int any = 0;
	for (cJSON *e = j->child; e && !rc; e = e->next, i++) {
		cJSON *nm = e, *kd = NULL;
		k[i] = LM_EDGE_FLOW;
		if (cJSON_IsArray(e)) {
			if (cJSON_GetArraySize(e) != 2) {
				rc = FAIL(L, "key '%s': entry %d: expected "
					  "[name, EdgeKind], got an array of %d",
					  key, i, cJSON_GetArraySize(e));
				break;
			}
			nm = e->child;
			kd = e->child->next;
		}
		if (!cJSON_IsString(nm) || !nm->valuestring) {
			rc = FAIL(L, "key '%s': entry %d: expected an instruction "
				  "name, got %s", key, i, type_name(nm));
			break;
		}
		if (kd && cJSON_IsString(kd) && kd->valuestring) {
			int x = lm_edgekind_parse(kd->valuestring);
			if (!x) {
				rc = FAIL(L, "key '%s': entry %d: EdgeKind '%s' "
					  "does not exist (Ordered, Anti, Output, "
					  "Flow)", key, i, kd->valuestring);
				break;
			}
			k[i] = (uint8_t)x;
		} else if (kd && cJSON_IsNumber(kd)) {
			double d = kd->valuedouble;
			if (!(d >= 1 && d < LM_EDGE_COUNT && d == floor(d))) {
				rc = FAIL(L, "key '%s': entry %d: EdgeKind %.17g "
					  "does not exist (1 Ordered .. 4 Flow)",
					  key, i, d);
				break;
			}
			k[i] = (uint8_t)d;
		} else if (kd) {
			rc = FAIL(L, "key '%s': entry %d: EdgeKind: expected "
				  "string, got %s", key, i, type_name(kd));
			break;
		}
		any |= k[i] != LM_EDGE_FLOW;
		v[i] = lm_xstrdup(nm->valuestring);
	}
	if (rc) {
		for (int x = 0; x < cnt; x++)
			free(v[x]);
		free(v);
		free(k);
		return rc;
	}
	if (!any) {
		free(k);
		k = NULL;
	}
	for (int x = 0; x < *n; x++) /* what it replaces */
		free((*names)[x]);
	free(*names);
	free(*kinds);
	*names = v;
	*kinds = k;
	*n = cnt;
	return 0;
}

/*
** One sync_info entry e of list (on_wait / on_update), entry number i,
** into *x. Both spellings: the name form {"semaphore": NAME, "mode",
** "value"} and the id form {"id": N, "mode", "wait_value" |
** "update_value"}; "mode" defaults to sem-ge-imm (a wait) / sem-inc (an
** update); a wait may name its threshold register ("regref", sem-ge-reg)
** and carry its provenance ("from"), an update its target core ("core").
** Any other key is kept with the entry.
*/
static int load_sync_entry(ld *L, cJSON *e, const char *list, int i,
			   int upd, lm_sync *x)
{
	const char *vkey = upd ? "update_value" : "wait_value";
	int type = upd ? LM_ET_UpdateMode : LM_ET_WaitMode, has_id = 0;
	int64_t o;
	memset(x, 0, sizeof *x);
	x->mode = upd ? LM_UPD_SEM_INC : LM_WAIT_SEM_GE_IMM;
	if (!cJSON_IsObject(e))
		return FAIL(L, "key 'sync_info': '%s': expected object entries, "
			    "got %s", list, type_name(e));
	unique_keys(L, e);
	for (cJSON *c = e->child; c; c = c->next) {
		const char *key = c->string ? c->string : "";
		char names[300];
		int rc = 0;
		if (IS("mode")) {
			if (!cJSON_IsString(c) || !c->valuestring)
				return FAIL(L, "key 'sync_info': '%s': key "
					    "'mode': expected string, got %s",
					    list, type_name(c));
			if (lm_enum_parse(type, c->valuestring, &o))
				return FAIL(L, "key 'sync_info': '%s' entry %d: "
					    "unknown %s '%s' (%s)", list, i,
					    lm_enumtype_name(type),
					    c->valuestring, lm_enum_spellings(
						    type, names, sizeof names));
			x->mode = (int)o;
		} else if (IS("semaphore")) {
			rc = get_str(L, c, "semaphore", &x->semaphore);
		} else if (IS("id")) {
			rc = get_nat(L, c, "id", &x->id);
			has_id = 1;
		} else if (IS("value") || !strcmp(key, vkey)) {
			if (x->has_value)
				return FAIL(L, "key 'sync_info': '%s' entry %d: "
					    "both 'value' and '%s'", list, i,
					    vkey);
			rc = get_int(L, c, key, &x->value);
			x->has_value = 1;
		} else if (!upd && IS("regref") && !cJSON_IsNull(c)) {
			rc = get_str(L, c, "regref", &x->regref);
		} else if (!upd && IS("from") && cJSON_IsString(c)) {
			rc = get_str(L, c, "from", &x->from);
		} else if (upd && IS("core")) {
			rc = get_nat(L, c, "core", &x->core);
			x->has_core = 1;
		} else {
			keep_extra(&x->extra, e, c);
		}
		if (rc)
			return rc;
	}
	if (has_id == !!x->semaphore)
		return FAIL(L, "key 'sync_info': '%s' entry %d: %s", list, i,
			    has_id ? "both 'id' and 'semaphore'"
				   : "needs 'semaphore' (a name) or 'id'");
	return 0;
}

/*
** sync_info {"on_wait": [...], "on_update": [...]}: every entry read
** (load_sync_entry) and appended to the instruction's waits / updates;
** the object's other keys are kept (sync_extra).
*/
static int load_sync_info(ld *L, cJSON *j, lm_inst *in)
{
	if (want_object(L, j, "sync_info"))
		return LM_EINPUT;
	unique_keys(L, j);
	for (cJSON *c = j->child; c; c = c->next) {
		int upd = c->string && strcmp(c->string, "on_update") == 0, i = 0;
		lm_sync **v = upd ? &in->update : &in->wait;
		int *n = upd ? &in->n_update : &in->n_wait;
		if (!c->string || (!upd && strcmp(c->string, "on_wait") != 0)) {
			keep_extra(&in->sync_extra, j, c);
			continue;
		}
		if (!cJSON_IsArray(c))
			return FAIL(L, "key 'sync_info': '%s': expected array, "
				    "got %s", c->string, type_name(c));
		*v = lm_xrealloc(*v, (size_t)(*n + cJSON_GetArraySize(c) + 1) *
				 sizeof **v);
		for (cJSON *e = c->child; e; e = e->next, i++) {
			int rc = load_sync_entry(L, e, c->string, i, upd,
						 &(*v)[*n]);
			(*n)++; /* cleared with the instruction, failed or not */
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* ---- documented keys the model carries ----------------------------------
**
** A key of fields.def the loader does not turn into an IR field is checked
** against its row (type, enum spelling, affine form) and then dropped when
** it holds the key's default (the writer writes it back where the row says
** ALWAYS) or kept in `extra` as it is.
*/

static int is_int(const cJSON *v, int nonneg)
{
	double d;
	if (!cJSON_IsNumber(v))
		return 0;
	d = v->valuedouble;
	return d == floor(d) && fabs(d) <= MAX_EXACT_INT && (!nonneg || d >= 0);
}

/* An enum value: its name, or its ordinal as a number. Returns 0 and sets
** *ord (-1: a name not checked here), or -1 when it is not one. */
static int enum_value(const lm_field *f, const cJSON *v, int64_t *ord)
{
	if (cJSON_IsString(v) && v->valuestring)
		return lm_enum_parse(f->enumtype, v->valuestring, ord) ? -1 : 0;
	if (is_int(v, 1) && lm_enum_name(f->enumtype,
					 (int64_t)v->valuedouble)) {
		*ord = (int64_t)v->valuedouble;
		return 0;
	}
	return -1;
}

/* A scalar of a MaybeAffine / plain type: 1 and its value as a double,
** 0 for an affine expression object, -1 for anything else. */
static int scalar_of(lm_fieldtype t, const cJSON *v, double *x)
{
	switch (t) {
	case LM_FT_BOOL:
	case LM_FT_MA_BOOL:
		if (cJSON_IsBool(v)) {
			*x = cJSON_IsTrue(v);
			return 1;
		}
		if (t == LM_FT_MA_BOOL && is_int(v, 1) && v->valuedouble <= 1) {
			*x = v->valuedouble;
			return 1;
		}
		break;
	case LM_FT_INT:
	case LM_FT_MA_INT:
	case LM_FT_UINT:
	case LM_FT_MA_UINT:
		if (is_int(v, t == LM_FT_UINT || t == LM_FT_MA_UINT)) {
			*x = v->valuedouble;
			return 1;
		}
		break;
	case LM_FT_FLOAT:
		if (!lm_json_get_float(v, x))
			return 1;
		break;
	default:
		break;
	}
	if ((t == LM_FT_MA_BOOL || t == LM_FT_MA_INT || t == LM_FT_MA_UINT) &&
	    cJSON_IsObject(v))
		return 0;
	return -1;
}

static const char *const field_shape[LM_FT_COUNT] = {
	[LM_FT_BOOL] = "boolean", [LM_FT_INT] = "integer",
	[LM_FT_UINT] = "non-negative integer", [LM_FT_FLOAT] = "number",
	[LM_FT_STR] = "string", [LM_FT_ENUM] = "enum name",
	[LM_FT_MA_BOOL] = "boolean or affine expression",
	[LM_FT_MA_INT] = "integer or affine expression",
	[LM_FT_MA_UINT] = "non-negative integer or affine expression",
	[LM_FT_MA_INT_PAIR] = "[a, b] of integers or affine expressions",
	[LM_FT_AFFINE] = "affine expression object",
	[LM_FT_APPAIRS] = "array of [step, num]",
	[LM_FT_INT_LIST] = "array of integers",
	[LM_FT_FLOAT_LIST] = "array of numbers",
	[LM_FT_INT_LIST_LIST] = "array of arrays of integers",
	[LM_FT_MA_UINT_LIST] = "array of integers or affine expressions",
	[LM_FT_ENUM_LIST] = "array of enum names",
	[LM_FT_STR_LIST] = "array of strings", [LM_FT_NAME] = "name",
	[LM_FT_NAME_LIST] = "array of names",
	[LM_FT_KV] = "object of names or array of [name, name]",
	[LM_FT_RECORD] = "object", [LM_FT_JSON] = "JSON value",
};

/* Each element of array v passes elem (as a value of type t). */
static int each_elem(const cJSON *v, lm_fieldtype t, const lm_field *f)
{
	int64_t o;
	double x;
	if (!cJSON_IsArray(v))
		return 0;
	for (const cJSON *e = v->child; e; e = e->next)
		switch (t) {
		case LM_FT_ENUM:
			if (enum_value(f, e, &o))
				return 0;
			break;
		case LM_FT_STR:
			if (!cJSON_IsString(e))
				return 0;
			break;
		case LM_FT_INT_LIST:
			if (!each_elem(e, LM_FT_INT, f))
				return 0;
			break;
		default:
			if (scalar_of(t, e, &x) < 0)
				return 0;
			break;
		}
	return 1;
}

/*
** The affine expression objects of a value: v itself when an object, else
** the objects among its elements. Each must read in the module's version
** (else the error is reported, -1); with conv (an owned tree, version 1)
** each is rewritten in place into its version 2 form, what the writer
** writes.
*/
static int each_affine(ld *L, const char *key, cJSON *v, int conv)
{
	char msg[300];
	if (cJSON_IsArray(v)) {
		for (cJSON *e = v->child; e; e = e->next)
			if (cJSON_IsObject(e) && each_affine(L, key, e, conv))
				return -1;
		return 0;
	}
	if (!cJSON_IsObject(v))
		return 0;
	lm_affine *e = NULL;
	if (lm_affine_from_json(&e, v, L->version, msg, sizeof msg)) {
		FAIL(L, "key '%s': affine expression (version %d): %s", key,
		     L->version, msg);
		return -1;
	}
	if (conv && L->version != 2) {
		cJSON *n = lm_affine_to_json(e, 2);
		cJSON_Delete(v->child); /* the whole list of members */
		v->child = n ? n->child : NULL;
		if (n) {
			n->child = NULL;
			cJSON_Delete(n);
		}
	}
	lm_affine_free(e);
	return 0;
}

/* Keep member c of j in the instruction's extra, its affine expressions
** in version 2 form. */
static void keep_affine(ld *L, lm_inst *in, cJSON *j, cJSON *c)
{
	keep_extra(&in->extra, j, c);
	if (L->version != 2) {
		cJSON *k = in->extra->child;
		while (k->next)
			k = k->next;   /* the member just added */
		each_affine(L, c->string, k, 1);
	}
}

/*
** A DynamicForLoop's axis {name, lb, ub, stride}: the compiler's reader
** wants lb, ub and stride (each an affine expression, in the module's
** version); the name, when given, is a string. 0, or -1 with the error.
*/
static int check_dynloop_axis(ld *L, const char *key, const cJSON *v)
{
	static const char *const bounds[] = { "lb", "ub", "stride" };
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(v, "name");
	if (n && !cJSON_IsNull(n) && !cJSON_IsString(n)) {
		FAIL(L, "key '%s': key 'name': expected string, got %s", key,
		     type_name(n));
		return -1;
	}
	for (size_t i = 0; i < sizeof bounds / sizeof *bounds; i++) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(v, bounds[i]);
		if (!b || cJSON_IsNull(b)) {
			FAIL(L, "key '%s': missing key '%s'", key, bounds[i]);
			return -1;
		}
		if (!cJSON_IsObject(b)) {
			FAIL(L, "key '%s': key '%s': expected affine expression "
			     "object, got %s", key, bounds[i], type_name(b));
			return -1;
		}
		if (each_affine(L, bounds[i], (cJSON *)b, 0))
			return -1;
	}
	return 0;
}

/* Check v against row f. 1: it is the default (drop it), 0: keep it,
** -1: error reported. */
static int check_field(ld *L, const lm_field *f, const cJSON *v)
{
	double x = 0;
	int64_t o;
	int ok = 1, dflt = 0;
	switch (f->type) {
	case LM_FT_BOOL: case LM_FT_INT: case LM_FT_UINT: case LM_FT_FLOAT:
	case LM_FT_MA_BOOL: case LM_FT_MA_INT: case LM_FT_MA_UINT: {
		int r = scalar_of(f->type, v, &x);
		ok = r >= 0;
		dflt = r == 1 && x == (double)f->deflt;
		break;
	}
	case LM_FT_ENUM:
		ok = !enum_value(f, v, &o);
		dflt = ok && o == f->deflt;
		break;
	case LM_FT_STR:
	case LM_FT_NAME:
		ok = cJSON_IsString(v);
		break;
	case LM_FT_MA_INT_PAIR:
		ok = cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 &&
		     each_elem(v, LM_FT_MA_INT, f);
		dflt = ok && scalar_of(LM_FT_MA_INT, v->child, &x) == 1 &&
		       x == (double)f->deflt &&
		       scalar_of(LM_FT_MA_INT, v->child->next, &x) == 1 &&
		       x == (double)f->deflt;
		break;
	case LM_FT_AFFINE:
		ok = cJSON_IsObject(v);
		break;
	case LM_FT_APPAIRS:
		ok = cJSON_IsArray(v);
		for (const cJSON *e = ok ? v->child : NULL; e && ok; e = e->next)
			ok = (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 &&
			      each_elem(e, LM_FT_INT, f)) ||
			     (cJSON_IsObject(e) &&
			      is_int(cJSON_GetObjectItemCaseSensitive(e, "step"), 0) &&
			      is_int(cJSON_GetObjectItemCaseSensitive(e, "num"), 0));
		dflt = ok && !v->child;
		break;
	case LM_FT_INT_LIST: case LM_FT_FLOAT_LIST: case LM_FT_MA_UINT_LIST:
	case LM_FT_ENUM_LIST: case LM_FT_STR_LIST: case LM_FT_NAME_LIST:
	case LM_FT_INT_LIST_LIST: {
		static const lm_fieldtype elem[LM_FT_COUNT] = {
			[LM_FT_INT_LIST] = LM_FT_INT,
			[LM_FT_FLOAT_LIST] = LM_FT_FLOAT,
			[LM_FT_MA_UINT_LIST] = LM_FT_MA_UINT,
			[LM_FT_ENUM_LIST] = LM_FT_ENUM,
			[LM_FT_STR_LIST] = LM_FT_STR,
			[LM_FT_NAME_LIST] = LM_FT_STR,
			[LM_FT_INT_LIST_LIST] = LM_FT_INT_LIST,
		};
		ok = each_elem(v, elem[f->type], f);
		dflt = ok && !v->child;
		break;
	}
	case LM_FT_KV:
		ok = cJSON_IsObject(v) || cJSON_IsArray(v);
		dflt = ok && !v->child;
		break;
	case LM_FT_RECORD:
		ok = cJSON_IsObject(v);
		if (ok && !strcmp(f->key, "DynamicForLoopAxis") &&
		    check_dynloop_axis(L, f->key, v))
			return -1;
		break;
	default:
		break;
	}
	if (!ok && (f->type == LM_FT_ENUM || f->type == LM_FT_ENUM_LIST)) {
		char names[400];
		const cJSON *bad = v;
		if (f->type == LM_FT_ENUM_LIST && cJSON_IsArray(v))
			for (bad = v->child; bad && !enum_value(f, bad, &o);
			     bad = bad->next)
				;
		lm_enum_spellings(f->enumtype, names, sizeof names);
		if (bad && cJSON_IsString(bad))
			FAIL(L, "key '%s': unknown %s '%s' (%s)", f->key,
			     lm_enumtype_name(f->enumtype), bad->valuestring,
			     names);
		else if (bad && cJSON_IsNumber(bad))
			FAIL(L, "key '%s': %s %.17g does not exist (%s)", f->key,
			     lm_enumtype_name(f->enumtype), bad->valuedouble,
			     names);
		else
			FAIL(L, "key '%s': expected %s, got %s", f->key,
			     field_shape[f->type], type_name(bad ? bad : v));
		return -1;
	}
	if (!ok) {
		FAIL(L, "key '%s': expected %s, got %s", f->key,
		     field_shape[f->type], type_name(v));
		return -1;
	}
	if ((f->type == LM_FT_MA_BOOL || f->type == LM_FT_MA_INT ||
	     f->type == LM_FT_MA_UINT || f->type == LM_FT_AFFINE ||
	     f->type == LM_FT_MA_INT_PAIR || f->type == LM_FT_MA_UINT_LIST) &&
	    each_affine(L, f->key, (cJSON *)v, 0))
		return -1;
	return dflt;
}

static int load_block(ld *L, cJSON *j, lm_block *b);

/*
** ---- carried structures: their shapes, checked as they are read --------
**
** What the model carries whole but the wire form gives a shape: the
** blocks of a queue, memory-location alias tuples, the module's
** call_to_physical_memlocs (a block's arguments are read into the IR).
** Each is checked here
** (a wrong type or a missing element is an error naming the key) and
** kept as it is; the verifier resolves the names they hold.
*/

/* A queue's carried blocks (an array of blocks): each block reads as a
** function's block does (its instructions loaded into a scratch block,
** then dropped). */
static int check_body(ld *L, const char *key, cJSON *c)
{
	const char *blk = L->blk, *inst = L->inst;
	int rc = 0;
	if (want_array(L, c, key))
		return LM_EINPUT;
	if (c->child && L->version != 2)
		return FAIL(L, "key '%s': a version 1 module's '%s' is not "
			    "converted to version 2 (lncsim reads version 1 "
			    "affine values of op keys and 'order' only)", key,
			    key);
	for (cJSON *e = c->child; e && !rc; e = e->next) {
		lm_block tmp;
		memset(&tmp, 0, sizeof tmp);
		rc = load_block(L, e, &tmp);
		lm_block_clear(&tmp);
	}
	L->blk = blk;
	L->inst = inst;
	return rc;
}

/*
** A memory location's "alias": [destination allocation, destination
** memory location, kind] triples (the set-keyed form) or [destination
** memory location, kind] pairs (the location-keyed one), kind the alias
** kind bits, an integer 0..7 (a boolean reads as 0 or 1).
*/
static int check_alias(ld *L, const char *memloc, const cJSON *v)
{
	int i = 0;
	if (!cJSON_IsArray(v))
		return FAIL(L, "memory location %s: key 'alias': expected an "
			    "array, got %s", memloc, type_name(v));
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		int n = cJSON_GetArraySize(e);
		const cJSON *k;
		if (!cJSON_IsArray(e) || (n != 2 && n != 3))
			return FAIL(L, "memory location %s: key 'alias': entry "
				    "%d: expected [allocation, memory location, "
				    "kind] or [memory location, kind], got %s",
				    memloc, i, cJSON_IsArray(e) ?
				    "another length" : type_name(e));
		for (const cJSON *x = e->child; x->next; x = x->next)
			if (!cJSON_IsString(x))
				return FAIL(L, "memory location %s: key 'alias': "
					    "entry %d: expected a name (string), "
					    "got %s", memloc, i, type_name(x));
		k = cJSON_GetArrayItem(e, n - 1);
		if (!cJSON_IsBool(k) && !(is_int(k, 1) && k->valuedouble <= 7))
			return FAIL(L, "memory location %s: key 'alias': entry "
				    "%d: the kind must be an integer 0..7 (its "
				    "bits), got %s", memloc, i, cJSON_IsNumber(k) ?
				    "another number" : type_name(k));
	}
	return 0;
}

/*
** A block argument's "incoming_values": each entry [value, block] (two
** names), or {"regref": V, "block": B} / {"value": V, "block": B}.
*/
static int load_incoming(ld *L, const cJSON *c, lm_blockarg *a)
{
	int i = 0;
	if (cJSON_IsNull(c))
		return 0;
	if (!cJSON_IsArray(c))
		return FAIL(L, "key 'incoming_values': expected an array of "
			    "[value, block] pairs, got %s", type_name(c));
	a->incoming = lm_xcalloc((size_t)cJSON_GetArraySize(c) + 1,
				 sizeof *a->incoming);
	for (const cJSON *e = c->child; e; e = e->next, i++) {
		lm_incoming *x = &a->incoming[a->n_incoming];
		const cJSON *v = NULL, *blk = NULL;
		if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2) {
			v = e->child;
			blk = e->child->next;
			x->form = LM_IN_PAIR;
		} else if (cJSON_IsObject(e) && cJSON_GetArraySize(e) == 2) {
			blk = cJSON_GetObjectItemCaseSensitive(e, "block");
			if ((v = cJSON_GetObjectItemCaseSensitive(e, "regref")))
				x->form = LM_IN_REGREF;
			else if ((v = cJSON_GetObjectItemCaseSensitive(e,
								       "value")))
				x->form = LM_IN_VALUE;
		}
		if (!cJSON_IsString(v) || !cJSON_IsString(blk))
			return FAIL(L, "key 'incoming_values': entry %d: "
				    "expected [value, block] (two names) or "
				    "{\"regref\": V, \"block\": B}, got %s", i,
				    cJSON_IsArray(e) ? "another array" :
				    cJSON_IsObject(e) ? "another object" :
				    type_name(e));
		x->value = lm_xstrdup(v->valuestring);
		x->block = lm_xstrdup(blk->valuestring);
		a->n_incoming++;
	}
	return 0;
}

/* A block's "arguments": objects with the argument's register ("regref")
** and its incoming values; other keys kept with the argument. */
static int load_block_args(ld *L, cJSON *c, lm_block *b)
{
	if (want_array(L, c, "arguments"))
		return LM_EINPUT;
	b->has_args = 1;
	b->args = lm_xcalloc((size_t)cJSON_GetArraySize(c) + 1,
			     sizeof *b->args);
	for (cJSON *e = c->child; e; e = e->next) {
		lm_blockarg *a = &b->args[b->n_args++];
		if (!cJSON_IsObject(e))
			return FAIL(L, "key 'arguments': expected an object per "
				    "argument, got %s", type_name(e));
		unique_keys(L, e);
		for (cJSON *m = e->child; m; m = m->next) {
			int rc = 0;
			if (m->string && !strcmp(m->string, "regref") &&
			    !cJSON_IsNull(m))
				rc = get_str(L, m, "regref", &a->regref);
			else if (m->string &&
				 !strcmp(m->string, "incoming_values"))
				rc = load_incoming(L, m, a);
			else
				keep_extra(&a->extra, e, m);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
** The module's call_to_physical_memlocs (the memory locations bound as a
** Call's actual arguments): an object of call names, each an array of
** memory location names, or an array of [call, [memory location, ...]]
** pairs.
*/
static int check_call_memlocs(ld *L, const cJSON *v)
{
	static const char key[] = "call_to_physical_memlocs";
	int i = 0;
	if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
		return FAIL(L, "key '%s': expected an object of call names or "
			    "an array of [call, [memory location, ...]] pairs, "
			    "got %s", key, type_name(v));
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		const cJSON *list = e;
		if (cJSON_IsArray(v)) {
			if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 ||
			    !cJSON_IsString(e->child))
				return FAIL(L, "key '%s': entry %d: expected "
					    "[call, [memory location, ...]], got "
					    "%s", key, i, cJSON_IsArray(e) ?
					    "another array" : type_name(e));
			list = e->child->next;
		}
		if (!cJSON_IsArray(list))
			return FAIL(L, "key '%s': entry %d: expected an array of "
				    "memory location names, got %s", key, i,
				    type_name(list));
		for (const cJSON *x = list->child; x; x = x->next)
			if (!cJSON_IsString(x))
				return FAIL(L, "key '%s': entry %d: expected a "
					    "memory location name (string), got "
					    "%s", key, i, type_name(x));
	}
	return 0;
}

/*
** ---- the keys the model reads into the IR ------------------------------
**
** One row per key and the opcodes it is read for (0: every opcode, the
** header): its reader fills the IR field, its view (lm_inst_key_view)
** says what the field holds (NULL: a value is always there, or the key is
** no op key). load_inst looks a key up here first, then in the field
** table (fields.def: checked and carried), and carries any other key;
** then it refuses an instruction without a key its rows require.
*/

typedef struct ik {
	ld *L;
	cJSON *j, *c;      /* the instruction object and the member read */
	lm_inst *in;
	cJSON *sync;       /* sync_info, read after the other keys */
} ik;

typedef int (*ik_read)(ik *k);
/* What the IR holds: 0 for nothing (its unset state), else 1 and *v. */
typedef int (*ik_view)(const lm_inst *in, lm_keyview *v);

typedef struct ir_key {
	const char *key;
	lm_opmask ops;     /* bits 1 << lm_opcode; 0: every opcode */
	ik_read read;
	ik_view view;
} ir_key;

#define OPM(x) LM_OPM(x)
#define OPM_DMA (OPM(DMACOPY) | OPM(LOAD) | OPM(SAVE))
#define OPM_KERNELS (OPM(NKIKERNEL) | OPM(NKIKLIRKERNEL))
/* the opcodes that hold nested blocks (LM_OPF_BLOCKS) */
#define OPM_BLOCKS (OPM(LOOP) | OPM(DYNLOOP) | OPM(DOWHILE) | OPM(DMABLOCK))
/* the opcodes whose queue the IR holds */
#define OPM_QUEUE (OPM_DMA | OPM(INDIRECTLOAD) | OPM(SWITCHQUEUE) | \
		   OPM(RESETQUEUE) | OPM(DMATRIGGER) | OPM(DMABLOCK))
#define KEY (k->c->string)

static int rd_engine(ik *k)
{
	if (!cJSON_IsString(k->c))
		return FAIL(k->L, "key 'engine': expected string, got %s",
			    type_name(k->c));
	if ((int)(k->in->engine = lm_engine_parse(k->c->valuestring)) < 0)
		return FAIL(k->L, "key 'engine': unknown engine '%s'",
			    k->c->valuestring);
	return 0;
}

static int rd_ins(ik *k)
{
	return load_args(k->L, k->c, "ins", &k->in->ins, &k->in->n_ins);
}

static int rd_outs(ik *k)
{
	return load_args(k->L, k->c, "outs", &k->in->outs, &k->in->n_outs);
}

static int rd_deps(ik *k)
{
	k->in->has_dependencies = 1;
	return load_deps(k->L, k->c, KEY, &k->in->deps, &k->in->dep_kind,
			 &k->in->n_deps);
}

static int rd_lc_deps(ik *k)
{
	return load_deps(k->L, k->c, KEY, &k->in->lc_deps,
			 &k->in->lc_dep_kind, &k->in->n_lc_deps);
}

static int rd_origin(ik *k)
{
	if (!cJSON_IsString(k->c))
		return FAIL(k->L, "key 'origin': expected string, got %s",
			    type_name(k->c));
	if ((k->in->origin = lm_origin_parse(k->c->valuestring)) < 0)
		return FAIL(k->L, "key 'origin': unknown NamedObjectOrigin '%s' "
			    "(Internal, Penguin, NKI)", k->c->valuestring);
	return 0;
}

static int rd_engine_id(ik *k)
{
	return get_nat(k->L, k->c, KEY, &k->in->engine_id);
}

static int rd_sched_start(ik *k)
{
	return get_int(k->L, k->c, KEY, &k->in->sched_start);
}

static int rd_sched_end(ik *k)
{
	return get_int(k->L, k->c, KEY, &k->in->sched_end);
}

static int rd_sync(ik *k)
{
	k->sync = k->c;
	return 0;
}

static int rd_optin(ik *k)
{
	char **v = NULL;
	int n = 0, rc = get_str_array(k->L, k->c, KEY, &v, &n);
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	if (!rc)
		keep_extra(&k->in->extra, k->j, k->c);
	return rc;
}

static int rd_order(ik *k)
{
	if (want_array(k->L, k->c, KEY))
		return LM_EINPUT;
	if (each_affine(k->L, KEY, k->c, 0))
		return LM_EINPUT;
	if (cJSON_GetArraySize(k->c))
		keep_affine(k->L, k->in, k->j, k->c);
	return 0;
}

/* unroll_dependencies, indirection_ins, loopnest, predicates */
static int rd_carried_array(ik *k)
{
	if (want_array(k->L, k->c, KEY))
		return LM_EINPUT;
	if (!cJSON_GetArraySize(k->c))
		return 0;
	if (k->L->version != 2)
		return FAIL(k->L, "key '%s': a version 1 module's '%s' is not "
			    "converted to version 2 (lncsim reads version 1 "
			    "affine values of op keys and 'order' only)", KEY,
			    KEY);
	keep_extra(&k->in->extra, k->j, k->c);
	return 0;
}

static int rd_debug(ik *k)
{
	if (want_object(k->L, k->c, KEY))
		return LM_EINPUT;
	keep_extra(&k->in->extra, k->j, k->c);
	return 0;
}

/* legacy: [{"semaphore": S, "value": V}], name-form sem-ge-imm waits */
static int rd_wait(ik *k)
{
	int rc = 0;
	if (want_array(k->L, k->c, "wait"))
		return LM_EINPUT;
	for (cJSON *w = k->c->child; w && !rc; w = w->next) {
		char *sem = NULL;
		int64_t v = 0;
		unique_keys(k->L, w);
		cJSON *s = cJSON_GetObjectItemCaseSensitive(w, "semaphore");
		cJSON *val = cJSON_GetObjectItemCaseSensitive(w, "value");
		if (!cJSON_IsObject(w) || !s || !val)
			rc = FAIL(k->L, "key 'wait': expected "
				  "{\"semaphore\": S, \"value\": V}");
		else if ((rc = get_str(k->L, s, "semaphore", &sem)) == 0 &&
			 (rc = get_nat(k->L, val, "value", &v)) == 0)
			lm_inst_add_wait(k->in, sem, v);
		free(sem);
	}
	return rc;
}

/* legacy: [S, ...], name-form sem-inc updates */
static int rd_signal(ik *k)
{
	char **v = NULL;
	int n = 0, rc = get_str_array(k->L, k->c, "signal", &v, &n);
	for (int i = 0; i < n; i++) {
		if (!rc)
			lm_inst_add_signal(k->in, v[i]);
		free(v[i]);
	}
	free(v);
	return rc;
}

static int rd_can_read_uninit(ik *k)
{
	k->in->has_can_read_uninit = 1;
	return get_bool(k->L, k->c, KEY, &k->in->can_read_uninit);
}

static int rd_queue(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->queue);
}

static int rd_instance(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->instance_name);
}

static int rd_target(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->target);
}

/* bit 0: start (zero, then write), bit 1: stop; others kept apart */
static int rd_acc_flag(ik *k)
{
	int64_t fl;
	if (get_nat(k->L, k->c, KEY, &fl))
		return LM_EINPUT;
	if (fl > 255)
		return FAIL(k->L, "key 'accumulation_flag': %lld does not fit "
			    "its 8 bits", (long long)fl);
	k->in->start_tensor_calc = (int)(fl & 1);
	k->in->stop_tensor_calc = (int)(fl >> 1 & 1);
	k->in->has_stop_tensor_calc = 1;
	k->in->acc_flag_rest = (int)(fl & ~3);
	return 0;
}

static int rd_psum_zero(ik *k)
{
	return get_nat(k->L, k->c, KEY, &k->in->psum_zero_region);
}

static int rd_start(ik *k)
{
	return get_bool(k->L, k->c, KEY, &k->in->start_tensor_calc);
}

static int rd_stop(ik *k)
{
	k->in->has_stop_tensor_calc = 1;
	return get_bool(k->L, k->c, KEY, &k->in->stop_tensor_calc);
}

static int rd_is_transpose(ik *k)
{
	k->in->has_is_transpose = 1;
	return get_bool(k->L, k->c, KEY, &k->in->is_transpose);
}

static int rd_act_func(ik *k)
{
	if (!cJSON_IsString(k->c))
		return FAIL(k->L, "key 'func': expected string, got %s",
			    type_name(k->c));
	if (!(k->in->act_func = lm_actfunc_parse(k->c->valuestring)))
		return FAIL(k->L, "key 'func': unknown activation function '%s'",
			    k->c->valuestring);
	return 0;
}

static int rd_scale(ik *k)
{
	k->in->has_scale = 1;
	return get_float(k->L, k->c, KEY, &k->in->scale);
}

static int rd_alpha(ik *k)
{
	k->in->has_alpha = 1;
	return get_float(k->L, k->c, KEY, &k->in->alpha);
}

static int rd_alu(ik *k)     /* TensorTensor op, AffineSelect compare_op */
{
	return get_alu(k->L, k->c, KEY, &k->in->alu);
}

static int rd_alu0(ik *k)
{
	return get_alu(k->L, k->c, KEY, &k->in->alu0);
}

static int rd_alu1(ik *k)
{
	return get_alu(k->L, k->c, KEY, &k->in->alu1);
}

static int rd_const0(ik *k)
{
	k->in->has_const0 = 1;
	return get_float(k->L, k->c, KEY, &k->in->const0);
}

static int rd_const1(ik *k)
{
	k->in->has_const1 = 1;
	return get_float(k->L, k->c, KEY, &k->in->const1);
}

/* A MaybeAffine<bool> held as a constant: true / false, or 0 / 1 (an
** affine value never reaches a reader: it is carried). */
static int get_ma_bool(ld *L, const cJSON *j, const char *key, int *out)
{
	if (cJSON_IsNumber(j) && (j->valuedouble == 0 || j->valuedouble == 1)) {
		*out = j->valuedouble == 1;
		return 0;
	}
	if (!cJSON_IsBool(j))
		return FAIL(L, "key '%s': expected boolean or affine "
			    "expression, got %s", key, type_name(j));
	*out = cJSON_IsTrue(j) ? 1 : 0;
	return 0;
}

static int rd_weight_onezero(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->is_weight_onezero);
}

static int rd_fmap_onezero(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->is_fmap_onezero);
}

static int rd_reverse0(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->reverse0);
}

static int rd_reverse1(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->reverse1);
}

static int rd_is_stt(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->is_scalar_tensor_tensor);
}

static int rd_is_tts(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->is_tensor_tensor_scan);
}

static int rd_reverse_pred(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->reverse_pred);
}

static int rd_reduce_axis(ik *k)
{
	int64_t o;
	if (get_enum_ord(k->L, k->c, KEY, LM_ET_AxisListType, &o))
		return LM_EINPUT;
	k->in->reduce_axis = (int)o;
	return 0;
}

static int rd_negate(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->negate);
}

static int rd_apply_transpose(ik *k)
{
	return get_ma_bool(k->L, k->c, KEY, &k->in->apply_transpose);
}

/* Activation acc, Exponential reduce_cmd: an EngineAccumulationType. */
static int rd_eng_acc(ik *k)
{
	int64_t o;
	if (get_enum_ord(k->L, k->c, KEY, LM_ET_EngineAccumulationType, &o))
		return LM_EINPUT;
	k->in->eng_acc = (int)o;
	return 0;
}

static int rd_reduce_alu(ik *k)   /* Activation reduce_op */
{
	return get_alu(k->L, k->c, KEY, &k->in->reduce_alu);
}

static int rd_memset_mode(ik *k)
{
	int64_t o;
	if (get_str(k->L, k->c, KEY, &k->in->memset_mode))
		return LM_EINPUT;
	if (lm_enum_parse(LM_ET_MemsetMode, k->in->memset_mode, &o)) {
		char names[100];
		return FAIL(k->L, "key 'mode': unknown MemsetMode '%s' (%s)",
			    k->in->memset_mode, lm_enum_spellings(
				    LM_ET_MemsetMode, names, sizeof names));
	}
	return 0;
}

static int rd_constant(ik *k)
{
	k->in->has_constant = 1;
	return get_int(k->L, k->c, KEY, &k->in->constant);
}

static int rd_value(ik *k)   /* Memset's float value (an extension) */
{
	k->in->has_value = 1;
	return get_float(k->L, k->c, KEY, &k->in->value);
}

static int rd_base(ik *k)
{
	k->in->has_base = 1;
	return get_int(k->L, k->c, KEY, &k->in->base);
}

static int rd_chmul(ik *k)
{
	k->in->has_channel_multiplier = 1;
	return get_int(k->L, k->c, KEY, &k->in->channel_multiplier);
}

static int rd_pattern(ik *k)
{
	return get_appairs(k->L, k->c, KEY, &k->in->pattern, &k->in->n_pattern,
			   &k->in->pattern_as_objects);
}

static int rd_fill_value(ik *k)
{
	k->in->has_fill_value = 1;
	return get_float(k->L, k->c, KEY, &k->in->fill_value);
}

static int rd_barrier_id(ik *k)
{
	return get_nat(k->L, k->c, KEY, &k->in->barrier_id);
}

static int rd_cores(ik *k)
{
	return get_int_array(k->L, k->c, KEY, 1, &k->in->cores,
			     &k->in->n_cores);
}

static int rd_group(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->group);
}

static int rd_renumber(ik *k)
{
	k->in->has_renumber = 1;
	return get_bool(k->L, k->c, KEY, &k->in->renumber);
}

static int rd_kernel_format(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->kernel_format);
}

static int rd_klir_binary(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->klir_binary);
}

static int rd_nki_func(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->func);
}

static int rd_kernel_source(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->kernel_source);
}

static int rd_func_args(ik *k)
{
	return load_kv(k->L, k->c, KEY, &k->in->func_args,
		       &k->in->n_func_args);
}

static int rd_func_outs(ik *k)
{
	return load_kv(k->L, k->c, KEY, &k->in->func_outs,
		       &k->in->n_func_outs);
}

static int rd_sb_buf(ik *k)
{
	k->in->has_sb_buf_shape = 1;
	return load_shape(k->L, k->c, KEY, k->in->sb_buf_shape, 2);
}

static int rd_psum_buf(ik *k)
{
	k->in->has_psum_buf_shape = 1;
	return load_shape(k->L, k->c, KEY, k->in->psum_buf_shape, 3);
}

/* The nested body of an opcode with blocks (Loop, DynamicForLoop,
** DoWhile, DMABlock), read as a function's blocks are. */
static int rd_blocks(ik *k)
{
	lm_inst *in = k->in;
	int rc = 0;
	if (want_array(k->L, k->c, KEY))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(k->c);
	in->blocks = cnt ? lm_xcalloc((size_t)cnt, sizeof *in->blocks) : NULL;
	const char *saved = k->L->blk;
	for (cJSON *b = k->c->child; b && !rc; b = b->next)
		rc = load_block(k->L, b, &in->blocks[in->n_blocks++]);
	k->L->blk = saved;
	return rc;
}

/*
** A Loop's LoopAxis {name, lb, ub, stride}: lb, ub and stride integers
** ("LoopAxis.ub: expected an integer, got 2.5"), the name a string; any
** other key is kept with the axis.
*/
static int rd_loop_axis(ik *k)
{
	static const char *const bound[] = { "lb", "ub", "stride" };
	lm_axis *a = &k->in->axis;
	int64_t *val[3] = { &a->lb, &a->ub, &a->stride };
	int seen = 0;
	if (want_object(k->L, k->c, KEY))
		return LM_EINPUT;
	unique_keys(k->L, k->c);
	for (cJSON *m = k->c->child; m; m = m->next) {
		int b = -1;
		for (int i = 0; i < 3; i++)
			if (m->string && !strcmp(m->string, bound[i]))
				b = i;
		if (m->string && !strcmp(m->string, "name")) {
			if (cJSON_IsNull(m))
				continue;
			if (!cJSON_IsString(m))
				return FAIL(k->L, "LoopAxis.name: expected "
					    "string, got %s", type_name(m));
			free(a->name);
			a->name = lm_xstrdup(m->valuestring);
		} else if (b >= 0) {
			if (!is_int(m, 0)) {
				if (cJSON_IsNumber(m))
					return FAIL(k->L, "LoopAxis.%s: expected "
						    "an integer, got %.17g",
						    bound[b], m->valuedouble);
				return FAIL(k->L, "LoopAxis.%s: expected an "
					    "integer, got %s", bound[b],
					    type_name(m));
			}
			*val[b] = (int64_t)m->valuedouble;
			seen |= 1 << b;
		} else {
			keep_extra(&a->extra, k->c, m);
		}
	}
	for (int i = 0; i < 3; i++)
		if (!(seen & 1 << i))
			return FAIL(k->L, "LoopAxis: missing key '%s'", bound[i]);
	k->in->has_axis = 1;
	return 0;
}

/* An affine expression j (a bound, a cond) of key into *out. */
static int get_affine(ld *L, const cJSON *j, const char *key,
		      lm_affine **out)
{
	char msg[300];
	lm_affine *e = NULL;
	if (lm_affine_from_json(&e, j, L->version, msg, sizeof msg))
		return FAIL(L, "key '%s': affine expression (version %d): %s",
			    key, L->version, msg);
	lm_affine_free(*out);
	*out = e;
	return 0;
}

/* A DynamicForLoop's DynamicForLoopAxis {name, lb, ub, stride}: three
** affine expressions (check_dynloop_axis) and a name. */
static int rd_dynloop_axis(ik *k)
{
	lm_axis *a = &k->in->axis;
	if (want_object(k->L, k->c, KEY))
		return LM_EINPUT;
	unique_keys(k->L, k->c);
	if (check_dynloop_axis(k->L, KEY, k->c))
		return LM_EINPUT;
	for (cJSON *m = k->c->child; m; m = m->next) {
		const char *key = m->string ? m->string : "";
		int rc = 0;
		if (IS("name")) {
			if (cJSON_IsString(m)) {
				free(a->name);
				a->name = lm_xstrdup(m->valuestring);
			}
		} else if (IS("lb")) {
			rc = get_affine(k->L, m, key, &a->lb_e);
		} else if (IS("ub")) {
			rc = get_affine(k->L, m, key, &a->ub_e);
		} else if (IS("stride")) {
			rc = get_affine(k->L, m, key, &a->stride_e);
		} else {
			keep_extra(&a->extra, k->c, m);
		}
		if (rc)
			return rc;
	}
	k->in->has_axis = 1;
	return 0;
}

static int rd_loop_regs(ik *k)
{
	return get_str_array(k->L, k->c, KEY, &k->in->loop_regs,
			     &k->in->n_loop_regs);
}

/* DoWhile cond: an affine expression is read; any other form (a block
** name) is carried as it is. */
static int rd_cond(ik *k)
{
	if (cJSON_IsObject(k->c))
		return get_affine(k->L, k->c, KEY, &k->in->cond);
	keep_extra(&k->in->extra, k->j, k->c);
	return 0;
}

static int rd_comp_op(ik *k)
{
	int64_t o;
	if (get_enum_ord(k->L, k->c, KEY, LM_ET_BranchCompareOp, &o))
		return LM_EINPUT;
	k->in->comp_op = (int)o;
	return 0;
}

static int rd_on_true(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->on_true);
}

static int rd_on_false(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->on_false);
}

static int rd_branch_target(ik *k)
{
	return get_str(k->L, k->c, KEY, &k->in->branch_target);
}

static int rd_reg_alu(ik *k)
{
	int64_t o;
	if (get_enum_ord(k->L, k->c, KEY, LM_ET_AluOpType, &o))
		return LM_EINPUT;
	k->in->reg_alu = (int)o;
	return 0;
}

static int rd_is_64bit(ik *k)
{
	return get_bool(k->L, k->c, KEY, &k->in->is_64bit);
}

static int rd_sema_group(ik *k)
{
	return get_int_array(k->L, k->c, KEY, 1, &k->in->sema_group,
			     &k->in->n_sema_group);
}

static int rd_dma_blocks(ik *k)
{
	return get_str_array(k->L, k->c, KEY, &k->in->dma_blocks,
			     &k->in->n_dma_blocks);
}

/* ---- what the IR holds for a key (the views of the rows) ---------------- */

static int view_name(const char *s, lm_keyview *v)
{
	v->name = s;
	return s && *s;
}

static int view_str(const char *s, lm_keyview *v)
{
	v->name = s;
	return s != NULL;
}

static int vw_queue(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->queue, v);
}

static int vw_instance(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->instance_name, v);
}

static int vw_target(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->target, v);
}

static int vw_nki_func(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->func, v);
}

static int vw_klir_binary(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->klir_binary, v);
}

static int vw_kernel_format(const lm_inst *in, lm_keyview *v)
{
	return view_str(in->kernel_format, v);
}

static int vw_act_func(const lm_inst *in, lm_keyview *v)
{
	(void)v;
	return in->act_func != LM_ACT_INVALID;
}

static int vw_alu(const lm_inst *in, lm_keyview *v)
{
	(void)v;
	return in->alu != LM_ALU_INVALID;
}

static int vw_alu0(const lm_inst *in, lm_keyview *v)
{
	(void)v;
	return in->alu0 != LM_ALU_INVALID;
}

static int vw_alu1(const lm_inst *in, lm_keyview *v)
{
	(void)v;
	return in->alu1 != LM_ALU_INVALID;
}

static int vw_axis(const lm_inst *in, lm_keyview *v)
{
	(void)v;
	return in->has_axis;
}

static int vw_loop_regs(const lm_inst *in, lm_keyview *v)
{
	v->names = in->loop_regs;
	v->n_names = in->n_loop_regs;
	return 1;
}

static int vw_cond(const lm_inst *in, lm_keyview *v)
{
	(void)v;
	return in->cond != NULL;
}

static int vw_on_true(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->on_true, v);
}

static int vw_on_false(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->on_false, v);
}

static int vw_branch_target(const lm_inst *in, lm_keyview *v)
{
	return view_name(in->branch_target, v);
}

static int vw_dma_blocks(const lm_inst *in, lm_keyview *v)
{
	v->names = in->dma_blocks;
	v->n_names = in->n_dma_blocks;
	return 1;
}

static int vw_func_args(const lm_inst *in, lm_keyview *v)
{
	v->kv = in->func_args;
	v->n_kv = in->n_func_args;
	return 1;
}

static int vw_func_outs(const lm_inst *in, lm_keyview *v)
{
	v->kv = in->func_outs;
	v->n_kv = in->n_func_outs;
	return 1;
}

/* Sorted by key (ir_key_find's binary search; ir_key_rows checks it). */
static const ir_key ir_keys[] = {
	{ "DynamicForLoopAxis", OPM(DYNLOOP), rd_dynloop_axis, vw_axis },
	{ "LoopAxis", OPM(LOOP), rd_loop_axis, vw_axis },
	{ "acc", OPM(ACTIVATION), rd_eng_acc, NULL },
	{ "accumulation_flag", OPM(MATMULT), rd_acc_flag, NULL },
	{ "alpha", OPM(ACTIVATION), rd_alpha, NULL },
	{ "apply_transpose", OPM(TENSORREDUCE) | OPM(BNSTATS),
	  rd_apply_transpose, NULL },
	{ "axis", OPM(TENSORREDUCE), rd_reduce_axis, NULL },
	{ "base", OPM(IOTA) | OPM(AFFINESELECT), rd_base, NULL },
	{ "blocks", OPM_BLOCKS, rd_blocks, NULL },
	{ "can_read_uninit", 0, rd_can_read_uninit, NULL },
	{ "channel_multiplier", OPM(IOTA) | OPM(AFFINESELECT), rd_chmul, NULL },
	{ "comp_op", OPM(CMPBRANCH), rd_comp_op, NULL },
	{ "compare_op", OPM(AFFINESELECT), rd_alu, vw_alu },
	{ "compare_op0", OPM(RANGESELECT), rd_alu0, vw_alu0 },
	{ "compare_op1", OPM(RANGESELECT), rd_alu1, vw_alu1 },
	{ "cond", OPM(DOWHILE), rd_cond, vw_cond },
	{ "const0", OPM(TENSORSCALAR), rd_const0, NULL },
	{ "const1", OPM(TENSORSCALAR), rd_const1, NULL },
	{ "constant", OPM(MEMSET), rd_constant, NULL },
	{ "cores", OPM(COREBARRIER), rd_cores, NULL },
	{ "debug", 0, rd_debug, NULL },
	{ "dependencies", 0, rd_deps, NULL },
	{ "dma_blocks", OPM(DMATRIGGER), rd_dma_blocks, vw_dma_blocks },
	{ "engine", 0, rd_engine, NULL },
	{ "engine_id", 0, rd_engine_id, NULL },
	{ "fill_value", OPM(AFFINESELECT) | OPM(RANGESELECT), rd_fill_value,
	  NULL },
	{ "func", OPM(ACTIVATION), rd_act_func, vw_act_func },
	{ "func", OPM(NKIKERNEL), rd_nki_func, vw_nki_func },
	{ "func_args", OPM_KERNELS, rd_func_args, vw_func_args },
	{ "func_outs", OPM_KERNELS, rd_func_outs, vw_func_outs },
	{ "group", OPM(COREBARRIER), rd_group, NULL },
	{ "id", OPM(COREBARRIER), rd_barrier_id, NULL },
	{ "imm_value", OPM(MATCHREPLACE) | OPM(MIMR), rd_fill_value, NULL },
	{ "indirection_ins", 0, rd_carried_array, NULL },
	{ "ins", 0, rd_ins, NULL },
	{ "instance", OPM(SWITCHQUEUE) | OPM(RESETQUEUE), rd_instance,
	  vw_instance },
	{ "instance_name", OPM(SWITCHQUEUE), rd_instance, NULL },
	{ "is_64bit", OPM(REGALU), rd_is_64bit, NULL },
	{ "is_fmap_onezero", OPM(MATMULT), rd_fmap_onezero, NULL },
	{ "is_scalar_tensor_tensor", OPM(TSPTR), rd_is_stt, NULL },
	{ "is_tensor_tensor_scan", OPM(TSPTR), rd_is_tts, NULL },
	{ "is_transpose", OPM(MATMULT), rd_is_transpose, NULL },
	{ "is_weight_onezero", OPM(MATMULT), rd_weight_onezero, NULL },
	{ "kernel_format", OPM(NKIKLIRKERNEL), rd_kernel_format,
	  vw_kernel_format },
	{ "kernel_source", OPM(NKIKERNEL), rd_kernel_source, NULL },
	{ "klir_binary", OPM(NKIKLIRKERNEL), rd_klir_binary, vw_klir_binary },
	{ "loop_carried_dependencies", 0, rd_lc_deps, NULL },
	{ "loopnest", 0, rd_carried_array, NULL },
	{ "mode", OPM(MEMSET), rd_memset_mode, NULL },
	{ "negate", OPM(TENSORREDUCE), rd_negate, NULL },
	{ "on_false", OPM(CMPBRANCH), rd_on_false, vw_on_false },
	{ "on_true", OPM(CMPBRANCH), rd_on_true, vw_on_true },
	{ "op", OPM(TENSORTENSOR) | OPM(TENSORREDUCE), rd_alu, vw_alu },
	{ "op", OPM(REGALU), rd_reg_alu, NULL },
	{ "op0", OPM(TENSORSCALAR) | OPM(TSPTR), rd_alu0, vw_alu0 },
	{ "op1", OPM(TENSORSCALAR) | OPM(TSPTR), rd_alu1, vw_alu1 },
	{ "optin_passes", 0, rd_optin, NULL },
	{ "order", 0, rd_order, NULL },
	{ "origin", 0, rd_origin, NULL },
	{ "outs", 0, rd_outs, NULL },
	{ "pattern", OPM(IOTA) | OPM(AFFINESELECT), rd_pattern, NULL },
	{ "predicates", 0, rd_carried_array, NULL },
	{ "psum_buf_shape", OPM_KERNELS, rd_psum_buf, NULL },
	{ "psum_zero_region", OPM(MATMULT), rd_psum_zero, NULL },
	{ "queue", OPM_QUEUE, rd_queue, vw_queue },
	{ "reduce_cmd", OPM(EXPONENTIAL), rd_eng_acc, NULL },
	{ "reduce_op", OPM(ACTIVATION), rd_reduce_alu, NULL },
	{ "registers", OPM(LOOP), rd_loop_regs, vw_loop_regs },
	{ "renumber", OPM(COREBARRIER), rd_renumber, NULL },
	{ "reverse0", OPM(TENSORSCALAR) | OPM(TSPTR), rd_reverse0, NULL },
	{ "reverse1", OPM(TENSORSCALAR) | OPM(TSPTR), rd_reverse1, NULL },
	{ "reverse_pred", OPM(COPYPRED), rd_reverse_pred, NULL },
	{ "sb_buf_shape", OPM_KERNELS, rd_sb_buf, NULL },
	{ "scale", OPM(ACTIVATION), rd_scale, NULL },
	{ "scheduled_end", 0, rd_sched_end, NULL },
	{ "scheduled_start", 0, rd_sched_start, NULL },
	{ "sema_group", OPM(GROUPRESET), rd_sema_group, NULL },
	{ "signal", 0, rd_signal, NULL },
	{ "start_tensor_calc", OPM(MATMULT), rd_start, NULL },
	{ "stop_tensor_calc", OPM(MATMULT), rd_stop, NULL },
	{ "sync_info", 0, rd_sync, NULL },
	{ "target", OPM(CALL), rd_target, vw_target },
	{ "target", OPM(UBRANCH), rd_branch_target, vw_branch_target },
	{ "unroll_dependencies", 0, rd_carried_array, NULL },
	{ "value", OPM(MEMSET), rd_value, NULL },
	{ "wait", 0, rd_wait, NULL },
};
enum { N_IR_KEYS = sizeof ir_keys / sizeof *ir_keys };

/* The legacy spellings that stand for a required key, where the model
** reads them (an ir_keys row for the opcode). */
static const struct {
	const char *key, *legacy;
} req_legacy[] = {
	{ "accumulation_flag", "start_tensor_calc" },
	{ "accumulation_flag", "stop_tensor_calc" },
	{ "constant", "value" },
	{ "instance", "instance_name" },
};

/* The rows whose keys start with byte b: [ir_first[b], ir_first[b + 1])
** (built once; the rows are sorted). */
static unsigned char ir_first[257];
static pthread_once_t ir_first_once = PTHREAD_ONCE_INIT;

static void ir_first_build(void)
{
	int r = 0;
	for (int b = 0; b <= 256; b++) {
		while (r < N_IR_KEYS &&
		    (unsigned char)ir_keys[r].key[0] < (unsigned)b)
			r++;
		ir_first[b] = (unsigned char)r;
	}
}

typedef char ir_rows_fit_index[N_IR_KEYS < 256 ? 1 : -1];

/* The row of key for opcode op (-1: none). */
static int ir_key_find(const char *key, lm_opcode op)
{
	unsigned char b = (unsigned char)key[0];
	int lo, hi;
	pthread_once(&ir_first_once, ir_first_build);
	lo = ir_first[b];
	hi = ir_first[b + 1] - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(ir_keys[mid].key, key);
		if (c < 0) {
			lo = mid + 1;
		} else if (c > 0) {
			hi = mid - 1;
		} else {
			while (mid > 0 && !strcmp(ir_keys[mid - 1].key, key))
				mid--;
			for (; mid < N_IR_KEYS && !strcmp(ir_keys[mid].key, key);
			     mid++)
				if (!ir_keys[mid].ops ||
				    (ir_keys[mid].ops & ((lm_opmask)1 << op)))
					return mid;
			return -1;
		}
	}
	return -1;
}

int lm_inst_key_view(const lm_inst *in, const lm_field *f, lm_keyview *v)
{
	const cJSON *x = in->extra ?
		cJSON_GetObjectItemCaseSensitive(in->extra, f->key) : NULL;
	int r = in->op > LM_OP_INVALID && in->op < LM_OP_COUNT ?
		ir_key_find(f->key, in->op) : -1;
	memset(v, 0, sizeof *v);
	if (x && !cJSON_IsNull(x)) {
		v->json = x; /* carried: what the IR does not hold */
		return 1;
	}
	if (r < 0)
		return 0;
	return !ir_keys[r].view || ir_keys[r].view(in, v) ? 1 : -1;
}

int lm_json_ir_keys_sorted(void)
{
	for (int i = 1; i < N_IR_KEYS; i++)
		if (strcmp(ir_keys[i - 1].key, ir_keys[i].key) > 0)
			return 0;
	return 1;
}

/* j has member key, not null (a null is an absent value). */
static int has_member(const cJSON *j, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
	return x && !cJSON_IsNull(x);
}

/*
** Every key the rows of InstructionType it require (REQ; NEED on an
** opcode the model reads into the IR) is in instruction object j, or a
** legacy spelling of it the model reads for the opcode: "OPCODE: missing
** key 'k'" otherwise.
*/
static int check_required(ld *L, const cJSON *j, const lm_inst *in, int it,
			  const char *opcode)
{
	const lm_opinfo *o = lm_op_info(it);
	for (int i = 0; o && i < o->n_fields; i++) {
		const lm_field *f = o->fields[i];
		int found;
		if (!lm_field_required(f, in->op != LM_OP_OTHER))
			continue;
		found = has_member(j, f->key);
		for (size_t l = 0; !found &&
		     l < sizeof req_legacy / sizeof *req_legacy; l++)
			found = !strcmp(req_legacy[l].key, f->key) &&
				ir_key_find(req_legacy[l].legacy, in->op) >= 0 &&
				has_member(j, req_legacy[l].legacy);
		if (!found)
			return FAIL(L, "%s: missing key '%s'", opcode, f->key);
	}
	return 0;
}

/* Fields of one instruction (or Loop). */
static int load_inst(ld *L, cJSON *j, lm_inst *in)
{
	if (!cJSON_IsObject(j))
		return FAIL(L, "expected instruction object, got %s", type_name(j));
	unique_keys(L, j);
	cJSON *op = cJSON_GetObjectItemCaseSensitive(j, "opcode");
	if (!cJSON_IsString(op))
		return FAIL(L, "instruction: key 'opcode': expected string, got %s",
			    type_name(op));
	lm_b_init_inst(in, lm_opcode_parse(op->valuestring), LM_ENG_UNASSIGNED,
		       NULL);
	cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
	if (in->op == LM_OP_LOOP) {
		if (nm && get_str(L, nm, "name", &in->name))
			return LM_EINPUT;
	} else {
		if (!nm)
			return FAIL(L, "%s instruction: missing key 'name'",
				    op->valuestring);
		if (get_str(L, nm, "name", &in->name))
			return LM_EINPUT;
		L->inst = in->name;
	}
	if (in->op == LM_OP_INVALID)
		return FAIL(L, "unknown opcode '%s'", op->valuestring);
	if (in->op == LM_OP_OTHER)
		in->opcode_str = lm_xstrdup(op->valuestring);

	ik k = { L, j, NULL, in, NULL };
	int it = lm_it_parse(op->valuestring);
	for (cJSON *c = j->child; c; c = c->next) {
		const char *key = c->string;
		const lm_field *f = NULL;
		int r, rc;
		if (IS("opcode") || IS("name"))
			continue;
		if (cJSON_IsObject(c) && (f = lm_op_field(it, key)) != NULL &&
		    (f->type == LM_FT_MA_BOOL || f->type == LM_FT_MA_INT ||
		     f->type == LM_FT_MA_UINT)) {
			/* an affine value of a MaybeAffine key: carried as it
			   is (the model holds constants); the simulator refuses
			   it */
			if (each_affine(L, key, c, 0))
				return LM_EINPUT;
			keep_affine(L, in, j, c);
			continue;
		}
		if (is_null(c) && !IS("ins") && !IS("outs")) {
			/* Lean writes null for an absent Option: keep it as is */
			keep_extra(&in->extra, j, c);
			continue;
		}
		if ((r = ir_key_find(key, in->op)) >= 0) {
			k.c = c;
			if ((rc = ir_keys[r].read(&k)) != 0)
				return rc;
		} else if (f || (f = lm_op_field(it, key)) != NULL) {
			/* a documented key the model does not interpret:
			   checked, dropped at its default, else carried */
			int d = check_field(L, f, c);
			if (d < 0)
				return LM_EINPUT;
			if (!d && (f->type == LM_FT_MA_BOOL ||
				   f->type == LM_FT_MA_INT ||
				   f->type == LM_FT_MA_UINT ||
				   f->type == LM_FT_AFFINE ||
				   f->type == LM_FT_MA_INT_PAIR ||
				   f->type == LM_FT_MA_UINT_LIST))
				keep_affine(L, in, j, c);
			else if (!d)
				keep_extra(&in->extra, j, c);
		} else {
			keep_extra(&in->extra, j, c);
		}
	}
	if (k.sync) {
		int rc = load_sync_info(L, k.sync, in);
		if (rc)
			return rc;
	}
	L->inst = in->name; /* a Loop's body has moved it; may be NULL */
	return check_required(L, j, in, it, op->valuestring);
}

/* A Block: {"name", "instructions": [...]} */
static int load_block(ld *L, cJSON *j, lm_block *b)
{
	if (!cJSON_IsObject(j))
		return FAIL(L, "expected block object, got %s", type_name(j));
	unique_keys(L, j);
	cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
	cJSON *insts = cJSON_GetObjectItemCaseSensitive(j, "instructions");
	if (!nm)
		return FAIL(L, "block: missing key 'name'");
	if (get_str(L, nm, "name", &b->name))
		return LM_EINPUT;
	L->blk = b->name;
	L->inst = NULL;
	if (!insts)
		return FAIL(L, "missing key 'instructions'");
	if (want_array(L, insts, "instructions"))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(insts);
	b->insts = cnt ? lm_xcalloc((size_t)cnt, sizeof *b->insts) : NULL;
	for (cJSON *e = insts->child; e; e = e->next) {
		int rc = load_inst(L, e, &b->insts[b->n_insts++]);
		L->inst = NULL;
		if (rc)
			return rc;
	}
	L->inst = NULL;
	for (cJSON *c = j->child, *next; c; c = next) {
		next = c->next;
		if (c == nm || c == insts)
			continue;
		if (!strcmp(c->string ? c->string : "", "arguments") &&
		    !is_null(c)) {
			if (load_block_args(L, c, b))
				return LM_EINPUT;
			continue;
		}
		keep_extra(&b->extra, j, c);
	}
	return 0;
}

/* ---- allocations ----------------------------------------------------- */

/*
** remote_local_target {"name": ALLOCATION, "core": C} of allocation a.
** The compiler writes it on the view's memory location, lncsim on the
** allocation; either place sets the allocation's view, and a second one
** must name the same producer.
*/
static int get_remote(ld *L, cJSON *c, lm_alloc *a)
{
	char *name = NULL;
	int64_t core = 0;
	unique_keys(L, c);
	cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "name");
	cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "core");
	if (!cJSON_IsObject(c) || !n || !k)
		return FAIL(L, "key 'remote_local_target': expected "
			    "{\"name\": ALLOCATION, \"core\": C}");
	if (get_str(L, n, "remote_local_target.name", &name) ||
	    get_nat(L, k, "remote_local_target.core", &core)) {
		free(name);
		return LM_EINPUT;
	}
	if (a->has_remote && (strcmp(a->remote_name, name) != 0 ||
			      a->remote_core != core)) {
		int rc = FAIL(L, "key 'remote_local_target': '%s' of core "
			      "%lld, but the view already names '%s' of core "
			      "%lld", name, (long long)core, a->remote_name,
			      (long long)a->remote_core);
		free(name);
		return rc;
	}
	free(a->remote_name);
	a->remote_name = name;
	a->remote_core = core;
	a->has_remote = 1;
	return 0;
}

/* An enum value by name or by number: its canonical name into *out. */
static int get_enum_name(ld *L, const cJSON *c, const char *key, int type,
			 char **out)
{
	int64_t o;
	const char *nm = NULL;
	char names[300];
	if (cJSON_IsString(c) && c->valuestring &&
	    !lm_enum_parse(type, c->valuestring, &o))
		nm = lm_enum_name(type, o);
	else if (is_int(c, 1))
		nm = lm_enum_name(type, (int64_t)c->valuedouble);
	if (nm) {
		free(*out);
		*out = lm_xstrdup(nm);
		return 0;
	}
	lm_enum_spellings(type, names, sizeof names);
	if (cJSON_IsString(c))
		return FAIL(L, "key '%s': unknown %s '%s' (%s)", key,
			    lm_enumtype_name(type), c->valuestring, names);
	if (cJSON_IsNumber(c))
		return FAIL(L, "key '%s': %s %.17g does not exist (%s)", key,
			    lm_enumtype_name(type), c->valuedouble, names);
	return FAIL(L, "key '%s': expected string, got %s", key,
		    type_name(c));
}

static int load_memloc(ld *L, cJSON *j, lm_memloc *l, lm_alloc *a)
{
	if (!cJSON_IsObject(j))
		return FAIL(L, "expected memory location object, got %s",
			    type_name(j));
	unique_keys(L, j);
	int seen_name = 0, seen_type = 0;
	const cJSON *alias = NULL;
	for (cJSON *c = j->child, *next; c; c = next) {
		next = c->next;
		const char *key = c->string;
		int rc = 0;
		if (IS("name")) {
			rc = get_str(L, c, key, &l->name);
			seen_name = 1;
		} else if (IS("type")) {
			int64_t bit;
			const char *nm = NULL;
			if (cJSON_IsNumber(c) && is_int(c, 1) &&
			    (nm = lm_enum_name(LM_ET_MemoryType,
					       (int64_t)c->valuedouble)) != NULL)
				l->type = lm_memtype_parse(nm);
			else if (cJSON_IsNumber(c))
				rc = FAIL(L, "key 'type': MemoryType %.17g does not "
					  "exist (1, 2, 4, ... 128)", c->valuedouble);
			else if (!cJSON_IsString(c))
				rc = FAIL(L, "key 'type': expected string, got %s",
					  type_name(c));
			else if (!(l->type = lm_memtype_parse(c->valuestring)) &&
				 !lm_enum_parse(LM_ET_MemoryType, c->valuestring,
						&bit))
				l->type = lm_memtype_parse(lm_enum_name(
					LM_ET_MemoryType, bit));
			if (!rc && !l->type)
				rc = FAIL(L, "key 'type': unknown memory type '%s'",
					  cJSON_IsString(c) ? c->valuestring : "?");
			seen_type = 1;
		} else if (IS("addr")) {
			rc = get_nat(L, c, key, &l->addr);
		} else if (IS("dims")) {
			rc = get_int_array(L, c, key, 1, &l->dims, &l->n_dims);
		} else if (IS("bank")) {
			rc = get_nat(L, c, key, &l->bank);
		} else if (IS("base")) {
			rc = get_nat(L, c, key, &l->base);
		} else if (IS("allocated")) {
			rc = get_bool(L, c, key, &l->allocated);
		} else if (IS("remote_local_target") && !is_null(c)) {
			rc = get_remote(L, c, a);
		} else if (IS("alias") && !is_null(c)) {
			alias = c; /* checked once the name is known */
			keep_extra(&l->extra, j, c);
		} else {
			keep_extra(&l->extra, j, c);
		}
		if (rc)
			return rc;
	}
	if (!seen_name)
		return FAIL(L, "memory location: missing key 'name'");
	if (!seen_type)
		return FAIL(L, "memory location %s: missing key 'type'", l->name);
	return alias ? check_alias(L, l->name, alias) : 0;
}

static int load_alloc(ld *L, cJSON *j, lm_alloc *a)
{
	if (!cJSON_IsObject(j))
		return FAIL(L, "expected allocation object, got %s", type_name(j));
	unique_keys(L, j);
	cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
	if (!nm)
		return FAIL(L, "allocation: missing key 'name'");
	if (get_str(L, nm, "name", &a->name))
		return LM_EINPUT;
	char ctx[300];
	snprintf(ctx, sizeof ctx, "allocation %s", a->name);
	L->ctx = ctx;
	L->ctx_key = NULL;
	int seen_kind = 0, seen_ml = 0;
	for (cJSON *c = j->child, *next; c; c = next) {
		next = c->next;
		const char *key = c->string;
		int rc = 0;
		if (c == nm)
			continue;
		if (IS("kind")) {
			if (!cJSON_IsString(c))
				rc = FAIL(L, "key 'kind': expected string, got %s",
					  type_name(c));
			else if (!(a->kind = lm_tensorkind_parse(c->valuestring)))
				rc = FAIL(L, "key 'kind': unknown tensor kind '%s'",
					  c->valuestring);
			seen_kind = 1;
		} else if (IS("dtype") && !is_null(c)) {
			rc = get_dtype(L, c, key, &a->dtype);
		} else if (IS("tensor_shape")) {
			rc = get_int_array(L, c, key, 1, &a->tensor_shape, &a->n_shape);
		} else if (IS("addr_space") && !is_null(c)) {
			rc = get_enum_name(L, c, key, LM_ET_MemoryAddressSpace,
					   &a->addr_space);
		} else if (IS("tensor_class") && !is_null(c)) {
			/* checked, carried (the simulator reads no class) */
			char *cls = NULL;
			rc = get_enum_name(L, c, key, LM_ET_TensorClass, &cls);
			free(cls);
			if (!rc)
				keep_extra(&a->extra, j, c);
		} else if (IS("file")) {
			rc = get_str(L, c, key, &a->file);
		} else if (IS("memorylocations")) {
			if (want_array(L, c, key))
				return LM_EINPUT;
			int cnt = cJSON_GetArraySize(c);
			a->memlocs = cnt ? lm_xcalloc((size_t)cnt, sizeof *a->memlocs)
					 : NULL;
			for (cJSON *e = c->child; e && !rc; e = e->next)
				rc = load_memloc(L, e, &a->memlocs[a->n_memlocs++], a);
			seen_ml = 1;
		} else if (IS("remote_local_target") && !is_null(c)) {
			rc = get_remote(L, c, a);
		} else if (IS("alias_of") && !is_null(c)) {
			rc = get_str(L, c, key, &a->alias_of);
		} else {
			keep_extra(&a->extra, j, c);
		}
		if (rc)
			return rc;
	}
	if (!seen_kind)
		return FAIL(L, "missing key 'kind'");
	if (!seen_ml)
		return FAIL(L, "missing key 'memorylocations'");
	L->ctx = NULL;
	return 0;
}

/* ---- one object on its own (the builder's wire-form entries) ------------ */

/* The loader state for one object of m, in function fn / block blk. */
static void one_object(ld *L, const lm_module *m, const char *fn,
		       const char *blk, lm_error *err)
{
	memset(L, 0, sizeof *L);
	L->path = m->path ? m->path : "";
	L->err = err;
	L->owned = 1; /* parsed with malloc: the arena is for whole modules */
	L->fn = fn;
	L->blk = blk;
	L->version = m->version == 1 ? 1 : 2;
}

/* Parse text as one JSON object (NULL with err filled when it is not). */
static cJSON *parse_object(ld *L, const char *text, size_t len,
			   const char *what)
{
	const char *end = NULL;
	cJSON *j;
	lm_json_hooks();
	j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	while (j && end && (size_t)(end - text) < len &&
	       (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
		end++;
	if (j && end && (size_t)(end - text) < len && *end) {
		cJSON_Delete(j);
		j = NULL;
	}
	if (!j)
		FAIL(L, "malformed JSON %s", what);
	return j;
}

int lm_json_read_inst(lm_inst *in, const char *text, size_t len,
		      const lm_module *m, const char *fn, const char *blk,
		      lm_error *err)
{
	ld L;
	cJSON *j;
	int rc;
	memset(in, 0, sizeof *in);
	one_object(&L, m, fn, blk, err);
	if (!(j = parse_object(&L, text, len, "instruction")))
		return LM_EINPUT;
	rc = load_inst(&L, j, in);
	cJSON_Delete(j);
	if (rc)
		lm_inst_clear(in);
	return rc;
}

int lm_json_read_alloc(lm_alloc *a, const char *text, size_t len,
		       const lm_module *m, const char *fn, lm_error *err)
{
	ld L;
	cJSON *j;
	int rc;
	memset(a, 0, sizeof *a);
	one_object(&L, m, fn, NULL, err);
	if (!(j = parse_object(&L, text, len, "allocation")))
		return LM_EINPUT;
	rc = load_alloc(&L, j, a);
	cJSON_Delete(j);
	if (rc)
		lm_alloc_clear(a);
	return rc;
}

/* ---- functions and module -------------------------------------------- */

static int load_function(ld *L, cJSON *j, lm_function *f)
{
	if (!cJSON_IsObject(j))
		return FAIL(L, "expected function object, got %s", type_name(j));
	unique_keys(L, j);
	cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
	if (!nm)
		return FAIL(L, "function: missing key 'name'");
	if (get_str(L, nm, "name", &f->name))
		return LM_EINPUT;
	L->fn = f->name;
	int seen_allocs = 0, seen_blocks = 0;
	for (cJSON *c = j->child, *next; c; c = next) {
		next = c->next;
		const char *key = c->string;
		int rc = 0;
		if (c == nm)
			continue;
		if (IS("attributes") && !is_null(c)) {
			rc = get_str_array(L, c, key, &f->attributes, &f->n_attributes);
		} else if (IS("kind") && !is_null(c)) {
			int k = cJSON_IsString(c) ? lm_funckind_parse(c->valuestring) : -1;
			if (!cJSON_IsString(c))
				rc = FAIL(L, "key 'kind': expected string, got %s",
					  type_name(c));
			else if (k < 0)
				rc = FAIL(L, "key 'kind': unknown function kind '%s'",
					  c->valuestring);
			f->kind = k < 0 ? LM_FK_REGULAR : (lm_funckind)k;
			f->has_kind = 1;
		} else if (IS("neuron_core_id") && !is_null(c)) {
			rc = get_nat(L, c, key, &f->neuron_core_id);
			f->has_core_id = 1;
		} else if ((IS("allocations") || IS("storages")) && !seen_allocs) {
			if (want_array(L, c, key))
				return LM_EINPUT;
			int cnt = cJSON_GetArraySize(c);
			f->allocs = cnt ? lm_xcalloc((size_t)cnt, sizeof *f->allocs)
					: NULL;
			for (cJSON *e = c->child; e && !rc; e = e->next)
				rc = load_alloc(L, e, &f->allocs[f->n_allocs++]);
			seen_allocs = 1;
		} else if ((IS("blocks") || IS("basic_blocks")) && !seen_blocks) {
			if (want_array(L, c, key))
				return LM_EINPUT;
			int cnt = cJSON_GetArraySize(c);
			f->blocks = cnt ? lm_xcalloc((size_t)cnt, sizeof *f->blocks)
					: NULL;
			for (cJSON *e = c->child; e && !rc; e = e->next)
				rc = load_block(L, e, &f->blocks[f->n_blocks++]);
			L->blk = NULL;
			seen_blocks = 1;
		} else {
			keep_extra(&f->extra, j, c);
		}
		if (rc)
			return rc;
	}
	if (!seen_allocs)
		return FAIL(L, "missing key 'allocations'");
	if (!seen_blocks)
		return FAIL(L, "missing key 'blocks'");
	L->fn = NULL;
	return 0;
}

static int load_semaphores(ld *L, lm_module *m, cJSON *c)
{
	if (want_array(L, c, "semaphores"))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(c);
	m->semaphores = cnt ? lm_xcalloc((size_t)cnt, sizeof *m->semaphores) : NULL;
	for (cJSON *e = c->child; e; e = e->next) {
		lm_semaphore *s = &m->semaphores[m->n_semaphores++];
		if (!cJSON_IsObject(e))
			return FAIL(L, "semaphores: expected object, got %s",
				    type_name(e));
		unique_keys(L, e);
		int seen = 0;
		for (cJSON *k = e->child, *next; k; k = next) {
			next = k->next;
			const char *key = k->string;
			int rc = 0;
			if (IS("name")) {
				rc = get_str(L, k, "semaphores.name", &s->name);
				seen = 1;
			} else if (IS("init")) {
				rc = get_nat(L, k, "semaphores.init", &s->init);
			} else if (IS("id") && !is_null(k)) {
				rc = get_nat(L, k, "semaphores.id", &s->id);
				s->has_id = 1;
			} else if (IS("core") && !is_null(k)) {
				rc = get_nat(L, k, "semaphores.core", &s->core);
				s->has_core = 1;
			} else {
				keep_extra(&s->extra, e, k);
			}
			if (rc)
				return rc;
		}
		if (!seen)
			return FAIL(L, "semaphores: missing key 'name'");
	}
	return 0;
}

static int load_queues(ld *L, lm_module *m, cJSON *c)
{
	if (want_array(L, c, "queues"))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(c);
	m->queues = cnt ? lm_xcalloc((size_t)cnt, sizeof *m->queues) : NULL;
	for (cJSON *e = c->child; e; e = e->next) {
		lm_queue *q = &m->queues[m->n_queues++];
		if (!cJSON_IsObject(e))
			return FAIL(L, "queues: expected object, got %s", type_name(e));
		unique_keys(L, e);
		int seen = 0;
		const char *blocks_key = NULL;
		for (cJSON *k = e->child, *next; k; k = next) {
			next = k->next;
			const char *key = k->string;
			int rc = 0;
			if (IS("name")) {
				rc = get_str(L, k, "queues.name", &q->name);
				seen = 1;
			} else if (IS("instances")) {
				if (want_array(L, k, "queues.instances"))
					return LM_EINPUT;
				int ni = cJSON_GetArraySize(k);
				q->instances = ni ? lm_xcalloc((size_t)ni,
							       sizeof *q->instances) : NULL;
				for (cJSON *ie = k->child; ie && !rc; ie = ie->next) {
					lm_qinstance *qi = &q->instances[q->n_instances++];
					if (!cJSON_IsObject(ie))
						return FAIL(L, "queue instance: expected object, "
							    "got %s", type_name(ie));
					unique_keys(L, ie);
					int sn = 0, ss = 0;
					for (cJSON *x = ie->child, *nx; x && !rc; x = nx) {
						nx = x->next;
						if (!strcmp(x->string, "name")) {
							rc = get_str(L, x, "instances.name", &qi->name);
							sn = 1;
						} else if (!strcmp(x->string, "semaphore")) {
							rc = get_str(L, x, "instances.semaphore",
								     &qi->semaphore);
							ss = 1;
						} else {
							keep_extra(&qi->extra, ie, x);
						}
					}
					if (!rc && !sn)
						rc = FAIL(L, "queue instance: missing key 'name'");
					if (!rc && !ss)
						rc = FAIL(L, "queue instance %s: missing key "
							  "'semaphore'", qi->name);
				}
			} else if ((IS("blocks") || IS("basic_blocks")) &&
				   !is_null(k)) {
				/* the queue's own blocks (its DMA blocks): one
				   spelling, so that one list is what is checked */
				if (blocks_key)
					return FAIL(L, "queue %s: keys '%s' and '%s' "
						    "both given (one list of "
						    "blocks)", q->name ? q->name
						    : "?", blocks_key, key);
				blocks_key = key;
				L->queue = q->name ? q->name : "?";
				rc = check_body(L, key, k);
				L->queue = NULL;
				keep_extra(&q->extra, e, k);
			} else {
				keep_extra(&q->extra, e, k);
			}
			if (rc)
				return rc;
		}
		if (!seen)
			return FAIL(L, "queues: missing key 'name'");
		if (!q->n_instances)
			return FAIL(L, "queue %s: needs at least one instance", q->name);
	}
	return 0;
}

static int load_aliases(ld *L, lm_module *m, cJSON *c)
{
	if (want_array(L, c, "aliases"))
		return LM_EINPUT;
	int cnt = cJSON_GetArraySize(c);
	m->has_aliases = 1;
	m->aliases = cnt ? lm_xcalloc((size_t)cnt, sizeof *m->aliases) : NULL;
	for (cJSON *e = c->child; e; e = e->next) {
		lm_alias *a = &m->aliases[m->n_aliases++];
		if (!cJSON_IsObject(e))
			return FAIL(L, "aliases: expected object, got %s", type_name(e));
		unique_keys(L, e);
		for (cJSON *k = e->child, *next; k; k = next) {
			next = k->next;
			const char *key = k->string;
			int rc = 0;
			if (IS("producer"))
				rc = get_str(L, k, "aliases.producer", &a->producer);
			else if (IS("consumer"))
				rc = get_str(L, k, "aliases.consumer", &a->consumer);
			else if (IS("producer_core"))
				rc = get_nat(L, k, "aliases.producer_core", &a->producer_core);
			else if (IS("consumer_core"))
				rc = get_nat(L, k, "aliases.consumer_core", &a->consumer_core);
			else
				keep_extra(&a->extra, e, k);
			if (rc)
				return rc;
		}
		if (!a->producer || !a->consumer)
			return FAIL(L, "aliases: needs 'producer' and 'consumer'");
	}
	return 0;
}

typedef struct unfold_ctx {
	const lm_module *m;
	lm_strmap allocs;
} unfold_ctx;

static void unfold_arg(lm_arg *a, void *ctx)
{
	unfold_ctx *u = ctx;
	const lm_memloc *l;
	int64_t pe;
	if (a->kind != LM_ARG_PHYSICAL_AP)
		return;
	l = lm_arg_memloc(u->m, &u->allocs, a);
	pe = lm_arg_part_elems(a, l);
	if (!a->has_start_partition) {
		lm_arg_unfold(a, pe);
	} else if (pe > 0 && a->n_ap > 0) {
		/* the legacy form: its first pair strode one partition
		   whatever its step, which is pe */
		a->ap[0].step = pe;
	}
}

/* The wire's SB / PSUM operands carry their start partition in `offset`
** (lm_arg_unfold): split it out, now that every allocation is known. A
** legacy operand (its start_partition given apart) gets the partition
** step its form meant: one partition, pe. */
static void unfold_partitions(lm_module *m)
{
	unfold_ctx u;
	u.m = m;
	for (int i = 0; i < m->n_functions; i++) {
		lm_function *f = &m->functions[i];
		lm_strmap_init(&u.allocs);
		for (int k = f->n_allocs - 1; k >= 0; k--)
			lm_strmap_put(&u.allocs, f->allocs[k].name, &f->allocs[k]);
		lm_function_each_arg(f, unfold_arg, &u);
		lm_strmap_free(&u.allocs);
	}
}

int lm_blocks_from_json(const cJSON *blocks, const lm_module *m,
			lm_block **out, int *n, lm_error *err)
{
	ld L;
	cJSON *c = cJSON_Duplicate(blocks, 1);
	int rc = 0;
	memset(&L, 0, sizeof L);
	L.path = m && m->path ? m->path : "";
	L.err = err;
	L.owned = 1;
	L.version = 2;
	*out = NULL;
	*n = 0;
	if (!cJSON_IsArray(c)) {
		rc = FAIL(&L, "expected an array of blocks, got %s",
			  type_name(c));
		goto done;
	}
	if (c->child)
		*out = lm_xcalloc((size_t)cJSON_GetArraySize(c), sizeof **out);
	for (cJSON *e = c->child; e && !rc; e = e->next)
		rc = load_block(&L, e, &(*out)[(*n)++]);
	if (!rc && m) {
		lm_function tf;
		unfold_ctx u;
		memset(&tf, 0, sizeof tf);
		tf.blocks = *out;
		tf.n_blocks = *n;
		u.m = m;
		lm_strmap_init(&u.allocs);
		/* every allocation of the module, the first of a name kept */
		for (int i = m->n_functions - 1; i >= 0; i--)
			for (int k = m->functions[i].n_allocs - 1; k >= 0; k--)
				lm_strmap_put(&u.allocs,
					      m->functions[i].allocs[k].name,
					      &m->functions[i].allocs[k]);
		lm_function_each_arg(&tf, unfold_arg, &u);
		lm_strmap_free(&u.allocs);
	}
done:
	cJSON_Delete(c);
	if (rc) {
		for (int i = 0; i < *n; i++)
			lm_block_clear(&(*out)[i]);
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

/* Read a module out of a tree; the tree is left for the caller to free.
** owned: the tree is malloc'd (not the parse arena's). */
static int from_tree(lm_module **out, cJSON *root, const char *path,
		     int owned, lm_error *err)
{
	ld L = {0};
	L.path = path ? path : "";
	L.err = err;
	L.owned = owned;
	lm_module *m = lm_xcalloc(1, sizeof *m);
	lm_b_set_path(m, L.path);
	m->version = 2;
	int rc = 0, seen_functions = 0;
	*out = NULL;
	if (!cJSON_IsObject(root)) {
		rc = FAIL(&L, "expected a JSON object at top level, got %s",
			  type_name(root));
		goto done;
	}
	unique_keys(&L, root);
	{
		/* first: it says how affine expressions are written */
		cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
		if (v && (rc = get_nat(&L, v, "version", &m->version)) == 0 &&
		    m->version != 1 && m->version != 2)
			rc = FAIL(&L, "unsupported BIR version %lld (1 or 2)",
				  (long long)m->version);
		if (rc)
			goto done;
		L.version = (int)m->version;
	}
	for (cJSON *c = root->child, *next; c; c = next) {
		next = c->next;
		const char *key = c->string;
		if (IS("version")) {
			continue;
		} else if (IS("arch")) {
			int64_t lv;
			rc = get_str(&L, c, key, &m->arch);
			/* the project's machine names for the levels it models */
			if (!rc && !lm_enum_parse(LM_ET_ArchLevel, m->arch, &lv) &&
			    (lv == 20 || lv == 30 || lv == 40)) {
				free(m->arch);
				m->arch = lm_xasprintf("gen%d", (int)(lv / 10));
			}
		} else if (IS("name") && !is_null(c)) {
			rc = get_str(&L, c, key, &m->name);
		} else if (IS("attributes") && !is_null(c)) {
			if (want_object(&L, c, key)) {
				rc = LM_EINPUT;
				break;
			}
			unique_keys(&L, c);
			for (cJSON *a = c->child, *an; a && !rc; a = an) {
				an = a->next;
				if (!strcmp(a->string, "neuron_core_id")) {
					if (is_null(a))
						continue;
					rc = get_nat(&L, a, "attributes.neuron_core_id",
						     &m->neuron_core_id);
					m->has_core_id = 1;
				} else {
					keep_extra(&m->attributes_extra, c, a);
				}
			}
		} else if (IS("semaphores")) {
			rc = load_semaphores(&L, m, c);
		} else if (IS("queues")) {
			rc = load_queues(&L, m, c);
		} else if (IS("aliases")) {
			rc = load_aliases(&L, m, c);
		} else if (IS("call_to_physical_memlocs") && !is_null(c)) {
			if ((rc = check_call_memlocs(&L, c)) == 0)
				keep_extra(&m->extra, root, c);
		} else if (IS("functions")) {
			if (want_array(&L, c, key)) {
				rc = LM_EINPUT;
				break;
			}
			int cnt = cJSON_GetArraySize(c);
			m->functions = cnt ? lm_xcalloc((size_t)cnt, sizeof *m->functions)
					   : NULL;
			for (cJSON *e = c->child; e && !rc; e = e->next)
				rc = load_function(&L, e, &m->functions[m->n_functions++]);
			seen_functions = 1;
		} else {
			keep_extra(&m->extra, root, c);
		}
		if (rc)
			break;
	}
	if (!rc && !seen_functions)
		rc = FAIL(&L, "missing key 'functions'");
	if (!rc)
		unfold_partitions(m);
	if (!rc && !m->arch)
		m->arch = lm_xstrdup("gen3");
	/* a version 1 module's affine values are in version 2 form now:
	   that is the module in memory, and what is written */
	if (!rc)
		m->version = 2;
done:
	if (rc) {
		lm_module_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int lm_module_from_cjson(lm_module **out, cJSON *root, const char *path,
			 lm_error *err)
{
	int rc = from_tree(out, root, path, 1, err);
	cJSON_Delete(root);
	return rc;
}

/*
** Did cJSON stop at off because the nesting limit was reached? It refuses
** the array or object that would open level CJSON_NESTING_LIMIT + 1, and
** stops on its bracket: count the levels open before off (brackets inside
** strings do not count).
*/
static int nesting_exceeded(const char *text, size_t off, size_t len)
{
	long depth = 0;
	int in_str = 0;
	if (off >= len || (text[off] != '[' && text[off] != '{'))
		return 0;
	for (size_t i = 0; i < off; i++) {
		char ch = text[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '[' || ch == '{') {
			depth++;
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
	}
	return !in_str && depth >= CJSON_NESTING_LIMIT;
}

int lm_module_parse(lm_module **out, const char *text, size_t len,
		    const char *path, lm_error *err)
{
	const char *end = NULL;
	*out = NULL;
	if (len == 0)
		return lm_err(err, path, "", "empty file");
	lm_json_hooks();
	arena_on = 1;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	arena_on = 0;
	if (!root) {
		arena_release();
		/* report line and column of the parse failure */
		size_t off = end && end >= text ? (size_t)(end - text) : 0;
		if (off > len)
			off = len;
		int line = 1, col = 1;
		for (size_t i = 0; i < off; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		if (nesting_exceeded(text, off, len))
			return lm_err(err, path, "", "JSON nested deeper than %d "
				      "levels at line %d, column %d",
				      CJSON_NESTING_LIMIT, line, col);
		return lm_err(err, path, "", "malformed JSON at line %d, column %d%s",
			      line, col, off >= len ? " (unexpected end of input)" : "");
	}
	/* trailing garbage after the value */
	while (end && (size_t)(end - text) < len &&
	       (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
		end++;
	if (end && (size_t)(end - text) < len && *end) {
		arena_release();
		return lm_err(err, path, "", "malformed JSON: trailing data after "
			      "the top-level value");
	}
	int rc = from_tree(out, root, path, 0, err);
	arena_release();
	return rc;
}

int lm_module_load(lm_module **out, const char *path, lm_error *err)
{
	char *text;
	size_t len;
	*out = NULL;
	if (lm_read_file(path, &text, &len, err))
		return LM_EINPUT;
	int rc = lm_module_parse(out, text, len, path, err);
	free(text);
	return rc;
}

/* ---- several files at once ------------------------------------------------ */

typedef struct loader {
	char *const *paths;
	lm_module **mods;
	lm_error *errs;
	int *rcs;
} loader;

static void load_one(void *arg, int worker, int i)
{
	loader *l = arg;
	(void)worker; /* cJSON's arena is per thread already (arena_on) */
	l->rcs[i] = lm_module_load(&l->mods[i], l->paths[i], &l->errs[i]);
}

int lm_modules_load(char *const *paths, int n, lm_module **mods, lm_error *err)
{
	loader l;
	off_t bytes = 0;
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct stat st;
		mods[i] = NULL;
		if (stat(paths[i], &st) == 0)
			bytes += st.st_size;
	}
	/* one thread per CPU, at most 8: threads only pay for themselves on
	   big inputs */
	int nt = lm_worker_count(0, 8, n, bytes >= ((off_t)8 << 20));
	l.paths = paths;
	l.mods = mods;
	l.errs = lm_xcalloc((size_t)n + 1, sizeof *l.errs);
	l.rcs = lm_xcalloc((size_t)n + 1, sizeof *l.rcs);
	lm_json_hooks(); /* before any thread parses */
	lm_parallel_for(n, nt, load_one, &l);
	/* the first failure in path order, as a loop would report it */
	for (int i = 0; i < n && !rc; i++)
		if (l.rcs[i]) {
			rc = l.rcs[i];
			if (err)
				*err = l.errs[i];
		}
	if (rc)
		for (int i = 0; i < n; i++) {
			lm_module_free(mods[i]);
			mods[i] = NULL;
		}
	free(l.errs);
	free(l.rcs);
	return rc;
}

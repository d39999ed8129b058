/*
** test_affine.c -- the quasi-affine (pelican) expressions of the wire
** form: every kind read in both versions and written back (version 2 to
** itself, version 1 through version 2 to itself), evaluated with known
** values (floor division and Euclidean modulo of negatives, the
** collective kinds), folded, copied, compared, renamed, and every error
** of the reader and the evaluator.
*/
#include "common.h"
#include "affine.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* JSON with ' for " (readable literals). */
static cJSON *js(const char *text)
{
	char *t = lm_xstrdup(text);
	for (char *p = t; *p; p++)
		if (*p == '\'')
			*p = '"';
	cJSON *j = cJSON_Parse(t);
	ck_assert_msg(j != NULL, "bad test JSON: %s", t);
	free(t);
	return j;
}

/* Read text in version, which must succeed. */
static lm_affine *rd(const char *text, int version)
{
	cJSON *j = js(text);
	lm_affine *e = NULL;
	char err[512];
	ck_assert_msg(lm_affine_from_json(&e, j, version, err, sizeof err) == 0,
		      "%s: %s", text, err);
	ck_assert_ptr_nonnull(e);
	cJSON_Delete(j);
	return e;
}

/* Compact text of j with every number exact (cJSON_Print may round an
** integer beyond 2^52) and ' for ". */
static void exact_text(lm_buf *b, const cJSON *j)
{
	const cJSON *c;
	if (cJSON_IsNumber(j)) {
		lm_buf_printf(b, "%.17g", j->valuedouble);
	} else if (cJSON_IsString(j)) {
		lm_buf_printf(b, "'%s'", j->valuestring);
	} else if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
		lm_buf_puts(b, cJSON_IsArray(j) ? "[" : "{");
		cJSON_ArrayForEach(c, j) {
			if (c != j->child)
				lm_buf_puts(b, ",");
			if (cJSON_IsObject(j))
				lm_buf_printf(b, "'%s':", c->string);
			exact_text(b, c);
		}
		lm_buf_puts(b, cJSON_IsArray(j) ? "]" : "}");
	} else {
		ck_abort_msg("unexpected JSON item");
	}
}

/* Compact text of e written in version (NULL: no such form); caller
** frees. */
static char *wr(const lm_affine *e, int version)
{
	cJSON *j = lm_affine_to_json(e, version);
	lm_buf b = LM_BUF_INIT;
	if (!j)
		return NULL;
	exact_text(&b, j);
	cJSON_Delete(j);
	return lm_buf_detach(&b);
}

/* ---- leaf values for eval ------------------------------------------------ */

typedef struct env {
	const char *names[16];
	int kinds[16];
	int64_t values[16];
	int n;
	int calls;
} env;

static int env_leaf(void *ctx, int kind, const char *name, int64_t *v)
{
	env *E = ctx;
	E->calls++;
	for (int i = 0; i < E->n; i++)
		if (E->kinds[i] == kind && !strcmp(E->names[i], name)) {
			*v = E->values[i];
			return 0;
		}
	return -1;
}

static void env_set(env *E, int kind, const char *name, int64_t v)
{
	E->kinds[E->n] = kind;
	E->names[E->n] = name;
	E->values[E->n++] = v;
}

/* Evaluate text (version 2) in E; must succeed. */
static int64_t ev(const char *text, env *E)
{
	lm_affine *e = rd(text, 2);
	int64_t v = 0;
	char err[512];
	ck_assert_msg(lm_affine_eval(e, env_leaf, E, &v, err, sizeof err) == 0,
		      "%s: %s", text, err);
	lm_affine_free(e);
	return v;
}

/* An expression of every written kind in version 2, in the writer's key
** order. */
static const char *const v2_all[] = {
	"{'kind':'CCGetRankKind','iteration_id':0,'channel_id':1}",
	"{'kind':'IndirectArgId','arg_id':3}",
	"{'kind':'AffIVKind','axis':'i'}",
	"{'kind':'IntRuntimeValueKind','regref':'r0'}",
	"{'kind':'ShardIDKind','ub':4}",
	"{'kind':'AffExprKind','terms':[{'idx':{'kind':'AffIVKind','axis':'i'},"
	"'coeff':2},{'idx':{'kind':'IntRuntimeValueKind','regref':'r0'},"
	"'coeff':-3},{'idx':{'kind':'ShardIDKind','ub':2},'coeff':5}],'c':7}",
	"{'kind':'AffExprKind','terms':[],'c':-9007199254740992}",
	"{'kind':'SumKind','n_terms':2,'terms':[{'kind':'AffIVKind','axis':'i'},"
	"{'kind':'MultKind','var':{'kind':'AffIVKind','axis':'j'},'scale':-2}]}",
	"{'kind':'SumKind','n_terms':0,'terms':[]}",
	"{'kind':'MultKind','var':{'kind':'ShardIDKind','ub':8},'scale':3}",
	"{'kind':'FloorDivKind','numer':{'kind':'AffExprKind','terms':[{'idx':"
	"{'kind':'AffIVKind','axis':'i'},'coeff':1}],'c':-7},'denom':2}",
	"{'kind':'ModuloKind','numer':{'kind':'SumKind','n_terms':1,'terms':"
	"[{'kind':'AffIVKind','axis':'t'}]},'denom':3}",
	"{'kind':'CCDivKind','numer':{'kind':'CCGetRankKind','iteration_id':2,"
	"'channel_id':0},'denom':4,'replica_groups_id':9007199254740992}",
};
#define N_V2_ALL ((int)(sizeof v2_all / sizeof v2_all[0]))

START_TEST(test_v2_round_trip)
{
	for (int i = 0; i < N_V2_ALL; i++) {
		char *want = lm_xstrdup(v2_all[i]);
		lm_affine *e = rd(want, 2);
		char *got = wr(e, 2);
		ck_assert_str_eq(got, want);
		lm_affine *again = rd(got, 2);
		ck_assert(lm_affine_equal(e, again));
		free(got);
		free(want);
		lm_affine_free(again);
		lm_affine_free(e);
	}
}
END_TEST

/* Every version 1 form, written as the writer writes it. */
static const char *const v1_all[] = {
	"{'terms':[{'AxisLabel':'i','coef':512},{'AxisLabel':'j','coef':-1}],"
	"'c':64}",
	"{'terms':[],'c':0}",
	"{'op':'Div','op_param':4,'terms':[{'AxisLabel':'i','coef':1}],'c':-7}",
	"{'op':'Mod','op_param':3,'terms':[{'AxisLabel':'t','coef':1}],'c':-1}",
	"{'op':'CCGetRank','op_param':4,'terms':[],'c':10}",
	"{'op':'IndirectArgId','op_param':3,'terms':[],'c':0}",
	"{'kind':'ShardIDKind','ub':4}",
};
#define N_V1_ALL ((int)(sizeof v1_all / sizeof v1_all[0]))

START_TEST(test_v1_round_trip)
{
	for (int i = 0; i < N_V1_ALL; i++) {
		lm_affine *e = rd(v1_all[i], 1);
		char *t2 = wr(e, 2);
		lm_affine *e2 = rd(t2, 2);
		char *t1 = wr(e2, 1);
		ck_assert(lm_affine_equal(e, e2));
		ck_assert_ptr_nonnull(t1);
		ck_assert_str_eq(t1, v1_all[i]);
		free(t1);
		free(t2);
		lm_affine_free(e2);
		lm_affine_free(e);
	}
}
END_TEST

START_TEST(test_v1_readings)
{
	/* CCGetRank builds a CCDiv of replica group 0 */
	lm_affine *e = rd("{'op':'CCGetRank','op_param':4,'terms':[{'AxisLabel':"
			  "'i','coef':1}],'c':0}", 1);
	char *t = wr(e, 2);
	ck_assert_int_eq(lm_affine_kind(e), LM_AFF_CCDIV);
	ck_assert_str_eq(t, "{'kind':'CCDivKind','numer':{'kind':'AffExprKind',"
			 "'terms':[{'idx':{'kind':'AffIVKind','axis':'i'},"
			 "'coeff':1}],'c':0},'denom':4,'replica_groups_id':0}");
	free(t);
	lm_affine_free(e);

	/* IndirectArgId without a body; written with the empty one */
	e = rd("{'op':'IndirectArgId','op_param':5}", 1);
	t = wr(e, 1);
	ck_assert_str_eq(t, "{'op':'IndirectArgId','op_param':5,'terms':[],"
			 "'c':0}");
	free(t);
	t = wr(e, 2);
	ck_assert_str_eq(t, "{'kind':'IndirectArgId','arg_id':5}");
	free(t);
	lm_affine_free(e);
	e = rd("{'op':'IndirectArgId','op_param':5,'c':0}", 1);
	ck_assert_int_eq(lm_affine_kind(e), LM_AFF_INDIRECT);
	lm_affine_free(e);
	/* a zero coefficient is no term */
	e = rd("{'op':'IndirectArgId','op_param':5,'terms':[{'AxisLabel':'i',"
	       "'coef':0}],'c':0}", 1);
	ck_assert_int_eq(lm_affine_kind(e), LM_AFF_INDIRECT);
	lm_affine_free(e);
	/* a key given twice: the last one counts, in both versions */
	e = rd("{'terms':[],'c':0,'c':-3}", 1);
	t = wr(e, 1);
	ck_assert_str_eq(t, "{'terms':[],'c':-3}");
	free(t);
	lm_affine_free(e);
	e = rd("{'kind':'ModuloKind','kind':'AffIVKind','axis':'i','axis':'j'}",
	       2);
	t = wr(e, 2);
	ck_assert_str_eq(t, "{'kind':'AffIVKind','axis':'j'}");
	free(t);
	lm_affine_free(e);
}
END_TEST

START_TEST(test_v1_not_representable)
{
	static const char *const no_v1[] = {
		"{'kind':'AffIVKind','axis':'i'}",
		"{'kind':'IntRuntimeValueKind','regref':'r0'}",
		"{'kind':'CCGetRankKind','iteration_id':0,'channel_id':1}",
		"{'kind':'SumKind','n_terms':0,'terms':[]}",
		"{'kind':'MultKind','var':{'kind':'AffIVKind','axis':'i'},"
		"'scale':2}",
		/* a term over a shard id or a register: no AxisLabel */
		"{'kind':'AffExprKind','terms':[{'idx':{'kind':'ShardIDKind',"
		"'ub':2},'coeff':1}],'c':0}",
		"{'kind':'AffExprKind','terms':[{'idx':{'kind':"
		"'IntRuntimeValueKind','regref':'r'},'coeff':1}],'c':0}",
		/* a numerator that is not a flat affine */
		"{'kind':'ModuloKind','numer':{'kind':'AffIVKind','axis':'i'},"
		"'denom':3}",
		"{'kind':'FloorDivKind','numer':{'kind':'FloorDivKind','numer':"
		"{'kind':'AffExprKind','terms':[],'c':1},'denom':2},'denom':2}",
		/* v1 has no replica group */
		"{'kind':'CCDivKind','numer':{'kind':'AffExprKind','terms':[],"
		"'c':1},'denom':2,'replica_groups_id':1}",
	};
	for (size_t i = 0; i < sizeof no_v1 / sizeof no_v1[0]; i++) {
		lm_affine *e = rd(no_v1[i], 2);
		ck_assert_msg(lm_affine_to_json(e, 1) == NULL, "%s", no_v1[i]);
		ck_assert_ptr_null(lm_affine_to_json(e, 0));
		ck_assert_ptr_null(lm_affine_to_json(e, 3));
		lm_affine_free(e);
	}
	ck_assert_ptr_null(lm_affine_to_json(NULL, 2));
}
END_TEST

START_TEST(test_eval_every_kind)
{
	env E = { .n = 0 };
	env_set(&E, LM_AFF_IV, "i", 4);
	env_set(&E, LM_AFF_IV, "j", -3);
	env_set(&E, LM_AFF_REG, "r0", 10);
	env_set(&E, LM_AFF_SHARD, "ub=4", 3);
	env_set(&E, LM_AFF_SHARD, "ub=2", 1);
	env_set(&E, LM_AFF_CCGETRANK, "iteration_id=0,channel_id=1", 10);
	env_set(&E, LM_AFF_CCGETRANK, "iteration_id=0,channel_id=2", -3);
	env_set(&E, LM_AFF_INDIRECT, "arg_id=3", 77);
	env_set(&E, LM_AFF_IV, "t", 7);
	int64_t want[N_V2_ALL] = {
		10, 77, 4, 10, 3,
		2 * 4 - 3 * 10 + 5 * 1 + 7,
		-9007199254740992,
		4 + 6, 0, -1,     /* MultKind: no shard "ub=8" value */
		-2, 1, -1,
	};
	for (int i = 0; i < N_V2_ALL; i++) {
		lm_affine *e = rd(v2_all[i], 2);
		int64_t v;
		char err[256];
		int rc = lm_affine_eval(e, env_leaf, &E, &v, err, sizeof err);
		if (i == 9) {
			ck_assert_int_eq(rc, -1);
			ck_assert_str_eq(err, "expr.var: no value for "
					 "ShardIDKind (ub=8)");
		} else if (i == 12) {
			/* CCGetRank(2, 0) is unknown */
			ck_assert_int_eq(rc, -1);
			ck_assert_contains(err, "iteration_id=2,channel_id=0");
		} else {
			ck_assert_msg(rc == 0, "%s: %s", v2_all[i], err);
			ck_assert_msg(v == want[i], "%s: %lld", v2_all[i],
				      (long long)v);
		}
		lm_affine_free(e);
	}
}
END_TEST

/* AffExprKind "c + coeff * i" with i given. */
static int64_t with_i(const char *fmt, int64_t i)
{
	env E = { .n = 0 };
	env_set(&E, LM_AFF_IV, "i", i);
	char *t = lm_xasprintf("%s", fmt);
	int64_t v = ev(t, &E);
	free(t);
	return v;
}

/* Slots of the linear-form tests: i -> 0, j -> 1, k -> 2. */
static int lin_slot(void *ctx, const char *axis)
{
	(void)ctx;
	return !strcmp(axis, "i") ? 0 : !strcmp(axis, "j") ? 1
	       : !strcmp(axis, "k") ? 2 : -1;
}

/*
** lm_affine_compile_lin: the linear expressions compile and give
** lm_affine_eval's value at every point of a grid; the others (a floor
** division or modulo of an induction value, a register, a shard id, an
** axis without a slot) do not compile.
*/
START_TEST(test_compile_lin)
{
#define IV(a) "{\"kind\":\"AffIVKind\",\"axis\":\"" a "\"}"
	static const char *const lin[] = {
		"{\"kind\":\"AffExprKind\",\"terms\":[{\"idx\":" IV("i")
		",\"coeff\":3},{\"idx\":" IV("j") ",\"coeff\":-2}],\"c\":5}",
		"{\"kind\":\"SumKind\",\"n_terms\":3,\"terms\":[" IV("k") ","
		"{\"kind\":\"MultKind\",\"var\":" IV("i") ",\"scale\":7},"
		"{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":-4}]}",
		IV("j"),
		"{\"kind\":\"MultKind\",\"var\":{\"kind\":\"SumKind\","
		"\"n_terms\":2,\"terms\":[" IV("i") "," IV("i") "]},\"scale\":"
		"-3}",
		/* a floor division of a constant folds */
		"{\"kind\":\"SumKind\",\"n_terms\":2,\"terms\":[" IV("k") ","
		"{\"kind\":\"FloorDivKind\",\"numer\":{\"kind\":\"AffExprKind\","
		"\"terms\":[],\"c\":9},\"denom\":4}]}",
	};
	static const char *const nonlin[] = {
		"{\"kind\":\"FloorDivKind\",\"numer\":" IV("i") ",\"denom\":2}",
		"{\"kind\":\"ModuloKind\",\"numer\":" IV("k") ",\"denom\":3}",
		"{\"kind\":\"IntRuntimeValueKind\",\"regref\":\"r0\"}",
		"{\"kind\":\"AffExprKind\",\"terms\":[{\"idx\":{\"kind\":"
		"\"ShardIDKind\",\"ub\":4},\"coeff\":1}],\"c\":0}",
		IV("q"),
	};
	for (size_t n = 0; n < sizeof lin / sizeof *lin; n++) {
		lm_affine *e = rd(lin[n], 2);
		lm_affine_lin f;
		ck_assert_msg(lm_affine_compile_lin(e, lin_slot, NULL, &f) == 0,
			      "%s", lin[n]);
		for (int64_t i = -3; i <= 3; i++)
			for (int64_t j = -2; j <= 2; j++)
				for (int64_t k = 0; k <= 4; k++) {
					env E = { .n = 0 };
					int64_t sl[3] = { i, j, k }, a, b;
					char err[200];
					env_set(&E, LM_AFF_IV, "i", i);
					env_set(&E, LM_AFF_IV, "j", j);
					env_set(&E, LM_AFF_IV, "k", k);
					ck_assert_int_eq(lm_affine_eval(e, env_leaf,
						&E, &a, err, sizeof err), 0);
					ck_assert_int_eq(lm_affine_lin_eval(&f, sl,
								   &b), 0);
					ck_assert_int_eq(a, b);
				}
		lm_affine_free(e);
	}
	for (size_t n = 0; n < sizeof nonlin / sizeof *nonlin; n++) {
		lm_affine *e = rd(nonlin[n], 2);
		lm_affine_lin f;
		ck_assert_msg(lm_affine_compile_lin(e, lin_slot, NULL, &f) == -1,
			      "%s", nonlin[n]);
		lm_affine_free(e);
	}
#undef IV
}
END_TEST

START_TEST(test_floor_div_and_euclidean_mod)
{
	static const struct { int64_t n, d, q, r; } cases[] = {
		{ 7, 2, 3, 1 }, { -7, 2, -4, 1 }, { -8, 2, -4, 0 },
		{ -1, 3, -1, 2 }, { -6, 3, -2, 0 }, { -7, 3, -3, 2 },
		{ 0, 5, 0, 0 }, { 5, 1, 5, 0 }, { -5, 1, -5, 0 },
		{ -9007199254740992, 3, -3002399751580331, 1 },
		{ 9007199254740992, 7, 1286742750677284, 4 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const char *kinds[] = { "FloorDivKind", "ModuloKind",
					"CCModKind", "CCDivKind" };
		for (int m = 0; m < 4; m++) {
			char *t = lm_xasprintf(
				"{'kind':'%s','numer':{'kind':'AffExprKind',"
				"'terms':[{'idx':{'kind':'AffIVKind','axis':"
				"'i'},'coeff':1}],'c':0},'denom':%lld%s}",
				kinds[m], (long long)cases[k].d,
				m == 3 ? ",'replica_groups_id':1" : "");
			int64_t v = with_i(t, cases[k].n);
			int64_t want = (m == 1 || m == 2) ? cases[k].r
							  : cases[k].q;
			ck_assert_msg(v == want, "%s of %lld: %lld", kinds[m],
				      (long long)cases[k].n, (long long)v);
			free(t);
		}
	}
	/* the v1 forms compute the same */
	static const char *const v1[] = {
		"{'op':'Div','op_param':2,'terms':[{'AxisLabel':'i','coef':1}],"
		"'c':0}",
		"{'op':'Mod','op_param':3,'terms':[{'AxisLabel':'i','coef':1}],"
		"'c':0}",
		"{'op':'CCGetRank','op_param':4,'terms':[{'AxisLabel':'i',"
		"'coef':1}],'c':0}",
	};
	const int64_t want[] = { -4, 2, -2 };
	for (int k = 0; k < 3; k++) {
		env E = { .n = 0 };
		int64_t v;
		char err[256];
		lm_affine *e = rd(v1[k], 1);
		env_set(&E, LM_AFF_IV, "i", -7);
		ck_assert(lm_affine_eval(e, env_leaf, &E, &v, err,
					 sizeof err) == 0);
		ck_assert_int_eq(v, want[k]);
		lm_affine_free(e);
	}
}
END_TEST

START_TEST(test_collective)
{
	env E = { .n = 0 };
	/* rank 13 in groups of 4: shard 3, lane 1 */
	env_set(&E, LM_AFF_CCGETRANK, "iteration_id=1,channel_id=0", 13);
	const char *rank = "{'kind':'CCGetRankKind','iteration_id':1,"
			   "'channel_id':0}";
	char *div = lm_xasprintf("{'kind':'CCDivKind','numer':%s,'denom':4,"
				 "'replica_groups_id':0}", rank);
	char *mod = lm_xasprintf("{'kind':'CCModKind','numer':%s,'denom':4}",
				 rank);
	char *off = lm_xasprintf("{'kind':'SumKind','n_terms':2,'terms':["
				 "{'kind':'MultKind','var':%s,'scale':16},"
				 "%s]}", div, mod);
	ck_assert_int_eq(ev(div, &E), 3);
	ck_assert_int_eq(ev(mod, &E), 1);
	ck_assert_int_eq(ev(off, &E), 3 * 16 + 1);
	E.values[0] = -1;   /* below the first group */
	ck_assert_int_eq(ev(div, &E), -1);
	ck_assert_int_eq(ev(mod, &E), 3);

	/* CCModKind reads as a ModuloKind, replica group or not */
	lm_affine *a = rd(mod, 2), *b;
	char *t = wr(a, 2);
	ck_assert_str_eq(t, "{'kind':'ModuloKind','numer':{'kind':"
			 "'CCGetRankKind','iteration_id':1,'channel_id':0},"
			 "'denom':4}");
	b = rd("{'kind':'CCModKind','numer':{'kind':'CCGetRankKind',"
	       "'iteration_id':1,'channel_id':0},'denom':4,"
	       "'replica_groups_id':7}", 2);
	ck_assert(lm_affine_equal(a, b));
	ck_assert_int_eq(lm_affine_kind(b), LM_AFF_MOD);
	lm_affine_free(a);
	lm_affine_free(b);
	free(t);
	free(div);
	free(mod);
	free(off);
}
END_TEST

START_TEST(test_eval_errors)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "{'kind':'ModuloKind','numer':{'kind':'AffExprKind','terms':"
		  "[{'idx':{'kind':'AffIVKind','axis':'i'},'coeff':1},{'idx':"
		  "{'kind':'AffIVKind','axis':'k'},'coeff':1}],'c':0},"
		  "'denom':3}",
		  "expr.numer.terms[1].idx: no value for AffIVKind 'k'" },
		{ "{'kind':'IntRuntimeValueKind','regref':'r9'}",
		  "expr: no value for IntRuntimeValueKind 'r9'" },
		{ "{'kind':'IndirectArgId','arg_id':4}",
		  "expr: no value for IndirectArgId (arg_id=4)" },
		{ "{'kind':'ShardIDKind','ub':2}",
		  "expr: shard id 2 outside [0, 2)" },
		{ "{'kind':'ShardIDKind','ub':9}",
		  "expr: shard id -1 outside [0, 9)" },
		/* 2^53 * 2^11 = 2^64 */
		{ "{'kind':'AffExprKind','terms':[{'idx':{'kind':'AffIVKind',"
		  "'axis':'i'},'coeff':9007199254740992}],'c':0}",
		  "expr.terms[0]: integer overflow" },
		{ "{'kind':'AffExprKind','terms':[{'idx':{'kind':'AffIVKind',"
		  "'axis':'i'},'coeff':4503599627370496}],'c':"
		  "-9007199254740992}",
		  "expr.terms[0]: integer overflow" },
		{ "{'kind':'MultKind','var':{'kind':'AffExprKind','terms':[],"
		  "'c':9007199254740992},'scale':2048}",
		  "expr: integer overflow (9007199254740992 * 2048)" },
		{ "{'kind':'SumKind','n_terms':2,'terms':[{'kind':'MultKind',"
		  "'var':{'kind':'AffIVKind','axis':'i'},'scale':"
		  "2251799813685248},{'kind':'MultKind','var':{'kind':"
		  "'AffIVKind','axis':'i'},'scale':2251799813685248}]}",
		  "expr.terms[1]: integer overflow" },
	};
	env E = { .n = 0 };
	env_set(&E, LM_AFF_IV, "i", 2048);
	env_set(&E, LM_AFF_SHARD, "ub=2", 2);
	env_set(&E, LM_AFF_SHARD, "ub=9", -1);
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		lm_affine *e = rd(cases[k].text, 2);
		int64_t v;
		char err[256] = "";
		ck_assert_int_eq(lm_affine_eval(e, env_leaf, &E, &v, err,
						sizeof err), -1);
		ck_assert_str_eq(err, cases[k].msg);
		lm_affine_free(e);
	}
	/* no callback: every leaf is unknown; no error buffer is fine */
	lm_affine *e = rd("{'kind':'AffIVKind','axis':'i'}", 2);
	int64_t v;
	char small[8];
	ck_assert_int_eq(lm_affine_eval(e, NULL, NULL, &v, NULL, 0), -1);
	ck_assert_int_eq(lm_affine_eval(e, NULL, NULL, &v, small,
					sizeof small), -1);
	ck_assert_str_eq(small, "expr: n");
	lm_affine_free(e);
}
END_TEST

START_TEST(test_leaf_order)
{
	/* leaves are asked for in document order */
	static const char *text =
		"{'kind':'SumKind','n_terms':3,'terms':[{'kind':'AffExprKind',"
		"'terms':[{'idx':{'kind':'AffIVKind','axis':'b'},'coeff':1},"
		"{'idx':{'kind':'AffIVKind','axis':'a'},'coeff':1}],'c':0},"
		"{'kind':'MultKind','var':{'kind':'IntRuntimeValueKind',"
		"'regref':'c'},'scale':1},{'kind':'AffIVKind','axis':'a'}]}";
	env E = { .n = 0 };
	env_set(&E, LM_AFF_IV, "b", 1);
	env_set(&E, LM_AFF_IV, "a", 10);
	env_set(&E, LM_AFF_REG, "c", 100);
	ck_assert_int_eq(ev(text, &E), 121);
	ck_assert_int_eq(E.calls, 4);
}
END_TEST

START_TEST(test_const)
{
	static const struct { const char *text; int rc; int64_t v; } cases[] = {
		{ "{'kind':'AffExprKind','terms':[],'c':-5}", 0, -5 },
		{ "{'kind':'SumKind','n_terms':0,'terms':[]}", 0, 0 },
		{ "{'kind':'AffIVKind','axis':'i'}", -1, 0 },
		{ "{'kind':'CCGetRankKind','iteration_id':0,'channel_id':0}",
		  -1, 0 },
		{ "{'kind':'ShardIDKind','ub':1}", 0, 0 },
		{ "{'kind':'ShardIDKind','ub':2}", -1, 0 },
		{ "{'kind':'MultKind','var':{'kind':'AffIVKind','axis':'i'},"
		  "'scale':0}", 0, 0 },
		{ "{'kind':'MultKind','var':{'kind':'AffExprKind','terms':[],"
		  "'c':6},'scale':-7}", 0, -42 },
		{ "{'kind':'ModuloKind','numer':{'kind':'AffIVKind','axis':"
		  "'i'},'denom':1}", 0, 0 },
		{ "{'kind':'ModuloKind','numer':{'kind':'AffExprKind','terms':"
		  "[],'c':-7},'denom':3}", 0, 2 },
		{ "{'kind':'FloorDivKind','numer':{'kind':'AffExprKind',"
		  "'terms':[],'c':-7},'denom':2}", 0, -4 },
		{ "{'kind':'CCDivKind','numer':{'kind':'AffExprKind','terms':"
		  "[],'c':-1},'denom':4,'replica_groups_id':3}", 0, -1 },
		/* (i mod 4) floordiv 8 is 0 whatever i is */
		{ "{'kind':'FloorDivKind','numer':{'kind':'ModuloKind','numer':"
		  "{'kind':'AffIVKind','axis':'i'},'denom':4},'denom':8}", 0, 0 },
		{ "{'kind':'FloorDivKind','numer':{'kind':'ModuloKind','numer':"
		  "{'kind':'AffIVKind','axis':'i'},'denom':9},'denom':8}", -1, 0 },
		/* a shard id of 4: 2 * s + 1 mod 8 is 1 .. 7 */
		{ "{'kind':'ModuloKind','numer':{'kind':'AffExprKind','terms':"
		  "[{'idx':{'kind':'ShardIDKind','ub':4},'coeff':2}],'c':1},"
		  "'denom':8}", -1, 0 },
		{ "{'kind':'FloorDivKind','numer':{'kind':'AffExprKind','terms':"
		  "[{'idx':{'kind':'ShardIDKind','ub':4},'coeff':2}],'c':1},"
		  "'denom':8}", 0, 0 },
		/* a zero coefficient is no term */
		{ "{'kind':'AffExprKind','terms':[{'idx':{'kind':'AffIVKind',"
		  "'axis':'i'},'coeff':0}],'c':3}", 0, 3 },
		/* folding overflows: not a constant */
		{ "{'kind':'MultKind','var':{'kind':'AffExprKind','terms':[],"
		  "'c':9007199254740992},'scale':1024}", -1, 0 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		lm_affine *e = rd(cases[k].text, 2);
		int64_t v = 12345;
		ck_assert_msg(lm_affine_const(e, &v) == cases[k].rc, "%s",
			      cases[k].text);
		if (cases[k].rc == 0)
			ck_assert_msg(v == cases[k].v, "%s: %lld",
				      cases[k].text, (long long)v);
		else
			ck_assert_int_eq(v, 12345);
		lm_affine_free(e);
	}
}
END_TEST

/* ---- reader errors ------------------------------------------------------- */

typedef struct bad_case {
	int version;
	const char *text;   /* NULL: the JSON null pointer */
	const char *msg;
} bad_case;

#define AFF(terms, c) "{'kind':'AffExprKind','terms':" terms ",'c':" c "}"
#define IV(a) "{'kind':'AffIVKind','axis':'" a "'}"

static const bad_case bad[] = {
	{ 2, NULL, "expr: expected an expression object, got nothing" },
	{ 2, "[1]", "expr: expected an expression object, got an array" },
	{ 2, "{}", "expr: missing key 'kind'" },
	{ 2, "{'kind':3}", "expr: key 'kind': expected a string, got a number" },
	{ 2, "{'kind':'APIndex'}", "expr: unknown kind 'APIndex'" },
	{ 2, "{'kind':'ICmpKind'}", "expr: unknown kind 'ICmpKind'" },
	{ 2, "{'kind':'affexprkind','terms':[],'c':0}",
	  "expr: unknown kind 'affexprkind'" },
	{ 2, "{'kind':'AffIVKind','axis':'i','lo':0}",
	  "expr: unknown key 'lo' in AffIVKind" },
	{ 2, "{'kind':'AffIVKind'}", "expr: missing key 'axis'" },
	{ 2, "{'kind':'AffIVKind','axis':''}", "expr: key 'axis': empty name" },
	{ 2, "{'kind':'IntRuntimeValueKind','regref':5}",
	  "expr: key 'regref': expected a string, got a number" },
	{ 2, "{'kind':'ShardIDKind'}", "expr: missing key 'ub'" },
	{ 2, "{'kind':'ShardIDKind','ub':'4'}",
	  "expr: key 'ub': expected an integer, got a string" },
	{ 2, "{'kind':'ShardIDKind','ub':1.5}",
	  "expr: key 'ub': expected an integer, got 1.5" },
	{ 2, "{'kind':'ShardIDKind','ub':0}",
	  "expr: key 'ub': expected a positive integer, got 0" },
	{ 2, AFF("[]", "18014398509481984"),
	  "expr: key 'c': integer 18014398509481984 out of range "
	  "(beyond 2^53)" },
	{ 2, AFF("[]", "-1e300"),
	  "expr: key 'c': integer -1.0000000000000001e+300 out of range "
	  "(beyond 2^53)" },
	{ 2, "{'kind':'AffExprKind','terms':[]}", "expr: missing key 'c'" },
	{ 2, "{'kind':'AffExprKind','c':0}", "expr: missing key 'terms'" },
	{ 2, AFF("{}", "0"),
	  "expr: key 'terms': expected an array, got an object" },
	{ 2, AFF("[1]", "0"),
	  "expr.terms[0]: expected a term object, got a number" },
	{ 2, AFF("[{'idx':" IV("i") ",'coeff':1,'x':2}]", "0"),
	  "expr.terms[0]: unknown key 'x' in a term" },
	{ 2, AFF("[{'coeff':1}]", "0"), "expr.terms[0]: missing key 'idx'" },
	{ 2, AFF("[{'idx':" IV("i") "}]", "0"),
	  "expr.terms[0]: missing key 'coeff'" },
	{ 2, AFF("[{'idx':" IV("i") ",'coeff':true}]", "0"),
	  "expr.terms[0]: key 'coeff': expected an integer, got a boolean" },
	{ 2, AFF("[{'idx':{'kind':'SumKind','n_terms':0,'terms':[]},"
		 "'coeff':1}]", "0"),
	  "expr.terms[0].idx: kind 'SumKind' is not an index (AffIVKind, "
	  "IntRuntimeValueKind or ShardIDKind)" },
	{ 2, AFF("[{'idx':" IV("i") ",'coeff':1},{'idx':" IV("i")
		 ",'coeff':2}]", "0"),
	  "expr.terms[1]: the same index as an earlier term (terms hold "
	  "each index once)" },
	{ 2, AFF("[{'idx':{'kind':'Bogus'},'coeff':1}]", "0"),
	  "expr.terms[0].idx: unknown kind 'Bogus'" },
	{ 2, "{'kind':'SumKind','n_terms':3,'terms':[" IV("i") "]}",
	  "expr: n_terms is 3 but there are 1 terms" },
	{ 2, "{'kind':'SumKind','terms':[]}", "expr: missing key 'n_terms'" },
	{ 2, "{'kind':'SumKind','n_terms':-1,'terms':[]}",
	  "expr: key 'n_terms': expected a non-negative integer, got -1" },
	{ 2, "{'kind':'SumKind','n_terms':2,'terms':[" IV("i") ",null]}",
	  "expr.terms[1]: expected an expression object, got null" },
	{ 2, "{'kind':'MultKind','scale':2}", "expr: missing key 'var'" },
	{ 2, "{'kind':'MultKind','var':" IV("i") "}",
	  "expr: missing key 'scale'" },
	{ 2, "{'kind':'ModuloKind','numer':" IV("i") ",'denom':0}",
	  "expr: key 'denom': expected a positive integer, got 0" },
	{ 2, "{'kind':'FloorDivKind','numer':" IV("i") ",'denom':-2}",
	  "expr: key 'denom': expected a positive integer, got -2" },
	{ 2, "{'kind':'ModuloKind','denom':3}", "expr: missing key 'numer'" },
	{ 2, "{'kind':'CCDivKind','numer':" IV("i") ",'denom':2}",
	  "expr: missing key 'replica_groups_id'" },
	{ 2, "{'kind':'CCDivKind','numer':" IV("i") ",'denom':2,"
	  "'replica_groups_id':-1}",
	  "expr: key 'replica_groups_id': expected a non-negative integer, "
	  "got -1" },
	{ 2, "{'kind':'CCModKind','numer':" IV("i") ",'denom':2,"
	  "'replica_groups_id':0.5}",
	  "expr: key 'replica_groups_id': expected an integer, got 0.5" },
	{ 2, "{'kind':'CCGetRankKind','iteration_id':-1,'channel_id':0}",
	  "expr: key 'iteration_id': expected a non-negative integer, got -1" },
	{ 2, "{'kind':'CCGetRankKind','iteration_id':0}",
	  "expr: missing key 'channel_id'" },
	{ 2, "{'kind':'IndirectArgId','arg_id':-3}",
	  "expr: key 'arg_id': expected a non-negative integer, got -3" },
	{ 2, "{'kind':'ModuloKind','numer':{'kind':'MultKind','var':" AFF(
	  "[{'idx':{'kind':'ShardIDKind','ub':-1},'coeff':1}]", "0")
	  ",'scale':1},'denom':3}",
	  "expr.numer.var.terms[0].idx: key 'ub': expected a positive "
	  "integer, got -1" },
	/* version 1 */
	{ 1, "3", "expr: expected an expression object, got a number" },
	{ 1, AFF("[]", "0"), "expr: kind 'AffExprKind' is not in the version "
	  "1 form (only ShardIDKind is)" },
	{ 1, "{'kind':null}", "expr: key 'kind': expected a string, got null" },
	{ 1, "{'kind':'ShardIDKind','ub':0}",
	  "expr: key 'ub': expected a positive integer, got 0" },
	{ 1, "{'kind':'ShardIDKind','ub':2,'c':0}",
	  "expr: unknown key 'c' in ShardIDKind" },
	{ 1, "{'terms':[],'c':0,'x':1}",
	  "expr: unknown key 'x' in a version 1 expression" },
	{ 1, "{'terms':[]}", "expr: missing key 'c'" },
	{ 1, "{'c':0}", "expr: missing key 'terms'" },
	{ 1, "{'terms':7,'c':0}",
	  "expr: key 'terms': expected an array, got a number" },
	{ 1, "{'op':1,'terms':[],'c':0}",
	  "expr: key 'op': expected a string, got a number" },
	{ 1, "{'op':'CCDiv','op_param':2,'terms':[],'c':0}",
	  "expr: unknown op 'CCDiv' (Div, Mod, CCGetRank or IndirectArgId)" },
	{ 1, "{'op':'Mod','terms':[],'c':0}", "expr: missing key 'op_param'" },
	{ 1, "{'op_param':3,'terms':[],'c':0}",
	  "expr: key 'op_param' without 'op'" },
	{ 1, "{'op':'Div','op_param':0,'terms':[],'c':0}",
	  "expr: key 'op_param': expected a positive integer, got 0" },
	{ 1, "{'op':'CCGetRank','op_param':-4,'terms':[],'c':0}",
	  "expr: key 'op_param': expected a positive integer, got -4" },
	{ 1, "{'op':'IndirectArgId','op_param':-1}",
	  "expr: key 'op_param': expected a non-negative integer, got -1" },
	{ 1, "{'op':'IndirectArgId','op_param':1,'terms':[],'c':2}",
	  "expr: op 'IndirectArgId' with a non-zero affine body" },
	{ 1, "{'op':'IndirectArgId','op_param':1,'terms':[{'AxisLabel':'i',"
	  "'coef':1}]}",
	  "expr: op 'IndirectArgId' with a non-zero affine body" },
	{ 1, "{'terms':['i'],'c':0}",
	  "expr.terms[0]: expected a term object, got a string" },
	{ 1, "{'terms':[{'AxisLabel':'i','coeff':1}],'c':0}",
	  "expr.terms[0]: unknown key 'coeff' in a term" },
	{ 1, "{'terms':[{'coef':1}],'c':0}",
	  "expr.terms[0]: missing key 'AxisLabel'" },
	{ 1, "{'terms':[{'AxisLabel':'','coef':1}],'c':0}",
	  "expr.terms[0]: key 'AxisLabel': empty name" },
	{ 1, "{'terms':[{'AxisLabel':['i'],'coef':1}],'c':0}",
	  "expr.terms[0]: key 'AxisLabel': expected a string, got an array" },
	{ 1, "{'terms':[{'AxisLabel':'i'}],'c':0}",
	  "expr.terms[0]: missing key 'coef'" },
	{ 1, "{'terms':[{'AxisLabel':'i','coef':2.5}],'c':0}",
	  "expr.terms[0]: key 'coef': expected an integer, got 2.5" },
	{ 1, "{'terms':[{'AxisLabel':'i','coef':1},{'AxisLabel':'j','coef':1},"
	  "{'AxisLabel':'i','coef':1}],'c':0}",
	  "expr.terms[2]: the same AxisLabel as an earlier term (terms hold "
	  "each axis once)" },
	/* a v2 document read as v1 and the other way */
	{ 1, "{'kind':'ModuloKind','numer':" IV("i") ",'denom':3}",
	  "expr: kind 'ModuloKind' is not in the version 1 form (only "
	  "ShardIDKind is)" },
	{ 2, "{'op':'Mod','op_param':3,'terms':[],'c':0}",
	  "expr: missing key 'kind'" },
	/* versions */
	{ 0, "{}", "expr: version 0: should be 1 (old) or 2 (new)" },
	{ 3, AFF("[]", "0"), "expr: version 3: should be 1 (old) or 2 (new)" },
};

START_TEST(test_reader_errors)
{
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		cJSON *j = bad[k].text ? js(bad[k].text) : NULL;
		lm_affine *e = (lm_affine *)&e;   /* must become NULL */
		char err[512] = "";
		ck_assert_msg(lm_affine_from_json(&e, j, bad[k].version, err,
						  sizeof err) == -1,
			      "accepted: %s", bad[k].text);
		ck_assert_ptr_null(e);
		ck_assert_msg(!strcmp(err, bad[k].msg), "%s:\n got  %s\n want %s",
			      bad[k].text, err, bad[k].msg);
		/* no error buffer, and a short one */
		ck_assert_int_eq(lm_affine_from_json(&e, j, bad[k].version, NULL,
						     0), -1);
		ck_assert_int_eq(lm_affine_from_json(&e, j, bad[k].version, err,
						     5), -1);
		ck_assert_str_eq(err, "expr");
		cJSON_Delete(j);
	}
}
END_TEST

/* n MultKind nodes around an AffIVKind: n + 1 expressions deep. */
static cJSON *nest(int n)
{
	lm_buf b = LM_BUF_INIT;
	for (int i = 0; i < n; i++)
		lm_buf_puts(&b, "{\"kind\":\"MultKind\",\"scale\":1,\"var\":");
	lm_buf_puts(&b, "{\"kind\":\"AffIVKind\",\"axis\":\"i\"}");
	for (int i = 0; i < n; i++)
		lm_buf_puts(&b, "}");
	cJSON *j = cJSON_Parse(lm_buf_cstr(&b));
	ck_assert_ptr_nonnull(j);
	lm_buf_free(&b);
	return j;
}

START_TEST(test_depth)
{
	cJSON *ok = nest(LM_AFFINE_MAX_DEPTH - 1);
	cJSON *deep = nest(LM_AFFINE_MAX_DEPTH);
	lm_affine *e = NULL;
	char err[16384];
	int64_t v;
	ck_assert_int_eq(lm_affine_from_json(&e, ok, 2, err, sizeof err), 0);
	/* every tree read can be written, printed and read again */
	cJSON *w = lm_affine_to_json(e, 2);
	char *text = cJSON_PrintUnformatted(w);
	cJSON *again_j = cJSON_Parse(text);
	lm_affine *again = NULL;
	ck_assert_int_eq(lm_affine_from_json(&again, again_j, 2, err,
					     sizeof err), 0);
	ck_assert(lm_affine_equal(e, again));
	ck_assert_int_eq(lm_affine_eval(e, NULL, NULL, &v, err, sizeof err),
			 -1);
	ck_assert_int_eq(strncmp(err, "expr.var.var.var.", 17), 0);
	ck_assert_contains(err, ".var: no value for AffIVKind 'i'");
	lm_affine_free(again);
	cJSON_Delete(again_j);
	free(text);
	cJSON_Delete(w);
	lm_affine_free(e);

	ck_assert_int_eq(lm_affine_from_json(&e, deep, 2, err, sizeof err), -1);
	ck_assert_ptr_null(e);
	ck_assert_contains(err, ".var: nested deeper than 256 expressions");
	cJSON_Delete(ok);
	cJSON_Delete(deep);
}
END_TEST

/* ---- equal, copy, names -------------------------------------------------- */

START_TEST(test_equal_copy)
{
	lm_affine *all[N_V2_ALL];
	for (int i = 0; i < N_V2_ALL; i++)
		all[i] = rd(v2_all[i], 2);
	for (int i = 0; i < N_V2_ALL; i++) {
		lm_affine *c = lm_affine_copy(all[i]);
		ck_assert(lm_affine_equal(all[i], c));
		ck_assert(lm_affine_equal(c, all[i]));
		for (int k = 0; k < N_V2_ALL; k++)
			ck_assert_int_eq(lm_affine_equal(all[i], all[k]),
					 i == k);
		ck_assert(!lm_affine_equal(all[i], NULL));
		lm_affine_free(c);
	}
	ck_assert(lm_affine_equal(NULL, NULL));
	ck_assert_ptr_null(lm_affine_copy(NULL));
	lm_affine_free(NULL);
	for (int i = 0; i < N_V2_ALL; i++)
		lm_affine_free(all[i]);

	static const struct { const char *a, *b; int eq; } pairs[] = {
		/* affine terms are a set */
		{ AFF("[{'idx':" IV("i") ",'coeff':1},{'idx':" IV("j")
		      ",'coeff':2}]", "0"),
		  AFF("[{'idx':" IV("j") ",'coeff':2},{'idx':" IV("i")
		      ",'coeff':1}]", "0"), 1 },
		{ AFF("[{'idx':" IV("i") ",'coeff':1},{'idx':" IV("j")
		      ",'coeff':2}]", "0"),
		  AFF("[{'idx':" IV("j") ",'coeff':1},{'idx':" IV("i")
		      ",'coeff':2}]", "0"), 0 },
		{ AFF("[{'idx':" IV("i") ",'coeff':1},{'idx':" IV("k")
		      ",'coeff':0}]", "0"),
		  AFF("[{'idx':" IV("i") ",'coeff':1}]", "0"), 1 },
		{ AFF("[{'idx':" IV("i") ",'coeff':1}]", "0"),
		  AFF("[{'idx':" IV("i") ",'coeff':1}]", "1"), 0 },
		{ AFF("[{'idx':" IV("i") ",'coeff':1}]", "0"),
		  AFF("[{'idx':{'kind':'IntRuntimeValueKind','regref':'i'},"
		      "'coeff':1}]", "0"), 0 },
		/* sum operands are a list */
		{ "{'kind':'SumKind','n_terms':2,'terms':[" IV("i") "," IV("j")
		  "]}",
		  "{'kind':'SumKind','n_terms':2,'terms':[" IV("j") "," IV("i")
		  "]}", 0 },
		{ "{'kind':'ModuloKind','numer':" IV("i") ",'denom':3}",
		  "{'kind':'FloorDivKind','numer':" IV("i") ",'denom':3}", 0 },
		{ "{'kind':'ModuloKind','numer':" IV("i") ",'denom':3}",
		  "{'kind':'CCModKind','numer':" IV("i") ",'denom':3}", 1 },
		{ "{'kind':'CCDivKind','numer':" IV("i") ",'denom':3,"
		  "'replica_groups_id':1}",
		  "{'kind':'CCDivKind','numer':" IV("i") ",'denom':3,"
		  "'replica_groups_id':2}", 0 },
		{ "{'kind':'CCGetRankKind','iteration_id':0,'channel_id':1}",
		  "{'kind':'CCGetRankKind','iteration_id':1,'channel_id':0}", 0 },
	};
	for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
		lm_affine *a = rd(pairs[k].a, 2), *b = rd(pairs[k].b, 2);
		ck_assert_msg(lm_affine_equal(a, b) == pairs[k].eq, "%s vs %s",
			      pairs[k].a, pairs[k].b);
		ck_assert_int_eq(lm_affine_equal(b, a), pairs[k].eq);
		lm_affine_free(a);
		lm_affine_free(b);
	}
	/* the same expression read in both versions */
	lm_affine *a = rd(v1_all[2], 1);
	lm_affine *b = rd("{'kind':'FloorDivKind','numer':" AFF("[{'idx':"
			  IV("i") ",'coeff':1}]", "-7") ",'denom':4}", 2);
	ck_assert(lm_affine_equal(a, b));
	lm_affine_free(a);
	lm_affine_free(b);
}
END_TEST

typedef struct names {
	lm_buf seen;
	int stop_at;   /* stop with 7 at this call (0: never) */
	int calls;
	int rename;
} names;

static int on_name(void *ctx, int kind, char **name)
{
	names *N = ctx;
	N->calls++;
	lm_buf_printf(&N->seen, "%s%s:%s", N->seen.size ? " " : "",
		      kind == LM_AFF_IV ? "iv" : kind == LM_AFF_REG ? "reg"
		      : "?", *name);
	if (N->rename) {
		char *n = lm_xasprintf("c1.%s", *name);
		free(*name);
		*name = n;
	}
	return N->calls == N->stop_at ? 7 : 0;
}

START_TEST(test_each_name)
{
	static const char *text =
		"{'kind':'SumKind','n_terms':3,'terms':[{'kind':'MultKind','var':"
		AFF("[{'idx':" IV("i") ",'coeff':1},{'idx':{'kind':"
		    "'ShardIDKind','ub':2},'coeff':4},{'idx':" IV("j")
		    ",'coeff':2}]", "0")
		",'scale':2},{'kind':'ModuloKind','numer':{'kind':"
		"'IntRuntimeValueKind','regref':'r0'},'denom':4},{'kind':"
		"'CCDivKind','numer':{'kind':'CCGetRankKind','iteration_id':0,"
		"'channel_id':0},'denom':2,'replica_groups_id':0}]}";
	lm_affine *e = rd(text, 2), *orig = lm_affine_copy(e);
	names N = { LM_BUF_INIT, 0, 0, 0 };
	ck_assert_int_eq(lm_affine_each_name(e, on_name, &N), 0);
	ck_assert_str_eq(lm_buf_cstr(&N.seen), "iv:i iv:j reg:r0");
	lm_buf_free(&N.seen);

	N = (names){ LM_BUF_INIT, 2, 0, 0 };
	ck_assert_int_eq(lm_affine_each_name(e, on_name, &N), 7);
	ck_assert_int_eq(N.calls, 2);
	lm_buf_free(&N.seen);

	N = (names){ LM_BUF_INIT, 0, 0, 1 };
	ck_assert_int_eq(lm_affine_each_name(e, on_name, &N), 0);
	ck_assert(!lm_affine_equal(e, orig));
	char *t = wr(e, 2);
	ck_assert_contains(t, "'axis':'c1.i'");
	ck_assert_contains(t, "'axis':'c1.j'");
	ck_assert_contains(t, "'regref':'c1.r0'");
	free(t);
	lm_buf_free(&N.seen);
	lm_affine_free(e);
	lm_affine_free(orig);
}
END_TEST

START_TEST(test_numbers_print_exactly)
{
	/* cJSON prints some integers in exponent form; they read back, up
	** to 2^52 (beyond, its print may round: exact_text above) */
	static const char *const cs[] = { "1000000000000000", "-100000000000",
					  "4503599627370495", "123456789012345",
					  "-4503599627370495", "1e15" };
	for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
		char *text = lm_xasprintf("{'kind':'AffExprKind','terms':[],"
					  "'c':%s}", cs[k]);
		lm_affine *e = rd(text, 2), *again = NULL;
		cJSON *w = lm_affine_to_json(e, 2);
		char *printed = cJSON_PrintUnformatted(w), err[256];
		cJSON *p = cJSON_Parse(printed);
		int64_t v;
		ck_assert_int_eq(lm_affine_from_json(&again, p, 2, err,
						     sizeof err), 0);
		ck_assert(lm_affine_equal(e, again));
		ck_assert_int_eq(lm_affine_const(again, &v), 0);
		ck_assert_int_eq(v, (int64_t)strtod(cs[k], NULL));
		lm_affine_free(again);
		lm_affine_free(e);
		cJSON_Delete(p);
		cJSON_Delete(w);
		free(printed);
		free(text);
	}
}
END_TEST

/* The fuzz seeds are valid expressions (or lists of them) of their
** version: v1_*.json read as 1, v2_*.json as 2. */
START_TEST(test_seeds)
{
	char *dir = tu_srcpath("tests/fixtures/affine");
	DIR *d = opendir(dir);
	struct dirent *de;
	int files = 0, exprs = 0;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 8 || strcmp(de->d_name + n - 5, ".json"))
			continue;
		int version = de->d_name[1] - '0';
		char *p = lm_path_join(dir, de->d_name);
		char *text = tu_read(p);
		cJSON *j = cJSON_Parse(text), *c;
		ck_assert_msg(j != NULL, "%s", p);
		ck_assert(version == 1 || version == 2);
		cJSON *list = cJSON_IsArray(j) ? j : NULL;
		c = list ? list->child : j;
		for (; c; c = list ? c->next : NULL) {
			lm_affine *e;
			char err[512];
			ck_assert_msg(lm_affine_from_json(&e, c, version, err,
							  sizeof err) == 0,
				      "%s: %s", p, err);
			lm_affine_free(e);
			exprs++;
		}
		cJSON_Delete(j);
		free(text);
		free(p);
		files++;
	}
	closedir(d);
	free(dir);
	ck_assert_int_ge(files, 5);
	ck_assert_int_ge(exprs, 14);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("affine");
	TCase *tc = tcase_create("wire");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_v2_round_trip);
	tcase_add_test(tc, test_v1_round_trip);
	tcase_add_test(tc, test_v1_readings);
	tcase_add_test(tc, test_v1_not_representable);
	tcase_add_test(tc, test_reader_errors);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_numbers_print_exactly);
	tcase_add_test(tc, test_seeds);
	suite_add_tcase(s, tc);

	tc = tcase_create("eval");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_eval_every_kind);
	tcase_add_test(tc, test_floor_div_and_euclidean_mod);
	tcase_add_test(tc, test_compile_lin);
	tcase_add_test(tc, test_collective);
	tcase_add_test(tc, test_eval_errors);
	tcase_add_test(tc, test_leaf_order);
	tcase_add_test(tc, test_const);
	suite_add_tcase(s, tc);

	tc = tcase_create("tree");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_equal_copy);
	tcase_add_test(tc, test_each_name);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** tensormap.c -- step 6 of the link (seed 5e: buildMainTensorMap,
** copyTensorMap, verifyTensorMap): one tensor map for the linked module's
** external I/O, verified against every core's declarations, written as
** tensor-map.json into the link directory.
*/
#include "common.h"
#include "lk_int.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* Row-major layout letters: the trailing `rank` letters of NCHW. */
static const char *layout(int rank)
{
	static const char *const f[] = { "", "W", "HW", "CHW", "NCHW" };
	return rank >= 0 && rank <= 4 ? f[rank] : "ND";
}

/* [shape[0] partitions, the rest per partition] fits the SBUF? */
static int sbuf_ok(const lm_alloc *a, const lm_arch *arch)
{
	int64_t bytes = lm_dtype_size(a->dtype);
	if (a->n_shape < 1 || a->tensor_shape[0] < 1 ||
	    a->tensor_shape[0] > LM_PARTITIONS || !arch)
		return 0;
	for (int i = 1; i < a->n_shape; i++) {
		if (a->tensor_shape[i] > 0 &&
		    bytes > arch->sbuf_bytes / a->tensor_shape[i])
			return 0;
		bytes *= a->tensor_shape[i];
	}
	return bytes <= arch->sbuf_bytes;
}

static int popcount64(uint64_t v)
{
	int n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

/*
** verifyTensorMap: every layer name once; each entry agrees (dtype, shape)
** with every core that declared it; every core's external input is covered
** (exactly once, counting shared inputs once per declaring core).
*/
static int verify_tensor_map(lk_ctx *x, const lk_decl **decls)
{
	lk_report *r = x->rep;
	lm_strmap names;
	int rc = 0, covered = 0, declared = 0;
	lm_strmap_init(&names);
	for (int i = 0; i < r->n_tensors && !rc; i++) {
		lk_tensor_entry *t = &r->tensors[i];
		const lk_decl *d = decls[i];
		if (!lm_strmap_put(&names, t->layer_name, t)) {
			rc = lm_errc(x->err, LM_ECHECK, "", "tensor map",
				     "layer '%s' appears twice", t->layer_name);
			break;
		}
		t->verified = 1;
		if (!d)
			continue;
		if (!t->is_output)
			covered += popcount64(d->core_mask);
		for (int ci = 0; ci < x->n && !rc; ci++) {
			const lm_alloc *sa;
			int same;
			if (!(d->core_mask & (1ull << ci)))
				continue;
			sa = lm_strmap_lookup(&x->cores[ci].allocs_by_name, d->orig);
			same = sa && sa->dtype == t->dtype && sa->n_shape == t->n_shape;
			for (int k = 0; same && k < t->n_shape; k++)
				same = sa->tensor_shape[k] == t->sim_shape[k];
			if (!same)
				rc = lm_errc(x->err, LM_ECHECK, "", "tensor map",
					     "layer '%s' does not match core %lld's "
					     "declaration of '%s'", t->layer_name,
					     (long long)x->cores[ci].core, d->orig);
		}
	}
	if (!rc && x->n_decls > 0) {
		for (int ci = 0; ci < x->n; ci++) {
			const lm_module *m = x->cores[ci].src;
			for (int f = 0; f < m->n_functions; f++)
				for (int a = 0; a < m->functions[f].n_allocs; a++)
					declared += lm_tensorkind_is_ext_input(
						m->functions[f].allocs[a].kind);
		}
		if (covered != declared)
			rc = lm_errc(x->err, LM_ECHECK, "", "tensor map",
				     "covers %d external input declarations of "
				     "%d", covered, declared);
	}
	lm_strmap_free(&names);
	return rc;
}

/*
** Step 6 (seed buildMainTensorMap): an entry per external allocation of the
** linked module (ExternalInput* / ExternalOutput*; outputs demoted by
** fix_output_kind are gone): layer_name, sim_format, sim_shape, tf_file,
** sbuf_compatible, then verified.
*/
int build_main_tensor_map(lk_ctx *x)
{
	const lm_arch *arch = lm_arch_get(x->out->arch);
	lk_report *r = x->rep;
	const lk_decl **decls = NULL;
	int n_in = 0, rc;
	for (int f = 0; f < x->out->n_functions; f++) {
		const lm_function *fn = &x->out->functions[f];
		for (int a = 0; a < fn->n_allocs; a++) {
			const lm_alloc *al = &fn->allocs[a];
			int is_in = lm_tensorkind_is_ext_input(al->kind);
			const lk_decl *d = NULL;
			lk_tensor_entry *t;
			if (!is_in && !lm_tensorkind_is_ext_output(al->kind))
				continue;
			r->tensors = lm_xrealloc(r->tensors, (size_t)(r->n_tensors
						 + 1) * sizeof *r->tensors);
			decls = lm_xrealloc(decls, (size_t)(r->n_tensors + 1) *
					    sizeof *decls);
			t = &r->tensors[r->n_tensors];
			memset(t, 0, sizeof *t);
			t->layer_name = lm_xstrdup(al->name);
			t->sim_format = lm_xstrdup(layout(al->n_shape));
			t->n_shape = al->n_shape;
			t->sim_shape = lm_xcalloc((size_t)(al->n_shape ? al->n_shape
							   : 1), sizeof(int64_t));
			for (int k = 0; k < al->n_shape; k++)
				t->sim_shape[k] = al->tensor_shape[k];
			t->tf_file = lm_xasprintf("%s.npy", al->name);
			t->sbuf_compatible = sbuf_ok(al, arch);
			t->is_output = !is_in;
			t->dtype = al->dtype;
			if (fn->kind == LM_FK_DISPATCHER)
				d = lm_strmap_lookup(&x->main_origin, al->name);
			t->cores = lm_xcalloc((size_t)x->n, sizeof *t->cores);
			for (int ci = 0; ci < x->n; ci++)
				if (d ? (d->core_mask & (1ull << ci)) != 0
				      : lk_function_core(x, fn) == ci)
					t->cores[t->n_cores++] = x->cores[ci].core;
			decls[r->n_tensors++] = d;
			n_in += is_in;
		}
	}
	rc = verify_tensor_map(x, decls);
	free(decls);
	if (rc)
		return rc;
	lk_log(x, "build_main_tensor_map: %d entr%s (%d input%s, %d "
	       "output%s), verified", r->n_tensors,
	       r->n_tensors == 1 ? "y" : "ies", n_in, n_in == 1 ? "" : "s",
	       r->n_tensors - n_in, r->n_tensors - n_in == 1 ? "" : "s");
	return 0;
}

char *lk_tensor_map_json(const lk_report *r)
{
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	char *s, *out;
	cJSON_AddStringToObject(root, "name", r->name ? r->name : "");
	cJSON_AddItemToObject(root, "tensors", arr);
	for (int i = 0; i < r->n_tensors; i++) {
		const lk_tensor_entry *t = &r->tensors[i];
		cJSON *e = cJSON_CreateObject(), *sh = cJSON_CreateArray(),
			*cs = cJSON_CreateArray();
		cJSON_AddStringToObject(e, "layer_name", t->layer_name);
		cJSON_AddStringToObject(e, "kind", t->is_output ? "output"
					: "input");
		cJSON_AddStringToObject(e, "dtype", lm_dtype_name(t->dtype));
		cJSON_AddStringToObject(e, "sim_format", t->sim_format);
		for (int k = 0; k < t->n_shape; k++)
			cJSON_AddItemToArray(sh, cJSON_CreateNumber(
				(double)t->sim_shape[k]));
		cJSON_AddItemToObject(e, "sim_shape", sh);
		cJSON_AddStringToObject(e, "tf_file", t->tf_file);
		cJSON_AddBoolToObject(e, "sbuf_compatible", t->sbuf_compatible);
		cJSON_AddBoolToObject(e, "verified", t->verified);
		for (int k = 0; k < t->n_cores; k++)
			cJSON_AddItemToArray(cs, cJSON_CreateNumber(
				(double)t->cores[k]));
		cJSON_AddItemToObject(e, "cores", cs);
		cJSON_AddItemToArray(arr, e);
	}
	s = cJSON_Print(root);
	cJSON_Delete(root);
	out = lm_xasprintf("%s\n", s ? s : "{}");
	free(s);
	return out;
}

void lk_tensor_entries_free(lk_tensor_entry *t, int n)
{
	for (int i = 0; i < n; i++) {
		free(t[i].layer_name);
		free(t[i].sim_format);
		free(t[i].sim_shape);
		free(t[i].tf_file);
		free(t[i].cores);
	}
	free(t);
}

/* A whole number in [0, 2^53] held by j, else -1. */
static int64_t whole(const cJSON *j)
{
	double v = cJSON_IsNumber(j) ? j->valuedouble : -1;
	if (!(v >= 0 && v <= 9007199254740992.0) || v != (double)(int64_t)v)
		return -1;
	return (int64_t)v;
}

static char *str_of(const cJSON *o, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	return lm_xstrdup(cJSON_IsString(j) ? j->valuestring : "");
}

/* The numbers of array member key of o into *v (*n of them); -1 when one
** is not a whole number >= 0. */
static int whole_array(const cJSON *o, const char *key, int64_t **v, int *n)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
	int cnt = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0, k = 0;
	*v = lm_xcalloc((size_t)cnt + 1, sizeof **v);
	*n = 0;
	for (const cJSON *d = cnt ? a->child : NULL; d; d = d->next) {
		if (((*v)[k++] = whole(d)) < 0)
			return -1;
		*n = k;
	}
	return 0;
}

/* One entry of the "tensors" array. */
static int read_entry(const cJSON *t, lk_tensor_entry *e, const char *path,
		      lm_error *err)
{
	const cJSON *kd = cJSON_GetObjectItemCaseSensitive(t, "kind");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
	e->layer_name = str_of(t, "layer_name");
	e->sim_format = str_of(t, "sim_format");
	e->tf_file = str_of(t, "tf_file");
	e->is_output = cJSON_IsString(kd) && !strcmp(kd->valuestring, "output");
	e->dtype = cJSON_IsString(dt) ? lm_dtype_parse(dt->valuestring)
		: LM_DT_INVALID;
	e->sbuf_compatible = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		t, "sbuf_compatible"));
	e->verified = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t,
								   "verified"));
	if (whole_array(t, "sim_shape", &e->sim_shape, &e->n_shape))
		return lm_err(err, path, "", "entry '%.200s': sim_shape must "
			      "hold whole numbers >= 0", e->layer_name);
	if (whole_array(t, "cores", &e->cores, &e->n_cores))
		e->n_cores = 0; /* a report field: read when well-formed */
	return 0;
}

int lk_tensor_map_read(const char *path, lk_tensor_entry **out, int *n,
		       lm_error *err)
{
	char *text;
	size_t len;
	cJSON *j, *ts;
	lk_tensor_entry *e;
	int cnt, i = 0, rc = 0;
	*out = NULL;
	*n = 0;
	if ((rc = lm_read_file(path, &text, &len, err)) != 0)
		return rc;
	j = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
	free(text);
	ts = j ? cJSON_GetObjectItemCaseSensitive(j, "tensors") : NULL;
	if (!cJSON_IsArray(ts)) {
		cJSON_Delete(j);
		return lm_err(err, path, "", "%s", j ? "no \"tensors\" array"
			      : "malformed JSON");
	}
	cnt = cJSON_GetArraySize(ts);
	e = lm_xcalloc((size_t)cnt + 1, sizeof *e);
	for (const cJSON *t = ts->child; t && !rc; t = t->next)
		rc = read_entry(t, &e[i++], path, err);
	cJSON_Delete(j);
	if (rc) {
		lk_tensor_entries_free(e, i);
		return rc;
	}
	*out = e;
	*n = cnt;
	return 0;
}

/*
** tensormap.c -- step 6 of the link (seed 5e: buildMainTensorMap,
** copyTensorMap, verifyTensorMap): one tensor map for the linked module's
** external I/O, verified against every core's declarations, written as
** tensor-map.json into the link directory.
*/
#include "common.h"
#include "lk_int.h"

#include "safeio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static int parse_map(const char *text, size_t len, const char *path,
		     lk_tensor_entry **out, int *n, lm_error *err);

static void shape_text(int n, const int64_t *v, char *buf, size_t len)
{
	size_t k = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "," : "",
				      (long long)v[i]);
	if (k < len)
		snprintf(buf + k, len - k, "]");
}

static const char *mpath(const lk_core *c)
{
	return c->src->path && *c->src->path ? c->src->path
		: lm_module_display_name(c->src);
}

/* An external declaration the tensor map binds (not a view). */
static int is_ext_decl(const lm_alloc *a)
{
	return (lm_tensorkind_is_ext_input(a->kind) ||
		lm_tensorkind_is_ext_output(a->kind)) &&
		!a->alias_of && !a->has_remote;
}

/* Entry e of core c's map agrees with its allocation? */
static int check_core_entry(lk_ctx *x, lk_core *c, const lk_tensor_entry *e)
{
	const char *an = e->allocation ? e->allocation : e->layer_name;
	const lm_alloc *a = *an ? lm_module_find_alloc(c->src, an, NULL) : NULL;
	char s0[128], s1[128];
	if (!*e->layer_name)
		return lm_err(x->err, c->tmap_path, "", "an entry has no "
			      "layer_name");
	if (!a || !is_ext_decl(a))
		return lm_err(x->err, c->tmap_path, "", "entry '%s' contradicts "
			      "its module %s: %s '%s' is not an external input "
			      "or output there", e->layer_name, mpath(c),
			      a ? "allocation" : "no allocation", an);
	if (e->is_output != lm_tensorkind_is_ext_output(a->kind))
		return lm_err(x->err, c->tmap_path, "", "entry '%s' contradicts "
			      "its module %s: it is an %s but '%s' is an "
			      "external %s", e->layer_name, mpath(c),
			      e->is_output ? "output" : "input", an,
			      e->is_output ? "input" : "output");
	if (e->dtype != LM_DT_INVALID && e->dtype != a->dtype)
		return lm_err(x->err, c->tmap_path, "", "entry '%s' contradicts "
			      "its module %s: dtype %s but '%s' is %s",
			      e->layer_name, mpath(c), lm_dtype_name(e->dtype),
			      an, lm_dtype_name(a->dtype));
	int same = e->n_shape == a->n_shape;
	for (int k = 0; same && k < a->n_shape; k++)
		same = e->sim_shape[k] == a->tensor_shape[k];
	if (!same) {
		shape_text(e->n_shape, e->sim_shape, s0, sizeof s0);
		shape_text(a->n_shape, a->tensor_shape, s1, sizeof s1);
		return lm_err(x->err, c->tmap_path, "", "entry '%s' contradicts "
			      "its module %s: sim_shape %s but '%s' has "
			      "tensor_shape %s", e->layer_name, mpath(c), s0,
			      an, s1);
	}
	const lk_tensor_entry *had = lm_strmap_lookup(&c->tmap_by_alloc,
						      a->name);
	if (had)
		return lm_err(x->err, c->tmap_path, "", "allocation '%s' has "
			      "two entries ('%s' and '%s')", an,
			      had->layer_name, e->layer_name);
	lm_strmap_put(&c->tmap_by_alloc, a->name, (void *)e);
	return 0;
}

/*
** The seed's copyTensorMapForFunc: core c's own tensor map, the file
** tensor-map.json beside its module (absent: none), read under the rule of
** a module's files (inside its directory, symlinks leaving it refused, a
** regular file of at most LM_READ_MAX bytes) and checked against the
** module: every entry binds an external input or output of the module
** (its "allocation", else the allocation named like its layer_name) in
** the same direction, dtype and shape, every layer name once, and every
** external allocation has exactly one entry.
*/
static int read_core_tensor_map(lk_ctx *x, int ci, lm_strmap *dirs)
{
	lk_core *c = &x->cores[ci];
	const lm_module *m = c->src;
	const char *dir = m->dir && *m->dir ? m->dir : ".";
	char *real = NULL, *root = NULL, *text = NULL;
	size_t len = 0;
	struct stat st;
	lm_strmap layers;
	int rc;
	void *other;
	if (!m->path || !*m->path || x->opts->files)
		return 0;
	c->tmap_path = lm_path_join(dir, "tensor-map.json");
	if (lstat(c->tmap_path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		return lm_err(x->err, c->tmap_path, "", "%s", strerror(errno));
	}
	if (lm_strmap_get(dirs, dir, &other))
		return lm_err(x->err, c->tmap_path, "", "one tensor map beside "
			      "the modules of core %lld and core %lld (each "
			      "core's module needs a directory of its own)",
			      (long long)x->cores[(intptr_t)other - 1].core,
			      (long long)c->core);
	lm_strmap_put(dirs, dir, (void *)(intptr_t)(ci + 1));
	if ((rc = lm_module_file(dir, "tensor-map.json", mpath(c), "tensor map",
				 &real, &root, x->err)) == 0 &&
	    (rc = lm_module_file_read(root, real, &text, &len, NULL,
				      x->err)) == 0)
		rc = parse_map(text, len, c->tmap_path, &c->tmap, &c->n_tmap,
			       x->err);
	free(real);
	free(root);
	free(text);
	if (rc)
		return rc;
	lm_strmap_init(&layers);
	for (int i = 0; i < c->n_tmap && !rc; i++) {
		if (lm_strmap_get(&layers, c->tmap[i].layer_name, NULL))
			rc = lm_err(x->err, c->tmap_path, "", "layer '%s' "
				    "appears twice", c->tmap[i].layer_name);
		else if ((rc = check_core_entry(x, c, &c->tmap[i])) == 0)
			lm_strmap_put(&layers, c->tmap[i].layer_name, NULL);
	}
	lm_strmap_free(&layers);
	for (int f = 0; f < m->n_functions && !rc; f++)
		for (int a = 0; a < m->functions[f].n_allocs && !rc; a++) {
			const lm_alloc *al = &m->functions[f].allocs[a];
			if (is_ext_decl(al) &&
			    !lm_strmap_lookup(&c->tmap_by_alloc, al->name))
				rc = lm_err(x->err, c->tmap_path, "", "external "
					    "%s '%s' of %s has no entry",
					    lm_tensorkind_is_ext_output(al->kind)
					    ? "output" : "input", al->name,
					    mpath(c));
		}
	if (!rc)
		x->rep->n_core_maps++;
	return rc;
}

/*
** The seed's copyTensorMap for one entry of the linked map: the entry of
** allocation orig in the tensor maps of the cores of mask that have one.
** Every such core's entry must give the same layer name (a shared input).
** Returns the first, NULL when none; -1 in *rc on a disagreement.
*/
static const lk_tensor_entry *core_entry(lk_ctx *x, uint64_t mask,
					 const char *orig, int *rc)
{
	const lk_tensor_entry *first = NULL;
	int fci = -1;
	for (int ci = 0; ci < x->n; ci++) {
		const lk_tensor_entry *e;
		if (!(mask >> ci & 1) || !x->cores[ci].n_tmap)
			continue;
		e = lm_strmap_lookup(&x->cores[ci].tmap_by_alloc, orig);
		if (!e)
			continue;
		if (!first) {
			first = e;
			fci = ci;
		} else if (strcmp(first->layer_name, e->layer_name)) {
			*rc = lm_err(x->err, x->cores[ci].tmap_path, "",
				     "external input '%s' is layer '%s' here "
				     "but '%s' in core %lld's tensor map (%s)",
				     orig, e->layer_name, first->layer_name,
				     (long long)x->cores[fci].core,
				     x->cores[fci].tmap_path);
			return NULL;
		}
	}
	return first;
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
		/* a hand-off's inputs are inputs no more (plan_handoffs) */
		declared -= x->n_handoff_inputs;
		/* a modular link: each instance's inputs */
		if (x->net && x->inst_decls)
			declared = x->n_bound_inputs;
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
	int n_in = 0, n_from = 0, rc = 0;
	lm_strmap dirs, layers;
	lm_strmap_init(&dirs);
	for (int ci = 0; ci < x->n && !rc; ci++)
		rc = read_core_tensor_map(x, ci, &dirs);
	lm_strmap_free(&dirs);
	if (rc)
		return rc;
	lm_strmap_init(&layers);
	for (int f = 0; f < x->out->n_functions && !rc; f++) {
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
			if (d && d->has_inst_core)
				t->cores[t->n_cores++] = d->inst_core;
			for (int ci = 0; ci < x->n && !(d && d->has_inst_core);
			     ci++)
				if (d ? (d->core_mask & (1ull << ci)) != 0
				      : lk_function_core(x, fn) == ci)
					t->cores[t->n_cores++] = x->cores[ci].core;
			decls[r->n_tensors++] = d;
			n_in += is_in;
			if (d && x->rep->n_core_maps && !d->has_inst_core) {
				const lk_tensor_entry *ce =
					core_entry(x, d->core_mask, d->orig, &rc);
				const lk_tensor_entry *prev;
				void *pv;
				if (rc)
					break;
				if (ce) {
					lk_set(&t->layer_name, ce->layer_name);
					if (*ce->tf_file)
						lk_set(&t->tf_file, ce->tf_file);
					if (*ce->sim_format)
						lk_set(&t->sim_format,
						       ce->sim_format);
					if (ce->sbuf_given)
						t->sbuf_compatible =
							ce->sbuf_compatible;
					if (strcmp(ce->layer_name, al->name))
						t->allocation =
							lm_xstrdup(al->name);
					n_from++;
				}
				prev = lm_strmap_get(&layers, t->layer_name, &pv)
					? &r->tensors[(intptr_t)pv - 1] : NULL;
				lm_strmap_put(&layers, t->layer_name,
					      (void *)(intptr_t)r->n_tensors);
				if (prev) {
					rc = lm_err(x->err, "", "tensor map",
						    "layer '%s' names both %s "
						    "'%s' and %s '%s' of the "
						    "linked module (the cores' "
						    "tensor maps give one layer "
						    "name to two tensors)",
						    t->layer_name,
						    prev->is_output ? "output"
						    : "input", prev->allocation ?
						    prev->allocation :
						    prev->layer_name,
						    t->is_output ? "output"
						    : "input", al->name);
					break;
				}
			}
		}
	}
	lm_strmap_free(&layers);
	if (rc) {
		free(decls);
		return rc;
	}
	rc = verify_tensor_map(x, decls);
	free(decls);
	if (rc)
		return rc;
	lk_log(x, "build_main_tensor_map: %d entr%s (%d input%s, %d "
	       "output%s), verified; %d from the cores' own tensor maps "
	       "(copyTensorMapForFunc: %d tensor-map.json read)", r->n_tensors,
	       r->n_tensors == 1 ? "y" : "ies", n_in, n_in == 1 ? "" : "s",
	       r->n_tensors - n_in, r->n_tensors - n_in == 1 ? "" : "s",
	       n_from, x->rep->n_core_maps);
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
		if (t->allocation)
			cJSON_AddStringToObject(e, "allocation", t->allocation);
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
		free(t[i].allocation);
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
/* The keys of an entry with the JSON type each must have. */
static const struct { const char *key; int type; } entry_keys[] = {
	{ "layer_name", cJSON_String }, { "allocation", cJSON_String },
	{ "kind", cJSON_String }, { "dtype", cJSON_String },
	{ "sim_format", cJSON_String }, { "tf_file", cJSON_String },
	{ "sbuf_compatible", cJSON_True | cJSON_False },
	{ "verified", cJSON_True | cJSON_False },
	{ "sim_shape", cJSON_Array }, { "cores", cJSON_Array },
};

/*
** An entry's keys: each known one at most once and of its type, kind
** "input" or "output", a dtype lncsim knows, tf_file one plain file name.
** A key lncsim does not know is carried as the compiler wrote it (it
** changes nothing here).
*/
static int check_entry(const cJSON *t, const char *path, lm_error *err)
{
	const char *ln = "?";
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(t, "layer_name");
	if (!cJSON_IsObject(t))
		return lm_err(err, path, "", "an entry of \"tensors\" is not an "
			      "object");
	if (cJSON_IsString(j))
		ln = j->valuestring;
	for (const cJSON *x = t->child; x; x = x->next)
		for (const cJSON *y = x->next; y; y = y->next)
			if (x->string && y->string &&
			    !strcmp(x->string, y->string))
				return lm_err(err, path, "", "entry '%.200s': "
					      "key '%.60s' given twice", ln,
					      x->string);
	for (size_t k = 0; k < sizeof entry_keys / sizeof *entry_keys; k++) {
		j = cJSON_GetObjectItemCaseSensitive(t, entry_keys[k].key);
		if (j && !(j->type & 0xff & entry_keys[k].type))
			return lm_err(err, path, "", "entry '%.200s': %s must be "
				      "%s", ln, entry_keys[k].key,
				      entry_keys[k].type == cJSON_String ?
				      "a string" : entry_keys[k].type ==
				      cJSON_Array ? "an array" : "true or "
				      "false");
	}
	j = cJSON_GetObjectItemCaseSensitive(t, "kind");
	if (j && strcmp(j->valuestring, "input") &&
	    strcmp(j->valuestring, "output"))
		return lm_err(err, path, "", "entry '%.200s': kind '%.60s' is "
			      "not input or output", ln, j->valuestring);
	j = cJSON_GetObjectItemCaseSensitive(t, "dtype");
	if (j && lm_dtype_parse(j->valuestring) == LM_DT_INVALID)
		return lm_err(err, path, "", "entry '%.200s': unknown dtype "
			      "'%.60s'", ln, j->valuestring);
	j = cJSON_GetObjectItemCaseSensitive(t, "tf_file");
	if (j && *j->valuestring && !lm_path_component_ok(j->valuestring))
		return lm_err(err, path, "", "entry '%.200s': tf_file '%.200s' "
			      "is not one plain file name", ln, j->valuestring);
	return 0;
}

static int read_entry(const cJSON *t, lk_tensor_entry *e, const char *path,
		      lm_error *err)
{
	int rc = check_entry(t, path, err);
	if (rc) {
		e->layer_name = lm_xstrdup("");
		e->sim_format = lm_xstrdup("");
		e->tf_file = lm_xstrdup("");
		return rc;
	}
	const cJSON *kd = cJSON_GetObjectItemCaseSensitive(t, "kind");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(t, "allocation");
	e->layer_name = str_of(t, "layer_name");
	e->allocation = cJSON_IsString(al) && strcmp(al->valuestring,
						     e->layer_name) ?
		lm_xstrdup(al->valuestring) : NULL;
	e->sim_format = str_of(t, "sim_format");
	e->tf_file = str_of(t, "tf_file");
	e->is_output = cJSON_IsString(kd) && !strcmp(kd->valuestring, "output");
	e->dtype = cJSON_IsString(dt) ? lm_dtype_parse(dt->valuestring)
		: LM_DT_INVALID;
	const cJSON *sb = cJSON_GetObjectItemCaseSensitive(t,
							   "sbuf_compatible");
	e->sbuf_compatible = cJSON_IsTrue(sb);
	e->sbuf_given = cJSON_IsBool(sb);
	e->verified = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t,
								   "verified"));
	if (whole_array(t, "sim_shape", &e->sim_shape, &e->n_shape))
		return lm_err(err, path, "", "entry '%.200s': sim_shape must "
			      "hold whole numbers >= 0", e->layer_name);
	if (whole_array(t, "cores", &e->cores, &e->n_cores))
		e->n_cores = 0; /* a report field: read when well-formed */
	return 0;
}

/* The entries of a tensor map's text (path for errors). */
static int parse_map(const char *text, size_t len, const char *path,
		     lk_tensor_entry **out, int *n, lm_error *err)
{
	cJSON *j, *ts;
	lk_tensor_entry *e;
	int cnt, i = 0, rc = 0;
	*out = NULL;
	*n = 0;
	j = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
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

int lk_tensor_map_read(const char *path, lk_tensor_entry **out, int *n,
		       lm_error *err)
{
	char *text;
	size_t len;
	int rc;
	*out = NULL;
	*n = 0;
	if ((rc = lm_read_file(path, &text, &len, err)) != 0)
		return rc;
	rc = parse_map(text, len, path, out, n, err);
	free(text);
	return rc;
}

/*
** netlist.c -- the modular flow (seed initDefInfo / ModuleDefInfo,
** moveModulesAsFunctions): the module definitions and their instances
** read from <name>/hlo_netlist.json, the checks that hold them against the
** modules given, the step that turns each definition's external I/O into
** parameters bound per instance, and the per-instance reference modules
** the differential checker runs. docs/linker.md, "Module definitions with
** several instances", is the description.
*/
#include "common.h"
#include "json.h"
#include "lk_int.h"

#include <cjson/cJSON.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NETLIST_FILE "hlo_netlist.json"
#define NETLIST_MAX ((int64_t)1 << 20)
#define ACTUAL_MAX 200

void lk_netlist_free(lk_netlist *nl)
{
	if (!nl)
		return;
	for (int i = 0; nl->inst && i < nl->n_inst; i++) {
		for (int k = 0; k < nl->inst[i].n_args; k++) {
			free(nl->inst[i].formal[k]);
			free(nl->inst[i].actual[k]);
			free(nl->inst[i].linked_formal[k]);
		}
		free(nl->inst[i].formal);
		free(nl->inst[i].actual);
		free(nl->inst[i].linked_formal);
	}
	free(nl->inst);
	free(nl->path);
	free(nl->def_mod);
	memset(nl, 0, sizeof *nl);
}

/* "nc<digits>" / "sg<digits>" of length n; the number in *v. */
static int numbered(const char *s, size_t n, const char *prefix, int64_t *v)
{
	int64_t k = 0;
	if (n < 3 || n > 12 || strncmp(s, prefix, 2) != 0)
		return 0;
	if (s[2] == '0' && n > 3)
		return 0;
	for (size_t i = 2; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		k = k * 10 + (s[i] - '0');
	}
	if (v)
		*v = k;
	return 1;
}

/*
** A module's place in the per-core layout: its directory is
** <top>/nc<c>/sg<s>. Returns 1 with *top (malloc'd) and *sub ("nc<c>/sg<s>",
** malloc'd), else 0.
*/
static int layout_of(const lm_module *m, char **top, char **sub)
{
	const char *d = m->dir, *sg, *nc;
	size_t n;
	if (!d || !m->path || !*m->path)
		return 0;
	n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		n--;
	sg = d + n;
	while (sg > d && sg[-1] != '/')
		sg--;
	if (sg == d || !numbered(sg, (size_t)(d + n - sg), "sg", NULL))
		return 0;
	nc = sg - 1;
	while (nc > d && nc[-1] != '/')
		nc--;
	if (!numbered(nc, (size_t)(sg - 1 - nc), "nc", NULL))
		return 0;
	*top = nc == d ? lm_xstrdup(".") : lm_xasprintf("%.*s",
						      (int)(nc - 1 - d), d);
	if (!**top) {
		free(*top);
		*top = lm_xstrdup("/");
	}
	*sub = lm_xasprintf("%.*s", (int)(d + n - nc), nc);
	return 1;
}

/* Is s a name an instance may give its tensor? */
static const char *bad_actual(const char *s)
{
	size_t n = strlen(s);
	int64_t c;
	const char *dot;
	if (n == 0)
		return "is empty";
	if (n > ACTUAL_MAX)
		return "is longer than 200 characters";
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return "is '.' or '..'";
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
		      *p == '-'))
			return "holds a character other than letters, digits, "
			       "'_', '.' and '-' (it names a host file)";
	dot = strchr(s, '.');
	if (dot && numbered(s, (size_t)(dot - s), "nc", &c))
		return "starts with a core prefix nc<c>. (the linker's names)";
	return NULL;
}

/* Is every key of object o given once? Fills err at the second. */
static int keys_once(const char *path, const char *where, const cJSON *o,
		     lm_error *err)
{
	for (const cJSON *a = o->child; a; a = a->next)
		for (const cJSON *b = o->child; b != a; b = b->next)
			if (a->string && b->string &&
			    !strcmp(a->string, b->string))
				return lm_err(err, path, where, "key '%s' given "
					      "twice", a->string);
	return 0;
}

/* An integer member in [lo, hi]. */
static int int_member(const char *path, const char *where, const cJSON *o,
		      const char *key, int64_t lo, int64_t hi, int64_t *v,
		      lm_error *err)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	double d;
	if (!j)
		return lm_err(err, path, where, "key '%s' is missing", key);
	if (!cJSON_IsNumber(j))
		return lm_err(err, path, where, "%s must be an integer", key);
	d = j->valuedouble;
	/* in range before the cast: a double beyond int64 does not convert */
	if (!(d >= (double)lo && d <= (double)hi) || d != (double)(int64_t)d)
		return lm_err(err, path, where, "%s must be an integer in "
			      "[%lld, %lld] (got %.17g)", key, (long long)lo,
			      (long long)hi, d);
	*v = (int64_t)d;
	return 0;
}

/* Only the keys of names[] (NULL-ended). */
static int known_keys(const char *path, const char *where, const cJSON *o,
		      const char *const *names, lm_error *err)
{
	for (const cJSON *c = o->child; c; c = c->next) {
		int ok = 0;
		for (int i = 0; names[i] && !ok; i++)
			ok = c->string && !strcmp(c->string, names[i]);
		if (!ok)
			return lm_err(err, path, where, "unknown key '%s'",
				      c->string ? c->string : "");
	}
	return keys_once(path, where, o, err);
}

/* The external inputs and outputs of module m (the definition's
** parameters), in declaration order. */
static int is_param(const lm_alloc *a)
{
	return lm_tensorkind_is_ext_input(a->kind) ||
	       lm_tensorkind_is_ext_output(a->kind);
}

static const lm_alloc *find_param(const lm_module *m, const char *name)
{
	for (int f = 0; f < m->n_functions; f++)
		for (int a = 0; a < m->functions[f].n_allocs; a++)
			if (is_param(&m->functions[f].allocs[a]) &&
			    !strcmp(m->functions[f].allocs[a].name, name))
				return &m->functions[f].allocs[a];
	return NULL;
}

static int n_params(const lm_module *m)
{
	int k = 0;
	for (int f = 0; f < m->n_functions; f++)
		for (int a = 0; a < m->functions[f].n_allocs; a++)
			k += is_param(&m->functions[f].allocs[a]);
	return k;
}

/* One definition entry: id, its module (index into mods). */
static int read_definition(const char *path, const cJSON *e, int k,
			   lm_module *const *mods, int n, char **subs,
			   int *def_mod, int64_t *ids, lm_error *err)
{
	static const char *const keys[] = { "id", "subgraph", NULL };
	char where[64];
	const cJSON *sg;
	int64_t id, c;
	int rc, found = -1;
	snprintf(where, sizeof where, "definitions[%d]", k);
	if (!cJSON_IsObject(e))
		return lm_err(err, path, where, "must be an object");
	if ((rc = known_keys(path, where, e, keys, err)) ||
	    (rc = int_member(path, where, e, "id", 0, 63, &id, err)))
		return rc;
	sg = cJSON_GetObjectItemCaseSensitive(e, "subgraph");
	if (!sg)
		return lm_err(err, path, where, "key 'subgraph' is missing");
	if (!cJSON_IsString(sg))
		return lm_err(err, path, where, "subgraph must be a string");
	{
		const char *s = sg->valuestring, *slash = strchr(s, '/');
		if (!slash || !numbered(s, (size_t)(slash - s), "nc", &c) ||
		    !numbered(slash + 1, strlen(slash + 1), "sg", NULL))
			return lm_err(err, path, where, "subgraph '%.80s' is "
				      "not of the form nc<c>/sg<s>", s);
	}
	for (int j = 0; j < k; j++)
		if (ids[j] == id)
			return lm_err(err, path, where, "definition id %lld "
				      "given twice", (long long)id);
	for (int i = 0; i < n && found < 0; i++)
		if (subs[i] && !strcmp(subs[i], sg->valuestring))
			found = i;
	if (found < 0)
		return lm_err(err, path, where, "definition %lld: subgraph "
			      "'%s' is not the directory of any module given "
			      "(a missing definition)", (long long)id,
			      sg->valuestring);
	for (int j = 0; j < k; j++)
		if (def_mod[j] == found)
			return lm_err(err, path, where, "subgraph '%s' is "
				      "named by two definitions",
				      sg->valuestring);
	if (!mods[found]->has_core_id ||
	    lm_module_core_id(mods[found]) != c)
		return lm_err(err, path, where, "definition %lld: module %s "
			      "has neuron_core_id %lld (its directory says "
			      "%lld)", (long long)id, mods[found]->path,
			      (long long)lm_module_core_id(mods[found]),
			      (long long)c);
	ids[k] = id;
	def_mod[k] = found;
	return 0;
}

/* One instance entry: its definition, core and argument map. */
static int read_instance(const char *path, const cJSON *e, int k,
			 lm_module *const *mods, const int *def_mod,
			 const int64_t *ids, int n_defs, lk_instance *in,
			 lm_error *err)
{
	static const char *const keys[] = { "def", "core", "arguments", NULL };
	char where[64];
	const cJSON *args;
	const lm_module *m;
	int64_t d, c;
	int rc, di = -1, np;
	snprintf(where, sizeof where, "instances[%d]", k);
	if (!cJSON_IsObject(e))
		return lm_err(err, path, where, "must be an object");
	if ((rc = known_keys(path, where, e, keys, err)) ||
	    (rc = int_member(path, where, e, "def", 0, 63, &d, err)) ||
	    (rc = int_member(path, where, e, "core", 0, 63, &c, err)))
		return rc;
	for (int j = 0; j < n_defs && di < 0; j++)
		if (ids[j] == d)
			di = j;
	if (di < 0)
		return lm_err(err, path, where, "definition %lld is not "
			      "defined (a missing definition)", (long long)d);
	m = mods[def_mod[di]];
	args = cJSON_GetObjectItemCaseSensitive(e, "arguments");
	if (!args)
		return lm_err(err, path, where, "key 'arguments' is missing");
	if (!cJSON_IsObject(args))
		return lm_err(err, path, where, "arguments must be an object "
			      "of formal -> actual names");
	/* bounded before keys_once, which compares every pair */
	np = n_params(m);
	if (cJSON_GetArraySize(args) > np)
		return lm_err(err, path, where, "arguments: %d entries but "
			      "definition %lld has %d parameters (its external "
			      "inputs and outputs)", cJSON_GetArraySize(args),
			      (long long)d, np);
	if ((rc = keys_once(path, where, args, err)))
		return rc;
	in->def = di;
	in->core = c;
	in->formal = lm_xcalloc((size_t)np + 1, sizeof *in->formal);
	in->actual = lm_xcalloc((size_t)np + 1, sizeof *in->actual);
	in->linked_formal = lm_xcalloc((size_t)np + 1,
				       sizeof *in->linked_formal);
	for (const cJSON *a = args->child; a; a = a->next) {
		const char *why;
		if (!cJSON_IsString(a))
			return lm_err(err, path, where, "arguments: '%.80s' "
				      "must map to a string", a->string);
		if (!find_param(m, a->string))
			return lm_err(err, path, where, "arguments: '%.80s' is "
				      "not an external input or output of "
				      "definition %lld (%s)", a->string,
				      (long long)d, m->path);
		if ((why = bad_actual(a->valuestring)))
			return lm_err(err, path, where, "arguments: the actual "
				      "'%.80s' of '%s' %s", a->valuestring,
				      a->string, why);
		in->formal[in->n_args] = lm_xstrdup(a->string);
		in->actual[in->n_args++] = lm_xstrdup(a->valuestring);
	}
	for (int f = 0; f < m->n_functions; f++)
		for (int a = 0; a < m->functions[f].n_allocs; a++) {
			const lm_alloc *p = &m->functions[f].allocs[a];
			int bound = 0;
			for (int j = 0; j < in->n_args && !bound; j++)
				bound = !strcmp(in->formal[j], p->name);
			if (is_param(p) && !bound)
				return lm_err(err, path, where, "binds no tensor "
					      "to '%s', an external %s of "
					      "definition %lld", p->name,
					      lm_tensorkind_is_ext_input(p->kind)
					      ? "input" : "output", (long long)d);
		}
	return 0;
}

static int cmp_inst(const void *pa, const void *pb)
{
	const lk_instance *a = pa, *b = pb;
	if (a->def_id != b->def_id)
		return a->def_id < b->def_id ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The netlist's checks across instances: cores and actuals once each,
** every definition instantiated. */
static int check_instances(const char *path, lk_netlist *nl, lm_error *err)
{
	lm_strmap names;
	int rc = 0;
	lm_strmap_init(&names);
	for (int i = 0; i < nl->n_inst && !rc; i++) {
		lk_instance *in = &nl->inst[i];
		for (int j = 0; j < i && !rc; j++)
			if (nl->inst[j].core == in->core)
				rc = lm_err(err, path, "instances", "core %lld "
					    "runs two instances (instances[%d] "
					    "and instances[%d]): each instance "
					    "runs on a core of its own",
					    (long long)in->core, nl->inst[j].seq,
					    in->seq);
		for (int k = 0; k < in->n_args && !rc; k++)
			if (!lm_strmap_put(&names, in->actual[k], in))
				rc = lm_err(err, path, "instances", "the tensor "
					    "'%s' is bound by two arguments "
					    "(instances[%d]): each instance "
					    "has tensors of its own",
					    in->actual[k], in->seq);
	}
	for (int d = 0; d < nl->n_defs && !rc; d++) {
		int any = 0;
		for (int i = 0; i < nl->n_inst && !any; i++)
			any = nl->inst[i].def == d;
		if (!any)
			rc = lm_err(err, path, "definitions", "definition %lld "
				    "has no instance", (long long)nl->def_id[d]);
	}
	lm_strmap_free(&names);
	return rc;
}

static int parse_netlist(const char *path, const char *text, size_t len,
			 lm_module *const *mods, int n, char **subs,
			 lk_netlist *nl, lm_error *err)
{
	static const char *const keys[] = { "definitions", "instances", NULL };
	cJSON *j = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
	const cJSON *defs, *insts, *e;
	int rc = 0, k;
	if (!j)
		return lm_err(err, path, "", "malformed JSON");
	if (!cJSON_IsObject(j)) {
		rc = lm_err(err, path, "", "the netlist must be an object");
		goto done;
	}
	if ((rc = known_keys(path, "", j, keys, err)))
		goto done;
	defs = cJSON_GetObjectItemCaseSensitive(j, "definitions");
	insts = cJSON_GetObjectItemCaseSensitive(j, "instances");
	if (!cJSON_IsArray(defs) || !cJSON_IsArray(insts)) {
		rc = lm_err(err, path, "", "'definitions' and 'instances' must "
			    "be arrays");
		goto done;
	}
	nl->n_defs = cJSON_GetArraySize(defs);
	nl->n_inst = cJSON_GetArraySize(insts);
	if (nl->n_defs < 1 || nl->n_defs > 64 || nl->n_inst < 1 ||
	    nl->n_inst > 64) {
		rc = lm_err(err, path, "", "%d definitions and %d instances "
			    "(each must be 1 to 64: one instance per core)",
			    nl->n_defs, nl->n_inst);
		nl->n_defs = nl->n_inst = 0;
		goto done;
	}
	/* the seed's numDefs != modules.size() check */
	if (nl->n_defs != n) {
		rc = lm_err(err, path, "", "%d module definitions but %d "
			    "modules given (one module per definition)",
			    nl->n_defs, n);
		nl->n_defs = nl->n_inst = 0;
		goto done;
	}
	nl->def_mod = lm_xcalloc((size_t)nl->n_defs, sizeof *nl->def_mod);
	k = 0;
	cJSON_ArrayForEach(e, defs) {
		if ((rc = read_definition(path, e, k, mods, n, subs,
					  nl->def_mod, nl->def_id, err)))
			goto done;
		k++;
	}
	nl->inst = lm_xcalloc((size_t)nl->n_inst, sizeof *nl->inst);
	k = 0;
	cJSON_ArrayForEach(e, insts) {
		nl->inst[k].seq = k;
		if ((rc = read_instance(path, e, k, mods, nl->def_mod,
					nl->def_id, nl->n_defs, &nl->inst[k],
					err)))
			goto done;
		nl->inst[k].def_id = nl->def_id[nl->inst[k].def];
		k++;
	}
	if ((rc = check_instances(path, nl, err)))
		goto done;
	/* dispatcher order: by definition id, each one's instances in
	   netlist order, numbered from 0 */
	qsort(nl->inst, (size_t)nl->n_inst, sizeof *nl->inst, cmp_inst);
	for (int i = 0; i < nl->n_inst; i++)
		nl->inst[i].ordinal = i > 0 && nl->inst[i - 1].def_id ==
			nl->inst[i].def_id ? nl->inst[i - 1].ordinal + 1 : 0;
done:
	cJSON_Delete(j);
	return rc;
}

/* Are a and b one directory (two spellings of it: "d" and "./d")? */
static int same_dir(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!strcmp(a, b))
		return 1;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       S_ISDIR(sa.st_mode) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int lk_netlist_load(lm_module *const *mods, int n, const lm_fileset *files,
		    lk_netlist *nl, lm_error *err)
{
	char **subs, *top0 = NULL, *path = NULL, *text = NULL;
	struct stat st;
	size_t len;
	int rc = 0, laid = 0;

	memset(nl, 0, sizeof *nl);
	if (files || n < 1)
		return 0;
	subs = lm_xcalloc((size_t)n, sizeof *subs);
	for (int i = 0; i < n && !rc; i++) {
		char *top;
		if (!mods[i] || !layout_of(mods[i], &top, &subs[i]))
			continue;
		laid++;
		if (!top0)
			top0 = top;
		else {
			if (!same_dir(top, top0)) {
				char *p = lm_path_join(top, NETLIST_FILE);
				char *q = lm_path_join(top0, NETLIST_FILE);
				if (lstat(p, &st) == 0 || lstat(q, &st) == 0)
					rc = lm_err(err, mods[i]->path, "module",
						    "modular-flow metadata "
						    "hlo_netlist.json is present "
						    "but the modules given lie "
						    "under %s and %s (one netlist "
						    "links the modules beside it)",
						    top0, top);
				free(p);
				free(q);
			}
			free(top);
		}
	}
	if (!rc && top0) {
		path = lm_path_join(top0, NETLIST_FILE);
		if (lstat(path, &st) != 0) {
			free(path);
			path = NULL;
		} else if (laid != n) {
			for (int i = 0; i < n && !rc; i++)
				if (!subs[i])
					rc = lm_err(err, mods[i]->path, "module",
						    "modular-flow metadata %s is "
						    "present but this module is "
						    "not laid out as nc<c>/sg<s> "
						    "beside it", path);
		}
	}
	if (!rc && path && (rc = lm_read_file_max(path, NETLIST_MAX, &text,
						  &len, err)) == 0) {
		rc = parse_netlist(path, text, len, mods, n, subs, nl, err);
		if (!rc) {
			nl->path = path;
			path = NULL;
		}
	}
	if (rc)
		lk_netlist_free(nl);
	free(text);
	free(path);
	free(top0);
	for (int i = 0; i < n; i++)
		free(subs[i]);
	free(subs);
	return rc;
}

/* ---- the definitions a modular link accepts ------------------------------ */

typedef struct def_scan {
	const char *why;     /* the first thing refused */
	const char *what;    /* its name */
	int several;         /* the definition has several instances */
} def_scan;

static void scan_inst(const lm_inst *in, def_scan *s)
{
	if (s->why)
		return;
	if (in->op == LM_OP_COREBARRIER) {
		s->why = "holds the CoreBarrier";
		s->what = in->name;
	} else if (in->op == LM_OP_CALL) {
		s->why = "holds the Call";
		s->what = in->name;
	} else if (s->several && (in->n_wait || in->n_update)) {
		s->why = "waits on or signals a semaphore in";
		s->what = in->name;
	}
	for (int b = 0; b < in->n_blocks; b++)
		for (int i = 0; i < in->blocks[b].n_insts; i++)
			scan_inst(&in->blocks[b].insts[i], s);
}

/* Does the alias_of chain of al reach a parameter of m? (An instance's
** tensor is bound whole to its parameter: a view of the parameter would
** still name the definition's own copy.) */
static int views_param(const lm_module *m, const lm_alloc *al)
{
	for (int hops = 0; al && al->alias_of && hops < 64; hops++) {
		const lm_alloc *t = NULL;
		for (int f = 0; f < m->n_functions && !t; f++)
			for (int a = 0; a < m->functions[f].n_allocs && !t; a++)
				if (!strcmp(m->functions[f].allocs[a].name,
					    al->alias_of))
					t = &m->functions[f].allocs[a];
		if (t && is_param(t))
			return 1;
		al = t;
	}
	return 0;
}

/*
** What lncsim links of a definition: no CoreBarrier (its instances run
** on cores its barriers do not list), no Call of a helper function (it
** runs unbound, on the definition's core), no remote_local_target view, no
** view of a parameter (its Calls bind the parameter, not the view) and
** no name-matched hand-off (hand-offs between instances are not linked);
** with several instances, no semaphore wait or signal and no internal
** DRAM tensor (the instances run at once on their cores and would share
** them).
*/
int lk_netlist_check_defs(const lk_netlist *nl, lm_module *const *mods,
			  lm_error *err)
{
	for (int d = 0; d < nl->n_defs; d++) {
		const lm_module *m = mods[nl->def_mod[d]];
		def_scan s = { NULL, NULL, 0 };
		int k = 0;
		for (int i = 0; i < nl->n_inst; i++)
			k += nl->inst[i].def == d;
		s.several = k > 1;
		for (int f = 0; f < m->n_functions && !s.why; f++) {
			const lm_function *fn = &m->functions[f];
			for (int a = 0; a < fn->n_allocs && !s.why; a++) {
				const lm_alloc *al = &fn->allocs[a];
				if (al->has_remote) {
					s.why = "holds the remote_local_target "
						"view";
					s.what = al->name;
				} else if (views_param(m, al)) {
					s.why = "holds the parameter view "
						"(alias_of)";
					s.what = al->name;
				} else if (s.several &&
					   (al->kind == LM_TK_INTERNAL ||
					    al->kind == LM_TK_INTERNAL_INTERFACE) &&
					   lm_alloc_class(al) == 0) {
					s.why = "holds the internal DRAM tensor";
					s.what = al->name;
				}
			}
			for (int b = 0; b < fn->n_blocks && !s.why; b++)
				for (int i = 0; i < fn->blocks[b].n_insts; i++)
					scan_inst(&fn->blocks[b].insts[i], &s);
		}
		if (s.why)
			return lm_err(err, m->path, "module", "definition %lld "
				      "(%d instance%s) %s '%s': %s",
				      (long long)nl->def_id[d], k,
				      k == 1 ? "" : "s", s.why, s.what ? s.what : "?",
				      strstr(s.why, "alias_of") ? "an "
				      "instance's Call binds the parameter, "
				      "not its views (not linked by lncsim)" :
				      strstr(s.why, "Call") ? "the function "
				      "it calls is the definition's own, "
				      "run on the definition's core with no "
				      "instance's bindings (not linked by "
				      "lncsim)" :
				      s.several && !strstr(s.why, "Core") &&
				      !strstr(s.why, "remote") ?
				      "its instances run at once on their "
				      "cores and would share it (not linked "
				      "by lncsim)" : "a definition of a "
				      "modular link is self-contained: "
				      "hand-offs and barriers between "
				      "instances are not linked by lncsim");
	}
	return 0;
}

/* ---- moveModulesAsFunctions -------------------------------------------- */

/* Every allocation and memory location name of m into names. */
static void module_names(const lm_module *m, lm_strmap *names)
{
	for (int f = 0; f < m->n_functions; f++)
		for (int a = 0; a < m->functions[f].n_allocs; a++) {
			const lm_alloc *al = &m->functions[f].allocs[a];
			lm_strmap_put(names, al->name, (void *)al);
			for (int l = 0; l < al->n_memlocs; l++)
				lm_strmap_put(names, al->memlocs[l].name,
					      (void *)al);
		}
}

/* The declared parameter of core ci named formal (src). */
static const lm_alloc *src_param(lk_ctx *x, int ci, const char *formal)
{
	return find_param(x->cores[ci].src, formal);
}

/* Formals back from main into their definition's function nc<d>, as
** Internal allocations (parameters: each Call binds them). */
static void move_formals(lk_ctx *x)
{
	lm_function *mf = &x->out->functions[0];
	int keep = 0;
	for (int a = 0; a < mf->n_allocs; a++) {
		lm_alloc *al = &mf->allocs[a];
		const lk_decl *d = lm_strmap_lookup(&x->main_origin, al->name);
		lm_function *df = NULL;
		for (int ci = 0; d && ci < x->n && !df; ci++)
			if (d->core_mask == 1ull << ci)
				df = lk_core_function(x, ci);
		if (!df) {
			mf->allocs[keep++] = *al;
			continue;
		}
		al->kind = LM_TK_INTERNAL;
		if (al->extra)
			cJSON_DeleteItemFromObjectCaseSensitive(al->extra,
								"partial_output");
		df->allocs = lm_xrealloc(df->allocs, (size_t)(df->n_allocs + 1) *
					 sizeof *df->allocs);
		df->allocs[df->n_allocs++] = *al;
		lm_strmap_put(&x->main_origin, al->name, NULL);
	}
	mf->n_allocs = keep;
}

/* The instance's tensor for formal k: a copy of the declared parameter
** under the actual name (memory locations: the actual, or
** <actual>.<location> when the parameter has several). */
static int add_actual(lk_ctx *x, int ci, lk_instance *in, int k,
		      lm_strmap *names)
{
	lm_function *mf = &x->out->functions[0];
	const lm_alloc *sa = src_param(x, ci, in->formal[k]);
	const char *lf = lm_strmap_lookup(&x->cores[ci].alloc_ref,
					  in->formal[k]);
	lm_alloc na;
	lk_decl *d;
	if (!sa)
		return lm_errc(x->err, LM_EINTERNAL, x->net->path, "instances",
			       "parameter '%s' of definition %lld not found",
			       in->formal[k], (long long)in->def_id);
	lm_alloc_copy(&na, sa);
	lk_set(&na.name, in->actual[k]);
	for (int l = 0; l < na.n_memlocs; l++) {
		char *ln = na.n_memlocs == 1 ? lm_xstrdup(in->actual[k]) :
			lm_xasprintf("%s.%s", in->actual[k], na.memlocs[l].name);
		free(na.memlocs[l].name);
		na.memlocs[l].name = ln;
	}
	for (int l = -1; l < na.n_memlocs; l++) {
		const char *nm = l < 0 ? na.name : na.memlocs[l].name;
		if (l >= 0 && !strcmp(nm, na.name))
			continue;
		if (!lm_strmap_put(names, nm, NULL)) {
			int rc = lm_err(x->err, x->net->path, "instances",
					"instance call_def_%lld_instance_%d: its "
					"tensor '%s' (for '%s') is already the "
					"name of an allocation or memory "
					"location of the linked module",
					(long long)in->def_id, in->ordinal, nm,
					in->formal[k]);
			lm_alloc_clear(&na);
			return rc;
		}
	}
	mf->allocs = lm_xrealloc(mf->allocs, (size_t)(mf->n_allocs + 1) *
				 sizeof *mf->allocs);
	mf->allocs[mf->n_allocs++] = na;
	d = &x->inst_decls[x->n_inst_decls++];
	d->name = lk_str(x, "%s", in->actual[k]);
	d->orig = sa->name;
	d->core_mask = 1ull << ci;
	d->has_inst_core = 1;
	d->inst_core = in->core;
	lm_strmap_put(&x->main_origin, d->name, d);
	x->n_bound_inputs += lm_tensorkind_is_ext_input(sa->kind);
	in->linked_formal[k] = lm_xstrdup(lf ? lf : in->formal[k]);
	return 0;
}

/*
** The seed's moveModulesAsFunctions (funcArgs): in a modular link each
** definition's external inputs and outputs are its parameters -- they
** leave main for the definition's function nc<d> as Internal
** allocations -- and every instance gets its own tensors in main, one per
** parameter, under the names the netlist gives; add_fn_call's Call of the
** instance binds them (its `arguments`). Runs after build_main_memlocs.
*/
int move_modules_as_functions(lk_ctx *x)
{
	lk_netlist *nl = x->net;
	lm_strmap names;
	int n_args = 0, rc = 0;
	if (!nl) {
		lk_log(x, "move_modules_as_functions: no module definition "
		       "with instances (one instance per module, no "
		       "arguments)");
		return 0;
	}
	move_formals(x);
	lm_strmap_init(&names);
	module_names(x->out, &names);
	for (int i = 0; i < nl->n_inst; i++)
		n_args += nl->inst[i].n_args;
	x->inst_decls = lm_xcalloc((size_t)(n_args ? n_args : 1),
				   sizeof *x->inst_decls);
	for (int i = 0; i < nl->n_inst && !rc; i++) {
		lk_instance *in = &nl->inst[i];
		int ci = -1;
		for (int k = 0; k < x->n && ci < 0; k++)
			if (x->def_of[k] == in->def)
				ci = k;
		for (int k = 0; k < in->n_args && !rc; k++)
			rc = add_actual(x, ci, in, k, &names);
	}
	lm_strmap_free(&names);
	if (rc)
		return rc;
	x->rep->n_main_allocs = x->out->functions[0].n_allocs;
	lk_log(x, "move_modules_as_functions: %d instance%s of %d "
	       "definition%s, %d argument%s bound (funcArgs: each "
	       "definition's external I/O are its parameters, each "
	       "instance's tensors in main)", nl->n_inst,
	       nl->n_inst == 1 ? "" : "s", nl->n_defs,
	       nl->n_defs == 1 ? "" : "s", n_args, n_args == 1 ? "" : "s");
	return 0;
}

/* ---- the per-instance reference ------------------------------------------ */

static const char *renamed(const lm_strmap *map, const char *s)
{
	const char *v = s ? lm_strmap_lookup(map, s) : NULL;
	return v ? v : s;
}

static void rename_args(lm_inst *in, lm_arg *a, int n, const lm_strmap *map)
{
	for (int i = 0; i < n; i++) {
		const char *v = renamed(map, a[i].memsetref);
		if (v != a[i].memsetref)
			lm_inst_set_str(in, &a[i].memsetref, v);
	}
}

static void rename_blocks(lm_block *bs, int nb, const lm_strmap *map)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			lm_inst *in = &bs[b].insts[i];
			rename_args(in, in->ins, in->n_ins, map);
			rename_args(in, in->outs, in->n_outs, map);
			/* the tensors it carries in JSON (indirection_ins) */
			lm_inst_rename_json_refs(in, map, NULL);
			for (int k = 0; k < in->n_func_args + in->n_func_outs;
			     k++) {
				lm_kv *kv = k < in->n_func_args ?
					&in->func_args[k] :
					&in->func_outs[k - in->n_func_args];
				const char *v = renamed(map, kv->value);
				if (v != kv->value)
					lm_inst_set_str(in, &kv->value, v);
			}
			rename_blocks(in->blocks, in->n_blocks, map);
		}
}

/*
** The reference of a modular link: one module per instance, the
** definition's module run on the instance's core with its parameters
** renamed to the instance's tensors -- what the instance computes when
** nothing is linked. Only allocation names change (memory locations keep
** theirs: each module is its own namespace).
*/
static lm_module *instance_module(const lm_module *def,
				  const lk_instance *in)
{
	lm_module *m = lm_module_clone(def);
	lm_strmap map;
	lm_strmap_init(&map);
	for (int k = 0; k < in->n_args; k++)
		lm_strmap_put(&map, in->formal[k], in->actual[k]);
	m->has_core_id = 1;
	m->neuron_core_id = in->core;
	for (int f = 0; f < m->n_functions; f++) {
		lm_function *fn = &m->functions[f];
		if (fn->has_core_id)
			fn->neuron_core_id = in->core;
		for (int a = 0; a < fn->n_allocs; a++) {
			lm_alloc *al = &fn->allocs[a];
			const char *v = renamed(&map, al->name);
			if (v != al->name)
				lk_set(&al->name, v);
			if (al->alias_of && (v = renamed(&map, al->alias_of)) !=
			    al->alias_of)
				lk_set(&al->alias_of, v);
		}
		rename_blocks(fn->blocks, fn->n_blocks, &map);
	}
	lm_strmap_free(&map);
	return m;
}

int lk_instance_modules(lm_module *const *mods, int n, lm_module ***out,
			int *n_out, lm_error *err)
{
	lk_netlist nl;
	int rc;
	*out = NULL;
	*n_out = 0;
	if ((rc = lk_netlist_load(mods, n, NULL, &nl, err)) != 0)
		return rc;
	if (nl.n_inst == 0)
		return 0;
	*out = lm_xcalloc((size_t)nl.n_inst, sizeof **out);
	for (int i = 0; i < nl.n_inst; i++)
		(*out)[i] = instance_module(mods[nl.def_mod[nl.inst[i].def]],
					    &nl.inst[i]);
	*n_out = nl.n_inst;
	lk_netlist_free(&nl);
	return 0;
}

/*
** link.c -- lk_link, the driver of the bir_linker model (seed 2, run()):
** checks the inputs, makes the new "<name>/sgLnk" module with its
** dispatcher function, runs the link steps in order (each one can be
** skipped), verifies the result. The steps live in their own files and
** never call back into this one; what they share is in ctx.c.
*/
#include "common.h"
#include "lk_int.h"
#include "verify.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const step_names[LK_N_STEPS] = {
	"copy_modules_as_functions",
	"copy_allocs",
	"remap_registers",
	"fpass_insert_returns",
	"fpass_insert_switch_queue_instances",
	"build_main_memlocs",
	"move_modules_as_functions",
	"build_main_aliases",
	"fix_output_kind",
	"build_main_tensor_map",
	"init_queues",
	"add_fn_call",
	"setup_link_dir",
	"renumber_core_barriers",
	"check_barrier_order",
	"post_link_mmt_report",
	"verify",
};

const char *lk_step_name(lk_step s)
{
	return (int)s >= 0 && s < LK_N_STEPS ? step_names[s] : NULL;
}

/* Comma-separated step names -> skip bits. */
int lk_parse_skip(const char *list, unsigned *mask, lm_error *err)
{
	const char *p = list ? list : "";
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int found = 0;
		if (len == strlen("run_function_passes") &&
		    !strncmp(p, "run_function_passes", len)) {
			*mask |= LK_SKIP(LK_STEP_FPASS_INSERT_RETURNS) |
				LK_SKIP(LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES);
			found = 1;
		}
		for (int s = 0; s < LK_N_STEPS && !found; s++)
			if (strlen(step_names[s]) == len &&
			    !strncmp(p, step_names[s], len)) {
				*mask |= LK_SKIP(s);
				found = 1;
			}
		if (!found && len > 0) {
			lm_buf b = LM_BUF_INIT;
			for (int s = 0; s < LK_N_STEPS; s++)
				lm_buf_printf(&b, "%s%s", s ? ", " : "",
					      step_names[s]);
			lm_err(err, "", "", "unknown step '%.*s' (steps: %s, "
			       "run_function_passes)", (int)len, p,
			       lm_buf_cstr(&b));
			lm_buf_free(&b);
			return LM_EINPUT;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* ---- report ------------------------------------------------------------ */

void lk_mmt_report_free(lk_mmt_report *r)
{
	if (!r)
		return;
	free(r->arch);
	for (int i = 0; i < r->n_rows; i++)
		free(r->rows[i].function);
	free(r->rows);
	free(r->total.function);
	memset(r, 0, sizeof *r);
}

void lk_report_free(lk_report *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->base_name);
	free(r->cores);
	free(r->collisions);
	lk_tensor_entries_free(r->tensors, r->n_tensors);
	for (int i = 0; i < r->n_artifacts; i++) {
		free(r->artifacts[i].src);
		free(r->artifacts[i].root);
		free(r->artifacts[i].dst);
	}
	free(r->artifacts);
	lk_mmt_report_free(&r->mmt);
	memset(r, 0, sizeof *r);
}

/* ---- inputs ------------------------------------------------------------ */

static int cmp_core(const void *pa, const void *pb)
{
	const lk_core *a = pa, *b = pb;
	return a->core < b->core ? -1 : a->core > b->core;
}

static const char *mpath(const lm_module *m)
{
	return m->path && *m->path ? m->path : lm_module_display_name(m);
}

/*
** The seed's diagnostics of run() and initDefInfo: the working directory,
** the definition table -- the netlist's, or one definition per input
** module, its id the module's core (as in call_def_<c>), one instance
** each.
*/
static void log_def_info(lk_ctx *x)
{
	char cwd[4096];
	if (!x->log)
		return;
	lk_log(x, "bir_linker cwd: %s", getcwd(cwd, sizeof cwd) ? cwd : "?");
	if (x->net) {
		lk_log(x, "Modular flow metadata file %s", x->net->path);
		lk_log(x, "Num Module Definitions %d", x->net->n_defs);
		for (int i = 0; i < x->net->n_inst; i++) {
			const lk_instance *in = &x->net->inst[i];
			int ci = 0;
			while (ci < x->n && x->def_of[ci] != in->def)
				ci++;
			lk_log(x, "Module Instance call_def_%lld_instance_%d "
			       "DefID %lld (%s) on core %lld, %d argument%s",
			       (long long)in->def_id, in->ordinal,
			       (long long)in->def_id, mpath(x->cores[ci].src),
			       (long long)in->core, in->n_args,
			       in->n_args == 1 ? "" : "s");
		}
		return;
	}
	lk_log(x, "Num Module Definitions %d", x->n);
	for (int i = 0; i < x->n; i++)
		lk_log(x, "Module Instance call_def_%lld_instance_0 DefID %lld "
		       "(%s)", (long long)x->cores[i].core,
		       (long long)x->cores[i].core, mpath(x->cores[i].src));
}

/*
** The seed's loadJsonFile("hlo_netlist.json") + initDefInfo: the module
** definitions and their instances when the modules lie beside a netlist
** (netlist.c); none else. x->cores is still in the order of mods.
*/
static int load_netlist(lk_ctx *x, lm_module *const *mods, int n)
{
	lk_netlist *nl = lm_xcalloc(1, sizeof *nl);
	int rc = lk_netlist_load(mods, n, x->opts->files, nl, x->err);
	if (!rc && nl->n_inst > 0)
		rc = lk_netlist_check_defs(nl, mods, x->err);
	if (rc || nl->n_inst == 0) {
		lk_netlist_free(nl);
		free(nl);
		return rc;
	}
	x->net = nl;
	x->rep->n_defs = nl->n_defs;
	x->rep->n_instances = nl->n_inst;
	return 0;
}

/*
** The definition table (ModuleDefInfo): with a netlist, each module is
** the definition naming its directory, keyed by the definition's id (so
** two subgraphs of one core are two definitions); without one, each
** module is a definition of its own keyed by its core, which must then
** be distinct. x->cores is in the order of mods.
*/
static int key_definitions(lk_ctx *x, lm_module *const *mods, int n)
{
	if (x->net) {
		for (int d = 0; d < x->net->n_defs; d++)
			x->cores[x->net->def_mod[d]].core = x->net->def_id[d];
		return 0;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (lm_module_core_id(mods[j]) ==
			    lm_module_core_id(mods[i]))
				return lm_err(x->err, mpath(mods[i]), "module",
					      "duplicate neuron_core_id %lld "
					      "(also in %s): two modules of one "
					      "core link only as module "
					      "definitions of an "
					      "hlo_netlist.json beside them",
					      (long long)lm_module_core_id(
						      mods[i]),
					      mpath(mods[j]));
	for (int i = 0; i < n; i++)
		x->cores[i].core = lm_module_core_id(mods[i]);
	return 0;
}

/*
** The inputs (seed initDefInfo): each passes the per-core verifier, none is
** already linked, the arch agrees, and with N > 1 every module carries a
** neuron_core_id; then the definition table (key_definitions). Fills
** x->cores in definition order (core order without a netlist).
*/
static int check_inputs(lk_ctx *x, lm_module *const *mods, int n)
{
	int rc;
	if (n < 1)
		return lm_err(x->err, "", "", "no modules to link");
	if (n > 64)
		return lm_err(x->err, "", "", "cannot link %d modules (at most "
			      "64 cores)", n);
	x->cores = lm_xcalloc((size_t)n, sizeof *x->cores);
	x->n = n;
	for (int i = 0; i < n; i++)
		if (!mods[i])
			return lm_errc(x->err, LM_EINTERNAL, "", "",
				       "module %d is NULL", i);
	if (!x->opts->trust_inputs &&
	    lm_verify_modules(mods, n, NULL, x->err) != 0)
		return LM_EINPUT;
	for (int i = 0; i < n; i++) {
		const lm_module *m = mods[i];
		if (!m->arch)
			return lm_err(x->err, mpath(m), "module", "no arch");
		for (int f = 0; f < m->n_functions; f++)
			if (m->functions[f].kind == LM_FK_DISPATCHER)
				return lm_err(x->err, mpath(m), "", "function "
					      "%s: module is already linked "
					      "(kind dispatcher)",
					      m->functions[f].name);
		if (n > 1 && !m->has_core_id)
			return lm_err(x->err, mpath(m), "module", "neuron_core_id"
				      " is missing (required to link %d modules)",
				      n);
		if (lm_module_core_id(m) < 0 || lm_module_core_id(m) >= 64)
			return lm_err(x->err, mpath(m), "module", "neuron_core_id"
				      " %lld is out of range [0, 64)",
				      (long long)lm_module_core_id(m));
		if (strcmp(m->arch, mods[0]->arch) != 0)
			return lm_err(x->err, mpath(m), "module", "arch '%s' "
				      "differs from '%s' of %s", m->arch,
				      mods[0]->arch, mpath(mods[0]));
		x->cores[i].src = m;
		x->cores[i].first_func = -1;
	}
	if ((rc = load_netlist(x, mods, n)) != 0 ||
	    (rc = key_definitions(x, mods, n)) != 0)
		return rc;
	qsort(x->cores, (size_t)n, sizeof *x->cores, cmp_core);
	for (int i = 0; i < n; i++)
		x->cores[i].idx = i;
	if (x->net) {
		x->def_of = lm_xcalloc((size_t)n, sizeof *x->def_of);
		for (int ci = 0; ci < n; ci++)
			for (int d = 0; d < x->net->n_defs; d++)
				if (mods[x->net->def_mod[d]] == x->cores[ci].src)
					x->def_of[ci] = d;
	}
	log_def_info(x);
	return 0;
}

/*
** The seed's initCallGraphModule: a NEW module named "<name>/sgLnk" (the
** first core's name) whose entry function main (kind dispatcher) holds the
** empty block `dispatcher`.
*/
static void init_call_graph_module(lk_ctx *x)
{
	const lm_module *m0 = x->cores[0].src;
	lm_module *o = lm_xcalloc(1, sizeof *o);
	const char *base = lm_module_display_name(m0);
	const char *od = x->opts->out_dir ? x->opts->out_dir : ".";

	o->version = 2;
	o->arch = lm_xstrdup(m0->arch);
	o->name = lm_linked_module_name(base);
	o->display = lm_xstrdup(o->name);
	o->attributes_extra = m0->attributes_extra ?
		cJSON_Duplicate(m0->attributes_extra, 1) : NULL;
	o->extra = m0->extra ? cJSON_Duplicate(m0->extra, 1) : NULL;
	o->dir = lm_xasprintf("%s/%s", od, o->name);
	o->path = x->opts->out_dir ? lm_xasprintf("%s/def.json", o->dir)
		: lm_xstrdup("");
	o->n_functions = 1;
	o->functions = lm_xcalloc(1, sizeof *o->functions);
	lm_function *mf = &o->functions[0];
	mf->name = lm_xstrdup(LM_LINKED_MAIN);
	mf->has_kind = 1;
	mf->kind = LM_FK_DISPATCHER;
	mf->n_blocks = 1;
	mf->blocks = lm_xcalloc(1, sizeof *mf->blocks);
	mf->blocks[0].name = lm_xstrdup(LM_LINKED_DISPATCHER);
	x->out = o;

	x->rep->name = lm_xstrdup(o->name);
	x->rep->base_name = lm_xstrdup(base);
	x->rep->n_cores = x->n;
	x->rep->cores = lm_xcalloc((size_t)x->n, sizeof *x->rep->cores);
	x->rep->collisions = lm_xcalloc((size_t)x->n, sizeof(int));
	for (int i = 0; i < x->n; i++)
		x->rep->cores[i] = x->cores[i].core;
}

/*
** Step 8 (seed addFnCall): the dispatcher block of main holds one Call
** call_def_<c>_instance_0 -> nc<c> per core, in core order.
*/
/* A modular link's Call of instance in (definition core index ci): its
** bindings in `arguments` (parameter -> the instance's tensor) and the core
** it runs on in `neuron_core_id`. */
static void add_instance_call(lk_ctx *x, const lk_instance *in, int ci)
{
	lm_block *d = &x->out->functions[0].blocks[0];
	lm_inst *c = lk_block_insert(x, d, d->n_insts, 1);
	char nm[LM_LINKED_NAME_MAX];
	cJSON *args = cJSON_CreateObject();
	c->name = lm_xasprintf("call_def_%lld_instance_%d",
			       (long long)in->def_id, in->ordinal);
	c->op = LM_OP_CALL;
	c->engine = LM_ENG_UNASSIGNED;
	c->target = lm_xstrdup(lm_core_name(nm, x->cores[ci].core));
	c->renumber = 1;
	for (int k = 0; k < in->n_args; k++)
		if (in->linked_formal[k])
			cJSON_AddStringToObject(args, in->linked_formal[k],
						in->actual[k]);
	c->extra = cJSON_CreateObject();
	cJSON_AddItemToObject(c->extra, "arguments", args);
	cJSON_AddNumberToObject(c->extra, "neuron_core_id", (double)in->core);
	x->rep->n_calls++;
}

int add_fn_call(lk_ctx *x)
{
	lm_block *d = &x->out->functions[0].blocks[0];
	char nm[LM_LINKED_NAME_MAX];
	if (x->net) {
		for (int i = 0; i < x->net->n_inst; i++) {
			int ci = 0;
			while (ci < x->n && x->def_of[ci] != x->net->inst[i].def)
				ci++;
			add_instance_call(x, &x->net->inst[i], ci);
		}
		lk_log(x, "add_fn_call: %d Call%s in block dispatcher of main "
		       "(call_def_<d>_instance_<i> -> nc<d>, each with its "
		       "arguments and core)", x->rep->n_calls,
		       x->rep->n_calls == 1 ? "" : "s");
		return 0;
	}
	for (int i = 0; i < x->n; i++) {
		lm_inst *in = lk_block_insert(x, d, d->n_insts, 1);
		in->name = lm_xstrdup(lm_linked_call_name(nm, x->cores[i].core));
		in->op = LM_OP_CALL;
		in->engine = LM_ENG_UNASSIGNED;
		in->target = lm_xstrdup(lm_core_name(nm, x->cores[i].core));
		in->renumber = 1;
		x->rep->n_calls++;
	}
	lk_log(x, "add_fn_call: %d Call%s in block dispatcher of main "
	       "(call_def_<c>_instance_0 -> nc<c>)", x->rep->n_calls,
	       x->rep->n_calls == 1 ? "" : "s");
	return 0;
}

/* Steps 3a + 3b (seed runFunctionPasses). */
int run_function_passes(lk_ctx *x)
{
	int rc = 0;
	double t0 = lm_seconds(), t1;
	if (!(x->opts->skip & LK_SKIP(LK_STEP_FPASS_INSERT_RETURNS)))
		rc = fpass_insert_returns(x);
	t1 = lm_seconds();
	x->rep->seconds[LK_STEP_FPASS_INSERT_RETURNS] = t1 - t0;
	if (!rc && !(x->opts->skip &
		     LK_SKIP(LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES)))
		rc = fpass_insert_switch_queue_instances(x);
	x->rep->seconds[LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES] =
		lm_seconds() - t1;
	/* the spare slots were for these two passes only */
	for (int i = 0; i < x->n; i++) {
		x->cores[i].slack[0] = x->cores[i].slack[1] = NULL;
		x->cores[i].sqi_gap = 0;
	}
	return rc;
}

/* The final check: the linked module passes lm_verify with linked rules. */
static int verify_linked(lk_ctx *x)
{
	lm_verify_opts vo = { 1 };
	lm_error e;
	if (lm_verify(x->out, &vo, &e) != 0)
		return lm_errc(x->err, LM_ECHECK, "", "", "linked module "
			       "fails the verifier: %s", e.msg);
	lk_log(x, "verify: the linked module passes lm_verify (linked rules)");
	return 0;
}

static int count_insts(const lm_block *bs, int nb)
{
	int n = 0;
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++)
			n += (bs[b].insts[i].op != LM_OP_LOOP) +
				count_insts(bs[b].insts[i].blocks,
					    bs[b].insts[i].n_blocks);
	return n;
}

typedef int (*step_fn)(lk_ctx *x);

int lk_link(lm_module *const *mods, int n, const lk_options *opts,
	    lm_module **out, lk_report *rep, lm_error *err)
{
	static const lk_options defaults;
	lk_report local;
	lk_ctx x;
	int rc;
	double t0;
	step_fn steps[LK_N_STEPS] = {
		copy_modules_as_functions, NULL /* inside step 1 */,
		NULL /* inside step 1 */,
		NULL, NULL /* run_function_passes */,
		build_main_memlocs, move_modules_as_functions,
		build_main_aliases, fix_output_kind,
		build_main_tensor_map, init_queues, add_fn_call, setup_link_dir,
		renumber_core_barriers, check_barrier_order,
		post_link_mmt_report, verify_linked,
	};

	*out = NULL;
	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof *rep);
	memset(&x, 0, sizeof x);
	x.opts = opts ? opts : &defaults;
	x.rep = rep;
	x.err = err;
	x.log = x.opts->log;
	lm_strmap_init(&x.main_origin);
	lm_strmap_init(&x.merged);
	lm_strmap_init(&x.handoffs);

	t0 = lm_seconds();
	rc = check_inputs(&x, mods, n);
	rep->seconds[LK_N_STEPS] = lm_seconds() - t0;
	if (rc)
		goto done;
	init_call_graph_module(&x);
	for (int s = 0; s < LK_N_STEPS && rc == 0; s++) {
		t0 = lm_seconds();
		if (s == LK_STEP_FPASS_INSERT_RETURNS) {
			rc = run_function_passes(&x);
			for (int k = s; k <= s + 1; k++)
				if (x.opts->skip & LK_SKIP(k))
					lk_log(&x, "%s: skipped", step_names[k]);
				else
					rep->ran |= LK_SKIP(k);
			s++;
			continue;
		}
		if (x.opts->skip & LK_SKIP(s)) {
			/* copy_allocs logs from step 1; a skipped init_queues
			   still folds the pools by name (see docs/linker.md) */
			if (s == LK_STEP_INIT_QUEUES)
				rc = init_queues(&x);
			else if (s != LK_STEP_COPY_ALLOCS)
				lk_log(&x, "%s: skipped", step_names[s]);
			continue;
		}
		if (s == LK_STEP_COPY_ALLOCS || s == LK_STEP_REMAP_REGISTERS) {
			if (s == LK_STEP_REMAP_REGISTERS)
				lk_log(&x, "remap_registers: register references "
				       "renamed with the registers");
			rep->ran |= LK_SKIP(s);
			continue;
		}
		rc = steps[s](&x);
		rep->seconds[s] = lm_seconds() - t0;
		if (rc == 0)
			rep->ran |= LK_SKIP(s);
	}
	if (rc)
		goto done;
	rep->n_functions = x.out->n_functions;
	rep->n_insts = 0;
	for (int f = 0; f < x.out->n_functions; f++)
		rep->n_insts += count_insts(x.out->functions[f].blocks,
					    x.out->functions[f].n_blocks);
	if (!x.opts->dry_run) {
		*out = x.out;
		x.out = NULL;
	}
done:
	lm_module_free(x.out);
	for (int i = 0; i < x.n; i++) {
		lk_core *c = &x.cores[i];
		lm_strmap_free(&c->alloc_ref);
		lm_strmap_free(&c->memloc_ref);
		lm_strmap_free(&c->funcs);
		free(c->name_seq);
		lm_strmap_free(&c->allocs_by_name);
		lm_strmap_free(&c->tmap_by_alloc);
		lk_tensor_entries_free(c->tmap, c->n_tmap);
		free(c->tmap_path);
		if (x.file_maps)
			lm_strmap_free(&x.file_maps[i]);
	}
	free(x.file_maps);
	free(x.cores);
	if (x.net) {
		lk_netlist_free(x.net);
		free(x.net);
	}
	free(x.def_of);
	free(x.inst_decls);
	for (int i = 0; i < x.n_strs; i++)
		free(x.strs[i]);
	free(x.strs);
	free(x.views);
	lm_strmap_free(&x.main_origin);
	free(x.decls);
	free(x.merges);
	lm_strmap_free(&x.merged);
	lm_strmap_free(&x.handoffs);
	free(x.hos);

	if (rep == &local)
		lk_report_free(&local);
	return rc;
}

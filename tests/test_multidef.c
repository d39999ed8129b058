/*
** test_multidef.c -- the modular link: module definitions with several
** instances each, read from <name>/hlo_netlist.json beside the per-core
** layout. The structure the link makes (one function per definition, one
** Call per instance with its bindings and core), the verifier's linked
** rules for it, the run against the per-instance reference, the -v
** diagnostics, and every bad netlist refused with exit 2.
*/
#include "common.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include "module.h"
#include "linker.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NET_OK \
	"{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"}," \
	"{\"id\":1,\"subgraph\":\"nc1/sg0\"}]," \
	"\"instances\":[{\"def\":0,\"core\":0,\"arguments\":{\"a\":\"a_0\"," \
	"\"y\":\"y_0\"}},{\"def\":1,\"core\":2,\"arguments\":{\"b\":\"b_0\"," \
	"\"z\":\"z_0\"}},{\"def\":0,\"core\":1,\"arguments\":{\"a\":\"a_1\"," \
	"\"y\":\"y_1\"}}]}"

/* examples/multidef copied into a fresh directory dir/md/, with the
** netlist text net (NULL: none). Returns dir/md (caller frees). */
static char *setup(const char *tag, const char *net)
{
	char *d = tu_tmpdir(tag), *top = lm_path_join(d, "md");
	static const char *const files[] = {
		"nc0/sg0/def.json", "nc0/sg0/w.npy", "nc1/sg0/def.json",
	};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char *rel = lm_xasprintf("examples/multidef/%s", files[i]);
		char *src = tu_srcpath(rel);
		free(tu_write(top, files[i], "")); /* the directories */
		tu_copy(src, top, files[i]);
		free(src);
		free(rel);
	}
	if (net)
		free(tu_write(top, "hlo_netlist.json", net));
	free(d);
	return top;
}

typedef struct set {
	char *top, *p0, *p1;
	lm_module *m[2];
} set;

static void set_load(set *s, const char *tag, const char *net)
{
	s->top = setup(tag, net);
	s->p0 = lm_path_join(s->top, "nc0/sg0/def.json");
	s->p1 = lm_path_join(s->top, "nc1/sg0/def.json");
	s->m[0] = tu_load(s->p0);
	s->m[1] = tu_load(s->p1);
}

static void set_free(set *s)
{
	lm_module_free(s->m[0]);
	lm_module_free(s->m[1]);
	free(s->top);
	free(s->p0);
	free(s->p1);
}

static int link_set(set *s, unsigned skip, lm_module **out, lk_report *rep,
		    lm_buf *log, lm_error *e)
{
	lk_options o;
	memset(&o, 0, sizeof o);
	o.skip = skip;
	o.abs_file_paths = 1;
	o.log = log;
	return lk_link(s->m, 2, &o, out, rep, e);
}

static const char *arg_of(const lm_inst *c, const char *formal)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->extra, "arguments");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, formal);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int core_of(const lm_inst *c)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->extra,
							  "neuron_core_id");
	return cJSON_IsNumber(v) ? v->valueint : -1;
}

static void set_str(char **p, const char *v)
{
	free(*p);
	*p = lm_xstrdup(v);
}

static const lm_alloc *alloc_in(const lm_function *f, const char *name)
{
	for (int a = 0; a < f->n_allocs; a++)
		if (!strcmp(f->allocs[a].name, name))
			return &f->allocs[a];
	return NULL;
}

/* The linked structure: main calls each instance with its bindings. */
START_TEST(test_structure)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_buf log = LM_BUF_INIT;
	lm_error e;
	const lm_block *d;
	static const char *const calls[3][5] = {
		{ "call_def_0_instance_0", "nc0", "a_0", "y_0", "0" },
		{ "call_def_0_instance_1", "nc0", "a_1", "y_1", "1" },
		{ "call_def_1_instance_0", "nc1", "b_0", "z_0", "2" },
	};
	set_load(&s, "structure", NET_OK);
	ck_assert_int_eq(link_set(&s, 0, &out, &rep, &log, &e), 0);
	ck_assert_int_eq(rep.n_defs, 2);
	ck_assert_int_eq(rep.n_instances, 3);
	/* each definition's function once */
	ck_assert_int_eq(out->n_functions, 3);
	ck_assert_str_eq(out->functions[1].name, "nc0");
	ck_assert_str_eq(out->functions[2].name, "nc1");
	d = &out->functions[0].blocks[0];
	ck_assert_int_eq(d->n_insts, 3);
	for (int i = 0; i < 3; i++) {
		const lm_inst *c = &d->insts[i];
		int def = calls[i][1][2] - '0';
		ck_assert_int_eq(c->op, LM_OP_CALL);
		ck_assert_str_eq(c->name, calls[i][0]);
		ck_assert_str_eq(c->target, calls[i][1]);
		ck_assert_int_eq(core_of(c), calls[i][4][0] - '0');
		ck_assert_str_eq(arg_of(c, def ? "nc1.b" : "nc0.a"),
				 calls[i][2]);
		ck_assert_str_eq(arg_of(c, def ? "nc1.z" : "nc0.y"),
				 calls[i][3]);
		/* the instance's tensors in main, its kind kept */
		ck_assert_int_eq(alloc_in(&out->functions[0],
					  calls[i][2])->kind,
				 LM_TK_EXTERNAL_INPUT);
		ck_assert_int_eq(alloc_in(&out->functions[0],
					  calls[i][3])->kind,
				 LM_TK_EXTERNAL_OUTPUT);
	}
	/* the parameters: the definition's own, Internal */
	ck_assert_int_eq(alloc_in(&out->functions[1], "nc0.a")->kind,
			 LM_TK_INTERNAL);
	ck_assert_int_eq(alloc_in(&out->functions[1], "nc0.y")->kind,
			 LM_TK_INTERNAL);
	ck_assert_ptr_null(alloc_in(&out->functions[0], "nc0.a"));
	ck_assert_int_eq(out->functions[0].n_allocs, 6);
	/* the completion barrier meets every instance's core */
	{
		const lm_block *b = &out->functions[1].blocks[0];
		const lm_inst *cb = &b->insts[b->n_insts - 2];
		ck_assert_int_eq(cb->op, LM_OP_COREBARRIER);
		ck_assert_int_eq(cb->n_cores, 3);
		ck_assert_int_eq(cb->cores[0], 0);
		ck_assert_int_eq(cb->cores[2], 2);
	}
	/* the tensor map: one entry per instance tensor, on its core */
	ck_assert_int_eq(rep.n_tensors, 6);
	for (int t = 0; t < rep.n_tensors; t++)
		if (!strcmp(rep.tensors[t].layer_name, "y_1")) {
			ck_assert_int_eq(rep.tensors[t].n_cores, 1);
			ck_assert_int_eq(rep.tensors[t].cores[0], 1);
		}
	/* the seed's diagnostics */
	ck_assert_contains(lm_buf_cstr(&log), "Num Module Definitions 2\n");
	ck_assert_contains(lm_buf_cstr(&log), "Module Instance "
			   "call_def_0_instance_1 DefID 0 (");
	ck_assert_contains(lm_buf_cstr(&log), "move_modules_as_functions: 3 "
			   "instances of 2 definitions, 6 arguments bound");
	/* it passes the linked rules again after a save and a load */
	{
		char *txt = NULL;
		size_t len;
		lm_module *back;
		lm_verify_opts vo = { 1 };
		ck_assert_int_eq(lm_module_to_json(out, 0, &txt, &len, &e), 0);
		back = tu_parse_ok(txt);
		ck_assert_msg(lm_verify(back, &vo, &e) == 0, "%s", e.msg);
		ck_assert_str_eq(arg_of(&back->functions[0].blocks[0].insts[1],
					"nc0.a"), "a_1");
		lm_module_free(back);
		free(txt);
	}
	lm_buf_free(&log);
	lk_report_free(&rep);
	lm_module_free(out);
	set_free(&s);
}
END_TEST

/* The per-instance reference: the definition on the instance's core,
** its parameters renamed to the instance's tensors. */
START_TEST(test_reference)
{
	set s;
	lm_module **refs;
	int n;
	lm_error e;
	set_load(&s, "reference", NET_OK);
	ck_assert_int_eq(lk_instance_modules(s.m, 2, &refs, &n, &e), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(lm_module_core_id(refs[1]), 1);
	ck_assert_ptr_nonnull(alloc_in(&refs[1]->functions[0], "a_1"));
	ck_assert_ptr_null(alloc_in(&refs[1]->functions[0], "a"));
	ck_assert_str_eq(refs[1]->functions[0].blocks[0].insts[0].ins[0]
			 .memsetref, "a_1");
	ck_assert_int_eq(lm_module_core_id(refs[2]), 2);
	ck_assert_ptr_nonnull(alloc_in(&refs[2]->functions[0], "z_0"));
	/* the definitions themselves are untouched */
	ck_assert_ptr_nonnull(alloc_in(&s.m[0]->functions[0], "a"));
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(lm_verify(refs[i], NULL, &e), 0);
		lm_module_free(refs[i]);
	}
	free(refs);
	/* no netlist: no reference of its own */
	set_free(&s);
	set_load(&s, "reference_none", NULL);
	ck_assert_int_eq(lk_instance_modules(s.m, 2, &refs, &n, &e), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_ptr_null(refs);
	set_free(&s);
}
END_TEST

/* The simulator runs each instance on its core with its bindings, and
** diff proves the link against the instances; the new step has teeth. */
START_TEST(test_diff)
{
	set s;
	tu_run r;
	set_load(&s, "diff", NET_OK);
	r = tu_lncsim(NULL, "diff", "--no-db", s.p0, s.p1, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	ck_assert_contains(r.out, "3 outputs bit-identical");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db",
		      "--skip=move_modules_as_functions,verify", s.p0, s.p1,
		      NULL);
	ck_assert_msg(r.status == 1, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "FAIL");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", "--dry-run", "-v", s.p0, s.p1, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "Module Instance call_def_1_instance_0 "
			   "DefID 1 (");
	ck_assert_contains(r.out, "add_fn_call: 3 Calls");
	ck_assert_contains(r.out, "modular flow: 2 module definitions, 3 "
			   "instances");
	tu_run_free(&r);
	/* run of the set runs its instances (the netlist is not ignored);
	   one definition alone is not the program */
	r = tu_lncsim(NULL, "run", "--no-db", s.top, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "3 cores");
	ck_assert_contains(r.out, "modular flow: 3 instances");
	ck_assert_contains(r.out, "output y_1: float32 [128, 64]");
	ck_assert_ptr_null(strstr(r.out, "output y:"));
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", s.p0, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "2 module definitions but 1 modules given");
	tu_run_free(&r);
	/* written, verified with the linked rules, run from the file */
	{
		char *o = lm_path_join(s.top, "out");
		char *lp = lm_path_join(o, "multidef/sgLnk/def.json");
		r = tu_lncsim(NULL, "link", "-o", o, s.p0, s.p1, NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(NULL, "verify", "--linked", lp, NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(NULL, "run", "--no-db", lp, NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_contains(r.out, "3 cores");
		ck_assert_contains(r.out, "output y_1: float32 [128, 64]");
		ck_assert_contains(r.out, "output z_0: float32 [128, 64]");
		tu_run_free(&r);
		free(lp);
		free(o);
	}
	set_free(&s);
}
END_TEST

/* The run's outputs are each instance's own. */
START_TEST(test_run)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	ls_result res;
	ls_tensors in;
	ls_options ro;
	set_load(&s, "run", NET_OK);
	ck_assert_int_eq(link_set(&s, 0, &out, &rep, NULL, &e), 0);
	ck_assert_int_eq(ls_make_inputs(&out, 1, NULL, 3, &in, &e), 0);
	memset(&ro, 0, sizeof ro);
	memset(&res, 0, sizeof res);
	ck_assert_msg(ls_run(out, &in, &ro, &res, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(res.outputs.n, 3);
	/* y_0 and y_1 are one definition on other data: they differ */
	{
		const ls_tensor *y0 = NULL, *y1 = NULL;
		for (int i = 0; i < res.outputs.n; i++) {
			if (!strcmp(res.outputs.t[i].name, "y_0"))
				y0 = &res.outputs.t[i];
			if (!strcmp(res.outputs.t[i].name, "y_1"))
				y1 = &res.outputs.t[i];
		}
		ck_assert_ptr_nonnull(y0);
		ck_assert_ptr_nonnull(y1);
		ck_assert_int_eq(y0->count, y1->count);
		ck_assert(memcmp(y0->data, y1->data, (size_t)y0->count *
				 lm_dtype_size(y0->dtype)) != 0);
	}
	ls_result_free(&res);
	ls_tensors_free(&in);
	lk_report_free(&rep);
	lm_module_free(out);
	set_free(&s);
}
END_TEST

/* The verifier's linked rules for instance Calls. */
START_TEST(test_verify_linked)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	lm_verify_opts vo = { 1 };
	lm_inst *c;
	set_load(&s, "verify", NET_OK);
	ck_assert_int_eq(link_set(&s, 0, &out, &rep, NULL, &e), 0);
	c = &out->functions[0].blocks[0].insts[1];
	/* two Calls on one core */
	cJSON_ReplaceItemInObject(c->extra, "neuron_core_id",
				  cJSON_CreateNumber(0));
	ck_assert_int_eq(lm_verify(out, &vo, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "runs on core 0, the core of an earlier "
			   "Call");
	cJSON_ReplaceItemInObject(c->extra, "neuron_core_id",
				  cJSON_CreateNumber(64));
	ck_assert_int_eq(lm_verify(out, &vo, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "neuron_core_id must be an integer in "
			   "[0, 64)");
	cJSON_ReplaceItemInObject(c->extra, "neuron_core_id",
				  cJSON_CreateNumber(1));
	ck_assert_int_eq(lm_verify(out, &vo, &e), 0);
	/* instance numbers count up per definition */
	lm_inst_set_str(c, &c->name, "call_def_0_instance_2");
	ck_assert_int_eq(lm_verify(out, &vo, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "must be named 'call_def_0_instance_1'");
	lm_inst_set_str(c, &c->name, "call_def_0_instance_1");
	/* an instance reading another's tensor, a binding to a tensor
	   outside main, an output unbound, parameters bound the other way */
	{
		static const char *const cases[][3] = {
			{ "nc0.a", "a_0", "'a_0', a tensor bound already" },
			{ "nc0.y", "nc1.z", "'nc1.z', which is not an external "
			  "input or output of 'main'" },
			{ "nc0.y", NULL, "binds 1 parameters, "
			  "'call_def_0_instance_0' 2" },
			{ "nc0.a", "y_1", "binds 'nc0.a' to an external output, "
			  "'call_def_0_instance_0' does not" },
		};
		cJSON *args = cJSON_GetObjectItem(c->extra, "arguments");
		for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
			cJSON *keep = cJSON_Duplicate(args, 1);
			if (cases[k][1])
				cJSON_ReplaceItemInObject(args, cases[k][0],
					cJSON_CreateString(cases[k][1]));
			else
				cJSON_DeleteItemFromObject(args, cases[k][0]);
			ck_assert_int_eq(lm_verify(out, &vo, &e), LM_EINPUT);
			ck_assert_contains(e.msg, cases[k][2]);
			cJSON_ReplaceItemInObject(c->extra, "arguments", keep);
			args = keep;
			ck_assert_msg(lm_verify(out, &vo, &e) == 0, "%s", e.msg);
		}
		/* a tensor of main no instance binds */
		{
			lm_function *mf = &out->functions[0];
			mf->allocs = lm_xrealloc(mf->allocs,
				(size_t)(mf->n_allocs + 1) * sizeof *mf->allocs);
			lm_alloc_copy(&mf->allocs[mf->n_allocs],
				      alloc_in(mf, "a_1"));
			set_str(&mf->allocs[mf->n_allocs].name, "x_9");
			set_str(&mf->allocs[mf->n_allocs].memlocs[0].name,
				"x_9");
			mf->n_allocs++;
			ck_assert_int_eq(lm_verify(out, &vo, &e), LM_EINPUT);
			ck_assert_contains(e.msg, "external input 'x_9' of "
					   "'main' is bound by no instance Call");
			lm_alloc_clear(&mf->allocs[--mf->n_allocs]);
			ck_assert_int_eq(lm_verify(out, &vo, &e), 0);
		}
	}
	/* a binding to a tensor that is not there */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(c->extra, "arguments"),
				  "nc0.a", cJSON_CreateString("nope"));
	ck_assert_int_eq(lm_verify(out, &vo, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "nope");
	/* a second Call of one function without arguments */
	cJSON_DeleteItemFromObject(c->extra, "arguments");
	cJSON_DeleteItemFromObject(c->extra, "neuron_core_id");
	ck_assert_int_eq(lm_verify(out, &vo, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "twice without instance arguments");
	lk_report_free(&rep);
	lm_module_free(out);
	set_free(&s);
}
END_TEST

/* ---- bad netlists --------------------------------------------------- */

#define DEFS "\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"}," \
	"{\"id\":1,\"subgraph\":\"nc1/sg0\"}]"
#define I0 "{\"def\":0,\"core\":0,\"arguments\":{\"a\":\"a_0\",\"y\":\"y_0\"}}"
#define I1 "{\"def\":1,\"core\":2,\"arguments\":{\"b\":\"b_0\",\"z\":\"z_0\"}}"

static const struct {
	const char *net, *msg;
} bad[] = {
	/* a netlist naming a missing definition */
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":5,"
	  "\"subgraph\":\"nc5/sg0\"}],\"instances\":[" I0 "]}",
	  "definition 5: subgraph 'nc5/sg0' is not the directory of any "
	  "module given (a missing definition)" },
	{ "{" DEFS ",\"instances\":[" I0 "," I1 ",{\"def\":7,\"core\":3,"
	  "\"arguments\":{}}]}", "definition 7 is not defined" },
	/* the definitions do not match the modules */
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"}],"
	  "\"instances\":[" I0 "]}",
	  "1 module definitions but 2 modules given" },
	{ "{" DEFS ",\"instances\":[" I0 "]}", "definition 1 has no instance" },
	/* a definition's id is not its core: swapped ids are accepted, and
	   then I0's bindings do not fit definition 0 (nc1/sg0) */
	{ "{\"definitions\":[{\"id\":1,\"subgraph\":\"nc0/sg0\"},{\"id\":0,"
	  "\"subgraph\":\"nc1/sg0\"}],\"instances\":[" I0 "]}",
	  "is not an external input or output of definition 0" },
	/* numDefs != modules.size(), more definitions than modules */
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":1,"
	  "\"subgraph\":\"nc1/sg0\"},{\"id\":2,\"subgraph\":\"nc2/sg0\"}],"
	  "\"instances\":[" I0 "]}", "3 module definitions but 2 modules "
	  "given (one module per definition)" },
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":1,"
	  "\"subgraph\":\"nc1/sg0\",\"core\":1}],\"instances\":[" I0 "]}",
	  "definitions[1]: unknown key 'core'" },
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":1,"
	  "\"subgraph\":\"nc1/sg0/../../etc\"}],\"instances\":[" I0 "]}",
	  "is not of the form nc<c>/sg<s>" },
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":1,"
	  "\"subgraph\":\"/nc1/sg0\"}],\"instances\":[" I0 "]}",
	  "is not of the form nc<c>/sg<s>" },
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":1,"
	  "\"subgraph\":7}],\"instances\":[" I0 "]}",
	  "subgraph must be a string" },
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":64,"
	  "\"subgraph\":\"nc1/sg0\"}],\"instances\":[" I0 "]}",
	  "id must be an integer in [0, 63]" },
	/* wrong types */
	{ "[]", "the netlist must be an object" },
	{ "{\"definitions\":{},\"instances\":[]}", "must be arrays" },
	{ "{\"definitions\":[{\"id\":\"0\",\"subgraph\":\"nc0/sg0\"},{\"id\":1,"
	  "\"subgraph\":\"nc1/sg0\"}],\"instances\":[" I0 "," I1 "]}",
	  "definitions[0]: id must be an integer" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":1.5,"
	  "\"arguments\":{}}]}", "instances[1]: core must be an integer in "
	  "[0, 63]" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":[\"b\"]}]}", "arguments must be an object" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":5,\"z\":\"z_0\"}}]}", "'b' must map to a "
	  "string" },
	{ "{" DEFS ",\"instances\":[" I0 ",7]}", "instances[1]: must be an "
	  "object" },
	{ "{" DEFS ",\"instances\":[" I0 "," I1 "]", "malformed JSON" },
	{ "{" DEFS ",\"instances\":[" I0 "," I1 "],\"extra\":1}",
	  "unknown key 'extra'" },
	/* duplicates */
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"nc0/sg0\"},{\"id\":0,"
	  "\"subgraph\":\"nc0/sg0\"}],\"instances\":[" I0 "]}",
	  "definition id 0 given twice" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"def\":1,\"core\":2,"
	  "\"arguments\":{}}]}", "key 'def' given twice" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":0,"
	  "\"arguments\":{\"b\":\"b_0\",\"z\":\"z_0\"}}]}",
	  "core 0 runs two instances" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"a_0\",\"z\":\"z_0\"}}]}",
	  "the tensor 'a_0' is bound by two arguments" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"b_0\",\"b\":\"b_1\"}}]}",
	  "key 'b' given twice" },
	/* huge counts */
	{ "{" DEFS ",\"instances\":[" I0 "," I1 ",{\"def\":0,\"core\":1e30,"
	  "\"arguments\":{}}]}", "core must be an integer in [0, 63]" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"b_0\",\"z\":\"z_0\",\"q\":\"q_0\"}}]}",
	  "instances[1]: arguments: 3 entries but definition 1 has 2 "
	  "parameters" },
	/* path names and the linker's own names */
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"../etc/b\",\"z\":\"z_0\"}}]}",
	  "the actual '../etc/b' of 'b' holds a character other than" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"nc3.b\",\"z\":\"z_0\"}}]}",
	  "starts with a core prefix nc<c>." },
	{ "{\"definitions\":[{\"id\":0,\"subgraph\":\"../nc0/sg0\"},{\"id\":1,"
	  "\"subgraph\":\"nc1/sg0\"}],\"instances\":[" I0 "," I1 "]}",
	  "subgraph '../nc0/sg0' is not of the form nc<c>/sg<s>" },
	/* the bindings do not fit the definition */
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"b_0\"}}]}",
	  "binds no tensor to 'z', an external output of definition 1" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"b_0\",\"u0\":\"q\"}}]}",
	  "'u0' is not an external input or output of definition 1" },
	{ "{" DEFS ",\"instances\":[" I0 ",{\"def\":1,\"core\":2,"
	  "\"arguments\":{\"b\":\"b_0\",\"z\":\"t0\"}}]}",
	  "its tensor 't0' (for 'z') is already the name of an allocation" },
};

START_TEST(test_bad_netlist)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	int rc;
	set_load(&s, "bad", bad[_i].net);
	rc = link_set(&s, 0, &out, &rep, NULL, &e);
	ck_assert_msg(rc == LM_EINPUT, "case %d: rc %d", _i, rc);
	ck_assert_contains(e.msg, bad[_i].msg);
	ck_assert_ptr_null(out);
	lk_report_free(&rep);
	set_free(&s);
}
END_TEST

/* The CLI: exit 2 with the message; a big netlist is refused unread. */
START_TEST(test_bad_cli)
{
	set s;
	tu_run r;
	char *big;
	set_load(&s, "badcli", bad[0].net);
	r = tu_lncsim(NULL, "link", "--dry-run", s.p0, s.p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "hlo_netlist.json: definitions[1]: "
			   "definition 5: subgraph 'nc5/sg0'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", s.p0, s.p1, NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	big = lm_xcalloc(1, (2u << 20) + 1);
	memset(big, ' ', 2u << 20);
	free(tu_write(s.top, "hlo_netlist.json", big));
	free(big);
	r = tu_lncsim(NULL, "link", "--dry-run", s.p0, s.p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "file too large");
	tu_run_free(&r);
	set_free(&s);
	/* one directory spelled two ways is one layout */
	set_load(&s, "badcli3", NET_OK);
	{
		char *p1 = lm_xasprintf("%s/./nc1/sg0/def.json", s.top);
		r = tu_lncsim(NULL, "link", "--dry-run", s.p0, p1, NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_contains(r.out, "modular flow: 2 module definitions");
		tu_run_free(&r);
		free(p1);
	}
	set_free(&s);
	/* a module beside the netlist's layout but not in it */
	set_load(&s, "badcli2", NET_OK);
	{
		char *other = tu_tmpdir("other"), *p;
		char *src = tu_srcpath("examples/multidef/nc1/sg0/def.json");
		free(tu_write(other, "o/nc1/sg0/def.json", ""));
		tu_copy(src, other, "o/nc1/sg0/def.json");
		p = lm_path_join(other, "o/nc1/sg0/def.json");
		r = tu_lncsim(NULL, "link", "--dry-run", s.p0, p, NULL);
		ck_assert_int_eq(r.status, 2);
		ck_assert_contains(r.err, "modular-flow metadata "
				   "hlo_netlist.json is present but the modules "
				   "given lie under ");
		tu_run_free(&r);
		free(p);
		free(src);
		free(other);
	}
	set_free(&s);
}
END_TEST

/* What a modular link does not link: a definition with several instances
** that waits on a semaphore (its instances would share it). */
START_TEST(test_shared_semaphore)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	set_load(&s, "sem", NET_OK);
	lm_inst_add_wait(&s.m[0]->functions[0].blocks[0].insts[2], "s_dma", 2);
	ck_assert_int_eq(link_set(&s, 0, &out, &rep, NULL, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "definition 0 (2 instances) waits on or "
			   "signals a semaphore in 'mul'");
	lk_report_free(&rep);
	set_free(&s);
}
END_TEST

/* A view (alias_of) of a parameter: the Call binds the parameter, the
** view would still name the definition's own copy. Refused. */
START_TEST(test_param_view)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	lm_function *f;
	lm_alloc *v;
	set_load(&s, "view", NET_OK);
	f = &s.m[1]->functions[0];
	f->allocs = lm_xrealloc(f->allocs, (size_t)(f->n_allocs + 1) *
				sizeof *f->allocs);
	v = &f->allocs[f->n_allocs];
	lm_alloc_copy(v, alloc_in(f, "z"));
	f->n_allocs++;
	set_str(&v->name, "v");
	set_str(&v->memlocs[0].name, "v");
	v->kind = LM_TK_INTERNAL;
	set_str(&v->alias_of, "z");
	ck_assert_int_eq(link_set(&s, 0, &out, &rep, NULL, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "definition 1 (1 instance) holds the "
			   "parameter view (alias_of) 'v': an instance's Call "
			   "binds the parameter, not its views");
	ck_assert_ptr_null(out);
	lk_report_free(&rep);
	set_free(&s);
}
END_TEST

/* The module at path with its last instruction moved into a helper
** function h that a Call runs. */
static void add_helper_call(const char *path)
{
	char *txt = NULL, *out;
	size_t n;
	lm_error e;
	cJSON *j, *fns, *ins, *st, *h;
	ck_assert_int_eq(lm_read_file(path, &txt, &n, &e), 0);
	j = cJSON_Parse(txt);
	free(txt);
	fns = cJSON_GetObjectItem(j, "functions");
	ins = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetArrayItem(fns, 0), "blocks"), 0), "instructions");
	st = cJSON_DetachItemFromArray(ins, cJSON_GetArraySize(ins) - 1);
	cJSON_DeleteItemFromObject(st, "dependencies");
	h = cJSON_Parse("{\"name\":\"h\",\"attributes\":[],\"allocations\":[],"
			"\"blocks\":[{\"name\":\"hb\",\"instructions\":[]}]}");
	cJSON_AddItemToArray(cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(h, "blocks"), 0), "instructions"), st);
	cJSON_AddItemToArray(fns, h);
	cJSON_AddItemToArray(ins, cJSON_Parse("{\"name\":\"callh\",\"opcode\":"
		"\"Call\",\"engine\":\"SP\",\"target\":\"h\","
		"\"dependencies\":[[\"add\",\"Flow\"]]}"));
	out = cJSON_Print(j);
	ck_assert_int_eq(lm_write_file_atomic(path, out, strlen(out), &e), 0);
	free(out);
	cJSON_Delete(j);
}

/* A Call of a helper function inside a definition: the helper is the
** definition's own function, tagged with its core, and no instance's
** bindings reach it (it wrote the definition's own output, the
** instance's stayed unwritten). Refused, even for one instance. */
START_TEST(test_helper_call)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	s.top = setup("helper", NET_OK);
	s.p0 = lm_path_join(s.top, "nc0/sg0/def.json");
	s.p1 = lm_path_join(s.top, "nc1/sg0/def.json");
	add_helper_call(s.p1);
	s.m[0] = tu_load(s.p0);
	s.m[1] = tu_load(s.p1);
	ck_assert_int_eq(link_set(&s, 0, &out, &rep, NULL, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "definition 1 (1 instance) holds the Call "
			   "'callh': the function it calls is the definition's "
			   "own");
	ck_assert_ptr_null(out);
	lk_report_free(&rep);
	set_free(&s);
}
END_TEST

/* The reference renames the parameters an instruction carries in
** indirection_ins too: definition 1 loads the rows of b by the indices
** of its input ix (IndirectLoad); instance 1 binds ix to ix_0. */
START_TEST(test_reference_indices)
{
	static const char net[] = "{\"definitions\":[{\"id\":0,\"subgraph\":"
		"\"nc0/sg0\"},{\"id\":1,\"subgraph\":\"nc1/sg0\"}],"
		"\"instances\":[{\"def\":0,\"core\":0,\"arguments\":{\"a\":"
		"\"a_0\",\"y\":\"y_0\"}},{\"def\":1,\"core\":2,\"arguments\":"
		"{\"b\":\"b_0\",\"ix\":\"ix_0\",\"z\":\"z_0\"}}]}";
	set s;
	lm_module **refs;
	cJSON *j, *f, *a, *ld = NULL, *ii;
	char *txt;
	int n;
	lm_error e;
	s.top = setup("reference_ix", net);
	s.p0 = lm_path_join(s.top, "nc0/sg0/def.json");
	s.p1 = lm_path_join(s.top, "nc1/sg0/def.json");
	txt = tu_read(s.p1);
	j = cJSON_Parse(txt);
	free(txt);
	f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "functions"), 0);
	a = cJSON_Parse("{\"addr_space\":\"Shared\",\"dtype\":\"int32\","
		"\"file\":\"\",\"kind\":\"ExternalInput\",\"memorylocations\":"
		"[{\"addr\":1048576,\"allocated\":true,\"bank\":0,\"base\":0,"
		"\"dims\":[128,4],\"name\":\"ix\",\"type\":8}],\"name\":\"ix\","
		"\"tensor_shape\":[128,1]}");
	cJSON_AddItemToArray(cJSON_GetObjectItem(f, "allocations"), a);
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(f, "blocks"), 0), "instructions"))
		if (!strcmp(cJSON_GetObjectItem(a, "name")->valuestring, "ld_b"))
			ld = a;
	ck_assert_ptr_nonnull(ld);
	cJSON_ReplaceItemInObject(ld, "opcode", cJSON_CreateString(
		"IndirectLoad"));
	ii = cJSON_Parse("[{\"ap\":[[1,128],[1,1]],\"dtype\":\"int32\","
		"\"kind\":\"physical_ap\",\"memref\":\"ix\",\"memsetref\":"
		"\"ix\",\"offset\":0}]");
	cJSON_AddItemToObject(ld, "indirection_ins", ii);
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	free(tu_write(s.top, "nc1/sg0/def.json", txt));
	free(txt);
	s.m[0] = tu_load(s.p0);
	s.m[1] = tu_load(s.p1);
	ck_assert_int_eq(lk_instance_modules(s.m, 2, &refs, &n, &e), 0);
	ck_assert_int_eq(n, 2);
	txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(
		refs[1]->functions[0].blocks[0].insts[0].extra,
		"indirection_ins"));
	ck_assert_contains(txt, "\"memsetref\":\"ix_0\"");
	ck_assert_contains(txt, "\"memref\":\"ix\"");
	cJSON_free(txt);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(lm_verify(refs[i], NULL, &e) == 0, "%s", e.msg);
		lm_module_free(refs[i]);
	}
	free(refs);
	set_free(&s);
}
END_TEST

/* A netlist that is not a regular file is refused by the CLI with exit
** 2, never read (a FIFO would hang the read). */
START_TEST(test_netlist_special)
{
	set s;
	tu_run r;
	char *np;
	set_load(&s, "special", NULL);
	np = lm_path_join(s.top, "hlo_netlist.json");
	ck_assert_int_eq(mkfifo(np, 0600), 0);
	r = tu_lncsim(NULL, "link", "--dry-run", s.p0, s.p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "hlo_netlist.json: not a regular file "
			   "(a FIFO)");
	tu_run_free(&r);
	ck_assert_int_eq(unlink(np), 0);
	ck_assert_int_eq(mkdir(np, 0700), 0);
	r = tu_lncsim(NULL, "diff", "--no-db", s.p0, s.p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "hlo_netlist.json: is a directory");
	tu_run_free(&r);
	ck_assert_int_eq(rmdir(np), 0);
	/* a dangling symlink is a netlist that cannot be opened, not none */
	ck_assert_int_eq(symlink("nowhere.json", np), 0);
	r = tu_lncsim(NULL, "link", "--dry-run", s.p0, s.p1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "hlo_netlist.json: cannot open");
	tu_run_free(&r);
	free(np);
	set_free(&s);
}
END_TEST

/* ---- two subgraphs of one core (tests/fixtures/modflow) ------------- */

/* The fixture's modules: nc0/sg0 and nc0/sg1, both of core 0. */
static void fixture_paths(char **p0, char **p1)
{
	*p0 = tu_srcpath("tests/fixtures/modflow/nc0/sg0/def.json");
	*p1 = tu_srcpath("tests/fixtures/modflow/nc0/sg1/def.json");
}

/* Two module definitions laid out on one core, each with two instances
** on other cores: the definition table is keyed by the netlist's ids,
** not by the modules' core. */
START_TEST(test_one_core_two_defs)
{
	char *p0, *p1;
	lm_module *m[2], *out = NULL;
	lk_options o;
	lk_report rep;
	lm_buf log = LM_BUF_INIT;
	lm_error e;
	lm_verify_opts vo = { 1 };
	const lm_block *d;
	/* dispatcher order: definition 0's instances in netlist order, then
	   definition 1's (listed first in the netlist, core 3 before 2) */
	static const struct {
		const char *name, *target, *formal, *actual;
		int core;
	} calls[4] = {
		{ "call_def_0_instance_0", "nc0", "nc0.a", "a_0", 0 },
		{ "call_def_0_instance_1", "nc0", "nc0.a", "a_1", 1 },
		{ "call_def_1_instance_0", "nc1", "nc1.b", "b_0", 3 },
		{ "call_def_1_instance_1", "nc1", "nc1.b", "b_1", 2 },
	};
	fixture_paths(&p0, &p1);
	m[0] = tu_load(p1); /* given in either order */
	m[1] = tu_load(p0);
	memset(&o, 0, sizeof o);
	o.abs_file_paths = 1;
	o.log = &log;
	ck_assert_msg(lk_link(m, 2, &o, &out, &rep, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(rep.n_defs, 2);
	ck_assert_int_eq(rep.n_instances, 4);
	ck_assert_int_eq(out->n_functions, 3);
	ck_assert_str_eq(out->functions[1].name, "nc0");
	ck_assert_str_eq(out->functions[2].name, "nc1");
	/* nc1 is sg1's program (its parameters b, z), keyed by its id */
	ck_assert_ptr_nonnull(alloc_in(&out->functions[2], "nc1.b"));
	ck_assert_ptr_null(alloc_in(&out->functions[1], "nc0.b"));
	ck_assert_int_eq(out->functions[2].neuron_core_id, 1);
	d = &out->functions[0].blocks[0];
	ck_assert_int_eq(d->n_insts, 4);
	for (int i = 0; i < 4; i++) {
		const lm_inst *c = &d->insts[i];
		ck_assert_int_eq(c->op, LM_OP_CALL);
		ck_assert_str_eq(c->name, calls[i].name);
		ck_assert_str_eq(c->target, calls[i].target);
		ck_assert_int_eq(core_of(c), calls[i].core);
		ck_assert_str_eq(arg_of(c, calls[i].formal), calls[i].actual);
	}
	ck_assert_msg(lm_verify(out, &vo, &e) == 0, "%s", e.msg);
	ck_assert_contains(lm_buf_cstr(&log), "Num Module Definitions 2\n");
	ck_assert_contains(lm_buf_cstr(&log), "Module Instance "
			   "call_def_1_instance_0 DefID 1 (");
	ck_assert_contains(lm_buf_cstr(&log), "sg1/def.json) on core 3, 2 "
			   "arguments\n");
	ck_assert_contains(lm_buf_cstr(&log), "Module Instance "
			   "call_def_1_instance_1 DefID 1 (");
	/* the per-instance reference: sg1's module on cores 3 and 2 */
	{
		lm_module **refs;
		int nr;
		ck_assert_int_eq(lk_instance_modules(m, 2, &refs, &nr, &e), 0);
		ck_assert_int_eq(nr, 4);
		ck_assert_int_eq(refs[2]->neuron_core_id, 3);
		ck_assert_int_eq(refs[3]->neuron_core_id, 2);
		ck_assert_ptr_nonnull(alloc_in(&refs[3]->functions[0], "b_1"));
		for (int i = 0; i < nr; i++)
			lm_module_free(refs[i]);
		free(refs);
	}
	lm_buf_free(&log);
	lk_report_free(&rep);
	lm_module_free(out);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	free(p0);
	free(p1);
}
END_TEST

/* Definition ids are the netlist's own, not cores nor positions: ids 63
** and 5 name the functions nc5 and nc63 and their Calls, in id order. */
START_TEST(test_def_ids)
{
	char *dir = tu_tmpdir("ids"), *p[2];
	static const char *const files[] = {
		"nc0/sg0/def.json", "nc0/sg0/w.npy", "nc0/sg1/def.json",
	};
	lm_module *m[2], *out = NULL;
	lk_options o;
	lk_report rep;
	lm_error e;
	lm_verify_opts vo = { 1 };
	const lm_block *d;
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char *rel = lm_xasprintf("tests/fixtures/modflow/%s", files[i]);
		char *src = tu_srcpath(rel);
		free(tu_write(dir, files[i], ""));
		tu_copy(src, dir, files[i]);
		free(src);
		free(rel);
	}
	free(tu_write(dir, "hlo_netlist.json",
		"{\"definitions\":[{\"id\":63,\"subgraph\":\"nc0/sg0\"},"
		"{\"id\":5,\"subgraph\":\"nc0/sg1\"}],\"instances\":["
		"{\"def\":63,\"core\":0,\"arguments\":{\"a\":\"a_0\",\"y\":\"y_0\"}},"
		"{\"def\":5,\"core\":7,\"arguments\":{\"b\":\"b_0\",\"z\":\"z_0\"}}]}"));
	p[0] = lm_path_join(dir, "nc0/sg0/def.json");
	p[1] = lm_path_join(dir, "nc0/sg1/def.json");
	m[0] = tu_load(p[0]);
	m[1] = tu_load(p[1]);
	memset(&o, 0, sizeof o);
	o.abs_file_paths = 1;
	ck_assert_msg(lk_link(m, 2, &o, &out, &rep, &e) == 0, "%s", e.msg);
	ck_assert_str_eq(out->functions[1].name, "nc5");
	ck_assert_str_eq(out->functions[2].name, "nc63");
	ck_assert_ptr_nonnull(alloc_in(&out->functions[1], "nc5.b"));
	ck_assert_ptr_nonnull(alloc_in(&out->functions[2], "nc63.a"));
	d = &out->functions[0].blocks[0];
	ck_assert_int_eq(d->n_insts, 2);
	ck_assert_str_eq(d->insts[0].name, "call_def_5_instance_0");
	ck_assert_str_eq(d->insts[0].target, "nc5");
	ck_assert_int_eq(core_of(&d->insts[0]), 7);
	ck_assert_str_eq(arg_of(&d->insts[0], "nc5.z"), "z_0");
	ck_assert_str_eq(d->insts[1].name, "call_def_63_instance_0");
	ck_assert_int_eq(core_of(&d->insts[1]), 0);
	ck_assert_msg(lm_verify(out, &vo, &e) == 0, "%s", e.msg);
	lk_report_free(&rep);
	lm_module_free(out);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	free(p[0]);
	free(p[1]);
	free(dir);
}
END_TEST

/* A definition's directory nc<c> is its module's core: a module of
** another core there is refused. */
START_TEST(test_dir_core)
{
	set s;
	lm_module *out = NULL;
	lk_report rep;
	lm_error e;
	set_load(&s, "dircore", NET_OK);
	s.m[1]->neuron_core_id = 3;
	ck_assert_int_eq(link_set(&s, 0, &out, &rep, NULL, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "hlo_netlist.json: definitions[1]: "
			   "definition 1: module ");
	ck_assert_contains(e.msg, "has neuron_core_id 3 (its directory says "
			   "1)");
	ck_assert_ptr_null(out);
	lk_report_free(&rep);
	set_free(&s);
}
END_TEST

/* Without a netlist two modules of one core are refused: each module
** would be its own definition with one instance on its core. */
START_TEST(test_one_core_no_netlist)
{
	char *p0, *p1, *dir = tu_tmpdir("nonet");
	lm_module *m[2], *out = NULL;
	lk_options o;
	lk_report rep;
	lm_error e;
	tu_run r;
	char *q0 = lm_path_join(dir, "md/nc0/sg0/def.json");
	char *q1 = lm_path_join(dir, "md/nc0/sg1/def.json");
	fixture_paths(&p0, &p1);
	free(tu_write(dir, "md/nc0/sg0/def.json", ""));
	free(tu_write(dir, "md/nc0/sg1/def.json", ""));
	tu_copy(p0, dir, "md/nc0/sg0/def.json");
	tu_copy(p1, dir, "md/nc0/sg1/def.json");
	{
		char *w = tu_srcpath("tests/fixtures/modflow/nc0/sg0/w.npy");
		tu_copy(w, dir, "md/nc0/sg0/w.npy");
		free(w);
	}
	m[0] = tu_load(q0);
	m[1] = tu_load(q1);
	memset(&o, 0, sizeof o);
	o.dry_run = 1;
	ck_assert_int_eq(lk_link(m, 2, &o, &out, &rep, &e), LM_EINPUT);
	ck_assert_contains(e.msg, "duplicate neuron_core_id 0");
	ck_assert_contains(e.msg, "hlo_netlist.json");
	ck_assert_ptr_null(out);
	lk_report_free(&rep);
	r = tu_lncsim(NULL, "link", "--dry-run", q0, q1, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "duplicate neuron_core_id 0");
	tu_run_free(&r);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	free(q0);
	free(q1);
	free(p0);
	free(p1);
	free(dir);
}
END_TEST

/* End to end: diff proves the link of the fixture against its four
** instances; link, verify --linked and run of the file. */
START_TEST(test_one_core_diff)
{
	char *p0, *p1, *dir = tu_tmpdir("modflow");
	char *lp = lm_path_join(dir, "modflow/sgLnk/def.json");
	tu_run r;
	fixture_paths(&p0, &p1);
	r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "2", "--race",
		      p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "reference + 2 perturbed schedules");
	ck_assert_contains(r.out, "PASS modflow (2 module definitions, 4 "
			   "instances): 4 outputs bit-identical");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "link", "-o", dir, p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "modflow/sgLnk: 2 module definitions -> 3 "
			   "functions");
	ck_assert_contains(r.out, "modular flow: 2 module definitions, 4 "
			   "instances");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", "--linked", lp, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", lp, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "4 cores");
	ck_assert_contains(r.out, "output z_1: float32 [128, 64]");
	tu_run_free(&r);
	free(lp);
	free(p0);
	free(p1);
	free(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("multidef");
	TCase *tc = tcase_create("modular");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_structure);
	tcase_add_test(tc, test_reference);
	tcase_add_test(tc, test_reference_indices);
	tcase_add_test(tc, test_run);
	tcase_add_test(tc, test_verify_linked);
	tcase_add_loop_test(tc, test_bad_netlist, 0,
			    (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, test_shared_semaphore);
	tcase_add_test(tc, test_param_view);
	tcase_add_test(tc, test_helper_call);
	tcase_add_test(tc, test_one_core_two_defs);
	tcase_add_test(tc, test_one_core_no_netlist);
	tcase_add_test(tc, test_def_ids);
	tcase_add_test(tc, test_dir_core);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_diff);
	tcase_add_test(tc, test_bad_cli);
	tcase_add_test(tc, test_one_core_diff);
	tcase_add_test(tc, test_netlist_special);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_diff.c -- the differential checker (`lncsim diff`, `lncsim fuzz`):
** pass on correct links, every kind of failure reported as such, and the
** teeth: linking with any single step switched off makes the check fail.
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "dtype.h"
#include "verify.h"
#include "linker.h"
#include "diff.h"
#include "gen.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(test_diff_handoff2_passes)
{
	char *ex = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", ex, NULL);
	ck_assert_msg(r.status == 0, "out %s err %s", r.out, r.err);
	ck_assert_contains(r.out, "PASS handoff2 (2 cores): 1 output bit-identical, "
			   "1 hand-off");
	tu_run_free(&r);
	free(ex);
}
END_TEST

START_TEST(test_diff_mlp4_passes)
{
	char *ex = tu_srcpath("examples/mlp4");
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "2", ex, NULL);
	ck_assert_msg(r.status == 0, "out %s err %s", r.out, r.err);
	ck_assert_contains(r.out, "PASS mlp4 (4 cores): 4 outputs bit-identical, "
			   "4 hand-offs, reference + 2 perturbed schedules");
	tu_run_free(&r);
	free(ex);
}
END_TEST

/* A linked module with a changed op: the mismatch report names the tensor,
** the count, the first index and both values in hex and decimal. */
START_TEST(test_diff_reports_mismatch)
{
	char *d = tu_tmpdir("diffmm");
	char *ex = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(d, "link", "-o", "lk", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *p = lm_xasprintf("%s/lk/handoff2/sgLnk/def.json", d);
	char *t = tu_read(p);
	ck_assert_ptr_nonnull(t);
	char *op = strstr(t, "\"op\":\"add\""); /* def.json is compact */
	ck_assert_msg(op != NULL, "linked module has no add");
	memcpy(op, "\"op\":\"max\"", 10);
	free(tu_write(d, "lk/handoff2/sgLnk/def.json", t));
	r = tu_lncsim(d, "diff", "--no-db", "--linked", p, ex, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "FAIL handoff2 (2 cores): mismatch: tensor 'z'");
	ck_assert_contains(r.out, "elements differ; first at [");
	ck_assert_contains(r.out, "reference 0x");
	ck_assert_contains(r.out, "linked 0x");
	tu_run_free(&r);
	free(t);
	free(p);
	free(ex);
	free(d);
}
END_TEST

/* --linked with a tensor-map.json beside it that is not a readable tensor
** map: the check fails as tensor-map, it is not skipped. */
START_TEST(test_diff_linked_bad_tensor_map)
{
	char *d = tu_tmpdir("difftm");
	char *ex = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(d, "link", "-o", "lk", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *p = lm_xasprintf("%s/lk/handoff2/sgLnk/def.json", d);
	char *tm = lm_xasprintf("%s/lk/handoff2/sgLnk/tensor-map.json", d);
	/* the good map passes */
	r = tu_lncsim(d, "diff", "--no-db", "--linked", p, ex, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	const char *bad[] = { "{\"tensors\": 3}", "{ nope", NULL };
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(unlink(tm), 0);
		if (bad[i])
			free(tu_write(d, "lk/handoff2/sgLnk/tensor-map.json",
				      bad[i]));
		else
			ck_assert_int_eq(mkfifo(tm, 0600), 0);
		r = tu_lncsim(d, "diff", "--no-db", "--linked", p, ex, NULL);
		ck_assert_msg(r.status == 1, "case %d: %s%s", i, r.out, r.err);
		ck_assert_contains(r.out, "FAIL handoff2 (2 cores): tensor-map: ");
		ck_assert_contains(r.out, i == 0 ? "no \"tensors\" array" :
				   i == 1 ? "malformed JSON" :
				   "not a regular file (a FIFO)");
		tu_run_free(&r);
	}
	/* no map at all: nothing to check */
	ck_assert_int_eq(unlink(tm), 0);
	r = tu_lncsim(d, "diff", "--no-db", "--linked", p, ex, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	free(tm);
	free(p);
	free(ex);
	tu_rmtree(d);
	free(d);
}
END_TEST

START_TEST(test_diff_output_set)
{
	char *ex = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", "--skip=fix_output_kind,verify",
			     ex, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "output set: the linked module has an "
			   "unexpected external output 'h' (a cross-core hand-off)");
	tu_run_free(&r);
	free(ex);
}
END_TEST

/* A write-write race: one schedule hides it, perturbed ones expose it. */
START_TEST(test_diff_detects_race)
{
	char *racy = tu_srcpath("tests/fixtures/diff/racy");
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "4", racy,
			     NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "differs under perturbed schedule");
	ck_assert_contains(r.out, "not race-free");
	tu_run_free(&r);
	free(racy);
}
END_TEST

START_TEST(test_diff_bad_input)
{
	char *ex = tu_srcpath("examples/handoff2");
	char *d = tu_tmpdir("diffbad");
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "no MODULE given");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "x", ex, NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--skip=bogus", ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "unknown step 'bogus'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--inputs", d, ex, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "missing input 'a'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "/no/such/dir", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: /no/such/dir: no such file");
	tu_run_free(&r);
	free(ex);
	free(d);
}
END_TEST

/* --save-io writes the inputs, both output sets and the linked module. */
START_TEST(test_diff_save_io)
{
	char *ex = tu_srcpath("examples/handoff2");
	char *d = tu_tmpdir("diffio");
	tu_run r = tu_lncsim(d, "diff", "--no-db", "--save-io", "io", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	const char *files[] = {"io/inputs/a.npy", "io/reference/z.npy",
			       "io/reference/h.npy", "io/linked/z.npy",
			       "io/linked.json"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *p = lm_xasprintf("%s/%s", d, files[i]);
		char *t = tu_read(p);
		ck_assert_msg(t != NULL, "%s missing", files[i]);
		free(t);
		free(p);
	}
	/* the reference and linked z are the same bytes */
	char *a = lm_xasprintf("%s/io/reference/z.npy", d);
	char *b = lm_xasprintf("%s/io/linked/z.npy", d);
	char *bytes_a, *bytes_b;
	size_t na, nb;
	lm_error e;
	ck_assert_int_eq(lm_read_file(a, &bytes_a, &na, &e), 0);
	ck_assert_int_eq(lm_read_file(b, &bytes_b, &nb, &e), 0);
	ck_assert_uint_eq(na, nb);
	ck_assert(memcmp(bytes_a, bytes_b, na) == 0);
	free(bytes_a);
	free(bytes_b);
	free(a);
	free(b);
	free(ex);
	free(d);
}
END_TEST

/* The run is logged: status, both executions, one row per tensor. */
START_TEST(test_diff_logged)
{
	char *ex = tu_srcpath("examples/handoff2");
	char *d = tu_tmpdir("difflog");
	tu_run r = tu_lncsim(d, "diff", "--db", "t.db", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "db", "runs", "--db", "t.db", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "pass");
	ck_assert_contains(r.out, "handoff2 (");
	tu_run_free(&r);
	free(ex);
	free(d);
}
END_TEST

/* ---- the expected output set: reads, not views --------------------------- */

/* Strings of one test, freed by g_free. */
static char *g_strs[64];
static int g_n;

static const char *G(char *p)
{
	ck_assert_int_lt(g_n, 64);
	return g_strs[g_n++] = p;
}

static void g_free(void)
{
	while (g_n > 0)
		free(g_strs[--g_n]);
}

/* A [1, 4] float32 allocation (memory type mt: DRAM, Output or SB). */
static const char *t14(const char *name, const char *kind, const char *mt,
		       int addr, const char *more)
{
	return G(lm_xasprintf("{\"name\":\"%s\",\"kind\":\"%s\",\"dtype\":"
			      "\"float32\",\"tensor_shape\":[1,4],"
			      "\"memorylocations\":[{\"name\":\"%s\",\"type\":"
			      "\"%s\",\"addr\":%d,\"dims\":[1,16],\"bank\":0,"
			      "\"base\":0,\"allocated\":true}]%s}", name, kind,
			      name, mt, addr, more ? more : ""));
}

static const char *dma14(const char *name, const char *src, const char *dst,
			 const char *more)
{
	return G(lm_xasprintf("{\"opcode\":\"DMACopy\",\"name\":\"%s\","
			      "\"engine\":\"SP\",\"queue\":\"q\",\"ins\":[{"
			      "\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
			      "\"memref\":\"%s\",\"offset\":0,\"ap\":[[4,1],"
			      "[1,4]],\"dtype\":\"float32\"}],\"outs\":[{\"kind\":"
			      "\"physical_ap\",\"memsetref\":\"%s\",\"memref\":"
			      "\"%s\",\"offset\":0,\"ap\":[[4,1],[1,4]],\"dtype\":"
			      "\"float32\"}]%s}", name, src, src, dst, dst,
			      more ? more : ""));
}

static lm_module *mod14(int core, const char *allocs, const char *insts)
{
	char *j = lm_xasprintf(
		"{\"version\":2,\"arch\":\"gen3\",\"name\":\"reads\","
		"\"attributes\":{\"neuron_core_id\":%d},\"semaphores\":[{"
		"\"name\":\"s\",\"init\":0}],\"queues\":[{\"name\":\"q\","
		"\"instances\":[{\"name\":\"qi\",\"semaphore\":\"s\"}]}],"
		"\"functions\":[{\"name\":\"sg0\",\"attributes\":[],"
		"\"allocations\":[%s],\"blocks\":[{\"name\":\"b\","
		"\"instructions\":[%s]}]}]}", core, allocs, insts);
	char path[64];
	lm_module *m = NULL;
	lm_error e;
	snprintf(path, sizeof path, "reads/nc%d/sg0/def.json", core);
	if (lm_module_parse(&m, j, strlen(j), path, &e) != 0 ||
	    lm_verify(m, NULL, &e) != 0)
		ck_abort_msg("%s\n%s", e.msg, j);
	free(j);
	return m;
}

/*
** Core 0 copies x into h and u (ExternalOutputs; h's memory location of
** type h_type) and then meets core 1 at a barrier; core 1 holds views h_in
** and u_in but reads only h_in (into its output z).
*/
static void reads_pair(const char *h_type, lm_module **m)
{
	const char *wait = ",\"wait\":[{\"semaphore\":\"s\",\"value\":1}]";
	m[0] = mod14(0, G(lm_xasprintf("%s,%s,%s,%s",
			t14("x", "ExternalInput", "DRAM", 0, NULL),
			t14("h", "ExternalOutput", h_type, 64, NULL),
			t14("u", "ExternalOutput", "DRAM", 128, NULL),
			t14("t", "Internal", "SB", 0, NULL))),
		G(lm_xasprintf("%s,%s,%s,{\"opcode\":\"CoreBarrier\",\"name\":"
			"\"bar\",\"engine\":\"Pool\",\"id\":1,\"cores\":[0,1],"
			"\"group\":\"g\",\"dependencies\":[\"st_h\",\"st_u\"]}",
			dma14("ld", "x", "t", NULL),
			dma14("st_h", "t", "h", wait),
			dma14("st_u", "t", "u", wait))));
	m[1] = mod14(1, G(lm_xasprintf("%s,%s,%s,%s",
			t14("h_in", "Internal", "DRAM", 64,
			    ",\"remote_local_target\":{\"name\":\"h\",\"core\":0}"),
			t14("u_in", "Internal", "DRAM", 128,
			    ",\"remote_local_target\":{\"name\":\"u\",\"core\":0}"),
			t14("z", "ExternalOutput", "DRAM", 192, NULL),
			t14("t", "Internal", "SB", 0, NULL))),
		G(lm_xasprintf("{\"opcode\":\"CoreBarrier\",\"name\":\"bar\","
			"\"engine\":\"Pool\",\"id\":1,\"cores\":[0,1],\"group\":"
			"\"g\"},%s,%s",
			dma14("ld", "h_in", "t", ",\"dependencies\":[\"bar\"]"),
			dma14("st", "t", "z", wait))));
}

/* Link the pair and diff it (the linked module altered by demote, a name
** to demote by hand as a linker demoting on views would). */
static void link_diff(lm_module **m, const char *demote, ls_diff_result *dr)
{
	lk_options o;
	lk_report rep;
	lm_module *lk = NULL;
	ls_tensors in = {0, NULL};
	int64_t shape[2] = {1, 4};
	float x[4] = {1, 2, 3, 4};
	lm_error e;
	memset(&o, 0, sizeof o);
	ck_assert_msg(lk_link(m, 2, &o, &lk, &rep, &e) == 0, "%s", e.msg);
	lk_report_free(&rep);
	if (demote) {
		lm_function *mf = &lk->functions[0];
		for (int a = 0; a < mf->n_allocs; a++)
			if (!strcmp(mf->allocs[a].name, demote))
				mf->allocs[a].kind = LM_TK_INTERNAL;
	}
	ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	ck_assert_msg(ls_diff(m, 2, lk, &in, NULL, dr, &e) == 0, "%s", e.msg);
	ls_tensors_free(&in);
	lm_module_free(lk);
}

static int has_name(char **v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

/*
** A view nobody reads does not make a hand-off: u stays an expected host
** output (the reference run hands it to the host), h -- read by core 1 --
** is the hand-off. A linker demoting on views (u) fails the check.
*/
START_TEST(test_diff_unread_view)
{
	lm_module *m[2];
	ls_diff_result dr;
	reads_pair("DRAM", m);
	link_diff(m, NULL, &dr);
	ck_assert_msg(dr.status == LS_DIFF_PASS, "%s", dr.message);
	ck_assert_int_eq(dr.n_expected, 2);
	ck_assert(has_name(dr.expected, dr.n_expected, "u"));
	ck_assert(has_name(dr.expected, dr.n_expected, "z"));
	ck_assert_int_eq(dr.n_handoffs, 1);
	ck_assert_str_eq(dr.handoffs[0], "h");
	ls_diff_result_free(&dr);
	link_diff(m, "u", &dr);
	ck_assert_int_eq(dr.status, LS_DIFF_OUTPUT_SET);
	ck_assert_str_eq(dr.message, "output set: expected output 'u' is "
			 "missing from the linked module");
	ls_diff_result_free(&dr);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	g_free();
}
END_TEST

/*
** h is a model output (memory location of type Output) that core 1 also
** reads: it stays an expected host output, and the linker keeps it; a
** linker that demoted it fails the check.
*/
START_TEST(test_diff_handoff_model_output)
{
	lm_module *m[2];
	ls_diff_result dr;
	reads_pair("Output", m);
	link_diff(m, NULL, &dr);
	ck_assert_msg(dr.status == LS_DIFF_PASS, "%s", dr.message);
	ck_assert_int_eq(dr.n_expected, 3);
	ck_assert(has_name(dr.expected, dr.n_expected, "h"));
	ck_assert_int_eq(dr.n_handoffs, 0);
	ls_diff_result_free(&dr);
	link_diff(m, "h", &dr);
	ck_assert_int_eq(dr.status, LS_DIFF_OUTPUT_SET);
	ck_assert_str_eq(dr.message, "output set: expected output 'h' is "
			 "missing from the linked module");
	ls_diff_result_free(&dr);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	g_free();
}
END_TEST

/*
** A hand-off made by name: core 1's ExternalInput h (at its own address)
** is core 0's ExternalOutput h. The reference run gives core 1 core 0's
** storage (no host tensor h is needed), the linker maps the input to the
** output; linked == per-core and h is a hand-off.
*/
START_TEST(test_diff_name_matched_handoff)
{
	const char *wait = ",\"wait\":[{\"semaphore\":\"s\",\"value\":1}]";
	const char *bar = "{\"opcode\":\"CoreBarrier\",\"name\":\"bar\","
		"\"engine\":\"Pool\",\"id\":1,\"cores\":[0,1],\"group\":\"g\"";
	lm_module *m[2];
	ls_diff_result dr;
	m[0] = mod14(0, G(lm_xasprintf("%s,%s,%s",
			t14("x", "ExternalInput", "DRAM", 0, NULL),
			t14("h", "ExternalOutput", "DRAM", 64, NULL),
			t14("t", "Internal", "SB", 0, NULL))),
		G(lm_xasprintf("%s,%s,%s,\"dependencies\":[\"st\"]}",
			dma14("ld", "x", "t", NULL),
			dma14("st", "t", "h", wait), bar)));
	m[1] = mod14(1, G(lm_xasprintf("%s,%s,%s",
			t14("h", "ExternalInput", "DRAM", 512, NULL),
			t14("z", "ExternalOutput", "DRAM", 192, NULL),
			t14("t", "Internal", "SB", 0, NULL))),
		G(lm_xasprintf("%s},%s,%s", bar,
			dma14("ld", "h", "t", ",\"dependencies\":[\"bar\"]"),
			dma14("st", "t", "z", wait))));
	link_diff(m, NULL, &dr);
	ck_assert_msg(dr.status == LS_DIFF_PASS, "%s", dr.message);
	ck_assert_int_eq(dr.n_expected, 1);
	ck_assert_str_eq(dr.expected[0], "z");
	ck_assert_int_eq(dr.n_handoffs, 1);
	ck_assert_str_eq(dr.handoffs[0], "h");
	ls_diff_result_free(&dr);
	lm_module_free(m[1]);

	/* the input must be the output's dtype and size */
	{
		char *h16 = lm_xstrdup(t14("h", "ExternalInput", "DRAM", 512,
					   NULL));
		ls_result r;
		ls_tensors in = {0, NULL};
		int64_t shape[2] = {1, 4};
		float x[4] = {1, 2, 3, 4};
		lm_error e;
		memcpy(strstr(h16, "float32"), "float16", 7);
		m[1] = mod14(1, G(lm_xasprintf("%s,%s",
				G(h16), t14("z", "ExternalOutput", "DRAM", 192,
					    NULL))), "");
		ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
		ck_assert_int_eq(ls_run_multi(m, 2, &in, NULL, &r, &e),
				 LM_EINPUT);
		ck_assert_contains(e.msg, "external input 'h' is the external "
				   "output of reads/nc0/sg0/def.json with "
				   "another dtype or shape");
		ls_tensors_free(&in);
	}
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	g_free();
}
END_TEST

/*
** The generator exercises both output-kind cases the checker must tell
** apart from hand-offs: a view of another core's output that is never read
** (y_nc<p>_peek) and a hand-off that is also a model output (location type
** Output). lncsim fuzz catches a linker that demotes either.
*/
START_TEST(test_gen_output_kind_cases)
{
	int n_peek = 0, n_model = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		ls_gen_opts o = {2 + (int)(seed % 3), seed, LS_GEN_SMALL, NULL,
				 NULL, 0, 0, 0, 0, 0};
		lm_module **mods;
		ls_gen_file *files;
		int nf;
		lm_error e;
		ck_assert_msg(ls_gen(&o, "out", &mods, &files, &nf, &e) == 0,
			      "%s", e.msg);
		for (int c = 0; c < o.cores; c++) {
			const lm_function *f = &mods[c]->functions[0];
			for (int a = 0; a < f->n_allocs; a++) {
				const lm_alloc *al = &f->allocs[a];
				if (al->has_remote &&
				    !strncmp(al->remote_name, "y_nc", 4))
					n_peek++;
				if (lm_tensorkind_is_ext_output(al->kind) &&
				    al->memlocs[0].type == LM_MT_OUTPUT)
					n_model++;
			}
			lm_module_free(mods[c]);
		}
		free(mods);
		ls_gen_files_free(files, nf);
	}
	ck_assert_int_gt(n_peek, 0);
	ck_assert_int_gt(n_model, 0);
}
END_TEST

/* ---- teeth ---------------------------------------------------------- */

static const struct {
	const char *step, *kind;
	int regs;       /* observable only where the generator makes registers */
} teeth[] = {
	{ "copy_modules_as_functions", "[verifier]", 0 },
	{ "copy_allocs", "[verifier]", 0 },
	{ "remap_registers", "[verifier]", 1 },
	{ "fpass_insert_returns", "[verifier]", 0 },
	{ "fpass_insert_switch_queue_instances", "[verifier]", 0 },
	{ "build_main_memlocs", "[linked-error]", 0 },
	{ "build_main_aliases", "[verifier]", 0 },
	{ "fix_output_kind", "[output-set]", 0 },
	{ "build_main_tensor_map", "[tensor-map]", 0 },
	{ "init_queues", "[linked-error]", 0 },
	{ "add_fn_call", "[verifier]", 0 },
	{ "setup_link_dir", "[linked-error]", 0 },
	{ "renumber_core_barriers", "[verifier]", 0 },
};

/* Copy the Const file src to dir/nc<c>/sg0/wc.npy (bytes). */
static void copy_file(const char *src, const char *dir, int c)
{
	char *rel = lm_xasprintf("nc%d/sg0/wc.npy", c);
	char *dst = lm_path_join(dir, rel);
	char buf[4096];
	size_t n;
	FILE *in = fopen(src, "rb"), *out;
	free(tu_write(dir, rel, "")); /* creates the directories */
	out = fopen(dst, "wb");
	ck_assert(in && out);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert(fwrite(buf, 1, n, out) == n);
	fclose(in);
	ck_assert(fclose(out) == 0);
	free(dst);
	free(rel);
}

/*
** handoff2 copied into dir/nc<c>/sg0/def.json with an ExternalOutput 'w'
** on core 1 that no instruction writes (its allocation ends with w_keys).
*/
static void handoff_with_w(const char *dir, const char *w_keys)
{
	for (int c = 0; c < 2; c++) {
		char *rel = lm_xasprintf("examples/handoff2/nc%d/sg0/def.json", c);
		char *src = tu_srcpath(rel);
		char *wc = tu_srcpath("examples/handoff2/nc0/sg0/wc.npy");
		char *text = tu_read(src), *out, *name;
		cJSON *j, *a, *al;
		ck_assert_ptr_nonnull(text);
		j = cJSON_Parse(text);
		ck_assert_ptr_nonnull(j);
		al = cJSON_GetObjectItem(cJSON_GetArrayItem(
			cJSON_GetObjectItem(j, "functions"), 0), "allocations");
		(void)a;
		copy_file(wc, dir, c);
		if (c == 1) {
			char *w = lm_xasprintf(
				"{\"name\":\"w\",\"kind\":\"ExternalOutput\","
				"\"dtype\":\"float32\",\"tensor_shape\":[4,4],"
				"\"file\":\"\",\"memorylocations\":[{\"name\":"
				"\"w\",\"type\":\"DRAM\",\"addr\":262144,"
				"\"dims\":[4,16],\"bank\":0,\"base\":0,"
				"\"allocated\":true}]%s}", w_keys);
			cJSON_AddItemToArray(al, cJSON_Parse(w));
			free(w);
		}
		out = cJSON_Print(j);
		name = lm_xasprintf("nc%d/sg0/def.json", c);
		free(tu_write(dir, name, out));
		free(name);
		cJSON_free(out);
		cJSON_Delete(j);
		free(text);
		free(wc);
		free(src);
		free(rel);
	}
}

/* Two results of one run are the same: time, counts, every output's bits. */
static void same_result(const ls_result *a, const ls_result *b)
{
	ck_assert_int_eq(a->sim_time_ps, b->sim_time_ps);
	ck_assert_int_eq(a->instructions, b->instructions);
	ck_assert_int_eq(a->n_matmuls, b->n_matmuls);
	ck_assert_int_eq(a->outputs.n, b->outputs.n);
	for (int i = 0; i < a->outputs.n; i++) {
		const ls_tensor *x = &a->outputs.t[i];
		const ls_tensor *y = ls_tensors_find(&b->outputs, x->name);
		ck_assert_ptr_nonnull(y);
		ck_assert_int_eq(x->count, y->count);
		ck_assert_int_eq(x->read_by_other_module,
				 y->read_by_other_module);
		ck_assert(!memcmp(x->data, y->data, (size_t)x->count *
				  (size_t)lm_dtype_size(x->dtype)));
	}
}

/*
** A machine prepared once and run again and again (schedules in any
** order, repeated) gives what a fresh run under each schedule gives: the
** reset puts back everything a run changes.
*/
START_TEST(test_machine_rerun)
{
	char *ex = tu_srcpath("examples/mlp4");
	lm_module *mods[4], *lk = NULL;
	lm_error e;
	for (int c = 0; c < 4; c++) {
		char *p = lm_xasprintf("%s/nc%d/sg0/def.json", ex, c);
		ck_assert_msg(lm_module_load(&mods[c], p, &e) == 0, "%s", e.msg);
		free(p);
	}
	lk_options lo;
	memset(&lo, 0, sizeof lo);
	lo.abs_file_paths = 1;
	ck_assert_msg(lk_link(mods, 4, &lo, &lk, NULL, &e) == 0, "%s", e.msg);
	ls_tensors in;
	memset(&in, 0, sizeof in);
	ck_assert_int_eq(ls_make_inputs(mods, 4, NULL, 7, &in, &e), 0);
	static const int order[] = { 0, 3, 1, 0, 2, 3 };
	for (int side = 0; side < 2; side++) {
		ls_machine *mc = NULL;
		lm_module **ms = side ? &lk : mods;
		int n = side ? 1 : 4;
		ck_assert_int_eq(ls_machine_prepare(&mc, ms, n, !side, &in, NULL,
						    &e), 0);
		for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
			ls_options o;
			ls_result fresh, again;
			memset(&o, 0, sizeof o);
			o.perturb_seed = (uint64_t)order[k] * 0x9e3779b97f4a7c15ULL;
			int rc = side ? ls_run(lk, &in, &o, &fresh, &e)
				      : ls_run_multi(mods, 4, &in, &o, &fresh, &e);
			ck_assert_msg(rc == 0, "%s", e.msg);
			ck_assert_msg(ls_machine_run(mc, &o, &again, &e) == 0, "%s",
				      e.msg);
			same_result(&fresh, &again);
			ls_result_free(&fresh);
			ls_result_free(&again);
		}
		ls_machine_free(mc);
	}
	ls_tensors_free(&in);
	lm_module_free(lk);
	for (int c = 0; c < 4; c++)
		lm_module_free(mods[c]);
	free(ex);
}
END_TEST

/* An output neither run writes fails the check; "partial_output" allows it. */
START_TEST(test_diff_unwritten_output)
{
	char *d = tu_tmpdir("diffunw");
	char *mods = lm_path_join(d, "m");
	tu_run r;

	handoff_with_w(mods, "");
	r = tu_lncsim(NULL, "diff", "--no-db", mods, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "FAIL ");
	ck_assert_contains(r.out, "reference run failed: ");
	ck_assert_contains(r.out, "external output 'w' is not fully written: "
			   "element [0, 0] (flat index 0) was never written "
			   "(16 of 16 elements unwritten");
	tu_run_free(&r);

	/* declared partial: both runs leave it 0xff, which compares equal */
	handoff_with_w(mods, ",\"partial_output\":true");
	r = tu_lncsim(NULL, "diff", "--no-db", mods, NULL);
	ck_assert_msg(r.status == 0, "out %s err %s", r.out, r.err);
	ck_assert_contains(r.out, "2 outputs bit-identical");
	tu_run_free(&r);

	/* the linked module alone leaves it unwritten */
	r = tu_lncsim(d, "link", "-o", "lk", "m", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *p = lm_path_join(d, "lk/handoff2/sgLnk/def.json");
	char *t = tu_read(p), *at;
	ck_assert_ptr_nonnull(t);
	at = strstr(t, "\"partial_output\":true");
	ck_assert_msg(at != NULL, "no partial_output in the linked module");
	memcpy(at, "\"partial_output\":null", 21);
	free(tu_write(d, "lk/handoff2/sgLnk/def.json", t));
	r = tu_lncsim(NULL, "diff", "--no-db", "--linked", p, mods, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "linked run failed: ");
	ck_assert_contains(r.out, "external output 'w' is not fully written");
	tu_run_free(&r);
	free(t);
	free(p);
	free(mods);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** "partial_output": true on the hand-off h: the linker demotes h to
** Internal and drops the key with the kind (an Internal allocation has no
** host output to be partial), so the linked module runs and diff passes.
*/
START_TEST(test_diff_partial_handoff)
{
	char *d = tu_tmpdir("diffpho");
	char *mods = lm_path_join(d, "m");
	lm_module *lk = NULL;
	lm_error e;
	tu_run r;

	for (int c = 0; c < 2; c++) {
		char *rel = lm_xasprintf("examples/handoff2/nc%d/sg0/def.json", c);
		char *src = tu_srcpath(rel);
		char *wc = tu_srcpath("examples/handoff2/nc0/sg0/wc.npy");
		char *text = tu_read(src), *out, *name;
		cJSON *j, *al, *h = NULL;
		ck_assert_ptr_nonnull(text);
		j = cJSON_Parse(text);
		ck_assert_ptr_nonnull(j);
		al = cJSON_GetObjectItem(cJSON_GetArrayItem(
			cJSON_GetObjectItem(j, "functions"), 0), "allocations");
		cJSON_ArrayForEach(h, al)
			if (!strcmp(cJSON_GetStringValue(
				    cJSON_GetObjectItem(h, "name")), "h"))
				break;
		if (c == 0) {
			ck_assert_ptr_nonnull(h);
			cJSON_AddTrueToObject(h, "partial_output");
		}
		copy_file(wc, mods, c);
		out = cJSON_Print(j);
		name = lm_xasprintf("nc%d/sg0/def.json", c);
		free(tu_write(mods, name, out));
		free(name);
		cJSON_free(out);
		cJSON_Delete(j);
		free(text);
		free(wc);
		free(src);
		free(rel);
	}
	r = tu_lncsim(NULL, "diff", "--no-db", mods, NULL);
	ck_assert_msg(r.status == 0, "out %s err %s", r.out, r.err);
	ck_assert_contains(r.out, "1 output bit-identical, 1 hand-off");
	tu_run_free(&r);

	r = tu_lncsim(d, "link", "-o", "lk", "m", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *p = lm_path_join(d, "lk/handoff2/sgLnk/def.json");
	ck_assert_msg(lm_module_load(&lk, p, &e) == 0, "%s", e.msg);
	int seen = 0;
	for (int f = 0; f < lk->n_functions; f++)
		for (int a = 0; a < lk->functions[f].n_allocs; a++) {
			const lm_alloc *al = &lk->functions[f].allocs[a];
			if (strcmp(al->name, "h"))
				continue;
			seen++;
			ck_assert_int_eq(al->kind, LM_TK_INTERNAL);
			ck_assert_msg(!al->extra || !cJSON_GetObjectItem(
				al->extra, "partial_output"),
				"partial_output kept on the demoted h");
		}
	ck_assert_int_eq(seen, 1);
	lm_module_free(lk);
	free(p);
	free(mods);
	tu_rmtree(d);
	free(d);
}
END_TEST

/*
** Each step switched off (and the linker's own verify with it, so the
** checker alone must notice) makes diff fail within 50 generated seeds,
** with the expected kind of failure.
*/
START_TEST(test_teeth)
{
	char *skip = lm_xasprintf("--skip=%s,verify", teeth[_i].step);
	tu_run r = tu_lncsim(NULL, "fuzz", "--no-db", "-q", "--count", "50",
			     "--cores", "2-6", "--stop", "--jobs", "1", skip, NULL);
	ck_assert_msg(r.status == 1, "step %s not caught: %s", teeth[_i].step,
		      r.out);
	ck_assert_contains(r.out, teeth[_i].kind);
	tu_run_free(&r);
	free(skip);
}
END_TEST

/* The same with the generator's loops (gen --loops): every step is still
** caught, with the same kind of failure. */
START_TEST(test_teeth_loops)
{
	if (teeth[_i].regs)
		return; /* static loops on dependencies make no register */
	char *skip = lm_xasprintf("--skip=%s,verify", teeth[_i].step);
	tu_run r = tu_lncsim(NULL, "fuzz", "--no-db", "-q", "--count", "50",
			     "--cores", "2-6", "--loops", "--stop", "--jobs",
			     "1", skip, NULL);
	ck_assert_msg(r.status == 1, "step %s not caught with --loops: %s",
		      teeth[_i].step, r.out);
	ck_assert_contains(r.out, teeth[_i].kind);
	tu_run_free(&r);
	free(skip);
}
END_TEST

/* The same with dynamic loops and sync_info semaphores (gen --dynamic
** --sync semaphores): every step is still caught, with the same kind but
** for init_queues, whose folded semaphore pool drops the second core's
** id-form declarations (a verifier failure). */
START_TEST(test_teeth_sync)
{
	char *skip = lm_xasprintf("--skip=%s,verify", teeth[_i].step);
	const char *kind = strcmp(teeth[_i].step, "init_queues") ? teeth[_i].kind
								 : "[verifier]";
	tu_run r = tu_lncsim(NULL, "fuzz", "--no-db", "-q", "--count", "50",
			     "--cores", "2-6", "--dynamic", "--sync",
			     "semaphores", "--stop", "--jobs", "1", skip, NULL);
	ck_assert_msg(r.status == 1, "step %s not caught with --dynamic --sync "
		      "semaphores: %s", teeth[_i].step, r.out);
	ck_assert_contains(r.out, kind);
	tu_run_free(&r);
	free(skip);
}
END_TEST

/* Steps with no effect on a correct input (checks and reports) pass. */
START_TEST(test_no_effect_steps)
{
	tu_run r = tu_lncsim(NULL, "fuzz", "--no-db", "-q", "--count", "20",
			     "--cores", "2-6", "--skip=check_barrier_order,"
			     "post_link_mmt_report,verify", NULL);
	ck_assert_msg(r.status == 0, "%s", r.out);
	ck_assert_contains(r.out, "20 passed, 0 failed");
	tu_run_free(&r);
}
END_TEST

/*
** Nothing skipped: 200 generated seeds across 1..16 cores pass, and give
** identical bits under 4 perturbed schedules as well.
*/
START_TEST(test_fuzz_200_pass)
{
	tu_run r = tu_lncsim(NULL, "fuzz", "--no-db", "-q", "--count", "200",
			     "--cores", "1-16", "--schedules", "4", NULL);
	ck_assert_msg(r.status == 0, "%.2000s", r.out);
	ck_assert_contains(r.out, "200 passed, 0 failed, 0 errors");
	tu_run_free(&r);
}
END_TEST

START_TEST(test_fuzz_keep_failures)
{
	char *d = tu_tmpdir("fuzzkeep");
	tu_run r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "6",
			     "--cores", "2", "--keep-failures", "kept/",
			     "--jobs", "2", "--skip=fix_output_kind,verify",
			     NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "repro: lncsim gen --cores 2 --seed 1");
	ck_assert_contains(r.out, "6 failed");
	tu_run_free(&r);
	/* one signature: only the case of its smallest seed stays */
	char *kd = lm_path_join(d, "kept");
	DIR *dp = opendir(kd);
	struct dirent *e;
	int n = 0;
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			ck_assert_str_eq(e->d_name, "case-1");
			n++;
		}
	closedir(dp);
	ck_assert_int_eq(n, 1);
	free(kd);
	char *p = lm_xasprintf("%s/kept/case-1/REPRO", d);
	char *t = tu_read(p);
	ck_assert_ptr_nonnull(t);
	ck_assert_contains(t, "lncsim diff --skip=fix_output_kind,verify --seed 1");
	/* the kept case reproduces the failure */
	char *dir = lm_xasprintf("%s/kept/case-1/gen1", d);
	r = tu_lncsim(d, "diff", "--no-db", "--skip=fix_output_kind,verify", dir,
		      NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "output set");
	tu_run_free(&r);
	free(dir);
	free(t);
	free(p);
	free(d);
}
END_TEST

/*
** --keep-failures DIR: every file of a case is created beneath DIR without
** following symlinks, and a name already there is never reused: a
** symlink planted at DIR/case-1 (and at DIR/case-1.2) and a directory of
** the user's at DIR/case-2 stay as they are, the cases go to case-1.3 and
** case-2.2 (discarded then: seed 1 has the same signature), and the
** symlinks' target stays empty.
*/
START_TEST(test_fuzz_keep_hostile)
{
	char *d = tu_tmpdir("fuzzhostile");
	char *kept = lm_path_join(d, "kept");
	char *outside = lm_path_join(d, "outside");
	char *l1 = lm_path_join(kept, "case-1");
	char *l12 = lm_path_join(kept, "case-1.2");
	char *mine = lm_path_join(kept, "case-2");
	ck_assert_int_eq(mkdir(kept, 0755), 0);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	ck_assert_int_eq(symlink("../outside", l1), 0);
	ck_assert_int_eq(symlink(outside, l12), 0);
	free(tu_write(mine, "notes", "the user's\n"));
	tu_run r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "2",
			     "--cores", "2", "--keep-failures", "kept",
			     "--skip=fix_output_kind,verify", NULL);
	ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
	/* nothing went through the symlinks */
	DIR *dp = opendir(outside);
	struct dirent *e;
	int n = 0;
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dp);
	ck_assert_int_eq(n, 0);
	struct stat st;
	ck_assert_int_eq(lstat(l1, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(lstat(l12, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_contains(r.out, "2 failed, 0 errors");
	/* seed 1 is always shown (first or smallest of its signature); seed
	** 2, of the same signature, only when it came first */
	ck_assert_contains(r.out, "  kept: kept/case-1.3\n");
	tu_run_free(&r);
	/* the user's directory is untouched */
	char *p = lm_path_join(mine, "gen2");
	ck_assert_int_ne(lstat(p, &st), 0);
	free(p);
	p = lm_path_join(mine, "REPRO");
	ck_assert_int_ne(lstat(p, &st), 0);
	free(p);
	p = lm_path_join(mine, "notes");
	char *t = tu_read(p);
	ck_assert_str_eq(t, "the user's\n");
	free(t);
	free(p);
	/* the cases are where fuzz said, with their REPRO */
	p = lm_path_join(kept, "case-1.3/REPRO");
	t = tu_read(p);
	ck_assert_ptr_nonnull(t);
	ck_assert_contains(t, "--seed 1 kept/case-1.3/gen1\n");
	free(t);
	free(p);
	/* seed 2's case, of the same signature, is discarded: its own
	** directory, never the user's case-2 */
	p = lm_path_join(kept, "case-2.2");
	ck_assert_int_ne(lstat(p, &st), 0);
	free(p);
	ck_assert_int_eq(lstat(mine, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	tu_rmtree(d);
	free(mine);
	free(l12);
	free(l1);
	free(outside);
	free(kept);
	free(d);
}
END_TEST

START_TEST(test_fuzz_bad_usage)
{
	tu_run r = tu_lncsim(NULL, "fuzz", "--cores", "5-2", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--cores needs A-B");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "fuzz", "--count", "0", NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "fuzz", "--frob", NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
}
END_TEST

/* The first SB operand of an engine instruction of m (NULL: none), and
** the bytes per partition of its memory location in *pb. */
static lm_arg *first_sb_output(lm_module *m, int64_t *pb)
{
	for (int f = 0; f < m->n_functions; f++)
		for (int b = 0; b < m->functions[f].n_blocks; b++) {
			lm_block *bl = &m->functions[f].blocks[b];
			for (int i = 0; i < bl->n_insts; i++) {
				lm_inst *in = &bl->insts[i];
				lm_alloc *al;
				lm_memloc *l;
				if (in->n_outs < 1 ||
				    in->outs[0].kind != LM_ARG_PHYSICAL_AP ||
				    (in->op != LM_OP_TENSORTENSOR &&
				     in->op != LM_OP_ACTIVATION &&
				     in->op != LM_OP_TENSORCOPY) ||
				    lm_resolve_arg(m, &in->outs[0], &al, &l) ||
				    l->type != LM_MT_SB)
					continue;
				*pb = l->dims[1];
				return &in->outs[0];
			}
		}
	return NULL;
}

/*
** --skip=verify moves the linked module's verification from the linker
** into the checker; it never lets an unverified module run. Alone it
** passes; with a step whose omission breaks the module the checker's
** verifier reports it (the linker's, without --skip=verify): one
** verification either way. A --linked module whose engine would write
** past its memory location is refused as `verifier` even with
** --skip=verify, before any machine is prepared.
*/
START_TEST(test_diff_skip_verify_still_verifies)
{
	char *ex = tu_srcpath("examples/handoff2");
	char *d = tu_tmpdir("diffskipv");
	lm_module *lk = NULL;
	lm_error e;
	int64_t pb = 0;
	lm_arg *a;
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", "--skip=verify", ex, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS handoff2");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--skip=copy_allocs,verify", ex,
		      NULL);
	ck_assert_msg(r.status == 1, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "FAIL handoff2 (2 cores): verifier: the "
			   "linked module is invalid: function nc1/allocation "
			   "wc: duplicate allocation name 'wc'");
	ck_assert_ptr_null(strstr(r.out, "link failed"));
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--skip=copy_allocs", ex, NULL);
	ck_assert_msg(r.status == 1, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "FAIL handoff2 (2 cores): link failed: linked "
			   "module fails the verifier: function nc1/allocation "
			   "wc: duplicate allocation name 'wc'");
	ck_assert_ptr_null(strstr(r.out, "verifier: the linked module"));
	tu_run_free(&r);

	/* a linked module (with its tensor map) that writes out of bounds */
	r = tu_lncsim(d, "link", "-o", "lk", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *p = lm_xasprintf("%s/lk/handoff2/sgLnk/def.json", d);
	ck_assert_msg(lm_module_load(&lk, p, &e) == 0, "%s", e.msg);
	a = first_sb_output(lk, &pb);
	ck_assert_ptr_nonnull(a);
	/* the last element of the partition, and on past it (the wire form
	** folds the partition into offset: one more would be the next) */
	ck_assert_int_gt(lm_arg_count(a), a->ap[0].num);
	a->offset = pb / lm_dtype_size(a->dtype) - 1;
	ck_assert_int_eq(lm_module_save(lk, p, 1, &e), 0);
	lm_module_free(lk);
	r = tu_lncsim(d, "diff", "--no-db", "--skip=verify", "--linked", p, ex,
		      NULL);
	ck_assert_msg(r.status == 1, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "FAIL handoff2 (2 cores): verifier: the "
			   "linked module is invalid: ");
	ck_assert_contains(r.out, "outside memory location");
	tu_run_free(&r);
	free(p);
	tu_rmtree(d);
	free(d);
	free(ex);
}
END_TEST

/* The inputs are verified in parallel; the failure reported is the first
** in argument order, whichever thread met it first. */
START_TEST(test_diff_inputs_verified_in_order)
{
	char *ex = tu_srcpath("examples/mlp4");
	char *paths[4];
	lm_module *mods[4];
	lm_verify_opts vo = { 0 };
	lm_error e;
	for (int c = 0; c < 4; c++) {
		char *rel = lm_xasprintf("nc%d/sg0/def.json", c);
		paths[c] = lm_path_join(ex, rel);
		free(rel);
	}
	ck_assert_msg(lm_modules_load(paths, 4, mods, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(lm_verify_modules(mods, 4, &vo, &e), 0);
	ck_assert_int_eq(lm_verify_modules(mods, 0, &vo, &e), 0);
	/* break modules 1 and 3 (the module name goes): 1 is reported */
	for (int k = 0; k < 20; k++) {
		char *n1 = mods[1]->functions[0].name;
		char *n3 = mods[3]->functions[0].name;
		mods[1]->functions[0].name = NULL;
		mods[3]->functions[0].name = NULL;
		ck_assert_int_eq(lm_verify_modules(mods, 4, &vo, &e), LM_EINPUT);
		ck_assert_contains(e.msg, "nc1/sg0/def.json: ");
		mods[1]->functions[0].name = n1;
		ck_assert_int_eq(lm_verify_modules(mods, 4, &vo, &e), LM_EINPUT);
		ck_assert_contains(e.msg, "nc3/sg0/def.json: ");
		mods[3]->functions[0].name = n3;
	}
	ck_assert_int_eq(lm_verify_modules(mods, 4, &vo, &e), 0);
	for (int c = 0; c < 4; c++) {
		lm_module_free(mods[c]);
		free(paths[c]);
	}
	free(ex);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("diff");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_diff_handoff2_passes);
	tcase_add_test(tc, test_diff_mlp4_passes);
	tcase_add_test(tc, test_diff_reports_mismatch);
	tcase_add_test(tc, test_diff_linked_bad_tensor_map);
	tcase_add_test(tc, test_diff_output_set);
	tcase_add_test(tc, test_diff_detects_race);
	tcase_add_test(tc, test_diff_bad_input);
	tcase_add_test(tc, test_diff_save_io);
	tcase_add_test(tc, test_diff_logged);
	tcase_add_test(tc, test_diff_unread_view);
	tcase_add_test(tc, test_diff_handoff_model_output);
	tcase_add_test(tc, test_diff_name_matched_handoff);
	tcase_add_test(tc, test_gen_output_kind_cases);
	tcase_add_test(tc, test_machine_rerun);
	tcase_add_test(tc, test_diff_unwritten_output);
	tcase_add_test(tc, test_diff_partial_handoff);
	tcase_add_test(tc, test_diff_skip_verify_still_verifies);
	tcase_add_test(tc, test_diff_inputs_verified_in_order);
	tcase_add_loop_test(tc, test_teeth, 0,
			    (int)(sizeof teeth / sizeof teeth[0]));
	tcase_add_loop_test(tc, test_teeth_loops, 0,
			    (int)(sizeof teeth / sizeof teeth[0]));
	tcase_add_loop_test(tc, test_teeth_sync, 0,
			    (int)(sizeof teeth / sizeof teeth[0]));
	tcase_add_test(tc, test_no_effect_steps);
	tcase_add_test(tc, test_fuzz_200_pass);
	tcase_add_test(tc, test_fuzz_keep_failures);
	tcase_add_test(tc, test_fuzz_keep_hostile);
	tcase_add_test(tc, test_fuzz_bad_usage);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

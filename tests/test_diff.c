/*
** test_diff.c -- the differential checker (`lncsim diff`, `lncsim fuzz`):
** pass on correct links, every kind of failure reported as such, and the
** teeth: linking with any single step switched off makes the check fail.
*/
#include "common.h"
#include "testutil.h"

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
			   "4 hand-offs, 3 schedules");
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
	char *op = strstr(t, "\"op\":\t\"add\"");
	ck_assert_msg(op != NULL, "linked module has no add");
	memcpy(op, "\"op\":\t\"max\"", 11);
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
	char *ta, *tb;
	size_t na, nb;
	lm_error e;
	ck_assert_int_eq(lm_read_file(a, &ta, &na, &e), 0);
	ck_assert_int_eq(lm_read_file(b, &tb, &nb, &e), 0);
	ck_assert_uint_eq(na, nb);
	ck_assert(memcmp(ta, tb, na) == 0);
	free(ta);
	free(tb);
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

/* ---- teeth ---------------------------------------------------------- */

static const struct {
	const char *step, *kind;
} teeth[] = {
	{ "copy_modules_as_functions", "[verifier]" },
	{ "copy_allocs", "[verifier]" },
	{ "fpass_insert_returns", "[verifier]" },
	{ "fpass_insert_switch_queue_instances", "[verifier]" },
	{ "build_main_memlocs", "[linked-error]" },
	{ "build_main_aliases", "[verifier]" },
	{ "fix_output_kind", "[output-set]" },
	{ "build_main_tensor_map", "[tensor-map]" },
	{ "init_queues", "[linked-error]" },
	{ "add_fn_call", "[verifier]" },
	{ "setup_link_dir", "[linked-error]" },
	{ "renumber_core_barriers", "[verifier]" },
};

/*
** Each step switched off (and the linker's own verify with it, so the
** checker alone must notice) makes diff fail within 50 generated seeds,
** with the expected kind of failure.
*/
/* Remove the tree at path (a test's temp dir; never follows symlinks). */
static void rm_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			char *p;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			p = lm_path_join(path, e->d_name);
			rm_tree(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

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
	at = strstr(t, "\"partial_output\":\ttrue");
	ck_assert_msg(at != NULL, "no partial_output in the linked module");
	memcpy(at, "\"partial_output\":\tnull", 22);
	free(tu_write(d, "lk/handoff2/sgLnk/def.json", t));
	r = tu_lncsim(NULL, "diff", "--no-db", "--linked", p, mods, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "linked run failed: ");
	ck_assert_contains(r.out, "external output 'w' is not fully written");
	tu_run_free(&r);
	free(t);
	free(p);
	free(mods);
	rm_tree(d);
	free(d);
}
END_TEST

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
	tu_run r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "2",
			     "--cores", "2", "--keep-failures", "kept",
			     "--skip=fix_output_kind,verify", NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "repro: lncsim gen --cores 2 --seed 1");
	ck_assert_contains(r.out, "2 failed");
	tu_run_free(&r);
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

static Suite *suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("diff");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_diff_handoff2_passes);
	tcase_add_test(tc, test_diff_mlp4_passes);
	tcase_add_test(tc, test_diff_reports_mismatch);
	tcase_add_test(tc, test_diff_output_set);
	tcase_add_test(tc, test_diff_detects_race);
	tcase_add_test(tc, test_diff_bad_input);
	tcase_add_test(tc, test_diff_save_io);
	tcase_add_test(tc, test_diff_logged);
	tcase_add_test(tc, test_diff_unwritten_output);
	tcase_add_loop_test(tc, test_teeth, 0,
			    (int)(sizeof teeth / sizeof teeth[0]));
	tcase_add_test(tc, test_no_effect_steps);
	tcase_add_test(tc, test_fuzz_200_pass);
	tcase_add_test(tc, test_fuzz_keep_failures);
	tcase_add_test(tc, test_fuzz_bad_usage);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

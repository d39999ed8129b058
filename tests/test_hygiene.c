/*
** test_hygiene.c -- the rules every check suite keeps: each test case has
** a timeout sized for the sanitizer build on a busy machine, a passing
** suite leaves no scratch directory behind, and no suite writes the
** user's ./lncsim.db. And the rule the libraries keep: an #include never
** crosses the layering (docs/build.md).
**
** The scratch and database rules are tested on this program itself: run
** with --inner MODE it is a small suite of its own (MODE pass, fail or
** writes-db), started from a fresh directory and looked at afterwards.
*/
#include "common.h"
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- every tcase has a timeout ----------------------------------------- */

/*
** Each test case a tests/test_*.c file creates (tcase_create into a
** TCase pointer) needs a tcase_set_timeout on that pointer in the file: check's default of 4 s is
** too short for the sanitizer build on a loaded machine.
*/
START_TEST(test_every_tcase_has_timeout)
{
	char *dir = tu_srcpath("tests");
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "%s", dir);
	int files = 0, cases = 0;
	lm_buf missing = LM_BUF_INIT;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, "test_", 5) || n < 3 ||
		    strcmp(e->d_name + n - 2, ".c"))
			continue;
		char *p = lm_path_join(dir, e->d_name);
		char *text = tu_read(p);
		ck_assert_msg(text != NULL, "%s", p);
		files++;
		/* every TCase pointer assigned from tcase_create */
		for (const char *q = text; (q = strstr(q, "TCase *")); q++) {
			const char *beg = q + 7, *end = beg;
			while (*end == '_' || (*end >= 'a' && *end <= 'z') ||
			       (*end >= 'A' && *end <= 'Z') ||
			       (*end >= '0' && *end <= '9'))
				end++;
			if (end == beg || strncmp(end, " = tcase_create(", 16))
				continue;
			char *want = lm_xasprintf("tcase_set_timeout(%.*s,",
						  (int)(end - beg), beg);
			cases++;
			if (!strstr(text, want))
				lm_buf_printf(&missing, " %s:%.*s", e->d_name,
					      (int)(end - beg), beg);
			free(want);
		}
		free(text);
		free(p);
	}
	closedir(d);
	ck_assert_int_gt(files, 10);
	ck_assert_int_gt(cases, files - 1);
	ck_assert_msg(missing.size == 0, "test cases without "
		      "tcase_set_timeout:%s", lm_buf_cstr(&missing));
	lm_buf_free(&missing);
	free(dir);
}
END_TEST

/* ---- the libraries keep the layering ---------------------------------- */

/*
** What each source directory may include besides its own headers: a
** directory (its public headers) or one header of it ("sim/sim.h"). A
** private header (*_int.h) is for its own directory only. tests/ and
** bench/ may use everything and are not looked at. The build enforces the
** same through each library's include path (docs/build.md); this case
** names the crossing file before anyone builds.
*/
#define MAY_MAX 7
static const struct layer {
	const char *dir;
	const char *may[MAY_MAX];
} layers[] = {
	{ "model", { NULL } },
	{ "linker", { "model", NULL } },
	{ "linker/provision", { "model", NULL } },
	{ "sim", { "model", NULL } },
	{ "db", { "model", "sim/sim.h", NULL } },
	{ "reports", { "model", "db", "sim/sim.h", NULL } },
	{ "cli", { "model", "linker", "linker/provision", "sim", "db",
		   "reports", NULL } },
};
#define NLAYERS (sizeof layers / sizeof layers[0])

/* The layer directory holding header `name`, or NULL. */
static const char *header_dir(const char *name)
{
	for (size_t i = 0; i < NLAYERS; i++) {
		char *rel = lm_xasprintf("%s/%s", layers[i].dir, name);
		char *p = tu_srcpath(rel);
		int found = access(p, F_OK) == 0;
		free(p);
		free(rel);
		if (found)
			return layers[i].dir;
	}
	return NULL;
}

/* Why `from` may not include `inc` ("dir/name"), or NULL when it may. */
static const char *include_refused(const struct layer *from,
				   const char *dir, const char *name)
{
	if (!strcmp(dir, from->dir))
		return NULL;
	size_t n = strlen(name);
	if (n >= 6 && !strcmp(name + n - 6, "_int.h"))
		return "a private header of another directory";
	for (size_t i = 0; i < MAY_MAX && from->may[i]; i++) {
		const char *m = from->may[i], *slash = strrchr(m, '/');
		size_t len = strlen(m);
		int header = len > 2 && !strcmp(m + len - 2, ".h");
		if (!header && !strcmp(m, dir))
			return NULL;
		if (header && slash && (size_t)(slash - m) == strlen(dir) &&
		    !strncmp(m, dir, strlen(dir)) && !strcmp(slash + 1, name))
			return NULL;
	}
	return "a layer it may not use";
}

/* Every `#include "..."` of one file checked; crossings into bad. */
static int check_includes(const struct layer *from, const char *file,
			  const char *text, lm_buf *bad)
{
	int count = 0;
	for (const char *q = text; (q = strstr(q, "#include \"")); q++) {
		if (q != text && q[-1] != '\n')
			continue;
		const char *beg = q + 10, *end = strchr(beg, '"');
		const char *nl = strchr(beg, '\n');
		if (!end || (nl && nl < end))
			continue;
		char *inc = lm_xasprintf("%.*s", (int)(end - beg), beg);
		const char *slash = strrchr(inc, '/');
		char *dir = NULL;
		const char *name = inc, *why;
		count++;
		if (slash) {
			dir = lm_xasprintf("%.*s", (int)(slash - inc), inc);
			name = slash + 1;
			char *p = tu_srcpath(inc);
			if (access(p, F_OK))
				why = "a header no source directory has";
			else
				why = include_refused(from, dir, name);
			free(p);
		} else {
			const char *d = header_dir(inc);
			if (d)
				why = include_refused(from, d, name);
			else if (!strcmp(inc, "config.h"))
				why = NULL; /* made by configure */
			else
				why = "a header no library directory has";
			dir = lm_xstrdup(d ? d : "?");
		}
		if (why)
			lm_buf_printf(bad, " %s/%s includes %s/%s (%s);",
				      from->dir, file, dir, name, why);
		free(dir);
		free(inc);
	}
	return count;
}

START_TEST(test_includes_keep_the_layering)
{
	int files = 0, includes = 0;
	lm_buf bad = LM_BUF_INIT;
	for (size_t i = 0; i < NLAYERS; i++) {
		char *dir = tu_srcpath(layers[i].dir);
		DIR *d = opendir(dir);
		ck_assert_msg(d != NULL, "%s", dir);
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n < 3 || (strcmp(e->d_name + n - 2, ".c") &&
				      strcmp(e->d_name + n - 2, ".h")))
				continue;
			char *p = lm_path_join(dir, e->d_name);
			char *text = tu_read(p);
			ck_assert_msg(text != NULL, "%s", p);
			files++;
			includes += check_includes(&layers[i], e->d_name, text,
						   &bad);
			free(text);
			free(p);
		}
		closedir(d);
		free(dir);
	}
	ck_assert_int_gt(files, 50);
	ck_assert_int_gt(includes, files);
	ck_assert_msg(bad.size == 0, "includes crossing the layering:%s",
		      lm_buf_cstr(&bad));
	lm_buf_free(&bad);
}
END_TEST

/* ---- the inner suite -------------------------------------------------- */

/* A case that makes scratch directories and runs lncsim without --db. */
START_TEST(inner_scratch_and_run)
{
	char *a = tu_tmpdir("inner");
	char *b = tu_tmpdir("inner");
	free(tu_write(a, "deep/er/file.txt", "x\n"));
	char *link = lm_path_join(b, "root-link");
	ck_assert_int_eq(symlink("/", link), 0);
	free(link);
	char *ex = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	/* it logged into the scratch directory */
	const char *db = getenv("LNCSIM_DB");
	ck_assert_ptr_nonnull(db);
	ck_assert_int_eq(access(db, F_OK), 0);
	free(ex);
	free(a);
	free(b);
}
END_TEST

START_TEST(inner_fails)
{
	free(tu_tmpdir("inner"));
	ck_abort_msg("failing on purpose");
}
END_TEST

/* A case that wrongly logs into ./lncsim.db. */
START_TEST(inner_writes_db)
{
	unsetenv("LNCSIM_DB");
	char *ex = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	free(ex);
}
END_TEST

static int inner_main(const char *mode)
{
	Suite *s = suite_create("inner");
	TCase *tc = tcase_create("inner");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, inner_scratch_and_run);
	if (!strcmp(mode, "fail"))
		tcase_add_test(tc, inner_fails);
	if (!strcmp(mode, "writes-db"))
		tcase_add_test(tc, inner_writes_db);
	suite_add_tcase(s, tc);
	return tu_main(s);
}

/* ---- the outer cases -------------------------------------------------- */

/*
** The inner suite's output on one line: its TAP lines must not reach the
** outer TAP stream through a failure message.
*/
static const char *oneline(char *s)
{
	if (!s)
		return "(none)";
	for (char *p = s; *p; p++)
		if (*p == '\n')
			*p = '|';
	return s;
}

/* Run this program as the inner suite MODE in directory cwd. */
static tu_run run_inner(const char *cwd, const char *mode)
{
	tu_run r = { -1, NULL, NULL };
	char *self = realpath("/proc/self/exe", NULL);
	ck_assert_ptr_nonnull(self);
	if (!getenv("LNCSIM")) {
		char *bin = realpath("lncsim", NULL);
		if (bin)
			setenv("LNCSIM", bin, 1);
		free(bin);
	}
	char *src = tu_srcpath(".");
	char *out = lm_path_join(cwd, "..inner.out");
	char *err = lm_path_join(cwd, "..inner.err");
	pid_t pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || chdir(cwd) != 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		/* one TAP stream the test can read, whatever the caller set */
		setenv("CK_TAP_LOG_FILE_NAME", "-", 1);
		setenv("CK_VERBOSITY", "silent", 1);
		setenv("srcdir", src, 1);
		execl(self, self, "--inner", mode, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = tu_read(out);
	r.err = tu_read(err);
	unlink(out);
	unlink(err);
	free(out);
	free(err);
	free(self);
	free(src);
	return r;
}

/* The entries of dir (space separated, sorted by readdir order). */
static char *listing(const char *dir)
{
	lm_buf b = LM_BUF_INIT;
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			lm_buf_printf(&b, "%s ", e->d_name);
	closedir(d);
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

START_TEST(test_passing_suite_leaves_nothing)
{
	char *d = tu_tmpdir("hyg-pass");
	/* a user database in the directory is left alone */
	char *user = tu_write(d, "lncsim.db", "");
	struct stat before, after;
	ck_assert_int_eq(stat(user, &before), 0);
	tu_run r = run_inner(d, "pass");
	ck_assert_msg(r.status == 0 && r.out && strstr(r.out, "ok 1") &&
		      !strstr(r.out, "not ok") && !strstr(r.out, "Bail out"),
		      "inner suite: %s", oneline(r.out));
	char *ls = listing(d);
	ck_assert_str_eq(ls, "lncsim.db ");
	ck_assert_int_eq(stat(user, &after), 0);
	ck_assert_int_eq(after.st_size, 0);
	ck_assert_int_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	ck_assert_int_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	free(ls);
	tu_run_free(&r);
	free(user);
	free(d);
}
END_TEST

START_TEST(test_failing_suite_keeps_scratch)
{
	char *d = tu_tmpdir("hyg-fail");
	tu_run r = run_inner(d, "fail");
	ck_assert_msg(r.out && strstr(r.out, "failing on purpose") && r.err &&
		      strstr(r.err, "# scratch directory kept: "),
		      "inner suite: %s", oneline(r.out));
	char *ls = listing(d);
	ck_assert_msg(!strncmp(ls, "tmp-test_hygiene-", 17) &&
		      strchr(ls, ' ') == ls + strlen(ls) - 1, "%s", ls);
	/* the failing case's directory is in it */
	ls[strlen(ls) - 1] = 0;
	char *root = lm_path_join(d, ls);
	char *inside = listing(root);
	ck_assert_contains(inside, "inner-");
	ck_assert_contains(inside, "lncsim.db");
	free(inside);
	free(root);
	free(ls);
	tu_run_free(&r);
	free(d);
}
END_TEST

START_TEST(test_suite_writing_user_db_fails)
{
	char *d = tu_tmpdir("hyg-db");
	tu_run r = run_inner(d, "writes-db");
	ck_assert_msg(r.out && strstr(r.out, "Bail out! the suite wrote "
				      "./lncsim.db"), "inner suite: %s",
		      oneline(r.out));
	tu_run_free(&r);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hygiene");
	TCase *tc = tcase_create("rules");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_tcase_has_timeout);
	tcase_add_test(tc, test_includes_keep_the_layering);
	tcase_add_test(tc, test_passing_suite_leaves_nothing);
	tcase_add_test(tc, test_failing_suite_keeps_scratch);
	tcase_add_test(tc, test_suite_writing_user_db_fails);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--inner"))
		return inner_main(argv[2]);
	return tu_main(suite());
}

/*
** test_safeio.c -- files written beneath a directory without following
** symlinks (model/safeio.h) and lm_write_file_atomic on top of it.
*/
#include "common.h"
#include "safeio.h"
#include "testutil.h"
#include "gen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Strings kept until the scratch directory goes (no leaks under ASan). */
static char *kept[64];
static int n_kept;

static const char *K(char *p)
{
	if (n_kept < 64)
		kept[n_kept++] = p;
	return p;
}
#define KA(...) K(lm_xasprintf(__VA_ARGS__))

/* A scratch root with an "outside" file that nothing may touch. */
typedef struct scratch {
	char *root, *in, *outside, *victim;
} scratch;

static void scratch_new(scratch *s, const char *tag)
{
	s->root = tu_tmpdir(tag);
	s->in = lm_xasprintf("%s/in", s->root);
	s->outside = lm_xasprintf("%s/outside", s->root);
	ck_assert_int_eq(mkdir(s->in, 0755), 0);
	s->victim = tu_write(s->outside, "victim", "precious");
}

/* The outside file still exists with its content, and nothing else
** appeared beside it. */
static void assert_outside_untouched(const scratch *s)
{
	struct stat st;
	char *t = tu_read(s->victim);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t, "precious");
	free(t);
	ck_assert_int_eq(lstat(s->victim, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	char *other = lm_xasprintf("%s/x", s->outside);
	ck_assert_int_ne(access(other, F_OK), 0);
	free(other);
}

static void scratch_free(scratch *s)
{
	lm_remove_tree_at(AT_FDCWD, s->root);
	free(s->root);
	free(s->in);
	free(s->outside);
	free(s->victim);
	while (n_kept)
		free(kept[--n_kept]);
}

START_TEST(test_component_ok)
{
	ck_assert(lm_path_component_ok("w.npy"));
	ck_assert(lm_path_component_ok("..."));
	ck_assert(lm_path_component_ok(".hidden"));
	ck_assert(!lm_path_component_ok(""));
	ck_assert(!lm_path_component_ok("."));
	ck_assert(!lm_path_component_ok(".."));
	ck_assert(!lm_path_component_ok("a/b"));
	ck_assert(!lm_path_component_ok("/"));
	ck_assert(!lm_path_component_ok("a\nb"));
	ck_assert(!lm_path_component_ok(NULL));
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	ck_assert(!lm_path_component_ok(longname));
	ck_assert(lm_rel_path_ok("a/b/c.npy"));
	ck_assert(!lm_rel_path_ok("/etc/passwd"));
	ck_assert(!lm_rel_path_ok("a/../b"));
	ck_assert(!lm_rel_path_ok("../../outside/pwn.const/w.npy"));
	ck_assert(!lm_rel_path_ok("a//b"));
	ck_assert(!lm_rel_path_ok("./a"));
	ck_assert(!lm_rel_path_ok("a/"));
	ck_assert(!lm_rel_path_ok(""));
}
END_TEST

/* A symlink planted at the old predictable temporary name is not
** followed: the outside file keeps its content. */
START_TEST(test_atomic_planted_temp)
{
	scratch s;
	lm_error e;
	scratch_new(&s, "sio-tmp");
	char *path = lm_xasprintf("%s/out.json", s.in);
	char *tmp = lm_xasprintf("%s.tmp.%ld", path, (long)getpid());
	ck_assert_int_eq(symlink(s.victim, tmp), 0);
	ck_assert_msg(lm_write_file_atomic(path, "new", 3, &e) == 0, "%s",
		      e.msg);
	assert_outside_untouched(&s);
	char *t = tu_read(path);
	ck_assert_str_eq(t, "new");
	free(t);
	/* the planted link is still a link, and still points outside */
	struct stat st;
	ck_assert_int_eq(lstat(tmp, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	free(tmp);
	free(path);
	scratch_free(&s);
}
END_TEST

/* The target itself a symlink: replaced, not followed. A directory or a
** special file at the target is an error. */
START_TEST(test_atomic_target_kinds)
{
	scratch s;
	lm_error e;
	struct stat st;
	scratch_new(&s, "sio-target");
	char *path = lm_xasprintf("%s/link.json", s.in);
	ck_assert_int_eq(symlink(s.victim, path), 0);
	ck_assert_msg(lm_write_file_atomic(path, "new", 3, &e) == 0, "%s",
		      e.msg);
	assert_outside_untouched(&s);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	char *dir = lm_xasprintf("%s/adir", s.in);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_ne(lm_write_file_atomic(dir, "x", 1, &e), 0);
	ck_assert_str_eq(e.msg, KA("%s: is a directory; refusing to "
					     "replace it", dir));
	char *fifo = lm_xasprintf("%s/fifo", s.in);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	ck_assert_int_ne(lm_write_file_atomic(fifo, "x", 1, &e), 0);
	ck_assert_contains(e.msg, "not a regular file; refusing to replace it");
	ck_assert_int_ne(lm_write_file_atomic(KA("%s/", s.in), "x",
					      1, &e), 0);
	/* no temporary left behind */
	int n = 0;
	FILE *p = popen(KA("ls -A '%s'", s.in), "r");
	char line[512];
	while (fgets(line, sizeof line, p))
		n++;
	pclose(p);
	ck_assert_int_eq(n, 3); /* link.json, adir, fifo */
	free(path);
	free(dir);
	free(fifo);
	scratch_free(&s);
}
END_TEST

/* Directories beneath a root: a symlinked component is refused (even one
** pointing inside), missing ones are made, ".." never resolved. */
START_TEST(test_dir_open_beneath)
{
	scratch s;
	lm_error e;
	int root, fd, made;
	scratch_new(&s, "sio-dir");
	root = open(s.in, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(root, 0);
	ck_assert_int_eq(lm_dir_open_beneath(&fd, root, "IN", "a/b/c", 1,
					     &made, &e), 0);
	ck_assert_int_eq(made, 3);
	close(fd);
	ck_assert_int_eq(lm_dir_open_beneath(&fd, root, "IN", "a/b/d", 1,
					     &made, &e), 0);
	ck_assert_int_eq(made, 1);
	close(fd);
	/* a symlinked directory on the way */
	char *lnk = lm_xasprintf("%s/a/evil", s.in);
	ck_assert_int_eq(symlink(s.outside, lnk), 0);
	ck_assert_int_ne(lm_dir_open_beneath(&fd, root, "IN", "a/evil/x", 1,
					     NULL, &e), 0);
	ck_assert_str_eq(e.msg, "IN/a/evil: is a symlink; refusing to go "
			 "through it");
	ck_assert_int_eq(fd, -1);
	assert_outside_untouched(&s);
	/* missing without create: ENOENT */
	ck_assert_int_ne(lm_dir_open_beneath(&fd, root, "IN", "nope/x", 0,
					     NULL, &e), 0);
	ck_assert_int_eq(errno, ENOENT);
	/* a file on the way */
	free(tu_write(s.in, "f", "file"));
	ck_assert_int_ne(lm_dir_open_beneath(&fd, root, "IN", "f/x", 1, NULL,
					     &e), 0);
	ck_assert_str_eq(e.msg, "IN/f: not a directory");
	ck_assert_int_ne(lm_dir_open_beneath(&fd, root, "IN", "../outside", 0,
					     NULL, &e), 0);
	ck_assert_str_eq(e.msg, "IN/../outside: not a plain relative path "
			 "(absolute, or an empty, '.' or '..' component)");
	close(root);
	free(lnk);
	scratch_free(&s);
}
END_TEST

/* lm_write_beneath: parents made, symlinks and ".." refused, modes kept. */
START_TEST(test_write_beneath)
{
	scratch s;
	lm_error e;
	struct stat st;
	scratch_new(&s, "sio-wb");
	ck_assert_msg(lm_write_beneath(s.in, "k.const/w.npy", "w", 1, 0600,
				       &e) == 0, "%s", e.msg);
	char *p = lm_xasprintf("%s/k.const/w.npy", s.in);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_ne(lm_write_beneath(s.in, "../outside/x", "x", 1, 0644,
					  &e), 0);
	ck_assert_contains(e.msg, "not a plain relative path");
	char *lnk = lm_xasprintf("%s/evil.const", s.in);
	ck_assert_int_eq(symlink(s.outside, lnk), 0);
	ck_assert_int_ne(lm_write_beneath(s.in, "evil.const/x", "x", 1, 0644,
					  &e), 0);
	ck_assert_str_eq(e.msg, KA("%s/evil.const: is a symlink; "
					     "refusing to go through it", s.in));
	assert_outside_untouched(&s);
	/* lm_symlink_at replaces a file, refuses a directory */
	int root = open(s.in, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(lm_symlink_at(root, s.in, "k.const", "/x", &e), -1);
	ck_assert_contains(e.msg, "is a directory; refusing to replace it");
	free(tu_write(s.in, "plain", "p"));
	ck_assert_int_eq(lm_symlink_at(root, s.in, "plain", "target", &e), 0);
	ck_assert_int_eq(lstat(KA("%s/plain", s.in), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	/* lm_remove_tree_at removes a symlink, never its target */
	ck_assert_int_eq(lm_remove_tree_at(root, "evil.const"), 0);
	ck_assert_int_eq(lm_remove_tree_at(root, "k.const"), 0);
	ck_assert_int_ne(access(p, F_OK), 0);
	assert_outside_untouched(&s);
	close(root);
	free(p);
	free(lnk);
	scratch_free(&s);
}
END_TEST

/* lncsim gen writes its set beneath -o: a core directory planted as a
** symlink to an outside directory is refused, nothing lands there. */
START_TEST(test_gen_symlinked_core_dir)
{
	scratch s;
	lm_error e;
	ls_gen_opts o = {2, 5, LS_GEN_SMALL, "set", NULL, 0, 0, 0, 0, 0};
	scratch_new(&s, "sio-gen");
	ck_assert_int_eq(mkdir(KA("%s/set", s.in), 0755), 0);
	ck_assert_int_eq(symlink(s.outside, KA("%s/set/nc1", s.in)), 0);
	ck_assert_int_ne(ls_gen_write(&o, s.in, &e), 0);
	ck_assert_str_eq(e.msg, KA("%s/set/nc1: is a symlink; refusing to go "
				   "through it", s.in));
	assert_outside_untouched(&s);
	ck_assert_int_ne(access(KA("%s/sg0", s.outside), F_OK), 0);
	/* without the plant the set is written */
	ck_assert_int_eq(unlink(KA("%s/set/nc1", s.in)), 0);
	ck_assert_msg(ls_gen_write(&o, s.in, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(access(KA("%s/set/nc1/sg0/def.json", s.in), R_OK), 0);
	scratch_free(&s);
}
END_TEST

/* diff --save-io DIR: a subdirectory planted as a symlink is refused. */
START_TEST(test_diff_save_io_symlinked)
{
	scratch s;
	char *ex = tu_srcpath("examples/handoff2");
	scratch_new(&s, "sio-diff");
	ck_assert_int_eq(mkdir(KA("%s/io", s.in), 0755), 0);
	ck_assert_int_eq(symlink(s.outside, KA("%s/io/reference", s.in)), 0);
	tu_run r = tu_lncsim(s.in, "diff", "--no-db", "--save-io", "io", ex,
			     NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: io/reference: is a symlink; "
			   "refusing to go through it");
	tu_run_free(&r);
	assert_outside_untouched(&s);
	ck_assert_int_ne(access(KA("%s/z.npy", s.outside), F_OK), 0);
	free(ex);
	scratch_free(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("safeio");
	TCase *tc = tcase_create("safeio");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_component_ok);
	tcase_add_test(tc, test_atomic_planted_temp);
	tcase_add_test(tc, test_atomic_target_kinds);
	tcase_add_test(tc, test_dir_open_beneath);
	tcase_add_test(tc, test_write_beneath);
	tcase_add_test(tc, test_gen_symlinked_core_dir);
	tcase_add_test(tc, test_diff_save_io_symlinked);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

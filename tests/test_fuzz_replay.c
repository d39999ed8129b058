/*
** test_fuzz_replay.c -- the reader harnesses of tests/fuzz/ replayed in
** `make check` without libFuzzer: each seed (the examples' and fixtures'
** modules and .npy files, the KLR JSON fixtures encoded, the expressions
** of tests/fixtures/affine), its truncations
** and a deterministic set of single-byte changes. Every input must be
** accepted or refused with an error (harness result 0); a crash, a leak or
** undefined behaviour fails the suite in the sanitizer build.
*/
#include "common.h"
#include "testutil.h"
#include "klr.h"
#include "fuzz.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef int (*harness_fn)(const uint8_t *, size_t);

/* Run fn on data, its prefixes at 24 cut points and 24 one-byte changes;
** returns the number of inputs run. */
static int replay(harness_fn fn, const char *what, const uint8_t *data,
		  size_t n)
{
	uint8_t *copy = lm_xmalloc(n ? n : 1);
	uint32_t x = 2463534242u;
	int runs = 0;
	ck_assert_msg(fn(data, n) == 0, "%s: the seed itself", what);
	runs++;
	for (int i = 0; i <= 24; i++) {
		size_t cut = n * (size_t)i / 25;
		memcpy(copy, data, cut);
		ck_assert_msg(fn(copy, cut) == 0, "%s: first %zu bytes", what,
			      cut);
		runs++;
	}
	for (int i = 0; i < 24 && n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;   /* xorshift32 */
		size_t at = x % n;
		memcpy(copy, data, n);
		copy[at] = (uint8_t)(x >> 24);
		ck_assert_msg(fn(copy, n) == 0, "%s: byte %zu = 0x%02x", what,
			      at, copy[at]);
		runs++;
	}
	free(copy);
	return runs;
}

/* Replay fn over every file under dir (recursively) ending in ext. */
static int replay_tree(harness_fn fn, const char *dir, const char *ext)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int runs = 0;
	ck_assert_msg(d != NULL, "%s", dir);
	while ((e = readdir(d))) {
		struct stat st;
		size_t nl = strlen(e->d_name), el = strlen(ext);
		if (e->d_name[0] == '.')
			continue;
		char *p = lm_path_join(dir, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			runs += replay_tree(fn, p, ext);
		} else if (S_ISREG(st.st_mode) && st.st_size < (1 << 20) &&
			   nl > el && !strcmp(e->d_name + nl - el, ext)) {
			char *text;
			size_t len;
			lm_error err;
			ck_assert_msg(lm_read_file(p, &text, &len, &err) == 0,
				      "%s", err.msg);
			runs += replay(fn, p, (const uint8_t *)text, len);
			free(text);
		}
		free(p);
	}
	closedir(d);
	return runs;
}

START_TEST(test_replay_modules)
{
	char *ex = tu_srcpath("examples"), *fx = tu_srcpath("tests/fixtures");
	int runs = replay_tree(lncsim_fuzz_module, ex, ".json");
	runs += replay_tree(lncsim_fuzz_module, fx, ".json");
	ck_assert_int_gt(runs, 200);
	free(ex);
	free(fx);
}
END_TEST

START_TEST(test_replay_npy)
{
	char *ex = tu_srcpath("examples"), *fx = tu_srcpath("tests/fixtures");
	int runs = replay_tree(lncsim_fuzz_npy, ex, ".npy");
	runs += replay_tree(lncsim_fuzz_npy, fx, ".npy");
	ck_assert_int_gt(runs, 40);
	free(ex);
	free(fx);
}
END_TEST

START_TEST(test_replay_klr)
{
	const char *names[] = { "k_small.json", "k_all.json", "k_ops.json" };
	int runs = 0;
	for (int i = 0; i < 3; i++) {
		char *rel = lm_xasprintf("tests/fixtures/klr/%s", names[i]);
		char *p = tu_srcpath(rel), *text;
		size_t len;
		lm_error err;
		lp_klr_file f;
		lm_buf b = LM_BUF_INIT;
		ck_assert_msg(lm_read_file(p, &text, &len, &err) == 0, "%s",
			      err.msg);
		ck_assert_msg(lp_klr_from_json(&f, text, len, p, &err) == 0,
			      "%s", err.msg);
		ck_assert_msg(lp_klr_encode_file(&f, &b, &err) == 0, "%s",
			      err.msg);
		runs += replay(lncsim_fuzz_klr, p, (const uint8_t *)b.ptr,
			       b.size);
		lm_buf_free(&b);
		lp_klr_file_free(&f);
		free(text);
		free(p);
		free(rel);
	}
	ck_assert_int_eq(runs, 3 * 50);
	/* a seed in an older schema generation (KLR 2025-07-21b shapes) */
	{
		char *p = tu_srcpath("tests/fixtures/klr/gen-2025-07-21b.klr");
		char *data;
		size_t len;
		lm_error err;
		ck_assert_msg(lm_read_file(p, &data, &len, &err) == 0, "%s",
			      err.msg);
		ck_assert_int_eq(replay(lncsim_fuzz_klr, p,
					(const uint8_t *)data, len), 50);
		free(data);
		free(p);
	}
}
END_TEST

START_TEST(test_replay_affine)
{
	char *fx = tu_srcpath("tests/fixtures/affine");
	int runs = replay_tree(lncsim_fuzz_affine, fx, ".json");
	ck_assert_int_ge(runs, 5 * 50);
	free(fx);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fuzz_replay");
	TCase *tc = tcase_create("replay");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_replay_modules);
	tcase_add_test(tc, test_replay_npy);
	tcase_add_test(tc, test_replay_klr);
	tcase_add_test(tc, test_replay_affine);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

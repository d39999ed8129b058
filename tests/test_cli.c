/*
** test_cli.c -- the lncsim program: help, version, exit codes, error
** format of `lncsim verify`.
*/
#include "common.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

START_TEST(test_version)
{
	tu_run r = tu_lncsim(NULL, "--version", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "lncsim " PACKAGE_VERSION);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_help)
{
	tu_run r = tu_lncsim(NULL, "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "verify");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "usage: lncsim verify");
	tu_run_free(&r);
	r = tu_lncsim(NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "usage:");
	tu_run_free(&r);
}
END_TEST

START_TEST(test_unknown_command)
{
	tu_run r = tu_lncsim(NULL, "frob", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: unknown command 'frob'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", "--bogus", "x", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: verify: unknown option '--bogus'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "no MODULE given");
	tu_run_free(&r);
}
END_TEST

START_TEST(test_verify_examples)
{
	char *a = tu_srcpath("examples/matmul1");
	char *b = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(NULL, "verify", a, b, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "matmul1/def.json: ok");
	ck_assert_contains(r.out, "nc0/sg0/def.json: ok");
	ck_assert_contains(r.out, "nc1/sg0/def.json: ok");
	tu_run_free(&r);
	free(a);
	free(b);
}
END_TEST

/* Bad input: exit 2, "lncsim: FILE: where: what" on stderr, no crash. */
START_TEST(test_verify_bad_inputs)
{
	char *d = tu_tmpdir("cli");
	char *empty = tu_write(d, "empty.json", "");
	char *trunc = tu_write(d, "trunc.json", "{\"functions\": [");
	char *op = tu_write(d, "op.json",
			    "{\"functions\":[{\"name\":\"f\",\"allocations\":[],"
			    "\"blocks\":[{\"name\":\"b\",\"instructions\":["
			    "{\"opcode\":\"Bogus\",\"name\":\"i0\"}]}]}]}");
	struct { const char *path, *msg; } cases[] = {
		{ empty, "empty.json: empty file" },
		{ trunc, "trunc.json: malformed JSON" },
		{ op, "op.json: function f/block b/instruction i0: unknown opcode 'Bogus'" },
		{ "/no/such/file.json", "lncsim: /no/such/file.json: no such file" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tu_run r = tu_lncsim(NULL, "verify", cases[i].path, NULL);
		ck_assert_int_eq(r.status, 2);
		ck_assert_contains(r.err, cases[i].msg);
		ck_assert_msg(strncmp(r.err, "lncsim: ", 8) == 0, "%s", r.err);
		tu_run_free(&r);
	}
	free(empty);
	free(trunc);
	free(op);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("cli");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_unknown_command);
	tcase_add_test(tc, test_verify_examples);
	tcase_add_test(tc, test_verify_bad_inputs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

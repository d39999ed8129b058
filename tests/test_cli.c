/*
** test_cli.c -- the lncsim program: help, version, exit codes, error
** format of `lncsim verify`, GNU-style option order, the messages of the
** commands, and the man page against every command's --help.
*/
#include "common.h"
#include "testutil.h"
#include "db.h"
#include "report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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


/* Options after operands are options; "--" ends them, in every command
** that takes operands. */
START_TEST(test_options_after_operands)
{
	char *m1 = tu_srcpath("examples/matmul1");
	char *h2 = tu_srcpath("examples/handoff2");
	char *d = tu_tmpdir("perm");
	char *k = tu_srcpath("tests/fixtures/klr/k_small.json");
	tu_run r = tu_lncsim(NULL, "run", "--seed", "1", m1, "--stats",
			     "--no-db", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "pe_util%");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", m1, "-q", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "mmt", m1, "--json", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_msg(r.out[0] == '{' || r.out[0] == '[', "%s", r.out);
	tu_run_free(&r);
	r = tu_lncsim(d, "link", h2, "--dry-run", "-o", "out", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "handoff2/sgLnk: 2 cores");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", h2, "-q", "--no-db", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	r = tu_lncsim(d, "klr", "pack", k, "-o", "k.klr", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	/* "--": what follows is an operand even with a leading dash */
	r = tu_lncsim(NULL, "verify", "--", "-q", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: -q: no such file");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", "--no-db", "--", "--stats", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: --stats: no such file");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--", "-q", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: -q: no such file");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "mmt", m1, "--", "--json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: --json: no such file");
	tu_run_free(&r);
	r = tu_lncsim(d, "lower", "--", "-o", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: -o: no such file");
	tu_run_free(&r);
	r = tu_lncsim(d, "klr", "dump", "--", "-o", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "-o");
	ck_assert(strstr(r.err, "unknown option") == NULL);
	tu_run_free(&r);
	/* the commands without operands accept "--" at the end, and refuse
	   an operand after it */
	r = tu_lncsim(d, "gen", "--cores", "2", "-o", "g", "--", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "g/gen1: 2 per-core modules");
	tu_run_free(&r);
	{
		static const char *const none[][3] = {
			{ "gen", "-o", "g" }, { "fuzz", "--count", "1" },
			{ "report", "-o", "rep" }, { "db", "runs", "--last" },
			{ "db", "check", NULL }, { "db", "failures", NULL },
		};
		for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
			const char *argv[8];
			int n = 0;
			for (int w = 0; w < 3 && none[i][w]; w++)
				argv[n++] = none[i][w];
			if (!strcmp(none[i][0], "db") &&
			    !strcmp(none[i][1], "runs"))
				argv[n++] = "2";
			argv[n++] = "--";
			argv[n++] = "extra";
			argv[n] = NULL;
			r = tu_lncsimv(d, argv);
			ck_assert_int_eq(r.status, 2);
			ck_assert_contains(r.err, "takes no operands, got "
					   "'extra'");
			tu_run_free(&r);
		}
	}
	/* db merge: after "--" a file name may start with a dash */
	r = tu_lncsim(d, "run", "--db", "-in.db", m1, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "db", "merge", "--", "out.db", "-in.db", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "-in.db: 1 run merged");
	tu_run_free(&r);
	/* a value-taking option at the end has no value: it never takes an
	   operand for one */
	r = tu_lncsim(NULL, "run", "--no-db", m1, "--seed", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: run: --seed needs a value");
	tu_run_free(&r);
	r = tu_lncsim(d, "link", h2, "-o", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: link: -o needs a directory");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "run", m1, "--db", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: run: --db needs a FILE");
	tu_run_free(&r);
	/* an unknown option is still one, wherever it stands */
	r = tu_lncsim(NULL, "run", m1, "--bogus", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "unknown option '--bogus'");
	tu_run_free(&r);
	free(k);
	free(d);
	free(h2);
	free(m1);
}
END_TEST

/* The run log records the command line as given: one program name,
** for run, diff and fuzz alike. */
START_TEST(test_logged_command_line)
{
	char *d = tu_tmpdir("cmdline");
	char *db = lm_path_join(d, "runs.db");
	char *h2 = tu_srcpath("examples/handoff2");
	char *sql;
	tu_run r = tu_lncsim(d, "diff", h2, "-q", "--db", db, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "run", h2, "--db", db, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--count", "1", "--cores", "1", "--jobs",
		      "1", "-q", "--db", db, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	sql = lm_xasprintf("SELECT count(*) FROM runs WHERE command = "
			   "'lncsim diff %s -q --db %s'", h2, db);
	ck_assert_int_eq(tu_sql_int(db, sql), 1);
	free(sql);
	sql = lm_xasprintf("SELECT count(*) FROM runs WHERE command = "
			   "'lncsim run %s --db %s'", h2, db);
	ck_assert_int_eq(tu_sql_int(db, sql), 1);
	free(sql);
	sql = lm_xasprintf("SELECT count(*) FROM runs WHERE command = "
			   "'lncsim fuzz --count 1 --cores 1 --jobs 1 -q "
			   "--db %s'", db);
	ck_assert_int_eq(tu_sql_int(db, sql), 1);
	free(sql);
	sql = lm_xasprintf("SELECT count(*) FROM campaigns WHERE command = "
			   "'lncsim fuzz --count 1 --cores 1 --jobs 1 -q "
			   "--db %s'", db);
	ck_assert_int_eq(tu_sql_int(db, sql), 1);
	free(sql);
	ck_assert_int_eq(tu_sql_int(db, "SELECT count(*) FROM runs WHERE "
				    "command NOT LIKE 'lncsim diff %' AND "
				    "command NOT LIKE 'lncsim run %' AND "
				    "command NOT LIKE 'lncsim fuzz %' AND "
				    "command NOT LIKE 'lncsim gen % && lncsim "
				    "diff %'"), 0);
	free(h2);
	free(db);
	free(d);
}
END_TEST

/* Missing --inputs directory: named as a directory, not as a tensor. */
START_TEST(test_missing_inputs_dir)
{
	char *h2 = tu_srcpath("examples/handoff2");
	const char *cmds[] = { "run", "diff" };
	for (int i = 0; i < 2; i++) {
		tu_run r = tu_lncsim(NULL, cmds[i], "--no-db", "--inputs",
				     "/nonexistent", h2, NULL);
		ck_assert_int_eq(r.status, 2);
		ck_assert_contains(r.err, "lncsim: /nonexistent: cannot open "
				   "directory: No such file or directory");
		ck_assert(strstr(r.err, ".npy") == NULL);
		tu_run_free(&r);
	}
	free(h2);
}
END_TEST

static int same_bytes(const char *a, const char *b);

/* run and diff give a module the same inputs by default. */
START_TEST(test_run_and_diff_share_the_default_seed)
{
	char *h2 = tu_srcpath("examples/handoff2");
	char *d = tu_tmpdir("seed");
	tu_run r = tu_lncsim(d, "run", "--no-db", "--outputs", "run", h2, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "diff", "--no-db", "-q", "--save-io", "diff", h2,
		      NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	char *a = lm_path_join(d, "run/z.npy");
	char *b = lm_path_join(d, "diff/reference/z.npy");
	ck_assert_msg(same_bytes(a, b), "%s and %s differ", a, b);
	/* and the comparison sees a difference: another seed's output */
	r = tu_lncsim(d, "run", "--no-db", "--seed", "5", "--outputs", "run5",
		      h2, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	char *c5 = lm_path_join(d, "run5/z.npy");
	ck_assert_msg(!same_bytes(a, c5), "%s and %s are the same", a, c5);
	free(c5);
	free(a);
	free(b);
	r = tu_lncsim(NULL, "run", "--help", NULL);
	ck_assert_contains(r.out, "(default 0)");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--help", NULL);
	ck_assert_contains(r.out, "(default 0)");
	tu_run_free(&r);
	/* an explicit --seed still excludes --inputs */
	r = tu_lncsim(NULL, "diff", "--no-db", "--seed", "0", "--inputs", d,
		      h2, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--inputs and --seed exclude each other");
	tu_run_free(&r);
	free(d);
	free(h2);
}
END_TEST

START_TEST(test_diff_names_the_schedules)
{
	char *h2 = tu_srcpath("examples/handoff2");
	tu_run r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "4", h2,
			     NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "reference + 4 perturbed schedules");
	ck_assert(strstr(r.out, "5 schedules") == NULL);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", "--schedules", "1", h2, NULL);
	ck_assert_contains(r.out, "reference + 1 perturbed schedule;");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "diff", "--no-db", h2, NULL);
	ck_assert_contains(r.out, ", 1 schedule;");
	tu_run_free(&r);
	free(h2);
}
END_TEST

/* verify: an invalid module exits 2, and its help and the man page say
** so. */
START_TEST(test_verify_exit_status_agrees)
{
	char *d = tu_tmpdir("vexit");
	char *bad = tu_write(d, "dup.json", "{\"functions\":[{\"name\":\"f\","
			     "\"allocations\":[],\"blocks\":[{\"name\":\"b\","
			     "\"instructions\":[]}]},{\"name\":\"f\","
			     "\"allocations\":[],\"blocks\":[{\"name\":\"b\","
			     "\"instructions\":[]}]}]}");
	tu_run r = tu_lncsim(NULL, "verify", bad, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "duplicate function name 'f'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "verify", "--help", NULL);
	ck_assert_contains(r.out, "2 a module is invalid or unreadable");
	ck_assert_contains(r.out, "verify never exits 1");
	tu_run_free(&r);
	char *man = tu_srcpath("docs/lncsim.1");
	char *text = tu_read(man);
	ck_assert(text != NULL);
	ck_assert_contains(text, "An invalid module is bad input: exit 2, "
			   "never 1.");
	free(text);
	free(man);
	free(bad);
	free(d);
}
END_TEST

/* gen and klr pack say what they wrote. */
START_TEST(test_writers_say_what_they_wrote)
{
	char *d = tu_tmpdir("wrote");
	char *k = tu_srcpath("tests/fixtures/klr/k_small.json");
	tu_run r = tu_lncsim(d, "gen", "--cores", "3", "--seed", "4", "-o",
			     "g", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_str_eq(r.out, "g/gen4: 3 per-core modules "
			 "(g/gen4/nc0..nc2/sg0/def.json), seed 4, size small\n");
	tu_run_free(&r);
	r = tu_lncsim(d, "gen", "--cores", "1", "--seed", "4", "--name", "one",
		      "-o", "g", NULL);
	ck_assert_str_eq(r.out, "g/one: 1 per-core module "
			 "(g/one/nc0/sg0/def.json), seed 4, size small\n");
	tu_run_free(&r);
	r = tu_lncsim(d, "klr", "pack", "-o", "k.klr", k, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	char *want = lm_xasprintf("k.klr: 898 bytes (KLR 0.0.12) from %s\n", k);
	ck_assert_str_eq(r.out, want);
	free(want);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "gen", "--help", NULL);
	ck_assert_contains(r.out, "--force");
	ck_assert_contains(r.out, "exit status: 0 written, 2 bad usage");
	tu_run_free(&r);
	free(k);
	free(d);
}
END_TEST

/* --stats prints the utilizations in percent, as the reports do. */
START_TEST(test_stats_in_percent)
{
	char *m1 = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", "--no-db", "--stats", m1, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "pe_util% mac_util%");
	const char *row = strstr(r.out, "\n0 ");
	ck_assert(row != NULL);
	long long instrs, mms, macs;
	double pe, mac;
	ck_assert_int_eq(sscanf(row + 1, "0 %lld %lld %lld %lf %lf", &instrs,
				&mms, &macs, &pe, &mac), 5);
	/* matmul1 keeps its PE array busy for more than 1 % of the run: a
	   fraction would print below 1 */
	ck_assert_msg(pe > 1.0 && pe <= 100.0, "pe_util%% %g", pe);
	ck_assert_msg(mac > 0.0 && mac <= 100.0, "mac_util%% %g", mac);
	tu_run_free(&r);
	free(m1);
}
END_TEST

/* run lists the outputs in name order. */
START_TEST(test_run_outputs_sorted)
{
	char *ex = tu_srcpath("examples/mlp4");
	tu_run r = tu_lncsim(NULL, "run", "--no-db", ex, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	const char *prev = NULL;
	int n = 0;
	for (const char *p = r.out; (p = strstr(p, "output ")); p += 7) {
		const char *e = strchr(p + 7, ':');
		ck_assert(e != NULL);
		if (prev)
			ck_assert_msg(strncmp(prev, p + 7, 64) < 0,
				      "unsorted: %s", r.out);
		prev = p + 7;
		n++;
	}
	ck_assert_int_eq(n, 8);
	tu_run_free(&r);
	free(ex);
}
END_TEST

/* The value-taking options a --help shows ("--opt VALUE" or "-o VALUE",
** the value a word in capitals, not "MODULE..."), as " --a --b ". */
static void help_valued(const char *help, lm_buf *set)
{
	lm_buf_puts(set, " ");
	for (const char *p = help; *p; p++) {
		if (*p != '-' || (p > help && !strchr(" [|(\n", p[-1])))
			continue;
		const char *e = p + 1;
		if (*e == '-')
			e++;
		if (!isalpha((unsigned char)*e))
			continue;
		while (isalnum((unsigned char)*e) || *e == '-')
			e++;
		if (e[0] != ' ' || !isupper((unsigned char)e[1]))
			continue;
		const char *v = e + 1;
		while (*v && !strchr(" ]|,\n", *v))
			v++;
		if (v - e > 4 && !strncmp(v - 3, "...", 3))
			continue;
		char *o = lm_xasprintf("%.*s ", (int)(e - p), p);
		char *key = lm_xasprintf(" %s", o);
		if (!strstr(lm_buf_cstr(set), key))
			lm_buf_puts(set, o);
		free(key);
		free(o);
	}
}

/* A file or directory exists. */
static int exists(const char *dir, const char *rel)
{
	char *p = lm_path_join(dir, rel);
	int ok = access(p, F_OK) == 0;
	free(p);
	return ok;
}

/* Every value-taking option of the commands that take operands works
** after the operand: the permutation knows each one. The list of those
** options is their --help's, so a new one fails here until it is added
** to the runs below (and to cli/main.c's table). */
/*
** "--opt=VALUE" is "--opt VALUE" for every long option a --help shows
** with a value: the two spellings, each followed by an option no command
** has, give the same exit status and the same messages. An option the
** command table does not know to take a value would be left whole and
** refused as "unknown option '--opt=...'".
*/
START_TEST(test_equals_form_of_every_valued_option)
{
	static const char *const cmds[] = { "verify", "run", "gen", "diff",
		"fuzz", "report", "db", "link", "mmt", "lower", "klr" };
	char *d = tu_tmpdir("equals");
	int checked = 0;
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		tu_run h = tu_lncsim(NULL, cmds[i], "--help", NULL);
		lm_buf set = LM_BUF_INIT;
		help_valued(h.out, &set);
		char *list = lm_xstrdup(lm_buf_cstr(&set));
		for (char *o = strtok(list, " "); o; o = strtok(NULL, " ")) {
			if (strncmp(o, "--", 2))
				continue;
			/* db's options belong to its subcommands */
			const char *sub = NULL;
			if (!strcmp(cmds[i], "db"))
				sub = !strcmp(o, "--campaign") ? "failures" :
				      !strcmp(o, "--run") ? "races" : "runs";
			char *eq = lm_xasprintf("%s=x7", o);
			const char *a1[6] = { cmds[i] }, *a2[7] = { cmds[i] };
			int n1 = 1, n2 = 1;
			if (sub)
				a1[n1++] = a2[n2++] = sub;
			a1[n1++] = eq;
			a2[n2++] = o;
			a2[n2++] = "x7";
			a1[n1++] = a2[n2++] = "--zz-no-such-option";
			a1[n1] = a2[n2] = NULL;
			tu_run r1 = tu_lncsimv(d, a1), r2 = tu_lncsimv(d, a2);
			ck_assert_msg(r1.status == r2.status &&
				      !strcmp(r1.err, r2.err),
				      "%s %s: '%s=x7' gave %d '%s', '%s x7' "
				      "gave %d '%s'", cmds[i], sub ? sub : "",
				      o, r1.status, r1.err, o, r2.status,
				      r2.err);
			ck_assert_msg(r2.status == 2, "%s %s x7: %d", cmds[i],
				      o, r2.status);
			checked++;
			tu_run_free(&r1);
			tu_run_free(&r2);
			free(eq);
		}
		free(list);
		lm_buf_free(&set);
		tu_run_free(&h);
	}
	ck_assert_int_ge(checked, 40);
	/* the value may hold '=' and be empty; "--" ends the splitting */
	tu_run r = tu_lncsim(d, "gen", "--name=a=b", "-o", "g", NULL);
	ck_assert_contains(r.out, "g/a=b: 2 per-core modules");
	tu_run_free(&r);
	r = tu_lncsim(d, "run", "--seed=", NULL);
	ck_assert_contains(r.err, "--seed needs");
	tu_run_free(&r);
	r = tu_lncsim(d, "run", "--no-db", "--", "--seed=1", NULL);
	ck_assert_contains(r.err, "--seed=1: no such file or directory");
	tu_run_free(&r);
	r = tu_lncsim(d, "gen", "--seed=9", "--cores=3", "-o", "g", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "g/gen9: 3 per-core modules");
	tu_run_free(&r);
	free(d);
}
END_TEST

START_TEST(test_every_valued_option_after_operands)
{
	static const struct { const char *cmd, *valued; } want[] = {
		{ "verify", " " },
		{ "mmt", " " },
		{ "run", " --inputs --seed --outputs --trace --max-time "
		  "--max-instructions --perturb --max-memory --race-limit --db " },
		{ "diff", " --inputs --seed --linked --schedules --save-io "
		  "--max-time --max-instructions --max-memory --race-limit "
		  "--db " },
		{ "link", " -o --barrier-base " },
		{ "lower", " -o " },
		{ "klr", " -o " },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		tu_run r = tu_lncsim(NULL, want[i].cmd, "--help", NULL);
		lm_buf b = LM_BUF_INIT;
		help_valued(r.out, &b);
		ck_assert_msg(!strcmp(lm_buf_cstr(&b), want[i].valued),
			      "%s --help shows the value-taking options '%s', "
			      "this case runs '%s'", want[i].cmd,
			      lm_buf_cstr(&b), want[i].valued);
		lm_buf_free(&b);
		tu_run_free(&r);
	}
	char *d = tu_tmpdir("valued");
	char *h2 = tu_srcpath("examples/handoff2");
	char *km = tu_srcpath("examples/kernels/bir/def.json");
	char *kj = tu_srcpath("examples/kernels/klr/kernel.klr.json");
	tu_run r = tu_lncsim(d, "run", h2, "--seed", "3", "--outputs", "o",
			     "--trace", "t.json", "--max-time", "1000000000000",
			     "--max-instructions", "1000000", "--perturb", "2",
			     "--max-memory", "1G", "--race", "--race-limit", "5",
			     "--db", "x.db", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert(exists(d, "o/z.npy") && exists(d, "t.json") &&
		  exists(d, "x.db"));
	tu_run_free(&r);
	r = tu_lncsim(d, "diff", h2, "--seed", "3", "--schedules", "1",
		      "--save-io", "s", "--max-time", "1000000000000",
		      "--max-instructions", "1000000", "--max-memory", "1G",
		      "--race", "--race-limit", "5", "--db", "x.db", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_contains(r.out, "reference + 1 perturbed schedule;");
	ck_assert(exists(d, "s/linked.json"));
	tu_run_free(&r);
	r = tu_lncsim(d, "diff", h2, "--linked", "s/linked.json", "--inputs",
		      "s/inputs", "--no-db", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "run", h2, "--inputs", "s/inputs", "--no-db", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "link", h2, "-o", "lo", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert(exists(d, "lo/handoff2/sgLnk/def.json"));
	tu_run_free(&r);
	/* link's other spellings: --out DIR, --skip LIST */
	r = tu_lncsim(d, "link", h2, "--skip", "post_link_mmt_report",
		      "--out", "lo2", "--barrier-base", "7", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert(exists(d, "lo2/handoff2/sgLnk/def.json"));
	tu_run_free(&r);
	r = tu_lncsim(d, "lower", km, "-o", "low.json", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert(exists(d, "low.json"));
	tu_run_free(&r);
	r = tu_lncsim(d, "klr", "pack", kj, "-o", "k.klr", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "klr", "dump", "k.klr", "-o", "k.json", NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert(exists(d, "k.json"));
	tu_run_free(&r);
	free(kj);
	free(km);
	free(h2);
	free(d);
}
END_TEST

/* Whole files a and b hold the same bytes. */
static int same_bytes(const char *a, const char *b)
{
	char *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	lm_error e;
	int same = lm_read_file(a, &x, &nx, &e) == 0 &&
		   lm_read_file(b, &y, &ny, &e) == 0 && nx == ny &&
		   !memcmp(x, y, nx);
	free(x);
	free(y);
	return same;
}

/* examples/kernels: a carrier module per provision mechanism lowers,
** inlines and runs; the KLR kernel is its JSON rendering packed. */
START_TEST(test_kernel_examples)
{
	static const struct { const char *mech, *out; int matmuls; } ex[] = {
		{ "bir", "output y: float32 [128, 64]", 0 },
		{ "klr", "output y_mm: float32 [32, 32]", 5 },
	};
	char *d = tu_tmpdir("kern");
	for (int i = 0; i < 2; i++) {
		char *rel = lm_xasprintf("examples/kernels/%s/def.json",
					 ex[i].mech);
		char *src = tu_srcpath(rel);
		char *low = lm_xasprintf("%s/def.json", ex[i].mech);
		char *called = lm_xasprintf("%s.called.json", ex[i].mech);
		tu_run r = tu_lncsim(d, "lower", "-o", called, src, NULL);
		ck_assert_msg(r.status == 0, "stderr: %s", r.err);
		ck_assert_contains(r.out, "1 kernel carrier: 1 lowered");
		tu_run_free(&r);
		r = tu_lncsim(d, "lower", "--inline", "-o", low, src, NULL);
		ck_assert_msg(r.status == 0, "stderr: %s", r.err);
		ck_assert_contains(r.out, "1 lowered and inlined");
		tu_run_free(&r);
		r = tu_lncsim(d, "run", "--no-db", low, NULL);
		ck_assert_msg(r.status == 0, "stderr: %s", r.err);
		ck_assert_contains(r.out, ex[i].out);
		tu_run_free(&r);
		r = tu_lncsim(d, "mmt", low, NULL);
		ck_assert_msg(r.status == 0, "stderr: %s", r.err);
		char *total = lm_xasprintf("total        -        %d ",
					   ex[i].matmuls);
		ck_assert_contains(r.out, total);
		free(total);
		tu_run_free(&r);
		free(called);
		free(low);
		free(src);
		free(rel);
	}
	char *json = tu_srcpath("examples/kernels/klr/kernel.klr.json");
	char *klr = tu_srcpath("examples/kernels/klr/kernel.klr");
	char *packed = lm_path_join(d, "k.klr");
	tu_run r = tu_lncsim(d, "klr", "pack", "-o", "k.klr", json, NULL);
	ck_assert_msg(r.status == 0, "stderr: %s", r.err);
	ck_assert_msg(same_bytes(packed, klr), "%s is not %s packed", klr,
		      json);
	tu_run_free(&r);
	free(packed);
	free(klr);
	free(json);
	free(d);
}
END_TEST

/* mmt says when a module has no Matmult; the README's mmt example has
** some. */
START_TEST(test_mmt_says_no_matmult)
{
	char *h2 = tu_srcpath("examples/handoff2");
	char *mlp = tu_srcpath("examples/mlp4");
	tu_run r = tu_lncsim(NULL, "mmt", h2, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "no Matmult in this module");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "mmt", mlp, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, "no Matmult") == NULL);
	tu_run_free(&r);
	char *readme = tu_srcpath("README.md"), *text = tu_read(readme);
	ck_assert(text != NULL);
	ck_assert(strstr(text, "mmt out/handoff2") == NULL);
	ck_assert_contains(text, "./lncsim mmt out/mlp4/sgLnk/def.json");
	ck_assert_contains(text, "examples/kernels/klr/def.json");
	ck_assert_contains(text, "examples/kernels/bir/def.json");
	free(text);
	free(readme);
	free(mlp);
	free(h2);
}
END_TEST

/* ---- the man page against each command's --help -------------------- */

static const char *const commands[] = {
	"verify", "run", "gen", "diff", "fuzz", "report", "db", "link", "mmt",
	"lower", "klr",
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* Add every option text t names ("-x" or "--name" at the start of a
** word) to the set " --a --b " in *set, once; --help is left out (every
** command takes it). */
static void collect_options(const char *t, lm_buf *set)
{
	for (const char *p = t; *p; p++) {
		if (*p != '-' || (p > t && (isalnum((unsigned char)p[-1]) ||
					    p[-1] == '-' || p[-1] == '_')))
			continue;
		const char *e = p + 1;
		if (*e == '-' && isalpha((unsigned char)e[1])) {
			for (e++; isalnum((unsigned char)*e) || *e == '-'; e++)
				;
			while (e[-1] == '-')
				e--;
		} else if (isalpha((unsigned char)*e) &&
			   !isalnum((unsigned char)e[1]) && e[1] != '-') {
			e++;
		} else {
			continue;
		}
		char *o = lm_xasprintf(" %.*s ", (int)(e - p), p);
		if (strcmp(o, " --help ") && !strstr(lm_buf_cstr(set), o))
			lm_buf_puts(set, o + (set->size ? 1 : 0));
		free(o);
		p = e - 1;
	}
}

/* The man page's text without font escapes, "\-" as "-". */
static char *man_plain(const char *s)
{
	lm_buf b = LM_BUF_INIT;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == 'f' && s[2]) {
			s += 2;
			continue;
		}
		if (s[0] == '\\' && s[1] == '-') {
			lm_buf_puts(&b, "-");
			s++;
			continue;
		}
		lm_buf_put(&b, s, 1);
	}
	return lm_buf_detach(&b);
}

/* The man page's text of command cmd: every ".TP" entry whose heading
** is ".B cmd ...", up to the next such heading or section. */
static void man_command_text(const char *man, const char *cmd, lm_buf *out)
{
	size_t n = strlen(cmd);
	int in = 0;
	for (const char *l = man; *l; ) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (!strncmp(l, ".TP", 3) && nl && !strncmp(nl + 1, ".B ", 3)) {
			const char *h = nl + 4;
			int is_cmd = 0;
			for (size_t i = 0; i < N_COMMANDS; i++) {
				size_t k = strlen(commands[i]);
				if (!strncmp(h, commands[i], k) &&
				    (h[k] == ' ' || h[k] == '\n'))
					is_cmd = 1;
			}
			if (is_cmd)
				in = !strncmp(h, cmd, n) &&
				     (h[n] == ' ' || h[n] == '\n');
		} else if (!strncmp(l, ".SH", 3)) {
			in = 0;
		}
		if (in) {
			lm_buf_put(out, l, len);
			lm_buf_puts(out, "\n");
		}
		l += len + (nl ? 1 : 0);
	}
}

/* Each word of set a missing from set b, as " cmd: word" into miss. */
static void missing(const char *cmd, const char *where, const char *a,
		    const char *b, lm_buf *miss)
{
	char w[128];
	for (const char *p = a; sscanf(p, " %127s", w) == 1; ) {
		char *key = lm_xasprintf(" %s ", w);
		if (!strstr(b, key))
			lm_buf_printf(miss, " %s %s (not in %s);", cmd, w, where);
		free(key);
		p = strstr(p, w) + strlen(w);
	}
}

START_TEST(test_man_page_lists_every_option)
{
	char *path = tu_srcpath("docs/lncsim.1");
	char *raw = tu_read(path);
	ck_assert(raw != NULL);
	char *man = man_plain(raw);
	lm_buf miss = LM_BUF_INIT;
	for (size_t i = 0; i < N_COMMANDS; i++) {
		tu_run r = tu_lncsim(NULL, commands[i], "--help", NULL);
		ck_assert_int_eq(r.status, 0);
		lm_buf text = LM_BUF_INIT, h = LM_BUF_INIT, m = LM_BUF_INIT;
		man_command_text(man, commands[i], &text);
		ck_assert_msg(text.size > 0, "no man page entry for %s",
			      commands[i]);
		collect_options(r.out, &h);
		collect_options(lm_buf_cstr(&text), &m);
		ck_assert_msg(h.size > 0 || !strcmp(commands[i], "db") ||
			      !strcmp(commands[i], "klr"), "%s", commands[i]);
		lm_buf_puts(&h, " ");
		lm_buf_puts(&m, " ");
		missing(commands[i], "the man page", lm_buf_cstr(&h),
			lm_buf_cstr(&m), &miss);
		missing(commands[i], "--help", lm_buf_cstr(&m), lm_buf_cstr(&h),
			&miss);
		lm_buf_free(&text);
		lm_buf_free(&h);
		lm_buf_free(&m);
		tu_run_free(&r);
	}
	ck_assert_msg(miss.size == 0, "help and man page disagree:%s",
		      lm_buf_cstr(&miss));
	/* the environment it reads */
	const char *env = strstr(man, ".SH ENVIRONMENT");
	ck_assert(env != NULL);
	ck_assert_contains(env, LDB_ENV);
	ck_assert_contains(env, LR_GNUPLOT_ENV);
	lm_buf_free(&miss);
	free(man);
	free(raw);
	free(path);
}
END_TEST

/* The checker above: it finds what it should. */
START_TEST(test_option_collector)
{
	lm_buf b = LM_BUF_INIT;
	collect_options("usage: x [--seed N] [-o DIR] --skip=A,B race-free "
			"mpirun -np 4 'lncsim link --help' 1-4 --db, -q\n", &b);
	ck_assert_str_eq(lm_buf_cstr(&b), " --seed -o --skip --db -q ");
	lm_buf_free(&b);
	lm_buf t = LM_BUF_INIT;
	man_command_text(".SH X\n.TP\n.B run \\-\\-a\ntext\n.TP\n.B \\-\\-b\n"
			 ".TP\n.B diff\n\\-\\-c\n.SH Y\n", "run", &t);
	ck_assert_str_eq(lm_buf_cstr(&t), ".TP\n.B run \\-\\-a\ntext\n.TP\n"
			 ".B \\-\\-b\n");
	lm_buf_free(&t);
}
END_TEST

/* ---- ./bootstrap, against stand-ins for dpkg, apt-get and autoreconf -- */

/* dpkg-query: a package is installed when its name is a line of
** $STATE; -W without a package lists every installed one. apt-get: logs
** its arguments to $CALLS, makes noise, "installs" the packages (and
** three dependencies) into $STATE, fails when $FAIL is set. id -u prints
** $FAKE_UID. autoreconf makes noise and logs itself. */
static const char stub_dpkg[] =
	"#!/bin/sh\n"
	"last=''; for a; do last=$a; done\n"
	"case $last in -f=*) while read -r l; do echo 'install ok installed';"
	" done < \"$STATE\"; exit 0;; esac\n"
	"grep -qx \"$last\" \"$STATE\" && { printf 'install ok installed'; "
	"exit 0; }\n"
	"exit 1\n";
static const char stub_apt[] =
	"#!/bin/sh\n"
	"echo \"apt-get $*\" >> \"$CALLS\"\n"
	"i=0; while [ $i -lt 40 ]; do echo \"Unpacking noise $i\"; "
	"i=$((i+1)); done\n"
	"[ -n \"$FAIL\" ] && { echo 'E: Unable to locate package'; exit 100; }\n"
	"[ \"$1\" = install ] || exit 0\n"
	"for a; do case $a in -*|install) ;; *) echo \"$a\" >> \"$STATE\";;"
	" esac; done\n"
	"printf 'dep1\\ndep2\\ndep3\\n' >> \"$STATE\"\n";
static const char stub_id[] = "#!/bin/sh\necho \"$FAKE_UID\"\n";
static const char stub_autoreconf[] =
	"#!/bin/sh\necho \"autoreconf $*\" >> \"$CALLS\"\n"
	"echo 'libtoolize: putting auxiliary files'\n";

typedef struct boot_run {
	int status;
	char *out, *calls;
} boot_run;

/* Run a copy of ./bootstrap in dir with uid and the installed packages
** (newline separated) in state; fail: apt-get fails. */
static boot_run run_bootstrap(const char *dir, int uid, const char *state,
			      int fail)
{
	static const char *const tools[] = {
		"dirname", "grep", "mktemp", "rm", "tail", "wc", "mkdir", "cat",
	};
	char *src = tu_srcpath("bootstrap");
	char *stub = lm_path_join(dir, "stub");
	char *calls = lm_path_join(dir, "calls");
	boot_run b;
	tu_copy(src, dir, "bootstrap");
	free(tu_write(stub, "dpkg-query", stub_dpkg));
	free(tu_write(stub, "apt-get", stub_apt));
	free(tu_write(stub, "id", stub_id));
	free(tu_write(stub, "autoreconf", stub_autoreconf));
	free(tu_write(dir, "state", state));
	unlink(calls);
	lm_buf cmd = LM_BUF_INIT;
	lm_buf_printf(&cmd, "cd '%s' && chmod 755 stub/* && for t in", dir);
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		lm_buf_printf(&cmd, " %s", tools[i]);
	lm_buf_printf(&cmd, "; do ln -sf \"$(command -v $t)\" stub/$t; done && "
		      "STATE='%s/state' CALLS='%s' FAKE_UID=%d FAIL='%s' "
		      "PATH='%s' TMPDIR='%s' /bin/sh ./bootstrap 2>&1",
		      dir, calls, uid, fail ? "1" : "", stub, dir);
	FILE *p = popen(lm_buf_cstr(&cmd), "r");
	ck_assert(p != NULL);
	lm_buf out = LM_BUF_INIT;
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
		lm_buf_put(&out, chunk, n);
	int st = pclose(p);
	b.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	b.out = lm_buf_detach(&out);
	b.calls = tu_read(calls);
	if (!b.calls)
		b.calls = lm_xstrdup("");
	lm_buf_free(&cmd);
	free(calls);
	free(stub);
	free(src);
	return b;
}

static void boot_free(boot_run *b)
{
	free(b->out);
	free(b->calls);
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

START_TEST(test_bootstrap_as_user)
{
	char *d = tu_tmpdir("boot-user");
	boot_run b = run_bootstrap(d, 1000, "autoconf\ncheck\n", 0);
	ck_assert_msg(b.status == 0, "%s", b.out);
	ck_assert_contains(b.out, "bootstrap: warning: Debian packages not "
			   "installed: build-essential automake libtool "
			   "pkg-config libcjson-dev libsqlite3-dev gnuplot-nox "
			   "sqlite3\n");
	ck_assert_contains(b.out, "  apt-get install --no-install-recommends "
			   "build-essential automake");
	/* no apt-get, but autoreconf: the tools may be there all the same */
	ck_assert_str_eq(b.calls, "autoreconf -fi\n");
	boot_free(&b);
	free(d);
}
END_TEST

START_TEST(test_bootstrap_as_root)
{
	char *d = tu_tmpdir("boot-root");
	boot_run b = run_bootstrap(d, 0, "autoconf\ncheck\n", 0);
	ck_assert_msg(b.status == 0, "%s", b.out);
	ck_assert_str_eq(b.out, "bootstrap: installing 8 package(s): "
			 "build-essential automake libtool pkg-config "
			 "libcjson-dev libsqlite3-dev gnuplot-nox sqlite3\n"
			 "bootstrap: installed 8 package(s), 11 with their "
			 "dependencies\n"
			 "bootstrap: done (autoreconf -fi); ./configure comes "
			 "next\n");
	ck_assert_contains(b.calls, "apt-get install -y -qq "
			   "--no-install-recommends build-essential automake");
	ck_assert_contains(b.calls, "autoreconf -fi");
	boot_free(&b);
	/* everything there: no apt-get at all, one line */
	b = run_bootstrap(d, 0, "build-essential\nautoconf\nautomake\nlibtool\n"
			  "pkg-config\nlibcjson-dev\nlibsqlite3-dev\ncheck\n"
			  "gnuplot-nox\nsqlite3\n", 0);
	ck_assert_msg(b.status == 0, "%s", b.out);
	ck_assert_int_eq(count_lines(b.out), 1);
	ck_assert(strstr(b.calls, "apt-get") == NULL);
	boot_free(&b);
	/* apt-get fails: its log's end, and the status */
	b = run_bootstrap(d, 0, "autoconf\n", 1);
	ck_assert_int_eq(b.status, 1);
	ck_assert_contains(b.out, "bootstrap: 'apt-get update -qq' failed");
	ck_assert_contains(b.out, "E: Unable to locate package");
	ck_assert(strstr(b.calls, "autoreconf") == NULL);
	boot_free(&b);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("cli");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_unknown_command);
	tcase_add_test(tc, test_verify_examples);
	tcase_add_test(tc, test_verify_bad_inputs);
	tcase_add_test(tc, test_options_after_operands);
	tcase_add_test(tc, test_every_valued_option_after_operands);
	tcase_add_test(tc, test_equals_form_of_every_valued_option);
	tcase_add_test(tc, test_logged_command_line);
	tcase_add_test(tc, test_missing_inputs_dir);
	tcase_add_test(tc, test_run_and_diff_share_the_default_seed);
	tcase_add_test(tc, test_diff_names_the_schedules);
	tcase_add_test(tc, test_verify_exit_status_agrees);
	tcase_add_test(tc, test_writers_say_what_they_wrote);
	tcase_add_test(tc, test_stats_in_percent);
	tcase_add_test(tc, test_run_outputs_sorted);
	tcase_add_test(tc, test_kernel_examples);
	tcase_add_test(tc, test_mmt_says_no_matmult);
	tcase_add_test(tc, test_man_page_lists_every_option);
	tcase_add_test(tc, test_option_collector);
	suite_add_tcase(s, tc);
	tc = tcase_create("bootstrap");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_bootstrap_as_user);
	tcase_add_test(tc, test_bootstrap_as_root);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

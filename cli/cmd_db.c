/*
** cmd_db.c -- `lncsim db runs [--db FILE] [--last N]`,
** `lncsim db merge OUT.db IN.db...`, `lncsim db check [--db FILE]`,
** `lncsim db failures [--db FILE] [--campaign NAME]` and
** `lncsim db races [--db FILE] [--run ID] [--last N]`.
*/
#include "common.h"
#include "cli.h"
#include "cli_db.h"
#include "db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_db[] =
	"usage: lncsim db runs [--db FILE] [--last N]\n"
	"       lncsim db merge OUT.db IN.db...\n"
	"       lncsim db check [--db FILE]\n"
	"       lncsim db failures [--db FILE] [--campaign NAME]\n"
	"       lncsim db races [--db FILE] [--run ID] [--last N]\n\n"
	"The SQLite run log (docs/database.md).\n\n"
	"  runs    print the logged runs as a table, oldest first (only reads:\n"
	"          works on a read-only database)\n"
	"          --db FILE  the database (default $LNCSIM_DB, else ./lncsim.db)\n"
	"          --last N   only the N most recent runs\n"
	"  merge   copy every run of the IN databases into OUT (created if\n"
	"          missing); ids are re-keyed, a run already in OUT (same\n"
	"          uuid) is skipped, so merging twice adds nothing\n"
	"  check   read every page of the database (PRAGMA integrity_check)\n"
	"          and print what is damaged\n"
	"  failures  the fuzz campaigns (their generator options and how their\n"
	"          cases went) and each campaign's failure signatures: hits,\n"
	"          the smallest seed, its message and repro command (only\n"
	"          reads)\n"
	"          --campaign NAME  only this campaign\n"
	"  races   the races found in the runs checked for them, one a line\n"
	"          under each run: mode, kind, memory, byte range, both\n"
	"          instructions, the last common ordering point (only reads)\n"
	"          --run ID   only run ID (or that it was not checked)\n"
	"          --last N   only the N most recent runs checked\n\n"
	"exit status: 0 ok, 1 check found damage, 2 bad usage or a database\n"
	"that cannot be read or written\n";

/*
** Parse a positive count.
*/
static int parse_count(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || !*s || *end || v <= 0 || v > 1000000000)
		return -1;
	*out = (int)v;
	return 0;
}

/*
** `db runs`: the run table.
*/
static int db_runs(int argc, char **argv)
{
	cli_db dbo = {0};
	int last = 0;
	for (int i = 1; i < argc; i++) {
		int k = cli_db_option(&dbo, "db runs", argc, argv, &i);
		if (k < 0)
			return EXIT_INPUT;
		if (k > 0)
			continue;
		if (!strcmp(argv[i], "--")) {
			if (cli_no_operands("db runs", argc, argv, i))
				return EXIT_INPUT;
			break;
		} else if (!strcmp(argv[i], "--last")) {
			if (i + 1 >= argc || parse_count(argv[i + 1], &last))
				return cli_usage_error("db runs", "--last needs "
						       "a positive number");
			i++;
		} else if (!strncmp(argv[i], "--last=", 7)) {
			if (parse_count(argv[i] + 7, &last))
				return cli_usage_error("db runs", "--last needs "
						       "a positive number");
		} else
			return cli_usage_error("db runs", "unknown argument "
					       "'%s'", argv[i]);
	}
	if (dbo.disabled)
		return cli_usage_error("db runs", "--no-db: there is nothing "
				       "to list");
	lm_error err;
	ldb *db = NULL;
	ldb_run_row *rows = NULL;
	int n = 0;
	if (ldb_open(&db, cli_db_path(&dbo), LDB_READ, &err) != 0 ||
	    ldb_query_runs(db, last, &rows, &n, &err) != 0) {
		ldb_close(db);
		return cli_report(&err);
	}
	printf("%5s  %-20s  %-6s  %5s  %-6s  %14s  %6s  %6s  %8s  %8s  %s\n",
	       "ID", "STARTED (UTC)", "STATUS", "CORES", "ARCH",
	       "SIM TIME (ns)", "PE%", "MAC%", "MATMULS", "WALL (s)",
	       "MODULE / MESSAGE");
	for (int i = 0; i < n; i++) {
		const ldb_run_row *r = &rows[i];
		char t[32], pe[16], mac[16];
		if (r->sim_time_ps >= 0)
			snprintf(t, sizeof t, "%.3f", (double)r->sim_time_ps / 1e3);
		else
			snprintf(t, sizeof t, "-");
		if (r->pe_util >= 0)
			snprintf(pe, sizeof pe, "%.1f", 100 * r->pe_util);
		else
			snprintf(pe, sizeof pe, "-");
		if (r->mac_util >= 0)
			snprintf(mac, sizeof mac, "%.1f", 100 * r->mac_util);
		else
			snprintf(mac, sizeof mac, "-");
		printf("%5lld  %-20s  %-6s  %5d  %-6s  %14s  %6s  %6s  %8lld  "
		       "%8.3f  %s%s%s\n", (long long)r->id, r->started_utc,
		       r->status, r->cores, r->arch, t, pe, mac,
		       (long long)r->n_matmuls, r->wall_seconds, r->module,
		       r->message[0] ? " -- " : "", r->message);
	}
	if (n == 0)
		printf("(no runs in %s)\n", ldb_path(db));
	ldb_run_rows_free(rows, n);
	ldb_close(db);
	return EXIT_OK;
}

/*
** `db merge OUT IN...`.
*/
static int db_merge(int argc, char **argv)
{
	/* "--" first: what follows are file names, even "-x.db" */
	int dashes = argc > 1 && !strcmp(argv[1], "--");
	if (dashes) {
		argc--;
		argv++;
	}
	if (argc < 3)
		return cli_usage_error("db merge", "need OUT.db and at least "
				       "one IN.db");
	for (int i = 1; !dashes && i < argc; i++)
		if (argv[i][0] == '-')
			return cli_usage_error("db merge", "unknown option "
					       "'%s'", argv[i]);
	lm_error err;
	ldb *out = NULL;
	if (ldb_open(&out, argv[1], LDB_CREATE, &err) != 0)
		return cli_report(&err);
	int rc = EXIT_OK;
	for (int i = 2; i < argc; i++) {
		ldb_merge_stats st = {0};
		if (ldb_merge(out, argv[i], &st, &err) != 0) {
			rc = cli_report(&err);
			break;
		}
		printf("%s: %lld run%s merged, %lld already present "
		       "(%lld executions, %lld core stats, %lld matmuls, "
		       "%lld tensors)", argv[i], (long long)st.runs,
		       st.runs == 1 ? "" : "s", (long long)st.runs_skipped,
		       (long long)st.executions, (long long)st.core_stats,
		       (long long)st.matmuls, (long long)st.tensors);
		if (st.races)
			printf("; %lld race%s", (long long)st.races,
			       st.races == 1 ? "" : "s");
		if (st.cases || st.campaigns)
			printf("; %lld fuzz case%s, %lld new campaign%s",
			       (long long)st.cases, st.cases == 1 ? "" : "s",
			       (long long)st.campaigns,
			       st.campaigns == 1 ? "" : "s");
		printf("\n");
	}
	ldb_close(out);
	return rc;
}

/*
** `db check [--db FILE]`: the full integrity check.
*/
static int db_check(int argc, char **argv)
{
	cli_db dbo = {0};
	for (int i = 1; i < argc; i++) {
		int k = cli_db_option(&dbo, "db check", argc, argv, &i);
		if (k < 0)
			return EXIT_INPUT;
		if (k == 0 && !strcmp(argv[i], "--")) {
			if (cli_no_operands("db check", argc, argv, i))
				return EXIT_INPUT;
			break;
		}
		if (k == 0)
			return cli_usage_error("db check", "unknown argument "
					       "'%s'", argv[i]);
	}
	if (dbo.disabled)
		return cli_usage_error("db check", "--no-db: there is nothing "
				       "to check");
	const char *path = cli_db_path(&dbo);
	lm_error err;
	char *problems = NULL;
	if (ldb_check_file(path, &problems, &err) != 0)
		return cli_report(&err);
	int rc = EXIT_OK;
	if (!problems[0])
		printf("%s: ok\n", path);
	else {
		printf("%s: damaged (PRAGMA integrity_check):\n%s", path,
		       problems);
		rc = EXIT_CHECK;
	}
	free(problems);
	return rc;
}

/* One campaign's head line and its signatures. */
static void print_campaign(const ldb_campaign_row *c,
			   const ldb_failure_row *f, int n)
{
	printf("campaign %s  (%s, seeds %llu..", c->c.name, c->c.gen_options,
	       (unsigned long long)c->c.first_seed);
	if (c->c.count)
		printf("%llu", (unsigned long long)(c->c.first_seed +
						    c->c.count - 1));
	printf("; lncsim %s, started %s)\n", c->c.tool_version,
	       c->c.started_utc);
	printf("  %lld case%s (%lld seed%s): %lld passed, %lld failed, %lld "
	       "error%s; %lld signature%s\n", (long long)c->cases,
	       c->cases == 1 ? "" : "s", (long long)c->seeds,
	       c->seeds == 1 ? "" : "s", (long long)c->passed,
	       (long long)c->failed, (long long)c->errors,
	       c->errors == 1 ? "" : "s", (long long)c->signatures,
	       c->signatures == 1 ? "" : "s");
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(f[i].campaign, c->c.name))
			continue;
		if (!k++)
			printf("  %8s  %10s  %s\n", "HITS", "SEED", "SIGNATURE");
		printf("  %8lld  %10llu  %s\n      %s\n      repro: %s\n",
		       (long long)f[i].hits, (unsigned long long)f[i].seed,
		       f[i].signature, f[i].message, f[i].repro);
	}
}

/*
** `db failures [--db FILE] [--campaign NAME]`: the campaigns and their
** deduplicated failures.
*/
static int db_failures(int argc, char **argv)
{
	cli_db dbo = {0};
	const char *name = NULL;
	for (int i = 1; i < argc; i++) {
		int k = cli_db_option(&dbo, "db failures", argc, argv, &i);
		if (k < 0)
			return EXIT_INPUT;
		if (k > 0)
			continue;
		if (!strcmp(argv[i], "--")) {
			if (cli_no_operands("db failures", argc, argv, i))
				return EXIT_INPUT;
			break;
		}
		if (!strcmp(argv[i], "--campaign") && i + 1 < argc)
			name = argv[++i];
		else
			return cli_usage_error("db failures", "unknown argument "
					       "'%s'", argv[i]);
	}
	if (dbo.disabled)
		return cli_usage_error("db failures", "--no-db: there is "
				       "nothing to list");
	lm_error err;
	ldb *db = NULL;
	ldb_campaign_row *c = NULL;
	ldb_failure_row *f = NULL;
	int nc = 0, nf = 0;
	if (ldb_open(&db, cli_db_path(&dbo), LDB_READ, &err) != 0 ||
	    ldb_query_campaigns(db, name, &c, &nc, &err) != 0 ||
	    ldb_query_failures(db, name, &f, &nf, &err) != 0) {
		ldb_campaign_rows_free(c, nc);
		ldb_close(db);
		return cli_report(&err);
	}
	int rc = EXIT_OK;
	if (name && !nc) {
		fprintf(stderr, "lncsim: %s: no campaign %s\n", ldb_path(db),
			name);
		rc = EXIT_INPUT;
	} else if (!nc)
		printf("(no fuzz campaigns in %s)\n", ldb_path(db));
	for (int i = 0; i < nc; i++)
		print_campaign(&c[i], f, nf);
	ldb_failure_rows_free(f, nf);
	ldb_campaign_rows_free(c, nc);
	ldb_close(db);
	return rc;
}

/* One access of a race: "FUNCTION/BLOCK/INSTR [ITER] (core C ENGINE)". */
static void print_access(const ldb_race_access *x)
{
	printf("%s/%s/%s", x->function, x->block, x->instr);
	if (x->iteration[0])
		printf(" [%s]", x->iteration);
	printf(" (core %d %s)", x->core, x->engine);
}

/* One race on one line. */
static void print_race(const ldb_race_row *row)
{
	const ldb_race *r = &row->r;
	printf("  %s %s %s", row->mode, r->kind, r->memory);
	if (r->core >= 0)
		printf(" core %d", r->core);
	if (r->object[0])
		printf(" %s", r->object);
	printf(" bytes [%lld, %lld): ", (long long)r->lo, (long long)r->hi);
	print_access(&r->a);
	printf(" vs ");
	print_access(&r->b);
	printf("; last common point: %s\n", r->common[0] ? r->common
						      : "(none)");
}

/*
** `db races [--db FILE] [--run ID] [--last N]`: the races of the runs
** checked for them.
*/
static int db_races(int argc, char **argv)
{
	cli_db dbo = {0};
	int last = 0, run = 0;
	for (int i = 1; i < argc; i++) {
		int k = cli_db_option(&dbo, "db races", argc, argv, &i);
		if (k < 0)
			return EXIT_INPUT;
		if (k > 0)
			continue;
		const char *a = argv[i], *v = NULL;
		int *dst = NULL;
		if (!strcmp(a, "--")) {
			if (cli_no_operands("db races", argc, argv, i))
				return EXIT_INPUT;
			break;
		} else if (!strcmp(a, "--last") || !strcmp(a, "--run")) {
			dst = a[2] == 'l' ? &last : &run;
			v = i + 1 < argc ? argv[++i] : "";
		} else if (!strncmp(a, "--last=", 7) || !strncmp(a, "--run=", 6)) {
			dst = a[2] == 'l' ? &last : &run;
			v = strchr(a, '=') + 1;
		} else
			return cli_usage_error("db races", "unknown argument "
					       "'%s'", a);
		if (parse_count(v, dst))
			return cli_usage_error("db races", "%s needs a positive "
					       "number", dst == &last ? "--last"
					       : "--run");
	}
	if (dbo.disabled)
		return cli_usage_error("db races", "--no-db: there is nothing "
				       "to list");
	if (run && last)
		return cli_usage_error("db races", "--run and --last exclude "
				       "each other");
	lm_error err;
	ldb *db = NULL;
	ldb_race_check *ck = NULL;
	int n = 0, rc = EXIT_OK;
	if (ldb_open(&db, cli_db_path(&dbo), LDB_READ, &err) != 0 ||
	    ldb_query_race_checks(db, run, last, &ck, &n, &err) != 0) {
		ldb_close(db);
		return cli_report(&err);
	}
	if (run && !n) {
		fprintf(stderr, "lncsim: %s: no run %d\n", ldb_path(db), run);
		rc = EXIT_INPUT;
	} else if (!n)
		printf("(no run in %s was checked for races)\n", ldb_path(db));
	int64_t total = 0;
	for (int i = 0; rc == EXIT_OK && i < n; i++) {
		ldb_race_row *rows = NULL;
		int nr = 0;
		if (ck[i].races < 0) {
			printf("run %lld: not checked for races\n",
			       (long long)ck[i].run_id);
			continue;
		}
		if (ldb_query_races(db, ck[i].run_id, &rows, &nr, &err) != 0) {
			rc = cli_report(&err);
			break;
		}
		if (nr)
			printf("run %lld: %d race%s\n", (long long)ck[i].run_id,
			       nr, nr == 1 ? "" : "s");
		else
			printf("run %lld: no races\n", (long long)ck[i].run_id);
		for (int j = 0; j < nr; j++)
			print_race(&rows[j]);
		total += nr;
		ldb_race_rows_free(rows, nr);
	}
	if (rc == EXIT_OK && n > 1)
		printf("%lld race%s in %d runs checked\n", (long long)total,
		       total == 1 ? "" : "s", n);
	free(ck);
	ldb_close(db);
	return rc;
}

/*
** `lncsim db SUBCOMMAND`: dispatch to runs, merge, check or failures.
*/
int cmd_db(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("db", "need a subcommand: runs, merge, "
				       "check, failures or races");
	if (!strcmp(argv[1], "runs"))
		return db_runs(argc - 1, argv + 1);
	if (!strcmp(argv[1], "merge"))
		return db_merge(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return db_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "failures"))
		return db_failures(argc - 1, argv + 1);
	if (!strcmp(argv[1], "races"))
		return db_races(argc - 1, argv + 1);
	return cli_usage_error("db", "unknown subcommand '%s' (runs, merge, "
			       "check, failures or races)", argv[1]);
}

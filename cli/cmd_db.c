/*
** cmd_db.c -- `lncsim db runs [--db FILE] [--last N]`,
** `lncsim db merge OUT.db IN.db...` and `lncsim db check [--db FILE]`.
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
	"       lncsim db check [--db FILE]\n\n"
	"The SQLite run log (docs/database.md).\n\n"
	"  runs    print the logged runs as a table, oldest first (only reads:\n"
	"          works on a read-only database)\n"
	"          --db FILE  the database (default $LNCSIM_DB, else ./lncsim.db)\n"
	"          --last N   only the N most recent runs\n"
	"  merge   copy every run of the IN databases into OUT (created if\n"
	"          missing); ids are re-keyed, a run already in OUT (same\n"
	"          uuid) is skipped, so merging twice adds nothing\n"
	"  check   read every page of the database (PRAGMA integrity_check)\n"
	"          and print what is damaged\n\n"
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
		if (!strcmp(argv[i], "--last")) {
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
	if (argc < 3)
		return cli_usage_error("db merge", "need OUT.db and at least "
				       "one IN.db");
	for (int i = 1; i < argc; i++)
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
		       "%lld tensors)\n", argv[i], (long long)st.runs,
		       st.runs == 1 ? "" : "s", (long long)st.runs_skipped,
		       (long long)st.executions, (long long)st.core_stats,
		       (long long)st.matmuls, (long long)st.tensors);
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

/*
** `lncsim db SUBCOMMAND`: dispatch to runs, merge or check.
*/
int cmd_db(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("db", "need a subcommand: runs, merge or "
				       "check");
	if (!strcmp(argv[1], "runs"))
		return db_runs(argc - 1, argv + 1);
	if (!strcmp(argv[1], "merge"))
		return db_merge(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return db_check(argc - 1, argv + 1);
	return cli_usage_error("db", "unknown subcommand '%s' (runs, merge or "
			       "check)", argv[1]);
}

/*
** cmd_report.c -- `lncsim report [--db FILE] [-o DIR] [--run ID]
** [--format png|svg] [--since DATE] [--command run|diff|fuzz]`: plots
** from the run log (docs/reports.md).
*/
#include "common.h"
#include "cli.h"
#include "cli_db.h"
#include "db.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_report[] =
	"usage: lncsim report [--db FILE] [-o DIR] [--run ID] [--format png|svg]\n"
	"                     [--since DATE] [--command run|diff|fuzz]\n\n"
	"Plot the run log with gnuplot into DIR (default ./lncsim-report/):\n"
	"per-core PE and MAC utilization of a run (reference next to linked),\n"
	"where each engine's time went (busy, waits, idle), the same inside\n"
	"each NKIKernel call with its engines' utilization and critical\n"
	"engine, a PE timeline per core and mode, array fill by matmul shape\n"
	"over the database, the history of the runs; each with its .tsv\n"
	"data and .gp script, and index.html showing them with a table of\n"
	"the runs (docs/reports.md).\n"
	"Files an earlier report left in DIR and this one does not write are\n"
	"removed (only those its manifest lists).\n\n"
	"  --db FILE      the database (default $LNCSIM_DB, else ./lncsim.db)\n"
	"  -o DIR         output directory\n"
	"  --run ID       the run of the per-run plots (default: the latest run\n"
	"                 that has an execution)\n"
	"  --format FMT   png (default) or svg\n"
	"  --since DATE   history and run table: runs started at or after DATE\n"
	"                 (UTC, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)\n"
	"  --command CMD  history and run table: runs of lncsim CMD only (run,\n"
	"                 diff, or fuzz: the cases of fuzz campaigns); with\n"
	"                 either filter the default run is the last matching one\n\n"
	"gnuplot is taken from $LNCSIM_GNUPLOT, else the one configure found,\n"
	"else PATH.\n\n"
	"exit status: 0 ok, 2 bad usage, no database or run, gnuplot missing,\n"
	"3 gnuplot failed\n";

/* The value of an option: "--opt V" or "--opt=V"; NULL if not this one. */
static const char *opt_value(const char *name, int argc, char **argv, int *i,
			     int *missing)
{
	size_t n = strlen(name);
	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (strcmp(argv[*i], name) != 0)
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

/*
** `lncsim report`: parse the options, open the database (never
** created), write the report, print the files written.
*/
int cmd_report(int argc, char **argv)
{
	cli_db dbo = {0};
	lr_options o = {0};
	for (int i = 1; i < argc; i++) {
		int k = cli_db_option(&dbo, "report", argc, argv, &i), missing = 0;
		const char *v;
		if (k < 0)
			return EXIT_INPUT;
		if (k > 0)
			continue;
		if (!strcmp(argv[i], "--")) {
			if (cli_no_operands("report", argc, argv, i))
				return EXIT_INPUT;
			break;
		}
		if ((v = opt_value("-o", argc, argv, &i, &missing)) ||
		    (v = opt_value("--output", argc, argv, &i, &missing)))
			o.out_dir = v;
		else if ((v = opt_value("--format", argc, argv, &i, &missing)))
			o.format = v;
		else if ((v = opt_value("--since", argc, argv, &i, &missing)))
			o.since = v;
		else if ((v = opt_value("--command", argc, argv, &i,
					&missing)))
			o.command = v;
		else if ((v = opt_value("--run", argc, argv, &i, &missing))) {
			char *end;
			errno = 0;
			long long id = strtoll(v, &end, 10);
			if (errno || !*v || *end || id <= 0)
				return cli_usage_error("report", "--run needs a "
						       "run id, not '%s'", v);
			o.run_id = id;
		} else if (missing)
			return cli_usage_error("report", "%s needs a value",
					       argv[i]);
		else
			return cli_usage_error("report", "unknown argument "
					       "'%s'", argv[i]);
	}
	if (dbo.disabled)
		return cli_usage_error("report", "--no-db: a report needs the "
				       "database");
	if (o.format && strcmp(o.format, "png") && strcmp(o.format, "svg"))
		return cli_usage_error("report", "unknown format '%s' (png or "
				       "svg)", o.format);
	lm_error err;
	if (o.command && strcmp(o.command, "run") &&
	    strcmp(o.command, "diff") && strcmp(o.command, "fuzz"))
		return cli_usage_error("report", "--command '%s': run, diff or "
				       "fuzz", o.command);
	if (o.since && ldb_check_since(o.since, &err) != 0)
		return cli_usage_error("report", "--since '%s': give a UTC date "
				       "YYYY-MM-DD or a time "
				       "YYYY-MM-DDTHH:MM:SSZ", o.since);
	ldb *db = NULL;
	lr_report rep;
	if (ldb_open(&db, cli_db_path(&dbo), LDB_READ, &err) != 0 ||
	    lr_write(db, &o, &rep, &err) != 0) {
		ldb_close(db);
		return cli_report(&err);
	}
	const char *dir = o.out_dir ? o.out_dir : LR_DEFAULT_DIR;
	for (int i = 0; i < rep.n_images; i++)
		printf("%s/%s\n", dir, rep.images[i]);
	printf("%s/index.html: %d plot%s of run %lld\n", dir, rep.n_images,
	       rep.n_images == 1 ? "" : "s", (long long)rep.run_id);
	lr_report_free(&rep);
	ldb_close(db);
	return EXIT_OK;
}

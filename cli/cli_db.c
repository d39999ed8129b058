/*
** cli_db.c -- the --db / --no-db / LNCSIM_DB options and run logging
** shared by the commands (cli_db.h).
*/
#include "common.h"
#include "cli.h"
#include "cli_db.h"
#include "race_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
** Consume one run-log option.
*/
int cli_db_option(cli_db *o, const char *cmd, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--no-db")) {
		o->disabled = 1;
		return 1;
	}
	if (!strncmp(a, "--db=", 5)) {
		if (!a[5]) {
			cli_usage_error(cmd, "--db needs a FILE");
			return -1;
		}
		o->path = a + 5;
		return 1;
	}
	if (!strcmp(a, "--db")) {
		if (*i + 1 >= argc || !argv[*i + 1][0]) {
			cli_usage_error(cmd, "--db needs a FILE");
			return -1;
		}
		o->path = argv[++*i];
		return 1;
	}
	return 0;
}

/*
** The path the options select.
*/
const char *cli_db_path(const cli_db *o)
{
	if (o->disabled)
		return NULL;
	if (o->path && *o->path)
		return o->path;
	const char *env = getenv(LDB_ENV);
	if (env && *env)
		return env;
	return LDB_DEFAULT_PATH;
}

/*
** Open the selected database for logging.
*/
int cli_db_open(const cli_db *o, ldb **db)
{
	*db = NULL;
	const char *path = cli_db_path(o);
	if (!path)
		return 0;
	lm_error err;
	if (ldb_open(db, path, LDB_CREATE, &err) != 0) {
		fprintf(stderr, "lncsim: %s\n(use --no-db to run without the "
			"run log)\n", err.msg);
		return EXIT_INPUT;
	}
	return 0;
}

/*
** Join argv into one string, quoting arguments that need it.
*/
char *cli_db_cmdline(int argc, char **argv)
{
	lm_buf b = LM_BUF_INIT;
	lm_buf_puts(&b, "lncsim");
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		lm_buf_puts(&b, " ");
		if (*a && !strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;#~")) {
			lm_buf_puts(&b, a);
			continue;
		}
		lm_buf_puts(&b, "'");
		for (; *a; a++) {
			if (*a == '\'')
				lm_buf_puts(&b, "'\\''");
			else
				lm_buf_put(&b, a, 1);
		}
		lm_buf_puts(&b, "'");
	}
	return lm_buf_detach(&b);
}

/*
** Log one finished run with its executions and races, all or nothing.
*/
int cli_db_log(ldb *db, const ldb_run_info *info, int n,
	       const char *const *modes, const ls_result *const *results,
	       int races_checked,
	       const char *status, const char *message, double wall_seconds,
	       int64_t *run_id)
{
	if (!db)
		return 0;
	lm_error err;
	ldb_run *run = NULL;
	if (ldb_run_begin(db, info, &run, &err) != 0)
		goto fail;
	for (int i = 0; i < n; i++)
		if (results[i] && results[i]->n_cores > 0 &&
		    ldb_log_execution(run, modes[i], results[i], &err) != 0) {
			ldb_run_abort(run);
			goto fail;
		}
	for (int i = 0; races_checked && i < n; i++)
		if (results[i] &&
		    cli_log_races(run, modes[i], results[i], &err) != 0) {
			ldb_run_abort(run);
			goto fail;
		}
	if (ldb_run_end(run, status, message, wall_seconds, run_id, &err) != 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "lncsim: %s (run not logged)\n", err.msg);
	return err.code == LM_EINTERNAL ? EXIT_INTERNAL : EXIT_INPUT;
}

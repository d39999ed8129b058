/*
** cli_db.h -- the run-log options every command that runs something takes
** (`--db FILE`, `--no-db`, env LNCSIM_DB; default ./lncsim.db) and the
** helpers that open the database and log a finished run.
**
** Use in a command:
**     cli_db dbo = {0};
**     ... in the option loop:
**         int k = cli_db_option(&dbo, "run", argc, argv, &i);
**         if (k < 0) return EXIT_INPUT;   (usage error printed)
**         if (k > 0) continue;            (consumed, i advanced)
**     ldb *db = NULL;
**     if ((rc = cli_db_open(&dbo, &db)) != 0) return rc;  (db NULL: --no-db)
**     double t0 = lm_seconds();
**     ... simulate ...
**     rc2 = cli_db_log(db, &info, 1, modes, results, 0, status,
**                      msg, lm_seconds() - t0, NULL);
**     ldb_close(db);
*/
#ifndef LNCSIM_CLI_DB_H
#define LNCSIM_CLI_DB_H

#include "common.h"
#include "db.h"

typedef struct cli_db {
	const char *path;   /* --db FILE, or NULL */
	int disabled;       /* --no-db */
} cli_db;

/*
** If argv[*i] is `--db FILE`, `--db=FILE` or `--no-db`, record it and
** advance *i past its value: returns 1. Returns 0 for any other argument,
** -1 after printing a usage error (missing FILE).
*/
int cli_db_option(cli_db *o, const char *cmd, int argc, char **argv, int *i);
/* The database path: --db, else $LNCSIM_DB, else ./lncsim.db; NULL if
** --no-db. */
const char *cli_db_path(const cli_db *o);
/* Open (creating) the database; *db is NULL with --no-db. Returns 0 or
** the exit code after printing the error. */
int cli_db_open(const cli_db *o, ldb **db);
/* The command line as one string (arguments with spaces quoted); caller
** frees. */
char *cli_db_cmdline(int argc, char **argv);
/*
** Log a finished run in one transaction: n executions (modes[i],
** results[i]; a NULL result is skipped, a result of no core -- a failed
** run's, holding only the races it kept -- logs no execution), the races
** of each result when
** races_checked (the runs were made with the race detector on; 0: the
** run was not checked for races), then status/message/wall time.
** db NULL: nothing. Returns 0 or the exit code after printing "lncsim:
** FILE: ...: ... (run not logged)".
*/
int cli_db_log(ldb *db, const ldb_run_info *info, int n,
	       const char *const *modes, const ls_result *const *results,
	       int races_checked,
	       const char *status, const char *message, double wall_seconds,
	       int64_t *run_id);

#endif

/*
** race_out.h -- the race lines lncsim run, diff and fuzz print
** (docs/race.md).
*/
#ifndef LNCSIM_RACE_OUT_H
#define LNCSIM_RACE_OUT_H

#include <stdio.h>
#include "sim.h"

struct ldb_run;

/* The default of --race-limit: race lines printed (all are counted). */
#define CLI_RACE_LIMIT_DEFAULT 100

/*
** Print the races of r to f, at most limit lines (limit < 0: all), each
** "lncsim: race: " + ls_race_format, prefix (when non-NULL) before the
** kind ("reference: "), then "lncsim: N race(s) found" (with "(M
** printed)" when some were left out) when there is any. Returns the
** number found.
*/
int64_t cli_print_races(FILE *f, const ls_result *r, int64_t limit,
			const char *prefix);

struct ldb_race;
struct ldb_run;
/* The races of r as the run log takes them (r->n_races, the strings
** r's); caller frees the array. */
struct ldb_race *cli_ldb_races(const ls_result *r);
/* ldb_log_races of the races of r as execution mode of run. */
int cli_log_races(struct ldb_run *run, const char *mode, const ls_result *r,
		  lm_error *err);

#endif

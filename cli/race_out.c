/*
** race_out.c -- the race lines (race_out.h).
*/
#include "common.h"
#include "race_out.h"
#include "db.h"

#include <stdlib.h>

int64_t cli_print_races(FILE *f, const ls_result *r, int64_t limit,
			const char *prefix)
{
	int64_t n = r->races_found, shown = 0;
	lm_buf b = LM_BUF_INIT;
	for (int i = 0; i < r->n_races && (limit < 0 || shown < limit); i++) {
		lm_buf_free(&b);
		ls_race_format(&r->races[i], &b);
		fprintf(f, "lncsim: race: %s%s\n", prefix ? prefix : "",
			lm_buf_cstr(&b));
		shown++;
	}
	lm_buf_free(&b);
	if (n > 0) {
		fprintf(f, "lncsim: %s%lld race%s found", prefix ? prefix : "",
			(long long)n, n == 1 ? "" : "s");
		if (shown < n)
			fprintf(f, " (%lld printed, --race-limit)",
				(long long)shown);
		fprintf(f, "\n");
	}
	return n;
}

static void access_of(ldb_race_access *a, const char *func, const char *blk,
		      const char *inst, const char *iter, int64_t core,
		      const char *eng)
{
	a->function = func;
	a->block = blk;
	a->instr = inst;
	a->iteration = iter;
	a->core = (int)core;
	a->engine = eng;
}

ldb_race *cli_ldb_races(const ls_result *r)
{
	ldb_race *v = lm_xcalloc((size_t)r->n_races + 1, sizeof *v);
	for (int i = 0; i < r->n_races; i++) {
		const ls_race *x = &r->races[i];
		v[i].kind = x->kind;
		v[i].memory = x->memory;
		v[i].core = (int)x->core;
		v[i].object = x->object;
		v[i].lo = x->lo;
		v[i].hi = x->hi;
		access_of(&v[i].a, x->a_func, x->a_block, x->a_inst, x->a_iter,
			  x->a_core, x->a_engine);
		access_of(&v[i].b, x->b_func, x->b_block, x->b_inst, x->b_iter,
			  x->b_core, x->b_engine);
		v[i].common = x->last_common;
	}
	return v;
}

int cli_log_races(ldb_run *run, const char *mode, const ls_result *r,
		  lm_error *err)
{
	ldb_race *v = cli_ldb_races(r);
	int rc = ldb_log_races(run, mode, v, r->n_races, err);
	free(v);
	return rc;
}

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

int cli_log_races(struct ldb_run *run, const char *mode,
		  const ls_result *r, lm_error *err)
{
	ldb_race *v = NULL;
	int rc;
	if (r->n_races > 0)
		v = lm_xmalloc((size_t)r->n_races * sizeof *v);
	for (int i = 0; i < r->n_races; i++) {
		const ls_race *x = &r->races[i];
		v[i] = (ldb_race){
			.kind = x->kind, .memory = x->memory,
			.core = (int)x->core, .object = x->object,
			.lo = x->lo, .hi = x->hi,
			.a = { x->a_func, x->a_block, x->a_inst, x->a_iter,
			       (int)x->a_core, x->a_engine },
			.b = { x->b_func, x->b_block, x->b_inst, x->b_iter,
			       (int)x->b_core, x->b_engine },
			.common = x->last_common,
		};
	}
	rc = ldb_log_races(run, mode, v, r->n_races, err);
	free(v);
	return rc;
}

/*
** race_out.c -- the race lines (race_out.h).
*/
#include "common.h"
#include "race_out.h"

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

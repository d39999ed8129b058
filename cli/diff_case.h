/*
** diff_case.h -- one differential check, shared by `lncsim diff` and
** `lncsim fuzz`, one way through: link the verified per-core modules in
** memory trusting them (or take a given linked module), verify the result
** once (with the linker's verify step skipped too), check its tensor map,
** check both sides' memory, make the inputs, run both sides, compare.
*/
#ifndef LNCSIM_DIFF_CASE_H
#define LNCSIM_DIFF_CASE_H

#include "common.h"
#include "diff.h"

typedef struct diff_case {
	/* in */
	unsigned skip;            /* linker steps switched off */
	int schedules;
	ls_options run;
	const char *inputs_dir;   /* NULL: generate from seed */
	uint64_t seed;
	const lm_fileset *files;  /* the modules' Const files in memory (the
				     link and both runs read them there), or
				     NULL: on disk beside the modules */
	/* out (free with diff_case_free) */
	lm_module *linked;
	lm_module **refs;         /* a modular link's reference: one module
				     per instance (lk_instance_modules) */
	int n_refs;
	ls_tensors inputs;
	ls_diff_result res;
	int failed;               /* the check failed */
	char kind[32];            /* link, verifier, mismatch, output-set,
				     reference-error, linked-error,
				     reference-race, linked-race (run.race) */
	char message[1200];
} diff_case;

/*
** Run the check on mods, which have passed lm_verify (the link does not
** verify them again). given: a linked module to use (taken: the case
** owns it from here, diff_case_free frees it), or NULL to link here.
** Returns 0 when the check ran (dc->failed tells the verdict), or
** LM_EINPUT with err filled for bad input.
*/
int diff_case_run(diff_case *dc, lm_module *const *mods, int n,
		  lm_module *given, lm_error *err);
void diff_case_free(diff_case *dc);

/*
** What the run log keeps of a check that ran: its executions, at most two
** (modes[i] "reference" or "linked", res[i] borrowed from dc; returns
** how many), and of the comparisons those of the plain schedule
** (diff_case_logs_tensor). diff_case_log stores these, and `fuzz` sends
** the same in its result records.
*/
int diff_case_executions(const diff_case *dc, const char *modes[2],
			 const ls_result *res[2]);
int diff_case_logs_tensor(const ls_tensor_cmp *c);

struct ldb;
struct ldb_run_info;
/*
** Log the case as one run (status pass / fail, both executions, one row
** per compared tensor of the plain schedule). error non-NULL: the command
** failed, status error with this message; dc (NULL: the check did not
** run) still gives the executions and tensors that were compared. db
** NULL: nothing.
*/
int diff_case_log(struct ldb *db, const struct ldb_run_info *info,
		  const diff_case *dc, const char *error, double wall_seconds,
		  lm_error *err);

#endif

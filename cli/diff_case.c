/*
** diff_case.c -- one differential check (see diff_case.h).
*/
#include "common.h"
#include "diff_case.h"
#include "race_out.h"
#include "db.h"
#include "linker.h"
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Mark the case failed with a kind and a message. */
static void fail(diff_case *dc, const char *kind, const char *msg)
{
	dc->failed = 1;
	snprintf(dc->kind, sizeof dc->kind, "%s", kind);
	snprintf(dc->message, sizeof dc->message, "%s", msg);
}


/*
** A race in either run of the plain schedule fails the case, of kind
** reference-race or linked-race; the message names the first race
** (ls_race_format) and the count.
*/
static void race_verdict(diff_case *dc)
{
	const ls_result *r[2] = { &dc->res.ref, &dc->res.linked };
	static const char *const kind[2] = { "reference-race", "linked-race" };
	for (int i = 0; i < 2; i++) {
		lm_buf b = LM_BUF_INIT;
		if (r[i]->races_found == 0 || r[i]->n_races == 0)
			continue;
		lm_buf_printf(&b, "%s run: %lld race%s, first: ",
			      i ? "linked" : "reference",
			      (long long)r[i]->races_found,
			      r[i]->races_found == 1 ? "" : "s");
		ls_race_format(&r[i]->races[0], &b);
		fail(dc, kind[i], lm_buf_cstr(&b));
		lm_buf_free(&b);
		return;
	}
}

/* The linker's tensor-map entries as the check's plain ones (borrowed). */
static ls_tmap_entry *plain_entries(const lk_tensor_entry *t, int n)
{
	ls_tmap_entry *e = lm_xcalloc((size_t)n + 1, sizeof *e);
	for (int i = 0; i < n; i++) {
		e[i].name = t[i].allocation ? t[i].allocation
			: t[i].layer_name;
		e[i].is_output = t[i].is_output;
		e[i].n_shape = t[i].n_shape;
		e[i].shape = t[i].sim_shape;
	}
	return e;
}

/*
** The tensor-map.json beside a given linked module: 1 with *t, *n filled
** (free with lk_tensor_entries_free), 0 when there is no such file (a
** --linked module need not have one), -1 with msg saying why when it is
** there but cannot be read or is not a tensor map.
*/
static int map_beside(const lm_module *given, lk_tensor_entry **t, int *n,
		      char *msg, size_t len)
{
	char *p = lm_path_join(given->dir, "tensor-map.json");
	struct stat st;
	lm_error err;
	int rc = 1;
	if (lstat(p, &st) != 0 && errno == ENOENT)
		rc = 0;
	else if (lk_tensor_map_read(p, t, n, &err)) {
		snprintf(msg, len, "tensor-map: %.1000s", err.msg);
		rc = -1;
	}
	free(p);
	return rc;
}

int diff_case_run(diff_case *dc, lm_module *const *mods, int n,
		  lm_module *given, lm_error *err)
{
	char buf[1200];
	lk_tensor_entry *read_tm = NULL;
	const lk_tensor_entry *tm = NULL;
	int n_tm = 0, n_read = 0, has_tm = 0;
	lk_report rep;
	memset(&rep, 0, sizeof rep);
	int verified = 0;  /* the linked module passed lm_verify */
	dc->failed = 0;
	dc->kind[0] = dc->message[0] = 0;
	if (given) {
		dc->linked = given;
		has_tm = map_beside(given, &read_tm, &n_read, buf, sizeof buf);
		if (has_tm < 0)
			fail(dc, "tensor-map", buf);
		tm = read_tm;
		n_tm = n_read;
	} else {
		lk_options lo;
		memset(&lo, 0, sizeof lo);
		lo.skip = dc->skip;
		lo.abs_file_paths = 1;
		lo.trust_inputs = 1;
		lo.files = dc->files;
		int rc = lk_link(mods, n, &lo, &dc->linked, &rep, err);
		if (rc == LM_EINPUT) {
			lk_report_free(&rep);
			return rc;
		}
		if (rc) {
			snprintf(buf, sizeof buf, "link failed: %.1100s", err->msg);
			fail(dc, "link", buf);
		} else {
			tm = rep.tensors;
			n_tm = rep.n_tensors;
			has_tm = 1;
			/* the link's last step verified it, unless skipped */
			verified = (rep.ran & LK_SKIP(LK_STEP_VERIFY)) != 0;
		}
	}
	/* the checker's own verification: it runs even when the linker's
	   verify step is switched off (the simulator relies on a verified
	   module), never twice */
	if (!dc->failed && !verified) {
		lm_verify_opts vo = {1};
		if (lm_verify(dc->linked, &vo, err)) {
			snprintf(buf, sizeof buf,
				 "verifier: the linked module is invalid: %.1100s",
				 err->msg);
			fail(dc, "verifier", buf);
		}
	}
	if (!dc->failed && has_tm > 0) {
		ls_tmap_entry *e = plain_entries(tm, n_tm);
		if (ls_check_tensor_map(dc->linked, e, n_tm, buf, sizeof buf))
			fail(dc, "tensor-map", buf);
		free(e);
	}
	lk_tensor_entries_free(read_tm, n_read);
	lk_report_free(&rep);
	/* a modular link is held against its instances, each its
	   definition's module on the instance's core with its own tensors
	   (a set held in memory has no netlist: lk_link reads none) */
	if (!dc->files &&
	    lk_instance_modules(mods, n, &dc->refs, &dc->n_refs, err))
		return LM_EINPUT;
	if (dc->n_refs > 0) {
		mods = dc->refs;
		n = dc->n_refs;
	}
	/* each side's one memory check (ls_diff does not check again): the
	   inputs are part of a run's memory, so before they exist */
	if (ls_check_memory_race(mods, n, dc->run.max_memory, dc->run.race,
				 err) ||
	    (dc->linked && ls_check_memory_race(&dc->linked, 1,
						dc->run.max_memory,
						dc->run.race, err)))
		return LM_EINPUT;
	if (ls_make_inputs(mods, n, dc->inputs_dir, dc->seed, &dc->inputs, err))
		return LM_EINPUT;
	if (dc->failed)
		return 0;
	ls_diff_opts o;
	memset(&o, 0, sizeof o);
	o.schedules = dc->schedules;
	o.run = dc->run;
	o.run.files = dc->files;
	o.run.keep_races = dc->run.race;
	if (ls_diff(mods, n, dc->linked, &dc->inputs, &o, &dc->res, err))
		return LM_EINPUT;
	static const char *const kinds[] = {
		"pass", "mismatch", "output-set", "reference-error", "linked-error"
	};
	if (dc->res.status != LS_DIFF_PASS)
		fail(dc, kinds[dc->res.status], dc->res.message);
	else if (dc->run.race)
		race_verdict(dc);
	return 0;
}

void diff_case_free(diff_case *dc)
{
	lm_module_free(dc->linked);
	dc->linked = NULL;
	for (int i = 0; i < dc->n_refs; i++)
		lm_module_free(dc->refs[i]);
	free(dc->refs);
	dc->refs = NULL;
	dc->n_refs = 0;
	ls_tensors_free(&dc->inputs);
	ls_diff_result_free(&dc->res);
}

int diff_case_executions(const diff_case *dc, const char *modes[2],
			 const ls_result *res[2])
{
	const ls_diff_result *r = &dc->res;
	int n = 0;
	if (r->schedules_run || r->ref.n_cores) {
		modes[n] = "reference";
		res[n++] = &r->ref;
	}
	if (r->linked.n_cores) {
		modes[n] = "linked";
		res[n++] = &r->linked;
	}
	return n;
}

int diff_case_logs_tensor(const ls_tensor_cmp *c)
{
	return c->schedule == 0;
}

int diff_case_log(ldb *db, const ldb_run_info *info, const diff_case *dc,
		  const char *error, double wall_seconds, lm_error *err)
{
	if (!db)
		return 0;
	ldb_run *run = NULL;
	int rc = ldb_run_begin(db, info, &run, err);
	if (rc)
		return rc;
	if (!dc)
		return ldb_run_end(run, "error", error ? error : "", wall_seconds,
				   NULL, err);
	const ls_diff_result *r = &dc->res;
	const char *modes[2];
	const ls_result *res[2];
	int n = diff_case_executions(dc, modes, res);
	for (int i = 0; !rc && i < n; i++)
		rc = ldb_log_execution(run, modes[i], res[i], err);
	for (int i = 0; !rc && dc->run.race && i < n; i++)
		rc = cli_log_races(run, modes[i], res[i], err);
	/* a run that failed after races were found: no execution, its races */
	if (!rc && dc->run.race && !r->ref.n_cores && r->ref.races_found)
		rc = cli_log_races(run, "reference", &r->ref, err);
	if (!rc && dc->run.race && !r->linked.n_cores && r->linked.races_found)
		rc = cli_log_races(run, "linked", &r->linked, err);
	for (int i = 0; !rc && i < r->n_cmp; i++)
		if (diff_case_logs_tensor(&r->cmp[i]))
			rc = ldb_log_tensor(run, r->cmp[i].name, r->cmp[i].equal,
					    r->cmp[i].mismatches,
					    r->cmp[i].first_index,
					    r->cmp[i].max_abs_diff, err);
	if (rc) {
		ldb_run_abort(run);
		return rc;
	}
	if (error)
		return ldb_run_end(run, "error", error, wall_seconds, NULL, err);
	return ldb_run_end(run, dc->failed ? "fail" : "pass",
			   dc->failed ? dc->message : "", wall_seconds, NULL, err);
}

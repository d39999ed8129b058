/*
** diff_case.c -- one differential check (see diff_case.h).
*/
#include "common.h"
#include "diff_case.h"
#include "db.h"
#include "linker.h"
#include "verify.h"

#include <cjson/cJSON.h>
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


/* One tensor-map entry as the check needs it. */
typedef struct tm_entry {
	const char *name;
	int is_output;
	int n_shape;
	int64_t shape[8];
	int used;
} tm_entry;

/*
** The tensor map must bind the linked module's host I/O exactly: every
** ExternalInput / ExternalOutput allocation has exactly one entry of the
** same direction and shape, and every entry names such an allocation.
** Returns 0 or writes the problem into msg.
*/
static int check_tensor_map(const lm_module *m, tm_entry *e, int n, char *msg,
			    size_t len)
{
	for (int f = 0; f < m->n_functions; f++)
		for (int a = 0; a < m->functions[f].n_allocs; a++) {
			const lm_alloc *al = &m->functions[f].allocs[a];
			int in = lm_tensorkind_is_ext_input(al->kind);
			int out = lm_tensorkind_is_ext_output(al->kind);
			if (!in && !out)
				continue;
			int hits = 0;
			for (int i = 0; i < n; i++) {
				if (strcmp(e[i].name, al->name))
					continue;
				hits++;
				e[i].used = 1;
				int same = e[i].is_output == out &&
					   e[i].n_shape == al->n_shape;
				for (int k = 0; same && k < al->n_shape && k < 8; k++)
					same = e[i].shape[k] == al->tensor_shape[k];
				if (!same) {
					snprintf(msg, len, "tensor-map: entry '%s' does "
						 "not match the allocation (direction or "
						 "shape)", al->name);
					return -1;
				}
			}
			if (hits != 1) {
				snprintf(msg, len, "tensor-map: external %s '%s' has %d "
					 "tensor-map entries (need exactly 1)",
					 out ? "output" : "input", al->name, hits);
				return -1;
			}
		}
	for (int i = 0; i < n; i++)
		if (!e[i].used) {
			snprintf(msg, len, "tensor-map: entry '%s' names no external "
				 "allocation of the linked module", e[i].name);
			return -1;
		}
	return 0;
}

/* Entries from the linker's report. */
static tm_entry *entries_from_report(const lk_report *r, int *n)
{
	tm_entry *e = lm_xcalloc((size_t)r->n_tensors + 1, sizeof *e);
	for (int i = 0; i < r->n_tensors; i++) {
		e[i].name = r->tensors[i].layer_name;
		e[i].is_output = r->tensors[i].is_output;
		e[i].n_shape = r->tensors[i].n_shape;
		for (int k = 0; k < r->tensors[i].n_shape && k < 8; k++)
			e[i].shape[k] = r->tensors[i].sim_shape[k];
	}
	*n = r->n_tensors;
	return e;
}

/*
** Entries from the tensor-map.json at path. NULL with msg empty when there
** is no such file (a --linked module need not have one); NULL with msg
** saying why when the file is there but cannot be read or is not a tensor
** map.
*/
static tm_entry *entries_from_file(const char *path, cJSON **keep, int *n,
				   char *msg, size_t len)
{
	char *text;
	size_t tlen;
	lm_error err;
	struct stat st;
	msg[0] = 0;
	if (lstat(path, &st) != 0 && errno == ENOENT)
		return NULL;
	if (lm_read_file(path, &text, &tlen, &err)) {
		snprintf(msg, len, "tensor-map: %.1000s", err.msg);
		return NULL;
	}
	cJSON *j = cJSON_ParseWithLengthOpts(text, tlen, NULL, 0);
	free(text);
	cJSON *ts = j ? cJSON_GetObjectItemCaseSensitive(j, "tensors") : NULL;
	if (!cJSON_IsArray(ts)) {
		cJSON_Delete(j);
		snprintf(msg, len, "tensor-map: %.900s: %s", path, j ?
			 "no \"tensors\" array" : "malformed JSON");
		return NULL;
	}
	int cnt = cJSON_GetArraySize(ts), i = 0;
	tm_entry *e = lm_xcalloc((size_t)cnt + 1, sizeof *e);
	for (cJSON *t = ts->child; t; t = t->next, i++) {
		cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "layer_name");
		cJSON *kd = cJSON_GetObjectItemCaseSensitive(t, "kind");
		cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "sim_shape");
		e[i].name = cJSON_IsString(nm) ? nm->valuestring : "";
		e[i].is_output = cJSON_IsString(kd) && !strcmp(kd->valuestring,
							       "output");
		for (cJSON *d = cJSON_IsArray(sh) ? sh->child : NULL;
		     d && e[i].n_shape < 8; d = d->next) {
			double v = cJSON_IsNumber(d) ? d->valuedouble : -1;
			if (!(v >= 0 && v <= 9007199254740992.0) ||
			    v != (double)(int64_t)v) {
				snprintf(msg, len, "tensor-map: %.900s: entry "
					 "'%.200s': sim_shape must hold whole "
					 "numbers >= 0", path, e[i].name);
				free(e);
				cJSON_Delete(j);
				return NULL;
			}
			e[i].shape[e[i].n_shape++] = (int64_t)v;
		}
	}
	*keep = j;
	*n = cnt;
	return e;
}

int diff_case_run(diff_case *dc, lm_module *const *mods, int n,
		  const lm_module *given, lm_error *err)
{
	char buf[1200];
	tm_entry *tm = NULL;
	cJSON *tm_json = NULL;
	int n_tm = 0;
	lk_report rep;
	memset(&rep, 0, sizeof rep);
	dc->failed = 0;
	dc->kind[0] = dc->message[0] = 0;
	if (given) {
		dc->linked = lm_module_clone(given);
		char *p = lm_path_join(given->dir, "tensor-map.json");
		tm = entries_from_file(p, &tm_json, &n_tm, buf, sizeof buf);
		free(p);
		if (!tm && buf[0])
			fail(dc, "tensor-map", buf);
	} else {
		lk_options lo;
		memset(&lo, 0, sizeof lo);
		lo.skip = dc->skip;
		lo.abs_file_paths = 1;
		int rc = lk_link(mods, n, &lo, &dc->linked, &rep, err);
		if (rc == LM_EINPUT) {
			lk_report_free(&rep);
			return rc;
		}
		if (rc) {
			snprintf(buf, sizeof buf, "link failed: %.1100s", err->msg);
			fail(dc, "link", buf);
		} else {
			tm = entries_from_report(&rep, &n_tm);
		}
	}
	if (!dc->failed) {
		lm_verify_opts vo = {1};
		if (lm_verify(dc->linked, &vo, err)) {
			snprintf(buf, sizeof buf,
				 "verifier: the linked module is invalid: %.1100s",
				 err->msg);
			fail(dc, "verifier", buf);
		}
	}
	if (!dc->failed && tm &&
	    check_tensor_map(dc->linked, tm, n_tm, buf, sizeof buf))
		fail(dc, "tensor-map", buf);
	free(tm);
	cJSON_Delete(tm_json);
	lk_report_free(&rep);
	/* the inputs are part of a run's memory: checked before they exist */
	if (ls_check_memory(mods, n, dc->run.max_memory, err) ||
	    (dc->linked && ls_check_memory(&dc->linked, 1, dc->run.max_memory,
					   err)))
		return LM_EINPUT;
	if (ls_make_inputs(mods, n, dc->inputs_dir, dc->seed, &dc->inputs, err))
		return LM_EINPUT;
	if (dc->failed)
		return 0;
	ls_diff_opts o;
	memset(&o, 0, sizeof o);
	o.schedules = dc->schedules;
	o.run = dc->run;
	if (ls_diff(mods, n, dc->linked, &dc->inputs, &o, &dc->res, err))
		return LM_EINPUT;
	static const char *const kinds[] = {
		"pass", "mismatch", "output-set", "reference-error", "linked-error"
	};
	if (dc->res.status != LS_DIFF_PASS)
		fail(dc, kinds[dc->res.status], dc->res.message);
	return 0;
}

void diff_case_free(diff_case *dc)
{
	lm_module_free(dc->linked);
	dc->linked = NULL;
	ls_tensors_free(&dc->inputs);
	ls_diff_result_free(&dc->res);
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
	if (r->schedules_run || r->ref.n_cores)
		rc = ldb_log_execution(run, "reference", &r->ref, err);
	if (!rc && r->linked.n_cores)
		rc = ldb_log_execution(run, "linked", &r->linked, err);
	for (int i = 0; !rc && i < r->n_cmp; i++)
		if (r->cmp[i].schedule == 0)
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

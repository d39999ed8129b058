/*
** fuzz_case.c -- one case of a fuzz campaign, in the process that runs
** it: generate in memory (ls_gen verifies the modules; the link trusts
** them), check as `diff` does, keep a failing case on disk with its
** REPRO when asked, and fill the result record (fuzz.h).
*/
#define _XOPEN_SOURCE 700
#include "common.h"
#include "fuzz.h"
#include "diff_case.h"
#include "safeio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How many names "case-<seed>", "case-<seed>.2", ... a kept case tries. */
#define MAX_CASE_NAMES 1000

/*
** The directory of kept case s: "case-<s>" beneath --keep-failures DIR,
** or "case-<s>.<k>" (k = 2, 3, ...) when that name is taken -- whatever
** holds a name (the user's directory, a file, a symlink) is never reused,
** replaced or followed. *rootfd: DIR (caller closes), *name the entry in
** it (caller frees), *fd the case directory opened without following
** symlinks (caller closes).
*/
static int make_case_dir(const char *r, uint64_t s, int *rootfd, char **name,
			 int *fd, lm_error *err)
{
	int rc = 0;
	*fd = -1;
	*rootfd = open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*rootfd < 0)
		return lm_err(err, r, "", "cannot open directory: %s",
			      strerror(errno));
	/* made already (fz_case_dir): only opened */
	for (int k = 1; k <= MAX_CASE_NAMES && !*name; k++) {
		char *nm = k == 1
			? lm_xasprintf("case-%llu", (unsigned long long)s)
			: lm_xasprintf("case-%llu.%d", (unsigned long long)s, k);
		if (mkdirat(*rootfd, nm, 0755) == 0) {
			*name = nm;
			break;
		}
		int e = errno;
		if (e != EEXIST) {
			char *w = lm_path_join(r, nm);
			rc = lm_err(err, w, "", "cannot create directory: %s",
				    strerror(e));
			free(w);
			free(nm);
			return rc;
		}
		free(nm);
	}
	if (!*name) {
		char *w = lm_xasprintf("%s/case-%llu", r, (unsigned long long)s);
		rc = lm_err(err, w, "", "this name and its numbered "
			    "alternatives up to .%d are taken", MAX_CASE_NAMES);
		free(w);
		return rc;
	}
	return lm_dir_open_beneath(fd, *rootfd, r, *name, 0, NULL, err);
}

static char *sdup(const char *s)
{
	return lm_xstrdup(s ? s : "");
}

/* The first FZ_RECORD_RACES races of a run and their total count. */
static void copy_races(ls_result *to, const ls_result *from)
{
	int n = from->n_races < FZ_RECORD_RACES ? from->n_races
						: FZ_RECORD_RACES;
	to->races_found = from->races_found;
	to->n_races = n;
	to->races = n ? lm_xcalloc((size_t)n, sizeof *to->races) : NULL;
	for (int i = 0; i < n; i++) {
		const ls_race *x = &from->races[i];
		ls_race *y = &to->races[i];
		*y = *x;
		y->kind = sdup(x->kind);
		y->memory = sdup(x->memory);
		y->object = sdup(x->object);
		y->a_func = sdup(x->a_func);
		y->a_block = sdup(x->a_block);
		y->a_inst = sdup(x->a_inst);
		y->a_iter = sdup(x->a_iter);
		y->a_engine = sdup(x->a_engine);
		y->b_func = sdup(x->b_func);
		y->b_block = sdup(x->b_block);
		y->b_inst = sdup(x->b_inst);
		y->b_iter = sdup(x->b_iter);
		y->b_engine = sdup(x->b_engine);
		y->last_common = sdup(x->last_common);
	}
}

/* A copy of the statistics, matmuls and races of a run (not its
** outputs). */
static void copy_result(ls_result *to, const ls_result *from)
{
	memset(to, 0, sizeof *to);
	to->n_cores = from->n_cores;
	to->sim_time_ps = from->sim_time_ps;
	to->instructions = from->instructions;
	if (from->n_cores) {
		to->cores = lm_xcalloc((size_t)from->n_cores, sizeof *to->cores);
		memcpy(to->cores, from->cores,
		       (size_t)from->n_cores * sizeof *to->cores);
	}
	to->n_matmuls = from->n_matmuls;
	if (from->n_matmuls) {
		to->matmuls = lm_xcalloc((size_t)from->n_matmuls,
					 sizeof *to->matmuls);
		for (int i = 0; i < from->n_matmuls; i++) {
			to->matmuls[i] = from->matmuls[i];
			to->matmuls[i].name = lm_xstrdup(from->matmuls[i].name
							 ? from->matmuls[i].name
							 : "");
		}
	}
}

/* The executions and tensors of a check that ran, into the record. */
static void take_results(fz_record *r, const diff_case *dc)
{
	const char *modes[2];
	const ls_result *res[2];
	int n = diff_case_executions(dc, modes, res);
	for (int i = 0; i < n; i++) {
		snprintf(r->exec[i].mode, sizeof r->exec[i].mode, "%s", modes[i]);
		copy_result(&r->exec[i].r, res[i]);
		r->exec[i].race = dc->run.race;
		if (dc->run.race)
			copy_races(&r->exec[i].r, res[i]);
	}
	r->n_exec = n;
	const ls_diff_result *d = &dc->res;
	r->tensors = d->n_cmp ? lm_xcalloc((size_t)d->n_cmp,
					   sizeof *r->tensors) : NULL;
	for (int i = 0; i < d->n_cmp; i++) {
		const ls_tensor_cmp *c = &d->cmp[i];
		if (!diff_case_logs_tensor(c))
			continue;
		fz_tensor *t = &r->tensors[r->n_tensors++];
		t->name = lm_xstrdup(c->name);
		t->equal = c->equal;
		t->mismatches = c->mismatches;
		t->first_index = c->first_index;
		t->max_abs_diff = c->max_abs_diff;
	}
}

/* msg with every "dir/" taken out, so a kept case's signature is that of
** the same case not kept (caller frees). */
static char *without_dir(const char *msg, const char *dir)
{
	if (!dir)
		return lm_xstrdup(msg);
	char *pre = lm_xasprintf("%s/", dir);
	size_t k = strlen(pre);
	lm_buf b = LM_BUF_INIT;
	for (const char *p = msg; *p;) {
		if (!strncmp(p, pre, k)) {
			p += k;
			continue;
		}
		lm_buf_put(&b, p, 1);
		p++;
	}
	lm_buf_put(&b, "", 0);
	free(pre);
	return lm_buf_detach(&b);
}

/* The signature of the case's failure (kind, message set). */
static void sign(fz_record *r, const diff_case *dc, const char *dir)
{
	const char *tensor = NULL;
	int64_t first = -1, mism = 0, count = 0;
	if (dc && !strcmp(r->kind, "mismatch"))
		for (int i = 0; i < dc->res.n_cmp; i++) {
			const ls_tensor_cmp *c = &dc->res.cmp[i];
			if (c->equal)
				continue;
			const ls_tensor *t = ls_tensors_find(&dc->res.ref.outputs,
							     c->name);
			tensor = c->name;
			first = c->first_index;
			mism = c->mismatches;
			count = t ? t->count : 0;
			break;
		}
	char *msg = without_dir(r->message, dir);
	free(r->signature);
	r->signature = fz_signature(r->kind, msg, tensor, first, mism, count);
	free(msg);
}

/* Write the kept case: the generated set and REPRO. */
static int keep_case(const fz_config *c, uint64_t s, lm_module **mods, int n,
		     const ls_gen_file *files, int n_files, int casefd,
		     const char *dir, lm_error *err)
{
	char *skip = fz_skip_option(c);
	lm_buf b = LM_BUF_INIT;
	lm_buf_puts(&b, "lncsim diff");
	if (*skip)
		lm_buf_printf(&b, " %s", skip);
	if (c->schedules)
		lm_buf_printf(&b, " --schedules %d", c->schedules);
	if (c->race)
		lm_buf_puts(&b, " --race");
	lm_buf_printf(&b, " --seed %llu %s/gen%llu\n", (unsigned long long)s,
		      dir, (unsigned long long)s);
	char *line = lm_buf_detach(&b);
	int rc = 0;
	if ((n && ls_gen_save_at(mods, n, files, n_files, casefd, dir, err)) ||
	    lm_write_at(casefd, dir, "REPRO", line, strlen(line), 0644, err))
		rc = LM_EINPUT;
	free(line);
	free(skip);
	return rc;
}

int fz_case_dir(const fz_config *c, uint64_t s, char **name, lm_error *err)
{
	int rootfd = -1, fd = -1;
	*name = NULL;
	int rc = make_case_dir(c->keep, s, &rootfd, name, &fd, err);
	if (fd >= 0)
		close(fd);
	if (rootfd >= 0)
		close(rootfd);
	if (rc) {
		free(*name);
		*name = NULL;
	}
	return rc;
}

void fz_case_run(const fz_config *c, uint64_t s, fz_record *r,
		 const char *made)
{
	lm_error err;
	int cores = fz_case_cores(c, s);
	int rootfd = -1, casefd = -1, kept = 0, n = 0, n_files = 0;
	char *name = NULL, *dir = NULL, *opts = fz_gen_options(c);
	ls_gen_opts go = {cores, s, c->size, NULL, NULL, 0, 0, 0, 0, 0};
	fz_case_form(c, s, &go.loops, &go.dynamic, &go.sync);
	go.compute = c->compute && go.sync == LS_GEN_SYNC_DEPS;
	go.by_name = c->by_name;
	lm_module **mods = NULL;
	ls_gen_file *files = NULL;
	lm_fileset fs;
	diff_case dc;
	int ran = 0;

	fz_record_init(r);
	r->seed = s;
	r->cores = cores;
	r->started = (int64_t)time(NULL);
	fz_record_set(&r->gen_options, opts);
	free(opts);
	lm_fileset_init(&fs);
	memset(&dc, 0, sizeof dc);
	err.msg[0] = 0;
	double t0 = lm_seconds();
	r->status = FZ_ERROR;
	if (c->keep[0]) {
		name = made ? lm_xstrdup(made) : NULL;
		if (make_case_dir(c->keep, s, &rootfd, &name, &casefd, &err))
			goto out;
		dir = lm_path_join(c->keep, name);
	}
	/* without --keep-failures the set is named as `lncsim gen` would
	   write it here; nothing is written */
	if (ls_gen(&go, dir, &mods, &files, &n_files, &err))
		goto out;
	n = cores;
	if (n && mods[0]->arch)
		fz_record_set(&r->arch, mods[0]->arch);
	ls_gen_fileset(files, n_files, dir, &fs);
	dc.skip = c->skip;
	dc.schedules = c->schedules;
	dc.run.race = c->race;
	dc.seed = s;
	dc.files = &fs;
	if (diff_case_run(&dc, mods, n, NULL, &err))
		goto out;
	ran = 1;
	r->status = dc.failed ? FZ_FAIL : FZ_PASS;
out:
	if (c->keep[0] && casefd >= 0 && r->status != FZ_PASS) {
		lm_error werr;
		kept = 1;
		if (keep_case(c, s, mods, n, files, n_files, casefd, dir,
			      &werr)) {
			if (r->status == FZ_ERROR) {
				size_t k = strlen(err.msg);
				snprintf(err.msg + k, sizeof err.msg - k,
					 " (and %s)", werr.msg);
			} else {
				err = werr;
				r->status = FZ_ERROR;
				ran = 0;
			}
		}
	}
	if (r->status == FZ_ERROR) {
		fz_record_set(&r->kind, "error");
		fz_record_set(&r->message, err.msg);
	} else if (r->status == FZ_FAIL) {
		fz_record_set(&r->kind, dc.kind);
		fz_record_set(&r->message, dc.message);
	}
	/* a check that ran keeps its executions and tensors (as `diff` logs
	   them); an error keeps none */
	if (ran)
		take_results(r, &dc);
	if (r->status != FZ_PASS)
		sign(r, ran ? &dc : NULL, dir);
	if (kept)
		fz_record_set(&r->kept, dir);
	r->wall = lm_seconds() - t0;
	diff_case_free(&dc);
	for (int i = 0; i < n; i++)
		lm_module_free(mods[i]);
	free(mods);
	ls_gen_files_free(files, n_files);
	lm_fileset_free(&fs);
	if (casefd >= 0)
		close(casefd);
	if (name && !kept)
		lm_remove_tree_at(rootfd, name);
	if (rootfd >= 0)
		close(rootfd);
	free(name);
	free(dir);
}

/* Whether name is "case-<digits>" or "case-<digits>.<digits>". */
static int case_name(const char *name)
{
	const char *p = name;
	if (strncmp(p, "case-", 5))
		return 0;
	p += 5;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == 0;
}

int fz_kept_remove(const char *keep, const char *path, lm_error *err)
{
	/* path is what lm_path_join(keep, name) made of the case's name */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char *again = case_name(base) ? lm_path_join(keep, base) : NULL;
	int same = again && !strcmp(again, path);
	free(again);
	if (!*keep || !same)
		return lm_err(err, path, "", "not a kept case of %s: left alone",
			      keep);
	int rootfd = open(keep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return lm_err(err, keep, "", "cannot open directory: %s",
			      strerror(errno));
	int rc = lm_remove_tree_at(rootfd, base);
	int e = errno;
	close(rootfd);
	if (rc)
		return lm_err(err, path, "", "cannot remove: %s", strerror(e));
	return 0;
}

/*
** cmd_diff.c -- `lncsim diff`: link the per-core modules in memory (or take
** --linked FILE), run the reference and the linked module with the same
** inputs, compare bit for bit, log the run.
*/
#include "common.h"
#include "cli.h"
#include "cli_db.h"
#include "diff_case.h"
#include "linker.h"
#include "verify.h"
#include "safeio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include "race_out.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char usage_diff[] =
	"usage: lncsim diff [--inputs DIR | --seed N] [--linked FILE]\n"
	"                   [--schedules K] [--save-io DIR] [--skip=STEP,...]\n"
	"                   [--max-time PS] [--max-instructions N]\n"
	"                   [--max-memory BYTES] [--race [--race-limit N]] [-q]\n"
	"                   [--db FILE | --no-db] MODULE...\n\n"
	"Differential check of the linker: the per-core modules run side by\n"
	"side on an N-core machine (the reference) and the linked module run\n"
	"with the same host inputs must produce exactly the reference's\n"
	"external outputs minus the cross-core hand-offs, bit for bit.\n\n"
	"  --inputs DIR      host inputs as DIR/<name>.npy ('/' in a name\n"
	"                    as %2F, '%' as %25)\n"
	"  --seed N          generate inputs from seed N, as 'lncsim run' does\n"
	"                    (default 0)\n"
	"  --linked FILE     compare against this linked module instead of\n"
	"                    linking in memory\n"
	"  --schedules K     repeat both runs under K perturbed cost models\n"
	"                    (the reference schedule + K perturbed); every\n"
	"                    schedule must give the same bits\n"
	"  --save-io DIR     write inputs/, reference/, linked/ (.npy) and the\n"
	"                    linked module linked.json into DIR\n"
	"  --skip=STEPS      link with these linker steps switched off (to test\n"
	"                    the checker; see 'lncsim link --help'). With\n"
	"                    verify off the checker verifies the linked module\n"
	"                    itself: nothing unverified is ever run\n"
	"  --max-time PS, --max-instructions N   bound each run\n"
	"                    (instructions: default 1000000000; 0: no limit)\n"
	"  --max-memory BYTES  simulated memory of each run (suffix K, M, G,\n"
	"                    T; default 4G)\n"
	"  --race            detect data races in both runs of the plain\n"
	"                    schedule (docs/race.md): one line per race; a\n"
	"                    race fails the check\n"
	"  --race-limit N    print at most N race lines per run (default\n"
	"                    100; all are counted)\n"
	"  -q                print only failures\n"
	"  --db FILE, --no-db  run log (default ./lncsim.db or $LNCSIM_DB)\n\n"
	"exit status: 0 pass, 1 the check failed (mismatch, output set, a run\n"
	"error, a linked module that fails the verifier, a race), 2 bad input\n";


/* Write ts into dir/name, a plain directory beneath dir (made when
** missing; a symlink there is refused), without following symlinks. */
static int save_set(const char *dir, const char *name, const ls_tensors *ts,
		    lm_error *err)
{
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, rc;
	char *path;
	if (root < 0)
		return lm_err(err, dir, "", "cannot open directory: %s",
			      strerror(errno));
	rc = lm_dir_open_beneath(&fd, root, dir, name, 1, NULL, err);
	close(root);
	if (rc)
		return rc;
	path = lm_path_join(dir, name);
	rc = ls_write_outputs_at(fd, path, ts, err);
	free(path);
	close(fd);
	return rc;
}

/* Write the run's inputs, both output sets and the linked module; on
** failure *out says why. */
static int save_io(const char *dir, const ls_tensors *in,
		   const ls_diff_result *r, const lm_module *linked,
		   lm_error *out)
{
	lm_error err;
	char *p;
	int rc = lm_mkdirs(dir, &err);
	if (!rc)
		rc = save_set(dir, "inputs", in, &err);
	if (!rc)
		rc = save_set(dir, "reference", &r->ref.outputs, &err);
	if (!rc)
		rc = save_set(dir, "linked", &r->linked.outputs, &err);
	p = lm_path_join(dir, "linked.json");
	if (!rc)
		rc = lm_module_save(linked, p, 1, &err);
	free(p);
	if (rc)
		*out = err;
	return rc ? LM_EINPUT : 0;
}

/*
** Log the diff as one run: the check's verdict, or status error with
** error when the command failed (dc NULL: the check did not run). db
** NULL: nothing. Returns 0, or the exit code after printing
** "lncsim: FILE: ...: ... (run not logged)".
*/
static int log_diff(ldb *db, lm_module **mods,
		    char **paths, int n, const char *inputs_dir, uint64_t seed,
		    const diff_case *dc, const char *error, double wall)
{
	if (!db)
		return 0;
	char *cmdline = cli_cmdline();
	/* module: the set's name and where it came from */
	lm_buf names = LM_BUF_INIT;
	char *where = lm_dirname(paths[0]);
	lm_buf_printf(&names, "%s (%s%s)", lm_module_display_name(mods[0]),
		      where, n > 1 ? ", ..." : "");
	free(where);
	ldb_run_info info;
	memset(&info, 0, sizeof info);
	info.command = cmdline;
	info.module = lm_buf_cstr(&names);
	info.arch = mods[0]->arch;
	info.cores = n;
	info.seed = inputs_dir ? 0 : seed;
	lm_error err;
	int rc = diff_case_log(db, &info, dc, error, wall, &err);
	free(cmdline);
	lm_buf_free(&names);
	if (!rc)
		return 0;
	fprintf(stderr, "lncsim: %s (run not logged)\n", err.msg);
	return err.code == LM_EINTERNAL ? EXIT_INTERNAL : EXIT_INPUT;
}

int cmd_diff(int argc, char **argv)
{
	const char *inputs_dir = NULL, *linked_path = NULL, *save_dir = NULL;
	uint64_t seed = 0, schedules = 0, x;
	int64_t race_limit = CLI_RACE_LIMIT_DEFAULT;
	int has_limit = 0;
	unsigned skip = 0;
	int quiet = 0, nmods_arg = 0, has_seed = 0;
	ls_diff_opts dopts;
	cli_db dbo = {0};
	char **margs = lm_xcalloc((size_t)argc, sizeof *margs);
	memset(&dopts, 0, sizeof dopts);
	dopts.run.max_instructions = LS_MAX_INSTRUCTIONS_DEFAULT;
	lm_error err;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int k = cli_db_option(&dbo, "diff", argc, argv, &i);
		if (k < 0) {
			rc = EXIT_INPUT;
			goto done;
		}
		if (k > 0)
			continue;
		if (!strcmp(a, "--")) {
			while (++i < argc)
				margs[nmods_arg++] = argv[i];
			break;
		}
		if (!strcmp(a, "--inputs") && v) {
			inputs_dir = v;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if ((rc = cli_parse_u64("diff", a, v, &seed)))
				goto done;
			has_seed = 1;
			i++;
		} else if (!strcmp(a, "--linked") && v) {
			linked_path = v;
			i++;
		} else if (!strcmp(a, "--schedules")) {
			if ((rc = cli_parse_u64("diff", a, v, &schedules)))
				goto done;
			if (schedules > 1000) {
				rc = cli_usage_error("diff", "--schedules at most 1000");
				goto done;
			}
			i++;
		} else if (!strcmp(a, "--save-io") && v) {
			save_dir = v;
			i++;
		} else if (!strncmp(a, "--skip=", 7)) {
			if (lk_parse_skip(a + 7, &skip, &err)) {
				rc = cli_usage_error("diff", "%s", err.msg);
				goto done;
			}
		} else if (!strcmp(a, "--max-time")) {
			if ((rc = cli_parse_u64("diff", a, v, &x)))
				goto done;
			dopts.run.max_time_ps = (int64_t)x;
			i++;
		} else if (!strcmp(a, "--max-instructions")) {
			if ((rc = cli_parse_u64("diff", a, v, &x)))
				goto done;
			dopts.run.max_instructions = (int64_t)x;
			i++;
		} else if (!strcmp(a, "--max-memory")) {
			if ((rc = cli_parse_bytes("diff", a, v,
						  &dopts.run.max_memory)))
				goto done;
			i++;
		} else if (!strcmp(a, "-q")) {
			quiet = 1;
		} else if (!strcmp(a, "--race")) {
			dopts.run.race = 1;
		} else if (!strcmp(a, "--race-limit")) {
			if ((rc = cli_parse_u64("diff", a, v, &x)))
				goto done;
			race_limit = (int64_t)x;
			has_limit = 1;
			i++;
		} else if (a[0] == '-' && a[1]) {
			rc = cli_usage_error("diff", "unknown or incomplete option '%s'",
					     a);
			goto done;
		} else {
			margs[nmods_arg++] = argv[i];
		}
	}
	if (!nmods_arg) {
		rc = cli_usage_error("diff", "no MODULE given");
		goto done;
	}
	if (inputs_dir && has_seed) {
		rc = cli_usage_error("diff", "--inputs and --seed exclude each other");
		goto done;
	}
	if (has_limit && !dopts.run.race) {
		rc = cli_usage_error("diff", "--race-limit needs --race");
		goto done;
	}

	char **paths = NULL;
	int n = 0;
	lm_module **mods = NULL;
	lm_module *given = NULL;
	ldb *db = NULL;
	diff_case dc;
	memset(&dc, 0, sizeof dc);
	double t0 = lm_seconds();

	if ((rc = cli_expand_modules(nmods_arg, margs, &paths, &n)))
		goto out;
	/* load every file at once (in parallel), the --linked one last;
	   verify the inputs once (in parallel): the link trusts them. The
	   linked module is verified once too, by the check (diff_case.h). */
	{
		char **all = lm_xcalloc((size_t)n + 1, sizeof *all);
		lm_module **got = lm_xcalloc((size_t)n + 1, sizeof *got);
		int n_all = n + (linked_path != NULL);
		memcpy(all, paths, (size_t)n * sizeof *all);
		if (linked_path)
			all[n] = (char *)linked_path;
		rc = lm_modules_load(all, n_all, got, &err);
		free(all);
		if (rc) {
			free(got);
			rc = cli_report(&err);
			goto out;
		}
		mods = got;
		given = linked_path ? got[n] : NULL;
	}
	{
		lm_verify_opts vo = {0};
		if (lm_verify_modules(mods, n, &vo, &err)) {
			rc = cli_report(&err);
			goto out;
		}
	}
	if ((rc = cli_db_open(&dbo, &db)))
		goto out;
	dc.skip = skip;
	dc.schedules = (int)schedules;
	dc.run = dopts.run;
	dc.inputs_dir = inputs_dir;
	dc.seed = seed;
	/* from here on every outcome is logged, a failure as an error run */
	const char *error = NULL;
	int ran = 0;
	rc = diff_case_run(&dc, mods, n, given, &err);
	given = NULL; /* the case's now */
	if (rc) {
		rc = cli_report(&err);
		error = err.msg;
	} else {
		ran = 1;
		if (save_dir && dc.linked &&
		    save_io(save_dir, &dc.inputs, &dc.res, dc.linked, &err)) {
			rc = cli_report(&err);
			error = err.msg;
		}
	}

	/* report */
	const char *name = lm_module_display_name(mods[0]);
	const ls_diff_result *res = &dc.res;
	/* what was linked: cores, or module definitions and instances */
	char what[64];
	if (dc.n_refs)
		snprintf(what, sizeof what, "%d module definition%s, %d "
			 "instance%s", n, n == 1 ? "" : "s", dc.n_refs,
			 dc.n_refs == 1 ? "" : "s");
	else
		snprintf(what, sizeof what, "%d core%s", n, n == 1 ? "" : "s");
	if (!error && dopts.run.race) {
		fflush(stdout);
		cli_print_races(stdout, &res->ref, race_limit, "reference: ");
		cli_print_races(stdout, &res->linked, race_limit, "linked: ");
	}
	if (error) {
		/* cli_report printed why */
	} else if (dc.failed) {
		printf("FAIL %s (%s): %s\n", name, what, dc.message);
	} else if (!quiet) {
		char sched[64];
		if (res->schedules_run > 1)
			snprintf(sched, sizeof sched, "reference + %d perturbed "
				 "schedule%s", res->schedules_run - 1,
				 res->schedules_run == 2 ? "" : "s");
		else
			snprintf(sched, sizeof sched, "1 schedule");
		printf("PASS %s (%s): %d output%s bit-identical, %d "
		       "hand-off%s, %s; reference %.3f us, linked %.3f us\n",
		       name, what, res->n_expected,
		       res->n_expected == 1 ? "" : "s", res->n_handoffs,
		       res->n_handoffs == 1 ? "" : "s", sched,
		       (double)res->ref.sim_time_ps / 1e6,
		       (double)res->linked.sim_time_ps / 1e6);
	}
	if (!error)
		rc = dc.failed ? EXIT_CHECK : EXIT_OK;
	/* a run the log did not take exits 2 whatever the verdict */
	int lrc = log_diff(db, mods, paths, n, inputs_dir, seed,
			   ran ? &dc : NULL, error, lm_seconds() - t0);
	if (lrc && (rc == EXIT_OK || rc == EXIT_CHECK))
		rc = lrc;
out:
	ldb_close(db);
	diff_case_free(&dc);
	lm_module_free(given);
	for (int i = 0; mods && i < n; i++)
		lm_module_free(mods[i]);
	free(mods);
	cli_free_paths(paths, n);
done:
	free(margs);
	return rc;
}

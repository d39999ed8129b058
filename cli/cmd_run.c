/*
** cmd_run.c -- `lncsim run [OPTIONS] MODULE...`: simulate one module (a
** per-core module, or a linked module with a dispatcher) or several
** per-core modules side by side (beside hlo_netlist.json: the instances
** of the module definitions).
**
** The steps, in order: parse options -> load -> verify -> memory check ->
** inputs -> run -> outputs -> print.
*/
#include "common.h"
#include "cli.h"
#include "module.h"
#include "verify.h"
#include "linker.h"
#include "sim.h"
#include "simcheck.h"
#include "cli_db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "race_out.h"

const char usage_run[] =
	"usage: lncsim run [--inputs DIR | --seed N] [--outputs DIR] [--stats]\n"
	"                  [--trace FILE] [--max-time PS] [--max-instructions N]\n"
	"                  [--perturb SEED] [--max-memory BYTES]\n"
	"                  [--race [--race-limit N]]\n"
	"                  [--db FILE | --no-db] MODULE...\n"
	"       lncsim run --list-unsupported MODULE...\n\n"
	"Simulate modules on NeuronCores. One MODULE runs alone (a\n"
	"per-core module on its core, or a linked module through its\n"
	"dispatcher); several per-core modules (or a directory holding\n"
	"nc*/sg*/def.json) run side by side on one machine. Every module is\n"
	"verified first.\n\n"
	"  --inputs DIR          external inputs from DIR/<name>.npy ('/' in a\n"
	"                        name as %2F, '%' as %25)\n"
	"  --seed N              generate inputs uniform in [-1, 1) (default 0)\n"
	"  --outputs DIR         write the external outputs as DIR/<name>.npy\n"
	"                        (named as for --inputs)\n"
	"  --stats               print the per-core statistics table (and\n"
	"                        the NKIKernel calls, if any)\n"
	"  --trace FILE          write a Chrome trace-event JSON (Perfetto)\n"
	"  --max-time PS         stop with an error after PS simulated ps\n"
	"  --max-instructions N  stop with an error after N instructions\n"
	"                        (default 1000000000; 0: no limit)\n"
	"  --perturb SEED        perturb latencies and tie-breaks (seeded)\n"
	"  --max-memory BYTES    refuse a run needing more simulated memory\n"
	"                        (suffix K, M, G, T; default 4G)\n"
	"  --race                detect data races by happens-before\n"
	"                        (docs/race.md): one line per race, exit 1\n"
	"                        when there is any\n"
	"  --race-limit N        print at most N race lines (default 100;\n"
	"                        all are counted)\n"
	"  --db FILE             log the run into FILE (default $LNCSIM_DB, else\n"
	"                        ./lncsim.db; docs/database.md)\n"
	"  --no-db               do not log the run\n"
	"  --list-unsupported    run nothing: load and verify the modules and\n"
	"                        print every opcode and key the simulator\n"
	"                        refuses, one per line (exit 2 if there is\n"
	"                        any, else 'nothing unsupported' and 0)\n\n"
	"exit status: 0 ok, 1 runtime error (deadlock, barrier collision,\n"
	"uninitialized read, limits) or a race (--race), 2 bad usage or\n"
	"input (or, with --list-unsupported, something unsupported), 3\n"
	"internal error\n";

/* Parse a non-negative 64-bit integer option value. */
static int parse_i64(const char *opt, const char *s, int64_t *out)
{
	char *end;
	long long v;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return cli_usage_error("run", "%s needs a non-negative integer, "
				       "got '%s'", opt, s);
	*out = v;
	return 0;
}

/*
** Log the run (cli_db.h): one execution, "single" for one module and
** "reference" for several side by side, with its races when race (the
** run was checked); status pass, fail when it found races, or error
** with the message (a run that failed after races were found: res
** holds only those, no execution). Returns rc, or the logging failure's exit code.
*/
static int log_run(ldb *db, int argc, char **argv, int first,
		   lm_module **mods, int64_t seed, const ls_result *res, int rc,
		   const lm_error *err, double wall, int race)
{
	if (!db)
		return rc;
	int n_mods = 0;
	while (mods && mods[n_mods])
		n_mods++;
	char *cmd = cli_cmdline();
	lm_buf mod = LM_BUF_INIT;
	for (int i = first; i < argc; i++) {
		if (i > first)
			lm_buf_puts(&mod, ",");
		lm_buf_puts(&mod, argv[i]);
	}
	const char *mode = n_mods > 1 ? "reference" : "single";
	ldb_run_info info = {
		.command = cmd, .module = lm_buf_cstr(&mod),
		.arch = n_mods && mods[0]->arch ? mods[0]->arch : "",
		.cores = res && res->n_cores ? res->n_cores : n_mods, .seed = (uint64_t)seed,
	};
	char msg[64];
	const char *status = rc ? "error" : "pass", *text = rc ? err->msg : "";
	if (rc == EXIT_CHECK && race && res && res->n_cores > 0 &&
	    res->races_found > 0) {
		snprintf(msg, sizeof msg, "%lld race%s found",
			 (long long)res->races_found,
			 res->races_found == 1 ? "" : "s");
		status = "fail";
		text = msg;
	}
	int lrc = cli_db_log(db, &info, res ? 1 : 0, &mode, &res, race, status,
			     text, wall, NULL);
	lm_buf_free(&mod);
	free(cmd);
	return rc ? rc : lrc;
}

static int by_name(const void *a, const void *b)
{
	const ls_tensor *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

/* The outputs in name order (the order they are printed in); caller
** frees the array. */
static const ls_tensor **sorted_outputs(const ls_tensors *ts)
{
	const ls_tensor **v = lm_xcalloc((size_t)ts->n + 1, sizeof *v);
	for (int i = 0; i < ts->n; i++)
		v[i] = &ts->t[i];
	qsort(v, (size_t)ts->n, sizeof *v, by_name);
	return v;
}

static void print_refusal(void *arg, const char *msg)
{
	(void)arg;
	printf("%s\n", msg);
}

/*
** --list-unsupported: every refusal of every module (loaded and
** verified), one per line on stdout. Nothing runs, nothing is logged.
*/
static int list_unsupported(char **paths, int n)
{
	int refused = 0;
	for (int i = 0; i < n; i++) {
		lm_module *m = NULL;
		lm_error err;
		if (lm_module_load(&m, paths[i], &err) != 0 ||
		    lm_verify(m, NULL, &err) != 0) {
			lm_module_free(m);
			return cli_report(&err);
		}
		refused += ls_check_module_each(m, print_refusal, NULL);
		lm_module_free(m);
	}
	if (!refused)
		printf("nothing unsupported\n");
	return refused ? EXIT_INPUT : EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	const char *inputs_dir = NULL, *outputs_dir = NULL;
	int64_t seed = 0, perturb = 0, race_limit = CLI_RACE_LIMIT_DEFAULT;
	int has_limit = 0;
	int stats = 0, has_seed = 0, list = 0, first = 1, rc = 0, n = 0;
	ls_options opts;
	char **paths = NULL;
	lm_module **mods = NULL, **insts = NULL, **runm;
	int n_insts = 0, nr;
	ls_tensors inputs = {0, NULL};
	ls_result res;
	lm_error err;
	cli_db dbo = {0};
	ldb *db = NULL;
	double t0 = lm_seconds();
	int ran = 0;

	/* options */
	memset(&opts, 0, sizeof opts);
	opts.max_instructions = LS_MAX_INSTRUCTIONS_DEFAULT;
	memset(&res, 0, sizeof res);
	for (; first < argc && argv[first][0] == '-' && argv[first][1];
	     first++) {
		const char *a = argv[first];
		int dbk = cli_db_option(&dbo, "run", argc, argv, &first);
		if (dbk < 0)
			return EXIT_INPUT;
		if (dbk > 0)
			continue;
		const char *v = first + 1 < argc ? argv[first + 1] : NULL;
		int takes = strcmp(a, "--stats") != 0 && strcmp(a, "--") != 0 &&
			    strcmp(a, "--list-unsupported") != 0 &&
			    strcmp(a, "--race") != 0;
		if (takes && !v)
			return cli_usage_error("run", "%s needs a value", a);
		if (!strcmp(a, "--"))  {
			first++;
			break;
		} else if (!strcmp(a, "--stats")) {
			stats = 1;
			continue;
		} else if (!strcmp(a, "--list-unsupported")) {
			list = 1;
			continue;
		} else if (!strcmp(a, "--race")) {
			opts.race = 1;
			continue;
		} else if (!strcmp(a, "--race-limit")) {
			if (parse_i64(a, v, &race_limit))
				return EXIT_INPUT;
			has_limit = 1;
		} else if (!strcmp(a, "--inputs")) {
			inputs_dir = v;
		} else if (!strcmp(a, "--outputs")) {
			outputs_dir = v;
		} else if (!strcmp(a, "--trace")) {
			opts.trace_path = v;
		} else if (!strcmp(a, "--seed")) {
			if (parse_i64(a, v, &seed))
				return EXIT_INPUT;
			has_seed = 1;
		} else if (!strcmp(a, "--max-time")) {
			if (parse_i64(a, v, &opts.max_time_ps))
				return EXIT_INPUT;
		} else if (!strcmp(a, "--max-instructions")) {
			if (parse_i64(a, v, &opts.max_instructions))
				return EXIT_INPUT;
		} else if (!strcmp(a, "--max-memory")) {
			if (cli_parse_bytes("run", a, v, &opts.max_memory))
				return EXIT_INPUT;
		} else if (!strcmp(a, "--perturb")) {
			if (parse_i64(a, v, &perturb))
				return EXIT_INPUT;
			opts.perturb_seed = (uint64_t)perturb;
		} else {
			return cli_usage_error("run", "unknown option '%s'", a);
		}
		first++;
	}
	if (inputs_dir && has_seed)
		return cli_usage_error("run", "--inputs and --seed exclude each "
				       "other");
	if (has_limit && !opts.race)
		return cli_usage_error("run", "--race-limit needs --race");
	if (first >= argc)
		return cli_usage_error("run", "no MODULE given");

	/* load and verify */
	if ((rc = cli_expand_modules(argc - first, argv + first, &paths, &n)))
		return rc;
	if (list) {
		rc = list_unsupported(paths, n);
		cli_free_paths(paths, n);
		return rc;
	}
	if ((rc = cli_db_open(&dbo, &db)))
		goto done;
	mods = lm_xcalloc((size_t)n + 1, sizeof *mods);
	if (lm_modules_load(paths, n, mods, &err) != 0 ||
	    lm_verify_modules(mods, n, NULL, &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}

	/* modules beside a netlist are module definitions: what runs is
	   their instances, each its definition on its core with its own
	   tensors (the reference lncsim diff runs; docs/linker.md) */
	if (lk_instance_modules(mods, n, &insts, &n_insts, &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	runm = n_insts ? insts : mods;
	nr = n_insts ? n_insts : n;

	/* memory (the inputs count), inputs, run */
	if (ls_check_memory_race(runm, nr, opts.max_memory, opts.race,
				 &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	if (ls_make_inputs(runm, nr, inputs_dir, (uint64_t)seed, &inputs,
			   &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	opts.keep_races = opts.race;
	if ((nr == 1 ? ls_run(runm[0], &inputs, &opts, &res, &err)
		     : ls_run_multi(runm, nr, &inputs, &opts, &res, &err)) != 0) {
		rc = cli_report(&err);
		/* the races found before the run failed (docs/race.md) */
		fflush(stderr);
		cli_print_races(stdout, &res, race_limit, NULL);
		goto done;
	}
	ran = 1;

	/* outputs */
	if (outputs_dir && ls_write_outputs(&res.outputs, outputs_dir, &err)) {
		rc = cli_report(&err);
		goto done;
	}

	/* print */
	printf("%s: %d module%s, %d core%s, %lld instructions, %.3f us "
	       "simulated\n", n == 1 ? paths[0] : argv[first], n,
	       n == 1 ? "" : "s", res.n_cores, res.n_cores == 1 ? "" : "s",
	       (long long)res.instructions, (double)res.sim_time_ps / 1e6);
	if (n_insts)
		printf("modular flow: %d instance%s of the module definitions "
		       "(hlo_netlist.json)\n", n_insts,
		       n_insts == 1 ? "" : "s");
	const ls_tensor **sorted = sorted_outputs(&res.outputs);
	for (int i = 0; i < res.outputs.n; i++) {
		const ls_tensor *t = sorted[i];
		printf("output %s: %s [", t->name, lm_dtype_name(t->dtype));
		for (int d = 0; d < t->ndim; d++)
			printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
		if (outputs_dir) {
			char *f = NULL;
			ls_tensor_file_name(&f, t->name, outputs_dir, &err);
			printf("] -> %s/%s\n", outputs_dir, f ? f : "?");
			free(f);
		} else {
			printf("]\n");
		}
	}
	free(sorted);
	if (stats) {
		lm_buf b = LM_BUF_INIT;
		ls_format_stats(&res, &b);
		fputs(lm_buf_cstr(&b), stdout);
		lm_buf_free(&b);
	}
	if (opts.trace_path)
		printf("trace: %s\n", opts.trace_path);
	if (opts.race) {
		fflush(stdout);
		if (cli_print_races(stdout, &res, race_limit, NULL) > 0)
			rc = EXIT_CHECK;
		else
			printf("races: none (shadow %lld bytes)\n",
			       (long long)res.race_shadow_bytes);
	}

done:
	rc = log_run(db, argc, argv, first, mods, seed,
		     ran || res.races_found > 0 ? &res : NULL, rc, &err,
		     lm_seconds() - t0, opts.race);
	ldb_close(db);
	ls_result_free(&res);
	ls_tensors_free(&inputs);
	for (int i = 0; i < n; i++)
		lm_module_free(mods ? mods[i] : NULL);
	free(mods);
	for (int i = 0; i < n_insts; i++)
		lm_module_free(insts[i]);
	free(insts);
	cli_free_paths(paths, n);
	return rc;
}

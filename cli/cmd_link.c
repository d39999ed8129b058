/*
** cmd_link.c -- `lncsim link [-o DIR] [--dry-run] [--skip=STEP,...] [--force]
** [--barrier-base N] [--pretty] [-v] MODULE...`: link per-core modules into <DIR>/<name>/sgLnk/.
*/
#include "common.h"
#include "cli.h"
#include "module.h"
#include "linker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_link[] =
	"usage: lncsim link [-o DIR] [--dry-run] [--skip=STEP,...] [--force] "
	"[--barrier-base N] [--pretty] [-v] MODULE...\n\n"
	"Link N per-core modules (one per neuron_core_id) into ONE new module\n"
	"'<name>/sgLnk' and write the link directory DIR/<name>/sgLnk/ with\n"
	"def.json, tensor-map.json and the cores' artifacts\n"
	"(docs/linker.md). MODULE is a def.json file or a directory holding\n"
	"nc*/sg*/def.json. The inputs are never modified.\n\n"
	"  -o DIR          output directory (default: .)\n"
	"  --dry-run       run every step and check, print the report, write\n"
	"                  nothing\n"
	"  --force         replace a link directory written before, in one step\n"
	"                  (its manifest's entries go, a user's files move into\n"
	"                  the new one; refused if the new link writes there)\n"
	"  --pretty        indent def.json (default: compact, one line)\n"
	"  --skip=STEP,... switch steps off (for testing the checker)\n"
	"  --barrier-base N  renumbered barrier ids start at N (default 0)\n"
	"  -v              one line per step with counts\n\n"
	"steps, in order (names for --skip):\n"
	"  copy_modules_as_functions            1  cores -> functions nc<c>\n"
	"  copy_allocs                          2  unify allocations (inpMap/outMap/memMap)\n"
	"  remap_registers                      2  register references follow the\n"
	"                                          renamed registers\n"
	"  fpass_insert_returns                 3  completion barrier + Return\n"
	"  fpass_insert_switch_queue_instances  3  I-SQI- queue switches\n"
	"  build_main_memlocs                   4  external I/O into main\n"
	"  move_modules_as_functions            4  parameters bound per instance\n"
	"                                          (modules beside hlo_netlist.json)\n"
	"  build_main_aliases                   4  module aliases\n"
	"  fix_output_kind                      5  demote hand-off outputs\n"
	"  build_main_tensor_map                6  tensor-map.json\n"
	"  init_queues                          7  queue + semaphore pool\n"
	"  add_fn_call                          8  dispatcher Calls\n"
	"  setup_link_dir                       9  artifacts, file fields\n"
	"  renumber_core_barriers              10  global barrier ids\n"
	"  check_barrier_order                 11  static deadlock check\n"
	"  post_link_mmt_report                12  matmul report\n"
	"  verify                                  lm_verify(linked) on the result\n"
	"  run_function_passes                     = both fpass_ steps\n\n"
	"exit status: 0 linked, 1 the linked module fails the verifier,\n"
	"2 bad usage or bad input (the message names the file and item)\n";

/* Print the one-paragraph report of a link. */
static void print_report(const lk_report *rep, const char *od, int dry)
{
	/* a modular link's inputs are module definitions, not cores */
	printf("%s: %d %s%s -> %d functions, %d instructions; %d alias%s, "
	       "%d shared input%s, %d output%s demoted, %d semaphores, %d "
	       "barrier%s renumbered, %d artifact%s\n", rep->name, rep->n_cores,
	       rep->n_instances ? "module definition" : "core",
	       rep->n_cores == 1 ? "" : "s", rep->n_functions, rep->n_insts,
	       rep->n_aliases, rep->n_aliases == 1 ? "" : "es",
	       rep->n_shared_inputs, rep->n_shared_inputs == 1 ? "" : "s",
	       rep->n_demoted, rep->n_demoted == 1 ? "" : "s", rep->n_semaphores,
	       rep->n_renumbered, rep->n_renumbered == 1 ? "" : "s",
	       rep->n_artifacts, rep->n_artifacts == 1 ? "" : "s");
	if (rep->n_instances)
		printf("modular flow: %d module definition%s, %d instance%s "
		       "(one Call each, its arguments bound)\n", rep->n_defs,
		       rep->n_defs == 1 ? "" : "s", rep->n_instances,
		       rep->n_instances == 1 ? "" : "s");
	if (dry) {
		lm_buf b = LM_BUF_INIT;
		for (int i = 0; i < rep->n_tensors; i++)
			printf("tensor %s %s%s%s%s [%s] %s\n",
			       rep->tensors[i].is_output ? "output" : "input",
			       rep->tensors[i].layer_name,
			       rep->tensors[i].allocation ? " (" : "",
			       rep->tensors[i].allocation ?
			       rep->tensors[i].allocation : "",
			       rep->tensors[i].allocation ? ")" : "",
			       lm_dtype_name(rep->tensors[i].dtype),
			       rep->tensors[i].tf_file);
		if (rep->mmt.arch) {
			lk_mmt_format_table(&rep->mmt, &b);
			fputs(lm_buf_cstr(&b), stdout);
		}
		lm_buf_free(&b);
		printf("dry run: nothing written (would write %s/%s/"
		       LM_LINKED_DIR "/)\n", od, rep->base_name);
	} else {
		printf("wrote %s/%s/" LM_LINKED_DIR "/def.json\n", od,
		       rep->base_name);
	}
}

int cmd_link(int argc, char **argv)
{
	lk_options opts;
	lk_report rep;
	lm_error err;
	lm_buf log = LM_BUF_INIT;
	const char *od = ".";
	int force = 0, pretty = 0, verbose = 0, first = 1, n = 0, rc;
	char **paths = NULL;
	lm_module **mods = NULL;
	lm_module *out = NULL;

	memset(&opts, 0, sizeof opts);
	memset(&rep, 0, sizeof rep);
	for (; first < argc && argv[first][0] == '-' && argv[first][1];
	     first++) {
		const char *a = argv[first];
		if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
			if (++first >= argc)
				return cli_usage_error("link", "%s needs a "
						       "directory", a);
			od = argv[first];
		} else if (!strncmp(a, "--out=", 6)) {
			od = a + 6;
		} else if (!strcmp(a, "--dry-run")) {
			opts.dry_run = 1;
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else if (!strncmp(a, "--barrier-base=", 15) ||
			   !strcmp(a, "--barrier-base")) {
			const char *v = a[14] == '=' ? a + 15 : NULL;
			char *end;
			long long b;
			if (!v && ++first >= argc)
				return cli_usage_error("link", "--barrier-base "
						       "needs a number");
			if (!v)
				v = argv[first];
			errno = 0;
			b = strtoll(v, &end, 10);
			if (!*v || *end || errno || b < 0 || b > 0xffffffffLL)
				return cli_usage_error("link", "--barrier-base "
						       "'%s': expected a whole "
						       "number in [0, 4294967295]",
						       v);
			opts.barrier_base = b;
		} else if (!strcmp(a, "--pretty")) {
			pretty = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (!strncmp(a, "--skip=", 7) || !strcmp(a, "--skip")) {
			const char *list = a[6] == '=' ? a + 7 : NULL;
			if (!list && ++first >= argc)
				return cli_usage_error("link", "--skip needs a "
						       "step list");
			if (!list)
				list = argv[first];
			if (lk_parse_skip(list, &opts.skip, &err) != 0)
				return cli_usage_error("link", "%s", err.msg);
		} else if (!strcmp(a, "--")) {
			first++;
			break;
		} else {
			return cli_usage_error("link", "unknown option '%s'", a);
		}
	}
	if (first >= argc)
		return cli_usage_error("link", "no MODULE given");
	if (!*od)
		return cli_usage_error("link", "empty output directory");
	rc = cli_expand_modules(argc - first, argv + first, &paths, &n);
	if (rc)
		goto done;
	mods = lm_xcalloc((size_t)n, sizeof *mods);
	if (lm_modules_load(paths, n, mods, &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	opts.out_dir = od;
	opts.log = verbose ? &log : NULL;
	rc = lk_link(mods, n, &opts, &out, &rep, &err);
	if (verbose)
		fputs(lm_buf_cstr(&log), stdout);
	if (rc) {
		rc = cli_report(&err);
		goto done;
	}
	if (!opts.dry_run && lk_write_link_dir(out, &rep, od,
					      (force ? LK_WRITE_FORCE : 0) |
					      (pretty ? LK_WRITE_PRETTY : 0),
					      &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	print_report(&rep, od, opts.dry_run);
done:
	lm_module_free(out);
	for (int i = 0; mods && i < n; i++)
		lm_module_free(mods[i]);
	free(mods);
	cli_free_paths(paths, n);
	lk_report_free(&rep);
	lm_buf_free(&log);
	return rc;
}

/*
** cmd_verify.c -- `lncsim verify [--linked] [--sim] [-q] FILE|DIR...`
*/
#include "common.h"
#include "cli.h"
#include "module.h"
#include "verify.h"
#include "simcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_verify[] =
	"usage: lncsim verify [--linked] [--sim] [-q] MODULE...\n\n"
	"Load each module and run the verifier: unique names,\n"
	"references that resolve, access-pattern bounds, per-opcode operand\n"
	"rules. MODULE is a def.json file or a directory holding\n"
	"nc*/sg*/def.json (each found file is checked).\n\n"
	"  --linked   also check the linked-module rules (dispatcher, completion\n"
	"             barriers, unique barrier ids)\n"
	"  --sim      also refuse every opcode the simulator does not execute\n"
	"             and every key whose value it does not model (what\n"
	"             'lncsim run' refuses before running)\n"
	"  -q         print nothing on success\n\n"
	"exit status: 0 all valid, 2 a module is invalid or unreadable (an\n"
	"invalid module is bad input: verify never exits 1)\n";

int cmd_verify(int argc, char **argv)
{
	lm_verify_opts opts = {0};
	int quiet = 0, sim = 0, first = 1;
	for (; first < argc && argv[first][0] == '-' && argv[first][1];
	     first++) {
		if (!strcmp(argv[first], "--linked"))
			opts.linked = 1;
		else if (!strcmp(argv[first], "--sim"))
			sim = 1;
		else if (!strcmp(argv[first], "-q"))
			quiet = 1;
		else if (!strcmp(argv[first], "--")) {
			first++;
			break;
		} else
			return cli_usage_error("verify", "unknown option '%s'",
					       argv[first]);
	}
	if (first >= argc)
		return cli_usage_error("verify", "no MODULE given");
	char **paths = NULL;
	int n = 0, rc = cli_expand_modules(argc - first, argv + first, &paths, &n);
	for (int i = 0; !rc && i < n; i++) {
		lm_module *m = NULL;
		lm_error err;
		if (lm_module_load(&m, paths[i], &err) != 0 ||
		    lm_verify(m, &opts, &err) != 0 ||
		    (sim && ls_check_module(m, &err) != 0)) {
			rc = cli_report(&err);
		} else if (!quiet) {
			int ninst = 0;
			for (int f = 0; f < m->n_functions; f++)
				for (int b = 0; b < m->functions[f].n_blocks; b++)
					ninst += m->functions[f].blocks[b].n_insts;
			printf("%s: ok (%d function%s, %d instruction%s)\n", paths[i],
			       m->n_functions, m->n_functions == 1 ? "" : "s",
			       ninst, ninst == 1 ? "" : "s");
		}
		lm_module_free(m);
	}
	cli_free_paths(paths, n);
	return rc;
}

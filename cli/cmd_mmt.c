/*
** cmd_mmt.c -- `lncsim mmt [--json] MODULE...`: the static matmul report
** (per function: matmuls, MACs, PE cycles, PE-array fill).
*/
#include "common.h"
#include "cli.h"
#include "module.h"
#include "linker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_mmt[] =
	"usage: lncsim mmt [--json] MODULE...\n\n"
	"Static matmul report of each module (the linker's post-link\n"
	"report): per function the Matmult count, MACs (K*M*N), PE\n"
	"cycles from the arch cost model (N*passes + fixed overhead; fp32 makes\n"
	"4 passes) and the PE-array fill sum(K*M*N) / sum(128*128*N*passes).\n"
	"K is the stationary operand's partitions, M and N the output's\n"
	"partitions and free size. A Loop body counts once.\n\n"
	"  --json   print JSON instead of a table\n\n"
	"A module without a Matmult gets its table and a line saying so.\n\n"
	"exit status: 0 ok, 2 bad usage or bad input\n";

int cmd_mmt(int argc, char **argv)
{
	int json = 0, first = 1, n = 0, rc;
	char **paths = NULL;
	for (; first < argc && argv[first][0] == '-' && argv[first][1];
	     first++) {
		if (!strcmp(argv[first], "--json"))
			json = 1;
		else if (!strcmp(argv[first], "--")) {
			first++;
			break;
		} else
			return cli_usage_error("mmt", "unknown option '%s'",
					       argv[first]);
	}
	if (first >= argc)
		return cli_usage_error("mmt", "no MODULE given");
	rc = cli_expand_modules(argc - first, argv + first, &paths, &n);
	for (int i = 0; !rc && i < n; i++) {
		lm_module *m = NULL;
		lk_mmt_report r;
		lm_error err;
		memset(&r, 0, sizeof r);
		if (lm_module_load(&m, paths[i], &err) != 0 ||
		    lk_matmul_report(m, &r, &err) != 0) {
			rc = cli_report(&err);
		} else if (json) {
			char *s = lk_mmt_json(&r);
			fputs(s, stdout);
			free(s);
		} else {
			lm_buf b = LM_BUF_INIT;
			lk_mmt_format_table(&r, &b);
			printf("%s%s:\n%s", i ? "\n" : "", paths[i],
			       lm_buf_cstr(&b));
			if (!r.total.matmuls)
				printf("no Matmult in this module: nothing runs "
				       "on the PE array\n");
			lm_buf_free(&b);
		}
		lk_mmt_report_free(&r);
		lm_module_free(m);
	}
	cli_free_paths(paths, n);
	return rc;
}

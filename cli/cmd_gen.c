/*
** cmd_gen.c -- `lncsim gen [--cores N] [--seed S] [--size small|medium|large]
** ... [--name NAME] [--force] -o DIR`: write a random per-core module set.
*/
#include "common.h"
#include "cli.h"
#include "gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char usage_gen[] =
	"usage: lncsim gen [--cores N] [--seed S] [--size small|medium|large]\n"
	"                  [--loops] [--dynamic] [--sync deps|semaphores]\n"
	"                  [--compute] [--by-name]\n"
	"                  [--name NAME] [--force] -o DIR\n\n"
	"Write a random per-core module set DIR/NAME/nc<c>/sg0/def.json (plus\n"
	"its const .npy files), race-free by construction, exercising every\n"
	"linker step (see docs/generator.md). Same options, same bytes.\n\n"
	"  --cores N   number of cores, 1..64 (default 2)\n"
	"  --seed S    random seed (default 1)\n"
	"  --size SZ   program size: small (default), medium, large\n"
	"  --loops     each segment's K tiles in a static Loop (affine\n"
	"              symbolic_ap loads, loop-carried dependencies)\n"
	"  --dynamic   the K loops as DynamicForLoops over a register trip\n"
	"              count, loads addressed through registers (register_ap);\n"
	"              implies --loops\n"
	"  --sync MODE how instructions are ordered: deps (default:\n"
	"              dependencies and queue semaphore waits) or semaphores\n"
	"              (no dependencies: id-form sync_info semaphores\n"
	"              instead; the queue semaphore waits stay)\n"
	"  --compute   per core a TensorReduce, TensorScalarPtr, IndirectLoad\n"
	"              and Select on the data path (with --sync deps only)\n"
	"  --by-name   about half the hand-offs name-matched: the consumer\n"
	"              declares an ExternalInput named like the producer's\n"
	"              ExternalOutput instead of a remote_local_target view\n"
	"  --name NAME set name (default gen<seed>)\n"
	"  -o DIR      output directory (created; an existing DIR/NAME is\n"
	"              refused unless --force)\n"
	"  --force     overwrite an existing generated set\n\n"
	"On success it prints the set it wrote: DIR/NAME, the core count and\n"
	"the module files.\n\n"
	"exit status: 0 written, 2 bad usage, an existing set without --force,\n"
	"or a directory that cannot be written\n";


int cmd_gen(int argc, char **argv)
{
	ls_gen_opts o = {2, 1, LS_GEN_SMALL, NULL, NULL, 0, 0, 0, 0, 0};
	const char *out = NULL;
	int force = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t x;
		if (!strcmp(a, "--")) {
			if (cli_no_operands("gen", argc, argv, i))
				return EXIT_INPUT;
			break;
		} else if (!strcmp(a, "--cores")) {
			if (cli_parse_u64("gen", a, v, &x))
				return EXIT_INPUT;
			if (x < 1 || x > 64)
				return cli_usage_error("gen", "--cores must be within "
						       "1..64");
			o.cores = (int)x;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (cli_parse_u64("gen", a, v, &o.seed))
				return EXIT_INPUT;
			i++;
		} else if (!strcmp(a, "--size")) {
			int s = v ? ls_gen_size_parse(v) : -1;
			if (s < 0)
				return cli_usage_error("gen", "--size must be small, "
						       "medium or large");
			o.size = (ls_gen_size)s;
			i++;
		} else if (!strcmp(a, "--loops")) {
			o.loops = 1;
		} else if (!strcmp(a, "--dynamic")) {
			o.dynamic = 1;
		} else if (!strcmp(a, "--compute")) {
			o.compute = 1;
		} else if (!strcmp(a, "--by-name")) {
			o.by_name = 1;
		} else if (!strcmp(a, "--sync")) {
			int m = v ? ls_gen_sync_parse(v) : -1;
			if (m < 0)
				return cli_usage_error("gen", "--sync must be deps or "
						       "semaphores");
			o.sync = m;
			i++;
		} else if (!strcmp(a, "--name")) {
			if (!v || !*v || strchr(v, '/') || !strcmp(v, "..") ||
			    !strcmp(v, "."))
				return cli_usage_error("gen", "--name needs a plain "
						       "name");
			o.name = v;
			i++;
		} else if (!strcmp(a, "-o")) {
			if (!v)
				return cli_usage_error("gen", "-o needs a directory");
			out = v;
			i++;
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else {
			return cli_usage_error("gen", "unknown argument '%s'", a);
		}
	}
	if (!out)
		return cli_usage_error("gen", "-o DIR is required");
	if (o.compute && o.sync == LS_GEN_SYNC_SEMAPHORES)
		return cli_usage_error("gen", "--compute takes --sync deps only");
	char *name = o.name ? lm_xstrdup(o.name)
			    : lm_xasprintf("gen%llu", (unsigned long long)o.seed);
	char *set = lm_path_join(out, name);
	struct stat st;
	int exists = stat(set, &st) == 0;
	free(name);
	if (exists && !force) {
		fprintf(stderr, "lncsim: %s: already exists (use --force to "
			"overwrite)\n", set);
		free(set);
		return EXIT_INPUT;
	}
	lm_error err;
	if (ls_gen_write(&o, out, &err)) {
		free(set);
		return cli_report(&err);
	}
	static const char *const sizes[] = { "small", "medium", "large" };
	char last[32] = "";
	if (o.cores > 1)
		snprintf(last, sizeof last, "..nc%d", o.cores - 1);
	printf("%s: %d per-core module%s (%s/nc0%s/sg0/def.json), seed %llu, "
	       "size %s\n", set, o.cores, o.cores == 1 ? "" : "s", set, last,
	       (unsigned long long)o.seed, sizes[o.size]);
	free(set);
	return EXIT_OK;
}

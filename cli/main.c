/*
** main.c -- `lncsim COMMAND [OPTIONS] ARGS`: dispatch, help, version and
** the shared helpers of the command files.
*/
#include "common.h"
#include "cli.h"
#include "module.h"
#include "cli_db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** The commands. The last three fields drive the option handling (see
** split_equals() and permute() below): the options that take a value,
** whether the command takes operands (its options are then moved in front
** of them) and whether a subcommand word comes first (klr dump|pack).
*/
static const cli_command commands[] = {
	{ "verify", "check modules against the verifier rules", cmd_verify,
	  usage_verify, "", 1, 0 },
	{ "run", "simulate modules on NeuronCores", cmd_run, usage_run,
	  "--inputs --seed --outputs --trace --max-time --max-instructions "
	  "--perturb --max-memory --race-limit --db", 1, 0 },
	{ "gen", "write a random per-core module set", cmd_gen, usage_gen,
	  "--cores --seed --size --sync --name -o", 0, 0 },
	{ "diff", "check a linked module against the per-core modules",
	  cmd_diff, usage_diff,
	  "--inputs --seed --linked --schedules --save-io --max-time "
	  "--max-instructions --max-memory --race-limit --db", 1, 0 },
	{ "fuzz", "gen + diff over many seeds", cmd_fuzz, usage_fuzz,
	  "--cores --count --duration --seed --jobs --size --sync --schedules "
	  "--keep-failures --campaign --lost-after --case-timeout --db", 0, 0 },
	{ "report", "plot utilization reports from the run log", cmd_report,
	  usage_report, "--db -o --run --since --format --command", 0, 0 },
	{ "db", "list, merge or check run-log databases", cmd_db, usage_db,
	  "--db --last --campaign --run", 0, 0 },
	{ "link", "link per-core modules into one <name>/sgLnk module",
	  cmd_link, usage_link, "-o --out --skip --barrier-base", 1, 0 },
	{ "mmt", "static matmul report (matmuls, MACs, PE cycles, fill)",
	  cmd_mmt, usage_mmt, "", 1, 0 },
	{ "lower", "kernel provision: NKI carriers -> functions and calls",
	  cmd_lower, usage_lower, "-o", 1, 0 },
	{ "klr", "dump or pack KLR kernel files (CBOR)", cmd_klr, usage_klr,
	  "-o", 1, 1 },
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void main_usage(FILE *f)
{
	fprintf(f, "usage: lncsim COMMAND [OPTIONS] ARGS\n"
		"       lncsim --version | --help | COMMAND --help\n\n"
		"lncsim links per-core Neuron modules, simulates NeuronCores and\n"
		"checks that the linked module computes the same bits.\n\n"
		"commands:\n");
	for (int i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nexit status: 0 ok, 1 a check failed, 2 bad usage or "
		"input, 3 internal error\n");
}

int cli_report(const lm_error *err)
{
	fprintf(stderr, "lncsim: %s\n", err->msg[0] ? err->msg : "error");
	switch (err->code) {
	case LM_ECHECK: return EXIT_CHECK;
	case LM_EINTERNAL: return EXIT_INTERNAL;
	default: return EXIT_INPUT;
	}
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lncsim: %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n(see 'lncsim %s --help')\n", cmd);
	va_end(ap);
	return EXIT_INPUT;
}

int cli_parse_u64(const char *cmd, const char *opt, const char *v,
		  uint64_t *out)
{
	char *end;
	errno = 0;
	if (!v || !*v || *v == '-')
		return cli_usage_error(cmd, "%s needs a non-negative integer", opt);
	unsigned long long x = strtoull(v, &end, 10);
	if (*end || errno)
		return cli_usage_error(cmd, "%s: '%s' is not an integer", opt, v);
	*out = x;
	return 0;
}

int cli_parse_bytes(const char *cmd, const char *opt, const char *v,
		    int64_t *out)
{
	char *end;
	unsigned long long x;
	int shift = 0;
	errno = 0;
	if (!v || *v < '0' || *v > '9')
		return cli_usage_error(cmd, "%s needs a size in bytes (a "
				       "positive integer, optionally with K, M, "
				       "G or T)", opt);
	x = strtoull(v, &end, 10);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'I') && (end[1] == 'B' ||
						     end[1] == 'b'))
		end += 2;
	if (*end || errno || x == 0)
		return cli_usage_error(cmd, "%s: '%s' is not a size in bytes "
				       "(a positive integer, optionally with K, "
				       "M, G or T)", opt, v);
	if (x > (unsigned long long)INT64_MAX >> shift)
		return cli_usage_error(cmd, "%s: '%s' is too large", opt, v);
	*out = (int64_t)(x << shift);
	return 0;
}

int cli_no_operands(const char *cmd, int argc, char **argv, int i)
{
	if (i + 1 >= argc)
		return 0;
	return cli_usage_error(cmd, "takes no operands, got '%s'", argv[i + 1]);
}

int cli_is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

int cli_help(const char *cmd)
{
	for (int i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, cmd)) {
			fputs(commands[i].usage, stdout);
			return EXIT_OK;
		}
	return EXIT_INPUT;
}

int cli_expand_modules(int argc, char **argv, char ***paths, int *n)
{
	lm_error err;
	for (int i = 0; i < argc; i++)
		if (lm_expand_module_arg(argv[i], paths, n, &err) != 0) {
			/* nothing is returned on error: callers just return */
			cli_free_paths(*paths, *n);
			*paths = NULL;
			*n = 0;
			return cli_report(&err);
		}
	return 0;
}

void cli_free_paths(char **paths, int n)
{
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* Whether option a takes the next argument as its value (valued: the
** command's list). */
static int takes_value(const char *valued, const char *a)
{
	size_t n = strlen(a);
	for (const char *p = valued; (p = strstr(p, a)); p += n)
		if ((p == valued || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return 1;
	return 0;
}

/*
** GNU-style permutation of argv[from..argc): the options (and the values
** of those that take one) keep their order and move in front of the
** operands, which keep theirs. "--" ends the options: it is kept, moved
** between the options and the operands, and everything after it is an
** operand. A lone "-" is an operand. The strings are not touched, only
** their order. Returns the new argc: argc, or, when an option that
** takes a value ends the line, the count up to and with that option (the
** operands dropped), so that the command reports the missing value in
** its own words instead of taking an operand for it.
*/
static int permute(int argc, char **argv, int from, const char *valued)
{
	char **opts = lm_xcalloc((size_t)argc + 1, sizeof *opts);
	char **ops = lm_xcalloc((size_t)argc + 1, sizeof *ops);
	char *dashes = NULL;
	int n_opts = 0, n_ops = 0, i;
	for (i = from; i < argc; i++) {
		char *a = argv[i];
		if (!strcmp(a, "--")) {
			dashes = a;
			for (i++; i < argc; i++)
				ops[n_ops++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			ops[n_ops++] = a;
			continue;
		}
		opts[n_opts++] = a;
		if (!takes_value(valued, a))
			continue;
		if (i + 1 >= argc) {
			memcpy(argv + from, opts, (size_t)n_opts * sizeof *argv);
			argv[from + n_opts] = NULL;
			free(opts);
			free(ops);
			return from + n_opts;
		}
		opts[n_opts++] = argv[++i];
	}
	i = from;
	memcpy(argv + i, opts, (size_t)n_opts * sizeof *argv);
	i += n_opts;
	if (dashes)
		argv[i++] = dashes;
	memcpy(argv + i, ops, (size_t)n_ops * sizeof *argv);
	free(opts);
	free(ops);
	return argc;
}

/*
** "--opt=VALUE" as two arguments, "--opt" and "VALUE", for the options in
** valued (GNU's long-option form), in argv[from..argc) before "--". Any
** other "--x=y" is left for the command to take or refuse. Returns argv
** or a new array (*fresh set to it, to be freed; the strings are argv's
** or, for the split ones, in *fresh's trailing space); *argc is updated.
*/
static char **split_equals(int *argc, char **argv, int from,
			   const char *valued, char ***fresh)
{
	int n = 0, i;
	size_t bytes = 0;
	for (i = from; i < *argc && strcmp(argv[i], "--"); i++) {
		const char *eq = strchr(argv[i], '=');
		if (!strncmp(argv[i], "--", 2) && eq) {
			char *o = lm_xasprintf("%.*s", (int)(eq - argv[i]),
					       argv[i]);
			if (takes_value(valued, o)) {
				n++;
				bytes += strlen(argv[i]) + 2;
			}
			free(o);
		}
	}
	*fresh = NULL;
	if (!n)
		return argv;
	size_t slots = (size_t)(*argc + n + 1);
	char **v = lm_xmalloc(slots * sizeof *v + bytes);
	char *text = (char *)(v + slots);
	int m = 0, in_opts = 1;
	for (i = 0; i < *argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		if (i >= from && !strcmp(a, "--"))
			in_opts = 0;
		if (i >= from && in_opts && !strncmp(a, "--", 2) && eq) {
			size_t k = (size_t)(eq - a);
			memcpy(text, a, k);
			text[k] = 0;
			if (takes_value(valued, text)) {
				v[m++] = text;
				text += k + 1;
				strcpy(text, eq + 1);
				v[m++] = text;
				text += strlen(eq + 1) + 1;
				continue;
			}
		}
		v[m++] = argv[i];
	}
	v[m] = NULL;
	*argc = m;
	*fresh = v;
	return v;
}

/* The command line as given, before permute(): argv[1..] of main. */
static int given_argc;
static char **given_argv;

char *cli_cmdline(void)
{
	return cli_db_cmdline(given_argc, given_argv);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		main_usage(stderr);
		return EXIT_INPUT;
	}
	if (cli_is_help(argv[1]) || !strcmp(argv[1], "help")) {
		if (argc > 2 && !cli_help(argv[2]))
			return EXIT_OK;
		main_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("lncsim %s\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	for (int i = 0; i < N_COMMANDS; i++) {
		const cli_command *c = &commands[i];
		if (strcmp(c->name, argv[1]) != 0)
			continue;
		for (int j = 2; j < argc; j++) {
			if (!strcmp(argv[j], "--"))
				break;
			if (cli_is_help(argv[j]))
				return cli_help(argv[1]);
		}
		given_argc = argc - 1;
		given_argv = lm_xcalloc((size_t)argc, sizeof *given_argv);
		memcpy(given_argv, argv + 1, (size_t)given_argc *
		       sizeof *given_argv);
		char **fresh;
		argv = split_equals(&argc, argv, 2 + c->has_subcommand,
				    c->valued, &fresh);
		if (c->permutes && argc > 2 + c->has_subcommand)
			argc = permute(argc, argv, 2 + c->has_subcommand,
				       c->valued);
		int rc = c->run(argc - 1, argv + 1);
		free(fresh);
		free(given_argv);
		return rc;
	}
	fprintf(stderr, "lncsim: unknown command '%s' (see 'lncsim --help')\n",
		argv[1]);
	return EXIT_INPUT;
}

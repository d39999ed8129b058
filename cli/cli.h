/*
** cli.h -- the lncsim program: one function per command, thin wrappers
** around the libraries. Exit codes: 0 ok, 1 a check failed, 2 bad usage or
** bad input, 3 internal error.
*/
#ifndef LNCSIM_CLI_H
#define LNCSIM_CLI_H

#include "common.h"

enum { EXIT_OK = 0, EXIT_CHECK = 1, EXIT_INPUT = 2, EXIT_INTERNAL = 3 };

typedef struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *usage;                 /* full --help text */
	const char *valued;  /* the options that take a value, space
				separated: "--opt=VALUE" is split into two
				arguments for them */
	int permutes;        /* the command takes operands: the options move
				in front of them (GNU-style) */
	int has_subcommand;  /* argv[1] is a subcommand word, kept first */
} cli_command;

/* Print "lncsim: msg" to stderr; returns the exit code for err->code. */
int cli_report(const lm_error *err);
/* Print "lncsim: COMMAND: fmt" usage error; returns EXIT_INPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...) LM_PRINTF(2, 3);
/*
** Parse a non-negative decimal option value v of option opt of command
** cmd into *out. Returns 0, or prints the usage error and returns
** EXIT_INPUT.
*/
int cli_parse_u64(const char *cmd, const char *opt, const char *v,
		  uint64_t *out);
/*
** Parse a size in bytes: a positive decimal integer, optionally followed
** by K, M, G or T (powers of 1024; "KiB" & co. accepted too), at most
** INT64_MAX. Returns 0, or prints the usage error and returns EXIT_INPUT.
*/
int cli_parse_bytes(const char *cmd, const char *opt, const char *v,
		    int64_t *out);
/*
** argv[i] is "--" in command cmd, which takes no operands: 0 when
** nothing follows it (the options simply end), else the usage error
** naming the first operand (returns EXIT_INPUT).
*/
int cli_no_operands(const char *cmd, int argc, char **argv, int i);
/* 1 if argv[i] is -h / --help. */
int cli_is_help(const char *a);
/* Print the help of a command to stdout; returns EXIT_OK. */
int cli_help(const char *cmd);

/*
** The command line as the user gave it (before the options were moved in
** front of the operands), as one string "lncsim COMMAND ARGS..." with
** arguments that need it quoted; caller frees.
*/
char *cli_cmdline(void);

/* Expand MODULE arguments into def.json paths; returns 0 or exit code. */
int cli_expand_modules(int argc, char **argv, char ***paths, int *n);
void cli_free_paths(char **paths, int n);

/* The commands. */
int cmd_verify(int argc, char **argv);
extern const char usage_verify[];
int cmd_run(int argc, char **argv);
extern const char usage_run[];
int cmd_gen(int argc, char **argv);
extern const char usage_gen[];
int cmd_diff(int argc, char **argv);
extern const char usage_diff[];
int cmd_fuzz(int argc, char **argv);
extern const char usage_fuzz[];
int cmd_report(int argc, char **argv);
extern const char usage_report[];
int cmd_db(int argc, char **argv);
extern const char usage_db[];
int cmd_link(int argc, char **argv);
extern const char usage_link[];
int cmd_mmt(int argc, char **argv);
extern const char usage_mmt[];
int cmd_lower(int argc, char **argv);
extern const char usage_lower[];
int cmd_klr(int argc, char **argv);
extern const char usage_klr[];

#endif

/*
** provision.h -- kernel provision: TranslateNKIASTToBIR
** turns every NKIKLIRKernel (IT56) carrier into a new function of kind nki
** plus an NKIKernel (IT55) call site, by one of two mechanisms:
**
**   Mechanism B  kernel_format "bir": a BIR-JSON file, functions[core id]
**   Mechanism A  anything else: a KLR CBOR file, lowered op by op by the
**                KLR -> BIR codegen (klr_codegen.c) with its helpers
**                (codegen_helpers.c)
**
** and InlineNKIKernel splices IT55 bodies into their callers.
**
** Ownership: lp_lower builds a NEW module (*out, free with lm_module_free);
** the input is never modified. Warnings are collected in an lp_warnings the
** caller frees with lp_warnings_free.
*/
#ifndef LNCSIM_PROVISION_H
#define LNCSIM_PROVISION_H

#include "common.h"
#include "module.h"

/* Messages that are not errors (the CLI prints them on stderr). */
typedef struct lp_warnings {
	int n, cap;
	char **msgs;
} lp_warnings;

void lp_warn(lp_warnings *w, const char *fmt, ...) LM_PRINTF(2, 3);
void lp_warnings_free(lp_warnings *w);

typedef struct lp_lower_opts {
	int inline_kernels;   /* run InlineNKIKernel after the lowering */
	/*
	** Directory the output module will be written into. When set, the
	** Const files of the kernels (and of the module, when the directory
	** differs from the module's) are copied there and the `file` fields
	** rewritten; when NULL nothing is written and the kernels' Const
	** paths are rewritten relative to the module's own directory.
	*/
	const char *out_dir;
	/*
	** has_out_dirfd: out_dirfd is out_dir already open (the caller made
	** it beneath a directory of its own); the files are written beneath
	** it, never through a symlink. Else out_dir is opened as given.
	*/
	int has_out_dirfd;
	int out_dirfd;
} lp_lower_opts;

/*
** TranslateNKIASTToBIR over a copy of `in` (then InlineNKIKernel when
** opts->inline_kernels). Carriers whose kernel skips this core (the LNC
** gate) are removed with a warning. The result passes lm_verify when the
** input did. Returns 0 or LM_EINPUT with err filled.
*/
int lp_lower(lm_module **out, const lm_module *in, const lp_lower_opts *opts,
	     lp_warnings *warn, lm_error *err);

/*
** InlineNKIKernel in place: every NKIKernel (IT55) call is replaced by the
** body of its function with operands rebound through func_args /
** func_outs; the called functions are removed.
*/
int lp_inline_nki(lm_module *m, lm_error *err);

#endif

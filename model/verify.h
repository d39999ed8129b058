/*
** verify.h -- the module verifier.
**
** Run before any simulation and on every linked result. The first problem
** found is reported as "FILE: function/block/instruction/operand: what".
*/
#ifndef LNCSIM_VERIFY_H
#define LNCSIM_VERIFY_H

#include "module.h"

typedef struct lm_verify_opts {
	int linked;   /* also check the linked-module rules */
} lm_verify_opts;

/* Returns 0 when the module is valid; else LM_EINPUT with err filled. */
int lm_verify(const lm_module *m, const lm_verify_opts *opts, lm_error *err);

/*
** lm_verify on each of mods[0 .. n-1] with the same opts, on the worker
** pool (one thread per CPU, at most 8) when there are several. Returns 0
** when all are valid; else the first failure in module order, as a loop
** would report it, with err filled.
*/
int lm_verify_modules(lm_module *const *mods, int n,
		      const lm_verify_opts *opts, lm_error *err);

/*
** Resolve an operand to its allocation and memory location in function f
** (allocations are looked up module-wide). NULL outputs on failure.
*/
int lm_resolve_arg(const lm_module *m, const lm_arg *a, lm_alloc **alloc,
		   lm_memloc **loc);

#endif

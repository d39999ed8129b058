/*
** diff.h -- the differential checker: the N per-core modules run
** side by side (the reference) against the linked module, same host inputs,
** every compared tensor bit-identical.
**
** The checker never links: it receives the linked module. The expected set
** of linked outputs is computed here from the per-core modules and the
** reference run: every ExternalOutput of every core minus the cross-core
** hand-offs -- outputs that an instruction of another core read in the
** reference run (through a remote_local_target view), unless bound to the
** host-boundary output buffer (a memory location of type Output: a model
** output another core also reads stays a host output).
*/
#ifndef LNCSIM_DIFF_H
#define LNCSIM_DIFF_H

#include "sim.h"

/* One compared tensor. */
typedef struct ls_tensor_cmp {
	char *name;
	int equal;                /* bit-identical */
	int64_t mismatches;       /* differing elements */
	int64_t first_index;      /* -1 when equal */
	uint32_t ref_bits, got_bits; /* raw bits at first_index (dtype width) */
	double ref_value, got_value;
	double max_abs_diff;
	int schedule;             /* 0: plain cost model; k: perturbation k */
} ls_tensor_cmp;

typedef enum ls_diff_status {
	LS_DIFF_PASS = 0,
	LS_DIFF_MISMATCH,         /* some tensor differs */
	LS_DIFF_OUTPUT_SET,       /* linked outputs != expected set */
	LS_DIFF_REF_ERROR,        /* the reference run failed */
	LS_DIFF_LINKED_ERROR      /* the linked run failed */
} ls_diff_status;

typedef struct ls_diff_result {
	ls_diff_status status;
	char message[1024];       /* one-line summary of the failure */
	int n_expected;
	char **expected;          /* expected linked output names (sorted) */
	int n_handoffs;
	char **handoffs;          /* outputs removed as cross-core hand-offs */
	int n_cmp;
	ls_tensor_cmp *cmp;       /* every comparison made */
	ls_result ref, linked;    /* the plain-schedule runs (stats, outputs) */
	int schedules_run;
} ls_diff_result;

typedef struct ls_diff_opts {
	int schedules;            /* extra perturbed schedules (0: none) */
	ls_options run;           /* limits and trace for every run */
} ls_diff_opts;

void ls_diff_result_free(ls_diff_result *r);

/* One entry of the linked module's tensor map, as the check needs it
** (the caller fills these from wherever the map came from; borrowed). */
typedef struct ls_tmap_entry {
	const char *name;         /* layer_name: an allocation name */
	int is_output;
	int n_shape;
	const int64_t *shape;     /* sim_shape */
} ls_tmap_entry;

/*
** The tensor map must bind the linked module's host I/O exactly: every
** ExternalInput / ExternalOutput allocation has exactly one entry of the
** same direction and shape, and every entry names such an allocation.
** Returns 0, or -1 with the problem in msg ("tensor-map: ...").
*/
int ls_check_tensor_map(const lm_module *linked, const ls_tmap_entry *e,
			int n, char *msg, size_t len);

/*
** Run both sides and compare: each side's machine is prepared once and
** run once per schedule. mods and linked have passed lm_verify (linked:
** with the linked rules) and ls_check_memory with opts->run.max_memory
** -- a caller checks the memory before it makes the inputs, which are
** part of it -- and neither is checked again here. Returns 0 when the
** check ran (pass or fail: see out->status), or LM_EINPUT for bad input
** (e.g. an external output declared by two modules) with err filled.
*/
int ls_diff(lm_module *const *mods, int n_mods, const lm_module *linked,
	    const ls_tensors *inputs, const ls_diff_opts *opts,
	    ls_diff_result *out, lm_error *err);

/* The expected linked output names and the hand-offs, computed from the
** per-core modules and the outputs of their side-by-side run (ref_outputs,
** whose read_by_other_module flags name the outputs another module read;
** NULL: none read). The caller frees both arrays and their strings. */
int ls_expected_outputs(lm_module *const *mods, int n_mods,
			const ls_tensors *ref_outputs, char ***expected,
			int *n_expected, char ***handoffs, int *n_handoffs,
			lm_error *err);

#endif

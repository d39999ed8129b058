/*
** linker.h -- the bir_linker reference model:
** N finished per-core modules -> ONE new module "<name>/sgLnk", its link
** directory and tensor map, and the static post-link matmul report.
**
** The linker never mutates its inputs: it builds a new lm_module by cloning
** every function and instruction (lm_inst_copy) and rewriting references
** through explicit per-core name maps (LLVM IRMover / ValueMapper style).
**
** Every link step is one function in linker/ named as in the seed and
** can be switched off through lk_options.skip, so a differential checker can
** prove it would notice each step missing. docs/linker.md describes the
** steps, the names they make and the choices the spec left open.
**
** Ownership: lk_link returns a module the caller frees with lm_module_free
** and fills a report the caller frees with lk_report_free.
*/
#ifndef LNCSIM_LINKER_H
#define LNCSIM_LINKER_H

#include "common.h"
#include "module.h"
#include "fileset.h"

/* The steps, in the order lk_link runs them (names for --skip and -v). */
typedef enum lk_step {
	LK_STEP_COPY_MODULES_AS_FUNCTIONS = 0, /* 1: clone cores as functions */
	LK_STEP_COPY_ALLOCS,                   /* 2: inpMap/outMap/memMap */
	LK_STEP_REMAP_REGISTERS,               /* 2: register references
						  follow the registers */
	LK_STEP_FPASS_INSERT_RETURNS,          /* 3: cb_return_ barrier + Return */
	LK_STEP_FPASS_INSERT_SWITCH_QUEUE_INSTANCES, /* 3: I-SQI- switches */
	LK_STEP_BUILD_MAIN_MEMLOCS,            /* 4: external I/O into main */
	LK_STEP_MOVE_MODULES_AS_FUNCTIONS,     /* 4: parameters, instance
						  tensors (modular flow) */
	LK_STEP_BUILD_MAIN_ALIASES,            /* 4: module aliases */
	LK_STEP_FIX_OUTPUT_KIND,               /* 5: demote hand-off outputs */
	LK_STEP_BUILD_MAIN_TENSOR_MAP,         /* 6: unified tensor map */
	LK_STEP_INIT_QUEUES,                   /* 7: queue + semaphore pool */
	LK_STEP_ADD_FN_CALL,                   /* 8: dispatcher Calls */
	LK_STEP_SETUP_LINK_DIR,                /* 9: artifacts, file fields */
	LK_STEP_RENUMBER_CORE_BARRIERS,        /* 10: global barrier ids */
	LK_STEP_CHECK_BARRIER_ORDER,           /* 11: static deadlock check */
	LK_STEP_POST_LINK_MMT_REPORT,          /* 12: matmul report */
	LK_STEP_VERIFY,                        /* lm_verify(linked) on the result */
	LK_N_STEPS
} lk_step;

#define LK_SKIP(step) (1u << (step))

/* "copy_modules_as_functions", ...; NULL when out of range. */
const char *lk_step_name(lk_step s);
/*
** Parse a comma-separated step list into a skip mask (or-ed into *mask).
** "run_function_passes" names both fpass_ steps. Unknown name: LM_EINPUT
** with "unknown step 'x' (steps: ...)".
*/
int lk_parse_skip(const char *list, unsigned *mask, lm_error *err);

typedef struct lk_options {
	unsigned skip;        /* LK_SKIP(step) bits: steps switched off */
	int dry_run;          /* run every check, keep no module (*out = NULL) */
	const char *out_dir;  /* where the link dir will go (NULL: ".");
				 sets the linked module's path and dir */
	int abs_file_paths;   /* in-memory use without a link dir: `file`
				 fields become absolute source paths */
	lm_buf *log;          /* -v: one line per step appended (may be NULL) */
	int trust_inputs;     /* the caller already ran lm_verify on every
				 input: skip it here (else every input is
				 verified first; a bad input is undefined
				 behaviour with this set) */
	int threads;          /* workers cloning the cores: 0 = one per
				 online CPU (at most 8; one under 16k
				 instructions), 1 = no threads; the result
				 is the same */
	const lm_fileset *files; /* non-NULL: the inputs' `file` /
				 `klir_binary` files are in this set (by
				 their path beside the module), not on disk:
				 setup_link_dir looks them up there and
				 touches no file (use with abs_file_paths;
				 lk_write_link_dir reads the disk) */
	int64_t barrier_base; /* renumber_core_barriers' first id (>= 0) */
} lk_options;

/* One tensor-map entry. */
typedef struct lk_tensor_entry {
	char *layer_name;     /* the layer's name: a core's own tensor map's,
				 else the allocation name */
	char *allocation;     /* the allocation it binds when that is not
				 layer_name (else NULL) */
	char *sim_format;     /* layout letters, see docs/linker.md */
	int n_shape;
	int64_t *sim_shape;
	char *tf_file;        /* "<layer_name>.npy" */
	int sbuf_compatible;
	int sbuf_given;       /* read: the map had the key */
	int verified;
	int is_output;        /* 0 input, 1 output */
	lm_dtype dtype;
	int n_cores;          /* cores that declared it */
	int64_t *cores;
} lk_tensor_entry;

/* One link-directory artifact. */
typedef struct lk_artifact {
	char *src;            /* absolute path of the core's file */
	char *root;           /* its module directory (realpath): src is
				 read beneath it */
	char *dst;            /* path relative to the link dir */
	int copy;             /* 1: copied (host file), 0: symlinked */
	int64_t core;
} lk_artifact;

/* One row of the static matmul report (per function, plus a total). */
typedef struct lk_mmt_row {
	char *function;
	int64_t core;         /* -1 when the function has no neuron_core_id */
	int64_t matmuls, macs, pe_cycles;
	double fill_num, fill_den; /* sum(K*M*N), sum(128*128*N*passes) */
} lk_mmt_row;

typedef struct lk_mmt_report {
	char *arch;
	int n_rows;
	lk_mmt_row *rows;
	lk_mmt_row total;
} lk_mmt_report;

typedef struct lk_report {
	char *name;           /* "<name>/sgLnk" */
	char *base_name;      /* "<name>" */
	int n_cores;
	int64_t *cores;       /* core ids in core order */
	unsigned ran;         /* LK_SKIP(step) bits of steps that ran */

	/* counts in the seed's vocabulary */
	int n_input_insts, n_insts;          /* cloned / in the linked module */
	int n_functions;
	int n_allocs;
	int *collisions;     /* per core (core order): names renamed nc<c>. */
	int n_views;         /* remote_local_target views resolved */
	int n_core_maps;     /* cores' own tensor-map.json files merged */
	int n_name_handoffs; /* inputs matched by name to another core's
				output (inpMap / outMap) */
	int n_shared_inputs; /* external inputs unified across cores */
	int n_main_allocs;   /* allocations held by main */
	int n_aliases, n_demoted;
	int n_returns, n_switches, n_calls;
	int n_defs, n_instances; /* modular flow (hlo_netlist.json): module
				    definitions and their instances; 0 when
				    each module is one instance */
	int n_queues_copied, n_new_queues, n_instances_existing, n_semaphores;
	int n_renumbered, n_kept_ids, n_groups_checked;

	int n_tensors;
	lk_tensor_entry *tensors;
	int n_artifacts;
	lk_artifact *artifacts;
	lk_mmt_report mmt;

	int copy_workers;     /* threads that cloned the cores */
	/* wall-clock seconds per step; [LK_N_STEPS]: checking the inputs */
	double seconds[LK_N_STEPS + 1];
} lk_report;

void lk_report_free(lk_report *r);

/*
** Link n per-core modules (any order; linked in core order) into a new
** module. On success *out owns it (NULL with opts->dry_run). *rep (may be
** NULL) is filled as far as the link got: free it with lk_report_free in
** every case. On failure returns LM_EINPUT (bad input), LM_ECHECK (the
** result fails the verifier or the tensor-map check: only with skipped
** steps) or LM_EINTERNAL with err filled; *out is NULL. opts may be NULL.
** The inputs are not modified.
*/
/*
** The compiler's pre-merge renumberCoreBarriers(modules, base): one counter
** from base over the still separate modules mods[0..n) (in that order;
** functions, instructions and nested bodies in order): every CoreBarrier
** with renumber true gets the next id not held by a renumber: false
** barrier of any of them. Unlike lk_link this changes the modules given.
** *next (may be NULL): the counter after the last. Errors (LM_EINPUT):
** base < 0, an id past 2^32 - 1 (the barrier's 32-bit field).
*/
int lk_renumber_core_barriers(lm_module *const *mods, int n, int64_t base,
			      int64_t *next, lm_error *err);

int lk_link(lm_module *const *mods, int n, const lk_options *opts,
	    lm_module **out, lk_report *rep, lm_error *err);

/*
** Write the link directory <out_dir>/<rep->base_name>/sgLnk/: def.json
** (the linked module), tensor-map.json (when the tensor map was built), the
** artifacts of rep, and the manifest .lncsim-link-manifest listing what was
** written. The directory is built beside the old one and swapped in under
** an flock on <out_dir>/<name>: a failure leaves the previous link intact.
** An existing sgLnk/ is refused unless force; then the previous manifest's
** entries are removed and the user's entries moved into the new directory
** (refused when the new link writes there). Never writes, follows a
** symlink or deletes outside out_dir (docs/linker.md, docs/files.md).
** flags: LK_WRITE_FORCE, LK_WRITE_PRETTY (def.json indented; else on one
** line, the compact form).
*/
#define LK_WRITE_FORCE 1
#define LK_WRITE_PRETTY 2
int lk_write_link_dir(const lm_module *linked, const lk_report *rep,
		      const char *out_dir, int flags, lm_error *err);

/*
** The reference of a modular link (docs/linker.md, "Module definitions
** with several instances"): when mods lie beside a <name>/hlo_netlist.json,
** one module per instance -- its definition's module on the instance's
** core, the parameters renamed to the instance's tensors -- in dispatcher
** order (*n_out of them; free each with lm_module_free, then the array).
** Without a netlist *n_out is 0. The netlist's errors are lk_link's
** (LM_EINPUT).
*/
int lk_instance_modules(lm_module *const *mods, int n, lm_module ***out,
			int *n_out, lm_error *err);

/* The tensor map as JSON text (caller frees). */
char *lk_tensor_map_json(const lk_report *rep);
/*
** Read a tensor map as lk_tensor_map_json writes it into *out (*n
** entries; free with lk_tensor_entries_free). A member that is missing or
** of another type reads as empty ("" / 0 / false / no cores; kind other
** than "output": an input), except sim_shape: whole numbers >= 0 or the
** entry is refused ("PATH: entry 'NAME': sim_shape must hold ...").
** LM_EINPUT with err "PATH: ..." when the file cannot be read, is not
** JSON ("malformed JSON") or has no "tensors" array.
*/
int lk_tensor_map_read(const char *path, lk_tensor_entry **out, int *n,
		       lm_error *err);
void lk_tensor_entries_free(lk_tensor_entry *t, int n);

/*
** Static matmul report of a module (step 12; also `lncsim mmt`): per
** function matmul count, MACs (K*M*N), PE cycles (N*passes + matmul_fixed of
** the module's arch) and array fill sum(K*M*N) / sum(128*128*N*passes).
** Free with lk_mmt_report_free.
*/
int lk_matmul_report(const lm_module *m, lk_mmt_report *out, lm_error *err);
void lk_mmt_report_free(lk_mmt_report *r);
/* Fill in [0, 1] of a row (0 when there is no matmul). */
double lk_mmt_fill(const lk_mmt_row *row);
/* The report as an aligned text table / as JSON (caller frees). */
void lk_mmt_format_table(const lk_mmt_report *r, lm_buf *b);
char *lk_mmt_json(const lk_mmt_report *r);

#endif

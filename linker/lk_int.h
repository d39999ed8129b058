/*
** lk_int.h -- internal: the link context shared by the step files of the
** bir_linker model (copy.c, fpass.c, memlocs.c, queues.c, barriers.c,
** linkdir.c, tensormap.c, mmt.c, link.c) and the helpers of ctx.c.
*/
#ifndef LNCSIM_LK_INT_H
#define LNCSIM_LK_INT_H

#include "common.h"
#include "module.h"
#include "linker.h"

/* A recently cloned instruction name (copy.c's dependency cache). */
typedef struct lk_recent {
	uint64_t hash;
	const char *name;    /* in the source module; NULL: empty */
	int idx;             /* census index */
} lk_recent;

#define LK_RECENT 64

/* Per-core state: the source module and its name maps (orig -> new). */
typedef struct lk_core {
	const lm_module *src;
	int64_t core;        /* the key <c> of nc<c>: neuron_core_id; in a
				modular link the definition's id */
	int idx;             /* position in core order */
	/* name maps (orig -> the name to reference in the linked module);
	   values are ctx-owned strings, keys live in src. A name renamed
	   nc<c>. on collision maps to its new name; a remote_local_target
	   view maps to its unified producer. */
	lm_strmap alloc_ref;
	lm_strmap memloc_ref;
	int remap_regs;      /* register references through alloc_ref too
				(remap_registers not skipped) */
	lm_strmap funcs;      /* function name -> new name (always) */
	lm_strmap allocs_by_name; /* name -> const lm_alloc * of src */
	int first_func;      /* index of nc<c> in out->functions (-1: none) */
	/* instruction arrays copy_instrs allocated with spare slots for the
	   function passes (lk_block_insert uses them while the block still
	   holds that array) */
	lm_inst *slack[2];
	int slack_cap[2];
	/* zeroed slots copy_instrs left at the head of nc<c>'s first block
	   for the queue switches of step 3b (census count) */
	int sqi_gap;
	int n_funcs;
	int n_collisions;
	/* the core's own tensor-map.json (read_core_tensor_map): its
	   entries, and allocation name -> entry */
	char *tmap_path;
	struct lk_tensor_entry *tmap;
	int n_tmap;
	lm_strmap tmap_by_alloc;
	/* copy_modules_as_functions: census index of each instruction in
	   visiting order, and the latest names cloned */
	int *name_seq;
	int n_name_seq, cap_name_seq, name_pos;
	lk_recent recent[LK_RECENT];
} lk_core;

/* A resolved remote_local_target view (for aliases and fix_output_kind). */
typedef struct lk_view {
	char *producer;      /* unified producer allocation (ctx-owned) */
	char *consumer;      /* the view's name in the linked module */
	int64_t producer_core, consumer_core;
} lk_view;

/* An external input several cores declare (plan_main_memlocs). */
typedef struct lk_merge {
	const lm_alloc *first;  /* the first declarer's allocation (src) */
	int first_ci;
	uint64_t core_mask;     /* bit i: core index i declared it */
} lk_merge;

/* An external allocation held by main: which cores declared it. */
typedef struct lk_decl {
	const char *name;    /* linked name (ctx-owned) */
	const char *orig;    /* the name in the declaring cores */
	uint64_t core_mask;  /* bit i: core index i declared it */
	int has_inst_core;   /* an instance's tensor (modular link): */
	int64_t inst_core;   /* the core the instance runs on */
} lk_decl;

/* One instance of a module definition (hlo_netlist.json). */
typedef struct lk_instance {
	int def;             /* index into the netlist's definitions */
	int64_t def_id;      /* the definition's id (the netlist's; the key of
				its function nc<d>, not a core) */
	int seq;             /* position in the netlist's instances */
	int ordinal;         /* <i> of call_def_<d>_instance_<i> */
	int64_t core;        /* the core it runs on */
	int n_args;          /* formal -> actual, one per parameter */
	char **formal;       /* the definition's declared names */
	char **actual;       /* the instance's tensors (main) */
	char **linked_formal; /* the parameter's name in the linked module
				(move_modules_as_functions) */
} lk_instance;

/* The modular-flow metadata (netlist.c). */
typedef struct lk_netlist {
	char *path;          /* <name>/hlo_netlist.json */
	int n_defs;
	int64_t def_id[64];
	int *def_mod;        /* definition -> index into the modules given */
	int n_inst;
	lk_instance *inst;   /* dispatcher order: by definition id, then
				netlist order */
} lk_netlist;

/* Read <name>/hlo_netlist.json beside mods (n_inst 0: none there). */
int lk_netlist_load(lm_module *const *mods, int n, const lm_fileset *files,
		    lk_netlist *nl, lm_error *err);
int lk_netlist_check_defs(const lk_netlist *nl, lm_module *const *mods,
			  lm_error *err);
void lk_netlist_free(lk_netlist *nl);

/* A name-matched hand-off (copy_allocs' inpMap / outMap): an ExternalOutput
** of one core and the ExternalInputs of the same name of other cores. */
typedef struct lk_handoff {
	const lm_alloc *out;    /* the producer's output (src) */
	int producer_ci;
	uint64_t consumer_mask; /* bit i: core index i reads it as an input */
} lk_handoff;

typedef struct lk_ctx {
	lk_core *cores;      /* core order */
	int n;
	const lk_options *opts;
	lk_report *rep;
	lm_module *out;
	lm_buf *log;
	lm_error *err;
	/* ctx-owned strings (map values): arena chunks */
	char **strs;
	int n_strs, cap_strs;
	char *arena;
	size_t arena_left;
	lk_view *views;
	int n_views, cap_views;
	/* allocation name in main -> its lk_decl (build_main_memlocs) */
	lm_strmap main_origin;
	struct lk_decl *decls;
	int n_decls;
	/* declared name -> lk_merge of a shared external input */
	lm_strmap merged;
	lk_merge *merges;
	int n_merges;
	/* declared name -> lk_handoff of a name-matched hand-off */
	lm_strmap handoffs;
	lk_handoff *hos;
	int n_hos;
	int n_handoff_inputs;  /* consumer declarations (inputs no more) */
	struct census *census; /* during copy_modules_as_functions */
	/* link-dir plan per core: source `file` string -> link-dir path */
	lm_strmap *file_maps;
	/* the modular flow: the netlist (NULL: one instance per module), the
	   definition of each core index, the instances' tensors in main */
	lk_netlist *net;
	int *def_of;          /* core index -> netlist definition */
	lk_decl *inst_decls;
	int n_inst_decls;
	int n_bound_inputs;   /* instance inputs (the tensor map's coverage) */
} lk_ctx;

/*
** One worker of copy_instrs (the cores are cloned in parallel, each core
** by one worker): its scratch (shallow remapped operands, renamed names),
** its pool for the packed instructions, its count.
*/
typedef struct lk_copier {
	lk_ctx *x;
	lm_arg *s_args;
	char **s_strs;
	lm_kv *s_kvs;
	char *s_names;
	int cap_args, cap_strs_s, cap_kvs, cap_names;
	lm_pool pool;
	long n_insts;        /* instructions cloned */
} lk_copier;

#define LK_MAX_THREADS 8

/* ---- context helpers (ctx.c) ------------------------------------------ */

/* A ctx-owned copy of a formatted string (freed with the context). */
char *lk_str(lk_ctx *x, const char *fmt, ...) LM_PRINTF(2, 3);
/* A ctx-owned "nc<core>.<name>". */
char *lk_nc(lk_ctx *x, int64_t core, const char *name);
/* Replace *p (freeing it) by a copy of v. */
void lk_set(char **p, const char *v);
/* One -v line. */
void lk_log(lk_ctx *x, const char *fmt, ...) LM_PRINTF(2, 3);
/* Core index (core order) of a core id; -1 when not linked. */
int lk_core_index(const lk_ctx *x, int64_t core);
/* Open count zeroed instruction slots in a block at position pos; returns
** the first. Uses the spare slots copy_instrs reserved when it can. */
lm_inst *lk_block_insert(lk_ctx *x, lm_block *b, int pos, int count);
/* The out function of core index i ("nc<c>"), or NULL. */
lm_function *lk_core_function(lk_ctx *x, int i);
/* Core index of an out function (from its neuron_core_id); -1 for none. */
int lk_function_core(const lk_ctx *x, const lm_function *f);

/* Call fn on every instruction of blocks, then on those of its nested
** body, if any (a Loop's, a DynamicForLoop's, ...). */
typedef void (*lk_inst_fn)(lk_ctx *x, int ci, lm_inst *in, void *arg);
void lk_walk_blocks(lk_ctx *x, int ci, lm_block *bs, int nb, lk_inst_fn fn,
		    void *arg);

/* Top-level instructions of n functions (Loop bodies not counted): a
** cheap size for sizing tables and budgets. */
long lk_top_insts(const lm_function *fs, int n);

/* The steps (one per seed step). Each returns 0 or an LM_E* code. */
int copy_modules_as_functions(lk_ctx *x);
int plan_handoffs(lk_ctx *x);
int copy_allocs(lk_ctx *x, int ci, lm_function *dst, const lm_function *src);
int resolve_remote_targets(lk_ctx *x);
int copy_instrs(lk_copier *cp, int ci, lm_function *dst,
		const lm_function *src);
int run_function_passes(lk_ctx *x);
int fpass_insert_returns(lk_ctx *x);
int fpass_insert_switch_queue_instances(lk_ctx *x);
int plan_main_memlocs(lk_ctx *x);
int build_main_memlocs(lk_ctx *x);
int build_main_aliases(lk_ctx *x);
int fix_output_kind(lk_ctx *x);
int build_main_tensor_map(lk_ctx *x);
int init_queues(lk_ctx *x);
int add_fn_call(lk_ctx *x);
int move_modules_as_functions(lk_ctx *x);
int setup_link_dir(lk_ctx *x);
int renumber_core_barriers(lk_ctx *x);
int check_barrier_order(lk_ctx *x);
int post_link_mmt_report(lk_ctx *x);

#endif

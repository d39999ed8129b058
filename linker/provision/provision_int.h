/*
** provision_int.h -- internals shared by the kernel-provision files:
** the KLR -> BIR codegen context (klr_codegen.c), its helpers
** (codegen_helpers.c), and the small IR-building utilities (irutil.c) the
** driver (provision.c), the inliner (inline.c) and the codegen use.
*/
#ifndef LNCSIM_PROVISION_INT_H
#define LNCSIM_PROVISION_INT_H

#include "common.h"
#include "module.h"
#include "provision.h"
#include "klr.h"

/* State shared by all carriers of one lp_lower run. */
typedef struct lp_lower_ctx {
	lm_module *m;            /* the module being lowered (the copy) */
	const lp_lower_opts *opts;
	lp_warnings *warn;
	int next_id;             /* helper-name ids, monotonic per run */
	int warned_identity;     /* the identity performance warning is given */
	lm_strmap files;         /* paths taken under the output directory */
} lp_lower_ctx;

/* Hazard record of one allocation: last writer and readers since. */
typedef struct cg_hazard {
	char *writer;
	int n_readers, cap_readers;
	char **readers;
} cg_hazard;

/*
** The codegen context of one KLR kernel (KlirToBirCodegen): the function
** being built, the caches of the helpers, and the budget.
*/
typedef struct lp_cg {
	lp_lower_ctx *lc;
	const char *path;        /* KLR file, for messages */
	char *kname;             /* kernel name */
	lm_function *f;          /* the function being built (not yet in m) */
	lm_block *blk;           /* current block of f */
	lm_error *err;
	char where[256];         /* statement being lowered, for messages */
	int n_partitions;        /* arch partition count (128) */
	int64_t sbuf_bytes;      /* arch SBUF bytes per partition */
	/* helper caches */
	char *zero_bias;         /* allocation name, NULL until built */
	char *transpose_psum;    /* PSUM scratch of DVE-style transposes */
	char *queue;             /* DMA queue of the kernel, NULL until used */
	/* tensors: allocation name -> index + 1 into f->allocs */
	lm_strmap tensors;
	int n_unplaced, cap_unplaced;
	int *unplaced;           /* indexes of allocations to place later */
	lm_strmap hazards;       /* allocation name -> cg_hazard */
	lm_strmap inst_names;    /* instruction names used in f */
	int n_insts_made;
	int n_barriers;          /* barrier ids given (coreBarrier, sendRecv) */
	int n_core_barriers;     /* coreBarrier statements lowered */
	int n_sendrecvs;         /* sendRecv / sendRecvCompute lowered */
	int64_t core;            /* the carrier's core id (0 when unset) */
	int has_core;            /* the carrier has a core id */
	char *fence;             /* the last fence, the first writer of an
				    allocation first seen after it */
	/* budget (getSbufMaxBytes / getPsumMaxBankId) */
	int64_t sb_max;
	int64_t psum_max_bank;   /* -1 when no PSUM tensor */
} lp_cg;

/* ---- IR building utilities (irutil.c) --------------------------------- */

/* Append instruction *in (moved: *in is zeroed) to block b. */
void lp_ir_block_append(lm_block *b, lm_inst *in);
/* Append an allocation (moved) to f; returns its index. */
int lp_ir_add_alloc(lm_function *f, lm_alloc *a);
/* name, or name_1, name_2, ... : the first not in any of the maps. */
char *lp_ir_unique_name(const char *name, const lm_strmap *a, const lm_strmap *b);
/* Call fn on every instruction of blocks, the instructions of nested
** bodies too (a Loop's, a DynamicForLoop's, ...); not on a Loop itself. */
typedef void (*lp_ir_inst_fn)(lm_inst *in, void *ud);
void lp_ir_walk(lm_block *bs, int nb, lp_ir_inst_fn fn, void *ud);
/* The same, and fn on each Loop too (before its body): for the walks
** that rename references, which a Loop's axes may hold. */
void lp_ir_walk_loops(lm_block *bs, int nb, lp_ir_inst_fn fn, void *ud);
/*
** Make f's allocation, memory-location, instruction and function names
** unique against module m without its function `skip` (-1: none):
** colliding names become NAME_1, NAME_2, ... and f's references follow.
*/
void lp_ir_adopt_names(lm_module *m, int skip, lm_function *f);
/* Add a dependency name to an instruction (no duplicates). */
void lp_ir_add_dep(lm_inst *in, const char *name);
/* Replace *s by the mapped name when the map has it. */
void lp_ir_remap(char **s, const lm_strmap *map);
/* Every allocation, memory-location, instruction and function name of a
** module. */
typedef struct lp_ir_names {
	lm_strmap allocs, memlocs, insts, funcs;
} lp_ir_names;
/* Fill n from module m, skipping function index `skip` (-1: none); free
** with lp_ir_names_free. */
void lp_ir_names_of(lp_ir_names *n, lm_module *m, int skip);
void lp_ir_names_free(lp_ir_names *n);

/* ---- the codegen and its helpers -------------------------------------- */

void lp_cg_init(lp_cg *cg, lp_lower_ctx *lc, const char *path,
		lm_error *err);
void lp_cg_free(lp_cg *cg);
/* Instruction name unique in the function: base, base.1, ... */
char *lp_cg_inst_name(lp_cg *cg, const char *base);
/*
** Append *in to the current block: computes its dependencies from the
** hazards of its operands (RAW, WAW, WAR per allocation), records it, and
** zeroes *in.
*/
void lp_cg_emit(lp_cg *cg, lm_inst *in);
/* lp_cg_emit of an instruction that orders everything around it: it
** depends on every earlier access and every later access depends on it. */
void lp_cg_emit_fence(lp_cg *cg, lm_inst *in);
/* Forget every recorded access: nothing later depends on what came
** before (the engines were joined). */
void lp_cg_hazards_reset(lp_cg *cg);
/*
** Create an allocation with one memory location of the same name.
** placed: addr/base are given; else the tensor is placed after the walk.
*/
int lp_cg_add_tensor(lp_cg *cg, const char *name, lm_tensorkind kind,
		     lm_dtype dt, lm_memtype mt, const int64_t *shape,
		     int n_shape, int64_t partitions, int64_t bytes_pp,
		     int placed, int64_t addr, int64_t base);
/* getBankId: the PSUM bank of a byte address within the partition. */
int64_t lp_cg_bank_id(int64_t addr);
/* getActBiasTensor: the cached fp32 zero bias [partitions, 1]. */
const char *lp_cg_zero_bias(lp_cg *cg);
/* getIdentityMatrix: the cached 128x128 identity of dtype dt. */
const char *lp_cg_identity(lp_cg *cg, lm_dtype dt);
/* A PSUM scratch bank for transposes whose destination is not PSUM. */
const char *lp_cg_transpose_psum(lp_cg *cg);
/* The kernel's DMA queue (created in the module on first use). */
const char *lp_cg_queue(lp_cg *cg);
/* Give addresses to the unplaced tensors; compute the budget. */
int lp_cg_place(lp_cg *cg);

/* Lower the LncKernel `lnc` (body for `core`) into cg->f (klr_codegen.c). */
int lp_codegen_lnc(lp_cg *cg, const lp_kval *lnc, int64_t core);

#endif

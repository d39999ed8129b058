/*
** arch.h -- the gen2 / gen3 / gen4 machine tables, in one place.
**
** Every figure here is approximate: a cost model good enough to compare
** schedules and utilization, not a cycle-accurate description of silicon.
*/
#ifndef LNCSIM_ARCH_H
#define LNCSIM_ARCH_H

#include <stdint.h>
#include "dtype.h"

enum { LM_PARTITIONS = 128, LM_PSUM_BANKS = 8, LM_PSUM_BANK_BYTES = 2048,
       LM_PE_ROWS = 128, LM_PE_COLS = 128 };

typedef enum lm_engine {
	LM_ENG_UNASSIGNED = 0,
	LM_ENG_PE,
	LM_ENG_ACT,
	LM_ENG_DVE,
	LM_ENG_POOL,
	LM_ENG_SP,
	LM_ENG_DMA,
	LM_ENG_ALL,    /* every engine: an instruction broadcast to all */
	LM_ENG_COUNT
} lm_engine;

/* BIR spelling: "PE", "Activation", "DVE", "Pool", "SP", "DMA", "ALL",
** "Unassigned". */
const char *lm_engine_name(lm_engine e);
lm_engine lm_engine_parse(const char *s); /* -1 when unknown */

typedef struct lm_arch {
	const char *name;          /* "gen2", "gen3", "gen4" */
	const char *products;      /* "trn1/inf2", ... */
	int partitions;            /* 128 */
	int64_t sbuf_bytes;        /* per partition */
	int64_t psum_bytes;        /* per partition: 8 banks x 2 KiB */
	double clock_ghz[LM_ENG_COUNT]; /* PE, ACT, DVE, POOL, SP; DMA unused */
	/* costs, in cycles of the engine's own clock */
	int matmul_fixed;          /* Matmult: N * passes + matmul_fixed */
	int elem_fixed[LM_ENG_COUNT]; /* ACT/DVE/POOL: elems/partition + fixed */
	int sem_op_cycles;         /* semaphore ops */
	int64_t barrier_latency_ps;
	int64_t dma_latency_ps;    /* fixed per-transfer latency */
	double dma_bytes_per_ps;   /* per queue */
	int dma_issue_cycles;      /* issuing engine's share of a DMA (sim) */
} lm_arch;

/* Table lookup by name; NULL when unknown. */
const lm_arch *lm_arch_get(const char *name);
/* PE passes over the array per column for a dtype (fp32: 4, others: 1). */
int lm_arch_pe_passes(lm_dtype moving);
/*
** Matmult shape and PE cost, the one rule the matmul report (linker/mmt.c)
** and the simulator's cost model (sim/cost.c) share. Inputs: partitions and
** free size of the stationary (ins[0]), moving (ins[1]) and output operand.
**   K = stationary partitions, M = stationary free size,
**   N = moving free size, or for is_transpose (out[f][p] = mv[p][f] through
**       an F x F identity) the output's free size P;
**   pe_cycles = N * passes(moving dtype) + matmul_fixed.
*/
typedef struct lm_matmult_cost {
	int64_t k, m, n;
	int passes;                /* lm_arch_pe_passes(moving dtype) */
	int64_t pe_cycles;
} lm_matmult_cost;
void lm_matmult_pe_cost(const lm_arch *a, int64_t st_parts, int64_t st_free,
			int64_t mv_free, int64_t out_free, lm_dtype moving,
			int is_transpose, lm_matmult_cost *c);
/* Picoseconds of n cycles at the engine's clock (rounded up). */
int64_t lm_arch_cycles_ps(const lm_arch *a, lm_engine e, int64_t cycles);

#endif

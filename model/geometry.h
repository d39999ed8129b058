/*
** geometry.h -- what a physical_ap operand walks: its element count,
** partitions and the range it reaches inside its memory location. The
** verifier refuses an operand whose geometry fails; the simulator lays
** operands out from the same numbers. One function computes them, with
** every step of the arithmetic checked, so the two cannot disagree.
*/
#ifndef LNCSIM_GEOMETRY_H
#define LNCSIM_GEOMETRY_H

#include "module.h"

/* Elements one operand may walk (a bound on simulator loops). */
#define LM_MAX_OPERAND_ELEMS ((int64_t)INT32_MAX)

typedef struct lm_geom {
	int is_dram;      /* the memory location is DRAM */
	int esize;        /* bytes per element (the operand's dtype) */
	int64_t count;    /* elements walked (product of the nums) */
	int64_t parts;    /* ap[0].num: SB/PSUM partitions; DRAM: the outer
			     pair's num */
	int64_t free;     /* SB/PSUM: elements per partition; DRAM: count */
	int64_t part;     /* SB/PSUM: first partition walked, memory
			     location base + start_partition; DRAM: 0 */
	int64_t pstep;    /* SB/PSUM: partitions one step of ap[0] moves
			     (lm_arg_part_step, 1 for legacy operands);
			     DRAM: 0 */
	int64_t elo, ehi; /* elements offset reaches, both included (SB/PSUM:
			     within one partition, the first pair left out) */
	int64_t lo, hi;   /* bytes [lo, hi) of elo..ehi: SB/PSUM within each
			     partition of the memory location (add its addr
			     for the byte in the partition); DRAM from the
			     memory location's start */
} lm_geom;

/*
** The geometry of physical_ap operand a, whose memsetref and memref the
** caller resolved to allocation al and its memory location loc (both
** non-NULL). Checks, in this order: the dtype has a size; loc is DRAM, SB
** or PSUM; the access pattern has pairs; offset and start_partition are
** not negative; every num is positive and the count at most
** LM_MAX_OPERAND_ELEMS; the index arithmetic does not overflow; nothing
** is reached before loc's start; DRAM: the element range lies inside
** al's tensor_shape and loc's bytes; SB/PSUM: the partitions lie inside
** the LM_PARTITIONS and loc's partitions, the bytes inside loc's bytes per
** partition. Returns 0 with *g filled, or -1 with *g partly filled and,
** when why is not NULL, *why the first problem (the verifier's message;
** the caller frees it).
*/
int lm_arg_geometry(lm_geom *g, const lm_arg *a, const lm_alloc *al,
		    const lm_memloc *loc, char **why);

#endif

/*
** arch.c -- the gen2 / gen3 / gen4 tables. Approximate by design;
** docs/cost-model.md says where each figure comes from.
*/
#include "common.h"
#include "arch.h"

#include <string.h>

/* DMA: ~27 GiB/s per queue = 27 * 2^30 bytes / 1e12 ps. */
#define DMA_BPS (27.0 * 1073741824.0 / 1e12)

static const lm_arch arch_table[] = {
	{ "gen2", "trn1/inf2", 128, 192 * 1024, 16 * 1024,
	  /* Unassigned PE ACT DVE POOL SP DMA */
	  { 1.4, 2.8, 1.4, 1.12, 1.4, 1.4, 1.4 },
	  64,
	  { 0, 0, 224, 58, 64, 64, 0 },
	  1, 500000, 2000000, DMA_BPS, 64 },
	{ "gen3", "trn2", 128, 224 * 1024, 16 * 1024,
	  { 1.2, 2.4, 1.2, 0.96, 1.2, 1.2, 1.2 },
	  64,
	  { 0, 0, 224, 58, 64, 64, 0 },
	  1, 500000, 2000000, DMA_BPS, 64 },
	{ "gen4", "trn3", 128, 256 * 1024, 16 * 1024,
	  { 1.2, 2.4, 1.2, 0.96, 1.2, 1.2, 1.2 },
	  64,
	  { 0, 0, 224, 58, 64, 64, 0 },
	  1, 500000, 2000000, DMA_BPS, 64 },
};

const lm_arch *lm_arch_get(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
		if (strcmp(arch_table[i].name, name) == 0)
			return &arch_table[i];
	return NULL;
}

int lm_arch_pe_passes(lm_dtype moving)
{
	return (moving == LM_DT_FLOAT32 || moving == LM_DT_FLOAT32R) ? 4 : 1;
}

void lm_matmult_pe_cost(const lm_arch *a, int64_t st_parts, int64_t st_free,
			int64_t mv_free, int64_t out_free, lm_dtype moving,
			int is_transpose, lm_matmult_cost *c)
{
	c->k = st_parts;
	c->m = st_free;
	c->n = is_transpose ? out_free : mv_free;
	c->passes = lm_arch_pe_passes(moving);
	c->pe_cycles = c->n * c->passes + a->matmul_fixed;
}

int64_t lm_arch_cycles_ps(const lm_arch *a, lm_engine e, int64_t cycles)
{
	double ghz = a->clock_ghz[e];
	if (ghz <= 0)
		ghz = 1.0;
	/* 1 cycle = 1000/ghz ps; integer rounding up keeps times exact. */
	double ps = (double)cycles * 1000.0 / ghz;
	int64_t r = (int64_t)ps;
	if ((double)r < ps)
		r++;
	return r;
}

/*
** attn_klr.h -- the fused self-attention kernel of examples/nki/attention
** (softmax(0.125 Q K^T) V, float32 in and out, bfloat16 PE operands) as
** KLR JSON, and the carrier module that calls it. bench_attn generates it
** at its size; gen_attn writes the shipped example with the same code.
**
** Ownership: every function returns a string the caller frees.
*/
#ifndef LNCSIM_ATTN_KLR_H
#define LNCSIM_ATTN_KLR_H

/*
** The kernel `attn` over q, k, v [seq, d] float32 (HBM) into out
** [seq / n_cores, d]: one body per core, body c computing the query rows
** [c * seq / n_cores, (c + 1) * seq / n_cores). seq a multiple of
** 128 * n_cores, 1 <= d <= 128, n_cores 1 or 2.
*/
char *attn_klr_json(int seq, int d, int n_cores);

/*
** The carrier module of core `core`: external inputs q, k, v, external
** output out (n_cores 1) or out<core>, one NKIKLIRKernel calling the KLR
** file klr (a path relative to the module's directory).
*/
char *attn_def_json(int seq, int d, int core, int n_cores, const char *klr);

#endif

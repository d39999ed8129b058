/*
** blascpu.h -- the CPU model and features, and the OpenBLAS kernel family
** (bench_mm, bench_dbmm).
*/
#ifndef LNCSIM_BENCH_BLASCPU_H
#define LNCSIM_BENCH_BLASCPU_H

#include <stddef.h>

/* The "model name" line of /proc/cpuinfo into buf, or "unknown". */
void bench_cpu_model(char *buf, size_t n);
/* 1 when the CPU has feature ("avx2", "fma", "avx512f", ...), else 0. */
int bench_cpu_has(const char *feature);

#ifdef LNCSIM_BENCH_OPENBLAS
/*
** Make OpenBLAS run the newest kernel family the CPU has: drop a user's
** OPENBLAS_CORETYPE naming a family the CPU lacks; else, when OpenBLAS's
** own pick is older than the best family the CPU runs, execute the
** program (argv) again with that family set. prog names the program in
** messages. Call it first in main.
*/
void bench_fix_openblas_coretype(const char *prog, char **argv);
#endif

#endif

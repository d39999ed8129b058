/*
** blascpu.c -- what the benches that compare with OpenBLAS print about
** the CPU, and the OpenBLAS kernel family they make it use.
**
** OpenBLAS picks its kernels from CPUID and may pick an older family in a
** virtual machine; then the bench runs itself again with the newest
** OPENBLAS_CORETYPE the CPU has every feature of, and never with one it
** lacks (a family the CPU cannot run dies of an illegal instruction). A
** user's OPENBLAS_CORETYPE is kept unless the CPU lacks its features.
*/
#include "blascpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifdef LNCSIM_BENCH_OPENBLAS
#include <cblas.h>
#endif

/* ---- the CPU -------------------------------------------------------------- */

/* The "model name" line of /proc/cpuinfo into buf, or "unknown". */
void bench_cpu_model(char *buf, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	snprintf(buf, n, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':');
		if (strncmp(line, "model name", 10) != 0 || !c)
			continue;
		c += 1 + (c[1] == ' ');
		c[strcspn(c, "\n")] = 0;
		snprintf(buf, n, "%s", c);
		break;
	}
	fclose(f);
}

int bench_cpu_has(const char *feature)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (strcmp(feature, "avx512f") == 0)
		return __builtin_cpu_supports("avx512f");
	if (strcmp(feature, "avx512bw") == 0)
		return __builtin_cpu_supports("avx512bw");
	if (strcmp(feature, "avx512vl") == 0)
		return __builtin_cpu_supports("avx512vl");
	if (strcmp(feature, "avx512dq") == 0)
		return __builtin_cpu_supports("avx512dq");
	if (strcmp(feature, "avx512cd") == 0)
		return __builtin_cpu_supports("avx512cd");
	if (strcmp(feature, "avx2") == 0)
		return __builtin_cpu_supports("avx2");
	if (strcmp(feature, "fma") == 0)
		return __builtin_cpu_supports("fma");
	if (strcmp(feature, "avx") == 0)
		return __builtin_cpu_supports("avx");
#endif
	(void)feature;
	return 0;
}

#ifdef LNCSIM_BENCH_OPENBLAS

/*
** The OpenBLAS x86-64 kernel families this program may ask for, newest
** first, with the CPU features each needs.
*/
static const struct coretype {
	const char *name;
	const char *needs[6];
} coretypes[] = {
	{ "SkylakeX", { "avx512f", "avx512bw", "avx512vl", "avx512dq",
			"avx512cd", NULL } },
	{ "Haswell", { "avx2", "fma", NULL } },
	{ "Sandybridge", { "avx", NULL } },
};

/* Aliases OpenBLAS reports (lower case) for each family above. */
static const char *const family_of[][2] = {
	{ "skylakex", "SkylakeX" }, { "cooperlake", "SkylakeX" },
	{ "sapphirerapids", "SkylakeX" },
	{ "haswell", "Haswell" }, { "zen", "Haswell" },
	{ "sandybridge", "Sandybridge" },
};

static int runs(const struct coretype *t)
{
	for (int i = 0; t->needs[i]; i++)
		if (!bench_cpu_has(t->needs[i]))
			return 0;
	return 1;
}

/* The family row named (any case), or NULL. */
static const struct coretype *coretype_named(const char *name)
{
	for (size_t i = 0; i < sizeof family_of / sizeof family_of[0]; i++)
		if (strcasecmp(name, family_of[i][0]) == 0)
			name = family_of[i][1];
	for (size_t i = 0; i < sizeof coretypes / sizeof coretypes[0]; i++)
		if (strcasecmp(name, coretypes[i].name) == 0)
			return &coretypes[i];
	return NULL;
}

/* Position in coretypes (0 newest); unknown families rank last. */
static int rank(const struct coretype *t)
{
	return t ? (int)(t - coretypes) : 99;
}

/*
** Make OpenBLAS run the newest kernel family the CPU has: drop a user's
** OPENBLAS_CORETYPE naming a family the CPU lacks; else, when OpenBLAS's
** own pick is older than the best family the CPU runs, run again with that
** family set. Sets once so the second run does not loop.
*/
void bench_fix_openblas_coretype(const char *prog, char **argv)
{
	const char *user = getenv("OPENBLAS_CORETYPE");
	const struct coretype *best = NULL, *got;
	if (getenv("LNCSIM_BENCH_REEXEC"))
		return;
	setenv("LNCSIM_BENCH_REEXEC", "1", 1);
	if (user) {
		const struct coretype *t = coretype_named(user);
		if (!t || runs(t))
			return;
		fprintf(stderr, "%s: OPENBLAS_CORETYPE=%s needs CPU "
			"features this CPU lacks: not used\n", prog, user);
		unsetenv("OPENBLAS_CORETYPE");
	}
	for (size_t i = 0; i < sizeof coretypes / sizeof coretypes[0]; i++)
		if (runs(&coretypes[i])) {
			best = &coretypes[i];
			break;
		}
	got = coretype_named(openblas_get_corename());
	if (!user && (!best || rank(got) <= rank(best)))
		return;
	if (best)
		setenv("OPENBLAS_CORETYPE", best->name, 1);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "%s: execv /proc/self/exe: %s\n", prog,
		strerror(errno));
	exit(1);
}

#endif

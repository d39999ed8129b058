/*
** paths.c -- expanding a MODULE command-line argument: a def.json file, or
** a directory laid out as nc<c>/sg<s>/def.json.
*/
#include "common.h"
#include "module.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct found {
	long core, sg;
	char *path;
} found;

/* Parse "<prefix><digits>" into *num; 1 on success. */
static int numbered(const char *name, const char *prefix, long *num)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0 || !name[n])
		return 0;
	char *end;
	errno = 0;
	long v = strtol(name + n, &end, 10);
	if (*end || errno || v < 0)
		return 0;
	*num = v;
	return 1;
}

static int cmp_found(const void *a, const void *b)
{
	const found *x = a, *y = b;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	if (x->sg != y->sg)
		return x->sg < y->sg ? -1 : 1;
	return 0;
}

int lm_expand_module_arg(const char *arg, char ***paths, int *n, lm_error *err)
{
	struct stat st;
	if (stat(arg, &st) != 0)
		return lm_err(err, arg, "", "no such file or directory");
	if (!S_ISDIR(st.st_mode)) {
		*paths = lm_xrealloc(*paths, (size_t)(*n + 1) * sizeof **paths);
		(*paths)[(*n)++] = lm_xstrdup(arg);
		return 0;
	}
	found *fs = NULL;
	int nf = 0, cap = 0;
	DIR *d = opendir(arg);
	if (!d)
		return lm_err(err, arg, "", "cannot open directory: %s",
			      strerror(errno));
	struct dirent *e;
	while ((e = readdir(d))) {
		long core;
		if (!numbered(e->d_name, "nc", &core))
			continue;
		char *ncdir = lm_path_join(arg, e->d_name);
		DIR *d2 = opendir(ncdir);
		if (d2) {
			struct dirent *e2;
			while ((e2 = readdir(d2))) {
				long sg;
				if (!numbered(e2->d_name, "sg", &sg))
					continue;
				char *sgdir = lm_path_join(ncdir, e2->d_name);
				char *def = lm_path_join(sgdir, "def.json");
				free(sgdir);
				if (stat(def, &st) == 0 && S_ISREG(st.st_mode)) {
					lm_grow(&fs, &cap, nf + 1, sizeof *fs);
					fs[nf].core = core;
					fs[nf].sg = sg;
					fs[nf++].path = def;
				} else {
					free(def);
				}
			}
			closedir(d2);
		}
		free(ncdir);
	}
	closedir(d);
	if (nf == 0) {
		char *def = lm_path_join(arg, "def.json");
		if (stat(def, &st) == 0 && S_ISREG(st.st_mode)) {
			*paths = lm_xrealloc(*paths, (size_t)(*n + 1) * sizeof **paths);
			(*paths)[(*n)++] = def;
			return 0;
		}
		free(def);
		return lm_err(err, arg, "", "directory holds no nc*/sg*/def.json "
			      "and no def.json");
	}
	qsort(fs, (size_t)nf, sizeof *fs, cmp_found);
	*paths = lm_xrealloc(*paths, (size_t)(*n + nf) * sizeof **paths);
	for (int i = 0; i < nf; i++)
		(*paths)[(*n)++] = fs[i].path;
	free(fs);
	return 0;
}

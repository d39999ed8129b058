/*
** fileset.c -- files held in memory, by path (see fileset.h).
*/
#include "common.h"
#include "fileset.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *lm_fileset_path(const char *path)
{
	lm_buf b = LM_BUF_INIT;
	const char *p = path;
	if (path[0] != '/') {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof cwd))
			lm_buf_puts(&b, cwd);
	}
	/* one "/" before each component that is neither empty nor "." */
	while (*p) {
		const char *e;
		size_t n;
		while (*p == '/')
			p++;
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n && !(n == 1 && p[0] == '.')) {
			lm_buf_puts(&b, "/");
			lm_buf_put(&b, p, n);
		}
		p += n;
	}
	if (!b.size)
		lm_buf_puts(&b, "/");
	return lm_buf_detach(&b);
}

void lm_fileset_init(lm_fileset *fs)
{
	memset(fs, 0, sizeof *fs);
	lm_strmap_init(&fs->index);
}

void lm_fileset_free(lm_fileset *fs)
{
	for (int i = 0; i < fs->n; i++) {
		free(fs->files[i].path);
		free(fs->files[i].bytes);
	}
	free(fs->files);
	lm_strmap_free(&fs->index);
	memset(fs, 0, sizeof *fs);
}

void lm_fileset_add(lm_fileset *fs, const char *path, char *bytes,
		    size_t len)
{
	char *p = lm_fileset_path(path);
	intptr_t i = (intptr_t)lm_strmap_lookup(&fs->index, p);
	if (i) {
		lm_memfile *f = &fs->files[i - 1];
		free(p);
		free(f->bytes);
		f->bytes = bytes;
		f->len = len;
		return;
	}
	lm_grow(&fs->files, &fs->cap, fs->n + 1, sizeof *fs->files);
	fs->files[fs->n] = (lm_memfile){ p, bytes, len };
	fs->n++;
	lm_strmap_put(&fs->index, p, (void *)(intptr_t)fs->n);
}

const lm_memfile *lm_fileset_find(const lm_fileset *fs, const char *path)
{
	char *p = lm_fileset_path(path);
	intptr_t i = (intptr_t)lm_strmap_lookup(&fs->index, p);
	free(p);
	return i ? &fs->files[i - 1] : NULL;
}

/*
** fileset.h -- files held in memory, by path: what a caller that made its
** modules in memory (the generator under `lncsim fuzz`) gives the linker
** and the simulator in place of the files beside the modules on disk.
**
** A path is held as an absolute lexical path: a relative one is taken
** against the working directory, "." components and repeated slashes are
** dropped, nothing on disk is looked at (no symlink is resolved). So
** "gen1/nc0/sg0/w.npy", "./gen1/nc0/sg0/w.npy" and "$PWD/gen1/nc0/sg0/w.npy"
** name one file.
**
** Ownership: the set owns its paths and bytes; free with lm_fileset_free.
*/
#ifndef LNCSIM_FILESET_H
#define LNCSIM_FILESET_H

#include "common.h"

typedef struct lm_memfile {
	char *path;          /* the absolute lexical path */
	char *bytes;
	size_t len;
} lm_memfile;

typedef struct lm_fileset {
	int n, cap;
	lm_memfile *files;
	lm_strmap index;     /* path -> index + 1 */
} lm_fileset;

void lm_fileset_init(lm_fileset *fs);
void lm_fileset_free(lm_fileset *fs);
/* Add (or replace) the file at path; bytes are taken (freed with the set). */
void lm_fileset_add(lm_fileset *fs, const char *path, char *bytes,
		    size_t len);
/* The file at path, or NULL. */
const lm_memfile *lm_fileset_find(const lm_fileset *fs, const char *path);
/* path as the set holds it (caller frees). */
char *lm_fileset_path(const char *path);

#endif

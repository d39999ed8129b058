/*
** safeio.h -- creating, replacing and deleting files beneath a directory
** without following symlinks.
**
** Every file lncsim writes goes through these functions. A path below a
** root is walked one component at a time with openat(O_DIRECTORY |
** O_NOFOLLOW) from the root's fd, so a symlinked directory on the way is an
** error, never a detour out of the tree; "..", "." and empty components are
** refused before anything is opened. A file is written to a fresh temporary
** name created with O_CREAT | O_EXCL | O_NOFOLLOW (random suffix), synced,
** and renamed over its final name: a symlink planted at the temporary name
** makes the create fail, and a symlink at the final name is replaced, not
** followed. The root itself is the caller's (a path the user named): it is
** opened normally. docs/files.md describes the rules.
*/
#ifndef LNCSIM_SAFEIO_H
#define LNCSIM_SAFEIO_H

#include "common.h"

#include <stddef.h>

/*
** 1 if name can be one path component of a file lncsim writes: not empty,
** not "." or "..", no '/', no control character, at most 255 bytes.
*/
int lm_path_component_ok(const char *name);

/* 1 if rel is a relative path whose every component passes
** lm_path_component_ok (so no leading '/', no "//", no "." or ".."). */
int lm_rel_path_ok(const char *rel);

/*
** Open the directory rel beneath rootfd (rel NULL or "": rootfd itself,
** duplicated), walking each component with O_NOFOLLOW. create: make the
** missing directories (mode 0755); *n_made (may be NULL) counts them -- the
** made ones are always the last *n_made components. root_name names rootfd
** in error messages. On success *out is an fd the caller closes. On error
** *out is -1, err reads "ROOT/PREFIX: ..." and errno is that of the
** failing step (ENOENT: a component is missing).
*/
int lm_dir_open_beneath(int *out, int rootfd, const char *root_name,
			const char *rel, int create, int *n_made, lm_error *err);

/*
** Write len bytes as the file name (one component) of directory dirfd,
** atomically: a unique temporary file created with O_EXCL | O_NOFOLLOW
** (permission bits mode, less the umask), fsync, renameat. An existing name
** that is a regular file or a symlink is replaced (the symlink itself, not
** its target); a directory or any other kind of file is an error. dir_name
** (NULL: none) names dirfd in errors.
*/
int lm_write_at(int dirfd, const char *dir_name, const char *name,
		const void *data, size_t len, unsigned mode, lm_error *err);

/*
** The two halves of lm_write_at, for a file another program fills: a
** fresh temporary beside name (created O_EXCL | O_NOFOLLOW, permission
** bits mode less the umask; *fd open for writing, *tmp its name, caller
** frees), then lm_replace_at renames it over name (replacing like
** lm_write_at; on failure the temporary is removed).
*/
int lm_temp_at(int *fd, char **tmp, int dirfd, const char *dir_name,
	       const char *name, unsigned mode, lm_error *err);
int lm_replace_at(int dirfd, const char *dir_name, const char *tmp,
		  const char *name, lm_error *err);

/* Make name in dirfd a symlink to target, atomically (temp + renameat);
** replaces like lm_write_at. */
int lm_symlink_at(int dirfd, const char *dir_name, const char *name,
		  const char *target, lm_error *err);

/*
** Write rel beneath the directory root (a path the caller chose, opened as
** given; it must exist), creating rel's parent directories beneath it
** without following symlinks. rel must pass lm_rel_path_ok.
*/
int lm_write_beneath(const char *root, const char *rel, const void *data,
		     size_t len, unsigned mode, lm_error *err);
/* lm_write_beneath below an open directory rootfd (root_name names it in
** errors; NULL: none). */
int lm_write_beneath_at(int rootfd, const char *root_name, const char *rel,
			const void *data, size_t len, unsigned mode,
			lm_error *err);

/*
** Remove name in dirfd and, if it is a directory, everything below it,
** never following a symlink (a symlink is removed, not its target).
** Best effort: returns 0 when name is gone, -1 otherwise.
*/
int lm_remove_tree_at(int dirfd, const char *name);

/* Read all of fd (an open regular file) into *out (NUL terminated, caller
** frees), at most max bytes: more is "NAME: file too large: more than MAX
** bytes", refused before the buffer grows past max. name is for errors. */
int lm_read_fd(int fd, const char *name, int64_t max, char **out,
	       size_t *out_len, lm_error *err);

/* A fresh directory named <prefix><random> in dirfd (mode 0700); its name
** in *name (caller frees). */
int lm_mkdtemp_at(int dirfd, const char *dir_name, const char *prefix,
		  char **name, lm_error *err);

/*
** Swap the entries a and b of dirfd atomically (Linux renameat2
** RENAME_EXCHANGE). Returns 0, or -1 with errno (ENOSYS / EINVAL when the
** system or file system cannot exchange).
*/
int lm_exchange_at(int dirfd, const char *a, const char *b);

/*
** The rule for a file a module refers to (an allocation's `file`, a
** `klir_binary`, a kernel's Const `file`), one for `link` and `lower`
** alike: rel is relative to the directory dir (NULL or "": "."), has no
** ".." and every component plain (lm_rel_path_ok), exists, and resolves
** -- symlinks followed -- inside dir. On success *real is its realpath and
** *root dir's realpath (caller frees both). Errors read "FILE: WHERE:
** file 'REL' ...".
*/
/* The name rules of lm_module_file alone (relative, no "..", plain
** components), for a file that is not on disk (an in-memory set). */
int lm_module_file_name_ok(const char *rel, const char *file,
			   const char *where, lm_error *err);
int lm_module_file(const char *dir, const char *rel, const char *file,
		   const char *where, char **real, char **root, lm_error *err);
/*
** Read the file real (a realpath from lm_module_file) beneath root (its
** root there): every directory from root's fd with O_NOFOLLOW, the file
** with lm_open_regular_at, at most LM_READ_MAX bytes, so a swap after the
** check is refused. *mode: its permission bits (may be NULL). *out is NUL
** terminated; caller frees.
*/
int lm_module_file_read(const char *root, const char *real, char **out,
			size_t *len, unsigned *mode, lm_error *err);

#endif

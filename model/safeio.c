/*
** safeio.c -- files created, replaced and deleted beneath a directory fd,
** never through a symlink (see safeio.h and docs/files.md).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* renameat2 */
#endif
#include "common.h"
#include "safeio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#define OPEN_DIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int lm_path_component_ok(const char *name)
{
	size_t n = 0;
	if (!name || !*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++, n++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return 0;
	return n <= 255;
}

int lm_rel_path_ok(const char *rel)
{
	if (!rel || !*rel || rel[0] == '/')
		return 0;
	for (const char *p = rel; ; ) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char comp[256];
		if (len == 0 || len >= sizeof comp)
			return 0;
		memcpy(comp, p, len);
		comp[len] = 0;
		if (!lm_path_component_ok(comp))
			return 0;
		if (!e)
			return 1;
		p = e + 1;
	}
}

/* "root/rel[0..n)" for messages; caller frees. */
static char *shown(const char *root, const char *rel, size_t n)
{
	if (!root || !*root || !strcmp(root, "."))
		return lm_xstrndup(rel, n);
	if (!n)
		return lm_xstrdup(root);
	return lm_xasprintf("%s%s%.*s", root,
			    root[strlen(root) - 1] == '/' ? "" : "/", (int)n,
			    rel);
}

/* Why component `comp` of dirfd cannot be opened as a directory. */
static int open_failed(lm_error *err, int dirfd, const char *comp,
		       const char *what, int e)
{
	struct stat st;
	if (fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			lm_err(err, what, "", "is a symlink; refusing to go "
			       "through it");
			errno = ELOOP;
			return LM_EINPUT;
		}
		if (!S_ISDIR(st.st_mode)) {
			lm_err(err, what, "", "not a directory");
			errno = ENOTDIR;
			return LM_EINPUT;
		}
	}
	lm_err(err, what, "", "cannot open directory: %s", strerror(e));
	errno = e;
	return LM_EINPUT;
}

int lm_dir_open_beneath(int *out, int rootfd, const char *root_name,
			const char *rel, int create, int *n_made, lm_error *err)
{
	int fd, made = 0;
	*out = -1;
	if (n_made)
		*n_made = 0;
	if (rel && *rel && !lm_rel_path_ok(rel)) {
		char *w = shown(root_name, rel, strlen(rel));
		lm_err(err, w, "", "not a plain relative path (absolute, or an "
		       "empty, '.' or '..' component)");
		free(w);
		errno = EINVAL;
		return LM_EINPUT;
	}
	fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		lm_err(err, root_name, "", "cannot open directory: %s",
		       strerror(e));
		errno = e;
		return LM_EINPUT;
	}
	for (const char *p = rel ? rel : ""; *p; ) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char comp[256];
		int nfd;
		memcpy(comp, p, len);
		comp[len] = 0;
		nfd = openat(fd, comp, OPEN_DIR);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) == 0)
				made++;
			else if (errno != EEXIST)
				made = -1;
			if (made >= 0)
				nfd = openat(fd, comp, OPEN_DIR);
		}
		if (nfd < 0) {
			int en = errno;
			char *w = shown(root_name, rel, (size_t)(p - rel) + len);
			if (made < 0)
				lm_err(err, w, "", "cannot create directory: %s",
				       strerror(en));
			else
				open_failed(err, fd, comp, w, en);
			en = made < 0 ? en : errno;
			free(w);
			close(fd);
			errno = en;
			return LM_EINPUT;
		}
		close(fd);
		fd = nfd;
		p += len;
		if (*p == '/')
			p++;
	}
	*out = fd;
	if (n_made)
		*n_made = made;
	return 0;
}

/* n random bytes as hex into buf (2n + 1 bytes). */
static void random_hex(char *buf, size_t n)
{
	unsigned char r[16];
	static unsigned long counter;
	if (n > sizeof r)
		n = sizeof r;
	if (getentropy(r, n) != 0) {
		/* no entropy source: unique enough with O_EXCL and retries */
		struct timespec ts;
		unsigned long long v;
		clock_gettime(CLOCK_REALTIME, &ts);
		v = (unsigned long long)ts.tv_nsec ^
			((unsigned long long)getpid() << 32) ^
			(unsigned long long)(++counter * 0x9e3779b97f4a7c15ULL);
		for (size_t i = 0; i < n; i++)
			r[i] = (unsigned char)(v >> (8 * (i % 8)));
	}
	for (size_t i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", r[i]);
}

/* ".<name>.<random>.tmp" (name shortened so it fits NAME_MAX). */
static char *temp_name(const char *name)
{
	char hex[25];
	random_hex(hex, 12);
	return lm_xasprintf(".%.200s.%s.tmp", name, hex);
}

/* Refuse to replace a directory or a special file at name. */
static int replaceable(int dirfd, const char *name, const char *what,
		       lm_error *err)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return lm_err(err, what, "", "is a directory; refusing to "
			      "replace it");
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return lm_err(err, what, "", "not a regular file; refusing to "
			      "replace it");
	return 0;
}

int lm_temp_at(int *fd, char **tmp, int dirfd, const char *dir_name,
	       const char *name, unsigned mode, lm_error *err)
{
	*fd = -1;
	*tmp = NULL;
	if (!lm_path_component_ok(name)) {
		char *what = dir_name ? lm_path_join(dir_name, name)
			: lm_xstrdup(name);
		lm_err(err, what, "", "not a plain file name");
		free(what);
		return LM_EINPUT;
	}
	for (int tries = 0; *fd < 0 && tries < 100; tries++) {
		free(*tmp);
		*tmp = temp_name(name);
		*fd = openat(dirfd, *tmp, O_WRONLY | O_CREAT | O_EXCL |
			     O_NOFOLLOW | O_CLOEXEC, (mode_t)(mode & 0777));
		if (*fd < 0 && errno != EEXIST)
			break;
	}
	if (*fd < 0) {
		int e = errno;
		char *what = dir_name ? lm_path_join(dir_name, name)
			: lm_xstrdup(name);
		lm_err(err, what, "", "cannot write: %s", strerror(e));
		free(what);
		free(*tmp);
		*tmp = NULL;
		return LM_EINPUT;
	}
	return 0;
}

int lm_replace_at(int dirfd, const char *dir_name, const char *tmp,
		  const char *name, lm_error *err)
{
	char *what = dir_name ? lm_path_join(dir_name, name) : lm_xstrdup(name);
	int rc = replaceable(dirfd, name, what, err);
	if (!rc && renameat(dirfd, tmp, dirfd, name) != 0)
		rc = lm_err(err, what, "", "cannot write: %s", strerror(errno));
	if (rc)
		unlinkat(dirfd, tmp, 0);
	free(what);
	return rc;
}

int lm_write_at(int dirfd, const char *dir_name, const char *name,
		const void *data, size_t len, unsigned mode, lm_error *err)
{
	char *what = dir_name ? lm_path_join(dir_name, name) : lm_xstrdup(name);
	char *tmp = NULL;
	const char *p = data;
	int fd = -1, rc;
	if (!lm_path_component_ok(name)) {
		rc = lm_err(err, what, "", "not a plain file name");
		goto done;
	}
	if ((rc = replaceable(dirfd, name, what, err)) != 0)
		goto done;
	if ((rc = lm_temp_at(&fd, &tmp, dirfd, dir_name, name, mode, err)) != 0)
		goto done;
	for (size_t left = len; left; ) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = lm_err(err, what, "", "write failed: %s",
				    strerror(errno));
			goto fail;
		}
		p += w;
		left -= (size_t)w;
	}
	if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
		rc = lm_err(err, what, "", "write failed: %s", strerror(errno));
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = lm_err(err, what, "", "cannot write: %s", strerror(errno));
		goto fail;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, name) != 0) {
		rc = lm_err(err, what, "", "cannot write: %s", strerror(errno));
		goto fail;
	}
	rc = 0;
	goto done;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
done:
	free(tmp);
	free(what);
	return rc;
}

int lm_symlink_at(int dirfd, const char *dir_name, const char *name,
		  const char *target, lm_error *err)
{
	char *what = dir_name ? lm_path_join(dir_name, name) : lm_xstrdup(name);
	char *tmp = NULL;
	int rc = -1;
	if (!lm_path_component_ok(name)) {
		rc = lm_err(err, what, "", "not a plain file name");
		goto done;
	}
	if ((rc = replaceable(dirfd, name, what, err)) != 0)
		goto done;
	rc = -1;
	for (int tries = 0; rc != 0 && tries < 100; tries++) {
		free(tmp);
		tmp = temp_name(name);
		rc = symlinkat(target, dirfd, tmp);
		if (rc != 0 && errno != EEXIST)
			break;
	}
	if (rc != 0) {
		rc = lm_err(err, what, "", "cannot create symlink: %s",
			    strerror(errno));
		goto done;
	}
	if (renameat(dirfd, tmp, dirfd, name) != 0) {
		rc = lm_err(err, what, "", "cannot create symlink: %s",
			    strerror(errno));
		unlinkat(dirfd, tmp, 0);
	}
done:
	free(tmp);
	free(what);
	return rc;
}

int lm_write_beneath_at(int rootfd, const char *root_name, const char *rel,
			const void *data, size_t len, unsigned mode,
			lm_error *err)
{
	const char *slash;
	char *dir, *shown_dir;
	int dfd = -1, rc;
	if (!lm_rel_path_ok(rel)) {
		char *w = root_name ? lm_path_join(root_name, rel)
			: lm_xstrdup(rel ? rel : "");
		rc = lm_err(err, w, "", "not a plain relative path (absolute, "
			    "or an empty, '.' or '..' component)");
		free(w);
		return rc;
	}
	slash = strrchr(rel, '/');
	dir = slash ? lm_xstrndup(rel, (size_t)(slash - rel)) : NULL;
	rc = lm_dir_open_beneath(&dfd, rootfd, root_name, dir, 1, NULL, err);
	if (!rc) {
		if (dir)
			shown_dir = root_name ? lm_path_join(root_name, dir)
				: lm_xstrdup(dir);
		else
			shown_dir = root_name ? lm_xstrdup(root_name) : NULL;
		rc = lm_write_at(dfd, shown_dir, slash ? slash + 1 : rel, data,
				 len, mode, err);
		free(shown_dir);
		close(dfd);
	}
	free(dir);
	return rc;
}

int lm_write_beneath(const char *root, const char *rel, const void *data,
		     size_t len, unsigned mode, lm_error *err)
{
	int rootfd, rc;
	if (!lm_rel_path_ok(rel))
		return lm_write_beneath_at(-1, root, rel, data, len, mode, err);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return lm_err(err, root, "", "cannot open directory: %s",
			      strerror(errno));
	rc = lm_write_beneath_at(rootfd, root, rel, data, len, mode, err);
	close(rootfd);
	return rc;
}

int lm_remove_tree_at(int at, const char *name)
{
	struct stat st;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISDIR(st.st_mode)) {
		int fd = openat(at, name, OPEN_DIR);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *e;
		if (!d) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				lm_remove_tree_at(dirfd(d), e->d_name);
		closedir(d);
		return unlinkat(at, name, AT_REMOVEDIR) == 0 ? 0 : -1;
	}
	return unlinkat(at, name, 0) == 0 ? 0 : -1;
}

int lm_read_fd(int fd, const char *name, int64_t max, char **out,
	       size_t *out_len, lm_error *err)
{
	lm_buf b = LM_BUF_INIT;
	char tmp[65536];
	*out = NULL;
	if (out_len)
		*out_len = 0;
	for (;;) {
		ssize_t k = read(fd, tmp, sizeof tmp);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			lm_buf_free(&b);
			return lm_err(err, name, "", "read error: %s",
				      strerror(e));
		}
		if (k == 0)
			break;
		if ((int64_t)(b.size + (size_t)k) > max) {
			lm_buf_free(&b);
			return lm_err(err, name, "", "file too large: more than "
				      "%lld bytes", (long long)max);
		}
		lm_buf_put(&b, tmp, (size_t)k);
	}
	if (out_len)
		*out_len = b.size;
	*out = lm_buf_detach(&b);
	return 0;
}

int lm_mkdtemp_at(int dirfd, const char *dir_name, const char *prefix,
		  char **name, lm_error *err)
{
	char hex[25];
	*name = NULL;
	for (int tries = 0; tries < 100; tries++) {
		char *n;
		random_hex(hex, 12);
		n = lm_xasprintf("%s%s", prefix, hex);
		if (mkdirat(dirfd, n, 0700) == 0) {
			*name = n;
			return 0;
		}
		free(n);
		if (errno != EEXIST)
			break;
	}
	return lm_err(err, dir_name, "", "cannot create a temporary directory: "
		      "%s", strerror(errno));
}

int lm_exchange_at(int dirfd, const char *a, const char *b)
{
#if defined(__linux__) && defined(SYS_renameat2)
	/* RENAME_EXCHANGE is (1 << 1) in linux/fs.h */
	return (int)syscall(SYS_renameat2, dirfd, a, dirfd, b, 1u << 1);
#else
	(void)dirfd;
	(void)a;
	(void)b;
	errno = ENOSYS;
	return -1;
#endif
}

/* ---- files a module refers to ------------------------------------------ */

/* 1 when s is a relative path (not empty, not absolute) with no ".."
** component. */
static int path_is_safe(const char *s)
{
	if (!s || !*s || s[0] == '/')
		return 0;
	for (const char *p = s; *p; ) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += len;
		if (*p == '/')
			p++;
	}
	return 1;
}

int lm_module_file_name_ok(const char *rel, const char *file,
			   const char *where, lm_error *err)
{
	if (rel[0] == '/')
		return lm_err(err, file, where, "file '%s' is an absolute "
			      "path (artifacts must be relative to the module)",
			      rel);
	if (!path_is_safe(rel))
		return lm_err(err, file, where, "file '%s' contains '..' "
			      "(path traversal refused)", rel);
	if (!lm_rel_path_ok(rel))
		return lm_err(err, file, where, "file '%s' is not a plain "
			      "relative path (an empty or '.' component, or a "
			      "control character)", rel);
	return 0;
}

int lm_module_file(const char *dir, const char *rel, const char *file,
		   const char *where, char **real, char **root, lm_error *err)
{
	const char *d = dir && *dir ? dir : ".";
	char *full, *rp, *md;
	size_t n;
	int rc;
	*real = *root = NULL;
	if ((rc = lm_module_file_name_ok(rel, file, where, err)) != 0)
		return rc;
	full = lm_path_join(d, rel);
	rp = realpath(full, NULL);
	if (!rp) {
		int e = errno;
		lm_err(err, file, where, "file '%s' not found (%s): %s", rel,
		       full, strerror(e));
		free(full);
		return LM_EINPUT;
	}
	free(full);
	/* a symlink on the way may not lead out of the directory */
	md = realpath(d, NULL);
	n = md ? strlen(md) : 0;
	if (!md || strncmp(rp, md, n) != 0 ||
	    !(rp[n] == '/' || (n == 1 && md[0] == '/'))) {
		lm_err(err, file, where, "file '%s' resolves to '%s', outside "
		       "the module's directory (a symlink leaving it is "
		       "refused)", rel, rp);
		free(md);
		free(rp);
		return LM_EINPUT;
	}
	*real = rp;
	*root = md;
	return 0;
}

int lm_module_file_read(const char *root, const char *real, char **out,
			size_t *len, unsigned *mode, lm_error *err)
{
	size_t n = strlen(root);
	const char *rel = real + (n == 1 ? 1 : n + 1);
	const char *slash;
	char *dir = NULL, *data = NULL;
	struct stat st;
	int64_t size;
	int rfd = -1, dfd = -1, fd = -1, rc;
	*out = NULL;
	if (strncmp(real, root, n) != 0 || (n > 1 && real[n] != '/'))
		return lm_errc(err, LM_EINTERNAL, real, "", "internal error: "
			       "not beneath '%s'", root);
	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return lm_err(err, root, "", "cannot open directory: %s",
			      strerror(errno));
	slash = strrchr(rel, '/');
	if (slash)
		dir = lm_xstrndup(rel, (size_t)(slash - rel));
	if ((rc = lm_dir_open_beneath(&dfd, rfd, root, dir, 0, NULL,
				      err)) != 0)
		goto done;
	if ((rc = lm_open_regular_at(dfd, slash ? slash + 1 : rel, real, &fd,
				     &size, err)) != 0)
		goto done;
	if (size > LM_READ_MAX || (uint64_t)size >= SIZE_MAX) {
		rc = lm_err(err, real, "", "file too large: %lld bytes (at "
			    "most %lld)", (long long)size,
			    (long long)LM_READ_MAX);
		goto done;
	}
	if (fstat(fd, &st) != 0) {
		rc = lm_err(err, real, "", "cannot stat: %s", strerror(errno));
		goto done;
	}
	if ((rc = lm_read_fd(fd, real, LM_READ_MAX, &data, len, err)) != 0)
		goto done;
	if (mode)
		*mode = (unsigned)st.st_mode & 0777;
	*out = data;
done:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	close(rfd);
	free(dir);
	return rc;
}

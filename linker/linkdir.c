/*
** linkdir.c -- step 9 of the link (seed 8, setupLinkDir) and the writer of
** the link directory <out>/<name>/sgLnk/.
**
** setup_link_dir plans, in memory: every core's artifact (a Const
** allocation's .npy `file`, an IT56 carrier's klir_binary: symlinked; the
** `file` of any other allocation, a host file: copied) gets a path in the
** link dir -- its own relative path, or dir/nc<c>.<base> when two cores use
** the same path for different files -- and the linked module's fields are
** rewritten to it. lk_write_link_dir then makes the directory: def.json,
** tensor-map.json, the symlinks and copies, and the manifest of what it
** wrote, in a scratch directory swapped in at the end; every file beneath
** an open directory fd, never through a symlink (safeio.h).
*/
#include "common.h"
#include "lk_int.h"
#include "safeio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MANIFEST ".lncsim-link-manifest"
#define COLLIDED ((void *)(intptr_t)-1)

/* A planned artifact before dst names are decided. */
typedef struct cand {
	int ci;
	const char *rel;     /* the field's text (in the source module) */
	char *src;           /* realpath */
	char *root;          /* the module directory's realpath */
	int copy;
} cand;

typedef struct plan {
	cand *c;
	int n, cap;
	int n_klir;  /* instructions with a klir_binary (0: nothing to rewrite) */
} plan;

static const char *mpath(const lk_core *c)
{
	return c->src->path && *c->src->path ? c->src->path
		: lm_module_display_name(c->src);
}

/* lm_module_file for files held in memory: *real is the set's path of
** the file, *root that of dir; nothing on disk is looked at. */
static int memory_file(const lm_fileset *fs, const char *dir, const char *rel,
		       const char *file, const char *where, char **real,
		       char **root, lm_error *err)
{
	const char *d = dir && *dir ? dir : ".";
	char *full;
	int rc;
	*real = *root = NULL;
	if ((rc = lm_module_file_name_ok(rel, file, where, err)) != 0)
		return rc;
	full = lm_path_join(d, rel);
	if (!lm_fileset_find(fs, full)) {
		lm_err(err, file, where, "file '%s' not found (%s): %s", rel,
		       full, strerror(ENOENT));
		free(full);
		return LM_EINPUT;
	}
	*real = lm_fileset_path(full);
	*root = lm_fileset_path(d);
	free(full);
	return 0;
}

/* Validate one file field and add it to the plan (once per core). */
static int add_cand(lk_ctx *x, plan *p, lm_strmap *seen, int ci,
		    const char *rel, int copy, const char *where)
{
	const lk_core *c = &x->cores[ci];
	char *rp, *md;
	int rc;
	if (lm_strmap_lookup(seen, rel))
		return 0;
	rc = x->opts->files
		? memory_file(x->opts->files, c->src->dir, rel, mpath(c), where,
			      &rp, &md, x->err)
		: lm_module_file(c->src->dir, rel, mpath(c), where, &rp, &md,
				 x->err);
	if (rc)
		return rc;
	lm_strmap_put(seen, rel, (void *)rel);
	lm_grow(&p->c, &p->cap, p->n + 1, sizeof *p->c);
	p->c[p->n++] = (cand){ ci, rel, rp, md, copy };
	return 0;
}

static int plan_blocks(lk_ctx *x, plan *p, lm_strmap *seen, int ci,
		       const lm_function *f, const lm_block *bs, int nb)
{
	char where[512];
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			int rc;
			if (in->n_blocks) {
				rc = plan_blocks(x, p, seen, ci, f, in->blocks,
						 in->n_blocks);
			} else if (in->klir_binary && *in->klir_binary) {
				p->n_klir++;
				snprintf(where, sizeof where,
					 "function %s/instruction %s", f->name,
					 in->name ? in->name : "?");
				rc = add_cand(x, p, seen, ci, in->klir_binary, 0,
					      where);
			} else {
				rc = 0;
			}
			if (rc)
				return rc;
		}
	return 0;
}

/*
** "sub/wc.npy" -> "sub/nc1.wc.npy", or "sub/nc1_2.wc.npy", "sub/nc1_3...",
** the first that is not in taken (every path the plan uses: the artifacts'
** own paths, the reserved names and the names given so far).
*/
static char *renamed(const char *rel, int64_t core, const lm_strmap *taken)
{
	const char *s = strrchr(rel, '/');
	int dl = s ? (int)(s - rel) + 1 : 0;
	const char *b = s ? s + 1 : rel;
	char *d = lm_xasprintf("%.*snc%lld.%s", dl, rel, (long long)core, b);
	for (int k = 2; lm_strmap_lookup(taken, d); k++) {
		free(d);
		d = lm_xasprintf("%.*snc%lld_%d.%s", dl, rel, (long long)core,
				 k, b);
	}
	return d;
}

static int is_reserved(const char *rel)
{
	return !strcmp(rel, "def.json") || !strcmp(rel, "tensor-map.json") ||
		!strcmp(rel, MANIFEST);
}

/* The core index an out function's allocations came from. */
static int alloc_core(lk_ctx *x, const lm_function *f, const lm_alloc *a)
{
	if (f->kind == LM_FK_DISPATCHER) {
		const lk_decl *d = lm_strmap_lookup(&x->main_origin, a->name);
		if (!d || !d->core_mask)
			return -1;
		for (int i = 0; i < x->n; i++)
			if (d->core_mask & (1ull << i))
				return i;
		return -1;
	}
	return lk_function_core(x, f);
}

static void rewrite_klir(lk_ctx *x, int ci, lm_inst *in, void *arg)
{
	(void)arg;
	const char *v;
	if (ci >= 0 && in->klir_binary && *in->klir_binary &&
	    (v = lm_strmap_lookup(&x->file_maps[ci], in->klir_binary)))
		lm_inst_set_str(in, &in->klir_binary, v);
}

/*
** Step 9 (seed setupLinkDir: symlinkNpyFiles, symLinkCustomOpFiles,
** copyCpuNodeFiles): plan the link directory and rewrite the linked module's
** `file` / `klir_binary` fields to link-dir paths (absolute source paths with
** opts->abs_file_paths). Refuses absolute paths, '..' and missing files.
*/
int setup_link_dir(lk_ctx *x)
{
	plan p = {0};
	lm_strmap dst, taken;
	int rc = 0, n_copy = 0, n_renamed = 0;
	const char *base = x->rep->base_name;

	if (!lm_rel_path_ok(base))
		return lm_err(x->err, mpath(&x->cores[0]), "module", "module "
			      "name '%s' cannot name a link directory (absolute, "
			      "or an empty, '.' or '..' component)", base);
	x->file_maps = lm_xcalloc((size_t)x->n, sizeof *x->file_maps);
	lm_strmap_init(&dst);
	lm_strmap_init(&taken);
	for (int ci = 0; ci < x->n && !rc; ci++) {
		const lm_module *m = x->cores[ci].src;
		lm_strmap seen;
		lm_strmap_init(&seen);
		for (int f = 0; f < m->n_functions && !rc; f++) {
			const lm_function *fn = &m->functions[f];
			for (int a = 0; a < fn->n_allocs && !rc; a++) {
				const lm_alloc *al = &fn->allocs[a];
				char where[512];
				if (!al->file || !*al->file)
					continue;
				snprintf(where, sizeof where,
					 "function %s/allocation %s", fn->name,
					 al->name);
				rc = add_cand(x, &p, &seen, ci, al->file,
					      al->kind != LM_TK_CONST, where);
			}
			if (!rc)
				rc = plan_blocks(x, &p, &seen, ci, fn, fn->blocks,
						 fn->n_blocks);
		}
		lm_strmap_free(&seen);
	}
	if (rc)
		goto done;
	/* dst names: a path used by two cores for different files collides */
	for (int i = 0; i < p.n; i++) {
		void *v;
		if (is_reserved(p.c[i].rel))
			lm_strmap_put(&dst, p.c[i].rel, COLLIDED);
		else if (!lm_strmap_get(&dst, p.c[i].rel, &v))
			lm_strmap_put(&dst, p.c[i].rel, (void *)(intptr_t)(i + 1));
		else if (v != COLLIDED &&
			 strcmp(p.c[(intptr_t)v - 1].src, p.c[i].src) != 0)
			lm_strmap_put(&dst, p.c[i].rel, COLLIDED);
	}
	/* a new name may take none of the paths in the plan */
	lm_strmap_put(&taken, "def.json", (void *)1);
	lm_strmap_put(&taken, "tensor-map.json", (void *)1);
	lm_strmap_put(&taken, MANIFEST, (void *)1);
	for (int i = 0; i < p.n; i++)
		lm_strmap_put(&taken, p.c[i].rel, (void *)1);
	for (int i = 0; i < p.n; i++) {
		const cand *c = &p.c[i];
		void *v = lm_strmap_lookup(&dst, c->rel);
		int shared = v != COLLIDED && (intptr_t)v != i + 1;
		char *d = v == COLLIDED
			? renamed(c->rel, x->cores[c->ci].core, &taken)
			: lm_xstrdup(c->rel);
		if (v == COLLIDED)
			lm_strmap_put(&taken, d, (void *)1);
		lm_strmap_put(&x->file_maps[c->ci], c->rel, x->opts->abs_file_paths
			      ? lk_str(x, "%s", c->src) : lk_str(x, "%s", d));
		if (shared) { /* same file as an earlier core's: one entry */
			free(d);
			continue;
		}
		n_renamed += v == COLLIDED;
		n_copy += c->copy;
		x->rep->artifacts = lm_xrealloc(x->rep->artifacts,
			(size_t)(x->rep->n_artifacts + 1) *
			sizeof *x->rep->artifacts);
		for (int j = 0; j < x->rep->n_artifacts; j++)
			if (!strcmp(x->rep->artifacts[j].dst, d)) {
				rc = lm_errc(x->err, LM_EINTERNAL, mpath(&x->cores
					     [c->ci]), "", "internal error: two "
					     "artifacts planned at '%s'", d);
				free(d);
				goto done;
			}
		lk_artifact *ar = &x->rep->artifacts[x->rep->n_artifacts++];
		ar->src = lm_xstrdup(c->src);
		ar->root = lm_xstrdup(c->root);
		ar->dst = d;
		ar->copy = c->copy;
		ar->core = x->cores[c->ci].core;
	}
	/* rewrite the linked module's fields */
	for (int f = 0; f < x->out->n_functions; f++) {
		lm_function *fn = &x->out->functions[f];
		int fci = lk_function_core(x, fn);
		for (int a = 0; a < fn->n_allocs; a++) {
			lm_alloc *al = &fn->allocs[a];
			int ci = alloc_core(x, fn, al);
			const char *v;
			if (!al->file || !*al->file || ci < 0)
				continue;
			if ((v = lm_strmap_lookup(&x->file_maps[ci], al->file)))
				lk_set(&al->file, v);
		}
		if (p.n_klir)
			lk_walk_blocks(x, fci, fn->blocks, fn->n_blocks,
				       rewrite_klir, NULL);
	}
	lk_log(x, "setup_link_dir: %s/" LM_LINKED_DIR ": %d artifact%s "
	       "(%d symlink%s, %d cop%s), %d renamed on collision", base,
	       x->rep->n_artifacts,
	       x->rep->n_artifacts == 1 ? "" : "s", x->rep->n_artifacts - n_copy,
	       x->rep->n_artifacts - n_copy == 1 ? "" : "s", n_copy,
	       n_copy == 1 ? "y" : "ies", n_renamed);
done:
	for (int i = 0; i < p.n; i++) {
		free(p.c[i].src);
		free(p.c[i].root);
	}
	free(p.c);
	lm_strmap_free(&dst);
	lm_strmap_free(&taken);
	return rc;
}

/* ---- writing ----------------------------------------------------------- */

/*
** The link directory is built under a fresh name beside the old one
** (OUT/<name>/.sgLnk.new.<random>) and swapped in with one rename, holding
** an flock on OUT/<name> from the first look at the old directory to the
** last clean-up: a failed link leaves the previous one as it was, and
** concurrent links of one name run one after the other. Every file and
** directory is made beneath an open directory fd, never through a symlink
** (safeio.h).
*/

#define STAGE_PREFIX "." LM_LINKED_DIR ".new."
#define OLD_PREFIX "." LM_LINKED_DIR ".old."

typedef struct wctx {
	int fd;              /* the directory being written */
	const char *ld;      /* its final path OUT/<name>/sgLnk (messages) */
	lm_buf manifest;
	int pretty;          /* def.json indented */
	lm_error *err;
} wctx;

/* Number of components of a relative path. */
static int n_components(const char *rel)
{
	int n = 1;
	for (const char *p = rel; *p; p++)
		n += *p == '/';
	return n;
}

/*
** Open the parent directory of rel beneath w->fd, making the missing ones
** (recorded in the manifest, parents first). *shown: its path for
** messages.
*/
static int open_parent(wctx *w, const char *rel, int *dfd, char **shown)
{
	const char *slash = strrchr(rel, '/');
	char *dir = slash ? lm_xstrndup(rel, (size_t)(slash - rel)) : NULL;
	int made = 0, rc;
	*shown = NULL;
	rc = lm_dir_open_beneath(dfd, w->fd, w->ld, dir, 1, &made, w->err);
	if (!rc && made > 0) {
		int total = n_components(dir), k = 0;
		for (const char *p = dir; ; p++)
			if (*p == '/' || !*p) {
				if (++k > total - made)
					lm_buf_printf(&w->manifest, "dir %.*s\n",
						      (int)(p - dir), dir);
				if (!*p)
					break;
			}
	}
	if (!rc)
		*shown = dir ? lm_path_join(w->ld, dir) : lm_xstrdup(w->ld);
	free(dir);
	return rc;
}

static const char *last_component(const char *rel)
{
	const char *s = strrchr(rel, '/');
	return s ? s + 1 : rel;
}

/* A host file copied with its permission bits (less the umask), read
** beneath its module directory. */
static int copy_into(wctx *w, const lk_artifact *a, int dfd,
		     const char *shown)
{
	char *data = NULL;
	size_t len;
	unsigned mode;
	int rc = lm_module_file_read(a->root, a->src, &data, &len, &mode,
				     w->err);
	if (!rc)
		rc = lm_write_at(dfd, shown, last_component(a->dst), data, len,
				 mode, w->err);
	free(data);
	return rc;
}

static int write_artifact(wctx *w, const lk_artifact *a)
{
	struct stat st;
	char *shown;
	int dfd, rc;
	if (!lm_rel_path_ok(a->dst) || is_reserved(a->dst))
		return lm_err(w->err, w->ld, "", "unsafe artifact path '%s'",
			      a->dst);
	if ((rc = open_parent(w, a->dst, &dfd, &shown)) != 0)
		return rc;
	/* the directory is new: an entry there is another artifact's */
	if (fstatat(dfd, last_component(a->dst), &st, AT_SYMLINK_NOFOLLOW)
	    == 0)
		rc = lm_errc(w->err, LM_EINTERNAL, w->ld, "", "internal error: "
			     "two artifacts at '%s'; refusing to replace one "
			     "with the other", a->dst);
	else if (a->copy)
		rc = copy_into(w, a, dfd, shown);
	else
		rc = lm_symlink_at(dfd, shown, last_component(a->dst), a->src,
				   w->err);
	if (!rc)
		lm_buf_printf(&w->manifest, "%s %s\n", a->copy ? "copy" : "link",
			      a->dst);
	close(dfd);
	free(shown);
	return rc;
}

static int write_text(wctx *w, const char *name, const char *text,
		      size_t len)
{
	int rc = lm_write_at(w->fd, w->ld, name, text, len, 0644, w->err);
	if (!rc)
		lm_buf_printf(&w->manifest, "file %s\n", name);
	return rc;
}

/* ---- the previous link directory --------------------------------------- */

typedef struct oldlink {
	int fd;              /* the previous sgLnk/ */
	char *text;          /* its manifest (ours' keys point into it) */
	lm_strmap ours;      /* path -> kind letter (l, f, c, d) */
	char **user;         /* entries its manifest does not list */
	int n_user, cap_user;
} oldlink;

/*
** The previous manifest (none: nothing in the directory is ours). It must
** be a regular file (opened non-blocking: a FIFO there cannot hang the
** link) of at most LM_READ_MAX bytes; anything else is an error.
*/
static int read_manifest(oldlink *o, const char *ld, lm_error *err)
{
	char *shown = lm_path_join(ld, MANIFEST);
	size_t len;
	int64_t size;
	int fd, rc;
	rc = lm_open_regular_at(o->fd, MANIFEST, shown, &fd, &size, err);
	if (rc && errno == ENOENT) {
		free(shown);
		return 0;
	}
	if (!rc && size > LM_READ_MAX)
		rc = lm_err(err, shown, "", "file too large: %lld bytes (at "
			    "most %lld)", (long long)size,
			    (long long)LM_READ_MAX);
	if (!rc)
		rc = lm_read_fd(fd, shown, LM_READ_MAX, &o->text, &len, err);
	if (fd >= 0)
		close(fd);
	free(shown);
	if (rc)
		return rc;
	lm_strmap_put(&o->ours, MANIFEST, (void *)(intptr_t)'f');
	for (char *line = o->text, *nl; line && *line; line = nl) {
		char *sp;
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		sp = strchr(line, ' ');
		if (!sp || line[0] == '#')
			continue;
		*sp = 0;
		if (strcmp(line, "dir") && strcmp(line, "link") &&
		    strcmp(line, "file") && strcmp(line, "copy"))
			continue;
		lm_strmap_put(&o->ours, sp + 1, (void *)(intptr_t)line[0]);
	}
	return 0;
}

/* Is the entry rel (of type mode) one the previous link wrote? */
static int is_ours(const oldlink *o, const char *rel, mode_t mode)
{
	intptr_t k = (intptr_t)lm_strmap_lookup(&o->ours, rel);
	return (k == 'l' && S_ISLNK(mode)) || (k == 'd' && S_ISDIR(mode)) ||
		((k == 'f' || k == 'c') && S_ISREG(mode));
}

/*
** Walk directory fd (path prefix) of the previous link, never following a
** symlink. remove: unlink our entries (our directories when empty);
** otherwise list the others in o->user (a foreign directory as one entry).
*/
static void walk_old(oldlink *o, int fd, const char *prefix, int remove)
{
	int dfd = dup(fd);
	DIR *d;
	struct dirent *e;
	/* the dup shares fd's offset: an earlier walk moved it */
	if (dfd >= 0)
		lseek(dfd, 0, SEEK_SET);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;
		char *rel;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		rel = prefix ? lm_xasprintf("%s/%s", prefix, e->d_name)
			: lm_xstrdup(e->d_name);
		if (!is_ours(o, rel, st.st_mode)) {
			if (!remove) {
				lm_grow(&o->user, &o->cap_user, o->n_user + 1,
					sizeof *o->user);
				o->user[o->n_user++] = rel;
				rel = NULL;
			}
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY |
					 O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				walk_old(o, sub, rel, remove);
				close(sub);
			}
			if (remove)
				unlinkat(fd, e->d_name, AT_REMOVEDIR);
		} else if (remove) {
			unlinkat(fd, e->d_name, 0);
		}
		free(rel);
	}
	closedir(d);
}

/*
** The parent directory of rel (components from readdir: no '/', no ".",
** "..") beneath root, never through a symlink; create: make missing ones.
** -1 with errno on failure.
*/
static int parent_of(int root, const char *rel, int create)
{
	int fd = dup(root);
	for (const char *p = rel, *s; fd >= 0 && (s = strchr(p, '/')); p = s + 1) {
		char *comp = lm_xstrndup(p, (size_t)(s - p));
		int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				 O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create &&
		    (mkdirat(fd, comp, 0755) == 0 || errno == EEXIST))
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY |
				     O_NOFOLLOW | O_CLOEXEC);
		int en = errno;
		free(comp);
		close(fd);
		fd = nfd;
		errno = en;
	}
	return fd;
}

/* Does the new link directory already hold something at rel (or a
** non-directory on the way)? */
static int taken(int newfd, const char *rel)
{
	struct stat st;
	int fd = parent_of(newfd, rel, 0), r;
	if (fd < 0)
		return errno != ENOENT;
	r = fstatat(fd, last_component(rel), &st, AT_SYMLINK_NOFOLLOW) == 0;
	close(fd);
	return r;
}

/* Move the user's entry rel from the previous link dir into the new one. */
static int move_user(int oldfd, int newfd, const char *rel)
{
	int ofd = parent_of(oldfd, rel, 0), nfd = parent_of(newfd, rel, 1);
	int rc = ofd >= 0 && nfd >= 0 &&
		renameat(ofd, last_component(rel), nfd,
			 last_component(rel)) == 0 ? 0 : -1;
	if (ofd >= 0)
		close(ofd);
	if (nfd >= 0)
		close(nfd);
	return rc;
}

static void oldlink_free(oldlink *o)
{
	if (o->fd >= 0)
		close(o->fd);
	lm_strmap_free(&o->ours);
	free(o->text);
	for (int i = 0; i < o->n_user; i++)
		free(o->user[i]);
	free(o->user);
}

/* Fill the new link directory w->fd: artifacts, def.json, tensor map,
** manifest. */
static int write_contents(wctx *w, const lm_module *linked,
			  const lk_report *rep)
{
	char *text = NULL;
	size_t len;
	int rc = 0;
	lm_buf_puts(&w->manifest, "# written by lncsim link; --force removes "
		    "exactly these entries\n");
	for (int i = 0; i < rep->n_artifacts && !rc; i++)
		rc = write_artifact(w, &rep->artifacts[i]);
	if (!rc && (rc = lm_module_to_json(linked, w->pretty, &text, &len,
					   w->err)) == 0)
		rc = write_text(w, "def.json", text, len);
	free(text);
	text = NULL;
	/* the seed's tryUpdateTensorMapFile: the unified map */
	if (!rc && (rep->ran & LK_SKIP(LK_STEP_BUILD_MAIN_TENSOR_MAP))) {
		text = lk_tensor_map_json(rep);
		rc = write_text(w, "tensor-map.json", text, strlen(text));
		free(text);
	}
	if (!rc)
		rc = lm_write_at(w->fd, w->ld, MANIFEST, w->manifest.ptr,
				 w->manifest.size, 0644, w->err);
	return rc;
}

/*
** flock OUT/<name>, waiting at most LOCK_WAIT_S seconds for another link
** of the name to finish (polled every 50 ms with LOCK_NB: a link that
** hangs cannot block the next one forever).
*/
#define LOCK_WAIT_S 60
static int lock_dir(int fd, const char *shown, lm_error *err)
{
	struct timespec t0, now, nap = { 0, 50 * 1000 * 1000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return lm_err(err, shown, "", "cannot lock: %s",
				      strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= LOCK_WAIT_S)
			return lm_err(err, shown, "", "another lncsim link holds "
				      "the lock on %s (waited %d s)", shown,
				      LOCK_WAIT_S);
		nanosleep(&nap, NULL);
	}
}

int lk_write_link_dir(const lm_module *linked, const lk_report *rep,
		      const char *out_dir, int flags, lm_error *err)
{
	const int force = (flags & LK_WRITE_FORCE) != 0;
	wctx w;
	oldlink old;
	char *ld = NULL, *pshown = NULL, *stage = NULL, *gone = NULL;
	struct stat st;
	int odfd = -1, pfd = -1, rc, has_old = 0;
	const char *od = out_dir && *out_dir ? out_dir : ".";

	memset(&w, 0, sizeof w);
	memset(&old, 0, sizeof old);
	w.fd = old.fd = -1;
	w.err = err;
	w.pretty = (flags & LK_WRITE_PRETTY) != 0;
	lm_strmap_init(&old.ours);
	if (!linked || !rep || !rep->base_name)
		return lm_errc(err, LM_EINTERNAL, "", "", "nothing to write");
	if (!lm_rel_path_ok(rep->base_name))
		return lm_err(err, rep->base_name, "", "module name cannot name a "
			      "link directory (absolute, or an empty, '.' or "
			      "'..' component)");
	if ((rc = lm_mkdirs(od, err)) != 0)
		return rc;
	odfd = open(od, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (odfd < 0)
		return lm_err(err, od, "", "cannot open directory: %s",
			      strerror(errno));
	ld = lm_xasprintf("%s/%s/" LM_LINKED_DIR, od, rep->base_name);
	pshown = lm_xasprintf("%s/%s", od, rep->base_name);
	w.ld = ld;
	/* OUT/<name>: plain directories beneath OUT, locked while we work */
	if ((rc = lm_dir_open_beneath(&pfd, odfd, od, rep->base_name, 1, NULL,
				      err)) != 0)
		goto done;
	if ((rc = lock_dir(pfd, pshown, err)) != 0)
		goto done;
	if (fstatat(pfd, LM_LINKED_DIR, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			rc = lm_err(err, ld, "", "exists and is not a directory; "
				    "refusing to replace it");
			goto done;
		}
		if (!force) {
			rc = lm_err(err, ld, "", "link directory exists (use "
				    "--force to replace it)");
			goto done;
		}
		old.fd = openat(pfd, LM_LINKED_DIR, O_RDONLY | O_DIRECTORY |
				O_NOFOLLOW | O_CLOEXEC);
		if (old.fd < 0) {
			rc = lm_err(err, ld, "", "cannot open directory: %s",
				    strerror(errno));
			goto done;
		}
		has_old = 1;
	}
	/* the new directory, beside the old one */
	if ((rc = lm_mkdtemp_at(pfd, pshown, STAGE_PREFIX, &stage, err)) != 0)
		goto done;
	w.fd = openat(pfd, stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		      O_CLOEXEC);
	if (w.fd < 0 || fchmod(w.fd, 0755) != 0) {
		rc = lm_err(err, ld, "", "cannot create directory: %s",
			    strerror(errno));
		goto done;
	}
	if ((rc = write_contents(&w, linked, rep)) != 0)
		goto done;
	/* the user's entries of the old directory move over, unless the new
	   link writes there */
	if (has_old) {
		if ((rc = read_manifest(&old, ld, err)) != 0)
			goto done;
		walk_old(&old, old.fd, NULL, 0);
		for (int i = 0; i < old.n_user; i++)
			if (taken(w.fd, old.user[i])) {
				rc = lm_err(err, ld, old.user[i], "refusing to "
					    "replace a file not written by "
					    "lncsim link");
				goto done;
			}
	}
	/* swap it in */
	if (!has_old) {
		if (renameat(pfd, stage, pfd, LM_LINKED_DIR) != 0) {
			rc = errno == EEXIST || errno == ENOTEMPTY
				? lm_err(err, ld, "", "link directory exists "
					 "(use --force to replace it)")
				: lm_err(err, ld, "", "cannot create: %s",
					 strerror(errno));
			goto done;
		}
		free(stage);
		stage = NULL;
		goto synced;
	}
	if (lm_exchange_at(pfd, stage, LM_LINKED_DIR) == 0) {
		gone = stage;      /* the old directory now has the new's name */
		stage = NULL;
	} else if (errno == ENOSYS || errno == EINVAL || errno == ENOTSUP) {
		gone = lm_xasprintf(OLD_PREFIX "%s", stage + strlen(STAGE_PREFIX));
		if (renameat(pfd, LM_LINKED_DIR, pfd, gone) != 0) {
			rc = lm_err(err, ld, "", "cannot replace: %s",
				    strerror(errno));
			goto done;
		}
		if (renameat(pfd, stage, pfd, LM_LINKED_DIR) != 0) {
			rc = lm_err(err, ld, "", "cannot replace: %s",
				    strerror(errno));
			renameat(pfd, gone, pfd, LM_LINKED_DIR);
			goto done;
		}
		free(stage);
		stage = NULL;
	} else {
		rc = lm_err(err, ld, "", "cannot replace: %s", strerror(errno));
		goto done;
	}
	for (int i = 0; i < old.n_user && !rc; i++)
		if (move_user(old.fd, w.fd, old.user[i]) != 0)
			rc = lm_err(err, pshown, "", "%s/%s: cannot move the "
				    "user's file into the new link directory "
				    "(%s); it stays there", gone, old.user[i],
				    strerror(errno));
	walk_old(&old, old.fd, NULL, 1);
	if (unlinkat(pfd, gone, AT_REMOVEDIR) != 0 && !rc)
		rc = lm_err(err, pshown, "", "%s: the previous link directory "
			    "still holds files lncsim did not write (%s); the "
			    "new link is in place", gone, strerror(errno));
synced:
	fsync(pfd);
done:
	if (stage && pfd >= 0)
		lm_remove_tree_at(pfd, stage);
	oldlink_free(&old);
	if (w.fd >= 0)
		close(w.fd);
	if (pfd >= 0)
		close(pfd); /* drops the lock */
	if (odfd >= 0)
		close(odfd);
	free(stage);
	free(gone);
	free(ld);
	free(pshown);
	lm_buf_free(&w.manifest);
	return rc;
}

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
** wrote, every file written atomically (temp + rename).
*/
#include "common.h"
#include "lk_int.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST ".lncsim-link-manifest"
#define COLLIDED ((void *)(intptr_t)-1)

/* A planned artifact before dst names are decided. */
typedef struct cand {
	int ci;
	const char *rel;     /* the field's text (in the source module) */
	char *src;           /* realpath */
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

/* Validate one file field and add it to the plan (once per core). */
static int add_cand(lk_ctx *x, plan *p, lm_strmap *seen, int ci,
		    const char *rel, int copy, const char *where)
{
	const lk_core *c = &x->cores[ci];
	char *full, *rp;
	if (lm_strmap_lookup(seen, rel))
		return 0;
	if (rel[0] == '/')
		return lm_err(x->err, mpath(c), where, "file '%s' is an absolute "
			      "path (artifacts must be relative to the module)",
			      rel);
	if (!lk_path_is_safe(rel))
		return lm_err(x->err, mpath(c), where, "file '%s' contains '..' "
			      "(path traversal refused)", rel);
	full = lm_path_join(c->src->dir ? c->src->dir : ".", rel);
	rp = realpath(full, NULL);
	if (!rp) {
		int e = errno;
		lm_err(x->err, mpath(c), where, "file '%s' not found (%s): %s",
		       rel, full, strerror(e));
		free(full);
		return LM_EINPUT;
	}
	free(full);
	lm_strmap_put(seen, rel, (void *)rel);
	lm_grow(&p->c, &p->cap, p->n + 1, sizeof *p->c);
	p->c[p->n++] = (cand){ ci, rel, rp, copy };
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
			if (in->op == LM_OP_LOOP) {
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

/* "sub/wc.npy" -> "sub/nc1.wc.npy" */
static char *renamed(const char *rel, int64_t core)
{
	const char *s = strrchr(rel, '/');
	if (!s)
		return lm_xasprintf("nc%lld.%s", (long long)core, rel);
	return lm_xasprintf("%.*s/nc%lld.%s", (int)(s - rel), rel,
			    (long long)core, s + 1);
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
	lm_strmap dst;
	int rc = 0, n_copy = 0, n_renamed = 0;
	const char *base = x->rep->base_name;

	if (!lk_path_is_safe(base))
		return lm_err(x->err, mpath(&x->cores[0]), "module", "module "
			      "name '%s' cannot name a link directory (absolute "
			      "or contains '..')", base);
	x->file_maps = lm_xcalloc((size_t)x->n, sizeof *x->file_maps);
	lm_strmap_init(&dst);
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
	for (int i = 0; i < p.n; i++) {
		const cand *c = &p.c[i];
		void *v = lm_strmap_lookup(&dst, c->rel);
		int shared = v != COLLIDED && (intptr_t)v != i + 1;
		char *d = v == COLLIDED ? renamed(c->rel, x->cores[c->ci].core)
			: lm_xstrdup(c->rel);
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
		lk_artifact *ar = &x->rep->artifacts[x->rep->n_artifacts++];
		ar->src = lm_xstrdup(c->src);
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
	lk_log(x, "setup_link_dir: %s/sgLnk: %d artifact%s (%d symlink%s, %d "
	       "cop%s), %d renamed on collision", base, x->rep->n_artifacts,
	       x->rep->n_artifacts == 1 ? "" : "s", x->rep->n_artifacts - n_copy,
	       x->rep->n_artifacts - n_copy == 1 ? "" : "s", n_copy,
	       n_copy == 1 ? "y" : "ies", n_renamed);
done:
	for (int i = 0; i < p.n; i++)
		free(p.c[i].src);
	free(p.c);
	lm_strmap_free(&dst);
	return rc;
}

/* ---- writing ----------------------------------------------------------- */

typedef struct wctx {
	const char *ld;      /* the link dir */
	lm_buf manifest;
	lm_error *err;
} wctx;

/*
** Make the directories of rel (relative to root) one by one, refusing a
** symlinked component (it could lead outside the output directory).
** `last`: also the final component. Records made dirs in the manifest.
*/
static int make_dirs(wctx *w, const char *root, const char *rel, int last,
		     lm_buf *made)
{
	char *path = lm_xstrdup(root);
	const char *p = rel;
	int rc = 0;
	while (*p && !rc) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		struct stat st;
		char *next;
		if (!e && !last)
			break;
		next = lm_xasprintf("%s/%.*s", path, (int)len, p);
		free(path);
		path = next;
		if (lstat(path, &st) == 0) {
			if (S_ISLNK(st.st_mode))
				rc = lm_err(w->err, path, "", "is a symlink; "
					    "refusing to write through it");
			else if (!S_ISDIR(st.st_mode))
				rc = lm_err(w->err, path, "", "not a directory");
		} else if (mkdir(path, 0755) != 0) {
			rc = lm_err(w->err, path, "", "cannot create directory: "
				    "%s", strerror(errno));
		} else if (made) {
			lm_buf_printf(made, "dir %s\n",
				      path + strlen(w->ld) + 1);
		}
		p += len;
		if (*p == '/')
			p++;
	}
	free(path);
	return rc;
}

/* Refuse to replace anything at path (not ours: the old manifest is gone). */
static int must_be_free(wctx *w, const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0)
		return lm_err(w->err, path, "", "refusing to replace a file not "
			      "written by lncsim link");
	return 0;
}

static int write_text(wctx *w, const char *rel, const char *text, size_t len,
		      const char *kind)
{
	char *path = lm_xasprintf("%s/%s", w->ld, rel);
	int rc = must_be_free(w, path);
	if (!rc)
		rc = lm_write_file_atomic(path, text, len, w->err);
	if (!rc)
		lm_buf_printf(&w->manifest, "%s %s\n", kind, rel);
	free(path);
	return rc;
}

static int write_artifact(wctx *w, const lk_artifact *a)
{
	char *path, *tmp;
	int rc;
	if (!lk_path_is_safe(a->dst))
		return lm_err(w->err, a->dst, "", "unsafe artifact path");
	if ((rc = make_dirs(w, w->ld, a->dst, 0, &w->manifest)) != 0)
		return rc;
	path = lm_xasprintf("%s/%s", w->ld, a->dst);
	if ((rc = must_be_free(w, path)) != 0)
		goto out;
	if (a->copy) {
		char *data;
		size_t len;
		if ((rc = lm_read_file(a->src, &data, &len, w->err)) != 0)
			goto out;
		rc = lm_write_file_atomic(path, data, len, w->err);
		free(data);
		if (!rc)
			lm_buf_printf(&w->manifest, "copy %s\n", a->dst);
		goto out;
	}
	tmp = lm_xasprintf("%s.tmp.%ld", path, (long)getpid());
	if (symlink(a->src, tmp) != 0) {
		rc = lm_err(w->err, path, "", "cannot create symlink: %s",
			    strerror(errno));
	} else if (rename(tmp, path) != 0) {
		rc = lm_err(w->err, path, "", "cannot create symlink: %s",
			    strerror(errno));
		unlink(tmp);
	} else {
		lm_buf_printf(&w->manifest, "link %s\n", a->dst);
	}
	free(tmp);
out:
	free(path);
	return rc;
}

/*
** --force: remove what the previous link wrote (listed in its manifest):
** our symlinks and files, then our directories when empty. Anything else --
** a user's file -- stays; writing over it later is refused.
*/
static int remove_previous(wctx *w)
{
	char *mpath_ = lm_xasprintf("%s/" MANIFEST, w->ld), *text = NULL;
	size_t len;
	lm_error e;
	char **dirs = NULL;
	int nd = 0, cap = 0;
	if (lm_read_file(mpath_, &text, &len, &e) != 0) {
		free(mpath_);
		return 0; /* nothing of ours */
	}
	for (char *line = text, *nl; line && *line; line = nl) {
		char *sp, *path;
		struct stat st;
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		sp = strchr(line, ' ');
		if (!sp || line[0] == '#' || !lk_path_is_safe(sp + 1))
			continue;
		*sp = 0;
		path = lm_xasprintf("%s/%s", w->ld, sp + 1);
		if (!strcmp(line, "dir")) {
			lm_grow(&dirs, &cap, nd + 1, sizeof *dirs);
			dirs[nd++] = path;
			continue;
		}
		if (lstat(path, &st) == 0 &&
		    ((!strcmp(line, "link") && S_ISLNK(st.st_mode)) ||
		     ((!strcmp(line, "file") || !strcmp(line, "copy")) &&
		      S_ISREG(st.st_mode))))
			unlink(path);
		free(path);
	}
	for (int i = nd - 1; i >= 0; i--) {
		rmdir(dirs[i]); /* only when empty */
		free(dirs[i]);
	}
	free(dirs);
	unlink(mpath_);
	free(mpath_);
	free(text);
	return 0;
}

int lk_write_link_dir(const lm_module *linked, const lk_report *rep,
		      const char *out_dir, int force, lm_error *err)
{
	wctx w;
	char *rel, *ld, *text = NULL;
	size_t len;
	struct stat st;
	int rc;
	const char *od = out_dir && *out_dir ? out_dir : ".";

	if (!linked || !rep || !rep->base_name)
		return lm_errc(err, LM_EINTERNAL, "", "", "nothing to write");
	if (!lk_path_is_safe(rep->base_name))
		return lm_err(err, rep->base_name, "", "module name cannot name a "
			      "link directory (absolute or contains '..')");
	if ((rc = lm_mkdirs(od, err)) != 0)
		return rc;
	memset(&w, 0, sizeof w);
	w.err = err;
	rel = lm_xasprintf("%s/sgLnk", rep->base_name);
	ld = lm_xasprintf("%s/%s", od, rel);
	w.ld = ld;
	lm_buf_puts(&w.manifest, "# written by lncsim link; --force removes "
		    "exactly these entries\n");
	/* the parents of sgLnk: plain directories under out_dir */
	if ((rc = make_dirs(&w, od, rel, 0, NULL)) != 0)
		goto done;
	if (lstat(ld, &st) == 0) {
		if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
			rc = lm_err(err, ld, "", "exists and is not a directory; "
				    "refusing to replace it");
			goto done;
		}
		if (!force) {
			rc = lm_err(err, ld, "", "link directory exists (use "
				    "--force to replace it)");
			goto done;
		}
		remove_previous(&w);
	} else if (mkdir(ld, 0755) != 0) {
		rc = lm_err(err, ld, "", "cannot create directory: %s",
			    strerror(errno));
		goto done;
	}
	for (int i = 0; i < rep->n_artifacts && !rc; i++)
		rc = write_artifact(&w, &rep->artifacts[i]);
	if (rc)
		goto done;
	if ((rc = lm_module_to_json(linked, 1, &text, &len, err)) != 0)
		goto done;
	if ((rc = write_text(&w, "def.json", text, len, "file")) != 0)
		goto done;
	free(text);
	text = NULL;
	if (rep->ran & LK_SKIP(LK_STEP_BUILD_MAIN_TENSOR_MAP)) {
		text = lk_tensor_map_json(rep);
		if ((rc = write_text(&w, "tensor-map.json", text, strlen(text),
				     "file")) != 0)
			goto done;
	}
	{
		char *mp = lm_xasprintf("%s/" MANIFEST, ld);
		rc = lm_write_file_atomic(mp, w.manifest.ptr, w.manifest.size,
					  err);
		free(mp);
	}
done:
	free(text);
	free(rel);
	free(ld);
	lm_buf_free(&w.manifest);
	return rc;
}

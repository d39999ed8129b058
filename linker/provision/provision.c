/*
** provision.c -- TranslateNKIASTToBIR (seed 003 part 2): find
** every NKIKLIRKernel (IT56) carrier in every block of every function
** (collect, then remove), lower each by its kernel_format:
**
**   "bir"  Mechanism B (lowerFromBirJson): the BIR-JSON file's
**          functions[neuron_core_id] becomes the kernel function, behind
**          the LNC gate; argument maps by name in one shot; kernel_source
**          Beta3; scratchpad budget from a re-scan of the function's SB /
**          PSUM allocations; Const files localized.
**   else   Mechanism A (lowerKernelInst): the KLR CBOR file is read and
**          lowered by the codegen; argument maps per pair; kernel_source
**          Beta2; budget from the codegen context.
**
** Both mint the NKIKernel (IT55) call site "inst__<name>" in the carrier's
** place, pointing at the new function of kind nki, with the carrier's
** operands, dependencies and semaphores. Names of the new function's
** allocations, memory locations and instructions that collide with names
** already in the module are renamed NAME_1, NAME_2, ... (docs/provision.md).
*/
#include "common.h"
#include "provision_int.h"
#include "json.h"
#include "safeio.h"
#include "klr.h"

#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index of f's allocation named `name` (or owning a memory location of
** that name); -1 when none. */
static int find_formal(const lm_function *f, const char *name)
{
	for (int a = 0; a < f->n_allocs; a++)
		if (f->allocs[a].name && !strcmp(f->allocs[a].name, name))
			return a;
	for (int a = 0; a < f->n_allocs; a++)
		for (int l = 0; l < f->allocs[a].n_memlocs; l++)
			if (f->allocs[a].memlocs[l].name &&
			    !strcmp(f->allocs[a].memlocs[l].name, name))
				return a;
	return -1;
}

/* ---- Const files ---------------------------------------------------------- */

/*
** Copy the module file real (checked by lm_module_file, read beneath
** root) to rel beneath the output directory: directories made beneath
** it, never through a symlink; the output directory itself is
** opts->out_dirfd, or opts->out_dir opened as given.
*/
static int copy_file(lp_lower_ctx *lc, const char *root, const char *real,
		     const char *rel, lm_error *err)
{
	const char *out = lc->opts->out_dir;
	const char *slash = strrchr(rel, '/');
	char *data = NULL, *dir = NULL, *shown = NULL;
	size_t n;
	int ofd = -1, dfd = -1, rc;
	if ((rc = lm_module_file_read(root, real, &data, &n, NULL, err)) != 0)
		goto done;
	if (lc->opts->has_out_dirfd) {
		ofd = dup(lc->opts->out_dirfd);
	} else {
		if ((rc = lm_mkdirs(out, err)) != 0)
			goto done;
		ofd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (ofd < 0) {
		rc = lm_err(err, out, "", "cannot open directory: %s",
			    strerror(errno));
		goto done;
	}
	if (!lm_rel_path_ok(rel)) {
		rc = lm_errc(err, LM_EINTERNAL, out, "", "internal error: "
			     "unsafe path '%s'", rel);
		goto done;
	}
	dir = slash ? lm_xstrndup(rel, (size_t)(slash - rel)) : NULL;
	if ((rc = lm_dir_open_beneath(&dfd, ofd, out, dir, 1, NULL, err)) != 0)
		goto done;
	shown = dir ? lm_path_join(out, dir) : lm_xstrdup(out);
	rc = lm_write_at(dfd, shown, slash ? slash + 1 : rel, data, n, 0644,
			 err);
done:
	if (dfd >= 0)
		close(dfd);
	if (ofd >= 0)
		close(ofd);
	free(data);
	free(dir);
	free(shown);
	return rc;
}

/* Last path component. */
static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/*
** copyConstFileToArtifact: the Const allocations of kernel function f
** (read from the file kpath) name files relative to kdir (the kernel
** file's directory, as written in the module: rel_kdir is it relative to
** the module's directory). With an output directory each file must pass
** lm_module_file against kdir; it is copied to <out>/<tag>.const/<base>
** (made unique against every path the lowering writes there) and `file`
** points there; without one the paths are rewritten relative to the
** module's directory.
*/
static int localize_consts(lp_lower_ctx *lc, lm_function *f, const char *kdir,
			   const char *rel_kdir, const char *tag,
			   const char *kpath, lm_error *err)
{
	int rc = 0;
	for (int a = 0; a < f->n_allocs && !rc; a++) {
		lm_alloc *al = &f->allocs[a];
		char *real, *root, *rel, *want, where[512];
		if (al->kind != LM_TK_CONST || !al->file || !al->file[0])
			continue;
		if (!lc->opts->out_dir) {
			rel = lm_path_join(rel_kdir, al->file);
			free(al->file);
			al->file = rel;
			continue;
		}
		/* both become path components under the output directory */
		if (!lm_path_component_ok(tag) || strlen(tag) > 200) {
			rc = lm_err(err, "", "", "kernel function name '%s' cannot "
				    "name a directory under the output directory "
				    "(it must be one plain path component)", tag);
			break;
		}
		snprintf(where, sizeof where, "function %s/allocation %s", tag,
			 al->name ? al->name : "?");
		if ((rc = lm_module_file(kdir, al->file, kpath, where, &real,
					 &root, err)) != 0)
			break;
		want = lm_xasprintf("%s.const/%s", tag, base_name(al->file));
		rel = lp_ir_unique_name(want, &lc->files, NULL);
		free(want);
		lm_strmap_put(&lc->files, rel, (void *)1);
		rc = copy_file(lc, root, real, rel, err);
		free(real);
		free(root);
		free(al->file);
		al->file = rel;
	}
	return rc;
}

/* Record the module's own Const files (they keep their paths) before any
** kernel's file is given a name under the output directory. */
static void reserve_module_consts(lp_lower_ctx *lc, int nfun)
{
	lm_module *m = lc->m;
	for (int f = 0; f < nfun; f++)
		for (int i = 0; i < m->functions[f].n_allocs; i++) {
			const lm_alloc *al = &m->functions[f].allocs[i];
			if (al->kind == LM_TK_CONST && al->file && al->file[0])
				lm_strmap_put(&lc->files, al->file, (void *)1);
		}
}

/*
** The module's own Const files when the output goes to another directory:
** each must pass lm_module_file (relative, no "..", inside the module's
** directory) and is copied to the same relative path there; the kernels'
** copies were named around these paths (reserve_module_consts).
*/
static int copy_module_consts(lp_lower_ctx *lc, int nfun, lm_error *err)
{
	lm_module *m = lc->m;
	char a[PATH_MAX], b[PATH_MAX];
	int rc = 0;
	if (!lc->opts->out_dir || !realpath(lc->opts->out_dir, a) ||
	    (realpath(m->dir ? m->dir : ".", b) && !strcmp(a, b)))
		return 0;
	for (int f = 0; f < nfun && !rc; f++)
		for (int i = 0; i < m->functions[f].n_allocs && !rc; i++) {
			lm_alloc *al = &m->functions[f].allocs[i];
			char *real, *root, where[512];
			if (al->kind != LM_TK_CONST || !al->file || !al->file[0])
				continue;
			snprintf(where, sizeof where, "function %s/allocation %s",
				 m->functions[f].name, al->name ? al->name : "?");
			if ((rc = lm_module_file(m->dir, al->file, m->path ?
						 m->path : "", where, &real, &root,
						 err)) != 0)
				break;
			rc = copy_file(lc, root, real, al->file, err);
			free(real);
			free(root);
		}
	return rc;
}

/* ---- the IT55 call site ---------------------------------------------------- */

/* The scratchpad budget written on the call. */
typedef struct budget {
	int allocated;
	int64_t sb_max;     /* sb_per_partition_size */
	int64_t max_bank;   /* last PSUM bank used, -1 for none */
} budget;

/* A copy of a kv list. */
static lm_kv *kv_copy(const lm_kv *v, int n)
{
	lm_kv *r = n ? lm_xcalloc((size_t)n, sizeof *r) : NULL;
	for (int i = 0; i < n; i++) {
		r[i].key = lm_xstrdup(v[i].key ? v[i].key : "");
		r[i].value = lm_xstrdup(v[i].value ? v[i].value : "");
	}
	return r;
}

/*
** lowerKLIRToNKI / the tail of lowerFromBirJson: the NKIKernel call site
** "inst__<fname>" replacing the carrier, with the carrier's operands and
** synchronization, the argument maps (formal -> caller) and the budget.
*/
static void mint_call(lm_module *m, lm_inst *call, const lm_inst *carrier,
		      const char *fname, lm_kv *args, int n_args,
		      lm_kv *outs, int n_outs, const char *source,
		      const budget *bg)
{
	lp_ir_names mod;
	char *want = lm_xasprintf("inst__%s", fname);
	lm_inst tmp;

	lp_ir_names_of(&mod, m, -1);
	/* copy everything the carrier has (operands, sync, extra keys) */
	lm_inst_copy(&tmp, carrier);
	*call = tmp;
	{
		char *nm = lp_ir_unique_name(want, &mod.insts, NULL);
		lm_inst_set_str(call, &call->name, nm);
		free(nm);
	}
	free(want);
	lp_ir_names_free(&mod);
	call->op = LM_OP_NKIKERNEL;
	lm_inst_set_str(call, &call->kernel_format, NULL);
	lm_inst_set_str(call, &call->klir_binary, NULL);
	lm_inst_set_kvs(call, 0, args, n_args);
	lm_inst_set_kvs(call, 1, outs, n_outs);
	lm_inst_set_str(call, &call->func, fname);
	lm_inst_set_str(call, &call->kernel_source, source);
	if (bg->allocated) {
		call->has_sb_buf_shape = call->has_psum_buf_shape = 1;
		call->sb_buf_shape[0] = bg->sb_max;
		call->sb_buf_shape[1] = LM_PARTITIONS;
		call->psum_buf_shape[0] = LM_PARTITIONS;
		call->psum_buf_shape[1] = LM_PSUM_BANK_BYTES;
		call->psum_buf_shape[2] = bg->max_bank + 1;
		call->psum_buf_nested = 1;
	}
}

/* ---- argument maps ------------------------------------------------------------ */

/*
** Resolve the carrier's func_args / func_outs against the kernel function f
** (formal names: allocation or memory-location names of f) and the module
** (caller allocation names). *idx receives the formal allocation indexes.
*/
static int map_args(lp_lower_ctx *lc, const lm_function *f, const lm_kv *kv,
		    int n, const char *dir, int **idx, lm_error *err)
{
	*idx = n ? lm_xcalloc((size_t)n, sizeof **idx) : NULL;
	for (int i = 0; i < n; i++) {
		const char *formal = kv[i].key ? kv[i].key : "";
		(*idx)[i] = find_formal(f, formal);
		if ((*idx)[i] < 0)
			return lm_err(err, "", "", "%s %s cannot be found (no "
				      "tensor of kernel '%s' has this name)",
				      formal, dir, f->name);
		if (!kv[i].value || !lm_module_find_alloc(lc->m, kv[i].value,
							  NULL))
			return lm_err(err, "", "", "func_%s maps '%s' to '%s', "
				      "which is not an allocation of the "
				      "module", strcmp(dir, "input") ? "outs"
				      : "args", formal,
				      kv[i].value ? kv[i].value : "");
	}
	return 0;
}

/* The IT55 map: f's formal allocation names (after renaming) -> caller. */
static lm_kv *final_map(const lm_function *f, const lm_kv *kv, int n,
			const int *idx)
{
	lm_kv *r = kv_copy(kv, n);
	for (int i = 0; i < n; i++) {
		free(r[i].key);
		r[i].key = lm_xstrdup(f->allocs[idx[i]].name);
	}
	return r;
}

/* ---- Mechanism B ------------------------------------------------------------- */

/* The core id that selects functions[] / bodies[]; 0 when unset. */
static int core_of(const lp_lower_ctx *lc, int fi, int *has)
{
	const lm_function *fn = &lc->m->functions[fi];
	if (fn->has_core_id) {
		*has = 1;
		return (int)(fn->neuron_core_id > INT_MAX ? INT_MAX
			     : fn->neuron_core_id);
	}
	*has = lc->m->has_core_id;
	return (int)(lc->m->neuron_core_id > INT_MAX ? INT_MAX
		     : lc->m->neuron_core_id);
}

/* Rename a semaphore reference through map. */
static void sync_refs(lm_inst *in, void *ud)
{
	lm_strmap *const *maps = ud;   /* [0] semaphores, [1] queues,
					  [2] queue instances */
	for (int i = 0; i < in->n_wait; i++)
		lp_ir_remap(&in->wait[i].semaphore, maps[0]);
	for (int i = 0; i < in->n_update; i++)
		lp_ir_remap(&in->update[i].semaphore, maps[0]);
	lp_ir_remap(&in->queue, maps[1]);
	lp_ir_remap(&in->instance_name, maps[2]);
}

/*
** The kernel file's semaphores and queues join the module, renamed when
** their names are taken; f's references follow.
*/
static void merge_sync(lm_module *m, const lm_module *km, lm_function *f)
{
	lm_strmap sems, queues, qinsts, rs, rq, ri;
	lm_strmap *maps[3] = { &rs, &rq, &ri };

	lm_strmap_init(&sems);
	lm_strmap_init(&queues);
	lm_strmap_init(&qinsts);
	lm_strmap_init(&rs);
	lm_strmap_init(&rq);
	lm_strmap_init(&ri);
	for (int i = 0; i < m->n_semaphores; i++)
		lm_strmap_put(&sems, m->semaphores[i].name, (void *)1);
	for (int i = 0; i < m->n_queues; i++) {
		lm_strmap_put(&queues, m->queues[i].name, (void *)1);
		for (int j = 0; j < m->queues[i].n_instances; j++)
			lm_strmap_put(&qinsts, m->queues[i].instances[j].name,
				      (void *)1);
	}
	m->semaphores = lm_xrealloc(m->semaphores, (size_t)(m->n_semaphores +
				    km->n_semaphores + 1) * sizeof *m->semaphores);
	for (int i = 0; i < km->n_semaphores; i++) {
		lm_semaphore *s = &m->semaphores[m->n_semaphores++];
		memset(s, 0, sizeof *s);
		s->name = lp_ir_unique_name(km->semaphores[i].name, &sems, NULL);
		s->init = km->semaphores[i].init;
		lm_strmap_put(&sems, s->name, (void *)1);
		if (strcmp(s->name, km->semaphores[i].name))
			lm_strmap_put(&rs, km->semaphores[i].name, s->name);
	}
	m->queues = lm_xrealloc(m->queues, (size_t)(m->n_queues +
				km->n_queues + 1) * sizeof *m->queues);
	for (int i = 0; i < km->n_queues; i++) {
		const lm_queue *kq = &km->queues[i];
		lm_queue *q = &m->queues[m->n_queues++];
		memset(q, 0, sizeof *q);
		q->name = lp_ir_unique_name(kq->name, &queues, &qinsts);
		lm_strmap_put(&queues, q->name, (void *)1);
		if (strcmp(q->name, kq->name))
			lm_strmap_put(&rq, kq->name, q->name);
		q->n_instances = kq->n_instances;
		q->instances = lm_xcalloc((size_t)kq->n_instances + 1,
					  sizeof *q->instances);
		for (int j = 0; j < kq->n_instances; j++) {
			const lm_qinstance *ki = &kq->instances[j];
			lm_qinstance *qi = &q->instances[j];
			const char *sn = lm_strmap_lookup(&rs, ki->semaphore);
			qi->name = lp_ir_unique_name(ki->name, &qinsts, &queues);
			lm_strmap_put(&qinsts, qi->name, (void *)1);
			if (strcmp(qi->name, ki->name))
				lm_strmap_put(&ri, ki->name, qi->name);
			qi->semaphore = lm_xstrdup(sn ? sn : ki->semaphore);
		}
	}
	lp_ir_walk(f->blocks, f->n_blocks, sync_refs, maps);
	lm_strmap_free(&sems);
	lm_strmap_free(&queues);
	lm_strmap_free(&qinsts);
	lm_strmap_free(&rs);
	lm_strmap_free(&rq);
	lm_strmap_free(&ri);
}

/* Re-scan the allocations: SBUF high-water mark, PSUM banks, allocated. */
static void rescan_budget(const lm_function *f, budget *bg)
{
	memset(bg, 0, sizeof *bg);
	bg->max_bank = -1;
	for (int a = 0; a < f->n_allocs; a++)
		for (int l = 0; l < f->allocs[a].n_memlocs; l++) {
			const lm_memloc *ml = &f->allocs[a].memlocs[l];
			int64_t size = ml->n_dims >= 2 ? ml->dims[1] : 0;
			if (!ml->allocated)
				continue;
			if (ml->type == LM_MT_SB) {
				bg->allocated = 1;
				if (ml->addr + size > bg->sb_max)
					bg->sb_max = ml->addr + size;
			} else if (ml->type == LM_MT_PSUM) {
				int64_t last = lp_cg_bank_id(ml->addr +
							     (size ? size - 1 : 0));
				bg->allocated = 1;
				if (last > bg->max_bank)
					bg->max_bank = last;
			}
		}
}

/* Append function *f (moved) to the module. */
static void add_function(lm_module *m, lm_function *f)
{
	m->functions = lm_xrealloc(m->functions, (size_t)(m->n_functions + 1) *
				   sizeof *m->functions);
	m->functions[m->n_functions++] = *f;
	memset(f, 0, sizeof *f);
}

/*
** lowerFromBirJson. *made is 0 when the LNC gate skipped the kernel.
** Errors are reported without location (the caller adds it).
*/
static int lower_bir(lp_lower_ctx *lc, int fi, const lm_inst *carrier,
		     lm_inst *call, int *made, lm_error *err)
{
	lm_module *km = NULL;
	lm_function f;
	lm_error e2;
	char *path = lm_path_join(lc->m->dir, carrier->klir_binary);
	char *rel_kdir = lm_dirname(carrier->klir_binary);
	int has_core, core = core_of(lc, fi, &has_core), rc;
	int *ia = NULL, *io = NULL;
	budget bg;

	memset(&f, 0, sizeof f);
	*made = 0;
	if ((rc = lm_module_load(&km, path, &e2)) != 0) {
		rc = lm_err(err, "", "", "cannot load the BIR JSON kernel: %s",
			    e2.msg);
		goto done;
	}
	if (km->n_functions < 1) {
		rc = lm_err(err, "", "", "BIR JSON kernel '%s' has no functions",
			    path);
		goto done;
	}
	/* the LNC-sharding gate */
	if (!has_core && km->n_functions > 1) {
		rc = lm_err(err, "", "", "NeuronCoreId must be set when the LNC "
			    "count is greater than 1");
		goto done;
	}
	if (has_core && core >= km->n_functions) {
		lp_warn(lc->warn, "%s: The kernel is compiled for LNC count "
			"lower than the current core_id %d skip lowering",
			carrier->klir_binary, core);
		goto done;
	}
	lm_function_copy(&f, &km->functions[has_core ? core : 0]);
	f.has_kind = 1;
	f.kind = LM_FK_NKI;
	f.has_core_id = 0;
	if ((rc = map_args(lc, &f, carrier->func_args, carrier->n_func_args,
			   "input", &ia, err)) != 0 ||
	    (rc = map_args(lc, &f, carrier->func_outs, carrier->n_func_outs,
			   "output", &io, err)) != 0)
		goto done;
	merge_sync(lc->m, km, &f);
	rescan_budget(&f, &bg);
	lp_ir_adopt_names(lc->m, -1, &f);
	if ((rc = localize_consts(lc, &f, km->dir, rel_kdir, f.name, path,
				  err)) != 0)
		goto done;
	mint_call(lc->m, call, carrier, f.name,
		  final_map(&f, carrier->func_args, carrier->n_func_args, ia),
		  carrier->n_func_args,
		  final_map(&f, carrier->func_outs, carrier->n_func_outs, io),
		  carrier->n_func_outs, "Beta3", &bg);
	add_function(lc->m, &f);
	*made = 1;
done:
	lm_function_clear(&f);
	lm_module_free(km);
	free(ia);
	free(io);
	free(path);
	free(rel_kdir);
	return rc;
}

/* ---- Mechanism A ------------------------------------------------------------- */

/* lowerKernelInst for a KLR file. */
static int lower_klr(lp_lower_ctx *lc, int fi, const lm_inst *carrier,
		     lm_inst *call, lm_error *err)
{
	lp_klr_file kf;
	lp_cg cg;
	lm_function *f;
	char *path = lm_path_join(lc->m->dir, carrier->klir_binary);
	char *kdir = lm_dirname(path), *rel_kdir;
	int has_core, core = core_of(lc, fi, &has_core), rc;
	int *ia = NULL, *io = NULL;
	budget bg;

	memset(&cg, 0, sizeof cg);
	rel_kdir = lm_dirname(carrier->klir_binary);
	if ((rc = lp_klr_read(&kf, path, err)) != 0)
		goto done;
	if (kf.contents.ctor != LP_CONTENTS_LNC) {
		rc = lm_err(err, path, "", "Wrong KLIR content type: the "
			    "contents are '%s', the lowering needs 'lnc'",
			    lp_kval_ctor_name(&kf.contents));
		goto done;
	}
	lp_cg_init(&cg, lc, path, err);
	cg.has_core = has_core;
	if ((rc = lp_codegen_lnc(&cg, &kf.contents.items[0], core)) != 0)
		goto done;
	f = cg.f;
	if ((rc = map_args(lc, f, carrier->func_args, carrier->n_func_args,
			   "input", &ia, err)) != 0 ||
	    (rc = map_args(lc, f, carrier->func_outs, carrier->n_func_outs,
			   "output", &io, err)) != 0)
		goto done;
	bg.allocated = 1;   /* every tensor has its place after lp_cg_place */
	bg.sb_max = cg.sb_max;
	bg.max_bank = cg.psum_max_bank;
	lp_ir_adopt_names(lc->m, -1, f);
	if ((rc = localize_consts(lc, f, kdir, rel_kdir, f->name, path,
				  err)) != 0)
		goto done;
	mint_call(lc->m, call, carrier, f->name,
		  final_map(f, carrier->func_args, carrier->n_func_args, ia),
		  carrier->n_func_args,
		  final_map(f, carrier->func_outs, carrier->n_func_outs, io),
		  carrier->n_func_outs, "Beta2", &bg);
	add_function(lc->m, f);
done:
	lp_cg_free(&cg);
	lp_klr_file_free(&kf);
	free(ia);
	free(io);
	free(path);
	free(kdir);
	free(rel_kdir);
	return rc;
}

/* ---- the driver ---------------------------------------------------------------- */

/* Carrier name -> call name ("" when the carrier was skipped). */
typedef struct carriers {
	lm_strmap map;
	int n, cap;
	char **owned;
} carriers;

/* Lower every carrier of the blocks of function fi (recursing into Loops). */
static int lower_blocks(lp_lower_ctx *lc, int fi, lm_block *bs, int nb,
			carriers *cs, lm_error *err)
{
	for (int b = 0; b < nb; b++) {
		lm_block *bl = &bs[b];
		lm_inst *out = lm_xcalloc((size_t)bl->n_insts + 1, sizeof *out);
		int n = 0, rc = 0, i;
		for (i = 0; i < bl->n_insts && !rc; i++) {
			lm_inst *in = &bl->insts[i];
			lm_inst call;
			int made = 1;
			lm_error e2;
			if (in->n_blocks)
				rc = lower_blocks(lc, fi, in->blocks,
						  in->n_blocks, cs, err);
			if (in->n_blocks || rc) {
				out[n++] = *in;
				continue;
			}
			if (in->op != LM_OP_NKIKLIRKERNEL) {
				out[n++] = *in;
				continue;
			}
			memset(&call, 0, sizeof call);
			if (in->kernel_format && !strcmp(in->kernel_format, "bir"))
				rc = lower_bir(lc, fi, in, &call, &made, &e2);
			else
				rc = lower_klr(lc, fi, in, &call, &e2);
			if (rc) {
				char where[512];
				snprintf(where, sizeof where,
					 "function %s/block %s/instruction %s",
					 lc->m->functions[fi].name,
					 bl->name ? bl->name : "?",
					 in->name ? in->name : "?");
				rc = lm_err(err, lc->m->path, where, "%s", e2.msg);
				out[n++] = *in;
				continue;
			}
			{
				char *key = in->name ? in->name : lm_xstrdup("");
				char *val = lm_xstrdup(made ? call.name : "");
				in->name = NULL;
				lm_grow(&cs->owned, &cs->cap, cs->n + 2,
					sizeof *cs->owned);
				cs->owned[cs->n++] = key;
				cs->owned[cs->n++] = val;
				lm_strmap_put(&cs->map, key, val);
			}
			if (made)
				out[n++] = call;
			lm_inst_clear(in);
		}
		for (; i < bl->n_insts; i++)
			out[n++] = bl->insts[i];
		free(bl->insts);
		bl->insts = out;
		bl->n_insts = n;
		if (rc)
			return rc;
	}
	return 0;
}

/* Dependencies on a carrier now name its call (or vanish when skipped). */
static void redirect_deps(lm_inst *in, void *ud)
{
	const lm_strmap *map = ud;
	lm_inst_unpack(in);
	for (int i = 0; i < in->n_deps; i++) {
		const char *to = lm_strmap_lookup(map, in->deps[i]);
		if (!to)
			continue;
		if (*to) {
			lm_inst_set_dep(in, 0, i, to);
		} else {
			lm_inst_remove_dep(in, 0, i);
			i--;
		}
	}
}

int lp_lower(lm_module **out, const lm_module *in, const lp_lower_opts *opts,
	     lp_warnings *warn, lm_error *err)
{
	static const lp_lower_opts dflt;
	lp_lower_ctx lc;
	int nfun, rc = 0;

	*out = NULL;
	memset(&lc, 0, sizeof lc);
	lc.m = lm_module_clone(in);
	lc.opts = opts ? opts : &dflt;
	lc.warn = warn;
	lm_strmap_init(&lc.files);
	nfun = lc.m->n_functions;
	reserve_module_consts(&lc, nfun);
	for (int fi = 0; fi < nfun && !rc; fi++) {
		carriers cs;
		memset(&cs, 0, sizeof cs);
		lm_strmap_init(&cs.map);
		rc = lower_blocks(&lc, fi, lc.m->functions[fi].blocks,
				  lc.m->functions[fi].n_blocks, &cs, err);
		if (!rc)
			lp_ir_walk(lc.m->functions[fi].blocks,
			     lc.m->functions[fi].n_blocks, redirect_deps,
			     &cs.map);
		lm_strmap_free(&cs.map);
		for (int i = 0; i < cs.n; i++)
			free(cs.owned[i]);
		free(cs.owned);
	}
	if (!rc)
		rc = copy_module_consts(&lc, nfun, err);
	if (!rc && lc.opts->out_dir) {
		free(lc.m->dir);
		lc.m->dir = lm_xstrdup(lc.opts->out_dir);
	}
	if (!rc && lc.opts->inline_kernels)
		rc = lp_inline_nki(lc.m, err);
	lm_strmap_free(&lc.files);
	if (rc) {
		lm_module_free(lc.m);
		return rc;
	}
	*out = lc.m;
	return 0;
}

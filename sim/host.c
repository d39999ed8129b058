/*
** host.c -- host tensors: the input set of a run (from .npy
** files or a seed), writing outputs, freeing results, and the per-core
** statistics table printed by `lncsim run --stats`.
*/
#include "common.h"
#include "sim_int.h"
#include "npy.h"
#include "dtype.h"
#include "safeio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- tensor sets -------------------------------------------------------- */

void ls_tensors_free(ls_tensors *ts)
{
	if (!ts)
		return;
	for (int i = 0; i < ts->n; i++) {
		free(ts->t[i].name);
		free(ts->t[i].data);
	}
	free(ts->t);
	ts->t = NULL;
	ts->n = 0;
}

ls_tensor *ls_tensors_find(const ls_tensors *ts, const char *name)
{
	if (!ts || !name)
		return NULL;
	for (int i = 0; i < ts->n; i++)
		if (strcmp(ts->t[i].name, name) == 0)
			return &ts->t[i];
	return NULL;
}

ls_tensor *ls_tensors_add(ls_tensors *ts, const char *name, lm_dtype t,
			  const int64_t *shape, int ndim, const void *data)
{
	ls_tensor *x;
	size_t bytes;
	if (ndim > 8)
		ndim = 8;
	ts->t = lm_xrealloc(ts->t, (size_t)(ts->n + 1) * sizeof *ts->t);
	x = &ts->t[ts->n++];
	memset(x, 0, sizeof *x);
	x->name = lm_xstrdup(name);
	x->dtype = t;
	x->ndim = ndim;
	x->count = 1;
	for (int i = 0; i < ndim; i++) {
		x->shape[i] = shape[i];
		x->count *= shape[i];
	}
	bytes = (size_t)x->count * (size_t)lm_dtype_size(t);
	x->data = lm_xmalloc(bytes + 1);
	if (data && bytes)
		memcpy(x->data, data, bytes);
	else
		memset(x->data, 0, bytes + 1);
	return x;
}

void ls_result_free(ls_result *r)
{
	if (!r)
		return;
	free(r->cores);
	for (int i = 0; i < r->n_matmuls; i++)
		free(r->matmuls[i].name);
	free(r->matmuls);
	ls_tensors_free(&r->outputs);
	ls_races_free(r->races, r->n_races);
	for (int i = 0; i < r->n_kernels; i++) {
		free(r->kernels[i].call);
		free(r->kernels[i].func);
		free(r->kernels[i].caller);
		for (int q = 0; q < r->kernels[i].n_queues; q++)
			free(r->kernels[i].queues[q].queue);
		free(r->kernels[i].queues);
	}
	free(r->kernels);
	memset(r, 0, sizeof *r);
}

/* ---- file names ------------------------------------------------------- */

/*
** One mapping, used for reading inputs and writing outputs alike: every
** byte kept, except '%', '/', backslash and the control bytes, which become
** "%XX" (two upper-case hex digits), then ".npy". No two names share a
** file, and the name comes back by undoing the escapes.
*/
int ls_tensor_file_name(char **out, const char *name, const char *dir,
			lm_error *err)
{
	static const char hex[] = "0123456789ABCDEF";
	lm_buf b = LM_BUF_INIT;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p == '%' || *p == '/' || *p == '\\' || *p < 0x20 ||
		    *p == 0x7f) {
			char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
			lm_buf_put(&b, e, 3);
		} else {
			lm_buf_put(&b, p, 1);
		}
	}
	lm_buf_puts(&b, ".npy");
	*out = NULL;
	if (!lm_path_component_ok(lm_buf_cstr(&b))) {
		int rc = lm_err(err, dir, "", "tensor '%s': its file name "
				"would be %zu bytes (at most 255)", name,
				b.size);
		lm_buf_free(&b);
		return rc;
	}
	*out = lm_buf_detach(&b);
	return 0;
}

/* ---- inputs ------------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* n values uniform in [-1, 1) (24-bit grid), rounded to dtype t, into out. */
static void gen_uniform(uint64_t seed, const char *name, lm_dtype t,
			int64_t n, void *out)
{
	uint64_t st = mix64(seed ^ lm_hash_str(name));
	int es = lm_dtype_size(t);
	float f[1024];
	/* in blocks, converted by the simulator's block conversion */
	for (int64_t i0 = 0; i0 < n; i0 += 1024) {
		int64_t m = n - i0 < 1024 ? n - i0 : 1024;
		for (int64_t j = 0; j < m; j++) {
			uint64_t z = mix64(st + (uint64_t)(i0 + j));
			float v = (float)(int64_t)(z >> 40) *
				  (1.0f / 16777216.0f);
			f[j] = 2.0f * v - 1.0f;
		}
		ls_f32_to_dtype(t, f, (uint8_t *)out + es * i0, m);
	}
}

/*
** Load one input from its file (ls_tensor_file_name) in the directory
** dirfd (dir names it), never through a symlink.
*/
static int load_input(const lm_module *m, const lm_alloc *a, int dirfd,
		      const char *dir, ls_tensors *out, lm_error *err)
{
	char *fname, *path;
	int64_t n = lm_alloc_elems(a);
	lm_npy arr;
	int rc;
	void *buf;
	struct stat st;

	if ((rc = ls_tensor_file_name(&fname, a->name, dir, err)) != 0)
		return rc;
	path = lm_path_join(dir, fname);
	/* missing? fstatat, not open: (without O_NONBLOCK) opening a FIFO
	 * would wait for a writer */
	if (fstatat(dirfd, fname, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
	    errno == ENOENT) {
		rc = lm_err(err, m->path, "", "missing input '%s' (no %s)",
			    a->name, path);
		goto fail;
	}
	/* the element count from the header first: no payload is read for
	 * a file of the wrong size (a symlink, a FIFO or a device is
	 * refused here) */
	rc = lm_npy_read_header_at(dirfd, fname, path, &arr, err);
	if (!rc && arr.count == n)
		rc = lm_npy_read_at(dirfd, fname, path, &arr, err);
	if (rc)
		goto fail;
	if (arr.count != n) {
		rc = lm_err(err, path, "", "input '%s' has %lld elements, the "
			    "allocation %lld", a->name, (long long)arr.count,
			    (long long)n);
		goto done;
	}
	buf = lm_xmalloc((size_t)n * (size_t)lm_dtype_size(a->dtype) + 1);
	rc = lm_npy_convert(&arr, a->dtype, buf, path, err);
	if (rc == 0)
		ls_tensors_add(out, a->name, a->dtype, a->tensor_shape,
			       a->n_shape, buf);
	free(buf);
done:
	lm_npy_free(&arr);
fail:
	free(fname);
	free(path);
	return rc;
}

void ls_output_owners(lm_module *const *mods, int n_mods, lm_strmap *owners)
{
	lm_strmap_init(owners);
	for (int mi = 0; mi < n_mods; mi++) {
		const lm_module *m = mods[mi];
		for (int f = 0; f < m->n_functions; f++)
			for (int i = 0; i < m->functions[f].n_allocs; i++) {
				const lm_alloc *a = &m->functions[f].allocs[i];
				if (lm_tensorkind_is_ext_output(a->kind) &&
				    !a->alias_of && !a->has_remote && a->name &&
				    !lm_strmap_get(owners, a->name, NULL))
					lm_strmap_put(owners, a->name,
						      (void *)(intptr_t)(mi + 1));
			}
	}
}

int ls_handoff_owner(const lm_strmap *owners, int mi, const lm_alloc *a)
{
	void *v;
	if (!owners->n || !lm_tensorkind_is_ext_input(a->kind) ||
	    a->alias_of || a->has_remote || !a->name ||
	    !lm_strmap_get(owners, a->name, &v) || (intptr_t)v - 1 == mi)
		return -1;
	return (int)(intptr_t)v - 1;
}

int ls_make_inputs(lm_module *const *mods, int n_mods, const char *inputs_dir,
		   uint64_t seed, ls_tensors *out, lm_error *err)
{
	int rc = 0, dirfd = -1;
	lm_strmap owners;
	memset(out, 0, sizeof *out);
	/* the directory is the user's: opened as given */
	if (inputs_dir) {
		dirfd = open(inputs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return lm_err(err, inputs_dir, "", "cannot open "
				      "directory: %s", strerror(errno));
	}
	/* an input named like another module's output is that output
	   (a name-matched hand-off), not a host tensor */
	ls_output_owners(mods, n_mods, &owners);
	for (int mi = 0; mi < n_mods && !rc; mi++) {
		const lm_module *m = mods[mi];
		for (int f = 0; f < m->n_functions && !rc; f++) {
			const lm_function *fn = &m->functions[f];
			for (int i = 0; i < fn->n_allocs && !rc; i++) {
				const lm_alloc *a = &fn->allocs[i];
				ls_tensor *t;
				if (!lm_tensorkind_is_ext_input(a->kind) ||
				    a->alias_of || a->has_remote ||
				    ls_handoff_owner(&owners, mi, a) >= 0)
					continue;
				t = ls_tensors_find(out, a->name);
				if (t) {
					if (t->dtype != a->dtype ||
					    t->count != lm_alloc_elems(a))
						rc = lm_err(err, m->path, a->name,
							    "external input '%s' "
							    "is declared with "
							    "another dtype or "
							    "shape elsewhere",
							    a->name);
					continue;
				}
				if (lm_dtype_size(a->dtype) <= 0) {
					rc = lm_err(err, m->path, a->name,
						    "input '%s' has no dtype",
						    a->name);
					continue;
				}
				if (inputs_dir) {
					rc = load_input(m, a, dirfd, inputs_dir,
							out, err);
				} else {
					int64_t n = lm_alloc_elems(a);
					t = ls_tensors_add(out, a->name, a->dtype,
							   a->tensor_shape,
							   a->n_shape, NULL);
					gen_uniform(seed, a->name, a->dtype, n,
						    t->data);
				}
			}
		}
	}
	if (dirfd >= 0)
		close(dirfd);
	lm_strmap_free(&owners);
	if (rc)
		ls_tensors_free(out);
	return rc;
}

int ls_write_outputs_at(int dirfd, const char *dir, const ls_tensors *ts,
			lm_error *err)
{
	int rc = 0;
	for (int i = 0; i < ts->n && !rc; i++) {
		const ls_tensor *t = &ts->t[i];
		char *fname, *img = NULL;
		size_t len = 0;
		if ((rc = ls_tensor_file_name(&fname, t->name, dir, err)) != 0)
			break;
		rc = lm_npy_serialize(t->dtype, t->shape, t->ndim, t->data,
				      &img, &len, err);
		if (!rc)
			rc = lm_write_at(dirfd, dir, fname, img, len, 0644,
					 err);
		free(img);
		free(fname);
	}
	return rc;
}

int ls_write_outputs(const ls_tensors *ts, const char *dir, lm_error *err)
{
	int rc = lm_mkdirs(dir, err), dirfd;
	if (rc)
		return rc;
	/* the directory is the user's: opened as given */
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return lm_err(err, dir, "", "cannot open directory: %s",
			      strerror(errno));
	rc = ls_write_outputs_at(dirfd, dir, ts, err);
	close(dirfd);
	return rc;
}

/* ---- the statistics table ----------------------------------------------- */

/* A percentage of part in whole, "-" when whole is 0. */
static void put_pct(lm_buf *b, int width, int64_t part, int64_t whole)
{
	if (whole > 0)
		lm_buf_printf(b, " %*.1f", width, 100.0 * (double)part /
			      (double)whole);
	else
		lm_buf_printf(b, " %*s", width, "-");
}

/*
** The kernel calls of r: one line each (engine and DMA utilization in
** percent of the call's time, as the report's kernel table), then one
** line per DMA queue instance the call used.
*/
static void format_kernels(const ls_result *r, lm_buf *b)
{
	static const char *const util[LS_ENGINES] = { "PE%", "ACT%", "DVE%",
						       "Pool%", "SP%" };
	lm_buf_printf(b, "%d kernel call%s\n", r->n_kernels,
		      r->n_kernels == 1 ? "" : "s");
	lm_buf_printf(b, "%-5s %-4s %-5s %-24s %-16s %10s %10s", "call", "core",
		      "depth", "instruction", "kernel", "start_us", "time_us");
	for (int e = 0; e < LS_ENGINES; e++)
		lm_buf_printf(b, " %6s", util[e]);
	lm_buf_printf(b, " %6s %10s %s\n", "DMA%", "DMA_bytes", "critical");
	for (int i = 0; i < r->n_kernels; i++) {
		const ls_kernel_stats *k = &r->kernels[i];
		int64_t len = k->end_ps - k->start_ps;
		char seq[16];
		snprintf(seq, sizeof seq, "k%d", i);
		lm_buf_printf(b, "%-5s %-4d %-5d %-24s %-16s %10.3f %10.3f", seq,
			      k->core, k->depth, k->call ? k->call : "",
			      k->func ? k->func : "",
			      (double)k->start_ps / 1e6, (double)len / 1e6);
		for (int e = 0; e < LS_ENGINES; e++)
			put_pct(b, 6, k->busy_ps[e], len);
		put_pct(b, 6, k->dma_active_ps, len);
		lm_buf_printf(b, " %10lld %s\n", (long long)k->dma_bytes,
			      ls_kernel_engine_name(k->critical));
		for (int q = 0; q < k->n_queues; q++) {
			const ls_kernel_queue *kq = &k->queues[q];
			lm_buf_printf(b, "      queue %s: in flight", kq->queue);
			put_pct(b, 0, kq->active_ps, len);
			lm_buf_printf(b, "%%, %lld bytes, %lld transfers\n",
				      (long long)kq->bytes,
				      (long long)kq->transfers);
		}
	}
}

void ls_format_stats(const ls_result *r, lm_buf *b)
{
	lm_buf_printf(b, "simulated time %.3f us (%lld ps), %lld instructions, "
		      "%d matmuls\n", (double)r->sim_time_ps / 1e6,
		      (long long)r->sim_time_ps, (long long)r->instructions,
		      r->n_matmuls);
	/* the utilizations are fractions in ls_core_stats and percent here,
	   as in every report */
	lm_buf_printf(b, "%-4s %8s %7s %12s %8s %9s %9s %9s %9s %9s %9s "
		      "%10s %9s %9s %10s\n", "core", "instrs", "matmuls", "MACs",
		      "pe_util%", "mac_util%", "PE_us", "ACT_us", "DVE_us",
		      "Pool_us", "SP_us", "DMA_bytes", "barr_us", "sem_us",
		      "end_us");
	for (int i = 0; i < r->n_cores; i++) {
		const ls_core_stats *c = &r->cores[i];
		lm_buf_printf(b, "%-4d %8lld %7lld %12lld %8.1f %9.2f", c->core,
			      (long long)c->instructions, (long long)c->matmuls,
			      (long long)c->macs, 100 * c->pe_util,
			      100 * c->mac_util);
		for (int e = 0; e < LS_ENGINES; e++)
			lm_buf_printf(b, " %9.3f", (double)c->busy_ps[e] / 1e6);
		lm_buf_printf(b, " %10lld %9.3f %9.3f %10.3f\n",
			      (long long)c->dma_bytes,
			      (double)c->barrier_wait_ps / 1e6,
			      (double)c->semaphore_wait_ps / 1e6,
			      (double)c->end_ps / 1e6);
	}
	if (r->n_kernels > 0)
		format_kernels(r, b);
}

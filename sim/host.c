/*
** host.c -- host tensors (SPEC 3.6): the input set of a run (from .npy
** files or a seed), writing outputs, freeing results, and the per-core
** statistics table printed by `lncsim run --stats`.
*/
#include "common.h"
#include "sim_int.h"
#include "npy.h"
#include "dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	memset(r, 0, sizeof *r);
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

/* Load one input from dir/<name>.npy. */
static int load_input(const lm_module *m, const lm_alloc *a, const char *dir,
		      ls_tensors *out, lm_error *err)
{
	char *fname = lm_xasprintf("%s.npy", a->name);
	char *path = lm_path_join(dir, fname);
	int64_t n = lm_alloc_elems(a);
	lm_npy arr;
	int rc;
	void *buf;
	struct stat st;

	free(fname);
	/* stat, not open: opening a FIFO would wait for a writer */
	if (stat(path, &st) != 0) {
		rc = lm_err(err, m->path, "", "missing input '%s' (no %s)",
			    a->name, path);
		free(path);
		return rc;
	}
	/* the element count from the header first: no payload is read for
	 * a file of the wrong size (a FIFO or a device is refused here) */
	rc = lm_npy_read_header(path, &arr, err);
	if (!rc && arr.count == n)
		rc = lm_npy_read(path, &arr, err);
	if (rc) {
		free(path);
		return rc;
	}
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
	free(path);
	return rc;
}

int ls_make_inputs(lm_module *const *mods, int n_mods, const char *inputs_dir,
		   uint64_t seed, ls_tensors *out, lm_error *err)
{
	int rc = 0;
	memset(out, 0, sizeof *out);
	for (int mi = 0; mi < n_mods && !rc; mi++) {
		const lm_module *m = mods[mi];
		for (int f = 0; f < m->n_functions && !rc; f++) {
			const lm_function *fn = &m->functions[f];
			for (int i = 0; i < fn->n_allocs && !rc; i++) {
				const lm_alloc *a = &fn->allocs[i];
				ls_tensor *t;
				if (!lm_tensorkind_is_ext_input(a->kind) ||
				    a->alias_of || a->has_remote)
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
					rc = load_input(m, a, inputs_dir, out,
							err);
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
	if (rc)
		ls_tensors_free(out);
	return rc;
}

int ls_write_outputs(const ls_tensors *ts, const char *dir, lm_error *err)
{
	int rc = lm_mkdirs(dir, err);
	for (int i = 0; i < ts->n && !rc; i++) {
		const ls_tensor *t = &ts->t[i];
		char *fname = lm_xasprintf("%s.npy", t->name), *path;
		for (char *p = fname; *p; p++)
			if (*p == '/' || *p == '\\')
				*p = '_';
		path = lm_path_join(dir, fname);
		rc = lm_npy_write(path, t->dtype, t->shape, t->ndim, t->data,
				  err);
		free(fname);
		free(path);
	}
	return rc;
}

/* ---- the statistics table ----------------------------------------------- */

void ls_format_stats(const ls_result *r, lm_buf *b)
{
	lm_buf_printf(b, "simulated time %.3f us (%lld ps), %lld instructions, "
		      "%d matmuls\n", (double)r->sim_time_ps / 1e6,
		      (long long)r->sim_time_ps, (long long)r->instructions,
		      r->n_matmuls);
	lm_buf_printf(b, "%-4s %8s %7s %12s %7s %8s %9s %9s %9s %9s %9s "
		      "%10s %9s %9s %10s\n", "core", "instrs", "matmuls", "MACs",
		      "pe_util", "mac_util", "PE_us", "ACT_us", "DVE_us",
		      "Pool_us", "SP_us", "DMA_bytes", "barr_us", "sem_us",
		      "end_us");
	for (int i = 0; i < r->n_cores; i++) {
		const ls_core_stats *c = &r->cores[i];
		lm_buf_printf(b, "%-4d %8lld %7lld %12lld %7.3f %8.4f", c->core,
			      (long long)c->instructions, (long long)c->matmuls,
			      (long long)c->macs, c->pe_util, c->mac_util);
		for (int e = 0; e < LS_ENGINES; e++)
			lm_buf_printf(b, " %9.3f", (double)c->busy_ps[e] / 1e6);
		lm_buf_printf(b, " %10lld %9.3f %9.3f %10.3f\n",
			      (long long)c->dma_bytes,
			      (double)c->barrier_wait_ps / 1e6,
			      (double)c->semaphore_wait_ps / 1e6,
			      (double)c->end_ps / 1e6);
	}
}

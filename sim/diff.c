/*
** diff.c -- the differential checker: reference (per-core modules side by
** side) vs linked module, same inputs, bit-identical outputs, optionally
** under K perturbed schedules. The expected output set comes from the
** per-core modules and the reads the reference run observed, never from
** the linker's rule.
*/
#include "common.h"
#include "diff.h"
#include "sim_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Is the allocation bound to the host-boundary output buffer (a memory
** location of type Output)? Then it is a model output. */
static int is_host_boundary(const lm_alloc *a)
{
	for (int l = 0; l < a->n_memlocs; l++)
		if (a->memlocs[l].type == LM_MT_OUTPUT)
			return 1;
	return 0;
}

int ls_expected_outputs(lm_module *const *mods, int n_mods,
			const ls_tensors *ref_outputs, char ***expected,
			int *n_expected, char ***handoffs, int *n_handoffs,
			lm_error *err)
{
	lm_strmap seen;
	lm_strmap_init(&seen);
	char **exp = NULL, **hand = NULL;
	int ne = 0, nh = 0, cap_e = 0, cap_h = 0, rc = 0;
	*expected = *handoffs = NULL;
	*n_expected = *n_handoffs = 0;
	for (int i = 0; i < n_mods && !rc; i++) {
		const lm_module *m = mods[i];
		for (int f = 0; f < m->n_functions && !rc; f++) {
			const lm_function *fn = &m->functions[f];
			for (int a = 0; a < fn->n_allocs; a++) {
				const lm_alloc *al = &fn->allocs[a];
				const ls_tensor *t;
				if (!lm_tensorkind_is_ext_output(al->kind))
					continue;
				if (lm_strmap_get(&seen, al->name, NULL)) {
					rc = lm_err(err, m->path, "",
						    "external output '%s' is declared by "
						    "two modules", al->name);
					break;
				}
				lm_strmap_put(&seen, al->name, NULL);
				/* a hand-off: the reference run saw another
				** module read it, and it is no model output */
				t = ls_tensors_find(ref_outputs, al->name);
				int is_handoff = t && t->read_by_other_module &&
						 !is_host_boundary(al);
				if (is_handoff) {
					lm_grow(&hand, &cap_h, nh + 1, sizeof *hand);
					hand[nh++] = lm_xstrdup(al->name);
				} else {
					lm_grow(&exp, &cap_e, ne + 1, sizeof *exp);
					exp[ne++] = lm_xstrdup(al->name);
				}
			}
		}
	}
	lm_strmap_free(&seen);
	if (rc) {
		strv_free(exp, ne);
		strv_free(hand, nh);
		return rc;
	}
	if (ne)
		qsort(exp, (size_t)ne, sizeof *exp, cmp_str);
	if (nh)
		qsort(hand, (size_t)nh, sizeof *hand, cmp_str);
	*expected = exp;
	*n_expected = ne;
	*handoffs = hand;
	*n_handoffs = nh;
	return 0;
}

void ls_diff_result_free(ls_diff_result *r)
{
	strv_free(r->expected, r->n_expected);
	strv_free(r->handoffs, r->n_handoffs);
	for (int i = 0; i < r->n_cmp; i++)
		free(r->cmp[i].name);
	free(r->cmp);
	ls_result_free(&r->ref);
	ls_result_free(&r->linked);
	memset(r, 0, sizeof *r);
}

/* Does entry e say what allocation al is (direction and shape)? */
static int entry_matches(const ls_tmap_entry *e, const lm_alloc *al, int out)
{
	if (e->is_output != out || e->n_shape != al->n_shape)
		return 0;
	for (int k = 0; k < al->n_shape; k++)
		if (e->shape[k] != al->tensor_shape[k])
			return 0;
	return 1;
}

int ls_check_tensor_map(const lm_module *m, const ls_tmap_entry *e, int n,
			char *msg, size_t len)
{
	char *used = lm_xcalloc((size_t)n + 1, 1);
	int rc = 0;
	for (int f = 0; f < m->n_functions && !rc; f++)
		for (int a = 0; a < m->functions[f].n_allocs && !rc; a++) {
			const lm_alloc *al = &m->functions[f].allocs[a];
			int in = lm_tensorkind_is_ext_input(al->kind);
			int out = lm_tensorkind_is_ext_output(al->kind);
			int hits = 0;
			if (!in && !out)
				continue;
			for (int i = 0; i < n && !rc; i++) {
				if (strcmp(e[i].name, al->name))
					continue;
				hits++;
				used[i] = 1;
				if (!entry_matches(&e[i], al, out)) {
					snprintf(msg, len, "tensor-map: entry '%s' does "
						 "not match the allocation (direction or "
						 "shape)", al->name);
					rc = -1;
				}
			}
			if (!rc && hits != 1) {
				snprintf(msg, len, "tensor-map: external %s '%s' has %d "
					 "tensor-map entries (need exactly 1)",
					 out ? "output" : "input", al->name, hits);
				rc = -1;
			}
		}
	for (int i = 0; i < n && !rc; i++)
		if (!used[i]) {
			snprintf(msg, len, "tensor-map: entry '%s' names no external "
				 "allocation of the linked module", e[i].name);
			rc = -1;
		}
	free(used);
	return rc;
}

/* Raw bits of element i of t (zero-extended). */
static uint32_t elem_bits(const ls_tensor *t, int64_t i)
{
	int es = lm_dtype_size(t->dtype);
	const unsigned char *p = (const unsigned char *)t->data + i * es;
	uint32_t u = 0;
	for (int k = 0; k < es && k < 4; k++)
		u |= (uint32_t)p[k] << (8 * k);
	return u;
}

/* Compare two tensors bit for bit; fills c. */
static void compare_tensor(const ls_tensor *ref, const ls_tensor *got,
			   int schedule, ls_tensor_cmp *c)
{
	memset(c, 0, sizeof *c);
	c->name = lm_xstrdup(ref->name);
	c->schedule = schedule;
	c->first_index = -1;
	if (ref->dtype != got->dtype || ref->count != got->count) {
		c->mismatches = ref->count > got->count ? ref->count : got->count;
		c->first_index = 0;
		c->max_abs_diff = INFINITY;
		return;
	}
	int es = lm_dtype_size(ref->dtype);
	int floaty = lm_dtype_is_float(ref->dtype);
	for (int64_t i = 0; i < ref->count; i++) {
		const char *a = (const char *)ref->data + i * es;
		const char *b = (const char *)got->data + i * es;
		if (memcmp(a, b, (size_t)es) == 0)
			continue;
		double va = floaty ? lm_load_elem(ref->dtype, a) : 0;
		double vb = floaty ? lm_load_elem(got->dtype, b) : 0;
		if (c->mismatches++ == 0) {
			c->first_index = i;
			c->ref_bits = elem_bits(ref, i);
			c->got_bits = elem_bits(got, i);
			c->ref_value = va;
			c->got_value = vb;
		}
		double d = fabs(va - vb);
		if (isnan(d))
			d = INFINITY;
		if (d > c->max_abs_diff)
			c->max_abs_diff = d;
	}
	c->equal = c->mismatches == 0;
}

static void add_cmp(ls_diff_result *r, int *cap, const ls_tensor_cmp *c)
{
	lm_grow(&r->cmp, cap, r->n_cmp + 1, sizeof *r->cmp);
	r->cmp[r->n_cmp++] = *c;
}

/* Element count -> index text "[i, j, k]" of a row-major shape. */
static void index_text(const ls_tensor *t, int64_t i, char *buf, size_t n)
{
	int64_t idx[8] = {0};
	for (int d = t->ndim - 1; d >= 0; d--) {
		int64_t s = t->shape[d] ? t->shape[d] : 1;
		idx[d] = i % s;
		i /= s;
	}
	size_t k = (size_t)snprintf(buf, n, "[");
	for (int d = 0; d < t->ndim && k < n; d++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "",
				      (long long)idx[d]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

/*
** Compare the linked outputs against the reference's expected outputs.
** Returns the status for this schedule and writes a message on failure.
*/
static ls_diff_status compare_runs(ls_diff_result *r, int *cap,
				   const ls_result *ref, const ls_result *lin,
				   int schedule)
{
	ls_diff_status st = LS_DIFF_PASS;
	/* output set: linked outputs must be exactly the expected names */
	for (int i = 0; i < lin->outputs.n; i++) {
		const char *nm = lin->outputs.t[i].name;
		if (!bsearch(&nm, r->expected, (size_t)r->n_expected,
			     sizeof *r->expected, cmp_str)) {
			snprintf(r->message, sizeof r->message,
				 "output set: the linked module has an unexpected "
				 "external output '%s'%s", nm,
				 bsearch(&nm, r->handoffs, (size_t)r->n_handoffs,
					 sizeof *r->handoffs, cmp_str)
				 ? " (a cross-core hand-off)" : "");
			return LS_DIFF_OUTPUT_SET;
		}
	}
	for (int i = 0; i < r->n_expected; i++) {
		const ls_tensor *a = ls_tensors_find(&ref->outputs, r->expected[i]);
		const ls_tensor *b = ls_tensors_find(&lin->outputs, r->expected[i]);
		if (!b) {
			snprintf(r->message, sizeof r->message,
				 "output set: expected output '%s' is missing from "
				 "the linked module", r->expected[i]);
			return LS_DIFF_OUTPUT_SET;
		}
		if (!a) {
			snprintf(r->message, sizeof r->message,
				 "output set: the reference run produced no output "
				 "'%s'", r->expected[i]);
			return LS_DIFF_OUTPUT_SET;
		}
		ls_tensor_cmp c;
		compare_tensor(a, b, schedule, &c);
		if (!c.equal && st == LS_DIFF_PASS) {
			char idx[128];
			index_text(a, c.first_index, idx, sizeof idx);
			snprintf(r->message, sizeof r->message,
				 "mismatch: tensor '%s'%s: %lld of %lld elements differ; "
				 "first at %s (element %lld): reference 0x%0*x (%.9g), "
				 "linked 0x%0*x (%.9g)", c.name,
				 schedule ? " (perturbed schedule)" : "",
				 (long long)c.mismatches, (long long)a->count, idx,
				 (long long)c.first_index,
				 lm_dtype_size(a->dtype) * 2, (unsigned)c.ref_bits,
				 c.ref_value, lm_dtype_size(a->dtype) * 2,
				 (unsigned)c.got_bits, c.got_value);
			st = LS_DIFF_MISMATCH;
		}
		add_cmp(r, cap, &c);
	}
	return st;
}

int ls_diff(lm_module *const *mods, int n_mods, const lm_module *linked,
	    const ls_tensors *inputs, const ls_diff_opts *opts,
	    ls_diff_result *out, lm_error *err)
{
	memset(out, 0, sizeof *out);
	int rc = 0;
	int cap = 0;
	int schedules = opts && opts->schedules > 0 ? opts->schedules : 0;
	ls_options run = opts ? opts->run : (ls_options){0};
	ls_machine *refm = NULL, *linm = NULL;
	lm_module *lin1[1];
	lin1[0] = (lm_module *)linked; /* only read */
	lm_error e;
	/* each side prepared once (its memory was checked before the
	   inputs were made), run once per schedule */
	rc = ls_machine_new(&refm, mods, n_mods, 1, inputs, run.files, &e);
	if (rc == LM_EINPUT) {
		*err = e;
		return rc;
	}
	if (rc) {
		out->status = LS_DIFF_REF_ERROR;
		snprintf(out->message, sizeof out->message,
			 "reference run failed: %.900s", e.msg);
		return 0;
	}
	for (int s = 0; s <= schedules; s++) {
		ls_result ref, lin;
		memset(&ref, 0, sizeof ref);
		memset(&lin, 0, sizeof lin);
		run.perturb_seed = s ? (uint64_t)s * 0x9e3779b97f4a7c15ULL : 0;
		if (s) {
			run.trace_path = NULL;
			run.race = 0; /* the plain schedule's runs only */
		}
		rc = ls_machine_run(refm, &run, &ref, &e);
		if (rc == LM_EINPUT) {
			*err = e;
			goto done;
		}
		if (rc) {
			out->status = LS_DIFF_REF_ERROR;
			snprintf(out->message, sizeof out->message,
				 "reference run%s failed: %.900s",
				 s ? " (perturbed schedule)" : "", e.msg);
			if (s == 0) /* the races it kept (keep_races) */
				out->ref = ref;
			else
				ls_result_free(&ref);
			rc = 0;
			break;
		}
		/* the expected set, from the reads the plain reference saw */
		if (s == 0 && (rc = ls_expected_outputs(mods, n_mods,
				&ref.outputs, &out->expected, &out->n_expected,
				&out->handoffs, &out->n_handoffs, err)) != 0) {
			ls_result_free(&ref);
			goto done;
		}
		rc = s == 0 ? ls_machine_new(&linm, lin1, 1, 0, inputs,
					     run.files, &e) : 0;
		if (!rc)
			rc = ls_machine_run(linm, &run, &lin, &e);
		if (rc) {
			out->status = LS_DIFF_LINKED_ERROR;
			snprintf(out->message, sizeof out->message,
				 "linked run%s failed: %.900s",
				 s ? " (perturbed schedule)" : "", e.msg);
			if (s == 0) {
				out->ref = ref;
				out->linked = lin; /* its kept races */
			} else {
				ls_result_free(&ref);
				ls_result_free(&lin);
			}
			rc = 0;
			break;
		}
		ls_diff_status st = compare_runs(out, &cap, &ref, &lin, s);
		if (s == 0) {
			out->ref = ref;
			out->linked = lin;
		} else {
			/* the perturbed reference must also equal the plain one */
			if (st == LS_DIFF_PASS) {
				for (int i = 0; i < out->n_expected; i++) {
					const ls_tensor *a = ls_tensors_find(
						&out->ref.outputs, out->expected[i]);
					const ls_tensor *b = ls_tensors_find(
						&ref.outputs, out->expected[i]);
					ls_tensor_cmp c;
					if (!a || !b)
						continue;
					compare_tensor(a, b, s, &c);
					if (!c.equal) {
						snprintf(out->message, sizeof out->message,
							 "mismatch: tensor '%s' of the reference "
							 "run differs under perturbed schedule %d "
							 "(%lld elements): the per-core program is "
							 "not race-free", c.name, s,
							 (long long)c.mismatches);
						st = LS_DIFF_MISMATCH;
					}
					add_cmp(out, &cap, &c);
				}
			}
			ls_result_free(&ref);
			ls_result_free(&lin);
		}
		out->schedules_run = s + 1;
		if (st != LS_DIFF_PASS) {
			out->status = st;
			break;
		}
	}
done:
	ls_machine_free(linm);
	ls_machine_free(refm);
	return rc;
}

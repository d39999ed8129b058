/*
** fuzz_rec.c -- the campaign's generator options as a string and the
** result record's encoding (fuzz.h).
**
** The record is little-endian, field by field, after a magic and a
** version byte: "LFZR" 4, then seed, cores, status, the strings (u32
** length + bytes), start time, wall time (the double's bits), the
** executions (mode, times, per-core stats, matmuls, whether it was
** checked for races, the races found and the first FZ_RECORD_RACES of
** those kept) and the tensors.
** Doubles travel as their bit patterns, so NaN utilizations and the
** exact values reach the database unchanged.
*/
#include "common.h"
#include "fuzz.h"
#include "dtype.h"
#include "linker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int fz_case_cores(const fz_config *c, uint64_t s)
{
	return c->lo + (int)(mix(s) % (uint64_t)(c->hi - c->lo + 1));
}

void fz_case_form(const fz_config *c, uint64_t s, int *loops, int *dynamic,
		  int *sync)
{
	if (!c->mix) {
		*loops = c->loops;
		*dynamic = c->dynamic;
		*sync = c->sync;
		return;
	}
	int k = (int)(mix(s ^ 0x6a09e667f3bcc909ULL) % 6);
	*loops = k >= 2;
	*dynamic = k >= 4;
	*sync = k % 2 ? LS_GEN_SYNC_SEMAPHORES : LS_GEN_SYNC_DEPS;
}

static const char *const size_names[] = { "small", "medium", "large" };

/* The skip mask's step names, comma separated, in link order. */
static void put_steps(lm_buf *b, unsigned skip)
{
	int first = 1;
	for (int s = 0; s < LK_N_STEPS; s++)
		if (skip & LK_SKIP(s)) {
			lm_buf_printf(b, "%s%s", first ? "" : ",",
				      lk_step_name((lk_step)s));
			first = 0;
		}
}

char *fz_gen_options(const fz_config *c)
{
	lm_buf b = LM_BUF_INIT;
	lm_buf_printf(&b, "cores=%d-%d size=%s schedules=%d skip=", c->lo,
		      c->hi, size_names[c->size], c->schedules);
	put_steps(&b, c->skip);
	if (c->mix)
		lm_buf_puts(&b, " mix");
	if (c->loops && !c->mix)
		lm_buf_puts(&b, " loops");
	if (c->dynamic && !c->mix)
		lm_buf_puts(&b, " dynamic");
	if (c->sync == LS_GEN_SYNC_SEMAPHORES && !c->mix)
		lm_buf_puts(&b, " sync=semaphores");
	if (c->compute)
		lm_buf_puts(&b, " compute");
	if (c->by_name)
		lm_buf_puts(&b, " by_name");
	if (c->race)
		lm_buf_puts(&b, " race");
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

int fz_gen_options_parse(const char *s, fz_config *c)
{
	int lo, hi, sched, n = 0, loops = 0, dynamic = 0, sync = 0, mixed = 0;
	int race = 0, compute = 0, by_name = 0, bad = 0;
	char size[16];
	if (sscanf(s, "cores=%d-%d size=%15s schedules=%d skip=%n", &lo, &hi,
		   size, &sched, &n) != 4 || !n)
		return -1;
	int sz = ls_gen_size_parse(size);
	unsigned skip = 0;
	lm_error err;
	/* the steps, then the generator's words: " loops", " dynamic",
	   " sync=semaphores" in this order, or " mix"; then " compute",
	   " by_name", " race" (taken off the end first) */
	char *steps = lm_xstrdup(s + n), *w;
	size_t k = strlen(steps);
	if (k >= 5 && !strcmp(steps + k - 5, " race")) {
		steps[k - 5] = 0;
		race = 1;
	}
	k = strlen(steps);
	if (k >= 8 && !strcmp(steps + k - 8, " by_name")) {
		steps[k - 8] = 0;
		by_name = 1;
	}
	k = strlen(steps);
	if (k >= 8 && !strcmp(steps + k - 8, " compute")) {
		steps[k - 8] = 0;
		compute = 1;
	}
	w = strchr(steps, ' ');
	if (w) {
		*w++ = 0;
		/* words one space apart, none empty */
		bad = !*w || w[strlen(w) - 1] == ' ';
		if (!strncmp(w, "loops", 5) && (w[5] == ' ' || !w[5])) {
			loops = 1;
			w += w[5] ? 6 : 5;
		}
		if (!strncmp(w, "dynamic", 7) && (w[7] == ' ' || !w[7])) {
			dynamic = 1;
			w += w[7] ? 8 : 7;
		}
		if (!strncmp(w, "sync=semaphores", 15) &&
		    (w[15] == ' ' || !w[15])) {
			sync = LS_GEN_SYNC_SEMAPHORES;
			w += w[15] ? 16 : 15;
		}
		if (!strcmp(w, "mix") && !loops && !dynamic && !sync) {
			mixed = 1;
			w += 3;
		}
		bad = bad || *w != 0;
	}
	bad = bad || sz < 0 || lo < 1 || hi < lo || hi > 64 || sched < 0 ||
	      (steps[0] && lk_parse_skip(steps, &skip, &err));
	free(steps);
	if (bad)
		return -1;
	c->loops = loops;
	c->race = race;
	c->compute = compute;
	c->by_name = by_name;
	c->dynamic = dynamic;
	c->sync = sync;
	c->mix = mixed;
	c->lo = lo;
	c->hi = hi;
	c->size = (ls_gen_size)sz;
	c->schedules = sched;
	c->skip = skip;
	return 0;
}

char *fz_skip_option(const fz_config *c)
{
	lm_buf b = LM_BUF_INIT;
	if (c->skip) {
		lm_buf_puts(&b, "--skip=");
		put_steps(&b, c->skip);
	}
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

char *fz_repro(const fz_config *c, uint64_t s, const char *dir)
{
	char *skip = fz_skip_option(c);
	lm_buf b = LM_BUF_INIT;
	unsigned long long seed = (unsigned long long)s;
	lm_buf_printf(&b, "lncsim gen --cores %d --seed %llu", fz_case_cores(c, s),
		      seed);
	if (c->size != LS_GEN_SMALL)
		lm_buf_printf(&b, " --size %s", size_names[c->size]);
	int loops, dynamic, sync;
	fz_case_form(c, s, &loops, &dynamic, &sync);
	if (loops && !dynamic)
		lm_buf_puts(&b, " --loops");
	if (dynamic)
		lm_buf_puts(&b, " --dynamic");
	if (sync == LS_GEN_SYNC_SEMAPHORES)
		lm_buf_puts(&b, " --sync semaphores");
	if (c->compute && sync == LS_GEN_SYNC_DEPS)
		lm_buf_puts(&b, " --compute");
	if (c->by_name)
		lm_buf_puts(&b, " --by-name");
	lm_buf_printf(&b, " -o %s && lncsim diff", dir);
	if (*skip)
		lm_buf_printf(&b, " %s", skip);
	if (c->schedules)
		lm_buf_printf(&b, " --schedules %d", c->schedules);
	if (c->race)
		lm_buf_puts(&b, " --race");
	lm_buf_printf(&b, " --seed %llu %s/gen%llu", seed, dir, seed);
	free(skip);
	return lm_buf_detach(&b);
}

/* ---- the record -------------------------------------------------------- */

void fz_record_init(fz_record *r)
{
	memset(r, 0, sizeof *r);
	r->kind = lm_xstrdup("");
	r->message = lm_xstrdup("");
	r->signature = lm_xstrdup("");
	r->arch = lm_xstrdup("");
	r->version = lm_xstrdup(PACKAGE_VERSION);
	r->gen_options = lm_xstrdup("");
	r->kept = lm_xstrdup("");
}

void fz_record_free(fz_record *r)
{
	free(r->kind);
	free(r->message);
	free(r->signature);
	free(r->arch);
	free(r->version);
	free(r->gen_options);
	free(r->kept);
	for (int i = 0; i < r->n_exec; i++)
		ls_result_free(&r->exec[i].r);
	for (int i = 0; i < r->n_tensors; i++)
		free(r->tensors[i].name);
	free(r->tensors);
	memset(r, 0, sizeof *r);
}

void fz_record_set(char **field, const char *v)
{
	free(*field);
	*field = lm_xstrdup(v ? v : "");
}

static void put_u8(lm_buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	lm_buf_put(b, &c, 1);
}

static void put_u32(lm_buf *b, uint32_t v)
{
	unsigned char c[4];
	for (int i = 0; i < 4; i++)
		c[i] = (unsigned char)(v >> (8 * i));
	lm_buf_put(b, c, 4);
}

static void put_u64(lm_buf *b, uint64_t v)
{
	unsigned char c[8];
	for (int i = 0; i < 8; i++)
		c[i] = (unsigned char)(v >> (8 * i));
	lm_buf_put(b, c, 8);
}

static void put_f64(lm_buf *b, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	put_u64(b, v);
}

static void put_str(lm_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	put_u32(b, (uint32_t)n);
	lm_buf_put(b, s ? s : "", n);
}

/* One execution: mode, times, cores, matmuls. */
static void put_exec(lm_buf *b, const fz_exec *e)
{
	const ls_result *r = &e->r;
	put_str(b, e->mode);
	put_u64(b, (uint64_t)r->sim_time_ps);
	put_u64(b, (uint64_t)r->instructions);
	put_u32(b, (uint32_t)r->n_cores);
	for (int i = 0; i < r->n_cores; i++) {
		const ls_core_stats *c = &r->cores[i];
		put_u32(b, (uint32_t)c->core);
		for (int k = 0; k < LS_ENGINES; k++)
			put_u64(b, (uint64_t)c->busy_ps[k]);
		put_u64(b, (uint64_t)c->instructions);
		put_u64(b, (uint64_t)c->matmuls);
		put_u64(b, (uint64_t)c->macs);
		put_f64(b, c->pe_util);
		put_f64(b, c->mac_util);
		put_u64(b, (uint64_t)c->dma_bytes);
		put_u64(b, (uint64_t)c->dma_transfers);
		put_u64(b, (uint64_t)c->barrier_wait_ps);
		put_u64(b, (uint64_t)c->semaphore_wait_ps);
		put_u64(b, (uint64_t)c->end_ps);
		for (int k = 0; k < LS_ENGINES; k++) {
			put_u64(b, (uint64_t)c->wait_sem_ps[k]);
			put_u64(b, (uint64_t)c->wait_barrier_ps[k]);
			put_u64(b, (uint64_t)c->wait_dep_ps[k]);
			put_u64(b, (uint64_t)c->idle_ps[k]);
		}
	}
	put_u32(b, (uint32_t)r->n_matmuls);
	for (int i = 0; i < r->n_matmuls; i++) {
		const ls_matmul_rec *m = &r->matmuls[i];
		const char *dt = lm_dtype_name(m->dtype);
		put_u32(b, (uint32_t)m->core);
		put_str(b, m->name);
		put_u32(b, (uint32_t)m->k);
		put_u32(b, (uint32_t)m->m);
		put_u32(b, (uint32_t)m->n);
		put_str(b, dt ? dt : "");
		put_u64(b, (uint64_t)m->start_ps);
		put_u64(b, (uint64_t)m->duration_ps);
		put_f64(b, m->array_util);
	}
	int nr = e->race ? r->n_races : 0;
	if (nr > FZ_RECORD_RACES)
		nr = FZ_RECORD_RACES;
	put_u8(b, e->race ? 1 : 0);
	put_u64(b, e->race ? (uint64_t)r->races_found : 0);
	put_u32(b, (uint32_t)nr);
	for (int i = 0; i < nr; i++) {
		const ls_race *x = &r->races[i];
		put_str(b, x->kind);
		put_str(b, x->memory);
		put_u64(b, (uint64_t)x->core);
		put_str(b, x->object);
		put_u64(b, (uint64_t)x->lo);
		put_u64(b, (uint64_t)x->hi);
		put_str(b, x->a_func);
		put_str(b, x->a_block);
		put_str(b, x->a_inst);
		put_str(b, x->a_iter);
		put_u64(b, (uint64_t)x->a_core);
		put_str(b, x->a_engine);
		put_str(b, x->b_func);
		put_str(b, x->b_block);
		put_str(b, x->b_inst);
		put_str(b, x->b_iter);
		put_u64(b, (uint64_t)x->b_core);
		put_str(b, x->b_engine);
		put_str(b, x->last_common);
	}
}

void fz_record_encode(const fz_record *r, lm_buf *b)
{
	lm_buf_put(b, "LFZR", 4);
	put_u8(b, FZ_RECORD_VERSION);
	put_u64(b, r->seed);
	put_u32(b, (uint32_t)r->cores);
	put_u8(b, (unsigned)r->status);
	put_str(b, r->kind);
	put_str(b, r->message);
	put_str(b, r->signature);
	put_str(b, r->arch);
	put_str(b, r->version);
	put_str(b, r->gen_options);
	put_str(b, r->kept);
	put_u64(b, (uint64_t)r->started);
	put_f64(b, r->wall);
	put_u8(b, LS_ENGINES);
	put_u8(b, (unsigned)r->n_exec);
	for (int i = 0; i < r->n_exec; i++)
		put_exec(b, &r->exec[i]);
	put_u32(b, (uint32_t)r->n_tensors);
	for (int i = 0; i < r->n_tensors; i++) {
		const fz_tensor *t = &r->tensors[i];
		put_str(b, t->name);
		put_u8(b, t->equal ? 1 : 0);
		put_u64(b, (uint64_t)t->mismatches);
		put_u64(b, (uint64_t)t->first_index);
		put_f64(b, t->max_abs_diff);
	}
}

/* A bounds-checked reader: the first short read sets bad. */
typedef struct rd {
	const unsigned char *p;
	size_t n, at;
	int bad;
} rd;

static const unsigned char *take(rd *r, size_t k)
{
	if (r->bad || r->n - r->at < k) {
		r->bad = 1;
		return NULL;
	}
	const unsigned char *q = r->p + r->at;
	r->at += k;
	return q;
}

static unsigned get_u8(rd *r)
{
	const unsigned char *q = take(r, 1);
	return q ? q[0] : 0;
}

static uint32_t get_u32(rd *r)
{
	const unsigned char *q = take(r, 4);
	uint32_t v = 0;
	for (int i = 0; q && i < 4; i++)
		v |= (uint32_t)q[i] << (8 * i);
	return v;
}

static uint64_t get_u64(rd *r)
{
	const unsigned char *q = take(r, 8);
	uint64_t v = 0;
	for (int i = 0; q && i < 8; i++)
		v |= (uint64_t)q[i] << (8 * i);
	return v;
}

static double get_f64(rd *r)
{
	uint64_t v = get_u64(r);
	double d;
	memcpy(&d, &v, 8);
	return d;
}

static char *get_str(rd *r)
{
	uint32_t k = get_u32(r);
	const unsigned char *q = take(r, k);
	if (!q || memchr(q, 0, k)) {
		r->bad = 1;
		return lm_xstrdup("");
	}
	return lm_xstrndup((const char *)q, k);
}

/* A count of items of at least min_size bytes each that the rest of the
** record can hold (anything else is malformed: no huge allocation). */
static int get_count(rd *r, size_t min_size)
{
	uint32_t k = get_u32(r);
	if (r->bad || k > (r->n - r->at) / min_size || k > 0x7fffffff) {
		r->bad = 1;
		return 0;
	}
	return (int)k;
}

static int one_of(const char *s, const char *a, const char *b,
		  const char *c)
{
	return !strcmp(s, a) || !strcmp(s, b) || !strcmp(s, c);
}

/*
** The race part of an execution: checked (0 or 1), found, then at most
** FZ_RECORD_RACES races, no more than found, none unless checked; each
** of a kind and memory the run log takes and a non-empty range.
*/
static void get_races(rd *r, fz_exec *e)
{
	ls_result *x = &e->r;
	unsigned checked = get_u8(r);
	int64_t found = (int64_t)get_u64(r);
	int nr = get_count(r, 14 * 4 + 5 * 8);
	if (checked > 1 || found < 0 || nr > FZ_RECORD_RACES || nr > found ||
	    (!checked && found))
		r->bad = 1;
	if (r->bad)
		return;
	e->race = (int)checked;
	x->races_found = found;
	x->races = nr ? lm_xcalloc((size_t)nr, sizeof *x->races) : NULL;
	x->n_races = nr;
	for (int i = 0; i < nr; i++) {
		ls_race *y = &x->races[i];
		y->kind = get_str(r);
		y->memory = get_str(r);
		y->core = (int64_t)get_u64(r);
		y->object = get_str(r);
		y->lo = (int64_t)get_u64(r);
		y->hi = (int64_t)get_u64(r);
		y->a_func = get_str(r);
		y->a_block = get_str(r);
		y->a_inst = get_str(r);
		y->a_iter = get_str(r);
		y->a_core = (int64_t)get_u64(r);
		y->a_engine = get_str(r);
		y->b_func = get_str(r);
		y->b_block = get_str(r);
		y->b_inst = get_str(r);
		y->b_iter = get_str(r);
		y->b_core = (int64_t)get_u64(r);
		y->b_engine = get_str(r);
		y->last_common = get_str(r);
		if ((!one_of(y->kind, "RAW", "WAR", "WAW") ||
		     !one_of(y->memory, "SBUF", "PSUM", "DRAM")) &&
		    (strcmp(y->kind, "SLOT") || strcmp(y->memory, "BARRIER")))
			r->bad = 1;
		if (y->lo < 0 || y->hi <= y->lo)
			r->bad = 1;
	}
}

static void get_exec(rd *r, fz_exec *e)
{
	char *mode = get_str(r);
	ls_result *x = &e->r;
	snprintf(e->mode, sizeof e->mode, "%s", mode);
	if (strlen(mode) >= sizeof e->mode)
		r->bad = 1;
	free(mode);
	x->sim_time_ps = (int64_t)get_u64(r);
	x->instructions = (int64_t)get_u64(r);
	int nc = get_count(r, 4 + 8 * (5 * LS_ENGINES + 10));
	x->cores = nc ? lm_xcalloc((size_t)nc, sizeof *x->cores) : NULL;
	x->n_cores = nc;
	for (int i = 0; i < nc; i++) {
		ls_core_stats *c = &x->cores[i];
		c->core = (int)get_u32(r);
		for (int k = 0; k < LS_ENGINES; k++)
			c->busy_ps[k] = (int64_t)get_u64(r);
		c->instructions = (int64_t)get_u64(r);
		c->matmuls = (int64_t)get_u64(r);
		c->macs = (int64_t)get_u64(r);
		c->pe_util = get_f64(r);
		c->mac_util = get_f64(r);
		c->dma_bytes = (int64_t)get_u64(r);
		c->dma_transfers = (int64_t)get_u64(r);
		c->barrier_wait_ps = (int64_t)get_u64(r);
		c->semaphore_wait_ps = (int64_t)get_u64(r);
		c->end_ps = (int64_t)get_u64(r);
		for (int k = 0; k < LS_ENGINES; k++) {
			c->wait_sem_ps[k] = (int64_t)get_u64(r);
			c->wait_barrier_ps[k] = (int64_t)get_u64(r);
			c->wait_dep_ps[k] = (int64_t)get_u64(r);
			c->idle_ps[k] = (int64_t)get_u64(r);
		}
	}
	int nm = get_count(r, 4 * 6 + 8 * 3);
	x->matmuls = nm ? lm_xcalloc((size_t)nm, sizeof *x->matmuls) : NULL;
	x->n_matmuls = nm;
	for (int i = 0; i < nm; i++) {
		ls_matmul_rec *m = &x->matmuls[i];
		m->core = (int)get_u32(r);
		m->name = get_str(r);
		m->k = (int)get_u32(r);
		m->m = (int)get_u32(r);
		m->n = (int)get_u32(r);
		char *dt = get_str(r);
		m->dtype = lm_dtype_parse(dt);
		free(dt);
		m->start_ps = (int64_t)get_u64(r);
		m->duration_ps = (int64_t)get_u64(r);
		m->array_util = get_f64(r);
	}
	get_races(r, e);
}

int fz_record_decode(const void *p, size_t n, fz_record *out, lm_error *err)
{
	rd r = { p, n, 0, 0 };
	fz_record_init(out);
	const unsigned char *magic = take(&r, 4);
	if (!magic || memcmp(magic, "LFZR", 4))
		return lm_err(err, "", "result record", "not a result record");
	unsigned v = get_u8(&r);
	if (!r.bad && v != FZ_RECORD_VERSION)
		return lm_err(err, "", "result record", "version %u, this lncsim "
			      "reads version %d (the workers run another "
			      "lncsim)", v, FZ_RECORD_VERSION);
	out->seed = get_u64(&r);
	out->cores = (int)get_u32(&r);
	unsigned st = get_u8(&r);
	free(out->kind);
	out->kind = get_str(&r);
	free(out->message);
	out->message = get_str(&r);
	free(out->signature);
	out->signature = get_str(&r);
	free(out->arch);
	out->arch = get_str(&r);
	free(out->version);
	out->version = get_str(&r);
	free(out->gen_options);
	out->gen_options = get_str(&r);
	free(out->kept);
	out->kept = get_str(&r);
	out->started = (int64_t)get_u64(&r);
	out->wall = get_f64(&r);
	unsigned engines = get_u8(&r);
	unsigned ne = get_u8(&r);
	if (st > FZ_LOST || engines != LS_ENGINES || ne > 2)
		r.bad = 1;
	out->status = (fz_status)st;
	for (unsigned i = 0; !r.bad && i < ne; i++) {
		out->n_exec = (int)i + 1;
		get_exec(&r, &out->exec[i]);
	}
	int nt = get_count(&r, 4 + 1 + 8 * 3);
	out->tensors = nt ? lm_xcalloc((size_t)nt, sizeof *out->tensors) : NULL;
	out->n_tensors = nt;
	for (int i = 0; i < nt; i++) {
		fz_tensor *t = &out->tensors[i];
		t->name = get_str(&r);
		t->equal = get_u8(&r) != 0;
		t->mismatches = (int64_t)get_u64(&r);
		t->first_index = (int64_t)get_u64(&r);
		t->max_abs_diff = get_f64(&r);
	}
	if (!r.bad && r.at != n)
		r.bad = 1;
	if (r.bad)
		return lm_err(err, "", "result record", "truncated or malformed "
			      "(%zu bytes)", n);
	return 0;
}

/* ---- the config -------------------------------------------------------- */

void fz_config_encode(const fz_config *c, lm_buf *b)
{
	char *opts = fz_gen_options(c);
	lm_buf_put(b, "LFZC", 4);
	put_u8(b, FZ_RECORD_VERSION);
	put_str(b, opts);
	put_str(b, c->keep);
	put_u8(b, c->null_cases ? 1 : 0);
	put_u32(b, (uint32_t)c->case_timeout_ms);
	free(opts);
}

int fz_config_decode(const void *p, size_t n, fz_config *c, lm_error *err)
{
	rd r = { p, n, 0, 0 };
	const unsigned char *magic = take(&r, 4);
	if (!magic || memcmp(magic, "LFZC", 4))
		return lm_err(err, "", "campaign options", "not a campaign "
			      "options record");
	unsigned v = get_u8(&r);
	if (!r.bad && v != FZ_RECORD_VERSION)
		return lm_err(err, "", "campaign options", "version %u, this "
			      "lncsim reads version %d (the workers run another "
			      "lncsim)", v, FZ_RECORD_VERSION);
	char *opts = get_str(&r), *keep = get_str(&r);
	unsigned null_cases = get_u8(&r);
	uint32_t case_timeout = get_u32(&r);
	fz_config x = FZ_CONFIG_INIT;
	int bad = r.bad || r.at != n || fz_gen_options_parse(opts, &x) ||
		  strlen(keep) >= sizeof x.keep || case_timeout > FZ_CASE_TIMEOUT_MAX_MS;
	if (!bad) {
		snprintf(x.keep, sizeof x.keep, "%s", keep);
		x.null_cases = null_cases != 0;
		x.case_timeout_ms = (int)case_timeout;
		*c = x;
	}
	free(opts);
	free(keep);
	if (bad)
		return lm_err(err, "", "campaign options", "truncated or "
			      "malformed (%zu bytes)", n);
	return 0;
}

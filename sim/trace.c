/*
** trace.c -- the engine trace as Chrome trace-event JSON (opens in
** ui.perfetto.dev and chrome://tracing; the format is in
** docs/simulator.md). One process per core, one thread (track) per engine
** and per DMA queue instance the core used, each with a name distinct in
** the whole trace; a complete ("X") event per instruction on its engine's
** track; an async slice ("b" / "e" with an id) per DMA transfer on its
** queue instance's track, since transfers of one instance overlap; a flow
** (bind_id with flow_out on the transfer, flow_in on the instruction) from
** a transfer to each instruction its completion let start. Times are
** microseconds with picosecond precision.
*/
#include "common.h"
#include "sim_int.h"
#include "dtype.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ls_trace_add(ls_trace *t, int core, int track, const ls_sinst *si,
		  int act, int idx, int64_t start, int64_t dur)
{
	ls_trace_ev *e;
	lm_grow(&t->ev, &t->cap, t->n + 1, sizeof *t->ev);
	e = &t->ev[t->n++];
	e->core = core;
	e->track = track;
	e->si = si;
	e->act = act;
	e->idx = idx;
	e->start = start;
	e->dur = dur;
}

void ls_trace_free(ls_trace *t)
{
	free(t->ev);
	t->ev = NULL;
	t->n = t->cap = 0;
}

/* A JSON string literal. */
/* The length of the well-formed UTF-8 sequence at s (1..4), or 0. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	int n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2
		: c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
	    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
		return 0;
	return n;
}

/* A JSON string: escaped, and valid UTF-8 whatever s holds (a name cut
** in the middle of a character, bytes that are no UTF-8: U+FFFD each). */
static void put_str(lm_buf *b, const char *s)
{
	lm_buf_puts(b, "\"");
	while (s && *s) {
		unsigned char c = (unsigned char)*s;
		int n = utf8_len((const unsigned char *)s);
		if (c == '"' || c == '\\')
			lm_buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			lm_buf_printf(b, "\\u%04x", c);
		else if (n)
			lm_buf_put(b, s, (size_t)n);
		else
			lm_buf_puts(b, "\\ufffd");
		s += n ? n : 1;
	}
	lm_buf_puts(b, "\"");
}

/* Picoseconds as microseconds, exactly. */
static void put_us(lm_buf *b, int64_t ps)
{
	lm_buf_printf(b, "%lld.%06lld", (long long)(ps / 1000000),
		      (long long)(ps % 1000000));
}

/* Picoseconds as the double a reader parses from put_us's decimal. */
static double us_double(int64_t ps)
{
	char t[48];
	snprintf(t, sizeof t, "%lld.%06lld", (long long)(ps / 1000000),
		 (long long)(ps % 1000000));
	return strtod(t, NULL);
}

/* Whether a slice of duration x from ts reads as ending no later than
** te, both as ts + x and shifted to its track's first start t0. */
static int ends_in_time(double ts, double te, double t0, double x)
{
	return ts + x <= te && (ts - t0) + x <= te - t0;
}

/*
** A slice's duration (start and dur in ps; first, the first start on the
** slice's track). Readers compute a slice's end as ts + dur in binary
** floating point, where the sum of the two decimals may round past the
** decimal of the end itself (16.050861 + 0.193750 reads as
** 16.244611000000003, after the next slice's start 16.244611): the
** slices would overlap. speedscope first shifts each track to start at
** zero, which rounds differently again. When the plain decimal would read
** late either way, the duration is written as the largest double below it
** that reads in time both ways (a few units in the last place less, far
** below a picosecond: rounded to picoseconds it is the duration).
*/
static void put_dur(lm_buf *b, int64_t start, int64_t dur, int64_t first)
{
	char d[48];
	double ts = us_double(start), te = us_double(start + dur);
	double t0 = us_double(first), hi, lo;
	snprintf(d, sizeof d, "%lld.%06lld", (long long)(dur / 1000000),
		 (long long)(dur % 1000000));
	hi = strtod(d, NULL);
	lo = fmax(0.0, hi - 8 * (nextafter(te, HUGE_VAL) - te));
	if (ends_in_time(ts, te, t0, hi) || !ends_in_time(ts, te, t0, lo)) {
		lm_buf_puts(b, d);
		return;
	}
	/* the sums grow with x: the largest x in [lo, hi) in time */
	while (nextafter(lo, HUGE_VAL) < hi) {
		double mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (ends_in_time(ts, te, t0, mid))
			lo = mid;
		else
			hi = mid;
	}
	if (llround(lo * 1e6) != dur) {
		lm_buf_puts(b, d);
		return;
	}
	/* the shortest form that reads back as lo */
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(d, sizeof d, "%.*g", prec, lo);
		if (strtod(d, NULL) == lo)
			break;
	}
	lm_buf_puts(b, d);
}

/* What the writer needs besides the events. */
typedef struct tw {
	const ls_trace *t;
	const ls_machine *mc;
	int ntr;                /* tracks per core */
	int64_t *track_start;   /* per core x track: its first slice's start */
	lm_buf b;
	int first;
} tw;

/* The thread id of a track: distinct over the whole trace. */
static int tid_of(const tw *w, int core, int track)
{
	return 1 + core * w->ntr + track;
}

/* Start the next event object. */
static void open_ev(tw *w)
{
	lm_buf_puts(&w->b, w->first ? "{" : ",\n{");
	w->first = 0;
}

/* The name of a track, whole (names are never cut: they must stay
** unique), into nm (reset first). */
static void track_name(const tw *w, int core, int track, lm_buf *nm)
{
	nm->size = 0;
	if (track < LS_ENGINES) {
		lm_buf_printf(nm, "%s (core %d)", ls_engine_name(track), core);
	} else {
		const ls_sqinst *q = &w->mc->qinsts[track - LS_ENGINES];
		lm_buf_puts(nm, "DMA ");
		lm_buf_puts(nm, w->mc->queues[q->queue].name);
		lm_buf_puts(nm, "/");
		lm_buf_puts(nm, q->name);
		lm_buf_printf(nm, " (core %d)", core);
	}
}

/* The metadata: process and thread names and sort indices. */
static void put_meta(tw *w)
{
	const ls_trace *t = w->t;
	uint8_t *seen = lm_xcalloc((size_t)LS_MAX_CORES * (size_t)w->ntr, 1);
	lm_buf nm = LM_BUF_INIT;
	for (int i = 0; i < t->n; i++)
		seen[t->ev[i].core * w->ntr + t->ev[i].track] = 1;
	for (int c = 0; c < LS_MAX_CORES; c++) {
		int used = 0;
		for (int k = 0; k < w->ntr && !used; k++)
			used = seen[c * w->ntr + k];
		if (!used)
			continue;
		open_ev(w);
		lm_buf_printf(&w->b, "\"name\":\"process_name\",\"ph\":\"M\","
			      "\"pid\":%d,\"args\":{\"name\":\"core %d\"}}",
			      c, c);
		open_ev(w);
		lm_buf_printf(&w->b, "\"name\":\"process_sort_index\",\"ph\":"
			      "\"M\",\"pid\":%d,\"args\":{\"sort_index\":%d}}",
			      c, c);
		for (int k = 0; k < w->ntr; k++) {
			if (!seen[c * w->ntr + k])
				continue;
			track_name(w, c, k, &nm);
			open_ev(w);
			lm_buf_printf(&w->b, "\"name\":\"thread_name\",\"ph\":"
				      "\"M\",\"pid\":%d,\"tid\":%d,\"args\":"
				      "{\"name\":", c, tid_of(w, c, k));
			put_str(&w->b, lm_buf_cstr(&nm));
			lm_buf_puts(&w->b, "}}");
			open_ev(w);
			lm_buf_printf(&w->b, "\"name\":\"thread_sort_index\","
				      "\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
				      "\"args\":{\"sort_index\":%d}}", c,
				      tid_of(w, c, k), k);
		}
	}
	free(seen);
	lm_buf_free(&nm);
}

/* The semaphores an instruction waits for, as a JSON array. */
static void put_waits(tw *w, const ls_sinst *si)
{
	lm_buf_puts(&w->b, ",\"wait\":[");
	for (int i = 0; i < si->sy.n_wait; i++) {
		const ls_ssync *x = &si->sy.wait[i];
		lm_buf_puts(&w->b, i ? ",{" : "{");
		if (x->kind == LS_SYNC_NAMED) {
			lm_buf_puts(&w->b, "\"semaphore\":");
			put_str(&w->b, x->slot >= 0 ? w->mc->sems[x->slot].name
						    : "");
		} else {
			lm_buf_printf(&w->b, "\"%s\":%d", x->kind == LS_SYNC_EVT
				      ? "event" : "id", x->slot);
		}
		if (x->kind == LS_SYNC_EVT)
			lm_buf_puts(&w->b, "}");
		else if (x->reg >= 0) {
			lm_buf_puts(&w->b, ",\"register\":");
			put_str(&w->b, x->name ? x->name : "");
			lm_buf_puts(&w->b, "}");
		}
		else
			lm_buf_printf(&w->b, ",\"value\":%lld}",
				      (long long)x->value);
	}
	lm_buf_puts(&w->b, "]");
}

/* The args of an instruction's slice (or of a transfer's begin). */
static void put_args(tw *w, const ls_trace_ev *e, int is_transfer)
{
	const ls_sinst *si = e->si;
	lm_buf_puts(&w->b, ",\"args\":{");
	if (is_transfer) {
		lm_buf_puts(&w->b, "\"instruction\":");
		put_str(&w->b, si->in->name);
		lm_buf_puts(&w->b, ",");
	}
	lm_buf_puts(&w->b, "\"opcode\":");
	put_str(&w->b, lm_opcode_name(si->op));
	if (si->op == LM_OP_MATMULT && si->n_ins > 1) {
		lm_buf_printf(&w->b, ",\"K\":%d,\"M\":%d,\"N\":%d,\"MACs\":%lld,"
			      "\"dtype\":", si->mm_k, si->mm_m, si->mm_n,
			      (long long)si->mm_k * si->mm_m * si->mm_n);
		put_str(&w->b, lm_dtype_name(si->ins[1].dtype));
	} else if (si->n_outs > 0) {
		lm_buf_puts(&w->b, ",\"dtype\":");
		put_str(&w->b, lm_dtype_name(si->outs[0].dtype));
	}
	if (si->dma_bytes > 0 || is_transfer)
		lm_buf_printf(&w->b, ",\"bytes\":%lld",
			      (long long)si->dma_bytes);
	if (si->op == LM_OP_COREBARRIER && si->group >= 0) {
		lm_buf_puts(&w->b, ",\"group\":");
		put_str(&w->b, w->mc->groups[si->group]);
	}
	if (si->n_deps > 0)
		lm_buf_printf(&w->b, ",\"dependencies\":%d", si->n_deps);
	put_waits(w, si);
	lm_buf_puts(&w->b, "}");
}

/* The common fields of an event: name, cat, ph, ts, pid, tid. */
static void put_head(tw *w, const ls_trace_ev *e, const char *name,
		     const char *cat, const char *ph, int64_t ts)
{
	open_ev(w);
	lm_buf_puts(&w->b, "\"name\":");
	put_str(&w->b, name);
	lm_buf_puts(&w->b, ",\"cat\":");
	put_str(&w->b, cat);
	lm_buf_printf(&w->b, ",\"ph\":\"%s\",\"ts\":", ph);
	put_us(&w->b, ts);
	lm_buf_printf(&w->b, ",\"pid\":%d,\"tid\":%d", e->core,
		      tid_of(w, e->core, e->track));
}

/*
** Slice i: an instruction (X; with the id of the transfer that let it
** start, when one did), or a DMA transfer as a begin / end pair named
** after its queue instance, so that a viewer groups the transfers of one
** instance (flow_out when it let an instruction start).
*/
static void put_slice(tw *w, int i, const int *flow_in, const uint8_t *out)
{
	const ls_trace_ev *e = &w->t->ev[i];
	if (e->track < LS_ENGINES) {
		put_head(w, e, e->si->in->name, lm_opcode_name(e->si->op), "X",
			 e->start);
		lm_buf_puts(&w->b, ",\"dur\":");
		put_dur(&w->b, e->start, e->dur,
			w->track_start[e->core * w->ntr + e->track]);
		if (flow_in[i] >= 0)
			lm_buf_printf(&w->b, ",\"bind_id\":%d,\"flow_in\":true",
				      flow_in[i]);
		put_args(w, e, 0);
		lm_buf_puts(&w->b, "}");
		return;
	}
	const ls_sqinst *q = &w->mc->qinsts[e->track - LS_ENGINES];
	lm_buf nm = LM_BUF_INIT;
	lm_buf_puts(&nm, "DMA ");
	lm_buf_puts(&nm, w->mc->queues[q->queue].name);
	lm_buf_puts(&nm, "/");
	lm_buf_puts(&nm, q->name);
	put_head(w, e, lm_buf_cstr(&nm), "DMA", "b", e->start);
	lm_buf_printf(&w->b, ",\"id\":%d", i);
	if (out[i])
		lm_buf_printf(&w->b, ",\"bind_id\":%d,\"flow_out\":true", i);
	put_args(w, e, 1);
	lm_buf_puts(&w->b, "}");
	put_head(w, e, lm_buf_cstr(&nm), "DMA", "e", e->start + e->dur);
	lm_buf_printf(&w->b, ",\"id\":%d}", i);
	lm_buf_free(&nm);
}

/* Instruction slices ordered by core and start (the flow search). */
typedef struct by_start {
	int core;
	int64_t start;
	int i;
} by_start;

static int cmp_start(const void *pa, const void *pb)
{
	const by_start *a = pa, *b = pb;
	if (a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* Did transfer d's completion let instruction slice x start? */
static int unblocks(const tw *w, const ls_trace_ev *d, const ls_trace_ev *x)
{
	const ls_sinst *si = x->si;
	int sem = w->mc->qinsts[d->track - LS_ENGINES].sem;
	if (x->act == d->act)
		for (int k = 0; k < si->n_deps; k++)
			if (si->deps[k].a == d->idx)
				return 1;
	for (int k = 0; sem >= 0 && k < si->sy.n_wait; k++)
		if (si->sy.wait[k].kind == LS_SYNC_NAMED &&
		    si->sy.wait[k].slot == sem)
			return 1;
	return 0;
}

/*
** The flows: from each transfer's completion to every instruction of the
** core that started at that moment and depends on the transfer or waits
** on its queue instance's semaphore. flow_in[x]: the transfer (its event
** index, the flow's id) that let slice x start, or -1 (an instruction
** that two completions at the same picosecond let start names the first);
** out[d]: transfer d let some instruction start.
*/
static void find_flows(const tw *w, int *flow_in, uint8_t *out)
{
	const ls_trace *t = w->t;
	by_start *ix = lm_xcalloc((size_t)t->n + 1, sizeof *ix);
	int n = 0;
	for (int i = 0; i < t->n; i++) {
		flow_in[i] = -1;
		if (t->ev[i].track < LS_ENGINES)
			ix[n++] = (by_start){ t->ev[i].core, t->ev[i].start, i };
	}
	qsort(ix, (size_t)n, sizeof *ix, cmp_start);
	for (int i = 0; i < t->n; i++) {
		const ls_trace_ev *d = &t->ev[i];
		int64_t done = d->start + d->dur;
		int lo = 0, hi = n;
		if (d->track < LS_ENGINES)
			continue;
		while (lo < hi) {       /* first slice at (core, done) */
			int mid = lo + (hi - lo) / 2;
			if (ix[mid].core < d->core ||
			    (ix[mid].core == d->core && ix[mid].start < done))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && ix[lo].core == d->core &&
		       ix[lo].start == done; lo++) {
			int x = ix[lo].i;
			if (flow_in[x] >= 0 || !unblocks(w, d, &t->ev[x]))
				continue;
			flow_in[x] = i;
			out[i] = 1;
		}
	}
	free(ix);
}

int ls_trace_write(const ls_trace *t, const ls_machine *mc, const char *path,
		   lm_error *err)
{
	tw w;
	int rc;
	int *flow_in = lm_xcalloc((size_t)t->n + 1, sizeof *flow_in);
	uint8_t *out = lm_xcalloc((size_t)t->n + 1, 1);
	memset(&w, 0, sizeof w);
	w.t = t;
	w.mc = mc;
	w.ntr = LS_ENGINES + mc->n_qinsts;
	w.first = 1;
	w.track_start = lm_xcalloc((size_t)LS_MAX_CORES * (size_t)w.ntr,
				   sizeof *w.track_start);
	for (int i = 0; i < LS_MAX_CORES * w.ntr; i++)
		w.track_start[i] = INT64_MAX;
	for (int i = 0; i < t->n; i++) {
		int64_t *f = &w.track_start[t->ev[i].core * w.ntr +
					    t->ev[i].track];
		if (t->ev[i].start < *f)
			*f = t->ev[i].start;
	}
	find_flows(&w, flow_in, out);
	lm_buf_puts(&w.b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	put_meta(&w);
	for (int i = 0; i < t->n; i++)
		put_slice(&w, i, flow_in, out);
	lm_buf_puts(&w.b, "\n]}\n");
	rc = lm_write_file_atomic(path, w.b.ptr, w.b.size, err);
	lm_buf_free(&w.b);
	free(w.track_start);
	free(flow_in);
	free(out);
	return rc;
}

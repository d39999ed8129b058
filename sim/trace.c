/*
** trace.c -- the engine trace as Chrome trace-event JSON (opens in
** ui.perfetto.dev and chrome://tracing). One process per core, one thread
** (track) per engine and per DMA queue instance the core used; one
** complete ("X") event per instruction, one per DMA transfer. Times are
** microseconds with picosecond precision (docs/simulator.md).
*/
#include "common.h"
#include "sim_int.h"

#include <stdlib.h>
#include <string.h>

void ls_trace_add(ls_trace *t, int core, int track, const char *name,
		  const char *cat, int64_t start, int64_t dur)
{
	ls_trace_ev *e;
	lm_grow(&t->ev, &t->cap, t->n + 1, sizeof *t->ev);
	e = &t->ev[t->n++];
	e->core = core;
	e->track = track;
	e->name = name;
	e->cat = cat;
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
static void put_str(lm_buf *b, const char *s)
{
	lm_buf_puts(b, "\"");
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			lm_buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			lm_buf_printf(b, "\\u%04x", c);
		else
			lm_buf_put(b, s, 1);
	}
	lm_buf_puts(b, "\"");
}

/* Picoseconds as microseconds, exactly. */
static void put_us(lm_buf *b, int64_t ps)
{
	lm_buf_printf(b, "%lld.%06lld", (long long)(ps / 1000000),
		      (long long)(ps % 1000000));
}

int ls_trace_write(const ls_trace *t, const ls_machine *mc, const char *path,
		   lm_error *err)
{
	lm_buf b = LM_BUF_INIT;
	uint8_t *seen = lm_xcalloc((size_t)LS_MAX_CORES *
				   (size_t)(LS_ENGINES + mc->n_qinsts), 1);
	int ntr = LS_ENGINES + mc->n_qinsts, first = 1, rc;

	lm_buf_puts(&b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	for (int i = 0; i < t->n; i++) {
		const ls_trace_ev *e = &t->ev[i];
		uint8_t *sn = &seen[e->core * ntr + e->track];
		if (!*sn) {
			int core_new = 1;
			for (int k = 0; k < ntr && core_new; k++)
				core_new = !seen[e->core * ntr + k];
			*sn = 1;
			if (core_new) {
				lm_buf_printf(&b, "%s{\"name\":\"process_name\","
					      "\"ph\":\"M\",\"pid\":%d,\"args\":"
					      "{\"name\":\"core %d\"}}",
					      first ? "" : ",\n", e->core,
					      e->core);
				first = 0;
			}
			lm_buf_printf(&b, ",\n{\"name\":\"thread_name\",\"ph\":"
				      "\"M\",\"pid\":%d,\"tid\":%d,\"args\":"
				      "{\"name\":", e->core, e->track);
			if (e->track < LS_ENGINES) {
				put_str(&b, ls_engine_name(e->track));
			} else {
				const ls_sqinst *q =
					&mc->qinsts[e->track - LS_ENGINES];
				char nm[300];
				snprintf(nm, sizeof nm, "DMA %s/%s",
					 mc->queues[q->queue].name, q->name);
				put_str(&b, nm);
			}
			lm_buf_printf(&b, "}},\n{\"name\":\"thread_sort_index\","
				      "\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
				      "\"args\":{\"sort_index\":%d}}", e->core,
				      e->track, e->track);
		}
		lm_buf_puts(&b, first ? "" : ",\n");
		first = 0;
		lm_buf_puts(&b, "{\"name\":");
		put_str(&b, e->name);
		lm_buf_puts(&b, ",\"cat\":");
		put_str(&b, e->cat);
		lm_buf_puts(&b, ",\"ph\":\"X\",\"ts\":");
		put_us(&b, e->start);
		lm_buf_puts(&b, ",\"dur\":");
		put_us(&b, e->dur);
		lm_buf_printf(&b, ",\"pid\":%d,\"tid\":%d}", e->core, e->track);
	}
	lm_buf_puts(&b, "\n]}\n");
	rc = lm_write_file_atomic(path, b.ptr, b.size, err);
	lm_buf_free(&b);
	free(seen);
	return rc;
}

/*
** waits.c -- where each engine's time goes: the scheduler reports when an
** engine starts waiting (and why) and when it stops; this file turns those
** moments into the per-engine statistics of ls_core_stats (sim.h). Every
** picosecond of a run lands in exactly one of busy, semaphore wait,
** barrier wait, dependency wait and idle, so the five add up to the run's
** simulated time (docs/simulator.md). The same moments, clipped to a
** kernel call's interval, give the kernel statistics (ls_kernel_stats).
*/
#include "common.h"
#include "sim_int.h"

#include <assert.h>
#include <stdlib.h>

/* The part of [t0, t1) inside kernel k's interval so far (it starts at
** the call's start; nothing before). */
static int64_t in_kernel(const ls_kacc *k, int64_t t0, int64_t t1)
{
	if (!k->started)
		return 0;
	if (t0 < k->st.start_ps)
		t0 = k->st.start_ps;
	return t1 > t0 ? t1 - t0 : 0;
}

/* Close the open segment of w at now into the engine's counters and
** those of its kernel and the kernels around it. */
static void close_segment(ls_core_stats *st, ls_kacc *ks, int eng,
			  ls_waitclock *w, int64_t now)
{
	int64_t d = now - w->since;
	assert(d >= 0);
	switch (w->why) {
	case LS_WAIT_SEM:
		st->wait_sem_ps[eng] += d;
		st->semaphore_wait_ps += d;
		break;
	case LS_WAIT_DEP:
		st->wait_dep_ps[eng] += d;
		break;
	default:
		break;
	}
	for (int k = ks ? w->kern : -1; k >= 0; k = ks[k].parent) {
		int64_t dk = in_kernel(&ks[k], w->since, now);
		if (w->why == LS_WAIT_SEM)
			ks[k].st.wait_sem_ps[eng] += dk;
		else if (w->why == LS_WAIT_DEP)
			ks[k].st.wait_dep_ps[eng] += dk;
	}
	w->why = LS_WAIT_NONE;
}

void ls_wait_begin(ls_core_stats *st, ls_kacc *ks, int kern, int eng,
		   ls_waitclock *w, int why, int64_t now)
{
	if (w->why == why && w->kern == kern)
		return;
	if (w->why != LS_WAIT_NONE)
		close_segment(st, ks, eng, w, now);
	w->why = why;
	w->kern = kern;
	w->since = now;
}

void ls_wait_end(ls_core_stats *st, ls_kacc *ks, int eng, ls_waitclock *w,
		 int64_t now)
{
	if (w->why != LS_WAIT_NONE)
		close_segment(st, ks, eng, w, now);
}

void ls_wait_barrier(ls_core_stats *st, ls_kacc *ks, int kern, int eng,
		     int64_t arrived, int64_t released)
{
	st->wait_barrier_ps[eng] += released - arrived;
	st->barrier_wait_ps += released - arrived;
	for (int k = ks ? kern : -1; k >= 0; k = ks[k].parent)
		ks[k].st.wait_barrier_ps[eng] +=
			in_kernel(&ks[k], arrived, released);
}

void ls_kern_busy(ls_kacc *ks, int kern, int eng, int64_t t0, int64_t t1,
		  int count)
{
	for (int k = kern; k >= 0; k = ks[k].parent) {
		ls_kernel_stats *ki = &ks[k].st;
		ki->busy_ps[eng] += t1 - t0;
		ki->instructions += count;
		if (t1 > ki->last_end_ps[eng])
			ki->last_end_ps[eng] = t1;
	}
}

void ls_kern_dma(ls_kacc *ks, int kern, int qinst, int64_t bytes,
		 int64_t start, int64_t end)
{
	for (int k = kern; k >= 0; k = ks[k].parent) {
		ls_kacc *ka = &ks[k];
		ka->st.dma_bytes += bytes;
		ka->st.dma_transfers++;
		ka->st.dma_xfer_ps += end - start;
		if (end > ka->st.dma_end_ps)
			ka->st.dma_end_ps = end;
		lm_grow(&ka->xf, &ka->cap_xf, ka->n_xf + 1, sizeof *ka->xf);
		ka->xf[ka->n_xf++] = (ls_kxfer){ start, end, bytes, qinst };
	}
}

/* By start, then by end. */
static int start_cmp(const void *a, const void *b)
{
	const ls_kxfer *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* By queue instance, then as start_cmp. */
static int xfer_cmp(const void *a, const void *b)
{
	const ls_kxfer *x = a, *y = b;
	if (x->qinst != y->qinst)
		return x->qinst < y->qinst ? -1 : 1;
	return start_cmp(a, b);
}

/* The union of the intervals of xf[0..n) (sorted by start). */
static int64_t union_ps(const ls_kxfer *xf, int n)
{
	int64_t sum = 0, cur_s = 0, cur_e = -1;
	for (int i = 0; i < n; i++) {
		if (xf[i].start > cur_e) {
			if (cur_e > cur_s)
				sum += cur_e - cur_s;
			cur_s = xf[i].start;
			cur_e = xf[i].end;
		} else if (xf[i].end > cur_e) {
			cur_e = xf[i].end;
		}
	}
	if (cur_e > cur_s)
		sum += cur_e - cur_s;
	return sum;
}

void ls_kern_finish(ls_kacc *k, const ls_machine *mc)
{
	ls_kernel_stats *ki = &k->st;
	int64_t len = ki->end_ps - ki->start_ps, last = -1;
	ki->critical = -1;
	for (int e = 0; e < LS_ENGINES; e++) {
		ki->idle_ps[e] = len - ki->busy_ps[e] - ki->wait_sem_ps[e] -
				 ki->wait_barrier_ps[e] - ki->wait_dep_ps[e];
		/* every part lies inside the call's interval */
		assert(ki->idle_ps[e] >= 0);
		/* the last to end; a tie goes to the busier engine */
		if (ki->last_end_ps[e] > 0 &&
		    (ki->last_end_ps[e] > last ||
		     (ki->last_end_ps[e] == last &&
		      ki->busy_ps[e] > ki->busy_ps[ki->critical]))) {
			last = ki->last_end_ps[e];
			ki->critical = e;
		}
	}
	if (ki->dma_transfers > 0 && ki->dma_end_ps > last)
		ki->critical = LS_ENGINES;
	/* per queue instance, then the union of all the transfers */
	if (k->n_xf > 1)
		qsort(k->xf, (size_t)k->n_xf, sizeof *k->xf, xfer_cmp);
	for (int i = 0, j; i < k->n_xf; i = j) {
		ls_kernel_queue q = { 0 };
		const ls_sqinst *qi = &mc->qinsts[k->xf[i].qinst];
		q.queue = lm_xasprintf("%s/%s", mc->queues[qi->queue].name,
				       qi->name);
		for (j = i; j < k->n_xf && k->xf[j].qinst == k->xf[i].qinst;
		     j++) {
			q.bytes += k->xf[j].bytes;
			q.transfers++;
			q.xfer_ps += k->xf[j].end - k->xf[j].start;
		}
		q.active_ps = union_ps(k->xf + i, j - i);
		ki->queues = lm_xrealloc(ki->queues, (size_t)(ki->n_queues + 1) *
					 sizeof *ki->queues);
		ki->queues[ki->n_queues++] = q;
	}
	if (k->n_xf > 1)
		qsort(k->xf, (size_t)k->n_xf, sizeof *k->xf, start_cmp);
	ki->dma_active_ps += union_ps(k->xf, k->n_xf);
	free(k->xf);
	k->xf = NULL;
	k->n_xf = k->cap_xf = 0;
}

const char *ls_kernel_engine_name(int e)
{
	static const char *const names[] = { "PE", "ACT", "DVE", "POOL",
					     "SP", "DMA" };
	return e >= 0 && e <= LS_ENGINES ? names[e] : "-";
}

void ls_wait_finish(ls_core_stats *st, int64_t run_ps)
{
	for (int e = 0; e < LS_ENGINES; e++) {
		st->idle_ps[e] = run_ps - st->busy_ps[e] - st->wait_sem_ps[e] -
				 st->wait_barrier_ps[e] - st->wait_dep_ps[e];
		/* the scheduler never counts one picosecond twice */
		assert(st->idle_ps[e] >= 0);
	}
}

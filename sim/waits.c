/*
** waits.c -- where each engine's time goes: the scheduler reports when an
** engine starts waiting (and why) and when it stops; this file turns those
** moments into the per-engine statistics of ls_core_stats (sim.h). Every
** picosecond of a run lands in exactly one of busy, semaphore wait,
** barrier wait, dependency wait and idle, so the five add up to the run's
** simulated time (docs/simulator.md).
*/
#include "common.h"
#include "sim_int.h"

#include <assert.h>

/* Close the open segment of w at now into the engine's counters. */
static void close_segment(ls_core_stats *st, int eng, ls_waitclock *w,
			  int64_t now)
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
	w->why = LS_WAIT_NONE;
}

void ls_wait_begin(ls_core_stats *st, int eng, ls_waitclock *w, int why,
		   int64_t now)
{
	if (w->why == why)
		return;
	if (w->why != LS_WAIT_NONE)
		close_segment(st, eng, w, now);
	w->why = why;
	w->since = now;
}

void ls_wait_end(ls_core_stats *st, int eng, ls_waitclock *w, int64_t now)
{
	if (w->why != LS_WAIT_NONE)
		close_segment(st, eng, w, now);
}

void ls_wait_barrier(ls_core_stats *st, int eng, int64_t arrived,
		     int64_t released)
{
	st->wait_barrier_ps[eng] += released - arrived;
	st->barrier_wait_ps += released - arrived;
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

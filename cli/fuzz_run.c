/*
** fuzz_run.c -- the driver loop of a campaign, its signals, and the
** transport of `--jobs J` (fuzz_run.h).
*/
#define _XOPEN_SOURCE 700
#include "common.h"
#include "fuzz_run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events taken per round at most (a round ends with one commit). */
#define FZ_ROUND 512

volatile sig_atomic_t fz_sigint_count, fz_sigterm_seen;

static void on_sigint(int sig)
{
	(void)sig;
	fz_sigint_count++;
}

static void on_sigterm(int sig)
{
	(void)sig;
	fz_sigterm_seen = 1;
}

void fz_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a wait returns at once */
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_sigterm;
	sigaction(SIGTERM, &sa, NULL);
}

/* ---- --jobs J: the pool's servers ----------------------------------- */

typedef struct local {
	fz_pool *pool;
	int announced;          /* the first wait reports every slot ready */
	int *failed;            /* slots whose case could not be sent */
	int n_failed;
} local;

static int local_wait(fz_transport *t, double timeout, fz_event *ev, int max)
{
	local *l = t->impl;
	int k = 0;
	if (!l->announced) {
		l->announced = 1;
		for (int i = 0; i < t->n_workers && k < max; i++) {
			memset(&ev[k], 0, sizeof ev[k]);
			ev[k].kind = FZ_EV_READY;
			ev[k++].worker = i;
		}
		return k;
	}
	while (l->n_failed && k < max) {
		memset(&ev[k], 0, sizeof ev[k]);
		ev[k].kind = FZ_EV_GONE;
		ev[k].worker = l->failed[--l->n_failed];
		snprintf(ev[k].why, sizeof ev[k].why, "its case server is gone");
		k++;
	}
	if (k)
		return k;
	fz_pool_ev pe[64];
	int n = fz_pool_wait(l->pool, (int)(timeout * 1000), pe,
			     max < 64 ? max : 64);
	for (int i = 0; i < n; i++) {
		memset(&ev[i], 0, sizeof ev[i]);
		ev[i].worker = pe[i].slot;
		if (pe[i].gone) {
			ev[i].kind = FZ_EV_GONE;
			snprintf(ev[i].why, sizeof ev[i].why, "%s", pe[i].why);
		} else {
			ev[i].kind = FZ_EV_RESULT;
			ev[i].data = pe[i].data;
			ev[i].len = pe[i].len;
		}
	}
	return n;
}

static void local_assign(fz_transport *t, int w, uint64_t seed)
{
	local *l = t->impl;
	if (fz_pool_run(l->pool, w, seed) != 0)
		l->failed[l->n_failed++] = w;
}

static void local_release(fz_transport *t, int w)
{
	local *l = t->impl;
	fz_pool_quit(l->pool, w);
}

static int local_live(fz_transport *t)
{
	local *l = t->impl;
	return fz_pool_live(l->pool);
}

static void local_where(fz_transport *t, int w, char *buf, size_t n)
{
	(void)t;
	snprintf(buf, n, "job %d", w + 1);
}

void fz_discard_here(fz_transport *t, int w, const char *keep,
		     const char *path)
{
	lm_error err;
	(void)t;
	(void)w;
	if (fz_kept_remove(keep, path, &err) != 0)
		fprintf(stderr, "lncsim: warning: fuzz: %s (a case of its "
			"signature with a smaller seed is kept)\n", err.msg);
}

void fz_local_transport(fz_transport *t, fz_pool *pool)
{
	local *l = lm_xcalloc(1, sizeof *l);
	l->pool = pool;
	l->failed = lm_xcalloc((size_t)fz_pool_size(pool) + 1,
			       sizeof *l->failed);
	memset(t, 0, sizeof *t);
	t->n_workers = fz_pool_size(pool);
	t->wait = local_wait;
	t->assign = local_assign;
	t->release = local_release;
	t->live = local_live;
	t->where = local_where;
	t->discard = fz_discard_here;
	t->impl = l;
}

void fz_local_transport_free(fz_transport *t)
{
	local *l = t->impl;
	if (!l)
		return;
	free(l->failed);
	free(l);
	t->impl = NULL;
}

/* ---- the driver ------------------------------------------------------ */

/* Worker w's case is lost (why): hand it out again or give it up. */
static void lose(fz_transport *t, fz_coord *co, fz_sink *s, int w,
		 const char *why)
{
	uint64_t seed = 0;
	char where[64];
	int outcome = fz_coord_lost(co, w, &seed);
	if (outcome == FZ_LOST_NONE)
		return;
	t->where(t, w, where, sizeof where);
	fz_sink_lost(s, seed, why, outcome, where);
}

/* A result record from worker w. */
static void take(fz_transport *t, fz_coord *co, fz_sink *s, int w,
		 const unsigned char *data, size_t len)
{
	fz_record r;
	lm_error err;
	char where[64];
	uint64_t running = 0;
	t->where(t, w, where, sizeof where);
	if (fz_record_decode(data, len, &r, &err) != 0) {
		char why[300];
		snprintf(why, sizeof why, "it sent a bad %.250s", err.msg);
		lose(t, co, s, w, why);
	} else if (!fz_coord_running(co, w, &running)) {
		/* a late answer for a case already taken for lost and
		   handed out again: the second run records it */
	} else if (running != r.seed) {
		/* one frame per case: the worker is idle now, and its case
		   is not answered */
		char why[160];
		snprintf(why, sizeof why, "it answered seed %llu while running "
			 "seed %llu", (unsigned long long)r.seed,
			 (unsigned long long)running);
		lose(t, co, s, w, why);
	} else if (r.status == FZ_LOST) {
		lose(t, co, s, w, r.message);
	} else if (fz_coord_result(co, w, r.seed))
		fz_sink_take(s, &r, where, w);
	fz_record_free(&r);
}

/* Whether the campaign should hand out nothing more. */
static void check_stops(fz_coord *co, fz_sink *s, const fz_drive_opts *o)
{
	if (fz_coord_stopped(co))
		return;
	if (fz_sigint_count || fz_sigterm_seen || fz_sink_unlogged(s) ||
	    (o->stop_on_fail && fz_sink_failed(s)) ||
	    (o->deadline > 0 && lm_seconds() >= o->deadline))
		fz_coord_stop(co);
}

int fz_drive(fz_transport *t, fz_coord *co, fz_sink *s,
	     const fz_drive_opts *o)
{
	fz_event *ev = lm_xcalloc(FZ_ROUND, sizeof *ev);
	char *idle = lm_xcalloc((size_t)t->n_workers + 1, 1);
	int end = FZ_END_DONE;
	fz_coord_stats st;
	for (;;) {
		check_stops(co, s, o);
		if (fz_sigterm_seen || fz_sigint_count > 1) {
			end = FZ_END_TERMINATED;
			break;
		}
		if (fz_coord_finished(co))
			break;
		if (!t->live(t)) {
			end = FZ_END_NO_WORKERS;
			break;
		}
		double timeout = 0.25;
		if (o->deadline > 0 && !fz_coord_stopped(co)) {
			double left = o->deadline - lm_seconds();
			if (left < timeout)
				timeout = left > 0 ? left : 0;
		}
		int n = t->wait(t, timeout, ev, FZ_ROUND);
		for (int i = 0; i < n; i++) {
			fz_event *e = &ev[i];
			if (e->kind == FZ_EV_GONE) {
				idle[e->worker] = 0;
				lose(t, co, s, e->worker, e->why);
				continue;
			}
			if (e->kind == FZ_EV_RESULT)
				take(t, co, s, e->worker, e->data, e->len);
			uint64_t x;
			if (!fz_coord_running(co, e->worker, &x))
				idle[e->worker] = 1;
		}
		fz_sink_flush(s, 0);
		check_stops(co, s, o);
		for (int w = 0; w < t->n_workers; w++) {
			uint64_t seed;
			if (!idle[w])
				continue;
			int r = fz_coord_next(co, w, &seed);
			if (r == FZ_NEXT_RUN)
				t->assign(t, w, seed);
			else if (r == FZ_NEXT_NONE)
				t->release(t, w);
			if (r != FZ_NEXT_WAIT)
				idle[w] = 0;
		}
		fz_coord_get_stats(co, &st);
		fz_sink_progress(s, &st, 0);
	}
	fz_sink_flush(s, 1);
	if (fz_sigint_count && end == FZ_END_DONE)
		end = FZ_END_INTERRUPTED;
	for (int w = 0; w < t->n_workers; w++)
		if (idle[w])
			t->release(t, w);
	fz_coord_get_stats(co, &st);
	fz_sink_progress(s, &st, 1);
	free(idle);
	free(ev);
	return end;
}

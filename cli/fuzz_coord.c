/*
** fuzz_coord.c -- the coordinator's state machine (fuzz_coord.h).
**
** State: the next new seed (the plan's done ranges skipped as it
** passes them), the case each worker runs, the cases lost once waiting
** to go out again (first in, first out), and the seeds lost once (a loss
** of one of those is final). Every operation is O(1) but the search of
** the lost-once list, which holds only cases whose worker died.
*/
#include "common.h"
#include "fuzz_coord.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct fz_coord {
	uint64_t first, end, next;
	fz_range *done;
	int n_done, at_done;         /* done[at_done..] are still ahead */
	int n_workers;
	uint64_t *flight;            /* the seed each worker runs */
	unsigned char *busy;
	uint64_t *queue;             /* lost once, to go out again */
	int q_head, q_len, q_cap;
	uint64_t *lost_once;
	int n_lost, cap_lost;
	int stopped;
	fz_coord_stats st;
};

/* Move next past the done ranges it has reached. */
static void skip_done(fz_coord *c)
{
	while (c->at_done < c->n_done && c->next < c->end) {
		const fz_range *r = &c->done[c->at_done];
		if (r->hi < c->next) {
			c->at_done++;
			continue;
		}
		if (r->lo > c->next)
			break;
		c->next = r->hi + 1;
		c->at_done++;
		if (c->next == 0)           /* hi was the largest seed */
			c->next = c->end;
	}
}

fz_coord *fz_coord_new(const fz_plan *p)
{
	fz_coord *c = lm_xcalloc(1, sizeof *c);
	assert(p->end > p->first && p->n_workers > 0);
	c->first = c->next = p->first;
	c->end = p->end;
	c->n_workers = p->n_workers;
	c->flight = lm_xcalloc((size_t)p->n_workers, sizeof *c->flight);
	c->busy = lm_xcalloc((size_t)p->n_workers, 1);
	if (p->n_done) {
		c->done = lm_xcalloc((size_t)p->n_done, sizeof *c->done);
		memcpy(c->done, p->done, (size_t)p->n_done * sizeof *c->done);
		c->n_done = p->n_done;
	}
	uint64_t skipped = 0;
	for (int i = 0; i < c->n_done; i++) {
		uint64_t lo = c->done[i].lo > c->first ? c->done[i].lo : c->first;
		uint64_t hi = c->done[i].hi < c->end - 1 ? c->done[i].hi
							   : c->end - 1;
		assert(i == 0 || c->done[i].lo > c->done[i - 1].hi);
		if (lo <= hi)
			skipped += hi - lo + 1;
	}
	c->st.skipped = skipped;
	c->st.total = c->end - c->first - skipped;
	skip_done(c);
	return c;
}

void fz_coord_free(fz_coord *c)
{
	if (!c)
		return;
	free(c->done);
	free(c->flight);
	free(c->busy);
	free(c->queue);
	free(c->lost_once);
	free(c);
}

/* Give worker w seed s. */
static int hand(fz_coord *c, int w, uint64_t s, uint64_t *seed)
{
	c->busy[w] = 1;
	c->flight[w] = s;
	c->st.handed++;
	c->st.running++;
	*seed = s;
	return FZ_NEXT_RUN;
}

int fz_coord_next(fz_coord *c, int w, uint64_t *seed)
{
	assert(w >= 0 && w < c->n_workers && !c->busy[w]);
	if (c->stopped)
		return FZ_NEXT_NONE;
	if (c->q_len) {
		uint64_t s = c->queue[c->q_head];
		c->q_head = (c->q_head + 1) % c->q_cap;
		c->q_len--;
		c->st.reissued++;
		return hand(c, w, s, seed);
	}
	if (c->next < c->end) {
		uint64_t s = c->next++;
		skip_done(c);
		return hand(c, w, s, seed);
	}
	return c->st.running ? FZ_NEXT_WAIT : FZ_NEXT_NONE;
}

int fz_coord_result(fz_coord *c, int w, uint64_t seed)
{
	assert(w >= 0 && w < c->n_workers);
	if (!c->busy[w] || c->flight[w] != seed) {
		c->st.dropped++;
		return 0;
	}
	c->busy[w] = 0;
	c->st.running--;
	c->st.results++;
	return 1;
}

/* Append s to the queue of cases to go out again. */
static void enqueue(fz_coord *c, uint64_t s)
{
	if (c->q_len == c->q_cap) {
		int cap = c->q_cap ? 2 * c->q_cap : 8;
		uint64_t *q = lm_xcalloc((size_t)cap, sizeof *q);
		for (int i = 0; i < c->q_len; i++)
			q[i] = c->queue[(c->q_head + i) % c->q_cap];
		free(c->queue);
		c->queue = q;
		c->q_head = 0;
		c->q_cap = cap;
	}
	c->queue[(c->q_head + c->q_len) % c->q_cap] = s;
	c->q_len++;
}

int fz_coord_lost(fz_coord *c, int w, uint64_t *seed)
{
	assert(w >= 0 && w < c->n_workers);
	if (!c->busy[w])
		return FZ_LOST_NONE;
	uint64_t s = c->flight[w];
	c->busy[w] = 0;
	c->st.running--;
	*seed = s;
	for (int i = 0; i < c->n_lost; i++)
		if (c->lost_once[i] == s) {
			c->lost_once[i] = c->lost_once[--c->n_lost];
			c->st.given_up++;
			return FZ_LOST_FINAL;
		}
	if (c->stopped)
		return FZ_LOST_DROPPED;
	lm_grow(&c->lost_once, &c->cap_lost, c->n_lost + 1,
		sizeof *c->lost_once);
	c->lost_once[c->n_lost++] = s;
	enqueue(c, s);
	return FZ_LOST_REISSUE;
}

int fz_coord_running(const fz_coord *c, int w, uint64_t *seed)
{
	assert(w >= 0 && w < c->n_workers);
	if (c->busy[w])
		*seed = c->flight[w];
	return c->busy[w];
}

void fz_coord_stop(fz_coord *c)
{
	c->stopped = 1;
	c->q_len = 0;
}

int fz_coord_stopped(const fz_coord *c)
{
	return c->stopped;
}

int fz_coord_finished(const fz_coord *c)
{
	if (c->st.running)
		return 0;
	return c->stopped || (!c->q_len && c->next >= c->end);
}

void fz_coord_get_stats(const fz_coord *c, fz_coord_stats *st)
{
	*st = c->st;
}

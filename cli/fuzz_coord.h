/*
** fuzz_coord.h -- the coordinator of a fuzz campaign as a state machine
** of its own: which seed a worker that asks gets next, what happens to a
** case whose worker died, when the campaign is over. It knows nothing of
** how workers are reached (forked processes over pipes, MPI ranks) nor
** of the database: the driver (fuzz_run.h) feeds it events and carries
** out its answers, so both transports share it and a test can drive it
** alone.
**
** Seeds are handed out one at a time to whichever worker asks (work
** goes by request, so a slow case holds up only its own worker). A case
** lost with its worker is handed out again once, before any new seed;
** lost a second time it is given up (the caller records it as lost).
*/
#ifndef LNCSIM_FUZZ_COORD_H
#define LNCSIM_FUZZ_COORD_H

#include <stdint.h>

/* A closed range of seeds. */
typedef struct fz_range {
	uint64_t lo, hi;
} fz_range;

/* What the campaign is. */
typedef struct fz_plan {
	uint64_t first;          /* first seed */
	uint64_t end;            /* one past the last seed (> first) */
	const fz_range *done;    /* seeds already recorded (--resume): not
				    handed out; ascending, disjoint */
	int n_done;
	int n_workers;           /* worker ids are 0 .. n_workers - 1 */
} fz_plan;

typedef struct fz_coord fz_coord;

/* A new coordinator (the plan's arrays are copied). */
fz_coord *fz_coord_new(const fz_plan *p);
void fz_coord_free(fz_coord *c);

/* fz_coord_next */
enum {
	FZ_NEXT_RUN,    /* run *seed */
	FZ_NEXT_WAIT,   /* nothing now; a lost case may come back: ask later */
	FZ_NEXT_NONE    /* nothing more, ever: let the worker go */
};
/* Worker w (with no case) asks for work. */
int fz_coord_next(fz_coord *c, int w, uint64_t *seed);

/*
** Worker w sent the result of seed. 1: it is the result of w's case
** (record it; w has no case now); 0: w was not running seed (a worker
** taken for dead whose case went out again, a duplicate): drop it (w
** keeps the case it runs, if any).
*/
int fz_coord_result(fz_coord *c, int w, uint64_t seed);

/* fz_coord_lost */
enum {
	FZ_LOST_NONE,     /* w had no case */
	FZ_LOST_REISSUE,  /* *seed goes out again (the first loss) */
	FZ_LOST_FINAL,    /* *seed was lost twice: record it as lost */
	FZ_LOST_DROPPED   /* stopped: *seed is not run again (nor recorded) */
};
/* Worker w lost its case (it or the case's process died). */
int fz_coord_lost(fz_coord *c, int w, uint64_t *seed);

/* Whether worker w runs a case (*seed gets it). */
int fz_coord_running(const fz_coord *c, int w, uint64_t *seed);

/* Hand out nothing more (the cases running finish). */
void fz_coord_stop(fz_coord *c);
int fz_coord_stopped(const fz_coord *c);
/* Nothing running, and nothing left to hand out (or stopped). */
int fz_coord_finished(const fz_coord *c);

/* Counters. */
typedef struct fz_coord_stats {
	uint64_t handed;      /* cases handed out, re-issues included */
	uint64_t results;     /* results taken */
	uint64_t dropped;     /* results dropped (fz_coord_result 0) */
	uint64_t reissued;    /* cases handed out again */
	uint64_t given_up;    /* cases lost twice */
	uint64_t skipped;     /* seeds of the plan already recorded */
	uint64_t running;     /* cases now running */
	uint64_t total;       /* seeds of the plan, less the skipped */
} fz_coord_stats;
void fz_coord_get_stats(const fz_coord *c, fz_coord_stats *st);

#endif

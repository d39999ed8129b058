/*
** fuzz_run.h -- how a campaign runs on the coordinator's side: the
** transport that reaches the workers (local case servers, or MPI ranks
** and the coordinator's own servers), the driver loop that joins it to
** the coordinator's state machine, and the sink that takes each result
** (prints it, counts its signature, logs it into the one database in
** batches).
**
** The driver, each round: wait for events, take every one that is there
** (results into the sink, lost cases into the coordinator), commit the
** sink's batch when it is due (every 0.2 s, so one commit holds many
** cases), then give each idle worker its next seed.
*/
#ifndef LNCSIM_FUZZ_RUN_H
#define LNCSIM_FUZZ_RUN_H

#include <signal.h>
#include "common.h"
#include "fuzz.h"
#include "fuzz_coord.h"
#include "fuzz_pool.h"

struct ldb;

/* ---- transports -------------------------------------------------------- */

enum {
	FZ_EV_READY,    /* the worker has no case and wants one */
	FZ_EV_RESULT,   /* a result record from the worker (it is idle now) */
	FZ_EV_GONE      /* the worker is dead: its case, if any, is lost */
};

typedef struct fz_event {
	int kind;
	int worker;
	const unsigned char *data;  /* FZ_EV_RESULT: the record, valid
				       until the next wait */
	size_t len;
	char why[200];              /* FZ_EV_GONE */
} fz_event;

typedef struct fz_transport fz_transport;
struct fz_transport {
	int n_workers;              /* worker ids 0 .. n_workers - 1 */
	/* Wait up to timeout seconds for events; fill up to max, return the
	** count (0: none in time, or a signal). */
	int (*wait)(fz_transport *t, double timeout, fz_event *ev, int max);
	/* Give worker w case seed. */
	void (*assign)(fz_transport *t, int w, uint64_t seed);
	/* No more work for w: let it go. */
	void (*release)(fz_transport *t, int w);
	/* Workers not gone. */
	int (*live)(fz_transport *t);
	/* Where worker w is, for messages ("job 2", "rank 3"). */
	void (*where)(fz_transport *t, int w, char *buf, size_t n);
	/* Remove the case worker w kept at path (beneath keep, as w sees
	** it): another case of its signature with a smaller seed is kept. */
	void (*discard)(fz_transport *t, int w, const char *keep,
			const char *path);
	void *impl;
};

/* The transport of `--jobs J`: the pool's servers are the workers. The
** pool stays the caller's. */
void fz_local_transport(fz_transport *t, fz_pool *pool);
void fz_local_transport_free(fz_transport *t);
/* A discard on this host: fz_kept_remove, a warning when it cannot. */
void fz_discard_here(fz_transport *t, int w, const char *keep,
		     const char *path);

/* ---- the sink ---------------------------------------------------------- */

typedef struct fz_sink_opts {
	struct ldb *db;             /* NULL: --no-db */
	const char *db_path;
	const char *campaign;       /* NULL with no database */
	const fz_config *cfg;
	fz_transport *transport;    /* where kept cases are discarded */
	int quiet, tty;
	uint64_t total;             /* cases to run, 0: no count (only a
				       duration, or none) */
	double duration;            /* > 0: seconds the session may take */
} fz_sink_opts;

typedef struct fz_sink fz_sink;

fz_sink *fz_sink_new(const fz_sink_opts *o);
void fz_sink_free(fz_sink *s);
/* Take the result of a case from worker w: count, print, log (into the
** open batch); of a signature's cases kept on disk this session, the one
** of the smallest seed stays (the others are discarded through the
** transport). */
void fz_sink_take(fz_sink *s, const fz_record *r, const char *where, int w);
/* Note a lost case (outcome FZ_LOST_*); FZ_LOST_FINAL records it. */
void fz_sink_lost(fz_sink *s, uint64_t seed, const char *why, int outcome,
		  const char *where);
/* Commit the batch when it is due (force: now): 0, or -1 when its runs
** were not logged (said so). */
int fz_sink_flush(fz_sink *s, int force);
/* Results counted, failed (fail or error), runs not logged. */
uint64_t fz_sink_done(const fz_sink *s);
uint64_t fz_sink_failed(const fz_sink *s);
uint64_t fz_sink_unlogged(const fz_sink *s);
/* Redraw the progress line (a terminal) or print a line every 50. */
void fz_sink_progress(fz_sink *s, const fz_coord_stats *st, int force);
/*
** The summary: counts, rate, lost and skipped cases, the signatures
** seen, the interruption; workers: how many ran cases (for the
** "(J jobs)" part), label: "job" or "worker".
*/
void fz_sink_summary(fz_sink *s, const fz_coord_stats *st, int workers,
		     const char *label, int interrupted, double cpu_seconds);

/* ---- the driver -------------------------------------------------------- */

/* Set by the signal handlers the coordinator installs. */
extern volatile sig_atomic_t fz_sigint_count, fz_sigterm_seen;
/* SIGINT (first: stop handing out, finish what runs; second: as
** SIGTERM) and SIGTERM (stop now) handlers, installed for the driver. */
void fz_install_signals(void);

typedef struct fz_drive_opts {
	int stop_on_fail;           /* --stop */
	double deadline;            /* lm_seconds() after which nothing new
				       is handed out; 0: none */
} fz_drive_opts;

/* How the drive ended. */
enum {
	FZ_END_DONE,                /* every case ran (or --stop, deadline) */
	FZ_END_INTERRUPTED,         /* SIGINT: stopped, the running finished */
	FZ_END_TERMINATED,          /* SIGTERM / second SIGINT: cut short */
	FZ_END_NO_WORKERS           /* every worker died with work left */
};

/*
** Run the campaign: drive the coordinator through the transport, every
** result into the sink. Returns FZ_END_*. Workers still alive at the end
** are released.
*/
int fz_drive(fz_transport *t, fz_coord *co, fz_sink *s,
	     const fz_drive_opts *o);

#endif

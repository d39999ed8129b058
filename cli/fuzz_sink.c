/*
** fuzz_sink.c -- where the coordinator's results go (fuzz_run.h): the
** counts and the progress line, a FAIL line with its repro for each new
** failure signature (and for a smaller seed of a known one), and the
** database -- each case one run with its executions, tensors and its
** cases row, in the batch of its round.
*/
#define _XOPEN_SOURCE 700
#include "common.h"
#include "fuzz_run.h"
#include "db.h"
#include "race_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seeds named one by one when a batch is lost; the rest are counted. */
#define NAMED_MAX 10
/* A batch is committed once it is this old or holds this many runs: one
** commit (the WAL frames of every page it changed) per batch, not per
** case; a crash loses at most the batch, which --resume runs again. */
#define BATCH_SECONDS 0.2
#define BATCH_RUNS 4096

/* What a session knows of one signature. */
typedef struct sig_info {
	char *sig;              /* the key (the map does not copy keys) */
	uint64_t seed;          /* the smallest seed that hit it */
	int64_t hits;
	int is_new;             /* first seen in this session */
	char *kept;             /* its case kept this session (NULL none) */
	uint64_t kept_seed;     /* of seed */
	int kept_w;             /* by worker */
} sig_info;

/* A case lost once: why, for the record if it is lost again. */
typedef struct lost_case {
	uint64_t seed;
	char why[200];
} lost_case;

struct fz_sink {
	fz_sink_opts o;
	char *gen_options;
	uint64_t done, passed, failed, errors;
	uint64_t reissued, given_up, dropped, unlogged;
	double t0, drawn_at;
	int drawn;              /* the progress line is on the screen */
	uint64_t printed_at;    /* done when the last non-tty line went */
	lm_strmap sigs;         /* signature -> sig_info */
	int n_sigs, n_new;
	uint64_t *batch;        /* seeds logged into the open batch */
	int n_batch, cap_batch;
	double batch_t0;        /* when its first run went in */
	lost_case *lost;
	int n_lost, cap_lost;
	int warned_opts, warned_version;
};

/* The signatures the campaign already has (a resumed campaign). */
static void load_sigs(fz_sink *s)
{
	ldb_failure_row *rows = NULL;
	int n = 0;
	lm_error err;
	if (!s->o.db)
		return;
	if (ldb_query_failures(s->o.db, s->o.campaign, &rows, &n, &err) != 0) {
		/* the campaign goes on: what is lost is only which FAIL
		   lines are new */
		fprintf(stderr, "lncsim: warning: %s (the campaign's recorded "
			"failure signatures are not known: some may print "
			"again as new)\n", err.msg);
		return;
	}
	for (int i = 0; i < n; i++) {
		sig_info *si = lm_xcalloc(1, sizeof *si);
		si->sig = lm_xstrdup(rows[i].signature);
		si->seed = rows[i].seed;
		si->hits = rows[i].hits;
		lm_strmap_put(&s->sigs, si->sig, si);
		s->n_sigs++;
	}
	ldb_failure_rows_free(rows, n);
}

fz_sink *fz_sink_new(const fz_sink_opts *o)
{
	fz_sink *s = lm_xcalloc(1, sizeof *s);
	s->o = *o;
	s->gen_options = fz_gen_options(o->cfg);
	s->t0 = lm_seconds();
	lm_strmap_init(&s->sigs);
	load_sigs(s);
	return s;
}

void fz_sink_free(fz_sink *s)
{
	if (!s)
		return;
	size_t pos = 0;
	const char *key;
	void *val;
	while (lm_strmap_next(&s->sigs, &pos, &key, &val)) {
		free(((sig_info *)val)->sig);
		free(((sig_info *)val)->kept);
		free(val);
	}
	lm_strmap_free(&s->sigs);
	free(s->gen_options);
	free(s->batch);
	free(s->lost);
	free(s);
}

/* Take the progress line off the screen before printing a line. */
static void clear_line(fz_sink *s)
{
	if (s->drawn) {
		fputc('\n', stderr);
		s->drawn = 0;
	}
}

static const char *status_name(fz_status st)
{
	return st == FZ_PASS ? "pass" : st == FZ_FAIL ? "fail" : "error";
}

/* Log one case as its run, inside the batch. */
static int log_case(fz_sink *s, const fz_record *r, lm_error *err)
{
	ldb *db = s->o.db;
	char *cmd = fz_repro(s->o.cfg, r->seed, ".");
	char *repro = fz_repro(s->o.cfg, r->seed, "DIR");
	char *mod = lm_xasprintf("gen%llu", (unsigned long long)r->seed);
	ldb_run_info info;
	ldb_run *run = NULL;
	int rc;
	memset(&info, 0, sizeof info);
	info.command = cmd;
	info.module = mod;
	info.arch = r->arch;
	info.cores = r->cores;
	info.seed = r->seed;
	info.tool_version = r->version;
	info.started = (time_t)r->started;
	if (!ldb_batch_is_open(db) && (rc = ldb_batch_begin(db, err)) != 0)
		goto done;
	if ((rc = ldb_run_begin(db, &info, &run, err)) != 0)
		goto done;
	for (int i = 0; !rc && i < r->n_exec; i++)
		rc = ldb_log_execution(run, r->exec[i].mode, &r->exec[i].r, err);
	for (int i = 0; !rc && i < r->n_exec; i++)
		if (r->exec[i].race)
			rc = cli_log_races(run, r->exec[i].mode, &r->exec[i].r,
					   err);
	for (int i = 0; !rc && i < r->n_tensors; i++) {
		const fz_tensor *t = &r->tensors[i];
		rc = ldb_log_tensor(run, t->name, t->equal, t->mismatches,
				    t->first_index, t->max_abs_diff, err);
	}
	if (!rc) {
		ldb_case_info ci = { s->o.campaign, r->seed, r->gen_options,
				     r->kind, r->signature, r->message, repro };
		rc = ldb_log_case(run, &ci, err);
	}
	if (rc) {
		ldb_run_abort(run);
		goto done;
	}
	rc = ldb_run_end(run, status_name(r->status), r->message, r->wall,
			 NULL, err);
done:
	free(cmd);
	free(repro);
	free(mod);
	return rc;
}

/* A record made with other options or another lncsim: said once. */
static void check_origin(fz_sink *s, const fz_record *r, const char *where)
{
	if (!s->warned_opts && strcmp(r->gen_options, s->gen_options)) {
		clear_line(s);
		fprintf(stderr, "lncsim: fuzz: %s ran seed %llu with '%s', not "
			"the campaign's '%s' (stored as it ran)\n", where,
			(unsigned long long)r->seed, r->gen_options,
			s->gen_options);
		s->warned_opts = 1;
	}
	if (!s->warned_version && strcmp(r->version, PACKAGE_VERSION)) {
		clear_line(s);
		fprintf(stderr, "lncsim: fuzz: %s runs lncsim %s, the "
			"coordinator %s (each case stored with its own)\n",
			where, r->version, PACKAGE_VERSION);
		s->warned_version = 1;
	}
}

/* The FAIL line of a case: verdict, first line of the message, repro. */
static void print_fail(fz_sink *s, const fz_record *r, int64_t hits)
{
	const char *msg = r->message;
	const char *nl = strchr(msg, '\n');
	char *repro = fz_repro(s->o.cfg, r->seed, "DIR");
	clear_line(s);
	printf("FAIL seed %llu (%d core%s) [%s]: %.*s\n  repro: %s\n",
	       (unsigned long long)r->seed, r->cores, r->cores == 1 ? "" : "s",
	       r->kind, (int)(nl ? nl - msg : (long)strlen(msg)), msg, repro);
	if (r->kept[0])
		printf("  kept: %s\n", r->kept);
	for (int i = 0; i < r->n_exec; i++) {
		const fz_exec *e = &r->exec[i];
		if (e->race && e->r.races_found > 0)
			printf("  races: %s run %lld found, %d logged\n",
			       e->mode, (long long)e->r.races_found,
			       e->r.n_races);
	}
	if (hits > 1)
		printf("  signature %s: the smallest of %lld hits so far\n",
		       r->signature, (long long)hits);
	fflush(stdout);
	free(repro);
}

/* Remove the case worker w kept at path: its signature keeps another. */
static void discard(fz_sink *s, int w, const char *path)
{
	fz_transport *t = s->o.transport;
	if (path && *path && w >= 0 && t && t->discard)
		t->discard(t, w, s->o.cfg->keep, path);
}

/*
** The kept case of si is now r's (w's), or r's is not needed: of the
** cases kept this session the smallest seed's stays (an earlier
** session's, which this one does not know, are not counted).
*/
static void keep_smallest(fz_sink *s, sig_info *si, const fz_record *r,
			  int w)
{
	if (!r->kept[0])
		return;
	if (si->kept && si->kept_seed <= r->seed) {
		discard(s, w, r->kept);
		return;
	}
	discard(s, si->kept_w, si->kept);
	free(si->kept);
	si->kept = lm_xstrdup(r->kept);
	si->kept_seed = r->seed;
	si->kept_w = w;
}

/* Count the failure under its signature; print it when it is news. */
static void count_failure(fz_sink *s, const fz_record *r, int w)
{
	sig_info *si = lm_strmap_lookup(&s->sigs, r->signature);
	int show = 0;
	if (!si) {
		si = lm_xcalloc(1, sizeof *si);
		si->sig = lm_xstrdup(r->signature);
		si->seed = r->seed;
		si->is_new = 1;
		lm_strmap_put(&s->sigs, si->sig, si);
		s->n_sigs++;
		s->n_new++;
		show = 1;
	} else if (r->seed < si->seed) {
		si->seed = r->seed;
		show = 1;
	}
	keep_smallest(s, si, r, w);
	si->hits++;
	if (show)
		print_fail(s, r, si->hits);
}

void fz_sink_take(fz_sink *s, const fz_record *r, const char *where, int w)
{
	lm_error err;
	s->done++;
	if (r->status == FZ_PASS)
		s->passed++;
	else if (r->status == FZ_FAIL)
		s->failed++;
	else
		s->errors++;
	check_origin(s, r, where);
	if (r->status != FZ_PASS)
		count_failure(s, r, w);
	if (!s->o.db)
		return;
	if (log_case(s, r, &err) != 0) {
		clear_line(s);
		fprintf(stderr, "lncsim: fuzz: seed %llu: %s (run not logged)\n",
			(unsigned long long)r->seed, err.msg);
		s->unlogged++;
		return;
	}
	lm_grow(&s->batch, &s->cap_batch, s->n_batch + 1, sizeof *s->batch);
	if (!s->n_batch)
		s->batch_t0 = lm_seconds();
	s->batch[s->n_batch++] = r->seed;
}

void fz_sink_lost(fz_sink *s, uint64_t seed, const char *why, int outcome,
		  const char *where)
{
	clear_line(s);
	if (outcome == FZ_LOST_REISSUE) {
		s->reissued++;
		fprintf(stderr, "lncsim: fuzz: seed %llu lost on %s: %s; it is "
			"handed out again\n", (unsigned long long)seed, where, why);
		lm_grow(&s->lost, &s->cap_lost, s->n_lost + 1, sizeof *s->lost);
		s->lost[s->n_lost].seed = seed;
		snprintf(s->lost[s->n_lost].why, sizeof s->lost[s->n_lost].why,
			 "%s: %s", where, why);
		s->n_lost++;
		return;
	}
	if (outcome == FZ_LOST_DROPPED) {
		s->dropped++;
		fprintf(stderr, "lncsim: fuzz: seed %llu lost on %s: %s (not "
			"run again: the campaign is stopping)\n",
			(unsigned long long)seed, where, why);
		return;
	}
	/* lost twice: recorded as an error of kind lost */
	const char *first = "";
	for (int i = 0; i < s->n_lost; i++)
		if (s->lost[i].seed == seed) {
			first = s->lost[i].why;
			break;
		}
	s->given_up++;
	fz_record r;
	fz_record_init(&r);
	r.seed = seed;
	r.cores = fz_case_cores(s->o.cfg, seed);
	r.status = FZ_ERROR;
	r.started = (int64_t)time(NULL);
	fz_record_set(&r.gen_options, s->gen_options);
	fz_record_set(&r.kind, "lost");
	char *msg = lm_xasprintf("lost twice: on %s, then on %s: %s", first,
				 where, why);
	fz_record_set(&r.message, msg);
	free(r.signature);
	r.signature = fz_signature("lost", why, NULL, -1, 0, 0);
	fz_sink_take(s, &r, where, -1);
	fz_record_free(&r);
	free(msg);
}

int fz_sink_flush(fz_sink *s, int force)
{
	lm_error err;
	if (!s->o.db || !ldb_batch_is_open(s->o.db))
		return 0;
	if (!force && s->n_batch < BATCH_RUNS &&
	    lm_seconds() - s->batch_t0 < BATCH_SECONDS)
		return 0;
	int rc = ldb_batch_commit(s->o.db, &err);
	if (rc) {
		clear_line(s);
		for (int i = 0; i < s->n_batch && i < NAMED_MAX; i++)
			fprintf(stderr, "lncsim: fuzz: seed %llu: %s (run not "
				"logged)\n", (unsigned long long)s->batch[i],
				err.msg);
		if (s->n_batch > NAMED_MAX)
			fprintf(stderr, "lncsim: fuzz: and %d more runs of that "
				"batch (not logged)\n", s->n_batch - NAMED_MAX);
		s->unlogged += (uint64_t)s->n_batch;
	}
	s->n_batch = 0;
	return rc ? -1 : 0;
}

uint64_t fz_sink_done(const fz_sink *s)
{
	return s->done;
}

uint64_t fz_sink_failed(const fz_sink *s)
{
	return s->failed + s->errors;
}

uint64_t fz_sink_unlogged(const fz_sink *s)
{
	return s->unlogged;
}

void fz_sink_progress(fz_sink *s, const fz_coord_stats *st, int force)
{
	double now = lm_seconds(), el = now - s->t0;
	double rate = el > 0 ? (double)s->done / el : 0;
	if (s->o.quiet)
		return;
	if (!s->o.tty) {
		/* a log (a batch job's output): a line every 50 cases, at
		** most one every 10 s, and the last */
		if ((s->done >= s->printed_at + 50 && now - s->drawn_at >= 10) ||
		    (force && s->done > s->printed_at)) {
			s->printed_at = s->done;
			s->drawn_at = now;
			if (s->o.total)
				fprintf(stderr, "fuzz: %llu/%llu cases, %llu "
					"failed, %.1f cases/s, ETA %.0fs\n",
					(unsigned long long)s->done,
					(unsigned long long)s->o.total,
					(unsigned long long)fz_sink_failed(s), rate,
					rate > 0 && s->o.total > s->done
					? (double)(s->o.total - s->done) / rate : 0);
			else
				fprintf(stderr, "fuzz: %llu cases, %llu failed, "
					"%.1f cases/s, %.0fs left\n",
					(unsigned long long)s->done,
					(unsigned long long)fz_sink_failed(s), rate,
					s->o.duration > el ? s->o.duration - el : 0);
		}
		return;
	}
	if (!force && now - s->drawn_at < 0.1)
		return;
	s->drawn_at = now;
	/* the bar: cases of a count, else time of a duration */
	double frac = 0, left = 0;
	int bounded = s->o.total != 0;
	uint64_t total = s->o.total;
	if (bounded) {
		frac = (double)s->done / (double)total;
		left = rate > 0 && total > s->done ? (double)(total - s->done) /
						     rate : 0;
	} else if (s->o.duration > 0) {
		frac = el / s->o.duration;
		left = s->o.duration - el;
	}
	if (frac > 1)
		frac = 1;
	if (left < 0)
		left = 0;
	char bar[31];
	int fill = (int)(frac * 30);
	for (int i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[30] = 0;
	if (bounded)
		fprintf(stderr, "\r[%s] %llu/%llu  %.1f cases/s  ETA %.0fs  "
			"failed %llu ", bar, (unsigned long long)s->done,
			(unsigned long long)total, rate, left,
			(unsigned long long)fz_sink_failed(s));
	else
		fprintf(stderr, "\r[%s] %llu  %.1f cases/s  %.0fs left  failed "
			"%llu ", bar, (unsigned long long)s->done, rate, left,
			(unsigned long long)fz_sink_failed(s));
	fflush(stderr);
	s->drawn = 1;
}

void fz_sink_summary(fz_sink *s, const fz_coord_stats *st, int workers,
		     const char *label, int interrupted, double cpu_seconds)
{
	double el = lm_seconds() - s->t0;
	unsigned long long done = s->done;
	clear_line(s);
	printf("fuzz: %llu case%s, %llu passed, %llu failed, %llu error%s in "
	       "%.2f s (%.1f cases/s, %d %s%s)\n", done, done == 1 ? "" : "s",
	       (unsigned long long)s->passed, (unsigned long long)s->failed,
	       (unsigned long long)s->errors, s->errors == 1 ? "" : "s", el,
	       el > 0 ? (double)done / el : 0.0, workers, label,
	       workers == 1 ? "" : "s");
	if (st->skipped)
		printf("fuzz: %llu seed%s already recorded in campaign %s: "
		       "skipped\n", (unsigned long long)st->skipped,
		       st->skipped == 1 ? "" : "s", s->o.campaign);
	if (s->reissued || s->given_up)
		printf("fuzz: %llu case%s lost with %s worker and handed out "
		       "again; %llu lost twice (recorded as errors)\n",
		       (unsigned long long)s->reissued,
		       s->reissued == 1 ? "" : "s",
		       s->reissued == 1 ? "its" : "their",
		       (unsigned long long)s->given_up);
	if (s->n_sigs) {
		printf("fuzz: %d failure signature%s (%d new)", s->n_sigs,
		       s->n_sigs == 1 ? "" : "s", s->n_new);
		if (s->o.db)
			printf(": lncsim db failures --db %s --campaign %s",
			       s->o.db_path, s->o.campaign);
		printf("\n");
	}
	uint64_t ran = st->results + s->given_up;
	if (interrupted && s->o.total && st->total > ran) {
		printf("fuzz: interrupted: %llu seed%s not run",
		       (unsigned long long)(st->total - ran),
		       st->total - ran == 1 ? "" : "s");
		if (s->o.db)
			printf("; continue with: lncsim fuzz --db %s --resume "
			       "--campaign %s", s->o.db_path, s->o.campaign);
		printf("\n");
	} else if (interrupted)
		printf("fuzz: interrupted\n");
	if (done)
		printf("fuzz: coordinator: %.1f us of CPU per result\n",
		       cpu_seconds / (double)done * 1e6);
	if (s->unlogged)
		printf("fuzz: %llu run%s not logged into %s: stopped launching "
		       "cases\n", (unsigned long long)s->unlogged,
		       s->unlogged == 1 ? "" : "s", s->o.db_path);
	fflush(stdout);
}

/*
** fuzz_mpi.c -- the MPI transport of a campaign: rank 0's side (a
** fz_transport over its own case servers and the other ranks) and a
** worker rank's relay (fuzz_mpi.h). Built with ./configure --with-mpi.
**
** Nobody blocks inside MPI: both sides probe (MPI_Iprobe) and sleep a
** little between probes when nothing came (20 us at first, then 1 ms
** polls of their case servers), so a rank waiting for work does not
** spin a core that another rank's case needs.
*/
#define _XOPEN_SOURCE 700
#include "common.h"
#include "fuzz_mpi.h"

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	TAG_READY = 1, TAG_RESULT, TAG_GONE, TAG_BEAT,
	TAG_WORK = 10, TAG_STOP, TAG_QUIT, TAG_DISCARD
};

/* How long MPI_Finalize may take before a rank leaves without it. */
#define FINALIZE_SECONDS 10

/* Probes without a message before the waits go from 20 us to 1 ms. */
#define SPIN_ROUNDS 10

/* The launcher (mpirun's daemon, srun's step daemon) that started this
** rank: when it is gone the job is over, whatever MPI says. */
static pid_t launcher;

static int orphaned(void)
{
	return getppid() != launcher;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* A short sleep between probes. */
static void nap(int idle)
{
	struct timespec ts = { 0, idle < SPIN_ROUNDS ? 20000L : 1000000L };
	nanosleep(&ts, NULL);
}

int fz_mpi_init(int *argc, char ***argv, int *rank, int *size,
		lm_error *err)
{
	int rc = MPI_Init(argc, argv);
	if (rc != MPI_SUCCESS)
		return lm_errc(err, LM_EINTERNAL, "fuzz", "MPI_Init",
			       "failed (error %d)", rc);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	launcher = getppid();
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

/* The status a rank whose MPI_Finalize does not return exits with. */
static volatile sig_atomic_t finalize_status;
/* A rank of the job was taken for dead (rank 0 knows; it says so in the
** QUIT it sends every other rank). */
static int rank_lost;

static void finalize_late(int sig)
{
	(void)sig;
	_exit(finalize_status);
}

void fz_mpi_finalize(int status)
{
	fflush(NULL);
	if (rank_lost) {
		/* MPI_Finalize is a fence over every rank of the job; with a
		** rank dead (killed, or its node gone) Open MPI 4 can wait in
		** it for ever though the job outlives the rank. Every live
		** rank is past its campaign (rank 0 sent QUIT last), so one
		** still in it after FINALIZE_SECONDS leaves */
		finalize_status = status;
		signal(SIGALRM, finalize_late);
		alarm(FINALIZE_SECONDS);
	}
	MPI_Finalize();
	alarm(0);
}

void fz_mpi_send_config(const fz_config *c)
{
	lm_buf b = LM_BUF_INIT;
	int n = 0;
	if (c) {
		fz_config_encode(c, &b);
		n = (int)b.size;
	}
	/* nonblocking on this side too: the collectives must match */
	MPI_Request rq;
	MPI_Ibcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	if (n) {
		MPI_Ibcast(b.ptr, n, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
	lm_buf_free(&b);
}

/*
** A broadcast from rank 0, waited for with naps: rank 0 may take a while
** (opening the database, reading a resumed campaign's seeds), and a
** blocking MPI_Bcast would spin meanwhile on a core rank 0 may need.
*/
static int bcast_nap(void *p, int n, MPI_Datatype t)
{
	MPI_Request rq;
	int done = 0, idle = 0;
	if (MPI_Ibcast(p, n, t, 0, MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
		return -1;
	while (!done) {
		if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
		if (!done) {
			if (orphaned())
				return -1;
			nap(idle < SPIN_ROUNDS ? idle++ : SPIN_ROUNDS);
		}
	}
	return 0;
}

int fz_mpi_recv_config(fz_config *c, lm_error *err)
{
	int n = 0;
	if (bcast_nap(&n, 1, MPI_INT) != 0)
		return lm_errc(err, LM_EINTERNAL, "fuzz", "MPI_Ibcast", "failed");
	if (n <= 0)
		return 1;
	unsigned char *p = lm_xmalloc((size_t)n);
	int rc = bcast_nap(p, n, MPI_BYTE);
	if (rc == 0)
		rc = fz_config_decode(p, (size_t)n, c, err);
	else
		rc = lm_errc(err, LM_EINTERNAL, "fuzz", "MPI_Ibcast", "failed");
	free(p);
	return rc;
}

/* ---- rank 0 ---------------------------------------------------------- */

typedef struct rank_state {
	int ready;                  /* READY came: its slots are announced */
	int released;               /* every slot let go (or QUIT sent) */
	int quiet;                  /* taken for dead (until it speaks) */
	double heard;               /* when its last message came */
} rank_state;

typedef struct mpi0 {
	fz_pool *pool;
	int j0, jobs, size;
	double lost_after;
	rank_state *ranks;          /* [size] (0 unused) */
	unsigned char *busy;        /* per remote worker: a case is out */
	unsigned char *out;         /* per remote worker: its last case may
				       still run there (busy, or taken for
				       lost with no answer since) */
	unsigned char *let_go;      /* per remote worker: STOP sent / gone */
	lm_buf *bufs;               /* the records of the last wait */
	int n_bufs;
	int announced;              /* the local slots were announced */
	int idle;
} mpi0;

/* Remote worker id of rank r's slot s, and back. */
static int wid(const mpi0 *m, int r, int s)
{
	return m->j0 + (r - 1) * m->jobs + s;
}

static void rank_slot(const mpi0 *m, int w, int *r, int *s)
{
	*r = 1 + (w - m->j0) / m->jobs;
	*s = (w - m->j0) % m->jobs;
}

/* A GONE event for remote worker w. */
static void gone_ev(mpi0 *m, int w, fz_event *e, const char *why)
{
	memset(e, 0, sizeof *e);
	e->kind = FZ_EV_GONE;
	e->worker = w;
	snprintf(e->why, sizeof e->why, "%s", why);
	m->busy[w - m->j0] = 0;
}

/* One message from a worker rank into events; returns how many. */
static int take_msg(mpi0 *m, MPI_Status *st, fz_event *ev, int max)
{
	int r = st->MPI_SOURCE, n = 0, k = 0;
	MPI_Get_count(st, MPI_BYTE, &n);
	lm_buf *b = &m->bufs[m->n_bufs];
	lm_buf_grow(b, (size_t)n + 1);
	MPI_Recv(b->ptr, n, MPI_BYTE, r, st->MPI_TAG, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	b->size = (size_t)n;
	if (r < 1 || r >= m->size)
		return 0;
	rank_state *rs = &m->ranks[r];
	int was_quiet = rs->quiet;
	rs->heard = lm_seconds();
	rs->quiet = 0;
	const unsigned char *p = (const unsigned char *)b->ptr;
	if (was_quiet && rs->ready)
		/* back from the dead: its free slots take work again (the
		** one this message is about follows from the message) */
		for (int s = 0; s < m->jobs && k < max; s++) {
			int w = wid(m, r, s);
			if (m->busy[w - m->j0] || m->out[w - m->j0] ||
			    m->let_go[w - m->j0])
				continue;
			memset(&ev[k], 0, sizeof ev[k]);
			ev[k].kind = FZ_EV_READY;
			ev[k++].worker = w;
		}
	if (st->MPI_TAG == TAG_READY && !rs->ready) {
		rs->ready = 1;
		for (int s = 0; s < m->jobs && k < max; s++) {
			memset(&ev[k], 0, sizeof ev[k]);
			ev[k].kind = FZ_EV_READY;
			ev[k++].worker = wid(m, r, s);
		}
		return k;
	}
	if (n < 4 || (st->MPI_TAG != TAG_RESULT && st->MPI_TAG != TAG_GONE))
		return k;
	uint32_t s = get32(p);
	if (s >= (uint32_t)m->jobs)
		return k;
	int w = wid(m, r, (int)s);
	if (st->MPI_TAG == TAG_GONE) {
		char why[200];
		snprintf(why, sizeof why, "rank %d: %.*s", r, n - 4,
			 (const char *)p + 4);
		gone_ev(m, w, &ev[k], why);
		m->let_go[w - m->j0] = 1;
		m->out[w - m->j0] = 0;
		return k + 1;
	}
	m->n_bufs++;
	memset(&ev[k], 0, sizeof ev[k]);
	ev[k].kind = FZ_EV_RESULT;
	ev[k].worker = w;
	ev[k].data = p + 4;
	ev[k].len = (size_t)n - 4;
	/* an answer frees the slot, a late one too (the driver records
	   it as late and hands the slot work) */
	m->busy[w - m->j0] = 0;
	m->out[w - m->j0] = 0;
	return k + 1;
}

/* Ranks silent too long with a case out: their cases are lost. */
static int check_silence(mpi0 *m, fz_event *ev, int max)
{
	double now = lm_seconds();
	int k = 0;
	for (int r = 1; r < m->size; r++) {
		rank_state *rs = &m->ranks[r];
		if (rs->quiet || now - rs->heard <= m->lost_after)
			continue;
		int any = 0;
		for (int s = 0; s < m->jobs; s++)
			any |= m->busy[wid(m, r, s) - m->j0] |
			       m->out[wid(m, r, s) - m->j0];
		if (!any)
			continue;
		rs->quiet = 1;
		char why[200];
		snprintf(why, sizeof why, "rank %d sent nothing for %.0f s (taken "
			 "for dead)", r, now - rs->heard);
		/* every slot: a free one must not be handed work either */
		for (int s = 0; s < m->jobs && k < max; s++) {
			int w = wid(m, r, s);
			if (!m->let_go[w - m->j0])
				gone_ev(m, w, &ev[k++], why);
		}
	}
	return k;
}

static int mpi0_wait(fz_transport *t, double timeout, fz_event *ev, int max)
{
	mpi0 *m = t->impl;
	double until = lm_seconds() + timeout;
	int k = 0;
	m->n_bufs = 0;
	if (!m->announced) {
		m->announced = 1;
		for (int i = 0; i < m->j0 && k < max; i++) {
			memset(&ev[k], 0, sizeof ev[k]);
			ev[k].kind = FZ_EV_READY;
			ev[k++].worker = i;
		}
	}
	for (;;) {
		fz_pool_ev pe[64];
		int n = m->j0 ? fz_pool_wait(m->pool, 0, pe, max - k < 64 ?
					     max - k : 64) : 0;
		for (int i = 0; i < n; i++, k++) {
			memset(&ev[k], 0, sizeof ev[k]);
			ev[k].worker = pe[i].slot;
			if (pe[i].gone) {
				ev[k].kind = FZ_EV_GONE;
				snprintf(ev[k].why, sizeof ev[k].why, "%s",
					 pe[i].why);
			} else {
				ev[k].kind = FZ_EV_RESULT;
				ev[k].data = pe[i].data;
				ev[k].len = pe[i].len;
			}
		}
		/* room for a READY's events, whatever comes */
		while (max - k > m->jobs && m->size > 1) {
			int flag = 0;
			MPI_Status st;
			if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
				       &flag, &st) != MPI_SUCCESS || !flag)
				break;
			k += take_msg(m, &st, ev + k, max - k);
		}
		k += check_silence(m, ev + k, max - k);
		/* the launcher gone (killed, or torn down without a word to
		** this rank): the job is over, as on SIGTERM */
		if (!k && orphaned())
			fz_sigterm_seen = 1;
		if (k || lm_seconds() >= until || fz_sigint_count ||
		    fz_sigterm_seen)
			break;
		if (m->size == 1) {
			/* no other rank: the servers' sockets are all there is */
			int ms = (int)((until - lm_seconds()) * 1000) + 1;
			fz_pool_wait(m->pool, ms > 0 ? ms : 0, pe, 0);
		} else if (m->idle < SPIN_ROUNDS || !m->j0)
			nap(m->idle);
		else
			fz_pool_wait(m->pool, 1, pe, 0);
		m->idle++;
	}
	if (k)
		m->idle = 0;
	return k;
}

static void mpi0_assign(fz_transport *t, int w, uint64_t seed)
{
	mpi0 *m = t->impl;
	if (w < m->j0) {
		/* a server gone shows as such at the next wait */
		fz_pool_run(m->pool, w, seed);
		return;
	}
	int r, s;
	unsigned char msg[12];
	rank_slot(m, w, &r, &s);
	put32(msg, (uint32_t)s);
	for (int i = 0; i < 8; i++)
		msg[4 + i] = (unsigned char)(seed >> (8 * i));
	m->busy[w - m->j0] = 1;
	m->out[w - m->j0] = 1;
	/* its silence counts from here (it may have waited for work) */
	m->ranks[r].heard = lm_seconds();
	MPI_Send(msg, 12, MPI_BYTE, r, TAG_WORK, MPI_COMM_WORLD);
}

/* Whether every slot of rank r is let go. */
static int all_let_go(const mpi0 *m, int r)
{
	for (int s = 0; s < m->jobs; s++)
		if (!m->let_go[wid(m, r, s) - m->j0])
			return 0;
	return 1;
}

static void mpi0_release(fz_transport *t, int w)
{
	mpi0 *m = t->impl;
	if (w < m->j0) {
		fz_pool_quit(m->pool, w);
		return;
	}
	int r, s;
	unsigned char msg[4];
	rank_slot(m, w, &r, &s);
	if (m->let_go[w - m->j0])
		return;
	m->let_go[w - m->j0] = 1;
	put32(msg, (uint32_t)s);
	MPI_Send(msg, 4, MPI_BYTE, r, TAG_STOP, MPI_COMM_WORLD);
	if (all_let_go(m, r))
		m->ranks[r].released = 1;
}

/* A kept case to remove: rank 0's own, or the rank's (its relay does,
** beneath its --keep-failures directory as it sees it). */
static void mpi0_discard(fz_transport *t, int w, const char *keep,
			 const char *path)
{
	mpi0 *m = t->impl;
	int r, s;
	if (w < m->j0) {
		fz_discard_here(t, w, keep, path);
		return;
	}
	rank_slot(m, w, &r, &s);
	if (m->ranks[r].released || m->ranks[r].quiet)
		return;      /* its relay is gone, or may be: the case stays */
	size_t n = strlen(path);
	unsigned char *msg = lm_xmalloc(n + 4);
	put32(msg, (uint32_t)s);
	memcpy(msg + 4, path, n);
	MPI_Send(msg, (int)(n + 4), MPI_BYTE, r, TAG_DISCARD, MPI_COMM_WORLD);
	free(msg);
}

static int mpi0_live(fz_transport *t)
{
	mpi0 *m = t->impl;
	int k = fz_pool_live(m->pool);
	for (int r = 1; r < m->size; r++) {
		if (m->ranks[r].quiet)
			continue;
		for (int s = 0; s < m->jobs; s++)
			k += !m->let_go[wid(m, r, s) - m->j0];
	}
	return k;
}

static void mpi0_where(fz_transport *t, int w, char *buf, size_t n)
{
	mpi0 *m = t->impl;
	int r, s;
	if (w < m->j0) {
		snprintf(buf, n, m->j0 > 1 ? "rank 0 job %d" : "rank 0", w + 1);
		return;
	}
	rank_slot(m, w, &r, &s);
	if (m->jobs > 1)
		snprintf(buf, n, "rank %d job %d", r, s + 1);
	else
		snprintf(buf, n, "rank %d", r);
}

void fz_mpi_transport(fz_transport *t, fz_pool *pool, int size, int jobs,
		      double lost_after)
{
	mpi0 *m = lm_xcalloc(1, sizeof *m);
	int remote = (size - 1) * jobs;
	m->pool = pool;
	m->j0 = fz_pool_size(pool);
	m->jobs = jobs;
	m->size = size;
	m->lost_after = lost_after;
	m->ranks = lm_xcalloc((size_t)size, sizeof *m->ranks);
	m->busy = lm_xcalloc((size_t)remote + 1, 1);
	m->let_go = lm_xcalloc((size_t)remote + 1, 1);
	m->out = lm_xcalloc((size_t)remote + 1, 1);
	m->bufs = lm_xcalloc(512, sizeof *m->bufs);
	memset(t, 0, sizeof *t);
	t->n_workers = m->j0 + remote;
	t->wait = mpi0_wait;
	t->assign = mpi0_assign;
	t->release = mpi0_release;
	t->live = mpi0_live;
	t->where = mpi0_where;
	t->discard = mpi0_discard;
	t->impl = m;
}

/*
** QUIT to every other rank, the last word of the campaign: a worker rank
** leaves only on it (so none is in MPI_Finalize while another still
** runs a case). Its byte says whether a rank was taken for dead. A rank
** taken for dead gets it without waiting for it to be taken.
*/
static void send_quits(mpi0 *m)
{
	unsigned char lost = 0;
	for (int r = 1; r < m->size; r++)
		lost |= m->ranks[r].quiet != 0;
	rank_lost = lost;
	for (int r = 1; r < m->size; r++) {
		MPI_Request rq;
		int done = 0;
		if (MPI_Isend(&lost, 1, MPI_BYTE, r, TAG_QUIT, MPI_COMM_WORLD,
			      &rq) != MPI_SUCCESS)
			continue;
		for (int i = 0; !done && (!m->ranks[r].quiet || i < 1000); i++) {
			if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
				break;
			if (!done)
				nap(SPIN_ROUNDS);
		}
		if (!done)
			MPI_Request_free(&rq);
	}
}

void fz_mpi_transport_free(fz_transport *t)
{
	mpi0 *m = t->impl;
	if (!m)
		return;
	send_quits(m);
	for (int i = 0; i < 512; i++)
		lm_buf_free(&m->bufs[i]);
	free(m->bufs);
	free(m->ranks);
	free(m->busy);
	free(m->out);
	free(m->let_go);
	free(m);
	t->impl = NULL;
}

/* ---- a worker rank --------------------------------------------------- */

/* Send to rank 0; -1 when MPI says no. */
static int send0(int tag, const void *p, size_t n)
{
	return MPI_Send(p, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD) ==
	       MPI_SUCCESS ? 0 : -1;
}

/* A slot's message with its index in front. */
static int send_slot(int tag, int slot, const void *p, size_t n)
{
	unsigned char *b = lm_xmalloc(n + 4);
	put32(b, (uint32_t)slot);
	if (n)
		memcpy(b + 4, p, n);
	int rc = send0(tag, b, n + 4);
	free(b);
	return rc;
}

int fz_mpi_worker(fz_pool *pool, double lost_after, const char *keep)
{
	int j = fz_pool_size(pool), idle = 0, rc = 0, quit = 0;
	unsigned char *busy = lm_xcalloc((size_t)j + 1, 1);
	unsigned char *done = lm_xcalloc((size_t)j + 1, 1);
	double beat = lost_after / 4 > 0.05 ? lost_after / 4 : 0.05;
	double sent = lm_seconds();
	unsigned char hello[4];
	lm_buf in = LM_BUF_INIT;
	put32(hello, (uint32_t)j);
	if (send0(TAG_READY, hello, 4) != 0)
		rc = -1;
	for (;;) {
		int left = 0, got = 0, any = 0;
		for (int s = 0; s < j; s++) {
			left += !done[s];
			any |= busy[s];
		}
		/* every slot let go: only QUIT (or the job's end) is left */
		if (rc || quit || orphaned())
			break;
		/* what rank 0 says */
		for (;;) {
			int flag = 0, n = 0;
			MPI_Status st;
			if (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) !=
			    MPI_SUCCESS) {
				rc = -1;
				break;
			}
			if (!flag)
				break;
			MPI_Get_count(&st, MPI_BYTE, &n);
			lm_buf_grow(&in, (size_t)n + 1);
			MPI_Recv(in.ptr, n, MPI_BYTE, 0, st.MPI_TAG,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			const unsigned char *p = (const unsigned char *)in.ptr;
			got = 1;
			if (st.MPI_TAG == TAG_QUIT) {
				quit = 1;
				rank_lost = n >= 1 && p[0] != 0;
				break;
			}
			if (n < 4 || get32(p) >= (uint32_t)j)
				continue;
			int s = (int)get32(p);
			if (st.MPI_TAG == TAG_DISCARD) {
				in.ptr[n] = 0;
				fz_discard_here(NULL, s, keep, in.ptr + 4);
				continue;
			}
			if (st.MPI_TAG == TAG_STOP) {
				fz_pool_quit(pool, s);
				done[s] = 1;
			} else if (st.MPI_TAG == TAG_WORK && n == 12) {
				uint64_t seed = 0;
				for (int i = 0; i < 8; i++)
					seed |= (uint64_t)p[4 + i] << (8 * i);
				busy[s] = 1;
				if (fz_pool_run(pool, s, seed) != 0) {
					static const char why[] = "its case server "
								  "is gone";
					send_slot(TAG_GONE, s, why, sizeof why - 1);
					busy[s] = 0;
					done[s] = 1;
				}
			}
		}
		if (rc || quit)
			break;
		/* what the servers say */
		fz_pool_ev pe[64];
		int n = fz_pool_wait(pool, idle < SPIN_ROUNDS ? 0 : 1, pe, 64);
		for (int i = 0; i < n; i++) {
			int s = pe[i].slot;
			got = 1;
			busy[s] = 0;
			if (pe[i].gone) {
				done[s] = 1;
				rc |= send_slot(TAG_GONE, s, pe[i].why,
						strlen(pe[i].why));
			} else
				rc |= send_slot(TAG_RESULT, s, pe[i].data,
						pe[i].len);
			sent = lm_seconds();
		}
		if (any && lm_seconds() - sent >= beat) {
			rc |= send0(TAG_BEAT, NULL, 0);
			sent = lm_seconds();
		}
		if (got)
			idle = 0;
		else if (idle++ < SPIN_ROUNDS)
			nap(idle);
		else if (!left)
			nap(SPIN_ROUNDS);
	}
	lm_buf_free(&in);
	free(busy);
	free(done);
	return rc;
}

/*
** fuzz_pool.c -- case servers: forked once, each runs cases one at a
** time, every case in a process of its own (fuzz_pool.h).
*/
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include "common.h"
#include "fuzz_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* The largest frame accepted (a large case's matmul records fit). */
#define FRAME_MAX (256u << 20)

/* ---- frames ------------------------------------------------------------ */

/* Write all n bytes. */
static int write_all(int fd, const void *p, size_t n)
{
	const char *q = p;
	while (n) {
		ssize_t k = write(fd, q, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		q += k;
		n -= (size_t)k;
	}
	return 0;
}

int fz_frame_write(int fd, int type, const void *p, size_t n)
{
	unsigned char h[5];
	h[0] = (unsigned char)type;
	for (int i = 0; i < 4; i++)
		h[1 + i] = (unsigned char)((uint32_t)n >> (8 * i));
	if (write_all(fd, h, 5) != 0 || (n && write_all(fd, p, n) != 0))
		return -1;
	return 0;
}

/* Read exactly n bytes: 1, 0 at end of file before any, -1. */
static int read_all(int fd, void *p, size_t n)
{
	char *q = p;
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, q + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			if (got == 0)
				return 0;
			errno = EPIPE;
			return -1;
		}
		got += (size_t)k;
	}
	return 1;
}

/* The length in a frame header. */
static uint32_t frame_len(const unsigned char *h)
{
	return (uint32_t)h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16 |
	       (uint32_t)h[4] << 24;
}

int fz_frame_read(int fd, int *type, lm_buf *b)
{
	unsigned char h[5];
	b->size = 0;
	int rc = read_all(fd, h, 5);
	if (rc <= 0)
		return rc;
	uint32_t n = frame_len(h);
	if (n > FRAME_MAX) {
		errno = EPROTO;
		return -1;
	}
	lm_buf_grow(b, n + 1);
	if (n && read_all(fd, b->ptr, n) != 1)
		return -1;
	b->size = n;
	b->ptr[n] = 0;
	*type = h[0];
	return 1;
}

/* ---- a server ---------------------------------------------------------- */

/* The record of a case whose process died without a result. */
static void send_lost(int fd, const fz_config *c, uint64_t seed, int status,
		      const char *opts)
{
	fz_record r;
	char msg[200];
	lm_buf b = LM_BUF_INIT;
	if (WIFSIGNALED(status))
		snprintf(msg, sizeof msg, "the case's process was killed by "
			 "signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		snprintf(msg, sizeof msg, "the case's process exited with "
			 "status %d and no result", WEXITSTATUS(status));
	else
		snprintf(msg, sizeof msg, "the case's process could not be "
			 "started: %s", strerror(status));
	fz_record_init(&r);
	r.seed = seed;
	r.cores = fz_case_cores(c, seed);
	r.status = FZ_LOST;
	r.started = (int64_t)time(NULL);
	fz_record_set(&r.kind, "lost");
	fz_record_set(&r.message, msg);
	fz_record_set(&r.gen_options, opts);
	fz_record_encode(&r, &b);
	fz_frame_write(fd, FZ_MSG_RESULT, b.ptr, b.size);
	lm_buf_free(&b);
	fz_record_free(&r);
}

/*
** The record of a case killed for running past --case-timeout: a
** failure (a case that does not end is a finding, not a lost worker),
** with a signature of its own.
*/
static void send_timeout(int fd, const fz_config *c, uint64_t seed,
			 const char *opts)
{
	fz_record r;
	char msg[200];
	lm_buf b = LM_BUF_INIT;
	snprintf(msg, sizeof msg, "the case ran longer than --case-timeout "
		 "%g s and was killed", c->case_timeout_ms / 1000.0);
	fz_record_init(&r);
	r.seed = seed;
	r.cores = fz_case_cores(c, seed);
	r.status = FZ_FAIL;
	r.started = (int64_t)time(NULL);
	r.wall = c->case_timeout_ms / 1000.0;
	fz_record_set(&r.kind, "timeout");
	fz_record_set(&r.message, msg);
	fz_record_set(&r.gen_options, opts);
	free(r.signature);
	r.signature = fz_signature("timeout", msg, NULL, -1, 0, 0);
	fz_record_encode(&r, &b);
	fz_frame_write(fd, FZ_MSG_RESULT, b.ptr, b.size);
	lm_buf_free(&b);
	fz_record_free(&r);
}

/* Remove the case directory made beneath c->keep (NULL: none); free. */
static void drop_dir(const fz_config *c, char *made)
{
	if (!made)
		return;
	lm_error err;
	char *dir = lm_path_join(c->keep, made);
	fz_kept_remove(c->keep, dir, &err);
	free(dir);
	free(made);
}

/* Case seed in a process of its own; its record (or why it has none)
** to fd. Returns -1 when the pool went away meanwhile. */
static int serve_case(int fd, const fz_config *c, uint64_t seed,
		      const char *opts)
{
	int p[2];
	char *made = NULL;
	lm_error derr;
	/* the kept case's directory, made here: if the case is killed, this
	   process knows what it leaves (cannot be made: the case says why) */
	if (c->keep[0] && fz_case_dir(c, seed, &made, &derr) != 0)
		made = NULL;
	if (pipe(p) != 0) {
		send_lost(fd, c, seed, errno, opts);
		drop_dir(c, made);
		return 0;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		send_lost(fd, c, seed, e, opts);
		drop_dir(c, made);
		return 0;
	}
	if (pid == 0) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
		close(p[0]);
		close(fd);
		fz_record r;
		lm_buf b = LM_BUF_INIT;
		fz_case_run(c, seed, &r, made);
		fz_record_encode(&r, &b);
		int rc = write_all(p[1], b.ptr, b.size);
		_exit(rc == 0 ? 0 : 3);
	}
	close(p[1]);
	lm_buf out = LM_BUF_INIT;
	struct pollfd pf[2] = { { p[0], POLLIN, 0 }, { fd, POLLIN, 0 } };
	int open_pipe = 1, gone = 0, timed_out = 0;
	double until = lm_seconds() + c->case_timeout_ms / 1000.0;
	while (open_pipe) {
		int ms = -1;
		if (c->case_timeout_ms > 0) {
			double left = until - lm_seconds();
			if (left <= 0) {
				timed_out = 1;
				kill(pid, SIGKILL);
				break;
			}
			ms = (int)(left * 1000) + 1;
		}
		int ready = poll(pf, 2, ms);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (ready == 0)
			continue;
		if (pf[1].revents) {
			/* nothing comes from the pool while a case runs: this
			** is its end */
			gone = 1;
			kill(pid, SIGKILL);
			break;
		}
		if (pf[0].revents) {
			char tmp[65536];
			ssize_t k = read(p[0], tmp, sizeof tmp);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				open_pipe = 0;
			else
				lm_buf_put(&out, tmp, (size_t)k);
		}
	}
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int ok = !timed_out && !gone && WIFEXITED(st) &&
		 WEXITSTATUS(st) == 0 && out.size > 5;
	/* killed before it had all it keeps: nothing is left half written
	   (the database keeps its repro line) */
	if (ok)
		free(made);
	else
		drop_dir(c, made);
	if (timed_out)
		send_timeout(fd, c, seed, opts);
	else if (ok)
		fz_frame_write(fd, FZ_MSG_RESULT, out.ptr, out.size);
	else if (!gone)
		send_lost(fd, c, seed, st, opts);
	lm_buf_free(&out);
	return gone ? -1 : 0;
}

/* A pass, at once: what --null-cases measures the coordinator with. */
static void serve_null(int fd, const fz_config *c, uint64_t seed,
		       const char *opts)
{
	fz_record r;
	lm_buf b = LM_BUF_INIT;
	fz_record_init(&r);
	r.seed = seed;
	r.cores = fz_case_cores(c, seed);
	r.started = (int64_t)time(NULL);
	fz_record_set(&r.gen_options, opts);
	fz_record_encode(&r, &b);
	fz_frame_write(fd, FZ_MSG_RESULT, b.ptr, b.size);
	lm_buf_free(&b);
	fz_record_free(&r);
}

/* The server's life: options, then cases until QUIT or the pool's end. */
static void server_main(int fd)
{
	fz_config c = FZ_CONFIG_INIT;
	char *opts = NULL;
	int configured = 0, type;
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* MPICH's mpiexec, told to keep a job whose rank died, says so with
	** SIGUSR1 to each rank's process group: a notice for the MPI library
	** in the rank, which would end the servers and their cases */
	signal(SIGUSR1, SIG_IGN);
	while (fz_frame_read(fd, &type, &b) == 1) {
		if (type == FZ_MSG_QUIT)
			break;
		if (type == FZ_MSG_CONFIG) {
			if (fz_config_decode(b.ptr, b.size, &c, &err) != 0)
				break;
			/* the kept cases' directory, on this host too */
			if (c.keep[0])
				lm_mkdirs(c.keep, &err);
			free(opts);
			opts = fz_gen_options(&c);
			configured = 1;
			continue;
		}
		if (type != FZ_MSG_CASE || b.size != 8 || !configured)
			break;
		uint64_t seed = 0;
		for (int i = 0; i < 8; i++)
			seed |= (uint64_t)(unsigned char)b.ptr[i] << (8 * i);
		if (c.null_cases)
			serve_null(fd, &c, seed, opts);
		else if (serve_case(fd, &c, seed, opts) != 0)
			break;
	}
	free(opts);
	lm_buf_free(&b);
}

/* ---- the pool ---------------------------------------------------------- */

typedef struct slot {
	pid_t pid;
	int fd;             /* -1: gone */
	lm_buf in;          /* bytes of the frame being read */
	lm_buf frame;       /* the last whole frame's payload */
} slot;

struct fz_pool {
	int n;
	slot *s;
	struct pollfd *pf;  /* fz_pool_wait's, one per slot */
	int *idx;
};

int fz_pool_start(fz_pool **out, int n, lm_error *err)
{
	fz_pool *p = lm_xcalloc(1, sizeof *p);
	p->n = n;
	p->s = n ? lm_xcalloc((size_t)n, sizeof *p->s) : NULL;
	p->pf = lm_xcalloc((size_t)n + 1, sizeof *p->pf);
	p->idx = lm_xcalloc((size_t)n + 1, sizeof *p->idx);
	for (int i = 0; i < n; i++)
		p->s[i].fd = -1;
	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < n; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
			fz_pool_free(p);
			return lm_errc(err, LM_EINTERNAL, "fuzz", "socketpair",
				       "%s", strerror(errno));
		}
		pid_t pid = fork();
		if (pid < 0) {
			int e = errno;
			close(sv[0]);
			close(sv[1]);
			fz_pool_free(p);
			return lm_errc(err, LM_EINTERNAL, "fuzz", "fork", "%s",
				       strerror(e));
		}
		if (pid == 0) {
			/* the other servers' sockets are not this one's */
			for (int k = 0; k < i; k++)
				close(p->s[k].fd);
			close(sv[0]);
			server_main(sv[1]);
			_exit(0);
		}
		close(sv[1]);
		p->s[i].pid = pid;
		p->s[i].fd = sv[0];
	}
	*out = p;
	return 0;
}

int fz_pool_size(const fz_pool *p)
{
	return p->n;
}

int fz_pool_live(const fz_pool *p)
{
	int k = 0;
	for (int i = 0; i < p->n; i++)
		k += p->s[i].fd >= 0;
	return k;
}

/* The server of slot i is gone: close its end. */
static void drop(fz_pool *p, int i)
{
	if (p->s[i].fd >= 0)
		close(p->s[i].fd);
	p->s[i].fd = -1;
}

int fz_pool_configure(fz_pool *p, const fz_config *c, lm_error *err)
{
	lm_buf b = LM_BUF_INIT;
	fz_config_encode(c, &b);
	for (int i = 0; i < p->n; i++)
		if (p->s[i].fd >= 0 &&
		    fz_frame_write(p->s[i].fd, FZ_MSG_CONFIG, b.ptr, b.size)) {
			lm_buf_free(&b);
			return lm_errc(err, LM_EINTERNAL, "fuzz", "a case server",
				       "%s", strerror(errno));
		}
	lm_buf_free(&b);
	return 0;
}

int fz_pool_run(fz_pool *p, int i, uint64_t seed)
{
	unsigned char s[8];
	for (int k = 0; k < 8; k++)
		s[k] = (unsigned char)(seed >> (8 * k));
	if (p->s[i].fd < 0 || fz_frame_write(p->s[i].fd, FZ_MSG_CASE, s, 8)) {
		drop(p, i);
		return -1;
	}
	return 0;
}

void fz_pool_quit(fz_pool *p, int i)
{
	if (p->s[i].fd >= 0)
		fz_frame_write(p->s[i].fd, FZ_MSG_QUIT, NULL, 0);
	drop(p, i);
}

/*
** Read what slot i has: 1 a whole frame (in s->frame), 0 not yet, -1
** the server is gone.
*/
static int take_bytes(slot *s)
{
	char tmp[65536];
	ssize_t k = read(s->fd, tmp, sizeof tmp);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (k <= 0)
		return -1;
	lm_buf_put(&s->in, tmp, (size_t)k);
	if (s->in.size < 5)
		return 0;
	const unsigned char *h = (const unsigned char *)s->in.ptr;
	uint32_t n = frame_len(h);
	if (n > FRAME_MAX || h[0] != FZ_MSG_RESULT)
		return -1;
	if (s->in.size < 5 + (size_t)n)
		return 0;
	if (s->in.size > 5 + (size_t)n)
		return -1;          /* one case at a time: one frame */
	s->frame.size = 0;
	lm_buf_put(&s->frame, s->in.ptr + 5, n);
	s->in.size = 0;
	return 1;
}

int fz_pool_wait(fz_pool *p, int timeout_ms, fz_pool_ev *ev, int max)
{
	struct pollfd *pf = p->pf;
	int *idx = p->idx, m = 0, k = 0;
	for (int i = 0; i < p->n; i++)
		if (p->s[i].fd >= 0) {
			pf[m].fd = p->s[i].fd;
			pf[m].events = POLLIN;
			idx[m++] = i;
		}
	if (m && poll(pf, (nfds_t)m, timeout_ms) > 0)
		for (int j = 0; j < m && k < max; j++) {
			if (!pf[j].revents)
				continue;
			slot *s = &p->s[idx[j]];
			int rc = take_bytes(s);
			if (rc == 0)
				continue;
			memset(&ev[k], 0, sizeof ev[k]);
			ev[k].slot = idx[j];
			if (rc < 0) {
				int st = 0;
				ev[k].gone = 1;
				snprintf(ev[k].why, sizeof ev[k].why, "its case "
					 "server (pid %ld) is gone",
					 (long)s->pid);
				drop(p, idx[j]);
				if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
					if (WIFSIGNALED(st))
						snprintf(ev[k].why, sizeof ev[k].why,
							 "its case server (pid %ld) "
							 "was killed by signal %d",
							 (long)s->pid, WTERMSIG(st));
					s->pid = 0;
				}
			} else {
				ev[k].data = (const unsigned char *)s->frame.ptr;
				ev[k].len = s->frame.size;
			}
			k++;
		}
	else if (!m && timeout_ms != 0) {
		/* nothing to wait on: sleep the time out (a signal ends it) */
		struct timespec ts = { timeout_ms / 1000,
				       (long)(timeout_ms % 1000) * 1000000L };
		if (timeout_ms > 0)
			nanosleep(&ts, NULL);
	}
	return k;
}

/* Reap the servers: a short grace, then SIGKILL. */
static void reap(fz_pool *p, int grace_ms)
{
	double until = lm_seconds() + grace_ms / 1000.0;
	for (int i = 0; i < p->n; i++) {
		slot *s = &p->s[i];
		while (s->pid > 0) {
			int st;
			pid_t r = waitpid(s->pid, &st, WNOHANG);
			if (r == s->pid || (r < 0 && errno != EINTR)) {
				s->pid = 0;
				break;
			}
			if (lm_seconds() >= until) {
				kill(s->pid, SIGKILL);
				while (waitpid(s->pid, &st, 0) < 0 &&
				       errno == EINTR)
					;
				s->pid = 0;
				break;
			}
			struct timespec ts = { 0, 2000000L };
			nanosleep(&ts, NULL);
		}
	}
}

void fz_pool_kill(fz_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		if (p->s[i].pid > 0)
			kill(p->s[i].pid, SIGKILL);
		drop(p, i);
	}
	reap(p, 0);
}

void fz_pool_free(fz_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++)
		fz_pool_quit(p, i);
	reap(p, 5000);
	for (int i = 0; i < p->n; i++) {
		lm_buf_free(&p->s[i].in);
		lm_buf_free(&p->s[i].frame);
	}
	free(p->s);
	free(p->pf);
	free(p->idx);
	free(p);
}

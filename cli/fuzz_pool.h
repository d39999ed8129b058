/*
** fuzz_pool.h -- the processes that run the cases of a host: a pool of
** case servers, forked once. A server takes the campaign's options, then
** seeds one at a time; each case runs in a process the server forks for
** it (a case that crashes takes nothing else down) and comes back as a
** result record, or as a record of status FZ_LOST saying how the case's
** process died. A server holds no database and no MPI state: the pool is
** forked before MPI starts.
**
** Messages both ways are frames: a type byte, a 32-bit length (little
** endian) and that many bytes.
*/
#ifndef LNCSIM_FUZZ_POOL_H
#define LNCSIM_FUZZ_POOL_H

#include "common.h"
#include "fuzz.h"

/* Frame types. */
enum {
	FZ_MSG_CONFIG = 1,  /* to a server: fz_config_encode bytes */
	FZ_MSG_CASE,        /* to a server: the seed, 8 bytes */
	FZ_MSG_QUIT,        /* to a server: exit */
	FZ_MSG_RESULT       /* from a server: fz_record_encode bytes */
};

/* Write one frame (blocking; EINTR retried). 0 or -1 (errno set). */
int fz_frame_write(int fd, int type, const void *p, size_t n);
/*
** Read one whole frame (blocking): *type, its payload into b (reset
** first). 1 a frame, 0 end of file before one began, -1 error or a frame
** cut short (errno set; EPROTO for a bad length).
*/
int fz_frame_read(int fd, int *type, lm_buf *b);

typedef struct fz_pool fz_pool;

/*
** Fork n servers (n >= 0). They wait for fz_pool_configure. SIGINT is
** ignored in them and in the cases (an interrupted campaign finishes the
** cases that run); a server whose pool goes away exits and kills its
** case.
*/
int fz_pool_start(fz_pool **out, int n, lm_error *err);
int fz_pool_size(const fz_pool *p);
/* Send the campaign's options to every server. */
int fz_pool_configure(fz_pool *p, const fz_config *c, lm_error *err);
/* Start case seed on server slot (which has none). 0 or -1: the server is
** gone. */
int fz_pool_run(fz_pool *p, int slot, uint64_t seed);
/* Let server slot go (it exits); its slot is gone from here on. */
void fz_pool_quit(fz_pool *p, int slot);

/* What fz_pool_wait reports of one slot. */
typedef struct fz_pool_ev {
	int slot;
	int gone;                 /* the server died (why) */
	const unsigned char *data;/* else a result record, valid until the
				     next fz_pool_wait */
	size_t len;
	char why[160];
} fz_pool_ev;

/*
** Wait up to timeout_ms (-1: no limit, 0: do not wait) for results:
** fills up to max events, returns how many (0: none in time or
** interrupted by a signal).
*/
int fz_pool_wait(fz_pool *p, int timeout_ms, fz_pool_ev *ev, int max);
/* Servers not gone. */
int fz_pool_live(const fz_pool *p);
/* Quit every server, wait for them (killing what is left after a short
** grace), free. NULL is allowed. */
void fz_pool_free(fz_pool *p);
/* Kill every server and its case at once (an interrupted campaign). */
void fz_pool_kill(fz_pool *p);

#endif

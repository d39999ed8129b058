/*
** common.h -- included first by every lncsim source file.
**
** The allocator family (lm_xmalloc & co: abort on out-of-memory, the only
** abort in the library), the error object every fallible function fills,
** the growable byte buffer, the string hash map used for name lookups, and
** the worker pool (lm_worker_count, lm_parallel_for).
*/
#ifndef LNCSIM_COMMON_H
#define LNCSIM_COMMON_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define LM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LM_PRINTF(a, b)
#endif

/* ---- memory ------------------------------------------------------------ */

void *lm_xmalloc(size_t n);
void *lm_xcalloc(size_t count, size_t size);
void *lm_xrealloc(void *p, size_t n);
char *lm_xstrdup(const char *s);
char *lm_xstrndup(const char *s, size_t n);
char *lm_xasprintf(const char *fmt, ...) LM_PRINTF(1, 2);

/* Grow *parray (of *pcap elements of size elem) so it holds at least need. */
void lm_grow(void *parray, int *pcap, int need, size_t elem);

/* ---- errors ------------------------------------------------------------ */

/*
** The error object filled by every function that can fail on input.
** msg reads "FILE: where: what" (FILE and where may be empty).
** Library code never prints: the CLI prints msg and exits 2.
*/
typedef struct lm_error {
	char msg[1024];
	int code; /* LM_E*: what kind of failure */
} lm_error;

enum {
	LM_OK = 0,
	LM_EINPUT = -1,    /* bad input: file, format, verifier (exit 2) */
	LM_ECHECK = -2,    /* a check failed: mismatch, runtime error (exit 1) */
	LM_EINTERNAL = -3  /* should not happen (exit 3) */
};

/* Fill err as "file: where: what" (empty parts dropped); returns LM_EINPUT. */
int lm_err(lm_error *err, const char *file, const char *where,
	   const char *fmt, ...) LM_PRINTF(4, 5);
int lm_verr(lm_error *err, int code, const char *file, const char *where,
	    const char *fmt, va_list ap);
/* Same, with an explicit code. Returns code. */
int lm_errc(lm_error *err, int code, const char *file, const char *where,
	    const char *fmt, ...) LM_PRINTF(5, 6);
void lm_error_clear(lm_error *err);

/* ---- growable buffer --------------------------------------------------- */

typedef struct lm_buf {
	char *ptr;   /* always NUL terminated when size > 0 */
	size_t size; /* bytes used, not counting the NUL */
	size_t cap;
} lm_buf;

#define LM_BUF_INIT {NULL, 0, 0}
void lm_buf_grow(lm_buf *b, size_t extra);
void lm_buf_put(lm_buf *b, const void *data, size_t n);
void lm_buf_puts(lm_buf *b, const char *s);
void lm_buf_printf(lm_buf *b, const char *fmt, ...) LM_PRINTF(2, 3);
void lm_buf_vprintf(lm_buf *b, const char *fmt, va_list ap);
char *lm_buf_detach(lm_buf *b); /* caller frees; buffer is reset */
void lm_buf_free(lm_buf *b);
const char *lm_buf_cstr(lm_buf *b); /* "" when empty */

/*
** Hint that the n bytes at p (a fresh allocation about to be filled) are
** best backed by huge pages: fewer page faults for big arrays. Only the
** whole 2 MiB pages inside the range are advised; small ranges and
** systems without transparent huge pages: no effect.
*/
void lm_advise_huge(void *p, size_t n);

/*
** A pool of reference-counted chunks for many small blocks that live about
** as long as each other (the packed instructions of a linked module).
** Each block is released on its own with lm_pool_release; a chunk goes
** back to malloc when its last block is released and the pool has moved
** on (lm_pool_done drops the pool's hold on its current chunk). Not
** thread-safe: a chunk's blocks are released from one thread.
*/
typedef struct lm_pool {
	struct lm_chunk *cur;
	size_t next;   /* size of the next chunk (0: the first, 256 KiB) */
} lm_pool;

#define LM_POOL_INIT { NULL, 0 }
/* n bytes, 8-aligned. pool NULL: a block of its own. */
void *lm_pool_alloc(lm_pool *pool, size_t n);
void lm_pool_release(void *p);
/* Writing a block before its size is known: the free space at the end of
** the current chunk (a fresh chunk when little is left; NULL when pool is
** NULL), *avail bytes; then lm_pool_commit makes its first n bytes (n <=
** *avail) a block, or nothing happens if the writer gives up. */
void *lm_pool_tail(lm_pool *pool, size_t *avail);
void *lm_pool_commit(lm_pool *pool, size_t n);
void lm_pool_done(lm_pool *pool);

/* Monotonic wall-clock seconds (for timings and benchmarks). */
double lm_seconds(void);

/* ---- string map -------------------------------------------------------- */

/*
** Open-addressing hash map from NUL-terminated strings to void *.
** Keys are NOT copied: the caller keeps them alive while they are in the map.
*/
typedef struct lm_strent {
	const char *key;    /* NULL: empty slot */
	void *val;
	uint64_t hash;      /* lm_hash_str(key): probes compare it first */
} lm_strent;

typedef struct lm_strmap {
	lm_strent *e;
	size_t cap; /* power of two, 0 when empty */
	size_t n;
} lm_strmap;

void lm_strmap_init(lm_strmap *m);
void lm_strmap_free(lm_strmap *m);
/* Insert or replace. Returns 1 if the key was new, 0 if replaced. */
int lm_strmap_put(lm_strmap *m, const char *key, void *val);
/* Room for n entries in all: no rehash until there are more. */
void lm_strmap_reserve(lm_strmap *m, size_t n);
/* The value slot of key, inserted (value NULL) when absent; valid until the
** next insertion. One probe for a read-modify-write. */
void **lm_strmap_ref(lm_strmap *m, const char *key);
/* Returns 1 and sets *val if found, else 0. */
int lm_strmap_get(const lm_strmap *m, const char *key, void **val);
void *lm_strmap_lookup(const lm_strmap *m, const char *key);
/* lm_strmap_lookup with h == lm_hash_str(key) already computed. */
void *lm_strmap_lookup_h(const lm_strmap *m, const char *key, uint64_t h);
/* Iterate: *pos starts at 0; returns 0 when done. Order is unspecified. */
int lm_strmap_next(const lm_strmap *m, size_t *pos, const char **key,
		   void **val);
uint64_t lm_hash_str(const char *s);

/* ---- files ------------------------------------------------------------- */

/*
** Largest file lm_read_file reads: 2 GiB. It bounds module JSON (the
** biggest linked modules are a few hundred MB; cJSON's tree of a 2 GiB
** text is already several times that in memory), tensor maps, manifests
** and the files the linker copies. A bigger file is refused by its size
** before a byte is read.
*/
#define LM_READ_MAX ((int64_t)2 << 30)

/*
** Open path for reading, refusing everything but a regular file: a FIFO,
** a character device such as /dev/zero (endless), a socket, a directory.
** The open is non-blocking (a FIFO without a writer cannot hang it); the
** descriptor is blocking again on return. Returns 0 with *fd open and
** *size the file's size in bytes, or fills err: "FILE: cannot open:
** why", "FILE: is a directory", "FILE: not a regular file (a FIFO)".
*/
int lm_open_regular(const char *path, int *fd, int64_t *size, lm_error *err);
/*
** lm_open_regular for the file name (one plain component,
** lm_path_component_ok) of the directory dirfd, never through a symlink:
** a symlink at name is "PATH: is a symlink; refusing to follow it". path
** names the file in errors. On failure errno is that of the failing step
** (ENOENT: no such file).
*/
int lm_open_regular_at(int dirfd, const char *name, const char *path,
		       int *fd, int64_t *size, lm_error *err);
/*
** Read exactly n bytes from fd into buf. Returns 0, or fills err
** ("FILE: read error: why", "FILE: file shrank while being read").
*/
int lm_read_full(int fd, void *buf, size_t n, const char *path,
		 lm_error *err);
/*
** Read a whole regular file of at most max bytes (lm_open_regular's
** refusals; "FILE: file too large: N bytes (at most MAX)" from its size,
** before reading). *out is NUL terminated; caller frees.
*/
int lm_read_file_max(const char *path, int64_t max, char **out,
		     size_t *out_len, lm_error *err);
/* lm_read_file_max with LM_READ_MAX. */
int lm_read_file(const char *path, char **out, size_t *out_len, lm_error *err);
/* Write atomically: a random O_EXCL | O_NOFOLLOW temporary beside path,
** fsync, rename (safeio.h lm_write_at). A symlink at path is replaced,
** not followed; a directory or special file there is an error. */
int lm_write_file_atomic(const char *path, const void *data, size_t len,
			 lm_error *err);
/* Directory part of path ("." if none); caller frees. */
char *lm_dirname(const char *path);
/* Join dir and rel (rel returned as-is when absolute); caller frees. */
char *lm_path_join(const char *dir, const char *rel);
/* mkdir -p */
int lm_mkdirs(const char *path, lm_error *err);

/* ---- worker pool --------------------------------------------------------- */

/*
** How many workers to use for n_items items: requested when > 0, else one
** per online CPU when the work is big enough to pay for a thread (big != 0)
** and one otherwise; never more than n_items (so 0 for no item) or max.
*/
int lm_worker_count(long requested, int max, int n_items, int big);

/*
** Run fn(ctx, worker, item) once for every item in 0 .. n_items-1 on
** n_workers workers (fewer than 1 counts as 1). Worker 0 is the calling
** thread; workers 1 .. n_workers-1 are threads started here and joined
** before the return. Each worker takes the next item not taken yet, so
** items run in no fixed order and fn must only share what is read-only
** or its own item's output; worker (0 .. n_workers-1) indexes per-worker
** scratch, used by one thread at a time. A thread that cannot be started
** (pthread_create fails) is not an error: its items are run by the other
** workers, at worst all in the calling thread. fn cannot fail through
** this call: it records its outcome per item, and the caller reads them
** in item order afterwards (e.g. to report the first failure).
*/
typedef void lm_parallel_fn(void *ctx, int worker, int item);
void lm_parallel_for(int n_items, int n_workers, lm_parallel_fn *fn,
		     void *ctx);

#endif

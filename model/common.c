/*
** common.c -- allocator, errors, buffers, string map, file helpers.
*/
#include "common.h"
#include "safeio.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Out of memory: the only abort in the library. */
static void oom(void)
{
	fputs("lncsim: out of memory\n", stderr);
	abort();
}

void *lm_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *lm_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *lm_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *lm_xstrdup(const char *s)
{
	return lm_xstrndup(s, strlen(s));
}

char *lm_xstrndup(const char *s, size_t n)
{
	char *p = lm_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *lm_xasprintf(const char *fmt, ...)
{
	va_list ap;
	lm_buf b = LM_BUF_INIT;
	va_start(ap, fmt);
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	lm_buf_grow(&b, (size_t)n + 1);
	vsnprintf(b.ptr, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	b.size = (size_t)n;
	return lm_buf_detach(&b);
}

/* Grow an array to hold `need` elements, doubling. */
void lm_grow(void *parray, int *pcap, int need, size_t elem)
{
	void **pa = parray;
	if (need <= *pcap)
		return;
	int cap = *pcap ? *pcap : 4;
	while (cap < need)
		cap *= 2;
	*pa = lm_xrealloc(*pa, (size_t)cap * elem);
	*pcap = cap;
}

/* ---- errors ---------------------------------------------------------- */

int lm_verr(lm_error *err, int code, const char *file, const char *where,
	    const char *fmt, va_list ap)
{
	if (!err)
		return code;
	size_t n = 0, cap = sizeof err->msg;
	err->msg[0] = 0;
	err->code = code;
	if (file && *file)
		n += (size_t)snprintf(err->msg + n, cap - n, "%s: ", file);
	if (n < cap && where && *where)
		n += (size_t)snprintf(err->msg + n, cap - n, "%s: ", where);
	if (n < cap)
		vsnprintf(err->msg + n, cap - n, fmt, ap);
	return code;
}

int lm_err(lm_error *err, const char *file, const char *where,
	   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = lm_verr(err, LM_EINPUT, file, where, fmt, ap);
	va_end(ap);
	return rc;
}

int lm_errc(lm_error *err, int code, const char *file, const char *where,
	    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = lm_verr(err, code, file, where, fmt, ap);
	va_end(ap);
	return rc;
}

void lm_error_clear(lm_error *err)
{
	if (err) {
		err->msg[0] = 0;
		err->code = 0;
	}
}

/* ---- buffer ---------------------------------------------------------- */

void lm_buf_grow(lm_buf *b, size_t extra)
{
	size_t need = b->size + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->ptr = lm_xrealloc(b->ptr, cap);
	b->cap = cap;
}

void lm_buf_put(lm_buf *b, const void *data, size_t n)
{
	lm_buf_grow(b, n);
	if (n)
		memcpy(b->ptr + b->size, data, n);
	b->size += n;
	b->ptr[b->size] = 0;
}

void lm_buf_puts(lm_buf *b, const char *s)
{
	lm_buf_put(b, s, strlen(s));
}

void lm_buf_vprintf(lm_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	lm_buf_grow(b, (size_t)n);
	vsnprintf(b->ptr + b->size, (size_t)n + 1, fmt, ap);
	b->size += (size_t)n;
}

void lm_buf_printf(lm_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lm_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

char *lm_buf_detach(lm_buf *b)
{
	char *p = b->ptr;
	if (!p)
		p = lm_xstrdup("");
	b->ptr = NULL;
	b->size = b->cap = 0;
	return p;
}

void lm_buf_free(lm_buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->size = b->cap = 0;
}

const char *lm_buf_cstr(lm_buf *b)
{
	return b->ptr ? b->ptr : "";
}

/* ---- string map ------------------------------------------------------ */

/*
** FNV-1a, 64 bit, with a final mix: FNV's multiplications only carry bits
** upwards, so without it the low bits the table indexes with depend on
** few input bits and names like "i1234" / "i1334" cluster.
*/
uint64_t lm_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ULL;
	h ^= h >> 32;
	return h;
}

void lm_advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(huge - 1);
	if (p && n >= 2 * huge && b > a)
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

/* ---- pool ---------------------------------------------------------------- */

/*
** In the sanitizer build every block is poisoned when it is released, so
** a read through a pointer into a released packed instruction (or any
** pool block) is reported at once, even while its chunk lives on; the
** block's header then also holds its size.
*/
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POOL_POISON 1
#define POOL_HDR (2 * sizeof(void *))
#else
#define POOL_POISON 0
#define POOL_HDR sizeof(void *)
#endif

typedef struct lm_chunk {
	size_t refs;         /* live blocks, + 1 while the pool's current */
	size_t used, cap;    /* bytes of data[] */
	uint64_t data[];
} lm_chunk;

/* chunks grow from 256 KiB (small links stay small) to 16 MiB */
#define POOL_FIRST ((size_t)256 << 10)
#define POOL_CHUNK ((size_t)16 << 20)


static lm_chunk *chunk_new(size_t cap)
{
	lm_chunk *c = lm_xmalloc(sizeof *c + cap);
	c->refs = 0;
	c->used = 0;
	c->cap = cap;
	lm_advise_huge(c, sizeof *c + cap);
	return c;
}

static void chunk_unref(lm_chunk *c)
{
	if (--c->refs == 0) {
#if POOL_POISON
		ASAN_UNPOISON_MEMORY_REGION(c->data, c->cap);
#endif
		free(c);
	}
}

/* Write block p's header (its chunk, and its size when poisoning). */
static void *block_start(char *p, lm_chunk *c, size_t n)
{
	memcpy(p, &c, sizeof c);
#if POOL_POISON
	memcpy(p + sizeof c, &n, sizeof n);
#else
	(void)n;
#endif
	return p + POOL_HDR;
}

/* Retire the pool's current chunk and start the next, bigger one. */
static lm_chunk *pool_next_chunk(lm_pool *pool)
{
	size_t sz = pool->next ? pool->next : POOL_FIRST;
	if (pool->cur)
		chunk_unref(pool->cur);
	pool->cur = chunk_new(sz - sizeof(lm_chunk));
	pool->cur->refs = 1;
	pool->next = sz < POOL_CHUNK ? 2 * sz : POOL_CHUNK;
	return pool->cur;
}

void *lm_pool_alloc(lm_pool *pool, size_t n)
{
	/* each block: the chunk pointer (and its size), then the data */
	size_t need = POOL_HDR + ((n + 7) & ~(size_t)7);
	lm_chunk *c;
	if (!pool || need > POOL_FIRST / 8) {
		c = chunk_new(need);
	} else {
		if (!pool->cur || pool->cur->cap - pool->cur->used < need)
			pool_next_chunk(pool);
		c = pool->cur;
	}
	char *p = (char *)c->data + c->used;
	c->used += need;
	c->refs++;
	return block_start(p, c, n);
}

#define POOL_TAIL_MIN 4096

void *lm_pool_tail(lm_pool *pool, size_t *avail)
{
	lm_chunk *c;
	*avail = 0;
	if (!pool)
		return NULL;
	c = pool->cur;
	if (!c || c->cap - c->used < POOL_TAIL_MIN + POOL_HDR)
		c = pool_next_chunk(pool);
	*avail = c->cap - c->used - POOL_HDR;
	return (char *)c->data + c->used + POOL_HDR;
}

void *lm_pool_commit(lm_pool *pool, size_t n)
{
	lm_chunk *c = pool->cur;
	char *p = (char *)c->data + c->used;
	c->used += POOL_HDR + ((n + 7) & ~(size_t)7);
	c->refs++;
	return block_start(p, c, n);
}

void lm_pool_release(void *p)
{
	lm_chunk *c;
	if (!p)
		return;
	memcpy(&c, (char *)p - POOL_HDR, sizeof c);
#if POOL_POISON
	{
		size_t n;
		memcpy(&n, (char *)p - POOL_HDR + sizeof c, sizeof n);
		ASAN_POISON_MEMORY_REGION(p, n);
	}
#endif
	chunk_unref(c);
}

void lm_pool_done(lm_pool *pool)
{
	if (pool->cur)
		chunk_unref(pool->cur);
	pool->cur = NULL;
	pool->next = 0;
}

double lm_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void lm_strmap_init(lm_strmap *m)
{
	memset(m, 0, sizeof *m);
}

void lm_strmap_free(lm_strmap *m)
{
	free(m->e);
	memset(m, 0, sizeof *m);
}

static void strmap_rehash(lm_strmap *m, size_t cap)
{
	lm_strent *e = lm_xcalloc(cap, sizeof *e);
	lm_advise_huge(e, cap * sizeof *e); /* big tables: fewer TLB misses */
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->e[i].key)
			continue;
		size_t j = m->e[i].hash & (cap - 1);
		while (e[j].key)
			j = (j + 1) & (cap - 1);
		e[j] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
}

/* The slot holding key (hash h), or the empty slot where it would go. */
static lm_strent *strmap_slot(const lm_strmap *m, const char *key, uint64_t h)
{
	size_t j = h & (m->cap - 1);
	lm_strent *e;
	while ((e = &m->e[j])->key) {
		if (e->hash == h && (e->key == key || strcmp(e->key, key) == 0))
			return e;
		j = (j + 1) & (m->cap - 1);
	}
	return e;
}

void lm_strmap_reserve(lm_strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 16;
	while ((n + 1) * 2 >= cap)
		cap *= 2;
	if (cap != m->cap)
		strmap_rehash(m, cap);
}

int lm_strmap_put(lm_strmap *m, const char *key, void *val)
{
	if ((m->n + 1) * 2 >= m->cap)
		strmap_rehash(m, m->cap ? m->cap * 2 : 16);
	uint64_t h = lm_hash_str(key);
	lm_strent *e = strmap_slot(m, key, h);
	if (e->key) {
		e->val = val;
		return 0;
	}
	e->key = key;
	e->val = val;
	e->hash = h;
	m->n++;
	return 1;
}

void **lm_strmap_ref(lm_strmap *m, const char *key)
{
	if ((m->n + 1) * 2 >= m->cap)
		strmap_rehash(m, m->cap ? m->cap * 2 : 16);
	uint64_t h = lm_hash_str(key);
	lm_strent *e = strmap_slot(m, key, h);
	if (!e->key) {
		e->key = key;
		e->val = NULL;
		e->hash = h;
		m->n++;
	}
	return &e->val;
}

int lm_strmap_get(const lm_strmap *m, const char *key, void **val)
{
	if (!m->n || !key)
		return 0;
	lm_strent *e = strmap_slot(m, key, lm_hash_str(key));
	if (!e->key)
		return 0;
	if (val)
		*val = e->val;
	return 1;
}

void *lm_strmap_lookup(const lm_strmap *m, const char *key)
{
	void *v = NULL;
	lm_strmap_get(m, key, &v);
	return v;
}

void *lm_strmap_lookup_h(const lm_strmap *m, const char *key, uint64_t h)
{
	if (!m->n || !key)
		return NULL;
	return strmap_slot(m, key, h)->val; /* NULL in an empty slot */
}

int lm_strmap_next(const lm_strmap *m, size_t *pos, const char **key,
		   void **val)
{
	for (; *pos < m->cap; (*pos)++)
		if (m->e[*pos].key) {
			if (key)
				*key = m->e[*pos].key;
			if (val)
				*val = m->e[*pos].val;
			(*pos)++;
			return 1;
		}
	return 0;
}

/* ---- files ----------------------------------------------------------- */

/* What a non-regular file is, for messages. */
static const char *file_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a file";
}

/*
** Open name relative to dirfd (AT_FDCWD: the current directory) for
** reading, refusing everything but a regular file; with nofollow a symlink
** at name is refused too. path names the file in errors. On failure errno
** is that of the failing step (ENOENT: nothing at name).
*/
static int open_regular(int dirfd, const char *name, int nofollow,
			const char *path, int *fd, int64_t *size,
			lm_error *err)
{
	struct stat st;
	int f, fl, e;

	*fd = -1;
	*size = 0;
	do
		f = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
			   O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
	while (f < 0 && errno == EINTR);
	if (f < 0) {
		e = errno;
		if (nofollow && e == ELOOP)
			lm_err(err, path, "", "is a symlink; refusing to "
			       "follow it");
		else
			lm_err(err, path, "", "cannot open: %s", strerror(e));
		errno = e;
		return LM_EINPUT;
	}
	if (fstat(f, &st) != 0) {
		e = errno;
		close(f);
		lm_err(err, path, "", "cannot open: %s", strerror(e));
		errno = e;
		return LM_EINPUT;
	}
	if (S_ISDIR(st.st_mode)) {
		close(f);
		lm_err(err, path, "", "is a directory");
		errno = EISDIR;
		return LM_EINPUT;
	}
	if (!S_ISREG(st.st_mode)) {
		close(f);
		lm_err(err, path, "", "not a regular file (%s)",
		       file_kind(st.st_mode));
		errno = EINVAL;
		return LM_EINPUT;
	}
	fl = fcntl(f, F_GETFL);
	if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		e = errno;
		close(f);
		lm_err(err, path, "", "cannot open: %s", strerror(e));
		errno = e;
		return LM_EINPUT;
	}
	*fd = f;
	*size = (int64_t)st.st_size;
	return 0;
}

int lm_open_regular(const char *path, int *fd, int64_t *size, lm_error *err)
{
	return open_regular(AT_FDCWD, path, 0, path, fd, size, err);
}

int lm_open_regular_at(int dirfd, const char *name, const char *path,
		       int *fd, int64_t *size, lm_error *err)
{
	*fd = -1;
	*size = 0;
	if (!lm_path_component_ok(name)) {
		lm_err(err, path, "", "not a plain file name");
		errno = EINVAL;
		return LM_EINPUT;
	}
	return open_regular(dirfd, name, 1, path, fd, size, err);
}

int lm_read_full(int fd, void *buf, size_t n, const char *path,
		 lm_error *err)
{
	char *p = buf;
	while (n) {
		/* at most 1 GiB per call: Linux returns at most ~2 GiB */
		size_t want = n < ((size_t)1 << 30) ? n : (size_t)1 << 30;
		ssize_t k = read(fd, p, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return lm_err(err, path, "", "read error: %s",
				      strerror(errno));
		if (k == 0)
			return lm_err(err, path, "", "file shrank while being "
				      "read");
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int lm_read_file_max(const char *path, int64_t max, char **out,
		     size_t *out_len, lm_error *err)
{
	int64_t size;
	int fd, rc;
	char *buf, extra;
	ssize_t k;

	*out = NULL;
	if (out_len)
		*out_len = 0;
	if ((rc = lm_open_regular(path, &fd, &size, err)) != 0)
		return rc;
	if (size > max || (uint64_t)size >= SIZE_MAX) {
		close(fd);
		return lm_err(err, path, "", "file too large: %lld bytes (at "
			      "most %lld)", (long long)size, (long long)max);
	}
	buf = lm_xmalloc((size_t)size + 1);
	rc = lm_read_full(fd, buf, (size_t)size, path, err);
	/* a file that grew since fstat: refuse rather than read on */
	while (!rc && (k = read(fd, &extra, 1)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		rc = k < 0 ? lm_err(err, path, "", "read error: %s",
				    strerror(errno))
			   : lm_err(err, path, "", "file grew while being "
				    "read");
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[size] = 0;
	if (out_len)
		*out_len = (size_t)size;
	*out = buf;
	return 0;
}

int lm_read_file(const char *path, char **out, size_t *out_len, lm_error *err)
{
	return lm_read_file_max(path, LM_READ_MAX, out, out_len, err);
}

/*
** The directory part of path is the caller's (opened as given); the file
** itself is written beneath it by lm_write_at: a unique O_EXCL |
** O_NOFOLLOW temporary, fsync, rename. A symlink at path is replaced, not
** followed; a directory or special file at path is an error.
*/
int lm_write_file_atomic(const char *path, const void *data, size_t len,
			 lm_error *err)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd, rc;
	if (!*path || (slash && !slash[1]))
		return lm_err(err, path, "", "cannot write: not a file name");
	dir = slash ? (slash == path ? lm_xstrdup("/")
		       : lm_xstrndup(path, (size_t)(slash - path)))
		: lm_xstrdup(".");
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = lm_err(err, path, "", "cannot write: %s", strerror(errno));
	} else {
		rc = lm_write_at(dfd, slash ? dir : NULL, slash ? slash + 1 : path,
				 data, len, 0644, err);
		close(dfd);
	}
	free(dir);
	return rc;
}

char *lm_dirname(const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return lm_xstrdup(".");
	if (s == path)
		return lm_xstrdup("/");
	return lm_xstrndup(path, (size_t)(s - path));
}

char *lm_path_join(const char *dir, const char *rel)
{
	if (rel[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
		return lm_xstrdup(rel);
	size_t n = strlen(dir);
	return lm_xasprintf("%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", rel);
}

int lm_mkdirs(const char *path, lm_error *err)
{
	char *p = lm_xstrdup(path);
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == 0) {
			char c = *s;
			*s = 0;
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				lm_err(err, p, "", "cannot create directory: %s",
				       strerror(errno));
				free(p);
				return LM_EINPUT;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	struct stat st;
	int ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	if (!ok)
		return lm_err(err, path, "", "not a directory");
	return 0;
}

/* ---- worker pool --------------------------------------------------------- */

int lm_worker_count(long requested, int max, int n_items, int big)
{
	long n = requested;
	if (n <= 0) {
		n = big ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
		if (n < 1)
			n = 1;
	}
	if (n > n_items)
		n = n_items;
	if (n > max)
		n = max;
	return n < 0 ? 0 : (int)n;
}

typedef struct lm_pfor {
	lm_parallel_fn *fn;
	void *ctx;
	int n_items;
	atomic_int next; /* the next item not taken yet */
} lm_pfor;

typedef struct lm_pfor_worker {
	lm_pfor *p;
	int worker;
} lm_pfor_worker;

static void *pfor_main(void *arg)
{
	lm_pfor_worker *w = arg;
	lm_pfor *p = w->p;
	int i;
	while ((i = atomic_fetch_add(&p->next, 1)) < p->n_items)
		p->fn(p->ctx, w->worker, i);
	return NULL;
}

void lm_parallel_for(int n_items, int n_workers, lm_parallel_fn *fn,
		     void *ctx)
{
	lm_pfor p = { .fn = fn, .ctx = ctx, .n_items = n_items };
	lm_pfor_worker w0 = { &p, 0 }, *ws = NULL;
	pthread_t *th = NULL;
	int *started = NULL;
	atomic_init(&p.next, 0);
	if (n_workers > n_items)
		n_workers = n_items;
	if (n_workers > 1) {
		ws = lm_xcalloc((size_t)n_workers, sizeof *ws);
		th = lm_xcalloc((size_t)n_workers, sizeof *th);
		started = lm_xcalloc((size_t)n_workers, sizeof *started);
		for (int t = 1; t < n_workers; t++) {
			ws[t].p = &p;
			ws[t].worker = t;
			started[t] = pthread_create(&th[t], NULL, pfor_main,
						    &ws[t]) == 0;
		}
	}
	pfor_main(&w0); /* also runs the items of a thread that did not start */
	for (int t = 1; t < n_workers; t++)
		if (started[t])
			pthread_join(th[t], NULL);
	free(ws);
	free(th);
	free(started);
}

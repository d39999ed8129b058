/*
** race.c -- the happens-before race detector (docs/race.md).
**
** Agents: each engine of each core (core * LS_ENGINES + engine), and two
** per DMA queue instance: its reads (descriptors read their source when
** their transfer starts) and its completions (FIFO per instance). Every
** agent has a vector clock; an agent ticks its own entry at each event
** it runs. sched.c calls in here where the simulator orders things
** (program order, dependencies, semaphores, events, barriers, DMA
** completion, calls); sync.c logs every semaphore value it writes.
**
** Shadow: one pair of 32-bit words per 4-byte granule of SBUF / PSUM (per
** core, the compact layout) and of each DRAM storage: the last write's
** access record and the reads since it (a record, or a read set of
** records unordered among themselves). 8 bytes per 4: twice the memory
** covered. Access records carry the epoch (agent, clock), the
** instruction, its core and engine and the loop iteration.
*/
#include "common.h"
#include "sim_int.h"

#include <stdlib.h>
#include <string.h>

/* The pseudo-space of a barrier id's races (kind SLOT). */
#define LS_RACE_SLOT (-2)
/* Granule of the shadow, bytes. */
#define GRAN 4
/* Completed instances a dependency target remembers; semaphore values a
** semaphore remembers. */
#define HIST_CAP 64
#define SEMLOG_CAP 64
/* Distinct races reported (all are counted, each once). */
#define RACES_KEPT 100000

typedef struct rrec {
	int32_t agent;          /* -1: a read set (set, n in the set pool) */
	uint32_t clock;
	const ls_sinst *si;
	int32_t core, eng;      /* eng >= LS_ENGINES: the queue instance
				   eng - LS_ENGINES */
	int32_t it, nit;        /* (loop, iv) pairs in itpool; a set: ids */
} rrec;

typedef struct hentry {
	int64_t bseq;
	int64_t ords[LS_MAX_NEST];
	uint32_t *vc;
} hentry;

typedef struct hist {
	int n, head, evicted;
	hentry e[HIST_CAP];
} hist;

typedef struct sentry {
	int32_t value;
	uint32_t *cum;
} sentry;

typedef struct semlog {
	int n, head;            /* ring of the last SEMLOG_CAP values */
	int evicted;
	int32_t base;           /* the value before the oldest kept */
	uint32_t *cum;          /* everything logged so far */
	sentry e[SEMLOG_CAP];
} semlog;

typedef struct rrace {
	int kind;               /* 0 RAW, 1 WAR, 2 WAW, 3 SLOT */
	int space, core, storage;
	int64_t lo, hi;
	rrec a, b;
	const ls_sinst *common;
} rrace;

/* An arrival at a barrier id: its epoch and access record. */
typedef struct sarr {
	int32_t agent;
	uint32_t tick;
	int rec;
} sarr;

/* A barrier id of a module: the arrivals of the group holding it now and
** of the group that held it before. */
typedef struct bslot {
	int mod, group, prev_group;
	int64_t id;
	sarr *cur, *prev;
	int n_cur, cap_cur, n_prev, cap_prev;
} bslot;

struct ls_race_st {
	ls_machine *mc;
	int ncore, nag;
	uint32_t **vc;          /* per agent */
	const ls_sinst ***tick; /* per agent: clock - 1 -> instruction */
	int *cap_tick;
	uint32_t **vcs;         /* saved clocks by id (1..) */
	int n_vcs, cap_vcs;
	rrec *rec;
	int n_rec, cap_rec;
	int64_t *itpool;
	int n_it, cap_it;
	int32_t *setpool;
	int n_set, cap_set;
	int32_t *tmp;           /* read_add's scratch */
	int cap_tmp;
	int last_old, last_new, last_res; /* read-set cache */
	uint32_t *sh[LS_MAX_CORES][2];
	int64_t sh_n[LS_MAX_CORES][2];
	uint32_t **shd;         /* per storage */
	int64_t shadow_bytes;
	semlog *sl;
	uint32_t **evt;         /* per core * 256, lazily */
	hist **hs;
	int n_hs, cap_hs;
	uint32_t *drain[LS_MAX_CORES][LS_ENGINES];
	const uint32_t *cur;
	uint32_t *tgt;
	rrace *races;
	int n_races, cap_races;
	int64_t n_found;
	int64_t n_found_mem;    /* of them between two instructions' accesses
				   (not a barrier id, not the host's read) */
	int *rh;                /* open hash of races: index + 1 */
	int cap_rh;
	int64_t overflow;       /* history / semaphore-log evictions used */
	bslot *slots;           /* barrier ids in use, per module */
	int n_slots, cap_slots;
	lm_error kept;          /* the first uninitialized read (code 0: none) */
	int64_t dyn;            /* bytes allocated, but the DRAM shadow */
	int64_t budget;         /* what the memory limit leaves for them */
};

/* lm_grow, the bytes it added counted against the memory limit. */
static void grow(ls_race_st *R, void *parray, int *pcap, int need,
		 size_t elem)
{
	int old = *pcap;
	lm_grow(parray, pcap, need, elem);
	R->dyn += (int64_t)(*pcap - old) * (int64_t)elem;
}

static uint32_t *vc_alloc(ls_race_st *R)
{
	R->dyn += (int64_t)(R->nag + 1) * (int64_t)sizeof(uint32_t);
	return lm_xcalloc((size_t)R->nag + 1, sizeof(uint32_t));
}

ls_race_st *ls_race_new(ls_machine *mc)
{
	ls_race_st *R = lm_xcalloc(1, sizeof *R);
	int64_t mx = 0;
	R->mc = mc;
	for (int i = 0; i < mc->n_mods; i++)
		if (mc->mods[i].core > mx)
			mx = mc->mods[i].core;
	for (int i = 0; i < mc->n_fns; i++)
		if (mc->fns[i].core > mx)
			mx = mc->fns[i].core;
	if (mx >= LS_MAX_CORES)
		mx = LS_MAX_CORES - 1;
	R->ncore = (int)mx + 1;
	R->nag = R->ncore * LS_ENGINES + 2 * mc->n_qinsts;
	R->vc = lm_xcalloc((size_t)R->nag, sizeof *R->vc);
	R->tick = lm_xcalloc((size_t)R->nag, sizeof *R->tick);
	R->cap_tick = lm_xcalloc((size_t)R->nag, sizeof *R->cap_tick);
	R->budget = INT64_MAX;
	for (int a = 0; a < R->nag; a++)
		R->vc[a] = vc_alloc(R);
	R->shd = lm_xcalloc((size_t)mc->n_storages + 1, sizeof *R->shd);
	R->sl = lm_xcalloc((size_t)mc->n_sems + 1, sizeof *R->sl);
	for (int i = 0; i < mc->n_sems; i++) {
		R->sl[i].base = mc->sems[i].init;
		R->sl[i].cum = vc_alloc(R);
	}
	R->evt = lm_xcalloc((size_t)R->ncore * 256, sizeof *R->evt);
	R->dyn += (int64_t)mc->n_sems * (int64_t)sizeof *R->sl +
		  (int64_t)R->ncore * 256 * (int64_t)sizeof *R->evt;
	R->n_rec = 1;           /* record 0: none */
	R->cap_rec = 1024;
	R->rec = lm_xcalloc((size_t)R->cap_rec, sizeof *R->rec);
	R->dyn += (int64_t)R->cap_rec * (int64_t)sizeof *R->rec +
		  (int64_t)R->nag * (int64_t)(sizeof *R->vc + sizeof *R->tick +
					      sizeof *R->cap_tick);
	R->n_vcs = 1;
	R->last_old = -1;
	return R;
}

void ls_race_free(ls_race_st *R)
{
	if (!R)
		return;
	for (int a = 0; a < R->nag; a++) {
		free(R->vc[a]);
		free(R->tick[a]);
	}
	free(R->vc);
	free(R->tick);
	free(R->cap_tick);
	for (int i = 1; i < R->n_vcs; i++)
		free(R->vcs[i]);
	free(R->vcs);
	free(R->rec);
	free(R->itpool);
	free(R->setpool);
	free(R->tmp);
	for (int c = 0; c < LS_MAX_CORES; c++) {
		free(R->sh[c][0]);
		free(R->sh[c][1]);
		for (int e = 0; e < LS_ENGINES; e++)
			free(R->drain[c][e]);
	}
	for (int i = 0; i < R->mc->n_storages; i++)
		free(R->shd[i]);
	free(R->shd);
	for (int i = 0; i < R->mc->n_sems; i++) {
		semlog *l = &R->sl[i];
		for (int k = 0; k < l->n; k++)
			free(l->e[(l->head + k) % SEMLOG_CAP].cum);
		free(l->cum);
	}
	free(R->sl);
	for (int i = 0; i < R->ncore * 256; i++)
		free(R->evt[i]);
	free(R->evt);
	for (int i = 0; i < R->n_hs; i++) {
		for (int k = 0; k < R->hs[i]->n; k++)
			free(R->hs[i]->e[(R->hs[i]->head + k) % HIST_CAP].vc);
		free(R->hs[i]);
	}
	free(R->hs);
	free(R->races);
	free(R->rh);
	for (int i = 0; i < R->n_slots; i++) {
		free(R->slots[i].cur);
		free(R->slots[i].prev);
	}
	free(R->slots);
	free(R);
}

/* ---- clocks ------------------------------------------------------------- */

int ls_race_agent(const ls_race_st *R, int core, int eng)
{
	if (core >= R->ncore)
		core = R->ncore - 1;
	return core * LS_ENGINES + eng;
}

int ls_race_qagent(const ls_race_st *R, int qi, int is_done)
{
	return R->ncore * LS_ENGINES + 2 * qi + (is_done != 0);
}

uint32_t *ls_race_vc(ls_race_st *R, int agent)
{
	return R->vc[agent];
}

void ls_race_join(const ls_race_st *R, uint32_t *dst, const uint32_t *src)
{
	if (!src || dst == src)
		return;
	for (int a = 0; a < R->nag; a++)
		if (src[a] > dst[a])
			dst[a] = src[a];
}

void ls_race_copy(const ls_race_st *R, uint32_t *dst, const uint32_t *src)
{
	memcpy(dst, src, (size_t)R->nag * sizeof *dst);
}

int ls_race_vc_new(ls_race_st *R)
{
	grow(R, &R->vcs, &R->cap_vcs, R->n_vcs + 1, sizeof *R->vcs);
	R->vcs[R->n_vcs] = vc_alloc(R);
	return R->n_vcs++;
}

uint32_t *ls_race_vc_get(ls_race_st *R, int id)
{
	return R->vcs[id];
}

uint32_t ls_race_tick(ls_race_st *R, int agent, const ls_sinst *si)
{
	uint32_t c = ++R->vc[agent][agent];
	grow(R, &R->tick[agent], &R->cap_tick[agent], (int)c + 1,
		sizeof *R->tick[agent]);
	R->tick[agent][c - 1] = si;
	return c;
}

void ls_race_set_cur(ls_race_st *R, const uint32_t *vc)
{
	R->cur = vc;
}

const uint32_t *ls_race_cur(const ls_race_st *R)
{
	return R->cur;
}

void ls_race_set_tgt(ls_race_st *R, uint32_t *vc)
{
	R->tgt = vc;
}

uint32_t *ls_race_drain(ls_race_st *R, int core, int eng)
{
	if (!R->drain[core][eng])
		R->drain[core][eng] = vc_alloc(R);
	return R->drain[core][eng];
}

/* ---- records ------------------------------------------------------------ */

static int new_rec(ls_race_st *R)
{
	grow(R, &R->rec, &R->cap_rec, R->n_rec + 1, sizeof *R->rec);
	memset(&R->rec[R->n_rec], 0, sizeof R->rec[R->n_rec]);
	return R->n_rec++;
}

int ls_race_rec(ls_race_st *R, int agent, uint32_t clock, const ls_sinst *si,
		int core, int eng, const int *loops, const int64_t *ivs,
		int depth)
{
	int r = new_rec(R);
	rrec *p = &R->rec[r];
	p->agent = agent;
	p->clock = clock;
	p->si = si;
	p->core = core;
	p->eng = eng;
	p->it = R->n_it;
	p->nit = depth;
	if (depth > 0) {
		grow(R, &R->itpool, &R->cap_it, R->n_it + 2 * depth,
			sizeof *R->itpool);
		for (int j = 0; j < depth; j++) {
			R->itpool[R->n_it++] = loops[j];
			R->itpool[R->n_it++] = ivs[j];
		}
	}
	return r;
}

int ls_race_rec_as(ls_race_st *R, int from, int agent, uint32_t clock,
		   int eng)
{
	int r = new_rec(R);
	R->rec[r] = R->rec[from];
	R->rec[r].agent = agent;
	R->rec[r].clock = clock;
	R->rec[r].eng = eng;
	return r;
}

/* Is record r (not a set) ordered before the clock v? */
static int hb(const ls_race_st *R, int r, const uint32_t *v)
{
	const rrec *p = &R->rec[r];
	return p->clock <= v[p->agent];
}

/* ---- races -------------------------------------------------------------- */

static uint64_t race_hash(int kind, int space, int core, int storage,
			  const ls_sinst *a, const ls_sinst *b)
{
	uint64_t h = (uint64_t)kind * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)(space * 131 + core) * 0xbf58476d1ce4e5b9ull;
	h ^= (uint64_t)(storage + 7) * 0x94d049bb133111ebull;
	h ^= (uint64_t)(uintptr_t)a * 0x2545f4914f6cdd1dull;
	h ^= (uint64_t)(uintptr_t)b * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* The bytes of granule g of the space as reported (docs/race.md). */
static void gran_bytes(const ls_race_st *R, int space, int64_t g, int64_t *lo,
		       int64_t *hi)
{
	if (space == LS_SP_DRAM) {
		*lo = g * GRAN;
	} else {
		const ls_layout *l = space == LS_SP_SB ? &R->mc->sb_layout
						      : &R->mc->psum_layout;
		int64_t off = g * GRAN, pb = l->pb > 0 ? l->pb : 1;
		*lo = off / pb * l->arch_pb + ls_layout_unmap(l, off % pb);
	}
	*hi = *lo + GRAN;
}

static void race_at(ls_race_st *R, int kind, int space, int core,
		    int storage, int64_t lo, int64_t hi, int ra, int rb,
		    const uint32_t *vb)
{
	const rrec *a = &R->rec[ra], *b = &R->rec[rb];
	uint64_t h;
	size_t i;
	rrace *x;
	if (R->n_races * 2 + 2 > R->cap_rh) {
		int nc = R->cap_rh ? 2 * R->cap_rh : 256;
		int *n = lm_xcalloc((size_t)nc, sizeof *n);
		for (int k = 0; k < R->n_races; k++) {
			rrace *y = &R->races[k];
			h = race_hash(y->kind, y->space, y->core, y->storage,
				      y->a.si, y->b.si);
			for (i = h % (size_t)nc; n[i]; i = (i + 1) % (size_t)nc)
				;
			n[i] = k + 1;
		}
		free(R->rh);
		R->dyn += (int64_t)(nc - R->cap_rh) * (int64_t)sizeof *n;
		R->rh = n;
		R->cap_rh = nc;
	}
	h = race_hash(kind, space, core, storage, a->si, b->si);
	for (i = h % (size_t)R->cap_rh; R->rh[i]; i = (i + 1) % (size_t)R->cap_rh) {
		x = &R->races[R->rh[i] - 1];
		if (x->kind == kind && x->space == space && x->core == core &&
		    x->storage == storage && x->a.si == a->si &&
		    x->b.si == b->si) {
			if (lo < x->lo)
				x->lo = lo;
			if (hi > x->hi)
				x->hi = hi;
			return;
		}
	}
	/* every distinct race stays in the table (so none is counted
	   twice); the first RACES_KEPT are reported */
	R->n_found++;
	if (kind < 3 && b->si)
		R->n_found_mem++;
	grow(R, &R->races, &R->cap_races, R->n_races + 1, sizeof *R->races);
	x = &R->races[R->n_races];
	x->kind = kind;
	x->space = space;
	x->core = core;
	x->storage = storage;
	x->lo = lo;
	x->hi = hi;
	x->a = *a;
	x->b = *b;
	x->common = NULL;
	if (a->agent >= 0 && vb[a->agent] > 0)
		x->common = R->tick[a->agent][vb[a->agent] - 1];
	R->rh[i] = ++R->n_races;
}

static void race(ls_race_st *R, int kind, int space, int core, int storage,
		 int64_t g, int ra, int rb, const uint32_t *vb)
{
	int64_t lo, hi;
	gran_bytes(R, space, g, &lo, &hi);
	race_at(R, kind, space, core, storage, lo, hi, ra, rb, vb);
}

/* ---- read sets ---------------------------------------------------------- */

/* The reads of old not ordered before v, and r. */
static int read_add(ls_race_st *R, int old, int r, const uint32_t *v)
{
	int32_t *tmp;
	int n = 0, res;
	if (old == R->last_old && r == R->last_new)
		return R->last_res;
	/* a set holds at most one read per agent that is not ordered before
	   a newer one, but r may join a set that has not dropped its
	   older reads yet: room for all of them and r */
	grow(R, &R->tmp, &R->cap_tmp, (R->rec[old].agent >= 0 ? 1 :
				       R->rec[old].nit) + 1, sizeof *R->tmp);
	tmp = R->tmp;
	if (R->rec[old].agent >= 0) {
		if (!hb(R, old, v))
			tmp[n++] = old;
	} else {
		const rrec *s = &R->rec[old];
		for (int k = 0; k < s->nit; k++) {
			int m = R->setpool[s->it + k];
			if (m != r && !hb(R, m, v))
				tmp[n++] = m;
		}
	}
	if (n == 0) {
		res = r;
	} else {
		tmp[n++] = r;
		res = new_rec(R);
		R->rec[res].agent = -1;
		R->rec[res].it = R->n_set;
		R->rec[res].nit = n;
		grow(R, &R->setpool, &R->cap_set, R->n_set + n,
			sizeof *R->setpool);
		memcpy(R->setpool + R->n_set, tmp, (size_t)n * sizeof *tmp);
		R->n_set += n;
	}
	R->last_old = old;
	R->last_new = r;
	R->last_res = res;
	return res;
}

/* ---- shadow ------------------------------------------------------------- */

static uint32_t *shadow_of(ls_race_st *R, int core, const ls_opnd *o,
			   int64_t *ng)
{
	ls_machine *mc = R->mc;
	uint32_t **p;
	int64_t bytes;
	if (o->space == LS_SP_DRAM) {
		if (o->storage < 0 || o->storage >= mc->n_storages)
			return NULL;
		p = &R->shd[o->storage];
		bytes = mc->storages[o->storage].bytes;
	} else {
		int k = o->space == LS_SP_PSUM;
		p = &R->sh[core][k];
		bytes = (int64_t)mc->arch->partitions *
			(k ? mc->psum_part_bytes : mc->sb_part_bytes);
	}
	*ng = (bytes + GRAN - 1) / GRAN;
	if (!*p) {
		*p = lm_xcalloc((size_t)(2 * *ng + 2), sizeof **p);
		R->shadow_bytes += 2 * *ng * (int64_t)sizeof **p;
		if (o->space != LS_SP_DRAM) /* DRAM's is counted before */
			R->dyn += 2 * *ng * (int64_t)sizeof **p;
	}
	return *p;
}

/* Would a write by r at clock v race with the write w or the reads rd? */
static int raced_any(const ls_race_st *R, uint32_t w, uint32_t rd, int r,
		     const uint32_t *v)
{
	const rrec *s;
	if (w && (int)w != r && !hb(R, (int)w, v))
		return 1;
	if (!rd)
		return 0;
	s = &R->rec[rd];
	if (s->agent >= 0)
		return (int)rd != r && !hb(R, (int)rd, v);
	for (int k = 0; k < s->nit; k++) {
		int m = R->setpool[s->it + k];
		if (m != r && !hb(R, m, v))
			return 1;
	}
	return 0;
}

/* Granule g accessed by record r at clock v: 1 if a race was found. */
static int touch(ls_race_st *R, uint32_t *sh, int64_t g, int r,
		 const uint32_t *v, int is_write, int space, int core,
		 int storage)
{
	uint32_t w = sh[2 * g], rd = sh[2 * g + 1];
	int64_t n0 = R->n_found;
	int n1 = R->n_races;
	if (w && (int)w != r && !hb(R, (int)w, v))
		race(R, is_write ? 2 : 0, space, core, storage, g, (int)w, r, v);
	if (!is_write) {
		if ((int)rd == r)
			return w && (int)w != r && !hb(R, (int)w, v);
		if (!rd || (R->rec[rd].agent >= 0 && hb(R, (int)rd, v)))
			sh[2 * g + 1] = (uint32_t)r;
		else
			sh[2 * g + 1] = (uint32_t)read_add(R, (int)rd, r, v);
		return R->n_found != n0 || R->n_races != n1 ||
		       (w && (int)w != r && !hb(R, (int)w, v));
	}
	if (rd) {
		const rrec *s = &R->rec[rd];
		if (s->agent >= 0) {
			if ((int)rd != r && !hb(R, (int)rd, v))
				race(R, 1, space, core, storage, g, (int)rd, r,
				     v);
		} else {
			for (int k = 0; k < s->nit; k++) {
				int m = R->setpool[s->it + k];
				if (m != r && !hb(R, m, v))
					race(R, 1, space, core, storage, g, m,
					     r, v);
				s = &R->rec[rd];
			}
		}
	}
	sh[2 * g] = (uint32_t)r;
	sh[2 * g + 1] = 0;
	return R->n_found != n0 || R->n_races != n1 || raced_any(R, w, rd, r, v);
}

/* The last granule's state before and after, when it found no race: a
** granule in the same state ends in the same state without a check. */
typedef struct gcache {
	int have;
	uint32_t w, rd, nw, nrd;
} gcache;

static void gran_slow(ls_race_st *R, gcache *c, uint32_t *sh, int64_t g,
		      int r, const uint32_t *v, int is_write, int space,
		      int core, int storage)
{
	uint32_t w = sh[2 * g], rd = sh[2 * g + 1];
	c->have = !touch(R, sh, g, r, v, is_write, space, core, storage);
	c->w = w;
	c->rd = rd;
	c->nw = sh[2 * g];
	c->nrd = sh[2 * g + 1];
}

/* Granule g: the common case (the state of the granule before it) in
** line, the rest in gran_slow. */
static inline void gran(ls_race_st *R, gcache *c, uint32_t *sh, int64_t g,
			int r, const uint32_t *v, int is_write, int space,
			int core, int storage)
{
	uint32_t *p = sh + 2 * g;
	if (c->have && p[0] == c->w && p[1] == c->rd) {
		p[0] = c->nw;
		p[1] = c->nrd;
		return;
	}
	gran_slow(R, c, sh, g, r, v, is_write, space, core, storage);
}

void ls_race_access(ls_race_st *R, int r, const uint32_t *v, int core,
		    const ls_opnd *o, int is_write, const uint8_t *mask)
{
	int64_t ng, idx[LS_MAX_DIMS], last_g = -1;
	uint32_t *sh;
	int nd = o->ndim, storage;
	gcache c;
	if (o->space != LS_SP_SB && o->space != LS_SP_PSUM &&
	    o->space != LS_SP_DRAM)
		return;
	if (o->count <= 0 || nd <= 0 || core < 0 || core >= LS_MAX_CORES)
		return;
	if (!(sh = shadow_of(R, core, o, &ng)))
		return;
	storage = o->space == LS_SP_DRAM ? o->storage : -1;
	if (o->space == LS_SP_DRAM)
		core = -1;
	memset(idx, 0, sizeof idx);
	c.have = 0;
	for (;;) {
		int64_t b = o->off, n = o->num[nd - 1], st = o->stride[nd - 1];
		for (int d = 0; d < nd - 1; d++)
			b += idx[d] * o->stride[d];
		if (st == o->esize && !mask) {
			int64_t g0 = b / GRAN, g1 = (b + n * st - 1) / GRAN;
			/* the granule the row before ended in, touched by
			   this record already (touching it again changes
			   nothing): rows need not ascend */
			if (g0 == last_g)
				g0 = last_g + 1;
			if (g0 < 0)
				g0 = 0;
			if (g1 >= ng)
				g1 = ng - 1;
			for (int64_t g = g0; g <= g1; g++) {
				/* a run of granules in the state of the last
				   one checked: the same new state */
				if (c.have) {
					const uint32_t w = c.w, rd = c.rd;
					const uint32_t nw = c.nw, nrd = c.nrd;
					uint32_t *p = sh + 2 * g;
					while (g <= g1 && p[0] == w &&
					       p[1] == rd) {
						p[0] = nw;
						p[1] = nrd;
						p += 2;
						g++;
					}
					if (g > g1)
						break;
				}
				gran_slow(R, &c, sh, g, r, v, is_write,
					  o->space, core, storage);
			}
			last_g = (b + n * st - 1) / GRAN;
		} else {
			for (int64_t k = 0; k < n; k++) {
				int64_t e = b + k * st;
				int64_t g0 = e / GRAN, g1 = (e + o->esize - 1) /
							    GRAN;
				if (mask && !mask[k])
					continue;
				for (int64_t g = g0; g <= g1 && g < ng; g++)
					if (g >= 0 && g != last_g)
						gran(R, &c, sh, g, r, v,
						     is_write, o->space, core,
						     storage);
				last_g = g1;
			}
		}
		int d = nd - 2;
		if (mask)
			mask += n;
		while (d >= 0 && ++idx[d] >= o->num[d])
			idx[d--] = 0;
		if (d < 0)
			break;
	}
}

/*
** The host reads every output of a dispatched run at its end, ordered
** after h (docs/race.md, "The end of a linked run"): each granule of
** storage st whose last write h does not cover is a RAW race against
** the host's read.
*/
void ls_race_host_read(ls_race_st *R, const uint32_t *h, int st)
{
	int64_t ng;
	uint32_t *sh;
	int r;
	if (st < 0 || st >= R->mc->n_storages || !(sh = R->shd[st]))
		return;
	ng = (R->mc->storages[st].bytes + GRAN - 1) / GRAN;
	r = new_rec(R);
	R->rec[r].agent = 0;
	R->rec[r].clock = UINT32_MAX;
	R->rec[r].core = -1;
	R->rec[r].eng = -1;
	for (int64_t g = 0; g < ng; g++) {
		uint32_t w = sh[2 * g];
		if (w && !hb(R, (int)w, h))
			race(R, 0, LS_SP_DRAM, -1, st, g, (int)w, r, h);
	}
}

/*
** The memory limit (bytes) the detector's own state shares with the
** simulated memory: what the storages (with their initialization and
** race shadows and host copies, as ls_check_memory_race counts them)
** leave of it.
*/
void ls_race_set_limit(ls_race_st *R, int64_t limit)
{
	int64_t need = 0;
	for (int i = 0; i < R->mc->n_storages; i++) {
		const ls_storage *st = &R->mc->storages[i];
		need += 4 * st->bytes;
		if (st->is_input || st->is_output ||
		    (st->alloc && st->alloc->kind == LM_TK_CONST))
			need += st->bytes;
	}
	R->budget = limit - need;
}

/* Has the detector's state outgrown the limit? Its size in *bytes. */
int ls_race_over(const ls_race_st *R, int64_t *bytes)
{
	*bytes = R->dyn;
	return R->dyn > R->budget;
}

/* The races found so far. */
int64_t ls_race_found(const ls_race_st *R)
{
	return R->n_found;
}

int64_t ls_race_shadow_bytes(const ls_race_st *R)
{
	return R->shadow_bytes;
}

/* ---- semaphores and events ---------------------------------------------- */

void ls_race_sem_set(ls_race_st *R, int sem, int32_t value, int is_write)
{
	semlog *l;
	sentry *e;
	if (sem < 0 || sem >= R->mc->n_sems)
		return;
	l = &R->sl[sem];
	if (is_write) /* the value written owes nothing to the updates before */
		memset(l->cum, 0, (size_t)R->nag * sizeof *l->cum);
	ls_race_join(R, l->cum, R->cur);
	if (l->n == SEMLOG_CAP) {
		e = &l->e[l->head];
		l->base = e->value;
		l->head = (l->head + 1) % SEMLOG_CAP;
		l->n--;
		l->evicted = 1;
	} else {
		e = &l->e[(l->head + l->n) % SEMLOG_CAP];
		e->cum = vc_alloc(R);
	}
	e->value = value;
	ls_race_copy(R, e->cum, l->cum);
	l->n++;
}

/*
** A wait for sem >= thr holds now: join (into R->tgt) the updates up to
** the one that brought the semaphore to thr after it was last below thr.
*/
void ls_race_sem_wait(ls_race_st *R, int sem, int64_t thr)
{
	semlog *l;
	int k;
	if (sem < 0 || sem >= R->mc->n_sems || !R->tgt)
		return;
	l = &R->sl[sem];
	for (k = l->n - 1; k >= 0; k--)
		if ((int64_t)l->e[(l->head + k) % SEMLOG_CAP].value < thr)
			break;
	if (k + 1 < l->n) {
		if (k < 0 && !l->evicted && (int64_t)l->base >= thr)
			return; /* held since the start */
		if (k < 0 && l->evicted)
			R->overflow++;
		ls_race_join(R, R->tgt,
			     l->e[(l->head + k + 1) % SEMLOG_CAP].cum);
	}
}

void ls_race_evt_set(ls_race_st *R, int core, int id)
{
	uint32_t **p;
	if (core < 0 || core >= R->ncore || id < 0 || id > 255)
		return;
	p = &R->evt[core * 256 + id];
	if (!*p)
		*p = vc_alloc(R);
	memset(*p, 0, (size_t)R->nag * sizeof **p);
	ls_race_join(R, *p, R->cur);
}

void ls_race_evt_wait(ls_race_st *R, int core, int id)
{
	if (core < 0 || core >= R->ncore || id < 0 || id > 255 || !R->tgt)
		return;
	ls_race_join(R, R->tgt, R->evt[core * 256 + id]);
}

/* ---- dependency targets ------------------------------------------------- */

int ls_race_hist_new(ls_race_st *R)
{
	grow(R, &R->hs, &R->cap_hs, R->n_hs + 1, sizeof *R->hs);
	R->hs[R->n_hs] = lm_xcalloc(1, sizeof(hist));
	R->dyn += (int64_t)sizeof(hist);
	return R->n_hs++;
}

void ls_race_hist_push(ls_race_st *R, int h, int64_t bseq,
		       const int64_t *ords, int depth, const uint32_t *vc)
{
	hist *H = R->hs[h];
	hentry *e;
	if (H->n == HIST_CAP) {
		e = &H->e[H->head];
		H->head = (H->head + 1) % HIST_CAP;
		H->n--;
		H->evicted = 1;
	} else {
		e = &H->e[(H->head + H->n) % HIST_CAP];
		e->vc = vc_alloc(R);
	}
	e->bseq = bseq;
	memset(e->ords, 0, sizeof e->ords);
	for (int j = 0; j < depth && j < LS_MAX_NEST; j++)
		e->ords[j] = ords[j];
	if (vc)
		ls_race_copy(R, e->vc, vc);
	else
		memset(e->vc, 0, (size_t)R->nag * sizeof *e->vc);
	H->n++;
}

static ls_pos hpos(const ls_sfunc *sf, int a, const hentry *e)
{
	ls_pos p;
	int l = sf->insts[a].loop;
	p.bseq = e->bseq;
	p.depth = l < 0 ? 0 : sf->loops[l].depth + 1;
	p.loops = l < 0 ? NULL : sf->loops[l].chain;
	p.ords = e->ords;
	p.idx = a;
	return p;
}

/* Join into dst the instances of a (history h) last before q in program
** order (every copy of an instruction on ALL at that position). */
void ls_race_hist_join(ls_race_st *R, int h, const ls_sfunc *sf, int a,
		       const ls_pos *q, uint32_t *dst)
{
	hist *H = R->hs[h];
	const hentry *best = NULL;
	for (int k = 0; k < H->n; k++) {
		const hentry *e = &H->e[(H->head + k) % HIST_CAP];
		ls_pos p = hpos(sf, a, e), bp;
		if (ls_pos_cmp(sf, &p, q) >= 0)
			continue;
		if (best) {
			bp = hpos(sf, a, best);
			if (ls_pos_cmp(sf, &p, &bp) < 0)
				continue;
		}
		best = e;
	}
	if (!best) {
		/* the instance waited for was dropped: the oldest kept
		   (later, so this may hide a race, never add one) */
		if (H->evicted && H->n > 0) {
			R->overflow++;
			ls_race_join(R, dst, H->e[H->head].vc);
		}
		return;
	}
	for (int k = 0; k < H->n; k++) {
		const hentry *e = &H->e[(H->head + k) % HIST_CAP];
		ls_pos p = hpos(sf, a, e), bp = hpos(sf, a, best);
		if (ls_pos_cmp(sf, &p, &bp) == 0)
			ls_race_join(R, dst, e->vc);
	}
}

/* ---- barrier ids -------------------------------------------------------- */

static void sarr_add(ls_race_st *R, sarr **v, int *n, int *cap,
		     int32_t agent, uint32_t tick, int rec)
{
	grow(R, v, cap, *n + 1, sizeof **v);
	(*v)[*n].agent = agent;
	(*v)[*n].tick = tick;
	(*v)[*n].rec = rec;
	(*n)++;
}

/*
** Instruction si (engine agent, core, engine eng; its clock just ticked)
** arrives at barrier id `id` of module mod for group `group`. An id is
** held from a group's first arrival to its release: every arrival of the
** group that takes the id over must be ordered after every arrival of
** the group that held it before (so after its release), else in some
** schedule the two hold the id at once -- a SLOT race, whichever order
** this schedule took (docs/race.md, "Barrier ids").
*/
void ls_race_barrier(ls_race_st *R, int mod, int64_t id, int group,
		     int agent, const ls_sinst *si, int core, int eng)
{
	const uint32_t *v = R->vc[agent];
	bslot *b = NULL;
	int r;
	for (int i = 0; i < R->n_slots && !b; i++)
		if (R->slots[i].mod == mod && R->slots[i].id == id)
			b = &R->slots[i];
	if (!b) {
		grow(R, &R->slots, &R->cap_slots, R->n_slots + 1,
			sizeof *R->slots);
		b = &R->slots[R->n_slots++];
		memset(b, 0, sizeof *b);
		b->mod = mod;
		b->id = id;
		b->group = b->prev_group = -1;
	}
	if (b->group != group) {
		sarr *t = b->prev;
		int tc = b->cap_prev;
		b->prev = b->cur;
		b->n_prev = b->n_cur;
		b->cap_prev = b->cap_cur;
		b->prev_group = b->group;
		b->cur = t;
		b->cap_cur = tc;
		b->n_cur = 0;
		b->group = group;
	}
	r = ls_race_rec(R, agent, v[agent], si, core, eng, NULL, NULL, 0);
	sarr_add(R, &b->cur, &b->n_cur, &b->cap_cur, agent, v[agent], r);
	for (int i = 0; i < b->n_prev; i++)
		if (b->prev[i].tick > v[b->prev[i].agent])
			race_at(R, 3, LS_RACE_SLOT, -1, mod, id, id + 1,
				b->prev[i].rec, r, v);
}

/* ---- errors kept --------------------------------------------------------- */

void ls_race_keep_error(ls_race_st *R, const lm_error *e)
{
	if (!R->kept.code)
		R->kept = *e;
}

const lm_error *ls_race_kept_error(const ls_race_st *R)
{
	return R->kept.code && R->n_found_mem == 0 ? &R->kept : NULL;
}

/* A run that failed with err after races were found: err says so, with
** the first race ("; --race: N races before it, first: ..."). */
void ls_race_note_error(ls_race_st *R, lm_error *err)
{
	ls_result r;
	lm_buf b = LM_BUF_INIT;
	size_t n = strlen(err->msg);
	if (R->n_found == 0 || R->n_races == 0)
		return;
	memset(&r, 0, sizeof r);
	ls_race_collect(R, &r);
	lm_buf_printf(&b, "; --race: %lld race%s before it, first: ",
		      (long long)R->n_found, R->n_found == 1 ? "" : "s");
	ls_race_format(&r.races[0], &b);
	ls_races_free(r.races, r.n_races);
	if (n + b.size + 1 > sizeof err->msg && n > sizeof err->msg / 2) {
		/* keep the race: the error's own text is cut */
		n = sizeof err->msg / 2;
		err->msg[n] = 0;
	}
	snprintf(err->msg + n, sizeof err->msg - n, "%s", lm_buf_cstr(&b));
	lm_buf_free(&b);
}

/* ---- the result --------------------------------------------------------- */

static const char *kind_name[4] = { "RAW", "WAR", "WAW", "SLOT" };

static void side(const ls_race_st *R, const rrec *p, char **func,
		 char **block, char **inst, char **iter, int64_t *core,
		 char **eng)
{
	const ls_machine *mc = R->mc;
	const ls_sfunc *sf;
	lm_buf b = { 0 };
	if (!p->si) { /* the host's read of the outputs at the end */
		*func = lm_xstrdup("(host)");
		*block = lm_xstrdup("");
		*inst = lm_xstrdup("end-of-run");
		*iter = lm_xstrdup("");
		*core = -1;
		*eng = lm_xstrdup("host");
		return;
	}
	sf = &mc->fns[p->si->fn];
	*func = lm_xstrdup(sf->f && sf->f->name ? sf->f->name : "");
	*block = lm_xstrdup(sf->n_blocks > 0 && p->si->blk >= 0 &&
			    p->si->blk < sf->n_blocks && sf->bnames[p->si->blk]
			    ? sf->bnames[p->si->blk] : "");
	*inst = lm_xstrdup(p->si->in && p->si->in->name ? p->si->in->name
			   : "");
	for (int j = 0; j < p->nit; j++) {
		int l = (int)R->itpool[p->it + 2 * j];
		const char *ax = l >= 0 && l < sf->n_loops &&
				 sf->loops[l].axis ? sf->loops[l].axis : "?";
		lm_buf_printf(&b, "%s%s=%lld", j ? "," : "", ax,
			      (long long)R->itpool[p->it + 2 * j + 1]);
	}
	*iter = lm_xstrdup(lm_buf_cstr(&b));
	lm_buf_free(&b);
	*core = p->core;
	if (p->eng < LS_ENGINES)
		*eng = lm_xstrdup(ls_engine_name(p->eng));
	else
		*eng = lm_xasprintf("queue %s",
				    mc->qinsts[p->eng - LS_ENGINES].name ?
				    mc->qinsts[p->eng - LS_ENGINES].name : "");
}

static int race_cmp(const void *x, const void *y)
{
	const ls_race *a = x, *b = y;
	int c;
	if ((c = strcmp(a->memory, b->memory)) != 0)
		return c;
	if (a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if ((c = strcmp(a->object, b->object)) != 0)
		return c;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if ((c = strcmp(a->kind, b->kind)) != 0)
		return c;
	if ((c = strcmp(a->a_inst, b->a_inst)) != 0)
		return c;
	return strcmp(a->b_inst, b->b_inst);
}

void ls_race_collect(ls_race_st *R, ls_result *out)
{
	out->n_races = R->n_races < RACES_KEPT ? R->n_races : RACES_KEPT;
	out->races_found = R->n_found;
	out->race_shadow_bytes = R->shadow_bytes;
	out->races = lm_xcalloc((size_t)out->n_races + 1, sizeof *out->races);
	for (int i = 0; i < out->n_races; i++) {
		const rrace *x = &R->races[i];
		ls_race *o = &out->races[i];
		o->kind = lm_xstrdup(kind_name[x->kind]);
		o->memory = lm_xstrdup(x->space == LS_SP_SB ? "SBUF" :
				       x->space == LS_SP_PSUM ? "PSUM" :
				       x->space == LS_RACE_SLOT ? "BARRIER" :
				       "DRAM");
		o->core = x->core;
		if (x->space == LS_RACE_SLOT)
			o->object = lm_xasprintf("id %lld", (long long)x->lo);
		else
			o->object = lm_xstrdup(x->space == LS_SP_DRAM &&
					       R->mc->storages[x->storage].name
					       ? R->mc->storages[x->storage].name
					       : "");
		o->lo = x->lo;
		o->hi = x->hi;
		side(R, &x->a, &o->a_func, &o->a_block, &o->a_inst, &o->a_iter,
		     &o->a_core, &o->a_engine);
		side(R, &x->b, &o->b_func, &o->b_block, &o->b_inst, &o->b_iter,
		     &o->b_core, &o->b_engine);
		o->last_common = lm_xstrdup(x->common && x->common->in &&
					    x->common->in->name ?
					    x->common->in->name : "");
	}
	qsort(out->races, (size_t)out->n_races, sizeof *out->races, race_cmp);
}

void ls_races_free(ls_race *r, int n)
{
	for (int i = 0; i < n; i++) {
		free(r[i].kind);
		free(r[i].memory);
		free(r[i].object);
		free(r[i].a_func);
		free(r[i].a_block);
		free(r[i].a_inst);
		free(r[i].a_iter);
		free(r[i].a_engine);
		free(r[i].b_func);
		free(r[i].b_block);
		free(r[i].b_inst);
		free(r[i].b_iter);
		free(r[i].b_engine);
		free(r[i].last_common);
	}
	free(r);
}

void ls_race_format(const ls_race *r, lm_buf *b)
{
	lm_buf_printf(b, "%s %s[%lld] %s [%lld,%lld): %s (%s/%s/%s %s core "
		      "%lld %s) vs %s (%s/%s/%s %s core %lld %s); last common: "
		      "%s", r->kind, r->memory, (long long)r->core,
		      r->object[0] ? r->object : "-", (long long)r->lo,
		      (long long)r->hi, r->a_inst, r->a_func, r->a_block,
		      r->a_inst, r->a_iter[0] ? r->a_iter : "-",
		      (long long)r->a_core, r->a_engine, r->b_inst, r->b_func,
		      r->b_block, r->b_inst, r->b_iter[0] ? r->b_iter : "-",
		      (long long)r->b_core, r->b_engine,
		      r->last_common[0] ? r->last_common : "-");
}

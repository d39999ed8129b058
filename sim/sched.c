/*
** sched.c -- the event scheduler and the two entry
** points ls_run / ls_run_multi.
**
** Time is integer picoseconds. Each core has five in-order engines (PE,
** Activation, DVE, Pool, SP). Each engine walks its own stream of each
** function (machine.c prepares them) with a cursor per activation it is
** inside: a launched function, or the body of a Call on a core or of an
** NKIKernel, which it descends into at the call's place in program order,
** so the callee runs synchronously in the call's place. Items that take
** no time are passed at once (entering and leaving activations and
** loops, SwitchQueueInstance applied to the engine's own view of the
** active queue instances, Break); a Loop's body is gone round with the
** engine's loop frame, a back edge costing the engine a cycle. A branch
** moves the cursor to the block it names (each engine on its own
** registers; block entries are counted and logged per activation, so that
** positions stay in program order and engines that part ways are caught);
** a Halt stops its engine where it is. An engine
** starts its next instruction when its previous one finished, every
** dependency is met (positions in program order, ls_sdep) and every wait
** holds; the semantics (exec.c) read memory then, and the staged write is
** committed when the instruction completes. A DMA frees its issuing engine
** after the issue cost and completes when its transfer ends; transfers of
** one queue instance share its bandwidth and complete in FIFO order.
** A DMATrigger fires a DMA block onto its instance's queue, whose head
** runs its descriptors one transfer each (the "DMA blocks" section).
** CoreBarrier arrivals are matched by group across cores; the id slot
** tables (one per module) catch collisions. A run ends when no event is
** left: anything still to run then is a deadlock.
**
** The scheduler knows opcode semantics only through ls_exec_start /
** ls_exec_commit, and costs only through the prepared cycles (cost.c).
*/
#include "common.h"
#include "sim_int.h"
#include "arch.h"

#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

enum { EV_ENG = 0, EV_DMA, EV_BAR, EV_DESC };

typedef struct event {
	int64_t t;
	uint64_t key;
	int kind, a, b;
} event;

/* The incomplete issued instances of an instruction inside loops, oldest
** first: the iteration of each loop around it, per instance (a ring). */
typedef struct ring {
	int n, head, cap, depth;
	int64_t *ords;
} ring;

/*
** An activation: a launched function on a core, or the body of a Call or
** NKIKernel (IT55) on a core: then parent_act / parent_idx name the call,
** the body's instructions may not start before the call has started
** (gate_open), and the call completes when its issue is done, every
** engine with an item in the body has left it and nothing issued in it
** is incomplete. st[e]: 0 engine e has not entered, 1 inside (its frame
** fi[e]), 2 left.
*/
typedef struct act {
	int fn, core, depth;
	int parent_act, parent_idx;
	int gate_open;
	int issue_done;
	int is_over;
	unsigned mask;          /* engines with items in the body */
	int inside;             /* of them, those not left */
	int64_t outstanding;    /* instances issued, not complete */
	signed char st[LS_ENGINES];
	int fi[LS_ENGINES];
	int *sub;               /* Call / IT55: the body's act, -1 (has_calls) */
	int *nout;              /* per dependency target: incomplete instances */
	ring *rings;            /* per target in a loop (any target, in a
				   function with branches): their positions */
	/* a function with branches: the block of each block entry made so
	   far (the last LS_BLOG of them; block * LS_ENGINES + the engine
	   that made it first), made: how many */
	int *blog;
	int64_t made;
	int kern;               /* the kernel call whose body this is or is
				   inside (an index of sim.kern), -1: none */
	/* the race detector: the clock the body starts from (the call's) and
	   what its items' completions and leaving engines joined (saved
	   clock ids, 0: none); the engines that joined rent; per dependency
	   target its history + 1 (0: none) */
	int rent, racc;
	unsigned rjoined;
	int *rh;
} act;

/* Block entries of an activation checked for divergence (the log). */
#define LS_BLOG 4096

typedef struct item {
	int act, idx;
} item;

/* An engine's pass through one loop: the induction value, the iteration
** (0 first), the stream positions of the body's start and end. */
typedef struct lframe {
	int loop;
	int64_t iv, ord;
	int64_t ub;             /* the bound of this pass (a DynamicForLoop's
				   evaluated at entry) */
	int body_pos, end_pos;
} lframe;

/* An engine's cursor in one activation. In a function with branches:
** the block it is in, its entry number bseq (block entries before it),
** and per block the entry numbers of its last two entries (bin[2b],
** bin[2b+1]; -1: none) -- what a dependency's instance is found by. */
typedef struct frame {
	int act;
	int pos;                /* stream position of the next item */
	int call_issued;        /* the item at pos is a call e issued */
	int nl;
	lframe l[LS_MAX_NEST];
	int blk;
	int64_t bseq;
	int64_t *bin;           /* owned */
} frame;

/* Why rescan may skip a blocked engine (engine.skip). */
enum { SKIP_NO = 0, SKIP_DEP, SKIP_SYNC };

typedef struct engine {
	frame *fr;              /* cursors, the innermost activation last */
	int nfr, cap_fr;
	int *launch;            /* launched activations not entered yet */
	int lhead, nlaunch, cap_launch;
	int *active;            /* per global queue: the active instance in
				   this engine's program order */
	int busy;
	item cur;               /* idx -1: a loop's back edge */
	int cur_completes;   /* engine-done completes the instruction */
	int is_blocked;
	/* blocked on a dependency (SKIP_DEP) or a semaphore or event wait
	   (SKIP_SYNC), seen so at these epochs: rescan skips the engine
	   until one of them moves (0: try it) */
	int skip;
	unsigned seen_epoch, seen_gepoch, seen_sync;
	int sync_key;           /* SKIP_SYNC: the wait's resource */
	const ls_sinst *halt;   /* the Halt that stopped it, or NULL */
	ls_pending pend;
	int rrec;               /* race: the access record of cur */
} engine;

typedef struct core {
	int used;
	int64_t *fire;          /* per DMATrigger of the machine: its fires
				   since the last rewind (dmablk.c) */
	engine eng[LS_ENGINES];
	ls_core_stats st;
	ls_waitclock wait[LS_ENGINES];
} core;

/*
** A transfer in flight (a DMA instruction's, or a descriptor's: owner its
** block), or a fired DMA block on its queue instance (blk >= 0: act, idx
** its trigger, eng the trigger's engine, cur the next descriptor, n_fly
** those in flight, opened: its own waits held), or a DMA instruction
** queued behind descriptors (blk -1 in a queue). next_q: the next of the
** instance's queue.
*/
typedef struct dma {
	int act, idx, core, eng, qinst, next_free;
	int64_t start;
	ls_pending pend;
	int blk, cur, n_fly, opened, owner, next_q;
	int rvc, rrec;          /* race: the clock it reads (and completes)
				   after, its access record */
} dma;

/* A queue instance's DMA blocks and the DMAs behind them, oldest first
** (indices into dmas, -1: none); kick: an EV_DESC pending for it;
** waiting: its head waits for a semaphore. */
typedef struct dqueue {
	int head, tail;
	int kick, waiting;
} dqueue;

typedef struct arrival {
	int core, eng, act, idx, mod;
	int64_t t;
} arrival;

/* A join (AllEngineBarrier / Exit on ALL) of activation act: the engines
** arrived (each parked at it from t[e]), the last to arrive (checker:
** it polls the join's dependencies and waits), started once. */
typedef struct join {
	int act, idx, core;
	unsigned arrived;
	int checker, started;
	int64_t t[LS_ENGINES];
} join;

typedef struct group {
	int n_cores;
	int64_t cores[LS_MAX_CORES];
	int first_act, first_idx;
	int n_arr;
	arrival arr[LS_MAX_CORES];
	uint64_t arrived;
	int released;
} group;

typedef struct sim {
	ls_machine *mc;
	ls_options opt;
	lm_error *err;
	int rc;
	core cores[LS_MAX_CORES];
	act *acts;
	int n_acts, cap_acts;
	dma *dmas;
	int n_dmas, cap_dmas, free_dma;
	dqueue *dq;          /* per queue instance */
	int n_dq_waiting;
	group *groups;
	join *joins;            /* the joins some engine has reached */
	int n_joins, cap_joins;
	event *heap;
	int nh, cap_h;
	uint64_t seq;
	int64_t now, last;
	int64_t n_instr;
	int64_t n_walked;    /* instructions of the call trees launched */
	unsigned *fmask;     /* per function: engines with items, +1 (0:
				not known yet) */
	uint8_t *xread;      /* per storage: an external output another
				module's instruction read */
	int *blocked;        /* core * LS_ENGINES + eng */
	int n_blocked, cap_blocked;
	/* rescan's stamp of the engines it kept (kept_gen: this rescan) */
	unsigned kept_gen;
	unsigned kept[LS_MAX_CORES * LS_ENGINES];
	/* moves whenever anything a dependency check reads may have
	   changed: per core (an engine's cursor moved or started, an
	   instruction of the core's activations completed) and for all
	   (a barrier or DMA-block event) */
	unsigned epoch[LS_MAX_CORES];
	unsigned gepoch;
	int dirty;
	ls_exec x;
	ls_trace trace;
	int tracing;
	ls_matmul_rec *mm;
	int n_mm, cap_mm;
	/* the instruction the semantics see: si, or dsi with the operands
	   placed at this issue (dop) */
	int64_t edge_ps[LS_ENGINES]; /* a back edge on each engine */
	const ls_sinst *xsi;
	ls_sinst dsi;
	ls_opnd *dop;
	int cap_dop;
	ls_race_st *R;          /* the race detector (opts.race), or NULL */
	int dispatched;         /* the entries are a dispatcher's Calls */
	int rhost;              /* race: the join of the launched functions'
				   Returns (a saved clock id, 0: none) */
	ls_kacc *kern;          /* the NKIKernel calls reached (NULL: none) */
	int n_kern, cap_kern;
} sim;

/* ---- helpers ------------------------------------------------------------ */

static ls_sinst *sinst_of(sim *s, item it);
static void dep_points(sim *s, const frame *F, int b, const ls_sdep *d,
		       ls_pos *t, ls_pos *q, int64_t *ords, int64_t *po);

/* ---- the race detector's hooks (race.c; none runs when s->R is NULL) -- */

static uint32_t *rvc_eng(sim *s, int c, int e)
{
	return ls_race_vc(s->R, ls_race_agent(s->R, c, e));
}

/* The saved clock *id (made on first use). */
static uint32_t *rvc_slot(sim *s, int *id)
{
	if (!*id)
		*id = ls_race_vc_new(s->R);
	return ls_race_vc_get(s->R, *id);
}

/* Engine e of core c runs an item of activation ai: the body of a call
** starts after the call. */
static void race_enter(sim *s, int c, int e, int ai)
{
	act *a = &s->acts[ai];
	if (a->parent_act < 0 || (a->rjoined >> e & 1))
		return;
	a->rjoined |= 1u << e;
	if (a->rent)
		ls_race_join(s->R, rvc_eng(s, c, e),
			     ls_race_vc_get(s->R, a->rent));
}

/* The instance of si (index b) at cursor F of engine e is ordered after
** the instances of each dependency it waited for. */
static void race_deps(sim *s, int c, int e, const frame *F,
		      const ls_sinst *si, int b)
{
	const act *A = &s->acts[F->act];
	const ls_sfunc *sf = &s->mc->fns[A->fn];
	for (int i = 0; i < si->n_deps && A->rh; i++) {
		const ls_sdep *d = &si->deps[i];
		int64_t ords[LS_MAX_NEST], po[LS_MAX_NEST];
		ls_pos t, q;
		if (!A->rh[d->a])
			continue;
		dep_points(s, F, b, d, &t, &q, ords, po);
		if (t.bseq < 0)
			continue;
		ls_race_hist_join(s->R, A->rh[d->a] - 1, sf, d->a, &q,
				  rvc_eng(s, c, e));
	}
}

/* Instruction it starts on engine e of core c (cursor F): its clock
** joins what it waits for, ticks; its record is made. */
static void race_start(sim *s, int c, int e, item it, const frame *F,
		       const ls_sinst *si)
{
	int ag = ls_race_agent(s->R, c, e);
	uint32_t *v = ls_race_vc(s->R, ag), clk;
	engine *E = &s->cores[c].eng[e];
	race_enter(s, c, e, it.act);
	if (si->n_deps)
		race_deps(s, c, e, F, si, it.idx);
	if (si->sy.n_wait) {
		ls_race_set_tgt(s->R, v);
		ls_sync_race_join(s->mc, c, e, &si->sy);
	}
	if (si->op == LM_OP_DRAIN)
		ls_race_join(s->R, v, ls_race_drain(s->R, c, e));
	clk = ls_race_tick(s->R, ag, si);
	if (si->op == LM_OP_RETURN && si->loop < 0 && s->dispatched &&
	    s->acts[it.act].parent_act < 0)
		ls_race_join(s->R, rvc_slot(s, &s->rhost), v);
	E->rrec = 0;
	if (si->n_ins || si->n_outs) {
		int lp[LS_MAX_NEST];
		int64_t iv[LS_MAX_NEST];
		for (int j = 0; j < F->nl; j++) {
			lp[j] = F->l[j].loop;
			iv[j] = F->l[j].iv;
		}
		E->rrec = ls_race_rec(s->R, ag, clk, si, c, e, lp, iv, F->nl);
	}
}

/* The reads of si (operands as placed, and an indirect move's indices;
** of its source the rows it read, after ls_exec_start) by record r at
** clock v. */
static void race_reads(sim *s, int c, int r, const uint32_t *v,
		       const ls_sinst *si)
{
	const ls_exec *x = &s->x;
	int rows = (si->op == LM_OP_INDIRECTLOAD ||
		    si->op == LM_OP_INDIRECTCOPY) && x->si == si &&
		   x->n_rows >= 0;
	for (int i = 0; i < si->n_ins && r; i++)
		if (i > 0 || !rows)
			ls_race_access(s->R, r, v, c, &si->ins[i], 0, NULL);
	for (int k = 0; r && rows && k < x->n_rows; k++)
		ls_race_access(s->R, r, v, c, &x->rows[k], 0, NULL);
	if (r && si->dq && si->dq->idx && si->dq->idx->space)
		ls_race_access(s->R, r, v, c, si->dq->idx, 0, NULL);
}

/* The write staged in p, by record r at clock v. */
static void race_writes(sim *s, int c, int r, const uint32_t *v,
			const ls_pending *p)
{
	if (!p->active || !r)
		return;
	ls_race_access(s->R, r, v, c, &p->dsto, 1,
		       p->is_masked && !p->is_deferred ? p->mask : NULL);
	if (p->has2)
		ls_race_access(s->R, r, v, c, &p->dsto2, 1, NULL);
}

/* Transfer d completed on its instance: the instance's completion clock
** joins d's and ticks; d's write is checked; the updates that follow
** are ordered after it. */
static uint32_t *race_done(sim *s, dma *d, const ls_sinst *si)
{
	int ag = ls_race_qagent(s->R, d->qinst, 1);
	uint32_t *v = ls_race_vc(s->R, ag), clk;
	int r;
	if (d->rvc)
		ls_race_join(s->R, v, ls_race_vc_get(s->R, d->rvc));
	clk = ls_race_tick(s->R, ag, si);
	if (d->rrec) {
		r = ls_race_rec_as(s->R, d->rrec, ag, clk,
				   LS_ENGINES + d->qinst);
		race_writes(s, d->core, r, v, &d->pend);
	}
	ls_race_set_cur(s->R, v);
	return v;
}

/* Every engine of core c at a join: all arrivals before the release. */
static void race_join_all(sim *s, int c)
{
	uint32_t *v0 = rvc_eng(s, c, 0);
	for (int e = 1; e < LS_ENGINES; e++)
		ls_race_join(s->R, v0, rvc_eng(s, c, e));
	for (int e = 1; e < LS_ENGINES; e++)
		ls_race_copy(s->R, rvc_eng(s, c, e), v0);
}

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A latency under the run's perturbation: up to +50%, seeded. */
static int64_t perturb(sim *s, int64_t d)
{
	uint64_t h;
	if (!s->opt.perturb_seed || d <= 0)
		return d;
	h = mix64(s->opt.perturb_seed ^ mix64(s->seq * 2 + 1));
	return d + (int64_t)((double)d * (double)(h % 1024) / 2048.0);
}

static const char *S(const char *x)
{
	return x ? x : "";
}

static ls_sinst *sinst_of(sim *s, item it)
{
	act *a = &s->acts[it.act];
	return &s->mc->fns[a->fn].insts[it.idx];
}

static const char *path_of(sim *s, const ls_sinst *si)
{
	return s->mc->mods[s->mc->fns[si->fn].mod].path;
}

/* An LM_ECHECK error at instruction si on core c. */
static int LM_PRINTF(4, 5) fail_at(sim *s, int c, const ls_sinst *si,
				   const char *fmt, ...)
{
	char where[512], what[800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	ls_where(s->mc, c, si, where, sizeof where);
	s->rc = lm_errc(s->err, LM_ECHECK, path_of(s, si), where, "%s", what);
	return s->rc;
}

/* ---- the event heap ----------------------------------------------------- */

static int ev_less(const event *a, const event *b)
{
	return a->t < b->t || (a->t == b->t && a->key < b->key);
}

static void push(sim *s, int64_t t, int kind, int a, int b)
{
	event e;
	int i;
	e.t = t;
	e.key = s->opt.perturb_seed ? mix64(s->opt.perturb_seed + s->seq)
				    : s->seq;
	s->seq++;
	e.kind = kind;
	e.a = a;
	e.b = b;
	lm_grow(&s->heap, &s->cap_h, s->nh + 1, sizeof *s->heap);
	i = s->nh++;
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!ev_less(&e, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = e;
}

static event pop(sim *s)
{
	event top = s->heap[0], last = s->heap[--s->nh];
	int i = 0;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		const event *mv = &last;
		if (l < s->nh && ev_less(&s->heap[l], mv)) {
			m = l;
			mv = &s->heap[l];
		}
		if (r < s->nh && ev_less(&s->heap[r], mv))
			m = r;
		if (m == i)
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (s->nh > 0)
		s->heap[i] = last;
	return top;
}

/* ---- cores, launches ---------------------------------------------------- */

static core *use_core(sim *s, int c)
{
	core *k = &s->cores[c];
	if (!k->used) {
		k->used = 1;
		k->st.core = c;
		for (int e = 0; e < LS_ENGINES; e++) {
			int *v = lm_xcalloc((size_t)s->mc->n_queues + 1,
					    sizeof(int));
			for (int q = 0; q < s->mc->n_queues; q++)
				v[q] = s->mc->queues[q].n_inst > 0 ?
				       s->mc->queues[q].insts[0] : -1;
			k->eng[e].active = v;
		}
	}
	return k;
}

static void try_start(sim *s, int c, int e);

/* Deepest nesting of Call / IT55 bodies followed (machine.c bounds IT55
** nesting too), and the most instructions the call trees of a run may
** hold (a Call body runs once per call: a call tree that fans out is
** refused before the first instruction runs). */
#define MAX_WALK_DEPTH 64
#define MAX_WALKED ((int64_t)1 << 25)

/*
** Does the Call si on core c run its target in place? A Call on a core
** runs its target synchronously on that core, at its place in program
** order (the BIR simulator's visitInstCall recurses into the callee where
** the call stands); a target tagged with another core cannot run here.
*/
static int call_in_place(const sim *s, const ls_sinst *si, int c)
{
	return si->op == LM_OP_CALL && !si->fault && si->target >= 0 &&
	       (s->mc->fns[si->target].core < 0 ||
		s->mc->fns[si->target].core == c);
}

/* Does call si (a Call or an NKIKernel) run a body on core c? */
static int descends(const sim *s, const ls_sinst *si, int c)
{
	return (si->op == LM_OP_NKIKERNEL && !si->fault && si->target >= 0) ||
	       call_in_place(s, si, c);
}

/* The engines with an item in function fn on core c, the bodies it calls
** included (memo: the call tree is checked for cycles before a launch). */
static unsigned fn_mask(sim *s, int fn, int c, int depth)
{
	const ls_sfunc *sf = &s->mc->fns[fn];
	unsigned m = 0;
	if (s->fmask[fn])
		return s->fmask[fn] - 1;
	for (int i = 0; i < sf->n_run; i++) {
		const ls_sinst *si = &sf->insts[i];
		if (si->heads >= 0 || si->op == LM_OP_DMABLOCK ||
		    ls_op_is_desc(si->op))
			continue;
		m |= si->is_all ? (1u << LS_ENGINES) - 1 : 1u << si->eng;
		if ((si->op == LM_OP_CALL || si->op == LM_OP_NKIKERNEL) &&
		    descends(s, si, c) && depth < MAX_WALK_DEPTH)
			m |= fn_mask(s, si->target, c, depth + 1);
	}
	/* a function's mask does not depend on the core unless a Call of
	   it is refused on one: keep the memo for the common case */
	if (!sf->has_calls)
		s->fmask[fn] = m + 1;
	return m;
}

/* A kernel call record for body activation ai (its parent: the call). */
static int new_kern(sim *s, int ai)
{
	const act *a = &s->acts[ai];
	const act *p = &s->acts[a->parent_act];
	const ls_sinst *si = &s->mc->fns[p->fn].insts[a->parent_idx];
	ls_kacc *k;
	lm_grow(&s->kern, &s->cap_kern, s->n_kern + 1, sizeof *s->kern);
	k = &s->kern[s->n_kern];
	memset(k, 0, sizeof *k);
	k->parent = p->kern;
	k->body = ai;
	k->st.core = a->core;
	k->st.call = lm_xstrdup(S(si->in->name));
	k->st.func = lm_xstrdup(S(si->in->func));
	k->st.caller = lm_xstrdup(S(s->mc->fns[p->fn].f->name));
	k->st.parent = p->kern;
	k->st.depth = p->kern < 0 ? 0 : s->kern[p->kern].st.depth + 1;
	return s->n_kern++;
}

/*
** A Call or NKIKernel started again from the same activation (its block
** entered once more through a branch): its body activation would be
** reused, already open and over, so the second run's body would neither
** wait for the call nor hold back its completion. Not modelled: a run
** error (1) instead of a silently wrong order.
*/
static int call_again(sim *s, int c, item it, const ls_sinst *si)
{
	const act *a = &s->acts[it.act];
	if (!a->sub || a->sub[it.idx] < 0 || !s->acts[a->sub[it.idx]].gate_open)
		return 0;
	fail_at(s, c, si, "%s '%s' reached again (its block entered once "
		"more through a branch): a call whose body runs more than "
		"once from one activation is not modelled",
		si->op == LM_OP_CALL ? "Call" : "NKIKernel call",
		S(si->in->name));
	return 1;
}

/* A new activation of fn on core c (parent: the call, or -1). */
static int new_act(sim *s, int fn, int c, int parent_act, int parent_idx,
		   int depth)
{
	const ls_sfunc *sf = &s->mc->fns[fn];
	act *a;
	int ai;
	unsigned m = fn_mask(s, fn, c, depth);
	lm_grow(&s->acts, &s->cap_acts, s->n_acts + 1, sizeof *s->acts);
	ai = s->n_acts++;
	a = &s->acts[ai];
	memset(a, 0, sizeof *a);
	a->fn = fn;
	a->core = c;
	a->depth = depth;
	a->parent_act = parent_act;
	a->parent_idx = parent_idx;
	a->gate_open = parent_act < 0;
	a->issue_done = parent_act < 0;
	a->mask = m;
	a->inside = __builtin_popcount(m);
	if (sf->has_calls) {
		a->sub = lm_xcalloc((size_t)sf->n + 1, sizeof(int));
		for (int i = 0; i < sf->n; i++)
			a->sub[i] = -1;
	}
	if (sf->has_targets)
		a->nout = lm_xcalloc((size_t)sf->n + 1, sizeof(int));
	if (sf->is_cfg) {
		a->blog = lm_xcalloc(LS_BLOG, sizeof *a->blog);
		a->made = 1; /* every engine starts in block 0 */
	}
	a->kern = parent_act < 0 ? -1 : s->acts[parent_act].kern;
	if (parent_act >= 0 && s->mc->fns[s->acts[parent_act].fn]
				       .insts[parent_idx].op == LM_OP_NKIKERNEL)
		a->kern = new_kern(s, ai);
	return ai;
}

/* The body of call (ai, idx) on core c: found, or made (-1: the calls
** nest too deep). */
static int child_of(sim *s, int ai, int idx)
{
	act *a = &s->acts[ai];
	const ls_sinst *si = &s->mc->fns[a->fn].insts[idx];
	int sub, depth = a->depth;
	if (a->sub[idx] >= 0)
		return a->sub[idx];
	if (!descends(s, si, a->core) || depth >= MAX_WALK_DEPTH)
		return -1;
	sub = new_act(s, si->target, a->core, ai, idx, depth + 1);
	s->acts[ai].sub[idx] = sub; /* s->acts may have moved */
	return sub;
}

static void complete(sim *s, item it);

/* Does function sf end in a Return (at its top level)? */
static int fn_returns(const ls_sfunc *sf)
{
	return sf->n_run > 0 && sf->insts[sf->n_run - 1].op == LM_OP_RETURN &&
	       sf->insts[sf->n_run - 1].loop < 0;
}

/* Does function fn use its core's id bank or events: a sync_info entry
** by id, on an event or on a named semaphore that has an id, or a
** GroupResetSemaphores? */
static int fn_uses_bank(const ls_machine *mc, int fn)
{
	const ls_sfunc *sf = &mc->fns[fn];
	for (int i = 0; i < sf->n; i++) {
		const ls_sinst *si = &sf->insts[i];
		int n = si->sy.n_wait + si->sy.n_update;
		if (si->op == LM_OP_GROUPRESET)
			return 1;
		for (int k = 0; k < n; k++) {
			const ls_ssync *e = &si->sy.wait[k];
			if (e->kind != LS_SYNC_NAMED || mc->sems[e->slot].id >= 0)
				return 1;
		}
	}
	return 0;
}

/*
** The Return ending activation ai is about to clear its core's bank and
** events: a run error (1) when another activation on the core that uses
** them has started (its call issued) and is still running (not ai, not
** one of its callers), since the clear would land at a moment only the
** schedule decides.
*/
static int bank_shared(sim *s, int ai)
{
	const act *a = &s->acts[ai];
	for (int b = 0; b < s->n_acts; b++) {
		const act *B = &s->acts[b];
		int up = 0;
		if (b == ai || B->is_over || !B->gate_open ||
		    B->core != a->core)
			continue;
		for (int p = a->parent_act; p >= 0 && !up;
		     p = s->acts[p].parent_act)
			up = p == b;
		if (up || !fn_uses_bank(s->mc, B->fn))
			continue;
		const ls_sfunc *sf = &s->mc->fns[a->fn];
		fail_at(s, a->core, &sf->insts[sf->n_run - 1],
			"the Return clears core %d's semaphore bank and events "
			"while function '%s', which uses them, still runs on "
			"the core: when the clear lands is up to the schedule "
			"(a bank shared by calls that overlap is not modelled)",
			a->core, s->mc->fns[B->fn].f->name);
		return 1;
	}
	return 0;
}

/* The activation is over when its call's issue is done (a launch: at
** once), every engine of its mask has left and nothing issued in it is
** incomplete: a Return at its end clears the core's bank, the call
** completes. */
static void act_check(sim *s, int ai)
{
	act *a = &s->acts[ai];
	if (a->is_over || !a->issue_done || a->inside > 0 ||
	    a->outstanding > 0)
		return;
	a->is_over = 1;
	if (s->R) {
		uint32_t *acc = rvc_slot(s, &s->acts[ai].racc);
		a = &s->acts[ai];
		if (a->rent)
			ls_race_join(s->R, acc, ls_race_vc_get(s->R, a->rent));
		ls_race_set_cur(s->R, acc);
	}
	if (fn_returns(&s->mc->fns[a->fn])) {
		if (bank_shared(s, ai))
			return;
		ls_sync_clear_bank(s->mc, a->core);
		s->dirty = 1;
	}
	if (a->kern >= 0 && s->kern[a->kern].body == ai) {
		s->kern[a->kern].st.end_ps = s->now;
		s->kern[a->kern].done = 1;
	}
	if (a->parent_act >= 0)
		complete(s, (item){a->parent_act, a->parent_idx});
}

/* Engine e of core c enters activation ai. */
static void enter(sim *s, int c, int e, int ai)
{
	engine *E = &s->cores[c].eng[e];
	frame *F;
	lm_grow(&E->fr, &E->cap_fr, E->nfr + 1, sizeof *E->fr);
	F = &E->fr[E->nfr];
	F->act = ai;
	F->pos = 0;
	F->call_issued = 0;
	F->nl = 0;
	F->blk = 0;
	F->bseq = 0;
	F->bin = NULL;
	if (s->mc->fns[s->acts[ai].fn].is_cfg) {
		int nb = s->mc->fns[s->acts[ai].fn].n_blocks;
		F->bin = lm_xcalloc(2 * (size_t)nb + 1, sizeof *F->bin);
		for (int b = 0; b < 2 * nb; b++)
			F->bin[b] = -1;
		F->bin[0] = 0;
	}
	s->acts[ai].st[e] = 1;
	s->acts[ai].fi[e] = E->nfr;
	E->nfr++;
}

/* Engine e of core c leaves its innermost activation. */
static void leave(sim *s, int c, int e)
{
	engine *E = &s->cores[c].eng[e];
	int ai = E->fr[--E->nfr].act;
	act *a = &s->acts[ai];
	free(E->fr[E->nfr].bin);
	E->fr[E->nfr].bin = NULL;
	a->st[e] = 2;
	if (s->R && a->parent_act >= 0) {
		uint32_t *acc = rvc_slot(s, &s->acts[ai].racc);
		a = &s->acts[ai];
		ls_race_join(s->R, acc, rvc_eng(s, c, e));
	}
	if (a->mask >> e & 1) {
		a->inside--;
		s->dirty = 1;
		act_check(s, ai);
	}
}

/* Bytes each instruction of a call tree is charged against the memory
** limit before time 0 (the unit of the limit the message names). */
#define WALK_ITEM_BYTES 64

/* a + b, saturating at INT64_MAX (both non-negative). */
static int64_t sat_add64(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* What walk(fn, c) would queue, found without queueing anything. */
typedef struct walk_size {
	int64_t items;  /* instructions queued, saturating at INT64_MAX */
	int depth;      /* deepest nesting of bodies below (0: no calls) */
} walk_size;

/*
** The items walk(s, fn, c, ...) queues and the nesting it reaches,
** following the same calls (memo per function: memo[fn].depth -1 unknown,
** -2 being sized). A call cycle (unverified input: the verifier refuses
** it) sizes as INT64_MAX at nesting INT_MAX.
*/
static walk_size size_walk(const sim *s, int fn, int c, walk_size *memo)
{
	const ls_sfunc *sf = &s->mc->fns[fn];
	walk_size w = { 0, 0 };
	if (memo[fn].depth == -2)
		return (walk_size){ INT64_MAX, INT_MAX };
	if (memo[fn].depth >= 0)
		return memo[fn];
	memo[fn].depth = -2;
	for (int i = 0; i < sf->n; i++) {
		const ls_sinst *si = &sf->insts[i];
		w.items = sat_add64(w.items, 1);
		if ((si->op == LM_OP_NKIKERNEL && !si->fault &&
		     si->target >= 0) || call_in_place(s, si, c)) {
			walk_size sub = size_walk(s, si->target, c, memo);
			w.items = sat_add64(w.items, sub.items);
			if (sub.depth >= w.depth)
				w.depth = sub.depth == INT_MAX ? INT_MAX
							       : sub.depth + 1;
		}
		if (si->op == LM_OP_RETURN)
			break;
	}
	memo[fn] = w;
	return w;
}

/*
** Before fn is walked on core c: refuse a call tree whose in-place
** expansion nests deeper than MAX_WALK_DEPTH, or queues more items than
** MAX_WALKED or the memory limit holds (each item WALK_ITEM_BYTES), or --
** when it has calls -- more than --max-instructions (each queued item
** runs once), so that a fan-out is refused at once instead of after
** queueing gigabytes.
*/
static int check_walk(sim *s, int fn, int c)
{
	const ls_sfunc *sf = &s->mc->fns[fn];
	const char *path = s->mc->mods[sf->mod].path;
	int64_t limit = s->opt.max_memory > 0 ? s->opt.max_memory
					      : LS_MAX_MEMORY_DEFAULT;
	walk_size *memo = lm_xcalloc((size_t)s->mc->n_fns + 1, sizeof *memo);
	walk_size w;
	int64_t total, cap;
	char where[300];

	for (int i = 0; i < s->mc->n_fns; i++)
		memo[i].depth = -1;
	w = size_walk(s, fn, c, memo);
	free(memo);
	total = sat_add64(s->n_walked, w.items);
	snprintf(where, sizeof where, "function %s", S(sf->f->name));
	if (w.depth == INT_MAX)
		return s->rc = lm_errc(s->err, LM_EINPUT, path, where,
				       "Call cycle: the calls reach '%s' "
				       "again", S(sf->f->name));
	if (w.depth > MAX_WALK_DEPTH)
		return s->rc = lm_errc(s->err, LM_EINPUT, path, where,
				       "calls nested %d deep on core %d, more "
				       "than %d", w.depth, c, MAX_WALK_DEPTH);
	cap = limit / WALK_ITEM_BYTES < MAX_WALKED ? limit / WALK_ITEM_BYTES
						   : MAX_WALKED;
	if (total > cap)
		return s->rc = lm_errc(s->err, LM_EINPUT, path, where,
				       "the calls expand to %s%lld instructions "
				       "(counted before time 0), more than the "
				       "limit of %lld (the lesser of %lld and "
				       "the memory limit of %lld bytes at %d "
				       "bytes an instruction)",
				       total == INT64_MAX ? "over " : "",
				       (long long)total, (long long)cap,
				       (long long)MAX_WALKED, (long long)limit,
				       WALK_ITEM_BYTES);
	/* without calls the run's own counter says the same, later */
	if (w.depth > 0 && s->opt.max_instructions > 0 &&
	    total > s->opt.max_instructions)
		return s->rc = lm_errc(s->err, LM_ECHECK, path, where,
				       "the calls expand to %s%lld instructions, "
				       "more than --max-instructions %lld",
				       total == INT64_MAX ? "over " : "",
				       (long long)total,
				       (long long)s->opt.max_instructions);
	s->n_walked = total;
	return 0;
}

/* Launch function fn on core c now: an activation every engine of the
** core enters after the ones launched before. */
static void launch(sim *s, int fn, int c)
{
	int ai;
	if (check_walk(s, fn, c))
		return;
	use_core(s, c);
	ai = new_act(s, fn, c, -1, -1, 0);
	for (int e = 0; e < LS_ENGINES; e++) {
		engine *E = &s->cores[c].eng[e];
		lm_grow(&E->launch, &E->cap_launch, E->nlaunch + 1,
			sizeof *E->launch);
		E->launch[E->nlaunch++] = ai;
	}
	for (int e = 0; e < LS_ENGINES && !s->rc; e++)
		try_start(s, c, e);
}

/* ---- completion --------------------------------------------------------- */

static int fail_at(sim *s, int c, const ls_sinst *si, const char *fmt, ...);
static int consume(sim *s, int c, const ls_sinst *si);

/* Do the waits of si, a DMA block or a descriptor on its queue, hold on
** core c (eng: the engine of its trigger)? 1 yes, 0 no or a run error
** (s->rc set; a faulted block or descriptor is reported here, as no
** engine starts it). */
static int dq_holds(sim *s, int c, int eng, const ls_sinst *si)
{
	char why[600];
	int first, r;
	if (si->fault) {
		fail_at(s, c, si, "%s", si->fault);
		return 0;
	}
	if (!si->sy.n_wait)
		return 1;
	r = ls_sync_ready(s->mc, c, eng, &si->sy, &first, why, sizeof why);
	if (r < 0)
		fail_at(s, c, si, "%s", why);
	return r > 0;
}

/* The updates of si at its completion on core c (an instruction, a DMA
** block, a descriptor). */
static void apply_updates(sim *s, int c, const ls_sinst *si)
{
	if ((si->sy.n_update || si->op == LM_OP_GROUPRESET) && !si->fault) {
		char why[600];
		if ((si->op == LM_OP_GROUPRESET &&
		     ls_sync_group_reset(s->mc, c, si, why, sizeof why)) ||
		    ls_sync_update(s->mc, c, &si->sy, si, why, sizeof why))
			fail_at(s, c, si, "%s", why);
	}
	s->dirty = 1;
}

/* An instance of it was issued at the cursor F. */
static void note_issue(sim *s, const frame *F, item it, const ls_sinst *si)
{
	act *a = &s->acts[it.act];
	a->outstanding++;
	if (!si->is_target)
		return;
	a->nout[it.idx]++;
	if (si->loop >= 0 || F->bin) {
		ring *r;
		int slot, cfg = F->bin != NULL, d = F->nl + cfg;
		if (!a->rings)
			a->rings = lm_xcalloc((size_t)s->mc->fns[a->fn].n + 1,
					      sizeof *a->rings);
		r = &a->rings[it.idx];
		if (r->n == r->cap) {
			/* grow, keeping the order from head */
			int nc = r->cap ? 2 * r->cap : 4;
			int64_t *o = lm_xcalloc((size_t)nc * (size_t)d + 1,
						sizeof *o);
			for (int i = 0; i < r->n; i++)
				memcpy(o + (size_t)i * (size_t)d,
				       r->ords + (size_t)((r->head + i) % r->cap)
				       * (size_t)d, (size_t)d * sizeof *o);
			free(r->ords);
			r->ords = o;
			r->cap = nc;
			r->head = 0;
		}
		/* the block entry first (a function with branches), then the
		   iteration of each loop */
		r->depth = d;
		slot = (r->head + r->n) % r->cap;
		if (cfg)
			r->ords[(size_t)slot * (size_t)d] = F->bseq;
		for (int j = 0; j < F->nl; j++)
			r->ords[(size_t)slot * (size_t)d + (size_t)(j + cfg)] =
				F->l[j].ord;
		r->n++;
	}
}

static void complete(sim *s, item it)
{
	act *a = &s->acts[it.act];
	s->epoch[a->core]++;
	const ls_sinst *si = &s->mc->fns[a->fn].insts[it.idx];
	core *k = &s->cores[a->core];
	if (s->R) {
		if (si->is_target) {
			const ring *r = a->rings ? &a->rings[it.idx] : NULL;
			int has = r && r->n > 0 && (si->loop >= 0 || a->blog);
			const int64_t *o = has ? r->ords + (size_t)r->head *
					   (size_t)r->depth : NULL;
			int cfg = a->blog != NULL;
			if (!a->rh)
				a->rh = lm_xcalloc((size_t)s->mc->fns[a->fn].n +
						   1, sizeof *a->rh);
			if (!a->rh[it.idx])
				a->rh[it.idx] = ls_race_hist_new(s->R) + 1;
			ls_race_hist_push(s->R, a->rh[it.idx] - 1,
					  has && cfg ? o[0] : 0,
					  has ? o + cfg : NULL,
					  has ? r->depth - cfg : 0,
					  ls_race_cur(s->R));
		}
		if (a->parent_act >= 0) {
			uint32_t *acc = rvc_slot(s, &s->acts[it.act].racc);
			a = &s->acts[it.act];
			ls_race_join(s->R, acc, ls_race_cur(s->R));
		}
	}
	a->outstanding--;
	if (si->is_target) {
		a->nout[it.idx]--;
		if (si->loop >= 0 || a->blog) {
			ring *r = &a->rings[it.idx];
			r->head = (r->head + 1) % r->cap;
			r->n--;
		}
	}
	apply_updates(s, a->core, si);
	if (s->now > k->st.end_ps)
		k->st.end_ps = s->now;
	s->dirty = 1;
	/* the last item of a body completes the call */
	act_check(s, it.act);
}

/* The issue of Call / IT55 call it ended on its engine. */
static void call_issued(sim *s, item it)
{
	int sub = s->acts[it.act].sub[it.idx];
	s->acts[sub].issue_done = 1;
	act_check(s, sub);
}

static void set_blocked(sim *s, int c, int e, int on_sem)
{
	engine *E = &s->cores[c].eng[e];
	if (!E->is_blocked) {
		E->is_blocked = 1;
		lm_grow(&s->blocked, &s->cap_blocked, s->n_blocked + 1,
			sizeof *s->blocked);
		s->blocked[s->n_blocked++] = c * LS_ENGINES + e;
	}
	ls_wait_begin(&s->cores[c].st, s->kern,
		      s->n_kern && E->nfr > 0 ?
		      s->acts[E->fr[E->nfr - 1].act].kern : -1, e,
		      &s->cores[c].wait[e], on_sem ? LS_WAIT_SEM : LS_WAIT_DEP,
		      s->now);
}

/* ---- barriers ----------------------------------------------------------- */

static int same_cores(const group *g, const lm_inst *in)
{
	if (g->n_cores != in->n_cores)
		return 0;
	for (int i = 0; i < in->n_cores; i++) {
		int found = 0;
		for (int j = 0; j < g->n_cores && !found; j++)
			found = g->cores[j] == in->cores[i];
		if (!found)
			return 0;
	}
	return 1;
}

static void cores_str(const int64_t *cs, int n, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < n && o + 24 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "",
				      (long long)cs[i]);
}

/* The core's arrival at a CoreBarrier (the instruction started). */
static int barrier_arrive(sim *s, int c, int e, item it)
{
	const ls_sinst *si = sinst_of(s, it);
	const lm_inst *in = si->in;
	group *g = &s->groups[si->group];
	const char *gname = s->mc->groups[si->group];
	int mi = s->mc->fns[si->fn].mod;
	ls_smod *sm = &s->mc->mods[mi];
	char a1[300], a2[300];
	int in_list = 0, slot = -1;

	if (g->n_arr == 0 && !g->released) {
		g->n_cores = in->n_cores;
		for (int i = 0; i < in->n_cores; i++)
			g->cores[i] = in->cores[i];
		g->first_act = it.act;
		g->first_idx = it.idx;
	} else if (!same_cores(g, in)) {
		const ls_sinst *f = sinst_of(s, (item){g->first_act,
						       g->first_idx});
		cores_str(in->cores, in->n_cores, a1, sizeof a1);
		cores_str(g->cores, g->n_cores, a2, sizeof a2);
		return fail_at(s, c, si, "barrier group '%s' reached with "
			       "differing core lists: '%s' lists [%s] but "
			       "'%s' (core %d) lists [%s]", gname, S(in->name),
			       a1, S(f->in->name),
			       s->acts[g->first_act].core, a2);
	}
	if (g->arrived & (1ull << c))
		return fail_at(s, c, si, "barrier group '%s' reached twice by "
			       "core %d ('%s')", gname, c, S(in->name));
	for (int i = 0; i < g->n_cores; i++)
		in_list |= g->cores[i] == c;
	if (!in_list) {
		cores_str(g->cores, g->n_cores, a1, sizeof a1);
		return fail_at(s, c, si, "core %d reached barrier '%s' (group "
			       "'%s') whose cores [%s] do not include it", c,
			       S(in->name), gname, a1);
	}
	/* the module's slot table */
	for (int i = 0; i < sm->n_slots; i++)
		if (sm->slot_id[i] == in->barrier_id)
			slot = i;
	if (slot < 0) {
		int cap = sm->cap_slots;
		lm_grow(&sm->slot_id, &cap, sm->n_slots + 1,
			sizeof *sm->slot_id);
		cap = sm->cap_slots;
		lm_grow(&sm->slot_group, &cap, sm->n_slots + 1,
			sizeof *sm->slot_group);
		cap = sm->cap_slots;
		lm_grow(&sm->slot_inst_fn, &cap, sm->n_slots + 1,
			sizeof *sm->slot_inst_fn);
		cap = sm->cap_slots;
		lm_grow(&sm->slot_inst_idx, &cap, sm->n_slots + 1,
			sizeof *sm->slot_inst_idx);
		sm->cap_slots = cap;
		slot = sm->n_slots++;
		sm->slot_id[slot] = in->barrier_id;
		sm->slot_group[slot] = -1;
	}
	if (s->R)
		ls_race_barrier(s->R, mi, in->barrier_id, si->group,
				ls_race_agent(s->R, c, e), si, c, e);
	if (sm->slot_group[slot] >= 0 && sm->slot_group[slot] != si->group) {
		const ls_sinst *h = &s->mc->fns[sm->slot_inst_fn[slot]]
					     .insts[sm->slot_inst_idx[slot]];
		return fail_at(s, c, si, "barrier ID collision: '%s' (group "
			       "'%s') arrives at barrier id %lld, which is "
			       "held by '%s' (group '%s')", S(in->name), gname,
			       (long long)in->barrier_id, S(h->in->name),
			       s->mc->groups[sm->slot_group[slot]]);
	}
	if (sm->slot_group[slot] < 0) {
		sm->slot_group[slot] = si->group;
		sm->slot_inst_fn[slot] = si->fn;
		sm->slot_inst_idx[slot] = it.idx;
	}
	g->arrived |= 1ull << c;
	g->arr[g->n_arr].core = c;
	g->arr[g->n_arr].eng = e;
	g->arr[g->n_arr].act = it.act;
	g->arr[g->n_arr].idx = it.idx;
	g->arr[g->n_arr].mod = mi;
	g->arr[g->n_arr].t = s->now;
	g->n_arr++;
	if (g->n_arr == g->n_cores)
		push(s, s->now + perturb(s, s->mc->arch->barrier_latency_ps),
		     EV_BAR, si->group, 0);
	return 0;
}

static void barrier_release(sim *s, int gi)
{
	group *g = &s->groups[gi];
	g->released = 1;
	if (s->R && g->n_arr > 0) {
		/* every arrival before every release */
		uint32_t *v0 = rvc_eng(s, g->arr[0].core, g->arr[0].eng);
		for (int i = 1; i < g->n_arr; i++)
			ls_race_join(s->R, v0, rvc_eng(s, g->arr[i].core,
						     g->arr[i].eng));
		for (int i = 1; i < g->n_arr; i++)
			ls_race_copy(s->R, rvc_eng(s, g->arr[i].core,
						   g->arr[i].eng), v0);
	}
	for (int i = 0; i < g->n_arr; i++) {
		arrival *ar = &g->arr[i];
		core *k = &s->cores[ar->core];
		engine *E = &k->eng[ar->eng];
		s->epoch[ar->core]++;
		ls_smod *sm = &s->mc->mods[ar->mod];
		for (int j = 0; j < sm->n_slots; j++)
			if (sm->slot_group[j] == gi)
				sm->slot_group[j] = -1;
		ls_wait_barrier(&k->st, s->kern, s->acts[ar->act].kern,
				ar->eng, ar->t, s->now);
		if (s->tracing)
			ls_trace_add(&s->trace, ar->core, ar->eng,
				     sinst_of(s, E->cur), E->cur.act,
				     E->cur.idx, ar->t, s->now - ar->t);
		E->busy = 0;
		if (s->R)
			ls_race_set_cur(s->R, rvc_eng(s, ar->core, ar->eng));
		complete(s, E->cur);
	}
	for (int i = 0; i < g->n_arr && !s->rc; i++)
		try_start(s, g->arr[i].core, g->arr[i].eng);
}

/* ---- starting instructions ---------------------------------------------- */

static dma *new_dma(sim *s, int *di)
{
	if (s->free_dma >= 0) {
		*di = s->free_dma;
		s->free_dma = s->dmas[*di].next_free;
	} else {
		lm_grow(&s->dmas, &s->cap_dmas, s->n_dmas + 1, sizeof *s->dmas);
		*di = s->n_dmas++;
		memset(&s->dmas[*di], 0, sizeof s->dmas[*di]);
	}
	s->dmas[*di].blk = s->dmas[*di].owner = s->dmas[*di].next_q = -1;
	s->dmas[*di].n_fly = s->dmas[*di].opened = 0;
	return &s->dmas[*di];
}

/*
** Note the reads of si (at its start, where the semantics read) that fall
** on an external output of another module: in a side-by-side run these
** are the reads through remote_local_target views, which the differential
** checker uses to tell hand-offs from host outputs.
*/
static void note_reads(sim *s, const ls_sinst *si)
{
	int mi = s->mc->fns[si->fn].mod;
	for (int i = 0; i < si->n_ins; i++) {
		const ls_opnd *o = &si->ins[i];
		if (o->space == LS_SP_DRAM && o->storage >= 0 &&
		    s->mc->storages[o->storage].is_output &&
		    s->mc->storages[o->storage].mod != mi)
			s->xread[o->storage] = 1;
	}
}

/* ---- DMA blocks --------------------------------------------------------- */

/* Core c's fire counters, one per trigger of the machine. */
static int64_t *fire_of(sim *s, int c)
{
	core *k = &s->cores[c];
	if (!k->fire)
		k->fire = lm_xcalloc((size_t)s->mc->n_trigs + 1,
				     sizeof *k->fire);
	return k->fire;
}

static void dq_append(sim *s, int qi, int di)
{
	dqueue *q = &s->dq[qi];
	s->dmas[di].next_q = -1;
	if (q->tail >= 0)
		s->dmas[q->tail].next_q = di;
	else
		q->head = di;
	q->tail = di;
}

static void dq_pop(sim *s, int qi)
{
	dqueue *q = &s->dq[qi];
	q->head = s->dmas[q->head].next_q;
	if (q->head < 0)
		q->tail = -1;
}

static void dma_release(sim *s, int di)
{
	s->dmas[di].next_free = s->free_dma;
	s->free_dma = di;
}

/* The function instruction idx of activation ai. */
static const ls_sinst *inst_at(sim *s, int ai, int idx)
{
	return &s->mc->fns[s->acts[ai].fn].insts[idx];
}

/* Instance qi's head waits (wait: 1) or not. */
static void dq_wait(sim *s, int qi, int wait)
{
	if (s->dq[qi].waiting != wait)
		s->n_dq_waiting += wait ? 1 : -1;
	s->dq[qi].waiting = wait;
}

/* The transfer of n bytes starting now on instance qi: its completion
** time (FIFO per instance, strictly). */
static int64_t dq_transfer(sim *s, int qi, int64_t bytes)
{
	ls_sqinst *q = &s->mc->qinsts[qi];
	int64_t xs = s->now > q->bw_free_ps ? s->now : q->bw_free_ps;
	int64_t xfer = perturb(s, ls_cost_dma_ps(s->mc->arch, bytes));
	int64_t done;
	q->bw_free_ps = xs + xfer;
	done = xs + xfer + perturb(s, s->mc->arch->dma_latency_ps);
	if (done <= q->last_done_ps)
		done = q->last_done_ps + 1;
	q->last_done_ps = done;
	return done;
}

/* A fired block's last descriptor completed (or it has none): its
** updates, the instance's semaphore, its trigger completes. */
static void block_done(sim *s, int ri)
{
	dma *r = &s->dmas[ri];
	const ls_sqinst *q = &s->mc->qinsts[r->qinst];
	if (s->R) {
		uint32_t *v = ls_race_vc(s->R, ls_race_qagent(s->R, r->qinst,
							       1));
		if (r->rvc)
			ls_race_join(s->R, v, ls_race_vc_get(s->R, r->rvc));
		ls_race_join(s->R, ls_race_drain(s->R, r->core, r->eng), v);
		ls_race_set_cur(s->R, v);
	}
	apply_updates(s, r->core, inst_at(s, r->act, r->blk));
	if (q->sem >= 0)
		ls_sync_bump(s->mc, q->sem);
	s->mc->csync[r->core]->dma_out[r->eng]--;
	complete(s, (item){r->act, r->idx});
	dma_release(s, ri);
}

/* Start descriptor r->cur of fired block ri now on its instance. */
static int desc_start(sim *s, int ri)
{
	dma *r = &s->dmas[ri], *d;
	const ls_sinst *si = inst_at(s, r->act, r->cur);
	int di;
	int64_t done;
	if (consume(s, r->core, si))
		return s->rc;
	d = new_dma(s, &di);
	r = &s->dmas[ri];
	s->x.core = r->core;
	s->x.si = si;
	s->x.pend = &d->pend;
	note_reads(s, si);
	if (s->R) {
		/* read when its transfer starts: after its block's clock and
		   its own waits, as the instance's n-th descriptor read */
		uint32_t *v = rvc_slot(s, &d->rvc);
		int ag = ls_race_qagent(s->R, r->qinst, 0);
		uint32_t clk;
		r = &s->dmas[ri];
		ls_race_copy(s->R, v, ls_race_vc_get(s->R, r->rvc));
		if (si->sy.n_wait) {
			ls_race_set_tgt(s->R, v);
			ls_sync_race_join(s->mc, r->core, r->eng, &si->sy);
		}
		clk = ls_race_tick(s->R, ag, si);
		v[ag] = clk;
		d->rrec = ls_race_rec(s->R, ag, clk, si, r->core,
				      LS_ENGINES + r->qinst, NULL, NULL, 0);
		race_reads(s, r->core, d->rrec, v, si);
	}
	if (ls_exec_start(&s->x))
		return s->rc = s->err->code;
	d->act = r->act;
	d->idx = r->cur;
	d->core = r->core;
	d->qinst = r->qinst;
	d->owner = ri;
	d->blk = -1;
	d->start = s->now;
	done = dq_transfer(s, r->qinst, si->dma_bytes);
	push(s, done, EV_DESC, di, 1);
	s->cores[r->core].st.dma_bytes += si->dma_bytes;
	s->cores[r->core].st.dma_transfers++;
	r->n_fly++;
	r->cur++;
	return 0;
}

/*
** Move instance qi's queue on as far as it goes now: the head's waits
** (a block's own before its first descriptor, each descriptor's) must
** hold and the instance's bandwidth be free (else a kick when it is);
** a DMA queued behind starts its transfer like any DMA.
*/
static void dq_pump(sim *s, int qi)
{
	dqueue *q = &s->dq[qi];
	while (q->head >= 0 && !s->rc) {
		int ri = q->head;
		dma *r = &s->dmas[ri];
		const ls_sqinst *sq = &s->mc->qinsts[qi];
		const ls_sinst *bs;
		if (r->blk >= 0) {
			bs = inst_at(s, r->act, r->blk);
			if (!r->opened) {
				if (!dq_holds(s, r->core, r->eng, bs)) {
					dq_wait(s, qi, 1);
					return;
				}
				r->opened = 1;
				if (s->R && bs->sy.n_wait) {
					ls_race_set_tgt(s->R, rvc_slot(s,
							&s->dmas[ri].rvc));
					ls_sync_race_join(s->mc, r->core,
							  r->eng, &bs->sy);
				}
				if (consume(s, r->core, bs))
					return;
			}
			if (r->cur == bs->dq->end) {
				dq_pop(s, qi);
				if (r->n_fly == 0)
					block_done(s, ri);
				continue;
			}
			if (!dq_holds(s, r->core, r->eng,
				      inst_at(s, r->act, r->cur))) {
				dq_wait(s, qi, 1);
				return;
			}
		}
		dq_wait(s, qi, 0);
		if (sq->bw_free_ps > s->now) {
			if (!q->kick) {
				q->kick = 1;
				push(s, sq->bw_free_ps, EV_DESC, qi, 0);
			}
			return;
		}
		if (r->blk >= 0) {
			desc_start(s, ri);
			continue;
		}
		dq_pop(s, qi);
		r->start = s->now;
		push(s, dq_transfer(s, qi, inst_at(s, r->act, r->idx)->dma_bytes),
		     EV_DMA, ri, 0);
	}
}

/* Trigger it (si) on engine e of core c fires its next block on the
** instance active for it. */
static int dq_fire(sim *s, int c, int e, item it, const ls_sinst *si)
{
	int qi = si->queue >= 0 ? s->cores[c].eng[e].active[si->queue] : -1;
	int ri;
	dma *r;
	if (si->fault)
		return fail_at(s, c, si, "%s", si->fault);
	if (qi < 0)
		return fail_at(s, c, si, "queue '%s' has no instance",
			       S(si->in->queue));
	r = new_dma(s, &ri);
	r->act = it.act;
	r->idx = it.idx;
	r->core = c;
	r->eng = e;
	r->qinst = qi;
	r->blk = ls_dmablk_fire(fire_of(s, c), si);
	r->cur = r->blk + 1;
	r->n_fly = r->opened = 0;
	if (s->R) {
		uint32_t *v = rvc_slot(s, &r->rvc);
		r = &s->dmas[ri];
		ls_race_copy(s->R, v, rvc_eng(s, c, e));
		r->rrec = s->cores[c].eng[e].rrec;
	}
	ls_core_syncs(s->mc, c)->dma_out[e]++;
	dq_append(s, qi, ri);
	dq_pump(s, qi);
	return s->rc;
}

/* EV_DESC: a descriptor's transfer completed (is_done), or instance a's
** bandwidth is free again. */
static void desc_event(sim *s, int a, int is_done)
{
	dma *d;
	int ri, qi;
	if (!is_done) {
		s->dq[a].kick = 0;
		dq_pump(s, a);
		return;
	}
	d = &s->dmas[a];
	ri = d->owner;
	qi = d->qinst;
	if (s->R)
		race_done(s, d, inst_at(s, d->act, d->idx));
	ls_exec_commit(&d->pend);
	apply_updates(s, d->core, inst_at(s, d->act, d->idx));
	if (s->tracing)
		ls_trace_add(&s->trace, d->core, LS_ENGINES + qi,
			     inst_at(s, d->act, d->idx), d->act, d->idx,
			     d->start, s->now - d->start);
	if (s->acts[d->act].kern >= 0)
		ls_kern_dma(s->kern, s->acts[d->act].kern, qi,
			    inst_at(s, d->act, d->idx)->dma_bytes, d->start,
			    s->now);
	if (s->now > s->cores[d->core].st.end_ps)
		s->cores[d->core].st.end_ps = s->now;
	dma_release(s, a);
	if (--s->dmas[ri].n_fly == 0 && s->dmas[ri].cur ==
	    inst_at(s, s->dmas[ri].act, s->dmas[ri].blk)->dq->end &&
	    s->dmas[ri].opened && s->dq[qi].head != ri)
		block_done(s, ri);
	dq_pump(s, qi);
}

/* Retry the instances whose head waits. */
static void dq_rescan(sim *s)
{
	for (int qi = 0; qi < s->mc->n_qinsts && s->n_dq_waiting && !s->rc;
	     qi++)
		if (s->dq[qi].waiting)
			dq_pump(s, qi);
}

/* What instance qi's head waits for (the deadlock report); 1 if any. */
static int dq_describe(sim *s, int qi, lm_buf *b)
{
	const dma *r;
	const ls_sinst *bs, *si;
	if (s->dq[qi].head < 0)
		return 0;
	r = &s->dmas[s->dq[qi].head];
	if (r->blk < 0)
		return 0; /* a DMA waits for bandwidth only */
	bs = inst_at(s, r->act, r->blk);
	si = r->opened ? inst_at(s, r->act, r->cur) : bs;
	if (si->sy.n_wait) {
		char why[600], what[600];
		int first = -1;
		if (ls_sync_ready(s->mc, r->core, r->eng, &si->sy, &first, why,
				  sizeof why) != 0 || first < 0)
			return 1;
		ls_sync_describe(s->mc, r->core, r->eng, &si->sy.wait[first],
				 what, sizeof what);
		if (si == bs)
			lm_buf_printf(b, "; queue instance '%s' core %d: block "
				      "'%s'", S(s->mc->qinsts[qi].name), r->core,
				      S(bs->in->name));
		else
			lm_buf_printf(b, "; queue instance '%s' core %d: "
				      "descriptor '%s' of block '%s'",
				      S(s->mc->qinsts[qi].name), r->core,
				      S(si->in->name), S(bs->in->name));
		lm_buf_printf(b, " waits for %s", what);
	}
	return 1;
}

static void loop_where(sim *s, int c, int e, char *buf, size_t n);
static int eval_dyn(sim *s, int c, int e, const ls_sinst *si);
static int enter_block(sim *s, int c, int e, frame *F, const ls_sfunc *sf,
		       int b);

/*
** Branch si on engine e of core c, just issued from e's innermost cursor:
** the cursor goes to the first item of the block taken (a
** CompareAndBranch compares on e's own registers). 0, or the run error.
*/
static int branch(sim *s, int c, int e, const ls_sinst *si)
{
	engine *E = &s->cores[c].eng[e];
	frame *F = &E->fr[E->nfr - 1];
	const ls_sfunc *sf = &s->mc->fns[si->fn];
	int taken = 1, to;
	char why[700], where[200];
	if (si->fault) {
		fail_at(s, c, si, "%s", si->fault);
		return -1;
	}
	if (si->op == LM_OP_CMPBRANCH &&
	    ls_cmp_exec(s->mc, c, e, si, &taken, why, sizeof why)) {
		loop_where(s, c, e, where, sizeof where);
		fail_at(s, c, si, "on %s: %s%s", ls_engine_name(e), why, where);
		return -1;
	}
	to = taken ? si->tblk : si->fblk;
	F->pos = sf->bpos[e][to];
	return enter_block(s, c, e, F, sf, to);
}

/* Start instruction it on engine e of core c at s->now. */
static void start_inst(sim *s, int c, int e, item it)
{
	core *k = &s->cores[c];
	engine *E = &k->eng[e];
	const ls_sinst *si = &s->mc->fns[s->acts[it.act].fn].insts[it.idx];
	int64_t dur = perturb(s, si->dur_ps);

	s->n_instr++;
	k->st.instructions++;
	if (s->opt.max_instructions > 0 &&
	    s->n_instr > s->opt.max_instructions) {
		char where[200];
		loop_where(s, c, e, where, sizeof where);
		fail_at(s, c, si, "more than %lld instructions executed "
			"(--max-instructions) at t=%lld ps%s",
			(long long)s->opt.max_instructions, (long long)s->now,
			where);
		return;
	}
	s->xsi = si;
	if (si->n_dyn && eval_dyn(s, c, e, si))
		return;
	if (s->R)
		race_start(s, c, e, it, &E->fr[E->nfr - 1], si);
	E->busy = 1;
	E->cur = it;
	E->cur_completes = 1;
	switch (si->op) {
	/* ls_check_module refuses these before time 0 (ls_machine_new);
	   they stay refused here for a machine that reaches one anyway */
	case LM_OP_LOOP:
		fail_at(s, c, si, "Loop reached: executing loops is not "
			"supported by the simulator");
		return;
	case LM_OP_NKIKLIRKERNEL:
		fail_at(s, c, si, "kernel carrier NKIKLIRKernel (IT56) "
			"reached: carriers must be lowered before a run "
			"(lncsim lower)");
		return;
	case LM_OP_BIRKERNEL:
		fail_at(s, c, si, "kernel carrier BIRKernel (IT54) reached: "
			"BIRKernel (IT54) carriers are not executed or lowered "
			"by lncsim");
		return;
	case LM_OP_NKIKERNEL:
		if (call_again(s, c, it, si))
			return;
		if (si->fault || child_of(s, it.act, it.idx) < 0) {
			fail_at(s, c, si, "NKIKernel (IT55) call of '%s': %s",
				S(si->in->func), si->fault ? si->fault :
				"kernels nested too deeply");
			return;
		}
		/* the body may start; the call completes with it */
		s->acts[s->acts[it.act].sub[it.idx]].gate_open = 1;
		{
			ls_kacc *ka = &s->kern[s->acts[s->acts[it.act]
					       .sub[it.idx]].kern];
			ka->started = 1;
			ka->st.start_ps = s->now;
		}
		if (s->R) {
			int sub = s->acts[it.act].sub[it.idx];
			ls_race_copy(s->R, rvc_slot(s, &s->acts[sub].rent),
				     rvc_eng(s, c, e));
		}
		s->dirty = 1;
		E->cur_completes = 0;
		break;
	case LM_OP_OTHER:
	case LM_OP_INVALID:
		fail_at(s, c, si, "opcode '%s' is not supported by the "
			"simulator", S(si->in->opcode_str));
		return;
	case LM_OP_CMPBRANCH: case LM_OP_UBRANCH:
		if (branch(s, c, e, si))
			return;
		dur = perturb(s, s->edge_ps[e]);
		break;
	case LM_OP_BRANCHHINT: case LM_OP_TCOMPLETION:
		/* no effect: a cycle of the engine */
		dur = perturb(s, s->edge_ps[e]);
		break;
	case LM_OP_HALT:
		/* the engine issues nothing more; it stays where it is */
		E->halt = si;
		dur = perturb(s, s->edge_ps[e]);
		break;
	case LM_OP_TENSORLOAD: case LM_OP_TENSORSAVE: {
		/* on the issuing engine: the element read (and the registers
		   written) now, a save's element written at completion */
		char why[700], where[200];
		int rc;
		note_reads(s, si);
		if (s->R)
			race_reads(s, c, E->rrec, rvc_eng(s, c, e), s->xsi);
		E->pend.x = &s->x;
		rc = si->op == LM_OP_TENSORLOAD
		     ? ls_tload_exec(s->mc, c, e, s->xsi, why, sizeof why)
		     : ls_tsave_stage(s->mc, c, e, s->xsi, &E->pend, why,
				      sizeof why);
		if (rc) {
			loop_where(s, c, e, where, sizeof where);
			fail_at(s, c, si, "on %s: %s%s", ls_engine_name(e), why,
				where);
			return;
		}
		break;
	}
	case LM_OP_DYNLOOP: case LM_OP_DOWHILE: case LM_OP_BREAK:
	case LM_OP_DMABLOCK:
	case LM_OP_DESC_COPY: case LM_OP_DESC_CCE: case LM_OP_DESC_TRANSPOSE:
	case LM_OP_DESC_REPLICATE:
		fail_at(s, c, si, "opcode '%s' is not supported by the "
			"simulator", lm_opcode_name(si->op));
		return;
	case LM_OP_REGMOVE: case LM_OP_REGALU: {
		/* on the issuing engine's own registers, at its clock's cost
		   of a semaphore operation */
		char why[700], where[200];
		if (ls_reg_exec(s->mc, c, e, si, why, sizeof why)) {
			loop_where(s, c, e, where, sizeof where);
			fail_at(s, c, si, "on %s: %s%s", ls_engine_name(e), why,
				where);
			return;
		}
		dur = perturb(s, s->edge_ps[e]);
		break;
	}
	case LM_OP_COREBARRIER:
		if (si->fault) {
			fail_at(s, c, si, "%s", si->fault);
			return;
		}
		barrier_arrive(s, c, e, it);
		return; /* completes at release */
	case LM_OP_CALL:
		if (call_again(s, c, it, si))
			return;
		if (si->target < 0) {
			fail_at(s, c, si, "Call target '%s' is not a function",
				S(si->in->target));
			return;
		}
		if (!call_in_place(s, si, c)) {
			fail_at(s, c, si, "Call target '%s' belongs to core %lld: "
				"a Call on a core runs its target on that core "
				"(only the dispatcher starts other cores)",
				S(si->in->target),
				(long long)s->mc->fns[si->target].core);
			return;
		}
		if (child_of(s, it.act, it.idx) < 0) {
			fail_at(s, c, si, "Call of '%s': calls nested more than "
				"%d deep or more than %lld instructions queued "
				"(recursion?)", S(si->in->target),
				MAX_WALK_DEPTH, (long long)MAX_WALKED);
			return;
		}
		/* the body may start; the call completes with it */
		s->acts[s->acts[it.act].sub[it.idx]].gate_open = 1;
		if (s->R) {
			int sub = s->acts[it.act].sub[it.idx];
			ls_race_copy(s->R, rvc_slot(s, &s->acts[sub].rent),
				     rvc_eng(s, c, e));
		}
		s->dirty = 1;
		E->cur_completes = 0;
		break;
	case LM_OP_DMACOPY: case LM_OP_LOAD: case LM_OP_SAVE:
	case LM_OP_INDIRECTLOAD: {
		int di, qi = si->queue >= 0 ? E->active[si->queue] : -1;
		dma *d = new_dma(s, &di);
		ls_sqinst *q;
		int64_t xs, xfer, done;
		if (qi < 0) {
			fail_at(s, c, si, "queue '%s' has no instance",
				S(si->in->queue));
			return;
		}
		s->x.core = c;
		s->x.si = s->xsi;
		s->x.pend = &d->pend;
		note_reads(s, si);
		if (ls_exec_start(&s->x)) {
			s->rc = s->err->code;
			return;
		}
		d = &s->dmas[di];
		d->act = it.act;
		d->idx = it.idx;
		d->core = c;
		d->eng = e;
		d->qinst = qi;
		if (s->R) {
			race_reads(s, c, E->rrec, rvc_eng(s, c, e), s->xsi);
			ls_race_copy(s->R, rvc_slot(s, &s->dmas[di].rvc),
				     rvc_eng(s, c, e));
			d = &s->dmas[di];
			d->rrec = E->rrec;
		}
		ls_core_syncs(s->mc, c)->dma_out[e]++;
		k->st.dma_bytes += si->dma_bytes;
		k->st.dma_transfers++;
		E->cur_completes = 0;
		if (s->dq[qi].head >= 0) {
			/* behind the DMA blocks of its instance */
			dq_append(s, qi, di);
			break;
		}
		q = &s->mc->qinsts[qi];
		xs = s->now > q->bw_free_ps ? s->now : q->bw_free_ps;
		xfer = perturb(s, ls_cost_dma_ps(s->mc->arch, si->dma_bytes));
		q->bw_free_ps = xs + xfer;
		done = xs + xfer + perturb(s, s->mc->arch->dma_latency_ps);
		/* FIFO per instance, strictly: equal times would let the
		** (perturbed) tie-break complete a later DMA first */
		if (done <= q->last_done_ps)
			done = q->last_done_ps + 1;
		q->last_done_ps = done;
		d->start = xs;
		push(s, done, EV_DMA, di, 0);
		break;
	}
	case LM_OP_DMATRIGGER:
		if (dq_fire(s, c, e, it, si))
			return;
		E->cur_completes = 0;
		break;
	default:
		s->x.core = c;
		s->x.si = s->xsi;
		s->x.pend = &E->pend;
		note_reads(s, si);
		if (ls_exec_start(&s->x)) {
			s->rc = s->err->code;
			return;
		}
		if (s->R)
			race_reads(s, c, E->rrec, rvc_eng(s, c, e), s->xsi);
		if (si->op == LM_OP_MATMULT) {
			ls_matmul_rec *r;
			lm_grow(&s->mm, &s->cap_mm, s->n_mm + 1, sizeof *s->mm);
			r = &s->mm[s->n_mm++];
			r->core = c;
			r->name = lm_xstrdup(S(si->in->name));
			r->k = si->mm_k;
			r->m = si->mm_m;
			r->n = si->mm_n;
			r->dtype = si->ins[1].dtype;
			r->start_ps = s->now;
			r->duration_ps = dur;
			r->array_util = (double)si->mm_k * si->mm_m /
					(double)(LM_PE_ROWS * LM_PE_COLS);
			k->st.matmuls++;
			k->st.macs += (int64_t)si->mm_k * si->mm_m * si->mm_n;
		}
		break;
	}
	k->st.busy_ps[e] += dur;
	if (s->acts[it.act].kern >= 0)
		ls_kern_busy(s->kern, s->acts[it.act].kern, e, s->now,
			     s->now + dur, 1);
	if (s->tracing)
		ls_trace_add(&s->trace, c, e, si, it.act, it.idx, s->now,
			     dur);
	push(s, s->now + dur, EV_ENG, c, e);
}

/* ---- cursors ------------------------------------------------------------ */

/* The position of engine cursor F of function sf (lp: scratch for the
** loop ids). */
static ls_pos frame_pos(const ls_sfunc *sf, const frame *F, int e, int *lp,
			int64_t *ords)
{
	ls_pos p;
	for (int j = 0; j < F->nl; j++) {
		lp[j] = F->l[j].loop;
		ords[j] = F->l[j].ord;
	}
	p.bseq = F->bseq;
	p.depth = F->nl;
	p.loops = lp;
	p.ords = ords;
	p.idx = F->pos < sf->n_stream[e] ? sf->stream[e][F->pos] : sf->n_run;
	if (F->call_issued)
		p.idx++;
	return p;
}

/* The position of the instance of instruction i in block entry bseq
** whose loops are in their iterations ords (its static chain). */
static ls_pos inst_pos(const ls_sfunc *sf, int i, int64_t bseq,
		       const int64_t *ords)
{
	ls_pos p;
	int l = sf->insts[i].loop;
	p.bseq = bseq;
	p.depth = l < 0 ? 0 : sf->loops[l].depth + 1;
	p.loops = l < 0 ? NULL : sf->loops[l].chain;
	p.ords = ords;
	p.idx = i;
	return p;
}

/*
** Has every engine's copy of instruction a (engine ALL) of activation ai
** on core c passed point t and completed? A register instruction takes
** its engine for its whole run, so an engine past t that is not running
** a has completed the copy t stands for.
*/
static int copies_done(sim *s, int c, int ai, const ls_sfunc *sf, int a,
		       const ls_pos *t)
{
	const act *A = &s->acts[ai];
	for (int e = 0; e < LS_ENGINES; e++) {
		const engine *E = &s->cores[c].eng[e];
		int pl[LS_MAX_NEST];
		int64_t fo[LS_MAX_NEST];
		ls_pos p;
		if (A->st[e] == 2)
			continue;
		if (A->st[e] == 0)
			return 0;
		p = frame_pos(sf, &E->fr[A->fi[e]], e, pl, fo);
		if (ls_pos_cmp(sf, &p, t) < 0 ||
		    (E->busy && E->cur.act == ai && E->cur.idx == a))
			return 0;
	}
	return 1;
}

/*
** Is dependency d of the instance of b at cursor F (engine e) of core c
** met? a's engine has passed the point t, and no issued instance of a
** before q is incomplete (sim_int.h, ls_sdep). In a function with
** branches both are in b's block entry, except for a dependency outside
** any common loop: its instance of a is the one of a's block's last entry
** before b's point (this entry when a comes before b in the block, the
** one before it when a is b or follows it): t is in that entry, and when
** there is none nothing of a precedes b.
*/
/* The points t and q of dependency d of the instance of b at cursor F
** (ords, po: their storage). */
static void dep_points(sim *s, const frame *F, int b, const ls_sdep *d,
		       ls_pos *t, ls_pos *q, int64_t *ords, int64_t *po)
{
	const act *A = &s->acts[F->act];
	const ls_sfunc *sf = &s->mc->fns[A->fn];
	const ls_sloop *L = d->loop >= 0 ? &sf->loops[d->loop] : NULL;
	int cd = L ? L->depth + 1 : 0;

	for (int j = 0; j < F->nl; j++)
		ords[j] = F->l[j].ord;
	t->loops = q->loops = L ? L->chain : NULL;
	t->ords = q->ords = ords;
	t->bseq = q->bseq = F->bseq;
	if (d->x >= 0) {
		t->depth = cd;
		t->idx = d->x;
		*q = inst_pos(sf, b, F->bseq, ords);
		if (F->bin && !L) {
			int ba = sf->insts[d->a].blk, bb = sf->insts[b].blk;
			t->bseq = ba == bb && d->x <= b ? F->bseq
				  : F->bin[2 * ba + (ba == bb)];
		}
	} else {
		q->depth = cd;
		q->idx = L->hdr + 1;
		if (ords[cd - 1] == 0) {
			t->depth = cd - 1;
			t->idx = L->hdr;
		} else {
			memcpy(po, ords, LS_MAX_NEST * sizeof *po);
			po[cd - 1]--;
			t->depth = cd;
			t->ords = po;
			t->idx = L->end;
		}
	}
}

static int dep_met(sim *s, int c, const frame *F, int b, const ls_sdep *d)
{
	const act *A = &s->acts[F->act];
	const ls_sfunc *sf = &s->mc->fns[A->fn];
	int ea = sf->insts[d->a].eng;
	int64_t ords[LS_MAX_NEST], po[LS_MAX_NEST];
	int pl[LS_MAX_NEST];
	ls_pos t, q;

	dep_points(s, F, b, d, &t, &q, ords, po);
	if (t.bseq < 0) {
		/* no instance of a before b: none to pass */
	} else if (sf->insts[d->a].is_all && !sf->insts[d->a].is_join) {
		return copies_done(s, c, F->act, sf, d->a, &t);
	} else if (A->st[ea] == 0) {
		return 0;
	} else if (A->st[ea] == 1) {
		const frame *Fa = &s->cores[c].eng[ea].fr[A->fi[ea]];
		int64_t fo[LS_MAX_NEST];
		ls_pos p = frame_pos(sf, Fa, ea, pl, fo);
		if (ls_pos_cmp(sf, &p, &t) < 0)
			return 0;
	}
	if (!A->nout || A->nout[d->a] == 0)
		return 1;
	if (sf->insts[d->a].loop < 0 && !A->blog) {
		ls_pos p = inst_pos(sf, d->a, 0, NULL);
		return ls_pos_cmp(sf, &p, &q) >= 0;
	} else {
		const ring *r = &A->rings[d->a];
		const int64_t *o = r->ords + (size_t)r->head * (size_t)r->depth;
		ls_pos p = A->blog ? inst_pos(sf, d->a, o[0], o + 1)
				   : inst_pos(sf, d->a, 0, o);
		return ls_pos_cmp(sf, &p, &q) >= 0;
	}
}

/* The first dependency of instruction b at cursor F not met, or -1. */
static int deps_unmet(sim *s, int c, const frame *F, const ls_sinst *si,
		      int b)
{
	for (int i = 0; i < si->n_deps; i++)
		if (!dep_met(s, c, F, b, &si->deps[i]))
			return i;
	return -1;
}

/* " (core 0 SP in loop 'l' iteration 7)" when engine e is in a loop. */
static void loop_where(sim *s, int c, int e, char *buf, size_t n)
{
	const engine *E = &s->cores[c].eng[e];
	const frame *F;
	const ls_sfunc *sf;
	buf[0] = 0;
	if (E->nfr == 0)
		return;
	F = &E->fr[E->nfr - 1];
	sf = &s->mc->fns[s->acts[F->act].fn];
	if (F->bin && F->nl == 0) {
		snprintf(buf, n, " (core %d %s in block '%s', block entry %lld)",
			 c, ls_engine_name(e), S(sf->bnames[F->blk]),
			 (long long)F->bseq);
		return;
	}
	if (F->nl == 0)
		return;
	snprintf(buf, n, " (core %d %s in loop '%s' iteration %lld)", c,
		 ls_engine_name(e),
		 S(sf->insts[sf->loops[F->l[F->nl - 1].loop].hdr].in->name),
		 (long long)F->l[F->nl - 1].ord);
}

/* Evaluate the per-iteration values of si at engine e's cursor. */
static int eval_dyn(sim *s, int c, int e, const ls_sinst *si)
{
	const frame *F = &s->cores[c].eng[e].fr[s->cores[c].eng[e].nfr - 1];
	const ls_sfunc *sf = &s->mc->fns[si->fn];
	int64_t iv[LS_MAX_NEST];
	char err[512];
	for (int j = 0; j < F->nl; j++)
		iv[j] = F->l[j].iv;
	for (int i = 0; i < si->n_dyn; i++) {
		const ls_dyn *d = &si->dyn[i];
		int64_t v;
		char where[200];
		if (ls_dyn_eval(s->mc, sf, si, d, iv, c, e, &v, err,
				sizeof err)) {
			loop_where(s, c, e, where, sizeof where);
			return fail_at(s, c, si, "%s: %s%s", ls_dyn_name(d), err,
				       where);
		}
		if (d->what < LS_DYN_IN_OFF && (v < d->lo || v > d->hi)) {
			loop_where(s, c, e, where, sizeof where);
			return fail_at(s, c, si, "%s = %lld is outside [%lld, "
				       "%lld]%s", ls_dyn_name(d), (long long)v,
				       (long long)d->lo, (long long)d->hi,
				       where);
		}
		s->x.dynv[i] = v;
		if (d->what >= LS_DYN_IN_OFF) {
			ls_opnd *o;
			char *why = NULL;
			/* every issue places all of si's dynamic operands:
			   the copy is made once per instruction */
			if (s->dsi.in != si->in) {
				s->dsi = *si;
				lm_grow(&s->dop, &s->cap_dop, si->n_ins +
					si->n_outs + 1, sizeof *s->dop);
				memcpy(s->dop, si->ins, (size_t)si->n_ins *
				       sizeof *s->dop);
				memcpy(s->dop + si->n_ins, si->outs,
				       (size_t)si->n_outs * sizeof *s->dop);
				s->dsi.ins = s->dop;
				s->dsi.outs = s->dop + si->n_ins;
			}
			o = d->what == LS_DYN_IN_OFF ? &s->dop[d->opnd]
				: &s->dop[si->n_ins + d->opnd];
			if (ls_dyn_place(s->mc, d, v, o, &why)) {
				loop_where(s, c, e, where, sizeof where);
				if (d->reg)
					fail_at(s, c, si, "on %s: %s[%d] "
						"register_ap '%s': register '%s' "
						"= %lld %s%s", ls_engine_name(e),
						d->what == LS_DYN_IN_OFF ? "ins"
						: "outs", d->opnd,
						S(d->arg.memsetref), d->reg,
						(long long)v, why ? why : "",
						where);
				else
					fail_at(s, c, si, "%s[%d] symbolic_ap "
						"'%s': offset %lld puts the "
						"access outside its memory "
						"location: %s%s",
						d->what == LS_DYN_IN_OFF ? "ins"
						: "outs", d->opnd,
						S(d->arg.memsetref), (long long)v,
						why ? why : "", where);
				free(why);
				return s->rc;
			}
			s->xsi = &s->dsi;
		}
	}
	return 0;
}

/*
** The value of a loop's expression e (a DynamicForLoop's ub, a DoWhile's
** cond, what names it) for engine e at cursor F: the induction values of
** its frames, its own registers; loop is the innermost loop around the
** place of the evaluation. 0, or the run error.
*/
static int loop_value(sim *s, int c, int e, const frame *F,
		      const ls_sfunc *sf, const ls_sloop *sl,
		      const struct lm_affine *x, int loop, const char *what,
		      int64_t *v)
{
	int64_t iv[LS_MAX_NEST];
	char err[512], where[200];
	for (int j = 0; j < F->nl; j++)
		iv[j] = F->l[j].iv;
	if (ls_expr_eval(s->mc, sf, loop, x, iv, c, e, v, err, sizeof err) == 0)
		return 0;
	loop_where(s, c, e, where, sizeof where);
	return fail_at(s, c, &sf->insts[sl->hdr], "on %s: %s: %s%s",
		       ls_engine_name(e), what, err, where);
}

/* Loop sl's induction value iv into its registers on engine e (each
** iteration's start), modulo 2^32. */
static void set_iv_regs(sim *s, int c, int e, const ls_sfunc *sf,
			const ls_sloop *sl, int64_t iv)
{
	for (int i = 0; i < sl->n_iv_regs; i++)
		ls_reg_set(s->mc, c, e, sl->iv_regs[i], (uint32_t)iv,
			   &sf->insts[sl->hdr]);
}

/* A back edge of engine e: busy for the branch, counted as an executed
** instruction (the runaway stop). Returns 0, or the run error. */
static int back_edge(sim *s, int c, int e, const ls_sfunc *sf,
		     const frame *F)
{
	engine *E = &s->cores[c].eng[e];
	const lframe *L = &F->l[F->nl - 1];
	const ls_sinst *h = &sf->insts[sf->loops[L->loop].hdr];
	int64_t dur = perturb(s, s->edge_ps[e]);
	s->n_instr++;
	if (s->opt.max_instructions > 0 &&
	    s->n_instr > s->opt.max_instructions) {
		char where[200];
		loop_where(s, c, e, where, sizeof where);
		return fail_at(s, c, h, "more than %lld instructions executed "
			       "(--max-instructions) at t=%lld ps%s",
			       (long long)s->opt.max_instructions,
			       (long long)s->now, where);
	}
	if (E->is_blocked) {
		ls_wait_end(&s->cores[c].st, s->kern, e, &s->cores[c].wait[e],
			    s->now);
		E->is_blocked = 0;
	}
	E->busy = 1;
	E->cur.act = F->act;
	E->cur.idx = -1;
	E->cur_completes = 0;
	s->cores[c].st.busy_ps[e] += dur;
	if (s->acts[F->act].kern >= 0)
		ls_kern_busy(s->kern, s->acts[F->act].kern, e, s->now,
			     s->now + dur, 0);
	push(s, s->now + dur, EV_ENG, c, e);
	return 0;
}

/*
** Engine e, at cursor F of a function with branches, enters block b: its
** next block entry. The first engine to make an entry writes its block
** into the activation's log; the others must enter the same block there
** (every engine follows its own copy of a branch on ALL, and only its own
** branches otherwise: engines that part ways make no program order).
** Returns 0, or the run error.
*/
static int enter_block(sim *s, int c, int e, frame *F, const ls_sfunc *sf,
		       int b)
{
	act *a = &s->acts[F->act];
	int *slot;
	F->bseq++;
	F->blk = b;
	F->bin[2 * b + 1] = F->bin[2 * b];
	F->bin[2 * b] = F->bseq;
	slot = &a->blog[F->bseq % LS_BLOG];
	if (F->bseq >= a->made) {
		*slot = b * LS_ENGINES + e;
		a->made = F->bseq + 1;
	} else if (a->made - F->bseq <= LS_BLOG && *slot / LS_ENGINES != b) {
		char where[300];
		snprintf(where, sizeof where, "core %d/function %s", c,
			 S(sf->f->name));
		return s->rc = lm_errc(s->err, LM_ECHECK,
				       s->mc->mods[sf->mod].path, where,
				       "engines diverge: %s entered block '%s' "
				       "as block entry %lld of the function, %s "
				       "entered block '%s' there (an engine "
				       "follows only the branches on its own "
				       "engine and on ALL: put the branch on "
				       "ALL)", ls_engine_name(*slot % LS_ENGINES),
				       S(sf->bnames[*slot / LS_ENGINES]),
				       (long long)F->bseq, ls_engine_name(e),
				       S(sf->bnames[b]));
	}
	s->dirty = 1;
	return 0;
}

/*
** Move engine e's cursor over the items that take no time (entering and
** leaving activations and loops, descend points, queue switches of other
** engines) to its next instruction: 1 with *it set; 0 when there is none
** now (nothing left, a loop header waiting for its dependencies, or a
** back edge started).
*/
static int ctrl_next(sim *s, int c, int e, item *it)
{
	engine *E = &s->cores[c].eng[e];
	if (E->halt)
		return 0;
	for (;;) {
		frame *F;
		const act *a;
		const ls_sfunc *sf;
		const ls_sinst *si;
		int idx;
		if (E->nfr == 0) {
			if (E->lhead == E->nlaunch)
				return 0;
			enter(s, c, e, E->launch[E->lhead++]);
			continue;
		}
		F = &E->fr[E->nfr - 1];
		a = &s->acts[F->act];
		sf = &s->mc->fns[a->fn];
		if (F->nl > 0 && F->pos >= F->l[F->nl - 1].end_pos) {
			lframe *L = &F->l[F->nl - 1];
			const ls_sloop *sl = &sf->loops[L->loop];
			if (sl->is_pass) {
				F->nl--;
				continue;
			}
			/* the branch at the end of the iteration */
			if (sl->kind == LS_LOOP_DOWHILE) {
				int64_t cv;
				if (loop_value(s, c, e, F, sf, sl, sl->cond,
					       L->loop, "cond", &cv) ||
				    back_edge(s, c, e, sf, F))
					return 0;
				if (cv != 0) {
					L->ord++;
					F->pos = L->body_pos;
				} else {
					F->nl--;
				}
				s->dirty = 1;
				return 0;
			}
			if (back_edge(s, c, e, sf, F))
				return 0;
			/* an induction value past INT64_MAX is past any ub */
			if (!__builtin_add_overflow(L->iv, sl->stride, &L->iv) &&
			    L->iv < L->ub) {
				L->ord++;
				F->pos = L->body_pos;
				set_iv_regs(s, c, e, sf, sl, L->iv);
			} else {
				F->nl--;
			}
			s->dirty = 1;
			return 0;
		}
		if (F->pos >= sf->n_stream[e]) {
			leave(s, c, e);
			continue;
		}
		idx = sf->stream[e][F->pos];
		si = &sf->insts[idx];
		/* falling through into the next blocks (those without an
		   item of this engine entered on the way) */
		while (F->bin && si->blk > F->blk)
			if (enter_block(s, c, e, F, sf, F->blk + 1))
				return 0;
		if (si->op == LM_OP_RETURN && F->bin && si->eng != e) {
			/* the function ends here for every engine */
			F->pos = sf->n_stream[e];
			continue;
		}
		if (si->heads >= 0) {
			const ls_sloop *sl = &sf->loops[si->heads];
			lframe *L;
			int64_t ub;
			if (si->fault) {
				/* what preparation found at the header (a
				   dependency it cannot order) */
				fail_at(s, c, si, "%s", si->fault);
				return 0;
			}
			if (deps_unmet(s, c, F, si, idx) >= 0) {
				set_blocked(s, c, e, 0);
				return 0;
			}
			if (s->R) {
				race_enter(s, c, e, F->act);
				race_deps(s, c, e, F, si, idx);
			}
			if (E->is_blocked) {
				ls_wait_end(&s->cores[c].st, s->kern, e,
					    &s->cores[c].wait[e], s->now);
				E->is_blocked = 0;
					}
			ub = sl->ub;
			if (sl->kind == LS_LOOP_DYN) {
				if (loop_value(s, c, e, F, sf, sl, sl->ub_e,
					       si->loop, "ub", &ub))
					return 0;
				if (ub < sl->lb) {
					fail_at(s, c, si, "on %s: DynamicForLoop "
						"axis '%s': ub = %lld is below "
						"lb %lld: negative trip count",
						ls_engine_name(e), S(sl->axis),
						(long long)ub,
						(long long)sl->lb);
					return 0;
				}
			}
			if (sl->kind == LS_LOOP_STATIC ? ls_loop_trips(sl) == 0
			    : sl->kind == LS_LOOP_DYN && ub == sl->lb) {
				F->pos = sl->skip_pos[e];
				continue;
			}
			L = &F->l[F->nl++];
			L->loop = si->heads;
			L->ub = ub;
			L->iv = sl->lb;
			L->ord = 0;
			L->body_pos = F->pos + 1;
			L->end_pos = sl->skip_pos[e];
			F->pos++;
			set_iv_regs(s, c, e, sf, sl, L->iv);
			s->dirty = 1;
			continue;
		}
		if (si->op == LM_OP_BREAK) {
			/* leave the innermost loop (the verifier puts a Break
			   inside one) */
			if (F->nl > 0) {
				F->pos = F->l[F->nl - 1].end_pos;
				F->nl--;
			} else {
				F->pos++;
			}
			s->dirty = 1;
			continue;
		}
		if ((si->op == LM_OP_CALL || si->op == LM_OP_NKIKERNEL) &&
		    (F->call_issued || si->eng != e)) {
			int sub;
			F->call_issued = 0;
			F->pos++;
			sub = descends(s, si, c) ? child_of(s, F->act, idx) : -1;
			if (sub >= 0)
				enter(s, c, e, sub);
			continue;
		}
		if ((si->op == LM_OP_SWITCHQUEUE ||
		     si->op == LM_OP_RESETQUEUE) && si->eng != e) {
			if (si->queue >= 0 && si->qinst >= 0)
				E->active[si->queue] = si->qinst;
			ls_dmablk_rewind(s->mc, fire_of(s, c), si, e);
			F->pos++;
			continue;
		}
		it->act = F->act;
		it->idx = idx;
		return 1;
	}
}

/* Engine e of core c is no longer blocked: close its wait. */
static void unblock(sim *s, int c, int e)
{
	engine *E = &s->cores[c].eng[e];
	if (E->is_blocked) {
		ls_wait_end(&s->cores[c].st, s->kern, e, &s->cores[c].wait[e],
			    s->now);
		E->is_blocked = 0;
	}
}

/* Do the waits of si hold for engine e of core c? 1 yes; 0 no (e blocked
** on a semaphore) or a run error (s->rc). A faulted instruction is
** reported where it starts. */
static int waits_hold(sim *s, int c, int e, const ls_sinst *si)
{
	char why[600];
	int first, r;
	if (!si->sy.n_wait || si->fault)
		return 1;
	r = ls_sync_ready(s->mc, c, e, &si->sy, &first, why, sizeof why);
	if (r < 0) {
		fail_at(s, c, si, "%s", why);
		return 0;
	}
	if (r == 0) {
		engine *E = &s->cores[c].eng[e];
		set_blocked(s, c, e, 1);
		/* what rescan compares (seen_blocked takes the rest) */
		E->seen_sync = ls_sync_wait_key(s->mc, c, &si->sy, first,
						&E->sync_key);
	}
	return r;
}

/* si starts on core c: its event waits consume their events. 0, or the
** run error. */
static int consume(sim *s, int c, const ls_sinst *si)
{
	char why[600];
	if (!si->sy.n_wait || si->fault ||
	    ls_sync_consume(s->mc, c, &si->sy, si, why, sizeof why) == 0)
		return 0;
	return fail_at(s, c, si, "%s", why);
}

/* The join of (act, idx), or NULL. */
static join *find_join(sim *s, int ai, int idx)
{
	for (int i = 0; i < s->n_joins; i++)
		if (s->joins[i].act == ai && s->joins[i].idx == idx)
			return &s->joins[i];
	return NULL;
}

/*
** Engine e of core c is at join it (its cursor F): it arrives and is
** parked there; the last to arrive polls the join's dependencies and
** waits, and once they hold runs it (one instruction on e); the others
** stay parked until it completes (join_release).
*/
static void join_try(sim *s, int c, int e, frame *F, item it,
		     const ls_sinst *si)
{
	const unsigned all = (1u << LS_ENGINES) - 1;
	join *J = find_join(s, it.act, it.idx);
	if (!J) {
		lm_grow(&s->joins, &s->cap_joins, s->n_joins + 1,
			sizeof *s->joins);
		J = &s->joins[s->n_joins++];
		memset(J, 0, sizeof *J);
		J->act = it.act;
		J->idx = it.idx;
		J->core = c;
	}
	if (!(J->arrived >> e & 1)) {
		unblock(s, c, e);
		J->arrived |= 1u << e;
		J->t[e] = s->now;
		if (J->arrived == all)
			J->checker = e;
	}
	if (J->started || J->arrived != all || J->checker != e)
		return;
	if (si->n_deps && deps_unmet(s, c, F, si, it.idx) >= 0) {
		set_blocked(s, c, e, 0);
		return;
	}
	if (!waits_hold(s, c, e, si))
		return;
	unblock(s, c, e);
	J->started = 1;
	if (consume(s, c, si))
		return;
	note_issue(s, F, it, si);
	F->pos++;
	start_inst(s, c, e, it);
}

/* Engine e leaves every activation of its launches (an Exit). */
static void unwind(sim *s, int c, int e)
{
	engine *E = &s->cores[c].eng[e];
	while (E->nfr > 0)
		leave(s, c, e);
	E->lhead = E->nlaunch;
}

/* Join it of core c completed (on engine ex): the parked engines go on
** past it; after an Exit no engine of the core issues anything more. */
static void join_release(sim *s, int c, int ex, item it)
{
	const ls_sinst *si = sinst_of(s, it);
	join *J = find_join(s, it.act, it.idx);
	core *k = &s->cores[c];
	if (!J)
		return;
	for (int e = 0; e < LS_ENGINES; e++) {
		engine *E = &k->eng[e];
		if (e == ex)
			continue;
		ls_wait_barrier(&k->st, s->kern, s->acts[J->act].kern, e,
				J->t[e], s->now);
		E->fr[E->nfr - 1].pos++;
	}
	*J = s->joins[--s->n_joins];
	for (int e = 0; e < LS_ENGINES && si->op == LM_OP_EXIT; e++)
		unwind(s, c, e);
	s->dirty = 1;
	for (int e = 0; e < LS_ENGINES && !s->rc; e++)
		if (e != ex)
			try_start(s, c, e);
}

/* Where an engine's cursor stands: what ctrl_next may move. */
typedef struct cursor_at {
	int nfr, lhead, act, pos, call_issued, nl, blk;
	int64_t bseq;
	lframe l[LS_MAX_NEST];
} cursor_at;

static void cursor_get(const engine *E, cursor_at *c)
{
	c->nfr = E->nfr;
	c->lhead = E->lhead;
	if (E->nfr > 0) {
		const frame *F = &E->fr[E->nfr - 1];
		c->act = F->act;
		c->pos = F->pos;
		c->call_issued = F->call_issued;
		c->nl = F->nl;
		c->blk = F->blk;
		c->bseq = F->bseq;
		memcpy(c->l, F->l, (size_t)F->nl * sizeof *F->l);
	}
}

/* Whether E's cursor still stands at c. */
static int cursor_at_same(const engine *E, const cursor_at *c)
{
	if (E->nfr != c->nfr || E->lhead != c->lhead)
		return 0;
	if (E->nfr == 0)
		return 1;
	const frame *F = &E->fr[E->nfr - 1];
	return F->act == c->act && F->pos == c->pos &&
	       F->call_issued == c->call_issued && F->nl == c->nl &&
	       F->blk == c->blk && F->bseq == c->bseq &&
	       !memcmp(F->l, c->l, (size_t)F->nl * sizeof *F->l);
}

/* E blocked for reason why (SKIP_*): what rescan compares. */
static void seen_blocked(sim *s, engine *E, int c, int why)
{
	E->skip = why;
	E->seen_epoch = s->epoch[c];
	E->seen_gepoch = s->gepoch;
}

/* Start engine e's next instruction if it may start now. */
static void try_start(sim *s, int c, int e)
{
	engine *E = &s->cores[c].eng[e];
	item it;
	const act *a;
	const ls_sinst *si;
	frame *F;
	cursor_at before;

	if (E->busy || s->rc)
		return;
	E->skip = 0;
	cursor_get(E, &before);
	int more = ctrl_next(s, c, e, &it);
	/* a cursor that moved changes what its activations' dependency
	   checks read */
	if (!cursor_at_same(E, &before))
		s->epoch[c]++;
	if (!more)
		return;
	F = &E->fr[E->nfr - 1];
	a = &s->acts[it.act];
	si = &s->mc->fns[a->fn].insts[it.idx];
	if (!a->gate_open) {
		set_blocked(s, c, e, 0);
		return;
	}
	if (si->is_join) {
		join_try(s, c, e, F, it, si);
		return;
	}
	if (si->n_deps && deps_unmet(s, c, F, si, it.idx) >= 0) {
		set_blocked(s, c, e, 0);
		seen_blocked(s, E, c, SKIP_DEP);
		return;
	}
	if (si->op == LM_OP_DRAIN && s->mc->csync[c] &&
	    s->mc->csync[c]->dma_out[e] > 0) {
		set_blocked(s, c, e, 0);
		return;
	}
	if (!waits_hold(s, c, e, si)) {
		if (E->is_blocked)
			seen_blocked(s, E, c, SKIP_SYNC);
		return;
	}
	if (si->fault && si->op != LM_OP_COREBARRIER) {
		/* reported by the semantics (operands) or here */
		if (si->op == LM_OP_CALL || si->op == LM_OP_NOOP ||
		    si->op == LM_OP_RETURN || si->op == LM_OP_SWITCHQUEUE ||
		    si->op == LM_OP_RESETQUEUE || si->op == LM_OP_DMATRIGGER) {
			fail_at(s, c, si, "%s", si->fault);
			return;
		}
	}
	unblock(s, c, e);
	s->epoch[c]++;
	if (consume(s, c, si))
		return;
	if (si->op == LM_OP_SWITCHQUEUE && si->queue >= 0 && si->qinst >= 0)
		E->active[si->queue] = si->qinst;
	if (si->dq)
		ls_dmablk_rewind(s->mc, fire_of(s, c), si, e);
	note_issue(s, F, it, si);
	if (si->op == LM_OP_CALL || si->op == LM_OP_NKIKERNEL)
		F->call_issued = 1;
	else if (si->op == LM_OP_RETURN && F->bin && si->loop < 0)
		F->pos = s->mc->fns[a->fn].n_stream[e];
	else
		F->pos++;
	s->dirty |= s->acts[it.act].nout != NULL;
	start_inst(s, c, e, it);
}

/* Retry every blocked engine (after a completion or a signal). */
static void rescan(sim *s)
{
	int n = s->n_blocked, w = 0;
	s->dirty = 0;
	dq_rescan(s);
	for (int i = 0; i < n && !s->rc; i++) {
		int id = s->blocked[i], c = id / LS_ENGINES;
		const engine *E = &s->cores[c].eng[id % LS_ENGINES];
		/* a dependency unmet, or a wait that does not hold, and
		   nothing either reads has moved since: trying it again
		   would find the same */
		if (E->is_blocked && E->skip && E->seen_epoch == s->epoch[c] &&
		    E->seen_gepoch == s->gepoch &&
		    (E->skip == SKIP_DEP ||
		     E->seen_sync == ls_sync_key_ver(s->mc, c, E->sync_key)))
			continue;
		try_start(s, c, id % LS_ENGINES);
	}
	/* keep the ones still blocked, each once, in order (new ones were
	   appended past n; one unblocked and blocked again is there twice):
	   a stamp per engine, not a search of the kept ones */
	if (++s->kept_gen == 0) {
		memset(s->kept, 0, sizeof s->kept);
		s->kept_gen = 1;
	}
	for (int i = 0; i < s->n_blocked; i++) {
		int id = s->blocked[i];
		engine *E = &s->cores[id / LS_ENGINES].eng[id % LS_ENGINES];
		if (!E->is_blocked || s->kept[id] == s->kept_gen)
			continue;
		s->kept[id] = s->kept_gen;
		s->blocked[w++] = id;
	}
	s->n_blocked = w;
}

/* ---- the deadlock report ------------------------------------------------ */

/* Engine e waits at join si: 1 with what it waits for in b (said once,
** by the first engine arrived) or nothing (another engine says it), 0
** when it is the checker (its dependencies and waits are said as any
** instruction's). */
static int describe_join(sim *s, int c, int e, const frame *F,
			 const ls_sinst *si, lm_buf *b)
{
	const unsigned all = (1u << LS_ENGINES) - 1;
	const join *J = find_join(s, F->act, s->mc->fns[s->acts[F->act].fn]
				  .stream[e][F->pos]);
	lm_buf want = LM_BUF_INIT, got = LM_BUF_INIT;
	if (!J)
		return 0;
	if (J->arrived == all)
		return J->checker != e;
	if (e != __builtin_ctz(J->arrived))
		return 1;
	for (int i = 0; i < LS_ENGINES; i++)
		lm_buf_printf(J->arrived >> i & 1 ? &got : &want, "%s%s",
			      lm_buf_cstr(J->arrived >> i & 1 ? &got : &want)[0]
			      ? ", " : "", ls_engine_name(i));
	lm_buf_printf(b, "; core %d: '%s' (%s) waits for engines [%s] "
		      "(arrived: %s)", c, S(si->in->name),
		      lm_opcode_name(si->op), lm_buf_cstr(&want),
		      lm_buf_cstr(&got));
	lm_buf_free(&want);
	lm_buf_free(&got);
	return 1;
}

static void describe_engine(sim *s, int c, int e, lm_buf *b)
{
	engine *E = &s->cores[c].eng[e];
	const ls_sinst *si;
	const ls_sfunc *sf;
	const act *a;
	const frame *F;
	int idx, di;
	if (E->halt && !E->busy) {
		lm_buf_printf(b, "; core %d %s: halted by '%s'", c,
			      ls_engine_name(e), S(E->halt->in->name));
		return;
	}
	if (E->busy) {
		if (E->cur.idx < 0)
			return;
		si = sinst_of(s, E->cur);
		if (si->op == LM_OP_COREBARRIER) {
			const group *g = &s->groups[si->group];
			char want[300], got[300];
			int64_t arr[LS_MAX_CORES];
			int na = 0;
			cores_str(g->cores, g->n_cores, want, sizeof want);
			for (int i = 0; i < g->n_arr; i++)
				arr[na++] = g->arr[i].core;
			cores_str(arr, na, got, sizeof got);
			lm_buf_printf(b, "; core %d %s: '%s' (CoreBarrier) waits "
				      "at barrier group '%s' for cores [%s] "
				      "(arrived: [%s])", c, ls_engine_name(e),
				      S(si->in->name), s->mc->groups[si->group],
				      want, got);
		}
		return;
	}
	if (E->nfr == 0)
		return;
	F = &E->fr[E->nfr - 1];
	a = &s->acts[F->act];
	sf = &s->mc->fns[a->fn];
	if (F->pos >= sf->n_stream[e])
		return;
	idx = sf->stream[e][F->pos];
	si = &sf->insts[idx];
	if (si->is_join && a->gate_open && describe_join(s, c, e, F, si, b))
		return;
	if (!a->gate_open && si->heads < 0) {
		const ls_sinst *call = sinst_of(s, (item){a->parent_act,
							  a->parent_idx});
		lm_buf_printf(b, "; core %d %s: '%s' (%s) waits for the "
			      "%s '%s' to start", c,
			      ls_engine_name(e), S(si->in->name),
			      lm_opcode_name(si->op),
			      call->op == LM_OP_CALL ? "Call" : "NKIKernel call",
			      S(call->in->name));
		return;
	}
	if ((di = deps_unmet(s, c, F, si, idx)) >= 0) {
		const ls_sdep *d = &si->deps[di];
		char it[120] = "";
		if (d->loop >= 0 && F->nl > 0)
			snprintf(it, sizeof it, " (iteration %lld of loop '%s')",
				 (long long)F->l[sf->loops[d->loop].depth].ord,
				 S(sf->insts[sf->loops[d->loop].hdr].in->name));
		lm_buf_printf(b, "; core %d %s: '%s' (%s) waits for "
			      "instruction '%s' to complete%s", c,
			      ls_engine_name(e), S(si->in->name),
			      lm_opcode_name(si->op),
			      S(sf->insts[d->a].in->name), it);
		return;
	}
	if (si->op == LM_OP_DRAIN && s->mc->csync[c] &&
	    s->mc->csync[c]->dma_out[e] > 0) {
		lm_buf_printf(b, "; core %d %s: '%s' (Drain) waits for %lld "
			      "DMA%s %s issued to complete", c,
			      ls_engine_name(e), S(si->in->name),
			      (long long)s->mc->csync[c]->dma_out[e],
			      s->mc->csync[c]->dma_out[e] == 1 ? "" : "s",
			      ls_engine_name(e));
		return;
	}
	if (si->sy.n_wait && !si->fault) {
		char why[600], what[600];
		int first;
		if (ls_sync_ready(s->mc, c, e, &si->sy, &first, why,
				  sizeof why) == 0) {
			ls_sync_describe(s->mc, c, e, &si->sy.wait[first], what,
					 sizeof what);
			lm_buf_printf(b, "; core %d %s: '%s' (%s) waits for %s",
				      c, ls_engine_name(e), S(si->in->name),
				      lm_opcode_name(si->op), what);
			return;
		}
	}
	lm_buf_printf(b, "; core %d %s: '%s' (%s) never started", c,
		      ls_engine_name(e), S(si->in->name),
		      lm_opcode_name(si->op));
}

/* Anything left after the last event? Then report the deadlock. */
static int check_finished(sim *s)
{
	lm_buf b = LM_BUF_INIT, qb = LM_BUF_INIT;
	int stuck = 0, halted = 0, queues = 0;
	/* an engine a Halt stopped is done, unless another waits */
	for (int c = 0; c < LS_MAX_CORES; c++) {
		if (!s->cores[c].used)
			continue;
		for (int e = 0; e < LS_ENGINES; e++) {
			engine *E = &s->cores[c].eng[e];
			if (E->busy || E->nfr > 0 || E->lhead < E->nlaunch) {
				if (E->halt)
					halted++;
				else
					stuck++;
			}
		}
	}
	for (int qi = 0; qi < s->mc->n_qinsts; qi++)
		queues += dq_describe(s, qi, &qb);
	if (stuck || queues)
		for (int c = 0; c < LS_MAX_CORES; c++) {
			if (!s->cores[c].used)
				continue;
			for (int e = 0; e < LS_ENGINES; e++) {
				engine *E = &s->cores[c].eng[e];
				if (E->busy || E->nfr > 0 ||
				    E->lhead < E->nlaunch)
					describe_engine(s, c, e, &b);
			}
		}
	lm_buf_printf(&b, "%s", lm_buf_cstr(&qb));
	lm_buf_free(&qb);
	stuck += stuck || queues ? halted : 0;
	if (stuck || queues) {
		s->rc = lm_errc(s->err, LM_ECHECK, s->mc->mods[0].path, "",
				"deadlock at t=%lld ps: no engine can make "
				"progress; %d blocked engine%s%s",
				(long long)s->now,
				stuck, stuck == 1 ? "" : "s", lm_buf_cstr(&b));
	}
	lm_buf_free(&b);
	return s->rc;
}

/* ---- the run ------------------------------------------------------------ */

static void handle(sim *s, const event *ev)
{
	switch (ev->kind) {
	case EV_ENG: {
		core *k = &s->cores[ev->a];
		s->epoch[ev->a]++;
		engine *E = &k->eng[ev->b];
		E->busy = 0;
		if (E->cur.idx < 0) {
			/* a back edge */
		} else if (E->cur_completes) {
			if (s->R) {
				if (sinst_of(s, E->cur)->is_join)
					race_join_all(s, ev->a);
				race_writes(s, ev->a, E->rrec,
					    rvc_eng(s, ev->a, ev->b), &E->pend);
				ls_race_set_cur(s->R, rvc_eng(s, ev->a, ev->b));
			}
			ls_exec_commit(&E->pend);
			complete(s, E->cur);
			if (sinst_of(s, E->cur)->is_join)
				join_release(s, ev->a, ev->b, E->cur);
		} else {
			if (s->now > k->st.end_ps)
				k->st.end_ps = s->now;
			if (sinst_of(s, E->cur)->op == LM_OP_NKIKERNEL ||
			    sinst_of(s, E->cur)->op == LM_OP_CALL)
				call_issued(s, E->cur);
		}
		try_start(s, ev->a, ev->b);
		break;
	}
	case EV_DMA: {
		dma *d = &s->dmas[ev->a];
		const ls_sqinst *q = &s->mc->qinsts[d->qinst];
		s->epoch[d->core]++;
		if (s->R)
			ls_race_join(s->R, ls_race_drain(s->R, d->core, d->eng),
				     race_done(s, d, sinst_of(s, (item){d->act,
								       d->idx})));
		ls_exec_commit(&d->pend);
		if (q->sem >= 0)
			ls_sync_bump(s->mc, q->sem);
		s->mc->csync[d->core]->dma_out[d->eng]--;
		if (s->tracing)
			ls_trace_add(&s->trace, d->core, LS_ENGINES + d->qinst,
				     sinst_of(s, (item){d->act, d->idx}),
				     d->act, d->idx, d->start,
				     s->now - d->start);
		if (s->acts[d->act].kern >= 0)
			ls_kern_dma(s->kern, s->acts[d->act].kern, d->qinst,
				    sinst_of(s, (item){d->act, d->idx})
				    ->dma_bytes, d->start, s->now);
		complete(s, (item){d->act, d->idx});
		d->next_free = s->free_dma;
		s->free_dma = ev->a;
		dq_pump(s, d->qinst);
		break;
	}
	case EV_BAR:
		barrier_release(s, ev->a);
		break;
	case EV_DESC:
		s->gepoch++;
		desc_event(s, ev->a, ev->b);
		break;
	}
}

/*
** The end of a dispatched run: the host learns that the program is over
** from the launched functions' Returns, so it reads the outputs ordered
** after them only (docs/race.md, "The end of a linked run"). A function
** without a Return never reports back: nothing it did is ordered
** before the host's read.
*/
static void race_host_reads(sim *s)
{
	const uint32_t *h = s->rhost ? ls_race_vc_get(s->R, s->rhost)
				     : rvc_slot(s, &s->rhost);
	for (int i = 0; i < s->mc->n_storages; i++)
		if (s->mc->storages[i].is_output)
			ls_race_host_read(s->R, h, i);
}

/* The detector's own state (access records, clocks) shares the memory
** limit with the simulated memory: past what is left, the run stops. */
static void race_limit(sim *s)
{
	int64_t b, limit = s->opt.max_memory > 0 ? s->opt.max_memory
						 : LS_MAX_MEMORY_DEFAULT;
	if (!ls_race_over(s->R, &b))
		return;
	s->rc = lm_errc(s->err, LM_EINPUT, s->mc->mods[0].path, "",
			"the race detector's access records and clocks "
			"need %lld bytes at %lld ps, more than the memory "
			"limit of %lld bytes (--max-memory) leaves after "
			"the simulated memory and its shadows",
			(long long)b, (long long)s->now, (long long)limit);
}

/* Launch the entry functions: a dispatcher's Calls, or each module's entry. */
static int launch_entries(sim *s, int multi)
{
	ls_machine *mc = s->mc;
	for (int mi = 0; mi < mc->n_mods && !s->rc; mi++) {
		ls_smod *sm = &mc->mods[mi];
		ls_sfunc *entry;
		if (sm->n_fns < 1)
			continue;
		entry = &mc->fns[sm->fn_base];
		if (!entry->is_dispatcher) {
			launch(s, sm->fn_base, (int)sm->core);
			continue;
		}
		s->dispatched = 1;
		if (multi)
			return s->rc = lm_err(s->err, sm->path, "module",
					      "a side-by-side run takes "
					      "per-core modules, not a linked "
					      "module (entry '%s' is a "
					      "dispatcher)", S(entry->f->name));
		for (int i = 0; i < entry->n && !s->rc; i++) {
			const ls_sinst *si = &entry->insts[i];
			int tc;
			if (si->op == LM_OP_RETURN)
				break;
			if (si->op == LM_OP_NOOP)
				continue;
			if (si->op != LM_OP_CALL || si->target < 0)
				return fail_at(s, -1, si, "dispatcher "
					       "instruction %s cannot run on "
					       "the host (only Call)",
					       lm_opcode_name(si->op));
			tc = (int)mc->fns[si->target].core;
			if (tc < 0 || tc >= LS_MAX_CORES)
				return fail_at(s, -1, si, "Call target '%s' "
					       "has no neuron_core_id in "
					       "[0, %d)",
					       S(si->in->target), LS_MAX_CORES);
			launch(s, si->target, tc);
		}
	}
	return s->rc;
}

static void sim_free(sim *s)
{
	for (int c = 0; c < LS_MAX_CORES; c++) {
		for (int e = 0; e < LS_ENGINES; e++) {
			for (int i = 0; i < s->cores[c].eng[e].nfr; i++)
				free(s->cores[c].eng[e].fr[i].bin);
			free(s->cores[c].eng[e].fr);
			free(s->cores[c].eng[e].launch);
			free(s->cores[c].eng[e].active);
			ls_pending_free(&s->cores[c].eng[e].pend);
		}
		free(s->cores[c].fire);
	}
	for (int i = 0; i < s->n_acts; i++) {
		act *a = &s->acts[i];
		if (a->rings)
			for (int j = 0; j < s->mc->fns[a->fn].n; j++)
				free(a->rings[j].ords);
		free(a->rings);
		free(a->nout);
		free(a->sub);
		free(a->blog);
		free(a->rh);
	}
	for (int i = 0; i < s->n_kern; i++) {
		free(s->kern[i].st.call);
		free(s->kern[i].st.func);
		free(s->kern[i].st.caller);
		for (int q = 0; q < s->kern[i].st.n_queues; q++)
			free(s->kern[i].st.queues[q].queue);
		free(s->kern[i].st.queues);
		free(s->kern[i].xf);
	}
	free(s->kern);
	free(s->fmask);
	free(s->dop);
	free(s->acts);
	for (int i = 0; i < s->n_dmas; i++)
		ls_pending_free(&s->dmas[i].pend);
	free(s->dmas);
	free(s->dq);
	free(s->groups);
	free(s->joins);
	free(s->heap);
	free(s->blocked);
	free(s->xread);
	ls_exec_free(&s->x);
	ls_trace_free(&s->trace);
	for (int i = 0; i < s->n_mm; i++)
		free(s->mm[i].name);
	free(s->mm);
}

/* A kernel record's place in the list: its start, then its creation. */
typedef struct kern_key {
	int64_t start;
	int i;
} kern_key;

static int kern_cmp(const void *pa, const void *pb)
{
	const kern_key *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* Move the kernel calls that started into out, by start (their names
** move with them; parent renumbered). */
static void collect_kernels(sim *s, ls_result *out)
{
	kern_key *ord;
	int *pos, n = 0;
	if (!s->n_kern)
		return;
	ord = lm_xcalloc((size_t)s->n_kern, sizeof *ord);
	pos = lm_xcalloc((size_t)s->n_kern, sizeof *pos);
	for (int i = 0; i < s->n_kern; i++)
		if (s->kern[i].started)
			ord[n++] = (kern_key){ s->kern[i].st.start_ps, i };
	qsort(ord, (size_t)n, sizeof *ord, kern_cmp);
	out->kernels = lm_xcalloc((size_t)n + 1, sizeof *out->kernels);
	out->n_kernels = n;
	for (int i = 0; i < s->n_kern; i++)
		pos[i] = -1;
	for (int j = 0; j < n; j++)
		pos[ord[j].i] = j;
	for (int j = 0; j < n; j++) {
		ls_kacc *k = &s->kern[ord[j].i];
		/* a call whose body never completed (stopped by a Halt)
		   lasts to the end of the run */
		if (!k->done)
			k->st.end_ps = s->last;
		ls_kern_finish(k, s->mc);
		out->kernels[j] = k->st;
		/* a started call's enclosing call started before it */
		out->kernels[j].parent = k->parent < 0 ? -1 : pos[k->parent];
		k->st.call = k->st.func = k->st.caller = NULL;
		k->st.queues = NULL;
		k->st.n_queues = 0;
	}
	free(ord);
	free(pos);
}

/* Move the statistics into out. */
static void collect(sim *s, ls_result *out)
{
	const lm_arch *ar = s->mc->arch;
	int n = 0;
	double pe_cycles = (double)s->last * ar->clock_ghz[LM_ENG_PE] / 1000.0;
	for (int c = 0; c < LS_MAX_CORES; c++)
		n += s->cores[c].used;
	out->n_cores = n;
	out->cores = lm_xcalloc((size_t)n + 1, sizeof *out->cores);
	out->sim_time_ps = s->last;
	out->instructions = s->n_instr;
	n = 0;
	for (int c = 0; c < LS_MAX_CORES; c++) {
		ls_core_stats *st;
		if (!s->cores[c].used)
			continue;
		st = &out->cores[n++];
		*st = s->cores[c].st;
		ls_wait_finish(st, s->last);
		st->pe_util = s->last > 0 ? (double)st->busy_ps[0] /
					    (double)s->last : 0.0;
		st->mac_util = pe_cycles > 0 ? (double)st->macs /
				(LM_PE_ROWS * LM_PE_COLS * pe_cycles) : 0.0;
	}
	out->n_matmuls = s->n_mm;
	out->matmuls = s->mm;
	s->mm = NULL;
	s->n_mm = 0;
	collect_kernels(s, out);
}

int ls_machine_prepare(ls_machine **out, lm_module *const *mods, int n_mods,
		       int multi, const ls_tensors *inputs,
		       const ls_options *opts, lm_error *err)
{
	int rc;
	*out = NULL;
	lm_error_clear(err);
	rc = ls_check_memory_race(mods, n_mods, opts ? opts->max_memory : 0,
				  opts && opts->race, err);
	if (!rc)
		rc = ls_machine_new(out, mods, n_mods, multi, inputs,
				    opts ? opts->files : NULL, err);
	return rc;
}

/* Run the prepared machine from its initial state, collect. */
int ls_machine_run(ls_machine *mc, const ls_options *opts, ls_result *out,
		   lm_error *err)
{
	sim *s;
	int rc;
	double t0, t1;

	memset(out, 0, sizeof *out);
	lm_error_clear(err);
	if (mc->runs++ > 0)
		ls_machine_reset(mc);
	s = lm_xcalloc(1, sizeof *s);
	s->mc = mc;
	if (opts)
		s->opt = *opts;
	s->err = err;
	s->free_dma = -1;
	s->dq = lm_xcalloc((size_t)mc->n_qinsts + 1, sizeof *s->dq);
	for (int q = 0; q < mc->n_qinsts; q++)
		s->dq[q].head = s->dq[q].tail = -1;
	s->groups = lm_xcalloc((size_t)mc->n_groups + 1, sizeof *s->groups);
	s->xread = lm_xcalloc((size_t)mc->n_storages + 1, 1);
	s->fmask = lm_xcalloc((size_t)mc->n_fns + 1, sizeof *s->fmask);
	for (int e = 0; e < LS_ENGINES; e++)
		s->edge_ps[e] = lm_arch_cycles_ps(mc->arch, (lm_engine)(e +
			LM_ENG_PE), mc->arch->sem_op_cycles > 0 ?
			mc->arch->sem_op_cycles : 1);
	s->tracing = s->opt.trace_path != NULL;
	s->x.mc = mc;
	s->x.err = err;
	if (s->opt.race) {
		s->R = mc->race = ls_race_new(mc);
		ls_race_set_limit(s->R, s->opt.max_memory > 0 ?
				  s->opt.max_memory : LS_MAX_MEMORY_DEFAULT);
	}

	t0 = lm_seconds();
	launch_entries(s, mc->multi);
	if (!s->rc && s->dirty)
		rescan(s);
	if (s->R && !s->rc)
		race_limit(s);
	while (!s->rc && s->nh > 0) {
		event ev = pop(s);
		if (s->opt.max_time_ps > 0 && ev.t > s->opt.max_time_ps) {
			s->rc = lm_errc(err, LM_ECHECK, mc->mods[0].path, "",
					"simulated time exceeded --max-time "
					"%lld ps (next event at %lld ps)",
					(long long)s->opt.max_time_ps,
					(long long)ev.t);
			break;
		}
		s->now = ev.t;
		s->last = ev.t;
		handle(s, &ev);
		if (s->dirty && !s->rc)
			rescan(s);
		if (s->R && !s->rc)
			race_limit(s);
	}
	t1 = lm_seconds();
	if (!s->rc)
		check_finished(s);
	if (!s->rc && s->R && s->dispatched)
		race_host_reads(s);
	if (s->R && !s->rc)
		race_limit(s);
	if (!s->rc && s->R && ls_race_kept_error(s->R)) {
		/* an uninitialized read no race explains */
		*err = *ls_race_kept_error(s->R);
		s->rc = err->code;
	}
	if (!s->rc) {
		char why[600];
		if (ls_sync_check_end(mc, why, sizeof why))
			s->rc = lm_errc(err, LM_ECHECK, mc->mods[0].path, "",
					"%s", why);
	}
	rc = s->rc;
	if (s->tracing) {
		lm_error terr;
		int trc = ls_trace_write(&s->trace, mc, s->opt.trace_path,
					 &terr);
		if (trc && !rc) {
			*err = terr;
			rc = trc;
		}
	}
	if (!rc) {
		collect(s, out);
		out->wall_run_s = t1 - t0;
		if (s->R)
			ls_race_collect(s->R, out);
		rc = ls_collect_outputs(mc, &out->outputs, err);
		for (int i = 0; i < mc->n_storages && !rc; i++) {
			ls_tensor *t;
			if (!s->xread[i])
				continue;
			t = ls_tensors_find(&out->outputs,
					    mc->storages[i].alloc->name);
			if (t)
				t->read_by_other_module = 1;
		}
	}
	if (rc && !err->code)
		err->code = rc;
	ls_result kept;
	memset(&kept, 0, sizeof kept);
	if (rc == LM_ECHECK && s->R) {
		ls_race_note_error(s->R, err);
		if (s->opt.keep_races && ls_race_found(s->R))
			ls_race_collect(s->R, &kept);
	}
	ls_race_free(s->R);
	mc->race = NULL;
	sim_free(s);
	free(s);
	if (rc) {
		ls_result_free(out);
		memset(out, 0, sizeof *out);
		/* a failed run's result: the races it found (keep_races) */
		out->races = kept.races;
		out->n_races = kept.n_races;
		out->races_found = kept.races_found;
		out->race_shadow_bytes = kept.race_shadow_bytes;
	}
	return rc;
}

/* Prepare, run once, free. */
static int run(lm_module *const *mods, int n_mods, int multi,
	       const ls_tensors *inputs, const ls_options *opts,
	       ls_result *out, lm_error *err)
{
	ls_machine *mc;
	int rc;

	memset(out, 0, sizeof *out);
	rc = ls_machine_prepare(&mc, mods, n_mods, multi, inputs, opts, err);
	if (rc)
		return rc;
	rc = ls_machine_run(mc, opts, out, err);
	ls_machine_free(mc);
	return rc;
}

int ls_run(const lm_module *m, const ls_tensors *inputs, const ls_options *opts,
	   ls_result *out, lm_error *err)
{
	lm_module *mods[1];
	mods[0] = (lm_module *)m; /* only read */
	return run(mods, 1, 0, inputs, opts, out, err);
}

int ls_run_multi(lm_module *const *mods, int n_mods, const ls_tensors *inputs,
		 const ls_options *opts, ls_result *out, lm_error *err)
{
	return run(mods, n_mods, 1, inputs, opts, out, err);
}

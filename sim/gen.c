/*
** gen.c -- the random multi-core program generator (`lncsim gen`).
**
** Race freedom by construction: every instruction names, as `dependencies`
** or as a semaphore `wait`, the last writer of each tile it reads (RAW), the
** last writer of each tile it writes (WAW) and every reader of those tiles
** since their last write (WAR). A DMA-produced tile is waited for through
** its queue instance's semaphore (the completion count of that instance;
** instances complete in FIFO order), everything else through dependencies.
** Cross-core hand-offs go through DRAM: the producer saves, then meets the
** consumer at a barrier that depends on the save; the consumer loads after
** the barrier. Barriers follow one global order on every core, so shared
** groups appear in the same relative order everywhere (no deadlock).
**
** Per-core barrier ids are local (1, 2, ... in program order, as separate
** compilations would number them), and cores have different barrier sets
** (solo barriers, hand-offs with different partners), so that a linked
** module whose barriers were not renumbered collides. A few hand-off groups
** are renumber:false with one fixed id on both cores. Some hand-offs are
** also model outputs, and a core may hold a view it never reads.
**
** With loops (ls_gen_opts.loops) each segment's K tiles are one static
** Loop: its body orders itself by dependencies only, and what crosses
** iterations (a load overwriting the tile the last Matmult read, the
** accumulation group) by loop_carried_dependencies. With dynamic loops
** the Loop is a DynamicForLoop over the register r_trip and the loads
** address DRAM through registers.
**
** With --sync semaphores (ls_gen_opts.sync) the same program, the same
** draws, has no dependencies: what they ordered goes through id-form
** sync_info semaphores (the queue semaphore waits stay): every
** instruction counts its completion on its engine's or its queue
** instance's slot, and each name a dependency would list becomes a wait
** for the count that instruction brought (sync_want); in a loop body
** the counts that move with the iteration are register waits (k_loop).
**
** With --compute (ls_gen_opts.compute) each core ends with a tail of
** TensorReduce, TensorScalarPtr, IndirectLoad and Select on acc
** (compute_tail), ordered by dependencies, its draws from its own stream.
*/
#include "common.h"
#include "gen.h"
#include "build.h"
#include "npy.h"
#include "safeio.h"
#include "verify.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- random numbers (splitmix64) ------------------------------------- */

typedef struct rng {
	uint64_t s;
} rng;

static uint64_t rnext(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform integer in [0, n). */
static int rint_(rng *r, int n)
{
	return n <= 1 ? 0 : (int)(rnext(r) % (uint64_t)n);
}

/* 1 with probability pct/100. */
static int chance(rng *r, int pct)
{
	return rint_(r, 100) < pct;
}

/* Uniform float in [-1, 1). */
static float runif(rng *r)
{
	return (float)((double)(rnext(r) >> 11) * (1.0 / 9007199254740992.0) * 2.0
		       - 1.0);
}

/* ---- per-core builder state ------------------------------------------ */

enum { MAX_READERS = 64, MAX_TILES = 32, MAX_INST_DEPS = 80 };

/* A tile the generator tracks for ordering. */
typedef struct tile {
	char name[40];
	int parts, elems;       /* [parts, elems] */
	lm_dtype dtype;
	int is_psum;
	char writer[48];        /* last writer ("" none) */
	int writer_inst;        /* DMA writer: queue instance index, else -1 */
	int writer_count;       /* that instance's completion count */
	int n_readers;
	char readers[MAX_READERS][48];
} tile;

/*
** The sync semaphores (--sync semaphores): one per compute engine, counting
** the completions of its instructions (an engine runs one instruction at a
** time, so they complete in program order), and one per queue instance,
** counting the completions of its DMAs (FIFO, issued in program order).
** Slot s has id s + 1 in the core's bank.
*/
enum { SS_PE = 0, SS_ACT, SS_DVE, SS_POOL, SS_SP, SS_Q0, N_SSEM = SS_Q0 + 3 };

static const char *const ss_names[N_SSEM] = {
	"sy_pe", "sy_act", "sy_dve", "sy_pool", "sy_sp", "sy_q0", "sy_qaux_a",
	"sy_qaux_b",
};

/* A finished instruction: the sync semaphore its completion counts on
** and the count it brings. */
typedef struct sdone {
	char name[48];
	int sem, count;
} sdone;

/* A queue instance of the core's module. */
typedef struct qinst {
	const char *queue, *name, *sem;
	int issued;             /* DMAs issued on it so far */
} qinst;

typedef struct core_b {
	int core;
	lm_builder *b;          /* the core's module */
	lm_error berr;          /* its first failure */
	tile tiles[MAX_TILES];
	int n_tiles;
	int64_t sb_addr;        /* bump allocator, bytes per partition */
	int psum_bank;
	qinst qi[3];            /* qSyncIO0, qAux_a, qAux_b */
	int aux_active;         /* 1 or 2: active instance of qAux */
	int uses_aux;
	int n_inst;             /* for names */
	lm_engine dma_engine;   /* issuing engine of the core's qSyncIO0 DMAs */
	int next_barrier_id;
	char last_barrier[48];
	int in_loop;            /* building a loop body: no queue
				   semaphore waits */
	int sync;               /* --sync semaphores */
	int cur_qi;             /* queue instance of the DMA being finished */
	int sem_count[N_SSEM];  /* completions counted so far per slot */
	sdone *done;            /* every instruction that counts, in order */
	int n_done, cap_done;
	int has_trip_reg;       /* r_trip allocated (--dynamic) */
	int x_id, x_core;       /* --sync semaphores, a hand-off: the next
				   instruction finished also updates slot
				   x_id of core x_core (x_core >= 0), or
				   waits for it >= 1 (x_core -1; 0: none) */
	int n_regop;            /* register and fence instructions, for
				   names (their own count keeps the others'
				   names) */
} core_b;

/* The whole set being built. */
typedef struct gen {
	rng r;
	int n;
	int M, N, T;            /* matmul shape: out [M, N], T K-tiles */
	int segments;
	int loops;              /* --loops: K tiles in a static Loop */
	int dynamic;            /* --dynamic: ... in a DynamicForLoop */
	int64_t dram_addr;
	const char *name;
	core_b *cores;
	ls_gen_file *files;
	int n_files, cap_files;
	const char *out_dir;
} gen;

/* ---- building the IR -------------------------------------------------- */

/* A physical_ap over [parts, elems] of allocation name (rows of row_len
** elements), from element offset. */
static void operand(core_b *c, lm_inst *in, int side, const char *name,
		    lm_dtype dt, int64_t row_len, int parts, int elems,
		    int64_t offset)
{
	lm_appair ap[2] = { { row_len, parts }, { 1, elems } };
	lm_b_ap(c->b, in, side, name, dt, 0, offset, ap, 2);
}

static void tile_operand(core_b *c, lm_inst *in, int side, const tile *t)
{
	operand(c, in, side, t->name, t->dtype, t->elems, t->parts, t->elems,
		0);
}

/* An allocation [rows, cols] at addr of memory type mt, file (NULL:
** none), a view of remote on remote_core when remote is given. */
static void add_alloc(core_b *c, const char *name, lm_tensorkind kind,
		      lm_dtype dt, int64_t rows, int64_t cols, lm_memtype mt,
		      int64_t addr, const char *file, const char *remote,
		      int remote_core)
{
	int64_t shape[2] = { rows, cols };
	int64_t dims[2] = { rows, cols * lm_dtype_size(dt) };
	lm_alloc *a = lm_b_alloc(c->b, name, kind, dt, shape, 2);
	if (!a)
		return;
	lm_b_set_addr_space(a, "Shared");
	lm_b_set_file(a, file ? file : "");
	if (remote)
		lm_b_set_view(a, remote, remote_core);
	lm_b_memloc(c->b, a, mt, addr, dims, 2, 0);
}

/* Find or create a tracked SB/PSUM tile. */
static tile *get_tile(core_b *c, const char *name, int parts, int elems,
		      lm_dtype dt, int is_psum)
{
	for (int i = 0; i < c->n_tiles; i++)
		if (!strcmp(c->tiles[i].name, name))
			return &c->tiles[i];
	assert(c->n_tiles < MAX_TILES); /* the generator uses ~14 tiles */
	tile *t = &c->tiles[c->n_tiles++];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	t->parts = parts;
	t->elems = elems;
	t->dtype = dt;
	t->is_psum = is_psum;
	t->writer_inst = -1;
	if (is_psum) {
		int bank = c->psum_bank++ % LM_PSUM_BANKS;
		add_alloc(c, name, LM_TK_INTERNAL, dt, parts, elems, LM_MT_PSUM,
			  (int64_t)bank * LM_PSUM_BANK_BYTES, NULL, NULL, 0);
	} else {
		int64_t bytes = (int64_t)elems * lm_dtype_size(dt);
		add_alloc(c, name, LM_TK_INTERNAL, dt, parts, elems, LM_MT_SB,
			  c->sb_addr, NULL, NULL, 0);
		c->sb_addr += (bytes + 63) & ~(int64_t)63;
	}
	return t;
}

/* Dependency / wait list under construction for one instruction. */
typedef struct deps {
	int n;
	char names[MAX_INST_DEPS][48];
	int n_wait;
	int wait_inst[3];
	int wait_val[3];
} deps;

static void dep_add(deps *d, const char *name)
{
	if (!name || !*name)
		return;
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return;
	if (d->n < MAX_INST_DEPS)
		snprintf(d->names[d->n++], sizeof d->names[0], "%s", name);
}

static void wait_add(deps *d, int inst, int val)
{
	for (int i = 0; i < d->n_wait; i++)
		if (d->wait_inst[i] == inst) {
			if (val > d->wait_val[i])
				d->wait_val[i] = val;
			return;
		}
	d->wait_inst[d->n_wait] = inst;
	d->wait_val[d->n_wait++] = val;
}

/* RAW: wait for the last writer of a tile read by the new instruction. */
static void need_read(gen *g, core_b *c, deps *d, const tile *t)
{
	if (!t->writer[0])
		return;
	if (!c->in_loop && t->writer_inst >= 0 && chance(&g->r, 80))
		wait_add(d, t->writer_inst, t->writer_count);
	else
		dep_add(d, t->writer);
}

/* WAW + WAR for a tile the new instruction writes. */
static void need_write(deps *d, const tile *t)
{
	dep_add(d, t->writer);
	for (int i = 0; i < t->n_readers; i++)
		dep_add(d, t->readers[i]);
}

static void note_read(tile *t, const char *inst)
{
	for (int i = 0; i < t->n_readers; i++)
		if (!strcmp(t->readers[i], inst))
			return;
	if (t->n_readers < MAX_READERS)
		snprintf(t->readers[t->n_readers++], sizeof t->readers[0], "%s", inst);
}

static void note_write(tile *t, const char *inst, int dma_inst, int count)
{
	snprintf(t->writer, sizeof t->writer, "%s", inst);
	t->writer_inst = dma_inst;
	t->writer_count = count;
	t->n_readers = 0;
}

/* A new instruction of the core's program named prefix_<n> (the name
** into out); NULL when the builder failed (lm_b_finish says why). */
static lm_inst *new_inst(core_b *c, lm_opcode op, lm_engine engine,
			 const char *prefix, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s_%d", prefix, c->n_inst++);
	return lm_b_inst(c->b, op, engine, out);
}

static int eng_slot(lm_engine e)
{
	switch (e) {
	case LM_ENG_PE: return SS_PE;
	case LM_ENG_ACT: return SS_ACT;
	case LM_ENG_DVE: return SS_DVE;
	case LM_ENG_POOL: return SS_POOL;
	default: return SS_SP;
	}
}

static void done_add(core_b *c, const char *name, int sem, int count)
{
	lm_grow(&c->done, &c->cap_done, c->n_done + 1, sizeof *c->done);
	sdone *x = &c->done[c->n_done++];
	snprintf(x->name, sizeof x->name, "%s", name);
	x->sem = sem;
	x->count = count;
}

/* The count each slot must reach before an instruction ordered after
** every name of d may start (0: no wait on that slot). */
static void sync_want(const core_b *c, const deps *d, int want[N_SSEM])
{
	memset(want, 0, N_SSEM * sizeof *want);
	for (int i = 0; i < d->n; i++) {
		int k = c->n_done - 1;
		while (k >= 0 && strcmp(c->done[k].name, d->names[i]))
			k--;
		assert(k >= 0); /* every name ordered on has been finished */
		if (c->done[k].count > want[c->done[k].sem])
			want[c->done[k].sem] = c->done[k].count;
	}
}

/* Attach dependencies and waits; with --sync semaphores the names of d
** become on_waits of the sync semaphores, and the instruction's own
** completion an on_update of its slot. */
static void finish_inst(core_b *c, lm_inst *o, const deps *d)
{
	if (!o)
		return;
	if (c->sync) {
		int want[N_SSEM];
		sync_want(c, d, want);
		for (int s = 0; s < N_SSEM; s++)
			if (want[s]) {
				lm_sync e = {0};
				e.id = s + 1;
				e.mode = LM_WAIT_SEM_GE_IMM;
				e.has_value = 1;
				e.value = want[s];
				lm_inst_add_sync(o, 0, &e);
			}
		if (o->op != LM_OP_SWITCHQUEUE) {
			int s = lm_opcode_is_dma(o->op) ? SS_Q0 + c->cur_qi
							: eng_slot(o->engine);
			lm_sync u = {0};
			u.id = s + 1;
			u.mode = LM_UPD_SEM_INC;
			lm_inst_add_sync(o, 1, &u);
			done_add(c, o->name, s, ++c->sem_count[s]);
		}
		if (c->x_id) {
			lm_sync x = {0};
			x.id = c->x_id;
			x.mode = c->x_core >= 0 ? LM_UPD_SEM_INC
						: LM_WAIT_SEM_GE_IMM;
			x.has_value = c->x_core < 0;
			x.value = 1;
			x.has_core = c->x_core >= 0;
			x.core = c->x_core;
			lm_inst_add_sync(o, c->x_core >= 0, &x);
			c->x_id = 0;
		}
	} else {
		for (int i = 0; i < d->n; i++)
			lm_inst_add_dep(o, 0, d->names[i], LM_EDGE_FLOW);
	}
	for (int i = 0; i < d->n_wait; i++)
		lm_b_wait(c->b, o, c->qi[d->wait_inst[i]].sem, d->wait_val[i]);
}

static lm_engine dma_engine(gen *g)
{
	static const lm_engine e[] = {
		LM_ENG_SP, LM_ENG_SP, LM_ENG_SP, LM_ENG_ACT, LM_ENG_POOL,
	};
	return e[rint_(&g->r, 5)];
}

/*
** Pick the queue instance for a DMA: qSyncIO0, or qAux's active one.
** Waits count completions of an instance, and an instance completes in
** issue order, so all DMAs of one instance must be issued in program
** order: every qSyncIO0 DMA of a core comes from one engine (chosen per
** core), and qAux DMAs and the SwitchQueueInstance of qAux all from SP
** (a DMA captures the active instance when it is issued).
*/
static int pick_qi(gen *g, core_b *c)
{
	if (c->uses_aux && chance(&g->r, 40))
		return c->aux_active;
	return 0;
}

/*
** DMA from DRAM tensor `src` (rows x cols, read rows [row0, row0+parts),
** all cols) into SB tile t. extra_dep: an instruction that must complete
** first (a barrier), or NULL.
*/
static void dma_load(gen *g, core_b *c, const char *src, lm_dtype sdt,
		     int64_t cols, int64_t row0, tile *t, const char *extra_dep)
{
	char nm[48];
	int qi = pick_qi(g, c);
	lm_inst *o = new_inst(c, LM_OP_DMACOPY, qi ? LM_ENG_SP : c->dma_engine,
			      "ld", nm, sizeof nm);
	deps d = {0};
	need_write(&d, t);
	dep_add(&d, extra_dep);
	operand(c, o, LM_B_IN, src, sdt, cols, t->parts, t->elems, row0 * cols);
	tile_operand(c, o, LM_B_OUT, t);
	lm_b_dma_queue(c->b, o, c->qi[qi].queue);
	c->cur_qi = qi;
	finish_inst(c, o, &d);
	c->qi[qi].issued++;
	note_write(t, nm, qi, c->qi[qi].issued);
}

/* DMA from SB tile t to DRAM tensor dst (t's shape). */
static void dma_store(gen *g, core_b *c, tile *t, const char *dst, char *nm,
		      size_t nmlen)
{
	int qi = pick_qi(g, c);
	lm_inst *o = new_inst(c, LM_OP_DMACOPY, qi ? LM_ENG_SP : c->dma_engine,
			      "st", nm, nmlen);
	deps d = {0};
	need_read(g, c, &d, t);
	tile_operand(c, o, LM_B_IN, t);
	operand(c, o, LM_B_OUT, dst, t->dtype, t->elems, t->parts, t->elems, 0);
	lm_b_dma_queue(c->b, o, c->qi[qi].queue);
	c->cur_qi = qi;
	finish_inst(c, o, &d);
	c->qi[qi].issued++;
	note_read(t, nm);
}

/* A compute instruction over tiles: ins read, out written (NULL when the
** builder failed). */
static lm_inst *compute(gen *g, core_b *c, lm_opcode op, lm_engine engine,
			tile **ins, int n_ins, tile *out, const char *prefix,
			char *nm, size_t nmlen, deps *d)
{
	lm_inst *o = new_inst(c, op, engine, prefix, nm, nmlen);
	for (int i = 0; i < n_ins; i++) {
		need_read(g, c, d, ins[i]);
		tile_operand(c, o, LM_B_IN, ins[i]);
	}
	if (out) {
		need_write(d, out);
		tile_operand(c, o, LM_B_OUT, out);
	}
	return o;
}

/* Record reads/writes of a finished compute instruction. */
static void compute_done(core_b *c, lm_inst *o, deps *d, tile **ins,
			 int n_ins, tile *out, const char *nm)
{
	finish_inst(c, o, d);
	for (int i = 0; i < n_ins; i++)
		note_read(ins[i], nm);
	if (out)
		note_write(out, nm, -1, 0);
}

static void barrier(gen *g, core_b *c, const char *group, const int *cores,
		    int n_cores, int fixed_id, const char *dep, char *nm,
		    size_t nmlen)
{
	int64_t cs[64];
	(void)g;
	lm_inst *o = new_inst(c, LM_OP_COREBARRIER, LM_ENG_POOL, "cb", nm,
			      nmlen);
	deps d = {0};
	dep_add(&d, dep);
	assert(n_cores <= 64); /* cores are 1..64 */
	for (int i = 0; i < n_cores; i++)
		cs[i] = cores[i];
	if (o) {
		lm_b_set_barrier(o, fixed_id >= 0 ? fixed_id
				 : c->next_barrier_id, cs, n_cores, group);
		if (fixed_id >= 0)
			lm_b_set_renumber(o, 0);
	}
	if (fixed_id < 0)
		c->next_barrier_id++;
	finish_inst(c, o, &d);
	snprintf(c->last_barrier, sizeof c->last_barrier, "%s", nm);
}

/*
** Core c's module, empty but for its frame: version 2, arch, the set's
** name, its core id and file <out_dir>/<name>/nc<c>/sg0/def.json, the
** semaphores and queues it uses (qSyncIO0 on s_dma; qAux's instances on
** s_aux_a and s_aux_b when it uses qAux), one function sg0000 with one
** block Block1.
*/
static void core_module(core_b *c, const char *arch, const char *name,
			const char *out_dir)
{
	int nq = c->uses_aux ? 3 : 1;
	char *path = lm_xasprintf("%s/%s/nc%d/sg0/def.json", out_dir, name,
				  c->core);
	c->b = lm_b_new(arch, 2, &c->berr);
	lm_b_path(c->b, path);
	free(path);
	lm_b_name(c->b, name);
	lm_b_core_id(c->b, c->core);
	for (int q = 0; q < nq; q++)
		lm_b_semaphore(c->b, c->qi[q].sem, 0);
	for (int s = 0; c->sync && s < N_SSEM; s++) {
		lm_semaphore *sm = lm_b_semaphore(c->b, ss_names[s], 0);
		if (sm) {
			sm->has_id = 1;
			sm->id = s + 1;
		}
	}
	for (int q = 0; q < nq; q++) {
		if (q == 0 || q == 1)
			lm_b_queue(c->b, c->qi[q].queue);
		lm_b_qinstance(c->b, c->qi[q].queue, c->qi[q].name,
			       c->qi[q].sem);
	}
	lm_b_function(c->b, "sg0000");
	lm_b_block(c->b, "Block1");
}

/* ---- const files ----------------------------------------------------- */

/* Random tensor of dtype dt (draws from r) written as an .npy under core
** c's directory. */
static void const_file_r(gen *g, rng *r, int core, const char *fname,
			 lm_dtype dt, int64_t rows, int64_t cols)
{
	int64_t n = rows * cols;
	size_t es = (size_t)lm_dtype_size(dt);
	char *data = lm_xmalloc((size_t)n * es);
	for (int64_t i = 0; i < n; i++)
		lm_store_elem(dt, data + (size_t)i * es, runif(r));
	int64_t shape[2] = {rows, cols};
	lm_error err;
	lm_grow(&g->files, &g->cap_files, g->n_files + 1, sizeof *g->files);
	ls_gen_file *f = &g->files[g->n_files++];
	f->relpath = lm_xasprintf("%s/nc%d/sg0/%s", g->name, core, fname);
	if (lm_npy_serialize(dt, shape, 2, data, &f->bytes, &f->len, &err)) {
		f->bytes = NULL;
		f->len = 0;
	}
	free(data);
}

static void const_file(gen *g, int core, const char *fname, lm_dtype dt,
		       int64_t rows, int64_t cols)
{
	const_file_r(g, &g->r, core, fname, dt, rows, cols);
}

/* ---- the program ----------------------------------------------------- */

typedef struct handoff {
	int prod, cons, seg, fixed_id;
	int model_out;  /* h<i> is also a model output (location type Output) */
	int by_name;    /* the consumer's input is named h<i> (no view) */
} handoff;

static const lm_actfunc act_funcs[] = {
	LM_ACT_IDENTITY, LM_ACT_RELU, LM_ACT_TANH, LM_ACT_SIGMOID, LM_ACT_COPY,
	LM_ACT_SILU, LM_ACT_GELU_APPRX_TANH, LM_ACT_SQUARE,
};
static const lm_aluop tt_ops[] = {
	LM_ALU_ADD, LM_ALU_MAX, LM_ALU_SUBTRACT, LM_ALU_MULT, LM_ALU_MIN,
};

static void k_loop(gen *g, core_b *c, tile *ps, const char *xin,
		   lm_dtype wdt, int T);

/* One matmul segment: K-tile loads, accumulation group, evacuation,
** elementwise combine into acc. */
static void segment(gen *g, core_b *c, int seg, const char *xin,
		    lm_dtype wdt, int bias_mode)
{
	char nm[48];
	int M = g->M, N = g->N, T = 1 + rint_(&g->r, g->T);
	if (c->uses_aux && chance(&g->r, 50)) {
		/* switch qAux to its other instance */
		c->aux_active = c->aux_active == 1 ? 2 : 1;
		lm_inst *o = new_inst(c, LM_OP_SWITCHQUEUE, LM_ENG_SP, "sqi", nm,
				      sizeof nm);
		lm_b_switch_queue(c->b, o, "qAux", c->qi[c->aux_active].name);
		deps d = {0};
		finish_inst(c, o, &d);
	}
	char psname[16];
	snprintf(psname, sizeof psname, "ps%d", seg % 2);
	tile *ps = get_tile(c, psname, M, N, LM_DT_FLOAT32, 1);
	if (g->loops && T == 1)
		T = 2;
	if (g->loops)
		k_loop(g, c, ps, xin, wdt, T);
	for (int t = 0; t < T && !g->loops; t++) {
		char wn[16], xn[16];
		snprintf(wn, sizeof wn, "w%d", t);
		snprintf(xn, sizeof xn, "x%d", t);
		tile *wt = get_tile(c, wn, 128, M, wdt, 0);
		tile *xt = get_tile(c, xn, 128, N, LM_DT_FLOAT32, 0);
		dma_load(g, c, "w", wdt, M, (int64_t)t * 128, wt, NULL);
		dma_load(g, c, xin, LM_DT_FLOAT32, N, (int64_t)t * 128, xt, NULL);
		tile *ins[2] = {wt, xt};
		deps d = {0};
		lm_inst *o = compute(g, c, LM_OP_MATMULT, LM_ENG_PE, ins, 2, ps,
				     "mm", nm, sizeof nm, &d);
		if (o)
			lm_b_set_matmult(o, t == 0, t == T - 1, 0);
		compute_done(c, o, &d, ins, 2, ps, nm);
	}
	/* evacuate PSUM -> r */
	lm_dtype rdt = chance(&g->r, 30) ? LM_DT_BFLOAT16 : LM_DT_FLOAT32;
	char rn[16];
	snprintf(rn, sizeof rn, "r_%s", lm_dtype_name(rdt));
	tile *r = get_tile(c, rn, M, N, rdt, 0);
	if (chance(&g->r, 75)) {
		tile *bias;
		if (bias_mode == 1) {
			bias = get_tile(c, "bias", M, 1, LM_DT_FLOAT32, 0);
			if (!bias->writer[0])
				dma_load(g, c, "b", LM_DT_FLOAT32, 1, 0, bias, NULL);
		} else {
			bias = get_tile(c, "zero_bias", M, 1, LM_DT_FLOAT32, 0);
			if (!bias->writer[0]) {
				deps d = {0};
				lm_inst *o = compute(g, c, LM_OP_MEMSET,
						     chance(&g->r, 50) ? LM_ENG_POOL
								       : LM_ENG_DVE,
						     NULL, 0, bias, "ms", nm,
						     sizeof nm, &d);
				if (o)
					lm_b_set_memset(o, "Const", 0);
				compute_done(c, o, &d, NULL, 0, bias, nm);
			}
		}
		tile *ins[2] = {ps, bias};
		deps d = {0};
		lm_inst *o = compute(g, c, LM_OP_ACTIVATION, LM_ENG_ACT, ins, 2, r,
				     "act", nm, sizeof nm, &d);
		/* the draws in this order: the function, then the scale */
		lm_actfunc f = act_funcs[rint_(&g->r, (int)(sizeof act_funcs /
							    sizeof act_funcs[0]))];
		double scale = chance(&g->r, 50) ? 1.0 : 0.125;
		if (o)
			lm_b_set_activation(o, f, scale);
		compute_done(c, o, &d, ins, 2, r, nm);
	} else {
		tile *ins[1] = {ps};
		deps d = {0};
		lm_inst *o = compute(g, c, LM_OP_TENSORCOPY,
				     chance(&g->r, 50) ? LM_ENG_DVE : LM_ENG_ACT,
				     ins, 1, r, "cp", nm, sizeof nm, &d);
		compute_done(c, o, &d, ins, 1, r, nm);
	}
	/* combine into acc */
	tile *acc = get_tile(c, "acc", M, N, LM_DT_FLOAT32, 0);
	if (!acc->writer[0]) {
		tile *ins[1] = {r};
		deps d = {0};
		lm_inst *o = compute(g, c, LM_OP_TENSORSCALAR, LM_ENG_DVE, ins, 1,
				     acc, "ts", nm, sizeof nm, &d);
		/* the draws in this order: op1, then reverse1 */
		lm_aluop op1 = chance(&g->r, 50) ? LM_ALU_ADD : LM_ALU_SUBTRACT;
		int rev1 = chance(&g->r, 50);
		if (o)
			lm_b_set_tensor_scalar(o, LM_ALU_MULT, 0.5, 0, op1, 0.25,
					       rev1);
		compute_done(c, o, &d, ins, 1, acc, nm);
	} else {
		tile *ins[2] = {acc, r};
		deps d = {0};
		lm_inst *o = compute(g, c, LM_OP_TENSORTENSOR,
				     chance(&g->r, 70) ? LM_ENG_DVE : LM_ENG_POOL,
				     ins, 2, acc, "tt", nm, sizeof nm, &d);
		lm_aluop op = tt_ops[rint_(&g->r, 5)];
		if (o)
			lm_b_set_alu(o, op);
		compute_done(c, o, &d, ins, 2, acc, nm);
	}
}

/* ---- the K loop (--loops) -------------------------------------------- */

/* `"key":[["a","Flow"],...]` for the names of d. */
static void json_deps(lm_buf *j, const char *key, const deps *d)
{
	lm_buf_printf(j, ",\"%s\":[", key);
	for (int i = 0; i < d->n; i++)
		lm_buf_printf(j, "%s[\"%s\",\"Flow\"]", i ? "," : "",
			      d->names[i]);
	lm_buf_puts(j, "]");
}

/* A [parts, elems] operand of allocation name, rows of row_len elements:
** physical at offset 0 (coeff 0) or symbolic_ap at address coeff * k. */
static void json_ap(lm_buf *j, const char *name, lm_dtype dt,
		    int64_t row_len, int parts, int elems, int64_t coeff)
{
	lm_buf_printf(j, "{\"kind\":\"%s\",\"ap\":[[%lld,%d],[1,%d]],"
		      "\"dtype\":\"%s\",\"memsetref\":\"%s\",\"memref\":\"%s\"",
		      coeff ? "symbolic_ap" : "physical_ap", (long long)row_len,
		      parts, elems, lm_dtype_name(dt), name, name);
	if (coeff)
		lm_buf_printf(j, ",\"addrs\":[{\"kind\":\"AffExprKind\","
			      "\"terms\":[{\"idx\":{\"kind\":\"AffIVKind\","
			      "\"axis\":\"k\"},\"coeff\":%lld}],\"c\":0}]}",
			      (long long)coeff);
	else
		lm_buf_puts(j, ",\"offset\":0}");
}

/* A register allocation of the core (int32, one REG location). */
static void reg_alloc(core_b *c, const char *name)
{
	char *t = lm_xasprintf("{\"name\":\"%s\",\"kind\":\"Internal\","
			       "\"dtype\":\"int32\",\"tensor_shape\":[1],"
			       "\"memorylocations\":[{\"name\":\"%s\","
			       "\"type\":\"REG\",\"addr\":0}]}", name, name);
	lm_b_alloc_json(c->b, t);
	free(t);
}

/* A RegisterMove (op NULL: dst := imm) or a RegisterAlu (dst := dst op
** imm) on engine e, its JSON appended to j; named rmv_<n> / ralu_<n>. */
static void json_regop(core_b *c, lm_buf *j, const char *op, lm_engine e,
		       const char *dst, int64_t imm)
{
	lm_buf_printf(j, "{\"opcode\":\"%s\",\"name\":\"%s_%d\",\"engine\":"
		      "\"%s\",", op ? "RegisterAlu" : "RegisterMove",
		      op ? "ralu" : "rmv", c->n_regop++, lm_engine_name(e));
	if (op)
		lm_buf_printf(j, "\"op\":\"%s\",\"ins\":[{\"kind\":"
			      "\"register_access\",\"dtype\":\"int32\","
			      "\"regref\":\"%s\"},", op, dst);
	else
		lm_buf_puts(j, "\"ins\":[");
	lm_buf_printf(j, "{\"kind\":\"imm_value\",\"dtype\":\"int32\","
		      "\"value\":%lld}],\"outs\":[{\"kind\":\"register_access\","
		      "\"dtype\":\"int32\",\"regref\":\"%s\"}]}",
		      (long long)imm, dst);
}

/* The same as an instruction of the current block. */
static void reg_inst(core_b *c, const char *op, lm_engine e, const char *dst,
		     int64_t imm)
{
	lm_buf j = {0};
	json_regop(c, &j, op, e, dst, imm);
	lm_b_inst_json(c->b, lm_buf_cstr(&j));
	lm_buf_free(&j);
}

/* A semaphore wait in sync_info: on slot s for a constant count, or for
** the count in register reg. */
static void json_wait(lm_buf *j, int *first, int s, int count,
		      const char *reg)
{
	lm_buf_printf(j, "%s{\"id\":%d,", *first ? "" : ",", s + 1);
	if (reg)
		lm_buf_printf(j, "\"mode\":\"sem-ge-reg\",\"regref\":\"%s\"}",
			      reg);
	else
		lm_buf_printf(j, "\"mode\":\"sem-ge-imm\",\"wait_value\":%d}",
			      count);
	*first = 0;
}

/* `"sync_info"` of a loop body instruction: the constant waits want
** (but on the slots of the register waits, which are the larger), the
** register waits (rs[i] on slot rsem[i]), the update of slot own. */
static void json_sync(lm_buf *j, const int want[N_SSEM], const int *rsem,
		      char (*rs)[48], int n_rs, int own)
{
	int first = 1;
	lm_buf_puts(j, ",\"sync_info\":{\"on_wait\":[");
	for (int s = 0; s < N_SSEM; s++) {
		int by_reg = 0;
		for (int i = 0; i < n_rs; i++)
			by_reg |= rsem[i] == s;
		if (want[s] && !by_reg)
			json_wait(j, &first, s, want[s], NULL);
	}
	for (int i = 0; i < n_rs; i++)
		json_wait(j, &first, rsem[i], 0, rs[i]);
	lm_buf_printf(j, "],\"on_update\":[{\"id\":%d,\"mode\":\"sem-inc\"}]}",
		      own + 1);
}

/*
** --sync semaphores, after each K loop: the loop epilogue of the
** compiler's control lowering, AllEngineBarrier, GroupResetSemaphores of
** the engines' slots, AllEngineBarrier, all on ALL. Every engine has
** then issued, so completed, all it had before the fence, and its slot
** restarts at 0: nothing after waits for those instructions. The queue
** slots keep counting (DMAs may still be in flight).
*/
static void loop_fence(core_b *c)
{
	static const int64_t ids[] = { SS_PE + 1, SS_ACT + 1, SS_DVE + 1,
				       SS_POOL + 1, SS_SP + 1 };
	char nm[48];
	lm_inst *o;
	snprintf(nm, sizeof nm, "aeb_%d", c->n_regop++);
	lm_b_inst(c->b, LM_OP_AEBARRIER, LM_ENG_ALL, nm);
	snprintf(nm, sizeof nm, "grs_%d", c->n_regop++);
	if ((o = lm_b_inst(c->b, LM_OP_GROUPRESET, LM_ENG_ALL, nm)) != NULL)
		lm_b_set_sema_group(o, ids, 5);
	snprintf(nm, sizeof nm, "aeb_%d", c->n_regop++);
	lm_b_inst(c->b, LM_OP_AEBARRIER, LM_ENG_ALL, nm);
	for (int s = 0; s < SS_Q0; s++)
		c->sem_count[s] = 0;
	for (int k = 0; k < c->n_done; k++)
		if (c->done[k].sem < SS_Q0)
			c->done[k].count = 0;
}

/* One K-tile load of the loop body: DRAM src (rows of cols elements,
** tile k at rows k*128) into t on queue instance qi. */
typedef struct kload {
	const char *src;
	lm_dtype dt;
	int64_t cols;
	tile *t;
	int qi;
	lm_engine eng;
	int pos;                /* its place among the iteration's DMAs on qi */
	char nm[48];
	char ra[48];            /* --dynamic: the address register */
	char rt[48];            /* --sync semaphores: the WAR threshold */
} kload;

/* The load L in the body under construction (mm: the body's Matmult;
** dyn: addressed through its register L->ra). */
static void loop_load(core_b *c, lm_buf *j, kload *L, const char *mm,
		      int T, int dyn)
{
	tile *t = L->t;
	deps d = {0}, lc = {0};
	snprintf(L->nm, sizeof L->nm, "ld_%d", c->n_inst++);
	need_write(&d, t);
	dep_add(&lc, mm);       /* WAR on t: the previous iteration's Matmult */
	lm_buf_printf(j, "{\"opcode\":\"DMACopy\",\"name\":\"%s\","
		      "\"engine\":\"%s\",\"ins\":[", L->nm,
		      lm_engine_name(L->eng));
	if (dyn)
		lm_buf_printf(j, "{\"kind\":\"register_ap\",\"ap\":[[%lld,%d],"
			      "[1,%d]],\"dtype\":\"%s\",\"memsetref\":\"%s\","
			      "\"memref\":\"%s\",\"regref\":\"%s\","
			      "\"is_regloc_offset\":true,\"const_ap_offset\":0}",
			      (long long)L->cols, t->parts, t->elems,
			      lm_dtype_name(L->dt), L->src, L->src, L->ra);
	else
		json_ap(j, L->src, L->dt, L->cols, t->parts, t->elems,
			128 * L->cols);
	lm_buf_puts(j, "],\"outs\":[");
	json_ap(j, t->name, t->dtype, t->elems, t->parts, t->elems, 0);
	lm_buf_printf(j, "],\"queue\":\"%s\"", c->qi[L->qi].queue);
	if (c->sync) {
		int want[N_SSEM], rsem[1] = {SS_PE};
		char rs[1][48];
		sync_want(c, &d, want);
		snprintf(rs[0], sizeof rs[0], "%s", L->rt);
		json_sync(j, want, rsem, rs, 1, SS_Q0 + L->qi);
	} else {
		json_deps(j, "dependencies", &d);
		json_deps(j, "loop_carried_dependencies", &lc);
	}
	lm_buf_puts(j, ",\"loopnest\":[\"k\"]},");
	if (dyn) {
		json_regop(c, j, "add", L->eng, L->ra, 128 * L->cols);
		lm_buf_puts(j, ",");
	}
	if (c->sync) {
		json_regop(c, j, "add", L->eng, L->rt, 1);
		lm_buf_puts(j, ",");
	}
	c->qi[L->qi].issued += T;
	note_write(t, L->nm, -1, 0);
}

/*
** The K tiles of a segment as one Loop k in [0, T) (T >= 2): per
** iteration a load of w tile k and x tile k into the same two SB tiles,
** their DRAM addresses affine in k (symbolic_ap), and a Matmult into PSUM
** whose accumulation_flag starts the group on k = 0 and stops it on k = T
** - 1. Loop-carried dependencies: each load after the previous
** iteration's Matmult (it overwrites the tile that Matmult read), the
** Matmult after the previous one (the accumulation crosses iterations).
**
** --dynamic: a DynamicForLoop whose ub is register r_trip (T moved there
** on every engine before the loop); each load's DRAM address is a
** register_ap on an address register its engine sets to 0 before the loop
** and advances by one tile after each load.
**
** --sync semaphores: no dependencies. Before the loop each load's engine
** sets a threshold register to the PE count pe0 and PE one register per
** queue instance the body loads on to the count of its first iteration's
** last load there; in iteration k a load waits for PE >= pe0 + k (the
** Matmult of iteration k - 1 done) and the Matmult for each such instance
** to reach its register (this iteration's loads done); each wait's
** register advances after the wait, by one (a load) or by the number of
** loads per iteration on that instance (the Matmult).
*/
static void k_loop(gen *g, core_b *c, tile *ps, const char *xin,
		   lm_dtype wdt, int T)
{
	int M = g->M, N = g->N, dyn = g->dynamic, sy = c->sync;
	char lname[48], mm[48], rm[2][48];
	tile *wt = get_tile(c, "w0", 128, M, wdt, 0);
	tile *xt = get_tile(c, "x0", 128, N, LM_DT_FLOAT32, 0);
	lm_buf j = {0};
	kload L[2] = {
		{ "w", wdt, M, wt, 0, LM_ENG_SP, 1, "", "", "" },
		{ xin, LM_DT_FLOAT32, N, xt, 0, LM_ENG_SP, 1, "", "", "" },
	};
	int nq[3] = {0}, qb[3], pe0 = c->sem_count[SS_PE];
	int rsem[2], n_rs = 0;
	int ln = c->n_inst++;
	snprintf(lname, sizeof lname, "kl_%d", ln);
	snprintf(mm, sizeof mm, "mm_%d", c->n_inst++);
	for (int i = 0; i < 2; i++) {
		L[i].qi = pick_qi(g, c);
		L[i].eng = L[i].qi ? LM_ENG_SP : c->dma_engine;
		L[i].pos = ++nq[L[i].qi];
	}
	for (int q = 0; q < 3; q++)
		qb[q] = c->sem_count[SS_Q0 + q];
	/* the registers, set before the loop */
	if (dyn && !c->has_trip_reg) {
		reg_alloc(c, "r_trip");
		c->has_trip_reg = 1;
	}
	for (int i = 0; i < 2; i++) {
		if (dyn) {
			snprintf(L[i].ra, sizeof L[i].ra, "r%d_a%d", ln, i);
			reg_alloc(c, L[i].ra);
		}
		if (sy) {
			snprintf(L[i].rt, sizeof L[i].rt, "r%d_t%d", ln, i);
			reg_alloc(c, L[i].rt);
		}
	}
	for (int q = 0; q < 3 && sy; q++)
		if (nq[q]) {
			snprintf(rm[n_rs], sizeof rm[0], "r%d_m%d", ln, q);
			reg_alloc(c, rm[n_rs]);
			rsem[n_rs++] = SS_Q0 + q;
		}
	if (dyn)
		reg_inst(c, NULL, LM_ENG_ALL, "r_trip", T);
	for (int i = 0; i < 2; i++) {
		if (dyn)
			reg_inst(c, NULL, L[i].eng, L[i].ra, 0);
		if (sy)
			reg_inst(c, NULL, L[i].eng, L[i].rt, pe0);
	}
	for (int i = 0; i < n_rs; i++) {
		int q = rsem[i] - SS_Q0;
		reg_inst(c, NULL, LM_ENG_PE, rm[i], qb[q] + nq[q]);
	}
	if (dyn)
		lm_buf_printf(&j, "{\"opcode\":\"DynamicForLoop\",\"name\":\"%s\","
			      "\"engine\":\"PE\",\"ins\":[],\"outs\":[],"
			      "\"DynamicForLoopAxis\":{\"name\":\"k\",\"lb\":"
			      "{\"kind\":\"AffExprKind\",\"terms\":[],\"c\":0},"
			      "\"ub\":{\"kind\":\"AffExprKind\",\"terms\":[{"
			      "\"idx\":{\"kind\":\"IntRuntimeValueKind\","
			      "\"regref\":\"r_trip\"},\"coeff\":1}],\"c\":0},"
			      "\"stride\":{\"kind\":\"AffExprKind\",\"terms\":[],"
			      "\"c\":1}},\"blocks\":[{\"name\":\"%s_body\","
			      "\"instructions\":[", lname, lname);
	else
		lm_buf_printf(&j, "{\"opcode\":\"Loop\",\"name\":\"%s\","
			      "\"engine\":\"PE\",\"ins\":[],\"outs\":[],"
			      "\"LoopAxis\":{\"name\":\"k\",\"lb\":0,\"ub\":%d,"
			      "\"stride\":1},\"blocks\":[{\"name\":\"%s_body\","
			      "\"instructions\":[", lname, T, lname);
	c->in_loop = 1;
	loop_load(c, &j, &L[0], mm, T, dyn);
	loop_load(c, &j, &L[1], mm, T, dyn);
	deps d = {0}, lc = {0};
	if (!sy) {
		need_read(g, c, &d, wt);
		need_read(g, c, &d, xt);
	}
	need_write(&d, ps);
	dep_add(&lc, mm);
	lm_buf_printf(&j, "{\"opcode\":\"Matmult\",\"name\":\"%s\","
		      "\"engine\":\"PE\",\"ins\":[", mm);
	json_ap(&j, wt->name, wt->dtype, M, 128, M, 0);
	lm_buf_puts(&j, ",");
	json_ap(&j, xt->name, xt->dtype, N, 128, N, 0);
	lm_buf_puts(&j, "],\"outs\":[");
	json_ap(&j, ps->name, ps->dtype, N, M, N, 0);
	/* start bit (T-1-k) floordiv (T-1), stop bit 2 (k floordiv (T-1)) */
	lm_buf_printf(&j, "],\"accumulation_flag\":{\"kind\":\"SumKind\","
		      "\"n_terms\":2,\"terms\":[{\"kind\":\"FloorDivKind\","
		      "\"numer\":{\"kind\":\"AffExprKind\",\"terms\":[{\"idx\":"
		      "{\"kind\":\"AffIVKind\",\"axis\":\"k\"},\"coeff\":-1}],"
		      "\"c\":%d},\"denom\":%d},{\"kind\":\"MultKind\",\"var\":"
		      "{\"kind\":\"FloorDivKind\",\"numer\":{\"kind\":"
		      "\"AffIVKind\",\"axis\":\"k\"},\"denom\":%d},"
		      "\"scale\":2}]}",
		      T - 1, T - 1, T - 1);
	if (sy) {
		int want[N_SSEM];
		sync_want(c, &d, want);
		json_sync(&j, want, rsem, rm, n_rs, SS_PE);
	} else {
		json_deps(&j, "dependencies", &d);
		json_deps(&j, "loop_carried_dependencies", &lc);
	}
	lm_buf_puts(&j, ",\"loopnest\":[\"k\"]}");
	for (int i = 0; i < n_rs; i++) {
		lm_buf_puts(&j, ",");
		json_regop(c, &j, "add", LM_ENG_PE, rm[i], nq[rsem[i] - SS_Q0]);
	}
	lm_buf_puts(&j, dyn ? "]}]}" : "]}],\"isBasicBlock\":true,"
		    "\"unroll\":1}");
	c->in_loop = 0;
	lm_b_inst_json(c->b, lm_buf_cstr(&j));
	lm_buf_free(&j);
	note_read(wt, mm);
	note_read(xt, mm);
	note_write(ps, mm, -1, 0);
	if (sy) {
		/* what the loop's last iteration brings */
		for (int q = 0; q < 3; q++)
			c->sem_count[SS_Q0 + q] = qb[q] + T * nq[q];
		c->sem_count[SS_PE] = pe0 + T;
		done_add(c, mm, SS_PE, pe0 + T);
		for (int i = 0; i < 2; i++)
			done_add(c, L[i].nm, SS_Q0 + L[i].qi,
				 qb[L[i].qi] + (T - 1) * nq[L[i].qi] + L[i].pos);
		loop_fence(c);
	}
}

/*
** --sync semaphores: hand-off i's semaphore, id 16 + i, slot of the
** consumer's bank (the producer declares it with the consumer's core).
** The save's completion adds 1 to it; the consumer's load waits for 1.
*/
static int handoff_sem(core_b *c, const handoff *h, int i)
{
	char nm[32];
	snprintf(nm, sizeof nm, "hs%d", i);
	lm_semaphore *sm = lm_b_semaphore(c->b, nm, 0);
	if (sm) {
		sm->has_id = 1;
		sm->id = 16 + i;
		if (c->core != h->cons) {
			sm->has_core = 1;
			sm->core = h->cons;
		}
	}
	return 16 + i;
}

/* Hand-off i on the producer side: save acc to DRAM, then the barrier.
** With --sync semaphores the save also releases the consumer. */
static void handoff_produce(gen *g, core_b *c, const handoff *h, int i)
{
	char dst[32], st[48], grp[32], nm[48];
	snprintf(dst, sizeof dst, "h%d", i);
	snprintf(grp, sizeof grp, "hx%d", i);
	tile *acc = get_tile(c, "acc", g->M, g->N, LM_DT_FLOAT32, 0);
	add_alloc(c, dst, LM_TK_EXTERNAL_OUTPUT, LM_DT_FLOAT32, g->M, g->N,
		  h->model_out ? LM_MT_OUTPUT : LM_MT_DRAM,
		  g->dram_addr + (int64_t)i * 0x100000, NULL, NULL, 0);
	if (c->sync) {
		c->x_id = handoff_sem(c, h, i);
		c->x_core = h->cons;
	}
	dma_store(g, c, acc, dst, st, sizeof st);
	int cores[2] = {h->prod < h->cons ? h->prod : h->cons,
			h->prod < h->cons ? h->cons : h->prod};
	barrier(g, c, grp, cores, 2, h->fixed_id, st, nm, sizeof nm);
}

/* Hand-off i on the consumer side: barrier, load the view, combine.
** With --sync semaphores the load waits for the producer's save through
** the hand-off's semaphore instead of for the barrier. */
static void handoff_consume(gen *g, core_b *c, const handoff *h, int i)
{
	char view[32], src[32], grp[32], nm[48], bar[48];
	snprintf(view, sizeof view, h->by_name ? "h%d" : "h%d_in", i);
	snprintf(src, sizeof src, "h%d", i);
	snprintf(grp, sizeof grp, "hx%d", i);
	if (h->by_name) /* the producer's output, by its name */
		add_alloc(c, view, LM_TK_EXTERNAL_INPUT, LM_DT_FLOAT32, g->M,
			  g->N, LM_MT_DRAM,
			  g->dram_addr + (int64_t)i * 0x100000, NULL, NULL, 0);
	else
		add_alloc(c, view, LM_TK_INTERNAL, LM_DT_FLOAT32, g->M, g->N,
			  LM_MT_DRAM, g->dram_addr + (int64_t)i * 0x100000,
			  NULL, src, h->prod);
	int cores[2] = {h->prod < h->cons ? h->prod : h->cons,
			h->prod < h->cons ? h->cons : h->prod};
	barrier(g, c, grp, cores, 2, h->fixed_id, NULL, bar, sizeof bar);
	tile *hin = get_tile(c, "hin", g->M, g->N, LM_DT_FLOAT32, 0);
	if (c->sync) {
		c->x_id = handoff_sem(c, h, i);
		c->x_core = -1;
	}
	dma_load(g, c, view, LM_DT_FLOAT32, g->N, 0, hin, c->sync ? NULL : bar);
	tile *acc = get_tile(c, "acc", g->M, g->N, LM_DT_FLOAT32, 0);
	tile *ins[2] = {acc, hin};
	deps d = {0};
	lm_inst *o = compute(g, c, LM_OP_TENSORTENSOR, LM_ENG_DVE, ins, 2, acc,
			     "tt", nm, sizeof nm, &d);
	if (o)
		lm_b_set_alu(o, LM_ALU_ADD);
	compute_done(c, o, &d, ins, 2, acc, nm);
}

/*
** --compute: before the final store, a tail on the data path of core c:
** a row sum of acc (TensorReduce add over the free axis into [M, 1]),
** acc minus its row sum (TensorScalarPtr with that tile as scalar), a
** gather of rows of a const table by const int32 indices in range
** (IndirectLoad), and a Select between acc and the gathered rows by a
** const 0/1 predicate, added into acc. Ordered by dependencies only;
** the gather's readers never wait on its queue semaphore. Its draws come
** from a stream of their own.
*/
enum { CT_ROWS = 8 };

static void compute_json(core_b *c, const char *text, deps *d, tile **ins,
			 int n_ins, tile *out, const char *nm)
{
	lm_inst *o = lm_b_inst_json(c->b, text);
	compute_done(c, o, d, ins, n_ins, out, nm);
}

static void int_file(gen *g, int core, const char *fname, const int32_t *v,
		     int64_t rows, int64_t cols)
{
	int64_t shape[2] = {rows, cols};
	lm_error err;
	lm_grow(&g->files, &g->cap_files, g->n_files + 1, sizeof *g->files);
	ls_gen_file *f = &g->files[g->n_files++];
	f->relpath = lm_xasprintf("%s/nc%d/sg0/%s", g->name, core, fname);
	if (lm_npy_serialize(LM_DT_INT32, shape, 2, v, &f->bytes, &f->len,
			     &err)) {
		f->bytes = NULL;
		f->len = 0;
	}
}

static void compute_tail(gen *g, core_b *c, rng *cr)
{
	/* the draws of the shared helpers (queue picks, waits) from cr too */
	rng keep = g->r;
	g->r = *cr;
	cr = &g->r;
	int M = g->M, N = g->N;
	char nm[48];
	lm_buf j = LM_BUF_INIT;
	int32_t *v = lm_xmalloc((size_t)M * (size_t)N * sizeof *v);
	int64_t base = 0x05000000 + (int64_t)c->core * 0x100000;
	add_alloc(c, "ctab", LM_TK_CONST, LM_DT_FLOAT32, CT_ROWS, N, LM_MT_DRAM,
		  base, "ctab.npy", NULL, 0);
	const_file_r(g, cr, c->core, "ctab.npy", LM_DT_FLOAT32, CT_ROWS,
		     N);
	for (int i = 0; i < M; i++)
		v[i] = rint_(cr, CT_ROWS);
	add_alloc(c, "cix", LM_TK_CONST, LM_DT_INT32, M, 1, LM_MT_DRAM,
		  base + 0x40000, "cix.npy", NULL, 0);
	int_file(g, c->core, "cix.npy", v, M, 1);
	for (int i = 0; i < M * N; i++)
		v[i] = chance(cr, 50);
	add_alloc(c, "cpred", LM_TK_CONST, LM_DT_INT32, M, N, LM_MT_DRAM,
		  base + 0x80000, "cpred.npy", NULL, 0);
	int_file(g, c->core, "cpred.npy", v, M, N);
	free(v);

	tile *acc = get_tile(c, "acc", M, N, LM_DT_FLOAT32, 0);
	tile *ix = get_tile(c, "c_ix", M, 1, LM_DT_INT32, 0);
	tile *pred = get_tile(c, "c_pred", M, N, LM_DT_INT32, 0);
	tile *red = get_tile(c, "c_red", M, 1, LM_DT_FLOAT32, 0);
	tile *gt = get_tile(c, "c_g", M, N, LM_DT_FLOAT32, 0);
	tile *sel = get_tile(c, "c_sel", M, N, LM_DT_FLOAT32, 0);
	dma_load(g, c, "cix", LM_DT_INT32, 1, 0, ix, NULL);
	dma_load(g, c, "cpred", LM_DT_INT32, N, 0, pred, NULL);

	/* red = row sum of acc */
	{
		deps d = {0};
		need_read(g, c, &d, acc);
		need_write(&d, red);
		snprintf(nm, sizeof nm, "red_%d", c->n_inst++);
		lm_buf_printf(&j, "{\"opcode\":\"TensorReduce\",\"name\":\"%s\","
			      "\"engine\":\"%s\",\"ins\":[", nm,
			      chance(cr, 50) ? "DVE" : "Pool");
		json_ap(&j, acc->name, acc->dtype, N, M, N, 0);
		lm_buf_puts(&j, "],\"outs\":[");
		json_ap(&j, red->name, red->dtype, 1, M, 1, 0);
		lm_buf_puts(&j, "],\"op\":\"add\",\"axis\":\"X\"}");
		tile *ins[1] = {acc};
		compute_json(c, lm_buf_cstr(&j), &d, ins, 1, red, nm);
		lm_buf_free(&j);
	}
	/* acc = (acc op0 red) * 0.0625 or acc op0 red */
	{
		deps d = {0};
		need_read(g, c, &d, acc);
		need_read(g, c, &d, red);
		need_write(&d, acc);
		snprintf(nm, sizeof nm, "tsp_%d", c->n_inst++);
		lm_buf_printf(&j, "{\"opcode\":\"TensorScalarPtr\",\"name\":"
			      "\"%s\",\"engine\":\"DVE\",\"ins\":[", nm);
		json_ap(&j, acc->name, acc->dtype, N, M, N, 0);
		lm_buf_puts(&j, ",");
		json_ap(&j, red->name, red->dtype, 1, M, 1, 0);
		lm_buf_puts(&j, "],\"outs\":[");
		json_ap(&j, acc->name, acc->dtype, N, M, N, 0);
		lm_buf_printf(&j, "],\"op0\":\"%s\",\"reverse0\":%s,\"op1\":"
			      "\"bypass\",\"reverse1\":false}",
			      chance(cr, 50) ? "subtract" : "add",
			      chance(cr, 50) ? "true" : "false");
		tile *ins[2] = {acc, red};
		compute_json(c, lm_buf_cstr(&j), &d, ins, 2, acc, nm);
		lm_buf_free(&j);
	}
	/* c_g row k = ctab row cix[k] */
	{
		deps d = {0};
		need_read(g, c, &d, ix);
		need_write(&d, gt);
		snprintf(nm, sizeof nm, "gl_%d", c->n_inst++);
		lm_buf_printf(&j, "{\"opcode\":\"IndirectLoad\",\"name\":\"%s\","
			      "\"engine\":\"%s\",\"queue\":\"%s\",\"ins\":[",
			      nm, lm_engine_name(c->dma_engine),
			      c->qi[0].queue);
		json_ap(&j, "ctab", LM_DT_FLOAT32, N, CT_ROWS, N, 0);
		lm_buf_puts(&j, "],\"outs\":[");
		json_ap(&j, gt->name, gt->dtype, N, M, N, 0);
		lm_buf_puts(&j, "],\"indirection_ins\":[");
		json_ap(&j, ix->name, ix->dtype, 1, M, 1, 0);
		lm_buf_puts(&j, "]}");
		tile *ins[1] = {ix};
		c->cur_qi = 0;
		compute_json(c, lm_buf_cstr(&j), &d, ins, 1, gt, nm);
		lm_buf_free(&j);
	}
	/* c_sel = pred ? acc : c_g (or the other way), acc += c_sel */
	{
		deps d = {0};
		int swap = chance(cr, 50);
		tile *ins[3] = {swap ? gt : acc, swap ? acc : gt, pred};
		for (int i = 0; i < 3; i++)
			need_read(g, c, &d, ins[i]);
		need_write(&d, sel);
		snprintf(nm, sizeof nm, "sel_%d", c->n_inst++);
		lm_buf_printf(&j, "{\"opcode\":\"Select\",\"name\":\"%s\","
			      "\"engine\":\"%s\",\"ins\":[", nm,
			      chance(cr, 50) ? "DVE" : "Pool");
		for (int i = 0; i < 3; i++) {
			if (i)
				lm_buf_puts(&j, ",");
			json_ap(&j, ins[i]->name, ins[i]->dtype, N, M, N, 0);
		}
		lm_buf_puts(&j, "],\"outs\":[");
		json_ap(&j, sel->name, sel->dtype, N, M, N, 0);
		lm_buf_puts(&j, "]}");
		compute_json(c, lm_buf_cstr(&j), &d, ins, 3, sel, nm);
		lm_buf_free(&j);
	}
	{
		tile *ins[2] = {acc, sel};
		deps d = {0};
		lm_inst *o = compute(g, c, LM_OP_TENSORTENSOR, LM_ENG_DVE, ins, 2,
				     acc, "tt", nm, sizeof nm, &d);
		if (o)
			lm_b_set_alu(o, LM_ALU_ADD);
		compute_done(c, o, &d, ins, 2, acc, nm);
	}
	g->r = keep;
}

int ls_gen_size_parse(const char *s)
{
	if (!strcmp(s, "small"))
		return LS_GEN_SMALL;
	if (!strcmp(s, "medium"))
		return LS_GEN_MEDIUM;
	if (!strcmp(s, "large"))
		return LS_GEN_LARGE;
	return -1;
}

int ls_gen_sync_parse(const char *s)
{
	if (!strcmp(s, "deps"))
		return LS_GEN_SYNC_DEPS;
	if (!strcmp(s, "semaphores"))
		return LS_GEN_SYNC_SEMAPHORES;
	return -1;
}

void ls_gen_files_free(ls_gen_file *files, int n)
{
	for (int i = 0; i < n; i++) {
		free(files[i].relpath);
		free(files[i].bytes);
	}
	free(files);
}

int ls_gen(const ls_gen_opts *o, const char *out_dir, lm_module ***mods_out,
	   ls_gen_file **files, int *n_files, lm_error *err)
{
	*mods_out = NULL;
	*files = NULL;
	*n_files = 0;
	if (o->cores < 1 || o->cores > 64)
		return lm_err(err, "", "gen", "--cores must be within 1..64, got %d",
			      o->cores);
	if (o->compute && o->sync == LS_GEN_SYNC_SEMAPHORES)
		return lm_err(err, "", "gen", "--compute is ordered by "
			      "dependencies only: not with --sync semaphores");
	gen g;
	memset(&g, 0, sizeof g);
	char *name = o->name ? lm_xstrdup(o->name)
			     : lm_xasprintf("gen%llu", (unsigned long long)o->seed);
	g.name = name;
	g.out_dir = out_dir ? out_dir : ".";
	g.r.s = o->seed * 0x2545f4914f6cdd1dULL + 0x1234567ULL;
	g.n = o->cores;
	static const int Ms[] = {32, 64, 128};
	static const int Ns[] = {32, 64, 96, 128, 256};
	g.M = Ms[rint_(&g.r, 3)];
	g.N = Ns[rint_(&g.r, 5)];
	g.T = 3;
	g.loops = o->loops || o->dynamic;
	g.dynamic = o->dynamic;
	g.segments = (o->size == LS_GEN_SMALL ? 2 : o->size == LS_GEN_MEDIUM ? 5
										: 16)
		     + rint_(&g.r, 2);
	g.dram_addr = 0x10000000;
	g.cores = lm_xcalloc((size_t)g.n, sizeof *g.cores);

	/* which cores share the external input "x_shared" */
	int *shares = lm_xcalloc((size_t)g.n, sizeof *shares);
	if (g.n >= 2) {
		int cnt = 0;
		for (int c = 0; c < g.n; c++)
			if ((shares[c] = chance(&g.r, 60)))
				cnt++;
		if (cnt < 2) {
			shares[0] = shares[1] = 1;
		}
	}
	/* hand-offs in one global order, each assigned to a segment */
	int n_h = g.n >= 2 ? g.n - 1 + rint_(&g.r, g.n + 1) : 0;
	handoff *hs = n_h ? lm_xcalloc((size_t)n_h, sizeof *hs) : NULL;
	for (int i = 0; i < n_h; i++) {
		hs[i].prod = rint_(&g.r, g.n);
		do
			hs[i].cons = rint_(&g.r, g.n);
		while (hs[i].cons == hs[i].prod);
		hs[i].seg = rint_(&g.r, g.segments);
		hs[i].fixed_id = chance(&g.r, 20) ? 500 + i : -1;
	}
	/*
	** Output-kind cases, from a stream of their own (so every other
	** choice of a seed stays as it was): some hand-offs are also model
	** outputs (their location is the host-boundary type Output: the
	** linked module must keep them as host outputs), and one core may
	** declare a view of another core's final output y_nc<p> that it never
	** reads (the output stays a host output).
	*/
	rng side = { o->seed * 0x9e3779b97f4a7c15ULL + 0x51ed27ULL };
	for (int i = 0; i < n_h; i++)
		hs[i].model_out = chance(&side, 25);
	int peek_core = -1, peek_of = -1;
	if (g.n >= 2 && chance(&side, 40)) {
		peek_core = rint_(&side, g.n);
		do
			peek_of = rint_(&side, g.n);
		while (peek_of == peek_core);
	}
	/* name-matched hand-offs (--by-name), from a stream of their own */
	rng byn = { o->seed * 0xbf58476d1ce4e5b9ULL + 0xb1a3eULL };
	for (int i = 0; i < n_h && o->by_name; i++)
		hs[i].by_name = chance(&byn, 50);
	/* sort by segment, keeping the order stable (insertion sort) */
	for (int i = 1; i < n_h; i++)
		for (int j = i; j > 0 && hs[j].seg < hs[j - 1].seg; j--) {
			handoff t = hs[j];
			hs[j] = hs[j - 1];
			hs[j - 1] = t;
		}

	for (int ci = 0; ci < g.n; ci++) {
		core_b *c = &g.cores[ci];
		c->core = ci;
		c->next_barrier_id = 1;
		c->qi[0] = (qinst){"qSyncIO0", "qSyncIO0", "s_dma", 0};
		c->qi[1] = (qinst){"qAux", "qAux_a", "s_aux_a", 0};
		c->qi[2] = (qinst){"qAux", "qAux_b", "s_aux_b", 0};
		c->uses_aux = chance(&g.r, 60);
		c->dma_engine = dma_engine(&g);
		c->aux_active = 1;
		c->sync = o->sync == LS_GEN_SYNC_SEMAPHORES;
		core_module(c, o->arch ? o->arch : "gen3", name, g.out_dir);
	}
	for (int ci = 0; ci < g.n; ci++) {
		core_b *c = &g.cores[ci];
		char nm[48];
		lm_dtype wdt = chance(&g.r, 40) ? LM_DT_BFLOAT16 : LM_DT_FLOAT32;
		int bias_mode = chance(&g.r, 50);
		const char *xin = shares[ci] ? "x_shared" : NULL;
		char own[32];
		if (!xin) {
			snprintf(own, sizeof own, "x_nc%d", ci);
			xin = own;
		}
		add_alloc(c, xin, LM_TK_EXTERNAL_INPUT, LM_DT_FLOAT32, 128 * g.T,
			  g.N, LM_MT_DRAM,
			  shares[ci] ? 0 : 0x01000000 + (int64_t)ci * 0x100000,
			  NULL, NULL, 0);
		add_alloc(c, "w", LM_TK_CONST, wdt, 128 * g.T, g.M, LM_MT_DRAM,
			  0x02000000 + (int64_t)ci * 0x100000, "w.npy", NULL, 0);
		const_file(&g, ci, "w.npy", wdt, 128 * g.T, g.M);
		if (bias_mode == 1) {
			add_alloc(c, "b", LM_TK_CONST, LM_DT_FLOAT32, g.M, 1,
				  LM_MT_DRAM, 0x03000000 + (int64_t)ci * 0x100000,
				  "b.npy", NULL, 0);
			const_file(&g, ci, "b.npy", LM_DT_FLOAT32, g.M, 1);
		}
		int solo_at = g.n >= 2 && chance(&g.r, 50) ? rint_(&g.r, g.segments)
							   : -1;
		for (int s = 0; s < g.segments; s++) {
			if (s == solo_at) {
				int me[1] = {ci};
				char grp[32];
				snprintf(grp, sizeof grp, "solo%d", ci);
				barrier(&g, c, grp, me, 1, -1, NULL, nm, sizeof nm);
			}
			segment(&g, c, s, xin, wdt, bias_mode);
			for (int i = 0; i < n_h; i++) {
				if (hs[i].seg != s)
					continue;
				if (hs[i].prod == ci)
					handoff_produce(&g, c, &hs[i], i);
				else if (hs[i].cons == ci)
					handoff_consume(&g, c, &hs[i], i);
			}
		}
		if (o->compute) {
			rng cr = { o->seed * 0xd1342543de82ef95ULL +
				   0x7f4a7c15ULL * (uint64_t)(ci + 1) };
			compute_tail(&g, c, &cr);
		}
		/* final result */
		char yname[32], st[48];
		snprintf(yname, sizeof yname, "y_nc%d", ci);
		tile *acc = get_tile(c, "acc", g.M, g.N, LM_DT_FLOAT32, 0);
		add_alloc(c, yname, LM_TK_EXTERNAL_OUTPUT, LM_DT_FLOAT32, g.M, g.N,
			  LM_MT_DRAM, 0x04000000 + (int64_t)ci * 0x100000, NULL,
			  NULL, 0);
		dma_store(&g, c, acc, yname, st, sizeof st);
		if (ci == peek_core) {
			char peek[48], of[32];
			snprintf(of, sizeof of, "y_nc%d", peek_of);
			snprintf(peek, sizeof peek, "y_nc%d_peek", peek_of);
			add_alloc(c, peek, LM_TK_INTERNAL, LM_DT_FLOAT32, g.M, g.N,
				  LM_MT_DRAM,
				  0x04000000 + (int64_t)peek_of * 0x100000, NULL, of,
				  peek_of);
		}
	}

	lm_module **mods = lm_xcalloc((size_t)g.n, sizeof *mods);
	int rc = 0;
	for (int ci = 0; ci < g.n && !rc; ci++) {
		core_b *c = &g.cores[ci];
		rc = lm_b_finish(c->b, &mods[ci]);
		c->b = NULL;
		if (rc)
			rc = lm_errc(err, LM_EINTERNAL, "", "gen",
				     "generated module cannot be built (seed "
				     "%llu, core %d): %s",
				     (unsigned long long)o->seed, ci,
				     c->berr.msg);
		if (!rc) {
			lm_verify_opts vo = {0};
			if (lm_verify(mods[ci], &vo, err))
				rc = lm_errc(err, LM_EINTERNAL, "", "gen",
					     "generated module fails the verifier "
					     "(seed %llu, core %d): %s",
					     (unsigned long long)o->seed, ci, err->msg);
		}
	}
	for (int i = 0; i < g.n_files && !rc; i++)
		if (!g.files[i].bytes)
			rc = lm_errc(err, LM_EINTERNAL, "", "gen",
				     "cannot serialize %s", g.files[i].relpath);
	for (int ci = 0; ci < g.n; ci++) {
		lm_b_free(g.cores[ci].b);
		free(g.cores[ci].done);
	}
	free(g.cores);
	free(shares);
	free(hs);
	free(name);
	if (rc) {
		for (int ci = 0; ci < o->cores; ci++)
			lm_module_free(mods[ci]);
		free(mods);
		ls_gen_files_free(g.files, g.n_files);
		return rc;
	}
	*mods_out = mods;
	*files = g.files;
	*n_files = g.n_files;
	return 0;
}

int ls_gen_save_at(lm_module *const *mods, int cores,
		   const ls_gen_file *files, int n_files, int dirfd,
		   const char *dir_name, lm_error *err)
{
	/* beneath dirfd, never through a symlink (safeio.h); the modules'
	   paths are <dir_name>/<name>/nc<c>/sg0/def.json */
	const char *od = dir_name ? dir_name : ".";
	int rc = 0;
	for (int c = 0; c < cores && !rc; c++) {
		char *text = NULL;
		size_t len;
		if ((rc = lm_module_to_json(mods[c], 1, &text, &len, err)) == 0)
			rc = lm_write_beneath_at(dirfd, od,
						 mods[c]->path + strlen(od) + 1,
						 text, len, 0644, err);
		free(text);
	}
	for (int i = 0; i < n_files && !rc; i++)
		rc = lm_write_beneath_at(dirfd, od, files[i].relpath,
					 files[i].bytes, files[i].len, 0644, err);
	return rc;
}

void ls_gen_fileset(const ls_gen_file *files, int n_files,
		    const char *out_dir, lm_fileset *fs)
{
	for (int i = 0; i < n_files; i++) {
		char *p = lm_path_join(out_dir ? out_dir : ".", files[i].relpath);
		char *b = lm_xmalloc(files[i].len + 1);
		memcpy(b, files[i].bytes, files[i].len);
		lm_fileset_add(fs, p, b, files[i].len);
		free(p);
	}
}

int ls_gen_write_at(const ls_gen_opts *o, int dirfd, const char *dir_name,
		    lm_error *err)
{
	lm_module **mods;
	ls_gen_file *files;
	int n_files;
	int rc = ls_gen(o, dir_name, &mods, &files, &n_files, err);
	if (rc)
		return rc;
	rc = ls_gen_save_at(mods, o->cores, files, n_files, dirfd, dir_name,
			    err);
	for (int c = 0; c < o->cores; c++)
		lm_module_free(mods[c]);
	free(mods);
	ls_gen_files_free(files, n_files);
	return rc;
}

int ls_gen_write(const ls_gen_opts *o, const char *out_dir, lm_error *err)
{
	const char *od = out_dir ? out_dir : ".";
	int fd, rc = lm_mkdirs(od, err);
	if (rc)
		return rc;
	fd = open(od, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return lm_err(err, od, "", "cannot open directory: %s",
			      strerror(errno));
	rc = ls_gen_write_at(o, fd, od, err);
	close(fd);
	return rc;
}

/*
** fpass.c -- step 3, the function passes of the seed (runFunctionPasses):
** fpass_insert_returns closes each core function with its completion
** barrier and a Return; fpass_insert_switch_queue_instances opens it with
** one SwitchQueueInstance per queue the core uses.
*/
#include "common.h"
#include "lk_int.h"

#include <stdlib.h>
#include <string.h>

/* The group every completion barrier meets in (docs/linker.md). */
#define COMPLETION_GROUP LM_LINKED_COMPLETION_GROUP

/* Does in leave nothing the completion barrier must wait for: a branch
** or a no-op of control (a TensorCompletion after a DMA would stand for
** its engine's work without waiting for the transfer), or an
** instruction on engine ALL (one copy per engine on that engine's
** registers; the barrier's engine passes its own copy in order, and the
** others' copies write no memory)? */
static int no_completion(const lm_inst *in)
{
	return in->engine == LM_ENG_ALL || in->op == LM_OP_CMPBRANCH ||
	       in->op == LM_OP_UBRANCH || in->op == LM_OP_BRANCHHINT ||
	       in->op == LM_OP_TCOMPLETION;
}

/* Is in a completion barrier (one before another Return)? */
static int is_completion(const lm_inst *in)
{
	return in->op == LM_OP_COREBARRIER && in->group &&
	       strcmp(in->group, COMPLETION_GROUP) == 0;
}

/* Remember the last named top-level instruction of each engine before
** instruction i of block nb (nb = f->n_blocks: all of them). */
static void last_per_engine(const lm_function *f, int nb, int ni,
			    const char **last)
{
	for (int b = 0; b <= nb && b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts &&
		     (b < nb || i < ni); i++) {
			const lm_inst *in = &f->blocks[b].insts[i];
			/* a DMA block runs when its trigger fires it: the
			   trigger is its engine's instruction */
			if (in->op == LM_OP_LOOP || in->op == LM_OP_RETURN ||
			    in->op == LM_OP_DMABLOCK || is_completion(in) ||
			    !in->name || (int)in->engine < 0 ||
			    in->engine >= LM_ENG_COUNT || no_completion(in))
				continue;
			last[in->engine] = in->name;
		}
}

/* The completion barrier's cores: every linked core, or in a modular
** link every core an instance runs on (increasing). */
static void completion_cores(lk_ctx *x, lm_inst *in)
{
	int n = x->net ? x->net->n_inst : x->n;
	in->n_cores = 0;
	in->cores = lm_xcalloc((size_t)n, sizeof *in->cores);
	for (int c = 0; c < 64 && x->net; c++)
		for (int i = 0; i < n; i++)
			if (x->net->inst[i].core == c)
				in->cores[in->n_cores++] = c;
	for (int k = 0; k < n && !x->net; k++)
		in->cores[in->n_cores++] = x->cores[k].core;
}

/* A completion barrier named name of core c before instruction pos of
** block b of f, depending on the last instruction of each engine before
** it. */
static void insert_barrier(lk_ctx *x, lm_function *f, int b, int pos,
			   long long c, char *name)
{
	const char *last[LM_ENG_COUNT] = {0};
	lm_inst *in;
	last_per_engine(f, b, pos, last);
	in = lk_block_insert(x, &f->blocks[b], pos, 1);
	in->name = name;
	in->op = LM_OP_COREBARRIER;
	in->engine = LM_ENG_POOL;
	completion_cores(x, in);
	in->group = lm_xstrdup(COMPLETION_GROUP);
	in->renumber = 1;
	for (int e = 0; e < LM_ENG_COUNT; e++)
		if (last[e])
			lm_inst_add_dep(in, 0, last[e], LM_EDGE_FLOW);
}

/* A Return before the end of the last block leaves there (a function
** with branches reaches it by one): a completion barrier before each,
** named after the last one with a suffix, so every way out meets the
** other cores. */
static void barriers_at_returns(lk_ctx *x, lm_function *f, long long c,
				const char *nm)
{
	int k = 0;
	for (int b = 0; b < f->n_blocks; b++)
		for (int i = 0; i < f->blocks[b].n_insts; i++) {
			if (f->blocks[b].insts[i].op != LM_OP_RETURN ||
			    (b == f->n_blocks - 1 &&
			     i == f->blocks[b].n_insts - 1))
				continue;
			insert_barrier(x, f, b, i, c,
				       lm_xasprintf("%s.%d", nm, ++k));
			i++; /* past the Return */
		}
}

/*
** Step 3a (seed fpassInsertReturns): at the end of core function nc<c>
** a CoreBarrier cb_return_call_def_<c>_instance_0 (cores: every linked core,
** group sgLnk.completion, renumbered; it depends on the last instruction of
** each engine so every core finishes its work first), then a Return
** return_call_def_<c>_instance_0. A function that already ends with a
** Return gets the barrier just before it; so does every other top-level
** Return (barriers_at_returns).
*/
int fpass_insert_returns(lk_ctx *x)
{
	char nm[LM_LINKED_NAME_MAX];
	for (int ci = 0; ci < x->n; ci++) {
		lm_function *f = lk_core_function(x, ci);
		long long c = (long long)x->cores[ci].core;
		lm_block *bl;
		lm_inst *in;
		int pos;
		if (!f)
			continue;
		lm_linked_barrier_name(nm, c);
		barriers_at_returns(x, f, c, nm);
		if (f->n_blocks == 0) {
			f->blocks = lm_xcalloc(1, sizeof *f->blocks);
			f->n_blocks = 1;
			f->blocks[0].name = lm_xstrdup("ret");
		}
		bl = &f->blocks[f->n_blocks - 1];
		pos = bl->n_insts;
		if (pos > 0 && bl->insts[pos - 1].op == LM_OP_RETURN)
			pos--;
		insert_barrier(x, f, f->n_blocks - 1, pos, c,
			       lm_xstrdup(nm));
		if (pos == bl->n_insts - 1) {
			in = lk_block_insert(x, bl, bl->n_insts, 1);
			in->name = lm_xstrdup(lm_linked_return_name(nm, c));
			in->op = LM_OP_RETURN;
			in->engine = LM_ENG_POOL;
			in->renumber = 1;
		}
		x->rep->n_returns++;
	}
	lk_log(x, "fpass_insert_returns: %d completion barrier%s "
	       "cb_return_call_def_<c>_instance_0 (group " COMPLETION_GROUP
	       ", all %d cores%s) + Return", x->rep->n_returns,
	       x->rep->n_returns == 1 ? "" : "s",
	       x->net ? x->net->n_inst : x->n,
	       x->net ? " the instances run on" : "");
	return 0;
}

/* A queue used by a core, with the engine of its first DMA. */
typedef struct used_queue {
	const char *name;
	lm_engine engine;
} used_queue;

typedef struct used_set {
	used_queue *q;
	int n, cap;
	lm_strmap seen;
} used_set;

static void note_queue(lk_ctx *x, int ci, lm_inst *in, void *arg)
{
	used_set *u = arg;
	(void)x;
	(void)ci;
	if ((!lm_opcode_uses_queue(in->op) && in->op != LM_OP_DMATRIGGER) ||
	    !in->queue ||
	    lm_strmap_lookup(&u->seen, in->queue))
		return;
	lm_strmap_put(&u->seen, in->queue, in);
	lm_grow(&u->q, &u->cap, u->n + 1, sizeof *u->q);
	u->q[u->n].name = in->queue;
	u->q[u->n++].engine = in->engine;
}

/*
** Step 3b (seed fpassInsertSwitchQueueInstances): at the head of core
** function nc<c>, one SwitchQueueInstance I-SQI-<queue>-call_def_<c>_instance_0
** per queue used by a DMA of any of the core's functions (first-use order),
** selecting the core's first instance of that queue (renamed
** nc<c>.<instance> by init_queues). Its engine is the engine that issues the
** queue's first DMA, so it runs before that DMA in the engine's stream.
*/
int fpass_insert_switch_queue_instances(lk_ctx *x)
{
	for (int ci = 0; ci < x->n; ci++) {
		lk_core *c = &x->cores[ci];
		lm_function *f = lk_core_function(x, ci);
		used_set u;
		if (!f)
			continue;
		memset(&u, 0, sizeof u);
		lm_strmap_init(&u.seen);
		for (int k = 0; k < c->n_funcs; k++) {
			lm_function *g = &x->out->functions[c->first_func + k];
			lk_walk_blocks(x, ci, g->blocks, g->n_blocks, note_queue,
				       &u);
		}
		if (u.n && f->n_blocks == 0) {
			f->blocks = lm_xcalloc(1, sizeof *f->blocks);
			f->n_blocks = 1;
			f->blocks[0].name = lm_xstrdup("entry");
		}
		/* one insertion for all switches: the block is moved once */
		int ns = 0, pos = 0;
		for (int k = 0; k < u.n; k++) {
			const lm_queue *q = lm_module_find_queue(c->src,
								 u.q[k].name);
			ns += q && q->n_instances >= 1;
		}
		lm_inst *at;
		if (c->sqi_gap && c->sqi_gap != ns) {
			/* not the count copy_instrs reserved: close the gap */
			lm_block *b0 = &f->blocks[0];
			memmove(b0->insts, b0->insts + c->sqi_gap,
				(size_t)(b0->n_insts - c->sqi_gap) *
				sizeof *b0->insts);
			b0->n_insts -= c->sqi_gap;
			c->sqi_gap = 0;
		}
		if (c->sqi_gap)
			at = f->blocks[0].insts; /* the reserved slots */
		else
			at = ns ? lk_block_insert(x, &f->blocks[0], 0, ns) : NULL;
		c->sqi_gap = 0;
		for (int k = 0; k < u.n; k++) {
			const lm_queue *q = lm_module_find_queue(c->src,
								 u.q[k].name);
			lm_inst *in;
			if (!q || q->n_instances < 1)
				continue; /* the verifier reports it */
			in = &at[pos++];
			int len = lm_linked_sqi_name(NULL, 0, q->name, c->core);
			in->name = lm_xmalloc((size_t)len + 1);
			lm_linked_sqi_name(in->name, (size_t)len + 1, q->name,
					   c->core);
			in->op = LM_OP_SWITCHQUEUE;
			in->engine = u.q[k].engine;
			in->queue = lm_xstrdup(q->name);
			in->instance_name = lm_xstrdup(q->instances[0].name);
			in->renumber = 1;
			x->rep->n_switches++;
		}
		free(u.q);
		lm_strmap_free(&u.seen);
	}
	lk_log(x, "fpass_insert_switch_queue_instances: %d I-SQI- "
	       "SwitchQueueInstance%s inserted", x->rep->n_switches,
	       x->rep->n_switches == 1 ? "" : "s");
	return 0;
}

/*
** queues.c -- step 7 of the link (seed 6, initQueues): the N cores' DMA
** queues and semaphores become one pool. One queue per name; each core's
** instances are added to it as nc<c>.<instance>, each core's semaphores are
** renamed nc<c>.<sem> (the merged count is the sum).
*/
#include "common.h"
#include "lk_int.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

typedef struct qmaps {
	lm_strmap sems, qinsts; /* orig -> new, one core */
} qmaps;

static void rewrite_sync(lk_ctx *x, int ci, lm_inst *in, void *arg)
{
	const qmaps *q = arg;
	const char *v;
	(void)x;
	(void)ci;
	for (int i = 0; i < in->n_wait; i++)
		if (in->wait[i].semaphore &&
		    (v = lm_strmap_lookup(&q->sems, in->wait[i].semaphore)))
			lm_inst_set_str(in, &in->wait[i].semaphore, v);
	for (int i = 0; i < in->n_update; i++)
		if (in->update[i].semaphore &&
		    (v = lm_strmap_lookup(&q->sems, in->update[i].semaphore)))
			lm_inst_set_str(in, &in->update[i].semaphore, v);
	if ((in->op == LM_OP_SWITCHQUEUE || in->op == LM_OP_RESETQUEUE) &&
	    in->instance_name &&
	    (v = lm_strmap_lookup(&q->qinsts, in->instance_name)))
		lm_inst_set_str(in, &in->instance_name, v);
}

static cJSON *jdup(const cJSON *j)
{
	return j ? cJSON_Duplicate(j, 1) : NULL;
}

/* Find or append the queue `name` of the out module. */
static lm_queue *get_queue(lk_ctx *x, lm_strmap *byname, const lm_queue *sq,
			   int *is_new)
{
	lm_module *o = x->out;
	void *v;
	*is_new = 0;
	if (lm_strmap_get(byname, sq->name, &v))
		return &o->queues[(intptr_t)v];
	o->queues = lm_xrealloc(o->queues, (size_t)(o->n_queues + 1) *
				sizeof *o->queues);
	lm_queue *q = &o->queues[o->n_queues];
	memset(q, 0, sizeof *q);
	q->name = lm_xstrdup(sq->name);
	q->extra = jdup(sq->extra);
	lm_strmap_put(byname, q->name, (void *)(intptr_t)o->n_queues);
	o->n_queues++;
	*is_new = 1;
	return q;
}

static void add_instance(lm_queue *q, const char *name, const char *sem,
			 const cJSON *extra)
{
	q->instances = lm_xrealloc(q->instances, (size_t)(q->n_instances + 1) *
				   sizeof *q->instances);
	lm_qinstance *qi = &q->instances[q->n_instances++];
	qi->name = lm_xstrdup(name);
	qi->semaphore = lm_xstrdup(sem ? sem : "");
	qi->extra = jdup(extra);
}

/* A copy of core's semaphore s named name: a slot of a bank (an id) is
** the slot of that core's bank (core: its own unless it says). */
static void add_semaphore(lm_module *o, const char *name,
			  const lm_semaphore *s, int64_t core)
{
	o->semaphores = lm_xrealloc(o->semaphores, (size_t)(o->n_semaphores + 1)
				    * sizeof *o->semaphores);
	lm_semaphore *d = &o->semaphores[o->n_semaphores++];
	memset(d, 0, sizeof *d);
	d->name = lm_xstrdup(name);
	d->init = s->init;
	d->has_id = s->has_id;
	d->id = s->id;
	d->has_core = s->has_id || s->has_core;
	d->core = s->has_core ? s->core : core;
	d->extra = jdup(s->extra);
}

/*
** Skipped: the pools are folded by name with no renaming (the first core's
** definition wins), so cores share semaphores and instances -- what a
** linker without this step would produce.
*/
static int fold_queues(lk_ctx *x)
{
	lm_module *o = x->out;
	lm_strmap qs, sems, insts;
	lm_strmap_init(&qs);
	lm_strmap_init(&sems);
	lm_strmap_init(&insts);
	for (int ci = 0; ci < x->n; ci++) {
		const lm_module *m = x->cores[ci].src;
		for (int s = 0; s < m->n_semaphores; s++)
			if (lm_strmap_put(&sems, m->semaphores[s].name, NULL))
				add_semaphore(o, m->semaphores[s].name,
					      &m->semaphores[s],
					      x->cores[ci].core);
		for (int k = 0; k < m->n_queues; k++) {
			int is_new;
			lm_queue *q = get_queue(x, &qs, &m->queues[k], &is_new);
			for (int i = 0; i < m->queues[k].n_instances; i++) {
				const lm_qinstance *qi = &m->queues[k].instances[i];
				if (lm_strmap_put(&insts, qi->name, NULL))
					add_instance(q, qi->name, qi->semaphore,
						     qi->extra);
			}
		}
	}
	x->rep->n_semaphores = o->n_semaphores;
	lk_log(x, "init_queues: skipped (queues, instances and semaphores "
	       "folded by name, not renamed: %d queues, %d semaphores)",
	       o->n_queues, o->n_semaphores);
	lm_strmap_free(&qs);
	lm_strmap_free(&sems);
	lm_strmap_free(&insts);
	return 0;
}

/*
** Step 7 (seed initQueues): "copying queue Q from module <defId>" for each
** core's queue; its instances are "added to existing" when the queue name
** is already in the pool, else they make a "new dmaQ". The rewritten
** references: wait / signal semaphores and SwitchQueueInstance instances of
** the core's functions.
*/
int init_queues(lk_ctx *x)
{
	lm_module *o = x->out;
	lm_strmap qs;
	lm_buf sums = LM_BUF_INIT;

	if (x->opts->skip & LK_SKIP(LK_STEP_INIT_QUEUES))
		return fold_queues(x);
	lm_strmap_init(&qs);
	for (int ci = 0; ci < x->n; ci++) {
		const lk_core *c = &x->cores[ci];
		const lm_module *m = c->src;
		qmaps q;
		lm_strmap_init(&q.sems);
		lm_strmap_init(&q.qinsts);
		for (int s = 0; s < m->n_semaphores; s++) {
			char *nn = lk_nc(x, c->core, m->semaphores[s].name);
			add_semaphore(o, nn, &m->semaphores[s], c->core);
			lm_strmap_put(&q.sems, m->semaphores[s].name, nn);
		}
		lm_buf_printf(&sums, "%s%d", ci ? "+" : "", m->n_semaphores);
		lk_log(x, "initQueues: module %s_defId_%lld getNumSemaphores "
		       "%d", lm_module_display_name(m), (long long)c->core,
		       m->n_semaphores);
		for (int k = 0; k < m->n_queues; k++) {
			const lm_queue *sq = &m->queues[k];
			int is_new;
			lm_queue *uq = get_queue(x, &qs, sq, &is_new);
			lk_log(x, "initQueues: copying queue %s from module "
			       "%s_defId_%lld", sq->name,
			       lm_module_display_name(m), (long long)c->core);
			x->rep->n_queues_copied++;
			if (is_new)
				x->rep->n_new_queues++;
			else
				x->rep->n_instances_existing += sq->n_instances;
			for (int i = 0; i < sq->n_instances; i++) {
				const lm_qinstance *qi = &sq->instances[i];
				const char *sem = lm_strmap_lookup(&q.sems,
								   qi->semaphore);
				char *nn = lk_nc(x, c->core, qi->name);
				add_instance(uq, nn, sem ? sem : qi->semaphore,
					     qi->extra);
				lm_strmap_put(&q.qinsts, qi->name, nn);
				lk_log(x, "initQueues: adding new qInst %s %s "
				       "%s", nn, is_new ? "to new dmaQ" :
				       "to existing", uq->name);
			}
		}
		for (int f = 0; c->first_func >= 0 && f < c->n_funcs; f++) {
			lm_function *fn = &o->functions[c->first_func + f];
			lk_walk_blocks(x, ci, fn->blocks, fn->n_blocks,
				       rewrite_sync, &q);
		}
		lm_strmap_free(&q.sems);
		lm_strmap_free(&q.qinsts);
	}
	lm_strmap_free(&qs);
	x->rep->n_semaphores = o->n_semaphores;
	lk_log(x, "initQueues copied %d queue%s, %d semaphore%s",
	       x->rep->n_queues_copied, x->rep->n_queues_copied == 1 ? "" : "s",
	       o->n_semaphores, o->n_semaphores == 1 ? "" : "s");
	lk_log(x, "init_queues: %d queue%s copied; %d new queue%s; %d "
	       "instance%s added to an existing queue; %d semaphores "
	       "(%s) renamed nc<c>.<sem>", x->rep->n_queues_copied,
	       x->rep->n_queues_copied == 1 ? "" : "s", x->rep->n_new_queues,
	       x->rep->n_new_queues == 1 ? "" : "s",
	       x->rep->n_instances_existing,
	       x->rep->n_instances_existing == 1 ? "" : "s", o->n_semaphores,
	       lm_buf_cstr(&sums));
	lm_buf_free(&sums);
	return 0;
}

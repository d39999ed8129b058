/*
** barriers.c -- steps 10 and 11 of the link (seed 7): the global CoreBarrier
** id renumbering over the merged module, and the static check that cores
** meet the barrier groups they share in the same order.
*/
#include "common.h"
#include "lk_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct idset {
	int64_t *ids;
	int n, cap;
} idset;

static void note_kept(lk_ctx *x, int ci, lm_inst *in, void *arg)
{
	idset *s = arg;
	(void)x;
	(void)ci;
	if (in->op != LM_OP_COREBARRIER || !(in->has_renumber && !in->renumber))
		return;
	lm_grow(&s->ids, &s->cap, s->n + 1, sizeof *s->ids);
	s->ids[s->n++] = in->barrier_id;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

typedef struct renum {
	const idset *kept;
	int k;          /* next kept id not below ctr */
	int64_t ctr;
	int n;
	int64_t over;   /* first id past LK_BARRIER_ID_MAX given, else -1 */
} renum;

#define LK_BARRIER_ID_MAX INT64_C(0xffffffff)

static void renumber_one(lk_ctx *x, int ci, lm_inst *in, void *arg)
{
	renum *r = arg;
	(void)x;
	(void)ci;
	if (in->op != LM_OP_COREBARRIER || (in->has_renumber && !in->renumber))
		return;
	/* skip ids held by renumber: false barriers (kept is sorted) */
	while (r->k < r->kept->n && r->kept->ids[r->k] <= r->ctr) {
		if (r->kept->ids[r->k] == r->ctr)
			r->ctr++;
		r->k++;
	}
	if (r->ctr > LK_BARRIER_ID_MAX && r->over < 0)
		r->over = r->ctr;
	in->barrier_id = r->ctr++;
	r->n++;
}

/* The renumbering of n modules' functions from base (both overloads). */
static int renumber_modules(lk_ctx *x, lm_module *const *ms, int n,
			    int64_t base, renum *r, idset *kept, lm_error *err)
{
	memset(r, 0, sizeof *r);
	r->kept = kept;
	r->ctr = base;
	r->over = -1;
	if (base < 0 || base > LK_BARRIER_ID_MAX)
		return lm_err(err, "", "", "barrier base %lld is outside [0, "
			      "%lld]", (long long)base,
			      (long long)LK_BARRIER_ID_MAX);
	for (int i = 0; i < n; i++)
		for (int f = 0; f < ms[i]->n_functions; f++)
			lk_walk_blocks(x, -1, ms[i]->functions[f].blocks,
				       ms[i]->functions[f].n_blocks, note_kept,
				       kept);
	if (kept->n > 1)
		qsort(kept->ids, (size_t)kept->n, sizeof *kept->ids, cmp_i64);
	for (int i = 0; i < n; i++)
		for (int f = 0; f < ms[i]->n_functions; f++)
			lk_walk_blocks(x, -1, ms[i]->functions[f].blocks,
				       ms[i]->functions[f].n_blocks,
				       renumber_one, r);
	if (r->over >= 0)
		return lm_err(err, "", "", "barrier id %lld does not fit the "
			      "barrier's 32 bits (%d barriers renumbered from "
			      "base %lld)", (long long)r->over, r->n,
			      (long long)base);
	return 0;
}

int lk_renumber_core_barriers(lm_module *const *mods, int n, int64_t base,
			      int64_t *next, lm_error *err)
{
	lk_ctx x;
	idset kept = {0};
	renum r;
	int rc;
	memset(&x, 0, sizeof x);
	for (int i = 0; i < n; i++)
		if (!mods[i])
			return lm_errc(err, LM_EINTERNAL, "", "", "module %d is "
				       "NULL", i);
	rc = renumber_modules(&x, mods, n, base, &r, &kept, err);
	free(kept.ids);
	if (!rc && next)
		*next = r.ctr;
	return rc;
}

/*
** Step 10 (seed renumberCoreBarriers(Module&)): one counter from
** lk_options.barrier_base (0) over the whole module,
** functions in order, instructions in order (into Loops); every CoreBarrier
** with renumber true gets the next id. Ids held by renumber: false barriers
** are skipped, so the result is globally unique (the seed can collide).
*/
int renumber_core_barriers(lk_ctx *x)
{
	idset kept = {0};
	renum r;
	lm_module *o = x->out;
	int rc = renumber_modules(x, &o, 1, x->opts->barrier_base, &r, &kept,
				  x->err);
	if (rc) {
		free(kept.ids);
		return rc;
	}
	x->rep->n_renumbered = r.n;
	x->rep->n_kept_ids = kept.n;
	if (r.n)
		lk_log(x, "renumber_core_barriers: %d barrier%s renumbered "
		       "(ids %lld..%lld), %d id%s kept by renumber: false", r.n,
		       r.n == 1 ? "" : "s", (long long)x->opts->barrier_base,
		       (long long)(r.ctr - 1), kept.n,
		       kept.n == 1 ? "" : "s");
	else
		lk_log(x, "renumber_core_barriers: 0 barriers renumbered, %d "
		       "id%s kept by renumber: false", kept.n,
		       kept.n == 1 ? "" : "s");
	free(kept.ids);
	return 0;
}

/*
** The barrier groups one core reaches, in program order. A Call into the
** core's own functions runs its target synchronously at the call's place
** (the simulator's semantics, after the BIR simulator's visitInstCall), so
** the callee's barriers are expanded in place (an NKIKernel's body too: the
** simulator runs it in place the same way), and a function's walk ends
** at its first Return, as the simulator's walk does (a call reached again
** while its function is still being walked, i.e. recursion, is not
** re-entered). A
** function whose walk met no barrier (and cut no recursion) is not walked
** again, so helpers called many times cost one walk. CALL_DEPTH nested
** calls, SEQ_MAX barriers and VISIT_MIN instructions visited (or 16 times
** the core's instructions, when more) bound the
** walk; a truncated sequence is reported in the -v line.
*/
#define CALL_DEPTH 256
#define SEQ_MAX (1 << 18)
#define VISIT_MIN ((long)1 << 22)

typedef struct gseq {
	const char **g;
	const lm_inst **in;
	int n, cap;
	unsigned char *active; /* per core function: on the call path */
	unsigned char *nobar;  /* per core function: walked, no barrier */
	long visits, cuts, max_visits;
	int truncated;
} gseq;

static int seq_blocks(lk_ctx *x, int ci, const lm_block *bs, int nb,
		      gseq *s, int depth);

/* Follow a Call into a function of the same core. */
static void seq_call(lk_ctx *x, int ci, const char *target, gseq *s, int depth)
{
	const lk_core *c = &x->cores[ci];
	if (!target)
		return;
	for (int k = 0; k < c->n_funcs; k++) {
		const lm_function *f = &x->out->functions[c->first_func + k];
		if (!f->name || strcmp(f->name, target) != 0)
			continue;
		if (s->nobar[k])
			return;
		if (s->active[k]) {
			s->cuts++; /* recursion */
			return;
		}
		if (depth >= CALL_DEPTH) {
			s->truncated = 1;
			return;
		}
		int n0 = s->n;
		long cuts0 = s->cuts;
		s->active[k] = 1;
		seq_blocks(x, ci, f->blocks, f->n_blocks, s, depth + 1);
		s->active[k] = 0;
		if (s->n == n0 && s->cuts == cuts0 && !s->truncated)
			s->nobar[k] = 1;
		return;
	}
}

/* Walk blocks in program order; returns 1 when a Return ended the walk
** (or it was cut), so the enclosing function stops there too. */
static int seq_blocks(lk_ctx *x, int ci, const lm_block *bs, int nb,
		      gseq *s, int depth)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (s->truncated)
				return 1;
			if (++s->visits > s->max_visits) {
				s->truncated = 1;
				return 1;
			}
			if (in->op == LM_OP_RETURN)
				return 1;
			if (in->n_blocks) {
				if (seq_blocks(x, ci, in->blocks, in->n_blocks,
					       s, depth))
					return 1;
			} else if (in->op == LM_OP_CALL) {
				seq_call(x, ci, in->target, s, depth);
			} else if (in->op == LM_OP_NKIKERNEL) {
				seq_call(x, ci, in->func, s, depth);
			} else if (in->op == LM_OP_COREBARRIER) {
				if (s->n >= SEQ_MAX) {
					s->truncated = 1;
					return 1;
				}
				if (s->n + 1 > s->cap) {
					lm_grow(&s->g, &s->cap, s->n + 1,
						sizeof *s->g);
					s->in = lm_xrealloc(s->in, (size_t)s->cap *
							    sizeof *s->in);
				}
				s->in[s->n] = in;
				s->g[s->n++] = in->group ? in->group
					: (in->name ? in->name : "");
			}
		}
	return 0;
}

/*
** Step 11: the barrier groups shared by two cores must be met in the same
** relative order on both, else the linked program deadlocks statically:
** "barrier order mismatch: core A reaches group 'X' before 'Y' but core B
** reaches 'Y' before 'X' (static deadlock)". Each core's sequence is its
** function nc<c> in program order up to its first Return, with Calls into
** its own functions expanded in place (synchronous calls).
*/
int check_barrier_order(lk_ctx *x)
{
	gseq *seqs = lm_xcalloc((size_t)x->n, sizeof *seqs);
	lm_strmap *pos = lm_xcalloc((size_t)x->n, sizeof *pos);
	lm_strmap groups;
	int rc = 0, n_trunc = 0;
	lm_strmap_init(&groups);
	for (int ci = 0; ci < x->n; ci++) {
		lm_function *f = lk_core_function(x, ci);
		lm_strmap_init(&pos[ci]);
		if (!f)
			continue;
		seqs[ci].active = lm_xcalloc((size_t)x->cores[ci].n_funcs + 1, 1);
		seqs[ci].nobar = lm_xcalloc((size_t)x->cores[ci].n_funcs + 1, 1);
		seqs[ci].max_visits = 16 * lk_top_insts(f, x->cores[ci].n_funcs);
		if (seqs[ci].max_visits < VISIT_MIN)
			seqs[ci].max_visits = VISIT_MIN;
		seqs[ci].active[0] = 1; /* nc<c> itself */
		seq_blocks(x, ci, f->blocks, f->n_blocks, &seqs[ci], 0);
		if (seqs[ci].truncated)
			n_trunc++;
		for (int i = seqs[ci].n - 1; i >= 0; i--) {
			/* first occurrence wins (reached twice: the sim's job) */
			lm_strmap_put(&pos[ci], seqs[ci].g[i], (void *)(intptr_t)(i + 1));
			lm_strmap_put(&groups, seqs[ci].g[i], NULL);
		}
	}
	for (int a = 0; a < x->n && !rc; a++)
		for (int b = a + 1; b < x->n && !rc; b++) {
			/* b's shared groups must appear in increasing a-order */
			intptr_t prev = 0;
			const char *prev_g = NULL;
			for (int i = 0; i < seqs[b].n && !rc; i++) {
				intptr_t p = (intptr_t)lm_strmap_lookup(&pos[a],
								seqs[b].g[i]);
				if (!p)
					continue;
				if (p < prev)
					rc = lm_err(x->err, "", "module", "barrier "
						"order mismatch: core %lld reaches "
						"group '%s' before '%s' but core "
						"%lld reaches '%s' before '%s' "
						"(static deadlock)",
						(long long)x->cores[a].core,
						seqs[b].g[i], prev_g,
						(long long)x->cores[b].core,
						prev_g, seqs[b].g[i]);
				prev = p;
				prev_g = seqs[b].g[i];
			}
		}
	x->rep->n_groups_checked = (int)groups.n;
	if (!rc)
		lk_log(x, "check_barrier_order: %d barrier group%s, same "
		       "relative order on all %d core%s%s", (int)groups.n,
		       groups.n == 1 ? "" : "s", x->n, x->n == 1 ? "" : "s",
		       n_trunc ? " (checked up to 256 nested calls, 256k "
		       "barriers or max(4M, 16 x its instructions) walked per "
		       "core; the rest not followed)" : "");
	for (int ci = 0; ci < x->n; ci++) {
		free(seqs[ci].g);
		free(seqs[ci].in);
		free(seqs[ci].active);
		free(seqs[ci].nobar);
		lm_strmap_free(&pos[ci]);
	}
	free(seqs);
	free(pos);
	lm_strmap_free(&groups);
	return rc;
}

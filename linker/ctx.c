/*
** ctx.c -- the link context helpers every step file shares: ctx-owned
** strings, the -v log, core lookups, opening slots in a block, walks.
** The lowest file of the linker: it calls no other file of it.
*/
#include "common.h"
#include "lk_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bump allocation of n bytes from the context's arena (freed with it). */
static char *arena_alloc(lk_ctx *x, size_t n)
{
	if (n > x->arena_left) {
		size_t sz = n > 65536 ? n : 65536;
		lm_grow(&x->strs, &x->cap_strs, x->n_strs + 1, sizeof *x->strs);
		x->arena = x->strs[x->n_strs++] = lm_xmalloc(sz);
		x->arena_left = sz;
	}
	char *p = x->arena;
	x->arena += n;
	x->arena_left -= n;
	return p;
}

char *lk_str(lk_ctx *x, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	char *p = arena_alloc(x, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

/* "nc<core>.<name>" without printf (the hot rename of the link). */
char *lk_nc(lk_ctx *x, int64_t core, const char *name)
{
	char pre[24];
	size_t np = (size_t)(lm_core_prefix(pre, core) - pre);
	size_t ln = strlen(name);
	char *p = arena_alloc(x, np + 1 + ln + 1);
	memcpy(p, pre, np);
	p[np] = '.';
	memcpy(p + np + 1, name, ln + 1);
	return p;
}

void lk_set(char **p, const char *v)
{
	char *nv = v ? lm_xstrdup(v) : NULL;
	free(*p);
	*p = nv;
}

void lk_log(lk_ctx *x, const char *fmt, ...)
{
	va_list ap;
	if (!x->log)
		return;
	va_start(ap, fmt);
	char tmp[2048];
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	lm_buf_puts(x->log, tmp);
	lm_buf_puts(x->log, "\n");
}

int lk_core_index(const lk_ctx *x, int64_t core)
{
	for (int i = 0; i < x->n; i++)
		if (x->cores[i].core == core)
			return i;
	return -1;
}

lm_inst *lk_block_insert(lk_ctx *x, lm_block *b, int pos, int count)
{
	int room = 0;
	for (int i = 0; i < x->n && !room; i++)
		for (int k = 0; k < 2 && !room; k++)
			room = b->insts && b->insts == x->cores[i].slack[k] &&
				b->n_insts + count <= x->cores[i].slack_cap[k];
	if (!room) {
		/* the array moves: its spare-slot record (if any) goes */
		for (int i = 0; i < x->n; i++)
			for (int k = 0; k < 2; k++)
				if (x->cores[i].slack[k] == b->insts)
					x->cores[i].slack[k] = NULL;
		b->insts = lm_xrealloc(b->insts, (size_t)(b->n_insts + count) *
				       sizeof *b->insts);
	}
	memmove(&b->insts[pos + count], &b->insts[pos],
		(size_t)(b->n_insts - pos) * sizeof *b->insts);
	b->n_insts += count;
	memset(&b->insts[pos], 0, (size_t)count * sizeof b->insts[pos]);
	return &b->insts[pos];
}

lm_function *lk_core_function(lk_ctx *x, int i)
{
	const lk_core *c = &x->cores[i];
	if (c->first_func < 0 || c->first_func >= x->out->n_functions)
		return NULL;
	return &x->out->functions[c->first_func];
}

int lk_function_core(const lk_ctx *x, const lm_function *f)
{
	if (!f->has_core_id || f->kind == LM_FK_DISPATCHER)
		return -1;
	return lk_core_index(x, f->neuron_core_id);
}

void lk_walk_blocks(lk_ctx *x, int ci, lm_block *bs, int nb, lk_inst_fn fn,
		    void *arg)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			lm_inst *in = &bs[b].insts[i];
			fn(x, ci, in, arg);
			if (in->n_blocks)
				lk_walk_blocks(x, ci, in->blocks, in->n_blocks,
					       fn, arg);
		}
}

long lk_top_insts(const lm_function *fs, int n)
{
	long k = 0;
	for (int f = 0; f < n; f++)
		for (int b = 0; b < fs[f].n_blocks; b++)
			k += fs[f].blocks[b].n_insts;
	return k;
}

/*
** mmt.c -- step 12 of the link (seed PostLinkMmtReport) and `lncsim mmt`:
** the static matmul report. Per function: Matmult count, MACs, PE cycles
** from the arch cost model and the PE-array fill
** sum(K*M*N) / sum(128*128*N*passes). Static: an instruction inside a Loop
** counts once.
*/
#include "common.h"
#include "lk_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Partitions (first pair) and free size (the other pairs) of an operand. */
static void dims(const lm_arg *a, int64_t *part, int64_t *free_)
{
	*part = 0;
	*free_ = 0;
	if (a->kind != LM_ARG_PHYSICAL_AP || a->n_ap < 1)
		return;
	*part = a->ap[0].num;
	*free_ = 1;
	for (int i = 1; i < a->n_ap; i++)
		*free_ *= a->ap[i].num;
}

/*
** One Matmult: K, M, N and PE cycles from lm_matmult_pe_cost (model/arch.h),
** the rule the simulator's cost model uses too. No moving operand: fp32.
*/
static void count_matmul(const lm_arch *arch, const lm_inst *in, lk_mmt_row *r)
{
	int64_t st_p = 0, st_f = 0, mv_p = 0, mv_f = 0, out_p = 0, out_f = 0;
	lm_matmult_cost mc;
	if (in->n_ins >= 1)
		dims(&in->ins[0], &st_p, &st_f);
	if (in->n_ins >= 2)
		dims(&in->ins[1], &mv_p, &mv_f);
	if (in->n_outs >= 1)
		dims(&in->outs[0], &out_p, &out_f);
	lm_matmult_pe_cost(arch, st_p, st_f, mv_f, out_f,
			   in->n_ins >= 2 ? in->ins[1].dtype : LM_DT_FLOAT32,
			   in->is_transpose, &mc);
	r->matmuls++;
	r->macs += mc.k * mc.m * mc.n;
	r->pe_cycles += mc.pe_cycles;
	r->fill_num += (double)mc.k * (double)mc.m * (double)mc.n;
	r->fill_den += (double)LM_PE_ROWS * LM_PE_COLS * (double)mc.n *
		       mc.passes;
}

static void scan(const lm_arch *arch, const lm_block *bs, int nb, lk_mmt_row *r)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in->n_blocks)
				scan(arch, in->blocks, in->n_blocks, r);
			else if (in->op == LM_OP_MATMULT)
				count_matmul(arch, in, r);
		}
}

int lk_matmul_report(const lm_module *m, lk_mmt_report *out, lm_error *err)
{
	const lm_arch *arch = m->arch ? lm_arch_get(m->arch) : NULL;
	memset(out, 0, sizeof *out);
	if (!arch)
		return lm_err(err, m->path, "module", "unknown arch '%s'",
			      m->arch ? m->arch : "(none)");
	out->arch = lm_xstrdup(arch->name);
	out->n_rows = m->n_functions;
	out->rows = m->n_functions ? lm_xcalloc((size_t)m->n_functions,
						sizeof *out->rows) : NULL;
	out->total.function = lm_xstrdup("total");
	out->total.core = -1;
	for (int f = 0; f < m->n_functions; f++) {
		const lm_function *fn = &m->functions[f];
		lk_mmt_row *r = &out->rows[f];
		r->function = lm_xstrdup(fn->name ? fn->name : "");
		r->core = fn->has_core_id ? fn->neuron_core_id : -1;
		scan(arch, fn->blocks, fn->n_blocks, r);
		out->total.matmuls += r->matmuls;
		out->total.macs += r->macs;
		out->total.pe_cycles += r->pe_cycles;
		out->total.fill_num += r->fill_num;
		out->total.fill_den += r->fill_den;
	}
	return 0;
}

double lk_mmt_fill(const lk_mmt_row *r)
{
	return r->fill_den > 0 ? r->fill_num / r->fill_den : 0.0;
}

static void row_line(lm_buf *b, const lk_mmt_row *r, int w)
{
	char core[24] = "-";
	if (r->core >= 0)
		snprintf(core, sizeof core, "%lld", (long long)r->core);
	lm_buf_printf(b, "%-*s %5s %8lld %14lld %12lld %9.1f%%\n", w,
		      r->function, core, (long long)r->matmuls,
		      (long long)r->macs, (long long)r->pe_cycles,
		      100.0 * lk_mmt_fill(r));
}

void lk_mmt_format_table(const lk_mmt_report *r, lm_buf *b)
{
	int w = 8;
	for (int i = 0; i < r->n_rows; i++)
		if ((int)strlen(r->rows[i].function) > w)
			w = (int)strlen(r->rows[i].function);
	lm_buf_printf(b, "%-*s %5s %8s %14s %12s %10s\n", w, "function", "core",
		      "matmuls", "MACs", "PE cycles", "array fill");
	for (int i = 0; i < r->n_rows; i++)
		row_line(b, &r->rows[i], w);
	row_line(b, &r->total, w);
	const lm_arch *a = lm_arch_get(r->arch);
	lm_buf_printf(b, "(arch %s: PE cycles = N*passes + %d per matmul; "
		      "fill = sum(K*M*N) / sum(128*128*N*passes))\n", r->arch,
		      a ? a->matmul_fixed : 0);
}

static cJSON *row_json(const lk_mmt_row *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "function", r->function);
	if (r->core >= 0)
		cJSON_AddNumberToObject(o, "core", (double)r->core);
	else
		cJSON_AddNullToObject(o, "core");
	cJSON_AddNumberToObject(o, "matmuls", (double)r->matmuls);
	cJSON_AddNumberToObject(o, "macs", (double)r->macs);
	cJSON_AddNumberToObject(o, "pe_cycles", (double)r->pe_cycles);
	cJSON_AddNumberToObject(o, "array_fill", lk_mmt_fill(r));
	return o;
}

char *lk_mmt_json(const lk_mmt_report *r)
{
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	char *s, *out;
	cJSON_AddStringToObject(root, "arch", r->arch ? r->arch : "");
	for (int i = 0; i < r->n_rows; i++)
		cJSON_AddItemToArray(arr, row_json(&r->rows[i]));
	cJSON_AddItemToObject(root, "functions", arr);
	cJSON_AddItemToObject(root, "total", row_json(&r->total));
	s = cJSON_Print(root);
	cJSON_Delete(root);
	out = lm_xasprintf("%s\n", s ? s : "{}");
	free(s);
	return out;
}

/* Step 12 (seed PostLinkMmtReport) on the linked module. */
int post_link_mmt_report(lk_ctx *x)
{
	int rc = lk_matmul_report(x->out, &x->rep->mmt, x->err);
	if (rc)
		return rc;
	lk_log(x, "post_link_mmt_report: %lld matmul%s, %lld MACs, %lld PE "
	       "cycles, array fill %.1f%%", (long long)x->rep->mmt.total.matmuls,
	       x->rep->mmt.total.matmuls == 1 ? "" : "s",
	       (long long)x->rep->mmt.total.macs,
	       (long long)x->rep->mmt.total.pe_cycles,
	       100.0 * lk_mmt_fill(&x->rep->mmt.total));
	return 0;
}

/*
** json_save.c -- IR -> BIR JSON, in the documented form
** (formats/BIR-JSON-ENUMS.md): physical_ap pairs as [step, num], Iota /
** AffineSelect pattern pairs as {"step", "num"} objects, psum_buf_shape
** nested [a, [b, c]], non-finite floats as "nan" / "inf" / "-inf".
** Keys the loader did not interpret (`extra`) are written back unchanged.
*/
#include "common.h"
#include "module.h"
#include "json_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cJSON *lm_json_float(double v)
{
	if (isnan(v))
		return cJSON_CreateString("nan");
	if (isinf(v))
		return cJSON_CreateString(v > 0 ? "inf" : "-inf");
	if (v == 0 && signbit(v))
		return cJSON_CreateRaw("-0.0");
	return cJSON_CreateNumber(v);
}

static void add_float(cJSON *o, const char *k, double v)
{
	cJSON_AddItemToObject(o, k, lm_json_float(v));
}

static void add_int(cJSON *o, const char *k, int64_t v)
{
	cJSON_AddItemToObject(o, k, cJSON_CreateNumber((double)v));
}

static void add_str(cJSON *o, const char *k, const char *s)
{
	cJSON_AddItemToObject(o, k, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void add_bool(cJSON *o, const char *k, int b)
{
	cJSON_AddItemToObject(o, k, cJSON_CreateBool(b));
}

static cJSON *int_array(const int64_t *v, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static cJSON *str_array(char *const *v, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

/* Append a copy of every key of extra to o (keys o already has win). */
static void add_extra(cJSON *o, const cJSON *extra)
{
	if (!extra)
		return;
	for (const cJSON *c = extra->child; c; c = c->next)
		if (!cJSON_GetObjectItemCaseSensitive(o, c->string))
			cJSON_AddItemToObject(o, c->string, cJSON_Duplicate(c, 1));
}

static cJSON *appairs(const lm_appair *p, int n, int as_objects)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++) {
		cJSON *e;
		if (as_objects) {
			e = cJSON_CreateObject();
			add_int(e, "step", p[i].step);
			add_int(e, "num", p[i].num);
		} else {
			e = cJSON_CreateArray();
			cJSON_AddItemToArray(e, cJSON_CreateNumber((double)p[i].step));
			cJSON_AddItemToArray(e, cJSON_CreateNumber((double)p[i].num));
		}
		cJSON_AddItemToArray(a, e);
	}
	return a;
}

static cJSON *arg_json(const lm_arg *a)
{
	if (a->kind == LM_ARG_OPAQUE)
		return cJSON_Duplicate(a->extra, 1);
	cJSON *o = cJSON_CreateObject();
	if (a->kind == LM_ARG_PHYSICAL_AP) {
		add_str(o, "kind", "physical_ap");
		cJSON_AddItemToObject(o, "ap", appairs(a->ap, a->n_ap, 0));
		add_str(o, "dtype", lm_dtype_name(a->dtype));
		add_int(o, "offset", a->offset);
		add_str(o, "memsetref", a->memsetref);
		add_str(o, "memref", a->memref);
		if (a->has_start_partition)
			add_int(o, "start_partition", a->start_partition);
	} else {
		add_str(o, "kind", "imm_value");
		add_str(o, "dtype", lm_dtype_name(a->dtype));
		add_float(o, "value", a->imm);
	}
	add_extra(o, a->extra);
	return o;
}

static cJSON *args_json(const lm_arg *v, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, arg_json(&v[i]));
	return a;
}

static cJSON *kv_json(const lm_kv *v, int n)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; i < n; i++)
		add_str(o, v[i].key, v[i].value);
	return o;
}

static cJSON *block_json(const lm_block *b);

static cJSON *inst_json(const lm_inst *in)
{
	cJSON *o = cJSON_CreateObject();
	const char *opname = in->op == LM_OP_OTHER ? in->opcode_str
						    : lm_opcode_name(in->op);
	add_str(o, "opcode", opname);
	if (in->op == LM_OP_LOOP) {
		if (in->name)
			add_str(o, "name", in->name);
		cJSON *bl = cJSON_CreateArray();
		for (int i = 0; i < in->n_blocks; i++)
			cJSON_AddItemToArray(bl, block_json(&in->blocks[i]));
		cJSON_AddItemToObject(o, "blocks", bl);
		add_extra(o, in->extra);
		return o;
	}
	add_str(o, "name", in->name);
	add_str(o, "engine", lm_engine_name(in->engine));
	cJSON_AddItemToObject(o, "ins", args_json(in->ins, in->n_ins));
	cJSON_AddItemToObject(o, "outs", args_json(in->outs, in->n_outs));
	if (in->has_dependencies)
		cJSON_AddItemToObject(o, "dependencies",
				      str_array(in->deps, in->n_deps));
	if (in->n_wait) {
		cJSON *w = cJSON_CreateArray();
		for (int i = 0; i < in->n_wait; i++) {
			cJSON *e = cJSON_CreateObject();
			add_str(e, "semaphore", in->wait[i].semaphore);
			add_int(e, "value", in->wait[i].value);
			cJSON_AddItemToArray(w, e);
		}
		cJSON_AddItemToObject(o, "wait", w);
	}
	if (in->n_signal)
		cJSON_AddItemToObject(o, "signal", str_array(in->signal, in->n_signal));
	if (in->has_can_read_uninit)
		add_bool(o, "can_read_uninit", in->can_read_uninit);
	switch (in->op) {
	case LM_OP_DMACOPY:
	case LM_OP_LOAD:
	case LM_OP_SAVE:
		if (in->queue)
			add_str(o, "queue", in->queue);
		break;
	case LM_OP_SWITCHQUEUE:
		add_str(o, "queue", in->queue);
		add_str(o, "instance_name", in->instance_name);
		break;
	case LM_OP_CALL:
		add_str(o, "target", in->target);
		break;
	case LM_OP_MATMULT:
		add_bool(o, "start_tensor_calc", in->start_tensor_calc);
		if (in->has_stop_tensor_calc)
			add_bool(o, "stop_tensor_calc", in->stop_tensor_calc);
		if (in->has_is_transpose)
			add_bool(o, "is_transpose", in->is_transpose);
		break;
	case LM_OP_ACTIVATION:
		add_str(o, "func", lm_actfunc_name(in->act_func));
		add_float(o, "scale", in->scale);
		if (in->has_alpha)
			add_float(o, "alpha", in->alpha);
		break;
	case LM_OP_TENSORTENSOR:
		add_str(o, "op", lm_aluop_name(in->alu));
		break;
	case LM_OP_TENSORSCALAR:
		add_str(o, "op0", lm_aluop_name(in->alu0));
		add_float(o, "const0", in->const0);
		add_bool(o, "reverse0", in->reverse0);
		add_str(o, "op1", lm_aluop_name(in->alu1));
		add_float(o, "const1", in->const1);
		add_bool(o, "reverse1", in->reverse1);
		break;
	case LM_OP_MEMSET:
		add_str(o, "mode", in->memset_mode ? in->memset_mode : "Const");
		add_int(o, "constant", in->has_constant ? in->constant : 0);
		if (in->has_value)
			add_float(o, "value", in->value);
		break;
	case LM_OP_AFFINESELECT:
		add_str(o, "compare_op", lm_aluop_name(in->alu));
		add_float(o, "fill_value", in->fill_value);
		/* fall through */
	case LM_OP_IOTA:
		add_int(o, "base", in->base);
		add_int(o, "channel_multiplier", in->channel_multiplier);
		cJSON_AddItemToObject(o, "pattern",
				      appairs(in->pattern, in->n_pattern, 1));
		break;
	case LM_OP_COREBARRIER:
		add_int(o, "id", in->barrier_id);
		cJSON_AddItemToObject(o, "cores", int_array(in->cores, in->n_cores));
		if (in->group)
			add_str(o, "group", in->group);
		if (in->has_renumber || !in->renumber)
			add_bool(o, "renumber", in->renumber);
		break;
	case LM_OP_NKIKLIRKERNEL:
		add_str(o, "kernel_format", in->kernel_format);
		add_str(o, "klir_binary", in->klir_binary);
		/* fall through */
	case LM_OP_NKIKERNEL:
		if (in->op == LM_OP_NKIKERNEL) {
			add_str(o, "func", in->func);
			if (in->kernel_source)
				add_str(o, "kernel_source", in->kernel_source);
		}
		cJSON_AddItemToObject(o, "func_args",
				      kv_json(in->func_args, in->n_func_args));
		cJSON_AddItemToObject(o, "func_outs",
				      kv_json(in->func_outs, in->n_func_outs));
		if (in->has_sb_buf_shape)
			cJSON_AddItemToObject(o, "sb_buf_shape",
					      int_array(in->sb_buf_shape, 2));
		if (in->has_psum_buf_shape) {
			cJSON *p = cJSON_CreateArray();
			cJSON_AddItemToArray(p, cJSON_CreateNumber(
				(double)in->psum_buf_shape[0]));
			cJSON_AddItemToArray(p, int_array(in->psum_buf_shape + 1, 2));
			cJSON_AddItemToObject(o, "psum_buf_shape", p);
		}
		break;
	default:
		break;
	}
	add_extra(o, in->extra);
	return o;
}

static cJSON *block_json(const lm_block *b)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "name", b->name);
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < b->n_insts; i++)
		cJSON_AddItemToArray(a, inst_json(&b->insts[i]));
	cJSON_AddItemToObject(o, "instructions", a);
	add_extra(o, b->extra);
	return o;
}

static cJSON *alloc_json(const lm_alloc *al)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "name", al->name);
	add_str(o, "kind", lm_tensorkind_name(al->kind));
	if (al->dtype)
		add_str(o, "dtype", lm_dtype_name(al->dtype));
	cJSON_AddItemToObject(o, "tensor_shape",
			      int_array(al->tensor_shape, al->n_shape));
	if (al->addr_space)
		add_str(o, "addr_space", al->addr_space);
	add_str(o, "file", al->file ? al->file : "");
	cJSON *ml = cJSON_CreateArray();
	for (int i = 0; i < al->n_memlocs; i++) {
		const lm_memloc *l = &al->memlocs[i];
		cJSON *e = cJSON_CreateObject();
		add_str(e, "name", l->name);
		add_str(e, "type", lm_memtype_name(l->type));
		add_int(e, "addr", l->addr);
		cJSON_AddItemToObject(e, "dims", int_array(l->dims, l->n_dims));
		add_int(e, "bank", l->bank);
		add_int(e, "base", l->base);
		add_bool(e, "allocated", l->allocated);
		add_extra(e, l->extra);
		cJSON_AddItemToArray(ml, e);
	}
	cJSON_AddItemToObject(o, "memorylocations", ml);
	if (al->has_remote) {
		cJSON *r = cJSON_CreateObject();
		add_str(r, "name", al->remote_name);
		add_int(r, "core", al->remote_core);
		cJSON_AddItemToObject(o, "remote_local_target", r);
	}
	if (al->alias_of)
		add_str(o, "alias_of", al->alias_of);
	add_extra(o, al->extra);
	return o;
}

static cJSON *function_json(const lm_function *f)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "name", f->name);
	cJSON_AddItemToObject(o, "attributes",
			      str_array(f->attributes, f->n_attributes));
	if (f->has_kind)
		add_str(o, "kind", lm_funckind_name(f->kind));
	if (f->has_core_id)
		add_int(o, "neuron_core_id", f->neuron_core_id);
	cJSON *al = cJSON_CreateArray();
	for (int i = 0; i < f->n_allocs; i++)
		cJSON_AddItemToArray(al, alloc_json(&f->allocs[i]));
	cJSON_AddItemToObject(o, "allocations", al);
	cJSON *bl = cJSON_CreateArray();
	for (int i = 0; i < f->n_blocks; i++)
		cJSON_AddItemToArray(bl, block_json(&f->blocks[i]));
	cJSON_AddItemToObject(o, "blocks", bl);
	add_extra(o, f->extra);
	return o;
}

cJSON *lm_module_to_cjson(const lm_module *m)
{
	cJSON *o = cJSON_CreateObject();
	add_int(o, "version", m->version);
	add_str(o, "arch", m->arch ? m->arch : "gen3");
	if (m->name)
		add_str(o, "name", m->name);
	cJSON *at = cJSON_CreateObject();
	if (m->has_core_id)
		add_int(at, "neuron_core_id", m->neuron_core_id);
	add_extra(at, m->attributes_extra);
	cJSON_AddItemToObject(o, "attributes", at);
	if (m->n_semaphores) {
		cJSON *s = cJSON_CreateArray();
		for (int i = 0; i < m->n_semaphores; i++) {
			cJSON *e = cJSON_CreateObject();
			add_str(e, "name", m->semaphores[i].name);
			add_int(e, "init", m->semaphores[i].init);
			add_extra(e, m->semaphores[i].extra);
			cJSON_AddItemToArray(s, e);
		}
		cJSON_AddItemToObject(o, "semaphores", s);
	}
	if (m->n_queues) {
		cJSON *qa = cJSON_CreateArray();
		for (int i = 0; i < m->n_queues; i++) {
			const lm_queue *q = &m->queues[i];
			cJSON *e = cJSON_CreateObject();
			add_str(e, "name", q->name);
			cJSON *ia = cJSON_CreateArray();
			for (int j = 0; j < q->n_instances; j++) {
				cJSON *ie = cJSON_CreateObject();
				add_str(ie, "name", q->instances[j].name);
				add_str(ie, "semaphore", q->instances[j].semaphore);
				add_extra(ie, q->instances[j].extra);
				cJSON_AddItemToArray(ia, ie);
			}
			cJSON_AddItemToObject(e, "instances", ia);
			add_extra(e, q->extra);
			cJSON_AddItemToArray(qa, e);
		}
		cJSON_AddItemToObject(o, "queues", qa);
	}
	if (m->has_aliases || m->n_aliases) {
		cJSON *aa = cJSON_CreateArray();
		for (int i = 0; i < m->n_aliases; i++) {
			const lm_alias *a = &m->aliases[i];
			cJSON *e = cJSON_CreateObject();
			add_str(e, "producer", a->producer);
			add_str(e, "consumer", a->consumer);
			add_int(e, "producer_core", a->producer_core);
			add_int(e, "consumer_core", a->consumer_core);
			add_extra(e, a->extra);
			cJSON_AddItemToArray(aa, e);
		}
		cJSON_AddItemToObject(o, "aliases", aa);
	}
	cJSON *fa = cJSON_CreateArray();
	for (int i = 0; i < m->n_functions; i++)
		cJSON_AddItemToArray(fa, function_json(&m->functions[i]));
	cJSON_AddItemToObject(o, "functions", fa);
	add_extra(o, m->extra);
	return o;
}

int lm_module_to_json(const lm_module *m, int pretty, char **out_text,
		      size_t *out_len, lm_error *err)
{
	cJSON *o = lm_module_to_cjson(m);
	char *s = pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!s)
		return lm_errc(err, LM_EINTERNAL, m->path, "", "cannot serialize");
	size_t n = strlen(s);
	char *r = lm_xmalloc(n + 2);
	memcpy(r, s, n);
	r[n] = '\n';
	r[n + 1] = 0;
	cJSON_free(s);
	*out_text = r;
	if (out_len)
		*out_len = n + 1;
	return 0;
}

int lm_module_save(const lm_module *m, const char *path, int pretty,
		   lm_error *err)
{
	char *s;
	size_t n;
	if (lm_module_to_json(m, pretty, &s, &n, err))
		return LM_EINPUT;
	int rc = lm_write_file_atomic(path, s, n, err);
	free(s);
	return rc;
}

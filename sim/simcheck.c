/*
** simcheck.c -- what the simulator models, one table per kind of object
** (instruction keys per opcode, operand keys, allocation keys, memory
** location keys). A key is
**   modelled  the simulator reads it (any value);
**   metadata  debug / bookkeeping / placement hints that cannot change
**             the bits of a result (any value);
**   default   allowed only at its documented default (or null / absent);
**             any other value is refused;
** and a key in no row is refused. The loader keeps every key it does not
** interpret in `extra`, so the rows for extra keys are looked up by name;
** parsed fields whose value the simulator models only in part are checked
** by the functions of the `checks` table. docs/simulator.md has the table
** in prose.
*/
#include "common.h"
#include "sim_int.h"
#include "simcheck.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* Opcode sets as bit masks. */
#define OP(x) (1u << LM_OP_##x)
#define OPS_DMA (OP(DMACOPY) | OP(LOAD) | OP(SAVE))
#define OPS_EXEC (OPS_DMA | OP(MATMULT) | OP(ACTIVATION) | OP(TENSORTENSOR) | \
		  OP(TENSORSCALAR) | OP(TENSORCOPY) | OP(MEMSET) | OP(IOTA) | \
		  OP(AFFINESELECT) | OP(NOOP) | OP(COREBARRIER) | OP(CALL) | \
		  OP(RETURN) | OP(SWITCHQUEUE) | OP(NKIKERNEL))

typedef char op_mask_fits[LM_OP_COUNT <= 32 ? 1 : -1];

enum { K_MODEL, K_META, K_DEFAULT };

typedef struct key_rule {
	uint32_t ops;      /* opcodes the row applies to (objects: 0) */
	const char *key;
	int cls;           /* K_MODEL, K_META, K_DEFAULT */
	const char *dflt;  /* K_DEFAULT: accepted values as compact JSON,
			      '|' between them; "" accepts only null */
	const char *why;   /* optional note for the message */
} key_rule;

/*
** Keys of instructions carried in `extra` (the loader parsed the others;
** see the checks below for parsed fields). Spellings and defaults are the
** BIR-JSON wire form's.
*/
static const key_rule inst_rules[] = {
	/* the common instruction header */
	{ OPS_EXEC, "origin", K_META, NULL, NULL },
	{ OPS_EXEC, "engine_id", K_META, NULL, NULL },
	{ OPS_EXEC, "scheduled_start", K_META, NULL, NULL },
	{ OPS_EXEC, "scheduled_end", K_META, NULL, NULL },
	{ OPS_EXEC, "optin_passes", K_META, NULL, NULL },
	{ OPS_EXEC, "debug", K_META, NULL, NULL },
	{ OPS_EXEC, "loopnest", K_META, NULL, NULL },
	{ OPS_EXEC, "dma_trigger_debug_update_semaphore_id", K_META, NULL,
	  NULL },
	{ OPS_EXEC, "_comment", K_META, NULL, NULL },
	{ OPS_EXEC, "sync_info", K_DEFAULT, "{}",
	  "its on_wait 'sem-ge-imm' and on_update 'sem-inc' by 1 entries on "
	  "a named semaphore are modelled" },
	{ OPS_EXEC, "unroll_dependencies", K_DEFAULT, "[]", NULL },
	{ OPS_EXEC, "indirection_ins", K_DEFAULT, "[]", NULL },
	{ OPS_EXEC, "predicates", K_DEFAULT, "[]", NULL },
	{ OPS_EXEC, "order", K_DEFAULT, "[]", NULL },
	/* DMA family */
	{ OPS_DMA, "dge_type", K_META, NULL, NULL },
	{ OPS_DMA, "dma_qos", K_META, NULL, NULL },
	{ OPS_DMA, "duplicate", K_DEFAULT, "false|0", NULL },
	{ OP(DMACOPY), "mode", K_DEFAULT, "\"Copy\"", NULL },
	{ OP(DMACOPY), "transpose_op", K_DEFAULT, "\"None\"", NULL },
	{ OP(DMACOPY), "constants", K_DEFAULT, "[]", NULL },
	{ OP(DMACOPY), "cce_op", K_DEFAULT, "\"bypass\"", NULL },
	{ OP(DMACOPY), "replica_groups", K_DEFAULT, "[]", NULL },
	{ OP(DMACOPY), "remote_notification", K_DEFAULT, "[]", NULL },
	{ OP(DMACOPY), "oob_is_err", K_META, NULL, NULL },
	{ OP(DMACOPY), "use_gpsimd_dma", K_META, NULL, NULL },
	/* Matmult */
	{ OP(MATMULT), "replication_resolution", K_DEFAULT, "0", NULL },
	{ OP(MATMULT), "replication_shift_amnt", K_DEFAULT, "0", NULL },
	{ OP(MATMULT), "replication_num_rows", K_DEFAULT, "0", NULL },
	{ OP(MATMULT), "is_fmap_onezero", K_DEFAULT, "false|0", NULL },
	{ OP(MATMULT), "is_weight_onezero", K_DEFAULT, "false|0", NULL },
	{ OP(MATMULT), "tile_size", K_META, NULL, NULL },
	{ OP(MATMULT), "tile_position", K_META, NULL, NULL },
	{ OP(MATMULT), "perf_mode", K_DEFAULT, "\"None\"", NULL },
	{ OP(MATMULT), "ifmap_quant_offset", K_DEFAULT, "0", NULL },
	{ OP(MATMULT), "weights_quant_offset", K_DEFAULT, "0", NULL },
	/* Activation */
	{ OP(ACTIVATION), "acc", K_DEFAULT, "\"Idle\"", NULL },
	{ OP(ACTIVATION), "is_activate2", K_DEFAULT, "false|0", NULL },
	{ OP(ACTIVATION), "op0", K_DEFAULT, "\"bypass\"", NULL },
	{ OP(ACTIVATION), "op1", K_DEFAULT, "\"bypass\"", NULL },
	{ OP(ACTIVATION), "reverse0", K_DEFAULT, "false|0", NULL },
	{ OP(ACTIVATION), "reverse1", K_DEFAULT, "false|0", NULL },
	{ OP(ACTIVATION), "reduce_op", K_DEFAULT, "\"bypass\"", NULL },
	/* TensorTensor */
	{ OP(TENSORTENSOR), "acc", K_DEFAULT, "\"Idle\"", NULL },
	/* SwitchQueueInstance */
	{ OP(SWITCHQUEUE), "no_rearm", K_DEFAULT, "false|0", NULL },
	/* CoreBarrier: the runtime's semaphore behind the barrier */
	{ OP(COREBARRIER), "runtime_semaphore", K_META, NULL, NULL },
	/* Call */
	{ OP(CALL), "table_id", K_DEFAULT, "", NULL },
	{ OP(CALL), "arguments", K_DEFAULT, "[]|{}", NULL },
	/* NKIKernel (IT55) */
	{ OP(NKIKERNEL), "kernel_source_val", K_META, NULL, NULL },
	{ OP(NKIKERNEL), "enable_device_dump", K_META, NULL, NULL },
	{ OP(NKIKERNEL), "nki_binary_version_identifier", K_META, NULL, NULL },
	{ OP(NKIKERNEL), "address_rotation_scope_val", K_DEFAULT,
	  "0|\"None\"", NULL },
};

/* Keys of physical_ap operands carried in `extra`. */
static const key_rule arg_rules[] = {
	{ 0, "access_shape", K_META, NULL, NULL },
	{ 0, "memref_owner_func", K_META, NULL, NULL },
	{ 0, "dynamic_ap_info", K_DEFAULT, "",
	  "indirect access patterns are not modelled" },
};

/* Keys of allocations carried in `extra`. */
static const key_rule alloc_rules[] = {
	{ 0, "partial_output", K_MODEL, NULL, NULL },
	{ 0, "tensor_class", K_META, NULL, NULL },
	{ 0, "partition_dim", K_META, NULL, NULL },
	{ 0, "origin", K_META, NULL, NULL },
	{ 0, "optin_passes", K_META, NULL, NULL },
	{ 0, "do_not_spill", K_META, NULL, NULL },
	{ 0, "do_not_rotate", K_META, NULL, NULL },
	{ 0, "virtual", K_META, NULL, NULL },
};

/* Keys of memory locations carried in `extra`. */
static const key_rule memloc_rules[] = {
	{ 0, "user_allocated", K_META, NULL, NULL },
	{ 0, "pinned", K_META, NULL, NULL },
	{ 0, "origin", K_META, NULL, NULL },
	{ 0, "optin_passes", K_META, NULL, NULL },
	{ 0, "kind", K_META, NULL, NULL },
	{ 0, "alloced_func", K_META, NULL, NULL },
	{ 0, "remote_writer_func", K_META, NULL, NULL },
	{ 0, "device_print_metadata", K_META, NULL, NULL },
	{ 0, "tensor_id", K_META, NULL, NULL },
	{ 0, "pack_id_hint", K_META, NULL, NULL },
	{ 0, "var_id", K_META, NULL, NULL },
	{ 0, "table_entry_id", K_META, NULL, NULL },
	{ 0, "memLocSetId", K_META, NULL, NULL },
	{ 0, "location_alt", K_META, NULL, NULL },
	{ 0, "written_by_another_core", K_META, NULL, NULL },
	{ 0, "is_shared_post_dram_alloc", K_META, NULL, NULL },
	{ 0, "runtime_reserved", K_META, NULL, NULL },
	{ 0, "alias", K_DEFAULT, "[]",
	  "use the allocation's alias_of or remote_local_target" },
	{ 0, "remote_local_target", K_DEFAULT, "",
	  "remote_local_target is read on the allocation" },
	{ 0, "pointer_ref_memloc", K_DEFAULT, "", NULL },
};

/* ---- parsed fields the simulator models only in part ------------------- */

/*
** A check returns 0 when the instruction's value is modelled; else it
** writes the value (JSON) to val and may point *why at a note.
*/
typedef int (*field_check)(const lm_inst *in, char *val, size_t n,
			   const char **why);

typedef struct field_rule {
	uint32_t ops;
	const char *key;
	field_check check;
} field_rule;

static int q(char *val, size_t n, const char *s)
{
	snprintf(val, n, "\"%s\"", s ? s : "");
	return 1;
}

static int chk_act_func(const lm_inst *in, char *val, size_t n,
			const char **why)
{
	(void)why;
	return ls_act_supported(in->act_func) ? 0
	       : q(val, n, lm_actfunc_name(in->act_func));
}

static int chk_alpha(const lm_inst *in, char *val, size_t n, const char **why)
{
	if (!in->has_alpha || in->alpha == 0.0 ||
	    in->act_func == LM_ACT_LRELU || in->act_func == LM_ACT_PRELU)
		return 0;
	snprintf(val, n, "%.9g", in->alpha);
	*why = "alpha is modelled for Lrelu and Prelu only";
	return 1;
}

static int alu_ok(lm_aluop op)
{
	float r;
	return ls_alu(op, 1.0f, 1.0f, &r);
}

static int chk_op(const lm_inst *in, char *val, size_t n, const char **why)
{
	(void)why;
	return alu_ok(in->alu) ? 0 : q(val, n, lm_aluop_name(in->alu));
}

static int chk_op0(const lm_inst *in, char *val, size_t n, const char **why)
{
	(void)why;
	return alu_ok(in->alu0) ? 0 : q(val, n, lm_aluop_name(in->alu0));
}

static int chk_op1(const lm_inst *in, char *val, size_t n, const char **why)
{
	(void)why;
	return alu_ok(in->alu1) ? 0 : q(val, n, lm_aluop_name(in->alu1));
}

static int chk_compare_op(const lm_inst *in, char *val, size_t n,
			  const char **why)
{
	switch (in->alu) {
	case LM_ALU_IS_EQUAL: case LM_ALU_NOT_EQUAL: case LM_ALU_IS_GE:
	case LM_ALU_IS_GT: case LM_ALU_IS_LE: case LM_ALU_IS_LT:
		return 0;
	default:
		*why = "compare_op must be a comparison";
		return q(val, n, lm_aluop_name(in->alu));
	}
}

static int chk_memset_mode(const lm_inst *in, char *val, size_t n,
			   const char **why)
{
	if (!in->memset_mode || strcmp(in->memset_mode, "Const") == 0)
		return 0;
	*why = "it models only \"Const\"";
	return q(val, n, in->memset_mode);
}

/* "kind 'tensor'" of a Call's first operand, for the message. */
static void call_operand(const lm_arg *a, int n, char *val, size_t vn)
{
	const char *kind = a->kind == LM_ARG_PHYSICAL_AP ? "physical_ap"
			   : a->kind == LM_ARG_IMM ? "imm_value" : NULL;
	if (!kind) {
		const cJSON *k = a->extra ? cJSON_GetObjectItemCaseSensitive(
			a->extra, "kind") : NULL;
		kind = cJSON_IsString(k) ? k->valuestring : "?";
	}
	snprintf(val, vn, "%d operand%s (%.32s%s%.32s%s%s)", n,
		 n == 1 ? "" : "s", kind, a->memsetref ? " '" : "",
		 a->memsetref ? a->memsetref : "", a->memsetref ? "'" : "",
		 n > 1 ? ", ..." : "");
}

/*
** A Call's own operands: the wire form binds a call's tensors through
** its 'arguments' map (refused unless empty, above), the linker's Calls
** have none, and what an operand on a Call would mean is not modelled.
*/
static const char *const call_operands_why =
	"a Call runs its target on the tensors the target names; operands "
	"on the call itself are not modelled";

static int chk_call_ins(const lm_inst *in, char *val, size_t n,
			const char **why)
{
	if (in->n_ins == 0)
		return 0;
	call_operand(&in->ins[0], in->n_ins, val, n);
	*why = call_operands_why;
	return 1;
}

static int chk_call_outs(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	if (in->n_outs == 0)
		return 0;
	call_operand(&in->outs[0], in->n_outs, val, n);
	*why = call_operands_why;
	return 1;
}

static int chk_acc_flag(const lm_inst *in, char *val, size_t n,
			const char **why)
{
	if (!in->acc_flag_rest)
		return 0;
	*why = "bit 0 (start) and bit 1 (stop) are modelled";
	snprintf(val, n, "%d", (in->start_tensor_calc ? 1 : 0) |
		 (in->stop_tensor_calc ? 2 : 0) | in->acc_flag_rest);
	return 1;
}

static int chk_psum_zero(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	if (!in->psum_zero_region)
		return 0;
	*why = "a start clears the region it writes; wider clears are not "
	       "modelled";
	snprintf(val, n, "%lld", (long long)in->psum_zero_region);
	return 1;
}

static int chk_lc_deps(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	if (!in->n_lc_deps)
		return 0;
	*why = "loops are not modelled";
	snprintf(val, n, "[[\"%.40s\", \"%s\"]%s]", in->lc_deps[0],
		 lm_edgekind_name(lm_inst_dep_kind(in, 1, 0)),
		 in->n_lc_deps > 1 ? ", ..." : "");
	return 1;
}

static const field_rule checks[] = {
	{ OP(MATMULT), "accumulation_flag", chk_acc_flag },
	{ OP(MATMULT), "psum_zero_region", chk_psum_zero },
	{ OPS_EXEC, "loop_carried_dependencies", chk_lc_deps },
	{ OP(ACTIVATION), "func", chk_act_func },
	{ OP(ACTIVATION), "alpha", chk_alpha },
	{ OP(TENSORTENSOR), "op", chk_op },
	{ OP(TENSORSCALAR), "op0", chk_op0 },
	{ OP(TENSORSCALAR), "op1", chk_op1 },
	{ OP(AFFINESELECT), "compare_op", chk_compare_op },
	{ OP(MEMSET), "mode", chk_memset_mode },
	{ OP(CALL), "ins", chk_call_ins },
	{ OP(CALL), "outs", chk_call_outs },
};

/* ---- the walk ----------------------------------------------------------- */

typedef struct cctx {
	const lm_module *m;
	lm_error *err;
	char where[600];
} cctx;

/* Compact JSON text of v (truncated) into buf. */
static void json_text(const cJSON *v, char *buf, size_t n)
{
	char *s = cJSON_PrintUnformatted(v);
	if (!s) {
		snprintf(buf, n, "?");
		return;
	}
	if (strlen(s) > 80)
		snprintf(buf, n, "%.77s...", s);
	else
		snprintf(buf, n, "%s", s);
	cJSON_free(s);
}

/* Is text one of the '|'-separated alternatives of list? */
static int in_list(const char *text, const char *list)
{
	size_t tl = strlen(text);
	while (*list) {
		const char *bar = strchr(list, '|');
		size_t l = bar ? (size_t)(bar - list) : strlen(list);
		if (l == tl && strncmp(text, list, l) == 0)
			return 1;
		if (!bar)
			break;
		list = bar + 1;
	}
	return 0;
}

static const key_rule *find_rule(const key_rule *rules, size_t n,
				 lm_opcode op, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if ((!rules[i].ops || (rules[i].ops & (1u << op))) &&
		    strcmp(rules[i].key, key) == 0)
			return &rules[i];
	return NULL;
}

/* "it models only X or Y" for a default list. */
static void models_only(const char *list, char *buf, size_t n)
{
	size_t k;
	if (!*list) {
		snprintf(buf, n, "it models only its absence (null)");
		return;
	}
	k = (size_t)snprintf(buf, n, "it models only ");
	for (const char *p = list; *p && k + 5 < n; p++) {
		if (*p == '|') {
			k += (size_t)snprintf(buf + k, n - k, " or ");
		} else {
			buf[k++] = *p;
			buf[k] = 0;
		}
	}
}

/*
** Check the extra keys of one object against rules. what names the
** object in the message ("opcode 'Activation'", "allocation", ...).
*/
static int check_extra(cctx *c, const cJSON *extra, const key_rule *rules,
		       size_t n, lm_opcode op, const char *what)
{
	if (!extra)
		return 0;
	for (const cJSON *k = extra->child; k; k = k->next) {
		const key_rule *r;
		char val[100], note[200];
		if (!k->string || cJSON_IsNull(k))
			continue; /* null: the key is absent */
		r = find_rule(rules, n, op, k->string);
		if (r && (r->cls == K_MODEL || r->cls == K_META))
			continue;
		json_text(k, val, sizeof val);
		if (r && in_list(val, r->dflt))
			continue;
		if (!r)
			snprintf(note, sizeof note, "not a key the simulator "
				 "knows here");
		else if (r->why)
			snprintf(note, sizeof note, "%s", r->why);
		else
			models_only(r->dflt, note, sizeof note);
		return lm_err(c->err, c->m->path, c->where, "%s key '%s' = %s "
			      "is not modelled by the simulator (%s)", what,
			      k->string, val, note);
	}
	return 0;
}

static void where_set(cctx *c, size_t at, const char *fmt, const char *name,
		      int idx)
{
	if (at >= sizeof c->where)
		return;
	if (name)
		snprintf(c->where + at, sizeof c->where - at, fmt, name);
	else {
		char num[24];
		snprintf(num, sizeof num, "#%d", idx);
		snprintf(c->where + at, sizeof c->where - at, fmt, num);
	}
}

static int check_inst(cctx *c, const lm_inst *in, char *what, size_t wn)
{
	size_t base = strlen(c->where);
	int rc;

	if (in->op <= LM_OP_INVALID || in->op >= LM_OP_COUNT ||
	    !(OPS_EXEC & (1u << in->op)))
		return 0; /* refused where it is reached */
	snprintf(what, wn, "opcode '%s'", lm_opcode_name(in->op));
	for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
		char val[100];
		const char *why = NULL;
		if (!(checks[i].ops & (1u << in->op)) ||
		    !checks[i].check(in, val, sizeof val, &why))
			continue;
		if (why)
			return lm_err(c->err, c->m->path, c->where, "%s key "
				      "'%s' = %s is not modelled by the "
				      "simulator (%s)", what, checks[i].key,
				      val, why);
		return lm_err(c->err, c->m->path, c->where, "%s key '%s' = %s "
			      "is not modelled by the simulator", what,
			      checks[i].key, val);
	}
	if ((rc = check_extra(c, in->extra, inst_rules,
			      sizeof inst_rules / sizeof *inst_rules, in->op,
			      what)) != 0)
		return rc;
	for (int k = 0; k < in->n_ins + in->n_outs; k++) {
		int is_out = k >= in->n_ins;
		int i = is_out ? k - in->n_ins : k;
		const lm_arg *a = is_out ? &in->outs[i] : &in->ins[i];
		char w2[160];
		if (a->kind != LM_ARG_PHYSICAL_AP)
			continue; /* opaque kinds are refused when reached */
		snprintf(c->where + base, sizeof c->where - base,
			 "/operand %s[%d]", is_out ? "outs" : "ins", i);
		snprintf(w2, sizeof w2, "opcode '%s' operand",
			 lm_opcode_name(in->op));
		rc = check_extra(c, a->extra, arg_rules,
				 sizeof arg_rules / sizeof *arg_rules,
				 in->op, w2);
		c->where[base] = 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int check_alloc(cctx *c, const lm_alloc *a)
{
	size_t base = strlen(c->where);
	const cJSON *po = a->extra ? cJSON_GetObjectItemCaseSensitive(
		a->extra, "partial_output") : NULL;
	int rc;

	if (po && !cJSON_IsNull(po) && !cJSON_IsBool(po))
		return lm_err(c->err, c->m->path, c->where, "allocation key "
			      "'partial_output' must be true or false");
	if (po && cJSON_IsTrue(po) && !lm_tensorkind_is_ext_output(a->kind))
		return lm_err(c->err, c->m->path, c->where, "allocation key "
			      "'partial_output' = true is only meaningful on "
			      "an ExternalOutput (this is %s)",
			      lm_tensorkind_name(a->kind));
	if ((rc = check_extra(c, a->extra, alloc_rules,
			      sizeof alloc_rules / sizeof *alloc_rules,
			      LM_OP_INVALID, "allocation")) != 0)
		return rc;
	for (int l = 0; l < a->n_memlocs; l++) {
		where_set(c, base, "/memory location %s", a->memlocs[l].name, l);
		rc = check_extra(c, a->memlocs[l].extra, memloc_rules,
				 sizeof memloc_rules / sizeof *memloc_rules,
				 LM_OP_INVALID, "memory location");
		c->where[base] = 0;
		if (rc)
			return rc;
	}
	return 0;
}

int ls_check_module(const lm_module *m, lm_error *err)
{
	cctx c;
	char what[80];
	int rc = 0;

	memset(&c, 0, sizeof c);
	c.m = m;
	c.err = err;
	for (int f = 0; f < m->n_functions && !rc; f++) {
		const lm_function *fn = &m->functions[f];
		size_t fl;
		where_set(&c, 0, "function %s", fn->name, f);
		fl = strlen(c.where);
		for (int a = 0; a < fn->n_allocs && !rc; a++) {
			where_set(&c, fl, "/allocation %s", fn->allocs[a].name,
				  a);
			rc = check_alloc(&c, &fn->allocs[a]);
		}
		for (int b = 0; b < fn->n_blocks && !rc; b++) {
			const lm_block *bl = &fn->blocks[b];
			size_t bln;
			where_set(&c, fl, "/block %s", bl->name, b);
			bln = strlen(c.where);
			for (int i = 0; i < bl->n_insts && !rc; i++) {
				where_set(&c, bln, "/instruction %s",
					  bl->insts[i].name, i);
				rc = check_inst(&c, &bl->insts[i], what,
						sizeof what);
			}
		}
	}
	return rc;
}

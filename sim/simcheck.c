/*
** simcheck.c -- what the simulator models, and the refusal before time 0
** of everything else: the opcodes it executes (OPS_EXEC; any other of the
** 110 is refused by name), then the keys the module and each queue carry,
** and for each executed instruction its keys, the keys of its operands,
** of its block, of every allocation and of every memory location. A key
** is
**   modelled  the simulator reads it (any value);
**   metadata  debug / bookkeeping / placement hints that cannot change
**             the bits of a result (any value);
**   default   allowed only at its documented default (or null / absent);
**             any other value is refused;
** and a key in no row is refused.
**
** The loader keeps every instruction key it does not interpret in
** `extra`. A documented op key (model/fields.def, found through the
** instruction's InstructionType) is there only when its value is not the
** default -- the loader drops it at its default -- so it is refused unless
** inst_meta lists it; the defaults in the messages are the table's. The
** keys fields.def does not describe (the common header, lncsim's own)
** have rows in inst_rules. Parsed fields whose value the simulator models
** only in part are checked by the functions of the `checks` table.
** docs/simulator.md has all of it in prose; its table of documented keys
** is ls_format_key_table's output.
*/
#include "common.h"
#include "sim_int.h"
#include "simcheck.h"
#include "optable.h"
#include "enumtab.h"

#include <cjson/cJSON.h>
#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Opcode sets as bit masks. */
#define OP(x) LM_OPM(x)
#define OPS_DMA (OP(DMACOPY) | OP(LOAD) | OP(SAVE))
/* The predicated moves, the top-8 search, the batch-norm statistics
** (sim/select.c). */
#define OPS_SELECT (OP(SELECT) | OP(COPYPRED) | OP(MAX8) | OP(MAXINDEX) | \
		    OP(MATCHREPLACE) | OP(MIMR) | OP(BNSTATS) | OP(BNAGGR) | \
		    OP(RANGESELECT))
/* The instructions of the accumulator registers (sim/engacc.c). */
#define OPS_ACC (OP(EXPONENTIAL) | OP(ACTREADACC) | OP(READACTACC) | \
		 OP(DVEREADACC))
/* StreamShuffle (sim/shuffle.c). */
#define OPS_SHUF OP(STREAMSHUFFLE)
#define OPS_EXEC (OPS_DMA | OP(MATMULT) | OP(ACTIVATION) | OP(TENSORTENSOR) | \
		  OP(TENSORSCALAR) | OP(TENSORCOPY) | OP(MEMSET) | OP(IOTA) | \
		  OP(AFFINESELECT) | OP(NOOP) | OP(COREBARRIER) | OP(CALL) | \
		  OP(RETURN) | OP(SWITCHQUEUE) | OP(NKIKERNEL) | OP(LOOP) | \
		  OP(BREAK) | OP(TENSORREDUCE) | OP(TSPTR) | OP(RECIPROCAL) | \
		  OP(STREAMTRANSPOSE) | OP(REGMOVE) | OP(REGALU) | \
		  OP(DYNLOOP) | OP(DOWHILE) | OP(EVENTSEM) | OP(GROUPRESET) | \
		  OP(AEBARRIER) | OP(DRAIN) | OP(EXIT) | OP(DMATRIGGER) | \
		  OP(DMABLOCK) | OPS_DESC | OP(RESETQUEUE) | \
		  OPS_BRANCH | OP(BRANCHHINT) | OP(TCOMPLETION) | OP(HALT) | \
		  OPS_TLS | OPS_TCDYN | OPS_SELECT | OPS_ACC | \
		  OPS_SHUF | OPS_INDIRECT)
/* The indirect moves (an index operand in indirection_ins). */
#define OPS_INDIRECT (OP(INDIRECTLOAD) | OP(GATHER) | OP(INDIRECTCOPY))
/* The descriptors it executes (in a DMABlock's body only). */
#define OPS_DESC (OP(DESC_COPY) | OP(DESC_CCE) | OP(DESC_TRANSPOSE) | \
		  OP(DESC_REPLICATE))
/* TensorCopy with a dynamic source or destination. */
#define OPS_TCDYN (OP(TCDYNSRC) | OP(TCDYNDST))
/* Register loads and stores. */
#define OPS_TLS (OP(TENSORLOAD) | OP(TENSORSAVE))
/* Branches (to a block of the function). */
#define OPS_BRANCH (OP(CMPBRANCH) | OP(UBRANCH))
/* Opcodes on engine ALL that run one copy per engine. */
#define OPS_ALL_COPIES (OP(REGMOVE) | OP(REGALU) | OPS_BRANCH | \
			OP(BRANCHHINT) | OP(TCOMPLETION) | OP(HALT) | \
			OP(TENSORLOAD) | OP(NOOP) | OP(EVENTSEM) | \
			OP(GROUPRESET) | OP(DRAIN))
/* Opcodes that head a structured loop. */
#define OPS_LOOP (OP(LOOP) | OP(DYNLOOP) | OP(DOWHILE))
/* Opcodes refused inside a Loop's body. */
#define OPS_NOT_IN_LOOP (OP(CALL) | OP(NKIKERNEL) | OP(SWITCHQUEUE) | \
			 OP(RETURN) | OP(RESETQUEUE) | OP(DMABLOCK) | OPS_BRANCH)

enum { K_MODEL, K_META, K_DEFAULT };

typedef struct key_rule {
	lm_opmask ops;     /* opcodes the row applies to (objects: 0) */
	const char *key;
	int cls;           /* K_MODEL, K_META, K_DEFAULT */
	const char *dflt;  /* K_DEFAULT: accepted values as compact JSON,
			      '|' between them; "" accepts only null */
	const char *why;   /* optional note for the message */
} key_rule;

/*
** Keys of instructions carried in `extra` that fields.def does not
** describe: the common header and keys of other opcodes that reach an
** executed one. Spellings and defaults are the BIR-JSON wire form's.
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
	{ OPS_EXEC, "unroll_dependencies", K_DEFAULT, "[]", NULL },
	{ OPS_INDIRECT, "indirection_ins", K_MODEL, NULL, NULL },
	{ OPS_EXEC, "indirection_ins", K_DEFAULT, "[]", NULL },
	{ OPS_EXEC, "predicates", K_DEFAULT, "[]", NULL },
	{ OPS_EXEC, "order", K_DEFAULT, "[]", NULL },
	/* NKIKernel (IT55): keys of the IT56 carrier that `lncsim lower`
	   copies onto the call it makes */
	{ OP(NKIKERNEL), "enable_device_dump", K_META, NULL, NULL },
	{ OP(NKIKERNEL), "nki_binary_version_identifier", K_META, NULL, NULL },
	/* Call: the core a linked dispatcher's instance Call runs on */
	{ OP(CALL), "neuron_core_id", K_MODEL, NULL, NULL },
	/* a register load or store runs on its engine, not on a queue */
	{ OPS_TLS, "queue", K_META, NULL, NULL },
};

/* A documented op key (fields.def) of an executed opcode: metadata, or
** read by the simulator. why: what it is, for docs/simulator.md. */
typedef struct op_key {
	lm_opmask ops;
	const char *key;
	const char *why;
} op_key;

/* Documented op keys that cannot change the bits of a result. */
static const op_key inst_meta[] = {
	{ OPS_DMA | OP(DMATRIGGER) | OP(INDIRECTLOAD), "dge_type", "how and how urgently the "
	  "transfer is made, not what it moves" },
	{ OPS_DMA, "dma_qos", "how and how urgently the transfer is made, "
	  "not what it moves" },
	{ OP(DMACOPY), "use_gpsimd_dma", "which engine drives the transfer" },
	{ OP(DMACOPY), "oob_is_err", "the verifier rules out-of-bounds "
	  "access out, so it never matters" },
	{ OP(MATMULT), "tile_size", "where in the PE array the matmul is "
	  "placed" },
	{ OP(MATMULT), "tile_position", "where in the PE array the matmul is "
	  "placed" },
	{ OP(COREBARRIER), "runtime_semaphore", "the runtime's semaphore "
	  "behind the barrier" },
	{ OP(NKIKERNEL), "kernel_source_val", "which frontend wrote the "
	  "kernel" },
	{ OP(LOOP), "unroll", "an unrolling hint: the loop runs as written" },
	{ OP(LOOP), "isBasicBlock", "how the compiler lowers the body" },
	{ OP(GROUPRESET), "mode", "how the hardware encodes the reset (a "
	  "range or a mask of ids): each id of sema_group is set to 0 "
	  "either way" },
	{ OP(DMABLOCK), "block_id", "the block's number in its queue" },
	{ OP(DMABLOCK), "section_start", "a hint of the descriptor ring's "
	  "layout" },
	{ OP(DMABLOCK), "priority_class", "how urgently the block is served, "
	  "not what it moves" },
	{ OP(DMABLOCK), "dma_trigger", "the trigger that fires it, which the "
	  "verifier checks" },
	{ OPS_DESC, "num_tiling_dimensions", "how the descriptor's pattern is "
	  "encoded, not what it moves" },
	{ OP(RESETQUEUE), "instance", "blocks belong to a queue here, not to "
	  "an instance: every trigger of the queue is rewound" },
	{ OP(BRANCHHINT), "hint", "a prediction: the branch goes where it "
	  "compares" },
	{ OP(BRANCHHINT), "associate_branch", "a prediction: the branch goes "
	  "where it compares" },
	{ OP(TCOMPLETION), "mode", "a debug read-back mode: no data effect" },
};

/* Documented op keys whose every form the `checks` row judges (the form
** the loader does not read is carried in `extra`, and refused there by
** the row, not again as a carried key). */
static const op_key inst_checked_whole[] = {
	{ OP(DOWHILE), "cond", NULL },
	{ OP(CALL), "arguments", NULL },
	{ OP(SWITCHQUEUE), "no_rearm", NULL },
	{ OP(DESC_CCE), "op", NULL },
	{ OP(STREAMSHUFFLE), "mask", NULL },
	{ OP(DMACOPY), "mode", NULL },
	{ OP(DMACOPY) | OP(DESC_TRANSPOSE), "transpose_op", NULL },
	{ OP(DMACOPY), "cce_op", NULL },
	{ OP(DMACOPY) | OP(DESC_CCE), "constants", NULL },
	{ OP(INDIRECTCOPY), "num_valid_indices", NULL },
};

/* Documented op keys the simulator evaluates at each issue when given as
** an affine expression (of the induction values around the instruction
** and the shard id). */
static const op_key inst_affine[] = {
	{ OP(MATMULT), "accumulation_flag", NULL },
	{ OP(MATMULT), "psum_zero_region", NULL },
	{ OPS_DMA | OP(TENSORCOPY) | OP(ACTIVATION) | OPS_TCDYN,
	  "can_read_uninit", NULL },
};

/*
** Documented op keys the loader reads into lm_inst and the simulator
** models (the parsed ones the simulator models only in part are the
** `checks` below). Such a key reaches `extra` only in a form the loader
** does not read (an affine expression) and is refused there.
*/
static const op_key inst_model[] = {
	{ OPS_DMA | OP(DMATRIGGER) | OP(INDIRECTLOAD), "queue", NULL },
	{ OP(DMATRIGGER), "dma_blocks", "each issue fires the next block, "
	  "round robin" },
	{ OP(RESETQUEUE), "queue", NULL },
	{ OPS_DMA | OP(TENSORCOPY) | OP(ACTIVATION) | OP(DESC_COPY) | OPS_TCDYN |
	  OP(COPYPRED) | OP(DESC_TRANSPOSE),
	  "can_read_uninit", NULL },
	{ OP(MATMULT), "is_transpose", NULL },
	{ OP(MATMULT), "is_weight_onezero", "a promise that the stationary "
	  "holds only 0 and 1, checked when the matmul runs" },
	{ OP(MATMULT), "is_fmap_onezero", "a promise that the moving data "
	  "holds only 0 and 1, checked when the matmul runs" },
	{ OP(ACTIVATION), "scale", NULL },
	{ OP(TENSORSCALAR), "const0", NULL },
	{ OP(TENSORSCALAR), "const1", NULL },
	{ OP(TENSORSCALAR) | OP(TSPTR), "reverse0", NULL },
	{ OP(TENSORSCALAR) | OP(TSPTR), "reverse1", NULL },
	{ OP(TSPTR), "is_scalar_tensor_tensor", NULL },
	{ OP(MEMSET), "constant", NULL },
	{ OP(IOTA) | OP(AFFINESELECT), "base", NULL },
	{ OP(IOTA) | OP(AFFINESELECT), "channel_multiplier", NULL },
	{ OP(IOTA) | OP(AFFINESELECT), "pattern", NULL },
	{ OP(AFFINESELECT), "fill_value", NULL },
	{ OP(TENSORREDUCE), "negate", NULL },
	{ OP(COPYPRED), "reverse_pred", NULL },
	{ OP(MATCHREPLACE) | OP(MIMR), "imm_value", NULL },
	{ OP(RANGESELECT), "fill_value", NULL },
	{ OP(COREBARRIER), "id", NULL },
	{ OP(COREBARRIER), "cores", NULL },
	{ OP(CALL), "target", NULL },
	{ OP(SWITCHQUEUE), "queue", NULL },
	{ OP(GROUPRESET), "sema_group", "each id, a slot of the executing "
	  "core's bank, is set to 0" },
	{ OP(REGALU), "is_64bit", "true: the Hi/Lo pair form, 64 bits in two "
	  "registers each of a, b and the result" },
	{ OP(CMPBRANCH), "on_true", "the block the engine goes to when the "
	  "compare holds" },
	{ OP(CMPBRANCH), "on_false", "the block it goes to otherwise" },
	{ OP(UBRANCH), "target", "the block the engine goes to" },
	{ OP(LOOP), "registers", "each engine of the loop writes the "
	  "induction value into them at every iteration's start" },
	{ OP(NKIKERNEL), "func", NULL },
	{ OP(NKIKERNEL), "func_args", NULL },
	{ OP(NKIKERNEL), "func_outs", NULL },
	{ OP(NKIKERNEL), "sb_buf_shape", "the kernel runs on its own "
	  "declared allocations: the budget has no effect" },
	{ OP(NKIKERNEL), "psum_buf_shape", "the kernel runs on its own "
	  "declared allocations: the budget has no effect" },
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

/* Keys of the module carried in `extra`. */
static const key_rule module_rules[] = {
	{ 0, "archRev", K_META, NULL, NULL },
	{ 0, "revision", K_META, NULL, NULL },
	{ 0, "artifact_path", K_META, NULL, NULL },
	{ 0, "artifact_info", K_META, NULL, NULL },
	{ 0, "_comment", K_META, NULL, NULL },
	{ 0, "call_to_physical_memlocs", K_DEFAULT, "[]|{}",
	  "binding a call's arguments to memory locations is not modelled" },
	{ 0, "nki_functions", K_DEFAULT, "[]",
	  "the module's NKI functions are not modelled" },
};

/* Keys of queues carried in `extra`. */
static const key_rule queue_rules[] = {
	{ 0, "blocks", K_DEFAULT, "[]",
	  "a queue's own blocks (its DMA blocks) are not modelled" },
	{ 0, "basic_blocks", K_DEFAULT, "[]",
	  "a queue's own blocks (its DMA blocks) are not modelled" },
};

/* Keys of functions, semaphores and queue instances carried in `extra`:
** none is modelled (a function's second spelling of its allocations or
** blocks among them). */
static const key_rule function_rules[] = {
	{ 0, "_comment", K_META, NULL, NULL },
};
static const key_rule semaphore_rules[] = {
	{ 0, "_comment", K_META, NULL, NULL },
};
static const key_rule qinstance_rules[] = {
	{ 0, "_comment", K_META, NULL, NULL },
};

/* Keys of blocks carried in `extra` (block arguments are read into
** lm_block and judged by check_args). */
static const key_rule block_rules[] = {
	{ 0, "origin", K_META, NULL, NULL },
	{ 0, "optin_passes", K_META, NULL, NULL },
	{ 0, "_comment", K_META, NULL, NULL },
};

/*
** Opcodes of the 110 the simulator does not execute that say why in the
** refusal; every other is refused with no note.
*/
static const struct {
	lm_opcode op;
	const char *why;
} op_notes[] = {
	{ LM_OP_NKIKLIRKERNEL, "IT56 kernel carriers must be lowered before "
	  "a run: lncsim lower" },
	{ LM_OP_BIRKERNEL, "BIRKernel (IT54) carriers are not executed or "
	  "lowered by lncsim" },
	{ LM_OP_TSCACHE, "its recurrence is not modelled: the references "
	  "disagree on what op0 reads and on the initial value each acc "
	  "gives" },
};

/* ---- parsed fields the simulator models only in part ------------------- */

/*
** A check returns 0 when the instruction's value is modelled; else it
** writes the value (JSON) to val and may point *why at a note.
*/
typedef int (*field_check)(const lm_inst *in, char *val, size_t n,
			   const char **why);

typedef struct field_rule {
	lm_opmask ops;
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

/* An accumulator command: all but LoadAccumulate. */
static int acc_cmd_ok(int cmd, char *val, size_t n, const char **why)
{
	const char *name;
	if (cmd >= LS_ACC_IDLE && cmd <= LS_ACC_ADDACC)
		return 0;
	name = lm_enum_name(LM_ET_EngineAccumulationType, cmd);
	*why = "Idle, Zero, Accumulate, ZeroAccumulate and AddAccumulate are "
	       "modelled; what LoadAccumulate loads is not documented";
	if (name)
		return q(val, n, name);
	snprintf(val, n, "%d", cmd);
	return 1;
}

static int chk_eng_acc(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	if (in->op == LM_OP_ACTIVATION && in->eng_acc != LS_ACC_IDLE &&
	    in->engine != LM_ENG_ACT && in->engine != LM_ENG_UNASSIGNED) {
		*why = "Activation's accumulator is the Activation engine's; on "
		       "another engine it is not modelled";
		return q(val, n, lm_enum_name(LM_ET_EngineAccumulationType,
					      in->eng_acc));
	}
	return acc_cmd_ok(in->eng_acc, val, n, why);
}

/* Activation's reduce_op: add sums the rows into the registers; bypass
** (the default) only where nothing is summed (acc Idle or Zero). */
static int chk_act_reduce_op(const lm_inst *in, char *val, size_t n,
			     const char **why)
{
	int sums = in->eng_acc == LS_ACC_ACCUMULATE ||
		   in->eng_acc == LS_ACC_ZEROACC ||
		   in->eng_acc == LS_ACC_ADDACC;
	if (in->reduce_alu == LM_ALU_ADD)
		return 0;
	if ((in->reduce_alu == LM_ALU_INVALID ||
	     in->reduce_alu == LM_ALU_BYPASS) && !sums)
		return 0;
	*why = sums ? "an accumulating acc sums with reduce_op add (the "
	       "registers only add)" : "the accumulator registers only add "
	       "(reduce_op add or bypass)";
	return q(val, n, in->reduce_alu == LM_ALU_INVALID ? "bypass"
		 : lm_aluop_name(in->reduce_alu));
}

/* StreamShuffle's mask: 32 entries, each 0..31 or 255 (leave). */
static int chk_shuffle_mask(const lm_inst *in, char *val, size_t n,
			    const char **why)
{
	int mask[32], k = ls_shuffle_mask(in, mask);
	const cJSON *a;
	char *s;
	if (k == 32)
		return 0;
	a = in->extra ? cJSON_GetObjectItemCaseSensitive(in->extra, "mask")
		      : NULL;
	if (k >= 0)
		a = cJSON_GetArrayItem(a, k);
	s = a ? cJSON_PrintUnformatted(a) : NULL;
	snprintf(val, n, "%s", s ? s : "null");
	free(s);
	*why = k >= 0 ? "each mask entry is a partition 0..31 of the block, "
	       "or 255 (the partition is left as it is)" : "the mask is an "
	       "array of 32 entries";
	return 1;
}

/* Computed on float data or on integer data; refused at run time on the
** data it does not take. */
static int alu_ok(lm_aluop op)
{
	float r;
	return ls_alu(op, 1.0f, 1.0f, &r) || ls_int_alu_class(op);
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

/* RangeSelect's compare_op0 / compare_op1: a comparison (absent: the
** default bypass, refused). */
static int range_cmp(lm_aluop op, char *val, size_t n, const char **why)
{
	switch (op) {
	case LM_ALU_IS_EQUAL: case LM_ALU_NOT_EQUAL: case LM_ALU_IS_GE:
	case LM_ALU_IS_GT: case LM_ALU_IS_LE: case LM_ALU_IS_LT:
		return 0;
	default:
		*why = "RangeSelect compares with is_equal, not_equal, is_ge, "
		       "is_gt, is_le and is_lt";
		return q(val, n, op == LM_ALU_INVALID ? "bypass"
				 : lm_aluop_name(op));
	}
}

static int chk_range_cmp0(const lm_inst *in, char *val, size_t n,
			  const char **why)
{
	return range_cmp(in->alu0, val, n, why);
}

static int chk_range_cmp1(const lm_inst *in, char *val, size_t n,
			  const char **why)
{
	return range_cmp(in->alu1, val, n, why);
}

static int chk_reduce_op(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	if (ls_reduce_supported(in->alu))
		return 0;
	*why = "TensorReduce folds with add, subtract, mult, max, min and "
	       "average";
	return q(val, n, lm_aluop_name(in->alu));
}

static int chk_reduce_axis(const lm_inst *in, char *val, size_t n,
			   const char **why)
{
	if (in->reduce_axis >= 0 && in->reduce_axis <= 2)
		return 0;
	*why = "the free-axis lists X, XY and XYZ are modelled; a reduction "
	       "across partitions is not";
	return q(val, n, lm_enum_name(LM_ET_AxisListType, in->reduce_axis));
}

static int chk_apply_transpose(const lm_inst *in, char *val, size_t n,
			       const char **why)
{
	if (!in->apply_transpose)
		return 0;
	*why = "the partition transpose before the reduction is not modelled";
	snprintf(val, n, "true");
	return 1;
}

static int chk_tts_alone(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	if (!in->is_tensor_tensor_scan || !in->is_scalar_tensor_tensor)
		return 0;
	*why = "it is modelled alone; with is_scalar_tensor_tensor also true "
	       "the datapath is not defined";
	snprintf(val, n, "true");
	return 1;
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

/* A Call's argument map: bound only on a linked dispatcher's instance
** Call, the one that names its core (neuron_core_id). */
static int chk_call_args(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	const cJSON *a = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "arguments") : NULL;
	if (!a || cJSON_IsNull(a) || (!a->child && (cJSON_IsObject(a) ||
						   cJSON_IsArray(a))))
		return 0;
	if (cJSON_IsObject(a) &&
	    cJSON_GetObjectItemCaseSensitive(in->extra, "neuron_core_id"))
		return 0;
	snprintf(val, n, "%s", cJSON_IsObject(a) ? "{...}" : "[...]");
	*why = "a Call binds arguments only as the instance Call of a linked "
	       "dispatcher, which names its core in neuron_core_id";
	return 1;
}

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

static int chk_engine(const lm_inst *in, char *val, size_t n,
		      const char **why)
{
	if (in->op == LM_OP_EXIT) {
		if (in->engine == LM_ENG_ALL || in->engine == LM_ENG_UNASSIGNED)
			return 0;
		*why = "Exit ends the core's launch for every engine: it is a "
		       "join on ALL; on one engine it is not modelled";
		return q(val, n, lm_engine_name(in->engine));
	}
	if (in->engine != LM_ENG_ALL || in->op == LM_OP_AEBARRIER ||
	    (OPS_LOOP & ((lm_opmask)1 << in->op)) || in->op == LM_OP_BREAK)
		return 0;
	if (OPS_ALL_COPIES & ((lm_opmask)1 << in->op)) {
		/* one copy per engine: each would wait and update */
		if (!in->n_wait && !in->n_update &&
		    !(in->sync_extra && in->sync_extra->child))
			return 0;
		*why = "an instruction on engine ALL runs once per engine (a "
		       "join only for AllEngineBarrier and Exit); its "
		       "synchronization would happen once per copy and is not "
		       "modelled";
		return q(val, n, "ALL");
	}
	*why = "an instruction runs on one engine; broadcast to every "
	       "engine is not modelled";
	return q(val, n, "ALL");
}

/* A RegisterAlu op: the ones regs.c computes. */
static int chk_reg_alu_op(const lm_inst *in, char *val, size_t n,
			  const char **why)
{
	const char *name;
	if (ls_reg_op_modelled(ls_reg_aluop(in->reg_alu)))
		return 0;
	name = lm_enum_name(LM_ET_AluOpType, in->reg_alu);
	*why = "RegisterAlu computes bypass, add, subtract, mult, divide, "
	       "mod, the shifts, the bitwise ops, max, min and the is_* "
	       "compares";
	if (name)
		return q(val, n, name);
	snprintf(val, n, "%d", in->reg_alu);
	return 1;
}



/* One operand of a register instruction: a register_access of an int32 /
** uint32 register, or (a source) an integer imm_value. NULL, or why. */
static const char *reg_operand_why(const lm_arg *a, int is_dst)
{
	const cJSON *k = a->extra ? cJSON_GetObjectItemCaseSensitive(
		a->extra, "kind") : NULL;
	if (a->kind == LM_ARG_IMM && !is_dst) {
		/* the immediate's dtype sets its stored bits (a float's
		   pattern, a byte's truncation) */
		if (a->dtype != LM_DT_INT32 && a->dtype != LM_DT_UINT32)
			return "an immediate is modelled as an int32 or uint32 "
			       "imm_value";
		return (a->imm >= -2147483648.0 && a->imm < 4294967296.0 &&
			a->imm == (double)(int64_t)a->imm) ? NULL
		       : "an immediate must be a 32-bit integer";
	}
	if (a->kind != LM_ARG_OPAQUE || !cJSON_IsString(k) ||
	    strcmp(k->valuestring, "register_access"))
		return is_dst ? "the destination must be a register_access"
		       : "a source must be a register_access or an imm_value";
	if (a->dtype != LM_DT_INT32 && a->dtype != LM_DT_UINT32)
		return "registers are read and written as int32 or uint32";
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(a->extra,
							     "regref")))
		return "a register_access names its register in regref";
	return NULL;
}

static int chk_reg_operands(const lm_inst *in, int outs, char *val,
			    size_t n, const char **why)
{
	int want = in->op == LM_OP_REGALU ? 2 : 1;
	int cnt = outs ? in->n_outs : in->n_ins;
	if (in->op == LM_OP_REGALU && in->is_64bit) {
		/* ins [a.lo, a.hi, b.lo, b.hi] or [a.lo, a.hi, imm] */
		int ok = outs ? cnt == 2 : cnt == 3 || cnt == 4;
		for (int k = 0; ok && k < cnt; k++) {
			const lm_arg *a = outs ? &in->outs[k] : &in->ins[k];
			const char *w = k == 2 && cnt == 3 ? NULL
					: reg_operand_why(a, 1);
			if (k == 2 && cnt == 3 && a->kind != LM_ARG_IMM)
				w = "ins[2] of three is a 64-bit imm_value";
			if (!w)
				continue;
			call_operand(a, 1, val, n);
			*why = w;
			return 1;
		}
		if (ok)
			return 0;
		snprintf(val, n, "%d operand%s", cnt, cnt == 1 ? "" : "s");
		*why = "RegisterAlu is_64bit takes ins [a.lo, a.hi, b.lo, b.hi] "
		       "or [a.lo, a.hi, imm] and outs [lo, hi]";
		return 1;
	}
	if (cnt != (outs ? 1 : want)) {
		snprintf(val, n, "%d operand%s", cnt, cnt == 1 ? "" : "s");
		*why = in->op == LM_OP_REGALU ? "RegisterAlu takes ins [a, b] "
		       "and outs [dst]" : "RegisterMove takes ins [src] and "
		       "outs [dst]";
		return 1;
	}
	for (int k = 0; k < cnt; k++) {
		const lm_arg *a = outs ? &in->outs[k] : &in->ins[k];
		const char *w = reg_operand_why(a, outs);
		if (!w)
			continue;
		call_operand(a, 1, val, n);
		*why = w;
		return 1;
	}
	return 0;
}

static int chk_reg_ins(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	return chk_reg_operands(in, 0, val, n, why);
}

static int chk_reg_outs(const lm_inst *in, char *val, size_t n,
			const char **why)
{
	return chk_reg_operands(in, 1, val, n, why);
}

/* The JSON of sync entry e (upd: an on_update), compact, into val. */
static void sync_text(const lm_sync *e, int upd, char *val, size_t n)
{
	cJSON *j = cJSON_CreateObject();
	const char *mode = lm_enum_name(upd ? LM_ET_UpdateMode : LM_ET_WaitMode,
					e->mode);
	char *t;
	if (e->semaphore)
		cJSON_AddStringToObject(j, "semaphore", e->semaphore);
	else
		cJSON_AddNumberToObject(j, "id", (double)e->id);
	cJSON_AddStringToObject(j, "mode", mode ? mode : "?");
	if (e->has_value)
		cJSON_AddNumberToObject(j, "value", (double)e->value);
	if (e->regref)
		cJSON_AddStringToObject(j, "regref", e->regref);
	if (e->has_core)
		cJSON_AddNumberToObject(j, "core", (double)e->core);
	if (e->extra)
		cJSON_AddItemToObject(j, "...", cJSON_CreateTrue());
	t = cJSON_PrintUnformatted(j);
	snprintf(val, n, "{\"%s\":[%.60s]}", upd ? "on_update" : "on_wait",
		 t ? t : "?");
	cJSON_free(t);
	cJSON_Delete(j);
}

/* Is sync entry e one the simulator runs: every wait and update mode
** but invalid, with the value its mode needs, no key of its own beyond
** the documented ones (a wait's `from`, provenance, aside)? The
** verifier judges names, ids, registers and cores. */
static int sync_modelled(const lm_sync *e, int upd)
{
	if (e->extra)
		return 0;
	if (upd)
		switch (e->mode) {
		case LM_UPD_EVT_SET:
			return 1;
		case LM_UPD_SEM_ADD_IMM: case LM_UPD_SEM_SUB_IMM:
		case LM_UPD_SEM_WR_IMM:
			return e->has_value;
		case LM_UPD_SEM_INC: case LM_UPD_SEM_DEC:
			return !e->has_value || e->value == 1;
		default:
			return 0;
		}
	switch (e->mode) {
	case LM_WAIT_EVT_SET_THEN_CLEAR: case LM_WAIT_SEM_GE_REG:
		return 1;
	case LM_WAIT_SEM_GE_IMM:
		return e->has_value;
	default:
		return 0;
	}
}

static int chk_sync(const lm_inst *in, char *val, size_t n,
		    const char **why)
{
	*why = "the simulator runs every on_wait mode (a sem-ge-imm with its "
	       "value) and every on_update mode (add, sub and wr with their "
	       "value, inc and dec by 1) but 'invalid'; keys of an entry "
	       "beyond id / semaphore, mode, value, regref, from and core "
	       "are not modelled";
	for (int k = 0; k < 2; k++) {
		const lm_sync *v = k ? in->update : in->wait;
		int cnt = k ? in->n_update : in->n_wait;
		for (int i = 0; i < cnt; i++)
			if (!sync_modelled(&v[i], k)) {
				sync_text(&v[i], k, val, n);
				return 1;
			}
	}
	if (in->sync_extra && in->sync_extra->child) {
		const cJSON *x = in->sync_extra->child;
		char *t = cJSON_PrintUnformatted(x);
		snprintf(val, n, "{\"%.40s\":%.50s}", x->string ? x->string : "",
			 t ? t : "?");
		cJSON_free(t);
		*why = "only its on_wait and on_update lists are modelled";
		return 1;
	}
	return 0;
}

/* Loop and Break: no synchronization of their own (the engines' cursors
** pass them in zero time; nothing would wait or post). */
static int chk_no_sync(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	if (!in->n_wait && !in->n_update &&
	    !(in->sync_extra && in->sync_extra->child))
		return 0;
	*why = "a loop or Break carries no synchronization here: put the "
	       "wait or the update on an instruction";
	if (in->n_wait)
		sync_text(&in->wait[0], 0, val, n);
	else if (in->n_update)
		sync_text(&in->update[0], 1, val, n);
	else
		snprintf(val, n, "{...}");
	return 1;
}

/* A Loop's axis: a trip count (the verifier's rule, for a module run
** unverified). */
static int chk_loop_axis(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	const lm_axis *x = &in->axis;
	if ((x->lb == 0 && x->ub == 0 && x->stride == 0) ||
	    (x->stride > 0 && x->ub >= x->lb))
		return 0;
	*why = x->stride <= 0 ? "the stride must be positive"
			      : "negative trip count";
	snprintf(val, n, "{\"lb\":%lld,\"ub\":%lld,\"stride\":%lld}",
		 (long long)x->lb, (long long)x->ub, (long long)x->stride);
	return 1;
}

/* A DynamicForLoop's axis: the verifier's contract (lb and stride
** constants, stride > 0, an ub), for a module run unverified. */
static int chk_dynloop_axis(const lm_inst *in, char *val, size_t n,
			    const char **why)
{
	const lm_axis *x = &in->axis;
	int64_t lb, st;
	if (in->has_axis && x->lb_e && x->stride_e && x->ub_e &&
	    lm_affine_const(x->lb_e, &lb) == 0 &&
	    lm_affine_const(x->stride_e, &st) == 0 && st > 0)
		return 0;
	*why = "lb and stride must be constants, stride > 0, and ub given";
	snprintf(val, n, "{\"name\":\"%.40s\",...}", x->name ? x->name : "");
	return 1;
}

static void json_text(const cJSON *v, char *buf, size_t n);

/* A DoWhile's cond: an expression (lm_inst.cond); any other form (a
** block name) is carried in extra. */
static int chk_dowhile_cond(const lm_inst *in, char *val, size_t n,
			    const char **why)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "cond") : NULL;
	if (in->cond)
		return 0;
	if (v && !cJSON_IsNull(v)) {
		*why = "cond as a block reference is not modelled: the "
		       "compiler's simulator reads a register (give an "
		       "expression)";
		json_text(v, val, n);
		return 1;
	}
	*why = "a DoWhile needs its condition";
	snprintf(val, n, "null");
	return 1;
}

/* A SwitchQueueInstance's no_rearm: true or false (an affine form is
** not modelled). */
static int chk_no_rearm(const lm_inst *in, char *val, size_t n,
			const char **why)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "no_rearm") : NULL;
	if (!v || cJSON_IsNull(v) || cJSON_IsBool(v) ||
	    (cJSON_IsNumber(v) && (v->valuedouble == 0 ||
				   v->valuedouble == 1)))
		return 0;
	*why = "true or false (an affine expression is not modelled)";
	json_text(v, val, n);
	return 1;
}

/* A DMADescriptorCCE's op: add, max or min. */
static int chk_cce_op(const lm_inst *in, char *val, size_t n,
		      const char **why)
{
	lm_aluop op = ls_dmablk_cce_op(in);
	const cJSON *v;
	if (op == LM_ALU_ADD || op == LM_ALU_MAX || op == LM_ALU_MIN)
		return 0;
	*why = "the descriptor reduces its sources with add, max or min";
	v = in->extra ? cJSON_GetObjectItemCaseSensitive(in->extra, "op")
		      : NULL;
	if (v)
		json_text(v, val, n);
	else
		snprintf(val, n, "\"bypass\"");
	return 1;
}

/* A DMACopy's mode: Copy, Transpose, CCE or Replicate (not the KLR-era
** Dynamic). */
static int chk_dma_mode(const lm_inst *in, char *val, size_t n,
			const char **why)
{
	int m = ls_dma_enum(in, "mode", LM_ET_CopyMode);
	const cJSON *v;
	if (m >= 0 && m <= 3)
		return 0;
	*why = "Copy, Transpose, CCE and Replicate are modelled";
	v = cJSON_GetObjectItemCaseSensitive(in->extra, "mode");
	json_text(v, val, n);
	return 1;
}

/* The value of key of in as JSON text into val, or dflt when absent. */
static void extra_text(const lm_inst *in, const char *key, const char *dflt,
		       char *val, size_t n)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, key) : NULL;
	if (v && !cJSON_IsNull(v))
		json_text(v, val, n);
	else
		snprintf(val, n, "%s", dflt);
}

/* transpose_op: a TransposeOps value; on a DMACopy read in mode
** Transpose only (None elsewhere). */
static int chk_transpose_op(const lm_inst *in, char *val, size_t n,
			    const char **why)
{
	int t = ls_dma_enum(in, "transpose_op", LM_ET_TransposeOps);
	if (t < 0)
		*why = "a TransposeOps permutation";
	else if (t && in->op == LM_OP_DMACOPY &&
		 ls_dma_enum(in, "mode", LM_ET_CopyMode) != 1)
		*why = "read in mode \"Transpose\" only";
	else
		return 0;
	extra_text(in, "transpose_op", "\"None\"", val, n);
	return 1;
}

/* A DMACopy's cce_op: add, max or min in mode CCE, bypass in any other
** mode. */
static int chk_dma_cce_op(const lm_inst *in, char *val, size_t n,
			  const char **why)
{
	int a = ls_dma_enum(in, "cce_op", LM_ET_AluOpType);
	lm_aluop op = a < 0 ? LM_ALU_INVALID : lm_aluop_parse(
		lm_enum_name(LM_ET_AluOpType, a));
	if (ls_dma_enum(in, "mode", LM_ET_CopyMode) == 2) {
		if (op == LM_ALU_ADD || op == LM_ALU_MAX || op == LM_ALU_MIN)
			return 0;
		*why = "mode CCE reduces its sources with add, max or min";
	} else {
		if (a == 0)
			return 0;
		*why = "read in mode \"CCE\" only";
	}
	extra_text(in, "cce_op", "\"bypass\"", val, n);
	return 1;
}

/* constants: one number per source, of a CCE add (DMACopy mode CCE,
** DMADescriptorCCE); [] otherwise. */
static int chk_constants(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	float c[64];
	int nc = ls_dma_constants(in, "constants", c, 64);
	int is_cce = in->op == LM_OP_DESC_CCE ||
		     ls_dma_enum(in, "mode", LM_ET_CopyMode) == 2;
	lm_aluop op = in->op == LM_OP_DESC_CCE ? ls_dmablk_cce_op(in) :
		lm_aluop_parse(lm_enum_name(LM_ET_AluOpType, ls_dma_enum(in,
			"cce_op", LM_ET_AluOpType)));
	if (nc == 0)
		return 0;
	if (nc < 0)
		*why = "a list of at most 64 numbers";
	else if (!is_cce)
		*why = "read in mode \"CCE\" only";
	else if (op != LM_ALU_ADD)
		*why = "constants scale the sources of an add only";
	else if (nc != in->n_ins)
		*why = "one constant per source";
	else
		return 0;
	extra_text(in, "constants", "[]", val, n);
	return 1;
}

/* An indirect move's indices: one indirection_ins operand. */
static int chk_indirection(const lm_inst *in, char *val, size_t n,
			   const char **why)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "indirection_ins") : NULL;
	int k = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
	if (k == 1)
		return 0;
	*why = "the indices are one operand of indirection_ins";
	snprintf(val, n, "%d operand%s", k, k == 1 ? "" : "s");
	return 1;
}

/* An IndirectCopy's num_valid_indices: a count (an affine expression
** is not modelled). */
static int chk_num_valid(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	const cJSON *v = in->extra ? cJSON_GetObjectItemCaseSensitive(
		in->extra, "num_valid_indices") : NULL;
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    v->valuedouble <= 65535 && v->valuedouble == (int)v->valuedouble)
		return 0;
	*why = "a count of 0..65535 (an affine expression is not modelled)";
	extra_text(in, "num_valid_indices", "null", val, n);
	return 1;
}

/* A CompareAndBranch's comp_op: the twelve compares (Unsupported is
** not one). */
static int chk_comp_op(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	const char *name;
	if (in->comp_op >= 0 && in->comp_op <= 11)
		return 0;
	name = lm_enum_name(LM_ET_BranchCompareOp, in->comp_op);
	*why = "the IS_*IMM and IS_*REG compares are modelled";
	if (name)
		return q(val, n, name);
	snprintf(val, n, "%d", in->comp_op);
	return 1;
}

/* A CompareAndBranch's operands: ins [a register_access, an imm_value
** (*IMM) or a register_access of the same dtype (*REG)], no outs. */
static int chk_cmp_ins(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	const cJSON *k;
	int is_reg = in->comp_op >= 6;
	if (in->n_ins != 2) {
		snprintf(val, n, "%d operand%s", in->n_ins,
			 in->n_ins == 1 ? "" : "s");
		*why = "CompareAndBranch takes ins [lhs, rhs]";
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		const lm_arg *a = &in->ins[i];
		k = a->extra ? cJSON_GetObjectItemCaseSensitive(a->extra,
								"kind") : NULL;
		if (i == 1 && !is_reg) {
			if (a->kind == LM_ARG_IMM)
				continue;
			*why = "an *IMM compare takes an imm_value as ins[1]";
		} else if (a->kind == LM_ARG_OPAQUE && cJSON_IsString(k) &&
			   !strcmp(k->valuestring, "register_access")) {
			if (i == 0 || a->dtype == in->ins[0].dtype)
				continue;
			*why = "an *REG compare takes ins[1] at ins[0]'s dtype";
		} else {
			*why = i ? "an *REG compare takes a register_access as "
			       "ins[1]" : "ins[0] must be a register_access";
		}
		call_operand(a, 1, val, n);
		return 1;
	}
	return 0;
}

static int chk_no_outs(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	if (in->n_outs == 0)
		return 0;
	call_operand(&in->outs[0], in->n_outs, val, n);
	*why = "it writes nothing";
	return 1;
}

static int chk_no_ins(const lm_inst *in, char *val, size_t n,
		      const char **why)
{
	if (in->n_ins == 0)
		return 0;
	call_operand(&in->ins[0], in->n_ins, val, n);
	*why = "it reads nothing";
	return 1;
}

/* TensorLoad / TensorSave: one tensor element (a 32-bit dtype: one
** register; int64 / uint64: the pair lo, hi) and int32 / uint32
** register_access operands. */
static int chk_tls(const lm_inst *in, int regs, char *val, size_t n,
		   const char **why)
{
	int is_load = in->op == LM_OP_TENSORLOAD;
	int nmem = is_load ? in->n_ins : in->n_outs;
	int nreg = is_load ? in->n_outs : in->n_ins;
	const lm_arg *mem = is_load ? in->ins : in->outs;
	int want = 0;
	if (nmem == 1)
		switch (mem->dtype) {
		case LM_DT_INT32: case LM_DT_UINT32: case LM_DT_FLOAT32:
			want = 1;
			break;
		case LM_DT_INT64: case LM_DT_UINT64:
			want = 2;
			break;
		default:
			break;
		}
	if (!regs) {
		int64_t cnt = 1;
		for (int k = 0; want && mem->kind == LM_ARG_PHYSICAL_AP &&
		     k < mem->n_ap; k++)
			cnt *= mem->ap[k].num;
		if (want && cnt == 1)
			return 0;
		if (nmem == 1)
			call_operand(mem, 1, val, n);
		else
			snprintf(val, n, "%d operands", nmem);
		*why = "one tensor element of int32, uint32, float32, int64 or "
		       "uint64 is moved";
		return 1;
	}
	if (want && nreg != want) {
		snprintf(val, n, "%d operand%s", nreg, nreg == 1 ? "" : "s");
		*why = want == 1 ? "a 32-bit element moves through one register"
		       : "a 64-bit element moves through two registers (lo, hi)";
		return 1;
	}
	for (int k = 0; k < nreg; k++) {
		const lm_arg *a = is_load ? &in->outs[k] : &in->ins[k];
		const char *w = reg_operand_why(a, 1);
		if (!w)
			continue;
		call_operand(a, 1, val, n);
		*why = w;
		return 1;
	}
	return 0;
}

static int chk_tls_ins(const lm_inst *in, char *val, size_t n,
		       const char **why)
{
	return chk_tls(in, in->op == LM_OP_TENSORSAVE, val, n, why);
}

static int chk_tls_outs(const lm_inst *in, char *val, size_t n,
			const char **why)
{
	return chk_tls(in, in->op == LM_OP_TENSORLOAD, val, n, why);
}

/* TensorCopyDynamicSrc / Dst: one source, one destination. */
static int chk_tcdyn_count(const lm_inst *in, int outs, char *val, size_t n,
			   const char **why)
{
	int cnt = outs ? in->n_outs : in->n_ins;
	if (cnt == 1)
		return 0;
	snprintf(val, n, "%d operand%s", cnt, cnt == 1 ? "" : "s");
	*why = in->op == LM_OP_TCDYNSRC ? "TensorCopyDynamicSrc takes ins "
	       "[src] and outs [dst]" : "TensorCopyDynamicDst takes ins [src] "
	       "and outs [dst]";
	return 1;
}

static int chk_tcdyn_ins(const lm_inst *in, char *val, size_t n,
			 const char **why)
{
	return chk_tcdyn_count(in, 0, val, n, why);
}

static int chk_tcdyn_outs(const lm_inst *in, char *val, size_t n,
			  const char **why)
{
	return chk_tcdyn_count(in, 1, val, n, why);
}

static const field_rule checks[] = {
	{ OP(SWITCHQUEUE), "no_rearm", chk_no_rearm },
	{ OP(DESC_CCE), "op", chk_cce_op },
	{ OP(DMACOPY), "mode", chk_dma_mode },
	{ OP(DMACOPY) | OP(DESC_TRANSPOSE), "transpose_op", chk_transpose_op },
	{ OP(DMACOPY), "cce_op", chk_dma_cce_op },
	{ OP(DMACOPY) | OP(DESC_CCE), "constants", chk_constants },
	{ OP(INDIRECTCOPY), "num_valid_indices", chk_num_valid },
	{ OPS_INDIRECT, "indirection_ins", chk_indirection },
	{ OP(LOOP), "LoopAxis", chk_loop_axis },
	{ OP(DYNLOOP), "DynamicForLoopAxis", chk_dynloop_axis },
	{ OP(DOWHILE), "cond", chk_dowhile_cond },
	{ OPS_LOOP | OP(BREAK), "sync_info", chk_no_sync },
	{ OPS_EXEC, "sync_info", chk_sync },
	{ OPS_EXEC, "engine", chk_engine },
	{ OP(MATMULT), "accumulation_flag", chk_acc_flag },
	{ OP(MATMULT), "psum_zero_region", chk_psum_zero },
	{ OP(REGALU), "op", chk_reg_alu_op },
	{ OP(REGALU) | OP(REGMOVE), "ins", chk_reg_ins },
	{ OP(REGALU) | OP(REGMOVE), "outs", chk_reg_outs },
	{ OP(CMPBRANCH), "comp_op", chk_comp_op },
	{ OP(CMPBRANCH), "ins", chk_cmp_ins },
	{ OP(CMPBRANCH) | OP(UBRANCH) | OP(BRANCHHINT) | OP(HALT), "outs",
	  chk_no_outs },
	{ OP(UBRANCH) | OP(BRANCHHINT) | OP(HALT), "ins", chk_no_ins },
	{ OPS_TLS, "ins", chk_tls_ins },
	{ OPS_TLS, "outs", chk_tls_outs },
	{ OPS_TCDYN, "ins", chk_tcdyn_ins },
	{ OPS_TCDYN, "outs", chk_tcdyn_outs },
	{ OP(ACTIVATION), "func", chk_act_func },
	{ OP(ACTIVATION), "alpha", chk_alpha },
	{ OP(ACTIVATION), "acc", chk_eng_acc },
	{ OP(ACTIVATION), "reduce_op", chk_act_reduce_op },
	{ OP(EXPONENTIAL), "reduce_cmd", chk_eng_acc },
	{ OP(STREAMSHUFFLE), "mask", chk_shuffle_mask },
	{ OP(TENSORTENSOR), "op", chk_op },
	{ OP(TENSORSCALAR) | OP(TSPTR), "op0", chk_op0 },
	{ OP(TENSORSCALAR) | OP(TSPTR), "op1", chk_op1 },
	{ OP(AFFINESELECT), "compare_op", chk_compare_op },
	{ OP(MEMSET), "mode", chk_memset_mode },
	{ OP(TENSORREDUCE), "op", chk_reduce_op },
	{ OP(TENSORREDUCE), "axis", chk_reduce_axis },
	{ OP(TENSORREDUCE), "apply_transpose", chk_apply_transpose },
	{ OP(TSPTR), "is_tensor_tensor_scan", chk_tts_alone },
	{ OP(BNSTATS), "apply_transpose", chk_apply_transpose },
	{ OP(RANGESELECT), "compare_op0", chk_range_cmp0 },
	{ OP(RANGESELECT), "compare_op1", chk_range_cmp1 },
	{ OP(CALL), "ins", chk_call_ins },
	{ OP(CALL), "outs", chk_call_outs },
	{ OP(CALL), "arguments", chk_call_args },
};

/* ---- documented op keys ------------------------------------------------- */

static const op_key *find_op_key(const op_key *keys, size_t n, lm_opcode op,
				 const char *key)
{
	for (size_t i = 0; i < n; i++)
		if ((keys[i].ops & ((lm_opmask)1 << op)) && strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

static int is_checked(lm_opcode op, const char *key)
{
	for (size_t i = 0; i < sizeof checks / sizeof *checks; i++)
		if ((checks[i].ops & ((lm_opmask)1 << op)) &&
		    strcmp(checks[i].key, key) == 0)
			return 1;
	return 0;
}

/*
** The values f reads as when absent, as compact JSON with '|' between
** them ("\"Idle\"|0", "false|0", "0", "[]"), into buf; for a message
** (shown) without an enum's ordinal. NULL when the loader never drops the
** key (strings, names, records, affine expressions, any JSON).
*/
static const char *field_default(const lm_field *f, int shown, char *buf,
				 size_t n)
{
	const char *name;
	switch (f->type) {
	case LM_FT_BOOL:
		return "false";
	case LM_FT_MA_BOOL:
		return "false|0";
	case LM_FT_INT: case LM_FT_UINT: case LM_FT_MA_INT: case LM_FT_MA_UINT:
	case LM_FT_FLOAT:
		snprintf(buf, n, "%lld", (long long)f->deflt);
		return buf;
	case LM_FT_ENUM:
		name = lm_enum_name((lm_enumtype)f->enumtype, f->deflt);
		if (!name)
			snprintf(buf, n, "%lld", (long long)f->deflt);
		else if (shown)
			snprintf(buf, n, "\"%s\"", name);
		else
			snprintf(buf, n, "\"%s\"|%lld", name,
				 (long long)f->deflt);
		return buf;
	case LM_FT_MA_INT_PAIR:
		snprintf(buf, n, "[%lld,%lld]", (long long)f->deflt,
			 (long long)f->deflt);
		return buf;
	case LM_FT_APPAIRS: case LM_FT_INT_LIST: case LM_FT_FLOAT_LIST:
	case LM_FT_INT_LIST_LIST: case LM_FT_MA_UINT_LIST:
	case LM_FT_ENUM_LIST: case LM_FT_STR_LIST: case LM_FT_NAME_LIST:
		return "[]";
	case LM_FT_KV:
		return "[]|{}";
	default:
		return NULL;
	}
}

/* The InstructionType ordinal of an lncsim opcode (-1: none). */
static int it_of(lm_opcode op)
{
	lm_inst in;
	memset(&in, 0, sizeof in);
	in.op = op;
	return lm_inst_it(&in);
}

/* ---- the walk ----------------------------------------------------------- */

typedef struct cctx {
	const lm_module *m;
	lm_strmap allocs;   /* allocation name -> lm_alloc *, the first of
			       the module (as lm_module_find_alloc) */
	lm_error *err;
	ls_refusal_fn each; /* NULL: stop at the first refusal */
	void *arg;
	int n_refused;
	char where[600];
} cctx;

/*
** One refusal "FILE: where: fmt...": into c->err; LM_EINPUT when the walk
** stops at the first, else handed to c->each and 0 (go on).
*/
static int refuse(cctx *c, const char *fmt, ...) LM_PRINTF(2, 3);
static int refuse(cctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lm_verr(c->err, LM_EINPUT, c->m->path, c->where, fmt, ap);
	va_end(ap);
	c->n_refused++;
	if (!c->each)
		return LM_EINPUT;
	c->each(c->arg, c->err->msg);
	return 0;
}

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
		if ((!rules[i].ops || (rules[i].ops & ((lm_opmask)1 << op))) &&
		    strcmp(rules[i].key, key) == 0)
			return &rules[i];
	return NULL;
}

/* A default list "a|b" as "a or b" into buf; tick: as "`a` or `b`". */
static void or_list(const char *list, int tick, char *buf, size_t n)
{
	size_t k = 0;
	const char *t = tick ? "`" : "";
	buf[0] = 0;
	while (*list && k + 1 < n) {
		const char *bar = strchr(list, '|');
		int l = bar ? (int)(bar - list) : (int)strlen(list);
		int w = snprintf(buf + k, n - k, "%s%s%.*s%s", k ? " or " : "",
				 t, l, list, t);
		if (w < 0 || (size_t)w >= n - k || !bar)
			break; /* the end, or truncated */
		k += (size_t)w;
		list = bar + 1;
	}
}

/* "it models only X or Y" for a default list. */
static void models_only(const char *list, char *buf, size_t n)
{
	char alts[160];
	if (!*list) {
		snprintf(buf, n, "it models only its absence (null)");
		return;
	}
	or_list(list, 0, alts, sizeof alts);
	snprintf(buf, n, "it models only %s", alts);
}

/*
** Whether the documented key k (row f of opcode op, compact JSON text
** val) carried in `extra` is refused, and why (into note). Allowed:
** metadata, and the default (the loader drops it there; a module made in
** memory may carry it). Refused: a modelled key in a form the loader did
** not read (an affine expression), any other value of any other key.
*/
static int op_key_refused(lm_opcode op, const lm_field *f, const cJSON *v,
			  const char *val, char *note, size_t n)
{
	char buf[64];
	const char *d = field_default(f, 0, buf, sizeof buf);
	if (find_op_key(inst_meta, sizeof inst_meta / sizeof *inst_meta, op,
			f->key) || (d && in_list(val, d)) ||
	    find_op_key(inst_checked_whole, sizeof inst_checked_whole /
			sizeof *inst_checked_whole, op, f->key))
		return 0;
	if (cJSON_IsObject(v) && find_op_key(inst_affine, sizeof inst_affine /
					     sizeof *inst_affine, op, f->key))
		return 0;
	if (find_op_key(inst_model, sizeof inst_model / sizeof *inst_model,
			op, f->key) || is_checked(op, f->key))
		snprintf(note, n, "%s", cJSON_IsObject(v) ? "affine "
			 "expressions are not modelled"
			 : "not a form the simulator reads");
	else if ((d = field_default(f, 1, buf, sizeof buf)) != NULL)
		models_only(d, note, n);
	else
		models_only("", note, n);
	return 1;
}

/*
** Check the extra keys of one object against rules (and, for an
** instruction, it >= 0, the documented keys of InstructionType it). what
** names the object in the message ("opcode 'Activation'", "allocation",
** ...).
*/
static int check_extra(cctx *c, const cJSON *extra, const key_rule *rules,
		       size_t n, lm_opcode op, int it, const char *what)
{
	if (!extra)
		return 0;
	for (const cJSON *k = extra->child; k; k = k->next) {
		const key_rule *r;
		const lm_field *f;
		char val[100], note[200];
		int rc;
		if (!k->string || cJSON_IsNull(k))
			continue; /* null: the key is absent */
		r = find_rule(rules, n, op, k->string);
		f = !r && it >= 0 ? lm_op_field(it, k->string) : NULL;
		json_text(k, val, sizeof val);
		if (f) {
			if (!op_key_refused(op, f, k, val, note, sizeof note))
				continue;
		} else if (!r) {
			snprintf(note, sizeof note, "not a key the simulator "
				 "knows here");
		} else if (r->cls == K_MODEL || r->cls == K_META ||
			   in_list(val, r->dflt)) {
			continue;
		} else if (r->why) {
			snprintf(note, sizeof note, "%s", r->why);
		} else {
			models_only(r->dflt, note, sizeof note);
		}
		if ((rc = refuse(c, "%s key '%s' = %s is not modelled by the "
				 "simulator (%s)", what, k->string, val,
				 note)) != 0)
			return rc;
	}
	return 0;
}

/*
** A block's arguments (phis): the values travel in the registers, never
** by a copy on the edge, so an argument is modelled when it names its
** register and every incoming value is that register; any other is
** refused.
*/
static int refuse_args(cctx *c, const lm_block *bl);

static int check_args(cctx *c, const lm_block *bl)
{
	for (int i = 0; i < bl->n_args; i++) {
		const lm_blockarg *a = &bl->args[i];
		if (!a->regref || a->extra)
			return refuse_args(c, bl);
		for (int k = 0; k < a->n_incoming; k++)
			if (!a->incoming[k].value ||
			    strcmp(a->incoming[k].value, a->regref))
				return refuse(c, "block argument '%s' of block "
					      "'%s': incoming '%s' from '%s' "
					      "would need a copy on the edge, "
					      "which the simulator does not "
					      "model", a->regref, bl->name ?
					      bl->name : "",
					      a->incoming[k].value ?
					      a->incoming[k].value : "",
					      a->incoming[k].block ?
					      a->incoming[k].block : "");
	}
	return 0;
}

/* A block's arguments (phis), refused: their JSON in the message. */
static int refuse_args(cctx *c, const lm_block *bl)
{
	cJSON *j = cJSON_CreateArray();
	char val[100];
	for (int i = 0; i < bl->n_args; i++) {
		const lm_blockarg *a = &bl->args[i];
		cJSON *o = cJSON_CreateObject(), *in = cJSON_CreateArray();
		for (int k = 0; k < a->n_incoming; k++) {
			cJSON *p = cJSON_CreateArray();
			cJSON_AddItemToArray(p, cJSON_CreateString(
				a->incoming[k].value));
			cJSON_AddItemToArray(p, cJSON_CreateString(
				a->incoming[k].block));
			cJSON_AddItemToArray(in, p);
		}
		cJSON_AddItemToObject(o, "incoming_values", in);
		if (a->regref)
			cJSON_AddStringToObject(o, "regref", a->regref);
		cJSON_AddItemToArray(j, o);
	}
	json_text(j, val, sizeof val);
	cJSON_Delete(j);
	return refuse(c, "block key 'arguments' = %s is not modelled by the "
		      "simulator (an argument is modelled with its regref and "
		      "that register as every incoming value)", val);
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

/* Refuse an opcode the simulator does not execute. */
static int refuse_opcode(cctx *c, const lm_inst *in)
{
	const char *name = in->op == LM_OP_OTHER || in->op == LM_OP_INVALID ||
			   in->op >= LM_OP_COUNT ? in->opcode_str
			   : lm_opcode_name(in->op);
	for (size_t i = 0; i < sizeof op_notes / sizeof *op_notes; i++)
		if (op_notes[i].op == in->op)
			return refuse(c, "opcode '%s' is not modelled by the "
				      "simulator (%s)", name ? name : "",
				      op_notes[i].why);
	return refuse(c, "opcode '%s' is not modelled by the simulator",
		      name ? name : "");
}

/*
** The partition walk of an SB / PSUM operand: the simulator strides one
** partition per step of the first pair (lm_arg_part_step 1: a step of pe,
** or a pair of one partition); any other step is refused by name.
*/
static int check_part_step(cctx *c, const lm_arg *a)
{
	const lm_memloc *l = lm_arg_memloc(c->m, &c->allocs, a);
	int64_t k = lm_arg_part_step(a, l);
	if (k == 1)
		return 0;
	if (k < 0)
		return refuse(c, "ap[0].step %lld is not a whole number of "
			      "partitions (%lld elements each): not modelled by "
			      "the simulator", (long long)a->ap[0].step,
			      (long long)lm_arg_part_elems(a, l));
	return refuse(c, "ap[0].step %lld strides %lld partitions: not "
		      "modelled by the simulator", (long long)a->ap[0].step,
		      (long long)k);
}

/* Where an instruction is: top level, a loop's body, a DMABlock's. */
enum { AT_TOP = 0, AT_LOOP, AT_DMABLOCK };

static int check_inst(cctx *c, const lm_inst *in, char *what, size_t wn,
		      int at);

/* The body of Loop or DMABlock in (at: AT_LOOP, AT_DMABLOCK): its blocks'
** keys and instructions. */
static int check_body(cctx *c, const lm_inst *in, char *what, size_t wn,
		      int at)
{
	size_t base = strlen(c->where);
	int rc = 0;
	for (int b = 0; b < in->n_blocks && !rc; b++) {
		const lm_block *bl = &in->blocks[b];
		size_t bln;
		where_set(c, base, "/block %s", bl->name, b);
		bln = strlen(c->where);
		rc = check_extra(c, bl->extra, block_rules,
				 sizeof block_rules / sizeof *block_rules,
				 LM_OP_INVALID, -1, "block");
		if (!rc && bl->has_args)
			rc = check_args(c, bl);
		for (int i = 0; i < bl->n_insts && !rc; i++) {
			where_set(c, bln, "/instruction %s", bl->insts[i].name,
				  i);
			rc = check_inst(c, &bl->insts[i], what, wn, at);
		}
	}
	c->where[base] = 0;
	return rc;
}

static int check_inst(cctx *c, const lm_inst *in, char *what, size_t wn,
		      int at)
{
	size_t base = strlen(c->where);
	int rc;

	if (in->op <= LM_OP_INVALID || in->op >= LM_OP_COUNT ||
	    !(OPS_EXEC & ((lm_opmask)1 << in->op)))
		return refuse_opcode(c, in);
	if (at == AT_LOOP && (OPS_NOT_IN_LOOP & ((lm_opmask)1 << in->op)))
		return refuse(c, "opcode '%s' inside a Loop is not modelled by "
			      "the simulator", lm_opcode_name(in->op));
	if (at != AT_DMABLOCK && (OPS_DESC & ((lm_opmask)1 << in->op)))
		return refuse(c, "opcode '%s' outside a DMABlock is not "
			      "modelled by the simulator (a descriptor runs "
			      "only when a DMATrigger fires its block)",
			      lm_opcode_name(in->op));
	if (at == AT_DMABLOCK && !(OPS_DESC & ((lm_opmask)1 << in->op)))
		return refuse(c, "opcode '%s' in a DMABlock's body is not "
			      "modelled by the simulator (a block holds "
			      "descriptors)", lm_opcode_name(in->op));
	snprintf(what, wn, "opcode '%s'", lm_opcode_name(in->op));
	for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
		char val[100];
		const char *why = NULL;
		if (!(checks[i].ops & ((lm_opmask)1 << in->op)) ||
		    !checks[i].check(in, val, sizeof val, &why))
			continue;
		rc = why ? refuse(c, "%s key '%s' = %s is not modelled by the "
				  "simulator (%s)", what, checks[i].key, val,
				  why)
			 : refuse(c, "%s key '%s' = %s is not modelled by the "
				  "simulator", what, checks[i].key, val);
		if (rc)
			return rc;
	}
	if ((rc = check_extra(c, in->extra, inst_rules,
			      sizeof inst_rules / sizeof *inst_rules, in->op,
			      lm_inst_it(in), what)) != 0)
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
				 in->op, -1, w2);
		if (!rc)
			rc = check_part_step(c, a);
		c->where[base] = 0;
		if (rc)
			return rc;
	}
	if (OPS_LOOP & ((lm_opmask)1 << in->op))
		return check_body(c, in, what, wn, AT_LOOP);
	if (in->op == LM_OP_DMABLOCK)
		return check_body(c, in, what, wn, AT_DMABLOCK);
	return 0;
}

static int check_alloc(cctx *c, const lm_alloc *a)
{
	size_t base = strlen(c->where);
	const cJSON *po = a->extra ? cJSON_GetObjectItemCaseSensitive(
		a->extra, "partial_output") : NULL;
	int rc = 0;

	if (po && !cJSON_IsNull(po) && !cJSON_IsBool(po))
		rc = refuse(c, "allocation key 'partial_output' must be true "
			    "or false");
	else if (po && cJSON_IsTrue(po) &&
		 !lm_tensorkind_is_ext_output(a->kind))
		rc = refuse(c, "allocation key 'partial_output' = true is only "
			    "meaningful on an ExternalOutput (this is %s)",
			    lm_tensorkind_name(a->kind));
	if (rc || (rc = check_extra(c, a->extra, alloc_rules,
				    sizeof alloc_rules / sizeof *alloc_rules,
				    LM_OP_INVALID, -1, "allocation")) != 0)
		return rc;
	for (int l = 0; l < a->n_memlocs; l++) {
		where_set(c, base, "/memory location %s", a->memlocs[l].name, l);
		rc = check_extra(c, a->memlocs[l].extra, memloc_rules,
				 sizeof memloc_rules / sizeof *memloc_rules,
				 LM_OP_INVALID, -1, "memory location");
		c->where[base] = 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int check_module(cctx *c)
{
	const lm_module *m = c->m;
	char what[80];
	int rc = 0;

	lm_strmap_init(&c->allocs);
	for (int f = 0; f < m->n_functions; f++)
		for (int a = 0; a < m->functions[f].n_allocs; a++) {
			lm_alloc *al = &m->functions[f].allocs[a];
			void **slot;
			if (!al->name)
				continue;
			slot = lm_strmap_ref(&c->allocs, al->name);
			if (!*slot)
				*slot = al;
		}

	snprintf(c->where, sizeof c->where, "module");
	rc = check_extra(c, m->extra, module_rules,
			 sizeof module_rules / sizeof *module_rules,
			 LM_OP_INVALID, -1, "module");
	for (int s = 0; s < m->n_semaphores && !rc; s++) {
		const lm_semaphore *sm = &m->semaphores[s];
		where_set(c, 0, "semaphore %s", sm->name, s);
		if (!rc)
			rc = check_extra(c, sm->extra, semaphore_rules,
					 sizeof semaphore_rules /
					 sizeof *semaphore_rules, LM_OP_INVALID,
					 -1, "semaphore");
	}
	for (int q = 0; q < m->n_queues && !rc; q++) {
		const lm_queue *qu = &m->queues[q];
		size_t ql;
		where_set(c, 0, "queue %s", qu->name, q);
		rc = check_extra(c, qu->extra, queue_rules,
				 sizeof queue_rules / sizeof *queue_rules,
				 LM_OP_INVALID, -1, "queue");
		ql = strlen(c->where);
		for (int i = 0; i < qu->n_instances && !rc; i++) {
			where_set(c, ql, "/instance %s", qu->instances[i].name,
				  i);
			rc = check_extra(c, qu->instances[i].extra,
					 qinstance_rules, sizeof qinstance_rules
					 / sizeof *qinstance_rules,
					 LM_OP_INVALID, -1, "queue instance");
		}
	}
	for (int f = 0; f < m->n_functions && !rc; f++) {
		const lm_function *fn = &m->functions[f];
		size_t fl;
		where_set(c, 0, "function %s", fn->name, f);
		fl = strlen(c->where);
		rc = check_extra(c, fn->extra, function_rules,
				 sizeof function_rules / sizeof *function_rules,
				 LM_OP_INVALID, -1, "function");
		for (int a = 0; a < fn->n_allocs && !rc; a++) {
			where_set(c, fl, "/allocation %s", fn->allocs[a].name,
				  a);
			rc = check_alloc(c, &fn->allocs[a]);
		}
		for (int b = 0; b < fn->n_blocks && !rc; b++) {
			const lm_block *bl = &fn->blocks[b];
			size_t bln;
			where_set(c, fl, "/block %s", bl->name, b);
			bln = strlen(c->where);
			rc = check_extra(c, bl->extra, block_rules,
					 sizeof block_rules / sizeof *block_rules,
					 LM_OP_INVALID, -1, "block");
			if (!rc && bl->has_args)
				rc = check_args(c, bl);
			for (int i = 0; i < bl->n_insts && !rc; i++) {
				where_set(c, bln, "/instruction %s",
					  bl->insts[i].name, i);
				rc = check_inst(c, &bl->insts[i], what,
						sizeof what, AT_TOP);
			}
		}
	}
	lm_strmap_free(&c->allocs);
	return rc;
}

int ls_opcode_executed(lm_opcode op)
{
	return op > LM_OP_INVALID && op < LM_OP_COUNT &&
	       (OPS_EXEC & ((lm_opmask)1 << op)) != 0;
}

int ls_check_module(const lm_module *m, lm_error *err)
{
	cctx c;
	memset(&c, 0, sizeof c);
	c.m = m;
	c.err = err;
	return check_module(&c);
}

int ls_check_module_each(const lm_module *m, ls_refusal_fn each, void *arg)
{
	cctx c;
	lm_error err;
	memset(&c, 0, sizeof c);
	c.m = m;
	c.err = &err;
	c.each = each;
	c.arg = arg;
	check_module(&c);
	return c.n_refused;
}

/* ---- the tables, for tests and docs/simulator.md ------------------------ */

/* The class of documented key f of opcode op, as the doc table says it. */
static void key_class(lm_opcode op, const lm_field *f, char *buf, size_t n)
{
	const op_key *k;
	char d[64], alts[160];
	const char *dv;
	if (is_checked(op, f->key))
		snprintf(buf, n, "modelled in part (the table above)");
	else if ((k = find_op_key(inst_model, sizeof inst_model /
				  sizeof *inst_model, op, f->key)) != NULL)
		snprintf(buf, n, "modelled%s%s%s", k->why ? " (" : "",
			 k->why ? k->why : "", k->why ? ")" : "");
	else if ((k = find_op_key(inst_meta, sizeof inst_meta /
				  sizeof *inst_meta, op, f->key)) != NULL)
		snprintf(buf, n, "metadata, any value (%s)", k->why);
	else if ((dv = field_default(f, 1, d, sizeof d)) != NULL) {
		or_list(dv, 1, alts, sizeof alts);
		snprintf(buf, n, "only at its default, %s", alts);
	} else {
		snprintf(buf, n, "only absent");
	}
}

void ls_format_key_table(lm_buf *b)
{
	lm_buf_puts(b, "| opcode | keys | the simulator |\n|---|---|---|\n");
	for (int o = 1; o < LM_OP_COUNT; o++) {
		const lm_opinfo *info;
		char done[64]; /* the fields already written (an op has fewer) */
		if (!(OPS_EXEC & ((lm_opmask)1 << o)) ||
		    !(info = lm_op_info(it_of((lm_opcode)o))))
			continue;
		assert(info->n_fields <= (int)sizeof done);
		memset(done, 0, sizeof done);
		/* one row per class, naming its keys in table order */
		for (int i = 0; i < info->n_fields; i++) {
			char cls[200];
			int first = 1;
			if (done[i])
				continue;
			key_class((lm_opcode)o, info->fields[i], cls,
				  sizeof cls);
			lm_buf_printf(b, "| %s | ", info->name);
			for (int j = i; j < info->n_fields; j++) {
				char cj[200];
				key_class((lm_opcode)o, info->fields[j], cj,
					  sizeof cj);
				if (strcmp(cls, cj) != 0)
					continue;
				lm_buf_printf(b, "%s`%s`", first ? "" : ", ",
					      info->fields[j]->key);
				first = 0;
				done[j] = 1;
			}
			lm_buf_printf(b, " | %s |\n", cls);
		}
	}
}

/* Each row of keys names a documented key of every opcode of its set
** (want 1), or of none (want 0). */
static int rows_agree(const char *table, lm_opmask ops, const char *key,
		      int want, lm_error *err)
{
	for (int o = 1; o < LM_OP_COUNT; o++) {
		int it;
		if (!(ops & OPS_EXEC & ((lm_opmask)1 << o)))
			continue;
		it = it_of((lm_opcode)o);
		if ((lm_op_field(it, key) != NULL) != want)
			return lm_err(err, "sim/simcheck.c", table, "key '%s' "
				      "is %sa documented key of %s", key,
				      want ? "not " : "",
				      lm_opcode_name((lm_opcode)o));
	}
	return 0;
}

int ls_check_tables(lm_error *err)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < sizeof inst_meta / sizeof *inst_meta; i++)
		rc = rows_agree("inst_meta", inst_meta[i].ops,
				inst_meta[i].key, 1, err);
	for (size_t i = 0; !rc && i < sizeof inst_model / sizeof *inst_model;
	     i++)
		rc = rows_agree("inst_model", inst_model[i].ops,
				inst_model[i].key, 1, err);
	for (size_t i = 0; !rc && i < sizeof inst_rules / sizeof *inst_rules;
	     i++)
		rc = rows_agree("inst_rules", inst_rules[i].ops,
				inst_rules[i].key, 0, err);
	return rc;
}

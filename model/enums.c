/*
** enums.c -- the BIR JSON spellings of the enums the IR holds in its own
** numbering (opcodes, ALU ops, activation functions, tensor kinds, memory
** types, engines, edge kinds, origins), and their parsers. The wire's
** full enum table is model/enums.def (docs/enums.md).
*/
#include "common.h"
#include "module.h"
#include "optable.h"

#include <string.h>

/* Linear lookup of s in a NULL-padded name table; -1 when absent. */
static int find_name(const char *const *names, int n, const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return i;
	return -1;
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- opcodes --------------------------------------------------------- */

static const char *const opcode_names[LM_OP_COUNT] = {
	[LM_OP_DMACOPY] = "DMACopy", [LM_OP_LOAD] = "Load", [LM_OP_SAVE] = "Save",
	[LM_OP_MATMULT] = "Matmult", [LM_OP_ACTIVATION] = "Activation",
	[LM_OP_TENSORTENSOR] = "TensorTensor",
	[LM_OP_TENSORSCALAR] = "TensorScalar",
	[LM_OP_TENSORCOPY] = "TensorCopy", [LM_OP_MEMSET] = "Memset",
	[LM_OP_IOTA] = "Iota", [LM_OP_AFFINESELECT] = "TensorScalarAffineSelect",
	[LM_OP_NOOP] = "NoOp", [LM_OP_COREBARRIER] = "CoreBarrier",
	[LM_OP_CALL] = "Call", [LM_OP_RETURN] = "Return",
	[LM_OP_SWITCHQUEUE] = "SwitchQueueInstance",
	[LM_OP_NKIKERNEL] = "NKIKernel", [LM_OP_NKIKLIRKERNEL] = "NKIKLIRKernel",
	[LM_OP_BIRKERNEL] = "BIRKernel", [LM_OP_LOOP] = "Loop",
	[LM_OP_DYNLOOP] = "DynamicForLoop", [LM_OP_DOWHILE] = "DoWhile",
	[LM_OP_CMPBRANCH] = "CompareAndBranch",
	[LM_OP_UBRANCH] = "UnconditionalBranch",
	[LM_OP_BRANCHHINT] = "BranchHint", [LM_OP_BREAK] = "Break",
	[LM_OP_EXIT] = "Exit", [LM_OP_HALT] = "Halt",
	[LM_OP_REGALU] = "RegisterAlu", [LM_OP_REGMOVE] = "RegisterMove",
	[LM_OP_TENSORLOAD] = "TensorLoad", [LM_OP_TENSORSAVE] = "TensorSave",
	[LM_OP_EVENTSEM] = "EventSemaphore",
	[LM_OP_GROUPRESET] = "GroupResetSemaphores",
	[LM_OP_AEBARRIER] = "AllEngineBarrier", [LM_OP_DRAIN] = "Drain",
	[LM_OP_DMATRIGGER] = "DMATrigger", [LM_OP_DMABLOCK] = "DMABlock",
	[LM_OP_DESC_COPY] = "DMADescriptorCopy",
	[LM_OP_DESC_CCE] = "DMADescriptorCCE",
	[LM_OP_DESC_TRANSPOSE] = "DMADescriptorTranspose",
	[LM_OP_DESC_REPLICATE] = "DMADescriptorReplicate",
	[LM_OP_RESETQUEUE] = "ResetQueueInstance",
	[LM_OP_TCOMPLETION] = "TensorCompletion",
	[LM_OP_TCDYNSRC] = "TensorCopyDynamicSrc",
	[LM_OP_TCDYNDST] = "TensorCopyDynamicDst",
	[LM_OP_TENSORREDUCE] = "TensorReduce",
	[LM_OP_TSPTR] = "TensorScalarPtr",
	[LM_OP_RECIPROCAL] = "Reciprocal",
	[LM_OP_SELECT] = "Select",
	[LM_OP_COPYPRED] = "CopyPredicated",
	[LM_OP_MAX8] = "Max",
	[LM_OP_MAXINDEX] = "MaxIndex",
	[LM_OP_MATCHREPLACE] = "MatchReplace",
	[LM_OP_MIMR] = "MaxIndexAndMatchReplace",
	[LM_OP_BNSTATS] = "BNStats",
	[LM_OP_BNAGGR] = "BNStatsAggregate",
	[LM_OP_RANGESELECT] = "RangeSelect",
	[LM_OP_EXPONENTIAL] = "Exponential",
	[LM_OP_ACTREADACC] = "ActivationReadAccumulator",
	[LM_OP_READACTACC] = "ReadActivationAccumulator",
	[LM_OP_STREAMSHUFFLE] = "StreamShuffle",
	[LM_OP_DVEREADACC] = "DveReadAccumulator",
	[LM_OP_TSCACHE] = "TensorScalarCache",
	[LM_OP_STREAMTRANSPOSE] = "StreamTranspose",
	[LM_OP_INDIRECTLOAD] = "IndirectLoad",
	[LM_OP_GATHER] = "Gather",
	[LM_OP_INDIRECTCOPY] = "IndirectCopy",
};

/* Schema opcodes that are carried through but not executed. */
static const char *const other_opcodes[] = {
	"DMA", "MatmultBase", "MatmultSparse", "TensorScalarPtr",
	"LoadActFuncSet", "Pool", "Shuffle", "TensorReduce",
	"BNStats", "BNBackprop", "BNBackprop2", "StreamShuffle",
	"CalcVarAddr", "CopyPredicated", "CustomOp", "SetRandState", "Rand",
	"RangeSelect", "Dropout", "GetCurProcessingRankID", "MatchReplace",
	"InlineASMBytes", "GenericCopy", "ReadVarAddr", "GenericIndirectLoad",
	"GenericIndirectSave", "IndirectSave",
	"IndirectSaveAccumulate", "Collective", "CollectiveCompute",
	"CollectiveSend", "CollectiveRecv", "DMADescriptor",
	"ReadActivationAccumulator", "GetGlobalRankId", "Reciprocal",
	"BNStatsAggregate", "BNGradients", "StreamTranspose", "Select",
	"GetRandState", "Max", "MaxIndex", "Generic", "GenericRelu",
	"AbstractCopy", "Terminator",
};

const char *lm_opcode_name(lm_opcode op)
{
	if (op <= LM_OP_INVALID || op >= LM_OP_COUNT || !opcode_names[op])
		return "";
	return opcode_names[op];
}

lm_opcode lm_opcode_parse(const char *s)
{
	int i = find_name(opcode_names, LM_OP_COUNT, s);
	if (i > 0)
		return (lm_opcode)i;
	if (lm_it_parse(s) >= 0 ||
	    find_name(other_opcodes, COUNT(other_opcodes), s) >= 0)
		return LM_OP_OTHER;
	/* the *Symbolic variants of the schema */
	if (s) {
		size_t n = strlen(s);
		if (n > 8 && strcmp(s + n - 8, "Symbolic") == 0)
			return LM_OP_OTHER;
	}
	return LM_OP_INVALID;
}

int lm_opcode_is_dma(lm_opcode op)
{
	return op == LM_OP_DMACOPY || op == LM_OP_LOAD || op == LM_OP_SAVE;
}

int lm_opcode_uses_queue(lm_opcode op)
{
	return lm_opcode_is_dma(op) || op == LM_OP_INDIRECTLOAD;
}

/* ---- AluOp ----------------------------------------------------------- */

static const char *const alu_names[LM_ALU_COUNT] = {
	NULL, "abs", "add", "arith_shift_left", "arith_shift_right", "average",
	"bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "bypass",
	"divide", "is_equal", "is_ge", "is_gt", "is_le", "is_lt", "logical_and",
	"logical_or", "logical_shift_left", "logical_shift_right",
	"logical_xor", "max", "min", "mod", "mult", "not_equal", "pow", "rsqrt",
	"subtract", "abs_max", "abs_min", "elemwise_mul", "mod_int",
};

const char *lm_aluop_name(lm_aluop op)
{
	return (op > 0 && op < LM_ALU_COUNT) ? alu_names[op] : "";
}

lm_aluop lm_aluop_parse(const char *s)
{
	int i = find_name(alu_names, LM_ALU_COUNT, s);
	return i > 0 ? (lm_aluop)i : LM_ALU_INVALID;
}

/* ---- ActivationFunctionType ------------------------------------------ */

static const char *const act_names[LM_ACT_COUNT] = {
	NULL, "Abs", "Abs_reciprocal_sqrt", "Arctan", "Copy", "Derivative_Erf",
	"Derivative_Gelu", "Derivative_silu", "Dsqrt", "Erf", "Exp", "Gelu",
	"Gelu_apprx_sigmoid", "Gelu_apprx_tanh", "Identity", "Is_finite", "Ln",
	"Ln_prime", "Lrelu", "MemsetZero", "Mish", "Prelu", "Reciprocal", "Relu",
	"Rsqrt", "Sigmoid", "Sign", "Silu", "Sin", "Softplus", "Sqrt", "Square",
	"Tanh", "Unknown",
};

const char *lm_actfunc_name(lm_actfunc f)
{
	return (f > 0 && f < LM_ACT_COUNT) ? act_names[f] : "";
}

lm_actfunc lm_actfunc_parse(const char *s)
{
	int i = find_name(act_names, LM_ACT_COUNT, s);
	return i > 0 ? (lm_actfunc)i : LM_ACT_INVALID;
}

/* ---- TensorKind ------------------------------------------------------ */

static const char *const tk_names[LM_TK_COUNT] = {
	NULL, "ExternalInput", "ExternalInputParameter", "Input",
	"ExternalOutput", "ExternalOutputParameter", "Output", "Const",
	"Internal", "Pointer", "InternalInterface",
};

const char *lm_tensorkind_name(lm_tensorkind k)
{
	return (k > 0 && k < LM_TK_COUNT) ? tk_names[k] : "";
}

lm_tensorkind lm_tensorkind_parse(const char *s)
{
	int i = find_name(tk_names, LM_TK_COUNT, s);
	return i > 0 ? (lm_tensorkind)i : LM_TK_INVALID;
}

int lm_tensorkind_is_ext_input(lm_tensorkind k)
{
	return k == LM_TK_EXTERNAL_INPUT || k == LM_TK_EXTERNAL_INPUT_PARAMETER;
}

int lm_tensorkind_is_ext_output(lm_tensorkind k)
{
	return k == LM_TK_EXTERNAL_OUTPUT || k == LM_TK_EXTERNAL_OUTPUT_PARAMETER;
}

/* ---- MemoryType ------------------------------------------------------ */

static const char *const mt_names[LM_MT_COUNT] = {
	NULL, "Unallocated", "Input", "Output", "DRAM", "SB", "PSUM",
	"RNGSTATE", "REG",
};

const char *lm_memtype_name(lm_memtype t)
{
	return (t > 0 && t < LM_MT_COUNT) ? mt_names[t] : "";
}

lm_memtype lm_memtype_parse(const char *s)
{
	int i = find_name(mt_names, LM_MT_COUNT, s);
	return i > 0 ? (lm_memtype)i : LM_MT_INVALID;
}

int lm_memtype_is_dram(lm_memtype t)
{
	return t == LM_MT_DRAM || t == LM_MT_INPUT || t == LM_MT_OUTPUT;
}

/* ---- function kind --------------------------------------------------- */

static const char *const fk_names[] = {"regular", "dispatcher", "nki"};

const char *lm_funckind_name(lm_funckind k)
{
	return (k >= 0 && (int)k < COUNT(fk_names)) ? fk_names[k] : "";
}

int lm_funckind_parse(const char *s)
{
	return find_name(fk_names, COUNT(fk_names), s);
}

/* ---- engines --------------------------------------------------------- */

static const char *const engine_names[LM_ENG_COUNT] = {
	"Unassigned", "PE", "Activation", "DVE", "Pool", "SP", "DMA", "ALL",
};

const char *lm_engine_name(lm_engine e)
{
	return (e >= 0 && e < LM_ENG_COUNT) ? engine_names[e] : "";
}

lm_engine lm_engine_parse(const char *s)
{
	return (lm_engine)find_name(engine_names, LM_ENG_COUNT, s);
}

/* ---- dependency kinds and origins -------------------------------------- */

static const char *const edge_names[LM_EDGE_COUNT] = {
	"Invalid", "Ordered", "Anti", "Output", "Flow",
};

const char *lm_edgekind_name(int k)
{
	return (k > 0 && k < LM_EDGE_COUNT) ? edge_names[k] : "";
}

int lm_edgekind_parse(const char *s)
{
	int i = find_name(edge_names, LM_EDGE_COUNT, s);
	return i > 0 ? i : LM_EDGE_INVALID;
}

static const char *const origin_names[LM_ORIGIN_COUNT] = {
	"Internal", "Penguin", "NKI",
};

const char *lm_origin_name(int o)
{
	return (o >= 0 && o < LM_ORIGIN_COUNT) ? origin_names[o] : "";
}

int lm_origin_parse(const char *s)
{
	return find_name(origin_names, LM_ORIGIN_COUNT, s);
}

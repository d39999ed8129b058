/*
** test_wire.c -- the neuronx-cc 2.24 wire form read and written back,
** held against fixtures written by hand from what is known of the
** compiler (its record of each opcode's keys -- "the key record" below --,
** its JSON writer and its instruction base class), not from
** model/fields.def, so that this suite checks the field table instead of
** repeating it (docs/wire-fixtures.md).
**
** tests/fixtures/wire/<family>.json holds one instruction of every
** opcode of the family (at the top level of its function, but for Break,
** which belongs in a loop's body), every op-specific key of it at a value
** other than its default, and the common header keys. For each fixture:
**
**   selfcheck  the fixture says what this file's table says (every opcode
**              of the family, every key present, of its type, not at its
**              default, affine values in wire version 2);
**   roundtrip  load -> save -> load is the identity, and saving twice
**              gives the same bytes;
**   verify     the verifier accepts it;
**   keys       every key of every instruction comes back with its value,
**              and nothing else comes back;
**   defaults   each op-specific key set to its default is left out by
**              the writer where the key record says skip-default, and written
**              at the default where it says always-emitted;
**   affine     each MaybeAffine key set to an affine expression loads and
**              is written back as it was.
**
** Then every one of the 110 opcode names loads and saves back as itself,
** and the header keys follow their emit guards.
**
** The key checks run on a copy of the fixture that keeps one instruction
** (its blocks and the rest of the module stay), so an opcode the loader
** refuses spoils only its own lines.
*/
#include "common.h"
#include "module.h"
#include "json.h"
#include "verify.h"
#include "affine.h"
#include "optable.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the opcodes (the compiler's 110, families as in ops.def) -------- */

typedef struct wop {
	const char *name;
	const char *family; /* the fixture: tests/fixtures/wire/<family>.json */
} wop;

/* The 110 InstructionType names, in ordinal order 0..109. */
static const wop opcodes[] = {
	{ "Generic", "control" }, { "GenericCopy", "copy" },
	{ "GenericRelu", "act" }, { "AbstractCopy", "copy" },
	{ "Activation", "act" }, { "ReadActivationAccumulator", "matmul" },
	{ "LoadActFuncSet", "act" }, { "MatmultBase", "matmul" },
	{ "Matmult", "matmul" }, { "MatmultSparse", "matmul" },
	{ "Memset", "copy" }, { "GetGlobalRankId", "coll" },
	{ "NoOp", "control" }, { "EventSemaphore", "sync" },
	{ "GroupResetSemaphores", "sync" }, { "AllEngineBarrier", "sync" },
	{ "Drain", "sync" }, { "Halt", "sync" }, { "DMA", "dma" },
	{ "Load", "dma" }, { "Pool", "act" }, { "Reciprocal", "act" },
	{ "Save", "dma" }, { "TensorCopy", "copy" },
	{ "TensorCopyDynamicSrc", "copy" }, { "TensorCopyDynamicDst", "copy" },
	{ "IndirectCopy", "indirect" }, { "TensorReduce", "act" },
	{ "TensorScalar", "copy" }, { "TensorScalarPtr", "copy" },
	{ "TensorScalarCache", "copy" }, { "TensorTensor", "copy" },
	{ "DMACopy", "dma" }, { "GPSIMDSB2SB", "sync" },
	{ "BNStats", "coll" }, { "BNStatsAggregate", "coll" },
	{ "BNGradients", "coll" }, { "BNBackprop", "coll" },
	{ "BNBackprop2", "coll" }, { "StreamShuffle", "copy" },
	{ "StreamTranspose", "copy" }, { "ReadVarAddr", "indirect" },
	{ "GenericIndirectLoad", "indirect" }, { "IndirectLoad", "indirect" },
	{ "GenericIndirectSave", "indirect" }, { "IndirectSave", "indirect" },
	{ "IndirectSaveAccumulate", "indirect" }, { "Collective", "coll" },
	{ "CollectiveCompute", "coll" }, { "CollectiveSend", "coll" },
	{ "CollectiveRecv", "coll" }, { "Select", "copy" },
	{ "CopyPredicated", "copy" }, { "CustomOp", "kernel" },
	{ "BIRKernel", "kernel" }, { "NKIKernel", "kernel" },
	{ "NKIKLIRKernel", "kernel" }, { "DevicePrint", "misc" },
	{ "GetRandState", "coll" }, { "SetRandState", "coll" },
	{ "Rand", "coll" }, { "Iota", "copy" },
	{ "TensorScalarAffineSelect", "copy" }, { "RangeSelect", "act" },
	{ "GetSequenceBounds", "misc" }, { "Dropout", "copy" },
	{ "GetCurProcessingRankID", "coll" }, { "DMATrigger", "dma" },
	{ "DMADescriptor", "dma" }, { "DMADescriptorCopy", "dma" },
	{ "DMADescriptorCCE", "dma" }, { "DMADescriptorTranspose", "dma" },
	{ "DMADescriptorReplicate", "dma" }, { "RegisterAlu", "misc" },
	{ "RegisterMove", "misc" }, { "TensorLoad", "copy" },
	{ "TensorSave", "copy" }, { "Terminator", "control" },
	{ "CompareAndBranch", "control" }, { "UnconditionalBranch", "control" },
	{ "BranchHint", "control" }, { "Return", "control" },
	{ "Exit", "control" }, { "Break", "control" }, { "Call", "control" },
	{ "SwitchQueueInstance", "sync" }, { "ResetQueueInstance", "sync" },
	{ "CoreBarrier", "sync" }, { "Max", "act" }, { "MaxIndex", "act" },
	{ "MatchReplace", "act" }, { "MaxIndexAndMatchReplace", "act" },
	{ "Gather", "indirect" }, { "InlineASMBytes", "misc" },
	{ "TensorCompletion", "misc" }, { "MatmultMx", "matmul" },
	{ "QuantizeMx", "matmul" }, { "Rand2", "coll" },
	{ "RandSetState", "coll" }, { "RandGetState", "coll" },
	{ "Rng", "coll" }, { "ActivationReadAccumulator", "act" },
	{ "DveReadAccumulator", "act" }, { "Exponential", "act" },
	{ "NonzeroWithCount", "act" }, { "Loop", "control" },
	{ "DynamicForLoop", "control" }, { "DMABlock", "dma" },
	{ "DoWhile", "control" }, { "TongaReduceMacroSymbolic", "act" },
};
#define N_OPCODES ((int)(sizeof opcodes / sizeof opcodes[0]))

static const char *const families[] = {
	"matmul", "act", "copy", "dma", "coll", "indirect", "control", "sync",
	"kernel", "misc",
};
#define N_FAMILIES ((int)(sizeof families / sizeof families[0]))

/* The 19 keys of the common header (the compiler's instruction base
** class), and the two every record has besides. */
static const char *const header_keys[] = {
	"opcode", "name", "origin", "engine", "engine_id", "scheduled_start",
	"scheduled_end", "optin_passes", "dependencies",
	"loop_carried_dependencies", "unroll_dependencies", "sync_info",
	"ins", "indirection_ins", "outs", "debug", "loopnest", "predicates",
	"order", "dma_trigger_debug_update_semaphore_id",
};

/* ---- the op-specific keys, as this file reads the key record --------- */

/*
** Value types: M a MaybeAffine or quasi-affine value (a scalar, or an
** expression object); M2 a pair of M; E an enum name; F a number; B a
** boolean; I an integer; S a string; N a name of another object; V an
** array; O an object; X a shape not known.
*/
typedef enum { T_M, T_M2, T_E, T_F, T_B, T_I, T_S, T_N, T_V, T_O, T_X } wtype;

/*
** How the writer treats the key at its default:
**   A  always written (the 13 matmul keys, SerializableFloat, the required
**      keys: a required key left out would not read back);
**   S  skip-default, stated (an optional MaybeAffine, an enum with its
**      default gate, a null reference);
**   P  skip-default by the compiler's writer's general rule (vectors,
**      enums and MaybeAffines whose required-ness the key record leaves
**      open): checked, a disagreement is noted in the log and does not
**      fail;
**   U  not known: not checked.
*/
typedef enum { EM_A, EM_S, EM_P, EM_U } wemit;

typedef struct wkey {
	const char *op, *key;
	wtype type;
	wemit em;
	const char *dflt; /* the default as JSON; NULL: none to spell (the
			     key is left out instead) */
} wkey;

#define MATMULT_KEYS(op)                                                    \
	{ op, "accumulation_flag", T_M, EM_A, "0" },                        \
	{ op, "psum_zero_region", T_M, EM_A, "0" },                         \
	{ op, "replication_resolution", T_M, EM_A, "0" },                   \
	{ op, "replication_shift_amnt", T_M, EM_A, "0" },                   \
	{ op, "replication_num_rows", T_M, EM_A, "0" },                     \
	{ op, "is_transpose", T_M, EM_A, "false" },                         \
	{ op, "is_fmap_onezero", T_M, EM_A, "false" },                      \
	{ op, "is_weight_onezero", T_M, EM_A, "false" },                    \
	{ op, "tile_size", T_M2, EM_A, "[0, 0]" },                          \
	{ op, "tile_position", T_M2, EM_A, "[0, 0]" },                      \
	{ op, "perf_mode", T_E, EM_A, "\"None\"" },                         \
	{ op, "ifmap_quant_offset", T_M, EM_A, "0" },                       \
	{ op, "weights_quant_offset", T_M, EM_A, "0" }

/* The InstDMA base: queue (a null pointer), dge_type (== 3), duplicate. */
#define DMA_KEYS(op)                                                        \
	{ op, "queue", T_N, EM_S, NULL },                                   \
	{ op, "dge_type", T_E, EM_S, "\"Unassigned\"" },                    \
	{ op, "duplicate", T_M, EM_S, "false" }

/* The InstDMA ops lncsim models (DMATrigger: its queue is the one its DMA
** blocks run on): the loader's second pass binds their queue and reports
** one that is not there, and lncsim needs it, so it is not left out
** here. */
#define DMA_RUN_KEYS(op)                                                    \
	{ op, "queue", T_N, EM_U, NULL },                                   \
	{ op, "dge_type", T_E, EM_S, "\"Unassigned\"" },                    \
	{ op, "duplicate", T_M, EM_S, "false" }

#define UNINIT(op) { op, "can_read_uninit", T_M, EM_S, "false" }
#define BYPASS "\"bypass\""
#define IDLE "\"Idle\""

static const wkey keys[] = {
	/* matmul / MX */
	MATMULT_KEYS("MatmultBase"), MATMULT_KEYS("Matmult"),
	MATMULT_KEYS("MatmultMx"), MATMULT_KEYS("MatmultSparse"),
	{ "MatmultSparse", "compress_ratio", T_M, EM_A, "0" },

	/* activation / reduce / pool */
	{ "Activation", "scale", T_F, EM_A, "0" },
	{ "Activation", "alpha", T_F, EM_A, "0" },
	UNINIT("Activation"),
	{ "Activation", "func", T_E, EM_A, "\"Identity\"" },
	{ "Activation", "acc", T_E, EM_A, IDLE },
	{ "Activation", "is_activate2", T_M, EM_S, "false" },
	{ "Activation", "op0", T_E, EM_A, BYPASS },
	{ "Activation", "op1", T_E, EM_A, BYPASS },
	{ "Activation", "reverse0", T_M, EM_S, "false" },
	{ "Activation", "reverse1", T_M, EM_S, "false" },
	{ "Activation", "reduce_op", T_E, EM_A, BYPASS },
	{ "TensorReduce", "op", T_E, EM_A, BYPASS },
	{ "TensorReduce", "axis", T_E, EM_A, "\"X\"" },
	{ "TensorReduce", "apply_transpose", T_M, EM_S, "false" },
	{ "TensorReduce", "negate", T_M, EM_S, "false" },
	{ "Pool", "func", T_E, EM_A, "\"Max\"" },
	{ "Exponential", "reduce_cmd", T_E, EM_A, IDLE },
	{ "RangeSelect", "base", T_M, EM_S, "false" },
	{ "RangeSelect", "compare_op0", T_E, EM_U, BYPASS },
	{ "RangeSelect", "compare_op1", T_E, EM_U, BYPASS },
	{ "RangeSelect", "reduce_op", T_E, EM_U, BYPASS },
	{ "RangeSelect", "reduce_cmd", T_E, EM_U, IDLE },
	{ "RangeSelect", "fill_value", T_F, EM_A, "0" },
	{ "RangeSelect", "num_active_channels", T_M, EM_S, "0" },
	{ "MatchReplace", "imm_value", T_F, EM_A, "0" },
	{ "MaxIndexAndMatchReplace", "imm_value", T_F, EM_A, "0" },
	{ "LoadActFuncSet", "act_func_set_id", T_M, EM_S, "0" },
	{ "DveReadAccumulator", "negated", T_M, EM_S, "false" },
	{ "TongaReduceMacroSymbolic", "op", T_E, EM_U, BYPASS },
	{ "TongaReduceMacroSymbolic", "is_first_reduce", T_B, EM_U, "false" },
	{ "TongaReduceMacroSymbolic", "reduce_axes", T_V, EM_U, "[]" },

	/* copy / tensor-scalar / tensor-tensor */
	UNINIT("TensorCopy"), UNINIT("GenericCopy"),
	{ "AbstractCopy", "dma_qos", T_E, EM_S, "\"Unassigned\"" },
	{ "TensorCopyDynamicSrc", "scale", T_M, EM_S, "0" },
	UNINIT("TensorCopyDynamicSrc"),
	{ "TensorCopyDynamicDst", "scale", T_M, EM_S, "0" },
	UNINIT("TensorCopyDynamicDst"),
	{ "IndirectCopy", "num_valid_indices", T_M, EM_A, "0" },
	UNINIT("CopyPredicated"),
	{ "CopyPredicated", "reverse_pred", T_M, EM_S, "false" },
	{ "CopyPredicated", "reduce_op", T_E, EM_U, BYPASS },
	{ "CopyPredicated", "accumulator_cmd", T_E, EM_U, IDLE },
	{ "TensorScalar", "op0", T_E, EM_A, BYPASS },
	{ "TensorScalar", "const0", T_F, EM_A, "0" },
	{ "TensorScalar", "reverse0", T_M, EM_A, "false" },
	{ "TensorScalar", "op1", T_E, EM_A, BYPASS },
	{ "TensorScalar", "const1", T_F, EM_A, "0" },
	{ "TensorScalar", "reverse1", T_M, EM_A, "false" },
	{ "TensorScalarCache", "op0", T_E, EM_A, BYPASS },
	{ "TensorScalarCache", "reverse0", T_M, EM_S, "false" },
	{ "TensorScalarCache", "op1", T_E, EM_A, BYPASS },
	{ "TensorScalarCache", "reverse1", T_M, EM_S, "false" },
	{ "TensorScalarCache", "mode", T_E, EM_S, "\"Reduce\"" },
	{ "TensorScalarCache", "acc", T_E, EM_S, IDLE },
	{ "TensorScalarPtr", "op0", T_E, EM_A, BYPASS },
	{ "TensorScalarPtr", "reverse0", T_M, EM_A, "false" },
	{ "TensorScalarPtr", "op1", T_E, EM_A, BYPASS },
	{ "TensorScalarPtr", "reverse1", T_M, EM_A, "false" },
	{ "TensorScalarPtr", "apply_transpose", T_M, EM_S, "false" },
	{ "TensorScalarPtr", "is_tensor_scalar_addr", T_M, EM_S, "false" },
	{ "TensorScalarPtr", "is_scalar_tensor_tensor", T_M, EM_S, "false" },
	{ "TensorScalarPtr", "is_tensor_tensor_scan", T_M, EM_S, "false" },
	{ "TensorScalarPtr", "negate_second_output", T_M, EM_S, "false" },
	{ "TensorScalarPtr", "acc", T_E, EM_S, IDLE },
	{ "TensorScalarAffineSelect", "base", T_M, EM_A, "0" },
	{ "TensorScalarAffineSelect", "pattern", T_V, EM_A, "[]" },
	{ "TensorScalarAffineSelect", "channel_multiplier", T_M, EM_S, "0" },
	{ "TensorScalarAffineSelect", "compare_op", T_E, EM_A, BYPASS },
	{ "TensorScalarAffineSelect", "fill_value", T_F, EM_A, "0" },
	{ "TensorTensor", "op", T_E, EM_A, BYPASS },
	{ "TensorTensor", "acc", T_E, EM_S, IDLE },
	{ "Iota", "base", T_M, EM_A, "0" },
	{ "Iota", "pattern", T_V, EM_A, "[]" },
	{ "Iota", "channel_multiplier", T_M, EM_S, "0" },
	{ "Memset", "mode", T_E, EM_A, "\"Const\"" },
	{ "Memset", "constant", T_M, EM_A, "0" },
	{ "Dropout", "is_keep_threshold", T_M, EM_S, "false" },
	{ "StreamShuffle", "mask", T_V, EM_A, "[]" },

	/* DMA: the InstDMA tree */
	DMA_KEYS("DMA"), DMA_RUN_KEYS("Load"), DMA_RUN_KEYS("Save"),
	DMA_RUN_KEYS("DMACopy"), DMA_RUN_KEYS("DMATrigger"),
	UNINIT("Load"), { "Load", "dma_qos", T_E, EM_S, "\"Unassigned\"" },
	UNINIT("Save"), { "Save", "dma_qos", T_E, EM_S, "\"Unassigned\"" },
	{ "DMACopy", "mode", T_E, EM_P, "\"Copy\"" },
	{ "DMACopy", "oob_is_err", T_M, EM_P, "false" },
	{ "DMACopy", "transpose_op", T_E, EM_P, "\"None\"" },
	{ "DMACopy", "constants", T_V, EM_P, "[]" },
	{ "DMACopy", "cce_op", T_E, EM_P, BYPASS },
	{ "DMACopy", "replica_groups", T_V, EM_P, "[]" },
	{ "DMACopy", "remote_notification", T_V, EM_P, "[]" },
	UNINIT("DMACopy"),
	{ "DMACopy", "dma_qos", T_E, EM_P, "\"Unassigned\"" },
	{ "DMACopy", "use_gpsimd_dma", T_B, EM_U, "false" },
	{ "DMATrigger", "dma_blocks", T_V, EM_P, "[]" },
	/* the descriptor tree */
	{ "DMADescriptor", "num_tiling_dimensions", T_M, EM_P, "0" },
	{ "DMADescriptorCopy", "num_tiling_dimensions", T_M, EM_P, "0" },
	UNINIT("DMADescriptorCopy"),
	{ "DMADescriptorCCE", "num_tiling_dimensions", T_M, EM_P, "0" },
	{ "DMADescriptorCCE", "constants", T_V, EM_P, "[]" },
	{ "DMADescriptorCCE", "op", T_E, EM_P, BYPASS },
	{ "DMADescriptorTranspose", "num_tiling_dimensions", T_M, EM_P, "0" },
	{ "DMADescriptorTranspose", "transpose_op", T_E, EM_P, "\"None\"" },
	UNINIT("DMADescriptorTranspose"),
	{ "DMADescriptorReplicate", "num_tiling_dimensions", T_M, EM_P, "0" },
	/* DMABlock: parsed in its constructor; no default is given */
	{ "DMABlock", "dma_trigger", T_X, EM_U, NULL },
	{ "DMABlock", "block_id", T_I, EM_U, NULL },
	{ "DMABlock", "section_start", T_B, EM_U, NULL },
	{ "DMABlock", "priority_class", T_X, EM_U, NULL },
	{ "DMABlock", "remote_notifications", T_V, EM_U, NULL },
	{ "DMABlock", "on_wait", T_X, EM_U, NULL },
	{ "DMABlock", "on_update", T_X, EM_U, NULL },

	/* collective / batch-norm / RNG */
	{ "GetGlobalRankId", "world_size", T_M, EM_A, "0" },
	{ "BNStats", "apply_transpose", T_M, EM_A, "false" },
	{ "BNBackprop", "total_elements", T_F, EM_A, "0" },
	{ "BNBackprop2", "total_elements", T_F, EM_A, "0" },
	{ "Collective", "queue", T_X, EM_U, NULL },
	{ "CollectiveCompute", "queue", T_X, EM_U, NULL },
	{ "CollectiveCompute", "cc_channel", T_O, EM_U, NULL },
	{ "CollectiveCompute", "cc_dim", T_E, EM_S, "\"Free\"" },
	{ "CollectiveCompute", "cc_type_hint", T_E, EM_S, "\"None\"" },
	{ "CollectiveCompute", "stream_id", T_M, EM_P, "0" },
	{ "CollectiveCompute", "src_target_pairs", T_V, EM_P, "[]" },
	UNINIT("CollectiveCompute"),
	{ "CollectiveCompute", "is_local", T_M, EM_P, "false" },
	{ "CollectiveCompute", "pipe_id", T_X, EM_U, NULL },
	{ "CollectiveCompute", "recv_from_rank", T_X, EM_U, NULL },
	{ "CollectiveCompute", "send_to_rank", T_X, EM_U, NULL },
	{ "CollectiveCompute", "initial_corebarrier", T_X, EM_U, NULL },
	{ "CollectiveCompute", "permute_chain", T_V, EM_U, NULL },
	{ "CollectiveCompute", "src1_bitmap", T_X, EM_U, NULL },
	{ "CollectiveCompute", "unique_tensors", T_X, EM_U, NULL },
	{ "CollectiveCompute", "use_gpsimd_dma", T_X, EM_U, NULL },
	{ "CollectiveCompute", "dma_qos", T_X, EM_U, NULL },
	{ "CollectiveSend", "queue", T_X, EM_U, NULL },
	{ "CollectiveSend", "peer_id", T_M, EM_A,
	  "{\"kind\": \"AffExprKind\", \"terms\": [], \"c\": 0}" },
	UNINIT("CollectiveSend"),
	{ "CollectiveRecv", "queue", T_X, EM_U, NULL },
	{ "CollectiveRecv", "peer_id", T_M, EM_A, "0" },
	{ "GetCurProcessingRankID", "iter_id", T_M, EM_A, "0" },
	{ "GetCurProcessingRankID", "channel_id", T_M, EM_A, "0" },
	{ "GetCurProcessingRankID", "stream_id", T_M, EM_S, "0" },
	{ "GetCurProcessingRankID", "replica_groups", T_V, EM_A, "[]" },
	{ "Rand", "random_algorithm", T_E, EM_A, "\"LFSR\"" },
	{ "Rand", "rand_num_steps", T_M, EM_A, "0" },
	{ "Rand", "distribution", T_E, EM_A, "\"Raw\"" },
	{ "Rand", "params", T_V, EM_A, "[]" },
	{ "SetRandState", "rng_engine", T_E, EM_A, "\"Unassigned\"" },

	/* indirect / gather (their InstDMA base as well) */
	DMA_KEYS("ReadVarAddr"), DMA_KEYS("GenericIndirectLoad"),
	DMA_RUN_KEYS("IndirectLoad"), DMA_KEYS("GenericIndirectSave"),
	DMA_KEYS("IndirectSave"), DMA_KEYS("IndirectSaveAccumulate"),
	{ "GenericIndirectLoad", "indirect_dims", T_V, EM_P, "[]" },
	{ "GenericIndirectSave", "indirect_dims", T_V, EM_P, "[]" },
	{ "GenericIndirectSave", "op", T_E, EM_P, BYPASS },
	{ "IndirectLoad", "runtime_semaphore_wait_value", T_M, EM_P, "0" },
	{ "IndirectSave", "runtime_semaphore_wait_value", T_M, EM_P, "0" },
	{ "IndirectSaveAccumulate", "num_indices", T_M, EM_P, "0" },
	{ "IndirectSaveAccumulate", "entry_step_elements", T_M, EM_P, "0" },
	{ "IndirectSaveAccumulate", "op", T_E, EM_P, BYPASS },

	/* control flow */
	{ "CompareAndBranch", "comp_op", T_E, EM_U, NULL },
	{ "CompareAndBranch", "on_true", T_N, EM_U, NULL },
	{ "CompareAndBranch", "on_false", T_N, EM_U, NULL },
	{ "UnconditionalBranch", "target", T_N, EM_U, NULL },
	{ "BranchHint", "hint", T_E, EM_U, NULL },
	{ "BranchHint", "associate_branch", T_N, EM_U, NULL },
	{ "Call", "table_id", T_M, EM_P, "0" },
	{ "Call", "target", T_N, EM_U, NULL },
	{ "Call", "arguments", T_X, EM_U, NULL },
	{ "Loop", "isBasicBlock", T_X, EM_U, NULL },
	{ "Loop", "isParallel", T_X, EM_U, NULL },
	{ "Loop", "LoopAxis", T_O, EM_U, NULL },
	{ "Loop", "unroll", T_X, EM_U, NULL },
	{ "Loop", "registers", T_V, EM_U, NULL },
	{ "DynamicForLoop", "DynamicForLoopAxis", T_O, EM_U, NULL },
	{ "DoWhile", "cond", T_X, EM_U, NULL },

	/* queue / sync */
	{ "GroupResetSemaphores", "mode", T_E, EM_U, NULL },
	{ "GroupResetSemaphores", "sema_group", T_V, EM_P, "[]" },
	{ "Drain", "is_reset_sema", T_M, EM_P, "false" },
	{ "SwitchQueueInstance", "no_rearm", T_M, EM_P, "false" },
	{ "SwitchQueueInstance", "queue", T_N, EM_U, NULL },
	{ "SwitchQueueInstance", "instance", T_N, EM_U, NULL },
	{ "ResetQueueInstance", "queue", T_N, EM_U, NULL },
	{ "ResetQueueInstance", "instance", T_N, EM_U, NULL },
	{ "CoreBarrier", "runtime_semaphore", T_M, EM_P, "0" },
	{ "CoreBarrier", "id", T_M, EM_P, "0" },
	{ "CoreBarrier", "cores", T_V, EM_P, "[]" },

	/* kernels and custom ops */
	{ "CustomOp", "opFunctionName", T_S, EM_U, NULL },
	{ "CustomOp", "opLibFile", T_S, EM_U, NULL },
	{ "CustomOp", "ulib_to_ucode_version", T_X, EM_U, NULL },
	{ "CustomOp", "ulib_to_isa_version", T_X, EM_U, NULL },
	{ "CustomOp", "is_builtin", T_M, EM_P, "false" },
	{ "CustomOp", "srcsShape", T_V, EM_P, "[]" },
	{ "CustomOp", "dstsShape", T_V, EM_P, "[]" },
	{ "BIRKernel", "kernel_name", T_S, EM_U, NULL },
	{ "BIRKernel", "srcs_shape", T_X, EM_U, NULL },
	{ "BIRKernel", "dsts_shape", T_X, EM_U, NULL },
	{ "BIRKernel", "kernel_attrs", T_X, EM_U, NULL },
	{ "BIRKernel", "sb_buf_shape", T_X, EM_U, NULL },
	{ "BIRKernel", "psum_buf_shape", T_X, EM_U, NULL },
	{ "BIRKernel", "auto_cast", T_M, EM_P, "false" },
	{ "BIRKernel", "is_causal", T_M, EM_P, "false" },
	{ "BIRKernel", "fused_rmsnorm", T_M, EM_P, "false" },
	{ "BIRKernel", "norm_type", T_M, EM_P, "0" },
	{ "BIRKernel", "lnc_size", T_M, EM_P, "0" },
	{ "BIRKernel", "store_add", T_M, EM_P, "false" },
	{ "BIRKernel", "quant_kernel", T_M, EM_P, "false" },
	{ "BIRKernel", "output_layout", T_M, EM_P, "0" },
	{ "BIRKernel", "lower_bound", T_X, EM_U, NULL },
	{ "NKIKernel", "func", T_X, EM_U, NULL },
	{ "NKIKernel", "func_args", T_X, EM_U, NULL },
	{ "NKIKernel", "func_outs", T_X, EM_U, NULL },
	{ "NKIKernel", "sb_buf_shape", T_X, EM_U, NULL },
	{ "NKIKernel", "psum_buf_shape", T_X, EM_U, NULL },
	{ "NKIKernel", "address_rotation_scope_val", T_E, EM_U, NULL },
	{ "NKIKernel", "kernel_source_val", T_E, EM_U, NULL },
	{ "NKIKLIRKernel", "klir_binary", T_S, EM_U, NULL },
	{ "NKIKLIRKernel", "kernel_format", T_S, EM_U, NULL },
	{ "NKIKLIRKernel", "nki_binary_version_identifier", T_S, EM_U, NULL },
	{ "NKIKLIRKernel", "enable_device_dump", T_M, EM_P, "false" },
	{ "NKIKLIRKernel", "func_args", T_X, EM_U, NULL },
	{ "NKIKLIRKernel", "func_outs", T_X, EM_U, NULL },
	{ "NKIKLIRKernel", "sb_buf_shape", T_X, EM_U, NULL },
	{ "NKIKLIRKernel", "psum_buf_shape", T_X, EM_U, NULL },
	{ "NKIKLIRKernel", "address_rotation_scope_val", T_E, EM_U, NULL },

	/* misc */
	{ "DevicePrint", "prefix", T_S, EM_U, NULL },
	{ "DevicePrint", "output_buffer", T_E, EM_U, NULL },
	{ "RegisterAlu", "op", T_E, EM_U, NULL },
	{ "RegisterAlu", "is_64bit", T_M, EM_P, "false" },
	{ "InlineASMBytes", "asm_bytes", T_V, EM_P, "[]" },
	{ "InlineASMBytes", "sync_type", T_E, EM_U, NULL },
	{ "InlineASMBytes", "latency_estimate", T_M, EM_U, NULL },
	{ "TensorCompletion", "mode", T_E, EM_U, NULL },
};
#define N_KEYS ((int)(sizeof keys / sizeof keys[0]))

/* Ops that hold nested basic blocks under "blocks". */
static int holds_blocks(const char *op)
{
	return !strcmp(op, "Loop") || !strcmp(op, "DynamicForLoop") ||
	       !strcmp(op, "DoWhile") || !strcmp(op, "DMABlock");
}

static const wkey *find_key(const char *op, const char *key)
{
	for (int i = 0; i < N_KEYS; i++)
		if (!strcmp(keys[i].op, op) && !strcmp(keys[i].key, key))
			return &keys[i];
	return NULL;
}

static int is_header_key(const char *key)
{
	for (size_t i = 0; i < sizeof header_keys / sizeof *header_keys; i++)
		if (!strcmp(header_keys[i], key))
			return 1;
	return 0;
}

/* ---- JSON helpers ------------------------------------------------------ */

/* The fixture's tree; the test fails when it cannot be read. */
static cJSON *read_fixture(const char *family)
{
	char *rel = lm_xasprintf("tests/fixtures/wire/%s.json", family);
	char *p = tu_srcpath(rel);
	char *text = tu_read(p);
	ck_assert_msg(text != NULL, "%s", p);
	cJSON *j = cJSON_Parse(text);
	ck_assert_msg(j != NULL, "%s: not JSON", p);
	free(text);
	free(p);
	free(rel);
	return j;
}

static cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *opcode_of(const cJSON *inst)
{
	const cJSON *o = get(inst, "opcode");
	return cJSON_IsString(o) ? o->valuestring : "";
}

static const char *name_of(const cJSON *inst)
{
	const cJSON *o = get(inst, "name");
	return cJSON_IsString(o) ? o->valuestring : "";
}

/* The instruction named name, at any depth (nested blocks included). */
static cJSON *find_in_blocks(cJSON *blocks, const char *name)
{
	cJSON *b, *i, *r;
	cJSON_ArrayForEach(b, blocks) {
		cJSON_ArrayForEach(i, get(b, "instructions")) {
			if (!strcmp(name_of(i), name))
				return i;
			if ((r = find_in_blocks(get(i, "blocks"), name)))
				return r;
		}
	}
	return NULL;
}

/* An instruction of opcode op among blocks, at any depth (a Break is
** only valid inside a loop's body). */
static int has_opcode(const cJSON *blocks, const char *op)
{
	const cJSON *b, *i;
	cJSON_ArrayForEach(b, blocks)
		cJSON_ArrayForEach(i, get(b, "instructions"))
			if (!strcmp(opcode_of(i), op) ||
			    has_opcode(get(i, "blocks"), op))
				return 1;
	return 0;
}

static cJSON *find_inst(cJSON *root, const char *name)
{
	cJSON *f, *r;
	cJSON_ArrayForEach(f, get(root, "functions"))
		if ((r = find_in_blocks(get(f, "blocks"), name)))
			return r;
	return NULL;
}

/* Every top-level instruction of the fixture, in order (fn(ctx, inst)). */
typedef void (*inst_fn)(void *ctx, const cJSON *root, const cJSON *inst);
static void each_inst(const cJSON *root, inst_fn fn, void *ctx)
{
	cJSON *f, *b, *i;
	cJSON_ArrayForEach(f, get(root, "functions"))
		cJSON_ArrayForEach(b, get(f, "blocks"))
			cJSON_ArrayForEach(i, get(b, "instructions"))
				fn(ctx, root, i);
}

/* A copy of root whose blocks are empty but for the instruction named
** name (which keeps its own nested blocks). */
static cJSON *keep_one(const cJSON *root, const char *name)
{
	cJSON *c = cJSON_Duplicate(root, 1), *f, *b;
	cJSON_ArrayForEach(f, get(c, "functions"))
		cJSON_ArrayForEach(b, get(f, "blocks")) {
			cJSON *list = get(b, "instructions"), *i, *next;
			for (i = list ? list->child : NULL; i; i = next) {
				next = i->next;
				if (strcmp(name_of(i), name))
					cJSON_Delete(cJSON_DetachItemViaPointer(
						list, i));
			}
		}
	return c;
}

/*
** Load the tree's text and save it again; the saved tree, or NULL with
** the load error in err.
*/
static cJSON *load_save(const cJSON *root, lm_error *err)
{
	char *text = cJSON_PrintUnformatted(root), *out = NULL;
	lm_module *m = NULL;
	cJSON *j = NULL;
	size_t n;
	if (lm_module_parse(&m, text, strlen(text), "wire.json", err) == 0 &&
	    lm_module_to_json(m, 0, &out, &n, err) == 0)
		j = cJSON_Parse(out);
	lm_module_free(m);
	free(out);
	free(text);
	return j;
}

/*
** The canonical form of a key's value: dependencies as [name, EdgeKind]
** pairs (a bare name is Flow), and an Iota / AffineSelect pattern pair as
** [step, num] (lncsim writes {"step", "num"} objects, docs/bir-json.md).
*/
static cJSON *canon(const cJSON *key, const cJSON *v)
{
	cJSON *c = cJSON_Duplicate(v, 1), *e;
	if (!strcmp(key->string, "pattern")) {
		cJSON_ArrayForEach(e, c)
			if (cJSON_IsObject(e) && get(e, "step") &&
			    get(e, "num")) {
				cJSON *pair = cJSON_CreateArray();
				cJSON_AddItemToArray(pair, cJSON_Duplicate(
					get(e, "step"), 1));
				cJSON_AddItemToArray(pair, cJSON_Duplicate(
					get(e, "num"), 1));
				cJSON_ReplaceItemViaPointer(c, e, pair);
				e = pair;
			}
		return c;
	}
	if (strcmp(key->string, "dependencies") &&
	    strcmp(key->string, "loop_carried_dependencies"))
		return c;
	cJSON_ArrayForEach(e, c)
		if (cJSON_IsString(e)) {
			cJSON *pair = cJSON_CreateArray();
			cJSON_AddItemToArray(
				pair, cJSON_CreateString(e->valuestring));
			cJSON_AddItemToArray(pair, cJSON_CreateString("Flow"));
			cJSON_ReplaceItemViaPointer(c, e, pair);
			e = pair;
		}
	return c;
}

static int same(const cJSON *key_a, const cJSON *b)
{
	cJSON *x = canon(key_a, key_a), *y = canon(key_a, b);
	int r = cJSON_Compare(x, y, 1);
	cJSON_Delete(x);
	cJSON_Delete(y);
	return r;
}

/* An affine expression object in wire version 2. */
static int is_affine(const cJSON *v, char *err, size_t n)
{
	lm_affine *e = NULL;
	int rc = lm_affine_from_json(&e, v, 2, err, n);
	lm_affine_free(e);
	return rc == 0;
}

/* v has the type t; *why says what it is not. */
static int has_type(const cJSON *v, wtype t, char *why, size_t n)
{
	snprintf(why, n, "wrong type");
	switch (t) {
	case T_M:
		if (cJSON_IsObject(v))
			return is_affine(v, why, n);
		return cJSON_IsNumber(v) || cJSON_IsBool(v);
	case T_M2:
		return cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 &&
		       has_type(v->child, T_M, why, n) &&
		       has_type(v->child->next, T_M, why, n);
	case T_E: case T_S: case T_N: return cJSON_IsString(v);
	case T_F: return cJSON_IsNumber(v);
	case T_B: return cJSON_IsBool(v);
	case T_I:
		return cJSON_IsNumber(v) &&
		       v->valuedouble == (double)(int64_t)v->valuedouble;
	case T_V: return cJSON_IsArray(v);
	case T_O: return cJSON_IsObject(v);
	case T_X: return 1;
	}
	return 0;
}

/* ---- failure collection ------------------------------------------------ */

typedef struct report {
	const char *family;
	lm_buf msgs;
	int n_fail, n_note, n_checked;
} report;

static void LM_PRINTF(2, 3) fail_at(report *r, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s: %s\n", r->family, line);
	if (r->n_fail++ < 40)
		lm_buf_printf(&r->msgs, "\n  %s", line);
}

static void LM_PRINTF(2, 3) note_at(report *r, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s: note (not failed): %s\n", r->family, line);
	r->n_note++;
}

static void finish(report *r)
{
	char msg[8192];
	int n = r->n_fail;
	snprintf(msg, sizeof msg, "%s: %d disagreement%s (%d checked):%s%s",
		 r->family, n, n == 1 ? "" : "s", r->n_checked,
		 lm_buf_cstr(&r->msgs), n > 40 ? "\n  ..." : "");
	lm_buf_free(&r->msgs);
	ck_assert_msg(n == 0, "%s", msg);
}

/* ---- selfcheck: the fixture is what the table says ---------------------- */

static void selfcheck_inst(void *ctx, const cJSON *root, const cJSON *in)
{
	report *r = ctx;
	const char *op = opcode_of(in), *nm = name_of(in);
	const cJSON *k;
	char why[256];
	(void)root;
	for (int i = 0; i < N_KEYS; i++) {
		const wkey *w = &keys[i];
		const cJSON *v;
		if (strcmp(w->op, op))
			continue;
		r->n_checked++;
		if (!(v = get(in, w->key))) {
			fail_at(r, "%s (%s): key '%s' missing", nm, op, w->key);
			continue;
		}
		if (!has_type(v, w->type, why, sizeof why))
			fail_at(r, "%s (%s): key '%s': %s", nm, op, w->key,
				why);
		if (w->dflt) {
			cJSON *d = cJSON_Parse(w->dflt);
			ck_assert_msg(d != NULL, "%s.%s: %s", op, w->key,
				      w->dflt);
			if (cJSON_Compare(d, v, 1))
				fail_at(r, "%s (%s): key '%s' at its default",
					nm, op, w->key);
			cJSON_Delete(d);
		}
	}
	cJSON_ArrayForEach(k, in) {
		if (is_header_key(k->string) || find_key(op, k->string) ||
		    (holds_blocks(op) && !strcmp(k->string, "blocks")))
			continue;
		fail_at(r, "%s (%s): key '%s' is no key of the opcode", nm, op,
			k->string);
	}
	for (const char *const *h = header_keys + 2; h < header_keys + 8; h++)
		if (!get(in, *h))
			fail_at(r, "%s (%s): header key '%s' missing", nm, op,
				*h);
}

/* Every key of the family's opcodes, every header key somewhere, every
** EdgeKind somewhere, an affine value somewhere. */
START_TEST(test_selfcheck)
{
	report r = { families[_i], LM_BUF_INIT, 0, 0, 0 };
	cJSON *root = read_fixture(families[_i]);
	each_inst(root, selfcheck_inst, &r);
	for (int o = 0; o < N_OPCODES; o++) {
		if (strcmp(opcodes[o].family, families[_i]))
			continue;
		const lm_opinfo *info = lm_op_info(o);
		/* ops.def agrees with this file's roster */
		ck_assert_msg(info && !strcmp(info->name, opcodes[o].name),
			      "ordinal %d: %s", o, opcodes[o].name);
		ck_assert_msg(!strcasecmp(lm_opfamily_name(info->family),
					  opcodes[o].family), "%s: family %s",
			      opcodes[o].name, lm_opfamily_name(info->family));
		int found = 0;
		cJSON *f;
		cJSON_ArrayForEach(f, get(root, "functions"))
			found |= has_opcode(get(f, "blocks"), opcodes[o].name);
		if (!found)
			fail_at(&r, "no %s instruction", opcodes[o].name);
	}
	char *text = cJSON_PrintUnformatted(root);
	static const char *const wanted[] = {
		"\"Ordered\"]", "\"Anti\"]", "\"Output\"]", "\"Flow\"]",
		"\"AffExprKind\"", "\"loop_carried_dependencies\"",
		"\"unroll_dependencies\"", "\"sync_info\"",
		"\"indirection_ins\"",
		"\"debug\"", "\"loopnest\"", "\"predicates\"", "\"order\"",
		"\"Internal\"", "\"Penguin\"", "\"NKI\"",
	};
	for (size_t w = 0; w < sizeof wanted / sizeof *wanted; w++)
		if (!strstr(text, wanted[w]))
			fail_at(&r, "nothing says %s", wanted[w]);
	free(text);
	cJSON_Delete(root);
	finish(&r);
}
END_TEST

/* This file's roster is the loader's: 110 names at their ordinals. */
START_TEST(test_roster)
{
	ck_assert_int_eq(N_OPCODES, 110);
	ck_assert_int_eq(LM_IT_COUNT, 110);
	for (int o = 0; o < N_OPCODES; o++)
		ck_assert_int_eq(lm_it_parse(opcodes[o].name), o);
}
END_TEST

/* ---- roundtrip, verify -------------------------------------------------- */

START_TEST(test_roundtrip)
{
	char *rel = lm_xasprintf("tests/fixtures/wire/%s.json", families[_i]);
	char *p = tu_srcpath(rel), *t1 = NULL, *t2 = NULL;
	lm_module *m1 = NULL, *m2 = NULL;
	lm_error err;
	char where[256] = "";
	size_t n1, n2;
	ck_assert_msg(lm_module_load(&m1, p, &err) == 0, "%s", err.msg);
	ck_assert(lm_module_to_json(m1, 1, &t1, &n1, &err) == 0);
	ck_assert_msg(lm_module_parse(&m2, t1, n1, p, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(lm_module_compare(m1, m2, where, sizeof where) == 0,
		      "load(save(load(x))) differs at %s", where);
	ck_assert(lm_module_to_json(m2, 1, &t2, &n2, &err) == 0);
	ck_assert_uint_eq(n1, n2);
	ck_assert_msg(memcmp(t1, t2, n1) == 0, "save is not stable");
	lm_module_free(m1);
	lm_module_free(m2);
	free(t1);
	free(t2);
	free(p);
	free(rel);
}
END_TEST

START_TEST(test_verify)
{
	char *rel = lm_xasprintf("tests/fixtures/wire/%s.json", families[_i]);
	char *p = tu_srcpath(rel);
	lm_module *m = NULL;
	lm_error err;
	lm_verify_opts vo = { 0 };
	int rc = lm_module_load(&m, p, &err);
	if (rc == 0)
		rc = lm_verify(m, &vo, &err);
	lm_module_free(m);
	free(p);
	free(rel);
	ck_assert_msg(rc == 0, "%s", err.msg);
}
END_TEST

/* ---- keys: every key comes back with its value --------------------------- */

static void keys_inst(void *ctx, const cJSON *root, const cJSON *in)
{
	report *r = ctx;
	const char *nm = name_of(in), *op = opcode_of(in);
	lm_error err;
	cJSON *sub = keep_one(root, nm), *back = load_save(sub, &err);
	const cJSON *k, *out = back ? find_inst(back, nm) : NULL;
	r->n_checked++;
	if (!back) {
		fail_at(r, "%s (%s): does not load: %s", nm, op, err.msg);
		goto done;
	}
	if (!out) {
		fail_at(r, "%s (%s): not written back", nm, op);
		goto done;
	}
	cJSON_ArrayForEach(k, in) {
		const cJSON *v = get(out, k->string);
		if (!v) {
			fail_at(r, "%s (%s): key '%s' lost", nm, op, k->string);
		} else if (!same(k, v)) {
			char *a = cJSON_PrintUnformatted(k);
			char *b = cJSON_PrintUnformatted(v);
			fail_at(r, "%s (%s): key '%s': wrote %.200s for %.200s",
				nm, op, k->string, b, a);
			free(a);
			free(b);
		}
	}
	cJSON_ArrayForEach(k, out)
		if (!get(in, k->string)) {
			char *b = cJSON_PrintUnformatted(k);
			fail_at(r, "%s (%s): key '%s' written (%.200s), not in "
				"the input", nm, op, k->string, b);
			free(b);
		}
done:
	cJSON_Delete(back);
	cJSON_Delete(sub);
}

START_TEST(test_keys)
{
	report r = { families[_i], LM_BUF_INIT, 0, 0, 0 };
	cJSON *root = read_fixture(families[_i]);
	each_inst(root, keys_inst, &r);
	cJSON_Delete(root);
	finish(&r);
}
END_TEST

/* ---- defaults: skip-default and always-emitted, key by key --------------- */

static void defaults_inst(void *ctx, const cJSON *root, const cJSON *in)
{
	report *r = ctx;
	const char *nm = name_of(in), *op = opcode_of(in);
	for (int i = 0; i < N_KEYS; i++) {
		const wkey *w = &keys[i];
		lm_error err;
		if (strcmp(w->op, op) || w->em == EM_U ||
		    (!w->dflt && w->em == EM_A))
			continue;
		r->n_checked++;
		cJSON *sub = keep_one(root, nm), *x = find_inst(sub, nm);
		if (w->dflt)
			cJSON_ReplaceItemInObjectCaseSensitive(
				x, w->key, cJSON_Parse(w->dflt));
		else
			cJSON_DeleteItemFromObjectCaseSensitive(x, w->key);
		cJSON *back = load_save(sub, &err);
		const cJSON *out = back ? find_inst(back, nm) : NULL;
		const cJSON *v = out ? get(out, w->key) : NULL;
		const char *what = w->dflt ? w->dflt : "(left out)";
		char *got = v ? cJSON_PrintUnformatted(v) : NULL;
		if (!back)
			fail_at(r, "%s (%s): %s = %s does not load: %s", nm, op,
				w->key, what, err.msg);
		else if (!out)
			fail_at(r, "%s (%s): not written back", nm, op);
		else if (w->em == EM_A && !v)
			fail_at(r, "%s (%s): always-emitted key '%s' not "
				"written at its default %s", nm, op, w->key,
				what);
		else if (w->em == EM_A && !cJSON_Compare(v, get(x, w->key), 1))
			fail_at(r, "%s (%s): '%s' = %s written as %s", nm, op,
				w->key, what, got);
		else if (w->em == EM_S && v)
			fail_at(r, "%s (%s): skip-default key '%s' written at "
				"its default (%s for %s)", nm, op, w->key, got,
				what);
		else if (w->em == EM_P && v)
			note_at(r, "%s (%s): '%s' written at its default (%s "
				"for %s)", nm, op, w->key, got, what);
		free(got);
		cJSON_Delete(back);
		cJSON_Delete(sub);
	}
}

START_TEST(test_defaults)
{
	report r = { families[_i], LM_BUF_INIT, 0, 0, 0 };
	cJSON *root = read_fixture(families[_i]);
	each_inst(root, defaults_inst, &r);
	cJSON_Delete(root);
	finish(&r);
}
END_TEST

/* ---- MaybeAffine keys take an expression ---------------------------- */

/*
** A MaybeAffine value is a scalar or an affine expression object under the
** same key (the compiler's MaybeAffine quirk); every such key of every
** instruction, set to an expression, loads and comes back as it was.
*/
static void affine_inst(void *ctx, const cJSON *root, const cJSON *in)
{
	static const char expr[] =
		"{\"kind\": \"AffExprKind\", \"terms\": [{\"idx\": {\"kind\":"
		" \"AffIVKind\", \"axis\": \"k\"}, \"coeff\": 3}], \"c\": 2}";
	report *r = ctx;
	const char *nm = name_of(in), *op = opcode_of(in);
	for (int i = 0; i < N_KEYS; i++) {
		const wkey *w = &keys[i];
		lm_error err;
		if (strcmp(w->op, op) || (w->type != T_M && w->type != T_M2))
			continue;
		r->n_checked++;
		cJSON *sub = keep_one(root, nm), *x = find_inst(sub, nm);
		cJSON *v = cJSON_Parse(expr);
		if (w->type == T_M2) {
			cJSON *pair = cJSON_CreateArray();
			cJSON_AddItemToArray(pair, v);
			cJSON_AddItemToArray(pair, cJSON_Parse(expr));
			v = pair;
		}
		cJSON_ReplaceItemInObjectCaseSensitive(x, w->key, v);
		cJSON *back = load_save(sub, &err);
		const cJSON *out = back ? find_inst(back, nm) : NULL;
		const cJSON *got = out ? get(out, w->key) : NULL;
		if (!back)
			fail_at(r, "%s (%s): '%s' as an expression: %s", nm, op,
				w->key, err.msg);
		else if (!got || !cJSON_Compare(got, v, 1))
			fail_at(r, "%s (%s): '%s' as an expression not written "
				"back", nm, op, w->key);
		cJSON_Delete(back);
		cJSON_Delete(sub);
	}
}

START_TEST(test_affine_values)
{
	report r = { families[_i], LM_BUF_INIT, 0, 0, 0 };
	cJSON *root = read_fixture(families[_i]);
	each_inst(root, affine_inst, &r);
	cJSON_Delete(root);
	finish(&r);
}
END_TEST

/* ---- the 110 opcode names ------------------------------------------------ */

/* The fixture instruction of opcode op, in a tree the caller deletes. */
static cJSON *fixture_inst(const char *family, const char *op,
			   cJSON **root)
{
	cJSON *f, *b, *i;
	*root = read_fixture(family);
	cJSON_ArrayForEach(f, get(*root, "functions"))
		cJSON_ArrayForEach(b, get(f, "blocks"))
			cJSON_ArrayForEach(i, get(b, "instructions"))
				if (!strcmp(opcode_of(i), op))
					return i;
	return NULL;
}

/*
** One module of 110 header-only instructions, one per opcode name. An
** opcode the loader wants a key of ("missing key 'k'") gets that key from
** its fixture instruction, until it loads; every opcode must then load and
** come back under its own name.
*/
START_TEST(test_opcode_names)
{
	static const char head[] =
		"{\"version\": 2, \"arch\": \"gen3\", \"functions\":"
		" [{\"name\": \"main\", \"allocations\": [], \"blocks\":"
		" [{\"name\": \"b0\","
		" \"instructions\": []}]}]}";
	cJSON *mod = cJSON_Parse(head);
	cJSON *list = get(cJSON_GetArrayItem(get(cJSON_GetArrayItem(
		get(mod, "functions"), 0), "blocks"), 0), "instructions");
	report r = { "opcodes", LM_BUF_INIT, 0, 0, 0 };
	for (int o = 0; o < N_OPCODES; o++) {
		char nm[16];
		snprintf(nm, sizeof nm, "i%d", o);
		cJSON *in = cJSON_CreateObject();
		cJSON_AddStringToObject(in, "opcode", opcodes[o].name);
		cJSON_AddStringToObject(in, "name", nm);
		cJSON_AddStringToObject(in, "origin", "Internal");
		cJSON_AddStringToObject(in, "engine", "SP");
		cJSON_AddNumberToObject(in, "engine_id", 0);
		cJSON_AddNumberToObject(in, "scheduled_start", 0);
		cJSON_AddNumberToObject(in, "scheduled_end", 0);
		cJSON_AddItemToObject(in, "optin_passes", cJSON_CreateArray());
		cJSON_AddItemToObject(in, "ins", cJSON_CreateArray());
		cJSON_AddItemToObject(in, "outs", cJSON_CreateArray());
		/* alone first, to learn the keys the loader wants */
		for (int tries = 0; tries < 8; tries++) {
			cJSON *one = cJSON_Parse(head), *fr = NULL;
			cJSON_AddItemToArray(get(cJSON_GetArrayItem(get(
				cJSON_GetArrayItem(get(one, "functions"), 0),
				"blocks"), 0), "instructions"),
				cJSON_Duplicate(in, 1));
			lm_error err;
			cJSON *back = load_save(one, &err);
			cJSON_Delete(one);
			if (back) {
				cJSON_Delete(back);
				break;
			}
			const char *mk = strstr(err.msg, "missing key '");
			cJSON *fi = fixture_inst(opcodes[o].family,
						 opcodes[o].name, &fr);
			char key[64] = "";
			if (mk)
				sscanf(mk + 13, "%63[^']", key);
			if (!mk || !fi || !get(fi, key)) {
				cJSON_Delete(fr);
				break; /* the load below reports it */
			}
			fprintf(stderr, "# %s: the loader wants '%s'\n",
				opcodes[o].name, key);
			cJSON_AddItemToObject(in, key,
					      cJSON_Duplicate(get(fi, key), 1));
			cJSON_Delete(fr);
		}
		cJSON_AddItemToArray(list, in);
	}
	for (int o = 0; o < N_OPCODES; o++) {
		char nm[16];
		lm_error err;
		snprintf(nm, sizeof nm, "i%d", o);
		cJSON *one = keep_one(mod, nm);
		cJSON *back = load_save(one, &err);
		const cJSON *out = back ? find_inst(back, nm) : NULL;
		r.n_checked++;
		if (!back)
			fail_at(&r, "%s: %s", opcodes[o].name, err.msg);
		else if (!out || strcmp(opcode_of(out), opcodes[o].name))
			fail_at(&r, "%s: written back as '%s'", opcodes[o].name,
				out ? opcode_of(out) : "(nothing)");
		cJSON_Delete(back);
		cJSON_Delete(one);
	}
	/* and all of them in one module */
	if (!r.n_fail) {
		lm_error err;
		cJSON *back = load_save(mod, &err);
		ck_assert_msg(back != NULL, "%s", err.msg);
		cJSON_Delete(back);
	}
	cJSON_Delete(mod);
	finish(&r);
}
END_TEST

/* ---- the header's emit guards -------------------------------------------- */

/*
** A NoOp with the key k set to v (NULL: left out), loaded and saved: the
** saved instruction.
*/
static cJSON *header_case(const char *k, const char *v, cJSON **back)
{
	static const char text[] =
		"{\"version\": 2, \"arch\": \"gen3\", \"functions\":"
		" [{\"name\": \"main\", \"allocations\": [], \"blocks\":"
		" [{\"name\": \"b0\","
		" \"instructions\": [{\"opcode\": \"NoOp\", \"name\": \"n0\","
		" \"engine\": \"SP\"}, {\"opcode\": \"NoOp\", \"name\": \"n\","
		" \"origin\": \"NKI\", \"engine\": \"SP\", \"engine_id\": 1,"
		" \"scheduled_start\": 2, \"scheduled_end\": 3,"
		" \"optin_passes\": [\"p\"], \"ins\": [], \"outs\": []}]}]}]}";
	cJSON *root = cJSON_Parse(text), *in = find_inst(root, "n");
	lm_error err;
	cJSON_DeleteItemFromObjectCaseSensitive(in, k);
	if (v)
		cJSON_AddItemToObject(in, k, cJSON_Parse(v));
	*back = load_save(root, &err);
	cJSON_Delete(root);
	ck_assert_msg(*back != NULL, "%s = %s: %s", k, v ? v : "-", err.msg);
	return find_inst(*back, "n");
}

/* Nine header keys are always written; the other ten only when set
** (the compiler's writer of the common header). */
START_TEST(test_header_guards)
{
	static const struct { const char *key, *set; int written; } cases[] = {
		{ "origin", NULL, 1 }, { "engine_id", NULL, 1 },
		{ "scheduled_start", NULL, 1 }, { "scheduled_end", NULL, 1 },
		/* always written by the compiler, but the pass names of its
		   default mask are not documented: lncsim writes the key
		   when it read one, so an absent key stays absent (the
		   reader's default), docs/bir-json.md */
		{ "optin_passes", NULL, 0 }, { "optin_passes", "[]", 1 },
		{ "ins", NULL, 1 }, { "outs", NULL, 1 },
		{ "dependencies", "[]", 0 },
		{ "loop_carried_dependencies", "[]", 0 },
		{ "unroll_dependencies", "[]", 0 },
		{ "indirection_ins", "[]", 0 }, { "loopnest", "[]", 0 },
		{ "predicates", "[]", 0 }, { "order", "[]", 0 },
		{ "sync_info", NULL, 0 }, { "debug", NULL, 0 },
	};
	report r = { "header", LM_BUF_INIT, 0, 0, 0 };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *back, *out = header_case(cases[i].key, cases[i].set,
						&back);
		int has = get(out, cases[i].key) != NULL;
		r.n_checked++;
		if (has != cases[i].written)
			fail_at(&r, "'%s' %s: %s", cases[i].key,
				cases[i].set ? cases[i].set : "left out",
				has ? "written, the header skips it"
				    : "not written, the header always has it");
		cJSON_Delete(back);
	}
	/* a bare dependency name reads as Flow and is written as a pair */
	cJSON *back, *out = header_case("dependencies", "[\"n0\"]", &back);
	cJSON *want = cJSON_Parse("[[\"n0\", \"Flow\"]]");
	ck_assert(cJSON_Compare(get(out, "dependencies"), want, 1));
	cJSON_Delete(want);
	cJSON_Delete(back);
	finish(&r);
}
END_TEST

/* ---- required keys, walking fields.def --------------------------------- */

/* The instruction of the IR named name (top-level blocks). */
static lm_inst *ir_inst(lm_module *m, const char *name)
{
	for (int f = 0; f < m->n_functions; f++)
		for (int b = 0; b < m->functions[f].n_blocks; b++) {
			lm_block *bl = &m->functions[f].blocks[b];
			for (int i = 0; i < bl->n_insts; i++)
				if (bl->insts[i].name &&
				    !strcmp(bl->insts[i].name, name))
					return &bl->insts[i];
		}
	return NULL;
}

/*
** This one reads the field table on purpose: for every row that requires
** its key (REQ; NEED on an opcode lncsim models) of every opcode, the
** opcode's fixture instruction without the key does not load, and the
** message names the instruction, the opcode and the key. A required key
** without a default that the IR carries, taken out of a loaded module, is
** the verifier's "OPCODE needs KEY". A new required row is covered as
** soon as its fixture has the key (and fails here until it does).
*/
START_TEST(test_required_keys)
{
	report r = { "required", LM_BUF_INIT, 0, 0, 0 };
	for (int it = 0; it < LM_IT_COUNT; it++) {
		const lm_opinfo *o = lm_op_info(it);
		int modelled = lm_opcode_parse(o->name) != LM_OP_OTHER;
		for (int k = 0; k < o->n_fields; k++) {
			const lm_field *f = o->fields[k];
			cJSON *root = NULL, *fi, *sub, *back;
			lm_error err;
			char want[200];
			if (!lm_field_required(f, modelled))
				continue;
			r.n_checked++;
			fi = fixture_inst(opcodes[it].family, o->name, &root);
			if (!fi || !get(fi, f->key)) {
				fail_at(&r, "%s: the fixture has no '%s'",
					o->name, f->key);
				cJSON_Delete(root);
				continue;
			}
			sub = keep_one(root, name_of(fi));
			cJSON_DeleteItemFromObjectCaseSensitive(
				find_inst(sub, name_of(fi)), f->key);
			back = load_save(sub, &err);
			snprintf(want, sizeof want, "instruction %s: %s: missing "
				 "key '%s'", name_of(fi), o->name, f->key);
			if (back)
				fail_at(&r, "%s: loads without '%s'", o->name,
					f->key);
			else if (!strstr(err.msg, want))
				fail_at(&r, "%s without '%s': %s (expected "
					"\"%s\")", o->name, f->key, err.msg,
					want);
			cJSON_Delete(back);
			cJSON_Delete(sub);
			if (!lm_field_has_default(f)) {
				/* the verifier, on the module the loader made */
				char *text = cJSON_PrintUnformatted(root);
				lm_module *m = NULL;
				lm_inst *in;
				cJSON *x = NULL;
				lm_verify_opts vo = { 0 };
				ck_assert_int_eq(lm_module_parse(&m, text,
					strlen(text), "wire.json", &err), 0);
				in = ir_inst(m, name_of(fi));
				if (in && in->extra)
					x = cJSON_DetachItemFromObjectCaseSensitive(
						in->extra, f->key);
				snprintf(want, sizeof want, "%s %s: %s needs %s",
					 it == LM_IT_Loop ? "loop" : "instruction",
					 name_of(fi), o->name, f->key);
				if (x && lm_verify(m, &vo, &err) == 0)
					fail_at(&r, "%s: verifies without '%s'",
						o->name, f->key);
				else if (x && !strstr(err.msg, want))
					fail_at(&r, "%s without '%s': %s "
						"(expected \"%s\")", o->name,
						f->key, err.msg, want);
				cJSON_Delete(x);
				lm_module_free(m);
				cJSON_free(text);
			}
			cJSON_Delete(root);
		}
	}
	ck_assert_int_gt(r.n_checked, 60);
	finish(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wire");
	lm_json_hooks();

	TCase *tf = tcase_create("fixtures");
	tcase_set_timeout(tf, 60);
	tcase_add_test(tf, test_roster);
	tcase_add_loop_test(tf, test_selfcheck, 0, N_FAMILIES);
	suite_add_tcase(s, tf);

	TCase *tr = tcase_create("roundtrip");
	tcase_set_timeout(tr, 120);
	tcase_add_loop_test(tr, test_roundtrip, 0, N_FAMILIES);
	tcase_add_loop_test(tr, test_verify, 0, N_FAMILIES);
	tcase_add_loop_test(tr, test_keys, 0, N_FAMILIES);
	suite_add_tcase(s, tr);

	TCase *td = tcase_create("defaults");
	tcase_set_timeout(td, 300);
	tcase_add_loop_test(td, test_defaults, 0, N_FAMILIES);
	tcase_add_loop_test(td, test_affine_values, 0, N_FAMILIES);
	suite_add_tcase(s, td);

	TCase *to = tcase_create("opcodes");
	tcase_set_timeout(to, 120);
	tcase_add_test(to, test_opcode_names);
	tcase_add_test(to, test_header_guards);
	suite_add_tcase(s, to);

	TCase *tq = tcase_create("required");
	tcase_set_timeout(tq, 120);
	tcase_add_test(tq, test_required_keys);
	suite_add_tcase(s, tq);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

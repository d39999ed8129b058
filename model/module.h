/*
** module.h -- the lncsim IR: a BIR v2 module in memory.
**
** Ownership: a module owns everything reachable from it (strings, arrays,
** the cJSON "extra" objects holding keys the model does not interpret).
** lm_module_free releases it all. Nothing here points into another module.
**
** Every object keeps an `extra` cJSON object (NULL when empty) with the
** JSON keys it did not interpret; the writer emits them back unchanged, so
** load -> save carries unknown fields through.
*/
#ifndef LNCSIM_MODULE_H
#define LNCSIM_MODULE_H

#include <stdint.h>
#include "common.h"
#include "dtype.h"
#include "arch.h"

struct cJSON;
struct lm_memloc;

/* ---- enums with their exact BIR spellings -------------------------------- */

typedef enum lm_opcode {
	LM_OP_INVALID = 0,
	LM_OP_DMACOPY, LM_OP_LOAD, LM_OP_SAVE,
	LM_OP_MATMULT,
	LM_OP_ACTIVATION,
	LM_OP_TENSORTENSOR,
	LM_OP_TENSORSCALAR,
	LM_OP_TENSORCOPY,
	LM_OP_MEMSET,
	LM_OP_IOTA,
	LM_OP_AFFINESELECT, /* TensorScalarAffineSelect */
	LM_OP_NOOP,
	LM_OP_COREBARRIER,
	LM_OP_CALL,
	LM_OP_RETURN,
	LM_OP_SWITCHQUEUE,  /* SwitchQueueInstance */
	LM_OP_NKIKERNEL,    /* IT55 */
	LM_OP_NKIKLIRKERNEL,/* IT56 */
	LM_OP_BIRKERNEL,    /* IT54 */
	LM_OP_LOOP,
	/* control flow */
	LM_OP_DYNLOOP,      /* DynamicForLoop */
	LM_OP_DOWHILE,      /* DoWhile */
	LM_OP_CMPBRANCH,    /* CompareAndBranch */
	LM_OP_UBRANCH,      /* UnconditionalBranch */
	LM_OP_BRANCHHINT,   /* BranchHint */
	LM_OP_BREAK,
	LM_OP_EXIT,
	LM_OP_HALT,
	/* registers */
	LM_OP_REGALU,       /* RegisterAlu */
	LM_OP_REGMOVE,      /* RegisterMove */
	LM_OP_TENSORLOAD,   /* TensorLoad: memory -> register */
	LM_OP_TENSORSAVE,   /* TensorSave: register -> memory */
	/* synchronization */
	LM_OP_EVENTSEM,     /* EventSemaphore */
	LM_OP_GROUPRESET,   /* GroupResetSemaphores */
	LM_OP_AEBARRIER,    /* AllEngineBarrier */
	LM_OP_DRAIN,
	/* DMA blocks */
	LM_OP_DMATRIGGER,   /* DMATrigger */
	LM_OP_DMABLOCK,     /* DMABlock */
	LM_OP_DESC_COPY,    /* DMADescriptorCopy */
	LM_OP_DESC_CCE,     /* DMADescriptorCCE */
	LM_OP_DESC_TRANSPOSE, /* DMADescriptorTranspose */
	LM_OP_DESC_REPLICATE, /* DMADescriptorReplicate */
	LM_OP_RESETQUEUE,   /* ResetQueueInstance */
	/* misc */
	LM_OP_TCOMPLETION,  /* TensorCompletion */
	LM_OP_TCDYNSRC,     /* TensorCopyDynamicSrc */
	LM_OP_TCDYNDST,     /* TensorCopyDynamicDst */
	/* compute */
	LM_OP_TENSORREDUCE, /* TensorReduce */
	LM_OP_TSPTR,        /* TensorScalarPtr */
	LM_OP_RECIPROCAL,   /* Reciprocal */
	LM_OP_STREAMTRANSPOSE, /* StreamTranspose */
	LM_OP_SELECT,       /* Select */
	LM_OP_COPYPRED,     /* CopyPredicated */
	LM_OP_MAX8,         /* Max (the top-8 values) */
	LM_OP_MAXINDEX,     /* MaxIndex */
	LM_OP_MATCHREPLACE, /* MatchReplace */
	LM_OP_MIMR,         /* MaxIndexAndMatchReplace */
	LM_OP_BNSTATS,      /* BNStats */
	LM_OP_BNAGGR,       /* BNStatsAggregate */
	LM_OP_RANGESELECT,  /* RangeSelect */
	LM_OP_EXPONENTIAL,  /* Exponential */
	LM_OP_ACTREADACC,   /* ActivationReadAccumulator */
	LM_OP_READACTACC,   /* ReadActivationAccumulator */
	LM_OP_STREAMSHUFFLE, /* StreamShuffle */
	LM_OP_DVEREADACC,   /* DveReadAccumulator */
	LM_OP_TSCACHE,      /* TensorScalarCache (refused with a note) */
	/* indirect (index-driven) moves */
	LM_OP_INDIRECTLOAD, /* IndirectLoad */
	LM_OP_GATHER,       /* Gather */
	LM_OP_INDIRECTCOPY, /* IndirectCopy */
	LM_OP_OTHER,        /* a schema opcode the model carries but does not run */
	LM_OP_COUNT
} lm_opcode;

/* A set of opcodes: bit 1 << op (LM_OPM). */
__extension__ typedef unsigned __int128 lm_opmask; /* GCC and clang, 64-bit targets */
#define LM_OPM(x) ((lm_opmask)1 << LM_OP_##x)
typedef char lm_opcodes_fit_mask[LM_OP_COUNT <= 128 ? 1 : -1];

const char *lm_opcode_name(lm_opcode op); /* "Matmult", ... ("" for OTHER) */
struct lm_inst;
/* The instruction's InstructionType ordinal (optable.h); -1 for an opcode
** lncsim reads that is none of the 110. */
int lm_inst_it(const struct lm_inst *in);
/* Known BIR opcode string -> enum; LM_OP_OTHER for a schema opcode that is
** carried through; LM_OP_INVALID for a string that is no BIR opcode. */
lm_opcode lm_opcode_parse(const char *s);
int lm_opcode_is_dma(lm_opcode op);
/* Does op move data on a DMA queue (its `queue`): a DMA or IndirectLoad? */
int lm_opcode_uses_queue(lm_opcode op);

typedef enum lm_aluop {
	LM_ALU_INVALID = 0,
	LM_ALU_ABS, LM_ALU_ADD, LM_ALU_ARITH_SHIFT_LEFT, LM_ALU_ARITH_SHIFT_RIGHT,
	LM_ALU_AVERAGE, LM_ALU_BITWISE_AND, LM_ALU_BITWISE_NOT, LM_ALU_BITWISE_OR,
	LM_ALU_BITWISE_XOR, LM_ALU_BYPASS, LM_ALU_DIVIDE, LM_ALU_IS_EQUAL,
	LM_ALU_IS_GE, LM_ALU_IS_GT, LM_ALU_IS_LE, LM_ALU_IS_LT, LM_ALU_LOGICAL_AND,
	LM_ALU_LOGICAL_OR, LM_ALU_LOGICAL_SHIFT_LEFT, LM_ALU_LOGICAL_SHIFT_RIGHT,
	LM_ALU_LOGICAL_XOR, LM_ALU_MAX, LM_ALU_MIN, LM_ALU_MOD, LM_ALU_MULT,
	LM_ALU_NOT_EQUAL, LM_ALU_POW, LM_ALU_RSQRT, LM_ALU_SUBTRACT,
	/* read and written; the simulator refuses them by name */
	LM_ALU_ABS_MAX, LM_ALU_ABS_MIN, LM_ALU_ELEMWISE_MUL, LM_ALU_MOD_INT,
	LM_ALU_COUNT
} lm_aluop;
const char *lm_aluop_name(lm_aluop op);
lm_aluop lm_aluop_parse(const char *s);

typedef enum lm_actfunc {
	LM_ACT_INVALID = 0,
	LM_ACT_ABS, LM_ACT_ABS_RECIPROCAL_SQRT, LM_ACT_ARCTAN, LM_ACT_COPY,
	LM_ACT_DERIVATIVE_ERF, LM_ACT_DERIVATIVE_GELU, LM_ACT_DERIVATIVE_SILU,
	LM_ACT_DSQRT, LM_ACT_ERF, LM_ACT_EXP, LM_ACT_GELU, LM_ACT_GELU_APPRX_SIGMOID,
	LM_ACT_GELU_APPRX_TANH, LM_ACT_IDENTITY, LM_ACT_IS_FINITE, LM_ACT_LN,
	LM_ACT_LN_PRIME, LM_ACT_LRELU, LM_ACT_MEMSETZERO, LM_ACT_MISH, LM_ACT_PRELU,
	LM_ACT_RECIPROCAL, LM_ACT_RELU, LM_ACT_RSQRT, LM_ACT_SIGMOID, LM_ACT_SIGN,
	LM_ACT_SILU, LM_ACT_SIN, LM_ACT_SOFTPLUS, LM_ACT_SQRT, LM_ACT_SQUARE,
	LM_ACT_TANH, LM_ACT_UNKNOWN,
	LM_ACT_COUNT
} lm_actfunc;
const char *lm_actfunc_name(lm_actfunc f);
lm_actfunc lm_actfunc_parse(const char *s);

typedef enum lm_tensorkind {
	LM_TK_INVALID = 0,
	LM_TK_EXTERNAL_INPUT, LM_TK_EXTERNAL_INPUT_PARAMETER, LM_TK_INPUT,
	LM_TK_EXTERNAL_OUTPUT, LM_TK_EXTERNAL_OUTPUT_PARAMETER, LM_TK_OUTPUT,
	LM_TK_CONST, LM_TK_INTERNAL, LM_TK_POINTER, LM_TK_INTERNAL_INTERFACE,
	LM_TK_COUNT
} lm_tensorkind;
const char *lm_tensorkind_name(lm_tensorkind k);
lm_tensorkind lm_tensorkind_parse(const char *s);
int lm_tensorkind_is_ext_input(lm_tensorkind k);  /* ExternalInput(+Parameter) */
int lm_tensorkind_is_ext_output(lm_tensorkind k); /* ExternalOutput(+Parameter) */

typedef enum lm_memtype {
	LM_MT_INVALID = 0,
	LM_MT_UNALLOCATED, LM_MT_INPUT, LM_MT_OUTPUT, LM_MT_DRAM, LM_MT_SB,
	LM_MT_PSUM, LM_MT_RNGSTATE, LM_MT_REG,
	LM_MT_COUNT
} lm_memtype;
const char *lm_memtype_name(lm_memtype t);
lm_memtype lm_memtype_parse(const char *s);
/* DRAM, Input and Output are all DRAM storage. */
int lm_memtype_is_dram(lm_memtype t);

typedef enum lm_funckind {
	LM_FK_REGULAR = 0, LM_FK_DISPATCHER, LM_FK_NKI
} lm_funckind;
const char *lm_funckind_name(lm_funckind k);
int lm_funckind_parse(const char *s); /* -1 when unknown */

/* ---- access patterns and operands --------------------------------------- */

typedef struct lm_appair {
	int64_t step, num;
} lm_appair;

typedef enum lm_argkind {
	LM_ARG_PHYSICAL_AP = 0,
	LM_ARG_IMM,      /* imm_value */
	LM_ARG_OPAQUE    /* symbolic_ap, register_*, imm_array, ...: carried */
} lm_argkind;

typedef struct lm_arg {
	lm_argkind kind;
	lm_dtype dtype;
	char *dtype_str;        /* the dtype string as given (OPAQUE kinds) */
	char *memsetref;        /* allocation name */
	char *memref;           /* memory location name */
	int64_t offset;         /* elements */
	int64_t start_partition;/* extension, default 0 */
	int has_start_partition;
	int n_ap;
	lm_appair *ap;
	double imm;             /* imm_value */
	struct cJSON *extra;    /* OPAQUE: the whole object; else unknown keys */
} lm_arg;

/* Number of elements an access pattern walks (product of nums). */
int64_t lm_arg_count(const lm_arg *a);

/*
** The partition encoding of a physical_ap on SB / PSUM. The wire's access
** pattern walks the memory location as one line of elements, partition
** after partition (pe elements each, pe = its bytes per partition / the
** dtype's size), so the start partition is folded into `offset`:
** offset = start_partition * pe + the element offset within the
** partition. The IR keeps the two apart (offset, start_partition).
** lm_arg_unfold turns a wire operand into the IR's (unless an explicit
** start_partition was given); lm_arg_folded_offset gives the wire offset
** of an IR operand (-1 on overflow).
*/
void lm_arg_unfold(lm_arg *a, int64_t pe);
int64_t lm_arg_folded_offset(const lm_arg *a, int64_t pe);
/* Elements per partition of memory location l for operand a (0 when not
** known: not SB / PSUM, no dims, or a dtype of no size). */
int64_t lm_arg_part_elems(const lm_arg *a, const struct lm_memloc *l);
/*
** The partitions one step of the first pair of an SB / PSUM operand a
** strides: Pattern[0] walks the partitions, its step in elements, so a
** step of k * pe (pe = lm_arg_part_elems) strides k partitions. k for a
** step that is a multiple of pe (0: the same partition again); 1 for a
** pair that walks one partition (num 1), whatever its step; -1 for a
** negative step or one that is no multiple of pe. 1 when l is not SB /
** PSUM or pe is not known (there are no partitions to walk).
*/
int64_t lm_arg_part_step(const lm_arg *a, const struct lm_memloc *l);

/* ---- instructions ------------------------------------------------------ */

/* The kind of a dependency edge (EdgeKind). Every kind orders the later
** instruction after the earlier one's completion. */
enum { LM_EDGE_INVALID = 0, LM_EDGE_ORDERED, LM_EDGE_ANTI, LM_EDGE_OUTPUT,
       LM_EDGE_FLOW, LM_EDGE_COUNT };
const char *lm_edgekind_name(int k);   /* "Flow", ...; "" when out of range */
int lm_edgekind_parse(const char *s);  /* LM_EDGE_INVALID when unknown */

/* Where an instruction came from (NamedObjectOrigin). */
enum { LM_ORIGIN_INTERNAL = 0, LM_ORIGIN_PENGUIN, LM_ORIGIN_NKI,
       LM_ORIGIN_COUNT };
const char *lm_origin_name(int o);
int lm_origin_parse(const char *s);    /* -1 when unknown */

/*
** One entry of sync_info: an on_wait (a wait) or an on_update (an update)
** of an instruction. A semaphore is named (semaphore, the name form) or
** numbered (semaphore NULL: id, the id form: slot id of its core's bank;
** an event id for the event modes). mode is the WaitMode / UpdateMode
** ordinal (LM_WAIT_*, LM_UPD_*), value the threshold (wait_value) or the
** amount (update_value) when has_value. A sem-ge-reg wait compares with
** register regref; from is a wait's provenance (carried); an update with
** has_core targets core's bank. extra: the entry's other keys.
*/
enum { LM_WAIT_EVT_SET_THEN_CLEAR = 0, LM_WAIT_SEM_GE_IMM = 1,
       LM_WAIT_SEM_GE_REG = 2, LM_WAIT_INVALID = 3 };
enum { LM_UPD_EVT_SET = 0, LM_UPD_SEM_ADD_IMM = 1, LM_UPD_SEM_SUB_IMM = 2,
       LM_UPD_SEM_INC = 3, LM_UPD_SEM_DEC = 4, LM_UPD_SEM_WR_IMM = 5,
       LM_UPD_INVALID = 6 };
typedef struct lm_sync {
	char *semaphore;
	int64_t id;
	int mode;
	int has_value;
	int64_t value;
	char *regref;
	char *from;
	int has_core;
	int64_t core;
	struct cJSON *extra;
} lm_sync;

typedef struct lm_kv {
	char *key;   /* kernel formal name */
	char *value; /* caller allocation name */
} lm_kv;

struct lm_block;
struct lm_affine;

/*
** A loop's axis: a Loop's LoopAxis {name, lb, ub, stride}, three integers
** (lb, ub, stride); a DynamicForLoop's DynamicForLoopAxis, three affine
** expressions (lb_e, ub_e, stride_e, owned; the integers unused). name
** NULL when the wire form gives none; extra: the axis object's other
** keys.
*/
typedef struct lm_axis {
	char *name;
	int64_t lb, ub, stride;
	struct lm_affine *lb_e, *ub_e, *stride_e;
	struct cJSON *extra;
} lm_axis;

typedef struct lm_inst {
	char *name;
	lm_opcode op;
	char *opcode_str;       /* the opcode string as given (OTHER) */
	lm_engine engine;
	int n_ins, n_outs;
	lm_arg *ins, *outs;

	/* the common instruction header */
	int origin;             /* LM_ORIGIN_* */
	int64_t engine_id;      /* instance of the engine */
	int64_t sched_start, sched_end; /* scheduled_start / scheduled_end */
	int has_dependencies;
	int n_deps;
	char **deps;
	uint8_t *dep_kind;      /* LM_EDGE_* of deps[i]; NULL: all Flow */
	int n_lc_deps;          /* loop_carried_dependencies */
	char **lc_deps;
	uint8_t *lc_dep_kind;   /* NULL: all Flow */
	/* sync_info: its on_wait entries (wait) and on_update entries
	   (update), its other keys (sync_extra, carried); the legacy "wait"
	   and "signal" keys read as name-form sem-ge-imm / sem-inc entries */
	int n_wait;
	lm_sync *wait;
	int n_update;
	lm_sync *update;
	struct cJSON *sync_extra;

	int has_can_read_uninit;
	int can_read_uninit;

	/* DMA family, SwitchQueueInstance */
	char *queue;
	char *instance_name;
	/* Call */
	char *target;
	/* Matmult: accumulation_flag bit 0 is start_tensor_calc (zero the
	   region, then write), bit 1 stop_tensor_calc (the group's last);
	   any other bit is kept in acc_flag_rest */
	int start_tensor_calc;
	int has_stop_tensor_calc, stop_tensor_calc;
	int acc_flag_rest;
	int64_t psum_zero_region;
	int has_is_transpose, is_transpose;
	/* is_weight_onezero / is_fmap_onezero: the stationary / moving
	   operand holds only 0 and 1 (a promise, checked when it runs) */
	int is_weight_onezero, is_fmap_onezero;
	/* Activation */
	lm_actfunc act_func;
	int has_scale, has_alpha;
	double scale, alpha;
	/* Activation acc, Exponential reduce_cmd: an EngineAccumulationType
	   ordinal (0 Idle); Activation reduce_op (INVALID when absent) */
	int eng_acc;
	lm_aluop reduce_alu;
	/* TensorTensor (op), TensorScalar and TensorScalarPtr (op0/op1),
	   RangeSelect (compare_op0 / compare_op1 in alu0 / alu1),
	   AffineSelect (compare_op), TensorReduce (op) */
	lm_aluop alu, alu0, alu1;
	int has_const0, has_const1; /* TensorScalar */
	double const0, const1;
	int reverse0, reverse1;     /* TensorScalar, TensorScalarPtr */
	/* TensorScalarPtr's other datapaths: scalar_tensor_tensor (ins[2] a
	   tensor like ins[0]) and tensor_tensor_scan (a running value per
	   partition) */
	int is_scalar_tensor_tensor, is_tensor_tensor_scan;
	int reverse_pred;           /* CopyPredicated */
	/* TensorReduce: axis (an AxisListType ordinal), negate,
	   apply_transpose (BNStats: apply_transpose) */
	int reduce_axis;
	int negate, apply_transpose;
	/* Memset */
	char *memset_mode;
	int has_constant, has_value;
	int64_t constant;
	double value;
	/* Iota, AffineSelect */
	int has_base, has_channel_multiplier, has_fill_value;
	int64_t base, channel_multiplier;
	int n_pattern;
	lm_appair *pattern;
	int pattern_as_objects;  /* input used {"step","num"}: write back so */
	double fill_value;       /* also MatchReplace's imm_value and
				    RangeSelect's fill_value */
	/* CoreBarrier */
	int64_t barrier_id;
	int n_cores;
	int64_t *cores;
	char *group;            /* NULL: the instruction's name */
	int has_renumber;
	int renumber;           /* default 1 */
	/* carriers */
	char *kernel_format;    /* IT56 */
	char *klir_binary;      /* IT56 */
	char *func;             /* IT55: callee function name */
	char *kernel_source;    /* IT55 */
	int n_func_args, n_func_outs;
	lm_kv *func_args, *func_outs;
	int has_sb_buf_shape, has_psum_buf_shape;
	int64_t sb_buf_shape[2];
	int64_t psum_buf_shape[3];
	int psum_buf_nested;    /* written [a,[b,c]] */
	/* Loop, DynamicForLoop, DoWhile, DMABlock: the nested body */
	int n_blocks;
	struct lm_block *blocks;
	/* Loop (LoopAxis), DynamicForLoop (DynamicForLoopAxis) */
	int has_axis;
	lm_axis axis;
	/* Loop: its registers (register allocation names) */
	int n_loop_regs;
	char **loop_regs;
	/* DoWhile: cond as an affine expression (owned); NULL when absent or
	   given in another form (a block name: carried in extra) */
	struct lm_affine *cond;
	/* CompareAndBranch: comp_op (BranchCompareOp ordinal), the blocks
	   on_true / on_false; UnconditionalBranch: its target block */
	int comp_op;
	char *on_true, *on_false;
	char *branch_target;
	/* RegisterAlu: op (an AluOpType ordinal: every one, not only those
	   of lm_aluop), is_64bit */
	int reg_alu;
	int is_64bit;
	/* GroupResetSemaphores: the semaphore ids it resets */
	int n_sema_group;
	int64_t *sema_group;
	/* DMATrigger: the DMABlocks it fires (instruction names); a
	   DMABlock's queue is `queue` */
	int n_dma_blocks;
	char **dma_blocks;

	struct cJSON *extra;    /* unknown keys, carried through */

	/* Packed storage (lm_inst_copy_packed), NULL when every field is its
	   own allocation. Its layout is model/'s own: nothing outside reads
	   it (lm_inst_owns, lm_inst_packed_bytes ask). A field may be
	   replaced later (lm_inst_set_str or a fresh allocation);
	   lm_inst_clear frees only what lies outside it. */
	struct lm_inst_pack *pack;
} lm_inst;

/*
** A block argument (a phi): its register (regref, NULL when none is
** given) and the value it takes from each predecessor block, a storage
** name (an allocation, a register, or a memory location). form: how the
** entry was written ([value, block], {"regref", "block"} or {"value",
** "block"}), written back so.
*/
enum { LM_IN_PAIR = 0, LM_IN_REGREF, LM_IN_VALUE };
typedef struct lm_incoming {
	char *value;
	char *block;
	int form;
} lm_incoming;

typedef struct lm_blockarg {
	char *regref;
	int n_incoming;
	lm_incoming *incoming;
	struct cJSON *extra;   /* the argument's other keys */
} lm_blockarg;

typedef struct lm_block {
	char *name;
	int n_insts;
	lm_inst *insts;
	int has_args;          /* "arguments" given (written back, even []) */
	int n_args;
	lm_blockarg *args;
	struct cJSON *extra;
} lm_block;

/* ---- storage ----------------------------------------------------------- */

typedef struct lm_memloc {
	char *name;
	lm_memtype type;
	int64_t addr;     /* bytes: DRAM address, or offset in each partition */
	int n_dims;
	int64_t *dims;    /* [partitions, bytes_per_partition] */
	int64_t bank;
	int64_t base;     /* first partition */
	int allocated;
	struct cJSON *extra;
} lm_memloc;

typedef struct lm_alloc {
	char *name;
	lm_tensorkind kind;
	lm_dtype dtype;
	int n_shape;
	int64_t *tensor_shape;
	char *addr_space;  /* "Local" | "Shared" | NULL */
	char *file;        /* "" or a .npy path relative to the module file */
	int n_memlocs;
	lm_memloc *memlocs;
	/* extensions */
	int has_remote;
	char *remote_name;
	int64_t remote_core;
	char *alias_of;
	struct cJSON *extra;
} lm_alloc;

/* Elements of the tensor (product of tensor_shape; 1 when empty;
** INT64_MAX when the product overflows). */
int64_t lm_alloc_elems(const lm_alloc *a);

typedef struct lm_function {
	char *name;
	int n_attributes;
	char **attributes;
	int has_kind;
	lm_funckind kind;
	int has_core_id;
	int64_t neuron_core_id;
	int n_allocs;
	lm_alloc *allocs;
	int n_blocks;
	lm_block *blocks;
	struct cJSON *extra;
} lm_function;

/* A module semaphore: by name; with has_id, slot id (0..255) of the bank
** of core (has_core; else the module's own core). */
typedef struct lm_semaphore {
	char *name;
	int64_t init;
	int has_id;
	int64_t id;
	int has_core;
	int64_t core;
	struct cJSON *extra;
} lm_semaphore;

typedef struct lm_qinstance {
	char *name;
	char *semaphore;
	struct cJSON *extra;
} lm_qinstance;

typedef struct lm_queue {
	char *name;
	int n_instances;
	lm_qinstance *instances;
	struct cJSON *extra;
} lm_queue;

/* A producer-out -> consumer-in pair of a linked module. */
typedef struct lm_alias {
	char *producer;      /* allocation name (unified) */
	char *consumer;      /* the consumer's view allocation (alias_of) */
	int64_t producer_core, consumer_core;
	struct cJSON *extra;
} lm_alias;

typedef struct lm_module {
	char *path;          /* file it came from ("" if built in memory) */
	char *dir;           /* its directory: base of relative `file` paths */
	int64_t version;
	char *arch;
	char *name;          /* NULL when absent */
	char *display;       /* name, else derived from path (never NULL) */
	int has_core_id;
	int64_t neuron_core_id;
	struct cJSON *attributes_extra; /* other keys of "attributes" */
	int n_semaphores;
	lm_semaphore *semaphores;
	int n_queues;
	lm_queue *queues;
	int has_aliases;
	int n_aliases;
	lm_alias *aliases;
	int n_functions;
	lm_function *functions;
	struct cJSON *extra;
} lm_module;

/* The memory location an operand names: memsetref's allocation, looked up
** first in the map (name -> lm_alloc *, may be NULL) then in the module. */
const lm_memloc *lm_arg_memloc(const lm_module *m,
			       const lm_strmap *allocs, const lm_arg *a);
/* Every operand of every instruction (Loop bodies included) of f. */
typedef void (*lm_arg_fn)(lm_arg *a, void *ctx);
void lm_function_each_arg(lm_function *f, lm_arg_fn fn, void *ctx);

/* ---- load / save ------------------------------------------------------- */

/*
** Parse a module from JSON text. `path` names the source in messages and
** gives the directory for relative `file` paths (may be NULL). On success
** *out owns a new module (free with lm_module_free).
*/
int lm_module_parse(lm_module **out, const char *text, size_t len,
		    const char *path, lm_error *err);
/* Read and parse a file. */
int lm_module_load(lm_module **out, const char *path, lm_error *err);
/* Load n files into mods[0..n) (in parallel threads when they are big).
** On failure every mods[i] is NULL and err holds the first failure in
** path order (what loading them one by one would report). */
int lm_modules_load(char *const *paths, int n, lm_module **mods,
		    lm_error *err);
void lm_module_free(lm_module *m);

/* Serialize; caller frees *out_text. pretty: indented (else compact). */
int lm_module_to_json(const lm_module *m, int pretty, char **out_text,
		      size_t *out_len, lm_error *err);
/* Serialize and write atomically. */
int lm_module_save(const lm_module *m, const char *path, int pretty,
		   lm_error *err);

/* Deep copy (extra objects duplicated). */
lm_module *lm_module_clone(const lm_module *m);
void lm_inst_copy(lm_inst *dst, const lm_inst *src);
/*
** The same deep copy with every string and array (operands, their access
** patterns, dependencies, waits, signals, kernel argument maps, ...) in
** one block from pool (NULL: its own allocation). Loop blocks and `extra`
** objects are still separate.
** Code that replaces a field frees the old value only if
** !lm_inst_owns(in, old) (lm_inst_set_str does), and code that reallocs or
** moves fields between instructions calls lm_inst_unpack first.
*/
void lm_inst_copy_packed(lm_inst *dst, const lm_inst *src, lm_pool *pool);
/* 1 when p points into in's packed storage. */
int lm_inst_owns(const lm_inst *in, const void *p);
/* Bytes of in's packed storage in use (0: not packed). */
size_t lm_inst_packed_bytes(const lm_inst *in);
/* Replace the string *field of in by a copy of v (NULL allowed). */
void lm_inst_set_str(lm_inst *in, char **field, const char *v);
/* Turn a packed instruction into one whose fields are all separate
** allocations (no-op when it is not packed). */
void lm_inst_unpack(lm_inst *in);
void lm_inst_clear(lm_inst *in);
/* Dependencies: every change goes through these (they keep the kinds in
** step and know about packed storage). add appends (kind LM_EDGE_*),
** remove drops entry i (the last entry takes its place), set_dep renames
** entry i. lc: the loop-carried list instead. */
void lm_inst_add_dep(lm_inst *in, int lc, const char *name, int kind);
/* Append a wait (sem-ge-imm value) or a signal (sem-inc by 1) on a copy
** of the semaphore name sem (name-form entries). */
void lm_inst_add_wait(lm_inst *in, const char *sem, int64_t value);
void lm_inst_add_signal(lm_inst *in, const char *sem);
/* Append a copy of entry e to in's waits (update 0) or updates. */
void lm_inst_add_sync(lm_inst *in, int update, const lm_sync *e);
/* Replace func_args (outs: func_outs) by v[0..n), which the instruction
** takes over (v malloc'd, its strings too). */
void lm_inst_set_kvs(lm_inst *in, int outs, lm_kv *v, int n);
void lm_inst_remove_dep(lm_inst *in, int lc, int i);
void lm_inst_set_dep(lm_inst *in, int lc, int i, const char *name);
int lm_inst_dep_kind(const lm_inst *in, int lc, int i);
void lm_alloc_copy(lm_alloc *dst, const lm_alloc *src);
void lm_alloc_clear(lm_alloc *a);
void lm_arg_copy(lm_arg *dst, const lm_arg *src);
void lm_arg_clear(lm_arg *a);
void lm_block_copy(lm_block *dst, const lm_block *src);
/* dst's block arguments: deep copies of src's (dst's are not freed). */
void lm_block_args_copy(lm_block *dst, const lm_block *src);
void lm_block_clear(lm_block *b);
void lm_function_copy(lm_function *dst, const lm_function *src);
void lm_function_clear(lm_function *f);

/*
** Structural comparison: 0 when equal. On difference writes a short path
** to the first differing item into where (if non-NULL).
*/
int lm_module_compare(const lm_module *a, const lm_module *b, char *where,
		      size_t where_len);

/* ---- lookups ----------------------------------------------------------- */

lm_function *lm_module_find_function(const lm_module *m, const char *name);
/* Allocation by name anywhere in the module (first match). */
lm_alloc *lm_module_find_alloc(const lm_module *m, const char *name,
			       lm_function **owner);
lm_memloc *lm_alloc_find_memloc(const lm_alloc *a, const char *name);

/* ---- NKIKernel (IT55) formal binding ----------------------------------- */

/*
** The one binding rule of an IT55 call, shared by InlineNKIKernel
** (linker/provision/inline.c) and the simulator's call sites (sim/machine.c). For
** each entry of call->func_args, then call->func_outs (key = formal,
** value = caller allocation):
**   - the key names an allocation of kernel k (the last of that name),
**     else LM_IT55_NO_FORMAL, *why = "formal 'x' is not an allocation of
**     function 'k'";
**   - find(ctx, value) resolves the caller allocation (the caller decides
**     where names live), else LM_IT55_NO_CALLER, *why = "caller allocation
**     'y' of formal 'x' does not exist";
**   - both sides agree in dtype, element count and storage class
**     (lm_alloc_class) and the caller has a memory location, else
**     LM_IT55_MISMATCH (*why NULL: each user words it with its own detail).
** b holds n_func_args + n_func_outs entries; on failure *n_bound entries
** are bound and b[*n_bound] is the failing one (caller NULL unless
** resolved). Returns 0 when every entry is bound; *why is malloc'd.
** Callee lookup and what a binding rewrites stay with the users.
*/
typedef struct lm_it55_binding {
	int formal;                /* allocation index in k */
	const lm_alloc *caller;
} lm_it55_binding;
enum { LM_IT55_NO_FORMAL = 1, LM_IT55_NO_CALLER, LM_IT55_MISMATCH };
typedef const lm_alloc *(*lm_alloc_find_fn)(void *ctx, const char *name);
/* Storage class of an allocation: 0 DRAM, 1 SB, 2 PSUM, 3 other. */
int lm_alloc_class(const lm_alloc *a);
int lm_it55_bind(const lm_inst *call, const lm_function *k,
		 lm_alloc_find_fn find, void *ctx, lm_it55_binding *b,
		 int *n_bound, char **why);
lm_semaphore *lm_module_find_semaphore(const lm_module *m, const char *name);
lm_queue *lm_module_find_queue(const lm_module *m, const char *name);
/* The module's core id: attributes.neuron_core_id (0 when absent). */
int64_t lm_module_core_id(const lm_module *m);
/* The name used for the module in messages and link dirs:
** `name`, else derived from the path ("<dir>/nc0/sg0/def.json" -> dir). */
const char *lm_module_display_name(const lm_module *m);

/*
** ---- names the linked module uses (each rule once) -----------------------
** The linked module "<name>/sgLnk" has the entry function "main" (kind
** dispatcher) with the block "dispatcher" holding one Call per core c
** "call_def_<c>_instance_0" to the core function "nc<c>"; a core's other
** functions, and its names that collide with another core's, become
** "nc<c>.<name>"; a core function starts with one SwitchQueueInstance
** "I-SQI-<queue>-call_def_<c>_instance_0" per queue it uses and ends with
** the CoreBarrier "cb_return_call_def_<c>_instance_0" (group
** "sgLnk.completion") and the Return "return_call_def_<c>_instance_0".
** The formatters write into buf (LM_LINKED_NAME_MAX bytes are always
** enough, except for lm_linked_sqi_name, which is sized by its caller:
** snprintf-like, it returns the full length) and return buf.
*/
#define LM_LINKED_DIR        "sgLnk"      /* "<name>/sgLnk", OUT/<name>/sgLnk/ */
#define LM_LINKED_MAIN       "main"
#define LM_LINKED_DISPATCHER "dispatcher"
#define LM_LINKED_COMPLETION_GROUP LM_LINKED_DIR ".completion"
#define LM_CORE_PREFIX       "nc"
enum { LM_LINKED_NAME_MAX = 64 };
/* Write "nc<core>" at p (no NUL, no leading zeros, negative as 0); returns
** the end. At most 22 bytes. The one core-prefix rule, printf-free for the
** linker's hot renames. */
char *lm_core_prefix(char *p, int64_t core);
/* Write "nc<core>.<name>" with its NUL at p; returns the end (after the
** NUL). p needs 24 + strlen(name) bytes. */
char *lm_core_scoped(char *p, int64_t core, const char *name);
/* "nc<c>" (no leading zeros) -> c; -1 for any other name. */
int64_t lm_core_of_name(const char *s);
char *lm_core_name(char *buf, int64_t core);          /* "nc<c>" */
char *lm_linked_call_name(char *buf, int64_t core);   /* call_def_<c>_instance_0 */
char *lm_linked_return_name(char *buf, int64_t core); /* return_call_def_... */
char *lm_linked_barrier_name(char *buf, int64_t core); /* cb_return_call_def_... */
int lm_linked_sqi_name(char *buf, size_t n, const char *queue, int64_t core);
/* "<base>/sgLnk", malloc'd. */
char *lm_linked_module_name(const char *base);

/*
** Expand a command-line MODULE argument: a def.json file is itself; a
** directory yields its nc* / sg* / def.json files in core order (numeric).
** Appends malloc'd paths to *paths (count *n). Returns 0 or fills err.
*/
int lm_expand_module_arg(const char *arg, char ***paths, int *n, lm_error *err);

#endif

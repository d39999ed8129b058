/*
** klr_schema.c -- the KLR types of the subset lncsim reads and writes:
** type tags, constructor tags, field names and field types, in wire order
** (KLR's serde tags at its commit 7ccd18c; docs/klr.md). One table drives the
** CBOR reader and writer and the JSON rendering.
**
** Field type strings: "n" Nat, "i" Int, "b" Bool, "s" String, "f" Float32,
** "[X" List X, "?X" Option X, "T<tag>" an object of that type.
*/
#include "common.h"
#include "klr.h"

#include <stdlib.h>
#include <string.h>

/* An enum constructor without fields. */
#define E(tag, name) { tag, name, 0, NULL, 0, NULL }
/* An Operator constructor whose payload struct is in the subset. */
#define P(tag, name, T) { tag, name, 1, w##T, 1, NULL }
/*
** A constructor outside the subset (recognised, not decoded); for an
** Operator, ptag is its payload record's serde tag (kept in wire_count,
** which a constructor that is not decoded has no use for).
*/
#define U(tag, name, ptag) { tag, name, -1, NULL, ptag, NULL }
/* The single constructor (tag 0) of a structure. */
#define NF(a) ((int)(sizeof a / sizeof a[0]))
#define S(fields) { 0, "mk", NF(fields), fields, NF(fields), NULL }
/* A constructor with one field of type ty. */
#define C1(tag, name, fname, ty) \
	{ tag, name, 1, (const lp_kfield[]){ { fname, ty } }, 1, NULL }

static const lp_kfield w148[] = { { "op", "T148" } };
static const lp_kfield w149[] = { { "op", "T149" } };
static const lp_kfield w150[] = { { "op", "T150" } };
static const lp_kfield w151[] = { { "op", "T151" } };
static const lp_kfield w152[] = { { "op", "T152" } };
static const lp_kfield w153[] = { { "op", "T153" } };
static const lp_kfield w154[] = { { "op", "T154" } };
static const lp_kfield w155[] = { { "op", "T155" } };
static const lp_kfield w158[] = { { "op", "T158" } };
static const lp_kfield w159[] = { { "op", "T159" } };
static const lp_kfield w160[] = { { "op", "T160" } };
static const lp_kfield w161[] = { { "op", "T161" } };
static const lp_kfield w163[] = { { "op", "T163" } };
static const lp_kfield w177[] = { { "op", "T177" } };
static const lp_kfield w178[] = { { "op", "T178" } };
static const lp_kfield w180[] = { { "op", "T180" } };
static const lp_kfield w182[] = { { "op", "T182" } };
static const lp_kfield w183[] = { { "op", "T183" } };
static const lp_kfield w204[] = { { "op", "T204" } };
static const lp_kfield w187[] = { { "op", "T187" } };
static const lp_kfield w188[] = { { "op", "T188" } };
static const lp_kfield w164[] = { { "op", "T164" } };
static const lp_kfield w165[] = { { "op", "T165" } };
static const lp_kfield w166[] = { { "op", "T166" } };
static const lp_kfield w167[] = { { "op", "T167" } };
static const lp_kfield w169[] = { { "op", "T169" } };
static const lp_kfield w171[] = { { "op", "T171" } };
static const lp_kfield w172[] = { { "op", "T172" } };
static const lp_kfield w173[] = { { "op", "T173" } };
static const lp_kfield w174[] = { { "op", "T174" } };
static const lp_kfield w175[] = { { "op", "T175" } };
static const lp_kfield w176[] = { { "op", "T176" } };
static const lp_kfield w179[] = { { "op", "T179" } };
static const lp_kfield w181[] = { { "op", "T181" } };
static const lp_kfield w185[] = { { "op", "T185" } };
static const lp_kfield w190[] = { { "op", "T190" } };
static const lp_kfield w191[] = { { "op", "T191" } };
static const lp_kfield w192[] = { { "op", "T192" } };
static const lp_kfield w193[] = { { "op", "T193" } };
static const lp_kfield w194[] = { { "op", "T194" } };
static const lp_kfield w157[] = { { "op", "T157" } };
static const lp_kfield w197[] = { { "op", "T197" } };
static const lp_kfield w216[] = { { "op", "T216" } };

static const lp_kctor c_Memory[] = {
	E(0, "hbm"), E(1, "sbuf"), E(2, "psum"), E(3, "reg"), E(4, "shared_hbm"),
	E(5, "private_hbm")
};
static const lp_kctor c_Dtype[] = {
	E(0, "bfloat16"), E(1, "float8e3"), E(2, "float8e4"), E(3, "float8e5"),
	E(4, "float16"), E(5, "float32"), E(6, "float32r"), E(7, "int8"),
	E(8, "int16"), E(9, "int64"), E(10, "int32"), E(11, "uint8"),
	E(12, "uint16"), E(13, "uint32"), E(14, "uint64"), E(15, "float8_e4m3"),
	E(16, "float8_e4m3fn"), E(17, "float8_e5m2_x4"), E(18, "float8_e4m3fn_x4"),
	E(19, "float4_e2m1fn_x4")
};
static const lp_kctor c_MatmulPerfMode[] = {
	E(0, "None"), E(1, "DoubleRow"), E(2, "DoubleRowSwInterleave")
};
static const lp_kctor c_Engine[] = {
	E(0, "unassigned"), E(1, "act"), E(2, "dma"), E(3, "dve"), E(4, "pe"),
	E(5, "pool"), E(6, "sp")
};
static const lp_kctor c_AluOp[] = {
	E(0, "abs"), E(1, "add"), E(2, "arith_shift_left"),
	E(3, "arith_shift_right"), E(4, "average"), E(5, "bitwise_and"),
	E(6, "bitwise_not"), E(7, "bitwise_or"), E(8, "bitwise_xor"),
	E(9, "bypass"), E(10, "divide"), E(11, "is_equal"), E(12, "is_ge"),
	E(13, "is_gt"), E(14, "is_le"), E(15, "is_lt"), E(16, "logical_and"),
	E(17, "logical_or"), E(18, "logical_shift_left"),
	E(19, "logical_shift_right"), E(20, "logical_xor"), E(21, "max"),
	E(22, "min"), E(23, "mod"), E(24, "mult"), E(25, "not_equal"), E(26, "pow"),
	E(27, "rsqrt"), E(28, "subtract")
};
static const lp_kctor c_AccumCmd[] = {
	E(0, "Idle"), E(1, "Zero"), E(2, "Accumulate"), E(3, "ZeroAccumulate"),
	E(4, "LoadAccumulate")
};
static const lp_kctor c_ActivationFunc[] = {
	E(0, "abs"), E(1, "arctan"), E(2, "copy"), E(3, "erf"), E(4, "erf_dx"),
	E(5, "exp"), E(6, "gelu"), E(7, "gelu_apprx_tanh"), E(8, "gelu_dx"),
	E(9, "log"), E(10, "mish"), E(11, "reciprocal"), E(12, "relu"),
	E(13, "rsqrt"), E(14, "sigmoid"), E(15, "sign"), E(16, "silu"),
	E(17, "silu_dx"), E(18, "sin"), E(19, "softplus"), E(20, "sqrt"),
	E(21, "square"), E(22, "tanh"), E(23, "gelu_apprx_sigmoid"),
	E(24, "gelu_apprx_sigmoid_dx")
};
static const lp_kctor c_AffineSelectCmp[] = {
	E(0, "GreaterThan"), E(1, "GreaterThanEq"), E(2, "Eq"), E(3, "NotEq")
};
static const lp_kctor c_DgeComputeOp[] = {
	E(0, "none"), E(1, "add")
};
static const lp_kctor c_TensorScalarReverseOps[] = {
	E(0, "none"), E(1, "first"), E(2, "second"), E(3, "both")
};
static const lp_kctor c_TensorSubDim[] = {
	E(0, "X"), E(1, "XY"), E(2, "XYZ"), E(3, "XYZW")
};
static const lp_kctor c_TransposeOps[] = {
	E(0, "None"), E(1, "WZXY"), E(2, "WXZY"), E(3, "WYXZ"), E(4, "ZWYX"),
	E(5, "ZYWX"), E(6, "ZYXW"), E(7, "YXWZ"), E(8, "YXZW"), E(9, "YWZX"),
	E(10, "XWZY"), E(11, "XZYW"), E(12, "XYZW"), E(13, "XYWZ")
};
static const lp_kctor c_BrCmpOp[] = {
	E(0, "always"), E(1, "lt_imm"), E(2, "le_imm"), E(3, "eq_imm"),
	E(4, "ne_imm"), E(5, "ge_imm"), E(6, "gt_imm"), E(7, "lt_reg"),
	E(8, "le_reg"), E(9, "eq_reg"), E(10, "ne_reg"), E(11, "ge_reg"),
	E(12, "gt_reg")
};
static const lp_kctor c_Operator[] = {
	P(0, "activate", 148),
	P(1, "ncActivate", 149),
	P(2, "activationReduce", 149),
	P(3, "affineSelect", 150),
	P(4, "ncAffineSelect", 151),
	P(5, "batchNormAggregate", 174),
	P(6, "batchNormStats", 175),
	P(7, "copy", 177),
	P(8, "ncCopy", 178),
	U(9, "copyPredicated", 168),
	P(10, "dmaCopy", 152),
	P(11, "ncDmaCopy", 153),
	P(12, "dmaTranspose", 154),
	U(13, "dropout", 147),
	P(14, "findIndex8", 171),
	P(15, "iota", 159),
	U(16, "loadMaskRegister", 156),
	P(17, "loadStationary", 160),
	U(18, "localGather", 162),
	P(19, "ncLocalGather", 163),
	P(20, "matMul", 161),
	P(21, "ncMatMul", 183),
	P(22, "matchReplace8", 172),
	U(23, "matchValueLoad", 170),
	P(24, "max8", 173),
	P(25, "memSet", 158),
	P(26, "rangeSelect", 164),
	P(27, "ncRangeSelect", 165),
	P(28, "reciprocal", 176),
	P(29, "scalarTensorTensor", 166),
	P(30, "ncScalarTensorTensor", 167),
	P(31, "shuffle", 157),
	P(32, "tensorReduce", 179),
	P(33, "tensorScalar", 180),
	P(34, "tensorTensor", 182),
	P(35, "tensorTensorScan", 169),
	U(36, "tensorPartitionReduce", 184),
	P(37, "tensorScalarReduce", 181),
	P(38, "transpose", 155),
	P(39, "selectReduce", 185),
	U(40, "sequenceBounds", 186),
	P(41, "sendRecv", 187),
	P(42, "sendRecvCompute", 188),
	P(43, "tensorLoad", 190),
	P(44, "tensorStore", 191),
	P(45, "registerMove", 192),
	P(46, "cmpBranch", 193),
	P(47, "registerAluOp", 194),
	U(48, "quantizeMX", 195),
	U(49, "ncMatMulMX", 196),
	P(50, "dmaCompute", 197),
	U(51, "allReduce", 199),
	U(52, "allGather", 199),
	U(53, "reduceScatter", 199),
	U(54, "collectivePermute", 199),
	U(55, "collectivePermuteImplicit", 199),
	U(56, "collectivePermuteImplicitReduce", 199),
	U(57, "broadcast", 199),
	U(58, "allToAll", 199),
	U(59, "rankId", 200),
	U(60, "currentProcessingRankId", 201),
	U(61, "send", 202),
	U(62, "recv", 203),
	P(63, "coreBarrier", 204),
	U(64, "rng", 205),
	U(65, "rand2", 206),
	U(66, "randGetState", 207),
	U(67, "setRngSeed", 208),
	U(68, "randSetState", 209),
	U(69, "extendedInst", 210),
	U(70, "tensorScalarCumulative", 211),
	U(71, "ncNGather", 212),
	U(72, "nonzeroWithCount", 213),
	U(73, "devicePrint", 215),
	P(74, "exponential", 216),
	U(75, "activate2", 217),
};

/* ---- containers ---------------------------------------------------------- */

static const lp_kfield f_Pos[] = {
	{ "line", "n" }, { "column", "n" }, { "lineEnd", "?n" },
	{ "columnEnd", "?n" }, { "filename", "?s" }
};
static const lp_kfield f_Stmt[] = {
	{ "op", "T218" }, { "name", "?s" }, { "pos", "T100" }
};
static const lp_kfield f_Block[] = {
	{ "label", "s" }, { "noReorder", "b" }, { "body", "[T103" }
};
static const lp_kfield f_Kernel[] = {
	{ "name", "s" }, { "inputs", "[T114" }, { "outputs", "[T114" },
	{ "body", "[T104" }
};
static const lp_kfield f_SharedConst[] = {
	{ "name", "s" }, { "fileName", "s" }
};
static const lp_kfield f_Edges[] = {
	{ "fromEdge", "s" }, { "toEdges", "[s" }
};
static const lp_kfield f_LncKernel[] = {
	{ "name", "s" }, { "inputs", "[T114" }, { "outputs", "[T114" },
	{ "bodies", "[[T104" }, { "sharedConstants", "[T106" },
	{ "sharedBuffers", "[T114" }, { "edges", "[T107" }
};

/* ---- tensors and access patterns ---------------------------------------- */

static const lp_kfield f_Shape[] = {
	{ "parDim", "n" }, { "freeDims", "[n" }
};
static const lp_kfield f_Address[] = {
	{ "name", "s" }, { "memory", "T110" }, { "parSize", "n" },
	{ "freeSize", "n" }, { "parOffset", "?n" }, { "freeOffset", "?n" },
	{ "isShared", "b" }
};
static const lp_kfield f_TensorName[] = {
	{ "name", "s" }, { "dtype", "T111" }, { "shape", "T112" },
	{ "address", "T113" }, { "freeElements", "n" },
	{ "addressRotation", "b" }
};
static const lp_kfield f_Slice[] = {
	{ "l", "n" }, { "u", "n" }, { "step", "i" }
};
static const lp_kfield f_AccessBasic[] = {
	{ "tensor", "T114" }, { "indexes", "[T117" }
};
static const lp_kfield f_APPair[] = {
	{ "step", "i" }, { "num", "n" }, { "offset", "n" }
};
static const lp_kfield f_AccessPattern[] = {
	{ "tensor", "T114" }, { "parNum", "n" }, { "pattern", "[T119" },
	{ "parOffset", "n" }, { "freeOffset", "n" }, { "fixedAxis", "[n" }
};
static const lp_kfield f_BirAP[] = {
	{ "tensor", "T114" }, { "offset", "n" }, { "pattern", "[T119" },
	{ "scalarOffset", "?T123" }, { "vectorOffset", "?T125" },
	{ "indirectDim", "i" }, { "dtypeOverride", "?T111" }
};
static const lp_kfield f_TensorHbm[] = {
	{ "name", "s" }, { "dtype", "T111" }, { "address", "n" },
	{ "dims", "[T119" }
};
static const lp_kfield f_TensorSram[] = {
	{ "name", "s" }, { "dtype", "T111" }, { "parNum", "n" },
	{ "pattern", "[T119" }, { "parOffset", "n" }, { "freeOffset", "n" }
};
static const lp_kfield f_DataPattern[] = {
	{ "offset", "i" }, { "pattern", "[T119" }, { "channelMultiplier", "i" }
};

/* ---- operator payloads ---------------------------------------------------- */

static const lp_kfield f_Activate[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "accumulatorCmd", "T137" },
	{ "activationFunc", "T138" }, { "scale", "T131" }, { "bias", "T131" },
	{ "imm", "T131" }
};
static const lp_kfield f_NcActivate[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "accumulatorCmd", "T137" },
	{ "activationFunc", "T138" }, { "scale", "T133" }, { "bias", "?T128" },
	{ "reduceOp", "?T135" }, { "reduceRes", "?T128" }, { "dtype", "?T111" }
};
static const lp_kfield f_AffineSelect[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "fillMode", "T139" },
	{ "fillReg", "n" }, { "maskPattern", "T134" }
};
static const lp_kfield f_NcAffineSelect[] = {
	{ "dst", "T128" }, { "pred", "T134" }, { "onTrueTile", "T128" },
	{ "onFalseValue", "T131" }, { "dtype", "?T111" }, { "cmpOp", "T135" }
};
static const lp_kfield f_DmaCopy[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "compute_op", "T140" },
	{ "dstBoundsCheck", "T141" }, { "srcBoundsCheck", "T141" }
};
static const lp_kfield f_NcDmaCopy[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "compute_op", "T140" },
	{ "oobMode", "T141" }, { "dgeMode", "n" }, { "uniqueIndices", "b" },
	{ "priority", "?n" }, { "engine", "T130" }
};
static const lp_kfield f_DmaTranspose[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "axes", "T146" },
	{ "dtype", "?T111" }, { "dgeMode", "n" }, { "oobMode", "T141" },
	{ "priority", "?n" }
};
static const lp_kfield f_Transpose[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "dtype", "?T111" },
	{ "engine", "T130" }
};
static const lp_kfield f_MemSet[] = {
	{ "dst", "T128" }, { "value", "T131" }, { "dtype", "T111" },
	{ "engine", "T130" }
};
static const lp_kfield f_Iota[] = {
	{ "dst", "T128" }, { "pattern", "T134" }, { "dtype", "?T111" }
};
static const lp_kfield f_NcLocalGather[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "index", "T128" },
	{ "numElemPerIdx", "T131" }, { "numValidIndicies", "?T131" }
};
static const lp_kfield f_LoadStationary[] = {
	{ "src", "T128" }, { "isTranspose", "b" }
};
static const lp_kfield f_MatMul[] = {
	{ "dst", "T128" }, { "moving", "T128" }
};
static const lp_kfield f_Copy[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "opDim", "?T145" }
};
static const lp_kfield f_NcCopy[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "dtype", "?T111" },
	{ "engine", "T130" }
};
static const lp_kfield f_TensorScalar[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "imm0", "T133" },
	{ "op0", "T135" }, { "imm1", "?T133" }, { "op1", "?T135" },
	{ "reverse", "T144" }, { "engine", "T130" }, { "dtype", "?T111" }
};
static const lp_kfield f_TensorTensor[] = {
	{ "dst", "T128" }, { "src0", "T128" }, { "src1", "T128" },
	{ "op", "T135" }, { "dtype", "?T111" }, { "engine", "T130" }
};
static const lp_kfield f_NcMatMul[] = {
	{ "dst", "T128" }, { "stationary", "T128" }, { "moving", "T128" },
	{ "isStationaryOneZero", "b" }, { "isMovingZero", "b" },
	{ "isTranspose", "b" }, { "tilePosition", "[n" }, { "tileSize", "[n" },
	{ "perfMode", "T129" }
};
/*
** KLR between 2025-11-20 (perfMode added) and 2025-12-12 (the field
** removed, leanprover/KLR dd15e1b) wrote NcMatMul with a tenth field,
** psumAccumulateFlag : Nat, before perfMode. Its header counts 10, so the
** reader tells the layouts apart; docs/klr.md and docs/provision.md say
** what the lowering does with the flag.
*/
static const lp_kfield f_NcMatMulFlag[] = {
	{ "dst", "T128" }, { "stationary", "T128" }, { "moving", "T128" },
	{ "isStationaryOneZero", "b" }, { "isMovingZero", "b" },
	{ "isTranspose", "b" }, { "tilePosition", "[n" }, { "tileSize", "[n" },
	{ "psumAccumulateFlag", "n" }, { "perfMode", "T129" }
};
static const lp_kfield f_Shuffle[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "shuffleMask", "[T131" },
	{ "dtype", "?T111" }
};
static const lp_kfield f_DmaCompute[] = {
	{ "dst", "T128" }, { "srcs", "[T128" }, { "scales", "[T131" },
	{ "reduceOp", "T135" }
};
static const lp_kfield f_Exponential[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "maxValue", "T133" },
	{ "reduceRes", "?T128" }, { "reducecmd", "T137" },
	{ "reduceInit", "T133" }
};
static const lp_kfield f_SendRecv[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "sendToRank", "T131" },
	{ "recvFromRank", "T131" }, { "pipeId", "T131" },
	{ "useGpsimdDma", "b" }
};
static const lp_kfield f_SendRecvCompute[] = {
	{ "dsts", "[T128" }, { "srcs", "[T128" }, { "sendToRanks", "[T131" },
	{ "recvFromRanks", "[T131" }, { "pipeId", "T131" }, { "op", "T135" }
};
static const lp_kfield f_CoreBarrier[] = {
	{ "data", "T128" }, { "cores", "[i" }, { "engine", "T130" }
};
static const lp_kfield f_RangeSelect[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "reduceCommand", "T137" },
	{ "reduceOp", "T135" }, { "base", "f" }, { "fillValue", "f" },
	{ "compOp0", "T135" }, { "compOp1", "T135" }, { "bound0", "T131" },
	{ "bound1", "T131" }
};
static const lp_kfield f_NcRangeSelect[] = {
	{ "dst", "T128" }, { "reduceCommand", "T137" },
	{ "reduceRes", "?T128" }, { "reduceOp", "?T135" },
	{ "compOp0", "T135" }, { "compOp1", "T135" }, { "bound0", "T128" },
	{ "bound1", "T128" }, { "rangeStart", "T131" },
	{ "onTrueTile", "T128" }, { "onFalseValue", "T131" },
	{ "dtype", "?T111" }
};
static const lp_kfield f_ScalarTensorTensor[] = {
	{ "dst", "T128" }, { "src0", "T128" }, { "src1", "T128" },
	{ "op0", "T135" }, { "op1", "T135" }, { "reverseOperands", "T144" },
	{ "imm0", "T131" }, { "accumulatorCmd", "T137" }
};
static const lp_kfield f_NcScalarTensorTensor[] = {
	{ "dst", "T128" }, { "data", "T128" }, { "src0", "T133" },
	{ "src1", "T133" }, { "op0", "T135" }, { "op1", "T135" },
	{ "reverseOperands", "T144" }, { "dtype", "?T111" }
};
static const lp_kfield f_TensorTensorScan[] = {
	{ "dst", "T128" }, { "src0", "T128" }, { "src1", "T128" },
	{ "op0", "T135" }, { "op1", "T135" }, { "reverseOperands", "T144" },
	{ "imm0", "T133" }, { "accumulatorCmd", "T137" }, { "dtype", "?T111" }
};
static const lp_kfield f_FindIndex8[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "vals", "T128" },
	{ "dtype", "?T111" }
};
static const lp_kfield f_MatchReplace8[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "vals", "T128" },
	{ "replaceValue", "T131" }, { "dstIdx", "?T128" }, { "dtype", "?T111" }
};
/* Max8, BatchNormAggregate, BatchNormStats and Reciprocal share it. */
static const lp_kfield f_DstSrcDtype[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "dtype", "?T111" }
};
static const lp_kfield f_TensorReduce[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "op", "T135" },
	{ "opDim", "T145" }, { "negated", "b" }, { "dtype", "?T111" },
	{ "keepdims", "b" }
};
static const lp_kfield f_TensorScalarReduce[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "operand0", "T133" },
	{ "op0", "T135" }, { "reverse0", "b" }, { "dtype", "?T111" },
	{ "reduceOp", "?T135" }, { "reduceRes", "T128" },
	{ "reduceCmd", "T137" }, { "reduceInit", "?T131" }
};
static const lp_kfield f_SelectReduce[] = {
	{ "dst", "T128" }, { "predicate", "T128" }, { "onTrue", "T128" },
	{ "onFalse", "T133" }, { "reduceRes", "?T128" },
	{ "reduceCmd", "T137" }, { "reduceOp", "T135" },
	{ "reversePred", "b" }, { "dtype", "?T111" }
};
static const lp_kfield f_TensorLoad[] = {
	{ "dst", "s" }, { "src", "T128" }
};
static const lp_kfield f_TensorStore[] = {
	{ "dst", "T128" }, { "src", "s" }
};
static const lp_kfield f_RegisterMove[] = {
	{ "dst", "s" }, { "imm", "i" }
};
static const lp_kfield f_CmpBranch[] = {
	{ "reg1", "s" }, { "reg2", "s" }, { "imm", "i" }, { "op", "T189" },
	{ "trueLabel", "s" }, { "falseLabel", "s" }
};
static const lp_kfield f_RegisterAluOp[] = {
	{ "dst", "s" }, { "src", "s" }, { "imm", "i" }, { "op", "T135" }
};
static const lp_kfield f_Meta[] = { { "format", "s" } };

/* ---- constructors of the sum types ---------------------------------------- */

static const lp_kctor c_Pos[] = { S(f_Pos) };
static const lp_kctor c_Stmt[] = {
	{ 0, "oper", NF(f_Stmt), f_Stmt, NF(f_Stmt), NULL }
};
static const lp_kctor c_Block[] = { S(f_Block) };
static const lp_kctor c_Kernel[] = { S(f_Kernel) };
static const lp_kctor c_SharedConst[] = { S(f_SharedConst) };
static const lp_kctor c_Edges[] = { S(f_Edges) };
static const lp_kctor c_LncKernel[] = { S(f_LncKernel) };
static const lp_kctor c_Shape[] = { S(f_Shape) };
static const lp_kctor c_Address[] = { S(f_Address) };
/* Two proof fields are counted in the header but never written. */
static const lp_kctor c_TensorName[] = {
	{ 0, "mk", NF(f_TensorName), f_TensorName, NF(f_TensorName) + 2,
	  NULL }
};
static const lp_kctor c_Slice[] = {
	{ 0, "mk", NF(f_Slice), f_Slice, NF(f_Slice) + 1, NULL }
};
static const lp_kctor c_Index[] = {
	C1(0, "coord", "i", "n"), C1(1, "slice", "s", "T115")
};
static const lp_kctor c_AccessBasic[] = {
	{ 0, "mk", NF(f_AccessBasic), f_AccessBasic, NF(f_AccessBasic) + 1,
	  NULL }
};
static const lp_kctor c_APPair[] = { S(f_APPair) };
static const lp_kctor c_AccessPattern[] = { S(f_AccessPattern) };
static const lp_kctor c_ScalarOffset[] = {
	C1(0, "reg", "r", "s"), C1(1, "acc", "a", "T125")
};
static const lp_kctor c_BirAP[] = { S(f_BirAP) };
static const lp_kctor c_Access[] = {
	C1(0, "simple", "t", "T114"), C1(1, "basic", "a", "T118"),
	C1(2, "pattern", "a", "T120"), C1(3, "birPattern", "a", "T124")
};
static const lp_kctor c_TensorHbm[] = { S(f_TensorHbm) };
static const lp_kctor c_TensorSram[] = { S(f_TensorSram) };
static const lp_kctor c_TensorRef[] = {
	C1(0, "abstract", "a", "T125"), C1(1, "sbuf", "t", "T127"),
	C1(2, "psum", "t", "T127"), C1(3, "hbm", "t", "T126"),
	C1(4, "register", "r", "n")
};
static const lp_kctor c_Immediate[] = {
	C1(0, "register", "r", "n"), E(1, "pointer"), C1(2, "int", "i", "i"),
	C1(3, "float", "f", "f")
};
static const lp_kctor c_Operand[] = {
	C1(0, "imm", "i", "T131"), C1(1, "tile", "t", "T128")
};
static const lp_kctor c_DataPattern[] = { S(f_DataPattern) };
static const lp_kctor c_DmaBounds[] = {
	E(0, "skip"), E(1, "error"), C1(2, "reg", "r", "n")
};
static const lp_kctor c_Activate[] = { S(f_Activate) };
static const lp_kctor c_NcActivate[] = { S(f_NcActivate) };
static const lp_kctor c_AffineSelect[] = { S(f_AffineSelect) };
static const lp_kctor c_NcAffineSelect[] = { S(f_NcAffineSelect) };
static const lp_kctor c_DmaCopy[] = { S(f_DmaCopy) };
static const lp_kctor c_NcDmaCopy[] = { S(f_NcDmaCopy) };
static const lp_kctor c_DmaTranspose[] = { S(f_DmaTranspose) };
static const lp_kctor c_Transpose[] = { S(f_Transpose) };
static const lp_kctor c_MemSet[] = { S(f_MemSet) };
static const lp_kctor c_Iota[] = { S(f_Iota) };
static const lp_kctor c_LoadStationary[] = { S(f_LoadStationary) };
static const lp_kctor c_NcLocalGather[] = { S(f_NcLocalGather) };
static const lp_kctor c_MatMul[] = { S(f_MatMul) };
static const lp_kctor c_Copy[] = { S(f_Copy) };
static const lp_kctor c_NcCopy[] = { S(f_NcCopy) };
static const lp_kctor c_TensorScalar[] = { S(f_TensorScalar) };
static const lp_kctor c_TensorTensor[] = { S(f_TensorTensor) };
static const lp_kctor c_NcMatMulFlag = S(f_NcMatMulFlag);
static const lp_kctor c_NcMatMul[] = {
	{ 0, "mk", NF(f_NcMatMul), f_NcMatMul, NF(f_NcMatMul), &c_NcMatMulFlag }
};
static const lp_kctor c_SendRecv[] = { S(f_SendRecv) };
static const lp_kctor c_SendRecvCompute[] = { S(f_SendRecvCompute) };
static const lp_kctor c_CoreBarrier[] = { S(f_CoreBarrier) };
static const lp_kctor c_Shuffle[] = { S(f_Shuffle) };
static const lp_kctor c_DmaCompute[] = { S(f_DmaCompute) };
static const lp_kctor c_Exponential[] = { S(f_Exponential) };
static const lp_kctor c_RangeSelect[] = { S(f_RangeSelect) };
static const lp_kctor c_NcRangeSelect[] = { S(f_NcRangeSelect) };
static const lp_kctor c_ScalarTensorTensor[] = { S(f_ScalarTensorTensor) };
static const lp_kctor c_NcScalarTensorTensor[] = {
	S(f_NcScalarTensorTensor)
};
static const lp_kctor c_TensorTensorScan[] = { S(f_TensorTensorScan) };
static const lp_kctor c_FindIndex8[] = { S(f_FindIndex8) };
static const lp_kctor c_MatchReplace8[] = { S(f_MatchReplace8) };
static const lp_kctor c_DstSrcDtype[] = { S(f_DstSrcDtype) };
static const lp_kctor c_TensorReduce[] = { S(f_TensorReduce) };
static const lp_kctor c_TensorScalarReduce[] = { S(f_TensorScalarReduce) };
static const lp_kctor c_SelectReduce[] = { S(f_SelectReduce) };
static const lp_kctor c_TensorLoad[] = { S(f_TensorLoad) };
static const lp_kctor c_TensorStore[] = { S(f_TensorStore) };
static const lp_kctor c_RegisterMove[] = { S(f_RegisterMove) };
static const lp_kctor c_CmpBranch[] = { S(f_CmpBranch) };
static const lp_kctor c_RegisterAluOp[] = { S(f_RegisterAluOp) };
static const lp_kctor c_Meta[] = { S(f_Meta) };
static const lp_kctor c_Contents[] = {
	U(0, "python", 0), U(1, "nki", 0), C1(2, "kernel", "k", "T105"),
	C1(3, "lnc", "k", "T108"), C1(4, "hlo", "s", "s")
};

#define T(tag, name, ctors) { tag, name, NF(ctors), ctors }

static const lp_ktype types[] = {
	T(100, "Pos", c_Pos),
	T(103, "Stmt", c_Stmt),
	T(104, "Block", c_Block),
	T(105, "Kernel", c_Kernel),
	T(106, "SharedConstantFile", c_SharedConst),
	T(107, "Edges", c_Edges),
	T(108, "LncKernel", c_LncKernel),
	T(110, "Memory", c_Memory),
	T(111, "Dtype", c_Dtype),
	T(112, "Shape", c_Shape),
	T(113, "Address", c_Address),
	T(114, "TensorName", c_TensorName),
	T(115, "Slice", c_Slice),
	T(117, "Index", c_Index),
	T(118, "AccessBasic", c_AccessBasic),
	T(119, "APPair", c_APPair),
	T(120, "AccessPattern", c_AccessPattern),
	T(123, "ScalarOffset", c_ScalarOffset),
	T(124, "BirAccessPattern", c_BirAP),
	T(125, "Access", c_Access),
	T(126, "TensorHbm", c_TensorHbm),
	T(127, "TensorSram", c_TensorSram),
	T(128, "TensorRef", c_TensorRef),
	T(129, "MatmulPerfMode", c_MatmulPerfMode),
	T(130, "Engine", c_Engine),
	T(131, "Immediate", c_Immediate),
	T(133, "Operand", c_Operand),
	T(134, "DataPattern", c_DataPattern),
	T(135, "AluOp", c_AluOp),
	T(137, "AccumCmd", c_AccumCmd),
	T(138, "ActivationFunc", c_ActivationFunc),
	T(139, "AffineSelectCmp", c_AffineSelectCmp),
	T(140, "DgeComputeOp", c_DgeComputeOp),
	T(141, "DmaBounds", c_DmaBounds),
	T(144, "TensorScalarReverseOps", c_TensorScalarReverseOps),
	T(145, "TensorSubDim", c_TensorSubDim),
	T(146, "TransposeOps", c_TransposeOps),
	T(148, "Activate", c_Activate),
	T(149, "NcActivate", c_NcActivate),
	T(150, "AffineSelect", c_AffineSelect),
	T(151, "NcAffineSelect", c_NcAffineSelect),
	T(152, "DmaCopy", c_DmaCopy),
	T(153, "NcDmaCopy", c_NcDmaCopy),
	T(154, "DmaTranspose", c_DmaTranspose),
	T(155, "Transpose", c_Transpose),
	T(157, "Shuffle", c_Shuffle),
	T(158, "MemSet", c_MemSet),
	T(159, "Iota", c_Iota),
	T(160, "LoadStationary", c_LoadStationary),
	T(161, "MatMul", c_MatMul),
	T(163, "NcLocalGather", c_NcLocalGather),
	T(164, "RangeSelect", c_RangeSelect),
	T(165, "NcRangeSelect", c_NcRangeSelect),
	T(166, "ScalarTensorTensor", c_ScalarTensorTensor),
	T(167, "NcScalarTensorTensor", c_NcScalarTensorTensor),
	T(169, "TensorTensorScan", c_TensorTensorScan),
	T(171, "FindIndex8", c_FindIndex8),
	T(172, "MatchReplace8", c_MatchReplace8),
	T(173, "Max8", c_DstSrcDtype),
	T(174, "BatchNormAggregate", c_DstSrcDtype),
	T(175, "BatchNormStats", c_DstSrcDtype),
	T(176, "Reciprocal", c_DstSrcDtype),
	T(177, "Copy", c_Copy),
	T(178, "NcCopy", c_NcCopy),
	T(179, "TensorReduce", c_TensorReduce),
	T(180, "TensorScalar", c_TensorScalar),
	T(181, "TensorScalarReduce", c_TensorScalarReduce),
	T(182, "TensorTensor", c_TensorTensor),
	T(183, "NcMatMul", c_NcMatMul),
	T(185, "SelectReduce", c_SelectReduce),
	T(187, "SendRecv", c_SendRecv),
	T(188, "SendRecvCompute", c_SendRecvCompute),
	T(189, "BrCmpOp", c_BrCmpOp),
	T(190, "TensorLoad", c_TensorLoad),
	T(191, "TensorStore", c_TensorStore),
	T(192, "RegisterMove", c_RegisterMove),
	T(193, "CmpBranch", c_CmpBranch),
	T(194, "RegisterAluOp", c_RegisterAluOp),
	T(197, "DmaCompute", c_DmaCompute),
	T(204, "CoreBarrier", c_CoreBarrier),
	T(216, "Exponential", c_Exponential),
	T(218, "Operator", c_Operator),
	T(235, "KLRMetaData", c_Meta),
	T(236, "Contents", c_Contents),
};

/* The schema entry of a type tag (linear scan of a short table). */
const lp_ktype *lp_klr_type(int tag)
{
	for (int i = 0; i < NF(types); i++)
		if (types[i].tag == tag)
			return &types[i];
	return NULL;
}

/* A constructor by wire tag. */
const lp_kctor *lp_klr_ctor(const lp_ktype *t, int ctor)
{
	for (int i = 0; t && i < t->n_ctors; i++)
		if (t->ctors[i].tag == ctor)
			return &t->ctors[i];
	return NULL;
}

/* A constructor by name. */
const lp_kctor *lp_klr_ctor_by_name(const lp_ktype *t, const char *name)
{
	for (int i = 0; t && name && i < t->n_ctors; i++)
		if (strcmp(t->ctors[i].name, name) == 0)
			return &t->ctors[i];
	return NULL;
}

/* The layout of c whose header counts wire_count fields. */
const lp_kctor *lp_klr_layout_for_count(const lp_kctor *c, int wire_count)
{
	if (c && c->wire_count != wire_count && c->alt &&
	    c->alt->wire_count == wire_count)
		return c->alt;
	return c;
}

/* The layout of c with n fields. */
const lp_kctor *lp_klr_layout_for_n(const lp_kctor *c, int n)
{
	if (c && c->n_fields != n && c->alt && c->alt->n_fields == n)
		return c->alt;
	return c;
}

/* Single-constructor types are rendered as structures. */
int lp_klr_is_struct(const lp_ktype *t)
{
	return t && t->n_ctors == 1 && t->ctors[0].n_fields > 0;
}

/* Field of an object by name. */
lp_kval *lp_kval_field(const lp_kval *obj, const char *name)
{
	const lp_kctor *c;
	if (!obj || obj->kind != LP_KV_OBJ)
		return NULL;
	c = lp_klr_layout_for_n(lp_klr_ctor(lp_klr_type(obj->type_tag),
					    obj->ctor), obj->n);
	if (!c)
		return NULL;
	for (int i = 0; i < c->n_fields && i < obj->n; i++)
		if (strcmp(c->fields[i].name, name) == 0)
			return &obj->items[i];
	return NULL;
}

/* Constructor name of an object. */
const char *lp_kval_ctor_name(const lp_kval *obj)
{
	const lp_kctor *c;
	if (!obj || obj->kind != LP_KV_OBJ)
		return "?";
	c = lp_klr_ctor(lp_klr_type(obj->type_tag), obj->ctor);
	return c ? c->name : "?";
}

/* Free a value's contents. */
void lp_kval_clear(lp_kval *v)
{
	if (!v)
		return;
	free(v->s);
	for (int i = 0; i < v->n; i++)
		lp_kval_clear(&v->items[i]);
	free(v->items);
	memset(v, 0, sizeof *v);
}

void lp_kval_free(lp_kval *v)
{
	lp_kval_clear(v);
	free(v);
}

int lp_kval_default(const char *type, const char *tname, const char *fname,
		    const char *tensor, lp_kval *v)
{
	const lp_ktype *t;
	const lp_kctor *c;
	memset(v, 0, sizeof *v);
	switch (type[0]) {
	case '?': v->kind = LP_KV_OPTION; return 0;
	case '[': v->kind = LP_KV_LIST; return 0;
	case 'n': v->kind = LP_KV_NAT; return 0;
	case 'i': v->kind = LP_KV_INT; return 0;
	case 'b':
		/* the tool's default; the lowering does not read it */
		v->kind = LP_KV_BOOL;
		v->b = fname && !strcmp(fname, "addressRotation");
		return 0;
	case 's':
		/* Address.name: the tensor's own name (what KLR writes) */
		if (tensor && tname && fname && !strcmp(tname, "Address") &&
		    !strcmp(fname, "name")) {
			v->kind = LP_KV_STR;
			v->s = lm_xstrdup(tensor);
			return 0;
		}
		break;
	case 'T':
		t = lp_klr_type(atoi(type + 1));
		c = t ? &t->ctors[0] : NULL;
		if (!c || c->n_fields < 0 || (c->n_fields && !lp_klr_is_struct(t)))
			break;
		v->kind = LP_KV_OBJ;
		v->type_tag = t->tag;
		v->ctor = c->tag;
		v->n = c->n_fields;
		v->items = v->n ? lm_xcalloc((size_t)v->n, sizeof *v->items)
				: NULL;
		for (int i = 0; i < v->n; i++)
			if (lp_kval_default(c->fields[i].type, t->name,
					    c->fields[i].name, tensor,
					    &v->items[i]) != 0) {
				lp_kval_clear(v);
				return -1;
			}
		return 0;
	}
	return -1;
}

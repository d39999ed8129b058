/*
** klr_gen.c -- the schema generations of KLR 0.0.12 (docs/klr.md,
** "Schema generations"). KLR kept writing version 0.0.12 while its record
** shapes changed; each generation below lists the records whose shape
** differs from the next newer generation (its base), so a lookup walks
** the chain down to the current schema of klr_schema.c. The two July 2025
** generations predate KLR's renumbering of the type tags and have a table
** of their own, with no fallback to the current schema.
**
** The reader tries the generations newest first and keeps the first that
** reads the whole file; lp_klr_gen_convert then rewrites the decoded tree
** into the current generation's in-memory form (fields an older record
** lacks get documented defaults; a field whose absence or presence would
** change the meaning is refused by name). Writing is always current.
*/
#include "common.h"
#include "klr.h"

#include <stdlib.h>
#include <string.h>

#define NF(a) ((int)(sizeof a / sizeof a[0]))
#define E(tag, name) { tag, name, 0, NULL, 0, NULL }
#define U(tag, name) { tag, name, -1, NULL, 0, NULL }
#define P(tag, name, T) { tag, name, 1, (const lp_kfield[]){ { "op", T } }, \
			  1, NULL }
#define S(fields) { 0, "mk", NF(fields), fields, NF(fields), NULL }
#define C1(tag, name, fname, ty) \
	{ tag, name, 1, (const lp_kfield[]){ { fname, ty } }, 1, NULL }
#define TY(tag, name, ctors) { tag, name, NF(ctors), ctors }

/* ---- 2026-02-28: no DMA priority ------------------------------------------ */

static const lp_kfield g0228_NcDmaCopy[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "compute_op", "T140" },
	{ "oobMode", "T141" }, { "dgeMode", "n" }, { "uniqueIndices", "b" },
	{ "engine", "T130" }
};
static const lp_kfield g0228_DmaTranspose[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "axes", "T146" },
	{ "dtype", "?T111" }, { "dgeMode", "n" }, { "oobMode", "T141" }
};
static const lp_kctor g0228_c_NcDmaCopy[] = { S(g0228_NcDmaCopy) };
static const lp_kctor g0228_c_DmaTranspose[] = { S(g0228_DmaTranspose) };
static const lp_ktype g0228_t[] = {
	TY(153, "NcDmaCopy", g0228_c_NcDmaCopy),
	TY(154, "DmaTranspose", g0228_c_DmaTranspose),
};
static const lp_kgtype g0228[] = {
	{ 153, 0, &g0228_t[0] }, { 154, 0, &g0228_t[1] }
};

/* ---- 2026-01-05: Block without noReorder ---------------------------------- */

static const lp_kfield g0105_Block[] = { { "label", "s" }, { "body", "[T103" } };
static const lp_kctor g0105_c_Block[] = { S(g0105_Block) };
static const lp_ktype g0105_t[] = { TY(104, "Block", g0105_c_Block) };
static const lp_kgtype g0105[] = { { 104, 0, &g0105_t[0] } };

/*
** ---- 2025-12-29: the Operator numbering before the collectives grew -------
** Constructors 0..50 are the current ones with the current payloads
** (their records did not change from 2025-11-21 on), except
** tensorScalarReduce, whose record had 8 fields then (not read).
*/

static const lp_kctor g1229_c_Operator[] = {
	P(0, "activate", "T148"), P(1, "ncActivate", "T149"),
	P(2, "activationReduce", "T149"), P(3, "affineSelect", "T150"),
	P(4, "ncAffineSelect", "T151"), P(5, "batchNormAggregate", "T174"),
	P(6, "batchNormStats", "T175"), P(7, "copy", "T177"),
	P(8, "ncCopy", "T178"), U(9, "copyPredicated"),
	P(10, "dmaCopy", "T152"), P(11, "ncDmaCopy", "T153"),
	P(12, "dmaTranspose", "T154"), U(13, "dropout"),
	P(14, "findIndex8", "T171"), P(15, "iota", "T159"),
	U(16, "loadMaskRegister"), P(17, "loadStationary", "T160"),
	U(18, "localGather"), P(19, "ncLocalGather", "T163"),
	P(20, "matMul", "T161"),
	P(21, "ncMatMul", "T183"), P(22, "matchReplace8", "T172"),
	U(23, "matchValueLoad"), P(24, "max8", "T173"), P(25, "memSet", "T158"),
	P(26, "rangeSelect", "T164"), P(27, "ncRangeSelect", "T165"),
	P(28, "reciprocal", "T176"), P(29, "scalarTensorTensor", "T166"),
	P(30, "ncScalarTensorTensor", "T167"), U(31, "shuffle"),
	P(32, "tensorReduce", "T179"), P(33, "tensorScalar", "T180"),
	P(34, "tensorTensor", "T182"), P(35, "tensorTensorScan", "T169"),
	U(36, "tensorPartitionReduce"), U(37, "tensorScalarReduce"),
	P(38, "transpose", "T155"), P(39, "selectReduce", "T185"),
	U(40, "sequenceBounds"), U(41, "sendRecv"), U(42, "sendRecvCompute"),
	P(43, "tensorLoad", "T190"), P(44, "tensorStore", "T191"),
	P(45, "registerMove", "T192"), P(46, "cmpBranch", "T193"),
	P(47, "registerAluOp", "T194"), U(48, "quantizeMX"),
	U(49, "ncMatMulMX"), U(50, "dmaCompute"), U(51, "allReduce"),
	U(52, "allGather"), U(53, "reduceScatter"), U(54, "collectivePermute"),
	U(55, "broadcast"), U(56, "allToAll"), U(57, "send"), U(58, "recv"),
	P(59, "coreBarrier", "T201"), U(60, "rng"), U(61, "rand2"),
	U(62, "randGetState"), U(63, "setRngSeed"), U(64, "randSetState"),
	U(65, "extendedInst"), U(66, "tensorScalarCumulative"),
	U(67, "ncNGather"), U(68, "devicePrint")
};
static const lp_kfield g1229_CoreBarrier[] = {
	{ "data", "T128" }, { "cores", "[i" }, { "engine", "T130" }
};
static const lp_kctor g1229_c_CoreBarrier[] = { S(g1229_CoreBarrier) };
static const lp_ktype g1229_t[] = {
	TY(218, "Operator", g1229_c_Operator),
	TY(201, "CoreBarrier", g1229_c_CoreBarrier),
};
static const lp_kgtype g1229[] = {
	{ 218, 0, &g1229_t[0] }, { 201, 204, &g1229_t[1] }
};

/* ---- 2025-12-12: LncKernel without sharedBuffers -------------------------- */

static const lp_kfield g1212_LncKernel[] = {
	{ "name", "s" }, { "inputs", "[T114" }, { "outputs", "[T114" },
	{ "bodies", "[[T104" }, { "sharedConstants", "[T106" },
	{ "edges", "[T107" }
};
static const lp_kctor g1212_c_LncKernel[] = { S(g1212_LncKernel) };
static const lp_ktype g1212_t[] = { TY(108, "LncKernel", g1212_c_LncKernel) };
static const lp_kgtype g1212[] = { { 108, 0, &g1212_t[0] } };

/* ---- 2025-12-04: MatMul with psumAccumulateFlag --------------------------- */

static const lp_kfield g1204_MatMul[] = {
	{ "dst", "T128" }, { "moving", "T128" },
	{ "psumAccumulateFlag", "T142" }
};
static const lp_kctor g1204_c_MatMul[] = { S(g1204_MatMul) };
static const lp_kctor g1204_c_Group[] = {
	E(0, "first"), E(1, "middle"), E(2, "last"), E(3, "whole")
};
static const lp_ktype g1204_t[] = {
	TY(161, "MatMul", g1204_c_MatMul),
	TY(142, "MatmulGroupElement", g1204_c_Group),
};
static const lp_kgtype g1204[] = {
	{ 161, 0, &g1204_t[0] }, { 142, 0, &g1204_t[1] }
};

/* ---- 2025-12-03: Dtype before float8_e4m3 was inserted at 15 -------------- */

static const lp_kctor g1203_c_Dtype[] = {
	E(0, "bfloat16"), E(1, "float8e3"), E(2, "float8e4"), E(3, "float8e5"),
	E(4, "float16"), E(5, "float32"), E(6, "float32r"), E(7, "int8"),
	E(8, "int16"), E(9, "int64"), E(10, "int32"), E(11, "uint8"),
	E(12, "uint16"), E(13, "uint32"), E(14, "uint64"),
	E(15, "float8_e4m3fn"), E(16, "float8_e5m2_x4"),
	E(17, "float8_e4m3fn_x4"), E(18, "float4_e2m1fn_x4")
};
static const lp_ktype g1203_t[] = { TY(111, "Dtype", g1203_c_Dtype) };
static const lp_kgtype g1203[] = { { 111, 0, &g1203_t[0] } };

/* ---- 2025-11-26: DmaTranspose without oobMode ----------------------------- */

static const lp_kfield g1126_DmaTranspose[] = {
	{ "dst", "T128" }, { "src", "T128" }, { "axes", "T146" },
	{ "dtype", "?T111" }, { "dgeMode", "n" }
};
static const lp_kctor g1126_c_DmaTranspose[] = { S(g1126_DmaTranspose) };
static const lp_ktype g1126_t[] = {
	TY(154, "DmaTranspose", g1126_c_DmaTranspose)
};
static const lp_kgtype g1126[] = { { 154, 0, &g1126_t[0] } };

/* ---- 2025-11-21: BirAccessPattern without dtypeOverride ------------------- */

static const lp_kfield g1121_BirAP[] = {
	{ "tensor", "T114" }, { "offset", "n" }, { "pattern", "[T119" },
	{ "scalarOffset", "?T123" }, { "vectorOffset", "?T125" },
	{ "indirectDim", "i" }
};
static const lp_kctor g1121_c_BirAP[] = { S(g1121_BirAP) };
static const lp_ktype g1121_t[] = {
	TY(124, "BirAccessPattern", g1121_c_BirAP)
};
static const lp_kgtype g1121[] = { { 124, 0, &g1121_t[0] } };

/*
** ---- 2025-07-21: before the renumbering -----------------------------------
** Kernel bodies are lists of statements (no blocks), tensors are the Lean
** `TensorSram` (type tag 114, five items), addresses have no name, and the
** operator payloads have other type tags. Constructor names are the
** current ones where KLR only renamed them (Contents `klir` = `kernel`,
** Memory `pmem` = `psum`), so the conversion matches them by name.
*/

static const lp_kfield j_Kernel[] = {
	{ "name", "s" }, { "inputs", "[T114" }, { "outputs", "[T114" },
	{ "body", "[T104" }
};
static const lp_kfield j_TensorName[] = {
	{ "name", "s" }, { "dtype", "T111" }, { "shape", "T112" },
	{ "address", "T113" }, { "freeElements", "n" }
};
static const lp_kfield j_Address[] = {
	{ "memory", "T110" }, { "parSize", "n" }, { "freeSize", "n" },
	{ "parOffset", "?n" }, { "freeOffset", "?n" }
};
static const lp_kfield j_AccessBasic[] = {
	{ "tensor", "T114" }, { "indexes", "[T116" }
};
static const lp_kfield j_Activate[] = {
	{ "dst", "T124" }, { "src", "T124" }, { "accumulatorCmd", "T136" },
	{ "activationFunc", "T137" }, { "scale", "T131" }, { "bias", "T131" },
	{ "imm", "T131" }
};
static const lp_kfield j_DmaCopy[] = {
	{ "dst", "T124" }, { "src", "T124" }, { "compute_op", "T139" },
	{ "dstBoundsCheck", "T140" }, { "srcBoundsCheck", "T140" }
};
static const lp_kfield j_Copy[] = {
	{ "dst", "T124" }, { "src", "T124" }, { "opDim", "?T144" }
};
static const lp_kctor j_c_Contents[] = {
	U(0, "python"), U(1, "nki"), C1(2, "kernel", "k", "T105"),
	C1(3, "hlo", "s", "s")
};
static const lp_kctor j_c_Kernel[] = { S(j_Kernel) };
static const lp_kctor j_c_Stmt[] = {
	U(0, "ret"), U(1, "assign"), U(2, "store"), C1(3, "oper", "op", "T173")
};
static const lp_kctor j_c_Operator[] = {
	P(0, "activate", "T146"), U(1, "affineSelect"),
	U(2, "batchNormAggregate"), U(3, "batchNormStats"),
	P(4, "copy", "T169"), U(5, "copyPredicated"), P(6, "dmaCopy", "T148"),
	U(7, "dmaHbmLoad"), U(8, "dmaHbmStore"), U(9, "dmaTranspose"),
	U(10, "dropout"), U(11, "findIndex8"), U(12, "iota"),
	U(13, "loadMaskRegister"), U(14, "loadStationary"),
	U(15, "localGather"), U(16, "matMul"), U(17, "matchReplace8"),
	U(18, "matchValueLoad"), U(19, "max8"), U(20, "memSet"),
	U(21, "rangeSelect"), U(22, "reciprocal"),
	U(23, "scalarTensorTensor"), U(24, "shuffle"), U(25, "tensorReduce"),
	U(26, "tensorScalar"), U(27, "tensorTensor"),
	U(28, "tensorTensorScan"), U(29, "transpose")
};
static const lp_kctor j_c_Activate[] = { S(j_Activate) };
static const lp_kctor j_c_DmaCopy[] = { S(j_DmaCopy) };
static const lp_kctor j_c_Copy[] = { S(j_Copy) };
static const lp_kctor j_c_TensorRef[] = {
	C1(0, "abstract", "a", "T120"), U(1, "literal"),
	C1(2, "register", "r", "n")
};
static const lp_kctor j_c_Access[] = {
	C1(0, "simple", "t", "T114"), C1(1, "basic", "a", "T117"),
	U(2, "pattern")
};
static const lp_kctor j_c_AccessBasic[] = {
	{ 0, "mk", NF(j_AccessBasic), j_AccessBasic, NF(j_AccessBasic) + 1,
	  NULL }
};
/* Header count 7: five items and the two proof fields. */
static const lp_kctor j_c_TensorName7[] = {
	{ 0, "mk", NF(j_TensorName), j_TensorName, NF(j_TensorName) + 2, NULL }
};
/* Header count 5: the proof fields not counted (fixed in KLR 0d78b62). */
static const lp_kctor j_c_TensorName5[] = {
	{ 0, "mk", NF(j_TensorName), j_TensorName, NF(j_TensorName), NULL }
};
static const lp_kctor j_c_Address[] = { S(j_Address) };
static const lp_kctor j_c_Memory[] = {
	E(0, "hbm"), E(1, "sbuf"), E(2, "psum"), E(3, "reg")
};
static const lp_ktype j_t[] = {
	TY(236, "Contents", j_c_Contents),
	TY(105, "Kernel", j_c_Kernel),
	TY(104, "Stmt", j_c_Stmt),
	TY(173, "Operator", j_c_Operator),
	TY(146, "Activate", j_c_Activate),
	TY(148, "DmaCopy", j_c_DmaCopy),
	TY(169, "Copy", j_c_Copy),
	TY(124, "TensorRef", j_c_TensorRef),
	TY(120, "Access", j_c_Access),
	TY(117, "AccessBasic", j_c_AccessBasic),
	TY(114, "TensorName", j_c_TensorName7),
	TY(113, "Address", j_c_Address),
	TY(110, "Memory", j_c_Memory),
	TY(114, "TensorName", j_c_TensorName5),
};
/* t == NULL: read as the current type `cur` (same wire shape, fields
 * without object references that moved). */
static const lp_kgtype g0721b[] = {
	{ 236, 0, &j_t[0] }, { 105, 0, &j_t[1] }, { 104, 103, &j_t[2] },
	{ 173, 218, &j_t[3] }, { 146, 148, &j_t[4] }, { 148, 152, &j_t[5] },
	{ 169, 177, &j_t[6] }, { 124, 128, &j_t[7] }, { 120, 125, &j_t[8] },
	{ 117, 118, &j_t[9] }, { 114, 0, &j_t[10] }, { 113, 0, &j_t[11] },
	{ 110, 0, &j_t[12] },
	{ 111, 0, NULL }, { 112, 0, NULL }, { 115, 0, NULL },
	{ 116, 117, NULL }, { 130, 0, NULL }, { 131, 0, NULL },
	{ 136, 137, NULL }, { 137, 138, NULL }, { 139, 140, NULL },
	{ 140, 141, NULL }, { 144, 145, NULL }, { 235, 0, NULL }
};
static const lp_kgtype g0721a[] = { { 114, 0, &j_t[13] } };

/* ---- the generations, newest first ---------------------------------------- */

#define G(name, commits, differs, types, base, own) \
	{ name, commits, differs, NF(types), types, base, own }

static const lp_kgen gen_current = {
	"2026-03-25", "c1c0c26..7ccd18c", "the current schema (klr_schema.c)",
	0, NULL, NULL, 0
};
static const lp_kgen gen_0228 = G("2026-02-28", "90e162d..c1c0c26^",
	"NcDmaCopy 7 fields and DmaTranspose 6 (no priority)", g0228,
	&gen_current, 0);
static const lp_kgen gen_0105 = G("2026-01-05", "d6586dd..90e162d^",
	"Block 2 fields (no noReorder)", g0105, &gen_0228, 0);
static const lp_kgen gen_1229 = G("2025-12-29",
	"25933ae..d6586dd^ and afdf976..e9b2232^",
	"Operator numbering before the collectives grew: coreBarrier is "
	"constructor 59 with CoreBarrier type tag 201", g1229, &gen_0105, 0);
static const lp_kgen gen_1212 = G("2025-12-12",
	"dd15e1b..afdf976^ and e9b2232..25933ae^",
	"LncKernel 6 fields (no sharedBuffers)", g1212, &gen_1229, 0);
static const lp_kgen gen_1204 = G("2025-12-04", "d76e626..dd15e1b^",
	"MatMul 3 fields (psumAccumulateFlag)", g1204, &gen_1212, 0);
static const lp_kgen gen_1203 = G("2025-12-03", "5cc9996..c3d4530",
	"Dtype constructors 15..18 are float8_e4m3fn, float8_e5m2_x4, "
	"float8_e4m3fn_x4, float4_e2m1fn_x4 (no float8_e4m3)", g1203,
	&gen_1204, 0);
static const lp_kgen gen_1126 = G("2025-11-26", "b9f5972..5cc9996^",
	"DmaTranspose 5 fields (no oobMode)", g1126, &gen_1203, 0);
static const lp_kgen gen_1121 = G("2025-11-21", "7d7ff0e..b9f5972^",
	"BirAccessPattern 6 fields (no dtypeOverride)", g1121, &gen_1126, 0);
static const lp_kgen gen_0721b = G("2025-07-21b", "0d78b62..dca9a7c^",
	"the July 2025 numbering; TensorName header 7 (5 items)", g0721b,
	NULL, 1);
static const lp_kgen gen_0721a = G("2025-07-21a", "..eb16439",
	"as 2025-07-21b, TensorName header 5 (5 items)", g0721a, &gen_0721b,
	1);

const lp_kgen *const lp_klr_gens[] = {
	&gen_current, &gen_0228, &gen_0105, &gen_1229, &gen_1212, &gen_1204,
	&gen_1203, &gen_1126, &gen_1121, &gen_0721b, &gen_0721a
};
const int lp_klr_n_gens = NF(lp_klr_gens);

/* The type read for wire tag `tag` in generation g; *cur: its current tag. */
const lp_ktype *lp_klr_gen_type(const lp_kgen *g, int tag, int *cur)
{
	int own = g && g->own;
	for (; g; g = g->base)
		for (int i = 0; i < g->n_types; i++)
			if (g->types[i].tag == tag) {
				*cur = g->types[i].cur ? g->types[i].cur : tag;
				return g->types[i].t ? g->types[i].t
						     : lp_klr_type(*cur);
			}
	*cur = tag;
	return own ? NULL : lp_klr_type(tag);
}

/*
** The type of generation g that reads into the current type `cur`
** (for messages); NULL when g has none.
*/
const lp_ktype *lp_klr_gen_type_cur(const lp_kgen *g, int cur)
{
	int own = g && g->own;
	for (const lp_kgen *h = g; h; h = h->base)
		for (int i = 0; i < h->n_types; i++) {
			int c = h->types[i].cur ? h->types[i].cur
						: h->types[i].tag;
			if (c == cur)
				return h->types[i].t ? h->types[i].t
						     : lp_klr_type(cur);
		}
	if (own)
		return NULL;
	/* a tag of the current table that an overlay gave another meaning */
	for (const lp_kgen *h = g; h; h = h->base)
		for (int i = 0; i < h->n_types; i++)
			if (h->types[i].tag == cur)
				return NULL;
	return lp_klr_type(cur);
}

/* ---- conversion to the current in-memory form ----------------------------- */

typedef struct cx {
	const lp_kgen *g;
	lm_error *err;
	const char *path;
	const char *tname;   /* name of the TensorName being converted */
} cx;

static int conv(cx *x, const lp_kval *o, const char *gty, const char *cty,
		lp_kval *v);

/*
** Before blocks, a kernel body was a list of statements: it becomes one
** block "main" (noReorder false) holding them.
*/
static int conv_body(cx *x, const lp_kval *o, const char *gty, lp_kval *v)
{
	lp_kval *b;
	int rc = 0;
	v->kind = LP_KV_LIST;
	v->n = 1;
	v->items = b = lm_xcalloc(1, sizeof *b);
	b->kind = LP_KV_OBJ;
	b->type_tag = LP_T_BLOCK;
	b->n = 3;
	b->items = lm_xcalloc(3, sizeof *b->items);
	b->items[0].kind = LP_KV_STR;
	b->items[0].s = lm_xstrdup("main");
	b->items[1].kind = LP_KV_BOOL;
	b->items[2].kind = LP_KV_LIST;
	b->items[2].items = o->n ? lm_xcalloc((size_t)o->n, sizeof *v->items)
				 : NULL;
	for (int i = 0; i < o->n && rc == 0; i++) {
		b->items[2].n++;
		rc = conv(x, &o->items[i], gty + 1, "T103",
			  &b->items[2].items[i]);
	}
	return rc;
}

/* Is generation type string gty (an object) read into current tag ctag? */
static int maps_to(cx *x, const char *gty, int ctag)
{
	int cur;
	if (gty[0] != 'T')
		return 0;
	lp_klr_gen_type(x->g, atoi(gty + 1), &cur);
	return cur == ctag;
}

static int conv_object(cx *x, const lp_kval *o, const char *cty, lp_kval *v)
{
	int cur;
	const lp_ktype *gt = lp_klr_gen_type(x->g, o->type_tag, &cur);
	const lp_ktype *ct = lp_klr_type(atoi(cty + 1));
	const lp_kctor *oc, *cc;
	const char *saved = x->tname;
	int rc = 0;

	oc = lp_klr_layout_for_n(lp_klr_ctor(gt, o->ctor), o->n);
	if (!gt || !ct || ct->tag != cur || !oc)
		return lm_errc(x->err, LM_EINTERNAL, x->path, "KLR generation "
			       "conversion", "type tag %d of generation %s has "
			       "no current type %s", o->type_tag, x->g->name,
			       cty);
	cc = lp_klr_ctor_by_name(ct, oc->name);
	if (!cc || cc->n_fields < 0)
		return lm_err(x->err, x->path, "KLR generation conversion",
			      "%s '%s' of generation %s has no counterpart "
			      "lncsim reads in the current schema", gt->name,
			      oc->name, x->g->name);
	if (gt == ct)
		cc = lp_klr_layout_for_n(cc, o->n);
	/* a field of the older record the current one does not have */
	for (int i = 0; i < oc->n_fields; i++) {
		int found = 0;
		for (int j = 0; j < cc->n_fields && !found; j++)
			found = !strcmp(oc->fields[i].name, cc->fields[j].name);
		if (!found)
			return lm_err(x->err, x->path, "KLR generation "
				      "conversion", "%s.%s of generation %s "
				      "has no counterpart in the current "
				      "schema (not modelled)", gt->name,
				      oc->fields[i].name, x->g->name);
	}
	v->kind = LP_KV_OBJ;
	v->type_tag = ct->tag;
	v->ctor = cc->tag;
	v->n = cc->n_fields;
	v->items = v->n ? lm_xcalloc((size_t)v->n, sizeof *v->items) : NULL;
	for (int j = 0; j < cc->n_fields && rc == 0; j++) {
		const lp_kfield *cf = &cc->fields[j];
		int i = 0;
		while (i < oc->n_fields && strcmp(oc->fields[i].name, cf->name))
			i++;
		if (i < oc->n_fields) {
			if (cf->type[0] == '[' && !strcmp(cf->type + 1, "T104") &&
			    maps_to(x, oc->fields[i].type + 1, LP_T_STMT))
				rc = conv_body(x, &o->items[i],
					       oc->fields[i].type, &v->items[j]);
			else
				rc = conv(x, &o->items[i], oc->fields[i].type,
					  cf->type, &v->items[j]);
			if (rc == 0 && ct->tag == LP_T_TENSORNAME &&
			    !strcmp(cf->name, "name"))
				x->tname = v->items[j].s;
		} else if (ct->tag == 154 && !strcmp(cf->name, "oobMode")) {
			/* what a DMA transpose did out of bounds then is not
			 * known: refused, not guessed */
			rc = lm_err(x->err, x->path, "KLR generation "
				    "conversion", "DmaTranspose of generation "
				    "%s has no oobMode: its out-of-bounds "
				    "behaviour is not modelled", x->g->name);
		} else if (lp_kval_default(cf->type, ct->name, cf->name,
					   x->tname ? x->tname : "",
					   &v->items[j]) != 0) {
			rc = lm_errc(x->err, LM_EINTERNAL, x->path, "KLR "
				     "generation conversion", "no default for "
				     "%s.%s", ct->name, cf->name);
		}
	}
	x->tname = saved;
	return rc;
}

/* The value kind of a field type string. */
static lp_kkind kind_of(const char *type)
{
	switch (type[0]) {
	case 'n': return LP_KV_NAT;
	case 'i': return LP_KV_INT;
	case 'b': return LP_KV_BOOL;
	case 's': return LP_KV_STR;
	case 'f': return LP_KV_F32;
	case '[': return LP_KV_LIST;
	case '?': return LP_KV_OPTION;
	default: return LP_KV_OBJ;
	}
}

static int conv(cx *x, const lp_kval *o, const char *gty, const char *cty,
		lp_kval *v)
{
	int rc = 0;
	memset(v, 0, sizeof *v);
	if (o->kind != kind_of(cty))
		return lm_errc(x->err, LM_EINTERNAL, x->path, "KLR generation "
			       "conversion", "a '%s' field of generation %s "
			       "is a '%s' in the current schema", gty,
			       x->g->name, cty);
	switch (cty[0]) {
	case '[':
	case '?':
		v->kind = o->kind;
		v->items = o->n ? lm_xcalloc((size_t)o->n, sizeof *v->items)
				: NULL;
		for (int i = 0; i < o->n && rc == 0; i++) {
			v->n++;
			rc = conv(x, &o->items[i], gty + 1, cty + 1,
				  &v->items[i]);
		}
		return rc;
	case 'T':
		return conv_object(x, o, cty, v);
	default:
		*v = *o;
		v->s = o->s ? lm_xstrdup(o->s) : NULL;
		v->items = NULL;
		v->n = 0;
		return 0;
	}
}

/* Rewrite a Contents value decoded in generation g into the current form. */
int lp_klr_gen_convert(const lp_kgen *g, lp_kval *contents, const char *path,
		       lm_error *err)
{
	cx x = { g, err, path ? path : "", NULL };
	lp_kval v;
	int rc = conv(&x, contents, "T236", "T236", &v);
	if (rc) {
		lp_kval_clear(&v);
		return rc;
	}
	lp_kval_clear(contents);
	*contents = v;
	return 0;
}

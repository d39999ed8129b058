/*
** klr_codegen.c -- KlirToBirCodegen for the subset: the KLR walk
** LncKernel -> Block -> Stmt -> Operator -> one codegen function per
** operator, emitting BIR instructions into a new function of kind nki.
**
** Tensors: every KLR TensorName becomes one allocation with one memory
** location of the same name (hbm -> DRAM, sbuf -> SB, psum -> PSUM with its
** bank id); the kernel's inputs and outputs are the formals (kinds Input /
** Output), shared constants are Const (file = the constant's fileName),
** everything else Internal. SBUF / PSUM tensors whose address leaves the
** offsets to the compiler are placed after the walk (lp_cg_place).
**
** Operands: a BirAccessPattern's element offset counts from the start of
** the tensor as if it were contiguous; for SBUF / PSUM it is split into
** start_partition (offset / freeElements) and the element offset within the
** partition; the pattern pairs are copied as [step, num].
**
** Ordering: the KLR program is sequential; lp_cg_emit adds dependencies
** from the per-allocation hazards so the engines keep that order.
**
** PSUM accumulation: KLR at HEAD carries no accumulate flag on ncMatMul, so
** the matmuls of a kernel are grouped the way the compiler infers them
** (psum_note, docs/provision.md "PSUM accumulation groups"): a matmul into
** exactly the region the previous matmul of an open group wrote, with no
** access to that region in between, accumulates; any other matmul starts a
** group.
*/
#include "common.h"
#include "provision_int.h"
#include "build.h"
#include "dtype.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on the numbers a kernel may use (checked before any arithmetic). */
#define MAX_DIM ((int64_t)1 << 31)
#define MAX_ELEMS ((int64_t)1 << 40)

/* Operator constructors lowered here (KLR's operator serde tags). */
enum {
	OP_NCACTIVATE = 1, OP_NCAFFINESELECT = 4, OP_COPY = 7, OP_NCCOPY = 8,
	OP_DMACOPY = 10, OP_NCDMACOPY = 11, OP_IOTA = 15, OP_NCMATMUL = 21,
	OP_MEMSET = 25, OP_TENSORSCALAR = 33, OP_TENSORTENSOR = 34,
	OP_TRANSPOSE = 38
};

/* KLR Engine constructors. */
enum { KE_UNASSIGNED, KE_ACT, KE_DMA, KE_DVE, KE_PE, KE_POOL, KE_SP };

/* What the codegen knows of one operand's tensor. */
typedef struct tinfo {
	const char *alloc;     /* allocation name (owned by the function) */
	lm_dtype dtype;
	lm_memtype mt;
	int64_t free_elems;    /* elements per partition row */
	int64_t par_dim;
	int64_t part_bytes;    /* SB / PSUM: bytes of one partition of its
				  memory location (dims[1]) */
} tinfo;

/* An open PSUM accumulation group: its region and its last Matmult. */
typedef struct mm_group {
	lm_arg dst;            /* the region (copy of the Matmult's outs[0]) */
	int64_t lo, hi;        /* bytes within a partition, inclusive */
	int blk, inst;         /* the group's last Matmult in cg->f */
} mm_group;

/* The groups of the kernel being lowered, in program order. */
typedef struct mm_groups {
	int n, cap;
	mm_group *g;
	int accumulate;        /* this statement's ncMatMul says '+=' (128) */
} mm_groups;

/* Error at the statement being lowered. */
static int LM_PRINTF(2, 3) cg_fail(lp_cg *cg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = lm_verr(cg->err, LM_EINPUT, cg->path, cg->where, fmt, ap);
	va_end(ap);
	return rc;
}

/* Field by name (the schema guarantees it for decoded trees). */
static const lp_kval *F(const lp_kval *obj, const char *name)
{
	static const lp_kval none = { LP_KV_OPTION, 0, 0, 0, 0, NULL, 0, 0, 0,
				      NULL };
	const lp_kval *v = lp_kval_field(obj, name);
	return v ? v : &none;
}

/* Option payload or NULL. */
static const lp_kval *some(const lp_kval *opt)
{
	return opt->kind == LP_KV_OPTION && opt->n == 1 ? &opt->items[0] : NULL;
}

/* A Nat that must be < max. */
static int nat(lp_cg *cg, const lp_kval *v, int64_t max, const char *what,
	       int64_t *out)
{
	if (v->kind != LP_KV_NAT || v->u >= (uint64_t)max)
		return cg_fail(cg, "%s %llu is out of range (limit %lld)", what,
			       (unsigned long long)v->u, (long long)max);
	*out = (int64_t)v->u;
	return 0;
}

/* KLR Dtype constructor -> lncsim dtype (INVALID when unsupported). */
static lm_dtype map_dtype(int ctor)
{
	static const lm_dtype t[] = {
		LM_DT_BFLOAT16, LM_DT_FLOAT8E3, LM_DT_FLOAT8E4, LM_DT_FLOAT8E5,
		LM_DT_FLOAT16, LM_DT_FLOAT32, LM_DT_FLOAT32R, LM_DT_INT8,
		LM_DT_INT16, LM_DT_INT64, LM_DT_INT32, LM_DT_UINT8,
		LM_DT_UINT16, LM_DT_UINT32, LM_DT_UINT64,
		LM_DT_FLOAT8_E4M3,   /* float8e4's format (docs/dtypes.md) */
		LM_DT_FLOAT8_E4M3FN, /* likewise */
	};
	if (ctor < 0 || ctor >= (int)(sizeof t / sizeof t[0]))
		return LM_DT_INVALID;
	return t[ctor];
}

/* A Dtype object -> lncsim dtype, or an error. */
static int dtype_of(lp_cg *cg, const lp_kval *d, lm_dtype *out)
{
	*out = map_dtype(d->ctor);
	if (*out == LM_DT_INVALID)
		return cg_fail(cg, "dtype '%s' is not supported",
			       lp_kval_ctor_name(d));
	return 0;
}

/* BIR engine for a KLR Engine constructor; dflt when unassigned. */
static lm_engine map_engine(const lp_kval *e, lm_engine dflt)
{
	switch (e && e->kind == LP_KV_OBJ ? e->ctor : KE_UNASSIGNED) {
	case KE_ACT: return LM_ENG_ACT;
	case KE_DVE: return LM_ENG_DVE;
	case KE_PE: return LM_ENG_PE;
	case KE_POOL: return LM_ENG_POOL;
	case KE_SP: return LM_ENG_SP;
	default: return dflt;
	}
}

/* ---- tensors ----------------------------------------------------------------- */

/* Is name in the TensorName list? */
static int in_list(const lp_kval *list, const char *name)
{
	for (int i = 0; i < list->n; i++)
		if (!strcmp(F(&list->items[i], "name")->s, name))
			return 1;
	return 0;
}

/*
** The allocation of a TensorName, created on first sight (checked against
** earlier sightings after that).
*/
static int tensor(lp_cg *cg, const lp_kval *tn, const lp_kval *lnc,
		  tinfo *ti)
{
	const char *name = F(tn, "name")->s;
	const lp_kval *shape = F(tn, "shape"), *addr = F(tn, "address");
	const lp_kval *fd = F(shape, "freeDims");
	int64_t dims[9], par = 0, psize = 0, fsize = 0, felems = 1, off, base = 0;
	int n = 0, idx, rc, placed, mem = F(addr, "memory")->ctor;
	lm_dtype dt;
	lm_memtype mt;
	lm_tensorkind kind = LM_TK_INTERNAL;

	if (!name || !*name)
		return cg_fail(cg, "a tensor has an empty name");
	if ((rc = dtype_of(cg, F(tn, "dtype"), &dt)) != 0)
		return rc;
	switch (mem) {
	case 0: case 4: case 5: mt = LM_MT_DRAM; break;
	case 1: mt = LM_MT_SB; break;
	case 2: mt = LM_MT_PSUM; break;
	default:
		return cg_fail(cg, "tensor '%s' lives in memory '%s', which the "
			       "lowering does not support", name,
			       lp_kval_ctor_name(F(addr, "memory")));
	}
	if ((rc = nat(cg, F(shape, "parDim"), MAX_DIM, "parDim", &par)) != 0)
		return rc;
	if (fd->n > 8)
		return cg_fail(cg, "tensor '%s' has %d free dimensions (at most "
			       "8)", name, fd->n);
	dims[n++] = par;
	for (int i = 0; i < fd->n; i++) {
		if ((rc = nat(cg, &fd->items[i], MAX_DIM, "free dim",
			      &dims[n])) != 0)
			return rc;
		felems *= dims[n++];
		if (felems > MAX_ELEMS)
			return cg_fail(cg, "tensor '%s' is too large", name);
	}
	ti->dtype = dt;
	ti->mt = mt;
	ti->free_elems = felems;
	ti->par_dim = par;
	idx = (int)(intptr_t)lm_strmap_lookup(&cg->tensors, name) - 1;
	if (idx >= 0) {
		const lm_alloc *a = &cg->f->allocs[idx];
		int same = a->dtype == dt && a->n_shape == n &&
			   a->memlocs[0].type == mt;
		for (int i = 0; same && i < n; i++)
			same = a->tensor_shape[i] == dims[i];
		if (!same)
			return cg_fail(cg, "tensor '%s' is declared twice with "
				       "different dtype, shape or memory", name);
		ti->alloc = a->name;
		ti->part_bytes = a->memlocs[0].n_dims > 1 ?
			a->memlocs[0].dims[1] : 0;
		return 0;
	}
	if ((rc = nat(cg, F(addr, "parSize"), MAX_DIM, "parSize", &psize)) ||
	    (rc = nat(cg, F(addr, "freeSize"), MAX_ELEMS, "freeSize", &fsize)))
		return rc;
	if (mt != LM_MT_DRAM) {
		const lp_kval *po = some(F(addr, "parOffset"));
		const lp_kval *fo = some(F(addr, "freeOffset"));
		if (psize > LM_PARTITIONS || par > psize)
			return cg_fail(cg, "tensor '%s': %lld partitions in an "
				       "address of %lld (at most %d)", name,
				       (long long)par, (long long)psize,
				       LM_PARTITIONS);
		if (felems * lm_dtype_size(dt) > fsize)
			return cg_fail(cg, "tensor '%s': %lld elements of %s do "
				       "not fit in its %lld-byte address", name,
				       (long long)felems, lm_dtype_name(dt),
				       (long long)fsize);
		if (po && (rc = nat(cg, po, LM_PARTITIONS, "parOffset",
				    &base)) != 0)
			return rc;
		placed = fo != NULL;
		off = 0;
		if (fo && (rc = nat(cg, fo, MAX_ELEMS, "freeOffset", &off)) != 0)
			return rc;
	} else {
		placed = 1;
		off = 0;
		psize = par;
		fsize = felems * lm_dtype_size(dt);
	}
	if (in_list(F(lnc, "inputs"), name))
		kind = LM_TK_INPUT;
	else if (in_list(F(lnc, "outputs"), name))
		kind = LM_TK_OUTPUT;
	idx = lp_cg_add_tensor(cg, name, kind, dt, mt, dims, n, psize, fsize,
			       placed, off, base);
	{
		const lp_kval *sc = F(lnc, "sharedConstants");
		for (int i = 0; i < sc->n; i++)
			if (!strcmp(F(&sc->items[i], "name")->s, name)) {
				lm_alloc *a = &cg->f->allocs[idx];
				a->kind = LM_TK_CONST;
				free(a->file);
				a->file = lm_xstrdup(F(&sc->items[i],
						       "fileName")->s);
			}
	}
	ti->alloc = cg->f->allocs[idx].name;
	ti->part_bytes = mt != LM_MT_DRAM ? fsize : 0;
	return 0;
}

/*
** The partition pair of an SB / PSUM operand: KLR counts its step in the
** tensor's row elements, lncsim's access pattern in elements of a
** partition of the memory location (pe, the location's bytes per partition
** over the dtype's size), so a stride of k rows is k * pe. A pair that
** walks one partition gets pe.
*/
static int partition_step(lp_cg *cg, const tinfo *ti, lm_dtype dt,
			  lm_appair *p)
{
	int64_t es = lm_dtype_size(dt);
	int64_t row = ti->free_elems * lm_dtype_size(ti->dtype), pe;
	if (ti->mt == LM_MT_DRAM || es <= 0 || ti->part_bytes <= 0 || row <= 0)
		return 0;
	pe = ti->part_bytes / es;
	if (p[0].num == 1) {
		p[0].step = pe;
		return 0;
	}
	if (p[0].step < 0 || (p[0].step * es) % row)
		return cg_fail(cg, "access pattern partition step %lld is not a "
			       "whole number of the tensor's rows (%lld "
			       "elements)", (long long)p[0].step,
			       (long long)(row / es));
	p[0].step = p[0].step * es / row * pe;
	return 0;
}

/* ---- operands ---------------------------------------------------------------- */

/* Copy an APPair list into pairs (at most 8). */
static int pairs_of(lp_cg *cg, const lp_kval *list, lm_appair *p, int *n)
{
	if (list->n < 1 || list->n > 8)
		return cg_fail(cg, "access pattern has %d pairs (1 to 8 "
			       "supported)", list->n);
	for (int i = 0; i < list->n; i++) {
		const lp_kval *st = F(&list->items[i], "step");
		int64_t num = 0;
		int rc = nat(cg, F(&list->items[i], "num"), MAX_DIM, "num",
			     &num);
		if (rc)
			return rc;
		if (st->i <= -MAX_ELEMS || st->i >= MAX_ELEMS)
			return cg_fail(cg, "access pattern step %lld is out of "
				       "range", (long long)st->i);
		p[i].step = st->i;
		p[i].num = num;
	}
	*n = list->n;
	return 0;
}

/*
** AccessBasic: indexes over the shape [parDim, freeDims...] -> offset and
** pairs (a coordinate fixes a dimension; the partition pair stays first).
*/
static int basic_pairs(lp_cg *cg, const lp_kval *ab, const lp_kval *tn,
		       int64_t *offset, lm_appair *p, int *n)
{
	const lp_kval *shape = F(tn, "shape"), *idx = F(ab, "indexes");
	const lp_kval *fd = F(shape, "freeDims");
	int64_t dims[9], stride[9];
	int nd = 0;
	dims[nd++] = (int64_t)F(shape, "parDim")->u;
	for (int i = 0; i < fd->n && nd < 9; i++)
		dims[nd++] = (int64_t)fd->items[i].u;
	if (idx->n > nd)
		return cg_fail(cg, "%d indexes for a tensor of %d dimensions",
			       idx->n, nd);
	stride[nd - 1] = 1;
	for (int i = nd - 2; i >= 0; i--)
		stride[i] = stride[i + 1] * dims[i + 1];
	*offset = 0;
	*n = 0;
	for (int i = 0; i < nd; i++) {
		int64_t l = 0, u = dims[i], step = 1;
		if (i < idx->n) {
			const lp_kval *ix = &idx->items[i];
			if (ix->ctor == 0) {
				int64_t c = (int64_t)ix->items[0].u;
				if (ix->items[0].u >= (uint64_t)dims[i])
					return cg_fail(cg, "index %llu out of "
						       "dimension %d (%lld)",
						       (unsigned long long)
						       ix->items[0].u, i,
						       (long long)dims[i]);
				*offset += c * stride[i];
				if (i == 0)
					p[(*n)++] = (lm_appair){ stride[0], 1 };
				continue;
			}
			l = (int64_t)F(&ix->items[0], "l")->u;
			u = (int64_t)F(&ix->items[0], "u")->u;
			step = F(&ix->items[0], "step")->i;
			if (step <= 0 || l > u || u > dims[i])
				return cg_fail(cg, "slice %lld:%lld:%lld of "
					       "dimension %d is not supported",
					       (long long)l, (long long)u,
					       (long long)step, i);
		}
		*offset += l * stride[i];
		p[(*n)++] = (lm_appair){ step * stride[i],
					 (u - l + step - 1) / step };
	}
	return 0;
}

/*
** A TensorRef -> physical_ap. `lnc` gives the formal / const lists.
** On success *ti describes the tensor.
*/
static int operand(lp_cg *cg, const lp_kval *tr, const lp_kval *lnc,
		   lm_arg *a, tinfo *ti)
{
	const lp_kval *acc, *tn = NULL, *ov = NULL;
	lm_appair p[9];
	int np = 0, rc;
	int64_t offset = 0, sp = 0;
	lm_dtype dt;

	if (tr->type_tag != LP_T_TENSORREF || tr->ctor != 0)
		return cg_fail(cg, "operand form '%s' is not supported (the "
			       "frontend writes 'abstract')",
			       lp_kval_ctor_name(tr));
	acc = &tr->items[0];
	switch (acc->ctor) {
	case 0: /* simple: the whole tensor */
		tn = &acc->items[0];
		if ((rc = tensor(cg, tn, lnc, ti)) != 0)
			return rc;
		p[0] = (lm_appair){ ti->free_elems, ti->par_dim };
		p[1] = (lm_appair){ 1, ti->free_elems };
		np = 2;
		break;
	case 1: /* basic: indexes */
		tn = F(&acc->items[0], "tensor");
		if ((rc = tensor(cg, tn, lnc, ti)) != 0 ||
		    (rc = basic_pairs(cg, &acc->items[0], tn, &offset, p,
				      &np)) != 0)
			return rc;
		break;
	case 2: { /* pattern */
		const lp_kval *ap = &acc->items[0];
		int64_t po = 0, fo = 0;
		tn = F(ap, "tensor");
		if ((rc = tensor(cg, tn, lnc, ti)) != 0 ||
		    (rc = pairs_of(cg, F(ap, "pattern"), p, &np)) != 0 ||
		    (rc = nat(cg, F(ap, "parOffset"), MAX_DIM, "parOffset",
			      &po)) != 0 ||
		    (rc = nat(cg, F(ap, "freeOffset"), MAX_ELEMS, "freeOffset",
			      &fo)) != 0)
			return rc;
		offset = po * ti->free_elems + fo;
		break;
	}
	case 3: { /* birPattern */
		const lp_kval *bp = &acc->items[0];
		tn = F(bp, "tensor");
		if (some(F(bp, "scalarOffset")) || some(F(bp, "vectorOffset")))
			return cg_fail(cg, "dynamic (scalar / vector) offsets "
				       "are not supported");
		if (F(bp, "indirectDim")->i != 0)
			return cg_fail(cg, "indirect access patterns are not "
				       "supported");
		if ((rc = tensor(cg, tn, lnc, ti)) != 0 ||
		    (rc = pairs_of(cg, F(bp, "pattern"), p, &np)) != 0 ||
		    (rc = nat(cg, F(bp, "offset"), MAX_ELEMS, "offset",
			      &offset)) != 0)
			return rc;
		ov = some(F(bp, "dtypeOverride"));
		break;
	}
	default:
		return cg_fail(cg, "access form '%s' is not supported",
			       lp_kval_ctor_name(acc));
	}
	dt = ti->dtype;
	if (ov && (rc = dtype_of(cg, ov, &dt)) != 0)
		return rc;
	if (ti->mt != LM_MT_DRAM && ti->free_elems > 0) {
		sp = offset / ti->free_elems;
		offset %= ti->free_elems;
	}
	if ((rc = partition_step(cg, ti, dt, p)) != 0)
		return rc;
	lm_b_init_ap(a, ti->alloc, NULL, dt, sp, offset, p, np);
	return 0;
}

/* An Immediate as a number (float or int); register / pointer fail. */
static int immediate(lp_cg *cg, const lp_kval *imm, double *out)
{
	float f;
	switch (imm->ctor) {
	case 2:
		*out = (double)imm->items[0].i;
		return 0;
	case 3:
		memcpy(&f, &imm->items[0].fbits, sizeof f);
		*out = f;
		return 0;
	default:
		return cg_fail(cg, "immediate '%s' is not supported (only int "
			       "and float)", lp_kval_ctor_name(imm));
	}
}

/* An Operand that must be an immediate. */
static int operand_imm(lp_cg *cg, const lp_kval *op, double *out)
{
	if (op->ctor != 0)
		return cg_fail(cg, "tensor operands in place of a scalar are "
			       "not supported");
	return immediate(cg, &op->items[0], out);
}

/* A DataPattern -> base, channel multiplier, pattern pairs of in. */
static int data_pattern(lp_cg *cg, const lp_kval *dp, lm_inst *in)
{
	const lp_kval *pl = F(dp, "pattern");
	lm_appair p[9];
	int np, rc;
	int64_t base, chmul;
	if ((rc = pairs_of(cg, pl, p, &np)) != 0)
		return rc;
	base = F(dp, "offset")->i;
	chmul = F(dp, "channelMultiplier")->i;
	if (base <= -MAX_ELEMS || base >= MAX_ELEMS || chmul <= -MAX_ELEMS ||
	    chmul >= MAX_ELEMS)
		return cg_fail(cg, "data pattern offset or channel multiplier "
			       "out of range");
	lm_b_set_pattern(in, base, chmul, p, np);
	return 0;
}

/* ---- instructions ---------------------------------------------------------- */

/* A fresh instruction (lm_b_init_inst) with n_ins inputs and n_outs
** outputs, each filled by operand() or lm_b_init_ap. */
static void inst_init(lm_inst *in, const char *name, lm_opcode op,
		      lm_engine eng, int n_ins, int n_outs)
{
	lm_b_init_inst(in, op, eng, name);
	in->n_ins = n_ins;
	in->n_outs = n_outs;
	in->ins = n_ins ? lm_xcalloc((size_t)n_ins, sizeof *in->ins) : NULL;
	in->outs = n_outs ? lm_xcalloc((size_t)n_outs, sizeof *in->outs) : NULL;
}

/* Emit, or on failure free the half-built instruction. */
static int finish(lp_cg *cg, lm_inst *in, int rc)
{
	if (rc) {
		lm_inst_clear(in);
		return rc;
	}
	lp_cg_emit(cg, in);
	return 0;
}

/* nisa.activation: Activation with the zero-bias helper when bias-less. */
static int cg_activate(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		       const char *name)
{
	static const char *const funcs[] = {
		"Abs", "Arctan", "Copy", "Erf", "Derivative_Erf", "Exp", "Gelu",
		"Gelu_apprx_tanh", "Derivative_Gelu", "Ln", "Mish",
		"Reciprocal", "Relu", "Rsqrt", "Sigmoid", "Sign", "Silu",
		"Derivative_silu", "Sin", "Softplus", "Sqrt", "Square", "Tanh",
		"Gelu_apprx_sigmoid", NULL /* gelu_apprx_sigmoid_dx */
	};
	const lp_kval *fn = F(op, "activationFunc"), *bias;
	lm_inst in;
	tinfo ti;
	int rc;
	double scale;

	if (F(op, "accumulatorCmd")->ctor != 0)
		return cg_fail(cg, "activation accumulatorCmd '%s' is not "
			       "supported (only Idle)",
			       lp_kval_ctor_name(F(op, "accumulatorCmd")));
	if (some(F(op, "reduceOp")) || some(F(op, "reduceRes")))
		return cg_fail(cg, "activation with a reduction is not "
			       "supported");
	if (fn->ctor < 0 || fn->ctor >= (int)(sizeof funcs / sizeof *funcs) ||
	    !funcs[fn->ctor])
		return cg_fail(cg, "activation function '%s' has no BIR "
			       "counterpart", lp_kval_ctor_name(fn));
	if ((rc = operand_imm(cg, F(op, "scale"), &scale)) != 0)
		return rc;
	inst_init(&in, name, LM_OP_ACTIVATION, LM_ENG_ACT, 2, 1);
	in.act_func = lm_actfunc_parse(funcs[fn->ctor]);
	in.has_scale = 1;
	in.scale = scale;
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	bias = some(F(op, "bias"));
	if (!rc && bias) {
		rc = operand(cg, bias, lnc, &in.ins[1], &ti);
	} else if (!rc) {
		int64_t parts = in.ins[0].ap[0].num;
		lm_appair bp[2] = { { 1, parts }, { 1, 1 } };
		if (parts > cg->n_partitions)
			rc = cg_fail(cg, "activation over %lld partitions",
				     (long long)parts);
		else
			lm_b_init_ap(&in.ins[1], lp_cg_zero_bias(cg), NULL,
				     LM_DT_FLOAT32, 0, 0, bp, 2);
	}
	return finish(cg, &in, rc);
}

/* psumAccumulateFlag values the lowering models (docs/provision.md). */
enum { PSUM_FLAG_WHOLE = 3, PSUM_FLAG_ACCUMULATE = 1 << 7 };

/*
** nisa.nc_matmul: Matmult (transpose mode when isTranspose). The start /
** stop bits are set by the group inference after the statement (psum_note);
** a psumAccumulateFlag (the schema generation that carried it) is checked
** here: 3, the tracer's default, leaves the decision to the inference; 128,
** the '+=' form, makes the matmul accumulate; anything else is refused.
*/
static int cg_matmul(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		     const char *name, mm_groups *mg)
{
	const lp_kval *flag = lp_kval_field(op, "psumAccumulateFlag");
	lm_inst in;
	tinfo ti;
	int rc;
	mg->accumulate = 0;
	if (flag) {
		if (flag->u == PSUM_FLAG_ACCUMULATE && F(op, "isTranspose")->b)
			return cg_fail(cg, "ncMatMul psumAccumulateFlag %llu "
				       "('+=') on a transpose is not modelled",
				       (unsigned long long)flag->u);
		if (flag->u == PSUM_FLAG_ACCUMULATE)
			mg->accumulate = 1;
		else if (flag->u != PSUM_FLAG_WHOLE)
			return cg_fail(cg, "ncMatMul psumAccumulateFlag "
				       "%llu is not modelled (lncsim models "
				       "3, the default, and 128, the '+=' "
				       "form)",
				       (unsigned long long)flag->u);
	}
	inst_init(&in, name, LM_OP_MATMULT, LM_ENG_PE, 2, 1);
	lm_b_set_matmult(&in, 1, 1, F(op, "isTranspose")->b);
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "stationary"), lnc, &in.ins[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "moving"), lnc, &in.ins[1], &ti);
	return finish(cg, &in, rc);
}

/* nisa.dma_copy (and the legacy dmaCopy): DMACopy on the kernel queue. */
static int cg_dma(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		  const char *name)
{
	lm_inst in;
	tinfo ti;
	int rc;
	if (F(op, "compute_op")->ctor != 0)
		return cg_fail(cg, "DMA with compute_op '%s' is not supported",
			       lp_kval_ctor_name(F(op, "compute_op")));
	inst_init(&in, name, LM_OP_DMACOPY,
		  map_engine(lp_kval_field(op, "engine"), LM_ENG_SP), 1, 1);
	in.queue = lm_xstrdup(lp_cg_queue(cg));
	in.extra = cJSON_CreateObject();
	cJSON_AddStringToObject(in.extra, "mode", "Copy");
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	return finish(cg, &in, rc);
}

/* nisa.tensor_tensor: TensorTensor. */
static int cg_tensor_tensor(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			    const char *name)
{
	lm_inst in;
	tinfo ti;
	int rc;
	inst_init(&in, name, LM_OP_TENSORTENSOR,
		  map_engine(F(op, "engine"), LM_ENG_DVE), 2, 1);
	in.alu = lm_aluop_parse(lp_kval_ctor_name(F(op, "op")));
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src0"), lnc, &in.ins[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src1"), lnc, &in.ins[1], &ti);
	return finish(cg, &in, rc);
}

/* nisa.tensor_scalar: TensorScalar (a missing second op is bypass). */
static int cg_tensor_scalar(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			    const char *name)
{
	const lp_kval *imm1 = some(F(op, "imm1")), *op1 = some(F(op, "op1"));
	int rev = F(op, "reverse")->ctor, rc;
	lm_inst in;
	tinfo ti;
	inst_init(&in, name, LM_OP_TENSORSCALAR,
		  map_engine(F(op, "engine"), LM_ENG_DVE), 1, 1);
	in.alu0 = lm_aluop_parse(lp_kval_ctor_name(F(op, "op0")));
	in.alu1 = op1 ? lm_aluop_parse(lp_kval_ctor_name(op1)) : LM_ALU_BYPASS;
	in.has_const0 = in.has_const1 = 1;
	in.reverse0 = rev == 1 || rev == 3;
	in.reverse1 = rev == 2 || rev == 3;
	rc = operand_imm(cg, F(op, "imm0"), &in.const0);
	if (!rc && imm1)
		rc = operand_imm(cg, imm1, &in.const1);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	return finish(cg, &in, rc);
}

/* nisa.tensor_copy (and the legacy copy): TensorCopy. */
static int cg_copy(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		   const char *name)
{
	lm_inst in;
	tinfo ti;
	int rc;
	inst_init(&in, name, LM_OP_TENSORCOPY,
		  map_engine(lp_kval_field(op, "engine"), LM_ENG_DVE), 1, 1);
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	return finish(cg, &in, rc);
}

/* nisa.memset: Memset. */
static int cg_memset(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		     const char *name)
{
	lm_inst in;
	tinfo ti;
	double v;
	int rc;
	inst_init(&in, name, LM_OP_MEMSET,
		  map_engine(F(op, "engine"), LM_ENG_DVE), 0, 1);
	rc = immediate(cg, F(op, "value"), &v);
	if (!rc) {
		lm_b_set_memset(&in, "Const", v >= 0 && v < 4294967296.0 &&
				v == (double)(int64_t)v ? (int64_t)v : 0);
		lm_b_set_memset_value(&in, v);
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	}
	return finish(cg, &in, rc);
}

/* nisa.iota: Iota. */
static int cg_iota(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		   const char *name)
{
	lm_inst in;
	tinfo ti;
	int rc;
	inst_init(&in, name, LM_OP_IOTA, LM_ENG_POOL, 0, 1);
	rc = data_pattern(cg, F(op, "pattern"), &in);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	return finish(cg, &in, rc);
}

/* nisa.affine_select: TensorScalarAffineSelect. */
static int cg_affine_select(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			    const char *name)
{
	lm_inst in;
	tinfo ti;
	int rc;
	double fill = 0;
	inst_init(&in, name, LM_OP_AFFINESELECT, LM_ENG_POOL, 1, 1);
	/* by name: an AluOp BIR lacks is the verifier's to refuse */
	in.alu = lm_aluop_parse(lp_kval_ctor_name(F(op, "cmpOp")));
	rc = data_pattern(cg, F(op, "pred"), &in);
	if (!rc)
		rc = immediate(cg, F(op, "onFalseValue"), &fill);
	if (!rc)
		lm_b_set_fill(&in, fill);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "onTrueTile"), lnc, &in.ins[0], &ti);
	return finish(cg, &in, rc);
}

/*
** transpose (DVE-style nc_transpose): a transpose-mode PE Matmult against
** the cached identity of the data dtype, through a PSUM scratch
** bank and a TensorCopy when the destination is not in PSUM.
*/
static int cg_transpose(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			const char *name)
{
	lm_inst mm, cp;
	lm_arg src, dst;
	tinfo si, di;
	int64_t P, Fr;
	int rc;
	char *n2;

	memset(&src, 0, sizeof src);
	memset(&dst, 0, sizeof dst);
	if ((rc = operand(cg, F(op, "src"), lnc, &src, &si)) != 0 ||
	    (rc = operand(cg, F(op, "dst"), lnc, &dst, &di)) != 0)
		goto done;
	P = src.ap[0].num;
	Fr = lm_arg_count(&src) / (P ? P : 1);
	if (si.mt != LM_MT_SB || P > 128 || Fr > 128) {
		rc = cg_fail(cg, "transpose source must be an SBUF tile of at "
			     "most 128 x 128 (got %lld x %lld)", (long long)P,
			     (long long)Fr);
		goto done;
	}
	inst_init(&mm, name, LM_OP_MATMULT, LM_ENG_PE, 2, 1);
	lm_b_set_matmult(&mm, 1, 1, 1);
	{
		lm_appair ip[2] = { { 128, Fr }, { 1, Fr } };
		lm_b_init_ap(&mm.ins[0], lp_cg_identity(cg, src.dtype), NULL,
			     src.dtype, 0, 0, ip, 2);
	}
	lm_arg_copy(&mm.ins[1], &src);
	if (di.mt == LM_MT_PSUM) {
		lm_arg_copy(&mm.outs[0], &dst);
		lp_cg_emit(cg, &mm);
		goto done;
	}
	{
		/* step: one partition of the bank, in the data dtype */
		lm_appair tp[2] = { { LM_PSUM_BANK_BYTES /
				      lm_dtype_size(src.dtype), Fr }, { 1, P } };
		const char *ps = lp_cg_transpose_psum(cg);
		if (P * lm_dtype_size(src.dtype) > LM_PSUM_BANK_BYTES) {
			lm_inst_clear(&mm);
			rc = cg_fail(cg, "transpose of %lld partitions does not "
				     "fit one PSUM bank", (long long)P);
			goto done;
		}
		lm_b_init_ap(&mm.outs[0], ps, NULL, src.dtype, 0, 0, tp, 2);
		inst_init(&cp, "", LM_OP_TENSORCOPY,
			  map_engine(F(op, "engine"), LM_ENG_DVE), 1, 1);
		free(cp.name);
		n2 = lm_xasprintf("%s.evac", name);
		cp.name = lp_cg_inst_name(cg, n2);
		free(n2);
		lm_b_init_ap(&cp.ins[0], ps, NULL, src.dtype, 0, 0, tp, 2);
		lm_arg_copy(&cp.outs[0], &dst);
		lp_cg_emit(cg, &mm);
		lp_cg_emit(cg, &cp);
	}
done:
	lm_arg_clear(&src);
	lm_arg_clear(&dst);
	return rc;
}

/* ---- PSUM accumulation groups ----------------------------------------- */

/*
** psum_note: which ncMatMuls accumulate. Program order is block order,
** then statement order (the subset has no control flow). A Matmult that is
** not a transpose is a group member:
**   - its dst region equals the region of an open group (same allocation,
**     dtype, start partition, offset and access pattern): it accumulates
**     (start_tensor_calc false) and becomes the group's last Matmult;
**   - else it starts a group (start_tensor_calc true), after closing every
**     open group its region overlaps; with psumAccumulateFlag 128 ('+=') it
**     accumulates instead, and opens the group all the same.
** Every other operand of every instruction (a read or a write, a transpose
** included) closes the open groups it overlaps. Overlap is judged per
** allocation on the byte interval within a partition that the pattern's
** free pairs span, for all partitions (conservative). stop_tensor_calc is
** true on the last Matmult of each group only.
*/

/* Byte interval within a partition that operand a spans. */
static void mm_span(const lm_arg *a, int64_t *lo, int64_t *hi)
{
	int64_t l = a->offset, h = a->offset, es = lm_dtype_size(a->dtype);
	for (int i = 1; i < a->n_ap; i++) {
		int64_t d = a->ap[i].step * (a->ap[i].num > 0 ? a->ap[i].num - 1
							      : 0);
		if (d < 0)
			l += d;
		else
			h += d;
	}
	if (es < 1)
		es = 1;
	*lo = l * es;
	*hi = (h + 1) * es - 1;
}

/* Same region: allocation, dtype, start partition, offset, pattern. */
static int mm_same(const lm_arg *a, const lm_arg *b)
{
	if (strcmp(a->memsetref, b->memsetref) || a->dtype != b->dtype ||
	    a->start_partition != b->start_partition ||
	    a->offset != b->offset || a->n_ap != b->n_ap)
		return 0;
	for (int i = 0; i < a->n_ap; i++)
		if (a->ap[i].step != b->ap[i].step ||
		    a->ap[i].num != b->ap[i].num)
			return 0;
	return 1;
}

/* Close the open groups operand a overlaps (all but `keep`, -1: none). */
static void mm_close(mm_groups *mg, const lm_arg *a, int keep)
{
	int64_t lo, hi;
	if (a->kind != LM_ARG_PHYSICAL_AP || !a->memsetref)
		return;
	mm_span(a, &lo, &hi);
	for (int i = 0; i < mg->n; i++) {
		mm_group *g = &mg->g[i];
		if (i == keep || strcmp(g->dst.memsetref, a->memsetref) ||
		    hi < g->lo || lo > g->hi)
			continue;
		lm_arg_clear(&g->dst);
		if (keep == mg->n - 1)
			keep = i;
		mg->g[i] = mg->g[--mg->n];
		i--;
	}
}

/* Apply the rule to instruction k of block b (emitted in program order). */
static void mm_group_inst(lp_cg *cg, mm_groups *mg, int b, int k)
{
	lm_inst *in = &cg->f->blocks[b].insts[k];
	int i, member = in->op == LM_OP_MATMULT && !in->is_transpose &&
			in->n_outs == 1;

	for (i = 0; i < in->n_ins; i++)
		mm_close(mg, &in->ins[i], -1);
	if (!member) {
		for (i = 0; i < in->n_outs; i++)
			mm_close(mg, &in->outs[i], -1);
		return;
	}
	for (i = 0; i < mg->n && !mm_same(&mg->g[i].dst, &in->outs[0]); i++)
		;
	mm_close(mg, &in->outs[0], i < mg->n ? i : -1);
	for (i = 0; i < mg->n && !mm_same(&mg->g[i].dst, &in->outs[0]); i++)
		;
	in->has_stop_tensor_calc = in->stop_tensor_calc = 1;
	if (i < mg->n) {
		mm_group *g = &mg->g[i];
		cg->f->blocks[g->blk].insts[g->inst].stop_tensor_calc = 0;
		in->start_tensor_calc = 0;
		g->blk = b;
		g->inst = k;
		return;
	}
	in->start_tensor_calc = !mg->accumulate;
	lm_grow(&mg->g, &mg->cap, mg->n + 1, sizeof *mg->g);
	mm_group *g = &mg->g[mg->n++];
	lm_arg_copy(&g->dst, &in->outs[0]);
	mm_span(&g->dst, &g->lo, &g->hi);
	g->blk = b;
	g->inst = k;
}

/* Free the group list. */
static void mm_groups_clear(mm_groups *mg)
{
	for (int i = 0; i < mg->n; i++)
		lm_arg_clear(&mg->g[i].dst);
	free(mg->g);
	memset(mg, 0, sizeof *mg);
}

/* One statement: its name, then the operator's codegen function. */
static int cg_stmt(lp_cg *cg, const lp_kval *stmt, const lp_kval *lnc,
		   const char *label, int index, mm_groups *mg)
{
	const lp_kval *op = F(stmt, "op"), *nm = some(F(stmt, "name"));
	const lp_kval *payload = op->n == 1 ? &op->items[0] : NULL;
	const char *opname = lp_kval_ctor_name(op);
	char *base, *name;
	int rc, n_before = cg->blk->n_insts;

	snprintf(cg->where, sizeof cg->where, "kernel %s/block %s/statement "
		 "#%d%s%s", cg->kname, label, index, nm ? " " : "",
		 nm ? nm->s : "");
	if (nm && nm->s[0])
		base = lm_xstrdup(nm->s);
	else
		base = lm_xasprintf("%s.%s_%d", cg->kname, opname,
				    cg->n_insts_made);
	name = lp_cg_inst_name(cg, base);
	free(base);
	switch (payload ? op->ctor : -1) {
	case OP_NCACTIVATE: rc = cg_activate(cg, payload, lnc, name); break;
	case OP_NCMATMUL: rc = cg_matmul(cg, payload, lnc, name, mg); break;
	case OP_DMACOPY:
	case OP_NCDMACOPY: rc = cg_dma(cg, payload, lnc, name); break;
	case OP_TENSORTENSOR:
		rc = cg_tensor_tensor(cg, payload, lnc, name);
		break;
	case OP_TENSORSCALAR:
		rc = cg_tensor_scalar(cg, payload, lnc, name);
		break;
	case OP_COPY:
	case OP_NCCOPY: rc = cg_copy(cg, payload, lnc, name); break;
	case OP_MEMSET: rc = cg_memset(cg, payload, lnc, name); break;
	case OP_IOTA: rc = cg_iota(cg, payload, lnc, name); break;
	case OP_NCAFFINESELECT:
		rc = cg_affine_select(cg, payload, lnc, name);
		break;
	case OP_TRANSPOSE: rc = cg_transpose(cg, payload, lnc, name); break;
	default:
		rc = cg_fail(cg, "operator '%s' is not supported by the KLR "
			     "lowering", opname);
	}
	free(name);
	for (int k = n_before; !rc && k < cg->blk->n_insts; k++)
		mm_group_inst(cg, mg, (int)(cg->blk - cg->f->blocks), k);
	mg->accumulate = 0;
	return rc;
}

/*
** codegenLncKernel: the kernel's function (name = the kernel name, kind
** nki) with one BIR block per non-empty KLR block of the chosen body.
*/
int lp_codegen_lnc(lp_cg *cg, const lp_kval *lnc, int64_t core)
{
	const lp_kval *bodies = F(lnc, "bodies"), *body;
	mm_groups mg;
	int rc;

	memset(&mg, 0, sizeof mg);
	cg->kname = lm_xstrdup(F(lnc, "name")->s ? F(lnc, "name")->s : "");
	snprintf(cg->where, sizeof cg->where, "kernel %s", cg->kname);
	if (!cg->kname[0])
		return cg_fail(cg, "the kernel has an empty name");
	if (bodies->n < 1)
		return cg_fail(cg, "the kernel has no body");
	if (bodies->n > 1 && core >= bodies->n)
		return cg_fail(cg, "the kernel has %d per-core bodies, none for "
			       "core %lld", bodies->n, (long long)core);
	body = &bodies->items[bodies->n > 1 ? core : 0];
	cg->f->name = lm_xstrdup(cg->kname);
	lm_b_set_kind(cg->f, LM_FK_NKI);
	/* the formals exist even when no statement touches them */
	for (int k = 0; k < 2; k++) {
		const lp_kval *l = F(lnc, k ? "outputs" : "inputs");
		for (int i = 0; i < l->n; i++) {
			tinfo ti;
			if ((rc = tensor(cg, &l->items[i], lnc, &ti)) != 0)
				return rc;
		}
	}
	for (int b = 0; b < body->n; b++) {
		const lp_kval *blk = &body->items[b], *stmts = F(blk, "body");
		const char *label = F(blk, "label")->s;
		lm_block *nb;
		if (stmts->n == 0)
			continue;
		nb = lm_b_append_block(cg->f, label);
		cg->blk = nb;
		for (int s = 0; s < stmts->n; s++)
			if ((rc = cg_stmt(cg, &stmts->items[s], lnc, label,
					  s, &mg)) != 0) {
				mm_groups_clear(&mg);
				return rc;
			}
	}
	mm_groups_clear(&mg);
	return lp_cg_place(cg);
}

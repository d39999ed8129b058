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
#include "enumtab.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on the numbers a kernel may use (checked before any arithmetic). */
#define MAX_DIM ((int64_t)1 << 31)
#define MAX_ELEMS ((int64_t)1 << 40)
#define MAX_CORES 64

/* Operator constructors lowered here (KLR's operator serde tags). */
enum {
	OP_NCACTIVATE = 1, OP_ACTIVATIONREDUCE = 2, OP_NCAFFINESELECT = 4, OP_BNAGGR = 5, OP_BNSTATS = 6,
	OP_COPY = 7, OP_NCCOPY = 8, OP_DMACOPY = 10, OP_NCDMACOPY = 11,
	OP_DMATRANSPOSE = 12,
	OP_FINDINDEX8 = 14, OP_IOTA = 15, OP_NCLOCALGATHER = 19,
	OP_NCMATMUL = 21,
	OP_MATCHREPLACE8 = 22, OP_MAX8 = 24, OP_MEMSET = 25,
	OP_RANGESELECT = 26, OP_NCRANGESELECT = 27, OP_RECIPROCAL = 28,
	OP_TENSORREDUCE = 32, OP_TENSORSCALAR = 33, OP_TENSORTENSOR = 34,
	OP_TENSORTENSORSCAN = 35, OP_TENSORSCALARREDUCE = 37,
	OP_SCALARTENSORTENSOR = 29, OP_NCSCALARTENSORTENSOR = 30,
	OP_SHUFFLE = 31, OP_DMACOMPUTE = 50,
	OP_TRANSPOSE = 38, OP_SELECTREDUCE = 39, OP_TENSORLOAD = 43,
	OP_TENSORSTORE = 44, OP_REGISTERMOVE = 45,
	OP_SENDRECV = 41, OP_SENDRECVCOMPUTE = 42,
	OP_CMPBRANCH = 46, OP_REGISTERALUOP = 47, OP_COREBARRIER = 63,
	OP_EXPONENTIAL = 74
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

static int reg_alloc(lp_cg *cg, const char *reg, const char **out);

/*
** A birPattern whose scalarOffset names a register: the register holds an
** element offset added to the static one, in the tensor's elements as if
** contiguous (KLR's unit). The operand becomes a register_ap with
** is_regloc_offset (register + const_ap_offset = the start element in
** the memory location's folded encoding): the same number when a
** partition row of the tensor is a whole partition of its memory location
** (always in HBM), which is required.
*/
static int dynamic_offset(lp_cg *cg, const char *reg, const tinfo *ti,
			  int override, lm_arg *a)
{
	int64_t pe = ti->mt == LM_MT_DRAM ? 0 :
		     ti->part_bytes / lm_dtype_size(ti->dtype);
	int64_t fold = a->start_partition * pe + a->offset;
	const char *r;
	cJSON *o, *ap;
	int rc;
	if (override)
		return cg_fail(cg, "a register offset with a dtypeOverride is "
			       "not supported");
	if (ti->mt != LM_MT_DRAM && pe != ti->free_elems)
		return cg_fail(cg, "a register offset into '%s', whose %lld "
			       "elements per partition do not fill the %lld of "
			       "its address, is not supported", ti->alloc,
			       (long long)ti->free_elems, (long long)pe);
	if ((rc = reg_alloc(cg, reg, &r)) != 0)
		return rc;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "register_ap");
	ap = cJSON_AddArrayToObject(o, "ap");
	for (int i = 0; i < a->n_ap; i++) {
		cJSON *pr = cJSON_CreateArray();
		cJSON_AddItemToArray(pr, cJSON_CreateNumber((double)
							    a->ap[i].step));
		cJSON_AddItemToArray(pr, cJSON_CreateNumber((double)
							    a->ap[i].num));
		cJSON_AddItemToArray(ap, pr);
	}
	cJSON_AddStringToObject(o, "dtype", lm_dtype_name(a->dtype));
	cJSON_AddStringToObject(o, "memsetref", ti->alloc);
	cJSON_AddStringToObject(o, "memref", ti->alloc);
	cJSON_AddStringToObject(o, "regref", r);
	cJSON_AddTrueToObject(o, "is_regloc_offset");
	cJSON_AddNumberToObject(o, "const_ap_offset", (double)fold);
	lm_arg_clear(a);
	memset(a, 0, sizeof *a);
	a->kind = LM_ARG_OPAQUE;
	a->dtype = ti->dtype;
	a->memsetref = lm_xstrdup(ti->alloc);
	a->extra = o;
	return 0;
}

/* Is a a register_ap (a dynamic offset)? */
static int is_dynamic(const lm_arg *a)
{
	return a->kind == LM_ARG_OPAQUE && a->memsetref;
}

/*
** A TensorRef -> physical_ap. `lnc` gives the formal / const lists.
** On success *ti describes the tensor.
*/
static int operand(lp_cg *cg, const lp_kval *tr, const lp_kval *lnc,
		   lm_arg *a, tinfo *ti)
{
	const lp_kval *acc, *tn = NULL, *ov = NULL, *sreg = NULL;
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
		sreg = some(F(bp, "scalarOffset"));
		if (some(F(bp, "vectorOffset")))
			return cg_fail(cg, "vector (indirect) offsets are not "
				       "supported");
		if (sreg && sreg->ctor != 0)
			return cg_fail(cg, "a scalar offset given as an access "
				       "is not supported (only a register)");
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
	return sreg ? dynamic_offset(cg, sreg->items[0].s, ti, ov != NULL, a)
		    : 0;
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
	int dyn_ok = in->op == LM_OP_DMACOPY || in->op == LM_OP_TCDYNSRC ||
		     in->op == LM_OP_TCDYNDST || in->op == LM_OP_TENSORLOAD ||
		     in->op == LM_OP_TENSORSAVE;
	for (int i = 0; !rc && !dyn_ok && i < in->n_ins + in->n_outs; i++)
		if (is_dynamic(i < in->n_ins ? &in->ins[i]
					     : &in->outs[i - in->n_ins]))
			rc = cg_fail(cg, "a register offset (scalarOffset) on "
				     "%s is not supported (only on DMA copies, "
				     "tensor copies and register loads / "
				     "stores)", lm_opcode_name(in->op));
	if (rc) {
		lm_inst_clear(in);
		return rc;
	}
	lp_cg_emit(cg, in);
	return 0;
}

/*
** nisa.activation: Activation with the zero-bias helper when bias-less.
** nisa.activation_reduce (reduce set): the same with the results' row
** sums into the activation engine's accumulator registers by
** accumulatorCmd (KLR's AccumCmd Idle / Zero / Accumulate /
** ZeroAccumulate are the BIR EngineAccumulationType values of the same
** names), reduce_op add, and the registers read out into reduceRes
** (outs[1]). The registers only add: a reduceOp other than add, a
** LoadAccumulate (its initial value has no operand) and a missing
** reduceRes are refused.
*/
static int cg_activate(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		       const char *name, int reduce)
{
	static const char *const funcs[] = {
		"Abs", "Arctan", "Copy", "Erf", "Derivative_Erf", "Exp", "Gelu",
		"Gelu_apprx_tanh", "Derivative_Gelu", "Ln", "Mish",
		"Reciprocal", "Relu", "Rsqrt", "Sigmoid", "Sign", "Silu",
		"Derivative_silu", "Sin", "Softplus", "Sqrt", "Square", "Tanh",
		"Gelu_apprx_sigmoid", NULL /* gelu_apprx_sigmoid_dx */
	};
	const lp_kval *fn = F(op, "activationFunc"), *bias;
	const lp_kval *cmd = F(op, "accumulatorCmd"), *rop = some(F(op,
		"reduceOp")), *res = some(F(op, "reduceRes"));
	lm_inst in;
	tinfo ti;
	int rc;
	double scale;

	if (!reduce && cmd->ctor != 0)
		return cg_fail(cg, "activation accumulatorCmd '%s' is not "
			       "supported (only Idle; activationReduce "
			       "accumulates)", lp_kval_ctor_name(cmd));
	if (!reduce && (rop || res))
		return cg_fail(cg, "activation with a reduction is not "
			       "supported (activationReduce reduces)");
	if (reduce && (cmd->ctor < 0 || cmd->ctor > 3))
		return cg_fail(cg, "activationReduce accumulatorCmd '%s' is "
			       "not modelled (Idle, Zero, Accumulate and "
			       "ZeroAccumulate are; a LoadAccumulate's initial "
			       "value has no operand)", lp_kval_ctor_name(cmd));
	if (reduce && rop && strcmp(lp_kval_ctor_name(rop), "add"))
		return cg_fail(cg, "activationReduce reduceOp '%s' is not "
			       "modelled (the accumulator registers only "
			       "add)", lp_kval_ctor_name(rop));
	if (reduce && !res)
		return cg_fail(cg, "activationReduce without a reduceRes");
	if (reduce && cmd->ctor == 0)
		return cg_fail(cg, "activationReduce reduceRes with "
			       "accumulatorCmd Idle (nothing is accumulated "
			       "to read out)");
	if (fn->ctor < 0 || fn->ctor >= (int)(sizeof funcs / sizeof *funcs) ||
	    !funcs[fn->ctor])
		return cg_fail(cg, "activation function '%s' has no BIR "
			       "counterpart", lp_kval_ctor_name(fn));
	if ((rc = operand_imm(cg, F(op, "scale"), &scale)) != 0)
		return rc;
	inst_init(&in, name, LM_OP_ACTIVATION, LM_ENG_ACT, 2, reduce ? 2 : 1);
	in.act_func = lm_actfunc_parse(funcs[fn->ctor]);
	in.has_scale = 1;
	in.scale = scale;
	if (reduce) {
		in.eng_acc = cmd->ctor;
		in.reduce_alu = LM_ALU_ADD;
	}
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc && reduce)
		rc = operand(cg, res, lnc, &in.outs[1], &ti);
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
** The keys of an ncMatMul the Matmult carries as they are: tilePosition
** and tileSize (where in the PE array it runs) as tile_position /
** tile_size when given, perfMode as perf_mode when not None (the
** simulator refuses a mode it does not model, by name).
*/
static int mm_passthrough(lp_cg *cg, lm_inst *in, const lp_kval *op)
{
	static const char *const key[2][2] = {
		{ "tilePosition", "tile_position" }, { "tileSize", "tile_size" },
	};
	const lp_kval *pm = F(op, "perfMode");
	for (int k = 0; k < 2; k++) {
		const lp_kval *l = F(op, key[k][0]);
		cJSON *a;
		if (!l->n)
			continue;
		if (l->n != 2)
			return cg_fail(cg, "ncMatMul %s has %d values (a pair "
				       "[row, column] or none)", key[k][0],
				       l->n);
		for (int i = 0; i < 2; i++)
			if (l->items[i].u > INT32_MAX)
				return cg_fail(cg, "ncMatMul %s value %llu is "
					       "too large", key[k][0],
					       (unsigned long long)
					       l->items[i].u);
		if (!in->extra)
			in->extra = cJSON_CreateObject();
		a = cJSON_AddArrayToObject(in->extra, key[k][1]);
		for (int i = 0; i < l->n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(
				(double)l->items[i].u));
	}
	if (pm->ctor != 0) {
		if (!in->extra)
			in->extra = cJSON_CreateObject();
		cJSON_AddStringToObject(in->extra, "perf_mode",
					lp_kval_ctor_name(pm));
	}
	return 0;
}

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
	/* the 0/1 promises (checked by the simulator when it runs) */
	in.is_weight_onezero = F(op, "isStationaryOneZero")->b;
	in.is_fmap_onezero = F(op, "isMovingZero")->b;
	if ((rc = mm_passthrough(cg, &in, op)) != 0)
		return finish(cg, &in, rc);
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
	if (lp_kval_field(op, "oobMode") &&
	    lp_kval_field(op, "oobMode")->ctor == 2)
		return cg_fail(cg, "ncDmaCopy oobMode 'reg' (bounds from a "
			       "register) is not modelled");
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

/* An operator's optional dtype, which must be its destination's. */
static int dtype_is_dst(lp_cg *cg, const lp_kval *dt, const lm_arg *dst,
			const char *what)
{
	lm_dtype want;
	int rc;
	if (!dt)
		return 0;
	if ((rc = dtype_of(cg, dt, &want)) != 0)
		return rc;
	if (want != dst->dtype)
		return cg_fail(cg, "%s dtype %s differs from its destination's "
			       "%s", what, lm_dtype_name(want),
			       lm_dtype_name(dst->dtype));
	return 0;
}

/*
** nisa.dma_compute: DMACopy in mode CCE (docs/semantics.md, "DMA CCE"):
** srcs as ins in their order, reduceOp as cce_op (add, max, min), scales
** as constants when one of them is not 1 (add only: a scale with max or
** min has no BIR form). The CCE accumulator starts at 0 in float32 and
** folds the sources in order; each scaled source is rounded to float32
** before it is added.
*/
static int cg_dma_compute(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			  const char *name)
{
	const lp_kval *srcs = F(op, "srcs"), *sc = F(op, "scales");
	const char *rop = lp_kval_ctor_name(F(op, "reduceOp"));
	int scaled = 0, rc = 0;
	lm_inst in;
	tinfo ti;

	if (strcmp(rop, "add") && strcmp(rop, "max") && strcmp(rop, "min"))
		return cg_fail(cg, "dmaCompute reduceOp '%s' is not modelled "
			       "(add, max and min are)", rop);
	if (srcs->n < 1 || srcs->n > 64)
		return cg_fail(cg, "dmaCompute with %d sources (1 to 64)",
			       srcs->n);
	if (sc->n && sc->n != srcs->n)
		return cg_fail(cg, "dmaCompute has %d scales for %d sources "
			       "(one per source, or none)", sc->n, srcs->n);
	for (int i = 0; i < sc->n; i++) {
		double v;
		if ((rc = immediate(cg, &sc->items[i], &v)) != 0)
			return rc;
		scaled |= (float)v != 1.0f;
	}
	if (scaled && strcmp(rop, "add"))
		return cg_fail(cg, "dmaCompute scales with reduceOp '%s' are "
			       "not modelled (a CCE scales the sources of an "
			       "add only)", rop);
	inst_init(&in, name, LM_OP_DMACOPY, LM_ENG_SP, srcs->n, 1);
	in.queue = lm_xstrdup(lp_cg_queue(cg));
	in.extra = cJSON_CreateObject();
	cJSON_AddStringToObject(in.extra, "mode", "CCE");
	cJSON_AddStringToObject(in.extra, "cce_op", rop);
	if (scaled) {
		cJSON *a = cJSON_AddArrayToObject(in.extra, "constants");
		for (int i = 0; i < sc->n; i++) {
			double v;
			immediate(cg, &sc->items[i], &v);
			cJSON_AddItemToArray(a, cJSON_CreateNumber(
				(double)(float)v));
		}
	}
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	for (int i = 0; !rc && i < srcs->n; i++)
		rc = operand(cg, &srcs->items[i], lnc, &in.ins[i], &ti);
	return finish(cg, &in, rc);
}

/*
** nisa.nc_stream_shuffle: StreamShuffle on the vector engine, the
** 32-entry shuffleMask as mask (each a partition 0..31 of the block, or
** 255: that partition of dst left as it is). A dtype other than dst's
** is refused (StreamShuffle converts nothing).
*/
static int cg_shuffle(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		      const char *name)
{
	const lp_kval *m = F(op, "shuffleMask"), *dt = some(F(op, "dtype"));
	lm_inst in;
	tinfo ti;
	cJSON *a;
	int rc;

	if (m->n != 32)
		return cg_fail(cg, "shuffle shuffleMask has %d entries (32)",
			       m->n);
	for (int i = 0; i < 32; i++) {
		const lp_kval *e = &m->items[i];
		if (e->ctor != 2 || ((e->items[0].i < 0 || e->items[0].i > 31)
				     && e->items[0].i != 255))
			return cg_fail(cg, "shuffle shuffleMask[%d] must be an "
				       "int 0..31 or 255", i);
	}
	inst_init(&in, name, LM_OP_STREAMSHUFFLE, LM_ENG_DVE, 1, 1);
	in.extra = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(in.extra, "mask");
	for (int i = 0; i < 32; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(
			(double)m->items[i].items[0].i));
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	if (!rc)
		rc = dtype_is_dst(cg, dt, &in.outs[0], "shuffle");
	return finish(cg, &in, rc);
}

/* a's pattern as four pairs: unit pairs inserted after the first. */
static void pad4(lm_arg *a)
{
	int k = 4 - a->n_ap;
	if (k <= 0 || a->n_ap < 1)
		return;
	a->ap = lm_xrealloc(a->ap, 4 * sizeof *a->ap);
	memmove(a->ap + 1 + k, a->ap + 1,
		(size_t)(a->n_ap - 1) * sizeof *a->ap);
	for (int i = 1; i <= k; i++)
		a->ap[i] = (lm_appair){ 0, 1 };
	a->n_ap = 4;
}

/*
** nisa.dma_transpose: DMACopy in mode Transpose with transpose_op =
** axes (docs/semantics.md, "DMA transpose"). The BIR transpose reads
** both patterns as four axes [W, Z, Y, X]: an operand of fewer pairs gets
** unit pairs after its first (a 2-D [P, F] is [P, 1, 1, F], so XYZW is the
** matrix transpose). A dtype other than the destination's, a register
** bound (oobMode reg) and more than four pairs are refused; skip / error
** bounds leave in-bounds transfers as they are (an out-of-bounds access
** is a run error in lncsim either way); dgeMode and priority say how the
** transfer is driven, not what it moves.
*/
static int cg_dma_transpose(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			    const char *name)
{
	const lp_kval *dt = some(F(op, "dtype")), *oob = F(op, "oobMode");
	lm_inst in;
	tinfo ti;
	int rc;
	if (oob->ctor == 2)
		return cg_fail(cg, "dmaTranspose oobMode 'reg' (bounds from a "
			       "register) is not modelled");
	inst_init(&in, name, LM_OP_DMACOPY, LM_ENG_SP, 1, 1);
	in.queue = lm_xstrdup(lp_cg_queue(cg));
	in.extra = cJSON_CreateObject();
	cJSON_AddStringToObject(in.extra, "mode", "Transpose");
	cJSON_AddStringToObject(in.extra, "transpose_op",
				lp_kval_ctor_name(F(op, "axes")));
	rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	if (!rc)
		rc = dtype_is_dst(cg, dt, &in.outs[0], "dmaTranspose");
	if (!rc && (in.ins[0].n_ap > 4 || in.outs[0].n_ap > 4))
		rc = cg_fail(cg, "dmaTranspose of more than four axes (src %d "
			     "pairs, dst %d)", in.ins[0].n_ap,
			     in.outs[0].n_ap);
	if (!rc) {
		pad4(&in.ins[0]);
		pad4(&in.outs[0]);
	}
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
	/* tensor_copy_dynamic_src / _dst: the register-placed side */
	if (!rc && is_dynamic(&in.ins[0]) && is_dynamic(&in.outs[0]))
		rc = cg_fail(cg, "a tensor copy with register offsets on both "
			     "sides is not supported");
	else if (!rc && is_dynamic(&in.ins[0]))
		in.op = LM_OP_TCDYNSRC;
	else if (!rc && is_dynamic(&in.outs[0]))
		in.op = LM_OP_TCDYNDST;
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

/* ---- the reductions, selections and statistics ------------------------- */

/* Partitions of an SB / PSUM operand (its first pair). */
static int64_t parts_of(const lm_arg *a)
{
	return a->n_ap > 0 ? a->ap[0].num : 0;
}

/*
** A float32 [P, 1] SBUF scratch tile set to v by a Memset (name.what),
** for a scalar the BIR instruction takes as a tile only. The Memset
** stores v rounded to float32: the value an immediate scalar has.
*/
static const char *scalar_scratch(lp_cg *cg, const char *name,
				  const char *what, int64_t P, double v)
{
	int64_t shape[2] = { P, 1 };
	lm_appair ap[2] = { { 1, P }, { 1, 1 } };
	char *tname = lm_xasprintf("COMPILER-GENERATED-scalar_%d",
				   cg->lc->next_id++);
	char *iname = lm_xasprintf("%s.%s", name, what);
	int idx = lp_cg_add_tensor(cg, tname, LM_TK_INTERNAL, LM_DT_FLOAT32,
				   LM_MT_SB, shape, 2, P, 4, 0, 0, 0);
	char *in_name = lp_cg_inst_name(cg, iname);
	lm_inst in;
	lm_b_init_inst(&in, LM_OP_MEMSET, LM_ENG_DVE, in_name);
	lm_b_append_ap(&in, LM_B_OUT, cg->f->allocs[idx].name, NULL,
		       LM_DT_FLOAT32, 0, 0, ap, 2);
	lm_b_set_memset(&in, "Const", v >= 0 && v < 4294967296.0 &&
			v == (double)(int64_t)v ? (int64_t)v : 0);
	lm_b_set_memset_value(&in, v);
	lp_cg_emit(cg, &in);
	free(tname);
	free(iname);
	free(in_name);
	return cg->f->allocs[idx].name;
}

/*
** A per-partition scalar operand `what` for data of P partitions: a tile
** must be one element in each of the P partitions; an immediate becomes a
** scratch tile (scalar_scratch).
*/
static int scalar_tile(lp_cg *cg, const lp_kval *tile, const lp_kval *imm,
		       const lp_kval *lnc, const char *name, const char *what,
		       int64_t P, lm_arg *a)
{
	tinfo ti;
	int rc;
	if (imm) {
		double v;
		lm_appair ap[2] = { { 1, P }, { 1, 1 } };
		if ((rc = immediate(cg, imm, &v)) != 0)
			return rc;
		lm_b_init_ap(a, scalar_scratch(cg, name, what, P, v), NULL,
			     LM_DT_FLOAT32, 0, 0, ap, 2);
		return 0;
	}
	if ((rc = operand(cg, tile, lnc, a, &ti)) != 0)
		return rc;
	if (ti.mt == LM_MT_DRAM || parts_of(a) != P || lm_arg_count(a) != P)
		return cg_fail(cg, "%s must be a [%lld, 1] tile: one scalar for "
			       "each of the %lld partitions of the data (got "
			       "%lld elements over %lld partitions%s)", what,
			       (long long)P, (long long)P,
			       (long long)lm_arg_count(a),
			       (long long)parts_of(a),
			       ti.mt == LM_MT_DRAM ? " in HBM" : "");
	return 0;
}

/* An Operand's tile (or NULL) and immediate (or NULL). */
static void operand_split(const lp_kval *op, const lp_kval **tile,
			  const lp_kval **imm)
{
	*tile = op && op->ctor == 1 ? &op->items[0] : NULL;
	*imm = op && op->ctor == 0 ? &op->items[0] : NULL;
}

/*
** nisa.tensor_scalar with a tile operand: TensorScalarPtr, the data in
** ins[0], the step-0 scalars in ins[1], the step-1 scalars in ins[2]
** (an immediate of the other step goes through a scratch tile).
*/
static int cg_tensor_scalar_ptr(lp_cg *cg, const lp_kval *op,
				const lp_kval *lnc, const char *name)
{
	const lp_kval *imm1 = some(F(op, "imm1")), *op1 = some(F(op, "op1"));
	const lp_kval *t0, *i0, *t1, *i1;
	int rev = F(op, "reverse")->ctor, rc, eng = F(op, "engine")->ctor;
	lm_inst in;
	tinfo ti;
	int64_t P;

	if (eng != KE_UNASSIGNED && eng != KE_DVE)
		return cg_fail(cg, "tensorScalar with a tile operand on engine "
			       "'%s' is not modelled (TensorScalarPtr runs on "
			       "the vector engine)",
			       lp_kval_ctor_name(F(op, "engine")));
	operand_split(F(op, "imm0"), &t0, &i0);
	operand_split(imm1, &t1, &i1);
	inst_init(&in, name, LM_OP_TSPTR, LM_ENG_DVE, imm1 || op1 ? 3 : 2, 1);
	in.alu0 = lm_aluop_parse(lp_kval_ctor_name(F(op, "op0")));
	in.alu1 = op1 ? lm_aluop_parse(lp_kval_ctor_name(op1)) : LM_ALU_BYPASS;
	in.reverse0 = rev == 1 || rev == 3;
	in.reverse1 = rev == 2 || rev == 3;
	rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	P = parts_of(&in.ins[0]);
	if (!rc && ti.mt == LM_MT_DRAM)
		rc = cg_fail(cg, "tensorScalar data in HBM");
	if (!rc)
		rc = scalar_tile(cg, t0, i0, lnc, name, "imm0", P, &in.ins[1]);
	if (!rc && imm1)
		rc = scalar_tile(cg, t1, i1, lnc, name, "imm1", P, &in.ins[2]);
	else if (!rc && op1)
		/* op1 without imm1: the scalar 0, as with immediates */
		lm_b_init_ap(&in.ins[2], scalar_scratch(cg, name, "imm1", P, 0),
			     NULL, LM_DT_FLOAT32, 0, 0,
			     (lm_appair[2]){ { 1, P }, { 1, 1 } }, 2);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	return finish(cg, &in, rc);
}

/* Is the Operand the immediate 0 (int or float, either sign)? */
static int operand_is_zero(const lp_kval *op)
{
	const lp_kval *t, *i;
	operand_split(op, &t, &i);
	if (!i)
		return 0;
	if (i->ctor == 2)
		return i->items[0].i == 0;
	return i->ctor == 3 && (i->items[0].fbits & 0x7fffffffu) == 0;
}

/*
** nisa.exponential: Exponential on the vector engine (docs/semantics.md,
** "Exponential"): dst = exp(src - maxValue[p]), maxValue a [P, 1] tile
** or an immediate (through a scratch tile); with reduceRes, the sum of
** the results into the engine's accumulator registers by reducecmd and
** read out into reduceRes (outs[1]). KLR's AccumCmd Idle / Zero /
** Accumulate / ZeroAccumulate are the BIR values of the same names;
** LoadAccumulate, a reduceInit other than 0 (BIR has no operand for the
** initial value) and a reduceRes with reducecmd Idle are refused.
*/
static int cg_exponential(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			  const char *name)
{
	const lp_kval *res = some(F(op, "reduceRes")), *t, *i;
	int cmd = F(op, "reducecmd")->ctor, rc;
	lm_inst in;
	tinfo ti;
	int64_t P;
	if (cmd == 4)
		return cg_fail(cg, "exponential reducecmd LoadAccumulate is not "
			       "modelled (its initial value has no operand)");
	if (!operand_is_zero(F(op, "reduceInit")))
		return cg_fail(cg, "exponential reduceInit other than 0 is not "
			       "modelled");
	if (res && cmd == 0)
		return cg_fail(cg, "exponential reduceRes with reducecmd Idle "
			       "(nothing is accumulated to read out)");
	inst_init(&in, name, LM_OP_EXPONENTIAL, LM_ENG_DVE, 2, res ? 2 : 1);
	in.eng_acc = cmd;
	rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	P = parts_of(&in.ins[0]);
	operand_split(F(op, "maxValue"), &t, &i);
	if (!rc)
		rc = scalar_tile(cg, t, i, lnc, name, "maxValue", P,
				 &in.ins[1]);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc && res)
		rc = operand(cg, res, lnc, &in.outs[1], &ti);
	return finish(cg, &in, rc);
}

/*
** nisa.scalar_tensor_tensor (ncScalarTensorTensor, and the legacy
** scalarTensorTensor) and nisa.tensor_tensor_scan: TensorScalarPtr with
** is_scalar_tensor_tensor / is_tensor_tensor_scan (docs/semantics.md).
** Scalar-tensor-tensor: ins[0] the data, ins[1] operand0 (a [P, 1] tile,
** an immediate through a scratch tile), ins[2] operand1, a tile of the
** data's shape. Scan: ins[0] data0, ins[1] data1, ins[2] the initial
** value (a [P, 1] tile or an immediate). reverseOperands as for
** tensorScalar; an accumulatorCmd other than Idle is refused.
*/
enum { STT_NC, STT_LEGACY, STT_SCAN };
static int cg_stt_scan(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		       const char *name, int kind)
{
	static const char *const opname[] = {
		"ncScalarTensorTensor", "scalarTensorTensor", "tensorTensorScan"
	};
	const lp_kval *acc = kind == STT_NC ? NULL : F(op, "accumulatorCmd");
	const lp_kval *t0 = NULL, *i0 = NULL, *t1 = NULL, *i1 = NULL;
	int rev = F(op, "reverseOperands")->ctor, rc;
	lm_inst in;
	tinfo ti;
	int64_t P;

	if (acc && acc->ctor != 0)
		return cg_fail(cg, "%s accumulatorCmd '%s' is not modelled "
			       "(only Idle)", opname[kind],
			       lp_kval_ctor_name(acc));
	if (kind == STT_NC) {
		operand_split(F(op, "src0"), &t0, &i0);
		operand_split(F(op, "src1"), &t1, &i1);
		if (!t1)
			return cg_fail(cg, "ncScalarTensorTensor src1 must be a "
				       "tile of the data's shape, not an "
				       "immediate");
	} else if (kind == STT_LEGACY) {
		i0 = F(op, "imm0");
	} else {
		operand_split(F(op, "imm0"), &t0, &i0);
	}
	inst_init(&in, name, LM_OP_TSPTR, LM_ENG_DVE, 3, 1);
	in.alu0 = lm_aluop_parse(lp_kval_ctor_name(F(op, "op0")));
	in.alu1 = lm_aluop_parse(lp_kval_ctor_name(F(op, "op1")));
	in.reverse0 = rev == 1 || rev == 3;
	in.reverse1 = rev == 2 || rev == 3;
	in.is_scalar_tensor_tensor = kind != STT_SCAN;
	in.is_tensor_tensor_scan = kind == STT_SCAN;
	rc = operand(cg, F(op, kind == STT_NC ? "data" : "src0"), lnc,
		     &in.ins[0], &ti);
	P = parts_of(&in.ins[0]);
	if (!rc && ti.mt == LM_MT_DRAM)
		rc = cg_fail(cg, "%s data in HBM", opname[kind]);
	if (!rc && kind == STT_SCAN) {
		rc = operand(cg, F(op, "src1"), lnc, &in.ins[1], &ti);
		if (!rc)
			rc = scalar_tile(cg, t0, i0, lnc, name, "imm0", P,
					 &in.ins[2]);
	} else if (!rc) {
		rc = scalar_tile(cg, t0, i0, lnc, name, kind == STT_NC ?
				 "src0" : "imm0", P, &in.ins[1]);
		if (!rc)
			rc = operand(cg, kind == STT_NC ? t1 : F(op, "src1"),
				     lnc, &in.ins[2], &ti);
	}
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	return finish(cg, &in, rc);
}

/*
** nisa.tensor_scalar_reduce: no one BIR instruction the simulator runs
** computes it, so three on the vector engine (docs/provision.md):
** TensorScalar (an immediate operand0) or TensorScalarPtr (a [P, 1]
** tile) of src into a float32 scratch tile [P, n] (n the elements per
** partition), TensorCopy of the scratch into dst (the one rounding to
** dst's dtype), TensorReduce (reduceOp, axis X, from the first element)
** of the scratch into reduceRes: the reduction over the float32 results.
** reduceCmd other than ZeroAccumulate (a fresh reduction), a reduceInit,
** a missing reduceOp and a dtype other than dst's are refused.
*/
static int cg_tensor_scalar_reduce(lp_cg *cg, const lp_kval *op,
				   const lp_kval *lnc, const char *name)
{
	const lp_kval *rop = some(F(op, "reduceOp")), *t0, *i0, *dt;
	const lp_kval *cmd = F(op, "reduceCmd");
	lm_inst ts, cp, red;
	tinfo ti;
	int rc, idx;
	int64_t P, n, shape[2];
	lm_appair ap[2];
	char *tname, *iname, *nm;
	const char *scr;

	if (cmd->ctor != 3)
		return cg_fail(cg, "tensorScalarReduce reduceCmd '%s' is not "
			       "modelled (only ZeroAccumulate, a fresh "
			       "reduction)", lp_kval_ctor_name(cmd));
	if (some(F(op, "reduceInit")))
		return cg_fail(cg, "tensorScalarReduce reduceInit is not "
			       "modelled");
	if (!rop)
		return cg_fail(cg, "tensorScalarReduce without a reduceOp");
	operand_split(F(op, "operand0"), &t0, &i0);
	inst_init(&ts, "", t0 ? LM_OP_TSPTR : LM_OP_TENSORSCALAR, LM_ENG_DVE,
		  t0 ? 2 : 1, 1);
	ts.alu0 = lm_aluop_parse(lp_kval_ctor_name(F(op, "op0")));
	ts.alu1 = LM_ALU_BYPASS;
	ts.reverse0 = F(op, "reverse0")->b;
	rc = operand(cg, F(op, "src"), lnc, &ts.ins[0], &ti);
	if (!rc && ti.mt == LM_MT_DRAM)
		rc = cg_fail(cg, "tensorScalarReduce data in HBM");
	P = parts_of(&ts.ins[0]);
	n = P ? lm_arg_count(&ts.ins[0]) / P : 0;
	if (!rc && t0)
		rc = scalar_tile(cg, t0, NULL, lnc, name, "operand0", P,
				 &ts.ins[1]);
	else if (!rc) {
		ts.has_const0 = ts.has_const1 = 1;
		rc = operand_imm(cg, F(op, "operand0"), &ts.const0);
	}
	if (!rc && (P < 1 || P > cg->n_partitions || n < 1 || n > MAX_DIM))
		rc = cg_fail(cg, "tensorScalarReduce over %lld partitions of "
			     "%lld elements", (long long)P, (long long)n);
	if (rc) {
		lm_inst_clear(&ts);
		return rc;
	}
	inst_init(&cp, name, LM_OP_TENSORCOPY, LM_ENG_DVE, 1, 1);
	rc = operand(cg, F(op, "dst"), lnc, &cp.outs[0], &ti);
	dt = some(F(op, "dtype"));
	if (!rc)
		rc = dtype_is_dst(cg, dt, &cp.outs[0], "tensorScalarReduce");
	if (!rc && (parts_of(&cp.outs[0]) != P ||
		    lm_arg_count(&cp.outs[0]) != P * n))
		rc = cg_fail(cg, "tensorScalarReduce dst must hold the %lld x "
			     "%lld elements of src", (long long)P,
			     (long long)n);
	inst_init(&red, "", LM_OP_TENSORREDUCE, LM_ENG_DVE, 1, 1);
	red.alu = lm_aluop_parse(lp_kval_ctor_name(rop));
	red.reduce_axis = 0;
	if (!rc)
		rc = operand(cg, F(op, "reduceRes"), lnc, &red.outs[0], &ti);
	if (!rc && (parts_of(&red.outs[0]) != P ||
		    lm_arg_count(&red.outs[0]) != P))
		rc = cg_fail(cg, "tensorScalarReduce reduceRes must be a "
			     "[%lld, 1] tile: one result for each partition of "
			     "src (got %lld elements over %lld partitions)",
			     (long long)P, (long long)lm_arg_count(&red.outs[0]),
			     (long long)parts_of(&red.outs[0]));
	if (rc) {
		lm_inst_clear(&ts);
		lm_inst_clear(&cp);
		lm_inst_clear(&red);
		return rc;
	}
	shape[0] = P;
	shape[1] = n;
	ap[0] = (lm_appair){ n, P };
	ap[1] = (lm_appair){ 1, n };
	tname = lm_xasprintf("COMPILER-GENERATED-reduce_%d",
			     cg->lc->next_id++);
	idx = lp_cg_add_tensor(cg, tname, LM_TK_INTERNAL, LM_DT_FLOAT32,
			       LM_MT_SB, shape, 2, P, 4 * n, 0, 0, 0);
	scr = cg->f->allocs[idx].name;
	lm_b_init_ap(&ts.outs[0], scr, NULL, LM_DT_FLOAT32, 0, 0, ap, 2);
	lm_b_init_ap(&cp.ins[0], scr, NULL, LM_DT_FLOAT32, 0, 0, ap, 2);
	lm_b_init_ap(&red.ins[0], scr, NULL, LM_DT_FLOAT32, 0, 0, ap, 2);
	iname = lm_xasprintf("%s.scalar", name);
	nm = lp_cg_inst_name(cg, iname);
	free(ts.name);
	ts.name = nm;
	free(iname);
	iname = lm_xasprintf("%s.reduce", name);
	nm = lp_cg_inst_name(cg, iname);
	free(red.name);
	red.name = nm;
	free(iname);
	free(tname);
	if ((rc = finish(cg, &ts, 0)) != 0) {
		lm_inst_clear(&cp);
		lm_inst_clear(&red);
		return rc;
	}
	if ((rc = finish(cg, &cp, 0)) != 0) {
		lm_inst_clear(&red);
		return rc;
	}
	return finish(cg, &red, 0);
}

/* ---- nisa.local_gather (docs/provision.md, "Local gather") -------------- */

/* The free pairs of a (after its partition pair): unit pairs dropped,
** contiguous neighbours merged, into f; their number. */
static int free_runs(const lm_arg *a, lm_appair *f)
{
	int n = 0;
	for (int i = 1; i < a->n_ap; i++) {
		if (a->ap[i].num == 1)
			continue;
		if (n > 0 && f[n - 1].step == a->ap[i].step * a->ap[i].num) {
			f[n - 1].step = a->ap[i].step;
			f[n - 1].num *= a->ap[i].num;
			continue;
		}
		f[n++] = a->ap[i];
	}
	return n;
}

/* The first partition of SB operand a in the SBUF. */
static int64_t first_partition(lp_cg *cg, const lm_arg *a)
{
	int idx = (int)(intptr_t)lm_strmap_lookup(&cg->tensors, a->memsetref)
		  - 1;
	int64_t base = idx >= 0 && cg->f->allocs[idx].n_memlocs > 0 ?
		       cg->f->allocs[idx].memlocs[0].base : 0;
	return base + a->start_partition;
}

/* A physical_ap JSON object of alloc name over pairs ap (the form of an
** indirection_ins entry). */
static cJSON *ap_json(const char *alloc, lm_dtype dt, const lm_appair *ap,
		      int n_ap)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();
	for (int i = 0; i < n_ap; i++) {
		cJSON *pr = cJSON_CreateArray();
		cJSON_AddItemToArray(pr, cJSON_CreateNumber((double)ap[i].step));
		cJSON_AddItemToArray(pr, cJSON_CreateNumber((double)ap[i].num));
		cJSON_AddItemToArray(a, pr);
	}
	cJSON_AddItemToObject(o, "ap", a);
	cJSON_AddStringToObject(o, "dtype", lm_dtype_name(dt));
	cJSON_AddStringToObject(o, "kind", "physical_ap");
	cJSON_AddStringToObject(o, "memref", alloc);
	cJSON_AddStringToObject(o, "memsetref", alloc);
	cJSON_AddNumberToObject(o, "offset", 0);
	return o;
}

/* A DMACopy name.what on the kernel queue of from into to (both owned by
** the instruction from here on). */
static int lg_dma(lp_cg *cg, const char *name, const char *what,
		  lm_arg *from, lm_arg *to, char **made)
{
	lm_inst in;
	char *base = lm_xasprintf("%s.%s", name, what);
	char *nm = lp_cg_inst_name(cg, base);
	free(base);
	inst_init(&in, nm, LM_OP_DMACOPY, LM_ENG_SP, 1, 1);
	in.queue = lm_xstrdup(lp_cg_queue(cg));
	in.extra = cJSON_CreateObject();
	cJSON_AddStringToObject(in.extra, "mode", "Copy");
	in.ins[0] = *from;
	in.outs[0] = *to;
	memset(from, 0, sizeof *from);
	memset(to, 0, sizeof *to);
	*made = nm;
	return finish(cg, &in, 0);
}

/*
** nisa.local_gather (ncLocalGather). The documented operation: the
** partitions are in groups of 16 (one GpSimd core each); group g's
** indices are its 16 partitions of `index` flattened partition first,
** I_g[k] = index[16g + k % 16][k / 16], the first V of them used
** (numValidIndicies, else all 16 J); every partition p of the group
** reads its own partition of src at those indices, n = numElemPerIdx
** contiguous elements each:
**
**     dst[p][k n + e] = src[p][I_g[k] + e]   (k < V, e < n)
**
** No BIR instruction the simulator runs is that operation, so it is
** lowered into ones that compute it bit for bit: a DMACopy of the index
** tile into a uint16 DRAM scratch [P, J] (name.spill), one or two
** DMACopies of the scratch back into an SBUF scratch A [P, V] with
** A[p][k] = I_{p/16}[k] (name.index, name.index_tail: V = 16 q + r,
** the first 16 q and the last r), then n Gathers on Pool (name for e 0,
** name.elem<e> after it), Gather e reading src from element e
** (src[p][e ..]) at the indices A into the elements e, e + n, ... of dst:
** an index with I + e outside src stops the run in Gather e.
*/
static int cg_local_gather(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			   const char *name)
{
	const lp_kval *ne = F(op, "numElemPerIdx");
	const lp_kval *nv = some(F(op, "numValidIndicies"));
	lm_arg src, ix, dst, a_from, a_to;
	lm_appair fs[8], fi[8], fd[8], ap[4];
	tinfo ts, tx, td;
	int64_t n, V, P, J, F_, shape[2], q, r;
	int nfs, nfi, nfd, rc, idx;
	char *dname, *aname, *dma1 = NULL, *dma2 = NULL, *dma3 = NULL;

	memset(&src, 0, sizeof src);
	memset(&ix, 0, sizeof ix);
	memset(&dst, 0, sizeof dst);
	if (ne->ctor != 2)
		return cg_fail(cg, "ncLocalGather numElemPerIdx must be an int "
			       "immediate (got '%s')", lp_kval_ctor_name(ne));
	n = ne->items[0].i;
	if (n != 1 && n != 2 && n != 4 && n != 8 && n != 16 && n != 32)
		return cg_fail(cg, "ncLocalGather numElemPerIdx %lld is not one "
			       "of 1, 2, 4, 8, 16, 32", (long long)n);
	if (nv && nv->ctor != 2)
		return cg_fail(cg, "ncLocalGather numValidIndicies must be an "
			       "int immediate (got '%s')",
			       lp_kval_ctor_name(nv));
	rc = operand(cg, F(op, "src"), lnc, &src, &ts);
	if (!rc)
		rc = operand(cg, F(op, "index"), lnc, &ix, &tx);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &dst, &td);
	if (!rc && (is_dynamic(&src) || is_dynamic(&ix) || is_dynamic(&dst)))
		rc = cg_fail(cg, "a register offset (scalarOffset) on "
			     "ncLocalGather is not supported");
	if (!rc && (ts.mt != LM_MT_SB || tx.mt != LM_MT_SB ||
		    td.mt != LM_MT_SB))
		rc = cg_fail(cg, "ncLocalGather src, index and dst must be in "
			     "SBUF");
	if (!rc && ix.dtype != LM_DT_UINT16)
		rc = cg_fail(cg, "ncLocalGather index has dtype %s: the "
			     "indices are uint16", lm_dtype_name(ix.dtype));
	if (!rc && dst.dtype != src.dtype)
		rc = cg_fail(cg, "ncLocalGather dst dtype %s differs from "
			     "src's %s (local_gather does not convert)",
			     lm_dtype_name(dst.dtype), lm_dtype_name(src.dtype));
	P = parts_of(&src);
	if (!rc && (P < 16 || P % 16 || parts_of(&ix) != P ||
		    parts_of(&dst) != P))
		rc = cg_fail(cg, "ncLocalGather src, index and dst must span "
			     "the same partitions, a multiple of 16 (got %lld, "
			     "%lld and %lld)", (long long)P,
			     (long long)parts_of(&ix),
			     (long long)parts_of(&dst));
	if (!rc && (first_partition(cg, &src) % 16 ||
		    first_partition(cg, &ix) != first_partition(cg, &src) ||
		    first_partition(cg, &dst) != first_partition(cg, &src)))
		rc = cg_fail(cg, "ncLocalGather src, index and dst must start "
			     "at the same partition, a multiple of 16 (the "
			     "first of a GpSimd core's 16): got %lld, %lld and "
			     "%lld", (long long)first_partition(cg, &src),
			     (long long)first_partition(cg, &ix),
			     (long long)first_partition(cg, &dst));
	nfi = rc ? 0 : free_runs(&ix, fi);
	if (!rc && nfi > 1)
		rc = cg_fail(cg, "ncLocalGather index with %d free dimensions "
			     "is not modelled (the documents flatten a [P, J] "
			     "index tile, partition first)", nfi);
	J = P ? lm_arg_count(&ix) / P : 0;
	F_ = P ? lm_arg_count(&src) / P : 0;
	V = nv ? nv->items[0].i : 0;
	if (!rc && (V < 0 || V > 16 * J))
		rc = cg_fail(cg, "ncLocalGather numValidIndicies %lld exceeds "
			     "the %lld indices of a 16-partition group of "
			     "index", (long long)V, (long long)(16 * J));
	if (V == 0)
		V = 16 * J; /* the documents' reference reads 0 as all */
	if (!rc && (V < 1 || V > 4096))
		rc = cg_fail(cg, "ncLocalGather uses %lld indices per "
			     "16-partition group (1 to 4096)", (long long)V);
	if (!rc && lm_arg_count(&dst) != P * V * n)
		rc = cg_fail(cg, "ncLocalGather dst must hold %lld x %lld "
			     "elements (%lld indices of %lld elements per "
			     "partition), got %lld", (long long)P,
			     (long long)(V * n), (long long)V, (long long)n,
			     (long long)lm_arg_count(&dst));
	nfs = rc ? 0 : free_runs(&src, fs);
	nfd = rc ? 0 : free_runs(&dst, fd);
	if (!rc && n > 1 && (nfs != 1 || nfd != 1))
		rc = cg_fail(cg, "ncLocalGather with numElemPerIdx %lld needs "
			     "src and dst patterns of one run of elements per "
			     "partition (src has %d, dst %d)", (long long)n,
			     nfs, nfd);
	if (rc) {
		lm_arg_clear(&src);
		lm_arg_clear(&ix);
		lm_arg_clear(&dst);
		return rc;
	}

	/* the index tile spilled to DRAM, row-major [P, J] */
	dname = lm_xasprintf("COMPILER-GENERATED-lgather_%d",
			     cg->lc->next_id++);
	shape[0] = P;
	shape[1] = J;
	idx = lp_cg_add_tensor(cg, dname, LM_TK_INTERNAL, LM_DT_UINT16,
			       LM_MT_DRAM, shape, 2, P, 2 * J, 1, 0, 0);
	free(dname);
	dname = lm_xstrdup(cg->f->allocs[idx].name);
	ap[0] = (lm_appair){ J, P };
	ap[1] = (lm_appair){ 1, J };
	lm_b_init_ap(&a_to, dname, NULL, LM_DT_UINT16, 0, 0, ap, 2);
	rc = lg_dma(cg, name, "spill", &ix, &a_to, &dma1);

	/* A [P, V]: each partition its group's V indices, in order */
	aname = lm_xasprintf("COMPILER-GENERATED-lgather_%d",
			     cg->lc->next_id++);
	shape[1] = V;
	idx = lp_cg_add_tensor(cg, aname, LM_TK_INTERNAL, LM_DT_UINT16,
			       LM_MT_SB, shape, 2, P, 2 * V, 0, 0, 0);
	free(aname);
	aname = lm_xstrdup(cg->f->allocs[idx].name);
	q = V / 16;
	r = V % 16;
	if (!rc && q > 0) {
		lm_appair s[4] = { { 16 * J, P / 16 }, { 0, 16 }, { 1, q },
				   { J, 16 } };
		lm_b_init_ap(&a_from, dname, NULL, LM_DT_UINT16, 0, 0, s, 4);
		ap[0] = (lm_appair){ V, P };
		ap[1] = (lm_appair){ 1, 16 * q };
		lm_b_init_ap(&a_to, aname, NULL, LM_DT_UINT16, 0, 0, ap, 2);
		rc = lg_dma(cg, name, "index", &a_from, &a_to, &dma2);
	}
	if (!rc && r > 0) {
		lm_appair s[3] = { { 16 * J, P / 16 }, { 0, 16 }, { J, r } };
		lm_b_init_ap(&a_from, dname, NULL, LM_DT_UINT16, 0, q, s, 3);
		ap[0] = (lm_appair){ V, P };
		ap[1] = (lm_appair){ 1, r };
		lm_b_init_ap(&a_to, aname, NULL, LM_DT_UINT16, 0, 16 * q, ap,
			     2);
		rc = lg_dma(cg, name, "index_tail", &a_from, &a_to, &dma3);
	}

	/* the n Gathers */
	for (int64_t e = 0; !rc && e < n; e++) {
		lm_inst g;
		cJSON *ii;
		char *base = e ? lm_xasprintf("%s.elem%lld", name, (long long)e)
			       : lm_xstrdup(name);
		char *gname = e ? lp_cg_inst_name(cg, base) : lm_xstrdup(name);
		free(base);
		inst_init(&g, gname, LM_OP_GATHER, LM_ENG_POOL, 1, 1);
		free(gname);
		lm_arg_copy(&g.ins[0], &src);
		lm_arg_copy(&g.outs[0], &dst);
		if (n > 1) {
			lm_appair sp[2] = { src.ap[0], { fs[0].step, F_ - e } };
			lm_appair dp[2] = { dst.ap[0], { fd[0].step * n, V } };
			lm_arg_clear(&g.ins[0]);
			lm_arg_clear(&g.outs[0]);
			lm_b_init_ap(&g.ins[0], src.memsetref, NULL, src.dtype,
				     src.start_partition,
				     src.offset + e * fs[0].step, sp, 2);
			lm_b_init_ap(&g.outs[0], dst.memsetref, NULL, dst.dtype,
				     dst.start_partition,
				     dst.offset + e * fd[0].step, dp, 2);
		}
		g.extra = cJSON_CreateObject();
		ii = cJSON_AddArrayToObject(g.extra, "indirection_ins");
		ap[0] = (lm_appair){ V, P };
		ap[1] = (lm_appair){ 1, V };
		cJSON_AddItemToArray(ii, ap_json(aname, LM_DT_UINT16, ap, 2));
		if (dma2)
			lp_ir_add_dep(&g, dma2);
		if (dma3)
			lp_ir_add_dep(&g, dma3);
		rc = finish(cg, &g, 0);
	}
	lm_arg_clear(&src);
	lm_arg_clear(&ix);
	lm_arg_clear(&dst);
	free(dname);
	free(aname);
	free(dma1);
	free(dma2);
	free(dma3);
	return rc;
}

/*
** nisa.tensor_reduce: TensorReduce on the vector engine, opDim X / XY /
** XYZ / XYZW -> axis of the same name (the innermost free dimensions),
** negated -> negate. The destination holds one element per row.
*/
static int cg_tensor_reduce(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			    const char *name)
{
	int axis = F(op, "opDim")->ctor, rc;
	int64_t n = 1, rows, P;
	lm_inst in;
	tinfo ti;

	inst_init(&in, name, LM_OP_TENSORREDUCE, LM_ENG_DVE, 1, 1);
	in.alu = lm_aluop_parse(lp_kval_ctor_name(F(op, "op")));
	in.reduce_axis = axis;
	in.negate = F(op, "negated")->b;
	rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	if (!rc && in.ins[0].n_ap - 1 < axis + 1)
		rc = cg_fail(cg, "tensorReduce opDim '%s' folds %d free "
			     "dimensions; src has %d",
			     lp_kval_ctor_name(F(op, "opDim")), axis + 1,
			     in.ins[0].n_ap - 1);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (rc)
		return finish(cg, &in, rc);
	for (int i = in.ins[0].n_ap - 1 - axis; i < in.ins[0].n_ap; i++)
		n *= in.ins[0].ap[i].num;
	P = parts_of(&in.ins[0]);
	rows = n ? lm_arg_count(&in.ins[0]) / n : 0;
	if (lm_arg_count(&in.outs[0]) != rows || parts_of(&in.outs[0]) != P)
		rc = cg_fail(cg, "tensorReduce dst must hold the %lld reduced "
			     "element%s of each of the %lld partitions of src "
			     "(each reduces %lld elements), got %lld elements "
			     "over %lld partitions", (long long)(rows / (P ? P : 1)),
			     rows / (P ? P : 1) == 1 ? "" : "s", (long long)P,
			     (long long)n, (long long)lm_arg_count(&in.outs[0]),
			     (long long)parts_of(&in.outs[0]));
	return finish(cg, &in, rc);
}

/*
** The one-input vector-engine operators: reciprocal (Reciprocal),
** max8 (Max), batchNormStats (BNStats), batchNormAggregate
** (BNStatsAggregate); ins[0] src, outs[0] dst.
*/
static int cg_unary(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		    const char *name, lm_opcode opc)
{
	lm_inst in;
	tinfo ti;
	int rc;
	inst_init(&in, name, opc, LM_ENG_DVE, 1, 1);
	rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	return finish(cg, &in, rc);
}

/*
** nc_find_index8 (MaxIndex) and nc_match_replace8 (MatchReplace, or
** MaxIndexAndMatchReplace with dstIdx): ins[0] the 8 values, ins[1] the
** data, outs[0] dst, outs[1] the indices.
*/
static int cg_match8(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		     const char *name, int replace)
{
	const lp_kval *idx = replace ? some(F(op, "dstIdx")) : NULL;
	lm_inst in;
	tinfo ti;
	int rc = 0;
	double v = 0;
	if (replace && (rc = immediate(cg, F(op, "replaceValue"), &v)) != 0)
		return rc;
	inst_init(&in, name, !replace ? LM_OP_MAXINDEX : idx ? LM_OP_MIMR
		  : LM_OP_MATCHREPLACE, LM_ENG_DVE, 2, idx ? 2 : 1);
	in.fill_value = v;
	in.has_fill_value = 1;
	rc = operand(cg, F(op, "vals"), lnc, &in.ins[0], &ti);
	if (!rc)
		rc = operand(cg, F(op, "src"), lnc, &in.ins[1], &ti);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	if (!rc && idx)
		rc = operand(cg, idx, lnc, &in.outs[1], &ti);
	return finish(cg, &in, rc);
}

/* A reduction side output the BIR instruction cannot carry: refused. */
static int no_reduce(lp_cg *cg, const char *opname, const lp_kval *cmd,
		     const lp_kval *res)
{
	if (cmd->ctor != 0 || res)
		return cg_fail(cg, "%s with a reduction (reduceCmd '%s'%s) is "
			       "not modelled: the BIR instruction lncsim runs "
			       "has no reduction output", opname,
			       lp_kval_ctor_name(cmd),
			       res ? ", a reduceRes" : "");
	return 0;
}

/*
** nisa.select_reduce without its reduction: Select, ins[0] on_true,
** ins[1] on_false (a tile or an immediate), ins[2] the predicate;
** reversePred swaps the two values.
*/
static int cg_select(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		     const char *name)
{
	const lp_kval *t, *imm, *of = F(op, "onFalse");
	int rev = F(op, "reversePred")->b, rc;
	lm_inst in;
	tinfo ti;
	if ((rc = no_reduce(cg, "selectReduce", F(op, "reduceCmd"),
			    some(F(op, "reduceRes")))) != 0)
		return rc;
	operand_split(of, &t, &imm);
	inst_init(&in, name, LM_OP_SELECT, LM_ENG_DVE, 3, 1);
	rc = operand(cg, F(op, "onTrue"), lnc, &in.ins[rev ? 1 : 0], &ti);
	if (!rc && t)
		rc = operand(cg, t, lnc, &in.ins[rev ? 0 : 1], &ti);
	if (!rc && imm) {
		double v;
		lm_arg *a = &in.ins[rev ? 0 : 1];
		rc = immediate(cg, imm, &v);
		memset(a, 0, sizeof *a);
		a->kind = LM_ARG_IMM;
		a->dtype = LM_DT_FLOAT32;
		a->imm = v;
	}
	if (!rc)
		rc = operand(cg, F(op, "predicate"), lnc, &in.ins[2], &ti);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	return finish(cg, &in, rc);
}

/* An immediate that must be 0 (a key the BIR instruction lacks). */
static int imm_zero(lp_cg *cg, const lp_kval *imm, const char *what)
{
	double v;
	int rc = immediate(cg, imm, &v);
	if (!rc && v != 0)
		rc = cg_fail(cg, "%s %g is not modelled (RangeSelect compares "
			     "the index from 0)", what, v);
	return rc;
}

/*
** nisa.range_select (ncRangeSelect) and the older rangeSelect:
** RangeSelect, ins[0] the data, ins[1] / ins[2] the bounds [P, 1]
** (immediate bounds through scratch tiles), compare_op0 / compare_op1,
** fill_value; the reduction is refused, the range start must be 0.
*/
static int cg_range_select(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
			   const char *name, int nc)
{
	const char *opname = nc ? "ncRangeSelect" : "rangeSelect";
	lm_inst in;
	tinfo ti;
	int rc;
	double fill = 0;
	int64_t P;

	rc = no_reduce(cg, opname, F(op, "reduceCommand"),
		       nc ? some(F(op, "reduceRes")) : NULL);
	if (!rc && nc)
		rc = imm_zero(cg, F(op, "rangeStart"), "ncRangeSelect "
			      "rangeStart");
	if (!rc && !nc && F(op, "base")->fbits & 0x7fffffffu)
		rc = cg_fail(cg, "rangeSelect base is not modelled (only 0)");
	if (!rc && nc)
		rc = immediate(cg, F(op, "onFalseValue"), &fill);
	if (!rc && !nc) {
		float f;
		uint32_t b = F(op, "fillValue")->fbits;
		memcpy(&f, &b, sizeof f);
		fill = f;
	}
	if (rc)
		return rc;
	inst_init(&in, name, LM_OP_RANGESELECT, LM_ENG_DVE, 3, 1);
	in.alu0 = lm_aluop_parse(lp_kval_ctor_name(F(op, "compOp0")));
	in.alu1 = lm_aluop_parse(lp_kval_ctor_name(F(op, "compOp1")));
	in.fill_value = fill;
	in.has_fill_value = 1;
	rc = operand(cg, F(op, nc ? "onTrueTile" : "src"), lnc, &in.ins[0],
		     &ti);
	P = parts_of(&in.ins[0]);
	if (!rc)
		rc = scalar_tile(cg, nc ? F(op, "bound0") : NULL,
				 nc ? NULL : F(op, "bound0"), lnc, name,
				 "bound0", P, &in.ins[1]);
	if (!rc)
		rc = scalar_tile(cg, nc ? F(op, "bound1") : NULL,
				 nc ? NULL : F(op, "bound1"), lnc, name,
				 "bound1", P, &in.ins[2]);
	if (!rc)
		rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	return finish(cg, &in, rc);
}

/* ---- barriers, registers and branches ---------------------------------- */

/*
** nisa.lnc_barrier (coreBarrier): CoreBarrier on the engine named
** (unassigned -> Pool) with the kernel's next barrier id (1, 2, ...,
** shared with the barriers of sendRecv) and, for the n-th coreBarrier,
** the group `<kernel>.core_barrier_<n>`, so the n-th coreBarrier of every
** core's body meets the others' n-th. `data` has no BIR operand: it is
** not read. KLR is sequential, so the barrier is a fence: it follows
** every earlier statement and precedes every later one.
*/
static int cg_core_barrier(lp_cg *cg, const lp_kval *op, const char *name)
{
	const lp_kval *cl = F(op, "cores");
	int64_t *cores;
	lm_inst in;
	char *group;
	if (cl->n < 1 || cl->n > MAX_CORES)
		return cg_fail(cg, "coreBarrier lists %d cores (1 to %d)", cl->n,
			       MAX_CORES);
	cores = lm_xcalloc((size_t)cl->n, sizeof *cores);
	for (int i = 0; i < cl->n; i++) {
		if (cl->items[i].i < 0 || cl->items[i].i >= MAX_CORES) {
			free(cores);
			return cg_fail(cg, "coreBarrier core %lld is out of "
				       "range (0 to %d)",
				       (long long)cl->items[i].i,
				       MAX_CORES - 1);
		}
		for (int j = 0; j < i; j++)
			if (cores[j] == cl->items[i].i) {
				free(cores);
				return cg_fail(cg, "coreBarrier lists core %lld "
					       "twice",
					       (long long)cl->items[i].i);
			}
		cores[i] = cl->items[i].i;
	}
	cg->n_barriers++;
	cg->n_core_barriers++;
	group = lm_xasprintf("%s.core_barrier_%d", cg->kname,
			     cg->n_core_barriers);
	inst_init(&in, name, LM_OP_COREBARRIER,
		  map_engine(F(op, "engine"), LM_ENG_POOL), 0, 0);
	lm_b_set_barrier(&in, cg->n_barriers, cores, cl->n, group);
	free(group);
	free(cores);
	lp_cg_emit_fence(cg, &in);
	return 0;
}

/* ---- sendRecv and sendRecvCompute ---------------------------------------- */

/*
** A rank of sendRecv: an int immediate, 0 or 1 (the two physical cores of
** the Logical NeuronCore), and not this core (the exchange is with the
** peer).
*/
static int sr_rank(lp_cg *cg, const char *opn, const char *what,
		   const lp_kval *imm, int64_t *out)
{
	int64_t r;
	if (imm->ctor != 2)
		return cg_fail(cg, "%s %s must be an int immediate (rank 0 or "
			       "1), got '%s'", opn, what,
			       lp_kval_ctor_name(imm));
	r = imm->items[0].i;
	if (r != 0 && r != 1)
		return cg_fail(cg, "%s %s %lld is not a rank of the Logical "
			       "NeuronCore (0 or 1)", opn, what, (long long)r);
	if (r == cg->core)
		return cg_fail(cg, "%s %s %lld is the kernel's own core: the "
			       "exchange is with the peer core %lld", opn, what,
			       (long long)r, (long long)(1 - cg->core));
	*out = r;
	return 0;
}

/* Partitions and elements per partition an SB operand walks. */
static void sr_shape(const lm_arg *a, int64_t *parts, int64_t *free_elems)
{
	*parts = a->n_ap > 0 ? a->ap[0].num : 1;
	*free_elems = 1;
	for (int i = 1; i < a->n_ap; i++)
		*free_elems *= a->ap[i].num;
}

/* A contiguous [parts, n] operand of allocation alloc. */
static void sr_whole(lm_arg *a, const char *alloc, lm_dtype dt,
		     int64_t parts, int64_t n)
{
	lm_appair p[2] = { { n, parts }, { 1, n } };
	lm_b_init_ap(a, alloc, NULL, dt, 0, 0, p, 2);
}

/* A CoreBarrier of cores [0, 1] with the next barrier id, after dep. */
static void sr_barrier(lp_cg *cg, const char *name, const char *group,
		       const char *dep)
{
	static const int64_t cores[2] = { 0, 1 };
	lm_inst in;
	cg->n_barriers++;
	inst_init(&in, name, LM_OP_COREBARRIER, LM_ENG_POOL, 0, 0);
	lm_b_set_barrier(&in, cg->n_barriers, cores, 2, group);
	lp_ir_add_dep(&in, dep);
	lp_cg_emit(cg, &in);
}

/*
** nki.isa.sendrecv / nki.lnc.sendrecv (sendRecv) and sendrecv_compute
** (sendRecvCompute, compute set): the two cores of an LNC=2 Logical
** NeuronCore exchange a tile; the n-th of either form on one core meets
** the n-th on the other. The simulator keeps each core's SBUF to itself,
** so the tile goes through the sender's HBM (docs/provision.md,
** "sendRecv"): on each core, with k = n
**   NAME.send  DMACopy src -> K.sendrecv_k.stage (this core's DRAM)
**   NAME.sent  CoreBarrier [0, 1], group K.sendrecv_k.sent, after send:
**              both stages hold their tiles
**   NAME.recv  DMACopy K.sendrecv_k.peer (remote_local_target view of
**              the peer's stage) -> dst (sendRecv) or a scratch SB tile
**              K.sendrecv_k.recv (sendRecvCompute), after sent
**   NAME[.done] CoreBarrier [0, 1], group K.sendrecv_k.recvd, after recv:
**              both cores have read the peer's stage, which may be
**              written again (a loop's next pass)
**   NAME       (sendRecvCompute) TensorTensor dst = op(src, received) on
**              the vector engine, op add / max / min.
** Refused: a kernel not on core 0 or 1, a rank that is not the peer,
** operands outside SBUF, src and dst of another dtype or shape, a
** register offset, a list of more than one tile, another op.
*/
static int cg_sendrecv(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		       const char *name, int compute)
{
	const char *opn = compute ? "sendRecvCompute" : "sendRecv";
	const lp_kval *src, *dst, *to, *from;
	int64_t rto, rfrom, sp, sf, dp, df, shape[2];
	lm_arg a_src, a_dst;
	tinfo ti;
	lm_engine eng = LM_ENG_SP;
	lm_aluop alu = LM_ALU_ADD;
	char *stage = NULL, *peer = NULL, *scratch = NULL, *group = NULL;
	char *n_send = NULL, *n_sent = NULL, *n_recv = NULL, *n_done = NULL;
	lm_inst in;
	int rc, k, idx;

	if (!cg->has_core || (cg->core != 0 && cg->core != 1))
		return cg_fail(cg, "%s exchanges tiles between the two cores of "
			       "a Logical NeuronCore (LNC=2): the kernel must "
			       "run on core 0 or 1, and its carrier %s", opn,
			       cg->has_core ? "is on another core"
					    : "has no core id");
	if (compute) {
		const lp_kval *l[4] = { F(op, "srcs"), F(op, "dsts"),
					F(op, "sendToRanks"),
					F(op, "recvFromRanks") };
		const char *ln[4] = { "srcs", "dsts", "sendToRanks",
				      "recvFromRanks" };
		const char *aop = lp_kval_ctor_name(F(op, "op"));
		for (int i = 0; i < 4; i++)
			if (l[i]->n != 1)
				return cg_fail(cg, "sendRecvCompute with %d %s "
					       "is not modelled (one src, one "
					       "dst, one rank each way)",
					       l[i]->n, ln[i]);
		if (strcmp(aop, "add") && strcmp(aop, "max") &&
		    strcmp(aop, "min"))
			return cg_fail(cg, "sendRecvCompute op '%s' is not "
				       "modelled (add, max and min are)", aop);
		alu = lm_aluop_parse(aop);
		src = &l[0]->items[0];
		dst = &l[1]->items[0];
		to = &l[2]->items[0];
		from = &l[3]->items[0];
	} else {
		src = F(op, "src");
		dst = F(op, "dst");
		to = F(op, "sendToRank");
		from = F(op, "recvFromRank");
		if (F(op, "useGpsimdDma")->b)
			eng = LM_ENG_POOL;
	}
	if ((rc = sr_rank(cg, opn, compute ? "sendToRanks[0]" : "sendToRank",
			  to, &rto)) != 0 ||
	    (rc = sr_rank(cg, opn, compute ? "recvFromRanks[0]"
					   : "recvFromRank", from, &rfrom)) != 0)
		return rc;
	memset(&a_src, 0, sizeof a_src);
	memset(&a_dst, 0, sizeof a_dst);
	if ((rc = operand(cg, src, lnc, &a_src, &ti)) != 0)
		goto done;
	if (ti.mt != LM_MT_SB) {
		rc = cg_fail(cg, "%s src '%s' is not in SBUF (only SBUF tiles "
			     "are modelled)", opn, ti.alloc);
		goto done;
	}
	if ((rc = operand(cg, dst, lnc, &a_dst, &ti)) != 0)
		goto done;
	if (ti.mt != LM_MT_SB) {
		rc = cg_fail(cg, "%s dst '%s' is not in SBUF (only SBUF tiles "
			     "are modelled)", opn, ti.alloc);
		goto done;
	}
	if (is_dynamic(&a_src) || is_dynamic(&a_dst)) {
		rc = cg_fail(cg, "a register offset (scalarOffset) on %s is "
			     "not supported", opn);
		goto done;
	}
	if (a_src.dtype != a_dst.dtype) {
		rc = cg_fail(cg, "%s src is %s and dst %s (the tiles must have "
			     "one dtype)", opn, lm_dtype_name(a_src.dtype),
			     lm_dtype_name(a_dst.dtype));
		goto done;
	}
	sr_shape(&a_src, &sp, &sf);
	sr_shape(&a_dst, &dp, &df);
	if (sp != dp || sf != df) {
		rc = cg_fail(cg, "%s src [%lld, %lld] and dst [%lld, %lld] "
			     "differ in shape (partitions, elements per "
			     "partition)", opn, (long long)sp, (long long)sf,
			     (long long)dp, (long long)df);
		goto done;
	}
	k = ++cg->n_sendrecvs;
	stage = lm_xasprintf("%s.sendrecv_%d.stage", cg->kname, k);
	peer = lm_xasprintf("%s.sendrecv_%d.peer", cg->kname, k);
	if (lm_strmap_lookup(&cg->tensors, stage) ||
	    lm_strmap_lookup(&cg->tensors, peer)) {
		rc = cg_fail(cg, "%s needs the tensor names '%s' and '%s', "
			     "which the kernel uses", opn, stage, peer);
		goto done;
	}
	shape[0] = sp;
	shape[1] = sf;
	lp_cg_add_tensor(cg, stage, LM_TK_INTERNAL, a_src.dtype, LM_MT_DRAM,
			 shape, 2, sp, sf * lm_dtype_size(a_src.dtype), 1, 0, 0);
	idx = lp_cg_add_tensor(cg, peer, LM_TK_INTERNAL, a_src.dtype,
			       LM_MT_DRAM, shape, 2, sp,
			       sf * lm_dtype_size(a_src.dtype), 1, 0, 0);
	lm_b_set_view(&cg->f->allocs[idx], stage, rfrom);
	{
		char *b = lm_xasprintf("%s.send", name);
		n_send = lp_cg_inst_name(cg, b);
		free(b);
		b = lm_xasprintf("%s.sent", name);
		n_sent = lp_cg_inst_name(cg, b);
		free(b);
		b = lm_xasprintf("%s.recv", name);
		n_recv = lp_cg_inst_name(cg, b);
		free(b);
		if (compute) {
			b = lm_xasprintf("%s.done", name);
			n_done = lp_cg_inst_name(cg, b);
			free(b);
		} else {
			n_done = lm_xstrdup(name);
		}
	}
	/* 1. this core's tile into its stage */
	inst_init(&in, n_send, LM_OP_DMACOPY, eng, 1, 1);
	in.queue = lm_xstrdup(lp_cg_queue(cg));
	in.extra = cJSON_CreateObject();
	cJSON_AddStringToObject(in.extra, "mode", "Copy");
	in.ins[0] = a_src;
	memset(&a_src, 0, sizeof a_src);
	sr_whole(&in.outs[0], stage, in.ins[0].dtype, sp, sf);
	lp_cg_emit(cg, &in);
	/* 2. both stages written */
	group = lm_xasprintf("%s.sendrecv_%d.sent", cg->kname, k);
	sr_barrier(cg, n_sent, group, n_send);
	free(group);
	/* 3. the peer's stage into dst (or the scratch) */
	inst_init(&in, n_recv, LM_OP_DMACOPY, eng, 1, 1);
	in.queue = lm_xstrdup(lp_cg_queue(cg));
	in.extra = cJSON_CreateObject();
	cJSON_AddStringToObject(in.extra, "mode", "Copy");
	sr_whole(&in.ins[0], peer, a_dst.dtype, sp, sf);
	if (compute) {
		scratch = lm_xasprintf("%s.sendrecv_%d.recv", cg->kname, k);
		lp_cg_add_tensor(cg, scratch, LM_TK_INTERNAL, a_dst.dtype,
				 LM_MT_SB, shape, 2, sp,
				 sf * lm_dtype_size(a_dst.dtype), 0, 0, 0);
		sr_whole(&in.outs[0], scratch, a_dst.dtype, sp, sf);
	} else {
		in.outs[0] = a_dst;
		memset(&a_dst, 0, sizeof a_dst);
	}
	lp_ir_add_dep(&in, n_sent);
	lp_cg_emit(cg, &in);
	/* 4. both cores have read the peer's stage */
	group = lm_xasprintf("%s.sendrecv_%d.recvd", cg->kname, k);
	sr_barrier(cg, n_done, group, n_recv);
	free(group);
	/* 5. sendRecvCompute: dst = op(src, received) */
	if (compute) {
		inst_init(&in, name, LM_OP_TENSORTENSOR, LM_ENG_DVE, 2, 1);
		in.alu = alu;
		rc = operand(cg, src, lnc, &in.ins[0], &ti);
		if (!rc) {
			sr_whole(&in.ins[1], scratch, a_dst.dtype, sp, sf);
			in.outs[0] = a_dst;
			memset(&a_dst, 0, sizeof a_dst);
		}
		rc = finish(cg, &in, rc);
	}
done:
	lm_arg_clear(&a_src);
	lm_arg_clear(&a_dst);
	free(stage);
	free(peer);
	free(scratch);
	free(n_send);
	free(n_sent);
	free(n_recv);
	free(n_done);
	return rc;
}

/* A KLR register name -> its register allocation (int32, REG). */
static int reg_alloc(lp_cg *cg, const char *reg, const char **out)
{
	int idx;
	if (!reg || !*reg)
		return cg_fail(cg, "a register has an empty name");
	idx = (int)(intptr_t)lm_strmap_lookup(&cg->tensors, reg) - 1;
	if (idx < 0) {
		int64_t shape[1] = { 1 };
		lm_alloc *a = lm_b_append_alloc(cg->f, reg, LM_TK_INTERNAL,
						LM_DT_INT32, shape, 1);
		idx = cg->f->n_allocs - 1;
		lm_b_append_memloc(a, LM_MT_REG, 0, NULL, 0, 0);
		lm_strmap_put(&cg->tensors, a->name, (void *)(intptr_t)(idx + 1));
	} else if (cg->f->allocs[idx].memlocs[0].type != LM_MT_REG) {
		return cg_fail(cg, "register '%s' has the name of a tensor", reg);
	}
	*out = cg->f->allocs[idx].name;
	return 0;
}

/* A register_access operand (int32) of register reg. */
static int reg_arg(lp_cg *cg, const char *reg, lm_arg *a)
{
	const char *r = NULL;
	int rc = reg_alloc(cg, reg, &r);
	if (rc)
		return rc;
	memset(a, 0, sizeof *a);
	a->kind = LM_ARG_OPAQUE;
	a->dtype = LM_DT_INT32;
	a->extra = cJSON_CreateObject();
	cJSON_AddStringToObject(a->extra, "kind", "register_access");
	cJSON_AddStringToObject(a->extra, "dtype", "int32");
	cJSON_AddStringToObject(a->extra, "regref", r);
	return 0;
}

/* An int32 imm_value operand; the KLR Int32 must fit. */
static int imm32_arg(lp_cg *cg, const lp_kval *v, lm_arg *a)
{
	if (v->i < INT32_MIN || v->i > INT32_MAX)
		return cg_fail(cg, "immediate %lld does not fit an Int32",
			       (long long)v->i);
	memset(a, 0, sizeof *a);
	a->kind = LM_ARG_IMM;
	a->dtype = LM_DT_INT32;
	a->imm = (double)v->i;
	return 0;
}

/* register_alloc / register_move: RegisterMove dst := imm (engine ALL). */
static int cg_reg_move(lp_cg *cg, const lp_kval *op, const char *name)
{
	lm_inst in;
	int rc;
	inst_init(&in, name, LM_OP_REGMOVE, LM_ENG_ALL, 1, 1);
	rc = imm32_arg(cg, F(op, "imm"), &in.ins[0]);
	if (!rc)
		rc = reg_arg(cg, F(op, "dst")->s, &in.outs[0]);
	return finish(cg, &in, rc);
}

/* The loop counter's step: RegisterAlu dst := src op imm (engine ALL). */
static int cg_reg_alu(lp_cg *cg, const lp_kval *op, const char *name)
{
	const char *alu = lp_kval_ctor_name(F(op, "op"));
	int64_t ord;
	lm_inst in;
	int rc;
	if (lm_enum_parse(LM_ET_AluOpType, alu, &ord) != 0)
		return cg_fail(cg, "registerAluOp op '%s' has no BIR AluOpType",
			       alu);
	inst_init(&in, name, LM_OP_REGALU, LM_ENG_ALL, 2, 1);
	lm_b_set_register_alu(&in, (int)ord, 0);
	rc = reg_arg(cg, F(op, "src")->s, &in.ins[0]);
	if (!rc)
		rc = imm32_arg(cg, F(op, "imm"), &in.ins[1]);
	if (!rc)
		rc = reg_arg(cg, F(op, "dst")->s, &in.outs[0]);
	return finish(cg, &in, rc);
}

/*
** register_load / register_store: TensorLoad (a 1 x 1 tile -> register,
** engine ALL) and TensorSave (register -> 1 x 1 tile, engine SP).
*/
static int cg_reg_mem(lp_cg *cg, const lp_kval *op, const lp_kval *lnc,
		      const char *name, int load)
{
	lm_inst in;
	tinfo ti;
	int rc;
	inst_init(&in, name, load ? LM_OP_TENSORLOAD : LM_OP_TENSORSAVE,
		  load ? LM_ENG_ALL : LM_ENG_SP, 1, 1);
	if (load) {
		rc = operand(cg, F(op, "src"), lnc, &in.ins[0], &ti);
		if (!rc)
			rc = reg_arg(cg, F(op, "dst")->s, &in.outs[0]);
	} else {
		rc = reg_arg(cg, F(op, "src")->s, &in.ins[0]);
		if (!rc)
			rc = operand(cg, F(op, "dst"), lnc, &in.outs[0], &ti);
	}
	if (!rc && lm_arg_count(load ? &in.ins[0] : &in.outs[0]) != 1)
		rc = cg_fail(cg, "%s must access one element (got %lld)",
			     load ? "tensorLoad src" : "tensorStore dst",
			     (long long)lm_arg_count(load ? &in.ins[0]
						     : &in.outs[0]));
	return finish(cg, &in, rc);
}

/*
** The end of a block of a kernel that branches: Drain on ALL (every
** engine waits for the DMAs it issued) then AllEngineBarrier on ALL (a
** join of the five engines), so everything the block did is complete
** before any engine enters the next block, whichever it is. A dependency
** cannot say it: one on an instruction of a block not entered holds at
** once, and the next pass of a loop is not ordered by dependencies. The
** hazards start afresh after it.
*/
static void block_join(lp_cg *cg, const char *label)
{
	static const lm_opcode ops[2] = { LM_OP_DRAIN, LM_OP_AEBARRIER };
	static const char *const what[2] = { "drain", "join" };
	for (int i = 0; i < 2; i++) {
		char *base = lm_xasprintf("%s.%s.%s", cg->kname, label, what[i]);
		char *name = lp_cg_inst_name(cg, base);
		lm_inst in;
		inst_init(&in, name, ops[i], LM_ENG_ALL, 0, 0);
		lp_cg_emit(cg, &in);
		free(base);
		free(name);
	}
	lp_cg_hazards_reset(cg);
}

/* A branch target: a label of the body (a BIR block of that name). */
static int label_ok(lp_cg *cg, const lp_kval *body, const char *l,
		    const char *what)
{
	for (int b = 0; l && b < body->n; b++)
		if (!strcmp(F(&body->items[b], "label")->s, l))
			return 0;
	return cg_fail(cg, "cmpBranch %s '%s' names no block of the kernel",
		       what, l ? l : "");
}

/*
** The frontend's jmp / brnz / brlt (cmpBranch): `always` ->
** UnconditionalBranch to trueLabel; the others -> CompareAndBranch with
** comp_op IS_<op>IMM (reg1 against imm) or IS_<op>REG (reg1 against
** reg2), on_true / on_false the labels. Engine ALL: every engine follows
** the branch on its own registers.
*/
static int cg_branch(lp_cg *cg, const lp_kval *op, const lp_kval *body,
		     const char *name)
{
	int k = F(op, "op")->ctor, rc;
	const char *t = F(op, "trueLabel")->s, *f = F(op, "falseLabel")->s;
	lm_inst in;
	if ((rc = label_ok(cg, body, t, "trueLabel")) != 0)
		return rc;
	if (k == 0) {
		inst_init(&in, name, LM_OP_UBRANCH, LM_ENG_ALL, 0, 0);
		lm_b_set_jump(&in, t);
		return finish(cg, &in, 0);
	}
	if ((rc = label_ok(cg, body, f, "falseLabel")) != 0)
		return rc;
	inst_init(&in, name, LM_OP_CMPBRANCH, LM_ENG_ALL, 2, 0);
	/* BrCmpOp lt_imm .. gt_reg are BranchCompareOp IS_LTIMM .. IS_GTREG */
	lm_b_set_branch(&in, k - 1, t, f);
	rc = reg_arg(cg, F(op, "reg1")->s, &in.ins[0]);
	if (!rc && k <= 6)
		rc = imm32_arg(cg, F(op, "imm"), &in.ins[1]);
	else if (!rc)
		rc = reg_arg(cg, F(op, "reg2")->s, &in.ins[1]);
	return finish(cg, &in, rc);
}

/* ---- PSUM accumulation groups ----------------------------------------- */

/*
** psum_note: which ncMatMuls accumulate. Program order is block order,
** then statement order (a loop body counts once). A Matmult that is
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

/*
** An operator the lowering does not take: its name and its payload's
** serde tag.
*/
static int refuse(lp_cg *cg, const char *opname, const lp_kval *payload)
{
	if (payload && payload->kind == LP_KV_OBJ)
		return cg_fail(cg, "operator '%s' (serde tag %d) is not "
			       "supported by the KLR lowering", opname,
			       payload->type_tag);
	return cg_fail(cg, "operator '%s' is not supported by the KLR "
		       "lowering", opname);
}

/* One statement: its name, then the operator's codegen function. */
static int cg_stmt(lp_cg *cg, const lp_kval *stmt, const lp_kval *lnc,
		   const lp_kval *body, const char *label, int index,
		   mm_groups *mg)
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
	case OP_NCACTIVATE: rc = cg_activate(cg, payload, lnc, name, 0); break;
	case OP_ACTIVATIONREDUCE:
		rc = cg_activate(cg, payload, lnc, name, 1);
		break;
	case OP_NCMATMUL: rc = cg_matmul(cg, payload, lnc, name, mg); break;
	case OP_DMACOPY:
	case OP_NCDMACOPY: rc = cg_dma(cg, payload, lnc, name); break;
	case OP_DMATRANSPOSE:
		rc = cg_dma_transpose(cg, payload, lnc, name);
		break;
	case OP_TENSORTENSOR:
		rc = cg_tensor_tensor(cg, payload, lnc, name);
		break;
	case OP_SHUFFLE: rc = cg_shuffle(cg, payload, lnc, name); break;
	case OP_DMACOMPUTE: rc = cg_dma_compute(cg, payload, lnc, name); break;
	case OP_NCSCALARTENSORTENSOR:
		rc = cg_stt_scan(cg, payload, lnc, name, STT_NC);
		break;
	case OP_SCALARTENSORTENSOR:
		rc = cg_stt_scan(cg, payload, lnc, name, STT_LEGACY);
		break;
	case OP_TENSORTENSORSCAN:
		rc = cg_stt_scan(cg, payload, lnc, name, STT_SCAN);
		break;
	case OP_TENSORSCALARREDUCE:
		rc = cg_tensor_scalar_reduce(cg, payload, lnc, name);
		break;
	case OP_TENSORSCALAR:
		if (F(payload, "imm0")->ctor == 1 ||
		    (some(F(payload, "imm1")) &&
		     some(F(payload, "imm1"))->ctor == 1))
			rc = cg_tensor_scalar_ptr(cg, payload, lnc, name);
		else
			rc = cg_tensor_scalar(cg, payload, lnc, name);
		break;
	case OP_COPY:
	case OP_NCCOPY: rc = cg_copy(cg, payload, lnc, name); break;
	case OP_MEMSET: rc = cg_memset(cg, payload, lnc, name); break;
	case OP_IOTA: rc = cg_iota(cg, payload, lnc, name); break;
	case OP_NCLOCALGATHER:
		rc = cg_local_gather(cg, payload, lnc, name);
		break;
	case OP_NCAFFINESELECT:
		rc = cg_affine_select(cg, payload, lnc, name);
		break;
	case OP_TRANSPOSE: rc = cg_transpose(cg, payload, lnc, name); break;
	case OP_TENSORREDUCE:
		rc = cg_tensor_reduce(cg, payload, lnc, name);
		break;
	case OP_RECIPROCAL:
		rc = cg_unary(cg, payload, lnc, name, LM_OP_RECIPROCAL);
		break;
	case OP_MAX8: rc = cg_unary(cg, payload, lnc, name, LM_OP_MAX8); break;
	case OP_BNSTATS:
		rc = cg_unary(cg, payload, lnc, name, LM_OP_BNSTATS);
		break;
	case OP_BNAGGR:
		rc = cg_unary(cg, payload, lnc, name, LM_OP_BNAGGR);
		break;
	case OP_FINDINDEX8: rc = cg_match8(cg, payload, lnc, name, 0); break;
	case OP_MATCHREPLACE8:
		rc = cg_match8(cg, payload, lnc, name, 1);
		break;
	case OP_SELECTREDUCE: rc = cg_select(cg, payload, lnc, name); break;
	case OP_RANGESELECT:
	case OP_NCRANGESELECT:
		rc = cg_range_select(cg, payload, lnc, name,
				     op->ctor == OP_NCRANGESELECT);
		break;
	case OP_COREBARRIER: rc = cg_core_barrier(cg, payload, name); break;
	case OP_SENDRECV: rc = cg_sendrecv(cg, payload, lnc, name, 0); break;
	case OP_SENDRECVCOMPUTE:
		rc = cg_sendrecv(cg, payload, lnc, name, 1);
		break;
	case OP_EXPONENTIAL: rc = cg_exponential(cg, payload, lnc, name); break;
	case OP_REGISTERMOVE: rc = cg_reg_move(cg, payload, name); break;
	case OP_REGISTERALUOP: rc = cg_reg_alu(cg, payload, name); break;
	case OP_TENSORLOAD: rc = cg_reg_mem(cg, payload, lnc, name, 1); break;
	case OP_TENSORSTORE: rc = cg_reg_mem(cg, payload, lnc, name, 0); break;
	case OP_CMPBRANCH:
		block_join(cg, label);
		rc = cg_branch(cg, payload, body, name);
		break;
	default:
		rc = refuse(cg, opname, payload);
	}
	free(name);
	for (int k = n_before; !rc && k < cg->blk->n_insts; k++)
		mm_group_inst(cg, mg, (int)(cg->blk - cg->f->blocks), k);
	mg->accumulate = 0;
	return rc;
}

/* Does any statement of the body branch (cmpBranch)? */
static int has_branch(const lp_kval *body)
{
	for (int b = 0; b < body->n; b++) {
		const lp_kval *stmts = F(&body->items[b], "body");
		for (int s = 0; s < stmts->n; s++)
			if (F(&stmts->items[s], "op")->ctor == OP_CMPBRANCH)
				return 1;
	}
	return 0;
}

/*
** codegenLncKernel: the kernel's function (name = the kernel name, kind
** nki) with one BIR block per non-empty KLR block of the chosen body.
*/
int lp_codegen_lnc(lp_cg *cg, const lp_kval *lnc, int64_t core)
{
	const lp_kval *bodies = F(lnc, "bodies"), *body;
	mm_groups mg;
	int rc, branches;

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
	cg->core = core;
	branches = has_branch(body);
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
		/* a branch may name an empty block: keep them all then */
		if (stmts->n == 0 && !branches)
			continue;
		nb = lm_b_append_block(cg->f, label);
		cg->blk = nb;
		for (int s = 0; s < stmts->n; s++)
			if ((rc = cg_stmt(cg, &stmts->items[s], lnc, body,
					  label, s, &mg)) != 0) {
				mm_groups_clear(&mg);
				return rc;
			}
		/* a block that falls through ends with the join too */
		if (branches && stmts->n && F(&stmts->items[stmts->n - 1],
					     "op")->ctor != OP_CMPBRANCH)
			block_join(cg, label);
	}
	mm_groups_clear(&mg);
	return lp_cg_place(cg);
}

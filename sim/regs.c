/*
** regs.c -- registers: the register file of each (core, engine), the
** prepared operands of RegisterMove, RegisterAlu and CompareAndBranch,
** their semantics, and the register values expressions read
** (docs/simulator.md, "Registers", "Branches").
**
** A register is an allocation with a REG memory location; the machine
** numbers them (slots, global to the machine). Each engine of a core has
** its own file: a 32-bit cell and a written bit per slot, allocated when
** the engine first writes or reads a register, so its size is the number
** of registers, whatever the trip counts.
*/
#include "common.h"
#include "sim_int.h"
#include "enumtab.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ---- the ALU ------------------------------------------------------------ */

lm_aluop ls_reg_aluop(int ord)
{
	const char *name = lm_enum_name(LM_ET_AluOpType, ord);
	return name ? lm_aluop_parse(name) : LM_ALU_INVALID;
}

int ls_reg_op_modelled(lm_aluop op)
{
	switch (op) {
	case LM_ALU_BYPASS: case LM_ALU_ADD: case LM_ALU_SUBTRACT:
	case LM_ALU_MULT: case LM_ALU_DIVIDE: case LM_ALU_MOD:
	case LM_ALU_ARITH_SHIFT_LEFT: case LM_ALU_ARITH_SHIFT_RIGHT:
	case LM_ALU_LOGICAL_SHIFT_LEFT: case LM_ALU_LOGICAL_SHIFT_RIGHT:
	case LM_ALU_BITWISE_AND: case LM_ALU_BITWISE_OR:
	case LM_ALU_BITWISE_XOR: case LM_ALU_BITWISE_NOT:
	case LM_ALU_MAX: case LM_ALU_MIN:
	case LM_ALU_IS_EQUAL: case LM_ALU_NOT_EQUAL: case LM_ALU_IS_GE:
	case LM_ALU_IS_GT: case LM_ALU_IS_LE: case LM_ALU_IS_LT:
		return 1;
	default:
		return 0;
	}
}

/* floor(n / d) and n - d * floor(n / d), d != 0 (the remainder has the
** sign of d: for d > 0 the Euclidean one of lm_affine_eval). */
static int64_t fdiv(int64_t n, int64_t d)
{
	int64_t q = n / d;
	return (n % d != 0 && ((n < 0) != (d < 0))) ? q - 1 : q;
}

/* n - d * fdiv(n, d), without the product (it can overflow: INT64_MAX
** mod -2): the truncated remainder moved to d's sign. */
static int64_t fmod64(int64_t n, int64_t d)
{
	int64_t r = n % d;
	return r != 0 && ((r < 0) != (d < 0)) ? r + d : r;
}

/* A 32-bit value of dtype dt as a 64-bit integer. */
static int64_t widen(lm_dtype dt, uint32_t v)
{
	return dt == LM_DT_INT32 ? (int64_t)(int32_t)v : (int64_t)v;
}

/*
** The 32-bit ALU is the 64-bit one on the operands widened by their dtype
** (sign- or zero-extended; a logical right shift moves a's 32 bits, so a
** is zero-extended there), truncated: wrap-around, the shifts by 32 or
** more, INT32_MIN / -1 and the compares all come out at 32 bits.
*/
int ls_reg_alu(lm_aluop op, lm_dtype dt, uint32_t a, uint32_t b, uint32_t *r)
{
	uint64_t w;
	int64_t x = op == LM_ALU_LOGICAL_SHIFT_RIGHT ? (int64_t)a
						      : widen(dt, a);
	int rc = ls_reg_alu64(op, dt == LM_DT_INT32, (uint64_t)x,
			      (uint64_t)widen(dt, b), &w);
	if (rc == 0)
		*r = (uint32_t)w;
	return rc;
}

int ls_reg_alu64(lm_aluop op, int is_signed, uint64_t a, uint64_t b,
		 uint64_t *r)
{
	int64_t x = (int64_t)a, y = (int64_t)b;
	int c = is_signed ? (x < y ? -1 : x > y) : (a < b ? -1 : a > b);
	switch (op) {
	case LM_ALU_BYPASS: *r = a; return 0;
	case LM_ALU_ADD: *r = a + b; return 0;
	case LM_ALU_SUBTRACT: *r = a - b; return 0;
	case LM_ALU_MULT: *r = a * b; return 0;
	case LM_ALU_DIVIDE: case LM_ALU_MOD:
		if (b == 0)
			return -1;
		if (!is_signed)
			*r = op == LM_ALU_DIVIDE ? a / b : a % b;
		else if (y == -1) /* INT64_MIN / -1 wraps */
			*r = op == LM_ALU_DIVIDE ? 0 - a : 0;
		else
			*r = (uint64_t)(op == LM_ALU_DIVIDE ? fdiv(x, y)
							    : fmod64(x, y));
		return 0;
	case LM_ALU_ARITH_SHIFT_LEFT: case LM_ALU_LOGICAL_SHIFT_LEFT:
		*r = b >= 64 ? 0 : a << b;
		return 0;
	case LM_ALU_LOGICAL_SHIFT_RIGHT:
		*r = b >= 64 ? 0 : a >> b;
		return 0;
	case LM_ALU_ARITH_SHIFT_RIGHT:
		if (!is_signed)
			*r = b >= 64 ? 0 : a >> b;
		else
			*r = (uint64_t)(x >> (b >= 64 ? 63 : b));
		return 0;
	case LM_ALU_BITWISE_AND: *r = a & b; return 0;
	case LM_ALU_BITWISE_OR: *r = a | b; return 0;
	case LM_ALU_BITWISE_XOR: *r = a ^ b; return 0;
	case LM_ALU_BITWISE_NOT: *r = ~a; return 0;
	case LM_ALU_MAX: *r = c >= 0 ? a : b; return 0;
	case LM_ALU_MIN: *r = c <= 0 ? a : b; return 0;
	case LM_ALU_IS_EQUAL: *r = c == 0; return 0;
	case LM_ALU_NOT_EQUAL: *r = c != 0; return 0;
	case LM_ALU_IS_GE: *r = c >= 0; return 0;
	case LM_ALU_IS_GT: *r = c > 0; return 0;
	case LM_ALU_IS_LE: *r = c <= 0; return 0;
	case LM_ALU_IS_LT: *r = c < 0; return 0;
	default:
		return -2;
	}
}

/* ---- the files ---------------------------------------------------------- */

/* Engine eng's file on core c, allocated on first use. */
static void use_file(ls_machine *mc, int c, int eng)
{
	ls_core_regs *R = &mc->regs[c];
	size_t n = (size_t)mc->n_regs + 1;
	if (R->v[eng])
		return;
	R->v[eng] = lm_xcalloc(n, sizeof *R->v[eng]);
	R->w[eng] = lm_xcalloc(n, 1);
	if (!R->last) {
		R->last = lm_xcalloc(n, sizeof *R->last);
		R->last_eng = lm_xcalloc(n, 1);
	}
}

int ls_reg_read(ls_machine *mc, int c, int eng, int slot, uint32_t *v)
{
	ls_core_regs *R = &mc->regs[c];
	if (!R->w[eng] || !R->w[eng][slot])
		return -1;
	*v = R->v[eng][slot];
	return 0;
}

void ls_reg_set(ls_machine *mc, int c, int eng, int slot, uint32_t v,
		const ls_sinst *si)
{
	ls_core_regs *R = &mc->regs[c];
	use_file(mc, c, eng);
	R->v[eng][slot] = v;
	R->w[eng][slot] = 1;
	R->last[slot] = si;
	R->last_eng[slot] = (signed char)eng;
}

void ls_reg_unwritten(const ls_machine *mc, int c, int eng, int slot,
		      char *buf, size_t n)
{
	const ls_core_regs *R = &mc->regs[c];
	const ls_sinst *w = R->last ? R->last[slot] : NULL;
	if (w)
		snprintf(buf, n, "register '%s', which no instruction has "
			 "written on %s (last written on %s by '%s'): "
			 "registers are per engine", mc->reg_allocs[slot]->name,
			 ls_engine_name(eng), ls_engine_name(R->last_eng[slot]),
			 w->in->name ? w->in->name : "");
	else
		snprintf(buf, n, "register '%s', which no instruction has "
			 "written on %s", mc->reg_allocs[slot]->name,
			 ls_engine_name(eng));
}

void ls_regs_reset(ls_machine *mc)
{
	for (int c = 0; c < LS_MAX_CORES; c++) {
		ls_core_regs *R = &mc->regs[c];
		for (int e = 0; e < LS_ENGINES; e++)
			if (R->w[e])
				memset(R->w[e], 0, (size_t)mc->n_regs + 1);
		if (R->last)
			memset(R->last, 0, ((size_t)mc->n_regs + 1) *
			       sizeof *R->last);
	}
}

void ls_regs_free(ls_machine *mc)
{
	for (int c = 0; c < LS_MAX_CORES; c++) {
		ls_core_regs *R = &mc->regs[c];
		for (int e = 0; e < LS_ENGINES; e++) {
			free(R->v[e]);
			free(R->w[e]);
		}
		free(R->last);
		free(R->last_eng);
		memset(R, 0, sizeof *R);
	}
	free(mc->reg_allocs);
	mc->reg_allocs = NULL;
	mc->n_regs = mc->cap_regs = 0;
}

/* ---- preparation -------------------------------------------------------- */

/* The regref of a register_access operand, or NULL. */
static const char *regref_of(const lm_arg *a)
{
	const cJSON *k, *r;
	if (a->kind != LM_ARG_OPAQUE || !a->extra)
		return NULL;
	k = cJSON_GetObjectItemCaseSensitive(a->extra, "kind");
	if (!cJSON_IsString(k) || strcmp(k->valuestring, "register_access"))
		return NULL;
	r = cJSON_GetObjectItemCaseSensitive(a->extra, "regref");
	return cJSON_IsString(r) ? r->valuestring : NULL;
}

int ls_reg_slot(const ls_machine *mc, int mi, const char *name)
{
	void *v;
	if (!name || !lm_strmap_get(&mc->mods[mi].regs, name, &v))
		return -1;
	return (int)(intptr_t)v - 1;
}

/* Operand a of si ("ins[1]") as a source (or, when is_dst, the
** destination) into *o: NULL, or why it is not modelled (owned). */
static char *prep_rop(const ls_machine *mc, int mi, const lm_arg *a,
		      const char *what, int is_dst, ls_rop *o)
{
	const char *rr = regref_of(a);
	o->slot = -1;
	o->imm = 0;
	if (a->kind == LM_ARG_IMM && !is_dst) {
		double d = a->imm;
		if (!(d >= -2147483648.0 && d < 4294967296.0) ||
		    d != (double)(int64_t)d)
			return lm_xasprintf("%s imm_value %.17g is not a 32-bit "
					    "integer", what, d);
		o->imm = (uint32_t)(int64_t)d;
		return NULL;
	}
	if (!rr)
		return lm_xasprintf("%s: only a register_access%s is modelled",
				    what, is_dst ? "" : " or an imm_value");
	if (a->dtype != LM_DT_INT32 && a->dtype != LM_DT_UINT32)
		return lm_xasprintf("%s register_access '%s' dtype '%s': only "
				    "int32 and uint32 are modelled", what, rr,
				    a->dtype_str ? a->dtype_str :
				    lm_dtype_name(a->dtype));
	o->slot = ls_reg_slot(mc, mi, rr);
	if (o->slot < 0)
		return lm_xasprintf("%s: register '%s' is no register "
				    "allocation of the module", what, rr);
	return NULL;
}

/*
** RegisterAlu is_64bit into R: ins [a.lo, a.hi, b.lo, b.hi] or [a.lo,
** a.hi, imm], outs [lo, hi]. NULL, or why (owned).
*/
static char *prep_alu64(const ls_machine *mc, int mi, const lm_inst *in,
			ls_rinst *R)
{
	char *why;
	R->is_64 = 1;
	if ((in->n_ins != 3 && in->n_ins != 4) || in->n_outs != 2)
		return lm_xasprintf("RegisterAlu is_64bit takes ins [a.lo, a.hi, "
				    "b.lo, b.hi] or [a.lo, a.hi, imm] and outs "
				    "[lo, hi] (has %d and %d)", in->n_ins,
				    in->n_outs);
	if ((why = prep_rop(mc, mi, &in->outs[0], "outs[0]", 1, &R->dst)) ||
	    (why = prep_rop(mc, mi, &in->outs[1], "outs[1]", 1, &R->dst_hi)))
		return why;
	R->dtype = in->outs[0].dtype;
	R->n_src = 4;
	for (int i = 0; i < 2; i++) {
		char w[16];
		snprintf(w, sizeof w, "ins[%d]", i);
		if ((why = prep_rop(mc, mi, &in->ins[i], w, 1, &R->src[i])))
			return why;
	}
	if (in->n_ins == 4) {
		if ((why = prep_rop(mc, mi, &in->ins[2], "ins[2]", 1,
				    &R->src[2])) ||
		    (why = prep_rop(mc, mi, &in->ins[3], "ins[3]", 1,
				    &R->src[3])))
			return why;
		return NULL;
	}
	{
		double d = in->ins[2].imm;
		uint64_t u;
		if (in->ins[2].kind != LM_ARG_IMM ||
		    !(d >= -9223372036854775808.0 && d < 18446744073709551616.0)
		    || (d < 0 ? (double)(int64_t)d : (double)(uint64_t)d) != d)
			return lm_xasprintf("ins[2]: a 64-bit integer imm_value");
		u = d < 0 ? (uint64_t)(int64_t)d : (uint64_t)d;
		R->src[2].slot = R->src[3].slot = -1;
		R->src[2].imm = (uint32_t)u;
		R->src[3].imm = (uint32_t)(u >> 32);
	}
	return NULL;
}

void ls_reg_prepare(ls_machine *mc, int mi, ls_sinst *si)
{
	const lm_inst *in = si->in;
	ls_rinst *R = lm_xcalloc(1, sizeof *R);
	int want = in->op == LM_OP_REGALU ? 2 : 1;
	char *why = NULL;
	si->reg = R;
	R->alu = in->op == LM_OP_REGALU ? ls_reg_aluop(in->reg_alu)
					: LM_ALU_BYPASS;
	if (in->op == LM_OP_REGALU && in->is_64bit) {
		if (!ls_reg_op_modelled((lm_aluop)R->alu))
			why = lm_xasprintf("RegisterAlu op is not modelled");
		else
			why = prep_alu64(mc, mi, in, R);
		goto done;
	}
	if (in->n_ins != want || in->n_outs != 1) {
		why = lm_xasprintf("%s takes %d ins and 1 outs (has %d and %d)",
				   lm_opcode_name(in->op), want, in->n_ins,
				   in->n_outs);
		goto done;
	}
	if (!ls_reg_op_modelled((lm_aluop)R->alu)) {
		const char *n = lm_enum_name(LM_ET_AluOpType, in->reg_alu);
		why = lm_xasprintf("RegisterAlu op '%s' is not modelled",
				   n ? n : "?");
		goto done;
	}
	if ((why = prep_rop(mc, mi, &in->outs[0], "outs[0]", 1, &R->dst)))
		goto done;
	R->dtype = in->outs[0].dtype;
	R->n_src = want;
	for (int i = 0; i < want && !why; i++) {
		char w[16];
		snprintf(w, sizeof w, "ins[%d]", i);
		why = prep_rop(mc, mi, &in->ins[i], w, 0, &R->src[i]);
	}
done:
	if (why && !si->fault)
		si->fault = why;
	else
		free(why);
}

/* ---- execution ---------------------------------------------------------- */

int ls_reg_exec(ls_machine *mc, int c, int eng, const ls_sinst *si,
		char *err, size_t n)
{
	const ls_rinst *R = si->reg;
	uint32_t v[4] = { 0, 0, 0, 0 }, r;
	int rc;
	if (si->fault) {
		snprintf(err, n, "%s", si->fault);
		return -1;
	}
	for (int i = 0; i < R->n_src; i++) {
		char what[300];
		if (R->src[i].slot < 0) {
			v[i] = R->src[i].imm;
			continue;
		}
		if (ls_reg_read(mc, c, eng, R->src[i].slot, &v[i]) == 0)
			continue;
		ls_reg_unwritten(mc, c, eng, R->src[i].slot, what,
				 sizeof what);
		snprintf(err, n, "ins[%d] reads %s", i, what);
		return -1;
	}
	if (R->is_64) {
		uint64_t r64;
		rc = ls_reg_alu64((lm_aluop)R->alu, R->dtype == LM_DT_INT32,
				  (uint64_t)v[1] << 32 | v[0],
				  (uint64_t)v[3] << 32 | v[2], &r64);
		if (rc == -1) {
			snprintf(err, n, "%s by zero: ins[2..3] are 0",
				 R->alu == LM_ALU_MOD ? "mod" : "divide");
			return -1;
		}
		if (rc) {
			snprintf(err, n, "RegisterAlu op is not modelled");
			return -1;
		}
		ls_reg_set(mc, c, eng, R->dst.slot, (uint32_t)r64, si);
		ls_reg_set(mc, c, eng, R->dst_hi.slot, (uint32_t)(r64 >> 32),
			   si);
		return 0;
	}
	rc = ls_reg_alu((lm_aluop)R->alu, R->dtype, v[0], v[1], &r);
	if (rc == -2) {
		snprintf(err, n, "RegisterAlu op is not modelled");
		return -1;
	}
	if (rc) {
		if (R->src[1].slot >= 0)
			snprintf(err, n, "%s by zero: ins[1] register '%s' is 0 "
				 "on %s", R->alu == LM_ALU_MOD ? "mod"
				 : "divide", mc->reg_allocs[R->src[1].slot]->name,
				 ls_engine_name(eng));
		else
			snprintf(err, n, "%s by zero: ins[1] imm_value is 0",
				 R->alu == LM_ALU_MOD ? "mod" : "divide");
		return -1;
	}
	ls_reg_set(mc, c, eng, R->dst.slot, r, si);
	return 0;
}

/* ---- CompareAndBranch --------------------------------------------------- */

/* Is dt a width CompareAndBranch compares at? */
static int cmp_dtype(lm_dtype dt)
{
	switch (dt) {
	case LM_DT_UINT8: case LM_DT_INT8: case LM_DT_UINT16:
	case LM_DT_INT16: case LM_DT_UINT32: case LM_DT_INT32:
	case LM_DT_FLOAT32:
		return 1;
	default:
		return 0;
	}
}

/* A 32-bit register cell read at dtype dt (its low bits for the narrow
** integers, its bits for float32), exactly, as a double. */
static double cell_value(lm_dtype dt, uint32_t v)
{
	float f;
	switch (dt) {
	case LM_DT_UINT8: return (double)(uint8_t)v;
	case LM_DT_INT8: return (double)(int8_t)(uint8_t)v;
	case LM_DT_UINT16: return (double)(uint16_t)v;
	case LM_DT_INT16: return (double)(int16_t)(uint16_t)v;
	case LM_DT_INT32: return (double)(int32_t)v;
	case LM_DT_FLOAT32:
		memcpy(&f, &v, sizeof f);
		return (double)f;
	default: return (double)v;
	}
}

/* The bits immediate d has at dtype dt when dt holds it exactly: 0, or
** -1 (not representable). */
static int imm_bits(lm_dtype dt, double d, uint32_t *bits)
{
	float f;
	if (dt == LM_DT_FLOAT32) {
		f = (float)d;
		if ((double)f != d && d == d)
			return -1;
		memcpy(bits, &f, sizeof f);
		return 0;
	}
	/* outside every 32-bit register dtype (and NaN): not a cell value;
	   checked before the cast, which is undefined out of int64's range */
	if (!(d >= -2147483648.0 && d <= 4294967295.0) ||
	    d != (double)(int64_t)d)
		return -1;
	*bits = (uint32_t)(int64_t)d;
	return cell_value(dt, *bits) == d ? 0 : -1;
}

void ls_cmp_prepare(ls_machine *mc, int mi, ls_sinst *si)
{
	const lm_inst *in = si->in;
	ls_rinst *R = lm_xcalloc(1, sizeof *R);
	int is_reg = in->comp_op >= 6;
	const char *rr;
	char *why = NULL;
	si->reg = R;
	R->alu = in->comp_op;
	R->n_src = 2;
	R->dst.slot = -1;
	if (in->comp_op < 0 || in->comp_op > 11) {
		const char *n = lm_enum_name(LM_ET_BranchCompareOp, in->comp_op);
		why = lm_xasprintf("comp_op '%s' is not modelled", n ? n : "?");
		goto done;
	}
	if (in->n_ins != 2 || in->n_outs != 0) {
		why = lm_xasprintf("CompareAndBranch takes 2 ins and 0 outs "
				   "(has %d and %d)", in->n_ins, in->n_outs);
		goto done;
	}
	rr = regref_of(&in->ins[0]);
	if (!rr) {
		why = lm_xasprintf("ins[0]: the compared value must be a "
				   "register_access");
		goto done;
	}
	R->dtype = in->ins[0].dtype;
	if (!cmp_dtype(R->dtype)) {
		why = lm_xasprintf("ins[0] register_access '%s' dtype '%s': the "
				   "compare is modelled at uint8, int8, uint16, "
				   "int16, uint32, int32 and float32", rr,
				   in->ins[0].dtype_str ? in->ins[0].dtype_str
				   : lm_dtype_name(R->dtype));
		goto done;
	}
	if ((R->src[0].slot = ls_reg_slot(mc, mi, rr)) < 0) {
		why = lm_xasprintf("ins[0]: register '%s' is no register "
				   "allocation of the module", rr);
		goto done;
	}
	R->src[1].slot = -1;
	if (!is_reg) {
		if (in->ins[1].kind != LM_ARG_IMM)
			why = lm_xasprintf("ins[1]: an *IMM comp_op compares "
					   "with an imm_value");
		else if (imm_bits(R->dtype, in->ins[1].imm, &R->src[1].imm))
			why = lm_xasprintf("ins[1] imm_value %.17g is not a "
					   "value of ins[0]'s dtype %s",
					   in->ins[1].imm,
					   lm_dtype_name(R->dtype));
		goto done;
	}
	rr = regref_of(&in->ins[1]);
	if (!rr)
		why = lm_xasprintf("ins[1]: a *REG comp_op compares with a "
				   "register_access");
	else if (in->ins[1].dtype != R->dtype)
		why = lm_xasprintf("ins[1] register_access '%s' dtype '%s' "
				   "differs from ins[0]'s '%s'", rr,
				   lm_dtype_name(in->ins[1].dtype),
				   lm_dtype_name(R->dtype));
	else if ((R->src[1].slot = ls_reg_slot(mc, mi, rr)) < 0)
		why = lm_xasprintf("ins[1]: register '%s' is no register "
				   "allocation of the module", rr);
done:
	if (why && !si->fault)
		si->fault = why;
	else
		free(why);
}

int ls_cmp_exec(ls_machine *mc, int c, int eng, const ls_sinst *si,
		int *taken, char *err, size_t n)
{
	const ls_rinst *R = si->reg;
	uint32_t v[2];
	double a, b;
	if (si->fault) {
		snprintf(err, n, "%s", si->fault);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		char what[300];
		if (R->src[i].slot < 0) {
			v[i] = R->src[i].imm;
			continue;
		}
		if (ls_reg_read(mc, c, eng, R->src[i].slot, &v[i]) == 0)
			continue;
		ls_reg_unwritten(mc, c, eng, R->src[i].slot, what,
				 sizeof what);
		snprintf(err, n, "ins[%d] reads %s", i, what);
		return -1;
	}
	a = cell_value(R->dtype, v[0]);
	b = cell_value(R->dtype, v[1]);
	/* LT LE EQ NE GE GT, the *IMM group then the *REG group; a NaN
	   compares unequal to everything */
	switch (R->alu % 6) {
	case 0: *taken = a < b; break;
	case 1: *taken = a <= b; break;
	case 2: *taken = a == b; break;
	case 3: *taken = a != b; break;
	case 4: *taken = a >= b; break;
	default: *taken = a > b; break;
	}
	return 0;
}

/* ---- TensorLoad / TensorSave ------------------------------------------- */

/* Registers a memory dtype fills: 1 for the 32-bit ones, 2 (lo, hi) for
** the 64-bit integers, 0 for any other. */
static int tls_regs(lm_dtype dt)
{
	switch (dt) {
	case LM_DT_INT32: case LM_DT_UINT32: case LM_DT_FLOAT32:
		return 1;
	case LM_DT_INT64: case LM_DT_UINT64:
		return 2;
	default:
		return 0;
	}
}

void ls_tls_prepare(ls_machine *mc, int mi, ls_sinst *si)
{
	const lm_inst *in = si->in;
	int is_load = in->op == LM_OP_TENSORLOAD;
	int nmem = is_load ? in->n_ins : in->n_outs;
	int nreg = is_load ? in->n_outs : in->n_ins;
	const char *side = is_load ? "outs" : "ins";
	ls_rinst *R = lm_xcalloc(1, sizeof *R);
	char *why = NULL;
	int want;
	si->reg = R;
	R->dst.slot = -1;
	if (nmem != 1) {
		why = lm_xasprintf("%s takes one tensor element in %s[0]",
				   lm_opcode_name(in->op), is_load ? "ins"
				   : "outs");
		goto done;
	}
	R->dtype = is_load ? in->ins[0].dtype : in->outs[0].dtype;
	want = tls_regs(R->dtype);
	if (!want) {
		why = lm_xasprintf("%s[0] dtype '%s': a register holds int32, "
				   "uint32 or float32, a pair (lo, hi) int64 or "
				   "uint64", is_load ? "ins" : "outs",
				   lm_dtype_name(R->dtype));
		goto done;
	}
	if (nreg != want) {
		why = lm_xasprintf("%s: %d register%s for a %s element (has %d)",
				   side, want, want == 1 ? "" : "s (lo, hi)",
				   lm_dtype_name(R->dtype), nreg);
		goto done;
	}
	R->n_src = want;
	for (int i = 0; i < want && !why; i++) {
		char w[16];
		snprintf(w, sizeof w, "%s[%d]", side, i);
		why = prep_rop(mc, mi, is_load ? &in->outs[i] : &in->ins[i], w,
			       1, &R->src[i]);
	}
done:
	if (why && !si->fault)
		si->fault = why;
	else
		free(why);
}

/* The memory operand o of si holds one element: 0, or -1 with err. */
static int one_element(const ls_opnd *o, const char *what, char *err,
		       size_t n)
{
	if (o->space != LS_SP_NONE && o->count == 1)
		return 0;
	snprintf(err, n, "%s: %lld elements, where one is moved", what,
		 (long long)o->count);
	return -1;
}

int ls_tload_exec(ls_machine *mc, int c, int eng, const ls_sinst *si,
		  char *err, size_t n)
{
	const ls_rinst *R = si->reg;
	const ls_opnd *o = &si->ins[0];
	uint8_t raw[8];
	uint32_t w[2];
	const uint8_t *bad;
	ls_view v;
	if (si->fault) {
		snprintf(err, n, "%s", si->fault);
		return -1;
	}
	if (one_element(o, "ins[0]", err, n))
		return -1;
	ls_bind(mc, c, o, &v);
	if ((bad = ls_gather_raw(&v, raw, si->can_read_uninit)) != NULL) {
		char where[300];
		ls_describe_byte(mc, c, o, bad, where, sizeof where);
		snprintf(err, n, "reads uninitialized memory: ins[0] %s was "
			 "never written (can_read_uninit is not set)", where);
		return -1;
	}
	memcpy(w, raw, (size_t)R->n_src * sizeof *w);
	for (int i = 0; i < R->n_src; i++)
		ls_reg_set(mc, c, eng, R->src[i].slot, w[i], si);
	return 0;
}

int ls_tsave_stage(ls_machine *mc, int c, int eng, const ls_sinst *si,
		   ls_pending *p, char *err, size_t n)
{
	const ls_rinst *R = si->reg;
	const ls_opnd *o = &si->outs[0];
	uint32_t w[2];
	if (si->fault) {
		snprintf(err, n, "%s", si->fault);
		return -1;
	}
	if (one_element(o, "outs[0]", err, n))
		return -1;
	for (int i = 0; i < R->n_src; i++) {
		char what[300];
		if (ls_reg_read(mc, c, eng, R->src[i].slot, &w[i]) == 0)
			continue;
		ls_reg_unwritten(mc, c, eng, R->src[i].slot, what,
				 sizeof what);
		snprintf(err, n, "ins[%d] reads %s", i, what);
		return -1;
	}
	if (p->cap < sizeof w) {
		free(p->buf);
		p->buf = lm_xmalloc(sizeof w);
		p->cap = sizeof w;
	}
	p->dsto = *o;
	ls_bind(mc, c, &p->dsto, &p->dst);
	memcpy(p->buf, w, (size_t)R->n_src * sizeof *w);
	p->is_deferred = 0;
	p->active = 1;
	return 0;
}

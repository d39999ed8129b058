/*
** optable.h -- the BIR instruction set as data. ops.def has one row per
** InstructionType (110, ordinals 0..109) and fields.def one row per
** op-specific JSON key of a field group; this header gives their columns
** a meaning: the engine bits, the op and field flags, the op families,
** the field types, and the InstructionType enum generated from ops.def.
**
** A consumer defines LM_OPDEF or LM_FIELD and includes the .def file;
** see the comments at the top of each for the columns.
*/
#ifndef LNCSIM_OPTABLE_H
#define LNCSIM_OPTABLE_H

/*
** Engine bits (the ENGINES column). Bit n-1 is engine n of lm_engine in
** arch.h (PE = 1 ... DMA = 6). 0 means not bound to one engine.
*/
#define LM_EB_PE   0x01u
#define LM_EB_ACT  0x02u
#define LM_EB_DVE  0x04u
#define LM_EB_POOL 0x08u
#define LM_EB_SP   0x10u
#define LM_EB_DMA  0x20u

/* Op flags (the FLAGS column of ops.def). */
#define LM_OPF_NONE    0x00u
#define LM_OPF_BASE    0x01u /* abstract base, never instantiated */
#define LM_OPF_LOWERED 0x02u /* rewritten away before encoding */
#define LM_OPF_DMA     0x04u /* a DMA-queue op */
#define LM_OPF_CONTROL 0x08u /* terminator, branch, call, loop */
#define LM_OPF_SYNC    0x10u /* queue / semaphore op */
#define LM_OPF_KERNEL  0x20u /* kernel or custom-op carrier */
#define LM_OPF_BLOCKS  0x40u /* holds nested basic blocks */
#define LM_OPF_ONCHIP  0x80u /* a compute engine reads and writes its
				tensor operands: SBUF and PSUM only */

/* Field flags (the FLAGS column of fields.def). */
#define LM_FF_NONE      0x00u
#define LM_FF_REQ       0x01u /* the reader requires the key */
#define LM_FF_ALWAYS    0x02u /* written even at its default */
#define LM_FF_WRITEONLY 0x04u /* the op's reader skips it; written */
#define LM_FF_NEED      0x08u /* lncsim requires it on the opcodes it
				 models, where the compiler's reader is
				 not known to */

/*
** What a reference key names (the REF column of fields.def): NONE, a
** module queue, a queue instance (of the instruction's queue when it
** names one), a function of the module, a block of the instruction's
** function (at any depth), an instruction of that function, a DMABlock
** instruction, an allocation of the module, a register (an allocation
** with a REG memory location). A KV key's values are the references.
*/
#define LM_REFKIND_LIST(X)                                                  \
	X(NONE) X(QUEUE) X(QINST) X(FUNC) X(BLOCK) X(INST) X(DMABLOCK)      \
	X(ALLOC) X(REG)

typedef enum lm_refkind {
#define LM_X_(r) LM_REF_##r,
	LM_REFKIND_LIST(LM_X_)
#undef LM_X_
	LM_REF_COUNT
} lm_refkind;

/* The op families (the FAMILY column), in this order. */
#define LM_OPFAMILY_LIST(X)                                                 \
	X(MATMUL) X(ACT) X(COPY) X(DMA) X(COLL) X(INDIRECT) X(CONTROL)      \
	X(SYNC) X(KERNEL) X(MISC)

typedef enum lm_opfamily {
#define LM_X_(f) LM_FAM_##f,
	LM_OPFAMILY_LIST(LM_X_)
#undef LM_X_
	LM_FAM_COUNT
} lm_opfamily;

/* The field types (the TYPE column), in this order. */
#define LM_FIELDTYPE_LIST(X)                                                \
	X(BOOL) X(INT) X(UINT) X(FLOAT) X(STR) X(ENUM)                      \
	X(MA_BOOL) X(MA_INT) X(MA_UINT) X(MA_INT_PAIR) X(AFFINE)            \
	X(APPAIRS) X(INT_LIST) X(FLOAT_LIST) X(INT_LIST_LIST)               \
	X(MA_UINT_LIST) X(ENUM_LIST) X(STR_LIST) X(NAME) X(NAME_LIST)       \
	X(KV) X(RECORD) X(JSON)

typedef enum lm_fieldtype {
#define LM_X_(t) LM_FT_##t,
	LM_FIELDTYPE_LIST(LM_X_)
#undef LM_X_
	LM_FT_COUNT
} lm_fieldtype;

/* The InstructionType ordinals: LM_IT_Matmult == 8, ... */
typedef enum lm_itype {
#define LM_OPDEF(ord, name, fam, eng, flags, g1, g2, nin, nout) \
	LM_IT_##name = (ord),
#include "ops.def"
#undef LM_OPDEF
	LM_IT_COUNT /* one past the last row: 110 */
} lm_itype;

/* ---- lookups (optable.c) ------------------------------------------------ */

#include <stdint.h>

/* One op-specific key of an opcode. enumtype: the enum of ENUM /
** ENUM_LIST values (enumtab.h; 0, LM_ET_NONE, otherwise). */
typedef struct lm_field {
	const char *key;
	lm_fieldtype type;
	int enumtype;
	int64_t deflt;
	unsigned flags;        /* LM_FF_* */
	lm_refkind ref;        /* what a name value names (LM_REF_NONE) */
} lm_field;

typedef struct lm_opinfo {
	int it;                /* InstructionType ordinal */
	const char *name;      /* the "opcode" spelling */
	lm_opfamily family;
	unsigned engines;      /* LM_EB_* (0: any) */
	unsigned flags;        /* LM_OPF_* */
	int n_ins, n_outs;     /* operand counts the verifier requires (-1:
				  not checked) */
	int n_fields;
	const lm_field *const *fields; /* sorted by key */
} lm_opinfo;

/* The row of ordinal it (NULL outside 0..LM_IT_COUNT-1). */
const lm_opinfo *lm_op_info(int it);
/* "Matmult" -> its ordinal; -1 for a name that is no InstructionType. */
int lm_it_parse(const char *name);
/* The key's row for opcode it; NULL when the opcode has no such key. */
const lm_field *lm_op_field(int it, const char *key);
/* The family's name ("MATMUL", ...), the field type's ("MA_UINT", ...),
** the reference kind's ("QUEUE", ...). */
const char *lm_opfamily_name(lm_opfamily f);
const char *lm_fieldtype_name(lm_fieldtype t);
const char *lm_refkind_name(lm_refkind r);
/* 1 when a missing key of row f reads as a value (its default), which
** the writer can write back; 0 for the types with no such value (names,
** strings, records, affine expressions, any JSON). */
int lm_field_has_default(const lm_field *f);
/* 1 when row f is required on read: REQ, or NEED on an opcode lncsim
** models (modelled: one with an lm_opcode of its own, not carried). */
int lm_field_required(const lm_field *f, int modelled);

#endif

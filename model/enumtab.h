/*
** enumtab.h -- lookup of the BIR JSON enum spellings in model/enums.def.
**
** Each enum type of the wire form has a set of (ordinal, spelling) rows.
** The first row of an ordinal is its canonical spelling (what a writer
** emits); later rows with that ordinal are spellings accepted on read.
** Lookups are case-sensitive, thread-safe and allocate nothing; the tables
** are static. docs/enums.md says where the spellings come from.
*/
#ifndef LNCSIM_ENUMTAB_H
#define LNCSIM_ENUMTAB_H

#include <stddef.h>
#include <stdint.h>

/* One enumerator per LM_ENUMT line of enums.def: LM_ET_EngineType, ... */
typedef enum lm_enumtype {
	LM_ET_NONE = 0,
#define LM_ENUMT(T, dflt) LM_ET_##T,
#define LM_ENUMV(T, ord, s)
#include "enums.def"
#undef LM_ENUMT
#undef LM_ENUMV
	LM_ET_COUNT
} lm_enumtype;

/*
** Ordinals from here up are lncsim's own, for spellings that older modules
** use and the neuronx-cc 2.24 compiler has no value for.
*/
#define LM_ENUM_LNCSIM_BASE 1000

/* The BIR type name ("EngineType"); "" for LM_ET_NONE or out of range. */
const char *lm_enumtype_name(lm_enumtype t);

/* Spelling s of type t -> *ord. 0 ok; -1 when s (or t) is unknown. */
int lm_enum_parse(lm_enumtype t, const char *s, int64_t *ord);

/* The canonical spelling of ord, or NULL when t has no such ordinal. */
const char *lm_enum_name(lm_enumtype t, int64_t ord);

/* What a field of type t reads as when its key is absent (0 for NONE). */
int64_t lm_enum_default(lm_enumtype t);

/*
** For error messages: every spelling t accepts, in table order, joined by
** ", " into buf (n bytes). What does not fit becomes ", ..." ("..." when
** not even the first spelling fits, "" when n < 4). Returns buf.
*/
const char *lm_enum_spellings(lm_enumtype t, char *buf, size_t n);

/*
** The rows of t in table order, for iteration: lm_enum_count rows; row i
** (0 <= i < count) has spelling lm_enum_row(t, i, &ord) and ordinal ord.
** lm_enum_row returns NULL for i out of range.
*/
int lm_enum_count(lm_enumtype t);
const char *lm_enum_row(lm_enumtype t, int i, int64_t *ord);

#endif

/*
** klr.h -- KLR kernel files (on-disk version 0.0.12, docs/klr.md):
** a hand-written CBOR reader and writer for the subset of KLR that the
** kernel provision lowers, and the JSON rendering used by `lncsim klr
** dump` / `lncsim klr pack` (docs/klr.md).
**
** A decoded KLR value is a tree of lp_kval nodes. Objects (KLR inductive
** types and structures) keep their type tag, constructor tag and their
** fields in wire order; the schema (klr_schema.c) gives the field names and
** types, so one generic reader, writer, printer and JSON parser serve every
** type of the subset.
**
** Ownership: lp_klr_file and every lp_kval reachable from it belong to the
** caller; free with lp_klr_file_free / lp_kval_free.
*/
#ifndef LNCSIM_KLR_H
#define LNCSIM_KLR_H

#include <stddef.h>
#include <stdint.h>
#include "common.h"

/* Type tags (KLR's serde tags) the code refers to by name. */
enum {
	LP_T_POS = 100, LP_T_STMT = 103, LP_T_BLOCK = 104, LP_T_KERNEL = 105,
	LP_T_SHAREDCONST = 106, LP_T_EDGES = 107, LP_T_LNCKERNEL = 108,
	LP_T_MEMORY = 110, LP_T_DTYPE = 111, LP_T_SHAPE = 112,
	LP_T_ADDRESS = 113, LP_T_TENSORNAME = 114, LP_T_SLICE = 115,
	LP_T_INDEX = 117, LP_T_ACCESSBASIC = 118, LP_T_APPAIR = 119,
	LP_T_ACCESSPATTERN = 120, LP_T_SCALAROFFSET = 123,
	LP_T_BIRAP = 124, LP_T_ACCESS = 125, LP_T_TENSORHBM = 126,
	LP_T_TENSORSRAM = 127, LP_T_TENSORREF = 128, LP_T_PERFMODE = 129,
	LP_T_ENGINE = 130, LP_T_IMMEDIATE = 131, LP_T_OPERAND = 133,
	LP_T_DATAPATTERN = 134, LP_T_ALUOP = 135, LP_T_ACCUMCMD = 137,
	LP_T_ACTFUNC = 138, LP_T_OPERATOR = 218, LP_T_METADATA = 235,
	LP_T_CONTENTS = 236, LP_T_OPTION = 255
};

/* Contents constructors (wire tags, 0-based). */
enum { LP_CONTENTS_PYTHON = 0, LP_CONTENTS_NKI = 1, LP_CONTENTS_KERNEL = 2,
       LP_CONTENTS_LNC = 3, LP_CONTENTS_HLO = 4 };

/* The version this reader accepts and the writer writes by default. */
enum { LP_KLR_MAJOR = 0, LP_KLR_MINOR = 0, LP_KLR_PATCH = 12 };

typedef enum lp_kkind {
	LP_KV_NAT,    /* u */
	LP_KV_INT,    /* i */
	LP_KV_BOOL,   /* b */
	LP_KV_STR,    /* s */
	LP_KV_F32,    /* fbits: the IEEE-754 binary32 bits */
	LP_KV_LIST,   /* items[0..n) */
	LP_KV_OPTION, /* n == 0: none; n == 1: some items[0] */
	LP_KV_OBJ     /* type_tag, ctor, items[0..n) = fields in wire order */
} lp_kkind;

typedef struct lp_kval {
	lp_kkind kind;
	uint64_t u;
	int64_t i;
	int b;
	uint32_t fbits;
	char *s;
	int type_tag, ctor;
	int n;
	struct lp_kval *items;
} lp_kval;

void lp_kval_clear(lp_kval *v);  /* frees the contents, not v itself */
void lp_kval_free(lp_kval *v);   /* clear + free(v) */
/*
** Fill v with the neutral value of a field of type (schema type string)
** named fname of record tname: none, [], 0, false (addressRotation:
** true), a record of such values; Address.name is tensor when tensor is
** not NULL. 0, or -1 when the type has none (v left empty).
*/
int lp_kval_default(const char *type, const char *tname, const char *fname,
		    const char *tensor, lp_kval *v);

/* A whole KLR file: header version, metadata format, contents. */
typedef struct lp_klr_file {
	uint64_t version[3];   /* major, minor, patch */
	char *format;          /* KLRMetaData.format ("NKI") */
	lp_kval contents;      /* a Contents object (type 236) */
	/*
	 * The schema generation the file was read in (lp_klr_gens[i]->name;
	 * NULL for a file built in memory or from JSON: the current one).
	 */
	const char *generation;
} lp_klr_file;

void lp_klr_file_free(lp_klr_file *f);

/* ---- schema ----------------------------------------------------------- */

/*
** Field types are short strings: "n" Nat, "i" Int, "b" Bool, "s" String,
** "f" Float32, "[X" List X, "?X" Option X, "T<tag>" the object type <tag>.
*/
typedef struct lp_kfield {
	const char *name;
	const char *type;
} lp_kfield;

typedef struct lp_kctor {
	int tag;               /* wire constructor tag */
	const char *name;
	int n_fields;          /* -1: payload not in the subset */
	const lp_kfield *fields;
	int wire_count;        /* count in the array header (proof fields) */
	/*
	 * Another wire layout of the same constructor, told apart by the
	 * header count (a field that one generation of the KLR schema
	 * carried); NULL for most constructors.
	 */
	const struct lp_kctor *alt;
} lp_kctor;

typedef struct lp_ktype {
	int tag;
	const char *name;
	int n_ctors;
	const lp_kctor *ctors;
} lp_ktype;

/* The schema entry of a type tag; NULL when the type is not in the subset. */
const lp_ktype *lp_klr_type(int tag);
/* The constructor of a type by wire tag or by name; NULL when unknown. */
const lp_kctor *lp_klr_ctor(const lp_ktype *t, int ctor);
const lp_kctor *lp_klr_ctor_by_name(const lp_ktype *t, const char *name);
/*
** The layout of constructor c with `wire_count` fields in its header (c or
** c->alt); c itself when neither matches (the caller reports the count).
*/
const lp_kctor *lp_klr_layout_for_count(const lp_kctor *c, int wire_count);
/* The layout of c whose field count is n (an object's items). */
const lp_kctor *lp_klr_layout_for_n(const lp_kctor *c, int n);
/* 1 when the type has exactly one constructor (rendered as a structure). */
int lp_klr_is_struct(const lp_ktype *t);
/* Field of an object by name (NULL when the object has no such field). */
lp_kval *lp_kval_field(const lp_kval *obj, const char *name);
/* Name of an object's constructor ("?" when unknown). */
const char *lp_kval_ctor_name(const lp_kval *obj);

/* ---- schema generations (klr_gen.c, docs/klr.md) ---------------------- */

/*
** A type of an older generation: wire tag `tag` is read with schema type t
** (NULL: the current type `cur`) and converted into the current type `cur`
** (0: the same tag).
*/
typedef struct lp_kgtype {
	int tag, cur;
	const lp_ktype *t;
} lp_kgtype;

/*
** One generation of KLR 0.0.12 record shapes: the types whose shape differs
** from its base (the next newer generation; the current schema when base
** is NULL and own is 0). own: the generation has a numbering of its own and
** reads no type it does not list.
*/
typedef struct lp_kgen {
	const char *name;      /* "2025-07-21b": the commit date it starts */
	const char *commits;   /* KLR commit range */
	const char *differs;   /* what differs from the next newer one */
	int n_types;
	const lp_kgtype *types;
	const struct lp_kgen *base;
	int own;
} lp_kgen;

/* The generations the reader knows, newest (the current one) first. */
extern const lp_kgen *const lp_klr_gens[];
extern const int lp_klr_n_gens;
/* Type read for wire tag `tag` in g (NULL: none); *cur gets its current tag. */
const lp_ktype *lp_klr_gen_type(const lp_kgen *g, int tag, int *cur);
/* The type of g that reads into the current type tag `cur` (NULL: none). */
const lp_ktype *lp_klr_gen_type_cur(const lp_kgen *g, int cur);
/* Rewrite a Contents value decoded in g into the current in-memory form. */
int lp_klr_gen_convert(const lp_kgen *g, lp_kval *contents, const char *path,
		       lm_error *err);

/* ---- CBOR ------------------------------------------------------------- */

/*
** Decode a whole .klr file from memory. `path` names the file in messages.
** Errors (LM_EINPUT): "not a KLR file", "Wrong KLR version", "Wrong KLIR
** content type" (Python / NKI AST payloads), truncated or malformed CBOR,
** unknown tags, trailing bytes -- each with the byte offset.
*/
int lp_klr_decode_file(lp_klr_file *out, const uint8_t *p, size_t n,
		       const char *path, lm_error *err);
/* Read a file ("fail to locate KLIR artifact" when it cannot be opened). */
int lp_klr_read(lp_klr_file *out, const char *path, lm_error *err);
/*
** Decode ONE value of field type `type` (e.g. "T134", "i") that must span
** the whole buffer. For tests of fragments. *out is caller-owned.
*/
int lp_klr_decode_value(lp_kval **out, const char *type, const uint8_t *p,
			size_t n, lm_error *err);

/* Encode a file / one value (shortest forms, exact header counts). */
int lp_klr_encode_file(const lp_klr_file *f, lm_buf *out, lm_error *err);
int lp_klr_encode_value(const lp_kval *v, const char *type, lm_buf *out,
			lm_error *err);

/* ---- JSON rendering (docs/klr.md) ------------------------------------- */

/* Render a file as pretty-printed JSON text (appended to out). */
void lp_klr_to_json(const lp_klr_file *f, lm_buf *out);
/* Parse the JSON rendering. `path` names the text in messages. */
int lp_klr_from_json(lp_klr_file *out, const char *text, size_t len,
		     const char *path, lm_error *err);

#endif

/*
** klr.h -- KLR kernel files (formats/KLR-CBOR.md, on-disk version 0.0.12):
** a hand-written CBOR reader and writer for the subset of KLR that the
** kernel provision lowers, and the JSON rendering used by `lncsim klr
** dump` / `lncsim klr pack` (docs/klr.md).
**
** A decoded KLR value is a tree of lk_kval nodes. Objects (KLR inductive
** types and structures) keep their type tag, constructor tag and their
** fields in wire order; the schema (klr_schema.c) gives the field names and
** types, so one generic reader, writer, printer and JSON parser serve every
** type of the subset.
**
** Ownership: lk_klr_file and every lk_kval reachable from it belong to the
** caller; free with lk_klr_file_free / lk_kval_free.
*/
#ifndef LNCSIM_KLR_H
#define LNCSIM_KLR_H

#include <stddef.h>
#include <stdint.h>
#include "common.h"

/* Type tags (KLR-CBOR.md section 4) the code refers to by name. */
enum {
	LK_T_POS = 100, LK_T_STMT = 103, LK_T_BLOCK = 104, LK_T_KERNEL = 105,
	LK_T_SHAREDCONST = 106, LK_T_EDGES = 107, LK_T_LNCKERNEL = 108,
	LK_T_MEMORY = 110, LK_T_DTYPE = 111, LK_T_SHAPE = 112,
	LK_T_ADDRESS = 113, LK_T_TENSORNAME = 114, LK_T_SLICE = 115,
	LK_T_INDEX = 117, LK_T_ACCESSBASIC = 118, LK_T_APPAIR = 119,
	LK_T_ACCESSPATTERN = 120, LK_T_SCALAROFFSET = 123,
	LK_T_BIRAP = 124, LK_T_ACCESS = 125, LK_T_TENSORHBM = 126,
	LK_T_TENSORSRAM = 127, LK_T_TENSORREF = 128, LK_T_PERFMODE = 129,
	LK_T_ENGINE = 130, LK_T_IMMEDIATE = 131, LK_T_OPERAND = 133,
	LK_T_DATAPATTERN = 134, LK_T_ALUOP = 135, LK_T_ACCUMCMD = 137,
	LK_T_ACTFUNC = 138, LK_T_OPERATOR = 218, LK_T_METADATA = 235,
	LK_T_CONTENTS = 236, LK_T_OPTION = 255
};

/* Contents constructors (wire tags, 0-based). */
enum { LK_CONTENTS_PYTHON = 0, LK_CONTENTS_NKI = 1, LK_CONTENTS_KERNEL = 2,
       LK_CONTENTS_LNC = 3, LK_CONTENTS_HLO = 4 };

/* The version this reader accepts and the writer writes by default. */
enum { LK_KLR_MAJOR = 0, LK_KLR_MINOR = 0, LK_KLR_PATCH = 12 };

typedef enum lk_kkind {
	LK_KV_NAT,    /* u */
	LK_KV_INT,    /* i */
	LK_KV_BOOL,   /* b */
	LK_KV_STR,    /* s */
	LK_KV_F32,    /* fbits: the IEEE-754 binary32 bits */
	LK_KV_LIST,   /* items[0..n) */
	LK_KV_OPTION, /* n == 0: none; n == 1: some items[0] */
	LK_KV_OBJ     /* type_tag, ctor, items[0..n) = fields in wire order */
} lk_kkind;

typedef struct lk_kval {
	lk_kkind kind;
	uint64_t u;
	int64_t i;
	int b;
	uint32_t fbits;
	char *s;
	int type_tag, ctor;
	int n;
	struct lk_kval *items;
} lk_kval;

void lk_kval_clear(lk_kval *v);  /* frees the contents, not v itself */
void lk_kval_free(lk_kval *v);   /* clear + free(v) */

/* A whole KLR file: header version, metadata format, contents. */
typedef struct lk_klr_file {
	uint64_t version[3];   /* major, minor, patch */
	char *format;          /* KLRMetaData.format ("NKI") */
	lk_kval contents;      /* a Contents object (type 236) */
} lk_klr_file;

void lk_klr_file_free(lk_klr_file *f);

/* ---- schema ----------------------------------------------------------- */

/*
** Field types are short strings: "n" Nat, "i" Int, "b" Bool, "s" String,
** "f" Float32, "[X" List X, "?X" Option X, "T<tag>" the object type <tag>.
*/
typedef struct lk_kfield {
	const char *name;
	const char *type;
} lk_kfield;

typedef struct lk_kctor {
	int tag;               /* wire constructor tag */
	const char *name;
	int n_fields;          /* -1: payload not in the subset */
	const lk_kfield *fields;
	int wire_count;        /* count in the array header (proof fields) */
	/*
	 * Another wire layout of the same constructor, told apart by the
	 * header count (a field that one generation of the KLR schema
	 * carried); NULL for most constructors.
	 */
	const struct lk_kctor *alt;
} lk_kctor;

typedef struct lk_ktype {
	int tag;
	const char *name;
	int n_ctors;
	const lk_kctor *ctors;
} lk_ktype;

/* The schema entry of a type tag; NULL when the type is not in the subset. */
const lk_ktype *lk_klr_type(int tag);
/* The constructor of a type by wire tag or by name; NULL when unknown. */
const lk_kctor *lk_klr_ctor(const lk_ktype *t, int ctor);
const lk_kctor *lk_klr_ctor_by_name(const lk_ktype *t, const char *name);
/*
** The layout of constructor c with `wire_count` fields in its header (c or
** c->alt); c itself when neither matches (the caller reports the count).
*/
const lk_kctor *lk_klr_layout_for_count(const lk_kctor *c, int wire_count);
/* The layout of c whose field count is n (an object's items). */
const lk_kctor *lk_klr_layout_for_n(const lk_kctor *c, int n);
/* 1 when the type has exactly one constructor (rendered as a structure). */
int lk_klr_is_struct(const lk_ktype *t);
/* Field of an object by name (NULL when the object has no such field). */
lk_kval *lk_kval_field(const lk_kval *obj, const char *name);
/* Name of an object's constructor ("?" when unknown). */
const char *lk_kval_ctor_name(const lk_kval *obj);

/* ---- CBOR ------------------------------------------------------------- */

/*
** Decode a whole .klr file from memory. `path` names the file in messages.
** Errors (LM_EINPUT): "not a KLR file", "Wrong KLR version", "Wrong KLIR
** content type" (Python / NKI AST payloads), truncated or malformed CBOR,
** unknown tags, trailing bytes -- each with the byte offset.
*/
int lk_klr_decode_file(lk_klr_file *out, const uint8_t *p, size_t n,
		       const char *path, lm_error *err);
/* Read a file ("fail to locate KLIR artifact" when it cannot be opened). */
int lk_klr_read(lk_klr_file *out, const char *path, lm_error *err);
/*
** Decode ONE value of field type `type` (e.g. "T134", "i") that must span
** the whole buffer. For tests of fragments. *out is caller-owned.
*/
int lk_klr_decode_value(lk_kval **out, const char *type, const uint8_t *p,
			size_t n, lm_error *err);

/* Encode a file / one value (shortest forms, exact header counts). */
int lk_klr_encode_file(const lk_klr_file *f, lm_buf *out, lm_error *err);
int lk_klr_encode_value(const lk_kval *v, const char *type, lm_buf *out,
			lm_error *err);

/* ---- JSON rendering (docs/klr.md) ------------------------------------- */

/* Render a file as pretty-printed JSON text (appended to out). */
void lk_klr_to_json(const lk_klr_file *f, lm_buf *out);
/* Parse the JSON rendering. `path` names the text in messages. */
int lk_klr_from_json(lk_klr_file *out, const char *text, size_t len,
		     const char *path, lm_error *err);

#endif

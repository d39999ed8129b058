/*
** test_klrgen.c -- the KLR 0.0.12 schema generations (docs/klr.md, "Schema
** generations"): files whose records have the shapes of an older
** generation, written here field by field from the documented table, are
** read into the current form and say their generation; a record of no
** known shape is an error naming it, its offset and the counts expected
** per generation; writing is always current.
*/
#include "common.h"
#include "testutil.h"
#include "klr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small CBOR writer for the records of the table ------------------- */

static void hd(lm_buf *b, int major, uint64_t v)
{
	uint8_t t[9];
	int n = 1;
	if (v < 24) {
		t[0] = (uint8_t)(major << 5 | (int)v);
	} else if (v <= 0xff) {
		t[0] = (uint8_t)(major << 5 | 24);
		t[n++] = (uint8_t)v;
	} else if (v <= 0xffff) {
		t[0] = (uint8_t)(major << 5 | 25);
		t[n++] = (uint8_t)(v >> 8);
		t[n++] = (uint8_t)v;
	} else {
		t[0] = (uint8_t)(major << 5 | 26);
		for (int i = 3; i >= 0; i--)
			t[n++] = (uint8_t)(v >> (8 * i));
	}
	lm_buf_put(b, t, (size_t)n);
}

static void obj(lm_buf *b, int type, int ctor, int count)
{
	uint8_t t[4] = { 0xd9, (uint8_t)type, (uint8_t)ctor,
			 (uint8_t)(0x80 | count) };
	lm_buf_put(b, t, 4);
}

static void str(lm_buf *b, const char *s)
{
	hd(b, 3, strlen(s));
	lm_buf_put(b, s, strlen(s));
}

static void nat(lm_buf *b, uint64_t v) { hd(b, 0, v); }
static void none(lm_buf *b) { obj(b, 255, 0, 0); }
static void flag(lm_buf *b, int v) { lm_buf_put(b, v ? "\xf5" : "\xf4", 1); }

static void prologue(lm_buf *b)
{
	lm_buf_put(b, "\xd9\xd9\xf7\x83\x00\x00\x0c", 7);
	obj(b, 235, 0, 1);
	str(b, "NKI");
}

/*
** July 2025 (2025-07-21a / b): TensorName (Lean TensorSram, tag 114) with
** `count` in its header and five items; Address (113) memory, parSize,
** freeSize, parOffset, freeOffset; Shape 128 x [512] float32.
*/
static void j_tensor(lm_buf *b, const char *name, int count, int memory)
{
	obj(b, 114, 0, count);
	str(b, name);
	obj(b, 111, 5, 0);
	obj(b, 112, 0, 2);
	nat(b, 128);
	hd(b, 4, 1);
	nat(b, 512);
	obj(b, 113, 0, 5);
	obj(b, 110, memory, 0);
	nat(b, 128);
	nat(b, 2048);
	none(b);
	none(b);
	nat(b, 512);
}

/* TensorRef (124) abstract of Access (120) simple. */
static void j_ref(lm_buf *b, const char *name, int count, int memory)
{
	obj(b, 124, 0, 1);
	obj(b, 120, 0, 1);
	j_tensor(b, name, count, memory);
}

/*
** A July kernel: inputs [a], outputs [o] (header counts cin / cout), a
** body of three Stmt.oper (104, constructor 3) of Operator (173):
** dmaCopy (6, DmaCopy 148), activate (0, Activate 146), copy (4, Copy
** 169). *at_out: the offset of the output TensorName.
*/
static void july(lm_buf *b, int cin, int cout, size_t *at_out)
{
	int c = cin;
	prologue(b);
	obj(b, 236, 2, 1);
	obj(b, 105, 0, 4);
	str(b, "k");
	hd(b, 4, 1);
	j_tensor(b, "a", cin, 0);
	hd(b, 4, 1);
	if (at_out)
		*at_out = b->size;
	j_tensor(b, "o", cout, 0);
	hd(b, 4, 3);
	/* dmaCopy: compute_op none, dstBoundsCheck disable, srcBoundsCheck enable */
	obj(b, 104, 3, 1);
	obj(b, 173, 6, 1);
	obj(b, 148, 0, 5);
	j_ref(b, "t", c, 1);
	j_ref(b, "a", c, 0);
	obj(b, 139, 0, 0);
	obj(b, 140, 0, 0);
	obj(b, 140, 1, 0);
	/* activate exp, scale 1.0, bias 0, imm 0, into a pmem tile */
	obj(b, 104, 3, 1);
	obj(b, 173, 0, 1);
	obj(b, 146, 0, 7);
	j_ref(b, "p", c, 2);
	j_ref(b, "t", c, 1);
	obj(b, 136, 0, 0);
	obj(b, 137, 5, 0);
	obj(b, 131, 3, 1);
	lm_buf_put(b, "\xfa\x3f\x80\x00\x00", 5);
	obj(b, 131, 3, 1);
	lm_buf_put(b, "\xfa\x00\x00\x00\x00", 5);
	obj(b, 131, 2, 1);
	nat(b, 7);
	/* copy with opDim some XY */
	obj(b, 104, 3, 1);
	obj(b, 173, 4, 1);
	obj(b, 169, 0, 3);
	j_ref(b, "o", c, 0);
	j_ref(b, "p", c, 2);
	obj(b, 255, 1, 1);
	obj(b, 144, 1, 0);
}

/* ---- the current numbering, with the shapes of 2025-11-21 .. 2026-03-25 -- */

static void c_tensor_dt(lm_buf *b, const char *name, int dtype)
{
	obj(b, 114, 0, 8);
	str(b, name);
	obj(b, 111, dtype, 0);
	obj(b, 112, 0, 2);
	nat(b, 128);
	hd(b, 4, 1);
	nat(b, 512);
	obj(b, 113, 0, 7);
	str(b, name);
	obj(b, 110, 1, 0);
	nat(b, 128);
	nat(b, 2048);
	none(b);
	none(b);
	flag(b, 0);
	nat(b, 512);
	flag(b, 1);
}

static void c_tensor(lm_buf *b, const char *name)
{
	c_tensor_dt(b, name, 5);
}

/*
** TensorRef abstract of Access birPattern: BirAccessPattern of 6 fields
** (2025-11-21: no dtypeOverride) over a tensor of Dtype constructor 15
** (float8_e4m3fn before 2025-12-04).
*/
static void c_bir6(lm_buf *b, const char *name)
{
	obj(b, 128, 0, 1);
	obj(b, 125, 3, 1);
	obj(b, 124, 0, 6);
	c_tensor_dt(b, name, 15);
	nat(b, 0);
	hd(b, 4, 2);
	obj(b, 119, 0, 3);
	nat(b, 512);
	nat(b, 128);
	nat(b, 0);
	obj(b, 119, 0, 3);
	nat(b, 1);
	nat(b, 512);
	nat(b, 0);
	none(b);
	none(b);
	nat(b, 0);
}

static void c_ref(lm_buf *b, const char *name)
{
	obj(b, 128, 0, 1);
	obj(b, 125, 0, 1);
	c_tensor(b, name);
}

/* The operators (Operator 218) the cases use. */
enum { OP_DMA7, OP_DMA8, OP_BARRIER59, OP_MATMUL3, OP_DMAT5, OP_DMA7_BIR6,
       OP_DMA7_F15, OP_REDUCE };

static void c_op(lm_buf *b, int op)
{
	switch (op) {
	case OP_DMA7:   /* NcDmaCopy without priority */
	case OP_DMA8:
	case OP_DMA7_BIR6:
	case OP_DMA7_F15:
		obj(b, 218, 11, 1);
		obj(b, 153, 0, op == OP_DMA8 ? 8 : 7);
		if (op == OP_DMA7_BIR6) {
			c_bir6(b, "t");
		} else if (op == OP_DMA7_F15) {
			/* a whole tensor of Dtype constructor 15 */
			obj(b, 128, 0, 1);
			obj(b, 125, 0, 1);
			c_tensor_dt(b, "t", 15);
		} else {
			c_ref(b, "t");
		}
		c_ref(b, "u");
		obj(b, 140, 0, 0);
		obj(b, 141, 1, 0);
		nat(b, 0);
		flag(b, 0);
		if (op == OP_DMA8)
			none(b);
		obj(b, 130, 2, 0);
		break;
	case OP_BARRIER59:   /* coreBarrier before the renumbering */
		obj(b, 218, 59, 1);
		obj(b, 201, 0, 3);
		c_ref(b, "t");
		hd(b, 4, 2);
		nat(b, 0);
		nat(b, 1);
		obj(b, 130, 5, 0);
		break;
	case OP_MATMUL3:   /* MatMul with psumAccumulateFlag whole */
		obj(b, 218, 20, 1);
		obj(b, 161, 0, 3);
		c_ref(b, "t");
		c_ref(b, "u");
		obj(b, 142, 3, 0);
		break;
	case OP_REDUCE:   /* tensorReduce add X, negated, keepdims false */
		obj(b, 218, 32, 1);
		obj(b, 179, 0, 7);
		c_ref(b, "t");
		c_ref(b, "u");
		obj(b, 135, 1, 0);
		obj(b, 145, 0, 0);
		flag(b, 1);
		none(b);
		flag(b, 0);
		break;
	case OP_DMAT5:   /* DmaTranspose without oobMode */
		obj(b, 218, 12, 1);
		obj(b, 154, 0, 5);
		c_ref(b, "t");
		c_ref(b, "u");
		obj(b, 146, 0, 0);
		none(b);
		nat(b, 0);
		break;
	}
}

/* An lnc kernel with LncKernel of `lnc` fields, one Block of `block`
 * fields holding one statement. *at_block: the Block's offset. */
static void late(lm_buf *b, int lnc, int block, int op, size_t *at_block)
{
	prologue(b);
	obj(b, 236, 3, 1);
	obj(b, 108, 0, lnc);
	str(b, "k");
	hd(b, 4, 0);
	hd(b, 4, 0);
	hd(b, 4, 1);
	hd(b, 4, 1);
	if (at_block)
		*at_block = b->size;
	obj(b, 104, 0, block);
	str(b, "b");
	if (block == 3)
		flag(b, 1);
	hd(b, 4, 1);
	obj(b, 103, 0, 3);
	c_op(b, op);
	none(b);
	obj(b, 100, 0, 5);
	nat(b, 1);
	nat(b, 0);
	none(b);
	none(b);
	none(b);
	hd(b, 4, 0);            /* sharedConstants */
	if (lnc == 7)
		hd(b, 4, 0);    /* sharedBuffers */
	hd(b, 4, 0);            /* edges */
}

static void decode_ok(const lm_buf *b, lp_klr_file *f, const char *gen)
{
	lm_error err;
	ck_assert_msg(lp_klr_decode_file(f, (const uint8_t *)b->ptr, b->size,
					 "g.klr", &err) == 0, "%s", err.msg);
	ck_assert_str_eq(f->generation, gen);
}

static void decode_bad(const lm_buf *b, const char *want)
{
	lp_klr_file f;
	lm_error err;
	ck_assert_int_ne(lp_klr_decode_file(&f, (const uint8_t *)b->ptr,
					    b->size, "g.klr", &err), 0);
	ck_assert_contains(err.msg, want);
}

/* 1 when the n bytes of s occur in b */
static int has_bytes(const lm_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i + n <= b->size; i++)
		if (memcmp((const char *)b->ptr + i, s, n) == 0)
			return 1;
	return 0;
}

/* field by name, asserted present */
static lp_kval *fld(const lp_kval *o, const char *name)
{
	lp_kval *v = lp_kval_field(o, name);
	ck_assert_msg(v != NULL, "no field %s", name);
	return v;
}

/* the TensorName under a TensorRef.abstract(Access.simple) */
static lp_kval *ref_tensor(const lp_kval *ref)
{
	ck_assert_int_eq(ref->type_tag, LP_T_TENSORREF);
	ck_assert_int_eq(ref->ctor, 0);
	ck_assert_int_eq(ref->items[0].type_tag, LP_T_ACCESS);
	ck_assert_int_eq(ref->items[0].ctor, 0);
	return &ref->items[0].items[0];
}

/* Re-encode (always current), decode again: current, same tree. */
static void writes_current(lp_klr_file *f)
{
	lm_buf b = LM_BUF_INIT, j1 = LM_BUF_INIT, j2 = LM_BUF_INIT;
	lm_error err;
	lp_klr_file g;
	const char *old = f->generation;
	ck_assert_int_eq(lp_klr_encode_file(f, &b, &err), 0);
	decode_ok(&b, &g, "2026-03-25");
	f->generation = NULL;
	lp_klr_to_json(f, &j1);
	lp_klr_to_json(&g, &j2);
	ck_assert_str_eq(lm_buf_cstr(&j1), lm_buf_cstr(&j2));
	f->generation = old;
	lp_klr_file_free(&g);
	lm_buf_free(&b);
	lm_buf_free(&j1);
	lm_buf_free(&j2);
}

START_TEST(test_july_generations)
{
	for (int k = 0; k < 2; k++) {
		int count = k ? 5 : 7;
		lm_buf b = LM_BUF_INIT, e = LM_BUF_INIT;
		lp_klr_file f;
		lm_error err;
		lp_kval *kern, *blk, *body, *st, *pl, *tn, *ad;
		july(&b, count, count, NULL);
		decode_ok(&b, &f, k ? "2025-07-21a" : "2025-07-21b");
		ck_assert_int_eq(f.contents.ctor, LP_CONTENTS_KERNEL);
		kern = &f.contents.items[0];
		ck_assert_int_eq(kern->type_tag, LP_T_KERNEL);
		tn = &fld(kern, "inputs")->items[0];
		ck_assert_int_eq(tn->type_tag, LP_T_TENSORNAME);
		ck_assert_str_eq(fld(tn, "name")->s, "a");
		ck_assert_int_eq(fld(tn, "freeElements")->u, 512);
		ck_assert_int_eq(fld(tn, "addressRotation")->b, 1);
		ad = fld(tn, "address");
		ck_assert_str_eq(fld(ad, "name")->s, "a");
		ck_assert_int_eq(fld(ad, "isShared")->b, 0);
		ck_assert_int_eq(fld(ad, "freeSize")->u, 2048);
		/* the statement list became one block "main" */
		body = fld(kern, "body");
		ck_assert_int_eq(body->n, 1);
		blk = &body->items[0];
		ck_assert_int_eq(blk->type_tag, LP_T_BLOCK);
		ck_assert_str_eq(fld(blk, "label")->s, "main");
		ck_assert_int_eq(fld(blk, "noReorder")->b, 0);
		ck_assert_int_eq(fld(blk, "body")->n, 3);
		/* dmaCopy: Operator 10, DmaCopy 152, disable/enable = skip/error */
		st = &fld(blk, "body")->items[0];
		ck_assert_int_eq(st->type_tag, LP_T_STMT);
		ck_assert_int_eq(fld(st, "name")->n, 0);
		ck_assert_int_eq(fld(fld(st, "pos"), "line")->u, 0);
		ck_assert_int_eq(fld(st, "op")->ctor, 10);
		pl = &fld(st, "op")->items[0];
		ck_assert_int_eq(pl->type_tag, 152);
		ck_assert_int_eq(fld(pl, "dstBoundsCheck")->ctor, 0);
		ck_assert_int_eq(fld(pl, "srcBoundsCheck")->ctor, 1);
		ck_assert_int_eq(fld(pl, "compute_op")->type_tag, 140);
		ck_assert_str_eq(fld(ref_tensor(fld(pl, "dst")), "name")->s, "t");
		/* activate: Operator 0, Activate 148, exp = ActivationFunc 138/5 */
		st = &fld(blk, "body")->items[1];
		ck_assert_int_eq(fld(st, "op")->ctor, 0);
		pl = &fld(st, "op")->items[0];
		ck_assert_int_eq(pl->type_tag, 148);
		ck_assert_int_eq(fld(pl, "activationFunc")->type_tag, 138);
		ck_assert_int_eq(fld(pl, "activationFunc")->ctor, 5);
		ck_assert_int_eq(fld(pl, "accumulatorCmd")->type_tag, 137);
		ck_assert_uint_eq(fld(pl, "scale")->items[0].fbits, 0x3f800000u);
		ck_assert_int_eq(fld(pl, "imm")->items[0].i, 7);
		tn = ref_tensor(fld(pl, "dst"));
		/* pmem is psum */
		ck_assert_int_eq(fld(fld(tn, "address"), "memory")->ctor, 2);
		/* copy: Operator 7, Copy 177, opDim some XY (TensorSubDim 145) */
		st = &fld(blk, "body")->items[2];
		ck_assert_int_eq(fld(st, "op")->ctor, 7);
		pl = &fld(st, "op")->items[0];
		ck_assert_int_eq(pl->type_tag, 177);
		ck_assert_int_eq(fld(pl, "opDim")->n, 1);
		ck_assert_int_eq(fld(pl, "opDim")->items[0].type_tag, 145);
		ck_assert_int_eq(fld(pl, "opDim")->items[0].ctor, 1);
		/* written in the current generation: TensorName counts 8 */
		writes_current(&f);
		ck_assert_int_eq(lp_klr_encode_file(&f, &e, &err), 0);
		ck_assert(has_bytes(&e, "\xd9\x72\x00\x88", 4));
		ck_assert(!has_bytes(&e, "\xd9\x72\x00\x87", 4));
		ck_assert(has_bytes(&e, "\xd9\x68\x00\x83\x64main", 9));
		lp_klr_file_free(&f);
		lm_buf_free(&e);
		lm_buf_free(&b);
	}
}
END_TEST

START_TEST(test_late_generations)
{
	lm_buf b = LM_BUF_INIT;
	lp_klr_file f;
	lp_kval *lnc, *blk, *st, *pl;

	/* the current shapes */
	late(&b, 7, 3, OP_DMA8, NULL);
	decode_ok(&b, &f, "2026-03-25");
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* 2026-02-28: NcDmaCopy without priority (none) */
	late(&b, 7, 3, OP_DMA7, NULL);
	decode_ok(&b, &f, "2026-02-28");
	lnc = &f.contents.items[0];
	blk = &fld(lnc, "bodies")->items[0].items[0];
	ck_assert_int_eq(fld(blk, "noReorder")->b, 1);
	st = &fld(blk, "body")->items[0];
	pl = &fld(st, "op")->items[0];
	ck_assert_int_eq(pl->type_tag, 153);
	ck_assert_int_eq(pl->n, 8);
	ck_assert_int_eq(fld(pl, "priority")->kind, LP_KV_OPTION);
	ck_assert_int_eq(fld(pl, "priority")->n, 0);
	ck_assert_int_eq(fld(pl, "oobMode")->ctor, 1);
	ck_assert_int_eq(fld(pl, "engine")->ctor, 2);
	writes_current(&f);
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* 2026-01-05: Block without noReorder (false) */
	late(&b, 7, 2, OP_DMA7, NULL);
	decode_ok(&b, &f, "2026-01-05");
	blk = &fld(&f.contents.items[0], "bodies")->items[0].items[0];
	ck_assert_int_eq(blk->n, 3);
	ck_assert_str_eq(fld(blk, "label")->s, "b");
	ck_assert_int_eq(fld(blk, "noReorder")->b, 0);
	writes_current(&f);
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* 2025-12-29: coreBarrier is Operator 59 with CoreBarrier 201 */
	late(&b, 7, 2, OP_BARRIER59, NULL);
	decode_ok(&b, &f, "2025-12-29");
	blk = &fld(&f.contents.items[0], "bodies")->items[0].items[0];
	st = &fld(blk, "body")->items[0];
	ck_assert_int_eq(fld(st, "op")->ctor, 63);
	ck_assert_str_eq(lp_kval_ctor_name(fld(st, "op")), "coreBarrier");
	pl = &fld(st, "op")->items[0];
	ck_assert_int_eq(pl->type_tag, 204);
	ck_assert_int_eq(fld(pl, "cores")->n, 2);
	ck_assert_int_eq(fld(pl, "engine")->ctor, 5);
	writes_current(&f);
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* 2025-12-12: LncKernel without sharedBuffers ([]) */
	late(&b, 6, 2, OP_DMA7, NULL);
	decode_ok(&b, &f, "2025-12-12");
	lnc = &f.contents.items[0];
	ck_assert_int_eq(lnc->n, 7);
	ck_assert_int_eq(fld(lnc, "sharedBuffers")->kind, LP_KV_LIST);
	ck_assert_int_eq(fld(lnc, "sharedBuffers")->n, 0);
	writes_current(&f);
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* 2025-11-21: BirAccessPattern without dtypeOverride (none), and
	 * the Dtype numbering before float8_e4m3: 15 is float8_e4m3fn */
	late(&b, 6, 2, OP_DMA7_BIR6, NULL);
	decode_ok(&b, &f, "2025-11-21");
	blk = &fld(&f.contents.items[0], "bodies")->items[0].items[0];
	pl = &fld(&fld(blk, "body")->items[0], "op")->items[0];
	st = &fld(pl, "dst")->items[0];
	ck_assert_int_eq(st->type_tag, LP_T_ACCESS);
	ck_assert_int_eq(st->ctor, 3);
	st = &st->items[0];
	ck_assert_int_eq(st->type_tag, LP_T_BIRAP);
	ck_assert_int_eq(st->n, 7);
	ck_assert_int_eq(fld(st, "dtypeOverride")->n, 0);
	ck_assert_int_eq(fld(st, "pattern")->n, 2);
	st = fld(fld(st, "tensor"), "dtype");
	ck_assert_int_eq(st->ctor, 16);
	ck_assert_str_eq(lp_kval_ctor_name(st), "float8_e4m3fn");
	writes_current(&f);
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* Dtype constructor 15 in a file that reads as 2025-12-12 (15 =
	 * float8_e4m3) and as 2025-12-03 (15 = float8_e4m3fn): refused */
	late(&b, 6, 2, OP_DMA7_F15, NULL);
	decode_bad(&b, "Dtype constructor 15 is float8_e4m3 in KLR schema "
		   "generation 2025-12-12 and float8_e4m3fn in generation "
		   "2025-12-03, and the file reads in both");
	lm_buf_free(&b);
	/* the same dtype where the shapes say the generation: read */
	late(&b, 7, 3, OP_DMA7_F15, NULL);
	decode_ok(&b, &f, "2026-02-28");
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* the operators lowered since (same constructor and payload then):
	 * tensorReduce in the 2025-12-12 shapes */
	late(&b, 6, 2, OP_REDUCE, NULL);
	decode_ok(&b, &f, "2025-12-12");
	blk = &fld(&f.contents.items[0], "bodies")->items[0].items[0];
	st = fld(&fld(blk, "body")->items[0], "op");
	ck_assert_str_eq(lp_kval_ctor_name(st), "tensorReduce");
	pl = &st->items[0];
	ck_assert_int_eq(pl->type_tag, 179);
	ck_assert_str_eq(lp_kval_ctor_name(fld(pl, "op")), "add");
	ck_assert_int_eq(fld(pl, "negated")->b, 1);
	writes_current(&f);
	lp_klr_file_free(&f);
	lm_buf_free(&b);

	/* refused by name: a field the current schema has no place for, and
	 * a missing field whose absence would change the meaning */
	late(&b, 6, 2, OP_MATMUL3, NULL);
	decode_bad(&b, "MatMul.psumAccumulateFlag of generation 2025-12-04");
	lm_buf_free(&b);
	late(&b, 6, 2, OP_DMAT5, NULL);
	decode_bad(&b, "DmaTranspose of generation 2025-11-26 has no oobMode");
	lm_buf_free(&b);
}
END_TEST

START_TEST(test_no_generation)
{
	lm_buf b = LM_BUF_INIT;
	size_t at;
	char *want;

	/* a 2026-02-28 block in a 2025-12-12 kernel: mixed generations */
	late(&b, 6, 3, OP_DMA7, &at);
	want = lm_xasprintf("g.klr: byte %zu in LncKernel.bodies: Block.mk: "
			    "the array header counts 3 fields, and no KLR "
			    "0.0.12 schema generation lncsim knows reads the "
			    "file up to here", at);
	decode_bad(&b, want);
	decode_bad(&b, "expected: 3 in 2026-03-25..2026-02-28, 2 in "
		   "2026-01-05..2025-11-21, none in 2025-07-21b..2025-07-21a");
	free(want);
	lm_buf_free(&b);

	/* July inputs (7) with an output of the current count (8) */
	july(&b, 7, 8, &at);
	want = lm_xasprintf("g.klr: byte %zu in Kernel.outputs: TensorName.mk: "
			    "the array header counts 8 fields", at);
	decode_bad(&b, want);
	decode_bad(&b, "(furthest as 2025-07-21b); expected: 8 in "
		   "2026-03-25..2025-11-21, 7 in 2025-07-21b, 5 in "
		   "2025-07-21a");
	free(want);
	lm_buf_free(&b);

	/* an operator of the July numbering that lncsim does not read */
	july(&b, 7, 7, NULL);
	for (size_t i = 0; i + 4 <= b.size; i++)
		if (!memcmp((char *)b.ptr + i, "\xd9\xad\x06\x81", 4))
			((uint8_t *)b.ptr)[i + 2] = 20;
	decode_bad(&b, "Operator 'memSet' (constructor 20) is not supported "
		   "by lncsim (read as KLR schema generation 2025-07-21b");
	lm_buf_free(&b);

	/* a count no generation has */
	july(&b, 6, 6, &at);
	decode_bad(&b, "TensorName.mk: the array header counts 6 fields");
	lm_buf_free(&b);

	/* a broken current file keeps its own message */
	late(&b, 7, 3, OP_DMA8, NULL);
	b.size -= 2;
	decode_bad(&b, "truncated CBOR");
	lm_buf_free(&b);
}
END_TEST

/* The fuzz seed of the July generation is what july() writes. */
START_TEST(test_fuzz_seed)
{
	char *p = tu_srcpath("tests/fixtures/klr/gen-2025-07-21b.klr"), *t;
	lm_buf b = LM_BUF_INIT;
	size_t n;
	lm_error err;
	july(&b, 7, 7, NULL);
	ck_assert_int_eq(lm_read_file(p, &t, &n, &err), 0);
	ck_assert_uint_eq(n, b.size);
	ck_assert(memcmp(t, b.ptr, n) == 0);
	free(t);
	free(p);
	lm_buf_free(&b);
}
END_TEST

START_TEST(test_cli_dump_generation)
{
	char *dir = tu_tmpdir("klrgen");
	char *k = lm_xasprintf("%s/july.klr", dir);
	char *j = lm_xasprintf("%s/july.json", dir);
	char *k2 = lm_xasprintf("%s/july2.klr", dir);
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	tu_run r;

	july(&b, 5, 5, NULL);
	ck_assert_int_eq(lm_write_file_atomic(k, b.ptr, b.size, &err), 0);
	r = tu_lncsim(NULL, "klr", "dump", "-o", j, k, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "dump", k, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "\"generation\": \"2025-07-21a\"");
	ck_assert_contains(r.out, "\"label\": \"main\"");
	tu_run_free(&r);
	/* pack writes the current generation whatever the dump said */
	r = tu_lncsim(NULL, "klr", "pack", "-o", k2, j, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "dump", k2, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "\"generation\": \"2026-03-25\"");
	tu_run_free(&r);
	/* a bad generation name in the JSON */
	{
		const char *t = "{\"generation\": \"1999\", \"contents\": "
				"{\"hlo\": \"h\"}}";
		ck_assert_int_eq(lm_write_file_atomic(j, t, strlen(t), &err), 0);
	}
	r = tu_lncsim(NULL, "klr", "pack", "-o", k2, j, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "name of a KLR schema generation");
	tu_run_free(&r);
	/* the no-match error on the command line */
	lm_buf_free(&b);
	july(&b, 6, 6, NULL);
	ck_assert_int_eq(lm_write_file_atomic(k, b.ptr, b.size, &err), 0);
	r = tu_lncsim(NULL, "klr", "dump", k, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "july.klr: byte 26 in Kernel.inputs: "
			   "TensorName.mk: the array header counts 6 fields");
	tu_run_free(&r);
	lm_buf_free(&b);
	tu_rmtree(dir);
	free(k);
	free(j);
	free(k2);
	free(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("klrgen");
	TCase *c = tcase_create("core");
	tcase_add_test(c, test_july_generations);
	tcase_add_test(c, test_late_generations);
	tcase_add_test(c, test_no_generation);
	tcase_add_test(c, test_fuzz_seed);
	tcase_add_test(c, test_cli_dump_generation);
	tcase_set_timeout(c, 60);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_klr.c -- the KLR CBOR reader / writer and the JSON rendering:
** the worked examples of the public KLR on-disk format's documentation
** decode as described and re-encode to the same bytes, every truncation and many
** corruptions are clean errors, pack -> dump -> pack is byte-identical,
** and the `lncsim klr` command.
*/
#include "common.h"
#include "testutil.h"
#include "klr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The format documentation's first worked example (152 bytes). */
static const char EX1[] =
	"d9d9f78300000cd9eb0081634e4b49d9ec0381d96c0087616b80"
	"808181d9680083646d61696ef481d9670083d9da1981d99e0084"
	"d9800081d97d0081d97200886174d96f0580d970008218808119"
	"0200d97100876174d96e018018801908 00d9ff0080d9ff0080f4"
	"190200f5d9830381fa00000000d96f0580d9820080d9ff018161"
	"6dd964008501 00d9ff0080d9ff0080d9ff0080808080";

/* Example 2's block (after the shared prologue) with the 94-byte REF. */
static const char TN_HEX[] =
	"d97200886174d96f0580d970008218808119 0200d97100876174"
	"d96e01801880190800d9ff0080d9ff0080f4190200f5";

/* Example 3 pieces. */
static const char EX3_DP[] =
	"d9860083 0084 d977008300 0100 d977008300 0100 d977008300 0100"
	"d97700830118 8000 20";

/* Hex (spaces ignored) -> bytes; caller frees. */
static uint8_t *unhex(const char *h, size_t *n)
{
	uint8_t *b = lm_xmalloc(strlen(h) / 2 + 1);
	size_t k = 0;
	int hi = -1;
	for (const char *p = h; *p; p++) {
		int v;
		if (*p >= '0' && *p <= '9') v = *p - '0';
		else if (*p >= 'a' && *p <= 'f') v = *p - 'a' + 10;
		else continue;
		if (hi < 0) {
			hi = v;
		} else {
			b[k++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	*n = k;
	return b;
}

/* Example 2 as bytes (308). */
static uint8_t *example2(size_t *n)
{
	lm_buf b = LM_BUF_INIT;
	size_t k;
	uint8_t *p;
	char *ref = lm_xasprintf("d9800081d97d0381d97c0087%s00"
				 "82d977008319020018 8000d9770083011902 0000"
				 "d9ff0080d9ff008000d9ff0080", TN_HEX);
	char *all = lm_xasprintf(
		"d9d9f78300000cd9eb0081634e4b49d9ec0381d96c0087616b8080 8181"
		"d968008361 62f581d9670083d9da2181d9b40089%s%s"
		"d9850081d9830381fa40000000d9871880d9ff0080d9ff0080"
		"d9900080d9820380d9ff0181d96f0580d9ff0080"
		"d964008503 04d9ff0080d9ff0080d9ff018164 6b2e7079 808080",
		ref, ref);
	p = unhex(all, &k);
	lm_buf_put(&b, p, k);
	free(p);
	free(ref);
	free(all);
	*n = b.size;
	return (uint8_t *)lm_buf_detach(&b);
}

/* The LncKernel of a decoded file. */
static const lp_kval *lnc_of(const lp_klr_file *f)
{
	ck_assert_int_eq(f->contents.type_tag, LP_T_CONTENTS);
	ck_assert_int_eq(f->contents.ctor, LP_CONTENTS_LNC);
	return &f->contents.items[0];
}

#define FLD(o, n) lp_kval_field((o), (n))

START_TEST(test_example1_decodes)
{
	size_t n;
	uint8_t *b = unhex(EX1, &n);
	lp_klr_file f;
	lm_error err;
	lm_buf out = LM_BUF_INIT;
	const lp_kval *k, *blk, *st, *op, *ms, *tn, *addr;

	ck_assert_uint_eq(n, 152);
	ck_assert_msg(lp_klr_decode_file(&f, b, n, "ex1", &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq((int)f.version[2], 12);
	ck_assert_str_eq(f.format, "NKI");
	k = lnc_of(&f);
	ck_assert_str_eq(FLD(k, "name")->s, "k");
	ck_assert_int_eq(FLD(k, "inputs")->n, 0);
	ck_assert_int_eq(FLD(k, "bodies")->n, 1);
	blk = &FLD(k, "bodies")->items[0].items[0];
	ck_assert_str_eq(FLD(blk, "label")->s, "main");
	ck_assert_int_eq(FLD(blk, "noReorder")->b, 0);
	st = &FLD(blk, "body")->items[0];
	op = FLD(st, "op");
	ck_assert_str_eq(lp_kval_ctor_name(op), "memSet");
	ms = &op->items[0];
	ck_assert_int_eq(ms->type_tag, 158);
	/* dst: TensorRef.abstract(Access.simple(TensorName)) */
	tn = &FLD(ms, "dst")->items[0].items[0];
	ck_assert_int_eq(tn->type_tag, LP_T_TENSORNAME);
	ck_assert_str_eq(FLD(tn, "name")->s, "t");
	ck_assert_str_eq(lp_kval_ctor_name(FLD(tn, "dtype")), "float32");
	ck_assert_int_eq((int)FLD(FLD(tn, "shape"), "parDim")->u, 128);
	ck_assert_int_eq((int)FLD(FLD(tn, "shape"), "freeDims")->items[0].u,
			 512);
	addr = FLD(tn, "address");
	ck_assert_str_eq(lp_kval_ctor_name(FLD(addr, "memory")), "sbuf");
	ck_assert_int_eq((int)FLD(addr, "parSize")->u, 128);
	ck_assert_int_eq((int)FLD(addr, "freeSize")->u, 2048);
	ck_assert_int_eq(FLD(addr, "parOffset")->n, 0);
	ck_assert_int_eq(FLD(addr, "freeOffset")->n, 0);
	ck_assert_int_eq((int)FLD(tn, "freeElements")->u, 512);
	ck_assert_int_eq(FLD(tn, "addressRotation")->b, 1);
	ck_assert_str_eq(lp_kval_ctor_name(FLD(ms, "value")), "float");
	ck_assert_uint_eq(FLD(ms, "value")->items[0].fbits, 0);
	ck_assert_str_eq(lp_kval_ctor_name(FLD(ms, "engine")), "unassigned");
	ck_assert_str_eq(FLD(st, "name")->items[0].s, "m");
	ck_assert_int_eq((int)FLD(FLD(st, "pos"), "line")->u, 1);
	/* the writer gives back the same bytes */
	ck_assert_int_eq(lp_klr_encode_file(&f, &out, &err), 0);
	ck_assert_uint_eq(out.size, n);
	ck_assert(memcmp(out.ptr, b, n) == 0);
	lm_buf_free(&out);
	lp_klr_file_free(&f);
	free(b);
}
END_TEST

START_TEST(test_example2_decodes)
{
	size_t n;
	uint8_t *b = example2(&n);
	lp_klr_file f;
	lm_error err;
	lm_buf out = LM_BUF_INIT;
	const lp_kval *blk, *st, *ts, *bp, *pat, *pos;
	float two;

	ck_assert_uint_eq(n, 308);
	ck_assert_msg(lp_klr_decode_file(&f, b, n, "ex2", &err) == 0, "%s",
		      err.msg);
	blk = &FLD(lnc_of(&f), "bodies")->items[0].items[0];
	ck_assert_str_eq(FLD(blk, "label")->s, "b");
	ck_assert_int_eq(FLD(blk, "noReorder")->b, 1);
	st = &FLD(blk, "body")->items[0];
	ck_assert_str_eq(lp_kval_ctor_name(FLD(st, "op")), "tensorScalar");
	ts = &FLD(st, "op")->items[0];
	/* dst = abstract(birPattern(...)) */
	bp = &FLD(ts, "dst")->items[0].items[0];
	ck_assert_int_eq(bp->type_tag, LP_T_BIRAP);
	ck_assert_int_eq((int)FLD(bp, "offset")->u, 0);
	pat = FLD(bp, "pattern");
	ck_assert_int_eq(pat->n, 2);
	ck_assert_int_eq((int)FLD(&pat->items[0], "step")->i, 512);
	ck_assert_int_eq((int)FLD(&pat->items[0], "num")->u, 128);
	ck_assert_int_eq((int)FLD(&pat->items[1], "step")->i, 1);
	ck_assert_int_eq((int)FLD(&pat->items[1], "num")->u, 512);
	ck_assert_int_eq(FLD(bp, "scalarOffset")->n, 0);
	ck_assert_int_eq((int)FLD(bp, "indirectDim")->i, 0);
	memcpy(&two, &FLD(ts, "imm0")->items[0].items[0].fbits, 4);
	ck_assert(two == 2.0f);
	ck_assert_str_eq(lp_kval_ctor_name(FLD(ts, "op0")), "mult");
	ck_assert_int_eq(FLD(ts, "imm1")->n, 0);
	ck_assert_int_eq(FLD(ts, "op1")->n, 0);
	ck_assert_str_eq(lp_kval_ctor_name(FLD(ts, "reverse")), "none");
	ck_assert_str_eq(lp_kval_ctor_name(FLD(ts, "engine")), "dve");
	ck_assert_str_eq(lp_kval_ctor_name(&FLD(ts, "dtype")->items[0]),
			 "float32");
	ck_assert_int_eq(FLD(st, "name")->n, 0);
	pos = FLD(st, "pos");
	ck_assert_int_eq((int)FLD(pos, "line")->u, 3);
	ck_assert_int_eq((int)FLD(pos, "column")->u, 4);
	ck_assert_str_eq(FLD(pos, "filename")->items[0].s, "k.py");
	ck_assert_int_eq(lp_klr_encode_file(&f, &out, &err), 0);
	ck_assert_uint_eq(out.size, n);
	ck_assert(memcmp(out.ptr, b, n) == 0);
	lm_buf_free(&out);
	lp_klr_file_free(&f);
	free(b);
}
END_TEST

START_TEST(test_example3_fragments)
{
	size_t n;
	uint8_t *b = unhex(EX3_DP, &n);
	lp_kval *v = NULL;
	lm_error err;
	const lp_kval *pat;
	lm_buf out = LM_BUF_INIT;

	ck_assert_msg(lp_klr_decode_value(&v, "T134", b, n, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq((int)FLD(v, "offset")->i, 0);
	pat = FLD(v, "pattern");
	ck_assert_int_eq(pat->n, 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq((int)FLD(&pat->items[i], "step")->i, 0);
		ck_assert_int_eq((int)FLD(&pat->items[i], "num")->u, 1);
	}
	ck_assert_int_eq((int)FLD(&pat->items[3], "step")->i, 1);
	ck_assert_int_eq((int)FLD(&pat->items[3], "num")->u, 128);
	ck_assert_int_eq((int)FLD(v, "channelMultiplier")->i, -1);
	ck_assert_int_eq(lp_klr_encode_value(v, "T134", &out, &err), 0);
	ck_assert(out.size == n && memcmp(out.ptr, b, n) == 0);
	lm_buf_free(&out);
	lp_kval_free(v);
	free(b);

	b = unhex("d98302813863", &n);   /* Immediate.int (-100) */
	ck_assert_int_eq(lp_klr_decode_value(&v, "T131", b, n, &err), 0);
	ck_assert_str_eq(lp_kval_ctor_name(v), "int");
	ck_assert_int_eq((int)v->items[0].i, -100);
	lp_kval_free(v);
	free(b);
	b = unhex("3903e7", &n);
	ck_assert_int_eq(lp_klr_decode_value(&v, "i", b, n, &err), 0);
	ck_assert_int_eq((int)v->i, -1000);
	lp_kval_free(v);
	free(b);
	b = unhex("3a000f423f", &n);
	ck_assert_int_eq(lp_klr_decode_value(&v, "i", b, n, &err), 0);
	ck_assert_int_eq((int)v->i, -1000000);
	lp_kval_free(v);
	free(b);
	/* the section 2 examples of the primitive encodings */
	b = unhex("1a000f4240", &n);
	ck_assert_int_eq(lp_klr_decode_value(&v, "n", b, n, &err), 0);
	ck_assert_int_eq((int)v->u, 1000000);
	lp_kval_free(v);
	free(b);
	b = unhex("faff800000", &n);
	ck_assert_int_eq(lp_klr_decode_value(&v, "f", b, n, &err), 0);
	ck_assert_uint_eq(v->fbits, 0xff800000u);
	lp_kval_free(v);
	free(b);
	/* a longer-than-shortest Nat is accepted */
	b = unhex("1900 0c", &n);
	ck_assert_int_eq(lp_klr_decode_value(&v, "n", b, n, &err), 0);
	ck_assert_int_eq((int)v->u, 12);
	lp_kval_free(v);
	free(b);
}
END_TEST

/* Every prefix of a valid file is a clean error, never a crash. */
static void truncations(const uint8_t *b, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		lp_klr_file f;
		lm_error err;
		ck_assert_msg(lp_klr_decode_file(&f, b, k, "t", &err) != 0,
			      "prefix %zu decoded", k);
		ck_assert_msg(strstr(err.msg, "truncated") ||
			      strstr(err.msg, "cannot fit") ||
			      strstr(err.msg, "empty file"),
			      "prefix %zu: %s", k, err.msg);
	}
}

START_TEST(test_truncation_fuzz)
{
	size_t n1, n2;
	uint8_t *b1 = unhex(EX1, &n1), *b2 = example2(&n2);
	truncations(b1, n1);
	truncations(b2, n2);
	free(b1);
	free(b2);
}
END_TEST

START_TEST(test_corruption_fuzz)
{
	size_t n;
	uint8_t *b = example2(&n);
	static const uint8_t vals[] = { 0x00, 0x17, 0x18, 0x1b, 0x1f, 0x3b,
					0x5f, 0x7f, 0x80, 0x9f, 0xbf, 0xd9,
					0xdf, 0xf4, 0xfa, 0xfb, 0xff };
	int ok = 0, bad = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t v = 0; v < sizeof vals; v++) {
			uint8_t save = b[i];
			lp_klr_file f;
			lm_error err;
			b[i] = vals[v];
			if (lp_klr_decode_file(&f, b, n, "c", &err) == 0) {
				ok++;
				lp_klr_file_free(&f);
			} else {
				bad++;
				ck_assert(err.msg[0] != 0);
			}
			b[i] = save;
		}
	ck_assert_int_gt(bad, 0);
	ck_assert_int_gt(ok, 0);   /* e.g. other numbers in number slots */
	free(b);
}
END_TEST

/* Decode bytes expecting an error containing want. */
static void bad_file(const uint8_t *b, size_t n, const char *want)
{
	lp_klr_file f;
	lm_error err;
	ck_assert_int_ne(lp_klr_decode_file(&f, b, n, "bad.klr", &err), 0);
	ck_assert_contains(err.msg, want);
	ck_assert_contains(err.msg, "bad.klr");
}

START_TEST(test_decode_errors)
{
	size_t n;
	uint8_t *b = unhex(EX1, &n), *c;
	/* version 0.0.11 */
	b[6] = 0x0b;
	bad_file(b, n, "Wrong KLR version 0.0.11");
	b[6] = 0x0c;
	/* contents constructor 0 (python) */
	b[17] = 0x00;
	bad_file(b, n, "Wrong KLIR content type");
	b[17] = 0x03;
	/* not a KLR file at all */
	bad_file((const uint8_t *)"{\"json\": 1}", 11, "not a KLR file");
	/* the MemSet header counting 3 fields instead of 4 */
	for (size_t i = 0; i + 3 < n; i++)
		if (b[i] == 0xd9 && b[i + 1] == 0x9e && b[i + 3] == 0x84) {
			b[i + 3] = 0x83;
			bad_file(b, n, "MemSet.mk: the array header counts 3 "
				 "fields, and no KLR 0.0.12 schema generation");
			bad_file(b, n, "expected: 4 in 2026-03-25..2025-11-21");
			b[i + 3] = 0x84;
		}
	/* a trailing byte */
	c = lm_xmalloc(n + 1);
	memcpy(c, b, n);
	c[n] = 0x00;
	bad_file(c, n + 1, "1 trailing byte after the KLR contents");
	/* a string that is not UTF-8 ("k" -> 0xff) */
	memcpy(c, b, n);
	c[24] = 0xff;
	bad_file(c, n, "not valid UTF-8");
	/* an unsupported operator: memSet (25) -> dropout (13) */
	memcpy(c, b, n);
	for (size_t i = 0; i + 3 < n; i++)
		if (c[i] == 0xd9 && c[i + 1] == 0xda && c[i + 2] == 0x19)
			c[i + 2] = 13;
	bad_file(c, n, "Operator 'dropout' (constructor 13, payload serde tag "
		 "147) is not supported");
	/* an Option with a bad count */
	memcpy(c, b, n);
	for (size_t i = 0; i + 3 < n; i++)
		if (c[i] == 0xd9 && c[i + 1] == 0xff && c[i + 2] == 0x00) {
			c[i + 3] = 0x81;
			break;
		}
	bad_file(c, n, "expected an Option");
	free(c);
	free(b);
}
END_TEST

START_TEST(test_read_missing_file)
{
	lp_klr_file f;
	lm_error err;
	ck_assert_int_ne(lp_klr_read(&f, "no/such/kernel.klr", &err), 0);
	ck_assert_contains(err.msg, "fail to locate KLIR artifact");
}
END_TEST

/*
** lp_klr_read on files: example 1 reads; a truncated copy is a clean
** error; /dev/zero and a FIFO are refused at once; a file over 64 MiB
** (sparse) is refused by its size, and a big file that is not KLR by its
** first bytes, neither read whole.
*/
START_TEST(test_read_files_and_limits)
{
	char *dir = tu_tmpdir("klr-files");
	char *p, msg[600];
	size_t n;
	uint8_t *b = unhex(EX1, &n);
	lp_klr_file f;
	lm_error err;

	p = tu_write_bytes(dir, "ex1.klr", b, n);
	ck_assert_msg(lp_klr_read(&f, p, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(f.format, "NKI");
	lp_klr_file_free(&f);
	free(p);

	p = tu_write_bytes(dir, "cut.klr", b, n - 5);
	ck_assert_int_eq(lp_klr_read(&f, p, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "truncated CBOR");
	free(p);
	p = tu_write_bytes(dir, "hdr.klr", b, 5);
	ck_assert_int_eq(lp_klr_read(&f, p, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "hdr.klr: byte 3 in KLRFile header: "
			   "array of 3 items cannot fit in the 2 bytes left");
	free(p);

	ck_assert_int_eq(lp_klr_read(&f, "/dev/zero", &err), LM_EINPUT);
	ck_assert_str_eq(err.msg, "/dev/zero: not a regular file (a "
			 "character device)");
	p = lm_path_join(dir, "fifo.klr");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	ck_assert_int_eq(lp_klr_read(&f, p, &err), LM_EINPUT);
	snprintf(msg, sizeof msg, "%s: not a regular file (a FIFO)", p);
	ck_assert_str_eq(err.msg, msg);
	free(p);

	p = tu_write_bytes(dir, "big.klr", b, n);
	ck_assert_int_eq(truncate(p, ((off_t)64 << 20) + 1), 0);
	ck_assert_int_eq(lp_klr_read(&f, p, &err), LM_EINPUT);
	snprintf(msg, sizeof msg, "%s: KLR file too large: 67108865 bytes "
		 "(at most 67108864)", p);
	ck_assert_str_eq(err.msg, msg);
	free(p);

	p = tu_write_bytes(dir, "zeros.klr", "", 0);
	ck_assert_int_eq(truncate(p, (off_t)32 << 20), 0);
	ck_assert_int_eq(lp_klr_read(&f, p, &err), LM_EINPUT);
	snprintf(msg, sizeof msg, "%s: byte 0: not a KLR file: it does not "
		 "start with the KLR header d9 d9 f7", p);
	ck_assert_str_eq(err.msg, msg);
	free(p);

	free(b);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* pack (JSON -> CBOR) of a text; fails the test on error. */
static void pack_text(const char *text, lm_buf *out)
{
	lp_klr_file f;
	lm_error err;
	ck_assert_msg(lp_klr_from_json(&f, text, strlen(text), "k.json",
				       &err) == 0, "%s", err.msg);
	ck_assert_msg(lp_klr_encode_file(&f, out, &err) == 0, "%s", err.msg);
	lp_klr_file_free(&f);
}

/* pack -> dump -> pack must give the same bytes. */
static void round_trip(const char *text)
{
	lm_buf b1 = LM_BUF_INIT, b2 = LM_BUF_INIT, j = LM_BUF_INIT;
	lp_klr_file f;
	lm_error err;
	pack_text(text, &b1);
	ck_assert_msg(lp_klr_decode_file(&f, (const uint8_t *)b1.ptr, b1.size,
					 "b1", &err) == 0, "%s", err.msg);
	lp_klr_to_json(&f, &j);
	lp_klr_file_free(&f);
	pack_text(lm_buf_cstr(&j), &b2);
	ck_assert_uint_eq(b1.size, b2.size);
	ck_assert(memcmp(b1.ptr, b2.ptr, b1.size) == 0);
	lm_buf_free(&b1);
	lm_buf_free(&b2);
	lm_buf_free(&j);
}

START_TEST(test_pack_dump_round_trip)
{
	const char *names[] = { "tests/fixtures/klr/k_all.json",
				"tests/fixtures/klr/k_small.json",
				"tests/fixtures/klr/k_unsupported.json" };
	for (int i = 0; i < 3; i++) {
		char *p = tu_srcpath(names[i]);
		char *t = tu_read(p);
		ck_assert_msg(t != NULL, "cannot read %s", p);
		round_trip(t);
		free(t);
		free(p);
	}
}
END_TEST

START_TEST(test_round_trip_special_values)
{
	/* NaN payloads, infinities, -0.0, 64-bit Nats, negative Ints */
	static const char *vals[] = { "\"nan\"", "\"nan:0xffc00001\"",
				      "\"inf\"", "\"-inf\"", "-0.0", "0.1",
				      "3.4028234663852886e38", "1e-45" };
	for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
		char *t = lm_xasprintf(
			"{\"contents\": {\"lnc\": {\"name\": \"k\", \"bodies\": "
			"[[{\"label\": \"m\", \"noReorder\": false, \"body\": [{"
			"\"op\": {\"iota\": {\"dst\": {\"register\": 3}, "
			"\"pattern\": {\"offset\": \"-9007199254740993\", "
			"\"pattern\": [], \"channelMultiplier\": -5}, "
			"\"dtype\": null}}, \"pos\": {\"line\": "
			"\"18446744073709551615\", \"column\": 0}}, {\"op\": "
			"{\"memSet\": {\"dst\": {\"register\": 1}, \"value\": "
			"{\"float\": %s}, \"dtype\": \"float32\", \"engine\": "
			"\"pool\"}}, \"pos\": {\"line\": 2, \"column\": 1}}]}]]}}}",
			vals[i]);
		round_trip(t);
		free(t);
	}
}
END_TEST

/* Offset of the byte string pat in buf, or -1. */
static long find_bytes(const lm_buf *b, const uint8_t *pat, size_t n)
{
	for (size_t i = 0; i + n <= b->size; i++)
		if (!memcmp((const uint8_t *)b->ptr + i, pat, n))
			return (long)i;
	return -1;
}

START_TEST(test_ncmatmul_flag_layout)
{
	/* NcMatMul with the field psumAccumulateFlag (10 in the header) and
	** without (9, KLR at HEAD): both decode, dump and pack back */
	static const uint8_t h9[] = { 0xd9, 0xb7, 0x00, 0x89 };
	static const uint8_t h10[] = { 0xd9, 0xb7, 0x00, 0x8a };
	for (int v = 0; v < 2; v++) {
		char *t = lm_xasprintf(
			"{\"contents\": {\"lnc\": {\"name\": \"k\", \"bodies\": "
			"[[{\"label\": \"m\", \"body\": [{\"op\": {\"ncMatMul\": "
			"{\"dst\": {\"register\": 1}, \"stationary\": "
			"{\"register\": 2}, \"moving\": {\"register\": 3}%s, "
			"\"perfMode\": \"DoubleRow\"}}}]}]]}}}",
			v ? ", \"psumAccumulateFlag\": 128" : "");
		lm_buf b = LM_BUF_INIT, j = LM_BUF_INIT;
		lp_klr_file f;
		lm_error err;
		const lp_kval *op, *fl;
		pack_text(t, &b);
		ck_assert_int_ge(find_bytes(&b, v ? h10 : h9, 4), 0);
		ck_assert_int_lt(find_bytes(&b, v ? h9 : h10, 4), 0);
		ck_assert_msg(lp_klr_decode_file(&f, (const uint8_t *)b.ptr,
						 b.size, "b", &err) == 0, "%s",
			      err.msg);
		op = &lnc_of(&f)->items[3].items[0].items[0].items[2]
			      .items[0].items[0].items[0];
		ck_assert_int_eq(op->type_tag, 183);
		ck_assert_int_eq(op->n, v ? 10 : 9);
		fl = lp_kval_field(op, "psumAccumulateFlag");
		if (v) {
			ck_assert_ptr_nonnull(fl);
			ck_assert_uint_eq(fl->u, 128);
		} else {
			ck_assert_ptr_null(fl);
		}
		/* perfMode is found in both layouts */
		ck_assert_int_eq(lp_kval_field(op, "perfMode")->ctor, 1);
		lp_klr_to_json(&f, &j);
		if (v)
			ck_assert_contains(lm_buf_cstr(&j),
					   "\"psumAccumulateFlag\": 128");
		else
			ck_assert(!strstr(lm_buf_cstr(&j), "psumAccumulateFlag"));
		lp_klr_file_free(&f);
		round_trip(t);
		lm_buf_free(&b);
		lm_buf_free(&j);
		free(t);
	}
	/* a header count that is neither layout */
	{
		lm_buf b = LM_BUF_INIT;
		lp_klr_file f;
		lm_error err;
		long at;
		pack_text("{\"contents\": {\"lnc\": {\"name\": \"k\", \"bodies\": "
			  "[[{\"label\": \"m\", \"body\": [{\"op\": {\"ncMatMul\": "
			  "{\"dst\": {\"register\": 1}, \"stationary\": "
			  "{\"register\": 2}, \"moving\": {\"register\": 3}}}}]}]]}}}",
			  &b);
		at = find_bytes(&b, h9, 4);
		ck_assert_int_ge(at, 0);
		((uint8_t *)b.ptr)[at + 3] = 0x8b;
		ck_assert_int_ne(lp_klr_decode_file(&f, (const uint8_t *)b.ptr,
						    b.size, "b", &err), 0);
		ck_assert_contains(err.msg, "NcMatMul.mk: the array header "
				   "counts 11 fields, and no KLR 0.0.12");
		ck_assert_contains(err.msg, "expected: 9 or 10 in "
				   "2026-03-25..2025-11-21, none in "
				   "2025-07-21b..2025-07-21a");
		lm_buf_free(&b);
	}
}
END_TEST

/* pack of a text expecting an error containing want. */
static void bad_json(const char *text, const char *want)
{
	lp_klr_file f;
	lm_error err;
	ck_assert_int_ne(lp_klr_from_json(&f, text, strlen(text), "k.json",
					  &err), 0);
	ck_assert_contains(err.msg, want);
}

START_TEST(test_json_errors)
{
	bad_json("{", "malformed JSON");
	bad_json("[]", "expected an object");
	bad_json("{\"contents\": {\"lnc\": {\"name\": \"k\", \"nmae\": 1}}}",
		 "contents.lnc: LncKernel has no field 'nmae'");
	bad_json("{\"contents\": {\"lnc\": {\"bodies\": []}}}",
		 "missing field 'name' of LncKernel");
	bad_json("{\"contents\": {\"python\": 1}}",
		 "Contents 'python' is not supported");
	bad_json("{\"contents\": {\"lnc\": {\"name\": \"k\", \"bodies\": [[{"
		 "\"label\": \"m\", \"body\": [{\"op\": {\"frob\": {}}}]}]]}}}",
		 "contents.lnc.bodies[0][0].body[0].op: unknown Operator 'frob'");
	bad_json("{\"contents\": {\"lnc\": {\"name\": 3}}}",
		 "contents.lnc.name: expected a string, got a number");
	bad_json("{\"version\": \"x\", \"contents\": {\"hlo\": \"h\"}}",
		 "expected a version string");
	bad_json("{\"contents\": {\"lnc\": {\"name\": \"k\", \"bodies\": [[{"
		 "\"label\": \"m\", \"body\": [{\"op\": {\"memSet\": {\"dst\": "
		 "{\"register\": -1}}}}]}]]}}}",
		 "expected a Nat (>= 0)");
	bad_json("{\"contents\": {\"lnc\": {\"name\": \"k\", \"bodies\": [[{"
		 "\"label\": \"m\", \"body\": [{\"op\": {\"memSet\": {\"dst\": "
		 "{\"register\": 1}, \"value\": {\"float\": \"nan:0x1\"}}}}]}]]}}}",
		 "nan:0xXXXXXXXX");
	bad_json("{\"contents\": {\"lnc\": {\"name\": \"k\", \"bodies\": [[{"
		 "\"label\": \"m\", \"body\": [{\"op\": {\"memSet\": {\"dst\": "
		 "{\"register\": 1}, \"value\": \"pointer\", \"engine\": "
		 "\"gpu\"}}}]}]]}}}",
		 "unknown Engine 'gpu'");
}
END_TEST

START_TEST(test_cli_klr)
{
	char *dir = tu_tmpdir("klr");
	size_t n;
	uint8_t *b = unhex(EX1, &n);
	char *k = lm_xasprintf("%s/ex1.klr", dir);
	char *j = lm_xasprintf("%s/ex1.json", dir);
	char *k2 = lm_xasprintf("%s/ex1b.klr", dir);
	lm_error err;
	tu_run r;
	char *t1, *t2;

	ck_assert_int_eq(lm_write_file_atomic(k, b, n, &err), 0);
	r = tu_lncsim(NULL, "klr", "dump", k, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "\"memSet\"");
	ck_assert_contains(r.out, "\"version\": \"0.0.12\"");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "dump", "-o", j, k, NULL);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "pack", j, "-o", k2, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	t1 = tu_read(k);
	t2 = tu_read(k2);
	ck_assert(t1 && t2 && memcmp(t1, t2, n) == 0);
	free(t1);
	free(t2);
	/* errors */
	r = tu_lncsim(NULL, "klr", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "missing 'dump' or 'pack'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "frob", k, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "unknown subcommand 'frob'");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "pack", j, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "pack needs -o K.klr");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "dump", "nope.klr", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "lncsim: nope.klr: fail to locate KLIR "
			   "artifact");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "dump", j, NULL);   /* JSON is no KLR */
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "not a KLR file");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "pack", k, "-o", k2, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "malformed JSON");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "klr", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "usage: lncsim klr dump");
	tu_run_free(&r);
	free(b);
	free(k);
	free(j);
	free(k2);
	free(dir);
}
END_TEST

/* The hex vectors of the shared document decode, when it is present. */
START_TEST(test_shared_doc_vectors)
{
	char *p = tu_sharedpath("formats/KLR-CBOR.md");
	char *t, *s, *e;
	lm_buf hex = LM_BUF_INIT;
	size_t n;
	uint8_t *b;
	lp_klr_file f;
	lm_error err;
	if (!p)
		return;   /* the shared tree is not there: nothing to check */
	t = tu_read(p);
	ck_assert(t != NULL);
	/* the contiguous listing of example 1 follows "Contiguous:" */
	s = strstr(t, "Contiguous:");
	ck_assert(s != NULL);
	s = strstr(s, "```");
	ck_assert(s != NULL);
	s += 3;
	e = strstr(s, "```");
	ck_assert(e != NULL);
	lm_buf_put(&hex, s, (size_t)(e - s));
	b = unhex(lm_buf_cstr(&hex), &n);
	ck_assert_uint_eq(n, 152);
	ck_assert_msg(lp_klr_decode_file(&f, b, n, p, &err) == 0, "%s",
		      err.msg);
	lp_klr_file_free(&f);
	free(b);
	lm_buf_free(&hex);
	free(t);
	free(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("klr");
	TCase *c = tcase_create("core");
	tcase_add_test(c, test_example1_decodes);
	tcase_add_test(c, test_example2_decodes);
	tcase_add_test(c, test_example3_fragments);
	tcase_add_test(c, test_truncation_fuzz);
	tcase_add_test(c, test_corruption_fuzz);
	tcase_add_test(c, test_decode_errors);
	tcase_add_test(c, test_read_missing_file);
	tcase_add_test(c, test_read_files_and_limits);
	tcase_add_test(c, test_pack_dump_round_trip);
	tcase_add_test(c, test_round_trip_special_values);
	tcase_add_test(c, test_ncmatmul_flag_layout);
	tcase_add_test(c, test_json_errors);
	tcase_add_test(c, test_cli_klr);
	tcase_add_test(c, test_shared_doc_vectors);
	tcase_set_timeout(c, 60);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

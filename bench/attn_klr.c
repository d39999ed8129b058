/*
** attn_klr.c -- KLR JSON of the fused self-attention kernel, statement by
** statement after fused_self_attn_for_SD_small_head_size of the NKI
** samples (examples/nki/attention/README.md maps each NKI statement to
** the KLR operators written here), and its carrier module.
**
** Every tensor is left unplaced (no parOffset / freeOffset): the lowering
** places SBUF and PSUM tensors after the walk. Tensors of one query tile
** alternate between two buffers (suffix _0 / _1) so that consecutive
** query tiles can overlap; a PSUM tile of the QK^T loop alternates by key
** tile.
*/
#include "common.h"
#include "attn_klr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One kernel under construction. */
typedef struct gen {
	lm_buf b;       /* statements of the current body */
	int n;          /* statements so far in it */
	int seq, d, nt; /* sizes; nt = seq / 128 */
} gen;

static int esize(const char *dt)
{
	return strcmp(dt, "float32") ? 2 : 4;
}

/* A TensorName [par, fr] of dtype dt in memory mem, unplaced. */
static char *tn(const char *name, const char *mem, const char *dt, int par,
		int fr)
{
	int is_hbm = !strcmp(mem, "hbm");
	return lm_xasprintf("{\"name\": \"%s\", \"dtype\": \"%s\", "
			    "\"shape\": {\"parDim\": %d, \"freeDims\": [%d]}, "
			    "\"address\": {\"name\": \"%s\", \"memory\": \"%s\", "
			    "\"parSize\": %d, \"freeSize\": %d}}", name, dt,
			    par, fr, name, mem, is_hbm ? par : 128,
			    fr * esize(dt));
}

/*
** birPattern operand of tensor [tp, tf]: element offset off, then the
** pairs [s0, n0], [s1, n1] (partition pair first).
*/
static char *ap(const char *name, const char *mem, const char *dt, int tp,
		int tf, int off, int s0, int n0, int s1, int n1)
{
	char *t = tn(name, mem, dt, tp, tf);
	char *r = lm_xasprintf("{\"abstract\": {\"birPattern\": {\"tensor\": "
			       "%s, \"offset\": %d, \"pattern\": [{\"step\": "
			       "%d, \"num\": %d}, {\"step\": %d, \"num\": "
			       "%d}]}}}", t, off, s0, n0, s1, n1);
	free(t);
	return r;
}

/* Columns [c0, c0 + fr) of all tp partitions of the tile [tp, tf]. */
static char *cols(const char *name, const char *mem, const char *dt, int tp,
		  int tf, int c0, int fr)
{
	return ap(name, mem, dt, tp, tf, c0, tf, tp, 1, fr);
}

/* Append {"name": name, "op": {op: {fields}}}; frees fields. */
static void st(gen *g, const char *op, char *fields, const char *fmt, ...)
	LM_PRINTF(4, 5);
static void st(gen *g, const char *op, char *fields, const char *fmt, ...)
{
	va_list va;
	char name[96];
	va_start(va, fmt);
	vsnprintf(name, sizeof name, fmt, va);
	va_end(va);
	lm_buf_puts(&g->b, g->n++ ? ",\n" : "");
	lm_buf_printf(&g->b, "{\"name\": \"%s\", \"op\": {\"%s\": {%s}}}",
		      name, op, fields);
	free(fields);
}

/* dst, src: two operands; frees both. */
static char *ds(char *dst, char *src)
{
	char *r = lm_xasprintf("\"dst\": %s, \"src\": %s", dst, src);
	free(dst);
	free(src);
	return r;
}

/* "ab_<i>": the name of buffer i of a per-query-tile tensor. */
static const char *buf(char *out, size_t n, const char *base, int i)
{
	snprintf(out, n, "%s_%d", base, i & 1);
	return out;
}

/* Step 1 of the kernel: V, Q^T * 0.125 and K^T into SBUF as bfloat16. */
static void load_inputs(gen *g, int q0, int q1)
{
	int s = g->seq, d = g->d, nt = g->nt;
	/* trans_v = (par 128, nt, d) bfloat16: nl.load(v[...], dtype=bf16) */
	for (int i = 0; i < nt; i++)
		st(g, "ncDmaCopy",
		   ds(ap("trans_v", "sbuf", "bfloat16", 128, nt * d, i * d,
			 nt * d, 128, 1, d),
		      ap("v", "hbm", "float32", s, d, i * 128 * d, d, 128, 1,
			 d)), "load_v_%d", i);
	/* q_local = (nt, par d, 128): load_transpose2d(q[...]) * 0.125 */
	for (int i = q0; i < q1; i++) {
		st(g, "ncDmaCopy",
		   ds(ap("q_t", "sbuf", "bfloat16", d, 128, 0, 128, d, 1, 128),
		      ap("q", "hbm", "float32", s, d, i * 128 * d, 1, d, d,
			 128)), "load_q_%d", i);
		st(g, "tensorScalar",
		   lm_xasprintf("%s, \"imm0\": {\"imm\": {\"float\": 0.125}}, "
				"\"op0\": \"mult\"",
				ds(cols("q_local", "sbuf", "bfloat16", d,
					nt * 128, i * 128, 128),
				   cols("q_t", "sbuf", "bfloat16", d, 128, 0,
					128))), "scale_q_%d", i);
	}
	/* k_local = (nt, par d, 128): load_transpose2d(k[...]) */
	for (int i = 0; i < nt; i++)
		st(g, "ncDmaCopy",
		   ds(cols("k_local", "sbuf", "bfloat16", d, nt * 128, i * 128,
			   128),
		      ap("k", "hbm", "float32", s, d, i * 128 * d, 1, d, d,
			 128)), "load_k_%d", i);
}

/* The body of one query tile iq, its output rows at row r0 of out. */
static void query_tile(gen *g, int iq, int r0, const char *out, int out_rows)
{
	int s = g->seq, d = g->d, nt = g->nt;
	char qk[32], neg[32], negf[32], ex[32], sum[32], sm[32], rc[32],
	     div[32], tsm[32], ps[32], at[32], divt[32], res[32], kp[32];
	buf(qk, sizeof qk, "qk_res_buf", iq);
	buf(neg, sizeof neg, "neg_max_res", iq);
	buf(negf, sizeof negf, "neg_max_res_final", iq);
	buf(ex, sizeof ex, "exp_res", iq);
	buf(sum, sizeof sum, "sum_res", iq);
	buf(sm, sizeof sm, "softmax_res", iq);
	buf(rc, sizeof rc, "sum_reciprocal", iq);
	buf(div, sizeof div, "sum_divisor", iq);
	buf(tsm, sizeof tsm, "trans_softmax_res", iq);
	buf(ps, sizeof ps, "attn_res_psum", iq);
	buf(at, sizeof at, "attn_res_sbuf", iq);
	buf(divt, sizeof divt, "sum_divisor_t", iq);
	buf(res, sizeof res, "attn_res_div", iq);

	for (int ik = 0; ik < nt; ik++) {
		buf(kp, sizeof kp, "qk_psum", ik);
		/* Step 2: qk_psum += nc_matmul(moving=k_local[ik],
		** stationary=q_local[iq]) */
		st(g, "ncMatMul",
		   lm_xasprintf("\"dst\": %s, \"stationary\": %s, \"moving\": "
				"%s",
				cols(kp, "psum", "float32", 128, 128, 0, 128),
				cols("q_local", "sbuf", "bfloat16", d, nt * 128,
				     iq * 128, 128),
				cols("k_local", "sbuf", "bfloat16", d, nt * 128,
				     ik * 128, 128)), "qk_%d_%d", iq, ik);
		/* Step 3 (no causal mask): qk_res_buf[:, ik] = nl.copy(psum) */
		st(g, "ncCopy",
		   ds(cols(qk, "sbuf", "float32", 128, s, ik * 128, 128),
		      cols(kp, "psum", "float32", 128, 128, 0, 128)),
		   "qk_copy_%d_%d", iq, ik);
		/* Step 4: neg_max_res[:, ik] = tensor_reduce(max, negate) */
		st(g, "tensorReduce",
		   lm_xasprintf("%s, \"op\": \"max\", \"opDim\": \"X\", "
				"\"negated\": true",
				ds(cols(neg, "sbuf", "float32", 128, nt, ik, 1),
				   cols(qk, "sbuf", "float32", 128, s, ik * 128,
					128))), "neg_max_%d_%d", iq, ik);
	}
	st(g, "tensorReduce",
	   lm_xasprintf("%s, \"op\": \"min\", \"opDim\": \"X\"",
			ds(cols(negf, "sbuf", "float32", 128, 1, 0, 1),
			   cols(neg, "sbuf", "float32", 128, nt, 0, nt))),
	   "neg_max_final_%d", iq);
	/* exp_res = activation(exp, qk_res_buf, bias=neg_max_res_final) */
	st(g, "ncActivate",
	   lm_xasprintf("%s, \"accumulatorCmd\": \"Idle\", \"activationFunc\": "
			"\"exp\", \"scale\": {\"imm\": {\"float\": 1.0}}, "
			"\"bias\": %s",
			ds(cols(ex, "sbuf", "float32", 128, s, 0, s),
			   cols(qk, "sbuf", "float32", 128, s, 0, s)),
			cols(negf, "sbuf", "float32", 128, 1, 0, 1)),
	   "exp_%d", iq);
	st(g, "tensorReduce",
	   lm_xasprintf("%s, \"op\": \"add\", \"opDim\": \"X\"",
			ds(cols(sum, "sbuf", "float32", 128, 1, 0, 1),
			   cols(ex, "sbuf", "float32", 128, s, 0, s))),
	   "sum_%d", iq);
	st(g, "ncCopy",
	   ds(cols(sm, "sbuf", "bfloat16", 128, s, 0, s),
	      cols(ex, "sbuf", "float32", 128, s, 0, s)), "softmax_%d", iq);
	/* (1.0 / sum_res).broadcast_to((128, d)) -> sum_divisor */
	st(g, "reciprocal",
	   ds(cols(rc, "sbuf", "float32", 128, 1, 0, 1),
	      cols(sum, "sbuf", "float32", 128, 1, 0, 1)), "recip_%d", iq);
	st(g, "ncCopy",
	   ds(cols(div, "sbuf", "float32", 128, d, 0, d),
	      ap(rc, "sbuf", "float32", 128, 1, 0, 1, 128, 0, d)),
	   "divisor_%d", iq);
	/* Step 5: trans_softmax_res[:, ik] = nc_transpose(softmax_res[ik]) */
	for (int ik = 0; ik < nt; ik++)
		st(g, "transpose",
		   ds(cols(tsm, "sbuf", "bfloat16", 128, nt * 128, ik * 128,
			   128),
		      cols(sm, "sbuf", "bfloat16", 128, s, ik * 128, 128)),
		   "trans_softmax_%d_%d", iq, ik);
	/* Step 6: attn_res_psum += nc_matmul(moving=trans_softmax_res[ik],
	** stationary=trans_v[ik]) */
	for (int ik = 0; ik < nt; ik++)
		st(g, "ncMatMul",
		   lm_xasprintf("\"dst\": %s, \"stationary\": %s, \"moving\": "
				"%s", cols(ps, "psum", "float32", d, 128, 0, 128),
				cols("trans_v", "sbuf", "bfloat16", 128, nt * d,
				     ik * d, d),
				cols(tsm, "sbuf", "bfloat16", 128, nt * 128,
				     ik * 128, 128)), "pv_%d_%d", iq, ik);
	st(g, "ncCopy",
	   ds(cols(at, "sbuf", "float32", d, 128, 0, 128),
	      cols(ps, "psum", "float32", d, 128, 0, 128)), "attn_copy_%d", iq);
	st(g, "transpose",
	   ds(cols(divt, "sbuf", "float32", d, 128, 0, 128),
	      cols(div, "sbuf", "float32", 128, d, 0, d)), "divisor_t_%d", iq);
	st(g, "tensorTensor",
	   lm_xasprintf("\"dst\": %s, \"src0\": %s, \"src1\": %s, \"op\": "
			"\"mult\"", cols(res, "sbuf", "float32", d, 128, 0, 128),
			cols(at, "sbuf", "float32", d, 128, 0, 128),
			cols(divt, "sbuf", "float32", d, 128, 0, 128)),
	   "attn_div_%d", iq);
	/* nl.store(out[iq * 128 + if_out, ip_out], attn_res_div) */
	st(g, "ncDmaCopy",
	   ds(ap(out, "hbm", "float32", out_rows, d, r0 * d, 1, d, d, 128),
	      cols(res, "sbuf", "float32", d, 128, 0, 128)), "store_%d", iq);
}

char *attn_klr_json(int seq, int d, int n_cores)
{
	gen g;
	lm_buf k = LM_BUF_INIT;
	int rows = seq / n_cores, tiles = rows / 128;
	char *q = tn("q", "hbm", "float32", seq, d);
	char *kk = tn("k", "hbm", "float32", seq, d);
	char *v = tn("v", "hbm", "float32", seq, d);
	char *o = tn("out", "hbm", "float32", rows, d);

	memset(&g, 0, sizeof g);
	g.seq = seq;
	g.d = d;
	g.nt = seq / 128;
	lm_buf_printf(&k, "{\n\"version\": \"0.0.12\",\n\"format\": \"NKI\",\n"
		      "\"contents\": {\"lnc\": {\n\"name\": \"attn\",\n"
		      "\"inputs\": [%s,\n%s,\n%s],\n\"outputs\": [%s],\n"
		      "\"bodies\": [", q, kk, v, o);
	for (int c = 0; c < n_cores; c++) {
		int q0 = c * tiles;
		memset(&g.b, 0, sizeof g.b);
		g.n = 0;
		load_inputs(&g, q0, q0 + tiles);
		for (int iq = q0; iq < q0 + tiles; iq++)
			query_tile(&g, iq, (iq - q0) * 128, "out", rows);
		lm_buf_printf(&k, "%s[{\"label\": \"main\", \"body\": [\n%s]}]",
			      c ? ",\n" : "", lm_buf_cstr(&g.b));
		lm_buf_free(&g.b);
	}
	lm_buf_puts(&k, "]\n}}\n}\n");
	free(q);
	free(kk);
	free(v);
	free(o);
	return lm_buf_detach(&k);
}

/* An allocation [rows, d] float32 in DRAM. */
static void dram(lm_buf *b, const char *name, const char *kind, int rows,
		 int d)
{
	lm_buf_printf(b, "{\"name\": \"%s\", \"kind\": \"%s\", \"dtype\": "
		      "\"float32\", \"tensor_shape\": [%d, %d], \"addr_space\": "
		      "\"Shared\", \"file\": \"\", \"memorylocations\": "
		      "[{\"name\": \"%s\", \"type\": \"DRAM\", \"addr\": 0, "
		      "\"dims\": [%d, %d], \"bank\": 0, \"base\": 0, "
		      "\"allocated\": true}]}", name, kind, rows, d, name, rows,
		      d * 4);
}

/* A physical_ap operand of the whole [rows, d] allocation. */
static void whole(lm_buf *b, const char *name, int rows, int d)
{
	lm_buf_printf(b, "{\"kind\": \"physical_ap\", \"ap\": [[%d, %d], [1, "
		      "%d]], \"dtype\": \"float32\", \"offset\": 0, "
		      "\"memsetref\": \"%s\", \"memref\": \"%s\"}", d, rows, d,
		      name, name);
}

char *attn_def_json(int seq, int d, int core, int n_cores, const char *klr)
{
	lm_buf b = LM_BUF_INIT;
	int rows = seq / n_cores;
	char out[16];
	snprintf(out, sizeof out, n_cores > 1 ? "out%d" : "out", core);
	lm_buf_printf(&b, "{\n\"version\": 2,\n\"arch\": \"gen3\",\n\"name\": "
		      "\"attn_nc%d\",\n\"functions\": [{\n\"name\": \"sg0000\",\n"
		      "\"attributes\": [],\n\"allocations\": [\n", core);
	dram(&b, "q", "ExternalInput", seq, d);
	lm_buf_puts(&b, ",\n");
	dram(&b, "k", "ExternalInput", seq, d);
	lm_buf_puts(&b, ",\n");
	dram(&b, "v", "ExternalInput", seq, d);
	lm_buf_puts(&b, ",\n");
	dram(&b, out, "ExternalOutput", rows, d);
	lm_buf_puts(&b, "\n],\n\"blocks\": [{\"name\": \"main\", "
		    "\"instructions\": [{\n\"opcode\": \"NKIKLIRKernel\", "
		    "\"name\": \"attn_kernel\", \"engine\": \"SP\",\n\"ins\": [");
	whole(&b, "q", seq, d);
	lm_buf_puts(&b, ", ");
	whole(&b, "k", seq, d);
	lm_buf_puts(&b, ", ");
	whole(&b, "v", seq, d);
	lm_buf_puts(&b, "],\n\"outs\": [");
	whole(&b, out, rows, d);
	lm_buf_printf(&b, "],\n\"kernel_format\": \"klr\", \"klir_binary\": "
		      "\"%s\",\n\"func_args\": {\"q\": \"q\", \"k\": \"k\", "
		      "\"v\": \"v\"},\n\"func_outs\": {\"out\": \"%s\"},\n"
		      "\"sb_buf_shape\": [0, 128], \"psum_buf_shape\": [0, [0, "
		      "0]]\n}]}]\n}],\n\"attributes\": {\"neuron_core_id\": "
		      "%d}\n}\n", klr, out, core);
	return lm_buf_detach(&b);
}

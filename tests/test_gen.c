/*
** test_gen.c -- the random program generator: determinism, validity, and
** that across seeds it produces every feature the linker steps need.
*/
#include "common.h"
#include "gen.h"
#include "verify.h"
#include "affine.h"
#include "testutil.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Serialize every module of a set into one string (for byte comparison). */
static char *set_text_opts(const ls_gen_opts *op)
{
	ls_gen_opts o = *op;
	int cores = o.cores;
	lm_module **mods;
	ls_gen_file *files;
	int nf;
	lm_error err;
	ck_assert_msg(ls_gen(&o, "out", &mods, &files, &nf, &err) == 0, "%s",
		      err.msg);
	lm_buf b = LM_BUF_INIT;
	for (int c = 0; c < cores; c++) {
		char *t;
		size_t n;
		ck_assert_int_eq(lm_module_to_json(mods[c], 0, &t, &n, &err), 0);
		lm_buf_puts(&b, mods[c]->path);
		lm_buf_puts(&b, t);
		free(t);
		lm_module_free(mods[c]);
	}
	for (int i = 0; i < nf; i++) {
		lm_buf_puts(&b, files[i].relpath);
		lm_buf_put(&b, files[i].bytes, files[i].len);
	}
	free(mods);
	ls_gen_files_free(files, nf);
	return lm_buf_detach(&b);
}

static char *set_text(int cores, uint64_t seed, ls_gen_size size)
{
	ls_gen_opts o = {cores, seed, size, NULL, NULL, 0, 0, 0, 0, 0};
	return set_text_opts(&o);
}

START_TEST(test_same_seed_same_bytes)
{
	char *a = set_text(4, 77, LS_GEN_SMALL);
	char *b = set_text(4, 77, LS_GEN_SMALL);
	char *c = set_text(4, 78, LS_GEN_SMALL);
	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c);
	free(a);
	free(b);
	free(c);
}
END_TEST

/* Feature counters over one generated set. */
typedef struct feats {
	int shared_inputs, views, fixed_ids, solo, matmul_groups, bias_act,
	    nobias_act, waits, sqi, consts, bf16, collisions;
} feats;

static void count(lm_module **mods, int n, feats *f)
{
	int shared = 0;
	for (int c = 0; c < n; c++) {
		const lm_function *fn = &mods[c]->functions[0];
		for (int a = 0; a < fn->n_allocs; a++) {
			const lm_alloc *al = &fn->allocs[a];
			if (!strcmp(al->name, "x_shared"))
				shared++;
			if (al->has_remote)
				f->views++;
			if (al->kind == LM_TK_CONST)
				f->consts++;
			if (c > 0 && !strcmp(al->name, "acc"))
				f->collisions++;
		}
		const lm_block *b = &fn->blocks[0];
		for (int i = 0; i < b->n_insts; i++) {
			const lm_inst *in = &b->insts[i];
			if (in->op == LM_OP_COREBARRIER && !in->renumber)
				f->fixed_ids++;
			if (in->op == LM_OP_COREBARRIER && in->n_cores == 1)
				f->solo++;
			if (in->op == LM_OP_MATMULT && !in->start_tensor_calc)
				f->matmul_groups++;
			if (in->op == LM_OP_ACTIVATION) {
				if (strstr(in->ins[1].memsetref, "zero"))
					f->nobias_act++;
				else
					f->bias_act++;
			}
			if (in->n_wait)
				f->waits++;
			if (in->op == LM_OP_SWITCHQUEUE)
				f->sqi++;
			for (int k = 0; k < in->n_outs; k++)
				if (in->outs[k].dtype == LM_DT_BFLOAT16)
					f->bf16++;
		}
	}
	if (shared >= 2)
		f->shared_inputs++;
}

START_TEST(test_valid_and_featureful)
{
	feats f;
	memset(&f, 0, sizeof f);
	for (int seed = 1; seed <= 40; seed++) {
		int cores = 1 + seed % 16;
		ls_gen_opts o = {cores, (uint64_t)seed, LS_GEN_SMALL, NULL,
				 NULL, 0, 0, 0, 0, 0};
		lm_module **mods;
		ls_gen_file *files;
		int nf;
		lm_error err;
		ck_assert_msg(ls_gen(&o, NULL, &mods, &files, &nf, &err) == 0,
			      "seed %d: %s", seed, err.msg);
		for (int c = 0; c < cores; c++) {
			lm_verify_opts vo = {0};
			ck_assert_msg(lm_verify(mods[c], &vo, &err) == 0,
				      "seed %d core %d: %s", seed, c, err.msg);
			ck_assert_int_eq(lm_module_core_id(mods[c]), c);
		}
		count(mods, cores, &f);
		for (int c = 0; c < cores; c++)
			lm_module_free(mods[c]);
		free(mods);
		ls_gen_files_free(files, nf);
	}
	ck_assert_int_gt(f.shared_inputs, 10);
	ck_assert_int_gt(f.views, 10);
	ck_assert_int_gt(f.fixed_ids, 2);
	ck_assert_int_gt(f.solo, 2);
	ck_assert_int_gt(f.matmul_groups, 10);
	ck_assert_int_gt(f.bias_act, 5);
	ck_assert_int_gt(f.nobias_act, 5);
	ck_assert_int_gt(f.waits, 10);
	ck_assert_int_gt(f.sqi, 2);
	ck_assert_int_gt(f.consts, 10);
	ck_assert_int_gt(f.bf16, 5);
	ck_assert_int_gt(f.collisions, 10);
}
END_TEST

START_TEST(test_bad_cores)
{
	ls_gen_opts o = {0, 1, LS_GEN_SMALL, NULL, NULL, 0, 0, 0, 0, 0};
	lm_module **mods;
	ls_gen_file *files;
	int nf;
	lm_error err;
	ck_assert_int_ne(ls_gen(&o, NULL, &mods, &files, &nf, &err), 0);
	ck_assert_contains(err.msg, "--cores must be within 1..64");
}
END_TEST

START_TEST(test_cli_gen)
{
	char *d = tu_tmpdir("gen");
	tu_run r = tu_lncsim(d, "gen", "--cores", "3", "--seed", "5", "-o", "out",
			     NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *p = lm_xasprintf("%s/out/gen5/nc2/sg0/def.json", d);
	char *w = lm_xasprintf("%s/out/gen5/nc0/sg0/w.npy", d);
	char *t = tu_read(p), *wt = tu_read(w);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(wt);
	free(t);
	free(wt);
	r = tu_lncsim(d, "verify", "out/gen5", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	/* existing set refused without --force */
	r = tu_lncsim(d, "gen", "--cores", "3", "--seed", "5", "-o", "out", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "already exists");
	tu_run_free(&r);
	r = tu_lncsim(d, "gen", "--cores", "0", "-o", "out", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--cores must be within 1..64");
	tu_run_free(&r);
	r = tu_lncsim(d, "gen", "--seed", "x", "-o", "out", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "is not an integer");
	tu_run_free(&r);
	r = tu_lncsim(d, "gen", "--size", "huge", "-o", "out", NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	r = tu_lncsim(d, "gen", "--name", "../evil", "-o", "out", NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	free(p);
	free(w);
	free(d);
}
END_TEST

/*
** The modules `lncsim gen` writes are those of a fixed reference: the
** def.json of each core of three sets (two cores, seeds 18 and 11, small;
** one core, seed 5, medium: between them every instruction and allocation
** shape the generator makes, switches, renumber:false barriers, model
** outputs, unread views, both bias modes) is compared byte for byte with
** tests/fixtures/gen/<set>/nc<c>.golden. When the generator's output
** changes on purpose, the goldens are written again by the same
** commands (`lncsim gen --cores 2 --seed 18 -o DIR`, ..., each
** DIR/<set>/nc<c>/sg0/def.json copied to <set>/nc<c>.golden).
*/
START_TEST(test_golden_sets)
{
	static const struct {
		const char *cores, *seed, *size, *set;
		int n;
	} sets[] = {
		{ "2", "18", "small", "gen18", 2 },
		{ "2", "11", "small", "gen11", 2 },
		{ "1", "5", "medium", "gen5", 1 },
	};
	char *d = tu_tmpdir("golden");
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
		tu_run r = tu_lncsim(d, "gen", "--cores", sets[i].cores,
				     "--seed", sets[i].seed, "--size",
				     sets[i].size, "-o", "out", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		for (int c = 0; c < sets[i].n; c++) {
			char *got_p = lm_xasprintf("%s/out/%s/nc%d/sg0/def.json",
						   d, sets[i].set, c);
			char *rel = lm_xasprintf("tests/fixtures/gen/%s/nc%d."
						 "golden", sets[i].set, c);
			char *want_p = tu_srcpath(rel);
			char *got = tu_read(got_p), *want = tu_read(want_p);
			ck_assert_msg(got != NULL, "%s", got_p);
			ck_assert_msg(want != NULL, "%s", want_p);
			ck_assert_msg(strcmp(got, want) == 0, "%s differs from "
				      "%s", got_p, want_p);
			free(got);
			free(want);
			free(got_p);
			free(want_p);
			free(rel);
		}
	}
	free(d);
}
END_TEST


/* ---- --loops -------------------------------------------------------- */

/* Is a an operand of kind (the carried kinds: their JSON's "kind"). */
static int arg_is(const lm_arg *a, const char *kind)
{
	const cJSON *k = a->kind == LM_ARG_OPAQUE && a->extra
		? cJSON_GetObjectItemCaseSensitive(a->extra, "kind") : NULL;
	return cJSON_IsString(k) && !strcmp(k->valuestring, kind);
}

/*
** With loops every segment's K tiles are one static Loop k in [0, T),
** T >= 2: two DMA loads whose DRAM source is a symbolic_ap affine in k
** (coefficient 128 rows), a Matmult with an affine accumulation_flag, each
** with a loopnest and loop-carried dependencies on the body's Matmult;
** no Matmult is left outside a loop.
*/
START_TEST(test_loops_structure)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		ls_gen_opts o = {1 + (int)(seed % 3), seed, LS_GEN_SMALL, NULL,
				 NULL, 1, 0, 0, 0, 0};
		lm_module **mods;
		ls_gen_file *files;
		int nf, loops = 0;
		lm_error err;
		ck_assert_msg(ls_gen(&o, "out", &mods, &files, &nf, &err) == 0,
			      "%s", err.msg);
		for (int c = 0; c < o.cores; c++) {
			const lm_block *b = &mods[c]->functions[0].blocks[0];
			for (int i = 0; i < b->n_insts; i++) {
				const lm_inst *in = &b->insts[i];
				ck_assert(in->op != LM_OP_MATMULT);
				if (in->op != LM_OP_LOOP)
					continue;
				loops++;
				ck_assert(in->has_axis);
				ck_assert_int_eq(in->axis.lb, 0);
				ck_assert_int_ge(in->axis.ub, 2);
				ck_assert_int_le(in->axis.ub, 3);
				ck_assert_int_eq(in->n_blocks, 1);
				const lm_block *bd = &in->blocks[0];
				ck_assert_int_eq(bd->n_insts, 3);
				for (int k = 0; k < 3; k++) {
					const lm_inst *x = &bd->insts[k];
					ck_assert_int_eq(x->op, k < 2 ?
							 LM_OP_DMACOPY :
							 LM_OP_MATMULT);
					ck_assert_int_eq(x->n_lc_deps, 1);
					ck_assert_str_eq(x->lc_deps[0],
							 bd->insts[2].name);
					if (k < 2)
						ck_assert(arg_is(&x->ins[0],
							"symbolic_ap"));
				}
				ck_assert_int_ge(bd->insts[2].n_deps, 2);
			}
			lm_module_free(mods[c]);
		}
		free(mods);
		ls_gen_files_free(files, nf);
		ck_assert_int_ge(loops, 2 * (1 + (int)(seed % 3)));
	}
}
END_TEST

/* The same options give the same bytes with loops; the seed's program
** without them is another (and the golden sets pin that one). */
START_TEST(test_loops_same_bytes)
{
	ls_gen_opts o = {3, 41, LS_GEN_SMALL, NULL, NULL, 1, 0, 0, 0, 0};
	char *a = set_text_opts(&o), *b = set_text_opts(&o);
	char *plain = set_text(3, 41, LS_GEN_SMALL);
	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, plain);
	ck_assert_ptr_nonnull(strstr(a, "\"Loop\""));
	ck_assert_ptr_null(strstr(plain, "\"Loop\""));
	free(a);
	free(b);
	free(plain);
}
END_TEST

/* Linked and per-core runs agree on generated loop sets under perturbed
** schedules, from the CLI (gen --loops, and fuzz --loops). */
START_TEST(test_loops_diff_pass)
{
	char *d = tu_tmpdir("genloops");
	tu_run r = tu_lncsim(d, "gen", "--cores", "3", "--seed", "9",
			     "--loops", "-o", "out", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "diff", "--no-db", "--schedules", "2", "--seed", "9",
		      "out/gen9", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "6", "--jobs",
		      "1", "--loops", "--schedules", "2", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "6 passed");
	tu_run_free(&r);
	free(d);
}
END_TEST

/* ---- --sync semaphores, --dynamic ---------------------------------- */

/* The instruction names of a block and its bodies, in program order. */
static void names_of(const lm_block *b, lm_buf *out)
{
	for (int i = 0; i < b->n_insts; i++) {
		const lm_inst *in = &b->insts[i];
		if (in->op != LM_OP_REGMOVE && in->op != LM_OP_REGALU &&
		    in->op != LM_OP_AEBARRIER && in->op != LM_OP_GROUPRESET) {
			lm_buf_puts(out, in->name);
			lm_buf_puts(out, " ");
		}
		for (int k = 0; k < in->n_blocks; k++)
			names_of(&in->blocks[k], out);
	}
}

/*
** Every instruction of a block (and of its bodies) synchronized by
** sync_info alone: no dependencies, each waits on a declared id (or on a
** queue instance's own semaphore by name) and every one but the register
** ops, the loops and the queue switches updates exactly one id in 1..8;
** counts the register waits (sem-ge-reg) into *n_reg.
*/
static void sync_only(const lm_block *b, int *n_reg, int *n_upd)
{
	for (int i = 0; i < b->n_insts; i++) {
		const lm_inst *in = &b->insts[i];
		int passive = in->op == LM_OP_REGMOVE ||
			      in->op == LM_OP_REGALU ||
			      in->op == LM_OP_LOOP || in->op == LM_OP_DYNLOOP ||
			      in->op == LM_OP_SWITCHQUEUE ||
			      in->op == LM_OP_AEBARRIER ||
			      in->op == LM_OP_GROUPRESET;
		ck_assert_msg(in->n_deps == 0 && in->n_lc_deps == 0,
			      "%s has dependencies", in->name);
		for (int k = 0; k < in->n_wait; k++) {
			const lm_sync *w = &in->wait[k];
			if (w->semaphore)
				ck_assert(!strncmp(w->semaphore, "s_", 2));
			else if (w->id >= 16) /* a hand-off's: 1 */
				ck_assert(w->has_value && w->value == 1);
			else
				ck_assert(w->id >= 1 && w->id <= 8);
			if (w->mode == LM_WAIT_SEM_GE_REG)
				(*n_reg)++;
			else
				ck_assert_int_eq(w->mode, LM_WAIT_SEM_GE_IMM);
		}
		if (in->n_update == 2) { /* a hand-off's save releases its
					    consumer's core */
			ck_assert(in->op == LM_OP_DMACOPY);
			ck_assert(in->update[1].id >= 16 && in->update[1].has_core);
			ck_assert_int_eq(in->update[1].mode, LM_UPD_SEM_INC);
		} else {
			ck_assert_int_eq(in->n_update, passive ? 0 : 1);
		}
		if (!passive) {
			ck_assert_ptr_null(in->update[0].semaphore);
			ck_assert(in->update[0].id >= 1 && in->update[0].id <= 8);
			ck_assert_int_eq(in->update[0].mode, LM_UPD_SEM_INC);
			(*n_upd)++;
		}
		for (int k = 0; k < in->n_blocks; k++)
			sync_only(&in->blocks[k], n_reg, n_upd);
	}
}

/*
** --sync semaphores orders through sync_info only, declares the eight
** id-form semaphores, and is the same program otherwise: the same
** instructions in the same order as the plain seed (the generator draws
** the same numbers). With loops the body's waits are register waits.
*/
START_TEST(test_sync_structure)
{
	for (uint64_t seed = 1; seed <= 6; seed++)
		for (int loops = 0; loops < 2; loops++) {
			ls_gen_opts o = {1 + (int)(seed % 3), seed, LS_GEN_SMALL,
					 NULL, NULL, loops, LS_GEN_SYNC_SEMAPHORES,
					 0, 0, 0};
			ls_gen_opts p = o;
			lm_module **ms, **mp;
			ls_gen_file *fs, *fp;
			int nfs, nfp, n_reg = 0, n_fence = 0, n_loops = 0, n_hs = 0;
			lm_error err;
			p.sync = LS_GEN_SYNC_DEPS;
			ck_assert_msg(ls_gen(&o, "out", &ms, &fs, &nfs, &err) == 0,
				      "%s", err.msg);
			ck_assert_msg(ls_gen(&p, "out", &mp, &fp, &nfp, &err) == 0,
				      "%s", err.msg);
			for (int c = 0; c < o.cores; c++) {
				lm_buf a = LM_BUF_INIT, b = LM_BUF_INIT;
				int ids = 0, n_upd = 0;
				for (int s = 0; s < ms[c]->n_semaphores; s++) {
					const lm_semaphore *sm = &ms[c]->semaphores[s];
					if (sm->has_id && sm->id < 16)
						ids |= 1 << sm->id;
					else if (sm->has_id)
						n_hs++;
				}
				ck_assert_int_eq(ids, 0x1fe);
				const lm_block *b0 = &ms[c]->functions[0].blocks[0];
				sync_only(b0, &n_reg, &n_upd);
				for (int i = 0; i < b0->n_insts; i++) {
					lm_opcode op = b0->insts[i].op;
					n_fence += op == LM_OP_GROUPRESET;
					n_loops += op == LM_OP_LOOP;
				}
				ck_assert_int_gt(n_upd, 8);
				names_of(&ms[c]->functions[0].blocks[0], &a);
				names_of(&mp[c]->functions[0].blocks[0], &b);
				lm_buf_put(&a, "", 0);
				lm_buf_put(&b, "", 0);
				ck_assert_str_eq(lm_buf_cstr(&a), lm_buf_cstr(&b));
				lm_buf_free(&a);
				lm_buf_free(&b);
				lm_module_free(ms[c]);
				lm_module_free(mp[c]);
			}
			/* a loop's waits on registers, its fence after it */
			if (loops)
				ck_assert_int_ge(n_reg, 2 * o.cores);
			else
				ck_assert_int_eq(n_reg, 0);
			ck_assert_int_eq(n_fence, n_loops);
			/* a hand-off's semaphore on both of its cores */
			ck_assert_int_eq(n_hs % 2, 0);
			if (o.cores > 1)
				ck_assert_int_gt(n_hs, 0);
			free(ms);
			free(mp);
			ls_gen_files_free(fs, nfs);
			ls_gen_files_free(fp, nfp);
		}
}
END_TEST

/* Is expression e one IntRuntimeValueKind term of register reg? */
static int reg_term(const lm_affine *e, const char *reg)
{
	cJSON *j = lm_affine_to_json(e, 2);
	char *t = j ? cJSON_PrintUnformatted(j) : NULL;
	int ok = t && strstr(t, "IntRuntimeValueKind") && strstr(t, reg);
	cJSON_free(t);
	cJSON_Delete(j);
	return ok;
}

/*
** --dynamic: every K loop is a DynamicForLoop whose ub is register
** r_trip, moved there (2 or 3) on every engine just before the loop's
** register set-up; its loads read DRAM through a register_ap.
*/
START_TEST(test_dynamic_structure)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		ls_gen_opts o = {1 + (int)(seed % 3), seed, LS_GEN_SMALL, NULL,
				 NULL, 0, (int)(seed % 2), 1, 0, 0};
		lm_module **mods;
		ls_gen_file *files;
		int nf, loops = 0;
		lm_error err;
		ck_assert_msg(ls_gen(&o, "out", &mods, &files, &nf, &err) == 0,
			      "%s", err.msg);
		for (int c = 0; c < o.cores; c++) {
			const lm_block *b = &mods[c]->functions[0].blocks[0];
			int64_t trip = -1;
			for (int i = 0; i < b->n_insts; i++) {
				const lm_inst *in = &b->insts[i];
				ck_assert(in->op != LM_OP_MATMULT &&
					  in->op != LM_OP_LOOP);
				if (in->op == LM_OP_REGMOVE &&
				    in->engine == LM_ENG_ALL) {
					ck_assert_int_eq(in->ins[0].kind, LM_ARG_IMM);
					trip = (int64_t)in->ins[0].imm;
				}
				if (in->op != LM_OP_DYNLOOP)
					continue;
				loops++;
				ck_assert(trip == 2 || trip == 3);
				ck_assert(reg_term(in->axis.ub_e, "r_trip"));
				const lm_block *bd = &in->blocks[0];
				int n_ld = 0;
				for (int k = 0; k < bd->n_insts; k++)
					if (bd->insts[k].op == LM_OP_DMACOPY) {
						ck_assert(arg_is(&bd->insts[k].ins[0],
								 "register_ap"));
						n_ld++;
					}
				ck_assert_int_eq(n_ld, 2);
				trip = -1;
			}
			lm_module_free(mods[c]);
		}
		free(mods);
		ls_gen_files_free(files, nf);
		ck_assert_int_ge(loops, 2 * (1 + (int)(seed % 3)));
	}
}
END_TEST

/* gen --dynamic --sync semaphores runs and diffs clean under perturbed
** schedules; so do fuzz cases with each of the new options. */
START_TEST(test_sync_diff_pass)
{
	char *d = tu_tmpdir("gensync");
	tu_run r = tu_lncsim(d, "gen", "--cores", "3", "--seed", "9",
			     "--dynamic", "--sync", "semaphores", "-o", "out",
			     NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	r = tu_lncsim(d, "diff", "--no-db", "--schedules", "3", "--seed", "9",
		      "out/gen9", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	tu_run_free(&r);
	static const char *const modes[][3] = {
		{ "--sync", "semaphores", NULL },
		{ "--loops", "--sync", "semaphores" },
		{ "--dynamic", NULL, NULL },
	};
	for (int m = 0; m < 3; m++) {
		r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "6",
			      "--cores", "1-4", "--jobs", "1", "--schedules", "2",
			      modes[m][0], modes[m][1], modes[m][2], NULL);
		ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
		ck_assert_contains(r.out, "6 passed");
		tu_run_free(&r);
	}
	r = tu_lncsim(d, "gen", "--sync", "dependencies", "-o", "x", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--sync must be deps or semaphores");
	tu_run_free(&r);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* The first Matmult inside a loop body of module JSON j (NULL: none). */
static cJSON *body_matmult(cJSON *j)
{
	cJSON *bl = cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(j, "functions"), 0), "blocks"), *b, *in;
	cJSON_ArrayForEach(b, bl)
		cJSON_ArrayForEach(in, cJSON_GetObjectItem(b, "instructions")) {
			cJSON *op = cJSON_GetObjectItem(in, "opcode"), *x;
			if (!cJSON_IsString(op) || strcmp(op->valuestring, "Loop"))
				continue;
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(cJSON_GetArrayItem(
				cJSON_GetObjectItem(in, "blocks"), 0),
							    "instructions"))
				if (!strcmp(cJSON_GetObjectItem(x, "opcode")
					    ->valuestring, "Matmult"))
					return x;
		}
	return NULL;
}

/*
** The teeth of --sync semaphores: a generated case whose first loop's
** Matmult has one on_wait (its two loads on one queue instance) passes;
** with that one on_wait removed the Matmult no longer waits for its
** tiles, and diff fails: the reference reads the tile before any load
** wrote it. The same for the on_wait of a cross-core hand-off.
*/
START_TEST(test_sync_wait_removed)
{
	char *d = tu_tmpdir("gensyncw");
	int found = 0;
	for (uint64_t seed = 1; seed <= 30 && !found; seed++) {
		char s[24], *set, *path, *text;
		snprintf(s, sizeof s, "%llu", (unsigned long long)seed);
		tu_run r = tu_lncsim(d, "gen", "--cores", "1", "--seed", s,
				     "--loops", "--sync", "semaphores", "-o", "out",
				     "--force", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		set = lm_xasprintf("out/gen%s", s);
		path = lm_xasprintf("%s/%s/nc0/sg0/def.json", d, set);
		text = tu_read(path);
		ck_assert_ptr_nonnull(text);
		cJSON *j = cJSON_Parse(text), *mm = body_matmult(j);
		ck_assert_ptr_nonnull(mm);
		cJSON *w = cJSON_GetObjectItem(cJSON_GetObjectItem(mm,
								   "sync_info"),
					       "on_wait");
		if (cJSON_GetArraySize(w) == 1) {
			found = 1;
			r = tu_lncsim(d, "diff", "--no-db", "--seed", s, set, NULL);
			ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
			tu_run_free(&r);
			cJSON_DeleteItemFromArray(w, 0);
			char *out = cJSON_Print(j);
			char *rel = lm_xasprintf("%s/nc0/sg0/def.json", set);
			free(tu_write(d, rel, out));
			r = tu_lncsim(d, "diff", "--no-db", "--seed", s, set, NULL);
			ck_assert_msg(r.status == 1, "seed %s: not caught: %s%s",
				      s, r.out, r.err);
			ck_assert_contains(r.out, "reference run failed: ");
			ck_assert_contains(r.out, "reads uninitialized memory");
			tu_run_free(&r);
			free(rel);
			cJSON_free(out);
		}
		cJSON_Delete(j);
		free(text);
		free(path);
		free(set);
	}
	ck_assert(found);
	/* cross-core: seed 1 on two cores hands core 0's acc to core 1;
	   without the wait on the hand-off's semaphore core 1 loads the
	   view before the save wrote it */
	tu_run r = tu_lncsim(d, "gen", "--cores", "2", "--seed", "1", "--sync",
			     "semaphores", "-o", "out", "--force", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *path = lm_path_join(d, "out/gen1/nc1/sg0/def.json");
	char *text = tu_read(path);
	cJSON *j = cJSON_Parse(text), *b, *in;
	int cut = 0;
	cJSON_ArrayForEach(b, cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(j, "functions"), 0), "blocks"))
		cJSON_ArrayForEach(in, cJSON_GetObjectItem(b, "instructions")) {
			cJSON *w = cJSON_GetObjectItem(cJSON_GetObjectItem(
				in, "sync_info"), "on_wait");
			for (int k = cJSON_GetArraySize(w) - 1; k >= 0; k--) {
				cJSON *id = cJSON_GetObjectItem(
					cJSON_GetArrayItem(w, k), "id");
				if (cJSON_IsNumber(id) && id->valueint >= 16) {
					cJSON_DeleteItemFromArray(w, k);
					cut++;
				}
			}
		}
	ck_assert_int_eq(cut, 1);
	char *out = cJSON_Print(j);
	free(tu_write(d, "out/gen1/nc1/sg0/def.json", out));
	r = tu_lncsim(d, "diff", "--no-db", "--seed", "1", "out/gen1", NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_contains(r.out, "reads uninitialized memory: ins[0] 'h0_in'");
	tu_run_free(&r);
	cJSON_free(out);
	cJSON_Delete(j);
	free(text);
	free(path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* `lncsim diff --schedules 2 --race --seed SD SET` in d passes. */
static void diff_passes(const char *d, const char *sd, const char *set)
{
	tu_run r = tu_lncsim(d, "diff", "--no-db", "--schedules", "2",
			     "--race", "--seed", sd, set, NULL);
	ck_assert_msg(r.status == 0, "seed %s: %s%s", sd, r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	tu_run_free(&r);
}

/* ---- --by-name ---------------------------------------------------------- */

/* Allocations of core module m whose name starts with h and a digit, of
** kind k (views: Internal with a remote_local_target). */
static int handoff_allocs(const lm_module *m, lm_tensorkind k, int views)
{
	const lm_function *f = &m->functions[0];
	int n = 0;
	for (int a = 0; a < f->n_allocs; a++) {
		const lm_alloc *x = &f->allocs[a];
		if (x->name[0] == 'h' && x->name[1] >= '0' &&
		    x->name[1] <= '9' && x->kind == k &&
		    !views == !x->has_remote)
			n++;
	}
	return n;
}

static int n_insts(const lm_module *m)
{
	int n = 0;
	for (int b = 0; b < m->functions[0].n_blocks; b++)
		n += m->functions[0].blocks[b].n_insts;
	return n;
}

/*
** --by-name: about half the hand-offs name-matched (the consumer's
** ExternalInput h<i>, no view), the rest views as before; without it none
** is; the programs are otherwise the same (same instructions per core).
** gen + diff with perturbed schedules and the race detector pass, and so
** does a fuzz campaign; skipping copy_allocs refuses the link by name.
*/
START_TEST(test_by_name)
{
	int named = 0, views = 0;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		lm_module **mods[2];
		ls_gen_file *files[2];
		int nf[2];
		lm_error e;
		for (int bn = 0; bn < 2; bn++) {
			ls_gen_opts o = {2 + (int)(seed % 3), seed, LS_GEN_SMALL,
					 NULL, NULL, (int)(seed % 2), 0, 0, 0, bn};
			ck_assert_msg(ls_gen(&o, "out", &mods[bn], &files[bn],
					     &nf[bn], &e) == 0, "%s", e.msg);
		}
		for (int c = 0; c < 2 + (int)(seed % 3); c++) {
			ck_assert_int_eq(handoff_allocs(mods[0][c],
						LM_TK_EXTERNAL_INPUT, 0), 0);
			named += handoff_allocs(mods[1][c],
						LM_TK_EXTERNAL_INPUT, 0);
			views += handoff_allocs(mods[1][c], LM_TK_INTERNAL, 1);
			ck_assert_int_eq(n_insts(mods[0][c]),
					 n_insts(mods[1][c]));
			ck_assert_int_eq(handoff_allocs(mods[0][c],
						LM_TK_INTERNAL, 1) +
					 handoff_allocs(mods[0][c],
						LM_TK_EXTERNAL_INPUT, 0),
					 handoff_allocs(mods[1][c],
						LM_TK_INTERNAL, 1) +
					 handoff_allocs(mods[1][c],
						LM_TK_EXTERNAL_INPUT, 0));
			lm_module_free(mods[0][c]);
			lm_module_free(mods[1][c]);
		}
		for (int bn = 0; bn < 2; bn++) {
			free(mods[bn]);
			ls_gen_files_free(files[bn], nf[bn]);
		}
	}
	ck_assert_int_gt(named, 3);
	ck_assert_int_gt(views, 3);

	char *d = tu_tmpdir("genbyname");
	for (int seed = 1; seed <= 8; seed++) {
		char sd[16], cores[8], set[32];
		snprintf(sd, sizeof sd, "%d", seed);
		snprintf(cores, sizeof cores, "%d", 2 + seed % 3);
		snprintf(set, sizeof set, "out/gen%d", seed);
		tu_run r = tu_lncsim(d, "gen", "--cores", cores, "--seed", sd,
				     "--by-name", "-o", "out", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		diff_passes(d, sd, set);
	}
	tu_run r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "30",
			     "--jobs", "1", "--race", "--by-name", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "30 passed");
	tu_run_free(&r);
	r = tu_lncsim(d, "diff", "--no-db", "--skip=copy_allocs,verify",
		      "out/gen1", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "external input 'h");
	ck_assert_contains(r.err, "is also declared by core");
	tu_run_free(&r);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* ---- --compute ---------------------------------------------------------- */

/* Each core of a --compute set holds one TensorReduce, TensorScalarPtr,
** IndirectLoad and Select, the plain set of the seed none; the compute
** form is refused with --sync semaphores. */
START_TEST(test_compute_ops)
{
	static const lm_opcode ops[4] = {
		LM_OP_TENSORREDUCE, LM_OP_TSPTR, LM_OP_INDIRECTLOAD,
		LM_OP_SELECT,
	};
	for (uint64_t seed = 1; seed <= 6; seed++)
		for (int comp = 0; comp < 2; comp++) {
			ls_gen_opts o = {1 + (int)(seed % 4), seed, LS_GEN_SMALL,
					 NULL, NULL, (int)(seed % 2), 0, 0, comp, 0};
			lm_module **mods;
			ls_gen_file *files;
			int nf, n_npy = 0;
			lm_error e;
			ck_assert_msg(ls_gen(&o, "out", &mods, &files, &nf, &e) ==
				      0, "%s", e.msg);
			for (int c = 0; c < o.cores; c++) {
				int n[4] = {0};
				const lm_function *f = &mods[c]->functions[0];
				for (int b = 0; b < f->n_blocks; b++)
					for (int i = 0; i < f->blocks[b].n_insts;
					     i++)
						for (int k = 0; k < 4; k++)
							n[k] += f->blocks[b].insts[i].op
								== ops[k];
				for (int k = 0; k < 4; k++)
					ck_assert_int_eq(n[k], comp);
				lm_module_free(mods[c]);
			}
			for (int i = 0; i < nf; i++)
				n_npy += strstr(files[i].relpath, "/cix.npy") != NULL;
			ck_assert_int_eq(n_npy, comp ? o.cores : 0);
			free(mods);
			ls_gen_files_free(files, nf);
		}
	ls_gen_opts o = {2, 1, LS_GEN_SMALL, NULL, NULL, 0, LS_GEN_SYNC_SEMAPHORES,
			 0, 1, 0};
	lm_module **mods;
	ls_gen_file *files;
	int nf;
	lm_error e;
	ck_assert_int_ne(ls_gen(&o, "out", &mods, &files, &nf, &e), 0);
	ck_assert_msg(strstr(e.msg, "--sync semaphores") != NULL, "%s", e.msg);
}
END_TEST

/* The compute form passes the differential check with perturbed
** schedules and the race detector on 20 seeds, in gen + diff and in a
** fuzz campaign; --compute with --sync semaphores is a usage error. */
START_TEST(test_compute_diff_pass)
{
	char *d = tu_tmpdir("gencomp");
	for (int seed = 1; seed <= 20; seed++) {
		char sd[16], cores[8], set[32];
		snprintf(sd, sizeof sd, "%d", seed);
		snprintf(cores, sizeof cores, "%d", 1 + seed % 4);
		snprintf(set, sizeof set, "out/gen%d", seed);
		tu_run r = tu_lncsim(d, "gen", "--cores", cores, "--seed", sd,
				     "--compute", seed % 3 ? "--size" : "--loops",
				     seed % 3 ? "small" : "--dynamic", "-o",
				     "out", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		diff_passes(d, sd, set);
	}
	tu_run r = tu_lncsim(d, "fuzz", "--no-db", "-q", "--count", "30",
			     "--jobs", "1", "--race", "--compute", "--sync",
			     "deps", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "30 passed");
	tu_run_free(&r);
	r = tu_lncsim(d, "gen", "--compute", "--sync", "semaphores", "-o", "x",
		      NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--compute takes --sync deps only");
	tu_run_free(&r);
	r = tu_lncsim(d, "fuzz", "--no-db", "--count", "1", "--compute",
		      "--sync", "semaphores", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "--compute takes --sync deps only");
	tu_run_free(&r);
	tu_rmtree(d);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gen");
	TCase *tc = tcase_create("gen");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_same_seed_same_bytes);
	tcase_add_test(tc, test_valid_and_featureful);
	tcase_add_test(tc, test_bad_cores);
	tcase_add_test(tc, test_cli_gen);
	tcase_add_test(tc, test_golden_sets);
	tcase_add_test(tc, test_loops_structure);
	tcase_add_test(tc, test_loops_same_bytes);
	tcase_add_test(tc, test_loops_diff_pass);
	tcase_add_test(tc, test_sync_structure);
	tcase_add_test(tc, test_dynamic_structure);
	tcase_add_test(tc, test_sync_diff_pass);
	tcase_add_test(tc, test_sync_wait_removed);
	suite_add_tcase(s, tc);
	TCase *tcc = tcase_create("compute");
	tcase_set_timeout(tcc, 240);
	tcase_add_test(tcc, test_compute_ops);
	tcase_add_test(tcc, test_compute_diff_pass);
	suite_add_tcase(s, tcc);
	tcc = tcase_create("by_name");
	tcase_set_timeout(tcc, 240);
	tcase_add_test(tcc, test_by_name);
	suite_add_tcase(s, tcc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

/*
** test_optable.c -- the instruction-set tables model/ops.def and
** model/fields.def are well formed and say what the compiler's record of
** each opcode's keys ("the key record") says: 110 dense ordinals with
** unique names, every field group named by an op defined and every
** defined group used, keys sorted and unique in their group, enum types
** exactly on the enum rows, the flag rules, the per-family op counts, and
** spot checks of the richest records.
**
** The tables are read here through this file's own LM_OPDEF / LM_FIELD,
** so the test sees the rows exactly as written.
*/
#include "common.h"
#include "arch.h"
#include "optable.h"
#include "testutil.h"

#include <string.h>

typedef struct op_row {
	int ord;
	const char *name;
	lm_opfamily fam;
	unsigned eng, flags;
	const char *g1, *g2;
} op_row;

static const op_row ops[] = {
#define LM_OPDEF(ord, name, fam, eng, flags, g1, g2, nin, nout)             \
	{ ord, #name, LM_FAM_##fam, eng, flags, #g1, #g2 },
#include "ops.def"
#undef LM_OPDEF
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

typedef struct field_row {
	const char *group, *key;
	lm_fieldtype type;
	const char *enumtype;
	long long def;
	unsigned flags;
	lm_refkind ref;
} field_row;

static const field_row fields[] = {
#define LM_FIELD(group, key, type, enumtype, def, flags, ref)               \
	{ #group, key, LM_FT_##type, #enumtype, def, flags, LM_REF_##ref },
#include "fields.def"
#undef LM_FIELD
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static const char *const family_names[] = {
#define LM_X_(f) #f,
	LM_OPFAMILY_LIST(LM_X_)
#undef LM_X_
};

/* The 19 keys of the common instruction header: never an op field. */
static const char *const header_keys[] = {
	"origin", "opcode", "engine", "engine_id", "scheduled_start",
	"scheduled_end", "optin_passes", "dependencies",
	"loop_carried_dependencies", "unroll_dependencies", "sync_info",
	"ins", "indirection_ins", "outs", "debug", "loopnest", "predicates",
	"order", "dma_trigger_debug_update_semaphore_id",
};

static int is_none(const char *g) { return !strcmp(g, "NONE"); }

static const op_row *find_op(const char *name)
{
	for (int i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	ck_abort_msg("no op %s in ops.def", name);
	return NULL;
}

static int group_rows(const char *group)
{
	int n = 0;
	for (int i = 0; i < NFIELDS; i++)
		n += !strcmp(fields[i].group, group);
	return n;
}

/* The row of `key` in op `name`'s groups, or NULL. */
static const field_row *op_field(const char *name, const char *key)
{
	const op_row *op = find_op(name);
	for (int i = 0; i < NFIELDS; i++)
		if ((!strcmp(fields[i].group, op->g1) ||
		     !strcmp(fields[i].group, op->g2)) &&
		    !strcmp(fields[i].key, key))
			return &fields[i];
	return NULL;
}

static int op_nkeys(const char *name)
{
	const op_row *op = find_op(name);
	int n = 0;
	if (!is_none(op->g1))
		n += group_rows(op->g1);
	if (!is_none(op->g2))
		n += group_rows(op->g2);
	return n;
}

/* ---- ops.def ----------------------------------------------------------- */

START_TEST(test_ops_dense)
{
	ck_assert_int_eq(NOPS, 110);
	ck_assert_int_eq(LM_IT_COUNT, 110);
	for (int i = 0; i < NOPS; i++)
		ck_assert_msg(ops[i].ord == i, "row %d (%s) has ordinal %d",
			      i, ops[i].name, ops[i].ord);
	ck_assert_int_eq(LM_IT_Generic, 0);
	ck_assert_int_eq(LM_IT_Matmult, 8);
	ck_assert_int_eq(LM_IT_NKIKernel, 55);
	ck_assert_int_eq(LM_IT_QuantizeMx, 96);
	ck_assert_int_eq(LM_IT_TongaReduceMacroSymbolic, 109);
}
END_TEST

START_TEST(test_ops_names_unique)
{
	for (int i = 0; i < NOPS; i++)
		for (int j = i + 1; j < NOPS; j++)
			ck_assert_msg(strcmp(ops[i].name, ops[j].name),
				      "name %s at %d and %d", ops[i].name,
				      i, j);
}
END_TEST

/*
** The key record's per-family tally, one home per op: IndirectCopy (listed
** under copy and indirect) counts under indirect, and TensorLoad /
** TensorSave (in no tally row, but named copy ops) under copy.
*/
START_TEST(test_family_counts)
{
	static const int want[LM_FAM_COUNT] = {
		[LM_FAM_MATMUL] = 6, [LM_FAM_ACT] = 16, [LM_FAM_COPY] = 19,
		[LM_FAM_DMA] = 11, [LM_FAM_COLL] = 18, [LM_FAM_INDIRECT] = 8,
		[LM_FAM_CONTROL] = 13, [LM_FAM_SYNC] = 9, [LM_FAM_KERNEL] = 4,
		[LM_FAM_MISC] = 6,
	};
	int got[LM_FAM_COUNT] = {0}, total = 0;
	for (int i = 0; i < NOPS; i++)
		got[ops[i].fam]++;
	for (int f = 0; f < LM_FAM_COUNT; f++) {
		ck_assert_msg(got[f] == want[f], "family %s: %d ops, want %d",
			      family_names[f], got[f], want[f]);
		total += want[f];
	}
	ck_assert_int_eq(total, 110);
	ck_assert_int_eq(find_op("IndirectCopy")->fam, LM_FAM_INDIRECT);
	ck_assert_int_eq(find_op("TensorLoad")->fam, LM_FAM_COPY);
	ck_assert_int_eq(find_op("CollectiveCompute")->fam, LM_FAM_COLL);
}
END_TEST

/* The flag sets the compiler's opcode table names outright. */
START_TEST(test_op_flags)
{
	static const int base[] = { 0, 7, 18, 47, 68, 77 };
	static const int kernel[] = { 53, 54, 55, 56 };
	static const int blocks[] = { 105, 106, 107, 108 };
	int nbase = 0, nkernel = 0, nblocks = 0, nlowered = 0;
	for (int i = 0; i < NOPS; i++) {
		nbase += !!(ops[i].flags & LM_OPF_BASE);
		nkernel += !!(ops[i].flags & LM_OPF_KERNEL);
		nblocks += !!(ops[i].flags & LM_OPF_BLOCKS);
		nlowered += !!(ops[i].flags & LM_OPF_LOWERED);
		ck_assert_msg(ops[i].eng <= 0x3f, "%s engines", ops[i].name);
		ck_assert_msg(ops[i].flags <= 0xff, "%s flags", ops[i].name);
	}
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
		ck_assert(ops[base[i]].flags & LM_OPF_BASE);
	for (size_t i = 0; i < sizeof kernel / sizeof kernel[0]; i++)
		ck_assert(ops[kernel[i]].flags & LM_OPF_KERNEL);
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
		ck_assert(ops[blocks[i]].flags & LM_OPF_BLOCKS);
	ck_assert_int_eq(nbase, 6);
	ck_assert_int_eq(nkernel, 4);
	ck_assert_int_eq(nblocks, 4);
	ck_assert_int_eq(nlowered, 25);
	ck_assert(find_op("DMACopy")->flags & LM_OPF_DMA);
	ck_assert(find_op("SwitchQueueInstance")->flags & LM_OPF_DMA);
	ck_assert(find_op("SwitchQueueInstance")->flags & LM_OPF_SYNC);
	ck_assert(!(find_op("AbstractCopy")->flags & LM_OPF_DMA));
	ck_assert(find_op("CompareAndBranch")->flags & LM_OPF_CONTROL);
	ck_assert(!(find_op("NoOp")->flags & LM_OPF_CONTROL));
	/* ONCHIP: the compute opcodes lncsim runs, and no other */
	{
		static const char *const onchip[] = {
			"Activation", "Matmult", "Memset", "TensorCopy",
			"TensorScalar", "TensorTensor", "Iota",
			"TensorScalarAffineSelect", "TensorReduce",
			"TensorScalarPtr", "Reciprocal", "StreamTranspose",
			"Select", "CopyPredicated", "Max", "MaxIndex",
			"MatchReplace", "MaxIndexAndMatchReplace", "BNStats",
			"BNStatsAggregate", "RangeSelect", "Exponential",
			"ActivationReadAccumulator",
			"ReadActivationAccumulator", "StreamShuffle",
			"DveReadAccumulator", "IndirectCopy", "Gather",
		};
		const int n_onchip = (int)(sizeof onchip / sizeof *onchip);
		int n = 0;
		for (int i = 0; i < NOPS; i++)
			n += !!(ops[i].flags & LM_OPF_ONCHIP);
		ck_assert_int_eq(n, n_onchip);
		for (int i = 0; i < n_onchip; i++)
			ck_assert_msg(find_op(onchip[i])->flags & LM_OPF_ONCHIP,
				      "%s is not ONCHIP", onchip[i]);
	}

	/* engine bits follow lm_engine */
	ck_assert_uint_eq(LM_EB_PE, 1u << (LM_ENG_PE - 1));
	ck_assert_uint_eq(LM_EB_ACT, 1u << (LM_ENG_ACT - 1));
	ck_assert_uint_eq(LM_EB_DVE, 1u << (LM_ENG_DVE - 1));
	ck_assert_uint_eq(LM_EB_POOL, 1u << (LM_ENG_POOL - 1));
	ck_assert_uint_eq(LM_EB_SP, 1u << (LM_ENG_SP - 1));
	ck_assert_uint_eq(LM_EB_DMA, 1u << (LM_ENG_DMA - 1));
	ck_assert_uint_eq(find_op("Matmult")->eng, LM_EB_PE);
	ck_assert_uint_eq(find_op("TensorReduce")->eng,
			  LM_EB_POOL | LM_EB_DVE);
	ck_assert_uint_eq(find_op("GPSIMDSB2SB")->eng, LM_EB_POOL);
	ck_assert_uint_eq(find_op("CustomOp")->eng, 0);
}
END_TEST

/* ---- groups: ops.def against fields.def -------------------------------- */

START_TEST(test_groups_defined)
{
	for (int i = 0; i < NOPS; i++) {
		const op_row *op = &ops[i];
		ck_assert_msg(is_none(op->g1) || group_rows(op->g1) > 0,
			      "%s: group %s has no rows", op->name, op->g1);
		ck_assert_msg(is_none(op->g2) || group_rows(op->g2) > 0,
			      "%s: group %s has no rows", op->name, op->g2);
		ck_assert_msg(is_none(op->g2) || !is_none(op->g1),
			      "%s: second group without a first", op->name);
		ck_assert_msg(is_none(op->g1) || strcmp(op->g1, op->g2),
			      "%s: the same group twice", op->name);
	}
}
END_TEST

START_TEST(test_groups_used)
{
	for (int i = 0; i < NFIELDS; i++) {
		int used = 0;
		for (int j = 0; j < NOPS && !used; j++)
			used = !strcmp(ops[j].g1, fields[i].group) ||
			       !strcmp(ops[j].g2, fields[i].group);
		ck_assert_msg(used, "group %s is used by no op",
			      fields[i].group);
		ck_assert_msg(!is_none(fields[i].group), "a group named NONE");
	}
}
END_TEST

/* An op's two groups share no key (a key has one row per op). */
START_TEST(test_groups_disjoint)
{
	for (int i = 0; i < NOPS; i++) {
		if (is_none(ops[i].g2))
			continue;
		for (int a = 0; a < NFIELDS; a++) {
			if (strcmp(fields[a].group, ops[i].g1))
				continue;
			for (int b = 0; b < NFIELDS; b++)
				ck_assert_msg(strcmp(fields[b].group, ops[i].g2) ||
					      strcmp(fields[a].key, fields[b].key),
					      "%s: key %s in both groups",
					      ops[i].name, fields[a].key);
		}
	}
}
END_TEST

/* ---- fields.def -------------------------------------------------------- */

START_TEST(test_fields_sorted)
{
	ck_assert_int_gt(NFIELDS, 150);
	for (int i = 1; i < NFIELDS; i++) {
		const field_row *p = &fields[i - 1], *f = &fields[i];
		if (strcmp(p->group, f->group)) {
			/* a group ends: it must not start again later */
			for (int j = i; j < NFIELDS; j++)
				ck_assert_msg(strcmp(fields[j].group, p->group),
					      "group %s is not contiguous",
					      p->group);
			continue;
		}
		ck_assert_msg(strcmp(p->key, f->key) < 0,
			      "group %s: \"%s\" then \"%s\" (unsorted or "
			      "repeated)", f->group, p->key, f->key);
	}
}
END_TEST

START_TEST(test_fields_enumtype)
{
	for (int i = 0; i < NFIELDS; i++) {
		const field_row *f = &fields[i];
		int is_enum = f->type == LM_FT_ENUM || f->type == LM_FT_ENUM_LIST;
		ck_assert_msg(is_enum == !is_none(f->enumtype),
			      "%s \"%s\": enum type %s", f->group, f->key,
			      f->enumtype);
	}
}
END_TEST

START_TEST(test_fields_flags)
{
	for (int i = 0; i < NFIELDS; i++) {
		const field_row *f = &fields[i];
		ck_assert_msg(f->flags <= 0xf, "%s \"%s\": flags", f->group,
			      f->key);
		ck_assert_msg(!(f->flags & LM_FF_REQ) ||
			      !(f->flags & LM_FF_NEED),
			      "%s \"%s\": REQ and NEED", f->group, f->key);
		/* a needed key the writer skipped at its default would not
		   read back either (names have no default to skip) */
		ck_assert_msg(!(f->flags & LM_FF_NEED) ||
			      (f->flags & LM_FF_ALWAYS) ||
			      f->type == LM_FT_NAME || f->type == LM_FT_STR,
			      "%s \"%s\": NEED without ALWAYS", f->group, f->key);
		/* every name is checked: a reference kind on exactly the
		   rows holding names (and JSON that may be one) */
		if (f->type == LM_FT_NAME || f->type == LM_FT_NAME_LIST ||
		    f->type == LM_FT_KV)
			ck_assert_msg(f->ref != LM_REF_NONE,
				      "%s \"%s\": a name with no REF", f->group,
				      f->key);
		else
			ck_assert_msg(f->ref == LM_REF_NONE ||
				      f->type == LM_FT_JSON,
				      "%s \"%s\": REF on a %s", f->group, f->key,
				      lm_fieldtype_name(f->type));
		ck_assert_msg(f->ref >= 0 && f->ref < LM_REF_COUNT,
			      "%s \"%s\": REF", f->group, f->key);
		/* a required key the writer skipped would not read back */
		ck_assert_msg(!(f->flags & LM_FF_REQ) ||
			      (f->flags & LM_FF_ALWAYS),
			      "%s \"%s\": REQ without ALWAYS", f->group, f->key);
		ck_assert_msg(!(f->flags & LM_FF_REQ) ||
			      !(f->flags & LM_FF_WRITEONLY),
			      "%s \"%s\": REQ and WRITEONLY", f->group, f->key);
		for (size_t h = 0; h < sizeof header_keys / sizeof *header_keys;
		     h++)
			ck_assert_msg(strcmp(f->key, header_keys[h]),
				      "%s: header key \"%s\"", f->group, f->key);
		if (f->type != LM_FT_ENUM)
			ck_assert_msg(f->def == 0, "%s \"%s\": default %lld",
				      f->group, f->key, f->def);
	}
}
END_TEST

/* ---- spot checks against the key record ------------------------------ */

START_TEST(test_spot_matmul)
{
	static const char *const mm[] = { "Matmult", "MatmultMx",
					  "MatmultBase" };
	for (size_t m = 0; m < 3; m++) {
		const op_row *op = find_op(mm[m]);
		ck_assert_str_eq(op->g1, "MATMULT");
		ck_assert_str_eq(op->g2, "NONE");
		ck_assert_int_eq(op_nkeys(mm[m]), 13);
	}
	for (int i = 0; i < NFIELDS; i++)
		if (!strcmp(fields[i].group, "MATMULT"))
			ck_assert(fields[i].flags & LM_FF_ALWAYS);
	ck_assert_int_eq(op_nkeys("MatmultSparse"), 14);
	ck_assert_ptr_nonnull(op_field("MatmultSparse", "compress_ratio"));
	ck_assert_int_eq(op_field("Matmult", "tile_size")->type,
			 LM_FT_MA_INT_PAIR);
	ck_assert_str_eq(op_field("Matmult", "perf_mode")->enumtype,
			 "MatmultPerfMode");
	ck_assert_int_eq(op_nkeys("QuantizeMx"), 0);
}
END_TEST

/* The writer references exactly 11 keys; reduce_op is one of them. */
START_TEST(test_spot_activation)
{
	ck_assert_int_eq(op_nkeys("Activation"), 11);
	static const char *const keys[] = {
		"scale", "alpha", "can_read_uninit", "func", "acc",
		"is_activate2", "op0", "op1", "reverse0", "reverse1",
		"reduce_op",
	};
	for (size_t k = 0; k < 11; k++)
		ck_assert_msg(op_field("Activation", keys[k]) != NULL,
			      "Activation lacks \"%s\"", keys[k]);
	const field_row *f = op_field("Activation", "scale");
	ck_assert_int_eq(f->type, LM_FT_FLOAT);
	ck_assert(f->flags & LM_FF_REQ);
	f = op_field("Activation", "alpha");
	ck_assert_int_eq(f->type, LM_FT_FLOAT);
	ck_assert(f->flags & LM_FF_REQ);
	f = op_field("Activation", "func");
	ck_assert_str_eq(f->enumtype, "ActivationFunctionType");
	ck_assert_str_eq(op_field("Pool", "func")->enumtype,
			 "PoolFunctionType");
	ck_assert_str_eq(op_field("Activation", "acc")->enumtype,
			 "EngineAccumulationType");
}
END_TEST

START_TEST(test_spot_dma)
{
	static const char *const keys[] = { "queue", "dge_type", "mode",
					    "dma_qos" };
	for (size_t k = 0; k < 4; k++)
		ck_assert_msg(op_field("DMACopy", keys[k]) != NULL,
			      "DMACopy lacks \"%s\"", keys[k]);
	const field_row *f = op_field("DMACopy", "dge_type");
	ck_assert_str_eq(f->enumtype, "DGEType");
	ck_assert_int_eq(f->def, 3);
	ck_assert_int_eq(op_field("DMACopy", "queue")->type, LM_FT_NAME);
	ck_assert_str_eq(op_field("DMACopy", "mode")->enumtype, "CopyMode");
	ck_assert_int_eq(op_nkeys("DMACopy"), 13);
	ck_assert_ptr_null(op_field("DMADescriptorCopy", "queue"));
	ck_assert_ptr_nonnull(op_field("DMADescriptorCopy",
				       "num_tiling_dimensions"));
	ck_assert_int_eq(op_field("DMATrigger", "dma_blocks")->type,
			 LM_FT_NAME_LIST);
	ck_assert_ptr_null(op_field("AbstractCopy", "queue"));
}
END_TEST

START_TEST(test_spot_sync_kernel)
{
	ck_assert_ptr_nonnull(op_field("CoreBarrier", "id"));
	ck_assert_ptr_nonnull(op_field("CoreBarrier", "cores"));
	ck_assert_ptr_nonnull(op_field("CoreBarrier", "runtime_semaphore"));
	ck_assert_ptr_nonnull(op_field("NKIKernel", "func"));
	ck_assert_int_eq(op_field("NKIKernel", "func_args")->type, LM_FT_KV);
	ck_assert_ptr_nonnull(op_field("NKIKernel", "func_outs"));
	ck_assert(op_field("SwitchQueueInstance", "queue")->flags &
		  LM_FF_WRITEONLY);
	ck_assert(op_field("SwitchQueueInstance", "instance")->flags &
		  LM_FF_WRITEONLY);
	ck_assert(!(op_field("SwitchQueueInstance", "no_rearm")->flags &
		    LM_FF_WRITEONLY));
	ck_assert(op_field("Call", "target")->flags & LM_FF_WRITEONLY);
	ck_assert(op_field("Call", "arguments")->flags & LM_FF_WRITEONLY);
	ck_assert(op_field("CollectiveSend", "queue")->flags &
		  LM_FF_WRITEONLY);
	/* what the names name */
	ck_assert_int_eq(op_field("DMACopy", "queue")->ref, LM_REF_QUEUE);
	ck_assert_int_eq(op_field("CollectiveSend", "queue")->ref,
			 LM_REF_QUEUE);
	ck_assert_int_eq(op_field("SwitchQueueInstance", "instance")->ref,
			 LM_REF_QINST);
	ck_assert_int_eq(op_field("Call", "target")->ref, LM_REF_FUNC);
	ck_assert_int_eq(op_field("NKIKernel", "func")->ref, LM_REF_FUNC);
	ck_assert_int_eq(op_field("UnconditionalBranch", "target")->ref,
			 LM_REF_BLOCK);
	ck_assert_int_eq(op_field("DMATrigger", "dma_blocks")->ref,
			 LM_REF_DMABLOCK);
	ck_assert_int_eq(op_field("Loop", "registers")->ref, LM_REF_REG);
	ck_assert_int_eq(op_field("NKIKernel", "func_args")->ref,
			 LM_REF_ALLOC);
	/* required: the compiler's reader (REQ), lncsim (NEED) */
	ck_assert(op_field("TensorScalar", "reverse1")->flags & LM_FF_REQ);
	ck_assert(op_field("Activation", "reduce_op")->flags & LM_FF_REQ);
	ck_assert(op_field("Memset", "mode")->flags & LM_FF_REQ);
	ck_assert(op_field("CompareAndBranch", "on_true")->flags & LM_FF_REQ);
	ck_assert(!(op_field("Matmult", "tile_size")->flags & LM_FF_REQ));
	ck_assert(op_field("Matmult", "accumulation_flag")->flags &
		  LM_FF_NEED);
	ck_assert(op_field("DMACopy", "queue")->flags & LM_FF_NEED);
	ck_assert(op_field("Call", "target")->flags & LM_FF_NEED);
	ck_assert(op_field("CoreBarrier", "cores")->flags & LM_FF_NEED);
	ck_assert(!(op_field("DMACopy", "mode")->flags &
		    (LM_FF_REQ | LM_FF_NEED)));
	ck_assert_str_eq(op_field("GroupResetSemaphores", "mode")->enumtype,
			 "EventSemaphoreClearMode");
	ck_assert_int_eq(op_field("CollectiveCompute", "cc_type_hint")->def,
			 2);
	ck_assert_int_eq(op_field("CollectiveCompute", "cc_dim")->def, 1);
}
END_TEST

/* Ops that read through another op's reader carry its groups. */
START_TEST(test_spot_shared_readers)
{
	static const char *const same[][2] = {
		{ "Save", "Load" },
		{ "TensorCopyDynamicDst", "TensorCopyDynamicSrc" },
		{ "MaxIndexAndMatchReplace", "MatchReplace" },
		{ "IndirectSave", "IndirectLoad" },
		{ "BNBackprop2", "BNBackprop" },
		{ "MatmultMx", "Matmult" },
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		const op_row *a = find_op(same[i][0]), *b = find_op(same[i][1]);
		ck_assert_str_eq(a->g1, b->g1);
		ck_assert_str_eq(a->g2, b->g2);
	}
	ck_assert_str_eq(find_op("Save")->g1, "DMA");
	ck_assert_str_eq(find_op("NoOp")->g1, "NONE");
	ck_assert_str_eq(find_op("NoOp")->g2, "NONE");
	ck_assert_str_eq(find_op("TensorScalarAffineSelect")->g1,
			 find_op("Iota")->g1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("optable");
	TCase *tc = tcase_create("tables");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_ops_dense);
	tcase_add_test(tc, test_ops_names_unique);
	tcase_add_test(tc, test_family_counts);
	tcase_add_test(tc, test_op_flags);
	tcase_add_test(tc, test_groups_defined);
	tcase_add_test(tc, test_groups_used);
	tcase_add_test(tc, test_groups_disjoint);
	suite_add_tcase(s, tc);

	TCase *tf = tcase_create("fields");
	tcase_set_timeout(tf, 60);
	tcase_add_test(tf, test_fields_sorted);
	tcase_add_test(tf, test_fields_enumtype);
	tcase_add_test(tf, test_fields_flags);
	suite_add_tcase(s, tf);

	TCase *tsp = tcase_create("spot");
	tcase_set_timeout(tsp, 60);
	tcase_add_test(tsp, test_spot_matmul);
	tcase_add_test(tsp, test_spot_activation);
	tcase_add_test(tsp, test_spot_dma);
	tcase_add_test(tsp, test_spot_sync_kernel);
	tcase_add_test(tsp, test_spot_shared_readers);
	suite_add_tcase(s, tsp);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

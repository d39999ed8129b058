/*
** test_enumtab.c -- the enum table of model/enums.def and its lookups.
**
** The table's own rules (a value per type, the default present, canonical
** names round-trip, no spelling twice in a type), spot checks against the
** neuronx-cc 2.24 compiler's enums, and that every spelling the model's
** older tables (model/enums.c, model/dtype.c) read is still accepted.
*/
#include "common.h"
#include "enumtab.h"
#include "arch.h"
#include "dtype.h"
#include "module.h"
#include "testutil.h"

#include <string.h>

/* The ordinal s parses to in type t; fails the test when it does not. */
static int64_t ord_of(lm_enumtype t, const char *s)
{
	int64_t o = -12345;
	ck_assert_msg(lm_enum_parse(t, s, &o) == 0, "%s: \"%s\" unknown",
		      lm_enumtype_name(t), s);
	return o;
}

/* Distinct ordinals of t below LM_ENUM_LNCSIM_BASE (the compiler's). */
static int n_bir_ordinals(lm_enumtype t)
{
	int n = 0;
	for (int i = 0; i < lm_enum_count(t); i++) {
		int64_t o, p;
		int seen = 0;
		lm_enum_row(t, i, &o);
		for (int j = 0; j < i && !seen; j++) {
			lm_enum_row(t, j, &p);
			seen = p == o;
		}
		if (!seen && o < LM_ENUM_LNCSIM_BASE)
			n++;
	}
	return n;
}

START_TEST(test_types)
{
	ck_assert_str_eq(lm_enumtype_name(LM_ET_NONE), "");
	ck_assert_str_eq(lm_enumtype_name(LM_ET_COUNT), "");
	ck_assert_int_eq(lm_enum_count(LM_ET_NONE), 0);
	ck_assert_ptr_null(lm_enum_row(LM_ET_NONE, 0, NULL));
	for (int t = 1; t < LM_ET_COUNT; t++) {
		const char *name = lm_enumtype_name((lm_enumtype)t);
		ck_assert_msg(name[0], "type %d has no name", t);
		ck_assert_msg(lm_enum_count((lm_enumtype)t) >= 1,
			      "%s has no value", name);
		ck_assert_msg(lm_enum_name((lm_enumtype)t,
					   lm_enum_default((lm_enumtype)t)),
			      "%s: default %lld is no value", name,
			      (long long)lm_enum_default((lm_enumtype)t));
		for (int u = 1; u < t; u++)
			ck_assert_str_ne(name, lm_enumtype_name((lm_enumtype)u));
	}
	ck_assert_str_eq(lm_enumtype_name(LM_ET_EngineType), "EngineType");
	ck_assert_str_eq(lm_enumtype_name(LM_ET_MemoryType), "MemoryType");
}
END_TEST

/*
** Every row: its spelling parses to its ordinal, the ordinal's canonical
** name is the first row with that ordinal and parses back to it, and no
** other row of the type has the same spelling.
*/
START_TEST(test_rows)
{
	for (int t = 1; t < LM_ET_COUNT; t++) {
		lm_enumtype et = (lm_enumtype)t;
		const char *tn = lm_enumtype_name(et);
		for (int i = 0; i < lm_enum_count(et); i++) {
			int64_t o, p;
			const char *s = lm_enum_row(et, i, &o);
			ck_assert_ptr_nonnull(s);
			ck_assert_msg(ord_of(et, s) == o, "%s: \"%s\"", tn, s);

			const char *canon = NULL;
			for (int j = 0; j <= i && !canon; j++) {
				const char *r = lm_enum_row(et, j, &p);
				if (p == o)
					canon = r;
			}
			ck_assert_ptr_nonnull(lm_enum_name(et, o));
			ck_assert_str_eq(lm_enum_name(et, o), canon);
			ck_assert_msg(ord_of(et, lm_enum_name(et, o)) == o,
				      "%s: %lld", tn, (long long)o);

			for (int j = 0; j < i; j++)
				ck_assert_msg(strcmp(lm_enum_row(et, j, &p), s),
					      "%s: \"%s\" twice", tn, s);
		}
	}
}
END_TEST

START_TEST(test_unknown)
{
	int64_t o = 77;

	ck_assert_int_eq(lm_enum_parse(LM_ET_EngineType, "pe", &o), -1);
	ck_assert_int_eq(lm_enum_parse(LM_ET_EngineType, "", &o), -1);
	ck_assert_int_eq(lm_enum_parse(LM_ET_EngineType, "PEx", &o), -1);
	ck_assert_int_eq(lm_enum_parse(LM_ET_EngineType, NULL, &o), -1);
	ck_assert_int_eq(lm_enum_parse(LM_ET_NONE, "PE", &o), -1);
	ck_assert_int_eq(lm_enum_parse(LM_ET_COUNT, "PE", &o), -1);
	ck_assert_int_eq(o, 77);
	/* a spelling of another type */
	ck_assert_int_eq(lm_enum_parse(LM_ET_EngineType, "bypass", &o), -1);
	ck_assert_int_eq(lm_enum_parse(LM_ET_EngineType, "PE", NULL), 0);

	ck_assert_ptr_null(lm_enum_name(LM_ET_EngineType, 8));
	ck_assert_ptr_null(lm_enum_name(LM_ET_EngineType, -1));
	ck_assert_ptr_null(lm_enum_name(LM_ET_MemoryType, 0));
	ck_assert_ptr_null(lm_enum_name(LM_ET_MemoryType, 3));
	ck_assert_ptr_null(lm_enum_name(LM_ET_NONE, 0));
	ck_assert_int_eq(lm_enum_default(LM_ET_NONE), 0);
}
END_TEST

START_TEST(test_spot_checks)
{
	static const char *const eng[] = {"Unassigned", "Pool", "Activation",
		"PE", "DMA", "DVE", "SP", "ALL"};
	static const char *const acc[] = {"Idle", "Zero", "Accumulate",
		"ZeroAccumulate", "AddAccumulate", "LoadAccumulate"};
	static const char *const edge[] = {"Invalid", "Ordered", "Anti",
		"Output", "Flow"};

	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(ord_of(LM_ET_EngineType, eng[i]), i);
		ck_assert_str_eq(lm_enum_name(LM_ET_EngineType, i), eng[i]);
	}
	ck_assert_int_eq(ord_of(LM_ET_EngineType, "GPSIMD"), 1);
	ck_assert_int_eq(lm_enum_default(LM_ET_EngineType), 0);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(ord_of(LM_ET_EngineAccumulationType, acc[i]), i);
		ck_assert_str_eq(lm_enum_name(LM_ET_EngineAccumulationType, i),
				 acc[i]);
	}
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(ord_of(LM_ET_EdgeKind, edge[i]), i);
	ck_assert_int_eq(lm_enum_default(LM_ET_EdgeKind), 4);

	ck_assert_int_eq(lm_enum_default(LM_ET_DGEType), 3);
	ck_assert_str_eq(lm_enum_name(LM_ET_DGEType, 3), "Unassigned");

	ck_assert_int_eq(ord_of(LM_ET_MemoryType, "DRAM"), 8);
	ck_assert_int_eq(ord_of(LM_ET_MemoryType, "SB"), 16);
	ck_assert_int_eq(ord_of(LM_ET_MemoryType, "SBUF"), 16);
	ck_assert_int_eq(ord_of(LM_ET_MemoryType, "PSUM"), 32);
	ck_assert_str_eq(lm_enum_name(LM_ET_MemoryType, 16), "SB");

	ck_assert_int_eq(ord_of(LM_ET_AluOpType, "bypass"), 0);
	ck_assert_int_eq(ord_of(LM_ET_AluOpType, "mult"), 6);
	ck_assert_int_eq(ord_of(LM_ET_AluOpType, "is_gt"), 20);
	ck_assert_int_eq(ord_of(LM_ET_AluOpType, "mod_int"), 32);
	ck_assert_int_eq(lm_enum_default(LM_ET_AluOpType), 0);

	ck_assert_int_eq(ord_of(LM_ET_ActivationFunctionType, "Identity"), 0);
	ck_assert_int_eq(ord_of(LM_ET_ActivationFunctionType, "Silu"), 27);
	ck_assert_int_eq(ord_of(LM_ET_ActivationFunctionType, "Unknown"), 30);
	ck_assert_int_eq(ord_of(LM_ET_Dtype, "uint8"), 0);
	ck_assert_int_eq(ord_of(LM_ET_Dtype, "float32"), 16);
	ck_assert_int_eq(ord_of(LM_ET_Dtype, "int64"), 19);
	ck_assert_int_eq(ord_of(LM_ET_InstructionType, "Activation"), 4);
	ck_assert_int_eq(ord_of(LM_ET_InstructionType,
				"TongaReduceMacroSymbolic"), 109);
	ck_assert_int_eq(ord_of(LM_ET_InstSyncType, "sequencer"), 1);
	ck_assert_int_eq(ord_of(LM_ET_InstSyncType, "SequencerType"), 1);
	ck_assert_int_eq(ord_of(LM_ET_ArchLevel, "gen3"), 30);
	ck_assert_int_eq(ord_of(LM_ET_ArchLevel, "trn1"), 20);
	ck_assert_int_eq(ord_of(LM_ET_DMAQoSClass, "P14"), 16);
	ck_assert_int_eq(ord_of(LM_ET_UpdateMode, "sem-inc"), 3);
	ck_assert_int_eq(ord_of(LM_ET_WaitMode, "sem-ge-imm"), 1);
	ck_assert_int_eq(ord_of(LM_ET_ArgumentKind, "symbolic_pwap"), 2);
	ck_assert_int_eq(lm_enum_default(LM_ET_CollectiveKind), 2);

	/* the compiler's value counts */
	ck_assert_int_eq(n_bir_ordinals(LM_ET_ActivationFunctionType), 31);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_Dtype), 20);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_AluOpType), 33);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_InstructionType), 110);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_TransposeOps), 14);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_DMAQoSClass), 17);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_BranchCompareOp), 13);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_CollectiveKind), 11);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_TensorClass), 13);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_TensorKind), 10);
	ck_assert_int_eq(n_bir_ordinals(LM_ET_MemoryType), 8);
}
END_TEST

/* The spellings the model's older tables read stay readable. */
START_TEST(test_project_spellings)
{
	int64_t o;

	for (int op = LM_OP_INVALID + 1; op < LM_OP_OTHER; op++)
		ord_of(LM_ET_InstructionType, lm_opcode_name((lm_opcode)op));
	for (int a = 1; a < LM_ALU_COUNT; a++)
		ord_of(LM_ET_AluOpType, lm_aluop_name((lm_aluop)a));
	for (int f = 1; f < LM_ACT_COUNT; f++)
		ord_of(LM_ET_ActivationFunctionType,
		       lm_actfunc_name((lm_actfunc)f));
	for (int k = 1; k < LM_TK_COUNT; k++)
		ord_of(LM_ET_TensorKind, lm_tensorkind_name((lm_tensorkind)k));
	for (int m = 1; m < LM_MT_COUNT; m++)
		ord_of(LM_ET_MemoryType, lm_memtype_name((lm_memtype)m));
	for (int e = 0; e < LM_ENG_COUNT; e++)
		ord_of(LM_ET_EngineType, lm_engine_name((lm_engine)e));
	for (int d = 1; d < LM_DT_COUNT; d++)
		ord_of(LM_ET_Dtype, lm_dtype_name((lm_dtype)d));
	ck_assert_int_eq(ord_of(LM_ET_FunctionKind,
				lm_funckind_name(LM_FK_NKI)), 2);
	ord_of(LM_ET_FunctionKind, lm_funckind_name(LM_FK_REGULAR));
	ord_of(LM_ET_FunctionKind, lm_funckind_name(LM_FK_DISPATCHER));
	/* the carried-through schema opcodes of model/enums.c */
	ck_assert_int_eq(lm_enum_parse(LM_ET_InstructionType, "Shuffle", &o), 0);
	ck_assert_int_ge(o, LM_ENUM_LNCSIM_BASE);
	ck_assert_int_eq(lm_enum_parse(LM_ET_InstructionType, "CalcVarAddr",
				       &o), 0);
	ck_assert_int_eq(ord_of(LM_ET_InstructionType, "StreamShuffle"), 39);
}
END_TEST

START_TEST(test_spellings)
{
	char buf[64];

	ck_assert_str_eq(lm_enum_spellings(LM_ET_PoolFunctionType, buf,
					   sizeof buf), "Max, Avg");
	ck_assert_str_eq(lm_enum_spellings(LM_ET_MemsetMode, buf, sizeof buf),
			 "Const, Random");
	/* exactly fits; then no room for the last, nor for ", ..." after
	   the first */
	ck_assert_str_eq(lm_enum_spellings(LM_ET_PoolFunctionType, buf, 9),
			 "Max, Avg");
	ck_assert_str_eq(lm_enum_spellings(LM_ET_PoolFunctionType, buf, 8),
			 "...");
	ck_assert_str_eq(lm_enum_spellings(LM_ET_PoolFunctionType, buf, 4),
			 "...");
	ck_assert_str_eq(lm_enum_spellings(LM_ET_PoolFunctionType, buf, 3), "");
	ck_assert_str_eq(lm_enum_spellings(LM_ET_TSCMode, buf, 18),
			 "Reduce, ...");
	ck_assert_str_eq(lm_enum_spellings(LM_ET_NONE, buf, sizeof buf), "");

	lm_enum_spellings(LM_ET_InstructionType, buf, sizeof buf);
	ck_assert_uint_lt(strlen(buf), sizeof buf);
	ck_assert_str_eq(buf + strlen(buf) - 5, ", ...");
	ck_assert(strncmp(buf, "Generic, GenericCopy, ", 22) == 0);

	char big[4096];
	lm_enum_spellings(LM_ET_EngineType, big, sizeof big);
	ck_assert(strstr(big, "Unassigned, Pool, Activation, PE, DMA, DVE, SP,"
			 " ALL, GPSIMD") == big);
	ck_assert(big[strlen(big) - 1] != '.');
}
END_TEST

/* Many threads racing for the first lookup all see the same table. */
enum { N_RACE = 4000 };

static void race_one(void *ctx, int worker, int i)
{
	char *bad = ctx;
	int64_t o = -1;
	const char *n = lm_enum_name(LM_ET_InstructionType, i % 110);

	(void)worker;
	bad[i] = !n || lm_enum_parse(LM_ET_InstructionType, n, &o) != 0 ||
		 o != i % 110;
}

START_TEST(test_threads)
{
	static char bad[N_RACE];

	lm_parallel_for(N_RACE, 4, race_one, bad);
	for (int i = 0; i < N_RACE; i++)
		ck_assert_msg(!bad[i], "item %d", i);
}
END_TEST

static Suite *enumtab_suite(void)
{
	Suite *s = suite_create("enumtab");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_types);
	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_unknown);
	tcase_add_test(tc, test_spot_checks);
	tcase_add_test(tc, test_project_spellings);
	tcase_add_test(tc, test_spellings);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(enumtab_suite());
}

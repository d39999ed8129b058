/*
** test_wire224.c -- modules in the neuronx-cc 2.24 wire form as the
** compiler hands them to bir_linker: the loader reads what the compiler
** writes (memory types as numbers, remote_local_target on the view's
** memory location).
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A one-function module with one allocation whose memory location is
** MEMLOC (the text after its name) and whose allocation keys are ALLOC. */
static char *one_alloc(const char *memloc, const char *alloc)
{
	return lm_xasprintf(
		"{\"functions\": [{\"name\": \"f\", \"allocations\": [{"
		"\"name\": \"v\", \"kind\": \"Internal\", \"dtype\": "
		"\"float32\", \"tensor_shape\": [128, 64], "
		"\"memorylocations\": [{\"name\": \"v\"%s}]%s}], "
		"\"blocks\": []}]}", memloc, alloc);
}

static int parse(const char *text, lm_module **m, lm_error *e)
{
	return lm_module_parse(m, text, strlen(text), "t.json", e);
}

/* The 2.24 writer emits a MemoryType as its bit value. */
START_TEST(test_memtype_number)
{
	static const struct { int bits; lm_memtype t; } rows[] = {
		{ 8, LM_MT_DRAM }, { 16, LM_MT_SB }, { 32, LM_MT_PSUM },
		{ 128, LM_MT_REG }, { 2, LM_MT_INPUT }, { 4, LM_MT_OUTPUT },
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		char ml[64];
		snprintf(ml, sizeof ml, ", \"type\": %d, \"addr\": 0",
			 rows[i].bits);
		char *t = one_alloc(ml, "");
		lm_module *m;
		lm_error e;
		ck_assert_msg(parse(t, &m, &e) == 0, "%d: %s", rows[i].bits,
			      e.msg);
		ck_assert_int_eq(m->functions[0].allocs[0].memlocs[0].type,
				 rows[i].t);
		lm_module_free(m);
		free(t);
	}
	static const char *const bad[] = { "3", "0", "256", "-8", "8.5" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char ml[64];
		snprintf(ml, sizeof ml, ", \"type\": %s", bad[i]);
		char *t = one_alloc(ml, "");
		lm_module *m = NULL;
		lm_error e;
		ck_assert_msg(parse(t, &m, &e) != 0, "%s read", bad[i]);
		ck_assert_contains(e.msg, "key 'type'");
		ck_assert_ptr_null(m);
		free(t);
	}
}
END_TEST

/* remote_local_target on the memory location (the compiler's place) is
** the allocation's view, as on the allocation (lncsim's place); both
** places may say it when they agree. */
START_TEST(test_remote_on_memloc)
{
	const char *rlt = ", \"remote_local_target\": "
			  "{\"core\": 0, \"name\": \"h\"}";
	char ml[160];
	snprintf(ml, sizeof ml, ", \"type\": 8, \"addr\": 4096%s", rlt);
	const char *allocs[] = { "", rlt };
	for (int i = 0; i < 2; i++) {
		char *t = one_alloc(ml, allocs[i]);
		lm_module *m;
		lm_error e;
		ck_assert_msg(parse(t, &m, &e) == 0, "%s", e.msg);
		const lm_alloc *a = &m->functions[0].allocs[0];
		ck_assert(a->has_remote);
		ck_assert_str_eq(a->remote_name, "h");
		ck_assert_int_eq(a->remote_core, 0);
		ck_assert_ptr_null(a->memlocs[0].extra);
		lm_module_free(m);
		free(t);
	}
	/* the two places name different producers */
	char *t = one_alloc(ml, ", \"remote_local_target\": "
			    "{\"core\": 1, \"name\": \"h\"}");
	lm_module *m = NULL;
	lm_error e;
	ck_assert(parse(t, &m, &e) != 0);
	ck_assert_contains(e.msg, "allocation v: key 'remote_local_target': "
			   "'h' of core 1, but the view already names 'h' of "
			   "core 0");
	free(t);
	/* the memory location's must have the allocation's shape */
	t = one_alloc(", \"type\": 8, \"remote_local_target\": [\"h\", 0]", "");
	ck_assert(parse(t, &m, &e) != 0);
	ck_assert_contains(e.msg, "expected {\"name\": ALLOCATION, "
			   "\"core\": C}");
	free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wire224");
	TCase *tc = tcase_create("loader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_memtype_number);
	tcase_add_test(tc, test_remote_on_memloc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}

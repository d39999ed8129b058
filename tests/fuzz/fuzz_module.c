/*
** fuzz_module.c -- libFuzzer harness for the BIR-JSON module reader:
** parse (lm_module_parse), verify (plain and linked rules, and the
** simulator's key check is out of reach here: model only), inline the
** NKIKernel calls of a module that verifies (lower --inline's pass, kernels
** with branches included) and verify the result, write the module back
** and parse the text again. Any crash, leak or sanitizer
** report is a bug; an input error is the expected answer to most inputs.
** Built and run by tests/fuzz/run.sh; replayed by
** tests/test_fuzz_replay.c.
*/
#include "common.h"
#include "fuzz.h"
#include "module.h"
#include "verify.h"
#include "provision.h"

#include <stdint.h>
#include <stdlib.h>

int lncsim_fuzz_module(const uint8_t *data, size_t size)
{
	lm_module *m = NULL, *again = NULL;
	lm_error err;
	char *text = NULL;
	size_t len = 0;

	if (lm_module_parse(&m, (const char *)data, size, "fuzz.json", &err))
		return 0;
	for (int linked = 0; linked < 2; linked++) {
		lm_verify_opts vo = { linked };
		(void)lm_verify(m, &vo, &err);
	}
	if (lm_verify(m, NULL, &err) == 0) {
		lm_module *in = lm_module_clone(m);
		if (lp_inline_nki(in, &err) == 0)
			(void)lm_verify(in, NULL, &err);
		lm_module_free(in);
	}
	if (lm_module_to_json(m, 0, &text, &len, &err) == 0) {
		/* what lncsim writes, lncsim reads */
		int bad = lm_module_parse(&again, text, len, "again.json",
					  &err) != 0;
		lm_module_free(again);
		free(text);
		if (bad) {
			lm_module_free(m);
			return 1;
		}
	}
	lm_module_free(m);
	return 0;
}

LNCSIM_FUZZ_ENTRY(lncsim_fuzz_module)

/*
** fuzz_module.c -- libFuzzer harness for the BIR-JSON module reader:
** parse (lm_module_parse), verify (plain and linked rules, and the
** simulator's key check is out of reach here: model only), write the
** module back and parse the text again. Any crash, leak or sanitizer
** report is a bug; an input error is the expected answer to most inputs.
** Built and run by tests/fuzz/run.sh.
*/
#include "common.h"
#include "module.h"
#include "verify.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
	if (lm_module_to_json(m, 0, &text, &len, &err) == 0) {
		/* what lncsim writes, lncsim reads */
		if (lm_module_parse(&again, text, len, "again.json", &err))
			abort();
		lm_module_free(again);
		free(text);
	}
	lm_module_free(m);
	return 0;
}

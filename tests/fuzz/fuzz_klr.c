/*
** fuzz_klr.c -- libFuzzer harness for the KLR (CBOR) kernel reader
** (lp_klr_decode_file): header, version, content type, every tagged
** operator record. Built and run by tests/fuzz/run.sh; replayed by
** tests/test_fuzz_replay.c.
*/
#include "common.h"
#include "fuzz.h"
#include "klr.h"

#include <stdint.h>

int lncsim_fuzz_klr(const uint8_t *data, size_t size)
{
	lp_klr_file f;
	lm_error err;
	if (lp_klr_decode_file(&f, data, size, "fuzz.klr", &err) == 0)
		lp_klr_file_free(&f);
	return 0;
}

LNCSIM_FUZZ_ENTRY(lncsim_fuzz_klr)

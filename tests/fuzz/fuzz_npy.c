/*
** fuzz_npy.c -- libFuzzer harness for the .npy reader (lm_npy_parse):
** header, shape, dtype and payload checks, then a conversion of the
** array to float32 when it parsed. Built and run by tests/fuzz/run.sh; replayed by
** tests/test_fuzz_replay.c.
*/
#include "common.h"
#include "fuzz.h"
#include "dtype.h"
#include "npy.h"

#include <stdint.h>
#include <stdlib.h>

int lncsim_fuzz_npy(const uint8_t *data, size_t size)
{
	lm_npy a;
	lm_error err;
	if (lm_npy_parse(data, size, "fuzz.npy", &a, &err))
		return 0;
	if (a.count > 0 && a.count < (1 << 20)) {
		float *dst = malloc((size_t)a.count * sizeof *dst);
		if (dst) {
			(void)lm_npy_convert(&a, LM_DT_FLOAT32, dst, "fuzz.npy",
					     &err);
			free(dst);
		}
	}
	lm_npy_free(&a);
	return 0;
}

LNCSIM_FUZZ_ENTRY(lncsim_fuzz_npy)

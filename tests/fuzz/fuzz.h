/*
** fuzz.h -- the entry points of the reader harnesses. Each returns 0 when
** the reader behaved (accepted the bytes or refused them with an error)
** and 1 when a property it checks failed; sanitizers report the rest.
** With -DLNCSIM_LIBFUZZER each file also defines LLVMFuzzerTestOneInput
** (tests/fuzz/run.sh); tests/test_fuzz_replay.c replays them in
** `make check` over the seeds and their truncations.
*/
#ifndef LNCSIM_FUZZ_H
#define LNCSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int lncsim_fuzz_module(const uint8_t *data, size_t size);
int lncsim_fuzz_npy(const uint8_t *data, size_t size);
int lncsim_fuzz_klr(const uint8_t *data, size_t size);
int lncsim_fuzz_affine(const uint8_t *data, size_t size);

#ifdef LNCSIM_LIBFUZZER
#include <stdlib.h>
/* libFuzzer entry: a failed property is a crash it records. */
#define LNCSIM_FUZZ_ENTRY(fn)                                              \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);      \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)       \
	{                                                                  \
		if (fn(data, size))                                        \
			abort();                                           \
		return 0;                                                  \
	}
#else
#define LNCSIM_FUZZ_ENTRY(fn)
#endif

#endif

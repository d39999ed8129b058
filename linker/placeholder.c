/* placeholder.c -- keeps liblinker.la non-empty until its first real source lands. */
#include "common.h"
int lncsim_linker_placeholder(void);
int lncsim_linker_placeholder(void) { return 0; }

/* placeholder.c -- keeps libsim.la non-empty until its first real source lands. */
#include "common.h"
int lncsim_sim_placeholder(void);
int lncsim_sim_placeholder(void) { return 0; }

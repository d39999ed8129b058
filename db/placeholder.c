/* placeholder.c -- keeps libdb.la non-empty until its first real source lands. */
#include "common.h"
int lncsim_db_placeholder(void);
int lncsim_db_placeholder(void) { return 0; }

/* placeholder.c -- keeps libreports.la non-empty until its first real source lands. */
#include "common.h"
int lncsim_reports_placeholder(void);
int lncsim_reports_placeholder(void) { return 0; }

/*
** report_int.h -- internals shared by the files of reports/.
*/
#ifndef LNCSIM_REPORT_INT_H
#define LNCSIM_REPORT_INT_H

#include "report.h"

/* Run `gnuplot -c args[0] args[1]...` in dir; exit status checked. */
int lr_run_gnuplot(const char *gnuplot, const char *dir,
		   const char *const *args, lm_error *err);

#endif

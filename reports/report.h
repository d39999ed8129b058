/*
** report.h -- utilization reports plotted with gnuplot from the run log
** (docs/reports.md).
**
** lr_write writes into one directory: for each plot the .tsv data it was
** made from, the .gp script (the committed reports/gp/NAME.gp, embedded in the
** program) and the image made by `gnuplot -c SCRIPT DATA IMAGE FORMAT ...`,
** then index.html showing every image with a summary table of the runs.
** replot.sh holds the exact gnuplot commands.
*/
#ifndef LNCSIM_REPORT_H
#define LNCSIM_REPORT_H

#include <stdint.h>
#include "common.h"
#include "db.h"

#define LR_DEFAULT_DIR "lncsim-report"
#define LR_GNUPLOT_ENV "LNCSIM_GNUPLOT"

typedef struct lr_options {
	const char *out_dir;  /* NULL: LR_DEFAULT_DIR */
	int64_t run_id;       /* 0: the latest run that has an execution */
	const char *format;   /* "png" (NULL) or "svg" */
	const char *gnuplot;  /* NULL: $LNCSIM_GNUPLOT, configure's path, PATH */
	int buckets;          /* PE timeline buckets; 0: 100 */
	int history;          /* runs in the history plot; 0: 200 */
	const char *since;    /* history and default run: started at or
				 after this UTC date / time (NULL: any) */
	const char *command;  /* history and default run: of this kind
				 ("run", "diff", "fuzz"; NULL: any) */
} lr_options;

/* The manifest lr_write leaves in the output directory: the names of the
** files it wrote, one a line, so that the next report into the same
** directory removes the ones it does not write again (and nothing else). */
#define LR_MANIFEST ".lncsim-report-manifest"

/* What lr_write produced; names are relative to the output directory. */
typedef struct lr_report {
	int64_t run_id;       /* the run of the per-run plots */
	int n_images;
	char **images;
	int n_files;          /* everything written, images included */
	char **files;
} lr_report;

/*
** Write the report. Errors (LM_EINPUT unless noted): unknown format, an
** empty database ("no runs"), an unknown run id, a run without an
** execution, a bad --since or --command, gnuplot not found, an unwritable
** directory; gnuplot failing on a script is LM_EINTERNAL. Files of the
** previous report in the directory (its LR_MANIFEST) that this one does
** not write again are removed after it is complete. out is filled on success (free with
** lr_report_free; zeroed on failure).
*/
int lr_write(ldb *db, const lr_options *o, lr_report *out, lm_error *err);
void lr_report_free(lr_report *r);

/*
** Find the gnuplot program: override if non-NULL, else $LNCSIM_GNUPLOT,
** else configure's GNUPLOT_PATH, else "gnuplot" on PATH. A name without a
** slash is looked up on PATH. *path is malloc'd. Not found: "gnuplot not
** found ..." (LM_EINPUT).
*/
int lr_find_gnuplot(const char *override, char **path, lm_error *err);

/* The embedded scripts (reports/gp/NAME.gp), NULL-terminated. */
typedef struct lr_gp_script {
	const char *name;
	const char *text;
} lr_gp_script;
extern const lr_gp_script lr_gp_scripts[];

#endif

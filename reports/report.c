/*
** report.c -- `lncsim report`: query the run log, write the .tsv data and
** the .gp scripts, run gnuplot on each, write index.html and replot.sh.
**
** Plots (docs/reports.md): util (per-core PE and MAC utilization of one
** run, one bar per execution mode), timeline-MODE (PE busy fraction over
** time buckets per core, from the matmuls rows), shapes (array fill by
** matmul shape K x M over the whole database) and history (status,
** simulated time and utilization of the last runs).
*/
#include "common.h"
#include "report_int.h"
#include "safeio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Bounds that keep the plots readable and input-proof. */
#define MAX_MODES 3
#define MAX_LANES 256
#define MAX_SHAPES 24
#define MAX_BUCKETS 10000
#define TITLE_MAX 70

typedef struct ctx {
	ldb *db;
	sqlite3 *h;
	const char *dir;
	const char *fmt;
	char *gnuplot;
	int buckets;
	lr_report *rep;
	int cap_images, cap_files;
	lm_buf figs;     /* the plots' sections of index.html */
	lm_buf replot;   /* replot.sh */
	lm_error *err;
} ctx;

/* One execution of the focus run: the first one of each mode. */
typedef struct exec_ref {
	int64_t id;
	char mode[16];
	int64_t sim_time_ps;
} exec_ref;

/* ---- small helpers --------------------------------------------------- */

/* Append s to b with the HTML special characters escaped. */
static void html_escape(lm_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': lm_buf_puts(b, "&amp;"); break;
		case '<': lm_buf_puts(b, "&lt;"); break;
		case '>': lm_buf_puts(b, "&gt;"); break;
		case '"': lm_buf_puts(b, "&quot;"); break;
		default: lm_buf_put(b, s, 1);
		}
	}
}

/* Append s to b quoted for a POSIX shell. */
static void shell_quote(lm_buf *b, const char *s)
{
	lm_buf_put(b, "'", 1);
	for (; *s; s++) {
		if (*s == '\'')
			lm_buf_puts(b, "'\\''");
		else
			lm_buf_put(b, s, 1);
	}
	lm_buf_put(b, "'", 1);
}

/* A title-sized copy of s (shortened with "..."); caller frees. */
static char *shorten(const char *s)
{
	size_t n = strlen(s);
	if (n <= TITLE_MAX)
		return lm_xstrdup(s);
	return lm_xasprintf("%.*s...", TITLE_MAX - 3, s);
}

/* The unit for times up to max_ps: its name and picoseconds per unit. */
static const char *pick_unit(int64_t max_ps, double *ps_per_unit)
{
	if (max_ps < 1000000) {
		*ps_per_unit = 1e3;
		return "ns";
	}
	if (max_ps < 1000000000) {
		*ps_per_unit = 1e6;
		return "µs";
	}
	*ps_per_unit = 1e9;
	return "ms";
}

/* Remember a written file (and an image). */
static void add_file(ctx *c, const char *name, int is_image)
{
	lr_report *r = c->rep;
	lm_grow(&r->files, &c->cap_files, r->n_files + 1, sizeof *r->files);
	r->files[r->n_files++] = lm_xstrdup(name);
	if (is_image) {
		lm_grow(&r->images, &c->cap_images, r->n_images + 1,
			sizeof *r->images);
		r->images[r->n_images++] = lm_xstrdup(name);
	}
}

/* Write name in the output directory. */
static int write_file(ctx *c, const char *name, const char *data, size_t len)
{
	char *path = lm_path_join(c->dir, name);
	int rc = lm_write_file_atomic(path, data, len, c->err);
	free(path);
	if (rc == 0)
		add_file(c, name, 0);
	return rc;
}

/* An SQL failure while reading the database. */
static int sqlfail(ctx *c, const char *where)
{
	return lm_err(c->err, ldb_path(c->db), where, "%s",
		      sqlite3_errmsg(c->h));
}

/* One integer from a single-row query with an optional id parameter. */
static int query_int(ctx *c, const char *sql, int64_t param, int64_t *v,
		     int *is_null)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(c->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		if (sqlite3_bind_parameter_count(st) > 0)
			sqlite3_bind_int64(st, 1, param);
		rc = sqlite3_step(st);
	}
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return sqlfail(c, "report");
	}
	if (is_null)
		*is_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
	*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/*
** Run gnuplot on one plot and add its section to index.html: heading,
** the image, what it shows, links to its data and script. args: script,
** data, then the script's extra arguments (NULL terminated; the image,
** format and title are inserted as ARG2..ARG4).
*/
static int plot(ctx *c, const char *script, const char *data,
		const char *image, const char *title, const char *const *extra,
		const char *heading, const char *caption)
{
	const char *args[16];
	int n = 0, dfd, fd, rc;
	char *tmp, out[32];
	struct stat sb, sn;
	/* gnuplot fills a fresh O_EXCL temporary that is renamed over the
	   image: a symlink planted at the image's name is replaced, never
	   written through. gnuplot gets the open temporary as /dev/fd/N, so
	   what it writes goes to the file created here, whatever happens to
	   the name meanwhile (docs/files.md) */
	dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return lm_err(c->err, c->dir, "", "cannot open directory: %s",
			      strerror(errno));
	if ((rc = lm_temp_at(&fd, &tmp, dfd, c->dir, image, 0644, c->err))) {
		close(dfd);
		return rc;
	}
	if (fcntl(fd, F_SETFD, 0) != 0) {   /* gnuplot inherits it */
		rc = lm_errc(c->err, LM_EINTERNAL, c->dir, "report", "fcntl: "
			     "%s", strerror(errno));
		goto done;
	}
	snprintf(out, sizeof out, "/dev/fd/%d", fd);
	args[n++] = script;
	args[n++] = data;
	args[n++] = out;
	args[n++] = c->fmt;
	args[n++] = title;
	for (int i = 0; extra && extra[i] && n < 15; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	if (lr_run_gnuplot(c->gnuplot, c->dir, args, c->err) != 0)
		rc = c->err->code ? c->err->code : LM_EINTERNAL;
	else if (fstat(fd, &sb) != 0 || sb.st_size == 0)
		rc = lm_errc(c->err, LM_EINTERNAL, script, "gnuplot",
			     "no image written to %s", image);
	else if (fstatat(dfd, tmp, &sn, AT_SYMLINK_NOFOLLOW) != 0 ||
		 sn.st_dev != sb.st_dev || sn.st_ino != sb.st_ino)
		rc = lm_err(c->err, c->dir, "report", "the temporary file of "
			    "%s (%s) was replaced while gnuplot ran; refusing "
			    "it", image, tmp);
	else
		rc = lm_replace_at(dfd, c->dir, tmp, image, c->err);
done:
	if (rc)
		unlinkat(dfd, tmp, 0);
	close(fd);
	close(dfd);
	free(tmp);
	if (rc)
		return rc;
	args[2] = image; /* the re-plot script writes the image itself */
	add_file(c, image, 1);

	lm_buf_puts(&c->replot, "gnuplot -c");
	for (int i = 0; i < n; i++) {
		lm_buf_puts(&c->replot, " ");
		shell_quote(&c->replot, args[i]);
	}
	lm_buf_puts(&c->replot, "\n");

	lm_buf *b = &c->figs;
	lm_buf_puts(b, "<section>\n<h2>");
	html_escape(b, heading);
	lm_buf_puts(b, "</h2>\n<figure><img src=\"");
	html_escape(b, image);
	lm_buf_puts(b, "\" alt=\"");
	html_escape(b, title);
	lm_buf_puts(b, "\">\n<figcaption>");
	html_escape(b, caption);
	lm_buf_puts(b, " Data: <a href=\"");
	html_escape(b, data);
	lm_buf_puts(b, "\">");
	html_escape(b, data);
	lm_buf_puts(b, "</a>, script: <a href=\"");
	html_escape(b, script);
	lm_buf_puts(b, "\">");
	html_escape(b, script);
	lm_buf_puts(b, "</a>.</figcaption></figure>\n</section>\n");
	return 0;
}

/* A section saying why a plot was not made. */
static void not_plotted(ctx *c, const char *heading, const char *why)
{
	lm_buf_puts(&c->figs, "<section>\n<h2>");
	html_escape(&c->figs, heading);
	lm_buf_puts(&c->figs, "</h2>\n<p class=\"note\">Not plotted: ");
	html_escape(&c->figs, why);
	lm_buf_puts(&c->figs, "</p>\n</section>\n");
}

/* ---- the focus run --------------------------------------------------- */

/*
** Pick the run of the per-run plots and load the first execution of each
** of its modes.
*/
static int pick_run(ctx *c, int64_t want, int64_t *run_id, exec_ref *ex,
		    int *n_ex)
{
	int64_t v = 0;
	int is_null = 0;
	if (query_int(c, "SELECT count(*) FROM runs", 0, &v, NULL) != 0)
		return LM_EINPUT;
	if (v == 0)
		return lm_err(c->err, ldb_path(c->db), "report",
			      "no runs in the database");
	if (want > 0) {
		if (query_int(c, "SELECT count(*) FROM runs WHERE id = ?1",
			      want, &v, NULL) != 0)
			return LM_EINPUT;
		if (v == 0)
			return lm_err(c->err, ldb_path(c->db), "report",
				      "no run with id %lld", (long long)want);
		*run_id = want;
	} else {
		if (query_int(c, "SELECT max(run_id) FROM executions", 0, &v,
			      &is_null) != 0)
			return LM_EINPUT;
		if (is_null)
			return lm_err(c->err, ldb_path(c->db), "report",
				      "no run in the database has an "
				      "execution to plot");
		*run_id = v;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(c->h,
			       "SELECT e.id, e.mode, e.sim_time_ps "
			       "FROM executions e WHERE e.run_id = ?1 AND e.id = "
			       "(SELECT min(x.id) FROM executions x "
			       " WHERE x.run_id = ?1 AND x.mode = e.mode) "
			       "ORDER BY e.id", -1, &st, NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	sqlite3_bind_int64(st, 1, *run_id);
	int rc;
	*n_ex = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n_ex < MAX_MODES) {
		exec_ref *e = &ex[(*n_ex)++];
		e->id = sqlite3_column_int64(st, 0);
		snprintf(e->mode, sizeof e->mode, "%s",
			 (const char *)sqlite3_column_text(st, 1));
		e->sim_time_ps = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sqlfail(c, "report");
	if (*n_ex == 0)
		return lm_err(c->err, ldb_path(c->db), "report",
			      "run %lld has no execution to plot",
			      (long long)*run_id);
	return 0;
}

/* ---- util ------------------------------------------------------------ */

/*
** Per-core PE and MAC utilization of the run, one column per mode.
*/
static int plot_util(ctx *c, int64_t run_id, const exec_ref *ex, int n_ex,
		     const char *what)
{
	/* per mode: core -> (pe, mac); cores are small non-negative ints */
	double pe[MAX_MODES][MAX_LANES], mac[MAX_MODES][MAX_LANES];
	char has[MAX_MODES][MAX_LANES];
	memset(has, 0, sizeof has);
	int max_core = -1;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(c->h, "SELECT core, pe_util, mac_util "
			       "FROM core_stats WHERE execution_id = ?1 "
			       "ORDER BY core", -1, &st, NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	for (int i = 0; i < n_ex; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, ex[i].id);
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int core = sqlite3_column_int(st, 0);
			if (core < 0 || core >= MAX_LANES)
				continue;
			has[i][core] = 1;
			pe[i][core] = sqlite3_column_type(st, 1) == SQLITE_NULL
				      ? NAN : sqlite3_column_double(st, 1);
			mac[i][core] = sqlite3_column_type(st, 2) == SQLITE_NULL
				       ? NAN : sqlite3_column_double(st, 2);
			if (core > max_core)
				max_core = core;
		}
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(st);
			return sqlfail(c, "report");
		}
	}
	sqlite3_finalize(st);
	const char *heading = "Per-core PE and MAC utilization";
	if (max_core < 0) {
		not_plotted(c, heading, "the run has no per-core statistics.");
		return 0;
	}
	lm_buf t = LM_BUF_INIT;
	lm_buf_puts(&t, "core");
	for (int i = 0; i < n_ex; i++)
		lm_buf_printf(&t, "\tPE %s", ex[i].mode);
	for (int i = 0; i < n_ex; i++)
		lm_buf_printf(&t, "\tMAC %s", ex[i].mode);
	lm_buf_puts(&t, "\n");
	for (int core = 0; core <= max_core; core++) {
		int any = 0;
		for (int i = 0; i < n_ex; i++)
			any |= has[i][core];
		if (!any)
			continue;
		lm_buf_printf(&t, "%d", core);
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < n_ex; i++) {
				double v = pass ? mac[i][core] : pe[i][core];
				if (!has[i][core] || isnan(v))
					lm_buf_puts(&t, "\t?");
				else
					lm_buf_printf(&t, "\t%.4f", 100 * v);
			}
		lm_buf_puts(&t, "\n");
	}
	int rc = write_file(c, "util.tsv", t.ptr, t.size);
	lm_buf_free(&t);
	if (rc != 0)
		return rc;
	char *title = lm_xasprintf("Per-core utilization, run %lld: %s",
				   (long long)run_id, what);
	char nm[16];
	snprintf(nm, sizeof nm, "%d", n_ex);
	const char *extra[] = { nm, NULL };
	char *image = lm_xasprintf("util.%s", c->fmt);
	rc = plot(c, "util.gp", "util.tsv", image, title, extra, heading,
		  n_ex > 1 ? "PE utilization (PE array busy time over the "
		  "makespan) and MAC utilization (MACs over 128x128 per PE "
		  "cycle of the makespan) of each core, the reference run "
		  "(per-core modules side by side) next to the linked module."
		  : "PE utilization (PE array busy time over the makespan) "
		  "and MAC utilization (MACs over 128x128 per PE cycle of the "
		  "makespan) of each core.");
	free(image);
	free(title);
	return rc;
}

/* ---- timeline -------------------------------------------------------- */

/*
** PE busy fraction per core and time bucket of one execution.
*/
static int plot_timeline(ctx *c, int64_t run_id, const exec_ref *e,
			 const char *what)
{
	char heading[96];
	snprintf(heading, sizeof heading, "PE timeline per core (%s)",
		 e->mode);
	if (e->sim_time_ps <= 0) {
		not_plotted(c, heading, "the execution took no simulated time.");
		return 0;
	}
	int max_core = -1;
	int64_t v = 0;
	int is_null = 0;
	if (query_int(c, "SELECT max(core) FROM core_stats WHERE "
		      "execution_id = ?1", e->id, &v, &is_null) != 0)
		return LM_EINPUT;
	if (!is_null)
		max_core = (int)v;
	if (query_int(c, "SELECT max(core) FROM matmuls WHERE "
		      "execution_id = ?1", e->id, &v, &is_null) != 0)
		return LM_EINPUT;
	if (!is_null && v > max_core)
		max_core = v >= MAX_LANES ? MAX_LANES - 1 : (int)v;
	if (max_core < 0) {
		not_plotted(c, heading, "the execution has no cores.");
		return 0;
	}
	int nl = max_core + 1, nb = c->buckets;
	double w = (double)e->sim_time_ps / nb;
	double *busy = lm_xcalloc((size_t)nl * (size_t)nb, sizeof *busy);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(c->h, "SELECT core, start_ps, duration_ps "
			       "FROM matmuls WHERE execution_id = ?1", -1, &st,
			       NULL) != SQLITE_OK) {
		free(busy);
		return sqlfail(c, "report");
	}
	sqlite3_bind_int64(st, 1, e->id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int core = sqlite3_column_int(st, 0);
		double s = (double)sqlite3_column_int64(st, 1);
		double d = (double)sqlite3_column_int64(st, 2);
		if (core < 0 || core >= nl || d <= 0)
			continue;
		double end = s + d;
		if (s < 0)
			s = 0;
		if (end > (double)e->sim_time_ps)
			end = (double)e->sim_time_ps;
		if (s >= end)
			continue;
		for (int b = (int)(s / w); b < nb && b * w < end; b++) {
			double lo = b * w, hi = lo + w;
			double ov = (end < hi ? end : hi) - (s > lo ? s : lo);
			if (ov > 0)
				busy[(size_t)core * nb + b] += ov;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(busy);
		return sqlfail(c, "report");
	}
	double div;
	const char *unit = pick_unit(e->sim_time_ps, &div);
	lm_buf t = LM_BUF_INIT;
	lm_buf_printf(&t, "start (%s)\tend (%s)", unit, unit);
	for (int l = 0; l < nl; l++)
		lm_buf_printf(&t, "\tcore %d", l);
	lm_buf_puts(&t, "\n");
	for (int b = 0; b < nb; b++) {
		lm_buf_printf(&t, "%.6g\t%.6g", b * w / div, (b + 1) * w / div);
		for (int l = 0; l < nl; l++) {
			double f = busy[(size_t)l * nb + b] / w;
			lm_buf_printf(&t, "\t%.4f", f > 1 ? 1.0 : f);
		}
		lm_buf_puts(&t, "\n");
	}
	free(busy);
	char *data = lm_xasprintf("timeline-%s.tsv", e->mode);
	char *image = lm_xasprintf("timeline-%s.%s", e->mode, c->fmt);
	char *title = lm_xasprintf("PE timeline, run %lld (%s): %s",
				   (long long)run_id, e->mode, what);
	char ncs[16];
	snprintf(ncs, sizeof ncs, "%d", nl);
	const char *extra[] = { ncs, unit, NULL };
	char caption[256];
	snprintf(caption, sizeof caption, "Fraction of each of %d time "
		 "buckets during which the core's PE array ran a Matmult "
		 "(from the matmuls rows of the %s execution).", nb, e->mode);
	rc = write_file(c, data, t.ptr, t.size);
	if (rc == 0)
		rc = plot(c, "timeline.gp", data, image, title, extra, heading,
			  caption);
	lm_buf_free(&t);
	free(data);
	free(image);
	free(title);
	return rc;
}

/* ---- shapes ---------------------------------------------------------- */

/*
** Array fill and share of PE time per matmul shape over the database.
*/
static int plot_shapes(ctx *c)
{
	const char *heading = "Array fill by matmul shape (all runs)";
	int64_t total_n = 0, total_ps = 0, n_runs = 0;
	if (query_int(c, "SELECT count(*) FROM matmuls", 0, &total_n,
		      NULL) != 0 ||
	    query_int(c, "SELECT coalesce(sum(duration_ps), 0) FROM matmuls",
		      0, &total_ps, NULL) != 0 ||
	    query_int(c, "SELECT count(DISTINCT e.run_id) FROM matmuls x "
		      "JOIN executions e ON x.execution_id = e.id", 0, &n_runs,
		      NULL) != 0)
		return LM_EINPUT;
	if (total_n == 0) {
		not_plotted(c, heading, "the database holds no matmul records.");
		return 0;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(c->h, "SELECT k, m, count(*), avg(array_util), "
			       "sum(duration_ps) FROM matmuls GROUP BY k, m "
			       "ORDER BY 5 DESC, 3 DESC, k DESC, m DESC",
			       -1, &st, NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	lm_buf t = LM_BUF_INIT;
	lm_buf_puts(&t, "shape K x M (count)\tarray fill K*M/128^2 (%)\t"
		    "share of PE matmul time (%)\n");
	int rc, n = 0, n_shapes = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n_shapes++;
		if (n >= MAX_SHAPES)
			continue;
		int64_t k = sqlite3_column_int64(st, 0);
		int64_t m = sqlite3_column_int64(st, 1);
		double fill = sqlite3_column_type(st, 3) == SQLITE_NULL
			      ? (double)k * (double)m / 16384.0
			      : sqlite3_column_double(st, 3);
		double share = total_ps > 0 ? 100.0 *
			(double)sqlite3_column_int64(st, 4) / (double)total_ps
			: 0;
		lm_buf_printf(&t, "%lldx%lld (%lld)\t%.4f\t%.4f\n",
			      (long long)k, (long long)m,
			      (long long)sqlite3_column_int64(st, 2),
			      100 * fill, share);
		n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		lm_buf_free(&t);
		return sqlfail(c, "report");
	}
	rc = write_file(c, "shapes.tsv", t.ptr, t.size);
	lm_buf_free(&t);
	if (rc != 0)
		return rc;
	char *title = lm_xasprintf("PE array fill by matmul shape: %lld "
				   "Matmults in %lld run%s", (long long)total_n,
				   (long long)n_runs, n_runs == 1 ? "" : "s");
	char caption[320];
	snprintf(caption, sizeof caption, "For each shape K x M (contraction "
		 "K partitions by M stationary columns): the fraction of the "
		 "128x128 PE array it fills, and its share of all recorded PE "
		 "matmul time; %s%d shapes.", n_shapes > MAX_SHAPES ?
		 "the most time-consuming " : "", n);
	char *image = lm_xasprintf("shapes.%s", c->fmt);
	rc = plot(c, "shapes.gp", "shapes.tsv", image, title, NULL, heading,
		  caption);
	free(image);
	free(title);
	return rc;
}

/* ---- history and the summary table ----------------------------------- */

/*
** Status, simulated time and utilization of the runs in rows.
*/
static int plot_history(ctx *c, const ldb_run_row *rows, int n)
{
	const char *heading = "History across runs";
	int64_t max_ps = 0;
	for (int i = 0; i < n; i++)
		if (rows[i].sim_time_ps > max_ps)
			max_ps = rows[i].sim_time_ps;
	double div;
	const char *unit = pick_unit(max_ps, &div);
	lm_buf t = LM_BUF_INIT;
	lm_buf_printf(&t, "run\tstatus\tsimulated time (%s)\tPE util (%%)\t"
		      "MAC util (%%)\n", unit);
	for (int i = 0; i < n; i++) {
		const ldb_run_row *r = &rows[i];
		lm_buf_printf(&t, "%lld\t%s\t", (long long)r->id, r->status);
		if (r->sim_time_ps >= 0)
			lm_buf_printf(&t, "%.6g", (double)r->sim_time_ps / div);
		else
			lm_buf_puts(&t, "NaN");
		if (r->pe_util >= 0)
			lm_buf_printf(&t, "\t%.4f", 100 * r->pe_util);
		else
			lm_buf_puts(&t, "\tNaN");
		if (r->mac_util >= 0)
			lm_buf_printf(&t, "\t%.4f\n", 100 * r->mac_util);
		else
			lm_buf_puts(&t, "\tNaN\n");
	}
	int rc = write_file(c, "history.tsv", t.ptr, t.size);
	lm_buf_free(&t);
	if (rc != 0)
		return rc;
	char *title = lm_xasprintf("History of the last %d run%s", n,
				   n == 1 ? "" : "s");
	char lo[32], hi[32];
	snprintf(lo, sizeof lo, "%lld", (long long)rows[0].id);
	snprintf(hi, sizeof hi, "%lld", (long long)rows[n - 1].id);
	const char *extra[] = { unit, lo, hi, NULL };
	char *image = lm_xasprintf("history.%s", c->fmt);
	rc = plot(c, "history.gp", "history.tsv", image, title, extra, heading,
		  "Per run: its status, its simulated time (longest "
		  "execution) and the mean PE and MAC utilization over the "
		  "cores of its executions.");
	free(image);
	free(title);
	return rc;
}

/* A table cell with escaped text. */
static void td(lm_buf *b, const char *cls, const char *s)
{
	lm_buf_puts(b, cls ? "<td class=\"" : "<td>");
	if (cls) {
		lm_buf_puts(b, cls);
		lm_buf_puts(b, "\">");
	}
	html_escape(b, s);
	lm_buf_puts(b, "</td>");
}

/*
** Write index.html: the focus run, every plot, the run table, how to
** re-plot.
*/
static int write_index(ctx *c, int64_t run_id, const ldb_run_row *rows,
		       int n)
{
	lm_buf b = LM_BUF_INIT;
	char when[32], num[64];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
	lm_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		    "<meta charset=\"utf-8\">\n<title>lncsim report</title>\n"
		    "<style>\n"
		    "body { font-family: sans-serif; margin: 2em; max-width: 1100px; }\n"
		    "img { max-width: 100%; border: 1px solid #ddd; }\n"
		    "table { border-collapse: collapse; font-size: 90%; }\n"
		    "th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }\n"
		    "td.num { text-align: right; }\n"
		    "td.pass { color: #1a9850; } td.fail, td.error { color: #d73027; font-weight: bold; }\n"
		    "tr.focus { background: #fff7d6; }\n"
		    ".note { color: #666; font-style: italic; }\n"
		    "</style>\n</head>\n<body>\n<h1>lncsim report</h1>\n<p>");
	lm_buf_puts(&b, "Database <code>");
	html_escape(&b, ldb_path(c->db));
	lm_buf_printf(&b, "</code>, generated %s by lncsim %s. Per-run plots "
		      "show run %lld (highlighted below).</p>\n", when,
		      PACKAGE_VERSION, (long long)run_id);
	lm_buf_put(&b, c->figs.ptr ? c->figs.ptr : "", c->figs.size);

	lm_buf_puts(&b, "<section>\n<h2>Runs</h2>\n<table>\n<tr><th>run</th>"
		    "<th>started (UTC)</th><th>status</th><th>module</th>"
		    "<th>arch</th><th>cores</th><th>seed</th>"
		    "<th>executions</th><th>simulated time (ns)</th>"
		    "<th>PE util (%)</th><th>MAC util (%)</th>"
		    "<th>matmuls</th><th>wall (s)</th><th>message</th>"
		    "<th>command</th></tr>\n");
	for (int i = n - 1; i >= 0; i--) {
		const ldb_run_row *r = &rows[i];
		lm_buf_puts(&b, r->id == run_id ? "<tr class=\"focus\">" : "<tr>");
		snprintf(num, sizeof num, "%lld", (long long)r->id);
		td(&b, "num", num);
		td(&b, NULL, r->started_utc);
		td(&b, r->status, r->status);
		td(&b, NULL, r->module);
		td(&b, NULL, r->arch);
		snprintf(num, sizeof num, "%d", r->cores);
		td(&b, "num", num);
		snprintf(num, sizeof num, "%llu", (unsigned long long)r->seed);
		td(&b, "num", num);
		snprintf(num, sizeof num, "%d", r->n_executions);
		td(&b, "num", num);
		if (r->sim_time_ps >= 0)
			snprintf(num, sizeof num, "%.3f",
				 (double)r->sim_time_ps / 1e3);
		else
			snprintf(num, sizeof num, "-");
		td(&b, "num", num);
		if (r->pe_util >= 0)
			snprintf(num, sizeof num, "%.1f", 100 * r->pe_util);
		else
			snprintf(num, sizeof num, "-");
		td(&b, "num", num);
		if (r->mac_util >= 0)
			snprintf(num, sizeof num, "%.1f", 100 * r->mac_util);
		else
			snprintf(num, sizeof num, "-");
		td(&b, "num", num);
		snprintf(num, sizeof num, "%lld", (long long)r->n_matmuls);
		td(&b, "num", num);
		snprintf(num, sizeof num, "%.3f", r->wall_seconds);
		td(&b, "num", num);
		td(&b, NULL, r->message);
		td(&b, NULL, r->command);
		lm_buf_puts(&b, "</tr>\n");
	}
	lm_buf_puts(&b, "</table>\n</section>\n<section>\n<h2>Re-plotting</h2>\n"
		    "<p>Each image was made by gnuplot from the <code>.tsv</code> "
		    "and <code>.gp</code> files beside it; edit a script and run "
		    "<code>sh replot.sh</code> in this directory (or one of its "
		    "lines) to re-plot:</p>\n<pre>");
	html_escape(&b, c->replot.ptr ? c->replot.ptr : "");
	lm_buf_puts(&b, "</pre>\n</section>\n</body>\n</html>\n");
	int rc = write_file(c, "index.html", b.ptr, b.size);
	lm_buf_free(&b);
	return rc;
}

/* ---- entry ----------------------------------------------------------- */

/*
** Write the report (report.h).
*/
int lr_write(ldb *db, const lr_options *o, lr_report *out, lm_error *err)
{
	memset(out, 0, sizeof *out);
	ctx c = {0};
	c.db = db;
	c.h = ldb_sqlite(db);
	c.dir = o->out_dir && *o->out_dir ? o->out_dir : LR_DEFAULT_DIR;
	c.fmt = o->format && *o->format ? o->format : "png";
	c.buckets = o->buckets > 0 ? o->buckets : 100;
	if (c.buckets > MAX_BUCKETS)
		c.buckets = MAX_BUCKETS;
	c.rep = out;
	c.err = err;
	ldb_run_row *rows = NULL;
	int n_rows = 0, rc;
	exec_ref ex[MAX_MODES];
	int n_ex = 0;
	int64_t run_id = 0;
	lm_buf rs = LM_BUF_INIT;

	if (strcmp(c.fmt, "png") && strcmp(c.fmt, "svg"))
		return lm_err(err, "", "report", "unknown format '%s' (png or "
			      "svg)", c.fmt);
	if ((rc = pick_run(&c, o->run_id, &run_id, ex, &n_ex)) != 0)
		goto done;
	out->run_id = run_id;
	if ((rc = lr_find_gnuplot(o->gnuplot, &c.gnuplot, err)) != 0)
		goto done;
	if ((rc = ldb_query_runs(db, o->history > 0 ? o->history : 200, &rows,
				 &n_rows, err)) != 0)
		goto done;
	if ((rc = lm_mkdirs(c.dir, err)) != 0)
		goto done;
	for (const lr_gp_script *s = lr_gp_scripts; s->name; s++)
		if ((rc = write_file(&c, s->name, s->text,
				     strlen(s->text))) != 0)
			goto done;
	lm_buf_puts(&c.replot, "#!/bin/sh\n# re-plot every image of this "
		    "report (lncsim report)\ncd \"$(dirname \"$0\")\" || exit 1\n");

	/* what the focus run was, for the plot titles */
	char *what = NULL;
	for (int i = 0; i < n_rows; i++)
		if (rows[i].id == run_id) {
			char *m = shorten(rows[i].module[0] ? rows[i].module
							    : rows[i].command);
			what = lm_xasprintf("%s (%s)", m, rows[i].status);
			free(m);
		}
	if (!what)
		what = lm_xstrdup("");
	lm_buf_puts(&rs, what);
	free(what);
	if ((rc = plot_util(&c, run_id, ex, n_ex, lm_buf_cstr(&rs))) != 0)
		goto done;
	for (int i = 0; i < n_ex; i++)
		if ((rc = plot_timeline(&c, run_id, &ex[i],
					lm_buf_cstr(&rs))) != 0)
			goto done;
	if ((rc = plot_shapes(&c)) != 0 ||
	    (rc = plot_history(&c, rows, n_rows)) != 0)
		goto done;
	if ((rc = write_file(&c, "replot.sh", c.replot.ptr, c.replot.size)) ||
	    (rc = write_index(&c, run_id, rows, n_rows)))
		goto done;
done:
	if (rc != 0)
		lr_report_free(out);
	lm_buf_free(&rs);
	lm_buf_free(&c.figs);
	lm_buf_free(&c.replot);
	ldb_run_rows_free(rows, n_rows);
	free(c.gnuplot);
	return rc;
}

/*
** Free what lr_write returned.
*/
void lr_report_free(lr_report *r)
{
	for (int i = 0; i < r->n_images; i++)
		free(r->images[i]);
	for (int i = 0; i < r->n_files; i++)
		free(r->files[i]);
	free(r->images);
	free(r->files);
	memset(r, 0, sizeof *r);
}

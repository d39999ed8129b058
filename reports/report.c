/*
** report.c -- `lncsim report`: query the run log, write the .tsv data and
** the .gp scripts, run gnuplot on each, write index.html and replot.sh.
**
** Plots (docs/reports.md): util (per-core PE and MAC utilization of one
** run, one bar per execution mode), waits-MODE (each engine's time split
** into busy, waits and idle, per core), timeline (PE busy fraction over
** time buckets, one lane per core and mode), shapes (array fill by matmul
** shape K x M over the whole database) and history (status, simulated
** time and utilization of the last runs, filtered). A headline names the
** engine that waited longest on the core that finished last; a section
** lists the run's races (or says it was not checked for them); a section
** shows each NKIKernel call of the run: kernels-MODE (each engine's time
** inside the call split like waits-MODE) and a table of utilizations and
** the critical engine (or says the run made no kernel call).
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
	lm_buf head;     /* the headline of index.html */
	lm_buf races;    /* its races section */
	lm_buf kerns;    /* its kernels section */
	lm_buf *to;      /* where plot puts its figure (NULL: figs, as a
			    section of its own; else a part of that one) */
	lm_buf figs;     /* the plots' sections of index.html */
	lm_buf replot;   /* replot.sh */
	ldb_run_filter filter; /* of the history and the default run */
	lm_error *err;
} ctx;

/* One execution of the focus run: the first one of each mode. */
typedef struct exec_ref {
	int64_t id;
	char mode[16];
	int64_t sim_time_ps;
} exec_ref;

/* The parts of an engine's time, in the order of the waits plot. */
enum { PART_BUSY, PART_SEM, PART_BARRIER, PART_DEP, PART_IDLE, N_PARTS };
static const char *const part_names[N_PARTS] = {
	"busy", "semaphore wait", "barrier wait", "dependency wait", "idle"
};
static const char *const engine_names[LS_ENGINES] = {
	"PE", "Activation", "DVE", "Pool", "SP"
};

/* Where one core's engines spent an execution (core_stats). */
typedef struct core_split {
	int core;
	int64_t end_ps;
	int has_waits;           /* the row has the per-engine waits */
	int64_t part[LS_ENGINES][N_PARTS];
} core_split;

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

	lm_buf *b = c->to ? c->to : &c->figs;
	lm_buf_puts(b, c->to ? "<h3>" : "<section>\n<h2>");
	html_escape(b, heading);
	lm_buf_puts(b, c->to ? "</h3>\n<figure><img src=\"" :
		    "</h2>\n<figure><img src=\"");
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
	lm_buf_puts(b, c->to ? "</a>.</figcaption></figure>\n" :
		    "</a>.</figcaption></figure>\n</section>\n");
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

/* ---- waits ----------------------------------------------------------- */

/*
** The split of every core of execution e: busy and the three waits from
** core_stats, idle the rest of the run time. *out caller frees.
*/
static int load_split(ctx *c, const exec_ref *e, core_split **out, int *n)
{
	sqlite3_stmt *st = NULL;
	int cap = 0, rc;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(c->h, "SELECT core, end_ps, busy_pe_ps, "
			       "busy_act_ps, busy_dve_ps, busy_pool_ps, "
			       "busy_sp_ps, wait_sem_pe_ps, wait_sem_act_ps, "
			       "wait_sem_dve_ps, wait_sem_pool_ps, wait_sem_sp_ps, "
			       "wait_barrier_pe_ps, wait_barrier_act_ps, "
			       "wait_barrier_dve_ps, wait_barrier_pool_ps, "
			       "wait_barrier_sp_ps, wait_dep_pe_ps, "
			       "wait_dep_act_ps, wait_dep_dve_ps, "
			       "wait_dep_pool_ps, wait_dep_sp_ps FROM core_stats "
			       "WHERE execution_id = ?1 ORDER BY core", -1, &st,
			       NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	sqlite3_bind_int64(st, 1, e->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < MAX_LANES) {
		core_split *k;
		lm_grow(out, &cap, *n + 1, sizeof **out);
		k = &(*out)[(*n)++];
		memset(k, 0, sizeof *k);
		k->core = sqlite3_column_int(st, 0);
		k->end_ps = sqlite3_column_int64(st, 1);
		k->has_waits = sqlite3_column_type(st, 7) != SQLITE_NULL;
		for (int g = 0; g < LS_ENGINES; g++) {
			int64_t sum = 0;
			k->part[g][PART_BUSY] = sqlite3_column_int64(st, 2 + g);
			k->part[g][PART_SEM] = sqlite3_column_int64(st, 7 + g);
			k->part[g][PART_BARRIER] = sqlite3_column_int64(st,
									12 + g);
			k->part[g][PART_DEP] = sqlite3_column_int64(st, 17 + g);
			for (int p = 0; p < PART_IDLE; p++)
				sum += k->part[g][p];
			k->part[g][PART_IDLE] = e->sim_time_ps > sum ?
						e->sim_time_ps - sum : 0;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return sqlfail(c, "report");
	}
	return 0;
}

/*
** The synchronization wait of engine g of core k: on semaphores and at
** barriers, where the core waits for its DMA queues, its other engines'
** signals or other cores. (A dependency wait is the engine waiting for an
** instruction of another engine of the core, whose own bar shows why.)
*/
static int64_t waited(const core_split *k, int g)
{
	return k->part[g][PART_SEM] + k->part[g][PART_BARRIER];
}

/* Times in the unit of div (picoseconds per unit), for the headline. */
static void put_time(lm_buf *b, int64_t ps, double div, const char *unit)
{
	lm_buf_printf(b, "%.1f %s", (double)ps / div, unit);
}

/*
** The headline: in each mode the core that finished last decides the run
** time; of its engines, the one that waited longest on semaphores and
** barriers. The headline names the longest such wait over the modes and
** lists each mode's.
*/
static void headline(ctx *c, const exec_ref *ex, int n_ex,
		     core_split *const *sp, const int *n_sp)
{
	int best_mode = -1, best_core = -1, best_eng = -1;
	int64_t best = -1;
	int cand_core[MAX_MODES], cand_eng[MAX_MODES];
	int64_t max_t = 0;
	double div;
	const char *unit;
	for (int i = 0; i < n_ex; i++)
		if (ex[i].sim_time_ps > max_t)
			max_t = ex[i].sim_time_ps;
	unit = pick_unit(max_t, &div);
	for (int i = 0; i < n_ex; i++) {
		int64_t last = -1, w = -1;
		cand_core[i] = cand_eng[i] = -1;
		for (int j = 0; j < n_sp[i]; j++)
			if (sp[i][j].has_waits && sp[i][j].end_ps > last)
				last = sp[i][j].end_ps;
		for (int j = 0; j < n_sp[i]; j++) {
			if (!sp[i][j].has_waits || sp[i][j].end_ps != last)
				continue;
			for (int g = 0; g < LS_ENGINES; g++)
				if (waited(&sp[i][j], g) > w) {
					w = waited(&sp[i][j], g);
					cand_core[i] = j;
					cand_eng[i] = g;
				}
		}
		if (cand_core[i] >= 0 && w > best) {
			best = w;
			best_mode = i;
			best_core = cand_core[i];
			best_eng = cand_eng[i];
		}
	}
	lm_buf *b = &c->head;
	if (best_mode < 0) {
		lm_buf_puts(b, "<p class=\"note\">The run's statistics were "
			    "logged without the per-engine waits (an older "
			    "lncsim): no wait breakdown.</p>\n");
		return;
	}
	const core_split *k = &sp[best_mode][best_core];
	lm_buf_printf(b, "<p class=\"headline\"><strong>Longest wait: core %d "
		      "%s", k->core, engine_names[best_eng]);
	lm_buf_printf(b, " (%s)</strong> waited ", ex[best_mode].mode);
	put_time(b, best, div, unit);
	lm_buf_printf(b, " of the ");
	put_time(b, ex[best_mode].sim_time_ps, div, unit);
	lm_buf_puts(b, " run on semaphores and barriers, on the core that "
		    "finished last: ");
	for (int p = PART_SEM; p <= PART_DEP; p++) {
		if (p == PART_DEP)
			lm_buf_puts(b, " (and ");
		put_time(b, k->part[best_eng][p], div, unit);
		lm_buf_printf(b, " %s%s", part_names[p], p == PART_SEM ? ", " :
			      p == PART_BARRIER ? "" : ").</p>\n");
	}
	lm_buf_puts(b, "<ul class=\"headline\">\n");
	for (int i = 0; i < n_ex; i++) {
		if (cand_core[i] < 0)
			continue;
		const core_split *q = &sp[i][cand_core[i]];
		lm_buf_printf(b, "<li>%s: core %d finished last (", ex[i].mode,
			      q->core);
		put_time(b, q->end_ps, div, unit);
		lm_buf_printf(b, "); its %s waited ", engine_names[cand_eng[i]]);
		put_time(b, waited(q, cand_eng[i]), div, unit);
		lm_buf_puts(b, "</li>\n");
	}
	lm_buf_puts(b, "</ul>\n");
}

/*
** One stacked bar per engine and core of execution e: busy, the three
** waits and idle, adding up to the run time. The y axis tops at ymax_ps
** (the longest mode of the run), so the modes' charts compare.
*/
static int plot_waits(ctx *c, int64_t run_id, const exec_ref *e,
		      const core_split *sp, int n_sp, int64_t ymax_ps,
		      const char *what)
{
	char heading[96];
	snprintf(heading, sizeof heading, "Where each engine's time went (%s)",
		 e->mode);
	if (n_sp == 0 || e->sim_time_ps <= 0) {
		not_plotted(c, heading, "the execution has no per-core "
			    "statistics or took no simulated time.");
		return 0;
	}
	if (!sp[0].has_waits) {
		not_plotted(c, heading, "the execution was logged without the "
			    "per-engine waits (an older lncsim).");
		return 0;
	}
	double div;
	const char *unit = pick_unit(ymax_ps, &div);
	lm_buf t = LM_BUF_INIT;
	lm_buf_puts(&t, "engine");
	for (int p = 0; p < N_PARTS; p++)
		lm_buf_printf(&t, "\t%s", part_names[p]);
	lm_buf_puts(&t, "\n");
	for (int j = 0; j < n_sp; j++) {
		if (j > 0)
			lm_buf_puts(&t, " \t0\t0\t0\t0\t0\n");
		for (int g = 0; g < LS_ENGINES; g++) {
			lm_buf_printf(&t, "core %d %s", sp[j].core,
				      engine_names[g]);
			for (int p = 0; p < N_PARTS; p++)
				lm_buf_printf(&t, "\t%.6g",
					      (double)sp[j].part[g][p] / div);
			lm_buf_puts(&t, "\n");
		}
	}
	char *data = lm_xasprintf("waits-%s.tsv", e->mode);
	char *image = lm_xasprintf("waits-%s.%s", e->mode, c->fmt);
	char *title = lm_xasprintf("Engine time, run %lld (%s): %s",
				   (long long)run_id, e->mode, what);
	char ymax[32];
	snprintf(ymax, sizeof ymax, "%.6g", (double)ymax_ps / div);
	const char *extra[] = { unit, ymax, NULL };
	char caption[400];
	snprintf(caption, sizeof caption, "For each core and engine of the "
		 "%s execution: the time it ran instructions (busy), waited "
		 "for a semaphore, waited at a core barrier, waited for a "
		 "dependency (or for its call to start), and had nothing "
		 "queued (idle); each bar adds up to the run time.", e->mode);
	int rc = write_file(c, data, t.ptr, t.size);
	if (rc == 0)
		rc = plot(c, "waits.gp", data, image, title, extra, heading,
			  caption);
	lm_buf_free(&t);
	free(data);
	free(image);
	free(title);
	return rc;
}

/* ---- timeline -------------------------------------------------------- */

/* Add execution e's Matmult busy time per core and bucket into busy
** (lanes nl x nm, core-major, mode column mi; bucket width w). */
static int add_busy(ctx *c, const exec_ref *e, int mi, int nm, int nl,
		    int nb, double w, double *busy)
{
	sqlite3_stmt *st = NULL;
	int rc;
	if (sqlite3_prepare_v2(c->h, "SELECT core, start_ps, duration_ps "
			       "FROM matmuls WHERE execution_id = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	sqlite3_bind_int64(st, 1, e->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int core = sqlite3_column_int(st, 0);
		double s = (double)sqlite3_column_int64(st, 1);
		double d = (double)sqlite3_column_int64(st, 2);
		double *lane;
		if (core < 0 || core >= nl || d <= 0)
			continue;
		lane = busy + ((size_t)core * nm + mi) * nb;
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
				lane[b] += ov;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sqlfail(c, "report");
}

/*
** PE busy fraction per time bucket, one lane per core and mode, the
** modes of one core next to each other on one time axis (the longest
** execution's).
*/
static int plot_timeline(ctx *c, int64_t run_id, const exec_ref *ex,
			 int n_ex, const char *what)
{
	const char *heading = "PE timeline per core, the modes side by side";
	int64_t span = 0, v = 0;
	int max_core = -1, is_null = 0;
	for (int i = 0; i < n_ex; i++) {
		if (ex[i].sim_time_ps > span)
			span = ex[i].sim_time_ps;
		if (query_int(c, "SELECT max(core) FROM core_stats WHERE "
			      "execution_id = ?1", ex[i].id, &v, &is_null) != 0)
			return LM_EINPUT;
		if (!is_null && v > max_core)
			max_core = v >= MAX_LANES ? MAX_LANES - 1 : (int)v;
		if (query_int(c, "SELECT max(core) FROM matmuls WHERE "
			      "execution_id = ?1", ex[i].id, &v, &is_null) != 0)
			return LM_EINPUT;
		if (!is_null && v > max_core)
			max_core = v >= MAX_LANES ? MAX_LANES - 1 : (int)v;
	}
	if (span <= 0) {
		not_plotted(c, heading, "the executions took no simulated time.");
		return 0;
	}
	if (max_core < 0) {
		not_plotted(c, heading, "the executions have no cores.");
		return 0;
	}
	int nc = max_core + 1, nb = c->buckets, nl = nc * n_ex, rc = 0;
	double w = (double)span / nb;
	double *busy = lm_xcalloc((size_t)nl * (size_t)nb, sizeof *busy);
	for (int i = 0; i < n_ex && rc == 0; i++)
		rc = add_busy(c, &ex[i], i, n_ex, nc, nb, w, busy);
	if (rc != 0) {
		free(busy);
		return rc;
	}
	double div;
	const char *unit = pick_unit(span, &div);
	lm_buf t = LM_BUF_INIT, modes = LM_BUF_INIT;
	lm_buf_printf(&t, "start (%s)\tend (%s)", unit, unit);
	for (int l = 0; l < nl; l++)
		lm_buf_printf(&t, "\tcore %d %s", l / n_ex, ex[l % n_ex].mode);
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
	for (int i = 0; i < n_ex; i++)
		lm_buf_printf(&modes, "%s%s", i ? " " : "", ex[i].mode);
	char *image = lm_xasprintf("timeline.%s", c->fmt);
	char *title = lm_xasprintf("PE timeline, run %lld: %s",
				   (long long)run_id, what);
	char nls[16];
	snprintf(nls, sizeof nls, "%d", nl);
	const char *extra[] = { nls, unit, lm_buf_cstr(&modes), NULL };
	char caption[320];
	snprintf(caption, sizeof caption, "Fraction of each of %d time "
		 "buckets during which the core's PE array ran a Matmult (from "
		 "the matmuls rows), one lane per core and mode%s.", nb,
		 n_ex > 1 ? ", the modes of a core next to each other on one "
		 "time axis" : "");
	rc = write_file(c, "timeline.tsv", t.ptr, t.size);
	if (rc == 0)
		rc = plot(c, "timeline.gp", "timeline.tsv", image, title, extra,
			  heading, caption);
	lm_buf_free(&t);
	lm_buf_free(&modes);
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

/* ---- races ------------------------------------------------------------ */

static void td(lm_buf *b, const char *cls, const char *s);

/* One access of a race as a table cell. */
static void td_access(lm_buf *b, const ldb_race_access *x)
{
	lm_buf_puts(b, "<td><code>");
	html_escape(b, x->function);
	lm_buf_puts(b, "/");
	html_escape(b, x->block);
	lm_buf_puts(b, "/");
	html_escape(b, x->instr);
	lm_buf_puts(b, "</code>");
	if (x->iteration[0]) {
		lm_buf_puts(b, " [");
		html_escape(b, x->iteration);
		lm_buf_puts(b, "]");
	}
	lm_buf_printf(b, ", core %d ", x->core);
	html_escape(b, x->engine);
	lm_buf_puts(b, "</td>");
}

/*
** The races section: whether the run was checked, and per mode (those of
** its executions, then any other its races name) a count and a table of
** its races.
*/
static int races_section(ctx *c, int64_t run_id, const exec_ref *ex,
			 int n_ex)
{
	lm_buf *b = &c->races;
	ldb_race_check *ck = NULL;
	ldb_race_row *rows = NULL;
	int n_ck = 0, n = 0;
	if (ldb_query_race_checks(c->db, run_id, 0, &ck, &n_ck, c->err) != 0)
		return LM_EINPUT;
	int checked = n_ck == 1 && ck[0].races >= 0;
	free(ck);
	lm_buf_puts(b, "<section id=\"races\">\n<h2>Races</h2>\n");
	if (!checked) {
		lm_buf_printf(b, "<p class=\"note\">Run %lld was not checked "
			      "for races (a run checks them with "
			      "<code>--race</code>).</p>\n</section>\n",
			      (long long)run_id);
		return 0;
	}
	if (ldb_query_races(c->db, run_id, &rows, &n, c->err) != 0)
		return LM_EINPUT;
	const char *modes[MAX_MODES + 8];
	int n_modes = 0;
	for (int i = 0; i < n_ex; i++)
		modes[n_modes++] = ex[i].mode;
	for (int i = 0; i < n; i++) {
		int k = 0;
		while (k < n_modes && strcmp(modes[k], rows[i].mode))
			k++;
		if (k == n_modes && n_modes < MAX_MODES + 8)
			modes[n_modes++] = rows[i].mode;
	}
	if (n == 0)
		lm_buf_printf(b, "<p class=\"headline\">Run %lld was checked "
			      "for races: no races.</p>\n", (long long)run_id);
	else
		lm_buf_printf(b, "<p class=\"headline\"><strong>Run %lld: %d "
			      "race%s</strong> (two accesses to the same bytes, "
			      "at least one a write, that no dependency, "
			      "semaphore or barrier orders).</p>\n",
			      (long long)run_id, n, n == 1 ? "" : "s");
	for (int m = 0; m < n_modes; m++) {
		int k = 0;
		for (int i = 0; i < n; i++)
			k += !strcmp(rows[i].mode, modes[m]);
		lm_buf_puts(b, "<h3>");
		html_escape(b, modes[m]);
		if (k == 0) {
			lm_buf_puts(b, ": no races</h3>\n");
			continue;
		}
		lm_buf_printf(b, ": %d race%s</h3>\n<table class=\"races\">\n"
			      "<tr><th>kind</th><th>memory</th><th>bytes</th>"
			      "<th>first access</th><th>second access</th>"
			      "<th>last common ordering point</th></tr>\n", k,
			      k == 1 ? "" : "s");
		for (int i = 0; i < n; i++) {
			const ldb_race *r = &rows[i].r;
			if (strcmp(rows[i].mode, modes[m]))
				continue;
			lm_buf_puts(b, "<tr>");
			td(b, NULL, r->kind);
			lm_buf_puts(b, "<td>");
			html_escape(b, r->memory);
			if (r->core >= 0)
				lm_buf_printf(b, " core %d", r->core);
			if (r->object[0]) {
				lm_buf_puts(b, " <code>");
				html_escape(b, r->object);
				lm_buf_puts(b, "</code>");
			}
			lm_buf_printf(b, "</td><td class=\"num\">[%lld, %lld) "
				      "(%lld B)</td>", (long long)r->lo,
				      (long long)r->hi,
				      (long long)(r->hi - r->lo));
			td_access(b, &r->a);
			td_access(b, &r->b);
			td(b, NULL, r->common[0] ? r->common : "(none)");
			lm_buf_puts(b, "</tr>\n");
		}
		lm_buf_puts(b, "</table>\n");
	}
	lm_buf_puts(b, "</section>\n");
	ldb_race_rows_free(rows, n);
	return 0;
}


/* ---- kernels ---------------------------------------------------------- */

/* The kernel calls of one execution plotted at most (the table lists up
** to MAX_KERNEL_ROWS). */
#define MAX_KERNEL_PLOT 24
#define MAX_KERNEL_ROWS 1000

/* One NKIKernel call of an execution (kernels, kernel_engines). */
typedef struct kernel_row {
	int seq, core, depth;
	char call[128], func[128], caller[128], critical[8];
	int64_t start_ps, end_ps, instructions;
	int64_t dma_bytes, dma_transfers, dma_active_ps;
	int64_t part[LS_ENGINES][N_PARTS];
} kernel_row;

/* Copy column i of st into buf (n bytes, cut). */
static void col_text(sqlite3_stmt *st, int i, char *buf, size_t n)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(buf, n, "%s", t ? (const char *)t : "");
}

/*
** The kernel calls of execution e in their order (at most
** MAX_KERNEL_ROWS; *total: how many it has). *out caller frees.
*/
static int load_kernels(ctx *c, const exec_ref *e, kernel_row **out, int *n,
			int64_t *total)
{
	sqlite3_stmt *st = NULL;
	int cap = 0, rc;
	*out = NULL;
	*n = 0;
	if (query_int(c, "SELECT count(*) FROM kernels WHERE execution_id = ?1",
		      e->id, total, NULL) != 0)
		return LM_EINPUT;
	if (*total == 0)
		return 0;
	if (sqlite3_prepare_v2(c->h, "SELECT seq, core, depth, call, func, "
			       "caller, critical, start_ps, end_ps, "
			       "instructions, dma_bytes, dma_transfers, "
			       "dma_active_ps FROM kernels WHERE execution_id "
			       "= ?1 ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	sqlite3_bind_int64(st, 1, e->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < MAX_KERNEL_ROWS) {
		kernel_row *k;
		lm_grow(out, &cap, *n + 1, sizeof **out);
		k = &(*out)[(*n)++];
		memset(k, 0, sizeof *k);
		k->seq = sqlite3_column_int(st, 0);
		k->core = sqlite3_column_int(st, 1);
		k->depth = sqlite3_column_int(st, 2);
		col_text(st, 3, k->call, sizeof k->call);
		col_text(st, 4, k->func, sizeof k->func);
		col_text(st, 5, k->caller, sizeof k->caller);
		col_text(st, 6, k->critical, sizeof k->critical);
		k->start_ps = sqlite3_column_int64(st, 7);
		k->end_ps = sqlite3_column_int64(st, 8);
		k->instructions = sqlite3_column_int64(st, 9);
		k->dma_bytes = sqlite3_column_int64(st, 10);
		k->dma_transfers = sqlite3_column_int64(st, 11);
		k->dma_active_ps = sqlite3_column_int64(st, 12);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		goto fail;
	if (sqlite3_prepare_v2(c->h, "SELECT engine, busy_ps, wait_sem_ps, "
			       "wait_barrier_ps, wait_dep_ps, idle_ps FROM "
			       "kernel_engines WHERE execution_id = ?1 AND "
			       "seq = ?2", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	for (int i = 0; i < *n; i++) {
		kernel_row *k = &(*out)[i];
		sqlite3_bind_int64(st, 1, e->id);
		sqlite3_bind_int(st, 2, k->seq);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const unsigned char *en = sqlite3_column_text(st, 0);
			int g = 0;
			while (g < LS_ENGINES && (!en || strcmp((const char *)
				en, ls_kernel_engine_name(g))))
				g++;
			if (g == LS_ENGINES)
				continue;
			for (int p = 0; p < N_PARTS; p++)
				k->part[g][p] = sqlite3_column_int64(st, 1 + p);
		}
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			goto fail;
	}
	sqlite3_finalize(st);
	return 0;
fail:
	rc = sqlfail(c, "report");
	sqlite3_finalize(st);
	free(*out);
	*out = NULL;
	*n = 0;
	return rc;
}

/* A percentage of part in whole ("-" when whole is 0). */
static void put_pct(lm_buf *b, int64_t part, int64_t whole)
{
	if (whole > 0)
		lm_buf_printf(b, "<td class=\"num\">%.1f</td>",
			      100.0 * (double)part / (double)whole);
	else
		lm_buf_puts(b, "<td class=\"num\">-</td>");
}

/*
** The DMA of the listed kernel calls of execution e per queue instance:
** a table (nothing when no listed call moved data).
*/
static int kernel_queues_of(ctx *c, const exec_ref *e, const kernel_row *ks,
			    int n)
{
	lm_buf *b = &c->kerns;
	sqlite3_stmt *st = NULL;
	int rc, rows = 0;
	char num[64];
	if (n == 0)
		return 0;
	if (sqlite3_prepare_v2(c->h, "SELECT seq, queue, bytes, transfers, "
			       "xfer_ps, active_ps FROM kernel_queues WHERE "
			       "execution_id = ?1 AND seq <= ?2 ORDER BY seq, "
			       "queue", -1, &st, NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	sqlite3_bind_int64(st, 1, e->id);
	sqlite3_bind_int(st, 2, ks[n - 1].seq);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int seq = sqlite3_column_int(st, 0), i = 0;
		while (i < n && ks[i].seq != seq)
			i++;
		if (i == n)
			continue;
		if (rows++ == 0)
			lm_buf_puts(b, "<table class=\"kernels\">\n<tr>"
				    "<th>call</th><th>DMA queue instance</th>"
				    "<th>util (%)</th><th>bytes</th>"
				    "<th>transfers</th><th>transfer time "
				    "(ns)</th></tr>\n");
		char q[256];
		col_text(st, 1, q, sizeof q);
		lm_buf_puts(b, "<tr>");
		snprintf(num, sizeof num, "k%d", seq);
		td(b, NULL, num);
		td(b, NULL, q);
		put_pct(b, sqlite3_column_int64(st, 5),
			ks[i].end_ps - ks[i].start_ps);
		snprintf(num, sizeof num, "%lld",
			 (long long)sqlite3_column_int64(st, 2));
		td(b, "num", num);
		snprintf(num, sizeof num, "%lld",
			 (long long)sqlite3_column_int64(st, 3));
		td(b, "num", num);
		snprintf(num, sizeof num, "%.3f",
			 (double)sqlite3_column_int64(st, 4) / 1e3);
		td(b, "num", num);
		lm_buf_puts(b, "</tr>\n");
	}
	if (rc != SQLITE_DONE) {
		rc = sqlfail(c, "report");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	if (rows)
		lm_buf_puts(b, "</table>\n<p class=\"note\">Each queue "
			    "instance's share of the call's time with a "
			    "transfer in flight (util), the bytes it moved "
			    "and its transfers' times summed.</p>\n");
	return 0;
}

/* The kernel calls of execution e: their chart and their table. */
static int kernels_of(ctx *c, int64_t run_id, const exec_ref *e,
		      const kernel_row *ks, int n, int64_t total,
		      const char *what)
{
	lm_buf *b = &c->kerns;
	int np = n < MAX_KERNEL_PLOT ? n : MAX_KERNEL_PLOT, rc;
	int64_t longest = 0;
	char num[64];
	lm_buf_puts(b, "<h3>");
	html_escape(b, e->mode);
	lm_buf_printf(b, ": %lld kernel call%s</h3>\n", (long long)total,
		      total == 1 ? "" : "s");
	for (int i = 0; i < np; i++)
		if (ks[i].end_ps - ks[i].start_ps > longest)
			longest = ks[i].end_ps - ks[i].start_ps;
	double div;
	const char *unit = pick_unit(longest, &div);
	lm_buf t = LM_BUF_INIT;
	lm_buf_puts(&t, "engine");
	for (int p = 0; p < N_PARTS; p++)
		lm_buf_printf(&t, "\t%s", part_names[p]);
	lm_buf_puts(&t, "\n");
	for (int i = 0; i < np; i++) {
		if (i > 0)
			lm_buf_puts(&t, " \t0\t0\t0\t0\t0\n");
		for (int g = 0; g < LS_ENGINES; g++) {
			/* '#' would start a comment in gnuplot's data */
			lm_buf_printf(&t, "k%d %s", ks[i].seq,
				      engine_names[g]);
			for (int p = 0; p < N_PARTS; p++)
				lm_buf_printf(&t, "\t%.6g",
					      (double)ks[i].part[g][p] / div);
			lm_buf_puts(&t, "\n");
		}
	}
	char *data = lm_xasprintf("kernels-%s.tsv", e->mode);
	char *image = lm_xasprintf("kernels-%s.%s", e->mode, c->fmt);
	char *title = lm_xasprintf("Engine time in each kernel call, run %lld "
				   "(%s): %s", (long long)run_id, e->mode,
				   what);
	const char *extra[] = { unit, "*", NULL };
	char heading[96], caption[512];
	snprintf(heading, sizeof heading, "Where each engine's time went in "
		 "each kernel call (%s)", e->mode);
	snprintf(caption, sizeof caption, "For each NKIKernel call kN of the "
		 "%s execution (%d of %lld shown) and each engine: the time "
		 "its body's instructions ran (busy), waited for a semaphore, "
		 "at a core barrier, for a dependency, and the rest of the "
		 "call (idle); each bar adds up to the call's time, from its "
		 "start to its completion.", e->mode, np, (long long)total);
	rc = write_file(c, data, t.ptr, t.size);
	if (rc == 0) {
		c->to = b;
		rc = plot(c, "waits.gp", data, image, title, extra, heading,
			  caption);
		c->to = NULL;
	}
	lm_buf_free(&t);
	free(data);
	free(image);
	free(title);
	if (rc)
		return rc;

	lm_buf_puts(b, "<table class=\"kernels\">\n<tr><th>call</th>"
		    "<th>core</th><th>instruction</th><th>kernel</th><th>called "
		    "from</th><th>start (ns)</th><th>time (ns)</th>"
		    "<th>instructions</th>");
	for (int g = 0; g < LS_ENGINES; g++)
		lm_buf_printf(b, "<th>%s util (%%)</th>", engine_names[g]);
	lm_buf_puts(b, "<th>DMA util (%)</th><th>DMA bytes</th>"
		    "<th>DMA transfers</th><th>semaphore wait (ns)</th>"
		    "<th>barrier wait (ns)</th><th>dependency wait (ns)</th>"
		    "<th>critical engine</th></tr>\n");
	for (int i = 0; i < n; i++) {
		const kernel_row *k = &ks[i];
		int64_t len = k->end_ps - k->start_ps, w[3] = { 0, 0, 0 };
		lm_buf_puts(b, "<tr>");
		snprintf(num, sizeof num, "k%d", k->seq);
		td(b, NULL, num);
		snprintf(num, sizeof num, "%d", k->core);
		td(b, "num", num);
		td(b, NULL, k->call);
		td(b, NULL, k->func);
		td(b, NULL, k->caller);
		snprintf(num, sizeof num, "%.3f", (double)k->start_ps / 1e3);
		td(b, "num", num);
		snprintf(num, sizeof num, "%.3f", (double)len / 1e3);
		td(b, "num", num);
		snprintf(num, sizeof num, "%lld", (long long)k->instructions);
		td(b, "num", num);
		for (int g = 0; g < LS_ENGINES; g++) {
			put_pct(b, k->part[g][PART_BUSY], len);
			w[0] += k->part[g][PART_SEM];
			w[1] += k->part[g][PART_BARRIER];
			w[2] += k->part[g][PART_DEP];
		}
		put_pct(b, k->dma_active_ps, len);
		snprintf(num, sizeof num, "%lld", (long long)k->dma_bytes);
		td(b, "num", num);
		snprintf(num, sizeof num, "%lld", (long long)k->dma_transfers);
		td(b, "num", num);
		for (int j = 0; j < 3; j++) {
			snprintf(num, sizeof num, "%.3f", (double)w[j] / 1e3);
			td(b, "num", num);
		}
		lm_buf_puts(b, "<td><strong>");
		html_escape(b, k->critical);
		lm_buf_puts(b, "</strong></td></tr>\n");
	}
	lm_buf_puts(b, "</table>\n");
	if (total > n)
		lm_buf_printf(b, "<p class=\"note\">The first %d of %lld "
			      "kernel calls are listed.</p>\n", n,
			      (long long)total);
	return kernel_queues_of(c, e, ks, n);
}

/*
** The Kernels section: per execution of the run, its NKIKernel calls
** (docs/reports.md, "Kernels"); one line when the run made none.
*/
static int kernels_section(ctx *c, int64_t run_id, const exec_ref *ex,
			   int n_ex, const char *what)
{
	lm_buf *b = &c->kerns;
	int any = 0, rc = 0;
	lm_buf_puts(b, "<section id=\"kernels\">\n<h2>Kernels</h2>\n");
	for (int i = 0; i < n_ex && rc == 0; i++) {
		kernel_row *ks = NULL;
		int n = 0;
		int64_t total = 0;
		if ((rc = load_kernels(c, &ex[i], &ks, &n, &total)) != 0)
			break;
		if (total > 0) {
			if (!any)
				lm_buf_puts(b, "<p>Each NKIKernel call: where "
					    "each engine's time went between "
					    "the call's start and its "
					    "completion, each engine's "
					    "utilization (busy / the call's "
					    "time; DMA: the time a transfer "
					    "of the body was in flight), and "
					    "the critical engine: the one "
					    "whose last work in the body "
					    "ended last.</p>\n");
			any = 1;
			rc = kernels_of(c, run_id, &ex[i], ks, n, total,
				       what);
		}
		free(ks);
	}
	if (rc == 0 && !any)
		lm_buf_printf(b, "<p class=\"note\">Run %lld made no NKIKernel "
			      "call.</p>\n", (long long)run_id);
	lm_buf_puts(b, "</section>\n");
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
	if (n == 0) {
		not_plotted(c, heading, "no run matches the filters.");
		return 0;
	}
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
		    ".headline { font-size: 110%; }\n"
		    "</style>\n</head>\n<body>\n<h1>lncsim report</h1>\n<p>");
	lm_buf_puts(&b, "Database <code>");
	html_escape(&b, ldb_path(c->db));
	lm_buf_printf(&b, "</code>, generated %s by lncsim %s. Per-run plots "
		      "show run %lld (highlighted below).", when,
		      PACKAGE_VERSION, (long long)run_id);
	if (c->filter.since || c->filter.kind) {
		lm_buf_puts(&b, " History and run table: only runs");
		if (c->filter.kind) {
			lm_buf_puts(&b, " of <code>lncsim ");
			html_escape(&b, c->filter.kind);
			lm_buf_puts(&b, "</code>");
		}
		if (c->filter.since) {
			lm_buf_puts(&b, " started at or after ");
			html_escape(&b, c->filter.since);
		}
		lm_buf_puts(&b, ".");
	}
	lm_buf_puts(&b, "</p>\n");
	lm_buf_put(&b, c->head.ptr ? c->head.ptr : "", c->head.size);
	lm_buf_put(&b, c->races.ptr ? c->races.ptr : "", c->races.size);
	lm_buf_put(&b, c->kerns.ptr ? c->kerns.ptr : "", c->kerns.size);
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

/* ---- the manifest ---------------------------------------------------- */

/* Whether s is one of words (NULL-terminated). */
static int one_of(const char *s, size_t n, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == n && !strncmp(s, *words, n))
			return 1;
	return 0;
}

/*
** Whether name is a file some report writes: a .gp script, index.html,
** replot.sh, or STEM.EXT of the data and images (STEM util, timeline,
** shapes, history, waits-MODE, kernels-MODE; EXT tsv, png, svg). Only
** such names are ever removed, whatever a manifest lists: a user's file
** in the directory is not one.
*/
static int own_name(const char *name)
{
	static const char *const stems[] = {
		"util", "timeline", "shapes", "history", "waits-reference",
		"waits-linked", "waits-single", "kernels-reference",
		"kernels-linked", "kernels-single", NULL };
	static const char *const exts[] = { "tsv", "png", "svg", NULL };
	const char *dot = strrchr(name, '.');
	if (!strcmp(name, "index.html") || !strcmp(name, "replot.sh"))
		return 1;
	for (const lr_gp_script *s = lr_gp_scripts; s->name; s++)
		if (!strcmp(name, s->name))
			return 1;
	return dot && one_of(name, (size_t)(dot - name), stems) &&
	       one_of(dot + 1, strlen(dot + 1), exts);
}

/*
** The names the previous report listed in the manifest of the output
** directory (none without one), read without following a symlink (a
** symlink there is no manifest of ours: none). Only names a report writes
** (own_name) are taken; anything else in the file is ignored.
*/
static int read_manifest(ctx *c, char ***names, int *n)
{
	char *path = lm_path_join(c->dir, LR_MANIFEST), *text = NULL;
	size_t len = 0;
	int cap = 0, rc = 0, dfd, fd = -1;
	int64_t size = 0;
	lm_error ignore;
	*names = NULL;
	*n = 0;
	dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 ||
	    lm_open_regular_at(dfd, LR_MANIFEST, path, &fd, &size,
			       &ignore) != 0) {
		/* none, a symlink, a directory, a FIFO: no manifest */
		if (dfd >= 0)
			close(dfd);
		free(path);
		return 0;
	}
	close(dfd);
	rc = lm_read_fd(fd, path, 1 << 20, &text, &len, c->err);
	close(fd);
	free(path);
	if (rc != 0)
		return rc;
	for (char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (*p == '#' || !lm_path_component_ok(p) || !own_name(p))
			continue;
		lm_grow(names, &cap, *n + 1, sizeof **names);
		(*names)[(*n)++] = lm_xstrdup(p);
	}
	free(text);
	return 0;
}

/* The manifest of this report: every file it wrote. */
static int write_manifest(ctx *c)
{
	lm_buf b = LM_BUF_INIT;
	char *path = lm_path_join(c->dir, LR_MANIFEST);
	int rc;
	lm_buf_puts(&b, "# files written by lncsim report; the next report "
		    "into this directory\n# removes the ones it does not "
		    "write again (docs/reports.md)\n");
	for (int i = 0; i < c->rep->n_files; i++)
		lm_buf_printf(&b, "%s\n", c->rep->files[i]);
	rc = lm_write_file_atomic(path, b.ptr, b.size, c->err);
	lm_buf_free(&b);
	free(path);
	return rc;
}

/*
** Remove what the previous report wrote and this one did not: only names
** of its manifest, only regular files (a symlink or directory put there
** since is left alone), never through a symlink. Failures are ignored: the
** report is complete, a leftover file is harmless.
*/
static void remove_stale(ctx *c, char *const *old, int n_old)
{
	int dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	for (int i = 0; i < n_old; i++) {
		struct stat sb;
		int again = 0;
		for (int j = 0; j < c->rep->n_files && !again; j++)
			again = !strcmp(old[i], c->rep->files[j]);
		if (again || fstatat(dfd, old[i], &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		unlinkat(dfd, old[i], 0);
	}
	close(dfd);
}

/* "MODULE (STATUS)" of the run, for the plot titles. */
static int run_what(ctx *c, int64_t run_id, lm_buf *out)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(c->h, "SELECT module, command, status FROM "
			       "runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
		return sqlfail(c, "report");
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(st, 0);
		const char *cmd = (const char *)sqlite3_column_text(st, 1);
		const char *status = (const char *)sqlite3_column_text(st, 2);
		char *sh = shorten(m && *m ? m : cmd ? cmd : "");
		lm_buf_printf(out, "%s (%s)", sh, status ? status : "");
		free(sh);
	}
	sqlite3_finalize(st);
	return 0;
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
	c.filter.since = o->since && *o->since ? o->since : NULL;
	c.filter.kind = o->command && *o->command ? o->command : NULL;
	ldb_run_row *rows = NULL;
	int n_rows = 0, rc;
	exec_ref ex[MAX_MODES];
	core_split *sp[MAX_MODES] = { NULL };
	int n_sp[MAX_MODES] = { 0 };
	int n_ex = 0;
	int64_t run_id = 0, want = o->run_id, ymax = 0, mms = 0;
	char **old = NULL;
	int n_old = 0;
	lm_buf rs = LM_BUF_INIT;

	if (strcmp(c.fmt, "png") && strcmp(c.fmt, "svg"))
		return lm_err(err, "", "report", "unknown format '%s' (png or "
			      "svg)", c.fmt);
	if (c.filter.kind && strcmp(c.filter.kind, "run") &&
	    strcmp(c.filter.kind, "diff") && strcmp(c.filter.kind, "fuzz"))
		return lm_err(err, "", "report", "--command '%s': run, diff or "
			      "fuzz", c.filter.kind);
	if ((rc = ldb_readable(db, err)) != 0 ||
	    (rc = ldb_query_runs_where(db, o->history > 0 ? o->history : 200,
				       &c.filter, &rows, &n_rows, err)) != 0)
		goto done;
	/* with filters, the default run is the last matching one that ran */
	if (want == 0 && (c.filter.since || c.filter.kind)) {
		for (int i = 0; i < n_rows; i++)
			if (rows[i].n_executions > 0)
				want = rows[i].id;
		if (want == 0) {
			rc = lm_err(err, ldb_path(db), "report", "no run "
				    "matching --since / --command has an "
				    "execution to plot");
			goto done;
		}
	}
	if ((rc = pick_run(&c, want, &run_id, ex, &n_ex)) != 0)
		goto done;
	out->run_id = run_id;
	if ((rc = lr_find_gnuplot(o->gnuplot, &c.gnuplot, err)) != 0)
		goto done;
	if ((rc = lm_mkdirs(c.dir, err)) != 0 ||
	    (rc = read_manifest(&c, &old, &n_old)) != 0)
		goto done;
	for (const lr_gp_script *s = lr_gp_scripts; s->name; s++)
		if ((rc = write_file(&c, s->name, s->text,
				     strlen(s->text))) != 0)
			goto done;
	lm_buf_puts(&c.replot, "#!/bin/sh\n# re-plot every image of this "
		    "report (lncsim report)\ncd \"$(dirname \"$0\")\" || exit 1\n");
	if ((rc = run_what(&c, run_id, &rs)) != 0)
		goto done;
	for (int i = 0; i < n_ex; i++) {
		if ((rc = load_split(&c, &ex[i], &sp[i], &n_sp[i])) != 0)
			goto done;
		if (ex[i].sim_time_ps > ymax)
			ymax = ex[i].sim_time_ps;
	}
	headline(&c, ex, n_ex, sp, n_sp);
	if ((rc = races_section(&c, run_id, ex, n_ex)) != 0 ||
	    (rc = kernels_section(&c, run_id, ex, n_ex,
				  lm_buf_cstr(&rs))) != 0)
		goto done;
	if ((rc = query_int(&c, "SELECT count(*) FROM matmuls x JOIN "
			    "executions e ON x.execution_id = e.id WHERE "
			    "e.run_id = ?1", run_id, &mms, NULL)) != 0)
		goto done;
	if (mms == 0) {
		char why[160];
		snprintf(why, sizeof why, "run %lld executed no Matmult, so "
			 "its PE array never ran one: there is no utilization "
			 "or PE timeline to show.", (long long)run_id);
		not_plotted(&c, "Per-core PE and MAC utilization, PE timeline",
			    why);
	} else if ((rc = plot_util(&c, run_id, ex, n_ex,
				   lm_buf_cstr(&rs))) != 0) {
		goto done;
	}
	for (int i = 0; i < n_ex; i++)
		if ((rc = plot_waits(&c, run_id, &ex[i], sp[i], n_sp[i], ymax,
				     lm_buf_cstr(&rs))) != 0)
			goto done;
	if (mms > 0 && (rc = plot_timeline(&c, run_id, ex, n_ex,
					   lm_buf_cstr(&rs))) != 0)
		goto done;
	if ((rc = plot_shapes(&c)) != 0 ||
	    (rc = plot_history(&c, rows, n_rows)) != 0)
		goto done;
	if ((rc = write_file(&c, "replot.sh", c.replot.ptr, c.replot.size)) ||
	    (rc = write_index(&c, run_id, rows, n_rows)) ||
	    (rc = write_manifest(&c)))
		goto done;
	remove_stale(&c, old, n_old);
done:
	if (rc != 0)
		lr_report_free(out);
	for (int i = 0; i < n_old; i++)
		free(old[i]);
	free(old);
	for (int i = 0; i < MAX_MODES; i++)
		free(sp[i]);
	lm_buf_free(&rs);
	lm_buf_free(&c.head);
	lm_buf_free(&c.races);
	lm_buf_free(&c.kerns);
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

/*
** test_report.c -- `lncsim report`: every plot rendered from a database
** filled by hand, the HTML, the re-plot files, and the error paths.
** Tests that render need gnuplot: without it they pass with a "# skip"
** note (CI installs gnuplot-nox, so they run there).
*/
#include "common.h"
#include "testutil.h"
#include "db.h"
#include "dtype.h"
#include "report.h"
#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 1 if gnuplot can be found; else print a TAP-visible note. */
static int have_gnuplot(void)
{
	char *p = NULL;
	lm_error err;
	if (lr_find_gnuplot(NULL, &p, &err) == 0) {
		free(p);
		return 1;
	}
	printf("# skip: %s\n", err.msg);
	return 0;
}

/* A result with n_cores cores and n_mm matmuls spread over time. */
static ls_result make_result(int n_cores, int n_mm, double util)
{
	ls_result r;
	memset(&r, 0, sizeof r);
	r.n_cores = n_cores;
	r.sim_time_ps = 2000000;
	r.instructions = 10 * n_mm;
	r.cores = lm_xcalloc((size_t)n_cores, sizeof *r.cores);
	for (int i = 0; i < n_cores; i++) {
		r.cores[i].core = i;
		r.cores[i].busy_ps[0] = (int64_t)(util * 2000000);
		r.cores[i].pe_util = util - 0.1 * i;
		r.cores[i].mac_util = (util - 0.1 * i) / 2;
		r.cores[i].matmuls = n_mm / n_cores;
		r.cores[i].end_ps = 2000000 - 1000 * i;
		/* waits: Activation on a semaphore, Pool at a barrier, DVE
		   on a dependency */
		r.cores[i].wait_sem_ps[1] = 300000 + 100000 * i;
		r.cores[i].wait_barrier_ps[3] = 500000;
		r.cores[i].wait_dep_ps[2] = 900000;
	}
	r.n_matmuls = n_mm;
	r.matmuls = lm_xcalloc((size_t)n_mm, sizeof *r.matmuls);
	static const int ks[] = { 128, 128, 64, 32, 128 };
	static const int ms[] = { 128, 64, 128, 32, 96 };
	for (int j = 0; j < n_mm; j++) {
		ls_matmul_rec *m = &r.matmuls[j];
		m->core = j % n_cores;
		m->name = lm_xasprintf("mm%d", j);
		m->k = ks[j % 5];
		m->m = ms[j % 5];
		m->n = 512;
		m->dtype = LM_DT_BFLOAT16;
		/* busy in the first half on core 0, all along on the others */
		int per = n_mm / n_cores;
		int64_t span = m->core == 0 ? 1000000 : 2000000;
		m->start_ps = (j / n_cores) * span / (per ? per : 1);
		m->duration_ps = span / (per ? per : 1) * 3 / 4;
		m->array_util = (double)m->k * m->m / 16384.0;
	}
	return r;
}

/* Log a run with the given executions ("reference,linked" etc.), its
** command line and start time (0: now). */
static void add_run_as(ldb *db, const char *modes, int cores, int n_mm,
		       const char *status, const char *module,
		       const char *command, time_t started)
{
	lm_error err;
	ldb_run_info info = { .command = command, .module = module,
			      .arch = "trn2", .cores = cores, .seed = 1,
			      .started = started };
	ldb_run *run = NULL;
	ck_assert_msg(ldb_run_begin(db, &info, &run, &err) == 0, "%s", err.msg);
	char *m = lm_xstrdup(modes);
	double util = 0.8;
	for (char *t = strtok(m, ","); t; t = strtok(NULL, ",")) {
		ls_result r = make_result(cores, n_mm, util);
		ck_assert_int_eq(ldb_log_execution(run, t, &r, &err), 0);
		ls_result_free(&r);
		util -= 0.05;
	}
	free(m);
	ck_assert_int_eq(ldb_run_end(run, status, status[0] == 'p' ? "" :
				     "x_y <b>", 0.5, NULL, &err), 0);
}

static void add_run(ldb *db, const char *modes, int cores, int n_mm,
		    const char *status, const char *module)
{
	add_run_as(db, modes, cores, n_mm, status, module, "lncsim test", 0);
}

/* A database with four runs: ref+linked, single, error, fail. */
static char *make_db(const char *dir)
{
	char *path = lm_path_join(dir, "rep.db");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	add_run(db, "reference,linked", 4, 400, "pass", "examples/handoff2");
	add_run(db, "single", 1, 50, "pass", "examples/matmul1");
	add_run(db, "", 2, 0, "error", "broken_module");
	add_run(db, "single", 2, 60, "fail", "m_2");
	ldb_close(db);
	return path;
}

/* Check a PNG: signature, IHDR width, file size. */
static void check_png(const char *dir, const char *name, int width)
{
	char *p = lm_path_join(dir, name);
	char *data = NULL;
	size_t n = 0;
	lm_error err;
	ck_assert_msg(lm_read_file(p, &data, &n, &err) == 0, "%s", err.msg);
	ck_assert_msg(n > 8000, "%s: only %zu bytes", name, n);
	ck_assert_msg(memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0,
		      "%s: not a PNG", name);
	ck_assert_msg(memcmp(data + 12, "IHDR", 4) == 0, "%s: no IHDR", name);
	const unsigned char *u = (const unsigned char *)data + 16;
	int w = u[0] << 24 | u[1] << 16 | u[2] << 8 | u[3];
	ck_assert_int_eq(w, width);
	free(data);
	free(p);
}

/* 1 if dir/name exists. */
static int exists(const char *dir, const char *name)
{
	char *p = lm_path_join(dir, name);
	int ok = access(p, R_OK) == 0;
	free(p);
	return ok;
}

START_TEST(test_report_png)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep");
	char *db_path = make_db(d);
	char *out = lm_path_join(d, "out");
	ldb *db = NULL;
	lm_error err;
	ck_assert_int_eq(ldb_open(&db, db_path, 0, &err), 0);
	lr_options o = { .out_dir = out, .run_id = 1 };
	lr_report rep;
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rep.run_id, 1);
	static const char *const images[] = {
		"util.png", "waits-reference.png", "waits-linked.png",
		"timeline.png", "shapes.png", "history.png",
	};
	ck_assert_int_eq(rep.n_images, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert_str_eq(rep.images[i], images[i]);
		check_png(out, images[i], 1000);
	}
	/* the data and scripts beside them */
	static const char *const files[] = {
		"util.gp", "timeline.gp", "waits.gp", "shapes.gp", "history.gp",
		"util.tsv", "waits-reference.tsv", "waits-linked.tsv",
		"timeline.tsv", "shapes.tsv", "history.tsv", "replot.sh",
		"index.html", LR_MANIFEST,
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		ck_assert_msg(exists(out, files[i]), "missing %s", files[i]);
	char *p = lm_path_join(out, "util.tsv");
	char *t = tu_read(p);
	ck_assert_contains(t, "core\tPE reference\tPE linked\tMAC reference\t"
			   "MAC linked\n0\t80.0000\t75.0000\t40.0000\t37.5000\n");
	free(t);
	free(p);
	/* core 0 busy only in the first half of the timeline; the lanes
	   of a core's modes side by side */
	p = lm_path_join(out, "timeline.tsv");
	t = tu_read(p);
	ck_assert_contains(t, "start (µs)\tend (µs)\tcore 0 reference\t"
			   "core 0 linked\tcore 1 reference\tcore 1 linked\t"
			   "core 2 reference\tcore 2 linked\tcore 3 reference\t"
			   "core 3 linked\n0\t0.02\t0.7500\t0.7500\t0.7500\t");
	ck_assert_contains(t, "\n1.98\t2\t0.0000\t0.0000\t");
	free(t);
	free(p);
	/* the split of each engine: busy, the three waits, idle (the rest of
	   the 2 µs run) */
	p = lm_path_join(out, "waits-linked.tsv");
	t = tu_read(p);
	ck_assert_contains(t, "engine\tbusy\tsemaphore wait\tbarrier wait\t"
			   "dependency wait\tidle\n"
			   "core 0 PE\t1.5\t0\t0\t0\t0.5\n"
			   "core 0 Activation\t0\t0.3\t0\t0\t1.7\n"
			   "core 0 DVE\t0\t0\t0\t0.9\t1.1\n"
			   "core 0 Pool\t0\t0\t0.5\t0\t1.5\n"
			   "core 0 SP\t0\t0\t0\t0\t2\n"
			   " \t0\t0\t0\t0\t0\ncore 1 PE\t");
	ck_assert_contains(t, "core 3 Activation\t0\t0.6\t0\t0\t1.4\n");
	free(t);
	free(p);
	p = lm_path_join(out, "shapes.tsv");
	t = tu_read(p);
	ck_assert_contains(t, "128x128 (");
	ck_assert_contains(t, "\t100.0000\t");
	ck_assert_contains(t, "32x32 (");
	ck_assert_contains(t, "\t6.2500\t");
	free(t);
	free(p);
	p = lm_path_join(out, "history.tsv");
	t = tu_read(p);
	ck_assert_contains(t, "\n3\terror\tNaN\tNaN\tNaN\n");
	ck_assert_contains(t, "\n4\tfail\t2\t");
	free(t);
	free(p);

	/* index.html references every image, escapes text, lists the runs */
	p = lm_path_join(out, "index.html");
	t = tu_read(p);
	for (int i = 0; i < 6; i++) {
		char *ref = lm_xasprintf("<img src=\"%s\"", images[i]);
		ck_assert_contains(t, ref);
		free(ref);
	}
	ck_assert_contains(t, "<a href=\"util.tsv\">");
	ck_assert_contains(t, "<a href=\"history.gp\">");
	ck_assert_contains(t, "x_y &lt;b&gt;");
	ck_assert_contains(t, "broken_module");
	ck_assert_contains(t, "<tr class=\"focus\"><td class=\"num\">1</td>");
	/* core 0 ends last; its longest wait is Pool's 0.5 µs at the
	   barrier (core 3's Activation waits longer, 0.6 µs, but core 3
	   ended earlier; DVE's 0.9 µs dependency wait does not rank) */
	ck_assert_contains(t, "<strong>Longest wait: core 0 Pool "
			   "(reference)</strong> waited 0.5 µs of the 2.0 µs "
			   "run on semaphores and barriers, on the core that "
			   "finished last: 0.0 µs semaphore wait, 0.5 µs "
			   "barrier wait (and 0.0 µs dependency wait).</p>");
	ck_assert(strstr(t, "Longest wait: core 0 DVE") == NULL);
	ck_assert_contains(t, "<li>linked: core 0 finished last (2.0 µs); its "
			   "Pool waited 0.5 µs</li>");
	ck_assert_contains(t, "gnuplot -c 'util.gp' 'util.tsv' 'util.png' "
			   "'png' 'Per-core utilization, run 1: "
			   "examples/handoff2 (pass)' '2'");
	free(t);
	free(p);
	lr_report_free(&rep);

	/* re-plotting from the directory alone gives the same kind of file */
	p = lm_path_join(out, "util.png");
	ck_assert_int_eq(unlink(p), 0);
	char *cmd = lm_xasprintf("sh '%s/replot.sh' >/dev/null 2>&1", out);
	ck_assert_int_eq(system(cmd), 0);
	check_png(out, "util.png", 1000);
	free(cmd);
	free(p);

	/* default run: the latest with an execution (4, single mode) */
	char *out2 = lm_path_join(d, "out2");
	lr_options o2 = { .out_dir = out2 };
	ck_assert_msg(lr_write(db, &o2, &rep, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rep.run_id, 4);
	ck_assert_int_eq(rep.n_images, 5);
	ck_assert_str_eq(rep.images[1], "waits-single.png");
	ck_assert_str_eq(rep.images[2], "timeline.png");
	lr_report_free(&rep);
	ldb_close(db);
	free(out2);
	free(out);
	free(db_path);
	free(d);
}
END_TEST

START_TEST(test_report_svg_cli)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep");
	char *db_path = make_db(d);
	char *out = lm_path_join(d, "svg");
	tu_run r = tu_lncsim(NULL, "report", "--db", db_path, "-o", out,
			     "--format", "svg", "--run", "2", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "/util.svg\n");
	ck_assert_contains(r.out, "index.html: 5 plots of run 2");
	tu_run_free(&r);
	static const char *const images[] = {
		"util.svg", "waits-single.svg", "timeline.svg", "shapes.svg",
		"history.svg",
	};
	char *p = lm_path_join(out, "index.html");
	char *html = tu_read(p);
	for (int i = 0; i < 5; i++) {
		char *q = lm_path_join(out, images[i]);
		char *t = tu_read(q);
		ck_assert_msg(t != NULL, "missing %s", images[i]);
		ck_assert_contains(t, "<svg");
		ck_assert_contains(t, "</svg>");
		char *ref = lm_xasprintf("<img src=\"%s\"", images[i]);
		ck_assert_contains(html, ref);
		free(ref);
		free(t);
		free(q);
	}
	free(html);
	free(p);
	/* LNCSIM_DB and the default directory */
	setenv("LNCSIM_DB", db_path, 1);
	r = tu_lncsim(d, "report", NULL);
	unsetenv("LNCSIM_DB");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_contains(r.out, "lncsim-report/index.html: 5 plots of run 4");
	ck_assert(exists(d, "lncsim-report/history.png"));
	tu_run_free(&r);
	free(out);
	free(db_path);
	free(d);
}
END_TEST

/* Symlinks planted at the report's file names (an image gnuplot writes,
** index.html) are replaced, never written through. */
START_TEST(test_report_planted_symlinks)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep-lnk");
	char *db_path = make_db(d);
	char *out = lm_path_join(d, "out");
	char *victim = tu_write(d, "outside/victim", "precious");
	char *img = lm_path_join(out, "util.svg");
	char *idx = lm_path_join(out, "index.html");
	struct stat st;
	ck_assert_int_eq(mkdir(out, 0755), 0);
	ck_assert_int_eq(symlink(victim, img), 0);
	ck_assert_int_eq(symlink(victim, idx), 0);
	tu_run r = tu_lncsim(NULL, "report", "--db", db_path, "-o", out,
			     "--format", "svg", "--run", "2", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *t = tu_read(victim);
	ck_assert_msg(t && !strcmp(t, "precious"), "the outside file was "
		      "written through a planted symlink");
	free(t);
	ck_assert_int_eq(lstat(img, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(lstat(idx, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	t = tu_read(img);
	ck_assert_contains(t, "<svg");
	free(t);
	free(victim);
	free(img);
	free(idx);
	free(out);
	free(db_path);
	free(d);
}
END_TEST

/*
** The image's temporary swapped for a symlink while gnuplot runs (a stand-in
** gnuplot does the swap, then writes its output argument): gnuplot writes
** to the file lncsim created (/dev/fd/N), never through the swapped name;
** the swap is refused.
*/
START_TEST(test_report_temp_swapped)
{
	char *d = tu_tmpdir("rep-swap");
	char *db_path = make_db(d);
	char *out = lm_path_join(d, "out");
	char *victim = tu_write(d, "outside/victim", "precious");
	char *script = lm_xasprintf("#!/bin/sh\n"
		"for t in .*.tmp; do rm -f \"$t\"; ln -s '%s' \"$t\"; done\n"
		"printf '<svg>fake</svg>\\n' > \"$4\"\n", victim);
	char *fake = tu_write(d, "fake-gnuplot", script);
	ck_assert_int_eq(chmod(fake, 0755), 0);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	ck_assert_int_eq(setenv(LR_GNUPLOT_ENV, fake, 1), 0);
	tu_run r = tu_lncsim(NULL, "report", "--db", db_path, "-o", out,
			     "--format", "svg", "--run", "2", NULL);
	unsetenv(LR_GNUPLOT_ENV);
	char *t = tu_read(victim);
	ck_assert_msg(t && !strcmp(t, "precious"), "gnuplot wrote through the "
		      "swapped temporary: victim holds '%s'", t ? t : "");
	free(t);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "was replaced while gnuplot ran; refusing it");
	tu_run_free(&r);
	free(script);
	free(fake);
	free(victim);
	free(out);
	free(db_path);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* The embedded scripts are the committed reports/gp files. */
START_TEST(test_scripts_embedded)
{
	int n = 0;
	for (const lr_gp_script *s = lr_gp_scripts; s->name; s++, n++) {
		char *rel = lm_xasprintf("reports/gp/%s", s->name);
		char *p = tu_srcpath(rel);
		char *t = tu_read(p);
		ck_assert_msg(t != NULL, "%s missing", rel);
		ck_assert_msg(strcmp(t, s->text) == 0, "%s differs from the "
			      "embedded copy", rel);
		free(t);
		free(p);
		free(rel);
	}
	ck_assert_int_eq(n, 5);
}
END_TEST

START_TEST(test_report_errors)
{
	char *d = tu_tmpdir("rep");
	lm_error err;
	ldb *db = NULL;
	lr_report rep;
	/* an empty database */
	char *empty = lm_path_join(d, "empty.db");
	ck_assert_int_eq(ldb_open(&db, empty, LDB_CREATE, &err), 0);
	lr_options o = { .out_dir = d };
	ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "empty.db: report: no runs in the database");
	ck_assert_int_eq(rep.n_images, 0);
	/* only an error run: nothing to plot */
	add_run(db, "", 1, 0, "error", "x");
	ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "no run in the database has an execution");
	ldb_close(db);

	char *path = make_db(d);
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	o.run_id = 42;
	ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "rep.db: report: no run with id 42");
	o.run_id = 3;
	ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "run 3 has no execution to plot");
	o.run_id = 0;
	o.format = "bmp";
	ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "unknown format 'bmp'");
	o.format = NULL;
	o.gnuplot = "/nonexistent/gnuplot";
	ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "gnuplot not found at '/nonexistent/gnuplot'");
	o.gnuplot = "no-such-gnuplot-program";
	ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
	ck_assert_contains(err.msg, "gnuplot not found");
	/* gnuplot failing: its exit status is checked */
	o.gnuplot = "/bin/false";
	if (access(o.gnuplot, X_OK) == 0) {
		ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINTERNAL);
		ck_assert_contains(err.msg, "util.gp: gnuplot: exit status 1");
	}
	/* an output directory that cannot be made */
	o.gnuplot = NULL;
	if (have_gnuplot()) {
		char *file = tu_write(d, "plain", "x");
		char *bad = lm_path_join(file, "sub");
		o.out_dir = bad;
		ck_assert_int_eq(lr_write(db, &o, &rep, &err), LM_EINPUT);
		ck_assert_contains(err.msg, "plain");
		free(bad);
		free(file);
	}
	ldb_close(db);
	free(path);
	free(empty);
	free(d);
}
END_TEST

START_TEST(test_report_cli_errors)
{
	char *d = tu_tmpdir("rep");
	char *path = make_db(d);
	static const struct { const char *a[8], *msg; int status; } cases[] = {
		{ { "report", "--db", "nope.db", NULL },
		  "lncsim: nope.db: no such database", 2 },
		{ { "report", "--db", "rep.db", "--run", "42", NULL },
		  "lncsim: rep.db: report: no run with id 42", 2 },
		{ { "report", "--db", "rep.db", "--run", "abc", NULL },
		  "--run needs a run id, not 'abc'", 2 },
		{ { "report", "--db", "rep.db", "--format", "gif", NULL },
		  "unknown format 'gif'", 2 },
		{ { "report", "--db", "rep.db", "-o", NULL },
		  "-o needs a value", 2 },
		{ { "report", "--no-db", NULL }, "a report needs the database", 2 },
		{ { "report", "--frob", NULL }, "unknown argument '--frob'", 2 },
		{ { "report", "--db", "rep.db", "--since", "2026-1-1", NULL },
		  "--since '2026-1-1': give a UTC date YYYY-MM-DD or a time "
		  "YYYY-MM-DDTHH:MM:SSZ", 2 },
		{ { "report", "--db", "rep.db", "--since", "2026-13-45", NULL },
		  "--since '2026-13-45': give a UTC date", 2 },
		{ { "report", "--db", "rep.db", "--since", "2025-02-29", NULL },
		  "--since '2025-02-29': give a UTC date", 2 },
		{ { "report", "--db", "rep.db", "--since",
		    "2026-01-01T24:00:00Z", NULL },
		  "--since '2026-01-01T24:00:00Z': give a UTC date", 2 },
		{ { "report", "--db", "rep.db", "--command", "gen", NULL },
		  "--command 'gen': run, diff or fuzz", 2 },
		{ { "report", "--db", "rep.db", "--since", "2999-01-01", NULL },
		  "rep.db: report: no run matching --since / --command has an "
		  "execution to plot", 2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tu_run r = tu_lncsimv(d, cases[i].a);
		ck_assert_int_eq(r.status, cases[i].status);
		ck_assert_contains(r.err, cases[i].msg);
		tu_run_free(&r);
	}
	/* gnuplot missing: exit 2 with a clear message */
	setenv(LR_GNUPLOT_ENV, "/nonexistent/gnuplot", 1);
	tu_run r = tu_lncsim(d, "report", "--db", "rep.db", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_contains(r.err, "gnuplot not found at '/nonexistent/gnuplot' "
			   "(from LNCSIM_GNUPLOT)");
	tu_run_free(&r);
	/* gnuplot failing: exit 3 */
	setenv(LR_GNUPLOT_ENV, "/bin/false", 1);
	r = tu_lncsim(d, "report", "--db", "rep.db", NULL);
	unsetenv(LR_GNUPLOT_ENV);
	ck_assert_int_eq(r.status, 3);
	ck_assert_contains(r.err, "gnuplot: exit status 1");
	tu_run_free(&r);
	r = tu_lncsim(NULL, "report", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_contains(r.out, "usage: lncsim report");
	tu_run_free(&r);
	free(path);
	free(d);
}
END_TEST

/* The names every <img src="..."> of an HTML page refers to. */
static int img_sources(const char *html, char names[][64], int max)
{
	int n = 0;
	for (const char *p = html; (p = strstr(p, "<img src=\"")) && n < max;) {
		p += 10;
		size_t len = strcspn(p, "\"");
		ck_assert_msg(len > 0 && len < 64, "odd image reference");
		memcpy(names[n], p, len);
		names[n++][len] = 0;
		p += len;
	}
	return n;
}

/*
** Every image index.html shows exists beside it and is a PNG (signature,
** IHDR at least 400 x 200) or an SVG (an <svg> element, closed) of more
** than 4 kB: a plot, not an empty canvas.
*/
static void check_page_images(const char *dir)
{
	char *p = lm_path_join(dir, "index.html");
	char *html = tu_read(p);
	char names[32][64];
	int n;
	ck_assert_ptr_nonnull(html);
	n = img_sources(html, names, 32);
	ck_assert_int_gt(n, 0);
	for (int i = 0; i < n; i++) {
		char *q = lm_path_join(dir, names[i]);
		char *data = NULL;
		size_t len = 0;
		lm_error err;
		ck_assert_msg(lm_read_file(q, &data, &len, &err) == 0,
			      "index.html shows %s: %s", names[i], err.msg);
		ck_assert_msg(len > 4096, "%s: only %zu bytes", names[i], len);
		if (len > 24 && !memcmp(data, "\x89PNG\r\n\x1a\n", 8)) {
			const unsigned char *u = (const unsigned char *)data;
			long w = (long)u[16] << 24 | u[17] << 16 | u[18] << 8 |
				 u[19];
			long h = (long)u[20] << 24 | u[21] << 16 | u[22] << 8 |
				 u[23];
			ck_assert(!memcmp(data + 12, "IHDR", 4));
			ck_assert_msg(w >= 400 && h >= 200, "%s: %ld x %ld",
				      names[i], w, h);
		} else {
			ck_assert_msg(strstr(data, "<svg") &&
				      strstr(data, "</svg>"), "%s: neither a "
				      "PNG nor an SVG", names[i]);
		}
		free(data);
		free(q);
	}
	free(html);
	free(p);
}

/* The page's images, in PNG and in SVG. */
START_TEST(test_report_page_images)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep-img");
	char *db_path = make_db(d);
	ldb *db = NULL;
	lm_error err;
	lr_report rep;
	ck_assert_int_eq(ldb_open(&db, db_path, 0, &err), 0);
	for (int f = 0; f < 2; f++) {
		char *out = lm_path_join(d, f ? "svg" : "png");
		lr_options o = { .out_dir = out, .run_id = 1,
				 .format = f ? "svg" : "png" };
		ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(rep.n_images, 6);
		check_page_images(out);
		lr_report_free(&rep);
		free(out);
	}
	ldb_close(db);
	free(db_path);
	free(d);
}
END_TEST

/* The first program of PATH named name, or NULL. */
static char *on_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = lm_xstrdup(path ? path : "/usr/bin:/bin");
	char *found = NULL;
	for (char *dir = strtok(copy, ":"); dir && !found;
	     dir = strtok(NULL, ":")) {
		char *p = lm_path_join(dir, name);
		if (access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(copy);
	return found;
}

/*
** The page in a real browser: Debian's chromium, headless, takes a
** screenshot of index.html (exit 0, a PNG of the window's size). Skipped
** with a note when chromium is not installed.
*/
START_TEST(test_report_in_browser)
{
	char *chromium = on_path("chromium");
	if (!chromium) {
		printf("# skip: chromium not installed (Debian package "
		       "chromium): the page is not checked in a browser\n");
		return;
	}
	if (!have_gnuplot()) {
		free(chromium);
		return;
	}
	char *d = tu_tmpdir("rep-web");
	char *db_path = make_db(d);
	char *out = lm_path_join(d, "out");
	char *shot = lm_path_join(d, "shot.png");
	char *profile = lm_path_join(d, "profile");
	ldb *db = NULL;
	lm_error err;
	lr_report rep;
	ck_assert_int_eq(ldb_open(&db, db_path, 0, &err), 0);
	lr_options o = { .out_dir = out, .run_id = 1 };
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	ldb_close(db);
	/* no sandbox: the tests may run as root, where chromium needs it
	   off; a home of its own, so that nothing it saves (crash reports,
	   desktop settings) lands in the user's */
	char *abs = realpath(out, NULL);
	ck_assert_ptr_nonnull(abs);
	char *home = lm_path_join(d, "home");
	char *env = tu_browser_env(home);
	char *cmd = lm_xasprintf("%s timeout 100 '%s' --headless --no-sandbox "
				 "--disable-gpu --user-data-dir='%s' "
				 "--window-size=1100,3000 --screenshot='%s' "
				 "'file://%s/index.html' >/dev/null 2>&1",
				 env, chromium, profile, shot, abs);
	free(env);
	free(home);
	free(abs);
	int st = system(cmd);
	ck_assert_msg(st == 0, "chromium --headless --screenshot failed "
		      "(status %d): %s", st, cmd);
	char *data = NULL;
	size_t len = 0;
	ck_assert_msg(lm_read_file(shot, &data, &len, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(len > 20000 && !memcmp(data, "\x89PNG", 4),
		      "screenshot: %zu bytes", len);
	free(data);
	free(cmd);
	free(profile);
	free(shot);
	free(out);
	free(db_path);
	free(d);
	free(chromium);
}
END_TEST

/* A run without Matmults: a note, no empty utilization or timeline. */
START_TEST(test_report_no_matmuls)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep-nomm");
	char *path = lm_path_join(d, "nomm.db");
	char *out = lm_path_join(d, "out");
	ldb *db = NULL;
	lm_error err;
	lr_report rep;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	add_run(db, "reference,linked", 2, 0, "pass", "examples/handoff2");
	lr_options o = { .out_dir = out };
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	/* the waits and the history; no util, timeline or shapes */
	ck_assert_int_eq(rep.n_images, 3);
	ck_assert_str_eq(rep.images[0], "waits-reference.png");
	ck_assert_str_eq(rep.images[1], "waits-linked.png");
	ck_assert_str_eq(rep.images[2], "history.png");
	ck_assert(!exists(out, "util.png"));
	ck_assert(!exists(out, "timeline.png"));
	char *p = lm_path_join(out, "index.html");
	char *t = tu_read(p);
	ck_assert_contains(t, "Not plotted: run 1 executed no Matmult, so its "
			   "PE array never ran one");
	ck_assert_contains(t, "Not plotted: the database holds no matmul "
			   "records.");
	check_page_images(out);
	free(t);
	free(p);
	lr_report_free(&rep);
	ldb_close(db);
	free(out);
	free(path);
	free(d);
}
END_TEST

/*
** The Kernels section: a run of each NKIKernel example (lowered, then
** run with --db) shows each call's engine-time chart and its table row
** with the critical engine; a run without kernel calls says so in one
** line and writes no kernels image.
*/
/* The text of the first row of sql (binding ?1 to id) on the file. */
static char *sql_text_of(const char *path, int64_t id, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK,
		      "%s", sqlite3_errmsg(h));
	sqlite3_bind_int64(st, 1, id);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	char *t = lm_xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return t;
}

START_TEST(test_report_kernels)
{
	if (!have_gnuplot())
		return;
	static const char *const ex[] = { "klr", "bir" };
	static const char *const call[] = { "inst__k_all", "inst__relu_k" };
	/* each call's DMA on its one queue instance: util = time in flight
	** over the call's time, from the kernels rows */
	static const char *const queue[] = { "qNKI_k_all/qNKI_k_all",
					     "qSyncIO0_1/qSyncIO0_2" };
	char *d = tu_tmpdir("rep-kern");
	lm_error err;
	for (int i = 0; i < 2; i++) {
		char *rel = lm_xasprintf("examples/kernels/%s/def.json", ex[i]);
		char *src = tu_srcpath(rel);
		char *low = lm_xasprintf("%s.json", ex[i]);
		tu_run r = tu_lncsim(d, "lower", src, "-o", low, NULL);
		ck_assert_msg(r.status == 0, "stderr: %s", r.err);
		tu_run_free(&r);
		r = tu_lncsim(d, "run", low, "--db", "k.db", NULL);
		ck_assert_msg(r.status == 0, "stderr: %s", r.err);
		tu_run_free(&r);
		free(low);
		free(src);
		free(rel);
	}
	char *path = lm_path_join(d, "k.db");
	ldb *db = NULL;
	lr_report rep;
	ck_assert_int_eq(ldb_open(&db, path, 0, &err), 0);
	for (int i = 0; i < 2; i++) {
		char *out = lm_path_join(d, ex[i]);
		lr_options o = { .out_dir = out, .run_id = i + 1 };
		ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
		int found = 0;
		for (int j = 0; j < rep.n_images; j++)
			found += !strcmp(rep.images[j], "kernels-single.png");
		ck_assert_int_eq(found, 1);
		check_png(out, "kernels-single.png", 1000);
		check_page_images(out);
		char *p = lm_path_join(out, "index.html");
		char *t = tu_read(p);
		ck_assert_contains(t, "<section id=\"kernels\">\n<h2>Kernels"
				   "</h2>");
		ck_assert_contains(t, "single: 1 kernel call</h3>");
		ck_assert_contains(t, "<img src=\"kernels-single.png\"");
		char *row = lm_xasprintf("<tr><td>k0</td><td class=\"num\">0"
					 "</td><td>%s</td>", call[i]);
		ck_assert_contains(t, row);
		ck_assert_contains(t, "critical engine</th>");
		ck_assert(strstr(t, "made no NKIKernel call") == NULL);
		ck_assert_contains(t, "<th>DMA queue instance</th>");
		char *act = sql_text_of(path, i + 1, "SELECT printf('%.1f', "
					"100.0 * dma_active_ps / (end_ps - "
					"start_ps)) || '|' || dma_bytes || '|' "
					"|| dma_transfers FROM kernels WHERE "
					"execution_id = ?1");
		char *f1 = strtok(act, "|"), *f2 = strtok(NULL, "|"),
		     *f3 = strtok(NULL, "|");
		char *qrow = lm_xasprintf("<tr><td>k0</td><td>%s</td><td "
					  "class=\"num\">%s</td><td class="
					  "\"num\">%s</td><td class=\"num\">"
					  "%s</td>", queue[i], f1, f2, f3);
		ck_assert_contains(t, qrow);
		free(qrow);
		free(act);
		/* the chart's data: five engines of call k0 */
		char *tsv = lm_path_join(out, "kernels-single.tsv");
		char *data = tu_read(tsv);
		ck_assert_contains(data, "k0 PE\t");
		ck_assert_contains(data, "k0 SP\t");
		free(data);
		free(tsv);
		free(row);
		free(t);
		free(p);
		lr_report_free(&rep);
		free(out);
	}
	ldb_close(db);
	free(path);

	/* a run without kernel calls: one line, no image */
	char *p2 = lm_path_join(d, "plain.db");
	char *out = lm_path_join(d, "plain");
	ck_assert_int_eq(ldb_open(&db, p2, LDB_CREATE, &err), 0);
	add_run(db, "reference,linked", 2, 8, "pass", "examples/handoff2");
	lr_options o = { .out_dir = out };
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	for (int j = 0; j < rep.n_images; j++)
		ck_assert(strncmp(rep.images[j], "kernels-", 8) != 0);
	ck_assert(!exists(out, "kernels-reference.png"));
	char *p = lm_path_join(out, "index.html");
	char *t = tu_read(p);
	ck_assert_contains(t, "<section id=\"kernels\">\n<h2>Kernels</h2>\n"
			   "<p class=\"note\">Run 1 made no NKIKernel call."
			   "</p>\n</section>");
	free(t);
	free(p);
	lr_report_free(&rep);
	ldb_close(db);
	free(out);
	free(p2);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* Log a run of the given modes whose races were checked (n_races < 0:
** not checked; else the races go to the last mode, the others have none). */
static int64_t add_race_run(ldb *db, const char *modes, int n_races)
{
	static const ldb_race races[] = {
		{ "RAW", "SBUF", 1, "", 256, 384,
		  { "main", "b0", "mm_a", "i=3,j=0", 1, "PE" },
		  { "main", "b0", "act_b", "", 1, "Activation" },
		  "sem s1 = 2 (core 1)" },
		{ "WAW", "DRAM", -1, "out<t>", 0, 4096,
		  { "k0", "entry", "dma_w0", "", 0, "SP" },
		  { "k1", "entry", "dma_w1", "i=1", 1, "SP" }, "" },
	};
	lm_error err;
	ldb_run_info info = { .command = "lncsim diff --race x", .module = "x",
			      .arch = "trn2", .cores = 2, .seed = 1 };
	ldb_run *run = NULL;
	ck_assert_msg(ldb_run_begin(db, &info, &run, &err) == 0, "%s", err.msg);
	char *m = lm_xstrdup(modes), *last = NULL;
	for (char *t = strtok(m, ","); t; t = strtok(NULL, ",")) {
		ls_result r = make_result(2, 4, 0.5);
		ck_assert_int_eq(ldb_log_execution(run, t, &r, &err), 0);
		ls_result_free(&r);
		if (last && n_races >= 0)
			ck_assert_int_eq(ldb_log_races(run, last, NULL, 0,
						       &err), 0);
		last = t;
	}
	if (n_races >= 0)
		ck_assert_msg(ldb_log_races(run, last, races, n_races, &err) == 0,
			      "%s", err.msg);
	free(m);
	int64_t id = 0;
	ck_assert_int_eq(ldb_run_end(run, n_races > 0 ? "fail" : "pass", "",
				     0.5, &id, &err), 0);
	return id;
}

/*
** The races section of the page: the races of the run per mode (a count
** and a table row each), "no races" for a mode or a run checked without
** any, "not checked" for a run never checked.
*/
START_TEST(test_report_races)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep-races");
	char *path = lm_path_join(d, "races.db");
	char *out = lm_path_join(d, "out");
	ldb *db = NULL;
	lm_error err;
	lr_report rep;
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	int64_t racy = add_race_run(db, "reference,linked", 2);
	int64_t unchecked = add_race_run(db, "single", -1);
	int64_t clean = add_race_run(db, "reference,linked", 0);
	char *p = lm_path_join(out, "index.html");

	lr_options o = { .out_dir = out, .run_id = racy };
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	char *t = tu_read(p);
	ck_assert_contains(t, "<h2>Races</h2>");
	ck_assert_contains(t, "<strong>Run 1: 2 races</strong>");
	ck_assert_contains(t, "<h3>reference: no races</h3>");
	ck_assert_contains(t, "<h3>linked: 2 races</h3>");
	ck_assert_contains(t, "<tr><td>RAW</td><td>SBUF core 1</td>"
			   "<td class=\"num\">[256, 384) (128 B)</td>"
			   "<td><code>main/b0/mm_a</code> [i=3,j=0], core 1 PE"
			   "</td><td><code>main/b0/act_b</code>, core 1 "
			   "Activation</td><td>sem s1 = 2 (core 1)</td></tr>");
	ck_assert_contains(t, "<tr><td>WAW</td><td>DRAM <code>out&lt;t&gt;"
			   "</code></td><td class=\"num\">[0, 4096) (4096 B)"
			   "</td><td><code>k0/entry/dma_w0</code>, core 0 SP"
			   "</td><td><code>k1/entry/dma_w1</code> [i=1], core "
			   "1 SP</td><td>(none)</td></tr>");
	ck_assert(!strstr(t, "not checked for races"));
	/* the plots are still there */
	check_page_images(out);
	free(t);

	o.run_id = unchecked;
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	t = tu_read(p);
	ck_assert_contains(t, "Run 2 was not checked for races");
	ck_assert(!strstr(t, "<table class=\"races\">"));
	free(t);

	o.run_id = clean;
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	t = tu_read(p);
	ck_assert_contains(t, "Run 3 was checked for races: no races.");
	ck_assert_contains(t, "<h3>reference: no races</h3>");
	ck_assert_contains(t, "<h3>linked: no races</h3>");
	ck_assert(!strstr(t, "<table class=\"races\">"));
	free(t);

	free(p);
	ldb_close(db);
	free(out);
	free(path);
	free(d);
}
END_TEST

/*
** A second report into the same directory removes the files of the first
** that it does not write again -- only those its manifest names: a user's
** file, a user's file under a name lncsim once wrote (not in the
** manifest), a symlink where a stale file was, and names in a doctored
** manifest that point elsewhere all stay.
*/
START_TEST(test_report_manifest)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep-man");
	char *db_path = make_db(d);
	char *out = lm_path_join(d, "out");
	char *victim = tu_write(d, "victim.txt", "precious");
	ldb *db = NULL;
	lm_error err;
	lr_report rep;
	ck_assert_int_eq(ldb_open(&db, db_path, 0, &err), 0);
	/* a user's files before any report */
	char *mine = tu_write(out, "notes.txt", "mine");
	char *mine2 = tu_write(out, "timeline-linked.png", "mine too");
	lr_options o = { .out_dir = out, .run_id = 1 };
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	ck_assert(exists(out, "waits-linked.png"));
	ck_assert(exists(out, "waits-reference.tsv"));
	char *mp = lm_path_join(out, LR_MANIFEST);
	char *m = tu_read(mp);
	ck_assert_contains(m, "\nwaits-linked.png\n");
	ck_assert_contains(m, "\nindex.html\n");
	ck_assert(strstr(m, "notes.txt") == NULL);
	/* the previous report's waits-reference.tsv replaced by a symlink;
	   a doctored manifest naming a path outside */
	char *lnk = lm_path_join(out, "waits-reference.tsv");
	ck_assert_int_eq(unlink(lnk), 0);
	ck_assert_int_eq(symlink(victim, lnk), 0);
	char *doctored = lm_xasprintf("%s../victim.txt\n%s\nnotes.txt\n"
				      "timeline-linked.png\n", m, victim);
	free(tu_write(out, LR_MANIFEST, doctored));
	free(doctored);
	free(m);
	/* a single-mode run: no waits-reference / waits-linked this time */
	o.run_id = 4;
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	ck_assert(!exists(out, "waits-linked.png"));
	ck_assert(!exists(out, "waits-linked.tsv"));
	ck_assert(!exists(out, "waits-reference.png"));
	ck_assert(exists(out, "waits-single.png"));
	ck_assert(exists(out, "index.html"));
	static const char *const kept[] = { "mine", "mine too", "precious" };
	char *const kept_at[] = { mine, mine2, victim };
	for (int i = 0; i < 3; i++) {
		char *t = tu_read(kept_at[i]);
		ck_assert_str_eq(t, kept[i]);
		free(t);
	}
	struct stat sb;
	ck_assert_int_eq(lstat(lnk, &sb), 0);
	ck_assert(S_ISLNK(sb.st_mode));
	m = tu_read(mp);
	ck_assert(strstr(m, "waits-linked.png") == NULL);
	ck_assert_contains(m, "\nwaits-single.png\n");
	free(m);
	/* a manifest that is a symlink to a list elsewhere is not read: the
	   user's file it names stays */
	char *list = tu_write(d, "list", "notes.txt\nwaits-single.tsv\n");
	ck_assert_int_eq(unlink(mp), 0);
	ck_assert_int_eq(symlink(list, mp), 0);
	o.run_id = 1;
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	char *t = tu_read(mine);
	ck_assert_str_eq(t, "mine");
	free(t);
	ck_assert(exists(out, "waits-single.tsv"));
	free(list);
	ldb_close(db);
	free(lnk);
	free(mp);
	free(mine);
	free(mine2);
	free(victim);
	free(out);
	free(db_path);
	free(d);
}
END_TEST

/* The kind of a run from its command line. */
START_TEST(test_run_kind)
{
	static const struct { const char *cmd; int is_case; const char *kind; }
	cases[] = {
		{ "lncsim run --seed 1 examples/matmul1", 0, "run" },
		{ "lncsim ./lncsim diff --seed 1 x", 0, "diff" },
		{ "lncsim /usr/bin/lncsim fuzz --count 3", 0, "fuzz" },
		{ "lncsim diff examples/run", 0, "diff" },
		{ "lncsim gen --cores 2 -o . && lncsim diff g", 1, "fuzz" },
		{ "lncsim gen --cores 2 -o . && lncsim diff g", 0, "gen" },
		{ "lncsim", 0, "" },
		{ "", 0, "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char k[16];
		ldb_run_kind(cases[i].cmd, cases[i].is_case, k, sizeof k);
		ck_assert_msg(!strcmp(k, cases[i].kind), "'%s': '%s', not '%s'",
			      cases[i].cmd, k, cases[i].kind);
	}
}
END_TEST

/* --command and --since choose the history's runs and the default run. */
START_TEST(test_report_filters)
{
	if (!have_gnuplot())
		return;
	char *d = tu_tmpdir("rep-flt");
	char *path = lm_path_join(d, "flt.db");
	char *out = lm_path_join(d, "out");
	ldb *db = NULL;
	lm_error err;
	lr_report rep;
	time_t jan = 1767225600;   /* 2026-01-01T00:00:00Z */
	ck_assert_int_eq(ldb_open(&db, path, LDB_CREATE, &err), 0);
	add_run_as(db, "single", 1, 10, "pass", "a", "lncsim run a", jan);
	add_run_as(db, "reference,linked", 2, 20, "pass", "b",
		   "lncsim ./lncsim diff b", jan + 86400 * 40);
	add_run_as(db, "single", 1, 10, "pass", "c", "lncsim run c",
		   jan + 86400 * 60);
	add_run_as(db, "reference,linked", 2, 20, "fail", "d",
		   "lncsim ./lncsim diff d", jan + 86400 * 90);
	/* the cases of a fuzz campaign */
	ldb_campaign camp = { .name = "camp", .command = "lncsim fuzz",
			      .gen_options = "", .count = 2 };
	ck_assert_msg(ldb_campaign_add(db, &camp, &err) == 0, "%s", err.msg);
	for (int s = 0; s < 2; s++) {
		ldb_run_info info = { .command = "lncsim gen -o . && lncsim diff g",
				      .module = "g", .arch = "trn2",
				      .cores = 2, .seed = (uint64_t)s,
				      .started = jan + 86400 * 100 };
		ldb_run *run = NULL;
		ls_result r = make_result(2, 4, 0.5);
		ck_assert_int_eq(ldb_run_begin(db, &info, &run, &err), 0);
		ck_assert_int_eq(ldb_log_execution(run, "reference", &r, &err),
				 0);
		ldb_case_info ci = { .campaign = "camp", .seed = (uint64_t)s,
				     .gen_options = "", .kind = "",
				     .signature = "", .message = "",
				     .repro = "" };
		ck_assert_msg(ldb_log_case(run, &ci, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(ldb_run_end(run, "pass", "", 0.1, NULL, &err),
				 0);
		ls_result_free(&r);
	}
	struct { const char *since, *command; int64_t run; const char *rows; }
	cases[] = {
		{ NULL, "run", 3, "1 3" },
		{ NULL, "diff", 4, "2 4" },
		{ NULL, "fuzz", 6, "5 6" },
		{ "2026-02-15", NULL, 6, "3 4 5 6" },
		{ "2026-02-15", "diff", 4, "4" },
		{ "2026-02-10T00:00:00Z", "run", 3, "3" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lr_options o = { .out_dir = out, .since = cases[i].since,
				 .command = cases[i].command };
		ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(rep.run_id, cases[i].run);
		lr_report_free(&rep);
		char *p = lm_path_join(out, "history.tsv");
		char *t = tu_read(p);
		lm_buf got = LM_BUF_INIT;
		for (char *l = strchr(t, '\n'); l && l[1]; l = strchr(l + 1, '\n'))
			lm_buf_printf(&got, "%s%lld", got.size ? " " : "",
				      strtoll(l + 1, NULL, 10));
		ck_assert_msg(!strcmp(lm_buf_cstr(&got), cases[i].rows),
			      "case %zu: runs %s, not %s", i, lm_buf_cstr(&got),
			      cases[i].rows);
		lm_buf_free(&got);
		free(t);
		free(p);
		/* the page says what it shows */
		p = lm_path_join(out, "index.html");
		t = tu_read(p);
		ck_assert_contains(t, "History and run table: only runs");
		free(t);
		free(p);
	}
	/* --run still picks any run */
	lr_options o = { .out_dir = out, .command = "fuzz", .run_id = 1 };
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rep.run_id, 1);
	lr_report_free(&rep);
	/* nothing matches: the history says so */
	o.since = "2027-01-01";
	ck_assert_msg(lr_write(db, &o, &rep, &err) == 0, "%s", err.msg);
	lr_report_free(&rep);
	char *p = lm_path_join(out, "index.html");
	char *t = tu_read(p);
	ck_assert_contains(t, "Not plotted: no run matches the filters.");
	ck_assert(!exists(out, "history.png"));
	free(t);
	free(p);
	ldb_close(db);
	free(out);
	free(path);
	free(d);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_report_png);
	tcase_add_test(tc, test_report_svg_cli);
	tcase_add_test(tc, test_report_planted_symlinks);
	tcase_add_test(tc, test_report_temp_swapped);
	tcase_add_test(tc, test_scripts_embedded);
	tcase_add_test(tc, test_report_errors);
	tcase_add_test(tc, test_report_cli_errors);
	tcase_add_test(tc, test_report_page_images);
	tcase_add_test(tc, test_report_no_matmuls);
	tcase_add_test(tc, test_report_kernels);
	tcase_add_test(tc, test_report_races);
	tcase_add_test(tc, test_report_manifest);
	tcase_add_test(tc, test_run_kind);
	tcase_add_test(tc, test_report_filters);
	suite_add_tcase(s, tc);
	/* a browser's first start is slow on a busy machine */
	tc = tcase_create("browser");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_report_in_browser);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(report_suite());
}

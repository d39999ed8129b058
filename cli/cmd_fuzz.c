/*
** cmd_fuzz.c -- `lncsim fuzz`: gen + diff over many seeds, in parallel
** processes, with a progress bar on a terminal, failing cases kept with a
** one-line repro command, and every case and the summary logged.
*/
#define _XOPEN_SOURCE 700
#include "common.h"
#include "cli.h"
#include "cli_db.h"
#include "diff_case.h"
#include "gen.h"
#include "linker.h"
#include "safeio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

const char usage_fuzz[] =
	"usage: lncsim fuzz [--cores A-B] [--count K] [--seed S] [--jobs J]\n"
	"                   [--size small|medium|large] [--schedules K]\n"
	"                   [--keep-failures DIR] [--skip=STEP,...] [--stop]\n"
	"                   [-q] [--db FILE | --no-db]\n\n"
	"Generate K random per-core module sets (seeds S, S+1, ...; core count\n"
	"drawn from A..B per case) and run the differential check on each,\n"
	"J cases at a time in separate processes.\n\n"
	"  --cores A-B        core-count range, or one number (default 1-4)\n"
	"  --count K          number of cases (default 100)\n"
	"  --seed S           first seed (default 1)\n"
	"  --jobs J           parallel processes (default: online CPUs)\n"
	"  --size SZ          program size (default small)\n"
	"  --schedules K      perturbed schedules per case (default 0)\n"
	"  --keep-failures DIR  keep each failing case as DIR/case-<seed>/ with\n"
	"                     its repro command in DIR/case-<seed>/REPRO (a name\n"
	"                     already taken: DIR/case-<seed>.2/, .3, ...)\n"
	"  --skip=STEPS       link with these steps switched off\n"
	"  --stop             stop launching cases after the first failure\n"
	"  -q                 no progress output, only failures and the summary\n"
	"  --db FILE, --no-db run log (each case and a summary run)\n\n"
	"exit status: 0 every case passed, 1 some case failed, 2 bad usage or\n"
	"a run that could not be logged (fuzz stops launching cases then)\n";

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* How many names "case-<seed>", "case-<seed>.2", ... a kept case tries. */
#define MAX_CASE_NAMES 1000

typedef struct fuzz_cfg {
	int lo, hi, count, jobs, schedules, quiet, stop;
	uint64_t seed;
	ls_gen_size size;
	unsigned skip;
	const char *skip_text;
	const char *keep;
	cli_db dbo;
	char *cmdline;
} fuzz_cfg;

/* The core count of case seed s. */
static int case_cores(const fuzz_cfg *c, uint64_t s)
{
	return c->lo + (int)(mix(s) % (uint64_t)(c->hi - c->lo + 1));
}

/*
** Log case s as its own run: pass / fail with the executions and tensors
** of the check (dc), or error with msg when the check could not run. A
** failure to log is written to fd as "log\tmessage\n".
*/
static void log_case(const fuzz_cfg *c, uint64_t s, int cores,
		     lm_module **mods, int n_mods, const diff_case *dc,
		     int status, const char *msg, double wall, int fd)
{
	const char *path = cli_db_path(&c->dbo);
	if (!path)
		return;
	lm_error err;
	ldb *db = NULL;
	if (ldb_open(&db, path, 0, &err) != 0) {
		dprintf(fd, "log\t%s\n", err.msg);
		return;
	}
	char *cmd = lm_xasprintf("lncsim gen --cores %d --seed %llu --size %s && "
				 "lncsim diff%s%s --seed %llu gen%llu", cores,
				 (unsigned long long)s,
				 c->size == LS_GEN_SMALL ? "small" :
				 c->size == LS_GEN_MEDIUM ? "medium" : "large",
				 c->skip_text ? " --skip=" : "",
				 c->skip_text ? c->skip_text : "",
				 (unsigned long long)s, (unsigned long long)s);
	char *mod = lm_xasprintf("gen%llu", (unsigned long long)s);
	ldb_run_info info;
	memset(&info, 0, sizeof info);
	info.command = cmd;
	info.module = mod;
	info.arch = n_mods > 0 && mods[0]->arch ? mods[0]->arch : "";
	info.cores = cores;
	info.seed = s;
	int rc = diff_case_log(db, &info, status == 2 ? NULL : dc,
			       status == 2 ? msg : NULL, wall, &err);
	if (rc != 0)
		dprintf(fd, "log\t%s\n", err.msg);
	free(cmd);
	free(mod);
	ldb_close(db);
}

/*
** The directory of kept case s: "case-<s>" beneath --keep-failures DIR,
** or "case-<s>.<k>" (k = 2, 3, ...) when that name is taken -- whatever
** holds a name (the user's directory, a file, a symlink) is never reused,
** replaced or followed. *rootfd: DIR (caller closes), *root its path,
** *name the entry in it (caller frees), *fd the case directory opened
** without following symlinks (caller closes).
*/
static int make_case_dir(const fuzz_cfg *c, uint64_t s, int *rootfd,
			 const char **root, char **name, int *fd,
			 lm_error *err)
{
	const char *r = c->keep;
	int rc = 0;
	*fd = -1;
	*name = NULL;
	*root = r;
	*rootfd = open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*rootfd < 0)
		return lm_err(err, r, "", "cannot open directory: %s",
			      strerror(errno));
	for (int k = 1; k <= MAX_CASE_NAMES && !*name; k++) {
		char *nm = k == 1
			? lm_xasprintf("case-%llu", (unsigned long long)s)
			: lm_xasprintf("case-%llu.%d", (unsigned long long)s, k);
		if (mkdirat(*rootfd, nm, 0755) == 0) {
			*name = nm;
			break;
		}
		int e = errno;
		if (e != EEXIST) {
			char *w = lm_path_join(r, nm);
			rc = lm_err(err, w, "", "cannot create directory: %s",
				    strerror(e));
			free(w);
			free(nm);
			return rc;
		}
		free(nm);
	}
	if (!*name) {
		char *w = lm_xasprintf("%s/case-%llu", r, (unsigned long long)s);
		rc = lm_err(err, w, "", "this name and its numbered "
			    "alternatives up to .%d are taken", MAX_CASE_NAMES);
		free(w);
		return rc;
	}
	return lm_dir_open_beneath(fd, *rootfd, r, *name, 0, NULL, err);
}

/*
** One case, in a child process: generate in memory (ls_gen verifies the
** modules; the link trusts them), check, log. Nothing is written unless
** the case fails with --keep-failures: then the generated set and REPRO go
** into the case's directory, made before the case runs (its name is in
** the modules' paths). Writes "kind\tmessage\n" to fd, then "kept\tDIR\n"
** for a kept case and "log\tmessage\n" if the run could not be logged;
** exit 0 pass, 1 fail, 2 error.
*/
static int run_case(const fuzz_cfg *c, uint64_t s, int fd)
{
	lm_error err;
	int cores = case_cores(c, s);
	int rootfd = -1, casefd = -1, kept = 0;
	const char *root = NULL;
	char *name = NULL, *dir = NULL;
	ls_gen_opts go = {cores, s, c->size, NULL, NULL};
	int status = 2;
	lm_module **mods = NULL;
	ls_gen_file *files = NULL;
	int n = 0, n_files = 0;
	lm_fileset fs;
	diff_case dc;
	lm_fileset_init(&fs);
	memset(&dc, 0, sizeof dc);
	err.msg[0] = 0;
	double t0 = lm_seconds();
	if (c->keep) {
		if (make_case_dir(c, s, &rootfd, &root, &name, &casefd, &err))
			goto out;
		dir = lm_path_join(root, name);
	}
	/* without --keep-failures the set is named as `lncsim gen` would
	   write it here; nothing is written */
	if (ls_gen(&go, dir, &mods, &files, &n_files, &err))
		goto out;
	n = cores;
	ls_gen_fileset(files, n_files, dir, &fs);
	dc.skip = c->skip;
	dc.schedules = c->schedules;
	dc.seed = s;
	dc.files = &fs;
	if (diff_case_run(&dc, mods, n, NULL, &err))
		goto out;
	status = dc.failed ? 1 : 0;
out:
	if (c->keep && casefd >= 0 && status != 0) {
		/* the kept case: the generated set, how to reproduce it */
		lm_error werr;
		char *line = lm_xasprintf("lncsim diff%s%s --seed %llu %s/gen%llu\n",
					  c->skip_text ? " --skip=" : "",
					  c->skip_text ? c->skip_text : "",
					  (unsigned long long)s, dir,
					  (unsigned long long)s);
		kept = 1;
		if ((n && ls_gen_save_at(mods, n, files, n_files, casefd, dir,
					 &werr)) ||
		    lm_write_at(casefd, dir, "REPRO", line, strlen(line), 0644,
				&werr)) {
			if (status == 2) {
				size_t k = strlen(err.msg);
				snprintf(err.msg + k, sizeof err.msg - k,
					 " (and %s)", werr.msg);
			} else {
				err = werr;
				status = 2;
			}
		}
		free(line);
	}
	if (status == 2)
		dprintf(fd, "error\t%s\n", err.msg);
	else
		dprintf(fd, "%s\t%s\n", dc.failed ? dc.kind : "pass", dc.message);
	if (kept)
		dprintf(fd, "kept\t%s\n", dir);
	/* every case is a run of its own, an error too */
	log_case(c, s, cores, mods, n, &dc, status, status == 2 ? err.msg : "",
		 lm_seconds() - t0, fd);
	diff_case_free(&dc);
	for (int i = 0; i < n; i++)
		lm_module_free(mods[i]);
	free(mods);
	ls_gen_files_free(files, n_files);
	lm_fileset_free(&fs);
	if (casefd >= 0)
		close(casefd);
	if (name && !kept)
		lm_remove_tree_at(rootfd, name);
	if (rootfd >= 0)
		close(rootfd);
	free(name);
	free(dir);
	return status;
}

typedef struct slot {
	pid_t pid;
	int fd;
	uint64_t seed;
	lm_buf out;
} slot;

/* Redraw the progress line on stderr. */
static void progress(int done, int total, int failed, double t0)
{
	double el = lm_seconds() - t0;
	double rate = el > 0 ? done / el : 0;
	double eta = rate > 0 ? (total - done) / rate : 0;
	int w = 30, fill = total ? done * w / total : w;
	char bar[64];
	for (int i = 0; i < w; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[w] = 0;
	fprintf(stderr, "\r[%s] %d/%d  %.1f cases/s  ETA %.0fs  failed %d ",
		bar, done, total, rate, eta, failed);
	fflush(stderr);
}

/* Parse "A-B" or "N". */
static int parse_range(const char *v, int *lo, int *hi)
{
	char *end;
	long a = strtol(v, &end, 10), b = a;
	if (end == v)
		return -1;
	if (*end == '-') {
		const char *q = end + 1;
		b = strtol(q, &end, 10);
		if (end == q)
			return -1;
	}
	if (*end || a < 1 || b < a || b > 64)
		return -1;
	*lo = (int)a;
	*hi = (int)b;
	return 0;
}

static int num(const char *opt, const char *v, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	if (!v)
		return cli_usage_error("fuzz", "%s needs a value", opt);
	long x = strtol(v, &end, 10);
	if (*end || errno || x < lo || x > hi)
		return cli_usage_error("fuzz", "%s must be an integer in %ld..%ld",
				       opt, lo, hi);
	*out = x;
	return 0;
}

int cmd_fuzz(int argc, char **argv)
{
	fuzz_cfg c;
	memset(&c, 0, sizeof c);
	c.lo = 1;
	c.hi = 4;
	c.count = 100;
	c.seed = 1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	c.jobs = ncpu > 0 ? (int)ncpu : 1;
	lm_error err;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long x;
		int k = cli_db_option(&c.dbo, "fuzz", argc, argv, &i);
		if (k < 0)
			return EXIT_INPUT;
		if (k > 0)
			continue;
		if (!strcmp(a, "--cores")) {
			if (!v || parse_range(v, &c.lo, &c.hi))
				return cli_usage_error("fuzz", "--cores needs A-B or N "
						       "within 1..64");
			i++;
		} else if (!strcmp(a, "--count")) {
			if (num(a, v, 1, 10000000, &x))
				return EXIT_INPUT;
			c.count = (int)x;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (num(a, v, 0, 0x7fffffffffffffffL, &x))
				return EXIT_INPUT;
			c.seed = (uint64_t)x;
			i++;
		} else if (!strcmp(a, "--jobs") || !strcmp(a, "-j")) {
			if (num(a, v, 1, 256, &x))
				return EXIT_INPUT;
			c.jobs = (int)x;
			i++;
		} else if (!strcmp(a, "--schedules")) {
			if (num(a, v, 0, 1000, &x))
				return EXIT_INPUT;
			c.schedules = (int)x;
			i++;
		} else if (!strcmp(a, "--size")) {
			int s = v ? ls_gen_size_parse(v) : -1;
			if (s < 0)
				return cli_usage_error("fuzz", "--size must be small, "
						       "medium or large");
			c.size = (ls_gen_size)s;
			i++;
		} else if (!strcmp(a, "--keep-failures")) {
			if (!v)
				return cli_usage_error("fuzz", "--keep-failures needs "
						       "a directory");
			c.keep = v;
			i++;
		} else if (!strncmp(a, "--skip=", 7)) {
			if (lk_parse_skip(a + 7, &c.skip, &err))
				return cli_usage_error("fuzz", "%s", err.msg);
			c.skip_text = a + 7;
		} else if (!strcmp(a, "--stop")) {
			c.stop = 1;
		} else if (!strcmp(a, "-q")) {
			c.quiet = 1;
		} else {
			return cli_usage_error("fuzz", "unknown argument '%s'", a);
		}
	}
	if (c.keep && lm_mkdirs(c.keep, &err))
		return cli_report(&err);
	/* create / migrate the database once before the children use it */
	ldb *db = NULL;
	int rc = cli_db_open(&c.dbo, &db);
	if (rc)
		return rc;
	ldb_close(db);
	db = NULL;

	int tty = !c.quiet && isatty(2);
	slot *slots = lm_xcalloc((size_t)c.jobs, sizeof *slots);
	int next = 0, done = 0, failed = 0, errors = 0, running = 0;
	int unlogged = 0; /* runs the run log did not take: stop launching */
	double t0 = lm_seconds();
	lm_buf fails = LM_BUF_INIT;
	fflush(stdout);
	fflush(stderr);
	while (done < next || (next < c.count && !unlogged &&
			       !(c.stop && (failed || errors)))) {
		/* launch */
		while (running < c.jobs && next < c.count && !unlogged &&
		       !(c.stop && (failed || errors))) {
			int p[2];
			if (pipe(p) != 0) {
				perror("lncsim: fuzz: pipe");
				return EXIT_INTERNAL;
			}
			uint64_t s = c.seed + (uint64_t)next;
			pid_t pid = fork();
			if (pid < 0) {
				perror("lncsim: fuzz: fork");
				return EXIT_INTERNAL;
			}
			if (pid == 0) {
				close(p[0]);
				int st = run_case(&c, s, p[1]);
				close(p[1]);
				_exit(st);
			}
			close(p[1]);
			for (int k = 0; k < c.jobs; k++)
				if (!slots[k].pid) {
					slots[k].pid = pid;
					slots[k].fd = p[0];
					slots[k].seed = s;
					break;
				}
			running++;
			next++;
		}
		if (!running)
			break;
		/* reap one */
		int st;
		pid_t pid = wait(&st);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < c.jobs; k++) {
			slot *sl = &slots[k];
			if (sl->pid != pid)
				continue;
			char tmp[4096];
			ssize_t r;
			while ((r = read(sl->fd, tmp, sizeof tmp)) > 0)
				lm_buf_put(&sl->out, tmp, (size_t)r);
			close(sl->fd);
			int code = WIFEXITED(st) ? WEXITSTATUS(st) : 3;
			const char *msg = lm_buf_cstr(&sl->out);
			/* the verdict line, then "kept\tDIR" (where the case
			** was kept) and "log\t..." lines: runs the run log did
			** not take */
			const char *kept = NULL;
			int kept_len = 0;
			for (const char *l = strchr(msg, '\n'); l && l[1];
			     l = strchr(l + 1, '\n')) {
				if (!strncmp(l + 1, "kept\t", 5)) {
					const char *e = strchr(l + 6, '\n');
					kept = l + 6;
					kept_len = (int)(e ? e - kept
							   : (long)strlen(kept));
				}
				if (strncmp(l + 1, "log\t", 4))
					continue;
				const char *e = strchr(l + 1, '\n');
				if (tty)
					fputc('\n', stderr);
				fprintf(stderr, "lncsim: fuzz: seed %llu: %.*s (run "
					"not logged)\n",
					(unsigned long long)sl->seed,
					(int)(e ? e - (l + 5) : (long)strlen(l + 5)),
					l + 5);
				unlogged++;
			}
			if (code != 0) {
				if (code == 1)
					failed++;
				else
					errors++;
				int cores = case_cores(&c, sl->seed);
				if (tty)
					fputc('\n', stderr);
				const char *tab = strchr(msg, '\t');
				int klen = tab ? (int)(tab - msg) : 0;
				const char *text = tab ? tab + 1 : msg;
				char *line = lm_xasprintf(
					"FAIL seed %llu (%d core%s) [%.*s]: %.*s\n  repro: "
					"lncsim gen --cores %d --seed %llu%s -o DIR && "
					"lncsim diff%s%s --seed %llu DIR/gen%llu\n",
					(unsigned long long)sl->seed, cores,
					cores == 1 ? "" : "s", klen, msg,
					(int)(strchr(text, '\n') ? strchr(text, '\n') - text
								 : (long)strlen(text)),
					text, cores,
					(unsigned long long)sl->seed,
					c.size == LS_GEN_SMALL ? "" :
					c.size == LS_GEN_MEDIUM ? " --size medium"
								: " --size large",
					c.skip_text ? " --skip=" : "",
					c.skip_text ? c.skip_text : "",
					(unsigned long long)sl->seed,
					(unsigned long long)sl->seed);
				fputs(line, stdout);
				if (kept)
					printf("  kept: %.*s\n", kept_len, kept);
				fflush(stdout);
				lm_buf_puts(&fails, line);
				free(line);
			}
			lm_buf_free(&sl->out);
			memset(sl, 0, sizeof *sl);
			running--;
			done++;
			break;
		}
		if (tty)
			progress(done, c.count, failed + errors, t0);
		else if (!c.quiet && done % 50 == 0)
			fprintf(stderr, "fuzz: %d/%d cases, %d failed\n", done, c.count,
				failed + errors);
	}
	if (tty)
		fputc('\n', stderr);
	double el = lm_seconds() - t0;
	printf("fuzz: %d case%s, %d passed, %d failed, %d error%s in %.2f s "
	       "(%.1f cases/s, %d job%s)\n", done, done == 1 ? "" : "s",
	       done - failed - errors, failed, errors, errors == 1 ? "" : "s", el,
	       el > 0 ? done / el : 0.0, c.jobs, c.jobs == 1 ? "" : "s");
	if (unlogged)
		printf("fuzz: %d run%s not logged into %s: stopped launching "
		       "cases\n", unlogged, unlogged == 1 ? "" : "s",
		       cli_db_path(&c.dbo));
	/* the summary run */
	if (cli_db_path(&c.dbo) && cli_db_open(&c.dbo, &db) != 0)
		unlogged++;
	else if (db) {
		char *cmd = cli_db_cmdline(argc + 1, argv - 1);
		char *msg = lm_xasprintf("%d cases, %d failed, %d errors", done,
					 failed, errors);
		ldb_run_info info;
		memset(&info, 0, sizeof info);
		info.command = cmd;
		info.module = "fuzz";
		info.cores = c.hi;
		info.seed = c.seed;
		ldb_run *run = NULL;
		if (ldb_run_begin(db, &info, &run, &err) ||
		    ldb_run_end(run, failed || errors ? "fail" : "pass", msg, el,
				NULL, &err)) {
			fprintf(stderr, "lncsim: %s (run not logged)\n", err.msg);
			unlogged++;
		}
		free(cmd);
		free(msg);
		ldb_close(db);
	}
	lm_buf_free(&fails);
	free(slots);
	if (unlogged)
		return EXIT_INPUT;
	return failed || errors ? EXIT_CHECK : EXIT_OK;
}

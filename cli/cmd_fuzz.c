/*
** cmd_fuzz.c -- `lncsim fuzz`: gen + diff over many seeds as one
** campaign: the options, the campaign in the database (new, or resumed),
** then the coordinator over local case servers (--jobs J) or MPI ranks
** (docs/distributed.md). The parts: fuzz.h (options, result records,
** signatures, a case), fuzz_coord.h (the coordinator's state machine),
** fuzz_pool.h (case servers), fuzz_run.h (transport, driver, sink),
** fuzz_mpi.h (the MPI transport).
*/
#define _XOPEN_SOURCE 700
#include "common.h"
#include "cli.h"
#include "cli_db.h"
#include "fuzz.h"
#include "fuzz_coord.h"
#include "fuzz_pool.h"
#include "fuzz_run.h"
#ifdef HAVE_MPI
#include "fuzz_mpi.h"
#endif
#include "linker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char usage_fuzz[] =
	"usage: lncsim fuzz [--cores A-B] [--count K | --duration T] [--seed S]\n"
	"                   [--jobs J] [--size small|medium|large] [--loops]\n"
	"                   [--dynamic] [--sync deps|semaphores] [--plain]\n"
	"                   [--schedules K] [--race] [--compute] [--by-name]\n"
	"                   [--keep-failures DIR] [--skip=STEP,...] [--stop] [-q]\n"
	"                   [--campaign NAME] [--resume] [--lost-after SECONDS]\n"
	"                   [--case-timeout T]\n"
	"                   [--null-cases] [--mpi] [--db FILE | --no-db]\n"
	"       mpirun -np N lncsim fuzz ...    srun lncsim fuzz ...\n\n"
	"Generate random per-core module sets (seeds S, S+1, ...; core count\n"
	"drawn from A..B per case) and run the differential check on each, as\n"
	"one campaign: a coordinator hands the seeds out to workers that ask\n"
	"(J case servers here, or the ranks of an MPI job: docs/distributed.md),\n"
	"and logs every case into the one database.\n\n"
	"  --cores A-B        core-count range, or one number (default 1-4)\n"
	"  --count K          number of seeds (default 100; with --duration, no\n"
	"                     limit but the time)\n"
	"  --duration T       hand out no new case after T (seconds, or with a\n"
	"                     unit: 90s, 30m, 8h, 2d)\n"
	"  --seed S           first seed (default 1)\n"
	"  --jobs J           case servers (default: online CPUs; under MPI, per\n"
	"                     rank, default 1)\n"
	"  --size SZ          program size (default small)\n"
	"  --loops            generate with `lncsim gen --loops`\n"
	"  --dynamic          generate with `lncsim gen --dynamic`\n"
	"  --sync MODE        generate with `lncsim gen --sync MODE`\n"
	"  --plain            generate with none of the three\n"
	"                     (default: each case draws its forms by its seed:\n"
	"                     no, static or dynamic loops, each with deps or\n"
	"                     semaphores; any of these four options turns\n"
	"                     that off)\n"
	"  --race             detect data races in both runs of each case\n"
	"                     (docs/race.md): a race fails the case (kinds\n"
	"                     reference-race, linked-race)\n"
	"  --compute          generate with `lncsim gen --compute` (the cases\n"
	"                     ordered by deps; not with --sync semaphores)\n"
	"  --by-name          generate with `lncsim gen --by-name` (about half\n"
	"                     the hand-offs name-matched)\n"
	"  --schedules K      perturbed schedules per case (default 0)\n"
	"  --keep-failures DIR  keep the failing case of each failure signature's\n"
	"                     smallest seed as DIR/case-<seed>/ with its repro\n"
	"                     command in DIR/case-<seed>/REPRO (a name already\n"
	"                     taken: DIR/case-<seed>.2/, .3, ...)\n"
	"  --skip=STEPS       link with these steps switched off\n"
	"  --stop             hand out no new case after the first failure\n"
	"  -q                 no progress output, only failures and the summary\n"
	"  --campaign NAME    the campaign's id in the database (default: a new\n"
	"                     one, fuzz-DATE-TIME-XXXX)\n"
	"  --resume           continue campaign NAME (default: the newest): the\n"
	"                     seeds it recorded are skipped, its generator\n"
	"                     options and count are used\n"
	"  --case-timeout T   a case still running after T (as --duration; 0:\n"
	"                     no limit; default 10m) is killed and recorded as a\n"
	"                     failure of kind timeout\n"
	"  --lost-after SECONDS  under MPI, a rank that sends nothing this long\n"
	"                     while running a case is taken for dead (default 60)\n"
	"  --null-cases       every case passes at once, nothing is generated:\n"
	"                     measures the coordinator (make bench)\n"
	"  --mpi              run as a rank of an MPI job even when the\n"
	"                     environment names no launcher (a build made\n"
	"                     with ./configure --with-mpi)\n"
	"  --db FILE, --no-db run log (each case, the campaign, a summary run)\n\n"
	"A failing case prints a FAIL line with its repro command when its\n"
	"failure signature is new (or its seed is the smallest yet); `lncsim db\n"
	"failures` lists the signatures with their hits.\n\n"
	"exit status: 0 every case passed, 1 some case failed, 2 bad usage or\n"
	"runs that could not be logged (fuzz stops handing out cases then),\n"
	"3 every worker died, 130 interrupted (SIGINT: the running cases\n"
	"finish), 143 terminated (SIGTERM)\n";

/* What the command line says. */
typedef struct fuzz_opts {
	fz_config cfg;
	uint64_t seed, count;
	double duration;          /* seconds, 0: none */
	double lost_after;
	int jobs, quiet, stop, resume, mpi;
	int plain;                /* --plain given */
	int lock_fd;              /* the campaign's lock (-1: none) */
	const char *campaign;
	cli_db dbo;
	/* given on the command line (a resumed campaign's must match) */
	int has_cores, has_size, has_form, has_race, has_compute, has_by_name,
	    has_schedules, has_skip, has_seed,
	    has_count,
	    has_jobs;
} fuzz_opts;

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

static int num(const char *opt, const char *v, long long lo, long long hi,
	       long long *out)
{
	char *end;
	errno = 0;
	if (!v)
		return cli_usage_error("fuzz", "%s needs a value", opt);
	long long x = strtoll(v, &end, 10);
	if (!*v || *end || errno || x < lo || x > hi)
		return cli_usage_error("fuzz", "%s must be an integer in "
				       "%lld..%lld", opt, lo, hi);
	*out = x;
	return 0;
}

/* "90", "90s", "30m", "8h", "2d" -> seconds; -1 when it is none. */
static double parse_duration(const char *v)
{
	char *end;
	errno = 0;
	if (!v || *v < '0' || *v > '9')
		return -1;
	double x = strtod(v, &end);
	double unit = 1;
	switch (*end) {
	case 0: case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	default: return -1;
	}
	if (*end && end[1])
		return -1;
	if (errno || !(x > 0) || x * unit > 366 * 86400.0)
		return -1;
	return x * unit;
}

/* A campaign name: 1..64 of [A-Za-z0-9._:-], beginning with a letter or
** digit (it goes into commands a user copies). */
static int good_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || !strchr("._:-", c)))
			return 0;
	}
	return 1;
}

static int parse_args(fuzz_opts *o, int argc, char **argv)
{
	lm_error err;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long x;
		int k = cli_db_option(&o->dbo, "fuzz", argc, argv, &i);
		if (k < 0)
			return EXIT_INPUT;
		if (k > 0)
			continue;
		if (!strcmp(a, "--")) {
			if (cli_no_operands("fuzz", argc, argv, i))
				return EXIT_INPUT;
			break;
		} else if (!strcmp(a, "--cores")) {
			if (!v || parse_range(v, &o->cfg.lo, &o->cfg.hi))
				return cli_usage_error("fuzz", "--cores needs A-B or N "
						       "within 1..64");
			o->has_cores = 1;
			i++;
		} else if (!strcmp(a, "--count")) {
			if (num(a, v, 1, 1000000000000LL, &x))
				return EXIT_INPUT;
			o->count = (uint64_t)x;
			o->has_count = 1;
			i++;
		} else if (!strcmp(a, "--duration")) {
			o->duration = parse_duration(v);
			if (o->duration <= 0)
				return cli_usage_error("fuzz", "--duration needs a "
						       "time: seconds, or 90s, 30m, "
						       "8h, 2d (at most a year)");
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (num(a, v, 0, 0x7fffffffffffffffLL, &x))
				return EXIT_INPUT;
			o->seed = (uint64_t)x;
			o->has_seed = 1;
			i++;
		} else if (!strcmp(a, "--jobs") || !strcmp(a, "-j")) {
			if (num(a, v, 1, 256, &x))
				return EXIT_INPUT;
			o->jobs = (int)x;
			o->has_jobs = 1;
			i++;
		} else if (!strcmp(a, "--schedules")) {
			if (num(a, v, 0, 1000, &x))
				return EXIT_INPUT;
			o->cfg.schedules = (int)x;
			o->has_schedules = 1;
			i++;
		} else if (!strcmp(a, "--size")) {
			int s = v ? ls_gen_size_parse(v) : -1;
			if (s < 0)
				return cli_usage_error("fuzz", "--size must be small, "
						       "medium or large");
			o->cfg.size = (ls_gen_size)s;
			o->has_size = 1;
			i++;
		} else if (!strcmp(a, "--loops")) {
			o->cfg.loops = 1;
			o->cfg.mix = 0;
			o->has_form = 1;
		} else if (!strcmp(a, "--dynamic")) {
			o->cfg.dynamic = 1;
			o->cfg.mix = 0;
			o->has_form = 1;
		} else if (!strcmp(a, "--sync")) {
			int m = v ? ls_gen_sync_parse(v) : -1;
			if (m < 0)
				return cli_usage_error("fuzz", "--sync must be deps or "
						       "semaphores");
			o->cfg.sync = m;
			o->cfg.mix = 0;
			o->has_form = 1;
			i++;
		} else if (!strcmp(a, "--plain")) {
			o->plain = 1;
			o->cfg.mix = 0;
			o->has_form = 1;
		} else if (!strcmp(a, "--compute")) {
			o->cfg.compute = 1;
			o->has_compute = 1;
		} else if (!strcmp(a, "--by-name")) {
			o->cfg.by_name = 1;
			o->has_by_name = 1;
		} else if (!strcmp(a, "--race")) {
			o->cfg.race = 1;
			o->has_race = 1;
		} else if (!strcmp(a, "--keep-failures")) {
			if (!v || !*v)
				return cli_usage_error("fuzz", "--keep-failures needs "
						       "a directory");
			if (strlen(v) >= sizeof o->cfg.keep)
				return cli_usage_error("fuzz", "--keep-failures: the "
						       "path is too long");
			snprintf(o->cfg.keep, sizeof o->cfg.keep, "%s", v);
			i++;
		} else if (!strncmp(a, "--skip=", 7)) {
			if (lk_parse_skip(a + 7, &o->cfg.skip, &err))
				return cli_usage_error("fuzz", "%s", err.msg);
			o->has_skip = 1;
		} else if (!strcmp(a, "--campaign")) {
			if (!v || !good_name(v))
				return cli_usage_error("fuzz", "--campaign needs a "
						       "name: 1 to 64 letters, "
						       "digits and . _ : - (a letter "
						       "or digit first)");
			o->campaign = v;
			i++;
		} else if (!strcmp(a, "--resume")) {
			o->resume = 1;
		} else if (!strcmp(a, "--lost-after")) {
			if (num(a, v, 1, 86400, &x))
				return EXIT_INPUT;
			o->lost_after = (double)x;
			i++;
		} else if (!strcmp(a, "--case-timeout")) {
			double t = v && !strcmp(v, "0") ? 0 : parse_duration(v);
			if (t < 0 || t * 1000 > FZ_CASE_TIMEOUT_MAX_MS ||
			    (t > 0 && t < 0.001))
				return cli_usage_error("fuzz", "--case-timeout needs "
						       "a time of 1 ms to 7 days "
						       "(seconds, or 90s, 30m, "
						       "8h, 2d), or 0 for none");
			o->cfg.case_timeout_ms = (int)(t * 1000 + 0.5);
			i++;
		} else if (!strcmp(a, "--null-cases")) {
			o->cfg.null_cases = 1;
		} else if (!strcmp(a, "--mpi")) {
			o->mpi = 1;
		} else if (!strcmp(a, "--stop")) {
			o->stop = 1;
		} else if (!strcmp(a, "-q")) {
			o->quiet = 1;
		} else {
			return cli_usage_error("fuzz", "unknown argument '%s'", a);
		}
	}
	if (o->plain && (o->cfg.loops || o->cfg.dynamic ||
			 o->cfg.sync == LS_GEN_SYNC_SEMAPHORES))
		return cli_usage_error("fuzz", "--plain is the generator without "
				       "--loops, --dynamic and --sync semaphores");
	if (o->cfg.compute && !o->cfg.mix &&
	    o->cfg.sync == LS_GEN_SYNC_SEMAPHORES)
		return cli_usage_error("fuzz", "--compute takes --sync deps only");
	/* a duration alone: no seed limit but the time */
	if (o->duration > 0 && !o->has_count)
		o->count = 0;
	if (o->resume && !cli_db_path(&o->dbo))
		return cli_usage_error("fuzz", "--resume needs the database "
				       "(not --no-db)");
	if (o->campaign && !cli_db_path(&o->dbo))
		return cli_usage_error("fuzz", "--campaign names a campaign in "
				       "the database (not with --no-db)");
	return 0;
}

/* The size of the job an MPI launcher started this process in, from its
** environment (Open MPI, PMIx, PMI-1/2: MPICH and srun --mpi=pmi2);
** 0 when there is none. */
static int launcher_size(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE",
	};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return atoi(v);
	}
	return getenv("PMIX_RANK") || getenv("PMI_RANK") ? 1 : 0;
}

/* A new campaign's name: fuzz-YYYYMMDD-HHMMSS-XXXX. */
static char *new_name(void)
{
	char t[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(t, sizeof t, "%Y%m%d-%H%M%S", &tm);
	uint64_t z = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^
		     (uint64_t)(lm_seconds() * 1e6);
	z ^= z >> 29;
	return lm_xasprintf("fuzz-%s-%04x", t, (unsigned)(z & 0xffff));
}

/*
** The campaign of a resumed run: its stored options into o (what the
** command line gave must agree), its recorded seeds into *done.
*/
static int resume(fuzz_opts *o, ldb *db, const char *path,
		  const ldb_campaign *k, ldb_seed_range **done, int *n_done)
{
	fz_config was = o->cfg;
	lm_error err;
	if (fz_gen_options_parse(k->gen_options, &was) != 0) {
		fprintf(stderr, "lncsim: %s: campaign %s: generator options "
			"'%s' are not this lncsim's\n", path, k->name,
			k->gen_options);
		return EXIT_INPUT;
	}
	struct { int given, same; const char *what; } chk[] = {
		{ o->has_cores, was.lo == o->cfg.lo && was.hi == o->cfg.hi,
		  "--cores" },
		{ o->has_size, was.size == o->cfg.size, "--size" },
		{ o->has_form, was.loops == o->cfg.loops &&
		  was.dynamic == o->cfg.dynamic && was.sync == o->cfg.sync &&
		  was.mix == o->cfg.mix, "--loops / --dynamic / --sync / --plain" },
		{ o->has_race, was.race == o->cfg.race, "--race" },
		{ o->has_compute, was.compute == o->cfg.compute, "--compute" },
		{ o->has_by_name, was.by_name == o->cfg.by_name, "--by-name" },
		{ o->has_schedules, was.schedules == o->cfg.schedules,
		  "--schedules" },
		{ o->has_skip, was.skip == o->cfg.skip, "--skip" },
		{ o->has_seed, k->first_seed == o->seed, "--seed" },
	};
	for (size_t i = 0; i < sizeof chk / sizeof chk[0]; i++)
		if (chk[i].given && !chk[i].same) {
			fprintf(stderr, "lncsim: %s: campaign %s was made with "
				"'%s' and first seed %llu: %s differs (a new "
				"--campaign runs other options)\n", path,
				k->name, k->gen_options,
				(unsigned long long)k->first_seed, chk[i].what);
			return EXIT_INPUT;
		}
	o->cfg.lo = was.lo;
	o->cfg.hi = was.hi;
	o->cfg.size = was.size;
	o->cfg.loops = was.loops;
	o->cfg.race = was.race;
	o->cfg.compute = was.compute;
	o->cfg.by_name = was.by_name;
	o->cfg.dynamic = was.dynamic;
	o->cfg.sync = was.sync;
	o->cfg.mix = was.mix;
	o->cfg.schedules = was.schedules;
	o->cfg.skip = was.skip;
	o->seed = k->first_seed;
	if (!o->has_count)
		o->count = k->count;
	if (!o->count && !(o->duration > 0)) {
		fprintf(stderr, "lncsim: %s: campaign %s has no seed count (it "
			"ran for a --duration): give --duration or --count to "
			"resume it\n", path, k->name);
		return EXIT_INPUT;
	}
	if (ldb_campaign_seeds(db, k->name, done, n_done, NULL, &err) != 0)
		return cli_report(&err);
	return 0;
}

/* FNV-1a of s: where in the lock file campaign s has its byte. */
static off_t lock_byte(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (off_t)(h & ((1ull << 40) - 1));
}

/*
** Hold campaign name for this process: a write lock on one byte of
** DB-fuzz.lock (fcntl: the kernel drops it when the process ends, however
** it ends, so a killed campaign leaves nothing stale). Another process
** holding it is refused: two runs of one campaign would run the same
** seeds.
*/
static int lock_campaign(fuzz_opts *o, const char *path, const char *name)
{
	char *lp = lm_xasprintf("%s-fuzz.lock", path);
	int fd = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	struct stat sb;
	int rc = 0;
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fprintf(stderr, "lncsim: %s: cannot open the campaign lock: %s\n",
			lp, fd < 0 ? strerror(errno) : "not a regular file");
		rc = EXIT_INPUT;
	} else {
		struct flock fl;
		memset(&fl, 0, sizeof fl);
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		fl.l_start = lock_byte(name);
		fl.l_len = 1;
		if (fcntl(fd, F_SETLK, &fl) != 0) {
			int e = errno;
			struct flock who = fl;
			if ((e == EACCES || e == EAGAIN) &&
			    fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK)
				fprintf(stderr, "lncsim: %s: campaign %s is being "
					"run by another lncsim (process %ld): one "
					"campaign runs once at a time\n", path,
					name, (long)who.l_pid);
			else if (e == EACCES || e == EAGAIN)
				fprintf(stderr, "lncsim: %s: campaign %s is being "
					"run by another lncsim: one campaign runs "
					"once at a time\n", path, name);
			else
				fprintf(stderr, "lncsim: %s: cannot lock the "
					"campaign: %s\n", lp, strerror(e));
			rc = EXIT_INPUT;
		}
	}
	if (rc && fd >= 0)
		close(fd);
	else
		o->lock_fd = fd;
	free(lp);
	return rc;
}

/*
** Open the database and make (or find) the campaign: *db NULL with
** --no-db, *name the campaign (caller frees), *done the seeds to skip.
*/
static int setup_campaign(fuzz_opts *o, ldb **db, char **name,
			  ldb_seed_range **done, int *n_done)
{
	lm_error err;
	int rc = cli_db_open(&o->dbo, db), found = 0;
	const char *path = cli_db_path(&o->dbo);
	ldb_campaign k;
	*name = NULL;
	if (rc || !*db)
		return rc;
	/* resumed: the one named, else the newest; new: a name taken? */
	if ((o->resume || o->campaign) &&
	    ldb_campaign_get(*db, o->campaign, &k, &found, &err) != 0)
		return cli_report(&err);
	if (o->resume) {
		if (!found) {
			if (o->campaign)
				fprintf(stderr, "lncsim: %s: no campaign %s to "
					"resume\n", path, o->campaign);
			else
				fprintf(stderr, "lncsim: %s: no campaign to "
					"resume\n", path);
			return EXIT_INPUT;
		}
		/* held before its seeds are read: a run that ends meanwhile
		   has recorded all of its own */
		rc = lock_campaign(o, path, k.name);
		if (!rc)
			rc = resume(o, *db, path, &k, done, n_done);
		*name = lm_xstrdup(k.name);
		ldb_campaign_free(&k);
		return rc;
	}
	if (found) {
		fprintf(stderr, "lncsim: %s: campaign %s exists: --resume "
			"continues it, another --campaign NAME starts a new "
			"one\n", path, o->campaign);
		ldb_campaign_free(&k);
		return EXIT_INPUT;
	}
	*name = o->campaign ? lm_xstrdup(o->campaign) : new_name();
	if ((rc = lock_campaign(o, path, *name)) != 0)
		return rc;
	char *opts = fz_gen_options(&o->cfg);
	char *cmd = cli_cmdline();
	ldb_campaign nk;
	memset(&nk, 0, sizeof nk);
	nk.name = *name;
	nk.gen_options = opts;
	nk.command = cmd;
	nk.first_seed = o->seed;
	nk.count = o->count;
	rc = ldb_campaign_add(*db, &nk, &err);
	free(opts);
	free(cmd);
	if (rc) {
		fprintf(stderr, "lncsim: %s (campaign not logged)\n", err.msg);
		return EXIT_INPUT;
	}
	return 0;
}

/* The summary run of the session. */
static int log_summary(ldb *db, const fuzz_opts *o, fz_sink *s,
		       const char *campaign, double wall)
{
	lm_error err;
	char *cmd = cli_cmdline();
	uint64_t failed = fz_sink_failed(s);
	char *msg = lm_xasprintf("%llu cases, %llu failed or errors "
				 "(campaign %s)",
				 (unsigned long long)fz_sink_done(s),
				 (unsigned long long)failed, campaign);
	ldb_run_info info;
	ldb_run *run = NULL;
	int rc = 0;
	memset(&info, 0, sizeof info);
	info.command = cmd;
	info.module = "fuzz";
	info.cores = o->cfg.hi;
	info.seed = o->seed;
	if (ldb_run_begin(db, &info, &run, &err) ||
	    ldb_run_end(run, failed ? "fail" : "pass", msg, wall, NULL, &err)) {
		fprintf(stderr, "lncsim: %s (run not logged)\n", err.msg);
		rc = 1;
	}
	free(cmd);
	free(msg);
	return rc;
}

/* CPU seconds this process used. */
static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* The plan: seeds first .. first + count - 1 (count 0: every seed up to
** the largest), what is recorded skipped. */
static fz_coord *make_coord(const fuzz_opts *o, const ldb_seed_range *done,
			    int n_done, int workers)
{
	fz_plan p;
	uint64_t last = 0x7fffffffffffffffULL;
	fz_range *r = n_done ? lm_xcalloc((size_t)n_done, sizeof *r) : NULL;
	for (int i = 0; i < n_done; i++) {
		r[i].lo = done[i].lo;
		r[i].hi = done[i].hi;
	}
	memset(&p, 0, sizeof p);
	p.first = o->seed;
	p.end = o->count && o->count <= last - o->seed + 1 ? o->seed + o->count
							    : last + 1;
	p.done = r;
	p.n_done = n_done;
	p.n_workers = workers;
	fz_coord *c = fz_coord_new(&p);
	free(r);
	return c;
}

/*
** The coordinator: the campaign, then the drive over transport t.
** Returns the exit code.
*/
static int coordinate(fuzz_opts *o, fz_pool *pool, int mpi_size)
{
	ldb *db = NULL;
	char *name = NULL;
	ldb_seed_range *done = NULL;
	int n_done = 0, rc;
	lm_error err;
	double t0 = lm_seconds(), cpu0 = cpu_seconds();

	if (o->cfg.keep[0] && lm_mkdirs(o->cfg.keep, &err))
		rc = cli_report(&err);
	else
		rc = setup_campaign(o, &db, &name, &done, &n_done);
#ifdef HAVE_MPI
	if (mpi_size)
		fz_mpi_send_config(rc ? NULL : &o->cfg);
#endif
	if (rc || fz_pool_configure(pool, &o->cfg, &err) != 0) {
		if (!rc)
			rc = cli_report(&err);
		ldb_close(db);
		if (o->lock_fd >= 0)
			close(o->lock_fd);
		free(name);
		free(done);
		return rc;
	}

	fz_transport t;
	int workers = fz_pool_size(pool);
	const char *label = "job";
#ifdef HAVE_MPI
	if (mpi_size) {
		fz_mpi_transport(&t, pool, mpi_size, o->jobs, o->lost_after);
		workers = t.n_workers;
		label = "worker";
	} else
#endif
		fz_local_transport(&t, pool);
	fz_coord *co = make_coord(o, done, n_done, t.n_workers);
	fz_coord_stats st;
	fz_coord_get_stats(co, &st);
	fz_sink_opts so;
	memset(&so, 0, sizeof so);
	so.db = db;
	so.db_path = cli_db_path(&o->dbo);
	so.campaign = name;
	so.cfg = &o->cfg;
	so.transport = &t;
	so.quiet = o->quiet;
	so.tty = !o->quiet && isatty(2);
	so.total = o->count ? st.total : 0;
	so.duration = o->duration;
	fz_sink *s = fz_sink_new(&so);
	fz_drive_opts dopt = { o->stop, o->duration > 0 ? t0 + o->duration
							 : 0 };
	fflush(stdout);
	fz_install_signals();
	int end = fz_drive(&t, co, s, &dopt);
	fz_coord_get_stats(co, &st);
	fz_sink_summary(s, &st, workers, label, end == FZ_END_INTERRUPTED ||
			end == FZ_END_TERMINATED, cpu_seconds() - cpu0);
	int unlogged = fz_sink_unlogged(s) != 0;
	if (db && log_summary(db, o, s, name, lm_seconds() - t0))
		unlogged = 1;
	if (end == FZ_END_NO_WORKERS)
		fprintf(stderr, "lncsim: fuzz: every worker died with cases left "
			"to run\n");
	rc = unlogged ? EXIT_INPUT : fz_sink_failed(s) ? EXIT_CHECK : EXIT_OK;
	if (end == FZ_END_NO_WORKERS)
		rc = EXIT_INTERNAL;
	else if (end == FZ_END_INTERRUPTED)
		rc = 130;
	else if (end == FZ_END_TERMINATED) {
		rc = 143;
		fz_pool_kill(pool);
	}
#ifdef HAVE_MPI
	if (mpi_size)
		fz_mpi_transport_free(&t);
	else
#endif
		fz_local_transport_free(&t);
	fz_sink_free(s);
	fz_coord_free(co);
	ldb_close(db);
	if (o->lock_fd >= 0)
		close(o->lock_fd);
	free(name);
	free(done);
	return rc;
}

#ifdef HAVE_MPI
/* A worker rank: the campaign's options from rank 0, then cases. */
static int work(fuzz_opts *o, fz_pool *pool)
{
	fz_config c = FZ_CONFIG_INIT;
	lm_error err;
	int rc = fz_mpi_recv_config(&c, &err);
	if (rc == 1)
		return EXIT_OK;          /* rank 0 said why */
	if (rc || fz_pool_configure(pool, &c, &err) != 0)
		return cli_report(&err);
	if (fz_mpi_worker(pool, o->lost_after, c.keep) != 0) {
		fprintf(stderr, "lncsim: fuzz: lost touch with rank 0\n");
		return EXIT_INTERNAL;
	}
	return EXIT_OK;
}
#endif

int cmd_fuzz(int argc, char **argv)
{
	fuzz_opts o;
	fz_config init = FZ_CONFIG_INIT;
	lm_error err;
	memset(&o, 0, sizeof o);
	o.cfg = init;
	o.seed = 1;
	o.count = 100;
	o.lost_after = 60;
	o.lock_fd = -1;
	int rc = parse_args(&o, argc, argv);
	if (rc)
		return rc;
	int launched = launcher_size();
#ifdef HAVE_MPI
	int use_mpi = o.mpi || launched > 0;
#else
	if (o.mpi)
		return cli_usage_error("fuzz", "--mpi: this lncsim is built "
				       "without MPI (./configure --with-mpi)");
	if (launched > 1) {
		fprintf(stderr, "lncsim: fuzz: started as one of %d processes of "
			"an MPI job, but this lncsim is built without MPI: each "
			"would run the whole campaign (build with ./configure "
			"--with-mpi)\n", launched);
		return EXIT_INPUT;
	}
	int use_mpi = 0;
#endif
	if (!o.has_jobs) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		o.jobs = use_mpi ? 1 : ncpu > 0 ? (int)ncpu : 1;
	}
	/* the case servers first: under MPI they must exist before it does */
	fz_pool *pool = NULL;
	if (fz_pool_start(&pool, o.jobs, &err) != 0)
		return cli_report(&err);
	int rank = 0, size = 0;
#ifdef HAVE_MPI
	if (use_mpi && fz_mpi_init(NULL, NULL, &rank, &size, &err) != 0) {
		fz_pool_free(pool);
		return cli_report(&err);
	}
	if (use_mpi && rank != 0) {
		rc = work(&o, pool);
		fz_pool_free(pool);
		fz_mpi_finalize(rc);
		return rc;
	}
#endif
	(void)rank;
	rc = coordinate(&o, pool, size);
	fz_pool_free(pool);
#ifdef HAVE_MPI
	/* cut short, the job is being torn down: no goodbyes */
	if (use_mpi && rc != 143)
		fz_mpi_finalize(rc);
#endif
	return rc;
}

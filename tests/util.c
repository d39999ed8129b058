/*
** util.c -- helpers shared by the check suites.
*/
#include "common.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

char *tu_srcpath(const char *rel)
{
	/* absolute, so it stays valid when a test runs lncsim elsewhere */
	const char *s = getenv("srcdir");
	char *abs = s && *s ? realpath(s, NULL) : NULL;
	char *p = lm_xasprintf("%s/%s", abs ? abs : LNCSIM_SRCDIR, rel);
	free(abs);
	return p;
}

char *tu_sharedpath(const char *rel)
{
	char *p = tu_srcpath("../shared");
	char *q = lm_xasprintf("%s/%s", p, rel);
	free(p);
	if (access(q, R_OK) == 0)
		return q;
	free(q);
	q = lm_xasprintf("%s/../shared/%s", LNCSIM_SRCDIR, rel);
	if (access(q, R_OK) == 0)
		return q;
	free(q);
	return NULL;
}

/*
** The suite's scratch directory: ./tmp-SUITE-PID-XXXXXX in the build tree,
** made by tu_main before the test cases fork (so every case shares it) or
** on first use. Every tu_tmpdir lives inside it; tu_main removes it when
** the suite passed and keeps it for a look when a case failed.
*/
static char *scratch_root;

static const char *scratch(void)
{
	if (scratch_root)
		return scratch_root;
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[k > 0 ? k : 0] = 0;
	const char *name = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	if (!strncmp(name, "lt-", 3))
		name += 3;
	char *t = lm_xasprintf("tmp-%s-%ld-XXXXXX", *name ? name : "suite",
			       (long)getpid());
	if (!mkdtemp(t)) {
		perror("mkdtemp");
		abort();
	}
	scratch_root = realpath(t, NULL);
	free(t);
	if (!scratch_root)
		abort();
	return scratch_root;
}

char *tu_tmpdir(const char *tag)
{
	char *t = lm_xasprintf("%s/%s-XXXXXX", scratch(), tag);
	if (!mkdtemp(t)) {
		perror("mkdtemp");
		abort();
	}
	return t;
}

/*
** Remove the entries of the directory open at dfd, recursively, never
** following a symbolic link (a test may leave one pointing anywhere).
*/
static int rm_entries(int dfd)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -1;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = -1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			/* a case may have left it without write or search bits */
			fchmodat(dirfd(d), e->d_name, 0700, 0);
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (sub < 0 || rm_entries(sub) != 0 ||
			    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0)
				rc = -1;
		} else if (unlinkat(dirfd(d), e->d_name, 0) != 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int tu_rm_tree(const char *dir)
{
	chmod(dir, 0700);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (rm_entries(fd) != 0)
		return -1;
	return rmdir(dir);
}

char *tu_write(const char *dir, const char *name, const char *text)
{
	char *p = lm_xasprintf("%s/%s", dir, name);
	char *d = lm_dirname(p);
	lm_error e;
	if (lm_mkdirs(d, &e) != 0)
		abort();
	free(d);
	FILE *f = fopen(p, "wb");
	if (!f)
		abort();
	fwrite(text, 1, strlen(text), f);
	fclose(f);
	return p;
}

char *tu_read(const char *path)
{
	char *buf;
	size_t n;
	lm_error e;
	if (lm_read_file(path, &buf, &n, &e) != 0)
		return NULL;
	return buf;
}

static char *slurp_fd(int fd)
{
	lm_buf b = LM_BUF_INIT;
	char tmp[4096];
	ssize_t k;
	while ((k = read(fd, tmp, sizeof tmp)) > 0)
		lm_buf_put(&b, tmp, (size_t)k);
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

tu_run tu_lncsimv(const char *cwd, const char *const *argv)
{
	return tu_lncsimo(NULL, cwd, argv);
}

int tu_can_drop_root(void)
{
	return geteuid() != 0 || getpwnam("nobody") != NULL;
}

tu_run tu_lncsimo(const tu_opts *o, const char *cwd, const char *const *argv)
{
	tu_proc p;
	tu_start(o, cwd, argv, &p);
	return tu_finish(&p);
}

void tu_start(const tu_opts *o, const char *cwd, const char *const *argv,
	      tu_proc *p)
{
	const char *bin = getenv("LNCSIM");
	char *binpath = bin && *bin ? lm_xstrdup(bin) : realpath("../lncsim", NULL);
	if (!binpath)
		binpath = realpath("./lncsim", NULL);
	if (!binpath)
		binpath = lm_xstrdup("lncsim");
	char outt[] = "/tmp/lncsim-tu-out-XXXXXX", errt[] = "/tmp/lncsim-tu-err-XXXXXX";
	int ofd = mkstemp(outt), efd = mkstemp(errt);
	unlink(outt);
	unlink(errt);
	int n = 0;
	while (argv[n])
		n++;
	const char **av = lm_xcalloc((size_t)n + 2, sizeof *av);
	const char *prog = o && o->program ? o->program : NULL;
	av[0] = binpath;
	for (int i = 0; i < n; i++)
		av[i + 1] = argv[i];
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY), dropped = 0;
		dup2(nul, 0);
		dup2(ofd, 1);
		dup2(efd, 2);
		if (o && o->fsize_limit > 0) {
			/* writes past the limit fail (EFBIG), as on a full disk;
			** the ignored SIGXFSZ stays ignored across exec */
			struct rlimit rl = { (rlim_t)o->fsize_limit,
					     (rlim_t)o->fsize_limit };
			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
				_exit(125);
		}
		if (o && o->unprivileged && geteuid() == 0) {
			/* root writes any file whatever its mode: be nobody */
			struct passwd *pw = getpwnam("nobody");
			if (!pw || setgroups(0, NULL) != 0 ||
			    setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
				_exit(125);
			dropped = 1;
		}
		if (cwd && chdir(cwd) != 0)
			/* unprivileged, a private build tree is out of reach:
			** the caller skips, as when nobody cannot run lncsim */
			_exit(dropped ? 125 : 126);
		if (o && o->timeout_s > 0) {
			/* the alarm survives exec */
			signal(SIGALRM, SIG_DFL);
			alarm(o->timeout_s);
		}
		if (prog) {
			execvp(prog, (char *const *)argv);
			_exit(127);
		}
		if (access(binpath, X_OK) != 0)
			_exit(125);
		execv(binpath, (char *const *)av);
		_exit(127);
	}
	free(av);
	free(binpath);
	p->pid = pid;
	p->out_fd = ofd;
	p->err_fd = efd;
}

tu_run tu_finish(tu_proc *p)
{
	tu_run r = {-1, NULL, NULL};
	int st = 0;
	while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
		;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	lseek(p->out_fd, 0, SEEK_SET);
	lseek(p->err_fd, 0, SEEK_SET);
	r.out = slurp_fd(p->out_fd);
	r.err = slurp_fd(p->err_fd);
	close(p->out_fd);
	close(p->err_fd);
	p->pid = -1;
	return r;
}

int tu_children(int pid, int *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char *p = lm_xasprintf("/proc/%s/stat", e->d_name);
		char t[1024];
		FILE *f = fopen(p, "r");
		free(p);
		/* (a file of size 0 to stat: read as a stream) */
		if (!f)
			continue;
		size_t k = fread(t, 1, sizeof t - 1, f);
		fclose(f);
		t[k] = 0;
		/* pid (comm) state ppid ...: comm may hold spaces */
		const char *q = strrchr(t, ')');
		char state;
		int ppid;
		if (q && sscanf(q + 1, " %c %d", &state, &ppid) == 2 &&
		    ppid == pid)
			out[n++] = atoi(e->d_name);
	}
	closedir(d);
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *tu_campaign_dump(const char *path, const char *campaign)
{
	static const char *const q[] = {
		"SELECT 'run|' || c.seed || '|' || r.command || '|' || r.module "
		"|| '|' || r.arch || '|' || r.cores || '|' || r.status || '|' || "
		"r.message || '|' || r.tool_version || '|' || c.gen_options || "
		"'|' || c.kind || '|' || c.signature FROM cases c JOIN runs r ON "
		"r.id = c.run_id WHERE c.campaign = ?1",
		"SELECT 'exec|' || c.seed || '|' || e.mode || '|' || "
		"e.sim_time_ps || '|' || e.instructions FROM executions e JOIN "
		"cases c ON c.run_id = e.run_id WHERE c.campaign = ?1",
		"SELECT 'core|' || c.seed || '|' || e.mode || '|' || s.core || "
		"'|' || s.busy_pe_ps || '|' || s.busy_act_ps || '|' || "
		"s.busy_dve_ps || '|' || s.busy_pool_ps || '|' || s.busy_sp_ps "
		"|| '|' || s.instructions || '|' || s.matmuls || '|' || s.macs "
		"|| '|' || quote(s.pe_util) || '|' || quote(s.mac_util) || '|' "
		"|| s.dma_bytes || '|' || s.dma_transfers || '|' || "
		"s.barrier_wait_ps || '|' || s.semaphore_wait_ps || '|' || "
		"s.end_ps FROM core_stats s JOIN executions e ON e.id = "
		"s.execution_id JOIN cases c ON c.run_id = e.run_id "
		"WHERE c.campaign = ?1",
		"SELECT 'mm|' || c.seed || '|' || e.mode || '|' || (x.id - "
		"(SELECT min(id) FROM matmuls y WHERE y.execution_id = "
		"x.execution_id)) || '|' || x.core || '|' || x.name || '|' || "
		"x.k || 'x' || x.m || 'x' || x.n || '|' || x.dtype || '|' || "
		"x.start_ps || '|' || x.duration_ps || '|' || quote(x.array_util) "
		"FROM matmuls x JOIN executions e ON e.id = x.execution_id JOIN "
		"cases c ON c.run_id = e.run_id WHERE c.campaign = ?1",
		"SELECT 'tensor|' || c.seed || '|' || t.name || '|' || t.equal || "
		"'|' || t.mismatches || '|' || t.first_index || '|' || "
		"quote(t.max_abs_diff) FROM tensors t JOIN cases c ON "
		"c.run_id = t.run_id WHERE c.campaign = ?1",
	};
	sqlite3 *h = NULL;
	lm_buf b = LM_BUF_INIT;
	char **lines = NULL;
	int n = 0, cap = 0;
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return lm_xasprintf("cannot open %s\n", path);
	}
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(h, q[i], -1, &st, NULL) != SQLITE_OK) {
			lm_buf_printf(&b, "error: %s\n", sqlite3_errmsg(h));
			continue;
		}
		sqlite3_bind_text(st, 1, campaign, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW) {
			const unsigned char *t = sqlite3_column_text(st, 0);
			lm_grow(&lines, &cap, n + 1, sizeof *lines);
			lines[n++] = lm_xstrdup(t ? (const char *)t : "(null)");
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	qsort(lines, (size_t)n, sizeof *lines, cmp_str);
	for (int i = 0; i < n; i++) {
		lm_buf_printf(&b, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

tu_run tu_lncsim(const char *cwd, const char *arg0, ...)
{
	const char *argv[64];
	int n = 0;
	va_list ap;
	va_start(ap, arg0);
	for (const char *a = arg0; a && n < 63; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return tu_lncsimv(cwd, argv);
}

void tu_run_free(tu_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* What ./lncsim.db (or its WAL) looks like, to notice a suite writing it. */
typedef struct db_seen {
	int exists;
	struct stat st;
} db_seen;

static void look_db(db_seen *s, const char *name)
{
	memset(s, 0, sizeof *s);
	s->exists = stat(name, &s->st) == 0;
}

static int db_changed(const db_seen *a, const db_seen *b)
{
	if (a->exists != b->exists)
		return 1;
	return a->exists &&
	       (a->st.st_ino != b->st.st_ino || a->st.st_size != b->st.st_size ||
		a->st.st_mtim.tv_sec != b->st.st_mtim.tv_sec ||
		a->st.st_mtim.tv_nsec != b->st.st_mtim.tv_nsec);
}

int tu_main(Suite *s)
{
	/* Every lncsim the cases start logs into the scratch directory unless
	** it says --db or --no-db: never into a database of the user's, be
	** it ./lncsim.db or one named by their own LNCSIM_DB. */
	char *db = lm_xasprintf("%s/lncsim.db", scratch());
	setenv("LNCSIM_DB", db, 1);
	free(db);
	static const char *const user_db[] = { "lncsim.db", "lncsim.db-wal" };
	db_seen before[2], after[2];
	for (int i = 0; i < 2; i++)
		look_db(&before[i], user_db[i]);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		look_db(&after[i], user_db[i]);
		if (db_changed(&before[i], &after[i])) {
			/* the TAP driver counts this as an error of the suite */
			printf("Bail out! the suite wrote ./%s (tests pass --db "
			       "or --no-db, or run lncsim in a tu_tmpdir)\n",
			       user_db[i]);
			failed++;
			break;
		}
	}
	if (!failed) {
		if (tu_rm_tree(scratch_root) != 0) {
			printf("Bail out! cannot remove %s: %s\n", scratch_root,
			       strerror(errno));
			failed++;
		}
	} else
		fprintf(stderr, "# scratch directory kept: %s\n", scratch_root);
	fflush(stdout);
	free(scratch_root);
	scratch_root = NULL;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void tu_rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *p = lm_path_join(path, e->d_name);
			tu_rmtree(p);
			free(p);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

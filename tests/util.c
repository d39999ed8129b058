/*
** util.c -- the helpers of the check suites (testutil.h), one copy each.
*/
#include "common.h"
#include "testutil.h"
#include "build.h"
#include "klr.h"
#include "provision.h"
#include "verify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
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

/* ---- files ---------------------------------------------------------------- */

char *tu_write_bytes(const char *dir, const char *name, const void *b,
		     size_t n)
{
	char *p = lm_path_join(dir, name);
	FILE *fp = fopen(p, "wb");
	ck_assert(fp != NULL);
	ck_assert_uint_eq(fwrite(b, 1, n, fp), n);
	ck_assert_int_eq(fclose(fp), 0);
	return p;
}

char *tu_replace_all(const char *s, const char *a, const char *b)
{
	lm_buf o = LM_BUF_INIT;
	size_t na = strlen(a);
	const char *p;
	while ((p = strstr(s, a)) != NULL) {
		lm_buf_put(&o, s, (size_t)(p - s));
		lm_buf_puts(&o, b);
		s = p + na;
	}
	lm_buf_puts(&o, s);
	return lm_buf_detach(&o);
}

void tu_copy(const char *src, const char *dir, const char *name)
{
	char *data = NULL, *dst = lm_xasprintf("%s/%s", dir, name);
	size_t n;
	lm_error err;
	ck_assert_msg(lm_read_file(src, &data, &n, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(lm_write_file_atomic(dst, data, n, &err), 0);
	free(data);
	free(dst);
}

/* ---- modules -------------------------------------------------------------- */

char *tu_fixture(const char *dir, const char *name)
{
	char *r = lm_xasprintf("tests/fixtures/%s/%s", dir, name);
	char *p = tu_srcpath(r);
	free(r);
	return p;
}

void tu_copy_fixture(const char *dir, const char *name, const char *to)
{
	char *p = tu_fixture(dir, name);
	tu_copy(p, to, name);
	free(p);
}

lm_module *tu_load(const char *path)
{
	lm_module *m = NULL;
	lm_error err;
	ck_assert_msg(lm_module_load(&m, path, &err) == 0, "%s", err.msg);
	return m;
}

lm_module *tu_parse(const char *text, lm_error *err)
{
	lm_module *m = NULL;
	lm_module_parse(&m, text, strlen(text), "t.json", err);
	return m;
}

lm_module *tu_parse_ok(const char *text)
{
	lm_error err;
	lm_module *m = tu_parse(text, &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	return m;
}

lm_module *tu_fixture_subst(const char *dir, const char *name,
			    const char *const *subs)
{
	char *p = tu_fixture(dir, name);
	char *text = tu_read(p);
	lm_module *m;
	ck_assert_msg(text != NULL, "%s: cannot be read", p);
	for (int i = 0; subs && subs[i]; i += 2) {
		char *t;
		ck_assert_msg(strstr(text, subs[i]) != NULL, "%s: no '%s'",
			      name, subs[i]);
		t = tu_replace_all(text, subs[i], subs[i + 1]);
		free(text);
		text = t;
	}
	m = tu_parse_ok(text);
	free(text);
	free(p);
	return m;
}

void tu_expect_fail(const char *text, const char *needle)
{
	lm_error err = {{0}, 0};
	lm_module *m = tu_parse(text, &err);
	const char *msg = err.msg;
	ck_assert_msg(m == NULL, "parse of <%s> should fail", text);
	ck_assert_contains(msg, needle);
	ck_assert_msg(strncmp(err.msg, "t.json: ", 8) == 0,
		      "message must start with the file: %s", err.msg);
}

int tu_count_op(const lm_module *m, lm_opcode op)
{
	int n = 0;
	for (int f = 0; f < m->n_functions; f++)
		for (int b = 0; b < m->functions[f].n_blocks; b++)
			for (int i = 0; i < m->functions[f].blocks[b].n_insts; i++)
				n += m->functions[f].blocks[b].insts[i].op == op;
	return n;
}

void tu_pack_klr(const char *name, const char *dir, const char *version)
{
	char *rel = lm_xasprintf("%s.json", name);
	char *p = tu_fixture("klr", rel), *t = tu_read(p);
	char *out = lm_xasprintf("%s/%s.klr", dir, name);
	lp_klr_file f;
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	ck_assert(t != NULL);
	ck_assert_msg(lp_klr_from_json(&f, t, strlen(t), p, &err) == 0, "%s",
		      err.msg);
	if (version)
		sscanf(version, "%llu.%llu.%llu",
		       (unsigned long long *)&f.version[0],
		       (unsigned long long *)&f.version[1],
		       (unsigned long long *)&f.version[2]);
	ck_assert_int_eq(lp_klr_encode_file(&f, &b, &err), 0);
	ck_assert_int_eq(lm_write_file_atomic(out, b.ptr, b.size, &err), 0);
	lm_buf_free(&b);
	lp_klr_file_free(&f);
	free(rel);
	free(p);
	free(t);
	free(out);
}

void tu_check_packed(const char *json_rel, const char *klr_rel)
{
	char *jf = tu_srcpath(json_rel), *kf = tu_srcpath(klr_rel);
	char *json = tu_read(jf);
	FILE *f;
	lp_klr_file kl;
	lm_buf b = LM_BUF_INIT;
	lm_error err;
	char *disk;
	long n;
	ck_assert_msg(json != NULL, "%s missing", jf);
	ck_assert_msg(lp_klr_from_json(&kl, json, strlen(json), jf, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(lp_klr_encode_file(&kl, &b, &err), 0);
	f = fopen(kf, "rb");
	ck_assert_msg(f != NULL, "%s missing", kf);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	disk = lm_xmalloc((size_t)n + 1);
	ck_assert_int_eq(fread(disk, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	ck_assert_msg((size_t)n == b.size && !memcmp(disk, b.ptr, b.size),
		      "%s is not `lncsim klr pack` of %s (%ld bytes, packed "
		      "%zu)", kf, jf, n, b.size);
	free(disk);
	lm_buf_free(&b);
	lp_klr_file_free(&kl);
	free(json);
	free(jf);
	free(kf);
}

/* ---- the simulator suites' module bench ---------------------------------- */

/* Stop the test when the builder failed (what is the builder's message). */
static void tb_check(tb *t, const char *what)
{
	if (lm_b_status(t->b))
		ck_abort_msg("%s: %s", what, t->err.msg);
}

/* A builder holding the frame above. */
void tb_init(tb *t)
{
	memset(t, 0, sizeof *t);
	t->b = lm_b_new("gen3", 2, &t->err);
	lm_b_name(t->b, "t");
	for (int i = 0; i < 4; i++) {
		char s[4] = { 's', (char)('0' + i), 0, 0 };
		lm_b_semaphore(t->b, s, 0);
	}
	lm_b_queue(t->b, "q0");
	lm_b_qinstance(t->b, "q0", "q0", "s0");
	lm_b_queue(t->b, "q1");
	lm_b_qinstance(t->b, "q1", "q1a", "s1");
	lm_b_qinstance(t->b, "q1", "q1b", "s2");
	lm_b_function(t->b, "sg0000");
	lm_b_block(t->b, "b");
	tb_check(t, "tb_init");
}

void tb_free(tb *t)
{
	lm_b_free(t->b);
	t->b = NULL;
}

/* A further function (kind nki when nki) with one block b; what follows
** goes into it. */
void tb_function(tb *t, const char *name, int nki)
{
	lm_function *f = lm_b_function(t->b, name);
	if (f && nki)
		lm_b_set_kind(f, LM_FK_NKI);
	lm_b_block(t->b, "b");
	tb_check(t, name);
}

int tb_esize(const char *dt)
{
	return lm_dtype_size(lm_dtype_parse(dt));
}

/* An allocation [rows, cols] of dtype dt at addr of memory type mt. */
void tb_alloc(tb *t, const char *name, lm_tensorkind kind, const char *dt,
	      int rows, int cols, lm_memtype mt, int64_t addr)
{
	int64_t shape[2] = { rows, cols };
	int64_t dims[2] = { rows, (int64_t)cols * tb_esize(dt) };
	lm_alloc *a = lm_b_alloc(t->b, name, kind, lm_dtype_parse(dt), shape,
				 2);
	lm_b_memloc(t->b, a, mt, addr, dims, 2, 0);
	tb_check(t, name);
}

/* A DRAM allocation [rows, cols] of kind (ExternalInput, Internal, ...). */
void tb_dram(tb *t, const char *name, const char *kind, const char *dt,
	     int rows, int cols)
{
	tb_alloc(t, name, lm_tensorkind_parse(kind), dt, rows, cols,
		 LM_MT_DRAM, t->dram_addr);
	t->dram_addr += (int64_t)rows * cols * tb_esize(dt);
}

/* An SB tensor [parts, free] at the next free SB offset. */
void tb_sb(tb *t, const char *name, const char *dt, int parts, int free)
{
	tb_alloc(t, name, LM_TK_INTERNAL, dt, parts, free, LM_MT_SB,
		 t->sb_addr);
	t->sb_addr += (int64_t)free * tb_esize(dt);
}

/* A float32 PSUM tensor [parts, free] in bank. */
void tb_psum(tb *t, const char *name, int parts, int free, int bank)
{
	tb_alloc(t, name, LM_TK_INTERNAL, "float32", parts, free, LM_MT_PSUM,
		 (int64_t)bank * LM_PSUM_BANK_BYTES);
}

/* An allocation in the wire form (keys the model carries as they are). */
void tb_alloc_raw(tb *t, const char *json)
{
	if (!lm_b_alloc_json(t->b, json))
		ck_abort_msg("tb_alloc_raw: %s\n%s", t->err.msg, json);
}

/* One instruction in the wire form (a JSON object, printf-style). */
void tb_inst(tb *t, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (!lm_b_inst_json(t->b, buf))
		ck_abort_msg("tb_inst: %s\n%s", t->err.msg, buf);
}

/*
** An SB/PSUM operand [parts, free] from element off (rotating buffers),
** whose first pair steps pe elements, one partition of its memory location
** (APS; AP: a location of free elements per partition).
*/
const char *APS(const char *name, const char *dt, int parts, int free,
		int off, int pe)
{
	static char bufs[16][400];
	static int k;
	char *b = bufs[k++ % 16];
	snprintf(b, 400, "{\"kind\":\"physical_ap\",\"memsetref\":\"%s\","
		 "\"memref\":\"%s\",\"offset\":%d,\"ap\":[[%d,%d],[1,%d]],"
		 "\"dtype\":\"%s\"}", name, name, off, pe, parts, free, dt);
	return b;
}

const char *AP(const char *name, const char *dt, int parts, int free,
	       int off)
{
	return APS(name, dt, parts, free, off, free);
}

/* AP's operand [parts, free] from element 0, made in the IR. */
void tb_op(tb *t, lm_inst *in, int side, const char *name, const char *dt,
	   int parts, int free)
{
	lm_appair ap[2] = { { free, parts }, { 1, free } };
	lm_b_ap(t->b, in, side, name, lm_dtype_parse(dt), 0, 0, ap, 2);
}

/* The module's wire text as core core (caller frees); the builder keeps
** the module. */
char *tb_json(tb *t, int core)
{
	char *text;
	size_t n;
	lm_error err;
	lm_b_core_id(t->b, core);
	tb_check(t, "tb_json");
	ck_assert_int_eq(lm_module_to_json(lm_b_module(t->b), 0, &text, &n,
					   &err), 0);
	return text;
}

/* The module as core core, file tb-core<core>.json, verified (asserting
** both); the builder is done (tb_free still may be called). */
lm_module *tb_module(tb *t, int core)
{
	lm_module *m = NULL;
	char path[64];
	snprintf(path, sizeof path, "tb-core%d.json", core);
	lm_b_path(t->b, path);
	lm_b_core_id(t->b, core);
	if (lm_b_finish(t->b, &m) != 0)
		ck_abort_msg("build: %s", t->err.msg);
	t->b = NULL;
	if (lm_verify(m, NULL, &t->err) != 0)
		ck_abort_msg("verify: %s", t->err.msg);
	return m;
}

void tb_io(tb *t, const char *dt_in, const char *dt_out, int P, int F)
{
	lm_inst *in;
	tb_dram(t, "x", "ExternalInput", dt_in, P, F);
	tb_dram(t, "y", "ExternalOutput", dt_out, P, F);
	tb_sb(t, "xs", dt_in, P, F);
	tb_sb(t, "ys", dt_out, P, F);
	in = lm_b_inst(t->b, LM_OP_DMACOPY, LM_ENG_SP, "ld");
	tb_op(t, in, LM_B_IN, "x", dt_in, P, F);
	tb_op(t, in, LM_B_OUT, "xs", dt_in, P, F);
	lm_b_dma_queue(t->b, in, "q0");
	tb_check(t, "tb_io");
}

void tb_io_end(tb *t, const char *dt_out, int P, int F, const char *dep)
{
	lm_inst *in = lm_b_inst(t->b, LM_OP_DMACOPY, LM_ENG_SP, "st");
	tb_op(t, in, LM_B_IN, "ys", dt_out, P, F);
	tb_op(t, in, LM_B_OUT, "y", dt_out, P, F);
	lm_b_dma_queue(t->b, in, "q0");
	if (in)
		lm_inst_add_dep(in, 0, dep, LM_EDGE_FLOW);
	tb_check(t, "tb_io_end");
}

int tb_run(lm_module **m, int n, const float *x, int P, int F,
	   const ls_options *o, ls_result *r, lm_error *err)
{
	ls_tensors in = {0, NULL};
	int64_t shape[2] = {P, F};
	int rc;
	if (x)
		ls_tensors_add(&in, "x", LM_DT_FLOAT32, shape, 2, x);
	rc = n == 1 ? ls_run(m[0], &in, o, r, err)
		    : ls_run_multi(m, n, &in, o, r, err);
	ls_tensors_free(&in);
	return rc;
}

int tb_run1(lm_module *m, const float *x, int P, int F, const ls_options *o,
	    ls_result *r, lm_error *err)
{
	return tb_run(&m, 1, x, P, F, o, r, err);
}

/* Output element i of tensor name as float32. */
float tb_out(const ls_result *r, const char *name, int64_t i)
{
	const ls_tensor *t = ls_tensors_find(&r->outputs, name);
	ck_assert_msg(t != NULL, "no output %s", name);
	ck_assert_msg(i >= 0 && i < t->count, "output %s has no element %lld",
		      name, (long long)i);
	return lm_load_elem(t->dtype, (const char *)t->data +
			    i * lm_dtype_size(t->dtype));
}

uint32_t tb_bits(float f)
{
	return lm_f32_bits(f);
}

/* Deterministic test data in [-2, 2). */
void tb_fill(float *v, int64_t n, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 1;
	for (int64_t i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		v[i] = (float)(int32_t)(s >> 8) / (float)(1 << 23) - 1.0f;
		v[i] *= 2.0f;
	}
}

int64_t tu_sql_int(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	sqlite3_busy_timeout(h, 10000);
	ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK,
		      "%s: %s", sql, sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

void tu_load_example(const char *rel, lm_module **m, int *n)
{
	char *dir = tu_srcpath(rel);
	char **paths = NULL;
	lm_error err;
	*n = 0;
	ck_assert_msg(lm_expand_module_arg(dir, &paths, n, &err) == 0, "%s",
		      err.msg);
	for (int i = 0; i < *n; i++) {
		ck_assert_msg(lm_module_load(&m[i], paths[i], &err) == 0, "%s",
			      err.msg);
		ck_assert_msg(lm_verify(m[i], NULL, &err) == 0, "%s", err.msg);
		free(paths[i]);
	}
	free(paths);
	free(dir);
}

/* ---- kernel lowering ------------------------------------------------------ */

lm_module *tu_lower_ok(const lm_module *m, int do_inline, lp_warnings *w)
{
	lm_module *out = NULL;
	lp_lower_opts o;
	lp_warnings mine = { 0, 0, NULL };
	lm_error err;
	memset(&o, 0, sizeof o);
	o.inline_kernels = do_inline;
	ck_assert_msg(lp_lower(&out, m, &o, w ? w : &mine, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(lm_verify(out, NULL, &err) == 0, "lowered module does "
		      "not verify: %s", err.msg);
	lp_warnings_free(&mine);
	return out;
}

void tu_same_outputs(const ls_tensors *a, const ls_tensors *b)
{
	ck_assert_int_eq(a->n, b->n);
	ck_assert_int_gt(a->n, 0);
	for (int i = 0; i < a->n; i++) {
		const ls_tensor *x = &a->t[i];
		const ls_tensor *y = ls_tensors_find(b, x->name);
		ck_assert_msg(y != NULL, "output %s missing", x->name);
		ck_assert_int_eq(x->dtype, y->dtype);
		ck_assert_int_eq(x->count, y->count);
		ck_assert_msg(memcmp(x->data, y->data, (size_t)x->count *
				     (size_t)lm_dtype_size(x->dtype)) == 0,
			      "output %s differs", x->name);
	}
}

char *tu_browser_env(const char *home)
{
	return lm_xasprintf("HOME='%s' XDG_CONFIG_HOME='%s/.config' "
			    "XDG_CACHE_HOME='%s/.cache' "
			    "XDG_DATA_HOME='%s/.local/share'", home, home, home,
			    home);
}

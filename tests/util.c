/*
** util.c -- helpers shared by the check suites.
*/
#include "common.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

char *tu_tmpdir(const char *tag)
{
	char *t = lm_xasprintf("tmp-%s-%ld-XXXXXX", tag, (long)getpid());
	if (!mkdtemp(t)) {
		perror("mkdtemp");
		abort();
	}
	char *abs = realpath(t, NULL);
	free(t);
	return abs;
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
	tu_run r = {-1, NULL, NULL};
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
	av[0] = binpath;
	for (int i = 0; i < n; i++)
		av[i + 1] = argv[i];
	pid_t pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(ofd, 1);
		dup2(efd, 2);
		if (cwd && chdir(cwd) != 0)
			_exit(126);
		execv(binpath, (char *const *)av);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	lseek(ofd, 0, SEEK_SET);
	lseek(efd, 0, SEEK_SET);
	r.out = slurp_fd(ofd);
	r.err = slurp_fd(efd);
	close(ofd);
	close(efd);
	free(av);
	free(binpath);
	return r;
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

int tu_main(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
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

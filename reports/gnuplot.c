/*
** gnuplot.c -- finding gnuplot and running `gnuplot -c SCRIPT ARGS...`
** with its exit status checked and its stderr kept for the error message.
*/
#include "common.h"
#include "report_int.h"

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

#ifndef GNUPLOT_PATH
#define GNUPLOT_PATH "gnuplot"
#endif

/* 1 if path is an executable regular file. */
static int is_exec(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	       access(path, X_OK) == 0;
}

/*
** Resolve a program name: a name with a slash is taken as it is, else it
** is searched on PATH. Returns a malloc'd path or NULL.
*/
static char *resolve(const char *name)
{
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return is_exec(name) ? lm_xstrdup(name) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		char *cand = lm_xasprintf("%.*s/%s", (int)len,
					  len ? path : ".", name);
		if (len == 0) {
			free(cand);
			cand = lm_xasprintf("./%s", name);
		}
		if (is_exec(cand))
			return cand;
		free(cand);
		path += len + (colon ? 1 : 0);
	}
	return NULL;
}

/*
** Find gnuplot (report.h).
*/
int lr_find_gnuplot(const char *override, char **path, lm_error *err)
{
	*path = NULL;
	const char *want = override;
	if (!want || !*want)
		want = getenv(LR_GNUPLOT_ENV);
	if (want && *want) {
		if ((*path = resolve(want)))
			return 0;
		return lm_err(err, "", "report", "gnuplot not found at '%s' "
			      "(from %s): install gnuplot-nox or fix the path",
			      want, override && *override ? "--gnuplot"
							   : LR_GNUPLOT_ENV);
	}
	if ((*path = resolve(GNUPLOT_PATH)) || (*path = resolve("gnuplot")))
		return 0;
	return lm_err(err, "", "report", "gnuplot not found (looked for '%s' "
		      "and on PATH): install gnuplot-nox, or set %s",
		      GNUPLOT_PATH, LR_GNUPLOT_ENV);
}

/*
** Run gnuplot in dir: `gnuplot -c args[0] args[1] ...` (args NULL
** terminated). Fails with gnuplot's stderr in the message when the exit
** status is not 0.
*/
int lr_run_gnuplot(const char *gnuplot, const char *dir,
		   const char *const *args, lm_error *err)
{
	int n = 0;
	while (args[n])
		n++;
	const char **av = lm_xcalloc((size_t)n + 3, sizeof *av);
	av[0] = gnuplot;
	av[1] = "-c";
	for (int i = 0; i < n; i++)
		av[i + 2] = args[i];
	int fds[2];
	if (pipe(fds) != 0) {
		free(av);
		return lm_errc(err, LM_EINTERNAL, "", "report",
			       "pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		free(av);
		return lm_errc(err, LM_EINTERNAL, "", "report",
			       "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (chdir(dir) != 0)
			_exit(126);
		execv(gnuplot, (char *const *)av);
		_exit(127);
	}
	free(av);
	close(fds[1]);
	lm_buf msg = LM_BUF_INIT;
	char tmp[1024];
	ssize_t k;
	while ((k = read(fds[0], tmp, sizeof tmp)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (msg.size < 4096)
			lm_buf_put(&msg, tmp, (size_t)k);
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* the message: gnuplot's stderr, trimmed, on one line */
		char *s = msg.ptr ? msg.ptr : "";
		while (*s == '\n' || *s == ' ')
			s++;
		for (char *p = s; *p; p++)
			if (*p == '\n')
				*p = ' ';
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			rc = lm_err(err, "", "report", "cannot execute %s",
				    gnuplot);
		else if (WIFEXITED(status))
			rc = lm_errc(err, LM_EINTERNAL, args[0], "gnuplot",
				     "exit status %d: %.600s",
				     WEXITSTATUS(status), s);
		else
			rc = lm_errc(err, LM_EINTERNAL, args[0], "gnuplot",
				     "killed by signal %d", WTERMSIG(status));
	}
	lm_buf_free(&msg);
	return rc;
}

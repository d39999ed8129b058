/*
** testutil.h -- helpers shared by the check suites.
*/
#ifndef LNCSIM_TESTUTIL_H
#define LNCSIM_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include "common.h"

/* $srcdir-relative path (tests run from the build dir); caller frees. */
char *tu_srcpath(const char *rel);
/* Path to the shared/ fixtures beside the source tree, or NULL if absent. */
char *tu_sharedpath(const char *rel);
/*
** A fresh empty directory inside the suite's scratch directory
** (./tmp-SUITE-PID-XXXXXX in the build tree); caller frees the string.
** tu_main removes the scratch directory when the suite passed and keeps it
** when a case failed; it also points LNCSIM_DB into it.
*/
char *tu_tmpdir(const char *tag);
/* Remove a directory tree without following symbolic links; 0 or -1. */
int tu_rm_tree(const char *dir);
/* Write text to dir/name (creating dirs); returns the malloc'd path. */
char *tu_write(const char *dir, const char *name, const char *text);
/* Remove path and, for a directory, everything below it (no symlink is
** followed). */
void tu_rmtree(const char *path);
/* Read a whole file into a malloc'd NUL-terminated string (NULL if missing). */
char *tu_read(const char *path);

/* Result of running the lncsim binary. */
typedef struct tu_run {
	int status;  /* exit status, or 128+signal */
	char *out;   /* stdout */
	char *err;   /* stderr */
} tu_run;

/*
** Run `lncsim ARGS...` (NULL-terminated argv after the program name) with
** cwd (NULL: current). The binary is $LNCSIM or ../lncsim.
*/
tu_run tu_lncsim(const char *cwd, const char *arg0, ...);
tu_run tu_lncsimv(const char *cwd, const char *const *argv);

/* How tu_lncsimo runs lncsim. */
typedef struct tu_opts {
	int unprivileged;      /* as user nobody when root (file modes count:
				  root writes read-only files) */
	long long fsize_limit; /* > 0: RLIMIT_FSIZE in bytes, SIGXFSZ ignored:
				  writes past it fail as on a full disk */
	unsigned timeout_s;    /* > 0: SIGALRM after that many seconds (a
				  hung run ends with status 128+14) */
	const char *program;   /* NULL: lncsim; else this program (found in
				  $PATH) runs argv, argv[0] its name */
} tu_opts;
#define TU_OPTS_INIT { 0, 0, 0, NULL }
/* tu_lncsimv with options; status 125 when they cannot be applied (the
** caller skips). */
tu_run tu_lncsimo(const tu_opts *o, const char *cwd, const char *const *argv);

/* A command started and not waited for yet (tu_start, tu_finish). */
typedef struct tu_proc {
	int pid;
	int out_fd, err_fd;
} tu_proc;
/* Start what tu_lncsimo runs, without waiting: p->pid its process. */
void tu_start(const tu_opts *o, const char *cwd, const char *const *argv,
	      tu_proc *p);
/* Wait for it; its status and output (as tu_lncsimo gives them). */
tu_run tu_finish(tu_proc *p);
/* The pids whose parent is pid (from /proc), into out (at most max);
** how many. */
int tu_children(int pid, int *out, int max);

/*
** The fuzz cases of campaign in the database at path as sorted text
** lines, everything a case's run stores but what differs from run to
** run of the same seed (ids, uuids, times, the campaign's name): the
** runs row, the case row, executions, core stats, matmuls, tensors.
** Caller frees.
*/
char *tu_campaign_dump(const char *path, const char *campaign);
/* Whether tu_opts.unprivileged can work here. */
int tu_can_drop_root(void);
void tu_run_free(tu_run *r);

/*
** Run a suite in TAP mode and return the process exit status. LNCSIM_DB
** is set to a file in the scratch directory for the whole suite; a suite
** that changes ./lncsim.db fails ("Bail out!"), a passing suite leaves
** nothing behind.
*/
int tu_main(Suite *s);

#define ck_assert_contains(hay, needle) \
	ck_assert_msg((hay) != NULL && strstr((hay), (needle)) != NULL, \
		      "expected \"%s\" in \"%s\"", (needle), (hay) ? (hay) : "(null)")

#endif

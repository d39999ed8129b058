/*
** test_hygiene.c -- the rules every check suite keeps: each test case has
** a timeout sized for the sanitizer build on a busy machine, a passing
** suite leaves no scratch directory behind, and no suite writes the
** user's ./lncsim.db. And the rules the libraries keep: an #include never
** crosses the layering (docs/build.md), and within linker/ and
** linker/provision/ calls between files run one way (their local.mk).
** And the rule every file keeps: documentation and comments speak of
** the project only.
**
** The scratch and database rules are tested on this program itself: run
** with --inner MODE it is a small suite of its own (MODE pass, fail or
** writes-db), started from a fresh directory and looked at afterwards.
*/
#include "common.h"
#include "testutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- every tcase has a timeout ----------------------------------------- */

/*
** Each test case a tests/test_*.c file creates (tcase_create into a
** TCase pointer) needs a tcase_set_timeout on that pointer in the file: check's default of 4 s is
** too short for the sanitizer build on a loaded machine.
*/
START_TEST(test_every_tcase_has_timeout)
{
	char *dir = tu_srcpath("tests");
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "%s", dir);
	int files = 0, cases = 0;
	lm_buf missing = LM_BUF_INIT;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, "test_", 5) || n < 3 ||
		    strcmp(e->d_name + n - 2, ".c"))
			continue;
		char *p = lm_path_join(dir, e->d_name);
		char *text = tu_read(p);
		ck_assert_msg(text != NULL, "%s", p);
		files++;
		/* every TCase pointer assigned from tcase_create */
		for (const char *q = text; (q = strstr(q, "TCase *")); q++) {
			const char *beg = q + 7, *end = beg;
			while (*end == '_' || (*end >= 'a' && *end <= 'z') ||
			       (*end >= 'A' && *end <= 'Z') ||
			       (*end >= '0' && *end <= '9'))
				end++;
			if (end == beg || strncmp(end, " = tcase_create(", 16))
				continue;
			char *want = lm_xasprintf("tcase_set_timeout(%.*s,",
						  (int)(end - beg), beg);
			cases++;
			if (!strstr(text, want))
				lm_buf_printf(&missing, " %s:%.*s", e->d_name,
					      (int)(end - beg), beg);
			free(want);
		}
		free(text);
		free(p);
	}
	closedir(d);
	ck_assert_int_gt(files, 10);
	ck_assert_int_gt(cases, files - 1);
	ck_assert_msg(missing.size == 0, "test cases without "
		      "tcase_set_timeout:%s", lm_buf_cstr(&missing));
	lm_buf_free(&missing);
	free(dir);
}
END_TEST

/* ---- the libraries keep the layering ---------------------------------- */

/*
** What each source directory may include besides its own headers: a
** directory (its public headers) or one header of it ("sim/sim.h"). A
** private header (*_int.h) is for its own directory only. tests/ and
** bench/ may use everything and are not looked at. The build enforces the
** same through each library's include path (docs/build.md); this case
** names the crossing file before anyone builds.
*/
#define MAY_MAX 7
static const struct layer {
	const char *dir;
	const char *may[MAY_MAX];
} layers[] = {
	{ "model", { NULL } },
	{ "linker", { "model", NULL } },
	{ "linker/provision", { "model", NULL } },
	{ "sim", { "model", NULL } },
	{ "db", { "model", "sim/sim.h", NULL } },
	{ "reports", { "model", "db", "sim/sim.h", NULL } },
	{ "cli", { "model", "linker", "linker/provision", "sim", "db",
		   "reports", NULL } },
};
#define NLAYERS (sizeof layers / sizeof layers[0])

/* The layer directory holding header `name`, or NULL. */
static const char *header_dir(const char *name)
{
	for (size_t i = 0; i < NLAYERS; i++) {
		char *rel = lm_xasprintf("%s/%s", layers[i].dir, name);
		char *p = tu_srcpath(rel);
		int found = access(p, F_OK) == 0;
		free(p);
		free(rel);
		if (found)
			return layers[i].dir;
	}
	return NULL;
}

/* Why `from` may not include `inc` ("dir/name"), or NULL when it may. */
static const char *include_refused(const struct layer *from,
				   const char *dir, const char *name)
{
	if (!strcmp(dir, from->dir))
		return NULL;
	size_t n = strlen(name);
	if (n >= 6 && !strcmp(name + n - 6, "_int.h"))
		return "a private header of another directory";
	for (size_t i = 0; i < MAY_MAX && from->may[i]; i++) {
		const char *m = from->may[i], *slash = strrchr(m, '/');
		size_t len = strlen(m);
		int header = len > 2 && !strcmp(m + len - 2, ".h");
		if (!header && !strcmp(m, dir))
			return NULL;
		if (header && slash && (size_t)(slash - m) == strlen(dir) &&
		    !strncmp(m, dir, strlen(dir)) && !strcmp(slash + 1, name))
			return NULL;
	}
	return "a layer it may not use";
}

/* Every `#include "..."` of one file checked; crossings into bad. */
static int check_includes(const struct layer *from, const char *file,
			  const char *text, lm_buf *bad)
{
	int count = 0;
	for (const char *q = text; (q = strstr(q, "#include \"")); q++) {
		if (q != text && q[-1] != '\n')
			continue;
		const char *beg = q + 10, *end = strchr(beg, '"');
		const char *nl = strchr(beg, '\n');
		if (!end || (nl && nl < end))
			continue;
		char *inc = lm_xasprintf("%.*s", (int)(end - beg), beg);
		const char *slash = strrchr(inc, '/');
		char *dir = NULL;
		const char *name = inc, *why;
		count++;
		if (slash) {
			dir = lm_xasprintf("%.*s", (int)(slash - inc), inc);
			name = slash + 1;
			char *p = tu_srcpath(inc);
			if (access(p, F_OK))
				why = "a header no source directory has";
			else
				why = include_refused(from, dir, name);
			free(p);
		} else {
			const char *d = header_dir(inc);
			if (d)
				why = include_refused(from, d, name);
			else if (!strcmp(inc, "config.h"))
				why = NULL; /* made by configure */
			else
				why = "a header no library directory has";
			dir = lm_xstrdup(d ? d : "?");
		}
		if (why)
			lm_buf_printf(bad, " %s/%s includes %s/%s (%s);",
				      from->dir, file, dir, name, why);
		free(dir);
		free(inc);
	}
	return count;
}

START_TEST(test_includes_keep_the_layering)
{
	int files = 0, includes = 0;
	lm_buf bad = LM_BUF_INIT;
	for (size_t i = 0; i < NLAYERS; i++) {
		char *dir = tu_srcpath(layers[i].dir);
		DIR *d = opendir(dir);
		ck_assert_msg(d != NULL, "%s", dir);
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n < 3 || (strcmp(e->d_name + n - 2, ".c") &&
				      strcmp(e->d_name + n - 2, ".h")))
				continue;
			char *p = lm_path_join(dir, e->d_name);
			char *text = tu_read(p);
			ck_assert_msg(text != NULL, "%s", p);
			files++;
			includes += check_includes(&layers[i], e->d_name, text,
						   &bad);
			free(text);
			free(p);
		}
		closedir(d);
		free(dir);
	}
	ck_assert_int_gt(files, 50);
	ck_assert_int_gt(includes, files);
	ck_assert_msg(bad.size == 0, "includes crossing the layering:%s",
		      lm_buf_cstr(&bad));
	lm_buf_free(&bad);
}
END_TEST

/* ---- the files speak of the project only ----------------------------- */

/*
** Documentation and comments say what they mean in the project's own
** words: no path into material kept beside the tree (its reference
** formats and notes) and no name of a markdown page the repository does
** not have. Looked at: every text file under docs/, README.md, and every
** .c, .h and .def under the source directories, tests/ and bench/
** (hidden directories, test scratch directories tmp-* and symlinks are
** not followed; a file that vanishes meanwhile is passed). A .md name
** passes when docs/ has it, when it is README.md, or when lncsim writes
** it itself (own_md). The paths below are split in this file's text so
** that the file passes its own check.
*/
static const char *const outside_paths[] = {
	"format" "s/", "share" "d/", "../share" "d", "neuronx-cc-2.24" "/",
};
#define NOUTSIDE (sizeof outside_paths / sizeof outside_paths[0])

/* .md files lncsim writes itself: test_sim's new simulator key table. */
static const char *const own_md[] = { "simcheck-key-table.md" };

static const char *const spoken_dirs[] = {
	"model", "sim", "linker", "db", "reports", "cli", "tests", "bench",
};

struct spoken {
	lm_buf bad;	/* " FILE:LINE (what);" per offending line */
	int files;	/* files looked at */
	int md_names;	/* .md names checked */
};

/* Whether name ends in .c, .h or .def. */
static int is_source_name(const char *name)
{
	size_t n = strlen(name);
	return (n > 2 && (!strcmp(name + n - 2, ".c") ||
			  !strcmp(name + n - 2, ".h"))) ||
	       (n > 4 && !strcmp(name + n - 4, ".def"));
}

static int is_name_char(char c)
{
	return c == '-' || c == '_' || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Whether the .md file name (n bytes, ".md" included) is the project's. */
static int md_known(const char *name, size_t n)
{
	if (n == 9 && !strncmp(name, "README.md", 9))
		return 1;
	for (size_t i = 0; i < sizeof own_md / sizeof own_md[0]; i++)
		if (strlen(own_md[i]) == n && !strncmp(name, own_md[i], n))
			return 1;
	char *rel = lm_xasprintf("docs/%.*s", (int)n, name);
	char *p = tu_srcpath(rel);
	int found = access(p, F_OK) == 0;
	free(p);
	free(rel);
	return found;
}

/*
** A citation of the reference material by its own names instead of the
** project's docs: its specification by section ("SPEC" then a section
** number or a section sign) or one of its seed files (three digits, '_'
** and a hash, or the three digits and '_' then an ellipsis). Returns the
** cited text's start, or NULL. The words are split so that this file
** passes itself.
*/
static const char *cites_reference(const char *line)
{
	static const char spec[] = "SP" "EC", sect[] = "\xc2\xa7";
	for (const char *q = line; (q = strstr(q, spec)); q++) {
		const char *a = q + 4;
		if ((q > line && is_name_char(q[-1])) || is_name_char(*a))
			continue;
		while (*a == ' ')
			a++;
		if ((*a >= '0' && *a <= '9') || !strncmp(a, sect, 2) ||
		    (a[0] == '.' && a[1] == 'm' && a[2] == 'd'))
			return q;
	}
	for (const char *q = line; *q; q++) {
		if ((q > line && is_name_char(q[-1])) || !isdigit((unsigned char)q[0]) ||
		    !isdigit((unsigned char)q[1]) || !isdigit((unsigned char)q[2]) ||
		    q[3] != '_')
			continue;
		int hex = 0;
		while (isxdigit((unsigned char)q[4 + hex]))
			hex++;
		const char *ell = q + 4 + hex;
		if (hex >= 8 || (hex == 0 && (!strncmp(ell, "\xe2\x80\xa6", 3) ||
					      !strncmp(ell, "...", 3))))
			return q;
	}
	return NULL;
}

/*
** The first thing on one line (NUL terminated) that points outside the
** project, as "what" into *what (caller frees), or 0.
*/
static int line_points_outside(const char *line, struct spoken *sp,
			       char **what)
{
	/* a test reading an optional fixture from the copy beside the tree
	   (it skips when the copy is absent) names it at run time */
	if (strstr(line, "tu_" "sharedpath("))
		return 0;
	for (size_t i = 0; i < NOUTSIDE; i++)
		if (strstr(line, outside_paths[i])) {
			*what = lm_xstrdup(outside_paths[i]);
			return 1;
		}
	const char *cited = cites_reference(line);
	if (cited) {
		*what = lm_xasprintf("cites %.16s", cited);
		return 1;
	}
	for (const char *q = line; (q = strstr(q, ".md")); q++) {
		const char *beg = q;
		while (beg > line && is_name_char(beg[-1]))
			beg--;
		if (beg == q || is_name_char(q[3]))
			continue;
		sp->md_names++;
		if (!md_known(beg, (size_t)(q + 3 - beg))) {
			*what = lm_xasprintf("%.*s", (int)(q + 3 - beg), beg);
			return 1;
		}
	}
	return 0;
}

/* One file (rel to the source tree): its offending lines into sp->bad. */
static void check_spoken_file(const char *rel, struct spoken *sp)
{
	char *p, *text;
	/* the one place that finds that optional copy */
	if (!strcmp(rel, "tests/util.c") || !strcmp(rel, "tests/testutil.h"))
		return;
	p = tu_srcpath(rel);
	size_t len;
	lm_error e;
	if (lm_read_file(p, &text, &len, &e) != 0) {
		ck_assert_msg(access(p, F_OK) != 0, "%s", e.msg);
		free(p);
		return;
	}
	if (memchr(text, 0, len)) {	/* an image, not text */
		free(text);
		free(p);
		return;
	}
	sp->files++;
	int lineno = 1;
	for (char *line = text; *line; lineno++) {
		char *nl = strchr(line, '\n'), *what = NULL;
		if (nl)
			*nl = 0;
		if (line_points_outside(line, sp, &what))
			lm_buf_printf(&sp->bad, " %s:%d (%s);", rel, lineno,
				      what);
		free(what);
		if (!nl)
			break;
		line = nl + 1;
	}
	free(text);
	free(p);
}

/* Every file of directory rel, recursively; only sources unless all. */
static void check_spoken_dir(const char *rel, int all, struct spoken *sp)
{
	char *dir = tu_srcpath(rel);
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "%s", dir);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strncmp(e->d_name, "tmp-", 4))
			continue;
		char *sub = lm_xasprintf("%s/%s", rel, e->d_name);
		char *p = lm_path_join(dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) != 0)
			ck_assert_msg(errno == ENOENT, "%s: %s", p,
				      strerror(errno));
		else if (S_ISDIR(st.st_mode))
			check_spoken_dir(sub, all, sp);
		else if (S_ISREG(st.st_mode) &&
			 (all || is_source_name(e->d_name)))
			check_spoken_file(sub, sp);
		free(p);
		free(sub);
	}
	closedir(d);
	free(dir);
}

START_TEST(test_files_speak_of_the_project)
{
	struct spoken sp = { LM_BUF_INIT, 0, 0 };
	check_spoken_dir("docs", 1, &sp);
	check_spoken_file("README.md", &sp);
	for (size_t i = 0; i < sizeof spoken_dirs / sizeof spoken_dirs[0]; i++)
		check_spoken_dir(spoken_dirs[i], 0, &sp);
	ck_assert_int_gt(sp.files, 100);
	ck_assert_int_gt(sp.md_names, 50);
	ck_assert_msg(sp.bad.size == 0, "lines pointing outside the project "
		      "(restate what they say instead):%s",
		      lm_buf_cstr(&sp.bad));
	lm_buf_free(&sp.bad);
}
END_TEST

/* What a user reads first: the program's help texts, the same rule. */
START_TEST(test_help_speaks_of_the_project)
{
	static const char *const cmds[] = {
		NULL, "verify", "run", "gen", "diff", "fuzz", "report", "db",
		"link", "mmt", "lower", "klr",
	};
	struct spoken sp = { LM_BUF_INIT, 0, 0 };
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		tu_run r = cmds[i] ? tu_lncsim(NULL, cmds[i], "--help", NULL)
				   : tu_lncsim(NULL, "--help", NULL);
		ck_assert_int_eq(r.status, 0);
		int lineno = 1;
		for (char *line = r.out; *line; lineno++) {
			char *nl = strchr(line, '\n'), *what = NULL;
			if (nl)
				*nl = 0;
			if (line_points_outside(line, &sp, &what))
				lm_buf_printf(&sp.bad, " lncsim %s --help:%d (%s);",
					      cmds[i] ? cmds[i] : "", lineno, what);
			free(what);
			if (!nl)
				break;
			line = nl + 1;
		}
		tu_run_free(&r);
	}
	/* the help texts name their docs/ pages: each one exists */
	ck_assert_int_gt(sp.md_names, 5);
	ck_assert_msg(sp.bad.size == 0, "help texts pointing outside the "
		      "project:%s", lm_buf_cstr(&sp.bad));
	lm_buf_free(&sp.bad);
}
END_TEST

/* The citation check finds the reference's names and nothing else. */
START_TEST(test_citation_checker)
{
	static const char *const bad[] = {
		"see SP" "EC 2.1", "(SP" "EC \xc2\xa7" "4, seed 0" "00_\xe2\x80\xa6)",
		"SP" "EC.m" "d", "as in 00" "3_df82e57b3cc81271.txt", "seed 0" "00_...",
	};
	static const char *const good[] = {
		"the loop rule (\xc2\xa7" "3.3)", "SPECIAL 2", "test_fuzz_200_pass",
		"call_def_9223372036854775807_instance_0", "a spec of 2 cores",
		"--seed 000 and 1_2",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(cites_reference(bad[i]) != NULL, "%s", bad[i]);
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		ck_assert_msg(cites_reference(good[i]) == NULL, "%s", good[i]);
}
END_TEST

/* ---- calls run one way within a library ------------------------------- */

/*
** The files of linker/ and linker/provision/ are layered: the comment at
** the top of each one's local.mk lists the layers, the top first, one
** line "#   FILE.c FILE.c ..." each, after the line "# Calls run one
** way". A file calls only functions defined in files of the layers below
** its own. The sources are read (no build needed): comments, strings and
** character constants are blanked, the functions each file defines
** without `static` are collected (a name and its parameters followed by
** `{` at file level), and every identifier of another file naming one of
** them is a call.
*/
static const char *const layered_dirs[] = { "linker", "linker/provision" };

static int is_idc(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9');
}

/*
** A copy of C text with comments, string and character literals turned
** into spaces (newlines kept); pp: preprocessor lines too.
*/
static char *blank_c(const char *t, int pp)
{
	char *s = lm_xstrdup(t), *p = s;
	int bol = 1;
	while (*p) {
		char *q = p;
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			q = e ? e + 2 : p + strlen(p);
		} else if (p[0] == '/' && p[1] == '/') {
			q = p + strcspn(p, "\n");
		} else if (*p == '"' || *p == '\'') {
			for (q = p + 1; *q && *q != *p && *q != '\n'; q++)
				if (*q == '\\' && q[1])
					q++;
			if (*q == *p)
				q++;
		} else if (pp && bol && *p == '#') {
			for (q = p; *q && !(*q == '\n' && q[-1] != '\\'); q++)
				;
		}
		if (q == p) {
			if (*p == '\n')
				bol = 1;
			else if (*p != ' ' && *p != '\t')
				bol = 0;
			p++;
			continue;
		}
		for (; p < q; p++)
			if (*p != '\n')
				*p = ' ';
	}
	return s;
}

/* The word w (n bytes) occurs as a whole identifier in [b, e). */
static int has_word(const char *b, const char *e, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = b; p + n <= e; p++)
		if (!strncmp(p, w, n) && (p == b || !is_idc(p[-1])) &&
		    (p + n == e || !is_idc(p[n])))
			return 1;
	return 0;
}

/* The functions defined without `static` in the files of a directory. */
typedef struct defset {
	lm_strmap index;     /* name -> position + 1 */
	char **names;
	int *file;           /* the defining file of each */
	int n, cap, cap_file;
} defset;

/* Add the functions the blanked text s (of file fi) defines without
** `static`: a name and its parameters followed by `{` at file level. */
static void collect_defs(defset *ds, const char *s, int fi)
{
	const char *decl = s;   /* start of the current file-level item */
	int depth = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '{' || *p == '}') {
			depth += *p == '{' ? 1 : -1;
			if (depth == 0 && *p == '}')
				decl = p + 1;
			continue;
		}
		if (depth)
			continue;
		if (*p == ';') {
			decl = p + 1;
			continue;
		}
		if (!is_idc(*p) || (p > s && is_idc(p[-1])) ||
		    (*p >= '0' && *p <= '9'))
			continue;
		const char *e = p, *q;
		while (is_idc(*e))
			e++;
		for (q = e; *q == ' ' || *q == '\t' || *q == '\n'; q++)
			;
		if (*q != '(')
			continue;
		int par = 0;
		do {
			par += *q == '(' ? 1 : *q == ')' ? -1 : 0;
			q++;
		} while (*q && par > 0);
		const char *after = q;
		while (*after == ' ' || *after == '\t' || *after == '\n')
			after++;
		if (*after == '{' && !has_word(decl, p, "static")) {
			lm_grow(&ds->names, &ds->cap, ds->n + 1,
				sizeof *ds->names);
			lm_grow(&ds->file, &ds->cap_file, ds->n + 1,
				sizeof *ds->file);
			ds->names[ds->n] = lm_xasprintf("%.*s", (int)(e - p),
							p);
			ds->file[ds->n] = fi;
			lm_strmap_put(&ds->index, ds->names[ds->n],
				      (void *)(intptr_t)(ds->n + 1));
			ds->n++;
		}
		p = q - 1;
	}
}

/*
** Check n files of one directory (name[i], its layer[i], 0 the top, and
** its text[i]): every call of a function another file defines must go to
** a lower layer. Faults are appended to bad; returns the number of
** distinct (file, function) calls across files seen.
*/
static int check_call_order(const char *dir, int n, const char *const *name,
			    const int *layer, const char *const *text,
			    lm_buf *bad)
{
	defset ds;
	char **code = lm_xcalloc((size_t)n, sizeof *code);
	int calls = 0;

	memset(&ds, 0, sizeof ds);
	lm_strmap_init(&ds.index);
	for (int i = 0; i < n; i++) {
		char *bare = blank_c(text[i], 1);
		collect_defs(&ds, bare, i);
		free(bare);
		code[i] = blank_c(text[i], 0);
	}
	char *seen = lm_xcalloc((size_t)ds.n + 1, 1);
	for (int i = 0; i < n; i++) {
		memset(seen, 0, (size_t)ds.n + 1);
		for (char *p = code[i]; *p; ) {
			if (!is_idc(*p) || (*p >= '0' && *p <= '9')) {
				p++;
				continue;
			}
			char *e = p;
			while (is_idc(*e))
				e++;
			int member = p > code[i] && (p[-1] == '.' ||
				(p[-1] == '>' && p - 1 > code[i] &&
				 p[-2] == '-'));
			char c = *e;
			*e = 0;
			int k = (int)(intptr_t)lm_strmap_lookup(&ds.index,
								p) - 1;
			*e = c;
			p = e;
			if (member || k < 0 || ds.file[k] == i || seen[k])
				continue;
			seen[k] = 1;
			calls++;
			int d = ds.file[k];
			if (layer[d] <= layer[i])
				lm_buf_printf(bad, " %s/%s calls %s() of %s, "
					      "%s;", dir, name[i], ds.names[k],
					      name[d], layer[d] < layer[i] ?
					      "a layer above" :
					      "its own layer");
		}
	}
	free(seen);
	for (int i = 0; i < n; i++)
		free(code[i]);
	free(code);
	for (int i = 0; i < ds.n; i++)
		free(ds.names[i]);
	free(ds.names);
	free(ds.file);
	lm_strmap_free(&ds.index);
	return calls;
}

/*
** The layers of dir's local.mk: the file names of the lines "#   A.c B.c"
** after "# Calls run one way", in order; *layer of each. Returns the
** number of files (0 when the comment is missing). Caller frees.
*/
static int read_layers(const char *mk, char ***files, int **layer)
{
	const char *p = strstr(mk, "# Calls run one way");
	int n = 0, cap = 0, lay = 0, icap = 0;
	*files = NULL;
	*layer = NULL;
	if (!p)
		return 0;
	p = strchr(p, '\n');
	/* the rest of the sentence, then the layer lines */
	while (p && p[1] == '#' && p[2] == ' ' && p[3] != ' ')
		p = strchr(p + 1, '\n');
	while (p && !strncmp(p + 1, "#   ", 4)) {
		const char *q = p + 5, *nl = strchr(q, '\n');
		if (!nl)
			nl = q + strlen(q);
		while (q < nl) {
			while (q < nl && *q == ' ')
				q++;
			const char *e = q;
			while (e < nl && *e != ' ')
				e++;
			if (e > q) {
				lm_grow(files, &cap, n + 1, sizeof **files);
				lm_grow(layer, &icap, n + 1, sizeof **layer);
				(*files)[n] = lm_xasprintf("%.*s",
							   (int)(e - q), q);
				(*layer)[n++] = lay;
			}
			q = e;
		}
		lay++;
		p = *nl ? nl : NULL;
	}
	return n;
}

START_TEST(test_calls_run_one_way)
{
	int total = 0;
	lm_buf bad = LM_BUF_INIT;
	for (size_t k = 0; k < sizeof layered_dirs / sizeof *layered_dirs;
	     k++) {
		const char *dir = layered_dirs[k];
		char *rel = lm_xasprintf("%s/local.mk", dir);
		char *mkp = tu_srcpath(rel), *mk = tu_read(mkp);
		char **files, **text;
		int *layer, n;
		ck_assert_msg(mk != NULL, "%s", mkp);
		n = read_layers(mk, &files, &layer);
		ck_assert_msg(n > 3, "%s: no \"# Calls run one way\" layers",
			      rel);
		text = lm_xcalloc((size_t)n, sizeof *text);
		for (int i = 0; i < n; i++) {
			char *r = lm_xasprintf("%s/%s", dir, files[i]);
			char *fp = tu_srcpath(r);
			text[i] = tu_read(fp);
			ck_assert_msg(text[i] != NULL, "%s (on a layer of %s)",
				      r, rel);
			free(fp);
			free(r);
		}
		/* every .c of the directory is on a layer */
		char *dp = tu_srcpath(dir);
		DIR *d = opendir(dp);
		struct dirent *e;
		ck_assert_msg(d != NULL, "%s", dp);
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			int on = 0;
			if (len < 3 || strcmp(e->d_name + len - 2, ".c"))
				continue;
			for (int i = 0; i < n && !on; i++)
				on = !strcmp(files[i], e->d_name);
			if (!on)
				lm_buf_printf(&bad, " %s/%s is on no layer of "
					      "%s;", dir, e->d_name, rel);
		}
		closedir(d);
		int calls = check_call_order(dir, n, (const char *const *)files,
					     layer, (const char *const *)text,
					     &bad);
		ck_assert_msg(calls > n, "%s: only %d calls across files "
			      "found", dir, calls);
		total += calls;
		for (int i = 0; i < n; i++) {
			free(files[i]);
			free(text[i]);
		}
		free(files);
		free(text);
		free(layer);
		free(dp);
		free(mk);
		free(mkp);
		free(rel);
	}
	/* all of them on stderr; check's message holds a few KiB */
	if (bad.size)
		fprintf(stderr, "calls against the layering:%s\n",
			lm_buf_cstr(&bad));
	ck_assert_msg(bad.size == 0, "calls against the layering:%.2000s%s",
		      lm_buf_cstr(&bad), bad.size > 2000 ? " ..." : "");
	ck_assert_int_gt(total, 40);
	lm_buf_free(&bad);
}
END_TEST

/* The checker itself: an upward call, a call within a layer and a cycle
** are found; statics, comments, strings and members are not calls. */
START_TEST(test_call_order_checker)
{
	static const char *const name[] = { "top.c", "mid.c", "side.c",
					    "low.c" };
	static const int layer[] = { 0, 1, 1, 2 };
	static const char *const good[] = {
		"int top(void)\n{\n\treturn mid() + side() + low();\n}\n",
		"/* top() drives */\nint mid(void)\n{\n\treturn low();\n}\n",
		"static int LM_PRINTF(1, 2) helper(const char *f, ...)\n"
		"{\n\treturn 0;\n}\nint side(void)\n{\n\treturn "
		"helper(\"top()\");\n}\n",
		"int low(struct s *x)\n{\n\treturn x->top + x.mid + "
		"helper('t');\n}\n",
	};
	static const char *const bad_text[] = {
		good[0],
		"int mid(void)\n{\n\treturn side();\n}\n",
		good[2],
		"int low(void)\n{\n\treturn top();\n}\n",
	};
	lm_buf bad = LM_BUF_INIT;
	ck_assert_int_eq(check_call_order("t", 4, name, layer, good, &bad), 4);
	ck_assert_msg(bad.size == 0, "%s", lm_buf_cstr(&bad));
	check_call_order("t", 4, name, layer, bad_text, &bad);
	ck_assert_str_eq(lm_buf_cstr(&bad),
			 " t/mid.c calls side() of side.c, its own layer;"
			 " t/low.c calls top() of top.c, a layer above;");
	lm_buf_free(&bad);

	char **files;
	int *lay;
	int n = read_layers("# Calls run one way, down:\n# more words\n"
			    "#   a.c\n#   b.c c.c\n#\nx = 1\n", &files, &lay);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(files[2], "c.c");
	ck_assert_int_eq(lay[0], 0);
	ck_assert_int_eq(lay[1], 1);
	ck_assert_int_eq(lay[2], 1);
	for (int i = 0; i < n; i++)
		free(files[i]);
	free(files);
	free(lay);
}
END_TEST

/* ---- the packed representation is model/'s ---------------------------- */

/*
** An instruction's packed storage is laid out by model/ alone: lm_inst
** holds a pointer to a type (struct lm_inst_pack) that model/ defines and
** no other directory sees. The build keeps code from reading an
** incomplete type; this case keeps code from naming it at all: no file of
** the other source directories, tests/ or bench/ names the type, one of
** its members (read from its one definition in model/), or lm_inst's field
** for it (`.pack`, `->pack`). Comments and strings do not count.
*/
static const char pack_type[] = "lm_inst_pack";
static const char pack_field[] = "pack";
static const char *const not_model_dirs[] = {
	"linker", "linker/provision", "sim", "db", "reports", "cli", "tests",
	"tests/fuzz", "bench",
};

/* The member names of the definition of struct pack_type in blanked text
** s, into *names (n returned); 0 when s does not define it. */
static int pack_members(const char *s, char ***names)
{
	int n = 0, cap = 0;
	*names = NULL;
	for (const char *p = s; (p = strstr(p, pack_type)); p++) {
		const char *q = p + strlen(pack_type), *end;
		if (p - s < 7 || strncmp(p - 7, "struct ", 7) ||
		    (p - s > 7 && is_idc(p[-8])) || is_idc(*q))
			continue;
		while (*q == ' ' || *q == '\t' || *q == '\n')
			q++;
		if (*q != '{' || !(end = strchr(q, '}')))
			continue;
		/* each declaration: its last name before `[` or `;` */
		for (const char *d = q + 1; d < end;) {
			const char *semi = memchr(d, ';', (size_t)(end - d));
			const char *e, *b;
			if (!semi)
				break;
			e = memchr(d, '[', (size_t)(semi - d));
			if (!e)
				e = semi;
			while (e > d && !is_idc(e[-1]))
				e--;
			for (b = e; b > d && is_idc(b[-1]); b--)
				;
			if (b < e) {
				lm_grow(names, &cap, n + 1, sizeof **names);
				(*names)[n++] = lm_xasprintf("%.*s",
							     (int)(e - b), b);
			}
			d = semi + 1;
		}
		return n;
	}
	return 0;
}

/* What of the packing blanked text s names (a static string), or NULL. */
static const char *names_packing(const char *s, char *const *members, int n)
{
	const char *e = s + strlen(s);
	if (has_word(s, e, pack_type))
		return pack_type;
	for (int i = 0; i < n; i++)
		if (has_word(s, e, members[i]))
			return members[i];
	for (const char *p = s; (p = strstr(p, pack_field)); p++) {
		const char *q = p + strlen(pack_field);
		int dot = p > s && p[-1] == '.';
		int arrow = p - s > 1 && p[-1] == '>' && p[-2] == '-';
		if ((dot || arrow) && !is_idc(*q))
			return dot ? ".pack" : "->pack";
	}
	return NULL;
}

/* Every .c / .h of directory rel (under the source tree) as blanked text
** passed to each(); returns the number of files. */
static int each_c_file(const char *rel, void (*each)(const char *name,
						      const char *blanked,
						      void *arg), void *arg)
{
	char *dir = tu_srcpath(rel);
	DIR *d = opendir(dir);
	struct dirent *e;
	int files = 0;
	ck_assert_msg(d != NULL, "%s", dir);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 3 || (strcmp(e->d_name + n - 2, ".c") &&
			      strcmp(e->d_name + n - 2, ".h")))
			continue;
		char *p = lm_path_join(dir, e->d_name);
		char *text = tu_read(p);
		if (text) { /* a file that vanished meanwhile passes */
			char *b = blank_c(text, 0);
			char *name = lm_path_join(rel, e->d_name);
			each(name, b, arg);
			files++;
			free(name);
			free(b);
			free(text);
		}
		free(p);
	}
	closedir(d);
	free(dir);
	return files;
}

typedef struct pack_scan {
	char **members;
	int n_members, n_defs;
	lm_buf bad;
} pack_scan;

static void find_pack_def(const char *name, const char *b, void *arg)
{
	pack_scan *ps = arg;
	char **m;
	int n = pack_members(b, &m);
	(void)name;
	if (!n)
		return;
	ps->n_defs++;
	for (int i = 0; i < ps->n_members; i++)
		free(ps->members[i]);
	free(ps->members);
	ps->members = m;
	ps->n_members = n;
}

static void check_pack_use(const char *name, const char *b, void *arg)
{
	pack_scan *ps = arg;
	const char *what = names_packing(b, ps->members, ps->n_members);
	if (what)
		lm_buf_printf(&ps->bad, " %s names %s;", name, what);
}

START_TEST(test_packing_is_model_private)
{
	pack_scan ps;
	int files = 0;
	memset(&ps, 0, sizeof ps);
	each_c_file("model", find_pack_def, &ps);
	ck_assert_msg(ps.n_defs == 1, "struct %s is defined %d times in model/",
		      pack_type, ps.n_defs);
	ck_assert_int_ge(ps.n_members, 2);
	for (size_t i = 0; i < sizeof not_model_dirs / sizeof *not_model_dirs;
	     i++)
		files += each_c_file(not_model_dirs[i], check_pack_use, &ps);
	ck_assert_int_gt(files, 50);
	ck_assert_msg(ps.bad.size == 0, "files outside model/ that read the "
		      "packed representation:%s", lm_buf_cstr(&ps.bad));
	for (int i = 0; i < ps.n_members; i++)
		free(ps.members[i]);
	free(ps.members);
	lm_buf_free(&ps.bad);
}
END_TEST

/* The checker itself: members are read from a definition; a member, the
** type or the field is found in code, not in comments, strings or longer
** names. */
START_TEST(test_packing_checker)
{
	char **m;
	char *b = blank_c("/* struct lm_inst_pack { int no; }; */\n"
			  "struct lm_inst_pack {\n\tsize_t used;\t/* n; */\n"
			  "\tuint64_t bytes[];\n};\n", 0);
	int n = pack_members(b, &m);
	static const char *const bad[] = {
		"x = in->pack;", "f(&in.pack);", "return p->used;",
		"char *c = (char *)k->bytes;", "struct lm_inst_pack *p;",
		"#define P(i) ((i)->pack)",
	};
	static const char *const good[] = {
		"/* in->pack->used */ s = \"in.pack\";",
		"lm_inst_packed_bytes(in); lp_klr_pack(f); packer k;",
		"x.packed = 1; used_bytes = 2; y->packs = 0;",
	};
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(m[0], "used");
	ck_assert_str_eq(m[1], "bytes");
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *t = blank_c(bad[i], 0);
		ck_assert_msg(names_packing(t, m, n) != NULL, "missed: %s",
			      bad[i]);
		free(t);
	}
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		char *t = blank_c(good[i], 0);
		const char *w = names_packing(t, m, n);
		ck_assert_msg(w == NULL, "%s found in: %s", w, good[i]);
		free(t);
	}
	for (int i = 0; i < n; i++)
		free(m[i]);
	free(m);
	free(b);
}
END_TEST

/* ---- the inner suite -------------------------------------------------- */

/* A case that makes scratch directories and runs lncsim without --db. */
START_TEST(inner_scratch_and_run)
{
	char *a = tu_tmpdir("inner");
	char *b = tu_tmpdir("inner");
	free(tu_write(a, "deep/er/file.txt", "x\n"));
	char *link = lm_path_join(b, "root-link");
	ck_assert_int_eq(symlink("/", link), 0);
	free(link);
	char *ex = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	/* it logged into the scratch directory */
	const char *db = getenv("LNCSIM_DB");
	ck_assert_ptr_nonnull(db);
	ck_assert_int_eq(access(db, F_OK), 0);
	free(ex);
	free(a);
	free(b);
}
END_TEST

START_TEST(inner_fails)
{
	free(tu_tmpdir("inner"));
	ck_abort_msg("failing on purpose");
}
END_TEST

/* A case that wrongly logs into ./lncsim.db. */
START_TEST(inner_writes_db)
{
	unsetenv("LNCSIM_DB");
	char *ex = tu_srcpath("examples/matmul1");
	tu_run r = tu_lncsim(NULL, "run", ex, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	free(ex);
}
END_TEST

static int inner_main(const char *mode)
{
	Suite *s = suite_create("inner");
	TCase *tc = tcase_create("inner");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, inner_scratch_and_run);
	if (!strcmp(mode, "fail"))
		tcase_add_test(tc, inner_fails);
	if (!strcmp(mode, "writes-db"))
		tcase_add_test(tc, inner_writes_db);
	suite_add_tcase(s, tc);
	return tu_main(s);
}

/* ---- the outer cases -------------------------------------------------- */

/*
** The inner suite's output on one line: its TAP lines must not reach the
** outer TAP stream through a failure message.
*/
static const char *oneline(char *s)
{
	if (!s)
		return "(none)";
	for (char *p = s; *p; p++)
		if (*p == '\n')
			*p = '|';
	return s;
}

/* Run this program as the inner suite MODE in directory cwd. */
static tu_run run_inner(const char *cwd, const char *mode)
{
	tu_run r = { -1, NULL, NULL };
	char *self = realpath("/proc/self/exe", NULL);
	ck_assert_ptr_nonnull(self);
	if (!getenv("LNCSIM")) {
		char *bin = realpath("lncsim", NULL);
		if (bin)
			setenv("LNCSIM", bin, 1);
		free(bin);
	}
	char *src = tu_srcpath(".");
	char *out = lm_path_join(cwd, "..inner.out");
	char *err = lm_path_join(cwd, "..inner.err");
	pid_t pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || chdir(cwd) != 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		/* one TAP stream the test can read, whatever the caller set */
		setenv("CK_TAP_LOG_FILE_NAME", "-", 1);
		setenv("CK_VERBOSITY", "silent", 1);
		setenv("srcdir", src, 1);
		execl(self, self, "--inner", mode, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = tu_read(out);
	r.err = tu_read(err);
	unlink(out);
	unlink(err);
	free(out);
	free(err);
	free(self);
	free(src);
	return r;
}

/* The entries of dir (space separated, sorted by readdir order). */
static char *listing(const char *dir)
{
	lm_buf b = LM_BUF_INIT;
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			lm_buf_printf(&b, "%s ", e->d_name);
	closedir(d);
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

START_TEST(test_passing_suite_leaves_nothing)
{
	char *d = tu_tmpdir("hyg-pass");
	/* a user database in the directory is left alone */
	char *user = tu_write(d, "lncsim.db", "");
	struct stat before, after;
	ck_assert_int_eq(stat(user, &before), 0);
	tu_run r = run_inner(d, "pass");
	ck_assert_msg(r.status == 0 && r.out && strstr(r.out, "ok 1") &&
		      !strstr(r.out, "not ok") && !strstr(r.out, "Bail out"),
		      "inner suite: %s", oneline(r.out));
	char *ls = listing(d);
	ck_assert_str_eq(ls, "lncsim.db ");
	ck_assert_int_eq(stat(user, &after), 0);
	ck_assert_int_eq(after.st_size, 0);
	ck_assert_int_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	ck_assert_int_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	free(ls);
	tu_run_free(&r);
	free(user);
	free(d);
}
END_TEST

START_TEST(test_failing_suite_keeps_scratch)
{
	char *d = tu_tmpdir("hyg-fail");
	tu_run r = run_inner(d, "fail");
	ck_assert_msg(r.out && strstr(r.out, "failing on purpose") && r.err &&
		      strstr(r.err, "# scratch directory kept: "),
		      "inner suite: %s", oneline(r.out));
	char *ls = listing(d);
	ck_assert_msg(!strncmp(ls, "tmp-test_hygiene-", 17) &&
		      strchr(ls, ' ') == ls + strlen(ls) - 1, "%s", ls);
	/* the failing case's directory is in it */
	ls[strlen(ls) - 1] = 0;
	char *root = lm_path_join(d, ls);
	char *inside = listing(root);
	ck_assert_contains(inside, "inner-");
	ck_assert_contains(inside, "lncsim.db");
	free(inside);
	free(root);
	free(ls);
	tu_run_free(&r);
	free(d);
}
END_TEST

START_TEST(test_suite_writing_user_db_fails)
{
	char *d = tu_tmpdir("hyg-db");
	tu_run r = run_inner(d, "writes-db");
	ck_assert_msg(r.out && strstr(r.out, "Bail out! the suite wrote "
				      "./lncsim.db"), "inner suite: %s",
		      oneline(r.out));
	tu_run_free(&r);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hygiene");
	TCase *tc = tcase_create("rules");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_tcase_has_timeout);
	tcase_add_test(tc, test_includes_keep_the_layering);
	tcase_add_test(tc, test_files_speak_of_the_project);
	tcase_add_test(tc, test_help_speaks_of_the_project);
	tcase_add_test(tc, test_citation_checker);
	tcase_add_test(tc, test_calls_run_one_way);
	tcase_add_test(tc, test_call_order_checker);
	tcase_add_test(tc, test_packing_is_model_private);
	tcase_add_test(tc, test_packing_checker);
	tcase_add_test(tc, test_passing_suite_leaves_nothing);
	tcase_add_test(tc, test_failing_suite_keeps_scratch);
	tcase_add_test(tc, test_suite_writing_user_db_fails);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--inner"))
		return inner_main(argv[2]);
	return tu_main(suite());
}

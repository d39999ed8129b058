/*
** cmd_lower.c -- `lncsim lower [--inline] [-o OUT] MODULE`: kernel
** provision over one module or a per-core directory.
*/
#include "common.h"
#include "cli.h"
#include "module.h"
#include "verify.h"
#include "provision.h"
#include "safeio.h"

#include <errno.h>
#include <fcntl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char usage_lower[] =
	"usage: lncsim lower [--inline] [-o OUT] MODULE\n\n"
	"Kernel provision (TranslateNKIASTToBIR): every NKIKLIRKernel carrier\n"
	"becomes a function of kind nki and an NKIKernel call 'inst__<name>'.\n"
	"kernel_format \"bir\" reads a BIR-JSON kernel (functions[core id]);\n"
	"anything else reads a KLR CBOR kernel (format 0.0.12) and lowers it\n"
	"op by op. klir_binary paths are relative to the module's directory.\n\n"
	"  --inline   then splice every NKIKernel body into its caller\n"
	"             (InlineNKIKernel) and remove the kernel functions\n"
	"  -o OUT     where to write. MODULE a file: OUT is the output file\n"
	"             (or a directory to hold def.json). MODULE a directory\n"
	"             of nc*/sg*/def.json: OUT is a directory receiving the\n"
	"             same layout. Default: X.lowered.json beside each X.json.\n"
	"             Const files of the kernels (and of the module when OUT is\n"
	"             elsewhere) are copied next to the output.\n\n"
	"Warnings (a kernel skipped by the LNC gate, the identity-matrix\n"
	"performance note) go to stderr. The result is verified before it is\n"
	"written.\n\n"
	"exit status: 0 ok, 2 bad input (unreadable or invalid module or\n"
	"kernel, unsupported KLR operator, ...)\n";

/* Is path an existing directory? */
static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Count the carriers of blocks (inside Loops too). */
static int count_op(const lm_block *bs, int nb, lm_opcode op)
{
	int n = 0;
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs[b].n_insts; i++) {
			const lm_inst *in = &bs[b].insts[i];
			if (in->op == LM_OP_LOOP)
				n += count_op(in->blocks, in->n_blocks, op);
			else if (in->op == op)
				n++;
		}
	return n;
}

static int count_module(const lm_module *m, lm_opcode op)
{
	int n = 0;
	for (int f = 0; f < m->n_functions; f++)
		n += count_op(m->functions[f].blocks, m->functions[f].n_blocks,
			      op);
	return n;
}

/* The default output of path: X.json -> X.lowered.json. */
static char *default_out(const char *path)
{
	size_t n = strlen(path);
	if (n > 5 && !strcmp(path + n - 5, ".json"))
		return lm_xasprintf("%.*s.lowered.json", (int)(n - 5), path);
	return lm_xasprintf("%s.lowered.json", path);
}

/*
** Lower one module file into out_path. outfd >= 0: out_path's directory,
** already open (made beneath the -o directory); everything is written
** beneath it, never through a symlink. Else the directory of out_path is
** the user's, made and opened as given.
*/
static int lower_one(const char *path, const char *out_path, int do_inline,
		     int outfd)
{
	lm_module *m = NULL, *lo = NULL;
	lp_warnings warn = { 0, 0, NULL };
	lp_lower_opts opts;
	lm_error err;
	char *dir = lm_dirname(out_path);
	int rc = 0, n_carriers, n_calls, n_own;

	memset(&opts, 0, sizeof opts);
	opts.out_dir = dir;
	opts.has_out_dirfd = outfd >= 0;
	opts.out_dirfd = outfd;
	if (lm_module_load(&m, path, &err) != 0 ||
	    lm_verify(m, NULL, &err) != 0 ||
	    (outfd < 0 && lm_mkdirs(dir, &err) != 0)) {
		rc = cli_report(&err);
		goto done;
	}
	n_carriers = count_module(m, LM_OP_NKIKLIRKERNEL);
	if (lp_lower(&lo, m, &opts, &warn, &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	for (int i = 0; i < warn.n; i++)
		fprintf(stderr, "lncsim: warning: %s\n", warn.msgs[i]);
	n_own = count_module(m, LM_OP_NKIKERNEL);
	n_calls = count_module(lo, LM_OP_NKIKERNEL) - n_own;
	if (do_inline && lp_inline_nki(lo, &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	free(lo->path);
	lo->path = lm_xstrdup(out_path);
	if (lm_verify(lo, NULL, &err) != 0) {
		fprintf(stderr, "lncsim: the lowered module does not verify:\n");
		rc = cli_report(&err);
		goto done;
	}
	if (outfd >= 0) {
		char *text = NULL;
		size_t len;
		const char *base = strrchr(out_path, '/');
		if (lm_module_to_json(lo, 1, &text, &len, &err) != 0 ||
		    lm_write_at(outfd, dir, base ? base + 1 : out_path, text,
				len, 0644, &err) != 0) {
			free(text);
			rc = cli_report(&err);
			goto done;
		}
		free(text);
	} else if (lm_module_save(lo, out_path, 1, &err) != 0) {
		rc = cli_report(&err);
		goto done;
	}
	printf("%s: %d kernel carrier%s: %d lowered%s, %d skipped",
	       out_path, n_carriers, n_carriers == 1 ? "" : "s", n_calls,
	       do_inline ? " and inlined" : "", n_carriers - n_calls);
	/* the module's own calls (already lowered) inlined too */
	if (do_inline && n_own > 0)
		printf("; %d NKIKernel call%s of the module inlined", n_own,
		       n_own == 1 ? "" : "s");
	printf("\n");
done:
	lp_warnings_free(&warn);
	lm_module_free(m);
	lm_module_free(lo);
	free(dir);
	return rc;
}

int cmd_lower(int argc, char **argv)
{
	const char *out = NULL;
	int do_inline = 0, first = 0, rc = 0, n = 0;
	char **paths = NULL;

	const char *mod = NULL;
	int opts_end = 0;
	for (int i = 1; i < argc; i++) {
		if (!opts_end && !strcmp(argv[i], "--")) {
			opts_end = 1;
		} else if (opts_end) {
			if (mod)
				return cli_usage_error("lower", "one MODULE at a "
						       "time");
			mod = argv[i];
			first = i;
		} else if (!strcmp(argv[i], "--inline")) {
			do_inline = 1;
		} else if (!strcmp(argv[i], "-o")) {
			if (++i >= argc)
				return cli_usage_error("lower", "-o needs OUT");
			out = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage_error("lower", "unknown option '%s'",
					       argv[i]);
		} else if (mod) {
			return cli_usage_error("lower", "one MODULE at a time");
		} else {
			mod = argv[i];
			first = i;
		}
	}
	if (!mod)
		return cli_usage_error("lower", "no MODULE given");
	if ((rc = cli_expand_modules(1, argv + first, &paths, &n)) != 0)
		return rc;
	if (!is_dir(argv[first])) {
		char *o = !out ? default_out(paths[0])
			  : is_dir(out) || out[strlen(out) - 1] == '/'
			  ? lm_path_join(out, "def.json") : lm_xstrdup(out);
		rc = lower_one(paths[0], o, do_inline, -1);
		free(o);
	} else {
		size_t pre = strlen(argv[first]);
		int ofd = -1;
		lm_error err;
		/* -o DIR is the user's; the nc<c>/sg<n> directories are made
		   beneath its fd, never through a symlink */
		err.msg[0] = 0;
		if (out && (lm_mkdirs(out, &err) != 0 ||
			    (ofd = open(out, O_RDONLY | O_DIRECTORY |
					O_CLOEXEC)) < 0)) {
			if (ofd < 0 && !err.msg[0])
				lm_err(&err, out, "", "cannot open directory: %s",
				       strerror(errno));
			rc = cli_report(&err);
		}
		for (int i = 0; i < n && !rc; i++) {
			const char *rel = paths[i] + pre, *slash;
			char *o, *sub;
			int dfd = -1;
			while (*rel == '/')
				rel++;
			if (!out) {
				o = default_out(paths[i]);
				rc = lower_one(paths[i], o, do_inline, -1);
				free(o);
				continue;
			}
			slash = strrchr(rel, '/');
			sub = slash ? lm_xstrndup(rel, (size_t)(slash - rel))
				: NULL;
			if (!lm_rel_path_ok(rel)) {
				lm_err(&err, paths[i], "", "cannot name a path "
				       "under %s", out);
				rc = cli_report(&err);
			} else if (lm_dir_open_beneath(&dfd, ofd, out, sub, 1, NULL,
						     &err) != 0)
				rc = cli_report(&err);
			if (!rc) {
				o = lm_path_join(out, rel);
				rc = lower_one(paths[i], o, do_inline, dfd);
				free(o);
			}
			if (dfd >= 0)
				close(dfd);
			free(sub);
		}
		if (ofd >= 0)
			close(ofd);
	}
	cli_free_paths(paths, n);
	return rc;
}

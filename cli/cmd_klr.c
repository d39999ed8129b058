/*
** cmd_klr.c -- `lncsim klr dump K.klr` and `lncsim klr pack KERNEL.json
** -o K.klr`: the KLR CBOR files of the kernel provision, to and from the
** JSON rendering of docs/klr.md.
*/
#include "common.h"
#include "cli.h"
#include "klr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_klr[] =
	"usage: lncsim klr dump [-o OUT.json] K.klr\n"
	"       lncsim klr pack -o K.klr KERNEL.json\n\n"
	"KLR kernel files (CBOR, KLR on-disk format 0.0.12) for the subset of\n"
	"KLR the kernel provision lowers.\n\n"
	"  dump   decode K.klr and print it in the JSON rendering of\n"
	"         docs/klr.md (to stdout, or to OUT.json); a file in an older\n"
	"         KLR 0.0.12 schema generation is read into the current one,\n"
	"         and \"generation\" says which it was\n"
	"  pack   encode a kernel written in that JSON rendering as a .klr\n"
	"         file in the current schema generation (it prints the\n"
	"         file it wrote and its size); pack -> dump -> pack is\n"
	"         byte-identical\n\n"
	"exit status: 0 ok, 2 bad usage or a malformed / unsupported file\n";

/* dump: CBOR -> JSON. */
static int klr_dump(const char *in, const char *out)
{
	lp_klr_file f;
	lm_error err;
	lm_buf b = LM_BUF_INIT;
	int rc = 0;
	if (lp_klr_read(&f, in, &err) != 0)
		return cli_report(&err);
	lp_klr_to_json(&f, &b);
	if (out) {
		if (lm_write_file_atomic(out, lm_buf_cstr(&b), b.size, &err))
			rc = cli_report(&err);
	} else {
		fwrite(lm_buf_cstr(&b), 1, b.size, stdout);
	}
	lm_buf_free(&b);
	lp_klr_file_free(&f);
	return rc;
}

/* pack: JSON -> CBOR. */
static int klr_pack(const char *in, const char *out)
{
	lp_klr_file f;
	lm_error err;
	lm_buf b = LM_BUF_INIT;
	char *text = NULL;
	size_t n;
	int rc = 0;
	if (lm_read_file(in, &text, &n, &err) != 0)
		return cli_report(&err);
	if (lp_klr_from_json(&f, text, n, in, &err) != 0) {
		free(text);
		return cli_report(&err);
	}
	free(text);
	if (lp_klr_encode_file(&f, &b, &err) != 0 ||
	    lm_write_file_atomic(out, b.ptr ? b.ptr : "", b.size, &err) != 0)
		rc = cli_report(&err);
	else
		printf("%s: %zu bytes (KLR %llu.%llu.%llu) from %s\n", out,
		       b.size, (unsigned long long)f.version[0],
		       (unsigned long long)f.version[1],
		       (unsigned long long)f.version[2], in);
	lm_buf_free(&b);
	lp_klr_file_free(&f);
	return rc;
}

int cmd_klr(int argc, char **argv)
{
	const char *out = NULL, *sub, *in = NULL;
	if (argc < 2)
		return cli_usage_error("klr", "missing 'dump' or 'pack'");
	sub = argv[1];
	if (strcmp(sub, "dump") && strcmp(sub, "pack"))
		return cli_usage_error("klr", "unknown subcommand '%s' (dump or "
				       "pack)", sub);
	int opts_end = 0;
	for (int i = 2; i < argc; i++) {
		if (!opts_end && !strcmp(argv[i], "--")) {
			opts_end = 1;
		} else if (!opts_end && !strcmp(argv[i], "-o")) {
			if (++i >= argc)
				return cli_usage_error("klr", "-o needs a file");
			out = argv[i];
		} else if (!opts_end && argv[i][0] == '-' && argv[i][1]) {
			return cli_usage_error("klr", "unknown option '%s'",
					       argv[i]);
		} else if (in) {
			return cli_usage_error("klr", "one input file at a "
					       "time");
		} else {
			in = argv[i];
		}
	}
	if (!in)
		return cli_usage_error("klr", "no input file given");
	if (!strcmp(sub, "dump"))
		return klr_dump(in, out);
	if (!out)
		return cli_usage_error("klr", "pack needs -o K.klr");
	return klr_pack(in, out);
}

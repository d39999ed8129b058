/*
** gen_attn.c -- writes the fused self-attention example: the KLR JSON of
** the kernel or the carrier module of one core (bench/attn_klr.c, the
** code bench_attn generates its kernel with), on stdout.
**
** Usage: gen_attn kernel SEQ D NCORES
**        gen_attn def SEQ D CORE NCORES KLR_PATH
** examples/nki/attention/README.md has the commands that made the
** shipped files.
*/
#include "common.h"
#include "attn_klr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int num(const char *s, int lo, int hi)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == 0 || *end != 0 || v < lo || v > hi) {
		fprintf(stderr, "gen_attn: '%s' is not a number in [%d, %d]\n",
			s, lo, hi);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	char *text;
	int seq, d, nc;
	if (argc == 5 && !strcmp(argv[1], "kernel")) {
		seq = num(argv[2], 128, 1 << 16);
		d = num(argv[3], 1, 128);
		nc = num(argv[4], 1, 2);
		if (seq % (128 * nc)) {
			fprintf(stderr, "gen_attn: SEQ must be a multiple of "
				"%d\n", 128 * nc);
			return 2;
		}
		text = attn_klr_json(seq, d, nc);
	} else if (argc == 7 && !strcmp(argv[1], "def")) {
		seq = num(argv[2], 128, 1 << 16);
		d = num(argv[3], 1, 128);
		nc = num(argv[5], 1, 2);
		text = attn_def_json(seq, d, num(argv[4], 0, nc - 1), nc,
				     argv[6]);
	} else {
		fprintf(stderr, "usage: gen_attn kernel SEQ D NCORES\n"
			"       gen_attn def SEQ D CORE NCORES KLR_PATH\n");
		return 2;
	}
	fputs(text, stdout);
	free(text);
	return fflush(stdout) ? 1 : 0;
}

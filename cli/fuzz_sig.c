/*
** fuzz_sig.c -- failure signatures: what makes two failing cases the
** same failure, so a campaign stores each once (fuzz.h, fz_signature;
** docs/distributed.md, "Failure signatures").
*/
#include "common.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

/* The longest error class kept. */
#define CLASS_MAX 160

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

char *fz_tensor_class(const char *name)
{
	lm_buf b = LM_BUF_INIT;
	for (const char *p = name ? name : ""; *p; p++) {
		if (!is_digit(*p)) {
			lm_buf_put(&b, p, 1);
			continue;
		}
		while (is_digit(p[1]))
			p++;
		lm_buf_put(&b, "#", 1);
	}
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

/* A number begins here: a digit not inside a word ("sg0", "nc1" are
** words whose digits are written '#' one run at a time). */
static const char *skip_number(const char *p)
{
	while (is_digit(*p) || *p == '.' || *p == 'x' || *p == 'X' ||
	       (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F') ||
	       ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E')))
		p++;
	return p;
}

char *fz_error_class(const char *message)
{
	lm_buf b = LM_BUF_INIT;
	const char *p = message ? message : "";
	while (*p && b.size < CLASS_MAX) {
		if (*p == '\'' || *p == '"') {
			const char *e = strchr(p + 1, *p);
			if (e) {
				lm_buf_put(&b, p, 1);
				lm_buf_puts(&b, "*");
				lm_buf_put(&b, e, 1);
				p = e + 1;
				continue;
			}
		}
		if (is_digit(*p)) {
			/* a number on its own (0x3f80, 1.5e-3) is one '#';
			** digits inside a word are a run each */
			int word = p > message && ((p[-1] >= 'a' && p[-1] <= 'z') ||
						   (p[-1] >= 'A' && p[-1] <= 'Z') ||
						   p[-1] == '_');
			if (word)
				while (is_digit(p[1]))
					p++;
			else
				p = skip_number(p) - 1;
			lm_buf_put(&b, "#", 1);
			p++;
			continue;
		}
		lm_buf_put(&b, p, 1);
		p++;
	}
	lm_buf_put(&b, "", 0);
	return lm_buf_detach(&b);
}

char *fz_signature(const char *kind, const char *message, const char *tensor,
		   int64_t first_index, int64_t mismatches, int64_t count)
{
	char *cls;
	const char *pos = "-";
	if (tensor && *tensor) {
		cls = fz_tensor_class(tensor);
		if (count > 0 && mismatches >= count)
			pos = "all";
		else if (first_index == 0)
			pos = "first";
		else if (count > 0 && first_index == count - 1)
			pos = "last";
		else
			pos = "inner";
	} else
		cls = fz_error_class(message);
	/* the separator stays one: a '|' of the class is written '/' */
	for (char *q = cls; *q; q++)
		if (*q == '|')
			*q = '/';
	char *s = lm_xasprintf("%s|%s|%s", kind && *kind ? kind : "error", cls,
			       pos);
	free(cls);
	return s;
}

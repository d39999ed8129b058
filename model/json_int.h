/*
** json_int.h -- internal: the rest of the IR <-> cJSON bridge, for model/
** files only (tests of the internals aside). Other libraries use json.h.
*/
#ifndef LNCSIM_JSON_INT_H
#define LNCSIM_JSON_INT_H

#include <cjson/cJSON.h>
#include "json.h"

/* Build the JSON tree of a module (documented form, every number exact);
** caller deletes. NULL when nested deeper than cJSON parses (1000). */
cJSON *lm_module_to_cjson(const lm_module *m);
/* Compact text with every number exact (%.17g); caller frees. */
char *lm_module_exact_text(const lm_module *m, size_t *len);
/* Structural JSON comparison; 0 when equal, else path in where. */
int lm_json_compare(const cJSON *a, const cJSON *b, char *where,
		    size_t where_len);
/* The text cJSON prints for a number item (d, its valueint): the writer
** uses it, tests compare it with cJSON. Returns the length (< 32). */
int lm_json_number_text(char buf[32], double d, int valueint);
/* cJSON_CreateNumber's valueint of d (saturated). */
int lm_json_sat_int(double d);
/* Read a float written by lm_json_float (or a plain number). 0 on success. */
int lm_json_get_float(const cJSON *j, double *out);
/* The loader's table of the keys it reads into the IR is sorted by key
** (its lookup is a binary search): 1 when it is. */
int lm_json_ir_keys_sorted(void);
/* The same for the writer's table of an instruction's keys. */
int lm_json_iw_keys_sorted(void);

/*
** One instruction (one allocation) in the wire form, read by the loader's
** rules into *in (*a), which is overwritten; the module m gives the
** version, the path for messages, and fn / blk the place they name. The
** operands' SB / PSUM offsets stay as written (the start partition folded
** in: lm_arg_unfold). 0, or LM_EINPUT with err filled and *in cleared.
*/
int lm_json_read_inst(lm_inst *in, const char *text, size_t len,
		      const lm_module *m, const char *fn, const char *blk,
		      lm_error *err);
int lm_json_read_alloc(lm_alloc *a, const char *text, size_t len,
		       const lm_module *m, const char *fn, lm_error *err);

#endif

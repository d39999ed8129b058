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
/*
** What an instruction holds for one of its op keys (row f of its opcode
** in fields.def). lm_inst_key_view returns 1 and fills *v when it holds
** a value: the carried member of `extra` (json; a value the IR does not
** hold, an affine one included), or for a value the IR holds, a NAME /
** STR's string (name), a NAME_LIST's strings (names, n_names) or a KV's
** pairs (kv, n_kv); a value the IR always
** holds (a number, a list, a flag) leaves them all NULL. It returns 0
** when the key is neither carried nor held by the IR (the loader dropped
** it at the row's default, or it never was), and -1 when the IR field
** that holds it is in its unset state (a NULL name, an INVALID enum).
*/
typedef struct lm_keyview {
	const cJSON *json;
	const char *name;
	const lm_kv *kv;
	int n_kv;
	char *const *names;   /* a NAME_LIST the IR holds (n_names) */
	int n_names;
} lm_keyview;
struct lm_field;
int lm_inst_key_view(const lm_inst *in, const struct lm_field *f,
		     lm_keyview *v);

/*
** Blocks out of a carried array of blocks (a DynamicForLoop's, DoWhile's
** or DMABlock's body, a queue's blocks), read as a function's blocks are
** (version 2), their SB / PSUM operands unfolded against the allocations
** of m. 0 and *out (n blocks: lm_block_clear each, free the array), or
** LM_EINPUT with err filled. blocks is not changed.
*/
int lm_blocks_from_json(const cJSON *blocks, const lm_module *m,
			lm_block **out, int *n, lm_error *err);

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

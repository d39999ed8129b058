/*
** json.h -- the public part of the IR <-> cJSON bridge: what libraries that
** build or carry module JSON (linker, kernel provision, generator) use.
** The rest of the bridge (model/json_int.h) is for model/ alone.
*/
#ifndef LNCSIM_JSON_H
#define LNCSIM_JSON_H

#include <cjson/cJSON.h>
#include "module.h"

/* Install lncsim's cJSON allocation hooks (once; thread-safe). They send a
** parsing thread's allocations to its arena and the rest to malloc. */
void lm_json_hooks(void);
/* Convert a parsed tree; `root` is consumed (strings stolen, deleted). */
int lm_module_from_cjson(lm_module **out, cJSON *root, const char *path,
			 lm_error *err);
/* A double as JSON: number, or "nan" / "inf" / "-inf"; -0 kept. */
cJSON *lm_json_float(double v);

/*
** Register references inside carried JSON: every member, at any depth,
** whose key is one of the wire spellings of a register name -- "regref"
** (register_ap, register_access, and the IntRuntimeValueKind expression
** nodes of symbolic_ap / symbolic_pwap / symbolic_imm_value operands,
** dynamic_ap_info and loop axes), "reg_ap_offset" and "reg_sub_tensor_id"
** (register_ap). fn gets each such member in document order (a register
** name when cJSON_IsString; null members, an absent Option, are skipped);
** a non-zero return stops the walk and is returned. The linker renames
** through it and the verifier resolves through it: one walk for both.
*/
typedef int (*lm_regref_fn)(cJSON *member, void *arg);
int lm_json_each_regref(cJSON *j, lm_regref_fn fn, void *arg);
/* An operand of the wire form read from j (an entry of a carried
** operand list such as indirection_ins) into a (zeroed first; the caller
** clears it with lm_arg_clear). Its offset is as written (the wire's,
** the start partition folded in: lm_arg_unfold). 0, or LM_EINPUT with
** the reason in msg. */
int lm_arg_from_json(lm_arg *a, const cJSON *j, char *msg, size_t n);
/* The same over an operand's carried JSON (an opaque operand's whole
** object; the unknown keys of the others). */
int lm_arg_each_regref(const lm_arg *a, lm_regref_fn fn, void *arg);

/*
** Tensor references inside carried JSON: every object, at any depth, with
** a "memsetref" (an allocation name) or a "memref" (a memory location
** name) member -- an opaque operand's own object (symbolic_ap,
** register_ap, ... write "memsetref" at their top) and any access pattern
** nested in an operand's carried JSON. fn gets the object and its two
** members, each NULL when absent or null; it is called in document order
** (the object before what it nests). A non-zero return stops the walk and
** is returned. The linker renames through it and the verifier resolves
** through it: one walk for both.
*/
typedef int (*lm_tensorref_fn)(cJSON *obj, cJSON *memsetref, cJSON *memref,
			       void *arg);
int lm_json_each_tensorref(cJSON *j, lm_tensorref_fn fn, void *arg);
/* The same over an operand's carried JSON (an opaque operand's whole
** object; the unknown keys of the others). */
int lm_arg_each_tensorref(const lm_arg *a, lm_tensorref_fn fn, void *arg);

/*
** The register names an instruction holds in its own fields (not in carried
** JSON): a Loop's `registers`, the IntRuntimeValueKind leaves of a
** DynamicForLoop's bounds and of a DoWhile's cond, a sem-ge-reg wait's
** regref. fn(arg, key, name) gets each, key the wire key holding it
** ("registers", "DynamicForLoopAxis", "cond", "on_wait regref"), in that
** order; a non-zero return stops the walk and is returned.
*/
typedef int (*lm_regname_fn)(void *arg, const char *key, const char *name);
int lm_inst_each_regname(const lm_inst *in, lm_regname_fn fn, void *arg);
/*
** Rename every register reference of an instruction through regs (old
** name -> new name, char *): those its operands and its own keys carry
** in JSON (lm_json_each_regref) and those of its fields
** (lm_inst_each_regname). A name regs lacks is kept; a NULL or empty map
** renames nothing.
*/
void lm_inst_rename_registers(lm_inst *in, const lm_strmap *regs);

/*
** Rename the allocation names an instruction carries in JSON: the tensor
** references of its operands (lm_arg_each_tensorref: "memsetref" through
** allocs, "memref" through memlocs), and every register reference
** of its operands, of its own carried keys and of its fields
** (lm_inst_rename_registers, through allocs: a register is an
** allocation), and the tensor references of the operands it carries in
** `indirection_ins`.
** Map values are the new names (char *); a name a map lacks is kept; a
** NULL or empty map renames nothing. The operands' struct members
** (memsetref, memref) are the caller's to rename. Every renamer of the
** linker (the link's copy, kernel provision, inlining) goes through it,
** so they agree on what a reference is.
*/
void lm_inst_rename_json_refs(lm_inst *in, const lm_strmap *allocs,
			      const lm_strmap *memlocs);
/* Its first half: the operands' tensor references only, no register
** (the linker with its remap_registers step switched off). */
void lm_inst_rename_tensor_refs(lm_inst *in, const lm_strmap *allocs,
				const lm_strmap *memlocs);

#endif

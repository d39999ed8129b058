/*
** simcheck.h -- what the simulator models: the opcodes it executes and
** the per-opcode key table.
**
** An instruction whose opcode the simulator does not execute is refused.
** Every key of an instruction it executes (the parsed fields of lm_inst
** and the keys carried in `extra`, the documented ones judged by
** model/fields.def), of its operands, of every allocation and of every
** memory location, and those the module, its queues and its blocks carry,
** is either modelled, harmless metadata, or refused: a
** key whose value can change the result and that the simulator does not
** model stops the run by name instead of being ignored.
** docs/simulator.md has the table.
*/
#ifndef LNCSIM_SIMCHECK_H
#define LNCSIM_SIMCHECK_H

#include "common.h"
#include "module.h"

/*
** 0 when the simulator executes every opcode of m and models every key
** of m that can change a result; else LM_EINPUT with err naming the
** first offender:
**   "FILE: function F/block B/instruction I: opcode 'Activation' key 'acc'
**    = \"Accumulate\" is not modelled by the simulator (it models only
**    \"Idle\")"
**   "FILE: function F/block B/instruction I: opcode 'TensorReduce' is not
**    modelled by the simulator"
** The instructions inside a Loop are not checked (the Loop is refused).
** Called by the simulator's preparation (ls_run, ls_run_multi) and by
** `lncsim verify --sim`. m is only read.
*/
int ls_check_module(const lm_module *m, lm_error *err);

/* 1 when the simulator executes opcode op (a Loop, a carrier, a carried
** opcode and the control-flow, register, synchronization and DMA-block
** opcodes are refused). */
int ls_opcode_executed(lm_opcode op);

/* Called once per refusal with its message (formatted as above). */
typedef void (*ls_refusal_fn)(void *arg, const char *msg);

/*
** Every refusal of m instead of the first, in module order (functions,
** their allocations, then their blocks' instructions), each handed to
** each(arg, msg). Returns the number of refusals: 0 when
** ls_check_module(m) is 0. m is only read.
*/
int ls_check_module_each(const lm_module *m, ls_refusal_fn each, void *arg);

/*
** The documented op keys (model/fields.def) of every executed opcode and
** what the simulator does with each, as the markdown table
** docs/simulator.md carries, appended to b.
*/
void ls_format_key_table(lm_buf *b);

/*
** 0 when simcheck's own rows agree with fields.def (a metadata or
** modelled row names a documented key of every opcode it lists, a row
** of the header table names none); else LM_EINPUT naming the row.
*/
int ls_check_tables(lm_error *err);

#endif

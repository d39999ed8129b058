/*
** simcheck.h -- what the simulator models: the per-opcode key table.
**
** Every key of an instruction the simulator executes (the parsed fields
** of lm_inst and the unknown keys carried in `extra`), of its operands,
** of every allocation and of every memory location is either modelled,
** harmless metadata, or refused: a key whose value can change the result
** and that the simulator does not model stops the run by name instead of
** being ignored. docs/simulator.md has the table.
*/
#ifndef LNCSIM_SIMCHECK_H
#define LNCSIM_SIMCHECK_H

#include "common.h"
#include "module.h"

/*
** 0 when the simulator models every key of m that can change a result;
** else LM_EINPUT with err naming the first offender:
**   "FILE: function F/block B/instruction I: opcode 'Activation' key 'acc'
**    = \"Accumulate\" is not modelled by the simulator"
** The instructions inside a Loop are not checked (a Loop is refused when
** it is reached). Called by the simulator's preparation (ls_run,
** ls_run_multi) and by `lncsim verify --sim`. m is only read.
*/
int ls_check_module(const lm_module *m, lm_error *err);

#endif

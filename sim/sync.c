/*
** sync.c -- synchronization: the semaphores a module declares, each
** core's bank of 256 slots by id and its 256 one-shot events, and the
** three steps the scheduler takes around every scheduled item that
** carries sync_info: are its waits met (ls_sync_ready), its event waits
** consumed when it starts (ls_sync_consume), its updates applied when it
** completes (ls_sync_update). GroupResetSemaphores, the bank clear of a
** Return and the end-of-run event check are here too (docs/simulator.md,
** "Synchronization").
**
** Semaphores are signed 32-bit counters: updates wrap modulo 2^32, waits
** compare signed. A named semaphore is reached by its name; one declared
** with an id is also slot id of its core's bank, which id-form entries
** reach (the core running the item, or an update's target core).
*/
#include "common.h"
#include "sim_int.h"
#include "enumtab.h"

#include <stdlib.h>
#include <string.h>

static const char *S(const char *x)
{
	return x ? x : "";
}

ls_core_sync *ls_core_syncs(ls_machine *mc, int c)
{
	ls_core_sync *cs = mc->csync[c];
	if (!cs) {
		cs = lm_xcalloc(1, sizeof *cs);
		for (int i = 0; i < 256; i++)
			cs->bank[i] = -1;
		mc->csync[c] = cs;
	}
	return cs;
}

/* The semaphore index of slot id of core c's bank, or -1. */
static int bank_slot(const ls_machine *mc, int c, int id)
{
	const ls_core_sync *cs;
	if (c < 0 || c >= LS_MAX_CORES || id < 0 || id > 255)
		return -1;
	cs = mc->csync[c];
	return cs ? cs->bank[id] : -1;
}

/* ---- declarations ------------------------------------------------------- */

int ls_sync_declare(ls_machine *mc, int mi, char *why, size_t n)
{
	ls_smod *sm = &mc->mods[mi];
	const lm_module *m = sm->m;
	sm->sem_base = mc->n_sems;
	sm->n_sems = m->n_semaphores;
	for (int i = 0; i < m->n_semaphores; i++) {
		const lm_semaphore *d = &m->semaphores[i];
		ls_ssem *s;
		int64_t core = d->has_core ? d->core : sm->core;
		if (d->init < INT32_MIN || d->init > INT32_MAX) {
			snprintf(why, n, "semaphore '%s': init %lld is outside "
				 "the signed 32-bit range of a semaphore",
				 S(d->name), (long long)d->init);
			return -1;
		}
		if (core < 0 || core >= LS_MAX_CORES) {
			snprintf(why, n, "semaphore '%s': core %lld is outside "
				 "[0, %d)", S(d->name), (long long)core,
				 LS_MAX_CORES);
			return -1;
		}
		if (d->has_id && (d->id < 0 || d->id > 255)) {
			snprintf(why, n, "semaphore '%s': id %lld is outside "
				 "0..255", S(d->name), (long long)d->id);
			return -1;
		}
		if (d->has_id) {
			/* a slot another module (or this one) declared: the
			   same semaphore under a second name */
			int at = ls_core_syncs(mc, (int)core)->bank[d->id];
			if (at >= 0) {
				if (mc->sems[at].init != d->init) {
					snprintf(why, n, "semaphore '%s': id %lld "
						 "of core %lld is also semaphore "
						 "'%s', with init %d, not %lld",
						 S(d->name), (long long)d->id,
						 (long long)core,
						 S(mc->sems[at].name),
						 mc->sems[at].init,
						 (long long)d->init);
					return -1;
				}
				lm_strmap_put(&sm->sems, d->name,
					      (void *)(intptr_t)(at + 1));
				continue;
			}
		}
		lm_grow(&mc->sems, &mc->cap_sems, mc->n_sems + 1,
			sizeof *mc->sems);
		s = &mc->sems[mc->n_sems];
		s->name = d->name;
		s->mod = mi;
		s->value = s->init = (int32_t)d->init;
		s->core = (int)core;
		s->id = -1;
		if (d->has_id) {
			ls_core_syncs(mc, (int)core)->bank[d->id] = mc->n_sems;
			s->id = (int)d->id;
		}
		lm_strmap_put(&sm->sems, d->name,
			      (void *)(intptr_t)(mc->n_sems + 1));
		mc->n_sems++;
	}
	return 0;
}

/* ---- preparation -------------------------------------------------------- */

static const char *mode_name(int upd, int mode)
{
	const char *s = lm_enum_name(upd ? LM_ET_UpdateMode : LM_ET_WaitMode,
				     mode);
	return s ? s : "?";
}

/* Prepare entry e (upd: an on_update) of module mi into o; a problem into
** *fault when it is NULL. */
static void prep_entry(ls_machine *mc, int mi, const lm_sync *e, int upd,
		       ls_ssync *o, char **fault)
{
	ls_smod *sm = &mc->mods[mi];
	const char *list = upd ? "on_update" : "on_wait";
	const char *mname = mode_name(upd, e->mode);
	int is_evt = upd ? e->mode == LM_UPD_EVT_SET
			 : e->mode == LM_WAIT_EVT_SET_THEN_CLEAR;
	char *why = NULL;

	o->mode = e->mode;
	o->reg = -1;
	o->core = -1;
	o->value = e->has_value ? e->value : 1;
	o->name = e->semaphore;
	if (e->semaphore) {
		o->kind = LS_SYNC_NAMED;
		o->slot = (int)(intptr_t)lm_strmap_lookup(&sm->sems,
							  e->semaphore) - 1;
		if (o->slot < 0)
			why = lm_xasprintf("%s semaphore '%s' is unknown",
					   upd ? "signal" : "wait",
					   e->semaphore);
		else if (is_evt)
			why = lm_xasprintf("%s %s: an event is given by its id, "
					   "not by a name ('%s')", list, mname,
					   e->semaphore);
	} else {
		o->kind = is_evt ? LS_SYNC_EVT : LS_SYNC_ID;
		o->slot = (int)e->id;
		if (e->id < 0 || e->id > 255)
			why = lm_xasprintf("%s: %s id %lld is outside 0..255",
					   list, is_evt ? "event" : "semaphore",
					   (long long)e->id);
	}
	if (!why && !upd) {
		switch (e->mode) {
		case LM_WAIT_EVT_SET_THEN_CLEAR:
			break;
		case LM_WAIT_SEM_GE_IMM:
			if (!e->has_value)
				why = lm_xasprintf("on_wait sem-ge-imm: no "
						   "wait_value");
			else if (e->value < INT32_MIN || e->value > INT32_MAX)
				why = lm_xasprintf("on_wait sem-ge-imm: "
					"wait_value %lld is outside the signed "
					"32-bit range of a semaphore",
					(long long)e->value);
			break;
		case LM_WAIT_SEM_GE_REG:
			o->reg = e->regref ? ls_reg_slot(mc, mi, e->regref)
					   : -1;
			o->name = e->regref;
			if (o->reg < 0)
				why = lm_xasprintf("on_wait sem-ge-reg: regref "
						   "'%s' is no register "
						   "allocation of the module",
						   S(e->regref));
			break;
		default:
			why = lm_xasprintf("on_wait: mode '%s' has no meaning",
					   mname);
			break;
		}
	}
	if (!why && upd) {
		switch (e->mode) {
		case LM_UPD_EVT_SET:
			break;
		case LM_UPD_SEM_ADD_IMM: case LM_UPD_SEM_SUB_IMM:
		case LM_UPD_SEM_WR_IMM:
			if (!e->has_value)
				why = lm_xasprintf("on_update %s: no "
						   "update_value", mname);
			/* a 32-bit counter: an amount of more bits has no
			   meaning (read signed or unsigned, it fits) */
			else if (e->value < INT32_MIN ||
				 e->value > (int64_t)UINT32_MAX)
				why = lm_xasprintf("on_update %s: update_value "
					"%lld does not fit the 32 bits of a "
					"semaphore", mname,
					(long long)e->value);
			break;
		case LM_UPD_SEM_INC: case LM_UPD_SEM_DEC:
			if (e->has_value && e->value != 1)
				why = lm_xasprintf("on_update %s: value %lld "
					"(Semaphore %s value must be 1)", mname,
					(long long)e->value,
					e->mode == LM_UPD_SEM_INC ? "inc" : "dec");
			break;
		default:
			why = lm_xasprintf("on_update: mode '%s' has no "
					   "meaning", mname);
			break;
		}
		if (!why && e->has_core) {
			if (e->core < 0 || e->core >= LS_MAX_CORES)
				why = lm_xasprintf("on_update: core %lld is "
						   "outside [0, %d)",
						   (long long)e->core,
						   LS_MAX_CORES);
			else if (o->kind == LS_SYNC_NAMED &&
				 mc->sems[o->slot].core != e->core)
				why = lm_xasprintf("on_update: semaphore '%s' is "
					"of core %d, not of the target core "
					"%lld", e->semaphore,
					mc->sems[o->slot].core,
					(long long)e->core);
			else
				o->core = (int)e->core;
		}
	}
	if (why && !*fault)
		*fault = why;
	else
		free(why);
}

void ls_sync_prepare(ls_machine *mc, int mi, const lm_inst *in,
		     ls_ssyncs *sy, char **fault)
{
	int n = in->n_wait + in->n_update;
	memset(sy, 0, sizeof *sy);
	if (n == 0)
		return;
	sy->wait = lm_xcalloc((size_t)n, sizeof *sy->wait);
	sy->update = sy->wait + in->n_wait;
	sy->n_wait = in->n_wait;
	sy->n_update = in->n_update;
	for (int i = 0; i < in->n_wait; i++)
		prep_entry(mc, mi, &in->wait[i], 0, &sy->wait[i], fault);
	for (int i = 0; i < in->n_update; i++)
		prep_entry(mc, mi, &in->update[i], 1, &sy->update[i], fault);
}

void ls_sync_free(ls_ssyncs *sy)
{
	free(sy->wait);
	memset(sy, 0, sizeof *sy);
}

/* ---- waits -------------------------------------------------------------- */

static int evt_is_set(const ls_machine *mc, int c, int id)
{
	const ls_core_sync *cs = mc->csync[c];
	return cs && (cs->evt[id >> 6] >> (id & 63) & 1);
}

/* The semaphore entry w / u reaches on core c (its target core for an
** update), or -1 for a slot the core's bank does not declare. */
static int sem_of(const ls_machine *mc, int c, const ls_ssync *w)
{
	if (w->kind == LS_SYNC_NAMED)
		return w->slot;
	return bank_slot(mc, w->core >= 0 ? w->core : c, w->slot);
}

static void undeclared(char *why, size_t n, const char *list, int id, int c)
{
	snprintf(why, n, "%s: semaphore id %d is not declared by the module "
		 "(core %d)", list, id, c);
}

/* The threshold of semaphore wait w on engine eng of core c: 0, or -1
** with why (a register not written). */
static int threshold(ls_machine *mc, int c, int eng, const ls_ssync *w,
		     int64_t *thr, char *why, size_t n)
{
	uint32_t r;
	if (w->mode != LM_WAIT_SEM_GE_REG) {
		*thr = w->value;
		return 0;
	}
	if (ls_reg_read(mc, c, eng, w->reg, &r)) {
		char buf[400];
		ls_reg_unwritten(mc, c, eng, w->reg, buf, sizeof buf);
		snprintf(why, n, "on_wait sem-ge-reg reads %s", buf);
		return -1;
	}
	*thr = (int32_t)r;
	return 0;
}

int ls_sync_ready(ls_machine *mc, int c, int eng, const ls_ssyncs *sy,
		  int *first, char *why, size_t n)
{
	for (int i = 0; i < sy->n_wait; i++) {
		const ls_ssync *w = &sy->wait[i];
		int64_t thr;
		int s;
		if (w->kind == LS_SYNC_EVT) {
			if (!evt_is_set(mc, c, w->slot)) {
				*first = i;
				return 0;
			}
			continue;
		}
		if ((s = sem_of(mc, c, w)) < 0) {
			undeclared(why, n, "on_wait", w->slot, c);
			return -1;
		}
		if (threshold(mc, c, eng, w, &thr, why, n))
			return -1;
		if ((int64_t)mc->sems[s].value < thr) {
			*first = i;
			return 0;
		}
	}
	return 1;
}

unsigned ls_sync_wait_key(const ls_machine *mc, int c, const ls_ssyncs *sy,
			   int first, int *key)
{
	const ls_ssync *w = &sy->wait[first];
	if (w->kind == LS_SYNC_EVT) {
		*key = -1;
		return ls_sync_key_ver(mc, c, -1);
	}
	*key = sem_of(mc, c, w);
	return ls_sync_key_ver(mc, c, *key);
}

unsigned ls_sync_key_ver(const ls_machine *mc, int c, int key)
{
	if (key >= 0)
		return mc->sems[key].ver;
	return mc->csync[c] ? mc->csync[c]->evt_ver : 0;
}

int ls_sync_consume(ls_machine *mc, int c, const ls_ssyncs *sy,
		    const ls_sinst *by, char *why, size_t n)
{
	for (int i = 0; i < sy->n_wait; i++) {
		const ls_ssync *w = &sy->wait[i];
		ls_core_sync *cs;
		if (w->kind != LS_SYNC_EVT)
			continue;
		if (!evt_is_set(mc, c, w->slot)) {
			snprintf(why, n, "event %d of core %d is cleared before "
				 "it was set (on_wait %d of '%s' finds it "
				 "already consumed)", w->slot, c, i,
				 by ? S(by->in->name) : "");
			return -1;
		}
		cs = ls_core_syncs(mc, c);
		cs->evt[w->slot >> 6] &= ~(1ull << (w->slot & 63));
		cs->evt_ver++;
		cs->evt_by[w->slot] = NULL;
	}
	return 0;
}

void ls_sync_describe(ls_machine *mc, int c, int eng, const ls_ssync *w,
		      char *buf, size_t n)
{
	char thr[300];
	int s;
	uint32_t r;
	if (w->kind == LS_SYNC_EVT) {
		snprintf(buf, n, "event %d of core %d to be set", w->slot, c);
		return;
	}
	if (w->mode == LM_WAIT_SEM_GE_REG) {
		if (ls_reg_read(mc, c, eng, w->reg, &r) == 0)
			snprintf(thr, sizeof thr, "register '%s' = %d",
				 S(w->name), (int32_t)r);
		else
			snprintf(thr, sizeof thr, "register '%s' (unwritten)",
				 S(w->name));
	} else {
		snprintf(thr, sizeof thr, "%lld", (long long)w->value);
	}
	s = sem_of(mc, c, w);
	if (w->kind == LS_SYNC_NAMED)
		snprintf(buf, n, "semaphore '%s' >= %s (value %d)",
			 S(mc->sems[s].name), thr, mc->sems[s].value);
	else if (s >= 0)
		snprintf(buf, n, "semaphore id %d ('%s') of core %d >= %s "
			 "(value %d)", w->slot, S(mc->sems[s].name), c, thr,
			 mc->sems[s].value);
	else
		snprintf(buf, n, "semaphore id %d of core %d (not declared) "
			 ">= %s", w->slot, c, thr);
}

/* ---- updates ------------------------------------------------------------ */

/* v op amount, modulo 2^32. */
static int32_t apply_mode(int mode, int32_t v, int64_t amount)
{
	uint32_t u = (uint32_t)v, a = (uint32_t)(uint64_t)amount;
	switch (mode) {
	case LM_UPD_SEM_ADD_IMM: u += a; break;
	case LM_UPD_SEM_SUB_IMM: u -= a; break;
	case LM_UPD_SEM_INC: u += 1; break;
	case LM_UPD_SEM_DEC: u -= 1; break;
	case LM_UPD_SEM_WR_IMM: u = a; break;
	default: break;
	}
	return (int32_t)u;
}

int ls_sync_update(ls_machine *mc, int c, const ls_ssyncs *sy,
		   const ls_sinst *by, char *why, size_t n)
{
	for (int i = 0; i < sy->n_update; i++) {
		const ls_ssync *u = &sy->update[i];
		int tc = u->core >= 0 ? u->core : c, s;
		if (u->kind == LS_SYNC_EVT) {
			ls_core_sync *cs = ls_core_syncs(mc, tc);
			if (evt_is_set(mc, tc, u->slot)) {
				const ls_sinst *p = cs->evt_by[u->slot];
				snprintf(why, n, "event %d of core %d set twice "
					 "('%s', then '%s' before a wait "
					 "consumed it)", u->slot, tc,
					 p ? S(p->in->name) : "",
					 by ? S(by->in->name) : "");
				return -1;
			}
			cs->evt[u->slot >> 6] |= 1ull << (u->slot & 63);
			cs->evt_ver++;
			cs->evt_by[u->slot] = by;
			if (mc->race)
				ls_race_evt_set(mc->race, tc, u->slot);
			continue;
		}
		if ((s = sem_of(mc, c, u)) < 0) {
			undeclared(why, n, "on_update", u->slot, tc);
			return -1;
		}
		mc->sems[s].value = apply_mode(u->mode, mc->sems[s].value,
					       u->value);
		mc->sems[s].ver++;
		if (mc->race)
			ls_race_sem_set(mc->race, s, mc->sems[s].value,
					u->mode == LM_UPD_SEM_WR_IMM);
	}
	return 0;
}

void ls_sync_race_join(ls_machine *mc, int c, int eng, const ls_ssyncs *sy)
{
	for (int i = 0; i < sy->n_wait; i++) {
		const ls_ssync *w = &sy->wait[i];
		int64_t thr;
		char why[8];
		int s;
		if (w->kind == LS_SYNC_EVT) {
			ls_race_evt_wait(mc->race, c, w->slot);
			continue;
		}
		if ((s = sem_of(mc, c, w)) < 0 ||
		    threshold(mc, c, eng, w, &thr, why, sizeof why))
			continue;
		ls_race_sem_wait(mc->race, s, thr);
	}
}

void ls_sync_bump(ls_machine *mc, int i)
{
	mc->sems[i].value = apply_mode(LM_UPD_SEM_INC, mc->sems[i].value, 1);
	mc->sems[i].ver++;
	if (mc->race)
		ls_race_sem_set(mc->race, i, mc->sems[i].value, 0);
}

int ls_sync_group_reset(ls_machine *mc, int c, const ls_sinst *si, char *why,
			size_t n)
{
	const lm_inst *in = si->in;
	for (int i = 0; i < in->n_sema_group; i++) {
		int s = bank_slot(mc, c, in->sema_group[i] > 255 ? -1 :
				  (int)in->sema_group[i]);
		if (s < 0) {
			snprintf(why, n, "sema_group: semaphore id %lld is not "
				 "declared by the module (core %d)",
				 (long long)in->sema_group[i], c);
			return -1;
		}
		mc->sems[s].value = 0;
		mc->sems[s].ver++;
		if (mc->race)
			ls_race_sem_set(mc->race, s, 0, 1);
	}
	return 0;
}

void ls_sync_clear_bank(ls_machine *mc, int c)
{
	ls_core_sync *cs = mc->csync[c];
	if (!cs)
		return;
	for (int id = 0; id < 256; id++)
		if (cs->bank[id] >= 0) {
			mc->sems[cs->bank[id]].value = 0;
			mc->sems[cs->bank[id]].ver++;
			if (mc->race)
				ls_race_sem_set(mc->race, cs->bank[id], 0,
						1);
		}
	memset(cs->evt, 0, sizeof cs->evt);
	cs->evt_ver++;
	memset(cs->evt_by, 0, sizeof cs->evt_by);
}

int ls_sync_check_end(ls_machine *mc, char *why, size_t n)
{
	for (int c = 0; c < LS_MAX_CORES; c++) {
		const ls_core_sync *cs = mc->csync[c];
		if (!cs)
			continue;
		for (int id = 0; id < 256; id++)
			if (cs->evt[id >> 6] >> (id & 63) & 1) {
				const ls_sinst *p = cs->evt_by[id];
				snprintf(why, n, "event %d of core %d was set by "
					 "'%s' and never waited on", id, c,
					 p ? S(p->in->name) : "");
				return -1;
			}
	}
	return 0;
}

void ls_sync_reset(ls_machine *mc)
{
	for (int i = 0; i < mc->n_sems; i++) {
		mc->sems[i].value = mc->sems[i].init;
		mc->sems[i].ver++;
	}
	for (int c = 0; c < LS_MAX_CORES; c++) {
		ls_core_sync *cs = mc->csync[c];
		if (!cs)
			continue;
		memset(cs->evt, 0, sizeof cs->evt);
		cs->evt_ver++;
		memset(cs->evt_by, 0, sizeof cs->evt_by);
		memset(cs->dma_out, 0, sizeof cs->dma_out);
	}
}

void ls_sync_free_all(ls_machine *mc)
{
	for (int c = 0; c < LS_MAX_CORES; c++) {
		free(mc->csync[c]);
		mc->csync[c] = NULL;
	}
}

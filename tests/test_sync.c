/*
** test_sync.c -- synchronization in the simulator: every wait mode
** against every update mode with values computed by hand, the int32
** wrap, a counting semaphore that the second update satisfies, the event
** errors (set twice, cleared before set, never consumed), an update of
** another core's bank, the joins (AllEngineBarrier and Exit on ALL) with
** their own waits and updates, the expansion of other ALL instructions,
** GroupResetSemaphores, Drain, the bank clear of a Return, the deadlock
** report, and a two-core module on id-form semaphores linked and run
** against its per-core modules (lncsim diff), and DMA blocks under the
** same rules: a descriptor's id-form wait (and its deadlock line), a
** block's event wait consumed when it opens, a descriptor's update
** releasing an engine, a Drain waiting for a trigger's block. The
** modules are written
** here in the 2.24 wire form (' for ").
*/
#include "common.h"
#include "testutil.h"
#include "verify.h"
#include "sim.h"
#include "sim_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- modules ------------------------------------------------------------ */

#define DRAM(n, kind, addr)                                                  \
	"{'name':'" n "','kind':'" kind "','dtype':'float32','tensor_shape':" \
	"[1,64],'addr_space':'Shared','file':'','memorylocations':[{'name':'" \
	n "','type':'DRAM','addr':" addr ",'dims':[1,256],'bank':0,'base':0," \
	"'allocated':true}]}"
#define REG(n)                                                               \
	"{'name':'" n "','kind':'Internal','dtype':'int32','tensor_shape':[1]," \
	"'memorylocations':[{'name':'" n "','type':'REG','addr':0}]}"

/*
** The wire text of a module for core: semaphores sems (the body of the
** list; s_dma, the queue's, comes first), allocations x (ExternalInput)
** and y<core> (ExternalOutput), registers r and r2, and a block whose
** first instruction copies x into y<core> on SP ('cp', queue q0, s_dma +1)
** and whose others are insts (freed). Caller frees.
*/
static char *mod_text(int core, const char *sems, char *insts)
{
	char y[8];
	char *t, *u, *v;
	snprintf(y, sizeof y, "y%d", core);
	t = lm_xasprintf(
		"{'version':2,'arch':'gen3','name':'sync%d','attributes':"
		"{'neuron_core_id':%d},'semaphores':[{'name':'s_dma','init':0}"
		"%s%s],'queues':[{'name':'q0','instances':[{'name':'q0a',"
		"'semaphore':'s_dma'}]}],'functions':[{'name':'sg0000',"
		"'attributes':[],'allocations':[" DRAM("x", "ExternalInput", "0")
		"," DRAM("YY", "ExternalOutput", "4096") "," REG("r") ","
		REG("r2") "],'blocks':[{'name':'b','instructions':["
		"{'opcode':'DMACopy','name':'cp','engine':'SP','queue':'q0',"
		"'ins':[{'kind':'physical_ap','ap':[[64,1],[1,64]],'dtype':"
		"'float32','offset':0,'memsetref':'x','memref':'x'}],'outs':"
		"[{'kind':'physical_ap','ap':[[64,1],[1,64]],'dtype':'float32',"
		"'offset':0,'memsetref':'YY','memref':'YY'}]}%s%s]}]}]}",
		core, core, *sems ? "," : "", sems, *insts ? "," : "", insts);
	free(insts);
	u = tu_replace_all(t, "YY", y);
	v = tu_replace_all(u, "'", "\"");
	free(t);
	free(u);
	return v;
}

/* An instruction without operands: op, name, engine, then more keys. */
static char *inst(const char *op, const char *name, const char *eng,
		  const char *more)
{
	return lm_xasprintf("{'opcode':'%s','name':'%s','engine':'%s',"
			    "'ins':[],'outs':[]%s%s}", op, name, eng,
			    *more ? "," : "", more);
}

/* The instructions given (NULL ends; each freed), joined by commas. */
static char *list(const char *first, ...)
{
	lm_buf b = LM_BUF_INIT;
	va_list ap;
	const char *s = first;
	va_start(ap, first);
	for (int i = 0; s; i++, s = va_arg(ap, const char *)) {
		lm_buf_printf(&b, "%s%s", i ? "," : "", s);
		free((char *)s);
	}
	va_end(ap);
	return lm_buf_detach(&b);
}

/* "RegisterMove dst := v" on engine eng. */
static char *mov(const char *name, const char *eng, const char *dst,
		 long long v)
{
	return lm_xasprintf("{'opcode':'RegisterMove','name':'%s','engine':"
			    "'%s','ins':[{'kind':'imm_value','dtype':'int32',"
			    "'value':%lld}],'outs':[{'kind':'register_access',"
			    "'dtype':'int32','regref':'%s'}]}", name, eng, v,
			    dst);
}

/* ---- running ------------------------------------------------------------ */

typedef struct run {
	lm_module *m;
	ls_machine *mc;
	ls_tensors in;
	ls_result r;
	lm_error err;
	int rc;
} run;

static void inputs(ls_tensors *in)
{
	float x[64];
	int64_t shape[2] = { 1, 64 };
	for (int i = 0; i < 64; i++)
		x[i] = (float)i;
	memset(in, 0, sizeof *in);
	ls_tensors_add(in, "x", LM_DT_FLOAT32, shape, 2, x);
}

/* Parse, verify (the test fails on a load or verifier error), prepare
** and run text (freed) once with the schedule seed; R->rc the run's. */
static void run_text(run *R, char *text, uint64_t seed)
{
	ls_options o;
	memset(R, 0, sizeof *R);
	memset(&o, 0, sizeof o);
	o.perturb_seed = seed;
	R->m = tu_parse(text, &R->err);
	ck_assert_msg(R->m != NULL, "%s\n%s", R->err.msg, text);
	ck_assert_msg(lm_verify(R->m, NULL, &R->err) == 0, "%s", R->err.msg);
	free(text);
	inputs(&R->in);
	R->rc = ls_machine_prepare(&R->mc, &R->m, 1, 0, &R->in, &o, &R->err);
	if (R->rc == 0)
		R->rc = ls_machine_run(R->mc, &o, &R->r, &R->err);
}

static void run_free(run *R)
{
	if (R->rc == 0)
		ls_result_free(&R->r);
	ls_machine_free(R->mc);
	ls_tensors_free(&R->in);
	lm_module_free(R->m);
}

/* The value semaphore name holds after the run. */
static int32_t sem(const run *R, const char *name)
{
	for (int i = 0; i < R->mc->n_sems; i++)
		if (!strcmp(R->mc->sems[i].name, name))
			return R->mc->sems[i].value;
	ck_abort_msg("no semaphore %s", name);
	return 0;
}

#define ck_run_ok(R) ck_assert_msg((R)->rc == 0, "%s", (R)->err.msg)
#define ck_run_fails(R, needle)                                              \
	do {                                                                 \
		ck_assert_msg((R)->rc != 0, "ran: want '%s'", needle);       \
		ck_assert_msg(strstr((R)->err.msg, needle) != NULL,          \
			      "'%s' not in: %s", needle, (R)->err.msg);      \
	} while (0)

/* ---- updates ------------------------------------------------------------ */

/* One update of semaphore id 3 (init init: a declaration cannot be
** negative, so a first sem-wr-imm puts it there) by mode with value
** (NULL: no value): the value after the run. */
static int32_t after_update(long long init, const char *mode, const char *val)
{
	char sems[80], upd[160], pre[160];
	run R;
	int32_t v;
	snprintf(sems, sizeof sems, "{'name':'a','init':%lld,'id':3}",
		 init < 0 ? 0 : init);
	snprintf(pre, sizeof pre, "'sync_info':{'on_update':[{'id':3,'mode':"
		 "'sem-wr-imm','update_value':%lld}]}", init);
	snprintf(upd, sizeof upd, "'sync_info':{'on_update':[{'id':3,'mode':"
		 "'%s'%s%s}]}", mode, val ? ",'update_value':" : "",
		 val ? val : "");
	run_text(&R, mod_text(0, sems, list(inst("NoOp", "pre", "Pool", pre),
					    inst("NoOp", "u", "Pool", upd),
					    NULL)), 0);
	ck_run_ok(&R);
	v = sem(&R, "a");
	run_free(&R);
	return v;
}

/* Every update mode, the wrap at both ends of int32. */
START_TEST(test_update_modes)
{
	ck_assert_int_eq(after_update(7, "sem-add-imm", "5"), 12);
	ck_assert_int_eq(after_update(7, "sem-add-imm", "-9"), -2);
	ck_assert_int_eq(after_update(INT_MAX, "sem-add-imm", "1"), INT_MIN);
	ck_assert_int_eq(after_update(7, "sem-sub-imm", "3"), 4);
	ck_assert_int_eq(after_update(INT_MIN, "sem-sub-imm", "1"), INT_MAX);
	ck_assert_int_eq(after_update(7, "sem-inc", NULL), 8);
	ck_assert_int_eq(after_update(7, "sem-inc", "1"), 8);
	ck_assert_int_eq(after_update(INT_MAX, "sem-inc", NULL), INT_MIN);
	ck_assert_int_eq(after_update(7, "sem-dec", NULL), 6);
	ck_assert_int_eq(after_update(INT_MIN, "sem-dec", NULL), INT_MAX);
	ck_assert_int_eq(after_update(7, "sem-wr-imm", "42"), 42);
	ck_assert_int_eq(after_update(7, "sem-wr-imm", "-5"), -5);
	/* an amount of 32 bits read unsigned wraps like any other
	   (beyond 32 bits it is refused: test_update_range) */
	ck_assert_int_eq(after_update(1, "sem-add-imm", "4294967295"), 0);
}
END_TEST

/* ---- waits x updates ---------------------------------------------------- */

typedef struct upd_case {
	const char *mode, *value; /* the update (value NULL: none) */
	long long init, after;    /* the semaphore before, after (by hand) */
} upd_case;

static const upd_case upd_cases[] = {
	{ "sem-add-imm", "5", 2, 7 },
	{ "sem-sub-imm", "-5", 2, 7 },
	{ "sem-inc", NULL, 6, 7 },
	{ "sem-dec", NULL, INT_MIN, INT_MAX },
	{ "sem-wr-imm", "7", 0, 7 },
};

/*
** Producer 'p' (Pool) updates id 3 after 'd' (Pool) wrote the initial
** value into it (a declaration cannot be negative); consumer 'w' (DVE) waits for id 3 >= thr by wait mode
** (sem-ge-reg: the threshold in register r, moved there on DVE first).
*/
static char *wait_module(const upd_case *u, const char *wmode, long long thr)
{
	char sems[80], upd[200], wt[200], pre[200];
	snprintf(sems, sizeof sems, "{'name':'a','init':%lld,'id':3}",
		 u->init < 0 ? 0 : u->init);
	snprintf(pre, sizeof pre, "'sync_info':{'on_update':[{'id':3,'mode':"
		 "'sem-wr-imm','update_value':%lld}]}", u->init);
	snprintf(upd, sizeof upd, "'sync_info':{'on_update':[{'id':3,'mode':"
		 "'%s'%s%s}]}", u->mode, u->value ? ",'update_value':" : "",
		 u->value ? u->value : "");
	if (!strcmp(wmode, "sem-ge-reg"))
		snprintf(wt, sizeof wt, "'sync_info':{'on_wait':[{'id':3,"
			 "'mode':'sem-ge-reg','regref':'r'}]}");
	else
		snprintf(wt, sizeof wt, "'sync_info':{'on_wait':[{'id':3,"
			 "'mode':'sem-ge-imm','wait_value':%lld}]}", thr);
	return mod_text(0, sems, list(mov("mv", "DVE", "r", thr),
				      inst("NoOp", "d", "Pool", pre),
				      inst("NoOp", "p", "Pool", upd),
				      inst("EventSemaphore", "w", "DVE", wt),
				      NULL));
}

/* Both semaphore wait modes against the five semaphore updates: the
** threshold the update reaches lets the waiter run, one more deadlocks
** naming the value, or is refused past INT32_MAX (each under four
** schedules). */
START_TEST(test_waits_x_updates)
{
	const char *wmodes[] = { "sem-ge-imm", "sem-ge-reg" };
	for (int w = 0; w < 2; w++)
		for (size_t k = 0; k < sizeof upd_cases / sizeof *upd_cases;
		     k++) {
			const upd_case *u = &upd_cases[k];
			char want[200];
			run R;
			for (uint64_t seed = 0; seed < 4; seed++) {
				run_text(&R, wait_module(u, wmodes[w], u->after),
					 seed);
				ck_assert_msg(R.rc == 0, "%s x %s: %s", wmodes[w],
					      u->mode, R.err.msg);
				ck_assert_int_eq(sem(&R, "a"), (int32_t)u->after);
				run_free(&R);
			}
			if (u->after == INT_MAX && w == 1)
				continue; /* no int32 register above it */
			run_text(&R, wait_module(u, wmodes[w], u->after + 1), 0);
			if (w == 0 && u->after == INT_MAX)
				snprintf(want, sizeof want, "on_wait sem-ge-imm: "
					 "wait_value %lld is outside the signed "
					 "32-bit range", u->after + 1);
			else if (w == 0)
				snprintf(want, sizeof want, "'w' (EventSemaphore) "
					 "waits for semaphore id 3 ('a') of core "
					 "0 >= %lld (value %d)", u->after + 1,
					 (int32_t)u->after);
			else
				snprintf(want, sizeof want, "'w' (EventSemaphore) "
					 "waits for semaphore id 3 ('a') of core "
					 "0 >= register 'r' = %lld (value %d)",
					 u->after + 1, (int32_t)u->after);
			ck_run_fails(&R, want);
			run_free(&R);
		}
}
END_TEST

/* The event wait against evt-set: consumed (no event left), and without
** the set the waiter deadlocks on the event. */
START_TEST(test_event_wait)
{
	run R;
	for (uint64_t seed = 0; seed < 4; seed++) {
		run_text(&R, mod_text(0, "", list(
			inst("NoOp", "p", "Pool", "'sync_info':{'on_update':"
			     "[{'id':5,'mode':'evt-set'}]}"),
			inst("EventSemaphore", "w", "DVE", "'sync_info':"
			     "{'on_wait':[{'id':5,'mode':'evt-set-then-clear'}]}"),
			/* set again after the consume: no double set */
			inst("NoOp", "p2", "DVE", "'sync_info':{'on_update':"
			     "[{'id':5,'mode':'evt-set'}]}"),
			inst("NoOp", "w2", "DVE", "'sync_info':"
			     "{'on_wait':[{'id':5,'mode':'evt-set-then-clear'}]}"),
			NULL)), seed);
		ck_run_ok(&R);
		ck_assert_int_eq(R.mc->csync[0]->evt[0], 0);
		run_free(&R);
	}
	run_text(&R, mod_text(0, "", list(
		inst("EventSemaphore", "w", "DVE", "'sync_info':{'on_wait':"
		     "[{'id':5,'mode':'evt-set-then-clear'}]}"), NULL)), 0);
	ck_run_fails(&R, "core 0 DVE: 'w' (EventSemaphore) waits for event 5 "
		     "of core 0 to be set");
	run_free(&R);
}
END_TEST

/* A counting semaphore: one update leaves it at 1 (deadlock), the second
** satisfies the wait for 2. */
START_TEST(test_counting)
{
	const char *sems = "{'name':'c','init':0,'id':9}";
	const char *inc = "'sync_info':{'on_update':[{'id':9,'mode':"
			  "'sem-inc'}]}";
	const char *w2 = "'sync_info':{'on_wait':[{'id':9,'mode':'sem-ge-imm',"
			 "'wait_value':2}]}";
	run R;
	run_text(&R, mod_text(0, sems, list(inst("NoOp", "p1", "Activation",
						 inc),
					    inst("NoOp", "w", "DVE", w2),
					    NULL)), 0);
	ck_run_fails(&R, "waits for semaphore id 9 ('c') of core 0 >= 2 "
		     "(value 1)");
	run_free(&R);
	for (uint64_t seed = 0; seed < 4; seed++) {
		run_text(&R, mod_text(0, sems, list(
			inst("NoOp", "p1", "Activation", inc),
			inst("NoOp", "p2", "Pool", inc),
			inst("NoOp", "w", "DVE", w2), NULL)), seed);
		ck_run_ok(&R);
		ck_assert_int_eq(sem(&R, "c"), 2);
		run_free(&R);
	}
}
END_TEST

/* ---- event errors ------------------------------------------------------- */

/* The event errors, and a register threshold read before it is written. */
START_TEST(test_event_errors)
{
	const char *set = "'sync_info':{'on_update':[{'id':5,'mode':"
			  "'evt-set'}]}";
	run R;
	run_text(&R, mod_text(0, "", list(inst("NoOp", "p", "SP", set),
					  inst("NoOp", "q", "SP", set),
					  NULL)), 0);
	ck_run_fails(&R, "instruction q: event 5 of core 0 set twice ('p', "
		     "then 'q' before a wait consumed it)");
	run_free(&R);

	/* two waits of one instruction consume the event twice */
	run_text(&R, mod_text(0, "", list(inst("NoOp", "p", "SP", set),
		inst("NoOp", "w", "SP", "'sync_info':{'on_wait':[{'id':5,"
		     "'mode':'evt-set-then-clear'},{'id':5,'mode':"
		     "'evt-set-then-clear'}]}"), NULL)), 0);
	ck_run_fails(&R, "instruction w: event 5 of core 0 is cleared before "
		     "it was set");
	run_free(&R);

	run_text(&R, mod_text(0, "", list(inst("NoOp", "p", "SP", set),
					  NULL)), 0);
	ck_run_fails(&R, "event 5 of core 0 was set by 'p' and never waited "
		     "on");
	run_free(&R);

	/* a register threshold no instruction of the waiting engine wrote */
	run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
		mov("mv", "Pool", "r", 1),
		inst("NoOp", "w", "DVE", "'sync_info':{'on_wait':[{'id':3,"
		     "'mode':'sem-ge-reg','regref':'r'}]}"), NULL)), 0);
	ck_run_fails(&R, "instruction w: on_wait sem-ge-reg reads register "
		     "'r', which no instruction has written on DVE");
	run_free(&R);
}
END_TEST

/* ---- cores -------------------------------------------------------------- */

/* Core 1 updates id 3 of core 0's bank (its module declares that slot as
** 'a_nc0', core 0: the same semaphore as core 0's 'a'); core 0 waits for
** it. */
static char *remote_pair(int which, const char *target)
{
	char upd[160];
	if (which == 0)
		return mod_text(0, "{'name':'a','init':0,'id':3}", list(
			inst("EventSemaphore", "w", "DVE", "'sync_info':"
			     "{'on_wait':[{'id':3,'mode':'sem-ge-imm',"
			     "'wait_value':4}]}"), NULL));
	snprintf(upd, sizeof upd, "'sync_info':{'on_update':[{'id':3,'mode':"
		 "'sem-add-imm','update_value':4%s}]}", target);
	return mod_text(1, "{'name':'a','init':0,'id':3},{'name':'a_nc0',"
			"'init':0,'id':3,'core':0}", list(
		inst("NoOp", "p", "Pool", upd), NULL));
}

static int run_pair(const char *target, uint64_t seed, lm_error *err,
		    int32_t *a0, int32_t *a1)
{
	lm_module *m[2];
	ls_machine *mc;
	ls_tensors in;
	ls_result r;
	ls_options o;
	int rc;
	memset(&o, 0, sizeof o);
	o.perturb_seed = seed;
	for (int i = 0; i < 2; i++) {
		char *t = remote_pair(i, target);
		m[i] = tu_parse(t, err);
		ck_assert_msg(m[i] != NULL, "%s", err->msg);
		ck_assert_msg(lm_verify(m[i], NULL, err) == 0, "%s", err->msg);
		free(t);
	}
	inputs(&in);
	rc = ls_machine_prepare(&mc, m, 2, 1, &in, &o, err);
	if (rc == 0)
		rc = ls_machine_run(mc, &o, &r, err);
	if (rc == 0) {
		for (int i = 0; i < mc->n_sems; i++)
			if (!strcmp(mc->sems[i].name, "a"))
				*(mc->sems[i].core ? a1 : a0) =
					mc->sems[i].value;
		ls_result_free(&r);
	}
	ls_machine_free(mc);
	ls_tensors_free(&in);
	lm_module_free(m[0]);
	lm_module_free(m[1]);
	return rc;
}

START_TEST(test_remote_core)
{
	lm_error err;
	int32_t a0 = -1, a1 = -1;
	for (uint64_t seed = 0; seed < 4; seed++) {
		ck_assert_msg(run_pair(",'core':0", seed, &err, &a0, &a1) == 0,
			      "%s", err.msg);
		ck_assert_int_eq(a0, 4);
		ck_assert_int_eq(a1, 0);
	}
	/* without the target core the update lands on core 1's own bank */
	ck_assert(run_pair("", 0, &err, &a0, &a1) != 0);
	ck_assert_msg(strstr(err.msg, "core 0 DVE: 'w' (EventSemaphore) waits "
			     "for semaphore id 3 ('a') of core 0 >= 4 (value "
			     "0)") != NULL, "%s", err.msg);
}
END_TEST

/* ---- joins, ALL, GroupReset, Drain, Return ------------------------------ */

/*
** AllEngineBarrier on ALL: a join. Its wait (s_dma >= 1: the copy's
** completion) is polled once all five engines arrived; its update (id 4
** +1) applies once; after it DVE sees the update. With 'after' waiting
** for 2 the run deadlocks at value 1: the update did not fire per engine.
*/
static char *join_module(int want)
{
	char wt[160];
	snprintf(wt, sizeof wt, "'sync_info':{'on_wait':[{'id':4,'mode':"
		 "'sem-ge-imm','wait_value':%d}]}", want);
	return mod_text(0, "{'name':'b','init':0,'id':4}", list(
		inst("NoOp", "n0", "PE", ""),
		inst("AllEngineBarrier", "bar", "ALL", "'sync_info':{"
		     "'on_wait':[{'semaphore':'s_dma','mode':'sem-ge-imm',"
		     "'value':1}],'on_update':[{'id':4,'mode':'sem-inc'}]}"),
		inst("NoOp", "after", "DVE", wt), NULL));
}

START_TEST(test_join)
{
	run R;
	for (uint64_t seed = 0; seed < 4; seed++) {
		run_text(&R, join_module(1), seed);
		ck_run_ok(&R);
		ck_assert_int_eq(sem(&R, "b"), 1);
		/* every engine waited at the barrier for the DMA */
		for (int e = 0; e < LS_ENGINES; e++)
			if (e != 4)
				ck_assert_msg(R.r.cores[0].wait_barrier_ps[e] > 0,
					      "engine %d", e);
		run_free(&R);
	}
	run_text(&R, join_module(2), 0);
	ck_run_fails(&R, "'after' (NoOp) waits for semaphore id 4 ('b') of "
		     "core 0 >= 2 (value 1)");
	run_free(&R);
	/* a join in a Loop of 3: once per iteration, each engine released
	   into the next one */
	for (uint64_t seed = 0; seed < 4; seed++) {
		char *bar = inst("AllEngineBarrier", "bar", "ALL", "'sync_info':"
				 "{'on_update':[{'id':4,'mode':'sem-inc'}]}");
		char *body = lm_xasprintf("{'opcode':'Loop','name':'l','engine':"
			"'SP','LoopAxis':{'name':'i','lb':0,'ub':3,'stride':1},"
			"'blocks':[{'name':'lb','instructions':[%s]}]}", bar);
		free(bar);
		run_text(&R, mod_text(0, "{'name':'b','init':0,'id':4}", list(
			body, inst("NoOp", "after", "DVE", "'sync_info':{"
				   "'on_wait':[{'id':4,'mode':'sem-ge-imm',"
				   "'wait_value':3}]}"), NULL)), seed);
		ck_run_ok(&R);
		ck_assert_int_eq(sem(&R, "b"), 3);
		run_free(&R);
	}
	/* an engine that never arrives: the join names who it waits for */
	run_text(&R, mod_text(0, "{'name':'b','init':0,'id':4}", list(
		inst("NoOp", "stuck", "DVE", "'sync_info':{'on_wait':[{'id':4,"
		     "'mode':'sem-ge-imm','wait_value':1}]}"),
		inst("AllEngineBarrier", "bar", "ALL", ""), NULL)), 0);
	ck_run_fails(&R, "core 0: 'bar' (AllEngineBarrier) waits for engines "
		     "[DVE] (arrived: PE, Activation, Pool, SP)");
	ck_run_fails(&R, "core 0 DVE: 'stuck' (NoOp) waits for semaphore id 4");
	run_free(&R);
	/* the join's own wait unmet: said once, by the engine polling it */
	run_text(&R, mod_text(0, "{'name':'b','init':0,'id':4}", list(
		inst("AllEngineBarrier", "bar", "ALL", "'sync_info':{"
		     "'on_wait':[{'id':4,'mode':'sem-ge-imm','wait_value':1}]}"),
		NULL)), 0);
	ck_run_fails(&R, "'bar' (AllEngineBarrier) waits for semaphore id 4 "
		     "('b') of core 0 >= 1 (value 0)");
	ck_assert_ptr_null(strstr(strstr(R.err.msg, "'bar'") + 1, "'bar'"));
	run_free(&R);
}
END_TEST

/* Exit on ALL: a join after which the core issues nothing; the copy in
** flight completes. An Exit on one engine is refused. */
START_TEST(test_exit)
{
	run R;
	const char *inc = "'sync_info':{'on_update':[{'id':4,'mode':"
			  "'sem-inc'}]}";
	for (uint64_t seed = 0; seed < 4; seed++) {
		run_text(&R, mod_text(0, "{'name':'b','init':0,'id':4}", list(
			inst("NoOp", "n0", "DVE", inc),
			inst("Exit", "ex", "ALL", ""),
			inst("NoOp", "n1", "DVE", inc), NULL)), seed);
		ck_run_ok(&R);
		ck_assert_int_eq(sem(&R, "b"), 1);
		ck_assert(tb_out(&R.r, "y0", 63) == 63.0f);
		run_free(&R);
	}
	run_text(&R, mod_text(0, "", list(inst("Exit", "ex", "DVE", ""),
					  NULL)), 0);
	ck_run_fails(&R, "Exit ends the core's launch for every engine");
	run_free(&R);
}
END_TEST

/* Other instructions on ALL run once per engine; with sync_info they are
** refused (it would fire once per copy). */
START_TEST(test_all_expanded)
{
	run R;
	run_text(&R, mod_text(0, "{'name':'b','init':5,'id':4}", list(
		inst("GroupResetSemaphores", "gr", "ALL", "'sema_group':[4]"),
		inst("NoOp", "n", "ALL", ""),
		inst("Drain", "dr", "ALL", ""), NULL)), 0);
	ck_run_ok(&R);
	ck_assert_int_eq(sem(&R, "b"), 0);
	/* five copies of each, the copy and the DMA */
	ck_assert_int_eq(R.r.instructions, 1 + 3 * 5);
	run_free(&R);
	run_text(&R, mod_text(0, "{'name':'b','init':0,'id':4}", list(
		inst("NoOp", "n", "ALL", "'sync_info':{'on_update':[{'id':4,"
		     "'mode':'sem-inc'}]}"), NULL)), 0);
	ck_run_fails(&R, "synchronization would happen once per copy");
	run_free(&R);
}
END_TEST

/* GroupResetSemaphores writes 0 to its ids, then its update applies:
** 5 -> 0 -> 1; id 6 is not in the group and keeps 8. */
START_TEST(test_group_reset)
{
	run R;
	run_text(&R, mod_text(0, "{'name':'b','init':5,'id':4},"
			      "{'name':'c','init':8,'id':6}", list(
		inst("GroupResetSemaphores", "gr", "SP", "'mode':'SemaphoreZero',"
		     "'sema_group':[4],'sync_info':{'on_update':[{'id':4,"
		     "'mode':'sem-inc'}]}"), NULL)), 0);
	ck_run_ok(&R);
	ck_assert_int_eq(sem(&R, "b"), 1);
	ck_assert_int_eq(sem(&R, "c"), 8);
	run_free(&R);
}
END_TEST

/* Drain on SP waits for the copy SP issued; a NoOp in its place does
** not. */
START_TEST(test_drain)
{
	run R;
	run_text(&R, mod_text(0, "", list(inst("Drain", "dr", "SP", ""),
					  NULL)), 0);
	ck_run_ok(&R);
	ck_assert(R.r.cores[0].wait_dep_ps[4] > 0);
	run_free(&R);
	run_text(&R, mod_text(0, "", list(inst("NoOp", "dr", "SP", ""),
					  NULL)), 0);
	ck_run_ok(&R);
	ck_assert(R.r.cores[0].wait_dep_ps[4] == 0);
	run_free(&R);
}
END_TEST

/* A Return's activation over: the id bank and the events are 0; a named
** semaphore without an id keeps its value. */
START_TEST(test_return_clears)
{
	run R;
	run_text(&R, mod_text(0, "{'name':'b','init':5,'id':4},"
			      "{'name':'n','init':5}", list(
		inst("NoOp", "p", "DVE", "'sync_info':{'on_update':[{'id':4,"
		     "'mode':'sem-inc'},{'semaphore':'n','mode':'sem-inc'},"
		     "{'id':7,'mode':'evt-set'}]}"),
		inst("Return", "ret", "SP", ""), NULL)), 0);
	ck_run_ok(&R);
	ck_assert_int_eq(sem(&R, "b"), 0);
	ck_assert_int_eq(sem(&R, "n"), 6);
	ck_assert_int_eq(R.mc->csync[0]->evt[0], 0);
	run_free(&R);
	/* without the Return the bank keeps its value, the event is an
	   error */
	run_text(&R, mod_text(0, "{'name':'b','init':5,'id':4}", list(
		inst("NoOp", "p", "DVE", "'sync_info':{'on_update':[{'id':4,"
		     "'mode':'sem-inc'}]}"), NULL)), 0);
	ck_run_ok(&R);
	ck_assert_int_eq(sem(&R, "b"), 6);
	run_free(&R);
}
END_TEST

/*
** mod_text's module with functions fa and fb called from its entry by
** 'ca' on SP and 'cb' on Activation (after 'ca' when ordered): fa sets
** semaphore 'n' (no id) and Returns; fb waits for 'n', then bumps id 4
** of the bank.
*/
static char *calls_text(int ordered)
{
	char *calls = list(
		inst("Call", "ca", "SP", "'target':'fa'"),
		inst("Call", "cb", "Activation", ordered ? "'target':'fb',"
		     "'dependencies':['ca']" : "'target':'fb'"), NULL);
	char *t = mod_text(0, "{'name':'b','init':0,'id':4},"
			   "{'name':'n','init':0}", calls);
	char *fns = tu_replace_all(
		",{'name':'fa','allocations':[],'blocks':[{'name':'ab',"
		"'instructions':[{'opcode':'NoOp','name':'a1','engine':'DVE',"
		"'ins':[],'outs':[],'sync_info':{'on_update':[{'semaphore':"
		"'n','mode':'sem-inc'}]}},{'opcode':'Return','name':'ra',"
		"'engine':'SP','ins':[],'outs':[]}]}]},"
		"{'name':'fb','allocations':[],'blocks':[{'name':'bb',"
		"'instructions':[{'opcode':'NoOp','name':'b1','engine':'Pool',"
		"'ins':[],'outs':[],'sync_info':{'on_wait':[{'semaphore':'n',"
		"'mode':'sem-ge-imm','wait_value':1}],'on_update':[{'id':4,"
		"'mode':'sem-inc'}]}}]}]}]}", "'", "\"");
	size_t n = strlen(t);
	char *u;
	ck_assert(n > 2 && !strcmp(t + n - 2, "]}"));
	t[n - 2] = 0;
	u = lm_xasprintf("%s%s", t, fns);
	free(t);
	free(fns);
	return u;
}

/*
** A Return clears the bank while another call on the core that uses it
** still runs: refused, since when the clear lands is the schedule's
** choice. With the second call ordered after the first, both run.
*/
START_TEST(test_return_clear_overlap)
{
	run R;
	for (uint64_t seed = 0; seed < 4; seed++) {
		run_text(&R, calls_text(0), seed);
		ck_run_fails(&R, "the Return clears core 0's semaphore bank "
			     "and events while function 'fb', which uses "
			     "them, still runs on the core");
		run_free(&R);
	}
	run_text(&R, calls_text(1), 0);
	ck_run_ok(&R);
	ck_assert_int_eq(sem(&R, "b"), 1);
	run_free(&R);
}
END_TEST

/* A second run of one machine starts from the initial values. */
START_TEST(test_rerun)
{
	run R;
	ls_result r2;
	run_text(&R, mod_text(0, "{'name':'b','init':5,'id':4}", list(
		inst("NoOp", "p", "DVE", "'sync_info':{'on_update':[{'id':4,"
		     "'mode':'sem-inc'},{'id':2,'mode':'evt-set'}]}"),
		inst("NoOp", "w", "Pool", "'sync_info':{'on_wait':[{'id':2,"
		     "'mode':'evt-set-then-clear'}]}"), NULL)), 0);
	ck_run_ok(&R);
	ck_assert_int_eq(sem(&R, "b"), 6);
	ck_assert_msg(ls_machine_run(R.mc, NULL, &r2, &R.err) == 0, "%s",
		      R.err.msg);
	ck_assert_int_eq(sem(&R, "b"), 6);
	ls_result_free(&r2);
	run_free(&R);
}
END_TEST

/* ---- lncsim diff on id-form semaphores ---------------------------------- */

/*
** Two per-core modules, each with semaphore 'a' as id 3 of its own core:
** on each core Pool adds 2 to id 3 and DVE waits for it before copying y
** again (from x shifted: DVE's Memset-free path is a second DMA on SP
** gated by the semaphore). Linked, both cores keep id 3 in their own bank.
*/
static char *diff_module(int core)
{
	return mod_text(core, "{'name':'a','init':0,'id':3}", list(
		inst("NoOp", "p", "Pool", "'sync_info':{'on_update':[{'id':3,"
		     "'mode':'sem-add-imm','update_value':2}]}"),
		inst("EventSemaphore", "w", "SP", "'sync_info':{'on_wait':[{"
		     "'id':3,'mode':'sem-ge-imm','wait_value':2}],'on_update':"
		     "[{'id':3,'mode':'sem-wr-imm','update_value':0}]}"),
		NULL));
}

START_TEST(test_diff_two_cores)
{
	char *d = tu_tmpdir("sync");
	char *t0 = diff_module(0), *t1 = diff_module(1);
	char *p0 = tu_write(d, "c0.json", t0);
	char *p1 = tu_write(d, "c1.json", t1);
	char *lk;
	tu_run r = tu_lncsim(d, "diff", "--no-db", "--schedules", "4",
			     "--seed", "1", p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	/* a core that releases the other through the target core */
	free(t0);
	free(t1);
	free(p0);
	free(p1);
	t0 = remote_pair(0, ",'core':0");
	t1 = remote_pair(1, ",'core':0");
	p0 = tu_write(d, "r0.json", t0);
	p1 = tu_write(d, "r1.json", t1);
	r = tu_lncsim(d, "diff", "--no-db", "--schedules", "4", "--seed", "1",
		      p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_contains(r.out, "PASS");
	tu_run_free(&r);
	free(t0);
	free(t1);
	free(p0);
	free(p1);
	t0 = diff_module(0);
	t1 = diff_module(1);
	p0 = tu_write(d, "c0.json", t0);
	p1 = tu_write(d, "c1.json", t1);
	/* the linked module keeps id 3 per core */
	r = tu_lncsim(d, "link", "-o", "lk", p0, p1, NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
	{
		char *p = lm_xasprintf("%s/lk/sync0/sgLnk/def.json", d);
		lk = tu_read(p);
		free(p);
	}
	ck_assert_ptr_nonnull(lk);
	ck_assert_msg(strstr(lk, "\"core\":0") || strstr(lk, "\"core\": 0"),
		      "%s", lk);
	ck_assert_msg(strstr(lk, "\"core\":1") || strstr(lk, "\"core\": 1"),
		      "%s", lk);
	free(lk);
	free(t0);
	free(t1);
	free(p0);
	free(p1);
	tu_rm_tree(d);
	free(d);
}
END_TEST


/* ---- DMA blocks ------------------------------------------------------------ */

#define XAP "{'kind':'physical_ap','ap':[[64,1],[1,64]],'dtype':'float32'," \
	"'offset':0,'memsetref':'x','memref':'x'}"
#define YAP "{'kind':'physical_ap','ap':[[64,1],[1,64]],'dtype':'float32'," \
	"'offset':0,'memsetref':'YY','memref':'YY'}"

/* A DMABlock name of n descriptors <name>_d<k> copying x to y (the
** first with sync_info dsync; the block's own keys bsync): caller
** frees. */
static char *dblock(const char *name, int n, const char *bsync,
		    const char *dsync)
{
	lm_buf b = LM_BUF_INIT;
	lm_buf_printf(&b, "{'opcode':'DMABlock','name':'%s','engine':'DMA',"
		      "'ins':[],'outs':[]%s%s,'blocks':[{'name':'%s_b',"
		      "'instructions':[", name, *bsync ? "," : "", bsync,
		      name);
	for (int k = 0; k < n; k++)
		lm_buf_printf(&b, "%s{'opcode':'DMADescriptorCopy','name':"
			      "'%s_d%d','engine':'DMA','ins':[" XAP "],'outs':"
			      "[" YAP "]%s%s}", k ? "," : "", name, k,
			      k == 0 && *dsync ? "," : "", k == 0 ? dsync : "");
	lm_buf_puts(&b, "]}]}");
	return lm_buf_detach(&b);
}

/* A DMATrigger on SP of queue q0 firing block (more: its other keys). */
static char *dtrig(const char *name, const char *block, const char *more)
{
	return lm_xasprintf("{'opcode':'DMATrigger','name':'%s','engine':'SP',"
			    "'queue':'q0','dma_blocks':['%s'],'ins':[],"
			    "'outs':[]%s%s}", name, block, *more ? "," : "",
			    more);
}

/* A descriptor waiting for id 3 >= 2 that Pool's sem-add-imm of add
** raises: 2 releases it, 1 leaves it waiting, and the deadlock report
** names the descriptor, its block and the id-form semaphore. */
START_TEST(test_desc_waits_id)
{
	const char *dw = "'sync_info':{'on_wait':[{'id':3,'mode':"
			 "'sem-ge-imm','wait_value':2}]}";
	run R;
	for (uint64_t seed = 0; seed < 4; seed++) {
		run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
			dblock("b1", 2, "", dw), dtrig("t", "b1", ""),
			inst("NoOp", "p", "Pool", "'sync_info':{'on_update':"
			     "[{'id':3,'mode':'sem-add-imm','update_value':2}]}"),
			NULL)), seed);
		ck_run_ok(&R);
		ck_assert_int_eq(R.r.cores[0].dma_transfers, 3);
		run_free(&R);
	}
	run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
		dblock("b1", 2, "", dw), dtrig("t", "b1", ""),
		inst("NoOp", "p", "Pool", "'sync_info':{'on_update':[{'id':3,"
		     "'mode':'sem-add-imm','update_value':1}]}"), NULL)), 0);
	ck_run_fails(&R, "deadlock at t=");
	ck_run_fails(&R, "queue instance 'q0a' core 0: descriptor 'b1_d0' of "
		     "block 'b1' waits for semaphore id 3 ('a') of core 0 >= 2 "
		     "(value 1)");
	run_free(&R);
}
END_TEST

/* Blocks b1 and b2 each wait for event 5: b1 consumes Pool's set when it
** opens, so b2 holds the instance until q sets it again (after t1, its
** block, completed); with one set b2 is left waiting. */
START_TEST(test_block_event)
{
	const char *bw = "'sync_info':{'on_wait':[{'id':5,'mode':"
			 "'evt-set-then-clear'}]}";
	const char *set = "'sync_info':{'on_update':[{'id':5,'mode':"
			  "'evt-set'}]}";
	run R;
	for (uint64_t seed = 0; seed < 4; seed++) {
		char *q = lm_xasprintf("%s,'dependencies':[['t1','Flow']]", set);
		run_text(&R, mod_text(0, "", list(
			dblock("b1", 1, bw, ""), dblock("b2", 1, bw, ""),
			dtrig("t1", "b1", ""), dtrig("t2", "b2", ""),
			inst("NoOp", "p", "Pool", set),
			inst("NoOp", "q", "DVE", q), NULL)), seed);
		free(q);
		ck_run_ok(&R);
		ck_assert_int_eq(R.mc->csync[0]->evt[0], 0);
		run_free(&R);
	}
	run_text(&R, mod_text(0, "", list(
		dblock("b1", 1, bw, ""), dblock("b2", 1, bw, ""),
		dtrig("t1", "b1", ""), dtrig("t2", "b2", ""),
		inst("NoOp", "p", "Pool", set), NULL)), 0);
	ck_run_fails(&R, "queue instance 'q0a' core 0: block 'b2' waits for "
		     "event 5 of core 0 to be set");
	run_free(&R);
	/* a descriptor's event wait consumes it when the descriptor starts */
	run_text(&R, mod_text(0, "", list(
		dblock("b1", 1, "", bw), dblock("b2", 1, "", bw),
		dtrig("t1", "b1", ""), dtrig("t2", "b2", ""),
		inst("NoOp", "p", "Pool", set), NULL)), 0);
	ck_run_fails(&R, "descriptor 'b2_d0' of block 'b2' waits for event 5 "
		     "of core 0 to be set");
	run_free(&R);
}
END_TEST

/* A descriptor's id-form update releases DVE's wait; a block's too; the
** block completed counts on its instance's semaphore. */
START_TEST(test_desc_update_id)
{
	run R;
	for (uint64_t seed = 0; seed < 4; seed++) {
		run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
			dblock("b1", 2, "'sync_info':{'on_update':[{'id':3,"
			       "'mode':'sem-add-imm','update_value':4}]}",
			       "'sync_info':{'on_update':[{'id':3,'mode':"
			       "'sem-add-imm','update_value':3}]}"),
			dtrig("t", "b1", ""),
			inst("NoOp", "w", "DVE", "'sync_info':{'on_wait':[{"
			     "'id':3,'mode':'sem-ge-imm','wait_value':7}]}"),
			NULL)), seed);
		ck_run_ok(&R);
		ck_assert_int_eq(sem(&R, "a"), 7);
		/* the instance's semaphore counts cp and the block */
		ck_assert_int_eq(sem(&R, "s_dma"), 2);
		run_free(&R);
	}
}
END_TEST

/*
** Drain on SP after a trigger waits for the block, not only for the
** DMACopy cp: the block's four descriptors run on q0a behind cp, and the
** Drain issues when the last completes, so SP is busy or waiting for a
** dependency from 0 to the end of the run (the Drain last). A block
** waiting for an update issued after the Drain deadlocks.
*/
START_TEST(test_drain_block)
{
	run R;
	const ls_core_stats *st;
	run_text(&R, mod_text(0, "", list(dblock("b1", 4, "", ""),
					  dtrig("t", "b1", ""),
					  inst("Drain", "dr", "SP", ""),
					  NULL)), 0);
	ck_run_ok(&R);
	st = &R.r.cores[0];
	ck_assert_int_eq(st->dma_transfers, 5);
	ck_assert(st->wait_dep_ps[4] > 0);
	ck_assert_int_eq(st->busy_ps[4] + st->wait_dep_ps[4],
			 R.r.sim_time_ps);
	run_free(&R);
	run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
		dblock("b1", 1, "'sync_info':{'on_wait':[{'id':3,'mode':"
		       "'sem-ge-imm','wait_value':1}]}", ""),
		dtrig("t", "b1", ""), inst("Drain", "dr", "SP", ""),
		inst("NoOp", "n", "SP", "'sync_info':{'on_update':[{'id':3,"
		     "'mode':'sem-inc'}]}"), NULL)), 0);
	ck_run_fails(&R, "deadlock at t=");
	ck_run_fails(&R, "'dr' (Drain)");
	run_free(&R);
}
END_TEST

/* A threshold outside int32 is refused where the instruction (the
** descriptor, the DMA block) starts: no semaphore value reaches it, and as a signed
** 32-bit threshold it would be another number. */
START_TEST(test_wait_range)
{
	static const char *const op[] = { "NoOp", "EventSemaphore" };
	static const char *const thr[] = { "2147483648", "4294967295" };
	char wt[200], want[200];
	run R;
	for (int k = 0; k < 2; k++) {
		snprintf(wt, sizeof wt, "'sync_info':{'on_wait':[{'id':3,'mode':"
			 "'sem-ge-imm','wait_value':%s}]}", thr[k]);
		snprintf(want, sizeof want, "instruction w: on_wait sem-ge-imm: "
			 "wait_value %s is outside the signed 32-bit range of "
			 "a semaphore", thr[k]);
		run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
			inst(op[k], "w", "DVE", wt), NULL)), 0);
		ck_run_fails(&R, want);
		run_free(&R);
	}
	run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
		dblock("b1", 1, "", "'sync_info':{'on_wait':[{'id':3,'mode':"
		       "'sem-ge-imm','wait_value':2147483648}]}"),
		dtrig("t", "b1", ""), NULL)), 0);
	ck_run_fails(&R, "instruction b1_d0: on_wait sem-ge-imm: wait_value "
		     "2147483648 is outside");
	run_free(&R);
	/* a block's own: no engine starts it, its queue reports it */
	run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}", list(
		dblock("b1", 1, "'sync_info':{'on_wait':[{'id':3,'mode':"
		       "'sem-ge-imm','wait_value':2147483648}]}", ""),
		dtrig("t", "b1", ""), NULL)), 0);
	ck_run_fails(&R, "instruction b1: on_wait sem-ge-imm: wait_value "
		     "2147483648 is outside");
	run_free(&R);
}
END_TEST

/* An update amount of more than 32 bits is refused by name; the edges of
** both 32-bit readings are taken (they wrap as documented). */
START_TEST(test_update_range)
{
	static const char *const mode[] = { "sem-add-imm", "sem-sub-imm",
					    "sem-wr-imm" };
	static const char *const bad[] = { "4294967296", "-2147483649" };
	static const char *const good[] = { "4294967295", "-2147483648" };
	char up[200], want[200];
	run R;
	for (int m = 0; m < 3; m++) {
		for (int k = 0; k < 2; k++) {
			snprintf(up, sizeof up, "'sync_info':{'on_update':[{"
				 "'id':3,'mode':'%s','update_value':%s}]}",
				 mode[m], bad[k]);
			snprintf(want, sizeof want, "instruction u: on_update "
				 "%s: update_value %s does not fit the 32 bits "
				 "of a semaphore", mode[m], bad[k]);
			run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}",
				 list(inst("NoOp", "u", "DVE", up), NULL)), 0);
			ck_run_fails(&R, want);
			run_free(&R);
			snprintf(up, sizeof up, "'sync_info':{'on_update':[{"
				 "'id':3,'mode':'%s','update_value':%s}]}",
				 mode[m], good[k]);
			run_text(&R, mod_text(0, "{'name':'a','init':0,'id':3}",
				 list(inst("NoOp", "u", "DVE", up), NULL)), 0);
			ck_assert_msg(R.rc == 0, "%s %s: %s", mode[m], good[k],
				      R.err.msg);
			run_free(&R);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sync");
	TCase *tc = tcase_create("sync");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_update_modes);
	tcase_add_test(tc, test_waits_x_updates);
	tcase_add_test(tc, test_event_wait);
	tcase_add_test(tc, test_counting);
	tcase_add_test(tc, test_event_errors);
	tcase_add_test(tc, test_remote_core);
	tcase_add_test(tc, test_join);
	tcase_add_test(tc, test_exit);
	tcase_add_test(tc, test_all_expanded);
	tcase_add_test(tc, test_group_reset);
	tcase_add_test(tc, test_drain);
	tcase_add_test(tc, test_return_clears);
	tcase_add_test(tc, test_return_clear_overlap);
	tcase_add_test(tc, test_rerun);
	suite_add_tcase(s, tc);
	tc = tcase_create("diff");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_diff_two_cores);
	tcase_add_test(tc, test_desc_waits_id);
	tcase_add_test(tc, test_block_event);
	tcase_add_test(tc, test_desc_update_id);
	tcase_add_test(tc, test_drain_block);
	tcase_add_test(tc, test_wait_range);
	tcase_add_test(tc, test_update_range);
	suite_add_tcase(s, tc);
	return tu_main(s);
}

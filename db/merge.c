/*
** merge.c -- `lncsim db merge`: copy the runs of shard databases into one.
**
** Runs are identified by their uuid: a run already present is skipped, so
** merging a shard twice adds nothing. Ids are re-keyed by offsets: a new
** run gets id + max(runs.id) of the target, an execution id +
** max(executions.id); matmuls and tensors get fresh ids, races keep their
** place in the run, kernels theirs in the execution.
*/
#include "common.h"
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The per-engine wait columns of core_stats (schema 4). */
#define WAIT_COLS \
	"wait_sem_pe_ps, wait_sem_act_ps, wait_sem_dve_ps, wait_sem_pool_ps, " \
	"wait_sem_sp_ps, wait_barrier_pe_ps, wait_barrier_act_ps, " \
	"wait_barrier_dve_ps, wait_barrier_pool_ps, wait_barrier_sp_ps, " \
	"wait_dep_pe_ps, wait_dep_act_ps, wait_dep_dve_ps, wait_dep_pool_ps, " \
	"wait_dep_sp_ps"

/* The columns of the two accesses of a race (schema 5). */
#define RACE_ACCESS_COLS \
	"a_function, a_block, a_instr, a_iter, a_core, a_engine, " \
	"b_function, b_block, b_instr, b_iter, b_core, b_engine"

/* The columns of kernels and kernel_engines copied as they are
** (schema 6). */
#define KERNEL_DMA_COLS \
	"dma_bytes, dma_transfers, dma_xfer_ps, dma_active_ps, dma_end_ps"
#define KERNEL_ENGINE_COLS \
	"busy_ps, wait_sem_ps, wait_barrier_ps, wait_dep_ps, idle_ps, " \
	"last_end_ps"

/*
** Run one INSERT ... SELECT with the two offsets bound as ?1 (runs) and ?2
** (executions); add the number of rows inserted to *count.
*/
static int copy_rows(ldb *db, const char *sql, int64_t off_run,
		     int64_t off_exec, int64_t *count, lm_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "merging");
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, off_run);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, off_exec);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return ldb_sqlerr(err, db, "merging");
	if (count)
		*count += sqlite3_changes(db->h);
	return 0;
}

/*
** One integer from a single-row query.
*/
static int query_int(ldb *db, const char *sql, int64_t *v, lm_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_finalize(st);
	return ldb_sqlerr(err, db, "merging");
}

/*
** The fuzz campaigns of src into main, inside the merge's transaction
** (after the runs): a campaign in both must be the same campaign (same
** generator options and first seed); new ones are added, the cases follow
** the runs copied (off_run), and each failure signature keeps the
** smallest seed of both with its message and repro, its hits counted
** again from the cases -- so merging a shard twice counts nothing twice.
*/
static int merge_campaigns(ldb *db, int64_t off_run, ldb_merge_stats *st,
			   lm_error *err)
{
	static const char clash[] =
		"SELECT s.name, s.gen_options, m.gen_options, s.first_seed, "
		"m.first_seed FROM src.campaigns s JOIN main.campaigns m "
		"ON m.name = s.name WHERE s.gen_options <> m.gen_options "
		"OR s.first_seed <> m.first_seed LIMIT 1";
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db->h, clash, -1, &q, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "merging campaigns");
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		lm_err(err, db->path, "merging", "campaign %s: generator "
		       "options differ (%s, first seed %lld here; %s, first "
		       "seed %lld in the shard): two campaigns would share one "
		       "name", (const char *)sqlite3_column_text(q, 0),
		       (const char *)sqlite3_column_text(q, 2),
		       (long long)sqlite3_column_int64(q, 4),
		       (const char *)sqlite3_column_text(q, 1),
		       (long long)sqlite3_column_int64(q, 3));
		sqlite3_finalize(q);
		return LM_EINPUT;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return ldb_sqlerr(err, db, "merging campaigns");
	if (copy_rows(db,
		      "INSERT INTO main.campaigns(name, started_utc, command, "
		      "tool_version, gen_options, first_seed, count) "
		      "SELECT name, started_utc, command, tool_version, "
		      "gen_options, first_seed, count FROM src.campaigns "
		      "WHERE name NOT IN (SELECT name FROM main.campaigns) "
		      "ORDER BY id", 0, 0, &st->campaigns, err) != 0 ||
	    copy_rows(db,
		      "INSERT INTO main.cases(run_id, campaign, seed, "
		      "gen_options, kind, signature) "
		      "SELECT run_id + ?1, campaign, seed, gen_options, kind, "
		      "signature FROM src.cases "
		      "WHERE run_id IN temp.merge_runs ORDER BY run_id",
		      off_run, 0, &st->cases, err) != 0 ||
	    copy_rows(db,
		      "INSERT INTO main.failures(campaign, signature, kind, "
		      "seed, hits, message, repro) "
		      "SELECT campaign, signature, kind, seed, hits, message, "
		      "repro FROM src.failures WHERE true "
		      "ON CONFLICT(campaign, signature) DO UPDATE SET "
		      "seed = excluded.seed, message = excluded.message, "
		      "repro = excluded.repro WHERE excluded.seed < seed",
		      0, 0, NULL, err) != 0 ||
	    copy_rows(db,
		      "UPDATE main.failures SET hits = (SELECT count(*) FROM "
		      "main.cases c WHERE c.campaign = failures.campaign AND "
		      "c.signature = failures.signature) "
		      "WHERE campaign IN (SELECT name FROM src.campaigns)",
		      0, 0, NULL, err) != 0)
		return LM_EINPUT;
	return 0;
}

/*
** Merge the database at in_path into db.
*/
int ldb_merge(ldb *db, const char *in_path, ldb_merge_stats *st,
	      lm_error *err)
{
	ldb_merge_stats local = {0};
	ldb *in = NULL;
	int rc = 0;
	if (db->open_run)
		return lm_errc(err, LM_EINTERNAL, db->path, "merging",
			       "a run is open");
	/* validates the shard and brings it to the current schema (a current
	** shard is only read: it may be read-only); attached by the same URI */
	if (ldb_open(&in, in_path, LDB_READ, err) != 0)
		return LM_EINPUT;
	for (int g = 0; g < LDB_N_GROUPS; g++)
		if (ldb_group(in, g, err) != 0) {
			ldb_close(in);
			return LM_EINPUT;
		}
	char *in_uri = lm_xstrdup(in->uri);
	ldb_close(in);
	/* a database merged into itself: every run is already there (and
	** attaching it would deadlock on its own write lock) */
	struct stat sa, sb;
	if (stat(in_path, &sa) == 0 && stat(db->path, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) {
		int64_t n = 0;
		if (query_int(db, "SELECT count(*) FROM main.runs", &n, err)) {
			free(in_uri);
			return LM_EINPUT;
		}
		if (st)
			st->runs_skipped += n;
		free(in_uri);
		return 0;
	}

	sqlite3_stmt *at = NULL;
	if (sqlite3_prepare_v2(db->h, "ATTACH ?1 AS src", -1, &at, NULL) !=
	    SQLITE_OK) {
		free(in_uri);
		return ldb_sqlerr(err, db, "merging");
	}
	sqlite3_bind_text(at, 1, in_uri, -1, SQLITE_STATIC);
	rc = sqlite3_step(at);
	sqlite3_finalize(at);
	free(in_uri);
	if (rc != SQLITE_DONE)
		return lm_err(err, in_path, "", "cannot attach: %s",
			      sqlite3_errmsg(db->h));
	rc = 0;

	int64_t off_run = 0, off_exec = 0;
	if (ldb_exec(db, "BEGIN IMMEDIATE", "merging", err) != 0) {
		rc = LM_EINPUT;
		goto detach;
	}
	/* the groups of tables the shard has, made here when missing */
	int has[LDB_N_GROUPS] = {0};
	for (int g = 0; g < LDB_N_GROUPS; g++)
		if (ldb_group_in(db, "src", g, &has[g], err) != 0 ||
		    (has[g] && ldb_group(db, g, err) != 0))
			goto rollback;
	if (query_int(db, "SELECT coalesce(max(id), 0) FROM main.runs",
		      &off_run, err) != 0 ||
	    query_int(db, "SELECT coalesce(max(id), 0) FROM main.executions",
		      &off_exec, err) != 0 ||
	    ldb_exec(db, "DROP TABLE IF EXISTS temp.merge_runs;"
		     "CREATE TEMP TABLE merge_runs(id INTEGER PRIMARY KEY);"
		     "INSERT INTO temp.merge_runs SELECT id FROM src.runs "
		     "WHERE uuid NOT IN (SELECT uuid FROM main.runs)",
		     "merging", err) != 0)
		goto rollback;
	int64_t n_src = 0, n_new = 0;
	if (query_int(db, "SELECT count(*) FROM src.runs", &n_src, err) != 0 ||
	    query_int(db, "SELECT count(*) FROM temp.merge_runs", &n_new,
		      err) != 0)
		goto rollback;
	local.runs_skipped = n_src - n_new;
	if (copy_rows(db,
		      "INSERT INTO main.runs(id, uuid, started_utc, command, "
		      "module, arch, cores, seed, status, message, "
		      "tool_version, wall_seconds, races) "
		      "SELECT id + ?1, uuid, started_utc, command, module, arch, "
		      "cores, seed, status, message, tool_version, wall_seconds, "
		      "races "
		      "FROM src.runs WHERE id IN temp.merge_runs ORDER BY id",
		      off_run, off_exec, &local.runs, err) != 0 ||
	    copy_rows(db,
		      "INSERT INTO main.executions(id, run_id, mode, "
		      "sim_time_ps, instructions) "
		      "SELECT id + ?2, run_id + ?1, mode, sim_time_ps, "
		      "instructions FROM src.executions "
		      "WHERE run_id IN temp.merge_runs ORDER BY id",
		      off_run, off_exec, &local.executions, err) != 0 ||
	    copy_rows(db,
		      "INSERT INTO main.core_stats(execution_id, core, "
		      "busy_pe_ps, busy_act_ps, busy_dve_ps, busy_pool_ps, "
		      "busy_sp_ps, instructions, matmuls, macs, pe_util, "
		      "mac_util, dma_bytes, dma_transfers, barrier_wait_ps, "
		      "semaphore_wait_ps, end_ps, " WAIT_COLS ") "
		      "SELECT c.execution_id + ?2, c.core, c.busy_pe_ps, "
		      "c.busy_act_ps, c.busy_dve_ps, c.busy_pool_ps, "
		      "c.busy_sp_ps, c.instructions, c.matmuls, c.macs, "
		      "c.pe_util, c.mac_util, c.dma_bytes, c.dma_transfers, "
		      "c.barrier_wait_ps, c.semaphore_wait_ps, c.end_ps, "
		      WAIT_COLS " "
		      "FROM src.core_stats c JOIN src.executions e "
		      "ON c.execution_id = e.id "
		      "WHERE e.run_id IN temp.merge_runs "
		      "ORDER BY c.execution_id, c.core",
		      off_run, off_exec, &local.core_stats, err) != 0 ||
	    copy_rows(db,
		      "INSERT INTO main.matmuls(execution_id, core, name, k, m, "
		      "n, dtype, start_ps, duration_ps, array_util) "
		      "SELECT x.execution_id + ?2, x.core, x.name, x.k, x.m, "
		      "x.n, x.dtype, x.start_ps, x.duration_ps, x.array_util "
		      "FROM src.matmuls x JOIN src.executions e "
		      "ON x.execution_id = e.id "
		      "WHERE e.run_id IN temp.merge_runs ORDER BY x.id",
		      off_run, off_exec, &local.matmuls, err) != 0 ||
	    copy_rows(db,
		      "INSERT INTO main.tensors(run_id, name, equal, "
		      "mismatches, first_index, max_abs_diff) "
		      "SELECT run_id + ?1, name, equal, mismatches, "
		      "first_index, max_abs_diff FROM src.tensors "
		      "WHERE run_id IN temp.merge_runs ORDER BY id",
		      off_run, off_exec, &local.tensors, err) != 0 ||
	    (has[LDB_G_RACES] && copy_rows(db,
		      "INSERT INTO main.races(run_id, seq, mode, kind, memory, "
		      "core, object, lo, hi, " RACE_ACCESS_COLS ", common) "
		      "SELECT run_id + ?1, seq, mode, kind, memory, core, "
		      "object, lo, hi, " RACE_ACCESS_COLS ", common "
		      "FROM src.races WHERE run_id IN temp.merge_runs "
		      "ORDER BY run_id, seq",
		      off_run, off_exec, &local.races, err) != 0) ||
	    (has[LDB_G_KERNELS] && (copy_rows(db,
		      "INSERT INTO main.kernels(execution_id, seq, core, call, "
		      "func, caller, parent, depth, start_ps, end_ps, "
		      "instructions, critical, " KERNEL_DMA_COLS ") "
		      "SELECT k.execution_id + ?2, k.seq, k.core, k.call, "
		      "k.func, k.caller, k.parent, k.depth, k.start_ps, "
		      "k.end_ps, k.instructions, k.critical, " KERNEL_DMA_COLS
		      " FROM src.kernels k JOIN src.executions e "
		      "ON k.execution_id = e.id "
		      "WHERE e.run_id IN temp.merge_runs "
		      "ORDER BY k.execution_id, k.seq",
		      off_run, off_exec, NULL, err) != 0 ||
	    copy_rows(db,
		      "INSERT INTO main.kernel_engines(execution_id, seq, "
		      "engine, " KERNEL_ENGINE_COLS ") "
		      "SELECT k.execution_id + ?2, k.seq, k.engine, "
		      KERNEL_ENGINE_COLS " FROM src.kernel_engines k "
		      "JOIN src.executions e ON k.execution_id = e.id "
		      "WHERE e.run_id IN temp.merge_runs "
		      "ORDER BY k.execution_id, k.seq, k.engine",
		      off_run, off_exec, NULL, err) != 0 ||
	      copy_rows(db,
		      "INSERT INTO main.kernel_queues(execution_id, seq, "
		      "queue, bytes, transfers, xfer_ps, active_ps) "
		      "SELECT k.execution_id + ?2, k.seq, k.queue, k.bytes, "
		      "k.transfers, k.xfer_ps, k.active_ps "
		      "FROM src.kernel_queues k "
		      "JOIN src.executions e ON k.execution_id = e.id "
		      "WHERE e.run_id IN temp.merge_runs "
		      "ORDER BY k.execution_id, k.seq, k.queue",
		      off_run, off_exec, NULL, err) != 0)) ||
	    (has[LDB_G_CAMPAIGNS] &&
	     merge_campaigns(db, off_run, &local, err) != 0) ||
	    ldb_exec(db, "DROP TABLE temp.merge_runs", "merging", err) != 0 ||
	    ldb_exec(db, "COMMIT", "merging", err) != 0)
		goto rollback;
	if (st) {
		st->runs += local.runs;
		st->runs_skipped += local.runs_skipped;
		st->executions += local.executions;
		st->core_stats += local.core_stats;
		st->matmuls += local.matmuls;
		st->tensors += local.tensors;
		st->races += local.races;
		st->campaigns += local.campaigns;
		st->cases += local.cases;
	}
	goto detach;
rollback:
	rc = LM_EINPUT;
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
detach:
	sqlite3_exec(db->h, "DETACH src", NULL, NULL, NULL);
	return rc;
}

/*
** schema.c -- the schema history of the run log, one forward migration per
** version (docs/database.md). A migration is never edited once released: a
** change is a new entry, and LDB_SCHEMA_VERSION grows by one.
*/
#include "common.h"
#include "db_int.h"

#include <string.h>

/* A version-4 UUID as text, computed by SQLite (used for backfills). */
#define SQL_UUID \
	"lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || " \
	"'-4' || substr(lower(hex(randomblob(2))), 2) || '-' || " \
	"substr('89ab', 1 + (abs(random()) % 4), 1) || " \
	"substr(lower(hex(randomblob(2))), 2) || '-' || " \
	"lower(hex(randomblob(6)))"

const char *const ldb_migrations[LDB_SCHEMA_VERSION] = {
	/* 0 -> 1: the five tables */
	"CREATE TABLE runs(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  started_utc TEXT NOT NULL,\n"
	"  command TEXT NOT NULL,\n"
	"  module TEXT NOT NULL,\n"
	"  arch TEXT NOT NULL,\n"
	"  cores INTEGER NOT NULL,\n"
	"  seed INTEGER NOT NULL,\n"
	"  status TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'error')),\n"
	"  message TEXT NOT NULL,\n"
	"  tool_version TEXT NOT NULL,\n"
	"  wall_seconds REAL\n"
	") STRICT;\n"
	"CREATE TABLE executions(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"  mode TEXT NOT NULL CHECK (mode IN ('reference', 'linked', 'single')),\n"
	"  sim_time_ps INTEGER NOT NULL,\n"
	"  instructions INTEGER NOT NULL\n"
	") STRICT;\n"
	"CREATE TABLE core_stats(\n"
	"  execution_id INTEGER NOT NULL REFERENCES executions(id) ON DELETE CASCADE,\n"
	"  core INTEGER NOT NULL,\n"
	"  busy_pe_ps INTEGER NOT NULL,\n"
	"  busy_act_ps INTEGER NOT NULL,\n"
	"  busy_dve_ps INTEGER NOT NULL,\n"
	"  busy_pool_ps INTEGER NOT NULL,\n"
	"  busy_sp_ps INTEGER NOT NULL,\n"
	"  instructions INTEGER NOT NULL,\n"
	"  matmuls INTEGER NOT NULL,\n"
	"  macs INTEGER NOT NULL,\n"
	"  pe_util REAL,\n"
	"  mac_util REAL,\n"
	"  dma_bytes INTEGER NOT NULL,\n"
	"  barrier_wait_ps INTEGER NOT NULL,\n"
	"  semaphore_wait_ps INTEGER NOT NULL,\n"
	"  PRIMARY KEY (execution_id, core)\n"
	") STRICT;\n"
	"CREATE TABLE matmuls(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  execution_id INTEGER NOT NULL REFERENCES executions(id) ON DELETE CASCADE,\n"
	"  core INTEGER NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  k INTEGER NOT NULL,\n"
	"  m INTEGER NOT NULL,\n"
	"  n INTEGER NOT NULL,\n"
	"  dtype TEXT NOT NULL,\n"
	"  start_ps INTEGER NOT NULL,\n"
	"  duration_ps INTEGER NOT NULL,\n"
	"  array_util REAL\n"
	") STRICT;\n"
	"CREATE TABLE tensors(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"  name TEXT NOT NULL,\n"
	"  equal INTEGER NOT NULL,\n"
	"  mismatches INTEGER NOT NULL,\n"
	"  first_index INTEGER NOT NULL,\n"
	"  max_abs_diff REAL\n"
	") STRICT;\n",

	/* 1 -> 2: run UUIDs (the merge key), more core stats, indexes */
	"ALTER TABLE runs ADD COLUMN uuid TEXT NOT NULL DEFAULT '';\n"
	"UPDATE runs SET uuid = " SQL_UUID " WHERE uuid = '';\n"
	"CREATE UNIQUE INDEX runs_uuid ON runs(uuid);\n"
	"CREATE INDEX runs_started ON runs(started_utc);\n"
	"ALTER TABLE core_stats ADD COLUMN dma_transfers INTEGER NOT NULL DEFAULT 0;\n"
	"ALTER TABLE core_stats ADD COLUMN end_ps INTEGER NOT NULL DEFAULT 0;\n"
	"CREATE INDEX executions_run ON executions(run_id);\n"
	"CREATE INDEX matmuls_execution ON matmuls(execution_id);\n"
	"CREATE INDEX tensors_run ON tensors(run_id);\n",

	/* 2 -> 3: fuzz campaigns, their cases, deduplicated failures */
	"CREATE TABLE campaigns(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  name TEXT NOT NULL UNIQUE,\n"
	"  started_utc TEXT NOT NULL,\n"
	"  command TEXT NOT NULL,\n"
	"  tool_version TEXT NOT NULL,\n"
	"  gen_options TEXT NOT NULL,\n"
	"  first_seed INTEGER NOT NULL,\n"
	"  count INTEGER NOT NULL\n"
	") STRICT;\n"
	"CREATE TABLE cases(\n"
	"  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,\n"
	"  campaign TEXT NOT NULL REFERENCES campaigns(name),\n"
	"  seed INTEGER NOT NULL,\n"
	"  gen_options TEXT NOT NULL,\n"
	"  kind TEXT NOT NULL,\n"
	"  signature TEXT NOT NULL\n"
	") STRICT;\n"
	"CREATE INDEX cases_seed ON cases(campaign, seed);\n"
	"CREATE INDEX cases_signature ON cases(campaign, signature)\n"
	"  WHERE signature <> '';\n"
	"CREATE TABLE failures(\n"
	"  campaign TEXT NOT NULL REFERENCES campaigns(name),\n"
	"  signature TEXT NOT NULL,\n"
	"  kind TEXT NOT NULL,\n"
	"  seed INTEGER NOT NULL,\n"
	"  hits INTEGER NOT NULL,\n"
	"  message TEXT NOT NULL,\n"
	"  repro TEXT NOT NULL,\n"
	"  PRIMARY KEY (campaign, signature)\n"
	") STRICT;\n",

	/* 3 -> 4: where each engine's time went (NULL: logged before) */
	"ALTER TABLE core_stats ADD COLUMN wait_sem_pe_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_sem_act_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_sem_dve_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_sem_pool_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_sem_sp_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_barrier_pe_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_barrier_act_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_barrier_dve_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_barrier_pool_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_barrier_sp_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_dep_pe_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_dep_act_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_dep_dve_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_dep_pool_ps INTEGER;\n"
	"ALTER TABLE core_stats ADD COLUMN wait_dep_sp_ps INTEGER;\n",

	/* 4 -> 5: the races a run was checked for (runs.races NULL: not
	** checked); one b-tree keyed by run, no index of its own */
	"ALTER TABLE runs ADD COLUMN races INTEGER;\n"
	"CREATE TABLE races(\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"  seq INTEGER NOT NULL,\n"
	"  mode TEXT NOT NULL,\n"
	"  kind TEXT NOT NULL,\n"
	"  memory TEXT NOT NULL,\n"
	"  core INTEGER NOT NULL,\n"
	"  object TEXT NOT NULL,\n"
	"  lo INTEGER NOT NULL,\n"
	"  hi INTEGER NOT NULL,\n"
	"  a_function TEXT NOT NULL, a_block TEXT NOT NULL,\n"
	"  a_instr TEXT NOT NULL, a_iter TEXT NOT NULL,\n"
	"  a_core INTEGER NOT NULL, a_engine TEXT NOT NULL,\n"
	"  b_function TEXT NOT NULL, b_block TEXT NOT NULL,\n"
	"  b_instr TEXT NOT NULL, b_iter TEXT NOT NULL,\n"
	"  b_core INTEGER NOT NULL, b_engine TEXT NOT NULL,\n"
	"  common TEXT NOT NULL,\n"
	"  PRIMARY KEY (run_id, seq)\n"
	") STRICT, WITHOUT ROWID;\n",

	/* 5 -> 6: the NKIKernel calls of an execution and where each
	** engine's time went inside them; keyed by execution, no index of
	** their own */
	"CREATE TABLE kernels(\n"
	"  execution_id INTEGER NOT NULL REFERENCES executions(id) ON DELETE CASCADE,\n"
	"  seq INTEGER NOT NULL,\n"
	"  core INTEGER NOT NULL,\n"
	"  call TEXT NOT NULL,\n"
	"  func TEXT NOT NULL,\n"
	"  caller TEXT NOT NULL,\n"
	"  parent INTEGER NOT NULL,\n"
	"  depth INTEGER NOT NULL,\n"
	"  start_ps INTEGER NOT NULL,\n"
	"  end_ps INTEGER NOT NULL,\n"
	"  instructions INTEGER NOT NULL,\n"
	"  critical TEXT NOT NULL,\n"
	"  dma_bytes INTEGER NOT NULL,\n"
	"  dma_transfers INTEGER NOT NULL,\n"
	"  dma_xfer_ps INTEGER NOT NULL,\n"
	"  dma_active_ps INTEGER NOT NULL,\n"
	"  dma_end_ps INTEGER NOT NULL,\n"
	"  PRIMARY KEY (execution_id, seq)\n"
	") STRICT, WITHOUT ROWID;\n"
	"CREATE TABLE kernel_engines(\n"
	"  execution_id INTEGER NOT NULL,\n"
	"  seq INTEGER NOT NULL,\n"
	"  engine TEXT NOT NULL,\n"
	"  busy_ps INTEGER NOT NULL,\n"
	"  wait_sem_ps INTEGER NOT NULL,\n"
	"  wait_barrier_ps INTEGER NOT NULL,\n"
	"  wait_dep_ps INTEGER NOT NULL,\n"
	"  idle_ps INTEGER NOT NULL,\n"
	"  last_end_ps INTEGER NOT NULL,\n"
	"  PRIMARY KEY (execution_id, seq, engine),\n"
	"  FOREIGN KEY (execution_id, seq) REFERENCES kernels(execution_id, seq)\n"
	"    ON DELETE CASCADE\n"
	") STRICT, WITHOUT ROWID;\n",

	/* 6 -> 7: each kernel call's DMA per queue instance; the tables
	** only some runs write (campaigns, races, kernels) are made when
	** first written from now on: migrate() drops the groups that hold
	** no row (ldb_groups) */
	"CREATE TABLE kernel_queues(\n"
	"  execution_id INTEGER NOT NULL,\n"
	"  seq INTEGER NOT NULL,\n"
	"  queue TEXT NOT NULL,\n"
	"  bytes INTEGER NOT NULL,\n"
	"  transfers INTEGER NOT NULL,\n"
	"  xfer_ps INTEGER NOT NULL,\n"
	"  active_ps INTEGER NOT NULL,\n"
	"  PRIMARY KEY (execution_id, seq, queue),\n"
	"  FOREIGN KEY (execution_id, seq) REFERENCES kernels(execution_id, seq)\n"
	"    ON DELETE CASCADE\n"
	") STRICT, WITHOUT ROWID;\n",
};

/*
** The tables made on first use: their CREATE text is the tails of the
** migrations that first made them, each from its `from` on, so a table
** made late is the table an older file has.
*/
const ldb_group_def ldb_groups[LDB_N_GROUPS] = {
	[LDB_G_CAMPAIGNS] = { "campaigns", {{ 2, "CREATE TABLE campaigns(" }},
			      { "campaigns", "cases", "failures" }, 3 },
	[LDB_G_RACES] = { "races", {{ 4, "CREATE TABLE races(" }},
			  { "races" }, 1 },
	[LDB_G_KERNELS] = { "kernels", {{ 5, "CREATE TABLE kernels(" },
					{ 6, "CREATE TABLE kernel_queues(" }},
			    { "kernels", "kernel_engines", "kernel_queues" },
			    3 },
};

/* The CREATE statements of group g into out (reset first). */
void ldb_group_sql(int g, lm_buf *out)
{
	const ldb_group_def *gr = &ldb_groups[g];
	out->size = 0;
	for (int i = 0; i < 2 && gr->part[i].from; i++)
		lm_buf_puts(out, strstr(ldb_migrations[gr->part[i].migration],
					gr->part[i].from));
	lm_buf_put(out, "", 0);
}

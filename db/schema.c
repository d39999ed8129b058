/*
** schema.c -- the schema history of the run log, one forward migration per
** version (docs/database.md). A migration is never edited once released: a
** change is a new entry, and LDB_SCHEMA_VERSION grows by one.
*/
#include "common.h"
#include "db_int.h"

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
};

/*
** query.c -- reading the run log: the run list of `lncsim db runs` and the
** reports' summary table.
*/
#include "common.h"
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy column i as a malloc'd string ("" for NULL). */
static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return lm_xstrdup(s ? (const char *)s : "");
}

/* Copy column i into a fixed buffer. */
static void col_copy(sqlite3_stmt *st, int i, char *buf, size_t cap)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	snprintf(buf, cap, "%s", s ? (const char *)s : "");
}

/*
** The last `last` runs with their aggregates, oldest first.
*/
int ldb_query_runs(ldb *db, int last, ldb_run_row **rows, int *n,
		   lm_error *err)
{
	static const char sql[] =
		"SELECT r.id, r.uuid, r.started_utc, r.command, r.module, "
		"r.arch, r.cores, r.seed, r.status, r.message, r.tool_version, "
		"r.wall_seconds, "
		"(SELECT count(*) FROM executions e WHERE e.run_id = r.id), "
		"(SELECT max(e.sim_time_ps) FROM executions e "
		" WHERE e.run_id = r.id), "
		"(SELECT avg(c.pe_util) FROM core_stats c JOIN executions e "
		" ON c.execution_id = e.id WHERE e.run_id = r.id), "
		"(SELECT avg(c.mac_util) FROM core_stats c JOIN executions e "
		" ON c.execution_id = e.id WHERE e.run_id = r.id), "
		"(SELECT count(*) FROM matmuls x JOIN executions e "
		" ON x.execution_id = e.id WHERE e.run_id = r.id) "
		"FROM (SELECT * FROM runs ORDER BY id DESC LIMIT ?1) r "
		"ORDER BY r.id";
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "listing runs");
	sqlite3_bind_int(st, 1, last > 0 ? last : -1);
	int cap = 0, rc;
	ldb_run_row *v = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		lm_grow(&v, &cap, *n + 1, sizeof *v);
		ldb_run_row *r = &v[(*n)++];
		memset(r, 0, sizeof *r);
		r->id = sqlite3_column_int64(st, 0);
		col_copy(st, 1, r->uuid, sizeof r->uuid);
		col_copy(st, 2, r->started_utc, sizeof r->started_utc);
		r->command = col_dup(st, 3);
		r->module = col_dup(st, 4);
		r->arch = col_dup(st, 5);
		r->cores = sqlite3_column_int(st, 6);
		r->seed = (uint64_t)sqlite3_column_int64(st, 7);
		col_copy(st, 8, r->status, sizeof r->status);
		r->message = col_dup(st, 9);
		r->tool_version = col_dup(st, 10);
		r->wall_seconds = sqlite3_column_double(st, 11);
		r->n_executions = sqlite3_column_int(st, 12);
		r->sim_time_ps = sqlite3_column_type(st, 13) == SQLITE_NULL
				 ? -1 : sqlite3_column_int64(st, 13);
		r->pe_util = sqlite3_column_type(st, 14) == SQLITE_NULL
			     ? -1 : sqlite3_column_double(st, 14);
		r->mac_util = sqlite3_column_type(st, 15) == SQLITE_NULL
			      ? -1 : sqlite3_column_double(st, 15);
		r->n_matmuls = sqlite3_column_int64(st, 16);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ldb_run_rows_free(v, *n);
		*n = 0;
		return ldb_sqlerr(err, db, "listing runs");
	}
	*rows = v;
	return 0;
}

/*
** Free the rows of ldb_query_runs.
*/
void ldb_run_rows_free(ldb_run_row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		free(rows[i].command);
		free(rows[i].module);
		free(rows[i].arch);
		free(rows[i].message);
		free(rows[i].tool_version);
	}
	free(rows);
}

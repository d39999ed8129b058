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

/* 1 if word (n bytes) names the lncsim program ("lncsim", "./lncsim",
** "/usr/bin/lncsim"). */
static int is_program(const char *word, size_t n)
{
	return n >= 6 && !strncmp(word + n - 6, "lncsim", 6) &&
	       (n == 6 || word[n - 7] == '/');
}

void ldb_run_kind(const char *command, int is_case, char *kind, size_t n)
{
	const char *p = command ? command : "";
	snprintf(kind, n, "%s", is_case ? "fuzz" : "");
	if (is_case)
		return;
	for (int words = 0; words < 3; words++) {
		size_t len;
		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (len == 0)
			return;
		if (!is_program(p, len)) {
			snprintf(kind, n, "%.*s", (int)len, p);
			return;
		}
		p += len;
	}
}

int ldb_check_since(const char *s, lm_error *err)
{
	/* the shape of started_utc, or its date */
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	size_t n = strlen(s);
	int ok = n == 10 || n == sizeof shape - 1;
	for (size_t i = 0; ok && i < n; i++)
		ok = shape[i] == 'd' ? s[i] >= '0' && s[i] <= '9'
				     : s[i] == shape[i];
	if (ok) {
		/* a real date and time: month 1-12, the day in its month,
		   hours, minutes, seconds in range */
		static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30,
					     31, 30, 31 };
		int y = atoi(s), mo = atoi(s + 5), d = atoi(s + 8);
		int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
		ok = mo >= 1 && mo <= 12 && d >= 1 && d <= mdays[mo - 1] &&
		     (mo != 2 || d <= 28 + leap);
		if (ok && n > 10)
			ok = atoi(s + 11) <= 23 && atoi(s + 14) <= 59 &&
			     atoi(s + 17) <= 59;
	}
	if (!ok)
		return lm_err(err, "", "report", "--since '%s': give a UTC date "
			      "YYYY-MM-DD or a time YYYY-MM-DDTHH:MM:SSZ", s);
	return 0;
}

/*
** The runs passing f (all without f), their aggregates, the last `last`
** of them, oldest first.
*/
int ldb_query_runs_where(ldb *db, int last, const ldb_run_filter *f,
			 ldb_run_row **rows, int *n, lm_error *err)
{
	/* with a kind to match, every run since the date is read and the
	** last ones kept here: the kind is not a column */
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
		" ON x.execution_id = e.id WHERE e.run_id = r.id), "
		"EXISTS (SELECT 1 FROM cases k WHERE k.run_id = r.id) "
		"FROM (SELECT * FROM runs WHERE ?2 IS NULL OR started_utc >= ?2 "
		" ORDER BY id DESC LIMIT ?1) r "
		"ORDER BY r.id";
	const char *kind = f && f->kind ? f->kind : NULL;
	*rows = NULL;
	*n = 0;
	if ((f && f->since && ldb_check_since(f->since, err)) ||
	    ldb_see(db, LDB_G_CAMPAIGNS, err) != 0)
		return LM_EINPUT;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "listing runs");
	sqlite3_bind_int(st, 1, last > 0 && !kind ? last : -1);
	if (f && f->since)
		sqlite3_bind_text(st, 2, f->since, -1, SQLITE_STATIC);
	int cap = 0, rc;
	ldb_run_row *v = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char k[16];
		ldb_run_kind((const char *)sqlite3_column_text(st, 3),
			     sqlite3_column_int(st, 17), k, sizeof k);
		if (kind && strcmp(k, kind))
			continue;
		lm_grow(&v, &cap, *n + 1, sizeof *v);
		ldb_run_row *r = &v[(*n)++];
		memset(r, 0, sizeof *r);
		snprintf(r->kind, sizeof r->kind, "%s", k);
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
	/* keep the last ones */
	if (kind && last > 0 && *n > last) {
		int drop = *n - last;
		for (int i = 0; i < drop; i++) {
			free(v[i].command);
			free(v[i].module);
			free(v[i].arch);
			free(v[i].message);
			free(v[i].tool_version);
		}
		memmove(v, v + drop, (size_t)last * sizeof *v);
		*n = last;
	}
	*rows = v;
	return 0;
}

/*
** The last `last` runs with their aggregates, oldest first.
*/
int ldb_query_runs(ldb *db, int last, ldb_run_row **rows, int *n,
		   lm_error *err)
{
	return ldb_query_runs_where(db, last, NULL, rows, n, err);
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

/*
** The campaigns with the counts of their cases.
*/
int ldb_query_campaigns(ldb *db, const char *name, ldb_campaign_row **rows,
			int *n, lm_error *err)
{
	static const char sql[] =
		"SELECT k.name, k.gen_options, k.tool_version, k.command, "
		"k.started_utc, k.first_seed, k.count, "
		"(SELECT count(*) FROM cases c WHERE c.campaign = k.name), "
		"(SELECT count(*) FROM cases c JOIN runs r ON r.id = c.run_id "
		" WHERE c.campaign = k.name AND r.status = 'pass'), "
		"(SELECT count(*) FROM cases c JOIN runs r ON r.id = c.run_id "
		" WHERE c.campaign = k.name AND r.status = 'fail'), "
		"(SELECT count(*) FROM cases c JOIN runs r ON r.id = c.run_id "
		" WHERE c.campaign = k.name AND r.status = 'error'), "
		"(SELECT count(DISTINCT seed) FROM cases c "
		" WHERE c.campaign = k.name), "
		"(SELECT count(*) FROM failures f WHERE f.campaign = k.name) "
		"FROM campaigns k WHERE ?1 IS NULL OR k.name = ?1 ORDER BY k.id";
	*rows = NULL;
	*n = 0;
	if (ldb_see(db, LDB_G_CAMPAIGNS, err) != 0)
		return LM_EINPUT;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "listing campaigns");
	if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int cap = 0, rc;
	ldb_campaign_row *v = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		lm_grow(&v, &cap, *n + 1, sizeof *v);
		ldb_campaign_row *r = &v[(*n)++];
		memset(r, 0, sizeof *r);
		r->c.name = col_dup(st, 0);
		r->c.gen_options = col_dup(st, 1);
		r->c.tool_version = col_dup(st, 2);
		r->c.command = col_dup(st, 3);
		col_copy(st, 4, r->c.started_utc, sizeof r->c.started_utc);
		r->c.first_seed = (uint64_t)sqlite3_column_int64(st, 5);
		r->c.count = (uint64_t)sqlite3_column_int64(st, 6);
		r->cases = sqlite3_column_int64(st, 7);
		r->passed = sqlite3_column_int64(st, 8);
		r->failed = sqlite3_column_int64(st, 9);
		r->errors = sqlite3_column_int64(st, 10);
		r->seeds = sqlite3_column_int64(st, 11);
		r->signatures = sqlite3_column_int64(st, 12);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ldb_campaign_rows_free(v, *n);
		*n = 0;
		return ldb_sqlerr(err, db, "listing campaigns");
	}
	*rows = v;
	return 0;
}

void ldb_campaign_rows_free(ldb_campaign_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		ldb_campaign_free(&rows[i].c);
	free(rows);
}

/*
** The failure signatures, grouped by campaign, the most hit first.
*/
int ldb_query_failures(ldb *db, const char *campaign, ldb_failure_row **rows,
		       int *n, lm_error *err)
{
	static const char sql[] =
		"SELECT f.campaign, f.signature, f.kind, f.message, f.repro, "
		"f.seed, f.hits FROM failures f JOIN campaigns k "
		"ON k.name = f.campaign WHERE ?1 IS NULL OR f.campaign = ?1 "
		"ORDER BY k.id, f.hits DESC, f.signature";
	*rows = NULL;
	*n = 0;
	if (ldb_see(db, LDB_G_CAMPAIGNS, err) != 0)
		return LM_EINPUT;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "listing failures");
	if (campaign)
		sqlite3_bind_text(st, 1, campaign, -1, SQLITE_STATIC);
	int cap = 0, rc;
	ldb_failure_row *v = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		lm_grow(&v, &cap, *n + 1, sizeof *v);
		ldb_failure_row *r = &v[(*n)++];
		r->campaign = col_dup(st, 0);
		r->signature = col_dup(st, 1);
		r->kind = col_dup(st, 2);
		r->message = col_dup(st, 3);
		r->repro = col_dup(st, 4);
		r->seed = (uint64_t)sqlite3_column_int64(st, 5);
		r->hits = sqlite3_column_int64(st, 6);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ldb_failure_rows_free(v, *n);
		*n = 0;
		return ldb_sqlerr(err, db, "listing failures");
	}
	*rows = v;
	return 0;
}

void ldb_failure_rows_free(ldb_failure_row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		free(rows[i].campaign);
		free(rows[i].signature);
		free(rows[i].kind);
		free(rows[i].message);
		free(rows[i].repro);
	}
	free(rows);
}

/*
** The races of one run, in their logged order. The text columns of a row
** are copied into one block (row->text) the row's pointers point into.
*/
int ldb_query_races(ldb *db, int64_t run_id, ldb_race_row **rows, int *n,
		    lm_error *err)
{
	static const char sql[] =
		"SELECT run_id, seq, mode, core, lo, hi, a_core, b_core, "
		"kind, memory, object, a_function, a_block, a_instr, a_iter, "
		"a_engine, b_function, b_block, b_instr, b_iter, b_engine, "
		"common FROM races WHERE run_id = ?1 ORDER BY seq";
	enum { FIRST_TEXT = 8, N_TEXT = 14 };
	*rows = NULL;
	*n = 0;
	if (ldb_see(db, LDB_G_RACES, err) != 0)
		return LM_EINPUT;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "listing races");
	sqlite3_bind_int64(st, 1, run_id);
	int cap = 0, rc;
	ldb_race_row *v = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		lm_grow(&v, &cap, *n + 1, sizeof *v);
		ldb_race_row *r = &v[(*n)++];
		memset(r, 0, sizeof *r);
		r->run_id = sqlite3_column_int64(st, 0);
		r->seq = sqlite3_column_int(st, 1);
		col_copy(st, 2, r->mode, sizeof r->mode);
		r->r.core = sqlite3_column_int(st, 3);
		r->r.lo = sqlite3_column_int64(st, 4);
		r->r.hi = sqlite3_column_int64(st, 5);
		r->r.a.core = sqlite3_column_int(st, 6);
		r->r.b.core = sqlite3_column_int(st, 7);
		size_t len[N_TEXT], total = 0;
		for (int i = 0; i < N_TEXT; i++) {
			sqlite3_column_text(st, FIRST_TEXT + i);
			len[i] = (size_t)sqlite3_column_bytes(st, FIRST_TEXT + i);
			total += len[i] + 1;
		}
		r->text = lm_xmalloc(total);
		const char **dst[N_TEXT] = {
			&r->r.kind, &r->r.memory, &r->r.object,
			&r->r.a.function, &r->r.a.block, &r->r.a.instr,
			&r->r.a.iteration, &r->r.a.engine,
			&r->r.b.function, &r->r.b.block, &r->r.b.instr,
			&r->r.b.iteration, &r->r.b.engine, &r->r.common
		};
		char *p = r->text;
		for (int i = 0; i < N_TEXT; i++) {
			const unsigned char *s =
				sqlite3_column_text(st, FIRST_TEXT + i);
			if (len[i])
				memcpy(p, s, len[i]);
			p[len[i]] = 0;
			*dst[i] = p;
			p += len[i] + 1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ldb_race_rows_free(v, *n);
		*n = 0;
		return ldb_sqlerr(err, db, "listing races");
	}
	*rows = v;
	return 0;
}

void ldb_race_rows_free(ldb_race_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		free(rows[i].text);
	free(rows);
}

/*
** Whether run run_id was checked for races; or the last checked runs.
*/
int ldb_query_race_checks(ldb *db, int64_t run_id, int last,
			  ldb_race_check **out, int *n, lm_error *err)
{
	static const char one[] = "SELECT id, races FROM runs WHERE id = ?1";
	static const char some[] =
		"SELECT id, races FROM (SELECT id, races FROM runs "
		"WHERE races IS NOT NULL ORDER BY id DESC LIMIT ?2) ORDER BY id";
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, run_id > 0 ? one : some, -1, &st,
			       NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "listing races");
	if (run_id > 0)
		sqlite3_bind_int64(st, 1, run_id);
	else
		sqlite3_bind_int(st, 2, last > 0 ? last : -1);
	int cap = 0, rc;
	ldb_race_check *v = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		lm_grow(&v, &cap, *n + 1, sizeof *v);
		v[*n].run_id = sqlite3_column_int64(st, 0);
		v[*n].races = sqlite3_column_type(st, 1) == SQLITE_NULL
			      ? -1 : sqlite3_column_int64(st, 1);
		(*n)++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		*n = 0;
		return ldb_sqlerr(err, db, "listing races");
	}
	*out = v;
	return 0;
}

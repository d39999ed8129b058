/*
** campaign.c -- fuzz campaigns in the run log: the campaign rows, the
** seeds a campaign has recorded (what `fuzz --resume` skips), and each
** case with its failure signature (docs/database.md, "Fuzz campaigns").
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

/*
** Insert the campaigns row in a transaction of its own.
*/
int ldb_campaign_add(ldb *db, const ldb_campaign *c, lm_error *err)
{
	static const char sql[] =
		"INSERT INTO campaigns(name, started_utc, command, tool_version, "
		"gen_options, first_seed, count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
		"?7)";
	char started[32];
	sqlite3_stmt *st = NULL;
	int rc;
	if (db->open_run || db->in_batch)
		return lm_errc(err, LM_EINTERNAL, db->path, "adding a campaign",
			       "a run or a batch is open");
	if (ldb_group(db, LDB_G_CAMPAIGNS, err) != 0 ||
	    ldb_exec(db, "BEGIN IMMEDIATE", "adding a campaign", err) != 0)
		return LM_EINPUT;
	ldb_utc(0, started);
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		ldb_sqlerr(err, db, "adding a campaign");
		goto rollback;
	}
	ldb_bind_text(st, 1, c->name);
	ldb_bind_text(st, 2, started);
	ldb_bind_text(st, 3, c->command);
	ldb_bind_text(st, 4, c->tool_version ? c->tool_version
					     : PACKAGE_VERSION);
	ldb_bind_text(st, 5, c->gen_options);
	sqlite3_bind_int64(st, 6, (int64_t)c->first_seed);
	sqlite3_bind_int64(st, 7, (int64_t)c->count);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		if (sqlite3_extended_errcode(db->h) ==
		    SQLITE_CONSTRAINT_UNIQUE)
			lm_err(err, db->path, "", "campaign %s exists",
			       c->name ? c->name : "");
		else
			ldb_sqlerr(err, db, "adding a campaign");
		goto rollback;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (ldb_exec(db, "COMMIT", "adding a campaign", err) != 0)
		goto rollback;
	return 0;
rollback:
	sqlite3_finalize(st);
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return LM_EINPUT;
}

/*
** One campaign by name, or the newest.
*/
int ldb_campaign_get(ldb *db, const char *name, ldb_campaign *out,
		     int *found, lm_error *err)
{
	static const char by_name[] =
		"SELECT name, gen_options, tool_version, command, started_utc, "
		"first_seed, count FROM campaigns WHERE name = ?1";
	static const char newest[] =
		"SELECT name, gen_options, tool_version, command, started_utc, "
		"first_seed, count FROM campaigns ORDER BY id DESC LIMIT 1";
	sqlite3_stmt *st = NULL;
	*found = 0;
	/* a resumed campaign appends to these tables: probed as when one
	   is added; a file without them has no campaign */
	int has = 0;
	if (ldb_group_in(db, "main", LDB_G_CAMPAIGNS, &has, err) != 0 ||
	    (has && ldb_group(db, LDB_G_CAMPAIGNS, err) != 0))
		return LM_EINPUT;
	if (!has)
		return 0;
	if (sqlite3_prepare_v2(db->h, name ? by_name : newest, -1, &st,
			       NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "reading campaigns");
	if (name)
		ldb_bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(out, 0, sizeof *out);
		out->name = col_dup(st, 0);
		out->gen_options = col_dup(st, 1);
		out->tool_version = col_dup(st, 2);
		out->command = col_dup(st, 3);
		const unsigned char *t = sqlite3_column_text(st, 4);
		snprintf(out->started_utc, sizeof out->started_utc, "%s",
			 t ? (const char *)t : "");
		out->first_seed = (uint64_t)sqlite3_column_int64(st, 5);
		out->count = (uint64_t)sqlite3_column_int64(st, 6);
		*found = 1;
	} else if (rc != SQLITE_DONE) {
		sqlite3_finalize(st);
		return ldb_sqlerr(err, db, "reading campaigns");
	}
	sqlite3_finalize(st);
	return 0;
}

void ldb_campaign_free(ldb_campaign *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->gen_options);
	free(c->tool_version);
	free(c->command);
	memset(c, 0, sizeof *c);
}

/*
** The recorded seeds of a campaign as ranges: read in seed order (the
** cases_seed index), consecutive seeds joined.
*/
int ldb_campaign_seeds(ldb *db, const char *name, ldb_seed_range **r,
		       int *n, int64_t *total, lm_error *err)
{
	static const char sql[] =
		"SELECT seed FROM cases WHERE campaign = ?1 ORDER BY seed";
	sqlite3_stmt *st = NULL;
	ldb_seed_range *v = NULL;
	int cap = 0, k = 0, rc;
	int64_t all = 0;
	*r = NULL;
	*n = 0;
	if (ldb_see(db, LDB_G_CAMPAIGNS, err) != 0)
		return LM_EINPUT;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return ldb_sqlerr(err, db, "reading a campaign's seeds");
	ldb_bind_text(st, 1, name);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t s = (uint64_t)sqlite3_column_int64(st, 0);
		all++;
		if (k && (s == v[k - 1].hi || s == v[k - 1].hi + 1)) {
			v[k - 1].hi = s;
			continue;
		}
		lm_grow(&v, &cap, k + 1, sizeof *v);
		v[k].lo = v[k].hi = s;
		k++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return ldb_sqlerr(err, db, "reading a campaign's seeds");
	}
	*r = v;
	*n = k;
	if (total)
		*total = all;
	return 0;
}

/*
** The cases row of the open run, and its signature counted in failures.
*/
int ldb_log_case(ldb_run *run, const ldb_case_info *ci, lm_error *err)
{
	ldb *db = run->db;
	sqlite3_stmt *st = ldb_stmt(db, ST_INS_CASE, err);
	if (!st)
		goto fail;
	sqlite3_bind_int64(st, 1, run->id);
	ldb_bind_text(st, 2, ci->campaign);
	sqlite3_bind_int64(st, 3, (int64_t)ci->seed);
	ldb_bind_text(st, 4, ci->gen_options);
	ldb_bind_text(st, 5, ci->kind);
	ldb_bind_text(st, 6, ci->signature);
	if (ldb_step_done(db, st, "logging a case", err) != 0)
		goto fail;
	if (!ci->signature || !*ci->signature)
		return 0;
	if (!(st = ldb_stmt(db, ST_UPSERT_FAILURE, err)))
		goto fail;
	ldb_bind_text(st, 1, ci->campaign);
	ldb_bind_text(st, 2, ci->signature);
	ldb_bind_text(st, 3, ci->kind);
	sqlite3_bind_int64(st, 4, (int64_t)ci->seed);
	ldb_bind_text(st, 5, ci->message);
	ldb_bind_text(st, 6, ci->repro);
	if (ldb_step_done(db, st, "logging a failure", err) != 0)
		goto fail;
	return 0;
fail:
	run->failed = 1;
	return LM_EINPUT;
}

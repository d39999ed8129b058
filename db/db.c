/*
** db.c -- opening and migrating the run log, and logging runs into it.
*/
#include "common.h"
#include "db_int.h"
#include "dtype.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a writer waits for another process's transaction, in ms. */
#define BUSY_TIMEOUT_MS 60000

static const char *const stmt_sql[ST_COUNT] = {
	[ST_INS_RUN] =
	"INSERT INTO runs(uuid, started_utc, command, module, arch, cores, "
	"seed, status, message, tool_version, wall_seconds) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'error', 'incomplete', ?8, 0)",
	[ST_UPD_RUN] =
	"UPDATE runs SET status = ?1, message = ?2, wall_seconds = ?3, "
	"races = ?5 WHERE id = ?4",
	[ST_INS_EXEC] =
	"INSERT INTO executions(run_id, mode, sim_time_ps, instructions) "
	"VALUES (?1, ?2, ?3, ?4)",
	[ST_INS_CORE] =
	"INSERT INTO core_stats(execution_id, core, busy_pe_ps, busy_act_ps, "
	"busy_dve_ps, busy_pool_ps, busy_sp_ps, instructions, matmuls, macs, "
	"pe_util, mac_util, dma_bytes, dma_transfers, barrier_wait_ps, "
	"semaphore_wait_ps, end_ps, "
	"wait_sem_pe_ps, wait_sem_act_ps, wait_sem_dve_ps, wait_sem_pool_ps, "
	"wait_sem_sp_ps, wait_barrier_pe_ps, wait_barrier_act_ps, "
	"wait_barrier_dve_ps, wait_barrier_pool_ps, wait_barrier_sp_ps, "
	"wait_dep_pe_ps, wait_dep_act_ps, wait_dep_dve_ps, wait_dep_pool_ps, "
	"wait_dep_sp_ps) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
	"?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, "
	"?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32)",
	[ST_INS_MATMUL] =
	"INSERT INTO matmuls(execution_id, core, name, k, m, n, dtype, "
	"start_ps, duration_ps, array_util) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_INS_TENSOR] =
	"INSERT INTO tensors(run_id, name, equal, mismatches, first_index, "
	"max_abs_diff) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_INS_CASE] =
	"INSERT INTO cases(run_id, campaign, seed, gen_options, kind, "
	"signature) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_INS_RACE] =
	"INSERT INTO races(run_id, seq, mode, kind, memory, core, object, lo, "
	"hi, a_function, a_block, a_instr, a_iter, a_core, a_engine, "
	"b_function, b_block, b_instr, b_iter, b_core, b_engine, common) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
	"?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
	[ST_INS_KERNEL] =
	"INSERT INTO kernels(execution_id, seq, core, call, func, caller, "
	"parent, depth, start_ps, end_ps, instructions, critical, dma_bytes, "
	"dma_transfers, dma_xfer_ps, dma_active_ps, dma_end_ps) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
	"?15, ?16, ?17)",
	[ST_INS_KENGINE] =
	"INSERT INTO kernel_engines(execution_id, seq, engine, busy_ps, "
	"wait_sem_ps, wait_barrier_ps, wait_dep_ps, idle_ps, last_end_ps) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_INS_KQUEUE] =
	"INSERT INTO kernel_queues(execution_id, seq, queue, bytes, transfers, "
	"xfer_ps, active_ps) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	/* every assignment reads the old row: the seed compared is the old */
	[ST_UPSERT_FAILURE] =
	"INSERT INTO failures(campaign, signature, kind, seed, hits, message, "
	"repro) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6) "
	"ON CONFLICT(campaign, signature) DO UPDATE SET hits = hits + 1, "
	"message = CASE WHEN excluded.seed < seed THEN excluded.message "
	"ELSE message END, "
	"repro = CASE WHEN excluded.seed < seed THEN excluded.repro "
	"ELSE repro END, "
	"seed = min(seed, excluded.seed)",
	[ST_SAVEPOINT] = "SAVEPOINT run",
	[ST_RELEASE] = "RELEASE run",
};

/*
** The first problem PRAGMA quick_check finds, into buf ("" if it cannot
** run or finds none). It reads every page (about 0.6 s for 100 MB), so it
** runs only once SQLite has reported the file corrupt.
*/
static void first_problem(ldb *db, char *buf, size_t n)
{
	sqlite3_stmt *st = NULL;
	buf[0] = 0;
	if (sqlite3_prepare_v2(db->h, "PRAGMA quick_check(1)", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		static const char head[] = "*** in database main ***";
		if (t && !strncmp(t, head, sizeof head - 1))
			t += sizeof head - 1;
		while (t && (*t == '\n' || *t == ' '))
			t++;
		if (t && strcmp(t, "ok"))
			snprintf(buf, n, "%s", t);
		for (char *p = buf; *p; p++)
			if (*p == '\n')
				*p = ' ';
	}
	sqlite3_finalize(st);
}

/*
** err for a failure with SQLite result code rc and message msg: a corrupt
** file and a read-only one get their own words, the rest "PATH: where:
** msg".
*/
static int sql_fail(lm_error *err, ldb *db, const char *where, int rc,
		    const char *sqlmsg)
{
	char msg[300]; /* sqlmsg may be the connection's, which a query resets */
	snprintf(msg, sizeof msg, "%s", sqlmsg);
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB: {
		char problem[200];
		first_problem(db, problem, sizeof problem);
		return lm_err(err, db->path, where, "database is corrupt (%s%s%s):"
			      " lncsim does not write to it; recover it (sqlite3 "
			      "%s .recover) or start a new one", msg,
			      problem[0] ? "; quick_check: " : "", problem,
			      db->path);
	}
	case SQLITE_READONLY:
		return lm_err(err, db->path, where, "database is read-only (%s): "
			      "the file, its -wal/-shm files or its directory "
			      "are not writable", msg);
	default:
		return lm_err(err, db->path, where, "%s", msg);
	}
}

/*
** Fill err from the connection's last error: "PATH: where: message".
*/
int ldb_sqlerr(lm_error *err, ldb *db, const char *where)
{
	if (!db || !db->h)
		return lm_err(err, db ? db->path : "", where, "out of memory");
	return sql_fail(err, db, where, sqlite3_extended_errcode(db->h),
			sqlite3_errmsg(db->h));
}

/*
** Run SQL text that returns no rows.
*/
int ldb_exec(ldb *db, const char *sql, const char *where, lm_error *err)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db->h, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		char text[300];
		snprintf(text, sizeof text, "%s", msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		sql_fail(err, db, where, sqlite3_extended_errcode(db->h), text);
		return LM_EINPUT;
	}
	return 0;
}

/*
** Read PRAGMA user_version into *v: SQLITE_OK or SQLite's result code.
*/
static int version_rc(ldb *db, int *v)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	} else
		rc = sqlite3_extended_errcode(db->h);
	sqlite3_finalize(st);
	return rc;
}

/*
** Read PRAGMA user_version into *v. The first read of the file: a file
** that is no SQLite database at all is "not an lncsim database".
*/
static int read_version(ldb *db, int *v, lm_error *err)
{
	int rc = version_rc(db, v);
	if (rc == SQLITE_OK)
		return 0;
	if (rc == SQLITE_NOTADB)
		return lm_err(err, db->path, "", "not an lncsim database: %s",
			      sqlite3_errstr(rc));
	return ldb_sqlerr(err, db, "reading the schema version");
}

/*
** Run a probe: max() queries joined by UNION ALL, each reading the
** rightmost path of one b-tree (one row each: every row is read). A
** compound compiles cheaper than as many scalar subqueries.
*/
static int run_probe(ldb *db, const char *sql, lm_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = SQLITE_OK;
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	return ldb_sqlerr(err, db, "checking the database");
}

/*
** The cheap corruption check of an existing file, run by every open: the
** rightmost path of every table and index a run is appended to (the
** pages the next run writes), plus what SQLite checks when it loads a
** page and when it reads the whole schema table (every open does). A
** full PRAGMA quick_check reads every page (0.6 s for 100 MB); this
** reads a handful (docs/database.md, "Damaged databases"). The tables
** made on first use are probed by ldb_group, before they are first
** written.
*/
static int probe(ldb *db, lm_error *err)
{
	static const char sql[] =
		"SELECT max(id) FROM runs"
		" UNION ALL SELECT max(started_utc) FROM runs"
		" UNION ALL SELECT max(id) FROM executions"
		" UNION ALL SELECT max(run_id) FROM executions"
		" UNION ALL SELECT max(rowid) FROM core_stats"
		" UNION ALL SELECT max(execution_id) FROM core_stats"
		" UNION ALL SELECT max(id) FROM matmuls"
		" UNION ALL SELECT max(execution_id) FROM matmuls"
		" UNION ALL SELECT max(id) FROM tensors"
		" UNION ALL SELECT max(run_id) FROM tensors";
	return run_probe(db, sql, err);
}

/*
** The same check for each group of tables made on first use (the
** campaign tables are written only by fuzz and db merge, races by runs
** checked for races that found some, kernels by executions that made
** NKIKernel calls).
*/
static const char *const group_probe[LDB_N_GROUPS] = {
	[LDB_G_CAMPAIGNS] =
		"SELECT max(id) FROM campaigns"
		" UNION ALL SELECT max(name) FROM campaigns"
		" UNION ALL SELECT max(run_id) FROM cases"
		" UNION ALL SELECT max(campaign) FROM cases"
		" UNION ALL SELECT max(campaign) FROM cases WHERE signature <> ''"
		" UNION ALL SELECT max(campaign) FROM failures",
	[LDB_G_RACES] = "SELECT max(run_id) FROM races",
	[LDB_G_KERNELS] = "SELECT max(execution_id) FROM kernels"
			  " UNION ALL SELECT max(execution_id) FROM "
			  "kernel_engines"
			  " UNION ALL SELECT max(execution_id) FROM "
			  "kernel_queues",
};

int ldb_group_in(ldb *db, const char *schema, int g, int *has,
		 lm_error *err)
{
	const ldb_group_def *gr = &ldb_groups[g];
	char sql[96];
	snprintf(sql, sizeof sql, "SELECT name FROM %s.sqlite_schema WHERE "
		 "type = 'table'", schema);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	unsigned seen = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		for (int i = 0; name && i < gr->n_tables; i++)
			if (!strcmp(name, gr->tables[i]))
				seen |= 1u << i;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return ldb_sqlerr(err, db, "checking the database");
	*has = seen != 0;
	for (int i = 0; seen && i < gr->n_tables; i++)
		if (!(seen & (1u << i)))
			return lm_err(err, db->path, "", "not an lncsim "
				      "database: table %s is missing (the %s "
				      "tables come together)", gr->tables[i],
				      gr->name);
	return 0;
}

static int unsee(ldb *db, int g, const char *where, lm_error *err);

/*
** A connection reading a file without group g sees it empty: its tables
** as TEMP tables (searched before the file's own; no indexes), until
** ldb_group makes the file's own.
*/
int ldb_see(ldb *db, int g, lm_error *err)
{
	int has = 0, temp = 0;
	if (ldb_group_in(db, "main", g, &has, err) != 0 ||
	    ldb_group_in(db, "temp", g, &temp, err) != 0)
		return LM_EINPUT;
	/* the file's own, made by another process since: a writer drops
	** its TEMP copies (a reader sees the file as it opened it) */
	if (has && temp && !db->reader)
		return unsee(db, g, "reading", err);
	if (has || temp)
		return 0;
	lm_buf b = LM_BUF_INIT, sql = LM_BUF_INIT;
	static const char create[] = "CREATE TABLE ";
	ldb_group_sql(g, &sql);
	for (const char *p = sql.ptr; (p = strstr(p, create));) {
		const char *end = strstr(p, ";\n");
		lm_buf_puts(&b, "CREATE TEMP TABLE ");
		p += sizeof create - 1;
		lm_buf_put(&b, p, (size_t)(end + 2 - p));
		p = end;
	}
	lm_buf_put(&b, "", 0);
	int rc = ldb_exec(db, b.ptr, "reading", err);
	lm_buf_free(&b);
	lm_buf_free(&sql);
	return rc;
}

int ldb_readable(ldb *db, lm_error *err)
{
	for (int g = 0; g < LDB_N_GROUPS; g++)
		if (ldb_see(db, g, err) != 0)
			return LM_EINPUT;
	return 0;
}

/* Drop the TEMP tables ldb_see made for group g. */
static int unsee(ldb *db, int g, const char *where, lm_error *err)
{
	const ldb_group_def *gr = &ldb_groups[g];
	for (int i = gr->n_tables - 1; i >= 0; i--) {
		char sql[64];
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS temp.%s",
			 gr->tables[i]);
		if (ldb_exec(db, sql, where, err) != 0)
			return LM_EINPUT;
	}
	return 0;
}

int ldb_group(ldb *db, int g, lm_error *err)
{
	if (db->ready[g])
		return 0;
	int has = 0, own = 0;
	if (ldb_group_in(db, "main", g, &has, err) != 0)
		return LM_EINPUT;
	if (!has && !db->reader) {
		/* in the open transaction, or in one of its own that checks
		** again under the write lock (another process may have made
		** them meanwhile) */
		own = sqlite3_get_autocommit(db->h);
		char where[64];
		snprintf(where, sizeof where, "making the %s tables",
			 ldb_groups[g].name);
		if (own && (ldb_exec(db, "BEGIN IMMEDIATE", where, err) != 0 ||
			    ldb_group_in(db, "main", g, &has, err) != 0))
			goto rollback;
		lm_buf sql = LM_BUF_INIT;
		if (!has)
			ldb_group_sql(g, &sql);
		int bad = !has && (unsee(db, g, where, err) != 0 ||
				   ldb_exec(db, sql.ptr, where, err) != 0);
		lm_buf_free(&sql);
		if (bad)
			goto rollback;
		if (own && ldb_exec(db, "COMMIT", where, err) != 0)
			goto rollback;
		if (!has) {
			db->ready[g] = 1;
			return 0;
		}
		/* made meanwhile by another process: as if found at once */
	}
	/* a writer's TEMP tables (ldb_see, before another process made
	** the file's) would hide them */
	if (has && ((!db->reader && unsee(db, g, "checking the database",
					  err) != 0) ||
		    run_probe(db, group_probe[g], err) != 0))
		return LM_EINPUT;
	db->ready[g] = 1;
	return 0;
rollback:
	if (own && !sqlite3_get_autocommit(db->h))
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return LM_EINPUT;
}

/*
** 6 -> 7: drop each group of tables a file holds but never wrote (they
** are made when first written now, and cost every open their parsing).
*/
static int drop_unused_groups(ldb *db, lm_error *err)
{
	for (int g = 0; g < LDB_N_GROUPS; g++) {
		const ldb_group_def *gr = &ldb_groups[g];
		int has = 0;
		if (ldb_group_in(db, "main", g, &has, err) != 0)
			return LM_EINPUT;
		if (!has)
			continue;
		lm_buf q = LM_BUF_INIT;
		lm_buf_puts(&q, "SELECT 0");
		for (int i = 0; i < gr->n_tables; i++)
			lm_buf_printf(&q, " OR EXISTS (SELECT 1 FROM main.%s)",
				      gr->tables[i]);
		lm_buf_put(&q, "", 0);
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(db->h, q.ptr, -1, &st, NULL);
		lm_buf_free(&q);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		int used = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			return ldb_sqlerr(err, db, "migrating to schema 7");
		if (used)
			continue;
		for (int i = gr->n_tables - 1; i >= 0; i--) {
			char sql[64];
			snprintf(sql, sizeof sql, "DROP TABLE main.%s",
				 gr->tables[i]);
			if (ldb_exec(db, sql, "migrating to schema 7", err) != 0)
				return LM_EINPUT;
		}
	}
	return 0;
}

/*
** Bring the schema from version v (read at open) to LDB_SCHEMA_VERSION:
** every missing migration, then the new user_version, in one BEGIN
** IMMEDIATE transaction (a concurrent opener waits, then sees the
** migrated schema and does nothing).
*/
static int migrate(ldb *db, int v, lm_error *err)
{
	if (v == LDB_SCHEMA_VERSION)
		return 0;
	if (v > LDB_SCHEMA_VERSION || v < 0)
		goto too_new;
	if (ldb_exec(db, "BEGIN IMMEDIATE", "migrating", err) != 0)
		return LM_EINPUT;
	if (read_version(db, &v, err) != 0)
		goto rollback;
	if (v > LDB_SCHEMA_VERSION) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		goto too_new;
	}
	for (; v < LDB_SCHEMA_VERSION; v++) {
		char where[64];
		snprintf(where, sizeof where, "migrating to schema %d", v + 1);
		if (ldb_exec(db, ldb_migrations[v], where, err) != 0 ||
		    (v + 1 == 7 && drop_unused_groups(db, err) != 0))
			goto rollback;
	}
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", LDB_SCHEMA_VERSION);
	if (ldb_exec(db, sql, "migrating", err) != 0 ||
	    ldb_exec(db, "COMMIT", "migrating", err) != 0)
		goto rollback;
	return 0;
rollback:
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return LM_EINPUT;
too_new:
	return lm_err(err, db->path, "", "schema version %d is newer than this "
		      "lncsim supports (%d): use a newer lncsim", v,
		      LDB_SCHEMA_VERSION);
}

/*
** The "file:" URI naming path (every byte but [A-Za-z0-9/._~-]
** percent-encoded, so no path is taken for a URI or a query), with query q
** (NULL: none).
*/
static char *file_uri(const char *path, const char *q)
{
	lm_buf b = LM_BUF_INIT;
	lm_buf_puts(&b, path[0] == '/' ? "file://" : "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		int c = *p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("/._~-", c))
			lm_buf_put(&b, p, 1);
		else
			lm_buf_printf(&b, "%%%02X", c);
	}
	if (q)
		lm_buf_printf(&b, "?%s", q);
	return lm_buf_detach(&b);
}

/* A rollback undoes tables ldb_group made in the transaction. */
static void on_rollback(void *arg)
{
	ldb *db = arg;
	memset(db->ready, 0, sizeof db->ready);
}

/*
** Open db->h on the URI for db->path with query q and the open flags.
*/
static int connect(ldb *db, const char *q, int oflags, lm_error *err)
{
	sqlite3_close(db->h);
	db->h = NULL;
	free(db->uri);
	db->uri = file_uri(db->path, q);
	int rc = sqlite3_open_v2(db->uri, &db->h, oflags | SQLITE_OPEN_URI |
				 SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return lm_err(err, db->path, "", "cannot open database: %s",
			      db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
	sqlite3_extended_result_codes(db->h, 1);
	sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
	sqlite3_rollback_hook(db->h, on_rollback, db);
	return 0;
}

/*
** Set WAL mode. The setting is persistent, so only the first opener of a
** new file changes it. Switching needs the file to itself, and SQLite does
** not always wait through its busy handler for that (two processes
** creating the file at once): retry while it is busy, for the busy timeout
** in all (SQLite's own waiting off meanwhile, so the deadline holds).
*/
static int set_wal(ldb *db, lm_error *err)
{
	double deadline = lm_seconds() + BUSY_TIMEOUT_MS / 1000.0;
	int rc;
	sqlite3_busy_timeout(db->h, 0);
	for (;;) {
		sqlite3_stmt *st = NULL;
		rc = sqlite3_prepare_v2(db->h, "PRAGMA journal_mode = WAL", -1,
					&st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_ROW)
			break;
		if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
		    lm_seconds() >= deadline)
			return ldb_sqlerr(err, db, "setting WAL mode");
		sqlite3_sleep(10);
	}
	sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
	return 0;
}

/*
** Fold the log into the main file and truncate it, without waiting for
** other connections. A checkpoint that cannot finish (another process
** reads or writes, a full disk) loses nothing: the runs stay in the log,
** and the next commit or close tries again.
*/
static void checkpoint(ldb *db)
{
	sqlite3_busy_timeout(db->h, 0);
	int rc = sqlite3_wal_checkpoint_v2(db->h, "main",
					   SQLITE_CHECKPOINT_TRUNCATE, NULL,
					   NULL);
	sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
	if (rc == SQLITE_OK)
		db->wal_frames = 0;
}

/*
** After every commit (in place of SQLite's automatic checkpoint): note
** how long the log is, and checkpoint it once it reaches the threshold.
*/
static int wal_hook(void *arg, sqlite3 *h, const char *name, int frames)
{
	ldb *db = arg;
	(void)h;
	if (strcmp(name, "main"))
		return SQLITE_OK;
	db->wal_frames = frames;
	if (frames >= db->ckpt_frames)
		checkpoint(db);
	return SQLITE_OK;
}

/* The checkpoint threshold of this connection, in frames. */
void ldb_set_ckpt_frames(ldb *db, int frames)
{
	db->ckpt_frames = frames;
}

/*
** Open for writing: WAL, synchronous=NORMAL, foreign keys, busy timeout;
** refuse a file SQLite can only read; migrate; check an existing file.
*/
static int open_write(ldb *db, int flags, int is_new, lm_error *err)
{
	int oflags = SQLITE_OPEN_READWRITE;
	if (flags & LDB_CREATE)
		oflags |= SQLITE_OPEN_CREATE;
	int v = 0;
	if (connect(db, NULL, oflags, err) != 0 ||
	    read_version(db, &v, err) != 0)
		return LM_EINPUT;
	/* SQLite opens a file it may not write read-only without a word; the
	** first write would fail after the simulation */
	if (sqlite3_db_readonly(db->h, "main") == 1)
		return lm_err(err, db->path, "", "database is read-only: the "
			      "file or its directory is not writable");
	char sql[160];
	snprintf(sql, sizeof sql, "PRAGMA synchronous = NORMAL; PRAGMA "
		 "foreign_keys = ON; PRAGMA journal_size_limit = %d",
		 LDB_WAL_SIZE_LIMIT);
	if (set_wal(db, err) != 0 ||
	    ldb_exec(db, sql, "configuring", err) != 0)
		return LM_EINPUT;
	/* no checkpoint (and fsync) at every close: the hook checkpoints a
	** log grown past the threshold, amortized over runs */
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	db->ckpt_frames = LDB_CKPT_FRAMES;
	sqlite3_wal_hook(db->h, wal_hook, db);
	if (migrate(db, v, err) != 0)
		return LM_EINPUT;
	return is_new ? 0 : probe(db, err);
}

/* Whether path's write-ahead log exists and is not empty. */
static int wal_has_frames(const char *path)
{
	char *wal = lm_xasprintf("%s-wal", path);
	struct stat st;
	int has = stat(wal, &st) == 0 && st.st_size > 0;
	free(wal);
	return has;
}

/*
** Open for reading only (mode=ro). A WAL database needs its -shm file;
** when it cannot be created (read-only directory) and the log holds no
** frames, the main file is all there is and is opened immutable (no locks,
** no -shm). A database that still needs migrating is opened for writing
** (it has to be writable then). *reopen is set when open_write should take
** over.
*/
static int connect_read(ldb *db, int *v, lm_error *err)
{
	if (connect(db, "mode=ro", SQLITE_OPEN_READONLY, err) != 0)
		return LM_EINPUT;
	int rc = version_rc(db, v);
	if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) {
		/* no -shm and none can be made: the main file is all there
		** is, unless the WAL holds frames (reading without them would
		** hide the newest runs) */
		if (wal_has_frames(db->path))
			return lm_err(err, db->path, "", "cannot read: its -wal "
				      "file holds runs but it has no -shm file, "
				      "and none can be made (read-only "
				      "directory); make the directory writable "
				      "for one lncsim command");
		if (connect(db, "mode=ro&immutable=1", SQLITE_OPEN_READONLY,
			    err) != 0)
			return LM_EINPUT;
		rc = version_rc(db, v);
	}
	if (rc == SQLITE_OK)
		return 0;
	if (rc == SQLITE_NOTADB)
		return lm_err(err, db->path, "", "not an lncsim database: %s",
			      sqlite3_errstr(rc));
	return ldb_sqlerr(err, db, "reading the schema version");
}

static int open_read(ldb *db, int *reopen, lm_error *err)
{
	int v = 0;
	*reopen = 0;
	if (connect_read(db, &v, err) != 0)
		return LM_EINPUT;
	if (v > LDB_SCHEMA_VERSION || v < 0)
		return lm_err(err, db->path, "", "schema version %d is newer than "
			      "this lncsim supports (%d): use a newer lncsim", v,
			      LDB_SCHEMA_VERSION);
	if (v < LDB_SCHEMA_VERSION) {
		*reopen = 1;
		return 0;
	}
	return probe(db, err);
}

/*
** Open (creating with LDB_CREATE, read-only with LDB_READ), migrate, check.
*/
int ldb_open(ldb **out, const char *path, int flags, lm_error *err)
{
	*out = NULL;
	if (!path || !*path)
		return lm_err(err, "", "", "empty database path");
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (!(flags & LDB_CREATE) && !exists)
		return lm_err(err, path, "", "no such database");
	int is_new = !exists || (S_ISREG(st.st_mode) && st.st_size == 0);
	ldb *db = lm_xcalloc(1, sizeof *db);
	db->path = lm_xstrdup(path);
	int reopen = 1;
	if (flags & LDB_READ) {
		if (open_read(db, &reopen, err) != 0)
			goto fail;
		if (reopen && open_write(db, 0, is_new, err) != 0) {
			/* a writable file failed for another reason: that */
			if (access(path, W_OK) == 0)
				goto fail;
			char why[sizeof err->msg];
			snprintf(why, sizeof why, "%s", err->msg);
			lm_err(err, path, "", "the schema must be migrated to "
			       "version %d first, which needs writing: %s",
			       LDB_SCHEMA_VERSION, why);
			goto fail;
		}
		db->reader = 1;
		if (ldb_readable(db, err) != 0)
			goto fail;
	} else if (open_write(db, flags, is_new, err) != 0)
		goto fail;
	*out = db;
	return 0;
fail:
	ldb_close(db);
	return LM_EINPUT;
}

/*
** PRAGMA integrity_check on a read-only connection of its own (no
** migration, no probe: it must work on the file ldb_open refuses).
*/
int ldb_check_file(const char *path, char **problems, lm_error *err)
{
	*problems = NULL;
	if (!path || !*path)
		return lm_err(err, "", "", "empty database path");
	struct stat st;
	if (stat(path, &st) != 0)
		return lm_err(err, path, "", "no such database");
	ldb tmp = {0};
	tmp.path = (char *)path;
	int v = 0, rc = LM_EINPUT;
	sqlite3_stmt *q = NULL;
	lm_buf b = LM_BUF_INIT;
	if (connect_read(&tmp, &v, err) != 0)
		goto done;
	if (sqlite3_prepare_v2(tmp.h, "PRAGMA integrity_check", -1, &q,
			       NULL) != SQLITE_OK) {
		/* a schema SQLite cannot even parse */
		lm_buf_printf(&b, "%s\n", sqlite3_errmsg(tmp.h));
		rc = 0;
		goto done;
	}
	int s;
	while ((s = sqlite3_step(q)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);
		if (t && strcmp(t, "ok"))
			lm_buf_printf(&b, "%s\n", t);
	}
	if (s != SQLITE_DONE)
		lm_buf_printf(&b, "%s\n", sqlite3_errmsg(tmp.h));
	rc = 0;
done:
	sqlite3_finalize(q);
	sqlite3_close(tmp.h);
	free(tmp.uri);
	if (rc == 0) {
		lm_buf_put(&b, "", 0);
		*problems = lm_buf_detach(&b);
	} else
		lm_buf_free(&b);
	return rc;
}

/*
** Roll back an open run, finalize the statements, close the connection.
*/
void ldb_close(ldb *db)
{
	if (!db)
		return;
	if (db->open_run)
		ldb_run_abort(db->open_run);
	ldb_batch_abort(db);
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(db->st[i]);
	/* leave the log empty: the next opener then has no frames to read
	** and checksum to rebuild its index (the pages of a small command
	** are few, the fsyncs cheap next to that) */
	if (db->h && db->ckpt_frames && db->wal_frames > 0)
		checkpoint(db);
	sqlite3_close(db->h);
	free(db->uri);
	free(db->path);
	free(db);
}

/* The path given to ldb_open. */
const char *ldb_path(const ldb *db)
{
	return db->path;
}

/* The connection, for read-only queries of the reports. */
struct sqlite3 *ldb_sqlite(ldb *db)
{
	return db->h;
}

/*
** The schema version of an existing file, read without migrating (for
** tests and diagnostics).
*/
int ldb_file_version(const char *path, int *version, lm_error *err)
{
	ldb tmp = {0};
	tmp.path = (char *)path;
	if (access(path, F_OK) != 0)
		return lm_err(err, path, "", "no such database");
	if (sqlite3_open_v2(path, &tmp.h, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		ldb_sqlerr(err, &tmp, "opening");
		sqlite3_close(tmp.h);
		return LM_EINPUT;
	}
	int rc = read_version(&tmp, version, err);
	sqlite3_close(tmp.h);
	return rc;
}

/* ---- logging --------------------------------------------------------- */

/*
** The prepared statement i of db, reset and unbound, ready for binding.
*/
sqlite3_stmt *ldb_stmt(ldb *db, int i, lm_error *err)
{
	if (!db->st[i]) {
		lm_buf sql = LM_BUF_INIT;
		if (i == ST_INS_MATMUL_BATCH) {
			/* the single-row INSERT with MATMUL_BATCH value rows */
			const char *v = strstr(stmt_sql[ST_INS_MATMUL], "VALUES");
			lm_buf_put(&sql, stmt_sql[ST_INS_MATMUL],
				   (size_t)(v - stmt_sql[ST_INS_MATMUL]));
			lm_buf_puts(&sql, "VALUES ");
			for (int r = 0; r < MATMUL_BATCH; r++)
				lm_buf_printf(&sql, "%s(?,?,?,?,?,?,?,?,?,?)",
					      r ? "," : "");
		} else
			lm_buf_puts(&sql, stmt_sql[i]);
		int rc = sqlite3_prepare_v3(db->h, sql.ptr, -1,
					    SQLITE_PREPARE_PERSISTENT,
					    &db->st[i], NULL);
		lm_buf_free(&sql);
		if (rc != SQLITE_OK) {
			ldb_sqlerr(err, db, "preparing");
			return NULL;
		}
	}
	sqlite3_reset(db->st[i]);
	sqlite3_clear_bindings(db->st[i]);
	return db->st[i];
}

/*
** Step a bound insert/update to completion and reset it.
*/
int ldb_step_done(ldb *db, sqlite3_stmt *st, const char *where,
		     lm_error *err)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		ldb_sqlerr(err, db, where);
		sqlite3_reset(st);
		return LM_EINPUT;
	}
	sqlite3_reset(st);
	return 0;
}

/* Bind a real, NULL for NaN (SQLite would store NULL anyway). */
static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* Bind a string, "" for NULL. */
void ldb_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

/*
** A fresh random version-4 UUID in buf (37 bytes).
*/
static void make_uuid(char buf[40])
{
	unsigned char b[16];
	sqlite3_randomness(sizeof b, b);
	/* sqlite3_randomness is seeded per process from the OS; mix in the
	** pid and the time too, so forked children never share a stream. */
	uint64_t mix = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^
		       (uint64_t)time(NULL);
	for (int i = 0; i < 8; i++)
		b[i] ^= (unsigned char)(mix >> (8 * i));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(buf, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

/* Run prepared statement i, which takes no parameters (SAVEPOINT,
** RELEASE: parsed once, not at every run of a batch). */
static int step_stmt(ldb *db, int i, const char *where, lm_error *err)
{
	sqlite3_stmt *st = ldb_stmt(db, i, err);
	if (!st)
		return LM_EINPUT;
	return ldb_step_done(db, st, where, err);
}

/* The time t (0: now) in UTC, ISO 8601 with a Z. */
void ldb_utc(time_t t, char buf[32])
{
	struct tm tm;
	if (!t)
		t = time(NULL);
	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
** Inside a batch, a failed statement may have rolled the whole
** transaction back (SQLite does so on a full disk, an I/O error, no
** memory): the batch is lost then, and every later run of it is
** refused with why, until ldb_batch_commit reports it.
*/
static void note_batch(ldb *db, const lm_error *err)
{
	if (!db->in_batch || db->batch_failed ||
	    !sqlite3_get_autocommit(db->h))
		return;
	db->batch_failed = 1;
	snprintf(db->batch_msg, sizeof db->batch_msg, "%.900s (the batch of "
		 "runs it was in is rolled back)", err ? err->msg : "");
}

/*
** Undo the open run: its savepoint inside a batch, else its transaction.
*/
static void undo(ldb *db, const lm_error *err)
{
	/* tables made in the transaction or savepoint are gone again */
	memset(db->ready, 0, sizeof db->ready);
	if (!db->in_batch) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		return;
	}
	note_batch(db, err);
	if (!db->batch_failed)
		sqlite3_exec(db->h, "ROLLBACK TO run; RELEASE run", NULL, NULL,
			     NULL);
}

/*
** Open a batch: one write transaction for many runs.
*/
int ldb_batch_begin(ldb *db, lm_error *err)
{
	if (db->open_run || db->in_batch)
		return lm_errc(err, LM_EINTERNAL, db->path, "logging",
			       "a run or a batch is already open");
	if (ldb_exec(db, "BEGIN IMMEDIATE", "logging a batch", err) != 0)
		return LM_EINPUT;
	db->in_batch = 1;
	db->batch_failed = 0;
	db->batch_msg[0] = 0;
	return 0;
}

/*
** Commit the runs of the batch, or report why none of them is kept.
*/
int ldb_batch_commit(ldb *db, lm_error *err)
{
	if (!db->in_batch)
		return lm_errc(err, LM_EINTERNAL, db->path, "logging",
			       "no batch is open");
	if (db->open_run)
		return lm_errc(err, LM_EINTERNAL, db->path, "logging",
			       "a run of the batch is still open");
	int rc = 0;
	if (db->batch_failed)
		rc = lm_err(err, "", "", "%.1000s", db->batch_msg);
	else if (ldb_exec(db, "COMMIT", "committing a batch", err) != 0) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		rc = LM_EINPUT;
	}
	db->in_batch = 0;
	db->batch_failed = 0;
	return rc;
}

/*
** Roll an open batch back.
*/
void ldb_batch_abort(ldb *db)
{
	if (!db || !db->in_batch)
		return;
	if (db->open_run)
		ldb_run_abort(db->open_run);
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	db->in_batch = 0;
	db->batch_failed = 0;
}

int ldb_batch_is_open(const ldb *db)
{
	return db->in_batch;
}

/*
** Start the run's transaction and insert its runs row.
*/
int ldb_run_begin(ldb *db, const ldb_run_info *info, ldb_run **out,
		  lm_error *err)
{
	*out = NULL;
	if (db->open_run)
		return lm_errc(err, LM_EINTERNAL, db->path, "logging",
			       "a run is already open");
	if (db->batch_failed)
		return lm_err(err, "", "", "%.1000s", db->batch_msg);
	char uuid[40], started[32];
	if (info->uuid && *info->uuid)
		snprintf(uuid, sizeof uuid, "%s", info->uuid);
	else
		make_uuid(uuid);
	ldb_utc(info->started, started);

	if (db->in_batch ? step_stmt(db, ST_SAVEPOINT, "logging a run", err)
			 : ldb_exec(db, "BEGIN IMMEDIATE", "logging a run", err)) {
		note_batch(db, err);
		return LM_EINPUT;
	}
	sqlite3_stmt *st = ldb_stmt(db, ST_INS_RUN, err);
	if (!st)
		goto rollback;
	ldb_bind_text(st, 1, uuid);
	ldb_bind_text(st, 2, started);
	ldb_bind_text(st, 3, info->command);
	ldb_bind_text(st, 4, info->module);
	ldb_bind_text(st, 5, info->arch);
	sqlite3_bind_int(st, 6, info->cores);
	sqlite3_bind_int64(st, 7, (int64_t)info->seed);
	ldb_bind_text(st, 8, info->tool_version ? info->tool_version
					    : PACKAGE_VERSION);
	if (ldb_step_done(db, st, "logging a run", err) != 0)
		goto rollback;
	ldb_run *run = lm_xcalloc(1, sizeof *run);
	run->db = db;
	run->id = sqlite3_last_insert_rowid(db->h);
	db->open_run = run;
	*out = run;
	return 0;
rollback:
	undo(db, err);
	return LM_EINPUT;
}

/* The runs.id of an open run (visible to this connection only). */
int64_t ldb_run_id(const ldb_run *run)
{
	return run->id;
}

/*
** Bind one matmul record to parameters base+1 .. base+10.
*/
static void bind_matmul(sqlite3_stmt *st, int base, int64_t exec_id,
			const ls_matmul_rec *mm)
{
	const char *dt = lm_dtype_name(mm->dtype);
	sqlite3_bind_int64(st, base + 1, exec_id);
	sqlite3_bind_int(st, base + 2, mm->core);
	ldb_bind_text(st, base + 3, mm->name);
	sqlite3_bind_int(st, base + 4, mm->k);
	sqlite3_bind_int(st, base + 5, mm->m);
	sqlite3_bind_int(st, base + 6, mm->n);
	ldb_bind_text(st, base + 7, dt ? dt : "");
	sqlite3_bind_int64(st, base + 8, mm->start_ps);
	sqlite3_bind_int64(st, base + 9, mm->duration_ps);
	bind_real(st, base + 10, mm->array_util);
}

/* The kernels rows of execution exec_id and their kernel_engines and
** kernel_queues rows (nothing when the program made no NKIKernel call). */
static int log_kernels(ldb *db, int64_t exec_id, const ls_result *r,
		       lm_error *err)
{
	sqlite3_stmt *sk, *se, *sq;
	if (r->n_kernels == 0)
		return 0;
	if (ldb_group(db, LDB_G_KERNELS, err) != 0)
		return LM_EINPUT;
	if (!(sk = ldb_stmt(db, ST_INS_KERNEL, err)) ||
	    !(se = ldb_stmt(db, ST_INS_KENGINE, err)) ||
	    !(sq = ldb_stmt(db, ST_INS_KQUEUE, err)))
		return LM_EINPUT;
	for (int i = 0; i < r->n_kernels; i++) {
		const ls_kernel_stats *k = &r->kernels[i];
		sqlite3_bind_int64(sk, 1, exec_id);
		sqlite3_bind_int(sk, 2, i);
		sqlite3_bind_int(sk, 3, k->core);
		ldb_bind_text(sk, 4, k->call ? k->call : "");
		ldb_bind_text(sk, 5, k->func ? k->func : "");
		ldb_bind_text(sk, 6, k->caller ? k->caller : "");
		sqlite3_bind_int(sk, 7, k->parent);
		sqlite3_bind_int(sk, 8, k->depth);
		sqlite3_bind_int64(sk, 9, k->start_ps);
		sqlite3_bind_int64(sk, 10, k->end_ps);
		sqlite3_bind_int64(sk, 11, k->instructions);
		ldb_bind_text(sk, 12, ls_kernel_engine_name(k->critical));
		sqlite3_bind_int64(sk, 13, k->dma_bytes);
		sqlite3_bind_int64(sk, 14, k->dma_transfers);
		sqlite3_bind_int64(sk, 15, k->dma_xfer_ps);
		sqlite3_bind_int64(sk, 16, k->dma_active_ps);
		sqlite3_bind_int64(sk, 17, k->dma_end_ps);
		if (ldb_step_done(db, sk, "logging kernels", err) != 0)
			return LM_EINPUT;
		for (int e = 0; e < LS_ENGINES; e++) {
			sqlite3_bind_int64(se, 1, exec_id);
			sqlite3_bind_int(se, 2, i);
			ldb_bind_text(se, 3, ls_kernel_engine_name(e));
			sqlite3_bind_int64(se, 4, k->busy_ps[e]);
			sqlite3_bind_int64(se, 5, k->wait_sem_ps[e]);
			sqlite3_bind_int64(se, 6, k->wait_barrier_ps[e]);
			sqlite3_bind_int64(se, 7, k->wait_dep_ps[e]);
			sqlite3_bind_int64(se, 8, k->idle_ps[e]);
			sqlite3_bind_int64(se, 9, k->last_end_ps[e]);
			if (ldb_step_done(db, se, "logging kernels", err) != 0)
				return LM_EINPUT;
		}
		for (int q = 0; q < k->n_queues; q++) {
			const ls_kernel_queue *kq = &k->queues[q];
			sqlite3_bind_int64(sq, 1, exec_id);
			sqlite3_bind_int(sq, 2, i);
			ldb_bind_text(sq, 3, kq->queue ? kq->queue : "");
			sqlite3_bind_int64(sq, 4, kq->bytes);
			sqlite3_bind_int64(sq, 5, kq->transfers);
			sqlite3_bind_int64(sq, 6, kq->xfer_ps);
			sqlite3_bind_int64(sq, 7, kq->active_ps);
			if (ldb_step_done(db, sq, "logging kernels", err) != 0)
				return LM_EINPUT;
		}
	}
	return 0;
}

/*
** Insert the executions row, the core_stats rows, the matmuls rows and
** the kernels rows of one simulated program.
*/
int ldb_log_execution(ldb_run *run, const char *mode, const ls_result *r,
		      lm_error *err)
{
	ldb *db = run->db;
	if (!mode || (strcmp(mode, "reference") && strcmp(mode, "linked") &&
		      strcmp(mode, "single"))) {
		run->failed = 1;
		return lm_err(err, db->path, "logging",
			      "unknown execution mode '%s' (reference, linked "
			      "or single)", mode ? mode : "(null)");
	}
	if (r->n_cores < 0 || r->n_matmuls < 0 || r->n_kernels < 0 ||
	    (r->n_cores && !r->cores) || (r->n_matmuls && !r->matmuls) ||
	    (r->n_kernels && !r->kernels)) {
		run->failed = 1;
		return lm_errc(err, LM_EINTERNAL, db->path, "logging",
			       "inconsistent result counts");
	}
	sqlite3_stmt *st = ldb_stmt(db, ST_INS_EXEC, err);
	if (!st)
		goto fail;
	sqlite3_bind_int64(st, 1, run->id);
	ldb_bind_text(st, 2, mode);
	sqlite3_bind_int64(st, 3, r->sim_time_ps);
	sqlite3_bind_int64(st, 4, r->instructions);
	if (ldb_step_done(db, st, "logging an execution", err) != 0)
		goto fail;
	int64_t exec_id = sqlite3_last_insert_rowid(db->h);

	if (!(st = ldb_stmt(db, ST_INS_CORE, err)))
		goto fail;
	for (int i = 0; i < r->n_cores; i++) {
		const ls_core_stats *c = &r->cores[i];
		sqlite3_bind_int64(st, 1, exec_id);
		sqlite3_bind_int(st, 2, c->core);
		for (int e = 0; e < LS_ENGINES; e++)
			sqlite3_bind_int64(st, 3 + e, c->busy_ps[e]);
		sqlite3_bind_int64(st, 8, c->instructions);
		sqlite3_bind_int64(st, 9, c->matmuls);
		sqlite3_bind_int64(st, 10, c->macs);
		bind_real(st, 11, c->pe_util);
		bind_real(st, 12, c->mac_util);
		sqlite3_bind_int64(st, 13, c->dma_bytes);
		sqlite3_bind_int64(st, 14, c->dma_transfers);
		sqlite3_bind_int64(st, 15, c->barrier_wait_ps);
		sqlite3_bind_int64(st, 16, c->semaphore_wait_ps);
		sqlite3_bind_int64(st, 17, c->end_ps);
		for (int e = 0; e < LS_ENGINES; e++) {
			sqlite3_bind_int64(st, 18 + e, c->wait_sem_ps[e]);
			sqlite3_bind_int64(st, 23 + e, c->wait_barrier_ps[e]);
			sqlite3_bind_int64(st, 28 + e, c->wait_dep_ps[e]);
		}
		if (ldb_step_done(db, st, "logging core stats", err) != 0)
			goto fail;
	}

	/* whole batches of MATMUL_BATCH rows, then the rest one by one */
	int i = 0;
	if (r->n_matmuls >= MATMUL_BATCH) {
		if (!(st = ldb_stmt(db, ST_INS_MATMUL_BATCH, err)))
			goto fail;
		for (; i + MATMUL_BATCH <= r->n_matmuls; i += MATMUL_BATCH) {
			for (int j = 0; j < MATMUL_BATCH; j++)
				bind_matmul(st, 10 * j, exec_id,
					    &r->matmuls[i + j]);
			if (sqlite3_step(st) != SQLITE_DONE) {
				ldb_sqlerr(err, db, "logging matmuls");
				sqlite3_reset(st);
				goto fail;
			}
			sqlite3_reset(st);
		}
	}
	if (i < r->n_matmuls && !(st = ldb_stmt(db, ST_INS_MATMUL, err)))
		goto fail;
	for (; i < r->n_matmuls; i++) {
		bind_matmul(st, 0, exec_id, &r->matmuls[i]);
		if (sqlite3_step(st) != SQLITE_DONE) {
			ldb_sqlerr(err, db, "logging matmuls");
			sqlite3_reset(st);
			goto fail;
		}
		sqlite3_reset(st);
	}
	if (log_kernels(db, exec_id, r, err) != 0)
		goto fail;
	return 0;
fail:
	run->failed = 1;
	return LM_EINPUT;
}

/*
** Insert one tensors row.
*/
int ldb_log_tensor(ldb_run *run, const char *name, int equal,
		   int64_t mismatches, int64_t first_index,
		   double max_abs_diff, lm_error *err)
{
	ldb *db = run->db;
	sqlite3_stmt *st = ldb_stmt(db, ST_INS_TENSOR, err);
	if (!st)
		goto fail;
	sqlite3_bind_int64(st, 1, run->id);
	ldb_bind_text(st, 2, name);
	sqlite3_bind_int(st, 3, equal ? 1 : 0);
	sqlite3_bind_int64(st, 4, mismatches);
	sqlite3_bind_int64(st, 5, first_index);
	bind_real(st, 6, max_abs_diff);
	if (ldb_step_done(db, st, "logging a tensor", err) != 0)
		goto fail;
	return 0;
fail:
	run->failed = 1;
	return LM_EINPUT;
}

/* Whether s is one of the NULL-terminated words. */
static int is_one_of(const char *s, const char *const *words)
{
	for (; s && *words; words++)
		if (!strcmp(s, *words))
			return 1;
	return 0;
}

/* Bind one access to parameters base+1 .. base+6. */
static void bind_access(sqlite3_stmt *st, int base, const ldb_race_access *x)
{
	ldb_bind_text(st, base + 1, x->function);
	ldb_bind_text(st, base + 2, x->block);
	ldb_bind_text(st, base + 3, x->instr);
	ldb_bind_text(st, base + 4, x->iteration);
	sqlite3_bind_int(st, base + 5, x->core);
	ldb_bind_text(st, base + 6, x->engine);
}

/*
** Note the mode as checked and insert one races row per race; nothing
** is inserted (or prepared) when there are none.
*/
int ldb_log_races(ldb_run *run, const char *mode, const ldb_race *races,
		  int n, lm_error *err)
{
	static const char *const modes[] = { "reference", "linked", "single",
					     NULL };
	static const char *const kinds[] = { "RAW", "WAR", "WAW", "SLOT",
					      NULL };
	static const char *const mems[] = { "SBUF", "PSUM", "DRAM", "BARRIER",
					     NULL };
	ldb *db = run->db;
	if (!is_one_of(mode, modes)) {
		run->failed = 1;
		return lm_err(err, db->path, "logging races", "unknown "
			      "execution mode '%s' (reference, linked or "
			      "single)", mode ? mode : "(null)");
	}
	if (n < 0 || (n && !races)) {
		run->failed = 1;
		return lm_errc(err, LM_EINTERNAL, db->path, "logging races",
			       "inconsistent race count");
	}
	for (int i = 0; i < n; i++) {
		const ldb_race *r = &races[i];
		if (!is_one_of(r->kind, kinds) || !is_one_of(r->memory, mems) ||
		    !strcmp(r->kind, "SLOT") != !strcmp(r->memory, "BARRIER") ||
		    r->lo < 0 || r->hi <= r->lo) {
			run->failed = 1;
			return lm_errc(err, LM_EINTERNAL, db->path,
				       "logging races", "race %d: kind '%s', "
				       "memory '%s', range [%lld, %lld): a "
				       "kind RAW/WAR/WAW in memory SBUF/PSUM/"
				       "DRAM or SLOT in BARRIER, and a "
				       "non-empty range expected",
				       i, r->kind ? r->kind : "(null)",
				       r->memory ? r->memory : "(null)",
				       (long long)r->lo, (long long)r->hi);
		}
	}
	run->race_checked = 1;
	if (n == 0)
		return 0;
	sqlite3_stmt *st;
	if (ldb_group(db, LDB_G_RACES, err) != 0 ||
	    !(st = ldb_stmt(db, ST_INS_RACE, err)))
		goto fail;
	for (int i = 0; i < n; i++) {
		const ldb_race *r = &races[i];
		sqlite3_bind_int64(st, 1, run->id);
		sqlite3_bind_int64(st, 2, run->n_races);
		ldb_bind_text(st, 3, mode);
		ldb_bind_text(st, 4, r->kind);
		ldb_bind_text(st, 5, r->memory);
		sqlite3_bind_int(st, 6, r->core);
		ldb_bind_text(st, 7, r->object);
		sqlite3_bind_int64(st, 8, r->lo);
		sqlite3_bind_int64(st, 9, r->hi);
		bind_access(st, 9, &r->a);
		bind_access(st, 15, &r->b);
		ldb_bind_text(st, 22, r->common);
		if (ldb_step_done(db, st, "logging races", err) != 0)
			goto fail;
		run->n_races++;
	}
	return 0;
fail:
	run->failed = 1;
	return LM_EINPUT;
}

/*
** Unlink the run from its connection and free it.
*/
static void run_free(ldb_run *run)
{
	run->db->open_run = NULL;
	free(run);
}

/*
** Set the final status and COMMIT; on any failure roll everything back.
*/
int ldb_run_end(ldb_run *run, const char *status, const char *message,
		double wall_seconds, int64_t *run_id, lm_error *err)
{
	ldb *db = run->db;
	int64_t id = run->id;
	if (run->failed) {
		lm_err(err, db->path, "logging", "run not logged: an earlier "
		       "logging call failed");
		goto rollback;
	}
	if (!status || (strcmp(status, "pass") && strcmp(status, "fail") &&
			strcmp(status, "error"))) {
		lm_err(err, db->path, "logging", "unknown run status '%s' "
		       "(pass, fail or error)", status ? status : "(null)");
		goto rollback;
	}
	sqlite3_stmt *st = ldb_stmt(db, ST_UPD_RUN, err);
	if (!st)
		goto rollback;
	ldb_bind_text(st, 1, status);
	ldb_bind_text(st, 2, message);
	bind_real(st, 3, wall_seconds);
	sqlite3_bind_int64(st, 4, id);
	if (run->race_checked)
		sqlite3_bind_int64(st, 5, run->n_races);
	if (ldb_step_done(db, st, "logging a run", err) != 0 ||
	    (db->in_batch ? step_stmt(db, ST_RELEASE, "committing a run", err)
			  : ldb_exec(db, "COMMIT", "committing a run", err)) != 0)
		goto rollback;
	run_free(run);
	if (run_id)
		*run_id = id;
	return 0;
rollback:
	undo(db, err);
	run_free(run);
	return LM_EINPUT;
}

/*
** Roll the run's transaction (in a batch: its savepoint) back: nothing
** of it is kept.
*/
void ldb_run_abort(ldb_run *run)
{
	if (!run)
		return;
	undo(run->db, NULL);
	run_free(run);
}

/* SPDX-License-Identifier: MIT */
/*
 * nsys.c - read an Nsight Systems SQLite export into the import model: GPU activity
 * (kernel, memcpy, memset), CUDA runtime/driver API rows and NVTX push/pop and start/end
 * ranges. Column sets differ between export schema versions: each table's columns are
 * looked up first and missing optional ones read as NULL (docs/importers.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "imp.h"

#ifdef LIN_HAVE_SQLITE
#include <sqlite3.h>

#define NVTX_PUSHPOP 59
#define NVTX_STARTEND 60
#define VALUE_MAX (16 << 20) /* longest string or blob read (bounded memory) */

struct nctx {
	sqlite3 *db;
	struct lin_imp *m;
	struct lin_jfile *f;
	uint64_t index;
	uint64_t ticks, max_ticks; /* progress-handler calls, and the bound */
};

static int fail(struct lin_jfile *f, uint64_t row, const char *fmt, const char *a, const char *b)
{
	snprintf(f->err, sizeof(f->err), fmt, a, b);
	f->err_off = row;
	return -1;
}

#define TICK 10000 /* VM instructions per progress-handler call */

/* Every query together may run max_ticks * TICK VM instructions (in proportion to the file
 * size): a file crafted to make a query run unbounded is refused, not followed. */
static int progress(void *arg)
{
	struct nctx *c = arg;
	return ++c->ticks > c->max_ticks;
}

/* The tables read must be tables: a VIEW (or any other object) under one of their names
 * is refused, since a view can compute rows without bound. 0, or -1 with the message. */
static int only_tables(struct nctx *c)
{
	static const char sql[] =
		"SELECT name, type FROM sqlite_master WHERE type <> 'table' "
		"AND lower(name) IN ('cupti_activity_kind_kernel', 'cupti_activity_kind_memcpy', "
		"'cupti_activity_kind_memset', 'cupti_activity_kind_runtime', "
		"'cupti_activity_kind_driver', 'nvtx_events', 'stringids', 'processes', "
		"'threadnames')";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(c->f, 0, "not an SQLite database: %s%s", sqlite3_errmsg(c->db), "");
	int rc = 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		char msg[200];
		snprintf(msg, sizeof(msg), "%s is a %s, not a table (refused: only tables are read)",
			 (const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1));
		rc = fail(c->f, 0, "%s%s", msg, "");
	}
	sqlite3_finalize(st);
	return rc;
}

/* 1: table has the column, 0: not, -1: no such table, -2: error (not a database...). */
static int has_col(struct nctx *c, const char *table, const char *col)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL))
		return -2;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	int rc = -1, r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (rc < 0)
			rc = 0;
		const char *n = (const char *)sqlite3_column_text(st, 0);
		if (n && !strcmp(n, col))
			rc = 1;
	}
	if (r != SQLITE_DONE)
		rc = -2;
	sqlite3_finalize(st);
	return rc;
}

static const char *col_or_null(struct nctx *c, const char *t, const char *col, const char *expr)
{
	return has_col(c, t, col) == 1 ? expr : "NULL";
}

/* 0: the cell holds an integer (or NULL when not @required); else what it holds. */
static const char *int_col(sqlite3_stmt *st, int i, uint64_t *out, bool required)
{
	int t = sqlite3_column_type(st, i);
	*out = 0;
	if (t == SQLITE_NULL)
		return required ? "NULL" : NULL;
	if (t == SQLITE_INTEGER) {
		*out = (uint64_t)sqlite3_column_int64(st, i);
		return NULL;
	}
	return t == SQLITE_FLOAT ? "a real number" : t == SQLITE_TEXT ? "text" : "a blob";
}

/* Columns of every query: start, end, thread-or-pid, correlation, name, rowid, dev, stream */
static int read_rows(struct nctx *c, const char *sql, const char *table, int kind)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(c->f, 0, "table %s: %s", table, sqlite3_errmsg(c->db));
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t v[8], row = (uint64_t)sqlite3_column_int64(st, 5);
		static const char *const col[8] = {
			"start",    "end",     "globalTid/globalPid", "correlationId", "", "",
			"deviceId", "streamId"
		};
		bool has_corr = sqlite3_column_type(st, 3) != SQLITE_NULL;
		for (int i = 0; i < 8; i++) {
			const char *bad = i == 4 || i == 5 ? NULL : int_col(st, i, &v[i], i == 0);
			if (!bad)
				continue;
			char msg[160];
			snprintf(msg, sizeof(msg), "rowid %llu: column %s is %s, not an integer%s",
				 (unsigned long long)row, col[i], bad,
				 i ? "" : " (a start time is required)");
			sqlite3_finalize(st);
			return fail(c->f, row, "table %s, %s", table, msg);
		}
		uint64_t start = v[0], end = v[1], who = v[2], corr = v[3], dev = v[6], str = v[7];
		bool no_who = sqlite3_column_type(st, 2) == SQLITE_NULL;
		c->m->records++;
		if (kind == LIN_IMP_LAUNCH && !has_corr)
			continue;
		if (no_who && kind < LIN_IMP_KERNEL)
			continue; /* an API row or range of no process joins nothing */
		struct lin_imp_ev *e = lin_imp_push(c->m);
		if (!e) {
			sqlite3_finalize(st);
			return fail(c->f, row, "%s%s", "out of memory", "");
		}
		e->index = c->index++;
		e->off = row;
		e->kind = (uint8_t)kind;
		e->ts = (int64_t)start;
		e->end = (int64_t)(end >= start ? end : start);
		e->corr = corr;
		e->flags = (uint8_t)((has_corr ? LIN_IMP_HAS_CORR : 0) | (no_who ? LIN_IMP_NO_PROC : 0));
		e->proc = (who >> 24) & 0xffffff; /* globalPid / globalTid encode the pid */
		e->tid = kind >= LIN_IMP_KERNEL ? str : who & 0xffffff;
		e->dev = (uint16_t)dev;
		const unsigned char *name = sqlite3_column_text(st, 4);
		if (name) {
			e->name = lin_imp_name(c->m, (const char *)name, strlen((const char *)name));
			if (kind == LIN_IMP_LAUNCH && strstr((const char *)name, "GraphLaunch"))
				e->flags |= LIN_IMP_GRAPH;
		}
	}
	int rc = 0;
	if (r == SQLITE_INTERRUPT && c->ticks > c->max_ticks)
		rc = fail(c->f, 0, "table %s: the queries ran past their bound (%s); refused",
			  table, "proportional to the file size");
	else if (r == SQLITE_TOOBIG)
		rc = fail(c->f, 0, "table %s: a value longer than 16 MiB (%s)", table,
			  sqlite3_errmsg(c->db));
	else if (r != SQLITE_DONE)
		rc = fail(c->f, 0, "table %s: %s", table, sqlite3_errmsg(c->db));
	sqlite3_finalize(st);
	return rc;
}

static int read_gpu(struct nctx *c, const char *table, int kind, bool strings)
{
	int h = has_col(c, table, "start");
	if (h == -1)
		return 0; /* optional table */
	c->m->gpu_tables[kind - LIN_IMP_KERNEL] = true;
	if (h < 1 || has_col(c, table, "correlationId") != 1)
		return fail(c->f, 0, "table %s: %s", table, "no start or correlationId column");
	char sql[768];
	const char *name = kind == LIN_IMP_KERNEL && strings
				   ? col_or_null(c, table, "demangledName",
						 "(SELECT value FROM StringIds WHERE id = t.demangledName)")
				   : "NULL";
	snprintf(sql, sizeof(sql),
		 "SELECT t.start, t.\"end\", %s, t.correlationId, %s, t.rowid, %s, %s FROM %s t",
		 col_or_null(c, table, "globalPid", "t.globalPid"), name,
		 col_or_null(c, table, "deviceId", "t.deviceId"),
		 col_or_null(c, table, "streamId", "t.streamId"), table);
	return read_rows(c, sql, table, kind);
}

static int read_api(struct nctx *c, const char *table, bool strings)
{
	if (has_col(c, table, "start") == -1)
		return 0;
	if (has_col(c, table, "globalTid") != 1 || has_col(c, table, "correlationId") != 1)
		return fail(c->f, 0, "table %s: %s", table, "no globalTid or correlationId column");
	char name[256];
	bool nid = strings && has_col(c, table, "nameId") == 1, ncol = has_col(c, table, "name") == 1;
	snprintf(name, sizeof(name), "COALESCE(%s, %s)",
		 nid ? "(SELECT value FROM StringIds WHERE id = t.nameId)" : "NULL",
		 ncol ? "CAST(t.name AS TEXT)" : "NULL");
	char sql[768];
	snprintf(sql, sizeof(sql),
		 "SELECT t.start, t.\"end\", t.globalTid, t.correlationId, %s, t.rowid, NULL, NULL "
		 "FROM %s t",
		 name, table);
	return read_rows(c, sql, table, LIN_IMP_LAUNCH);
}

static int read_nvtx(struct nctx *c, bool strings)
{
	if (has_col(c, "NVTX_EVENTS", "start") == -1)
		return 0;
	if (has_col(c, "NVTX_EVENTS", "globalTid") != 1 || has_col(c, "NVTX_EVENTS", "eventType") != 1)
		return fail(c->f, 0, "table %s: %s", "NVTX_EVENTS", "no globalTid or eventType column");
	char name[256];
	bool tid = strings && has_col(c, "NVTX_EVENTS", "textId") == 1;
	snprintf(name, sizeof(name), "COALESCE(%s, %s)",
		 has_col(c, "NVTX_EVENTS", "text") == 1 ? "t.text" : "NULL",
		 tid ? "(SELECT value FROM StringIds WHERE id = t.textId)" : "NULL");
	char sql[768];
	snprintf(sql, sizeof(sql),
		 "SELECT t.start, t.\"end\", t.globalTid, NULL, %s, t.rowid, NULL, NULL "
		 "FROM NVTX_EVENTS t WHERE t.eventType IN (%d, %d) AND t.\"end\" IS NOT NULL",
		 name, NVTX_PUSHPOP, NVTX_STARTEND);
	return read_rows(c, sql, "NVTX_EVENTS", LIN_IMP_OP);
}

/* Process and thread names for the Perfetto export; best effort (they join nothing, so a
 * table that is absent or odd is skipped, not an error). */
static void read_names(struct nctx *c, bool strings)
{
	static const char *const q[] = {
		"SELECT globalPid, NULL, name FROM PROCESSES",
		"SELECT globalTid, 1, (SELECT value FROM StringIds WHERE id = t.nameId) "
		"FROM ThreadNames t",
	};
	for (int i = 0; i < 2; i++) {
		sqlite3_stmt *st;
		if ((i == 1 && !strings) || sqlite3_prepare_v2(c->db, q[i], -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW) {
			const unsigned char *name = sqlite3_column_text(st, 2);
			if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || !name)
				continue;
			uint64_t g = (uint64_t)sqlite3_column_int64(st, 0);
			uint64_t proc = (g >> 24) & 0xffffff, tid = i ? g & 0xffffff : LIN_NIL;
			if (!lin_imp_meta_add(c->m, proc, tid, (const char *)name,
					      strlen((const char *)name)))
				break;
		}
		sqlite3_finalize(st);
	}
}

int lin_imp_nsys(struct lin_imp *m, const char *path, struct lin_jfile *f)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return fail(f, 0, "cannot open: %s%s", strerror(errno), "");
	if (!S_ISREG(sb.st_mode))
		return fail(f, 0, "%s%s", lin_imp_not_regular(sb.st_mode), "");
	f->size = (uint64_t)sb.st_size;
	struct nctx c = { NULL, m, f, 0, 0, 0 };
	/* ~1000 VM instructions per byte of file, at least 10^9: far more than reading every
	 * row of a real export takes */
	c.max_ticks = ((uint64_t)sb.st_size * 1000 + 1000000000ull) / TICK;
	int rc = -1;
	if (sqlite3_open_v2(path, &c.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fail(f, 0, "cannot open as SQLite: %s%s", c.db ? sqlite3_errmsg(c.db) : "", "");
		goto out;
	}
	sqlite3_limit(c.db, SQLITE_LIMIT_LENGTH, VALUE_MAX);
	int k = has_col(&c, "CUPTI_ACTIVITY_KIND_KERNEL", "start");
	if (k == -2) {
		fail(f, 0, "not an SQLite database: %s%s", sqlite3_errmsg(c.db), "");
		goto out;
	}
	if (only_tables(&c))
		goto out;
	sqlite3_progress_handler(c.db, TICK, progress, &c);
	bool strings = has_col(&c, "StringIds", "value") == 1;
	if (k == -1 && has_col(&c, "CUPTI_ACTIVITY_KIND_RUNTIME", "start") == -1) {
		fail(f, 0, "%s%s",
		     "not an Nsight Systems export: no CUPTI_ACTIVITY_KIND_KERNEL or "
		     "CUPTI_ACTIVITY_KIND_RUNTIME table",
		     "");
		goto out;
	}
	if (read_nvtx(&c, strings) || read_api(&c, "CUPTI_ACTIVITY_KIND_RUNTIME", strings) ||
	    read_api(&c, "CUPTI_ACTIVITY_KIND_DRIVER", strings) ||
	    read_gpu(&c, "CUPTI_ACTIVITY_KIND_KERNEL", LIN_IMP_KERNEL, strings) ||
	    read_gpu(&c, "CUPTI_ACTIVITY_KIND_MEMCPY", LIN_IMP_MEMCPY, strings) ||
	    read_gpu(&c, "CUPTI_ACTIVITY_KIND_MEMSET", LIN_IMP_MEMSET, strings))
		goto out;
	read_names(&c, strings);
	rc = 0;
out:
	sqlite3_close(c.db);
	return rc;
}

#else /* !LIN_HAVE_SQLITE */

int lin_imp_nsys(struct lin_imp *m, const char *path, struct lin_jfile *f)
{
	(void)m;
	(void)path;
	snprintf(f->err, sizeof(f->err), "this build has no SQLite (libsqlite3)");
	return -1;
}

#endif

bool lin_imp_have(const char *fmt, const char **lacks)
{
	*lacks = NULL;
	(void)fmt;
#ifndef LIN_HAVE_YAJL
	if (!strcmp(fmt, "kineto"))
		*lacks = "the yajl JSON parser (libyajl-dev)";
#endif
#ifndef LIN_HAVE_SQLITE
	if (!strcmp(fmt, "nsys"))
		*lacks = "SQLite (libsqlite3-dev)";
#endif
	return *lacks == NULL;
}

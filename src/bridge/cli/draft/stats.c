/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  What pg_stat_statements saw in this database: the checks that it can
 *	  be read (installed, preloaded, every text visible), the window of the
 *	  statistics, and the statements, normalized and merged.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/draft/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draft/draft.h"

/*
 * extension_schema
 *		The schema of an installed extension (quoted), or NULL.
 */
static char *
extension_schema(PGconn *conn, const char *ext)
{
	const char *params[1] = {ext};
	PGresult   *res;
	char	   *r = NULL;

	res = bridge_exec(conn, "looking for an extension",
					  "SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e "
					  "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
					  "WHERE e.extname = $1", 1, params);
	if (PQntuples(res) == 1)
		r = bridge_strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return r;
}

/*
 * preloaded
 *		Is pg_stat_statements in shared_preload_libraries?  (Its view needs
 *		the library loaded at server start for its shared memory.)
 */
static bool
preloaded(PGconn *conn)
{
	PGresult   *res;
	bool		r;

	res = bridge_exec(conn, "reading shared_preload_libraries",
					  "SELECT 'pg_stat_statements' = ANY (pg_catalog.string_to_array("
					  "pg_catalog.replace(pg_catalog.current_setting('shared_preload_libraries'), ' ', ''), ','))",
					  0, NULL);
	r = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return r;
}

/* order of merging: by key */
static int
cmp_key(const void *a, const void *b)
{
	return strcmp(((const DraftStmt *) a)->key, ((const DraftStmt *) b)->key);
}

/* order of the draft: total time descending, then text (deterministic) */
static int
cmp_total(const void *a, const void *b)
{
	const DraftStmt *x = a;
	const DraftStmt *y = b;

	if (x->total_ms != y->total_ms)
		return x->total_ms < y->total_ms ? 1 : -1;
	return strcmp(x->key, y->key);
}

/*
 * classify
 *		Keep a statement when it reads the schema (a SELECT naming one of
 *		its relations) or writes one of its relations (INSERT, UPDATE,
 *		DELETE); anything else (other schemas, utility statements, CTE
 *		writes) is not part of the draft.
 */
static bool
classify(DraftStmt *s, const char *schema)
{
	char	   *w = draft_first_word(s->text);
	bool		keep = false;

	if (strcmp(w, "SELECT") == 0)
		keep = draft_mentions_schema(s->text, schema);
	else if (strcmp(w, "INSERT") == 0 || strcmp(w, "UPDATE") == 0 || strcmp(w, "DELETE") == 0)
	{
		char	   *rel = draft_write_target(s->text, w);
		size_t		n = strlen(schema);

		if (rel && strncmp(rel, schema, n) == 0 && rel[n] == '.')
		{
			s->is_write = true;
			s->write_op = w;
			s->write_rel = rel;
			return true;
		}
		free(rel);
	}
	free(w);
	return keep;
}

/*
 * draft_read_stats
 *		Read pg_stat_statements for this database (and --role): check that
 *		it is installed and loaded, that every text is visible, note the
 *		window and evictions; then normalize the statements of the schema
 *		and merge those that became the same text (IN lists of different
 *		lengths, other numbering), summing their counts.
 */
void
draft_read_stats(PGconn *conn, const BridgeOptions *opts, DraftStats *st)
{
	char	   *pss = extension_schema(conn, "pg_stat_statements");
	const char *params[2];
	PGresult   *res;
	StrBuf		sql;
	int			n;
	DraftStmt  *all;
	int			nall = 0;

	memset(st, 0, sizeof(*st));
	if (pss == NULL)
		bridge_fatal_hint(preloaded(conn)
						  ? "Run CREATE EXTENSION pg_stat_statements in this database (the library is preloaded already), let the application run, then draft again."
						  : "Add pg_stat_statements to shared_preload_libraries in postgresql.conf, restart the server, run CREATE EXTENSION pg_stat_statements in this database, let the application run, then draft again.",
						  "pg_stat_statements is not installed in database \"%s\"", PQdb(conn));
	st->ext_schema = bridge_strdup(bridge_extension_schema(conn));

	/* the window; fails like the view when the library is not loaded */
	sb_init(&sql);
	sb_appendf(&sql, "SELECT i.dealloc, i.stats_reset, "
			   "extract(epoch FROM pg_catalog.now() - i.stats_reset)::float8 "
			   "FROM %s.pg_stat_statements_info i", pss);
	res = PQexec(conn, sql.data);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		if (state && strcmp(state, "55000") == 0)
			bridge_fatal_hint("Add pg_stat_statements to shared_preload_libraries in postgresql.conf and restart the server; then let the application run and draft again.",
							  "pg_stat_statements is installed but not loaded: it is not in shared_preload_libraries (SQLSTATE 55000)");
		bridge_fatal("reading pg_stat_statements_info failed: %s", PQerrorMessage(conn));
	}
	st->dealloc = atol(PQgetvalue(res, 0, 0));
	st->since = bridge_strdup(PQgetvalue(res, 0, 1));
	st->seconds = atof(PQgetvalue(res, 0, 2));
	if (st->seconds < 1)
		st->seconds = 1;
	PQclear(res);

	/* the statements of this database (top level: not those of functions) */
	sb_free(&sql);
	sb_init(&sql);
	sb_appendf(&sql, "SELECT s.query, s.calls, s.total_exec_time, s.rows "
			   "FROM %s.pg_stat_statements s "
			   "WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()) "
			   "AND s.toplevel AND s.calls > 0 "
			   "AND ($1::text IS NULL OR s.userid = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = $1)) "
			   "ORDER BY s.total_exec_time DESC, s.queryid", pss);
	params[0] = opts->role;
	if (opts->role)
	{
		const char *rp[1] = {opts->role};

		res = bridge_exec(conn, "looking for the role", "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1", 1, rp);
		if (PQntuples(res) == 0)
			bridge_fatal_hint("Give an existing role with --role (the role the application connects as).",
							  "role \"%s\" (--role) does not exist", opts->role);
		PQclear(res);
	}
	res = bridge_exec(conn, "reading pg_stat_statements", sql.data, 1, params);
	n = PQntuples(res);
	all = bridge_malloc(sizeof(DraftStmt) * (n + 1));
	memset(all, 0, sizeof(DraftStmt) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		DraftStmt  *s = &all[nall];
		const char *q = PQgetvalue(res, i, 0);

		st->nentries++;
		if (PQgetisnull(res, i, 0) || strcmp(q, "<insufficient privilege>") == 0)
		{
			st->nhidden++;
			continue;
		}
		s->text = draft_normalize(q, &s->in_list, &s->nrestored);
		s->key = draft_merge_key(s->text);
		s->calls = atol(PQgetvalue(res, i, 1));
		s->total_ms = atof(PQgetvalue(res, i, 2));
		s->rows = atol(PQgetvalue(res, i, 3));
		s->nmerged = 1;
		if (classify(s, opts->source_schema))
			nall++;
		else
		{
			free(s->text);
			free(s->key);
		}
	}
	PQclear(res);
	if (st->nhidden > 0)
	{
		char	   *me;

		res = bridge_exec(conn, "reading the current user", "SELECT current_user", 0, NULL);
		me = bridge_strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
		bridge_fatal_hint(bridge_printf("GRANT pg_read_all_stats TO %s; or run as a role that has it, or draft only your own statements with --role %s.",
										bridge_qi(me), me),
						  "%ld of %ld statements of pg_stat_statements show \"<insufficient privilege>\" instead of their text: this role may not read other roles' statements, so the draft would miss them",
						  st->nhidden, st->nentries);
	}

	/* merge the statements that became the same text */
	qsort(all, nall, sizeof(DraftStmt), cmp_key);
	st->stmts = bridge_malloc(sizeof(DraftStmt) * (nall + 1));
	for (int i = 0; i < nall; i++)
	{
		DraftStmt  *prev = st->nstmts ? &st->stmts[st->nstmts - 1] : NULL;

		if (prev && strcmp(prev->key, all[i].key) == 0)
		{
			prev->calls += all[i].calls;
			prev->total_ms += all[i].total_ms;
			prev->rows += all[i].rows;
			prev->nmerged += all[i].nmerged;
			prev->in_list |= all[i].in_list;
			continue;
		}
		st->stmts[st->nstmts++] = all[i];
	}
	qsort(st->stmts, st->nstmts, sizeof(DraftStmt), cmp_total);
	free(all);
	sb_free(&sql);
}

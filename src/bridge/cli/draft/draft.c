/*-------------------------------------------------------------------------
 *
 * draft.c
 *	  "cqlbridge workload": draft the workload file from pg_stat_statements.
 *
 * The statements that read --schema, ranked by total execution time
 * (--top N, --min-calls N), each a block of the workload format: a
 * generated name, a description with calls, mean time and rows per call,
 * parameters typed as PostgreSQL infers them (PREPARE) and named after the
 * column each is compared with (cql_bridge_analyze).  A statement plan's
 * rules cannot serve (check.c) is written commented out, with plan's
 * reason, so that nothing is dropped silently.  The writes to the schema's
 * relations become the write profile of the header ("-- writes: ROWS/S
 * RELATION"), which plan turns into Cassandra writes per query table.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/draft/draft.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "draft/draft.h"

/*
 * error_text
 *		A failed result as "message (SQLSTATE s); HINT: h" (allocated).
 */
static char *
error_text(PGconn *conn, PGresult *res)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	char	   *r;
	size_t		n;

	r = bridge_printf("%s%s%s%s%s%s", msg ? msg : PQerrorMessage(conn),
					  state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "",
					  hint ? "; HINT: " : "", hint ? hint : "");
	n = strlen(r);
	while (n > 0 && r[n - 1] == '\n')
		r[--n] = '\0';
	for (char *c = r; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return r;
}

/*
 * infer_types
 *		The parameter types PostgreSQL infers for the text (an unnamed
 *		prepared statement, described, never executed); false with
 *		s->reason when it does not prepare.
 */
static bool
infer_types(PGconn *conn, DraftStmt *s)
{
	PGresult   *res = PQprepare(conn, "", s->text, 0, NULL);

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		s->reason = bridge_printf("it does not prepare: %s", error_text(conn, res));
		PQclear(res);
		return false;
	}
	PQclear(res);
	res = PQdescribePrepared(conn, "");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		bridge_fatal("describing a statement failed: %s", PQerrorMessage(conn));
	s->nparams = PQnparams(res);
	s->ptypes = bridge_malloc(sizeof(char *) * (s->nparams + 1));
	s->pnames = bridge_malloc(sizeof(char *) * (s->nparams + 1));
	for (int k = 0; k < s->nparams; k++)
	{
		char		oid[16];
		const char *p[1] = {oid};
		PGresult   *t;

		snprintf(oid, sizeof(oid), "%u", PQparamtype(res, k));
		t = bridge_exec(conn, "naming a parameter type",
						"SELECT pg_catalog.format_type($1::pg_catalog.oid, NULL)", 1, p);
		s->ptypes[k] = bridge_strdup(PQgetvalue(t, 0, 0));
		s->pnames[k] = bridge_printf("p%d", k + 1);
		PQclear(t);
	}
	PQclear(res);
	return true;
}

/* a parameter name not used by another parameter of s */
static char *
unique_param(DraftStmt *s, int k, const char *base)
{
	char	   *name = draft_ident(base);

	for (int n = 2;; n++)
	{
		bool		taken = false;

		for (int j = 0; j < s->nparams; j++)
			if (j != k && strcmp(s->pnames[j], name) == 0)
				taken = true;
		if (!taken)
			return name;
		name = bridge_printf("%s_%d", draft_ident(base), n);
	}
}

/*
 * name_params
 *		Every parameter named after the column it is compared with
 *		(cql_bridge_analyze's equality and range rows: "g.last_name = $1"
 *		-> last_name; a range's bounds get _from / _to; a LIMIT parameter is
 *		row_limit), the query's entity
 *		(its first relation) and its name Q<rank>_<entity>_by_<columns>.
 *		false with s->reason when the analysis refuses the statement.
 */
static bool
name_params(PGconn *conn, const char *ext, const char *schema, DraftStmt *s, int rank)
{
	StrBuf		types;
	StrBuf		sql;
	StrBuf		by;
	const char *params[2];
	PGresult   *res;
	int			limit_param = 0;

	sb_init(&types);
	sb_append(&types, bridge_text_array(s->ptypes, s->nparams));
	sb_init(&sql);
	sb_appendf(&sql, "SELECT kind, op, param, column_name, table_name, level "
			   "FROM %s.cql_bridge_analyze($1, $2::text[]::regtype[])", ext);
	params[0] = s->text;
	params[1] = types.data;
	res = PQexecParams(conn, sql.data, 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		char	   *rel = draft_first_relation(s->text, schema);

		s->reason = error_text(conn, res);
		PQclear(res);
		s->name = bridge_printf("Q%d_%s", rank, rel ? draft_ident(rel) : "query");
		return false;
	}
	for (int i = 0; i < PQntuples(res); i++)
	{
		const char *kind = PQgetvalue(res, i, 0);
		const char *op = PQgetvalue(res, i, 1);
		int			k = atoi(PQgetvalue(res, i, 2));

		if (strcmp(kind, "relation") == 0 && s->entity == NULL &&
			strcmp(PQgetvalue(res, i, 5), "0") == 0)
			s->entity = draft_ident(PQgetvalue(res, i, 4));
		if ((strcmp(kind, "equality") == 0 || strcmp(kind, "range") == 0) &&
			k >= 1 && k <= s->nparams &&
			strcmp(s->pnames[k - 1], bridge_printf("p%d", k)) == 0)
		{
			const char *col = PQgetvalue(res, i, 3);
			char	   *base = strcmp(kind, "range") != 0 ? bridge_strdup(col)
				: bridge_printf("%s_%s", col, op[0] == '>' ? "from" : "to");

			s->pnames[k - 1] = unique_param(s, k - 1, base);
		}
		/* LIMIT $k (pg_stat_statements turns LIMIT 1 into one) */
		if (strcmp(kind, "limit") == 0 && k >= 1 && k <= s->nparams &&
			strcmp(s->pnames[k - 1], bridge_printf("p%d", k)) == 0)
		{
			s->pnames[k - 1] = unique_param(s, k - 1, "row_limit");
			limit_param = k;
		}
	}
	PQclear(res);

	sb_init(&by);
	for (int k = 0; k < s->nparams; k++)
	{
		char	   *col = bridge_strdup(s->pnames[k]);
		size_t		n = strlen(col);

		if (k + 1 == limit_param)
			continue;			/* the name says what it searches by */

		/* date_from, date_to -> date once */
		if (n > 5 && strcmp(col + n - 5, "_from") == 0)
			col[n - 5] = '\0';
		else if (n > 3 && strcmp(col + n - 3, "_to") == 0)
			col[n - 3] = '\0';
		if (!strstr(by.data ? by.data : "", bridge_printf("_%s_", col)))
			sb_appendf(&by, "_%s_", col);
	}
	{
		char	   *cols = draft_ident(by.data ? by.data : "");

		s->name = bridge_printf("Q%d_%s%s%s", rank, s->entity ? s->entity : "query",
								by.len ? "_by_" : "", by.len ? cols : "");
	}
	sb_free(&types);
	sb_free(&sql);
	sb_free(&by);
	return true;
}

/* "name type, ..." or "none" */
static char *
params_line(const DraftStmt *s)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; k < s->nparams; k++)
		sb_appendf(&sb, "%s%s %s", k ? ", " : "", s->pnames[k], s->ptypes[k]);
	if (s->nparams == 0)
		sb_append(&sb, "none");
	return sb.data;
}

/* the description line: what the statistics say of the statement */
static char *
description(const DraftStmt *s, double reads_ms)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "%ld calls, mean %.3f ms, %.2f rows per call, %.1f%% of the read time",
			   s->calls, s->calls ? s->total_ms / (double) s->calls : 0.0,
			   s->calls ? (double) s->rows / (double) s->calls : 0.0,
			   reads_ms > 0 ? 100.0 * s->total_ms / reads_ms : 0.0);
	if (s->nmerged > 1)
		sb_appendf(&sb, "; %d statements merged%s", s->nmerged,
				   s->in_list ? " (IN lists of different lengths as = ANY)" : "");
	else if (s->in_list)
		sb_append(&sb, "; its IN list written as = ANY");
	if (s->nrestored > 0)
		sb_appendf(&sb, "; %d jsonb_build_object keys restored from the column names (check them)",
				   s->nrestored);
	return sb.data;
}

/* one block: metadata and the statement (commented out with a reason) */
static void
append_block(StrBuf *out, const DraftStmt *s, double reads_ms)
{
	const char *c = s->reason ? "-- " : "";

	sb_append(out, "\n");
	if (s->reason)
		sb_appendf(out, "-- not_served: %s\n", s->reason);
	sb_appendf(out, "-- name: %s\n", s->name);
	sb_appendf(out, "-- description: %s\n", description(s, reads_ms));
	sb_appendf(out, "-- params: %s\n", params_line(s));
	sb_appendf(out, "-- calls: %ld\n", s->calls);
	for (const char *p = s->sql; *p;)
	{
		const char *nl = strchr(p, '\n');
		size_t		n = nl ? (size_t) (nl - p) : strlen(p);

		sb_append(out, c);
		for (size_t i = 0; i < n; i++)
			sb_appendc(out, p[i]);
		if (!nl)
			sb_append(out, ";");
		sb_append(out, "\n");
		p += n + (nl ? 1 : 0);
	}
}

/*
 * write_profile
 *		The header lines of the writes: per relation the rows written per
 *		second over the window ("-- writes: ROWS/S RELATION", read by plan)
 *		and what they were.
 */
static void
write_profile(StrBuf *out, const DraftStats *st)
{
	bool		any = false;

	for (int i = 0; i < st->nstmts; i++)
	{
		const DraftStmt *s = &st->stmts[i];
		bool		seen = false;
		long		rows = 0;
		StrBuf		ops;

		if (!s->is_write)
			continue;
		for (int j = 0; j < i; j++)
			if (st->stmts[j].is_write && strcmp(st->stmts[j].write_rel, s->write_rel) == 0)
				seen = true;
		if (seen)
			continue;
		if (!any)
			sb_append(out, "--\n-- Write profile: rows written per second to each relation (INSERT, UPDATE,\n"
					  "-- DELETE over the window); plan reports the Cassandra writes per second\n"
					  "-- they cause in each query table.\n");
		any = true;
		sb_init(&ops);
		for (int j = i; j < st->nstmts; j++)
		{
			const DraftStmt *w = &st->stmts[j];

			if (!w->is_write || strcmp(w->write_rel, s->write_rel) != 0)
				continue;
			rows += w->rows;
			sb_appendf(&ops, "%s%s %ld calls %ld rows", ops.len ? ", " : "", w->write_op, w->calls, w->rows);
		}
		sb_appendf(out, "-- writes: %.3f %s\n--   (%s)\n", (double) rows / st->seconds, s->write_rel, ops.data);
		sb_free(&ops);
	}
	if (!any)
		sb_append(out, "--\n-- Write profile: no INSERT, UPDATE or DELETE of the schema's relations seen.\n");
}

/*
 * cmd_workload
 *		"cqlbridge workload": read the statistics, draft every statement that
 *		reads the schema (ranked, cut by --top and --min-calls), check each
 *		against plan's rules, write the file (-o FILE, or stdout).  Returns
 *		0; failures exit.
 */
int
cmd_workload(const BridgeOptions *opts)
{
	PGconn	   *conn;
	DraftStats	st;
	StrBuf		out;
	StrBuf		blocks;
	int			nreads = 0;
	int			nkept = 0;
	int			nserved = 0;
	int			nwrites = 0;
	double		reads_ms = 0;
	struct stat sbuf;

	if (!opts->source_schema)
		bridge_fatal_hint("Give the relational schema, e.g. --schema hotel_rel.", "workload needs --schema");
	if (opts->output && strcmp(opts->output, "-") != 0 && stat(opts->output, &sbuf) == 0)
		bridge_fatal_hint("Remove it or give another -o FILE: a reviewed workload file is not overwritten.",
						  "\"%s\" exists", opts->output);
	conn = bridge_connect(opts);
	{
		const char *p[1] = {opts->source_schema};
		PGresult   *res = bridge_exec(conn, "reading the schema",
									  "SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1", 1, p);

		if (PQntuples(res) == 0)
			bridge_fatal_hint("Create the schema or give the right --schema.",
							  "schema \"%s\" (--schema) does not exist", opts->source_schema);
		PQclear(res);
	}
	draft_read_stats(conn, opts, &st);
	for (int i = 0; i < st.nstmts; i++)
	{
		if (st.stmts[i].is_write)
			nwrites++;
		else
		{
			nreads++;
			reads_ms += st.stmts[i].total_ms;
		}
	}
	if (nreads == 0)
		bridge_fatal_hint("Let the application run with pg_stat_statements loaded (pg_stat_statements.track = top or all), check -d and --role; "
						  "statements must name the tables schema-qualified (schema.table).",
						  "pg_stat_statements has no SELECT on schema \"%s\" in database \"%s\" (%ld statements read%s)",
						  opts->source_schema, PQdb(conn), st.nentries,
						  nwrites ? bridge_printf(", %d writing it", nwrites) : "");
	if (st.dealloc > 0)
		fprintf(stderr, "cqlbridge: warning: pg_stat_statements evicted %ld statements since %s (pg_stat_statements_info.dealloc): the picture may be incomplete\n"
				"HINT:  Raise pg_stat_statements.max, run pg_stat_statements_reset() and let the application run again.\n",
				st.dealloc, st.since);

	sb_init(&blocks);
	for (int i = 0; i < st.nstmts; i++)
	{
		DraftStmt  *s = &st.stmts[i];

		if (s->is_write)
			continue;
		if (s->calls < opts->min_calls || (opts->top > 0 && nkept >= opts->top))
			continue;
		nkept++;
		if (infer_types(conn, s))
			name_params(conn, st.ext_schema, opts->source_schema, s, nkept);
		if (s->name == NULL)
		{
			char	   *rel = draft_first_relation(s->text, opts->source_schema);

			s->name = bridge_printf("Q%d_%s", nkept, rel ? draft_ident(rel) : "query");
		}
		s->sql = draft_substitute(s->text, s->pnames, s->ptypes, s->nparams);
		if (s->reason == NULL)
		{
			StrBuf		b;

			sb_init(&b);
			append_block(&b, s, reads_ms);
			s->reason = draft_check_block(opts, b.data + 1);
			sb_free(&b);
		}
		if (s->reason == NULL)
			nserved++;
		append_block(&blocks, s, reads_ms);
	}

	sb_init(&out);
	sb_appendf(&out, "--\n-- workload.sql drafted by \"cqlbridge workload\" from pg_stat_statements\n"
			   "-- database %s, schema %s%s%s; statistics since %s (%.0f s)\n",
			   PQdb(conn), opts->source_schema, opts->role ? ", role " : "",
			   opts->role ? opts->role : "", st.since, st.seconds);
	sb_appendf(&out, "-- %d of %d statements reading the schema, ranked by total execution time%s%s;\n"
			   "-- %d served by the mapping, %d written commented out with the reason.\n",
			   nkept, nreads, opts->top > 0 ? bridge_printf(", --top %d", opts->top) : "",
			   opts->min_calls > 0 ? bridge_printf(", --min-calls %ld", opts->min_calls) : "",
			   nserved, nkept - nserved);
	if (st.dealloc > 0)
		sb_appendf(&out, "-- WARNING: %ld statements were evicted since the reset (dealloc): the picture may be incomplete.\n",
				   st.dealloc);
	sb_append(&out, "-- Review it before \"cqlbridge plan\": the names, the parameters, and the queries\n"
			  "-- commented out (edit them into a shape the mapping serves, or leave them out).\n");
	write_profile(&out, &st);
	sb_append(&out, "--\n");
	sb_append(&out, blocks.data ? blocks.data : "");
	PQfinish(conn);

	if (opts->output && strcmp(opts->output, "-") != 0)
		bridge_write_file(opts->output, out.data);
	else
		fputs(out.data, stdout);
	if (!opts->quiet && opts->output && strcmp(opts->output, "-") != 0)
		printf("cqlbridge workload: %d queries (%d served, %d commented out), %d write statements, written to %s\n",
			   nkept, nserved, nkept - nserved, nwrites, opts->output);
	return BRIDGE_EXIT_SUCCESS;
}

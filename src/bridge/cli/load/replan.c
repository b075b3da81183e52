/*-------------------------------------------------------------------------
 *
 * replan.c
 *	  "cqlbridge stream DIR --replan [--dry-run] [--drop-removed]": a new
 *	  plan of a migration in progress (the source's schema or the workload
 *	  changed), applied online.
 *
 * DIR is a plan of the keyspace a stream runs (stopped for the moment:
 * the slot keeps its changes).  Its tables are compared with those the
 * stream records (capture/tables.c) and printed as a plan diff; with
 * --dry-run that is all.  Otherwise:
 *	 1. 001 and 002 of DIR, as "cqlbridge apply --no-load" runs them: new
 *		tables and types in Cassandra (IF NOT EXISTS: existing tables keep
 *		their rows), every foreign table and source view made again;
 *	 2. the columns a changed table gained: ALTER TABLE ... ADD in
 *		Cassandra (an existing column is left as it is, so a second run
 *		does the same);
 *	 3. removed tables: their lineage tables dropped; with --drop-removed
 *		also the Cassandra table, its foreign table and source view;
 *	 4. the stream's record: added and changed tables "joining"; the
 *		columns the plan reads of each relation forgotten (the stream
 *		takes them anew from the new source views);
 *	 5. the stream itself, with DIR: it resumes from its slot, the
 *		unchanged tables keep streaming, the joining ones are backfilled
 *		from a snapshot while it runs (capture/join.c).
 * A table whose primary key or a column's CQL type changed cannot be
 * changed online (Cassandra can change neither): refused before anything
 * is done, naming the table.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/load/replan.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "load/apply.h"

/*
 * cql
 *		Run one CQL statement through cql_execute on the server of foreign
 *		table ft; with tolerate, an error whose message holds it is not one.
 */
static void
cql(PGconn *conn, const char *ft, const char *statement, const char *tolerate)
{
	const char *p1[1] = {ft};
	char	   *server = cap_value(conn, "looking up the server of a foreign table",
								   "SELECT s.srvname::text FROM pg_catalog.pg_foreign_table f "
								   "JOIN pg_catalog.pg_foreign_server s ON s.oid = f.ftserver WHERE f.ftrelid = to_regclass($1)",
								   1, p1);
	char	   *sql = bridge_printf("SELECT %s.cql_execute($1, $2)", bridge_extension_schema(conn));
	const char *params[2] = {server, statement};
	PGresult   *res;

	if (server == NULL)
		bridge_fatal("foreign table %s has no server", ft);
	res = PQexecParams(conn, sql, 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK &&
		!(tolerate && strstr(PQresultErrorMessage(res), tolerate)))
		bridge_fatal("%s failed: %s", statement, PQresultErrorMessage(res));
	PQclear(res);
	free(sql);
	free(server);
}

/* "ks"."table" of a target "ks.table". */
static char *
cql_name(const char *target)
{
	const char *dot = strchr(target, '.');
	char	   *ks = bridge_printf("%.*s", (int) (dot - target), target);
	char	   *name = bridge_printf("%s.%s", bridge_quote_ident(ks), bridge_quote_ident(dot + 1));

	free(ks);
	return name;
}

/*
 * add_columns
 *		ALTER TABLE ... ADD of each column in list ("name type, ..."), one
 *		at a time (a column that exists already is left as it is).
 */
static void
add_columns(PGconn *conn, const CapTable *t, const char *list)
{
	char	   *copy = bridge_strdup(list);
	char	   *name = cql_name(t->target);

	for (char *c = copy, *next; c && *c; c = next)
	{
		char	   *stmt;
		int			depth = 0;
		char	   *e = c;

		/* split at ", " outside the <> of a type */
		for (; *e; e++)
		{
			if (*e == '<')
				depth++;
			else if (*e == '>')
				depth--;
			else if (*e == ',' && depth == 0)
				break;
		}
		next = *e ? e + 2 : NULL;
		*e = '\0';
		stmt = bridge_printf("ALTER TABLE %s ADD %s", name, c);
		cql(conn, t->foreign_table, stmt, "conflicts with an existing column");
		fprintf(stderr, "%s: %s\n", t->target, stmt);
		free(stmt);
	}
	free(name);
	free(copy);
}

/*
 * cmd_replan
 *		See the file header.  Exit 0 (after the stream stopped), 2 on a
 *		refusal or an error.
 */
int
cmd_replan(const BridgeOptions *opts)
{
	CapPlan    *p = cap_read_plan(opts->dir);
	PGconn	   *conn = bridge_connect(opts);
	char	   *sql;
	char	   *phase;
	const char *params[1];

	cap_tables_define(p);
	sql = bridge_printf("SELECT CASE WHEN to_regclass(%s) IS NOT NULL THEN "
						"(SELECT phase FROM %s.stream_state) END",
						bridge_quote_literal(bridge_printf("%s.stream_state", p->schema)), p->schema);
	phase = cap_value(conn, "reading the stream's status", sql, 0, NULL);
	free(sql);
	if (phase == NULL || strcmp(phase, "streaming") != 0)
		bridge_fatal_hint("Start it with \"cqlbridge stream DIR\" (without --replan).",
						  "no stream of keyspace %s is streaming (%s)", p->keyspace,
						  phase ? bridge_printf("phase %s", phase) : "no status row");
	cap_tables_compare(conn, p);
	if (!p->recorded)
		bridge_fatal_hint("Start the stream once with the plan directory it was made with (it records its tables), stop it, then --replan.",
						  "the stream of keyspace %s has no record of its tables (started by an older cqlbridge)",
						  p->keyspace);
	fputs(cap_tables_diff_text(p), stdout);
	fflush(stdout);
	for (int i = 0; i < p->ntables; i++)
		if (p->tables[i].change == CAP_REKEYED || p->tables[i].change == CAP_RETYPED)
			bridge_fatal_hint("Give the table another name in the workload (\"-- target: KEYSPACE.NEW_NAME\"): it is added online and the old one removed (--drop-removed drops it).",
							  "%s cannot change online: %s", p->tables[i].target, p->tables[i].detail);
	if (opts->dry_run)
	{
		printf(cap_tables_differ(p) ? "--dry-run: nothing changed\n" : "nothing to change\n");
		PQfinish(conn);
		return BRIDGE_EXIT_SUCCESS;
	}
	params[0] = p->slot;
	if (cap_value(conn, "looking up the replication slot",
				  "SELECT active_pid::text FROM pg_catalog.pg_replication_slots WHERE slot_name = $1",
				  1, params))
		bridge_fatal_hint("Stop the stream of the old plan (kill -TERM: it flushes and confirms), then run --replan again.",
						  "the replication slot %s is in use by a running stream", p->slot);

	/* 1-2: Cassandra tables and types, foreign tables, source views, columns */
	{
		BridgeOptions o = *opts;

		o.no_load = true;
		o.dry_run = false;
		o.quiet = true;
		if (cmd_apply(&o) != BRIDGE_EXIT_SUCCESS)
			bridge_fatal("applying 001 and 002 of %s failed", opts->dir);
	}
	for (int i = 0; i < p->ntables; i++)
		if (p->tables[i].change == CAP_CHANGED && p->tables[i].added_cql)
			add_columns(conn, &p->tables[i], p->tables[i].added_cql);

	/* 3: removed tables */
	for (int i = 0; i < p->nremoved; i++)
	{
		CapRemoved *r = &p->removed[i];

		sql = bridge_printf("DROP TABLE IF EXISTS %s", r->lineage);
		bridge_exec_script(conn, "dropping the lineage table of a removed table", sql);
		free(sql);
		if (opts->drop_removed)
		{
			char	   *stmt = bridge_printf("DROP TABLE IF EXISTS %s", cql_name(r->target));

			if (cap_value(conn, "looking up a foreign table", "SELECT to_regclass($1)::text", 1,
						  (const char *const[]) {r->foreign_table}))
				cql(conn, r->foreign_table, stmt, NULL);
			sql = bridge_printf("DROP FOREIGN TABLE IF EXISTS %s; DROP VIEW IF EXISTS %s",
								r->foreign_table, r->source_view);
			bridge_exec_script(conn, "dropping a removed table", sql);
			free(sql);
			free(stmt);
		}
		fprintf(stderr, "%s: no longer maintained%s\n", r->target,
				opts->drop_removed ? "; dropped" : " (kept in Cassandra)");
	}

	/*
	 * 4: the record: added and changed tables joining; the columns the
	 * plan reads of each relation taken anew at the start from the new
	 * source views (a column the old plan read may be gone)
	 */
	for (int i = 0; i < p->ntables; i++)
	{
		if (p->tables[i].change == CAP_CHANGED)
			p->tables[i].state = CAP_JOINING;

		/*
		 * An added table's Cassandra table may hold rows nobody maintained
		 * (a table of this keyspace removed from an earlier plan and kept):
		 * it is emptied before its backfill, like an interrupted one.
		 */
		if (p->tables[i].change == CAP_ADDED)
			p->tables[i].interrupted = true;
	}
	bridge_exec_script(conn, "recording the new plan's tables", "BEGIN");
	cap_tables_record(conn, p);
	sql = bridge_printf("DELETE FROM %s.stream_relations; COMMIT", p->schema);
	bridge_exec_script(conn, "forgetting the columns the old plan read", sql);
	free(sql);
	PQfinish(conn);
	if (!opts->quiet)
		fprintf(stderr, "replan: applied; streaming with %s (added and changed tables join as they are backfilled)\n",
				opts->dir);

	/* 5 */
	return cmd_stream(opts);
}

/*-------------------------------------------------------------------------
 *
 * setup.c
 *	  What "cqlbridge stream" needs before it streams: the source's checks
 *	  (wal_level, the REPLICATION attribute, replica identities), the
 *	  plan's publication, status and lineage tables, the slot and the
 *	  initial load from the slot's exported snapshot; and --drop, which
 *	  removes the slot and everything else the stream made.
 *
 * Hand-off: the slot is created with an exported snapshot, the load reads
 * every table in that snapshot (one REPEATABLE READ transaction) and
 * writes Cassandra, then streaming starts at the slot's consistent point:
 * every transaction committed after the snapshot comes from the slot,
 * every one before is in the load, none in both.  The load finishes before
 * the first streamed write is sent, so every streamed write carries a
 * later client timestamp than every loaded one and Cassandra's last write
 * wins never lets a loaded value overwrite a streamed one; no commit time
 * is compared with a snapshot time.  The application keeps writing during
 * the load; its changes wait in the slot.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/setup.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"

const char *const cap_reload_hint =
"Remove the stream with \"cqlbridge stream DIR --drop\", make the Cassandra tables empty (e.g. \"cqlbridge apply DIR --no-load\" after dropping the keyspace), then run \"cqlbridge stream DIR\": it loads again from a new slot.";

/* One value of a one-row query (NULL when none or NULL); fatal on an error. */
char *
cap_value(PGconn *conn, const char *what, const char *sql, int n, const char *const *params)
{
	PGresult   *res = bridge_exec(conn, what, sql, n, params);
	char	   *v = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0)
		? bridge_strdup(PQgetvalue(res, 0, 0)) : NULL;

	PQclear(res);
	return v;
}

/*
 * cap_check_server, cap_check_source
 *		Refuse, with what to do, a source the stream cannot read: wal_level
 *		not logical, a role without REPLICATION, a missing foreign table, a
 *		source relation whose replica identity does not carry the key the
 *		plan traces its changes by (or, for a sublink relation whose SQL
 *		reads other columns, is not FULL).  A relation in a publication
 *		without a usable replica identity would also make the application's
 *		UPDATE and DELETE fail, so this runs before the publication exists.
 */
void
cap_check_server(PGconn *conn, CapPlan *p)
{
	char	   *v = cap_value(conn, "reading wal_level", "SHOW wal_level", 0, NULL);

	if (v == NULL || strcmp(v, "logical") != 0)
		bridge_fatal_hint("Set wal_level = logical (ALTER SYSTEM SET wal_level = logical, with max_replication_slots and max_wal_senders of at least 1) and restart PostgreSQL; or use the trigger-based \"cqlbridge sync\".",
						  "wal_level is \"%s\": cqlbridge stream needs logical decoding", v ? v : "?");
	v = cap_value(conn, "reading the role's attributes",
			  "SELECT (rolsuper OR rolreplication)::text FROM pg_catalog.pg_roles WHERE rolname = current_user",
			  0, NULL);
	if (v == NULL || strcmp(v, "true") != 0)
	{
		char	   *who = cap_value(conn, "reading the role", "SELECT current_user", 0, NULL);
		char	   *hint = bridge_printf("As a superuser: ALTER ROLE %s REPLICATION; or run the stream as a role that has it.",
										 bridge_quote_ident(who ? who : "?"));

		bridge_fatal_hint(hint, "role %s lacks the REPLICATION attribute that logical decoding needs",
						  who ? who : "?");
	}
	for (int i = 0; i < p->ntables; i++)
	{
		const char *params[1] = {p->tables[i].foreign_table};

		v = cap_value(conn, "looking up a foreign table", "SELECT to_regclass($1)::text", 1, params);
		if (v == NULL)
			bridge_fatal_hint("Run \"cqlbridge apply DIR --no-load\" first (tables and foreign tables, no load).",
							  "foreign table %s does not exist", params[0]);
	}
}

/* The replica identity of every source relation (see cap_check_server). */
void
cap_check_source(PGconn *conn, CapPlan *p)
{
	for (int s = 0; s < p->nsources; s++)
	{
		char	   *msg;
		char	   *hint;
		char		err[1024];

		switch (cap_identity_problem(conn, p, s, NULL, &msg, &hint, err, sizeof(err)))
		{
			case CAP_CHECK_OK:
				break;
			case CAP_CHECK_RETRY:
				bridge_fatal("reading a source relation's replica identity failed: %s", err);
				break;
			case CAP_CHECK_FATAL:
				bridge_fatal_hint(hint, "%s", msg);
				break;
		}
	}
}

/* Status table, one lineage table per target, the publication. */
void
cap_prepare_objects(PGconn *conn, CapPlan *p)
{
	StrBuf		sb;
	char	   *sql;

	sql = bridge_printf("CREATE TABLE IF NOT EXISTS %s.stream_state ("
						"id int PRIMARY KEY CHECK (id = 1), slot text NOT NULL, publication text NOT NULL, "
						"phase text NOT NULL, consistent_lsn pg_lsn, confirmed_lsn pg_lsn, pid int, "
						"started_at timestamptz, updated_at timestamptz, changes bigint DEFAULT 0, "
						"keys_written bigint DEFAULT 0, changes_per_s float8, lag_seconds float8, "
						"lag_bytes bigint, retained_bytes bigint, last_error text, last_error_at timestamptz); "
						"ALTER TABLE %s.stream_state ADD COLUMN IF NOT EXISTS write_consistency text;",
						p->schema, p->schema);
	bridge_exec_script(conn, "creating the stream's status table", sql);
	free(sql);
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		int			n;

		sb_init(&sb);
		sb_appendf(&sb, "CREATE TABLE IF NOT EXISTS %s AS SELECT ", t->lineage);
		for (int k = 0; k < t->nkey; k++)
			sb_appendf(&sb, "%ss.%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
		for (int k = 0; k < t->nlin; k++)
			sb_appendf(&sb, ", s.%s", bridge_quote_ident(t->lin[k]));
		sb_appendf(&sb, " FROM %s s WITH NO DATA;\n", t->source_view);
		n = atoi(strrchr(t->lineage, '_') + 1);	/* stream_keys_<n> */
		sb_appendf(&sb, "CREATE INDEX IF NOT EXISTS stream_keys_%d_key ON %s (", n, t->lineage);
		for (int k = 0; k < t->nkey; k++)
			sb_appendf(&sb, "%s%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
		sb_append(&sb, ");\n");
		for (int k = 0; k < t->nlin; k++)
			sb_appendf(&sb, "CREATE INDEX IF NOT EXISTS stream_keys_%d_l%d ON %s (%s);\n",
					   n, k + 1, t->lineage, bridge_quote_ident(t->lin[k]));
		bridge_exec_script(conn, "creating a lineage table of the stream", sb.data);
		sb_free(&sb);
	}

	/*
	 * The publication lists the plan's source relations and the status
	 * table: the stream updates its row every 2 s, and confirming those
	 * commits moves the slot on a database whose source relations are idle
	 * (else it would keep all WAL written since their last change).
	 */
	{
		const char *params[1] = {p->publication};
		char	   *exists = cap_value(conn, "looking up the publication",
								   "SELECT pubname::text FROM pg_catalog.pg_publication WHERE pubname = $1",
								   1, params);

		sb_init(&sb);
		if (exists)
			sb_appendf(&sb, "ALTER PUBLICATION %s SET TABLE ", bridge_quote_ident(p->publication));
		else
			sb_appendf(&sb, "CREATE PUBLICATION %s FOR TABLE ", bridge_quote_ident(p->publication));
		for (int s = 0; s < p->nsources; s++)
			sb_appendf(&sb, "%s%s", s ? ", " : "", p->sources[s].current);
		/* the status row's updates are the stream's heartbeat */
		sb_appendf(&sb, ", %s.stream_state", p->schema);
		if (!exists)
			sb_append(&sb, " WITH (publish_via_partition_root = true)");
		bridge_exec_script(conn, "creating the stream's publication", sb.data);
		sb_free(&sb);
	}
}

/*
 * cap_slot_unusable
 *		Whether the stream's slot can no longer give the changes since its
 *		confirmed position: dropped, its WAL removed (wal_status 'lost',
 *		max_slot_wal_keep_size), or invalidated for another reason (18:
 *		invalidation_reason, e.g. idle_replication_slot_timeout).  Then
 *		*msg says which (the caller stops: retrying cannot help).  False
 *		with err when the lookup failed (the caller retries).
 */
bool
cap_slot_unusable(PGconn *conn, CapPlan *p, char **msg, char *err, size_t errlen)
{
	const char *params[1] = {p->slot};
	PGresult   *res = PQexecParams(conn,
								   "SELECT coalesce(s.wal_status, ''), coalesce(pg_catalog.to_jsonb(s) ->> 'invalidation_reason', '') "
								   "FROM pg_catalog.pg_replication_slots s WHERE s.slot_name = $1",
								   1, NULL, params, NULL, NULL, 0);

	*msg = NULL;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		if (err)
			snprintf(err, errlen, "looking up the replication slot failed: %s", PQerrorMessage(conn));
		PQclear(res);
		return false;
	}
	if (PQntuples(res) == 0)
		*msg = bridge_printf("the replication slot %s of this stream does not exist any more: changes since it was dropped are lost",
							 p->slot);
	else if (strcmp(PQgetvalue(res, 0, 0), "lost") == 0)
		*msg = bridge_printf("the replication slot %s lost WAL it needed (wal_status 'lost', max_slot_wal_keep_size exceeded): changes since its confirmed position are lost",
							 p->slot);
	else if (PQgetvalue(res, 0, 1)[0] != '\0')
		*msg = bridge_printf("the replication slot %s was invalidated (%s): changes since its confirmed position are lost",
							 p->slot, PQgetvalue(res, 0, 1));
	PQclear(res);
	return true;
}

/*
 * cap_phase
 *		"load" when the stream has to (re)load: no status row that says
 *		streaming (a load that did not finish leaves none); "stream" when it
 *		resumes from its slot.  A streaming stream whose slot is gone or
 *		lost its WAL cannot resume without a gap: fatal, with what to do.
 */
char *
cap_phase(PGconn *conn, CapPlan *p, CapLsn *confirmed)
{
	char	   *sql = bridge_printf("SELECT phase FROM %s.stream_state", p->schema);
	char	   *phase = cap_value(conn, "reading the stream's status", sql, 0, NULL);
	const char *params[1] = {p->slot};
	PGresult   *res;

	free(sql);
	if (phase == NULL || strcmp(phase, "streaming") != 0)
		return "load";
	{
		char	   *gone = NULL;

		if (!cap_slot_unusable(conn, p, &gone, NULL, 0))
			bridge_fatal("looking up the replication slot failed: %s", PQerrorMessage(conn));
		if (gone != NULL)
			bridge_fatal_hint(cap_reload_hint, "%s", gone);
	}
	res = bridge_exec(conn, "looking up the replication slot",
					  "SELECT confirmed_flush_lsn::text FROM pg_catalog.pg_replication_slots WHERE slot_name = $1",
					  1, params);
	if (PQntuples(res) == 0 || !cap_parse_lsn(PQgetvalue(res, 0, 0), confirmed))
		*confirmed = 0;
	PQclear(res);
	return "stream";
}

/*
 * truncate_params
 *		The server of t's foreign table and "TRUNCATE ks.table" for it: the
 *		two arguments of cql_execute, which empties a target without the
 *		foreign table's truncatable option.  Allocated.
 */
static void
truncate_params(PGconn *conn, const CapTable *t, char **server, char **cql)
{
	const char *params[1] = {t->foreign_table};
	const char *dot = strchr(t->target, '.');
	char	   *ks;

	*server = cap_value(conn, "looking up the server of a foreign table",
					"SELECT s.srvname::text FROM pg_catalog.pg_foreign_table f "
					"JOIN pg_catalog.pg_foreign_server s ON s.oid = f.ftserver WHERE f.ftrelid = to_regclass($1)",
					1, params);
	if (*server == NULL || dot == NULL)
		bridge_fatal_hint("Run \"cqlbridge apply DIR --no-load\" first (tables and foreign tables, no load).",
						  "foreign table %s of target %s has no server", t->foreign_table, t->target);
	ks = bridge_printf("%.*s", (int) (dot - t->target), t->target);
	*cql = bridge_printf("TRUNCATE %s.%s", bridge_quote_ident(ks), bridge_quote_ident(dot + 1));
	free(ks);
}

/*
 * cap_target_missing
 *		After a failed flush: the first target table that no longer exists
 *		in Cassandra (its keyspace or itself dropped under the stream),
 *		looked up in system_schema through cql_query.  A missing table does
 *		not come back by retrying: *msg says which, and the stream stops.
 *		NULL *msg when all exist, or when the lookup itself failed
 *		(Cassandra away: the flush is retried).
 */
void
cap_target_missing(PGconn *conn, CapPlan *p, char **msg)
{
	char		err[512];
	char	   *sql = bridge_printf("SELECT count(*)::text FROM %s.cql_query($1, "
									"'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?', "
									"$2::text, $3::text)", bridge_extension_schema(conn));

	*msg = NULL;
	for (int i = 0; i < p->ntables && *msg == NULL; i++)
	{
		CapTable   *t = &p->tables[i];
		const char *dot = strchr(t->target, '.');
		const char *fparams[1] = {t->foreign_table};
		PGresult   *srv;
		PGresult   *res;
		char	   *ks;
		const char *params[3];

		if (dot == NULL)
			continue;
		srv = cap_exec(conn, "SELECT s.srvname::text FROM pg_catalog.pg_foreign_table f "
					   "JOIN pg_catalog.pg_foreign_server s ON s.oid = f.ftserver WHERE f.ftrelid = to_regclass($1)",
					   1, fparams, err, sizeof(err));
		if (srv == NULL || PQntuples(srv) != 1)
		{
			PQclear(srv);
			continue;
		}
		ks = bridge_printf("%.*s", (int) (dot - t->target), t->target);
		params[0] = PQgetvalue(srv, 0, 0);
		params[1] = ks;
		params[2] = dot + 1;
		res = cap_exec(conn, sql, 3, params, err, sizeof(err));
		if (res != NULL && strcmp(PQgetvalue(res, 0, 0), "0") == 0)
			*msg = bridge_printf("Cassandra table %s, which the stream writes, does not exist any more (it or its keyspace was dropped)",
								 t->target);
		PQclear(res);
		PQclear(srv);
		free(ks);
	}
	free(sql);
}

/*
 * cap_truncate_target
 *		Empty t in Cassandra (TRUNCATE by cql_execute); false with err.
 */
bool
cap_truncate_target(PGconn *conn, const CapTable *t, char *err, size_t errlen)
{
	char	   *server;
	char	   *cql;
	char	   *sql = bridge_printf("SELECT %s.cql_execute($1, $2)", bridge_extension_schema(conn));
	const char *params[2];
	PGresult   *res;

	truncate_params(conn, t, &server, &cql);
	params[0] = server;
	params[1] = cql;
	res = cap_exec(conn, sql, 2, params, err, errlen);
	PQclear(res);
	free(sql);
	free(server);
	free(cql);
	return res != NULL;
}

/*
 * cap_check_targets
 *		Before anything is created, when the stream will load (no status
 *		row yet): every target table must be empty.  The load upserts, so a
 *		row already there that the source does not have would stay for good
 *		(the lineage tables, filled by the load, would not know it).  The
 *		rows of a load of this stream that did not finish are emptied
 *		instead (empty_targets).
 */
void
cap_check_targets(PGconn *conn, CapPlan *p)
{
	const char *params[1] = {p->schema_plain};
	char	   *exists = cap_value(conn, "looking up the status table",
							   "SELECT to_regclass(quote_ident($1) || '.stream_state')::text", 1, params);
	char	   *sql;

	if (exists)
	{
		char	   *phase;

		sql = bridge_printf("SELECT phase FROM %s.stream_state", p->schema);
		phase = cap_value(conn, "reading the stream's status", sql, 0, NULL);
		free(sql);
		free(exists);
		if (phase)
		{
			free(phase);
			return;				/* streaming, or a load of its own to redo */
		}
	}
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		char	   *any;

		sql = bridge_printf("SELECT 'x' FROM %s LIMIT 1", t->foreign_table);
		any = cap_value(conn, "checking that a target table is empty", sql, 0, NULL);
		free(sql);
		if (any)
		{
			char	   *server;
			char	   *cql;

			truncate_params(conn, t, &server, &cql);
			bridge_fatal_hint(bridge_printf("Start from empty tables: SELECT cql_execute(%s, %s); (or drop the keyspace and run \"cqlbridge apply DIR --no-load\"), then start the stream again.",
											bridge_quote_literal(server), bridge_quote_literal(cql)),
							  "target table %s is not empty: the initial load writes the source's rows over it and would keep rows the source does not have",
							  t->target);
		}
	}
}

/*
 * empty_targets
 *		Before a load: a load this stream began and did not finish (status
 *		row "loading": killed, Cassandra down) wrote rows the source may
 *		have deleted since; the targets are emptied (TRUNCATE by
 *		cql_execute) and loaded again.  Then the status row says
 *		"loading", committed before the slot exists.
 */
static void
empty_targets(PGconn *conn, CapPlan *p, const BridgeOptions *opts)
{
	char	   *sql = bridge_printf("SELECT phase FROM %s.stream_state", p->schema);
	char	   *phase = cap_value(conn, "reading the stream's status", sql, 0, NULL);
	const char *params[2] = {p->slot, p->publication};

	free(sql);
	if (phase && strcmp(phase, "loading") == 0)
	{
		sql = bridge_printf("SELECT %s.cql_execute($1, $2)", bridge_extension_schema(conn));
		for (int i = 0; i < p->ntables; i++)
		{
			char	   *server;
			char	   *cql;
			const char *params2[2];

			truncate_params(conn, &p->tables[i], &server, &cql);
			params2[0] = server;
			params2[1] = cql;
			PQclear(bridge_exec(conn, "emptying a target table of an unfinished load", sql, 2, params2));
			free(server);
			free(cql);
		}
		free(sql);
		if (!opts->quiet)
			cap_log("the previous initial load did not finish: %d target tables emptied, loading again",
					p->ntables);
	}
	sql = bridge_printf("INSERT INTO %s.stream_state (id, slot, publication, phase, started_at, updated_at) "
						"VALUES (1, $1, $2, 'loading', now(), now()) "
						"ON CONFLICT (id) DO UPDATE SET slot = $1, publication = $2, phase = 'loading', "
						"started_at = now(), updated_at = now()",
						p->schema);
	PQclear(bridge_exec(conn, "recording the start of the load", sql, 2, params));
	free(sql);
	free(phase);
}

/*
 * drop_unfinished_slot
 *		Drop the slot of an interrupted initial load.  The process that
 *		loaded may have just been killed: its walsender still holds the
 *		slot until it notices the connection is gone (a moment, longer on
 *		a busy server), so an active slot is waited for, up to 30 s,
 *		rather than failing the start.  A slot still active then belongs
 *		to a live process (another stream of this plan?): fatal, naming it.
 */
static void
drop_unfinished_slot(PGconn *conn, const char *slot)
{
	const char *params[1] = {slot};
	char		err[1024];
	char		holder[32] = "?";

	for (int attempt = 0; attempt < 300; attempt++)
	{
		PGresult   *res = bridge_exec(conn, "reading the slot of an unfinished load",
									  "SELECT active_pid FROM pg_catalog.pg_replication_slots WHERE slot_name = $1",
									  1, params);
		bool		gone = PQntuples(res) == 0;
		bool		active = !gone && !PQgetisnull(res, 0, 0);

		if (active)
			snprintf(holder, sizeof(holder), "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		if (gone)
			return;
		if (!active)
		{
			/* inactive now, but it may be taken again before the drop: then retry */
			res = cap_exec(conn, "SELECT pg_catalog.pg_drop_replication_slot($1)", 1, params,
						   err, sizeof(err));
			if (res != NULL)
			{
				PQclear(res);
				return;
			}
		}
		usleep(100 * 1000);
	}
	bridge_fatal_hint("Stop the other process (another \"cqlbridge stream\" of this plan?), or wait, then start again.",
					  "the slot \"%s\" of an unfinished load is still in use after 30 s (by walsender PID %s)",
					  slot, holder);
}

/*
 * cap_initial_load
 *		A new slot with an exported snapshot, then in that snapshot: the
 *		relations' OIDs and read columns, the partitions, every table
 *		loaded into Cassandra and its lineage table filled, and the status row set to streaming, all
 *		committed together.  An interrupted load leaves the row "loading",
 *		so the next start empties the targets, drops the slot and loads
 *		again.
 */
void
cap_initial_load(PGconn *conn, PGconn *repl, CapPlan *p, const BridgeOptions *opts)
{
	const char *params[3];
	char	   *snapshot;
	CapLsn		consistent;
	char		err[1024];
	char		state[6] = "";
	PGresult   *res;
	double		t0 = bridge_now();
	long long	rows = 0;
	char	   *sql;

	empty_targets(conn, p, opts);
	drop_unfinished_slot(conn, p->slot);
	if (!cap_create_slot(repl, p->slot, &snapshot, &consistent, err, sizeof(err), state))
	{
		if (strcmp(state, "53400") == 0)
			bridge_fatal_hint("Raise max_replication_slots (and restart PostgreSQL), or drop a slot nobody reads: SELECT slot_name, active FROM pg_replication_slots;",
							  "%s (SQLSTATE %s): no free replication slot", err, state);
		bridge_fatal_hint("Check wal_level = logical, max_replication_slots and the role's REPLICATION attribute.",
						  "%s%s%s%s", err, state[0] ? " (SQLSTATE " : "", state, state[0] ? ")" : "");
	}
	if (opts->log_positions)
	{
		char	   *lsn = cap_lsn_text(consistent);

		cap_log("position: slot %s created, consistent point %s (the load's snapshot)", p->slot, lsn);
		free(lsn);
	}
	bridge_exec_script(conn, "starting the load transaction", "BEGIN ISOLATION LEVEL REPEATABLE READ");
	sql = bridge_printf("SET TRANSACTION SNAPSHOT %s", bridge_quote_literal(snapshot));
	bridge_exec_script(conn, "importing the slot's snapshot", sql);
	free(sql);
	/* a rewrite committed since the slot's snapshot: read as empty (relations.c) */
	sql = cap_lock_sql(p, NULL);
	bridge_exec_script(conn, "locking the source views", sql);
	free(sql);
	{
		char	   *rewritten = cap_rewritten(conn);

		if (rewritten != NULL)
			bridge_fatal_hint("Run the stream again: it drops the unfinished slot and loads from a new snapshot.",
							  "source relation %s was rewritten (ALTER TABLE or TRUNCATE) after the load's snapshot was taken, before the load locked it: the snapshot sees it empty, so nothing was loaded",
							  rewritten);
	}

	cap_relations_record(conn, p);
	cap_partitions_record(conn, p);
	cap_tables_record(conn, p);

	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		StrBuf		sb;
		long long	n;
		double		t1 = bridge_now();

		sql = bridge_printf("INSERT INTO %s (%s) SELECT * FROM (%s) q", t->foreign_table,
							t->columns, t->rows_sql);
		res = bridge_exec(conn, bridge_printf("loading %s from the slot's snapshot", t->target),
						  sql, 0, NULL);
		n = atoll(PQcmdTuples(res));
		PQclear(res);
		free(sql);
		sb_init(&sb);
		sb_appendf(&sb, "TRUNCATE %s; INSERT INTO %s SELECT ", t->lineage, t->lineage);
		for (int k = 0; k < t->nkey; k++)
			sb_appendf(&sb, "%ss.%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
		for (int k = 0; k < t->nlin; k++)
			sb_appendf(&sb, ", s.%s", bridge_quote_ident(t->lin[k]));
		sb_appendf(&sb, " FROM %s s", t->source_view);
		bridge_exec_script(conn, "filling a lineage table", sb.data);
		sb_free(&sb);
		rows += n;
		if (!opts->quiet)
			fprintf(stderr, "%s: %lld rows loaded from the slot's snapshot in %.1f s\n",
					t->target, n, bridge_now() - t1);
	}
	{
		char	   *lsn = cap_lsn_text(consistent);

		params[0] = p->slot;
		params[1] = p->publication;
		params[2] = lsn;
		sql = bridge_printf("INSERT INTO %s.stream_state (id, slot, publication, phase, consistent_lsn, confirmed_lsn, started_at, updated_at) "
							"VALUES (1, $1, $2, 'streaming', $3::pg_lsn, $3::pg_lsn, now(), now()) "
							"ON CONFLICT (id) DO UPDATE SET slot = $1, publication = $2, phase = 'streaming', "
							"consistent_lsn = $3::pg_lsn, confirmed_lsn = $3::pg_lsn, changes = 0, keys_written = 0, "
							"started_at = now(), updated_at = now(), last_error = NULL, last_error_at = NULL",
							p->schema);
		PQclear(bridge_exec(conn, "recording the stream's start", sql, 3, params));
		free(sql);
		bridge_exec_script(conn, "committing the load", "COMMIT");
		if (!opts->quiet)
			fprintf(stderr, "stream: initial load of %d tables, %lld rows, in %.1f s; streaming from %s\n",
					p->ntables, rows, bridge_now() - t0, lsn);
		free(lsn);
	}
}

/*
 * cap_drop
 *		"stream DIR --drop": the slot (so the source keeps no more WAL for
 *		it), the publication, the lineage and status tables.  Refused while
 *		a stream process holds the slot.  A stream that was just stopped
 *		leaves its walsender exiting, which holds the slot a moment longer:
 *		the slot is given up to DROP_WAIT_S to be released.
 */
#define DROP_WAIT_S	10
int
cap_drop(const BridgeOptions *opts, CapPlan *p)
{
	PGconn	   *conn = bridge_connect(opts);
	const char *params[1] = {p->slot};
	char	   *pid = NULL;
	StrBuf		sb;

	/* the lineage tables as the stream named them (tables.c) */
	if (cap_tables_exist(conn, p))
	{
		cap_tables_define(p);
		cap_tables_compare(conn, p);
	}
	for (int i = 0; i < DROP_WAIT_S * 10; i++)
	{
		free(pid);
		pid = cap_value(conn, "looking up the replication slot",
					"SELECT active_pid::text FROM pg_catalog.pg_replication_slots WHERE slot_name = $1",
					1, params);
		if (pid == NULL)
			break;
		usleep(100000);
	}

	if (pid)
		bridge_fatal_hint(bridge_printf("Stop the stream first (kill -TERM of its process; the slot's walsender is pid %s), then run --drop again.", pid),
						  "the replication slot %s is in use", p->slot);
	PQclear(bridge_exec(conn, "dropping the replication slot",
						"SELECT pg_catalog.pg_drop_replication_slot(slot_name) FROM pg_catalog.pg_replication_slots WHERE slot_name = $1",
						1, params));
	sb_init(&sb);
	sb_appendf(&sb, "BEGIN; DROP PUBLICATION IF EXISTS %s;", bridge_quote_ident(p->publication));
	for (int i = 0; i < p->ntables; i++)
		sb_appendf(&sb, " DROP TABLE IF EXISTS %s;", p->tables[i].lineage);
	for (int i = 0; i < p->nremoved; i++)
		sb_appendf(&sb, " DROP TABLE IF EXISTS %s;", p->removed[i].lineage);
	for (int i = 0; i < p->nsources; i++)
		sb_appendf(&sb, " DROP VIEW IF EXISTS %s.stream_src_%d;", p->schema, i + 1);
	sb_appendf(&sb, " DROP TABLE IF EXISTS %s.stream_state; DROP TABLE IF EXISTS %s.stream_relations;"
			   " DROP TABLE IF EXISTS %s.stream_partitions; DROP TABLE IF EXISTS %s.stream_tables; COMMIT;",
			   p->schema, p->schema, p->schema, p->schema);
	bridge_exec_script(conn, "removing the stream's publication and tables", sb.data);
	sb_free(&sb);
	if (!opts->quiet)
		fprintf(stderr, "stream: slot %s and publication %s removed; the source keeps no WAL for them\n",
				p->slot, p->publication);
	PQfinish(conn);
	return 0;
}

/*-------------------------------------------------------------------------
 *
 * stream.c
 *	  Load one target table in a single pass of its source rows, resumable
 *	  batch by batch.
 *
 * The rows (the block's SELECT) are read once, through one cursor ordered
 * by the primary key (partition key first, so the rows of a partition
 * arrive together and the FDW sends them as one batch), in one transaction
 * of the load connection:
 *
 *	BEGIN;
 *	CREATE TEMP VIEW cqlbridge_apply_rows AS <the block's SELECT>;
 *	DECLARE cqlbridge_apply NO SCROLL CURSOR FOR
 *		SELECT * FROM cqlbridge_apply_rows q
 *		[WHERE (q.k1, ..., q.c1, ...) >= ($1, ...)]	-- resuming
 *		ORDER BY q.k1, ..., q.c1, ...;
 *	INSERT INTO <foreign table> (...) SELECT (r).* FROM
 *		(SELECT cql_bridge_cursor_rows('cqlbridge_apply', <batch>, '{k1,...}',
 *		 NULL::cqlbridge_apply_rows) r OFFSET 0) s;	-- repeated
 *
 * cql_bridge_cursor_rows() runs in the INSERT's target list, so rows
 * stream from the view into the FDW's pipelined writes as in a plain
 * INSERT ... SELECT.  When an INSERT returns, every write of its batch has
 * been acknowledged by Cassandra (the foreign table writes immediately),
 * so the primary key of the batch's last row is committed, on a second
 * connection, into cqlbridge.apply_progress as the point to resume from.
 * A resumed load declares the cursor from that key on (>=: rows with the
 * same key, possible where a published key merges rows, all come again;
 * rows sent twice are upserts of the same values).  The load transaction itself writes nothing
 * locally; it only holds the cursor.
 *
 * A table whose writes wait for COMMIT (write_mode 'on_commit') cannot be
 * streamed this way and is loaded in chunks instead (apply.c).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/load/stream.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/apply.h"

#define CURSOR_NAME "cqlbridge_apply"
#define ROWS_VIEW	"pg_temp.cqlbridge_apply_rows"

/*
 * apply_can_stream
 *		A table is streamed unless its 003 statement is an INSERT of an
 *		older plan (chunk parameters, no SELECT to stream), the extension
 *		in the database is older than the function streaming reads through,
 *		or its writes are deferred to COMMIT (then a batch's rows are not
 *		in Cassandra when its progress is recorded).
 */
bool
apply_can_stream(PGconn *conn, const ApplyTable *t, const char **why)
{
	const char *params[1];
	PGresult   *res;
	bool		on_commit;

	/* the extension in the database is the same for every table */
	static int	have_function = -1;

	if (t->legacy_insert)
	{
		*why = "its 003 statement is an INSERT of an older plan; plan again to stream";
		return false;
	}
	if (have_function < 0)
	{
		const char *fn[1];

		fn[0] = bridge_printf("%s.cql_bridge_cursor_rows(text, bigint, text[], anyelement)",
							  bridge_extension_schema(conn));
		res = bridge_exec(conn, "looking up cql_bridge_cursor_rows()",
						  "SELECT pg_catalog.to_regprocedure($1) IS NOT NULL", 1, fn);
		have_function = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
	}
	if (!have_function)
	{
		*why = "the cql_fdw extension of this database predates streaming (ALTER EXTENSION cql_fdw UPDATE)";
		return false;
	}
	params[0] = t->foreign_table;
	res = bridge_exec(conn, "reading the foreign table's write_mode",
					  "SELECT coalesce("
					  " (SELECT option_value FROM pg_options_to_table(ft.ftoptions)"
					  "   WHERE option_name = 'write_mode'),"
					  " (SELECT option_value FROM pg_options_to_table(s.srvoptions)"
					  "   WHERE option_name = 'write_mode'), 'immediate') ILIKE 'on_commit'"
					  " FROM pg_foreign_table ft JOIN pg_foreign_server s ON s.oid = ft.ftserver"
					  " WHERE ft.ftrelid = $1::regclass",
					  1, params);
	on_commit = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (on_commit)
	{
		*why = "its writes wait for COMMIT (write_mode 'on_commit')";
		return false;
	}
	return true;
}

/* a text[] literal of plain names: {"a","b"} */
static char *
names_array(char **names, int n)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "{");
	for (int i = 0; i < n; i++)
	{
		sb_append(&sb, i ? ",\"" : "\"");
		for (const char *p = names[i]; *p; p++)
		{
			char		c[2] = {*p, '\0'};

			if (*p == '"' || *p == '\\')
				sb_append(&sb, "\\");
			sb_append(&sb, c);
		}
		sb_append(&sb, "\"");
	}
	sb_append(&sb, "}");
	return sb.data;
}

/*
 * Recorded stream progress of t: returns false if there is none; else
 * *finished, *rows, *seconds and the resume key (elements as text).
 */
static bool
read_progress(PGconn *progress, const ApplyTable *t, bool *finished, long long *rows,
			  double *seconds, char ***key, int *nkey)
{
	const char *params[1] = {t->target};
	PGresult   *res;

	res = bridge_exec(progress, "reading recorded progress",
					  "SELECT finished, rows, seconds, k"
					  " FROM cqlbridge.apply_progress"
					  " LEFT JOIN LATERAL unnest(resume_key) WITH ORDINALITY u(k, i) ON true"
					  " WHERE target = $1 AND chunks = 0 ORDER BY u.i",
					  1, params);
	*nkey = 0;
	*key = NULL;
	if (PQntuples(res) == 0)
	{
		PQclear(res);
		return false;
	}
	*finished = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	*rows = atoll(PQgetvalue(res, 0, 1));
	*seconds = atof(PQgetvalue(res, 0, 2));
	if (!PQgetisnull(res, 0, 3))
	{
		*key = bridge_malloc(sizeof(char *) * PQntuples(res));
		for (int i = 0; i < PQntuples(res); i++)
			(*key)[(*nkey)++] = bridge_strdup(PQgetvalue(res, i, 3));
	}
	PQclear(res);
	return true;
}

/* Commit the state after a batch (or the end) on the progress connection. */
static void
record_progress(PGconn *progress, const ApplyTable *t, long long rows, double seconds,
				const char *key, bool finished)
{
	char		rows_txt[32];
	char		secs_txt[32];
	const char *params[5];

	snprintf(rows_txt, sizeof(rows_txt), "%lld", rows);
	snprintf(secs_txt, sizeof(secs_txt), "%.6f", seconds);
	params[0] = t->target;
	params[1] = rows_txt;
	params[2] = secs_txt;
	params[3] = key;
	params[4] = finished ? "true" : "false";
	PQclear(bridge_exec(progress, "recording progress",
						"INSERT INTO cqlbridge.apply_progress"
						" (target, chunk, chunks, rows, seconds, resume_key, finished, done_at)"
						" VALUES ($1, 0, 0, $2::bigint, $3::float8, $4::text[], $5::boolean, clock_timestamp())"
						" ON CONFLICT (target, chunk) DO UPDATE SET chunks = 0, rows = EXCLUDED.rows,"
						" seconds = EXCLUDED.seconds, resume_key = EXCLUDED.resume_key,"
						" finished = EXCLUDED.finished, done_at = EXCLUDED.done_at",
						5, params));
}

/*
 * exec_checked
 *		Run one step of a streamed load (our own statements, or the user's
 *		block text without parameters); a failure ends the load through
 *		apply_load_failed, with the table's file and line and how to resume.
 */
static void
exec_checked(PGconn *conn, const ApplyTable *t, const char *step, const char *sql,
			 int nparams, const char *const *params, bool tty, const BridgeOptions *opts)
{
	PGresult   *res;

	/* one statement of the user's text at a time; several of our own */
	if (params == NULL)
		res = PQexec(conn, sql);
	else
		res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		apply_load_failed(t, conn, res, step, tty, opts);
	PQclear(res);
	/* a signal between statements cancelled nothing: stop before the next */
	bridge_check_interrupt(apply_resume_hint);
}

/*
 * apply_stream_table
 *		Load t in one pass of its rows, through one ordered cursor,
 *		committing the key of each batch's last row to
 *		cqlbridge.apply_progress on the progress connection once the batch's
 *		writes are acknowledged; a recorded key resumes the load from there.
 *		Returns the rows sent by this run and adds the table's total to
 *		*rows_total.
 */
long long
apply_stream_table(PGconn *conn, PGconn *progress, const BridgeOptions *opts,
				   const ApplyTable *t, bool tty, long long *rows_total)
{
	const char *params[2];
	char	  **key = NULL;
	int			nkey = 0;
	bool		finished = false;
	long long	rows_before = 0;
	double		secs_before = 0;
	long long	rows_now = 0;
	long long	batch = opts->batch_rows > 0 ? opts->batch_rows : 50000;
	char		batch_txt[32];
	char	   *keys = apply_column_list(t->key, t->nkey, "", "", ", ");
	char	   *names = names_array(t->key, t->nkey);
	int			batches = 0;
	double		start = bridge_now();
	double		last_shown = 0;
	StrBuf		sql;
	PGresult   *res;

	/* progress of the chunked load is forgotten: the stream starts afresh */
	params[0] = t->target;
	PQclear(bridge_exec(progress, "forgetting progress of a chunked load",
						"DELETE FROM cqlbridge.apply_progress WHERE target = $1 AND chunks <> 0",
						1, params));
	if (read_progress(progress, t, &finished, &rows_before, &secs_before, &key, &nkey) && finished)
	{
		if (!opts->quiet)
			fprintf(stderr, "%s: %lld rows in 0.0 s (0 rows/s), streamed (already loaded: %lld rows)\n",
					t->target, rows_before, rows_before);
		*rows_total += rows_before;
		free(keys);
		free(names);
		return 0;
	}
	if (nkey != 0 && nkey != t->nkey)
		bridge_fatal_hint("Run \"cqlbridge apply --restart\" to load the table again.",
						  "%s: the recorded resume key has %d columns, the primary key %d",
						  t->target, nkey, t->nkey);

	exec_checked(conn, t, "BEGIN", "BEGIN", 0, NULL, tty, opts);
	exec_checked(conn, t, "dropping an old row view", "DROP VIEW IF EXISTS " ROWS_VIEW,
				 0, NULL, tty, opts);
	sb_init(&sql);
	sb_appendf(&sql, "CREATE TEMP VIEW cqlbridge_apply_rows AS\n%s", t->sql);
	exec_checked(conn, t, "reading the rows (the block's SELECT)", sql.data, 0, params,
				 tty, opts);

	/* the cursor: from the recorded key on, ordered by the primary key */
	sql.len = 0;
	sql.data[0] = '\0';
	sb_appendf(&sql, "DECLARE " CURSOR_NAME " NO SCROLL CURSOR FOR SELECT * FROM %s q", ROWS_VIEW);
	if (nkey > 0)
	{
		sb_appendf(&sql, " WHERE (%s) >= (", keys);
		for (int i = 0; i < nkey; i++)
			sb_appendf(&sql, "%s$%d", i ? ", " : "", i + 1);
		sb_append(&sql, ")");
	}
	sb_appendf(&sql, " ORDER BY %s", keys);
	exec_checked(conn, t, "declaring the cursor over the rows", sql.data, nkey,
				 nkey > 0 ? (const char *const *) key : params, tty, opts);

	sql.len = 0;
	sql.data[0] = '\0';
	sb_appendf(&sql, "INSERT INTO %s (%s) SELECT (r).* FROM "
			   "(SELECT %s.cql_bridge_cursor_rows('" CURSOR_NAME "', $1::bigint, $2::text[], NULL::%s) AS r OFFSET 0) s",
			   t->foreign_table, t->columns, bridge_extension_schema(conn), ROWS_VIEW);
	snprintf(batch_txt, sizeof(batch_txt), "%lld", batch);
	params[0] = batch_txt;
	params[1] = names;

	if (tty && !opts->quiet)
		apply_show_progress(t, rows_before, 0, 0, "batch", 0, 0);
	for (;;)
	{
		long long	n;
		char	   *last;

		res = PQexecParams(conn, sql.data, 2, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			apply_load_failed(t, conn, res, "streaming a batch", tty, opts);
		n = atoll(PQcmdTuples(res));
		PQclear(res);
		if (n == 0)
			break;
		res = bridge_exec(conn, "reading the batch's last key",
						  bridge_printf("SELECT %s.cql_bridge_cursor_last_key()", bridge_extension_schema(conn)), 0, NULL);
		if (PQgetisnull(res, 0, 0))
			bridge_fatal("%s: a batch of %lld rows left no key to resume from", t->target, n);
		last = bridge_strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
		rows_now += n;
		batches++;
		record_progress(progress, t, rows_before + rows_now, secs_before + bridge_now() - start,
						last, false);
		free(last);
		if (tty && !opts->quiet && bridge_now() - last_shown >= 0.1)
		{
			apply_show_progress(t, rows_before + rows_now, rows_now, bridge_now() - start,
								"batch", batches, 0);
			last_shown = bridge_now();
		}
		bridge_check_interrupt(apply_resume_hint);
		if (n < batch)
			break;
	}
	exec_checked(conn, t, "closing the cursor",
				 "CLOSE " CURSOR_NAME "; DROP VIEW " ROWS_VIEW, 0, NULL, tty, opts);
	exec_checked(conn, t, "COMMIT", "COMMIT", 0, NULL, tty, opts);
	record_progress(progress, t, rows_before + rows_now, secs_before + bridge_now() - start,
					NULL, true);

	if (!opts->quiet)
	{
		double		secs = bridge_now() - start;

		if (tty)
			fprintf(stderr, "\r\033[K");
		fprintf(stderr, "%s: %lld rows in %.1f s (%.0f rows/s), streamed in %d batch%s",
				t->target, rows_before + rows_now, secs, secs > 0 ? rows_now / secs : 0.0,
				batches, batches == 1 ? "" : "es");
		if (nkey > 0)
			fprintf(stderr, " (resumed after %lld rows)", rows_before);
		fputc('\n', stderr);
	}
	*rows_total += rows_before + rows_now;
	for (int i = 0; i < nkey; i++)
		free(key[i]);
	free(key);
	sb_free(&sql);
	free(keys);
	free(names);
	return rows_now;
}

/*-------------------------------------------------------------------------
 *
 * deletes.c
 *	  The stream's DELETEs of target keys that vanished (recomputed ones of
 *	  writer.c, and those of the tables applied from the change itself,
 *	  direct.c): through the foreign table, by full key or by partition
 *	  key, kept until the flush's COMMIT (cql_fdw.write_mode 'on_commit').
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/deletes.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

/*
 * delete_block
 *		The DELETEs of the ncols key columns of every row of res as one
 *		DO block: the keys as array literals of their types (dollar-quoted,
 *		so each value is read once, not cast per row), a loop that
 *		runs "DELETE FROM <foreign table> t WHERE <key> = <value>" per key
 *		(one generic plan, cached by PL/pgSQL: a custom plan per key cost
 *		more than the DELETE) with cql_fdw.write_mode 'on_commit'.
 *		NULL when a value holds the quote's tag (then one statement per key).
 */
static char *
delete_block(const CapTable *t, PGresult *res, int ncols)
{
	static const char *const tag = "$cqlbridge_k$";
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "DO $cqlbridge_d$ DECLARE r record; m text := pg_catalog.current_setting('plan_cache_mode'); "
			  "BEGIN SET LOCAL cql_fdw.write_mode = 'on_commit'; "
			  "SET LOCAL plan_cache_mode = force_generic_plan; FOR r IN SELECT * FROM unnest(");
	for (int k = 0; k < ncols; k++)
	{
		char	   *lit = cap_column_array(res, k);

		if (strstr(lit, "$cqlbridge_"))
		{
			free(lit);
			sb_free(&sb);
			return NULL;
		}
		/* an array key (a frozen collection) is cast per row: no [][] */
		sb_appendf(&sb, "%s%s%s%s::%s[]", k ? ", " : "", tag, lit, tag,
				   strchr(t->key_types[k], '[') ? "text" : t->key_types[k]);
		free(lit);
	}
	sb_append(&sb, ") AS u(");
	for (int k = 0; k < ncols; k++)
		sb_appendf(&sb, "%sc%d", k ? ", " : "", k + 1);
	sb_appendf(&sb, ") LOOP DELETE FROM %s t WHERE ", t->foreign_table);
	for (int k = 0; k < ncols; k++)
		sb_appendf(&sb, "%st.%s = r.c%d%s%s", k ? " AND " : "", bridge_quote_ident(t->key[k]), k + 1,
				   strchr(t->key_types[k], '[') ? "::" : "",
				   strchr(t->key_types[k], '[') ? t->key_types[k] : "");
	sb_append(&sb, "; END LOOP; SET LOCAL cql_fdw.write_mode TO DEFAULT; "
			  "PERFORM pg_catalog.set_config('plan_cache_mode', m, true); END $cqlbridge_d$");
	return sb.data;
}

/* Whether conn's database has PL/pgSQL (asked once per backend). */
static bool
has_plpgsql(PGconn *conn)
{
	static int	pid = 0;
	static bool has = false;

	if (pid != PQbackendPID(conn))
	{
		PGresult   *res = PQexec(conn, "SELECT 1 FROM pg_catalog.pg_language WHERE lanname = 'plpgsql'");

		has = res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
		PQclear(res);
		pid = PQbackendPID(conn);
	}
	return has;
}

/*
 * has_delete_keys
 *		Whether conn's database has cql_bridge_delete_keys (cql_fdw 0.8 or
 *		later; asked once per backend), in the extension's schema.
 */
static bool
has_delete_keys(PGconn *conn)
{
	static int	pid = 0;
	static bool has = false;

	if (pid != PQbackendPID(conn))
	{
		const char *params[1] = {bridge_extension_schema(conn)};
		PGresult   *res = PQexecParams(conn, "SELECT pg_catalog.to_regprocedure($1 || "
									   "'.cql_bridge_delete_keys(pg_catalog.regclass,pg_catalog.text[],\"any\")') "
									   "IS NOT NULL", 1, NULL, params, NULL, NULL, 0);

		has = res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
			strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
		pid = PQbackendPID(conn);
	}
	return has;
}

/*
 * delete_by_function
 *		The DELETEs of the ncols key columns of every row of res through
 *		cql_bridge_delete_keys: one statement, the keys as one array
 *		parameter per column (bound, never spliced into the statement),
 *		the table resolved and the DELETE prepared once for all of them.
 *		The values (the view's, as text) are read as the foreign table's
 *		key types, which the function requires.
 *		A key column whose type is an array (a frozen collection) cannot
 *		be an array element: false, nothing run (the caller takes the DO
 *		block).
 */
static bool
delete_by_function(PGconn *conn, const CapTable *t, PGresult *res, int ncols,
				   bool *ok, char *err, size_t errlen)
{
	StrBuf		sql;
	const char **params;

	for (int k = 0; k < ncols; k++)
		if (strchr(t->key_types[k], '[') || t->ft_key_types == NULL ||
			strchr(t->ft_key_types[k], '['))
			return false;
	params = bridge_malloc(sizeof(char *) * (ncols + 2));
	sb_init(&sql);
	sb_appendf(&sql, "SELECT %s.cql_bridge_delete_keys($1::pg_catalog.regclass, $2::pg_catalog.text[]",
			   bridge_extension_schema(conn));
	for (int k = 0; k < ncols; k++)
	{
		sb_appendf(&sql, ", $%d::%s[]", k + 3, t->ft_key_types[k]);
		params[k + 2] = cap_column_array(res, k);
	}
	sb_append(&sql, ")");
	params[0] = t->foreign_table;
	params[1] = cap_array_literal(t->key, ncols);
	*ok = cap_run(conn, "SET LOCAL cql_fdw.write_mode = 'on_commit'", 0, NULL, err, errlen) &&
		cap_run(conn, sql.data, ncols + 2, params, err, errlen) &&
		cap_run(conn, "SET LOCAL cql_fdw.write_mode TO DEFAULT", 0, NULL, err, errlen);
	for (int k = 1; k < ncols + 2; k++)
		free((char *) params[k]);
	free(params);
	sb_free(&sql);
	return true;
}

/*
 * cap_delete_keys
 *		One DELETE per row of res by its first ncols key columns: the full
 *		key (the keys that vanished: ncols = nkey), or the partition key (a
 *		partition as a whole: ncols = npart, delete_emptied).
 *		Each would otherwise wait for Cassandra's answer before the next is
 *		sent (a DELETE is not batched like the upserts): with
 *		cql_fdw.write_mode 'on_commit' for these statements they are kept
 *		until this transaction's COMMIT and sent then, pipelined (as one
 *		UNLOGGED BATCH per partition), and the COMMIT still returns only
 *		after Cassandra acknowledged every one (or fails, and the flush is
 *		retried).  With cql_fdw 0.8 they are one call of
 *		cql_bridge_delete_keys (delete_by_function): the table resolved and
 *		the DELETE prepared once, about 1 us a key instead of 9 (bench/
 *		README.md, issue 42).  Before, and for keys of array type, they run
 *		as one DO block (delete_block): one round trip
 *		and one plan instead of a statement per key, which cost the
 *		backend 70-80 us of CPU each (bench/README.md); without PL/pgSQL,
 *		the statement is prepared once (the unnamed statement) and
 *		executed per key.
 */
bool
cap_delete_keys(PGconn *conn, CapTable *t, PGresult *res, int ncols, char *err, size_t errlen)
{
	StrBuf		del;
	const char **params;
	PGresult   *prep;
	bool		ok;
	char	   *block;

	if (has_delete_keys(conn) && delete_by_function(conn, t, res, ncols, &ok, err, errlen))
		return ok;
	block = has_plpgsql(conn) ? delete_block(t, res, ncols) : NULL;
	if (block != NULL)
	{
		ok = cap_run(conn, block, 0, NULL, err, errlen);
		free(block);
		return ok;
	}
	params = bridge_malloc(sizeof(char *) * ncols);
	sb_init(&del);
	sb_appendf(&del, "DELETE FROM %s t WHERE ", t->foreign_table);
	for (int k = 0; k < ncols; k++)
		sb_appendf(&del, "%st.%s = $%d", k ? " AND " : "", bridge_quote_ident(t->key[k]), k + 1);
	ok = cap_run(conn, "SET LOCAL cql_fdw.write_mode = 'on_commit'", 0, NULL, err, errlen);
	if (ok)
	{
		prep = PQprepare(conn, "", del.data, ncols, NULL);
		if ((ok = cap_result_ok(conn, prep, err, errlen)))
			PQclear(prep);
	}
	for (int r = 0; ok && r < PQntuples(res); r++)
	{
		PGresult   *one;
		unsigned long long cpu0 = cap_backend_cpu(conn);

		for (int k = 0; k < ncols; k++)
			params[k] = PQgetvalue(res, r, k);
		one = PQexecPrepared(conn, "", ncols, params, NULL, NULL, 0);
		cap_trace(conn, del.data, cpu0);
		if ((ok = cap_result_ok(conn, one, err, errlen)))
			PQclear(one);
	}
	if (ok)
		ok = cap_run(conn, "SET LOCAL cql_fdw.write_mode TO DEFAULT", 0, NULL, err, errlen);
	sb_free(&del);
	free(params);
	return ok;
}

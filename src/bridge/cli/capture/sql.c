/*-------------------------------------------------------------------------
 *
 * sql.c
 *	  Two helpers of "cqlbridge stream" below keys.c, writer.c and
 *	  setup.c: a statement run without exiting on failure (the stream
 *	  retries), and text[] literals for key values bound as parameters.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/sql.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

/*
 * cap_result_ok
 *		Whether res (of any libpq call; NULL counts as a failure) succeeded;
 *		if not, "message (SQLSTATE x)" in err and res is cleared.
 */
bool
cap_result_ok(PGconn *conn, PGresult *res, char *err, size_t errlen)
{
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return true;
	{
		const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
		const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
		const char *m = msg ? msg : PQerrorMessage(conn);

		snprintf(err, errlen, "%.*s%s%s%s", (int) strcspn(m, "\n"), m,
				 state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "");
	}
	PQclear(res);
	return false;
}

/*
 * cap_exec
 *		Run one statement with text parameters; the result, or NULL with
 *		"message (SQLSTATE x)" in err.  Never exits: the stream retries.
 */
PGresult *
cap_exec(PGconn *conn, const char *sql, int n, const char *const *params,
		 char *err, size_t errlen)
{
	PGresult   *res = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);

	return cap_result_ok(conn, res, err, errlen) ? res : NULL;
}

/*
 * The statements prepared on the stream's session: each flush sends the
 * same few statements per table (the view's rows for a set of keys, the
 * keys that vanished, the lineage), whose parse and plan cost as much as
 * running them for a few hundred keys.  Kept by text for one connection
 * (its pointer and backend PID: a reconnect starts empty).
 */
typedef struct CapStmt
{
	char	   *sql;
	char		name[32];
} CapStmt;

static struct
{
	PGconn	   *conn;
	int			pid;
	int			n;
	CapStmt		stmts[CAP_MAX_PREPARED];
}			prepared;
static unsigned int prepared_seq = 0;

/* Forget every prepared statement (another connection, or too many). */
static void
prepared_forget(void)
{
	for (int i = 0; i < prepared.n; i++)
		free(prepared.stmts[i].sql);
	prepared.n = 0;
}

/*
 * cap_exec_prepared
 *		cap_exec through a named prepared statement: prepared on the first
 *		use of this text on this connection, executed by name after (the
 *		plan cache may then keep a generic plan).  A statement that failed
 *		is forgotten, so the retry prepares it again under a new name
 *		(after a change of a view, say).
 */
PGresult *
cap_exec_prepared(PGconn *conn, const char *sql, int n, const char *const *params,
				  char *err, size_t errlen)
{
	CapStmt    *st = NULL;
	PGresult   *res;
	int			i;

	if (prepared.conn != conn || prepared.pid != PQbackendPID(conn))
	{
		prepared_forget();
		prepared.conn = conn;
		prepared.pid = PQbackendPID(conn);
	}
	for (i = 0; i < prepared.n; i++)
		if (strcmp(prepared.stmts[i].sql, sql) == 0)
		{
			st = &prepared.stmts[i];
			break;
		}
	if (st == NULL)
	{
		if (prepared.n == CAP_MAX_PREPARED)
			prepared_forget();
		st = &prepared.stmts[prepared.n];
		snprintf(st->name, sizeof(st->name), "cqlbridge_stream_%u", ++prepared_seq);
		res = PQprepare(conn, st->name, sql, n, NULL);
		if (!cap_result_ok(conn, res, err, errlen))
			return NULL;
		PQclear(res);
		st->sql = bridge_strdup(sql);
		i = prepared.n++;
	}
	res = PQexecPrepared(conn, st->name, n, params, NULL, NULL, 0);
	if (!cap_result_ok(conn, res, err, errlen))
	{
		free(prepared.stmts[i].sql);
		prepared.stmts[i] = prepared.stmts[--prepared.n];
		return NULL;
	}
	return res;
}

/* A text[] literal of values (NULL elements allowed), quoted and escaped. */
char *
cap_array_literal(char **values, int n)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendc(&sb, '{');
	for (int i = 0; i < n; i++)
	{
		if (i)
			sb_appendc(&sb, ',');
		if (values[i] == NULL)
		{
			sb_append(&sb, "NULL");
			continue;
		}
		sb_appendc(&sb, '"');
		for (const char *c = values[i]; *c; c++)
		{
			if (*c == '"' || *c == '\\')
				sb_appendc(&sb, '\\');
			sb_appendc(&sb, *c);
		}
		sb_appendc(&sb, '"');
	}
	sb_appendc(&sb, '}');
	return sb.data;
}

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

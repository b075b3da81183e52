/*-------------------------------------------------------------------------
 *
 * sql.c
 *	  Helpers of "cqlbridge stream" below keys.c, writer.c, direct.c and
 *	  setup.c: a statement run without exiting on failure (the stream
 *	  retries), text[] literals for key values bound as parameters, and
 *	  the statement trace (CQLBRIDGE_STREAM_TRACE).
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
 * The stream's statements with parameters are the same texts flush after
 * flush (the derivation of keys, the writes of each table): each is
 * prepared once per session (named cqlbridge_p<n>) and then executed, so
 * that the backend does not parse and analyze it again every flush
 * (bench/README.md).  PostgreSQL may then choose a generic plan, which
 * cannot see how many keys the arrays hold: fine for a live flush of a few
 * hundred keys, but the one it chose for a lineage lookup took 200 ms a
 * flush of 3,000 keys in a catch-up (an index scan on one lineage column
 * per key instead of a hash join), so a large flush plans every statement
 * for its arrays (writer.c, cap_custom_plans).  The names are forgotten when the backend changes
 * (a reconnect) and after a prepared statement failed (it may be stale:
 * a view replaced by a new plan); at most MAX_PREPARED are kept.
 */
#define MAX_PREPARED 256

static char *prep_sql[MAX_PREPARED];
static int	nprep;
static int	prep_generation;	/* part of the names: never reused */
static int	prep_pid;

static void
forget_prepared(void)
{
	for (int i = 0; i < nprep; i++)
		free(prep_sql[i]);
	nprep = 0;
	prep_generation++;
}

/*
 * The name of sql prepared in conn's session, or NULL: not prepared (too
 * many kept), or the PREPARE failed and *failed is its error.  The error
 * is the statement's own (the same text, the same parameter types
 * inferred); running it unprepared instead would report only that the
 * transaction is aborted.
 */
static const char *
prepared(PGconn *conn, const char *sql, int n, PGresult **failed)
{
	static char name[64];
	PGresult   *res;

	if (prep_pid != PQbackendPID(conn))
	{
		forget_prepared();
		prep_pid = PQbackendPID(conn);
	}
	for (int i = 0; i < nprep; i++)
		if (strcmp(prep_sql[i], sql) == 0)
		{
			snprintf(name, sizeof(name), "cqlbridge_p%d_%d", prep_generation, i);
			return name;
		}
	if (nprep == MAX_PREPARED)
		return NULL;
	snprintf(name, sizeof(name), "cqlbridge_p%d_%d", prep_generation, nprep);
	res = PQprepare(conn, name, sql, n, NULL);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		/* NULL (out of memory): an error result, the connection's message */
		*failed = res ? res : PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
		return NULL;
	}
	PQclear(res);
	prep_sql[nprep++] = bridge_strdup(sql);
	return name;
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
	unsigned long long cpu0 = cap_backend_cpu(conn);
	PGresult   *res = NULL;
	const char *name = n > 0 ? prepared(conn, sql, n, &res) : NULL;

	if (res == NULL)			/* else the PREPARE failed: its error */
		res = name != NULL ? PQexecPrepared(conn, name, n, params, NULL, NULL, 0)
			: PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
	cap_trace(conn, sql, cpu0);
	if (cap_result_ok(conn, res, err, errlen))
		return res;
	if (name != NULL)
		forget_prepared();		/* prepared again after the retry */
	return NULL;
}

/*
 * The statement trace: with CQLBRIDGE_STREAM_TRACE=FILE in the environment,
 * one line per statement the stream runs in its session, "<backend CPU
 * microseconds>\t<statement on one line>", appended to FILE.  For tests
 * (which statements a flush runs: none on a source for a table applied
 * directly) and for measuring where the backend's CPU goes per kind of
 * statement (bench/README.md); the CPU is read from the backend's
 * /proc/<pid>/schedstat, so only for a server on the same machine.  Off,
 * it costs one test per statement.
 */
static FILE *trace_file;
static int	trace_state;		/* 0 unknown, 1 on, -1 off */

static bool
trace_on(void)
{
	if (trace_state == 0)
	{
		const char *path = getenv("CQLBRIDGE_STREAM_TRACE");

		trace_state = -1;
		if (path && *path && (trace_file = fopen(path, "a")) != NULL)
		{
			setvbuf(trace_file, NULL, _IOLBF, 0);
			trace_state = 1;
		}
	}
	return trace_state > 0;
}

/* The CPU time of conn's backend so far in ns (0 when not traced). */
unsigned long long
cap_backend_cpu(PGconn *conn)
{
	char		path[64];
	unsigned long long ns = 0;
	FILE	   *f;

	if (!trace_on() || conn == NULL)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", PQbackendPID(conn));
	if ((f = fopen(path, "r")) != NULL)
	{
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

/* Trace sql, run since the backend's CPU was cpu0 (see trace_on). */
void
cap_trace(PGconn *conn, const char *sql, unsigned long long cpu0)
{
	unsigned long long cpu1;

	if (!trace_on())
		return;
	cpu1 = cap_backend_cpu(conn);
	fprintf(trace_file, "%llu\t", cpu1 > cpu0 ? (cpu1 - cpu0) / 1000 : 0);
	for (const char *c = sql; *c; c++)
		fputc(*c == '\n' || *c == '\t' ? ' ' : *c, trace_file);
	fputc('\n', trace_file);
}

/* Run sql, clear the result; false with err on failure. */
bool
cap_run(PGconn *conn, const char *sql, int n, const char *const *params, char *err, size_t errlen)
{
	PGresult   *res = cap_exec(conn, sql, n, params, err, errlen);

	if (res == NULL)
		return false;
	PQclear(res);
	return true;
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
		/* the runs between characters to escape appended whole */
		sb_appendc(&sb, '"');
		for (const char *c = values[i];;)
		{
			size_t		run = strcspn(c, "\"\\");

			sb_appendn(&sb, c, run);
			c += run;
			if (*c == '\0')
				break;
			sb_appendc(&sb, '\\');
			sb_appendc(&sb, *c++);
		}
		sb_appendc(&sb, '"');
	}
	sb_appendc(&sb, '}');
	return sb.data;
}

/* Column c of res's rows as a text[] literal (NULLs kept). */
char *
cap_column_array(PGresult *res, int c)
{
	char	  **vals = bridge_malloc(sizeof(char *) * (PQntuples(res) + 1));
	char	   *lit;

	for (int r = 0; r < PQntuples(res); r++)
		vals[r] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
	lit = cap_array_literal(vals, PQntuples(res));
	free(vals);
	return lit;
}

/*
 * cap_column_literals
 *		The text[] literal of each of ncols columns of nrows values
 *		(cols[c][r], NULL for SQL null), for binding as parameters; the
 *		values and cols are freed.
 */
char	  **
cap_column_literals(char ***cols, int ncols, int nrows)
{
	char	  **arrays = bridge_malloc(sizeof(char *) * (ncols + 1));

	for (int c = 0; c < ncols; c++)
	{
		arrays[c] = cap_array_literal(cols[c], nrows);
		for (int r = 0; r < nrows; r++)
			free(cols[c][r]);
		free(cols[c]);
	}
	free(cols);
	return arrays;
}

/*
 * cap_unnest_rows
 *		"SELECT u.<c>1::<type 1> AS <c>1, ... FROM unnest($first::text[],
 *		...) AS u(<c>1, ...)": the rows of n text[] parameters from $first
 *		on, each column cast to its type (c: the columns' name prefix).
 *		Appended to sb.
 */
void
cap_unnest_rows(StrBuf *sb, char *const *types, int n, int first, const char *c)
{
	sb_append(sb, "SELECT ");
	for (int i = 0; i < n; i++)
		sb_appendf(sb, "%su.%s%d::%s AS %s%d", i ? ", " : "", c, i + 1, types[i], c, i + 1);
	sb_append(sb, " FROM unnest(");
	for (int i = 0; i < n; i++)
		sb_appendf(sb, "%s$%d::text[]", i ? ", " : "", first + i);
	sb_append(sb, ") AS u(");
	for (int i = 0; i < n; i++)
		sb_appendf(sb, "%s%s%d", i ? ", " : "", c, i + 1);
	sb_append(sb, ")");
}

/*
 * cap_custom_plans
 *		In the transaction begun on conn: custom plans for the prepared
 *		statements (see prepared()) until its end.  False with err.
 */
bool
cap_custom_plans(PGconn *conn, char *err, size_t errlen)
{
	PGresult   *res = PQexec(conn, "SET LOCAL plan_cache_mode = force_custom_plan");

	if (!cap_result_ok(conn, res, err, errlen))
		return false;
	PQclear(res);
	return true;
}

/*
 * cap_key_columns
 *		t's key columns as "<alias>.k1, <alias>.k2", and with lin its
 *		lineage columns after them (a lineage table's row).  Allocated.
 */
char *
cap_key_columns(const CapTable *t, const char *alias, bool lin)
{
	StrBuf		list;

	sb_init(&list);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&list, "%s%s.%s", k ? ", " : "", alias, bridge_quote_ident(t->key[k]));
	for (int k = 0; lin && k < t->nlin; k++)
		sb_appendf(&list, ", %s.%s", alias, bridge_quote_ident(t->lin[k]));
	return list.data;
}

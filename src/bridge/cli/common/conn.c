/*-------------------------------------------------------------------------
 *
 * conn.c
 *	  The libpq side of cqlbridge: connecting with the command's options
 *	  and running statements and scripts, every failure reported with the
 *	  server's SQLSTATE, detail and hint (or as an interruption).
 *
 * layer: common
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common/conn.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "common/common.h"

/* Notices (e.g. "relation already exists, skipping") are not news. */
static void
quiet_notice_processor(void *arg, const char *message)
{
	(void) arg;
	if (getenv("CQLBRIDGE_NOTICES"))
		fputs(message, stderr);
}

/* -W: the password typed once, for every connection of the run */
static char *prompted_password = NULL;

/*
 * prompt_password
 *		-W: read the password from the terminal without echo, as psql does.
 *		Without a terminal (a script, cron, CI) that is an error with a
 *		hint, not a hang on a closed stdin.  The password is kept in memory
 *		only and never printed.
 */
static char *
prompt_password(const BridgeOptions *opts)
{
	FILE	   *tty = fopen("/dev/tty", "r+");
	const char *user = opts->user ? opts->user : getenv("PGUSER");
	struct termios old;
	struct termios quiet;
	char		buf[1024];
	bool		got;
	size_t		n;

	if (tty == NULL || !isatty(fileno(tty)) || tcgetattr(fileno(tty), &old) != 0)
		bridge_fatal_hint("Give the password in PGPASSWORD or ~/.pgpass (or a service file), or run cqlbridge on a terminal.",
						  "-W: there is no terminal to prompt for the password on");
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t) ECHO;
	quiet.c_lflag |= ECHONL;
	tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
	if (user)
		fprintf(tty, "Password for user %s: ", user);
	else
		fprintf(tty, "Password: ");
	fflush(tty);
	got = fgets(buf, sizeof(buf), tty) != NULL;
	tcsetattr(fileno(tty), TCSAFLUSH, &old);
	fclose(tty);
	if (!got)
		bridge_fatal("-W: no password read from the terminal");
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return bridge_strdup(buf);
}

/*
 * untracked
 *		Keep cqlbridge's own statements (plan measures the data with the
 *		workload's joins, verify runs the workload's queries) out of
 *		pg_stat_statements, from which "cqlbridge workload" drafts the
 *		application's workload: pg_stat_statements.track = none for this
 *		session, where the module is loaded and the role may set it (a
 *		superuser); otherwise nothing, without an error.
 */
static void
untracked(PGconn *conn)
{
	PGresult   *res = PQexec(conn,
							 "SELECT pg_catalog.set_config('pg_stat_statements.track', 'none', false) "
							 "FROM pg_catalog.pg_settings s "
							 "WHERE s.name = 'pg_stat_statements.track' "
							 "AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user)");

	PQclear(res);
}

/*
 * bridge_write_consistency
 *		The consistency level of every write cqlbridge makes to Cassandra
 *		(apply, stream, sync, diff --repair): --write-consistency, else
 *		LOCAL_QUORUM.  The stream confirms the slot once Cassandra
 *		acknowledged a flush at this level; at LOCAL_ONE the loss of the one
 *		replica that acknowledged loses a confirmed change.
 */
const char *
bridge_write_consistency(const BridgeOptions *opts)
{
	return opts->write_consistency ? opts->write_consistency : "LOCAL_QUORUM";
}

/*
 * set_write_consistency
 *		Set cql_fdw.write_consistency for the session (it wins over the
 *		server's option write_consistency).  cql_fdw need not be loaded
 *		yet: the setting is kept as a placeholder, checked and applied
 *		when the library loads.  False with err when the SET failed.
 */
static bool
set_write_consistency(PGconn *conn, const BridgeOptions *opts, char *err, size_t errlen)
{
	const char *params[1] = {bridge_write_consistency(opts)};
	PGresult   *res = PQexecParams(conn,
								   "SELECT pg_catalog.set_config('cql_fdw.write_consistency', $1, false)",
								   1, NULL, params, NULL, NULL, 0);
	bool		ok = PQresultStatus(res) == PGRES_TUPLES_OK;

	if (!ok)
		snprintf(err, errlen, "setting cql_fdw.write_consistency failed: %s", PQerrorMessage(conn));
	PQclear(res);
	return ok;
}

/*
 * bridge_connect_try
 *		Connect with -d/-h/-p/-U and the PG* environment, as psql does (-d
 *		may be a conninfo string or URI), with replication=<replication>
 *		when it is not NULL ("database" for logical decoding); notices are
 *		silenced unless CQLBRIDGE_NOTICES is set.  -W: the password prompted
 *		for once; without -W it is prompted for when the server asks for one
 *		and stdin is a terminal.  NULL with the first line of libpq's
 *		message in err when it fails (the caller decides).
 */
PGconn *
bridge_connect_try(const BridgeOptions *opts, const char *replication, char *err, size_t errlen)
{
	const char *keys[8];		/* password host port user fallback_application_name dbname replication NULL */
	const char *vals[8];
	int			n = 0;
	PGconn	   *conn;

	if (opts->password_prompt && prompted_password == NULL)
		prompted_password = prompt_password(opts);
again:
	n = 0;
	if (prompted_password)
	{
		keys[n] = "password";
		vals[n++] = prompted_password;
	}

	/* expand_dbname = 1: -d may be a conninfo string or URI, like psql */
	if (opts->host)
	{
		keys[n] = "host";
		vals[n++] = opts->host;
	}
	if (opts->port)
	{
		keys[n] = "port";
		vals[n++] = opts->port;
	}
	if (opts->user)
	{
		keys[n] = "user";
		vals[n++] = opts->user;
	}
	keys[n] = "fallback_application_name";
	vals[n++] = "cqlbridge";
	if (opts->dbname)
	{
		keys[n] = "dbname";
		vals[n++] = opts->dbname;
	}
	/* after dbname: a conninfo string in -d must not turn replication off */
	if (replication)
	{
		keys[n] = "replication";
		vals[n++] = replication;
	}
	keys[n] = NULL;
	vals[n] = NULL;

	conn = PQconnectdbParams(keys, vals, 1);

	/*
	 * The server asks for a password that neither -W, PGPASSWORD nor
	 * ~/.pgpass gave: prompt for it as psql does, but only when stdin is a
	 * terminal (a script or CI without stdin gets libpq's error at once).
	 */
	if (conn != NULL && PQstatus(conn) == CONNECTION_BAD &&
		PQconnectionNeedsPassword(conn) && prompted_password == NULL &&
		isatty(fileno(stdin)))
	{
		PQfinish(conn);
		prompted_password = prompt_password(opts);
		goto again;
	}
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		const char *msg = conn ? PQerrorMessage(conn) : "out of memory";
		size_t		len = strlen(msg);

		while (len > 0 && msg[len - 1] == '\n')
			len--;
		snprintf(err, errlen, "%.*s", (int) len, msg);
		PQfinish(conn);
		return NULL;
	}
	PQsetNoticeProcessor(conn, quiet_notice_processor, NULL);
	untracked(conn);
	if (replication == NULL && !set_write_consistency(conn, opts, err, errlen))
	{
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/*
 * bridge_connect
 *		bridge_connect_try without replication; fatal with a hint when the
 *		connection fails.
 */
PGconn *
bridge_connect(const BridgeOptions *opts)
{
	char		err[1024];
	PGconn	   *conn = bridge_connect_try(opts, NULL, err, sizeof(err));

	if (conn == NULL)
		bridge_fatal_hint("Give the database with -d, -h, -p, -U or the PGDATABASE, PGHOST, PGPORT, PGUSER environment variables.",
						  "could not connect to the database: %s", err);
	return conn;
}

/*
 * report_failure
 *		Print the failure of a statement (or of a script, when script is
 *		given: then with the line of the failing statement) to stderr:
 *		"cqlbridge: <what> failed: <message> (SQLSTATE x)" and the server's
 *		DETAIL, HINT and CONTEXT.  A statement cancelled by Ctrl-C exits
 *		here with the interruption's message instead, so it is not reported
 *		as a failure.  res may be NULL (out of memory, lost connection).
 *		With a catcher set (bridge_catcher), the failure is handed to it
 *		instead of being printed.
 */
static void
report_failure(PGconn *conn, const PGresult *res, const char *what, const char *script)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	const char *context = res ? PQresultErrorField(res, PG_DIAG_CONTEXT) : NULL;
	const char *pos = res && script ? PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION) : NULL;

	bridge_check_interrupt(NULL);
	if (bridge_catcher != NULL && script == NULL)
		bridge_throw(bridge_printf("%s failed: %s%s%s%s%s%s", what, msg ? msg : PQerrorMessage(conn),
								   state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "",
								   detail ? "; " : "", detail ? detail : ""),
					 hint ? bridge_strdup(hint) : NULL);
	fflush(stdout);
	fprintf(stderr, "cqlbridge: %s failed: %s", what,
			msg ? msg : PQerrorMessage(conn));
	if (state)
		fprintf(stderr, " (SQLSTATE %s)", state);
	fputc('\n', stderr);
	if (pos)
	{
		/* turn the character position into a line number */
		long		p = atol(pos);
		int			line = 1;

		for (long i = 0; i < p - 1 && script[i]; i++)
			if (script[i] == '\n')
				line++;
		fprintf(stderr, "LINE:  %d of the script\n", line);
	}
	if (detail)
		fprintf(stderr, "DETAIL:  %s\n", detail);
	if (hint)
		fprintf(stderr, "HINT:  %s\n", hint);
	if (context)
		fprintf(stderr, "CONTEXT:  %s\n", context);
}

/*
 * bridge_exec
 *		Run one statement with text parameters and return its result; exit
 *		(status 1, the server's SQLSTATE, detail and hint printed) unless it
 *		succeeded.  'what' names the step in the message.
 */
PGresult *
bridge_exec(PGconn *conn, const char *what, const char *sql,
			int nparams, const char *const *params)
{
	PGresult   *res;
	ExecStatusType st;

	res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
	{
		report_failure(conn, res, what, NULL);
		exit(BRIDGE_EXIT_ERROR);
	}

	/*
	 * A signal that came between two statements cancelled nothing: stop
	 * here, before the next one is sent (it might run for minutes).
	 */
	bridge_check_interrupt(NULL);
	return res;
}

/*
 * bridge_get_result
 *		The result of the one statement sent on conn with PQsendQuery*():
 *		the caller sends statements on several sessions, then collects each.
 *		A failure is reported as bridge_exec reports it (exit 2).
 */
PGresult *
bridge_get_result(PGconn *conn, const char *what)
{
	PGresult   *res = NULL;
	PGresult   *r;
	bool		ok = true;

	while ((r = PQgetResult(conn)) != NULL)
	{
		ExecStatusType st = PQresultStatus(r);

		if (ok && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		{
			report_failure(conn, r, what, NULL);
			ok = false;
		}
		if (ok && res == NULL)
			res = r;
		else
			PQclear(r);
	}
	if (!ok || res == NULL)
	{
		if (ok)
			report_failure(conn, NULL, what, NULL);
		exit(BRIDGE_EXIT_ERROR);
	}
	bridge_check_interrupt(NULL);
	return res;
}

/*
 * bridge_exec_script
 *		Run a script of several statements by the simple query protocol
 *		(one implicit transaction unless the script says otherwise); on the
 *		first failure report it with its line in the script, read the
 *		remaining results and exit (status 1).
 */
void
bridge_exec_script(PGconn *conn, const char *what, const char *sql)
{
	PGresult   *res;
	bool		ok = true;

	if (!PQsendQuery(conn, sql))
		bridge_fatal("%s failed: %s", what, PQerrorMessage(conn));
	while ((res = PQgetResult(conn)) != NULL)
	{
		ExecStatusType st = PQresultStatus(res);

		if (ok && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
			st != PGRES_EMPTY_QUERY)
		{
			report_failure(conn, res, what, sql);
			ok = false;
		}
		PQclear(res);
	}
	if (!ok)
		exit(BRIDGE_EXIT_ERROR);
}

/*
 * bridge_extension_schema
 *		The schema of the cql_fdw extension, quoted, so that every call of
 *		its functions (cql_bridge_analyze, cql_execute,
 *		cql_bridge_cursor_rows, ...) is schema-qualified and works with the
 *		extension in a schema outside the search_path.  Read once per
 *		process (one database per run); fatal when it is not installed.
 */
const char *
bridge_extension_schema(PGconn *conn)
{
	static char *schema = NULL;
	PGresult   *res;

	if (schema)
		return schema;
	res = bridge_exec(conn, "finding the cql_fdw extension",
					  "SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e "
					  "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
					  "WHERE e.extname = 'cql_fdw'", 0, NULL);
	if (PQntuples(res) != 1)
		bridge_fatal_hint("Run CREATE EXTENSION cql_fdw in the database (in any schema).",
						  "the cql_fdw extension is not installed in database \"%s\"", PQdb(conn));
	schema = bridge_strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return schema;
}

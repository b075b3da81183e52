/*-------------------------------------------------------------------------
 *
 * priority.c
 *	  "cqlbridge stream --priority idle": the stream's process, its backend
 *	  and its walsender in Linux's SCHED_IDLE class, so that the migration
 *	  runs only on CPU the application leaves free.
 *
 * On a server shared with the application, the stream's flushes (every
 * --flush-interval: recompute queries in its backend, decoding in its
 * walsender) take the CPU just when the application's backends wake, and the
 * application's slowest transactions get slower; lower nice values do not
 * help, SCHED_IDLE does (bench/README.md).  The backend and the walsender
 * are PostgreSQL's processes: each session asks for the class itself with
 * cql_bridge_cpu_priority('idle') (src/bridge/cpu_priority.c), which a
 * REPLICATION role may call.  The main session also turns parallel
 * workers off: they would run at normal priority.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/priority.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* SCHED_IDLE in <sched.h> */
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

/*
 * cap_priority_process
 *		With --priority idle, this process into SCHED_IDLE (no privilege
 *		needed to lower one's own class); fatal if the system refuses.
 */
void
cap_priority_process(const BridgeOptions *opts)
{
	if (!opts->idle_priority)
		return;
#ifdef SCHED_IDLE
	{
		struct sched_param param;

		memset(&param, 0, sizeof(param));
		if (sched_setscheduler(0, SCHED_IDLE, &param) != 0)
			bridge_fatal_hint("Run the stream without --priority idle.",
							  "could not set the idle CPU priority: %s", strerror(errno));
	}
#else
	bridge_fatal_hint("Run the stream without --priority idle.",
					  "--priority idle needs Linux's SCHED_IDLE scheduling class");
#endif
}

/*
 * cap_priority_session
 *		The backend of conn (a walsender when replication is true) into
 *		SCHED_IDLE, and no parallel workers in a normal session (for
 *		--priority idle).  The statements are constants sent with PQexec: a
 *		replication connection accepts only the simple query protocol.
 *		False with err set on failure (the caller decides: fatal at start,
 *		a retry after a reconnect).
 */
bool
cap_priority_session(PGconn *conn, bool replication, const char *ext_schema,
					 char *err, size_t errlen)
{
	char	   *sql;
	PGresult   *res;
	bool		ok;

	sql = bridge_printf("SELECT %s.cql_bridge_cpu_priority('idle')%s", ext_schema,
						replication ? "" : "; SET max_parallel_workers_per_gather = 0");
	res = PQexec(conn, sql);
	free(sql);
	ok = cap_result_ok(conn, res, err, errlen);
	if (ok)
		PQclear(res);
	else
	{
		char		msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "could not lower the CPU priority of the stream's %s: %s",
				 replication ? "walsender" : "backend", msg);
	}
	return ok;
}

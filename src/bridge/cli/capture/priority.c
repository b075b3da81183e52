/*-------------------------------------------------------------------------
 *
 * priority.c
 *	  "cqlbridge stream --priority": the CPU priority of the stream's
 *	  process, its backend and its walsender, so that the migration takes
 *	  the CPU the application leaves free rather than the moments its
 *	  backends wake.
 *
 * The stream's work comes in bursts (a flush every --flush-interval; the
 * walsender decodes what each WAL flush made visible), and a burst on the
 * application's cores delays its slowest transactions (bench/README.md,
 * issue 42).  Linux shares the CPU first between autogroups (one per
 * session, when kernel.sched_autogroup_enabled is 1) and PostgreSQL makes
 * every backend a session of its own, so what ranks the stream's backend
 * and walsender against the application's backends is the nice value of
 * their autogroups; each session asks for it itself with
 * cql_bridge_cpu_priority() (src/bridge/cpu_priority.c, which says what
 * 'background' and 'idle' do), which a REPLICATION role may call.  The
 * main session also turns parallel workers off: they would run at normal
 * priority.
 *
 * This process lowers its own nice value (and its autogroup's when it
 * leads its session, as a systemd service does; a process started from a
 * shell shares the shell's group, which is not its to change) and asks
 * for the long time slice.  A session or process that cannot be lowered
 * (cql_fdw before 0.7, a role without REPLICATION, a kernel that refuses)
 * stops the stream with the error: the user asked for that priority.
 * 'auto' is the default (cql_fdw 0.9).  A lowered stream helps the
 * application's slowest transactions only as far as the application's
 * woken backends preempt the stream's at once, which SCHED_IDLE gives
 * (Linux preempts a SCHED_IDLE task for any other task that wakes, in any
 * group) and a nice value alone does not (issue 42's benchmark,
 * bench/README.md "Follow-up 4": the application's p99 1.15x that without
 * a stream at 'auto' once it yields, 1.18-1.36x at 'idle', 1.87x at
 * 'normal', 1.57-1.65x with the autogroups at nice 19 and no SCHED_IDLE).
 * But 'idle' is for the
 * rest of the processes' lives, and on a saturated server a stream that
 * cannot catch up keeps WAL on the source without bound.  So 'auto' puts
 * each process into SCHED_IDLE only where it leads an autogroup (Linux's
 * autogroups on, and a session of its own: every backend, and this process
 * when started as a service or with setsid), and moves those autogroups'
 * nice values, which an unprivileged process may raise again: nice 19 once
 * the lag has stayed at most half of --yield-lag for YIELD_HOLD_S seconds,
 * nice 0 (a full share, as 'normal') as soon as it exceeds --yield-lag.
 * Every session starts at nice 0, the initial load and a catch-up
 * included.  Where nothing can be moved (autogroups off, cql_fdw before
 * 0.9), 'auto' is 'normal', said once in the log.
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
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "capture/capture.h"

/*
 * process_autogroup
 *		This process's autogroup at nice value nice (0 to 19, allowed in
 *		both directions without privilege; nothing on a kernel without
 *		autogroups).  Linux takes one such change per 100 ms from an
 *		unprivileged process (EAGAIN): tried again for up to 3 s.  False
 *		with err on refusal.
 */
static bool
process_autogroup(int nice, char *err, size_t errlen)
{
	char		buf[16];
	int			len = snprintf(buf, sizeof(buf), "%d", nice);

	for (int attempt = 0; attempt < 30; attempt++)
	{
		int			fd = open("/proc/self/autogroup", O_WRONLY);
		bool		done;
		int			save;

		if (fd < 0)
			return true;		/* no autogroups: nothing to move */
		done = write(fd, buf, len) == len;
		save = errno;
		close(fd);
		if (done)
			return true;
		if (save != EAGAIN)
		{
			snprintf(err, errlen, "could not set the stream's autogroup to nice %d: %s",
					 nice, strerror(save));
			return false;
		}
		usleep(100000);
	}
	snprintf(err, errlen, "could not set the stream's autogroup to nice %d: %s", nice, strerror(EAGAIN));
	return false;
}

/*
 * process_nice
 *		This process at nice value nice, and its autogroup too when the
 *		process leads its session; false with a message in err on refusal.
 */
static bool
process_nice(int nice, char *err, size_t errlen)
{
	errno = 0;
	if (getpriority(PRIO_PROCESS, 0) < nice && errno == 0 &&
		setpriority(PRIO_PROCESS, 0, nice) != 0)
	{
		snprintf(err, errlen, "could not lower the CPU priority of the stream's process: %s",
				 strerror(errno));
		return false;
	}
	/* a kernel without autogroups has no such file: nothing to do */
	if (getsid(0) == getpid() && !process_autogroup(nice, err, errlen))
		return false;
	return true;
}

/*
 * process_slice
 *		The long time slice of cpu_priority.c's 'background' for this
 *		process (Linux 6.12 and later; ignored before, and a refusal is not
 *		an error: it only helps).
 */
static void
process_slice(void)
{
#if defined(__linux__) && defined(SYS_sched_setattr)
	struct
	{
		uint32_t	size;
		uint32_t	sched_policy;
		uint64_t	sched_flags;
		int32_t		sched_nice;
		uint32_t	sched_priority;
		uint64_t	sched_runtime;
		uint64_t	sched_deadline;
		uint64_t	sched_period;
	}			attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_OTHER;
	attr.sched_nice = getpriority(PRIO_PROCESS, 0);
	attr.sched_runtime = 100000000;		/* 100 ms, the kernel's maximum */
	(void) syscall(SYS_sched_setattr, 0, &attr, 0);
#endif
}

/* how long the lag stays low before 'auto' yields again, in seconds */
#define YIELD_HOLD_S		10.0
/* after a failed move, the next attempt, in seconds */
#define YIELD_RETRY_S		30.0

/* --priority auto's state (one stream per process) */
static struct
{
	bool		process;		/* this process's autogroup is the stream's to move */
	int		   *pids;			/* sessions in 'auto': backends, walsender */
	int			npids;
	int			cappids;
	bool		yielding;		/* all of them at nice 19 */
	double		calm_since;		/* lag at most half the bound since (0: not) */
	double		next_try;		/* after a failed move: not before */
	bool		said_normal;	/* "runs at normal priority" logged */
}			autop;

/* Linux's autogroups are on (kernel.sched_autogroup_enabled = 1). */
static bool
autogroups_on(void)
{
	char		c = '0';
	int			fd = open("/proc/sys/kernel/sched_autogroup_enabled", O_RDONLY);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/*
 * cap_priority_process
 *		This process at opts->priority: 'background' a nice value of 10 and
 *		a long slice, 'idle' SCHED_IDLE and a nice value of 19 (no privilege
 *		needed to lower one's own), 'auto' SCHED_IDLE where it leads its own
 *		autogroup (see the header); fatal when the system refuses.
 */
void
cap_priority_process(const BridgeOptions *opts)
{
	char		err[256] = "";
	bool		ok = true;

	if (strcmp(opts->priority, "auto") == 0)
	{
		bool		leads = getsid(0) == getpid();
		bool		groups = autogroups_on();
#ifdef SCHED_IDLE
		struct sched_param param;

		memset(&param, 0, sizeof(param));
		autop.process = leads && groups && sched_setscheduler(0, SCHED_IDLE, &param) == 0;
#endif
		if (groups && !leads)
			cap_log("--priority auto: this process shares the autogroup of the session it was started from and keeps its priority (start it as a service, or with setsid, for it to yield too)");
	}
	else if (strcmp(opts->priority, "background") == 0)
	{
		ok = process_nice(10, err, sizeof(err));
		if (ok)
			process_slice();
	}
	else if (strcmp(opts->priority, "idle") == 0)
	{
#ifdef SCHED_IDLE
		struct sched_param param;

		ok = process_nice(19, err, sizeof(err));
		memset(&param, 0, sizeof(param));
		if (ok && sched_setscheduler(0, SCHED_IDLE, &param) != 0)
		{
			snprintf(err, sizeof(err), "could not set the idle CPU priority: %s", strerror(errno));
			ok = false;
		}
#else
		snprintf(err, sizeof(err), "--priority idle needs Linux's SCHED_IDLE scheduling class");
		ok = false;
#endif
	}
	if (!ok)
		bridge_fatal_hint("Run the stream with --priority normal.", "%s", err);
}

/*
 * auto_session
 *		cap_priority_session for 'auto': the session into SCHED_IDLE where
 *		its autogroup counts, then kept in autop.pids, and at nice 19 at
 *		once when the stream yields.  A server that cannot (cql_fdw before
 *		0.9, a role that may not) leaves the session at normal priority,
 *		said once: 'auto' is the default and must not stop a stream.  False
 *		with err only when the connection failed.
 */
static bool
auto_session(PGconn *conn, bool replication, const char *ext_schema, char *err, size_t errlen)
{
	char	   *sql = bridge_printf("SELECT %s.cql_bridge_cpu_priority('auto')", ext_schema);
	PGresult   *res = PQexec(conn, sql);
	bool		moved;

	free(sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		(void) cap_result_ok(conn, res, err, errlen);	/* err; clears res */
		if (PQstatus(conn) != CONNECTION_OK)
			return false;
		if (!autop.said_normal)
			cap_log("--priority auto: the %s runs at normal priority: %s (cql_fdw 0.9 moves it)",
					replication ? "walsender" : "backend", err);
		autop.said_normal = true;
		err[0] = '\0';
		moved = false;
	}
	else
	{
		moved = strcmp(PQgetvalue(res, 0, 0), "idle") == 0;
		PQclear(res);
	}
	if (!replication && !cap_run(conn, "SET max_parallel_workers_per_gather = 0", 0, NULL, err, errlen))
		return false;
	if (!moved)
		return true;
	if (autop.npids == autop.cappids)
	{
		autop.cappids = autop.cappids ? 2 * autop.cappids : 4;
		autop.pids = bridge_realloc(autop.pids, sizeof(int) * autop.cappids);
	}
	autop.pids[autop.npids++] = PQbackendPID(conn);
	if (autop.yielding)
	{
		sql = bridge_printf("SELECT %s.cql_bridge_autogroup_nice(19)", ext_schema);
		res = PQexec(conn, sql);
		free(sql);
		if (!cap_result_ok(conn, res, err, errlen))
			return false;
		PQclear(res);
	}
	return true;
}

/*
 * move_all
 *		This process (where its autogroup is the stream's) and the sessions
 *		of autop.pids still alive (the others are forgotten) at autogroup
 *		nice value nice, through conn; false with err.
 */
static bool
move_all(PGconn *conn, const char *ext_schema, int nice, char *err, size_t errlen)
{
	StrBuf		pids;
	char		nbuf[16];
	const char *params[2];
	char	   *sql;
	PGresult   *res;

	if (autop.process && !process_autogroup(nice, err, errlen))
		return false;
	if (autop.npids == 0)
		return true;
	sb_init(&pids);
	sb_appendc(&pids, '{');
	for (int i = 0; i < autop.npids; i++)
		sb_appendf(&pids, "%s%d", i ? "," : "", autop.pids[i]);
	sb_appendc(&pids, '}');
	snprintf(nbuf, sizeof(nbuf), "%d", nice);
	params[0] = nbuf;
	params[1] = pids.data;
	/*
	 * Sessions that ended (a reconnect) are left out before the call, and so
	 * is a process ID reused since by a session of another program.
	 */
	sql = bridge_printf("WITH live AS MATERIALIZED (SELECT p FROM pg_catalog.unnest($2::int[]) p "
						"WHERE p IN (SELECT pid FROM pg_catalog.pg_stat_activity "
						"WHERE application_name = pg_catalog.current_setting('application_name'))) "
						"SELECT p, %s.cql_bridge_autogroup_nice($1::int, p) FROM live",
						ext_schema);
	res = PQexecParams(conn, sql, 2, NULL, params, NULL, NULL, 0);
	free(sql);
	sb_free(&pids);
	if (!cap_result_ok(conn, res, err, errlen))
		return false;
	autop.npids = 0;
	for (int r = 0; r < PQntuples(res); r++)
		autop.pids[autop.npids++] = atoi(PQgetvalue(res, r, 0));
	PQclear(res);
	return true;
}

/*
 * cap_priority_adapt
 *		--priority auto: yield (nice 19) once lag, the stream's lag in
 *		seconds, has stayed at most half of --yield-lag for YIELD_HOLD_S,
 *		and take a full share (nice 0) as soon as it exceeds --yield-lag
 *		(see the header).  conn is the stream's session, idle (between
 *		flushes).  A failure is logged and tried again YIELD_RETRY_S later;
 *		the stream goes on.
 */
void
cap_priority_adapt(PGconn *conn, double lag, const BridgeOptions *opts, const char *ext_schema)
{
	double		now;
	char		err[512];
	int			nice;

	if (strcmp(opts->priority, "auto") != 0 || (!autop.process && autop.npids == 0))
		return;
	now = bridge_now();
	if (now < autop.next_try)
		return;
	if (autop.yielding)
	{
		if (lag <= opts->yield_lag_s)
			return;
		nice = 0;
	}
	else
	{
		if (lag > opts->yield_lag_s / 2.0)
		{
			autop.calm_since = 0;
			return;
		}
		if (autop.calm_since == 0)
			autop.calm_since = now;
		if (now - autop.calm_since < YIELD_HOLD_S)
			return;
		nice = 19;
	}
	if (!move_all(conn, ext_schema, nice, err, sizeof(err)))
	{
		if (strstr(err, "(SQLSTATE 42883)") != NULL)
		{
			/*
			 * The library is 0.9, the extension in the database older: its
			 * sessions stay in SCHED_IDLE at a full share (as 'normal', but
			 * preempted by every task that wakes), for the rest of the run.
			 */
			cap_log("--priority auto: %s; the stream's sessions keep a full share (ALTER EXTENSION cql_fdw UPDATE gives cql_bridge_autogroup_nice)",
					err);
			autop.npids = 0;
		}
		else
		{
			cap_log("--priority auto: %s; trying again in %.0f s", err, YIELD_RETRY_S);
			autop.next_try = now + YIELD_RETRY_S;
		}
		return;
	}
	autop.yielding = nice > 0;
	autop.calm_since = 0;
	if (autop.yielding)
		cap_log("--priority auto: yielding to the application (lag %.2f s; %d session%s%s at autogroup nice 19)",
				lag, autop.npids, autop.npids == 1 ? "" : "s", autop.process ? " and this process" : "");
	else
		cap_log("--priority auto: a full share again (lag %.2f s over --yield-lag %d s; %d session%s%s at autogroup nice 0)",
				lag, opts->yield_lag_s, autop.npids, autop.npids == 1 ? "" : "s",
				autop.process ? " and this process" : "");
}

/*
 * cap_priority_session
 *		The backend of conn (a walsender when replication is true) at
 *		opts->priority, and no parallel workers in a normal session.  The
 *		statements are constants sent with PQexec: a replication connection
 *		accepts only the simple query protocol.  True when done or not
 *		asked; false with err set on failure (the caller decides: fatal at
 *		start, a retry after a reconnect).
 */
bool
cap_priority_session(PGconn *conn, bool replication, const BridgeOptions *opts,
					 const char *ext_schema, char *err, size_t errlen)
{
	char	   *sql;
	PGresult   *res;
	bool		ok;

	if (strcmp(opts->priority, "normal") == 0)
		return true;
	if (strcmp(opts->priority, "auto") == 0)
		return auto_session(conn, replication, ext_schema, err, errlen);
	sql = bridge_printf("SELECT %s.cql_bridge_cpu_priority('%s')%s", ext_schema, opts->priority,
						replication ? "" : "; SET max_parallel_workers_per_gather = 0");
	res = PQexec(conn, sql);
	free(sql);
	ok = cap_result_ok(conn, res, err, errlen);
	if (ok)
	{
		PQclear(res);
		return true;
	}
	{
		char		msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "could not lower the CPU priority of the stream's %s: %s",
				 replication ? "walsender" : "backend", msg);
	}
	return false;
}

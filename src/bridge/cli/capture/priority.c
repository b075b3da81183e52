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
 * 'normal' is the default: with the walsender's messages read in pauses
 * (replication.c), 'background' gained 4-12% on the application's p99 in
 * issue 42's benchmark (bench/README.md, "Follow-up 3"), not enough to
 * lower a migration's share of a saturated server without being asked.
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
#ifdef __linux__
	/*
	 * A kernel without autogroups has no such file: nothing to do.  Linux
	 * takes one change of an autogroup's nice value per 100 ms from an
	 * unprivileged process (EAGAIN): tried again for up to 3 s.
	 */
	for (int attempt = 0; getsid(0) == getpid() && attempt < 30; attempt++)
	{
		int			fd = open("/proc/self/autogroup", O_WRONLY);
		char		buf[16];
		int			len = snprintf(buf, sizeof(buf), "%d", nice);
		bool		done;
		int			save;

		if (fd < 0)
			break;
		done = write(fd, buf, len) == len;
		save = errno;
		close(fd);
		if (done)
			break;
		if (save != EAGAIN || attempt == 29)
		{
			snprintf(err, errlen, "could not lower the CPU priority of the stream's autogroup: %s",
					 strerror(save));
			return false;
		}
		usleep(100000);
	}
#endif
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

/*
 * cap_priority_process
 *		This process at opts->priority: 'background' a nice value of 10 and
 *		a long slice, 'idle' SCHED_IDLE and a nice value of 19 (no privilege
 *		needed to lower one's own); fatal when the system refuses.
 */
void
cap_priority_process(const BridgeOptions *opts)
{
	char		err[256] = "";
	bool		ok = true;

	if (strcmp(opts->priority, "background") == 0)
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

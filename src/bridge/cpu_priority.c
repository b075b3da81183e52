/*-------------------------------------------------------------------------
 *
 * cpu_priority.c
 *	  cql_bridge_cpu_priority(text): lowers the CPU priority of the calling
 *	  backend (or walsender) for "cqlbridge stream --priority";
 *	  cql_bridge_autogroup_nice(int, int): moves it, or the stream's
 *	  other sessions, between yielding and a full share (--priority auto).
 *
 * An online migration runs beside the application it migrates.  Its work
 * in PostgreSQL (the statements of each flush in its backend, the decoding
 * in its walsender) comes in bursts, and on a busy server those bursts take
 * the CPU from the application's backends just when they wake: their
 * slowest transactions get slower.  What keeps a burst from delaying them
 * depends on how Linux shares the CPU:
 *
 * - Every backend is the leader of a session of its own (PostgreSQL calls
 *   setsid() in each child), and with kernel.sched_autogroup_enabled = 1,
 *   the default of most distributions, each session is an autogroup: the
 *   scheduler first shares the CPU between the groups, then inside each.
 *   A class or nice value of the task alone then ranks it against nothing:
 *   it is alone in its group.  The group's own nice value
 *   (/proc/self/autogroup) is what ranks it against the application's
 *   backends.
 * - EEVDF (Linux 6.6 and later) lets the running task finish a protected
 *   part of its time slice before a woken task of the same weight runs,
 *   and a woken task with a shorter slice than the running one preempts it
 *   (Linux 6.12 and later, where a task may ask for its own slice).  A long
 *   slice (100 ms) for the migration's backend makes every woken
 *   application backend, with the default slice (0.75-3 ms), preempt it.
 *
 * The levels:
 * - 'background': the backend's autogroup at nice 10
 *   where it leads its own session and autogroups are on, else the task at
 *   nice 10; and a 100 ms slice where the kernel takes one (older kernels
 *   ignore it).  The backend keeps the normal class and a share of the CPU
 *   when the server is saturated (about 10% against one busy session), so
 *   it cannot fall behind for good.
 * - 'idle': SCHED_IDLE (a task of that class runs only when no other task
 *   of its group wants the CPU) and the autogroup at nice 19, so that the
 *   class means something against the other sessions too.  On a saturated
 *   server the stream may make almost no progress: WAL accumulates.
 * - 'auto' (the stream's default, cql_fdw 0.9): where the session leads
 *   an autogroup that counts, SCHED_IDLE with the autogroup's nice value
 *   left as it is; elsewhere nothing (SCHED_IDLE in a shared group would
 *   leave the backend no share on a saturated server).  The stream then
 *   moves the autogroups with cql_bridge_autogroup_nice(): nice 19 while it
 *   keeps up (the session runs like 'idle': any woken task of the
 *   application preempts it at once, and its group weighs little), nice 0
 *   while it lags (a full share again).  Unlike a task's own nice value or
 *   its class, an autogroup's nice value may be raised again without
 *   privilege (down to 0), which is what makes the level reversible.
 * - 'normal': changes nothing; an error when the session was lowered.
 * bench/README.md has the measurements.
 *
 * A process may always lower its own priority, so the system calls need no
 * privilege.  The function still asks for the REPLICATION attribute (or a
 * superuser): a backend at low priority that holds a lock is a backend the
 * others may wait for while the CPU is busy (priority inversion), which is
 * a choice for the roles that run change streams, not for every role.  The
 * priority lasts for the rest of the backend's life: an unprivileged
 * process cannot lower its nice value again (RLIMIT_NICE) nor leave
 * SCHED_IDLE, so 'normal' is accepted only when the session is normal, and
 * 'background' in an idle session is refused.  Parallel workers are
 * separate processes started by the postmaster and keep the normal
 * priority; cqlbridge turns them off in such a session.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/cpu_priority.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(cql_bridge_cpu_priority);
PG_FUNCTION_INFO_V1(cql_bridge_autogroup_nice);

/* the nice values of the two lowered levels */
#define BACKGROUND_NICE		10
#define IDLE_NICE			19
/* the time slice 'background' asks for, in ns (the kernel's maximum) */
#define BACKGROUND_SLICE_NS	UINT64CONST(100000000)

/* Linux's struct sched_attr, first version (48 bytes); glibc lacks it */
typedef struct CqlSchedAttr
{
	uint32		size;
	uint32		sched_policy;
	uint64		sched_flags;
	int32		sched_nice;
	uint32		sched_priority;
	uint64		sched_runtime;
	uint64		sched_deadline;
	uint64		sched_period;
} CqlSchedAttr;

#ifdef __linux__
/*
 * read_small_file
 *		The start of a small file (a /proc entry) into buf, NUL-terminated;
 *		false when it cannot be read or is empty.
 */
static bool
read_small_file(const char *path, char *buf, size_t size)
{
	int			fd = open(path, O_RDONLY);
	ssize_t		n;

	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}
#endif

/*
 * autogroup_nice_of
 *		The nice value of process pid's autogroup, or -100 when it has no
 *		autogroup of its own that counts: autogroups off or missing, or a
 *		session the process does not lead (its nice value would be the
 *		whole session's).
 */
static int
autogroup_nice_of(pid_t pid)
{
#ifdef __linux__
	char		path[64];
	char		buf[128];
	char	   *p;

	snprintf(path, sizeof(path), "/proc/%d/autogroup", (int) pid);
	if (getsid(pid) != pid ||
		!read_small_file("/proc/sys/kernel/sched_autogroup_enabled", buf, sizeof(buf)) ||
		buf[0] != '1' ||
		!read_small_file(path, buf, sizeof(buf)))
		return -100;
	/* "/autogroup-123 nice 0" */
	p = strstr(buf, " nice ");
	return p ? atoi(p + 6) : -100;
#else
	return -100;
#endif
}

/* autogroup_nice_of this process */
static int
autogroup_nice(void)
{
	return autogroup_nice_of(getpid());
}

/*
 * set_autogroup_nice_of
 *		Process pid's autogroup (see autogroup_nice_of) at nice value nice;
 *		false, errno set, when the kernel refused.  Linux takes one such
 *		change from an unprivileged process per 100 ms on the whole machine
 *		(EAGAIN otherwise: the stream moves its backend, its walsender and
 *		itself at about the same time), so a refusal for that reason waits
 *		and tries again, for up to 3 s.  Any nice value from 0 to 19 is
 *		allowed without privilege, in both directions.
 */
static bool
set_autogroup_nice_of(pid_t pid, int nice)
{
	char		path[64];
	char		buf[16];
	int			len = snprintf(buf, sizeof(buf), "%d", nice);

	snprintf(path, sizeof(path), "/proc/%d/autogroup", (int) pid);
	for (int attempt = 0; attempt < 30; attempt++)
	{
		int			fd = open(path, O_WRONLY);
		bool		ok;
		int			save;

		if (fd < 0)
			return false;
		ok = write(fd, buf, len) == len;
		save = errno;
		close(fd);
		if (ok)
			return true;
		if (save != EAGAIN)
		{
			errno = save;
			return false;
		}
		CHECK_FOR_INTERRUPTS();
		pg_usleep(100000L);
	}
	errno = EAGAIN;
	return false;
}

/* set_autogroup_nice_of this process */
static bool
set_autogroup_nice(int nice)
{
	return set_autogroup_nice_of(getpid(), nice);
}

/*
 * long_slice
 *		Ask for the long time slice of 'background' (a fair-class task only;
 *		the task's nice value is passed on unchanged).  Kernels before 6.12
 *		ignore the slice of a fair task, and a refusal (a seccomp filter, a
 *		platform without the call) is not an error: the slice only helps.
 */
static void
long_slice(void)
{
#if defined(__linux__) && defined(SYS_sched_setattr)
	CqlSchedAttr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_OTHER;
	errno = 0;
	attr.sched_nice = getpriority(PRIO_PROCESS, 0);
	if (errno != 0)
		return;
	attr.sched_runtime = BACKGROUND_SLICE_NS;
	(void) syscall(SYS_sched_setattr, 0, &attr, 0);
#endif
}

/*
 * current_class
 *		The calling process's priority as the function names it: "idle"
 *		(SCHED_IDLE), "background" (the normal class, but at a positive
 *		nice value where it counts: its autogroup's, or its own where it
 *		has no autogroup that counts), "normal", or "other" (a real-time or
 *		batch class set from outside).
 */
static const char *
current_class(void)
{
#ifdef SCHED_IDLE
	int			policy = sched_getscheduler(0);

	if (policy == SCHED_IDLE)
		return "idle";
	if (policy != SCHED_OTHER)
		return "other";
#endif
	{
		/* the nice value that ranks this process, as lower_nice sets it */
		int			ag = autogroup_nice();

		if (ag != -100 ? ag > 0 : getpriority(PRIO_PROCESS, 0) > 0)
			return "background";
	}
	return "normal";
}

/*
 * lower_nice
 *		The autogroup of this process at nice value nice where it has one
 *		that counts, else the process itself; an ERROR when the system
 *		refuses.
 */
static void
lower_nice(int nice)
{
	int			ag = autogroup_nice();

	if (ag != -100)
	{
		if (ag < nice && !set_autogroup_nice(nice))
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not lower the CPU priority of this session's autogroup: %m"),
					 errhint("Run the stream at normal priority (--priority normal).")));
		return;
	}
	if (getpriority(PRIO_PROCESS, 0) < nice &&
		setpriority(PRIO_PROCESS, 0, nice) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not lower the CPU priority of this session: %m"),
				 errhint("Run the stream at normal priority (--priority normal).")));
}

/*
 * check_priority_privilege
 *		An ERROR unless the current user is a superuser or has REPLICATION
 *		(see the header: a backend at low priority holding a lock is one
 *		the others may wait for).
 */
static void
check_priority_privilege(void)
{
	if (!superuser() && !has_rolreplication(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to change the CPU priority of this session"),
				 errdetail("Only superusers and roles with the REPLICATION attribute may lower a backend's CPU priority."),
				 errhint("Run the change stream as a role WITH REPLICATION, or leave its priority normal.")));
}

/*
 * set_idle_class
 *		This process into SCHED_IDLE; an ERROR when the system refuses or
 *		has no such class.
 */
static void
set_idle_class(void)
{
#ifdef SCHED_IDLE
	struct sched_param param;

	memset(&param, 0, sizeof(param));
	if (sched_setscheduler(0, SCHED_IDLE, &param) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not set the idle CPU priority: %m"),
				 errhint("The operating system refused SCHED_IDLE; run the stream at background priority.")));
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("idle CPU priority is not supported on this platform"),
			 errhint("It needs Linux's SCHED_IDLE; run the stream at background priority.")));
#endif
}

/*
 * check_own_session
 *		An ERROR unless pid is a backend or walsender of the current user's
 *		role (of any role for a superuser): the other processes whose
 *		priority cql_bridge_autogroup_nice() moves are the stream's other
 *		sessions.
 */
static void
check_own_session(pid_t pid)
{
	PGPROC	   *proc = BackendPidGetProc(pid);

	if (proc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("process %d is not a PostgreSQL session", (int) pid),
				 errhint("Pass the process ID of a backend or walsender (pg_stat_activity.pid), or NULL for this session.")));
	if (!superuser() && proc->roleId != GetUserId())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to change the CPU priority of process %d", (int) pid),
				 errdetail("The session runs for another role."),
				 errhint("Only the session's own role (or a superuser) may change its priority.")));
}

/*
 * cql_bridge_cpu_priority
 *		cql_bridge_cpu_priority(priority text) RETURNS text: 'background' or
 *		'idle' lowers this backend's priority for the rest of its life (see
 *		the header); 'auto' puts it into SCHED_IDLE where its autogroup
 *		counts, for cql_bridge_autogroup_nice() to move; 'normal' checks
 *		that it was not lowered.  Returns the priority now in effect
 *		('idle' after an 'auto' that did something, else 'normal').
 */
Datum
cql_bridge_cpu_priority(PG_FUNCTION_ARGS)
{
	char	   *want = text_to_cstring(PG_GETARG_TEXT_PP(0));
	const char *now;

	if (strcmp(want, "idle") != 0 && strcmp(want, "normal") != 0 &&
		strcmp(want, "background") != 0 && strcmp(want, "auto") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid CPU priority \"%s\"", want),
				 errhint("Use 'auto' (yield while the stream keeps up), 'background' (yield to the other sessions), 'idle' (run only when the CPU is otherwise free) or 'normal'.")));

	check_priority_privilege();

	now = current_class();
	if (strcmp(want, "auto") == 0)
	{
		/*
		 * SCHED_IDLE only where the autogroup's nice value ranks the session
		 * (see the header); its nice value is the stream's to move.
		 */
		if (autogroup_nice() != -100 &&
			(strcmp(now, "normal") == 0 || strcmp(now, "background") == 0))
			set_idle_class();
		PG_RETURN_TEXT_P(cstring_to_text(current_class()));
	}
	if (strcmp(want, "normal") == 0 ||
		(strcmp(want, "background") == 0 && strcmp(now, "idle") == 0))
	{
		if (strcmp(now, "normal") != 0 && strcmp(now, "other") != 0 &&
			strcmp(now, want) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("this session already runs at %s CPU priority", now),
					 errdetail("An unprivileged process cannot raise its priority again."),
					 errhint("Open a new session for work at %s priority.", want)));
		PG_RETURN_TEXT_P(cstring_to_text(now));
	}

	if (strcmp(want, "background") == 0)
	{
		lower_nice(BACKGROUND_NICE);
		long_slice();
		PG_RETURN_TEXT_P(cstring_to_text(current_class()));
	}

	lower_nice(IDLE_NICE);
	set_idle_class();
	PG_RETURN_TEXT_P(cstring_to_text(current_class()));
}

/*
 * cql_bridge_autogroup_nice
 *		cql_bridge_autogroup_nice(nice integer, pid integer DEFAULT NULL)
 *		RETURNS integer: the autogroup of this backend, or of the session
 *		(backend or walsender) with that process ID (one of the calling
 *		role's, or any for a superuser), at nice value nice (0 to 19), for
 *		"cqlbridge stream --priority auto" (see the header).  Returns the
 *		nice value now in effect, or NULL when the process has no autogroup
 *		that counts (nothing is done).  Raising the value again needs no
 *		privilege, so the stream moves between yielding and a full share as
 *		its lag asks.
 */
Datum
cql_bridge_autogroup_nice(PG_FUNCTION_ARGS)
{
	int32		nice;
	pid_t		pid = MyProcPid;
	int			now;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	nice = PG_GETARG_INT32(0);
	if (nice < 0 || nice > IDLE_NICE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("autogroup nice value %d is out of range", nice),
				 errhint("Use a value from 0 (a full share) to 19 (the least).")));
	check_priority_privilege();
	if (PG_NARGS() > 1 && !PG_ARGISNULL(1) && PG_GETARG_INT32(1) != MyProcPid)
	{
		pid = PG_GETARG_INT32(1);
		check_own_session(pid);
	}
	if (autogroup_nice_of(pid) == -100)
		PG_RETURN_NULL();
	if (!set_autogroup_nice_of(pid, nice))
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not set the autogroup nice value of process %d: %m", (int) pid),
				 errhint("Run the stream with --priority normal.")));
	now = autogroup_nice_of(pid);
	if (now == -100)
		PG_RETURN_NULL();
	PG_RETURN_INT32(now);
}

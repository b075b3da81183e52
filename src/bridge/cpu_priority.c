/*-------------------------------------------------------------------------
 *
 * cpu_priority.c
 *	  cql_bridge_cpu_priority(text): lowers the CPU priority of the calling
 *	  backend (or walsender) for "cqlbridge stream --priority".
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
 * - 'background' (the stream's default): the backend's autogroup at nice 10
 *   where it leads its own session and autogroups are on, else the task at
 *   nice 10; and a 100 ms slice where the kernel takes one (older kernels
 *   ignore it).  The backend keeps the normal class and a share of the CPU
 *   when the server is saturated (about 10% against one busy session), so
 *   it cannot fall behind for good.
 * - 'idle': SCHED_IDLE (a task of that class runs only when no other task
 *   of its group wants the CPU) and the autogroup at nice 19, so that the
 *   class means something against the other sessions too.  On a saturated
 *   server the stream may make almost no progress: WAL accumulates.
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
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(cql_bridge_cpu_priority);

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
 * autogroup_nice
 *		The nice value of this process's autogroup, or -100 when it has no
 *		autogroup of its own that counts: autogroups off or missing, or a
 *		session this process does not lead (its nice value would be the
 *		whole session's).
 */
static int
autogroup_nice(void)
{
#ifdef __linux__
	char		buf[128];
	char	   *p;

	if (getsid(0) != getpid() ||
		!read_small_file("/proc/sys/kernel/sched_autogroup_enabled", buf, sizeof(buf)) ||
		buf[0] != '1' ||
		!read_small_file("/proc/self/autogroup", buf, sizeof(buf)))
		return -100;
	/* "/autogroup-123 nice 0" */
	p = strstr(buf, " nice ");
	return p ? atoi(p + 6) : -100;
#else
	return -100;
#endif
}

/*
 * set_autogroup_nice
 *		This process's autogroup (see autogroup_nice) at nice value nice;
 *		false, errno set, when the kernel refused.  Linux takes one such
 *		change from an unprivileged process per 100 ms on the whole machine
 *		(EAGAIN otherwise: the stream lowers its backend and its walsender
 *		at about the same time), so a refusal for that reason waits and
 *		tries again, for up to 3 s.
 */
static bool
set_autogroup_nice(int nice)
{
	char		buf[16];
	int			len = snprintf(buf, sizeof(buf), "%d", nice);

	for (int attempt = 0; attempt < 30; attempt++)
	{
		int			fd = open("/proc/self/autogroup", O_WRONLY);
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
 * cql_bridge_cpu_priority
 *		cql_bridge_cpu_priority(priority text) RETURNS text: 'background' or
 *		'idle' lowers this backend's priority for the rest of its life (see
 *		the header); 'normal' checks that it was not lowered.  Returns the
 *		priority now in effect.
 */
Datum
cql_bridge_cpu_priority(PG_FUNCTION_ARGS)
{
	char	   *want = text_to_cstring(PG_GETARG_TEXT_PP(0));
	const char *now;

	if (strcmp(want, "idle") != 0 && strcmp(want, "normal") != 0 &&
		strcmp(want, "background") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid CPU priority \"%s\"", want),
				 errhint("Use 'background' (yield to the other sessions), 'idle' (run only when the CPU is otherwise free) or 'normal'.")));

	if (!superuser() && !has_rolreplication(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to change the CPU priority of this session"),
				 errdetail("Only superusers and roles with the REPLICATION attribute may lower a backend's CPU priority."),
				 errhint("Run the change stream as a role WITH REPLICATION, or leave its priority normal.")));

	now = current_class();
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

#ifdef SCHED_IDLE
	{
		struct sched_param param;

		lower_nice(IDLE_NICE);
		memset(&param, 0, sizeof(param));
		if (sched_setscheduler(0, SCHED_IDLE, &param) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not set the idle CPU priority: %m"),
					 errhint("The operating system refused SCHED_IDLE; run the stream at background priority.")));
	}
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("idle CPU priority is not supported on this platform"),
			 errhint("It needs Linux's SCHED_IDLE; run the stream at background priority.")));
#endif

	PG_RETURN_TEXT_P(cstring_to_text(current_class()));
}

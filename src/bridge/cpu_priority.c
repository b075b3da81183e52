/*-------------------------------------------------------------------------
 *
 * cpu_priority.c
 *	  cql_bridge_cpu_priority(text): puts the calling backend (or walsender)
 *	  into Linux's SCHED_IDLE scheduling class, for "cqlbridge stream
 *	  --priority idle".
 *
 * An online migration runs beside the application it migrates.  Its work
 * in PostgreSQL (the stream's recompute queries in its backend, the
 * decoding in its walsender) comes in bursts, a flush every
 * --flush-interval (500 ms), and on a busy server those bursts take the
 * CPU from the application's backends just when they wake: their slowest
 * transactions get slower.  Nice values do not prevent that (a nice 19
 * task still finishes its time slice before a woken task runs); SCHED_IDLE
 * does: a task of that class runs only when no other task wants the CPU,
 * and any task that wakes preempts it at once.
 * bench/README.md has the measurements.
 *
 * A backend may always lower its own priority, so the system call needs no
 * privilege.  The function still asks for the REPLICATION attribute (or a
 * superuser): a backend at idle priority that holds a lock is a backend the
 * others may wait for while the CPU is busy (priority inversion), which is
 * a choice for the roles that run change streams, not for every role.  The
 * class lasts for the rest of the backend's life: an unprivileged process
 * cannot return to the normal class (RLIMIT_NICE), so 'normal' is accepted
 * only when it is already so.  Parallel workers are separate processes
 * started by the postmaster and keep the normal class; cqlbridge turns
 * them off in such a session.
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
#include <sched.h>
#include <string.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(cql_bridge_cpu_priority);

/*
 * current_class
 *		The calling process's scheduling class as the function names it:
 *		"idle", "normal", or "other" (a real-time or batch class set from
 *		outside).
 */
static const char *
current_class(void)
{
#ifdef SCHED_IDLE
	int			policy = sched_getscheduler(0);

	if (policy == SCHED_IDLE)
		return "idle";
	if (policy == SCHED_OTHER)
		return "normal";
	return "other";
#else
	return "normal";
#endif
}

/*
 * cql_bridge_cpu_priority
 *		cql_bridge_cpu_priority(priority text) RETURNS text: 'idle' puts
 *		this backend into SCHED_IDLE for the rest of its life; 'normal'
 *		checks that it is not there.  Returns the class now in effect.
 */
Datum
cql_bridge_cpu_priority(PG_FUNCTION_ARGS)
{
	char	   *want = text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (strcmp(want, "idle") != 0 && strcmp(want, "normal") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid CPU priority \"%s\"", want),
				 errhint("Use 'idle' (run only when the CPU is otherwise free) or 'normal'.")));

	if (!superuser() && !has_rolreplication(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to change the CPU priority of this session"),
				 errdetail("Only superusers and roles with the REPLICATION attribute may lower a backend's CPU priority."),
				 errhint("Run the change stream as a role WITH REPLICATION, or leave its priority normal.")));

	if (strcmp(want, "normal") == 0)
	{
		if (strcmp(current_class(), "idle") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("this session already runs at idle CPU priority"),
					 errdetail("An unprivileged process cannot return to the normal scheduling class."),
					 errhint("Open a new session for work at normal priority.")));
		PG_RETURN_TEXT_P(cstring_to_text(current_class()));
	}

#ifdef SCHED_IDLE
	{
		struct sched_param param;

		memset(&param, 0, sizeof(param));
		if (sched_setscheduler(0, SCHED_IDLE, &param) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not set the idle CPU priority: %m"),
					 errhint("The operating system refused SCHED_IDLE; run the stream at normal priority.")));
	}
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("idle CPU priority is not supported on this platform"),
			 errhint("It needs Linux's SCHED_IDLE; run the stream at normal priority.")));
#endif

	PG_RETURN_TEXT_P(cstring_to_text(current_class()));
}

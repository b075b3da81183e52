/*-------------------------------------------------------------------------
 *
 * cancel.c
 *	  Ctrl-C handling: cancel the running statement, then exit cleanly.
 *
 * A long INSERT ... SELECT into a foreign table runs on the server; killing
 * only the client would leave it running there.  The SIGINT/SIGTERM
 * handler therefore sends a cancel request (PQcancel is async-signal-safe)
 * and sets a flag; the command notices the failed statement or the flag
 * (checked after every statement, so a signal that came between two
 * statements stops the command before the next one is sent) and exits
 * with status 2.  A second signal exits at once.  A worker process forked
 * by diff --jobs stops the same way, silently, also when its parent dies.
 *
 * layer: common
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common/cancel.c
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "common/common.h"

/* the connections whose statements a signal cancels (apply uses two) */
#define MAX_CANCEL 2
static PGcancel *volatile cancel_handles[MAX_CANCEL];
static volatile sig_atomic_t ncancel = 0;
static volatile sig_atomic_t interrupted = 0;
static const char *interrupt_hint = "stopped";
/* a forked worker (diff --jobs): its parent, which reports interruptions */
static pid_t parent_pid = 0;

/*
 * on_signal
 *		SIGINT/SIGTERM handler: the first signal sends a cancel request for
 *		the statement running on each installed connection and sets the flag
 *		the main loop checks; a second one exits at once.  Only async-
 *		signal-safe calls.
 */
static void
on_signal(int signo)
{
	char		errbuf[256];

	if (interrupted)
		_exit(BRIDGE_EXIT_ERROR);
	interrupted = signo;
	for (int i = 0; i < ncancel; i++)
		if (cancel_handles[i] != NULL)
			(void) PQcancel(cancel_handles[i], errbuf, sizeof(errbuf));
}

/*
 * bridge_install_cancel
 *		Make Ctrl-C cancel the statements of conn (at most MAX_CANCEL
 *		connections) and install the handler on the first call.  Called
 *		right after connecting.
 */
void
bridge_install_cancel(PGconn *conn)
{
	struct sigaction sa;

	if (ncancel >= MAX_CANCEL)
		bridge_fatal("internal error: more than %d connections to cancel", MAX_CANCEL);
	/* the handle is complete before the handler can see it counted */
	cancel_handles[ncancel] = PQgetCancel(conn);
	ncancel = ncancel + 1;
	if (ncancel > 1)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/*
 * bridge_set_interrupt_hint
 *		The message bridge_check_interrupt(NULL) prints after an
 *		interruption (e.g. how to resume).
 */
void
bridge_set_interrupt_hint(const char *hint)
{
	interrupt_hint = hint;
}

/*
 * bridge_cancel_forked
 *		In a child forked by a command that runs workers (diff --jobs),
 *		first thing after fork(): forget the parent's connections (a signal
 *		must not cancel their statements: the child installs its own), and
 *		exit silently on an interruption, which the parent reports once.
 *		The child stops when the parent dies (SIGKILL included): on Linux
 *		the kernel sends it SIGTERM; elsewhere bridge_interrupted() sees
 *		that its parent changed.
 */
void
bridge_cancel_forked(pid_t parent)
{
	ncancel = 0;
	parent_pid = parent;
#ifdef __linux__
	(void) prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
	/* the parent may have died before prctl */
	if (getppid() != parent)
		_exit(BRIDGE_EXIT_ERROR);
}

/*
 * bridge_interrupted
 *		Whether SIGINT or SIGTERM has arrived (or, in a forked worker
 *		outside Linux, its parent is gone: as SIGTERM).
 */
bool
bridge_interrupted(void)
{
#ifndef __linux__
	if (parent_pid != 0 && !interrupted && getppid() != parent_pid)
		interrupted = SIGTERM;
#endif
	return interrupted != 0;
}

/*
 * bridge_check_interrupt
 *		Exit (status 2) saying which signal interrupted the command and
 *		message (NULL: the hint set before), when one has arrived; return
 *		otherwise.  Called after each statement, so a cancelled statement is
 *		not reported as a failure.
 */
void
bridge_check_interrupt(const char *message)
{
	if (!bridge_interrupted())
		return;
	if (parent_pid != 0)
		exit(BRIDGE_EXIT_ERROR);	/* a forked worker: the parent says it */
	if (message == NULL)
		message = interrupt_hint;
	fflush(stdout);
	fprintf(stderr, "\ncqlbridge: interrupted (%s); %s\n",
			interrupted == SIGINT ? "SIGINT" : "SIGTERM", message);
	exit(BRIDGE_EXIT_ERROR);
}

/*
 * bridge_now
 *		Seconds of a monotonic clock, for rates and latencies.
 */
double
bridge_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*-------------------------------------------------------------------------
 *
 * scan_async.c
 *		Asynchronous execution of foreign scans under an Append: the
 *		members of a partitioned table whose partitions are Cassandra
 *		tables (or a UNION ALL of foreign tables) are read concurrently.
 *
 * The Append asks each member for a row (ForeignAsyncRequest).  A member
 * whose next page has arrived returns a row at once; one that would wait
 * for Cassandra goes pending, and the Append waits on one descriptor per
 * pending member (ForeignAsyncConfigureWait) and calls back the one that
 * became ready (ForeignAsyncNotify).  A member reads from several
 * connections (the replicas of its token ranges), and its requests have
 * deadlines, but the Append accepts one readable descriptor per member and
 * waits without a timeout: so each member waits through an epoll set of
 * its own holding its connections' sockets and a timer.  The timer fires
 * at the first request deadline, and at least every 100 ms: a request
 * that timed out is then retried like any other, and a query cancel is
 * processed within that time even while every member waits.
 *
 * Linux only (epoll, timerfd); elsewhere no path is async capable.
 *
 * IDENTIFICATION
 *		src/fdw/scan_async.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/timerfd.h>
#endif

#include "executor/execAsync.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/latch.h"

#include "compat.h"
#include "planner.h"
#include "scan_int.h"

/* longest wait of a pending member before it looks again */
#define ASYNC_WAIT_MAX_MS		100

/* connections a member waits on at most (more are pumped when it wakes) */
#define ASYNC_MAX_CONNS			64

#ifdef __linux__

/*
 * async_close
 *		Close the member's epoll set and timer, if open.
 */
static void
async_close(CqlScanState *st)
{
	if (st->async_fd >= 0)
		close(st->async_fd);
	if (st->async_timer >= 0)
		close(st->async_timer);
	st->async_fd = -1;
	st->async_timer = -1;
	st->async_nsocks = 0;
}

/*
 * async_watch
 *		Make the set watch exactly these sockets for these events: sockets
 *		already in it are modified, new ones added, the others removed.  A
 *		socket closed meanwhile has left the set by itself (its number may
 *		be another socket's now: MOD then fails and it is added).  Returns
 *		false if a socket could not be watched.
 */
static bool
async_watch(CqlScanState *st, const int *fds, const uint32 *events, int n)
{
	bool		ok = true;
	int			kept = 0;

	for (int k = 0; k < st->async_nsocks; k++)
	{
		bool		still = false;

		for (int i = 0; i < n && !still; i++)
			still = fds[i] == st->async_socks[k];
		if (!still)
			(void) epoll_ctl(st->async_fd, EPOLL_CTL_DEL, st->async_socks[k], NULL);
	}
	for (int i = 0; i < n; i++)
	{
		struct epoll_event ev;
		bool		known = false;

		for (int k = 0; k < st->async_nsocks && !known; k++)
			known = st->async_socks[k] == fds[i];
		memset(&ev, 0, sizeof(ev));
		ev.events = events[i];
		ev.data.fd = fds[i];
		if (!(known && epoll_ctl(st->async_fd, EPOLL_CTL_MOD, fds[i], &ev) == 0) &&
			epoll_ctl(st->async_fd, EPOLL_CTL_ADD, fds[i], &ev) != 0 && errno != EEXIST)
		{
			ok = false;
			continue;
		}
		st->async_socks[kept++] = fds[i];
	}
	st->async_nsocks = kept;
	return ok;
}

/*
 * async_reset_callback
 *		Reset callback of batch_cxt: the descriptors go with the scan's
 *		memory - at a rescan, at the end of the query, and after an error.
 */
static void
async_reset_callback(void *arg)
{
	async_close((CqlScanState *) arg);
}

/*
 * async_open
 *		Create the member's epoll set with its timer in it, once per scan
 *		(the reset callback of batch_cxt closes them).
 */
static void
async_open(CqlScanState *st)
{
	struct epoll_event ev;

	if (st->async_fd >= 0)
		return;
	st->async_fd = epoll_create1(EPOLL_CLOEXEC);
	if (st->async_fd >= 0)
		st->async_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = st->async_timer;
	if (st->async_fd < 0 || st->async_timer < 0 ||
		epoll_ctl(st->async_fd, EPOLL_CTL_ADD, st->async_timer, &ev) != 0)
	{
		int			save = errno;

		async_close(st);
		errno = save;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not create the wait set of a foreign scan: %m"),
				 errhint("The process may have too many open files; raise the limit (ulimit -n) or disable option async_capable.")));
	}
	if (st->async_cb == NULL)
	{
		st->async_cb = MemoryContextAlloc(st->batch_cxt, sizeof(MemoryContextCallback));
		st->async_cb->func = async_reset_callback;
		st->async_cb->arg = st;
		MemoryContextRegisterResetCallback(st->batch_cxt, st->async_cb);
	}
	if (st->async_socks == NULL)
		st->async_socks = MemoryContextAlloc(GetMemoryChunkContext(st),
											 sizeof(int) * ASYNC_MAX_CONNS);
	st->async_nsocks = 0;
}

/*
 * produce
 *		Answer the Append's request: a row (or the end, an empty slot) when
 *		the member need not wait, else pending.  The row goes through the
 *		ForeignScan node itself, so local quals and the projection apply.
 */
static void
produce(AsyncRequest *areq)
{
	ForeignScanState *node = (ForeignScanState *) areq->requestee;
	cql_conn   *conns[ASYNC_MAX_CONNS];
	int			nconns;
	TupleTableSlot *slot;

	if (cqlfdw_scan_would_wait(node, conns, ASYNC_MAX_CONNS, &nconns))
	{
		ExecAsyncRequestPending(areq);
		return;
	}
	slot = areq->requestee->ExecProcNodeReal(areq->requestee);
	ExecAsyncRequestDone(areq, slot);
}

/*
 * cqlForeignAsyncRequest
 *		ForeignAsyncRequest callback: the next row if it is there.
 */
void
cqlForeignAsyncRequest(AsyncRequest *areq)
{
	produce(areq);
}

/*
 * cqlForeignAsyncConfigureWait
 *		ForeignAsyncConfigureWait callback: one descriptor for the Append to
 *		wait on - this member's epoll set, made to watch the sockets its
 *		next page may come from, and its timer, armed for the first request
 *		deadline or ASYNC_WAIT_MAX_MS.  The set and the timer live as long
 *		as the scan's batch memory.
 */
void
cqlForeignAsyncConfigureWait(AsyncRequest *areq)
{
	ForeignScanState *node = (ForeignScanState *) areq->requestee;
	CqlScanState *st = (CqlScanState *) node->fdw_state;
	AppendState *requestor = (AppendState *) areq->requestor;
	cql_conn   *conns[ASYNC_MAX_CONNS];
	int			nconns;
	int			timeout = ASYNC_WAIT_MAX_MS;
	int			fds[ASYNC_MAX_CONNS];
	uint32		events[ASYNC_MAX_CONNS];
	int			nfds = 0;
	struct itimerspec its;

	if (!cqlfdw_scan_would_wait(node, conns, ASYNC_MAX_CONNS, &nconns))
	{
		/* data came meanwhile: wake at once */
		nconns = 0;
		timeout = 0;
	}

	async_open(st);
	for (int i = 0; i < nconns; i++)
	{
		int			want = cql_conn_wait_events(conns[i]);
		int			fd = cql_conn_fd(conns[i]);
		bool		dup = false;

		if (want == 0)
		{
			timeout = 0;		/* bytes already buffered: wake at once */
			continue;
		}
		for (int k = 0; k < nfds && !dup; k++)
			dup = fds[k] == fd;
		if (dup)
			continue;
		fds[nfds] = fd;
		events[nfds++] = ((want & CQL_WAIT_READ) ? EPOLLIN : 0) |
			((want & CQL_WAIT_WRITE) ? EPOLLOUT : 0);
	}
	if (!async_watch(st, fds, events, nfds))
		timeout = 0;			/* let the member find out itself */
	timeout = cqlfdw_scan_wait_limit(st, timeout);

	/* re-arming also clears an expiry not yet read; 0 would disarm: 1 ns */
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = timeout / 1000;
	its.it_value.tv_nsec = (long) (timeout % 1000) * 1000000L + (timeout == 0 ? 1 : 0);
	(void) timerfd_settime(st->async_timer, 0, &its, NULL);

	AddWaitEventToSet(requestor->as_eventset, WL_SOCKET_READABLE, st->async_fd,
					  NULL, areq);
}

/*
 * cqlForeignAsyncNotify
 *		ForeignAsyncNotify callback: this member's set became readable (an
 *		answer, or the timer).  A pending cancel is processed, then the
 *		member produces a row or goes pending again.
 */
void
cqlForeignAsyncNotify(AsyncRequest *areq)
{
	ForeignScanState *node = (ForeignScanState *) areq->requestee;
	CqlScanState *st = (CqlScanState *) node->fdw_state;
	uint64		expirations;

	/* consume the timer's expiry, if it fired (EAGAIN otherwise) */
	if (st->async_timer >= 0 &&
		read(st->async_timer, &expirations, sizeof(expirations)) < 0)
		expirations = 0;
	CHECK_FOR_INTERRUPTS();
	produce(areq);
}

#else							/* !__linux__ */

void
cqlForeignAsyncRequest(AsyncRequest *areq)
{
	elog(ERROR, "asynchronous foreign scans are not supported on this platform");
}

void
cqlForeignAsyncConfigureWait(AsyncRequest *areq)
{
	elog(ERROR, "asynchronous foreign scans are not supported on this platform");
}

void
cqlForeignAsyncNotify(AsyncRequest *areq)
{
	elog(ERROR, "asynchronous foreign scans are not supported on this platform");
}

#endif							/* __linux__ */

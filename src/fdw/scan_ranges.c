/*-------------------------------------------------------------------------
 *
 * scan_ranges.c
 *		Token scans: the ring cut into ranges, several ranges read at once
 *		and their pages returned as they arrive, and the ranges handed out
 *		to the workers of a parallel query from dynamic shared memory.
 *
 * A whole-table read (a full scan, ALLOW FILTERING or an index scan without
 * partition key) is one task per token range (scan.c builds them).  Reading
 * one range at a time keeps one coordinator busy with one page at a time;
 * here up to scan_window ranges (server or table option) have a page in
 * flight, each routed to a replica of its range, and whichever page arrives
 * first is returned.  A token scan promises no order, so nothing is lost by
 * that.  Memory stays bounded: each range in flight holds at most the page
 * being received plus the page being returned.
 *
 * With cql_fdw.token_order_scan on (cqlbridge diff sets it) the pages are
 * returned in ring order instead: the window of ranges is still in flight,
 * but only the lowest range's pages are returned; each of the others takes
 * in its pages as they arrive and asks for the next at once, until it holds
 * CQLFDW_RANGE_AHEAD of them (scan_int.h), and waits for its turn; within
 * a range Cassandra returns partitions in token order.  So the rows come in
 * token order, Cassandra reads the whole window as an unordered scan would,
 * and memory stays bounded (scan_window ranges times a few pages); parallel
 * plans are off (a participant sees only some ranges).
 *
 * With a parallel plan, every participant (the leader and each worker)
 * claims the next unread range from a counter in shared memory, so each
 * range is read by exactly one participant and none is skipped, however the
 * workers are scheduled.
 *
 * IDENTIFICATION
 *		src/fdw/scan_ranges.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "foreign/foreign.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/shm_toc.h"
#include "utils/guc.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "planner.h"
#include "scan_int.h"

/* token ranges per host: several per node keep pages flowing from each */
#define TOKEN_RANGES_PER_HOST	8

/*
 * Ranges of a whole-table count (one count per range, summed): Cassandra
 * reads every row of a range before it answers, so the ranges are kept
 * small enough to be counted within the request timeout.
 */
#define COUNT_RANGES			64

/* longest single wait for answers: bounds the latency of a cancel */
#define RANGE_WAIT_MAX_MS		100

/* GUC cql_fdw.token_order_scan (defined in _PG_init) */
bool		cqlfdw_token_order_scan = false;

/* GUC cql_fdw.token_scan_after: '' or a token (defined in _PG_init) */
char	   *cqlfdw_token_scan_after_guc = NULL;

/* What the participants of a parallel token scan share */
typedef struct CqlParallelScan
{
	pg_atomic_uint32 next_range;	/* the next range to claim */
	int32		nranges;		/* how the ring is cut, for everyone */
} CqlParallelScan;

/* ---------------------------------------------------------------------
 * Token ranges of a whole-table read (scans and ANALYZE)
 * ---------------------------------------------------------------------
 */

/*
 * cqlfdw_token_range_count
 *		The number of token ranges a whole-table read is cut into:
 *		TOKEN_RANGES_PER_HOST per host the cluster knows (at least one
 *		host).
 */
int
cqlfdw_token_range_count(cql_cluster *cluster)
{
	return Max(1, cql_cluster_hosts(cluster, NULL, 0)) * TOKEN_RANGES_PER_HOST;
}

/*
 * cqlfdw_token_range
 *		Range r of nranges equal parts of (INT64_MIN, INT64_MAX]:
 *		token(pk) > low AND token(pk) <= high.  No key has the token
 *		INT64_MIN, so the ranges cover every row exactly once.
 */
void
cqlfdw_token_range(int r, int nranges, int64 *low, int64 *high)
{
	uint64		step = ((uint64) PG_INT64_MAX - (uint64) PG_INT64_MIN) / (uint64) nranges;

	*low = (int64) ((uint64) PG_INT64_MIN + step * (uint64) r);
	*high = (r == nranges - 1) ? PG_INT64_MAX
		: (int64) ((uint64) PG_INT64_MIN + step * (uint64) (r + 1));
}

/*
 * parse_token
 *		The token written in s (a decimal bigint) into *token; false if s
 *		is not one.
 */
static bool
parse_token(const char *s, int64 *token)
{
	char	   *end;

	errno = 0;
	*token = strtoi64(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

/*
 * cqlfdw_check_token_scan_after
 *		GUC check hook of cql_fdw.token_scan_after: empty (the whole ring)
 *		or a token, a bigint.
 */
bool
cqlfdw_check_token_scan_after(char **newval, void **extra, GucSource source)
{
	int64		token;

	if (*newval == NULL || (*newval)[0] == '\0' || parse_token(*newval, &token))
		return true;
	GUC_check_errdetail("A token is a bigint (from -9223372036854775808 to 9223372036854775807); empty means the whole ring.");
	GUC_check_errhint("Set it to the last token already read, or RESET it to read every token.");
	return false;
}

/*
 * cqlfdw_token_scan_after
 *		Is cql_fdw.token_scan_after set: then whole-table scans read only
 *		the tokens after *after (cqlbridge diff resuming after the token
 *		ranges an interrupted run compared).
 */
bool
cqlfdw_token_scan_after(int64 *after)
{
	return cqlfdw_token_scan_after_guc != NULL &&
		cqlfdw_token_scan_after_guc[0] != '\0' &&
		parse_token(cqlfdw_token_scan_after_guc, after);
}

/*
 * cqlfdw_scan_range_count
 *		How many ranges this scan reads: what the parallel scan decided for
 *		all its participants, else enough to keep every host and the whole
 *		window busy.
 */
int
cqlfdw_scan_range_count(CqlScanState *st)
{
	int			n;

	if (st->pscan)
		return st->pscan->nranges;
	n = cqlfdw_token_range_count(st->remote.entry->cluster);
	/* a count per range (upper_rows.c) must finish within request_timeout */
	if (st->upper != NULL && st->upper->combine)
		n = Max(n, COUNT_RANGES);
	return Max(n, st->scan_window);
}

/* ---------------------------------------------------------------------
 * Ranges in flight
 * ---------------------------------------------------------------------
 */

/*
 * claim_range
 *		The next range this participant reads, or -1 when none is left:
 *		from the shared counter of a parallel scan, else the next in turn.
 */
static int
claim_range(CqlScanState *st)
{
	uint32		r;

	if (st->claims_done)
		return -1;
	if (st->pscan)
		r = pg_atomic_fetch_add_u32(&st->pscan->next_range, 1);
	else
		r = (uint32) st->next_submit++;
	if (r >= (uint32) st->ntasks)
	{
		st->claims_done = true;
		return -1;
	}
	return (int) r;
}

/*
 * fill_ranges
 *		Claim ranges and request their first page until 'window' ranges are
 *		in flight or none is left.  Runs in batch_cxt.
 */
static void
fill_ranges(CqlScanState *st)
{
	while (st->ninflight < st->window)
	{
		int			r = claim_range(st);

		if (r < 0)
			return;
		cqlfdw_scan_submit_page(st, &st->tasks[r], false);
		st->inflight[st->ninflight++] = r;
		st->partitions_read++;
	}
}

/*
 * token_order
 *		Are this scan's pages returned in ring order (cql_fdw.token_order_scan,
 *		and not a parallel scan)?
 */
static bool
token_order(const CqlScanState *st)
{
	return cqlfdw_token_order_scan && st->pscan == NULL;
}

/*
 * lowest_inflight
 *		The index in st->inflight of the lowest range in flight (the one
 *		whose rows come next in ring order); st->ninflight > 0.
 */
static int
lowest_inflight(const CqlScanState *st)
{
	int			lowest = 0;

	for (int i = 1; i < st->ninflight; i++)
		if (st->inflight[i] < st->inflight[lowest])
			lowest = i;
	return lowest;
}

/*
 * range_has_news
 *		Can looking at range inflight[i] do something without waiting?  In
 *		arrival order: its page is ready.  In ring order: the lowest range
 *		(index lowest) holds a page or its page is ready; another range has
 *		an answer to take in and room to hold it.
 */
static bool
range_has_news(const CqlScanState *st, int i, int lowest)
{
	const CqlScanTask *t = &st->tasks[st->inflight[i]];

	if (!token_order(st))
		return cqlfdw_scan_task_ready(t);
	if (i == lowest)
		return t->nahead > 0 || cqlfdw_scan_task_ready(t);
	return t->req != NULL && t->nahead < CQLFDW_RANGE_AHEAD &&
		cqlfdw_scan_task_ready(t);
}

/*
 * take_ahead
 *		Ring order: every range in flight but the lowest takes in the pages
 *		that have arrived, while it holds fewer than CQLFDW_RANGE_AHEAD, and
 *		(cqlfdw_scan_await_task_page) asks for its next page at once.  So
 *		Cassandra keeps reading the whole window while the lowest range is
 *		returned, instead of one page per waiting range.
 */
static void
take_ahead(CqlScanState *st, int lowest)
{
	for (int i = 0; i < st->ninflight; i++)
	{
		CqlScanTask *t = &st->tasks[st->inflight[i]];

		while (i != lowest && range_has_news(st, i, lowest))
		{
			int			slot;

			if (t->ahead == NULL)
				t->ahead = MemoryContextAlloc(st->batch_cxt,
											  sizeof(cql_result) * CQLFDW_RANGE_AHEAD);
			slot = (t->ahead_first + t->nahead) % CQLFDW_RANGE_AHEAD;
			cqlfdw_scan_await_task_page(st, t, &t->ahead[slot]);
			t->nahead++;
		}
	}
}

/*
 * pop_ahead
 *		The first page range t holds into *page.  It is checked again
 *		against the converters: they may have been rebuilt for a page that
 *		arrived after it (the table altered during the scan).
 */
static void
pop_ahead(CqlScanState *st, CqlScanTask *t, cql_result *page)
{
	*page = t->ahead[t->ahead_first];
	t->ahead_first = (t->ahead_first + 1) % CQLFDW_RANGE_AHEAD;
	t->nahead--;
	st->have_page = true;		/* freed by release_remote on an error */
	cqlfdw_check_rows(page, Max(st->nretrieved, 1), st->convs,
					  st->nretrieved, st->relname, st->remote.cql);
}

/*
 * cqlfdw_ranges_start
 *		Start a token scan: the first window of ranges requested.
 */
void
cqlfdw_ranges_start(CqlScanState *st)
{
	fill_ranges(st);
}

/*
 * wait_timeout
 *		How long to wait for answers before looking again: at most
 *		RANGE_WAIT_MAX_MS, at most until the first request deadline or
 *		until the speculative delay.
 */
static int
wait_timeout(CqlScanState *st)
{
	int			timeout = RANGE_WAIT_MAX_MS;

	if (st->remote.opts.speculative_delay_ms > 0)
		timeout = Min(timeout, st->remote.opts.speculative_delay_ms);
	return cqlfdw_scan_wait_limit(st, timeout);
}

/*
 * inflight_conns
 *		The distinct connections of the ranges in flight into conns (at
 *		most max); returns how many.
 */
static int
inflight_conns(CqlScanState *st, cql_conn **conns, int max)
{
	int			n = 0;

	for (int i = 0; i < st->ninflight; i++)
	{
		cql_conn   *c = st->tasks[st->inflight[i]].conn;
		int			j;

		for (j = 0; j < n && conns[j] != c; j++)
			;
		if (j == n && n < max)
			conns[n++] = c;
	}
	return n;
}

/*
 * wait_any
 *		Wait until some range in flight may have an answer, at most
 *		timeout_ms, and process a pending cancel.
 *
 * With one connection the library's pump waits (its wait hook watches the
 * latch).  With several - ranges on several replicas - each is pumped
 * without blocking, then one WaitEventSet waits on all their sockets and
 * the latch: an answer from any node wakes the scan.  The set is freed
 * before an interrupt is processed, so an error leaks nothing.
 */
static void
wait_any(CqlScanState *st, int timeout_ms)
{
	cql_conn   *conns[CQLFDW_MAX_SCAN_WINDOW];
	int			nconns = inflight_conns(st, conns, lengthof(conns));
	WaitEventSet *set;
	WaitEvent	ev[CQLFDW_MAX_SCAN_WINDOW + 1];
	bool		latch = false;
	bool		busy = false;
	int			n;

	if (nconns == 0)
		return;
	if (nconns == 1)
	{
		cqlfdw_scan_pump(conns[0], timeout_ms);
		return;
	}

	/* what is already there, without waiting */
	for (int j = 0; j < nconns; j++)
	{
		cql_error	err;

		cql_error_clear(&err);
		(void) cql_conn_pump(conns[j], 0, &err);	/* a failure shows in status */
		if (cql_conn_status(conns[j]) != CQL_OK || cql_conn_wait_events(conns[j]) == 0)
			busy = true;
	}
	for (int i = 0; i < st->ninflight && !busy; i++)
		busy = range_has_news(st, i, lowest_inflight(st));
	if (busy)
		return;

	set = cqlfdw_create_wait_event_set(nconns + 1);
	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	for (int j = 0; j < nconns; j++)
	{
		int			want = cql_conn_wait_events(conns[j]);
		uint32		events = 0;

		if (want & CQL_WAIT_READ)
			events |= WL_SOCKET_READABLE;
		if (want & CQL_WAIT_WRITE)
			events |= WL_SOCKET_WRITEABLE;
		AddWaitEventToSet(set, events, cql_conn_fd(conns[j]), NULL, NULL);
	}
	n = WaitEventSetWait(set, timeout_ms, ev, lengthof(ev), PG_WAIT_EXTENSION);
	for (int k = 0; k < n; k++)
		if (ev[k].events & WL_LATCH_SET)
			latch = true;
	FreeWaitEventSet(set);
	if (latch)
	{
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * cqlfdw_ranges_would_wait
 *		For asynchronous execution: claims ranges up to the window, and
 *		tells whether the next page would have to be waited for - then
 *		with the distinct connections of the ranges in flight in conns.
 */
bool
cqlfdw_ranges_would_wait(CqlScanState *st, cql_conn **conns, int max,
						 int *nconns)
{
	MemoryContext old = MemoryContextSwitchTo(st->batch_cxt);

	fill_ranges(st);
	MemoryContextSwitchTo(old);
	*nconns = 0;
	for (int i = 0; i < st->ninflight; i++)
		if (range_has_news(st, i, lowest_inflight(st)))
			return false;
	*nconns = inflight_conns(st, conns, max);
	return st->ninflight > 0;
}

/*
 * cqlfdw_ranges_next_page
 *		The next page of a token scan into st->page: of whichever range in
 *		flight answers first (round-robin among those ready, so that no
 *		range starves).  A range's next page is requested as soon as one
 *		arrives; a finished range makes room for the next claimed one.
 *		Returns false when every range (of this participant) is read.
 */
bool
cqlfdw_ranges_next_page(CqlScanState *st)
{
	TimestampTz idle_since = 0;

	for (;;)
	{
		MemoryContext old;
		int			pick = -1;
		CqlScanTask *t;

		old = MemoryContextSwitchTo(st->batch_cxt);
		fill_ranges(st);
		MemoryContextSwitchTo(old);
		if (st->ninflight == 0)
			return false;

		if (token_order(st))
		{
			/* ring order: only the lowest range in flight may answer */
			int			lowest = lowest_inflight(st);

			take_ahead(st, lowest);
			st->rr = lowest;
			if (range_has_news(st, lowest, lowest))
				pick = lowest;
		}
		else
			for (int k = 0; k < st->ninflight && pick < 0; k++)
			{
				int			i = (st->rr + k) % st->ninflight;

				if (cqlfdw_scan_task_ready(&st->tasks[st->inflight[i]]))
					pick = i;
			}

		/*
		 * Nothing for the speculative delay: the next range in turn is
		 * awaited, which asks another replica too.
		 */
		if (pick < 0 && st->remote.opts.speculative_delay_ms > 0)
		{
			if (idle_since == 0)
				idle_since = GetCurrentTimestamp();
			else if (TimestampDifferenceExceeds(idle_since, GetCurrentTimestamp(),
												st->remote.opts.speculative_delay_ms))
				pick = st->rr % st->ninflight;
		}
		if (pick < 0)
		{
			wait_any(st, wait_timeout(st));
			continue;
		}

		t = &st->tasks[st->inflight[pick]];
		if (t->nahead > 0)
			pop_ahead(st, t, &st->page);
		else
			cqlfdw_scan_await_task_page(st, t, &st->page);
		if (t->finished && t->nahead == 0)
			st->inflight[pick] = st->inflight[--st->ninflight];
		else
			pick++;
		st->rr = st->ninflight > 0 ? pick % st->ninflight : 0;
		st->have_page = true;
		st->row = 0;
		return true;
	}
}

/* ---------------------------------------------------------------------
 * Parallel query
 * ---------------------------------------------------------------------
 */

/*
 * cqlIsForeignScanParallelSafe
 *		IsForeignScanParallelSafe callback: a scan may run in a parallel
 *		worker - each backend opens its own connections with the same user
 *		mapping, and reads change nothing.
 *
 * Except a member of an Append (a partition, a UNION ALL branch) that may
 * run asynchronously (option async_capable): PostgreSQL runs the members
 * of an Append concurrently only when the Append is not parallel safe, and
 * for foreign tables that concurrency is what counts.  With async_capable
 * 'false' such a member is parallel safe again (a Parallel Append).
 */
bool
cqlIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *rel,
							 RangeTblEntry *rte)
{
	if (cqlfdw_token_order_scan)
		return false;
	if (rel->reloptkind == RELOPT_OTHER_MEMBER_REL && cqlfdw_async_supported())
	{
		CqlFdwOptions o;

		cqlfdw_get_options(GetForeignServerIdByRelId(rte->relid), InvalidOid,
						   rte->relid, &o);
		if (o.async_capable)
			return false;
	}
	return true;
}

/*
 * cqlEstimateDSMForeignScan
 *		EstimateDSMForeignScan callback: the shared range counter.
 */
Size
cqlEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt)
{
	return sizeof(CqlParallelScan);
}

/*
 * cqlInitializeDSMForeignScan
 *		InitializeDSMForeignScan callback (leader): cut the ring into enough
 *		ranges that every participant keeps its window busy and the ranges
 *		left at the end are small, and start the counter.
 */
void
cqlInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt,
							void *coordinate)
{
	CqlParallelScan *ps = (CqlParallelScan *) coordinate;
	CqlScanState *st = (CqlScanState *) node->fdw_state;
	int			window;

	pg_atomic_init_u32(&ps->next_range, 0);
	ps->nranges = 1;
	if (st == NULL)
		return;
	window = st->scan_window;
	ps->nranges = Max(cqlfdw_token_range_count(st->remote.entry->cluster),
					  window * (pcxt->nworkers + 1) * 2);
	st->pscan = ps;
}

/*
 * cqlReInitializeDSMForeignScan
 *		ReInitializeDSMForeignScan callback: a rescan reads every range
 *		again.
 */
void
cqlReInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt,
							  void *coordinate)
{
	CqlParallelScan *ps = (CqlParallelScan *) coordinate;

	pg_atomic_write_u32(&ps->next_range, 0);
}

/*
 * cqlInitializeWorkerForeignScan
 *		InitializeWorkerForeignScan callback: a worker claims its ranges
 *		from the leader's counter.
 */
void
cqlInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc,
							   void *coordinate)
{
	CqlScanState *st = (CqlScanState *) node->fdw_state;

	if (st)
		st->pscan = (CqlParallelScan *) coordinate;
}

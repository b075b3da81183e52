/*-------------------------------------------------------------------------
 *
 * scan_task.c
 *		One task of a foreign scan: its page requested from a replica (and
 *		speculatively from a second one), awaited, retried on the next host
 *		after a failure, and the page after it prefetched.
 *
 * The lowest file of the scan: scan.c (tasks in order), scan_ranges.c
 * (token ranges in flight), scan_merge.c (ordered buckets merged) and
 * scan_async.c call it; it calls none of them, only the statement handle
 * (remote.c), the conversions and, for an aggregate scan, the converters
 * of upper_rows.c.
 *
 * IDENTIFICATION
 *		src/fdw/scan_task.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/rel.h"
#include "utils/timestamp.h"

#include "connection.h"
#include "convert.h"
#include "cql_cluster.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "remote.h"
#include "scan_int.h"

/*
 * choose_connection
 *		A replica for the task (of its token range, or of its partition),
 *		and the statement prepared there.
 */
static void
choose_connection(CqlScanState *st, CqlScanTask *t)
{
	const CqlRetry *rt = t->retry.tries > 0 ? &t->retry : NULL;

	if (st->access == CQLACC_TOKEN_SCAN)
		t->conn = cqlfdw_remote_conn_for_token(&st->remote, rt, &t->token_high);
	else
		t->conn = cqlfdw_remote_conn_for_key(&st->remote, rt, t->routing_key,
											 t->routing_len);
	t->prep = cqlfdw_remote_prepare(&st->remote, t->conn);
}

/*
 * task_params
 *		The parameters of the request of task t's next page: the scan's
 *		consistency and page size, the task's values and paging state.
 */
static void
task_params(const CqlScanState *st, const CqlScanTask *t, cql_query_params *params)
{
	cql_query_params_init(params);
	params->consistency = st->consistency;
	params->page_size = t->page_size > 0 ? t->page_size : st->fetch_size;
	params->paging_state = t->paging_state;
	params->paging_state_len = t->paging_len;
	params->nvalues = st->nbinds;
	params->values = t->values;
}

/*
 * cqlfdw_scan_submit_page
 *		Request the task's next page (from its paging state, if any), or,
 *		with 'retrying', the same page again after a failure.
 *
 * A task without a connection, or whose connection failed, first gets a
 * replica and the statement prepared there (choose_connection): a page
 * retried on the next host continues from the paging state the last
 * answer gave, so no row is read twice or skipped.  While every stream of
 * the connection is in use the send waits; a failure is raised.
 */
void
cqlfdw_scan_submit_page(CqlScanState *st, CqlScanTask *t, bool retrying)
{
	cql_query_params params;

	if (!retrying)
		cqlfdw_retry_start(&t->retry);
	if (t->conn == NULL || cql_conn_status(t->conn) != CQL_OK)
		choose_connection(st, t);

	task_params(st, t, &params);
	t->req = cqlfdw_remote_send_execute(&st->remote, t->conn, t->prep, &params);
	t->submitted = true;
}

/*
 * cqlfdw_scan_task_ready
 *		Can awaiting this task's page return without waiting: nothing in
 *		flight, its answer came, its connection failed, or its request
 *		timed out (the await then reports the failure at once, and the
 *		retry policy decides)?
 */
bool
cqlfdw_scan_task_ready(const CqlScanTask *t)
{
	return t->req == NULL || cql_request_done(t->req) ||
		cql_conn_status(t->conn) != CQL_OK ||
		cql_request_remaining_ms(t->req) == 0;
}

/*
 * cqlfdw_scan_wait_limit
 *		max_ms, or less when a request in flight reaches its deadline
 *		sooner: how long a wait for answers may last before the scan
 *		looks again.
 */
int
cqlfdw_scan_wait_limit(const CqlScanState *st, int max_ms)
{
	int			timeout = max_ms;

	for (int i = 0; i < st->ntasks; i++)
	{
		int			left;

		if (st->tasks[i].req == NULL)
			continue;
		left = cql_request_remaining_ms(st->tasks[i].req);
		if (left >= 0)
			timeout = Min(timeout, left);
	}
	return timeout;
}

/*
 * cqlfdw_scan_pump
 *		One bounded I/O step on conn; a pending cancel is processed.
 */
void
cqlfdw_scan_pump(cql_conn *conn, int timeout_ms)
{
	cql_error	err;

	cql_error_clear(&err);
	if (cql_conn_pump(conn, timeout_ms, &err) == CQL_ERR_INTERRUPTED)
		cqlfdw_check_interrupts();
}

/*
 * await_speculative
 *		Speculative execution of the task's page (option speculative_delay):
 *		when no answer came within the delay, the same page is requested
 *		from the next host of the plan too, and whichever answers first is
 *		used; the other request is orphaned (its late answer is dropped).
 *		Reads are idempotent, so asking twice is harmless; it bounds the
 *		latency of a page whose coordinator is paused or overloaded, where
 *		waiting for the request timeout would not.  Leaves the winner in
 *		t->req / t->conn / t->prep for the caller to await.
 */
static void
await_speculative(CqlScanState *st, CqlScanTask *t)
{
	TimestampTz start = GetCurrentTimestamp();
	int			delay = st->remote.opts.speculative_delay_ms;
	CqlScanTask spec;
	CqlRetry	avoid;
	int			host;
	MemoryContext old;
	cql_query_params params;

	/* the first answer within the delay: nothing to do */
	while (!cql_request_done(t->req) && cql_conn_status(t->conn) == CQL_OK &&
		   !TimestampDifferenceExceeds(start, GetCurrentTimestamp(), delay))
	{
		long		secs;
		int			usecs;

		TimestampDifference(GetCurrentTimestamp(),
							TimestampTzPlusMilliseconds(start, delay), &secs, &usecs);
		cqlfdw_scan_pump(t->conn, (int) (secs * 1000 + usecs / 1000) + 1);
	}
	if (cql_request_done(t->req) || cql_conn_status(t->conn) != CQL_OK)
		return;

	/* the same page from another host: only if there is one */
	host = cql_cluster_host_of(st->remote.entry->cluster, t->conn);
	if (host < 0)
		return;
	cqlfdw_retry_start(&avoid);
	avoid.avoid[avoid.navoid++] = host;
	avoid.tries = 1;
	spec = *t;
	spec.retry = avoid;
	old = MemoryContextSwitchTo(st->batch_cxt);
	choose_connection(st, &spec);
	MemoryContextSwitchTo(old);
	if (spec.conn == t->conn)
		return;
	task_params(st, t, &params);
	spec.req = cqlfdw_remote_send_execute(&st->remote, spec.conn, spec.prep, &params);
	cqlfdw_stats.speculative++;

	/* both in flight: whichever completes first */
	while (!cql_request_done(t->req) && !cql_request_done(spec.req))
	{
		cqlfdw_scan_pump(t->conn, 0);
		cqlfdw_scan_pump(spec.conn, 5);
		if (cql_conn_status(t->conn) != CQL_OK && cql_conn_status(spec.conn) != CQL_OK)
			break;
	}
	if (cql_request_done(spec.req) && !cql_request_done(t->req))
	{
		/* the speculative request won: the original is orphaned */
		cql_request_free(t->req);
		t->req = spec.req;
		t->conn = spec.conn;
		t->prep = spec.prep;
		cqlfdw_stats.speculative_won++;
	}
	else
		cql_request_free(spec.req);
}

/*
 * cqlfdw_scan_setup_convs
 *		Make the columns of the result (as the prepared statement describes
 *		them) convertible to the foreign table's columns; redone when
 *		Cassandra reports changed result metadata.
 */
void
cqlfdw_scan_setup_convs(CqlScanState *st, cql_prepared *p)
{
	TupleDesc	tupdesc = RelationGetDescr(st->rel);

	if (p->ncols != Max(st->nretrieved, 1))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INCONSISTENT_DESCRIPTOR_INFORMATION),
				 errmsg("Cassandra table \"%s\".\"%s\" returned %d columns where foreign table \"%s\" expects %d",
						st->remote.table->keyspace, st->remote.table->table, p->ncols,
						st->relname, Max(st->nretrieved, 1)),
				 errhint("The Cassandra table has changed; recreate the foreign table with IMPORT FOREIGN SCHEMA.")));
	if (st->upper != NULL)
	{
		cqlfdw_upper_setup_convs(st, p);
		st->meta_changes = p->metadata_changes;
		return;
	}
	for (int i = 0; i < st->nretrieved; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, st->retrieved[i] - 1);

		cqlfdw_conv_init_column(&st->convs[i], p->cols[i].type, st->remote.table,
								st->retrieved[i], att->atttypid, att->atttypmod,
								st->relname, NameStr(att->attname));
	}
	st->meta_changes = p->metadata_changes;
}

/*
 * shrink_page
 *		After a page that failed with s/err: true when the failure was a
 *		replica meeting more tombstones than its tombstone_failure_threshold
 *		and the task's pages can still get smaller, which they then are
 *		(an eighth, down to one row), for the rest of the task.
 *
 * Cassandra counts the tombstones of one read command, and a page is one:
 * where deleted rows lie between the live ones (a partition whose rows
 * were deleted or moved away by the thousand), a page of fewer live rows
 * meets fewer of them.  The same page is asked again from its paging
 * state, so no row is read twice or skipped.  Tombstones that lie
 * together beyond the threshold fail even a page of one row: that error
 * is raised, with its hint (connection.c).  Reported once per scan, as a
 * WARNING: the scan goes on, more slowly, and the table needs care.
 */
static bool
shrink_page(CqlScanState *st, CqlScanTask *t, cql_status s, const cql_error *err)
{
	int			size = t->page_size > 0 ? t->page_size : st->fetch_size;

	if (s != CQL_ERR_SERVER || !cql_error_is_tombstone_failure(err) || size <= 1)
		return false;
	t->page_size = Max(size / 8, 1);
	if (!st->tombstone_warned)
	{
		st->tombstone_warned = true;
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("a page of foreign table \"%s\" met more tombstones than Cassandra reads at once; reading it in smaller pages",
						st->relname),
				 errdetail("Cassandra table \"%s\".\"%s\", node %s: %s",
						   st->remote.table->keyspace, st->remote.table->table,
						   err->host[0] ? err->host : "?", err->message),
				 errhint("%s", CQLFDW_TOMBSTONE_ADVICE)));
	}
	return true;
}

/*
 * cqlfdw_scan_await_task_page
 *		The next page of task t into *page: its request awaited (retried,
 *		maybe on another host, after a failure), and the page after it
 *		requested at once so that it arrives while these rows are used.
 *		The task is marked finished with its last page.
 */
void
cqlfdw_scan_await_task_page(CqlScanState *st, CqlScanTask *t, cql_result *page)
{
	for (;;)
	{
		cql_error	err;
		cql_status	s;
		MemoryContext old;

		if (t->req == NULL)
		{
			old = MemoryContextSwitchTo(st->batch_cxt);
			cqlfdw_scan_submit_page(st, t, false);
			MemoryContextSwitchTo(old);
		}

		if (st->remote.opts.speculative_delay_ms > 0)
			await_speculative(st, t);
		cql_error_clear(&err);
		memset(page, 0, sizeof(*page));
		s = cqlfdw_await_expecting(t->conn, t->req, page, &err, st->expected_warning);
		cql_request_free(t->req);
		t->req = NULL;
		if (s != CQL_OK)
		{
			/*
			 * A read is idempotent: the same page again, in smaller pages
			 * after too many tombstones, else as the retry policy says
			 * (maybe elsewhere).
			 */
			if (!shrink_page(st, t, s, &err))
			{
				cql_retry_decision d = cqlfdw_remote_retry(&st->remote, &t->retry,
														   t->conn, s, &err, true);

				if (d == CQL_RETRY_NO)
					cqlfdw_remote_fail(&st->remote, t->conn, s, &err);
				if (d == CQL_RETRY_NEXT_HOST)
					t->conn = NULL;
			}
			old = MemoryContextSwitchTo(st->batch_cxt);
			cqlfdw_scan_submit_page(st, t, true);
			MemoryContextSwitchTo(old);
			continue;
		}
		if (page->kind == CQL_RESULT_ROWS &&
			t->prep->metadata_changes != st->meta_changes)
			cqlfdw_scan_setup_convs(st, t->prep);
		/* the SELECT list has one column even when none is needed */
		cqlfdw_check_rows(page, Max(st->nretrieved, 1), st->convs,
						  st->nretrieved, st->relname, st->remote.cql);

		if (cql_result_has_more_pages(page))
		{
			old = MemoryContextSwitchTo(st->batch_cxt);
			t->paging_state = palloc(page->meta.paging_state_len);
			memcpy(t->paging_state, page->meta.paging_state,
				   page->meta.paging_state_len);
			t->paging_len = page->meta.paging_state_len;
			cqlfdw_scan_submit_page(st, t, false);	/* prefetch while these rows are used */
			MemoryContextSwitchTo(old);
		}
		else
			t->finished = true;
		return;
	}
}


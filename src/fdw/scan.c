/*-------------------------------------------------------------------------
 *
 * scan.c
 *		Executor side of a cql_fdw foreign scan.
 *
 * A scan is a list of tasks, each one remote statement execution with its
 * own bind values and paging state: one task for a single partition, one
 * per partition of a partition-key IN list (deduplicated, sent to the
 * replica that owns it, several in flight at once on the connections), or
 * one per token range of a whole-table scan.  While the rows of one page
 * are being returned the next page of that task is already requested, so
 * the network and the executor overlap; at most the pages of the tasks in
 * flight are held in memory, whatever the size of the table.
 *
 * The files of the scan, from the top: scan_async.c (members of an Append
 * run concurrently), this file (the callbacks, tasks in order, EXPLAIN),
 * scan_bind.c (bind values and the task list), scan_merge.c (ordered
 * buckets merged) and scan_ranges.c (token ranges in flight), then
 * scan_task.c (one task's requests) and upper_rows.c (an aggregate's rows).
 * No file calls one above it.
 *
 * IDENTIFICATION
 *		src/fdw/scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "commands/defrem.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "bucket.h"
#include "connection.h"
#include "convert.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "planner.h"
#include "remote.h"
#include "scan_int.h"

/* ---------------------------------------------------------------------
 * Cleanup: requests and pages live outside palloc.
 * ---------------------------------------------------------------------
 */

/*
 * release_remote
 *		Free what lives outside palloc: the current page, and the requests
 *		in flight, which the library orphans (a late answer is dropped).
 *
 * Requests of a connection that was closed meanwhile went with it and are
 * not touched.  Idempotent; the task list itself stays.
 */
static void
release_remote(CqlScanState *st)
{
	if (st->have_page)
	{
		cql_result_free(&st->page);
		st->have_page = false;
	}
	for (int i = 0; i < st->ntasks; i++)
	{
		if (st->tasks[i].req && cqlfdw_remote_alive(&st->remote))
			cql_request_free(st->tasks[i].req);	/* orphans a late answer */
		st->tasks[i].req = NULL;
		if (st->tasks[i].have_page)
		{
			cql_result_free(&st->tasks[i].page);
			st->tasks[i].have_page = false;
		}
		for (; st->tasks[i].nahead > 0; st->tasks[i].nahead--)
		{
			CqlScanTask *t = &st->tasks[i];

			cql_result_free(&t->ahead[t->ahead_first]);
			t->ahead_first = (t->ahead_first + 1) % CQLFDW_RANGE_AHEAD;
		}
	}
}

/*
 * scan_reset_callback
 *		Reset callback of batch_cxt: release_remote whenever that context is
 *		reset or deleted, by the next start_scan or with the executor's
 *		memory after an error, when EndForeignScan is never called.
 */
static void
scan_reset_callback(void *arg)
{
	release_remote((CqlScanState *) arg);
}

/*
 * conversion_error_callback
 *		Error context while a received cell is converted: the column and the
 *		foreign table.
 */
static void
conversion_error_callback(void *arg)
{
	CqlScanState *st = (CqlScanState *) arg;

	if (st->error_col >= 0 && st->upper != NULL)
		errcontext("aggregate %d computed by Cassandra for foreign table \"%s\"",
				   st->error_col + 1, st->relname);
	else if (st->error_col >= 0)
	{
		AttrNumber	a = st->retrieved[st->error_col];

		errcontext("column \"%s\" of foreign table \"%s\"",
				   NameStr(TupleDescAttr(RelationGetDescr(st->rel), a - 1)->attname),
				   st->relname);
	}
}

/* ---------------------------------------------------------------------
 * Tasks in order (a token scan's ranges: scan_ranges.c; one task's
 * requests: scan_task.c)
 * ---------------------------------------------------------------------
 */

/* Keep up to 'window' tasks in flight ahead of the current one */
static void
fill_window(CqlScanState *st)
{
	while (st->next_submit < st->ntasks &&
		   st->next_submit < st->current + st->window)
	{
		cqlfdw_scan_submit_page(st, &st->tasks[st->next_submit++], false);
		st->partitions_read++;
	}
}

/*
 * start_scan
 *		Start the scan, or start it over after a rescan.
 *
 * Drops the previous scan's requests and memory, registers the cleanup
 * callback, evaluates the parameters into the task list and submits the
 * first window of tasks.  When no row can match (st->empty: a NULL or
 * unrepresentable key value, an empty IN list) nothing is sent.
 */
static void
start_scan(CqlScanState *st, ExprContext *econtext)
{
	MemoryContext old;

	MemoryContextCallback *cb;

	release_remote(st);
	MemoryContextReset(st->batch_cxt);

	/*
	 * Pages and requests live outside palloc: when the query ends in an
	 * error the executor's memory goes away without EndForeignScan, and this
	 * callback (of the batch context, whose memory it reads) orphans what is
	 * still in flight.  A reset unregisters it, so it is set up per scan.
	 */
	cb = MemoryContextAlloc(st->batch_cxt, sizeof(MemoryContextCallback));
	cb->func = scan_reset_callback;
	cb->arg = st;
	MemoryContextRegisterResetCallback(st->batch_cxt, cb);

	st->tasks = NULL;
	st->ntasks = 0;
	st->current = 0;
	st->merge_last = -1;
	st->next_submit = 0;
	st->inflight = NULL;
	st->ninflight = 0;
	st->rr = 0;
	st->claims_done = false;
	st->async_cb = NULL;		/* the reset above closed its descriptors */
	st->empty = false;
	st->started = true;
	if (st->upper != NULL)
		st->upper->nrows = 0;

	old = MemoryContextSwitchTo(st->batch_cxt);
	cqlfdw_scan_build_tasks(st, econtext);
	MemoryContextSwitchTo(old);
	if (st->empty)
		return;

	old = MemoryContextSwitchTo(st->batch_cxt);
	if (st->access == CQLACC_TOKEN_SCAN)
		cqlfdw_ranges_start(st);
	else
		fill_window(st);
	MemoryContextSwitchTo(old);
}

/*
 * Get the next page of the current task into st->page (tasks are read in
 * their order, the next ones already in flight; a token scan's ranges are
 * read concurrently, in the order their pages arrive: scan_ranges.c).
 * Returns false when every task is finished.
 */
static bool
next_page(CqlScanState *st)
{
	if (st->access == CQLACC_TOKEN_SCAN)
		return cqlfdw_ranges_next_page(st);
	while (st->current < st->ntasks)
	{
		CqlScanTask *t = &st->tasks[st->current];

		if (t->finished)
		{
			MemoryContext old;

			st->current++;
			old = MemoryContextSwitchTo(st->batch_cxt);
			fill_window(st);
			MemoryContextSwitchTo(old);
			continue;
		}
		cqlfdw_scan_await_task_page(st, t, &st->page);
		st->have_page = true;
		st->row = 0;
		return true;
	}
	return false;
}

/*
 * cqlfdw_scan_would_wait
 *		Would the next Iterate wait for Cassandra?  For asynchronous
 *		execution (scan_async.c): starts the scan if needed, takes what
 *		the connections already received, and puts the connections the
 *		next page may come from into conns (at most max; *nconns).
 *
 * A merge of ordered buckets always answers false: it reads each bucket's
 * pages as it needs them, synchronously.
 */
bool
cqlfdw_scan_would_wait(ForeignScanState *node, cql_conn **conns, int max,
					   int *nconns)
{
	CqlScanState *st = (CqlScanState *) node->fdw_state;
	MemoryContext old;
	bool		wait;

	*nconns = 0;
	if (!st->started)
		start_scan(st, node->ss.ps.ps_ExprContext);
	if (st->empty || st->merge)
		return false;
	if (st->have_page && st->row < st->page.rows_count)
		return false;

	for (int pass = 0; pass < 2; pass++)
	{
		*nconns = 0;
		if (st->access == CQLACC_TOKEN_SCAN)
			wait = cqlfdw_ranges_would_wait(st, conns, max, nconns);
		else
		{
			CqlScanTask *t;

			old = MemoryContextSwitchTo(st->batch_cxt);
			while (st->current < st->ntasks && st->tasks[st->current].finished)
			{
				st->current++;
				fill_window(st);
			}
			MemoryContextSwitchTo(old);
			if (st->current >= st->ntasks)
				return false;
			t = &st->tasks[st->current];
			wait = !cqlfdw_scan_task_ready(t);
			if (wait)
				conns[(*nconns)++] = t->conn;
		}
		if (!wait || pass == 1)
			break;
		/* what has arrived meanwhile, then look again */
		for (int i = 0; i < *nconns; i++)
		{
			cql_error	err;

			cql_error_clear(&err);
			(void) cql_conn_pump(conns[i], 0, &err);
		}
	}
	return wait;
}

/* ---------------------------------------------------------------------
 * Callbacks
 * ---------------------------------------------------------------------
 */

/*
 * cqlBeginForeignScan
 *		BeginForeignScan callback.
 *
 * Unpacks fdw_private (FdwScanPrivateIndex in planner.h), initializes the
 * fdw_exprs, opens the remote handle with the checkAsUser's user mapping,
 * and prepares the statement on the control connection: its metadata give
 * the CQL types of the result columns and of the bind markers, so that types
 * that cannot be converted are reported before any row is read.  The
 * statement is first executed by the first Iterate.  Nothing is done for
 * EXPLAIN without ANALYZE.
 */
void
cqlBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *fsplan = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	CqlScanState *st;
	List	   *binds;
	List	   *retrieved;
	ListCell   *lc;
	int			i;
	Oid			userid;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	st = palloc0(sizeof(CqlScanState));
	node->fdw_state = st;
	st->async_fd = -1;
	st->async_timer = -1;
	st->error_col = -1;
	if (fsplan->scan.scanrelid == 0)
	{
		/* an aggregate computed by Cassandra (upper_rows.c) */
		st->upper = cqlfdw_upper_begin(node);
		st->rel = cqlfdw_range_table_relation(estate, st->upper->rtindex);
		userid = cqlfdw_upper_checkasuser(fsplan, estate, st->upper->rtindex);
		if (!OidIsValid(userid))
			userid = GetUserId();
	}
	else
	{
		st->rel = node->ss.ss_currentRelation;
		userid = cqlfdw_scan_userid(estate, fsplan);
	}
	st->relname = pstrdup(RelationGetRelationName(st->rel));

	retrieved = (List *) list_nth(fsplan->fdw_private, FdwScanPrivateRetrievedAttrs);
	st->access = intVal(list_nth(fsplan->fdw_private, FdwScanPrivateAccess));
	binds = (List *) list_nth(fsplan->fdw_private, FdwScanPrivateBinds);
	st->offset_index = intVal(list_nth(fsplan->fdw_private, FdwScanPrivateOffsetIndex));
	st->bucket = (List *) list_nth(fsplan->fdw_private, FdwScanPrivateBucket);

	st->nretrieved = list_length(retrieved);
	st->retrieved = palloc(sizeof(AttrNumber) * Max(st->nretrieved, 1));
	i = 0;
	foreach(lc, retrieved)
		st->retrieved[i++] = lfirst_int(lc);

	st->nbinds = list_length(binds);
	st->binds = palloc0(sizeof(CqlBindSpec) * Max(st->nbinds, 1));
	i = 0;
	foreach(lc, binds)
	{
		List	   *b = (List *) lfirst(lc);

		st->binds[i].kind = linitial_int(b);
		st->binds[i].attnum = lsecond_int(b);
		st->binds[i].expr_index = lthird_int(b);
		i++;
	}

	st->param_exprs = ExecInitExprList(fsplan->fdw_exprs, (PlanState *) node);
	st->param_types = palloc(sizeof(Oid) * Max(list_length(fsplan->fdw_exprs), 1));
	i = 0;
	foreach(lc, fsplan->fdw_exprs)
		st->param_types[i++] = exprType((Node *) lfirst(lc));

	/* the mapping is that of the checkAsUser, as for the permission check */
	cqlfdw_remote_open_rel(&st->remote, st->rel, userid,
						   strVal(list_nth(fsplan->fdw_private, FdwScanPrivateCql)));

	/*
	 * The scan's options, all from the handle (merged once there), and the
	 * one clamp of scan_window; the plan adds only the page an ANN search
	 * needs.
	 */
	st->fetch_size = Max(st->remote.opts.fetch_size,
						 intVal(list_nth(fsplan->fdw_private, FdwScanPrivatePageMin)));
	st->consistency = st->remote.opts.consistency;
	st->scan_window = Min(st->remote.opts.scan_window, CQLFDW_MAX_SCAN_WINDOW);

	st->batch_cxt = AllocSetContextCreate(estate->es_query_cxt,
										  "cql_fdw scan batch",
										  ALLOCSET_DEFAULT_SIZES);
	/* types of bind markers and result columns, from the control node */
	st->meta_prep = cqlfdw_remote_prepare(&st->remote, NULL);
	cqlfdw_remote_check_binds(&st->remote, st->meta_prep, st->nbinds);
	st->convs = palloc0(sizeof(CqlConv) * Max(st->nretrieved, 1));
	cqlfdw_scan_setup_convs(st, st->meta_prep);

	/* ordered hash buckets: merged (the planner retrieved the keys) */
	if (st->bucket != NIL && list_nth_int(st->bucket, FdwBucketDirection) != 0 &&
		st->remote.table->cols[list_nth_int(st->bucket, FdwBucketAttnum) - 1].bucket.unit == CQLBUCKET_HASH)
		cqlfdw_merge_setup(st, list_nth_int(st->bucket, FdwBucketDirection));

	cqlfdw_scan_init_bind_convs(st);
}

/*
 * combined_counts
 *		A count over the whole table (upper_rows.c): every token range's count,
 *		the ranges read concurrently, summed into one row; the end after it.
 *
 * Cassandra warns about each of these counts ("Aggregation query used
 * without partition key"): here the ranges are the point, so that warning
 * is expected by the scan's requests and not passed on.
 */
static TupleTableSlot *
combined_counts(CqlScanState *st, TupleTableSlot *slot)
{
	if (st->upper->nrows > 0)
		return slot;
	st->expected_warning = "Aggregation query used without partition key";
	for (;;)
	{
		if (st->have_page)
		{
			cql_result_free(&st->page);
			st->have_page = false;
		}
		if (!next_page(st))
			break;
		for (int32 r = 0; r < st->page.rows_count; r++)
			cqlfdw_upper_combine_row(st, &st->page, r);
	}
	cqlfdw_upper_combined_row(st, slot);
	return ExecStoreVirtualTuple(slot);
}

/*
 * cqlIterateForeignScan
 *		IterateForeignScan callback: the next row as a virtual tuple, or an
 *		empty slot at the end.
 *
 * The first call starts the scan.  A page is awaited when the previous one
 * is used up; next_page requested it before the rows of the previous one
 * were returned.  Columns the scan does not retrieve are NULL.
 */
TupleTableSlot *
cqlIterateForeignScan(ForeignScanState *node)
{
	CqlScanState *st = (CqlScanState *) node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ErrorContextCallback errcb;
	cql_result *page;
	int32		row;

	if (!st->started)
		start_scan(st, node->ss.ps.ps_ExprContext);

	ExecClearTuple(slot);
	if (st->empty)
	{
		if (st->upper != NULL && cqlfdw_upper_no_rows(st, slot))
			return ExecStoreVirtualTuple(slot);
		return slot;
	}

	if (st->upper != NULL && st->upper->combine)
		return combined_counts(st, slot);

	if (st->merge)
	{
		CqlScanTask *t = cqlfdw_merge_next(st);

		if (t == NULL)
			return slot;
		page = &t->page;
		row = t->row;
	}
	else
	{
		while (!st->have_page || st->row >= st->page.rows_count)
		{
			if (st->have_page)
			{
				cql_result_free(&st->page);
				st->have_page = false;
			}
			if (!next_page(st))
			{
				if (st->upper != NULL && cqlfdw_upper_no_rows(st, slot))
					return ExecStoreVirtualTuple(slot);
				return slot;
			}
		}
		page = &st->page;
		row = st->row++;
	}

	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	errcb.callback = conversion_error_callback;
	errcb.arg = st;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	for (int i = 0; st->upper == NULL && i < st->nretrieved; i++)
	{
		const cql_elem *cell = cql_result_cell(page, row, i);
		AttrNumber	a = st->retrieved[i];

		st->error_col = i;
		slot->tts_values[a - 1] = cqlfdw_conv_read(&st->convs[i], cell->p, cell->n,
												   &slot->tts_isnull[a - 1]);
	}
	if (st->upper != NULL)
		cqlfdw_upper_store_row(st, page, row, slot);
	st->error_col = -1;
	error_context_stack = errcb.previous;
	return ExecStoreVirtualTuple(slot);
}

/*
 * cqlReScanForeignScan
 *		ReScanForeignScan callback: the parameters (outer values of a
 *		parameterized path, Params) may have changed, so what is in flight
 *		is dropped and the next Iterate builds the tasks anew.
 */
void
cqlReScanForeignScan(ForeignScanState *node)
{
	CqlScanState *st = (CqlScanState *) node->fdw_state;

	if (st == NULL)
		return;
	/* parameters may have changed: start over on the next Iterate */
	release_remote(st);
	st->started = false;
}

/*
 * cqlEndForeignScan
 *		EndForeignScan callback: free the requests and the page, and unpin
 *		the connection.  (After an error this is not called: the reset
 *		callback and the transaction callback of connection.c clean up.)
 */
void
cqlEndForeignScan(ForeignScanState *node)
{
	CqlScanState *st = (CqlScanState *) node->fdw_state;

	if (st == NULL)
		return;
	release_remote(st);
	st->ntasks = 0;
	cqlfdw_remote_release(&st->remote);
}

/* ---------------------------------------------------------------------
 * EXPLAIN
 * ---------------------------------------------------------------------
 */

/*
 * scan_partitions_read
 *		For EXPLAIN ANALYZE: the partitions (or token ranges) this scan
 *		has requested, over all its rescans; -1 when it never started.
 */
static int64
scan_partitions_read(ForeignScanState *node)
{
	CqlScanState *st = (CqlScanState *) node->fdw_state;

	return st ? st->partitions_read : -1;
}

/*
 * bucket_access_text
 *		EXPLAIN's Access of a scan that enumerates buckets, e.g.
 *		"20 partitions (day buckets of reported_at), clustering order".
 */
static const char *
bucket_access_text(ForeignScanState *node, List *bucket, int npart)
{
	Relation	rel = node->ss.ss_currentRelation;
	AttrNumber	a = list_nth_int(bucket, FdwBucketAttnum);
	int			direction = list_nth_int(bucket, FdwBucketDirection);
	List	   *options = GetForeignColumnOptions(RelationGetRelid(rel), a);
	const char *spec = "";
	const char *of = "";
	ListCell   *lc;
	StringInfoData buf;

	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "bucket") == 0)
			spec = defGetString(def);
		else if (strcmp(def->defname, "bucket_of") == 0)
			of = defGetString(def);
	}
	initStringInfo(&buf);
	if (npart >= 0)
		appendStringInfo(&buf, "%d partition%s", npart, npart == 1 ? "" : "s");
	else
		appendStringInfoString(&buf, "partitions");
	appendStringInfo(&buf, " (%s buckets of %s)", spec, of);
	if (direction != 0)
	{
		bool		hash = strncmp(spec, "hash", 4) == 0;

		appendStringInfoString(&buf, hash ? ", merged in " : ", ");
		appendStringInfoString(&buf, direction > 0 ? "clustering order"
							   : "reverse clustering order");
	}
	return buf.data;
}

/*
 * cqlExplainForeignScan
 *		ExplainForeignScan callback: "Access" (single partition, N
 *		partitions, token range scan - from which token, when
 *		cql_fdw.token_scan_after is set -, index scan, with the SAI index
 *		that filters), and with VERBOSE the "Remote CQL".
 */
void
cqlExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	List	   *fdw_private = plan->fdw_private;
	CqlAccess	access = intVal(list_nth(fdw_private, FdwScanPrivateAccess));
	int			npart = intVal(list_nth(fdw_private, FdwScanPrivateNPartitions));
	List	   *bucket = (List *) list_nth(fdw_private, FdwScanPrivateBucket);
	const char *index = strVal(list_nth(fdw_private, FdwScanPrivateIndex));
	const char *ann = strVal(list_nth(fdw_private, FdwScanPrivateAnn));
	const char *refused = strVal(list_nth(fdw_private, FdwScanPrivateIndexRefused));
	List	   *upper = (List *) list_nth(fdw_private, FdwScanPrivateUpper);
	StringInfoData buf;

	/* an aggregate computed by Cassandra (upper_plan.c) */
	if (upper != NIL)
		ExplainPropertyText("Relations", strVal(list_nth(upper, FdwUpperRelations)), es);

	initStringInfo(&buf);
	switch (access)
	{
		case CQLACC_SINGLE_PARTITION:
			appendStringInfoString(&buf, "single partition");
			break;
		case CQLACC_MULTI_PARTITION:
			if (bucket != NIL)
				appendStringInfoString(&buf, bucket_access_text(node, bucket, npart));
			else if (npart >= 0)
				appendStringInfo(&buf, "%d partitions", npart);
			else
				appendStringInfoString(&buf, "multiple partitions");
			break;
		case CQLACC_TOKEN_SCAN:
			{
				int64		after;

				appendStringInfoString(&buf, index[0] ? "index scan" : "token range scan");
				if (cqlfdw_token_scan_after(&after))
					appendStringInfo(&buf, ", tokens after " INT64_FORMAT " (cql_fdw.token_scan_after)",
									 after);
			}
			break;
		case CQLACC_INDEX_SCAN:
			appendStringInfoString(&buf, "index scan");
			break;
		case CQLACC_ANN_SEARCH:
			appendStringInfoString(&buf, ann);
			break;
	}
	if (ann[0] && access != CQLACC_ANN_SEARCH)
		appendStringInfo(&buf, ", %s", ann);
	if (index[0])
		appendStringInfo(&buf, (access == CQLACC_TOKEN_SCAN || access == CQLACC_INDEX_SCAN)
						 ? " (%s)" : ", index filter (%s)", index);
	if (refused[0])
		appendStringInfo(&buf, ", index %s not used: guardrail non_partition_restricted_index_query_enabled is false",
						 refused);
	ExplainPropertyText("Access", buf.data, es);
	if (es->analyze && access == CQLACC_MULTI_PARTITION)
		ExplainPropertyInteger("Partitions read", NULL,
							   scan_partitions_read(node), es);
	if (es->verbose)
		ExplainPropertyText("Remote CQL",
							strVal(list_nth(fdw_private, FdwScanPrivateCql)), es);
}

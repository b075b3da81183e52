/*-------------------------------------------------------------------------
 *
 * insert.c
 *		The INSERT paths of cql_fdw foreign tables, above modify.c: one row,
 *		batches of INSERT ... SELECT and multi-row VALUES, COPY FROM and
 *		tuple routing into foreign partitions (BeginForeignInsert).
 *
 * Rows are encoded by modify.c (cqlfdw_modify_prepare_row) and sent
 * pipelined, each request to a replica of its partition, the rows of one
 * partition as one UNLOGGED BATCH (send_grouped).  COPY hands rows over one
 * at a time (ExecForeignInsert); they are staged here, batch_size of them,
 * and sent the same way as an INSERT ... SELECT's batch.  Each row is
 * encoded when COPY hands it over, so a value Cassandra cannot store is an
 * error while COPY's error context still names that row's line; the line
 * also travels with each request, so that an error Cassandra returns later
 * names the lines of the rows it was about.
 *
 * IDENTIFICATION
 *		src/fdw/insert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/copy.h"
#include "commands/copyfrom_internal.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "cql_fdw.h"
#include "modify.h"
#include "modify_int.h"
#include "remote.h"

static void send_grouped(CqlModifyState *ms, CqlRowWrite *rows, int n);
static void alloc_pending(CqlModifyState *ms);

/*
 * copy_frame
 *		The error context frame of the COPY FROM running in this backend
 *		(its callback is CopyFromErrorCallback, its argument the
 *		CopyFromState), or NULL.
 */
static ErrorContextCallback *
copy_frame(void)
{
	for (ErrorContextCallback *e = error_context_stack; e != NULL; e = e->previous)
		if (e->callback == CopyFromErrorCallback)
			return e;
	return NULL;
}

/*
 * copy_state
 *		The CopyFromState of the running COPY FROM, or NULL.  Its
 *		cur_lineno is the line of the row COPY is handing over.
 */
static CopyFromState
copy_state(void)
{
	ErrorContextCallback *e = copy_frame();

	return e ? (CopyFromState) e->arg : NULL;
}

/*
 * copy_relname_context
 *		COPY's error context without a line: "COPY relation", as COPY
 *		itself says it while it flushes a batch (relname_only, 16 and
 *		later; this works on every version).
 */
static void
copy_relname_context(void *arg)
{
	errcontext("COPY %s", ((CopyFromState) arg)->cur_relname);
}

/*
 * flush_staged
 *		Send the rows COPY staged (send_grouped) and free their memory.
 *		COPY's error context would name the line of the row being handed
 *		over, not of the rows sent (or of those in flight that an error
 *		belongs to), so it names only the relation meanwhile
 *		(copy_relname_context in its frame); modify.c's drain names the
 *		lines of a failed request.
 */
static void
flush_staged(CqlModifyState *ms)
{
	ErrorContextCallback *frame = copy_frame();

	if (ms->nstaged == 0)
		return;
	if (frame)
		frame->callback = copy_relname_context;
	send_grouped(ms, ms->staged, ms->nstaged);
	if (frame)
		frame->callback = CopyFromErrorCallback;
	ms->nstaged = 0;
	MemoryContextReset(ms->stage_cxt);
}

/*
 * stage_row
 *		COPY: encode the row now (an error names its line), keep it, and
 *		send the staged rows when batch_size of them are there.
 */
static void
stage_row(CqlModifyState *ms, TupleTableSlot *slot)
{
	MemoryContext old = MemoryContextSwitchTo(ms->stage_cxt);
	CopyFromState cstate = copy_state();
	CqlRowWrite *w = &ms->staged[ms->nstaged];

	cqlfdw_modify_prepare_row(ms, slot, NULL, w);
	w->line = cstate ? cstate->cur_lineno : 0;
	ms->nstaged++;
	MemoryContextSwitchTo(old);
	if (ms->nstaged >= ms->remote.opts.batch_size)
		flush_staged(ms);
}

/*
 * cqlExecForeignInsert
 *		ExecForeignInsert callback: one row, sent (to a replica of its
 *		partition when the cluster knows one) and awaited, or with
 *		write_mode 'on_commit' kept for COMMIT; under COPY staged and sent
 *		in batches (stage_row).
 *
 * With if_not_exists a row that exists already is a unique violation (at
 * COMMIT for a deferred write); with ON CONFLICT DO NOTHING it is skipped
 * (NULL: not counted, no RETURNING row).  The slot is returned as written
 * (Cassandra sends no row back), its timestamps for RETURNING as stored.
 */
TupleTableSlot *
cqlExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	CqlModifyState *ms = (CqlModifyState *) rinfo->ri_FdwState;

	if (ms->staging)
	{
		alloc_pending(ms);
		stage_row(ms, slot);
		return slot;
	}
	cqlfdw_modify_write_one_row(ms, slot, planSlot);
	if (ms->not_applied)
		return NULL;
	cqlfdw_modify_returning_as_stored(ms, slot);
	return slot;
}

/* Make room for a request of nrows rows in the in-flight window */
static void
reserve_in_flight(CqlModifyState *ms, int nrows)
{
	while (ms->npending > 0 &&
		   (ms->npending >= MAX_WRITES_IN_FLIGHT ||
			ms->rows_in_flight + nrows > MAX_ROWS_IN_FLIGHT))
		cqlfdw_modify_drain(ms, ms->npending - 1);
}

/*
 * send_pending
 *		Send rows of one partition as one pipelined request (a batch when
 *		several), after waiting for the oldest requests if the window is
 *		full; the request stays in pending until cqlfdw_modify_drain awaits it.
 */
static void
send_pending(CqlModifyState *ms, CqlRowWrite **rows, int nrows)
{
	CqlPendingWrite *p;

	reserve_in_flight(ms, nrows);
	p = &ms->pending[ms->npending];
	cqlfdw_modify_send_rows(ms, rows, nrows, p);
	p->first_line = rows[0]->line;
	p->last_line = rows[nrows - 1]->line;
	ms->npending++;
	ms->rows_in_flight += nrows;
}

/* qsort order of rows: by partition, then by position (stable) */
static int
cmp_row_partition(const void *a, const void *b)
{
	const CqlRowWrite *x = *(CqlRowWrite *const *) a;
	const CqlRowWrite *y = *(CqlRowWrite *const *) b;
	int			c;

	if (x->keylen != y->keylen)
		return x->keylen < y->keylen ? -1 : 1;
	c = (x->keylen > 0) ? memcmp(x->key, y->key, x->keylen) : 0;
	if (c != 0)
		return c;
	return (x < y) ? -1 : (x > y);	/* rows[] is in statement order */
}

/*
 * same_partition
 *		Do the two rows have the same routing key (or both none)?
 */
static bool
same_partition(const CqlRowWrite *x, const CqlRowWrite *y)
{
	return x->keylen == y->keylen &&
		(x->keylen == 0 || memcmp(x->key, y->key, x->keylen) == 0);
}

/*
 * same_row
 *		Do the two rows have the same primary key (as encoded)?
 */
static bool
same_row(const CqlRowWrite *x, const CqlRowWrite *y)
{
	return x->pkeylen == y->pkeylen && memcmp(x->pkey, y->pkey, x->pkeylen) == 0;
}

/*
 * send_grouped
 *		Send n encoded rows (in statement order) at once.  Rows of one
 *		partition go as one UNLOGGED BATCH (up to batch_size rows and
 *		MAX_BATCH_BYTES of values), a row alone in its partition as an
 *		EXECUTE; requests are pipelined (MAX_WRITES_IN_FLIGHT requests,
 *		MAX_ROWS_IN_FLIGHT rows) across calls, each to a replica of its
 *		partition, on corked connections, uncorked at the end.  Batches
 *		never mix partitions (that would make the coordinator fan out and
 *		Cassandra warn) and never hold two writes of one row (they would
 *		share a timestamp, and the later one must win): such a row starts
 *		the next batch, whose timestamp is later.
 */
static void
send_grouped(CqlModifyState *ms, CqlRowWrite *rows, int n)
{
	CqlRowWrite **order = palloc(sizeof(CqlRowWrite *) * n);
	CqlRowWrite **group = palloc(sizeof(CqlRowWrite *) * n);
	int			ngroup = 0;
	size_t		group_bytes = 0;
	int			max_rows = Max(ms->remote.opts.batch_size, 1);

	ms->cork = true;
	for (int i = 0; i < n; i++)
		order[i] = &rows[i];
	qsort(order, n, sizeof(CqlRowWrite *), cmp_row_partition);

	for (int i = 0; i < n; i++)
	{
		CqlRowWrite *w = order[i];
		bool		cut = false;

		if (ngroup > 0)
		{
			cut = !same_partition(group[0], w) || ngroup >= max_rows ||
				group_bytes + w->bytes > MAX_BATCH_BYTES;
			for (int j = 0; j < ngroup && !cut; j++)
				cut = same_row(group[j], w);
		}
		if (cut)
		{
			send_pending(ms, group, ngroup);
			ngroup = 0;
			group_bytes = 0;
		}
		group[ngroup++] = w;
		group_bytes += w->bytes;
	}
	if (ngroup > 0)
		send_pending(ms, group, ngroup);

	/* what was queued on corked connections goes out now */
	cqlfdw_modify_uncork(ms);
}

/* The window of requests in flight, allocated on first use */
static void
alloc_pending(CqlModifyState *ms)
{
	if (ms->pending == NULL)
		ms->pending = MemoryContextAlloc(GetMemoryChunkContext(ms),
										 sizeof(CqlPendingWrite) * MAX_WRITES_IN_FLIGHT);
	ms->cork = true;
}

/*
 * Batch insert: the rows of the batch go out at once, grouped by
 * send_grouped; lightweight transactions and deferred writes row by row,
 * pipelined.  The oldest request is awaited when the window is full, the
 * rest at the end of the statement (EndForeignModify), so a failure still
 * fails the statement.
 */
TupleTableSlot **
cqlExecForeignBatchInsert(EState *estate, ResultRelInfo *rinfo,
						  TupleTableSlot **slots, TupleTableSlot **planSlots,
						  int *numSlots)
{
	CqlModifyState *ms = (CqlModifyState *) rinfo->ri_FdwState;
	MemoryContext old;
	int			n = *numSlots;
	CqlRowWrite *rows;

	alloc_pending(ms);

	/* lightweight transactions and deferred writes go row by row */
	if (ms->remote.opts.if_not_exists || ms->remote.opts.write_on_commit || n <= 1)
	{
		for (int i = 0; i < n; i++)
		{
			CqlPendingWrite *p;

			reserve_in_flight(ms, 1);
			p = &ms->pending[ms->npending];
			old = MemoryContextSwitchTo(ms->temp_cxt);
			if (cqlfdw_modify_send_row(ms, slots[i], planSlots ? planSlots[i] : NULL, p))
			{
				p->first_line = p->last_line = 0;
				ms->npending++;
				ms->rows_in_flight++;
			}
			MemoryContextSwitchTo(old);
		}
		cqlfdw_modify_uncork(ms);
		MemoryContextReset(ms->temp_cxt);
		return slots;
	}

	old = MemoryContextSwitchTo(ms->temp_cxt);
	rows = palloc(sizeof(CqlRowWrite) * n);
	for (int i = 0; i < n; i++)
	{
		cqlfdw_modify_prepare_row(ms, slots[i], planSlots ? planSlots[i] : NULL, &rows[i]);
		rows[i].line = 0;
	}
	send_grouped(ms, rows, n);
	MemoryContextSwitchTo(old);

	/*
	 * Bound values were copied into the request bodies when sent, so the
	 * row memory can go.
	 */
	MemoryContextReset(ms->temp_cxt);
	return slots;
}

/*
 * cqlGetForeignModifyBatchSize
 *		GetForeignModifyBatchSize callback: the option batch_size, or 1 (no
 *		batching) with RETURNING or row-level INSERT triggers, as
 *		postgres_fdw does, with ON CONFLICT DO NOTHING and for COPY.  Also 1
 *		without state (EXPLAIN without ANALYZE).
 */
int
cqlGetForeignModifyBatchSize(ResultRelInfo *rinfo)
{
	CqlModifyState *ms = (CqlModifyState *) rinfo->ri_FdwState;

	/*
	 * as postgres_fdw: no batching with RETURNING or row triggers; nor for
	 * ON CONFLICT DO NOTHING (each row's [applied] decides whether it
	 * counts), nor for COPY, which stages rows itself (cqlExecForeignInsert)
	 * so that a bad row's error names its line.
	 */
	if (ms == NULL || rinfo->ri_projectReturning != NULL || ms->do_nothing ||
		ms->from_copy ||
		(rinfo->ri_TrigDesc &&
		 (rinfo->ri_TrigDesc->trig_insert_after_row ||
		  rinfo->ri_TrigDesc->trig_insert_before_row)))
		return 1;
	return Max(ms->remote.opts.batch_size, 1);
}

/*
 * cqlBeginForeignInsert
 *		BeginForeignInsert callback, for COPY FROM into a foreign table and
 *		for rows routed into a foreign partition of a partitioned table (by
 *		INSERT, COPY, or an UPDATE that moves a row), as postgres_fdw.
 *
 * The statement is planned here (cqlfdw_modify_plan_insert): it writes the
 * columns COPY or the INSERT names, those with a default and the key, so
 * a column COPY leaves out is left untouched in Cassandra, as by INSERT.
 * The user mapping is the one of the role the result relation is checked
 * as.  COPY without RETURNING, row triggers, lightweight transactions or
 * deferred writes stages rows (cqlExecForeignInsert).
 */
void
cqlBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	ModifyTable *plan = (ModifyTable *) mtstate->ps.plan;
	EState	   *estate = mtstate->ps.state;
	Relation	rel = rinfo->ri_RelationDesc;
	Oid			userid = cqlfdw_result_userid(estate, rinfo);
	bool		do_nothing = false;
	CqlFdwOptions opts;
	UserMapping *user;
	CqlFdwTable *t;
	List	   *fdw_private;
	CqlModifyState *ms;

	/*
	 * As postgres_fdw: a row an UPDATE moves cannot go into a foreign
	 * partition that the same UPDATE writes (its state is the UPDATE's).
	 */
	if (plan && plan->operation == CMD_UPDATE &&
		(rinfo->ri_usesFdwDirectModify || rinfo->ri_FdwState))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot route tuples into foreign table \"%s\" to be updated",
						RelationGetRelationName(rel)),
				 errhint("Update the rows of that partition with a separate statement.")));
	if (plan && plan->onConflictAction == ONCONFLICT_NOTHING)
		do_nothing = true;
	else if (plan && plan->onConflictAction != ONCONFLICT_NONE)
		elog(ERROR, "unexpected ON CONFLICT specification: %d",
			 (int) plan->onConflictAction);

	t = cqlfdw_resolve_table(RelationGetRelid(rel), userid, true, &opts, &user);
	fdw_private = cqlfdw_modify_plan_insert(rel, t, &opts,
											ExecGetInsertedCols(rinfo, estate),
											do_nothing,
											rinfo->ri_returningList != NIL);
	ms = palloc0(sizeof(CqlModifyState));
	ms->operation = CMD_INSERT;
	cqlfdw_modify_begin(ms, rel, fdw_private, estate, rinfo, NIL);
	ms->from_copy = (plan == NULL);
	ms->staging = ms->from_copy && !ms->has_returning &&
		!ms->remote.opts.if_not_exists && !ms->remote.opts.write_on_commit &&
		ms->remote.opts.batch_size > 1 &&
		!(rinfo->ri_TrigDesc && rinfo->ri_TrigDesc->trig_insert_after_row);
	if (ms->staging)
	{
		ms->staged = palloc(sizeof(CqlRowWrite) * ms->remote.opts.batch_size);
		ms->stage_cxt = AllocSetContextCreate(estate->es_query_cxt,
											  "cql_fdw COPY rows",
											  ALLOCSET_DEFAULT_SIZES);
	}
	rinfo->ri_FdwState = ms;
}

/*
 * cqlEndForeignInsert
 *		EndForeignInsert callback: send what COPY staged, then as
 *		EndForeignModify await everything in flight (a failure fails the
 *		COPY) and release the connection.  After an error PostgreSQL does
 *		not call it; the transaction's end releases what is left, as after
 *		a failed INSERT.
 */
void
cqlEndForeignInsert(EState *estate, ResultRelInfo *rinfo)
{
	CqlModifyState *ms = (CqlModifyState *) rinfo->ri_FdwState;

	if (ms == NULL)
		return;
	flush_staged(ms);
	cqlEndForeignModify(estate, rinfo);
}

/*-------------------------------------------------------------------------
 *
 * txn_writes.c
 *		Writes deferred to COMMIT (write_mode 'on_commit').
 *
 * Cassandra has no transactions.  By default cql_fdw sends each write as
 * the statement runs, and ROLLBACK cannot undo it.  With write_mode
 * 'on_commit' the encoded statements are kept in transaction memory
 * instead, sent (pipelined, each to a replica of its partition) when the
 * transaction is about to commit, and simply forgotten on ROLLBACK or on
 * ROLLBACK TO SAVEPOINT for the writes made after the savepoint.  If any of
 * them fails, the COMMIT fails with the Cassandra error; writes already
 * applied by then stay applied (Cassandra cannot take them back), which the
 * error says.  PREPARE TRANSACTION is refused while writes are pending: the
 * prepared transaction could not send them later.
 *
 * Reads in the same transaction do not see pending writes.
 *
 * IDENTIFICATION
 *		src/fdw/txn_writes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "connection.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "txn_writes.h"

typedef struct PendingWrite
{
	CqlRemote  *remote;			/* detached copy, shared by a statement's
								 * writes */
	int			nvalues;
	cql_value_ref *values;
	uint8_t    *routing_key;
	size_t		routing_len;
	uint16		consistency;
	uint16		serial_consistency;
	int64		timestamp;		/* CQL_NO_TIMESTAMP: the coordinator's */
	int			nest_level;		/* subtransaction that made it */
} PendingWrite;

static List *pending = NIL;		/* PendingWrite *, in TopTransactionContext */
static bool callbacks_registered = false;

#define MAX_COMMIT_WRITES_IN_FLIGHT 256

static void
txn_callback(XactEvent event, void *arg);
static void
subtxn_callback(SubXactEvent event, SubTransactionId mySubid,
				SubTransactionId parentSubid, void *arg);

/*
 * register_callbacks
 *		Register the transaction and subtransaction callbacks at the
 *		backend's first deferred write; they stay registered.
 */
static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(txn_callback, NULL);
	RegisterSubXactCallback(subtxn_callback, NULL);
	callbacks_registered = true;
}

/*
 * cqlfdw_defer_write
 *		Keep one write of the statement r for COMMIT.  Values and routing
 *		key are copied; the statement handle is detached once per statement.
 */
void
cqlfdw_defer_write(const CqlRemote *r, const cql_value_ref *values, int nvalues,
				   const uint8_t *routing_key, size_t routing_len,
				   uint16 consistency, uint16 serial_consistency,
				   int64 timestamp)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	PendingWrite *w = palloc0(sizeof(PendingWrite));
	PendingWrite *last = pending ? (PendingWrite *) llast(pending) : NULL;

	register_callbacks();
	if (last && last->remote->entry == r->entry &&
		last->remote->generation == r->generation &&
		strcmp(last->remote->cql, r->cql) == 0)
		w->remote = last->remote;
	else
		w->remote = cqlfdw_remote_detach(r, TopTransactionContext);
	w->nvalues = nvalues;
	w->values = palloc(sizeof(cql_value_ref) * Max(nvalues, 1));
	for (int i = 0; i < nvalues; i++)
	{
		w->values[i].n = values[i].n;
		if (values[i].n > 0)
		{
			uint8_t    *copy = palloc(values[i].n);

			memcpy(copy, values[i].p, values[i].n);
			w->values[i].p = copy;
		}
		else
			w->values[i].p = values[i].p ? (const uint8_t *) "" : NULL;
	}
	if (routing_key)
	{
		w->routing_key = palloc(Max(routing_len, 1));
		memcpy(w->routing_key, routing_key, routing_len);
		w->routing_len = routing_len;
	}
	w->consistency = consistency;
	w->serial_consistency = serial_consistency;
	w->timestamp = timestamp;
	w->nest_level = GetCurrentTransactionNestLevel();
	pending = lappend(pending, w);
	r->entry->pending_writes = true;
	MemoryContextSwitchTo(old);
}

typedef struct InFlight
{
	cql_request *req;
	cql_conn   *conn;
	PendingWrite *w;
	CqlRetry	retry;
} InFlight;

/*
 * send_one
 *		Send a deferred write to a replica of its partition (with f->retry
 *		after a failure: to the next host of the plan) on f->conn.
 */
static void
send_one(InFlight *f, bool route)
{
	PendingWrite *w = f->w;
	cql_query_params params;
	cql_prepared *prep;

	if (route)
		f->conn = cqlfdw_remote_conn_for_key(w->remote,
											 f->retry.tries > 0 ? &f->retry : NULL,
											 w->routing_key, w->routing_len);
	prep = cqlfdw_remote_prepare(w->remote, f->conn);
	cqlfdw_remote_will_write(w->remote);
	cql_query_params_init(&params);
	params.consistency = w->consistency;
	params.serial_consistency = w->serial_consistency;
	params.default_timestamp = w->timestamp;
	params.nvalues = w->nvalues;
	params.values = w->values;
	f->req = cqlfdw_remote_send_execute(w->remote, f->conn, prep, &params);
}

/*
 * resend_one
 *		CqlResendFn of a deferred write: the failed request is dropped and
 *		the write sent again, routed anew for the next host.
 */
static void
resend_one(void *arg, cql_retry_decision d)
{
	InFlight   *f = (InFlight *) arg;

	cql_request_free(f->req);
	f->req = NULL;
	send_one(f, d == CQL_RETRY_NEXT_HOST);
}

/*
 * finish_one
 *		Await one write sent at COMMIT, and count it in *applied.
 *
 * A timestamped write (not a counter, not IF NOT EXISTS) is sent again
 * when the retry policy allows it: same timestamp, so a replay changes
 * nothing.  A failure is an ERROR, through the SQLSTATE mapping, that says
 * how many writes were applied before it (a transport failure also marks
 * the node); for a lightweight transaction (serial consistency set) a row
 * that already existed is a unique violation.
 */
static void
finish_one(InFlight *f, int *applied)
{
	cql_result	res;
	cql_error	err;
	cql_status	s;

	s = cqlfdw_remote_await_retrying(f->w->remote, &f->retry, &f->conn, &f->req,
									 f->w->timestamp != CQL_NO_TIMESTAMP &&
									 f->w->serial_consistency == 0,
									 resend_one, f, &res, &err);
	if (s != CQL_OK)
	{
		if (s != CQL_ERR_SERVER && cqlfdw_remote_alive(f->w->remote))
			cql_cluster_report_failure(f->w->remote->entry->cluster, f->conn, s);
		cqlfdw_report_as(ERROR, s, &err, f->w->remote->cql,
						 "could not send a deferred write to Cassandra at COMMIT",
						 psprintf("%d earlier deferred writes of this transaction were applied and remain; Cassandra cannot undo them.",
								  *applied));
	}
	if (f->w->serial_consistency && res.kind == CQL_RESULT_ROWS && res.rows_count > 0 &&
		cql_result_cell(&res, 0, 0) != NULL)
	{
		const cql_elem *a = cql_result_cell(&res, 0, 0);
		bool		ok = a->n == 1 && a->p[0] != 0;

		cql_result_free(&res);
		if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("duplicate key value violates the primary key of a Cassandra table at COMMIT"),
					 errdetail("%d earlier deferred writes of this transaction were applied and remain.",
							   *applied),
					 errcontext("remote CQL: %s", f->w->remote->cql)));
		(*applied)++;
		return;
	}
	cql_result_free(&res);
	(*applied)++;
}

/* Send everything, pipelined; the first failure raises an ERROR. */
static void
flush_pending(void)
{
	InFlight	window[MAX_COMMIT_WRITES_IN_FLIGHT];
	int			nwin = 0;
	int			applied = 0;
	ListCell   *lc;

	PG_TRY();
	{
		foreach(lc, pending)
		{
			PendingWrite *w = (PendingWrite *) lfirst(lc);

			if (!cqlfdw_remote_alive(w->remote))
				ereport(ERROR,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("connection to Cassandra was closed before deferred writes could be sent"),
						 errdetail("%d deferred writes were applied before.", applied)));
			if (nwin == MAX_COMMIT_WRITES_IN_FLIGHT)
			{
				finish_one(&window[0], &applied);
				memmove(window, window + 1, sizeof(InFlight) * (--nwin));
			}
			window[nwin].w = w;
			window[nwin].req = NULL;
			cqlfdw_retry_start(&window[nwin].retry);
			nwin++;
			send_one(&window[nwin - 1], true);
		}
		while (nwin > 0)
		{
			finish_one(&window[0], &applied);
			memmove(window, window + 1, sizeof(InFlight) * (--nwin));
		}
	}
	PG_CATCH();
	{
		/* orphan the rest: their answers are drained and dropped */
		for (int i = 0; i < nwin; i++)
			if (window[i].req && cqlfdw_remote_alive(window[i].w->remote))
				cql_request_free(window[i].req);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * txn_callback
 *		Transaction callback: send the pending writes at pre-commit (an
 *		error there aborts the COMMIT), refuse PREPARE TRANSACTION while any
 *		are pending, and forget the list at every other event (its memory
 *		belongs to TopTransactionContext).
 */
static void
txn_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			if (pending != NIL)
			{
				flush_pending();
				pending = NIL;
			}
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (pending != NIL)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that has deferred Cassandra writes"),
						 errhint("Commit or roll back the transaction, or use write_mode 'immediate'.")));
			break;
		default:
			/* commit, abort: the memory went with TopTransactionContext */
			pending = NIL;
			break;
	}
}

/* ROLLBACK TO SAVEPOINT forgets the writes made since the savepoint */
static void
subtxn_callback(SubXactEvent event, SubTransactionId mySubid,
				SubTransactionId parentSubid, void *arg)
{
	int			level;
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB || pending == NIL)
		return;
	level = GetCurrentTransactionNestLevel();
	foreach(lc, pending)
	{
		PendingWrite *w = (PendingWrite *) lfirst(lc);

		if (w->nest_level >= level)
			pending = foreach_delete_current(pending, lc);
	}
}

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
 * Bound values are converted exactly: a key value that no CQL value can
 * equal (a NULL, a timestamp with microseconds, an out-of-range integer)
 * makes an equality match nothing, without a round trip; a range bound that
 * is not representable is moved to the nearest representable value that
 * selects the same rows.
 *
 * IDENTIFICATION
 *		src/fdw/scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
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
 * Requests
 * ---------------------------------------------------------------------
 */

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

	cql_query_params_init(&params);
	params.consistency = st->consistency;
	params.page_size = st->fetch_size;
	params.paging_state = t->paging_state;
	params.paging_state_len = t->paging_len;
	params.nvalues = st->nbinds;
	params.values = t->values;

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
	{
		cql_query_params params;

		cql_query_params_init(&params);
		params.consistency = st->consistency;
		params.page_size = st->fetch_size;
		params.paging_state = t->paging_state;
		params.paging_state_len = t->paging_len;
		params.nvalues = st->nbinds;
		params.values = t->values;
		spec.req = cqlfdw_remote_send_execute(&st->remote, spec.conn, spec.prep, &params);
	}
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
 * Make the columns of the result (as the prepared statement describes
 * them) convertible to the foreign table's columns; redone when Cassandra
 * reports changed result metadata.
 */
static void
setup_convs(CqlScanState *st, cql_prepared *p)
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

/* ---------------------------------------------------------------------
 * Bind values
 * ---------------------------------------------------------------------
 */

/*
 * datum_to_int64
 *		An int2, int4 or int8 Datum of type 'type' as int64.
 */
static int64
datum_to_int64(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

/*
 * encode_ann_vector
 *		The vector an ANN search orders by (ORDER BY v ANN OF ?).  A NULL or
 *		a vector of another dimension has no nearest neighbours: an error
 *		rather than an arbitrary or empty answer.
 */
static void
encode_ann_vector(CqlScanState *st, CqlConv *cv, Datum d, bool isnull, cql_value_ref *out)
{
	cql_buf		buf;

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the vector to search for is NULL"),
				 errdetail("ORDER BY a vector distance to NULL has no nearest rows."),
				 errhint("Give a vector of the column's dimension."),
				 errcontext("foreign table \"%s\"", st->relname)));
	cql_buf_init(&buf, &cqlfdw_palloc_allocator);
	if (cqlfdw_conv_write(cv, d, &buf) != CQLW_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("the vector to search for does not fit Cassandra type %s",
						cqlfdw_cql_type_string(cv->ctype)),
				 errhint("Give a vector of the column's dimension, without NaN or infinite elements."),
				 errcontext("foreign table \"%s\"", st->relname)));
	out->p = buf.data;
	out->n = (int32) buf.len;
}

/*
 * The conversion for a value of PostgreSQL type 'pgtype' bound to a marker
 * of CQL type 'ctype'.  Integers of any width go through int8 (the value
 * is range-checked against the CQL type when written).
 */
void
cqlfdw_init_bind_conv(const char *relname, CqlConv *cv, const cql_type *ctype,
					  Oid pgtype)
{
	Oid			t = (pgtype == INT2OID || pgtype == INT4OID) ? INT8OID : pgtype;

	if (!cqlfdw_conv_init(cv, ctype, t, -1))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("cannot compare Cassandra type %s with a value of type %s",
						cqlfdw_cql_type_string(ctype), format_type_be(pgtype)),
				 errcontext("foreign table \"%s\"", relname)));
}

/*
 * Encode one comparison value.  For a range bound that is not exactly
 * representable, the floor or ceiling selects the same rows: x > 10.5ms is
 * x > 10ms for millisecond values, x >= 10.5ms is x >= 11ms, and likewise
 * for integers compared with fractional numerics.  Returns false for an
 * equality that no CQL value can satisfy (the scan reads nothing).
 */
bool
cqlfdw_encode_bound(const char *relname, CqlConv *cv, CqlBindKind kind, Datum d,
					Oid type, cql_buf *out)
{
	bool		use_floor = (kind == CQLBIND_GT || kind == CQLBIND_LE);
	Datum		adjusted;

	if (type == INT2OID || type == INT4OID)
		d = Int64GetDatum(datum_to_int64(d, type));
	if (cqlfdw_conv_write(cv, d, out) == CQLW_OK)
		return true;
	/* equality and membership: a value no CQL value equals matches nothing */
	if (kind == CQLBIND_EQ || kind == CQLBIND_IN || kind == CQLBIND_CONTAINS ||
		kind == CQLBIND_CONTAINS_KEY || kind == CQLBIND_ENTRY || kind == CQLBIND_ENTRY_KEY)
		return false;

	switch (type)
	{
		case TIMESTAMPTZOID:
			{
				TimestampTz ts = DatumGetTimestampTz(d);
				int64		rem = ts % 1000;

				if (rem < 0)
					rem += 1000;
				if (rem != 0)
				{
					ts -= rem;
					if (!use_floor)
						ts += 1000;
				}
				adjusted = TimestampTzGetDatum(ts);
				break;
			}
		case NUMERICOID:
			adjusted = DirectFunctionCall1(use_floor ? numeric_floor : numeric_ceil, d);
			break;
		case TIMEOID:

			/*
			 * 24:00:00 is after every CQL time: as a range bound it is sent
			 * as the nanosecond count it stands for, which Cassandra
			 * compares (c < 24:00 is every row, c > 24:00 none).
			 */
			if (DatumGetTimeADT(d) == USECS_PER_DAY)
			{
				cql_encode_bigint(out, USECS_PER_DAY * 1000);
				return true;
			}
			adjusted = d;
			break;
		default:
			adjusted = d;
			break;
	}
	if (cqlfdw_conv_write(cv, adjusted, out) == CQLW_OK)
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("comparison value is out of range for Cassandra type %s",
					cqlfdw_cql_type_string(cv->ctype)),
			 errcontext("foreign table \"%s\"", relname)));
	return false;
}

/* Encoded element of an IN list, for dedup */
typedef struct InValue
{
	uint8_t    *p;
	int32		n;
} InValue;

/*
 * cmp_invalue
 *		qsort comparator of encoded IN elements: bytewise, a prefix first.
 *		Only equality matters (deduplication).
 */
static int
cmp_invalue(const void *a, const void *b)
{
	const InValue *x = a,
			   *y = b;
	int			c = memcmp(x->p, y->p, Min(x->n, y->n));

	return c != 0 ? c : (x->n > y->n) - (x->n < y->n);
}

/*
 * The distinct encoded elements of an IN array.  Duplicates must go:
 * reading a partition twice would return its rows twice.
 */
static InValue *
encode_in_list(CqlScanState *st, CqlConv *cv, Datum arr_datum, Oid elemtype,
			   int *count)
{
	ArrayType  *arr = DatumGetArrayTypeP(arr_datum);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	InValue    *vals;
	int			k = 0;

	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign, &elems, &nulls, &n);
	vals = palloc(sizeof(InValue) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		cql_buf		b;

		if (nulls[i])
			continue;
		cql_buf_init(&b, &cqlfdw_palloc_allocator);
		if (!cqlfdw_encode_bound(st->relname, cv, CQLBIND_IN, elems[i], elemtype, &b))
			continue;
		vals[k].p = b.data ? b.data : (uint8_t *) palloc(1);
		vals[k].n = (int32) b.len;
		k++;
	}
	qsort(vals, k, sizeof(InValue), cmp_invalue);
	n = k;
	k = 0;
	for (int i = 0; i < n; i++)
		if (k == 0 || cmp_invalue(&vals[k - 1], &vals[i]) != 0)
			vals[k++] = vals[i];
	*count = k;
	return vals;
}

/*
 * encode_buckets
 *		The bucket values of the scan (bucket.c), encoded for the bucket
 *		column's marker, in the order they are read.  False when the range
 *		is empty or a bound is NULL (no row can match).
 */
static bool
encode_buckets(CqlScanState *st, Datum *pvals, bool *pnulls,
			   cql_value_ref **out, int *nout)
{
	const CqlFdwTable *t = st->remote.table;
	AttrNumber	a = list_nth_int(st->bucket, FdwBucketAttnum);
	int			lo = list_nth_int(st->bucket, FdwBucketLoIndex);
	int			hi = list_nth_int(st->bucket, FdwBucketHiIndex);
	int			marker = -1;
	CqlBucketList list;

	if ((lo >= 0 && pnulls[lo]) || (hi >= 0 && pnulls[hi]))
		return false;
	if (list_length(st->bucket) > FdwBucketHashEq)
	{
		/* = on every source of a hash bucket: that one bucket */
		int			nsrc = list_length(st->bucket) - FdwBucketHashEq;
		Datum	   *vals = palloc(sizeof(Datum) * nsrc);
		Oid		   *types = palloc(sizeof(Oid) * nsrc);

		for (int i = 0; i < nsrc; i++)
		{
			int			e = list_nth_int(st->bucket, FdwBucketHashEq + i);

			if (pnulls[e])
				return false;
			vals[i] = pvals[e];
			types[i] = st->param_types[e];
		}
		list.n = 1;
		list.values = palloc(sizeof(Datum));
		list.values[0] = cqlfdw_bucket_hash_datum(t, a, vals, types);
	}
	else if (!cqlfdw_bucket_range(t, a,
							 lo >= 0, lo >= 0 ? pvals[lo] : (Datum) 0,
							 lo >= 0 ? st->param_types[lo] : InvalidOid,
							 list_nth_int(st->bucket, FdwBucketLoKind) != CQLBIND_GT,
							 hi >= 0, hi >= 0 ? pvals[hi] : (Datum) 0,
							 hi >= 0 ? st->param_types[hi] : InvalidOid,
							 list_nth_int(st->bucket, FdwBucketHiKind) != CQLBIND_LT,
							 list_nth_int(st->bucket, FdwBucketDescending) != 0,
							 list_nth_int(st->bucket, FdwBucketMax),
							 st->relname, &list))
		return false;
	for (int b = 0; b < st->nbinds; b++)
		if (st->binds[b].kind == CQLBIND_BUCKET)
			marker = b;
	Assert(marker >= 0);
	*out = palloc(sizeof(cql_value_ref) * list.n);
	*nout = list.n;
	for (int i = 0; i < list.n; i++)
	{
		cql_buf		buf;

		cql_buf_init(&buf, &cqlfdw_palloc_allocator);
		cqlfdw_conv_write_or_error(&st->bind_convs[marker], list.values[i], &buf);
		(*out)[i].p = buf.data;
		(*out)[i].n = (int32) buf.len;
	}
	return true;
}

/*
 * Build the task list of this (re)scan from the current parameter values.
 */
static void
build_tasks(CqlScanState *st, ExprContext *econtext)
{
	int			nparams = list_length(st->param_exprs);
	Datum	   *pvals = palloc0(sizeof(Datum) * Max(nparams, 1));
	bool	   *pnulls = palloc0(sizeof(bool) * Max(nparams, 1));
	cql_value_ref *base = palloc0(sizeof(cql_value_ref) * Max(st->nbinds, 1));
	InValue   **in_lists = palloc0(sizeof(InValue *) * Max(st->nbinds, 1));
	int		   *in_counts = palloc0(sizeof(int) * Max(st->nbinds, 1));
	int			ntasks = 1;
	int			ncombos;
	cql_value_ref *buckets = NULL;
	int			nbuckets = 1;
	int			i = 0;
	ListCell   *lc;
	int64		limit = -1;
	int64		offset = 0;

	foreach(lc, st->param_exprs)
	{
		ExprState  *es = (ExprState *) lfirst(lc);

		pvals[i] = ExecEvalExpr(es, econtext, &pnulls[i]);
		i++;
	}

	for (int b = 0; b < st->nbinds; b++)
	{
		CqlBindSpec *bs = &st->binds[b];
		CqlConv    *cv = &st->bind_convs[b];
		cql_buf		buf;

		switch (bs->kind)
		{
			case CQLBIND_TOKEN_LOW:
			case CQLBIND_TOKEN_HIGH:
			case CQLBIND_BUCKET:
				continue;		/* per task */
			case CQLBIND_LIMIT:
				if (!pnulls[bs->expr_index])
					limit = DatumGetInt64(pvals[bs->expr_index]);
				if (st->offset_index >= 0 && !pnulls[st->offset_index])
					offset = DatumGetInt64(pvals[st->offset_index]);
				if (limit < 0 || pnulls[bs->expr_index])
					limit = PG_INT32_MAX;
				else
					limit = Min((int64) PG_INT32_MAX, limit + Max(offset, 0));
				cql_buf_init(&buf, &cqlfdw_palloc_allocator);
				cql_encode_int(&buf, (int32) limit);
				base[b].p = buf.data;
				base[b].n = (int32) buf.len;
				continue;
			default:
				break;
		}

		if (bs->kind == CQLBIND_ANN)
		{
			encode_ann_vector(st, cv, pvals[bs->expr_index], pnulls[bs->expr_index],
							  &base[b]);
			continue;
		}

		/* a NULL comparison value matches nothing */
		if (pnulls[bs->expr_index])
		{
			st->empty = true;
			return;
		}

		if (bs->kind == CQLBIND_IN)
		{
			Oid			elemtype = get_element_type(st->param_types[bs->expr_index]);
			InValue    *vals;
			int			n;

			vals = encode_in_list(st, cv, pvals[bs->expr_index], elemtype, &n);
			if (n == 0)
			{
				st->empty = true;
				return;
			}
			if (st->remote.table->cols[bs->attnum - 1].kind == CQLCOL_PARTITION_KEY)
			{
				in_lists[b] = vals;
				in_counts[b] = n;
				ntasks *= n;
				continue;
			}
			/* clustering IN: one list value */
			cql_buf_init(&buf, &cqlfdw_palloc_allocator);
			cql_encode_collection_begin(&buf, n);
			for (int k = 0; k < n; k++)
				cql_encode_element(&buf, vals[k].p, vals[k].n);
			base[b].p = buf.data;
			base[b].n = (int32) buf.len;
			continue;
		}

		cql_buf_init(&buf, &cqlfdw_palloc_allocator);
		if (!cqlfdw_encode_bound(st->relname, cv, bs->kind, pvals[bs->expr_index],
								 st->param_types[bs->expr_index], &buf))
		{
			st->empty = true;
			return;
		}
		base[b].p = buf.data ? buf.data : (uint8_t *) palloc(1);
		base[b].n = (int32) buf.len;
	}

	if (st->access == CQLACC_TOKEN_SCAN)
	{
		int			nranges = cqlfdw_scan_range_count(st);

		st->tasks = palloc0(sizeof(CqlScanTask) * nranges);
		st->ntasks = nranges;
		for (int r = 0; r < nranges; r++)
		{
			CqlScanTask *t = &st->tasks[r];
			int64		low,
						high;
			cql_buf		buf;

			cqlfdw_token_range(r, nranges, &low, &high);

			t->values = palloc(sizeof(cql_value_ref) * Max(st->nbinds, 1));
			memcpy(t->values, base, sizeof(cql_value_ref) * st->nbinds);
			t->token_high = high;
			for (int b = 0; b < st->nbinds; b++)
			{
				if (st->binds[b].kind != CQLBIND_TOKEN_LOW &&
					st->binds[b].kind != CQLBIND_TOKEN_HIGH)
					continue;
				cql_buf_init(&buf, &cqlfdw_palloc_allocator);
				cql_encode_bigint(&buf, st->binds[b].kind == CQLBIND_TOKEN_LOW ? low : high);
				t->values[b].p = buf.data;
				t->values[b].n = (int32) buf.len;
			}
		}
		st->window = Min(Min(st->remote.opts.scan_window, CQLFDW_MAX_SCAN_WINDOW),
						 nranges);
		st->inflight = palloc(sizeof(int) * st->window);
		return;
	}

	/* buckets the scan enumerates: each a partition (per IN combination) */
	if (st->bucket != NIL &&
		!encode_buckets(st, pvals, pnulls, &buckets, &nbuckets))
	{
		st->empty = true;
		return;
	}
	ncombos = ntasks;
	ntasks *= nbuckets;

	/*
	 * One task per bucket and combination of partition-key IN values,
	 * buckets outermost: they are read in order, which is the rows' order
	 * on an ordered bucket scan.
	 */
	st->tasks = palloc0(sizeof(CqlScanTask) * ntasks);
	st->ntasks = ntasks;
	for (int t = 0; t < ntasks; t++)
	{
		CqlScanTask *task = &st->tasks[t];
		int			rest = t % ncombos;
		cql_elem   *parts = palloc(sizeof(cql_elem) * Max(st->remote.table->npk, 1));
		int			np = 0;

		task->values = palloc(sizeof(cql_value_ref) * Max(st->nbinds, 1));
		memcpy(task->values, base, sizeof(cql_value_ref) * st->nbinds);
		for (int b = 0; b < st->nbinds; b++)
		{
			if (st->binds[b].kind == CQLBIND_BUCKET)
			{
				task->values[b] = buckets[t / ncombos];
				continue;
			}
			if (in_lists[b] == NULL)
				continue;
			task->values[b].p = in_lists[b][rest % in_counts[b]].p;
			task->values[b].n = in_lists[b][rest % in_counts[b]].n;
			rest /= in_counts[b];
		}
		/* routing key: the partition-key values in key order */
		for (int b = 0; b < st->nbinds; b++)
		{
			if (st->binds[b].attnum > 0 &&
				st->remote.table->cols[st->binds[b].attnum - 1].kind == CQLCOL_PARTITION_KEY &&
				(st->binds[b].kind == CQLBIND_EQ || st->binds[b].kind == CQLBIND_IN ||
				 st->binds[b].kind == CQLBIND_BUCKET))
			{
				parts[np].p = task->values[b].p;
				parts[np].n = task->values[b].n;
				np++;
			}
		}
		task->routing_key = cqlfdw_routing_key(parts, np, &task->routing_len);
	}
	st->window = Min(MAX_PARTITIONS_IN_FLIGHT, ntasks);

	/*
	 * An ordered or limited bucket scan stops as soon as the executor has
	 * its rows: read the current bucket and prefetch one, not 32.
	 */
	if (st->bucket != NIL &&
		(list_nth_int(st->bucket, FdwBucketDirection) != 0 || limit >= 0))
		st->window = Min(2, ntasks);
	/* a merge needs the first page of every bucket */
	if (st->merge)
		st->window = ntasks;
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
	build_tasks(st, econtext);
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
			/* a read is idempotent: the same page again, maybe elsewhere */
			cql_retry_decision d = cqlfdw_remote_retry(&st->remote, &t->retry,
													   t->conn, s, &err, true);

			if (d == CQL_RETRY_NO)
				cqlfdw_remote_fail(&st->remote, t->conn, s, &err);
			if (d == CQL_RETRY_NEXT_HOST)
				t->conn = NULL;
			old = MemoryContextSwitchTo(st->batch_cxt);
			cqlfdw_scan_submit_page(st, t, true);
			MemoryContextSwitchTo(old);
			continue;
		}
		if (page->kind == CQL_RESULT_ROWS &&
			t->prep->metadata_changes != st->meta_changes)
			setup_convs(st, t->prep);
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
		/* an aggregate computed by Cassandra (upper.c) */
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
	st->fetch_size = intVal(list_nth(fsplan->fdw_private, FdwScanPrivateFetchSize));
	st->consistency = intVal(list_nth(fsplan->fdw_private, FdwScanPrivateConsistency));
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

	st->batch_cxt = AllocSetContextCreate(estate->es_query_cxt,
										  "cql_fdw scan batch",
										  ALLOCSET_DEFAULT_SIZES);
	/* types of bind markers and result columns, from the control node */
	st->meta_prep = cqlfdw_remote_prepare(&st->remote, NULL);
	cqlfdw_remote_check_binds(&st->remote, st->meta_prep, st->nbinds);
	st->convs = palloc0(sizeof(CqlConv) * Max(st->nretrieved, 1));
	setup_convs(st, st->meta_prep);

	/* ordered hash buckets: merged (the planner retrieved the keys) */
	if (st->bucket != NIL && list_nth_int(st->bucket, FdwBucketDirection) != 0 &&
		st->remote.table->cols[list_nth_int(st->bucket, FdwBucketAttnum) - 1].bucket.unit == CQLBUCKET_HASH)
		cqlfdw_merge_setup(st, list_nth_int(st->bucket, FdwBucketDirection));

	st->bind_convs = palloc0(sizeof(CqlConv) * Max(st->nbinds, 1));
	for (int b = 0; b < st->nbinds; b++)
	{
		CqlBindSpec *bs = &st->binds[b];
		const cql_type *ct = st->meta_prep->bind[b].type;
		Oid			vtype;

		if (bs->kind == CQLBIND_TOKEN_LOW || bs->kind == CQLBIND_TOKEN_HIGH ||
			bs->kind == CQLBIND_LIMIT)
			continue;
		if (bs->kind == CQLBIND_BUCKET)
		{
			/* values computed by bucket.c, of the bucket column's type */
			cqlfdw_init_bind_conv(st->relname, &st->bind_convs[b], ct,
								  st->remote.table->cols[bs->attnum - 1].pgtype);
			continue;
		}
		vtype = st->param_types[bs->expr_index];
		if (bs->kind == CQLBIND_IN)
		{
			vtype = get_element_type(vtype);
			/* clustering IN ?: the marker is a list of the column type */
			if (st->remote.table->cols[bs->attnum - 1].kind != CQLCOL_PARTITION_KEY &&
				(ct->id == CQL_TYPE_LIST || ct->id == CQL_TYPE_SET) && ct->nsub == 1)
				ct = ct->sub[0];
		}
		cqlfdw_init_bind_conv(st->relname, &st->bind_convs[b], ct, vtype);
	}
}

/*
 * combined_counts
 *		A count over the whole table (upper.c): every token range's count,
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

/*
 * cqlfdw_scan_partitions_read
 *		For EXPLAIN ANALYZE: the partitions (or token ranges) this scan
 *		has requested, over all its rescans; -1 when it never started.
 */
int64
cqlfdw_scan_partitions_read(ForeignScanState *node)
{
	CqlScanState *st = (CqlScanState *) node->fdw_state;

	return st ? st->partitions_read : -1;
}

/*-------------------------------------------------------------------------
 *
 * scan_bind.c
 *		The bind values of a scan's tasks: parameters evaluated and encoded
 *		into CQL values, IN lists deduplicated, buckets enumerated, and the
 *		task list built from them (one task per partition, bucket or token
 *		range).  Called by scan.c when a (re)scan starts; also used by
 *		direct modify (cqlfdw_init_bind_conv, cqlfdw_encode_bound).
 *
 * Bound values are converted exactly: a key value that no CQL value can
 * equal (a NULL, a timestamp with microseconds, an out-of-range integer)
 * makes an equality match nothing, without a round trip; a range bound that
 * is not representable is moved to the nearest representable value that
 * selects the same rows.
 *
 * IDENTIFICATION
 *		src/fdw/scan_bind.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "bucket.h"
#include "convert.h"
#include "cql_fdw.h"
#include "planner.h"
#include "remote.h"
#include "scan_int.h"

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
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	InValue    *vals;
	int			k = 0;

	cqlfdw_array_elements(DatumGetArrayTypeP(arr_datum), elemtype, &elems, &nulls, &n,
						  NULL, NULL);
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
 * cqlfdw_scan_build_tasks
 *		Build the task list of this (re)scan from the current parameter
 *		values: each task's bind values, routing key, and the window of
 *		tasks in flight.  Sets st->empty when no row can match.
 */
void
cqlfdw_scan_build_tasks(CqlScanState *st, ExprContext *econtext)
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
		int64		after = PG_INT64_MIN;

		/*
		 * cql_fdw.token_scan_after: the ranges up to that token are not
		 * read, the one holding it only after it (every participant of a
		 * parallel scan drops the same ones: GUCs reach the workers).
		 */
		(void) cqlfdw_token_scan_after(&after);
		st->tasks = palloc0(sizeof(CqlScanTask) * nranges);
		st->ntasks = 0;
		for (int r = 0; r < nranges; r++)
		{
			CqlScanTask *t = &st->tasks[st->ntasks];
			int64		low,
						high;
			cql_buf		buf;

			cqlfdw_token_range(r, nranges, &low, &high);
			if (high <= after)
				continue;
			low = Max(low, after);
			st->ntasks++;

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
		if (st->ntasks == 0)
		{
			st->empty = true;	/* after the last token: nothing to read */
			return;
		}
		st->window = Min(st->scan_window, st->ntasks);
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
 * cqlfdw_scan_init_bind_convs
 *		Converters of the bind markers' values (st->bind_convs), from the
 *		types of the parameters into the markers' CQL types as the
 *		statement prepared on the control connection (st->meta_prep)
 *		describes them; an IN marker's converter is that of its elements.
 *		Types that cannot be converted are reported here, before any row
 *		is read.
 */
void
cqlfdw_scan_init_bind_convs(CqlScanState *st)
{
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

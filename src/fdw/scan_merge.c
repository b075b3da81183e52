/*-------------------------------------------------------------------------
 *
 * scan_merge.c
 *		Merge of ordered hash buckets.
 *
 * Each bucket of a hash-bucketed partition comes back in clustering
 * order; an ORDER BY along it is answered by reading all buckets at once
 * and returning the smallest current row of any bucket, as a merge sort
 * does, instead of sorting everything locally.  The planner allows it for
 * at most CQLFDW_MAX_MERGE_BUCKETS buckets and makes the scan retrieve the
 * clustering columns.
 *
 * IDENTIFICATION
 *		src/fdw/scan_merge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "convert.h"
#include "scan_int.h"

/*
 * cqlfdw_merge_setup
 *		Plan-time facts the merge needs: the retrieved index, comparison
 *		function, collation and direction of each clustering column.
 */
void
cqlfdw_merge_setup(CqlScanState *st, int direction)
{
	const CqlFdwTable *t = st->remote.table;

	st->merge = true;
	st->nkeys = t->nck;
	st->key_col = palloc(sizeof(int) * Max(t->nck, 1));
	st->key_cmp = palloc(sizeof(FmgrInfo *) * Max(t->nck, 1));
	st->key_coll = palloc(sizeof(Oid) * Max(t->nck, 1));
	st->key_desc = palloc(sizeof(bool) * Max(t->nck, 1));
	for (int k = 0; k < t->nck; k++)
	{
		const CqlFdwColumn *c = &t->cols[t->ck[k] - 1];
		TypeCacheEntry *tc = lookup_type_cache(c->pgtype, TYPECACHE_CMP_PROC_FINFO);

		st->key_col[k] = -1;
		for (int i = 0; i < st->nretrieved; i++)
			if (st->retrieved[i] == t->ck[k])
				st->key_col[k] = i;
		if (st->key_col[k] < 0 || !OidIsValid(tc->cmp_proc_finfo.fn_oid))
			elog(ERROR, "cql_fdw: clustering column %d not retrieved for a merge", k);
		st->key_cmp[k] = &tc->cmp_proc_finfo;
		/* Cassandra orders text bytewise: so does the merge */
		st->key_coll[k] = OidIsValid(c->collation) ? C_COLLATION_OID : InvalidOid;
		st->key_desc[k] = c->desc != (direction < 0);
	}
}

/*
 * merge_load_keys
 *		Convert the clustering values of task t's current row, for
 *		comparisons (in the task's key context, reset row by row).
 */
static void
merge_load_keys(CqlScanState *st, CqlScanTask *t)
{
	MemoryContext old;

	if (t->key_cxt == NULL)
	{
		t->key_cxt = AllocSetContextCreate(st->batch_cxt, "cql_fdw merge keys",
										   ALLOCSET_SMALL_SIZES);
		t->keys = MemoryContextAlloc(st->batch_cxt, sizeof(Datum) * Max(st->nkeys, 1));
		t->keynulls = MemoryContextAlloc(st->batch_cxt, sizeof(bool) * Max(st->nkeys, 1));
	}
	MemoryContextReset(t->key_cxt);
	old = MemoryContextSwitchTo(t->key_cxt);
	for (int k = 0; k < st->nkeys; k++)
	{
		const cql_elem *cell = cql_result_cell(&t->page, t->row, st->key_col[k]);

		st->error_col = st->key_col[k];
		t->keys[k] = cqlfdw_conv_read(&st->convs[st->key_col[k]], cell->p, cell->n,
									  &t->keynulls[k]);
	}
	st->error_col = -1;
	MemoryContextSwitchTo(old);
}

/*
 * merge_advance
 *		Move task t to its next row, reading its next page when this one is
 *		used up.  False when the task has no rows left.
 */
static bool
merge_advance(CqlScanState *st, CqlScanTask *t, bool first)
{
	if (!first)
		t->row++;
	while (!t->have_page || t->row >= t->page.rows_count)
	{
		if (t->have_page)
		{
			cql_result_free(&t->page);
			t->have_page = false;
		}
		if (t->finished)
			return false;
		cqlfdw_scan_await_task_page(st, t, &t->page);
		t->have_page = true;
		t->row = 0;
	}
	merge_load_keys(st, t);
	return true;
}

/* Compare the current rows of two tasks in the merge's order */
static int
merge_compare(CqlScanState *st, CqlScanTask *a, CqlScanTask *b)
{
	for (int k = 0; k < st->nkeys; k++)
	{
		int			r;

		/* clustering values are never NULL; keep the comparison total */
		if (a->keynulls[k] || b->keynulls[k])
			r = (int) a->keynulls[k] - (int) b->keynulls[k];
		else
			r = DatumGetInt32(FunctionCall2Coll(st->key_cmp[k], st->key_coll[k],
												a->keys[k], b->keys[k]));
		if (r != 0)
			return st->key_desc[k] ? -r : r;
	}
	return 0;
}

/*
 * cqlfdw_merge_next
 *		The task whose current row comes next, or NULL at the end.  The
 *		first call brings every task to its first row; later calls advance
 *		the task returned before (merge_last).  A linear search: merges
 *		have at most MAX_MERGE_BUCKETS tasks.
 */
CqlScanTask *
cqlfdw_merge_next(CqlScanState *st)
{
	CqlScanTask *best = NULL;

	if (st->merge_last >= 0)
		(void) merge_advance(st, &st->tasks[st->merge_last], false);
	else
	{
		for (int i = 0; i < st->ntasks; i++)
			(void) merge_advance(st, &st->tasks[i], true);
	}
	for (int i = 0; i < st->ntasks; i++)
	{
		CqlScanTask *t = &st->tasks[i];

		if (!t->have_page)
			continue;
		if (best == NULL || merge_compare(st, t, best) < 0)
			best = t;
	}
	st->merge_last = best ? (int) (best - st->tasks) : -1;
	return best;
}

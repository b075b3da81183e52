/*-------------------------------------------------------------------------
 *
 * upper_rows.c
 *		The executor side of an aggregate computed by Cassandra (planned by
 *		upper_plan.c): the state of the aggregate scan, the converters of
 *		its result columns, and its rows made into the scan tuple; for a
 *		count over the whole table, the counts of the token ranges summed
 *		into one row.
 *
 * scan.c runs the statement like any scan (scan_task.c, scan_ranges.c)
 * and hands each row here.  A sum of no value becomes NULL (its count is
 * fetched alongside), and an aggregate of no row at all is PostgreSQL's
 * one row (count 0, the others NULL) when there is no GROUP BY.
 *
 * IDENTIFICATION
 *		src/fdw/upper_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/execnodes.h"
#include "utils/fmgrprotos.h"

#include "compat.h"
#include "convert.h"
#include "planner.h"
#include "scan_int.h"

/*
 * cqlfdw_upper_begin
 *		The executor state of an aggregate scan from its
 *		FdwScanPrivateUpper list: the range table entry of the foreign table
 *		among those the scan covers, and the scan tuple's descriptor (from
 *		fdw_scan_tlist).
 */
CqlUpperScan *
cqlfdw_upper_begin(ForeignScanState *node)
{
	ForeignScan *fsplan = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	List	   *upper = (List *) list_nth(fsplan->fdw_private, FdwScanPrivateUpper);
	Oid			relid = (Oid) intVal(list_nth(upper, FdwUpperRelid));
	CqlUpperScan *u = palloc0(sizeof(CqlUpperScan));
	List	   *kinds = (List *) list_nth(upper, FdwUpperKinds);
	Bitmapset  *relids = cqlfdw_scan_base_relids(fsplan);
	ListCell   *lc;
	int			i = 0;
	int			x = -1;

	while ((x = bms_next_member(relids, x)) >= 0)
	{
		if (exec_rt_fetch(x, estate)->relid == relid)
		{
			u->rtindex = x;
			break;
		}
	}
	if (u->rtindex == 0)
		elog(ERROR, "foreign table %u not found in the range table of an aggregate scan",
			 relid);
	u->grouped = intVal(list_nth(upper, FdwUpperGrouped)) != 0;
	u->combine = intVal(list_nth(upper, FdwUpperCombine)) != 0;
	u->sums = palloc0(sizeof(int64) * Max(list_length(kinds), 1));
	u->tupdesc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	u->kinds = palloc(sizeof(CqlUpperKind) * Max(list_length(kinds), 1));
	foreach(lc, kinds)
		u->kinds[i++] = (CqlUpperKind) lfirst_int(lc);
	return u;
}

/*
 * cqlfdw_upper_setup_convs
 *		Converters of the result columns of an aggregate scan: into the
 *		scan tuple's type, a sum into numeric first (its varint), a sum's
 *		count into bigint.
 */
void
cqlfdw_upper_setup_convs(CqlScanState *st, cql_prepared *p)
{
	CqlUpperScan *u = st->upper;

	for (int i = 0; i < st->nretrieved; i++)
	{
		Oid			type = INT8OID;
		int32		typmod = -1;
		char		colname[32];

		if (u->kinds[i] == CQLUP_SUM)
			type = NUMERICOID;
		else if (u->kinds[i] != CQLUP_SUM_COUNT)
		{
			Form_pg_attribute att = TupleDescAttr(u->tupdesc, st->retrieved[i] - 1);

			type = att->atttypid;
			typmod = att->atttypmod;
		}
		snprintf(colname, sizeof(colname), "aggregate %d", i + 1);
		cqlfdw_conv_init_or_error(&st->convs[i], p->cols[i].type, type, typmod,
								  st->relname, colname);
	}
}

/*
 * cqlfdw_upper_store_row
 *		Row 'row' of the page into the scan tuple.  A sum of no value
 *		(its count is 0) is NULL, as in PostgreSQL; a sum into bigint
 *		raises "bigint out of range" as PostgreSQL would.
 */
void
cqlfdw_upper_store_row(CqlScanState *st, cql_result *page, int32 row,
					   TupleTableSlot *slot)
{
	CqlUpperScan *u = st->upper;

	u->nrows++;
	for (int i = 0; i < st->nretrieved; i++)
	{
		const cql_elem *cell = cql_result_cell(page, row, i);
		AttrNumber	a = st->retrieved[i];
		Datum		d;
		bool		isnull;

		st->error_col = i;
		d = cqlfdw_conv_read(&st->convs[i], cell->p, cell->n, &isnull);
		if (u->kinds[i] == CQLUP_SUM_COUNT)
			continue;
		if (u->kinds[i] == CQLUP_SUM)
		{
			const cql_elem *count = cql_result_cell(page, row, i + 1);
			bool		cnull;
			Datum		n = cqlfdw_conv_read(&st->convs[i + 1], count->p, count->n,
											 &cnull);

			if (cnull || DatumGetInt64(n) == 0)
				isnull = true;
			else if (!isnull &&
					 TupleDescAttr(u->tupdesc, a - 1)->atttypid == INT8OID)
				d = DirectFunctionCall1(numeric_int8, d);
		}
		slot->tts_values[a - 1] = d;
		slot->tts_isnull[a - 1] = isnull;
	}
	st->error_col = -1;
}

/*
 * cqlfdw_upper_no_rows
 *		At the end of an aggregate scan: without GROUP BY, PostgreSQL's
 *		aggregate of no row is one row (count 0, the others NULL), also when
 *		the scan sent nothing because no row could match (a NULL key value).
 *		Returns whether the slot was filled so.
 */
bool
cqlfdw_upper_no_rows(CqlScanState *st, TupleTableSlot *slot)
{
	CqlUpperScan *u = st->upper;
	TupleDesc	desc = slot->tts_tupleDescriptor;

	if (u->grouped || u->nrows > 0)
		return false;
	u->nrows++;
	memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
	for (int i = 0; i < st->nretrieved; i++)
	{
		AttrNumber	a = st->retrieved[i];

		if (u->kinds[i] != CQLUP_COUNT)
			continue;
		slot->tts_values[a - 1] = Int64GetDatum(0);
		slot->tts_isnull[a - 1] = false;
	}
	return true;
}

/*
 * cqlfdw_upper_combine_row
 *		A whole-table count: add the counts of one token range's row.
 */
void
cqlfdw_upper_combine_row(CqlScanState *st, cql_result *page, int32 row)
{
	CqlUpperScan *u = st->upper;

	for (int i = 0; i < st->nretrieved; i++)
	{
		const cql_elem *cell = cql_result_cell(page, row, i);
		bool		isnull;
		Datum		d;

		st->error_col = i;
		d = cqlfdw_conv_read(&st->convs[i], cell->p, cell->n, &isnull);
		if (!isnull)
			u->sums[i] += DatumGetInt64(d);
	}
	st->error_col = -1;
}

/*
 * cqlfdw_upper_combined_row
 *		A whole-table count: the one row of sums into the slot, then zero
 *		for a rescan.
 */
void
cqlfdw_upper_combined_row(CqlScanState *st, TupleTableSlot *slot)
{
	CqlUpperScan *u = st->upper;

	u->nrows++;
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int i = 0; i < st->nretrieved; i++)
	{
		AttrNumber	a = st->retrieved[i];

		slot->tts_values[a - 1] = Int64GetDatum(u->sums[i]);
		slot->tts_isnull[a - 1] = false;
		u->sums[i] = 0;
	}
}

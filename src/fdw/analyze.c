/*-------------------------------------------------------------------------
 *
 * analyze.c
 *		ANALYZE of cql_fdw foreign tables.
 *
 * Cassandra keeps no statistics a client can use for row counts of a
 * table, so ANALYZE reads it: paged token-range scans of every column,
 * keeping a reservoir sample of rows (Vitter's algorithm, as core ANALYZE
 * and postgres_fdw do).  The ring is cut into ANALYZE_SUBRANGES equal
 * token ranges read in random order until the option analyze_rows (rows
 * read at most, default 1,000,000; 0 = no limit) is reached.  A table
 * smaller than that is read completely and its row count is exact; for a
 * larger one the count is extrapolated from the share of the ring read.
 * Murmur3 spreads partitions uniformly over the ring, so random ranges are
 * an unbiased sample of partitions (rows of one partition come together,
 * much like rows of one heap block in core ANALYZE).  Memory stays bounded
 * by one page plus the sample.
 *
 * IDENTIFICATION
 *		src/fdw/analyze.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "commands/vacuum.h"
#include "foreign/fdwapi.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sampling.h"

#include "analyze.h"
#include "compat.h"
#include "connection.h"
#include "convert.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "deparse.h"
#include "planner.h"
#include "remote.h"

/* equal token ranges ANALYZE chooses from (random order) */
#define ANALYZE_SUBRANGES	1024

typedef struct CqlAnalyzeState
{
	Relation	rel;
	TupleDesc	tupdesc;
	int			natts;
	AttrNumber *attnums;		/* retrieved columns */
	CqlConv    *convs;
	HeapTuple  *rows;			/* the sample */
	int			targrows;
	int			numrows;
	double		samplerows;		/* rows seen */
	double		rowstoskip;
	ReservoirStateData rstate;
	MemoryContext anl_cxt;		/* the sample lives here */
	MemoryContext temp_cxt;		/* per row */
} CqlAnalyzeState;

/*
 * sample_row
 *		Offer row 'row' of page to the reservoir sample.
 *
 * While the sample is not full the row is added; after that it replaces a
 * random member when Vitter's algorithm says so.  Rows that are skipped are
 * not converted.  The caller has checked the page (cqlfdw_check_rows) and
 * made a per-row context current: the Datums are built there, only the
 * formed tuple goes to anl_cxt.
 */
static void
sample_row(CqlAnalyzeState *as, const cql_result *page, int32 row)
{
	Datum	   *values = palloc0(sizeof(Datum) * as->tupdesc->natts);
	bool	   *nulls = palloc(sizeof(bool) * as->tupdesc->natts);
	int			pos = -1;
	bool		replace = false;
	MemoryContext old;

	as->samplerows += 1;
	if (as->numrows < as->targrows)
		pos = as->numrows++;
	else
	{
		/* Vitter: skip rows, then replace a random member of the sample */
		if (as->rowstoskip < 0)
			as->rowstoskip = reservoir_get_next_S(&as->rstate, as->samplerows,
												  as->targrows);
		if (as->rowstoskip <= 0)
		{
			pos = (int) (as->targrows * sampler_random_fract(&as->rstate.randstate));
			replace = true;
		}
		as->rowstoskip -= 1;
	}
	if (pos < 0)
		return;

	memset(nulls, true, sizeof(bool) * as->tupdesc->natts);
	for (int i = 0; i < as->natts; i++)
	{
		const cql_elem *cell = cql_result_cell(page, row, i);
		AttrNumber	a = as->attnums[i];

		values[a - 1] = cqlfdw_conv_read(&as->convs[i], cell->p, cell->n, &nulls[a - 1]);
	}
	old = MemoryContextSwitchTo(as->anl_cxt);
	if (replace)
		heap_freetuple(as->rows[pos]);
	as->rows[pos] = heap_form_tuple(as->tupdesc, values, nulls);
	MemoryContextSwitchTo(old);
}

/*
 * sample_rows
 *		Read the table's token ranges in random order into a reservoir
 *		sample of targrows rows (Vitter), stopping after the option
 *		analyze_rows rows, and extrapolate the total from the share of the
 *		ring read.
 */
/*
 * sample_page
 *		Offer every row of one page to the sampler; the page is freed on
 *		every path.  (A function of its own rather than a PG_TRY nested in
 *		sample_rows' PG_TRY: nested ones shadow each other's locals.)
 */
static void
sample_page(CqlAnalyzeState *as, cql_result *page, Relation relation,
			const char *cql)
{
	PG_TRY();
	{
		cqlfdw_check_rows(page, Max(as->natts, 1), as->convs, as->natts,
						  RelationGetRelationName(relation), cql);
		for (int32 row = 0; row < page->rows_count; row++)
		{
			MemoryContext old = MemoryContextSwitchTo(as->temp_cxt);

			cqlfdw_analyze_delay_point();
			sample_row(as, page, row);
			MemoryContextSwitchTo(old);
			MemoryContextReset(as->temp_cxt);
		}
	}
	PG_FINALLY();
	{
		cql_result_free(page);
	}
	PG_END_TRY();
}

static int
sample_rows(CqlRemote *remote, Relation relation, int elevel, HeapTuple *rows,
			int targrows, double *totalrows, double *totaldeadrows)
{
	CqlFdwTable *t;
	CqlScanShape shape;
	Bitmapset  *all = NULL;
	List	   *retrieved;
	char	   *cql;
	CqlAnalyzeState as;
	cql_prepared *meta;
	cql_error	err;
	cql_status	st;
	int			nranges;
	int		   *order;
	int			nread = 0;
	ListCell   *lc;
	int			i;

	t = remote->table;

	/* every column, over token ranges */
	memset(&shape, 0, sizeof(shape));
	shape.access = CQLACC_TOKEN_SCAN;
	all = bms_add_member(all, 0 - FirstLowInvalidHeapAttributeNumber);
	cql = cqlfdw_deparse_select(t, &shape, all, 0, false, &retrieved);
	remote->cql = cql;

	memset(&as, 0, sizeof(as));
	as.rel = relation;
	as.tupdesc = RelationGetDescr(relation);
	as.rows = rows;
	as.targrows = targrows;
	as.rowstoskip = -1;
	as.anl_cxt = CurrentMemoryContext;
	as.temp_cxt = AllocSetContextCreate(CurrentMemoryContext, "cql_fdw analyze row",
										ALLOCSET_SMALL_SIZES);
	reservoir_init_selection_state(&as.rstate, targrows);
	as.natts = list_length(retrieved);
	as.attnums = palloc(sizeof(AttrNumber) * Max(as.natts, 1));
	as.convs = palloc0(sizeof(CqlConv) * Max(as.natts, 1));

	cql_error_clear(&err);
	meta = cqlfdw_remote_prepare(remote, NULL);
	if (meta->ncols != Max(as.natts, 1))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INCONSISTENT_DESCRIPTOR_INFORMATION),
				 errmsg("Cassandra table \"%s\".\"%s\" returned %d columns where foreign table \"%s\" expects %d",
						t->keyspace, t->table, meta->ncols,
						RelationGetRelationName(relation), Max(as.natts, 1)),
				 errhint("The Cassandra table has changed; recreate the foreign table with IMPORT FOREIGN SCHEMA.")));
	i = 0;
	foreach(lc, retrieved)
	{
		Form_pg_attribute att = TupleDescAttr(as.tupdesc, lfirst_int(lc) - 1);

		as.attnums[i] = lfirst_int(lc);
		cqlfdw_conv_init_column(&as.convs[i], meta->cols[i].type, t,
								lfirst_int(lc), att->atttypid, att->atttypmod,
								RelationGetRelationName(relation),
								NameStr(att->attname));
		i++;
	}

	/* the ranges in random order (Fisher-Yates, ANALYZE's own PRNG) */
	nranges = Max(ANALYZE_SUBRANGES, cqlfdw_token_range_count(remote->entry->cluster));
	order = palloc(sizeof(int) * nranges);
	for (int r = 0; r < nranges; r++)
		order[r] = r;
	for (int r = nranges - 1; r > 0; r--)
	{
		int			j = (int) ((r + 1) * sampler_random_fract(&as.rstate.randstate));
		int			tmp = order[r];

		order[r] = order[Min(j, r)];
		order[Min(j, r)] = tmp;
	}

	for (int k = 0; k < nranges; k++)
	{
		int			r = order[k];

		int64		low,
					high;
		cql_buf		lowb,
					highb;
		cql_value_ref vals[2];
		cql_query_params params;
		cql_conn   *conn;
		cql_prepared *prep;
		cql_pager	pager;

		cqlfdw_token_range(r, nranges, &low, &high);
		cql_buf_init(&lowb, &cqlfdw_palloc_allocator);
		cql_buf_init(&highb, &cqlfdw_palloc_allocator);
		cql_encode_bigint(&lowb, low);
		cql_encode_bigint(&highb, high);
		vals[0].p = lowb.data;
		vals[0].n = (int32) lowb.len;
		vals[1].p = highb.data;
		vals[1].n = (int32) highb.len;

		conn = cqlfdw_remote_conn_for_token(remote, NULL, &high);
		prep = cqlfdw_remote_prepare(remote, conn);

		cql_query_params_init(&params);
		params.consistency = remote->opts.consistency;
		params.page_size = remote->opts.fetch_size;
		params.nvalues = 2;
		params.values = vals;
		cql_pager_init(&pager, conn, NULL, prep, &params);
		PG_TRY();
		{
			CqlRetry	rt;

			cqlfdw_retry_start(&rt);
			while (!pager.done)
			{
				cql_result	page;

				memset(&page, 0, sizeof(page));
				st = cql_pager_next(&pager, &page, &err);
				if (st == CQL_ERR_INTERRUPTED)
					cqlfdw_check_interrupts();
				if (st != CQL_OK)
				{
					/* a read: the same page again, from its paging state */
					cql_retry_decision d = cqlfdw_remote_retry(remote, &rt, pager.conn,
															   st, &err, true);

					if (d == CQL_RETRY_NO)
						cqlfdw_remote_fail(remote, pager.conn, st, &err);
					if (d == CQL_RETRY_NEXT_HOST)
					{
						pager.conn = cqlfdw_remote_conn_for_token(remote, &rt, &high);
						pager.prepared = cqlfdw_remote_prepare(remote, pager.conn);
					}
					continue;
				}
				cqlfdw_retry_start(&rt);
				sample_page(&as, &page, relation, cql);
			}
		}
		PG_FINALLY();
		{
			cql_pager_free(&pager);
		}
		PG_END_TRY();
		nread++;
		if (remote->opts.analyze_rows > 0 && as.samplerows >= remote->opts.analyze_rows)
			break;
	}

	/* extrapolate from the share of the ring read */
	*totalrows = (nread < nranges) ? floor(as.samplerows * nranges / nread + 0.5)
		: as.samplerows;
	*totaldeadrows = 0;
	ereport(elevel,
			(errmsg("\"%s\": read %.0f rows in %d of %d token ranges, %d rows in sample, %s %.0f total rows",
					RelationGetRelationName(relation), as.samplerows, nread, nranges,
					as.numrows, nread < nranges ? "estimated" : "exactly",
					*totalrows)));
	return as.numrows;
}

/*
 * cql_acquire_sample_rows
 *		AcquireSampleRowsFunc: sample_rows with the table's remote-statement
 *		handle, released also when ANALYZE fails.
 */
static int
cql_acquire_sample_rows(Relation relation, int elevel, HeapTuple *rows,
						int targrows, double *totalrows, double *totaldeadrows)
{
	CqlRemote	remote;
	int			n = 0;

	/* ANALYZE runs as the table owner (do_analyze_rel switched to it) */
	cqlfdw_remote_open_rel(&remote, relation, GetUserId(), NULL);
	PG_TRY();
	{
		n = sample_rows(&remote, relation, elevel, rows, targrows, totalrows,
						totaldeadrows);
	}
	PG_FINALLY();
	{
		cqlfdw_remote_release(&remote);
	}
	PG_END_TRY();
	return n;
}

/*
 * cqlAnalyzeForeignTable
 *		AnalyzeForeignTable callback: every cql_fdw table can be analyzed,
 *		by cql_acquire_sample_rows.
 *
 * A Cassandra table has no pages; *totalpages is 1, and the row count comes
 * from the sampler.
 */
bool
cqlAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func,
					   BlockNumber *totalpages)
{
	*func = cql_acquire_sample_rows;
	*totalpages = 1;
	return true;
}

/*-------------------------------------------------------------------------
 *
 * scan_int.h
 *		The state of a cql_fdw foreign scan, shared by scan.c,
 *		scan_task.c, scan_bind.c, scan_merge.c, scan_ranges.c, scan_async.c
 *		and upper_rows.c (not for other files).
 *
 * IDENTIFICATION
 *		src/fdw/scan_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_SCAN_INT_H
#define CQL_FDW_SCAN_INT_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/pg_list.h"
#include "utils/rel.h"

#include "convert.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "remote.h"

/* partition requests in flight at once for an IN list */
#define MAX_PARTITIONS_IN_FLIGHT 32

/* One remote statement execution (a partition or a token range) */
typedef struct CqlScanTask
{
	cql_value_ref *values;		/* bind values of this task */
	const uint8_t *routing_key; /* NULL: route by token_high or anywhere */
	size_t		routing_len;
	int64		token_high;		/* token scan */
	cql_conn   *conn;
	cql_prepared *prep;
	cql_request *req;			/* page in flight, or NULL */
	CqlRetry	retry;			/* of the page in flight */
	uint8_t    *paging_state;	/* palloc'd in batch_cxt */
	int32		paging_len;
	int			page_size;		/* 0: the scan's fetch_size; less after a
								 * page met too many tombstones */
	bool		submitted;
	bool		finished;
	/* merge of ordered hash buckets: this task's current page and row */
	cql_result	page;
	bool		have_page;
	int32		row;
	Datum	   *keys;			/* clustering values of that row */
	bool	   *keynulls;
	MemoryContext key_cxt;
	/* token-order scan: pages received ahead of the range's turn */
	cql_result *ahead;			/* CQLFDW_RANGE_AHEAD of them, a ring */
	int			ahead_first;
	int			nahead;
} CqlScanTask;

/*
 * Pages a range of a token-order scan may hold while a lower range is
 * being returned (one more may be in flight): enough that the window keeps
 * Cassandra busy, few enough that memory stays bounded (scan_window ranges
 * times this many pages of fetch_size rows).
 */
#define CQLFDW_RANGE_AHEAD		4

/* One bind marker as planned */
typedef struct CqlBindSpec
{
	CqlBindKind kind;
	AttrNumber	attnum;
	int			expr_index;		/* into param_exprs, -1 for tokens */
} CqlBindSpec;

/* A result column of an aggregate scan (upper_rows.c) */
typedef enum CqlUpperKind
{
	CQLUP_VALUE,				/* a grouping column, min or max */
	CQLUP_COUNT,				/* count(*) or count(col): 0 of no row */
	CQLUP_SUM,					/* sum(CAST(col AS varint)): NULL when the
								 * next column (its count) is 0 */
	CQLUP_SUM_COUNT				/* count(col) of the sum before: not stored */
} CqlUpperKind;

/* Executor state of an aggregate scan (scanrelid 0) */
typedef struct CqlUpperScan
{
	Index		rtindex;		/* the foreign table */
	bool		grouped;		/* GROUP BY: no row means no group */
	TupleDesc	tupdesc;		/* of the scan tuple (fdw_scan_tlist) */
	CqlUpperKind *kinds;		/* per result column */
	int64		nrows;			/* rows returned by this (re)scan */
	bool		combine;		/* a count per token range: sum them */
	int64	   *sums;			/* per result column, while combining */
} CqlUpperScan;

typedef struct CqlScanState
{
	/* statement, user, options, layout, connection (remote.c) */
	CqlRemote	remote;

	/* plan */
	CqlAccess	access;
	int			nbinds;
	CqlBindSpec *binds;
	int			fetch_size;		/* page size */
	int			consistency;
	int			scan_window;	/* token ranges in flight at most, clamped
								 * to CQLFDW_MAX_SCAN_WINDOW */
	int			offset_index;
	List	   *bucket;			/* FdwScanPrivateBucket, or NIL */
	List	   *param_exprs;	/* ExprState per fdw_exprs entry */
	Oid		   *param_types;

	/* relation */
	Relation	rel;
	CqlUpperScan *upper;		/* an aggregate scan (upper_rows.c), or NULL */
	const char *expected_warning;	/* a Cassandra warning the requests
									 * ask for on purpose, or NULL */
	bool		tombstone_warned;	/* smaller pages reported (once a scan) */
	int			nretrieved;
	AttrNumber *retrieved;

	/* prepared statement */
	cql_prepared *meta_prep;	/* prepared on the control connection */
	CqlConv    *convs;			/* per retrieved column */
	CqlConv    *bind_convs;		/* per bind marker (element conv for IN) */
	int			meta_changes;	/* prepared->metadata_changes seen */

	/* per (re)scan */
	MemoryContext batch_cxt;
	bool		started;
	bool		empty;			/* no row can match: no request at all */
	CqlScanTask *tasks;
	int			ntasks;
	int			current;		/* task whose rows are being returned */
	int			next_submit;	/* first task not yet submitted */
	int64		partitions_read;	/* tasks submitted, over rescans */
	int			window;			/* tasks in flight at most */
	cql_result	page;
	bool		have_page;
	int32		row;

	/*
	 * Token scan (scan_ranges.c): up to 'window' ranges in flight, their
	 * pages returned as they arrive; with parallel workers, the ranges are
	 * handed out from shared memory.
	 */
	int		   *inflight;		/* task numbers with a page requested */
	int			ninflight;
	int			rr;				/* where the search for an answer starts */
	bool		claims_done;	/* no range left to claim */
	struct CqlParallelScan *pscan;	/* DSM of a parallel scan, or NULL */

	/* asynchronous execution under an Append (scan_async.c) */
	int			async_fd;		/* epoll set of the sockets waited on, -1 */
	int			async_timer;	/* timerfd in that set, -1 */
	int		   *async_socks;	/* sockets in the set (ASYNC_MAX_CONNS) */
	int			async_nsocks;
	MemoryContextCallback *async_cb;	/* closes them with batch_cxt */

	/* merge of ordered hash buckets (each task sorted, merged by key) */
	bool		merge;
	int			merge_last;		/* task of the row returned last, -1 */
	int			nkeys;
	int		   *key_col;		/* retrieved index of each clustering column */
	FmgrInfo  **key_cmp;		/* its btree comparison */
	Oid		   *key_coll;
	bool	   *key_desc;		/* compare reversed */

	/* error context */
	const char *relname;
	int			error_col;		/* retrieved index being converted, -1 */
} CqlScanState;

/* scan_task.c: one task's requests */
extern bool cqlfdw_scan_task_ready(const CqlScanTask *t);
extern int	cqlfdw_scan_wait_limit(const CqlScanState *st, int max_ms);
extern void cqlfdw_scan_pump(cql_conn *conn, int timeout_ms);
extern void cqlfdw_scan_submit_page(CqlScanState *st, CqlScanTask *t,
									bool retrying);
extern void cqlfdw_scan_await_task_page(CqlScanState *st, CqlScanTask *t,
										cql_result *page);
extern void cqlfdw_scan_setup_convs(CqlScanState *st, cql_prepared *p);

/* scan_bind.c: bind values and the task list */
extern void cqlfdw_scan_init_bind_convs(CqlScanState *st);
extern void cqlfdw_scan_build_tasks(CqlScanState *st, ExprContext *econtext);

/* scan.c */
extern bool cqlfdw_scan_would_wait(ForeignScanState *node, cql_conn **conns,
								   int max, int *nconns);

/* scan_ranges.c */
extern int	cqlfdw_scan_range_count(CqlScanState *st);
extern void cqlfdw_ranges_start(CqlScanState *st);
extern bool cqlfdw_ranges_next_page(CqlScanState *st);
extern bool cqlfdw_ranges_would_wait(CqlScanState *st, cql_conn **conns,
									 int max, int *nconns);

/* upper_rows.c */
extern CqlUpperScan *cqlfdw_upper_begin(ForeignScanState *node);
extern void cqlfdw_upper_setup_convs(CqlScanState *st, cql_prepared *p);
extern void cqlfdw_upper_store_row(CqlScanState *st, cql_result *page,
								   int32 row, TupleTableSlot *slot);
extern bool cqlfdw_upper_no_rows(CqlScanState *st, TupleTableSlot *slot);
extern void cqlfdw_upper_combine_row(CqlScanState *st, cql_result *page,
									 int32 row);
extern void cqlfdw_upper_combined_row(CqlScanState *st, TupleTableSlot *slot);

/* scan_merge.c */
extern void cqlfdw_merge_setup(CqlScanState *st, int direction);
extern CqlScanTask *cqlfdw_merge_next(CqlScanState *st);

#endif							/* CQL_FDW_SCAN_INT_H */

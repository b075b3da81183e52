/*-------------------------------------------------------------------------
 *
 * planner.h
 *		Planner and executor callbacks of cql_fdw and the layout of the
 *		fdw_private list they share.
 *
 * IDENTIFICATION
 *		src/fdw/planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_PLANNER_H
#define CQL_FDW_PLANNER_H

#include "foreign/fdwapi.h"
#include "nodes/pathnodes.h"

#include "compat.h"
#include "cql_cluster.h"
#include "convert.h"
#include "cql_fdw.h"
#include "deparse.h"

/*
 * fdw_private of a cql_fdw ForeignScan: only Node trees, so that plans can
 * be copied and serialized.  (A ForeignScan that direct_modify.c turned
 * into an UPDATE or DELETE has its own layout, defined there.)
 */
enum FdwScanPrivateIndex
{
	FdwScanPrivateCql,			/* String: remote statement */
	FdwScanPrivateRetrievedAttrs,	/* IntList: attnums in SELECT order */
	FdwScanPrivateAccess,		/* Integer: CqlAccess */
	FdwScanPrivateBinds,		/* List of IntList (kind, attnum, expr index) */
	FdwScanPrivateNPartitions,	/* Integer: partitions read, -1 unknown */
	FdwScanPrivatePageMin,		/* Integer: least page size the plan needs
								 * (an ANN search's k + 1), 0; the options
								 * (fetch_size, consistency, scan_window)
								 * come with the statement handle */
	FdwScanPrivateOffsetIndex,	/* Integer: fdw_exprs index of OFFSET, -1 */
	FdwScanPrivateFiltering,	/* Integer: ALLOW FILTERING used */
	FdwScanPrivateBucket,		/* IntList (FdwBucketIndex), or NIL */
	FdwScanPrivateIndex,		/* String: SAI index used, "" for none */
	FdwScanPrivateAnn,			/* String: EXPLAIN text of an ANN search,
								 * "" for none */
	FdwScanPrivateIndexRefused, /* String: an index the node's guardrail
								 * refuses without the partition key, "" */
	FdwScanPrivateUpper			/* List (FdwUpperIndex) of an aggregate
								 * computed remotely (upper_plan.c), or NIL */
};

/*
 * An aggregate scan (scanrelid 0, upper.c): its RetrievedAttrs are the
 * attribute numbers in the scan tuple (fdw_scan_tlist) of the remote
 * result columns.
 */
enum FdwUpperIndex
{
	FdwUpperRelid,				/* Integer: the foreign table's OID (its
								 * RT index is found in fs_relids) */
	FdwUpperGrouped,			/* Integer: has GROUP BY (no row: no group) */
	FdwUpperKinds,				/* IntList: CqlUpperKind per result column */
	FdwUpperRelations,			/* String: EXPLAIN's "Aggregate on (t)" */
	FdwUpperCombine				/* Integer: counts per token range, summed */
};

/* the bucket column a scan enumerates (bucket.c) */
enum FdwBucketIndex
{
	FdwBucketAttnum,			/* the bucket column */
	FdwBucketLoIndex,			/* fdw_exprs index of the lower bound, -1 */
	FdwBucketLoKind,			/* CQLBIND_GE, GT or EQ (source = v) */
	FdwBucketHiIndex,			/* fdw_exprs index of the upper bound, -1 */
	FdwBucketHiKind,			/* CQLBIND_LE, LT or EQ */
	FdwBucketDirection,			/* 0 any order, 1 declared, -1 reversed */
	FdwBucketDescending,		/* 1: newest bucket first */
	FdwBucketMax,				/* max_buckets */
	FdwBucketHashEq				/* then: fdw_exprs indexes of the values
								 * of = on every source of a hash bucket */
};

/*
 * Planner state of a foreign base relation (baserel->fdw_private):
 * planner_rel.c fills it once per relation, the planner's callbacks read it
 */
typedef struct CqlFdwRelationInfo
{
	CqlFdwOptions opts;
	CqlFdwTable *table;
	Oid			userid;
	CqlScanShape shape;			/* classification of baserestrictinfo */
	Bitmapset  *attrs_used;
} CqlFdwRelationInfo;

/* in planner_rel.c */
extern Oid	cqlfdw_planner_userid(PlannerInfo *root, Index rtindex);
extern CqlFdwRelationInfo *cqlfdw_plan_rel(PlannerInfo *root, RelOptInfo *baserel,
										   Oid foreigntableid);
extern void cqlfdw_planned_rel(RelOptInfo *baserel, const CqlFdwTable **t,
							   const CqlFdwOptions **opts,
							   const CqlScanShape **shape);
extern List *cqlfdw_shape_binds(const CqlFdwTable *t,
								const CqlScanShape *shape,
								List **fdw_exprs);

/* in planner.c */
extern void cqlGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel,
								 Oid foreigntableid);
extern void cqlGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel,
							   Oid foreigntableid);
extern ForeignScan *cqlGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel,
									  Oid foreigntableid, ForeignPath *best_path,
									  List *tlist, List *scan_clauses,
									  Plan *outer_plan);

/* in upper_plan.c */
extern void cqlGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage,
									RelOptInfo *input_rel, RelOptInfo *output_rel,
									void *extra);
extern ForeignScan *cqlfdw_upper_plan(PlannerInfo *root, RelOptInfo *upperrel,
									  ForeignPath *best_path, List *tlist);

/* in scan_ranges.c */
extern int	cqlfdw_token_range_count(cql_cluster *cluster);
extern void cqlfdw_token_range(int r, int nranges, int64 *low, int64 *high);
extern bool cqlIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *rel,
										 RangeTblEntry *rte);
extern Size cqlEstimateDSMForeignScan(ForeignScanState *node,
									  ParallelContext *pcxt);
extern void cqlInitializeDSMForeignScan(ForeignScanState *node,
										ParallelContext *pcxt, void *coordinate);
extern void cqlReInitializeDSMForeignScan(ForeignScanState *node,
										  ParallelContext *pcxt, void *coordinate);
extern void cqlInitializeWorkerForeignScan(ForeignScanState *node,
										   shm_toc *toc, void *coordinate);

/*
 * cqlfdw_async_supported
 *		Can this build run scans asynchronously (scan_async.c: epoll and
 *		timerfd, Linux only)?  A constant, so that the planner and the
 *		parallel-safety check ask it without calling into the scan.
 */
static inline bool
cqlfdw_async_supported(void)
{
#ifdef __linux__
	return true;
#else
	return false;
#endif
}

/* in scan_async.c */
extern void cqlForeignAsyncRequest(AsyncRequest *areq);
extern void cqlForeignAsyncConfigureWait(AsyncRequest *areq);
extern void cqlForeignAsyncNotify(AsyncRequest *areq);
extern bool cqlIsForeignPathAsyncCapable(ForeignPath *path);

/* in scan.c */
extern void cqlfdw_init_bind_conv(const char *relname, CqlConv *cv,
								  const cql_type *ctype, Oid pgtype);
extern bool cqlfdw_encode_bound(const char *relname, CqlConv *cv, CqlBindKind kind,
								Datum d, Oid type, cql_buf *out);
extern void cqlBeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *cqlIterateForeignScan(ForeignScanState *node);
extern void cqlReScanForeignScan(ForeignScanState *node);
extern void cqlEndForeignScan(ForeignScanState *node);
extern void cqlExplainForeignScan(ForeignScanState *node, ExplainState *es);

#endif							/* CQL_FDW_PLANNER_H */

/*-------------------------------------------------------------------------
 *
 * planner.c
 *		Planner callbacks of cql_fdw: size estimates, access paths (plain,
 *		ordered, parameterized) and the plan.  The relation's resolved
 *		options, layout and classification: planner_rel.c; EXPLAIN of the
 *		scan: scan.c.
 *
 * The costs encode one idea: reading one partition is a single round trip
 * to a replica, reading N partitions is N of them (pipelined), and a token
 * range scan reads the whole table.  Single-partition reads are therefore
 * far cheaper than multi-partition reads and those far cheaper than token
 * scans, and a join on the partition key is planned as per-key lookups
 * (a parameterized path) rather than a scan of the whole table.
 *
 * IDENTIFICATION
 *		src/fdw/planner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/sysattr.h"
#include "miscadmin.h"
#include "commands/defrem.h"
#include "foreign/fdwapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bucket.h"
#include "compat.h"
#include "connection.h"
#include "cql_fdw.h"
#include "deparse.h"
#include "planner.h"
#include "timeuuid.h"
#include "vector_search.h"
#include "write_metadata.h"

/* Cost model (see file header) */
#define CQL_REQUEST_COST		25.0	/* one round trip to a replica */
#define CQL_TOKEN_SCAN_COST		10000.0 /* startup of a whole-table scan */
#define CQL_INDEX_SCAN_COST		1000.0	/* an SAI lookup over the token ranges */
#define CQL_TUPLE_COST			0.05	/* transfer + conversion per row */
#define CQL_UNKNOWN_PARTITIONS	10	/* IN list of unknown length */
#define CQL_DEFAULT_TUPLES		1000.0	/* never analyzed */

/* fdw_private of a ForeignPath */
enum FdwPathPrivateIndex
{
	FdwPathPrivateOrder,		/* 0, 1 (declared) or -1 (reversed) */
	FdwPathPrivateLimit,		/* push LIMIT (0/1) */
	FdwPathPrivateAnn			/* optional: an ANN search (vector_search.c) */
};

/*
 * cqlGetForeignRelSize
 *		GetForeignRelSize callback.
 *
 * Resolves the options and the table layout and classifies baserestrictinfo
 * (cqlfdw_plan_rel, kept in fpinfo for GetForeignPaths), and estimates the
 * rows with the selectivity of all restrictions over reltuples,
 * CQL_DEFAULT_TUPLES when the table was never analyzed.
 */
void
cqlGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	(void) cqlfdw_plan_rel(root, baserel, foreigntableid);

	/* ANALYZE gives reltuples; without it assume a modest table */
	if (baserel->tuples < 0)
		baserel->tuples = CQL_DEFAULT_TUPLES;
	set_baserel_size_estimates(root, baserel);
}

/* Requests a scan of this shape sends before the first row */
static double
shape_requests(const CqlScanShape *shape)
{
	switch (shape->access)
	{
		case CQLACC_SINGLE_PARTITION:
			return 1;
		case CQLACC_MULTI_PARTITION:
			return shape->npartitions >= 0 ? shape->npartitions : CQL_UNKNOWN_PARTITIONS;
		case CQLACC_TOKEN_SCAN:
		case CQLACC_INDEX_SCAN:
		case CQLACC_ANN_SEARCH:
			break;
	}
	return 0;
}

/*
 * shape_costs
 *		Startup and total cost of a scan of this shape that returns rows of
 *		a table of tuples.
 *
 * A token scan pays CQL_TOKEN_SCAN_COST and transfers every row of the
 * table; a partition read pays one CQL_REQUEST_COST per partition
 * (CQL_UNKNOWN_PARTITIONS for an IN list of unknown length) and transfers
 * only the rows it returns, plus ten times CQL_TUPLE_COST per row with
 * ALLOW FILTERING (rows read and discarded).
 */
static void
shape_costs(const CqlScanShape *shape, double rows, double tuples,
			Cost *startup, Cost *total)
{
	if (shape->access == CQLACC_TOKEN_SCAN && shape->index_conds > 0)
	{
		/* the index reads only matching rows, but asks every range */
		*startup = CQL_INDEX_SCAN_COST;
		*total = *startup + rows * (CQL_TUPLE_COST + cpu_tuple_cost);
		if (shape->filtering)
			*total += rows * CQL_TUPLE_COST * 10;
	}
	else if (shape->access == CQLACC_TOKEN_SCAN)
	{
		*startup = CQL_TOKEN_SCAN_COST;
		*total = *startup + tuples * CQL_TUPLE_COST + rows * cpu_tuple_cost;
	}
	else
	{
		*startup = CQL_REQUEST_COST * shape_requests(shape);
		*total = *startup + rows * (CQL_TUPLE_COST + cpu_tuple_cost);
		/* ALLOW FILTERING reads rows it discards */
		if (shape->filtering)
			*total += rows * CQL_TUPLE_COST * 10;
	}
}

/*
 * Can LIMIT be sent to Cassandra?  Only when this scan is the whole query
 * level (no join, grouping, window, DISTINCT, SRF or locking above it) and
 * every restriction is answered remotely, so that the first N remote rows
 * are the first N rows of the result.
 */
static bool
limit_pushable(PlannerInfo *root, RelOptInfo *baserel, const CqlScanShape *shape)
{
	Query	   *parse = root->parse;

	if (parse->commandType != CMD_SELECT || parse->limitCount == NULL ||
		parse->limitOption != LIMIT_OPTION_COUNT)
		return false;
	if (baserel->reloptkind != RELOPT_BASEREL ||
		bms_membership(root->all_baserels) != BMS_SINGLETON)
		return false;
	if (parse->groupClause || parse->groupingSets || parse->hasAggs ||
		root->hasHavingQual || parse->hasWindowFuncs || parse->distinctClause ||
		parse->hasTargetSRFs || parse->setOperations || parse->rowMarks)
		return false;
	if (shape->local_conds != NIL)
		return false;
	if (contain_volatile_functions(parse->limitCount) ||
		(parse->limitOffset && contain_volatile_functions(parse->limitOffset)))
		return false;
	return true;
}

/* Member of an equivalence class that is the given Var of ours */
typedef struct ec_member_arg
{
	Var		   *var;
} ec_member_arg;

/*
 * ec_member_matches_column
 *		Callback of generate_implied_equalities_for_column: is the member
 *		our column arg->var (under relabelings)?
 */
static bool
ec_member_matches_column(PlannerInfo *root, RelOptInfo *rel,
						 EquivalenceClass *ec, EquivalenceMember *em, void *arg)
{
	Expr	   *e = em->em_expr;

	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	return equal(e, ((ec_member_arg *) arg)->var);
}

/*
 * Join clauses that could bind key columns: the rel's movable join clauses
 * plus equalities implied by equivalence classes on key columns.
 */
static List *
candidate_join_clauses(PlannerInfo *root, RelOptInfo *baserel, const CqlFdwTable *t)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, baserel->joininfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (join_clause_is_movable_to(rinfo, baserel))
			result = lappend(result, rinfo);
	}

	for (int k = 0; k < t->npk + t->nck; k++)
	{
		AttrNumber	a = (k < t->npk) ? t->pk[k] : t->ck[k - t->npk];
		const CqlFdwColumn *col = &t->cols[a - 1];
		ec_member_arg arg;
		List	   *clauses;

		arg.var = makeVar(baserel->relid, a, col->pgtype, col->pgtypmod,
						  col->collation, 0);
		clauses = generate_implied_equalities_for_column(root, baserel,
														 ec_member_matches_column,
														 &arg,
														 baserel->lateral_referencers);
		foreach(lc, clauses)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

			if (join_clause_is_movable_to(rinfo, baserel))
				result = list_append_unique_ptr(result, rinfo);
		}
	}
	return result;
}

/*
 * Parameterized paths: for each set of outer relations whose join clauses
 * complete the partition key, a path that reads one partition per outer
 * row.  postgres_fdw builds these only with use_remote_estimate; for
 * Cassandra the saving is known locally and large.
 */
static void
add_parameterized_paths(PlannerInfo *root, RelOptInfo *baserel,
						CqlFdwRelationInfo *fpinfo)
{
	List	   *joinclauses = candidate_join_clauses(root, baserel, fpinfo->table);
	List	   *outers = NIL;
	ListCell   *lc;

	foreach(lc, joinclauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Relids		outer = bms_union(rinfo->clause_relids, baserel->lateral_relids);
		ListCell   *lo;
		bool		seen = false;

		outer = bms_del_members(outer, baserel->relids);
		if (bms_is_empty(outer))
			continue;
		foreach(lo, outers)
			if (bms_equal((Relids) lfirst(lo), outer))
				seen = true;
		if (!seen)
			outers = lappend(outers, outer);
	}

	foreach(lc, outers)
	{
		Relids		required_outer = (Relids) lfirst(lc);
		List	   *clauses = list_copy(baserel->baserestrictinfo);
		ListCell   *lj;
		CqlScanShape shape;
		ParamPathInfo *ppi;
		Cost		startup,
					total;

		foreach(lj, joinclauses)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lj);
			Relids		outer = bms_difference(rinfo->clause_relids, baserel->relids);

			if (bms_is_subset(outer, required_outer))
				clauses = lappend(clauses, rinfo);
		}
		cqlfdw_classify(root, baserel, fpinfo->table, &fpinfo->opts, clauses,
						required_outer, true, &shape);
		if (shape.access == CQLACC_TOKEN_SCAN || !shape.uses_join)
			continue;

		ppi = get_baserel_parampathinfo(root, baserel, required_outer);
		shape_costs(&shape, ppi->ppi_rows, baserel->tuples, &startup, &total);
		add_path(baserel, (Path *)
				 cqlfdw_create_foreignscan_path(root, baserel, NULL, ppi->ppi_rows,
										 startup, total, NIL, required_outer,
										 NULL,
										 list_make2(makeInteger(0), makeInteger(0))));
	}
}

/*
 * add_partial_token_scan_path
 *		A parallel-aware path of a token scan: the participants of a
 *		parallel plan share its token ranges (scan_ranges.c).
 *
 * Only for a table big enough: the workers come from compute_parallel_worker
 * as for a heap of the table's estimated size (tuples times the width of
 * its rows - of all their columns: Cassandra reads them whole), so
 * min_parallel_table_scan_size and max_parallel_workers_per_gather apply.
 * Each participant's share of the transfer is divided as for a parallel
 * sequential scan (the leader does less the more workers there are); the
 * Gather above adds parallel_setup_cost and parallel_tuple_cost per row, so
 * a parallel plan wins when few rows go up (aggregates, selective local
 * filters), not for a SELECT * of the whole table.
 */
static void
add_partial_token_scan_path(PlannerInfo *root, RelOptInfo *baserel,
							CqlFdwRelationInfo *fpinfo)
{
	CqlScanShape *shape = &fpinfo->shape;
	ForeignPath *path;
	double		pages;
	double		divisor;
	int			workers;
	Cost		startup,
				total;

	if (!baserel->consider_parallel || shape->access != CQLACC_TOKEN_SCAN ||
		!bms_is_empty(baserel->lateral_relids))
		return;
	/* Cassandra reads whole rows, whatever the query keeps of them */
	pages = ceil(baserel->tuples *
				 get_relation_data_width(planner_rt_fetch(baserel->relid, root)->relid,
										 NULL) / BLCKSZ);
	workers = compute_parallel_worker(baserel, pages, -1,
									  max_parallel_workers_per_gather);
	if (workers <= 0)
		return;

	divisor = workers;
	if (parallel_leader_participation && workers < 4)
		divisor += 1.0 - 0.3 * workers;

	shape_costs(shape, baserel->rows, baserel->tuples, &startup, &total);
	total = startup + (total - startup) / divisor;
	path = cqlfdw_create_foreignscan_path(root, baserel, NULL,
										  clamp_row_est(baserel->rows / divisor),
										  startup, total, NIL, NULL, NULL,
										  list_make2(makeInteger(0), makeInteger(0)));
	path->path.parallel_aware = true;
	path->path.parallel_safe = true;
	path->path.parallel_workers = workers;
	add_partial_path(baserel, (Path *) path);
}

/*
 * cqlIsForeignPathAsyncCapable
 *		IsForeignPathAsyncCapable callback: a scan of a foreign table may run
 *		asynchronously under an Append (option async_capable, default true),
 *		its pages awaited together with the other members' (scan_async.c).
 */
bool
cqlIsForeignPathAsyncCapable(ForeignPath *path)
{
	RelOptInfo *rel = path->path.parent;
	CqlFdwRelationInfo *fpinfo = (CqlFdwRelationInfo *) rel->fdw_private;

	return cqlfdw_async_supported() && IS_SIMPLE_REL(rel) && fpinfo != NULL &&
		fpinfo->opts.async_capable;
}

/*
 * cqlGetForeignPaths
 *		GetForeignPaths callback.
 *
 * Adds the plain path; when the clustering order can deliver query_pathkeys,
 * an ordered path of the same cost, so that no Sort is needed; and the
 * parameterized paths that read one partition per outer row
 * (add_parameterized_paths).  A path's fdw_private holds the order direction
 * and whether LIMIT is sent (FdwPathPrivateIndex): only when the rows the
 * scan returns are already the query's rows in the query's order.
 */
void
cqlGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	CqlFdwRelationInfo *fpinfo = (CqlFdwRelationInfo *) baserel->fdw_private;
	CqlScanShape *shape = &fpinfo->shape;
	Cost		startup,
				total;
	bool		limit_ok = limit_pushable(root, baserel, shape);
	int			direction;

	shape_costs(shape, baserel->rows, baserel->tuples, &startup, &total);

	add_path(baserel, (Path *)
			 cqlfdw_create_foreignscan_path(root, baserel, NULL, baserel->rows,
									 startup, total, NIL,
									 baserel->lateral_relids, NULL,
									 list_make2(makeInteger(0),
												makeInteger(limit_ok && root->parse->sortClause == NIL))));

	/* rows already in the requested order: no Sort above */
	direction = cqlfdw_order_matches(root, baserel, fpinfo->table, shape,
									 root->query_pathkeys);
	if (direction != 0)
	{
		bool		sorted_limit = limit_ok &&
			pathkeys_contained_in(root->sort_pathkeys, root->query_pathkeys);

		add_path(baserel, (Path *)
				 cqlfdw_create_foreignscan_path(root, baserel, NULL, baserel->rows,
										 startup, total, root->query_pathkeys,
										 baserel->lateral_relids, NULL,
										 list_make2(makeInteger(direction),
													makeInteger(sorted_limit))));
	}

	/* ORDER BY <vector> <distance> <value> LIMIT k: an ANN search */
	if (limit_ok)
	{
		CqlAnnSearch ann;

		if (cqlfdw_ann_match(root, baserel, fpinfo->table, shape, &ann))
		{
			/*
			 * The index returns the k nearest rows: one request, k rows,
			 * cheaper than reading and sorting the candidates.
			 */
			double		rows = Min(baserel->rows, ann.limit);

			startup = shape->access == CQLACC_SINGLE_PARTITION ? CQL_REQUEST_COST
				: CQL_INDEX_SCAN_COST;
			total = startup + rows * (CQL_TUPLE_COST + cpu_tuple_cost);
			add_path(baserel, (Path *)
					 cqlfdw_create_foreignscan_path(root, baserel, NULL, rows,
													startup, total, root->query_pathkeys,
													baserel->lateral_relids, NULL,
													list_make3(makeInteger(0), makeInteger(1),
															   cqlfdw_ann_private(&ann))));
		}
	}

	add_parameterized_paths(root, baserel, fpinfo);
	add_partial_token_scan_path(root, baserel, fpinfo);
}

/*
 * bucket_private
 *		The FdwScanPrivateBucket entry of a scan that enumerates a bucket
 *		column: the range bounds on its source go to fdw_exprs (they may be
 *		Params: the buckets are computed when the scan starts), with the
 *		order the buckets are read in: newest first when the rows are
 *		wanted in descending time order (a source column declared DESC read
 *		in its declared order, or an ASC one reversed).
 */
static List *
bucket_private(CqlFdwRelationInfo *fpinfo, const CqlScanShape *shape, int direction,
			   List **fdw_exprs)
{
	const CqlFdwTable *t = fpinfo->table;
	const CqlFdwColumn *b = &t->cols[shape->bucket_attnum - 1];
	int			lo_index = -1,
				hi_index = -1;
	bool		descending = false;
	ListCell   *lc;

	if (shape->bucket_lo)
	{
		*fdw_exprs = lappend(*fdw_exprs, shape->bucket_lo->value);
		lo_index = list_length(*fdw_exprs) - 1;
	}
	if (shape->bucket_hi)
	{
		*fdw_exprs = lappend(*fdw_exprs, shape->bucket_hi->value);
		hi_index = list_length(*fdw_exprs) - 1;
	}
	if (direction != 0 && b->bucket.unit != CQLBUCKET_HASH)
		descending = (direction > 0) == t->cols[b->bucket_src[0] - 1].desc;
	{
		List	   *l = NIL;

		/* in the order of FdwBucketIndex */
		l = lappend_int(l, shape->bucket_attnum);
		l = lappend_int(l, lo_index);
		l = lappend_int(l, shape->bucket_lo ? shape->bucket_lo->kind : 0);
		l = lappend_int(l, hi_index);
		l = lappend_int(l, shape->bucket_hi ? shape->bucket_hi->kind : 0);
		l = lappend_int(l, direction);
		l = lappend_int(l, descending);
		l = lappend_int(l, fpinfo->opts.max_buckets);
		foreach(lc, shape->bucket_eq)
		{
			*fdw_exprs = lappend(*fdw_exprs, ((CqlCond *) lfirst(lc))->value);
			l = lappend_int(l, list_length(*fdw_exprs) - 1);
		}
		return l;
	}
}

/*
 * cqlGetForeignPlan
 *		GetForeignPlan callback.
 *
 * Classifies scan_clauses again for the chosen path (with its required outer
 * relations, binding the key from join clauses when it is parameterized):
 * what is pushed leaves the local qual.  Builds fdw_exprs (one value per
 * pushed condition, then LIMIT and OFFSET) and the bind list in the order of
 * the markers, deparses the SELECT, and stores everything in fdw_private
 * (layout: FdwScanPrivateIndex in planner.h).  LIMIT is dropped when a local
 * filter remains.
 */
ForeignScan *
cqlGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
				  ForeignPath *best_path, List *tlist, List *scan_clauses,
				  Plan *outer_plan)
{
	CqlFdwRelationInfo *fpinfo;
	Relids		outer_ok = best_path->path.param_info ?
		best_path->path.param_info->ppi_req_outer : NULL;
	CqlScanShape shape;
	List	   *local_exprs = NIL;
	List	   *fdw_exprs = NIL;
	List	   *binds = NIL;
	List	   *retrieved_attrs;
	Bitmapset  *attrs_used = NULL;
	int			direction;
	bool		has_limit;
	int			limit_index = -1;
	int			offset_index = -1;
	char	   *cql;
	ListCell   *lc;
	List	   *fdw_private;
	List	   *bucket = NIL;
	CqlAnnSearch ann;
	int			page_min = 0;

	/* an aggregate computed by Cassandra (upper_plan.c) */
	if (IS_UPPER_REL(baserel))
		return cqlfdw_upper_plan(root, baserel, best_path, tlist);

	fpinfo = (CqlFdwRelationInfo *) baserel->fdw_private;
	direction = intVal(list_nth(best_path->fdw_private, FdwPathPrivateOrder));
	has_limit = intVal(list_nth(best_path->fdw_private, FdwPathPrivateLimit)) != 0;
	cqlfdw_classify(root, baserel, fpinfo->table, &fpinfo->opts, scan_clauses,
					outer_ok, outer_ok != NULL, &shape);
	if (list_length(best_path->fdw_private) > FdwPathPrivateAnn)
	{
		cqlfdw_ann_from_private(list_nth(best_path->fdw_private, FdwPathPrivateAnn), &ann);
		shape.ann_attnum = ann.attnum;
		if (shape.access == CQLACC_TOKEN_SCAN)
			shape.access = CQLACC_ANN_SEARCH;
		/* Cassandra wants the page to hold the k rows */
		page_min = (int) ann.limit + 1;
	}

	/*
	 * An index answers for the whole ring: one statement, which the
	 * coordinator pages through, instead of one per token range (measured
	 * 4.6x slower for a selective predicate, bench/README.md).
	 */
	if (shape.access == CQLACC_TOKEN_SCAN && shape.index_conds > 0)
		shape.access = CQLACC_INDEX_SCAN;

	foreach(lc, shape.local_conds)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant)
			continue;
		local_exprs = lappend(local_exprs, rinfo->clause);
	}
	if (local_exprs != NIL)
		has_limit = false;		/* the path was costed without them */
	/* a timeuuid range compared bytewise would be another answer */
	cqlfdw_check_local_timeuuid(local_exprs, get_rel_name(foreigntableid));

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &attrs_used);
	pull_varattnos((Node *) local_exprs, baserel->relid, &attrs_used);
	/* a merge of ordered hash buckets compares the clustering columns */
	if (direction != 0 && shape.bucket_attnum != InvalidAttrNumber &&
		fpinfo->table->cols[shape.bucket_attnum - 1].bucket.unit == CQLBUCKET_HASH)
		for (int k = 0; k < fpinfo->table->nck; k++)
			attrs_used = bms_add_member(attrs_used,
										fpinfo->table->ck[k] - FirstLowInvalidHeapAttributeNumber);

	binds = cqlfdw_shape_binds(fpinfo->table, &shape, &fdw_exprs);
	if (shape.bucket_attnum != InvalidAttrNumber)
		bucket = bucket_private(fpinfo, &shape, direction, &fdw_exprs);
	if (shape.ann_attnum != InvalidAttrNumber)
	{
		fdw_exprs = lappend(fdw_exprs, ann.query);
		binds = lappend(binds, list_make3_int(CQLBIND_ANN, ann.attnum,
											  list_length(fdw_exprs) - 1));
		if (local_exprs != NIL)
			elog(ERROR, "ANN search planned with local filters");
	}
	if (has_limit)
	{
		fdw_exprs = lappend(fdw_exprs, root->parse->limitCount);
		limit_index = list_length(fdw_exprs) - 1;
		if (root->parse->limitOffset)
		{
			fdw_exprs = lappend(fdw_exprs, root->parse->limitOffset);
			offset_index = list_length(fdw_exprs) - 1;
		}
		binds = lappend(binds, list_make3_int(CQLBIND_LIMIT, 0, limit_index));
	}

	cql = cqlfdw_deparse_select(fpinfo->table, &shape, attrs_used, direction,
								has_limit, &retrieved_attrs);

	fdw_private = NIL;
	fdw_private = lappend(fdw_private, makeString(cql));	/* FdwScanPrivateCql */
	fdw_private = lappend(fdw_private, retrieved_attrs); /* RetrievedAttrs */
	fdw_private = lappend(fdw_private, makeInteger(shape.access));	/* Access */
	fdw_private = lappend(fdw_private, binds);	/* Binds */
	fdw_private = lappend(fdw_private, makeInteger(shape.npartitions));
	fdw_private = lappend(fdw_private, makeInteger(page_min));
	fdw_private = lappend(fdw_private, makeInteger(offset_index));
	fdw_private = lappend(fdw_private, makeInteger(shape.filtering));
	fdw_private = lappend(fdw_private, bucket); /* FdwScanPrivateBucket */
	fdw_private = lappend(fdw_private, makeString(pstrdup(shape.index_name ? shape.index_name : "")));
	fdw_private = lappend(fdw_private, makeString(shape.ann_attnum != InvalidAttrNumber
												  ? pstrdup(cqlfdw_ann_explain(fpinfo->table, shape.ann_attnum))
												  : pstrdup("")));
	fdw_private = lappend(fdw_private,
						  makeString(pstrdup(shape.index_refused ? shape.index_refused : "")));
	fdw_private = lappend(fdw_private, NIL);	/* FdwScanPrivateUpper */

	return make_foreignscan(tlist, local_exprs, baserel->relid, fdw_exprs,
							fdw_private, NIL, NIL, outer_plan);
}

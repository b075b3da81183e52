/*-------------------------------------------------------------------------
 *
 * compat.h
 *		The one place where cql_fdw bridges differences between the
 *		PostgreSQL major versions it builds against.
 *
 * Code elsewhere calls the names defined here and never tests
 * PG_VERSION_NUM itself.
 *
 * IDENTIFICATION
 *		src/include/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_COMPAT_H
#define CQL_FDW_COMPAT_H

#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_foreign_server.h"
#include "commands/explain.h"
#include "commands/extension.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "parser/parse_relation.h"
#include "parser/parse_type.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/relcache.h"

/*
 * VARDATA(), VARSIZE_ANY_EXHDR() and the other varlena macros: in
 * postgres.h up to PostgreSQL 15, in varatt.h from 16 on.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * ExplainState and the ExplainProperty*() functions: PostgreSQL 18 moved
 * them out of commands/explain.h into explain_state.h and explain_format.h.
 * Include compat.h instead of any of these.
 */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

/*
 * A function that does not return: PostgreSQL 18 replaced the trailing
 * pg_attribute_noreturn() by pg_noreturn, which goes in front (C11
 * _Noreturn).  Write "cqlfdw_noreturn extern void f(...);" - in front
 * works for both.
 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_noreturn pg_noreturn
#else
#define cqlfdw_noreturn pg_attribute_noreturn()
#endif

/*
 * Privilege check on a foreign server: PostgreSQL 16 folded the per-object
 * aclcheck functions into object_aclcheck().
 */
#if PG_VERSION_NUM >= 160000
#define cqlfdw_server_aclcheck(serverid, roleid, mode) \
	object_aclcheck(ForeignServerRelationId, (serverid), (roleid), (mode))
#else
#define cqlfdw_server_aclcheck(serverid, roleid, mode) \
	pg_foreign_server_aclcheck((serverid), (roleid), (mode))
#endif

/*
 * The role a relation is accessed as (its "checkAsUser": a view owner's
 * for a foreign table read through a view), or InvalidOid for the current
 * user.  PostgreSQL 16 moved it from RangeTblEntry.checkAsUser into
 * RTEPermissionInfo (found through rte->perminfoindex), and copies it into
 * RelOptInfo.userid, ForeignScan.checkAsUser and, for result relations,
 * ExecGetResultRelCheckAsUser(); child relations (partitions) have no
 * RTEPermissionInfo of their own and use their parent's role.
 *
 * cqlfdw_planner_checkasuser	planner, any range-table index
 * cqlfdw_scan_checkasuser		executor, a ForeignScan (also direct modify)
 * cqlfdw_resultrel_checkasuser executor, a result relation (modify, insert)
 */
static inline Oid
cqlfdw_planner_checkasuser(PlannerInfo *root, Index rtindex)
{
	RangeTblEntry *rte;
#if PG_VERSION_NUM >= 160000
	RelOptInfo *rel = NULL;

	if (root->simple_rel_array != NULL && rtindex < (Index) root->simple_rel_array_size)
		rel = root->simple_rel_array[rtindex];
	if (rel != NULL)
		return rel->userid;
	rte = planner_rt_fetch(rtindex, root);
	if (rte->perminfoindex == 0)
		return InvalidOid;
	return getRTEPermissionInfo(root->parse->rteperminfos, rte)->checkAsUser;
#else
	rte = planner_rt_fetch(rtindex, root);
	return rte->checkAsUser;
#endif
}

static inline Oid
cqlfdw_scan_checkasuser(ForeignScan *fsplan, EState *estate)
{
#if PG_VERSION_NUM >= 160000
	(void) estate;
	return fsplan->checkAsUser;
#else
	return exec_rt_fetch(fsplan->scan.scanrelid, estate)->checkAsUser;
#endif
}

static inline Oid
cqlfdw_resultrel_checkasuser(ResultRelInfo *rinfo, EState *estate)
{
#if PG_VERSION_NUM >= 160000
	return ExecGetResultRelCheckAsUser(rinfo, estate);
#else
	/* a partition a row is routed into has no entry of its own before 16 */
	Index		rti = rinfo->ri_RangeTableIndex;

	if (rti == 0 && rinfo->ri_RootResultRelInfo != NULL)
		rti = rinfo->ri_RootResultRelInfo->ri_RangeTableIndex;
	return exec_rt_fetch(rti, estate)->checkAsUser;
#endif
}

/*
 * The columns an INSERT names (for the result relation rtindex's entry):
 * in RTEPermissionInfo since 16.
 */
static inline Bitmapset *
cqlfdw_planner_inserted_cols(PlannerInfo *root, RangeTblEntry *rte)
{
#if PG_VERSION_NUM >= 160000
	if (rte->perminfoindex == 0)
		return NULL;
	return getRTEPermissionInfo(root->parse->rteperminfos, rte)->insertedCols;
#else
	(void) root;
	return rte->insertedCols;
#endif
}

/*
 * create_foreignscan_path(): 17 added fdw_restrictinfo (we pass NIL: no
 * join or upper-rel pushdown), 18 added disabled_nodes (0: we never add a
 * disabled path).  The arguments here are those of 15 and 16.
 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_create_foreignscan_path(root, rel, target, rows, startup_cost, total_cost, \
									   pathkeys, required_outer, fdw_outerpath, fdw_private) \
	create_foreignscan_path((root), (rel), (target), (rows), 0, (startup_cost), (total_cost), \
							(pathkeys), (required_outer), (fdw_outerpath), NIL, (fdw_private))
#elif PG_VERSION_NUM >= 170000
#define cqlfdw_create_foreignscan_path(root, rel, target, rows, startup_cost, total_cost, \
									   pathkeys, required_outer, fdw_outerpath, fdw_private) \
	create_foreignscan_path((root), (rel), (target), (rows), (startup_cost), (total_cost), \
							(pathkeys), (required_outer), (fdw_outerpath), NIL, (fdw_private))
#else
#define cqlfdw_create_foreignscan_path create_foreignscan_path
#endif

/*
 * Sort direction: PostgreSQL 18 describes pathkeys and ordering operators
 * by CompareType (COMPARE_LT / COMPARE_GT) instead of a btree strategy.
 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_pathkey_is_asc(pk) ((pk)->pk_cmptype == COMPARE_LT)
#else
#define cqlfdw_pathkey_is_asc(pk) ((pk)->pk_strategy == BTLessStrategyNumber)
#endif

/*
 * The grouping expression a Var of an aggregate query stands for: from
 * PostgreSQL 18 on, the parser makes a grouped column in the select list or
 * ORDER BY a Var of the query's RTE_GROUP entry; node itself otherwise.
 */
static inline Node *
cqlfdw_group_expr(Query *q, Node *node)
{
#if PG_VERSION_NUM >= 180000
	if (node != NULL && IsA(node, Var) && ((Var *) node)->varlevelsup == 0 && q->hasGroupRTE)
	{
		RangeTblEntry *rte = rt_fetch(((Var *) node)->varno, q->rtable);

		if (rte->rtekind == RTE_GROUP)
			return (Node *) list_nth(rte->groupexprs, ((Var *) node)->varattno - 1);
	}
#endif
	return node;
}

/* true and *desc set for a btree ordering operator, false for others */
static inline bool
cqlfdw_ordering_op_is_desc(Oid sortop, bool *desc)
{
	Oid			opfamily;
	Oid			opcintype;
#if PG_VERSION_NUM >= 180000
	CompareType cmptype;

	if (!get_ordering_op_properties(sortop, &opfamily, &opcintype, &cmptype))
		return false;
	*desc = (cmptype == COMPARE_GT);
#else
	int16		strategy;

	if (!get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy))
		return false;
	*desc = (strategy == BTGreaterStrategyNumber);
#endif
	return true;
}

/*
 * The built-in "POSIX" collation: 18 no longer names its OID (951, the
 * same in every version since 9.1).
 */
#ifdef POSIX_COLLATION_OID
#define CQLFDW_POSIX_COLLATION_OID POSIX_COLLATION_OID
#else
#define CQLFDW_POSIX_COLLATION_OID ((Oid) 951)
#endif

/* vacuum_delay_point() learnt whether it runs for ANALYZE in 18 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_analyze_delay_point() vacuum_delay_point(true)
#else
#define cqlfdw_analyze_delay_point() vacuum_delay_point()
#endif

/*
 * The primary key index of a relation, deferrable or not (18 asks whether
 * a deferrable one will do; before, it was always returned).
 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_primary_key_index(rel) RelationGetPrimaryKeyIndex((rel), true)
#else
#define cqlfdw_primary_key_index(rel) RelationGetPrimaryKeyIndex(rel)
#endif

/*
 * Query.limitOption of a query without LIMIT: 18 dropped
 * LIMIT_OPTION_DEFAULT (and uses LIMIT_OPTION_COUNT, the zero value).
 */
#if PG_VERSION_NUM >= 180000
#define CQLFDW_LIMIT_OPTION_NONE LIMIT_OPTION_COUNT
#else
#define CQLFDW_LIMIT_OPTION_NONE LIMIT_OPTION_DEFAULT
#endif

/*
 * expandRTE() of one range table entry of the current level, columns not
 * dropped, no location: 18 added the RETURNING old/new kind of the Vars
 * (parser/parse_relation.h, which the caller includes).
 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_expand_rte(rte, rtindex, colnames, colvars) \
	expandRTE((rte), (rtindex), 0, VAR_RETURNING_DEFAULT, -1, false, (colnames), (colvars))
#else
#define cqlfdw_expand_rte(rte, rtindex, colnames, colvars) \
	expandRTE((rte), (rtindex), 0, -1, false, (colnames), (colvars))
#endif

/*
 * The schema of an installed extension: get_extension_schema() is exported
 * from 16 on; before, the same lookup of pg_extension by OID.
 */
#if PG_VERSION_NUM >= 160000
#define cqlfdw_extension_schema(ext_oid) get_extension_schema(ext_oid)
#else
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "utils/fmgroids.h"

static inline Oid
cqlfdw_extension_schema(Oid ext_oid)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			result = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext_oid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		result = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}
#endif

/*
 * parseTypeString: its last argument is a soft-error context from 16 on,
 * a missing_ok flag before; cql_fdw wants errors thrown in both.
 */
#if PG_VERSION_NUM >= 160000
#define cqlfdw_parse_type_string(str, typid, typmod) \
	parseTypeString((str), (typid), (typmod), NULL)
#else
#define cqlfdw_parse_type_string(str, typid, typmod) \
	parseTypeString((str), (typid), (typmod), false)
#endif

/*
 * A WaitEventSet for the current query: PostgreSQL 17 ties it to a
 * resource owner (freed with it after an error) instead of a memory
 * context.
 */
#if PG_VERSION_NUM >= 170000
#define cqlfdw_create_wait_event_set(nevents) \
	CreateWaitEventSet(CurrentResourceOwner, (nevents))
#else
#define cqlfdw_create_wait_event_set(nevents) \
	CreateWaitEventSet(CurrentMemoryContext, (nevents))
#endif

/*
 * create_foreign_upper_path gained disabled_nodes and fdw_restrictinfo in
 * 17/18; an upper path of cql_fdw has neither.
 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_create_foreign_upper_path(root, rel, target, rows, startup_cost, total_cost, \
										 pathkeys, fdw_private) \
	create_foreign_upper_path((root), (rel), (target), (rows), 0, (startup_cost), \
							  (total_cost), (pathkeys), NULL, NIL, (fdw_private))
#elif PG_VERSION_NUM >= 170000
#define cqlfdw_create_foreign_upper_path(root, rel, target, rows, startup_cost, total_cost, \
										 pathkeys, fdw_private) \
	create_foreign_upper_path((root), (rel), (target), (rows), (startup_cost), \
							  (total_cost), (pathkeys), NULL, NIL, (fdw_private))
#else
#define cqlfdw_create_foreign_upper_path(root, rel, target, rows, startup_cost, total_cost, \
										 pathkeys, fdw_private) \
	create_foreign_upper_path((root), (rel), (target), (rows), (startup_cost), \
							  (total_cost), (pathkeys), NULL, (fdw_private))
#endif

/*
 * The foreign table an upper-relation scan (scanrelid 0) reads, opened by
 * the executor; 18 asks whether it is a result relation.
 */
#if PG_VERSION_NUM >= 180000
#define cqlfdw_range_table_relation(estate, rti) \
	ExecGetRangeTableRelation((estate), (rti), false)
#else
#define cqlfdw_range_table_relation(estate, rti) \
	ExecGetRangeTableRelation((estate), (rti))
#endif

/*
 * The range table entries an upper-relation scan covers (set by the
 * planner, offset by setrefs.c as the plan is flattened): 16 tells the base
 * relations from the outer joins.
 */
static inline Bitmapset *
cqlfdw_scan_base_relids(ForeignScan *fsplan)
{
#if PG_VERSION_NUM >= 160000
	return fsplan->fs_base_relids;
#else
	return fsplan->fs_relids;
#endif
}

/*
 * The checkAsUser of an upper-relation scan (aggregate pushdown) over the
 * range table entry rtindex: 16 copies it into the plan as for a base
 * scan, 15 keeps it in the range table.
 */
static inline Oid
cqlfdw_upper_checkasuser(ForeignScan *fsplan, EState *estate, Index rtindex)
{
#if PG_VERSION_NUM >= 160000
	(void) estate;
	(void) rtindex;
	return fsplan->checkAsUser;
#else
	(void) fsplan;
	return exec_rt_fetch(rtindex, estate)->checkAsUser;
#endif
}

#endif							/* CQL_FDW_COMPAT_H */

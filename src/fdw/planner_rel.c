/*-------------------------------------------------------------------------
 *
 * planner_rel.c
 *		What planning works out once for a foreign base relation: the user
 *		whose mapping it is read with, its options and layout (one route:
 *		cqlfdw_resolve_table), the classification of its restrictions, and
 *		the bind markers of a scan of that shape.
 *
 * Below the planner's callbacks: planner.c (scans), upper_plan.c (pushed
 * aggregates), direct_modify.c and modify.c read what this file stored in
 * baserel->fdw_private, and none of them is called from here.
 *
 * IDENTIFICATION
 *		src/fdw/planner_rel.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "optimizer/optimizer.h"

#include "compat.h"
#include "deparse.h"
#include "planner.h"
#include "remote.h"

/*
 * cqlfdw_plan_rel
 *		The planner state of a foreign base relation (GetForeignRelSize):
 *		options and layout resolved once (from the remote schema when the
 *		table has no key options: that may connect), baserestrictinfo
 *		classified into conditions sent to Cassandra and local filters, and
 *		the columns the scan needs.  Stored in baserel->fdw_private.
 */
CqlFdwRelationInfo *
cqlfdw_plan_rel(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	CqlFdwRelationInfo *fpinfo = palloc0(sizeof(CqlFdwRelationInfo));
	UserMapping *user;
	ListCell   *lc;

	baserel->fdw_private = fpinfo;
	fpinfo->userid = cqlfdw_planner_userid(root, baserel->relid);
	fpinfo->table = cqlfdw_resolve_table(foreigntableid, fpinfo->userid, true,
										 &fpinfo->opts, &user);

	cqlfdw_classify(root, baserel, fpinfo->table, &fpinfo->opts,
					baserel->baserestrictinfo, NULL, false, &fpinfo->shape);

	/* columns needed: output plus whatever local filters read */
	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid,
				   &fpinfo->attrs_used);
	foreach(lc, fpinfo->shape.local_conds)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		pull_varattnos((Node *) rinfo->clause, baserel->relid, &fpinfo->attrs_used);
	}
	return fpinfo;
}

/*
 * cqlfdw_planner_userid
 *		The role whose user mapping the relation rtindex is read or written
 *		with: its checkAsUser (a view owner's), else the current user.  The
 *		planner's twin of cqlfdw_scan_userid / cqlfdw_result_userid.
 */
Oid
cqlfdw_planner_userid(PlannerInfo *root, Index rtindex)
{
	Oid			checkasuser = cqlfdw_planner_checkasuser(root, rtindex);

	return OidIsValid(checkasuser) ? checkasuser : GetUserId();
}

/*
 * cqlfdw_planned_rel
 *		What planning worked out for a foreign base relation: its layout,
 *		merged options, and the classification of its restrictions, which is
 *		also the shape of its plain (unparameterized) scan.  Direct modify
 *		builds its statement from that shape instead of classifying again.
 */
void
cqlfdw_planned_rel(RelOptInfo *baserel, const CqlFdwTable **t,
				   const CqlFdwOptions **opts, const CqlScanShape **shape)
{
	CqlFdwRelationInfo *fpinfo = (CqlFdwRelationInfo *) baserel->fdw_private;

	*t = fpinfo->table;
	*opts = &fpinfo->opts;
	*shape = &fpinfo->shape;
}

/*
 * cqlfdw_shape_binds
 *		The bind markers of the WHERE clause of a scan of shape 'shape'
 *		(cqlfdw_append_from_where), in the order of the statement text:
 *		List of IntList (CqlBindKind, attnum, fdw_exprs index or -1).  The
 *		values are appended to *fdw_exprs.
 */
List *
cqlfdw_shape_binds(const CqlFdwTable *t, const CqlScanShape *shape,
				   List **fdw_exprs)
{
	List	   *binds = NIL;
	ListCell   *lc;

	if (shape->access == CQLACC_TOKEN_SCAN && t->npk > 0)
	{
		binds = lappend(binds, list_make3_int(CQLBIND_TOKEN_LOW, 0, -1));
		binds = lappend(binds, list_make3_int(CQLBIND_TOKEN_HIGH, 0, -1));
	}
	foreach(lc, shape->pushed)
	{
		CqlCond    *c = (CqlCond *) lfirst(lc);

		if (c->kind == CQLBIND_BUCKET)
		{
			/* a value per task, from the bucket enumeration */
			binds = lappend(binds, list_make3_int(c->kind, c->attnum, -1));
			continue;
		}
		if (c->kind == CQLBIND_ENTRY)
		{
			/* m[?] = ?: the key's marker first */
			*fdw_exprs = lappend(*fdw_exprs, c->key);
			binds = lappend(binds, list_make3_int(CQLBIND_ENTRY_KEY, c->attnum,
												  list_length(*fdw_exprs) - 1));
		}
		*fdw_exprs = lappend(*fdw_exprs, c->value);
		binds = lappend(binds, list_make3_int(c->kind, c->attnum,
											  list_length(*fdw_exprs) - 1));
	}
	return binds;
}


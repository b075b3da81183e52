/*-------------------------------------------------------------------------
 *
 * analyze_shapes.c
 *	  Query shapes of real workloads that cql_bridge_analyze() reports
 *	  beyond the plain "column = $k" search: IN lists and ORs of
 *	  equalities on parameters, searched columns the query does not
 *	  select, and the outputs of a top-level aggregate query.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/analyze_shapes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "analyze_int.h"
#include "analyze_query.h"
#include "compat.h"

/*
 * param_equality_column
 *		Whether qual is "column = $k" (either way round) on a column of this
 *		level: the column in *col, k returned; 0 otherwise.
 */
static int
param_equality_column(LevelCtx *lc, Node *qual, BridgeColRef *col)
{
	OpExpr	   *op;
	char	   *opname;

	if (!IsA(qual, OpExpr) || list_length(((OpExpr *) qual)->args) != 2)
		return 0;
	op = (OpExpr *) qual;
	opname = get_opname(op->opno);
	if (opname == NULL || strcmp(opname, "=") != 0)
		return 0;
	if (bridge_param_of(lsecond(op->args)) > 0 && bridge_trace_column(lc, linitial(op->args), col) &&
		col->levelsup == 0)
		return bridge_param_of(lsecond(op->args));
	if (bridge_param_of(linitial(op->args)) > 0 && bridge_trace_column(lc, lsecond(op->args), col) &&
		col->levelsup == 0)
		return bridge_param_of(linitial(op->args));
	return 0;
}

/*
 * bridge_add_in_list
 *		An IN list of parameters on one column: "col = ANY($k)" (one array
 *		parameter: an "equality" row with op "= ANY"), "col IN ($1, $2)" or
 *		"col = $1 OR col = $2" (an "equality" row with op "IN" per
 *		parameter).  The table of the single-value form serves them, the
 *		target query reading one partition per value.  False when qual is
 *		none of these.
 */
bool
bridge_add_in_list(LevelCtx *lc, Node *qual)
{
	BridgeColRef col;
	List	   *params = NIL;
	ListCell   *cell;
	BridgeRow  *row;

	if (IsA(qual, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *) qual)->useOr)
	{
		ScalarArrayOpExpr *sa = (ScalarArrayOpExpr *) qual;
		char	   *opname = get_opname(sa->opno);
		Node	   *right = bridge_strip_casts(lsecond(sa->args));

		if (opname == NULL || strcmp(opname, "=") != 0 ||
			!bridge_trace_column(lc, linitial(sa->args), &col) || col.levelsup != 0)
			return false;
		if (bridge_param_of(right) > 0)
		{
			row = bridge_add_row(lc->an, BK_EQUALITY, lc->level, 0);
			bridge_set_column(row, &col);
			row->op = "= ANY";
			row->param = bridge_param_of(right);
			return true;
		}
		if (!IsA(right, ArrayExpr))
			return false;
		foreach(cell, ((ArrayExpr *) right)->elements)
		{
			if (bridge_param_of(lfirst(cell)) == 0)
				return false;
			params = lappend_int(params, bridge_param_of(lfirst(cell)));
		}
	}
	else if (is_orclause(qual))
	{
		BridgeColRef other;

		foreach(cell, ((BoolExpr *) qual)->args)
		{
			int			k = param_equality_column(lc, lfirst(cell), cell == list_head(((BoolExpr *) qual)->args) ? &col : &other);

			if (k == 0)
				return false;
			if (cell != list_head(((BoolExpr *) qual)->args) &&
				(other.rtindex != col.rtindex || other.attno != col.attno))
				return false;
			params = lappend_int(params, k);
		}
	}
	else
		return false;
	foreach(cell, params)
	{
		row = bridge_add_row(lc->an, BK_EQUALITY, lc->level, 0);
		bridge_set_column(row, &col);
		row->op = "IN";
		row->param = lfirst_int(cell);
	}
	return true;
}

/* The range-table index of the relation aliased alias in q, 0 when none. */
static int
relation_index(Query *q, const char *alias)
{
	ListCell   *e;
	int			rt = 0;

	foreach(e, q->rtable)
	{
		RangeTblEntry *rte = (RangeTblEntry *) lfirst(e);

		rt++;
		if (rte->rtekind == RTE_RELATION && strcmp(rte->eref->aliasname, alias) == 0)
			return rt;
	}
	return 0;
}

/* Is (rtindex, attno) among the pairs of the int lists? */
static bool
column_in(List *rts, List *atts, int rtindex, int attno)
{
	ListCell   *a;
	ListCell   *b;

	forboth(a, rts, b, atts)
		if (lfirst_int(a) == rtindex && lfirst_int(b) == attno)
		return true;
	return false;
}

/*
 * bridge_add_search_targets
 *		Search and ordering attributes the query does not select ("last
 *		order of a customer" selects no customer column) are appended to its
 *		select list as "target" rows with op "search", after the outputs:
 *		the query table needs them as key columns, the base and lineage SQL
 *		select them (under the column's name, or alias_column when an
 *		output has that name), and the answer is still the outputs alone.
 *		A column that is an output, or equal by an inner join to one, needs
 *		nothing, nor does a primary-key column (a lineage column already,
 *		which the mapping makes a hidden key column).
 */
void
bridge_add_search_targets(BridgeAnalysis *an, LevelCtx *lc, Query *q)
{
	List	   *rts = NIL;
	List	   *atts = NIL;
	ListCell   *cell;
	int			ord = 0;
	bool		grew = true;

	foreach(cell, q->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(cell);
		BridgeColRef	col;

		if (tle->resjunk)
			continue;
		ord++;
		if (bridge_trace_column(lc, (Node *) tle->expr, &col) && col.levelsup == 0)
		{
			rts = lappend_int(rts, col.rtindex);
			atts = lappend_int(atts, col.attno);
		}
	}
	/* columns equal to an output by an inner join count as outputs */
	while (grew)
	{
		grew = false;
		foreach(cell, an->rows)
		{
			BridgeRow  *r = (BridgeRow *) lfirst(cell);
			int			rt;
			AttrNumber	att;
			bool		left_in;
			bool		right_in;

			if (r->kind != BK_JOIN || r->level != 0 || !r->detail || strcmp(r->detail, "inner") != 0 ||
				!r->other_alias || !r->other_column || (rt = relation_index(q, r->other_alias)) == 0)
				continue;
			att = get_attnum(rt_fetch(rt, q->rtable)->relid, r->other_column);
			if (att == InvalidAttrNumber)
				continue;
			left_in = column_in(rts, atts, r->col.rtindex, r->col.attno);
			right_in = column_in(rts, atts, rt, att);
			if (left_in == right_in)
				continue;
			rts = lappend_int(rts, left_in ? rt : r->col.rtindex);
			atts = lappend_int(atts, left_in ? att : r->col.attno);
			grew = true;
		}
	}
	/* bridge_add_row appends to an->rows: walk a copy */
	foreach(cell, list_copy(an->rows))
	{
		BridgeRow  *r = (BridgeRow *) lfirst(cell);
		RangeTblEntry *rte;
		Oid			typid;
		int32		typmod;
		Oid			collid;
		char	   *name;
		ListCell   *o;
		BridgeRow  *row;

		ListCell   *l;
		bool		lineage = false;

		if ((r->kind != BK_EQUALITY && r->kind != BK_RANGE && r->kind != BK_ORDER) ||
			r->level != 0 || r->col.alias == NULL || r->col.rtindex <= 0 ||
			column_in(rts, atts, r->col.rtindex, r->col.attno))
			continue;
		/* a primary-key column is in the lineage SQL already */
		foreach(l, an->lineage)
			if (((BridgeLineageColumn *) lfirst(l))->rtindex == r->col.rtindex &&
				((BridgeLineageColumn *) lfirst(l))->attno == r->col.attno)
				lineage = true;
		if (lineage)
			continue;
		rte = rt_fetch(r->col.rtindex, q->rtable);
		get_atttypetypmodcoll(rte->relid, r->col.attno, &typid, &typmod, &collid);
		name = pstrdup(r->col.column_name);
		foreach(o, q->targetList)
			if (!((TargetEntry *) lfirst(o))->resjunk && ((TargetEntry *) lfirst(o))->resname &&
				strcmp(((TargetEntry *) lfirst(o))->resname, name) == 0)
				name = psprintf("%s_%s", r->col.alias, r->col.column_name);
		q->targetList = lappend(q->targetList,
								makeTargetEntry((Expr *) makeVar(r->col.rtindex, r->col.attno, typid, typmod, collid, 0),
												list_length(q->targetList) + 1, name, false));
		rts = lappend_int(rts, r->col.rtindex);
		atts = lappend_int(atts, r->col.attno);
		row = bridge_add_row(an, BK_TARGET, 0, ++ord);
		bridge_set_column(row, &r->col);
		row->op = "search";
		row->name = name;
		row->col.type_name = format_type_with_typemod(typid, typmod);
	}
}

/*
 * bridge_add_results
 *		The "result" rows of an aggregate query (ord: output position, op:
 *		the aggregate or "column", the column, other_column: its name in
 *		the row query, detail "distinct"/"star") and its "result_order"
 *		rows (name: the output, op: asc/desc, detail: "nulls first"/"nulls
 *		last"; the target query sorts the groups itself, so both are kept)
 *		and its "group" rows (other_column: the GROUP BY column's name in
 *		the row query, in GROUP BY order).
 */
void
bridge_add_results(BridgeAnalysis *an, LevelCtx *lc, BridgeUngrouped *u)
{
	ListCell   *cell;
	int			ord = 0;

	foreach(cell, u->results)
	{
		BridgeResult *res = (BridgeResult *) lfirst(cell);
		BridgeRow  *row = bridge_add_row(an, BK_RESULT, 0, res->ord);
		BridgeColRef	col;

		row->name = res->name;
		row->op = res->func;
		if (res->var && bridge_trace_column(lc, (Node *) res->var, &col))
			bridge_set_column(row, &col);
		row->col.type_name = format_type_with_typemod(res->type, res->typmod);
		row->other_column = res->underlying;
		row->detail = res->star ? "star" : res->distinct ? "distinct" : NULL;
	}
	ord = 0;
	foreach(cell, u->groups)
	{
		BridgeRow  *row = bridge_add_row(an, BK_GROUP, 0, ++ord);

		row->other_column = (const char *) lfirst(cell);
	}
	ord = 0;
	foreach(cell, u->order)
	{
		BridgeResultOrder *ro = (BridgeResultOrder *) lfirst(cell);
		BridgeRow  *row = bridge_add_row(an, BK_RESULT_ORDER, 0, ++ord);

		row->name = ro->name;
		row->op = ro->desc ? "desc" : "asc";
		row->detail = ro->nulls_first ? "nulls first" : "nulls last";
	}
}

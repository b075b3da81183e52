/*-------------------------------------------------------------------------
 *
 * analyze_aggregate.c
 *	  A top-level aggregate query of cql_bridge_analyze() taken apart: the
 *	  query of the rows it aggregates (analyzed like any other query: its
 *	  table stores those rows) and what it computes of them (the "result"
 *	  and "result_order" rows: each output an aggregate of one column, or a
 *	  GROUP BY column).
 *
 * "SELECT o.w, count(*) AS n, sum(l.amount) AS total FROM lines l ...
 * WHERE l.order_key = $1 GROUP BY o.w ORDER BY total DESC" becomes the
 * row query "SELECT l.amount, o.w FROM lines l ... WHERE l.order_key = $1
 * ORDER BY o.w" (a GROUP BY column is ordered, so MR4 makes it a
 * clustering column and Cassandra can group the partition by it) and the
 * results count(*) AS n, sum(amount) AS total, w AS w.  cqlbridge plan
 * serves the aggregate with the table of the rows: the target query
 * computes the same aggregate over one partition, which cql_fdw pushes
 * down to Cassandra where it computes what PostgreSQL would.
 *
 * Accepted: count(*), count, sum, min, max and avg of a plain column
 * (DISTINCT too), GROUP BY plain columns, ORDER BY output columns, LIMIT.
 * Refused (0A000, with a hint): other aggregates, aggregates of
 * expressions, FILTER, ordered aggregates, HAVING, grouping sets,
 * expressions over aggregates, select-list subqueries beside aggregates,
 * DISTINCT, ORDER BY something that is no output column.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/analyze_aggregate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "analyze_int.h"
#include "analyze_query.h"
#include "compat.h"

static const char *const accepted[] = {"count", "sum", "min", "max", "avg", NULL};

/*
 * The plain column under casts and relabelings (a grouped column of
 * PostgreSQL 18: the column it stands for), or NULL.
 */
static Var *
plain_var(Query *q, Node *node)
{
	node = cqlfdw_group_expr(q, node);
	while (node != NULL)
	{
		if (IsA(node, RelabelType))
			node = (Node *) ((RelabelType *) node)->arg;
		else if (IsA(node, CollateExpr))
			node = (Node *) ((CollateExpr *) node)->arg;
		else
			break;
	}
	if (node != NULL && IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
		return (Var *) node;
	return NULL;
}

/*
 * column_name
 *		The name a Var of q gets in the row query: its column's name, or
 *		alias_column when another column of the row query has that name.
 */
static char *
column_name(Query *q, Var *var, List *tlist)
{
	RangeTblEntry *rte = rt_fetch(var->varno, q->rtable);
	char	   *name = get_rte_attribute_name(rte, var->varattno);
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		if (strcmp(tle->resname, name) == 0)
			return psprintf("%s_%s", rte->eref->aliasname, name);
	}
	return name;
}

/*
 * row_column
 *		The row query's output for var: found, or appended to *tlist.
 *		Returns its TargetEntry.
 */
static TargetEntry *
row_column(Query *q, Var *var, List **tlist)
{
	ListCell   *lc;
	TargetEntry *tle;

	foreach(lc, *tlist)
	{
		Var		   *other = (Var *) ((TargetEntry *) lfirst(lc))->expr;

		if (other->varno == var->varno && other->varattno == var->varattno)
			return (TargetEntry *) lfirst(lc);
	}
	tle = makeTargetEntry((Expr *) copyObject(var), list_length(*tlist) + 1,
						  column_name(q, var, *tlist), false);
	*tlist = lappend(*tlist, tle);
	return tle;
}

/*
 * bridge_ungroup
 *		Take the aggregate query q apart (see the file comment); refuses
 *		what the target query could not compute the same way.  q is not
 *		changed.
 */
BridgeUngrouped *
bridge_ungroup(Query *q)
{
	BridgeUngrouped *u = palloc0(sizeof(BridgeUngrouped));
	Query	   *rows = copyObject(q);
	List	   *tlist = NIL;
	List	   *sort = NIL;
	ListCell   *lc;
	int			ord = 0;
	Index		nextref = 1;

	if (q->groupingSets != NIL)
		bridge_unsupported("GROUPING SETS, CUBE or ROLLUP",
			   "Group by plain columns; a query table stores rows, and the target query groups one partition.");
	if (q->havingQual != NULL)
		bridge_unsupported("HAVING",
			   "Filter the groups in the application, or filter the rows with WHERE.");
	if (q->distinctClause != NIL)
		bridge_unsupported("DISTINCT in an aggregate query", "Remove DISTINCT: the groups are distinct already.");
	if (q->hasSubLinks)
		bridge_unsupported("subqueries in an aggregate query",
			   "Write the subquery as a query of its own.");

	/* GROUP BY: plain columns of the query's relations */
	foreach(lc, q->groupClause)
	{
		SortGroupClause *sgc = (SortGroupClause *) lfirst(lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, q->targetList);
		Var		   *var = plain_var(q, (Node *) tle->expr);
		TargetEntry *rtle;
		SortGroupClause *copy;

		if (var == NULL)
			bridge_unsupported("GROUP BY an expression",
				   "Group by plain columns: they become clustering columns of the query table.");
		rtle = row_column(q, var, &tlist);
		if (!OidIsValid(sgc->sortop))
			bridge_unsupported("GROUP BY a column without a btree ordering",
				   "Group by columns Cassandra can order (clustering columns).");
		u->groups = lappend(u->groups, rtle->resname);
		/* the row query orders by it: MR4 makes it a clustering column */
		copy = copyObject(sgc);
		copy->nulls_first = false;
		if (rtle->ressortgroupref == 0)
			rtle->ressortgroupref = nextref++;
		copy->tleSortGroupRef = rtle->ressortgroupref;
		sort = lappend(sort, copy);
	}

	/*
	 * The columns the WHERE clause compares with parameters: the row
	 * query selects them, so the table's key columns keep their names.
	 */
	{
		List	   *quals = make_ands_implicit((Expr *) q->jointree->quals);

		foreach(lc, quals)
		{
			Node	   *qual = (Node *) lfirst(lc);
			Var		   *var = NULL;

			if (IsA(qual, OpExpr) && list_length(((OpExpr *) qual)->args) == 2)
			{
				Node	   *l = linitial(((OpExpr *) qual)->args);
				Node	   *r = lsecond(((OpExpr *) qual)->args);

				if (bridge_param_of(r) > 0)
					var = plain_var(q, l);
				else if (bridge_param_of(l) > 0)
					var = plain_var(q, r);
			}
			else if (IsA(qual, ScalarArrayOpExpr))
				var = plain_var(q, linitial(((ScalarArrayOpExpr *) qual)->args));
			if (var != NULL)
				(void) row_column(q, var, &tlist);
		}
	}

	/* the outputs: aggregates of one column, or GROUP BY columns */
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);
		BridgeResult *res;
		Node	   *expr = (Node *) tle->expr;

		if (tle->resjunk)
			continue;
		res = palloc0(sizeof(BridgeResult));
		res->ord = ++ord;
		res->name = tle->resname;
		res->type = exprType(expr);
		res->typmod = exprTypmod(expr);
		while (expr && IsA(expr, RelabelType))
			expr = (Node *) ((RelabelType *) expr)->arg;
		if (expr && IsA(expr, Aggref))
		{
			Aggref	   *agg = (Aggref *) expr;
			char	   *fname = get_func_name(agg->aggfnoid);
			bool		ok = false;

			for (int i = 0; accepted[i]; i++)
				if (fname && strcmp(fname, accepted[i]) == 0 &&
					get_func_namespace(agg->aggfnoid) == PG_CATALOG_NAMESPACE)
					ok = true;
			if (!ok)
				bridge_unsupported(psprintf("the aggregate %s() at the top level", fname ? fname : "?"),
					   "Use count, sum, min, max or avg of a column; Cassandra computes those within a partition.");
			if (agg->aggfilter != NULL)
				bridge_unsupported("FILTER on an aggregate", "Put the condition in WHERE.");
			if (agg->aggorder != NIL)
				bridge_unsupported("an ordered aggregate (ORDER BY inside the call)",
					   "Remove the ORDER BY inside the call.");
			if (agg->aggkind != AGGKIND_NORMAL)
				bridge_unsupported("WITHIN GROUP aggregates", "Use count, sum, min, max or avg of a column.");
			res->func = fname;
			res->distinct = agg->aggdistinct != NIL;
			if (agg->aggstar)
				res->star = true;
			else
			{
				Var		   *var;

				if (list_length(agg->args) != 1 ||
					(var = plain_var(q, (Node *) ((TargetEntry *) linitial(agg->args))->expr)) == NULL)
					bridge_unsupported(psprintf("%s() of an expression", fname),
						   "Aggregate a plain column: the query table stores columns, and the target query aggregates them.");
				res->var = var;
				res->underlying = row_column(q, var, &tlist)->resname;
			}
		}
		else
		{
			Var		   *var = plain_var(q, expr);
			ListCell   *g;
			bool		grouped = false;

			if (var == NULL)
				bridge_unsupported("an expression in the select list of an aggregate query",
					   "Select aggregates of columns (count(*), sum(c), ...) and GROUP BY columns; compute expressions of them in the application.");
			foreach(g, q->groupClause)
			{
				TargetEntry *gt = get_sortgroupclause_tle((SortGroupClause *) lfirst(g), q->targetList);
				Var		   *gv = plain_var(q, (Node *) gt->expr);

				if (gv && gv->varno == var->varno && gv->varattno == var->varattno)
					grouped = true;
			}
			if (!grouped)
				bridge_unsupported("a column of an aggregate query that is not in GROUP BY",
					   "Group by the column, or aggregate it.");
			res->func = "column";
			res->var = var;
			res->underlying = row_column(q, var, &tlist)->resname;
		}
		u->results = lappend(u->results, res);
	}

	/* ORDER BY: output columns, by their output name */
	foreach(lc, q->sortClause)
	{
		SortGroupClause *sgc = (SortGroupClause *) lfirst(lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, q->targetList);
		BridgeResultOrder *ro;
		bool		desc;

		if (tle->resjunk)
			bridge_unsupported("ORDER BY an expression that is no output column of an aggregate query",
				   "Order by an output column (ORDER BY total DESC): the target query sorts the groups of one partition.");
		ro = palloc0(sizeof(BridgeResultOrder));
		ro->name = tle->resname;
		/* the compat header's test: PostgreSQL 18 reports a CompareType */
		if (!cqlfdw_ordering_op_is_desc(sgc->sortop, &desc))
			desc = false;
		ro->desc = desc;
		ro->nulls_first = sgc->nulls_first;
		u->order = lappend(u->order, ro);
	}

	rows->targetList = tlist;
	rows->groupClause = NIL;
	rows->hasAggs = false;
	rows->sortClause = sort;
	u->rows = rows;
	return u;
}

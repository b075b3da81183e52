/*-------------------------------------------------------------------------
 *
 * analyze_query_sql.c
 *	  SQL text derived from a query analyzed by cql_bridge_analyze(): the
 *	  "base" and "lineage" queries and the text of single expressions.
 *
 * Everything is printed by PostgreSQL's own deparser (ruleutils), so the
 * texts are exactly what the server understands.  The caller runs these
 * functions with an empty search_path: the deparser then schema-qualifies
 * every relation, type, function and operator outside pg_catalog, and the
 * texts run unchanged whatever search_path the consumer has.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/analyze_query_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/bitmapset.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#include "analyze_query.h"
#include "compat.h"

/*
 * A deparse namespace over the range table of q.  ruleutils exports no
 * constructor for a Query's namespace outside a whole-query deparse; the
 * plan-tree one needs only the range table and its names, and it resolves
 * Vars of unnamed joins through their alias variables as a query deparse
 * does.  Named joins are refused by the analysis, so no Var needs the
 * join's own column names.
 */
List *
bridge_deparse_context(Query *q, List *outer)
{
	PlannedStmt *ps = makeNode(PlannedStmt);
	Bitmapset  *all = NULL;
	List	   *names;
	List	   *ctx;
	int			i;

	ps->rtable = q->rtable;
	for (i = 1; i <= list_length(q->rtable); i++)
		all = bms_add_member(all, i);
	names = select_rtable_names_for_explain(q->rtable, all);
	ctx = deparse_context_for_plan_tree(ps, names);
	return list_concat(ctx, outer);
}

/*
 * bridge_deparse_expr
 *		Text of an expression of a query: Vars always prefixed by their
 *		table alias, no pretty-printing.  dpcontext comes from
 *		bridge_deparse_context.
 */
char *
bridge_deparse_expr(Node *expr, List *dpcontext)
{
	return deparse_expression(expr, dpcontext, true, false);
}

/*
 * first_param_walker
 *		Walker of bridge_first_param: stop at the first external parameter
 *		(its number in *paramid), looking into subqueries too.
 */
static bool
first_param_walker(Node *node, int *paramid)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN)
	{
		*paramid = ((Param *) node)->paramid;
		return true;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, first_param_walker,
								 (void *) paramid, 0);
	return expression_tree_walker(node, first_param_walker, (void *) paramid);
}

/* The number of the first external parameter found, 0 when none. */
int
bridge_first_param(Node *node)
{
	int			paramid = 0;

	(void) first_param_walker(node, &paramid);
	return paramid;
}

/* The conjuncts of quals that mention no parameter, as one qual again. */
static Node *
without_param_conjuncts(Node *quals)
{
	List	   *kept = NIL;
	ListCell   *lc;

	if (quals == NULL)
		return NULL;
	foreach(lc, make_ands_implicit((Expr *) quals))
	{
		Node	   *conjunct = (Node *) lfirst(lc);

		if (bridge_first_param(conjunct) == 0)
			kept = lappend(kept, conjunct);
	}
	if (kept == NIL)
		return NULL;
	return (Node *) make_ands_explicit(kept);
}

/*
 * Inner joins: a parameter condition in ON is the same as one in WHERE
 * (the analysis reports it as such), so it goes too.  Outer joins cannot
 * have one: the analysis refuses it.
 */
static void
strip_join_params(Node *node)
{
	if (node == NULL)
		return;
	if (IsA(node, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) node;

		strip_join_params(j->larg);
		strip_join_params(j->rarg);
		if (j->jointype == JOIN_INNER)
			j->quals = without_param_conjuncts(j->quals);
	}
	else if (IsA(node, FromExpr))
	{
		FromExpr   *f = (FromExpr *) node;
		ListCell   *lc;

		foreach(lc, f->fromlist)
			strip_join_params((Node *) lfirst(lc));
	}
}

/*
 * bridge_rewritten_sql
 *		The "base" SQL (lineage NIL) or the "lineage" SQL of the analyzed
 *		top query, built on a copy.
 *
 * Conditions on parameters are removed from WHERE and from the ON of inner
 * joins, ORDER BY, LIMIT and OFFSET are dropped with the junk target
 * entries, and for lineage the primary-key columns of the level-0 relations
 * are appended as lin_<alias>_<column>.  The result of pg_get_querydef runs
 * as it is, without parameters.
 */
char *
bridge_rewritten_sql(Query *query, List *lineage)
{
	Query	   *q = copyObject(query);
	List	   *tlist = NIL;
	ListCell   *lc;
	AttrNumber	resno = 1;

	q->jointree->quals = without_param_conjuncts(q->jointree->quals);
	strip_join_params((Node *) q->jointree);
	q->sortClause = NIL;
	q->limitCount = NULL;
	q->limitOffset = NULL;
	q->limitOption = CQLFDW_LIMIT_OPTION_NONE;

	/*
	 * Junk entries only carried ORDER BY keys (DISTINCT forces its keys into
	 * the select list, GROUP BY is refused), so they go with the ORDER BY.
	 * The lineage columns follow the visible ones.
	 */
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		if (tle->resjunk)
			continue;
		tle->resno = resno++;
		tlist = lappend(tlist, tle);
	}
	foreach(lc, lineage)
	{
		BridgeLineageColumn *lin = (BridgeLineageColumn *) lfirst(lc);
		RangeTblEntry *rte = rt_fetch(lin->rtindex, q->rtable);
		Oid			typid;
		int32		typmod;
		Oid			collid;
		Var		   *var;

		get_atttypetypmodcoll(rte->relid, lin->attno, &typid, &typmod, &collid);
		var = makeVar(lin->rtindex, lin->attno, typid, typmod, collid, 0);
		tlist = lappend(tlist, makeTargetEntry((Expr *) var, resno++,
											   pstrdup(lin->name), false));
	}
	q->targetList = tlist;

	return pg_get_querydef(q, false);
}

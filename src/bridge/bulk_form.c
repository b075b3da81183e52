/*-------------------------------------------------------------------------
 *
 * bulk_form.c
 *	  cql_bridge_bulk_form(view): the query of a source view with its
 *	  correlated aggregate subqueries turned into joins, for reads of the
 *	  whole view.
 *
 * A source view derived from a query such as the hotel's Q9 computes a
 * collection per row with a correlated scalar subquery:
 *
 *		SELECT g.guest_id, (SELECT array_agg(e.email) FROM guest_email e
 *							WHERE e.guest_id = g.guest_id) AS emails
 *		FROM guest g
 *
 * PostgreSQL runs such a subquery once per outer row (an index lookup each
 * time) and never decorrelates it.  That is what the stream needs, since
 * it recomputes a few keys at a time, but a read of every row (cqlbridge
 * diff) pays one lookup per row and per subquery.  The bulk form computes
 * each subquery once for all keys and joins it:
 *
 *		SELECT g.guest_id,
 *			   CASE WHEN b.p IS NULL THEN (SELECT array_agg(e.email)
 *										   FROM guest_email e WHERE false)
 *					ELSE b.v END AS emails
 *		FROM guest g LEFT JOIN (SELECT array_agg(e.email) AS v, true AS p,
 *										e.guest_id AS k1
 *								 FROM guest_email e GROUP BY e.guest_id) b
 *			 ON g.guest_id = b.k1
 *
 * Why the two are equal, row for row:
 *	- the aggregate subquery has no GROUP BY, so it yields exactly one row
 *	  per outer row; the grouped one yields at most one row per key, so the
 *	  LEFT JOIN keeps every outer row once;
 *	- the correlation is a conjunction of equalities "inner expression =
 *	  outer column" with the type's own equality operator and the same
 *	  collation on both sides, the operator GROUP BY uses: the rows of a
 *	  group are exactly the rows the subquery's WHERE selects for that key
 *	  (equalities are strict, so a NULL key matches nothing on either side);
 *	- an outer row without a group gets the aggregate over no rows, which
 *	  the uncorrelated "WHERE false" subquery computes (once: it is an
 *	  InitPlan), whatever the aggregate (count gives 0, array_agg NULL);
 *	  p tells a missing group from a group whose value is NULL;
 *	- every other condition of the subquery stays in the grouped query, and
 *	  nothing volatile, no nested subquery, no reference beyond the outer
 *	  query is accepted.
 * A subquery of any other shape is left as it was: the bulk form is the
 * view itself where nothing qualifies, and NULL is returned when nothing
 * at all was rewritten, or when the view is not security_invoker (its
 * query, run by the caller, would not read as the view reads).  The
 * callers compare the bulk form against data loaded from the view itself,
 * so a difference would show up as one.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/bulk_form.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_oper.h"
#include "parser/parse_relation.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "compat.h"

PG_FUNCTION_INFO_V1(cql_bridge_bulk_form);

/* One correlation equality "inner expression op outer column". */
typedef struct Correlation
{
	OpExpr	   *op;				/* the original equality */
	Node	   *inner;			/* expression of the subquery's rows */
	Var		   *outer;			/* column of the outer query (level 1) */
	bool		inner_first;	/* inner is the operator's left argument */
	Oid			sortop;			/* the type's GROUP BY operators */
	Oid			eqop;
	bool		hashable;
} Correlation;

/* State of the rewrite of one query level. */
typedef struct BulkLevel
{
	Query	   *q;				/* the level whose select list is rewritten */
	List	   *joins;			/* (BulkJoin *) to add, in order */
	int		   *count;			/* subqueries rewritten in the whole view */
} BulkLevel;

/* A grouped subquery to join to the level. */
typedef struct BulkJoin
{
	int			rtindex;		/* of its RTE_SUBQUERY in q's range table */
	List	   *corrs;			/* (Correlation *), key k<i> is attno i + 2 */
} BulkJoin;

/*
 * refs_outside_walker
 *		True when the node, looked at from *depth query levels inside the
 *		grouped subquery, refers to anything outside it: a Var or an
 *		aggregate of an enclosing level, or a CTE (a CTE of an enclosing
 *		level would no longer be in scope once the subquery moves).
 */
static bool
refs_outside_walker(Node *node, int *depth)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varlevelsup > (Index) *depth;
	if (IsA(node, Aggref))
	{
		if (((Aggref *) node)->agglevelsup > (Index) *depth)
			return true;
	}
	if (IsA(node, GroupingFunc))
		return true;
	if (IsA(node, PlaceHolderVar))
		return true;
	if (IsA(node, RangeTblEntry))
		return ((RangeTblEntry *) node)->rtekind == RTE_CTE;
	if (IsA(node, Query))
	{
		bool		found;

		(*depth)++;
		found = query_tree_walker((Query *) node, refs_outside_walker,
								  (void *) depth, QTW_EXAMINE_RTES_BEFORE);
		(*depth)--;
		return found;
	}
	return expression_tree_walker(node, refs_outside_walker, (void *) depth);
}

/*
 * refers_outside
 *		Does the grouped subquery (looked at as itself, not as a subquery
 *		inside another) refer to anything outside it?  See
 *		refs_outside_walker.
 */
static bool
refers_outside(Query *g)
{
	int			depth = 0;

	return query_tree_walker(g, refs_outside_walker, (void *) &depth,
							 QTW_EXAMINE_RTES_BEFORE);
}

/*
 * correlation_of
 *		The conjunct as a correlation equality, or NULL when it is not one:
 *		a two-argument operator, one argument a plain column of the outer
 *		query, the other an expression of the subquery's own rows of the
 *		same type and collation, the operator being that type's equality
 *		(the one GROUP BY uses).
 */
static Correlation *
correlation_of(Node *conjunct)
{
	OpExpr	   *op;
	Node	   *a,
			   *b;
	Correlation *c;
	Oid			type;

	if (!IsA(conjunct, OpExpr))
		return NULL;
	op = (OpExpr *) conjunct;
	if (list_length(op->args) != 2 || op->opresulttype != BOOLOID || op->opretset)
		return NULL;
	a = linitial(op->args);
	b = lsecond(op->args);
	c = palloc0(sizeof(Correlation));
	c->op = op;
	if (IsA(b, Var) && ((Var *) b)->varlevelsup == 1)
	{
		c->inner = a;
		c->outer = (Var *) b;
		c->inner_first = true;
	}
	else if (IsA(a, Var) && ((Var *) a)->varlevelsup == 1)
	{
		c->inner = b;
		c->outer = (Var *) a;
		c->inner_first = false;
	}
	else
		return NULL;

	/*
	 * the inner side: rows of the subquery, nothing volatile (that it refers
	 * to nothing outside is checked on the whole grouped subquery, whose
	 * key it becomes)
	 */
	if (!contain_vars_of_level(c->inner, 0) || contain_volatile_functions(c->inner) ||
		checkExprHasSubLink(c->inner))
		return NULL;

	/* same type and collation on both sides, the type's own equality */
	type = exprType(c->inner);
	if (type != c->outer->vartype || exprCollation(c->inner) != c->outer->varcollid ||
		op->inputcollid != c->outer->varcollid)
		return NULL;
	get_sort_group_operators(type, false, true, false, &c->sortop, &c->eqop, NULL,
							 &c->hashable);
	if (!OidIsValid(c->eqop) || c->eqop != op->opno)
		return NULL;
	return c;
}

/*
 * grouped_subquery
 *		The aggregate subquery grouped by its correlation keys, or NULL
 *		when it does not have the shape this rewrite is proven for (see
 *		the file header).  Select list: v (the value), p (true), k1..kn.
 */
static Query *
grouped_subquery(Query *s, List **corrs)
{
	Query	   *g;
	List	   *kept = NIL;
	List	   *tlist = NIL;
	TargetEntry *value = NULL;
	ListCell   *lc;
	int			i;

	*corrs = NIL;
	if (s->commandType != CMD_SELECT || !s->hasAggs || s->groupClause != NIL ||
		s->groupingSets != NIL || s->havingQual != NULL || s->hasWindowFuncs ||
		s->hasTargetSRFs || s->hasSubLinks || s->hasDistinctOn ||
		s->distinctClause != NIL || s->sortClause != NIL || s->limitCount != NULL ||
		s->limitOffset != NULL || s->setOperations != NULL || s->cteList != NIL ||
		s->rowMarks != NIL || s->hasForUpdate || s->jointree == NULL)
		return NULL;
	foreach(lc, s->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		if (tle->resjunk)
			continue;
		if (value != NULL)
			return NULL;
		value = tle;
	}
	if (value == NULL || contain_volatile_functions((Node *) s))
		return NULL;

	/* split WHERE into correlation equalities and conditions of its own */
	foreach(lc, make_ands_implicit((Expr *) s->jointree->quals))
	{
		Node	   *conjunct = (Node *) lfirst(lc);

		if (contain_vars_of_level(conjunct, 1))
		{
			Correlation *c = correlation_of(conjunct);

			if (c == NULL)
				return NULL;
			*corrs = lappend(*corrs, c);
		}
		else
			kept = lappend(kept, conjunct);
	}
	if (*corrs == NIL)
		return NULL;

	g = copyObject(s);
	g->jointree->quals = kept == NIL ? NULL : (Node *) make_ands_explicit(kept);
	tlist = lappend(tlist, makeTargetEntry(copyObject(value->expr), 1, pstrdup("v"), false));
	tlist = lappend(tlist, makeTargetEntry((Expr *) makeBoolConst(true, false), 2,
										   pstrdup("p"), false));
	g->groupClause = NIL;
	i = 0;
	foreach(lc, *corrs)
	{
		Correlation *c = (Correlation *) lfirst(lc);
		TargetEntry *tle;
		SortGroupClause *sgc = makeNode(SortGroupClause);

		i++;
		tle = makeTargetEntry((Expr *) copyObject(c->inner), i + 2, psprintf("k%d", i), false);
		tle->ressortgroupref = i;
		tlist = lappend(tlist, tle);
		sgc->tleSortGroupRef = i;
		sgc->eqop = c->eqop;
		sgc->sortop = c->sortop;
		sgc->nulls_first = false;
		sgc->hashable = c->hashable;
		g->groupClause = lappend(g->groupClause, sgc);
	}
	g->targetList = tlist;

	/* nothing left that points outside the grouped query */
	if (refers_outside(g))
		return NULL;
	return g;
}

/*
 * empty_input_value
 *		The subquery with WHERE false: the aggregate over no rows, as the
 *		original subquery yields it for an outer row without any match.
 */
static Node *
empty_input_value(SubLink *sublink)
{
	SubLink    *sl = copyObject(sublink);
	Query	   *s = (Query *) sl->subselect;

	s->jointree->quals = (Node *) makeBoolConst(false, false);
	return (Node *) sl;
}

/*
 * hoist
 *		Replace one correlated aggregate subquery of the select list by a
 *		column of a grouped subquery joined to the level; NULL when the
 *		subquery does not qualify.
 */
static Node *
hoist(SubLink *sublink, BulkLevel *lv)
{
	List	   *corrs;
	Query	   *g;
	RangeTblEntry *rte;
	BulkJoin   *bj;
	List	   *colnames = NIL;
	ListCell   *lc;
	Var		   *value;
	Var		   *present;
	CaseExpr   *ce;
	CaseWhen   *cw;
	NullTest   *nt;
	TargetEntry *vtle;

	if (sublink->subLinkType != EXPR_SUBLINK || !IsA(sublink->subselect, Query))
		return NULL;
	g = grouped_subquery((Query *) sublink->subselect, &corrs);
	if (g == NULL)
		return NULL;

	foreach(lc, g->targetList)
		colnames = lappend(colnames, makeString(pstrdup(((TargetEntry *) lfirst(lc))->resname)));
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = g;
	rte->alias = makeAlias(psprintf("cqlbridge_bulk_%d", *lv->count + 1), NIL);
	rte->eref = makeAlias(rte->alias->aliasname, colnames);
	rte->lateral = false;
	rte->inh = false;
	rte->inFromCl = true;
	lv->q->rtable = lappend(lv->q->rtable, rte);

	bj = palloc0(sizeof(BulkJoin));
	bj->rtindex = list_length(lv->q->rtable);
	bj->corrs = corrs;
	lv->joins = lappend(lv->joins, bj);
	(*lv->count)++;

	vtle = (TargetEntry *) linitial(g->targetList);
	value = makeVar(bj->rtindex, 1, exprType((Node *) vtle->expr),
					exprTypmod((Node *) vtle->expr), exprCollation((Node *) vtle->expr), 0);
	present = makeVar(bj->rtindex, 2, BOOLOID, -1, InvalidOid, 0);
	nt = makeNode(NullTest);
	nt->arg = (Expr *) present;
	nt->nulltesttype = IS_NULL;
	nt->argisrow = false;
	nt->location = -1;
	cw = makeNode(CaseWhen);
	cw->expr = (Expr *) nt;
	cw->result = (Expr *) empty_input_value(sublink);
	cw->location = -1;
	ce = makeNode(CaseExpr);
	ce->casetype = exprType((Node *) sublink);
	ce->casecollid = exprCollation((Node *) sublink);
	ce->arg = NULL;
	ce->args = list_make1(cw);
	ce->defresult = (Expr *) value;
	ce->location = -1;
	return (Node *) ce;
}

/*
 * select_list_mutator
 *		Rewrites the qualifying subqueries of a select-list expression;
 *		nothing inside a subquery is looked at.
 */
static Node *
select_list_mutator(Node *node, BulkLevel *lv)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, SubLink))
	{
		Node	   *r = hoist((SubLink *) node, lv);

		return r != NULL ? r : node;
	}
	if (IsA(node, Query))
		return node;
	return expression_tree_mutator(node, select_list_mutator, (void *) lv);
}

/*
 * join_quals
 *		ON of the join with a grouped subquery: each correlation with its
 *		outer column now of this level and its inner side the key column.
 */
static Node *
join_quals(BulkJoin *bj)
{
	List	   *quals = NIL;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, bj->corrs)
	{
		Correlation *c = (Correlation *) lfirst(lc);
		OpExpr	   *op = copyObject(c->op);
		Var		   *outer = copyObject(c->outer);
		Var		   *key;

		i++;
		outer->varlevelsup = 0;
		key = makeVar(bj->rtindex, i + 2, exprType(c->inner), exprTypmod(c->inner),
					  exprCollation(c->inner), 0);
		op->args = c->inner_first ? list_make2(key, outer) : list_make2(outer, key);
		quals = lappend(quals, op);
	}
	return (Node *) make_ands_explicit(quals);
}

/*
 * add_left_join
 *		FROM item := item LEFT JOIN grouped subquery ON keys, with the range
 *		table entry of the join the deparser expects (its columns are the
 *		item's followed by the subquery's).
 */
static Node *
add_left_join(Query *q, Node *item, BulkJoin *bj)
{
	JoinExpr   *j = makeNode(JoinExpr);
	RangeTblRef *rtr = makeNode(RangeTblRef);
	RangeTblEntry *jrte = makeNode(RangeTblEntry);
	List	   *lnames,
			   *lvars,
			   *rnames,
			   *rvars;
	List	   *lcols = NIL,
			   *rcols = NIL;
	int			lindex;
	ListCell   *lc;

	if (IsA(item, RangeTblRef))
		lindex = ((RangeTblRef *) item)->rtindex;
	else
		lindex = ((JoinExpr *) item)->rtindex;
	cqlfdw_expand_rte(rt_fetch(lindex, q->rtable), lindex, &lnames, &lvars);
	cqlfdw_expand_rte(rt_fetch(bj->rtindex, q->rtable), bj->rtindex, &rnames, &rvars);
	foreach(lc, lvars)
		lcols = lappend_int(lcols, ((Var *) lfirst(lc))->varattno);
	foreach(lc, rvars)
		rcols = lappend_int(rcols, ((Var *) lfirst(lc))->varattno);

	jrte->rtekind = RTE_JOIN;
	jrte->jointype = JOIN_LEFT;
	jrte->joinmergedcols = 0;
	jrte->joinaliasvars = list_concat(lvars, rvars);
	jrte->joinleftcols = lcols;
	jrte->joinrightcols = rcols;
	jrte->alias = NULL;
	jrte->eref = makeAlias("unnamed_join", list_concat(lnames, rnames));
	jrte->lateral = false;
	jrte->inh = false;
	jrte->inFromCl = true;
	q->rtable = lappend(q->rtable, jrte);

	rtr->rtindex = bj->rtindex;
	j->jointype = JOIN_LEFT;
	j->isNatural = false;
	j->larg = item;
	j->rarg = (Node *) rtr;
	j->quals = join_quals(bj);
	j->alias = NULL;
	j->rtindex = list_length(q->rtable);
	return (Node *) j;
}

/*
 * bulk_level
 *		Rewrites one query level and the subqueries in its FROM.  A level is
 *		rewritten only when it is a plain select of one FROM item (no
 *		aggregation, window, set operation or set-returning select list,
 *		whose meaning a join below could change).
 */
static void
bulk_level(Query *q, int *count)
{
	BulkLevel	lv;
	ListCell   *lc;
	Node	   *item;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = (RangeTblEntry *) lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY && rte->subquery != NULL)
			bulk_level(rte->subquery, count);
	}
	if (q->commandType != CMD_SELECT || q->hasAggs || q->groupClause != NIL ||
		q->groupingSets != NIL || q->havingQual != NULL || q->hasWindowFuncs ||
		q->hasTargetSRFs || q->setOperations != NULL || q->rowMarks != NIL ||
		q->jointree == NULL || list_length(q->jointree->fromlist) != 1 || !q->hasSubLinks)
		return;
	item = (Node *) linitial(q->jointree->fromlist);
	if (!IsA(item, RangeTblRef) && !IsA(item, JoinExpr))
		return;

	lv.q = q;
	lv.joins = NIL;
	lv.count = count;
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		tle->expr = (Expr *) select_list_mutator((Node *) tle->expr, &lv);
	}
	foreach(lc, lv.joins)
		item = add_left_join(q, item, (BulkJoin *) lfirst(lc));
	q->jointree->fromlist = list_make1(item);
}

/*
 * cql_bridge_bulk_form(view regclass) RETURNS text
 *		The view's query with its correlated aggregate subqueries joined
 *		instead, or NULL when none qualifies.  Runs with an empty
 *		search_path (the function's SET clause), so every name outside
 *		pg_catalog is schema-qualified in the text.
 */
Datum
cql_bridge_bulk_form(PG_FUNCTION_ARGS)
{
	Oid			viewid = PG_GETARG_OID(0);
	Relation	rel;
	Query	   *q;
	int			count = 0;

	rel = relation_open(viewid, AccessShareLock);
	if (rel->rd_rel->relkind != RELKIND_VIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a view", RelationGetRelationName(rel)),
				 errhint("cql_bridge_bulk_form() takes a source view of a cqlbridge plan.")));

	/*
	 * A view with its owner's rights reads its tables with the owner's
	 * privileges and row-level security; its query run by the caller would
	 * not.  cqlbridge's source views are security_invoker.
	 */
	if (!RelationHasSecurityInvoker(rel))
	{
		relation_close(rel, AccessShareLock);
		PG_RETURN_NULL();
	}
	q = copyObject(get_view_query(rel));
	relation_close(rel, AccessShareLock);

	bulk_level(q, &count);
	if (count == 0)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(pg_get_querydef(q, false)));
}

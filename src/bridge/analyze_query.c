/*-------------------------------------------------------------------------
 *
 * analyze_query.c
 *	  cql_bridge_analyze(query text, param_types regtype[]): one workload
 *	  query, parsed and analyzed by PostgreSQL itself, reported as rows
 *	  (relations, joins, parameter conditions, order, output columns,
 *	  aggregates of select-list subqueries, rewritten SQL) from which
 *	  cqlbridge plan derives Cassandra query tables.
 *
 * The contract is docs/cqlbridge-design.md, section 1.  Nothing of the
 * query is executed; the analyzer's AccessShareLocks on the relations are
 * the only side effect.
 *
 * Readings of points the contract leaves open (the consumers rely on them):
 *	* Rows are sorted by (kind as listed in the contract, level, ord) even for
 *	  "target": an aggregate target carries its sublink's level, so it sorts
 *	  after the level-0 targets; use ord for the output position.
 *	* ord counts from 1 per (kind, level); "param" has ord = k, "target" and
 *	  "aggregate" the output position, "sql" 1 = base, 2 = lineage.
 *	* "relation": op is how the relation entered its FROM: the first item
 *	  "from", a later comma item "inner", the right side of a join the join
 *	  type.  FULL JOIN is refused (a query table cannot serve it).
 *	* "join": the columns as written (left operand first), except for an
 *	  outer join whose alias is the preserved side (RIGHT JOIN is reported
 *	  as "left" from its preserved side).  An ON condition of an outer join
 *	  that is not such a column pair is a "filter" plus a "warning".
 *	* "correlation" rows are the "=" of a sublink column and an outer column;
 *	  a sublink without one gets a warning.
 *	* "equality"/"range" also come from the ON of inner joins (the same
 *	  condition as in WHERE); their conjuncts are removed from base and
 *	  lineage like WHERE conjuncts.  Parameters anywhere else than WHERE,
 *	  inner-join ON and LIMIT/OFFSET are refused: base must run without them.
 *	* "target": type_name is the output type (a cast around a column shows
 *	  there; the column ref is the column under the cast).
 *	* "order": detail holds the key's text whenever the key is not a plain
 *	  column (even if it is an output column, which also sets name).
 *	* "limit": param, or detail = the constant's text; OFFSET and WITH TIES
 *	  are warnings (Cassandra has neither).
 *	* "aggregate": column ref = first argument when a plain column;
 *	  "aggregate_order"/"aggregate_field" set detail to the expression text
 *	  when the key/value is not a plain column.
 *	* "equality" op "= ANY" (col = ANY($k), one array parameter) and op
 *	  "IN" (col IN ($1, $2) or col = $1 OR col = $2, a row per parameter):
 *	  IN lists, served by the table of the single-value form.
 *	* A top-level aggregate query (aggregates, GROUP BY) is analyzed as the
 *	  query of the rows it aggregates (analyze_aggregate.c: the GROUP BY
 *	  columns ordered, so they become clustering columns), plus "result"
 *	  rows (per output: op = count/sum/min/max/avg or "column", the column,
 *	  other_column = its output name in the row query, detail "star" or
 *	  "distinct"), "result_order" rows (ORDER BY output name, op asc/desc,
 *	  detail nulls first/last) and "group" rows (other_column per GROUP BY
 *	  column).
 *	* "param": ord = k and type_name only (param column NULL).
 *	* Every text (filter/order/target detail, sql) is deparsed with an empty
 *	  search_path: names outside pg_catalog are schema-qualified.  The sql
 *	  texts are pg_get_querydef output: several lines, no trailing ";", and
 *	  (as ruleutils does) columns unqualified when the query has a single
 *	  relation; they run as they are.
 *	* Besides the contract's list, also refused (0A000): top-level
 *	  aggregates other than those above (analyze_aggregate.c), DISTINCT ON, set-returning functions in the
 *	  select list, a FROM-less SELECT, named joins (JOIN ... AS j), select-
 *	  list subqueries that are not a single aggregate (or are nested, ordered
 *	  or limited), FILTER and WITHIN GROUP aggregates.  Allowed with a
 *	  warning: DISTINCT, WHERE [NOT] EXISTS (a "filter"; its relations are
 *	  not reported), relations without a primary key, unused parameters.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/analyze_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/stratnum.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "tcop/utility.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "analyze_int.h"
#include "analyze_query.h"
#include "compat.h"

PG_FUNCTION_INFO_V1(cql_bridge_analyze);

static const char *const kind_names[BK_COUNT] = {
	"param", "relation", "join", "correlation", "equality", "range",
	"filter", "order", "limit", "target", "aggregate", "aggregate_order",
	"aggregate_field", "result", "result_order", "group", "sql", "warning"
};

#define BRIDGE_NCOLUMNS 14



/*
 * add_warning
 *		A "warning" row at level whose detail is text.
 */
static void
add_warning(BridgeAnalysis *an, int level, char *text)
{
	BridgeRow  *row = bridge_add_row(an, BK_WARNING, level, 0);

	row->detail = text;
}






/* Columns of this level an expression mentions (not inside subqueries). */
typedef struct VarCollect
{
	LevelCtx   *lc;
	List	   *columns;		/* BridgeColRef *, distinct */
	bool		untraceable;	/* a whole-row var, an outer column, ... */
} VarCollect;

/*
 * collect_columns_walker
 *		Expression walker of single_column: collect the distinct columns of
 *		this level.
 *
 * A Var that is not one (an outer reference, a whole-row Var, a column not
 * traceable to a base relation) or a subquery makes the expression
 * untraceable.
 */
static bool
collect_columns_walker(Node *node, VarCollect *vc)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		BridgeColRef	col;
		ListCell   *lc;

		if (((Var *) node)->varlevelsup != 0 || !bridge_trace_column(vc->lc, node, &col))
		{
			vc->untraceable = true;
			return false;
		}
		foreach(lc, vc->columns)
		{
			BridgeColRef  *seen = (BridgeColRef *) lfirst(lc);

			if (seen->rtindex == col.rtindex && seen->attno == col.attno)
				return false;
		}
		vc->columns = lappend(vc->columns, memcpy(palloc(sizeof(BridgeColRef)), &col, sizeof(BridgeColRef)));
		return false;
	}
	if (IsA(node, Query))
	{
		vc->untraceable = true;
		return false;
	}
	return expression_tree_walker(node, collect_columns_walker, (void *) vc);
}

/* The one column expr mentions, if it mentions exactly one. */
static bool
single_column(LevelCtx *lc, Node *expr, BridgeColRef *out)
{
	VarCollect	vc = {lc, NIL, false};

	(void) collect_columns_walker(expr, &vc);
	if (vc.untraceable || list_length(vc.columns) != 1)
		return false;
	*out = *(BridgeColRef *) linitial(vc.columns);
	return true;
}

/* AND trees flattened to a list of conjuncts. */
static List *
conjuncts_of(Node *node, List *out)
{
	if (node == NULL)
		return out;
	if (IsA(node, BoolExpr) && ((BoolExpr *) node)->boolop == AND_EXPR)
	{
		ListCell   *lc;

		foreach(lc, ((BoolExpr *) node)->args)
			out = conjuncts_of((Node *) lfirst(lc), out);
		return out;
	}
	if (IsA(node, List))
	{
		ListCell   *lc;

		foreach(lc, (List *) node)
			out = conjuncts_of((Node *) lfirst(lc), out);
		return out;
	}
	return lappend(out, node);
}

/*
 * is_exists
 *		Is node an EXISTS sublink, possibly under NOT?
 */
static bool
is_exists(Node *node)
{
	if (IsA(node, BoolExpr) && ((BoolExpr *) node)->boolop == NOT_EXPR)
		node = (Node *) linitial(((BoolExpr *) node)->args);
	return IsA(node, SubLink) && ((SubLink *) node)->subLinkType == EXISTS_SUBLINK;
}

/* Range-table indexes of the relations under a join-tree node. */
static Bitmapset *
relations_under(Node *node, Bitmapset *out)
{
	if (node == NULL)
		return out;
	if (IsA(node, RangeTblRef))
		return bms_add_member(out, ((RangeTblRef *) node)->rtindex);
	if (IsA(node, JoinExpr))
	{
		out = relations_under(((JoinExpr *) node)->larg, out);
		return relations_under(((JoinExpr *) node)->rarg, out);
	}
	if (IsA(node, FromExpr))
	{
		ListCell   *lc;

		foreach(lc, ((FromExpr *) node)->fromlist)
			out = relations_under((Node *) lfirst(lc), out);
	}
	return out;
}

/*
 * commute_op
 *		The comparison operator with its operands swapped: "<" and ">", "<="
 *		and ">=" trade places; any other operator is returned as it is.
 */
static const char *
commute_op(const char *op)
{
	if (strcmp(op, "<") == 0)
		return ">";
	if (strcmp(op, "<=") == 0)
		return ">=";
	if (strcmp(op, ">") == 0)
		return "<";
	if (strcmp(op, ">=") == 0)
		return "<=";
	return op;
}

/* "equality" or "range" row for column op $k; false for other operators. */
static bool
add_param_condition(LevelCtx *lc, const BridgeColRef *col, const char *op, int paramid)
{
	BridgeRowKind kind;
	BridgeRow  *row;

	if (strcmp(op, "=") == 0)
		kind = BK_EQUALITY;
	else if (strcmp(op, "<") == 0 || strcmp(op, "<=") == 0 ||
			 strcmp(op, ">") == 0 || strcmp(op, ">=") == 0)
		kind = BK_RANGE;
	else
		return false;
	row = bridge_add_row(lc->an, kind, lc->level, 0);
	bridge_set_column(row, col);
	row->op = op;
	row->param = paramid;
	return true;
}



/*
 * add_filter
 *		A "filter" row: the condition's text, and its column when it
 *		mentions exactly one.
 */
static void
add_filter(LevelCtx *lc, Node *qual)
{
	BridgeRow  *row = bridge_add_row(lc->an, BK_FILTER, lc->level, 0);
	BridgeColRef	col;

	row->detail = bridge_deparse_expr(qual, lc->dpcontext);
	if (single_column(lc, qual, &col))
		bridge_set_column(row, &col);
}

/*
 * One conjunct of WHERE (j NULL) or of the ON of join j.  preserved: the
 * relations of the preserved side when j is an outer join.
 */
static void
classify_conjunct(LevelCtx *lc, Node *qual, JoinExpr *j, Bitmapset *preserved)
{
	bool		outer = (j != NULL && j->jointype != JOIN_INNER);
	int			paramid;

	if (checkExprHasSubLink(qual))
	{
		if (lc->level == 0 && j == NULL && is_exists(qual))
		{
			add_filter(lc, qual);
			add_warning(lc->an, lc->level,
						psprintf("condition %s: the relations of the EXISTS subquery are not analyzed; changes to them are not tracked",
								 bridge_deparse_expr(qual, lc->dpcontext)));
			return;
		}
		if (lc->level > 0)
			bridge_unsupported("subqueries inside a select-list subquery",
						"Write the condition as a join inside the subquery.");
		if (j != NULL)
			bridge_unsupported("subqueries in JOIN ... ON",
						"Write the condition in WHERE, as a join or as EXISTS (SELECT 1 FROM ... WHERE ...).");
		bridge_unsupported("subqueries in WHERE other than [NOT] EXISTS",
					"Write the condition as a join, or as EXISTS (SELECT 1 FROM ... WHERE ...).");
	}

	paramid = bridge_first_param(qual);
	if (paramid > 0 && lc->level > 0)
		bridge_unsupported("parameters in a select-list subquery",
					"Use parameters only in the top-level WHERE clause (and LIMIT); the subquery is computed for every row of the query table.");
	if (paramid > 0 && outer)
		bridge_unsupported("parameters in the ON clause of an outer join",
					"Move the condition on the parameter to the WHERE clause.");

	if (IsA(qual, OpExpr) && list_length(((OpExpr *) qual)->args) == 2)
	{
		OpExpr	   *opexpr = (OpExpr *) qual;
		char	   *opname = get_opname(opexpr->opno);
		Node	   *left = (Node *) linitial(opexpr->args);
		Node	   *right = (Node *) lsecond(opexpr->args);
		BridgeColRef	lcol;
		BridgeColRef	rcol;
		bool		lis = bridge_trace_column(lc, left, &lcol);
		bool		ris = bridge_trace_column(lc, right, &rcol);
		int			lparam = bridge_param_of(left);
		int			rparam = bridge_param_of(right);

		if (opname == NULL)
			opname = "?";

		if (strcmp(opname, "=") == 0 && lis && ris)
		{
			if (lcol.levelsup == 0 && rcol.levelsup == 0 &&
				lcol.rtindex != rcol.rtindex)
			{
				const BridgeColRef *first = &lcol;
				const BridgeColRef *second = &rcol;
				BridgeRow  *row;

				if (outer)
				{
					bool		lpres = bms_is_member(lcol.rtindex, preserved);
					bool		rpres = bms_is_member(rcol.rtindex, preserved);

					if (lpres == rpres)
						goto outer_filter;
					if (rpres)
					{
						first = &rcol;
						second = &lcol;
					}
				}
				row = bridge_add_row(lc->an, BK_JOIN, lc->level, 0);
				bridge_set_column(row, first);
				row->other_alias = second->alias;
				row->other_column = second->column_name;
				row->detail = outer ? "left" : "inner";
				return;
			}
			if (lc->level > 0 && lcol.levelsup + rcol.levelsup == 1)
			{
				const BridgeColRef *inner = lcol.levelsup == 0 ? &lcol : &rcol;
				const BridgeColRef *outercol = lcol.levelsup == 0 ? &rcol : &lcol;
				BridgeRow  *row = bridge_add_row(lc->an, BK_CORRELATION, lc->level, 0);

				bridge_set_column(row, inner);
				row->other_alias = outercol->alias;
				row->other_column = outercol->column_name;
				lc->ncorrelations++;
				return;
			}
		}
		if (lis && lcol.levelsup == 0 && rparam > 0 &&
			add_param_condition(lc, &lcol, opname, rparam))
			return;
		if (ris && rcol.levelsup == 0 && lparam > 0 &&
			add_param_condition(lc, &rcol, commute_op(opname), lparam))
			return;
	}

	if (paramid > 0 && bridge_add_in_list(lc, qual))
		return;

outer_filter:
	add_filter(lc, qual);
	if (outer)
		add_warning(lc->an, lc->level,
					psprintf("condition %s in the ON clause of an outer join restricts only the joined rows, not the rows of the preserved side",
							 bridge_deparse_expr(qual, lc->dpcontext)));
}

/*
 * classify_quals
 *		Classify every conjunct of quals (of WHERE when j is NULL, else of
 *		the ON of join j) by classify_conjunct.
 */
static void
classify_quals(LevelCtx *lc, Node *quals, JoinExpr *j, Bitmapset *preserved)
{
	ListCell   *cell;

	foreach(cell, conjuncts_of(quals, NIL))
		classify_conjunct(lc, (Node *) lfirst(cell), j, preserved);
}

/* A relation row; level-0 primary keys also become lineage columns. */
static void
add_relation(LevelCtx *lc, int rtindex, RangeTblEntry *rte, const char *how)
{
	BridgeRow  *row = bridge_add_row(lc->an, BK_RELATION, lc->level, 0);
	Relation	rel;
	Oid			pkoid;
	const char *qualified;

	row->col.alias = rte->eref->aliasname;
	row->col.schema_name = get_namespace_name(get_rel_namespace(rte->relid));
	row->col.table_name = get_rel_name(rte->relid);
	row->op = how;
	qualified = quote_qualified_identifier(row->col.schema_name, row->col.table_name);

	rel = relation_open(rte->relid, AccessShareLock);
	pkoid = cqlfdw_primary_key_index(rel);
	if (OidIsValid(pkoid))
	{
		HeapTuple	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(pkoid));
		Form_pg_index index;
		StringInfoData buf;
		int			i;

		if (!HeapTupleIsValid(tuple))
			elog(ERROR, "cache lookup failed for index %u", pkoid);
		index = (Form_pg_index) GETSTRUCT(tuple);
		initStringInfo(&buf);
		for (i = 0; i < index->indnkeyatts; i++)
		{
			AttrNumber	attno = index->indkey.values[i];
			char	   *attname = get_attname(rte->relid, attno, false);

			appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "", attname);
			if (lc->level == 0)
			{
				BridgeLineageColumn *lin = palloc0(sizeof(BridgeLineageColumn));

				lin->rtindex = rtindex;
				lin->attno = attno;
				lin->name = psprintf("lin_%s_%s", row->col.alias, attname);
				lc->an->lineage = lappend(lc->an->lineage, lin);
			}
		}
		ReleaseSysCache(tuple);
		row->detail = buf.data;
	}
	else
		add_warning(lc->an, lc->level,
					psprintf("relation %s (%s) has no primary key: its rows cannot be identified for lineage and synchronization",
							 qualified, row->col.alias));
	relation_close(rel, AccessShareLock);
}

/* FROM items in written order; quals of a join after its inputs. */
static void
walk_from(LevelCtx *lc, Node *node, const char *how)
{
	if (IsA(node, RangeTblRef))
	{
		int			rtindex = ((RangeTblRef *) node)->rtindex;
		RangeTblEntry *rte = rt_fetch(rtindex, lc->query->rtable);

		switch (rte->rtekind)
		{
			case RTE_RELATION:
				add_relation(lc, rtindex, rte, how);
				break;
			case RTE_SUBQUERY:
				bridge_unsupported("subqueries in FROM",
							"Join the base tables directly; aggregate child rows in a scalar subquery of the select list.");
				break;
			case RTE_FUNCTION:
			case RTE_TABLEFUNC:
				bridge_unsupported("functions in FROM",
							"Read from tables only; compute values in the select list.");
				break;
			case RTE_VALUES:
				bridge_unsupported("VALUES in FROM", "Read from tables only.");
				break;
			case RTE_CTE:
				bridge_unsupported("WITH queries (common table expressions)",
							"Write the CTE as a join, or as a scalar subquery in the select list.");
				break;
			default:
				bridge_unsupported("this kind of FROM item", "Read from tables only.");
		}
	}
	else if (IsA(node, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) node;
		const char *jt;
		Bitmapset  *preserved = NULL;

		switch (j->jointype)
		{
			case JOIN_INNER:
				jt = "inner";
				break;
			case JOIN_LEFT:
				jt = "left";
				preserved = relations_under(j->larg, NULL);
				break;
			case JOIN_RIGHT:
				jt = "right";
				preserved = relations_under(j->rarg, NULL);
				break;
			default:
				bridge_unsupported("FULL JOIN",
							"Use LEFT JOIN from the table whose rows the query returns.");
		}
		if (j->alias != NULL)
			bridge_unsupported("join aliases (JOIN ... AS name)",
						"Remove the alias of the join and qualify columns by their table aliases.");
		walk_from(lc, j->larg, how);
		walk_from(lc, j->rarg, jt);
		classify_quals(lc, j->quals, j, preserved);
	}
	else if (IsA(node, FromExpr))
	{
		ListCell   *cell;
		bool		first = true;

		foreach(cell, ((FromExpr *) node)->fromlist)
		{
			walk_from(lc, (Node *) lfirst(cell), first ? how : "inner");
			first = false;
		}
		classify_quals(lc, ((FromExpr *) node)->quals, NULL, NULL);
	}
	else
		elog(ERROR, "unrecognized join tree node: %d", (int) nodeTag(node));
}

/* Relations and conditions of one query level. */
static void
walk_level(LevelCtx *lc)
{
	if (lc->query->jointree == NULL || lc->query->jointree->fromlist == NIL)
		bridge_unsupported("a SELECT without FROM",
					"Select the rows of a table: SELECT ... FROM schema.table alias WHERE ...");
	walk_from(lc, (Node *) lc->query->jointree, "from");
}

/* "asc" / "desc" of a btree ordering operator, NULL for others. */
static const char *
sort_direction(Oid sortop)
{
	bool		desc;

	if (!cqlfdw_ordering_op_is_desc(sortop, &desc))
		return NULL;
	return desc ? "desc" : "asc";
}

/* Text of a constant through its type's output function. */
static char *
const_text(Const *c)
{
	Oid			typout;
	bool		isvarlena;

	getTypeOutputInfo(c->consttype, &typout, &isvarlena);
	return OidOutputFunctionCall(typout, c->constvalue);
}

/*
 * check_subquery
 *		Refuse what a select-list subquery may not contain: set operations,
 *		WITH, GROUP BY/HAVING, window functions, ORDER BY/LIMIT/OFFSET,
 *		DISTINCT, set-returning functions, locking, a subquery in its select
 *		list, parameters.
 */
static void
check_subquery(Query *sq)
{
	if (sq->setOperations != NULL)
		bridge_unsupported("set operations in a select-list subquery",
					"Aggregate one child table (or a join of tables) per subquery.");
	if (sq->cteList != NIL)
		bridge_unsupported("WITH queries (common table expressions)",
					"Write the CTE as a join.");
	if (sq->groupClause != NIL || sq->groupingSets != NIL || sq->havingQual != NULL)
		bridge_unsupported("GROUP BY/HAVING in a select-list subquery",
					"Aggregate all child rows of the outer row: (SELECT agg(...) FROM child c WHERE c.parent_id = p.id).");
	if (sq->hasWindowFuncs)
		bridge_unsupported("window functions", "Order the aggregated values with agg(x ORDER BY y).");
	if (sq->sortClause != NIL || sq->limitCount != NULL || sq->limitOffset != NULL)
		bridge_unsupported("ORDER BY/LIMIT/OFFSET in a select-list subquery",
					"Order inside the aggregate: array_agg(x ORDER BY y).");
	if (sq->distinctClause != NIL)
		bridge_unsupported("DISTINCT in a select-list subquery",
					"Use the aggregate's DISTINCT: array_agg(DISTINCT x ORDER BY x).");
	if (sq->hasTargetSRFs)
		bridge_unsupported("set-returning functions in the select list",
					"Aggregate the values instead.");
	if (sq->rowMarks != NIL)
		bridge_unsupported("FOR UPDATE/FOR SHARE", "Remove the locking clause.");
	if (sq->hasSubLinks)
	{
		ListCell   *lc;

		foreach(lc, sq->targetList)
			if (checkExprHasSubLink((Node *) ((TargetEntry *) lfirst(lc))->expr))
				bridge_unsupported("nested select-list subqueries",
							"Aggregate one level of child rows per subquery; join further tables inside it.");
	}
	if (bridge_first_param((Node *) sq) > 0)
		bridge_unsupported("parameters in a select-list subquery",
					"Use parameters only in the top-level WHERE clause (and LIMIT); the subquery is computed for every row of the query table.");
}

/* aggregate_field rows for jsonb_object_agg(key, jsonb_build_object(...)). */
static void
add_aggregate_fields(LevelCtx *lc, Aggref *agg, const char *aggname)
{
	Node	   *value;
	FuncExpr   *build;
	char	   *fname;
	int			ord = 0;
	ListCell   *cell;

	if (strcmp(aggname, "jsonb_object_agg") != 0 && strcmp(aggname, "json_object_agg") != 0)
		return;
	if (list_length(agg->args) != 2)
		return;
	value = bridge_strip_casts((Node *) ((TargetEntry *) lsecond(agg->args))->expr);
	fname = (value && IsA(value, FuncExpr)) ? get_func_name(((FuncExpr *) value)->funcid) : NULL;
	if (fname == NULL ||
		(strcmp(fname, "jsonb_build_object") != 0 && strcmp(fname, "json_build_object") != 0) ||
		((FuncExpr *) value)->funcvariadic ||
		list_length(((FuncExpr *) value)->args) % 2 != 0)
	{
		add_warning(lc->an, lc->level,
					psprintf("the value of %s is not %s_build_object('key', column, ...): its fields are not reported",
							 aggname, strncmp(aggname, "jsonb", 5) == 0 ? "jsonb" : "json"));
		return;
	}
	build = (FuncExpr *) value;
	for (cell = list_head(build->args); cell != NULL; cell = lnext(build->args, lnext(build->args, cell)))
	{
		Node	   *key = bridge_strip_casts((Node *) lfirst(cell));
		Node	   *val = (Node *) lfirst(lnext(build->args, cell));
		BridgeRow  *row = bridge_add_row(lc->an, BK_AGGREGATE_FIELD, lc->level, ++ord);
		BridgeColRef	col;

		if (IsA(key, Const) && !((Const *) key)->constisnull)
			row->name = const_text((Const *) key);
		else
			row->name = bridge_deparse_expr(key, lc->dpcontext);
		if (bridge_trace_column(lc, val, &col) && col.levelsup == 0)
			bridge_set_column(row, &col);
		else
			row->detail = bridge_deparse_expr(val, lc->dpcontext);
	}
}

/* A scalar subquery of the select list: level n, output column ord. */
static void
analyze_sublink(LevelCtx *outer, SubLink *sublink, int level, int targetord,
				const char *colname)
{
	Query	   *sq = (Query *) sublink->subselect;
	LevelCtx	lc;
	TargetEntry *tle = NULL;
	Aggref	   *agg;
	char	   *aggname;
	BridgeRow  *row;
	BridgeColRef	col;
	ListCell   *cell;
	int			ord = 0;

	check_subquery(sq);

	memset(&lc, 0, sizeof(lc));
	lc.an = outer->an;
	lc.level = level;
	lc.query = sq;
	lc.outer = outer;
	lc.dpcontext = bridge_deparse_context(sq, outer->dpcontext);
	walk_level(&lc);

	foreach(cell, sq->targetList)
	{
		if (!((TargetEntry *) lfirst(cell))->resjunk)
		{
			tle = (TargetEntry *) lfirst(cell);
			break;
		}
	}
	if (tle == NULL || !IsA(tle->expr, Aggref) || ((Aggref *) tle->expr)->agglevelsup != 0)
		bridge_unsupported("select-list subqueries that do not aggregate",
					"Aggregate the child rows, e.g. (SELECT array_agg(c.x ORDER BY c.x) FROM child c WHERE c.parent_id = p.id); for a single parent row write a JOIN.");
	agg = (Aggref *) tle->expr;
	if (agg->aggfilter != NULL)
		bridge_unsupported("FILTER in an aggregate",
					"Move the condition into the WHERE clause of the subquery.");
	if (agg->aggdirectargs != NIL || AGGKIND_IS_ORDERED_SET(agg->aggkind))
		bridge_unsupported("ordered-set aggregates (WITHIN GROUP)",
					"Use array_agg, jsonb_agg or jsonb_object_agg with ORDER BY.");

	aggname = get_func_name(agg->aggfnoid);
	row = bridge_add_row(lc.an, BK_AGGREGATE, level, targetord);
	row->op = aggname;
	if (agg->args != NIL &&
		bridge_trace_column(&lc, (Node *) ((TargetEntry *) linitial(agg->args))->expr, &col) &&
		col.levelsup == 0)
		bridge_set_column(row, &col);
	row->detail = agg->aggdistinct != NIL ? "distinct" : NULL;

	foreach(cell, agg->aggorder)
	{
		SortGroupClause *sgc = (SortGroupClause *) lfirst(cell);
		TargetEntry *key = get_sortgroupclause_tle(sgc, agg->args);
		BridgeRow  *orow = bridge_add_row(lc.an, BK_AGGREGATE_ORDER, level, ++ord);

		orow->op = sort_direction(sgc->sortop);
		if (bridge_trace_column(&lc, (Node *) key->expr, &col) && col.levelsup == 0)
			bridge_set_column(orow, &col);
		else
			orow->detail = bridge_deparse_expr((Node *) key->expr, lc.dpcontext);
	}

	add_aggregate_fields(&lc, agg, aggname);

	if (lc.ncorrelations == 0)
		add_warning(lc.an, level,
					psprintf("the subquery of output column %s has no condition column = outer column: every row gets the same value",
							 colname ? colname : "?"));
}

/* Refusals of the top query beyond what the raw statement showed. */
static void
check_top_query(Query *q)
{
	ListCell   *cell;

	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		bridge_unsupported("statements other than SELECT",
					"Pass the SELECT statement of one workload query.");
	if (q->setOperations != NULL)
		bridge_unsupported("set operations (UNION, INTERSECT, EXCEPT)",
					"Analyze each branch as its own query.");
	if (q->cteList != NIL)
		bridge_unsupported("WITH queries (common table expressions)",
					"Write the CTE as a join, or as a scalar subquery in the select list.");
	if (q->rowMarks != NIL)
		bridge_unsupported("FOR UPDATE/FOR SHARE", "Remove the locking clause.");
	if (q->hasWindowFuncs)
		bridge_unsupported("window functions",
					"Order and limit the rows with ORDER BY and LIMIT, or compute the value in the application.");
	/* GROUP BY, HAVING and aggregates: bridge_ungroup takes them apart */
	if (q->hasTargetSRFs)
		bridge_unsupported("set-returning functions in the select list",
					"Join the table the values come from instead.");
	if (q->hasDistinctOn)
		bridge_unsupported("DISTINCT ON", "Select the rows with WHERE, ORDER BY and LIMIT.");

	foreach(cell, q->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(cell);

		if (tle->resjunk)
		{
			if (checkExprHasSubLink((Node *) tle->expr))
				bridge_unsupported("subqueries in ORDER BY", "Order by columns of the query's relations.");
			if (bridge_first_param((Node *) tle->expr) > 0)
				bridge_unsupported("parameters in ORDER BY", "Order by columns of the query's relations.");
			continue;
		}
		if (IsA(tle->expr, SubLink))
		{
			if (((SubLink *) tle->expr)->subLinkType != EXPR_SUBLINK)
				bridge_unsupported("subqueries in the select list other than scalar (SELECT aggregate(...) ...)",
							"Write (SELECT array_agg(c.x ORDER BY c.x) FROM child c WHERE c.parent_id = p.id) AS name.");
			continue;
		}
		if (checkExprHasSubLink((Node *) tle->expr))
			bridge_unsupported("a subquery inside a select-list expression",
						"Put the subquery alone in the select list: (SELECT agg(...) FROM ... WHERE ...) AS name.");
		if (bridge_first_param((Node *) tle->expr) > 0)
			bridge_unsupported("parameters in the select list",
						"Select columns; the caller knows the parameter's value.");
	}
	if (checkExprHasSubLink(q->limitCount) || checkExprHasSubLink(q->limitOffset))
		bridge_unsupported("subqueries in LIMIT/OFFSET", "Use a parameter or a constant.");
}





/*
 * analyze_top
 *		Analyze the top query (level 0) into an.
 *
 * In order: refusals (check_top_query), the "param" rows of the declared
 * types, relations and conditions, ORDER BY, LIMIT, the output columns (a
 * select-list subquery becomes level 1, 2, ... through analyze_sublink),
 * warnings for lineage names that clash, and the two rewritten SQL texts.
 */
static void
analyze_top(BridgeAnalysis *an, Query *q, int nparams, Oid *param_types)
{
	LevelCtx	lc;
	ListCell   *cell;
	int			ord;
	int			k;
	BridgeRow  *row;
	BridgeColRef	col;
	BridgeUngrouped *ungrouped = NULL;

	check_top_query(q);

	/*
	 * An aggregate query: the rows it aggregates are analyzed as the query
	 * (its table stores them), the aggregates become "result" rows.
	 */
	if (q->hasAggs || q->groupClause != NIL || q->groupingSets != NIL ||
		q->havingQual != NULL)
	{
		ungrouped = bridge_ungroup(q);
		q = ungrouped->rows;
	}

	memset(&lc, 0, sizeof(lc));
	lc.an = an;
	lc.level = 0;
	lc.query = q;
	lc.dpcontext = bridge_deparse_context(q, NIL);

	for (k = 1; k <= nparams; k++)
	{
		row = bridge_add_row(an, BK_PARAM, 0, k);
		row->col.type_name = format_type_be(param_types[k - 1]);
	}

	walk_level(&lc);

	/* ORDER BY */
	ord = 0;
	foreach(cell, q->sortClause)
	{
		SortGroupClause *sgc = (SortGroupClause *) lfirst(cell);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, q->targetList);
		const char *dir = sort_direction(sgc->sortop);

		row = bridge_add_row(an, BK_ORDER, 0, ++ord);
		row->op = dir;
		if (!tle->resjunk)
			row->name = tle->resname;
		if (bridge_trace_column(&lc, (Node *) tle->expr, &col))
			bridge_set_column(row, &col);
		else
			row->detail = bridge_deparse_expr((Node *) tle->expr, lc.dpcontext);
		if (dir == NULL)
			add_warning(an, 0, psprintf("ORDER BY key %d uses an operator that is no btree ordering: its direction is unknown", ord));
		else if (sgc->nulls_first != (strcmp(dir, "desc") == 0))
			add_warning(an, 0, psprintf("ORDER BY key %d: NULLS %s is not kept (Cassandra orders no NULL clustering values)",
										ord, sgc->nulls_first ? "FIRST" : "LAST"));
	}

	/* LIMIT */
	if (q->limitCount != NULL)
	{
		Node	   *limit = bridge_strip_casts(q->limitCount);
		int			paramid = bridge_param_of(q->limitCount);

		if (paramid > 0)
		{
			row = bridge_add_row(an, BK_LIMIT, 0, 1);
			row->param = paramid;
		}
		else if (IsA(limit, Const))
		{
			if (!((Const *) limit)->constisnull)
			{
				row = bridge_add_row(an, BK_LIMIT, 0, 1);
				row->detail = const_text((Const *) limit);
			}
		}
		else
		{
			row = bridge_add_row(an, BK_LIMIT, 0, 1);
			row->detail = bridge_deparse_expr(q->limitCount, lc.dpcontext);
		}
	}
	if (q->limitOffset != NULL)
		add_warning(an, 0, pstrdup("OFFSET is not kept: a query table is read from the start of a partition"));
	if (q->limitOption == LIMIT_OPTION_WITH_TIES)
		add_warning(an, 0, pstrdup("FETCH ... WITH TIES is read as LIMIT"));
	if (q->distinctClause != NIL)
		add_warning(an, 0, pstrdup("SELECT DISTINCT: a query table keeps one row per primary key, so its key must cover the distinct output"));

	/* output columns, and the sublinks among them */
	ord = 0;
	foreach(cell, q->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(cell);
		Node	   *expr = (Node *) tle->expr;

		if (tle->resjunk)
			continue;
		ord++;
		if (IsA(expr, SubLink))
		{
			int			level = ++an->nsublinks;

			row = bridge_add_row(an, BK_TARGET, level, ord);
			row->name = tle->resname;
			row->col.type_name = format_type_with_typemod(exprType(expr), exprTypmod(expr));
			row->op = "aggregate";
			analyze_sublink(&lc, (SubLink *) expr, level, ord, tle->resname);
			continue;
		}
		row = bridge_add_row(an, BK_TARGET, 0, ord);
		if (bridge_trace_column(&lc, expr, &col))
		{
			bridge_set_column(row, &col);
			row->op = "column";
		}
		else
		{
			row->op = "expression";
			row->detail = bridge_deparse_expr(expr, lc.dpcontext);
		}
		row->name = tle->resname;
		row->col.type_name = format_type_with_typemod(exprType(expr), exprTypmod(expr));
	}

	bridge_add_search_targets(an, &lc, q);

	/* a lineage column must not shadow an output column or another one */
	foreach(cell, an->lineage)
	{
		BridgeLineageColumn *lin = (BridgeLineageColumn *) lfirst(cell);
		ListCell   *other;
		bool		clash = false;

		foreach(other, q->targetList)
		{
			TargetEntry *tle = (TargetEntry *) lfirst(other);

			if (!tle->resjunk && tle->resname && strcmp(tle->resname, lin->name) == 0)
				clash = true;
		}
		foreach(other, an->lineage)
		{
			BridgeLineageColumn *lin2 = (BridgeLineageColumn *) lfirst(other);

			if (lin2 != lin && strcmp(lin2->name, lin->name) == 0)
				clash = true;
		}
		if (clash)
			add_warning(an, 0, psprintf("lineage column %s is not unique among the output columns: rename the output column or a table alias",
										lin->name));
	}

	if (ungrouped != NULL)
		bridge_add_results(an, &lc, ungrouped);

	/* the rewritten texts */
	row = bridge_add_row(an, BK_SQL, 0, 1);
	row->name = "base";
	row->detail = bridge_rewritten_sql(q, NIL);
	row = bridge_add_row(an, BK_SQL, 0, 2);
	row->name = "lineage";
	row->detail = bridge_rewritten_sql(q, an->lineage);
}

/* Sort rows by (kind, level, ord, creation). */
static int
row_cmp(const void *a, const void *b)
{
	const BridgeRow *ra = *(BridgeRow *const *) a;
	const BridgeRow *rb = *(BridgeRow *const *) b;

	if (ra->kind != rb->kind)
		return ra->kind < rb->kind ? -1 : 1;
	if (ra->level != rb->level)
		return ra->level < rb->level ? -1 : 1;
	if (ra->ord != rb->ord)
		return ra->ord < rb->ord ? -1 : 1;
	return ra->seq < rb->seq ? -1 : (ra->seq > rb->seq ? 1 : 0);
}

/*
 * put_text
 *		Output column i as text s, or NULL when s is NULL.
 */
static void
put_text(Datum *values, bool *nulls, int i, const char *s)
{
	if (s == NULL)
		nulls[i] = true;
	else
		values[i] = CStringGetTextDatum(s);
}

/*
 * emit_rows
 *		Sort the rows (row_cmp) and store them in the function's tuplestore,
 *		in the column order of the SQL declaration of cql_bridge_analyze.
 */
static void
emit_rows(ReturnSetInfo *rsinfo, BridgeAnalysis *an)
{
	int			n = list_length(an->rows);
	BridgeRow **sorted = palloc(sizeof(BridgeRow *) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
		sorted[i] = (BridgeRow *) list_nth(an->rows, i);
	qsort(sorted, n, sizeof(BridgeRow *), row_cmp);

	for (i = 0; i < n; i++)
	{
		BridgeRow  *row = sorted[i];
		Datum		values[BRIDGE_NCOLUMNS];
		bool		nulls[BRIDGE_NCOLUMNS];

		memset(values, 0, sizeof(values));
		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(kind_names[row->kind]);
		values[1] = Int32GetDatum(row->level);
		values[2] = Int32GetDatum(row->ord);
		put_text(values, nulls, 3, row->col.alias);
		put_text(values, nulls, 4, row->col.schema_name);
		put_text(values, nulls, 5, row->col.table_name);
		put_text(values, nulls, 6, row->col.column_name);
		put_text(values, nulls, 7, row->col.type_name);
		put_text(values, nulls, 8, row->op);
		if (row->param > 0)
			values[9] = Int32GetDatum(row->param);
		else
			nulls[9] = true;
		put_text(values, nulls, 10, row->other_alias);
		put_text(values, nulls, 11, row->other_column);
		put_text(values, nulls, 12, row->name);
		put_text(values, nulls, 13, row->detail);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* Refusals visible in the raw parse tree (before analysis). */
static RawStmt *
single_select(const char *sql)
{
	List	   *raws = raw_parser(sql, RAW_PARSE_DEFAULT);
	RawStmt    *raw;
	SelectStmt *sel;

	if (list_length(raws) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cql_bridge_analyze expects exactly one statement, got %d",
						list_length(raws)),
				 errhint("Pass the SELECT statement of one workload query.")));
	raw = linitial_node(RawStmt, raws);
	if (!IsA(raw->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cql_bridge_analyze does not support %s statements",
						CreateCommandName(raw->stmt)),
				 errhint("Pass the SELECT statement of one workload query.")));
	sel = (SelectStmt *) raw->stmt;
	if (sel->withClause != NULL)
		bridge_unsupported("WITH queries (common table expressions)",
					"Write the CTE as a join, or as a scalar subquery in the select list.");
	if (sel->op != SETOP_NONE)
		bridge_unsupported("set operations (UNION, INTERSECT, EXCEPT)",
					"Analyze each branch as its own query.");
	if (sel->valuesLists != NIL)
		bridge_unsupported("VALUES lists", "Select from tables.");
	if (sel->intoClause != NULL)
		bridge_unsupported("SELECT INTO", "Remove INTO; the query is analyzed, not run.");
	if (sel->lockingClause != NIL)
		bridge_unsupported("FOR UPDATE/FOR SHARE", "Remove the locking clause.");
	return raw;
}

/*
 * used_params_walker
 *		Collect the numbers of the external parameters anywhere in the
 *		query, sublinks included, into *used.
 */
static bool
used_params_walker(Node *node, Bitmapset **used)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN)
	{
		*used = bms_add_member(*used, ((Param *) node)->paramid);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, used_params_walker, (void *) used, 0);
	return expression_tree_walker(node, used_params_walker, (void *) used);
}

/*
 * cql_bridge_analyze(query text, param_types regtype[]) returns setof record
 *		Parse and analyze one SELECT whose $1..$n have the given types, and
 *		return the analysis as rows (contract: docs/cqlbridge-design.md,
 *		section 1).
 *
 * Nothing of the query is executed.  Every parameter needs a known type.
 * The texts are deparsed with an empty search_path (set for the duration and
 * restored), so that names outside pg_catalog come out schema-qualified.
 */
Datum
cql_bridge_analyze(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ArrayType  *types = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *elems;
	bool	   *elemnulls;
	int			nparams;
	Oid		   *param_types;
	RawStmt    *raw;
	Query	   *query;
	BridgeAnalysis an;
	Bitmapset  *used = NULL;
	int			nest;
	int			k;

	InitMaterializedSRF(fcinfo, 0);

	deconstruct_array(types, REGTYPEOID, sizeof(Oid), true, TYPALIGN_INT,
					  &elems, &elemnulls, &nparams);
	param_types = palloc(sizeof(Oid) * Max(nparams, 1));
	for (k = 0; k < nparams; k++)
	{
		if (elemnulls[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("type of parameter $%d is NULL", k + 1),
					 errhint("Give every parameter a type, e.g. '{text,date}'.")));
		param_types[k] = DatumGetObjectId(elems[k]);
		if (param_types[k] == UNKNOWNOID || !OidIsValid(param_types[k]))
			ereport(ERROR,
					(errcode(ERRCODE_INDETERMINATE_DATATYPE),
					 errmsg("type of parameter $%d is unknown", k + 1),
					 errhint("Give the parameter's PostgreSQL type, e.g. text or date.")));
	}

	raw = single_select(sql);
	query = parse_analyze_fixedparams(raw, sql, param_types, nparams, NULL);

	/*
	 * Everything printed from here on is deparsed with an empty search_path,
	 * so that names outside pg_catalog come out schema-qualified and the
	 * texts run whatever search_path their consumer has.
	 */
	nest = NewGUCNestLevel();
	(void) set_config_option("search_path", "", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

	memset(&an, 0, sizeof(an));
	analyze_top(&an, query, nparams, param_types);

	(void) used_params_walker((Node *) query, &used);
	for (k = 1; k <= nparams; k++)
		if (!bms_is_member(k, used))
			add_warning(&an, 0, psprintf("parameter $%d (%s) is not used by the query",
										 k, format_type_be(param_types[k - 1])));

	emit_rows(rsinfo, &an);

	AtEOXact_GUC(true, nest);

	return (Datum) 0;
}

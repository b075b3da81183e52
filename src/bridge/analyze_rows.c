/*-------------------------------------------------------------------------
 *
 * analyze_rows.c
 *	  The rows of cql_bridge_analyze() and the column references in them:
 *	  a new row, a column traced through casts and join aliases to its
 *	  base relation, a parameter under casts.  Shared by analyze_query.c
 *	  and analyze_shapes.c, calling neither.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/analyze_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "analyze_int.h"
#include "compat.h"

/*
 * bridge_unsupported
 *		Refuse a construct the analysis cannot map (SQLSTATE 0A000), with a
 *		hint how to write the query instead.
 */
void
bridge_unsupported(const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cql_bridge_analyze does not support %s", what),
			 errhint("%s", hint)));
}

/*
 * bridge_add_row
 *		A new output row of kind at level.  ord <= 0 takes the next ord of
 *		that (kind, level); rows are kept in creation order (seq) and sorted
 *		only by emit_rows.
 */
BridgeRow *
bridge_add_row(BridgeAnalysis *an, BridgeRowKind kind, int level, int ord)
{
	BridgeRow  *row = palloc0(sizeof(BridgeRow));
	ListCell   *lc;

	if (ord <= 0)
	{
		ord = 1;
		foreach(lc, an->rows)
		{
			BridgeRow  *other = (BridgeRow *) lfirst(lc);

			if (other->kind == kind && other->level == level)
				ord++;
		}
	}
	row->kind = kind;
	row->level = level;
	row->ord = ord;
	row->seq = list_length(an->rows);
	an->rows = lappend(an->rows, row);
	return row;
}

/*
 * Casts, relabelings and collations around a column or parameter do not
 * change which column or parameter a condition is about.
 */
Node *
bridge_strip_casts(Node *node)
{
	for (;;)
	{
		if (node == NULL)
			return NULL;
		if (IsA(node, RelabelType))
			node = (Node *) ((RelabelType *) node)->arg;
		else if (IsA(node, CoerceViaIO))
			node = (Node *) ((CoerceViaIO *) node)->arg;
		else if (IsA(node, ArrayCoerceExpr))
			node = (Node *) ((ArrayCoerceExpr *) node)->arg;
		else if (IsA(node, CollateExpr))
			node = (Node *) ((CollateExpr *) node)->arg;
		else if (IsA(node, FuncExpr) &&
				 (((FuncExpr *) node)->funcformat == COERCE_IMPLICIT_CAST ||
				  ((FuncExpr *) node)->funcformat == COERCE_EXPLICIT_CAST) &&
				 ((FuncExpr *) node)->args != NIL)
			node = (Node *) linitial(((FuncExpr *) node)->args);
		else
			return node;
	}
}

/* $k when node is a (cast) external parameter, else 0. */
int
bridge_param_of(Node *node)
{
	node = bridge_strip_casts(node);
	if (node && IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN)
		return ((Param *) node)->paramid;
	return 0;
}

/* Follow join alias variables of q down to a base relation column. */
static bool
trace_var(Query *q, int varno, AttrNumber attno, BridgeColRef *out)
{
	RangeTblEntry *rte;
	Oid			typid;
	int32		typmod;
	Oid			collid;

	if (varno < 1 || varno > list_length(q->rtable) || attno <= 0)
		return false;
	rte = rt_fetch(varno, q->rtable);
	if (rte->rtekind == RTE_JOIN)
	{
		Node	   *alias;

		if (attno > list_length(rte->joinaliasvars))
			return false;
		alias = bridge_strip_casts((Node *) list_nth(rte->joinaliasvars, attno - 1));
		if (alias == NULL || !IsA(alias, Var) || ((Var *) alias)->varlevelsup != 0)
			return false;
		return trace_var(q, ((Var *) alias)->varno, ((Var *) alias)->varattno, out);
	}
	if (rte->rtekind != RTE_RELATION)
		return false;

	get_atttypetypmodcoll(rte->relid, attno, &typid, &typmod, &collid);
	out->alias = rte->eref->aliasname;
	out->schema_name = get_namespace_name(get_rel_namespace(rte->relid));
	out->table_name = get_rel_name(rte->relid);
	out->column_name = get_attname(rte->relid, attno, false);
	out->type_name = format_type_with_typemod(typid, typmod);
	out->rtindex = varno;
	out->attno = attno;
	return true;
}

/* Is expr (under casts) a column of this level or of the outer level? */
bool
bridge_trace_column(LevelCtx *lc, Node *expr, BridgeColRef *out)
{
	Node	   *node = bridge_strip_casts(expr);
	LevelCtx   *target = lc;
	Var		   *var;
	Index		up;

	if (node == NULL || !IsA(node, Var))
		return false;
	var = (Var *) node;
	for (up = 0; up < var->varlevelsup; up++)
	{
		target = target->outer;
		if (target == NULL)
			return false;
	}
	memset(out, 0, sizeof(BridgeColRef));
	out->levelsup = var->varlevelsup;
	return trace_var(target->query, var->varno, var->varattno, out);
}

/*
 * bridge_set_column
 *		Put a traced column (alias, schema, table, column, type) into the
 *		column fields of row.
 */
void
bridge_set_column(BridgeRow *row, const BridgeColRef *col)
{
	row->col = *col;
}

/*-------------------------------------------------------------------------
 *
 * analyze_query.h
 *	  Shared declarations of cql_bridge_analyze() (analyze_query.c) and the
 *	  SQL texts it derives from the analyzed query (analyze_query_sql.c).
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/analyze_query.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_BRIDGE_ANALYZE_QUERY_H
#define CQL_BRIDGE_ANALYZE_QUERY_H

#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

/* A primary-key column of a level-0 relation: one lineage output column. */
typedef struct BridgeLineageColumn
{
	int			rtindex;		/* range-table index in the top query */
	AttrNumber	attno;
	char	   *name;			/* lin_<alias>_<column> */
} BridgeLineageColumn;

/*
 * Deparse namespaces for an expression of query q, whose Vars of level 1
 * resolve in outer (the context of the enclosing query, or NIL).
 */
extern List *bridge_deparse_context(Query *q, List *outer);

/* Text of an expression of a query, table aliases always printed. */
extern char *bridge_deparse_expr(Node *expr, List *dpcontext);

/* Does the expression (sublinks included) contain an external parameter? */
extern int	bridge_first_param(Node *node);

/*
 * The "base" SQL (lineage NIL) or the "lineage" SQL (lineage columns
 * appended) of the analyzed top query, deparsed with pg_get_querydef.
 */
extern char *bridge_rewritten_sql(Query *query, List *lineage);

#endif							/* CQL_BRIDGE_ANALYZE_QUERY_H */

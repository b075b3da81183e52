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

/* One output of a top-level aggregate query (analyze_aggregate.c). */
typedef struct BridgeResult
{
	int			ord;			/* output position */
	const char *name;			/* output name */
	const char *func;			/* count, sum, min, max, avg; "column": grouped */
	bool		star;			/* count(*) */
	bool		distinct;		/* agg(DISTINCT col) */
	Var		   *var;			/* the column (NULL for count(*)) */
	const char *underlying;		/* its output name in the row query */
	Oid			type;			/* the output's type */
	int32		typmod;
} BridgeResult;

/* One ORDER BY key of an aggregate query: an output column. */
typedef struct BridgeResultOrder
{
	const char *name;
	bool		desc;
	bool		nulls_first;
} BridgeResultOrder;

/* An aggregate query taken apart (analyze_aggregate.c). */
typedef struct BridgeUngrouped
{
	Query	   *rows;			/* the query of the aggregated rows */
	List	   *results;		/* BridgeResult *, in output order */
	List	   *groups;			/* underlying names of the GROUP BY columns */
	List	   *order;			/* BridgeResultOrder * */
} BridgeUngrouped;

/*
 * The rows a top-level aggregate query aggregates and what it computes of
 * them; refuses (0A000) what a partition's aggregate cannot compute.
 */
extern BridgeUngrouped *bridge_ungroup(Query *q);

#endif							/* CQL_BRIDGE_ANALYZE_QUERY_H */

/*-------------------------------------------------------------------------
 *
 * analyze_int.h
 *	  The rows cql_bridge_analyze() builds and the helpers its files share
 *	  (analyze_query.c, analyze_shapes.c).  Private to the analysis.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/analyze_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_BRIDGE_ANALYZE_INT_H
#define CQL_BRIDGE_ANALYZE_INT_H

#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

#include "analyze_query.h"
#include "compat.h"

/* Row kinds in output order (the contract's table). */
typedef enum BridgeRowKind
{
	BK_PARAM,
	BK_RELATION,
	BK_JOIN,
	BK_CORRELATION,
	BK_EQUALITY,
	BK_RANGE,
	BK_FILTER,
	BK_ORDER,
	BK_LIMIT,
	BK_TARGET,
	BK_AGGREGATE,
	BK_AGGREGATE_ORDER,
	BK_AGGREGATE_FIELD,
	BK_RESULT,
	BK_RESULT_ORDER,
	BK_GROUP,
	BK_SQL,
	BK_WARNING,
	BK_COUNT
} BridgeRowKind;



/* A column reference traced to its base relation. */
typedef struct BridgeColRef
{
	const char *alias;
	const char *schema_name;
	const char *table_name;
	const char *column_name;
	const char *type_name;
	int			rtindex;		/* in the range table of its query */
	AttrNumber	attno;
	int			levelsup;		/* 0 = the query itself, 1 = its outer query */
} BridgeColRef;

typedef struct BridgeRow
{
	BridgeRowKind kind;
	int			level;
	int			ord;
	int			seq;			/* creation order, the last sort key */
	BridgeColRef	col;			/* alias .. type_name; alias NULL = none */
	const char *op;
	int			param;			/* 0 = NULL */
	const char *other_alias;
	const char *other_column;
	const char *name;
	const char *detail;
} BridgeRow;

typedef struct BridgeAnalysis
{
	List	   *rows;			/* BridgeRow * */
	List	   *lineage;		/* BridgeLineageColumn * of level 0 */
	int			nsublinks;
} BridgeAnalysis;

/* One query level being walked: the top query or a select-list sublink. */
typedef struct LevelCtx
{
	BridgeAnalysis *an;
	int			level;
	Query	   *query;
	struct LevelCtx *outer;
	List	   *dpcontext;		/* deparse namespaces, this level first */
	int			ncorrelations;
} LevelCtx;

/* analyze_rows.c: refusals, rows and columns */
cqlfdw_noreturn extern void bridge_unsupported(const char *what, const char *hint);
extern BridgeRow *bridge_add_row(BridgeAnalysis *an, BridgeRowKind kind, int level, int ord);
extern void bridge_set_column(BridgeRow *row, const BridgeColRef *col);
extern bool bridge_trace_column(LevelCtx *lc, Node *expr, BridgeColRef *out);
extern Node *bridge_strip_casts(Node *node);
extern int	bridge_param_of(Node *node);

/* analyze_shapes.c */
extern bool bridge_add_in_list(LevelCtx *lc, Node *qual);
extern void bridge_add_search_targets(BridgeAnalysis *an, LevelCtx *lc, Query *q);
extern void bridge_add_results(BridgeAnalysis *an, LevelCtx *lc, BridgeUngrouped *u);

#endif							/* CQL_BRIDGE_ANALYZE_INT_H */

/*-------------------------------------------------------------------------
 *
 * vector_search.h
 *		ORDER BY <vector column> <pgvector distance> <value> LIMIT k as
 *		Cassandra 5.0's ANN search (ORDER BY v ANN OF ? LIMIT ?).
 *
 * IDENTIFICATION
 *		src/fdw/vector_search.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_VECTOR_SEARCH_H
#define CQL_FDW_VECTOR_SEARCH_H

#include "postgres.h"

#include "nodes/pathnodes.h"

#include "cql_fdw.h"

/* Cassandra's ANN search refuses a LIMIT above this */
#define CQLFDW_ANN_MAX_LIMIT 1000

struct CqlScanShape;

/* An ANN search the planner found in the query's ORDER BY */
typedef struct CqlAnnSearch
{
	AttrNumber	attnum;			/* the vector column */
	Expr	   *query;			/* the vector compared with (no Vars) */
	double		limit;			/* LIMIT + OFFSET, <= CQLFDW_ANN_MAX_LIMIT */
} CqlAnnSearch;

extern bool cqlfdw_ann_match(PlannerInfo *root, RelOptInfo *baserel,
							 const CqlFdwTable *t, const struct CqlScanShape *shape,
							 CqlAnnSearch *ann);
extern List *cqlfdw_ann_private(const CqlAnnSearch *ann);
extern void cqlfdw_ann_from_private(List *private, CqlAnnSearch *ann);
extern const char *cqlfdw_ann_explain(const CqlFdwTable *t, AttrNumber attnum);

#endif							/* CQL_FDW_VECTOR_SEARCH_H */

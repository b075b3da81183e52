/*-------------------------------------------------------------------------
 *
 * timeuuid.h
 *		Version-1 (time-based) UUIDs from SQL: what CQL says with now(),
 *		minTimeuuid(), maxTimeuuid() and toTimestamp(), and how the planner
 *		recognizes the bounds (timeuuid.c).
 *
 * IDENTIFICATION
 *		src/fdw/timeuuid.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_TIMEUUID_H
#define CQL_FDW_TIMEUUID_H

#include "postgres.h"

#include "nodes/primnodes.h"

/* What an expression is, as a bound of a timeuuid range */
typedef enum CqlTimeuuidBound
{
	CQLTIMEUUID_NOT_BOUND = 0,	/* anything else */
	CQLTIMEUUID_MIN,			/* a call of cql_min_timeuuid(timestamptz) */
	CQLTIMEUUID_MAX				/* a call of cql_max_timeuuid(timestamptz) */
} CqlTimeuuidBound;

extern CqlTimeuuidBound cqlfdw_timeuuid_bound(Expr *e);
extern void cqlfdw_check_local_timeuuid(List *local_exprs, const char *relname);

#endif							/* CQL_FDW_TIMEUUID_H */

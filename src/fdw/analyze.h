/*-------------------------------------------------------------------------
 *
 * analyze.h
 *		ANALYZE support of cql_fdw (analyze.c).
 *
 * IDENTIFICATION
 *		src/fdw/analyze.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_ANALYZE_H
#define CQL_FDW_ANALYZE_H

#include "foreign/fdwapi.h"

extern bool cqlAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func,
								   BlockNumber *totalpages);

#endif							/* CQL_FDW_ANALYZE_H */

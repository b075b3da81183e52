/*-------------------------------------------------------------------------
 *
 * cql_execute.h
 *		Ad-hoc CQL (cql_execute.c): what cql_execute() and cql_query()
 *		share.
 *
 * IDENTIFICATION
 *		src/fdw/cql_execute.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_CQL_EXECUTE_H
#define CQL_FDW_CQL_EXECUTE_H

#include "foreign/foreign.h"

#include "cql_conn.h"

extern ForeignServer *cqlfdw_server_for_cql(const char *servername);
extern const char *cqlfdw_redact_cql(const char *cql, cql_error *err);

#endif							/* CQL_FDW_CQL_EXECUTE_H */

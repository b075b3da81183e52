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
#include "cql_types.h"

extern ForeignServer *cqlfdw_server_for_cql(const char *servername);
extern const char *cqlfdw_redact_cql(const char *cql, cql_error *err);

/* cql_query.c: a value of any PostgreSQL type for a CQL type */
extern void cqlfdw_bind_any(const char *what, int i, const cql_type *ctype,
							Datum d, Oid argtype, cql_buf *out);

#endif							/* CQL_FDW_CQL_EXECUTE_H */

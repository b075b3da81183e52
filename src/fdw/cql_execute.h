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
#include "parser/parse_coerce.h"

#include "convert.h"
#include "cql_conn.h"
#include "cql_types.h"

extern bool cqlfdw_server_is_ours(const ForeignServer *server);
extern ForeignServer *cqlfdw_server_for_cql(const char *servername);
extern const char *cqlfdw_redact_cql(const char *cql, cql_error *err);

/*
 * cql_query.c: a value of any PostgreSQL type for a CQL type.  The plan of
 * one argument (its conversion, and the cast before it when the CQL type
 * does not take the argument's type directly), made once for many values.
 */
typedef struct CqlBindPlan
{
	CqlConv		cv;				/* the conversion the value is written by */
	Oid			argtype;		/* the argument's type, as given */
	Oid			widen;			/* INT2OID/INT4OID: widened to bigint first */
	Oid			from;			/* the base type the cast starts from */
	Oid			target;			/* the type cast to (path not NONE) */
	CoercionPathType path;		/* COERCION_PATH_NONE: no cast */
	Oid			funcid;			/* the cast function (PATH_FUNC) */
} CqlBindPlan;

extern void cqlfdw_bind_prepare(const char *what, int i, const cql_type *ctype,
								Oid argtype, CqlBindPlan *bp);
extern void cqlfdw_bind_encode(const char *what, int i, CqlBindPlan *bp,
							   Datum d, cql_buf *out);
extern void cqlfdw_bind_any(const char *what, int i, const cql_type *ctype,
							Datum d, Oid argtype, cql_buf *out);

#endif							/* CQL_FDW_CQL_EXECUTE_H */

/*-------------------------------------------------------------------------
 *
 * import.h
 *		IMPORT FOREIGN SCHEMA (import.c).
 *
 * IDENTIFICATION
 *		src/fdw/import.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_IMPORT_H
#define CQL_FDW_IMPORT_H

#include "nodes/parsenodes.h"

#include "cql_types.h"

extern const char *cqlfdw_pg_type_for(const cql_type *t);
extern List *cqlImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid);

#endif							/* CQL_FDW_IMPORT_H */

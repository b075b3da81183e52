/*-------------------------------------------------------------------------
 *
 * compat.h
 *		The one place where cql_fdw bridges differences between the
 *		PostgreSQL major versions it builds against.
 *
 * Code elsewhere calls the names defined here and never tests
 * PG_VERSION_NUM itself.
 *
 * IDENTIFICATION
 *		src/fdw/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_COMPAT_H
#define CQL_FDW_COMPAT_H

#include "postgres.h"

#include "catalog/pg_foreign_server.h"
#include "utils/acl.h"

/*
 * Privilege check on a foreign server: PostgreSQL 16 folded the per-object
 * aclcheck functions into object_aclcheck().
 */
#if PG_VERSION_NUM >= 160000
#define cqlfdw_server_aclcheck(serverid, roleid, mode) \
	object_aclcheck(ForeignServerRelationId, (serverid), (roleid), (mode))
#else
#define cqlfdw_server_aclcheck(serverid, roleid, mode) \
	pg_foreign_server_aclcheck((serverid), (roleid), (mode))
#endif

#endif							/* CQL_FDW_COMPAT_H */

/*-------------------------------------------------------------------------
 *
 * cql_session_int.h
 *		Private declarations of the session layer (cql_session.c,
 *		cql_prepared.c): the prepared-statement cache and its metadata.
 *		Transport files (cql_socket.c, cql_conn.c, cql_handshake.c) do not
 *		include it.  Not part of the public API.
 *
 * layer: session (private)
 *
 * IDENTIFICATION
 *		src/cql/cql_session_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_SESSION_INT_H
#define CQL_SESSION_INT_H

#include "cql_conn_int.h"

/* Result columns retired from a prepared statement; kept until the
 * connection closes or is trimmed, because results decoded earlier may
 * still borrow them. */
typedef struct cql_retired_cols
{
	struct cql_retired_cols *next;
	cql_column *cols;
	int32_t		ncols;
} cql_retired_cols;

/* ---- cql_prepared.c ---- */
extern cql_prepared *cql_prepared_lookup(cql_conn *c, const char *query);
extern cql_status cql_prepared_from_result(cql_conn *c, cql_prepared *p,
										   cql_result *res, cql_error *err);
extern void cql_prepared_update_columns(cql_conn *c, cql_prepared *p,
										cql_result *res);
extern void cql_prepared_free_all(cql_conn *c);
extern void cql_prepared_touch(cql_conn *c, cql_prepared *p);

#endif							/* CQL_SESSION_INT_H */

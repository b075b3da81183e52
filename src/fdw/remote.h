/*-------------------------------------------------------------------------
 *
 * remote.h
 *		The remote-statement handle of cql_fdw (remote.c).
 *
 * Every piece of the FDW that sends statements — scans, INSERT/UPDATE/
 * DELETE, direct modify, ANALYZE, TRUNCATE, the COMMIT-time flush and
 * cql_execute() — opens one CqlRemote: it resolves the user, the merged
 * options, the table layout and a pinned connection once, and offers
 * prepare, routing, failure reporting and release.  The place where
 * per-statement policy (retries on another node, TLS, metrics) is added
 * once.  (Schema reads — IMPORT FOREIGN SCHEMA, the layout lookup of
 * schema_cache.c — use the cached connection directly.)
 *
 * IDENTIFICATION
 *		src/fdw/remote.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_REMOTE_H
#define CQL_FDW_REMOTE_H

#include "foreign/foreign.h"
#include "nodes/execnodes.h"
#include "datatype/timestamp.h"

#include "compat.h"
#include "connection.h"
#include "cql_fdw.h"

/*
 * One request's retries (cqlfdw_remote_retry): how many so far, since
 * when, and which hosts failed it (avoided by the next routing call).
 */
#define CQLFDW_RETRY_MAX_AVOID	8
typedef struct CqlRetry
{
	int			tries;
	TimestampTz started;
	int			avoid[CQLFDW_RETRY_MAX_AVOID];
	int			navoid;
} CqlRetry;

typedef struct CqlRemote
{
	Oid			serverid;
	Oid			relid;			/* InvalidOid: a server-level statement */
	Oid			userid;			/* whose user mapping is used */
	UserMapping *user;
	CqlFdwOptions opts;			/* server, mapping and table merged once */
	CqlFdwTable *table;			/* layout; NULL without relid */
	const char *keyspace;		/* of the table: routing; NULL without relid */
	const char *relname;		/* for messages; NULL without relid */
	const char *cql;			/* the statement: prepared, and shown as
								 * error context */
	CqlConnEntry *entry;		/* the user mapping's cluster handle */
	uint64		generation;		/* entry->generation when opened */
	bool		pinned;			/* counted in entry->busy */
} CqlRemote;

/* a foreign table's options and layout, the one route */
extern CqlFdwTable *cqlfdw_resolve_table(Oid relid, Oid userid, bool planning,
										 CqlFdwOptions *opts, UserMapping **user);

/* open / release */
extern void cqlfdw_remote_open_rel(CqlRemote *r, Relation rel, Oid userid,
								   const char *cql);
extern void cqlfdw_remote_resolve_rel(CqlRemote *r, Relation rel, Oid userid,
									  const char *cql);
extern void cqlfdw_remote_connect(CqlRemote *r);
extern void cqlfdw_remote_open_server(CqlRemote *r, ForeignServer *server,
									  Oid userid, const char *cql);
extern void cqlfdw_remote_release(CqlRemote *r);
extern void cqlfdw_remote_will_write(CqlRemote *r);
extern CqlRemote *cqlfdw_remote_detach(const CqlRemote *r, MemoryContext cxt);
extern Oid	cqlfdw_scan_userid(EState *estate, ForeignScan *fsplan);
extern Oid	cqlfdw_result_userid(EState *estate, ResultRelInfo *rinfo);

/* using it */
extern bool cqlfdw_remote_alive(const CqlRemote *r);
extern cql_conn *cqlfdw_remote_control(CqlRemote *r);
extern cql_prepared *cqlfdw_remote_prepare(CqlRemote *r, cql_conn *conn);
extern cql_conn *cqlfdw_remote_conn_for_key(CqlRemote *r, const CqlRetry *rt,
											const uint8_t *key, size_t keylen);
extern cql_conn *cqlfdw_remote_conn_for_token(CqlRemote *r, const CqlRetry *rt,
											  const int64 *token);
extern void cqlfdw_retry_start(CqlRetry *rt);
extern cql_retry_decision cqlfdw_remote_retry(CqlRemote *r, CqlRetry *rt,
											  cql_conn *conn, cql_status s,
											  cql_error *err, bool idempotent);
extern cql_request *cqlfdw_remote_send_execute(CqlRemote *r, cql_conn *conn,
											   cql_prepared *p,
											   const cql_query_params *params);
/* sends a failed request again: the next host or the same (decision) */
typedef void (*CqlResendFn) (void *arg, cql_retry_decision d);
extern cql_status cqlfdw_remote_await_retrying(CqlRemote *r, CqlRetry *rt,
											   cql_conn **conn, cql_request **req,
											   bool idempotent,
											   CqlResendFn resend, void *arg,
											   cql_result *res, cql_error *err);
cqlfdw_noreturn extern void cqlfdw_remote_fail(CqlRemote *r, cql_conn *conn,
												cql_status s, cql_error *err);
extern void cqlfdw_remote_check_binds(CqlRemote *r, const cql_prepared *p,
									  int nbinds);

#endif							/* CQL_FDW_REMOTE_H */

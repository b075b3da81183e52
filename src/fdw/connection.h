/*-------------------------------------------------------------------------
 *
 * connection.h
 *		Connection cache of cql_fdw (connection.c).
 *
 * IDENTIFICATION
 *		src/fdw/connection.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_CONNECTION_H
#define CQL_FDW_CONNECTION_H

#include "foreign/foreign.h"

#include "compat.h"

#include "cql_cluster.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "cql_wire.h"

/*
 * The extension's version (cql_fdw.control's default_version), defined by
 * the Makefile for the objects of src/fdw: sent as the STARTUP
 * DRIVER_VERSION.  There is no second copy of the number to keep in step.
 */
#ifndef CQLFDW_VERSION
#error "CQLFDW_VERSION is defined by the Makefile from cql_fdw.control"
#endif

/* prepared statements kept per connection between statements (LRU) */
#define CQLFDW_MAX_PREPARED 500

/* One cached cluster handle per user mapping */
typedef struct CqlConnEntry
{
	Oid			key;			/* user mapping OID (hash key) */
	cql_cluster *cluster;		/* NULL when closed */
	cql_tls_context *tls;		/* sslmode != disable: shared by the
								 * cluster's connections, freed after it */
	Oid			serverid;
	bool		invalidated;	/* options changed: close when idle */
	bool		keep_connections;	/* option: else close at transaction
									 * end */
	bool		auth_required;	/* opened requiring authentication on every
								 * connection (a non-superuser's) */
	int			busy;			/* scans/modifies using it right now */
	bool		pending_writes; /* on_commit writes queued (write path) */
	bool		writes_sent;	/* this transaction wrote through it:
								 * settled when a (sub)transaction aborts */
	uint64		generation;		/* bumped on close: stale handles detectable */
	uint32		server_hashvalue;
	uint32		mapping_hashvalue;
	int8		index_needs_pk; /* guardrail of the control node: 1 index
								 * queries need the partition key, 0 not,
								 * -1 not read yet */
} CqlConnEntry;

extern CqlConnEntry *cqlfdw_get_connection(UserMapping *user,
										   const CqlFdwOptions *opts);
extern void cqlfdw_check_interrupts(void);
extern bool cqlfdw_index_needs_partition_key(UserMapping *user, const CqlFdwOptions *opts);

/* in schema_cache.c */
extern void cqlfdw_complete_layout(CqlFdwTable *t, Oid relid, UserMapping *user,
								   const CqlFdwOptions *opts);

/* in connection.c: errors, interruptible waits, prepare, write timestamps */
extern void cqlfdw_report(int elevel, cql_status st, const cql_error *err,
						  const char *cql);
/*
 * What to do about tombstones that fail reads: the hint of the error
 * (cqlfdw_report_as) and of the scan's warning when it reads in smaller
 * pages (scan_task.c).
 */
#define CQLFDW_TOMBSTONE_ADVICE \
	"Tombstones go once gc_grace_seconds has passed and compaction purges them (nodetool garbagecollect forces it); deletes that gather in few partitions call for a partition key with more values."

extern void cqlfdw_report_as(int elevel, cql_status st, const cql_error *err,
							 const char *cql, const char *what,
							 const char *detail);
extern cql_status cqlfdw_await(cql_conn *conn, cql_request *req, cql_result *res,
							   cql_error *err);
extern cql_status cqlfdw_await_expecting(cql_conn *conn, cql_request *req, cql_result *res,
										 cql_error *err, const char *expected_warning);
cqlfdw_noreturn extern void cqlfdw_fail(CqlConnEntry *entry, uint64 generation,
										 cql_conn *conn, cql_status s,
										 cql_error *err, const char *cql);
extern cql_prepared *cqlfdw_prepare(CqlConnEntry *entry, uint64 generation,
									cql_conn *conn, const char *cql);
extern int64 cqlfdw_write_timestamp(void);

/* What this backend's requests went through (cql_fdw_statistics()) */
typedef struct CqlFdwStats
{
	int64		retries;		/* requests sent again after a failure */
	int64		retries_exhausted;	/* failures returned after retrying */
	int64		speculative;	/* speculative executions started */
	int64		speculative_won;	/* ... that answered first */
	int64		warnings;		/* server warnings reported */
} CqlFdwStats;

extern CqlFdwStats cqlfdw_stats;
extern bool cqlfdw_retry_busy(cql_conn *conn, cql_status *s, cql_error *err);

#endif							/* CQL_FDW_CONNECTION_H */

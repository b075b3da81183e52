/*-------------------------------------------------------------------------
 *
 * cql_fdw.h
 *		Declarations shared by the PostgreSQL half of cql_fdw.
 *
 * Prototypes are grouped by the file that defines them, as in postgres_fdw.
 * The protocol client (src/cql) is reached only through its own headers; it
 * never sees a PostgreSQL type.
 *
 * IDENTIFICATION
 *		src/fdw/cql_fdw.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_H
#define CQL_FDW_H

#include "postgres.h"

#include "foreign/foreign.h"
#include "nodes/pg_list.h"
#include "utils/guc.h"

#include "cql_core.h"

/*
 * Options of a foreign server, user mapping and foreign table merged into
 * one struct (table options override server options).  Filled by
 * cqlfdw_get_options() in option.c.
 */
typedef struct CqlFdwOptions
{
	/* server */
	char	   *host;			/* contact points "h1,h2:9043" */
	int			port;
	int			protocol_version;	/* 0 = auto */
	bool		compression;	/* lz4 */
	int			connect_timeout_ms;
	int			request_timeout_ms;
	char	   *local_dc;
	bool		discover_peers; /* use peers outside 'host' as well */
	int			max_response_size;	/* bytes of one response, at most */
	int			heartbeat_interval_ms;	/* idle time before a heartbeat, 0 =
										 * none */
	int			sslmode;		/* cql_ssl_mode */
	char	   *sslrootcert;
	char	   *sslcert;		/* server or user mapping */
	char	   *sslkey;
	char	   *sslpassword;	/* user mapping */
	char	   *application_name;	/* STARTUP APPLICATION_NAME; NULL =
									 * PostgreSQL's application_name */
	bool		keep_connections;	/* keep connections after the
									 * transaction (postgres_fdw's) */
	int			updatable;		/* -1 = not set, else bool (table over
								 * server) */

	/* retries (server default, table override) */
	int			max_retries;	/* tries after the first, 0 = none */
	int			retry_timeout_ms;	/* no new try after this since the first */
	int			speculative_delay_ms;	/* 0 = no speculative execution */

	/* user mapping */
	char	   *username;
	char	   *password;
	bool		password_required;

	/* table (and server defaults for them) */
	char	   *keyspace;
	char	   *table;
	int			consistency;	/* CQL consistency code */
	int			write_consistency;
	int			serial_consistency;	/* of lightweight transactions */
	int			fetch_size;
	int			scan_window;	/* token ranges in flight per scan */
	bool		allow_filtering;
	int			ttl;			/* seconds, 0 = none */
	int			batch_size;
	bool		write_on_commit;	/* write_mode 'on_commit' */
	bool		if_not_exists;
	bool		truncatable;
	bool		direct_modify;	/* UPDATE/DELETE by key as one statement */
	int			analyze_rows;	/* rows ANALYZE reads at most, 0 = all */
	int			max_buckets;	/* bucket partitions one scan may read */
	bool		index_pushdown; /* push predicates on SAI-indexed columns */
	bool		async_capable;	/* run concurrently under an Append */
	bool		aggregate_pushdown; /* aggregates of a partition (upper_plan.c) */
	int			timestamp_precision;	/* CqlTsPrecision (convert.h) of
										 * written sub-millisecond
										 * timestamps; columns may override */
	bool		index_needs_pk; /* the node's guardrail
								 * non_partition_restricted_index_query_enabled
								 * is false: no index query without the
								 * partition key (set by the planner) */
} CqlFdwOptions;

/* Defaults documented in docs/cql_fdw.md */
#define CQLFDW_DEFAULT_PORT				9042
#define CQLFDW_DEFAULT_FETCH_SIZE		5000
#define CQLFDW_DEFAULT_SCAN_WINDOW		8
#define CQLFDW_MAX_SCAN_WINDOW			256

/* GUC cql_fdw.token_order_scan: token scans in ring order (scan_ranges.c) */
extern PGDLLIMPORT bool cqlfdw_token_order_scan;

/* GUC cql_fdw.token_scan_after: token scans start after it (scan_ranges.c) */
extern PGDLLIMPORT char *cqlfdw_token_scan_after_guc;
extern bool cqlfdw_token_scan_after(int64 *after);
extern bool cqlfdw_check_token_scan_after(char **newval, void **extra,
										  GucSource source);

#define CQLFDW_DEFAULT_CONNECT_TIMEOUT	10000
#define CQLFDW_DEFAULT_REQUEST_TIMEOUT	30000
/* how long an abort waits for the writes its statement left in flight */
#define CQLFDW_SETTLE_TIMEOUT_MS		10000
#define CQLFDW_DEFAULT_BATCH_SIZE		100
/* bound values per grouped batch (a single-partition batch is one mutation):
 * the INSERT paths' and the deferred writes' at COMMIT */
#define MAX_BATCH_BYTES					(256 * 1024)
#define CQLFDW_DEFAULT_ANALYZE_ROWS		1000000
#define CQLFDW_DEFAULT_MAX_RESPONSE		(64 * 1024 * 1024)
#define CQLFDW_DEFAULT_HEARTBEAT_INTERVAL	30000
#define CQLFDW_HEARTBEAT_TIMEOUT		2000
#define CQLFDW_DEFAULT_MAX_RETRIES		3
#define CQLFDW_DEFAULT_RETRY_TIMEOUT	60000
#define CQLFDW_DEFAULT_MAX_BUCKETS		1000

/*
 * Layout of a foreign table: for every attribute the remote column and its
 * role in the primary key.  Built from the column options written by IMPORT
 * FOREIGN SCHEMA (kind, position, clustering_order, cql_type), or, for a
 * table created by hand without them, from the remote schema.
 */
typedef enum CqlColumnKind
{
	CQLCOL_REGULAR = 0,
	CQLCOL_PARTITION_KEY,
	CQLCOL_CLUSTERING,
	CQLCOL_STATIC
} CqlColumnKind;

/* Bucket columns (bucket.c): how a column's value derives from others */
typedef enum CqlBucketUnit
{
	CQLBUCKET_NONE = 0,
	CQLBUCKET_HOUR,
	CQLBUCKET_DAY,
	CQLBUCKET_WEEK,
	CQLBUCKET_MONTH,
	CQLBUCKET_YEAR,
	CQLBUCKET_HASH				/* n buckets of a hash of the sources */
} CqlBucketUnit;

typedef struct CqlBucketSpec
{
	CqlBucketUnit unit;
	int			n;				/* multiple of the unit, or hash buckets */
} CqlBucketSpec;

/*
 * Write metadata columns (write_metadata.c): a column of the foreign table
 * that reads WRITETIME() or TTL() of another column and gives the USING
 * TIMESTAMP / USING TTL of the statements that write it.
 */
typedef enum CqlMetaKind
{
	CQLMETA_NONE = 0,
	CQLMETA_WRITETIME,			/* option writetime_of */
	CQLMETA_TTL					/* option ttl_of */
} CqlMetaKind;

typedef struct CqlFdwColumn
{
	char	   *remote_name;	/* NULL for a dropped attribute */
	CqlColumnKind kind;
	int			position;		/* within partition key / clustering key */
	bool		desc;			/* clustering order DESC */
	char	   *cql_type;		/* CQL type string, NULL if unknown */
	Oid			pgtype;
	int32		pgtypmod;
	Oid			collation;
	CqlBucketSpec bucket;		/* option bucket; unit NONE: not a bucket */
	char	   *bucket_of;		/* option bucket_of (column names) */
	int			nbucket_src;	/* its columns, resolved */
	AttrNumber *bucket_src;
	char	   *sai_index;		/* option sai_index: a Storage-Attached Index
								 * on the column's values */
	char	   *sai_similarity; /* option sai_similarity: that index's
								 * similarity function (vector columns) */
	char	   *sai_values_index;	/* options sai_values_index/sai_keys_index:
									 * SAI on a collection's values, a map's
									 * keys (CONTAINS, CONTAINS KEY) */
	char	   *sai_keys_index;
	char	   *sai_entries_index;	/* option sai_entries_index: SAI on a
									 * map's entries (m[k] = v) */
	char	   *masked;			/* option masked: the column's masking
								 * function (Cassandra 5.0 dynamic data
								 * masking): never pushed down */
	CqlMetaKind meta;			/* a metadata column: remote_name is NULL */
	char	   *meta_of;		/* option writetime_of/ttl_of: a column name */
	AttrNumber	meta_attnum;	/* that column, resolved */
} CqlFdwColumn;

typedef struct CqlFdwTable
{
	char	   *keyspace;
	char	   *table;
	int			natts;
	CqlFdwColumn *cols;			/* indexed by attnum - 1 */
	int			npk;
	AttrNumber *pk;				/* attnums in partition-key order */
	int			nck;
	AttrNumber *ck;				/* attnums in clustering order */
} CqlFdwTable;

/* How a scan reads the table, decided by deparse.c */
typedef enum CqlAccess
{
	CQLACC_SINGLE_PARTITION = 0,
	CQLACC_MULTI_PARTITION,		/* IN on the partition key */
	CQLACC_TOKEN_SCAN,			/* no (complete) partition key */
	CQLACC_INDEX_SCAN,			/* whole table through an SAI index: one
								 * paged statement, the coordinator walks
								 * the token ranges */
	CQLACC_ANN_SEARCH			/* whole table, ORDER BY v ANN OF ? LIMIT ?
								 * (vector_search.c) */
} CqlAccess;

/*
 * One "?" of the remote statement, in order.  The value comes from
 * fdw_exprs[expr_index], evaluated at (re)scan start and converted to the
 * CQL type of the column.
 */
typedef enum CqlBindKind
{
	CQLBIND_EQ = 0,				/* col = ? */
	CQLBIND_IN,					/* partition key: one request per element;
								 * clustering: col IN ? with a list */
	CQLBIND_GT,
	CQLBIND_GE,
	CQLBIND_LT,
	CQLBIND_LE,
	CQLBIND_TOKEN_LOW,			/* token(pk) > ? (token scan) */
	CQLBIND_TOKEN_HIGH,			/* token(pk) <= ? */
	CQLBIND_LIMIT,				/* LIMIT ? */
	CQLBIND_BUCKET,				/* bucket column = ?, one value per task */
	CQLBIND_ANN,				/* ORDER BY col ANN OF ? (a vector) */
	CQLBIND_CONTAINS,			/* collection CONTAINS ? (an element) */
	CQLBIND_CONTAINS_KEY,		/* map CONTAINS KEY ? */
	CQLBIND_ENTRY_KEY,			/* map[?] = ...: the key */
	CQLBIND_ENTRY				/* map[...] = ?: the value */
} CqlBindKind;

/* in table_layout.c */
extern CqlFdwTable *cqlfdw_get_table(Oid relid, const CqlFdwOptions *opts,
									 bool *complete);
extern void cqlfdw_build_key_arrays(CqlFdwTable *t, const char *relname);
extern AttrNumber cqlfdw_column_by_remote_name(const CqlFdwTable *t,
											   const char *name);

/* in option.c */
extern void cqlfdw_define_settings(void);
extern void cqlfdw_watch_option_statements(void);
extern void cqlfdw_get_options(Oid serverid, Oid userid, Oid relid,
							   CqlFdwOptions *opts);
extern void cqlfdw_options_add_mapping(CqlFdwOptions *o, UserMapping *um);
extern int	cqlfdw_consistency_from_name(const char *name, bool for_write);
extern int	cqlfdw_timestamp_precision(Oid relid, AttrNumber attnum,
									   const CqlFdwOptions *opts);

#endif							/* CQL_FDW_H */

/*-------------------------------------------------------------------------
 *
 * cql_schema.h
 *		Schema metadata read from system_schema (Cassandra 3.0+): keyspaces,
 *		tables (and materialized views), columns with their key role and
 *		clustering order, and user-defined types resolved into cql_type
 *		trees, nested UDTs included.
 *
 * Everything read from the server is checked: a row with a missing/null
 * mandatory cell, an unknown column kind or key positions with holes is
 * CQL_ERR_MALFORMED with a message, never a crash.  A column whose type
 * string cannot be turned into a cql_type (an unknown UDT, a custom class
 * we do not know) does not fail the load: its 'type' is NULL and
 * 'type_status' says why, so a caller can skip or refuse that column.
 *
 * Unknown keyspace or table: CQL_ERR_INVALID_ARG with the message
 * 'keyspace "x" does not exist' / 'table "x"."y" does not exist'; use
 * cql_schema_missing() to tell it apart from other invalid arguments
 * (the FDW maps it to its own SQLSTATEs).
 *
 * IDENTIFICATION
 *		src/cql/cql_schema.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_SCHEMA_H
#define CQL_SCHEMA_H

#include "cql_core.h"
#include "cql_types.h"
#include "cql_wire.h"
#include "cql_conn.h"

/* Upper bounds on what a hostile schema may make us allocate. */
#define CQL_SCHEMA_MAX_COLUMNS	65536
#define CQL_SCHEMA_MAX_UDTS		65536
#define CQL_SCHEMA_MAX_FIELDS	32768
/* cql_type nodes created while resolving one type string (UDT fan-out) */
#define CQL_SCHEMA_MAX_TYPE_NODES 100000

typedef enum cql_column_kind
{
	CQL_COLUMN_PARTITION_KEY,
	CQL_COLUMN_CLUSTERING,
	CQL_COLUMN_STATIC,
	CQL_COLUMN_REGULAR
} cql_column_kind;

typedef enum cql_clustering_order
{
	CQL_ORDER_NONE,
	CQL_ORDER_ASC,
	CQL_ORDER_DESC
} cql_clustering_order;

/* "partition_key", "clustering", "static", "regular" / "none", "asc", "desc" */
extern const char *cql_column_kind_name(cql_column_kind k);
extern const char *cql_clustering_order_name(cql_clustering_order o);

typedef struct cql_column_meta
{
	char	   *name;
	cql_column_kind kind;
	int			position;		/* within partition/clustering key; -1 else */
	cql_clustering_order order;
	char	   *type_text;		/* as in system_schema.columns.type */
	cql_type   *type;			/* parsed, UDTs resolved; NULL on failure */
	cql_status	type_status;	/* why 'type' is NULL */
	char	   *sai_index;		/* a Storage-Attached Index on the column's
								 * values (system_schema.indexes), or NULL */
	char	   *sai_similarity; /* that index's similarity function on a
								 * vector column (cosine, euclidean,
								 * dot_product; lower case), or NULL */
	char	   *sai_values_index;	/* SAI on a collection's values(c) */
	char	   *sai_keys_index; /* SAI on a map's keys(m) */
	char	   *sai_entries_index;	/* SAI on a map's entries(m) */
	char	   *mask;			/* dynamic data masking: the masking
								 * function ("system.mask_default"), or
								 * NULL (system_schema.column_masks) */
} cql_column_meta;

typedef struct cql_udt_meta
{
	char	   *keyspace;
	char	   *name;
	int			nfields;
	char	  **field_names;
	char	  **field_types;	/* CQL type strings */
} cql_udt_meta;

typedef struct cql_table_meta
{
	const cql_allocator *alloc;
	char	   *keyspace;
	char	   *name;
	bool		is_view;		/* a materialized view */
	bool		is_counter;		/* flags contain 'counter' */

	/*
	 * Columns: partition key in position order, then clustering key in
	 * position order, then static, then regular columns (by name, as
	 * system_schema returns them).
	 */
	int			ncolumns;
	cql_column_meta *columns;
	int			npartition;
	int		   *partition_key;	/* indexes into columns */
	int			nclustering;
	int		   *clustering_key; /* indexes into columns */

	/* the UDTs of the keyspace (all of them, for later value decoding) */
	int			nudts;
	cql_udt_meta *udts;
} cql_table_meta;

/* Keyspace names, sorted as the server returns them. */
extern cql_status cql_schema_list_keyspaces(cql_conn *c, const cql_allocator *a,
											char ***names, int *n, cql_error *err);

/* Table names of a keyspace (views not included). */
extern cql_status cql_schema_list_tables(cql_conn *c, const char *keyspace,
										 const cql_allocator *a,
										 char ***names, int *n, cql_error *err);

extern void cql_schema_names_free(char **names, int n, const cql_allocator *a);

/* Does this keyspace exist?  (*exists; errors only for I/O trouble) */
extern cql_status cql_schema_keyspace_exists(cql_conn *c, const char *keyspace,
											 bool *exists, cql_error *err);

/* User-defined types of a keyspace. */
extern cql_status cql_schema_load_udts(cql_conn *c, const char *keyspace,
									   const cql_allocator *a,
									   cql_udt_meta **udts, int *n,
									   cql_error *err);
extern void cql_schema_udts_free(cql_udt_meta *udts, int n, const cql_allocator *a);

/* One table (or materialized view) with its columns and keyspace UDTs. */
extern cql_status cql_schema_load_table(cql_conn *c, const char *keyspace,
										const char *table,
										const cql_allocator *a,
										cql_table_meta **out, cql_error *err);
extern void cql_table_meta_free(cql_table_meta *t);

/* Column by exact name, or NULL. */
extern const cql_column_meta *cql_table_meta_column(const cql_table_meta *t,
													const char *name);

/*
 * Wait until every node reports the same schema_version (system.local and
 * system.peers_v2/peers seen through this connection), polling every 200
 * ms, as drivers do after DDL: a statement sent to a node that has not
 * seen a new table yet fails.  Peers with a null version or host_id are
 * ignored.  CQL_ERR_TIMEOUT when timeout_ms passes without agreement.
 */
extern cql_status cql_schema_await_agreement(cql_conn *c, int timeout_ms, cql_error *err);

/*
 * Which peer rows count for schema agreement: called with the row's
 * host_id (16 bytes); false leaves the row out.  A node that is down keeps
 * its last schema_version in the peers table, so the drivers count only
 * peers they see up; the cluster layer passes a filter that does the same
 * (cql_cluster_await_schema_agreement).
 */
typedef bool (*cql_schema_peer_filter) (void *ctx, const uint8_t host_id[16]);

/* cql_schema_await_agreement counting only the peers 'counts' accepts
 * (all peers when it is NULL). */
extern cql_status cql_schema_await_agreement_among(cql_conn *c, int timeout_ms,
												   cql_schema_peer_filter counts,
												   void *ctx, cql_error *err);

/*
 * The value of a node setting (system_views.settings, Cassandra 4.0+), e.g.
 * a guardrail, as text into buf.  CQL_OK with buf "" when the node has no
 * such setting or no settings table.
 */
extern cql_status cql_node_setting(cql_conn *c, const char *name, char *buf, size_t cap,
								   cql_error *err);

/* Was this error an unknown keyspace/table (not another problem)? */
extern bool cql_schema_missing(cql_status st, const cql_error *err);

/*
 * Pure helpers (no I/O), also used by the loader:
 *
 * cql_schema_parse_type: a schema type string -> cql_type, resolving UDT
 * names of 'keyspace' through 'udts' (nested UDTs too).  Cycles and
 * explosive fan-out are refused (CQL_ERR_TOO_LARGE); an unknown UDT is
 * CQL_ERR_UNSUPPORTED.
 *
 * cql_schema_build_table: assemble a cql_table_meta from column rows
 * (names[i], kinds[i], positions[i], orders[i], types[i]); kinds/orders as
 * the strings of system_schema.  Takes ownership of nothing; checks
 * everything (unknown kinds, duplicate names, key positions with holes).
 */
extern cql_status cql_schema_parse_type(const char *text, const char *keyspace,
										const cql_udt_meta *udts, int nudts,
										const cql_allocator *a, cql_type **out);

typedef struct cql_column_row
{
	const char *name;
	const char *kind;
	int			position;
	const char *clustering_order;	/* may be NULL (= "none") */
	const char *type;
} cql_column_row;

extern cql_status cql_schema_build_table(const char *keyspace, const char *table,
										 const cql_column_row *rows, int nrows,
										 const cql_udt_meta *udts, int nudts,
										 const cql_allocator *a,
										 cql_table_meta **out, cql_error *err);

#endif							/* CQL_SCHEMA_H */

/*-------------------------------------------------------------------------
 *
 * capture.h
 *	  "cqlbridge stream": change capture from PostgreSQL's logical decoding
 *	  (pgoutput over the streaming replication protocol) that keeps the
 *	  Cassandra query tables in step without triggers.
 *
 * The files, one job each:
 *	  pgoutput.c	 decoding of pgoutput messages (no I/O)
 *	  replication.c	 the replication connection: slot, START_REPLICATION,
 *					 CopyData, standby status updates
 *	  relations.c	 the source relations by OID: the columns the plan
 *					 reads, renames, the stream's views of them,
 *					 Relation messages (columns added, dropped, renamed),
 *					 replica identities
 *	  tables.c		 the stream's record of its query tables; the plan
 *					 diff of a new plan against it
 *	  join.c		 added or changed tables backfilled while streaming
 *	  partitions.c	 partitions created, attached, detached, dropped or
 *					 truncated while streaming (polled from the catalog)
 *	  keyset.c		 sets of encoded strings (pending keys, requests) and
 *					 the values they encode
 *	  keys.c		 003's metadata as the stream needs it, and a committed
 *					 change -> the target keys it may add, change or remove
 *	  writer.c		 pending keys recomputed from the source views and
 *					 written to Cassandra, lineage kept, retried
 *	  direct.c		 tables that project one relation row by row: written
 *					 from the decoded rows themselves, no source read
 *	  deletes.c		 the DELETEs of vanished keys (one DO block)
 *	  setup.c		 checks, publication, slot, lineage tables, initial load
 *					 from the slot's exported snapshot, --drop
 *	  status.c		 the status row, progress lines, --status
 *	  sql.c			 statements that do not exit on failure, text[] literals
 *	  priority.c	 --priority idle: the process and its sessions in SCHED_IDLE
 *	  capture.c		 the command: the loop, reconnects, signals
 *
 * See docs/cqlbridge-design.md ("stream") for the design.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/capture.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_CAPTURE_H
#define CQLBRIDGE_CAPTURE_H

#include <stdint.h>

#include "common/common.h"

typedef uint64_t CapLsn;

/* ---- pgoutput.c ---- */

typedef struct CapColumn
{
	char	   *name;
	unsigned int typid;
	int			typmod;
	int			flags;			/* 1: part of the replica identity key */
} CapColumn;

typedef struct CapRelation
{
	unsigned int relid;
	char	   *nspname;
	char	   *relname;
	char		identity;		/* d, n, f, i */
	int			natts;
	CapColumn  *cols;
} CapRelation;

typedef struct CapTuple
{
	int			ncols;
	char	   *kinds;			/* per column: 'n' null, 'u' unchanged TOAST, 't' text */
	char	  **values;			/* text of 't' columns, else NULL */
} CapTuple;

typedef enum CapKind
{
	CAP_BEGIN,
	CAP_COMMIT,
	CAP_RELATION,
	CAP_INSERT,
	CAP_UPDATE,
	CAP_DELETE,
	CAP_TRUNCATE,
	CAP_IGNORED					/* origin, type, logical message */
} CapKind;

typedef struct CapMessage
{
	CapKind		kind;
	CapLsn		lsn;			/* BEGIN: final LSN; COMMIT: commit LSN */
	CapLsn		end_lsn;		/* COMMIT: end of the transaction */
	int64_t		commit_time;	/* BEGIN/COMMIT: us since 2000-01-01 */
	uint32_t	xid;			/* BEGIN: the transaction id */
	unsigned int relid;			/* I/U/D */
	CapRelation rel;			/* RELATION */
	bool		has_old;		/* U/D: an old tuple (K or O) */
	bool		old_full;		/* it is O (every column), not K (the key
								 * columns; the others null) */
	CapTuple	oldt;
	CapTuple	newt;			/* I/U */
	int			ntrunc;			/* TRUNCATE */
	unsigned int *trunc_relids;
} CapMessage;

extern bool cap_decode(const char *buf, int len, CapMessage *m, char *err, size_t errlen);
extern void cap_message_free(CapMessage *m);
extern void cap_relation_free(CapRelation *r);

/* ---- replication.c ---- */

extern PGconn *cap_repl_connect(const BridgeOptions *opts, char *err, size_t errlen);
extern bool cap_create_slot(PGconn *repl, const char *slot, char **snapshot,
							CapLsn *consistent, char *err, size_t errlen, char *sqlstate);
extern bool cap_start(PGconn *repl, const char *slot, CapLsn from,
					  const char *publication, char *err, size_t errlen, char *sqlstate);
extern int	cap_read(PGconn *repl, int timeout_ms, bool paced, char **buf);
extern bool cap_send_status(PGconn *repl, CapLsn received, CapLsn flushed, bool reply);
extern char *cap_lsn_text(CapLsn lsn);
extern bool cap_parse_lsn(const char *s, CapLsn *lsn);
extern uint64_t cap_get64(const char *p);

/* ---- keys.c ---- */

/* a set of encoded strings: pending target keys, derivation requests */
typedef struct CapKeySet
{
	char	  **slots;
	size_t		cap;
	size_t		n;
} CapKeySet;

/* one "-- affected:" line of a target table */
typedef struct CapAffected
{
	int			table;			/* index into CapPlan.tables */
	int			source;			/* index into CapPlan.sources */
	bool		sublink;		/* the relation feeds a sublink (collection) */
	char	   *sql;			/* the affected SQL: keys from the current data */
	char	   *lineage_sql;	/* level 0: keys from the lineage table */
	char	   *old_sql;		/* sublink: the relation replaced by its old row */
	char	  **old_cols;		/* sublink: the columns old_sql binds, in order */
	char	  **old_types;		/* and their types */
	int			nold;
	char	  **lin_of_pk;		/* top level: the lineage column of each key column */
} CapAffected;

typedef struct CapSource
{
	char	   *qualified;		/* schema.table as in 003 (SQL) */
	char	   *schema;			/* unquoted */
	char	   *table;			/* unquoted */
	char	  **pk;				/* plan's key columns, unquoted */
	char	  **pk_types;		/* format_type of each (set by prepare) */
	int			npk;
	unsigned int relid;			/* set by setup */
	CapRelation *rel;			/* the last Relation message (NULL before) */
	char	   *current;		/* its SQL name now (from relid) */
	char	   *mirror;			/* the stream's view of its read columns */
	bool		partitioned;	/* a partitioned table: partitions polled */
	bool		identity_short; /* its changes since the last Relation message
								 * lack old values the stream needs: each
								 * UPDATE or DELETE recomputes its tables in
								 * full (relations.c) */
	int			nread;			/* the columns the plan reads (relations.c): */
	int		   *read_attnum;	/* attribute numbers */
	char	  **read_name;		/* names when the stream loaded (the plan's) */
	unsigned int *read_typid;	/* type OIDs */
	bool	   *read_generated; /* generated: never in a change */
	int		   *read_pos;		/* column in the last Relation message, or -1 */
	char	  **read_seen;		/* its name there (NULL before) */
} CapSource;


/* what a plan's table is to the stream's recorded one (tables.c) */
typedef enum CapChange
{
	CAP_UNCHANGED,
	CAP_ADDED,					/* a new target */
	CAP_CHANGED,				/* same key, other columns or rows */
	CAP_REKEYED,				/* another primary key: cannot be online */
	CAP_RETYPED					/* a column of another CQL type: neither */
} CapChange;

/* a table's part in the stream (tables.c, join.c) */
typedef enum CapTableState
{
	CAP_LIVE,					/* written from every flush */
	CAP_JOINING,				/* to be backfilled (stream_tables: joining) */
	CAP_BACKFILL,				/* being backfilled: its requests wait */
	CAP_CATCHUP					/* backfilled: live once the next flush commits */
} CapTableState;

typedef struct CapTable
{
	const char *target;
	const char *foreign_table;
	const char *source_view;
	const char *columns;
	const char *rows_sql;
	char	  **key;			/* unquoted key column names */
	char	  **key_types;		/* format_type of each, from the view */
	char	  **ft_key_types;	/* and from the foreign table */
	int			nkey;
	int			npart;			/* leading key columns that are the partition key */
	bool		has_static;		/* the target has static columns */
	char	  **lin;			/* lineage columns of the view, unquoted */
	int			nlin;
	char	   *lineage;		/* the lineage table (SQL name) */
	CapKeySet	pending;
	char	   *definition;		/* what the plan says of it (tables.c) */
	char	   *block;			/* its foreign table and view in 002 */
	CapChange	change;			/* against the stream's recorded table */
	char	   *detail;			/* what changed, for the plan diff */
	char	   *added_cql;		/* CHANGED: "col type, ..." to add in Cassandra */
	CapTableState state;
	bool		interrupted;	/* a backfill of it did not finish before */
	/* direct.c: rows written from the change itself */
	bool		direct;
	char	   *direct_head;	/* its view's SQL before the relation */
	char	   *direct_tail;	/* and after it (alias included) */
	int			direct_affected;	/* its one affected line */
	int		   *key_of_pk;		/* keyed by its relation's key: for each
								 * key column of the relation, the target key
								 * column that is it (direct.c); else NULL */
} CapTable;

/* a table the stream records that the plan no longer has */
typedef struct CapRemoved
{
	char	   *target;
	char	   *lineage;
	char	   *foreign_table;
	char	   *source_view;
} CapRemoved;

typedef struct CapPlan
{
	const char *dir;
	char	   *keyspace;
	char	   *schema;			/* cqlbridge_<keyspace>, SQL name */
	char	   *schema_plain;	/* unquoted */
	char	   *slot;			/* cqlbridge_<tag> */
	char	   *publication;
	int			ntables;
	CapTable   *tables;
	int			nsources;
	CapSource  *sources;
	int			naffected;
	CapAffected *affected;
	/* partitions.c: the leaf partitions as last polled, not yet persisted */
	bool		parts_dirty;
	char	   *parts_arrays[4];	/* root, leaf, filenode, bound: text[] */
	double		parts_polled;	/* when (bridge_now), 0: poll at once */
	/* tables.c, join.c: tables added or changed online */
	bool		recorded;		/* stream_tables had rows */
	int			nremoved;
	CapRemoved *removed;
	CapKeySet	deferred;		/* requests of tables being backfilled */
	char	   *lock_sql;		/* LOCK TABLE of the source views (relations.c) */
	const char *write_consistency;	/* of every write (--write-consistency) */
	unsigned int state_relid;	/* the status table (its changes: heartbeat) */
	unsigned int warned_relid;	/* the last relation warned about (keys.c) */
	PGconn	   *join_conn;		/* the backfill's session */
	int			joining;		/* the table being backfilled, or -1 */
	double		join_t0;
	struct CapDirect *direct;	/* direct.c: decoded rows since the flush */
	CapLsn		replay_until;	/* capture.c: commits up to this position
								 * may have been written by an earlier
								 * session's flush (0: none); direct.c
								 * then deletes the keys of earlier states */
} CapPlan;

extern CapPlan *cap_read_plan(const char *dir);
extern void cap_plan_prepare(PGconn *conn, CapPlan *p);
extern bool cap_change_keys(CapPlan *p, CapKeySet *req, const CapMessage *m,
							char *err, size_t errlen);
extern void cap_truncate_keys(CapPlan *p, CapKeySet *req, const CapMessage *m);
extern void cap_queue_recompute(CapPlan *p, CapKeySet *req, int source, const char *bound);
extern bool cap_derive(PGconn *conn, CapPlan *p, CapKeySet *req, char *err, size_t errlen);
extern char **cap_decode_values(const char *s, int *n);
extern void cap_keyset_add(CapKeySet *s, const char *encoded);
extern void cap_keyset_clear(CapKeySet *s);
extern size_t cap_pending_total(const CapPlan *p);
extern bool cap_table_waits(const CapPlan *p, int table);
extern void cap_add_keys(CapTable *t, PGresult *res);

/* ---- keyset.c (the types above) ---- */

extern void cap_encode_values(StrBuf *sb, char **vals, int n);
extern void cap_request_add(CapKeySet *req, int a, char mode, char **vals, int n);
extern bool cap_tuple_values(const CapSource *s, const CapTuple *t, const CapTuple *alt,
							 char **cols, int n, char **out, char *err, size_t errlen);

/* ---- direct.c ---- */

extern void cap_direct_prepare(PGconn *conn, CapPlan *p);
extern void cap_direct_lineage(PGconn *conn, CapPlan *p);
extern bool cap_direct_takes(const CapPlan *p, const CapAffected *a);
extern bool cap_direct_change(CapPlan *p, int source, const CapMessage *m,
							  char *err, size_t errlen);
extern void cap_direct_recompute(CapPlan *p, int source);
extern size_t cap_direct_count(const CapPlan *p);
extern bool cap_direct_requests(CapPlan *p, CapKeySet *req);
extern bool cap_direct_recompute_keys(PGconn *conn, CapPlan *p, char *err, size_t errlen);
extern bool cap_direct_write(PGconn *conn, CapPlan *p, int table, long long *written,
							 char *err, size_t errlen);
extern void cap_direct_clear(CapPlan *p);

/* ---- writer.c ---- */

extern bool cap_flush(PGconn *conn, CapPlan *p, CapKeySet *req, const char *xids,
					  long long *written, char *err, size_t errlen);
extern char *cap_key_match(const CapTable *t, const char *alias, int first_param);

/* ---- deletes.c ---- */

extern bool cap_delete_keys(PGconn *conn, CapTable *t, PGresult *res, int ncols,
							char *err, size_t errlen);

/* ---- sql.c ---- */

extern char *cap_array_literal(char **values, int n);
extern char *cap_column_array(PGresult *res, int c);
extern bool cap_run(PGconn *conn, const char *sql, int n, const char *const *params,
					char *err, size_t errlen);
extern char *cap_key_columns(const CapTable *t, const char *alias, bool lin);
extern char **cap_column_literals(char ***cols, int ncols, int nrows);
extern void cap_unnest_rows(StrBuf *sb, char *const *types, int n, int first, const char *c);
/* ---- priority.c ---- */

extern void cap_priority_process(const BridgeOptions *opts);
extern void cap_priority_adapt(PGconn *conn, double lag, const BridgeOptions *opts,
							   const char *ext_schema);
extern bool cap_priority_session(PGconn *conn, bool replication, const BridgeOptions *opts,
								 const char *ext_schema, char *err, size_t errlen);

extern bool cap_result_ok(PGconn *conn, PGresult *res, char *err, size_t errlen);
extern PGresult *cap_exec(PGconn *conn, const char *sql, int n, const char *const *params,
						  char *err, size_t errlen);
extern void cap_trace(PGconn *conn, const char *sql, unsigned long long cpu0);
extern unsigned long long cap_backend_cpu(PGconn *conn);
extern bool cap_custom_plans(PGconn *conn, char *err, size_t errlen);

/* ---- relations.c ---- */

typedef enum CapCheck
{
	CAP_CHECK_OK,
	CAP_CHECK_RETRY,			/* a query failed: err, retry the session */
	CAP_CHECK_FATAL				/* the plan cannot go on: err and hint */
} CapCheck;

extern void cap_relations_resolve(PGconn *conn, CapPlan *p);
extern PGresult *cap_source_columns(PGconn *conn, const CapSource *s);
extern void cap_relations_record(PGconn *conn, CapPlan *p);
extern int	cap_source_column(const CapSource *s, const char *name);
extern CapCheck cap_relation_message(PGconn *conn, CapPlan *p, CapRelation *rel,
									 char *err, size_t errlen, const char **hint);
extern CapCheck cap_identity_problem(PGconn *conn, CapPlan *p, int s, const char *leaf,
									 char **msg, char **hint, char *err, size_t errlen);
extern CapCheck cap_views_check(PGconn *conn, CapPlan *p, char *err, size_t errlen,
								const char **hint);
extern void cap_check_uncaptured(PGconn *conn, CapPlan *p);
extern void cap_target_missing(PGconn *conn, CapPlan *p, char **msg);
extern bool cap_slot_unusable(PGconn *conn, CapPlan *p, char **msg, char *err, size_t errlen);
extern const char *const cap_reload_hint;
extern char *cap_lock_sql(const CapPlan *p, const CapTable *only);
extern char *cap_rewritten(PGconn *conn);

/* ---- tables.c ---- */

extern void cap_tables_define(CapPlan *p);
extern bool cap_tables_exist(PGconn *conn, const CapPlan *p);
extern void cap_tables_compare(PGconn *conn, CapPlan *p);
extern void cap_tables_record(PGconn *conn, CapPlan *p);
extern bool cap_tables_differ(const CapPlan *p);
extern char *cap_tables_diff_text(const CapPlan *p);
extern void cap_tables_report(PGconn *conn, const char *dir, bool quiet);

/* ---- join.c ---- */

extern void cap_join_start(PGconn *conn, const BridgeOptions *opts, CapPlan *p);
extern CapCheck cap_join_poll(PGconn *conn, CapPlan *p, CapKeySet *req, char *err, size_t errlen);
extern bool cap_join_flushed(PGconn *conn, CapPlan *p, bool committed, char *err, size_t errlen);
extern void cap_join_stop(CapPlan *p);

/* ---- partitions.c ---- */

extern void cap_partitions_prepare(PGconn *conn, CapPlan *p);
extern void cap_partitions_record(PGconn *conn, CapPlan *p);
extern CapCheck cap_partitions_poll(PGconn *conn, CapPlan *p, CapKeySet *req,
									char *err, size_t errlen, const char **hint);
extern bool cap_partitions_persist(PGconn *conn, CapPlan *p, char *err, size_t errlen);

/* ---- setup.c ---- */

extern char *cap_value(PGconn *conn, const char *what, const char *sql, int n,
					   const char *const *params);
extern void cap_check_server(PGconn *conn, CapPlan *p);
extern void cap_check_source(PGconn *conn, CapPlan *p);
extern void cap_check_targets(PGconn *conn, CapPlan *p);
extern void cap_prepare_objects(PGconn *conn, CapPlan *p);
extern char *cap_phase(PGconn *conn, CapPlan *p, CapLsn *confirmed);
extern void cap_initial_load(PGconn *conn, PGconn *repl, CapPlan *p, const BridgeOptions *opts);
extern bool cap_truncate_target(PGconn *conn, const CapTable *t, char *err, size_t errlen);
extern int	cap_drop(const BridgeOptions *opts, CapPlan *p);

/* ---- status.c ---- */

typedef struct CapStats
{
	long long	changes;		/* changes decoded */
	long long	flushed_keys;	/* target keys written */
	CapLsn		confirmed;
	CapLsn		received;
	double		lag_seconds;	/* commit -> Cassandra acknowledged */
	double		rate;			/* changes/s, recent */
	double		rate_t0;
	long long	rate_n0;
	char		last_error[1024];
	double		last_report;
	double		last_log;
	long long	warn_wal;		/* --warn-wal bytes */
} CapStats;

extern void cap_status_update(PGconn *conn, CapPlan *p, CapStats *st, bool force, bool tty,
							  bool quiet);
extern int	cap_status_command(const BridgeOptions *opts, CapPlan *p);
extern void cap_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* ---- capture.c ---- */

extern int	cmd_stream(const BridgeOptions *opts);

#endif							/* CQLBRIDGE_CAPTURE_H */

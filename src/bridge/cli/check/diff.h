/*-------------------------------------------------------------------------
 *
 * diff.h
 *	  "cqlbridge diff": every row of every query table compared with
 *	  every row of its source view (diff.c: the tables and the report;
 *	  diff_merge.c: the two ordered streams merged; diff_jobs.c: tables
 *	  compared at once in worker processes; diff_repair.c:
 *	  --repair).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/diff.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_DIFF_H
#define CQLBRIDGE_DIFF_H

#include "common/common.h"

/* What a difference is */
typedef enum DiffKind
{
	DIFF_MISSING,				/* in the source view, not in Cassandra */
	DIFF_EXTRA,					/* in Cassandra, not in the source view */
	DIFF_DIFFERENT				/* both, with other values */
} DiffKind;

/* One difference kept as an example (and, with --repair, to repair) */
typedef struct DiffExample
{
	DiffKind	kind;
	char	  **key;			/* the primary-key values (text), nkey */
	char	   *columns;		/* DIFF_DIFFERENT: the columns that differ */
} DiffExample;

/* One query table of the plan and what its diff found */
typedef struct DiffTable
{
	const char *target;			/* keyspace.table */
	const char *foreign_table;	/* schema.table, as 003 writes it */
	const char *source_view;
	const char *source_from;	/* what whole reads select from: the view's
								 * bulk form "(SELECT ...)", or the view */
	bool		row_hash;		/* range hashes by cql_bridge_row_hash(), not
								 * hashtextextended() of the row's text */
	const char *ext;			/* cql_fdw's schema, quoted: its functions
								 * are called schema-qualified */
	long long	expected;		/* 003 "rows": for the progress line */
	int			ncols;
	char	  **cols;			/* 003 "columns", unquoted */
	char	  **types;			/* their foreign-table types (format_type) */
	int			nkey;
	int		   *key;			/* indexes into cols: the primary key */
	int			npk;
	int		   *pk;				/* indexes into cols: the partition key */
	char	  **pk_cql;			/* the partition key's CQL types */

	/* the result */
	long long	src_rows;
	long long	tgt_rows;
	long long	missing;
	long long	extra;
	long long	different;
	long long  *col_diffs;		/* per column: rows where it differs */
	int			nexamples;
	int			maxexamples;
	DiffExample *examples;
	/* every differing key, for --repair (NULL without it) */
	int			nrepair;
	int			maxrepair;
	DiffExample *repair;
	long long	repaired;
	long long	still_different;
} DiffTable;

/*
 * Token ranges of the checkpoints and of the range hashes: range r holds
 * the tokens whose top DIFF_RANGES_BITS bits, counted from the lowest
 * token, are r (diff_range_of(); in SQL (token >> 58) + 32).
 */
#define DIFF_RANGES_BITS 6
#define DIFF_RANGES (1 << DIFF_RANGES_BITS)

/* Where a table's comparison is, for its checkpoints (diff_progress.c) */
typedef struct DiffProgress
{
	PGconn	   *conn;			/* autocommit session for the records */
	bool		repair;			/* a --repair run: every differing key recorded */
	int			next;			/* the first range not recorded */
	/* t's counts at the last record */
	long long	src_rows;
	long long	tgt_rows;
	long long	missing;
	long long	extra;
	long long	different;
	long long  *col_diffs;
	int			nexamples;
	int			nrepair;
} DiffProgress;

/* diff_progress.c */
extern int	diff_range_of(long long tok);
extern long long diff_range_high(int r);
extern void diff_progress_setup(PGconn *conn);
extern void diff_progress_forget(PGconn *conn, const DiffTable *t);
extern void diff_progress_resume(DiffProgress *p, DiffTable *t, int examples);
extern void diff_progress_record(DiffProgress *p, DiffTable *t, int upto);
extern void diff_append_example(DiffExample **arr, int *n, int *cap,
								const DiffExample *e);

/*
 * diff_merge.c: merge the rows of token ranges p->next .. last of one table
 * (source view on src_conn, Cassandra on tgt_conn)
 */
extern void diff_table(PGconn *src_conn, PGconn *tgt_conn, DiffProgress *p,
					   DiffTable *t, int last, int examples, bool keep_all,
					   bool tty, const BridgeOptions *opts);

/* diff_merge.c: the two sessions of a comparison */
extern PGconn *diff_open_source(const BridgeOptions *opts);
extern PGconn *diff_open_target(const BridgeOptions *opts);

/* diff_compare.c: one table compared in a transaction (range hashes, then merges) */
extern void diff_compare(PGconn *src, PGconn *tgt, DiffProgress *p, DiffTable *t,
						 bool tty, const BridgeOptions *opts);
extern char *diff_token_expr(const DiffTable *t, const char *alias);
extern char *diff_compared_columns(const DiffTable *t, bool source);
extern char *diff_key_text(const DiffTable *t, char **key);

/* diff_repair.c: write what differs again, then compare those keys */
extern void diff_repair(PGconn *conn, DiffTable *t, const char *keyspace);
extern void diff_repair_dry_run(const DiffTable *t, int examples_max);

/* diff.c: the command (main.c dispatches) */
extern int	cmd_diff(const BridgeOptions *opts);

/* diff_jobs.c: --jobs, the tables to compare in worker processes */
extern void diff_jobs_run(const BridgeOptions *opts, PGconn *prog_conn,
						  DiffTable *tables, DiffProgress *progs, int n,
						  const int *todo, int ntodo, int jobs);

#endif							/* CQLBRIDGE_DIFF_H */

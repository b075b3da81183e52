/*-------------------------------------------------------------------------
 *
 * apply.h
 *	  The two ways "cqlbridge apply" loads a target table: streamed in one
 *	  pass of its source rows (stream.c, the default) or in hash chunks
 *	  (apply.c, --chunks N and 003 files of older plans); what both share
 *	  (progress.c).  apply.c: bottom-up, progress.c < stream.c < apply.c.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/load/apply.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRIDGE_APPLY_H
#define BRIDGE_APPLY_H

#include "common/common.h"

/* apply.c: the command (main.c dispatches). */
extern int	cmd_apply(const BridgeOptions *opts);

/* replan.c: "cqlbridge stream DIR --replan" (main.c dispatches). */
extern int	cmd_replan(const BridgeOptions *opts);

/* stream_drop.c: "cqlbridge stream DIR --drop --dry-run" (main.c dispatches). */
extern int	cmd_stream_drop_dry_run(const BridgeOptions *opts);

/* One table block of 003_load.sql, as apply uses it. */
typedef struct ApplyTable
{
	const BridgeBlockFile *f;
	const BridgeBlock *b;
	int			index;			/* position in 003 */
	const char *target;			/* -- table: keyspace.table */
	const char *foreign_table;	/* -- foreign_table: SQL name */
	const char *columns;		/* -- columns: SQL names, the rows' order */
	char	  **pkey;			/* -- partition_key: plain names */
	int			npkey;
	char	  **key;			/* -- key: partition key + clustering columns */
	int			nkey;
	const char *sql;			/* the block's statement */
	bool		legacy_insert;	/* an INSERT taking ($1 chunk, $2 count) */
	long long	expected;		/* -- rows: (plan's count; 0 if absent) */
	bool		clustered;		/* the key has clustering columns */
} ApplyTable;

/* A progress line on a terminal: rows, batches or chunks, rate, ETA. */
extern void apply_show_progress(const ApplyTable *t, long long done, long long loaded_now,
								double elapsed, const char *unit, int units_done, int units);

/* The text of an ApplyTable's failed statement, with SQLSTATE, and exit 1. */
extern void apply_load_failed(const ApplyTable *t, PGconn *conn, PGresult *res,
							  const char *step, bool tty, const BridgeOptions *opts)
			__attribute__((noreturn));

/*
 * Load t streamed in one pass of its rows, committing progress to
 * 'progress' (a second connection) after every batch; returns the rows
 * sent by this run, adds the table's total to *rows_total.
 */
extern long long apply_stream_table(PGconn *conn, PGconn *progress, const BridgeOptions *opts,
									const ApplyTable *t, bool tty, long long *rows_total);

/* Columns of the rows query q: before + "q.<quoted name>" + after, joined by sep. */
extern char *apply_column_list(char **names, int n, const char *before, const char *after,
							   const char *sep);

/* Whether t can be streamed; if not, *why says why (static text). */
extern bool apply_can_stream(PGconn *conn, const ApplyTable *t, const char **why);

extern const char *const apply_resume_hint;

#endif							/* BRIDGE_APPLY_H */

/*-------------------------------------------------------------------------
 *
 * draft.h
 *	  "cqlbridge workload": a workload file drafted from the statements
 *	  pg_stat_statements saw, for the DBA to review before "plan".
 *
 * The files, from the bottom up (a file calls only files listed before
 * it):
 *	  normalize.c	statement texts: comments out, IN lists as = ANY,
 *					parameters renumbered, the key that merges statements
 *	  stats.c		pg_stat_statements: checks, statements, write profile
 *	  check.c		would plan serve a drafted block?  (plan's own rules,
 *					run in a child process)
 *	  draft.c		cmd_workload: rank, name, type, write the file
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/draft/draft.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_DRAFT_H
#define CQLBRIDGE_DRAFT_H

#include "common/common.h"

/* One statement of the draft (several pg_stat_statements entries merged). */
typedef struct DraftStmt
{
	char	   *text;			/* normalized text ($1.. in order of use) */
	char	   *key;			/* text with white space collapsed: merges */
	long		calls;
	double		total_ms;
	long		rows;
	int			nmerged;		/* pg_stat_statements entries merged */
	bool		in_list;		/* IN lists were rewritten as = ANY */
	int			nrestored;		/* jsonb_build_object keys restored */
	/* writes */
	bool		is_write;
	char	   *write_op;		/* INSERT, UPDATE, DELETE */
	char	   *write_rel;		/* schema.table (unquoted), NULL: elsewhere */
	/* the drafted block */
	int			nparams;
	char	  **ptypes;
	char	  **pnames;
	char	   *entity;			/* first relation of the query */
	char	   *name;
	char	   *sql;			/* with :'name' parameters */
	char	   *reason;			/* why plan cannot serve it; NULL: it can */
} DraftStmt;

/* The statistics read (stats.c). */
typedef struct DraftStats
{
	char	   *since;			/* pg_stat_statements_info.stats_reset */
	double		seconds;		/* observation window */
	long		dealloc;		/* entries evicted since the reset */
	long		nentries;		/* entries of this database read */
	long		nhidden;		/* "<insufficient privilege>" texts */
	int			nstmts;
	DraftStmt  *stmts;			/* merged, by total time descending */
	char	   *ext_schema;		/* schema of cql_fdw, quoted */
} DraftStats;

/* normalize.c */
extern char *draft_normalize(const char *query, bool *in_list, int *nrestored);
extern char *draft_merge_key(const char *text);
extern char *draft_first_word(const char *text);
extern bool draft_mentions_schema(const char *text, const char *schema);
extern char *draft_first_relation(const char *text, const char *schema);
extern char *draft_write_target(const char *text, const char *op);
extern char *draft_substitute(const char *text, char **pnames, char **ptypes, int nparams);
extern char *draft_ident(const char *s);

/* stats.c */
extern void draft_read_stats(PGconn *conn, const BridgeOptions *opts, DraftStats *st);

/* check.c */
extern char *draft_check_block(const BridgeOptions *opts, const char *block);

/* draft.c */
extern int	cmd_workload(const BridgeOptions *opts);

#endif							/* CQLBRIDGE_DRAFT_H */

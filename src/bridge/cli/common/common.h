/*-------------------------------------------------------------------------
 *
 * common.h
 *	  The lowest layer of the cqlbridge command-line program, shared by
 *	  every command: options, error exits, allocation, a growable string,
 *	  files (base.c), the libpq connection (conn.c), names and literals of
 *	  generated SQL (names.c), the reader of the block-format files
 *	  (workload.sql and the generated 003/004: blocks.c) and Ctrl-C
 *	  (cancel.c), a JSON reader and UTC time stamps (json.c).  Nothing
 *	  here knows a command; the commands' own declarations are in
 *	  plan/plan.h, load/apply.h, check/verify.h and sync/sync.h.
 *
 * See docs/cqlbridge-design.md for the file formats.
 *
 * layer: common
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common/common.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_COMMON_H
#define CQLBRIDGE_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <libpq-fe.h>

/* Options of every command (psql-like connection options plus our own). */
typedef struct BridgeOptions
{
	const char *dbname;			/* -d, also a conninfo string; PG* env apply */
	const char *host;			/* -h */
	const char *port;			/* -p */
	const char *user;			/* -U */
	bool		password_prompt;	/* -W: ask for the password, as psql */
	const char *dir;			/* generated directory (plan -o DIR, apply DIR, ...) */

	/* plan */
	const char *workload;		/* --workload FILE */
	const char *source_schema;	/* --schema: relational schema (e.g. hotel_rel) */
	const char *keyspace;		/* --keyspace (default: source schema without "_rel") */
	const char *foreign_schema; /* --foreign-schema (default: keyspace + "_cql") */
	const char *server;			/* --server: cql_fdw foreign server (default cqlbridge) */
	int			replication_factor; /* --replication-factor (default 3); with
									 * --replication the sum of the DCs' */
	int			ndcs;			/* --replication 'dc1:3,dc2:3': NetworkTopologyStrategy */
	char	  **dc_names;
	int		   *dc_rf;
	long		max_values;		/* --max-values per partition (default 100000) */
	long		max_bytes;		/* --max-bytes per partition (default 100 MB) */
	double		growth;			/* --growth: headroom of a bucket (default 2) */
	bool		no_bucket;		/* --no-bucket: keep wide tables unbucketed */
	bool		strict;			/* --strict: plan all statements or nothing */

	/* apply */
	int			chunks;			/* --chunks (0 = stream each table) */
	long		batch_rows;		/* --batch-rows: rows per streamed batch */
	bool		restart;		/* --restart: forget recorded progress */
	bool		no_load;		/* --no-load: 001 and 002 only (for stream) */

	/* verify */
	int			samples;		/* --samples per query (default 5) */
	bool		show;			/* --show: EXPLAIN and rows of one sample */

	/* diff (and --table, --json below) */
	int			examples;		/* --examples per table (default 10) */
	bool		repair;			/* --repair: write what differs */
	const char *consistency;	/* --consistency of the Cassandra reads */
	const char *write_consistency;	/* --write-consistency (apply, stream,
									 * sync, diff --repair) */
	int			jobs;			/* --jobs: tables compared at once (default 2) */
	bool		row_by_row;		/* --row-by-row: no range hashes first */

	/* sync */
	bool		uninstall;		/* --uninstall: remove the triggers */

	/* workload (draft from pg_stat_statements) */
	const char *output;			/* -o FILE ("-" or NULL: stdout) */
	int			top;			/* --top N reads (0: all) */
	long		min_calls;		/* --min-calls N */
	const char *role;			/* --role: statements of that role only */

	/* CLI conventions of several commands */
	bool		dry_run;		/* --dry-run (apply, sync): print, change nothing */
	const char *json;			/* --json FILE (plan, apply, verify, diff): the report */
	int			ntables;		/* --table (apply, verify, diff), repeatable */
	char	  **tables;

	/* stream */
	bool		stream_status;	/* --status: print the stream's status */
	bool		stream_drop;	/* --drop: remove slot, publication, tables */
	long		warn_wal;		/* --warn-wal: retained WAL that warns */
	bool		log_positions;	/* --log-positions: trace LSNs received/confirmed */
	const char *priority;		/* --priority: "auto" (the default),
								 * "normal", "background" or "idle" */
	int			yield_lag_s;	/* --yield-lag: auto stops yielding above it */
	int			flush_interval_ms;	/* --flush-interval: the stream's coalescing window */
	bool		replan;			/* --replan: apply DIR's plan to the running stream */
	bool		drop_removed;	/* --drop-removed: and drop the tables it removes */

	bool		quiet;			/* -q: no progress lines */
} BridgeOptions;

/*
 * Exit status of every command, the one definition all commands use:
 * 0 success, 1 differences found (verify, diff), 2 error (usage errors
 * included).
 */
#define BRIDGE_EXIT_SUCCESS 0
#define BRIDGE_EXIT_DIFFERENCES 1
#define BRIDGE_EXIT_ERROR	2
/* a usage error is an error */
#define BRIDGE_EXIT_USAGE	BRIDGE_EXIT_ERROR
/* plan: the plan was written without some statements (--strict: 2) */
#define BRIDGE_EXIT_PARTIAL 3

/*
 * A catcher of errors: while bridge_catcher points to one, an error that
 * would end the command (bridge_fatal, a failed bridge_exec) is kept in
 * it, unprinted, and control returns to its setjmp with 1.  plan catches
 * the errors of one statement so that the others are still planned.
 */
typedef struct BridgeCatch
{
	jmp_buf		jump;
	char	   *message;		/* without "cqlbridge: " */
	char	   *hint;			/* or NULL */
} BridgeCatch;

extern BridgeCatch *bridge_catcher;

/* Raise a caught error: fill the catcher and jump (never returns). */
extern void bridge_throw(char *message, char *hint) __attribute__((noreturn));

/* Print "cqlbridge: " + message + newline to stderr and exit(2). */
extern void bridge_fatal(const char *fmt,...) __attribute__((format(printf, 1, 2), noreturn));

/* Same, with a second "HINT:  ..." line. */
extern void bridge_fatal_hint(const char *hint, const char *fmt,...) __attribute__((format(printf, 2, 3), noreturn));

/* Allocation that exits on failure. */
extern void *bridge_malloc(size_t size);
extern void *bridge_realloc(void *ptr, size_t size);
extern char *bridge_strdup(const char *s);
extern char *bridge_printf(const char *fmt,...) __attribute__((format(printf, 1, 2)));
extern char *bridge_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Growable string. */
typedef struct StrBuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} StrBuf;

extern void sb_init(StrBuf *sb);
extern void sb_append(StrBuf *sb, const char *s);
extern void sb_appendn(StrBuf *sb, const char *s, size_t n);
extern void sb_appendc(StrBuf *sb, char c);
extern void sb_appendf(StrBuf *sb, const char *fmt,...) __attribute__((format(printf, 2, 3)));
extern void sb_free(StrBuf *sb);

/* Connect with the options (and PG* environment); fatal on failure. */
extern PGconn *bridge_connect(const BridgeOptions *opts);
extern const char *bridge_write_consistency(const BridgeOptions *opts);

/* Schema of the cql_fdw extension, quoted (conn.c); fatal if not installed. */
extern const char *bridge_extension_schema(PGconn *conn);

/* The same without exiting, optionally with replication=...; NULL + err. */
extern PGconn *bridge_connect_try(const BridgeOptions *opts, const char *replication,
								  char *err, size_t errlen);

/*
 * Run a statement with text parameters; fatal (message + the server's
 * SQLSTATE, detail and hint) unless it returns PGRES_COMMAND_OK or
 * PGRES_TUPLES_OK.  'what' names the step for the error message.
 */
extern PGresult *bridge_exec(PGconn *conn, const char *what, const char *sql,
							 int nparams, const char *const *params);

/* The result of a statement sent with PQsendQuery*(); fatal as bridge_exec. */
extern PGresult *bridge_get_result(PGconn *conn, const char *what);

/* Quote an identifier / a literal for SQL text (never for values we bind). */
extern char *bridge_quote_ident(const char *ident);

/* SQL identifier, quoted only when needed (readable generated SQL). */
extern bool bridge_plain_ident(const char *s, const char *const *reserved);
extern char *bridge_qi(const char *ident);

/* One block of a block-format file. */
typedef struct BridgeBlock
{
	int			nmeta;
	char	  **keys;			/* metadata keys, in file order */
	char	  **values;			/* metadata values (trimmed) */
	int			nsections;
	char	  **section_names;	/* "" for the statement right after the
								 * metadata; else the word of a "-- word"
								 * line (004: sample, source, target) */
	char	  **section_sql;	/* statement text, final ';' removed */
	int			line;			/* line number of the first metadata line */
} BridgeBlock;

typedef struct BridgeBlockFile
{
	char	   *path;
	char	   *header;			/* the comment lines before the first block */
	int			nblocks;
	BridgeBlock *blocks;
} BridgeBlockFile;

/* Read and split a block-format file; fatal with file:line on bad format. */
extern BridgeBlockFile *bridge_read_blocks(const char *path);

/* Same for a workload file: comment-only paragraphs between blocks skipped. */
extern BridgeBlockFile *bridge_read_workload_blocks(const char *path);

/*
 * --table: keep only the blocks whose "-- table:" (keyspace.table) or its
 * table part is one of opts->tables; a --table that names no block is
 * fatal.  Nothing happens without --table.
 */
extern void bridge_select_tables(BridgeBlockFile *f, const BridgeOptions *opts);

/* JSON: s as a JSON string (quoted, escaped) appended to sb. */
extern void bridge_json_string(StrBuf *sb, const char *s);

/* json.c: a parsed JSON value (the reports cqlbridge reads back). */
typedef enum BridgeJsonType
{
	BRIDGE_JSON_NULL,
	BRIDGE_JSON_BOOL,
	BRIDGE_JSON_NUMBER,
	BRIDGE_JSON_STRING,
	BRIDGE_JSON_ARRAY,
	BRIDGE_JSON_OBJECT
} BridgeJsonType;

typedef struct BridgeJson
{
	BridgeJsonType type;
	bool		boolean;
	double		number;
	char	   *str;
	int			n;				/* items of an array or object */
	struct BridgeJson **items;
	char	  **keys;			/* an object's member names */
} BridgeJson;

/* json.c: the tree of a JSON text, or NULL with *error (allocated) set. */
extern BridgeJson *bridge_json_parse(const char *text, char **error);

/* json.c: an object's member (NULL if absent), as a string or number. */
extern const BridgeJson *bridge_json_get(const BridgeJson *v, const char *key);
extern const char *bridge_json_str(const BridgeJson *v, const char *key);
extern double bridge_json_num(const BridgeJson *v, const char *key, double dflt);

/* json.c: the current time, "YYYY-MM-DDTHH:MM:SSZ" (UTC, allocated). */
extern char *bridge_utc_timestamp(void);

/* First value of a metadata key, or NULL. */
extern const char *bridge_block_get(const BridgeBlock *b, const char *key);

/* Statement of a section ("" = the main one), or NULL. */
extern const char *bridge_block_sql(const BridgeBlock *b, const char *section);

/* Read a whole file; fatal on error. */
extern char *bridge_read_file(const char *path);

/* Write a whole file (creating DIR if needed); fatal on error. */
extern void bridge_write_file(const char *path, const char *contents);
extern void bridge_json_to_stdout(void);
extern void bridge_write_output(const char *path, const char *contents);

/*
 * Names, literals and paths (names.c, base.c).
 */

/* Quote a string as a SQL literal (for generated SQL text only). */
extern char *bridge_quote_literal(const char *s);

/* dir + "/" + name (allocated). */
extern char *bridge_path(const char *dir, const char *name);

/* blocks.c: value of a required metadata key; fatal with file:line if absent. */
extern const char *bridge_block_require(const BridgeBlockFile *f, const BridgeBlock *b,
										const char *key);

/* blocks.c: value of "-- key: value" in a header text (allocated), or NULL. */
extern char *bridge_header_get(const char *header, const char *key);

/* blocks.c: a line of white space only; a trimmed copy of n bytes (allocated). */
extern bool bridge_is_blank(const char *s);
extern char *bridge_trim_copy(const char *s, size_t n);

/* blocks.c: split "a, b, c" into trimmed, non-empty items (allocated). */
extern char **bridge_split_list(const char *list, int *n);

/* Run a script of several statements (simple query protocol); fatal on error. */
extern void bridge_exec_script(PGconn *conn, const char *what, const char *sql);

/*
 * cancel.c: SIGINT/SIGTERM send a cancel request for the running statement
 * of conn (of each conn installed, at most two) and set a flag; bridge_check_interrupt() exits (status 1) with
 * the message when the flag is set.
 */
extern void bridge_install_cancel(PGconn *conn);
extern bool bridge_interrupted(void);
extern void bridge_check_interrupt(const char *message);	/* NULL: the hint below */
extern void bridge_set_interrupt_hint(const char *hint);
/* in a forked worker process: its parent reports interruptions; it stops when the parent dies */
extern void bridge_cancel_forked(pid_t parent);

/*
 * Names in generated files (names.c).
 */

/* Control characters (newline, tab...) in a name: plan refuses such names. */
extern bool bridge_has_control(const char *s);

/* A name for a message, quoted, control characters escaped (allocated). */
extern char *bridge_show_name(const char *s);

/* One SQL identifier (quoted or plain) at *p, unquoted; NULL if none. */
extern char *bridge_parse_ident(const char **p);

/* "a, \"B, c\"" -> names, unquoted (quote-aware); NULL on a syntax error. */
extern char **bridge_split_idents(const char *list, int *n);

/* {"a","b"}: the text of a text[] literal of the items (allocated). */
extern char *bridge_text_array(char *const *items, int n);

/* Keyspace names cqlbridge accepts: 1-48 of [a-z0-9_]. */
extern bool bridge_valid_keyspace(const char *ks);

/* Per-plan names: schema "cqlbridge_<ks>" and a short tag (allocated). */
extern char *bridge_plan_schema(const char *keyspace);
extern char *bridge_plan_tag(const char *keyspace);

/*
 * Generated SQL writes BRIDGE_TAG_MARK where a dollar quote goes;
 * bridge_finish_tags() replaces it by a tag that the text does not contain.
 */
#define BRIDGE_TAG_MARK '\x01'
#define BRIDGE_TAG "\x01"
extern char *bridge_finish_tags(const char *text);

/* DO block: create the schemas, refuse those owned by another role. */
extern char *bridge_schema_check_sql(const char *const *schemas, int n);

/* cancel.c: seconds of a monotonic clock. */
extern double bridge_now(void);

#endif							/* CQLBRIDGE_COMMON_H */

/*-------------------------------------------------------------------------
 *
 * plan.h
 *	  Internal structures of "cqlbridge plan": the workload queries with
 *	  their analysis (rows of cql_bridge_analyze), the relational catalog,
 *	  the derived query tables and what was measured on the data.
 *
 * The steps, one file each, from the bottom up: a file calls only files
 * listed before it, never one after it (no call loop between files):
 *	  util.c		small shared helpers (names, warnings, lists, key text)
 *	  typemap.c		PostgreSQL type -> CQL type, stored form, edge checks
 *	  workload.c	read workload.sql, analyze every query, read the catalog
 *	  types.c		output columns -> CQL columns (types, UDT, collections)
 *	  merge.c		queries that share a table: compatible keys, the merged
 *					view (union of columns, to-one joins as LEFT JOINs)
 *	  rules.c		mapping rules MR2-MR5, static columns, names
 *	  partition.c	the partition-size formulas, key column lists
 *	  buckets.c		a bucket for a wide partition: candidates, choice
 *	  target.c		004's source and target statements of a query
 *	  compose.c		composed answers: a partition read joined to lookups
 *	  serve.c		every statement on its own: served, composed or left out
 *	  emit.c		001_schema.cql ... 004_verify.sql
 *	  edges.c		edge values and sub-millisecond digits counted on the data
 *	  sizing.c		measurements on the data (sizes, MR5 checks, fan-out)
 *	  writes.c		the write profile: Cassandra writes/s per table
 *	  report.c		model.txt, report.md and the plan as JSON (--json)
 *	  diagram.c		logical.dot and physical.dot (Chebotko diagrams)
 *	  render_checks.c	report.html's Verification section (verify and
 *					diff draw it again after each run: checks_html.h)
 *	  render.c		SVG by Graphviz's dot, report.html
 *	  plan.c		cmd_plan: runs the steps, writes DIR atomically
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_PLAN_H
#define CQLBRIDGE_PLAN_H

#include "common/common.h"

/* One row of cql_bridge_analyze (NULL columns are NULL pointers / 0). */
typedef struct ARow
{
	char	   *kind;
	int			level;
	int			ord;
	char	   *alias;
	char	   *schema;
	char	   *table;
	char	   *column;
	char	   *type;
	char	   *op;
	int			param;
	char	   *other_alias;
	char	   *other_column;
	char	   *name;
	char	   *detail;
} ARow;

/* A relation of the catalog (--schema). */
typedef struct CatRel
{
	char	   *name;
	int			ncols;
	char	  **cols;
	char	  **types;
	int			nkeys;			/* keys[0] is the primary key when has_pk */
	char	  **keys;			/* comma-separated NOT NULL key columns */
	bool		has_pk;
	long	   *key_merged;		/* per key: rows merged at the millisecond */
	double		reltuples;
} CatRel;

typedef struct Catalog
{
	char	   *schema;
	int			nrels;
	CatRel	   *rels;
} Catalog;

/* How the source view stores a value (typemap.c, plan_store_expr). */
typedef enum StoreKind
{
	STORE_AS_IS,				/* the value itself */
	STORE_MILLISECONDS,			/* a timestamp truncated to the millisecond */
	STORE_ARRAY,				/* an array, empty as NULL */
	STORE_ARRAY_MS,				/* an array of timestamps at the millisecond */
	STORE_SET_MS,				/* a set of them: distinct, in order */
	STORE_TEXT,					/* its text form (json, jsonb) */
	STORE_NUMERIC				/* as numeric (money) */
} StoreKind;

/* Edge values counted on the data before anything is written (edges.c). */
#define CHECK_SUBMS			0x0001	/* timestamp with sub-millisecond digits */
#define CHECK_INFINITE		0x0002	/* infinite timestamp or date */
#define CHECK_NOT_FINITE	0x0004	/* numeric NaN or +-Infinity */
#define CHECK_NETMASK		0x0008	/* inet with a netmask */
#define CHECK_NULL_ELEMENT	0x0010	/* NULL element of an array */
#define CHECK_MULTIDIM		0x0020	/* array of more than one dimension */
#define CHECK_DURATION		0x0040	/* interval whose parts differ in sign */
#define CHECK_TIME_24		0x0080	/* time 24:00:00 */

/* The mapping of one PostgreSQL type (typemap.c). */
typedef struct PgTypeMap
{
	const char *cql;			/* CQL type; NULL: no mapping (why) */
	const char *fdw;			/* type of the foreign table column */
	StoreKind	store;
	int			checks;			/* CHECK_* of the value */
	int			elem_checks;	/* CHECK_* of an array's elements */
	bool		is_enum;
	const char *note;			/* model.txt: what the mapping does */
	const char *why;			/* no mapping: why */
} PgTypeMap;

/* Column kinds, in CQL terms. */
typedef enum ColKind
{
	COL_PARTITION,
	COL_CLUSTERING,
	COL_STATIC,
	COL_REGULAR
} ColKind;

/* Shape of a column (how the query computes it). */
typedef enum ColShape
{
	SHAPE_PLAIN,				/* an output column of the query */
	SHAPE_UDT,					/* address parts assembled into the UDT */
	SHAPE_HIDDEN,				/* a key column that is no output: lineage */
	SHAPE_COLLECTION			/* an aggregate sublink */
} ColShape;

typedef struct Column
{
	char	   *name;
	char	   *cql_type;		/* CQL type text */
	char	   *pg_type;		/* type of the foreign table column */
	char	   *src_type;		/* type of the query's output (PLAIN) */
	ColKind		kind;
	int			position;		/* in partition key / clustering, 0-based */
	bool		desc;
	ColShape	shape;
	char	   *expr;			/* expression over the lineage query "q" */
	char	   *source;			/* human description of the source */
	char	   *rule;			/* rule that placed the column (key columns) */
	char	   *alias;			/* level-0 source column (alias, column) */
	char	   *column;
	int			level;			/* > 0 for collections */
	/* SHAPE_UDT: output names and types of the parts, in UDT field order */
	int			nfields;
	char	  **fields;
	char	  **field_types;
	/* the mapping of its type (typemap.c): stored form, note, edge checks */
	StoreKind	store;
	const char *note;
	int			checks;
	long		nvalues;		/* non-NULL values counted by edges.c */
	long		nsubms;			/* of them with sub-millisecond digits */
	bool		enum_clusters;	/* an enum clustering column (order note) */
	/* sizes measured on the data: average bytes of one value */
	double		avg_size;
	/* a bucket column (buckets.c): cql_fdw's column options */
	char	   *bucket_spec;	/* "day", "6 hours", "hash 8"; NULL: none */
	char	   *bucket_of;		/* its source columns, quoted, ", "-separated */
} Column;

struct Table;

/* What a query parameter is bound to in the serving table. */
typedef struct ParamUse
{
	int			col;			/* column index in the table; -1: none */
	char	   *op;				/* "=", "<", "<=", ">", ">=", "= ANY", "IN";
								 * "limit"; "lookup" (compose.c) */
	const char *lookup;			/* "lookup": the lookup table's column */
} ParamUse;

struct Query;
struct PartCol;

/* How a composed query is answered (compose.c). */
typedef struct Compose
{
	struct Query *drive;		/* the partition read: a query of the plan */
	struct Query *lookup;		/* the lookups by key: a query of the plan */
	int		   *drive_orig;		/* per drive parameter: the statement's $k */
	int			njoin;			/* the lookup's key = the drive's columns */
	char	  **join_drive;		/* output names of the drive ... */
	char	  **join_lookup;	/* ... and of the lookup */
	int			nout;			/* the statement's outputs (and searches) */
	int		   *out_side;		/* 0 drive, 1 lookup; -1/-2: search only */
	char	  **out_name;
	char	  **out_part;		/* the part's output name */
	int			nlcond;			/* conditions checked on the lookup's rows */
	const ARow **lcond;
	int			norder;
	int		   *order_side;
	char	  **order_part;
	bool	   *order_desc;
	int			nlookup_cols;
	struct PartCol *lookup_cols;
} Compose;

/* One output of a top-level aggregate query ("result" rows). */
typedef struct QResult
{
	char	   *name;			/* output name */
	char	   *func;			/* count, sum, min, max, avg; "column" */
	char	   *under;			/* the column's output name in the row query */
	bool		star;			/* count(*) */
	bool		distinct;
	char	   *type;			/* the output's type */
} QResult;

typedef struct Query
{
	char	   *name;
	char	   *description;
	char	   *params_text;
	char	   *published_target;
	char	   *published_key;
	int			line;
	int			nparams;
	char	  **pnames;
	char	  **ptypes;
	char	  **pfmt;			/* ptypes as format_type names them */
	char	   *sql;			/* with $k */
	int			nrows;
	ARow	   *rows;
	char	   *base;
	char	   *lineage;
	bool		ordered;
	struct Table *table;
	char	   *marker;			/* merged table: column NOT NULL exactly on
								 * this query's rows; NULL: every row */
	ParamUse   *puse;
	/* output columns: per target ord, the table column (UDT: field index) */
	int			ntargets;
	int			nvisible;		/* the answer's: the first nvisible targets */
	char	  **tnames;
	int		   *tcol;
	int		   *tfield;			/* -1 or the UDT field */
	/*
	 * A top-level aggregate query: its rows are the outputs above (the
	 * table stores them), these are what it computes of them.
	 */
	int			nresults;		/* 0: no aggregate query */
	QResult    *results;
	int			ngroups;
	char	  **groups;			/* GROUP BY columns (row query names) */
	int			nrorder;
	char	  **rorder;			/* ORDER BY outputs: "name" DESC NULLS ... */
	int			limit_param;	/* $k of LIMIT, 0: none */
	/* a composed answer (compose.c), or a part of one */
	Compose    *compose;
	struct Query *part_of;
	/* MR5 check of the published key on the data */
	bool		pub_checked;
	char	   *pub_error;		/* published key not expressible */
	long		pub_rows;
	long		pub_lost;
	int			npubk;
	char	  **pubk_cols;
	int			npubpk;
} Query;

typedef struct Table
{
	char	   *name;
	char	   *entity;			/* catalog relation most columns come from */
	int			ncols;
	Column	   *cols;
	int			npk;
	int			nck;
	int			nqueries;
	Query	  **queries;
	Query	   *def;			/* the query whose lineage defines the view */
	char	   *source;			/* the view's FROM item "q": def's lineage
								 * SQL, or the merged one (merge.c) */
	char	   *shape_where;	/* the view's WHERE after "q" ("" or text) */
	char	   *shaped;			/* SELECT of the target rows + lineage columns */
	int			nlin;
	char	  **lin;			/* lineage column names of the view */
	bool		has_udt;
	/* queries merged in with a lineage of their own (merge.c) */
	int			nparts;
	struct MergePart *parts;
	int			nwarn;
	char	  **warnings;
	/* measured */
	long		rows;
	long		partitions;
	long		max_rows;
	long		p99_rows;
	double		mean_rows;
	long		key_distinct;	/* distinct derived keys */
	double		nv_max;
	double		bytes_max;
	double		bytes_mean;
	double		bytes_total;	/* all partitions x replication factor */
	/* wide partitions: the bucket candidates measured (buckets.c) */
	struct BucketChoice *bucket;	/* NULL: not wide, nothing measured */
} Table;

/* One bucket measured on the data for a wide table. */
typedef struct BucketCandidate
{
	char	   *spec;			/* cql_fdw bucket option: "day", "hash 8" */
	long		max_rows;		/* rows of the widest bucketed partition */
	double		nv_max;			/* its values (Nv) and bytes (St) */
	double		bytes_max;
	long		partitions;		/* partitions of the bucketed table */
	double		reads_mean;		/* partitions a typical query reads */
	long		reads_max;
	bool		fits;			/* max_rows x growth within the limits */
} BucketCandidate;

/* The bucket of a wide table: what was tried, chosen and applied. */
typedef struct BucketChoice
{
	bool		is_time;		/* time bucket of a clustering column */
	char	   *source;			/* time: the source column; hash: the list */
	char	   *reads_what;		/* the typical query the reads are of */
	int			ncand;
	BucketCandidate *cand;
	int			chosen;			/* index into cand, -1: none fits */
	bool		applied;		/* the table got the bucket column */
	int			column;			/* its index in the table when applied */
	char	   *why_none;		/* no usable bucket: why */
	/* the table before the bucket */
	long		wide_rows;
	double		wide_nv;
	double		wide_bytes;
	long		wide_partitions;
} BucketChoice;

/*
 * A query merged into a table whose defining query (Table.def) does not
 * produce all its columns or rows: its lineage is LEFT JOINed to def's on
 * def's lineage columns (merge.c).
 */
typedef struct MergePart
{
	Query	   *q;
	char	   *marker;			/* column NOT NULL exactly on q's rows, or NULL */
	int			nextra;
	const ARow **extra;			/* q's top-level relations that def lacks */
	char	   *alias;			/* of its lineage in the merged source: p1, p2 */
	int			nout;
	char	  **out;			/* the lineage columns it adds to def's */
} MergePart;

/* Write amplification of one source relation into one table. */
typedef struct Fanout
{
	char	   *relation;		/* schema.table */
	char	   *table;
	long		max_rows;
	double		mean_rows;
} Fanout;

/* A workload statement no table can serve: left out of the plan. */
typedef struct LeftOut
{
	char	   *name;			/* the query's name */
	int			line;			/* its block's line in the workload */
	char	   *rule;			/* what refused it: "analysis", "MR2", ... */
	char	   *reason;			/* the error, without the query reference */
	char	   *hint;			/* what would serve it, or NULL */
	char	   *compose_why;	/* why no composition serves it, or NULL */
} LeftOut;

typedef struct Plan
{
	const BridgeOptions *opts;
	PGconn	   *conn;
	char	   *keyspace;
	char	   *foreign_schema;
	char	   *server;
	char	   *workload_path;
	char	   *ext_schema;		/* schema of cql_fdw (its bucket functions) */
	Catalog		cat;
	int			nqueries;
	int			qcap;			/* room in queries (parts of compositions) */
	Query	   *queries;
	int			ntables;
	Table	  **tables;
	int			nfan;
	Fanout	   *fan;
	int			nwarn;
	char	  **warnings;		/* plan-wide warnings (analysis warnings...) */
	int			nleft;
	LeftOut    *left;			/* statements left out, in workload order */
	/* write profile of the workload's header (writes.c) */
	int			nprofile;
	char	  **prof_rel;		/* schema.table, unquoted */
	double	   *prof_rate;		/* source rows written per second */
} Plan;

/* plan.c: the command (main.c dispatches) */
extern int	cmd_plan(const BridgeOptions *opts);

/* util.c */
extern void plan_table_warn(Table *t, const char *fmt,...) __attribute__((format(printf, 2, 3)));
extern void plan_warn(Plan *p, const char *fmt,...) __attribute__((format(printf, 2, 3)));
extern char **plan_split(const char *list, char sep, int *n);
extern char **plan_split_idents(const char *list, int *n);
extern char *plan_join_idents(char **names, int n);
extern bool plan_streq(const char *a, const char *b);
extern bool plan_is_kind(const ARow *r, const char *kind);
extern const ARow *plan_find_row(const Query *q, const char *kind, int level, int ord);
extern int	plan_add_column(Table *t, const char *name);
extern int	plan_find_column(Table *t, const char *name);
extern char *plan_plural(const char *name);
extern void plan_parse_key(const char *text, int *n, char ***cols, int *npk);
extern char *plan_qi(const char *ident);
extern int	plan_nworkload(const Plan *p);
extern char *plan_serving_text(const Query *q);
extern char *plan_key_text(const Table *t);
extern long plan_lval(PGresult *res, int r, int c);

/* workload.c */
extern void plan_read_catalog(Plan *p);
extern void plan_read_workload(Plan *p);
extern void plan_analyze(Plan *p, Query *q);
extern CatRel *plan_catalog_rel(Plan *p, const char *name);
extern const char *plan_query_ref(const Query *q);

/* typemap.c */
extern void plan_types_init(PGconn *conn);
extern const PgTypeMap *plan_type_map(const char *pgtype, const char **why);
extern char *plan_store_expr(StoreKind store, const char *ref, bool same_type);

/* target.c */
extern char *plan_param_cast(const char *declared, const Column *c, bool array);
extern char *plan_column_ref(const char *alias, const Column *c);
extern bool plan_stored_converted(const Column *c);
extern void plan_append_where(StrBuf *sb, const Query *q, const Table *t, const int *pmap);
extern void plan_append_limit(StrBuf *sb, const Query *q);
extern char *plan_source_sql(const Query *q, const Table *t);
extern char *plan_target_sql(const Query *q, const Table *t, const char *ftable);

/* serve.c */
extern void plan_serve(Plan *p);

/* compose.c */
extern bool plan_compose_candidate(const Query *q);
extern void plan_compose(Plan *p, Query *q);
extern void plan_compose_params(Query *q);
extern char *plan_compose_target(const Query *q, const char *drive_ft, const char *lookup_ft);
extern char *plan_compose_source(const Query *q);
extern long plan_compose_bound(const Query *q);

/* types.c */
extern const char *plan_pg_to_cql(const char *pgtype, const char **fdwtype);
extern const char *plan_require_cql(const Query *q, const char *what, const char *pgtype, const char **fdw);
extern bool plan_is_address_part(const char *name, int *idx);
extern void plan_build_columns(Query *q, Table *t);
extern void plan_set_mapping(Column *col, const PgTypeMap *m);

/* merge.c */
extern char *plan_shape_select(const Table *t);
extern bool plan_merge(Plan *p, Query *q, Table *t);
extern const ARow **plan_table_relations(const Table *t, int *n);
extern int	plan_writes_saved(const Table *t, char **text);

/* rules.c */
extern void plan_derive(Plan *p, Query *q);

/* partition.c */
extern double plan_partition_values(const Table *t, double nr);
extern double plan_partition_bytes(const Table *t, double nr);
extern char *plan_key_columns(const Table *t, const char *prefix, bool with_clustering);

/* buckets.c */
extern void plan_choose_bucket(Plan *p, Table *t);
extern char *plan_bucket_text(const Table *t);
extern const char *plan_ext_schema(Plan *p);

/* emit.c */
extern char *plan_emit_schema(Plan *p);
extern char *plan_emit_foreign(Plan *p);
extern char *plan_emit_load(Plan *p);
extern char *plan_emit_verify(Plan *p);
extern char *plan_cqi(const char *ident);
extern char *plan_affected_sql(Plan *p, Table *t, const ARow *rel, bool fanout);

/* edges.c */
extern void plan_check_edges(Plan *p, Table *t);

/* sizing.c */
extern void plan_measure(Plan *p);

/* writes.c */
extern void plan_read_write_profile(Plan *p, const char *path, const char *header);
extern void plan_write_profile_text(StrBuf *sb, const Plan *p, bool md);
extern double plan_table_writes(const Plan *p, const Table *t);

/* report.c */
extern char *plan_json(const Plan *p);
extern char *plan_model_txt(Plan *p);
extern char *plan_report_md(Plan *p);
extern const char *plan_column_marker(const Column *c);

/* diagram.c */
extern char *plan_html_escape(const char *s);
extern char *plan_logical_dot(Plan *p);
extern char *plan_physical_dot(Plan *p);

/* render.c */
extern char *plan_render(Plan *p, const char *logical_dot, const char *physical_dot,
						 char **logical_svg, char **physical_svg);

/* prove.c */
extern char *plan_prove(PGconn *conn, const char *tmp);

#endif							/* CQLBRIDGE_PLAN_H */

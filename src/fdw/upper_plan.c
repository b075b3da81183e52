/*-------------------------------------------------------------------------
 *
 * upper_plan.c
 *		Aggregate pushdown, planning: count, min, max and sum computed by
 *		Cassandra (the rows of the plan: upper_rows.c).
 *
 * Only where Cassandra computes exactly what PostgreSQL would, with every
 * restriction answered remotely: no ALLOW FILTERING, no index, no local
 * filter, no IN on the partition key.  Two shapes qualify:
 *
 *	- one partition (every partition-key column bound by equality): the
 *	  aggregates below, and GROUP BY a clustering prefix;
 *	- the whole table (a token range scan), for counts only and without
 *	  GROUP BY: one count(*) / count(col) per token range, the ranges
 *	  counted concurrently (scan_ranges.c) and summed by upper_rows.c, so
 *	  that each count finishes within the request timeout.
 *
 * Within a partition:
 *
 *	count(*), count(col)	Cassandra's count(col) counts non-null values.
 *	min(col), max(col)		for integer columns, timestamp and date, and
 *							text only under the "C" (or "POSIX") collation
 *							in a UTF-8 database: Cassandra compares the
 *							UTF-8 bytes.  Not for float/double (-0.0 and
 *							NaN), decimal, uuid and the rest.
 *	sum(col)				of integer columns, as sum(CAST(col AS varint)):
 *							CQL's sum(int) returns an int and wraps around.
 *							The varint is converted to bigint (sum of
 *							smallint and int: "bigint out of range" as in
 *							PostgreSQL) or numeric (sum of bigint and
 *							varint).  CQL's sum of no value is 0 where
 *							PostgreSQL's is NULL, so count(col) is fetched
 *							alongside and a sum of no value made NULL.
 *
 * avg is never pushed: CQL's avg of integers divides in integers, and of
 * floating-point values it may round differently.  DISTINCT, FILTER,
 * ORDER BY within an aggregate, HAVING and grouping sets stay local.
 *
 * GROUP BY clustering columns is pushed when the grouped columns, with the
 * clustering columns bound by equality, form a prefix of the clustering
 * key and their equality is exact (integers, text with a deterministic
 * collation, timestamp, date, uuid): CQL groups by the partition key and a
 * clustering prefix, which is then the same grouping.
 *
 * The plan is a ForeignScan with scanrelid 0 whose fdw_scan_tlist holds
 * the grouping columns and the aggregates; the scan machinery of scan.c
 * runs the statement, and upper_rows.c converts its rows into that tuple.
 *
 * IDENTIFICATION
 *		src/fdw/upper_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "compat.h"
#include "deparse.h"
#include "planner.h"
#include "scan_int.h"

/*
 * Cost of a pushed aggregate: one request, a cheap step per row aggregated
 * remotely, the transfer of the groups.  The request is costed below the
 * 25 of a partition read (planner.c) as its answer is only the groups: with
 * the few rows of a small partition the two plans would otherwise cost
 * the same, and the local one win on its sort order.
 */
#define CQL_UPPER_REQUEST_COST	20.0
#define CQL_UPPER_TUPLE_COST	0.05

/*
 * A count over the whole table: one count per token range, the ranges
 * counted concurrently and summed here.  Costed like the start of a token
 * scan (planner.c), without the transfer of the rows.
 */
#define CQL_UPPER_RANGES_COST	10000.0

/* planner state of a grouped relation whose aggregates Cassandra computes */
typedef struct CqlUpperRelInfo
{
	RelOptInfo *input_rel;		/* the foreign table */
	List	   *scan_tlist;		/* grouping columns and aggregates */
	bool		grouped;		/* GROUP BY */
} CqlUpperRelInfo;

/*
 * cql_type_is
 *		Is the column's CQL type one of the NULL-terminated names?
 */
static bool
cql_type_is(const CqlFdwColumn *col, const char *const *names)
{
	if (col->cql_type == NULL)
		return false;
	for (int i = 0; names[i]; i++)
		if (pg_strcasecmp(col->cql_type, names[i]) == 0)
			return true;
	return false;
}

static const char *const cql_integer_types[] =
{"tinyint", "smallint", "int", "bigint", "varint", NULL};
static const char *const cql_text_types[] = {"text", "varchar", "ascii", NULL};
static const char *const cql_scalar_types[] =
{"ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double",
	"duration", "float", "inet", "int", "smallint", "text", "time", "timestamp",
"timeuuid", "tinyint", "uuid", "varchar", "varint", NULL};

/* A PostgreSQL integer type (numeric: a CQL varint) */
static bool
pg_integer_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID ||
		typid == NUMERICOID;
}

/*
 * upper_column
 *		The column of our foreign table that expr is (under relabelings),
 *		or NULL when it is anything else or a column Cassandra cannot
 *		aggregate as such (a write-time column, a masked one, one of unknown
 *		CQL type).
 */
static const CqlFdwColumn *
upper_column(Expr *expr, Index relid, const CqlFdwTable *t, AttrNumber *attnum)
{
	Var		   *var;
	const CqlFdwColumn *col;

	while (expr && IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (expr == NULL || !IsA(expr, Var))
		return NULL;
	var = (Var *) expr;
	if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
		var->varattno > t->natts)
		return NULL;
	col = &t->cols[var->varattno - 1];
	if (col->remote_name == NULL || col->meta != CQLMETA_NONE ||
		col->masked != NULL || col->cql_type == NULL)
		return NULL;
	*attnum = var->varattno;
	return col;
}

/*
 * minmax_ok
 *		Does Cassandra order the column's values as PostgreSQL orders them
 *		under the aggregate's collation?
 */
static bool
minmax_ok(const CqlFdwColumn *col, Oid inputcollid)
{
	static const char *const ts[] = {"timestamp", NULL};
	static const char *const date[] = {"date", NULL};

	if (cql_type_is(col, cql_integer_types))
		return pg_integer_type(col->pgtype);
	if (cql_type_is(col, ts))
		return col->pgtype == TIMESTAMPTZOID || col->pgtype == TIMESTAMPOID;
	if (cql_type_is(col, date))
		return col->pgtype == DATEOID;
	if (cql_type_is(col, cql_text_types))
		return (col->pgtype == TEXTOID || col->pgtype == VARCHAROID) &&
			(inputcollid == C_COLLATION_OID ||
			 inputcollid == CQLFDW_POSIX_COLLATION_OID) &&
			GetDatabaseEncoding() == PG_UTF8;
	return false;
}

/*
 * aggref_pushable
 *		Can Cassandra compute this aggregate over the partition exactly?
 */
static bool
aggref_pushable(Aggref *agg, Index relid, const CqlFdwTable *t)
{
	char	   *name;
	const CqlFdwColumn *col;
	AttrNumber	a;

	if (agg->aggdistinct != NIL || agg->aggorder != NIL || agg->aggfilter ||
		agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		agg->aggsplit != AGGSPLIT_SIMPLE || agg->aggvariadic ||
		agg->aggdirectargs != NIL)
		return false;
	if (get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(agg->aggfnoid);
	if (name == NULL)
		return false;
	if (strcmp(name, "count") == 0 && agg->aggstar)
		return agg->args == NIL;
	if (list_length(agg->args) != 1)
		return false;
	col = upper_column(((TargetEntry *) linitial(agg->args))->expr, relid, t, &a);
	if (col == NULL)
		return false;
	if (strcmp(name, "count") == 0)
		return cql_type_is(col, cql_scalar_types);
	if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
		return minmax_ok(col, agg->inputcollid);
	if (strcmp(name, "sum") == 0)
		return cql_type_is(col, cql_integer_types) && pg_integer_type(col->pgtype) &&
			(agg->aggtype == INT8OID || agg->aggtype == NUMERICOID);
	return false;
}

/*
 * group_column_ok
 *		May the rows be grouped by this column remotely: a key column whose
 *		CQL equality is PostgreSQL's?
 */
static bool
group_column_ok(const CqlFdwColumn *col, Oid collid)
{
	static const char *const exact[] = {"timestamp", "date", "uuid", "timeuuid", NULL};

	if (col->kind != CQLCOL_PARTITION_KEY && col->kind != CQLCOL_CLUSTERING)
		return false;
	if (cql_type_is(col, cql_integer_types))
		return pg_integer_type(col->pgtype);
	if (cql_type_is(col, cql_text_types))
		return (col->pgtype == TEXTOID || col->pgtype == VARCHAROID) &&
			(!OidIsValid(collid) || get_collation_isdeterministic(collid));
	if (cql_type_is(col, exact))
		return col->pgtype == TIMESTAMPTZOID || col->pgtype == TIMESTAMPOID ||
			col->pgtype == DATEOID || col->pgtype == UUIDOID;
	return false;
}

/*
 * grouping_pushable
 *		Is grouping by these columns (attnums) CQL's grouping by the
 *		partition key and a clustering prefix?  Every clustering column up
 *		to the last grouped one is grouped or bound by equality; the rows
 *		arrive in clustering order (no IN on a clustering column).
 */
static bool
grouping_pushable(const CqlFdwTable *t, const CqlScanShape *shape,
				  Bitmapset *grouped)
{
	int			last = -1;

	if (shape->ck_has_in)
		return false;
	for (int k = 0; k < t->nck; k++)
		if (bms_is_member(t->ck[k], grouped))
			last = k;
	for (int k = 0; k <= last; k++)
		if (!bms_is_member(t->ck[k], grouped) && k >= shape->ck_eq_prefix)
			return false;
	return true;
}

/*
 * build_scan_tlist
 *		The target list the scan returns (grouping columns and aggregates),
 *		or NIL when some part of the grouping target cannot be computed
 *		from what Cassandra returns.
 */
static List *
build_scan_tlist(PlannerInfo *root, RelOptInfo *input_rel, const CqlFdwTable *t,
				 const CqlScanShape *shape, PathTarget *target)
{
	Query	   *parse = root->parse;
	List	   *tlist = NIL;
	Bitmapset  *grouped = NULL;
	ListCell   *lc;
	int			i = 0;

	/* the grouping columns first: every other Var must be one of them */
	foreach(lc, target->exprs)
	{
		Expr	   *expr = (Expr *) lfirst(lc);
		Index		sgref = get_pathtarget_sortgroupref(target, i++);
		const CqlFdwColumn *col;
		AttrNumber	a;

		if (sgref == 0 || !get_sortgroupref_clause_noerr(sgref, parse->groupClause))
			continue;
		col = upper_column(expr, input_rel->relid, t, &a);
		if (col == NULL || !IsA(expr, Var) ||
			!group_column_ok(col, exprCollation((Node *) expr)))
			return NIL;
		grouped = bms_add_member(grouped, a);
		tlist = add_to_flat_tlist(tlist, list_make1(expr));
	}
	if (parse->groupClause != NIL &&
		(bms_is_empty(grouped) || !grouping_pushable(t, shape, grouped)))
		return NIL;

	/* then the aggregates of the other expressions */
	i = 0;
	foreach(lc, target->exprs)
	{
		Expr	   *expr = (Expr *) lfirst(lc);
		Index		sgref = get_pathtarget_sortgroupref(target, i++);
		List	   *parts;
		ListCell   *lp;

		if (sgref != 0 && get_sortgroupref_clause_noerr(sgref, parse->groupClause))
			continue;
		/* a set-returning function cannot be the scan's output */
		if (expression_returns_set((Node *) expr))
			return NIL;
		parts = pull_var_clause((Node *) expr,
								PVC_INCLUDE_AGGREGATES | PVC_INCLUDE_PLACEHOLDERS);
		foreach(lp, parts)
		{
			Node	   *part = (Node *) lfirst(lp);

			if (IsA(part, Var))
			{
				/* a grouping column within an expression: returned already */
				if (!tlist_member((Expr *) part, tlist))
					return NIL;
			}
			else if (IsA(part, Aggref))
			{
				if (!aggref_pushable((Aggref *) part, input_rel->relid, t))
					return NIL;
				tlist = add_to_flat_tlist(tlist, list_make1(part));
			}
			else
				return NIL;		/* a PlaceHolderVar */
		}
	}
	return tlist;
}

/*
 * only_counts
 *		Is every entry of the scan tlist a count (count(*) or count(col))?
 *		Only counts add up over token ranges as they are: a whole-table
 *		aggregate is pushed as one count per range only then.
 */
static bool
only_counts(List *tlist)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Aggref	   *agg;
		char	   *name;

		if (!IsA(tle->expr, Aggref))
			return false;
		agg = (Aggref *) tle->expr;
		name = get_func_name(agg->aggfnoid);
		if (name == NULL || strcmp(name, "count") != 0)
			return false;
	}
	return tlist != NIL;
}

/*
 * cqlGetForeignUpperPaths
 *		GetForeignUpperPaths callback: a path that has Cassandra compute the
 *		aggregates of a single-partition scan, or the counts of a whole
 *		table range by range (see the file header for what is pushed).
 *
 * It costs one request and a small step per row aggregated remotely, so it
 * wins over aggregating the transferred rows locally.
 */
void
cqlGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage,
						RelOptInfo *input_rel, RelOptInfo *output_rel,
						void *extra)
{
	Query	   *parse = root->parse;
	GroupPathExtraData *gextra = (GroupPathExtraData *) extra;
	const CqlFdwTable *t;
	const CqlFdwOptions *opts;
	const CqlScanShape *shape;
	PathTarget *target = root->upper_targets[UPPERREL_GROUP_AGG];
	CqlUpperRelInfo *ui;
	List	   *tlist;
	double		rows;
	Cost		startup,
				total;

	if (stage != UPPERREL_GROUP_AGG || output_rel->fdw_private != NULL)
		return;
	if (input_rel->reloptkind != RELOPT_BASEREL || input_rel->fdw_private == NULL ||
		!bms_is_empty(input_rel->lateral_relids))
		return;
	if (gextra == NULL || gextra->patype != PARTITIONWISE_AGGREGATE_NONE ||
		gextra->havingQual != NULL || root->hasHavingQual ||
		parse->groupingSets != NIL || !parse->hasAggs || target == NULL)
		return;

	cqlfdw_planned_rel(input_rel, &t, &opts, &shape);
	if (!opts->aggregate_pushdown)
		return;
	if ((shape->access != CQLACC_SINGLE_PARTITION &&
		 shape->access != CQLACC_TOKEN_SCAN) ||
		shape->local_conds != NIL ||
		shape->pk_has_in || shape->filtering || shape->uses_join || shape->index_conds > 0 ||
		shape->bucket_attnum != InvalidAttrNumber ||
		shape->ann_attnum != InvalidAttrNumber)
		return;
	/* the whole table: counts only, summed over the ranges */
	if (shape->access == CQLACC_TOKEN_SCAN &&
		(parse->groupClause != NIL || t->npk == 0))
		return;

	tlist = build_scan_tlist(root, input_rel, t, shape, target);
	if (tlist == NIL)
		return;
	if (shape->access == CQLACC_TOKEN_SCAN && !only_counts(tlist))
		return;

	ui = palloc0(sizeof(CqlUpperRelInfo));
	ui->input_rel = input_rel;
	ui->scan_tlist = tlist;
	ui->grouped = parse->groupClause != NIL;
	output_rel->fdw_private = ui;

	rows = 1;
	if (ui->grouped)
		rows = estimate_num_groups(root,
								   get_sortgrouplist_exprs(parse->groupClause,
														   parse->targetList),
								   input_rel->rows, NULL, NULL);
	startup = CQL_UPPER_REQUEST_COST + input_rel->rows * cpu_operator_cost;
	if (shape->access == CQLACC_TOKEN_SCAN)
		startup += CQL_UPPER_RANGES_COST;
	total = startup + rows * (CQL_UPPER_TUPLE_COST + cpu_tuple_cost);

	add_path(output_rel, (Path *)
			 cqlfdw_create_foreign_upper_path(root, output_rel, target, rows,
											  startup, total, NIL, NIL));
}

/*
 * cqlfdw_upper_plan
 *		GetForeignPlan of a pushed aggregate: the statement
 *		SELECT <grouping columns and aggregates> FROM ... WHERE ...
 *		[GROUP BY ...] with the WHERE clause and the binds of the foreign
 *		table's scan, and fdw_private in the layout of a scan
 *		(FdwScanPrivateIndex) plus FdwScanPrivateUpper.
 */
ForeignScan *
cqlfdw_upper_plan(PlannerInfo *root, RelOptInfo *upperrel,
				  ForeignPath *best_path, List *tlist)
{
	CqlUpperRelInfo *ui = (CqlUpperRelInfo *) upperrel->fdw_private;
	Index		relid = ui->input_rel->relid;
	const CqlFdwTable *t;
	const CqlFdwOptions *opts;
	const CqlScanShape *shape;
	List	   *fdw_exprs = NIL;
	List	   *binds;
	List	   *retrieved = NIL;
	List	   *kinds = NIL;
	List	   *upper;
	List	   *fdw_private = NIL;
	Bitmapset  *grouped = NULL;
	Oid			table_oid;
	StringInfoData buf;
	ListCell   *lc;
	bool		first = true;

	cqlfdw_planned_rel(ui->input_rel, &t, &opts, &shape);
	binds = cqlfdw_shape_binds(t, shape, &fdw_exprs);

	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT ");
	foreach(lc, ui->scan_tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		AttrNumber	a;
		const CqlFdwColumn *col;

		if (!first)
			appendStringInfoString(&buf, ", ");
		first = false;
		retrieved = lappend_int(retrieved, tle->resno);
		if (IsA(tle->expr, Var))
		{
			col = upper_column(tle->expr, relid, t, &a);
			cqlfdw_append_ident(&buf, col->remote_name);
			grouped = bms_add_member(grouped, a);
			kinds = lappend_int(kinds, CQLUP_VALUE);
		}
		else
		{
			Aggref	   *agg = castNode(Aggref, tle->expr);
			char	   *name = get_func_name(agg->aggfnoid);

			if (agg->aggstar)
			{
				appendStringInfoString(&buf, "count(*)");
				kinds = lappend_int(kinds, CQLUP_COUNT);
				continue;
			}
			col = upper_column(((TargetEntry *) linitial(agg->args))->expr,
							   relid, t, &a);
			appendStringInfo(&buf, "%s(", name);
			if (strcmp(name, "sum") == 0 && pg_strcasecmp(col->cql_type, "varint") != 0)
			{
				/* exact: CQL's sum of an int is an int that wraps around */
				appendStringInfoString(&buf, "CAST(");
				cqlfdw_append_ident(&buf, col->remote_name);
				appendStringInfoString(&buf, " AS varint)");
			}
			else
				cqlfdw_append_ident(&buf, col->remote_name);
			appendStringInfoChar(&buf, ')');
			if (strcmp(name, "sum") == 0)
			{
				/* how many values were summed: none makes the sum NULL */
				appendStringInfoString(&buf, ", count(");
				cqlfdw_append_ident(&buf, col->remote_name);
				appendStringInfoChar(&buf, ')');
				kinds = lappend_int(kinds, CQLUP_SUM);
				kinds = lappend_int(kinds, CQLUP_SUM_COUNT);
				retrieved = lappend_int(retrieved, 0);
			}
			else
				kinds = lappend_int(kinds, strcmp(name, "count") == 0
									? CQLUP_COUNT : CQLUP_VALUE);
		}
	}
	cqlfdw_append_from_where(&buf, t, shape);
	if (ui->grouped)
	{
		int			last = -1;

		/* the partition key, then the clustering prefix */
		appendStringInfoString(&buf, " GROUP BY ");
		for (int k = 0; k < t->npk; k++)
		{
			if (k > 0)
				appendStringInfoString(&buf, ", ");
			cqlfdw_append_ident(&buf, t->cols[t->pk[k] - 1].remote_name);
		}
		for (int k = 0; k < t->nck; k++)
			if (bms_is_member(t->ck[k], grouped))
				last = k;
		for (int k = 0; k <= last; k++)
		{
			appendStringInfoString(&buf, ", ");
			cqlfdw_append_ident(&buf, t->cols[t->ck[k] - 1].remote_name);
		}
	}

	table_oid = planner_rt_fetch(relid, root)->relid;
	upper = list_make5(makeInteger((int) table_oid), makeInteger(ui->grouped), kinds,
					   makeString(psprintf("Aggregate on (%s)",
										   quote_identifier(get_rel_name(table_oid)))),
					   makeInteger(shape->access == CQLACC_TOKEN_SCAN));

	/* in the order of FdwScanPrivateIndex */
	fdw_private = lappend(fdw_private, makeString(buf.data));
	fdw_private = lappend(fdw_private, retrieved);
	fdw_private = lappend(fdw_private, makeInteger(shape->access));
	fdw_private = lappend(fdw_private, binds);
	fdw_private = lappend(fdw_private, makeInteger(1));
	fdw_private = lappend(fdw_private, makeInteger(0));
	fdw_private = lappend(fdw_private, makeInteger(-1));
	fdw_private = lappend(fdw_private, makeInteger(0));
	fdw_private = lappend(fdw_private, NIL);
	fdw_private = lappend(fdw_private, makeString(pstrdup("")));
	fdw_private = lappend(fdw_private, makeString(pstrdup("")));
	fdw_private = lappend(fdw_private, makeString(pstrdup("")));
	fdw_private = lappend(fdw_private, upper);

	return make_foreignscan(tlist, NIL, 0, fdw_exprs, fdw_private,
							ui->scan_tlist, NIL, NULL);
}

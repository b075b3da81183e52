/*-------------------------------------------------------------------------
 *
 * target.c
 *	  The source and target statements of 004_verify.sql: the workload
 *	  query at the precision the table stores, and the same question asked
 *	  of the foreign table.
 *
 * The target statement reads the query's own columns of its table (a
 * merged table holds other queries' columns too) with the parameters where
 * the mapping put them: "=" and ranges, IN lists ("t.c = ANY($1)", "t.c IN
 * ($2, $3)": one partition per value, cql_fdw reads them concurrently) and
 * LIMIT.  An aggregate query asks its aggregates of the partition
 * ("SELECT count(*) AS n, sum(t.amount) AS total FROM ... WHERE t.k = $1
 * GROUP BY t.c"), which cql_fdw pushes down to Cassandra where Cassandra
 * computes what PostgreSQL would, and otherwise computes over the one
 * partition it reads.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/target.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/*
 * plan_param_cast
 *		"::type" when a parameter declared as declared (format_type's name),
 *		compared with column c, needs a cast to c's type (array: to c's
 *		type's array, for "= ANY"), "" when they agree.  The source query
 *		casts such a parameter (o.status = :'status'::shop.order_status with
 *		status declared text), so the target must too, or it does not
 *		prepare.  The column's type without its modifier: a numeric(8,2)
 *		cast would round the parameter.
 */
char *
plan_param_cast(const char *declared, const Column *c, bool array)
{
	size_t		n;
	size_t		dl;
	const char *close;

	if (declared == NULL || c->pg_type == NULL)
		return bridge_strdup("");
	n = strcspn(c->pg_type, "(");
	dl = strlen(declared);
	if (array && dl > 2 && strcmp(declared + dl - 2, "[]") == 0)
		dl -= 2;
	if (dl == n && strncmp(declared, c->pg_type, n) == 0 &&
		(!array || strlen(declared) == n + 2))
		return bridge_strdup("");
	close = c->pg_type[n] == '(' ? strchr(c->pg_type + n, ')') : NULL;
	/* "timestamp(3) with time zone": the words after the modifier */
	return bridge_printf("::%.*s%s%s", (int) n, c->pg_type, close ? close + 1 : "",
						 array ? "[]" : "");
}

/*
 * target_index
 *		The output of q named name (a row query's column of an aggregate
 *		query), -1 when none.
 */
static int
target_index(const Query *q, const char *name)
{
	for (int o = 0; o < q->ntargets; o++)
		if (strcmp(q->tnames[o], name) == 0)
			return o;
	return -1;
}

/*
 * plan_column_ref
 *		Column c of the foreign table aliased alias, cast back to the type
 *		the source query returns when its foreign table type differs
 *		(numeric(6,2) stored as numeric): "(t.c)::numeric(6,2)" or "t.c".
 */
char *
plan_column_ref(const char *alias, const Column *c)
{
	if (c->src_type && c->pg_type && strcmp(c->src_type, c->pg_type) != 0)
		return bridge_printf("(%s.%s)::%s", alias, plan_qi(c->name), c->src_type);
	return bridge_printf("%s.%s", alias, plan_qi(c->name));
}

/*
 * target_expr
 *		The expression of output o of q over the foreign table "t": the
 *		column, a part of the address UDT, a set sorted the way SQL sorts
 *		it, or the column cast back to the query's own type.
 */
static char *
target_expr(const Query *q, const Table *t, int o)
{
	const Column *c = &t->cols[q->tcol[o]];

	if (q->tfield[o] >= 0)
		return bridge_printf("(t.%s->>'%s')::%s", plan_qi(c->name), c->fields[q->tfield[o]],
							 c->field_types[q->tfield[o]]);

	/*
	 * Cassandra returns a set in byte order of its elements; the workload
	 * orders them by the database collation, as SQL does (array_agg(DISTINCT
	 * x ORDER BY x)).  Sort them the same way.
	 */
	if (strncmp(c->cql_type, "set<", 4) == 0)
		return bridge_printf("CASE WHEN t.%s IS NULL THEN NULL ELSE ARRAY(SELECT e FROM unnest(t.%s) e ORDER BY e) END",
							 plan_qi(c->name), plan_qi(c->name));
	return plan_column_ref("t", c);
}

/*
 * stored_output
 *		Whether output o (a plain or collection column, not a UDT part) is
 *		stored in a converted form of its own type (a timestamp at the
 *		millisecond, an empty array as NULL): the source statement then
 *		converts the query's answer the same way.
 */
static bool
stored_output(const Query *q, const Table *t, int o)
{
	if (o < 0 || q->tfield[o] >= 0)
		return false;
	return plan_stored_converted(&t->cols[q->tcol[o]]);
}

/*
 * plan_stored_converted
 *		Whether column c (a plain or collection column) holds its values in
 *		a converted form of their own type (a timestamp at the millisecond,
 *		an empty array as NULL), so that an answer read from the source is
 *		converted the same way before it is compared.
 */
bool
plan_stored_converted(const Column *c)
{
	return c->store != STORE_AS_IS &&
		(c->shape == SHAPE_PLAIN || c->shape == SHAPE_COLLECTION) &&
		strcmp(plan_store_expr(c->store, "x", true), "x") != 0;
}

/*
 * plan_source_sql
 *		The source statement of 004: the workload query, or, when an output
 *		is stored converted in its own type, its answers at the stored
 *		precision: "SELECT <stored values> FROM (<query>) s", the rows in
 *		the query's order.  verify then compares like with like.  Of an
 *		aggregate query, a GROUP BY column and min() and max() are
 *		converted (they are values of the column); count, sum and avg are
 *		not.
 */
char *
plan_source_sql(const Query *q, const Table *t)
{
	StrBuf		sb;
	int			n = q->nresults > 0 ? q->nresults : q->nvisible;
	bool		any = false;
	int		   *src = bridge_malloc(sizeof(int) * (n + 1));

	for (int i = 0; i < n; i++)
	{
		if (q->nresults == 0)
			src[i] = i;
		else if (q->results[i].star || !(plan_streq(q->results[i].func, "column") ||
										 plan_streq(q->results[i].func, "min") ||
										 plan_streq(q->results[i].func, "max")))
			src[i] = -1;
		else
			src[i] = target_index(q, q->results[i].under);
		if (stored_output(q, t, src[i]))
			any = true;
	}
	if (!any)
	{
		free(src);
		return bridge_strdup(q->sql);
	}
	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int i = 0; i < n; i++)
	{
		const char *name = q->nresults > 0 ? q->results[i].name : q->tnames[i];
		char	   *ref = bridge_printf("s.%s", plan_qi(name));

		if (stored_output(q, t, src[i]))
			sb_appendf(&sb, "%s%s AS %s", i ? ", " : "",
					   plan_store_expr(t->cols[q->tcol[src[i]]].store, ref, true), plan_qi(name));
		else
			sb_appendf(&sb, "%s%s", i ? ", " : "", ref);
	}
	sb_appendf(&sb, " FROM (%s) s", q->sql);
	free(src);
	return sb.data;
}

/*
 * plan_append_where
 *		The target statement's WHERE: every parameter where the mapping put
 *		it ("t.c = $1", "t.c >= $2", an IN list "t.c = ANY($3)" or "t.c IN
 *		($4, $5)"), cast as the source casts it; a LIMIT parameter is not a
 *		condition.  pmap, when given, numbers q's parameter k+1 as $pmap[k]
 *		(a part of a composed query, in the statement's numbers).
 */
void
plan_append_where(StrBuf *sb, const Query *q, const Table *t, const int *pmap)
{
	bool		first = true;

	for (int k = 0; k < q->nparams; k++)
	{
		const Column *c;
		const char *op = q->puse[k].op;
		char	   *cast;

		if (q->puse[k].col < 0)
			continue;
		c = &t->cols[q->puse[k].col];
		sb_append(sb, first ? "\nWHERE " : " AND ");
		first = false;
		if (strcmp(op, "IN") == 0)
		{
			bool		done = false;

			/* one list per column, at its first parameter */
			for (int j = 0; j < k; j++)
				if (q->puse[j].col == q->puse[k].col && plan_streq(q->puse[j].op, "IN"))
					done = true;
			if (done)
			{
				/* undo the " AND " of a list written already */
				sb->len -= 5;
				sb->data[sb->len] = '\0';
				continue;
			}
			sb_appendf(sb, "t.%s IN (", plan_qi(c->name));
			for (int j = k; j < q->nparams; j++)
				if (q->puse[j].col == q->puse[k].col && plan_streq(q->puse[j].op, "IN"))
				{
					cast = plan_param_cast(q->pfmt ? q->pfmt[j] : NULL, c, false);
					sb_appendf(sb, "%s$%d%s", j > k ? ", " : "", pmap ? pmap[j] : j + 1, cast);
					free(cast);
				}
			sb_append(sb, ")");
			continue;
		}
		if (strcmp(op, "= ANY") == 0)
		{
			cast = plan_param_cast(q->pfmt ? q->pfmt[k] : NULL, c, true);
			sb_appendf(sb, "t.%s = ANY($%d%s)", plan_qi(c->name), pmap ? pmap[k] : k + 1, cast);
			free(cast);
			continue;
		}
		cast = plan_param_cast(q->pfmt ? q->pfmt[k] : NULL, c, false);
		sb_appendf(sb, "t.%s %s $%d%s", plan_qi(c->name), op, pmap ? pmap[k] : k + 1, cast);
		free(cast);
	}
	/* a merged table's rows that the query's inner join drops (merge.c) */
	if (q->marker)
		sb_appendf(sb, "%st.%s IS NOT NULL", first ? "\nWHERE " : " AND ", plan_qi(q->marker));
}

/* The LIMIT of q's target statement: its parameter or constant. */
void
plan_append_limit(StrBuf *sb, const Query *q)
{
	for (int i = 0; i < q->nrows; i++)
		if (strcmp(q->rows[i].kind, "limit") == 0 && q->rows[i].level == 0)
		{
			if (q->rows[i].param > 0)
				sb_appendf(sb, "\nLIMIT $%d", q->rows[i].param);
			else if (q->rows[i].detail)
				sb_appendf(sb, "\nLIMIT %s", q->rows[i].detail);
		}
}

/*
 * aggregate_target
 *		The target statement of an aggregate query: its aggregates of the
 *		table's columns over the partitions the parameters name, grouped by
 *		the GROUP BY columns (clustering columns: Cassandra can group the
 *		partition by them), in the query's ORDER BY of its outputs.
 */
static char *
aggregate_target(const Query *q, const Table *t, const char *ftable)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int i = 0; i < q->nresults; i++)
	{
		const QResult *r = &q->results[i];
		int			o = r->star ? -1 : target_index(q, r->under);

		if (!r->star && o < 0)
			bridge_fatal("%s: output %s aggregates %s, which is no column of the row query",
						 plan_query_ref(q), r->name, r->under);
		if (i)
			sb_append(&sb, ", ");
		if (r->star)
			sb_appendf(&sb, "count(*)");
		else if (plan_streq(r->func, "column"))
			sb_append(&sb, target_expr(q, t, o));
		else
			sb_appendf(&sb, "%s(%s%s)", r->func, r->distinct ? "DISTINCT " : "", target_expr(q, t, o));
		sb_appendf(&sb, " AS %s", plan_qi(r->name));
	}
	sb_appendf(&sb, "\nFROM %s t", ftable);
	plan_append_where(&sb, q, t, NULL);
	for (int g = 0; g < q->ngroups; g++)
	{
		int			o = target_index(q, q->groups[g]);

		if (o < 0)
			bridge_fatal("%s: GROUP BY %s is no column of the row query", plan_query_ref(q), q->groups[g]);
		sb_appendf(&sb, "%s%s", g ? ", " : "\nGROUP BY ", target_expr(q, t, o));
	}
	for (int i = 0; i < q->nrorder; i++)
		sb_appendf(&sb, "%s%s", i ? ", " : "\nORDER BY ", q->rorder[i]);
	plan_append_limit(&sb, q);
	return sb.data;
}

/*
 * plan_target_sql
 *		The target statement of query q over its table t, whose foreign
 *		table is ftable: the output columns under their names, UDT parts
 *		expanded, the parameters where the mapping put them, the clustering
 *		order when the query is ordered, its LIMIT.  No trailing ";".
 */
char *
plan_target_sql(const Query *q, const Table *t, const char *ftable)
{
	StrBuf		sb;

	if (q->nresults > 0)
		return aggregate_target(q, t, ftable);
	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int o = 0; o < q->nvisible; o++)
	{
		char	   *e = target_expr(q, t, o);
		char	   *plain = bridge_printf("t.%s", plan_qi(q->tnames[o]));

		if (o)
			sb_append(&sb, ", ");
		if (strcmp(e, plain) == 0)
			sb_append(&sb, e);
		else
			sb_appendf(&sb, "%s AS %s", e, plan_qi(q->tnames[o]));
		free(plain);
	}
	sb_appendf(&sb, "\nFROM %s t", ftable);
	plan_append_where(&sb, q, t, NULL);
	if (q->ordered && t->nck > 0)
	{
		sb_append(&sb, "\nORDER BY ");
		for (int i = t->npk; i < t->npk + t->nck; i++)
			sb_appendf(&sb, "%st.%s%s", i > t->npk ? ", " : "", plan_qi(t->cols[i].name),
					   t->cols[i].desc ? " DESC" : "");
	}
	plan_append_limit(&sb, q);
	return sb.data;
}

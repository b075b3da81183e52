/*-------------------------------------------------------------------------
 *
 * edges.c
 *	  The values of every column counted on the data before anything is
 *	  written: timestamps with sub-millisecond digits (stored truncated:
 *	  model.txt says how many), and the edge values Cassandra cannot hold
 *	  (infinite timestamps and dates, numeric NaN and +-Infinity, inet
 *	  with a netmask, NULL elements and several dimensions of an array,
 *	  intervals whose parts differ in sign, time 24:00:00); of an array
 *	  the rows (arrays) with such an element are counted.  An edge value
 *	  present in the data stops the plan with the column named and a hint,
 *	  so a load never fails halfway through on one (docs/cqlbridge.md,
 *	  "Types").
 *
 * The counts are taken over the query's lineage (every row of the
 * query, before the view stores it), one scan per table.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/edges.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* One edge value: the condition on a value "%1$s" and what to say. */
typedef struct Edge
{
	int			check;
	const char *cond;			/* SQL on the value x (written as %s) */
	const char *what;			/* the values, for the message */
	const char *hint;
} Edge;

static const Edge edges[] = {
	{CHECK_INFINITE, "NOT isfinite(%s)", "infinite (infinity or -infinity)",
	"Cassandra's timestamp and date have no infinity: set those values to NULL or to a real date in the source, or filter them in the query (WHERE isfinite(col))."},
	{CHECK_NOT_FINITE, "(%s)::text IN ('NaN', 'Infinity', '-Infinity')", "NaN or +-Infinity",
	"Cassandra's decimal holds no NaN or Infinity: cast the column to double precision in the query (CQL double keeps them), or set them to NULL in the source."},
	{CHECK_NETMASK, "masklen(%s) <> CASE family(%s) WHEN 4 THEN 32 ELSE 128 END", "networks (an address with a netmask)",
	"CQL inet holds one address: declare the column cidr (stored as text), or cast it to text in the query."},
	{CHECK_DURATION, "((extract(year FROM %s) * 12 + extract(month FROM %s)) > 0 OR extract(day FROM %s) > 0 OR extract(epoch FROM %s - date_trunc('day', %s)) > 0)"
		" AND ((extract(year FROM %s) * 12 + extract(month FROM %s)) < 0 OR extract(day FROM %s) < 0 OR extract(epoch FROM %s - date_trunc('day', %s)) < 0)",
		"intervals whose months, days and time have different signs",
	"Cassandra's duration needs its months, days and nanoseconds of one sign: normalize them in the source (justify_interval), or cast the column to text in the query."},
	{CHECK_TIME_24, "%s = '24:00:00'::time", "time 24:00:00",
	"CQL time ends at 23:59:59.999999999: store 00:00:00 of the next day, or cast the column to text in the query."},
};

/*
 * cond_of
 *		The SQL condition of edge e on the value ref (every %s is ref).
 */
static char *
cond_of(const Edge *e, const char *ref)
{
	StrBuf		sb;

	sb_init(&sb);
	for (const char *s = e->cond; *s; s++)
	{
		if (s[0] == '%' && s[1] == 's')
		{
			sb_append(&sb, ref);
			s++;
		}
		else
			sb_appendc(&sb, *s);
	}
	return sb.data;
}

/*
 * is_array
 *		Whether the column's value in the lineage is an array whose
 *		elements carry the checks (an array column or a collection).
 */
static bool
is_array(const Column *c)
{
	return c->shape == SHAPE_COLLECTION || c->store == STORE_ARRAY || c->store == STORE_ARRAY_MS ||
		c->store == STORE_SET_MS;
}

/*
 * some_element
 *		"the array ref has an element e for which cond holds".
 */
static char *
some_element(const char *ref, const char *cond_on_e)
{
	return bridge_printf("EXISTS (SELECT 1 FROM unnest(%s) u(e) WHERE %s)", ref, cond_on_e);
}

/*
 * plan_check_edges
 *		Count, over the lineage of t's defining query, every column's
 *		non-NULL values, its values with sub-millisecond digits and its
 *		edge values; fatal on the first column that has edge values.
 */
void
plan_check_edges(Plan *p, Table *t)
{
	StrBuf		sb;
	int			nexpr = 0;
	int		   *col_of;
	int		   *edge_of;
	PGresult   *res;

	col_of = bridge_malloc(sizeof(int) * (t->ncols * 16 + 1));
	edge_of = bridge_malloc(sizeof(int) * (t->ncols * 16 + 1));
	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int i = 0; i < t->ncols; i++)
	{
		Column	   *c = &t->cols[i];
		char	   *ref;
		bool		arr = is_array(c);

		if (c->checks == 0 || c->bucket_spec || c->shape == SHAPE_UDT)
			continue;
		ref = bridge_strdup(c->expr);
		/* the non-NULL values (of an array column: the arrays) */
		sb_appendf(&sb, "%s%s", nexpr ? ", " : "",
				   bridge_printf("count(%s)", ref));
		col_of[nexpr] = i;
		edge_of[nexpr++] = -1;
		if (c->checks & CHECK_SUBMS)
		{
			const char *cond = "u.e <> date_trunc('milliseconds', u.e)";

			sb_appendf(&sb, ", count(*) FILTER (WHERE %s)",
					   arr ? some_element(ref, cond)
					   : bridge_printf("%s <> date_trunc('milliseconds', %s)", ref, ref));
			col_of[nexpr] = i;
			edge_of[nexpr++] = -2;
		}
		if (arr && (c->checks & CHECK_NULL_ELEMENT))
		{
			sb_appendf(&sb, ", count(*) FILTER (WHERE array_position(%s, NULL) IS NOT NULL)", ref);
			col_of[nexpr] = i;
			edge_of[nexpr++] = -3;
		}
		if (arr && (c->checks & CHECK_MULTIDIM))
		{
			sb_appendf(&sb, ", count(*) FILTER (WHERE array_ndims(%s) > 1)", ref);
			col_of[nexpr] = i;
			edge_of[nexpr++] = -4;
		}
		for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
		{
			if (!(c->checks & edges[e].check))
				continue;
			sb_appendf(&sb, ", count(*) FILTER (WHERE %s)",
					   arr ? some_element(ref, cond_of(&edges[e], "u.e")) : cond_of(&edges[e], ref));
			col_of[nexpr] = i;
			edge_of[nexpr++] = (int) e;
		}
	}
	if (nexpr == 0)
	{
		sb_free(&sb);
		free(col_of);
		free(edge_of);
		return;
	}
	sb_appendf(&sb, " FROM (%s) q", t->source);
	res = bridge_exec(p->conn, bridge_printf("counting the edge values of %s", t->name), sb.data, 0, NULL);
	for (int k = 0; k < nexpr; k++)
	{
		Column	   *c = &t->cols[col_of[k]];
		long		n = plan_lval(res, 0, k);
		const char *what = NULL;
		const char *hint = NULL;

		switch (edge_of[k])
		{
			case -1:
				c->nvalues = n;
				continue;
			case -2:
				c->nsubms = n;
				if (n > 0 && is_array(c) && c->store != STORE_ARRAY_MS && c->store != STORE_SET_MS)
				{
					what = "values (arrays) with sub-millisecond digits";
					hint = "Aggregate date_trunc('milliseconds', col) in the query's array_agg, so the set or list holds what Cassandra stores.";
				}
				break;
			case -3:
				what = "arrays with a NULL element";
				hint = "Cassandra collections cannot hold NULL: remove them in the source (array_remove(col, NULL)), or filter them in the query (WHERE x IS NOT NULL in an aggregate).";
				break;
			case -4:
				what = "arrays of more than one dimension";
				hint = "A CQL list has one dimension: store one array per row, or cast the column to text in the query.";
				break;
			default:
				what = edges[edge_of[k]].what;
				hint = edges[edge_of[k]].hint;
				break;
		}
		if (what && n > 0)
			bridge_fatal_hint(hint, "%s: column \"%s\" (%s, %s) has %ld %s%s, which Cassandra cannot store",
							  plan_query_ref(t->def), c->name, c->src_type ? c->src_type : c->cql_type,
							  c->cql_type, n, what, is_array(c) && edge_of[k] >= 0 ? " among its elements" : "");
	}
	PQclear(res);
	sb_free(&sb);
	free(col_of);
	free(edge_of);
}

/*-------------------------------------------------------------------------
 *
 * sizing.c
 *	  Measurements of the planned tables on the current relational data:
 *	  rows and partitions, value sizes, the documented partition-size
 *	  formulas, the MR5 check of the derived and the published keys,
 *	  write amplification per source row; a wide table gets its bucket
 *	  (buckets.c) and is measured again with it.
 *
 * Every measurement is SQL over the table's shaped query (the rows the
 * load will write), so what is measured is exactly what is loaded.
 * Results are rounded in SQL (round(..., 2)) and printed with fixed
 * precision, so the same data always gives the same text.
 *
 * Formulas (Cassandra documentation, "Evaluating and refining"):
 *	  Nv = Nr * (Nc - Npk - Ns) + Ns
 *	  St = sum(partition key sizes) + sum(static sizes)
 *		   + Nr * (sum(regular sizes) + sum(clustering sizes)) + Nv * 8
 *	  total = St(mean Nr) * partitions * replication factor
 * Value sizes: fixed-width CQL types by their width, text and blob by
 * their bytes, decimal, collections and UDTs by the length of their text
 * form (an estimate).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/sizing.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* rows whose value sizes are averaged (see plan_measure) */
#define VALUE_SIZE_ROWS 100000

/*
 * run
 *		Run a measurement's SQL on the plan's connection; fatal on error.
 */
static PGresult *
run(Plan *p, const char *what, const char *sql)
{
	return bridge_exec(p->conn, what, sql, 0, NULL);
}

/*
 * dval
 *		Field (r, c) of a measurement's result as a double, 0 for NULL.
 */
static double
dval(PGresult *res, int r, int c)
{
	return PQgetisnull(res, r, c) ? 0.0 : atof(PQgetvalue(res, r, c));
}

/*
 * size_expr
 *		The SQL expression of the stored size of col's value ref: the width
 *		of a fixed-width CQL type, the bytes of text and blob, the length of
 *		the text form of the others (an estimate).
 */
static const char *
size_expr(const Column *col, const char *ref)
{
	static const struct
	{
		const char *cql;
		int			bytes;
	}			fixed[] = {
		{"smallint", 2}, {"int", 4}, {"bigint", 8}, {"boolean", 1}, {"date", 4},
		{"timestamp", 8}, {"uuid", 16}, {"float", 4}, {"double", 8}, {"time", 8},
		{"inet", 4},
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strcmp(col->cql_type, fixed[i].cql) == 0)
			return bridge_printf("CASE WHEN %s IS NULL THEN 0 ELSE %d END", ref, fixed[i].bytes);
	if (strcmp(col->cql_type, "blob") == 0)
		return bridge_printf("coalesce(octet_length(%s), 0)", ref);
	/* text, and what is stored as text (enum labels, citext, jsonb, ...) */
	if (strcmp(col->cql_type, "text") == 0)
		return bridge_printf("coalesce(octet_length((%s)::text), 0)", ref);
	return bridge_printf("coalesce(octet_length((%s)::text), 0)", ref);
}

/*
 * key_list
 *		The key columns of t over the shaped query's alias "v.".
 */
static char *
key_list(const Table *t, bool with_clustering)
{
	return plan_key_columns(t, "v.", with_clustering);
}

/*
 * add_fanout
 *		Record the write amplification of table for one source relation: the
 *		most and the mean target rows per source row.
 */
static void
add_fanout(Plan *p, const char *relation, const char *table, long mx, double mean)
{
	Fanout	   *f;

	p->fan = bridge_realloc(p->fan, sizeof(Fanout) * (p->nfan + 1));
	if (!p->fan)
		bridge_fatal("out of memory");
	f = &p->fan[p->nfan++];
	f->relation = bridge_strdup(relation);
	f->table = bridge_strdup(table);
	f->max_rows = mx;
	f->mean_rows = mean;
}

/* write amplification: target rows per source row, for every relation */
static void
measure_fanout(Plan *p, Table *t)
{
	int			nrels;
	const ARow **rels = plan_table_relations(t, &nrels);

	for (int i = 0; i < nrels; i++)
	{
		const ARow *r = rels[i];
		char	   *sql;
		char	  **pk;
		int			npk;
		PGresult   *res;
		char	   *rel;

		if (strcmp(r->kind, "relation") != 0)
			continue;
		rel = bridge_printf("%s.%s", r->schema, r->table);
		if (!r->detail)
		{
			plan_table_warn(t, "%s has no primary key: its changes cannot be traced to target rows", rel);
			continue;
		}
		pk = plan_split_idents(r->detail, &npk);
		if (r->level == 0)
		{
			StrBuf		g;

			sb_init(&g);
			for (int j = 0; j < npk; j++)
				sb_appendf(&g, "%sv.%s", j ? ", " : "",
						   plan_qi(bridge_printf("lin_%s_%s", r->alias, pk[j])));
			sql = bridge_printf("SELECT coalesce(max(c), 0), coalesce(round(avg(c), 2), 0) "
								"FROM (SELECT count(*) AS c FROM (%s) v GROUP BY %s) s", t->shaped, g.data);
		}
		else
		{
			/* target rows per source row, through the correlation */
			sql = bridge_printf("SELECT coalesce(max(c), 0), coalesce(round(avg(c), 2), 0) FROM (%s) s",
								plan_affected_sql(p, t, r, true));
		}
		res = run(p, bridge_printf("measuring the fan-out of %s into %s", rel, t->name), sql);
		add_fanout(p, rel, t->name, plan_lval(res, 0, 0), dval(res, 0, 1));
		PQclear(res);
	}
}

/* Does the published key name exactly the columns of the derived key? */
static bool
same_column_set(const Table *t, const Query *q)
{
	if (q->npubk != t->npk + t->nck)
		return false;
	for (int i = 0; i < q->npubk; i++)
	{
		bool		found = false;

		for (int j = 0; j < t->npk + t->nck && !found; j++)
			found = strcmp(t->cols[j].name, q->pubk_cols[i]) == 0;
		if (!found)
			return false;
	}
	return true;
}

/*
 * check_published
 *		MR5 check of a query's published key (-- published_key: in
 *		workload.sql) on the data: whether its columns identify the table's
 *		rows, and how many rows a table keyed by it would lose.  A key that
 *		cannot be compared records why in q->pub_error.
 */
static void
check_published(Plan *p, Table *t, Query *q)
{
	StrBuf		sb;
	PGresult   *res;

	if (!q->published_key)
		return;
	plan_parse_key(q->published_key, &q->npubk, &q->pubk_cols, &q->npubpk);
	if (q->npubk == 0)
	{
		q->pub_error = bridge_printf("cannot parse \"%s\" (expected e.g. ((a, b), c))", q->published_key);
		return;
	}
	sb_init(&sb);
	for (int i = 0; i < q->npubk; i++)
	{
		bool		found = false;

		for (int j = 0; j < t->ncols; j++)
			if (strcmp(t->cols[j].name, q->pubk_cols[i]) == 0)
				found = true;
		if (!found)
		{
			q->pub_error = bridge_printf("column %s of the published key is not a column of %s",
										 q->pubk_cols[i], t->name);
			return;
		}
		sb_appendf(&sb, "%sv.%s", i ? ", " : "", plan_qi(q->pubk_cols[i]));
	}
	q->pub_checked = true;
	if (same_column_set(t, q) && !q->marker)
	{
		/* the derived key's count answers it: no second pass over the data */
		q->pub_rows = t->rows;
		q->pub_lost = t->rows - t->key_distinct;
	}
	else
	{
		/* a merged table's rows that are q's (merge.c) */
		res = run(p, bridge_printf("checking the published key of %s", q->name),
				  bridge_printf("SELECT count(*), count(DISTINCT ROW(%s)) FROM (%s) v%s", sb.data, t->shaped,
								q->marker ? bridge_printf(" WHERE v.%s IS NOT NULL", plan_qi(q->marker)) : ""));
		q->pub_rows = plan_lval(res, 0, 0);
		q->pub_lost = q->pub_rows - plan_lval(res, 0, 1);
		PQclear(res);
	}
	if (q->pub_lost > 0)
		plan_table_warn(t, "%s: MR5: the published key %s of %s is LOSSY: %ld of %ld rows lost "
						"(rows with equal keys overwrite each other); safe key: %s",
						q->name, q->published_key,
						q->published_target ? q->published_target : "?",
						q->pub_lost, q->pub_rows, plan_key_text(t));
}

/*
 * measure_table
 *		Rows, partitions, value sizes and the partition-size formulas of
 *		one table on the data.
 */
static void
measure_table(Plan *p, Table *t)
{
	PGresult   *res;
	StrBuf		sb;
	char	   *pk = key_list(t, false);
	char	   *key = key_list(t, true);

	res = run(p, bridge_printf("counting the rows of %s", t->name),
			  bridge_printf("SELECT count(*), count(DISTINCT ROW(%s)) FROM (%s) v", key, t->shaped));
	t->rows = plan_lval(res, 0, 0);
	t->key_distinct = plan_lval(res, 0, 1);
	PQclear(res);

	res = run(p, bridge_printf("measuring the partitions of %s", t->name),
			  bridge_printf("SELECT count(*), coalesce(max(c), 0), "
							"coalesce(percentile_disc(0.99) WITHIN GROUP (ORDER BY c), 0), "
							"coalesce(round(avg(c), 2), 0) "
							"FROM (SELECT count(*) AS c FROM (%s) v GROUP BY %s) s", t->shaped, pk));
	t->partitions = plan_lval(res, 0, 0);
	t->max_rows = plan_lval(res, 0, 1);
	t->p99_rows = plan_lval(res, 0, 2);
	t->mean_rows = dval(res, 0, 3);
	PQclear(res);

	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int i = 0; i < t->ncols; i++)
		sb_appendf(&sb, "%scoalesce(round(avg(%s), 2), 0)", i ? ", " : "",
				   size_expr(&t->cols[i], bridge_printf("v.%s", plan_qi(t->cols[i].name))));

	/*
	 * Average sizes from at most VALUE_SIZE_ROWS rows: the averages of a
	 * large table settle long before, and a view with aggregate sublinks
	 * costs per row (the guests of a 15 M-row plan: 59 s for all 1.2 M
	 * rows).
	 */
	sb_appendf(&sb, " FROM (SELECT * FROM (%s) v0 LIMIT %d) v", t->shaped, VALUE_SIZE_ROWS);
	res = run(p, bridge_printf("measuring the value sizes of %s", t->name), sb.data);
	for (int i = 0; i < t->ncols; i++)
		t->cols[i].avg_size = dval(res, 0, i);
	PQclear(res);

	t->nv_max = plan_partition_values(t, (double) t->max_rows);
	t->bytes_max = plan_partition_bytes(t, (double) t->max_rows);
	t->bytes_mean = plan_partition_bytes(t, t->mean_rows);
	t->bytes_total = t->bytes_mean * t->partitions * p->opts->replication_factor;
}

/*
 * plan_measure
 *		Everything measured on the data, table by table.  A table whose
 *		widest partition passes the limits gets a bucket (buckets.c):
 *		when one is applied, the table is measured again with its bucketed
 *		key, so the sizes, MR5 checks and fan-out below are of the table
 *		that is created.
 */
void
plan_measure(Plan *p)
{
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];

		plan_check_edges(p, t);
		measure_table(p, t);
		if (t->nv_max > p->opts->max_values || t->bytes_max > p->opts->max_bytes)
		{
			plan_choose_bucket(p, t);
			if (t->bucket && t->bucket->applied)
				measure_table(p, t);
		}
		if (t->key_distinct < t->rows)
			plan_table_warn(t, "MR5: the derived key is not unique on the data: %ld of %ld rows would be lost",
							t->rows - t->key_distinct, t->rows);
		if (t->nv_max > p->opts->max_values || t->bytes_max > p->opts->max_bytes)
			plan_table_warn(t, "wide partition: up to %ld rows, %.0f values, %.0f bytes (limits: --max-values %ld, --max-bytes %ld)",
							t->max_rows, t->nv_max, t->bytes_max, p->opts->max_values, p->opts->max_bytes);
		for (int qi = 0; qi < t->nqueries; qi++)
			check_published(p, t, t->queries[qi]);
		measure_fanout(p, t);
	}
}

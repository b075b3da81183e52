/*-------------------------------------------------------------------------
 *
 * emit.c
 *	  The generated files 001_schema.cql, 002_foreign_tables.sql,
 *	  003_load.sql and 004_verify.sql (formats: docs/cqlbridge-design.md,
 *	  section 2), built in memory; plan.c writes them.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/emit.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* CQL identifier: quoted when not lower-case or a reserved CQL keyword */
char *
plan_cqi(const char *s)
{
	static const char *const reserved[] = {
		"add", "allow", "alter", "and", "apply", "asc", "authorize", "batch", "begin", "by",
		"columnfamily", "create", "default", "delete", "desc", "describe", "drop", "entries",
		"execute", "from", "full", "grant", "if", "in", "index", "infinity", "insert", "into",
		"is", "keyspace", "limit", "materialized", "mbean", "mbeans", "modify", "nan",
		"norecursive", "not", "null", "of", "on", "or", "order", "primary", "rename",
		"replace", "revoke", "schema", "select", "set", "table", "to", "token", "truncate",
		"unlogged", "unset", "update", "use", "using", "view", "where", "with",
		NULL
	};

	return bridge_plain_ident(s, reserved) ? bridge_strdup(s) : bridge_quote_ident(s);
}

/*
 * ftable
 *		The foreign table of t, "<foreign schema>.<table>", each part quoted
 *		only when needed.
 */
static char *
ftable(Plan *p, const Table *t)
{
	return bridge_printf("%s.%s", plan_qi(p->foreign_schema), plan_qi(t->name));
}

/*
 * The source view of a table, in the plan's own schema (cqlbridge_<ks>):
 * another plan of the same database with a table of the same name has its
 * own view.
 */
static char *
view_name(Plan *p, const Table *t)
{
	return bridge_printf("%s.%s", plan_qi(bridge_plan_schema(p->keyspace)),
						 plan_qi(bridge_printf("%s_src", t->name)));
}

/*
 * kind_name
 *		The cql_fdw column option "kind" of a column kind (partition_key,
 *		clustering, static, regular).
 */
static const char *
kind_name(ColKind k)
{
	switch (k)
	{
		case COL_PARTITION:
			return "partition_key";
		case COL_CLUSTERING:
			return "clustering";
		case COL_STATIC:
			return "static";
		case COL_REGULAR:
			break;
	}
	return "regular";
}

/* ---------------------------------------------------------------- */
/* 001_schema.cql													*/
/* ---------------------------------------------------------------- */

/*
 * plan_emit_schema
 *		The text of 001_schema.cql: CREATE KEYSPACE, the UDT of address
 *		columns when a table has one, CREATE TABLE of every target with its
 *		key and clustering order.
 */
char *
plan_emit_schema(Plan *p)
{
	StrBuf		sb;
	bool		udt = false;

	for (int i = 0; i < p->ntables; i++)
		udt |= p->tables[i]->has_udt;
	sb_init(&sb);
	sb_appendf(&sb, "-- 001_schema.cql: Cassandra schema planned by cqlbridge from schema %s\n", p->cat.schema);
	sb_append(&sb, "-- One statement per \";\" at end of line; apply runs each through cql_execute.\n");
	sb_appendf(&sb, "-- server: %s\n", p->server);
	if (p->opts->ndcs > 0)
	{
		/* --replication 'dc1:3,dc2:3' (names checked by main.c) */
		sb_appendf(&sb, "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'NetworkTopologyStrategy'",
				   plan_cqi(p->keyspace));
		for (int i = 0; i < p->opts->ndcs; i++)
			sb_appendf(&sb, ", '%s': %d", p->opts->dc_names[i], p->opts->dc_rf[i]);
		sb_append(&sb, "};\n");
	}
	else
		sb_appendf(&sb, "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d};\n",
				   plan_cqi(p->keyspace), p->opts->replication_factor);
	if (udt)
		sb_appendf(&sb, "CREATE TYPE IF NOT EXISTS %s.address (street text, city text, state_or_province text, postal_code text, country text);\n",
				   plan_cqi(p->keyspace));
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];

		sb_append(&sb, "-- serves:");
		for (int q = 0; q < t->nqueries; q++)
			sb_appendf(&sb, " %s", t->queries[q]->name);
		sb_append(&sb, "\n");
		if (t->bucket && t->bucket->applied)
			sb_appendf(&sb, "-- bucket: %s = %s (partitions over the limits without it; cql_fdw computes it)\n",
					   t->cols[t->bucket->column].name, plan_bucket_text(t));
		sb_appendf(&sb, "CREATE TABLE IF NOT EXISTS %s.%s (\n", plan_cqi(p->keyspace), plan_cqi(t->name));
		for (int i = 0; i < t->ncols; i++)
			sb_appendf(&sb, "    %s %s%s,\n", plan_cqi(t->cols[i].name), t->cols[i].cql_type,
					   t->cols[i].kind == COL_STATIC ? " STATIC" : "");
		sb_append(&sb, "    PRIMARY KEY ((");
		for (int i = 0; i < t->npk; i++)
			sb_appendf(&sb, "%s%s", i ? ", " : "", plan_cqi(t->cols[i].name));
		sb_append(&sb, ")");
		for (int i = t->npk; i < t->npk + t->nck; i++)
			sb_appendf(&sb, ", %s", plan_cqi(t->cols[i].name));
		sb_append(&sb, ")\n)");
		if (t->nck > 0)
		{
			sb_append(&sb, " WITH CLUSTERING ORDER BY (");
			for (int i = t->npk; i < t->npk + t->nck; i++)
				sb_appendf(&sb, "%s%s %s", i > t->npk ? ", " : "", plan_cqi(t->cols[i].name),
						   t->cols[i].desc ? "DESC" : "ASC");
			sb_append(&sb, ")");
		}
		sb_append(&sb, ";\n");
	}
	return sb.data;
}

/* ---------------------------------------------------------------- */
/* 002_foreign_tables.sql											*/
/* ---------------------------------------------------------------- */

/*
 * plan_emit_foreign
 *		The text of 002_foreign_tables.sql: the schema check DO block, every
 *		foreign table with its column options (kind, position, bucket), and
 *		the source view of every target (security_invoker).
 */
char *
plan_emit_foreign(Plan *p)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "-- 002_foreign_tables.sql: foreign tables of keyspace %s and the source views\n", p->keyspace);
	sb_append(&sb, "-- (the target rows computed from the relational tables, in CQL shape, then lineage columns).\n");
	sb_append(&sb, "-- Run in one transaction; re-runnable.\n");
	{
		const char *schemas[3];
		char	   *check;

		schemas[0] = "cqlbridge";
		schemas[1] = bridge_plan_schema(p->keyspace);
		schemas[2] = p->foreign_schema;
		check = bridge_schema_check_sql(schemas, 3);
		sb_append(&sb, check);
		free(check);
	}
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];

		sb_appendf(&sb, "\nDROP FOREIGN TABLE IF EXISTS %s;\n", ftable(p, t));
		sb_appendf(&sb, "CREATE FOREIGN TABLE %s (\n", ftable(p, t));
		for (int i = 0; i < t->ncols; i++)
		{
			Column	   *c = &t->cols[i];

			sb_appendf(&sb, "    %s %s OPTIONS (column_name %s, kind '%s'", plan_qi(c->name), c->pg_type,
					   bridge_quote_literal(c->name), kind_name(c->kind));
			if (c->kind == COL_PARTITION || c->kind == COL_CLUSTERING)
				sb_appendf(&sb, ", position '%d'", c->position);
			if (c->kind == COL_CLUSTERING)
				sb_appendf(&sb, ", clustering_order '%s'", c->desc ? "desc" : "asc");
			sb_appendf(&sb, ", cql_type %s", bridge_quote_literal(c->cql_type));
			if (c->bucket_spec)
				sb_appendf(&sb, ", bucket %s, bucket_of %s", bridge_quote_literal(c->bucket_spec),
						   bridge_quote_literal(c->bucket_of));
			sb_append(&sb, ")");
			if (c->kind == COL_PARTITION || c->kind == COL_CLUSTERING)
				sb_append(&sb, " NOT NULL");
			sb_append(&sb, i + 1 < t->ncols ? ",\n" : "\n");
		}
		sb_appendf(&sb, ") SERVER %s OPTIONS (keyspace %s, \"table\" %s);\n", plan_qi(p->server),
				   bridge_quote_literal(p->keyspace), bridge_quote_literal(t->name));
		sb_appendf(&sb, "DROP VIEW IF EXISTS %s;\n", view_name(p, t));
		/* read with the privileges (and row security) of the reader */
		sb_appendf(&sb, "CREATE VIEW %s WITH (security_invoker = true) AS\n%s;\n", view_name(p, t), t->shaped);
	}
	{
		char	   *out = bridge_finish_tags(sb.data);

		sb_free(&sb);
		return out;
	}
}

/* ---------------------------------------------------------------- */
/* 003_load.sql														*/
/* ---------------------------------------------------------------- */

/*
 * rel_row
 *		The "relation" row of the analysis with that alias at that level, or
 *		NULL.
 */
static const ARow *
rel_row(const Query *q, const char *alias, int level)
{
	for (int i = 0; i < q->nrows; i++)
		if (strcmp(q->rows[i].kind, "relation") == 0 && q->rows[i].level == level &&
			q->rows[i].alias && strcmp(q->rows[i].alias, alias) == 0)
			return &q->rows[i];
	return NULL;
}

/* view column that holds the value of the top-level column (alias, column) */
static char *
outer_column(Table *t, const Query *q, const char *alias, const char *column)
{
	char	   *lin = bridge_printf("lin_%s_%s", alias, column);

	for (int i = 0; i < t->nlin; i++)
		if (strcmp(t->lin[i], lin) == 0)
			return bridge_printf("s.%s", plan_qi(lin));
	for (int i = 0; i < t->ncols; i++)
		if (t->cols[i].alias && t->cols[i].column && t->cols[i].shape != SHAPE_UDT &&
			strcmp(t->cols[i].alias, alias) == 0 && strcmp(t->cols[i].column, column) == 0)
			return bridge_printf("s.%s", plan_qi(t->cols[i].name));
	bridge_fatal_hint("Correlate sublinks on key or output columns of the outer query.",
					  "%s: the correlation column %s.%s is neither a primary-key nor an output column",
					  plan_query_ref(q), alias, column);
}

/*
 * The relations of sublink 'level' on the join path from 'from' to the
 * relations holding the correlation columns (breadth first over the
 * sublink's join equalities), as FROM text and join conditions.
 * Returns the correlation as inner expressions and outer view columns.
 */
typedef struct SubPath
{
	StrBuf		from;
	StrBuf		where;
	int			ncorr;
	char	   *inner[16];
	char	   *outer[16];
} SubPath;

/*
 * sublink_path
 *		Fill sp (see SubPath above) for the sublink relation start: the FROM
 *		and join conditions of the path to the correlated relations and the
 *		correlation's inner and outer columns.  Fatal when the sublink has
 *		no correlation or one of its relations is not joined to the
 *		correlated one.
 */
static void
sublink_path(Table *t, const Query *q, const ARow *start, SubPath *sp)
{
	const char *seen[64];
	int			prev[64];
	int			prev_join[64];
	int			nseen = 0;
	int			head = 0;
	bool		need[64];

	sb_init(&sp->from);
	sb_init(&sp->where);
	sp->ncorr = 0;
	seen[nseen] = start->alias;
	prev[nseen] = -1;
	prev_join[nseen] = -1;
	nseen++;
	while (head < nseen && nseen < 64)
	{
		const char *a = seen[head++];

		for (int i = 0; i < q->nrows; i++)
		{
			const ARow *j = &q->rows[i];
			const char *other = NULL;
			bool		known = false;

			if (strcmp(j->kind, "join") != 0 || j->level != start->level || !j->alias || !j->other_alias)
				continue;
			if (strcmp(j->alias, a) == 0)
				other = j->other_alias;
			else if (strcmp(j->other_alias, a) == 0)
				other = j->alias;
			if (!other)
				continue;
			for (int k = 0; k < nseen; k++)
				if (strcmp(seen[k], other) == 0)
					known = true;
			if (known || nseen >= 64)
				continue;
			seen[nseen] = other;
			prev[nseen] = head - 1;
			prev_join[nseen] = i;
			nseen++;
		}
	}
	for (int k = 0; k < nseen; k++)
		need[k] = false;
	need[0] = true;
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *c = &q->rows[i];

		if (strcmp(c->kind, "correlation") != 0 || c->level != start->level)
			continue;
		for (int k = 0; k < nseen; k++)
			if (strcmp(seen[k], c->alias) == 0)
			{
				/* mark the path back to the start */
				for (int m = k; m >= 0 && !need[m]; m = prev[m])
					need[m] = true;
			}
		if (sp->ncorr < 16)
		{
			sp->inner[sp->ncorr] = bridge_printf("%s.%s", plan_qi(c->alias), plan_qi(c->column));
			sp->outer[sp->ncorr] = outer_column(t, q, c->other_alias, c->other_column);
			sp->ncorr++;
		}
	}
	if (sp->ncorr == 0)
		bridge_fatal("%s: sublink %d has no correlation with the outer query", plan_query_ref(q), start->level);
	for (int k = 0, n = 0; k < nseen; k++)
	{
		const ARow *r;

		if (!need[k])
			continue;
		r = rel_row(q, seen[k], start->level);
		if (!r)
			continue;
		sb_appendf(&sp->from, "%s%s.%s %s", n++ ? ", " : "", plan_qi(r->schema), plan_qi(r->table), plan_qi(r->alias));
		if (prev_join[k] >= 0)
		{
			const ARow *j = &q->rows[prev_join[k]];

			sb_appendf(&sp->where, "%s%s.%s = %s.%s", sp->where.len ? " AND " : "",
					   plan_qi(j->alias), plan_qi(j->column), plan_qi(j->other_alias), plan_qi(j->other_column));
		}
	}
	/* correlation relations not reachable from the start: not affected */
	for (int c = 0; c < sp->ncorr; c++)
	{
		bool		ok = false;

		for (int k = 0; k < nseen; k++)
			if (need[k] && strncmp(sp->inner[c], plan_qi(seen[k]), strlen(plan_qi(seen[k]))) == 0 &&
				sp->inner[c][strlen(plan_qi(seen[k]))] == '.')
				ok = true;
		if (!ok)
			bridge_fatal("%s: relation %s of sublink %d is not joined to the correlated relation",
						 plan_query_ref(q), start->alias, start->level);
	}
}

/*
 * plan_affected_sql
 *		The "affected" SQL of one source relation: the key columns of the
 *		target rows computed from the source row whose primary key is
 *		$1..$n.  With fanout, instead the number of target rows per source
 *		row ("SELECT count(*) AS c ... GROUP BY source key").
 */
char *
plan_affected_sql(Plan *p, Table *t, const ARow *rel, bool fanout)
{
	const Query *q = t->def;
	int			npk;
	char	  **pk = plan_split_idents(rel->detail, &npk);
	StrBuf		sb;
	StrBuf		keys;

	(void) p;
	sb_init(&sb);
	sb_init(&keys);
	for (int i = 0; i < t->npk + t->nck; i++)
		sb_appendf(&keys, "%ss.%s", i ? ", " : "", plan_qi(t->cols[i].name));
	if (rel->level == 0)
	{
		sb_appendf(&sb, "SELECT %s FROM %s s WHERE ", keys.data, view_name(p, t));
		for (int j = 0; j < npk; j++)
			sb_appendf(&sb, "%ss.%s = $%d", j ? " AND " : "",
					   plan_qi(bridge_printf("lin_%s_%s", rel->alias, pk[j])), j + 1);
		return sb.data;
	}
	{
		SubPath		sp;
		StrBuf		outer;
		StrBuf		inner;

		sublink_path(t, q, rel, &sp);
		sb_init(&outer);
		sb_init(&inner);
		for (int c = 0; c < sp.ncorr; c++)
		{
			sb_appendf(&outer, "%s%s", c ? ", " : "", sp.outer[c]);
			sb_appendf(&inner, "%s%s", c ? ", " : "", sp.inner[c]);
		}
		if (fanout)
		{
			StrBuf		k;

			sb_init(&k);
			for (int j = 0; j < npk; j++)
				sb_appendf(&k, "%s%s.%s AS k%d", j ? ", " : "", plan_qi(rel->alias), plan_qi(pk[j]), j + 1);
			for (int c = 0; c < sp.ncorr; c++)
				sb_appendf(&k, ", %s AS c%d", sp.inner[c], c + 1);
			sb_appendf(&sb, "SELECT count(*) AS c FROM (%s) s JOIN (SELECT DISTINCT %s FROM %s%s%s) x ON (",
					   t->shaped, k.data, sp.from.data, sp.where.len ? " WHERE " : "", sp.where.data);
			sb_appendf(&sb, "%s) = (", outer.data);
			for (int c = 0; c < sp.ncorr; c++)
				sb_appendf(&sb, "%sx.c%d", c ? ", " : "", c + 1);
			sb_append(&sb, ") GROUP BY ");
			for (int j = 0; j < npk; j++)
				sb_appendf(&sb, "%sx.k%d", j ? ", " : "", j + 1);
			return sb.data;
		}
		sb_appendf(&sb, "SELECT %s FROM %s s WHERE (%s) IN (SELECT %s FROM %s WHERE ",
				   keys.data, view_name(p, t), outer.data, inner.data, sp.from.data);
		if (sp.where.len)
			sb_appendf(&sb, "%s AND ", sp.where.data);
		for (int j = 0; j < npk; j++)
			sb_appendf(&sb, "%s%s.%s = $%d", j ? " AND " : "", plan_qi(rel->alias), plan_qi(pk[j]), j + 1);
		sb_append(&sb, ")");
		return sb.data;
	}
}

/*
 * plan_emit_load
 *		The text of 003_load.sql: per target its metadata lines (table,
 *		columns, key, rows, affected) and the SELECT of its rows from the
 *		source view.
 */
char *
plan_emit_load(Plan *p)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb,
			  "-- 003_load.sql: per target table, the SELECT of its rows (columns in the order of \"columns\").\n"
			  "-- apply streams them into the foreign table in one pass, ordered by the partition key and\n"
			  "-- resumable batch by batch, or with --chunks N in hash chunks of whole partitions.\n"
			  "-- \"affected\" lines: source relation (primary key) | key columns of the target rows it feeds.\n"
			  "-- Names are SQL identifiers, quoted where needed; the keyspace names the plan's objects.\n");
	sb_appendf(&sb, "-- keyspace: %s\n", p->keyspace);
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];
		StrBuf		cols;
		StrBuf		scols;
		const ARow **rels;
		int			nrels;

		sb_init(&cols);
		sb_init(&scols);
		for (int i = 0; i < t->ncols; i++)
		{
			sb_appendf(&cols, "%s%s", i ? ", " : "", plan_qi(t->cols[i].name));
			sb_appendf(&scols, "%ss.%s", i ? ", " : "", plan_qi(t->cols[i].name));
		}
		sb_appendf(&sb, "\n-- table: %s.%s\n", p->keyspace, t->name);
		sb_appendf(&sb, "-- foreign_table: %s\n", ftable(p, t));
		sb_appendf(&sb, "-- source_view: %s\n", view_name(p, t));
		sb_appendf(&sb, "-- columns: %s\n", cols.data);
		sb_append(&sb, "-- key: ");
		for (int i = 0; i < t->npk + t->nck; i++)
			sb_appendf(&sb, "%s%s", i ? ", " : "", plan_qi(t->cols[i].name));
		sb_append(&sb, "\n-- partition_key: ");
		for (int i = 0; i < t->npk; i++)
			sb_appendf(&sb, "%s%s", i ? ", " : "", plan_qi(t->cols[i].name));
		sb_appendf(&sb, "\n-- rows: %ld\n", t->rows);
		/* the defining query's relations, then those merged queries join in */
		rels = plan_table_relations(t, &nrels);
		for (int i = 0; i < nrels; i++)
		{
			const ARow *r = rels[i];

			if (!r->detail)
				continue;
			sb_appendf(&sb, "-- affected: %s.%s (%s) | %s\n", plan_qi(r->schema), plan_qi(r->table),
					   r->detail, plan_affected_sql(p, t, r, false));
		}
		/*
		 * apply orders the rows by the partition key (streaming needs the
		 * order to resume; the FDW sends the rows of a partition that
		 * arrive together as one UNLOGGED BATCH), so the SELECT has none.
		 */
		sb_appendf(&sb, "SELECT %s\nFROM %s s;\n", scols.data, view_name(p, t));
	}
	return sb.data;
}

/* ---------------------------------------------------------------- */
/* 004_verify.sql													*/
/* ---------------------------------------------------------------- */

/*
 * is_lower_op
 *		Whether a range operator gives the lower bound of a range (> or >=).
 */
static bool
is_lower_op(const char *op)
{
	return op[0] == '>';
}

/*
 * The distinct searched values taken from the searched relation itself,
 * under the query table's column names: "SELECT DISTINCT r.name AS
 * poi_name FROM hotel_rel.point_of_interest r WHERE ...".  NULL when the
 * parameters search columns of different relations (their combinations
 * come from the query table only).
 */
static char *
source_sample_columns(const Query *q, const Table *t)
{
	const ARow *first = NULL;
	StrBuf		cols;
	StrBuf		notnull;
	bool	   *used = bridge_malloc(sizeof(bool) * (t->ncols + 1));
	char	   *sql;

	memset(used, 0, sizeof(bool) * (t->ncols + 1));
	sb_init(&cols);
	sb_init(&notnull);
	for (int k = 0; k < q->nparams; k++)
	{
		const ARow *r = NULL;
		int			ci = q->puse[k].col;

		if (ci < 0)
			continue;			/* LIMIT */

		for (int i = 0; i < q->nrows && r == NULL; i++)
			if (q->rows[i].level == 0 && q->rows[i].param == k + 1 &&
				(strcmp(q->rows[i].kind, "equality") == 0 || strcmp(q->rows[i].kind, "range") == 0))
				r = &q->rows[i];
		if (r == NULL || r->schema == NULL || r->table == NULL || r->column == NULL ||
			(first && (strcmp(first->schema, r->schema) != 0 ||
					   strcmp(first->table, r->table) != 0 ||
					   strcmp(first->alias, r->alias) != 0)))
		{
			sb_free(&cols);
			sb_free(&notnull);
			free(used);
			return NULL;
		}
		if (first == NULL)
			first = r;
		if (used[ci])
			continue;
		used[ci] = true;
		/* at the stored precision, as the query table's own values */
		sb_appendf(&cols, "%s%s AS %s", cols.len ? ", " : "",
				   plan_store_expr(t->cols[ci].store, bridge_printf("r.%s", plan_qi(r->column)), true),
				   plan_qi(t->cols[ci].name));
		sb_appendf(&notnull, "%sr.%s IS NOT NULL", notnull.len ? " AND " : "", plan_qi(r->column));
	}
	if (first == NULL)
	{
		free(used);
		return NULL;
	}
	sql = bridge_printf("SELECT DISTINCT %s FROM %s.%s r WHERE %s", cols.data,
						plan_qi(first->schema), plan_qi(first->table), notnull.data);
	sb_free(&cols);
	sb_free(&notnull);
	free(used);
	return sql;
}

/* Whether a parameter of q is an IN list ("= ANY" or "IN"). */
static bool
query_in_list(const Query *q)
{
	for (int k = 0; k < q->nparams; k++)
		if (q->puse[k].op && (strcmp(q->puse[k].op, "= ANY") == 0 || strcmp(q->puse[k].op, "IN") == 0))
			return true;
	return false;
}

/*
 * plan_emit_verify
 *		The text of 004_verify.sql: per workload query its metadata, the
 *		sample statement of parameter values, the source query and the
 *		target query over the foreign table.
 */
char *
plan_emit_verify(Plan *p)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "-- 004_verify.sql: per workload query, parameter samples from the source view and the searched relation,\n");
	sb_append(&sb, "-- the original query (source) and the same question asked of the foreign table (target).\n");
	for (int qi = 0; qi < p->nqueries; qi++)
	{
		Query	   *q = &p->queries[qi];
		Table	   *t = q->table;
		StrBuf		sel;
		StrBuf		dist;
		StrBuf		md5;
		int			nd = 0;
		bool	   *used = bridge_malloc(sizeof(bool) * (t->ncols + 1));
		char	   *src_dist;

		memset(used, 0, sizeof(bool) * (t->ncols + 1));
		sb_appendf(&sb, "\n-- query: %s\n", q->name);
		if (q->description)
			sb_appendf(&sb, "-- description: %s\n", q->description);
		sb_appendf(&sb, "-- params: %s\n", q->params_text);
		sb_appendf(&sb, "-- table: %s.%s\n", p->keyspace, t->name);
		sb_appendf(&sb, "-- ordered: %s\n", q->ordered ? "true" : "false");
		/*
		 * MR2 puts every equality column in the partition key; a bucketed
		 * table's query reads the buckets its range covers (or all hash
		 * buckets), which cql_fdw enumerates.
		 */
		if (q->compose)
		{
			/* the drive's partition, then one lookup partition per row */
			sb_append(&sb, "-- single_partition: false\n");
			sb_append(&sb, "-- composed: true\n");
			sb_appendf(&sb, "-- lookup_table: %s.%s\n", p->keyspace, q->compose->lookup->table->name);
			sb_appendf(&sb, "-- lookups: at most %ld per call\n", plan_compose_bound(q));
		}
		else if (t->bucket && t->bucket->applied)
		{
			sb_append(&sb, "-- single_partition: false\n");
			sb_appendf(&sb, "-- buckets: %s\n", plan_bucket_text(t));
		}
		else if (query_in_list(q))
		{
			/* an IN list on a key column: one partition per value */
			sb_append(&sb, "-- single_partition: false\n");
			sb_append(&sb, "-- in_list: true\n");
		}
		else
			sb_append(&sb, "-- single_partition: true\n");

		/*
		 * sample: distinct values of the searched columns, in a stable
		 * pseudo-random order; an upper range bound is the lower one + 7
		 * (days for date/timestamp) so the range returns rows.
		 */
		sb_init(&sel);
		sb_init(&dist);
		sb_init(&md5);
		for (int k = 0; k < q->nparams; k++)
		{
			int			ci = q->puse[k].col;
			Column	   *c;
			char	   *d;
			bool		has_lower = false;

			/*
			 * A condition on a composition's lookup rows: the median of the
			 * looked-up column, so about half of the lookups pass it.
			 */
			if (ci < 0 && q->puse[k].lookup)
			{
				sb_appendf(&sel, "%s(SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY v.%s) FROM %s v)",
						   k ? ", " : "", plan_qi(q->puse[k].lookup), view_name(p, q->compose->lookup->table));
				continue;
			}
			/* a LIMIT parameter: a few rows, so their order is compared */
			if (ci < 0)
			{
				sb_appendf(&sel, "%s3", k ? ", " : "");
				continue;
			}
			c = &t->cols[ci];
			d = bridge_printf("d.%s", plan_qi(c->name));

			if (!used[ci])
			{
				used[ci] = true;
				sb_appendf(&dist, "%ss.%s", nd ? ", " : "", plan_qi(c->name));
				sb_appendf(&md5, "%s%s::text", nd ? " || '|' || " : "", d);
				nd++;
			}
			for (int j = 0; j < q->nparams; j++)
				if (q->puse[j].col == ci && is_lower_op(q->puse[j].op))
					has_lower = true;
			if (strcmp(q->puse[k].op, "= ANY") == 0)
				sb_appendf(&sel, "%sARRAY[%s]", k ? ", " : "", d);
			else if (strcmp(q->puse[k].op, "=") == 0 || strcmp(q->puse[k].op, "IN") == 0 ||
					 is_lower_op(q->puse[k].op) || !has_lower)
				sb_appendf(&sel, "%s%s", k ? ", " : "", d);
			else if (strcmp(c->cql_type, "date") == 0 || strcmp(c->cql_type, "smallint") == 0 ||
					 strcmp(c->cql_type, "int") == 0 || strcmp(c->cql_type, "bigint") == 0)
				sb_appendf(&sel, "%s(%s + 7)", k ? ", " : "", d);
			else if (strcmp(c->cql_type, "timestamp") == 0)
				sb_appendf(&sel, "%s(%s + interval '7 days')", k ? ", " : "", d);
			else
				sb_appendf(&sel, "%s%s", k ? ", " : "", d);
		}
		sb_append(&sb, "-- sample\n");
		src_dist = source_sample_columns(q, t);
		if (src_dist == NULL)
			sb_appendf(&sb, "SELECT %s FROM (SELECT DISTINCT %s FROM %s s) d ORDER BY md5(%s) LIMIT $1;\n",
					   sel.data, dist.data, view_name(p, t), md5.data);
		else
		{
			/*
			 * Half the samples from the query table's own rows (values that
			 * return rows), half from the searched relation itself: values
			 * whose rows the table does not hold (filtered out, outer-join
			 * rows without a clustering value, ...) are compared too, so
			 * verify cannot miss them.
			 */
			sb_appendf(&sb, "SELECT * FROM (SELECT %s FROM (SELECT DISTINCT %s FROM %s s) d ORDER BY md5(%s) LIMIT $1 - $1 / 2) v\n",
					   sel.data, dist.data, view_name(p, t), md5.data);
			sb_appendf(&sb, "UNION ALL\nSELECT * FROM (SELECT %s FROM (%s) d ORDER BY md5(%s) LIMIT $1 / 2) r;\n",
					   sel.data, src_dist, md5.data);
			free(src_dist);
		}
		sb_append(&sb, "-- source\n");
		sb_appendf(&sb, "%s;\n", q->compose ? plan_compose_source(q) : plan_source_sql(q, t));

		if (q->compose)
			sb_appendf(&sb, "-- target\n%s;\n",
					   plan_compose_target(q, ftable(p, t), ftable(p, q->compose->lookup->table)));
		else
			sb_appendf(&sb, "-- target\n%s;\n", plan_target_sql(q, t, ftable(p, t)));
		free(used);
	}
	return sb.data;
}

/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  Queries that share a Cassandra table: one table serves every query
 *	  whose key it has, holding the union of their columns, so a change
 *	  of a source row is written once instead of once per query.
 *
 * When a new query's table (rules.c) can join a planned one:
 *
 *	key		The same partition key (as a set) and the same clustering
 *			columns in the same order, each from the same column of the
 *			same relation (alias and column), with the same type; a column
 *			both tables have must agree in type, kind and source.
 *	rows	The table stores the rows of its defining query (Table.def);
 *			a merged query must have the same rows, or rows the table can
 *			tell apart:
 *			(a)	the same FROM/WHERE (the base SQL without its select list;
 *				deparsed by the same function, so equal text means equal
 *				rows): every row is the query's;
 *			(b)	the defining query's FROM/WHERE plus joins to other
 *				relations, each on exactly one full key (primary key or NOT
 *				NULL unique) of the joined relation, equated with columns of
 *				the defining query's relations, and nothing else about them
 *				(no filter, no search or order attribute): a join to at most
 *				one row.  A LEFT JOIN keeps every row: the query has the
 *				table's rows.  With an inner join each of the query's rows
 *				is one of the table's, but a row whose joined row is missing
 *				(no foreign key, or a NULL) is not the query's.  The view
 *				takes the joined values by a LEFT JOIN, and a "marker"
 *				column, the first inner-joined relation's first primary-key
 *				column (never NULL in a joined row), tells the rows apart:
 *				the query's target reads only the rows where it IS NOT NULL.
 *				A query whose FROM/WHERE is the smaller one becomes the
 *				defining query of a one-query table the same way.
 *			Outer joins (but a LEFT JOIN of shape (b)), DISTINCT, relations
 *			without a primary key and select-list sublinks in the merged
 *			query are not merged (their rows cannot be matched one to one);
 *			neither are different filters or to-many joins (the key tells
 *			them apart anyway).
 *	columns	A query whose columns the table has reads them (nothing else
 *			changes); otherwise its lineage query becomes a part of the
 *			view's source, LEFT JOINed on the defining query's lineage
 *			columns (the primary keys of its relations, which identify its
 *			rows), and adds its columns and lineage columns:
 *
 *				SELECT q.*, p1.w_tax, p1.lin_w_w_id
 *				FROM (<def's lineage>) q
 *				LEFT JOIN (<Q2's lineage>) p1 ON p1.lin_c_id = q.lin_c_id
 *
 *			The view's rows stay the defining query's, one each.  Every
 *			relation of every part gets its "affected" line (sync, stream),
 *			through the lineage columns the view shows.  A query reads a
 *			column of the source only when the defining query or a part
 *			with all its rows provides it (a part with fewer rows holds
 *			NULL on the others); a column static for a query with fewer
 *			rows is regular in the merged table (a partition has one
 *			static value, and its other rows hold NULL).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/merge.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/*
 * plan_shape_select
 *		"SELECT <columns>, <lineage columns>" of a table's shaped query:
 *		every column's expression over the lineage query q under the
 *		column's name.  A bucket column added after the derivation
 *		(buckets.c) rebuilds the list with it.
 */
char *
plan_shape_select(const Table *t)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int i = 0; i < t->ncols; i++)
	{
		Column	   *col = &t->cols[i];
		char	   *qn = plan_qi(col->name);
		/* the value Cassandra stores (typemap.c): the view is the stored value */
		char	   *e = plan_store_expr(col->store, col->expr, false);

		if (strcmp(e, bridge_printf("q.%s", qn)) == 0)
			sb_appendf(&sb, "%s%s", i ? ", " : "", e);
		else
			sb_appendf(&sb, "%s%s AS %s", i ? ", " : "", e, qn);
	}
	for (int i = 0; i < t->nlin; i++)
		sb_appendf(&sb, ", q.%s", plan_qi(t->lin[i]));
	return sb.data;
}

/* ---------------------------------------------------------------- */
/* keys and columns													*/
/* ---------------------------------------------------------------- */

/*
 * from_part
 *		The FROM/WHERE of a base SQL (without its select list): the rows a
 *		query produces.
 */
static const char *
from_part(const char *base)
{
	const char *f = strstr(base, "\n   FROM ");

	return f ? f : base;
}

/* Whether queries a and b have the same FROM/WHERE text. */
static bool
same_rows(const Query *a, const Query *b)
{
	return strcmp(from_part(a->base), from_part(b->base)) == 0;
}

/* Both NULL, or equal strings. */
static bool
same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || plan_streq(a, b);
}

/*
 * same_column
 *		Whether two columns have the same name, type, kind, position, order
 *		and source, taken from the same column of the same relation alias.
 */
static bool
same_column(const Column *x, const Column *y)
{
	return strcmp(x->name, y->name) == 0 && strcmp(x->cql_type, y->cql_type) == 0 &&
		x->kind == y->kind && x->position == y->position && x->desc == y->desc &&
		strcmp(x->source, y->source) == 0 && same_text(x->alias, y->alias) &&
		same_text(x->column, y->column);
}

/*
 * key_compatible
 *		Whether tables a and b have the same key (the partition key as a
 *		set: MR2 takes the parameter order, which means nothing to
 *		Cassandra; the clustering columns in order) and agree on every
 *		column both have.
 */
static bool
key_compatible(const Table *a, const Table *b)
{
	if (a->npk != b->npk || a->nck != b->nck)
		return false;
	for (int i = a->npk; i < a->npk + a->nck; i++)
		if (!same_column(&a->cols[i], &b->cols[i]))
			return false;
	for (int j = 0; j < b->ncols; j++)
	{
		int			i = plan_find_column((Table *) a, b->cols[j].name);
		const Column *x = i >= 0 ? &a->cols[i] : NULL;
		const Column *y = &b->cols[j];

		if (y->kind == COL_PARTITION)
		{
			if (!x || x->kind != COL_PARTITION || strcmp(x->cql_type, y->cql_type) != 0 ||
				strcmp(x->source, y->source) != 0 || !same_text(x->alias, y->alias) ||
				!same_text(x->column, y->column))
				return false;
		}
		else if (x && !same_column(x, y))
			return false;
	}
	return true;
}

/* Whether table a has every column of table b (by name). */
static bool
has_all(const Table *a, const Table *b)
{
	for (int j = 0; j < b->ncols; j++)
		if (plan_find_column((Table *) a, b->cols[j].name) < 0)
			return false;
	return true;
}

/* column indexes of a query's output and parameters: from one table to another */
static void
remap(Query *q, const Table *from, Table *to)
{
	for (int o = 0; o < q->ntargets; o++)
		q->tcol[o] = plan_find_column(to, from->cols[q->tcol[o]].name);
	for (int k = 0; k < q->nparams; k++)
		if (q->puse[k].col >= 0)
			q->puse[k].col = plan_find_column(to, from->cols[q->puse[k].col].name);
}

/* ---------------------------------------------------------------- */
/* rows: the shapes that can be merged								*/
/* ---------------------------------------------------------------- */

/* Whether the query has select-list sublinks (rows of a level > 0). */
static bool
has_sublinks(const Query *q)
{
	for (int i = 0; i < q->nrows; i++)
		if (q->rows[i].level > 0)
			return true;
	return false;
}

/*
 * keyed_rows
 *		Whether the query's rows correspond one to one to combinations of
 *		rows of its relations (NULL for an outer join's missing row), each
 *		identified by its primary key: no DISTINCT, a primary key on every
 *		relation.  With inner_only, also no outer join.
 */
static bool
keyed_rows(const Query *q, bool inner_only)
{
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];

		if (plan_is_kind(r, "warning") && r->detail && strncmp(r->detail, "SELECT DISTINCT", 15) == 0)
			return false;
		if (plan_is_kind(r, "relation") && r->level == 0 &&
			(!r->detail || (inner_only && !(plan_streq(r->op, "from") || plan_streq(r->op, "inner")))))
			return false;
	}
	return true;
}

/* The top-level relation row of q with that alias, or NULL. */
static const ARow *
relation_of(const Query *q, const char *alias)
{
	for (int i = 0; i < q->nrows; i++)
		if (plan_is_kind(&q->rows[i], "relation") && q->rows[i].level == 0 &&
			plan_streq(q->rows[i].alias, alias))
			return &q->rows[i];
	return NULL;
}

/* Whether two top-level join rows equate the same two columns. */
static bool
same_join(const ARow *a, const ARow *b)
{
	return (plan_streq(a->alias, b->alias) && plan_streq(a->column, b->column) &&
			plan_streq(a->other_alias, b->other_alias) && plan_streq(a->other_column, b->other_column)) ||
		(plan_streq(a->alias, b->other_alias) && plan_streq(a->column, b->other_column) &&
		 plan_streq(a->other_alias, b->alias) && plan_streq(a->other_column, b->column));
}

/* Whether q has a top-level row of that kind equal to r (joins, filters). */
static bool
has_row(const Query *q, const ARow *r)
{
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *x = &q->rows[i];

		if (x->level != 0 || !plan_streq(x->kind, r->kind))
			continue;
		if (plan_is_kind(r, "join") ? same_join(x, r) : same_text(x->detail, r->detail))
			return true;
	}
	return false;
}

/*
 * to_one_join
 *		Whether the extra relation e of big is joined by exactly one full
 *		key of its own (no key that merges rows at the millisecond), each
 *		key column equated once with a column of a relation of small, and
 *		by nothing else: then each row of small matches at most one row of
 *		e, and e changes nothing of the other relations' rows.
 */
static bool
to_one_join(Plan *p, const Query *big, const Query *small, const ARow *e)
{
	CatRel	   *cat = plan_catalog_rel(p, e->table);
	int			njc = 0;
	const char *jc[64];

	if (!cat)
		return false;
	for (int i = 0; i < big->nrows; i++)
	{
		const ARow *r = &big->rows[i];
		const char *mine = NULL;
		const char *other = NULL;

		if (r->level != 0)
			continue;
		if (plan_is_kind(r, "join"))
		{
			if (plan_streq(r->alias, e->alias))
			{
				mine = r->column;
				other = r->other_alias;
			}
			else if (plan_streq(r->other_alias, e->alias))
			{
				mine = r->other_column;
				other = r->alias;
			}
			if (!mine)
				continue;
			/* joined to the smaller query's relations only, once per column */
			if (!relation_of(small, other) || njc >= 64)
				return false;
			for (int j = 0; j < njc; j++)
				if (strcmp(jc[j], mine) == 0)
					return false;
			jc[njc++] = mine;
		}
		else if ((plan_is_kind(r, "equality") || plan_is_kind(r, "range") || plan_is_kind(r, "order")) &&
				 plan_streq(r->alias, e->alias))
			return false;
	}
	for (int k = 0; k < cat->nkeys; k++)
	{
		int			n;
		char	  **kc = plan_split_idents(cat->keys[k], &n);
		bool		all = n == njc;

		if (cat->key_merged && cat->key_merged[k] > 0)
			continue;
		for (int j = 0; j < n && all; j++)
		{
			bool		hit = false;

			for (int m = 0; m < njc; m++)
				if (strcmp(kc[j], jc[m]) == 0)
					hit = true;
			all = hit;
		}
		if (all)
			return true;
	}
	return false;
}

/*
 * extends
 *		Whether big is small plus joins (inner or LEFT) to at most one row
 *		of other relations (shape (b) of the header comment); the relations
 *		big adds in *extra.
 */
static bool
extends(Plan *p, const Query *big, const Query *small, const ARow ***extra, int *nextra)
{
	*extra = NULL;
	*nextra = 0;
	if (!keyed_rows(big, false) || !keyed_rows(small, true) || has_sublinks(big))
		return false;
	/* every relation of small is in big under the same alias */
	for (int i = 0; i < small->nrows; i++)
	{
		const ARow *r = &small->rows[i];
		const ARow *b;

		if (!plan_is_kind(r, "relation") || r->level != 0)
			continue;
		b = relation_of(big, r->alias);
		if (!b || !plan_streq(b->schema, r->schema) || !plan_streq(b->table, r->table))
			return false;
	}
	for (int i = 0; i < big->nrows; i++)
	{
		const ARow *r = &big->rows[i];

		if (!plan_is_kind(r, "relation") || r->level != 0)
			continue;
		/* small's relations inner-joined as in small, the others LEFT at most */
		if (!(plan_streq(r->op, "from") || plan_streq(r->op, "inner") ||
			  (plan_streq(r->op, "left") && !relation_of(small, r->alias))))
			return false;
		if (relation_of(small, r->alias))
			continue;
		*extra = bridge_realloc(*extra, sizeof(ARow *) * (*nextra + 1));
		(*extra)[(*nextra)++] = r;
	}
	if (*nextra == 0)
		return false;
	/* the same filters and joins, but those of the added relations */
	for (int pass = 0; pass < 2; pass++)
	{
		const Query *x = pass == 0 ? small : big;
		const Query *y = pass == 0 ? big : small;

		for (int i = 0; i < x->nrows; i++)
		{
			const ARow *r = &x->rows[i];
			bool		added = false;

			if (r->level != 0 || !(plan_is_kind(r, "join") || plan_is_kind(r, "filter")))
				continue;
			for (int e = 0; e < *nextra; e++)
				if (plan_streq(r->alias, (*extra)[e]->alias) || plan_streq(r->other_alias, (*extra)[e]->alias))
					added = true;
			if (added && pass == 1 && plan_is_kind(r, "join"))
				continue;		/* checked by to_one_join */
			if (added || !has_row(y, r))
				return false;
		}
	}
	for (int e = 0; e < *nextra; e++)
		if (!to_one_join(p, big, small, (*extra)[e]))
			return false;
	return true;
}

/* ---------------------------------------------------------------- */
/* the lineage columns of the merged source							*/
/* ---------------------------------------------------------------- */

/*
 * output_source
 *		What the lineage column "name" of q holds ("alias schema.table.column",
 *		"expression: ...", "key ..."), or NULL when q has no such column.
 */
static char *
output_source(const Query *q, const char *name)
{
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];

		if (plan_is_kind(r, "target") && plan_streq(r->name, name))
		{
			if (r->level > 0)
				return bridge_printf("sublink %d of %s", r->level, q->name);
			if (plan_streq(r->op, "column"))
				return bridge_printf("%s %s.%s.%s", r->alias, r->schema, r->table, r->column);
			return bridge_printf("expression: %s", r->detail ? r->detail : "?");
		}
		if (plan_is_kind(r, "relation") && r->level == 0 && r->detail)
		{
			int			n;
			char	  **pk = plan_split_idents(r->detail, &n);

			for (int j = 0; j < n; j++)
				if (strcmp(bridge_printf("lin_%s_%s", r->alias, pk[j]), name) == 0)
					return bridge_printf("key %s %s.%s.%s", r->alias, r->schema, r->table, pk[j]);
		}
	}
	return NULL;
}

/*
 * query_outputs
 *		The lineage query's columns of q: its outputs, then lin_<alias>_<pk
 *		column> of every top-level relation.
 */
static char **
query_outputs(const Query *q, int *n)
{
	char	  **out = NULL;

	*n = 0;
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];

		if (plan_is_kind(r, "target") && r->name)
		{
			out = bridge_realloc(out, sizeof(char *) * (*n + 1));
			out[(*n)++] = r->name;
		}
	}
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];
		int			m;
		char	  **pk;

		if (!plan_is_kind(r, "relation") || r->level != 0 || !r->detail)
			continue;
		pk = plan_split_idents(r->detail, &m);
		for (int j = 0; j < m; j++)
		{
			out = bridge_realloc(out, sizeof(char *) * (*n + 1));
			out[(*n)++] = bridge_printf("lin_%s_%s", r->alias, pk[j]);
		}
	}
	return out;
}

/*
 * source_of_output
 *		Which query of t's view source provides the column "name" (def
 *		first, then the parts), or NULL.
 */
static const Query *
source_of_output(const Table *t, const char *name)
{
	if (output_source(t->def, name))
		return t->def;
	for (int i = 0; i < t->nparts; i++)
		for (int j = 0; j < t->parts[i].nout; j++)
			if (strcmp(t->parts[i].out[j], name) == 0)
				return t->parts[i].q;
	return NULL;
}

/*
 * outputs_agree
 *		Whether q can read every lineage column of it that t's source
 *		already has: the column holds the same thing there, and on every
 *		row of q, i.e. it comes from the defining query or from a part that
 *		has all the defining query's rows (no marker) or exactly q's rows.
 *		A column of a part with fewer rows is NULL on the others.
 */
static bool
outputs_agree(const Table *t, const Query *q)
{
	int			n;
	char	  **out = query_outputs(q, &n);

	for (int i = 0; i < n; i++)
	{
		const Query *has = source_of_output(t, out[i]);

		if (!has)
			continue;
		if (strcmp(output_source(has, out[i]), output_source(q, out[i])) != 0)
			return false;
		if (has != t->def && has->marker && !same_rows(has, q))
			return false;
	}
	return true;
}

/*
 * nullable_alias
 *		Whether the relation of alias a of q may be NULL-extended (an outer
 *		join): its lineage columns are compared with IS NOT DISTINCT FROM.
 */
static bool
nullable_alias(const Query *q, const char *a)
{
	bool		seen = false;
	bool		later_right = false;

	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];

		if (!plan_is_kind(r, "relation") || r->level != 0)
			continue;
		if (plan_streq(r->alias, a))
		{
			seen = true;
			if (plan_streq(r->op, "left") || plan_streq(r->op, "full"))
				return true;
		}
		else if (seen && (plan_streq(r->op, "right") || plan_streq(r->op, "full")))
			later_right = true;
	}
	return later_right;
}

/*
 * merged_source
 *		The FROM item "q" of t's view: def's lineage with every part's
 *		lineage LEFT JOINed on def's lineage columns, adding the part's own
 *		columns.
 */
static char *
merged_source(const Table *t)
{
	StrBuf		sb;
	StrBuf		from;
	int			ndef;
	char	  **def_out = query_outputs(t->def, &ndef);

	sb_init(&sb);
	sb_init(&from);
	sb_append(&sb, "SELECT q.*");
	sb_appendf(&from, "\n  FROM (%s) q", t->def->lineage);
	for (int i = 0; i < t->nparts; i++)
	{
		const MergePart *mp = &t->parts[i];
		int			on = 0;

		for (int j = 0; j < mp->nout; j++)
			sb_appendf(&sb, ", %s.%s", mp->alias, plan_qi(mp->out[j]));
		sb_appendf(&from, "\n  LEFT JOIN (%s) %s ON ", mp->q->lineage, mp->alias);
		for (int j = 0; j < ndef; j++)
		{
			const char *a;
			char	   *ln = def_out[j];

			if (strncmp(output_source(t->def, ln), "key ", 4) != 0)
				continue;
			a = output_source(t->def, ln) + 4;
			sb_appendf(&from, "%s%s.%s %s q.%s", on++ ? " AND " : "", mp->alias, plan_qi(ln),
					   nullable_alias(t->def, bridge_printf("%.*s", (int) (strchr(a, ' ') - a), a))
					   ? "IS NOT DISTINCT FROM" : "=", plan_qi(ln));
		}
	}
	sb_append(&sb, from.data);
	sb_free(&from);
	return sb.data;
}

/* The view of t again, from its columns, lineage columns and parts. */
static void
reshape(Table *t)
{
	t->source = t->nparts > 0 ? merged_source(t) : t->def->lineage;
	t->shaped = bridge_printf("%s\nFROM (%s) q%s", plan_shape_select(t), t->source,
							  t->shape_where ? t->shape_where : "");
}

/* ---------------------------------------------------------------- */
/* merging															*/
/* ---------------------------------------------------------------- */

/*
 * marker_type
 *		The type of the marker column made of the joined relation e: its
 *		first primary-key column's.
 */
static const char *
marker_type(Plan *p, const ARow *e)
{
	int			n;
	char	  **pk = plan_split_idents(e->detail, &n);
	CatRel	   *cat = plan_catalog_rel(p, e->table);

	for (int k = 0; cat && k < cat->ncols; k++)
		if (strcmp(cat->cols[k], pk[0]) == 0)
			return cat->types[k];
	return "text";
}

/*
 * add_marker
 *		A regular column of t holding the first primary-key column of the
 *		joined relation e of q (the lineage column, NOT NULL in every row
 *		of q, NULL in the rows q's inner join drops); its name.
 */
static char *
add_marker(Plan *p, Table *t, const Query *q, const ARow *e)
{
	int			n;
	char	  **pk = plan_split_idents(e->detail, &n);
	const char *fdw = NULL;
	char	   *nm = bridge_printf("%s_%s", e->table, pk[0]);
	Column	   *col;
	int			ci;

	if (plan_find_column(t, nm) >= 0)
		nm = bridge_printf("%s_%s_%s", e->table, e->alias, pk[0]);
	for (int s = 2; plan_find_column(t, nm) >= 0; s++)
		nm = bridge_printf("%s_%s_%s_%d", e->table, e->alias, pk[0], s);
	/* t->cols moves when the column is added: index it afterwards */
	ci = plan_add_column(t, nm);
	col = &t->cols[ci];
	col->shape = SHAPE_HIDDEN;
	col->alias = e->alias;
	col->column = pk[0];
	col->src_type = bridge_strdup(marker_type(p, e));
	col->cql_type = bridge_strdup(plan_require_cql(q, nm, col->src_type, &fdw));
	col->pg_type = bridge_strdup(fdw);
	plan_set_mapping(col, plan_type_map(col->src_type, NULL));
	col->expr = bridge_printf("q.%s", plan_qi(bridge_printf("lin_%s_%s", e->alias, pk[0])));
	col->source = bridge_printf("%s.%s.%s (merge marker: NOT NULL exactly on the rows of %s)",
								e->schema, e->table, pk[0], q->name);
	col->rule = bridge_printf("merge: %s joins %s.%s to one row; its target reads the rows where %s IS NOT NULL",
							  q->name, e->schema, e->table, nm);
	return col->name;
}

/*
 * add_part
 *		Make q (its columns in table "from") a part of t's view: its new
 *		lineage columns, the columns of "from" t lacks, the marker when its
 *		rows are fewer (marker_rel: the joined relation that makes the
 *		marker; or an existing marker), and q's columns remapped to t.
 */
static void
add_part(Plan *p, Table *t, Query *q, const Table *from, const ARow **extra, int nextra,
		 const ARow *marker_rel, char *marker)
{
	MergePart  *mp;
	int			n;
	char	  **out = query_outputs(q, &n);

	t->parts = bridge_realloc(t->parts, sizeof(MergePart) * (t->nparts + 1));
	mp = &t->parts[t->nparts++];
	memset(mp, 0, sizeof(MergePart));
	mp->q = q;
	mp->extra = extra;
	mp->nextra = nextra;
	mp->alias = bridge_printf("p%d", t->nparts);
	mp->out = bridge_malloc(sizeof(char *) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		/* source_of_output sees mp's outputs so far: a name repeated in q adds once */
		if (source_of_output(t, out[i]))
			continue;
		mp->out[mp->nout++] = out[i];
		if (strncmp(output_source(q, out[i]), "key ", 4) == 0)
		{
			t->lin = bridge_realloc(t->lin, sizeof(char *) * (t->nlin + 1));
			t->lin[t->nlin++] = out[i];
		}
	}
	for (int j = 0; j < from->ncols; j++)
		if (plan_find_column(t, from->cols[j].name) < 0)
		{
			Column	   *col;

			t->cols = bridge_realloc(t->cols, sizeof(Column) * (t->ncols + 1));
			col = &t->cols[t->ncols++];
			*col = from->cols[j];

			/*
			 * Static in q's own table, but q's rows are not all of a
			 * partition's: the others hold NULL, and a partition has one
			 * static value.
			 */
			if (col->kind == COL_STATIC && (marker_rel || marker))
			{
				col->kind = COL_REGULAR;
				col->rule = bridge_printf("regular: static for %s, whose rows are not all of the partition's", q->name);
			}
		}
	t->has_udt = t->has_udt || from->has_udt;
	if (marker_rel)
		marker = add_marker(p, t, q, marker_rel);
	mp->marker = marker;
	q->marker = marker;
	remap(q, from, t);
}

/*
 * adopt
 *		o takes the columns and the view of t, whose query (t->def) becomes
 *		o's defining query; t is dropped after the merge, so they are
 *		shared.
 */
static void
adopt(Table *o, const Table *t)
{
	o->cols = t->cols;
	o->ncols = t->ncols;
	o->lin = t->lin;
	o->nlin = t->nlin;
	o->has_udt = t->has_udt;
	o->source = t->source;
	o->shape_where = t->shape_where;
	o->shaped = t->shaped;
	o->def = t->def;
}

/* q joins table o, which now serves it; t (q's own table) is dropped */
static void
attach(Table *o, Query *q, const Table *t)
{
	o->queries = bridge_realloc(o->queries, sizeof(Query *) * (o->nqueries + 1));
	o->queries[o->nqueries++] = q;
	for (int w = 0; w < t->nwarn; w++)
		plan_table_warn(o, "%s", t->warnings[w]);
	q->table = o;
}

/*
 * inner_extra
 *		The first of the relations a query joins in by an inner join: its
 *		key makes the marker of the query's rows.  NULL when all are LEFT
 *		JOINs, which keep every row: the query has all the table's rows.
 */
static const ARow *
inner_extra(const ARow **extra, int nextra)
{
	for (int e = 0; e < nextra; e++)
		if (!plan_streq(extra[e]->op, "left"))
			return extra[e];
	return NULL;
}

/*
 * mappable_marker
 *		Whether the marker the joins in extra need (if any) has a CQL type:
 *		checked before the table changes, so that add_marker cannot fail
 *		half-way through a merge (plan_derive's errors are caught, and the
 *		table must stay as it was).
 */
static bool
mappable_marker(Plan *p, const ARow **extra, int nextra)
{
	const ARow *e = inner_extra(extra, nextra);

	return !e || plan_pg_to_cql(marker_type(p, e), NULL) != NULL;
}

/*
 * merge_into
 *		Let o serve q (t: q's own table) when the key, rows and columns
 *		allow it (header comment); whether it does.
 */
static bool
merge_into(Plan *p, Table *o, Query *q, Table *t)
{
	bool		same = same_rows(o->def, q);
	const MergePart *like = NULL;
	const ARow **extra;
	int			nextra;

	if (!key_compatible(o, t))
		return false;
	if (same && has_all(o, t) && (o->nparts == 0 || outputs_agree(o, q)))
	{
		remap(q, t, o);
		attach(o, q, t);
		return true;
	}
	if (same && o->nparts == 0 && has_all(t, o))
	{
		/* the new query has more columns: its view defines the table */
		for (int k = 0; k < o->nqueries; k++)
			remap(o->queries[k], o, t);
		adopt(o, t);
		attach(o, q, t);
		return true;
	}
	for (int i = 0; i < o->nparts; i++)
		if (same_rows(o->parts[i].q, q))
			like = &o->parts[i];

	if (same || like)
	{
		/* the rows of def or of a part already merged: columns only */
		if (has_sublinks(q) || !keyed_rows(q, false) || !keyed_rows(o->def, false) || !outputs_agree(o, q))
			return false;
		if (like && has_all(o, t))
		{
			q->marker = like->marker;
			remap(q, t, o);
		}
		else
			add_part(p, o, q, t, like ? like->extra : NULL, like ? like->nextra : 0,
					 NULL, like ? like->marker : NULL);
	}
	else if (extends(p, q, o->def, &extra, &nextra) && outputs_agree(o, q) &&
			 mappable_marker(p, extra, nextra))
		add_part(p, o, q, t, extra, nextra, inner_extra(extra, nextra), NULL);
	else if (o->nparts == 0 && extends(p, o->def, q, &extra, &nextra) &&
			 mappable_marker(p, extra, nextra))
	{
		/* q has the rows of o's queries and more: q defines the table */
		Table		old = *o;
		Query	   *d = o->def;

		adopt(o, t);
		if (!outputs_agree(o, d))
		{
			*o = old;
			return false;
		}
		/* t's columns are o's until add_part adds to them: remap q first */
		remap(q, t, o);
		add_part(p, o, d, &old, extra, nextra, inner_extra(extra, nextra), NULL);
		for (int k = 0; k < o->nqueries; k++)
			if (o->queries[k] != d)
			{
				remap(o->queries[k], &old, o);
				o->queries[k]->marker = d->marker;
			}
	}
	else
		return false;
	reshape(o);
	attach(o, q, t);
	return true;
}

/*
 * plan_merge
 *		Let a planned table serve q instead of t, q's own table (the rules
 *		in the header comment); whether one does.  Fatal never: a query
 *		that cannot share a table keeps its own.
 */
bool
plan_merge(Plan *p, Query *q, Table *t)
{
	for (int i = 0; i < p->ntables; i++)
		if (merge_into(p, p->tables[i], q, t))
			return true;
	return false;
}

/*
 * plan_table_relations
 *		The relations t's view reads: every relation row of the defining
 *		query (sublinks included), then the relations the parts join in.
 */
const ARow **
plan_table_relations(const Table *t, int *n)
{
	const ARow **rels = NULL;

	*n = 0;
	for (int i = 0; i < t->def->nrows; i++)
		if (plan_is_kind(&t->def->rows[i], "relation"))
		{
			rels = bridge_realloc(rels, sizeof(ARow *) * (*n + 1));
			rels[(*n)++] = &t->def->rows[i];
		}
	for (int i = 0; i < t->nparts; i++)
		for (int e = 0; e < t->parts[i].nextra; e++)
		{
			const ARow *r = t->parts[i].extra[e];
			bool		seen = false;

			for (int k = 0; k < *n; k++)
				if (rels[k]->level == 0 && plan_streq(rels[k]->alias, r->alias))
					seen = true;
			if (!seen)
			{
				rels = bridge_realloc(rels, sizeof(ARow *) * (*n + 1));
				rels[(*n)++] = r;
			}
		}
	return rels;
}

/*
 * plan_writes_saved
 *		For a table serving several queries: in *text, one line per source
 *		relation, how many tables a change of it is written to with and
 *		without the merge ("mrg_rel.customer: a change is written to 1
 *		table instead of 3 (Q1, Q2, Q3 read it)").  Returns the writes the
 *		merge saves per change, over every relation (0: nothing merged).
 */
int
plan_writes_saved(const Table *t, char **text)
{
	StrBuf		sb;
	int			saved = 0;
	int			n;
	const ARow **rels = plan_table_relations(t, &n);

	*text = NULL;
	if (t->nqueries < 2)
		return 0;
	sb_init(&sb);
	for (int i = 0; i < n; i++)
	{
		int			readers = 0;
		bool		dup = false;
		StrBuf		names;

		for (int k = 0; k < i; k++)
			if (plan_streq(rels[k]->schema, rels[i]->schema) && plan_streq(rels[k]->table, rels[i]->table))
				dup = true;
		if (dup)
			continue;
		sb_init(&names);
		for (int qi = 0; qi < t->nqueries; qi++)
		{
			const Query *q = t->queries[qi];
			bool		reads = false;

			for (int r = 0; r < q->nrows; r++)
				if (plan_is_kind(&q->rows[r], "relation") && plan_streq(q->rows[r].schema, rels[i]->schema) &&
					plan_streq(q->rows[r].table, rels[i]->table))
					reads = true;
			if (reads)
				sb_appendf(&names, "%s%s", readers++ ? ", " : "", q->name);
		}
		saved += readers > 1 ? readers - 1 : 0;
		if (readers > 1)
			sb_appendf(&sb, "%s.%s: a change is written to 1 table instead of %d (%s read it)\n",
					   rels[i]->schema, rels[i]->table, readers, names.data);
		else
			sb_appendf(&sb, "%s.%s: a change is written to 1 table (only %s reads it)\n",
					   rels[i]->schema, rels[i]->table, readers ? names.data : "the view");
		sb_free(&names);
	}
	*text = sb.data;
	return saved;
}

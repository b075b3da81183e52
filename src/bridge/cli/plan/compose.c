/*-------------------------------------------------------------------------
 *
 * compose.c
 *	  Composed answers: a statement no single query table serves, which
 *	  reads one partition (or a clustering range of it) of one relation and
 *	  looks each row's partner up by its full primary key in another, is
 *	  served by two query tables and a join of their foreign tables.
 *
 * "The lines of a district's recent orders whose item's stock is below a
 * threshold" (order_line ol JOIN stock s ON s.w = ol.w AND s.i = ol.i_id
 * WHERE ol.w = $1 AND ol.d = $2 AND ol.o >= $3 AND s.quantity < $4) needs
 * ranges on two columns of two relations: no table has both as clustering
 * columns.  Composed, it is two statements of its own:
 *   - the drive: "SELECT <the order_line columns it needs> FROM
 *     order_line ol WHERE ol.w = $1 AND ol.d = $2 AND ol.o >= $3", whose
 *     table is read by the partition and range;
 *   - the lookup: "SELECT <the stock columns it needs> FROM stock s WHERE
 *     s.w = $1 AND s.i = $2", keyed by stock's primary key;
 * and the answer is their foreign tables joined on that key, the other
 * conditions checked on the joined rows: cql_fdw reads the drive's
 * partition, then one lookup partition per row through a parameterized
 * nested loop.  The lookups per call are bounded by the rows of one drive
 * partition (measured on the data and printed in the report), or by the
 * LIMIT when nothing is checked after the join.  Both parts are ordinary
 * queries of the plan (named <query>_drive and <query>_lookup: their tables
 * are measured, loaded, kept current, verified like any other, and merge
 * with other queries' tables), and the statement itself is verified
 * against its source like any other query.
 *
 * Composed: two top-level relations joined by inner joins, the lookup's
 * whole primary key equal to the drive's columns (or to parameters); the
 * drive has an equality on a parameter (its partition).  Refused, with
 * the reason, otherwise: outer joins, collections (select-list
 * subqueries), aggregates, expressions in the select list or ORDER BY,
 * conditions between the two relations other than the key join.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/compose.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* A column one part selects: (alias, column) under an output name. */
typedef struct PartCol
{
	const char *alias;
	const char *column;
	char	   *name;
} PartCol;

/* A part being built: its select list, conditions and parameters. */
typedef struct Part
{
	const ARow *rel;			/* its relation row */
	int			ncols;
	PartCol    *cols;
	StrBuf		where;
	int			nparams;
	char	  **pnames;
	char	  **ptypes;
	int		   *orig;			/* per parameter: the statement's $k (0: none) */
} Part;

static int	lookup_column(const Compose *c, const char *column);

/*
 * part_column
 *		The output name under which part selects (alias, column), added
 *		(named after the output the statement gives it, or the column,
 *		made unique) when it is not selected yet.
 */
static const char *
part_column(Part *part, const char *alias, const char *column, const char *name)
{
	char	   *nm;

	for (int i = 0; i < part->ncols; i++)
		if (plan_streq(part->cols[i].column, column))
			return part->cols[i].name;
	nm = bridge_strdup(name ? name : column);
	for (int n = 2;; n++)
	{
		bool		taken = false;

		for (int i = 0; i < part->ncols; i++)
			if (strcmp(part->cols[i].name, nm) == 0)
				taken = true;
		if (!taken)
			break;
		nm = bridge_printf("%s_%d", name ? name : column, n);
	}
	part->cols = bridge_realloc(part->cols, sizeof(PartCol) * (part->ncols + 1));
	part->cols[part->ncols].alias = alias;
	part->cols[part->ncols].column = column;
	part->cols[part->ncols].name = nm;
	return part->cols[part->ncols++].name;
}

/* A new parameter of part: $n of the part for $orig of the statement. */
static int
part_param(Part *part, const char *name, const char *type, int orig)
{
	for (int k = 0; k < part->nparams; k++)
		if (orig > 0 && part->orig[k] == orig)
			return k + 1;
	part->pnames = bridge_realloc(part->pnames, sizeof(char *) * (part->nparams + 1));
	part->ptypes = bridge_realloc(part->ptypes, sizeof(char *) * (part->nparams + 1));
	part->orig = bridge_realloc(part->orig, sizeof(int) * (part->nparams + 1));
	part->pnames[part->nparams] = bridge_strdup(name);
	part->ptypes[part->nparams] = bridge_strdup(type);
	part->orig[part->nparams] = orig;
	return ++part->nparams;
}

/* The catalog type of column of relation rel, "text" when unknown. */
static const char *
column_type(Plan *p, const ARow *rel, const char *column)
{
	CatRel	   *cr = plan_catalog_rel(p, rel->table);

	for (int i = 0; cr && i < cr->ncols; i++)
		if (strcmp(cr->cols[i], column) == 0)
			return cr->types[i];
	return "text";
}

/*
 * part_query
 *		The Query of a part: "SELECT <cols> FROM <relation> alias WHERE
 *		<conditions>", its parameters declared as the statement declares
 *		them, analyzed like a workload query (derive_parts maps it); stored
 *		at the end of p->queries (its capacity was reserved for parts).
 */
static Query *
part_query(Plan *p, Query *q, Part *part, const char *suffix, const char *what)
{
	Query	   *pq;
	StrBuf		sql;
	StrBuf		params;

	if (p->nqueries >= p->qcap)
		bridge_fatal("%s: no room for the parts of a composition", plan_query_ref(q));
	pq = &p->queries[p->nqueries];
	memset(pq, 0, sizeof(Query));
	sb_init(&sql);
	sb_append(&sql, "SELECT ");
	for (int i = 0; i < part->ncols; i++)
		sb_appendf(&sql, "%s%s.%s AS %s", i ? ", " : "", plan_qi(part->cols[i].alias),
				   plan_qi(part->cols[i].column), plan_qi(part->cols[i].name));
	sb_appendf(&sql, " FROM %s.%s %s WHERE %s", plan_qi(part->rel->schema), plan_qi(part->rel->table),
			   plan_qi(part->rel->alias), part->where.data);
	sb_init(&params);
	for (int k = 0; k < part->nparams; k++)
		sb_appendf(&params, "%s%s %s", k ? ", " : "", part->pnames[k], part->ptypes[k]);
	pq->name = bridge_printf("%s_%s", q->name, suffix);
	pq->description = bridge_printf("%s of %s (a composed answer)", what, q->name);
	pq->params_text = params.data;
	pq->line = q->line;
	pq->nparams = part->nparams;
	pq->pnames = part->pnames;
	pq->ptypes = part->ptypes;
	pq->sql = sql.data;
	pq->part_of = q;
	p->nqueries++;
	plan_analyze(p, pq);
	return pq;
}

/*
 * derive_parts
 *		Map both parts to tables: first on a scratch copy of the plan with
 *		no tables (so that a part no rule serves fails before anything of
 *		the plan changed: the caller then drops the parts), then for real,
 *		where they may merge with the plan's tables.
 */
static void
derive_parts(Plan *p, Query *drive, Query *lookup)
{
	Plan		scratch = *p;

	scratch.ntables = 0;
	scratch.tables = NULL;
	scratch.nwarn = 0;
	scratch.warnings = NULL;
	plan_derive(&scratch, drive);
	plan_derive(&scratch, lookup);
	plan_derive(p, drive);
	plan_derive(p, lookup);
}

/* The table column (index) of a part's output name. */
static int
part_table_column(const Query *pq, const char *name)
{
	for (int o = 0; o < pq->ntargets; o++)
		if (strcmp(pq->tnames[o], name) == 0)
			return pq->tcol[o];
	bridge_fatal("%s: output %s of a composition part has no column", plan_query_ref(pq), name);
}

/*
 * condition
 *		Put the search condition r (an "equality" or "range" row) into
 *		part's WHERE with a parameter of its own.  IN lists ("IN" rows) of
 *		one column become one "IN (...)", at its first row.
 */
static void
condition(const Query *q, Part *part, const ARow *r)
{
	int			k = r->param;
	const char *op = r->op ? r->op : "=";
	char	   *col = bridge_printf("%s.%s", plan_qi(r->alias), plan_qi(r->column));
	int			n;

	if (part->where.len)
		sb_append(&part->where, " AND ");
	if (strcmp(op, "IN") == 0)
	{
		bool		first = true;

		for (int i = 0; i < q->nrows; i++)
		{
			const ARow *o = &q->rows[i];

			if (o == r)
				break;
			if (plan_is_kind(o, "equality") && o->level == 0 && plan_streq(o->op, "IN") &&
				plan_streq(o->alias, r->alias) && plan_streq(o->column, r->column))
				first = false;
		}
		if (!first)
		{
			part->where.len -= 5;
			part->where.data[part->where.len] = '\0';
			return;
		}
		sb_appendf(&part->where, "%s IN (", col);
		for (int i = 0, m = 0; i < q->nrows; i++)
		{
			const ARow *o = &q->rows[i];

			if (plan_is_kind(o, "equality") && o->level == 0 && plan_streq(o->op, "IN") &&
				plan_streq(o->alias, r->alias) && plan_streq(o->column, r->column))
			{
				n = part_param(part, q->pnames[o->param - 1], q->ptypes[o->param - 1], o->param);
				sb_appendf(&part->where, "%s$%d", m++ ? ", " : "", n);
			}
		}
		sb_append(&part->where, ")");
		return;
	}
	n = part_param(part, q->pnames[k - 1], q->ptypes[k - 1], k);
	if (strcmp(op, "= ANY") == 0)
		sb_appendf(&part->where, "%s = ANY($%d)", col, n);
	else
		sb_appendf(&part->where, "%s %s $%d", col, op, n);
}

/*
 * plan_compose_candidate
 *		Whether q reads more than one relation at the top level, so that a
 *		composition could answer it (a statement of one relation that no
 *		table serves is not made servable by one).
 */
bool
plan_compose_candidate(const Query *q)
{
	int			n = 0;

	for (int i = 0; i < q->nrows; i++)
		if (plan_is_kind(&q->rows[i], "relation") && q->rows[i].level == 0)
			n++;
	return n > 1;
}

/*
 * plan_compose
 *		Serve q, which plan_derive refused, by a composition (see the file
 *		comment): its two parts are added to the plan and q->compose says
 *		how to answer it.  Fatal (caught by serve_queries: q is then left
 *		out) with the reason when it cannot be composed.
 */
void
plan_compose(Plan *p, Query *q)
{
	const ARow *rels[2];
	int			nrels = 0;
	int			drive = -1;
	bool		any_eq = false;
	Part		parts[2];
	Compose    *c;

	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];

		if (r->level > 0)
			bridge_fatal("a select-list subquery (a collection) cannot be composed");
		if (plan_is_kind(r, "relation"))
		{
			if (nrels == 2)
				bridge_fatal("a composition joins two relations; the statement has more");
			if (!plan_streq(r->op, "from") && !plan_streq(r->op, "inner"))
				bridge_fatal("an outer join cannot be composed (rows without a partner must stay)");
			rels[nrels++] = r;
		}
		if (plan_is_kind(r, "target") && !plan_streq(r->op, "column") && !plan_streq(r->op, "search"))
			bridge_fatal("output %s is an expression; a composition selects columns", r->name ? r->name : "?");
		if (plan_is_kind(r, "order") && (!r->alias || !r->column))
			bridge_fatal("ORDER BY an expression cannot be composed");
		if (plan_is_kind(r, "filter") && !r->alias)
			bridge_fatal("condition %s mentions both relations (or none); a composition joins them by the lookup's key only",
						 r->detail ? r->detail : "?");
	}
	if (nrels != 2)
		bridge_fatal("a composition joins two relations; the statement reads %d", nrels);
	if (q->nresults > 0)
		bridge_fatal("an aggregate is not composed (a composition serves rows)");

	/*
	 * The lookup: a relation whose whole primary key is equal to columns of
	 * the other (the drive) or to parameters; the drive needs an equality
	 * on a parameter (its partition).
	 */
	for (int d = 0; d < 2 && drive < 0; d++)
	{
		const ARow *l = rels[1 - d];
		int			npk;
		char	  **pk;
		bool		keyed = l->detail != NULL;
		bool		drive_eq = false;

		pk = l->detail ? plan_split_idents(l->detail, &npk) : NULL;
		for (int j = 0; keyed && j < npk; j++)
		{
			bool		found = false;

			for (int i = 0; i < q->nrows && !found; i++)
			{
				const ARow *r = &q->rows[i];

				if (r->level != 0)
					continue;
				if (plan_is_kind(r, "join") &&
					((plan_streq(r->alias, l->alias) && plan_streq(r->column, pk[j]) &&
					  plan_streq(r->other_alias, rels[d]->alias)) ||
					 (plan_streq(r->other_alias, l->alias) && plan_streq(r->other_column, pk[j]) &&
					  plan_streq(r->alias, rels[d]->alias))))
					found = true;
				if (plan_is_kind(r, "equality") && plan_streq(r->op, "=") &&
					plan_streq(r->alias, l->alias) && plan_streq(r->column, pk[j]))
					found = true;
			}
			keyed = found;
		}
		for (int i = 0; i < q->nrows; i++)
			if (plan_is_kind(&q->rows[i], "equality") && plan_streq(q->rows[i].alias, rels[d]->alias))
				drive_eq = true;
		any_eq = any_eq || drive_eq;
		if (keyed && drive_eq)
			drive = d;
	}
	if (drive < 0 && !any_eq)
		bridge_fatal("neither relation is read by a partition (an equality on a parameter), so the lookups per call would not be bounded by the parameters");
	if (drive < 0)
		bridge_fatal("neither relation is looked up by its whole primary key from the other, which is read by a partition");

	memset(parts, 0, sizeof(parts));
	parts[0].rel = rels[drive];
	parts[1].rel = rels[1 - drive];
	sb_init(&parts[0].where);
	sb_init(&parts[1].where);
	c = bridge_malloc(sizeof(Compose));
	memset(c, 0, sizeof(Compose));

	/* the lookup's key: its primary-key columns, then the join */
	{
		int			npk;
		char	  **pk = plan_split_idents(parts[1].rel->detail, &npk);

		for (int j = 0; j < npk; j++)
			(void) part_column(&parts[1], parts[1].rel->alias, pk[j], NULL);
	}
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];
		int			side;

		if (r->level != 0)
			continue;
		if (plan_is_kind(r, "join"))
		{
			const char *dcol = plan_streq(r->alias, parts[0].rel->alias) ? r->column : r->other_column;
			const char *lcol = plan_streq(r->alias, parts[0].rel->alias) ? r->other_column : r->column;

			c->njoin++;
			c->join_drive = bridge_realloc(c->join_drive, sizeof(char *) * c->njoin);
			c->join_lookup = bridge_realloc(c->join_lookup, sizeof(char *) * c->njoin);
			c->join_drive[c->njoin - 1] = (char *) part_column(&parts[0], parts[0].rel->alias, dcol, NULL);
			c->join_lookup[c->njoin - 1] = (char *) part_column(&parts[1], parts[1].rel->alias, lcol, NULL);
			continue;
		}
		side = plan_streq(r->alias, parts[0].rel->alias) ? 0 : 1;
		if (plan_is_kind(r, "target"))
		{
			c->nout++;
			c->out_side = bridge_realloc(c->out_side, sizeof(int) * c->nout);
			c->out_name = bridge_realloc(c->out_name, sizeof(char *) * c->nout);
			c->out_part = bridge_realloc(c->out_part, sizeof(char *) * c->nout);
			c->out_side[c->nout - 1] = plan_streq(r->op, "search") ? -1 - side : side;
			c->out_name[c->nout - 1] = r->name;
			c->out_part[c->nout - 1] = (char *) part_column(&parts[side], r->alias, r->column,
															plan_streq(r->op, "search") ? NULL : r->name);
		}
		else if (plan_is_kind(r, "filter"))
		{
			/* a constant condition of one relation: its part keeps only those rows */
			if (parts[side].where.len)
				sb_append(&parts[side].where, " AND ");
			sb_appendf(&parts[side].where, "(%s)", r->detail);
		}
		else if ((plan_is_kind(r, "equality") || plan_is_kind(r, "range")) && side == 0)
			condition(q, &parts[0], r);
		else if (plan_is_kind(r, "equality") || plan_is_kind(r, "range"))
		{
			/* a condition on the lookup's rows: checked on the joined rows */
			if (plan_streq(r->op, "IN"))
				bridge_fatal("an OR or IN list of parameters on %s.%s (the looked-up relation) is not composed; write it as = ANY",
							 r->alias, r->column);
			c->nlcond++;
			c->lcond = bridge_realloc(c->lcond, sizeof(const ARow *) * c->nlcond);
			c->lcond[c->nlcond - 1] = r;
			(void) part_column(&parts[1], r->alias, r->column, NULL);
		}
		else if (plan_is_kind(r, "order"))
		{
			c->norder++;
			c->order_side = bridge_realloc(c->order_side, sizeof(int) * c->norder);
			c->order_part = bridge_realloc(c->order_part, sizeof(char *) * c->norder);
			c->order_desc = bridge_realloc(c->order_desc, sizeof(bool) * c->norder);
			c->order_side[c->norder - 1] = side;
			c->order_part[c->norder - 1] = (char *) part_column(&parts[side], r->alias, r->column, NULL);
			c->order_desc[c->norder - 1] = plan_streq(r->op, "desc");
		}
	}
	if (parts[0].where.len == 0)
		bridge_fatal("the drive relation %s has no condition on a parameter", parts[0].rel->table);

	/* the lookup is keyed by its primary key: one parameter per column */
	{
		int			npk;
		char	  **pk = plan_split_idents(parts[1].rel->detail, &npk);

		for (int j = 0; j < npk; j++)
		{
			int			n = part_param(&parts[1], pk[j], column_type(p, parts[1].rel, pk[j]), 0);

			sb_appendf(&parts[1].where, "%s%s.%s = $%d", parts[1].where.len ? " AND " : "",
					   plan_qi(parts[1].rel->alias), plan_qi(pk[j]), n);
		}
	}

	c->drive = part_query(p, q, &parts[0], "drive", "the partition read");
	c->drive_orig = parts[0].orig;
	c->lookup = part_query(p, q, &parts[1], "lookup", "the lookups by key");
	derive_parts(p, c->drive, c->lookup);
	c->lookup_cols = parts[1].cols;
	c->nlookup_cols = parts[1].ncols;
	q->compose = c;
	q->table = c->drive->table;
	q->ordered = c->norder > 0;
	q->nvisible = 0;
	for (int i = 0; i < c->nout; i++)
		if (c->out_side[i] >= 0)
			q->nvisible = i + 1;
	plan_compose_params(q);
}

/*
 * plan_compose_params
 *		q->puse of a composed query from its parts, for 004's sample: a
 *		parameter of the drive is its column of the drive's table (as if
 *		that table served q), a condition on the lookup's rows is sampled
 *		from the lookup table's column (op "lookup"), LIMIT as usual.  Run
 *		again after the plan's tables are final (a later merge may move the
 *		drive's columns).
 */
void
plan_compose_params(Query *q)
{
	Compose    *c = q->compose;

	q->table = c->drive->table;
	q->puse = bridge_malloc(sizeof(ParamUse) * (q->nparams + 1));
	for (int k = 0; k < q->nparams; k++)
	{
		q->puse[k].col = -1;
		q->puse[k].op = k + 1 == q->limit_param ? "limit" : NULL;
		q->puse[k].lookup = NULL;
	}
	for (int j = 0; j < c->drive->nparams; j++)
		if (c->drive_orig[j] > 0)
		{
			q->puse[c->drive_orig[j] - 1].col = c->drive->puse[j].col;
			q->puse[c->drive_orig[j] - 1].op = c->drive->puse[j].op;
		}
	for (int i = 0; i < c->nlcond; i++)
	{
		const ARow *r = c->lcond[i];
		const Table *lt = c->lookup->table;

		q->puse[r->param - 1].op = "lookup";
		q->puse[r->param - 1].lookup = lt->cols[lookup_column(c, r->column)].name;
	}
	for (int k = 0; k < q->nparams; k++)
		if (q->puse[k].op == NULL)
			bridge_fatal("%s: parameter \"%s\" is used by no part of the composition", plan_query_ref(q), q->pnames[k]);
}

/* The column index in the lookup's table of the lookup relation's column. */
static int
lookup_column(const Compose *c, const char *column)
{
	for (int i = 0; i < c->nlookup_cols; i++)
		if (strcmp(c->lookup_cols[i].column, column) == 0)
			return part_table_column(c->lookup, c->lookup_cols[i].name);
	bridge_fatal("%s: column %s is not selected by the lookup", plan_query_ref(c->lookup), column);
}

/* The expression of part side's output name over "t" (drive) or "u". */
static char *
side_expr(const Compose *c, int side, const char *partname)
{
	const Query *pq = side == 0 ? c->drive : c->lookup;

	return plan_column_ref(side == 0 ? "t" : "u", &pq->table->cols[part_table_column(pq, partname)]);
}

/*
 * plan_compose_target
 *		The target statement of a composed query: the drive's foreign table
 *		read by its conditions (the statement's parameter numbers), joined
 *		to the lookup's on the lookup's key, the conditions on the lookup's
 *		rows checked, in the statement's order and LIMIT.
 */
char *
plan_compose_target(const Query *q, const char *drive_ft, const char *lookup_ft)
{
	const Compose *c = q->compose;
	StrBuf		sb;
	bool		first = true;

	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int i = 0, n = 0; i < c->nout; i++)
	{
		if (c->out_side[i] < 0)
			continue;
		sb_appendf(&sb, "%s%s AS %s", n++ ? ", " : "", side_expr(c, c->out_side[i], c->out_part[i]),
				   plan_qi(c->out_name[i]));
	}
	sb_appendf(&sb, "\nFROM %s t\nJOIN %s u ON ", drive_ft, lookup_ft);
	for (int j = 0; j < c->njoin; j++)
		sb_appendf(&sb, "%s%s = %s", j ? " AND " : "", side_expr(c, 1, c->join_lookup[j]),
				   side_expr(c, 0, c->join_drive[j]));
	plan_append_where(&sb, c->drive, c->drive->table, c->drive_orig);
	first = strstr(sb.data, "\nWHERE ") == NULL;
	for (int i = 0; i < c->nlcond; i++)
	{
		const ARow *r = c->lcond[i];
		const Column *col = &c->lookup->table->cols[lookup_column(c, r->column)];
		char	   *cast = plan_param_cast(q->pfmt ? q->pfmt[r->param - 1] : NULL, col, plan_streq(r->op, "= ANY"));

		sb_append(&sb, first ? "\nWHERE " : " AND ");
		first = false;
		if (plan_streq(r->op, "= ANY"))
			sb_appendf(&sb, "u.%s = ANY($%d%s)", plan_qi(col->name), r->param, cast);
		else
			sb_appendf(&sb, "u.%s %s $%d%s", plan_qi(col->name), r->op, r->param, cast);
	}
	for (int i = 0; i < c->norder; i++)
		sb_appendf(&sb, "%s%s%s", i ? ", " : "\nORDER BY ", side_expr(c, c->order_side[i], c->order_part[i]),
				   c->order_desc[i] ? " DESC" : "");
	plan_append_limit(&sb, q);
	return sb.data;
}

/*
 * plan_compose_source
 *		The source statement of a composed query: the statement, or its
 *		answers at the precision the parts' tables store them (a timestamp
 *		at the millisecond), as plan_source_sql does for one table.
 */
char *
plan_compose_source(const Query *q)
{
	const Compose *c = q->compose;
	StrBuf		sb;
	bool		any = false;

	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int i = 0, n = 0; i < c->nout; i++)
	{
		const Query *pq;
		const Column *col;
		char	   *ref;

		if (c->out_side[i] < 0)
			continue;
		pq = c->out_side[i] == 0 ? c->drive : c->lookup;
		col = &pq->table->cols[part_table_column(pq, c->out_part[i])];
		ref = bridge_printf("s.%s", plan_qi(c->out_name[i]));
		if (plan_stored_converted(col))
		{
			sb_appendf(&sb, "%s%s AS %s", n++ ? ", " : "", plan_store_expr(col->store, ref, true),
					   plan_qi(c->out_name[i]));
			any = true;
		}
		else
			sb_appendf(&sb, "%s%s", n++ ? ", " : "", ref);
	}
	if (!any)
	{
		sb_free(&sb);
		return bridge_strdup(q->sql);
	}
	sb_appendf(&sb, " FROM (%s) s", q->sql);
	return sb.data;
}

/*
 * plan_compose_bound
 *		The lookups one call of a composed query makes at most: the rows of
 *		the widest drive partition measured on the data (times the values
 *		of an IN list, which the report says), or the constant LIMIT when
 *		no condition is checked after the join and it is smaller.
 */
long
plan_compose_bound(const Query *q)
{
	const Compose *c = q->compose;
	long		bound = c->drive->table->max_rows;

	if (c->nlcond == 0)
		for (int i = 0; i < q->nrows; i++)
			if (plan_is_kind(&q->rows[i], "limit") && q->rows[i].level == 0 &&
				q->rows[i].param == 0 && q->rows[i].detail && atol(q->rows[i].detail) > 0 &&
				atol(q->rows[i].detail) < bound)
				bound = atol(q->rows[i].detail);
	return bound;
}

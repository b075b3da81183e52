/*-------------------------------------------------------------------------
 *
 * rules.c
 *	  The mapping rules of query-first modeling (Chebotko et al.), applied
 *	  to one analyzed workload query: the serving table's partition key,
 *	  clustering columns, static columns, CQL types, name and view shape
 *	  (merge.c then lets a planned table serve it when the keys agree).
 *
 * Rules, as implemented here (every decision is also written to
 * model.txt with the rule that made it):
 *
 *	MR2	Every column compared with "= $k" at the top level goes into the
 *		partition key, in parameter order.  Without one the query cannot
 *		be served from one partition: an error (a token-range scan is not
 *		a query table).
 *	MR3	The column compared with a range (<, <=, >, >= $k) becomes the
 *		first clustering column.  At most one range column per query.
 *	MR4	ORDER BY columns become the next clustering columns with the
 *		query's direction (C-up / C-down).  Columns bound by "=" are
 *		constant in a partition and skipped; an ORDER BY that would put
 *		another column before the range column cannot be served in order:
 *		an error.
 *	MR5	Every relation of the top level must be identified by the key:
 *		a relation is "determined" when one of its keys (primary key or a
 *		NOT NULL unique constraint) lies in the closure of the key columns
 *		under the join equalities; a determined relation adds all its
 *		columns to the closure (functional dependency), so a relation
 *		reached through a join on another relation's full primary key
 *		needs no columns of its own (reservation -> guest).  Relations not
 *		determined add their primary key columns, in FROM order, as
 *		clustering columns; this is the minimal key the constraints prove
 *		unique.  Relations of sublinks are folded into collections and
 *		add no key columns.
 *	static	With clustering columns, a non-key column whose relation is
 *		determined by the partition key alone (Q5: room.rate) is static;
 *		so is a collection whose correlation columns are.
 *	types	types.c: CQL types, the address UDT, collections.
 *	hidden	A key column that is no output of the query (Q1/Q3 ORDER BY
 *		p.id) is taken from the lineage (primary-key columns of top-level
 *		relations) and named <table>_<column> (point_of_interest_id); any
 *		other non-output search/order column is an error.
 *	outer	A clustering column from the NULL-extended side of an outer join
 *		(Q5 a.name) cannot hold NULL in Cassandra: those result rows are
 *		left out of the view, with a warning.
 *	filter	WHERE conjuncts without a parameter stay in the view (the
 *		analysis' base SQL keeps them): the table stores only the rows
 *		that pass them (Q4 is_available), with a note.
 *	names	<entity>s_by_<partition key columns>, entity = the relation most
 *		output columns come from (ties: FROM order); a table keyed by
 *		exactly its entity's primary key without clustering is just
 *		<entity>s (the docs' "hotels", "guests"); a clash gets _2, _3...
 *	merge	merge.c: a query whose key equals a planned table's and whose
 *		rows the table holds or can tell apart shares that table.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/rules.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* ---------------------------------------------------------------- */
/* column equivalence (join equalities) and MR5 closure				*/
/* ---------------------------------------------------------------- */

typedef struct Rel0
{
	const ARow *row;			/* the "relation" row */
	CatRel	   *cat;
	bool		nullable;		/* joined LEFT/RIGHT/FULL: may be NULL-extended */
} Rel0;

typedef struct Ctx
{
	Plan	   *p;
	Query	   *q;
	int			nrels;
	Rel0	   *rels;
	int			nnodes;
	char	  **nodes;			/* "alias.column" */
	int		   *parent;
	Table	   *t;
} Ctx;

/*
 * node_find_or_add
 *		The node of column (alias, column) in the column equivalence graph,
 *		added when new.
 */
static int
node_find_or_add(Ctx *c, const char *alias, const char *column)
{
	char	   *key = bridge_printf("%s.%s", alias, column);

	for (int i = 0; i < c->nnodes; i++)
		if (strcmp(c->nodes[i], key) == 0)
		{
			free(key);
			return i;
		}
	c->nodes = bridge_realloc(c->nodes, sizeof(char *) * (c->nnodes + 1));
	c->parent = bridge_realloc(c->parent, sizeof(int) * (c->nnodes + 1));
	if (!c->nodes || !c->parent)
		bridge_fatal("out of memory");
	c->nodes[c->nnodes] = key;
	c->parent[c->nnodes] = c->nnodes;
	return c->nnodes++;
}

/*
 * node_class
 *		The representative of node i's equivalence class (union-find root).
 */
static int
node_class(Ctx *c, int i)
{
	while (c->parent[i] != i)
		i = c->parent[i];
	return i;
}

/*
 * class_of
 *		The equivalence class of column (alias, column).
 */
static int
class_of(Ctx *c, const char *alias, const char *column)
{
	return node_class(c, node_find_or_add(c, alias, column));
}

/*
 * node_union
 *		Join the classes of nodes a and b (a join equality); the smaller
 *		index becomes the root, so classes do not depend on the order of
 *		unions.
 */
static void
node_union(Ctx *c, int a, int b)
{
	a = node_class(c, a);
	b = node_class(c, b);
	/* smaller index wins, so classes do not depend on union order */
	if (a < b)
		c->parent[b] = a;
	else if (b < a)
		c->parent[a] = b;
}

/*
 * rel_by_alias
 *		The top-level relation with that alias, or NULL.
 */
static Rel0 *
rel_by_alias(Ctx *c, const char *alias)
{
	for (int i = 0; i < c->nrels; i++)
		if (plan_streq(c->rels[i].row->alias, alias))
			return &c->rels[i];
	return NULL;
}

/*
 * Closure of a set of column classes under "a determined relation
 * determines all its columns".  in/out: det[] indexed by node class.
 */
static void
closure(Ctx *c, bool *det, bool *reldet)
{
	bool		changed = true;

	for (int i = 0; i < c->nrels; i++)
		reldet[i] = false;
	while (changed)
	{
		changed = false;
		for (int i = 0; i < c->nrels; i++)
		{
			Rel0	   *r = &c->rels[i];

			if (reldet[i])
				continue;
			for (int k = 0; k < r->cat->nkeys && !reldet[i]; k++)
			{
				int			n;
				char	  **kc = plan_split_idents(r->cat->keys[k], &n);
				bool		all = n > 0;

				/* merges rows at the millisecond Cassandra stores */
				if (r->cat->key_merged && r->cat->key_merged[k] > 0)
					continue;

				for (int j = 0; j < n; j++)
					if (!det[class_of(c, r->row->alias, kc[j])])
						all = false;
				if (all)
					reldet[i] = true;
			}
			if (reldet[i])
			{
				changed = true;
				for (int j = 0; j < r->cat->ncols; j++)
					det[class_of(c, r->row->alias, r->cat->cols[j])] = true;
			}
		}
	}
}

/*
 * outer_joined_clustering
 *		The relation of clustering column col when it comes from the
 *		NULL-extended side of an outer join, else NULL.  Rows where such a
 *		column is NULL cannot be stored (a key column is never NULL): the
 *		shaped query leaves them out and the table gets a warning.
 */
static Rel0 *
outer_joined_clustering(Ctx *c, const Column *col)
{
	Rel0	   *rel;

	if (col->kind != COL_CLUSTERING || !col->alias)
		return NULL;
	rel = rel_by_alias(c, col->alias);
	return rel && rel->nullable ? rel : NULL;
}

/* ---------------------------------------------------------------- */
/* table columns													*/
/* ---------------------------------------------------------------- */

/*
 * The table column holding the value of (alias, column): an output
 * column of the same equivalence class, else a hidden key column built
 * from the lineage (primary-key columns of top-level relations only).
 */
static int
column_for_ref(Ctx *c, const char *alias, const char *column, bool create)
{
	Table	   *t = c->t;
	int			cls = class_of(c, alias, column);

	/* exact reference first, then any column of the same class */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < t->ncols; i++)
		{
			Column	   *col = &t->cols[i];

			if (col->shape != SHAPE_PLAIN && col->shape != SHAPE_HIDDEN)
				continue;
			if (!col->alias)
				continue;
			if (pass == 0 && plan_streq(col->alias, alias) && plan_streq(col->column, column))
				return i;
			if (pass == 1 && class_of(c, col->alias, col->column) == cls)
				return i;
		}
	if (!create)
		return -1;

	/* a primary-key column of a top-level relation in the class */
	for (int pass = 0; pass < 2; pass++)
		for (int r = 0; r < c->nrels; r++)
		{
			Rel0	   *rel = &c->rels[r];
			int			n;
			char	  **pk;

			if (!rel->row->detail)
				continue;
			pk = plan_split_idents(rel->row->detail, &n);
			for (int j = 0; j < n; j++)
			{
				bool		hit = pass == 0 ? (plan_streq(rel->row->alias, alias) && plan_streq(pk[j], column))
					: class_of(c, rel->row->alias, pk[j]) == cls;

				if (hit)
				{
					char	   *nm = bridge_printf("%s_%s", rel->row->table, pk[j]);
					int			ci;
					Column	   *col;
					const char *fdw = NULL;
					const char *ctype = NULL;

					for (int k = 0; k < rel->cat->ncols; k++)
						if (strcmp(rel->cat->cols[k], pk[j]) == 0)
							ctype = rel->cat->types[k];
					if (plan_find_column(t, nm) >= 0)
						nm = bridge_printf("%s_%s_%s", rel->row->table, rel->row->alias, pk[j]);
					ci = plan_add_column(t, nm);
					col = &t->cols[ci];
					col->shape = SHAPE_HIDDEN;
					col->alias = rel->row->alias;
					col->column = pk[j];
					col->src_type = bridge_strdup(ctype ? ctype : "text");
					col->cql_type = bridge_strdup(plan_require_cql(c->q, nm, col->src_type, &fdw));
					col->pg_type = bridge_strdup(fdw);
					plan_set_mapping(col, plan_type_map(col->src_type, NULL));
					col->expr = bridge_printf("q.%s", plan_qi(bridge_printf("lin_%s_%s", rel->row->alias, pk[j])));
					col->source = bridge_printf("%s.%s.%s (key column, not an output of the query)",
												rel->row->schema, rel->row->table, pk[j]);
					return ci;
				}
			}
		}
	bridge_fatal_hint("Add the column to the SELECT list of the query.",
					  "%s: %s.%s is a search or ordering attribute but neither an output column nor a primary-key column",
					  plan_query_ref(c->q), alias, column);
}

/* ---------------------------------------------------------------- */
/* keys																*/
/* ---------------------------------------------------------------- */

/*
 * set_key
 *		Make column ci of t the next partition-key or clustering column,
 *		with the rule that placed it (written to model.txt).
 */
static void
set_key(Table *t, int ci, ColKind kind, const char *rule)
{
	Column	   *col = &t->cols[ci];

	if (kind == COL_PARTITION)
		col->position = t->npk++;
	else
		col->position = t->nck++;
	col->kind = kind;
	col->rule = bridge_strdup(rule);
}

/*
 * search_column
 *		The table column of search attribute r (an "equality" or "range" row
 *		of parameter r->param), recorded as that parameter's use with
 *		operator op.  Only top-level search attributes can form a key: one
 *		inside a sublink is fatal.
 */
static int
search_column(Ctx *c, const ARow *r, char *op)
{
	Query	   *q = c->q;
	int			k = r->param;
	int			ci;

	if (r->level != 0)
		bridge_fatal("%s: parameter $%d (%s) is compared inside a sublink; only top-level search attributes can form a key",
					 plan_query_ref(q), k, q->pnames[k - 1]);
	ci = column_for_ref(c, r->alias, r->column, true);
	q->puse[k - 1].col = ci;
	q->puse[k - 1].op = op;
	return ci;
}

/*
 * derive_keys
 *		The key of the query's table: MR2 (equality search attributes ->
 *		partition key), MR3 (one range -> first clustering column), MR4
 *		(ORDER BY -> clustering columns) and MR5 (clustering columns until
 *		the key determines a row), then static columns and the outer-join
 *		warnings.
 */
static void
derive_keys(Ctx *c)
{
	Query	   *q = c->q;
	Table	   *t = c->t;
	int			range_col = -1;
	const char *range_alias = NULL;
	const char *range_column = NULL;
	bool	   *det;
	bool	   *reldet;
	int			next_ck = 0;

	q->puse = bridge_malloc(sizeof(ParamUse) * (q->nparams + 1));
	for (int k = 0; k < q->nparams; k++)
	{
		q->puse[k].col = -1;
		q->puse[k].op = NULL;
		q->puse[k].lookup = NULL;
	}

	/* MR2: equality search attributes -> partition key, in parameter order */
	for (int k = 1; k <= q->nparams; k++)
		for (int i = 0; i < q->nrows; i++)
		{
			const ARow *r = &q->rows[i];
			int			ci;

			if (!plan_is_kind(r, "equality") || r->param != k)
				continue;
			/* "=", or an IN list ("= ANY", "IN"): the single-value form's key */
			ci = search_column(c, r, (char *) (r->op ? r->op : "="));
			if (t->cols[ci].kind != COL_PARTITION)
				set_key(t, ci, COL_PARTITION, bridge_printf("MR2 equality %s.%s %s $%d", r->alias, r->column,
															 r->op ? r->op : "=", k));
		}
	if (t->npk == 0 && q->nresults > 0)
		bridge_fatal_hint("Serve it with a counter table or a summary table the stream maintains (cqlbridge builds neither), or compute it from a query that has an equality on a parameter.",
						  "%s: an aggregate across partitions (no equality predicate on a parameter): a query table serves aggregates within one partition only (MR2)",
						  plan_query_ref(q));
	if (t->npk == 0)
		bridge_fatal_hint("Add an equality search attribute (column = :'param'); it becomes the partition key (MR2).",
						  "%s: the query has no equality predicate on a parameter, so no partition key: a Cassandra table cannot serve it from one partition",
						  plan_query_ref(q));

	/* MR3: one range search attribute -> first clustering column */
	for (int k = 1; k <= q->nparams; k++)
		for (int i = 0; i < q->nrows; i++)
		{
			const ARow *r = &q->rows[i];
			int			ci;

			if (!plan_is_kind(r, "range") || r->param != k)
				continue;
			ci = search_column(c, r, r->op);
			if (t->cols[ci].kind == COL_PARTITION)
				continue;
			if (range_col >= 0 && range_col != ci)
				bridge_fatal_hint("Cassandra restricts one clustering column by a range (MR3); split the query.",
								  "%s: ranges on two columns (%s.%s and %s.%s)",
								  plan_query_ref(q), range_alias, range_column, r->alias, r->column);
			if (range_col < 0)
			{
				range_col = ci;
				range_alias = r->alias;
				range_column = r->column;
				set_key(t, ci, COL_CLUSTERING, bridge_printf("MR3 range %s.%s %s $%d", r->alias, r->column, r->op, k));
			}
		}

	/* a LIMIT parameter limits the target query's rows: no column */
	if (q->limit_param > 0 && q->puse[q->limit_param - 1].col < 0)
		q->puse[q->limit_param - 1].op = "limit";
	for (int k = 0; k < q->nparams; k++)
		if (q->puse[k].col < 0 && k + 1 != q->limit_param)
			bridge_fatal_hint("A parameter must be a search attribute: column = :'p' or a range on a column.",
							  "%s: parameter \"%s\" is not compared with a column by =, <, <=, > or >=, nor in an IN list or LIMIT",
							  plan_query_ref(q), q->pnames[k]);

	/* MR4: ordering attributes -> clustering columns with direction */
	for (int o = 1;; o++)
	{
		const ARow *r = plan_find_row(q, "order", 0, o);
		int			ci;
		bool		desc;

		if (!r)
			break;
		q->ordered = true;
		if (r->alias && r->column)
			ci = column_for_ref(c, r->alias, r->column, true);
		else if (r->name && plan_find_column(t, r->name) >= 0)
			ci = plan_find_column(t, r->name);
		else
			bridge_fatal_hint("Order by plain columns only.",
							  "%s: ORDER BY key %d (%s) is an expression; a clustering order cannot serve it",
							  plan_query_ref(q), o, r->detail ? r->detail : "?");
		desc = plan_streq(r->op, "desc");
		if (t->cols[ci].kind == COL_PARTITION)
			continue;			/* constant inside the partition */
		if (t->cols[ci].kind == COL_CLUSTERING)
		{
			if (t->cols[ci].position != next_ck)
			{
				if (t->cols[ci].position < next_ck)
					continue;	/* repeated ORDER BY key */
				bridge_fatal("%s: ORDER BY %s cannot be served: it is clustering column %d, but ORDER BY needs it at %d",
							 plan_query_ref(q), t->cols[ci].name, t->cols[ci].position + 1, next_ck + 1);
			}
			t->cols[ci].desc = desc;
			if (ci == range_col)
			{
				char	   *old = t->cols[ci].rule;

				t->cols[ci].rule = bridge_printf("%s; MR4 ORDER BY %s", old, desc ? "DESC" : "ASC");
			}
			next_ck++;
			continue;
		}
		if (range_col >= 0 && next_ck == 0)
			bridge_fatal_hint("Order by the range column first.",
							  "%s: ORDER BY %s puts it before the range column %s, which must be the first clustering column (MR3)",
							  plan_query_ref(q), t->cols[ci].name, t->cols[range_col].name);
		set_key(t, ci, COL_CLUSTERING, bridge_printf("MR4 ORDER BY %s.%s %s", r->alias ? r->alias : "",
													 r->column ? r->column : t->cols[ci].name, desc ? "DESC" : "ASC"));
		t->cols[ci].desc = desc;
		next_ck++;
	}

	/* an aggregate query's answer is ordered by its own ORDER BY */
	if (q->nresults > 0)
		q->ordered = q->nrorder > 0;

	/*
	 * MR5: every top-level relation identified by the key.  All nodes
	 * exist by now (every catalog column of every relation), so the
	 * closure arrays can be sized once.
	 */
	det = bridge_malloc(sizeof(bool) * (c->nnodes + 1));
	reldet = bridge_malloc(sizeof(bool) * (c->nrels + 1));
	for (int r = 0; r < c->nrels; r++)
		for (int k = 0; k < c->rels[r].cat->nkeys; k++)
			if (c->rels[r].cat->key_merged && c->rels[r].cat->key_merged[k] > 0)
				plan_table_warn(t, "MR5: key (%s) of %s.%s is LOSSY at the millisecond Cassandra stores timestamps at: %ld rows would merge with another; it does not identify the rows (another key of the table does)",
								c->rels[r].cat->keys[k], c->rels[r].row->schema, c->rels[r].row->table,
								c->rels[r].cat->key_merged[k]);
	for (int r = 0; r < c->nrels; r++)
	{
		Rel0	   *rel = &c->rels[r];
		int			nk;
		char	  **kc;

		memset(det, 0, sizeof(bool) * (c->nnodes + 1));
		for (int i = 0; i < t->ncols; i++)
			if ((t->cols[i].kind == COL_PARTITION || t->cols[i].kind == COL_CLUSTERING) && t->cols[i].alias)
				det[class_of(c, t->cols[i].alias, t->cols[i].column)] = true;
		closure(c, det, reldet);
		if (reldet[r])
			continue;
		if (rel->cat->nkeys == 0)
			bridge_fatal_hint("Give the table a primary key.",
							  "%s: table %s.%s has no primary key or NOT NULL unique key, so rows of the query cannot be made unique (MR5)",
							  plan_query_ref(q), rel->row->schema, rel->row->table);
		kc = NULL;
		for (int k = 0; k < rel->cat->nkeys && !kc; k++)
			if (!rel->cat->key_merged || rel->cat->key_merged[k] == 0)
				kc = plan_split_idents(rel->cat->keys[k], &nk);
		if (!kc)
			bridge_fatal_hint("Give the table a key without sub-millisecond timestamps (e.g. an identity column), or store the timestamps at the millisecond (timestamptz(3)).",
							  "%s: every key of table %s.%s merges rows at the millisecond Cassandra stores timestamps at (%ld rows of key (%s) would merge), so rows of the query cannot be made unique (MR5)",
							  plan_query_ref(q), rel->row->schema, rel->row->table,
							  rel->cat->key_merged[0], rel->cat->keys[0]);
		for (int j = 0; j < nk; j++)
		{
			int			ci;

			if (det[class_of(c, rel->row->alias, kc[j])])
				continue;
			ci = column_for_ref(c, rel->row->alias, kc[j], true);
			if (t->cols[ci].kind == COL_PARTITION || t->cols[ci].kind == COL_CLUSTERING)
				continue;
			set_key(t, ci, COL_CLUSTERING, bridge_printf("MR5 key of %s.%s", rel->row->schema, rel->row->table));
			det[class_of(c, rel->row->alias, kc[j])] = true;
		}
	}

	/*
	 * Static columns: with clustering columns, the columns of relations
	 * determined by the partition key alone have one value per partition.
	 */
	if (t->nck > 0)
	{
		memset(det, 0, sizeof(bool) * (c->nnodes + 1));
		for (int i = 0; i < t->ncols; i++)
			if (t->cols[i].kind == COL_PARTITION && t->cols[i].alias)
				det[class_of(c, t->cols[i].alias, t->cols[i].column)] = true;
		closure(c, det, reldet);
		for (int i = 0; i < t->ncols; i++)
		{
			Column	   *col = &t->cols[i];
			bool		st = false;

			if (col->kind != COL_REGULAR)
				continue;
			if ((col->shape == SHAPE_PLAIN || col->shape == SHAPE_UDT) && col->alias)
			{
				Rel0	   *rel = rel_by_alias(c, col->alias);

				st = rel && reldet[rel - c->rels];
			}
			else if (col->shape == SHAPE_COLLECTION)
			{
				st = true;
				for (int k = 0; k < q->nrows; k++)
				{
					const ARow *cr = &q->rows[k];

					if (plan_streq(cr->kind, "correlation") && cr->level == col->level &&
						!det[class_of(c, cr->other_alias, cr->other_column)])
						st = false;
				}
			}
			if (st)
			{
				col->kind = COL_STATIC;
				col->rule = bridge_strdup("static: determined by the partition key");
			}
		}
	}

	/* clustering columns from the NULL-extended side of an outer join */
	for (int i = 0; i < t->ncols; i++)
	{
		Column	   *col = &t->cols[i];
		Rel0	   *rel = outer_joined_clustering(c, col);

		if (rel)
			plan_table_warn(t, "%s: clustering column %s comes from the outer-joined %s.%s; result rows where it is NULL "
							"(e.g. no matching %s) cannot be stored and are left out of the load",
							q->name, col->name, rel->row->schema, rel->row->table, rel->row->table);
	}
	free(det);
	free(reldet);
}

/* order: partition key, clustering, then the other columns in output order */
static void
order_columns(Table *t, Query *q)
{
	Column	   *sorted = bridge_malloc(sizeof(Column) * (t->ncols + 1));
	int		   *map = bridge_malloc(sizeof(int) * (t->ncols + 1));
	int			n = 0;

	for (int pass = 0; pass < 3; pass++)
	{
		if (pass < 2)
		{
			int			cnt = pass == 0 ? t->npk : t->nck;
			ColKind		k = pass == 0 ? COL_PARTITION : COL_CLUSTERING;

			for (int pos = 0; pos < cnt; pos++)
				for (int i = 0; i < t->ncols; i++)
					if (t->cols[i].kind == k && t->cols[i].position == pos)
					{
						map[i] = n;
						sorted[n++] = t->cols[i];
					}
		}
		else
			for (int i = 0; i < t->ncols; i++)
				if (t->cols[i].kind == COL_STATIC || t->cols[i].kind == COL_REGULAR)
				{
					map[i] = n;
					sorted[n++] = t->cols[i];
				}
	}
	for (int o = 0; o < q->ntargets; o++)
		q->tcol[o] = map[q->tcol[o]];
	for (int k = 0; k < q->nparams; k++)
		if (q->puse[k].col >= 0)
			q->puse[k].col = map[q->puse[k].col];
	free(t->cols);
	t->cols = sorted;
	free(map);
}

/*
 * build_shape
 *		The table's lineage columns and its shaped query (t->shaped): the
 *		shape select over the lineage query, without the rows whose outer-
 *		joined clustering column is NULL.
 */
static void
build_shape(Ctx *c)
{
	Table	   *t = c->t;
	Query	   *q = c->q;
	StrBuf		sb;
	int			nnull = 0;

	/* lineage columns: lin_<alias>_<pk column> of every top-level relation */
	t->nlin = 0;
	t->lin = NULL;
	for (int r = 0; r < c->nrels; r++)
	{
		int			n;
		char	  **pk;

		if (!c->rels[r].row->detail)
			continue;
		pk = plan_split_idents(c->rels[r].row->detail, &n);
		for (int j = 0; j < n; j++)
		{
			t->lin = bridge_realloc(t->lin, sizeof(char *) * (t->nlin + 1));
			t->lin[t->nlin++] = bridge_printf("lin_%s_%s", c->rels[r].row->alias, pk[j]);
		}
	}
	sb_init(&sb);
	for (int i = 0; i < t->ncols; i++)
	{
		Column	   *col = &t->cols[i];

		if (outer_joined_clustering(c, col))
			sb_appendf(&sb, "%s%s IS NOT NULL", nnull++ ? " AND " : "\nWHERE ", col->expr);
	}
	t->source = q->lineage;
	t->shape_where = sb.data;
	t->shaped = bridge_printf("%s\nFROM (%s) q%s", plan_shape_select(t), t->source, t->shape_where);
}

/*
 * check_key_types
 *		Refuse a key column whose mapping Cassandra or cql_fdw cannot use
 *		in a primary key, naming the column and why: a duration (Cassandra
 *		allows none in a key), json/jsonb stored as text (equal values can
 *		have different texts, so a lookup by = would miss rows), an array
 *		(a lookup by = is not sent to Cassandra, so the query would scan).
 */
static void
check_key_types(Query *q, Table *t)
{
	for (int i = 0; i < t->npk + t->nck; i++)
	{
		const Column *c = &t->cols[i];
		const char *why = NULL;

		if (strcmp(c->cql_type, "duration") == 0)
			why = "Cassandra allows no duration in a primary key";
		else if (c->store == STORE_TEXT)
			why = "it is stored as text, and equal json values can have different texts (1.0 and 1), so a lookup by = would miss rows";
		else if (c->store == STORE_ARRAY || c->store == STORE_ARRAY_MS)
			why = "a key column would be a frozen list, which cql_fdw does not look up by =, so the query would read the whole table";
		if (why)
			bridge_fatal_hint("Search and order by a column of another type (the array, json or interval can be a value of the table).",
							  "%s: key column \"%s\" has type %s, which cannot be part of a Cassandra key: %s",
							  plan_query_ref(q), c->name, c->src_type ? c->src_type : c->cql_type, why);
	}
}

/*
 * cassandra_table_name
 *		A Cassandra table name from the name built of relation and column
 *		names: Cassandra accepts only [A-Za-z0-9_] (up to 48 characters), and
 *		unquoted CQL names are lower case.  Upper-case ASCII letters become
 *		lower case; every run of other characters (quotes, commas, '$',
 *		spaces, non-ASCII letters) becomes one '_'.  A name longer than 44
 *		bytes keeps 35 and gets '_' and 8 hex digits of a hash of the whole
 *		name, leaving room for the "_2" suffix of a name collision.
 */
static char *
cassandra_table_name(const char *built)
{
	StrBuf		sb;
	bool		replaced = false;
	uint32_t	h = 2166136261u;	/* FNV-1a */

	sb_init(&sb);
	for (const unsigned char *c = (const unsigned char *) built; *c; c++)
	{
		char		ch[2] = {0, 0};

		h ^= *c;
		h *= 16777619u;
		if ((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')
			ch[0] = (char) *c;
		else if (*c >= 'A' && *c <= 'Z')
			ch[0] = (char) (*c - 'A' + 'a');
		else
		{
			if (!replaced && sb.len > 0 && sb.data[sb.len - 1] != '_')
				sb_append(&sb, "_");
			replaced = true;
			continue;
		}
		replaced = false;
		sb_append(&sb, ch);
	}
	while (sb.len > 0 && sb.data[sb.len - 1] == '_' && replaced)
		sb.data[--sb.len] = '\0';
	if (sb.len == 0)
		sb_append(&sb, "t");
	if (sb.len > 44)
	{
		char	   *s = bridge_printf("%.35s_%08x", sb.data, (unsigned) h);

		sb_free(&sb);
		return s;
	}
	return sb.data;
}

/*
 * table_name
 *		The Cassandra name of the query's table: what it holds "by" its
 *		partition key, built from the most specific relation and the key's
 *		columns (cassandra_table_name makes it valid).
 */
static char *
table_name(Ctx *c)
{
	Table	   *t = c->t;
	Query	   *q = c->q;
	int			best = -1;
	int			bestn = 0;
	Rel0	   *ent;
	StrBuf		sb;
	bool		is_pk = false;

	/* entity: the top-level relation most output columns come from */
	for (int r = 0; r < c->nrels; r++)
	{
		int			n = 0;

		for (int i = 0; i < q->nrows; i++)
			if (plan_is_kind(&q->rows[i], "target") && plan_streq(q->rows[i].op, "column") &&
				plan_streq(q->rows[i].alias, c->rels[r].row->alias))
				n++;
		if (n > bestn)
		{
			bestn = n;
			best = r;
		}
	}
	if (best < 0)
		best = 0;
	ent = &c->rels[best];
	t->entity = bridge_printf("%s.%s", ent->row->schema, ent->row->table);

	/* keyed by exactly the entity's primary key, no clustering: "<entity>s" */
	if (t->nck == 0 && ent->row->detail)
	{
		int			n;
		char	  **pk = plan_split_idents(ent->row->detail, &n);

		if (n == t->npk)
		{
			is_pk = true;
			for (int j = 0; j < n; j++)
			{
				bool		hit = false;

				for (int i = 0; i < t->ncols; i++)
					if (t->cols[i].kind == COL_PARTITION && t->cols[i].alias &&
						class_of(c, t->cols[i].alias, t->cols[i].column) == class_of(c, ent->row->alias, pk[j]))
						hit = true;
				if (!hit)
					is_pk = false;
			}
		}
	}
	sb_init(&sb);
	sb_append(&sb, plan_plural(ent->row->table));
	if (!is_pk)
	{
		sb_append(&sb, "_by");
		for (int pos = 0; pos < t->npk; pos++)
			for (int i = 0; i < t->ncols; i++)
				if (t->cols[i].kind == COL_PARTITION && t->cols[i].position == pos)
					sb_appendf(&sb, "_%s", t->cols[i].name);
	}
	return cassandra_table_name(sb.data);
}

/*
 * plan_derive
 *		Build the serving table of one analyzed query and add it to the
 *		plan, or let a planned table with a compatible key serve it too
 *		(merge.c).
 */
void
plan_derive(Plan *p, Query *q)
{
	Ctx			c;
	Table	   *t = bridge_malloc(sizeof(Table));

	memset(&c, 0, sizeof(c));
	memset(t, 0, sizeof(Table));
	c.p = p;
	c.q = q;
	c.t = t;

	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];

		if (!plan_is_kind(r, "relation") || r->level != 0)
			continue;
		c.rels = bridge_realloc(c.rels, sizeof(Rel0) * (c.nrels + 1));
		c.rels[c.nrels].row = r;
		c.rels[c.nrels].cat = plan_catalog_rel(p, r->table);
		c.rels[c.nrels].nullable = plan_streq(r->op, "left") || plan_streq(r->op, "full");
		c.nrels++;
	}
	if (c.nrels == 0)
		bridge_fatal("%s: the query reads no table", plan_query_ref(q));
	/* right/full joins make the earlier relations nullable too */
	for (int i = 0; i < c.nrels; i++)
		if (plan_streq(c.rels[i].row->op, "right") || plan_streq(c.rels[i].row->op, "full"))
			for (int j = 0; j < i; j++)
				c.rels[j].nullable = true;

	/* nodes for every column of the top-level relations, then the joins */
	for (int r = 0; r < c.nrels; r++)
		for (int j = 0; j < c.rels[r].cat->ncols; j++)
			node_find_or_add(&c, c.rels[r].row->alias, c.rels[r].cat->cols[j]);
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];

		if (plan_is_kind(r, "join") && r->level == 0 && r->alias && r->other_alias)
			node_union(&c, node_find_or_add(&c, r->alias, r->column),
					   node_find_or_add(&c, r->other_alias, r->other_column));
	}

	plan_build_columns(q, t);
	derive_keys(&c);
	check_key_types(q, t);

	/*
	 * A WHERE conjunct without a parameter (Q4: ra.is_available) stays in
	 * the analysis' base SQL, so the view and the table hold only the rows
	 * that pass it; say so, since the published model may store all rows.
	 */
	for (int i = 0; i < q->nrows; i++)
		if (plan_is_kind(&q->rows[i], "filter") && q->rows[i].level == 0)
			plan_table_warn(t, "%s: filter without parameter (%s) is applied at load and sync: the table stores only the rows that pass it",
							q->name, q->rows[i].detail ? q->rows[i].detail : "?");
	order_columns(t, q);
	build_shape(&c);
	t->name = table_name(&c);
	t->def = q;

	/* a table with the same key can serve it (merge.c) */
	if (plan_merge(p, q, t))
		return;
	/* a name collision: suffix _2, _3 ... */
	{
		char	   *base = t->name;
		int			suffix = 1;
		bool		clash = true;

		while (clash)
		{
			clash = false;
			for (int i = 0; i < p->ntables; i++)
				if (strcmp(p->tables[i]->name, t->name) == 0)
					clash = true;
			if (clash)
				t->name = bridge_printf("%s_%d", base, ++suffix);
		}
	}
	t->queries = bridge_malloc(sizeof(Query *));
	t->queries[0] = q;
	t->nqueries = 1;
	q->table = t;
	p->tables = bridge_realloc(p->tables, sizeof(Table *) * (p->ntables + 1));
	p->tables[p->ntables++] = t;
}

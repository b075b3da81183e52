/*-------------------------------------------------------------------------
 *
 * types.c
 *	  Output columns of a query -> columns of its table, in CQL types:
 *	  scalar types (plan_pg_to_cql), the "address" UDT for the five
 *	  address parts of one relation, and collections for aggregate
 *	  sublinks (set / list / map of address).
 *
 * Decisions (see also rules.c):
 *	- PostgreSQL -> CQL: typemap.c (built-in scalars, enums, domains,
 *	  arrays, json/jsonb, interval, money, citext, ...); a type without a
 *	  mapping is an error naming the query, the column and why (no silent
 *	  text fallback: the values would not sort or compare as in
 *	  PostgreSQL).
 *	- The five address parts (street, city, state_or_province,
 *	  postal_code, country) as output columns of ONE relation under their
 *	  own names become one frozen<address> column "address" (the UDT of
 *	  the published model); parts of different relations stay apart.
 *	- array_agg(DISTINCT x) or array_agg(x ORDER BY x) -> set<T> (no
 *	  duplicates, order = value order, as Cassandra keeps sets);
 *	  array_agg(x ORDER BY other) -> list<T> (order carried by another
 *	  column, e.g. a position); jsonb_object_agg(k, jsonb_build_object(the
 *	  address parts)) -> map<K, frozen<address>>.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/types.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

static const char *const address_parts[] = {
	"street", "city", "state_or_province", "postal_code", "country"
};
#define NADDRESS 5


/*
 * plan_pg_to_cql
 *		PostgreSQL type (format_type text) -> CQL type and the type the
 *		foreign table declares for it (typemap.c decides).  NULL when there
 *		is no mapping.
 */
const char *
plan_pg_to_cql(const char *pgtype, const char **fdwtype)
{
	const PgTypeMap *m = plan_type_map(pgtype, NULL);

	if (!m)
		return NULL;
	if (fdwtype)
		*fdwtype = m->fdw;
	return m->cql;
}

/*
 * plan_require_cql
 *		The CQL type of an output column of PostgreSQL type pgtype (and its
 *		cql_fdw type in *fdw); fatal naming the query, the column and why
 *		when there is none.
 */
const char *
plan_require_cql(const Query *q, const char *what, const char *pgtype, const char **fdw)
{
	const char *why = NULL;
	const PgTypeMap *m = plan_type_map(pgtype, &why);

	if (!m)
		bridge_fatal_hint("Mapped: the built-in scalar types, enums, domains over a mapped type, arrays of them, "
						  "json, jsonb, interval, money, citext, cidr, macaddr (docs/cqlbridge.md, \"Types\"); "
						  "cast the column to one of them in the query, or leave it out.",
						  "%s: column \"%s\" has type %s, which has no CQL mapping: %s",
						  plan_query_ref(q), what, pgtype ? pgtype : "(unknown)", why ? why : "unknown type");
	if (fdw)
		*fdw = m->fdw;
	return m->cql;
}

/*
 * plan_set_mapping
 *		Record on a column how its type is stored (typemap.c): the stored
 *		form of the source view, the model's note and the edge checks.
 */
void
plan_set_mapping(Column *col, const PgTypeMap *m)
{
	col->store = m->store;
	col->note = m->note;
	col->checks = m->checks;
}

/*
 * plan_is_address_part
 *		Whether an output column name is a part of the address UDT (its
 *		index in *idx).
 */
bool
plan_is_address_part(const char *name, int *idx)
{
	for (int i = 0; i < NADDRESS; i++)
		if (plan_streq(name, address_parts[i]))
		{
			if (idx)
				*idx = i;
			return true;
		}
	return false;
}

/* ---------------------------------------------------------------- */
/* targets -> columns												*/
/* ---------------------------------------------------------------- */

/*
 * add_collection
 *		The collection column of an aggregating sublink target: set<T> or
 *		list<T> for array_agg, map<K, frozen<address>> for jsonb_object_agg
 *		of the address parts, typed from the aggregate's argument.
 */
static void
add_collection(Query *q, Table *t, const ARow *tg)
{
	int			level = tg->level;
	const ARow *agg = plan_find_row(q, "aggregate", level, -1);
	int			ci;
	Column	   *col;
	const char *fdw = NULL;
	const char *elem;

	if (!agg)
		bridge_fatal("%s: output column \"%s\" is a sublink without an aggregate (level %d)",
					 plan_query_ref(q), tg->name, level);
	ci = plan_add_column(t, tg->name);
	col = &t->cols[ci];
	col->shape = SHAPE_COLLECTION;
	col->level = level;
	col->src_type = bridge_strdup(tg->type ? tg->type : "jsonb");
	col->expr = bridge_printf("q.%s", plan_qi(tg->name));
	if (plan_streq(agg->op, "array_agg"))
	{
		int			norder = 0;
		bool		own_order = false;
		bool		is_set;
		bool		ms = false;

		if (!agg->column)
			bridge_fatal_hint("Aggregate a plain column: array_agg(t.col ...).",
							  "%s: output column \"%s\": array_agg of an expression has no CQL collection mapping",
							  plan_query_ref(q), tg->name);
		elem = plan_require_cql(q, tg->name, agg->type, &fdw);
		{
			const PgTypeMap *em = plan_type_map(agg->type, NULL);

			if (em->store != STORE_AS_IS && em->store != STORE_MILLISECONDS)
				bridge_fatal_hint("Aggregate a column whose type Cassandra stores as it is (not json, jsonb, money or an array).",
								  "%s: output column \"%s\": array_agg of %s has no CQL collection mapping: %s",
								  plan_query_ref(q), tg->name, agg->type, em->note);
			/* the elements are checked like an array column's */
			col->checks = CHECK_NULL_ELEMENT | em->checks;
			ms = em->store == STORE_MILLISECONDS;
		}
		for (int i = 0; i < q->nrows; i++)
		{
			const ARow *o = &q->rows[i];

			if (!plan_streq(o->kind, "aggregate_order") || o->level != level)
				continue;
			norder++;
			if (norder == 1 && plan_streq(o->alias, agg->alias) && plan_streq(o->column, agg->column))
				own_order = true;
		}

		/*
		 * DISTINCT, or ordered by the element itself: the array has set
		 * semantics (Cassandra sorts sets by value).  Ordered by another
		 * column (a position): a list.
		 */
		is_set = plan_streq(agg->detail, "distinct") || (norder == 1 && own_order);
		col->cql_type = bridge_printf("%s<%s>", is_set ? "set" : "list", elem);
		if (ms)
		{
			/* elements at the millisecond; a set without the duplicates that makes */
			col->store = is_set ? STORE_SET_MS : STORE_ARRAY_MS;
			col->note = is_set ? "set of timestamps: elements stored at the millisecond (date_trunc), those equal there once"
				: "list of timestamps: elements stored at the millisecond (date_trunc)";
		}
		col->pg_type = bridge_printf("%s[]", fdw);
		col->source = bridge_printf("%s of %s.%s.%s (sublink %d%s)",
									is_set ? "set" : "list", agg->schema, agg->table, agg->column,
									level, is_set ? (plan_streq(agg->detail, "distinct") ? ", DISTINCT" : ", ordered by the element")
									: ", ordered by another column");
		if (norder == 0 && !is_set)
			plan_table_warn(t, "%s: column %s: array_agg without ORDER BY becomes a list in no defined order",
							q->name, tg->name);
	}
	else if (plan_streq(agg->op, "jsonb_object_agg") || plan_streq(agg->op, "json_object_agg"))
	{
		int			nf = 0;
		bool		parts[NADDRESS] = {false};
		const char *key;

		if (!agg->column)
			bridge_fatal("%s: output column \"%s\": the key of %s must be a plain column",
						 plan_query_ref(q), tg->name, agg->op);
		key = plan_require_cql(q, tg->name, agg->type, NULL);
		for (int i = 0; i < q->nrows; i++)
		{
			const ARow *f = &q->rows[i];
			int			idx;

			if (!plan_streq(f->kind, "aggregate_field") || f->level != level)
				continue;
			nf++;
			if (!plan_is_address_part(f->name, &idx))
				bridge_fatal_hint("Only jsonb_build_object() of the address parts (street, city, state_or_province, postal_code, country) maps to a UDT.",
								  "%s: output column \"%s\": field \"%s\" of %s has no UDT mapping",
								  plan_query_ref(q), tg->name, f->name ? f->name : "?", agg->op);
			parts[idx] = true;
		}
		for (int i = 0; i < NADDRESS; i++)
			if (!parts[i])
				bridge_fatal("%s: output column \"%s\": %s value lacks the address field \"%s\"",
							 plan_query_ref(q), tg->name, agg->op, address_parts[i]);
		if (nf != NADDRESS)
			bridge_fatal("%s: output column \"%s\": %s value has fields other than the address parts",
						 plan_query_ref(q), tg->name, agg->op);
		col->cql_type = bridge_printf("map<%s, frozen<address>>", key);
		col->pg_type = bridge_strdup("jsonb");
		col->source = bridge_printf("map %s.%s.%s -> address (sublink %d)",
									agg->schema, agg->table, agg->column, level);
		t->has_udt = true;
	}
	else
		bridge_fatal_hint("Supported: array_agg (set/list) and jsonb_object_agg (map).",
						  "%s: output column \"%s\": aggregate %s has no CQL collection mapping",
						  plan_query_ref(q), tg->name, agg->op ? agg->op : "?");
}

/*
 * Address parts of one relation alias that are all five output columns
 * under their own names: returns true and the target ords (by part).
 */
static bool
address_group(const Query *q, const char *alias, int *ords)
{
	int			found = 0;

	for (int i = 0; i < NADDRESS; i++)
		ords[i] = -1;
	for (int i = 0; i < q->nrows; i++)
	{
		const ARow *r = &q->rows[i];
		int			idx;

		if (!plan_streq(r->kind, "target") || !plan_streq(r->op, "column") || !plan_streq(r->alias, alias))
			continue;
		if (plan_is_address_part(r->column, &idx) && plan_streq(r->name, r->column) && ords[idx] < 0)
		{
			ords[idx] = r->ord;
			found++;
		}
	}
	return found == NADDRESS;
}

/*
 * plan_build_columns
 *		The columns of q's table from its output columns: CQL types, the
 *		address UDT, collections of aggregate targets; records which table
 *		column serves each output column.
 */
void
plan_build_columns(Query *q, Table *t)
{
	int			maxord = 0;

	for (int i = 0; i < q->nrows; i++)
		if (plan_is_kind(&q->rows[i], "target") && q->rows[i].ord > maxord)
			maxord = q->rows[i].ord;
	q->ntargets = maxord;
	q->nvisible = maxord;		/* the "search" targets follow the outputs */
	q->tnames = bridge_malloc(sizeof(char *) * (maxord + 1));
	q->tcol = bridge_malloc(sizeof(int) * (maxord + 1));
	q->tfield = bridge_malloc(sizeof(int) * (maxord + 1));
	for (int o = 1; o <= maxord; o++)
	{
		const ARow *tg = plan_find_row(q, "target", 0, o);
		int			idx;

		if (!tg)
			for (int i = 0; i < q->nrows; i++)
				if (plan_is_kind(&q->rows[i], "target") && q->rows[i].ord == o)
					tg = &q->rows[i];
		if (!tg || !tg->name)
			bridge_fatal("%s: output column %d has no name", plan_query_ref(q), o);
		for (int k = 1; k < o; k++)
			if (strcmp(q->tnames[k - 1], tg->name) == 0)
				bridge_fatal_hint("Give every output column its own name (AS ...).",
								  "%s: output column name \"%s\" is used twice", plan_query_ref(q), tg->name);
		q->tnames[o - 1] = tg->name;
		q->tfield[o - 1] = -1;
		if (plan_streq(tg->op, "search") && q->nvisible >= o)
			q->nvisible = o - 1;

		if (plan_streq(tg->op, "aggregate"))
		{
			add_collection(q, t, tg);
			q->tcol[o - 1] = t->ncols - 1;
			continue;
		}
		if (plan_streq(tg->op, "column") && tg->alias && plan_is_address_part(tg->column, &idx) &&
			plan_streq(tg->name, tg->column))
		{
			int			ords[NADDRESS];

			if (address_group(q, tg->alias, ords))
			{
				int			ci = -1;

				/* the UDT column is created at its first part */
				for (int k = 0; k < t->ncols; k++)
					if (t->cols[k].shape == SHAPE_UDT && plan_streq(t->cols[k].alias, tg->alias))
						ci = k;
				if (ci < 0)
				{
					Column	   *col;
					char	   *nm = plan_find_column(t, "address") < 0 ? bridge_strdup("address")
						: bridge_printf("%s_address", tg->table);

					ci = plan_add_column(t, nm);
					col = &t->cols[ci];
					col->shape = SHAPE_UDT;
					col->alias = tg->alias;
					col->nfields = NADDRESS;
					col->fields = bridge_malloc(sizeof(char *) * NADDRESS);
					col->field_types = bridge_malloc(sizeof(char *) * NADDRESS);
					for (int k = 0; k < NADDRESS; k++)
					{
						const ARow *pt = plan_find_row(q, "target", 0, ords[k]);

						if (!pt)
							for (int m = 0; m < q->nrows; m++)
								if (plan_is_kind(&q->rows[m], "target") && q->rows[m].ord == ords[k])
									pt = &q->rows[m];
						col->fields[k] = bridge_strdup(address_parts[k]);
						col->field_types[k] = bridge_strdup(pt && pt->type ? pt->type : "text");
						plan_require_cql(q, address_parts[k], col->field_types[k], NULL);
						if (!plan_streq(plan_pg_to_cql(col->field_types[k], NULL), "text"))
							bridge_fatal("%s: address part \"%s\" has type %s; the address UDT has text fields",
										 plan_query_ref(q), address_parts[k], col->field_types[k]);
					}
					col->cql_type = bridge_strdup("frozen<address>");
					col->pg_type = bridge_strdup("jsonb");
					col->src_type = bridge_strdup("jsonb");
					col->source = bridge_printf("%s.%s.(street, city, state_or_province, postal_code, country) as UDT address",
												tg->schema, tg->table);
					{
						StrBuf		e;

						sb_init(&e);
						sb_append(&e, "jsonb_build_object(");
						for (int k = 0; k < NADDRESS; k++)
							sb_appendf(&e, "%s'%s', q.%s", k ? ", " : "", address_parts[k],
									   plan_qi(address_parts[k]));
						sb_append(&e, ")");
						col->expr = e.data;
					}
					t->has_udt = true;
				}
				q->tcol[o - 1] = ci;
				q->tfield[o - 1] = idx;
				continue;
			}
		}
		{
			int			ci = plan_add_column(t, tg->name);
			Column	   *col = &t->cols[ci];
			const char *fdw = NULL;

			col->shape = SHAPE_PLAIN;
			col->src_type = bridge_strdup(tg->type ? tg->type : "text");
			col->cql_type = bridge_strdup(plan_require_cql(q, tg->name, col->src_type, &fdw));
			col->pg_type = bridge_strdup(fdw);
			plan_set_mapping(col, plan_type_map(col->src_type, NULL));
			col->expr = bridge_printf("q.%s", plan_qi(tg->name));
			if ((plan_streq(tg->op, "column") || plan_streq(tg->op, "search")) && tg->alias)
			{
				col->alias = tg->alias;
				col->column = tg->column;
				col->source = bridge_printf("%s.%s.%s", tg->schema, tg->table, tg->column);
			}
			else
			{
				col->source = bridge_printf("expression: %s", tg->detail ? tg->detail : "?");
				plan_table_warn(t, "%s: column %s has no source column (computed: %s); it is stored as computed at load time",
								q->name, tg->name, tg->detail ? tg->detail : "?");
			}
			q->tcol[o - 1] = ci;
		}
	}
}

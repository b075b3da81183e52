/*-------------------------------------------------------------------------
 *
 * typemap.c
 *	  The CQL type of a PostgreSQL type, chosen by cqlbridge plan: the
 *	  built-in scalar types by name, everything else (enums, domains,
 *	  arrays, json/jsonb, interval, citext, money, cidr, ...) by what the
 *	  catalog says the type is.  Every mapping says how the source view
 *	  stores the value (the stored form, see plan_store_expr), which type
 *	  the foreign table declares, the note model.txt prints, and which
 *	  edge values the plan counts on the data before anything is written
 *	  (edges.c).
 *
 * Decisions (docs/cqlbridge.md, "Types"):
 *	- timestamp[tz] -> timestamp, stored at the millisecond (date_trunc,
 *	  as cql_fdw's default timestamp_precision 'truncate'): the source
 *	  view is the stored value, so load, sync, verify and diff compare
 *	  the same thing.  A typmod of 0 to 3 needs no truncation.
 *	- enum -> text (its label); the foreign table declares the enum.
 *	- domain -> its base type's mapping; the foreign table declares the
 *	  domain (its constraint is checked again on every read).
 *	- T[] -> list<T> (order and duplicates kept); an empty array is stored
 *	  as NULL (Cassandra keeps no empty collection).
 *	- json/jsonb -> text of the value (jsonb: normalized); the foreign
 *	  table column is text and verify casts it back.
 *	- interval -> duration; money -> decimal (its amount); citext, cidr,
 *	  macaddr -> text (their text form, through their own I/O).
 *	- anything else: refused, naming the column and why.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/typemap.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* the plan's connection, for catalog lookups of non-built-in types */
static PGconn *type_conn;

/* types resolved so far (format_type text -> mapping) */
static int	ncache;
static char **cache_names;
static PgTypeMap *cache_maps;

/*
 * plan_types_init
 *		Give the type mapping the plan's connection (the catalog of enums,
 *		domains and arrays is read through it).
 */
void
plan_types_init(PGconn *conn)
{
	type_conn = conn;
}

/*
 * strip_typmod
 *		The type name without its modifier: numeric(8,2) -> numeric,
 *		timestamp(3) with time zone -> timestamp with time zone; *typmod
 *		gets the first number of the modifier, or -1.
 */
static char *
strip_typmod(const char *pgtype, int *typmod)
{
	char		base[256];
	size_t		j = 0;

	*typmod = -1;
	for (const char *s = pgtype; *s && j < sizeof(base) - 1; s++)
	{
		if (*s == '(')
		{
			const char *e = strchr(s, ')');

			if (!e)
				break;
			*typmod = atoi(s + 1);
			s = e;
			if (s[1] == ' ' && j > 0 && base[j - 1] == ' ')
				s++;
			continue;
		}
		base[j++] = *s;
	}
	base[j] = '\0';
	while (j > 0 && base[j - 1] == ' ')
		base[--j] = '\0';
	return bridge_strdup(base);
}

/*
 * builtin
 *		The mapping of a built-in scalar type by its name; false when the
 *		name is not one of them.
 */
static bool
builtin(const char *pgtype, PgTypeMap *m)
{
	static const struct
	{
		const char *pg;
		const char *cql;
		const char *fdw;		/* NULL: the type itself, with its modifier */
		int			checks;
	}			map[] = {
		{"text", "text", "text", 0},
		{"character varying", "text", "text", 0},
		{"character", "text", "text", 0},
		{"smallint", "smallint", "smallint", 0},
		{"integer", "int", "integer", 0},
		{"bigint", "bigint", "bigint", 0},
		{"numeric", "decimal", "numeric", CHECK_NOT_FINITE},
		{"boolean", "boolean", "boolean", 0},
		{"date", "date", "date", CHECK_INFINITE},
		{"timestamp with time zone", "timestamp", "timestamp with time zone", CHECK_INFINITE | CHECK_SUBMS},
		{"timestamp without time zone", "timestamp", "timestamp with time zone", CHECK_INFINITE | CHECK_SUBMS},
		{"uuid", "uuid", "uuid", 0},
		{"real", "float", "real", 0},
		{"double precision", "double", "double precision", 0},
		{"bytea", "blob", "bytea", 0},
		{"inet", "inet", "inet", CHECK_NETMASK},
		{"time without time zone", "time", "time without time zone", CHECK_TIME_24},
		{"interval", "duration", "interval", CHECK_DURATION | CHECK_INFINITE},
	};
	int			typmod;
	char	   *base = strip_typmod(pgtype, &typmod);

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].pg, base) == 0)
		{
			memset(m, 0, sizeof(*m));
			m->cql = map[i].cql;
			m->fdw = map[i].fdw ? map[i].fdw : bridge_strdup(pgtype);
			m->checks = map[i].checks;
			m->store = STORE_AS_IS;
			if (m->checks & CHECK_SUBMS)
			{
				if (typmod >= 0 && typmod <= 3)
					m->checks &= ~CHECK_SUBMS;	/* holds milliseconds at most */
				else
				{
					m->store = STORE_MILLISECONDS;
					m->note = "stored at the millisecond (date_trunc, as cql_fdw's default timestamp_precision 'truncate')";
				}
			}
			if (strcmp(base, "character") == 0)
			{
				/* cql_fdw would store it without the padding anyway */
				m->store = STORE_TEXT;
				m->note = "char(n) -> text without its trailing spaces, as Cassandra stores it (verify casts it back to char(n))";
			}
			else if (strcmp(base, "interval") == 0)
				m->note = "interval -> duration (months, days, nanoseconds: every interval PostgreSQL holds, microseconds included, unless its parts have different signs)";
			free(base);
			return true;
		}
	free(base);
	return false;
}

/*
 * resolve
 *		The mapping of a type that is not a built-in scalar: ask the catalog
 *		what it is.  Sets m->why (and returns false) when there is none.
 */
static bool
resolve(const char *pgtype, PgTypeMap *m, int depth)
{
	const char *params[1] = {pgtype};
	PGresult   *res;
	char		typtype;
	char		category;
	char	   *basename;
	char	   *elemname;
	char	   *check;
	char	   *name;

	memset(m, 0, sizeof(*m));
	if (builtin(pgtype, m))
		return true;
	if (!type_conn || depth > 8)
	{
		m->why = "it is not a type cqlbridge knows";
		return false;
	}
	res = bridge_exec(type_conn, bridge_printf("looking up type %s", pgtype),
					  "SELECT t.typtype, t.typcategory, "
					  "  CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) END, "
					  "  CASE WHEN t.typcategory = 'A' THEN format_type(t.typelem, NULL) END, "
					  "  (SELECT string_agg(pg_get_constraintdef(c.oid), ' AND ' ORDER BY c.conname) "
					  "   FROM pg_constraint c WHERE c.contypid = t.oid), "
					  "  t.typname "
					  "FROM pg_type t WHERE t.oid = $1::regtype", 1, params);
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		m->why = "its type was not found";
		return false;
	}
	typtype = PQgetvalue(res, 0, 0)[0];
	category = PQgetvalue(res, 0, 1)[0];
	basename = PQgetisnull(res, 0, 2) ? NULL : bridge_strdup(PQgetvalue(res, 0, 2));
	elemname = PQgetisnull(res, 0, 3) ? NULL : bridge_strdup(PQgetvalue(res, 0, 3));
	check = PQgetisnull(res, 0, 4) ? NULL : bridge_strdup(PQgetvalue(res, 0, 4));
	name = bridge_strdup(PQgetvalue(res, 0, 5));
	PQclear(res);

	if (typtype == 'd' && basename)
	{
		PgTypeMap	b;

		if (!resolve(basename, &b, depth + 1))
		{
			*m = b;
			m->why = bridge_printf("it is a domain over %s, and %s", basename, b.why);
			return false;
		}
		*m = b;
		/* the FDW converts a domain as its base type and checks it on read */
		if (b.store != STORE_TEXT && b.store != STORE_NUMERIC)
			m->fdw = bridge_strdup(pgtype);
		m->note = bridge_printf("domain over %s%s%s: stored as %s%s%s", basename,
								check ? " " : "", check ? check : "", b.cql,
								b.note ? "; " : "", b.note ? b.note : "");
		return true;
	}
	if (typtype == 'e')
	{
		m->cql = "text";
		m->fdw = bridge_strdup(pgtype);
		m->store = STORE_AS_IS;
		m->is_enum = true;
		m->note = "enum: its label as text (the foreign table declares the enum, so it reads back as the enum)";
		return true;
	}
	if (category == 'A' && elemname)
	{
		PgTypeMap	e;

		if (!resolve(elemname, &e, depth + 1))
		{
			*m = e;
			m->why = bridge_printf("its element type %s has no mapping: %s", elemname, e.why);
			return false;
		}
		if (e.store != STORE_AS_IS && e.store != STORE_MILLISECONDS)
		{
			m->why = bridge_printf("its elements (%s) would be stored converted (%s), which cql_fdw does not do inside a collection",
								   elemname, e.cql);
			return false;
		}
		m->cql = bridge_printf("list<%s>", e.cql);
		m->fdw = bridge_printf("%s[]", e.fdw);
		m->store = e.store == STORE_MILLISECONDS ? STORE_ARRAY_MS : STORE_ARRAY;
		m->checks = CHECK_NULL_ELEMENT | CHECK_MULTIDIM | (e.checks & ~CHECK_SUBMS);
		if (e.checks & CHECK_SUBMS)
			m->checks |= CHECK_SUBMS;
		m->elem_checks = e.checks;
		m->note = bridge_printf("array -> list<%s> (order and duplicates kept; an empty array is stored as NULL, as Cassandra keeps no empty collection)%s%s",
								e.cql, e.note ? "; elements: " : "", e.note ? e.note : "");
		return true;
	}
	if (strcmp(name, "jsonb") == 0 || strcmp(name, "json") == 0)
	{
		m->cql = "text";
		m->fdw = "text";
		m->store = STORE_TEXT;
		m->note = strcmp(name, "jsonb") == 0
			? "jsonb -> text of the normalized value (Cassandra has no JSON type; verify casts it back to jsonb)"
			: "json -> text as written (Cassandra has no JSON type; verify casts it back to json)";
		return true;
	}
	if (strcmp(name, "money") == 0)
	{
		m->cql = "decimal";
		m->fdw = "numeric";
		m->store = STORE_NUMERIC;
		m->note = "money -> decimal of its amount (the text form of money depends on lc_monetary; verify casts it back to money)";
		return true;
	}
	if (category == 'S' || strcmp(name, "cidr") == 0 || strcmp(name, "macaddr") == 0 ||
		strcmp(name, "macaddr8") == 0)
	{
		m->cql = "text";
		m->fdw = bridge_strdup(pgtype);
		m->store = STORE_AS_IS;
		m->note = bridge_printf("%s -> text of its value (cql_fdw converts it through the type's own input and output)", name);
		return true;
	}
	switch (typtype)
	{
		case 'c':
			m->why = "it is a composite type (only the five address parts map to a UDT)";
			break;
		case 'r':
		case 'm':
			m->why = "it is a range type, which has no CQL counterpart";
			break;
		default:
			m->why = bridge_printf("type %s has no CQL counterpart that keeps its values and comparisons", name);
			break;
	}
	return false;
}

/*
 * plan_type_map
 *		The mapping of PostgreSQL type pgtype (format_type text), or NULL
 *		when there is none (*why says why, when why is not NULL).  Cached.
 */
const PgTypeMap *
plan_type_map(const char *pgtype, const char **why)
{
	PgTypeMap	m;

	if (!pgtype)
	{
		if (why)
			*why = "its type is unknown";
		return NULL;
	}
	for (int i = 0; i < ncache; i++)
		if (strcmp(cache_names[i], pgtype) == 0)
		{
			if (!cache_maps[i].cql)
			{
				if (why)
					*why = cache_maps[i].why;
				return NULL;
			}
			return &cache_maps[i];
		}
	(void) resolve(pgtype, &m, 0);
	cache_names = bridge_realloc(cache_names, sizeof(char *) * (ncache + 1));
	cache_maps = bridge_realloc(cache_maps, sizeof(PgTypeMap) * (ncache + 1));
	if (!cache_names || !cache_maps)
		bridge_fatal("out of memory");
	cache_names[ncache] = bridge_strdup(pgtype);
	cache_maps[ncache] = m;
	ncache++;
	if (!m.cql)
	{
		if (why)
			*why = m.why;
		return NULL;
	}
	return &cache_maps[ncache - 1];
}

/*
 * plan_store_expr
 *		The value the source view stores for an expression ref of a column
 *		stored as 'store': what Cassandra will hold, in the source's type
 *		where same_type (timestamps at the millisecond, empty arrays as
 *		NULL) or in the foreign table's (jsonb as text, money as numeric).
 *		verify applies the same_type part to the source query's answers,
 *		so both sides are compared at the stored precision.
 */
char *
plan_store_expr(StoreKind store, const char *ref, bool same_type)
{
	switch (store)
	{
		case STORE_AS_IS:
			break;
		case STORE_MILLISECONDS:
			return bridge_printf("date_trunc('milliseconds', %s)", ref);
		case STORE_ARRAY:
			return bridge_printf("CASE WHEN cardinality(%s) > 0 THEN %s END", ref, ref);
		case STORE_ARRAY_MS:
			return bridge_printf("CASE WHEN cardinality(%s) > 0 THEN ARRAY(SELECT date_trunc('milliseconds', u.e) "
								 "FROM unnest(%s) WITH ORDINALITY u(e, n) ORDER BY u.n) END", ref, ref);
		case STORE_SET_MS:
			return bridge_printf("CASE WHEN cardinality(%s) > 0 THEN ARRAY(SELECT DISTINCT date_trunc('milliseconds', u.e) "
								 "FROM unnest(%s) u(e) ORDER BY 1) END", ref, ref);
		case STORE_TEXT:
			if (!same_type)
				return bridge_printf("(%s)::text", ref);
			break;
		case STORE_NUMERIC:
			if (!same_type)
				return bridge_printf("(%s)::numeric", ref);
			break;
	}
	return bridge_strdup(ref);
}

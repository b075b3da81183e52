/*-------------------------------------------------------------------------
 *
 * workload.c
 *	  Inputs of "cqlbridge plan": the relational catalog of --schema, the
 *	  workload file and the analysis of every query by the extension
 *	  function cql_bridge_analyze().
 *
 * Nothing here writes files: every error is fatal before plan.c writes
 * the output directory.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/workload.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* the workload file, for messages naming a query by file:line */
static const char *workload_file = "workload";

/*
 * getv
 *		Field (r, c) as an allocated string, NULL for NULL.
 */
static char *
getv(PGresult *res, int r, int c)
{
	if (PQgetisnull(res, r, c))
		return NULL;
	return bridge_strdup(PQgetvalue(res, r, c));
}

/*
 * check_keys_at_ms
 *		For every key of r with a timestamp column that can hold digits
 *		below the millisecond: how many rows would merge with another when
 *		its timestamps are stored at the millisecond, as Cassandra stores
 *		them (r->key_merged).  Such a key does not identify the rows of a
 *		query table (MR5 uses another key of r, or refuses).  Whole-
 *		millisecond data costs one scan that finds no such digit.
 */
static void
check_keys_at_ms(Plan *p, CatRel *r)
{
	r->key_merged = bridge_malloc(sizeof(long) * (r->nkeys + 1));
	for (int k = 0; k < r->nkeys; k++)
	{
		int			n;
		char	  **kc = plan_split_idents(r->keys[k], &n);
		StrBuf		subms;
		StrBuf		cols;
		PGresult   *res;

		r->key_merged[k] = 0;
		sb_init(&subms);
		sb_init(&cols);
		for (int j = 0; j < n; j++)
		{
			const char *type = NULL;
			const PgTypeMap *m;

			for (int c = 0; c < r->ncols; c++)
				if (strcmp(r->cols[c], kc[j]) == 0)
					type = r->types[c];
			m = plan_type_map(type, NULL);
			if (m && m->store == STORE_MILLISECONDS)
			{
				sb_appendf(&subms, "%sx.%s <> date_trunc('milliseconds', x.%s)", subms.len ? " OR " : "",
						   plan_qi(kc[j]), plan_qi(kc[j]));
				sb_appendf(&cols, "%sdate_trunc('milliseconds', x.%s)", j ? ", " : "", plan_qi(kc[j]));
			}
			else
				sb_appendf(&cols, "%sx.%s", j ? ", " : "", plan_qi(kc[j]));
		}
		if (subms.len > 0)
		{
			char	   *rel = bridge_printf("%s.%s", plan_qi(p->cat.schema), plan_qi(r->name));

			res = bridge_exec(p->conn, bridge_printf("checking the key (%s) of %s at millisecond precision", r->keys[k], rel),
							  bridge_printf("SELECT CASE WHEN EXISTS (SELECT 1 FROM %s x WHERE %s) "
											"THEN (SELECT count(*) - count(DISTINCT ROW(%s)) FROM %s x) ELSE 0 END",
											rel, subms.data, cols.data, rel), 0, NULL);
			r->key_merged[k] = plan_lval(res, 0, 0);
			PQclear(res);
		}
		sb_free(&subms);
		sb_free(&cols);
	}
}

/*
 * plan_read_catalog
 *		Columns, primary key and NOT NULL unique keys of every table of the
 *		source schema.  Unique keys matter for MR5: a unique NOT NULL column
 *		set identifies a row as well as the primary key does (amenity.name,
 *		reservation (hotel_id, start_date, room_number)).
 */
void
plan_read_catalog(Plan *p)
{
	const char *params[1] = {p->cat.schema};
	PGresult   *res;
	int			n;

	res = bridge_exec(p->conn, "reading the schema",
					  "SELECT count(*) FROM pg_namespace WHERE nspname = $1", 1, params);
	if (strcmp(PQgetvalue(res, 0, 0), "0") == 0)
		bridge_fatal_hint("Create the schema or give the right --schema.",
						  "schema \"%s\" (--schema) does not exist", p->cat.schema);
	PQclear(res);

	res = bridge_exec(p->conn, "reading the tables of the source schema",
					  "SELECT c.relname, c.reltuples::float8 FROM pg_class c "
					  "JOIN pg_namespace n ON n.oid = c.relnamespace "
					  "WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') "
					  "ORDER BY c.relname COLLATE \"C\"", 1, params);
	n = PQntuples(res);
	p->cat.nrels = n;
	p->cat.rels = bridge_malloc(sizeof(CatRel) * (n > 0 ? n : 1));
	memset(p->cat.rels, 0, sizeof(CatRel) * (n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
	{
		p->cat.rels[i].name = getv(res, i, 0);
		p->cat.rels[i].reltuples = atof(PQgetvalue(res, i, 1));
	}
	PQclear(res);

	res = bridge_exec(p->conn, "reading the columns of the source schema",
					  "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) "
					  "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
					  "JOIN pg_namespace n ON n.oid = c.relnamespace "
					  "WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') "
					  "AND a.attnum > 0 AND NOT a.attisdropped "
					  "ORDER BY c.relname COLLATE \"C\", a.attnum", 1, params);
	for (int i = 0; i < PQntuples(res); i++)
	{
		CatRel	   *r = plan_catalog_rel(p, PQgetvalue(res, i, 0));

		if (!r)
			continue;
		r->cols = bridge_realloc(r->cols, sizeof(char *) * (r->ncols + 1));
		r->types = bridge_realloc(r->types, sizeof(char *) * (r->ncols + 1));
		if (!r->cols || !r->types)
			bridge_fatal("out of memory");
		r->cols[r->ncols] = getv(res, i, 1);
		r->types[r->ncols] = getv(res, i, 2);
		r->ncols++;
	}
	PQclear(res);

	/* primary key first, then unique constraints whose columns are NOT NULL */
	res = bridge_exec(p->conn, "reading the keys of the source schema",
					  "SELECT c.relname, con.contype, "
					  "  (SELECT string_agg(quote_ident(a.attname), ',' ORDER BY k.i) "
					  "   FROM unnest(con.conkey) WITH ORDINALITY k(n, i) "
					  "   JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.n) "
					  "FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid "
					  "JOIN pg_namespace n ON n.oid = c.relnamespace "
					  "WHERE n.nspname = $1 AND con.contype IN ('p', 'u') "
					  "AND NOT EXISTS (SELECT 1 FROM unnest(con.conkey) k(n) "
					  "  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.n "
					  "  WHERE NOT a.attnotnull) "
					  "ORDER BY c.relname COLLATE \"C\", con.contype, con.conname COLLATE \"C\"",
					  1, params);
	for (int i = 0; i < PQntuples(res); i++)
	{
		CatRel	   *r = plan_catalog_rel(p, PQgetvalue(res, i, 0));
		int			nk;
		char	  **kc;

		if (!r)
			continue;
		r->keys = bridge_realloc(r->keys, sizeof(char *) * (r->nkeys + 1));
		if (!r->keys)
			bridge_fatal("out of memory");
		/* quote_ident'ed on the server: a comma in a name does not split it */
		kc = plan_split_idents(PQgetvalue(res, i, 2), &nk);
		r->keys[r->nkeys++] = plan_join_idents(kc, nk);
		if (PQgetvalue(res, i, 1)[0] == 'p')
			r->has_pk = true;
	}
	PQclear(res);
	for (int i = 0; i < p->cat.nrels; i++)
		check_keys_at_ms(p, &p->cat.rels[i]);
}

/*
 * check_name
 *		Refuse a catalog or output name that the generated files cannot
 *		hold: one with a control character (newline, carriage return, tab,
 *		...).  The files are line-oriented, and a newline in a name written
 *		into "-- affected:" or "-- columns:" could forge metadata lines or
 *		SQL that sync installs.  Quotes, commas, '$', spaces, upper case and
 *		non-ASCII letters are fine: names are quoted wherever they appear.
 */
static void
check_name(const Query *q, const char *what, const char *owner, const char *name)
{
	if (name == NULL || !bridge_has_control(name))
		return;
	bridge_fatal_hint("Rename it without control characters (ALTER TABLE ... RENAME ...), or leave the table out of the workload; "
					  "quotes, commas, spaces, '$', upper case and non-ASCII letters are fine.",
					  "%s: the name of %s %s%s%s contains a control character (newline, tab, ...), which cqlbridge does not write into its line-oriented files",
					  plan_query_ref(q), what, bridge_show_name(name), owner ? " of " : "", owner ? owner : "");
}

/* The names an analysis row brings into the plan (see check_name). */
static void
check_row_names(const Query *q, const ARow *r)
{
	char	   *rel = NULL;

	if (r->kind && strcmp(r->kind, "sql") == 0)
		return;					/* SQL texts, written into scripts only */
	if (r->schema && r->table)
		rel = bridge_printf("table %s.%s", bridge_show_name(r->schema), bridge_show_name(r->table));
	check_name(q, "schema", NULL, r->schema);
	check_name(q, "table", NULL, r->table);
	check_name(q, "alias", rel, r->alias);
	check_name(q, "column", rel, r->column);
	check_name(q, "alias", NULL, r->other_alias);
	check_name(q, "column", NULL, r->other_column);
	if (r->kind && (strcmp(r->kind, "target") == 0 || strcmp(r->kind, "order") == 0 ||
					strcmp(r->kind, "aggregate_field") == 0))
		check_name(q, "output column", NULL, r->name);
	free(rel);
}

/*
 * relation_keys
 *		The primary key of a relation row, from the catalog (plan_qi names,
 *		", "-separated) rather than the analysis' "detail": the analysis
 *		joins raw column names with commas, which a comma in a name would
 *		split wrongly.  Every key column name is checked (check_name): a
 *		key column reaches the generated files even when the workload never
 *		names it (lineage columns, "-- affected:" lines).
 */
static void
relation_keys(Plan *p, const Query *q, ARow *r)
{
	CatRel	   *cr = plan_catalog_rel(p, r->table);
	char	   *rel = bridge_printf("table %s.%s", bridge_show_name(r->schema), bridge_show_name(r->table));

	for (int k = 0; k < cr->nkeys; k++)
	{
		int			n;
		char	  **cols = plan_split_idents(cr->keys[k], &n);

		for (int j = 0; j < n; j++)
			check_name(q, "key column", rel, cols[j]);
	}
	r->detail = cr->has_pk ? bridge_strdup(cr->keys[0]) : NULL;
	free(rel);
}

/*
 * plan_catalog_rel
 *		The catalog relation of that name (of --schema), or NULL.
 */
CatRel *
plan_catalog_rel(Plan *p, const char *name)
{
	for (int i = 0; i < p->cat.nrels; i++)
		if (strcmp(p->cat.rels[i].name, name) == 0)
			return &p->cat.rels[i];
	return NULL;
}

/*
 * Replace every :'name' by $k (k = position in the params list).  A name
 * that is not declared is an error, and so is a declared one never used
 * (the format says params lists the parameters in order of first use).
 */
static char *
substitute_params(Plan *p, Query *q, const char *text)
{
	StrBuf		sb;
	bool	   *used = bridge_malloc(sizeof(bool) * (q->nparams + 1));
	const char *s = text;

	memset(used, 0, sizeof(bool) * (q->nparams + 1));
	sb_init(&sb);
	while (*s)
	{
		if (s[0] == ':' && s[1] == '\'')
		{
			const char *e = strchr(s + 2, '\'');
			char	   *nm;
			int			k = -1;

			if (!e)
				bridge_fatal("%s: unterminated parameter reference :'...", plan_query_ref(q));
			nm = bridge_malloc(e - (s + 2) + 1);
			memcpy(nm, s + 2, e - (s + 2));
			nm[e - (s + 2)] = '\0';
			for (int i = 0; i < q->nparams; i++)
				if (strcmp(q->pnames[i], nm) == 0)
					k = i;
			if (k < 0)
				bridge_fatal_hint("Declare every parameter in the \"-- params:\" line as \"<name> <type>\".",
								  "%s: parameter :'%s' is not declared in \"-- params:\" (%s)",
								  plan_query_ref(q), nm, q->params_text);
			used[k] = true;
			sb_appendf(&sb, "$%d", k + 1);
			free(nm);
			s = e + 1;
			continue;
		}
		{
			char		c[2] = {*s, '\0'};

			sb_append(&sb, c);
		}
		s++;
	}
	for (int i = 0; i < q->nparams; i++)
		if (!used[i])
			bridge_fatal("%s: parameter \"%s\" is declared in \"-- params:\" but never used as :'%s'",
						 plan_query_ref(q), q->pnames[i], q->pnames[i]);
	free(used);
	(void) p;
	return sb.data;
}

/*
 * parse_params
 *		The parameter names and types of a query's "-- params:" line ("name
 *		type, ..." or "none").
 */
static void
parse_params(Query *q)
{
	int			n;
	char	  **items;

	q->nparams = 0;
	if (q->params_text == NULL || strcmp(q->params_text, "none") == 0 || q->params_text[0] == '\0')
		return;
	items = plan_split(q->params_text, ',', &n);
	q->pnames = bridge_malloc(sizeof(char *) * n);
	q->ptypes = bridge_malloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		char	   *sp = strchr(items[i], ' ');

		if (!sp)
			bridge_fatal("%s: parameter \"%s\" has no type (expected \"<name> <type>\")",
						 plan_query_ref(q), items[i]);
		*sp = '\0';
		q->pnames[i] = items[i];
		q->ptypes[i] = sp + 1;
		while (*q->ptypes[i] == ' ')
			q->ptypes[i]++;
	}
	q->nparams = n;
}

/*
 * plan_read_workload
 *		Split the workload file into queries (metadata + SQL with $k).
 */
void
plan_read_workload(Plan *p)
{
	BridgeBlockFile *f = bridge_read_workload_blocks(p->workload_path);

	workload_file = p->workload_path;
	plan_read_write_profile(p, p->workload_path, f->header);

	if (f->nblocks == 0)
		bridge_fatal("%s: no query blocks (\"-- name:\" ...) found", p->workload_path);
	p->nqueries = f->nblocks;
	/* room for the two parts of every query that may be composed */
	p->qcap = 3 * f->nblocks;
	p->queries = bridge_malloc(sizeof(Query) * p->qcap);
	memset(p->queries, 0, sizeof(Query) * p->qcap);
	for (int i = 0; i < f->nblocks; i++)
	{
		BridgeBlock *b = &f->blocks[i];
		Query	   *q = &p->queries[i];
		const char *sql;

		q->line = b->line;
		q->name = (char *) bridge_block_get(b, "name");
		if (!q->name)
			bridge_fatal("%s:%d: block without \"-- name:\"", p->workload_path, b->line);
		for (int j = 0; j < i; j++)
			if (strcmp(p->queries[j].name, q->name) == 0)
				bridge_fatal("%s:%d: query name \"%s\" is used twice", p->workload_path, b->line, q->name);
		q->description = (char *) bridge_block_get(b, "description");
		q->params_text = (char *) bridge_block_get(b, "params");
		if (!q->params_text)
			bridge_fatal("%s: no \"-- params:\" line (write \"-- params: none\" for none)", plan_query_ref(q));
		q->published_target = (char *) bridge_block_get(b, "target");
		q->published_key = (char *) bridge_block_get(b, "published_key");
		sql = bridge_block_sql(b, "");
		if (!sql)
			bridge_fatal("%s: block has no SQL statement", plan_query_ref(q));
		parse_params(q);
		q->sql = substitute_params(p, q, sql);
	}
}

/*
 * plan_query_ref
 *		"query Q1_x (workload.sql:57)": a query in messages (a static buffer,
 *		valid until the next call).
 */
const char *
plan_query_ref(const Query *q)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "query %s (%s:%d)", q->name ? q->name : "?", workload_file, q->line);
	return buf;
}

/*
 * read_result_row
 *		Keep what an analysis row says of an aggregate query ("result",
 *		"group", "result_order") and of a LIMIT parameter in q.
 */
static void
read_result_row(Query *q, const ARow *r)
{
	if (plan_is_kind(r, "limit") && r->level == 0 && r->param > 0)
		q->limit_param = r->param;
	else if (plan_is_kind(r, "result"))
	{
		QResult    *res;

		q->results = bridge_realloc(q->results, sizeof(QResult) * (q->nresults + 1));
		res = &q->results[q->nresults++];
		memset(res, 0, sizeof(QResult));
		res->name = r->name;
		res->func = r->op;
		res->under = r->other_column;
		res->star = plan_streq(r->detail, "star");
		res->distinct = plan_streq(r->detail, "distinct");
		res->type = r->type;
		if (!res->name || !res->func || (!res->star && !res->under))
			bridge_fatal("%s: cql_bridge_analyze returned an incomplete result row", plan_query_ref(q));
	}
	else if (plan_is_kind(r, "group") && r->other_column)
	{
		q->groups = bridge_realloc(q->groups, sizeof(char *) * (q->ngroups + 1));
		q->groups[q->ngroups++] = r->other_column;
	}
	else if (plan_is_kind(r, "result_order") && r->name)
	{
		q->rorder = bridge_realloc(q->rorder, sizeof(char *) * (q->nrorder + 1));
		q->rorder[q->nrorder++] = bridge_printf("%s %s %s", plan_qi(r->name),
												plan_streq(r->op, "desc") ? "DESC" : "ASC",
												plan_streq(r->detail, "nulls first") ? "NULLS FIRST" : "NULLS LAST");
	}
}

/*
 * plan_analyze
 *		Run cql_bridge_analyze() on the query and keep its rows; the base
 *		and lineage SQL are picked out of the "sql" rows.
 */
void
plan_analyze(Plan *p, Query *q)
{
	StrBuf		types;
	StrBuf		what;
	const char *params[2];
	PGresult   *res;

	sb_init(&types);
	sb_append(&types, bridge_text_array(q->ptypes, q->nparams));
	params[0] = q->sql;
	params[1] = types.data;
	sb_init(&what);
	sb_appendf(&what, "analyzing %s", plan_query_ref(q));
	res = bridge_exec(p->conn, what.data,
					  bridge_printf("SELECT kind, level, ord, alias, schema_name, table_name, column_name, "
									"type_name, op, param, other_alias, other_column, name, detail "
									"FROM %s.cql_bridge_analyze($1, $2::text[]::regtype[])",
									bridge_extension_schema(p->conn)),
					  2, params);
	q->nrows = PQntuples(res);
	q->rows = bridge_malloc(sizeof(ARow) * (q->nrows + 1));
	for (int i = 0; i < q->nrows; i++)
	{
		ARow	   *r = &q->rows[i];

		r->kind = getv(res, i, 0);
		r->level = PQgetisnull(res, i, 1) ? 0 : atoi(PQgetvalue(res, i, 1));
		r->ord = PQgetisnull(res, i, 2) ? 0 : atoi(PQgetvalue(res, i, 2));
		r->alias = getv(res, i, 3);
		r->schema = getv(res, i, 4);
		r->table = getv(res, i, 5);
		r->column = getv(res, i, 6);
		r->type = getv(res, i, 7);
		r->op = getv(res, i, 8);
		r->param = PQgetisnull(res, i, 9) ? 0 : atoi(PQgetvalue(res, i, 9));
		r->other_alias = getv(res, i, 10);
		r->other_column = getv(res, i, 11);
		r->name = getv(res, i, 12);
		r->detail = getv(res, i, 13);
		if (r->kind && strcmp(r->kind, "sql") == 0 && r->name)
		{
			if (strcmp(r->name, "base") == 0)
				q->base = r->detail;
			else if (strcmp(r->name, "lineage") == 0)
				q->lineage = r->detail;
		}
		if (r->kind && strcmp(r->kind, "warning") == 0 && r->detail)
			plan_warn(p, "%s: %s", q->name, r->detail);
		if (r->kind && strcmp(r->kind, "relation") == 0)
		{
			if (!r->schema || strcmp(r->schema, p->cat.schema) != 0)
				bridge_fatal_hint("Every table of the workload must belong to the schema given with --schema.",
								  "%s: table %s.%s is not in schema \"%s\"",
								  plan_query_ref(q), r->schema ? r->schema : "?", r->table ? r->table : "?",
								  p->cat.schema);
			if (!plan_catalog_rel(p, r->table))
				bridge_fatal("%s: table %s.%s is not an ordinary table of the schema",
							 plan_query_ref(q), r->schema, r->table);
			relation_keys(p, q, r);
		}
		check_row_names(q, r);
		read_result_row(q, r);
	}
	PQclear(res);
	if (!q->base || !q->lineage)
		bridge_fatal("%s: cql_bridge_analyze returned no base/lineage SQL", plan_query_ref(q));

	/* the declared types as PostgreSQL names them (emit.c compares them) */
	q->pfmt = bridge_malloc(sizeof(char *) * (q->nparams + 1));
	res = bridge_exec(p->conn, what.data,
					  "SELECT pg_catalog.format_type(t::pg_catalog.regtype, NULL) FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
					  1, params + 1);
	for (int k = 0; k < q->nparams; k++)
		q->pfmt[k] = k < PQntuples(res) ? bridge_strdup(PQgetvalue(res, k, 0)) : NULL;
	PQclear(res);
	sb_free(&types);
	sb_free(&what);
}

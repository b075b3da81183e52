/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  What "cqlbridge stream" needs of 003_load.sql, and the step from a
 *	  committed change to the target keys it may add, change or remove.
 *
 * A change of a source row is queued as derivation requests (deduplicated,
 * so a row changed a hundred times between two flushes is looked up once);
 * at the flush cap_derive() turns them into target keys:
 *   - new values (INSERT, UPDATE): the table's "affected" SQL with the new
 *	   primary key, on the current data (the keys the row feeds now);
 *   - old values (UPDATE, DELETE) of a relation of the top level: the same
 *	   SQL on the lineage table (stream_keys_<n>: key and lineage columns of
 *	   every row the stream has written), i.e. the keys the row fed when
 *	   they were last written, including keys that vanish;
 *   - old values of a relation of a sublink (a collection): the affected
 *	   SQL with the relation replaced by its old row, so the collections the
 *	   row was part of are recomputed even after it is gone;
 *   - TRUNCATE: every key of the lineage tables the relation feeds.
 * Only key values are read from the change, never other columns: the rows
 * are recomputed from the source views, so unchanged-TOAST values ('u')
 * need no special case.  The tables that project one relation row by row
 * take the change's rows instead (direct.c): their affected lines queue
 * nothing here unless they fall back to recomputation.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/keys.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

/* ------------------------------------------------------------------------
 * 003_load.sql
 * ------------------------------------------------------------------------
 */

/* Replace the first occurrence of from in s by to (allocated); NULL if none. */
static char *
replace_once(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);

	if (at == NULL)
		return NULL;
	return bridge_printf("%.*s%s%s", (int) (at - s), s, to, at + strlen(from));
}

/* The index of source relation 'qualified' in p (added when new). */
static int
source_index(CapPlan *p, const char *qualified, const char *pklist, const char *path, int line)
{
	CapSource  *s;
	const char *q = qualified;

	for (int i = 0; i < p->nsources; i++)
		if (strcmp(p->sources[i].qualified, qualified) == 0)
			return i;
	p->sources = bridge_realloc(p->sources, sizeof(CapSource) * (p->nsources + 1));
	if (!p->sources)
		bridge_fatal("out of memory");
	s = &p->sources[p->nsources];
	memset(s, 0, sizeof(*s));
	s->qualified = bridge_strdup(qualified);
	s->schema = bridge_parse_ident(&q);
	if (s->schema == NULL || *q != '.')
		bridge_fatal("%s:%d: \"-- affected:\" names no schema-qualified relation: %s", path, line, qualified);
	q++;
	s->table = bridge_parse_ident(&q);
	s->pk = bridge_split_idents(pklist, &s->npk);
	if (s->table == NULL || s->pk == NULL || s->npk == 0)
		bridge_fatal("%s:%d: bad \"-- affected:\" line: %s (%s)", path, line, qualified, pklist);
	return p->nsources++;
}

/*
 * lineage_of_key
 *		The lineage column of each of the n key columns of a top-level
 *		relation, from the WHERE clause of its affected SQL:
 *		"s.<lineage column> = $1 AND s.<...> = $2 ...".
 */
static char **
lineage_of_key(const char *where, int n, const char *path, int line)
{
	char	  **lin = bridge_malloc(sizeof(char *) * (n + 1));
	const char *q = where;

	for (int k = 0; k < n; k++)
	{
		char	   *end;

		if (k > 0)
		{
			if (strncmp(q, " AND ", 5) != 0)
				break;
			q += 5;
		}
		if (strncmp(q, "s.", 2) != 0)
			break;
		q += 2;
		lin[k] = bridge_parse_ident(&q);
		if (lin[k] == NULL || strncmp(q, " = $", 4) != 0 || strtol(q + 4, &end, 10) != k + 1)
			break;
		q = end;
		if (k == n - 1)
			return lin;
	}
	bridge_fatal_hint("Run \"cqlbridge plan\" again.",
					  "%s:%d: the affected SQL of a relation does not match its key by lineage columns", path, line);
}

/*
 * parse_affected
 *		"<schema.table> (<pk columns>) | <SQL>" of table ti into a
 *		CapAffected: the relation, its key, whether it feeds a sublink, and
 *		the lineage form of the SQL for a top-level relation.
 */
static void
parse_affected(CapPlan *p, int ti, const char *value, const char *path, int line)
{
	const char *q = value;
	const char *open;
	const char *close;
	const char *bar;
	char	   *qualified;
	char	   *pklist;
	CapAffected *a;
	CapTable   *t = &p->tables[ti];
	char	   *from_view = bridge_printf(" FROM %s s WHERE ", t->source_view);
	char	   *after;

	/* the qualified name ends at " (", outside quotes */
	{
		char	   *s1 = bridge_parse_ident(&q);

		if (s1 == NULL || *q != '.')
			bridge_fatal("%s:%d: bad \"-- affected:\" line", path, line);
		q++;
		if (bridge_parse_ident(&q) == NULL)
			bridge_fatal("%s:%d: bad \"-- affected:\" line", path, line);
	}
	qualified = bridge_trim_copy(value, q - value);
	open = strchr(q, '(');
	bar = strstr(q, ") | ");
	if (open == NULL || bar == NULL || bar < open)
		bridge_fatal("%s:%d: bad \"-- affected:\" line (expected \"schema.table (key) | SQL\")", path, line);
	close = bar;
	pklist = bridge_trim_copy(open + 1, close - open - 1);

	p->affected = bridge_realloc(p->affected, sizeof(CapAffected) * (p->naffected + 1));
	if (!p->affected)
		bridge_fatal("out of memory");
	a = &p->affected[p->naffected++];
	memset(a, 0, sizeof(*a));
	a->table = ti;
	a->source = source_index(p, qualified, pklist, path, line);
	a->sql = bridge_strdup(bar + 4);
	after = strstr(a->sql, from_view);
	if (after == NULL)
		bridge_fatal_hint("Run \"cqlbridge plan\" again.",
						  "%s:%d: the affected SQL of %s does not read the source view %s",
						  path, line, qualified, t->source_view);
	after += strlen(from_view);
	a->sublink = (*after == '(');
	if (!a->sublink)
	{
		char	   *to = bridge_printf(" FROM %s s WHERE ", t->lineage);
		CapSource  *src = &p->sources[a->source];

		a->lineage_sql = replace_once(a->sql, from_view, to);
		free(to);
		a->lin_of_pk = lineage_of_key(after, src->npk, path, line);
	}
	free(from_view);
	free(pklist);
	free(qualified);
}

/*
 * cap_read_plan
 *		The stream's view of DIR/003_load.sql: the tables (foreign table,
 *		source view, columns, key, rows SQL), the source relations and the
 *		affected lines; the names of the plan's slot, publication and
 *		lineage tables.  Fatal on a file it cannot use.
 */
CapPlan *
cap_read_plan(const char *dir)
{
	char	   *path = bridge_path(dir, "003_load.sql");
	BridgeBlockFile *f = bridge_read_blocks(path);
	CapPlan    *p = calloc(1, sizeof(CapPlan));
	char	   *tag;

	if (!p)
		bridge_fatal("out of memory");
	p->dir = dir;
	p->keyspace = bridge_header_get(f->header, "keyspace");
	if (p->keyspace == NULL || !bridge_valid_keyspace(p->keyspace))
		bridge_fatal_hint("The directory is from an older cqlbridge: run \"cqlbridge plan\" again.",
						  "%s: no valid \"-- keyspace:\" line in the header", path);
	if (f->nblocks == 0)
		bridge_fatal("%s: no table blocks", path);
	p->schema_plain = bridge_plan_schema(p->keyspace);
	p->schema = bridge_qi(p->schema_plain);
	tag = bridge_plan_tag(p->keyspace);
	p->slot = bridge_printf("cqlbridge_%s", tag);
	p->publication = bridge_printf("cqlbridge_%s", tag);
	p->ntables = f->nblocks;
	p->joining = -1;
	p->tables = calloc(f->nblocks, sizeof(CapTable));
	if (!p->tables)
		bridge_fatal("out of memory");
	for (int i = 0; i < f->nblocks; i++)
	{
		const BridgeBlock *b = &f->blocks[i];
		CapTable   *t = &p->tables[i];

		t->target = bridge_block_require(f, b, "table");
		t->foreign_table = bridge_block_require(f, b, "foreign_table");
		t->source_view = bridge_block_require(f, b, "source_view");
		t->columns = bridge_block_require(f, b, "columns");
		t->key = bridge_split_idents(bridge_block_require(f, b, "key"), &t->nkey);
		if (t->key == NULL || t->nkey == 0)
			bridge_fatal("%s:%d: \"-- key:\" must be a list of column names", path, b->line);
		t->rows_sql = bridge_block_sql(b, "");
		if (t->rows_sql == NULL || strncmp(t->rows_sql, "SELECT", 6) != 0)
			bridge_fatal_hint("Run \"cqlbridge plan\" again.",
							  "%s:%d: table %s has no SELECT of its rows (a plan older than streamed loads)",
							  path, b->line, t->target);
		t->lineage = bridge_printf("%s.stream_keys_%d", p->schema, i + 1);
		for (int k = 0; k < b->nmeta; k++)
			if (strcmp(b->keys[k], "affected") == 0)
				parse_affected(p, i, b->values[k], path, b->line);
	}
	if (p->nsources == 0)
		bridge_fatal("%s: no \"-- affected:\" lines: nothing to capture", path);
	return p;
}

/* Whether read column name of s is a generated one. */
static bool
generated(const CapSource *s, const char *name)
{
	for (int i = 0; i < s->nread; i++)
		if (strcmp(s->read_name[i], name) == 0)
			return s->read_generated[i];
	return false;
}

/*
 * mirror_sql
 *		sql with every source relation of its sublink ("FROM <relation>
 *		<alias>" or ", <relation> <alias>") read through the stream's view
 *		of it, which follows renames (relations.c).  Allocated.
 */
static char *
mirror_sql(const CapPlan *p, const char *sql)
{
	const char *sub = strstr(sql, " IN (SELECT ");
	StrBuf		sb;

	sb_init(&sb);
	if (sub == NULL)
	{
		sb_append(&sb, sql);
		return sb.data;
	}
	sb_appendf(&sb, "%.*s", (int) (sub - sql), sql);
	for (const char *c = sub; *c;)
	{
		bool		done = false;

		if (strncmp(c, "FROM ", 5) == 0 || strncmp(c, ", ", 2) == 0)
		{
			int			lead = *c == 'F' ? 5 : 2;

			for (int i = 0; i < p->nsources && !done; i++)
			{
				const CapSource *s = &p->sources[i];
				size_t		len = strlen(s->qualified);

				if (strncmp(c + lead, s->qualified, len) == 0 && c[lead + len] == ' ')
				{
					sb_appendf(&sb, "%.*s%s", lead, c, s->mirror);
					c += lead + len;
					done = true;
				}
			}
		}
		if (!done)
			sb_appendc(&sb, *c++);
	}
	return sb.data;
}

/*
 * cap_plan_prepare
 *		What needs the database: the types of each table's key columns and
 *		its lineage columns (from the source view), and for every relation
 *		of a sublink the SQL with the relation replaced by one row of
 *		parameters: its key columns when the SQL needs no other column,
 *		else every column (then the relation needs REPLICA IDENTITY FULL,
 *		checked by setup).
 */
void
cap_plan_prepare(PGconn *conn, CapPlan *p)
{
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		const char *params[1] = {t->source_view};
		PGresult   *res = bridge_exec(conn, "reading the columns of a source view",
									  "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) "
									  "FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1::regclass "
									  "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
									  1, params);

		t->key_types = bridge_malloc(sizeof(char *) * t->nkey);
		for (int k = 0; k < t->nkey; k++)
			t->key_types[k] = NULL;
		t->lin = bridge_malloc(sizeof(char *) * (PQntuples(res) + 1));
		for (int r = 0; r < PQntuples(res); r++)
		{
			const char *name = PQgetvalue(res, r, 0);

			for (int k = 0; k < t->nkey; k++)
				if (strcmp(t->key[k], name) == 0)
					t->key_types[k] = bridge_strdup(PQgetvalue(res, r, 1));
			if (strncmp(name, "lin_", 4) == 0)
				t->lin[t->nlin++] = bridge_strdup(name);
		}
		for (int k = 0; k < t->nkey; k++)
			if (t->key_types[k] == NULL)
				bridge_fatal_hint("Run \"cqlbridge plan\" and \"cqlbridge apply --no-load\" again.",
								  "key column %s of %s is not a column of its source view %s",
								  bridge_show_name(t->key[k]), t->target, t->source_view);
		PQclear(res);

		/* the foreign table's column kinds: partition key, statics */
		params[0] = t->foreign_table;
		res = bridge_exec(conn, "reading the column kinds of a foreign table",
						  "SELECT a.attname, o.option_value, "
						  "pg_catalog.format_type(a.atttypid, a.atttypmod) "
						  "FROM pg_catalog.pg_attribute a, "
						  "pg_catalog.pg_options_to_table(a.attfdwoptions) o "
						  "WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped "
						  "AND o.option_name = 'kind'", 1, params);
		t->npart = 0;
		t->has_static = false;
		/* the foreign table's own key types (the view's by default) */
		t->ft_key_types = bridge_malloc(sizeof(char *) * t->nkey);
		for (int k = 0; k < t->nkey; k++)
			t->ft_key_types[k] = t->key_types[k];
		for (int r = 0; r < PQntuples(res); r++)
		{
			const char *kind = PQgetvalue(res, r, 1);

			for (int k = 0; k < t->nkey; k++)
				if (strcmp(PQgetvalue(res, r, 0), t->key[k]) == 0)
					t->ft_key_types[k] = bridge_strdup(PQgetvalue(res, r, 2));

			if (strcmp(kind, "static") == 0)
				t->has_static = true;
			else if (strcmp(kind, "partition_key") == 0)
				t->npart++;
		}
		for (int k = 0; k < t->npart; k++)
		{
			bool		found = false;

			for (int r = 0; r < PQntuples(res); r++)
				if (strcmp(PQgetvalue(res, r, 0), t->key[k]) == 0 &&
					strcmp(PQgetvalue(res, r, 1), "partition_key") == 0)
					found = true;
			if (!found)
				t->npart = 0;	/* not the leading key columns: never delete partitions */
		}
		PQclear(res);
	}

	for (int i = 0; i < p->naffected; i++)
	{
		char	   *m = mirror_sql(p, p->affected[i].sql);

		free(p->affected[i].sql);
		p->affected[i].sql = m;
	}
	for (int i = 0; i < p->nsources; i++)
	{
		CapSource  *s = &p->sources[i];
		PGresult   *res;

		res = cap_source_columns(conn, s);
		s->pk_types = bridge_malloc(sizeof(char *) * s->npk);
		for (int k = 0; k < s->npk; k++)
		{
			s->pk_types[k] = NULL;
			for (int r = 0; r < PQntuples(res); r++)
				if (strcmp(PQgetvalue(res, r, 0), s->pk[k]) == 0)
					s->pk_types[k] = bridge_strdup(PQgetvalue(res, r, 1));
			if (s->pk_types[k] == NULL)
				bridge_fatal_hint("Run \"cqlbridge plan\" again.", "key column %s of %s does not exist",
								  bridge_show_name(s->pk[k]), s->qualified);
		}
		PQclear(res);
	}

	for (int i = 0; i < p->naffected; i++)
	{
		CapAffected *a = &p->affected[i];
		CapSource  *s = &p->sources[a->source];
		const char *sub;
		char	   *from;
		PGresult   *res;
		StrBuf		row;
		char	   *old_sql;
		bool		full = false;

		if (!a->sublink)
			continue;
		sub = strstr(a->sql, " IN (SELECT ");
		from = bridge_printf(" FROM %s ", s->mirror);
		if (sub == NULL || strstr(sub, from) == NULL)
			bridge_fatal("the affected SQL of %s for %s has an unexpected shape: %s",
						 s->qualified, p->tables[a->table].target, a->sql);

		res = cap_source_columns(conn, s);
		for (int attempt = 0; attempt < 2; attempt++)
		{
			PGresult   *pr;
			int			n = 0;

			sb_init(&row);
			a->old_cols = bridge_malloc(sizeof(char *) * (PQntuples(res) + s->npk + 1));
			a->old_types = bridge_malloc(sizeof(char *) * (PQntuples(res) + s->npk + 1));
			for (int k = 0; k < s->npk; k++)
				for (int r = 0; r < PQntuples(res); r++)
					if (strcmp(PQgetvalue(res, r, 0), s->pk[k]) == 0)
					{
						sb_appendf(&row, "%s$%d::%s AS %s", n ? ", " : "", n + 1,
								   PQgetvalue(res, r, 1), bridge_quote_ident(s->pk[k]));
						a->old_types[n] = bridge_strdup(PQgetvalue(res, r, 1));
						a->old_cols[n++] = s->pk[k];
					}
			if (full)
				for (int r = 0; r < PQntuples(res); r++)
				{
					bool		is_pk = false;

					for (int k = 0; k < s->npk; k++)
						if (strcmp(PQgetvalue(res, r, 0), s->pk[k]) == 0)
							is_pk = true;
					if (is_pk || generated(s, PQgetvalue(res, r, 0)))
						continue;	/* a key, or never in a change */
					sb_appendf(&row, ", $%d::%s AS %s", n + 1, PQgetvalue(res, r, 1),
							   bridge_quote_ident(PQgetvalue(res, r, 0)));
					a->old_types[n] = bridge_strdup(PQgetvalue(res, r, 1));
					a->old_cols[n++] = bridge_strdup(PQgetvalue(res, r, 0));
				}
			a->nold = n;
			{
				char	   *to = bridge_printf(" FROM (SELECT %s) ", row.data);
				char	   *head = bridge_strdup(a->sql);

				/* replace within the sublink only */
				head[sub - a->sql] = '\0';
				old_sql = bridge_printf("%s%s", head, replace_once(sub, from, to));
				free(to);
				free(head);
			}
			sb_free(&row);
			pr = PQprepare(conn, "", old_sql, 0, NULL);
			if (pr && PQresultStatus(pr) == PGRES_COMMAND_OK)
			{
				PQclear(pr);
				a->old_sql = old_sql;
				break;
			}
			if (attempt == 1 || !pr || !PQresultErrorField(pr, PG_DIAG_SQLSTATE) ||
				strcmp(PQresultErrorField(pr, PG_DIAG_SQLSTATE), "42703") != 0)
				bridge_fatal("preparing the old-row form of the affected SQL of %s failed: %s",
							 s->qualified, pr ? PQresultErrorMessage(pr) : "out of memory");
			PQclear(pr);
			full = true;		/* the sublink reads other columns of the row */
		}
		PQclear(res);
		free(from);
	}
}

/* ------------------------------------------------------------------------
 * Changes -> derivation requests
 * ------------------------------------------------------------------------
 */

/* The source of relation id relid, or NULL (not captured). */
static CapSource *
source_of(CapPlan *p, unsigned int relid)
{
	for (int i = 0; i < p->nsources; i++)
		if (p->sources[i].relid == relid && p->sources[i].rel)
			return &p->sources[i];
	return NULL;
}

/*
 * cap_change_keys
 *		Queue the derivation requests of an INSERT, UPDATE or DELETE into
 *		req (see the file header).  False with err when the change lacks a
 *		value the derivation needs.
 */
bool
cap_change_keys(CapPlan *p, CapKeySet *req, const CapMessage *m, char *err, size_t errlen)
{
	CapSource  *s = source_of(p, m->relid);
	const CapTuple *oldt;

	if (s == NULL)
	{
		/*
		 * Only the sources and the status table are published: a change
		 * of another relation (a partition published under its own name)
		 * cannot be placed, so it is said, not dropped silently.
		 */
		if (m->relid != p->state_relid && m->relid != p->warned_relid)
		{
			cap_log("WARNING: a change of relation OID %u, which is no source of the plan, was received and ignored",
					m->relid);
			p->warned_relid = m->relid;
		}
		return true;
	}
	if (s->identity_short && m->kind != CAP_INSERT)
	{
		/* its old values are missing (relations.c): every key it feeds */
		cap_queue_recompute(p, req, (int) (s - p->sources), NULL);
		return true;
	}
	/* the tables applied from the change itself (direct.c) */
	if (!cap_direct_change(p, (int) (s - p->sources), m, err, errlen))
		return false;
	oldt = m->has_old ? &m->oldt : &m->newt;
	for (int i = 0; i < p->naffected; i++)
	{
		CapAffected *a = &p->affected[i];
		char	  **vals;

		if (&p->sources[a->source] != s || cap_direct_takes(p, a))
			continue;
		vals = bridge_malloc(sizeof(char *) * (s->rel->natts + s->npk + 1));
		if (m->kind != CAP_DELETE)
		{
			if (!cap_tuple_values(s, &m->newt, m->has_old ? &m->oldt : NULL, s->pk, s->npk, vals, err, errlen))
				return false;
			cap_request_add(req, i, 'n', vals, s->npk);
		}
		if (m->kind != CAP_INSERT)
		{
			char	  **cols = a->sublink ? a->old_cols : s->pk;
			int			n = a->sublink ? a->nold : s->npk;

			if (!cap_tuple_values(s, oldt, &m->newt, cols, n, vals, err, errlen))
				return false;
			cap_request_add(req, i, 'o', vals, n);
		}
		free(vals);
	}
	return true;
}

/*
 * cap_truncate_keys
 *		TRUNCATE of source relations: every key of every table they feed
 *		(from the lineage tables) is recomputed.
 */
void
cap_truncate_keys(CapPlan *p, CapKeySet *req, const CapMessage *m)
{
	for (int r = 0; r < m->ntrunc; r++)
	{
		CapSource  *s = source_of(p, m->trunc_relids[r]);

		if (s == NULL)
			continue;
		cap_direct_recompute(p, (int) (s - p->sources));
		for (int i = 0; i < p->naffected; i++)
			if (&p->sources[p->affected[i].source] == s)
				cap_request_add(req, i, 't', NULL, 0);
	}
}

/*
 * cap_queue_recompute
 *		Rows of source relation number source appeared or vanished without
 *		a change of their own (a partition attached, detached, dropped or
 *		truncated: partitions.c): every key they may feed is recomputed.
 *		With bound (the partition's constraint, an expression over the
 *		relation's columns), for a relation of the top level, the keys of
 *		the lineage table and of the source view whose key columns satisfy
 *		it ('p'); otherwise, or for a relation of a sublink, every key of
 *		the lineage table ('t') and of the source view ('a').
 */
void
cap_queue_recompute(CapPlan *p, CapKeySet *req, int source, const char *bound)
{
	cap_direct_recompute(p, source);
	for (int i = 0; i < p->naffected; i++)
	{
		char	   *vals[1];

		if (p->affected[i].source != source)
			continue;
		vals[0] = (char *) bound;
		if (bound && !p->affected[i].sublink)
			cap_request_add(req, i, 'p', vals, 1);
		else
		{
			cap_request_add(req, i, 't', NULL, 0);
			cap_request_add(req, i, 'a', NULL, 0);
		}
	}
}

/*
 * batched_sql
 *		sql (with parameters $1..$n) run for every row of n text[]
 *		parameters: "SELECT DISTINCT k.* FROM unnest($1::text[], ...) AS
 *		u(c1, ...) CROSS JOIN LATERAL (<sql, $i replaced by
 *		(u.ci::type_i)>) k".  '$' inside quoted identifiers and string
 *		literals is left alone.
 */
static char *
batched_sql(const char *sql, char **types, int n)
{
	StrBuf		sb;
	char		quote = 0;

	sb_init(&sb);
	sb_append(&sb, "SELECT DISTINCT k.* FROM unnest(");
	for (int i = 0; i < n; i++)
		sb_appendf(&sb, "%s$%d::text[]", i ? ", " : "", i + 1);
	sb_append(&sb, ") AS u(");
	for (int i = 0; i < n; i++)
		sb_appendf(&sb, "%sc%d", i ? ", " : "", i + 1);
	sb_append(&sb, ") CROSS JOIN LATERAL (");
	for (const char *c = sql; *c; c++)
	{
		if (quote)
		{
			if (*c == quote)
				quote = 0;
			sb_appendc(&sb, *c);
		}
		else if (*c == '"' || *c == '\'')
		{
			quote = *c;
			sb_appendc(&sb, *c);
		}
		else if (*c == '$' && c[1] >= '1' && c[1] <= '9')
		{
			char	   *end;
			long		k = strtol(c + 1, &end, 10);

			if (k < 1 || k > n)
				bridge_fatal("internal error: parameter $%ld of an affected SQL out of range", k);
			sb_appendf(&sb, "(u.c%ld::%s)", k, types[k - 1]);
			c = end - 1;
		}
		else
			sb_appendc(&sb, *c);
	}
	sb_append(&sb, ") k");
	return sb.data;
}

/*
 * all_keys
 *		Every key of t's lineage table ('t') or source view ('a'), added to
 *		its pending keys; false with err.
 */
static bool
all_keys(PGconn *conn, CapTable *t, char mode, char *err, size_t errlen)
{
	StrBuf		sb;
	PGresult   *res;

	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%s%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
	/*
	 * The keys written are in the lineage table, or, for a direct table
	 * whose lineage table is not kept (direct.c), in Cassandra's.
	 */
	sb_appendf(&sb, " FROM %s", mode == 'a' ? t->source_view :
			   t->direct && t->key_of_pk ? t->foreign_table : t->lineage);
	res = cap_exec(conn, sb.data, 0, NULL, err, errlen);
	sb_free(&sb);
	if (res == NULL)
		return false;
	cap_add_keys(t, res);
	PQclear(res);
	return true;
}

/*
 * bound_keys
 *		The keys of t whose source row of affected line a satisfies bound
 *		(a partition's constraint): from the lineage table (rows that were
 *		written) and the source view (rows there now), the relation's key
 *		columns given by their lineage columns under the relation's column
 *		names.  When the bound cannot be evaluated so (a partition key
 *		column renamed since), every key of both instead.  False with err.
 */
static bool
bound_keys(PGconn *conn, CapPlan *p, CapAffected *a, const char *bound, char *err, size_t errlen)
{
	CapTable   *t = &p->tables[a->table];
	CapSource  *src = &p->sources[a->source];
	StrBuf		cols;
	StrBuf		sb;
	PGresult   *res;

	if (t->direct && t->key_of_pk)	/* no lineage table kept: every key */
		return all_keys(conn, t, 't', err, errlen) && all_keys(conn, t, 'a', err, errlen);

	sb_init(&cols);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&cols, "%ss.%s AS cqlbridge_k%d", k ? ", " : "", bridge_quote_ident(t->key[k]), k + 1);
	for (int k = 0; k < src->npk; k++)
		sb_appendf(&cols, ", s.%s AS %s", bridge_quote_ident(a->lin_of_pk[k]), bridge_quote_ident(src->pk[k]));
	sb_init(&sb);
	sb_append(&sb, "SELECT DISTINCT ");
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%sr.cqlbridge_k%d", k ? ", " : "", k + 1);
	sb_appendf(&sb, " FROM (SELECT %s FROM %s s UNION ALL SELECT %s FROM %s s) r WHERE (%s)",
			   cols.data, t->lineage, cols.data, t->source_view, bound);
	sb_free(&cols);
	if ((res = cap_exec(conn, "SAVEPOINT cqlbridge_bound", 0, NULL, err, errlen)) == NULL)
	{
		sb_free(&sb);
		return false;
	}
	PQclear(res);
	res = cap_exec(conn, sb.data, 0, NULL, err, errlen);
	sb_free(&sb);
	if (res != NULL)
	{
		cap_add_keys(t, res);
		PQclear(res);
		return true;
	}
	cap_log("a partition's bound could not be applied to the keys of %s (%s): recomputing all its keys",
			t->target, err);
	if ((res = cap_exec(conn, "ROLLBACK TO SAVEPOINT cqlbridge_bound", 0, NULL, err, errlen)) == NULL)
		return false;
	PQclear(res);
	return all_keys(conn, t, 't', err, errlen) && all_keys(conn, t, 'a', err, errlen);
}

/*
 * cap_derive
 *		Run the queued requests, one query per affected line and kind of
 *		request (all its requests' values as arrays): each adds the target
 *		keys it finds to its table's pending keys.  False with err when a
 *		query fails (the caller retries the whole flush).
 */
bool
cap_derive(PGconn *conn, CapPlan *p, CapKeySet *req, char *err, size_t errlen)
{
	static const char modes[] = {'n', 'o', 't', 'a', 'p'};

	/* the requests of tables joining the stream wait (join.c) */
	for (size_t i = 0; i < req->cap; i++)
		if (req->slots[i] && cap_table_waits(p, p->affected[atoi(req->slots[i])].table))
			cap_keyset_add(&p->deferred, req->slots[i]);
	for (int ai = 0; ai < p->naffected; ai++)
		for (int mi = 0; mi < (int) sizeof(modes); mi++)
		{
			CapAffected *a = &p->affected[ai];
			CapSource  *src = &p->sources[a->source];
			CapTable   *t = &p->tables[a->table];
			char		mode = modes[mi];
			int			nv = mode == 'n' ? src->npk : (a->sublink ? a->nold : src->npk);
			char	 ***cols = NULL;
			int			rows = 0;
			char		prefix[32];
			PGresult   *res;

			if (cap_table_waits(p, a->table))
				continue;
			snprintf(prefix, sizeof(prefix), "%d:%c:", ai, mode);
			for (size_t i = 0; i < req->cap; i++)
			{
				const char *e = req->slots[i];
				char	  **vals;
				int			n;

				if (e == NULL || strncmp(e, prefix, strlen(prefix)) != 0)
					continue;
				if (mode == 't' || mode == 'a')
				{
					rows = 1;
					break;
				}
				vals = cap_decode_values(e + strlen(prefix), &n);
				if (mode == 'p')
				{
					bool		ok = vals && n == 1 && vals[0] &&
						bound_keys(conn, p, a, vals[0], err, errlen);

					if (vals && n == 1)
						free(vals[0]);
					free(vals);
					if (!ok)
						return false;
					continue;
				}
				if (vals == NULL || n != nv)
				{
					snprintf(err, errlen, "internal error: bad derivation request");
					return false;
				}
				if (cols == NULL)
				{
					cols = bridge_malloc(sizeof(char **) * nv);
					for (int k = 0; k < nv; k++)
						cols[k] = bridge_malloc(sizeof(char *) * (req->n + 1));
				}
				for (int k = 0; k < nv; k++)
					cols[k][rows] = vals[k];
				free(vals);
				rows++;
			}
			if (rows == 0)
				continue;
			if (mode == 't' || mode == 'a')
			{
				if (!all_keys(conn, t, mode, err, errlen))
					return false;
				continue;
			}
			else
			{
				const char *sql = mode == 'n' ? a->sql : (a->sublink ? a->old_sql : a->lineage_sql);
				char	  **types = mode == 'o' && a->sublink ? a->old_types : src->pk_types;
				char	   *batched = batched_sql(sql, types, nv);
				char	  **arrays = cap_column_literals(cols, nv, rows);

				res = cap_exec(conn, batched, nv, (const char *const *) arrays, err, errlen);
				for (int k = 0; k < nv; k++)
					free(arrays[k]);
				free(arrays);
				free(batched);
			}
			if (res == NULL)
				return false;
			cap_add_keys(t, res);
			PQclear(res);
		}
	cap_keyset_clear(req);
	return true;
}

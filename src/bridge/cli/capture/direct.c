/*-------------------------------------------------------------------------
 *
 * direct.c
 *	  Query tables written from the decoded change itself: no query on the
 *	  source relations.
 *
 * A query table whose source view projects one relation row by row (no
 * join, no collection, no aggregate; a filter on the row itself is fine)
 * and whose key carries the relation's key (so one source row is one
 * target row at most) is "direct": the new tuple of an INSERT or UPDATE is
 * the target row, the old key of an UPDATE or DELETE says which row goes.
 * Recomputing such a row (keys.c, writer.c) costs the source an affected
 * query, a lineage lookup and two reads of the view per flush; applying it
 * directly costs one statement per table and flush that reads no source
 * relation, plus the DELETEs of vanished keys (bench/README.md, issue 42:
 * 8.7 against 31 us of the backend's CPU per change).
 *
 * What is kept, per source relation and flush: every state of each
 * changed row (by its key), in commit order, and whether its last state is
 * gone.  At the flush (cap_direct_write), in the write transaction, one
 * statement per table evaluates the view's own SQL on those rows (the
 * relation replaced by the rows, bound as text[] parameters and cast to
 * the relation's column types, so every conversion of the view -
 * timestamp precision, buckets, UDTs, json, arrays - is PostgreSQL's, the
 * same as a recompute), upserts the last states' rows, brings the lineage
 * table to them (writing only rows that changed) and returns the keys to
 * delete: the keys of the earlier states and of the lineage rows of the
 * changed source keys that no last state has.  A table whose key is its
 * relation's key keeps no lineage table: the changed source keys are the
 * old keys (cap_direct_lineage says how the table stays usable for a
 * stream that recomputes).  The earlier states count
 * because a flush that failed half-way may have written them (the writes
 * of a direct table are not announced in the lineage table first, as
 * recomputed ones are: a retry replays the same changes, so it sees them
 * again).  Only then: once the stream has confirmed past what an earlier
 * session could have written (CapPlan.replay_until, capture.c), earlier
 * states were written by nobody and their keys are not deleted.
 *
 * A row falls back to recomputation (its keys queued as keys.c does, and
 * the keys of its states added to the pending keys) when one of its states
 * lacks a value: an unchanged TOASTed column ('u') that neither the row's
 * previous state in this flush nor a FULL old tuple gives.  A TRUNCATE, a
 * partition appearing or going, or changes without the old values the
 * stream needs make the relation's tables recompute for the rest of the
 * flush (cap_direct_recompute).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/direct.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "capture/capture.h"

/* one source row's states since the last flush */
typedef struct DirectRow
{
	char	   *key;			/* its key values, encoded */
	char	  **states;			/* its rows (read columns), encoded */
	int			nstates;
	int			capstates;
	bool		gone;			/* its last state: deleted (or moved away) */
	bool		recompute;		/* a state lacks a value: recompute it */
} DirectRow;

/* per source relation */
typedef struct DirectSource
{
	bool		used;			/* feeds a direct table */
	char	  **types;			/* format_type of each read column */
	bool		all_recompute;	/* this flush recomputes its tables */
	DirectRow  *rows;
	int			nrows;
	int			caprows;
	int		   *slots;			/* open hash of key -> row index + 1 */
	int			nslots;
} DirectSource;

typedef struct CapDirect
{
	DirectSource *src;			/* per source */
	size_t		nchanges;		/* states and deletions kept */
} CapDirect;

/* FNV-1a of s */
static unsigned int
hash_key(const char *s)
{
	unsigned int h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 16777619u;
	return h;
}

/* The row of key in d (added when new). */
static DirectRow *
row_of(DirectSource *d, const char *key)
{
	unsigned int i;

	if (d->nrows * 2 >= d->nslots)
	{
		d->nslots = d->nslots ? d->nslots * 2 : 256;
		free(d->slots);
		d->slots = calloc(d->nslots, sizeof(int));
		if (d->slots == NULL)
			bridge_fatal("out of memory");
		for (int r = 0; r < d->nrows; r++)
		{
			i = hash_key(d->rows[r].key) & (d->nslots - 1);
			while (d->slots[i])
				i = (i + 1) & (d->nslots - 1);
			d->slots[i] = r + 1;
		}
	}
	i = hash_key(key) & (d->nslots - 1);
	while (d->slots[i])
	{
		if (strcmp(d->rows[d->slots[i] - 1].key, key) == 0)
			return &d->rows[d->slots[i] - 1];
		i = (i + 1) & (d->nslots - 1);
	}
	if (d->nrows == d->caprows)
	{
		d->caprows = d->caprows ? d->caprows * 2 : 64;
		d->rows = bridge_realloc(d->rows, sizeof(DirectRow) * d->caprows);
	}
	memset(&d->rows[d->nrows], 0, sizeof(DirectRow));
	d->rows[d->nrows].key = bridge_strdup(key);
	d->slots[i] = ++d->nrows;
	return &d->rows[d->nrows - 1];
}

/* ------------------------------------------------------------------------
 * Which tables are direct (at the start)
 * ------------------------------------------------------------------------
 */

/* plan nodes of a row-by-row projection of one relation */
static const char *const row_nodes[] = {
	"Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan",
	"Bitmap Index Scan", "Subquery Scan", "Result", "Append", NULL
};

/*
 * split_output
 *		The expressions of an EXPLAIN "Output:" list, split at commas
 *		outside parentheses and quotes (allocated, trimmed); *n set.
 */
static char **
split_output(const char *list, int *n)
{
	char	  **out = bridge_malloc(sizeof(char *) * (strlen(list) + 2));
	int			depth = 0;
	char		quote = 0;
	const char *start = list;

	*n = 0;
	for (const char *c = list;; c++)
	{
		if (quote)
		{
			if (*c == quote)
				quote = 0;
			else if (*c == '\0')
				break;
			continue;
		}
		if (*c == '\'' || *c == '"')
			quote = *c;
		else if (*c == '(' || *c == '[')
			depth++;
		else if (*c == ')' || *c == ']')
			depth--;
		else if ((*c == ',' && depth == 0) || *c == '\0')
		{
			while (*start == ' ')
				start++;
			out[(*n)++] = bridge_trim_copy(start, c - start);
			start = c + 1;
			if (*c == '\0')
				break;
		}
	}
	return out;
}

/*
 * row_projection
 *		Whether t's view, as PostgreSQL plans it, reads its relation row by
 *		row (scans, no join, aggregate, sort, sublink) and gives every
 *		lineage column (the relation's key) as one of its key columns: then
 *		a source row is at most one target row, found by its key.  NULL
 *		when so, else why not (static text).
 */
static const char *
row_projection(PGconn *conn, CapTable *t, const CapAffected *a, const CapSource *src)
{
	StrBuf		sb;
	PGresult   *res;
	char		err[512];
	const char *why = NULL;
	char	  **exprs = NULL;
	int			n = 0;

	sb_init(&sb);
	sb_append(&sb, "EXPLAIN (VERBOSE, COSTS OFF) SELECT ");
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%ss.%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
	for (int k = 0; k < t->nlin; k++)
		sb_appendf(&sb, ", s.%s", bridge_quote_ident(t->lin[k]));
	sb_appendf(&sb, " FROM %s s", t->source_view);
	PQclear(bridge_exec(conn, "planning a source view", "BEGIN", 0, NULL));
	PQclear(bridge_exec(conn, "planning a source view", "SET LOCAL max_parallel_workers_per_gather = 0", 0, NULL));
	res = cap_exec(conn, sb.data, 0, NULL, err, sizeof(err));
	sb_free(&sb);
	if (res == NULL)
		why = "its view could not be planned";
	for (int r = 0; res && r < PQntuples(res) && why == NULL; r++)
	{
		const char *line = PQgetvalue(res, r, 0);
		const char *arrow = strstr(line, "->  ");
		const char *node = arrow ? arrow + 4 : line;
		bool		known = false;

		if (strstr(line, "SubPlan") || strstr(line, "InitPlan"))
			why = "its view has a subquery";
		else if (r == 0 || arrow)
		{
			for (int i = 0; row_nodes[i]; i++)
				if (strncmp(node, row_nodes[i], strlen(row_nodes[i])) == 0)
					known = true;
			if (!known)
				why = "its view is not a row-by-row projection";
		}
		else if (exprs == NULL && strstr(line, "Output: "))
			exprs = split_output(strstr(line, "Output: ") + 8, &n);
	}
	if (why == NULL && (exprs == NULL || n != t->nkey + t->nlin))
		why = "its view's output could not be read";
	for (int l = 0; why == NULL && l < t->nlin; l++)
	{
		bool		in_key = false;

		for (int k = 0; k < t->nkey; k++)
			if (strcmp(exprs[t->nkey + l], exprs[k]) == 0)
				in_key = true;
		if (!in_key)
			why = "its key does not carry the source relation's key";
	}

	/*
	 * Keyed by the relation's key: every key column is one of the
	 * relation's key columns (the lineage columns are them).
	 */
	if (why == NULL && t->nkey == t->nlin && t->nlin == src->npk)
	{
		int		   *map = bridge_malloc(sizeof(int) * (src->npk + 1));
		bool		all = true;

		for (int j = 0; j < src->npk && all; j++)
		{
			map[j] = -1;
			for (int l = 0; l < t->nlin; l++)
				if (strcmp(t->lin[l], a->lin_of_pk[j]) == 0)
					for (int k = 0; k < t->nkey; k++)
						if (strcmp(exprs[t->nkey + l], exprs[k]) == 0)
							map[j] = k;
			all = map[j] >= 0;
		}
		for (int j = 0; j < src->npk && all; j++)
			for (int i = 0; i < j; i++)
				all = all && map[i] != map[j];
		if (all)
			t->key_of_pk = map;
		else
			free(map);
	}
	PQclear(res);
	PQclear(bridge_exec(conn, "planning a source view", "ROLLBACK", 0, NULL));
	return why;
}

/* Whether name (case-insensitive) is a keyword that can follow a FROM item. */
static bool
follows_from(const char *name)
{
	static const char *const words[] = {
		"where", "group", "order", "limit", "offset", "window", "union", "except",
		"intersect", "fetch", "for", "having", "join", "left", "right", "full",
		"inner", "cross", "natural", "on", "using", "tablesample", NULL
	};

	for (int i = 0; words[i]; i++)
		if (strcasecmp(name, words[i]) == 0)
			return true;
	return false;
}

/*
 * split_view
 *		t's view SQL (its CREATE VIEW in 002) around the one reference to
 *		its relation s: t->direct_head up to "FROM ", t->direct_tail from
 *		the alias on (an alias named after the relation added when there
 *		is none).  NULL when so, else why not.
 */
static const char *
split_view(CapTable *t, const CapSource *s)
{
	const char *create = t->block ? strstr(t->block, "CREATE VIEW ") : NULL;
	const char *body = create ? strstr(create, " AS\n") : NULL;
	const char *at;
	const char *after;
	char	   *text;
	size_t		len;

	if (body == NULL)
		return "its view's SQL is not in 002_foreign_tables.sql";
	body += 4;
	text = bridge_strdup(body);
	len = strlen(text);
	while (len > 0 && (isspace((unsigned char) text[len - 1]) || text[len - 1] == ';'))
		text[--len] = '\0';
	at = strstr(text, s->qualified);
	if (at == NULL || strstr(at + 1, s->qualified) != NULL || at - text < 5 ||
		strncmp(at - 5, "FROM ", 5) != 0)
	{
		free(text);
		return "its view does not read its relation once, in a FROM clause";
	}
	after = at + strlen(s->qualified);
	t->direct_head = bridge_printf("%.*s", (int) (at - text), text);
	{
		const char *q = after;
		char	   *alias = NULL;

		if (*q == ' ')
		{
			q++;
			alias = bridge_parse_ident(&q);
		}
		if (alias != NULL && !follows_from(alias))
			t->direct_tail = bridge_strdup(after);
		else
			t->direct_tail = bridge_printf(" %s%s", bridge_quote_ident(s->table), after);
		free(alias);
	}
	free(text);
	return NULL;
}

/*
 * rows_sql
 *		t's view with its relation replaced by the rows of parameters
 *		$first.. (one text[] per read column of s, cast to its type, under
 *		the plan's names).  Allocated.
 */
static char *
rows_sql(const CapTable *t, const CapSource *s, const DirectSource *d, int first)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "%s(SELECT ", t->direct_head);
	for (int i = 0; i < s->nread; i++)
		sb_appendf(&sb, "%su.c%d::%s AS %s", i ? ", " : "", i + 1, d->types[i],
				   bridge_quote_ident(s->read_name[i]));
	sb_append(&sb, " FROM unnest(");
	for (int i = 0; i < s->nread; i++)
		sb_appendf(&sb, "%s$%d::text[]", i ? ", " : "", first + i);
	sb_append(&sb, ") AS u(");
	for (int i = 0; i < s->nread; i++)
		sb_appendf(&sb, "%sc%d", i ? ", " : "", i + 1);
	sb_appendf(&sb, "))%s", t->direct_tail);
	return sb.data;
}

/*
 * direct_types
 *		The types of s's read columns (from the stream's view of it, which
 *		has the plan's names); false when one is missing.
 */
static bool
direct_types(PGconn *conn, const CapSource *s, DirectSource *d)
{
	PGresult   *res = cap_source_columns(conn, s);
	bool		ok = true;

	d->types = bridge_malloc(sizeof(char *) * (s->nread + 1));
	for (int i = 0; i < s->nread; i++)
	{
		d->types[i] = NULL;
		for (int r = 0; r < PQntuples(res); r++)
			if (strcmp(PQgetvalue(res, r, 0), s->read_name[i]) == 0)
				d->types[i] = bridge_strdup(PQgetvalue(res, r, 1));
		ok = ok && d->types[i] != NULL;
	}
	PQclear(res);
	return ok;
}

/* Why table ti cannot be direct, or NULL when it can (and is prepared). */
static const char *
direct_check(PGconn *conn, CapPlan *p, int ti)
{
	CapTable   *t = &p->tables[ti];
	int			a = -1;
	CapSource  *s;
	DirectSource *d;
	const char *why;

	for (int i = 0; i < p->naffected; i++)
		if (p->affected[i].table == ti)
		{
			if (a >= 0)
				return "it reads more than one relation";
			a = i;
		}
	if (a < 0 || p->affected[a].sublink)
		return "it reads a collection";
	s = &p->sources[p->affected[a].source];
	d = &p->direct->src[p->affected[a].source];
	if (t->has_static)
		return "it has static columns";
	for (int i = 0; i < s->nread; i++)
		if (s->read_generated[i])
			return "its relation has a generated column the plan reads (not in the change)";
	{
		char	   *relid = bridge_printf("%u", s->relid);
		const char *params[2] = {t->source_view, relid};
		PGresult   *res = bridge_exec(conn, "reading what a source view reads",
									  "SELECT count(DISTINCT d.refobjid) = 1 AND bool_and(d.refobjid = $2::oid) "
									  "FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_rewrite r "
									  "ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid "
									  "WHERE r.ev_class = $1::regclass AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass "
									  "AND d.refobjid <> $1::regclass", 2, params);
		bool		one = strcmp(PQgetvalue(res, 0, 0), "t") == 0;

		PQclear(res);
		free(relid);
		if (!one)
			return "its view reads more than its relation";
	}
	if ((why = row_projection(conn, t, &p->affected[a], s)) != NULL)
		return why;
	if ((why = split_view(t, s)) != NULL)
		return why;
	if (d->types == NULL && !direct_types(conn, s, d))
		return "a column of its relation has no type";
	{
		char	   *sql = rows_sql(t, s, d, 1);
		char	   *probe = bridge_printf("SELECT * FROM (%s) v", sql);
		PGresult   *res = PQprepare(conn, "", probe, 0, NULL);
		bool		ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;

		if (!ok)
			cap_log("%s: its view on the decoded rows does not plan (%s)", t->target,
					res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : "out of memory");
		PQclear(res);
		free(probe);
		free(sql);
		if (!ok)
			return "its view cannot be evaluated on decoded rows";
	}
	t->direct_affected = a;
	d->used = true;
	return NULL;
}

/*
 * keyed_lineage_sql
 *		For a direct table keyed by its relation's key, whose lineage table
 *		the stream does not keep (cap_direct_lineage): the old keys of a
 *		source row (keys.c's 'o' requests: a row that recomputes, changes
 *		while its relation recomputes) are its key itself, "SELECT $j AS
 *		<key column>, ..." instead of a lookup in the lineage table.
 */
static void
keyed_lineage_sql(CapPlan *p, CapTable *t)
{
	CapAffected *a = &p->affected[t->direct_affected];
	CapSource  *s = &p->sources[a->source];
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "SELECT ");
	for (int k = 0; k < t->nkey; k++)
		for (int j = 0; j < s->npk; j++)
			if (t->key_of_pk[j] == k)
				sb_appendf(&sb, "%s$%d::%s AS %s", k ? ", " : "", j + 1, t->key_types[k],
						   bridge_quote_ident(t->key[k]));
	free(a->lineage_sql);
	a->lineage_sql = sb.data;
}

/*
 * cap_direct_prepare
 *		After cap_plan_prepare: which tables are applied directly (see the
 *		file header), said in one line each.  CQLBRIDGE_STREAM_DIRECT=off
 *		in the environment makes every table recompute (to compare).
 */
void
cap_direct_prepare(PGconn *conn, CapPlan *p)
{
	const char *env = getenv("CQLBRIDGE_STREAM_DIRECT");
	bool		off = env && strcmp(env, "off") == 0;
	StrBuf		direct;
	StrBuf		other;

	p->direct = calloc(1, sizeof(CapDirect));
	if (p->direct == NULL || (p->direct->src = calloc(p->nsources + 1, sizeof(DirectSource))) == NULL)
		bridge_fatal("out of memory");
	sb_init(&direct);
	sb_init(&other);
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		const char *why = direct_check(conn, p, i);

		if (why == NULL && off)
			why = "CQLBRIDGE_STREAM_DIRECT=off";
		t->direct = why == NULL;
		if (t->direct)
			sb_appendf(&direct, "%s%s%s", direct.len ? ", " : "", t->target,
					   t->key_of_pk ? "" : " (with its lineage table)");
		else
			sb_appendf(&other, "%s%s (%s)", other.len ? ", " : "", t->target, why);
		if (t->direct && t->key_of_pk)
			keyed_lineage_sql(p, t);
	}
	if (direct.len)
		cap_log("applied from the change itself: %s", direct.data);
	if (other.len)
		cap_log("recomputed from the source: %s", other.data);
	sb_free(&direct);
	sb_free(&other);
}

/*
 * cap_direct_lineage
 *		After the lineage tables exist (setup.c): the lineage table of a
 *		direct table keyed by its relation's key holds nothing the stream
 *		needs (a key and its lineage are the same values; the old key of a
 *		row is its key), so it is not kept: marked so by a comment, since
 *		a stream that recomputes the table (CQLBRIDGE_STREAM_DIRECT=off)
 *		needs it again.  Such a stream finds the mark and fills the table
 *		anew from the Cassandra table's keys (what the stream wrote), then
 *		removes the mark.  A direct table with a lineage table of several
 *		key columns gets an index on all of them for its lookups.
 */
void
cap_direct_lineage(PGconn *conn, CapPlan *p)
{
	for (int i = 0; p->direct && i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		const char *params[1] = {t->lineage};
		PGresult   *res = bridge_exec(conn, "reading the comment of a lineage table",
									  "SELECT coalesce(pg_catalog.obj_description($1::regclass, 'pg_class'), '')",
									  1, params);
		bool		marked = strncmp(PQgetvalue(res, 0, 0), "cqlbridge: not kept", 19) == 0;
		StrBuf		sb;

		PQclear(res);
		sb_init(&sb);
		if (t->direct && t->key_of_pk)
		{
			if (!marked)
				sb_appendf(&sb, "COMMENT ON TABLE %s IS 'cqlbridge: not kept (the stream applies %s from the change itself; its key is its relation''s key)'",
						   t->lineage, t->target);
		}
		else if (marked && t->key_of_pk)
		{
			CapAffected *a = &p->affected[t->direct_affected];
			CapSource  *s = &p->sources[a->source];

			cap_log("%s: filling its lineage table from the Cassandra table's keys (an earlier stream applied it directly and did not keep it)",
					t->target);
			sb_appendf(&sb, "BEGIN; TRUNCATE %s; INSERT INTO %s SELECT ", t->lineage, t->lineage);
			for (int k = 0; k < t->nkey; k++)
				sb_appendf(&sb, "%sf.%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
			for (int l = 0; l < t->nlin; l++)
				for (int j = 0; j < s->npk; j++)
					if (strcmp(a->lin_of_pk[j], t->lin[l]) == 0)
						sb_appendf(&sb, ", f.%s", bridge_quote_ident(t->key[t->key_of_pk[j]]));
			sb_appendf(&sb, " FROM %s f; COMMENT ON TABLE %s IS NULL; COMMIT; ANALYZE %s",
					   t->foreign_table, t->lineage, t->lineage);
		}
		else if (marked)
			bridge_fatal_hint("Remove the stream (\"cqlbridge stream DIR --drop\"), empty the tables and start it again (it loads them).",
							  "the lineage table of %s was not kept by an earlier stream, and this one cannot fill it again",
							  t->target);
		else if (t->direct && t->nlin > 1)
		{
			sb_appendf(&sb, "CREATE INDEX IF NOT EXISTS %s_lin ON %s (", strrchr(t->lineage, '.') + 1, t->lineage);
			for (int l = 0; l < t->nlin; l++)
				sb_appendf(&sb, "%s%s", l ? ", " : "", bridge_quote_ident(t->lin[l]));
			sb_append(&sb, ")");
		}
		if (sb.len)
			bridge_exec_script(conn, "preparing a lineage table", sb.data);
		sb_free(&sb);
	}
}

/* ------------------------------------------------------------------------
 * Changes
 * ------------------------------------------------------------------------
 */

/* Whether affected line a's table is applied directly now. */
bool
cap_direct_takes(const CapPlan *p, const CapAffected *a)
{
	const CapTable *t = &p->tables[a->table];

	return p->direct && t->direct && t->state == CAP_LIVE &&
		!p->direct->src[a->source].all_recompute;
}

/* Whether source s feeds a table applied directly now. */
static bool
source_direct(const CapPlan *p, int s)
{
	for (int i = 0; i < p->naffected; i++)
		if (p->affected[i].source == s && cap_direct_takes(p, &p->affected[i]))
			return true;
	return false;
}

/*
 * state_of
 *		The read columns of tuple t as one encoded row: an unchanged TOASTed
 *		value from prev (the row's previous state, encoded) or from old (a
 *		FULL old tuple).  NULL when a value is nowhere.
 */
static char *
state_of(const CapSource *s, const CapTuple *t, const char *prev, const CapTuple *old)
{
	char	  **vals = bridge_malloc(sizeof(char *) * (s->nread + 1));
	char	  **pv = NULL;
	int			np = 0;
	char	   *out = NULL;
	StrBuf		sb;

	for (int i = 0; i < s->nread; i++)
	{
		int			c = s->read_pos[i];

		if (c < 0 || c >= t->ncols)
			goto done;
		if (t->kinds[c] != 'u')
			vals[i] = t->kinds[c] == 't' ? t->values[c] : NULL;
		else if (old && c < old->ncols && old->kinds[c] != 'u')
			vals[i] = old->kinds[c] == 't' ? old->values[c] : NULL;
		else
		{
			if (pv == NULL && prev != NULL)
				pv = cap_decode_values(prev, &np);
			if (pv == NULL || np != s->nread)
				goto done;
			vals[i] = pv[i];
		}
	}
	sb_init(&sb);
	cap_encode_values(&sb, vals, s->nread);
	out = sb.data;
done:
	if (pv)
	{
		for (int i = 0; i < np; i++)
			free(pv[i]);
		free(pv);
	}
	free(vals);
	return out;
}

/* The key of source s in tuple t (alt: fallback), encoded; NULL with err. */
static char *
key_of(const CapSource *s, const CapTuple *t, const CapTuple *alt, char *err, size_t errlen)
{
	char	  **vals = bridge_malloc(sizeof(char *) * (s->npk + 1));
	StrBuf		sb;

	if (!cap_tuple_values(s, t, alt, s->pk, s->npk, vals, err, errlen))
	{
		free(vals);
		return NULL;
	}
	sb_init(&sb);
	cap_encode_values(&sb, vals, s->npk);
	free(vals);
	return sb.data;
}

/* The last state of r, or NULL (gone, or none kept). */
static const char *
last_state(const DirectRow *r)
{
	return r && !r->gone && r->nstates > 0 ? r->states[r->nstates - 1] : NULL;
}

/* Append state (taken over) to r as its last state. */
static void
add_state(CapDirect *cd, DirectRow *r, char *state)
{
	r->gone = false;
	if (r->nstates > 0 && strcmp(r->states[r->nstates - 1], state) == 0)
	{
		free(state);
		return;
	}
	if (r->nstates == r->capstates)
	{
		r->capstates = r->capstates ? r->capstates * 2 : 2;
		r->states = bridge_realloc(r->states, sizeof(char *) * r->capstates);
	}
	r->states[r->nstates++] = state;
	cd->nchanges++;
}

/*
 * cap_direct_change
 *		Keep what an INSERT, UPDATE or DELETE of source number source says
 *		of its row, when the source feeds a table applied directly (see the
 *		file header).  False with err when the change lacks the row's key.
 */
bool
cap_direct_change(CapPlan *p, int source, const CapMessage *m, char *err, size_t errlen)
{
	CapSource  *s = &p->sources[source];
	DirectSource *d;
	char	   *newkey = NULL;
	char	   *oldkey = NULL;
	const char *prev = NULL;
	DirectRow  *r;

	if (!source_direct(p, source))
		return true;
	d = &p->direct->src[source];
	if (m->kind == CAP_DELETE || (m->kind == CAP_UPDATE && m->has_old))
	{
		oldkey = key_of(s, &m->oldt, m->kind == CAP_UPDATE ? &m->newt : NULL, err, errlen);
		if (oldkey == NULL)
			return false;
	}
	if (m->kind != CAP_DELETE)
	{
		newkey = key_of(s, &m->newt, m->has_old ? &m->oldt : NULL, err, errlen);
		if (newkey == NULL)
		{
			free(oldkey);
			return false;
		}
	}
	if (oldkey && (newkey == NULL || strcmp(oldkey, newkey) != 0))
	{
		/* deleted, or its key moved: the old key's row is gone */
		r = row_of(d, oldkey);
		prev = last_state(r);
		r->gone = true;
		p->direct->nchanges++;
	}
	if (newkey)
	{
		char	   *state;

		r = row_of(d, newkey);
		if (prev == NULL)
			prev = last_state(r);
		/* a K tuple's other columns are nulls, not the old values */
		state = state_of(s, &m->newt, prev, m->old_full ? &m->oldt : NULL);
		if (state == NULL)
		{
			/* an unchanged TOASTed value nobody gave: recompute this row */
			r->recompute = true;
			r->gone = false;
			p->direct->nchanges++;
		}
		else
			add_state(p->direct, r, state);
	}
	free(oldkey);
	free(newkey);
	return true;
}

/*
 * cap_direct_recompute
 *		Source number source's tables are recomputed for the rest of this
 *		flush (a TRUNCATE, a partition that appeared or went, changes
 *		without old values): its rows kept so far recompute too.
 */
void
cap_direct_recompute(CapPlan *p, int source)
{
	DirectSource *d;

	if (p->direct == NULL)
		return;
	d = &p->direct->src[source];
	d->all_recompute = true;
	for (int r = 0; r < d->nrows; r++)
		d->rows[r].recompute = true;
}

/* Changes kept for the next flush (its size counts them). */
size_t
cap_direct_count(const CapPlan *p)
{
	return p->direct ? p->direct->nchanges : 0;
}

/*
 * cap_direct_requests
 *		At the flush's start: the derivation requests (keys.c) of every row
 *		that recomputes, for its direct tables: new keys by its key now, old
 *		ones by its key in the lineage table.  True when such rows have
 *		states, whose keys cap_direct_recompute_keys adds.
 */
bool
cap_direct_requests(CapPlan *p, CapKeySet *req)
{
	bool		states = false;

	if (p->direct == NULL)
		return false;
	for (int si = 0; si < p->nsources; si++)
	{
		DirectSource *d = &p->direct->src[si];

		for (int r = 0; r < d->nrows; r++)
		{
			DirectRow  *row = &d->rows[r];
			char	  **vals;
			int			n;

			if (!row->recompute)
				continue;
			states = states || row->nstates > 0;
			vals = cap_decode_values(row->key, &n);
			for (int t = 0; vals && t < p->ntables; t++)
			{
				CapTable   *tab = &p->tables[t];

				if (!tab->direct || p->affected[tab->direct_affected].source != si)
					continue;
				cap_request_add(req, tab->direct_affected, 'n', vals, n);
				cap_request_add(req, tab->direct_affected, 'o', vals, n);
			}
			for (int k = 0; vals && k < n; k++)
				free(vals[k]);
			free(vals);
		}
	}
	return states;
}

/*
 * state_arrays
 *		The states of d's rows chosen by which ('l': the last state of rows
 *		applied directly; 'e': their earlier states; 'r': every state of
 *		rows that recompute; 'n': none) as one text[] literal per read
 *		column of s; *nrows counts them.
 */
static char **
state_arrays(const CapSource *s, const DirectSource *d, char which, int *nrows)
{
	char	 ***cols = bridge_malloc(sizeof(char **) * (s->nread + 1));
	int			n = 0;
	int			cap = 16;

	for (int i = 0; i < s->nread; i++)
		cols[i] = bridge_malloc(sizeof(char *) * cap);
	for (int r = 0; r < d->nrows; r++)
	{
		const DirectRow *row = &d->rows[r];

		if (which == 'n' || row->recompute != (which == 'r'))
			continue;
		for (int v = 0; v < row->nstates; v++)
		{
			bool		last = v == row->nstates - 1 && !row->gone;
			char	  **vals;
			int			nv;

			if (which == 'l' && !last)
				continue;
			if (which == 'e' && last)
				continue;
			vals = cap_decode_values(row->states[v], &nv);
			if (vals == NULL || nv != s->nread)
				bridge_fatal("internal error: a kept row of %s does not decode", s->current);
			if (n == cap)
			{
				cap *= 2;
				for (int i = 0; i < s->nread; i++)
					cols[i] = bridge_realloc(cols[i], sizeof(char *) * cap);
			}
			for (int i = 0; i < s->nread; i++)
				cols[i][n] = vals[i];
			free(vals);
			n++;
		}
	}
	*nrows = n;
	return cap_column_literals(cols, s->nread, n);
}

/* "v.k1 IS NOT NULL AND ...": every key column of t in alias set. */
static char *
keys_set(const CapTable *t, const char *alias)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%s%s.%s IS NOT NULL", k ? " AND " : "", alias, bridge_quote_ident(t->key[k]));
	return sb.data;
}

/* "a.c = b.c AND ..." over t's key columns, and its lineage ones with lin. */
static char *
same_row(const CapTable *t, const char *a, const char *b, bool lin)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%s%s.%s = %s.%s", k ? " AND " : "", a, bridge_quote_ident(t->key[k]),
				   b, bridge_quote_ident(t->key[k]));
	for (int k = 0; lin && k < t->nlin; k++)
		sb_appendf(&sb, " AND %s.%s = %s.%s", a, bridge_quote_ident(t->lin[k]),
				   b, bridge_quote_ident(t->lin[k]));
	return sb.data;
}


/*
 * cap_direct_recompute_keys
 *		In the flush's first transaction, after the derivation: the keys of
 *		every state of the rows that recompute (a failed flush may have
 *		written them) join their tables' pending keys.  False with err.
 */
bool
cap_direct_recompute_keys(PGconn *conn, CapPlan *p, char *err, size_t errlen)
{
	for (int ti = 0; p->direct && ti < p->ntables; ti++)
	{
		CapTable   *t = &p->tables[ti];
		int			si;
		CapSource  *s;
		DirectSource *d;
		char	  **arrays;
		int			n;
		char	   *view;
		char	   *cols;
		char	   *set;
		char	   *sql;
		PGresult   *res;

		if (!t->direct || cap_table_waits(p, ti))
			continue;
		si = p->affected[t->direct_affected].source;
		s = &p->sources[si];
		d = &p->direct->src[si];
		arrays = state_arrays(s, d, 'r', &n);
		if (n == 0)
		{
			for (int i = 0; i < s->nread; i++)
				free(arrays[i]);
			free(arrays);
			continue;
		}
		view = rows_sql(t, s, d, 1);
		cols = cap_key_columns(t, "v", false);
		set = keys_set(t, "v");
		sql = bridge_printf("SELECT DISTINCT %s FROM (%s) v WHERE %s", cols, view, set);
		res = cap_exec(conn, sql, s->nread, (const char *const *) arrays, err, errlen);
		for (int i = 0; i < s->nread; i++)
			free(arrays[i]);
		free(arrays);
		free(view);
		free(cols);
		free(set);
		free(sql);
		if (res == NULL)
			return false;
		cap_add_keys(t, res);
		PQclear(res);
	}
	return true;
}

/*
 * direct_sql
 *		The flush's statement of direct table t (see the file header).
 *		Parameters: the last states ($1..), the earlier states (the next
 *		nread, only with with_earlier), the changed source keys (npk, as
 *		text[]).  It upserts the last states' rows, deletes the lineage rows
 *		of the changed keys that no last state has and adds those it lacks,
 *		and returns the keys to delete.  Every part sees the lineage table
 *		as it was before.  Without earlier states (outside a replay, nearly
 *		always) the keys to delete are those of the changed source keys
 *		alone, which are distinct: no UNION, no view over empty arrays.
 */
static char *
direct_sql(const CapTable *t, const CapSource *s, const DirectSource *d, const CapAffected *a,
		   bool with_earlier)
{
	char	   *last = rows_sql(t, s, d, 1);
	char	   *earlier = with_earlier ? rows_sql(t, s, d, 1 + s->nread) : NULL;
	char	   *set = keys_set(t, "v");
	char	   *lset = keys_set(t, "l");
	char	   *fcols = cap_key_columns(t, "f", true);
	char	   *vkeys = cap_key_columns(t, "v", false);
	char	   *lkeys = cap_key_columns(t, "l", false);
	char	   *fl_lin = same_row(t, "f", "l", true);
	char	   *fc_key = same_row(t, "f", "c", false);
	StrBuf		sb;
	StrBuf		tk;

	/* the changed source keys, and how the lineage table holds them */
	sb_init(&tk);
	cap_unnest_rows(&tk, s->pk_types, s->npk, 1 + (with_earlier ? 2 : 1) * s->nread, "p");

	sb_init(&sb);
	if (t->key_of_pk)
	{
		/* no lineage table: the changed source keys are the old keys */
		sb_appendf(&sb, "WITH f AS MATERIALIZED (SELECT v.* FROM (%s) v WHERE %s), ", last, set);
		sb_appendf(&sb, "tk AS (%s), ", tk.data);
		sb_appendf(&sb, "up AS (INSERT INTO %s (%s) SELECT %s FROM f) ", t->foreign_table, t->columns, t->columns);
		sb_append(&sb, "SELECT c.* FROM (");
		if (with_earlier)
			sb_appendf(&sb, "SELECT %s FROM (%s) v WHERE %s UNION ", vkeys, earlier, set);
		sb_append(&sb, "SELECT ");
		for (int k = 0; k < t->nkey; k++)
			for (int j = 0; j < s->npk; j++)
				if (t->key_of_pk[j] == k)
					sb_appendf(&sb, "%stk.p%d AS %s", k ? ", " : "", j + 1,
							   bridge_quote_ident(t->key[k]));
		sb_appendf(&sb, " FROM tk) c WHERE NOT EXISTS (SELECT 1 FROM f WHERE %s)", fc_key);
		goto done;
	}
	sb_appendf(&sb, "WITH f AS MATERIALIZED (SELECT v.* FROM (%s) v WHERE %s), ", last, set);
	sb_appendf(&sb, "tk AS MATERIALIZED (%s), ", tk.data);
	sb_appendf(&sb, "up AS (INSERT INTO %s (%s) SELECT %s FROM f), ", t->foreign_table, t->columns, t->columns);
	sb_appendf(&sb, "ld AS (DELETE FROM %s l USING tk WHERE ", t->lineage);
	for (int k = 0; k < s->npk; k++)
		sb_appendf(&sb, "%sl.%s = tk.p%d", k ? " AND " : "", bridge_quote_ident(a->lin_of_pk[k]), k + 1);
	sb_appendf(&sb, " AND NOT EXISTS (SELECT 1 FROM f WHERE %s)), ", fl_lin);
	sb_appendf(&sb, "li AS (INSERT INTO %s SELECT %s FROM f WHERE NOT EXISTS (SELECT 1 FROM %s l WHERE %s)) ",
			   t->lineage, fcols, t->lineage, fl_lin);
	sb_append(&sb, "SELECT c.* FROM (");
	if (with_earlier)
		sb_appendf(&sb, "SELECT %s FROM (%s) v WHERE %s UNION ", vkeys, earlier, set);
	sb_appendf(&sb, "SELECT %s FROM %s l JOIN tk ON ", lkeys, t->lineage);
	for (int k = 0; k < s->npk; k++)
		sb_appendf(&sb, "%sl.%s = tk.p%d", k ? " AND " : "", bridge_quote_ident(a->lin_of_pk[k]), k + 1);
	sb_appendf(&sb, " WHERE %s) c WHERE NOT EXISTS (SELECT 1 FROM f WHERE %s)", lset, fc_key);
done:
	free(last);
	free(earlier);
	free(set);
	free(lset);
	free(fcols);
	free(vkeys);
	free(lkeys);
	free(fl_lin);
	free(fc_key);
	sb_free(&tk);
	return sb.data;
}

/*
 * cap_direct_write
 *		In the flush's write transaction: direct table number table's rows
 *		(see the file header), then the DELETEs of its vanished keys
 *		(writer.c).  *written counts the keys written and deleted.  False
 *		with err.
 */
bool
cap_direct_write(PGconn *conn, CapPlan *p, int table, long long *written,
				 char *err, size_t errlen)
{
	CapTable   *t = &p->tables[table];
	CapAffected *a;
	CapSource  *s;
	DirectSource *d;
	char	  **params;
	char	  **last;
	char	  **earlier;
	int			nlast;
	int			nearlier;
	int			nkeys = 0;
	int			nparams;
	char	   *sql;
	PGresult   *res;
	bool		ok;

	if (p->direct == NULL || !t->direct || cap_table_waits(p, table))
		return true;
	a = &p->affected[t->direct_affected];
	s = &p->sources[a->source];
	d = &p->direct->src[a->source];
	for (int r = 0; r < d->nrows; r++)
		nkeys += !d->rows[r].recompute;
	if (nkeys == 0)
		return true;
	last = state_arrays(s, d, 'l', &nlast);
	/* earlier states can be in Cassandra only while replaying (capture.c) */
	earlier = state_arrays(s, d, p->replay_until != 0 ? 'e' : 'n', &nearlier);
	nparams = (nearlier > 0 ? 2 : 1) * s->nread;
	params = bridge_malloc(sizeof(char *) * (nparams + s->npk + 1));
	for (int i = 0; i < s->nread; i++)
	{
		params[i] = last[i];
		if (nearlier > 0)
			params[s->nread + i] = earlier[i];
		else
			free(earlier[i]);
	}
	{
		/* the changed source keys (of rows applied directly) */
		char	 ***cols = bridge_malloc(sizeof(char **) * (s->npk + 1));
		char	  **keys;
		int			n = 0;

		for (int k = 0; k < s->npk; k++)
			cols[k] = bridge_malloc(sizeof(char *) * (nkeys + 1));
		for (int r = 0; r < d->nrows; r++)
		{
			char	  **vals;
			int			nv;

			if (d->rows[r].recompute)
				continue;
			vals = cap_decode_values(d->rows[r].key, &nv);
			if (vals == NULL || nv != s->npk)
				bridge_fatal("internal error: a kept key of %s does not decode", s->current);
			for (int k = 0; k < s->npk; k++)
				cols[k][n] = vals[k];
			free(vals);
			n++;
		}
		keys = cap_column_literals(cols, s->npk, n);
		for (int k = 0; k < s->npk; k++)
			params[nparams + k] = keys[k];
		free(keys);
	}
	nparams += s->npk;
	sql = direct_sql(t, s, d, a, nearlier > 0);
	res = cap_exec(conn, sql, nparams, (const char *const *) params, err, errlen);
	free(sql);
	for (int i = 0; i < nparams; i++)
		free(params[i]);
	free(params);
	free(last);
	free(earlier);
	if (res == NULL)
		return false;
	ok = PQntuples(res) == 0 || cap_delete_keys(conn, t, res, t->nkey, err, errlen);
	if (ok)
		*written += nlast + PQntuples(res);
	PQclear(res);
	return ok;
}

/* Forget the rows kept (after a flush committed, or a new session). */
void
cap_direct_clear(CapPlan *p)
{
	if (p->direct == NULL)
		return;
	for (int si = 0; si < p->nsources; si++)
	{
		DirectSource *d = &p->direct->src[si];

		for (int r = 0; r < d->nrows; r++)
		{
			for (int v = 0; v < d->rows[r].nstates; v++)
				free(d->rows[r].states[v]);
			free(d->rows[r].states);
			free(d->rows[r].key);
		}
		d->nrows = 0;
		d->all_recompute = false;
		if (d->slots)
			memset(d->slots, 0, sizeof(int) * d->nslots);
	}
	p->direct->nchanges = 0;
}

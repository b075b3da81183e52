/*-------------------------------------------------------------------------
 *
 * tables.c
 *	  The query tables a stream maintains, as it recorded them, against a
 *	  plan: the plan diff of "cqlbridge plan" and "cqlbridge stream
 *	  --replan".
 *
 * When a stream loads, it records per target table (stream_tables) its
 * lineage table, foreign table, source view, key, columns and the plan's
 * definition of it: its block of 002 (the foreign table with every
 * column's CQL type, and the source view's SQL), its rows SQL and its
 * "affected" lines of 003.  A plan made later for the same keyspace is
 * compared with that record, table by table:
 *	 - unchanged: same definition; it keeps streaming and is never reloaded;
 *	 - added: a new target; created and backfilled online (join.c);
 *	 - changed: the same primary key, other columns or other rows; its new
 *	   columns are added in Cassandra (ALTER TABLE ... ADD) and it is
 *	   backfilled online;
 *	 - re-keyed, or a column of another CQL type: Cassandra can change
 *	   neither a primary key nor a column's type, so this cannot be done
 *	   online: refused, naming the table and what to do;
 *	 - removed: no longer maintained (dropped in Cassandra only when
 *	   asked).
 * The record also carries each table's state: live, or joining while it
 * is backfilled (join.c).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/tables.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

/* The length of s without its trailing blanks and newlines. */
static int
trimmed_length(const char *s)
{
	int			n = (int) strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return n;
}

/* Cut s's trailing blanks and newlines, in place. */
static void
trim_end(char *s)
{
	s[trimmed_length(s)] = '\0';
}

/*
 * cap_tables_define
 *		Each table's definition from the plan directory: its block of
 *		002_foreign_tables.sql (from "DROP FOREIGN TABLE IF EXISTS <foreign
 *		table>;" to the blank line after its view), its columns, key, rows
 *		SQL and affected lines.  Before cap_plan_prepare, which rewrites the
 *		affected SQL.
 */
void
cap_tables_define(CapPlan *p)
{
	char	   *path = bridge_path(p->dir, "002_foreign_tables.sql");
	char	   *text = bridge_read_file(path);

	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		char	   *head = bridge_printf("DROP FOREIGN TABLE IF EXISTS %s;\n", t->foreign_table);
		const char *at = strstr(text, head);
		const char *end;
		StrBuf		sb;

		if (at == NULL)
			bridge_fatal_hint("Run \"cqlbridge plan\" again.",
							  "%s: no definition of foreign table %s", path, t->foreign_table);
		end = strstr(at, "\n\n");
		t->block = end ? bridge_printf("%.*s", (int) (end - at), at) : bridge_strdup(at);
		trim_end(t->block);
		sb_init(&sb);
		/* a table's place in the files does not count: trailing blanks off */
		sb_appendf(&sb, "columns: %s\nrows: %.*s\n", t->columns, trimmed_length(t->rows_sql), t->rows_sql);
		for (int a = 0; a < p->naffected; a++)
			if (p->affected[a].table == i)
				sb_appendf(&sb, "affected: %s | %s\n", p->sources[p->affected[a].source].qualified,
						   p->affected[a].sql);
		sb_append(&sb, t->block);
		t->definition = sb.data;
		free(head);
	}
	free(text);
	free(path);
}

/* The key of t as written in stream_tables: "k1, k2". */
static char *
key_text(const CapTable *t)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%s%s", k ? ", " : "", t->key[k]);
	return sb.data;
}

/*
 * cql_types
 *		The Cassandra columns of a 002 block: "column_name '<c>'" and
 *		"cql_type '<t>'" of each column line of its foreign table; n set.
 */
static void
cql_types(const char *block, char ***names, char ***types, int *n)
{
	int			cap = 16;

	*names = bridge_malloc(sizeof(char *) * cap);
	*types = bridge_malloc(sizeof(char *) * cap);
	*n = 0;
	for (const char *line = block; line && *line;)
	{
		const char *nl = strchr(line, '\n');
		size_t		len = nl ? (size_t) (nl - line) : strlen(line);
		char	   *l = bridge_printf("%.*s", (int) len, line);
		char	   *c = strstr(l, "column_name '");
		char	   *ty = strstr(l, "cql_type '");

		if (c && ty)
		{
			char	   *ce = strchr(c + 13, '\'');
			char	   *te = strrchr(ty + 10, '\'');

			if (ce && te)
			{
				if (*n == cap)
				{
					cap *= 2;
					*names = bridge_realloc(*names, sizeof(char *) * cap);
					*types = bridge_realloc(*types, sizeof(char *) * cap);
				}
				(*names)[*n] = bridge_printf("%.*s", (int) (ce - c - 13), c + 13);
				(*types)[*n] = bridge_printf("%.*s", (int) (te - ty - 10), ty + 10);
				(*n)++;
			}
		}
		free(l);
		line = nl ? nl + 1 : NULL;
	}
}

/*
 * compare_columns
 *		What changed between the columns of the recorded block and t's:
 *		t->detail, t->added_cql (the new columns, for ALTER TABLE ADD) and
 *		CAP_RETYPED when a column kept its name and changed its type.
 */
static void
compare_columns(CapTable *t, const char *old_block)
{
	char	  **on,
			  **ot,
			  **nn,
			  **nt;
	int			no,
				nnew;
	StrBuf		added;
	StrBuf		add_cql;
	StrBuf		removed;
	StrBuf		retyped;

	cql_types(old_block, &on, &ot, &no);
	cql_types(t->block, &nn, &nt, &nnew);
	sb_init(&added);
	sb_init(&add_cql);
	sb_init(&removed);
	sb_init(&retyped);
	for (int i = 0; i < nnew; i++)
	{
		int			o = -1;

		for (int j = 0; j < no && o < 0; j++)
			if (strcmp(nn[i], on[j]) == 0)
				o = j;
		if (o < 0)
		{
			sb_appendf(&added, "%s%s", added.len ? ", " : "", nn[i]);
			sb_appendf(&add_cql, "%s%s %s", add_cql.len ? ", " : "", bridge_quote_ident(nn[i]), nt[i]);
		}
		else if (strcmp(nt[i], ot[o]) != 0)
			sb_appendf(&retyped, "%s%s %s -> %s", retyped.len ? ", " : "", nn[i], ot[o], nt[i]);
	}
	for (int j = 0; j < no; j++)
	{
		bool		kept = false;

		for (int i = 0; i < nnew && !kept; i++)
			kept = strcmp(nn[i], on[j]) == 0;
		if (!kept)
			sb_appendf(&removed, "%s%s", removed.len ? ", " : "", on[j]);
	}
	if (retyped.len)
	{
		t->change = CAP_RETYPED;
		t->detail = bridge_printf("columns of another type: %s", retyped.data);
	}
	else
		t->detail = bridge_printf("%s%s%s%s%s",
								  added.len ? "columns added: " : "", added.data,
								  added.len && removed.len ? "; " : "",
								  removed.len ? "columns no longer written (kept in Cassandra): " : "",
								  removed.data);
	if (t->detail[0] == '\0')
	{
		free(t->detail);
		t->detail = bridge_strdup("its rows' SQL changed");
	}
	t->added_cql = add_cql.len ? add_cql.data : NULL;
	sb_free(&added);
	sb_free(&removed);
	sb_free(&retyped);
}

/* The number n of a lineage table "<schema>.stream_keys_<n>", or 0. */
static int
lineage_number(const char *lineage)
{
	const char *u = strrchr(lineage, '_');

	return u ? atoi(u + 1) : 0;
}

/*
 * cap_tables_exist
 *		Whether the stream of p's keyspace recorded its tables (from the
 *		catalog: to_regclass would fail for a role without USAGE on the
 *		plan's schema, which must be refused by the checks that follow).
 */
bool
cap_tables_exist(PGconn *conn, const CapPlan *p)
{
	const char *params[1] = {p->schema_plain};
	PGresult   *res = bridge_exec(conn, "looking up the stream's tables",
								  "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
								  "ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'stream_tables')::text",
								  1, params);
	bool		exists = strcmp(PQgetvalue(res, 0, 0), "true") == 0;

	PQclear(res);
	return exists;
}

/*
 * cap_tables_compare
 *		Read the stream's record of its tables, if it has one, and compare
 *		the plan with it: each table's change, state and lineage table (the recorded
 *		one; a new number for an added table), and the recorded tables the
 *		plan no longer has.  Without a record (a stream not loaded yet, or
 *		of an older cqlbridge) every table is unchanged and live.
 */
void
cap_tables_compare(PGconn *conn, CapPlan *p)
{
	char	   *sql;
	PGresult   *res;
	int			next = 1;

	/* nothing is created here: the checks that may refuse come later */
	for (int i = 0; i < p->ntables; i++)
		p->tables[i].state = CAP_LIVE;
	if (!cap_tables_exist(conn, p))
		return;
	sql = bridge_printf("SELECT target, lineage, foreign_table, source_view, key, definition, state "
						"FROM %s.stream_tables ORDER BY target", p->schema);
	res = bridge_exec(conn, "reading the stream's query tables", sql, 0, NULL);
	free(sql);
	p->recorded = PQntuples(res) > 0;
	for (int r = 0; r < PQntuples(res); r++)
		if (lineage_number(PQgetvalue(res, r, 1)) >= next)
			next = lineage_number(PQgetvalue(res, r, 1)) + 1;
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		int			rec = -1;

		t->change = CAP_UNCHANGED;
		t->state = CAP_LIVE;
		for (int r = 0; r < PQntuples(res) && rec < 0; r++)
			if (strcmp(PQgetvalue(res, r, 0), t->target) == 0)
				rec = r;
		if (!p->recorded)
			continue;
		if (rec < 0)
		{
			t->change = CAP_ADDED;
			t->state = CAP_JOINING;
			free(t->lineage);
			t->lineage = bridge_printf("%s.stream_keys_%d", p->schema, next++);
			continue;
		}
		free(t->lineage);
		t->lineage = bridge_strdup(PQgetvalue(res, rec, 1));
		if (strcmp(PQgetvalue(res, rec, 6), "live") != 0)
			t->state = CAP_JOINING;
		t->interrupted = strcmp(PQgetvalue(res, rec, 6), "backfilling") == 0;
		{
			char	   *key = key_text(t);

			if (strcmp(key, PQgetvalue(res, rec, 4)) != 0)
			{
				t->change = CAP_REKEYED;
				t->detail = bridge_printf("primary key (%s), was (%s)", key, PQgetvalue(res, rec, 4));
			}
			free(key);
		}
		if (t->change == CAP_UNCHANGED && strcmp(t->definition, PQgetvalue(res, rec, 5)) != 0)
		{
			const char *old = strstr(PQgetvalue(res, rec, 5), "DROP FOREIGN TABLE IF EXISTS ");

			t->change = CAP_CHANGED;
			compare_columns(t, old ? old : "");
		}
	}
	for (int r = 0; r < PQntuples(res); r++)
	{
		bool		kept = false;
		CapRemoved *rm;

		for (int i = 0; i < p->ntables && !kept; i++)
			kept = strcmp(PQgetvalue(res, r, 0), p->tables[i].target) == 0;
		if (kept)
			continue;
		p->removed = bridge_realloc(p->removed, sizeof(CapRemoved) * (p->nremoved + 1));
		rm = &p->removed[p->nremoved++];
		rm->target = bridge_strdup(PQgetvalue(res, r, 0));
		rm->lineage = bridge_strdup(PQgetvalue(res, r, 1));
		rm->foreign_table = bridge_strdup(PQgetvalue(res, r, 2));
		rm->source_view = bridge_strdup(PQgetvalue(res, r, 3));
	}
	PQclear(res);
}

/*
 * cap_tables_record
 *		stream_tables := the plan's tables, each with its definition and
 *		state (the load records all live; --replan the added and changed
 *		ones joining).  In the caller's transaction: a record half
 *		written would make the next plan diff wrong.
 */
void
cap_tables_record(PGconn *conn, CapPlan *p)
{
	char	   *sql = bridge_printf("CREATE TABLE IF NOT EXISTS %s.stream_tables (target text PRIMARY KEY, "
									"lineage text NOT NULL, foreign_table text NOT NULL, source_view text NOT NULL, "
									"key text NOT NULL, definition text NOT NULL, state text NOT NULL); "
									"DELETE FROM %s.stream_tables", p->schema, p->schema);

	bridge_exec_script(conn, "recording the stream's query tables", sql);
	free(sql);
	sql = bridge_printf("INSERT INTO %s.stream_tables VALUES ($1, $2, $3, $4, $5, $6, $7)", p->schema);
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		char	   *key = key_text(t);
		const char *params[7] = {t->target, t->lineage, t->foreign_table, t->source_view, key,
			t->definition,
		t->state == CAP_LIVE ? "live" : t->interrupted ? "backfilling" : "joining"};

		PQclear(bridge_exec(conn, "recording a query table of the stream", sql, 7, params));
		free(key);
	}
	free(sql);
}

/* Whether the plan differs from the stream's record. */
bool
cap_tables_differ(const CapPlan *p)
{
	if (p->nremoved > 0)
		return true;
	for (int i = 0; i < p->ntables; i++)
		if (p->tables[i].change != CAP_UNCHANGED)
			return true;
	return false;
}

/*
 * cap_tables_diff_text
 *		The plan diff, a line per table: what each is to the stream and
 *		what applying the plan online does with it.  Allocated.
 */
char *
cap_tables_diff_text(const CapPlan *p)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "plan diff against the stream of keyspace %s (%d tables in the plan, %d removed):\n",
			   p->keyspace, p->ntables, p->nremoved);
	for (int i = 0; i < p->ntables; i++)
	{
		const CapTable *t = &p->tables[i];

		switch (t->change)
		{
			case CAP_UNCHANGED:
				sb_appendf(&sb, "  unchanged  %s: keeps streaming, not reloaded%s\n", t->target,
						   t->state != CAP_LIVE ? " (still joining: its backfill resumes)" : "");
				break;
			case CAP_ADDED:
				sb_appendf(&sb, "  added      %s: created, backfilled from a snapshot while the stream runs, then streamed\n",
						   t->target);
				break;
			case CAP_CHANGED:
				sb_appendf(&sb, "  changed    %s: %s; %sbackfilled from a snapshot while the stream runs\n",
						   t->target, t->detail, t->added_cql ? "ALTER TABLE ... ADD in Cassandra, " : "");
				break;
			case CAP_REKEYED:
				sb_appendf(&sb, "  re-keyed   %s: %s: Cassandra cannot change a primary key; not online\n",
						   t->target, t->detail);
				break;
			case CAP_RETYPED:
				sb_appendf(&sb, "  retyped    %s: %s: Cassandra cannot change a column's type; not online\n",
						   t->target, t->detail);
				break;
		}
	}
	for (int i = 0; i < p->nremoved; i++)
		sb_appendf(&sb, "  removed    %s: no longer maintained (kept in Cassandra unless --drop-removed)\n",
				   p->removed[i].target);
	return sb.data;
}

/*
 * cap_tables_report
 *		"cqlbridge plan" of a keyspace whose stream runs: the plan diff
 *		against that stream, printed (unless quiet) and written to
 *		DIR/plan_diff.txt.  Nothing when the keyspace has no stream.
 */
void
cap_tables_report(PGconn *conn, const char *dir, bool quiet)
{
	CapPlan    *p = cap_read_plan(dir);

	if (!cap_tables_exist(conn, p))
		return;
	cap_tables_define(p);
	cap_tables_compare(conn, p);
	if (!p->recorded)
		return;
	{
		char	   *text = cap_tables_diff_text(p);
		char	   *path = bridge_path(dir, "plan_diff.txt");

		bridge_write_file(path, text);
		if (!quiet)
			printf("%s(written to %s; \"cqlbridge stream %s --replan\" applies it online)\n", text, path, dir);
		free(text);
		free(path);
	}
}

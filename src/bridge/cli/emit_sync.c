/*-------------------------------------------------------------------------
 *
 * emit_sync.c
 *	  Write DIR/005_sync.sql from the metadata of DIR/003_load.sql: the
 *	  triggers that keep the Cassandra tables equal to their source views
 *	  while the application keeps writing to the relational tables.
 *
 * Design.  A change to one source row can change several target rows (a
 * hotel rename touches one hotels_by_poi row per nearby POI), remove some
 * (a deleted hotel_poi link) and create others.  For every source relation
 * we install:
 *
 *	BEFORE UPDATE OR DELETE, per row: the "affected" query of every target
 *		built from this relation, evaluated with the OLD primary key on the
 *		data as it still is, gives the keys of the target rows that may be
 *		about to change or vanish.  They go to a per-session temp table of
 *		pending keys (one per target, typed like the target's key).
 *	AFTER INSERT OR UPDATE, per row: the NEW primary key goes to a temp
 *		table of changed rows (one per relation).
 *	AFTER INSERT OR UPDATE OR DELETE, a constraint trigger DEFERRABLE
 *		INITIALLY DEFERRED: at COMMIT the flush turns the changed rows into
 *		target keys (the affected queries, on the data as it is then), and
 *		for every pending key upserts the rows of the source view at that
 *		key into the foreign table (INSERT is an upsert in Cassandra); a key
 *		the view no longer produces is deleted (DELETE by full key).
 *
 * Why at COMMIT and not at the end of each statement: a transaction that
 * deletes a target row and re-creates it (delete a hotel_poi link, insert
 * it again) would queue a DELETE and an INSERT of the same key.  Deferred
 * writes are sent pipelined at COMMIT, so Cassandra could apply them in
 * either order, and on equal timestamps the delete wins.  Recomputing each
 * pending key once, from the final data, sends exactly one write per key.
 * The deferred trigger fires once per changed row; a transaction-local
 * setting (cqlbridge.sync_pending) makes all but the first one return at
 * once, and is rolled back with the changes of an aborted subtransaction.
 *
 * Concurrent transactions.  A renames a hotel while B links it to one more
 * POI; B commits first.  B's new hotels_by_poi row carries the old name
 * (A is not committed).  A must rewrite that row too, although it did not
 * exist when A's UPDATE ran: that is why the keys of new rows are computed
 * in the flush and not in the row trigger.  And if A's flush ran while B
 * was between its own flush and its commit, each would miss the other's
 * change.  So the flush first takes a transaction-level advisory lock per
 * target table it will write (in a fixed order: two flushes cannot
 * deadlock), then computes and writes: a second flush on the same target
 * waits until the first transaction has committed, and its statements
 * (READ COMMITTED: a new snapshot each) see that transaction's data.  The
 * first one's writes were sent before its commit, so Cassandra receives
 * them in commit order.  Flushes of transactions writing the same target
 * tables therefore run one at a time; under REPEATABLE READ or
 * SERIALIZABLE the flush sees the transaction's snapshot, not the latest
 * data, and this guarantee does not hold.
 *
 * The foreign tables get write_mode 'on_commit', so the writes leave for
 * Cassandra only when the transaction commits, and a rolled-back
 * transaction sends nothing.  TRUNCATE of a source relation is refused
 * while sync is installed (it fires no row triggers, and the Cassandra
 * tables would silently keep the rows).
 *
 * IDENTIFICATION
 *	  src/bridge/cli/emit_sync.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define TAG "$cqlbridge$"

typedef struct SyncTarget
{
	const char *table;			/* keyspace.table (for messages) */
	const char *foreign_table;	/* schema-qualified, SQL-ready */
	const char *source_view;
	char	  **cols;
	int			ncols;
	char	  **key;
	int			nkey;
	char	   *pending;		/* temp table of pending keys */
} SyncTarget;

typedef struct SyncAffected
{
	int			target;			/* index into targets */
	char	   *sql;			/* with $1..$n */
	int			line;			/* of the block, for messages */
} SyncAffected;

typedef struct SyncRelation
{
	char	   *name;			/* schema.table as written in 003 */
	char	  **pk;
	int			npk;
	char	   *func;			/* function name (unqualified, unquoted) */
	char	   *changed;		/* temp table of changed primary keys */
	SyncAffected *aff;
	int			naff;
} SyncRelation;

typedef struct SyncModel
{
	const char *path;
	SyncTarget *targets;
	int			ntargets;
	SyncRelation *rels;
	int			nrels;
} SyncModel;

static char *
trimmed(const char *s, size_t n)
{
	char	   *p;

	while (n > 0 && isspace((unsigned char) *s))
	{
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char) s[n - 1]))
		n--;
	p = bridge_malloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* letters, digits, '_' of s, lower case, at most max characters */
static char *
sanitize(const char *s, size_t max)
{
	char	   *p = bridge_malloc(strlen(s) + 1);
	size_t		n = 0;

	for (; *s && n < max; s++)
	{
		unsigned char c = (unsigned char) *s;

		if (c == '"')
			continue;
		p[n++] = isalnum(c) ? (char) tolower(c) : '_';
	}
	p[n] = '\0';
	return p;
}

/*
 * "<schema.table> (<pk columns>) | <SQL>" of an affected line.
 */
static void
parse_affected(SyncModel *m, int target, const char *value, int line)
{
	const char *bar = strstr(value, " | ");
	const char *open;
	const char *close;
	char	   *relname;
	char	   *pklist;
	char	  **pk;
	int			npk;
	SyncRelation *rel = NULL;
	SyncAffected *a;

	if (bar == NULL)
		bridge_fatal_hint("The format is \"-- affected: schema.table (pk columns) | SQL\".",
						  "%s:%d: affected line without \" | \": %s", m->path, line, value);
	open = memchr(value, '(', (size_t) (bar - value));
	close = open ? memchr(open, ')', (size_t) (bar - open)) : NULL;
	if (open == NULL || close == NULL)
		bridge_fatal_hint("The format is \"-- affected: schema.table (pk columns) | SQL\".",
						  "%s:%d: affected line without \"(pk columns)\": %s", m->path, line, value);
	relname = trimmed(value, (size_t) (open - value));
	pklist = trimmed(open + 1, (size_t) (close - open - 1));
	pk = bridge_split_list(pklist, &npk);
	if (relname[0] == '\0')
		bridge_fatal("%s:%d: affected line without a relation: %s", m->path, line, value);
	if (npk == 0)
		bridge_fatal_hint("Changes to a relation without a primary key cannot be traced to target rows; give it a primary key.",
						  "%s:%d: relation %s has no primary key columns in its affected line",
						  m->path, line, relname);

	for (int i = 0; i < m->nrels; i++)
		if (strcmp(m->rels[i].name, relname) == 0)
			rel = &m->rels[i];
	if (rel == NULL)
	{
		char	   *base = bridge_printf("sync_%s", relname);
		char	   *fname = sanitize(base, 55);
		bool		clash;
		int			suffix = 1;

		/* two relations may sanitize alike ("a.b_c" and "a_b.c") */
		do
		{
			clash = false;
			for (int i = 0; i < m->nrels; i++)
				if (strcmp(m->rels[i].func, fname) == 0)
					clash = true;
			if (clash)
			{
				char	   *s = sanitize(base, 50);

				free(fname);
				fname = bridge_printf("%s_%d", s, ++suffix);
				free(s);
			}
		} while (clash);
		free(base);

		m->rels = realloc(m->rels, sizeof(SyncRelation) * (m->nrels + 1));
		if (!m->rels)
			bridge_fatal("out of memory");
		rel = &m->rels[m->nrels++];
		memset(rel, 0, sizeof(*rel));
		rel->name = relname;
		rel->pk = pk;
		rel->npk = npk;
		rel->func = fname;
		{
			char	   *san = sanitize(relname, 40);

			rel->changed = bridge_printf("cqlbridge_chg_%d_%s", m->nrels - 1, san);
			free(san);
		}
	}
	else
	{
		bool		same = rel->npk == npk;

		for (int i = 0; same && i < npk; i++)
			same = strcmp(rel->pk[i], pk[i]) == 0;
		if (!same)
			bridge_fatal("%s:%d: relation %s has different primary key columns (%s) than in an earlier affected line",
						 m->path, line, relname, pklist);
	}
	rel->aff = realloc(rel->aff, sizeof(SyncAffected) * (rel->naff + 1));
	if (!rel->aff)
		bridge_fatal("out of memory");
	a = &rel->aff[rel->naff++];
	a->target = target;
	a->sql = trimmed(bar + 3, strlen(bar + 3));
	a->line = line;
	if (a->sql[0] == '\0')
		bridge_fatal("%s:%d: affected line of %s without SQL", m->path, line, relname);
	{
		size_t		n = strlen(a->sql);

		if (a->sql[n - 1] == ';')
			a->sql[n - 1] = '\0';
	}
	free(pklist);
}

static SyncModel *
read_model(const char *dir)
{
	char	   *path = bridge_path(dir, "003_load.sql");
	BridgeBlockFile *f = bridge_read_blocks(path);
	SyncModel  *m = bridge_malloc(sizeof(SyncModel));

	memset(m, 0, sizeof(*m));
	m->path = path;
	m->targets = bridge_malloc(sizeof(SyncTarget) * (f->nblocks + 1));
	for (int i = 0; i < f->nblocks; i++)
	{
		BridgeBlock *b = &f->blocks[i];
		SyncTarget *t = &m->targets[m->ntargets++];
		char	   *tmp;
		char	   *san;

		t->table = bridge_block_require(f, b, "table");
		t->foreign_table = bridge_block_require(f, b, "foreign_table");
		t->source_view = bridge_block_require(f, b, "source_view");
		t->cols = bridge_split_list(bridge_block_require(f, b, "columns"), &t->ncols);
		t->key = bridge_split_list(bridge_block_require(f, b, "key"), &t->nkey);
		if (t->nkey == 0 || t->ncols == 0)
			bridge_fatal("%s:%d: table %s has no key or no columns", path, b->line, t->table);
		for (int k = 0; k < t->nkey; k++)
		{
			bool		found = false;

			for (int c = 0; c < t->ncols; c++)
				found |= strcmp(t->key[k], t->cols[c]) == 0;
			if (!found)
				bridge_fatal("%s:%d: key column %s of table %s is not among its columns",
							 path, b->line, t->key[k], t->table);
		}
		san = sanitize(t->table, 40);
		tmp = bridge_printf("cqlbridge_pk_%d_%s", i, san);
		t->pending = tmp;
		free(san);

		for (int k = 0; k < b->nmeta; k++)
			if (strcmp(b->keys[k], "affected") == 0)
				parse_affected(m, i, b->values[k], b->line);
	}
	return m;
}

/* Replace $k (outside literals and quoted names) by "<rec>.<pk[k-1]>". */
static char *
bind_row(const SyncModel *m, const SyncRelation *rel, const SyncAffected *a,
		 const char *rec)
{
	StrBuf		sb;
	const char *s = a->sql;

	sb_init(&sb);
	while (*s)
	{
		if (*s == '\'' || *s == '"')
		{
			char		q = *s;
			const char *e = s + 1;

			for (;;)
			{
				if (*e == '\0')
					bridge_fatal("%s:%d: unterminated quote in the affected SQL of %s",
								 m->path, a->line, rel->name);
				if (*e == q && e[1] == q)
					e += 2;
				else if (*e == q)
					break;
				else
					e++;
			}
			for (const char *c = s; c <= e; c++)
			{
				char		ch[2] = {*c, '\0'};

				sb_append(&sb, ch);
			}
			s = e + 1;
		}
		else if (*s == '$' && isdigit((unsigned char) s[1]) &&
				 (s == a->sql || !(isalnum((unsigned char) s[-1]) || s[-1] == '_')))
		{
			char	   *end;
			long		k = strtol(s + 1, &end, 10);
			char	   *col;

			if (k < 1 || k > rel->npk)
				bridge_fatal("%s:%d: the affected SQL of %s uses $%ld, but the relation has %d primary key column%s",
							 m->path, a->line, rel->name, k, rel->npk, rel->npk == 1 ? "" : "s");
			col = bridge_quote_ident(rel->pk[k - 1]);
			sb_appendf(&sb, "%s.%s", rec, col);
			free(col);
			s = end;
		}
		else
		{
			char		ch[2] = {*s, '\0'};

			sb_append(&sb, ch);
			s++;
		}
	}
	return sb.data;
}

static char *
ident_list(char **names, int n, const char *prefix)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int i = 0; i < n; i++)
	{
		char	   *q = bridge_quote_ident(names[i]);

		sb_appendf(&sb, "%s%s%s", i > 0 ? ", " : "", prefix, q);
		free(q);
	}
	return sb.data;
}

static char *
key_match(const SyncTarget *t, const char *left, const char *right)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int i = 0; i < t->nkey; i++)
	{
		char	   *q = bridge_quote_ident(t->key[i]);

		sb_appendf(&sb, "%s%s.%s = %s.%s", i > 0 ? " AND " : "", left, q, right, q);
		free(q);
	}
	return sb.data;
}

/* "CREATE TEMP TABLE name ... AS SELECT cols FROM rel WITH NO DATA" if missing */
static void
emit_temp_table(StrBuf *out, const char *name, const char *cols, const char *rel)
{
	char	   *qualified = bridge_printf("pg_temp.%s", name);
	char	   *lit = bridge_quote_literal(qualified);

	sb_appendf(out,
			   "\tIF to_regclass(%s) IS NULL THEN\n"
			   "\t\tCREATE TEMP TABLE %s ON COMMIT DELETE ROWS AS\n"
			   "\t\t\tSELECT %s FROM %s s WITH NO DATA;\n"
			   "\tEND IF;\n",
			   lit, name, cols, rel);
	free(lit);
	free(qualified);
}

static void
emit_prepare(StrBuf *out, const SyncModel *m)
{
	sb_append(out,
			  "-- Create this session's temp tables of pending target keys (typed like\n"
			  "-- the keys) and changed source rows (typed like their primary keys), and\n"
			  "-- mark the transaction as having pending work.\n"
			  "CREATE OR REPLACE FUNCTION cqlbridge.sync_prepare() RETURNS void\n"
			  "LANGUAGE plpgsql AS " TAG "\nBEGIN\n"
			  "\t-- the COMMIT-time recompute must see other transactions' committed rows\n"
			  "\tIF current_setting('transaction_isolation') <> 'read committed' THEN\n"
			  "\t\tRAISE EXCEPTION 'cqlbridge sync needs READ COMMITTED, not %', current_setting('transaction_isolation')\n"
			  "\t\t\tUSING ERRCODE = 'feature_not_supported',\n"
			  "\t\t\t\t  DETAIL = 'The query tables are recomputed at COMMIT from the data committed by then; a snapshot taken earlier would miss concurrent changes.',\n"
			  "\t\t\t\t  HINT = 'Change synced tables in READ COMMITTED transactions.';\n"
			  "\tEND IF;\n");
	for (int i = 0; i < m->ntargets; i++)
	{
		const SyncTarget *t = &m->targets[i];
		char	   *keys = ident_list(t->key, t->nkey, "s.");

		emit_temp_table(out, t->pending, keys, t->source_view);
		free(keys);
	}
	for (int i = 0; i < m->nrels; i++)
	{
		const SyncRelation *rel = &m->rels[i];
		char	   *pks = ident_list(rel->pk, rel->npk, "s.");

		emit_temp_table(out, rel->changed, pks, rel->name);
		free(pks);
	}
	sb_append(out,
			  "\tPERFORM set_config('cqlbridge.sync_pending', 'on', true);\n"
			  "END\n" TAG ";\n\n");
}

/* INSERT INTO <pending keys of the target> <affected SQL bound to rec>; */
static void
emit_affected(StrBuf *out, const SyncModel *m, const SyncRelation *rel,
			  const SyncAffected *a, const char *rec, const char *indent)
{
	const SyncTarget *t = &m->targets[a->target];
	char	   *sql = bind_row(m, rel, a, rec);
	char	   *keys = ident_list(t->key, t->nkey, "");

	sb_appendf(out, "%s-- %s\n%sINSERT INTO pg_temp.%s (%s)\n%s", indent, t->table,
			   indent, t->pending, keys, indent);
	/* keep the SQL's own line breaks, indented */
	for (const char *p = sql; *p; p++)
	{
		char		ch[2] = {*p, '\0'};

		sb_append(out, ch);
		if (*p == '\n')
			sb_append(out, indent);
	}
	sb_append(out, ";\n");
	free(sql);
	free(keys);
}

static void
emit_relation(StrBuf *out, const SyncModel *m, const SyncRelation *rel)
{
	char	   *fq = bridge_quote_ident(rel->func);
	char	   *pks = ident_list(rel->pk, rel->npk, "");
	char	   *newpks = ident_list(rel->pk, rel->npk, "NEW.");

	sb_appendf(out, "-- %s (primary key %s)\n", rel->name, pks);
	sb_appendf(out,
			   "CREATE OR REPLACE FUNCTION cqlbridge.%s() RETURNS trigger\n"
			   "LANGUAGE plpgsql AS " TAG "\nBEGIN\n"
			   "\tIF TG_OP = 'UPDATE' AND OLD::text IS NOT DISTINCT FROM NEW::text THEN\n"
			   "\t\tRETURN NEW;\n"
			   "\tEND IF;\n"
			   "\tIF current_setting('cqlbridge.sync_pending', true) IS DISTINCT FROM 'on' THEN\n"
			   "\t\tPERFORM cqlbridge.sync_prepare();\n"
			   "\tEND IF;\n"
			   "\tIF TG_WHEN = 'BEFORE' THEN\n"
			   "\t\t-- target rows computed from the old row, on the data before the change\n",
			   fq);
	for (int i = 0; i < rel->naff; i++)
		emit_affected(out, m, rel, &rel->aff[i], "OLD", "\t\t");
	sb_appendf(out,
			   "\t\tIF TG_OP = 'DELETE' THEN\n\t\t\tRETURN OLD;\n\t\tEND IF;\n"
			   "\t\tRETURN NEW;\n\tEND IF;\n"
			   "\t-- AFTER: the flush computes the target rows of the new row at COMMIT\n"
			   "\tINSERT INTO pg_temp.%s (%s) VALUES (%s);\n"
			   "\tRETURN NULL;\nEND\n" TAG ";\n",
			   rel->changed, pks, newpks);
	sb_appendf(out,
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_before ON %s;\n"
			   "CREATE TRIGGER cqlbridge_sync_before BEFORE UPDATE OR DELETE ON %s\n"
			   "\tFOR EACH ROW EXECUTE FUNCTION cqlbridge.%s();\n"
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_after ON %s;\n"
			   "CREATE TRIGGER cqlbridge_sync_after AFTER INSERT OR UPDATE ON %s\n"
			   "\tFOR EACH ROW EXECUTE FUNCTION cqlbridge.%s();\n"
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_flush ON %s;\n"
			   "CREATE CONSTRAINT TRIGGER cqlbridge_sync_flush AFTER INSERT OR UPDATE OR DELETE ON %s\n"
			   "\tDEFERRABLE INITIALLY DEFERRED\n"
			   "\tFOR EACH ROW EXECUTE FUNCTION cqlbridge.sync_flush();\n"
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_truncate ON %s;\n"
			   "CREATE TRIGGER cqlbridge_sync_truncate BEFORE TRUNCATE ON %s\n"
			   "\tFOR EACH STATEMENT EXECUTE FUNCTION cqlbridge.sync_no_truncate();\n\n",
			   rel->name, rel->name, fq, rel->name, rel->name, fq,
			   rel->name, rel->name, rel->name, rel->name);
	free(fq);
	free(pks);
	free(newpks);
}

static bool
relation_feeds(const SyncRelation *rel, int target)
{
	for (int i = 0; i < rel->naff; i++)
		if (rel->aff[i].target == target)
			return true;
	return false;
}

static void
emit_flush(StrBuf *out, const SyncModel *m)
{
	sb_append(out,
			  "-- At COMMIT (deferred): lock the target tables to be written, turn the\n"
			  "-- changed source rows into target keys, then recompute every pending key\n"
			  "-- once from the source view: upsert the rows it produces, delete the keys\n"
			  "-- it no longer produces.\n"
			  "CREATE OR REPLACE FUNCTION cqlbridge.sync_flush() RETURNS trigger\n"
			  "LANGUAGE plpgsql AS " TAG "\nDECLARE\n\tcqlbridge_key record;\n\tcqlbridge_row record;\nBEGIN\n"
			  "\tIF current_setting('cqlbridge.sync_pending', true) IS DISTINCT FROM 'on' THEN\n"
			  "\t\tRETURN NULL;\n"
			  "\tEND IF;\n"
			  "\tPERFORM set_config('cqlbridge.sync_pending', 'off', true);\n\n"
			  "\t-- one flush per target table at a time, in a fixed order (no deadlock)\n");
	for (int i = 0; i < m->ntargets; i++)
	{
		const SyncTarget *t = &m->targets[i];
		char	   *tlit = bridge_quote_literal(t->table);

		sb_appendf(out, "\tIF EXISTS (SELECT 1 FROM pg_temp.%s)", t->pending);
		for (int r = 0; r < m->nrels; r++)
			if (relation_feeds(&m->rels[r], i))
				sb_appendf(out, "\n\t   OR EXISTS (SELECT 1 FROM pg_temp.%s)", m->rels[r].changed);
		sb_appendf(out,
				   " THEN\n"
				   "\t\tPERFORM pg_advisory_xact_lock(hashtext('cqlbridge.sync'), hashtext(%s));\n"
				   "\tEND IF;\n",
				   tlit);
		free(tlit);
	}

	sb_append(out, "\n\t-- target rows of the new and changed rows, on the data as it is now\n");
	for (int r = 0; r < m->nrels; r++)
	{
		const SyncRelation *rel = &m->rels[r];
		char	   *pks = ident_list(rel->pk, rel->npk, "c.");

		sb_appendf(out, "\tFOR cqlbridge_row IN SELECT DISTINCT %s FROM pg_temp.%s c LOOP\n",
				   pks, rel->changed);
		for (int i = 0; i < rel->naff; i++)
			emit_affected(out, m, rel, &rel->aff[i], "cqlbridge_row", "\t\t");
		sb_appendf(out, "\tEND LOOP;\n\tDELETE FROM pg_temp.%s;\n", rel->changed);
		free(pks);
	}

	sb_append(out, "\n\t-- recompute each pending key once\n");
	for (int i = 0; i < m->ntargets; i++)
	{
		const SyncTarget *t = &m->targets[i];
		char	   *pkeys = ident_list(t->key, t->nkey, "p.");
		char	   *cols = ident_list(t->cols, t->ncols, "");
		char	   *scols = ident_list(t->cols, t->ncols, "s.");
		char	   *smatch = key_match(t, "s", "cqlbridge_key");
		char	   *tmatch = key_match(t, "t", "cqlbridge_key");

		sb_appendf(out,
				   "\t-- %s\n"
				   "\tFOR cqlbridge_key IN SELECT DISTINCT %s FROM pg_temp.%s p LOOP\n"
				   "\t\tINSERT INTO %s (%s)\n"
				   "\t\tSELECT %s\n"
				   "\t\tFROM %s s\n"
				   "\t\tWHERE %s;\n"
				   "\t\tIF NOT FOUND THEN\n"
				   "\t\t\tDELETE FROM %s t WHERE %s;\n"
				   "\t\tEND IF;\n"
				   "\tEND LOOP;\n"
				   "\tDELETE FROM pg_temp.%s;\n",
				   t->table, pkeys, t->pending, t->foreign_table, cols, scols,
				   t->source_view, smatch, t->foreign_table, tmatch, t->pending);
		free(pkeys);
		free(cols);
		free(scols);
		free(smatch);
		free(tmatch);
	}
	sb_append(out, "\tRETURN NULL;\nEND\n" TAG ";\n\n");
}

static char *
build_sync_sql(const SyncModel *m, const char *dir)
{
	StrBuf		out;

	sb_init(&out);
	(void) dir;
	sb_append(&out,
			  "--\n"
			  "-- 005_sync.sql\n"
			   "--\t  Keeps the Cassandra tables of this directory in step with the relational\n"
			   "--\t  tables: row triggers collect the keys of the target rows a change\n"
			   "--\t  touches, a deferred trigger recomputes them from the source views at\n"
			   "--\t  COMMIT (upsert, or delete when gone), and write_mode 'on_commit' sends\n"
			   "--\t  the writes only when the transaction commits.\n"
			   "--\n"
			   "-- Generated by cqlbridge from 003_load.sql; install with \"cqlbridge sync DIR\"\n"
			   "-- (one transaction, re-runnable), remove with \"cqlbridge sync DIR --uninstall\".\n"
			   "--\n\n");
	sb_append(&out, "CREATE SCHEMA IF NOT EXISTS cqlbridge;\n\n");

	sb_append(&out, "-- Writes leave for Cassandra at COMMIT; ROLLBACK sends nothing.\n"
			  "DO " TAG "\nDECLARE\n\tft regclass;\nBEGIN\n\tFOREACH ft IN ARRAY ARRAY[\n");
	for (int i = 0; i < m->ntargets; i++)
	{
		char	   *lit = bridge_quote_literal(m->targets[i].foreign_table);

		sb_appendf(&out, "\t\t%s%s\n", lit, i + 1 < m->ntargets ? "," : "");
		free(lit);
	}
	sb_append(&out,
			  "\t]::regclass[] LOOP\n"
			  "\t\tIF EXISTS (SELECT 1 FROM pg_foreign_table t, unnest(t.ftoptions) o\n"
			  "\t\t\t\t   WHERE t.ftrelid = ft AND o LIKE 'write\\_mode=%') THEN\n"
			  "\t\t\tEXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (SET write_mode %L)', ft, 'on_commit');\n"
			  "\t\tELSE\n"
			  "\t\t\tEXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (ADD write_mode %L)', ft, 'on_commit');\n"
			  "\t\tEND IF;\n"
			  "\tEND LOOP;\n"
			  "END\n" TAG ";\n\n");

	sb_append(&out,
			  "CREATE OR REPLACE FUNCTION cqlbridge.sync_no_truncate() RETURNS trigger\n"
			  "LANGUAGE plpgsql AS " TAG "\nBEGIN\n"
			  "\tRAISE EXCEPTION 'cannot TRUNCATE %.% while cqlbridge sync is installed', TG_TABLE_SCHEMA, TG_TABLE_NAME\n"
			  "\t\tUSING ERRCODE = 'feature_not_supported',\n"
			  "\t\t\t  DETAIL = 'TRUNCATE fires no row triggers, so the Cassandra tables would keep the rows.',\n"
			  "\t\t\t  HINT = 'Use DELETE; or run \"cqlbridge sync DIR --uninstall\", TRUNCATE here and the Cassandra table, then \"cqlbridge apply DIR --restart\" and sync again.';\n"
			  "END\n" TAG ";\n\n");

	emit_prepare(&out, m);
	emit_flush(&out, m);
	for (int i = 0; i < m->nrels; i++)
		emit_relation(&out, m, &m->rels[i]);

	/* the body of every function is dollar-quoted with TAG */
	{
		int			count = 0;

		for (const char *p = out.data; (p = strstr(p, TAG)) != NULL; p += strlen(TAG))
			count++;
		if (count % 2 != 0)
			bridge_fatal("%s: the generated triggers would contain \"%s\" inside a function body",
						 m->path, TAG);
	}
	return out.data;
}

void
emit_sync(const char *dir)
{
	SyncModel  *m = read_model(dir);
	char	   *sql = build_sync_sql(m, dir);
	char	   *path = bridge_path(dir, "005_sync.sql");

	if (m->nrels == 0)
		bridge_fatal_hint("Each 003 block lists the source relations of its table in \"-- affected:\" lines.",
						  "%s: no \"-- affected:\" lines, nothing to synchronize", m->path);
	bridge_write_file(path, sql);
	free(sql);
	free(path);
}

char *
emit_sync_uninstall_sql(const char *dir)
{
	SyncModel  *m = read_model(dir);
	StrBuf		out;

	sb_init(&out);
	sb_append(&out,
			  "DO " TAG "\nDECLARE\n\tr record;\nBEGIN\n"
			  "\tFOR r IN SELECT t.tgname, t.tgrelid::regclass AS rel\n"
			  "\t\t\t FROM pg_trigger t\n"
			  "\t\t\t JOIN pg_proc p ON p.oid = t.tgfoid\n"
			  "\t\t\t JOIN pg_namespace n ON n.oid = p.pronamespace\n"
			  "\t\t\t WHERE n.nspname = 'cqlbridge' AND t.tgname LIKE 'cqlbridge\\_sync\\_%'\n"
			  "\tLOOP\n"
			  "\t\tEXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.rel);\n"
			  "\tEND LOOP;\n"
			  "\tFOR r IN SELECT p.oid::regprocedure AS f\n"
			  "\t\t\t FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace\n"
			  "\t\t\t WHERE n.nspname = 'cqlbridge' AND p.proname LIKE 'sync\\_%'\n"
			  "\tLOOP\n"
			  "\t\tEXECUTE format('DROP FUNCTION %s', r.f);\n"
			  "\tEND LOOP;\n"
			  "END\n" TAG ";\n");
	/* back to immediate writes (the FDW's default) */
	for (int i = 0; i < m->ntargets; i++)
	{
		char	   *lit = bridge_quote_literal(m->targets[i].foreign_table);

		sb_appendf(&out,
				   "DO " TAG "\nBEGIN\n"
				   "\tIF to_regclass(%s) IS NOT NULL AND EXISTS (\n"
				   "\t\tSELECT 1 FROM pg_foreign_table t, unnest(t.ftoptions) o\n"
				   "\t\tWHERE t.ftrelid = to_regclass(%s) AND o LIKE 'write\\_mode=%%') THEN\n"
				   "\t\tALTER FOREIGN TABLE %s OPTIONS (DROP write_mode);\n"
				   "\tEND IF;\n"
				   "END\n" TAG ";\n",
				   lit, lit, m->targets[i].foreign_table);
		free(lit);
	}
	return out.data;
}

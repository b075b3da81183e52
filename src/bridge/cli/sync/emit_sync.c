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
 * Names and privileges.  Everything 005 installs belongs to one plan:
 * the functions and the lock table live in the plan's schema
 * cqlbridge_<keyspace> (created by 002, owned by the role running
 * cqlbridge), the triggers are named cqlbridge_sync_<tag>_*, the temp
 * tables cqlbridge_{pk,chg}_<tag>_*, and the pending-work setting
 * cqlbridge.sync_pending_<tag> (tag: the keyspace, or a hash of a long
 * one).  Two plans of one database never replace each other's triggers,
 * and --uninstall removes only its own.  The functions are SECURITY
 * DEFINER with search_path = pg_catalog, pg_temp and every name qualified:
 * the role that changes the data needs no user mapping, no rights on the
 * foreign tables and the views, and cannot redirect a name through its
 * search_path.  EXECUTE is revoked from PUBLIC (a trigger fires without
 * it).  A temp table already there at prepare time must belong to the
 * function's owner: a writer could otherwise plant one with a trigger
 * of its own that the definer's INSERT would fire.  The flush serializes
 * on rows of the plan's lock table (SELECT ... FOR UPDATE) instead of
 * advisory locks that any role could take and hold.  Names come from
 * 003 as SQL identifiers and are quoted once here; dollar quotes get a
 * tag that no name contains (bridge_finish_tags).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/sync/emit_sync.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync.h"

#define TAG BRIDGE_TAG

typedef struct SyncTarget
{
	const char *table;			/* keyspace.table (for messages) */
	char	   *foreign_table;	/* schema-qualified, SQL-ready */
	char	   *source_view;	/* schema-qualified, SQL-ready */
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
	char	   *name;			/* schema.table, SQL-ready (quoted as needed) */
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
	const char *keyspace;		/* "-- keyspace:" of 003's header */
	char	   *schema;			/* the plan's schema, cqlbridge_<keyspace> */
	char	   *tag;			/* bridge_plan_tag() */
	char	   *foreign_schema; /* schema of the foreign tables (unquoted) */
	SyncTarget *targets;
	int			ntargets;
	SyncRelation *rels;
	int			nrels;
} SyncModel;

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
		p[n++] = (c < 0x80 && isalnum(c)) ? (char) tolower(c) : '_';
	}
	p[n] = '\0';
	return p;
}

/* prefix + sanitized name, cut to 63 bytes (NAMEDATALEN - 1) */
static char *
temp_name(const char *prefix, const char *name)
{
	size_t		room = strlen(prefix) < 63 ? 63 - strlen(prefix) : 0;
	char	   *san = sanitize(name, room);
	char	   *out = bridge_printf("%s%s", prefix, san);

	free(san);
	return out;
}

/* A metadata value of 003 that sync writes into SQL: no control characters. */
static const char *
clean_value(const SyncModel *m, int line, const char *key, const char *value)
{
	if (bridge_has_control(value))
		bridge_fatal_hint("Run \"cqlbridge plan\" again to regenerate the directory.",
						  "%s:%d: the \"-- %s:\" value contains a control character", m->path, line, key);
	return value;
}

/* "schema.name" (SQL identifiers) -> its two parts, unquoted; advances *p */
static bool
parse_qualified(const char **p, char **schema, char **name)
{
	*schema = bridge_parse_ident(p);
	if (*schema == NULL || **p != '.')
		return false;
	(*p)++;
	*name = bridge_parse_ident(p);
	return *name != NULL;
}

/* a name list of 003 ("-- columns:", "-- key:"), unquoted; fatal when bad */
static char **
name_list(const SyncModel *m, int line, const char *key, const char *value, int *n)
{
	char	  **names = bridge_split_idents(value, n);

	if (names == NULL)
		bridge_fatal_hint("Run \"cqlbridge plan\" again to regenerate the directory.",
						  "%s:%d: \"-- %s:\" is not a list of SQL names separated by commas: %s",
						  m->path, line, key, value);
	return names;
}

/*
 * "<schema.table> (<pk columns>) | <SQL>" of an affected line.  Names are
 * SQL identifiers, quoted where needed: a comma or a parenthesis inside a
 * quoted name is part of the name, and the names come out unquoted.
 */
static void
parse_affected(SyncModel *m, int target, const char *value, int line)
{
	const char *hint = "The format is \"-- affected: schema.table (pk columns) | SQL\"; run \"cqlbridge plan\" again.";
	const char *p = value;
	const char *close;
	char	   *schema;
	char	   *table;
	char	   *relname;
	char	   *pklist;
	char	  **pk;
	int			npk;
	SyncRelation *rel = NULL;
	SyncAffected *a;

	if (!parse_qualified(&p, &schema, &table))
		bridge_fatal_hint(hint, "%s:%d: affected line without a relation \"schema.table\": %s",
						  m->path, line, value);
	while (*p == ' ')
		p++;
	if (*p != '(')
		bridge_fatal_hint(hint, "%s:%d: affected line without \"(pk columns)\": %s", m->path, line, value);
	/* the closing parenthesis: after the last quoted name of the list */
	close = p + 1;
	for (;;)
	{
		char	   *nm = bridge_parse_ident(&close);

		if (nm == NULL)
			break;
		free(nm);
		while (*close == ' ')
			close++;
		if (*close != ',')
			break;
		close++;
	}
	if (*close != ')' || strncmp(close, ") | ", 4) != 0)
		bridge_fatal_hint(hint, "%s:%d: affected line without \"(pk columns) | SQL\": %s", m->path, line, value);
	pklist = bridge_trim_copy(p + 1, (size_t) (close - p - 1));
	pk = name_list(m, line, "affected", pklist, &npk);
	relname = bridge_printf("%s.%s", bridge_qi(schema), bridge_qi(table));
	if (npk == 0)
		bridge_fatal_hint("Changes to a relation without a primary key cannot be traced to target rows; give it a primary key.",
						  "%s:%d: relation %s has no primary key columns in its affected line",
						  m->path, line, relname);

	for (int i = 0; i < m->nrels; i++)
		if (strcmp(m->rels[i].name, relname) == 0)
			rel = &m->rels[i];
	if (rel == NULL)
	{
		char	   *base = bridge_printf("sync_%s_%s", schema, table);
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

		m->rels = bridge_realloc(m->rels, sizeof(SyncRelation) * (m->nrels + 1));
		if (!m->rels)
			bridge_fatal("out of memory");
		rel = &m->rels[m->nrels++];
		memset(rel, 0, sizeof(*rel));
		rel->name = relname;
		rel->pk = pk;
		rel->npk = npk;
		rel->func = fname;
		{
			char	   *prefix = bridge_printf("cqlbridge_chg_%s_%d_", m->tag, m->nrels - 1);
			char	   *both = bridge_printf("%s_%s", schema, table);

			rel->changed = temp_name(prefix, both);
			free(prefix);
			free(both);
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
	rel->aff = bridge_realloc(rel->aff, sizeof(SyncAffected) * (rel->naff + 1));
	if (!rel->aff)
		bridge_fatal("out of memory");
	a = &rel->aff[rel->naff++];
	a->target = target;
	a->sql = bridge_trim_copy(close + 4, strlen(close + 4));
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

/*
 * read_model
 *		The metadata of 003: the plan's keyspace (header), per table its
 *		foreign table, source view, columns and key, and the affected lines.
 */
static SyncModel *
read_model(const char *dir)
{
	char	   *path = bridge_path(dir, "003_load.sql");
	BridgeBlockFile *f = bridge_read_blocks(path);
	SyncModel  *m = bridge_malloc(sizeof(SyncModel));

	memset(m, 0, sizeof(*m));
	m->path = path;
	m->keyspace = bridge_header_get(f->header, "keyspace");
	if (m->keyspace == NULL || !bridge_valid_keyspace(m->keyspace))
		bridge_fatal_hint("The header of 003_load.sql names the plan's keyspace in a line \"-- keyspace: NAME\" (since per-plan object names); run \"cqlbridge plan\" again.",
						  "%s: no valid \"-- keyspace:\" line in the header", path);
	m->schema = bridge_plan_schema(m->keyspace);
	m->tag = bridge_plan_tag(m->keyspace);
	m->targets = bridge_malloc(sizeof(SyncTarget) * (f->nblocks + 1));
	for (int i = 0; i < f->nblocks; i++)
	{
		BridgeBlock *b = &f->blocks[i];
		SyncTarget *t = &m->targets[m->ntargets++];
		const char *v;
		const char *dot;
		char	   *s1;
		char	   *s2;
		char	   *prefix;

		t->table = clean_value(m, b->line, "table", bridge_block_require(f, b, "table"));
		dot = strchr(t->table, '.');
		v = clean_value(m, b->line, "foreign_table", bridge_block_require(f, b, "foreign_table"));
		if (!parse_qualified(&v, &s1, &s2) || *v != '\0')
			bridge_fatal("%s:%d: \"-- foreign_table:\" is not \"schema.table\"", path, b->line);
		t->foreign_table = bridge_printf("%s.%s", bridge_qi(s1), bridge_qi(s2));
		if (m->foreign_schema == NULL)
			m->foreign_schema = s1;
		v = clean_value(m, b->line, "source_view", bridge_block_require(f, b, "source_view"));
		if (!parse_qualified(&v, &s1, &s2) || *v != '\0')
			bridge_fatal("%s:%d: \"-- source_view:\" is not \"schema.view\"", path, b->line);
		if (strcmp(s1, m->schema) != 0)
			bridge_fatal_hint("Run \"cqlbridge plan\" again to regenerate the directory.",
							  "%s:%d: source view %s is not in the plan's schema %s",
							  path, b->line, bridge_show_name(s1), m->schema);
		t->source_view = bridge_printf("%s.%s", bridge_qi(s1), bridge_qi(s2));
		t->cols = name_list(m, b->line, "columns",
							clean_value(m, b->line, "columns", bridge_block_require(f, b, "columns")), &t->ncols);
		t->key = name_list(m, b->line, "key",
						   clean_value(m, b->line, "key", bridge_block_require(f, b, "key")), &t->nkey);
		if (t->nkey == 0 || t->ncols == 0)
			bridge_fatal("%s:%d: table %s has no key or no columns", path, b->line, t->table);
		for (int k = 0; k < t->nkey; k++)
		{
			bool		found = false;

			for (int c = 0; c < t->ncols; c++)
				found |= strcmp(t->key[k], t->cols[c]) == 0;
			if (!found)
				bridge_fatal("%s:%d: key column %s of table %s is not among its columns",
							 path, b->line, bridge_show_name(t->key[k]), t->table);
		}
		prefix = bridge_printf("cqlbridge_pk_%s_%d_", m->tag, i);
		t->pending = temp_name(prefix, dot ? dot + 1 : t->table);
		free(prefix);

		for (int k = 0; k < b->nmeta; k++)
			if (strcmp(b->keys[k], "affected") == 0)
				parse_affected(m, i, clean_value(m, b->line, "affected", b->values[k]), b->line);
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
		else if (*s == '$')
			bridge_fatal_hint("Run \"cqlbridge plan\" again to regenerate the directory.",
							  "%s:%d: the affected SQL of %s has a '$' outside a quoted name that is no parameter",
							  m->path, a->line, rel->name);
		else
		{
			char		ch[2] = {*s, '\0'};

			sb_append(&sb, ch);
			s++;
		}
	}
	return sb.data;
}

/*
 * ident_list
 *		Names as a comma-separated list of quoted identifiers, each with
 *		prefix (e.g. "NEW."), allocated.
 */
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

/*
 * key_match
 *		The condition that rows left and right have the same target key:
 *		left."k1" = right."k1" AND ...
 */
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

/*
 * The header of every sync function: owner's rights, a search_path that
 * a caller cannot redirect (every name in the bodies is qualified; pg_temp
 * last, and never searched for functions and operators).
 */
#define FUNC_ATTRS \
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS "

/* Only triggers call the functions (a trigger fires without EXECUTE). */
static void
emit_revoke(StrBuf *out, const SyncModel *m, const char *func, const char *args)
{
	sb_appendf(out, "REVOKE ALL ON FUNCTION %s.%s(%s) FROM PUBLIC;\n\n", m->schema, func, args);
}

/* "CREATE TEMP TABLE name ... AS SELECT cols FROM rel WITH NO DATA" if missing */
static void
emit_temp_table(StrBuf *out, const char *name, const char *cols, const char *rel)
{
	char	   *qualified = bridge_printf("pg_temp.%s", name);
	char	   *lit = bridge_quote_literal(qualified);

	sb_appendf(out,
			   "\tIF pg_catalog.to_regclass(%s) IS NULL THEN\n"
			   "\t\tCREATE TEMP TABLE %s ON COMMIT DELETE ROWS AS\n"
			   "\t\t\tSELECT %s FROM %s s WITH NO DATA;\n"
			   "\tEND IF;\n",
			   lit, name, cols, rel);
	free(lit);
	free(qualified);
}

/*
 * emit_prepare
 *		The sync_prepare() function: the session's temp tables of pending
 *		keys and changed rows (created once, checked against planted ones)
 *		and the pending-work setting.
 */
static void
emit_prepare(StrBuf *out, const SyncModel *m)
{
	sb_appendf(out,
			   "-- Create this session's temp tables of pending target keys (typed like\n"
			   "-- the keys) and changed source rows (typed like their primary keys), and\n"
			   "-- mark the transaction as having pending work.\n"
			   "CREATE OR REPLACE FUNCTION %s.sync_prepare() RETURNS void\n"
			   FUNC_ATTRS TAG "\nBEGIN\n"
			   "\t-- the COMMIT-time recompute must see other transactions' committed rows\n"
			   "\tIF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN\n"
			   "\t\tRAISE EXCEPTION 'cqlbridge sync needs READ COMMITTED, not %%', pg_catalog.current_setting('transaction_isolation')\n"
			   "\t\t\tUSING ERRCODE = 'feature_not_supported',\n"
			   "\t\t\t\t  DETAIL = 'The query tables are recomputed at COMMIT from the data committed by then; a snapshot taken earlier would miss concurrent changes.',\n"
			   "\t\t\t\t  HINT = 'Change synced tables in READ COMMITTED transactions.';\n"
			   "\tEND IF;\n",
			   m->schema);
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

	/*
	 * A temp table of these names that the session's own role created
	 * before (with a trigger or rule of its own) would run its code with the
	 * owner's rights when the functions write into it: refuse it.
	 */
	sb_append(out,
			  "\t-- the temp tables must be the owner's own (see emit_sync.c)\n"
			  "\tIF EXISTS (SELECT 1 FROM pg_catalog.pg_class c\n"
			  "\t\t\t   WHERE c.relnamespace = pg_catalog.pg_my_temp_schema()\n"
			  "\t\t\t\t AND c.relname = ANY (ARRAY[");
	for (int i = 0; i < m->ntargets + m->nrels; i++)
	{
		char	   *lit = bridge_quote_literal(i < m->ntargets ? m->targets[i].pending
											   : m->rels[i - m->ntargets].changed);

		sb_appendf(out, "%s%s", i ? ", " : "", lit);
		free(lit);
	}
	sb_appendf(out,
			   "]::name[])\n"
			   "\t\t\t\t AND (c.relowner <> (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER)\n"
			   "\t\t\t\t\t  OR c.relkind <> 'r' OR c.relhastriggers OR c.relhasrules)) THEN\n"
			   "\t\tRAISE EXCEPTION 'cqlbridge sync: a temp table of this session named like its own (cqlbridge_pk_%s_*, cqlbridge_chg_%s_*) was not created by it'\n"
			   "\t\t\tUSING ERRCODE = 'insufficient_privilege',\n"
			   "\t\t\t\t  HINT = 'Drop that temp table, or use another session.';\n"
			   "\tEND IF;\n"
			   "\tPERFORM pg_catalog.set_config('cqlbridge.sync_pending_%s', 'on', true);\n"
			   "END\n" TAG ";\n",
			   m->tag, m->tag, m->tag);
	emit_revoke(out, m, "sync_prepare", "");
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

/*
 * emit_relation
 *		The trigger function of one source relation and its triggers: the
 *		BEFORE row trigger collecting the keys of target rows that may
 *		change or vanish, the AFTER row trigger noting changed rows, the
 *		deferred flush and the TRUNCATE refusal.
 */
static void
emit_relation(StrBuf *out, const SyncModel *m, const SyncRelation *rel)
{
	char	   *fq = bridge_printf("%s.%s", m->schema, bridge_qi(rel->func));
	char	   *pks = ident_list(rel->pk, rel->npk, "");
	char	   *newpks = ident_list(rel->pk, rel->npk, "NEW.");
	const char *tg = m->tag;

	sb_appendf(out, "-- %s (primary key %s)\n", rel->name, pks);
	sb_appendf(out,
			   "CREATE OR REPLACE FUNCTION %s() RETURNS trigger\n"
			   FUNC_ATTRS TAG "\nBEGIN\n"
			   "\tIF TG_OP = 'UPDATE' AND OLD::text IS NOT DISTINCT FROM NEW::text THEN\n"
			   "\t\tRETURN NEW;\n"
			   "\tEND IF;\n"
			   "\tIF pg_catalog.current_setting('cqlbridge.sync_pending_%s', true) IS DISTINCT FROM 'on' THEN\n"
			   "\t\tPERFORM %s.sync_prepare();\n"
			   "\tEND IF;\n"
			   "\tIF TG_WHEN = 'BEFORE' THEN\n"
			   "\t\t-- target rows computed from the old row, on the data before the change\n",
			   fq, tg, m->schema);
	for (int i = 0; i < rel->naff; i++)
		emit_affected(out, m, rel, &rel->aff[i], "OLD", "\t\t");
	sb_appendf(out,
			   "\t\tIF TG_OP = 'DELETE' THEN\n\t\t\tRETURN OLD;\n\t\tEND IF;\n"
			   "\t\tRETURN NEW;\n\tEND IF;\n"
			   "\t-- AFTER: the flush computes the target rows of the new row at COMMIT\n"
			   "\tINSERT INTO pg_temp.%s (%s) VALUES (%s);\n"
			   "\tRETURN NULL;\nEND\n" TAG ";\n",
			   rel->changed, pks, newpks);
	sb_appendf(out, "REVOKE ALL ON FUNCTION %s() FROM PUBLIC;\n", fq);
	sb_appendf(out,
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_%s_before ON %s;\n"
			   "CREATE TRIGGER cqlbridge_sync_%s_before BEFORE UPDATE OR DELETE ON %s\n"
			   "\tFOR EACH ROW EXECUTE FUNCTION %s();\n"
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_%s_after ON %s;\n"
			   "CREATE TRIGGER cqlbridge_sync_%s_after AFTER INSERT OR UPDATE ON %s\n"
			   "\tFOR EACH ROW EXECUTE FUNCTION %s();\n"
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_%s_flush ON %s;\n"
			   "CREATE CONSTRAINT TRIGGER cqlbridge_sync_%s_flush AFTER INSERT OR UPDATE OR DELETE ON %s\n"
			   "\tDEFERRABLE INITIALLY DEFERRED\n"
			   "\tFOR EACH ROW EXECUTE FUNCTION %s.sync_flush();\n"
			   "DROP TRIGGER IF EXISTS cqlbridge_sync_%s_truncate ON %s;\n"
			   "CREATE TRIGGER cqlbridge_sync_%s_truncate BEFORE TRUNCATE ON %s\n"
			   "\tFOR EACH STATEMENT EXECUTE FUNCTION %s.sync_no_truncate();\n\n",
			   tg, rel->name, tg, rel->name, fq,
			   tg, rel->name, tg, rel->name, fq,
			   tg, rel->name, tg, rel->name, m->schema,
			   tg, rel->name, tg, rel->name, m->schema);
	free(fq);
	free(pks);
	free(newpks);
}

/*
 * relation_feeds
 *		Whether a source relation feeds target table number target.
 */
static bool
relation_feeds(const SyncRelation *rel, int target)
{
	for (int i = 0; i < rel->naff; i++)
		if (rel->aff[i].target == target)
			return true;
	return false;
}

/*
 * emit_flush
 *		The sync_flush() function run at COMMIT: lock the target tables,
 *		turn changed rows into pending keys, recompute every pending key
 *		once from the source view (upsert or delete).
 */
static void
emit_flush(StrBuf *out, const SyncModel *m)
{
	sb_appendf(out,
			   "-- At COMMIT (deferred): lock the target tables to be written, turn the\n"
			   "-- changed source rows into target keys, then recompute every pending key\n"
			   "-- once from the source view: upsert the rows it produces, delete the keys\n"
			   "-- it no longer produces.\n"
			   "CREATE OR REPLACE FUNCTION %s.sync_flush() RETURNS trigger\n"
			   FUNC_ATTRS TAG "\nDECLARE\n\tcqlbridge_key record;\n\tcqlbridge_row record;\nBEGIN\n"
			   "\tIF pg_catalog.current_setting('cqlbridge.sync_pending_%s', true) IS DISTINCT FROM 'on' THEN\n"
			   "\t\tRETURN NULL;\n"
			   "\tEND IF;\n"
			   "\tPERFORM pg_catalog.set_config('cqlbridge.sync_pending_%s', 'off', true);\n\n"
			   "\t-- one flush per target table at a time, in a fixed order (no deadlock):\n"
			   "\t-- a row lock of the plan's lock table, which only its owner can take\n",
			   m->schema, m->tag, m->tag);
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
				   "\t\tPERFORM 1 FROM %s.sync_lock l WHERE l.target = %s FOR UPDATE;\n"
				   "\tEND IF;\n",
				   m->schema, tlit);
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
	sb_append(out, "\tRETURN NULL;\nEND\n" TAG ";\n");
	emit_revoke(out, m, "sync_flush", "");
}

/*
 * build_sync_sql
 *		The whole text of 005_sync.sql for the model read from 003 (layout:
 *		docs/cqlbridge-design.md, 005_sync.sql).
 */
static char *
build_sync_sql(const SyncModel *m)
{
	StrBuf		out;

	sb_init(&out);
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
			  "-- (one transaction, re-runnable), remove with \"cqlbridge sync DIR --uninstall\".\n");
	sb_appendf(&out,
			   "-- Objects of this plan (keyspace %s): schema %s, triggers cqlbridge_sync_%s_*.\n"
			   "-- The functions run with the rights of the role that installs them.\n"
			   "--\n\n",
			   m->keyspace, m->schema, m->tag);
	{
		const char *schemas[2];
		char	   *check;

		schemas[0] = m->schema;
		schemas[1] = m->foreign_schema;
		check = bridge_schema_check_sql(schemas, m->foreign_schema ? 2 : 1);
		sb_append(&out, check);
		sb_append(&out, "\n");
		free(check);
	}

	sb_append(&out, "-- Writes leave for Cassandra at COMMIT; ROLLBACK sends nothing.  They are\n"
			  "-- written at the consistency \"cqlbridge sync\" sets (--write-consistency),\n"
			  "-- LOCAL_QUORUM by default.\n"
			  "DO " TAG "\nDECLARE\n\tft regclass;\n"
			  "\twc text := coalesce(nullif(pg_catalog.current_setting('cqlbridge.write_consistency', true), ''), 'LOCAL_QUORUM');\n"
			  "BEGIN\n\tFOREACH ft IN ARRAY ARRAY[\n");
	for (int i = 0; i < m->ntargets; i++)
	{
		char	   *lit = bridge_quote_literal(m->targets[i].foreign_table);

		sb_appendf(&out, "\t\t%s%s\n", lit, i + 1 < m->ntargets ? "," : "");
		free(lit);
	}
	sb_append(&out,
			  "\t]::regclass[] LOOP\n"
			  "\t\tIF EXISTS (SELECT 1 FROM pg_catalog.pg_foreign_table t, pg_catalog.unnest(t.ftoptions) o\n"
			  "\t\t\t\t   WHERE t.ftrelid = ft AND o LIKE 'write\\_mode=%') THEN\n"
			  "\t\t\tEXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s OPTIONS (SET write_mode %L)', ft, 'on_commit');\n"
			  "\t\tELSE\n"
			  "\t\t\tEXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s OPTIONS (ADD write_mode %L)', ft, 'on_commit');\n"
			  "\t\tEND IF;\n"
			  "\t\tIF EXISTS (SELECT 1 FROM pg_catalog.pg_foreign_table t, pg_catalog.unnest(t.ftoptions) o\n"
			  "\t\t\t\t   WHERE t.ftrelid = ft AND o LIKE 'write\\_consistency=%') THEN\n"
			  "\t\t\tEXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s OPTIONS (SET write_consistency %L)', ft, wc);\n"
			  "\t\tELSE\n"
			  "\t\t\tEXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s OPTIONS (ADD write_consistency %L)', ft, wc);\n"
			  "\t\tEND IF;\n"
			  "\tEND LOOP;\n"
			  "END\n" TAG ";\n\n");

	/* the flush locks rows of this table; nobody else may */
	sb_appendf(&out,
			   "-- One row per target table; the flush locks the rows it writes (FOR UPDATE).\n"
			   "CREATE TABLE IF NOT EXISTS %s.sync_lock (target text PRIMARY KEY);\n"
			   "REVOKE ALL ON %s.sync_lock FROM PUBLIC;\n"
			   "INSERT INTO %s.sync_lock (target) VALUES\n",
			   m->schema, m->schema, m->schema);
	for (int i = 0; i < m->ntargets; i++)
	{
		char	   *lit = bridge_quote_literal(m->targets[i].table);

		sb_appendf(&out, "\t(%s)%s\n", lit, i + 1 < m->ntargets ? "," : "");
		free(lit);
	}
	sb_append(&out, "ON CONFLICT (target) DO NOTHING;\n\n");

	sb_appendf(&out,
			   "CREATE OR REPLACE FUNCTION %s.sync_no_truncate() RETURNS trigger\n"
			   FUNC_ATTRS TAG "\nBEGIN\n"
			   "\tRAISE EXCEPTION 'cannot TRUNCATE %%.%% while cqlbridge sync is installed', TG_TABLE_SCHEMA, TG_TABLE_NAME\n"
			   "\t\tUSING ERRCODE = 'feature_not_supported',\n"
			   "\t\t\t  DETAIL = 'TRUNCATE fires no row triggers, so the Cassandra tables would keep the rows.',\n"
			   "\t\t\t  HINT = 'Use DELETE; or run \"cqlbridge sync DIR --uninstall\", TRUNCATE here and the Cassandra table, then \"cqlbridge apply DIR --restart\" and sync again.';\n"
			   "END\n" TAG ";\n",
			   m->schema);
	emit_revoke(&out, m, "sync_no_truncate", "");

	emit_prepare(&out, m);
	emit_flush(&out, m);
	for (int i = 0; i < m->nrels; i++)
		emit_relation(&out, m, &m->rels[i]);

	{
		char	   *sql = bridge_finish_tags(out.data);

		sb_free(&out);
		return sql;
	}
}

/*
 * emit_sync
 *		Write DIR/005_sync.sql from DIR/003_load.sql's metadata; fatal when
 *		003 names no source relation.  Called at the end of plan, or by sync
 *		when the file is missing.
 */
void
emit_sync(const char *dir)
{
	SyncModel  *m = read_model(dir);
	char	   *sql;
	char	   *path = bridge_path(dir, "005_sync.sql");

	if (m->nrels == 0)
		bridge_fatal_hint("Each 003 block lists the source relations of its table in \"-- affected:\" lines.",
						  "%s: no \"-- affected:\" lines, nothing to synchronize", m->path);
	sql = build_sync_sql(m);
	bridge_write_file(path, sql);
	free(sql);
	free(path);
}

/* The plan's schema (cqlbridge_<keyspace>) named by DIR/003_load.sql. */
char *
emit_sync_plan_schema(const char *dir)
{
	return read_model(dir)->schema;
}

/*
 * SQL that removes what 005_sync.sql of this directory installed: the
 * triggers that call a function of the plan's schema (whatever their
 * names), those functions and the lock table.  Other plans' triggers and
 * functions, in their own schemas, stay.
 */
char *
emit_sync_uninstall_sql(const char *dir)
{
	SyncModel  *m = read_model(dir);
	char	   *slit = bridge_quote_literal(m->schema);
	StrBuf		out;

	sb_init(&out);
	sb_appendf(&out,
			   "DO " TAG "\nDECLARE\n\tr record;\nBEGIN\n"
			   "\tFOR r IN SELECT t.tgname, t.tgrelid::regclass AS rel\n"
			   "\t\t\t FROM pg_catalog.pg_trigger t\n"
			   "\t\t\t JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid\n"
			   "\t\t\t JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace\n"
			   "\t\t\t WHERE n.nspname = %s AND p.proname LIKE 'sync\\_%%'\n"
			   "\tLOOP\n"
			   "\t\tEXECUTE pg_catalog.format('DROP TRIGGER %%I ON %%s', r.tgname, r.rel);\n"
			   "\tEND LOOP;\n"
			   "\tFOR r IN SELECT p.oid::regprocedure AS f\n"
			   "\t\t\t FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace\n"
			   "\t\t\t WHERE n.nspname = %s AND p.proname LIKE 'sync\\_%%'\n"
			   "\tLOOP\n"
			   "\t\tEXECUTE pg_catalog.format('DROP FUNCTION %%s', r.f);\n"
			   "\tEND LOOP;\n"
			   "END\n" TAG ";\n"
			   "DROP TABLE IF EXISTS %s.sync_lock;\n",
			   slit, slit, m->schema);
	/* back to immediate writes (the FDW's default) */
	for (int i = 0; i < m->ntargets; i++)
	{
		char	   *lit = bridge_quote_literal(m->targets[i].foreign_table);

		sb_appendf(&out,
				   "DO " TAG "\nBEGIN\n"
				   "\tIF pg_catalog.to_regclass(%s) IS NOT NULL AND EXISTS (\n"
				   "\t\tSELECT 1 FROM pg_catalog.pg_foreign_table t, pg_catalog.unnest(t.ftoptions) o\n"
				   "\t\tWHERE t.ftrelid = pg_catalog.to_regclass(%s) AND o LIKE 'write\\_mode=%%') THEN\n"
				   "\t\tALTER FOREIGN TABLE %s OPTIONS (DROP write_mode);\n"
				   "\tEND IF;\n"
				   "END\n" TAG ";\n",
				   lit, lit, m->targets[i].foreign_table);
		free(lit);
	}
	free(slit);
	{
		char	   *sql = bridge_finish_tags(out.data);

		sb_free(&out);
		return sql;
	}
}

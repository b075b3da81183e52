/*-------------------------------------------------------------------------
 *
 * relations.c
 *	  The stream's source relations as PostgreSQL binds them: by OID and
 *	  attribute number, not by name.  A migration runs for weeks while the
 *	  application is deployed, so the source's DDL must not stop it unless
 *	  it changes what the plan reads.
 *
 * What the plan reads of a relation are the columns its source views
 * depend on (pg_depend of the views' rewrite rules: PostgreSQL records one
 * per column a view uses) and its key columns.  They are recorded with
 * their attribute numbers, names and types in stream_relations, with the
 * relation's OID, when the stream loads.  From then on:
 *	 - a Relation message (pgoutput sends one before the first change of a
 *	   relation in a session and again after its definition changed) is
 *	   matched to the relation by OID, and its columns to the read columns
 *	   by position when the catalog agrees with the message, else by name
 *	   (the name now, the name in the last message, the plan's name).  A
 *	   column added, dropped or retyped that the plan does not read, a
 *	   generated column (never sent by pgoutput), a rename: the stream goes
 *	   on.  A read column that is gone or changed type stops it, naming the
 *	   column (PostgreSQL refuses such DDL while the source views exist, so
 *	   this means the views were dropped with CASCADE);
 *	 - the SQL the stream runs against a relation directly (the collection
 *	   lookups of "affected" lines) reads the relation through a view of
 *	   the stream's own, stream_src_<n>, whose columns keep the plan's
 *	   names; a view binds its relation and columns by OID and attribute
 *	   number, so renames of the relation or its columns are followed.  It
 *	   is made again at every start from the recorded attribute numbers.
 *
 * Every transaction of the stream that reads the source (the flush's two,
 * the initial load, a joining table's backfill) first locks the source
 * views IN ACCESS SHARE MODE, before its snapshot is taken: a LOCK TABLE of
 * a view locks every relation the view reads, partitions included.  The
 * table-rewriting forms of ALTER TABLE (and TRUNCATE) are not MVCC-safe: a
 * snapshot taken before such a rewrite committed sees the rewritten
 * relation empty.  A flush that read it so would delete the keys of every
 * row it recomputed and confirm that, and the rewrite itself decodes to no
 * change that would bring them back.  Locked first, the snapshot is taken
 * after any rewrite in progress committed.  The load's snapshot is the
 * slot's, taken before the locks: a rewrite committed in between is
 * detected (cap_rewritten) and stops the load.
 *
 * Also here: whether a relation's (or a partition's) replica identity
 * carries what the stream needs of its UPDATEs and DELETEs, checked at the
 * start (setup.c) and for each partition that appears (partitions.c).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/relations.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

static const char *const replan_hint =
"The plan no longer describes the source: run \"cqlbridge plan\" again for the changed schema; nothing of this change was written and the slot keeps it.";

/*
 * The columns the plan reads of relation $1: its key columns ($2, by name)
 * and every column the source views ($3) depend on; number, name, type and
 * whether generated.
 */
static const char *const reads_sql =
"SELECT a.attnum, a.attname::text, a.atttypid, (a.attgenerated <> '')::text "
"FROM pg_catalog.pg_attribute a "
"WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped "
"  AND (a.attname = ANY ($2::text[]) OR a.attnum IN ("
"    SELECT d.refobjsubid FROM pg_catalog.pg_depend d "
"    JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid "
"    WHERE r.ev_class = ANY ($3::text[]::pg_catalog.regclass[]) "
"      AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid = $1::oid)) "
"ORDER BY a.attnum";

/* Name (NULL if gone) and generated flag of attribute $2 of relation $1 now. */
static const char *const attribute_sql =
"SELECT a.attname::text, (a.attgenerated <> '')::text FROM pg_catalog.pg_attribute a "
"WHERE a.attrelid = $1::oid AND a.attnum = $2::int2 AND NOT a.attisdropped";

/* Allocate the read-column arrays of s for n columns. */
static void
alloc_reads(CapSource *s, int n)
{
	s->nread = n;
	s->read_attnum = bridge_malloc(sizeof(int) * (n + 1));
	s->read_name = bridge_malloc(sizeof(char *) * (n + 1));
	s->read_typid = bridge_malloc(sizeof(unsigned int) * (n + 1));
	s->read_generated = bridge_malloc(sizeof(bool) * (n + 1));
	s->read_pos = bridge_malloc(sizeof(int) * (n + 1));
	s->read_seen = bridge_malloc(sizeof(char *) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		s->read_pos[i] = -1;
		s->read_seen[i] = NULL;
	}
}

/*
 * reads_now
 *		The read columns of s from the catalog now (the first start of a
 *		stream, before anything is recorded).
 */
static void
reads_now(PGconn *conn, CapPlan *p, CapSource *s)
{
	char	   *relid = bridge_printf("%u", s->relid);
	char	  **views = bridge_malloc(sizeof(char *) * (p->ntables + 1));
	char	   *pk = cap_array_literal(s->pk, s->npk);
	char	   *vlist;
	const char *params[3];
	PGresult   *res;

	for (int i = 0; i < p->ntables; i++)
		views[i] = (char *) p->tables[i].source_view;
	vlist = cap_array_literal(views, p->ntables);
	params[0] = relid;
	params[1] = pk;
	params[2] = vlist;
	res = bridge_exec(conn, "reading the columns the plan reads", reads_sql, 3, params);
	alloc_reads(s, PQntuples(res));
	for (int r = 0; r < PQntuples(res); r++)
	{
		s->read_attnum[r] = atoi(PQgetvalue(res, r, 0));
		s->read_name[r] = bridge_strdup(PQgetvalue(res, r, 1));
		s->read_typid[r] = (unsigned int) strtoul(PQgetvalue(res, r, 2), NULL, 10);
		s->read_generated[r] = strcmp(PQgetvalue(res, r, 3), "true") == 0;
	}
	PQclear(res);
	for (int k = 0; k < s->npk; k++)
		if (cap_source_column(s, s->pk[k]) == -2)
			bridge_fatal_hint("Run \"cqlbridge plan\" again.", "key column %s of %s does not exist",
							  bridge_show_name(s->pk[k]), s->qualified);
	free(views);
	free(vlist);
	free(pk);
	free(relid);
}

/*
 * text_array
 *		The elements of a one-dimensional array's text form of simple
 *		values (numbers, OIDs) or of names quoted by array_out; *n set.
 */
static char **
text_array(const char *lit, int *n)
{
	char	  **out = bridge_malloc(sizeof(char *) * (strlen(lit) + 1));
	const char *c = lit;
	StrBuf		sb;

	*n = 0;
	if (*c++ != '{')
		return out;
	while (*c && *c != '}')
	{
		sb_init(&sb);
		if (*c == '"')
		{
			for (c++; *c && *c != '"'; c++)
			{
				if (*c == '\\' && c[1])
					c++;
				sb_appendc(&sb, *c);
			}
			if (*c == '"')
				c++;
		}
		else
			for (; *c && *c != ',' && *c != '}'; c++)
				sb_appendc(&sb, *c);
		out[(*n)++] = sb.data;
		if (*c == ',')
			c++;
	}
	return out;
}

/*
 * make_mirror
 *		(Re)create s's view of its read columns under their plan names:
 *		"CREATE VIEW stream_src_<n> AS SELECT <name now> AS <plan name>, ...
 *		FROM <relation now>".  A read column that no longer exists is fatal.
 */
static void
make_mirror(PGconn *conn, CapPlan *p, CapSource *s)
{
	StrBuf		sb;
	char	   *relid = bridge_printf("%u", s->relid);

	sb_init(&sb);
	sb_appendf(&sb, "DROP VIEW IF EXISTS %s; CREATE VIEW %s AS SELECT ", s->mirror, s->mirror);
	for (int i = 0; i < s->nread; i++)
	{
		char	   *attnum = bridge_printf("%d", s->read_attnum[i]);
		const char *params[2] = {relid, attnum};
		PGresult   *res = bridge_exec(conn, "reading a column of a source relation", attribute_sql, 2, params);

		if (PQntuples(res) == 0)
			bridge_fatal_hint(replan_hint, "column %s (attribute %d) of source relation %s, which the plan reads, no longer exists",
							  bridge_show_name(s->read_name[i]), s->read_attnum[i], s->current);
		s->read_generated[i] = strcmp(PQgetvalue(res, 0, 1), "true") == 0;
		sb_appendf(&sb, "%s%s AS %s", i ? ", " : "", bridge_quote_ident(PQgetvalue(res, 0, 0)),
				   bridge_quote_ident(s->read_name[i]));
		PQclear(res);
		free(attnum);
	}
	sb_appendf(&sb, " FROM %s", s->current);
	bridge_exec_script(conn, "creating the stream's view of a source relation", sb.data);
	sb_free(&sb);
	free(relid);
	(void) p;
}

/*
 * cap_relations_resolve
 *		Every source relation by OID: from stream_relations when the
 *		stream recorded it (so a renamed relation is found), else by the
 *		plan's name; its SQL name now, whether it is partitioned, the
 *		columns the plan reads and the stream's view of them.  Creates
 *		stream_relations (or brings one of an older cqlbridge to this
 *		form) and records relations it did not know.  Fatal when a relation
 *		was dropped.
 */
void
cap_relations_resolve(PGconn *conn, CapPlan *p)
{
	char	   *sql;
	PGresult   *res;
	bool		missing = false;

	sql = bridge_printf("CREATE TABLE IF NOT EXISTS %s.stream_relations (relation text PRIMARY KEY); "
						"ALTER TABLE %s.stream_relations DROP COLUMN IF EXISTS signature, "
						"ADD COLUMN IF NOT EXISTS relid oid, ADD COLUMN IF NOT EXISTS attnums int2[], "
						"ADD COLUMN IF NOT EXISTS names text[], ADD COLUMN IF NOT EXISTS typids oid[]",
						p->schema, p->schema);
	bridge_exec_script(conn, "creating the stream's relation table", sql);
	free(sql);
	sql = bridge_printf("SELECT relation, relid, attnums, names, typids FROM %s.stream_relations "
						"WHERE relid IS NOT NULL", p->schema);
	res = bridge_exec(conn, "reading the stream's relations", sql, 0, NULL);
	free(sql);
	for (int i = 0; i < p->nsources; i++)
	{
		CapSource  *s = &p->sources[i];
		PGresult   *cr;
		const char *params[1];
		char	   *relid;

		s->relid = 0;
		for (int r = 0; r < PQntuples(res); r++)
			if (strcmp(PQgetvalue(res, r, 0), s->qualified) == 0)
			{
				char	  **nums;
				char	  **names;
				char	  **types;
				int			n1,
							n2,
							n3;

				s->relid = (unsigned int) strtoul(PQgetvalue(res, r, 1), NULL, 10);
				nums = text_array(PQgetvalue(res, r, 2), &n1);
				names = text_array(PQgetvalue(res, r, 3), &n2);
				types = text_array(PQgetvalue(res, r, 4), &n3);
				if (n1 != n2 || n1 != n3)
					bridge_fatal("%s.stream_relations: a bad row for %s", p->schema, s->qualified);
				alloc_reads(s, n1);
				for (int c = 0; c < n1; c++)
				{
					s->read_attnum[c] = atoi(nums[c]);
					s->read_name[c] = names[c];
					s->read_typid[c] = (unsigned int) strtoul(types[c], NULL, 10);
					s->read_generated[c] = false;
				}
			}
		if (s->relid == 0)
		{
			params[0] = s->qualified;
			cr = bridge_exec(conn, "looking up a source relation", "SELECT to_regclass($1)::oid", 1, params);
			if (PQgetisnull(cr, 0, 0))
				bridge_fatal_hint("Run \"cqlbridge plan\" again.",
								  "source relation %s of the plan does not exist", s->qualified);
			s->relid = (unsigned int) strtoul(PQgetvalue(cr, 0, 0), NULL, 10);
			PQclear(cr);
			missing = true;
		}
		relid = bridge_printf("%u", s->relid);
		params[0] = relid;
		cr = bridge_exec(conn, "looking up a source relation",
						 "SELECT c.oid::pg_catalog.regclass::text, (c.relkind = 'p')::text FROM pg_catalog.pg_class c WHERE c.oid = $1::oid",
						 1, params);
		if (PQntuples(cr) == 0)
			bridge_fatal_hint(replan_hint, "source relation %s (OID %u) of the stream was dropped",
							  s->qualified, s->relid);
		s->current = bridge_strdup(PQgetvalue(cr, 0, 0));
		s->partitioned = strcmp(PQgetvalue(cr, 0, 1), "true") == 0;
		PQclear(cr);
		free(relid);
		if (s->nread == 0)
			reads_now(conn, p, s);
		s->mirror = bridge_printf("%s.stream_src_%d", p->schema, i + 1);
		make_mirror(conn, p, s);
	}
	PQclear(res);
	if (missing)
		cap_relations_record(conn, p);
}

/*
 * cap_relations_record
 *		stream_relations := every source's OID and read columns (the load
 *		records them in its snapshot's transaction).
 */
void
cap_relations_record(PGconn *conn, CapPlan *p)
{
	char	   *sql = bridge_printf("DELETE FROM %s.stream_relations", p->schema);

	bridge_exec_script(conn, "forgetting the stream's relations", sql);
	free(sql);
	sql = bridge_printf("INSERT INTO %s.stream_relations (relation, relid, attnums, names, typids) "
						"VALUES ($1, $2::oid, $3::int2[], $4::text[], $5::oid[])", p->schema);
	for (int i = 0; i < p->nsources; i++)
	{
		CapSource  *s = &p->sources[i];
		char	  **nums = bridge_malloc(sizeof(char *) * (s->nread + 1));
		char	  **types = bridge_malloc(sizeof(char *) * (s->nread + 1));
		char	   *relid = bridge_printf("%u", s->relid);
		const char *params[5];

		for (int c = 0; c < s->nread; c++)
		{
			nums[c] = bridge_printf("%d", s->read_attnum[c]);
			types[c] = bridge_printf("%u", s->read_typid[c]);
		}
		params[0] = s->qualified;
		params[1] = relid;
		params[2] = cap_array_literal(nums, s->nread);
		params[3] = cap_array_literal(s->read_name, s->nread);
		params[4] = cap_array_literal(types, s->nread);
		PQclear(bridge_exec(conn, "recording a source relation", sql, 5, params));
		for (int c = 0; c < s->nread; c++)
		{
			free(nums[c]);
			free(types[c]);
		}
		free(nums);
		free(types);
		free(relid);
		for (int k = 2; k < 5; k++)
			free((char *) params[k]);
	}
	free(sql);
}

/*
 * cap_source_column
 *		The column of read column name (the plan's name) in the last
 *		Relation message of s: -1 when the message does not carry it (a
 *		generated column), -2 when the plan does not read it.
 */
int
cap_source_column(const CapSource *s, const char *name)
{
	for (int i = 0; i < s->nread; i++)
		if (strcmp(s->read_name[i], name) == 0)
			return s->read_pos[i];
	return -2;
}

/* Column of name with type typid in rel, or -1. */
static int
message_column(const CapRelation *rel, const char *name, unsigned int typid)
{
	if (name == NULL)
		return -1;
	for (int c = 0; c < rel->natts; c++)
		if (strcmp(rel->cols[c].name, name) == 0 && rel->cols[c].typid == typid)
			return c;
	return -1;
}

/*
 * identity_of_message
 *		Whether the replica identity a Relation message says source number
 *		si's changes are decoded with (from this message on) carries what
 *		the stream needs of its UPDATEs and DELETEs: FULL always does;
 *		NOTHING never; DEFAULT and USING INDEX when the catalog's key or
 *		index covers the plan's key and no collection query reads more.
 *		When it does not, and the catalog still has it so: CAP_CHECK_FATAL
 *		with the ALTER to run (an identity set back from FULL to DEFAULT
 *		while the stream runs would otherwise let old values arrive missing
 *		and keys that should vanish stay).  When the catalog has a usable
 *		identity again (the ALTER was run, the stream started again and
 *		replays the changes decoded in between, which lack the values for
 *		good): the source's UPDATEs and DELETEs recompute its tables in
 *		full until a message with a usable identity (keys.c).
 *		Partitioned sources: their root's identity says nothing of their
 *		partitions', which the partition poll checks.
 */
static CapCheck
identity_of_message(PGconn *conn, CapPlan *p, int si, const CapRelation *rel,
					char *err, size_t errlen, const char **hint)
{
	CapSource  *s = &p->sources[si];
	bool		full_needed = false;
	char	   *msg = NULL;
	char	   *h = NULL;
	CapCheck	c;

	if (s->partitioned || rel->identity == 'f')
	{
		s->identity_short = false;
		return CAP_CHECK_OK;
	}
	for (int a = 0; a < p->naffected; a++)
		if (p->affected[a].source == si && p->affected[a].sublink &&
			p->affected[a].nold > s->npk)
			full_needed = true;
	c = cap_identity_problem(conn, p, si, NULL, &msg, &h, err, errlen);
	if (c == CAP_CHECK_RETRY)
		return c;
	if (rel->identity != 'n' && !full_needed && c == CAP_CHECK_OK)
	{
		s->identity_short = false;	/* its key or index covers the key */
		return CAP_CHECK_OK;
	}
	if (c == CAP_CHECK_FATAL)
	{
		snprintf(err, errlen, "%s (changed while the stream ran; nothing of its changes since was written)", msg);
		*hint = h;
		free(msg);
		return CAP_CHECK_FATAL;
	}
	if (!s->identity_short)
		cap_log("changes of %s made while its replica identity was %s lack old values: each of its UPDATEs and DELETEs recomputes its tables in full until its changes carry them again",
				s->current, rel->identity == 'n' ? "NOTHING" : rel->identity == 'i' ? "USING INDEX" : "DEFAULT");
	s->identity_short = true;
	return CAP_CHECK_OK;
}

/*
 * cap_relation_message
 *		A Relation message: when it is of a source relation (by OID), its
 *		columns are matched to the columns the plan reads (see the file
 *		header) and it becomes the relation's current message (rel is
 *		taken over and zeroed).  CAP_CHECK_FATAL with err and hint when a
 *		read column is gone or changed type; CAP_CHECK_RETRY when the
 *		catalog could not be read.
 */
CapCheck
cap_relation_message(PGconn *conn, CapPlan *p, CapRelation *rel, char *err, size_t errlen,
					 const char **hint)
{
	CapSource  *s = NULL;
	PGresult   *res;
	char	   *relid;
	const char *params[1];
	bool		positional;

	for (int i = 0; i < p->nsources; i++)
		if (p->sources[i].relid == rel->relid)
			s = &p->sources[i];
	if (s == NULL)
	{
		/*
		 * Not a source: the status table (the heartbeat), or a partition
		 * of a source (pgoutput sends a partition's own Relation message
		 * after its root's, whose relid its changes then carry).
		 */
		if (strcmp(rel->nspname, p->schema_plain) == 0 && strcmp(rel->relname, "stream_state") == 0)
			p->state_relid = rel->relid;
		return CAP_CHECK_OK;
	}

	/*
	 * The catalog now: when its published columns (not dropped, not
	 * generated) are the message's, positions map attribute numbers
	 * exactly; when a later DDL changed them already (the stream is
	 * behind), names decide.
	 */
	relid = bridge_printf("%u", s->relid);
	params[0] = relid;
	res = cap_exec(conn, "SELECT a.attnum, a.attname::text FROM pg_catalog.pg_attribute a "
				   "WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' "
				   "ORDER BY a.attnum", 1, params, err, errlen);
	free(relid);
	if (res == NULL)
		return CAP_CHECK_RETRY;
	positional = PQntuples(res) == rel->natts;
	for (int c = 0; positional && c < rel->natts; c++)
		positional = strcmp(PQgetvalue(res, c, 1), rel->cols[c].name) == 0;

	for (int i = 0; i < s->nread; i++)
	{
		int			pos = -1;
		const char *now = NULL;	/* its name in the catalog now */

		for (int r = 0; r < PQntuples(res); r++)
			if (atoi(PQgetvalue(res, r, 0)) == s->read_attnum[i])
			{
				now = PQgetvalue(res, r, 1);
				if (positional)
					pos = r;
			}
		if (pos < 0)
			pos = message_column(rel, now, s->read_typid[i]);
		if (pos < 0)
			pos = message_column(rel, s->read_seen[i], s->read_typid[i]);
		if (pos < 0)
			pos = message_column(rel, s->read_name[i], s->read_typid[i]);
		if (pos >= 0 && rel->cols[pos].typid != s->read_typid[i])
		{
			snprintf(err, errlen, "column %s of source relation %s, which the plan reads, changed its type (type OID %u, now %u)",
					 bridge_show_name(s->read_name[i]), s->current, s->read_typid[i], rel->cols[pos].typid);
			PQclear(res);
			*hint = replan_hint;
			return CAP_CHECK_FATAL;
		}
		if (pos < 0 && !s->read_generated[i])
		{
			snprintf(err, errlen, "column %s of source relation %s, which the plan reads, is not in the change stream's row any more (dropped, its type changed, or renamed twice while the stream was behind)",
					 bridge_show_name(s->read_name[i]), s->current);
			PQclear(res);
			*hint = replan_hint;
			return CAP_CHECK_FATAL;
		}
		s->read_pos[i] = pos;
		free(s->read_seen[i]);
		s->read_seen[i] = pos >= 0 ? bridge_strdup(rel->cols[pos].name) : NULL;
	}
	PQclear(res);

	/* the replica identity its changes are decoded with from here on */
	{
		CapCheck	c = identity_of_message(conn, p, (int) (s - p->sources), rel, err, errlen, hint);

		if (c != CAP_CHECK_OK)
			return c;
	}

	/* a rename of the relation: followed, its SQL name taken anew */
	if (strcmp(rel->nspname, s->rel ? s->rel->nspname : s->schema) != 0 ||
		strcmp(rel->relname, s->rel ? s->rel->relname : s->table) != 0)
	{
		char	   *relid = bridge_printf("%u", s->relid);
		const char *params[1] = {relid};
		PGresult   *cr = cap_exec(conn, "SELECT $1::oid::pg_catalog.regclass::text", 1, params, err, errlen);

		free(relid);
		if (cr == NULL)
			return CAP_CHECK_RETRY;
		cap_log("source relation %s is now %s: followed (by OID)", s->current, PQgetvalue(cr, 0, 0));
		free(s->current);
		s->current = bridge_strdup(PQgetvalue(cr, 0, 0));
		PQclear(cr);
	}
	if (s->rel)
	{
		cap_relation_free(s->rel);
		free(s->rel);
	}
	s->rel = bridge_malloc(sizeof(CapRelation));
	*s->rel = *rel;
	memset(rel, 0, sizeof(*rel));
	return CAP_CHECK_OK;
}

/*
 * The replica identity of a source relation and, when it is partitioned,
 * of each leaf partition (the old row of an UPDATE or DELETE comes from
 * the partition's own identity, even when published as the root, and
 * ALTER TABLE ... REPLICA IDENTITY on the root does not change its
 * partitions): oid, name, identity, partition or not, and whether the
 * identity carries the columns $2.  The relation comes first
 * (pg_partition_tree lists nothing for a table that is not partitioned).
 */
static const char *const identity_sql =
"SELECT c.oid, c.oid::pg_catalog.regclass::text, c.relreplident, (t.level > 0)::text, "
"  coalesce($2::text[] <@ (SELECT array_agg(a.attname::text) "
"   FROM pg_catalog.pg_index i JOIN pg_catalog.pg_attribute a "
"     ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) "
"   WHERE i.indrelid = c.oid AND ((c.relreplident = 'd' AND i.indisprimary) "
"      OR (c.relreplident = 'i' AND i.indisreplident))), false) "
"FROM (SELECT to_regclass($1) AS relid, 0 AS level "
"      UNION ALL SELECT p.relid, p.level FROM pg_catalog.pg_partition_tree(to_regclass($1)) p "
"      WHERE p.level > 0 AND p.isleaf) t "
"JOIN pg_catalog.pg_class c ON c.oid = t.relid ORDER BY t.level, 2";

/*
 * cap_identity_problem
 *		Whether source relation number s (or, with leaf, that partition of
 *		it, which appeared while streaming) or one of its leaf partitions
 *		has a replica identity that does not carry the key the plan traces
 *		its changes by (or, for a sublink relation whose SQL reads other
 *		columns, is not FULL): CAP_CHECK_FATAL, with the message and the
 *		hint (allocated).  CAP_CHECK_RETRY, with err, when the catalog could
 *		not be read (the connection ended: the stream reconnects, as it
 *		does for every other query of a session).
 */
CapCheck
cap_identity_problem(PGconn *conn, CapPlan *p, int s, const char *leaf, char **msg, char **hint,
					 char *err, size_t errlen)
{
	CapSource  *src = &p->sources[s];
	char	   *pk = cap_array_literal(src->pk, src->npk);
	const char *params[2] = {leaf ? leaf : src->current, pk};
	PGresult   *res;
	bool		full_needed = false;
	bool		found = false;

	for (int a = 0; a < p->naffected; a++)
		if (p->affected[a].source == s && p->affected[a].sublink &&
			p->affected[a].nold > src->npk)
			full_needed = true;
	res = cap_exec(conn, identity_sql, 2, params, err, errlen);
	if (res == NULL)
	{
		free(pk);
		return CAP_CHECK_RETRY;
	}
	for (int r = 0; r < PQntuples(res) && !found; r++)
	{
		const char *name = PQgetvalue(res, r, 1);
		char		ident = PQgetvalue(res, r, 2)[0];
		bool		partition = leaf != NULL || strcmp(PQgetvalue(res, r, 3), "true") == 0;
		bool		covers = ident == 'f' || strcmp(PQgetvalue(res, r, 4), "t") == 0;
		const char *what;
		char	   *whose;

		if (covers && (!full_needed || ident == 'f'))
			continue;
		what = ident == 'n' ? "NOTHING" : ident == 'i' ? "USING INDEX" : ident == 'f' ? "FULL" : "DEFAULT";
		*hint = bridge_printf("Run: ALTER TABLE %s REPLICA IDENTITY FULL;%s%s",
							  partition ? name : src->current,
							  ident == 'd' && !full_needed ? " (or give it a primary key on the plan's key columns)" : "",
							  partition ? " (ALTER TABLE on the partitioned table does not change its partitions: run it for each partition listed, and for partitions attached later)" : "");
		whose = partition ? bridge_printf("partition %s of source relation %s", name, src->current)
			: bridge_printf("source relation %s", src->current);
		*msg = bridge_printf("%s has REPLICA IDENTITY %s, which does not carry %s the stream needs for its UPDATEs and DELETEs",
							 whose, what,
							 full_needed ? "every column (its collection query reads columns beyond the key)"
							 : bridge_printf("its key (%s)", pk));
		found = true;
	}
	PQclear(res);
	free(pk);
	return found ? CAP_CHECK_FATAL : CAP_CHECK_OK;
}

/*
 * cap_views_check
 *		After a failed flush: whether the objects the stream reads still
 *		exist (the source views, the stream's views of its relations, the
 *		relations).  A DROP ... CASCADE of a relation or of a column a view
 *		reads drops the view with it; retrying would fail forever, so that
 *		is CAP_CHECK_FATAL with err and hint.  CAP_CHECK_RETRY when the
 *		check itself failed (the database is away: the flush is retried).
 */
CapCheck
cap_views_check(PGconn *conn, CapPlan *p, char *err, size_t errlen, const char **hint)
{
	char	  **names = bridge_malloc(sizeof(char *) * (p->ntables + p->nsources + 1));
	char	   *lit;
	const char *params[1];
	PGresult   *res;
	int			n = 0;
	CapCheck	rc = CAP_CHECK_OK;

	for (int i = 0; i < p->ntables; i++)
		names[n++] = (char *) p->tables[i].source_view;
	for (int i = 0; i < p->nsources; i++)
		names[n++] = p->sources[i].mirror;
	lit = cap_array_literal(names, n);
	params[0] = lit;
	res = cap_exec(conn, "SELECT v FROM unnest($1::text[]) v WHERE to_regclass(v) IS NULL",
				   1, params, err, errlen);
	if (res == NULL)
		rc = CAP_CHECK_RETRY;
	else if (PQntuples(res) > 0)
	{
		snprintf(err, errlen, "view %s, which the stream reads, no longer exists (dropped with CASCADE, with a relation or column it reads?)",
				 PQgetvalue(res, 0, 0));
		*hint = replan_hint;
		rc = CAP_CHECK_FATAL;
	}
	PQclear(res);
	free(lit);
	free(names);
	return rc;
}

/*
 * cap_lock_sql
 *		"LOCK TABLE <source views> IN ACCESS SHARE MODE": of table only, or
 *		of every table of p when only is NULL (see the file header).
 */
char *
cap_lock_sql(const CapPlan *p, const CapTable *only)
{
	StrBuf		sb;
	int			n = 0;

	sb_init(&sb);
	sb_append(&sb, "LOCK TABLE ");
	for (int i = 0; i < p->ntables; i++)
	{
		if (only != NULL && &p->tables[i] != only)
			continue;
		sb_appendf(&sb, "%s%s", n++ ? ", " : "", p->tables[i].source_view);
	}
	sb_append(&sb, " IN ACCESS SHARE MODE");
	return sb.data;
}

/*
 * cap_rewritten
 *		In a transaction whose snapshot was imported and whose relations are
 *		locked since (cap_lock_sql): the first relation it locked that was
 *		rewritten after the snapshot was taken (its pg_class row as the
 *		snapshot sees it names another file than the catalog now), which
 *		the snapshot would read as empty; NULL when none.  The caller frees
 *		the name.
 */
char *
cap_rewritten(PGconn *conn)
{
	PGresult   *res;
	char	   *name = NULL;

	res = PQexec(conn,
				 "SELECT c.oid::pg_catalog.regclass::text FROM pg_catalog.pg_class c "
				 "WHERE c.oid IN (SELECT l.relation FROM pg_catalog.pg_locks l "
				 "                WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation') "
				 "  AND c.relkind IN ('r', 'm') AND c.relfilenode <> 0 "
				 "  AND c.relnamespace <> 'pg_catalog'::pg_catalog.regnamespace "
				 "  AND c.relfilenode IS DISTINCT FROM pg_catalog.pg_relation_filenode(c.oid) "
				 "ORDER BY 1 LIMIT 1");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bridge_fatal("checking the load's relations against its snapshot failed: %s",
					 PQerrorMessage(conn));
	if (PQntuples(res) > 0)
		name = bridge_strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return name;
}

/*
 * cap_check_uncaptured
 *		At the start: every relation the source views read must be a
 *		source of the plan (one with "affected" lines, whose changes the
 *		stream derives keys from).  The plan gives a relation without a
 *		primary key none (it only warns: a one-time load needs none), so
 *		its changes would never reach Cassandra; refused with the reason.
 */
void
cap_check_uncaptured(PGconn *conn, CapPlan *p)
{
	char	  **views = bridge_malloc(sizeof(char *) * (p->ntables + 1));
	char	  **relids = bridge_malloc(sizeof(char *) * (p->nsources + 1));
	char	   *vlist;
	char	   *rlist;
	const char *params[2];
	PGresult   *res;

	for (int i = 0; i < p->ntables; i++)
		views[i] = (char *) p->tables[i].source_view;
	for (int i = 0; i < p->nsources; i++)
		relids[i] = bridge_printf("%u", p->sources[i].relid);
	vlist = cap_array_literal(views, p->ntables);
	rlist = cap_array_literal(relids, p->nsources);
	params[0] = vlist;
	params[1] = rlist;
	res = bridge_exec(conn, "looking for relations the stream would not capture",
					  "SELECT DISTINCT c.oid::pg_catalog.regclass::text, "
					  "  EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)::text "
					  "FROM pg_catalog.pg_depend d "
					  "JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid "
					  "JOIN pg_catalog.pg_class c ON d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid = d.refobjid "
					  "WHERE r.ev_class = ANY ($1::text[]::pg_catalog.regclass[]) AND c.oid <> r.ev_class "
					  "  AND c.relkind IN ('r', 'p') AND c.oid <> ALL ($2::oid[]) ORDER BY 1",
					  2, params);
	if (PQntuples(res) > 0)
	{
		const char *rel = PQgetvalue(res, 0, 0);

		if (strcmp(PQgetvalue(res, 0, 1), "false") == 0)
			bridge_fatal_hint(bridge_printf("Give it a primary key (ALTER TABLE %s ADD PRIMARY KEY (...)) and run \"cqlbridge plan\" and \"cqlbridge apply --no-load\" again; \"cqlbridge apply\" loads it once without one.", rel),
							  "source relation %s, which a query table reads, has no primary key: the plan cannot trace its changes to target rows (it warned), so the stream would never write them",
							  rel);
		bridge_fatal_hint("Run \"cqlbridge plan\" and \"cqlbridge apply --no-load\" again.",
						  "source relation %s, which a query table reads, is not one the plan's change capture knows: the stream would never write its changes",
						  rel);
	}
	PQclear(res);
	free(vlist);
	free(rlist);
	for (int i = 0; i < p->nsources; i++)
		free(relids[i]);
	free(relids);
	free(views);
}

/*
 * Name and type of every column the plan reads of source relation s (the
 * columns of the stream's view of it, under the plan's names), in order;
 * generated columns (never in a change) last.
 */
PGresult *
cap_source_columns(PGconn *conn, const CapSource *s)
{
	const char *params[1] = {s->mirror};

	return bridge_exec(conn, "reading the columns of a source relation",
					   "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) "
					   "FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1::regclass "
					   "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
					   1, params);
}

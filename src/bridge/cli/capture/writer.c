/*-------------------------------------------------------------------------
 *
 * writer.c
 *	  The flush of "cqlbridge stream": the derivation requests queued since
 *	  the last flush become target keys (keys.c), every pending key is
 *	  recomputed from the table's rows SQL of 003 (the source view), and
 *	  Cassandra gets one write per key: an upsert of the row when the key
 *	  still exists, a DELETE by full key when it vanished.  The lineage
 *	  table (stream_keys_<n>: key and lineage columns) is brought to the
 *	  same state in the same PostgreSQL transaction.  The tables applied
 *	  from the change itself are written in that transaction too
 *	  (direct.c); a flush of only those reads nothing of the source and
 *	  runs as one plain transaction.
 *
 * Two REPEATABLE READ transactions, each locking the source views before
 * its snapshot (relations.c says why).  The first (on a snapshot that sees
 * every transaction received) derives the keys and adds their current
 * lineage rows to the lineage tables, keeping the old ones, and commits: the
 * lineage tables then know every key the writes may create.  The second
 * writes: upserts, deletes of vanished keys and the exact lineage rows, all
 * on one snapshot.  The foreign tables send the upserts as the statements
 * run and the deletes (write_mode 'on_commit') pipelined at COMMIT, which
 * returns only when Cassandra acknowledged them: so by the end of its
 * COMMIT Cassandra has acknowledged every write; only then
 * does the caller confirm the slot's position.  A failure (Cassandra down, PostgreSQL restarting) rolls the
 * transaction back and keeps the pending keys: the caller retries with
 * backoff.  Recomputing a key again is harmless (idempotent), so a replay
 * after a crash writes the same rows again.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/writer.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"

/*
 * A flush of more requests and changes than this plans its statements for
 * their arrays (sql.c, "prepared once per session")
 */
#define CUSTOM_PLANS	1000

/*
 * keys_subquery
 *		"SELECT u.c1::<type>, ... FROM unnest($1::text[], ...) u(c1, ...)
 *		WHERE u.c1 IS NOT NULL ...": the pending keys of t, typed like the
 *		view's key columns.  A key with a NULL part is never stored in
 *		Cassandra, so it is left out.
 */
static char *
keys_subquery(const CapTable *t)
{
	StrBuf		sb;

	sb_init(&sb);
	cap_unnest_rows(&sb, t->key_types, t->nkey, 1, "c");
	sb_append(&sb, " WHERE ");
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%su.c%d IS NOT NULL", k ? " AND " : "", k + 1);
	return sb.data;
}

/* "(alias."k1", alias."k2")": t's key columns as a row. */
char *
cap_key_match(const CapTable *t, const char *alias, int first_param)
{
	StrBuf		sb;

	(void) first_param;
	sb_init(&sb);
	sb_appendc(&sb, '(');
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%s%s.%s", k ? ", " : "", alias, bridge_quote_ident(t->key[k]));
	sb_appendc(&sb, ')');
	return sb.data;
}

/* The pending keys of t as text[] literals, one per key column (n keys). */
static char **
pending_arrays(CapTable *t, int *n, char *err, size_t errlen)
{
	char	 ***cols = bridge_malloc(sizeof(char **) * t->nkey);
	int			row = 0;

	for (int k = 0; k < t->nkey; k++)
		cols[k] = bridge_malloc(sizeof(char *) * (t->pending.n + 1));
	for (size_t i = 0; i < t->pending.cap; i++)
	{
		int			nv;
		char	  **vals;

		if (t->pending.slots[i] == NULL)
			continue;
		vals = cap_decode_values(t->pending.slots[i], &nv);
		if (vals == NULL || nv != t->nkey)
		{
			snprintf(err, errlen, "internal error: bad pending key of %s", t->target);
			return NULL;
		}
		for (int k = 0; k < t->nkey; k++)
			cols[k][row] = vals[k];
		free(vals);
		row++;
	}
	*n = row;
	return cap_column_literals(cols, t->nkey, row);
}

static void
free_arrays(char **arrays, int n)
{
	for (int k = 0; k < n; k++)
		free(arrays[k]);
	free(arrays);
}

/*
 * lineage_add
 *		Before anything is written to Cassandra, and committed on its own:
 *		add the view's current key and lineage rows of t's pending keys to
 *		the lineage table (keeping the old ones).  So the lineage table
 *		holds every key that may be in Cassandra even when the writes that
 *		follow fail half-way (some rows written, the second transaction
 *		rolled back): a later change of their source rows finds them.
 */
static bool
lineage_add(PGconn *conn, CapTable *t, char *err, size_t errlen)
{
	int			n;
	char	  **arrays = pending_arrays(t, &n, err, errlen);
	char	   *ksub = keys_subquery(t);
	char	   *skey = cap_key_match(t, "s", 1);
	char	   *lkey = cap_key_match(t, "l", 1);
	char	   *scols = cap_key_columns(t, "s", true);
	char	   *lcols = cap_key_columns(t, "l", true);
	char	   *sql;
	bool		ok;

	if (arrays == NULL)
		return false;
	sql = bridge_printf("INSERT INTO %s SELECT %s FROM %s s WHERE %s IN (%s) "
						"EXCEPT SELECT %s FROM %s l WHERE %s IN (%s)",
						t->lineage, scols, t->source_view, skey, ksub,
						lcols, t->lineage, lkey, ksub);
	ok = cap_run(conn, sql, t->nkey, (const char *const *) arrays, err, errlen);
	free(sql);
	free(ksub);
	free(skey);
	free(lkey);
	free(scols);
	free(lcols);
	free_arrays(arrays, t->nkey);
	return ok;
}

/*
 * delete_emptied
 *		After the deletes of t's vanished keys: delete, as a whole, every
 *		partition of those keys that no longer has a row in t's rows SQL.
 *		Deleting the last row of a partition by its full key leaves the
 *		partition's static columns, which Cassandra returns as a row of
 *		their own (its clustering columns null): a row the source does not
 *		have.  Only for targets with static columns; the DELETE by
 *		partition key goes to Cassandra as one partition delete (direct
 *		modify), at COMMIT with the others.
 */
static bool
delete_emptied(PGconn *conn, CapTable *t, char **arrays, const char *ksub,
			   char *err, size_t errlen)
{
	StrBuf		sql;
	PGresult   *res;
	bool		ok;

	sb_init(&sql);
	sb_append(&sql, "SELECT DISTINCT ");
	for (int k = 0; k < t->npart; k++)
		sb_appendf(&sql, "%su.c%d", k ? ", " : "", k + 1);
	sb_appendf(&sql, " FROM (%s) u WHERE NOT EXISTS (SELECT 1 FROM (%s) q WHERE ", ksub, t->rows_sql);
	for (int k = 0; k < t->npart; k++)
		sb_appendf(&sql, "%sq.%s = u.c%d", k ? " AND " : "", bridge_quote_ident(t->key[k]), k + 1);
	sb_append(&sql, ")");
	res = cap_exec(conn, sql.data, t->nkey, (const char *const *) arrays, err, errlen);
	sb_free(&sql);
	if (res == NULL)
		return false;
	ok = PQntuples(res) == 0 || cap_delete_keys(conn, t, res, t->npart, err, errlen);
	PQclear(res);
	return ok;
}

/*
 * rows_of_cur
 *		t's rows SQL over "cur" (the view's rows of the pending keys, read
 *		once by flush_table) instead of the view: "SELECT <columns> FROM
 *		cur s" when the rows SQL is "SELECT <columns> FROM <view> s", as
 *		plan writes it; else NULL (the rows SQL is then run as it is).
 */
static char *
rows_of_cur(const CapTable *t)
{
	char	   *from = bridge_printf("FROM %s s", t->source_view);
	const char *at = NULL;
	char	   *out = NULL;

	for (const char *c = strstr(t->rows_sql, from); c; c = strstr(c + 1, from))
		at = c;
	if (at != NULL && at > t->rows_sql && (at[-1] == ' ' || at[-1] == '\n'))
	{
		const char *rest = at + strlen(from);

		while (*rest == ' ' || *rest == '\n' || *rest == ';')
			rest++;
		if (*rest == '\0')
			out = bridge_printf("%.*sFROM cur s", (int) (at - t->rows_sql), t->rows_sql);
	}
	free(from);
	return out;
}

/*
 * lineage_same
 *		"a.k1 = b.k1 AND ... AND a.lin1 IS NOT DISTINCT FROM b.lin1 ...":
 *		the same lineage row (lineage columns of an outer join may be NULL).
 */
static char *
lineage_same(const CapTable *t, const char *a, const char *b)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%s%s.%s = %s.%s", k ? " AND " : "", a, bridge_quote_ident(t->key[k]),
				   b, bridge_quote_ident(t->key[k]));
	for (int k = 0; k < t->nlin; k++)
		sb_appendf(&sb, " AND %s.%s IS NOT DISTINCT FROM %s.%s", a, bridge_quote_ident(t->lin[k]),
				   b, bridge_quote_ident(t->lin[k]));
	return sb.data;
}

/*
 * flush_table
 *		Upsert the pending keys of t that exist in its rows SQL, delete
 *		those that vanished, and bring the lineage table to the same state.
 *		*written counts the keys.
 *
 *		One statement reads the view's rows of the pending keys once
 *		("cur") and upserts them, deletes the lineage rows of those keys
 *		that are no longer current and adds the current ones it lacks (a
 *		key whose lineage did not change is not written), and returns the
 *		keys that vanished, which are then deleted.  It replaced four
 *		statements that read the view three times and rewrote every
 *		lineage row (bench/README.md, "where the stream's backend spends
 *		its CPU").
 */
static bool
flush_table(PGconn *conn, CapTable *t, long long *written, char *err, size_t errlen)
{
	int			row = 0;
	char	  **arrays = pending_arrays(t, &row, err, errlen);
	char	   *ksub = keys_subquery(t);
	char	   *skey = cap_key_match(t, "s", 1);
	char	   *lkey = cap_key_match(t, "l", 1);
	char	   *lcols = cap_key_columns(t, "c", true);
	char	   *cl = lineage_same(t, "c", "l");
	char	   *rows = rows_of_cur(t);
	StrBuf		sql;
	StrBuf		cond;
	PGresult   *res;
	bool		ok = false;

	if (arrays == NULL)
		goto done;
	sb_init(&sql);
	sb_init(&cond);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&cond, "%sc.%s = u.c%d", k ? " AND " : "", bridge_quote_ident(t->key[k]), k + 1);
	sb_appendf(&sql, "WITH cur AS MATERIALIZED (SELECT s.* FROM %s s WHERE %s IN (%s)), ",
			   t->source_view, skey, ksub);
	if (rows)
		sb_appendf(&sql, "up AS (INSERT INTO %s (%s) %s), ", t->foreign_table, t->columns, rows);
	else
	{
		char	   *qkey = cap_key_match(t, "q", 1);

		sb_appendf(&sql, "up AS (INSERT INTO %s (%s) SELECT * FROM (%s) q WHERE %s IN (%s)), ",
				   t->foreign_table, t->columns, t->rows_sql, qkey, ksub);
		free(qkey);
	}
	sb_appendf(&sql, "ld AS (DELETE FROM %s l WHERE %s IN (%s) AND NOT EXISTS (SELECT 1 FROM cur c WHERE %s)), ",
			   t->lineage, lkey, ksub, cl);
	sb_appendf(&sql, "li AS (INSERT INTO %s SELECT %s FROM cur c WHERE NOT EXISTS (SELECT 1 FROM %s l WHERE %s)) ",
			   t->lineage, lcols, t->lineage, cl);
	sb_appendf(&sql, "SELECT u.* FROM (%s) u WHERE NOT EXISTS (SELECT 1 FROM cur c WHERE %s)",
			   ksub, cond.data);
	res = cap_exec(conn, sql.data, t->nkey, (const char *const *) arrays, err, errlen);
	sb_free(&sql);
	sb_free(&cond);
	ok = res != NULL;
	if (!ok)
		goto done;

	/* keys that vanished: a DELETE by full key each */
	if (PQntuples(res) > 0)
	{
		ok = cap_delete_keys(conn, t, res, t->nkey, err, errlen);
		if (ok && t->has_static && t->npart > 0)
			ok = delete_emptied(conn, t, arrays, ksub, err, errlen);
	}
	PQclear(res);
	if (ok)
		*written += row;

done:
	if (arrays)
		free_arrays(arrays, t->nkey);
	free(ksub);
	free(skey);
	free(lkey);
	free(lcols);
	free(cl);
	free(rows);
	return ok;
}

/*
 * The flush's snapshot sees every transaction of the batch ($1: their
 * 32-bit ids).  A commit is decoded once its WAL record is written, which
 * can be a moment before the transaction becomes visible to new snapshots
 * (longer with synchronous replication, which waits in between):
 * recomputing on a snapshot that misses it, and then confirming its
 * position, would lose it.
 *
 * Each 32-bit id is widened to 64 bits next to the snapshot's xmax: as the
 * signed 32-bit distance d from xmax's low half (a decoded transaction is
 * far less than 2^31 transactions from xmax, which PostgreSQL's wraparound
 * protection guarantees), its full id is xmax + d.  An id at or above
 * xmax's low half (d >= 0) is a transaction the snapshot does not see yet:
 * not visible, in every epoch (reading it as one of the previous epoch
 * made it "visible" on any database past 2^32 transactions).
 */
static const char *const visible_sql =
"WITH c AS (SELECT pg_catalog.pg_current_snapshot() AS s, "
"  pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::text::bigint AS xmax), "
"d AS (SELECT c.s, c.xmax, ((x - (c.xmax & 4294967295) + 2147483648) & 4294967295) - 2147483648 AS d "
"  FROM c, unnest($1::bigint[]) AS x) "
"SELECT coalesce(bool_and(d.xmax + d.d >= 0 AND pg_catalog.pg_visible_in_snapshot((d.xmax + d.d)::text::xid8, d.s)), true)::text "
"FROM d";

/*
 * begin_locked
 *		BEGIN a REPEATABLE READ transaction and lock the source views
 *		before its snapshot is taken (relations.c: a relation rewritten by
 *		DDL would read as empty on a snapshot taken before the rewrite).
 */
static bool
begin_locked(PGconn *conn, CapPlan *p, char *err, size_t errlen)
{
	if (p->lock_sql == NULL)
		p->lock_sql = cap_lock_sql(p, NULL);
	return cap_run(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ", 0, NULL, err, errlen) &&
		cap_run(conn, p->lock_sql, 0, NULL, err, errlen);
}

/*
 * begin_seeing
 *		begin_locked, on a snapshot that sees the transactions xids (a
 *		bigint[] literal; NULL: none), waiting up to 10 s in steps of 5 ms
 *		for them to become visible.
 */
static bool
begin_seeing(PGconn *conn, CapPlan *p, const char *xids, char *err, size_t errlen)
{
	for (int attempt = 0; attempt < 2000; attempt++)
	{
		PGresult   *res;
		bool		seen;

		if (!begin_locked(conn, p, err, errlen))
			return false;
		if (xids == NULL)
			return true;
		res = cap_exec(conn, visible_sql, 1, &xids, err, errlen);
		if (res == NULL)
			return false;
		seen = strcmp(PQgetvalue(res, 0, 0), "true") == 0;
		PQclear(res);
		if (seen)
			return true;
		if (!cap_run(conn, "ROLLBACK", 0, NULL, err, errlen))
			return false;
		usleep(5000);
	}
	snprintf(err, errlen, "the transactions received are still not visible after 10 s");
	return false;
}

/*
 * cap_flush
 *		One flush (see the file header) on a snapshot that sees the
 *		transactions xids.  True when committed: the pending keys are
 *		cleared and *written counts them.  False with err: rolled back, the
 *		requests and pending keys kept for a retry.
 */
bool
cap_flush(PGconn *conn, CapPlan *p, CapKeySet *req, const char *xids,
		  long long *written, char *err, size_t errlen)
{
	long long	n = 0;
	bool		recompute_states = cap_direct_requests(p, req);
	bool		large = req->n + cap_pending_total(p) + cap_direct_count(p) > CUSTOM_PLANS;

	if (req->n == 0 && cap_pending_total(p) == 0)
	{
		/*
		 * Only rows of direct tables (direct.c): nothing is read of the
		 * source, so neither a snapshot that sees the transactions nor the
		 * locks of the source views are needed.
		 */
		if (!cap_run(conn, "BEGIN", 0, NULL, err, errlen) ||
			(large && !cap_custom_plans(conn, err, errlen)))
			goto fail;
	}
	else
	{
		if (!begin_seeing(conn, p, xids, err, errlen) ||
			(large && !cap_custom_plans(conn, err, errlen)))
			goto fail;
		if (!cap_derive(conn, p, req, err, errlen))
			goto fail;
		if (recompute_states && !cap_direct_recompute_keys(conn, p, err, errlen))
			goto fail;
		for (int i = 0; i < p->ntables; i++)
			if (p->tables[i].pending.n > 0 && !cap_table_waits(p, i) &&
				!lineage_add(conn, &p->tables[i], err, errlen))
				goto fail;
		if (!cap_run(conn, "COMMIT", 0, NULL, err, errlen) ||
			!begin_locked(conn, p, err, errlen) ||
			(large && !cap_custom_plans(conn, err, errlen)))
			goto fail;
	}
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];

		if (!cap_direct_write(conn, p, i, &n, err, errlen))
		{
			char	   *what = bridge_printf("writing %s: %s", t->target, err);

			snprintf(err, errlen, "%s", what);
			free(what);
			goto fail;
		}
		if (t->pending.n == 0 || cap_table_waits(p, i))
			continue;			/* a table being backfilled waits (join.c) */
		if (!flush_table(conn, t, &n, err, errlen))
		{
			char	   *what = bridge_printf("writing %s: %s", t->target, err);

			snprintf(err, errlen, "%s", what);
			free(what);
			goto fail;
		}
	}
	if (!cap_partitions_persist(conn, p, err, errlen) ||
		!cap_join_flushed(conn, p, false, err, errlen) ||
		!cap_run(conn, "COMMIT", 0, NULL, err, errlen))
		goto fail;
	p->parts_dirty = false;
	(void) cap_join_flushed(conn, p, true, err, errlen);
	for (int i = 0; i < p->ntables; i++)
		if (!cap_table_waits(p, i))
			cap_keyset_clear(&p->tables[i].pending);
	cap_direct_clear(p);
	*written += n;
	return true;

fail:
	{
		PGresult   *res = PQexec(conn, "ROLLBACK");

		PQclear(res);
	}
	return false;
}

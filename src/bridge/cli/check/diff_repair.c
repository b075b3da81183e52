/*-------------------------------------------------------------------------
 *
 * diff_repair.c
 *	  cqlbridge diff --repair: every key the diff found different is
 *	  recomputed from the source view as it is now and written again (the
 *	  view's row inserted, an upsert; a key the view no longer has
 *	  deleted), then compared again.
 *
 * Never an older value over a newer one, while relational writes and
 * sync go on: a repair re-checks the key before writing, it does not
 * write what the diff read.  It takes the lock sync's flush takes
 * (cqlbridge_<keyspace>.sync_lock, the row of the target, FOR UPDATE)
 * and then reads the source view in READ COMMITTED, so it sees every
 * relational change whose flush ran before, and a change committed later
 * is flushed after the repair's writes (Cassandra gets them in that
 * order, with later client timestamps).  Without sync installed there
 * is no lock and nothing else writes the table; the repair writes the
 * source's rows of the moment.  Keys are repaired in transactions of
 * REPAIR_BATCH keys, so sync's flushes wait at most one batch.
 *
 * With --dry-run, diff_repair_dry_run prints what the repair would do
 * with the keys the diff found (the repair itself decides by the source
 * view of its moment) and writes nothing.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/diff_repair.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/diff.h"

/* keys per repair transaction */
#define REPAIR_BATCH 200

/*
 * key_condition
 *		"alias.k1::t1 = $1::t1 AND ..." for the primary key (allocated).
 */
static char *
key_condition(const DiffTable *t, const char *alias)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; k < t->nkey; k++)
	{
		int			c = t->key[k];
		char	   *qi = bridge_quote_ident(t->cols[c]);

		sb_appendf(&sb, "%s%s.%s::%s = $%d::%s", k ? " AND " : "", alias, qi,
				   t->types[c], k + 1, t->types[c]);
		free(qi);
	}
	return sb.data;
}

/*
 * column_list
 *		"prefix.c1::t1, ..." (cast when cast) or "c1, ..." (allocated).
 */
static char *
column_list(const DiffTable *t, const char *prefix, bool cast)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int c = 0; c < t->ncols; c++)
	{
		char	   *qi = bridge_quote_ident(t->cols[c]);

		sb_appendf(&sb, "%s%s%s%s%s%s", c ? ", " : "", prefix ? prefix : "", prefix ? "." : "",
				   qi, cast ? "::" : "", cast ? t->types[c] : "");
		free(qi);
	}
	return sb.data;
}

/*
 * same_rows
 *		Whether two results of at most one row hold the same values.
 */
static bool
same_rows(PGresult *a, PGresult *b)
{
	if (PQntuples(a) != PQntuples(b))
		return false;
	for (int r = 0; r < PQntuples(a); r++)
		for (int c = 0; c < PQnfields(a); c++)
		{
			if (PQgetisnull(a, r, c) != PQgetisnull(b, r, c))
				return false;
			if (!PQgetisnull(a, r, c) &&
				strcmp(PQgetvalue(a, r, c), PQgetvalue(b, r, c)) != 0)
				return false;
		}
	return true;
}

/*
 * begin_locked
 *		BEGIN a READ COMMITTED transaction and, with sync installed
 *		(lock_table not NULL), take the row of t's target in sync's lock
 *		table, as sync's flush does: from then on this transaction's
 *		statements see every change whose flush ran, and no flush of t runs
 *		until it ends.
 */
static void
begin_locked(PGconn *conn, const DiffTable *t, const char *what, const char *lock_table)
{
	const char *params[1];

	PQclear(bridge_exec(conn, what, "BEGIN ISOLATION LEVEL READ COMMITTED", 0, NULL));
	if (lock_table == NULL)
		return;
	params[0] = t->target;
	PQclear(bridge_exec(conn, bridge_printf("%s: taking sync's lock", what),
						bridge_printf("SELECT 1 FROM %s l WHERE l.target = $1 FOR UPDATE", lock_table),
						1, params));
}

/*
 * diff_repair
 *		Repair every key of t->repair (see the file comment), then compare
 *		each again: t->repaired counts the keys written, t->still_different
 *		those that still differ.
 */
void
diff_repair(PGconn *conn, DiffTable *t, const char *keyspace)
{
	char	   *schema = bridge_plan_schema(keyspace);
	char	   *lock_table = bridge_printf("%s.sync_lock", bridge_qi(schema));
	char	   *cond_s = key_condition(t, "s");
	char	   *cond_f = key_condition(t, "f");
	char	   *cols = column_list(t, NULL, false);
	char	   *cols_s = column_list(t, "s", true);
	char	   *cols_f = column_list(t, "f", false);
	char	   *insert = bridge_printf("INSERT INTO %s (%s) SELECT %s FROM %s s WHERE %s",
									   t->foreign_table, cols, cols_s, t->source_view, cond_s);
	char	   *delete = bridge_printf("DELETE FROM %s f WHERE %s", t->foreign_table, cond_f);
	char	   *read_s = bridge_printf("SELECT %s FROM %s s WHERE %s", cols_s, t->source_view, cond_s);
	char	   *read_f = bridge_printf("SELECT %s FROM %s f WHERE %s", cols_f, t->foreign_table, cond_f);
	char	   *what = bridge_printf("repairing %s", t->target);
	const char *params[1];
	PGresult   *res;
	bool		locked;

	params[0] = lock_table;
	res = bridge_exec(conn, what, "SELECT pg_catalog.to_regclass($1) IS NOT NULL", 1, params);
	locked = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);

	for (int i = 0; i < t->nrepair; i++)
	{
		const char *const *key = (const char *const *) t->repair[i].key;

		if (i % REPAIR_BATCH == 0)
			begin_locked(conn, t, what, locked ? lock_table : NULL);
		res = bridge_exec(conn, what, insert, t->nkey, key);
		if (strcmp(PQcmdTuples(res), "0") == 0)
			PQclear(bridge_exec(conn, what, delete, t->nkey, key));
		PQclear(res);
		t->repaired++;
		if (i % REPAIR_BATCH == REPAIR_BATCH - 1 || i == t->nrepair - 1)
			PQclear(bridge_exec(conn, bridge_printf("%s: COMMIT (the writes are sent)", what),
								"COMMIT", 0, NULL));
		bridge_check_interrupt("the keys committed so far are repaired; run \"cqlbridge diff --repair\" again for the rest");
	}

	/*
	 * The repaired keys compared again, under sync's lock too: a flush
	 * between the two reads would show a difference that is none.
	 */
	for (int i = 0; i < t->nrepair; i++)
	{
		const char *const *key = (const char *const *) t->repair[i].key;
		PGresult   *a;
		PGresult   *b;

		if (i % REPAIR_BATCH == 0)
			begin_locked(conn, t, what, locked ? lock_table : NULL);
		a = bridge_exec(conn, what, read_s, t->nkey, key);
		b = bridge_exec(conn, what, read_f, t->nkey, key);
		if (!same_rows(a, b))
			t->still_different++;
		PQclear(a);
		PQclear(b);
		if (i % REPAIR_BATCH == REPAIR_BATCH - 1 || i == t->nrepair - 1)
			PQclear(bridge_exec(conn, what, "COMMIT", 0, NULL));
	}
	free(schema);
	free(cond_s);
	free(cond_f);
	free(cols);
	free(cols_s);
	free(cols_f);
	free(insert);
	free(delete);
	free(read_s);
	free(read_f);
}

/*
 * diff_repair_dry_run
 *		--repair --dry-run: the keys the repair would write again from the
 *		source view (missing and different) and delete (extra), with the
 *		first examples_max of them; nothing is written.
 */
void
diff_repair_dry_run(const DiffTable *t, int examples_max)
{
	long long	write = 0;
	long long	del = 0;
	int			shown = 0;

	for (int i = 0; i < t->nrepair; i++)
	{
		if (t->repair[i].kind == DIFF_EXTRA)
			del++;
		else
			write++;
	}
	printf("diff --repair --dry-run: %s: would write %lld key%s again from %s and delete %lld\n",
		   t->target, write, write == 1 ? "" : "s", t->source_view, del);
	for (int i = 0; i < t->nrepair && shown < examples_max; i++, shown++)
	{
		printf("  %s (", t->repair[i].kind == DIFF_EXTRA ? "delete" : "write ");
		for (int k = 0; k < t->nkey; k++)
			printf("%s%s", k ? ", " : "", t->repair[i].key[k] ? t->repair[i].key[k] : "NULL");
		printf(")\n");
	}
	if (t->nrepair > shown)
		printf("  ... %d more\n", t->nrepair - shown);
}

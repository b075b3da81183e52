/*-------------------------------------------------------------------------
 *
 * join.c
 *	  A query table joins a running stream: the tables that "cqlbridge
 *	  stream --replan" added or changed are backfilled from a snapshot
 *	  while the stream goes on writing the others.
 *
 * The stream tracks a joining table from the first change of its session:
 * every change it receives after the slot's confirmed position becomes
 * derivation requests of the table as for any other, but they wait
 * (p->deferred) instead of being derived and written.  Meanwhile a second
 * session loads the table in one REPEATABLE READ transaction, whose
 * snapshot S is taken after the session's START_REPLICATION: every row
 * committed before S is in the load, every change committed after S is
 * received by this session, so it waits among the requests.  For a
 * changed table the same transaction first lists the keys of its old
 * lineage that the view no longer has (they are to be deleted), then
 * upserts every row of the view, then rebuilds the lineage table from the
 * view.  When that COMMIT returns, the waiting requests are derived and
 * written by the next flush (newer writes than the load's, so Cassandra's
 * last write wins keeps them), and that flush marks the table live in
 * stream_tables.  Other tables are not touched: they keep streaming and
 * are never reloaded.
 *
 * The slot goes on being confirmed while a table joins, past changes the
 * table has only queued: so until the table is live it is "backfilling"
 * in stream_tables, and a stream that stops or fails before then
 * (kill, a failed session) empties the table in Cassandra and backfills
 * it again from a new snapshot.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/join.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

/* Set a table's state in stream_tables; false with err. */
static bool
set_state(PGconn *conn, CapPlan *p, const CapTable *t, const char *state, char *err, size_t errlen)
{
	char	   *sql = bridge_printf("UPDATE %s.stream_tables SET state = $2 WHERE target = $1", p->schema);
	const char *params[2] = {t->target, state};
	PGresult   *res = cap_exec(conn, sql, 2, params, err, errlen);

	free(sql);
	PQclear(res);
	return res != NULL;
}

/* The key columns of t, "k1, k2", quoted. */
static char *
key_list(const CapTable *t)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%s%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
	return sb.data;
}

/*
 * backfill_script
 *		The backfill of t in one transaction (see the file header), its
 *		source view locked before the snapshot is taken; with stale, first
 *		the keys of its old lineage the view does not have.
 */
static char *
backfill_script(const CapPlan *p, const CapTable *t, bool stale)
{
	StrBuf		sb;
	char	   *keys = key_list(t);
	char	   *lock;
	int			n = atoi(strrchr(t->lineage, '_') + 1);

	sb_init(&sb);
	sb_append(&sb, "BEGIN ISOLATION LEVEL REPEATABLE READ;\n");
	lock = cap_lock_sql(p, t);	/* before the snapshot (relations.c) */
	sb_appendf(&sb, "%s;\n", lock);
	free(lock);
	if (stale)
		sb_appendf(&sb, "SELECT %s FROM %s EXCEPT SELECT %s FROM %s;\n",
				   keys, t->lineage, keys, t->source_view);
	sb_appendf(&sb, "INSERT INTO %s (%s) SELECT * FROM (%s) q;\n", t->foreign_table, t->columns, t->rows_sql);
	sb_appendf(&sb, "DROP TABLE IF EXISTS %s;\nCREATE TABLE %s AS SELECT ", t->lineage, t->lineage);
	for (int k = 0; k < t->nkey; k++)
		sb_appendf(&sb, "%ss.%s", k ? ", " : "", bridge_quote_ident(t->key[k]));
	for (int k = 0; k < t->nlin; k++)
		sb_appendf(&sb, ", s.%s", bridge_quote_ident(t->lin[k]));
	sb_appendf(&sb, " FROM %s s;\nCREATE INDEX stream_keys_%d_key ON %s (%s);\n", t->source_view, n, t->lineage, keys);
	for (int k = 0; k < t->nlin; k++)
		sb_appendf(&sb, "CREATE INDEX stream_keys_%d_l%d ON %s (%s);\n",
				   n, k + 1, t->lineage, bridge_quote_ident(t->lin[k]));
	if (t->direct && t->key_of_pk)	/* not kept from here on (direct.c) */
		sb_appendf(&sb, "COMMENT ON TABLE %s IS 'cqlbridge: not kept (the stream applies %s from the change itself; its key is its relation''s key)';\n",
				   t->lineage, t->target);
	sb_append(&sb, "COMMIT;");
	free(keys);
	return sb.data;
}

/*
 * start_next
 *		Begin the backfill of the next joining table on p->join_conn: an
 *		interrupted one emptied in Cassandra first, its state recorded as
 *		backfilling, the script sent (asynchronously).  False with err.
 */
static bool
start_next(PGconn *conn, CapPlan *p, char *err, size_t errlen)
{
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];
		char	   *script;

		if (t->state != CAP_JOINING)
			continue;
		if (t->interrupted && !cap_truncate_target(conn, t, err, errlen))
			return false;
		if (!set_state(conn, p, t, "backfilling", err, errlen))
			return false;
		/* the old lineage's keys the view lacks (none for a new table) */
		script = backfill_script(p, t, !t->interrupted);
		t->interrupted = true;	/* from now on a stop leaves rows to empty */
		if (!PQsendQuery(p->join_conn, script))
		{
			snprintf(err, errlen, "starting the backfill of %s failed: %s", t->target,
					 PQerrorMessage(p->join_conn));
			free(script);
			return false;
		}
		free(script);
		t->state = CAP_BACKFILL;
		p->joining = i;
		p->join_t0 = bridge_now();
		cap_log("%s joins the stream: backfilled from a snapshot while the stream writes the other tables", t->target);
		return true;
	}
	return true;
}

/*
 * cap_join_stop
 *		A session ends: a backfill in progress is abandoned (its session
 *		closed, so its transaction rolls back), and every table not yet
 *		live joins again from the start at the next session, emptied first
 *		(the requests it was waiting with are gone).
 */
void
cap_join_stop(CapPlan *p)
{
	if (p->join_conn)
	{
		PQfinish(p->join_conn);
		p->join_conn = NULL;
	}
	p->joining = -1;
	for (int i = 0; i < p->ntables; i++)
		if (p->tables[i].state != CAP_LIVE && p->tables[i].state != CAP_JOINING)
		{
			p->tables[i].state = CAP_JOINING;
			p->tables[i].interrupted = true;
		}
	cap_keyset_clear(&p->deferred);
}

/*
 * cap_join_start
 *		At a session's start (after START_REPLICATION): the backfill of the
 *		first joining table, if any.  A failure is logged and retried at
 *		the next poll.
 */
void
cap_join_start(PGconn *conn, const BridgeOptions *opts, CapPlan *p)
{
	char		err[1024];
	bool		any = false;

	cap_join_stop(p);
	for (int i = 0; i < p->ntables; i++)
		any |= p->tables[i].state == CAP_JOINING;
	if (!any)
		return;
	p->join_conn = bridge_connect_try(opts, NULL, err, sizeof(err));
	/* the backfill yields the CPU as the stream does (--priority) */
	if (p->join_conn &&
		!cap_priority_session(p->join_conn, false, opts, bridge_extension_schema(conn), err, sizeof(err)))
	{
		PQfinish(p->join_conn);
		p->join_conn = NULL;
	}
	if (p->join_conn == NULL || !start_next(conn, p, err, sizeof(err)))
	{
		cap_log("%s; the backfill is tried again with the next session", err);
		if (p->join_conn)
		{
			PQfinish(p->join_conn);
			p->join_conn = NULL;
		}
	}
}

/* Move the waiting requests of table into req; how many. */
static size_t
release_requests(CapPlan *p, int table, CapKeySet *req)
{
	CapKeySet	keep = {0};
	size_t		n = 0;

	for (size_t i = 0; i < p->deferred.cap; i++)
	{
		const char *e = p->deferred.slots[i];

		if (e == NULL)
			continue;
		if (p->affected[atoi(e)].table == table)
		{
			cap_keyset_add(req, e);
			n++;
		}
		else
			cap_keyset_add(&keep, e);
	}
	cap_keyset_clear(&p->deferred);
	free(p->deferred.slots);
	p->deferred = keep;
	return n;
}

/*
 * cap_join_poll
 *		Collect what the backfill in progress returned so far, without
 *		waiting: the stale keys (into the table's pending keys), then its
 *		COMMIT, after which the table's waiting requests go into req and
 *		the next joining table starts.  CAP_CHECK_RETRY with err when the
 *		backfill failed (the session is retried; the table backfilled
 *		again).
 */
CapCheck
cap_join_poll(PGconn *conn, CapPlan *p, CapKeySet *req, char *err, size_t errlen)
{
	CapTable   *t;
	PGresult   *res;

	if (p->join_conn == NULL || p->joining < 0)
		return CAP_CHECK_OK;
	t = &p->tables[p->joining];
	if (!PQconsumeInput(p->join_conn))
	{
		snprintf(err, errlen, "the backfill of %s failed: %s", t->target, PQerrorMessage(p->join_conn));
		return CAP_CHECK_RETRY;
	}
	while (!PQisBusy(p->join_conn))
	{
		res = PQgetResult(p->join_conn);
		if (res == NULL)
		{
			t->state = CAP_CATCHUP;
			cap_log("%s: backfilled in %.1f s; the %zu changes that waited are written next", t->target,
					bridge_now() - p->join_t0, release_requests(p, p->joining, req));
			p->joining = -1;
			return start_next(conn, p, err, errlen) ? CAP_CHECK_OK : CAP_CHECK_RETRY;
		}
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
			cap_add_keys(t, res);	/* keys of the old lineage now gone */
		else if (PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			snprintf(err, errlen, "the backfill of %s failed: %s", t->target, PQresultErrorMessage(res));
			PQclear(res);
			return CAP_CHECK_RETRY;
		}
		PQclear(res);
	}
	return CAP_CHECK_OK;
}

/*
 * cap_join_flushed
 *		In a flush's writing transaction (committed false): the tables that
 *		caught up are marked live in stream_tables; after its COMMIT
 *		(committed true) they are live.  False with err.
 */
bool
cap_join_flushed(PGconn *conn, CapPlan *p, bool committed, char *err, size_t errlen)
{
	for (int i = 0; i < p->ntables; i++)
	{
		CapTable   *t = &p->tables[i];

		if (t->state != CAP_CATCHUP)
			continue;
		if (committed)
		{
			t->state = CAP_LIVE;
			t->interrupted = false;
			cap_log("%s joined the stream: live", t->target);
		}
		else if (!set_state(conn, p, t, "live", err, errlen))
			return false;
	}
	return true;
}

/*-------------------------------------------------------------------------
 *
 * partitions.c
 *	  The partitions of partitioned source relations while the stream
 *	  runs: created, attached, detached, dropped, truncated.
 *
 * The publication publishes a partitioned relation's changes as the
 * relation (publish_via_partition_root), so the rows of its partitions
 * arrive as the plan's relation.  But some changes of a partition bring or
 * remove rows without a message per row: pgoutput sends no TRUNCATE of a
 * single partition when changes are published via the root, and ATTACH,
 * DETACH and DROP of a partition are DDL, which logical decoding does not
 * send at all.  The stream therefore polls the catalog (every 2 s, and at
 * each start) for the leaf partitions of each partitioned source relation:
 * OID, relfilenode (a TRUNCATE, like any rewrite, gives a new one) and the
 * partition constraint (pg_get_partition_constraintdef: the bound with the
 * ancestors' bounds, an expression over the relation's columns), and
 * compares them with the set it recorded (stream_partitions).  A leaf
 * added, removed, rewritten or re-bounded is a recompute of every target
 * key whose source row satisfies the constraint, from the lineage table
 * (rows that were written: they vanish) and from the source view (rows
 * there now: they appear); keys.c.  The set is recorded in the flush that
 * wrote those keys, in the same transaction, so a failure or a kill finds
 * the difference again at the next poll.  The order of these recomputes
 * against the slot's changes does not matter: every key is recomputed
 * from the data as it is at the flush.
 *
 * No trigger, no event trigger and no privilege beyond the stream's: the
 * cost is one catalog query every 2 s per stream with partitioned sources.
 * A new leaf's replica identity is checked when it appears (changes of a
 * partition carry its own identity's old row).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/partitions.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

#define PARTS_POLL_S	2.0		/* catalog poll interval */

/*
 * The leaf partitions of the relations $1 (oid[]) now: root, leaf,
 * relfilenode, partition constraint (NULL when none) and the leaf's name.
 * Plain catalog reads, so within the load's snapshot they see the
 * partitions of that snapshot.
 */
static const char *const leaves_sql =
"WITH RECURSIVE tree(root, rel) AS ("
"  SELECT r, r FROM unnest($1::oid[]) r "
"  UNION ALL SELECT t.root, i.inhrelid FROM tree t "
"  JOIN pg_catalog.pg_inherits i ON i.inhparent = t.rel) "
"SELECT t.root, t.rel AS leaf, c.relfilenode AS filenode, "
"  pg_catalog.pg_get_partition_constraintdef(t.rel) AS bound, t.rel::pg_catalog.regclass::text AS name "
"FROM tree t JOIN pg_catalog.pg_class c ON c.oid = t.rel "
"WHERE t.rel <> t.root AND c.relkind <> 'p' ORDER BY 1, 2";

/* The partitioned sources' OIDs as an oid[] literal; NULL when none. */
static char *
roots(const CapPlan *p)
{
	StrBuf		sb;
	int			n = 0;

	sb_init(&sb);
	sb_appendc(&sb, '{');
	for (int i = 0; i < p->nsources; i++)
		if (p->sources[i].partitioned)
			sb_appendf(&sb, "%s%u", n++ ? "," : "", p->sources[i].relid);
	sb_appendc(&sb, '}');
	if (n == 0)
	{
		sb_free(&sb);
		return NULL;
	}
	return sb.data;
}

/*
 * keep_leaves
 *		Remember res (leaves_sql's rows) as the set to record with the
 *		next flush.
 */
static void
keep_leaves(CapPlan *p, PGresult *res)
{
	for (int k = 0; k < 4; k++)
	{
		free(p->parts_arrays[k]);
		p->parts_arrays[k] = cap_column_array(res, k);
	}
	p->parts_dirty = true;
}

/*
 * cap_partitions_persist
 *		Record the kept set (in the load's transaction, or in a flush's
 *		before its COMMIT); false with err.
 */
bool
cap_partitions_persist(PGconn *conn, CapPlan *p, char *err, size_t errlen)
{
	char	   *r = roots(p);
	char	   *del;
	char	   *ins;
	const char *params[4];
	PGresult   *res;

	if (!p->parts_dirty || r == NULL)
	{
		free(r);
		return true;
	}
	del = bridge_printf("DELETE FROM %s.stream_partitions WHERE root = ANY ($1::oid[])", p->schema);
	ins = bridge_printf("INSERT INTO %s.stream_partitions "
						"SELECT * FROM unnest($1::oid[], $2::oid[], $3::oid[], $4::text[])", p->schema);
	params[0] = r;
	res = cap_exec(conn, del, 1, params, err, errlen);
	if (res)
	{
		PQclear(res);
		for (int k = 0; k < 4; k++)
			params[k] = p->parts_arrays[k];
		res = cap_exec(conn, ins, 4, params, err, errlen);
	}
	free(del);
	free(ins);
	free(r);
	if (res == NULL)
		return false;
	PQclear(res);
	return true;
}

/*
 * cap_partitions_prepare
 *		The table of recorded partitions; for a partitioned source without
 *		a recorded set (a stream of an older cqlbridge), the set now, with
 *		nothing to recompute (what changed before is not known).
 */
void
cap_partitions_prepare(PGconn *conn, CapPlan *p)
{
	char	   *r = roots(p);
	char	   *sql = bridge_printf("CREATE TABLE IF NOT EXISTS %s.stream_partitions (root oid, leaf oid, "
									"filenode oid, bound text, PRIMARY KEY (root, leaf))", p->schema);

	bridge_exec_script(conn, "creating the stream's partition table", sql);
	free(sql);
	if (r == NULL)
		return;
	{
		const char *params[1] = {r};
		char	   *ins = bridge_printf("INSERT INTO %s.stream_partitions "
										"SELECT l.root, l.leaf, l.filenode, l.bound FROM (%s) l "
										"WHERE l.root NOT IN (SELECT root FROM %s.stream_partitions)",
										p->schema, leaves_sql, p->schema);

		PQclear(bridge_exec(conn, "recording the partitions of source relations", ins, 1, params));
		free(ins);
	}
	free(r);
}

/*
 * cap_partitions_record
 *		The load: the partitions of its snapshot (called in the load's
 *		transaction).
 */
void
cap_partitions_record(PGconn *conn, CapPlan *p)
{
	char	   *r = roots(p);
	const char *params[1] = {r};
	char		err[1024];
	PGresult   *res;

	if (r == NULL)
		return;
	res = bridge_exec(conn, "reading the partitions of source relations", leaves_sql, 1, params);
	keep_leaves(p, res);
	PQclear(res);
	if (!cap_partitions_persist(conn, p, err, sizeof(err)))
		bridge_fatal("recording the partitions of source relations: %s", err);
	p->parts_dirty = false;
	free(r);
}

/* Index of the source whose OID is relid, or -1. */
static int
source_of_oid(const CapPlan *p, const char *relid)
{
	unsigned int oid = (unsigned int) strtoul(relid, NULL, 10);

	for (int i = 0; i < p->nsources; i++)
		if (p->sources[i].relid == oid)
			return i;
	return -1;
}

/*
 * cap_partitions_poll
 *		At most every PARTS_POLL_S: compare the leaf partitions of the
 *		partitioned sources with the recorded set and queue the recompute
 *		of every leaf added, removed, rewritten (TRUNCATE) or re-bounded.
 *		CAP_CHECK_FATAL with err and hint when a new leaf's replica
 *		identity does not carry what the stream needs; CAP_CHECK_RETRY
 *		when the catalog could not be read.
 */
CapCheck
cap_partitions_poll(PGconn *conn, CapPlan *p, CapKeySet *req, char *err, size_t errlen,
					const char **hint)
{
	char	   *r;
	const char *params[1];
	PGresult   *cur;
	PGresult   *old;
	char	   *sql;
	int			events = 0;
	CapCheck	rc = CAP_CHECK_OK;

	if (bridge_now() - p->parts_polled < PARTS_POLL_S || (r = roots(p)) == NULL)
		return CAP_CHECK_OK;
	p->parts_polled = bridge_now();
	params[0] = r;
	cur = cap_exec(conn, leaves_sql, 1, params, err, errlen);
	sql = bridge_printf("SELECT root, leaf, filenode, bound FROM %s.stream_partitions ORDER BY 1, 2", p->schema);
	old = cur ? cap_exec(conn, sql, 0, NULL, err, errlen) : NULL;
	free(sql);
	free(r);
	if (old == NULL)
	{
		PQclear(cur);
		return CAP_CHECK_RETRY;
	}

	for (int c = 0; c < PQntuples(cur) && rc == CAP_CHECK_OK; c++)
	{
		int			src = source_of_oid(p, PQgetvalue(cur, c, 0));
		const char *bound = PQgetisnull(cur, c, 3) ? NULL : PQgetvalue(cur, c, 3);
		const char *name = PQgetvalue(cur, c, 4);
		int			o = -1;

		for (int k = 0; k < PQntuples(old) && o < 0; k++)
			if (strcmp(PQgetvalue(old, k, 0), PQgetvalue(cur, c, 0)) == 0 &&
				strcmp(PQgetvalue(old, k, 1), PQgetvalue(cur, c, 1)) == 0)
				o = k;
		if (src < 0)
			continue;
		if (o < 0)
		{
			char	   *msg;
			char	   *h;

			rc = cap_identity_problem(conn, p, src, name, &msg, &h, err, errlen);
			if (rc == CAP_CHECK_FATAL)
			{
				snprintf(err, errlen, "%s", msg);
				*hint = h;
			}
			if (rc != CAP_CHECK_OK)
				break;
			cap_log("partition %s of %s appeared (created or attached): its rows are written",
					name, p->sources[src].current);
		}
		else if (strcmp(PQgetvalue(old, o, 2), PQgetvalue(cur, c, 2)) == 0 &&
				 PQgetisnull(old, o, 3) == PQgetisnull(cur, c, 3) &&
				 (bound == NULL || strcmp(PQgetvalue(old, o, 3), bound) == 0))
			continue;			/* unchanged */
		else
		{
			cap_log("partition %s of %s was truncated or rewritten: its keys are recomputed",
					name, p->sources[src].current);
			if (!PQgetisnull(old, o, 3) && (bound == NULL || strcmp(PQgetvalue(old, o, 3), bound) != 0))
				cap_queue_recompute(p, req, src, PQgetvalue(old, o, 3));
		}
		cap_queue_recompute(p, req, src, bound);
		events++;
	}
	for (int k = 0; k < PQntuples(old) && rc == CAP_CHECK_OK; k++)
	{
		int			src = source_of_oid(p, PQgetvalue(old, k, 0));
		bool		found = false;

		for (int c = 0; c < PQntuples(cur) && !found; c++)
			found = strcmp(PQgetvalue(old, k, 0), PQgetvalue(cur, c, 0)) == 0 &&
				strcmp(PQgetvalue(old, k, 1), PQgetvalue(cur, c, 1)) == 0;
		if (found || src < 0)
			continue;
		cap_log("partition (OID %s) of %s is gone (detached or dropped): its rows are deleted",
				PQgetvalue(old, k, 1), p->sources[src].current);
		cap_queue_recompute(p, req, src, PQgetisnull(old, k, 3) ? NULL : PQgetvalue(old, k, 3));
		events++;
	}
	if (rc == CAP_CHECK_OK && events > 0)
		keep_leaves(p, cur);
	PQclear(cur);
	PQclear(old);
	return rc;
}

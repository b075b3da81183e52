/*-------------------------------------------------------------------------
 *
 * diff_progress.c
 *	  Checkpoints of cqlbridge diff: the ring of tokens cut into
 *	  DIFF_RANGES equal ranges, and each range the merge has passed
 *	  recorded with what it found, so that an interrupted diff (Ctrl-C, a
 *	  killed process, a lost connection) resumes after the last recorded
 *	  range and reports the same result as an uninterrupted one.
 *
 * The records are rows of cqlbridge.diff_progress (target, range: the
 * counts and the rows per differing column of that range) and
 * cqlbridge.diff_examples (its examples, with their keys), written on a
 * session of their own in autocommit (the diff's sessions are in read-only
 * transactions), so a record exists once written.  Both sides are read in
 * token order, so the recorded ranges of a table are always 0..k-1: a
 * resumed diff reads only tokens above range k-1's upper bound.  A diff
 * that ends (its report printed) forgets its tables' records.  A --repair
 * run records too, and with each range every differing key it found
 * (cqlbridge.diff_repair_keys), since it repairs them all once every table
 * is compared: an interrupted repair resumes with those keys (repairing a
 * key twice is harmless: each is compared again before it is written).
 * Records say which kind of run made them; a run of the other kind does
 * not resume from them but forgets them.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/diff_progress.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/diff.h"

/*
 * diff_range_of
 *		The range (0..DIFF_RANGES-1) whose (low, high] holds tok.
 */
int
diff_range_of(long long tok)
{
	return (int) (((uint64_t) tok - (uint64_t) INT64_MIN) >> (64 - DIFF_RANGES_BITS));
}

/*
 * diff_range_high
 *		The upper bound (inclusive) of range r.
 */
long long
diff_range_high(int r)
{
	if (r >= DIFF_RANGES - 1)
		return INT64_MAX;
	return (long long) ((uint64_t) INT64_MIN + ((uint64_t) (r + 1) << (64 - DIFF_RANGES_BITS)) - 1);
}

static void record_keys(DiffProgress *p, DiffTable *t, const char *table,
						const DiffExample *arr, int from, int to);

/*
 * diff_progress_setup
 *		The record tables (in schema cqlbridge, which apply creates).
 */
void
diff_progress_setup(PGconn *conn)
{
	PQclear(bridge_exec(conn, "creating cqlbridge.diff_progress",
						"CREATE TABLE IF NOT EXISTS cqlbridge.diff_progress ("
						" target text, range int, ranges int, src_rows bigint, tgt_rows bigint,"
						" missing bigint, extra bigint, different bigint, col_diffs bigint[],"
						" done_at timestamptz DEFAULT pg_catalog.now(), PRIMARY KEY (target, range))",
						0, NULL));
	/* made by the diff of cql_fdw 0.7 before --repair recorded */
	PQclear(bridge_exec(conn, "creating cqlbridge.diff_progress",
						"ALTER TABLE cqlbridge.diff_progress"
						" ADD COLUMN IF NOT EXISTS repair boolean NOT NULL DEFAULT false",
						0, NULL));
	PQclear(bridge_exec(conn, "creating cqlbridge.diff_examples",
						"CREATE TABLE IF NOT EXISTS cqlbridge.diff_examples ("
						" target text, range int, ord int, kind text, columns text, key text[],"
						" PRIMARY KEY (target, range, ord))",
						0, NULL));
	PQclear(bridge_exec(conn, "creating cqlbridge.diff_repair_keys",
						"CREATE TABLE IF NOT EXISTS cqlbridge.diff_repair_keys ("
						" target text, range int, ord int, kind text, columns text, key text[],"
						" PRIMARY KEY (target, range, ord))",
						0, NULL));
}

/*
 * diff_progress_forget
 *		Drop the records of t (a diff that ended, or --restart).
 */
void
diff_progress_forget(PGconn *conn, const DiffTable *t)
{
	const char *params[1] = {t->target};

	PQclear(bridge_exec(conn, "forgetting diff checkpoints",
						"DELETE FROM cqlbridge.diff_progress WHERE target = $1", 1, params));
	PQclear(bridge_exec(conn, "forgetting diff checkpoints",
						"DELETE FROM cqlbridge.diff_examples WHERE target = $1", 1, params));
	PQclear(bridge_exec(conn, "forgetting diff checkpoints",
						"DELETE FROM cqlbridge.diff_repair_keys WHERE target = $1", 1, params));
}

/*
 * diff_append_example
 *		Append *e to a growable array of differences.
 */
void
diff_append_example(DiffExample **arr, int *n, int *cap, const DiffExample *e)
{
	if (*n == *cap)
	{
		*cap = *cap ? *cap * 2 : 16;
		*arr = bridge_realloc(*arr, sizeof(DiffExample) * *cap);
	}
	(*arr)[(*n)++] = *e;
}

/*
 * load_keys
 *		The differences of t recorded in 'table' (cqlbridge.diff_examples or
 *		cqlbridge.diff_repair_keys), in range order, appended to *arr (*n,
 *		*cap: diff_append_example) up to 'limit' of them.
 */
static void
load_keys(PGconn *conn, DiffTable *t, const char *table, int limit,
		  DiffExample **arr, int *n, int *cap)
{
	const char *params[1] = {t->target};
	PGresult   *res;
	int			r = 0;

	res = bridge_exec(conn, "reading diff checkpoints",
					  bridge_printf("SELECT e.range, e.ord, e.kind, e.columns, k.v"
									" FROM %s e, pg_catalog.unnest(e.key) WITH ORDINALITY k(v, n)"
									" WHERE e.target = $1 ORDER BY e.range, e.ord, k.n", table),
					  1, params);
	while (r < PQntuples(res) && *n < limit)
	{
		DiffExample e;
		const char *kind = PQgetvalue(res, r, 2);

		e.kind = strcmp(kind, "missing") == 0 ? DIFF_MISSING :
			strcmp(kind, "extra") == 0 ? DIFF_EXTRA : DIFF_DIFFERENT;
		e.columns = PQgetisnull(res, r, 3) ? NULL : bridge_strdup(PQgetvalue(res, r, 3));
		e.key = bridge_malloc(sizeof(char *) * t->nkey);
		for (int k = 0; k < t->nkey; k++, r++)
		{
			if (r >= PQntuples(res))
				bridge_fatal("%s: a difference of %s has too few key values", table, t->target);
			e.key[k] = PQgetisnull(res, r, 4) ? NULL : bridge_strdup(PQgetvalue(res, r, 4));
		}
		diff_append_example(arr, n, cap, &e);
	}
	PQclear(res);
}

/*
 * mark_recorded
 *		Remember t's counts as recorded: the next record holds what was
 *		found after them.
 */
static void
mark_recorded(DiffProgress *p, const DiffTable *t)
{
	p->src_rows = t->src_rows;
	p->tgt_rows = t->tgt_rows;
	p->missing = t->missing;
	p->extra = t->extra;
	p->different = t->different;
	p->nexamples = t->nexamples;
	p->nrepair = t->nrepair;
	memcpy(p->col_diffs, t->col_diffs, sizeof(long long) * t->ncols);
}

/*
 * diff_progress_resume
 *		Add t's recorded ranges to its counts and examples; p->next is the
 *		first range to compare (DIFF_RANGES: the table is done).
 */
void
diff_progress_resume(DiffProgress *p, DiffTable *t, int examples)
{
	const char *params[3];
	char		nr[16];
	PGresult   *res;

	/* a new table: nothing recorded yet (p->col_diffs is zeroed by the caller) */
	p->next = 0;
	p->src_rows = p->tgt_rows = 0;
	p->missing = p->extra = p->different = 0;
	p->nexamples = 0;
	p->nrepair = 0;
	snprintf(nr, sizeof(nr), "%d", DIFF_RANGES);
	params[0] = t->target;
	params[1] = nr;
	params[2] = p->repair ? "true" : "false";
	res = bridge_exec(p->conn, "reading diff checkpoints",
					  "SELECT count(*), max(range), sum(src_rows), sum(tgt_rows), sum(missing), sum(extra), sum(different),"
					  " (SELECT pg_catalog.array_agg(s ORDER BY i) FROM (SELECT i, sum(c) s FROM cqlbridge.diff_progress d2,"
					  "   pg_catalog.unnest(d2.col_diffs) WITH ORDINALITY u(c, i) WHERE d2.target = $1 GROUP BY i) x)::text"
					  " FROM cqlbridge.diff_progress WHERE target = $1 AND ranges = $2::int AND repair = $3::boolean",
					  3, params);
	if (PQgetisnull(res, 0, 1))
	{
		PQclear(res);
		/* none, of another range count, or of the other kind of run */
		diff_progress_forget(p->conn, t);
		return;
	}
	if (atoi(PQgetvalue(res, 0, 0)) != atoi(PQgetvalue(res, 0, 1)) + 1)
		bridge_fatal_hint("Run \"cqlbridge diff --restart\" to compare it from the start.",
						  "the diff checkpoints of %s are not a run of ranges from the first", t->target);
	p->next = atoi(PQgetvalue(res, 0, 1)) + 1;
	t->src_rows = atoll(PQgetvalue(res, 0, 2));
	t->tgt_rows = atoll(PQgetvalue(res, 0, 3));
	t->missing = atoll(PQgetvalue(res, 0, 4));
	t->extra = atoll(PQgetvalue(res, 0, 5));
	t->different = atoll(PQgetvalue(res, 0, 6));
	if (!PQgetisnull(res, 0, 7))
	{
		const char *s = PQgetvalue(res, 0, 7);	/* {1,0,2} */

		for (int c = 0; c < t->ncols && *s; c++)
		{
			s++;
			t->col_diffs[c] = strtoll(s, (char **) &s, 10);
		}
	}
	PQclear(res);
	load_keys(p->conn, t, "cqlbridge.diff_examples", examples,
			  &t->examples, &t->nexamples, &t->maxexamples);
	if (p->repair)
		load_keys(p->conn, t, "cqlbridge.diff_repair_keys", INT32_MAX,
				  &t->repair, &t->nrepair, &t->maxrepair);
	mark_recorded(p, t);
}

/*
 * diff_progress_record
 *		Record ranges p->next .. upto-1 as compared: the first with what
 *		was found since the last record, the others empty.
 */
void
diff_progress_record(DiffProgress *p, DiffTable *t, int upto)
{
	StrBuf		cd;
	char		v[9][32];
	const char *params[10];

	if (upto <= p->next)
		return;
	sb_init(&cd);
	sb_appendc(&cd, '{');
	for (int c = 0; c < t->ncols; c++)
		sb_appendf(&cd, "%s%lld", c ? "," : "", t->col_diffs[c] - p->col_diffs[c]);
	sb_appendc(&cd, '}');
	PQclear(bridge_exec(p->conn, "recording a diff checkpoint", "BEGIN", 0, NULL));
	for (int r = p->next; r < upto; r++)
	{
		bool		first = r == p->next;

		snprintf(v[0], 32, "%d", r);
		snprintf(v[1], 32, "%d", DIFF_RANGES);
		snprintf(v[2], 32, "%lld", first ? t->src_rows - p->src_rows : 0);
		snprintf(v[3], 32, "%lld", first ? t->tgt_rows - p->tgt_rows : 0);
		snprintf(v[4], 32, "%lld", first ? t->missing - p->missing : 0);
		snprintf(v[5], 32, "%lld", first ? t->extra - p->extra : 0);
		snprintf(v[6], 32, "%lld", first ? t->different - p->different : 0);
		params[0] = t->target;
		for (int i = 0; i < 7; i++)
			params[i + 1] = v[i];
		params[8] = first ? cd.data : NULL;
		params[9] = p->repair ? "true" : "false";
		PQclear(bridge_exec(p->conn, "recording a diff checkpoint",
							"INSERT INTO cqlbridge.diff_progress (target, range, ranges, src_rows, tgt_rows,"
							" missing, extra, different, col_diffs, repair)"
							" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
							10, params));
	}
	record_keys(p, t, "cqlbridge.diff_examples", t->examples, p->nexamples, t->nexamples);
	if (p->repair)
		record_keys(p, t, "cqlbridge.diff_repair_keys", t->repair, p->nrepair, t->nrepair);
	PQclear(bridge_exec(p->conn, "recording a diff checkpoint", "COMMIT", 0, NULL));
	sb_free(&cd);
	p->next = upto;
	mark_recorded(p, t);
}

/*
 * record_keys
 *		Record the differences arr[from .. to-1] of t, found in range
 *		p->next, in 'table' (cqlbridge.diff_examples or
 *		cqlbridge.diff_repair_keys); in the caller's transaction.
 */
static void
record_keys(DiffProgress *p, DiffTable *t, const char *table,
			const DiffExample *arr, int from, int to)
{
	char		v[2][32];

	for (int e = from; e < to; e++)
	{
		const DiffExample *x = &arr[e];
		StrBuf		sql;
		const char **kp = bridge_malloc(sizeof(char *) * (5 + t->nkey));
		static const char *const kinds[] = {"missing", "extra", "different"};

		sb_init(&sql);
		sb_appendf(&sql, "INSERT INTO %s VALUES ($1, $2, $3, $4, $5, ARRAY[", table);
		for (int k = 0; k < t->nkey; k++)
		{
			sb_appendf(&sql, "%s$%d", k ? ", " : "", k + 6);
			kp[k + 5] = x->key[k];
		}
		sb_append(&sql, "]::text[])");
		snprintf(v[0], 32, "%d", p->next);
		snprintf(v[1], 32, "%d", e);
		kp[0] = t->target;
		kp[1] = v[0];
		kp[2] = v[1];
		kp[3] = kinds[x->kind];
		kp[4] = x->columns;
		PQclear(bridge_exec(p->conn, "recording a diff checkpoint", sql.data, 5 + t->nkey, kp));
		sb_free(&sql);
		free(kp);
	}
}

/*-------------------------------------------------------------------------
 *
 * diff_compare.c
 *	  One query table compared: first a row count and a hash of the rows
 *	  of every token range on both sides, then a row-by-row merge
 *	  (diff_merge.c) of the ranges where they do not agree.
 *
 * Each side computes, in one pass over its rows and in no particular
 * order, for each of the DIFF_RANGES token ranges (the checkpoints'
 * ranges) the number of rows and the XOR of a 64-bit hash of each row:
 * cql_bridge_row_hash() (src/bridge/row_hash.c) of the same values the
 * merge compares, the source's cast to the foreign table's types, so rows
 * the merge would find different hash differently (up to the hash).  With
 * a cql_fdw build that lacks it, hashtextextended() of the ROW()'s text,
 * which costs more than twice as much.  A range whose count and hash
 * agree is recorded as compared, with its counts and no difference; the
 * others are merged, one run of consecutive ranges at a time, and the
 * merge finds what differs.  Two
 * sides whose rows differ yet agree on a range's count and hash need a
 * 64-bit collision: about 2^-64 per range for rows not chosen to collide
 * (the keys are unique in Cassandra, so no row cancels another on that
 * side).  --row-by-row merges every range instead.
 *
 * What this saves: sorting the source's rows by token (the merge needs
 * it), the token-order scan of Cassandra (slower than a plain scan, whose
 * ranges are returned as they arrive), and sending every row of both
 * sides to cqlbridge to be compared.  A range that differs costs one
 * more read of that range on each side.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/diff_compare.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/diff.h"

/* more runs of differing ranges than this: one merge over all of them */
#define DIFF_MAX_MERGES 4

/* The count and hash of each token range of one side */
typedef struct RangeSums
{
	long long	rows[DIFF_RANGES];
	long long	hash[DIFF_RANGES];
} RangeSums;

/*
 * sums_sql
 *		The statement that computes the RangeSums of one side: the source
 *		view (alias s, each column cast to the foreign table's type) or
 *		the foreign table (alias f), from range 'from' on.  The range of a
 *		token is diff_range_of()'s: its top DIFF_RANGES_BITS bits, counted
 *		from the lowest token.
 */
static char *
sums_sql(const DiffTable *t, bool source, int from)
{
	const char *alias = source ? "s" : "f";
	char	   *tok = diff_token_expr(t, alias);
	char	   *cols = diff_compared_columns(t, source);
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "SELECT (%s OPERATOR(pg_catalog.>>) %d) OPERATOR(pg_catalog.+) %d AS r,"
			   " pg_catalog.count(*), pg_catalog.bit_xor(",
			   tok, 64 - DIFF_RANGES_BITS, DIFF_RANGES / 2);
	if (t->row_hash)
		sb_appendf(&sb, "%s.cql_bridge_row_hash(%s))", t->ext, cols);
	else
		sb_appendf(&sb, "pg_catalog.hashtextextended(ROW(%s)::pg_catalog.text, 0))", cols);
	sb_appendf(&sb, " FROM %s %s", source ? t->source_from : t->foreign_table, alias);
	if (from > 0)
		sb_appendf(&sb, " WHERE %s > %lld", tok, diff_range_high(from - 1));
	sb_append(&sb, " GROUP BY 1");
	free(tok);
	free(cols);
	return sb.data;
}

/*
 * read_sums
 *		The RangeSums of one side from its statement's result.
 */
static void
read_sums(PGresult *res, RangeSums *sums)
{
	memset(sums, 0, sizeof(RangeSums));
	for (int i = 0; i < PQntuples(res); i++)
	{
		int			r = atoi(PQgetvalue(res, i, 0));

		if (r < 0 || r >= DIFF_RANGES)
			bridge_fatal("internal error: token range %d out of 0..%d", r, DIFF_RANGES - 1);
		sums->rows[r] = atoll(PQgetvalue(res, i, 1));
		sums->hash[r] = strtoll(PQgetvalue(res, i, 2), NULL, 10);
	}
}

/*
 * range_sums
 *		Both sides' RangeSums from range p->next on, computed at once (each
 *		backend works on its own side).  The Cassandra side is a plain
 *		scan: no token order needed, and cql_fdw.token_scan_after skips the
 *		ranges compared before.
 */
static void
range_sums(PGconn *src, PGconn *tgt, const DiffProgress *p, const DiffTable *t,
		   RangeSums *ss, RangeSums *ts)
{
	char	   *src_sql = sums_sql(t, true, p->next);
	char	   *tgt_sql = sums_sql(t, false, p->next);
	char	   *after = p->next > 0 ? bridge_printf("%lld", diff_range_high(p->next - 1)) : bridge_strdup("");
	const char *params[1] = {after};
	char	   *saved[2];
	char	   *what_s = bridge_printf("diff of %s: hashing the token ranges of source view %s",
									   t->target, t->source_view);
	char	   *what_t = bridge_printf("diff of %s: hashing the token ranges of foreign table %s",
									   t->target, t->foreign_table);
	PGresult   *res;

	/*
	 * enable_sort off: a foreign table's row estimate is small, and the
	 * planner would sort every row to group them into 64 ranges.
	 */
	PQclear(bridge_exec(tgt, "setting up the range hashes",
						"SELECT pg_catalog.set_config('cql_fdw.token_order_scan', 'off', true),"
						" pg_catalog.set_config('cql_fdw.token_scan_after', $1, true),"
						" pg_catalog.set_config('enable_sort', 'off', true)", 1, params));

	/*
	 * enable_indexscan off on the source side: the view is read whole, and
	 * a plan that walks an index to feed a merge join fetches the heap in
	 * the index's order, one page per row where the key is a uuid; a
	 * sequential scan and a sort or hash cost a fraction of that (the
	 * hotel's guests view at scale 200: 13-16 s against 25 s).
	 *
	 * And no parallel workers: a parallel plan of a bulk form gives each
	 * worker the whole of every grouped subquery it joins (they are not
	 * parallel-aware), so the workers repeat that work; the guests view
	 * took 15.9 s and about three times the CPU in parallel against 12.9 s
	 * without.  The diff already keeps the cores busy with --jobs.
	 */
	res = bridge_exec(src, "setting up the range hashes",
					  "SELECT pg_catalog.current_setting('enable_indexscan'),"
					  " pg_catalog.current_setting('max_parallel_workers_per_gather')", 0, NULL);
	saved[0] = bridge_strdup(PQgetvalue(res, 0, 0));
	saved[1] = bridge_strdup(PQgetvalue(res, 0, 1));
	PQclear(res);
	PQclear(bridge_exec(src, "setting up the range hashes",
						"SELECT pg_catalog.set_config('enable_indexscan', 'off', true),"
						" pg_catalog.set_config('max_parallel_workers_per_gather', '0', true)", 0, NULL));
	if (!PQsendQueryParams(src, src_sql, 0, NULL, NULL, NULL, NULL, 0))
		bridge_fatal("%s failed: %s", what_s, PQerrorMessage(src));
	if (!PQsendQueryParams(tgt, tgt_sql, 0, NULL, NULL, NULL, NULL, 0))
		bridge_fatal("%s failed: %s", what_t, PQerrorMessage(tgt));
	res = bridge_get_result(src, what_s);
	read_sums(res, ss);
	PQclear(res);
	res = bridge_get_result(tgt, what_t);
	read_sums(res, ts);
	PQclear(res);
	PQclear(bridge_exec(tgt, "setting up the range hashes",
						"SELECT pg_catalog.set_config('cql_fdw.token_order_scan', 'on', true),"
						" pg_catalog.set_config('cql_fdw.token_scan_after', '', true),"
						" pg_catalog.set_config('enable_sort', 'on', true)", 0, NULL));
	PQclear(bridge_exec(src, "setting up the range hashes",
						"SELECT pg_catalog.set_config('enable_indexscan', $1, true),"
						" pg_catalog.set_config('max_parallel_workers_per_gather', $2, true)",
						2, (const char *const *) saved));
	free(saved[0]);
	free(saved[1]);
	free(src_sql);
	free(tgt_sql);
	free(what_s);
	free(what_t);
	free(after);
}

/* Do both sides agree on range r? */
static bool
range_agrees(const RangeSums *ss, const RangeSums *ts, int r)
{
	return ss->rows[r] == ts->rows[r] && ss->hash[r] == ts->hash[r];
}

/*
 * record_agreeing
 *		Ranges p->next .. upto-1 agree on both sides: counted and recorded
 *		as compared, without a difference.
 */
static void
record_agreeing(DiffProgress *p, DiffTable *t, const RangeSums *ss,
				const RangeSums *ts, int upto)
{
	for (int r = p->next; r < upto; r++)
	{
		t->src_rows += ss->rows[r];
		t->tgt_rows += ts->rows[r];
	}
	diff_progress_record(p, t, upto);
}

/*
 * compare_hashed
 *		The ranges from p->next on: hashed on both sides, the agreeing ones
 *		recorded, the others merged (one merge per run of consecutive
 *		differing ranges, or one over all of them when they are scattered).
 */
static void
compare_hashed(PGconn *src, PGconn *tgt, DiffProgress *p, DiffTable *t, bool tty,
			   const BridgeOptions *opts)
{
	RangeSums	ss,
				ts;
	int			runs = 0;
	int			lastdiff = -1;

	if (p->next >= DIFF_RANGES)
		return;
	if (tty && !opts->quiet)
	{
		fprintf(stderr, "\r\033[K%s: hashing %d token ranges on both sides", t->target,
				DIFF_RANGES - p->next);
		fflush(stderr);
	}
	range_sums(src, tgt, p, t, &ss, &ts);
	for (int r = p->next; r < DIFF_RANGES; r++)
		if (!range_agrees(&ss, &ts, r))
		{
			if (runs == 0 || lastdiff != r - 1)
				runs++;
			lastdiff = r;
		}

	while (p->next < DIFF_RANGES)
	{
		int			first = p->next;
		int			last;

		while (first < DIFF_RANGES && range_agrees(&ss, &ts, first))
			first++;
		record_agreeing(p, t, &ss, &ts, first);
		if (first == DIFF_RANGES)
			break;
		if (runs > DIFF_MAX_MERGES)
			last = lastdiff;
		else
			for (last = first; last + 1 < DIFF_RANGES && !range_agrees(&ss, &ts, last + 1); last++)
				;
		if (!opts->quiet)
			fprintf(stderr, "%sdiff of %s: token ranges %d-%d of %d do not agree in row count or hash: merging them row by row\n",
					tty ? "\r\033[K" : "", t->target, first, last, DIFF_RANGES);
		diff_table(src, tgt, p, t, last, opts->examples, opts->repair, tty, opts);
	}
}

/*
 * diff_compare
 *		Compare table t (its records read into p by diff_progress_resume):
 *		the source side in one REPEATABLE READ snapshot on src, the
 *		Cassandra side on tgt.
 */
void
diff_compare(PGconn *src, PGconn *tgt, DiffProgress *p, DiffTable *t, bool tty,
			 const BridgeOptions *opts)
{
	if (p->next > 0 && p->next < DIFF_RANGES && !opts->quiet)
		fprintf(stderr, "diff of %s: resumed after %d of %d token ranges (Cassandra read from token %lld on)\n",
				t->target, p->next, DIFF_RANGES, diff_range_high(p->next - 1));
	PQclear(bridge_exec(src, "starting the diff transaction",
						"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL));
	PQclear(bridge_exec(tgt, "starting the diff transaction", "BEGIN READ ONLY", 0, NULL));
	if (opts->row_by_row)
		diff_table(src, tgt, p, t, DIFF_RANGES - 1, opts->examples, opts->repair, tty, opts);
	else
		compare_hashed(src, tgt, p, t, tty, opts);
	PQclear(bridge_exec(src, "ending the diff transaction", "COMMIT", 0, NULL));
	PQclear(bridge_exec(tgt, "ending the diff transaction", "COMMIT", 0, NULL));
	if (tty && !opts->quiet)
		fprintf(stderr, "\r\033[K");
}

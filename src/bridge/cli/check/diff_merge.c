/*-------------------------------------------------------------------------
 *
 * diff_merge.c
 *	  The whole-table comparison of one query table: its Cassandra rows
 *	  (a token-range scan through the foreign table, in token order) and
 *	  its source view's rows (ordered by the same token, computed by
 *	  cql_token()) read as two cursors and merged; and the two sessions a
 *	  comparison runs on.
 *
 * Both streams are in token order, so the merge holds one token's rows of
 * each side at a time: one partition (or the few partitions whose keys
 * share a token), whatever the table's size.  Within a token, the rows of
 * both sides are sorted by their primary key (the text of each key column
 * in turn, bytewise, NULL first) and merged: a key on one side only is
 * missing (source only) or extra (Cassandra only); a key on both whose
 * values differ (PostgreSQL's text output, NULL distinct from any value,
 * each source column cast to its foreign-table type) is different, with
 * the columns that differ.  A stream that is not in token order is an
 * error, never a wrong report.
 *
 * The values are not copied: a token's rows point into the fetched
 * results, which a stream holds until the token is compared (a partition
 * may span several batches).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/diff_merge.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/diff.h"

/* rows per FETCH of either cursor */
#define DIFF_FETCH_ROWS 10000
/* batches of one side received ahead of the merge, at most */
#define DIFF_AHEAD 8

/*
 * A cursor on its own connection, read DIFF_FETCH_ROWS rows at a time.  The
 * next FETCH is sent as soon as a batch arrives, and while the merge reads
 * one side, the other side's batches are taken in as they arrive (up to
 * DIFF_AHEAD) and the next FETCH sent: a token's rows on one side can be
 * many batches (a partition of 50,000 rows), and both backends keep
 * working meanwhile instead of taking turns.
 */
typedef struct Stream
{
	PGconn	   *conn;
	const char *fetch;			/* "FETCH n FROM cursor" */
	const char *what;			/* for messages */
	struct Stream *other;		/* the other side, taken in while this is read */
	PGresult   *res;
	int			pos;
	int			n;
	bool		pending;		/* a FETCH is in flight */
	PGresult   *got;			/* its result, when its end is not yet read */
	PGresult   *ready[DIFF_AHEAD];	/* batches received, not yet read */
	int			nready;
	bool		ended;			/* a short batch arrived: no more FETCHes */
	bool		done;
	long long	last_token;
	bool		started;
	/* earlier batches the current token's rows still point into */
	PGresult  **held;
	int			nheld;
	int			maxheld;
} Stream;

/*
 * The rows of one token of one side: ncols value pointers per row into the
 * stream's results (NULL for NULL), in one array grown as needed and kept
 * for the next token, as is the array the rows are sorted in.
 */
typedef struct Group
{
	int			n;
	int			cap;
	const char **vals;			/* row r's column c: vals[r * ncols + c] */
	int		   *order;			/* row numbers sorted by key */
} Group;

/*
 * stream_fail
 *		Report a failed FETCH (the server's message, SQLSTATE, detail and
 *		hint) and exit; an interrupt is reported as such.
 */
static void
stream_fail(Stream *s, PGresult *res)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;

	bridge_check_interrupt(NULL);
	fflush(stdout);
	fprintf(stderr, "cqlbridge: reading the %s failed: %s", s->what,
			msg ? msg : PQerrorMessage(s->conn));
	if (state)
		fprintf(stderr, " (SQLSTATE %s)", state);
	fputc('\n', stderr);
	if (detail)
		fprintf(stderr, "DETAIL:  %s\n", detail);
	if (hint)
		fprintf(stderr, "HINT:  %s\n", hint);
	exit(BRIDGE_EXIT_ERROR);
}

/*
 * stream_send
 *		Send the next FETCH without waiting for it.
 */
static void
stream_send(Stream *s)
{
	if (!PQsendQueryParams(s->conn, s->fetch, 0, NULL, NULL, NULL, NULL, 0))
		stream_fail(s, NULL);
	s->pending = true;
}

/*
 * stream_complete
 *		Finish the FETCH in flight: wait for it (wait), or only take what
 *		has arrived (false when it is not complete yet).  Its batch joins
 *		the ready ones; the next FETCH is sent if there is room ahead.
 */
static bool
stream_complete(Stream *s, bool wait)
{
	PGresult   *r;

	if (!wait && !PQconsumeInput(s->conn))
		stream_fail(s, NULL);
	for (;;)
	{
		if (!wait && PQisBusy(s->conn))
			return false;
		r = PQgetResult(s->conn);
		if (r == NULL)
			break;
		if (s->got)
			PQclear(s->got);
		s->got = r;
	}
	r = s->got;
	s->got = NULL;
	s->pending = false;
	if (r == NULL || PQresultStatus(r) != PGRES_TUPLES_OK)
		stream_fail(s, r);
	if (PQntuples(r) < DIFF_FETCH_ROWS)
		s->ended = true;
	s->ready[s->nready++] = r;
	if (!s->ended && s->nready < DIFF_AHEAD)
		stream_send(s);
	return true;
}

/*
 * stream_take_in
 *		Take in the other side's batches that have arrived, without
 *		waiting, so that its backend can go on with the next FETCH.
 */
static void
stream_take_in(Stream *s)
{
	while (s->pending && stream_complete(s, false))
		;
}

/*
 * stream_peek
 *		Make the stream's current row available; false at its end.
 */
static bool
stream_peek(Stream *s)
{
	if (s->res && s->pos < s->n)
		return true;
	if (s->done)
		return false;
	if (s->res)
	{
		/* the current token's first rows may be in it: kept until compared */
		if (s->nheld == s->maxheld)
		{
			s->maxheld = s->maxheld ? s->maxheld * 2 : 4;
			s->held = bridge_realloc(s->held, sizeof(PGresult *) * s->maxheld);
		}
		s->held[s->nheld++] = s->res;
		s->res = NULL;
	}
	if (s->nready == 0)
	{
		if (!s->pending && !s->ended)
			stream_send(s);
		if (!s->pending)
		{
			s->done = true;
			return false;
		}
		stream_complete(s, true);
	}
	s->res = s->ready[0];
	s->nready--;
	memmove(&s->ready[0], &s->ready[1], sizeof(PGresult *) * s->nready);
	s->n = PQntuples(s->res);
	s->pos = 0;
	if (!s->pending && !s->ended)
		stream_send(s);
	if (s->other)
		stream_take_in(s->other);
	if (s->n == 0)
		s->done = true;
	return s->n > 0;
}

/*
 * stream_stop
 *		Send no further FETCH and take in the one in flight (the merge
 *		stopped before the stream's end), so that the cursor can be closed.
 */
static void
stream_stop(Stream *s)
{
	s->ended = true;
	if (s->pending)
		stream_complete(s, true);
}

/*
 * stream_token
 *		The token of the current row, checked to be in order: a stream out
 *		of token order would make the merge report wrong differences.
 */
static long long
stream_token(Stream *s, const DiffTable *t)
{
	long long	tok = strtoll(PQgetvalue(s->res, s->pos, 0), NULL, 10);

	if (s->started && tok < s->last_token)
		bridge_fatal_hint("Run the diff again; if it recurs, report it as a bug of cql_fdw's token-order scan.",
						  "diff of %s: the %s are not in token order (%lld after %lld)",
						  t->target, s->what, tok, s->last_token);
	s->started = true;
	s->last_token = tok;
	return tok;
}

/*
 * stream_release
 *		Free the batches before the current one: the token whose rows
 *		pointed into them has been compared.
 */
static void
stream_release(Stream *s)
{
	for (int i = 0; i < s->nheld; i++)
		PQclear(s->held[i]);
	s->nheld = 0;
}

/*
 * diff_key_text
 *		The primary key of a row as "(col='value', ...)" for the report
 *		(allocated).
 */
char *
diff_key_text(const DiffTable *t, char **key)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendc(&sb, '(');
	for (int k = 0; k < t->nkey; k++)
	{
		char	   *lit = key[k] ? bridge_quote_literal(key[k]) : bridge_strdup("NULL");

		sb_appendf(&sb, "%s%s=%s", k ? ", " : "", t->cols[t->key[k]], lit);
		free(lit);
	}
	sb_appendc(&sb, ')');
	return sb.data;
}

/*
 * key_cmp
 *		Compare the primary keys of two rows (ncols values each): column
 *		by column, NULL first, then the text's bytes.  Both sides order
 *		their rows by it, so it needs only to be a total order.
 */
static int
key_cmp(const DiffTable *t, const char **a, const char **b)
{
	for (int k = 0; k < t->nkey; k++)
	{
		const char *x = a[t->key[k]];
		const char *y = b[t->key[k]];
		int			c;

		if (x == NULL || y == NULL)
		{
			if (x != y)
				return x == NULL ? -1 : 1;
			continue;
		}
		c = strcmp(x, y);
		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * group_read
 *		Read every row of token tok from the stream into g (pointers into
 *		the stream's results).
 */
static void
group_read(Stream *s, const DiffTable *t, long long tok, Group *g)
{
	while (stream_peek(s) && stream_token(s, t) == tok)
	{
		const char **row;

		if (g->n == g->cap)
		{
			g->cap = g->cap ? g->cap * 2 : 16;
			g->vals = bridge_realloc(g->vals, sizeof(char *) * t->ncols * g->cap);
			g->order = bridge_realloc(g->order, sizeof(int) * g->cap);
		}
		row = &g->vals[(size_t) g->n * t->ncols];
		for (int c = 0; c < t->ncols; c++)
			row[c] = PQgetisnull(s->res, s->pos, c + 1) ? NULL
				: PQgetvalue(s->res, s->pos, c + 1);
		g->n++;
		s->pos++;
	}
}

/* the group being sorted and its table (qsort has no context argument) */
static const Group *sort_group;
static const DiffTable *sort_table;

/*
 * cmp_index
 *		qsort comparator of row numbers of sort_group, by key.
 */
static int
cmp_index(const void *a, const void *b)
{
	int			ncols = sort_table->ncols;

	return key_cmp(sort_table, &sort_group->vals[(size_t) *(const int *) a * ncols],
				   &sort_group->vals[(size_t) *(const int *) b * ncols]);
}

/*
 * group_order
 *		Sort g's row numbers by key into g->order; rows that arrive in key
 *		order (often the Cassandra side) are not sorted again.
 */
static void
group_order(const DiffTable *t, Group *g)
{
	bool		sorted = true;

	for (int i = 0; i < g->n; i++)
	{
		g->order[i] = i;
		if (i > 0 && sorted &&
			key_cmp(t, &g->vals[(size_t) (i - 1) * t->ncols], &g->vals[(size_t) i * t->ncols]) > 0)
			sorted = false;
	}
	if (sorted)
		return;
	sort_group = g;
	sort_table = t;
	qsort(g->order, g->n, sizeof(int), cmp_index);
}

/*
 * record
 *		Count a difference; keep it as an example (up to 'examples') and,
 *		with keep_all (--repair), in the list of keys to repair.
 */
static void
record(DiffTable *t, DiffKind kind, const char **row, const char *columns,
	   int examples, bool keep_all)
{
	DiffExample e;

	if (kind == DIFF_MISSING)
		t->missing++;
	else if (kind == DIFF_EXTRA)
		t->extra++;
	else
		t->different++;
	if (t->nexamples >= examples && !keep_all)
		return;
	e.kind = kind;
	e.columns = columns ? bridge_strdup(columns) : NULL;
	e.key = bridge_malloc(sizeof(char *) * t->nkey);
	for (int k = 0; k < t->nkey; k++)
		e.key[k] = row[t->key[k]] ? bridge_strdup(row[t->key[k]]) : NULL;
	if (t->nexamples < examples)
		diff_append_example(&t->examples, &t->nexamples, &t->maxexamples, &e);
	if (keep_all)
		diff_append_example(&t->repair, &t->nrepair, &t->maxrepair, &e);
}

/*
 * compare_groups
 *		Merge the rows of one token of both sides by key; cols is the
 *		caller's buffer for the names of the columns that differ.
 */
static void
compare_groups(DiffTable *t, Group *src, Group *tgt, int examples, bool keep_all,
			   StrBuf *cols)
{
	int			ncols = t->ncols;
	int			i = 0,
				j = 0;

	group_order(t, src);
	group_order(t, tgt);
	while (i < src->n || j < tgt->n)
	{
		const char **rs = i < src->n ? &src->vals[(size_t) src->order[i] * ncols] : NULL;
		const char **rt = j < tgt->n ? &tgt->vals[(size_t) tgt->order[j] * ncols] : NULL;
		int			c;

		if (rs && rt)
			c = key_cmp(t, rs, rt);
		else
			c = rs ? -1 : 1;
		if (c < 0)
		{
			record(t, DIFF_MISSING, rs, NULL, examples, keep_all);
			i++;
		}
		else if (c > 0)
		{
			record(t, DIFF_EXTRA, rt, NULL, examples, keep_all);
			j++;
		}
		else
		{
			cols->len = 0;
			for (int k = 0; k < ncols; k++)
			{
				bool		same = (rs[k] == NULL && rt[k] == NULL) ||
					(rs[k] != NULL && rt[k] != NULL && strcmp(rs[k], rt[k]) == 0);

				if (!same)
				{
					sb_appendf(cols, "%s%s", cols->len ? ", " : "", t->cols[k]);
					t->col_diffs[k]++;
				}
			}
			if (cols->len > 0)
				record(t, DIFF_DIFFERENT, rs, cols->data, examples, keep_all);
			i++;
			j++;
		}
	}
}

/*
 * diff_compared_columns
 *		The select list of the values compared, in the order of t->cols:
 *		the source's (alias s) cast to the foreign table's types, or the
 *		foreign table's (alias f).  The merge and the range hashes read the
 *		same list, so two rows hash alike when the merge finds them equal.
 */
char *
diff_compared_columns(const DiffTable *t, bool source)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int c = 0; c < t->ncols; c++)
	{
		char	   *qi = bridge_quote_ident(t->cols[c]);

		if (source)
			sb_appendf(&sb, "%ss.%s::%s", c ? ", " : "", qi, t->types[c]);
		else
			sb_appendf(&sb, "%sf.%s", c ? ", " : "", qi);
		free(qi);
	}
	return sb.data;
}

/*
 * diff_token_expr
 *		cql_token() of the partition key of the row alias (allocated).
 */
char *
diff_token_expr(const DiffTable *t, const char *alias)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "%s.cql_token(ARRAY[", t->ext);
	for (int p = 0; p < t->npk; p++)
	{
		char	   *lit = bridge_quote_literal(t->pk_cql[p]);

		sb_appendf(&sb, "%s%s", p ? ", " : "", lit);
		free(lit);
	}
	sb_append(&sb, "]::text[]");
	for (int p = 0; p < t->npk; p++)
	{
		char	   *qi = bridge_quote_ident(t->cols[t->pk[p]]);

		sb_appendf(&sb, ", %s.%s", alias, qi);
		free(qi);
	}
	sb_append(&sb, ")");
	return sb.data;
}

/*
 * show_progress
 *		The updating progress line of one table (terminal only).
 */
static void
show_progress(const DiffTable *t, double elapsed)
{
	long long	done = t->src_rows > t->tgt_rows ? t->src_rows : t->tgt_rows;
	double		rate = elapsed > 0 ? done / elapsed : 0;

	if (rate > 0 && t->expected > done)
		fprintf(stderr, "\r\033[K%s: %lld/%lld rows, %.0f rows/s, ETA %.0fs",
				t->target, done, t->expected, rate, (t->expected - done) / rate);
	else
		fprintf(stderr, "\r\033[K%s: %lld rows, %.0f rows/s", t->target, done, rate);
	fflush(stderr);
}

/*
 * diff_table
 *		Compare every row of t in token ranges p->next .. last on both
 *		sides; the counts, examples and (keep_all) every differing key go
 *		into t.  The source view is read on src_conn, in a REPEATABLE READ
 *		transaction (one snapshot), the Cassandra table on tgt_conn, in a
 *		transaction too (the cursor's).  Ranges before p->next are compared
 *		already (their results are in t); each range passed is recorded.
 */
void
diff_table(PGconn *src_conn, PGconn *tgt_conn, DiffProgress *p, DiffTable *t,
		   int last, int examples, bool keep_all, bool tty, const BridgeOptions *opts)
{
	StrBuf		src,
				tgt;
	char	   *tok_s = diff_token_expr(t, "s");
	char	   *tok_f = diff_token_expr(t, "f");
	Stream		ss = {0},
				ts = {0};
	Group		gs = {0},
				gt = {0};
	double		t0 = bridge_now();
	double		shown = 0;
	bool		resumed = p->next > 0;
	long long	high = diff_range_high(last);
	StrBuf		cols;

	sb_init(&cols);
	sb_init(&src);
	sb_init(&tgt);
	{
		char	   *cols_s = diff_compared_columns(t, true);
		char	   *cols_f = diff_compared_columns(t, false);

		sb_appendf(&src, "DECLARE diff_src NO SCROLL CURSOR FOR SELECT %s, %s FROM %s s",
				   tok_s, cols_s, t->source_from);
		sb_appendf(&tgt, "DECLARE diff_tgt NO SCROLL CURSOR FOR SELECT %s, %s FROM %s f",
				   tok_f, cols_f, t->foreign_table);
		free(cols_s);
		free(cols_f);
	}
	if (resumed)
	{
		/*
		 * From range p->next on (the ranges before it are compared).
		 * cql_fdw reads Cassandra from that token on
		 * (cql_fdw.token_scan_after, until the cursor is closed); the WHERE
		 * on the Cassandra side then removes nothing.
		 */
		long long	after = diff_range_high(p->next - 1);
		char	   *param = bridge_printf("%lld", after);
		const char *params[1] = {param};

		sb_appendf(&src, " WHERE %s > %lld", tok_s, after);
		sb_appendf(&tgt, " WHERE %s > %lld", tok_f, after);
		PQclear(bridge_exec(tgt_conn, "setting where the scan starts",
							"SELECT pg_catalog.set_config('cql_fdw.token_scan_after', $1, false)",
							1, params));
		free(param);
	}

	/*
	 * Up to range last: the source side stops there, the Cassandra side is
	 * left unread after it (the merge stops at the first token above).
	 */
	if (last < DIFF_RANGES - 1)
		sb_appendf(&src, " %s %s <= %lld", resumed ? "AND" : "WHERE", tok_s, high);
	sb_append(&src, " ORDER BY 1");
	PQclear(bridge_exec(src_conn, bridge_printf("diff of %s: opening the source view %s", t->target, t->source_view),
						src.data, 0, NULL));
	PQclear(bridge_exec(tgt_conn, bridge_printf("diff of %s: opening the scan of foreign table %s", t->target, t->foreign_table),
						tgt.data, 0, NULL));

	ss.conn = src_conn;
	ts.conn = tgt_conn;
	ss.other = &ts;
	ts.other = &ss;
	ss.fetch = bridge_printf("FETCH %d FROM diff_src", DIFF_FETCH_ROWS);
	ts.fetch = bridge_printf("FETCH %d FROM diff_tgt", DIFF_FETCH_ROWS);
	ss.what = bridge_printf("rows of source view %s", t->source_view);
	ts.what = bridge_printf("rows of Cassandra table %s (foreign table %s)", t->target, t->foreign_table);
	for (;;)
	{
		bool		hs = stream_peek(&ss);
		bool		ht = stream_peek(&ts);
		long long	tok;

		if (!hs && !ht)
			break;
		if (hs && ht)
		{
			long long	a = stream_token(&ss, t);
			long long	b = stream_token(&ts, t);

			tok = a < b ? a : b;
		}
		else
			tok = hs ? stream_token(&ss, t) : stream_token(&ts, t);
		if (tok > high)
			break;
		if (diff_range_of(tok) > p->next)
			diff_progress_record(p, t, diff_range_of(tok));
		group_read(&ss, t, tok, &gs);
		group_read(&ts, t, tok, &gt);
		t->src_rows += gs.n;
		t->tgt_rows += gt.n;
		compare_groups(t, &gs, &gt, examples, keep_all, &cols);
		gs.n = 0;
		gt.n = 0;
		stream_release(&ss);
		stream_release(&ts);
		bridge_check_interrupt(NULL);
		if (tty && !opts->quiet && bridge_now() - shown > 0.1)
		{
			shown = bridge_now();
			show_progress(t, shown - t0);
		}
	}
	diff_progress_record(p, t, last + 1);
	stream_stop(&ss);
	stream_stop(&ts);
	stream_release(&ss);
	stream_release(&ts);
	free(ss.held);
	free(ts.held);
	for (int i = 0; i < ss.nready; i++)
		PQclear(ss.ready[i]);
	for (int i = 0; i < ts.nready; i++)
		PQclear(ts.ready[i]);
	if (ss.res)
		PQclear(ss.res);
	if (ts.res)
		PQclear(ts.res);
	PQclear(bridge_exec(src_conn, "closing the diff cursors", "CLOSE diff_src", 0, NULL));
	PQclear(bridge_exec(tgt_conn, "closing the diff cursors", "CLOSE diff_tgt", 0, NULL));
	if (resumed)
		PQclear(bridge_exec(tgt_conn, "resetting where scans start",
							"SELECT pg_catalog.set_config('cql_fdw.token_scan_after', '', false)",
							0, NULL));
	if (tty && !opts->quiet)
		fprintf(stderr, "\r\033[K");
	free(gs.vals);
	free(gs.order);
	free(gt.vals);
	free(gt.order);
	sb_free(&cols);
	sb_free(&src);
	sb_free(&tgt);
	free(tok_s);
	free(tok_f);
}

/*
 * plan_cursors_whole
 *		Either side's session: its cursors are read to the end, so plan
 *		them for all rows, not a fast start.
 */
static void
plan_cursors_whole(PGconn *conn)
{
	PQclear(bridge_exec(conn, "setting up the session",
						"SELECT pg_catalog.set_config('cursor_tuple_fraction', '1', false)", 0, NULL));
}

/*
 * diff_open_source
 *		The source side's session: connected, cancelled by Ctrl-C, its
 *		cursors planned for all rows, no parallel workers.  The range hashes
 *		are a plain query, which may get a parallel plan: for a bulk form
 *		that plan has every worker compute each grouped subquery whole (the
 *		inner side of its joins), three times the work on the hotel's guests
 *		at scale 200 (and no faster beside Cassandra).
 */
PGconn *
diff_open_source(const BridgeOptions *opts)
{
	PGconn	   *src = bridge_connect(opts);

	bridge_install_cancel(src);
	plan_cursors_whole(src);
	PQclear(bridge_exec(src, "setting up the session",
						"SELECT pg_catalog.set_config('max_parallel_workers_per_gather', '0', false)",
						0, NULL));
	return src;
}

/*
 * diff_open_target
 *		The Cassandra side's session: connected, cancelled by Ctrl-C, with
 *		cql_fdw loaded (its GUCs), --consistency and the token-order scan.
 */
PGconn *
diff_open_target(const BridgeOptions *opts)
{
	PGconn	   *tgt = bridge_connect(opts);
	const char *params[1];

	bridge_install_cancel(tgt);
	plan_cursors_whole(tgt);
	PQclear(bridge_exec(tgt, "loading cql_fdw",
						bridge_printf("SELECT %s.cql_token('{int}', 1)", bridge_extension_schema(tgt)),
						0, NULL));
	params[0] = opts->consistency ? opts->consistency : "LOCAL_QUORUM";
	PQclear(bridge_exec(tgt, "setting the read consistency (--consistency)",
						"SELECT pg_catalog.set_config('cql_fdw.consistency', $1, false)", 1, params));
	PQclear(bridge_exec(tgt, "setting up the session",
						"SELECT pg_catalog.set_config('cql_fdw.token_order_scan', 'on', false),"
						" pg_catalog.set_config('max_parallel_workers_per_gather', '0', false)", 0, NULL));
	return tgt;
}

/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  cqlbridge verify DIR: for every workload query of 004_verify.sql,
 *	  run it on the relational tables (source) and on the Cassandra table
 *	  through its foreign table (target) with the same sampled parameters,
 *	  and compare the answers exactly.
 *
 * Values are compared in PostgreSQL's text output, so "the same answer"
 * means what an application reading both sides would see.  Rows are
 * compared in order when the block says "ordered: true", else as sorted
 * lists.  EXPLAIN of the target shows the FDW's "Access:" line: a query
 * marked "single_partition: true" must be served by one partition; one
 * marked "buckets: ..." (a bucketed table) by the buckets cql_fdw
 * enumerates, one marked "in_list: true" by a read per value, never a
 * scan.  The partitions each sample reads (from the
 * Access line) are reported per query.
 * Latency is the median over the samples of one execution on each side
 * (prepared statements, so planning is not counted).
 * The report (the JSON of --json) is kept as DIR/verify.json and shown in
 * DIR/report.html's Verification section (plan/render_checks.c).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/verify.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/verify.h"
#include "plan/checks_html.h"

typedef struct Rows
{
	int			nrows;
	int			ncols;
	char	  **names;			/* column names */
	char	  **lines;			/* one printable line per row */
} Rows;

typedef struct QueryResult
{
	const char *name;
	const char *table;			/* the block's "table" (keyspace.table) */
	int			samples;
	bool		pass;
	bool		single_expected;
	const char *buckets;		/* "buckets: " of a bucketed table, or NULL */
	bool		in_list;		/* "in_list: true": a read per value of an IN list */
	bool		composed;		/* "composed: true": partition reads joined */
	char	   *access;
	long		parts_min;		/* partitions read per sample (-1: unknown) */
	long		parts_max;
	bool		parts_unknown;	/* a sample read no counted partitions */
	double		source_ms;
	double		target_ms;
	StrBuf		diff;			/* explanation of the first difference */
} QueryResult;

/*
 * row_line
 *		One row of a result as one line of text, "(v1, v2, NULL)", in
 *		PostgreSQL's text output: the unit in which source and target
 *		answers are compared.
 */
static char *
row_line(PGresult *res, int r)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "(");
	for (int c = 0; c < PQnfields(res); c++)
	{
		if (c > 0)
			sb_append(&sb, ", ");
		if (PQgetisnull(res, r, c))
			sb_append(&sb, "NULL");
		else
		{
			char	   *q = bridge_quote_literal(PQgetvalue(res, r, c));

			sb_append(&sb, q);
			free(q);
		}
	}
	sb_append(&sb, ")");
	return sb.data;
}

/*
 * cmp_lines
 *		qsort comparator of row lines (strcmp order), for answers compared
 *		as sorted lists.
 */
static int
cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * rows_from_result
 *		Keep the column names and row lines of a result, sorted when the
 *		query's order does not count, so the PGresult can be cleared.
 */
static void
rows_from_result(PGresult *res, Rows *rows, bool sort)
{
	rows->nrows = PQntuples(res);
	rows->ncols = PQnfields(res);
	rows->names = bridge_malloc(sizeof(char *) * (rows->ncols + 1));
	for (int c = 0; c < rows->ncols; c++)
		rows->names[c] = bridge_strdup(PQfname(res, c));
	rows->lines = bridge_malloc(sizeof(char *) * (rows->nrows + 1));
	for (int r = 0; r < rows->nrows; r++)
		rows->lines[r] = row_line(res, r);

	/*
	 * The printable line quotes every value and spells NULL without quotes,
	 * so equal lines mean equal rows and sorting lines sorts rows.
	 */
	if (sort)
		qsort(rows->lines, rows->nrows, sizeof(char *), cmp_lines);
}

/*
 * rows_free
 *		Release what rows_from_result allocated.
 */
static void
rows_free(Rows *rows)
{
	for (int c = 0; c < rows->ncols; c++)
		free(rows->names[c]);
	for (int r = 0; r < rows->nrows; r++)
		free(rows->lines[r]);
	free(rows->names);
	free(rows->lines);
}

/*
 * cmp_double
 *		qsort comparator of doubles, ascending.
 */
static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * median
 *		The median of n latencies (sorts v in place); 0 when there are none.
 */
static double
median(double *v, int n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Execute a prepared statement; fatal with the query's name on error. */
static PGresult *
run_prepared(PGconn *conn, const char *qname, const char *side, const char *stmt,
			 int nparams, const char *const *params, double *ms)
{
	double		t0 = bridge_now();
	PGresult   *res = PQexecPrepared(conn, stmt, nparams, params, NULL, NULL, 0);

	if (ms)
		*ms = (bridge_now() - t0) * 1000.0;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		bridge_check_interrupt("verification stopped");
		bridge_fatal("query %s: the %s statement failed: %s (SQLSTATE %s)",
					 qname, side, msg ? msg : PQerrorMessage(conn), state ? state : "?");
	}
	return res;
}

/*
 * prepare
 *		Prepare one side (sample, source or target) of a query block; a
 *		statement that does not prepare is fatal with the file, line, query
 *		and SQLSTATE, since its plan is wrong or stale.
 */
static void
prepare(PGconn *conn, const BridgeBlockFile *f, const BridgeBlock *b, const char *qname,
		const char *side, const char *stmt, const char *sql, int nparams, const Oid *types)
{
	PGresult   *res = PQprepare(conn, stmt, sql, nparams, types);

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		bridge_fatal("%s:%d: query %s: the %s statement does not prepare: %s (SQLSTATE %s)",
					 f->path, b->line, qname, side, msg ? msg : PQerrorMessage(conn),
					 state ? state : "?");
	}
	PQclear(res);
}

/*
 * deallocate
 *		Drop a prepared statement; a failure does not matter (the session
 *		ends soon).
 */
static void
deallocate(PGconn *conn, const char *stmt)
{
	char	   *sql = bridge_printf("DEALLOCATE %s", stmt);

	PQclear(PQexec(conn, sql));
	free(sql);
}

/*
 * Partitions an Access line reads: 1 for "single partition", N for "N
 * partitions (...)", -1 for anything else (a token range scan).
 */
static long
access_partitions(const char *access)
{
	char	   *end;
	long		n;

	if (strncmp(access, "single partition", 16) == 0)
		return 1;
	n = strtol(access, &end, 10);
	if (end != access && strncmp(end, " partition", 10) == 0)
		return n;
	return -1;
}

/*
 * partition_reads
 *		Whether every scan of an access text ("single partition; 3
 *		partitions", one item per foreign scan) reads partitions, none a
 *		token range or the whole table.
 */
static bool
partition_reads(const char *access)
{
	const char *a = access;

	while (a && *a)
	{
		if (access_partitions(a) < 0)
			return false;
		a = strstr(a, "; ");
		if (a)
			a += 2;
	}
	return strcmp(access, "-") != 0;
}

/* "Access: ..." lines of EXPLAIN of the target; "-" when there is none */
static char *
explain_access(PGconn *conn, const char *qname, const char *target_sql,
			   int nparams, const Oid *types, const char *const *params)
{
	char	   *sql = bridge_printf("EXPLAIN %s", target_sql);
	PGresult   *res = PQexecParams(conn, sql, nparams, types, params, NULL, NULL, 0);
	StrBuf		sb;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bridge_fatal("query %s: EXPLAIN of the target statement failed: %s",
					 qname, PQerrorMessage(conn));
	sb_init(&sb);
	for (int r = 0; r < PQntuples(res); r++)
	{
		const char *line = PQgetvalue(res, r, 0);
		const char *a = strstr(line, "Access: ");

		if (a == NULL)
			continue;
		a += strlen("Access: ");
		if (sb.len > 0)
			sb_append(&sb, "; ");
		sb_append(&sb, a);
	}
	PQclear(res);
	free(sql);
	if (sb.len == 0)
		sb_append(&sb, "-");
	return sb.data;
}

/*
 * --show: the target statement of one sample as a user would run it
 * through the foreign table: parameters, EXPLAIN (VERBOSE, COSTS OFF) and
 * the rows, so that a demo or a review sees what Cassandra is asked.
 */
static void
show_sample(PGconn *conn, const char *qname, const char *description,
			const char *target_sql, int nparams, const Oid *types,
			const char *const *params, const char *params_text, PGresult *rows)
{
	char	   *sql = bridge_printf("EXPLAIN (VERBOSE, COSTS OFF) %s", target_sql);
	PGresult   *res = PQexecParams(conn, sql, nparams, types, params, NULL, NULL, 0);
	int			nrows = PQntuples(rows);
	int			ncols = PQnfields(rows);

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bridge_fatal("query %s: EXPLAIN of the target statement failed: %s",
					 qname, PQerrorMessage(conn));
	printf("== %s%s%s\n", qname, description ? ": " : "", description ? description : "");
	printf("%s;\n-- parameters $1..: %s\n", target_sql, params_text);
	for (int r = 0; r < PQntuples(res); r++)
		printf("  %s\n", PQgetvalue(res, r, 0));
	for (int c = 0; c < ncols; c++)
		printf("%s%s", c ? " | " : "", PQfname(rows, c));
	printf("\n");
	for (int r = 0; r < nrows && r < 10; r++)
	{
		for (int c = 0; c < ncols; c++)
			printf("%s%s", c ? " | " : "",
				   PQgetisnull(rows, r, c) ? "NULL" : PQgetvalue(rows, r, c));
		printf("\n");
	}
	if (nrows > 10)
		printf("... (%d rows)\n", nrows);
	else
		printf("(%d row%s)\n", nrows, nrows == 1 ? "" : "s");
	printf("\n");
	fflush(stdout);
	PQclear(res);
	free(sql);
}

/* Compare; on the first difference explain it in qr->diff, return false. */
static bool
compare_rows(QueryResult *qr, const char *params_text, Rows *src, Rows *tgt, bool ordered)
{
	int			n = src->nrows > tgt->nrows ? src->nrows : tgt->nrows;

	if (src->ncols != tgt->ncols)
	{
		sb_appendf(&qr->diff, "  params %s: source has %d columns, target %d\n",
				   params_text, src->ncols, tgt->ncols);
		return false;
	}
	for (int c = 0; c < src->ncols; c++)
		if (strcmp(src->names[c], tgt->names[c]) != 0)
		{
			sb_appendf(&qr->diff, "  params %s: column %d is \"%s\" in the source, \"%s\" in the target\n",
					   params_text, c + 1, src->names[c], tgt->names[c]);
			return false;
		}
	for (int r = 0; r < n; r++)
	{
		const char *a = r < src->nrows ? src->lines[r] : "(no row)";
		const char *b = r < tgt->nrows ? tgt->lines[r] : "(no row)";

		if (strcmp(a, b) != 0)
		{
			sb_appendf(&qr->diff,
					   "  params %s: %s row %d of %d (source) / %d (target) differs\n"
					   "    source: %s\n    target: %s\n",
					   params_text, ordered ? "ordered" : "sorted",
					   r + 1, src->nrows, tgt->nrows, a, b);
			return false;
		}
	}
	return true;
}

/* A metadata value "true". */
static bool
meta_true(const char *v)
{
	return v != NULL && strcmp(v, "true") == 0;
}

/*
 * verify_query
 *		Verify one query block of 004: draw opts->samples parameter rows
 *		with its sample statement, run source and target with each, compare
 *		the answers (in order when "ordered: true"), check from EXPLAIN that
 *		the target reads one partition (or only its buckets), and record the
 *		outcome and latencies in qr.
 */
static void
verify_query(PGconn *conn, const BridgeOptions *opts, const BridgeBlockFile *f,
			 const BridgeBlock *b, int index, QueryResult *qr)
{
	const char *qname = bridge_block_require(f, b, "query");
	const char *params_meta = bridge_block_get(b, "params");
	const char *ordered_meta = bridge_block_get(b, "ordered");
	const char *single_meta = bridge_block_get(b, "single_partition");
	const char *sample_sql = bridge_block_sql(b, "sample");
	const char *source_sql = bridge_block_sql(b, "source");
	const char *target_sql = bridge_block_sql(b, "target");
	bool		ordered = ordered_meta && strcmp(ordered_meta, "true") == 0;
	char	  **plist;
	int			nparams = 0;
	Oid		   *types;
	char	   *src_stmt = bridge_printf("cqlbridge_verify_src_%d", index);
	char	   *tgt_stmt = bridge_printf("cqlbridge_verify_tgt_%d", index);
	PGresult   *samples;
	int			nsamples;
	double	   *src_ms;
	double	   *tgt_ms;

	memset(qr, 0, sizeof(*qr));
	qr->name = qname;
	qr->table = bridge_block_get(b, "table");
	qr->pass = true;
	qr->single_expected = single_meta && strcmp(single_meta, "true") == 0;
	qr->buckets = bridge_block_get(b, "buckets");
	qr->in_list = meta_true(bridge_block_get(b, "in_list"));
	qr->composed = meta_true(bridge_block_get(b, "composed"));
	qr->parts_min = -1;
	qr->parts_max = -1;
	sb_init(&qr->diff);

	if (source_sql == NULL || target_sql == NULL)
		bridge_fatal("%s:%d: query %s needs \"-- source\" and \"-- target\" statements",
					 f->path, b->line, qname);

	/* parameter types, by name through the server (to_regtype) */
	if (params_meta && strcmp(params_meta, "none") != 0)
		plist = bridge_split_list(params_meta, &nparams);
	else
		plist = NULL;
	types = bridge_malloc(sizeof(Oid) * (nparams + 1));
	for (int i = 0; i < nparams; i++)
	{
		const char *sp = strpbrk(plist[i], " \t");
		const char *tp[1];
		PGresult   *res;

		if (sp == NULL)
			bridge_fatal("%s:%d: query %s: parameter \"%s\" has no type (\"name type\")",
						 f->path, b->line, qname, plist[i]);
		while (*sp == ' ' || *sp == '\t')
			sp++;
		tp[0] = sp;
		res = bridge_exec(conn, "resolving a parameter type",
						  "SELECT to_regtype($1)::oid", 1, tp);
		if (PQgetisnull(res, 0, 0))
			bridge_fatal("%s:%d: query %s: unknown parameter type \"%s\"",
						 f->path, b->line, qname, sp);
		types[i] = (Oid) strtoul(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
	}
	if (nparams > 0 && sample_sql == NULL)
		bridge_fatal("%s:%d: query %s has parameters but no \"-- sample\" statement",
					 f->path, b->line, qname);

	prepare(conn, f, b, qname, "source", src_stmt, source_sql, nparams, types);
	prepare(conn, f, b, qname, "target", tgt_stmt, target_sql, nparams, types);

	if (nparams > 0)
	{
		char		lim[16];
		const char *lp[1] = {lim};
		char	   *what = bridge_printf("%s:%d: sample of query %s", f->path, b->line, qname);

		snprintf(lim, sizeof(lim), "%d", opts->samples);
		samples = bridge_exec(conn, what, sample_sql, 1, lp);
		free(what);
		if (PQnfields(samples) != nparams)
			bridge_fatal("%s:%d: query %s: the sample returns %d columns for %d parameters",
						 f->path, b->line, qname, PQnfields(samples), nparams);
		nsamples = PQntuples(samples);
	}
	else
	{
		samples = NULL;
		nsamples = 1;
	}

	src_ms = bridge_malloc(sizeof(double) * (nsamples + 1));
	tgt_ms = bridge_malloc(sizeof(double) * (nsamples + 1));
	qr->samples = nsamples;
	for (int s = 0; s < nsamples; s++)
	{
		const char **pv = bridge_malloc(sizeof(char *) * (nparams + 1));
		StrBuf		ptext;
		PGresult   *sr;
		PGresult   *tr;
		Rows		src;
		Rows		tgt;
		char	   *access;

		sb_init(&ptext);
		sb_append(&ptext, "(");
		for (int i = 0; i < nparams; i++)
		{
			pv[i] = PQgetisnull(samples, s, i) ? NULL : PQgetvalue(samples, s, i);
			if (i > 0)
				sb_append(&ptext, ", ");
			if (pv[i])
			{
				char	   *q = bridge_quote_literal(pv[i]);

				sb_append(&ptext, q);
				free(q);
			}
			else
				sb_append(&ptext, "NULL");
		}
		sb_append(&ptext, ")");

		sr = run_prepared(conn, qname, "source", src_stmt, nparams, pv, &src_ms[s]);
		tr = run_prepared(conn, qname, "target", tgt_stmt, nparams, pv, &tgt_ms[s]);
		if (opts->show && s == 0)
			show_sample(conn, qname, bridge_block_get(b, "description"), target_sql,
						nparams, types, pv, ptext.data, tr);
		rows_from_result(sr, &src, !ordered);
		rows_from_result(tr, &tgt, !ordered);
		if (qr->pass && !compare_rows(qr, ptext.data, &src, &tgt, ordered))
			qr->pass = false;
		rows_free(&src);
		rows_free(&tgt);
		PQclear(sr);
		PQclear(tr);

		access = explain_access(conn, qname, target_sql, nparams, types, pv);
		{
			long		n = access_partitions(access);

			if (n < 0)
				qr->parts_unknown = true;
			else
			{
				if (qr->parts_min < 0 || n < qr->parts_min)
					qr->parts_min = n;
				if (n > qr->parts_max)
					qr->parts_max = n;
			}
			if (qr->composed && !partition_reads(access) && qr->pass)
			{
				qr->pass = false;
				sb_appendf(&qr->diff, "  expected partition reads (the drive's partition, one lookup per row) for %s, EXPLAIN shows \"Access: %s\"\n",
						   ptext.data, access);
			}
			if (qr->in_list && n < 0 && qr->pass)
			{
				qr->pass = false;
				sb_appendf(&qr->diff, "  expected a read of the IN list's partitions for %s, EXPLAIN shows \"Access: %s\"\n",
						   ptext.data, access);
			}
			if (qr->buckets && n != 1 && strstr(access, "buckets of") == NULL && qr->pass)
			{
				qr->pass = false;
				sb_appendf(&qr->diff, "  expected a read of the buckets (%s) for %s, EXPLAIN shows \"Access: %s\"\n",
						   qr->buckets, ptext.data, access);
			}
		}
		if (qr->access == NULL)
			qr->access = access;
		else if (strcmp(access, "single partition") != 0 &&
				 strcmp(qr->access, "single partition") == 0)
		{
			free(qr->access);
			qr->access = access;
		}
		else
			free(access);
		sb_free(&ptext);
		free(pv);
		bridge_check_interrupt("verification stopped");
	}
	if (qr->access == NULL)
		qr->access = bridge_strdup("-");
	if (qr->single_expected && nsamples > 0 && strcmp(qr->access, "single partition") != 0)
	{
		qr->pass = false;
		sb_appendf(&qr->diff, "  expected a single-partition read, EXPLAIN shows \"Access: %s\"\n",
				   qr->access);
	}
	qr->source_ms = median(src_ms, nsamples);
	qr->target_ms = median(tgt_ms, nsamples);

	if (samples)
		PQclear(samples);
	deallocate(conn, src_stmt);
	deallocate(conn, tgt_stmt);
	free(src_ms);
	free(tgt_ms);
	free(types);
	free(src_stmt);
	free(tgt_stmt);
}

/*
 * verify_json
 *		The report as JSON, for --json FILE and DIR/verify.json: the results
 *		of every query (as the table on stdout, with its table, and the
 *		first difference of a failed one) and when the run finished.
 */
static char *
verify_json(const QueryResult *qr, int n, int failed)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "{\n  \"command\": \"verify\",\n  \"queries\": [");
	for (int i = 0; i < n; i++)
	{
		const char *result = !qr[i].pass ? "FAIL" : qr[i].samples == 0 ? "empty" : "pass";

		sb_append(&sb, i ? ",\n    {\"query\": " : "\n    {\"query\": ");
		bridge_json_string(&sb, qr[i].name);
		if (qr[i].table)
		{
			sb_append(&sb, ", \"table\": ");
			bridge_json_string(&sb, qr[i].table);
		}
		sb_appendf(&sb, ", \"samples\": %d, \"result\": \"%s\", \"access\": ", qr[i].samples, result);
		bridge_json_string(&sb, qr[i].access);
		sb_appendf(&sb, ", \"source_ms\": %.3f, \"target_ms\": %.3f", qr[i].source_ms, qr[i].target_ms);
		if (!qr[i].parts_unknown && qr[i].parts_min >= 0)
			sb_appendf(&sb, ", \"partitions_min\": %ld, \"partitions_max\": %ld", qr[i].parts_min, qr[i].parts_max);
		if (qr[i].diff.len > 0)
		{
			sb_append(&sb, ", \"difference\": ");
			bridge_json_string(&sb, qr[i].diff.data);
		}
		sb_append(&sb, "}");
	}
	sb_appendf(&sb, "\n  ],\n  \"failed\": %d,\n  \"passed\": %s,\n  \"finished_at\": ",
			   failed, failed ? "false" : "true");
	bridge_json_string(&sb, bridge_utc_timestamp());
	sb_append(&sb, "\n}\n");
	return sb.data;
}

/*
 * cmd_verify
 *		"cqlbridge verify DIR": verify every query of DIR/004_verify.sql and
 *		print a table of the results; returns 0 when every query gave the
 *		same answers on both sides, BRIDGE_EXIT_DIFFERENCES otherwise.
 */
int
cmd_verify(const BridgeOptions *opts)
{
	char	   *path;
	BridgeBlockFile *f;
	PGconn	   *conn;
	QueryResult *qr;
	int			failed = 0;
	int			namew = 5;
	char	   *json;

	path = bridge_path(opts->dir, "004_verify.sql");
	f = bridge_read_blocks(path);
	if (f->nblocks == 0)
		bridge_fatal("%s: no query blocks", path);
	bridge_select_tables(f, opts);
	conn = bridge_connect(opts);
	bridge_install_cancel(conn);

	qr = bridge_malloc(sizeof(QueryResult) * f->nblocks);
	for (int i = 0; i < f->nblocks; i++)
	{
		verify_query(conn, opts, f, &f->blocks[i], i, &qr[i]);
		if ((int) strlen(qr[i].name) > namew)
			namew = (int) strlen(qr[i].name);
	}

	printf("%-*s  %7s  %-6s  %-18s  %10s  %10s  %s\n", namew, "query", "samples", "result",
		   "access", "source ms", "target ms", "partitions");
	for (int i = 0; i < f->nblocks; i++)
	{
		const char *result = !qr[i].pass ? "FAIL" : qr[i].samples == 0 ? "empty" : "pass";

		char	   *parts;

		if (qr[i].parts_unknown || qr[i].parts_min < 0)
			parts = bridge_strdup("-");
		else if (qr[i].parts_min == qr[i].parts_max)
			parts = bridge_printf("%ld", qr[i].parts_min);
		else
			parts = bridge_printf("%ld-%ld", qr[i].parts_min, qr[i].parts_max);
		printf("%-*s  %7d  %-6s  %-18s  %10.2f  %10.2f  %s\n", namew, qr[i].name,
			   qr[i].samples, result, qr[i].access, qr[i].source_ms, qr[i].target_ms, parts);
		free(parts);
		if (qr[i].diff.len > 0)
			fputs(qr[i].diff.data, stdout);
		if (!qr[i].pass)
			failed++;
	}
	if (failed > 0)
		printf("%d of %d queries FAILED\n", failed, f->nblocks);
	else
		printf("all %d queries give the same answers on both sides\n", f->nblocks);
	fflush(stdout);
	PQfinish(conn);
	json = verify_json(qr, f->nblocks, failed);
	if (opts->json)
		bridge_write_output(opts->json, json);
	/* the plan directory keeps the result, and report.html shows it */
	plan_record_check(opts->dir, PLAN_VERIFY_JSON, json);
	return failed > 0 ? BRIDGE_EXIT_DIFFERENCES : BRIDGE_EXIT_SUCCESS;
}

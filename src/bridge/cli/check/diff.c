/*-------------------------------------------------------------------------
 *
 * diff.c
 *	  cqlbridge diff DIR: every row of every query table of the plan (or
 *	  of --table) compared with every row of its source view; the rows
 *	  missing in Cassandra, the rows only in Cassandra and the rows that
 *	  differ (which columns), counted per table with up to --examples
 *	  examples; --json FILE writes the same report for tools; --repair
 *	  writes what differs (diff_repair.c).
 *
 * Each table is compared by the merge of diff_merge.c: its source view
 * read in a REPEATABLE READ, READ ONLY transaction (one snapshot) on one
 * session, its Cassandra table on a second session that reads in token
 * order (cql_fdw.token_order_scan) at --consistency
 * (the setting cql_fdw.consistency, LOCAL_QUORUM by default); the two backends
 * work at the same time.  With --jobs N (default 2) N tables are compared
 * at once, each in a worker process (diff_jobs.c); --jobs 1, or a single
 * table to compare, compares them one after another in this process.
 * Before anything is read, every table is checked against the plan: the
 * foreign table exists and reads the plan's keyspace, the source view
 * exists and has every column of 003, and the partition key's CQL types
 * are known; anything else is an error (exit status 2), as is any failed
 * statement.  Exit status 0: no difference; 1: differences.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/diff.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/diff.h"
#include "plan/checks_html.h"

static const char *const kind_names[] = {"missing", "extra", "different"};

/*
 * index_of
 *		Position of name in names, -1 if absent.
 */
static int
index_of(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/*
 * result_row
 *		The row of res whose first column is name, -1 if none.
 */
static int
result_row(PGresult *res, const char *name)
{
	for (int r = 0; r < PQntuples(res); r++)
		if (strcmp(PQgetvalue(res, r, 0), name) == 0)
			return r;
	return -1;
}

/*
 * idents
 *		A 003 metadata list of identifiers, unquoted; fatal with file:line
 *		when it does not parse.
 */
static char **
idents(const BridgeBlockFile *f, const BridgeBlock *b, const char *key, int *n)
{
	char	  **v = bridge_split_idents(bridge_block_require(f, b, key), n);

	if (v == NULL || *n == 0)
		bridge_fatal_hint("Run \"cqlbridge plan\" again.",
						  "%s:%d: the \"-- %s:\" line is not a list of names", f->path, b->line, key);
	return v;
}

/*
 * check_table
 *		Fill t from its 003 block and the catalog, and check it against the
 *		plan: fatal (status 2) on a missing foreign table or view, another
 *		keyspace, a changed view or an unknown partition-key type.  With
 *		bulk_form, the bulk form of the source view is asked for too.
 */
static void
check_table(PGconn *conn, const BridgeBlockFile *f, const BridgeBlock *b,
			const char *keyspace, const char *dir, bool bulk_form, DiffTable *t)
{
	char	  **key;
	char	  **pk;
	const char *params[2];
	PGresult   *res;
	char	   *ks_want;
	const char *rows = bridge_block_get(b, "rows");

	t->target = bridge_block_require(f, b, "table");
	t->foreign_table = bridge_block_require(f, b, "foreign_table");
	t->source_view = bridge_block_require(f, b, "source_view");
	t->expected = rows ? atoll(rows) : 0;
	t->cols = idents(f, b, "columns", &t->ncols);
	key = idents(f, b, "key", &t->nkey);
	pk = idents(f, b, "partition_key", &t->npk);
	t->key = bridge_malloc(sizeof(int) * t->nkey);
	t->pk = bridge_malloc(sizeof(int) * t->npk);
	for (int k = 0; k < t->nkey; k++)
		if ((t->key[k] = index_of(t->cols, t->ncols, key[k])) < 0)
			bridge_fatal("%s:%d: key column %s of %s is not in \"-- columns:\"", f->path, b->line,
						 bridge_show_name(key[k]), t->target);
	for (int p = 0; p < t->npk; p++)
		if ((t->pk[p] = index_of(t->cols, t->ncols, pk[p])) < 0)
			bridge_fatal("%s:%d: partition-key column %s of %s is not in \"-- columns:\"", f->path, b->line,
						 bridge_show_name(pk[p]), t->target);

	/* the foreign table: its keyspace, column types and CQL types */
	params[0] = t->foreign_table;
	res = bridge_exec(conn, bridge_printf("reading foreign table %s", t->foreign_table),
					  "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),"
					  " (SELECT o.option_value FROM pg_catalog.pg_options_to_table(a.attfdwoptions) o"
					  "   WHERE o.option_name = 'cql_type'),"
					  " (SELECT o.option_value FROM pg_catalog.pg_options_to_table(ft.ftoptions) o"
					  "   WHERE o.option_name = 'keyspace')"
					  " FROM pg_catalog.pg_foreign_table ft"
					  " JOIN pg_catalog.pg_attribute a ON a.attrelid = ft.ftrelid"
					  " WHERE ft.ftrelid = pg_catalog.to_regclass($1)"
					  "   AND a.attnum > 0 AND NOT a.attisdropped",
					  1, params);
	if (PQntuples(res) == 0)
		bridge_fatal_hint(bridge_printf("Run \"cqlbridge apply %s\" first, or give the directory of the plan that made this database's tables.", dir),
						  "foreign table %s of %s does not exist", t->foreign_table, t->target);
	ks_want = PQgetisnull(res, 0, 3) ? NULL : PQgetvalue(res, 0, 3);
	if (ks_want == NULL || strcmp(ks_want, keyspace) != 0)
		bridge_fatal_hint("Give the directory of the plan that made the foreign table, or run \"cqlbridge apply DIR\" for this one.",
						  "foreign table %s reads keyspace %s, but %s is a plan of keyspace %s",
						  t->foreign_table, ks_want ? ks_want : "(none)", dir, keyspace);
	t->types = bridge_malloc(sizeof(char *) * t->ncols);
	t->pk_cql = bridge_malloc(sizeof(char *) * t->npk);
	for (int c = 0; c < t->ncols; c++)
	{
		int			r = result_row(res, t->cols[c]);

		if (r < 0)
			bridge_fatal_hint("Run \"cqlbridge apply DIR\" again (it recreates the foreign tables).",
							  "foreign table %s has no column %s of the plan", t->foreign_table,
							  bridge_show_name(t->cols[c]));
		t->types[c] = bridge_strdup(PQgetvalue(res, r, 1));
		for (int p = 0; p < t->npk; p++)
			if (t->pk[p] == c)
			{
				if (PQgetisnull(res, r, 2))
					bridge_fatal_hint("Run \"cqlbridge apply DIR\" again (it declares every column's cql_type).",
									  "partition-key column %s of foreign table %s has no cql_type option",
									  bridge_show_name(t->cols[c]), t->foreign_table);
				t->pk_cql[p] = bridge_strdup(PQgetvalue(res, r, 2));
			}
	}
	PQclear(res);

	/* the source view: every column of the plan still there */
	params[0] = t->source_view;
	res = bridge_exec(conn, bridge_printf("reading source view %s", t->source_view),
					  "SELECT a.attname FROM pg_catalog.pg_attribute a"
					  " JOIN pg_catalog.pg_class c ON c.oid = a.attrelid AND c.relkind = 'v'"
					  " WHERE a.attrelid = pg_catalog.to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
					  1, params);
	if (PQntuples(res) == 0)
		bridge_fatal_hint(bridge_printf("Run \"cqlbridge apply %s\" (it creates the source views).", dir),
						  "source view %s of %s does not exist", t->source_view, t->target);
	for (int c = 0; c < t->ncols; c++)
		if (result_row(res, t->cols[c]) < 0)
			bridge_fatal_hint("Run \"cqlbridge plan\" and \"cqlbridge apply\" again, or restore the view from 002_foreign_tables.sql.",
							  "source view %s changed since the plan: it has no column %s",
							  t->source_view, bridge_show_name(t->cols[c]));
	PQclear(res);

	/*
	 * The whole view is read in its bulk form when cql_fdw has one for it
	 * (correlated aggregate subqueries computed once per key and joined;
	 * equal to the view row for row, see src/bridge/bulk_form.c).  The rows
	 * in Cassandra were written from the view itself, so a difference
	 * between the two forms would be reported like any other.
	 */
	t->source_from = t->source_view;
	if (bulk_form)
	{
		res = bridge_exec(conn, bridge_printf("deriving the bulk form of source view %s", t->source_view),
						  bridge_printf("SELECT %s.cql_bridge_bulk_form(pg_catalog.to_regclass($1))",
										bridge_extension_schema(conn)),
						  1, params);
		if (!PQgetisnull(res, 0, 0))
			t->source_from = bridge_printf("(%s)", PQgetvalue(res, 0, 0));
		PQclear(res);
	}
}

/*
 * json_string
 *		s as a JSON string (NULL as null) appended to sb.
 */
static void
json_string(StrBuf *sb, const char *s)
{
	if (s == NULL)
	{
		sb_append(sb, "null");
		return;
	}
	sb_appendc(sb, '"');
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if (*p == '"' || *p == '\\')
			sb_appendf(sb, "\\%c", *p);
		else if (*p < 0x20)
			sb_appendf(sb, "\\u%04x", *p);
		else
			sb_appendc(sb, (char) *p);
	}
	sb_appendc(sb, '"');
}

/*
 * diff_json
 *		The report as JSON (--json FILE and DIR/diff.json): per table the
 *		counts, the rows per differing column, the examples with their
 *		keys, and the repair; whether --repair ran and when the run ended.
 */
static char *
diff_json(DiffTable *tables, int n, const BridgeOptions *opts, bool repair)
{
	StrBuf		sb;
	long long	total = 0;

	sb_init(&sb);
	sb_append(&sb, "{\"tables\": [");
	for (int i = 0; i < n; i++)
	{
		DiffTable  *t = &tables[i];

		total += t->missing + t->extra + t->different;
		sb_append(&sb, i ? ",\n  {" : "\n  {");
		sb_append(&sb, "\"table\": ");
		json_string(&sb, t->target);
		sb_appendf(&sb, ", \"source_rows\": %lld, \"target_rows\": %lld, \"missing\": %lld,"
				   " \"extra\": %lld, \"different\": %lld, \"different_columns\": {",
				   t->src_rows, t->tgt_rows, t->missing, t->extra, t->different);
		for (int c = 0, first = 1; c < t->ncols; c++)
			if (t->col_diffs && t->col_diffs[c] > 0)
			{
				if (!first)
					sb_append(&sb, ", ");
				json_string(&sb, t->cols[c]);
				sb_appendf(&sb, ": %lld", t->col_diffs[c]);
				first = 0;
			}
		sb_append(&sb, "}, \"examples\": [");
		for (int e = 0; e < t->nexamples; e++)
		{
			DiffExample *x = &t->examples[e];

			sb_append(&sb, e ? ", {\"kind\": " : "{\"kind\": ");
			json_string(&sb, kind_names[x->kind]);
			sb_append(&sb, ", \"key\": {");
			for (int k = 0; k < t->nkey; k++)
			{
				if (k)
					sb_append(&sb, ", ");
				json_string(&sb, t->cols[t->key[k]]);
				sb_append(&sb, ": ");
				json_string(&sb, x->key[k]);
			}
			sb_append(&sb, "}, \"columns\": ");
			json_string(&sb, x->columns);
			sb_append(&sb, "}");
		}
		sb_append(&sb, "]");
		if (repair)
			sb_appendf(&sb, ", \"repaired\": %lld, \"still_different\": %lld",
					   t->repaired, t->still_different);
		sb_append(&sb, "}");
	}
	sb_appendf(&sb, "\n], \"differences\": %lld, \"equal\": %s, \"repair\": %s, "
			   "\"read_consistency\": \"%s\", ", total, total == 0 ? "true" : "false",
			   repair ? "true" : "false", opts->consistency ? opts->consistency : "LOCAL_QUORUM");
	if (repair)
		sb_appendf(&sb, "\"write_consistency\": \"%s\", ", bridge_write_consistency(opts));
	sb_append(&sb, "\"finished_at\": ");
	json_string(&sb, bridge_utc_timestamp());
	sb_append(&sb, "}\n");
	return sb.data;
}

/*
 * print_report
 *		The text report on stdout: a line per table, then the examples.
 */
static void
print_report(DiffTable *tables, int n, bool repair)
{
	int			namew = 5;

	for (int i = 0; i < n; i++)
		if ((int) strlen(tables[i].target) > namew)
			namew = (int) strlen(tables[i].target);
	printf("%-*s  %12s  %12s  %8s  %8s  %9s%s\n", namew, "table", "source rows", "target rows",
		   "missing", "extra", "different", repair ? "  repaired" : "");
	for (int i = 0; i < n; i++)
	{
		DiffTable  *t = &tables[i];

		printf("%-*s  %12lld  %12lld  %8lld  %8lld  %9lld", namew, t->target, t->src_rows,
			   t->tgt_rows, t->missing, t->extra, t->different);
		if (repair)
			printf("  %8lld", t->repaired);
		putchar('\n');
		for (int e = 0; e < t->nexamples; e++)
		{
			DiffExample *x = &t->examples[e];
			char	   *k = diff_key_text(t, x->key);

			if (x->kind == DIFF_DIFFERENT)
				printf("  different %s: columns %s\n", k, x->columns);
			else if (x->kind == DIFF_MISSING)
				printf("  missing   %s: in the source view, not in Cassandra\n", k);
			else
				printf("  extra     %s: in Cassandra, not in the source view\n", k);
			free(k);
		}
		if (t->nexamples < t->missing + t->extra + t->different)
			printf("  ... %lld more\n", t->missing + t->extra + t->different - t->nexamples);
	}
}

/*
 * cmd_diff
 *		Check every table, compare each (--jobs at a time: diff_jobs.c),
 *		repair when asked, report.  Returns 0 (equal; after --repair:
 *		everything repaired and equal when compared again) or 1
 *		(differences); errors exit with 2.
 */
int
cmd_diff(const BridgeOptions *opts)
{
	char	   *path;
	BridgeBlockFile *f;
	char	   *keyspace;
	const char *ext;		/* cql_fdw's schema, quoted */
	PGconn	   *conn;
	PGconn	   *prog_conn;
	bool		bulk_form;
	bool		row_hash;
	DiffProgress *progs;
	DiffTable  *tables;
	int		   *todo;
	int			ntodo = 0;
	int			n = 0;
	long long	total = 0;
	long long	left = 0;
	bool		tty = isatty(fileno(stderr));
	bool		repaired = opts->repair && !opts->dry_run;	/* --repair writes */
	char	   *json;

	path = bridge_path(opts->dir, "003_load.sql");
	f = bridge_read_blocks(path);
	bridge_select_tables(f, opts);
	keyspace = bridge_header_get(f->header, "keyspace");
	if (keyspace == NULL || !bridge_valid_keyspace(keyspace))
		bridge_fatal_hint("Run \"cqlbridge plan\" again.", "%s: no valid \"-- keyspace:\" line in the header", path);
	tables = calloc(f->nblocks > 0 ? f->nblocks : 1, sizeof(DiffTable));
	progs = calloc(f->nblocks > 0 ? f->nblocks : 1, sizeof(DiffProgress));
	todo = calloc(f->nblocks > 0 ? f->nblocks : 1, sizeof(int));
	if (tables == NULL || progs == NULL || todo == NULL)
		bridge_fatal("out of memory");

	conn = diff_open_source(opts);
	ext = bridge_extension_schema(conn);
	bridge_set_interrupt_hint("nothing was changed; run the same \"cqlbridge diff\" again");
	{
		/*
		 * cql_fdw 0.7 builds from before bulk forms and row hashes lack
		 * them: the views are read, the rows' text hashed
		 */
		const char *params[1];
		PGresult   *res;

		params[0] = ext;
		res = bridge_exec(conn, "checking cql_fdw",
						  "SELECT pg_catalog.to_regprocedure($1 || '.cql_token(text[], \"any\")') IS NOT NULL,"
						  " pg_catalog.to_regprocedure($1 || '.cql_bridge_bulk_form(regclass)') IS NOT NULL,"
						  " pg_catalog.to_regprocedure($1 || '.cql_bridge_row_hash(\"any\")') IS NOT NULL",
						  1, params);
		if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
			bridge_fatal_hint("ALTER EXTENSION cql_fdw UPDATE (diff needs cql_fdw 0.7 or later).",
							  "function %s.cql_token(text[], \"any\") does not exist", ext);
		bulk_form = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
		row_hash = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
		PQclear(res);
	}

	for (int i = 0; i < f->nblocks; i++)
	{
		check_table(conn, f, &f->blocks[i], keyspace, opts->dir, bulk_form, &tables[n]);
		tables[n].ext = ext;
		tables[n++].row_hash = row_hash;
	}
	if (n == 0)
	{
		StrBuf		names;

		sb_init(&names);
		for (int i = 0; i < f->nblocks; i++)
			sb_appendf(&names, "%s%s", i ? ", " : "", bridge_block_require(f, &f->blocks[i], "table"));
		bridge_fatal_hint(bridge_printf("The tables of %s: %s.", opts->dir, names.len ? names.data : "none"),
						  "%s: no query table at all", path);
	}

	/* checkpoints: a session of their own (--repair's with every key) */
	prog_conn = bridge_connect(opts);
	diff_progress_setup(prog_conn);
	for (int i = 0; i < n; i++)
	{
		tables[i].col_diffs = calloc(tables[i].ncols, sizeof(long long));
		progs[i].col_diffs = calloc(tables[i].ncols, sizeof(long long));
		if (tables[i].col_diffs == NULL || progs[i].col_diffs == NULL)
			bridge_fatal("out of memory");
		progs[i].conn = prog_conn;
		progs[i].repair = opts->repair;
		if (opts->restart)
			diff_progress_forget(prog_conn, &tables[i]);
		diff_progress_resume(&progs[i], &tables[i], opts->examples);
		if (progs[i].next < DIFF_RANGES)
			todo[ntodo++] = i;	/* else compared by an interrupted run */
	}
	if (opts->jobs > 1 && ntodo > 1)
		diff_jobs_run(opts, prog_conn, tables, progs, n, todo, ntodo,
					  opts->jobs < ntodo ? opts->jobs : ntodo);
	else if (ntodo > 0)
	{
		/* one table after another, in this process */
		PGconn	   *tgt = diff_open_target(opts);

		for (int k = 0; k < ntodo; k++)
			diff_compare(conn, tgt, &progs[todo[k]], &tables[todo[k]], tty, opts);
		PQfinish(tgt);
	}
	for (int i = 0; i < n; i++)
		total += tables[i].missing + tables[i].extra + tables[i].different;
	if (opts->repair && opts->dry_run)
	{
		/* what --repair would do, nothing written */
		for (int i = 0; i < n; i++)
			if (tables[i].nrepair > 0)
				diff_repair_dry_run(&tables[i], opts->examples);
	}
	else if (opts->repair)
		for (int i = 0; i < n; i++)
			if (tables[i].nrepair > 0)
			{
				diff_repair(conn, &tables[i], keyspace);
				left += tables[i].still_different;
			}

	print_report(tables, n, repaired);
	if (total == 0)
		printf("diff: %d table%s, no differences\n", n, n == 1 ? "" : "s");
	else if (repaired)
		printf("diff: %lld difference%s found, %lld still differ after --repair (written at %s)\n",
			   total, total == 1 ? "" : "s", left, bridge_write_consistency(opts));
	else
		printf("diff: %lld difference%s\n", total, total == 1 ? "" : "s");
	fflush(stdout);
	json = diff_json(tables, n, opts, repaired);
	if (opts->json)
		bridge_write_output(opts->json, json);
	/* the plan directory keeps the result, and report.html shows it */
	plan_record_check(opts->dir, PLAN_DIFF_JSON, json);
	/* the result is out: the next diff starts from the beginning */
	for (int i = 0; i < n; i++)
		diff_progress_forget(prog_conn, &tables[i]);
	PQfinish(prog_conn);
	PQfinish(conn);
	if (repaired)
		return left > 0 ? BRIDGE_EXIT_DIFFERENCES : 0;
	return total > 0 ? BRIDGE_EXIT_DIFFERENCES : 0;
}

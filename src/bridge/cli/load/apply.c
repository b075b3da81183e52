/*-------------------------------------------------------------------------
 *
 * apply.c
 *	  cqlbridge apply DIR: create the Cassandra schema (001), the foreign
 *	  tables and source views (002), then load every target table (003).
 *
 * A table's 003 statement is the SELECT of its rows.  By default a table is
 * streamed in one pass of those rows, with its progress committed batch by
 * batch (stream.c).  With --chunks N, for tables whose writes wait
 * for COMMIT, and for the INSERT statements of older plans, it is loaded in
 * hash chunks instead (here): chunk k holds the partitions whose key hashes
 * to k, and runs in its own transaction together with the row that records
 * it in cqlbridge.apply_progress, so after an interruption the recorded
 * chunks are exactly the committed ones.  Each chunk reads the whole
 * source, which is why streaming is the default.
 *
 * A batch or chunk that was running when the load stopped may have reached
 * Cassandra partly (Cassandra has no rollback); it is loaded again on
 * resume, which is harmless because an INSERT into Cassandra is an upsert
 * of the same values.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/load/apply.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "load/apply.h"
#include "sync/sync.h"

/*
 * Default chunking (--chunks without a count is not a thing: these apply
 * where streaming is not possible).  A chunk selects its partitions by a
 * hash of the partition key, which no index serves: every chunk evaluates
 * the whole source view.  So chunks must be few: measured at 10.4 M rows (bench/
 * README.md), 207 chunks spent ~80% of the load re-reading the source,
 * 8 chunks made Cassandra the limit (3.8x faster).  16 keeps a resumed
 * load's lost work small while the re-reads stay cheap.
 */
#define ROWS_PER_CHUNK	50000
#define MAX_AUTO_CHUNKS 16

#define PROGRESS_DDL \
	"CREATE SCHEMA IF NOT EXISTS cqlbridge;\n" \
	"CREATE TABLE IF NOT EXISTS cqlbridge.apply_progress (\n" \
	"    target text NOT NULL,\n" \
	"    chunk int NOT NULL,\n" \
	"    chunks int NOT NULL,\n" \
	"    rows bigint NOT NULL,\n" \
	"    seconds float8 NOT NULL,\n" \
	"    done_at timestamptz NOT NULL DEFAULT now(),\n" \
	"    PRIMARY KEY (target, chunk));\n" \
	"ALTER TABLE cqlbridge.apply_progress\n" \
	"    ADD COLUMN IF NOT EXISTS resume_key text[],\n" \
	"    ADD COLUMN IF NOT EXISTS finished boolean NOT NULL DEFAULT true"

/* ------------------------------------------------------------------------
 * 001_schema.cql
 * ------------------------------------------------------------------------
 */

/*
 * line_is_comment
 *		A "--" comment line of 001_schema.cql (after leading blanks).
 */
static bool
line_is_comment(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s[0] == '-' && s[1] == '-';
}

/*
 * apply_schema
 *		Run every statement of 001_schema.cql through SELECT
 *		cql_execute('<server>', $1), the server named in its header;
 *		statements end with ';' at end of line.  Returns the number of
 *		statements run.
 */
static int
apply_schema(PGconn *conn, const BridgeOptions *opts, const char *path)
{
	char	   *text = bridge_read_file(path);
	StrBuf		header;
	StrBuf		stmt;
	char	   *server = NULL;
	int			lineno = 0;
	int			stmt_line = 0;
	int			count = 0;
	bool		in_header = true;

	sb_init(&header);
	sb_init(&stmt);
	for (char *p = text, *next; p && *p; p = next)
	{
		char	   *nl = strchr(p, '\n');
		size_t		len;
		char	   *line;

		lineno++;
		next = nl ? nl + 1 : NULL;
		len = nl ? (size_t) (nl - p) : strlen(p);
		while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		line = bridge_malloc(len + 1);
		memcpy(line, p, len);
		line[len] = '\0';

		if (stmt.len == 0 && (bridge_is_blank(line) || line_is_comment(line)))
		{
			if (in_header && line_is_comment(line))
			{
				sb_append(&header, line);
				sb_append(&header, "\n");
			}
			free(line);
			continue;
		}
		if (in_header)
		{
			in_header = false;
			server = bridge_header_get(header.data, "server");
			if (server == NULL || server[0] == '\0')
				bridge_fatal_hint("The header of 001_schema.cql names the cql_fdw server in a line \"-- server: NAME\"; run \"cqlbridge plan\" again.",
								  "%s: no \"-- server:\" line before the first statement (line %d)",
								  path, lineno);
		}
		if (stmt.len == 0)
			stmt_line = lineno;
		else
			sb_append(&stmt, "\n");
		if (len > 0 && line[len - 1] == ';')
		{
			const char *params[2];
			PGresult   *res;
			char	   *what;

			line[len - 1] = '\0';
			sb_append(&stmt, line);
			params[0] = server;
			params[1] = stmt.data;
			if (opts->dry_run)
			{
				/* the statement's first line says what it creates */
				const char *nl2 = strchr(stmt.data, '\n');

				printf("  %.*s%s\n", nl2 ? (int) (nl2 - stmt.data) : (int) stmt.len, stmt.data,
					   nl2 ? " ..." : ";");
				count++;
				stmt.len = 0;
				stmt.data[0] = '\0';
				free(line);
				continue;
			}
			what = bridge_printf("%s:%d (CQL through server \"%s\")", path, stmt_line, server);
			res = bridge_exec(conn, what,
							  bridge_printf("SELECT %s.cql_execute($1, $2)", bridge_extension_schema(conn)),
							  2, params);
			PQclear(res);
			free(what);
			count++;
			stmt.len = 0;
			stmt.data[0] = '\0';
			bridge_check_interrupt(apply_resume_hint);
		}
		else
			sb_append(&stmt, line);
		free(line);
	}
	if (stmt.len > 0)
		bridge_fatal("%s:%d: statement does not end with \";\"", path, stmt_line);
	if (opts->dry_run)
		printf("001_schema.cql: would run these %d CQL statements on server \"%s\" (IF NOT EXISTS: existing objects are not altered)\n",
			   count, server ? server : "?");
	else if (!opts->quiet)
		fprintf(stderr, "001_schema.cql: %d CQL statements run on server \"%s\"\n",
				count, server ? server : "?");
	sb_free(&header);
	sb_free(&stmt);
	free(text);
	return count;
}

/* ------------------------------------------------------------------------
 * 003_load.sql
 * ------------------------------------------------------------------------
 */

/*
 * choose_chunks
 *		The number of hash chunks of a chunked load: --chunks N, else one
 *		per ROWS_PER_CHUNK planned rows, between 1 and MAX_AUTO_CHUNKS.
 */
static int
choose_chunks(const BridgeOptions *opts, long long rows)
{
	long long	n;

	if (opts->chunks > 0)
		return opts->chunks;
	n = rows / ROWS_PER_CHUNK;
	if (n < 1)
		n = 1;
	if (n > MAX_AUTO_CHUNKS)
		n = MAX_AUTO_CHUNKS;
	return (int) n;
}

/*
 * exec_simple
 *		Run a statement without parameters whose result is not needed; fatal
 *		on error.
 */
static void
exec_simple(PGconn *conn, const char *what, const char *sql)
{
	PQclear(bridge_exec(conn, what, sql, 0, NULL));
}

/*
 * chunk_statement
 *		The INSERT that loads chunk $1 of $2 of t: the block's own INSERT
 *		(older plans), or one over its SELECT.  The hash is the one older
 *		plans wrote, so their recorded chunks stay valid.
 */
static char *
chunk_statement(const ApplyTable *t)
{
	StrBuf		sb;
	char	   *hash;

	if (t->legacy_insert)
		return bridge_strdup(t->sql);
	hash = apply_column_list(t->pkey, t->npkey, "(", ")::text", " || '|' || ");
	sb_init(&sb);
	sb_appendf(&sb, "INSERT INTO %s (%s)\nSELECT * FROM (%s) q\nWHERE (hashtext(%s) & 2147483647) %% $2 = $1",
			   t->foreign_table, t->columns, t->sql, hash);
	free(hash);
	/* rows of a partition together: the FDW sends them as one batch */
	if (t->clustered)
	{
		char	   *order = apply_column_list(t->pkey, t->npkey, "", "", ", ");

		sb_appendf(&sb, "\nORDER BY %s", order);
		free(order);
	}
	return sb.data;
}

/* Load one target table in chunks; returns the rows inserted by this run. */
static long long
load_chunked(PGconn *conn, const BridgeOptions *opts, const ApplyTable *t, bool tty,
			 long long *rows_total)
{
	int			chunks = choose_chunks(opts, t->expected);
	char	   *stmt_name = bridge_printf("cqlbridge_load_%d", t->index);
	char	   *stmt = chunk_statement(t);
	char	   *what;
	char		chunks_txt[16];
	const char *params[6];
	bool	   *done;
	int			ndone = 0;
	int			skipped;
	long long	rows_before = 0;
	long long	rows_now = 0;
	double		start = bridge_now();
	double		last_shown = 0;
	PGresult   *res;
	Oid			types[2] = {23, 23};	/* int4, int4 */

	snprintf(chunks_txt, sizeof(chunks_txt), "%d", chunks);
	params[0] = t->target;
	params[1] = chunks_txt;

	/* progress recorded for another chunk count (or streamed) cannot be reused */
	res = bridge_exec(conn, "forgetting progress of another chunk count",
					  "DELETE FROM cqlbridge.apply_progress WHERE target = $1 AND chunks <> $2::int",
					  2, params);
	PQclear(res);

	done = calloc(chunks, sizeof(bool));
	if (done == NULL)
		bridge_fatal("out of memory");
	res = bridge_exec(conn, "reading recorded progress",
					  "SELECT chunk, rows FROM cqlbridge.apply_progress WHERE target = $1 AND chunks = $2::int",
					  2, params);
	for (int i = 0; i < PQntuples(res); i++)
	{
		int			k = atoi(PQgetvalue(res, i, 0));

		if (k >= 0 && k < chunks && !done[k])
		{
			done[k] = true;
			ndone++;
			rows_before += atoll(PQgetvalue(res, i, 1));
		}
	}
	PQclear(res);
	skipped = ndone;

	what = bridge_printf("%s:%d: preparing the load of %s", t->f->path, t->b->line, t->target);
	res = PQprepare(conn, stmt_name, stmt, 2, types);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

		bridge_fatal_hint(t->legacy_insert ?
						  "The statement must take the chunk number ($1) and the chunk count ($2) as integers." :
						  "The block's statement must be a SELECT of the rows, with the columns of \"-- columns:\" and \"-- partition_key:\".",
						  "%s failed: %s", what, msg ? msg : PQerrorMessage(conn));
	}
	PQclear(res);
	free(what);

	if (tty && !opts->quiet)
		apply_show_progress(t, rows_before, 0, 0, "chunk", ndone, chunks);

	for (int k = 0; k < chunks; k++)
	{
		char		k_txt[16];
		char		rows_txt[32];
		char		secs_txt[32];
		char		step[64];
		double		t0;
		long long	n;

		if (done[k])
			continue;
		snprintf(k_txt, sizeof(k_txt), "%d", k);
		exec_simple(conn, "BEGIN", "BEGIN");
		t0 = bridge_now();
		params[0] = k_txt;
		params[1] = chunks_txt;
		res = PQexecPrepared(conn, stmt_name, 2, params, NULL, NULL, 0);
		snprintf(step, sizeof(step), "chunk %d of %d", k, chunks);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			apply_load_failed(t, conn, res, step, tty, opts);
		n = atoll(PQcmdTuples(res));
		PQclear(res);
		/* a signal between statements: stop before recording the chunk */
		bridge_check_interrupt(apply_resume_hint);

		snprintf(rows_txt, sizeof(rows_txt), "%lld", n);
		snprintf(secs_txt, sizeof(secs_txt), "%.6f", bridge_now() - t0);
		params[0] = t->target;
		params[1] = k_txt;
		params[2] = chunks_txt;
		params[3] = rows_txt;
		params[4] = secs_txt;
		res = bridge_exec(conn, "recording progress",
						  "INSERT INTO cqlbridge.apply_progress (target, chunk, chunks, rows, seconds, done_at) "
						  "VALUES ($1, $2::int, $3::int, $4::bigint, $5::float8, clock_timestamp())",
						  5, params);
		PQclear(res);

		/* COMMIT also sends the writes of a write_mode 'on_commit' table */
		res = PQexec(conn, "COMMIT");
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			apply_load_failed(t, conn, res, "COMMIT", tty, opts);
		PQclear(res);
		rows_now += n;
		ndone++;
		/* at most ten updates a second: the terminal is not the bottleneck */
		if (tty && !opts->quiet && (bridge_now() - last_shown >= 0.1 || ndone == chunks))
		{
			apply_show_progress(t, rows_before + rows_now, rows_now, bridge_now() - start,
								"chunk", ndone, chunks);
			last_shown = bridge_now();
		}
		bridge_check_interrupt(apply_resume_hint);
	}

	what = bridge_printf("DEALLOCATE %s", stmt_name);
	PQclear(PQexec(conn, what));
	free(what);

	if (!opts->quiet)
	{
		double		secs = bridge_now() - start;

		if (tty)
			fprintf(stderr, "\r\033[K");
		fprintf(stderr, "%s: %lld rows in %.1f s (%.0f rows/s), %d chunk%s",
				t->target, rows_before + rows_now, secs,
				secs > 0 ? rows_now / secs : 0.0, chunks, chunks == 1 ? "" : "s");
		if (skipped > 0)
			fprintf(stderr, " (%d already loaded: %lld rows)", skipped, rows_before);
		fputc('\n', stderr);
	}
	*rows_total += rows_before + rows_now;
	free(done);
	free(stmt);
	free(stmt_name);
	return rows_now;
}

/* whether the statement is an INSERT (003 of older plans) */
static bool
is_insert(const char *sql)
{
	while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r')
		sql++;
	return strncasecmp(sql, "INSERT", 6) == 0 && !isalnum((unsigned char) sql[6]) && sql[6] != '_';
}

/* The ApplyTable of a 003 block; a block missing what apply needs stops it. */
static ApplyTable
read_table(const BridgeBlockFile *f, const BridgeBlock *b, int index)
{
	ApplyTable	t;
	const char *rows_meta = bridge_block_get(b, "rows");
	const char *pk = bridge_block_require(f, b, "partition_key");
	const char *key = bridge_block_require(f, b, "key");

	memset(&t, 0, sizeof(t));
	t.f = f;
	t.b = b;
	t.index = index;
	t.target = bridge_block_require(f, b, "table");
	t.foreign_table = bridge_block_require(f, b, "foreign_table");
	t.columns = bridge_block_require(f, b, "columns");
	t.expected = rows_meta ? atoll(rows_meta) : 0;
	t.sql = bridge_block_sql(b, "");
	if (t.sql == NULL)
		bridge_fatal("%s:%d: block of table %s has no statement", f->path, b->line, t.target);
	t.legacy_insert = is_insert(t.sql);
	t.pkey = bridge_split_idents(pk, &t.npkey);
	t.key = bridge_split_idents(key, &t.nkey);
	if (t.pkey == NULL || t.npkey == 0 || t.key == NULL || t.nkey < t.npkey)
		bridge_fatal("%s:%d: table %s: \"-- partition_key:\" and \"-- key:\" must be lists of column names",
					 f->path, b->line, t.target);
	t.clustered = t.nkey > t.npkey;
	return t;
}

/*
 * apply_dry_run
 *		--dry-run: what apply would do with this directory, on stdout, with
 *		reads only: the CQL statements of 001, the foreign tables of 002,
 *		per table of 003 the rows, how it would load and what progress is
 *		recorded, and whether sync would be installed again.
 */
static void
apply_dry_run(PGconn *conn, const BridgeOptions *opts, const char *schema_path,
			  const BridgeBlockFile *load)
{
	PGresult   *res;
	bool		have_progress;

	printf("apply --dry-run %s: nothing is changed\n", opts->dir);
	apply_schema(conn, opts, schema_path);
	printf("002_foreign_tables.sql: would drop and create the foreign tables and source views, in one transaction\n");
	res = bridge_exec(conn, "looking for recorded progress",
					  "SELECT pg_catalog.to_regclass('cqlbridge.apply_progress') IS NOT NULL", 0, NULL);
	have_progress = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	printf("003_load.sql: would load %d table%s%s\n", load->nblocks, load->nblocks == 1 ? "" : "s",
		   opts->restart ? " (--restart: recorded progress forgotten first)" : "");
	for (int i = 0; i < load->nblocks; i++)
	{
		ApplyTable	t = read_table(load, &load->blocks[i], i);
		const char *why = NULL;
		const char *params[1] = {t.foreign_table};
		bool		exists;
		bool		stream;
		char	   *state = bridge_strdup("nothing recorded");

		/* before the first apply the foreign table (and its options) is 002's */
		res = bridge_exec(conn, "looking up a foreign table",
						  "SELECT pg_catalog.to_regclass($1) IS NOT NULL", 1, params);
		exists = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
		if (exists)
			stream = opts->chunks == 0 && apply_can_stream(conn, &t, &why);
		else
			stream = opts->chunks == 0 && !t.legacy_insert;

		if (have_progress && !opts->restart)
		{
			const char *params[1] = {t.target};

			res = bridge_exec(conn, "reading recorded progress",
							  "SELECT count(*), coalesce(sum(rows), 0), bool_or(finished) "
							  "FROM cqlbridge.apply_progress WHERE target = $1", 1, params);
			if (strcmp(PQgetvalue(res, 0, 0), "0") != 0)
				state = bridge_printf("recorded: %s rows%s", PQgetvalue(res, 0, 1),
									  strcmp(PQgetvalue(res, 0, 2), "t") == 0 ? ", finished (skipped)" : " (resumes)");
			PQclear(res);
		}
		printf("  %s: %lld rows at plan time, %s%s%s; %s\n", t.target, t.expected,
			   stream ? "streamed" : "in chunks", why ? ": " : "", why ? why : "", state);
	}
	printf("sync: %s\n", bridge_sync_trigger_count(conn, opts) > 0
		   ? "triggers are installed: 005_sync.sql would be installed again"
		   : "not installed (apply would not install it)");
}

/*
 * cmd_apply
 *		"cqlbridge apply DIR": run 001 (Cassandra schema), 002 (foreign
 *		tables and views), then load every table of 003 (streamed, or in
 *		chunks), skipping what cqlbridge.apply_progress records as done, and
 *		re-install 005 when sync triggers exist.  Returns 0; failures exit.
 */
int
cmd_apply(const BridgeOptions *opts)
{
	PGconn	   *conn = bridge_connect(opts);
	PGconn	   *progress = NULL;
	char	   *schema_path = bridge_path(opts->dir, "001_schema.cql");
	char	   *ft_path = bridge_path(opts->dir, "002_foreign_tables.sql");
	char	   *load_path = bridge_path(opts->dir, "003_load.sql");
	BridgeBlockFile *load;
	char	   *ft_sql;
	bool		tty = isatty(fileno(stderr));
	double		start = bridge_now();
	long long	rows_new = 0;
	long long	rows_total = 0;
	StrBuf		json;

	/* read everything first: a bad file fails before any change */
	load = bridge_read_blocks(load_path);
	ft_sql = bridge_read_file(ft_path);
	if (load->nblocks == 0)
		bridge_fatal("%s: no table blocks", load_path);
	bridge_select_tables(load, opts);
	if (opts->dry_run)
	{
		apply_dry_run(conn, opts, schema_path, load);
		PQfinish(conn);
		return BRIDGE_EXIT_SUCCESS;
	}

	bridge_install_cancel(conn);
	bridge_set_interrupt_hint(apply_resume_hint);

	apply_schema(conn, opts, schema_path);

	/* 002 in one transaction (a multi-statement string is one) */
	{
		char	   *script = bridge_printf("BEGIN;\n%s\n;COMMIT;", ft_sql);

		bridge_exec_script(conn, ft_path, script);
		free(script);
		bridge_check_interrupt(apply_resume_hint);
		if (!opts->quiet)
			fprintf(stderr, "002_foreign_tables.sql: done\n");
	}

	if (opts->no_load)
	{
		if (!opts->quiet)
			fprintf(stderr, "apply: --no-load: nothing loaded\n");
		PQfinish(conn);
		return 0;
	}

	bridge_exec_script(conn, "creating cqlbridge.apply_progress", PROGRESS_DDL);
	if (opts->restart)
	{
		for (int i = 0; i < load->nblocks; i++)
		{
			const char *params[1];

			params[0] = bridge_block_require(load, &load->blocks[i], "table");
			PQclear(bridge_exec(conn, "forgetting recorded progress (--restart)",
								"DELETE FROM cqlbridge.apply_progress WHERE target = $1",
								1, params));
		}
	}

	sb_init(&json);
	for (int i = 0; i < load->nblocks; i++)
	{
		ApplyTable	t = read_table(load, &load->blocks[i], i);
		const char *why = NULL;
		long long	new_before = rows_new;
		long long	total_before = rows_total;
		double		t0 = bridge_now();
		bool		streamed = false;

		if (opts->chunks == 0 && apply_can_stream(conn, &t, &why))
		{
			/* progress is committed beside the stream's open transaction */
			if (progress == NULL)
			{
				progress = bridge_connect(opts);
				bridge_install_cancel(progress);
			}
			rows_new += apply_stream_table(conn, progress, opts, &t, tty, &rows_total);
			streamed = true;
		}
		else
		{
			if (why && !opts->quiet)
				fprintf(stderr, "%s: loaded in chunks: %s\n", t.target, why);
			rows_new += load_chunked(conn, opts, &t, tty, &rows_total);
		}
		sb_append(&json, json.len ? ",\n    {\"table\": " : "\n    {\"table\": ");
		bridge_json_string(&json, t.target);
		sb_appendf(&json, ", \"rows\": %lld, \"rows_loaded\": %lld, \"seconds\": %.3f, \"mode\": \"%s\"}",
				   rows_total - total_before, rows_new - new_before, bridge_now() - t0,
				   streamed ? "streamed" : "chunks");
	}
	if (progress)
		PQfinish(progress);

	if (bridge_sync_refresh(conn, opts) && !opts->quiet)
		fprintf(stderr, "sync triggers were installed: 005_sync.sql installed again (write_mode 'on_commit')\n");

	if (!opts->quiet)
	{
		double		secs = bridge_now() - start;

		fprintf(stderr, "apply: %d tables, %lld rows (%lld loaded by this run) in %.1f s, written at %s\n",
				load->nblocks, rows_total, rows_new, secs, bridge_write_consistency(opts));
	}
	if (opts->json)
		bridge_write_output(opts->json,
						  bridge_printf("{\n  \"command\": \"apply\",\n  \"tables\": [%s\n  ],\n"
										"  \"rows\": %lld,\n  \"rows_loaded\": %lld,\n  \"seconds\": %.3f,\n"
										"  \"write_consistency\": \"%s\"\n}\n",
										json.data ? json.data : "", rows_total, rows_new, bridge_now() - start,
										bridge_write_consistency(opts)));
	PQfinish(conn);
	return 0;
}

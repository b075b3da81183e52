/*-------------------------------------------------------------------------
 *
 * sync.c
 *	  cqlbridge sync DIR [--uninstall]: install (or remove) the triggers of
 *	  005_sync.sql that keep the Cassandra tables up to date.
 *
 * The install runs in one transaction and is re-runnable (CREATE OR
 * REPLACE FUNCTION, DROP TRIGGER IF EXISTS), so after a new plan or apply
 * running sync again brings the triggers and the foreign tables' write
 * mode up to date.  005 is generated from 003 when it is missing.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/sync/sync.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync/sync.h"

/*
 * count_triggers
 *		Relations with sync triggers of this plan: triggers calling a
 *		function of the plan's schema.  Other plans' triggers do not count.
 */
static int
count_triggers(PGconn *conn, const char *schema)
{
	const char *params[1] = {schema};
	PGresult   *res = bridge_exec(conn, "counting installed triggers",
								  "SELECT count(DISTINCT t.tgrelid) FROM pg_catalog.pg_trigger t "
								  "JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid "
								  "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
								  "WHERE n.nspname = $1 AND p.proname LIKE 'sync\\_%'",
								  1, params);
	int			n = atoi(PQgetvalue(res, 0, 0));

	PQclear(res);
	return n;
}

/* The triggers write into the foreign tables: they must exist. */
static void
check_foreign_tables(PGconn *conn, const BridgeOptions *opts)
{
	char	   *path = bridge_path(opts->dir, "003_load.sql");
	BridgeBlockFile *f = bridge_read_blocks(path);

	for (int i = 0; i < f->nblocks; i++)
	{
		const char *params[1];
		PGresult   *res;

		params[0] = bridge_block_require(f, &f->blocks[i], "foreign_table");
		res = bridge_exec(conn, "looking up a foreign table",
						  "SELECT to_regclass($1) IS NOT NULL", 1, params);
		if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
			bridge_fatal_hint("Run \"cqlbridge apply DIR\" first.",
							  "%s:%d: foreign table %s does not exist",
							  path, f->blocks[i].line, params[0]);
		PQclear(res);
	}
	free(path);
}

/*
 * After apply re-created the foreign tables (002 drops and creates them),
 * their write_mode is back to immediate while the triggers are still on
 * the source relations: install 005 again so that ROLLBACK keeps sending
 * nothing.  Only when this plan's triggers are installed: another plan's
 * sync in the same database is none of this apply's business.  Returns
 * true when it did.
 */
bool
bridge_sync_refresh(PGconn *conn, const BridgeOptions *opts)
{
	char	   *path;
	char	   *sql;
	char	   *script;

	if (count_triggers(conn, emit_sync_plan_schema(opts->dir)) == 0)
		return false;
	path = bridge_path(opts->dir, "005_sync.sql");
	if (access(path, F_OK) != 0)
		emit_sync(opts->dir);
	sql = bridge_read_file(path);
	/* 005 reads the level of its writes from cqlbridge.write_consistency */
	script = bridge_printf("BEGIN;\nSELECT pg_catalog.set_config('cqlbridge.write_consistency', %s, true);\n%s\n;COMMIT;",
						   bridge_quote_literal(bridge_write_consistency(opts)), sql);
	bridge_exec_script(conn, path, script);
	free(script);
	free(sql);
	free(path);
	return true;
}

/*
 * bridge_sync_trigger_count
 *		The relations that have sync triggers of this directory's plan.
 */
int
bridge_sync_trigger_count(PGconn *conn, const BridgeOptions *opts)
{
	return count_triggers(conn, emit_sync_plan_schema(opts->dir));
}

/*
 * sync_dry_run
 *		--dry-run: what sync (or --uninstall) would do, with reads only: the
 *		relations that would get (or lose) triggers, from 003's
 *		"-- affected:" lines, and what is installed now.
 */
static void
sync_dry_run(PGconn *conn, const BridgeOptions *opts)
{
	char	   *path = bridge_path(opts->dir, "003_load.sql");
	BridgeBlockFile *f = bridge_read_blocks(path);
	int			now = count_triggers(conn, emit_sync_plan_schema(opts->dir));
	StrBuf		rels;
	int			n = 0;

	sb_init(&rels);
	for (int i = 0; i < f->nblocks; i++)
	{
		const BridgeBlock *b = &f->blocks[i];

		for (int k = 0; k < b->nmeta; k++)
		{
			char	   *rel;
			char	   *sp;

			if (strcmp(b->keys[k], "affected") != 0)
				continue;
			rel = bridge_strdup(b->values[k]);
			sp = strstr(rel, " (");
			if (sp)
				*sp = '\0';
			if (!strstr(rels.data ? rels.data : "", bridge_printf("\n  %s\n", rel)))
			{
				sb_appendf(&rels, "%s  %s\n", rels.len ? "" : "\n", rel);
				n++;
			}
			free(rel);
		}
	}
	if (opts->uninstall)
		printf("sync --uninstall --dry-run %s: nothing is changed\n"
			   "would remove the sync triggers of schema %s (installed now on %d relations) and write_mode 'on_commit' of the %d foreign tables\n",
			   opts->dir, emit_sync_plan_schema(opts->dir), now, f->nblocks);
	else
		printf("sync --dry-run %s: nothing is changed\n"
			   "would install 005_sync.sql in one transaction: triggers on %d relations (installed now on %d), write_mode 'on_commit' on %d foreign tables:%s",
			   opts->dir, n, now, f->nblocks, rels.data ? rels.data : "\n");
	free(path);
}

/*
 * cmd_sync
 *		"cqlbridge sync DIR": install 005_sync.sql (written first from 003
 *		if missing) in one transaction, or with --uninstall remove what it
 *		installed; prints how many relations have triggers.  Returns 0;
 *		failures exit.
 */
int
cmd_sync(const BridgeOptions *opts)
{
	char	   *path = bridge_path(opts->dir, "005_sync.sql");
	PGconn	   *conn;
	char	   *sql;
	char	   *script;

	if (opts->dry_run)
	{
		/* reads only: not even 005 is written */
		conn = bridge_connect(opts);
		if (!opts->uninstall)
			check_foreign_tables(conn, opts);
		sync_dry_run(conn, opts);
		PQfinish(conn);
		return BRIDGE_EXIT_SUCCESS;
	}
	if (opts->uninstall)
		sql = emit_sync_uninstall_sql(opts->dir);
	else
	{
		if (access(path, F_OK) != 0)
		{
			emit_sync(opts->dir);
			if (!opts->quiet)
				fprintf(stderr, "sync: wrote %s from 003_load.sql\n", path);
		}
		sql = bridge_read_file(path);
	}

	conn = bridge_connect(opts);
	bridge_install_cancel(conn);
	if (!opts->uninstall)
		check_foreign_tables(conn, opts);
	script = bridge_printf("BEGIN;\n%s\n;COMMIT;", sql);
	bridge_exec_script(conn, opts->uninstall ? "removing the sync triggers" : path,
					   script);
	if (!opts->quiet)
	{
		int			n = count_triggers(conn, emit_sync_plan_schema(opts->dir));

		if (opts->uninstall)
			fprintf(stderr, "sync: triggers removed (%d relations still have some)\n", n);
		else
			fprintf(stderr, "sync: triggers installed on %d relations; foreign tables write at COMMIT, at %s\n",
					n, bridge_write_consistency(opts));
	}
	free(script);
	free(sql);
	PQfinish(conn);
	return 0;
}

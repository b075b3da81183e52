/*-------------------------------------------------------------------------
 *
 * stream_drop.c
 *	  "cqlbridge stream DIR --drop --dry-run": what --drop would remove (the
 *	  replication slot, the publication, the lineage and state tables of
 *	  the stream, capture/setup.c's cap_drop), read from the catalog and
 *	  printed; nothing is changed, nothing waits for the slot.
 *
 * The objects are those cap_drop names: a change there must be made here
 * too.  Only the ones that exist are listed.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/load/stream_drop.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "load/apply.h"

/*
 * print_if_exists
 *		"  what name" when the relation named (SQL, qualified) exists.
 */
static void
print_if_exists(PGconn *conn, const char *what, const char *name)
{
	const char *params[1] = {name};
	char	   *v = cap_value(conn, "looking up the stream's tables",
							  "SELECT pg_catalog.to_regclass($1)::text", 1, params);

	if (v != NULL)
		printf("  %s %s\n", what, v);
	free(v);
}

/*
 * cmd_stream_drop_dry_run
 *		The objects "stream DIR --drop" would remove, and whether the slot
 *		is in use (then --drop would refuse).  Exit status 0.
 */
int
cmd_stream_drop_dry_run(const BridgeOptions *opts)
{
	CapPlan    *p = cap_read_plan(opts->dir);
	PGconn	   *conn = bridge_connect(opts);
	const char *params[1];
	char	   *slot;
	char	   *pub;

	/* the lineage tables as the stream named them (tables.c) */
	if (cap_tables_exist(conn, p))
	{
		cap_tables_define(p);
		cap_tables_compare(conn, p);
	}
	params[0] = p->slot;
	slot = cap_value(conn, "looking up the replication slot",
					 "SELECT CASE WHEN s.active_pid IS NOT NULL "
					 "THEN 'in use by pid ' || s.active_pid || ': --drop refuses until the stream stops' "
					 "ELSE 'retaining ' || pg_catalog.pg_size_pretty(pg_catalog.pg_wal_lsn_diff("
					 "pg_catalog.pg_current_wal_lsn(), s.restart_lsn)) || ' of WAL' END "
					 "FROM pg_catalog.pg_replication_slots s WHERE s.slot_name = $1",
					 1, params);
	params[0] = p->publication;
	pub = cap_value(conn, "looking up the publication",
					"SELECT pubname::text FROM pg_catalog.pg_publication WHERE pubname = $1",
					1, params);

	printf("stream --drop --dry-run: nothing is changed; --drop would remove:\n");
	if (slot)
		printf("  replication slot %s (%s)\n", p->slot, slot);
	else
		printf("  (no replication slot %s)\n", p->slot);
	if (pub)
		printf("  publication %s\n", p->publication);
	else
		printf("  (no publication %s)\n", p->publication);
	for (int i = 0; i < p->ntables; i++)
		print_if_exists(conn, "table", p->tables[i].lineage);
	for (int i = 0; i < p->nremoved; i++)
		print_if_exists(conn, "table", p->removed[i].lineage);
	for (int i = 0; i < p->nsources; i++)
		print_if_exists(conn, "view", bridge_printf("%s.stream_src_%d", p->schema, i + 1));
	print_if_exists(conn, "table", bridge_printf("%s.stream_state", p->schema));
	print_if_exists(conn, "table", bridge_printf("%s.stream_relations", p->schema));
	print_if_exists(conn, "table", bridge_printf("%s.stream_partitions", p->schema));
	print_if_exists(conn, "table", bridge_printf("%s.stream_tables", p->schema));
	fflush(stdout);
	free(slot);
	free(pub);
	PQfinish(conn);
	return 0;
}

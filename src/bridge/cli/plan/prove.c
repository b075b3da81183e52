/*-------------------------------------------------------------------------
 *
 * prove.c
 *	  "cqlbridge plan" proves its own statements before it writes the plan
 *	  directory: the foreign tables and source views of 002 are created in
 *	  a transaction that is rolled back, and every statement apply, verify,
 *	  diff and the stream will run on them is prepared there: the load of
 *	  each table from its source view (003), and per workload query the
 *	  sample, source and target statements (004), with the parameter types
 *	  the workload declares.  A plan whose statements cannot run (an
 *	  operator that does not exist for a cast parameter, a type the foreign
 *	  table does not have) is refused by plan, with the statement and the
 *	  reason, instead of after a whole load.
 *
 * PREPARE analyses a statement without planning it, so the foreign tables'
 * Cassandra tables need not exist yet; nothing reaches Cassandra.  002
 * drops and creates objects of the plan's schemas: in a transaction that is
 * rolled back, with a lock timeout, so a stream running on the keyspace (a
 * plan for --replan) waits at most that long, and a plan that cannot get
 * the locks in time says so and leaves the proof to verify.  A 002 that
 * does not run in the database as it is (a schema of another role: apply
 * refuses it with its own message) is said as a warning, not refused.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/prove.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/*
 * failed
 *		The error of res as "message (SQLSTATE x)"; *state its SQLSTATE.
 */
static char *
failed(PGconn *conn, PGresult *res, const char **state)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	*state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (*state == NULL)
		*state = "";
	return bridge_printf("%s%s%s%s", msg ? msg : PQerrorMessage(conn),
						 **state ? " (SQLSTATE " : "", *state, **state ? ")" : "");
}

/*
 * param_types
 *		The OIDs of the types of a 004 block's "-- params:" line, resolved
 *		by the server; NULL with *n = 0 when it has none.
 */
static Oid *
param_types(PGconn *conn, const BridgeBlock *b, int *n)
{
	const char *meta = bridge_block_get(b, "params");
	char	  **list;
	Oid		   *types;

	*n = 0;
	if (meta == NULL || strcmp(meta, "none") == 0)
		return NULL;
	list = bridge_split_list(meta, n);
	types = bridge_malloc(sizeof(Oid) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		const char *sp = strpbrk(list[i], " \t");
		const char *tp[1];
		PGresult   *res;

		types[i] = 0;
		if (sp == NULL)
			continue;
		while (*sp == ' ' || *sp == '\t')
			sp++;
		tp[0] = sp;
		res = PQexecParams(conn, "SELECT to_regtype($1)::oid", 1, NULL, tp, NULL, NULL, 0);
		if (PQresultStatus(res) == PGRES_TUPLES_OK && !PQgetisnull(res, 0, 0))
			types[i] = (Oid) strtoul(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
	}
	return types;
}

/*
 * prove_one
 *		PREPARE sql (unnamed; gone with the transaction's end).  NULL when
 *		it prepares or a lock timeout stopped it (*locked set: a stream
 *		holds the objects, the proof is left to verify); else what does not
 *		prepare, and why.
 */
static char *
prove_one(PGconn *conn, const char *what, const char *sql, int n, const Oid *types,
		  bool *locked)
{
	PGresult   *res = PQprepare(conn, "", sql, n, types);
	char	   *why = NULL;

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		const char *state;
		char	   *err = failed(conn, res, &state);

		if (strcmp(state, "55P03") == 0)
			*locked = true;
		else
			why = bridge_printf("the plan's %s does not prepare: %s", what, err);
		free(err);
	}
	PQclear(res);
	return why;
}

/*
 * plan_prove
 *		Prove the statements of the plan written to the directory tmp (not
 *		yet in place) on conn, as the file header says.  NULL when they
 *		prepare (or could not be locked in time: then a warning); else what
 *		does not prepare, and why (the caller removes tmp and stops).
 */
char *
plan_prove(PGconn *conn, const char *tmp)
{
	char	   *foreign = bridge_read_file(bridge_path(tmp, "002_foreign_tables.sql"));
	BridgeBlockFile *load = bridge_read_blocks(bridge_path(tmp, "003_load.sql"));
	BridgeBlockFile *verify = bridge_read_blocks(bridge_path(tmp, "004_verify.sql"));
	PGresult   *res;
	char	   *why = NULL;
	char	   *unproved = NULL;	/* why 002 did not run here */
	bool		locked = false;

	PQclear(PQexec(conn, "BEGIN"));
	PQclear(PQexec(conn, "SET LOCAL lock_timeout = '10s'"));
	res = PQexec(conn, foreign);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		const char *state;
		char	   *err = failed(conn, res, &state);

		if (strcmp(state, "55P03") == 0)
			locked = true;
		else
			unproved = bridge_strdup(err);
		free(err);
	}
	PQclear(res);
	if (unproved != NULL)
	{
		/*
		 * What 002 needs of the database (its schemas free to use, the
		 * server there) is apply's to check, with its own message; without
		 * its objects nothing else can be proved.
		 */
		PQclear(PQexec(conn, "ROLLBACK"));
		fprintf(stderr, "cqlbridge plan: WARNING: the plan's statements were not proved: 002_foreign_tables.sql does not run in this database now: %s\n",
				unproved);
		free(unproved);
		free(foreign);
		return NULL;
	}

	/* 003: each table's load from its source view */
	for (int i = 0; !why && !locked && i < load->nblocks; i++)
	{
		const BridgeBlock *b = &load->blocks[i];
		const char *table = bridge_block_get(b, "table");
		const char *ft = bridge_block_get(b, "foreign_table");
		const char *cols = bridge_block_get(b, "columns");
		const char *rows = bridge_block_sql(b, "");
		char	   *what;
		char	   *sql;

		if (ft == NULL || cols == NULL || rows == NULL)
			continue;
		what = bridge_printf("load of %s (003_load.sql)", table ? table : ft);
		sql = bridge_printf("INSERT INTO %s (%s) SELECT * FROM (%s) q", ft, cols, rows);
		why = prove_one(conn, what, sql, 0, NULL, &locked);
		free(sql);
		free(what);
	}

	/* 004: per query its source, target and sample statements */
	for (int i = 0; !why && !locked && i < verify->nblocks; i++)
	{
		const BridgeBlock *b = &verify->blocks[i];
		const char *q = bridge_block_get(b, "query");
		static const char *const sides[] = {"source", "target"};
		int			n;
		Oid		   *types = param_types(conn, b, &n);

		for (int s = 0; !why && !locked && s < 2; s++)
		{
			const char *sql = bridge_block_sql(b, sides[s]);
			char	   *what;

			if (sql == NULL)
				continue;
			what = bridge_printf("%s statement of query %s (004_verify.sql)", sides[s], q ? q : "?");
			why = prove_one(conn, what, sql, n, types, &locked);
			free(what);
		}
		if (!why && !locked && bridge_block_sql(b, "sample") != NULL)
		{
			char	   *what = bridge_printf("sample statement of query %s (004_verify.sql)", q ? q : "?");
			Oid			count[1] = {23};	/* int4: how many samples */

			why = prove_one(conn, what, bridge_block_sql(b, "sample"), 1, count, &locked);
			free(what);
		}
		free(types);
	}
	PQclear(PQexec(conn, "ROLLBACK"));
	if (locked && !why)
		fprintf(stderr, "cqlbridge plan: WARNING: the plan's statements were not proved: "
				"the objects of 002 stayed locked for 10 s (a stream of this keyspace?); "
				"\"cqlbridge verify\" prepares them\n");
	free(foreign);
	return why;
}

/*-------------------------------------------------------------------------
 *
 * test_unprepared.c
 *		Integration tests of prepared-statement recovery: Unprepared
 *		after DROP + CREATE TABLE (transparent single re-prepare in
 *		cql_execute and cql_batch; the raw error on the async API), and
 *		result metadata changes after ALTER TABLE ADD with SELECT *
 *		(v5 METADATA_CHANGED with a new metadata id; v4 full metadata),
 *		both when the server evicted the statement (re-prepare) and when
 *		another client re-prepared it first (stale metadata id).
 *
 * IDENTIFICATION
 *		tests/integration/test_unprepared.c
 *
 *-------------------------------------------------------------------------
 */
#include "itest.h"

static int
exec_int_text(cql_conn *c, cql_prepared *p, int k, const char *v, cql_error *err)
{
	uint8_t		kb[4];
	cql_value_ref vals[2];
	cql_query_params prm;
	cql_result	res;
	cql_status	st;

	cql_put_be32(kb, (uint32_t) k);
	vals[0].p = kb;
	vals[0].n = 4;
	vals[1].p = (const uint8_t *) v;
	vals[1].n = v ? (int32_t) strlen(v) : CQL_VALUE_NULL;
	cql_query_params_init(&prm);
	prm.values = vals;
	prm.nvalues = p->nbind;
	st = cql_execute(c, p, &prm, &res, err);
	if (st == CQL_OK)
		cql_result_free(&res);
	else
		itest_diag_error("execute", st, err);
	return st == CQL_OK;
}

static void
recreate(cql_conn *c, const char *tab)
{
	char		q[256];

	snprintf(q, sizeof(q), "DROP TABLE IF EXISTS %s", tab);
	itest_exec(c, q);
	snprintf(q, sizeof(q), "CREATE TABLE %s (k int PRIMARY KEY, v text)", tab);
	itest_exec(c, q);
}

static void
test_unprepared(int v)
{
	cql_conn_options o;
	cql_conn   *c;
	cql_prepared *ins,
			   *sel;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	uint8_t		old_id[64];
	uint16_t	old_len;
	char		tab[32];
	uint8_t		kb[4];
	cql_value_ref val;
	cql_query_params prm;

	snprintf(tab, sizeof(tab), "t_v%d", v);
	itest_options(&o, v, CQL_COMPRESSION_NONE);
	o.keyspace = "itest_unprepared";
	c = itest_connect_or_die(&o);
	recreate(c, tab);
	{
		char		q1[128],
					q2[128];

		snprintf(q1, sizeof(q1), "INSERT INTO %s (k, v) VALUES (?, ?)", tab);
		snprintf(q2, sizeof(q2), "SELECT k, v FROM %s WHERE k = ?", tab);
		if (!ok(cql_prepare(c, q1, &ins, &err) == CQL_OK &&
				cql_prepare(c, q2, &sel, &err) == CQL_OK, "v%d: prepare", v))
		{
			cql_conn_close(c);
			return;
		}
	}
	ok(exec_int_text(c, ins, 1, "before", &err), "v%d: execute before the drop", v);

	old_len = ins->id_len;
	memcpy(old_id, ins->id, old_len);
	recreate(c, tab);

	/*
	 * The async API recovers too: the await re-prepares once and resends
	 * under the same request handle (pipelined callers rely on it).
	 */
	{
		cql_request *req;

		cql_put_be32(kb, 5);
		val.p = kb;
		val.n = 4;
		cql_query_params_init(&prm);
		prm.values = &val;
		prm.nvalues = 1;
		int			before = sel->reprepares;

		st = cql_send_execute(c, sel, &prm, &req, &err);
		if (st == CQL_OK)
			st = cql_conn_await(c, req, &res, &err);
		cql_request_free(req);
		ok(st == CQL_OK && res.kind == CQL_RESULT_ROWS && res.rows_count == 0,
		   "v%d: async EXECUTE after DROP+CREATE recovers (empty new table)", v);
		if (st != CQL_OK)
			diag("status %s, code 0x%04x: %s", cql_status_message(st), err.code, err.message);
		is_int(sel->reprepares - before, 1, "v%d: ... with exactly one re-prepare", v);
		if (st == CQL_OK)
			cql_result_free(&res);
	}

	ok(exec_int_text(c, ins, 2, "after", &err), "v%d: cql_execute recovers transparently", v);
	is_int(ins->reprepares, 1, "v%d: ... with exactly one re-prepare", v);

	cql_put_be32(kb, 2);
	val.p = kb;
	val.n = 4;
	cql_query_params_init(&prm);
	prm.values = &val;
	prm.nvalues = 1;
	st = cql_execute(c, sel, &prm, &res, &err);
	ok(st == CQL_OK && res.rows_count == 1 && cql_result_cell(&res, 0, 1)->n == 5 &&
	   memcmp(cql_result_cell(&res, 0, 1)->p, "after", 5) == 0,
	   "v%d: re-prepared SELECT reads the new row", v);
	if (st == CQL_OK)
		cql_result_free(&res);
	is_int(sel->reprepares, 1, "v%d: ... select re-prepared once too", v);
	ok(exec_int_text(c, ins, 3, "again", &err) && ins->reprepares == 1,
	   "v%d: later executes need no re-prepare", v);

	/* a statement that stays unknown is retried only once */
	{
		cql_prepared *bad;
		char		q[128];

		snprintf(q, sizeof(q), "SELECT v FROM %s WHERE k = ?", tab);
		if (cql_prepare(c, q, &bad, &err) == CQL_OK)
		{
			snprintf(q, sizeof(q), "DROP TABLE %s", tab);
			itest_exec(c, q);
			st = cql_execute(c, bad, &prm, &res, &err);
			ok(st == CQL_ERR_SERVER && err.code == CQL_ERRCODE_INVALID,
			   "v%d: table gone for good -> the re-prepare's Invalid error (%s)",
			   v, st == CQL_OK ? "unexpected success" : err.message);
			if (st == CQL_OK)
				cql_result_free(&res);
			recreate(c, tab);
		}
	}

	/* BATCH with a forgotten prepared statement */
	{
		cql_batch_stmt stmts[2];
		cql_value_ref vals[2][2];
		uint8_t		keys[2][4];
		int			before = ins->reprepares;

		/* make the cached insert known again, then forget it */
		exec_int_text(c, ins, 9, "x", &err);
		before = ins->reprepares;
		recreate(c, tab);
		for (int i = 0; i < 2; i++)
		{
			cql_put_be32(keys[i], (uint32_t) (10 + i));
			vals[i][0].p = keys[i];
			vals[i][0].n = 4;
			vals[i][1].p = (const uint8_t *) "batch";
			vals[i][1].n = 5;
			cql_batch_stmt_prepared(&stmts[i], ins, vals[i], 2);
		}
		st = cql_batch(c, CQL_BATCH_LOGGED, stmts, 2, NULL, &res, &err);
		is_int(st, CQL_OK, "v%d: BATCH recovers from Unprepared", v);
		if (st == CQL_OK)
			cql_result_free(&res);
		else
			itest_diag_error("batch", st, &err);
		is_int(ins->reprepares, before + 1, "v%d: ... by one re-prepare", v);

		/* the asynchronous batch of one prepared statement: inside await */
		{
			const cql_value_ref *rows[2] = {vals[0], vals[1]};
			cql_request *req = NULL;
			char		q[128];
			cql_result	cnt;

			before = ins->reprepares;
			recreate(c, tab);
			st = cql_send_prepared_batch(c, CQL_BATCH_UNLOGGED, ins, rows, 2, 2,
										 NULL, &req, &err);
			if (st == CQL_OK)
			{
				st = cql_conn_await(c, req, &res, &err);
				cql_request_free(req);
			}
			is_int(st, CQL_OK, "v%d: asynchronous prepared BATCH recovers from Unprepared", v);
			if (st == CQL_OK)
				cql_result_free(&res);
			else
				itest_diag_error("prepared batch", st, &err);
			is_int(ins->reprepares, before + 1, "v%d: ... by one re-prepare inside await", v);
			snprintf(q, sizeof(q), "SELECT k FROM %s", tab);
			st = cql_query(c, q, NULL, &cnt, &err);
			ok(st == CQL_OK && cnt.rows_count == 2, "v%d: ... and both rows are written", v);
			if (st == CQL_OK)
				cql_result_free(&cnt);
		}

		/* an asynchronous BATCH of statements: recovered inside await too */
		{
			cql_request *req = NULL;

			before = ins->reprepares;
			recreate(c, tab);
			for (int i = 0; i < 2; i++)
				cql_batch_stmt_prepared(&stmts[i], ins, vals[i], 2);
			st = cql_send_batch(c, CQL_BATCH_LOGGED, stmts, 2, NULL, &req, &err);
			if (st == CQL_OK)
			{
				st = cql_conn_await(c, req, &res, &err);
				cql_request_free(req);
			}
			is_int(st, CQL_OK, "v%d: asynchronous BATCH of statements recovers from Unprepared", v);
			if (st == CQL_OK)
				cql_result_free(&res);
			else
				itest_diag_error("async batch", st, &err);
			is_int(ins->reprepares, before + 1, "v%d: ... by one re-prepare inside await", v);
		}
	}
	cql_conn_close(c);
}

static void
test_metadata_changed(int v)
{
	cql_conn_options o;
	cql_conn   *c;
	cql_prepared *sel;
	cql_error	err;
	cql_result	res,
				keep;
	cql_status	st;
	uint8_t		kb[4];
	cql_value_ref val;
	cql_query_params prm;
	char		tab[32],
				q[128];
	uint8_t		old_mid[64];
	uint16_t	old_mid_len = 0;

	snprintf(tab, sizeof(tab), "m_v%d", v);
	itest_options(&o, v, CQL_COMPRESSION_LZ4);
	o.keyspace = "itest_unprepared";
	c = itest_connect_or_die(&o);
	recreate(c, tab);
	snprintf(q, sizeof(q), "INSERT INTO %s (k, v) VALUES (1, 'one')", tab);
	itest_exec(c, q);
	snprintf(q, sizeof(q), "SELECT * FROM %s WHERE k = ?", tab);
	if (!ok(cql_prepare(c, q, &sel, &err) == CQL_OK, "v%d: prepare SELECT *", v))
	{
		cql_conn_close(c);
		return;
	}
	is_int(sel->ncols, 2, "v%d: 2 result columns cached", v);
	if (sel->result_metadata_id && sel->result_metadata_id_len <= sizeof(old_mid))
	{
		old_mid_len = sel->result_metadata_id_len;
		memcpy(old_mid, sel->result_metadata_id, old_mid_len);
	}
	cql_put_be32(kb, 1);
	val.p = kb;
	val.n = 4;
	cql_query_params_init(&prm);
	prm.values = &val;
	prm.nvalues = 1;
	st = cql_execute(c, sel, &prm, &keep, &err);
	ok(st == CQL_OK && keep.meta.ncols == 2 && (keep.meta.flags & CQL_ROWS_NO_METADATA),
	   "v%d: execute with skipped metadata", v);

	snprintf(q, sizeof(q), "ALTER TABLE %s ADD w int", tab);
	ok(itest_exec(c, q), "v%d: ALTER TABLE ADD w", v);
	snprintf(q, sizeof(q), "UPDATE %s SET w = 42 WHERE k = 1", tab);
	itest_exec(c, q);

	/*
	 * The server evicts the table's prepared statements on ALTER.  Another
	 * client preparing the same text puts it back (same id) with the new
	 * result metadata; our copy is now stale, which v5 reports with
	 * METADATA_CHANGED and v4 by sending full metadata.
	 */
	{
		cql_conn   *c2;
		cql_prepared *other;

		snprintf(q, sizeof(q), "SELECT * FROM %s WHERE k = ?", tab);
		c2 = itest_connect_or_die(&o);
		ok(cql_prepare(c2, q, &other, &err) == CQL_OK &&
		   other->id_len == sel->id_len && memcmp(other->id, sel->id, sel->id_len) == 0 &&
		   other->ncols == 3,
		   "v%d: another connection re-prepares it: same id, 3 columns", v);
		cql_conn_close(c2);
	}

	st = cql_execute(c, sel, &prm, &res, &err);
	if (st != CQL_OK)
		itest_diag_error("execute after ALTER", st, &err);
	ok(st == CQL_OK && res.meta.ncols == 3 && res.rows_count == 1 &&
	   cql_result_cell(&res, 0, 2)->n == 4 &&
	   cql_get_be32(cql_result_cell(&res, 0, 2)->p) == 42,
	   "v%d: after ALTER the result has 3 columns with the new value", v);
	if (v >= 5)
		ok(st == CQL_OK && (res.meta.flags & CQL_ROWS_METADATA_CHANGED) &&
		   res.meta.has_new_metadata_id, "v5: server flagged METADATA_CHANGED");
	if (st == CQL_OK)
		cql_result_free(&res);
	is_int(sel->ncols, 3, "v%d: cached columns replaced", v);
	ok(sel->ncols == 3 && strcmp(sel->cols[2].name, "w") == 0, "v%d: ... new column w", v);
	if (v >= 5)
	{
		is_int(sel->metadata_changes, 1, "v5: one metadata change recorded");
		is_int(sel->reprepares, 0, "v5: ... without any re-prepare");
	}
	else
	{
		/* v4 has no metadata id: NO_METADATA with 3 columns vs 2 cached */
		is_int(sel->reprepares, 1, "v4: stale skipped metadata detected, one re-prepare");
	}
	if (v >= 5)
		ok(sel->result_metadata_id_len != old_mid_len ||
		   memcmp(sel->result_metadata_id, old_mid, old_mid_len) != 0,
		   "v5: result metadata id replaced");
	/* the result decoded before the change still has its own columns */
	ok(keep.meta.ncols == 2 && strcmp(keep.meta.cols[1].name, "v") == 0,
	   "v%d: an older result keeps the columns it was decoded with", v);
	cql_result_free(&keep);

	st = cql_execute(c, sel, &prm, &res, &err);
	ok(st == CQL_OK && res.meta.ncols == 3 &&
	   (v < 5 || (res.meta.flags & CQL_ROWS_NO_METADATA)),
	   "v%d: next execute uses the new cache%s", v, v >= 5 ? " (NO_METADATA again)" : "");
	if (st == CQL_OK)
		cql_result_free(&res);
	is_int(sel->metadata_changes + sel->reprepares, 1, "v%d: no further change", v);
	cql_conn_close(c);
}

/* ALTER on our own: the server evicts, one re-prepare brings 3 columns. */
static void
test_alter_evicts(int v)
{
	cql_conn_options o;
	cql_conn   *c;
	cql_prepared *sel;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	uint8_t		kb[4];
	cql_value_ref val;
	cql_query_params prm;
	char		tab[32],
				q[128];

	snprintf(tab, sizeof(tab), "a_v%d", v);
	itest_options(&o, v, CQL_COMPRESSION_NONE);
	o.keyspace = "itest_unprepared";
	c = itest_connect_or_die(&o);
	recreate(c, tab);
	snprintf(q, sizeof(q), "INSERT INTO %s (k, v) VALUES (1, 'one')", tab);
	itest_exec(c, q);
	snprintf(q, sizeof(q), "SELECT * FROM %s WHERE k = ?", tab);
	if (!ok(cql_prepare(c, q, &sel, &err) == CQL_OK && sel->ncols == 2,
			"v%d: prepare SELECT * (2 columns)", v))
	{
		cql_conn_close(c);
		return;
	}
	snprintf(q, sizeof(q), "ALTER TABLE %s ADD w int", tab);
	itest_exec(c, q);
	cql_put_be32(kb, 1);
	val.p = kb;
	val.n = 4;
	cql_query_params_init(&prm);
	prm.values = &val;
	prm.nvalues = 1;
	st = cql_execute(c, sel, &prm, &res, &err);
	ok(st == CQL_OK && res.meta.ncols == 3 && sel->ncols == 3 &&
	   sel->reprepares + sel->metadata_changes == 1,
	   "v%d: after ALTER, SELECT * returns 3 columns (re-prepares %d, metadata changes %d)",
	   v, sel->reprepares, sel->metadata_changes);
	if (st == CQL_OK)
		cql_result_free(&res);
	cql_conn_close(c);
}

int
main(void)
{
	cql_conn_options o;
	cql_conn   *c;

	plan(68);
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	setup_step(itest_keyspace(c, "itest_unprepared"), "keyspace itest_unprepared");
	cql_conn_close(c);

	test_unprepared(5);
	test_unprepared(4);
	test_metadata_changed(5);
	test_metadata_changed(4);
	test_alter_evicts(5);
	test_alter_evicts(4);

	/* the prepared cache is keyed by text AND the current keyspace */
	{
		cql_prepared *p1,
				   *p2;
		cql_error	err;
		cql_status	st;

		itest_options(&o, 5, CQL_COMPRESSION_NONE);
		o.keyspace = "itest_unprepared";
		c = itest_connect_or_die(&o);
		itest_exec(c, "CREATE TABLE IF NOT EXISTS only_here (k int PRIMARY KEY)");
		st = cql_prepare(c, "SELECT k FROM only_here WHERE k = ?", &p1, &err);
		is_int(st, CQL_OK, "prepare an unqualified statement");
		itest_exec(c, "CREATE KEYSPACE IF NOT EXISTS itest_unprepared2 WITH replication = "
				   "{'class': 'SimpleStrategy', 'replication_factor': 1}");
		itest_exec(c, "USE itest_unprepared2");
		st = cql_prepare(c, "SELECT k FROM only_here WHERE k = ?", &p2, &err);
		ok(st == CQL_ERR_SERVER && err.code == CQL_ERRCODE_INVALID,
		   "same text after USE of another keyspace is not a cache hit");
		itest_exec(c, "USE itest_unprepared");
		st = cql_prepare(c, "SELECT k FROM only_here WHERE k = ?", &p2, &err);
		ok(st == CQL_OK && p2 == p1, "back in the first keyspace: cache hit");
		cql_conn_close(c);
	}
	return done_testing();
}

/*-------------------------------------------------------------------------
 *
 * test_requests.c
 *		Integration tests of requests against a live node, for v4 and v5,
 *		with and without lz4: QUERY with values, PREPARE/EXECUTE with
 *		cached metadata, BATCH (logged and unlogged), server errors with
 *		all fields, consistency/serial/timestamp pass-through, 1000
 *		pipelined EXECUTEs, 1 MB messages (multi-frame in v5), raw submit,
 *		and server events.
 *
 * IDENTIFICATION
 *		tests/integration/test_requests.c
 *
 *-------------------------------------------------------------------------
 */
#include "itest.h"

#define NPIPE 1000

static void
be32(uint8_t *p, int32_t v)
{
	cql_put_be32(p, (uint32_t) v);
}

static int32_t
cell_int(const cql_result *r, int row, int col)
{
	const cql_elem *e = cql_result_cell(r, row, col);

	return e->n == 4 ? (int32_t) cql_get_be32(e->p) : INT32_MIN;
}

static int
cell_text_is(const cql_result *r, int row, int col, const char *s)
{
	const cql_elem *e = cql_result_cell(r, row, col);

	return e->n == (int32_t) strlen(s) && memcmp(e->p, s, e->n) == 0;
}

static void
test_basic(cql_conn *c, const char *tag)
{
	cql_result	res;
	cql_error	err;
	cql_status	st;
	uint8_t		kbuf[4];
	cql_value_ref vals[2];
	cql_query_params prm;
	cql_prepared *ins,
			   *ins2,
			   *sel;

	/* QUERY with bound values (the caller encodes them) */
	be32(kbuf, 1);
	vals[0].p = kbuf;
	vals[0].n = 4;
	vals[1].p = (const uint8_t *) "one";
	vals[1].n = 3;
	cql_query_params_init(&prm);
	prm.values = vals;
	prm.nvalues = 2;
	st = cql_query(c, "INSERT INTO kv (k, v) VALUES (?, ?)", &prm, &res, &err);
	is_int(st, CQL_OK, "%s: QUERY with values", tag);
	is_int(res.kind, CQL_RESULT_VOID, "%s: ... Void result", tag);
	cql_result_free(&res);

	st = cql_query(c, "SELECT k, v FROM kv WHERE k = 1", NULL, &res, &err);
	ok(st == CQL_OK && res.rows_count == 1 && cell_int(&res, 0, 0) == 1 &&
	   cell_text_is(&res, 0, 1, "one"), "%s: SELECT reads it back", tag);
	ok(st == CQL_OK && res.meta.ncols == 2 && strcmp(res.meta.cols[1].name, "v") == 0 &&
	   res.meta.cols[1].type->id == CQL_TYPE_VARCHAR, "%s: ... with column metadata", tag);
	cql_result_free(&res);

	/* PREPARE / EXECUTE */
	st = cql_prepare(c, "INSERT INTO kv (k, v) VALUES (?, ?)", &ins, &err);
	is_int(st, CQL_OK, "%s: PREPARE insert", tag);
	if (st != CQL_OK)
		return;
	is_int(ins->nbind, 2, "%s: ... 2 bind markers", tag);
	ok(ins->npk == 1 && ins->pk_indexes[0] == 0, "%s: ... pk index [0]", tag);
	ok(ins->bind[0].type->id == CQL_TYPE_INT && ins->bind[1].type->id == CQL_TYPE_VARCHAR,
	   "%s: ... bind types int, text", tag);
	if (cql_conn_protocol_version(c) >= 5)
		ok(ins->result_metadata_id != NULL, "%s: ... v5 result metadata id", tag);
	st = cql_prepare(c, "INSERT INTO kv (k, v) VALUES (?, ?)", &ins2, &err);
	ok(st == CQL_OK && ins2 == ins, "%s: prepare cache hit returns the same statement", tag);

	be32(kbuf, 2);
	vals[1].p = (const uint8_t *) "two";
	st = cql_execute(c, ins, &prm, &res, &err);
	is_int(st, CQL_OK, "%s: EXECUTE insert", tag);
	cql_result_free(&res);

	st = cql_prepare(c, "SELECT k, v FROM kv WHERE k = ?", &sel, &err);
	is_int(st, CQL_OK, "%s: PREPARE select", tag);
	if (st != CQL_OK)
		return;
	is_int(sel->ncols, 2, "%s: ... result columns cached", tag);
	prm.nvalues = 1;
	st = cql_execute(c, sel, &prm, &res, &err);
	ok(st == CQL_OK && res.rows_count == 1 && cell_int(&res, 0, 0) == 2 &&
	   cell_text_is(&res, 0, 1, "two"), "%s: EXECUTE select reads the row", tag);
	ok(st == CQL_OK && (res.meta.flags & CQL_ROWS_NO_METADATA) && res.meta.cols == sel->cols,
	   "%s: ... server skipped metadata, cached columns used", tag);
	cql_result_free(&res);

	/* null and unset values */
	be32(kbuf, 3);
	vals[1].p = NULL;
	vals[1].n = CQL_VALUE_NULL;
	prm.nvalues = 2;
	st = cql_execute(c, ins, &prm, &res, &err);
	cql_result_free(&res);
	prm.nvalues = 1;
	st = cql_execute(c, sel, &prm, &res, &err);
	ok(st == CQL_OK && res.rows_count == 1 && cql_result_cell(&res, 0, 1)->n == -1,
	   "%s: null value round trip", tag);
	cql_result_free(&res);

	/* server errors carry their fields */
	st = cql_query(c, "SELEC nonsense", NULL, &res, &err);
	ok(st == CQL_ERR_SERVER && err.code == CQL_ERRCODE_SYNTAX_ERROR && err.message[0],
	   "%s: syntax error -> CQL_ERR_SERVER 0x2000 (%s)", tag, err.message);
	st = cql_query(c, "SELECT * FROM no_such_table", NULL, &res, &err);
	ok(st == CQL_ERR_SERVER && err.code == CQL_ERRCODE_INVALID,
	   "%s: unknown table -> Invalid 0x2200", tag);
	ok(err.host[0] != '\0', "%s: ... error names the host (%s)", tag, err.host);
	st = cql_query(c, "CREATE TABLE kv (k int PRIMARY KEY)", NULL, &res, &err);
	ok(st == CQL_ERR_SERVER && err.code == CQL_ERRCODE_ALREADY_EXISTS &&
	   strcmp(err.keyspace, "itest_requests") == 0 && strcmp(err.table, "kv") == 0,
	   "%s: Already_exists with keyspace/table fields (%s.%s)", tag, err.keyspace, err.table);
	is_int(cql_conn_status(c), CQL_OK, "%s: server errors leave the connection usable", tag);
}

static void
test_params(cql_conn *c, const char *tag)
{
	cql_result	res;
	cql_error	err;
	cql_status	st;
	cql_query_params prm;
	int64_t		ts = 1700000000123456LL;

	/* default timestamp pass-through */
	cql_query_params_init(&prm);
	prm.default_timestamp = ts;
	prm.consistency = CQL_CONSISTENCY_LOCAL_ONE;
	st = cql_query(c, "INSERT INTO kv (k, v) VALUES (100, 'ts')", &prm, &res, &err);
	is_int(st, CQL_OK, "%s: INSERT with default timestamp and LOCAL_ONE", tag);
	cql_result_free(&res);
	st = cql_query(c, "SELECT WRITETIME(v) FROM kv WHERE k = 100", NULL, &res, &err);
	ok(st == CQL_OK && res.rows_count == 1 && cql_result_cell(&res, 0, 0)->n == 8 &&
	   (int64_t) cql_get_be64(cql_result_cell(&res, 0, 0)->p) == ts,
	   "%s: WRITETIME equals the client timestamp", tag);
	cql_result_free(&res);

	/* serial consistency on an LWT */
	cql_query_params_init(&prm);
	prm.serial_consistency = CQL_CONSISTENCY_LOCAL_SERIAL;
	st = cql_query(c, "INSERT INTO kv (k, v) VALUES (101, 'lwt') IF NOT EXISTS", &prm, &res, &err);
	ok(st == CQL_OK && res.kind == CQL_RESULT_ROWS && res.rows_count == 1 &&
	   strcmp(res.meta.cols[0].name, "[applied]") == 0,
	   "%s: LWT with LOCAL_SERIAL returns [applied]", tag);
	cql_result_free(&res);

	/* an unsatisfiable consistency gives Unavailable with its fields */
	cql_query_params_init(&prm);
	prm.consistency = CQL_CONSISTENCY_THREE;
	st = cql_query(c, "SELECT * FROM kv WHERE k = 1", &prm, &res, &err);
	ok(st == CQL_ERR_SERVER && err.code == CQL_ERRCODE_UNAVAILABLE &&
	   err.consistency == CQL_CONSISTENCY_THREE && err.blockfor == 3 && err.alive == 1,
	   "%s: CL THREE on one node -> Unavailable(cl=THREE, required=3, alive=1)", tag);
}

static void
test_batch(cql_conn *c, const char *tag)
{
	cql_result	res;
	cql_error	err;
	cql_status	st;
	cql_prepared *ins;
	cql_batch_stmt stmts[3];
	uint8_t		k[3][4];
	cql_value_ref v[3][2];

	st = cql_prepare(c, "INSERT INTO kv (k, v) VALUES (?, ?)", &ins, &err);
	if (!ok(st == CQL_OK, "%s: prepare for batch", tag))
		return;
	for (int type = CQL_BATCH_LOGGED; type <= CQL_BATCH_UNLOGGED; type++)
	{
		const char *tname = type == CQL_BATCH_LOGGED ? "logged" : "unlogged";

		for (int i = 0; i < 3; i++)
		{
			be32(k[i], 200 + type * 10 + i);
			v[i][0].p = k[i];
			v[i][0].n = 4;
			v[i][1].p = (const uint8_t *) tname;
			v[i][1].n = (int32_t) strlen(tname);
		}
		cql_batch_stmt_prepared(&stmts[0], ins, v[0], 2);
		cql_batch_stmt_query(&stmts[1], "INSERT INTO kv (k, v) VALUES (?, ?)", v[1], 2);
		cql_batch_stmt_prepared(&stmts[2], ins, v[2], 2);
		st = cql_batch(c, (uint8_t) type, stmts, 3, NULL, &res, &err);
		is_int(st, CQL_OK, "%s: %s BATCH (prepared + query statements)", tag, tname);
		if (st != CQL_OK)
			itest_diag_error("batch", st, &err);
		cql_result_free(&res);
		{
			char		q[128];

			snprintf(q, sizeof(q), "SELECT k, v FROM kv WHERE k IN (%d, %d, %d)",
					 200 + type * 10, 201 + type * 10, 202 + type * 10);
			st = cql_query(c, q, NULL, &res, &err);
			ok(st == CQL_OK && res.rows_count == 3 && cell_text_is(&res, 2, 1, tname),
			   "%s: ... all 3 rows of the %s batch written", tag, tname);
			cql_result_free(&res);
		}
	}
}

static void
test_pipeline(cql_conn *c, const char *tag)
{
	cql_prepared *ins,
			   *sel;
	cql_error	err;
	static cql_request *reqs[NPIPE];
	static uint8_t keys[NPIPE][4];
	static char texts[NPIPE][16];
	static cql_value_ref vals[NPIPE][2];
	static cql_query_params prm[NPIPE];
	int			sent = 0,
				good = 0,
				maxfl = 0;

	if (cql_prepare(c, "INSERT INTO pipe (k, v) VALUES (?, ?)", &ins, &err) != CQL_OK ||
		cql_prepare(c, "SELECT k, v FROM pipe WHERE k = ?", &sel, &err) != CQL_OK)
	{
		ok(0, "%s: prepare for pipelining", tag);
		return;
	}
	for (int i = 0; i < NPIPE; i++)
	{
		be32(keys[i], i);
		snprintf(texts[i], sizeof(texts[i]), "val-%d", i);
		vals[i][0].p = keys[i];
		vals[i][0].n = 4;
		vals[i][1].p = (const uint8_t *) texts[i];
		vals[i][1].n = (int32_t) strlen(texts[i]);
		cql_query_params_init(&prm[i]);
		prm[i].values = vals[i];
		prm[i].nvalues = 2;
		if (cql_send_execute(c, ins, &prm[i], &reqs[i], &err) == CQL_OK)
			sent++;
		if (cql_conn_in_flight(c) > maxfl)
			maxfl = cql_conn_in_flight(c);
	}
	is_int(sent, NPIPE, "%s: %d INSERT EXECUTEs submitted without waiting", tag, NPIPE);
	ok(maxfl > NPIPE / 2, "%s: ... many in flight at once (max %d)", tag, maxfl);
	/* await the last first: the others complete meanwhile */
	for (int i = NPIPE - 1; i >= 0; i--)
	{
		cql_result	res;

		if (reqs[i] && cql_conn_await(c, reqs[i], &res, &err) == CQL_OK &&
			res.kind == CQL_RESULT_VOID)
			good++;
		if (reqs[i])
			cql_result_free(&res);
		cql_request_free(reqs[i]);
		reqs[i] = NULL;
	}
	is_int(good, NPIPE, "%s: all inserts answered", tag);

	sent = good = 0;
	for (int i = 0; i < NPIPE; i++)
	{
		prm[i].nvalues = 1;
		if (cql_send_execute(c, sel, &prm[i], &reqs[i], &err) == CQL_OK)
			sent++;
	}
	is_int(sent, NPIPE, "%s: %d SELECT EXECUTEs in flight", tag, NPIPE);
	for (int i = NPIPE - 1; i >= 0; i--)
	{
		cql_result	res;

		if (reqs[i] && cql_conn_await(c, reqs[i], &res, &err) == CQL_OK)
		{
			if (res.rows_count == 1 && cell_int(&res, 0, 0) == i &&
				cell_text_is(&res, 0, 1, texts[i]))
				good++;
			cql_result_free(&res);
		}
		cql_request_free(reqs[i]);
	}
	is_int(good, NPIPE, "%s: every answer matched to its own request", tag);
	is_int(cql_conn_in_flight(c), 0, "%s: all stream ids released", tag);
}

static void
test_large(cql_conn *c, const char *tag)
{
	const size_t n = 1024 * 1024;
	uint8_t    *blob = malloc(n);
	cql_prepared *ins,
			   *sel;
	cql_error	err;
	cql_status	st;
	cql_result	res;
	uint8_t		kbuf[4];
	cql_value_ref vals[2];
	cql_query_params prm;

	for (int variant = 0; variant < 2; variant++)
	{
		/* pseudo-random (incompressible) and repetitive (compressible) */
		uint32_t	x = 12345 + variant;

		for (size_t i = 0; i < n; i++)
		{
			x = x * 1103515245u + 12345u;
			blob[i] = variant == 0 ? (uint8_t) (x >> 16) : (uint8_t) ("abcdefgh"[i % 8]);
		}
		if (cql_prepare(c, "INSERT INTO big (k, b) VALUES (?, ?)", &ins, &err) != CQL_OK ||
			cql_prepare(c, "SELECT b FROM big WHERE k = ?", &sel, &err) != CQL_OK)
		{
			ok(0, "%s: prepare big", tag);
			break;
		}
		be32(kbuf, variant);
		vals[0].p = kbuf;
		vals[0].n = 4;
		vals[1].p = blob;
		vals[1].n = (int32_t) n;
		cql_query_params_init(&prm);
		prm.values = vals;
		prm.nvalues = 2;
		st = cql_execute(c, ins, &prm, &res, &err);
		is_int(st, CQL_OK, "%s: insert 1 MB %s blob", tag, variant ? "repetitive" : "random");
		if (st != CQL_OK)
			itest_diag_error("big insert", st, &err);
		cql_result_free(&res);
		prm.nvalues = 1;
		st = cql_execute(c, sel, &prm, &res, &err);
		ok(st == CQL_OK && res.rows_count == 1 && cql_result_cell(&res, 0, 0)->n == (int32_t) n &&
		   memcmp(cql_result_cell(&res, 0, 0)->p, blob, n) == 0,
		   "%s: ... read back byte-identical", tag);
		cql_result_free(&res);
	}
	free(blob);
}

static void
test_raw(cql_conn *c, const char *tag)
{
	cql_request *req;
	cql_error	err;
	cql_status	st;
	uint8_t		op,
				fl;
	const uint8_t *body;
	size_t		len;
	cql_supported sup;

	st = cql_conn_submit(c, CQL_OP_OPTIONS, NULL, &req, &err);
	is_int(st, CQL_OK, "%s: raw submit OPTIONS", tag);
	if (st != CQL_OK)
		return;
	st = cql_conn_await_raw(c, req, &op, &fl, &body, &len, &err);
	ok(st == CQL_OK && op == CQL_OP_SUPPORTED, "%s: ... SUPPORTED answer", tag);
	memset(&sup, 0, sizeof(sup));
	ok(st == CQL_OK && cql_decode_supported(body, len, &cql_malloc_allocator, &sup) == CQL_OK &&
	   cql_supported_get(&sup, "CQL_VERSION") != NULL, "%s: ... decodable", tag);
	cql_supported_free(&sup, &cql_malloc_allocator);
	cql_request_free(req);
}

/* Events */
typedef struct ev_seen
{
	int			n;
	int			mine;			/* our table's event (others share the node) */
	char		target[32];
	char		name[64];
} ev_seen;

static void
on_event(void *ctx, const cql_event *ev)
{
	ev_seen    *s = ctx;

	if (ev->type != CQL_EVENT_SCHEMA_CHANGE)
		return;
	s->n++;
	if (ev->schema.target && strcmp(ev->schema.target, "TABLE") == 0 &&
		ev->schema.name && strcmp(ev->schema.name, "evt") == 0 &&
		ev->schema.keyspace && strcmp(ev->schema.keyspace, "itest_requests") == 0)
		s->mine++;
	snprintf(s->target, sizeof(s->target), "%s", ev->schema.target ? ev->schema.target : "");
	snprintf(s->name, sizeof(s->name), "%s", ev->schema.name ? ev->schema.name : "");
}

static void
test_events(int v)
{
	cql_conn_options o;
	cql_conn   *ec,
			   *c;
	ev_seen		seen;
	cql_buf		body;
	cql_request *req;
	cql_error	err;
	uint8_t		op,
				fl;
	const uint8_t *b;
	size_t		len;
	const char *types[] = {"SCHEMA_CHANGE"};

	memset(&seen, 0, sizeof(seen));
	itest_options(&o, v, CQL_COMPRESSION_LZ4);
	o.on_event = on_event;
	o.event_ctx = &seen;
	ec = itest_connect_or_die(&o);
	cql_buf_init(&body, &cql_malloc_allocator);
	cql_write_register(&body, types, 1);
	ok(cql_conn_submit(ec, CQL_OP_REGISTER, &body, &req, &err) == CQL_OK &&
	   cql_conn_await_raw(ec, req, &op, &fl, &b, &len, &err) == CQL_OK &&
	   op == CQL_OP_READY, "v%d: REGISTER -> READY", v);
	cql_request_free(req);
	cql_buf_free(&body);

	itest_options(&o, v, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	itest_exec(c, "DROP TABLE IF EXISTS itest_requests.evt");
	itest_exec(c, "CREATE TABLE itest_requests.evt (k int PRIMARY KEY)");
	for (int i = 0; i < 100 && seen.mine == 0; i++)
		cql_conn_pump(ec, 50, &err);
	ok(seen.mine > 0,
	   "v%d: SCHEMA_CHANGE event delivered to the callback (%d, %s %s)",
	   v, seen.n, seen.target, seen.name);
	cql_conn_close(c);
	cql_conn_close(ec);
}

/* More requests than stream ids: submit waits for ids to free up. */
static void
test_few_streams(void)
{
	cql_conn_options o;
	cql_conn   *c;
	cql_request *reqs[100];
	cql_error	err;
	int			sent = 0,
				good = 0,
				maxfl = 0;

	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.max_in_flight = 8;
	c = itest_connect_or_die(&o);
	for (int i = 0; i < 100; i++)
	{
		if (cql_send_query(c, "SELECT key FROM system.local", NULL, &reqs[i], &err) == CQL_OK)
			sent++;
		else
			reqs[i] = NULL;
		if (cql_conn_in_flight(c) > maxfl)
			maxfl = cql_conn_in_flight(c);
	}
	is_int(sent, 100, "max_in_flight 8: 100 submits all accepted");
	ok(maxfl <= 8, "... never more than 8 in flight (max %d)", maxfl);
	for (int i = 0; i < 100; i++)
	{
		cql_result	res;

		if (reqs[i] && cql_conn_await(c, reqs[i], &res, &err) == CQL_OK)
		{
			if (res.rows_count == 1)
				good++;
			cql_result_free(&res);
		}
		cql_request_free(reqs[i]);
	}
	is_int(good, 100, "... and all answered");
	cql_conn_close(c);
}

int
main(void)
{
	cql_conn_options o;
	cql_conn   *c;

	plan(177);
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	setup_step(itest_keyspace(c, "itest_requests"), "keyspace itest_requests");
	setup_step(itest_exec(c, "DROP TABLE IF EXISTS kv") &&
			   itest_exec(c, "CREATE TABLE kv (k int PRIMARY KEY, v text)") &&
			   itest_exec(c, "DROP TABLE IF EXISTS pipe") &&
			   itest_exec(c, "CREATE TABLE pipe (k int PRIMARY KEY, v text)") &&
			   itest_exec(c, "DROP TABLE IF EXISTS big") &&
			   itest_exec(c, "CREATE TABLE big (k int PRIMARY KEY, b blob)"), "tables created");
	cql_conn_close(c);

	for (int v = 4; v <= 5; v++)
		for (int z = 0; z <= 1; z++)
		{
			char		tag[32];

			snprintf(tag, sizeof(tag), "v%d%s", v, z ? "+lz4" : "");
			itest_options(&o, v, z ? CQL_COMPRESSION_LZ4 : CQL_COMPRESSION_NONE);
			o.keyspace = "itest_requests";
			c = itest_connect_or_die(&o);
			itest_exec(c, "TRUNCATE kv");
			test_basic(c, tag);
			test_params(c, tag);
			test_batch(c, tag);
			test_pipeline(c, tag);
			test_large(c, tag);
			test_raw(c, tag);
			cql_conn_close(c);
		}
	test_events(5);
	test_events(4);
	test_few_streams();
	return done_testing();
}

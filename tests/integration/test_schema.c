/*
 * test_schema.c
 *		Schema metadata: first the pure parts on fixtures (UDT resolution,
 *		cycles and fan-out bombs, hostile column rows), then against a live
 *		node: a keyspace with nested UDTs, a table with a composite
 *		partition key, mixed ASC/DESC clustering, a static column,
 *		collections, frozen UDTs and vector<float, 3>; quoted names,
 *		counter tables, virtual tables, unknown keyspace/table.
 *
 * Environment: CQL_HOST (127.0.0.1), CQL_PORT (9042).
 */
#include "cql_schema.h"
#include "itest.h"
#include "failing_alloc.h"

static const cql_allocator *A = &cql_malloc_allocator;

/* ---------------------------------------------------------------------
 * Fixtures
 * ---------------------------------------------------------------------
 */
static cql_udt_meta
mk_udt(const char *ks, const char *name, int n, const char **fn, const char **ft)
{
	cql_udt_meta u;

	u.keyspace = (char *) ks;
	u.name = (char *) name;
	u.nfields = n;
	u.field_names = (char **) fn;
	u.field_types = (char **) ft;
	return u;
}

static void
test_pure_types(void)
{
	const char *addr_n[] = {"street", "city", "zip"};
	const char *addr_t[] = {"text", "text", "int"};
	const char *pers_n[] = {"name", "home", "phones"};
	const char *pers_t[] = {"text", "frozen<address>", "list<text>"};
	const char *cyc_n[] = {"x"};
	const char *cyc_t[] = {"frozen<cyc>"};
	const char *ping_t[] = {"frozen<pong>"};
	const char *pong_t[] = {"list<frozen<ping>>"};
	const char *bad_t[] = {"map<int"};
	const char *q_n[] = {"X"};
	const char *q_t[] = {"int"};
	cql_udt_meta u[8];
	cql_type   *t = NULL;
	int			n = 0;

	u[n++] = mk_udt("ks", "address", 3, addr_n, addr_t);
	u[n++] = mk_udt("ks", "person", 3, pers_n, pers_t);
	u[n++] = mk_udt("ks", "cyc", 1, cyc_n, cyc_t);
	u[n++] = mk_udt("ks", "ping", 1, cyc_n, ping_t);
	u[n++] = mk_udt("ks", "pong", 1, cyc_n, pong_t);
	u[n++] = mk_udt("ks", "broken", 1, cyc_n, bad_t);
	u[n++] = mk_udt("ks", "Quoted", 1, q_n, q_t);

	ok(cql_schema_parse_type("map<text, frozen<list<int>>>", "ks", u, n, A, &t) == CQL_OK &&
	   t && t->id == CQL_TYPE_MAP, "native nested type parses");
	cql_type_free(t, A);

	ok(cql_schema_parse_type("frozen<person>", "ks", u, n, A, &t) == CQL_OK && t != NULL,
	   "frozen<person> resolves");
	if (t)
	{
		ok(t->id == CQL_TYPE_UDT && t->frozen && t->nsub == 3, "person is a frozen UDT of 3 fields");
		is_str(t->name, "person", "UDT name");
		is_str(t->keyspace, "ks", "UDT keyspace");
		is_str(t->field_names[1], "home", "field name");
		ok(t->sub[1]->id == CQL_TYPE_UDT && t->sub[1]->nsub == 3 && t->sub[1]->frozen,
		   "nested UDT address resolved");
		ok(t->sub[1]->sub[2]->id == CQL_TYPE_INT, "nested UDT field type");
		ok(t->sub[2]->id == CQL_TYPE_LIST && t->sub[2]->sub[0]->id == CQL_TYPE_VARCHAR,
		   "list<text> field");
	}
	cql_type_free(t, A);

	ok(cql_schema_parse_type("\"Quoted\"", "ks", u, n, A, &t) == CQL_OK && t &&
	   t->id == CQL_TYPE_UDT && strcmp(t->name, "Quoted") == 0, "quoted UDT name resolves");
	cql_type_free(t, A);

	ok(cql_schema_parse_type("ks.address", "ks", u, n, A, &t) == CQL_OK && t &&
	   t->id == CQL_TYPE_UDT, "keyspace-qualified UDT of the same keyspace");
	cql_type_free(t, A);

	ok(cql_schema_parse_type("other.address", "ks", u, n, A, &t) == CQL_ERR_UNSUPPORTED && !t,
	   "UDT of another keyspace refused");
	ok(cql_schema_parse_type("nosuch", "ks", u, n, A, &t) == CQL_ERR_UNSUPPORTED && !t,
	   "unknown UDT refused");
	ok(cql_schema_parse_type("frozen<cyc>", "ks", u, n, A, &t) == CQL_ERR_TOO_LARGE && !t,
	   "self-containing UDT refused");
	ok(cql_schema_parse_type("frozen<ping>", "ks", u, n, A, &t) == CQL_ERR_TOO_LARGE && !t,
	   "mutually recursive UDTs refused");
	ok(cql_schema_parse_type("frozen<broken>", "ks", u, n, A, &t) != CQL_OK && !t,
	   "UDT with an unparsable field type refused");
	ok(cql_schema_parse_type("list<", "ks", u, n, A, &t) != CQL_OK && !t, "truncated type string refused");
	ok(cql_schema_parse_type("vector<float, 3>", "ks", NULL, 0, A, &t) == CQL_OK && t &&
	   t->id == CQL_TYPE_VECTOR && t->dimension == 3, "vector<float, 3>");
	cql_type_free(t, A);
	ok(cql_schema_parse_type(NULL, "ks", u, n, A, &t) == CQL_ERR_INVALID_ARG, "NULL type refused");

	/* fan-out bomb: 30 levels of 10 fields each of the next type */
	{
		static char names[31][16];
		static char types[31][32];
		static const char *fn[31][10];
		static const char *ft[31][10];
		static const char *fieldnames[10] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
		cql_udt_meta bomb[31];

		for (int i = 0; i < 31; i++)
		{
			snprintf(names[i], sizeof(names[i]), "b%d", i);
			snprintf(types[i], sizeof(types[i]), i < 30 ? "frozen<b%d>" : "int", i + 1);
			for (int f = 0; f < 10; f++)
			{
				fn[i][f] = fieldnames[f];
				ft[i][f] = types[i];
			}
			bomb[i] = mk_udt("ks", names[i], 10, fn[i], ft[i]);
		}
		ok(cql_schema_parse_type("frozen<b0>", "ks", bomb, 31, A, &t) == CQL_ERR_TOO_LARGE && !t,
		   "exponential UDT fan-out refused");
	}
}

static void
test_pure_table(void)
{
	const char *addr_n[] = {"street"};
	const char *addr_t[] = {"text"};
	cql_udt_meta u = mk_udt("ks", "address", 1, addr_n, addr_t);
	cql_table_meta *t = NULL;
	cql_error	err;
	cql_column_row good[] = {
		{"v", "regular", -1, "none", "frozen<address>"},
		{"c2", "clustering", 1, "asc", "int"},
		{"k2", "partition_key", 1, "none", "text"},
		{"s", "static", -1, "none", "int"},
		{"c1", "clustering", 0, "desc", "timestamp"},
		{"a", "regular", -1, "none", "'org.example.Weird'"},
		{"k1", "partition_key", 0, "none", "int"},
		{"odd", "regular", -1, NULL, "nosuchudt"},
	};

	cql_error_clear(&err);
	ok(cql_schema_build_table("ks", "t", good, 8, &u, 1, A, &t, &err) == CQL_OK && t,
	   "table built from unordered rows (%s)", err.message);
	if (t)
	{
		const char *order[] = {"k1", "k2", "c1", "c2", "s", "a", "odd", "v"};

		is_int(t->ncolumns, 8, "8 columns");
		for (int i = 0; i < 8 && i < t->ncolumns; i++)
			is_str(t->columns[i].name, order[i], "column %d in key/static/regular order", i);
		is_int(t->npartition, 2, "2 partition key columns");
		is_int(t->nclustering, 2, "2 clustering columns");
		ok(t->partition_key[1] == 1 && t->clustering_key[0] == 2, "key index arrays");
		ok(t->columns[2].order == CQL_ORDER_DESC && t->columns[3].order == CQL_ORDER_ASC,
		   "clustering orders");
		ok(t->columns[4].kind == CQL_COLUMN_STATIC && t->columns[4].position == -1, "static column");
		ok(t->columns[7].type && t->columns[7].type->id == CQL_TYPE_UDT, "UDT column resolved");
		ok(t->columns[6].type == NULL && t->columns[6].type_status == CQL_ERR_UNSUPPORTED,
		   "unknown UDT column kept with type NULL");
		ok(t->columns[5].type && t->columns[5].type->id == CQL_TYPE_CUSTOM, "custom class column");
		ok(cql_table_meta_column(t, "s") == &t->columns[4], "column lookup");
		ok(cql_table_meta_column(t, "nope") == NULL, "missing column lookup");
		is_int(t->nudts, 1, "UDTs copied into the table");
	}
	cql_table_meta_free(t);

	/* hostile rows */
	{
		struct
		{
			const char *what;
			cql_column_row rows[3];
			int			n;
		}			bad[] = {
			{"unknown kind", {{"k", "partition_key", 0, "none", "int"}, {"x", "weird", -1, "none", "int"}}, 2},
			{"null kind", {{"k", "partition_key", 0, "none", "int"}, {"x", NULL, -1, "none", "int"}}, 2},
			{"null name", {{"k", "partition_key", 0, "none", "int"}, {NULL, "regular", -1, "none", "int"}}, 2},
			{"empty name", {{"", "partition_key", 0, "none", "int"}}, 1},
			{"null type", {{"k", "partition_key", 0, "none", NULL}}, 1},
			{"bad order", {{"k", "partition_key", 0, "sideways", "int"}}, 1},
			{"no partition key", {{"x", "regular", -1, "none", "int"}}, 1},
			{"key position hole", {{"k", "partition_key", 0, "none", "int"}, {"k2", "partition_key", 2, "none", "int"}}, 2},
			{"duplicate key position", {{"k", "partition_key", 0, "none", "int"}, {"k2", "partition_key", 0, "none", "int"}}, 2},
			{"negative key position", {{"k", "partition_key", -1, "none", "int"}}, 1},
			{"absurd key position", {{"k", "partition_key", 0, "none", "int"}, {"c", "clustering", 2147483647, "asc", "int"}}, 2},
			{"clustering hole", {{"k", "partition_key", 0, "none", "int"}, {"c", "clustering", 1, "asc", "int"}}, 2},
			{"duplicate column", {{"k", "partition_key", 0, "none", "int"}, {"x", "regular", -1, "none", "int"}, {"x", "regular", -1, "none", "int"}}, 3},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		{
			cql_error_clear(&err);
			t = NULL;
			ok(cql_schema_build_table("ks", "t", bad[i].rows, bad[i].n, NULL, 0, A, &t, &err) == CQL_ERR_MALFORMED &&
			   t == NULL && err.message[0],
			   "hostile columns refused: %s (%s)", bad[i].what, err.message);
		}
	}
	{
		cql_error_setf(&err, CQL_ERR_INVALID_ARG, "keyspace \"x\" does not exist");
		ok(cql_schema_missing(CQL_ERR_INVALID_ARG, &err), "missing keyspace error recognised");
		cql_error_setf(&err, CQL_ERR_INVALID_ARG, "no keyspace given");
		ok(!cql_schema_missing(CQL_ERR_INVALID_ARG, &err), "other invalid argument is not 'missing'");
	}
}

/* ---------------------------------------------------------------------
 * Against a node
 * ---------------------------------------------------------------------
 */
static cql_conn *conn;

static bool
has_name(char **names, int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return true;
	return false;
}

static void
check_col(const cql_table_meta *t, int idx, const char *name, cql_column_kind kind,
		  int position, cql_clustering_order order, const char *type_text,
		  cql_type_id id)
{
	const cql_column_meta *c = idx < t->ncolumns ? &t->columns[idx] : NULL;

	if (!ok(c != NULL, "column %d exists", idx))
		return;
	is_str(c->name, name, "column %d name", idx);
	ok(c->kind == kind, "%s kind %s", name, cql_column_kind_name(c->kind));
	is_int(c->position, position, "%s position", name);
	ok(c->order == order, "%s clustering order %s", name, cql_clustering_order_name(c->order));
	is_str(c->type_text, type_text, "%s type string", name);
	ok(c->type && c->type->id == id, "%s parsed type id 0x%x", name, c->type ? (unsigned) c->type->id : 0u);
}

static void
test_server(void)
{
	cql_conn_options o;
	cql_error	err;
	cql_status	st;
	char	  **names = NULL;
	int			n = 0;
	cql_table_meta *t = NULL;
	cql_udt_meta *udts = NULL;
	int			nudts = 0;
	bool		exists = false;

	cql_conn_options_init(&o);
	o.host = itest_host();
	o.port = itest_port();
	o.connect_timeout_ms = 10000;
	o.request_timeout_ms = 60000;
	cql_error_clear(&err);
	st = cql_connect(&o, &conn, &err);
	if (!ok(st == CQL_OK, "connect to %s:%d", o.host, o.port))
	{
		diag("%s: %s", cql_status_message(st), err.message);
		return;
	}

	setup_step(itest_exec(conn, "DROP KEYSPACE IF EXISTS cql_fdw_schema_t"), "drop old keyspace");
	setup_step(itest_exec(conn, "CREATE KEYSPACE cql_fdw_schema_t WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"),
			   "create keyspace");
	setup_step(itest_exec(conn, "CREATE TYPE cql_fdw_schema_t.address (street text, city text, zip int)"), "create type address");
	setup_step(itest_exec(conn, "CREATE TYPE cql_fdw_schema_t.person (name text, home frozen<address>, tags set<text>)"),
			   "create type person (nested UDT)");
	setup_step(itest_exec(conn, "CREATE TYPE cql_fdw_schema_t.\"Point\" (x int, \"Y\" int)"), "create quoted type");
	setup_step(itest_exec(conn, "CREATE TABLE cql_fdw_schema_t.events ("
					"tenant int, bucket text, ts timestamp, seq int, id uuid, "
					"owner text STATIC, who frozen<person>, home frozen<address>, "
					"tags set<text>, scores list<int>, attrs map<text, int>, "
					"embedding vector<float, 3>, note text, p frozen<\"Point\">, "
					"PRIMARY KEY ((tenant, bucket), ts, seq, id)) "
					"WITH CLUSTERING ORDER BY (ts DESC, seq ASC, id DESC)"), "create table events");
	setup_step(itest_exec(conn, "CREATE TABLE cql_fdw_schema_t.\"MixedCase\" (\"Key\" int PRIMARY KEY, \"Val\" text)"),
			   "create quoted table");
	setup_step(itest_exec(conn, "CREATE TABLE cql_fdw_schema_t.hits (page text PRIMARY KEY, n counter)"), "create counter table");
	cql_error_clear(&err);
	st = cql_schema_await_agreement(conn, 30000, &err);
	ok(st == CQL_OK, "schema agreement (%s)", err.message);

	st = cql_schema_list_keyspaces(conn, A, &names, &n, &err);
	ok(st == CQL_OK && has_name(names, n, "cql_fdw_schema_t") && has_name(names, n, "system"),
	   "list keyspaces (%d)", n);
	cql_schema_names_free(names, n, A);

	st = cql_schema_list_tables(conn, "cql_fdw_schema_t", A, &names, &n, &err);
	ok(st == CQL_OK && n == 3 && has_name(names, n, "events") && has_name(names, n, "MixedCase") &&
	   has_name(names, n, "hits"), "list tables (%d)", n);
	cql_schema_names_free(names, n, A);

	st = cql_schema_load_udts(conn, "cql_fdw_schema_t", A, &udts, &nudts, &err);
	ok(st == CQL_OK && nudts == 3, "load UDTs (%d)", nudts);
	for (int i = 0; i < nudts; i++)
		if (strcmp(udts[i].name, "person") == 0)
		{
			ok(udts[i].nfields == 3 && strcmp(udts[i].field_names[1], "home") == 0 &&
			   strcmp(udts[i].field_types[1], "frozen<address>") == 0,
			   "person fields (%s %s)", udts[i].nfields > 1 ? udts[i].field_names[1] : "",
			   udts[i].nfields > 1 ? udts[i].field_types[1] : "");
		}
	cql_schema_udts_free(udts, nudts, A);

	st = cql_schema_load_table(conn, "cql_fdw_schema_t", "events", A, &t, &err);
	if (ok(st == CQL_OK && t, "load table events (%s)", err.message))
	{
		is_int(t->ncolumns, 14, "14 columns");
		is_int(t->npartition, 2, "composite partition key");
		is_int(t->nclustering, 3, "3 clustering columns");
		ok(!t->is_view && !t->is_counter, "plain table");
		if (t->ncolumns == 14)
		{
			check_col(t, 0, "tenant", CQL_COLUMN_PARTITION_KEY, 0, CQL_ORDER_NONE, "int", CQL_TYPE_INT);
			check_col(t, 1, "bucket", CQL_COLUMN_PARTITION_KEY, 1, CQL_ORDER_NONE, "text", CQL_TYPE_VARCHAR);
			check_col(t, 2, "ts", CQL_COLUMN_CLUSTERING, 0, CQL_ORDER_DESC, "timestamp", CQL_TYPE_TIMESTAMP);
			check_col(t, 3, "seq", CQL_COLUMN_CLUSTERING, 1, CQL_ORDER_ASC, "int", CQL_TYPE_INT);
			check_col(t, 4, "id", CQL_COLUMN_CLUSTERING, 2, CQL_ORDER_DESC, "uuid", CQL_TYPE_UUID);
			check_col(t, 5, "owner", CQL_COLUMN_STATIC, -1, CQL_ORDER_NONE, "text", CQL_TYPE_VARCHAR);
			check_col(t, 6, "attrs", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "map<text, int>", CQL_TYPE_MAP);
			check_col(t, 7, "embedding", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "vector<float, 3>", CQL_TYPE_VECTOR);
			check_col(t, 8, "home", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "frozen<address>", CQL_TYPE_UDT);
			check_col(t, 9, "note", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "text", CQL_TYPE_VARCHAR);
			check_col(t, 10, "p", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "frozen<\"Point\">", CQL_TYPE_UDT);
			check_col(t, 11, "scores", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "list<int>", CQL_TYPE_LIST);
			check_col(t, 12, "tags", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "set<text>", CQL_TYPE_SET);
			check_col(t, 13, "who", CQL_COLUMN_REGULAR, -1, CQL_ORDER_NONE, "frozen<person>", CQL_TYPE_UDT);
			{
				const cql_type *emb = t->columns[7].type;
				const cql_type *who = t->columns[13].type;
				const cql_type *p = t->columns[10].type;
				const cql_type *attrs = t->columns[6].type;

				ok(emb && emb->dimension == 3 && emb->sub[0]->id == CQL_TYPE_FLOAT, "vector<float, 3> details");
				ok(attrs && attrs->sub[0]->id == CQL_TYPE_VARCHAR && attrs->sub[1]->id == CQL_TYPE_INT,
				   "map key/value types");
				ok(who && who->frozen && who->nsub == 3 && strcmp(who->field_names[0], "name") == 0 &&
				   who->sub[1]->id == CQL_TYPE_UDT && strcmp(who->sub[1]->name, "address") == 0 &&
				   who->sub[1]->nsub == 3 && who->sub[1]->sub[2]->id == CQL_TYPE_INT &&
				   who->sub[2]->id == CQL_TYPE_SET,
				   "frozen<person> with nested frozen<address> resolved");
				ok(p && strcmp(p->name, "Point") == 0 && p->nsub == 2 &&
				   strcmp(p->field_names[1], "Y") == 0, "quoted UDT and field names kept exactly");
			}
			ok(t->partition_key[0] == 0 && t->partition_key[1] == 1 &&
			   t->clustering_key[0] == 2 && t->clustering_key[2] == 4, "key index arrays");
		}
		is_int(t->nudts, 3, "table carries the keyspace UDTs");
	}
	cql_table_meta_free(t);
	t = NULL;

	st = cql_schema_load_table(conn, "cql_fdw_schema_t", "MixedCase", A, &t, &err);
	ok(st == CQL_OK && t && t->ncolumns == 2 && strcmp(t->columns[0].name, "Key") == 0 &&
	   strcmp(t->columns[1].name, "Val") == 0, "quoted table and column names");
	cql_table_meta_free(t);
	t = NULL;
	st = cql_schema_load_table(conn, "cql_fdw_schema_t", "mixedcase", A, &t, &err);
	ok(st == CQL_ERR_INVALID_ARG && cql_schema_missing(st, &err), "names are case-sensitive (%s)", err.message);

	st = cql_schema_load_table(conn, "cql_fdw_schema_t", "hits", A, &t, &err);
	ok(st == CQL_OK && t && t->is_counter && t->columns[1].type &&
	   t->columns[1].type->id == CQL_TYPE_COUNTER, "counter table flagged");
	cql_table_meta_free(t);
	t = NULL;

	/* unknown keyspace / table */
	st = cql_schema_load_table(conn, "cql_fdw_no_such_ks", "x", A, &t, &err);
	ok(st == CQL_ERR_INVALID_ARG && t == NULL && cql_schema_missing(st, &err) &&
	   strcmp(err.message, "keyspace \"cql_fdw_no_such_ks\" does not exist") == 0,
	   "unknown keyspace: %s", err.message);
	st = cql_schema_load_table(conn, "cql_fdw_schema_t", "no_such_table", A, &t, &err);
	ok(st == CQL_ERR_INVALID_ARG && t == NULL && cql_schema_missing(st, &err) &&
	   strcmp(err.message, "table \"cql_fdw_schema_t\".\"no_such_table\" does not exist") == 0,
	   "unknown table: %s", err.message);
	st = cql_schema_list_tables(conn, "cql_fdw_no_such_ks", A, &names, &n, &err);
	ok(st == CQL_ERR_INVALID_ARG && cql_schema_missing(st, &err), "list tables of unknown keyspace");
	st = cql_schema_keyspace_exists(conn, "cql_fdw_schema_t", &exists, &err);
	ok(st == CQL_OK && exists, "keyspace exists");
	st = cql_schema_keyspace_exists(conn, "cql_fdw_no_such_ks", &exists, &err);
	ok(st == CQL_OK && !exists, "keyspace does not exist");
	st = cql_schema_load_table(conn, "cql_fdw_schema_t'; DROP KEYSPACE x; --", "t", A, &t, &err);
	ok(st == CQL_ERR_INVALID_ARG && cql_schema_missing(st, &err), "quotes in names are just data");

	/* system tables and virtual tables */
	st = cql_schema_load_table(conn, "system_schema", "columns", A, &t, &err);
	ok(st == CQL_OK && t && t->npartition == 1 && t->nclustering == 2 &&
	   strcmp(t->columns[t->partition_key[0]].name, "keyspace_name") == 0,
	   "system_schema.columns loads (%s)", err.message);
	cql_table_meta_free(t);
	t = NULL;
	st = cql_schema_list_tables(conn, "system_views", A, &names, &n, &err);
	ok(st == CQL_OK && has_name(names, n, "settings"), "virtual keyspace tables listed (%d)", n);
	cql_schema_names_free(names, n, A);
	st = cql_schema_load_table(conn, "system_views", "settings", A, &t, &err);
	ok(st == CQL_OK && t && t->npartition == 1 && strcmp(t->columns[0].name, "name") == 0,
	   "virtual table system_views.settings loads (%s)", err.message);
	cql_table_meta_free(t);
	t = NULL;

	setup_step(itest_exec(conn, "DROP KEYSPACE cql_fdw_schema_t"), "drop keyspace");
	cql_conn_close(conn);
}

/* Every allocation failure point of the table builder: NOMEM, no leak. */

static void
test_pure_nomem(void)
{
	const char *addr_n[] = {"street", "zip"};
	const char *addr_t[] = {"text", "int"};
	const char *pers_n[] = {"name", "home"};
	const char *pers_t[] = {"text", "frozen<address>"};
	cql_udt_meta u[2];
	cql_column_row rows[] = {
		{"who", "regular", -1, "none", "frozen<person>"},
		{"c", "clustering", 0, "desc", "map<text, frozen<list<int>>>"},
		{"k", "partition_key", 0, "none", "int"},
	};
	long		n;
	int			bad = 0;

	u[0] = mk_udt("ks", "address", 2, addr_n, addr_t);
	u[1] = mk_udt("ks", "person", 2, pers_n, pers_t);
	for (n = 0; n < 10000; n++)
	{
		cql_table_meta *t = NULL;
		cql_error	err;
		cql_status	st;

		cql_error_clear(&err);
		fail_countdown = n;
		st = cql_schema_build_table("ks", "t", rows, 3, u, 2, &failing_allocator, &t, &err);
		fail_countdown = -1;
		if (st == CQL_OK && (!t || !t->columns[2].type))
			st = CQL_ERR_NOMEM; /* a type dropped under NOMEM: retry */
		if (st != CQL_OK && st != CQL_ERR_NOMEM)
			bad++;
		cql_table_meta_free(t);
		if (st == CQL_OK)
			break;
	}
	ok(n > 10 && n < 10000, "table builder succeeds after %ld allocation failure points", n);
	is_int(bad, 0, "every allocation failure gives NOMEM, never a crash or a leak");
}

int
main(void)
{
	plan(185);
	test_pure_types();
	test_pure_table();
	test_pure_nomem();
	test_server();
	return done_testing();
}

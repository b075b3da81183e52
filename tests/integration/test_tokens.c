/*
 * test_tokens.c
 *		Our Murmur3 tokens against the server's: tables with single-column
 *		partition keys of type int, bigint, text, uuid and blob and with
 *		composite keys (int, text) and (uuid, text, int) get many keys
 *		(text with bytes >= 0x80 to hit the sign-extension quirk of the
 *		tail, lengths across the 16-byte block boundary, empty strings in
 *		composite keys), then SELECT token(k...), k... FROM t: for every row
 *		the token we compute from the returned key bytes must equal the
 *		server's.
 *
 * Environment: CQL_HOST (127.0.0.1), CQL_PORT (9042).
 */
#include "cql_cluster.h"
#include "cql_schema.h"
#include "itest.h"

static cql_conn *conn;
static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Random valid UTF-8 text of 0..max bytes-ish, as a CQL literal body. */
static void
rand_text(char *out, size_t cap, int maxchars)
{
	static const char *pieces[] = {
		"a", "Z", "0", " ", "''", "-", "é", "ß", "ü", "Ω", "ж", "日", "本", "語",
		"€", "\xe2\x80\x8b", "😀", "𝄞", "\x7f", "~"
	};
	int			n = (int) (rng() % (uint64_t) (maxchars + 1));
	size_t		len = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++)
	{
		const char *p = pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];

		if (len + strlen(p) + 1 >= cap)
			break;
		memcpy(out + len, p, strlen(p) + 1);
		len += strlen(p);
	}
}

static void
rand_uuid(char *out)
{
	uint8_t		u[16];

	for (int i = 0; i < 16; i++)
		u[i] = (uint8_t) rng();
	cql_uuid_to_string(u, out);
}

static void
rand_hex(char *out, int maxbytes)
{
	int			n = 1 + (int) (rng() % (uint64_t) maxbytes);
	char	   *p = out;

	p += sprintf(p, "0x");
	for (int i = 0; i < n; i++)
	{
		/* bias towards bytes >= 0x80 */
		unsigned	b = (unsigned) (rng() & 0xff);

		p += sprintf(p, "%02x", (i % 3 == 0) ? (b | 0x80) : b);
	}
}

/* Insert with batches of up to 40 statements. */
typedef struct batcher
{
	char		buf[64 * 1024];
	size_t		len;
	int			n;
	int			failures;
} batcher;

static void
batch_flush(batcher *b)
{
	if (b->n == 0)
		return;
	strcat(b->buf, "APPLY BATCH");
	if (!itest_exec(conn, b->buf))
		b->failures++;
	b->len = 0;
	b->n = 0;
	b->buf[0] = '\0';
}

static void
batch_add(batcher *b, const char *stmt)
{
	if (b->n == 0)
	{
		strcpy(b->buf, "BEGIN UNLOGGED BATCH ");
		b->len = strlen(b->buf);
	}
	b->len += (size_t) snprintf(b->buf + b->len, sizeof(b->buf) - b->len, "%s; ", stmt);
	if (++b->n >= 40)
		batch_flush(b);
}

/*
 * SELECT token(pk...), pk... FROM table and compare every row.  Returns the
 * number of rows checked; *bad gets mismatches.
 */
static int
check_table(const char *table, int npk, const char *pkcols, int *bad)
{
	char		q[512];
	cql_query_params p;
	cql_pager	pg;
	cql_error	err;
	int			rows = 0;

	*bad = 0;
	snprintf(q, sizeof(q), "SELECT token(%s), %s FROM cql_fdw_tokens_t.%s", pkcols, pkcols, table);
	cql_query_params_init(&p);
	p.page_size = 250;
	cql_pager_init(&pg, conn, q, NULL, &p);
	while (!pg.done)
	{
		cql_result	page;
		cql_status	st;

		memset(&page, 0, sizeof(page));
		cql_error_clear(&err);
		st = cql_pager_next(&pg, &page, &err);
		if (st != CQL_OK)
		{
			diag("%s: %s: %s", q, cql_status_message(st), err.message);
			(*bad)++;
			cql_result_free(&page);
			break;
		}
		for (int r = 0; r < page.rows_count; r++)
		{
			const cql_elem *tok = cql_result_cell(&page, r, 0);
			int64_t		server;
			int64_t		ours;
			cql_buf		key;

			cql_buf_init(&key, &cql_malloc_allocator);
			if (cql_decode_bigint(tok->p, tok->n, &server) != CQL_OK)
			{
				(*bad)++;
				continue;
			}
			if (npk == 1)
			{
				const cql_elem *k = cql_result_cell(&page, r, 1);

				ours = cql_murmur3_token(k->p, (size_t) (k->n < 0 ? 0 : k->n));
			}
			else
			{
				cql_elem	parts[4];

				for (int i = 0; i < npk; i++)
					parts[i] = *cql_result_cell(&page, r, 1 + i);
				if (cql_routing_key_composite(&key, parts, npk) != CQL_OK)
				{
					(*bad)++;
					cql_buf_free(&key);
					continue;
				}
				ours = cql_murmur3_token(key.data, key.len);
			}
			if (ours != server)
			{
				if (*bad < 5)
				{
					diag("%s row %d: server token %" PRId64 ", ours %" PRId64, table, rows, server, ours);
					if (npk == 1)
						tap_hexdump("key", cql_result_cell(&page, r, 1)->p,
									(size_t) cql_result_cell(&page, r, 1)->n);
					else
						tap_hexdump("routing key", key.data, key.len);
				}
				(*bad)++;
			}
			cql_buf_free(&key);
			rows++;
		}
		cql_result_free(&page);
	}
	cql_pager_free(&pg);
	return rows;
}

int
main(void)
{
	cql_conn_options o;
	cql_error	err;
	cql_status	st;
	batcher    *b = calloc(1, sizeof(batcher));
	char		stmt[1024];
	char		t1[256],
				t2[256];
	int			total = 0;
	struct
	{
		const char *table;
		int			npk;
		const char *pkcols;
		int			want;
	}			tables[] = {
		{"t_int", 1, "k", 0},
		{"t_bigint", 1, "k", 0},
		{"t_text", 1, "k", 0},
		{"t_uuid", 1, "k", 0},
		{"t_blob", 1, "k", 0},
		{"t_int_text", 2, "a, b", 0},
		{"t_uuid_text_int", 3, "u, s, i", 0},
	};

	plan(20);
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
		free(b);
		return done_testing();
	}

	/* the documented vectors first: no server needed for these */
	is_int(cql_murmur3_token((const uint8_t *) "\x00\x00\x00\x01", 4), -4069959284402364209LL,
		   "token(int 1)");
	is_int(cql_murmur3_token(NULL, 0), INT64_MIN, "empty key -> minimum token");

	setup_step(itest_exec(conn, "DROP KEYSPACE IF EXISTS cql_fdw_tokens_t"), "drop old keyspace");
	setup_step(itest_exec(conn, "CREATE KEYSPACE cql_fdw_tokens_t WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"),
			   "create keyspace");
	setup_step(itest_exec(conn, "CREATE TABLE cql_fdw_tokens_t.t_int (k int PRIMARY KEY)") &&
			   itest_exec(conn, "CREATE TABLE cql_fdw_tokens_t.t_bigint (k bigint PRIMARY KEY)") &&
			   itest_exec(conn, "CREATE TABLE cql_fdw_tokens_t.t_text (k text PRIMARY KEY)") &&
			   itest_exec(conn, "CREATE TABLE cql_fdw_tokens_t.t_uuid (k uuid PRIMARY KEY)") &&
			   itest_exec(conn, "CREATE TABLE cql_fdw_tokens_t.t_blob (k blob PRIMARY KEY)") &&
			   itest_exec(conn, "CREATE TABLE cql_fdw_tokens_t.t_int_text (a int, b text, v int, PRIMARY KEY ((a, b)))") &&
			   itest_exec(conn, "CREATE TABLE cql_fdw_tokens_t.t_uuid_text_int (u uuid, s text, i int, PRIMARY KEY ((u, s, i)))"),
			   "create 7 tables");
	cql_error_clear(&err);
	st = cql_schema_await_agreement(conn, 30000, &err);
	ok(st == CQL_OK, "schema agreement (%s)", err.message);

	/* edge values first, then random ones */
	{
		const char *ints[] = {"0", "1", "-1", "2147483647", "-2147483648", "128", "-129", "255"};
		const char *bigs[] = {"0", "1", "-1", "9223372036854775807", "-9223372036854775808", "4294967296"};

		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		{
			snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_int (k) VALUES (%s)", ints[i]);
			batch_add(b, stmt);
			tables[0].want++;
		}
		for (size_t i = 0; i < sizeof(bigs) / sizeof(bigs[0]); i++)
		{
			snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_bigint (k) VALUES (%s)", bigs[i]);
			batch_add(b, stmt);
			tables[1].want++;
		}
		/* text lengths 1..40 bytes of 0xc3 0xa9 ("é") and "ÿ" tails */
		for (int len = 1; len <= 20; len++)
		{
			char		s[64] = "";

			for (int i = 0; i < len; i++)
				strcat(s, (i % 2) ? "é" : "ÿ");
			snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_text (k) VALUES ('%s')", s);
			batch_add(b, stmt);
			tables[2].want++;
		}
		batch_add(b, "INSERT INTO cql_fdw_tokens_t.t_int_text (a, b, v) VALUES (1, '', 0)");
		batch_add(b, "INSERT INTO cql_fdw_tokens_t.t_int_text (a, b, v) VALUES (0, '', 0)");
		batch_add(b, "INSERT INTO cql_fdw_tokens_t.t_int_text (a, b, v) VALUES (1, 'hello', 0)");
		tables[5].want += 3;
		batch_add(b, "INSERT INTO cql_fdw_tokens_t.t_uuid_text_int (u, s, i) VALUES (00000000-0000-0000-0000-000000000000, '', 0)");
		tables[6].want++;
	}
	for (int i = 0; i < 120; i++)
	{
		int32_t		iv = (int32_t) rng();
		int64_t		bv = (int64_t) rng();

		snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_int (k) VALUES (%d)", (int) iv);
		batch_add(b, stmt);
		snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_bigint (k) VALUES (%" PRId64 ")", bv);
		batch_add(b, stmt);
		do
			rand_text(t1, sizeof(t1), 30);
		while (!t1[0]);			/* a single-column key may not be empty */
		snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_text (k) VALUES ('%s')", t1);
		batch_add(b, stmt);
		rand_uuid(t1);
		snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_uuid (k) VALUES (%s)", t1);
		batch_add(b, stmt);
		rand_hex(t1, 40);
		snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_blob (k) VALUES (%s)", t1);
		batch_add(b, stmt);
		rand_text(t1, sizeof(t1), 12);
		snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_int_text (a, b, v) VALUES (%d, '%s', 1)",
				 (int) (int32_t) rng(), t1);
		batch_add(b, stmt);
		rand_uuid(t1);
		rand_text(t2, sizeof(t2), 12);
		snprintf(stmt, sizeof(stmt), "INSERT INTO cql_fdw_tokens_t.t_uuid_text_int (u, s, i) VALUES (%s, '%s', %d)",
				 t1, t2, (int) (int32_t) rng());
		batch_add(b, stmt);
		for (int k = 0; k < 7; k++)
			tables[k].want++;
	}
	batch_flush(b);
	is_int(b->failures, 0, "all insert batches succeeded");

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
	{
		int			bad = 0;
		int			rows = check_table(tables[i].table, tables[i].npk, tables[i].pkcols, &bad);

		/* random keys may collide (e.g. equal texts): at most 'want' rows */
		ok(rows > tables[i].want / 2 && rows <= tables[i].want,
		   "%s: %d rows read back (%d inserted)", tables[i].table, rows, tables[i].want);
		is_int(bad, 0, "%s: our token equals token(%s) for all %d rows",
			   tables[i].table, tables[i].pkcols, rows);
		total += rows;
	}
	ok(total >= 500, "compared %d keys in total", total);

	setup_step(itest_exec(conn, "DROP KEYSPACE cql_fdw_tokens_t"), "drop keyspace");
	cql_conn_close(conn);
	free(b);
	return done_testing();
}

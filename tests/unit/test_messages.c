/*
 * test_messages.c
 *		Request body builders (byte fixtures from cql-protocol.md) and
 *		response decoders: prefixes, every ERROR code for v4 and v5,
 *		handshake messages, SUPPORTED, EVENT and all RESULT kinds,
 *		including hostile counts and truncations.
 */
#include "cql_frame_int.h"
#include "tap.h"

static const cql_allocator *A = &cql_malloc_allocator;

static size_t
hex(const char *h, unsigned char *out)
{
	return tap_unhex(h, out, 4096);
}

/* ---------------------------------------------------------------------
 * Requests
 * ---------------------------------------------------------------------
 */
static void
test_startup_options_auth(void)
{
	cql_buf		b;
	unsigned char want[512];
	size_t		wn;
	size_t		start;
	const char *keys[] = {"CQL_VERSION", "COMPRESSION"};
	const char *vals[] = {"3.0.0", "lz4"};

	cql_buf_init(&b, A);
	start = cql_envelope_begin(&b, 4, 0, 0, CQL_OP_STARTUP);
	ok(cql_write_startup(&b, keys, vals, 2) == CQL_OK, "STARTUP body builds");
	ok(cql_envelope_end(&b, start, false) == CQL_OK, "STARTUP envelope ends");
	wn = hex("04 00 00 00 01 00 00 00 28 00 02"
			 "00 0b 43 51 4c 5f 56 45 52 53 49 4f 4e 00 05 33 2e 30 2e 30"
			 "00 0b 43 4f 4d 50 52 45 53 53 49 4f 4e 00 03 6c 7a 34", want);
	is_int(wn, 49, "fixture is 49 bytes");
	is_mem(b.data, b.len, want, wn, "v4 STARTUP matches the worked example");

	cql_buf_reset(&b);
	start = cql_envelope_begin(&b, 5, 0, 0, CQL_OP_STARTUP);
	cql_write_startup(&b, keys, vals, 2);
	cql_envelope_end(&b, start, true);	/* STARTUP is v5: never compressed */
	want[0] = 0x05;
	is_mem(b.data, b.len, want, wn, "v5 STARTUP differs only in byte 0");

	cql_buf_reset(&b);
	start = cql_envelope_begin(&b, 5, 0, 0, CQL_OP_OPTIONS);
	ok(cql_write_options(&b) == CQL_OK && cql_envelope_end(&b, start, false) == CQL_OK, "OPTIONS builds");
	wn = hex("05 00 00 00 05 00 00 00 00", want);
	is_mem(b.data, b.len, want, wn, "v5 OPTIONS envelope");

	/* AUTH_RESPONSE with the SASL PLAIN token */
	{
		cql_buf		tok;

		cql_buf_init(&tok, A);
		ok(cql_sasl_plain_token(&tok, "cassandra", "cassandra") == CQL_OK, "SASL PLAIN token builds");
		wn = hex("00 63 61 73 73 61 6e 64 72 61 00 63 61 73 73 61 6e 64 72 61", want);
		is_mem(tok.data, tok.len, want, wn, "token is \\0user\\0pass");
		cql_buf_reset(&b);
		start = cql_envelope_begin(&b, 4, 0, 1, CQL_OP_AUTH_RESPONSE);
		ok(cql_write_auth_response(&b, tok.data, (int32_t) tok.len) == CQL_OK, "AUTH_RESPONSE body");
		cql_envelope_end(&b, start, false);
		wn = hex("04 00 00 01 0f 00 00 00 18 00 00 00 14"
				 "00 63 61 73 73 61 6e 64 72 61 00 63 61 73 73 61 6e 64 72 61", want);
		is_mem(b.data, b.len, want, wn, "v4 AUTH_RESPONSE matches the worked example");
		cql_buf_reset(&tok);
		ok(cql_sasl_plain_token(&tok, "", "") == CQL_OK && tok.len == 2, "empty user/password token is two NULs");
		is_int(cql_sasl_plain_token(&tok, NULL, "x"), CQL_ERR_INVALID_ARG, "NULL user refused");
		cql_buf_free(&tok);
	}
	cql_buf_reset(&b);
	ok(cql_write_auth_response(&b, NULL, -1) == CQL_OK, "null token");
	wn = hex("ff ff ff ff", want);
	is_mem(b.data, b.len, want, wn, "null token is [bytes] -1");
	is_int(cql_write_auth_response(&b, NULL, 5), CQL_ERR_INVALID_ARG, "NULL token with length refused");
	is_int(cql_write_auth_response(&b, (const uint8_t *) "x", -2), CQL_ERR_INVALID_ARG, "length -2 refused");

	/* DSE: first token is the mechanism name */
	cql_buf_reset(&b);
	cql_write_auth_response(&b, (const uint8_t *) "PLAIN", 5);
	wn = hex("00 00 00 05 50 4c 41 49 4e", want);
	is_mem(b.data, b.len, want, wn, "AUTH_RESPONSE 'PLAIN'");

	/* REGISTER */
	{
		const char *ev[] = {"TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"};

		cql_buf_reset(&b);
		ok(cql_write_register(&b, ev, 3) == CQL_OK, "REGISTER builds");
		wn = hex("00 03 00 0f 54 4f 50 4f 4c 4f 47 59 5f 43 48 41 4e 47 45"
				 "00 0d 53 54 41 54 55 53 5f 43 48 41 4e 47 45"
				 "00 0d 53 43 48 45 4d 41 5f 43 48 41 4e 47 45", want);
		is_mem(b.data, b.len, want, wn, "REGISTER body is a [string list]");
		is_int(cql_write_register(&b, NULL, 1), CQL_ERR_INVALID_ARG, "REGISTER with NULL list refused");
	}

	/* validation of [string] lengths */
	{
		char	   *lng = malloc(70001);
		const char *k2[] = {"K"};
		const char *v2[1];

		memset(lng, 'x', 70000);
		lng[70000] = '\0';
		v2[0] = lng;
		cql_buf_reset(&b);
		is_int(cql_write_startup(&b, k2, v2, 1), CQL_ERR_TOO_LARGE, "STARTUP value over 65535 refused");
		is_int(b.len, 0, "nothing written");
		is_int(cql_write_startup(&b, k2, v2, -1), CQL_ERR_INVALID_ARG, "negative count refused");
		free(lng);
	}
	cql_buf_free(&b);
}

static void
test_query(void)
{
	cql_buf		b;
	unsigned char want[512];
	size_t		wn;
	size_t		start;
	cql_query_params p;
	const char *q = "SELECT key FROM system.local";

	cql_buf_init(&b, A);
	cql_query_params_init(&p);
	is_int(p.consistency, CQL_CONSISTENCY_ONE, "default consistency ONE");
	ok(p.default_timestamp == CQL_NO_TIMESTAMP, "default: no timestamp");
	{
		cql_query_params p2 = CQL_QUERY_PARAMS_INIT;

		ok(memcmp(&p, &p2, sizeof(p)) == 0 || (p2.consistency == p.consistency &&
											   p2.default_timestamp == p.default_timestamp),
		   "CQL_QUERY_PARAMS_INIT matches cql_query_params_init");
	}

	start = cql_envelope_begin(&b, 4, 0, 1, CQL_OP_QUERY);
	ok(cql_write_query(&b, 4, q, &p) == CQL_OK, "v4 QUERY body");
	cql_envelope_end(&b, start, false);
	wn = hex("04 00 00 01 07 00 00 00 23 00 00 00 1c"
			 "53 45 4c 45 43 54 20 6b 65 79 20 46 52 4f 4d 20 73 79 73 74 65 6d 2e 6c 6f 63 61 6c"
			 "00 01 00", want);
	is_int(wn, 44, "fixture is 44 bytes");
	is_mem(b.data, b.len, want, wn, "v4 QUERY matches the worked example");

	cql_buf_reset(&b);
	start = cql_envelope_begin(&b, 5, 0, 1, CQL_OP_QUERY);
	ok(cql_write_query(&b, 5, q, &p) == CQL_OK, "v5 QUERY body");
	cql_envelope_end(&b, start, false);
	want[0] = 0x05;
	want[8] = 0x26;
	wn = 43;
	wn += hex("00 00 00 00", want + wn);
	is_mem(b.data, b.len, want, wn, "v5 QUERY has 4-byte flags, length 38");

	/* every option, v4 */
	{
		cql_value_ref v[3] = {{(const uint8_t *) "\x00\x00\x00\x2a", 4}, {NULL, CQL_VALUE_NULL}, {NULL, CQL_VALUE_UNSET}};

		cql_query_params_init(&p);
		p.consistency = CQL_CONSISTENCY_LOCAL_QUORUM;
		p.serial_consistency = CQL_CONSISTENCY_LOCAL_SERIAL;
		p.page_size = 5000;
		p.paging_state = (const uint8_t *) "\xab\xcd";
		p.paging_state_len = 2;
		p.default_timestamp = 1700000000000000LL;
		p.skip_metadata = true;
		p.nvalues = 3;
		p.values = v;
		cql_buf_reset(&b);
		ok(cql_write_query(&b, 4, "Q", &p) == CQL_OK, "v4 QUERY with every option");
		wn = hex("00 00 00 01 51"		/* query */
				 "00 06"				/* LOCAL_QUORUM */
				 "3f"					/* VALUES|SKIP|PAGE|PAGING|SERIAL|TS */
				 "00 03 00 00 00 04 00 00 00 2a ff ff ff ff ff ff ff fe"
				 "00 00 13 88"			/* page size 5000 */
				 "00 00 00 02 ab cd"	/* paging state */
				 "00 09"				/* LOCAL_SERIAL */
				 "00 06 0a 24 18 1e 40 00",	/* timestamp */
				 want);
		is_mem(b.data, b.len, want, wn, "v4 QUERY options in spec order");

		p.keyspace = "ks";
		p.now_in_seconds = 1234;
		cql_buf_reset(&b);
		is_int(cql_write_query(&b, 4, "Q", &p), CQL_ERR_UNSUPPORTED, "keyspace option refused on v4");
		is_int(b.len, 0, "nothing written on refusal");
		p.keyspace = NULL;
		is_int(cql_write_query(&b, 4, "Q", &p), CQL_ERR_UNSUPPORTED, "now_in_seconds refused on v4");
		p.keyspace = "ks";
		ok(cql_write_query(&b, 5, "Q", &p) == CQL_OK, "v5 QUERY with every option");
		wn = hex("00 00 00 01 51 00 06"
				 "00 00 01 bf"
				 "00 03 00 00 00 04 00 00 00 2a ff ff ff ff ff ff ff fe"
				 "00 00 13 88 00 00 00 02 ab cd 00 09 00 06 0a 24 18 1e 40 00"
				 "00 02 6b 73"			/* keyspace */
				 "00 00 04 d2",			/* now_in_seconds */
				 want);
		is_mem(b.data, b.len, want, wn, "v5 QUERY options incl. keyspace and now_in_seconds");

		/* v3 has no "unset" */
		cql_query_params_init(&p);
		p.nvalues = 3;
		p.values = v;
		cql_buf_reset(&b);
		is_int(cql_write_query(&b, 3, "Q", &p), CQL_ERR_UNSUPPORTED, "unset value refused on v3");
		p.nvalues = 2;
		ok(cql_write_query(&b, 3, "Q", &p) == CQL_OK, "v3 QUERY with a null value");
		v[1].n = -3;
		is_int(cql_write_query(&b, 4, "Q", &p), CQL_ERR_INVALID_ARG, "value length -3 refused");
		v[1].n = 4;
		v[1].p = NULL;
		is_int(cql_write_query(&b, 4, "Q", &p), CQL_ERR_INVALID_ARG, "NULL value pointer refused");
		v[1].n = -1;
		p.nvalues = 70000;
		is_int(cql_write_query(&b, 4, "Q", &p), CQL_ERR_TOO_LARGE, "more than 65535 values refused");
		p.nvalues = 1;
		p.values = NULL;
		is_int(cql_write_query(&b, 4, "Q", &p), CQL_ERR_INVALID_ARG, "values NULL refused");
		cql_query_params_init(&p);
		p.page_size = -1;
		is_int(cql_write_query(&b, 4, "Q", &p), CQL_ERR_INVALID_ARG, "negative page size refused");
		cql_query_params_init(&p);
		is_int(cql_write_query(&b, 2, "Q", &p), CQL_ERR_INVALID_ARG, "version 2 refused");
		is_int(cql_write_query(&b, 6, "Q", &p), CQL_ERR_INVALID_ARG, "version 6 refused");
		is_int(cql_write_query(&b, 4, NULL, &p), CQL_ERR_INVALID_ARG, "NULL query refused");
		is_int(cql_write_query(&b, 4, "Q", NULL), CQL_ERR_INVALID_ARG, "NULL params refused");
	}
	/* named values */
	{
		cql_value_ref v[1] = {{(const uint8_t *) "\x01", 1}};
		const char *names[1] = {"k"};

		cql_query_params_init(&p);
		p.nvalues = 1;
		p.values = v;
		p.value_names = names;
		p.default_timestamp = 0;	/* 0 is a real timestamp */
		cql_buf_reset(&b);
		ok(cql_write_query(&b, 4, "Q", &p) == CQL_OK, "named values");
		wn = hex("00 00 00 01 51 00 01 61 00 01 00 01 6b 00 00 00 01 01 00 00 00 00 00 00 00 00", want);
		is_mem(b.data, b.len, want, wn, "WITH_NAMES_FOR_VALUES layout, timestamp 0 sent");
	}
	cql_buf_free(&b);
}

static void
test_prepare_execute_batch(void)
{
	cql_buf		b;
	unsigned char want[512];
	size_t		wn;
	cql_query_params p;
	const uint8_t id[4] = {0xde, 0xad, 0xbe, 0xef};
	const uint8_t rmid[2] = {0x12, 0x34};
	cql_value_ref v[2] = {{(const uint8_t *) "\x00\x00\x00\x01", 4}, {(const uint8_t *) "ab", 2}};

	cql_buf_init(&b, A);
	ok(cql_write_prepare(&b, 4, "SELECT 1", NULL) == CQL_OK, "v4 PREPARE");
	wn = hex("00 00 00 08 53 45 4c 45 43 54 20 31", want);
	is_mem(b.data, b.len, want, wn, "v4 PREPARE is a [long string]");
	cql_buf_reset(&b);
	ok(cql_write_prepare(&b, 5, "SELECT 1", NULL) == CQL_OK, "v5 PREPARE");
	wn = hex("00 00 00 08 53 45 4c 45 43 54 20 31 00 00 00 00", want);
	is_mem(b.data, b.len, want, wn, "v5 PREPARE adds [int] flags 0");
	cql_buf_reset(&b);
	ok(cql_write_prepare(&b, 5, "SELECT 1", "ks") == CQL_OK, "v5 PREPARE with keyspace");
	wn = hex("00 00 00 08 53 45 4c 45 43 54 20 31 00 00 00 01 00 02 6b 73", want);
	is_mem(b.data, b.len, want, wn, "v5 PREPARE WITH_KEYSPACE");
	is_int(cql_write_prepare(&b, 4, "SELECT 1", "ks"), CQL_ERR_UNSUPPORTED, "keyspace on v4 PREPARE refused");

	cql_query_params_init(&p);
	p.nvalues = 2;
	p.values = v;
	p.skip_metadata = true;
	p.page_size = 100;
	cql_buf_reset(&b);
	ok(cql_write_execute(&b, 4, id, 4, NULL, 0, &p) == CQL_OK, "v4 EXECUTE");
	wn = hex("00 04 de ad be ef 00 01 07 00 02 00 00 00 04 00 00 00 01 00 00 00 02 61 62 00 00 00 64", want);
	is_mem(b.data, b.len, want, wn, "v4 EXECUTE layout");
	cql_buf_reset(&b);
	ok(cql_write_execute(&b, 5, id, 4, rmid, 2, &p) == CQL_OK, "v5 EXECUTE");
	wn = hex("00 04 de ad be ef 00 02 12 34 00 01 00 00 00 07 00 02 00 00 00 04 00 00 00 01 00 00 00 02 61 62 00 00 00 64", want);
	is_mem(b.data, b.len, want, wn, "v5 EXECUTE has result_metadata_id and [int] flags");
	is_int(cql_write_execute(&b, 5, id, 4, NULL, 0, &p), CQL_ERR_INVALID_ARG, "v5 EXECUTE without result_metadata_id refused");
	is_int(cql_write_execute(&b, 4, NULL, 0, NULL, 0, &p), CQL_ERR_INVALID_ARG, "EXECUTE without id refused");

	/* BATCH: mixed query string and prepared id */
	{
		cql_batch_stmt s[2];

		memset(s, 0, sizeof(s));
		s[0].query = "INSERT";
		s[1].id = id;
		s[1].id_len = 4;
		s[1].nvalues = 2;
		s[1].values = v;
		cql_query_params_init(&p);
		p.consistency = CQL_CONSISTENCY_QUORUM;
		cql_buf_reset(&b);
		ok(cql_write_batch(&b, 4, CQL_BATCH_UNLOGGED, s, 2, &p) == CQL_OK, "v4 BATCH");
		wn = hex("01 00 02"
				 "00 00 00 00 06 49 4e 53 45 52 54 00 00"
				 "01 00 04 de ad be ef 00 02 00 00 00 04 00 00 00 01 00 00 00 02 61 62"
				 "00 04 00", want);
		is_mem(b.data, b.len, want, wn, "v4 BATCH layout");

		p.serial_consistency = CQL_CONSISTENCY_SERIAL;
		p.default_timestamp = 1;
		p.keyspace = "k";
		p.page_size = 10;		/* ignored by BATCH */
		p.skip_metadata = true; /* ignored by BATCH */
		cql_buf_reset(&b);
		ok(cql_write_batch(&b, 5, CQL_BATCH_LOGGED, s, 1, &p) == CQL_OK, "v5 BATCH with options");
		wn = hex("00 00 01 00 00 00 00 06 49 4e 53 45 52 54 00 00"
				 "00 04 00 00 00 b0 00 08 00 00 00 00 00 00 00 01 00 01 6b", want);
		is_mem(b.data, b.len, want, wn, "v5 BATCH flags 0xb0 and options");
		is_int(cql_write_batch(&b, 4, CQL_BATCH_LOGGED, s, 1, &p), CQL_ERR_UNSUPPORTED, "keyspace on v4 BATCH refused");
		p.keyspace = NULL;
		is_int(cql_write_batch(&b, 4, 3, s, 1, &p), CQL_ERR_INVALID_ARG, "batch type 3 refused");
		cql_buf_reset(&b);
		ok(cql_write_batch(&b, 4, CQL_BATCH_COUNTER, s, 0, &p) == CQL_OK, "empty COUNTER batch");
		wn = hex("02 00 00 00 04 30 00 08 00 00 00 00 00 00 00 01", want);
		is_mem(b.data, b.len, want, wn, "empty COUNTER batch with serial + timestamp");
		s[0].query = NULL;
		is_int(cql_write_batch(&b, 4, CQL_BATCH_LOGGED, s, 1, &p), CQL_ERR_INVALID_ARG, "statement without query or id refused");
	}
	cql_buf_free(&b);
}

/* ---------------------------------------------------------------------
 * Responses
 * ---------------------------------------------------------------------
 */
static void
test_prefixes(void)
{
	cql_buf		b;
	cql_response_extras ex;
	size_t		off;
	const char *w[] = {"warn one", "warn two"};

	cql_buf_init(&b, A);
	for (int i = 0; i < 16; i++)
		cql_buf_u8(&b, (uint8_t) (0xA0 + i));
	cql_buf_string_list(&b, w, 2);
	cql_buf_u16(&b, 1);
	cql_buf_string(&b, "key");
	cql_buf_bytes(&b, "val", 3);
	cql_buf_i32(&b, CQL_RESULT_VOID);

	ok(cql_response_strip(b.data, b.len, CQL_FLAG_TRACING | CQL_FLAG_WARNING | CQL_FLAG_CUSTOM_PAYLOAD,
						  A, &ex, &off) == CQL_OK, "all prefixes strip");
	ok(ex.has_tracing_id && ex.tracing_id[0] == 0xA0 && ex.tracing_id[15] == 0xAF, "tracing id");
	is_int(ex.nwarnings, 2, "two warnings");
	is_str(ex.warnings[1], "warn two", "warning text");
	is_int(ex.ncustom, 1, "one custom payload entry");
	is_int(ex.custom_payload_len, 2 + 5 + 7, "custom payload raw length");
	is_int(off, b.len - 4, "message starts after the prefixes");
	cql_response_extras_free(&ex, A);
	ok(ex.warnings == NULL && ex.nwarnings == 0, "extras freed");

	ok(cql_response_strip(b.data, b.len, 0, A, &ex, &off) == CQL_OK && off == 0, "no flags, nothing stripped");
	ok(cql_response_strip(b.data + 16, b.len - 16, CQL_FLAG_WARNING, A, &ex, &off) == CQL_OK &&
	   ex.nwarnings == 2 && !ex.has_tracing_id, "warnings only");
	cql_response_extras_free(&ex, A);
	is_int(cql_response_strip(b.data, 10, CQL_FLAG_TRACING, A, &ex, &off), CQL_ERR_TRUNCATED, "short tracing id");
	is_int(cql_response_strip(b.data, 20, CQL_FLAG_TRACING | CQL_FLAG_WARNING, A, &ex, &off),
		   CQL_ERR_MALFORMED, "warning count larger than the bytes left");
	is_int(cql_response_strip(b.data, 30, CQL_FLAG_TRACING | CQL_FLAG_WARNING, A, &ex, &off),
		   CQL_ERR_TRUNCATED, "second warning cut short");
	ok(ex.warnings == NULL && ex.nwarnings == 0, "nothing left allocated after a failed strip");
	{
		uint8_t		bad[] = {0xFF, 0xFF, 0, 1, 'x'};

		is_int(cql_response_strip(bad, sizeof(bad), CQL_FLAG_WARNING, A, &ex, &off), CQL_ERR_MALFORMED,
			   "65535 warnings in 5 bytes refused before allocating");
		is_int(cql_response_strip(bad, sizeof(bad), CQL_FLAG_CUSTOM_PAYLOAD, A, &ex, &off), CQL_ERR_TRUNCATED,
			   "custom payload count past the end");
	}
	cql_buf_free(&b);
}

static cql_buf eb;

static void
err_begin(int32_t code, const char *msg)
{
	cql_buf_reset(&eb);
	cql_buf_i32(&eb, code);
	cql_buf_string(&eb, msg);
}

static void
test_errors(void)
{
	cql_error	e;
	uint8_t		ipv4[4] = {10, 0, 0, 7};
	uint8_t		ipv6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	const int32_t simple[] = {0x0000, 0x000A, 0x0100, 0x1001, 0x1002, 0x1003, 0x1600,
	0x2000, 0x2100, 0x2200, 0x2300};
	const char *simple_names[] = {"Server_error", "Protocol_error", "Authentication_error",
		"Overloaded", "Is_bootstrapping", "Truncate_error", "CDC_write_failure", "Syntax_error",
	"Unauthorized", "Invalid", "Config_error"};

	cql_buf_init(&eb, A);
	cql_error_clear(&e);
	is_int(e.status, CQL_OK, "cleared error has status OK");
	is_int(e.code, -1, "cleared error has code -1");

	for (int v = 4; v <= 5; v++)
	{
		for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		{
			err_begin(simple[i], "boom");
			ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.code == simple[i] &&
			   strcmp(e.message, "boom") == 0 && e.status == CQL_ERR_SERVER,
			   "v%d %s decodes", v, simple_names[i]);
			is_str(cql_error_code_name(simple[i]), simple_names[i], "name of 0x%04x", simple[i]);
		}

		err_begin(CQL_ERRCODE_UNAVAILABLE, "Cannot achieve consistency level QUORUM");
		cql_buf_u16(&eb, CQL_CONSISTENCY_QUORUM);
		cql_buf_i32(&eb, 2);
		cql_buf_i32(&eb, 1);
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK, "v%d Unavailable", v);
		ok(e.consistency == 4 && e.blockfor == 2 && e.alive == 1, "v%d Unavailable cl/required/alive", v);
		is_str(cql_error_code_name(e.code), "Unavailable", "Unavailable name");

		err_begin(CQL_ERRCODE_WRITE_TIMEOUT, "wt");
		cql_buf_u16(&eb, CQL_CONSISTENCY_LOCAL_QUORUM);
		cql_buf_i32(&eb, 1);
		cql_buf_i32(&eb, 2);
		cql_buf_string(&eb, "SIMPLE");
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.consistency == 6 && e.received == 1 &&
		   e.blockfor == 2 && strcmp(e.write_type, "SIMPLE") == 0 && e.contentions == -1,
		   "v%d Write_timeout SIMPLE", v);

		err_begin(CQL_ERRCODE_WRITE_TIMEOUT, "cas");
		cql_buf_u16(&eb, CQL_CONSISTENCY_SERIAL);
		cql_buf_i32(&eb, 0);
		cql_buf_i32(&eb, 1);
		cql_buf_string(&eb, "CAS");
		if (v == 5)
		{
			cql_buf_u16(&eb, 3);
			ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.contentions == 3 &&
			   strcmp(e.write_type, "CAS") == 0, "v5 Write_timeout CAS contentions");
			is_int(cql_decode_error(eb.data, eb.len - 1, v, &e), CQL_ERR_TRUNCATED, "v5 CAS without contentions");
		}
		else
			ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.contentions == -1,
			   "v4 Write_timeout CAS has no contentions");

		err_begin(CQL_ERRCODE_READ_TIMEOUT, "rt");
		cql_buf_u16(&eb, CQL_CONSISTENCY_ONE);
		cql_buf_i32(&eb, 0);
		cql_buf_i32(&eb, 1);
		cql_buf_u8(&eb, 1);
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.received == 0 && e.blockfor == 1 &&
		   e.data_present, "v%d Read_timeout data_present", v);
		eb.data[eb.len - 1] = 0;
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && !e.data_present, "v%d Read_timeout no data", v);

		/* Read_failure */
		err_begin(CQL_ERRCODE_READ_FAILURE, "rf");
		cql_buf_u16(&eb, CQL_CONSISTENCY_ALL);
		cql_buf_i32(&eb, 1);
		cql_buf_i32(&eb, 3);
		if (v == 4)
			cql_buf_i32(&eb, 2);
		else
		{
			cql_buf_i32(&eb, 2);
			cql_buf_u8(&eb, 4);
			cql_buf_put(&eb, ipv4, 4);
			cql_buf_u16(&eb, 1);
			cql_buf_u8(&eb, 16);
			cql_buf_put(&eb, ipv6, 16);
			cql_buf_u16(&eb, 6);
		}
		cql_buf_u8(&eb, 0);
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK, "v%d Read_failure", v);
		ok(e.consistency == 5 && e.received == 1 && e.blockfor == 3 && e.numfailures == 2 && !e.data_present,
		   "v%d Read_failure fields", v);
		if (v == 5)
		{
			ok(e.nreasons == 2 && e.reasons[0].addr_len == 4 && memcmp(e.reasons[0].addr, ipv4, 4) == 0 &&
			   e.reasons[0].code == 1, "v5 Read_failure reason 0 (IPv4, READ_TOO_MANY_TOMBSTONES)");
			ok(e.reasons[1].addr_len == 16 && memcmp(e.reasons[1].addr, ipv6, 16) == 0 &&
			   e.reasons[1].code == 6, "v5 Read_failure reason 1 (IPv6, INDEX_NOT_AVAILABLE)");
		}
		else
			is_int(e.nreasons, 0, "v4 Read_failure has no reason map");
		ok(cql_error_is_tombstone_failure(&e) == (v == 5),
		   "v%d Read_failure: a tombstone failure by its reason map only", v);
		if (v == 4)
		{
			snprintf(e.message, sizeof(e.message), "%s",
					 "Operation failed - received 0 responses and 1 failures: READ_TOO_MANY_TOMBSTONES from /127.0.0.1:7000");
			ok(cql_error_is_tombstone_failure(&e), "v4 Read_failure: a tombstone failure by its message");
		}

		/* Write_failure */
		err_begin(CQL_ERRCODE_WRITE_FAILURE, "wf");
		cql_buf_u16(&eb, CQL_CONSISTENCY_TWO);
		cql_buf_i32(&eb, 0);
		cql_buf_i32(&eb, 2);
		if (v == 4)
			cql_buf_i32(&eb, 1);
		else
		{
			cql_buf_i32(&eb, 1);
			cql_buf_u8(&eb, 4);
			cql_buf_put(&eb, ipv4, 4);
			cql_buf_u16(&eb, 0);
		}
		cql_buf_string(&eb, "BATCH_LOG");
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.consistency == 2 && e.blockfor == 2 &&
		   e.numfailures == 1 && strcmp(e.write_type, "BATCH_LOG") == 0, "v%d Write_failure", v);
		if (v == 5)
			ok(e.nreasons == 1 && e.reasons[0].code == 0 && e.reasons[0].addr[3] == 7, "v5 Write_failure reason");
		ok(!cql_error_is_tombstone_failure(&e), "v%d Write_failure is no tombstone failure", v);

		/* CAS_write_unknown */
		err_begin(CQL_ERRCODE_CAS_WRITE_UNKNOWN, "cwu");
		cql_buf_u16(&eb, CQL_CONSISTENCY_LOCAL_SERIAL);
		cql_buf_i32(&eb, 1);
		cql_buf_i32(&eb, 2);
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.consistency == 9 && e.received == 1 &&
		   e.blockfor == 2, "v%d CAS_write_unknown", v);
		is_str(cql_error_code_name(e.code), "CAS_write_unknown", "CAS_write_unknown name");

		/* Function_failure */
		{
			const char *args[] = {"int", "text"};

			err_begin(CQL_ERRCODE_FUNCTION_FAILURE, "ff");
			cql_buf_string(&eb, "ks");
			cql_buf_string(&eb, "fn");
			cql_buf_string_list(&eb, args, 2);
			ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && strcmp(e.keyspace, "ks") == 0 &&
			   strcmp(e.function, "fn") == 0 && e.nargs == 2 && strcmp(e.arg_types, "int, text") == 0,
			   "v%d Function_failure", v);
		}

		/* Already_exists */
		err_begin(CQL_ERRCODE_ALREADY_EXISTS, "ae");
		cql_buf_string(&eb, "ks");
		cql_buf_string(&eb, "t");
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && strcmp(e.keyspace, "ks") == 0 &&
		   strcmp(e.table, "t") == 0, "v%d Already_exists table", v);
		err_begin(CQL_ERRCODE_ALREADY_EXISTS, "ae");
		cql_buf_string(&eb, "ks");
		cql_buf_string(&eb, "");
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.table[0] == '\0', "v%d Already_exists keyspace", v);

		/* Unprepared */
		err_begin(CQL_ERRCODE_UNPREPARED, "up");
		cql_buf_short_bytes(&eb, "\x01\x02\x03", 3);
		ok(cql_decode_error(eb.data, eb.len, v, &e) == CQL_OK && e.unprepared_id_len == 3 &&
		   memcmp(e.unprepared_id, "\x01\x02\x03", 3) == 0, "v%d Unprepared id", v);
	}

	/* hostile / odd error bodies */
	err_begin(CQL_ERRCODE_READ_FAILURE, "rf");
	cql_buf_u16(&eb, 1);
	cql_buf_i32(&eb, 1);
	cql_buf_i32(&eb, 1);
	cql_buf_i32(&eb, 0x7FFFFFFF);
	cql_buf_u8(&eb, 0);
	is_int(cql_decode_error(eb.data, eb.len, 5, &e), CQL_ERR_MALFORMED, "v5 reason map count 2^31-1 refused");
	ok(cql_decode_error(eb.data, eb.len, 4, &e) == CQL_OK && e.numfailures == 0x7FFFFFFF, "v4 numfailures is just a number");
	eb.len -= 5;
	cql_buf_i32(&eb, -1);
	cql_buf_u8(&eb, 0);
	is_int(cql_decode_error(eb.data, eb.len, 5, &e), CQL_ERR_MALFORMED, "negative failure count refused");
	err_begin(CQL_ERRCODE_READ_FAILURE, "rf");
	cql_buf_u16(&eb, 1);
	cql_buf_i32(&eb, 1);
	cql_buf_i32(&eb, 1);
	cql_buf_i32(&eb, 1);
	cql_buf_u8(&eb, 5);
	cql_buf_put(&eb, "abcde", 5);
	cql_buf_u16(&eb, 0);
	cql_buf_u8(&eb, 0);
	is_int(cql_decode_error(eb.data, eb.len, 5, &e), CQL_ERR_MALFORMED, "5-byte inetaddr refused");
	/* many reasons: the count is kept, entries truncated to the array */
	err_begin(CQL_ERRCODE_WRITE_FAILURE, "wf");
	cql_buf_u16(&eb, 1);
	cql_buf_i32(&eb, 1);
	cql_buf_i32(&eb, 1);
	cql_buf_i32(&eb, 20);
	for (int i = 0; i < 20; i++)
	{
		cql_buf_u8(&eb, 4);
		cql_buf_put(&eb, ipv4, 4);
		cql_buf_u16(&eb, (uint16_t) i);
	}
	cql_buf_string(&eb, "SIMPLE");
	ok(cql_decode_error(eb.data, eb.len, 5, &e) == CQL_OK && e.nreasons == 20 &&
	   e.reasons[CQL_ERROR_MAX_REASONS - 1].code == CQL_ERROR_MAX_REASONS - 1 &&
	   strcmp(e.write_type, "SIMPLE") == 0, "20 reasons: count kept, first entries stored");
	/* unknown code keeps message */
	err_begin(0x7777, "mystery");
	cql_buf_put(&eb, "trailing", 8);
	ok(cql_decode_error(eb.data, eb.len, 4, &e) == CQL_OK && e.code == 0x7777 &&
	   strcmp(e.message, "mystery") == 0, "unknown error code: code + message");
	is_str(cql_error_code_name(0x7777), "Unknown", "unknown code name");
	/* long message is truncated, not overflowed */
	{
		char		lng[2000];

		memset(lng, 'm', sizeof(lng) - 1);
		lng[sizeof(lng) - 1] = '\0';
		err_begin(CQL_ERRCODE_INVALID, lng);
		ok(cql_decode_error(eb.data, eb.len, 4, &e) == CQL_OK && strlen(e.message) == sizeof(e.message) - 1,
		   "long message truncated to the buffer");
	}
	/* host is preserved, truncated bodies fail */
	strcpy(e.host, "10.0.0.1:9042");
	err_begin(CQL_ERRCODE_UNAVAILABLE, "u");
	ok(cql_decode_error(eb.data, eb.len, 4, &e) == CQL_ERR_TRUNCATED, "Unavailable without fields is truncated");
	is_str(e.host, "10.0.0.1:9042", "host preserved by decode");
	is_int(cql_decode_error(eb.data, 3, 4, &e), CQL_ERR_TRUNCATED, "3-byte error body");
	{
		uint8_t		hostile[] = {0, 0, 0x22, 0, 0xFF, 0xFF, 'a'};

		is_int(cql_decode_error(hostile, sizeof(hostile), 4, &e), CQL_ERR_TRUNCATED, "message length past the end");
	}
	err_begin(CQL_ERRCODE_UNPREPARED, "up");
	{
		uint8_t		longid[100];

		memset(longid, 0x5a, sizeof(longid));
		cql_buf_short_bytes(&eb, longid, 100);
		ok(cql_decode_error(eb.data, eb.len, 4, &e) == CQL_OK && e.unprepared_id_len == 100 &&
		   e.unprepared_id[63] == 0x5a, "100-byte unprepared id: length kept, copy truncated");
	}

	cql_error_setf(&e, CQL_ERR_TIMEOUT, "timed out after %d ms", 500);
	ok(e.status == CQL_ERR_TIMEOUT && e.code == -1 && strcmp(e.message, "timed out after 500 ms") == 0,
	   "cql_error_setf sets a local error");
	is_str(e.host, "10.0.0.1:9042", "cql_error_setf keeps host");
	ok(e.unprepared_id_len == 0, "cql_error_setf clears decoded fields");
	cql_buf_free(&eb);
}

static void
test_handshake_messages(void)
{
	cql_buf		b;
	char	   *cls = NULL;
	const uint8_t *tok;
	int32_t		tn;
	cql_supported s;

	cql_buf_init(&b, A);
	ok(cql_decode_ready(NULL, 0) == CQL_OK, "READY with empty body");

	cql_buf_string(&b, "org.apache.cassandra.auth.PasswordAuthenticator");
	ok(cql_decode_authenticate(b.data, b.len, A, &cls) == CQL_OK, "AUTHENTICATE decodes");
	is_str(cls, "org.apache.cassandra.auth.PasswordAuthenticator", "authenticator class");
	cql_free(A, cls);
	is_int(cql_decode_authenticate(b.data, 5, A, &cls), CQL_ERR_TRUNCATED, "truncated AUTHENTICATE");
	ok(cls == NULL, "no class on error");

	cql_buf_reset(&b);
	cql_buf_bytes(&b, NULL, -1);
	ok(cql_decode_auth_token(b.data, b.len, &tok, &tn) == CQL_OK && tn == -1 && tok == NULL, "AUTH_SUCCESS null token");
	cql_buf_reset(&b);
	cql_buf_bytes(&b, "PLAIN-START", 11);
	ok(cql_decode_auth_token(b.data, b.len, &tok, &tn) == CQL_OK && tn == 11 && memcmp(tok, "PLAIN-START", 11) == 0,
	   "AUTH_CHALLENGE token");
	is_int(cql_decode_auth_token(b.data, 8, &tok, &tn), CQL_ERR_TRUNCATED, "token past the end");

	/* SUPPORTED */
	{
		const char *cv[] = {"3.4.7"};
		const char *comp[] = {"snappy", "lz4"};
		const char *pv[] = {"3/v3", "4/v4", "5/v5", "6/v6-beta"};

		cql_buf_reset(&b);
		cql_buf_u16(&b, 3);
		cql_buf_string(&b, "CQL_VERSION");
		cql_buf_string_list(&b, cv, 1);
		cql_buf_string(&b, "COMPRESSION");
		cql_buf_string_list(&b, comp, 2);
		cql_buf_string(&b, "PROTOCOL_VERSIONS");
		cql_buf_string_list(&b, pv, 4);
		ok(cql_decode_supported(b.data, b.len, A, &s) == CQL_OK && s.n == 3, "SUPPORTED decodes");
		ok(cql_supported_get(&s, "CQL_VERSION") && strcmp(cql_supported_get(&s, "CQL_VERSION")->values[0], "3.4.7") == 0,
		   "CQL_VERSION lookup");
		ok(cql_supported_has(&s, "COMPRESSION", "lz4"), "lz4 supported");
		ok(cql_supported_has(&s, "COMPRESSION", "LZ4"), "value match is case-insensitive");
		ok(!cql_supported_has(&s, "COMPRESSION", "zstd"), "zstd not supported");
		ok(cql_supported_get(&s, "PROTOCOL_VERSIONS")->nvalues == 4, "4 protocol versions");
		ok(cql_supported_get(&s, "NOPE") == NULL && !cql_supported_has(&s, "NOPE", "x"), "missing key");
		cql_supported_free(&s, A);
		ok(s.n == 0 && s.entries == NULL, "SUPPORTED freed");
		{
			long		bad = -1;

			for (size_t cut = 0; cut < b.len && bad < 0; cut++)
			{
				if (cql_decode_supported(b.data, cut, A, &s) == CQL_OK)
				{
					bad = (long) cut;
					cql_supported_free(&s, A);
				}
			}
			if (!ok(bad < 0, "every truncation of SUPPORTED refused"))
				diag("truncated SUPPORTED at %ld accepted", bad);
		}
		cql_buf_reset(&b);
		cql_buf_u16(&b, 0xFFFF);
		cql_buf_string(&b, "K");
		is_int(cql_decode_supported(b.data, b.len, A, &s), CQL_ERR_MALFORMED, "65535 entries in 5 bytes refused");
		cql_buf_reset(&b);
		cql_buf_u16(&b, 0);
		ok(cql_decode_supported(b.data, b.len, A, &s) == CQL_OK && s.n == 0, "empty SUPPORTED");
	}
	cql_buf_free(&b);
}

static void
test_events(void)
{
	cql_buf		b;
	cql_event	ev;

	cql_buf_init(&b, A);
	cql_buf_string(&b, "TOPOLOGY_CHANGE");
	cql_buf_string(&b, "NEW_NODE");
	cql_buf_u8(&b, 4);
	cql_buf_put(&b, "\x7f\x00\x00\x02", 4);
	cql_buf_i32(&b, 9042);
	ok(cql_decode_event(b.data, b.len, A, &ev) == CQL_OK, "TOPOLOGY_CHANGE decodes");
	ok(ev.type == CQL_EVENT_TOPOLOGY_CHANGE && strcmp(ev.change, "NEW_NODE") == 0 && ev.addr_len == 4 &&
	   ev.addr[3] == 2 && ev.port == 9042, "TOPOLOGY_CHANGE fields");
	cql_event_free(&ev, A);
	b.data[2 + 15 + 2 + 8] = 5;
	is_int(cql_decode_event(b.data, b.len, A, &ev), CQL_ERR_MALFORMED, "inet length 5 refused");

	cql_buf_reset(&b);
	cql_buf_string(&b, "STATUS_CHANGE");
	cql_buf_string(&b, "DOWN");
	cql_buf_u8(&b, 16);
	cql_buf_put(&b, "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 16);
	cql_buf_i32(&b, 19042);
	ok(cql_decode_event(b.data, b.len, A, &ev) == CQL_OK && ev.type == CQL_EVENT_STATUS_CHANGE &&
	   strcmp(ev.change, "DOWN") == 0 && ev.addr_len == 16 && ev.addr[15] == 1 && ev.port == 19042,
	   "STATUS_CHANGE with IPv6");
	cql_event_free(&ev, A);
	is_int(cql_decode_event(b.data, b.len - 1, A, &ev), CQL_ERR_TRUNCATED, "STATUS_CHANGE missing port byte");

	cql_buf_reset(&b);
	cql_buf_string(&b, "SCHEMA_CHANGE");
	cql_buf_string(&b, "CREATED");
	cql_buf_string(&b, "KEYSPACE");
	cql_buf_string(&b, "ks1");
	ok(cql_decode_event(b.data, b.len, A, &ev) == CQL_OK && ev.type == CQL_EVENT_SCHEMA_CHANGE &&
	   strcmp(ev.schema.change, "CREATED") == 0 && strcmp(ev.schema.target, "KEYSPACE") == 0 &&
	   strcmp(ev.schema.keyspace, "ks1") == 0 && ev.schema.name == NULL, "SCHEMA_CHANGE keyspace");
	cql_event_free(&ev, A);

	cql_buf_reset(&b);
	cql_buf_string(&b, "SCHEMA_CHANGE");
	cql_buf_string(&b, "UPDATED");
	cql_buf_string(&b, "TABLE");
	cql_buf_string(&b, "ks1");
	cql_buf_string(&b, "t1");
	ok(cql_decode_event(b.data, b.len, A, &ev) == CQL_OK && strcmp(ev.schema.name, "t1") == 0 &&
	   strcmp(ev.schema.target, "TABLE") == 0, "SCHEMA_CHANGE table");
	cql_event_free(&ev, A);

	{
		const char *args[] = {"int", "frozen<list<text>>"};

		cql_buf_reset(&b);
		cql_buf_string(&b, "SCHEMA_CHANGE");
		cql_buf_string(&b, "DROPPED");
		cql_buf_string(&b, "FUNCTION");
		cql_buf_string(&b, "ks1");
		cql_buf_string(&b, "f");
		cql_buf_string_list(&b, args, 2);
		ok(cql_decode_event(b.data, b.len, A, &ev) == CQL_OK && ev.schema.nargs == 2 &&
		   strcmp(ev.schema.args[1], "frozen<list<text>>") == 0 && strcmp(ev.schema.name, "f") == 0,
		   "SCHEMA_CHANGE function with args");
		cql_event_free(&ev, A);
		{
			long		bad = -1;

			for (size_t cut = 0; cut < b.len && bad < 0; cut++)
				if (cql_decode_event(b.data, cut, A, &ev) == CQL_OK)
				{
					bad = (long) cut;
					cql_event_free(&ev, A);
				}
			if (!ok(bad < 0, "every truncation of a SCHEMA_CHANGE event refused"))
				diag("truncated event at %ld accepted", bad);
		}
	}
	cql_buf_reset(&b);
	cql_buf_string(&b, "SCHEMA_CHANGE");
	cql_buf_string(&b, "CREATED");
	cql_buf_string(&b, "WIDGET");
	cql_buf_string(&b, "ks1");
	is_int(cql_decode_event(b.data, b.len, A, &ev), CQL_ERR_UNSUPPORTED, "unknown schema target");
	cql_buf_reset(&b);
	cql_buf_string(&b, "BOGUS_EVENT");
	is_int(cql_decode_event(b.data, b.len, A, &ev), CQL_ERR_UNSUPPORTED, "unknown event type");
	cql_buf_free(&b);
}

/* write a column spec: [ks][table] unless global, name, type option */
static void
col(cql_buf *b, bool global, const char *name, uint16_t type_id)
{
	if (!global)
	{
		cql_buf_string(b, "ks");
		cql_buf_string(b, "tbl");
	}
	cql_buf_string(b, name);
	cql_buf_u16(b, type_id);
}

static void
test_results(void)
{
	cql_buf		b;
	cql_result	r;

	cql_buf_init(&b, A);

	/* Void, Set_keyspace, Schema_change */
	cql_buf_i32(&b, CQL_RESULT_VOID);
	ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) == CQL_OK && r.kind == CQL_RESULT_VOID, "Void");
	cql_result_free(&r);
	ok(r.alloc == NULL && r.body == NULL && r.cells == NULL,
	   "cql_result_free clears the result (a second free does nothing)");
	cql_result_free(&r);		/* under ASan: a double free would abort here */

	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_SET_KEYSPACE);
	cql_buf_string(&b, "myks");
	ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) == CQL_OK && r.kind == CQL_RESULT_SET_KEYSPACE &&
	   strcmp(r.keyspace, "myks") == 0, "Set_keyspace");
	cql_result_free(&r);

	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_SCHEMA_CHANGE);
	cql_buf_string(&b, "CREATED");
	cql_buf_string(&b, "TYPE");
	cql_buf_string(&b, "ks");
	cql_buf_string(&b, "address");
	ok(cql_decode_result(&r, 5, 0, b.data, b.len, A, NULL, 0) == CQL_OK && r.kind == CQL_RESULT_SCHEMA_CHANGE &&
	   strcmp(r.schema.target, "TYPE") == 0 && strcmp(r.schema.name, "address") == 0, "Schema_change TYPE");
	cql_result_free(&r);

	cql_buf_reset(&b);
	cql_buf_i32(&b, 0x42);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_UNSUPPORTED, "unknown result kind");
	is_int(cql_decode_result(&r, 4, 0, b.data, 2, A, NULL, 0), CQL_ERR_TRUNCATED, "2-byte RESULT");

	/* Rows with global table spec, 2 columns, 3 rows incl. a null, warnings prefix */
	{
		const char *w[] = {"Aggregation query used without partition key"};
		size_t		msg_start;

		cql_buf_reset(&b);
		cql_buf_string_list(&b, w, 1);
		msg_start = b.len;
		cql_buf_i32(&b, CQL_RESULT_ROWS);
		cql_buf_i32(&b, CQL_ROWS_GLOBAL_TABLES_SPEC);
		cql_buf_i32(&b, 2);
		cql_buf_string(&b, "system");
		cql_buf_string(&b, "local");
		col(&b, true, "key", CQL_TYPE_VARCHAR);
		cql_buf_string(&b, "tags");
		cql_buf_u16(&b, CQL_TYPE_LIST);
		cql_buf_u16(&b, CQL_TYPE_INT);
		cql_buf_i32(&b, 3);
		for (int i = 0; i < 3; i++)
		{
			cql_buf_bytes(&b, "local", 5);
			if (i == 1)
				cql_buf_bytes(&b, NULL, -1);
			else
				cql_buf_bytes(&b, "\x00\x00\x00\x00", 4);
		}
		ok(cql_decode_result(&r, 4, CQL_FLAG_WARNING, b.data, b.len, A, NULL, 0) == CQL_OK, "Rows decode");
		is_int(r.kind, CQL_RESULT_ROWS, "kind Rows");
		is_int(r.extras.nwarnings, 1, "warning kept");
		is_str(r.extras.warnings[0], w[0], "warning text");
		is_int(r.meta.ncols, 2, "2 columns");
		is_int(r.rows_count, 3, "3 rows");
		ok(r.meta.cols && strcmp(r.meta.cols[0].keyspace, "system") == 0 && strcmp(r.meta.cols[1].table, "local") == 0,
		   "global ks/table applied to every column");
		ok(r.meta.cols && strcmp(r.meta.cols[1].name, "tags") == 0 && r.meta.cols[1].type->id == CQL_TYPE_LIST &&
		   r.meta.cols[1].type->sub[0]->id == CQL_TYPE_INT, "list<int> column type");
		ok(r.meta.cols[0].type->id == CQL_TYPE_VARCHAR, "text column type");
		ok(r.meta.paging_state == NULL && r.meta.paging_state_len == -1, "no paging state");
		ok(cql_result_cell(&r, 1, 1)->n == -1 && cql_result_cell(&r, 1, 1)->p == NULL, "null cell");
		ok(cql_result_cell(&r, 2, 0)->n == 5 && memcmp(cql_result_cell(&r, 2, 0)->p, "local", 5) == 0, "text cell");
		ok(cql_result_cell(&r, 0, 0)->p >= r.body && cql_result_cell(&r, 0, 0)->p < r.body + r.body_len,
		   "cells point into the result's own body copy");
		ok(r.body != b.data, "body copied");
		cql_result_free(&r);

		/* every truncation fails cleanly */
		{
			int			bad = 0;

			for (size_t cut = 0; cut < b.len; cut++)
			{
				cql_status	st = cql_decode_result(&r, 4, CQL_FLAG_WARNING, b.data, cut, A, NULL, 0);

				if (st == CQL_OK)
				{
					bad++;
					cql_result_free(&r);
				}
			}
			is_int(bad, 0, "every truncation of a Rows result refused");
		}
		/* the _take variant owns the buffer */
		{
			uint8_t    *own = malloc(b.len - msg_start);

			memcpy(own, b.data + msg_start, b.len - msg_start);
			ok(cql_decode_result_take(&r, 4, 0, own, b.len - msg_start, A, NULL, 0) == CQL_OK &&
			   r.body == own && r.rows_count == 3, "take variant keeps the caller's buffer");
			cql_result_free(&r);
			own = malloc(10);
			memset(own, 0xFF, 10);
			is_int(cql_decode_result_take(&r, 4, 0, own, 10, A, NULL, 0), CQL_ERR_UNSUPPORTED,
				   "take variant frees the buffer on failure");
		}
	}

	/* Rows, per-column spec, paging state, v5 METADATA_CHANGED */
	for (int v = 4; v <= 5; v++)
	{
		cql_buf_reset(&b);
		cql_buf_i32(&b, CQL_RESULT_ROWS);
		cql_buf_i32(&b, CQL_ROWS_HAS_MORE_PAGES | CQL_ROWS_METADATA_CHANGED);
		cql_buf_i32(&b, 1);
		cql_buf_bytes(&b, "\x01\x02\x03", 3);
		if (v == 5)
			cql_buf_short_bytes(&b, "\xaa\xbb", 2);
		col(&b, false, "v", CQL_TYPE_BIGINT);
		cql_buf_i32(&b, 1);
		cql_buf_bytes(&b, "\x00\x00\x00\x00\x00\x00\x00\x2a", 8);
		ok(cql_decode_result(&r, v, 0, b.data, b.len, A, NULL, 0) == CQL_OK, "v%d Rows with paging state", v);
		ok(r.meta.paging_state_len == 3 && memcmp(r.meta.paging_state, "\x01\x02\x03", 3) == 0, "v%d paging state copied", v);
		if (v == 5)
			ok(r.meta.has_new_metadata_id && r.meta.new_metadata_id_len == 2 &&
			   memcmp(r.meta.new_metadata_id, "\xaa\xbb", 2) == 0, "v5 new_metadata_id after paging state");
		else
			ok(!r.meta.has_new_metadata_id, "v4 ignores METADATA_CHANGED");
		ok(r.meta.ncols == 1 && strcmp(r.meta.cols[0].keyspace, "ks") == 0 && strcmp(r.meta.cols[0].table, "tbl") == 0 &&
		   r.meta.cols[0].type->id == CQL_TYPE_BIGINT, "v%d per-column spec", v);
		ok(r.rows_count == 1 && r.cells[0].n == 8 && r.cells[0].p[7] == 0x2a, "v%d bigint cell", v);
		cql_result_free(&r);
	}

	/* NO_METADATA: cached columns */
	{
		cql_column	cached[2];
		cql_type	t_int = {CQL_TYPE_INT};

		memset(cached, 0, sizeof(cached));
		cached[0].name = "a";
		cached[0].type = &t_int;
		cached[1].name = "b";
		cached[1].type = &t_int;
		cql_buf_reset(&b);
		cql_buf_i32(&b, CQL_RESULT_ROWS);
		cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
		cql_buf_i32(&b, 2);
		cql_buf_i32(&b, 2);
		for (int i = 0; i < 4; i++)
			cql_buf_bytes(&b, "\x00\x00\x00\x05", 4);
		ok(cql_decode_result(&r, 5, 0, b.data, b.len, A, cached, 2) == CQL_OK, "NO_METADATA with cached columns");
		ok(r.meta.cols == cached && r.meta.cols_borrowed && r.meta.ncols == 2 && r.rows_count == 2,
		   "cached columns referenced");
		ok(cql_result_cell(&r, 1, 1)->n == 4, "cells indexed with cached column count");
		cql_result_free(&r);
		ok(cached[0].name[0] == 'a', "cached columns untouched by free");
		ok(cql_decode_result(&r, 5, 0, b.data, b.len, A, NULL, 0) == CQL_OK && r.meta.cols == NULL &&
		   r.rows_count == 2, "NO_METADATA without cache still indexes cells");
		cql_result_free(&r);
		is_int(cql_decode_result(&r, 5, 0, b.data, b.len, A, cached, 1), CQL_ERR_MALFORMED,
			   "cached column count mismatch refused");
	}

	/* shape checks: cells never read out of bounds */
	{
		cql_error	err;

		/* full metadata, ncols = 0, one row: no cells at all */
		cql_buf_reset(&b);
		cql_buf_i32(&b, CQL_RESULT_ROWS);
		cql_buf_i32(&b, 0);
		cql_buf_i32(&b, 0);
		cql_buf_i32(&b, 1);
		ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) == CQL_OK &&
		   r.rows_count == 1 && r.meta.ncols == 0 && r.cells == NULL,
		   "Rows with ncols 0 and one row decodes (no cells)");
		ok(!cql_result_has_columns(&r, 2), "... has_columns(2) is false");
		ok(cql_result_has_columns(&r, 0), "... has_columns(0) is true");
		ok(cql_result_cell(&r, 0, 0) == NULL, "... cell(0,0) is NULL, not a crash");
		is_int(cql_result_check_columns(&r, 2, &err), CQL_ERR_MALFORMED, "... check_columns(2) fails");
		ok(strstr(err.message, "0 columns") && strstr(err.message, "expected 2"),
		   "... saying so: %s", err.message);
		cql_result_free(&r);

		/* one column, two rows: out-of-range rows and columns are NULL */
		cql_buf_reset(&b);
		cql_buf_i32(&b, CQL_RESULT_ROWS);
		cql_buf_i32(&b, CQL_ROWS_GLOBAL_TABLES_SPEC);
		cql_buf_i32(&b, 1);
		cql_buf_string(&b, "k");
		cql_buf_string(&b, "t");
		cql_buf_string(&b, "c");
		cql_buf_u16(&b, CQL_TYPE_INT);
		cql_buf_i32(&b, 2);
		cql_buf_bytes(&b, "\x00\x00\x00\x01", 4);
		cql_buf_bytes(&b, "\x00\x00\x00\x02", 4);
		ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) == CQL_OK, "1 x 2 Rows decodes");
		ok(cql_result_has_columns(&r, 1) && !cql_result_has_columns(&r, 3),
		   "... has_columns(1) true, (3) false");
		is_int(cql_result_check_columns(&r, 1, &err), CQL_OK, "... check_columns(1) ok");
		ok(cql_result_cell(&r, 1, 0) && cql_result_cell(&r, 1, 0)->n == 4, "... cell(1,0) valid");
		ok(cql_result_cell(&r, 2, 0) == NULL && cql_result_cell(&r, 0, 1) == NULL &&
		   cql_result_cell(&r, -1, 0) == NULL && cql_result_cell(&r, 0, -1) == NULL,
		   "... row 2, col 1 and negatives are NULL");
		cql_result_free(&r);

		/* NO_METADATA without cached columns: cells, but no specs */
		cql_buf_reset(&b);
		cql_buf_i32(&b, CQL_RESULT_ROWS);
		cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
		cql_buf_i32(&b, 2);
		cql_buf_i32(&b, 1);
		cql_buf_bytes(&b, "a", 1);
		cql_buf_bytes(&b, "b", 1);
		ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) == CQL_OK &&
		   r.meta.cols == NULL, "NO_METADATA without cache decodes");
		ok(!cql_result_has_columns(&r, 2), "... but has_columns(2) is false: no column specs");
		is_int(cql_result_check_columns(&r, 2, &err), CQL_ERR_MALFORMED, "... check fails: %s",
			   err.message);
		cql_result_free(&r);

		ok(!cql_result_has_columns(NULL, 0), "has_columns(NULL) is false");
		is_int(cql_result_check_columns(NULL, 0, &err), CQL_ERR_MALFORMED, "check_columns(NULL) fails");
	}

	/* hostile counts */
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
	cql_buf_i32(&b, 0x7FFFFFFF);
	cql_buf_i32(&b, 0x7FFFFFFF);
	cql_buf_bytes(&b, "x", 1);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_MALFORMED, "2^31 x 2^31 cells refused");
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, 0);
	cql_buf_i32(&b, 1000000);
	cql_buf_string(&b, "x");
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_MALFORMED, "a million column specs in 3 bytes refused");
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
	cql_buf_i32(&b, -1);
	cql_buf_i32(&b, 0);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_MALFORMED, "negative column count refused");
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
	cql_buf_i32(&b, 1);
	cql_buf_i32(&b, -5);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_MALFORMED, "negative row count refused");
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
	cql_buf_i32(&b, 1);
	cql_buf_i32(&b, 2);
	cql_buf_bytes(&b, "ab", 2);
	cql_buf_i32(&b, 100);
	cql_buf_put(&b, "abcd", 4);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_TRUNCATED, "cell length past the end refused");
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
	cql_buf_i32(&b, 0);
	cql_buf_i32(&b, 0x7FFFFFFF);
	ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) == CQL_OK && r.rows_count == 0x7FFFFFFF &&
	   r.cells == NULL, "zero columns: rows_count kept, no cells allocated");
	cql_result_free(&r);
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, 0);
	cql_buf_i32(&b, 1);
	col(&b, false, "c", 0x0099);
	cql_buf_i32(&b, 0);
	ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) != CQL_OK, "unknown type option id refused");
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_HAS_MORE_PAGES | CQL_ROWS_NO_METADATA);
	cql_buf_i32(&b, 0);
	cql_buf_i32(&b, 0x7FFFFFF0);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_TRUNCATED, "paging state past the end");
	/* deep type nesting */
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_GLOBAL_TABLES_SPEC);
	cql_buf_i32(&b, 1);
	cql_buf_string(&b, "k");
	cql_buf_string(&b, "t");
	cql_buf_string(&b, "deep");
	for (int i = 0; i < 1000; i++)
		cql_buf_u16(&b, CQL_TYPE_LIST);
	cql_buf_u16(&b, CQL_TYPE_INT);
	cql_buf_i32(&b, 0);
	ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) != CQL_OK, "1000-deep list type refused");

	/* Prepared v4 and v5 */
	for (int v = 4; v <= 5; v++)
	{
		cql_buf_reset(&b);
		cql_buf_i32(&b, CQL_RESULT_PREPARED);
		cql_buf_short_bytes(&b, "0123456789abcdef", 16);
		if (v == 5)
			cql_buf_short_bytes(&b, "fedcba9876543210", 16);
		cql_buf_i32(&b, CQL_ROWS_GLOBAL_TABLES_SPEC);
		cql_buf_i32(&b, 3);
		cql_buf_i32(&b, 2);
		cql_buf_u16(&b, 2);
		cql_buf_u16(&b, 0);
		cql_buf_string(&b, "ks");
		cql_buf_string(&b, "t");
		col(&b, true, "k2", CQL_TYPE_INT);
		col(&b, true, "v", CQL_TYPE_VARCHAR);
		col(&b, true, "k1", CQL_TYPE_UUID);
		/* result metadata: 1 column */
		cql_buf_i32(&b, 0);
		cql_buf_i32(&b, 1);
		col(&b, false, "v", CQL_TYPE_VARCHAR);
		ok(cql_decode_result(&r, v, 0, b.data, b.len, A, NULL, 0) == CQL_OK && r.kind == CQL_RESULT_PREPARED,
		   "v%d Prepared decodes", v);
		ok(r.prepared_id_len == 16 && memcmp(r.prepared_id, "0123456789abcdef", 16) == 0, "v%d prepared id", v);
		if (v == 5)
			ok(r.result_metadata_id_len == 16 && memcmp(r.result_metadata_id, "fedcba9876543210", 16) == 0,
			   "v5 result_metadata_id");
		else
			ok(r.result_metadata_id == NULL, "v4 has no result_metadata_id");
		ok(r.bind.ncols == 3 && r.bind.npk == 2 && r.bind.pk_indexes[0] == 2 && r.bind.pk_indexes[1] == 0,
		   "v%d bind markers and pk indexes [2,0]", v);
		ok(strcmp(r.bind.cols[2].name, "k1") == 0 && r.bind.cols[2].type->id == CQL_TYPE_UUID &&
		   strcmp(r.bind.cols[0].keyspace, "ks") == 0, "v%d bind column specs", v);
		ok(r.meta.ncols == 1 && strcmp(r.meta.cols[0].name, "v") == 0 && !r.meta.cols_borrowed,
		   "v%d result metadata", v);
		{
			cql_column *copy = NULL;

			ok(cql_columns_copy(r.bind.cols, r.bind.ncols, A, &copy) == CQL_OK && copy != r.bind.cols &&
			   strcmp(copy[1].name, "v") == 0 && cql_type_equal(copy[1].type, r.bind.cols[1].type),
			   "v%d columns deep-copied", v);
			cql_columns_free(copy, r.bind.ncols, A);
		}
		cql_result_free(&r);
		{
			int			bad = 0;

			for (size_t cut = 0; cut < b.len; cut++)
				if (cql_decode_result(&r, v, 0, b.data, cut, A, NULL, 0) == CQL_OK)
				{
					bad++;
					cql_result_free(&r);
				}
			is_int(bad, 0, "v%d every truncation of Prepared refused", v);
		}
	}
	/* pk index out of range */
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_PREPARED);
	cql_buf_short_bytes(&b, "id", 2);
	cql_buf_i32(&b, 0);
	cql_buf_i32(&b, 1);
	cql_buf_i32(&b, 1);
	cql_buf_u16(&b, 1);
	col(&b, false, "k", CQL_TYPE_INT);
	cql_buf_i32(&b, CQL_ROWS_NO_METADATA);
	cql_buf_i32(&b, 0);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_MALFORMED, "pk index beyond bind markers refused");
	b.data[4 + 4 + 12 + 1] = 0;
	ok(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0) == CQL_OK && r.bind.npk == 1 &&
	   r.meta.flags == CQL_ROWS_NO_METADATA && r.meta.cols == NULL, "Prepared with NO_METADATA result metadata");
	cql_result_free(&r);
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_PREPARED);
	cql_buf_short_bytes(&b, "id", 2);
	cql_buf_i32(&b, 0);
	cql_buf_i32(&b, 1);
	cql_buf_i32(&b, 0x40000000);
	is_int(cql_decode_result(&r, 4, 0, b.data, b.len, A, NULL, 0), CQL_ERR_MALFORMED, "pk_count 2^30 refused");

	cql_buf_free(&b);
}

int
main(void)
{
	plan(307);		/* every assertion below runs on a passing build */
	test_startup_options_auth();
	test_query();
	test_prepare_execute_batch();
	test_prefixes();
	test_errors();
	test_handshake_messages();
	test_events();
	test_results();
	return done_testing();
}

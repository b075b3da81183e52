/*
 * test_murmur3.c
 *		Murmur3Partitioner tokens (with Cassandra's sign-extension quirk)
 *		and composite routing keys: every vector of cql-protocol.md 11.3.
 */
#include "cql_wire.h"
#include "tap.h"

static int64_t
tok_hex(const char *hex)
{
	unsigned char b[128];
	size_t		n = tap_unhex(hex, b, sizeof(b));

	return cql_murmur3_token(b, n);
}

static int64_t
tok_str(const char *s)
{
	return cql_murmur3_token((const uint8_t *) s, strlen(s));
}

int
main(void)
{
	unsigned char b[128];

	is_int(tok_str("123"), -7468325962851647638LL, "token('123')");
	{
		for (int i = 0; i < 10; i++)
			tap_unhex("00 ff 10 fa 99", b + 5 * i, 5);
		is_int(cql_murmur3_token(b, 50), 5837342703291459765LL, "token(00ff10fa99 x10)");
	}
	is_int(tok_hex("fe fe fe fe fe fe fe fe"), -8927430733708461935LL, "token(fe x8) - sign extension");
	is_int(tok_hex("10 10 10 10 10 10 10 10"), 1446172840243228796LL, "token(10 x8)");
	is_int(tok_str("9223372036854775807"), 7162290910810015547LL, "token('9223372036854775807')");
	is_int(tok_hex("00104327529fb645dd00b883ec39ae448bb800000400066a6b00"), -9223371632693506265LL,
		   "token(composite uuid+text key) - gocql CassandraSign");
	is_int(tok_str("hello"), -3758069500696749310LL, "token('hello')");
	is_int(cql_murmur3_h1((const uint8_t *) "hello", 5), (int64_t) 0xcbd8a7b341bd9b02ULL, "h1('hello')");
	is_int(tok_str("hello, world"), (int64_t) 0x342fac623a5ebc8eULL, "token('hello, world')");
	is_int(tok_str("The quick brown fox jumps over the lazy dog."), (int64_t) 0xcd99481f9ee902c9ULL,
		   "token('The quick brown fox...')");
	is_int(tok_hex("00 00 00 01"), -4069959284402364209LL, "token(int 1)");
	is_int(tok_hex("00 00 00 00 00 00 00 01"), 6292367497774912474LL, "token(bigint 1)");
	is_int(cql_murmur3_token(NULL, 0), INT64_MIN, "empty key has the minimum token");
	ok(cql_murmur3_token((const uint8_t *) "x", 1) != INT64_MIN, "non-empty key never gets INT64_MIN");

	/* exact block boundaries: 16 and 32 bytes, tails of 1..15 */
	{
		int64_t		seen[17];
		int			distinct = 1;

		for (int i = 0; i < 40; i++)
			b[i] = (uint8_t) (0x80 + i);
		for (int len = 1; len <= 17; len++)
		{
			seen[len - 1] = cql_murmur3_token(b, (size_t) len);
			ok(seen[len - 1] == cql_murmur3_token(b, (size_t) len), "token of %d bytes is deterministic", len);
		}
		for (int i = 1; i < 17; i++)
			distinct += seen[i] != seen[i - 1];
		is_int(distinct, 17, "tokens of prefixes differ");
	}

	/* composite routing key */
	{
		cql_buf		out;
		cql_elem	parts[2];
		unsigned char want[64];
		size_t		wn;

		cql_buf_init(&out, &cql_malloc_allocator);
		parts[0].p = (const uint8_t *) "\x00\x00\x00\x01";
		parts[0].n = 4;
		parts[1].p = (const uint8_t *) "hello";
		parts[1].n = 5;
		ok(cql_routing_key_composite(&out, parts, 2) == CQL_OK, "composite key builds");
		wn = tap_unhex("00 04 00 00 00 01 00 00 05 68 65 6c 6c 6f 00", want, sizeof(want));
		is_mem(out.data, out.len, want, wn, "composite (int 1, text 'hello') layout");
		is_int(cql_murmur3_token(out.data, out.len), -5964652701051312773LL, "token of composite (1, 'hello')");

		cql_buf_reset(&out);
		parts[1].n = -1;
		is_int(cql_routing_key_composite(&out, parts, 2), CQL_ERR_INVALID_ARG, "null component -> no routing key");
		is_int(out.len, 0, "nothing appended for a null component");
		parts[1].n = -2;
		is_int(cql_routing_key_composite(&out, parts, 2), CQL_ERR_INVALID_ARG, "unset component -> no routing key");
		parts[1].n = 70000;
		is_int(cql_routing_key_composite(&out, parts, 2), CQL_ERR_TOO_LARGE, "component over 65535 bytes refused");
		parts[1].n = 0;
		ok(cql_routing_key_composite(&out, parts, 2) == CQL_OK, "empty component accepted");
		wn = tap_unhex("00 04 00 00 00 01 00 00 00 00", want, sizeof(want));
		is_mem(out.data, out.len, want, wn, "empty component is [00 00][][00]");
		cql_buf_reset(&out);
		ok(cql_routing_key_composite(&out, parts, 0) == CQL_OK && out.len == 0, "zero components -> empty key");
		is_int(cql_routing_key_composite(&out, NULL, 1), CQL_ERR_INVALID_ARG, "NULL parts refused");
		cql_buf_free(&out);
	}
	return done_testing();
}

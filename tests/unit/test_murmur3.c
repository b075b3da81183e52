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

	plan(46);
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

	/*
	 * exact block boundaries: 16 bytes, tails of 1..15 and 17, 31..33 and
	 * 40 bytes, every byte >= 0x80 (the sign-extended tail); the tokens
	 * are Cassandra's, computed by the Python driver (cassandra.murmur3,
	 * its C extension and its pure-Python _murmur3 agree), not by us
	 */
	{
		static const struct
		{
			int			len;
			int64_t		token;
		}			want[] = {
			{1, -5284281814142962636LL}, {2, 3479874077480803178LL},
			{3, 4805209697930042770LL}, {4, -3443090708941767951LL},
			{5, 5082927503400334641LL}, {6, 2501425557546660757LL},
			{7, 690902581674979450LL}, {8, -6062263109623760877LL},
			{9, 7770289513489161555LL}, {10, -7623170703309721106LL},
			{11, 4237241090754518618LL}, {12, -5351185824061215367LL},
			{13, 255722452590173982LL}, {14, -3501484581142773634LL},
			{15, 63099782945186636LL}, {16, 7217206371623098675LL},
			{17, -3616694464407856223LL}, {31, -9222542793393665168LL},
			{32, -61479015959055060LL}, {33, -7660497021261453191LL},
			{40, -6654227320360086743LL},
		};

		for (int i = 0; i < 40; i++)
			b[i] = (uint8_t) (0x80 + i);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			is_int(cql_murmur3_token(b, (size_t) want[i].len), want[i].token,
				   "token of bytes 80 81 .. (%d bytes), as Cassandra computes it", want[i].len);
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

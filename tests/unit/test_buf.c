/*
 * test_buf.c
 *		Primitive codecs: [short]/[int]/[long], [string], [bytes], vints,
 *		and the reader's refusal to run past the end of its input.
 */
#include "cql_core.h"
#include "tap.h"

static void
test_vint(uint64_t v, const char *hex)
{
	cql_buf		b;
	unsigned char want[16];
	size_t		wn = tap_unhex(hex, want, sizeof(want));
	cql_reader	r;
	uint64_t	back = 0;

	cql_buf_init(&b, &cql_malloc_allocator);
	cql_buf_unsigned_vint(&b, v);
	is_mem(b.data, b.len, want, wn, "unsigned vint %llu encodes as %s", (unsigned long long) v, hex);
	cql_reader_init(&r, b.data, b.len);
	ok(cql_read_unsigned_vint(&r, &back) == CQL_OK && back == v && cql_reader_remaining(&r) == 0,
	   "unsigned vint %llu decodes back", (unsigned long long) v);
	cql_buf_free(&b);
}

int
main(void)
{
	cql_buf		b;
	cql_reader	r;
	const char *s;
	size_t		n;
	const uint8_t *p;
	int32_t		bn;
	int64_t		sv;

	plan(28);		/* every assertion runs on a passing build */
	cql_buf_init(&b, &cql_malloc_allocator);
	cql_buf_u16(&b, 0x0102);
	cql_buf_i32(&b, -2);
	cql_buf_i64(&b, 0x0102030405060708LL);
	cql_buf_string(&b, "abc");
	cql_buf_bytes(&b, NULL, -1);
	cql_buf_bytes(&b, "xy", 2);
	ok(cql_buf_status(&b) == CQL_OK, "buffer writes succeed");
	{
		unsigned char want[64];
		size_t		wn = tap_unhex("0102 fffffffe 0102030405060708 0003616263 ffffffff 000000027879", want, sizeof(want));

		is_mem(b.data, b.len, want, wn, "primitives are big-endian with correct prefixes");
	}

	cql_reader_init(&r, b.data, b.len);
	{
		uint16_t	u16;
		int32_t		i32;
		int64_t		i64;

		ok(cql_read_u16(&r, &u16) == CQL_OK && u16 == 0x0102, "read [short]");
		ok(cql_read_i32(&r, &i32) == CQL_OK && i32 == -2, "read [int]");
		ok(cql_read_i64(&r, &i64) == CQL_OK && i64 == 0x0102030405060708LL, "read [long]");
	}
	ok(cql_read_string(&r, &s, &n) == CQL_OK && n == 3 && memcmp(s, "abc", 3) == 0, "read [string]");
	ok(cql_read_bytes(&r, &p, &bn) == CQL_OK && bn == -1 && p == NULL, "read null [bytes]");
	ok(cql_read_bytes(&r, &p, &bn) == CQL_OK && bn == 2 && memcmp(p, "xy", 2) == 0, "read [bytes]");
	ok(cql_reader_remaining(&r) == 0, "reader consumed everything");
	ok(cql_read_bytes(&r, &p, &bn) == CQL_ERR_TRUNCATED, "reading past the end is TRUNCATED");

	/* a [bytes] that claims more than is there */
	{
		unsigned char bad[] = {0x00, 0x00, 0x10, 0x00, 'a'};

		cql_reader_init(&r, bad, sizeof(bad));
		ok(cql_read_bytes(&r, &p, &bn) == CQL_ERR_TRUNCATED, "[bytes] longer than input is refused");
	}
	{
		unsigned char bad[] = {0x80, 0x00, 0x00, 0x00};
		const char *ls;

		cql_reader_init(&r, bad, sizeof(bad));
		ok(cql_read_long_string(&r, &ls, &n) == CQL_ERR_MALFORMED, "negative [long string] is malformed");
	}

	/* vints: spec examples */
	test_vint(0, "00");
	test_vint(127, "7f");
	test_vint(128, "8080");
	test_vint(256000, "c3e800");
	test_vint(1ULL << 56, "ff0100000000000000");
	test_vint(UINT64_MAX, "ffffffffffffffffff");

	cql_buf_reset(&b);
	cql_buf_vint(&b, -1);
	cql_buf_vint(&b, 3600000000000LL);
	{
		unsigned char want[16];
		size_t		wn = tap_unhex("01 fc068c61714000", want, sizeof(want));

		is_mem(b.data, b.len, want, wn, "signed vints zig-zag (-1, 1h in ns)");
	}
	cql_reader_init(&r, b.data, b.len);
	ok(cql_read_vint(&r, &sv) == CQL_OK && sv == -1, "signed vint -1 decodes");
	ok(cql_read_vint(&r, &sv) == CQL_OK && sv == 3600000000000LL, "signed vint 1h decodes");
	{
		unsigned char bad[] = {0xc3, 0xe8};

		cql_reader_init(&r, bad, sizeof(bad));
		ok(cql_read_vint(&r, &sv) == CQL_ERR_TRUNCATED, "truncated vint refused");
	}
	cql_buf_free(&b);
	return done_testing();
}

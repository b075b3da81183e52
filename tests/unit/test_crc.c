/*
 * test_crc.c
 *		CRC24 (v5 frame headers) and primed CRC-32 (v5 frame payloads)
 *		against the vectors of cql-protocol.md section 10.
 */
#include "cql_frame_int.h"
#include "tap.h"

static uint64_t
le_int(const char *hex)
{
	unsigned char b[8];
	size_t		n = tap_unhex(hex, b, sizeof(b));
	uint64_t	v = 0;

	for (size_t i = n; i > 0; i--)
		v = (v << 8) | b[i - 1];
	return v;
}

int
main(void)
{
	unsigned char buf[256];
	size_t		n;

	plan(22);		/* every assertion runs on a passing build */

	/* CRC24 vectors */
	is_int(cql_crc24(0x020009, 3), 0xC1C8A4, "CRC24 of OPTIONS frame header 09 00 02");
	is_int(cql_crc24(le_int("32 00 02"), 3), le_int("a5 ff ee"), "CRC24 of 50-byte self-contained header");
	is_int(cql_crc24(0, 3), 0x7DE777, "CRC24 of three zero bytes");
	is_int(cql_crc24(le_int("21 00 02"), 3), le_int("21 62 8d"), "CRC24 of AUTH_RESPONSE CRC-format header");
	is_int(cql_crc24(0x0400000021ULL, 5), 0xCFD216, "CRC24 of LZ4 header with uncompressed_length 0");
	is_int(cql_crc24(0x0401140040ULL, 5), 0x91FB83, "CRC24 of LZ4 compressed QUERY header");
	ok(cql_crc24(0x020009, 3) != cql_crc24(0x02000A, 3), "CRC24 changes when the length changes");
	ok(cql_crc24(0x0400000021ULL, 5) != cql_crc24(0x0000000021ULL, 5), "CRC24 covers byte 4 of LZ4 header");
	ok(cql_crc24(0xFFFFFF, 3) <= 0xFFFFFF, "CRC24 fits 24 bits");
	ok(cql_crc24(0x0400000021ULL, 5) != cql_crc24(0x0400000021ULL, 3), "CRC24 depends on nbytes");

	/* CRC-32 vectors */
	is_int(cql_crc32_update(0, (const uint8_t *) "123456789", 9), 0xCBF43926, "plain CRC-32 check value");
	is_int(cql_crc32_update(0, NULL, 0), 0, "plain CRC-32 of nothing is 0");
	{
		static const uint8_t prime[4] = {0xFA, 0x2D, 0x55, 0xCA};

		is_int(cql_crc32_update(0, prime, 4), 0x44777ED3, "CRC-32 of the priming bytes");
	}
	is_int(cql_crc32(NULL, 0), 0x44777ED3, "primed CRC-32 of an empty payload");
	is_int(cql_crc32((const uint8_t *) "123456789", 9), 0xE2A261A7, "primed CRC-32 of 123456789");

	n = tap_unhex("05 00 00 00 05 00 00 00 00", buf, sizeof(buf));
	is_int(cql_crc32(buf, n), 0x4D288610, "primed CRC-32 of the OPTIONS envelope");

	n = tap_unhex("05 00 00 01 0f 00 00 00 18 00 00 00 14 00 63 61 73 73 61 6e 64 72 61 00 63 61 73 73 61 6e 64 72 61",
				  buf, sizeof(buf));
	is_int(n, 33, "AUTH_RESPONSE envelope is 33 bytes");
	is_int(cql_crc32(buf, n), le_int("dd b9 db 3a"), "primed CRC-32 of the AUTH_RESPONSE envelope");

	/* incremental == one shot */
	{
		uint32_t	c = cql_crc32_update(0, (const uint8_t *) "1234", 4);

		c = cql_crc32_update(c, (const uint8_t *) "56789", 5);
		is_int(c, 0xCBF43926, "CRC-32 update is incremental");
	}
	{
		uint8_t		big[1000];
		uint32_t	one;
		uint32_t	inc = 0;
		static const uint8_t prime[4] = {0xFA, 0x2D, 0x55, 0xCA};

		for (int i = 0; i < 1000; i++)
			big[i] = (uint8_t) (i * 7 + 3);
		one = cql_crc32(big, sizeof(big));
		inc = cql_crc32_update(inc, prime, 4);
		for (int i = 0; i < 1000; i += 100)
			inc = cql_crc32_update(inc, big + i, 100);
		is_int(inc, one, "primed CRC-32 equals priming then chunked updates");
		big[500] ^= 1;
		ok(cql_crc32(big, sizeof(big)) != one, "a single flipped bit changes the CRC-32");
	}
	/* the table-driven CRC agrees with the bit-by-bit definition */
	{
		uint8_t		data[300];
		uint32_t	x = 12345;
		int			agree = 1;

		for (size_t len = 0; len <= sizeof(data); len += 23)
		{
			uint32_t	ref = 0xFFFFFFFFu;

			for (size_t i = 0; i < len; i++)
			{
				x = x * 1103515245u + 12345u;
				data[i] = (uint8_t) (x >> 16);
			}
			for (size_t i = 0; i < len; i++)
			{
				ref ^= data[i];
				for (int b = 0; b < 8; b++)
					ref = (ref >> 1) ^ (0xEDB88320u & (0u - (ref & 1)));
			}
			ref = ~ref;
			if (cql_crc32_update(0, data, len) != ref)
				agree = 0;
		}
		ok(agree, "table CRC-32 equals the bitwise reference on random data");
	}
	return done_testing();
}

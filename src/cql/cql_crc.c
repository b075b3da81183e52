/*-------------------------------------------------------------------------
 *
 * cql_crc.c
 *		Checksums of the v5 outer framing: CRC24 over frame headers and a
 *		primed CRC-32 over frame payloads.
 *
 * Both follow Cassandra's net/Crc.java.  The CRC24 is Koopman's 24-bit
 * polynomial processed MSB-first over the header bytes in wire order; the
 * CRC-32 is the ordinary zlib one, except that Cassandra feeds four fixed
 * bytes (FA 2D 55 CA) before the payload so that an all-zero payload does
 * not have an all-zero checksum.
 *
 * IDENTIFICATION
 *		src/cql/cql_crc.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_wire.h"

#define CRC24_INIT	0x875060
#define CRC24_POLY	0x1974F0B

uint32_t
cql_crc24(uint64_t hdr, int nbytes)
{
	uint32_t	crc = CRC24_INIT;

	for (int i = 0; i < nbytes; i++)
	{
		crc ^= (uint32_t) (hdr & 0xff) << 16;
		hdr >>= 8;
		for (int b = 0; b < 8; b++)
		{
			crc <<= 1;
			if (crc & 0x1000000)
				crc ^= CRC24_POLY;
		}
	}
	return crc & 0xffffff;
}

/*
 * Table-driven reflected CRC-32 (poly 0xEDB88320).  The table is computed
 * at compile time in spirit but built lazily here to keep the source short;
 * building it twice concurrently is harmless since both writers store the
 * same values.
 */
static uint32_t crc32_table[256];
static volatile bool crc32_table_ready = false;

static void
crc32_build_table(void)
{
	for (uint32_t i = 0; i < 256; i++)
	{
		uint32_t	c = i;

		for (int b = 0; b < 8; b++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
		crc32_table[i] = c;
	}
	crc32_table_ready = true;
}

uint32_t
cql_crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	if (!crc32_table_ready)
		crc32_build_table();
	crc = ~crc;
	while (n--)
		crc = crc32_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

uint32_t
cql_crc32(const uint8_t *p, size_t n)
{
	static const uint8_t prime[4] = {0xFA, 0x2D, 0x55, 0xCA};

	return cql_crc32_update(cql_crc32_update(0, prime, sizeof(prime)), p, n);
}

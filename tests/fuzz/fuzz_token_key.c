/*
 * fuzz_token_key.c
 *		libFuzzer target for the partition-key encoder behind cql_token()
 *		and the FDW's routing: key values of any key type parsed from CQL
 *		literals (cql_value_parse), combined into a routing key
 *		(cql_routing_key_composite) and hashed (cql_murmur3_token).
 *
 * The token is checked against a second, independent Murmur3 written the
 * way Cassandra's Java code reads it (signed bytes, byte by byte), so the
 * target finds a wrong token, not only a crash; the composite layout is
 * checked to be, per part, a 2-byte big-endian length, the bytes and a 0.
 *
 * Input layout: byte 0 bits 0-1: number of key parts - 1 (1 to 4); the
 * rest is split at 0x01 bytes into type string, literal, type string,
 * literal, ...  A part whose type or literal does not parse is left out.
 *
 * Build and run: see tests/fuzz/README.md.
 */
#include "cql_types.h"
#include "cql_wire.h"

#include <stdlib.h>
#include <string.h>

static const cql_allocator *A = &cql_malloc_allocator;

#define MAX_PARTS 4

/* Cassandra's MurmurHash3_x64_128 h1, transcribed from its Java source */
static int64_t
java_murmur3(const uint8_t *key, size_t len)
{
	const uint64_t c1 = 0x87c37b91114253d5ULL;
	const uint64_t c2 = 0x4cf5ad432745937fULL;
	uint64_t	h1 = 0,
				h2 = 0;
	size_t		nblocks = len >> 4;
	size_t		off = nblocks * 16;
	uint64_t	k1 = 0,
				k2 = 0;

	for (size_t i = 0; i < nblocks; i++)
	{
		k1 = 0;
		k2 = 0;
		for (int b = 7; b >= 0; b--)
		{
			k1 = (k1 << 8) | key[i * 16 + b];
			k2 = (k2 << 8) | key[i * 16 + 8 + b];
		}
		k1 *= c1;
		k1 = (k1 << 31) | (k1 >> 33);
		k1 *= c2;
		h1 ^= k1;
		h1 = (h1 << 27) | (h1 >> 37);
		h1 += h2;
		h1 = h1 * 5 + 0x52dce729;
		k2 *= c2;
		k2 = (k2 << 33) | (k2 >> 31);
		k2 *= c1;
		h2 ^= k2;
		h2 = (h2 << 31) | (h2 >> 33);
		h2 += h1;
		h2 = h2 * 5 + 0x38495ab5;
	}
	k1 = 0;
	k2 = 0;
	/* the tail: Java's switch falling through, each byte a signed long */
	for (size_t r = len & 15; r > 0; r--)
	{
		uint64_t	v = (uint64_t) (int64_t) (int8_t) key[off + r - 1];

		if (r > 8)
			k2 ^= v << (8 * (r - 9));
		else
			k1 ^= v << (8 * (r - 1));
		if (r == 9)
		{
			k2 *= c2;
			k2 = (k2 << 33) | (k2 >> 31);
			k2 *= c1;
			h2 ^= k2;
		}
		if (r == 1)
		{
			k1 *= c1;
			k1 = (k1 << 31) | (k1 >> 33);
			k1 *= c2;
			h1 ^= k1;
		}
	}
	h1 ^= len;
	h2 ^= len;
	h1 += h2;
	h2 += h1;
	for (int i = 0; i < 2; i++)
	{
		uint64_t   *h = i == 0 ? &h1 : &h2;

		*h ^= *h >> 33;
		*h *= 0xff51afd7ed558ccdULL;
		*h ^= *h >> 33;
		*h *= 0xc4ceb9fe1a85ec53ULL;
		*h ^= *h >> 33;
	}
	h1 += h2;
	return (int64_t) h1;
}

/* the expected token of a key: Murmur3, the minimum reserved */
static int64_t
expected_token(const uint8_t *key, size_t len)
{
	int64_t		h;

	if (len == 0)
		return INT64_MIN;
	h = java_murmur3(key, len);
	return h == INT64_MIN ? INT64_MAX : h;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p;
	const char *end;
	int			want;
	int			n = 0;
	cql_elem	parts[MAX_PARTS];
	cql_buf		vals[MAX_PARTS];
	cql_buf		key;

	if (size < 1)
		return 0;
	want = (data[0] & 3) + 1;
	p = (const char *) data + 1;
	end = (const char *) data + size;
	for (int i = 0; i < MAX_PARTS; i++)
		cql_buf_init(&vals[i], A);

	while (n < want && p < end)
	{
		const char *sep = memchr(p, 1, (size_t) (end - p));
		const char *lit;
		const char *lit_end;
		char	   *tstr;
		cql_type   *t = NULL;
		bool		is_null = false;

		if (sep == NULL)
			break;
		lit = sep + 1;
		lit_end = memchr(lit, 1, (size_t) (end - lit));
		if (lit_end == NULL)
			lit_end = end;
		tstr = strndup(p, (size_t) (sep - p));
		p = lit_end < end ? lit_end + 1 : end;
		if (tstr == NULL)
			break;
		if (cql_type_parse(tstr, NULL, NULL, NULL, A, &t) == CQL_OK && t != NULL)
		{
			cql_buf_reset(&vals[n]);
			if (cql_value_parse(t, lit, (size_t) (lit_end - lit), CQL_FORMAT_LITERAL,
								&vals[n], &is_null) == CQL_OK && !is_null &&
				cql_buf_status(&vals[n]) == CQL_OK)
			{
				parts[n].p = vals[n].data;
				parts[n].n = (int32_t) vals[n].len;
				n++;
			}
		}
		cql_type_free(t, A);
		free(tstr);
	}

	if (n >= 1)
	{
		/* one part: the value itself is the key */
		if (cql_murmur3_token(parts[0].p, (size_t) parts[0].n) !=
			expected_token(parts[0].p, (size_t) parts[0].n))
			abort();

		cql_buf_init(&key, A);
		if (cql_routing_key_composite(&key, parts, n) == CQL_OK)
		{
			size_t		off = 0;

			for (int i = 0; i < n; i++)
			{
				size_t		len;

				if (off + 2 > key.len)
					abort();
				len = ((size_t) key.data[off] << 8) | key.data[off + 1];
				if (len != (size_t) parts[i].n || off + 3 + len > key.len ||
					(len > 0 && memcmp(key.data + off + 2, parts[i].p, len) != 0) ||
					key.data[off + 2 + len] != 0)
					abort();
				off += 3 + len;
			}
			if (off != key.len)
				abort();
			if (cql_murmur3_token(key.data, key.len) != expected_token(key.data, key.len))
				abort();
		}
		else
		{
			/* refused only for a part over 65535 bytes */
			bool		big = false;

			for (int i = 0; i < n; i++)
				big |= parts[i].n > 0xFFFF;
			if (!big)
				abort();
		}
		cql_buf_free(&key);
	}
	for (int i = 0; i < MAX_PARTS; i++)
		cql_buf_free(&vals[i]);
	return 0;
}

/*-------------------------------------------------------------------------
 *
 * cql_murmur3.c
 *		Token computation of Cassandra's Murmur3Partitioner and the
 *		composite routing-key layout.
 *
 * Cassandra's MurmurHash3 (x64, 128-bit, seed 0) differs from the
 * reference implementation in one place: the tail bytes are sign-extended
 * before being shifted into k1/k2 (Java's (long) of a signed byte).  Tokens
 * computed with the reference code disagree with the server for any key
 * whose tail has a byte >= 0x80, so we reproduce the quirk.  All arithmetic
 * is unsigned to avoid signed-overflow UB.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_murmur3.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_wire.h"

#include <string.h>

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t
fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static inline uint64_t
get_le64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* Java's (long) of a byte: sign extension, the Cassandra quirk */
static inline uint64_t
sign_extend(uint8_t b)
{
	return (uint64_t) (int64_t) (int8_t) b;
}

int64_t
cql_murmur3_h1(const uint8_t *key, size_t len)
{
	const uint64_t c1 = 0x87c37b91114253d5ULL;
	const uint64_t c2 = 0x4cf5ad432745937fULL;
	uint64_t	h1 = 0;
	uint64_t	h2 = 0;
	uint64_t	k1;
	uint64_t	k2;
	size_t		nblocks = len / 16;
	const uint8_t *tail;
	size_t		rem;

	for (size_t i = 0; i < nblocks; i++)
	{
		k1 = get_le64(key + 16 * i);
		k2 = get_le64(key + 16 * i + 8);

		k1 *= c1;
		k1 = rotl64(k1, 31);
		k1 *= c2;
		h1 ^= k1;
		h1 = rotl64(h1, 27);
		h1 += h2;
		h1 = h1 * 5 + 0x52dce729;

		k2 *= c2;
		k2 = rotl64(k2, 33);
		k2 *= c1;
		h2 ^= k2;
		h2 = rotl64(h2, 31);
		h2 += h1;
		h2 = h2 * 5 + 0x38495ab5;
	}

	tail = key + 16 * nblocks;
	rem = len & 15;
	k1 = 0;
	k2 = 0;
	if (rem > 8)
	{
		for (size_t i = rem; i > 8; i--)
			k2 ^= sign_extend(tail[i - 1]) << (8 * (i - 9));
		k2 *= c2;
		k2 = rotl64(k2, 33);
		k2 *= c1;
		h2 ^= k2;
	}
	if (rem > 0)
	{
		for (size_t i = rem > 8 ? 8 : rem; i > 0; i--)
			k1 ^= sign_extend(tail[i - 1]) << (8 * (i - 1));
		k1 *= c1;
		k1 = rotl64(k1, 31);
		k1 *= c2;
		h1 ^= k1;
	}

	h1 ^= (uint64_t) len;
	h2 ^= (uint64_t) len;
	h1 += h2;
	h2 += h1;
	h1 = fmix64(h1);
	h2 = fmix64(h2);
	h1 += h2;
	return (int64_t) h1;
}

int64_t
cql_murmur3_token(const uint8_t *key, size_t len)
{
	int64_t		h;

	/* the minimum token is reserved: empty keys map to it, nothing else */
	if (len == 0)
		return INT64_MIN;
	h = cql_murmur3_h1(key, len);
	return h == INT64_MIN ? INT64_MAX : h;
}

cql_status
cql_routing_key_composite(cql_buf *out, const cql_elem *parts, int n)
{
	size_t		start = out->len;

	if (n < 0 || (n > 0 && parts == NULL))
		return CQL_ERR_INVALID_ARG;
	/* validate every component before writing anything */
	for (int i = 0; i < n; i++)
	{
		if (parts[i].n < 0)
			return CQL_ERR_INVALID_ARG;
		if (parts[i].n > 0xFFFF)
			return CQL_ERR_TOO_LARGE;
		if (parts[i].n > 0 && parts[i].p == NULL)
			return CQL_ERR_INVALID_ARG;
	}
	for (int i = 0; i < n; i++)
	{
		cql_buf_u16(out, (uint16_t) parts[i].n);
		if (parts[i].n > 0)
			cql_buf_put(out, parts[i].p, (size_t) parts[i].n);
		cql_buf_u8(out, 0);
	}
	if (out->failed)
	{
		if (out->len >= start)
			out->len = start;
		return CQL_ERR_NOMEM;
	}
	return CQL_OK;
}

/*-------------------------------------------------------------------------
 *
 * cql_buf.c
 *		Allocator wrappers, growable output buffers and bounds-checked
 *		readers for the CQL protocol library.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_buf.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_core.h"

#include <stdlib.h>
#include <string.h>

static void *
malloc_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size ? size : 1);
}

static void *
malloc_realloc(void *ctx, void *ptr, size_t size)
{
	(void) ctx;
	return realloc(ptr, size ? size : 1);
}

static void
malloc_free(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

const cql_allocator cql_malloc_allocator = {
	malloc_alloc, malloc_realloc, malloc_free, NULL
};

const char *
cql_status_message(cql_status st)
{
	switch (st)
	{
		case CQL_OK:
			return "success";
		case CQL_ERR_NOMEM:
			return "out of memory";
		case CQL_ERR_INVALID_ARG:
			return "invalid argument";
		case CQL_ERR_MALFORMED:
			return "malformed protocol data";
		case CQL_ERR_TRUNCATED:
			return "truncated protocol data";
		case CQL_ERR_TOO_LARGE:
			return "length or count too large";
		case CQL_ERR_CRC:
			return "checksum mismatch in protocol frame";
		case CQL_ERR_COMPRESSION:
			return "LZ4 compression or decompression failed";
		case CQL_ERR_UNSUPPORTED:
			return "unsupported protocol feature";
		case CQL_ERR_TYPE:
			return "value does not match its CQL type";
		case CQL_ERR_RESOLVE:
			return "could not resolve host name";
		case CQL_ERR_CONNECT:
			return "could not connect";
		case CQL_ERR_IO:
			return "network I/O error";
		case CQL_ERR_CLOSED:
			return "connection closed by server";
		case CQL_ERR_TIMEOUT:
			return "timed out";
		case CQL_ERR_INTERRUPTED:
			return "interrupted";
		case CQL_ERR_PROTOCOL_VERSION:
			return "protocol version not supported by server";
		case CQL_ERR_AUTH:
			return "authentication failed";
		case CQL_ERR_SERVER:
			return "server returned an error";
		case CQL_ERR_BUSY:
			return "no free stream id on connection";
		case CQL_ERR_NO_HOST:
			return "no usable host";
		case CQL_ERR_STATE:
			return "connection is no longer usable";
		case CQL_ERR_TLS:
			return "TLS failure";
	}
	return "unknown status";
}

void *
cql_alloc(const cql_allocator *a, size_t size)
{
	return a->alloc(a->ctx, size);
}

void *
cql_alloc0(const cql_allocator *a, size_t size)
{
	void	   *p = a->alloc(a->ctx, size);

	if (p)
		memset(p, 0, size);
	return p;
}

void *
cql_realloc(const cql_allocator *a, void *ptr, size_t size)
{
	if (ptr == NULL)
		return a->alloc(a->ctx, size);
	return a->realloc(a->ctx, ptr, size);
}

void
cql_free(const cql_allocator *a, void *ptr)
{
	if (ptr)
		a->free(a->ctx, ptr);
}

char *
cql_strndup(const cql_allocator *a, const char *s, size_t n)
{
	char	   *d = cql_alloc(a, n + 1);

	if (d)
	{
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

char *
cql_strdup(const cql_allocator *a, const char *s)
{
	return cql_strndup(a, s, strlen(s));
}

/* ---------------------------------------------------------------------
 * Output buffers
 * ---------------------------------------------------------------------
 */
void
cql_buf_init(cql_buf *b, const cql_allocator *a)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->failed = false;
	b->alloc = a;
}

void
cql_buf_free(cql_buf *b)
{
	cql_free(b->alloc, b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void
cql_buf_reset(cql_buf *b)
{
	b->len = 0;
	b->failed = false;
}

cql_status
cql_buf_status(const cql_buf *b)
{
	return b->failed ? CQL_ERR_NOMEM : CQL_OK;
}

bool
cql_buf_reserve(cql_buf *b, size_t extra)
{
	size_t		need;
	size_t		ncap;
	uint8_t    *nd;

	if (b->failed)
		return false;
	if (extra > SIZE_MAX / 2 - b->len)
	{
		b->failed = true;
		return false;
	}
	need = b->len + extra;
	if (need <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need)
		ncap *= 2;
	nd = cql_realloc(b->alloc, b->data, ncap);
	if (nd == NULL)
	{
		b->failed = true;
		return false;
	}
	b->data = nd;
	b->cap = ncap;
	return true;
}

void
cql_buf_put(cql_buf *b, const void *p, size_t n)
{
	if (n == 0 || !cql_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
cql_buf_u8(cql_buf *b, uint8_t v)
{
	cql_buf_put(b, &v, 1);
}

void
cql_buf_u16(cql_buf *b, uint16_t v)
{
	uint8_t		t[2] = {(uint8_t) (v >> 8), (uint8_t) v};

	cql_buf_put(b, t, 2);
}

void
cql_buf_u32(cql_buf *b, uint32_t v)
{
	uint8_t		t[4];

	cql_put_be32(t, v);
	cql_buf_put(b, t, 4);
}

void
cql_buf_u64(cql_buf *b, uint64_t v)
{
	cql_buf_u32(b, (uint32_t) (v >> 32));
	cql_buf_u32(b, (uint32_t) v);
}

void
cql_buf_i32(cql_buf *b, int32_t v)
{
	cql_buf_u32(b, (uint32_t) v);
}

void
cql_buf_i64(cql_buf *b, int64_t v)
{
	cql_buf_u64(b, (uint64_t) v);
}

void
cql_buf_string_n(cql_buf *b, const char *s, size_t n)
{
	if (n > 0xFFFF)
	{
		b->failed = true;		/* cannot be represented; caller validates */
		return;
	}
	cql_buf_u16(b, (uint16_t) n);
	cql_buf_put(b, s, n);
}

void
cql_buf_string(cql_buf *b, const char *s)
{
	cql_buf_string_n(b, s, strlen(s));
}

void
cql_buf_long_string(cql_buf *b, const char *s, size_t n)
{
	if (n > INT32_MAX)
	{
		b->failed = true;
		return;
	}
	cql_buf_u32(b, (uint32_t) n);
	cql_buf_put(b, s, n);
}

void
cql_buf_bytes(cql_buf *b, const void *p, int32_t n)
{
	cql_buf_i32(b, n);
	if (n > 0)
		cql_buf_put(b, p, (size_t) n);
}

void
cql_buf_short_bytes(cql_buf *b, const void *p, uint16_t n)
{
	cql_buf_u16(b, n);
	cql_buf_put(b, p, n);
}

void
cql_buf_string_list(cql_buf *b, const char *const *v, int n)
{
	cql_buf_u16(b, (uint16_t) n);
	for (int i = 0; i < n; i++)
		cql_buf_string(b, v[i]);
}

void
cql_buf_unsigned_vint(cql_buf *b, uint64_t v)
{
	uint8_t		t[9];
	/* Cassandra's size rule: 1..9 bytes, 7 value bits per byte up to 8 */
	int			len = (639 - 9 * __builtin_clzll(v | 1)) >> 6;

	if (len == 9)
	{
		t[0] = 0xFF;
		for (int i = 0; i < 8; i++)
			t[1 + i] = (uint8_t) (v >> (56 - 8 * i));
	}
	else
	{
		for (int i = len - 1; i >= 0; i--)
		{
			t[i] = (uint8_t) v;
			v >>= 8;
		}
		/* (len-1) leading one bits in the first byte */
		t[0] |= (uint8_t) (~(0xFF >> (len - 1)));
	}
	cql_buf_put(b, t, (size_t) len);
}

void
cql_buf_vint(cql_buf *b, int64_t v)
{
	uint64_t	z = ((uint64_t) v << 1) ^ (uint64_t) (v >> 63);

	cql_buf_unsigned_vint(b, z);
}

void
cql_buf_patch_u32(cql_buf *b, size_t off, uint32_t v)
{
	if (b->failed || off + 4 > b->len)
		return;
	cql_put_be32(b->data + off, v);
}

/* ---------------------------------------------------------------------
 * Readers
 * ---------------------------------------------------------------------
 */
cql_status
cql_read_raw(cql_reader *r, size_t n, const uint8_t **p)
{
	if (cql_reader_remaining(r) < n)
		return CQL_ERR_TRUNCATED;
	*p = r->p;
	r->p += n;
	return CQL_OK;
}

cql_status
cql_read_skip(cql_reader *r, size_t n)
{
	const uint8_t *p;

	return cql_read_raw(r, n, &p);
}

cql_status
cql_read_u8(cql_reader *r, uint8_t *v)
{
	if (cql_reader_remaining(r) < 1)
		return CQL_ERR_TRUNCATED;
	*v = *r->p++;
	return CQL_OK;
}

cql_status
cql_read_u16(cql_reader *r, uint16_t *v)
{
	if (cql_reader_remaining(r) < 2)
		return CQL_ERR_TRUNCATED;
	*v = cql_get_be16(r->p);
	r->p += 2;
	return CQL_OK;
}

cql_status
cql_read_u32(cql_reader *r, uint32_t *v)
{
	if (cql_reader_remaining(r) < 4)
		return CQL_ERR_TRUNCATED;
	*v = cql_get_be32(r->p);
	r->p += 4;
	return CQL_OK;
}

cql_status
cql_read_i32(cql_reader *r, int32_t *v)
{
	uint32_t	u;
	cql_status	st = cql_read_u32(r, &u);

	if (st == CQL_OK)
		*v = (int32_t) u;
	return st;
}

cql_status
cql_read_i64(cql_reader *r, int64_t *v)
{
	if (cql_reader_remaining(r) < 8)
		return CQL_ERR_TRUNCATED;
	*v = (int64_t) cql_get_be64(r->p);
	r->p += 8;
	return CQL_OK;
}

cql_status
cql_read_string(cql_reader *r, const char **s, size_t *n)
{
	uint16_t	len;
	const uint8_t *p;
	cql_status	st;

	if ((st = cql_read_u16(r, &len)) != CQL_OK)
		return st;
	if ((st = cql_read_raw(r, len, &p)) != CQL_OK)
		return st;
	*s = (const char *) p;
	*n = len;
	return CQL_OK;
}

cql_status
cql_read_long_string(cql_reader *r, const char **s, size_t *n)
{
	int32_t		len;
	const uint8_t *p;
	cql_status	st;

	if ((st = cql_read_i32(r, &len)) != CQL_OK)
		return st;
	if (len < 0)
		return CQL_ERR_MALFORMED;
	if ((st = cql_read_raw(r, (size_t) len, &p)) != CQL_OK)
		return st;
	*s = (const char *) p;
	*n = (size_t) len;
	return CQL_OK;
}

cql_status
cql_read_bytes(cql_reader *r, const uint8_t **p, int32_t *n)
{
	int32_t		len;
	cql_status	st;

	if ((st = cql_read_i32(r, &len)) != CQL_OK)
		return st;
	if (len < 0)
	{
		*p = NULL;
		*n = -1;
		return CQL_OK;
	}
	if ((st = cql_read_raw(r, (size_t) len, p)) != CQL_OK)
		return st;
	*n = len;
	return CQL_OK;
}

cql_status
cql_read_short_bytes(cql_reader *r, const uint8_t **p, uint16_t *n)
{
	cql_status	st;

	if ((st = cql_read_u16(r, n)) != CQL_OK)
		return st;
	return cql_read_raw(r, *n, p);
}

cql_status
cql_read_string_dup(cql_reader *r, const cql_allocator *a, char **out)
{
	const char *s;
	size_t		n;
	cql_status	st;

	if ((st = cql_read_string(r, &s, &n)) != CQL_OK)
		return st;
	*out = cql_strndup(a, s, n);
	return *out ? CQL_OK : CQL_ERR_NOMEM;
}

cql_status
cql_read_unsigned_vint(cql_reader *r, uint64_t *v)
{
	uint8_t		first;
	int			extra = 0;
	uint64_t	val;
	cql_status	st;

	if ((st = cql_read_u8(r, &first)) != CQL_OK)
		return st;
	while (extra < 8 && (first & (0x80 >> extra)))
		extra++;
	if (cql_reader_remaining(r) < (size_t) extra)
		return CQL_ERR_TRUNCATED;
	val = (extra == 8) ? 0 : (uint64_t) (first & (0xFF >> (extra + 1)));
	for (int i = 0; i < extra; i++)
		val = (val << 8) | r->p[i];
	r->p += extra;
	*v = val;
	return CQL_OK;
}

cql_status
cql_read_vint(cql_reader *r, int64_t *v)
{
	uint64_t	z;
	cql_status	st;

	if ((st = cql_read_unsigned_vint(r, &z)) != CQL_OK)
		return st;
	*v = (int64_t) ((z >> 1) ^ (~(z & 1) + 1));
	return CQL_OK;
}

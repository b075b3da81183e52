/*-------------------------------------------------------------------------
 *
 * cql_values.c
 *		Fixed-size scalar codecs, uuid/inet text forms, duration, and the
 *		splitting/writing of composite values (collections, tuples, UDTs,
 *		vectors).
 *
 * Decoders take the content of a non-null [bytes] and must be safe on any
 * bytes a peer sends: every length is checked before use and every count is
 * checked against the bytes that remain before anything is allocated.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_values.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_values_int.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* ---------------------------------------------------------------------
 * Small shared helpers
 * ---------------------------------------------------------------------
 */
bool
cql_utf8_valid(const uint8_t *p, size_t n)
{
	size_t		i = 0;

	while (i < n)
	{
		uint8_t		c = p[i];
		uint32_t	cp;
		int			len;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
		{
			len = 2;
			cp = c & 0x1F;
		}
		else if (c >= 0xE0 && c <= 0xEF)
		{
			len = 3;
			cp = c & 0x0F;
		}
		else if (c >= 0xF0 && c <= 0xF4)
		{
			len = 4;
			cp = c & 0x07;
		}
		else
			return false;
		if (n - i < (size_t) len)
			return false;
		for (int k = 1; k < len; k++)
		{
			if ((p[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3F);
		}
		if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
			(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
			return false;
		i += (size_t) len;
	}
	return true;
}

cql_status
cql_parse_int64(const char *s, size_t n, int64_t *v)
{
	size_t		i = 0;
	bool		neg = false;
	uint64_t	acc = 0;
	uint64_t	limit;

	if (n > 0 && (s[0] == '-' || s[0] == '+'))
	{
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return CQL_ERR_TYPE;
	limit = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
	for (; i < n; i++)
	{
		if (!cql_is_digit(s[i]))
			return CQL_ERR_TYPE;
		if (acc > (limit - (uint64_t) (s[i] - '0')) / 10)
			return CQL_ERR_TYPE;
		acc = acc * 10 + (uint64_t) (s[i] - '0');
	}
	*v = neg ? (int64_t) (0 - acc) : (int64_t) acc;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * Scalar decoders
 * ---------------------------------------------------------------------
 */
cql_status
cql_decode_boolean(const uint8_t *p, int32_t n, bool *v)
{
	if (n != 1 || !p)
		return CQL_ERR_TYPE;
	*v = p[0] != 0;
	return CQL_OK;
}

cql_status
cql_decode_tinyint(const uint8_t *p, int32_t n, int8_t *v)
{
	if (n != 1 || !p)
		return CQL_ERR_TYPE;
	*v = (int8_t) p[0];
	return CQL_OK;
}

cql_status
cql_decode_smallint(const uint8_t *p, int32_t n, int16_t *v)
{
	if (n != 2 || !p)
		return CQL_ERR_TYPE;
	*v = (int16_t) cql_get_be16(p);
	return CQL_OK;
}

cql_status
cql_decode_int(const uint8_t *p, int32_t n, int32_t *v)
{
	if (n != 4 || !p)
		return CQL_ERR_TYPE;
	*v = (int32_t) cql_get_be32(p);
	return CQL_OK;
}

cql_status
cql_decode_bigint(const uint8_t *p, int32_t n, int64_t *v)
{
	if (n != 8 || !p)
		return CQL_ERR_TYPE;
	*v = (int64_t) cql_get_be64(p);
	return CQL_OK;
}

/* Bytes of a value of the integer type id (1, 2, 4 or 8), -1 for others. */
static int32_t
integer_width(cql_type_id id)
{
	switch (id)
	{
		case CQL_TYPE_TINYINT:
			return 1;
		case CQL_TYPE_SMALLINT:
			return 2;
		case CQL_TYPE_INT:
			return 4;
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_COUNTER:
			return 8;
		default:
			return -1;
	}
}

void
cql_integer_range(cql_type_id id, int64_t *min, int64_t *max)
{
	int32_t		w = integer_width(id);

	*max = w > 0 && w < 8 ? (int64_t) ((UINT64_C(1) << (8 * w - 1)) - 1) : INT64_MAX;
	*min = -*max - 1;
}

void
cql_encode_integer(cql_buf *b, cql_type_id id, int64_t v)
{
	switch (integer_width(id))
	{
		case 1:
			cql_buf_u8(b, (uint8_t) v);
			break;
		case 2:
			cql_buf_u16(b, (uint16_t) v);
			break;
		case 4:
			cql_buf_i32(b, (int32_t) v);
			break;
		default:
			cql_buf_i64(b, v);
			break;
	}
}

cql_status
cql_decode_integer(cql_type_id id, const uint8_t *p, int32_t n, int64_t *v)
{
	int32_t		want = integer_width(id);

	if (n != want || !p)
		return CQL_ERR_TYPE;
	switch (want)
	{
		case 1:
			*v = (int8_t) p[0];
			break;
		case 2:
			*v = (int16_t) cql_get_be16(p);
			break;
		case 4:
			*v = (int32_t) cql_get_be32(p);
			break;
		default:
			*v = (int64_t) cql_get_be64(p);
			break;
	}
	return CQL_OK;
}

cql_status
cql_decode_float(const uint8_t *p, int32_t n, float *v)
{
	uint32_t	bits;

	if (n != 4 || !p)
		return CQL_ERR_TYPE;
	bits = cql_get_be32(p);
	memcpy(v, &bits, 4);
	return CQL_OK;
}

cql_status
cql_decode_double(const uint8_t *p, int32_t n, double *v)
{
	uint64_t	bits;

	if (n != 8 || !p)
		return CQL_ERR_TYPE;
	bits = cql_get_be64(p);
	memcpy(v, &bits, 8);
	return CQL_OK;
}

cql_status
cql_decode_date(const uint8_t *p, int32_t n, int64_t *days)
{
	if (n != 4 || !p)
		return CQL_ERR_TYPE;
	*days = (int64_t) cql_get_be32(p) - ((int64_t) 1 << 31);
	return CQL_OK;
}

cql_status
cql_decode_uuid(const uint8_t *p, int32_t n, uint8_t out[16])
{
	if (n != 16 || !p)
		return CQL_ERR_TYPE;
	memcpy(out, p, 16);
	return CQL_OK;
}

cql_status
cql_decode_inet(const uint8_t *p, int32_t n, int *family, uint8_t addr[16])
{
	if (!p || (n != 4 && n != 16))
		return CQL_ERR_TYPE;
	*family = (n == 4) ? 4 : 6;
	memcpy(addr, p, (size_t) n);
	return CQL_OK;
}

/*
 * Duration: three signed vints.  Cassandra requires months and days to fit
 * an int32 and all three components to share a sign; a value breaking that
 * rule cannot have come from a real server, so it is a type error.
 */
cql_status
cql_decode_duration(const uint8_t *p, int32_t n, cql_duration *v)
{
	cql_reader	r;
	int64_t		m,
				d,
				ns;

	if (!p || n < 3)
		return CQL_ERR_TYPE;
	cql_reader_init(&r, p, (size_t) n);
	if (cql_read_vint(&r, &m) != CQL_OK ||
		cql_read_vint(&r, &d) != CQL_OK ||
		cql_read_vint(&r, &ns) != CQL_OK ||
		cql_reader_remaining(&r) != 0)
		return CQL_ERR_TYPE;
	if (m < INT32_MIN || m > INT32_MAX || d < INT32_MIN || d > INT32_MAX)
		return CQL_ERR_TYPE;
	if (!((m >= 0 && d >= 0 && ns >= 0) || (m <= 0 && d <= 0 && ns <= 0)))
		return CQL_ERR_TYPE;
	v->months = (int32_t) m;
	v->days = (int32_t) d;
	v->nanoseconds = ns;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * Scalar encoders (content only)
 * ---------------------------------------------------------------------
 */
void
cql_encode_boolean(cql_buf *b, bool v)
{
	cql_buf_u8(b, v ? 1 : 0);
}

void
cql_encode_tinyint(cql_buf *b, int8_t v)
{
	cql_buf_u8(b, (uint8_t) v);
}

void
cql_encode_smallint(cql_buf *b, int16_t v)
{
	cql_buf_u16(b, (uint16_t) v);
}

void
cql_encode_int(cql_buf *b, int32_t v)
{
	cql_buf_i32(b, v);
}

void
cql_encode_bigint(cql_buf *b, int64_t v)
{
	cql_buf_i64(b, v);
}

void
cql_encode_float(cql_buf *b, float v)
{
	uint32_t	bits;

	memcpy(&bits, &v, 4);
	cql_buf_u32(b, bits);
}

void
cql_encode_double(cql_buf *b, double v)
{
	uint64_t	bits;

	memcpy(&bits, &v, 8);
	cql_buf_u64(b, bits);
}

void
cql_encode_date(cql_buf *b, int64_t days)
{
	/* callers range-check; wrap like the server's (int) cast would */
	cql_buf_u32(b, (uint32_t) (days + ((int64_t) 1 << 31)));
}

void
cql_encode_uuid(cql_buf *b, const uint8_t v[16])
{
	cql_buf_put(b, v, 16);
}

cql_status
cql_encode_inet(cql_buf *b, int family, const uint8_t *addr)
{
	if (family == 4)
		cql_buf_put(b, addr, 4);
	else if (family == 6)
		cql_buf_put(b, addr, 16);
	else
		return CQL_ERR_INVALID_ARG;
	return CQL_OK;
}

cql_status
cql_encode_duration(cql_buf *b, const cql_duration *v)
{
	if (!((v->months >= 0 && v->days >= 0 && v->nanoseconds >= 0) ||
		  (v->months <= 0 && v->days <= 0 && v->nanoseconds <= 0)))
		return CQL_ERR_TYPE;
	cql_buf_vint(b, v->months);
	cql_buf_vint(b, v->days);
	cql_buf_vint(b, v->nanoseconds);
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * uuid and inet text
 * ---------------------------------------------------------------------
 */
void
cql_uuid_to_string(const uint8_t v[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	int			o = 0;

	for (int i = 0; i < 16; i++)
	{
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[v[i] >> 4];
		out[o++] = hex[v[i] & 15];
	}
	out[o] = '\0';
}

cql_status
cql_uuid_from_string(const char *s, size_t len, uint8_t out[16])
{
	size_t		i = 0;

	if (len != 36)
		return CQL_ERR_TYPE;
	for (int k = 0; k < 16; k++)
	{
		int			hi,
					lo;

		if (i == 8 || i == 13 || i == 18 || i == 23)
		{
			if (s[i] != '-')
				return CQL_ERR_TYPE;
			i++;
		}
		hi = cql_hex_digit(s[i]);
		lo = cql_hex_digit(s[i + 1]);
		if (hi < 0 || lo < 0)
			return CQL_ERR_TYPE;
		out[k] = (uint8_t) (hi * 16 + lo);
		i += 2;
	}
	return CQL_OK;
}

cql_status
cql_inet_to_string(int family, const uint8_t *addr, char out[46])
{
	if (family == 4)
	{
		snprintf(out, 46, "%u.%u.%u.%u", addr[0], addr[1], addr[2], addr[3]);
		return CQL_OK;
	}
	if (family == 6)
	{
		if (!inet_ntop(AF_INET6, addr, out, 46))
			return CQL_ERR_TYPE;
		return CQL_OK;
	}
	return CQL_ERR_INVALID_ARG;
}

cql_status
cql_inet_from_string(const char *s, size_t len, int *family, uint8_t addr[16])
{
	char		tmp[64];

	if (len == 0 || len >= sizeof(tmp))
		return CQL_ERR_TYPE;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (memchr(tmp, '\0', len))
		return CQL_ERR_TYPE;
	if (inet_pton(AF_INET, tmp, addr) == 1)
	{
		*family = 4;
		return CQL_OK;
	}
	if (inet_pton(AF_INET6, tmp, addr) == 1)
	{
		*family = 6;
		return CQL_OK;
	}
	return CQL_ERR_TYPE;
}

/* ---------------------------------------------------------------------
 * Composite values
 * ---------------------------------------------------------------------
 */

/*
 * Grow-as-needed element array.  The initial size is bounded by what the
 * input could possibly contain, so a lying count costs nothing.
 */
static cql_status
split_alloc(const cql_allocator *a, int64_t count, cql_elem **elems)
{
	*elems = cql_alloc(a, sizeof(cql_elem) * (size_t) (count > 0 ? count : 1));
	return *elems ? CQL_OK : CQL_ERR_NOMEM;
}

static cql_status
split_collection(const cql_type *t, const uint8_t *p, int32_t n,
				 const cql_allocator *a, cql_elem **elems, int32_t *count)
{
	cql_reader	r;
	int32_t		cnt;
	int64_t		total;
	cql_status	st;

	*elems = NULL;
	*count = 0;
	if (n == 0)
		return split_alloc(a, 0, elems);
	cql_reader_init(&r, p, (size_t) n);
	if (cql_read_i32(&r, &cnt) != CQL_OK)
		return CQL_ERR_MALFORMED;
	if (cnt < 0)
		return CQL_ERR_MALFORMED;
	total = (t->id == CQL_TYPE_MAP) ? (int64_t) cnt * 2 : cnt;
	/* every element needs at least its 4-byte length */
	if (total > (int64_t) (cql_reader_remaining(&r) / 4) ||
		total > CQL_MAX_COLLECTION_ELEMS)
		return CQL_ERR_MALFORMED;
	if ((st = split_alloc(a, total, elems)) != CQL_OK)
		return st;
	for (int64_t i = 0; i < total; i++)
	{
		if (cql_read_bytes(&r, &(*elems)[i].p, &(*elems)[i].n) != CQL_OK)
		{
			cql_free(a, *elems);
			*elems = NULL;
			return CQL_ERR_MALFORMED;
		}
	}
	if (cql_reader_remaining(&r) != 0)
	{
		cql_free(a, *elems);
		*elems = NULL;
		return CQL_ERR_MALFORMED;
	}
	*count = (int32_t) total;
	return CQL_OK;
}

static cql_status
split_fields(const cql_type *t, const uint8_t *p, int32_t n,
			 const cql_allocator *a, cql_elem **elems, int32_t *count)
{
	cql_reader	r;
	cql_status	st;
	int			i;

	*elems = NULL;
	*count = 0;
	if ((st = split_alloc(a, t->nsub, elems)) != CQL_OK)
		return st;
	cql_reader_init(&r, p, (size_t) n);
	for (i = 0; i < t->nsub && cql_reader_remaining(&r) > 0; i++)
	{
		if (cql_read_bytes(&r, &(*elems)[i].p, &(*elems)[i].n) != CQL_OK)
		{
			cql_free(a, *elems);
			*elems = NULL;
			return CQL_ERR_MALFORMED;
		}
	}
	/* trailing fields missing from the value (UDT grew): null */
	for (; i < t->nsub; i++)
	{
		(*elems)[i].p = NULL;
		(*elems)[i].n = -1;
	}
	if (cql_reader_remaining(&r) != 0)
	{
		cql_free(a, *elems);
		*elems = NULL;
		return CQL_ERR_MALFORMED;
	}
	*count = t->nsub;
	return CQL_OK;
}

static cql_status
split_vector(const cql_type *t, const uint8_t *p, int32_t n,
			 const cql_allocator *a, cql_elem **elems, int32_t *count)
{
	int			dim = t->dimension;
	int			es;
	cql_status	st;

	*elems = NULL;
	*count = 0;
	if (t->nsub != 1 || dim <= 0)
		return CQL_ERR_INVALID_ARG;
	if (n == 0)
		return split_alloc(a, 0, elems);	/* the "empty" value */
	es = cql_type_fixed_size(t->sub[0]);
	if (es >= 0)
	{
		if ((int64_t) es * dim != n)
			return CQL_ERR_MALFORMED;
		if ((st = split_alloc(a, dim, elems)) != CQL_OK)
			return st;
		for (int i = 0; i < dim; i++)
		{
			(*elems)[i].p = p + (size_t) i * (size_t) es;
			(*elems)[i].n = es;
		}
	}
	else
	{
		cql_reader	r;

		/* each element takes at least one length byte */
		if (dim > n)
			return CQL_ERR_MALFORMED;
		if ((st = split_alloc(a, dim, elems)) != CQL_OK)
			return st;
		cql_reader_init(&r, p, (size_t) n);
		for (int i = 0; i < dim; i++)
		{
			uint64_t	len;

			if (cql_read_unsigned_vint(&r, &len) != CQL_OK ||
				len > cql_reader_remaining(&r))
			{
				cql_free(a, *elems);
				*elems = NULL;
				return CQL_ERR_MALFORMED;
			}
			(*elems)[i].p = r.p;
			(*elems)[i].n = (int32_t) len;
			r.p += len;
		}
		if (cql_reader_remaining(&r) != 0)
		{
			cql_free(a, *elems);
			*elems = NULL;
			return CQL_ERR_MALFORMED;
		}
	}
	*count = dim;
	return CQL_OK;
}

cql_status
cql_split_value(const cql_type *t, const uint8_t *p, int32_t n,
				const cql_allocator *a, cql_elem **elems, int32_t *count)
{
	*elems = NULL;
	*count = 0;
	if (!t || n < 0 || (n > 0 && !p))
		return CQL_ERR_INVALID_ARG;
	if (n == 0)
		p = (const uint8_t *) "";	/* empty values may come with p == NULL */
	switch (t->id)
	{
		case CQL_TYPE_LIST:
		case CQL_TYPE_SET:
		case CQL_TYPE_MAP:
			return split_collection(t, p, n, a, elems, count);
		case CQL_TYPE_TUPLE:
		case CQL_TYPE_UDT:
			return split_fields(t, p, n, a, elems, count);
		case CQL_TYPE_VECTOR:
			return split_vector(t, p, n, a, elems, count);
		default:
			return CQL_ERR_INVALID_ARG;
	}
}

size_t
cql_value_begin(cql_buf *b)
{
	size_t		mark = b->len;

	cql_buf_i32(b, 0);
	return mark;
}

void
cql_value_end(cql_buf *b, size_t mark)
{
	size_t		n;

	if (b->failed || mark + 4 > b->len)
		return;
	n = b->len - mark - 4;
	if (n > INT32_MAX)
	{
		/* cannot be sent; make the buffer report failure */
		b->failed = true;
		return;
	}
	cql_buf_patch_u32(b, mark, (uint32_t) n);
}

void
cql_value_null(cql_buf *b)
{
	cql_buf_i32(b, -1);
}

void
cql_value_unset(cql_buf *b)
{
	cql_buf_i32(b, -2);
}

void
cql_encode_collection_begin(cql_buf *b, int32_t count)
{
	cql_buf_i32(b, count);
}

void
cql_encode_element(cql_buf *b, const void *p, int32_t n)
{
	cql_buf_bytes(b, p, n < 0 ? -1 : n);
}

void
cql_encode_vector_element(cql_buf *b, const cql_type *elem_type,
						  const void *p, int32_t n)
{
	if (n < 0)
		n = 0;
	if (cql_type_fixed_size(elem_type) < 0)
		cql_buf_unsigned_vint(b, (uint64_t) n);
	cql_buf_put(b, p, (size_t) n);
}

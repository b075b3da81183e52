/*-------------------------------------------------------------------------
 *
 * cql_collection_order.c
 *		Cassandra's order of values (AbstractType.compare of each type) and
 *		the canonical form of encoded sets and maps: elements (map: keys)
 *		sorted by that order, without duplicates.
 *
 * Cassandra sorts and de-duplicates the sets and maps it is sent only at
 * the top level of a column value; a set or map inside a UDT, a tuple or
 * another collection is stored exactly as sent.  Such a value must
 * therefore be sent canonical, or it is stored out of order (an equality
 * with the canonical value finds nothing) or with an element twice.  The
 * parser (cql_parse.c) calls cql_collection_canonicalize on every set and
 * map it encodes, at any depth.
 *
 * The comparators follow Cassandra's marshal types: byte order for text,
 * ascii, blob, inet and date (its unsigned encoding); signed order for
 * tinyint, smallint, int, bigint, counter, time and timestamp; numeric
 * order for varint and decimal (1.0 equals 1.00); Java's Double.compare /
 * Float.compare for double and float (-0.0 before 0.0, NaN last); false
 * before true; uuid by version, then (version 1) timestamp or unsigned
 * high bits, then unsigned low bits; timeuuid by timestamp, then the low
 * bytes compared signed (CASSANDRA-8730); frozen lists and sets element by
 * element, maps key then value, shorter first; tuples and UDTs field by
 * field, null first; vectors element by element.  An empty value sorts
 * first.  Other types (duration, custom) compare by bytes.
 *
 * Duplicates: for a set the first of equal elements is kept; for a map
 * the first key's bytes with the last value, as Cassandra's map literal
 * ({'k': 1, 'k': 2} stores 'k': 2).
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_collection_order.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_values_int.h"

#include <string.h>

/* What a comparison needs besides the values: memory for decimals. */
typedef struct order_ctx
{
	const cql_allocator *a;
	bool		failed;			/* an allocation failed: result unusable */
} order_ctx;

static int	compare_value(order_ctx *cx, const cql_type *t,
						  const uint8_t *a, size_t an,
						  const uint8_t *b, size_t bn);

static int
sign_of(int64_t d)
{
	return (d > 0) - (d < 0);
}

/* Unsigned lexicographic order, a prefix first (Java's compareUnsigned). */
static int
compare_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t		n = an < bn ? an : bn;
	int			c = n > 0 ? memcmp(a, b, n) : 0;

	if (c != 0)
		return sign_of(c);
	return sign_of((int64_t) an - (int64_t) bn);
}

static uint64_t
be_u64(const uint8_t *p, size_t n)
{
	uint64_t	v = 0;

	for (size_t i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Two's complement big-endian integers of the same length n (1..8). */
static int
compare_signed(const uint8_t *a, const uint8_t *b, size_t n)
{
	int			sa = (a[0] & 0x80) != 0;
	int			sb = (b[0] & 0x80) != 0;

	if (sa != sb)
		return sa ? -1 : 1;
	/* same sign: unsigned order of the bytes is the numeric order */
	return compare_bytes(a, n, b, n);
}

/* Numeric order of two varints (any length, redundant sign bytes too). */
static int
compare_varint(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	int			na = (a[0] & 0x80) != 0;
	int			nb = (b[0] & 0x80) != 0;
	size_t		n = an > bn ? an : bn;

	if (na != nb)
		return na ? -1 : 1;
	/* sign-extend both to n bytes and compare unsigned */
	for (size_t i = 0; i < n; i++)
	{
		uint8_t		x = i < n - an ? (na ? 0xFF : 0x00) : a[i - (n - an)];
		uint8_t		y = i < n - bn ? (nb ? 0xFF : 0x00) : b[i - (n - bn)];

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/*
 * The magnitude of a nonzero decimal as its significant digits without
 * trailing zeros, and the power of ten just above its first digit: value
 * = 0.d1d2... * 10^*pos.  Returns false (cx->failed) when out of memory.
 */
static bool
decimal_digits(order_ctx *cx, const uint8_t *p, size_t n, cql_buf *digits,
			   int64_t *pos)
{
	int32_t		scale = (int32_t) (uint32_t) be_u64(p, 4);
	size_t		first,
				len;

	cql_buf_reset(digits);
	if (cql_varint_to_string(p + 4, (int32_t) (n - 4), digits) != CQL_OK)
	{
		cx->failed = true;
		return false;
	}
	first = (digits->len > 0 && digits->data[0] == '-') ? 1 : 0;
	/* unscaled has len - first digits: value = 0.digits * 10^(that - scale) */
	*pos = (int64_t) (digits->len - first) - (int64_t) scale;
	len = digits->len;
	while (len > first && digits->data[len - 1] == '0')
		len--;
	memmove(digits->data, digits->data + first, len - first);
	digits->len = len - first;
	return true;
}

/* Numeric order of two decimals ([int scale][varint unscaled]). */
static int
compare_decimal(order_ctx *cx, const uint8_t *a, size_t an,
				const uint8_t *b, size_t bn)
{
	int			sa,
				sb;
	cql_buf		da,
				db;
	int64_t		pa,
				pb;
	int			c;

	if (an < 5 || bn < 5)
		return compare_bytes(a, an, b, bn);
	/* the same scale: the unscaled values decide */
	if (memcmp(a, b, 4) == 0)
		return compare_varint(a + 4, an - 4, b + 4, bn - 4);
	sa = compare_varint(a + 4, an - 4, (const uint8_t *) "\0", 1);
	sb = compare_varint(b + 4, bn - 4, (const uint8_t *) "\0", 1);
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (sa == 0)
		return 0;				/* both zero, whatever the scale */
	cql_buf_init(&da, cx->a);
	cql_buf_init(&db, cx->a);
	c = 0;
	if (decimal_digits(cx, a, an, &da, &pa) && decimal_digits(cx, b, bn, &db, &pb))
	{
		/* the first digit's place, then the digits (a longer one is more) */
		if (pa != pb)
			c = pa < pb ? -1 : 1;
		else
			c = compare_bytes(da.data, da.len, db.data, db.len);
		if (sa < 0)
			c = -c;
	}
	cql_buf_free(&da);
	cql_buf_free(&db);
	return c;
}

/* Java's Double.compare of two big-endian binary64 values. */
static int
compare_double(const uint8_t *a, const uint8_t *b)
{
	uint64_t	ua = be_u64(a, 8),
				ub = be_u64(b, 8);
	double		x,
				y;
	int64_t		ia,
				ib;

	memcpy(&x, &ua, 8);
	memcpy(&y, &ub, 8);
	if (x < y)
		return -1;
	if (x > y)
		return 1;
	/* doubleToLongBits: one NaN; then -0.0 before 0.0, NaN after all */
	if (x != x)
		ua = UINT64_C(0x7ff8000000000000);
	if (y != y)
		ub = UINT64_C(0x7ff8000000000000);
	ia = (int64_t) ua;
	ib = (int64_t) ub;
	return (ia > ib) - (ia < ib);
}

/* Java's Float.compare of two big-endian binary32 values. */
static int
compare_float(const uint8_t *a, const uint8_t *b)
{
	uint32_t	ua = (uint32_t) be_u64(a, 4),
				ub = (uint32_t) be_u64(b, 4);
	float		x,
				y;
	int32_t		ia,
				ib;

	memcpy(&x, &ua, 4);
	memcpy(&y, &ub, 4);
	if (x < y)
		return -1;
	if (x > y)
		return 1;
	if (x != x)
		ua = 0x7fc00000u;
	if (y != y)
		ub = 0x7fc00000u;
	ia = (int32_t) ua;
	ib = (int32_t) ub;
	return (ia > ib) - (ia < ib);
}

/* A version 1 UUID's high half reordered so that the time comes first. */
static int64_t
reordered_time(const uint8_t *u)
{
	uint64_t	msb = be_u64(u, 8);

	return (int64_t) ((msb << 48) | ((msb << 16) & UINT64_C(0xFFFF00000000)) | (msb >> 32));
}

/* UUIDType: version, then time (v1) or unsigned high bits, then low bits. */
static int
compare_uuid(const uint8_t *a, const uint8_t *b)
{
	int			va = a[6] >> 4,
				vb = b[6] >> 4;

	if (va != vb)
		return va < vb ? -1 : 1;
	if (va == 1)
	{
		int64_t		ta = reordered_time(a),
					tb = reordered_time(b);

		if (ta != tb)
			return ta < tb ? -1 : 1;
	}
	else
	{
		int			c = compare_bytes(a, 8, b, 8);

		if (c != 0)
			return c;
	}
	return compare_bytes(a + 8, 8, b + 8, 8);
}

/* TimeUUIDType: time, then the low eight bytes compared as signed bytes. */
static int
compare_timeuuid(const uint8_t *a, const uint8_t *b)
{
	int64_t		ta = reordered_time(a),
				tb = reordered_time(b);

	if (ta != tb)
		return ta < tb ? -1 : 1;
	for (int i = 8; i < 16; i++)
		if (a[i] != b[i])
			return (int8_t) a[i] < (int8_t) b[i] ? -1 : 1;
	return 0;
}

/* Read one [bytes] of a composite value: length -1 is null (*p NULL). */
static bool
next_bytes(cql_reader *r, const uint8_t **p, size_t *n)
{
	int32_t		len;

	if (cql_read_i32(r, &len) != CQL_OK)
		return false;
	if (len < 0)
	{
		*p = NULL;
		*n = 0;
		return true;
	}
	if (cql_read_raw(r, (size_t) len, p) != CQL_OK)
		return false;
	*n = (size_t) len;
	return true;
}

/*
 * Frozen list, set (element by element) or map (key, then value), then
 * the shorter first.  Malformed bytes compare by bytes.
 */
static int
compare_collection(order_ctx *cx, const cql_type *t, const uint8_t *a, size_t an,
				   const uint8_t *b, size_t bn)
{
	cql_reader	ra,
				rb;
	int32_t		ca,
				cb;
	int			per = t->id == CQL_TYPE_MAP ? 2 : 1;

	if (t->nsub < per)
		return compare_bytes(a, an, b, bn);
	cql_reader_init(&ra, a, an);
	cql_reader_init(&rb, b, bn);
	if (cql_read_i32(&ra, &ca) != CQL_OK || cql_read_i32(&rb, &cb) != CQL_OK)
		return compare_bytes(a, an, b, bn);
	for (int32_t i = 0; i < ca && i < cb; i++)
	{
		for (int k = 0; k < per; k++)
		{
			const uint8_t *pa,
					   *pb;
			size_t		na,
						nb;
			int			c;

			if (!next_bytes(&ra, &pa, &na) || !next_bytes(&rb, &pb, &nb) ||
				!pa || !pb)
				return compare_bytes(a, an, b, bn);
			c = compare_value(cx, t->sub[k], pa, na, pb, nb);
			if (c != 0)
				return c;
		}
	}
	return (ca > cb) - (ca < cb);
}

/* Tuple or UDT: field by field, a null field first, fewer fields first. */
static int
compare_fields(order_ctx *cx, const cql_type *t, const uint8_t *a, size_t an,
			   const uint8_t *b, size_t bn)
{
	cql_reader	ra,
				rb;

	cql_reader_init(&ra, a, an);
	cql_reader_init(&rb, b, bn);
	for (int i = 0; cql_reader_remaining(&ra) > 0 && cql_reader_remaining(&rb) > 0; i++)
	{
		const uint8_t *pa,
				   *pb;
		size_t		na,
					nb;
		int			c;

		if (i >= t->nsub || !next_bytes(&ra, &pa, &na) || !next_bytes(&rb, &pb, &nb))
			return compare_bytes(a, an, b, bn);
		if (!pa || !pb)
		{
			if (pa || pb)
				return pa ? 1 : -1;
			continue;
		}
		c = compare_value(cx, t->sub[i], pa, na, pb, nb);
		if (c != 0)
			return c;
	}
	if (cql_reader_remaining(&ra) == 0)
		return cql_reader_remaining(&rb) == 0 ? 0 : -1;
	return 1;
}

/* Vector: element by element (fixed-size, or unsigned vint lengths). */
static int
compare_vector(order_ctx *cx, const cql_type *t, const uint8_t *a, size_t an,
			   const uint8_t *b, size_t bn)
{
	int			es;
	cql_reader	ra,
				rb;

	if (t->nsub != 1 || t->dimension <= 0)
		return compare_bytes(a, an, b, bn);
	es = cql_type_fixed_size(t->sub[0]);
	cql_reader_init(&ra, a, an);
	cql_reader_init(&rb, b, bn);
	for (int i = 0; i < t->dimension; i++)
	{
		uint64_t	la = (uint64_t) es,
					lb = (uint64_t) es;
		const uint8_t *pa,
				   *pb;
		int			c;

		if (es < 0 && (cql_read_unsigned_vint(&ra, &la) != CQL_OK ||
					   cql_read_unsigned_vint(&rb, &lb) != CQL_OK))
			return compare_bytes(a, an, b, bn);
		if (la > cql_reader_remaining(&ra) || lb > cql_reader_remaining(&rb) ||
			cql_read_raw(&ra, (size_t) la, &pa) != CQL_OK ||
			cql_read_raw(&rb, (size_t) lb, &pb) != CQL_OK)
			return compare_bytes(a, an, b, bn);
		c = compare_value(cx, t->sub[0], pa, (size_t) la, pb, (size_t) lb);
		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * Cassandra's comparator of type t on two non-null serialized values.
 * A value of the wrong length for its type compares by bytes.
 */
static int
compare_value(order_ctx *cx, const cql_type *t, const uint8_t *a, size_t an,
			  const uint8_t *b, size_t bn)
{
	if (an == 0 || bn == 0)
		return (an > 0) - (bn > 0);	/* an empty value first */
	switch (t->id)
	{
		case CQL_TYPE_TINYINT:
		case CQL_TYPE_SMALLINT:
		case CQL_TYPE_INT:
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_COUNTER:
		case CQL_TYPE_TIMESTAMP:
		case CQL_TYPE_TIME:
			if (an != bn || an > 8)
				break;
			return compare_signed(a, b, an);
		case CQL_TYPE_VARINT:
			return compare_varint(a, an, b, bn);
		case CQL_TYPE_DECIMAL:
			return compare_decimal(cx, a, an, b, bn);
		case CQL_TYPE_DOUBLE:
			if (an != 8 || bn != 8)
				break;
			return compare_double(a, b);
		case CQL_TYPE_FLOAT:
			if (an != 4 || bn != 4)
				break;
			return compare_float(a, b);
		case CQL_TYPE_BOOLEAN:
			return (a[0] != 0) - (b[0] != 0);
		case CQL_TYPE_UUID:
			if (an != 16 || bn != 16)
				break;
			return compare_uuid(a, b);
		case CQL_TYPE_TIMEUUID:
			if (an != 16 || bn != 16)
				break;
			return compare_timeuuid(a, b);
		case CQL_TYPE_LIST:
		case CQL_TYPE_SET:
		case CQL_TYPE_MAP:
			return compare_collection(cx, t, a, an, b, bn);
		case CQL_TYPE_TUPLE:
		case CQL_TYPE_UDT:
			return compare_fields(cx, t, a, an, b, bn);
		case CQL_TYPE_VECTOR:
			return compare_vector(cx, t, a, an, b, bn);
		default:
			/* ascii, text, blob, inet, date (unsigned), duration, custom */
			break;
	}
	return compare_bytes(a, an, b, bn);
}

int
cql_value_compare(const cql_type *t, const uint8_t *a, size_t an,
				  const uint8_t *b, size_t bn, const cql_allocator *alloc,
				  cql_status *st)
{
	order_ctx	cx = {alloc, false};
	int			c;

	c = compare_value(&cx, t, a ? a : (const uint8_t *) "", an,
					  b ? b : (const uint8_t *) "", bn);
	*st = cx.failed ? CQL_ERR_NOMEM : CQL_OK;
	return c;
}

/* One element of a set, or one entry of a map, being sorted. */
typedef struct entry
{
	const uint8_t *k;
	size_t		kn;
	const uint8_t *v;			/* map value, NULL for a set */
	size_t		vn;
} entry;

/*
 * Stable bottom-up merge sort of e[0..n) by key, tmp of n entries.
 * Returns the array holding the result (e or tmp).
 */
static entry *
sort_entries(order_ctx *cx, const cql_type *kt, entry *e, entry *tmp, size_t n)
{
	entry	   *src = e,
			   *dst = tmp;

	for (size_t w = 1; w < n; w *= 2)
	{
		for (size_t lo = 0; lo < n; lo += 2 * w)
		{
			size_t		mid = lo + w < n ? lo + w : n;
			size_t		hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t		i = lo,
						j = mid,
						o = lo;

			while (i < mid && j < hi)
			{
				/* <= keeps equal keys in input order */
				if (compare_value(cx, kt, src[i].k, src[i].kn, src[j].k, src[j].kn) <= 0)
					dst[o++] = src[i++];
				else
					dst[o++] = src[j++];
			}
			while (i < mid)
				dst[o++] = src[i++];
			while (j < hi)
				dst[o++] = src[j++];
		}
		{
			entry	   *x = src;

			src = dst;
			dst = x;
		}
	}
	return src;
}

static void
put_bytes(uint8_t *out, size_t *pos, const uint8_t *p, size_t n)
{
	out[*pos] = (uint8_t) (n >> 24);
	out[*pos + 1] = (uint8_t) (n >> 16);
	out[*pos + 2] = (uint8_t) (n >> 8);
	out[*pos + 3] = (uint8_t) n;
	*pos += 4;
	if (n > 0)
		memcpy(out + *pos, p, n);
	*pos += n;
}

cql_status
cql_collection_canonicalize(const cql_type *t, cql_buf *content, size_t at)
{
	const cql_allocator *a = content->alloc;
	order_ctx	cx = {a, false};
	bool		is_map;
	size_t		size;
	uint8_t    *copy = NULL;
	entry	   *e = NULL,
			   *tmp = NULL,
			   *sorted;
	cql_reader	r;
	int32_t		count;
	size_t		n = 0,
				pos,
				kept = 0;
	cql_status	st = CQL_OK;

	if (content->failed)
		return CQL_ERR_NOMEM;
	if (!t || (t->id != CQL_TYPE_SET && t->id != CQL_TYPE_MAP) ||
		t->nsub < (t->id == CQL_TYPE_MAP ? 2 : 1) || at + 4 > content->len)
		return CQL_OK;
	is_map = t->id == CQL_TYPE_MAP;
	size = content->len - at;
	cql_reader_init(&r, content->data + at, size);
	if (cql_read_i32(&r, &count) != CQL_OK || count < 0)
		return CQL_ERR_MALFORMED;
	if (count < 2)
		return CQL_OK;
	/* each element takes at least its 4 length bytes */
	if ((size_t) count > size / (is_map ? 8 : 4))
		return CQL_ERR_MALFORMED;

	copy = cql_alloc(a, size);
	e = cql_alloc(a, sizeof(entry) * (size_t) count);
	tmp = cql_alloc(a, sizeof(entry) * (size_t) count);
	if (!copy || !e || !tmp)
	{
		st = CQL_ERR_NOMEM;
		goto done;
	}
	memcpy(copy, content->data + at, size);
	cql_reader_init(&r, copy + 4, size - 4);
	for (n = 0; n < (size_t) count; n++)
	{
		e[n].v = NULL;
		e[n].vn = 0;
		if (!next_bytes(&r, &e[n].k, &e[n].kn) || !e[n].k ||
			(is_map && (!next_bytes(&r, &e[n].v, &e[n].vn) || !e[n].v)))
		{
			st = CQL_ERR_MALFORMED;
			goto done;
		}
	}
	if (cql_reader_remaining(&r) != 0)
	{
		st = CQL_ERR_MALFORMED;
		goto done;
	}
	sorted = sort_entries(&cx, t->sub[0], e, tmp, n);
	if (cx.failed)
	{
		st = CQL_ERR_NOMEM;
		goto done;
	}

	/* write back over the original bytes: the result is never longer */
	pos = at + 4;
	for (size_t i = 0; i < n;)
	{
		size_t		j = i + 1;

		while (j < n && compare_value(&cx, t->sub[0], sorted[i].k, sorted[i].kn,
									  sorted[j].k, sorted[j].kn) == 0)
			j++;
		/* set: the first of equal elements; map: its key, the last value */
		put_bytes(content->data, &pos, sorted[i].k, sorted[i].kn);
		if (is_map)
			put_bytes(content->data, &pos, sorted[j - 1].v, sorted[j - 1].vn);
		kept++;
		i = j;
	}
	if (cx.failed)
	{
		/* the bytes written so far may be mixed: restore the original */
		memcpy(content->data + at, copy, size);
		st = CQL_ERR_NOMEM;
		goto done;
	}
	cql_buf_patch_u32(content, at, (uint32_t) kept);
	content->len = pos;

done:
	cql_free(a, copy);
	cql_free(a, e);
	cql_free(a, tmp);
	return st;
}

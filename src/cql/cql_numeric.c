/*-------------------------------------------------------------------------
 *
 * cql_numeric.c
 *		Exact conversions between CQL varint/decimal values and decimal
 *		strings.
 *
 * varint is a minimal big-endian two's complement integer of any length;
 * decimal is [int scale][varint unscaled] meaning unscaled * 10^-scale.
 * Conversions are schoolbook base-10^9 arithmetic: quadratic, so the
 * inputs are capped (CQL_MAX_VARINT_BYTES, CQL_MAX_NUMERIC_DIGITS) to keep
 * a hostile value from costing more than a few milliseconds.
 *
 * Decimal text form: plain notation ("-123.45", "0.001", "1.50": the scale
 * is kept exactly, trailing zeros included) when 0 <= scale <= 10000;
 * otherwise "<unscaled>E<exp>" with exp = -scale ("123E+2" for unscaled 123,
 * scale -2).  Both forms are valid CQL and JSON numbers and parse back to
 * the identical (unscaled, scale) pair.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_numeric.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_values_int.h"

#include <stdio.h>
#include <string.h>

#define BASE9 1000000000u
#define PLAIN_SCALE_MAX 10000

/*
 * Append the decimal digits of a varint's magnitude to 'out' (no sign);
 * *neg tells the sign.
 */
static cql_status
varint_digits(const uint8_t *p, int32_t n, cql_buf *out, bool *neg)
{
	const cql_allocator *a = out->alloc;
	uint8_t    *mag;
	uint32_t   *limbs;
	uint32_t   *chunks;
	int			nl,
				nchunks = 0,
				top;
	int32_t		i;

	if (n <= 0 || !p)
		return CQL_ERR_TYPE;
	if (n > CQL_MAX_VARINT_BYTES)
		return CQL_ERR_TOO_LARGE;
	*neg = (p[0] & 0x80) != 0;

	mag = cql_alloc(a, (size_t) n);
	nl = (n + 3) / 4;
	limbs = cql_alloc0(a, sizeof(uint32_t) * (size_t) nl);
	/* each base-1e9 chunk absorbs at least 29 bits */
	chunks = cql_alloc(a, sizeof(uint32_t) * (size_t) (nl * 32 / 29 + 2));
	if (!mag || !limbs || !chunks)
	{
		cql_free(a, mag);
		cql_free(a, limbs);
		cql_free(a, chunks);
		return CQL_ERR_NOMEM;
	}
	memcpy(mag, p, (size_t) n);
	if (*neg)
	{
		/* negate: invert and add one */
		int			carry = 1;

		for (i = n - 1; i >= 0; i--)
		{
			int			v = (uint8_t) ~mag[i] + carry;

			mag[i] = (uint8_t) v;
			carry = v >> 8;
		}
	}
	/* big-endian bytes -> big-endian 32-bit limbs (limbs[0] most significant) */
	for (i = 0; i < n; i++)
	{
		int32_t		pos = (n - 1 - i);	/* byte position from the least significant */

		limbs[nl - 1 - pos / 4] |= (uint32_t) mag[i] << (8 * (pos % 4));
	}

	/* repeated division by 1e9 */
	top = 0;
	for (;;)
	{
		uint64_t	rem = 0;

		while (top < nl && limbs[top] == 0)
			top++;
		if (top == nl)
			break;
		for (int k = top; k < nl; k++)
		{
			uint64_t	cur = (rem << 32) | limbs[k];

			limbs[k] = (uint32_t) (cur / BASE9);
			rem = cur % BASE9;
		}
		chunks[nchunks++] = (uint32_t) rem;
	}
	if (nchunks == 0)
		cql_buf_u8(out, '0');
	else
	{
		char		tmp[16];

		snprintf(tmp, sizeof(tmp), "%u", chunks[nchunks - 1]);
		cql_buf_str(out, tmp);
		for (int k = nchunks - 2; k >= 0; k--)
		{
			snprintf(tmp, sizeof(tmp), "%09u", chunks[k]);
			cql_buf_str(out, tmp);
		}
	}
	if (*neg && nchunks == 0)
		*neg = false;			/* cannot happen for a negative varint */
	cql_free(a, mag);
	cql_free(a, limbs);
	cql_free(a, chunks);
	return cql_buf_status(out);
}

cql_status
cql_varint_to_string(const uint8_t *p, int32_t n, cql_buf *out)
{
	cql_buf		digits;
	bool		neg;
	cql_status	st;

	cql_buf_init(&digits, out->alloc);
	st = varint_digits(p, n, &digits, &neg);
	if (st == CQL_OK)
	{
		if (neg)
			cql_buf_u8(out, '-');
		cql_buf_put(out, digits.data, digits.len);
		st = cql_buf_status(out);
	}
	cql_buf_free(&digits);
	return st;
}

/*
 * Append the minimal two's complement encoding of a magnitude given as
 * little-endian 32-bit limbs.
 */
static void
put_twos(cql_buf *out, const uint32_t *limbs, int nl, bool neg)
{
	const cql_allocator *a = out->alloc;
	size_t		nb = (size_t) nl * 4 + 1;
	uint8_t    *m = cql_alloc(a, nb);
	size_t		start;

	if (!m)
	{
		out->failed = true;
		return;
	}
	m[0] = 0;
	for (int i = 0; i < nl; i++)
	{
		size_t		base = nb - 4 * (size_t) i;

		m[base - 1] = (uint8_t) limbs[i];
		m[base - 2] = (uint8_t) (limbs[i] >> 8);
		m[base - 3] = (uint8_t) (limbs[i] >> 16);
		m[base - 4] = (uint8_t) (limbs[i] >> 24);
	}
	if (neg)
	{
		int			carry = 1;

		for (size_t i = nb; i-- > 0;)
		{
			int			v = (uint8_t) ~m[i] + carry;

			m[i] = (uint8_t) v;
			carry = v >> 8;
		}
		/* all-zero magnitude negated is zero again: carry wrapped */
	}
	/* strip redundant sign bytes */
	start = 0;
	while (start + 1 < nb &&
		   ((m[start] == 0x00 && !(m[start + 1] & 0x80)) ||
			(m[start] == 0xFF && (m[start + 1] & 0x80))))
		start++;
	cql_buf_put(out, m + start, nb - start);
	cql_free(a, m);
}

/*
 * Parse the digit string [s, s+n) (digits only) into little-endian limbs.
 * *limbs is allocated.
 */
static cql_status
digits_to_limbs(const char *s, size_t n, const cql_allocator *a,
				uint32_t **limbs_out, int *nl_out)
{
	size_t		cap = n / 9 + 2;
	uint32_t   *limbs = cql_alloc0(a, sizeof(uint32_t) * cap);
	int			nl = 0;
	size_t		i = 0;
	size_t		first = n % 9;

	if (!limbs)
		return CQL_ERR_NOMEM;
	if (first == 0)
		first = 9;
	while (i < n)
	{
		size_t		take = (i == 0) ? first : 9;
		uint32_t	chunk = 0;
		uint32_t	mul = 1;
		uint64_t	carry;

		for (size_t k = 0; k < take; k++)
		{
			chunk = chunk * 10 + (uint32_t) (s[i + k] - '0');
			mul *= 10;
		}
		i += take;
		/* limbs = limbs * mul + chunk */
		carry = chunk;
		for (int k = 0; k < nl; k++)
		{
			uint64_t	cur = (uint64_t) limbs[k] * mul + carry;

			limbs[k] = (uint32_t) cur;
			carry = cur >> 32;
		}
		if (carry)
			limbs[nl++] = (uint32_t) carry;
	}
	*limbs_out = limbs;
	*nl_out = nl;
	return CQL_OK;
}

/* Encode a sign and a string of decimal digits as varint content. */
static cql_status
put_varint_digits(const char *digits, size_t nd, bool neg, cql_buf *content)
{
	uint32_t   *limbs;
	int			nl;
	cql_status	st;

	if (nd > CQL_MAX_NUMERIC_DIGITS)
		return CQL_ERR_TOO_LARGE;
	if ((st = digits_to_limbs(digits, nd, content->alloc, &limbs, &nl)) != CQL_OK)
		return st;
	put_twos(content, limbs, nl, neg);
	cql_free(content->alloc, limbs);
	return cql_buf_status(content);
}

cql_status
cql_varint_from_string(const char *s, size_t len, cql_buf *content)
{
	size_t		i = 0;
	bool		neg = false;

	if (len > 0 && (s[0] == '-' || s[0] == '+'))
	{
		neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return CQL_ERR_TYPE;
	for (size_t k = i; k < len; k++)
		if (!cql_is_digit(s[k]))
			return CQL_ERR_TYPE;
	while (i + 1 < len && s[i] == '0')
		i++;
	return put_varint_digits(s + i, len - i, neg, content);
}

void
cql_encode_varint_i64(cql_buf *b, int64_t v)
{
	uint8_t		t[8];
	int			start = 0;

	for (int i = 0; i < 8; i++)
		t[i] = (uint8_t) ((uint64_t) v >> (56 - 8 * i));
	while (start < 7 &&
		   ((t[start] == 0x00 && !(t[start + 1] & 0x80)) ||
			(t[start] == 0xFF && (t[start + 1] & 0x80))))
		start++;
	cql_buf_put(b, t + start, (size_t) (8 - start));
}

cql_status
cql_decimal_to_string(const uint8_t *p, int32_t n, cql_buf *out)
{
	int32_t		scale;
	cql_buf		d;
	bool		neg;
	cql_status	st;

	if (!p || n < 5)
		return CQL_ERR_TYPE;
	scale = (int32_t) cql_get_be32(p);
	cql_buf_init(&d, out->alloc);
	if ((st = varint_digits(p + 4, n - 4, &d, &neg)) != CQL_OK)
	{
		cql_buf_free(&d);
		return st;
	}
	if (neg)
		cql_buf_u8(out, '-');
	if (scale == 0)
		cql_buf_put(out, d.data, d.len);
	else if (scale > 0 && scale <= PLAIN_SCALE_MAX)
	{
		size_t		nd = d.len;

		if (nd > (size_t) scale)
		{
			cql_buf_put(out, d.data, nd - (size_t) scale);
			cql_buf_u8(out, '.');
			cql_buf_put(out, d.data + nd - (size_t) scale, (size_t) scale);
		}
		else
		{
			cql_buf_str(out, "0.");
			for (size_t k = nd; k < (size_t) scale; k++)
				cql_buf_u8(out, '0');
			cql_buf_put(out, d.data, nd);
		}
	}
	else
	{
		char		e[24];

		cql_buf_put(out, d.data, d.len);
		snprintf(e, sizeof(e), "E%+lld", -(long long) scale);
		cql_buf_str(out, e);
	}
	cql_buf_free(&d);
	return cql_buf_status(out);
}

cql_status
cql_decimal_from_string(const char *s, size_t len, cql_buf *content)
{
	size_t		i = 0;
	bool		neg = false;
	char	   *digits;
	size_t		nd = 0,
				nfrac = 0,
				nint = 0;
	int64_t		exp = 0;
	int64_t		scale;
	cql_status	st;

	if (len > 0 && (s[0] == '-' || s[0] == '+'))
	{
		neg = s[0] == '-';
		i = 1;
	}
	if (len - i > CQL_MAX_NUMERIC_DIGITS + 32)
		return CQL_ERR_TOO_LARGE;
	digits = cql_alloc(content->alloc, len + 1);
	if (!digits)
		return CQL_ERR_NOMEM;
	while (i < len && cql_is_digit(s[i]))
	{
		digits[nd++] = s[i++];
		nint++;
	}
	if (i < len && s[i] == '.')
	{
		i++;
		while (i < len && cql_is_digit(s[i]))
		{
			digits[nd++] = s[i++];
			nfrac++;
		}
	}
	if (nd == 0)
	{
		cql_free(content->alloc, digits);
		return CQL_ERR_TYPE;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E'))
	{
		size_t		es = ++i;

		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		while (i < len && cql_is_digit(s[i]))
			i++;
		/* exponents beyond int32 range cannot give a valid scale */
		if (i - es > 12 || cql_parse_int64(s + es, i - es, &exp) != CQL_OK)
		{
			cql_free(content->alloc, digits);
			return CQL_ERR_TYPE;
		}
	}
	if (i != len)
	{
		cql_free(content->alloc, digits);
		return CQL_ERR_TYPE;
	}
	scale = (int64_t) nfrac - exp;
	if (scale < INT32_MIN || scale > INT32_MAX)
	{
		cql_free(content->alloc, digits);
		return CQL_ERR_TYPE;
	}
	(void) nint;
	cql_buf_i32(content, (int32_t) scale);
	{
		size_t		k = 0;

		while (k + 1 < nd && digits[k] == '0')
			k++;
		st = put_varint_digits(digits + k, nd - k, neg, content);
	}
	cql_free(content->alloc, digits);
	return st;
}

/*-------------------------------------------------------------------------
 *
 * cql_format.c
 *		Render CQL values as CQL literals or as JSON.
 *
 * The exact forms are documented in cql_types.h next to cql_value_format;
 * cql_parse.c accepts everything produced here, so format followed by parse
 * reproduces the original bytes (cross-checked by the unit tests).
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_format.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_values_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Floating point: shortest round-trip text
 * ---------------------------------------------------------------------
 */

/*
 * Given the digits of "%.Ne" output ("d.ddde[+-]x"), build the final text:
 * plain notation for decimal exponents -5..16, otherwise scientific.
 */
static void
put_float_digits(const char *e_text, cql_buf *out)
{
	char		digits[40];
	int			nd = 0;
	int			exp10;
	const char *p = e_text;
	const char *e;
	char		tmp[64];

	if (*p == '-')
	{
		cql_buf_u8(out, '-');
		p++;
	}
	e = strchr(p, 'e');
	if (!e)
		return;					/* cannot happen for finite values */
	for (const char *c = p; c < e && nd < (int) sizeof(digits) - 1; c++)
		if (cql_is_digit(*c))
			digits[nd++] = *c;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	exp10 = atoi(e + 1);

	if (exp10 >= -5 && exp10 <= 16)
	{
		if (exp10 >= nd - 1)
		{
			/* integral: digits, zeros, ".0" */
			cql_buf_put(out, digits, (size_t) nd);
			for (int i = nd - 1; i < exp10; i++)
				cql_buf_u8(out, '0');
			cql_buf_str(out, ".0");
		}
		else if (exp10 >= 0)
		{
			cql_buf_put(out, digits, (size_t) exp10 + 1);
			cql_buf_u8(out, '.');
			cql_buf_put(out, digits + exp10 + 1, (size_t) (nd - exp10 - 1));
		}
		else
		{
			cql_buf_str(out, "0.");
			for (int i = -1; i > exp10; i--)
				cql_buf_u8(out, '0');
			cql_buf_put(out, digits, (size_t) nd);
		}
	}
	else
	{
		cql_buf_u8(out, (uint8_t) digits[0]);
		if (nd > 1)
		{
			cql_buf_u8(out, '.');
			cql_buf_put(out, digits + 1, (size_t) nd - 1);
		}
		snprintf(tmp, sizeof(tmp), "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
		cql_buf_str(out, tmp);
	}
}

/*
 * The shortest decimal form of v that reads back as the same value, in the
 * type of the column: as a double (is_float false, up to 17 significant
 * digits) or as a float (up to 9), then written by put_float_digits.
 * NaN and the infinities are spelt as CQL spells them.
 */
static void
put_shortest(double v, bool is_float, cql_buf *out)
{
	char		s[64];

	if (isnan(v))
	{
		cql_buf_str(out, "NaN");
		return;
	}
	if (isinf(v))
	{
		cql_buf_str(out, v < 0 ? "-Infinity" : "Infinity");
		return;
	}
	for (int prec = 0; prec <= (is_float ? 8 : 16); prec++)
	{
		snprintf(s, sizeof(s), "%.*e", prec, v);
		if (is_float ? strtof(s, NULL) == (float) v : strtod(s, NULL) == v)
			break;
	}
	put_float_digits(s, out);
}

void
cql_double_format(double v, cql_buf *out)
{
	put_shortest(v, false, out);
}

void
cql_float_format(float v, cql_buf *out)
{
	put_shortest((double) v, true, out);
}

/* ---------------------------------------------------------------------
 * Strings
 * ---------------------------------------------------------------------
 */
static void
put_cql_string(const uint8_t *p, int32_t n, cql_buf *out)
{
	int32_t		start = 0;

	cql_buf_u8(out, '\'');
	for (int32_t i = 0; i < n; i++)
	{
		if (p[i] == '\'')
		{
			cql_buf_put(out, p + start, (size_t) (i - start + 1));
			cql_buf_u8(out, '\'');
			start = i + 1;
		}
	}
	cql_buf_put(out, p + start, (size_t) (n - start));
	cql_buf_u8(out, '\'');
}

static void
put_json_string(const uint8_t *p, size_t n, cql_buf *out)
{
	size_t		start = 0;

	cql_buf_u8(out, '"');
	for (size_t i = 0; i < n; i++)
	{
		uint8_t		c = p[i];
		const char *esc = NULL;
		char		u[8];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		switch (c)
		{
			case '"':
				esc = "\\\"";
				break;
			case '\\':
				esc = "\\\\";
				break;
			case '\b':
				esc = "\\b";
				break;
			case '\f':
				esc = "\\f";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\r':
				esc = "\\r";
				break;
			case '\t':
				esc = "\\t";
				break;
			default:
				snprintf(u, sizeof(u), "\\u%04x", c);
				esc = u;
				break;
		}
		cql_buf_put(out, p + start, i - start);
		cql_buf_str(out, esc);
		start = i + 1;
	}
	cql_buf_put(out, p + start, n - start);
	cql_buf_u8(out, '"');
}

static void
put_hex(const uint8_t *p, int32_t n, cql_buf *out)
{
	static const char hex[] = "0123456789abcdef";

	cql_buf_str(out, "0x");
	if (!cql_buf_reserve(out, (size_t) n * 2))
		return;
	for (int32_t i = 0; i < n; i++)
	{
		out->data[out->len++] = (uint8_t) hex[p[i] >> 4];
		out->data[out->len++] = (uint8_t) hex[p[i] & 15];
	}
}

/*
 * Emit the text in 'tmp' quoted as the style requires: CQL string literal
 * or JSON string (the text is plain ASCII here).
 */
static void
put_quoted_ascii(const cql_buf *tmp, cql_format_style style, cql_buf *out)
{
	if (style == CQL_FORMAT_JSON)
		put_json_string(tmp->data, tmp->len, out);
	else
		put_cql_string(tmp->data, (int32_t) tmp->len, out);
}

static bool
is_text_type(const cql_type *t)
{
	return t && (t->id == CQL_TYPE_VARCHAR || t->id == CQL_TYPE_ASCII);
}

/* ---------------------------------------------------------------------
 * Generic formatter
 * ---------------------------------------------------------------------
 */
static cql_status format_value(const cql_type *t, const uint8_t *p, int32_t n,
							   cql_format_style style, cql_buf *out, int depth);

static cql_status
format_composite(const cql_type *t, const uint8_t *p, int32_t n,
				 cql_format_style style, cql_buf *out, int depth)
{
	const cql_allocator *a = out->alloc;
	cql_elem   *el = NULL;
	int32_t		cnt = 0;
	cql_status	st;
	bool		json = style == CQL_FORMAT_JSON;
	const char *open,
			   *close;
	bool		map_object = false;

	if (t->id == CQL_TYPE_VECTOR && n == 0)
	{
		cql_buf_str(out, "null");
		return CQL_OK;
	}
	if ((st = cql_split_value(t, p, n, a, &el, &cnt)) != CQL_OK)
		return st;

	switch (t->id)
	{
		case CQL_TYPE_LIST:
		case CQL_TYPE_VECTOR:
			open = "[";
			close = "]";
			break;
		case CQL_TYPE_SET:
			open = json ? "[" : "{";
			close = json ? "]" : "}";
			break;
		case CQL_TYPE_TUPLE:
			open = json ? "[" : "(";
			close = json ? "]" : ")";
			break;
		case CQL_TYPE_MAP:
			map_object = !json || is_text_type(t->sub[0]);
			open = map_object ? "{" : "[";
			close = map_object ? "}" : "]";
			break;
		default:				/* UDT */
			open = "{";
			close = "}";
			break;
	}

	cql_buf_str(out, open);
	if (t->id == CQL_TYPE_MAP)
	{
		for (int32_t i = 0; i + 1 < cnt && st == CQL_OK; i += 2)
		{
			if (i > 0)
				cql_buf_str(out, ", ");
			if (!map_object)
				cql_buf_u8(out, '[');
			st = format_value(t->sub[0], el[i].p, el[i].n, style, out, depth + 1);
			if (st != CQL_OK)
				break;
			cql_buf_str(out, map_object ? ": " : ", ");
			st = format_value(t->sub[1], el[i + 1].p, el[i + 1].n, style, out, depth + 1);
			if (!map_object)
				cql_buf_u8(out, ']');
		}
	}
	else
	{
		for (int32_t i = 0; i < cnt && st == CQL_OK; i++)
		{
			const cql_type *et;

			if (i > 0)
				cql_buf_str(out, ", ");
			if (t->id == CQL_TYPE_UDT)
			{
				const char *fname = (t->field_names && t->field_names[i]) ?
				t->field_names[i] : "";

				if (json)
					put_json_string((const uint8_t *) fname, strlen(fname), out);
				else
					cql_format_ident(out, fname);
				cql_buf_str(out, ": ");
			}
			et = (t->id == CQL_TYPE_TUPLE || t->id == CQL_TYPE_UDT) ? t->sub[i] : t->sub[0];
			st = format_value(et, el[i].p, el[i].n, style, out, depth + 1);
		}
	}
	cql_buf_str(out, close);
	cql_free(a, el);
	return st;
}

static cql_status
format_value(const cql_type *t, const uint8_t *p, int32_t n,
			 cql_format_style style, cql_buf *out, int depth)
{
	bool		json = style == CQL_FORMAT_JSON;
	char		s[64];
	cql_status	st = CQL_OK;

	if (!t)
		return CQL_ERR_INVALID_ARG;
	if (depth > CQL_MAX_TYPE_DEPTH + 1)
		return CQL_ERR_TOO_LARGE;
	if (n < 0)
	{
		cql_buf_str(out, "null");
		return cql_buf_status(out);
	}
	if (n > 0 && !p)
		return CQL_ERR_INVALID_ARG;
	if (n == 0)
		p = (const uint8_t *) "";	/* empty values may come with p == NULL */

	/*
	 * A zero-length value of a type that has no empty form (Cassandra's
	 * "empty" int, uuid, ...) has no literal; show it as null.
	 */
	if (n == 0 && !cql_type_has_empty_form(t))
	{
		cql_buf_str(out, "null");
		return cql_buf_status(out);
	}

	switch (t->id)
	{
		case CQL_TYPE_ASCII:
		case CQL_TYPE_VARCHAR:
			if (!cql_text_valid(t, p, n))
				return CQL_ERR_TYPE;
			if (json)
				put_json_string(p, (size_t) n, out);
			else
				put_cql_string(p, n, out);
			break;

		case CQL_TYPE_BLOB:
		case CQL_TYPE_CUSTOM:
			if (json)
				cql_buf_u8(out, '"');
			put_hex(p, n, out);
			if (json)
				cql_buf_u8(out, '"');
			break;

		case CQL_TYPE_BOOLEAN:
			{
				bool		v;

				if ((st = cql_decode_boolean(p, n, &v)) != CQL_OK)
					return st;
				cql_buf_str(out, v ? "true" : "false");
				break;
			}
		case CQL_TYPE_TINYINT:
		case CQL_TYPE_SMALLINT:
		case CQL_TYPE_INT:
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_COUNTER:
			{
				int64_t		v;

				if ((st = cql_decode_integer(t->id, p, n, &v)) != CQL_OK)
					return st;
				snprintf(s, sizeof(s), "%lld", (long long) v);
				cql_buf_str(out, s);
				break;
			}
		case CQL_TYPE_VARINT:
			if ((st = cql_varint_to_string(p, n, out)) != CQL_OK)
				return st;
			break;
		case CQL_TYPE_DECIMAL:
			if ((st = cql_decimal_to_string(p, n, out)) != CQL_OK)
				return st;
			break;

		case CQL_TYPE_FLOAT:
		case CQL_TYPE_DOUBLE:
			{
				cql_buf		tmp;
				bool		special;

				cql_buf_init(&tmp, out->alloc);
				if (t->id == CQL_TYPE_FLOAT)
				{
					float		v;

					if ((st = cql_decode_float(p, n, &v)) != CQL_OK)
						return st;
					special = isnan(v) || isinf(v);
					cql_float_format(v, &tmp);
				}
				else
				{
					double		v;

					if ((st = cql_decode_double(p, n, &v)) != CQL_OK)
						return st;
					special = isnan(v) || isinf(v);
					cql_double_format(v, &tmp);
				}
				if ((st = cql_buf_status(&tmp)) == CQL_OK)
				{
					if (json && special)
						put_json_string(tmp.data, tmp.len, out);
					else
						cql_buf_put(out, tmp.data, tmp.len);
				}
				cql_buf_free(&tmp);
				if (st != CQL_OK)
					return st;
				break;
			}

		case CQL_TYPE_UUID:
		case CQL_TYPE_TIMEUUID:
			{
				uint8_t		u[16];
				char		us[37];

				if ((st = cql_decode_uuid(p, n, u)) != CQL_OK)
					return st;
				cql_uuid_to_string(u, us);
				if (json)
					cql_buf_u8(out, '"');
				cql_buf_str(out, us);
				if (json)
					cql_buf_u8(out, '"');
				break;
			}

		case CQL_TYPE_INET:
		case CQL_TYPE_DATE:
		case CQL_TYPE_TIME:
		case CQL_TYPE_TIMESTAMP:
		case CQL_TYPE_DURATION:
			{
				cql_buf		tmp;

				cql_buf_init(&tmp, out->alloc);
				if (t->id == CQL_TYPE_INET)
				{
					int			fam;
					uint8_t		addr[16];
					char		as[46];

					if ((st = cql_decode_inet(p, n, &fam, addr)) == CQL_OK &&
						(st = cql_inet_to_string(fam, addr, as)) == CQL_OK)
						cql_buf_str(&tmp, as);
				}
				else if (t->id == CQL_TYPE_DATE)
				{
					int64_t		days;

					if ((st = cql_decode_date(p, n, &days)) == CQL_OK)
						st = cql_date_format(days, &tmp);
				}
				else if (t->id == CQL_TYPE_TIME)
				{
					int64_t		ns;

					if ((st = cql_decode_bigint(p, n, &ns)) == CQL_OK)
						st = cql_time_format(ns, &tmp);
				}
				else if (t->id == CQL_TYPE_TIMESTAMP)
				{
					int64_t		ms;

					if ((st = cql_decode_bigint(p, n, &ms)) == CQL_OK)
						st = cql_timestamp_format(ms, &tmp);
				}
				else
				{
					cql_duration d;

					if ((st = cql_decode_duration(p, n, &d)) == CQL_OK)
						st = cql_duration_format(&d, &tmp);
				}
				if (st == CQL_OK)
					st = cql_buf_status(&tmp);
				if (st == CQL_OK)
				{
					/* durations are bare CQL literals; the rest are strings */
					if (t->id == CQL_TYPE_DURATION && !json)
						cql_buf_put(out, tmp.data, tmp.len);
					else
						put_quoted_ascii(&tmp, style, out);
				}
				cql_buf_free(&tmp);
				if (st != CQL_OK)
					return st;
				break;
			}

		default:
			if (!cql_type_is_composite(t))
				return CQL_ERR_UNSUPPORTED;
			if ((st = format_composite(t, p, n, style, out, depth)) != CQL_OK)
				return st;
			break;
	}
	return cql_buf_status(out);
}

/* Types whose CQL_FORMAT_TEXT form is the literal without its quotes. */
static bool
is_bare_text_type(const cql_type *t)
{
	switch (t->id)
	{
		case CQL_TYPE_ASCII:
		case CQL_TYPE_VARCHAR:
		case CQL_TYPE_INET:
		case CQL_TYPE_DATE:
		case CQL_TYPE_TIME:
		case CQL_TYPE_TIMESTAMP:
			return true;
		default:
			return false;
	}
}

/* CQL_FORMAT_TEXT: top-level string-like scalars without quotes. */
static cql_status
format_bare_text(const cql_type *t, const uint8_t *p, int32_t n, cql_buf *out)
{
	cql_buf		tmp;
	cql_status	st;

	if (t->id == CQL_TYPE_ASCII || t->id == CQL_TYPE_VARCHAR)
	{
		/* validate through the literal path, then emit the raw bytes */
		cql_buf_init(&tmp, out->alloc);
		st = format_value(t, p, n, CQL_FORMAT_LITERAL, &tmp, 1);
		cql_buf_free(&tmp);
		if (st != CQL_OK)
			return st;
		cql_buf_put(out, p, (size_t) n);
		return cql_buf_status(out);
	}
	cql_buf_init(&tmp, out->alloc);
	st = format_value(t, p, n, CQL_FORMAT_LITERAL, &tmp, 1);
	if (st == CQL_OK)
	{
		/* these literals are '...' with no quote inside; "null" for empty */
		if (tmp.len >= 2 && tmp.data[0] == '\'')
			cql_buf_put(out, tmp.data + 1, tmp.len - 2);
		else
			cql_buf_put(out, tmp.data, tmp.len);
		st = cql_buf_status(out);
	}
	cql_buf_free(&tmp);
	return st;
}

cql_status
cql_value_format(const cql_type *t, const uint8_t *p, int32_t n,
				 cql_format_style style, cql_buf *out)
{
	size_t		mark = out->len;
	cql_status	st;

	if (!t)
		return CQL_ERR_INVALID_ARG;
	if (style == CQL_FORMAT_TEXT && n >= 0 && is_bare_text_type(t))
	{
		if (n > 0 && !p)
			return CQL_ERR_INVALID_ARG;
		st = format_bare_text(t, n == 0 ? (const uint8_t *) "" : p, n, out);
	}
	else
		st = format_value(t, p, n, style == CQL_FORMAT_JSON ? CQL_FORMAT_JSON :
						  CQL_FORMAT_LITERAL, out, 1);

	/* leave no half-written value behind on failure */
	if (st != CQL_OK && !out->failed)
		out->len = mark;
	return st;
}

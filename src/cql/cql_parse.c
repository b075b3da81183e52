/*-------------------------------------------------------------------------
 *
 * cql_parse.c
 *		Parse CQL literals and JSON text into the content bytes of a value
 *		of a known CQL type.
 *
 * Parsing is driven by the type: the type says which token shapes are
 * acceptable at each point, so there is no generic JSON or CQL tree in
 * between and no input-controlled recursion beyond the type's own depth.
 * Everything that does not fit the type is CQL_ERR_TYPE; the FDW reports
 * that to the user as an invalid input value.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_parse.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_values_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pcur
{
	const char *s;
	size_t		len;
	size_t		pos;
	bool		json;
	const cql_allocator *a;
} pcur;

/* What a scalar token looked like in the input. */
typedef enum tok_kind
{
	TOK_STRING,					/* '...' / $$...$$ / JSON "..." (decoded) */
	TOK_BARE,					/* CQL: unquoted run (number, uuid, 0x..) */
	TOK_NUMBER,					/* JSON number */
	TOK_BOOL					/* JSON true/false */
} tok_kind;

static void
skip_ws(pcur *c)
{
	while (c->pos < c->len)
	{
		char		ch = c->s[c->pos];

		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			c->pos++;
		else
			break;
	}
}

static bool
peek_is(pcur *c, char ch)
{
	skip_ws(c);
	return c->pos < c->len && c->s[c->pos] == ch;
}

static bool
eat(pcur *c, char ch)
{
	if (peek_is(c, ch))
	{
		c->pos++;
		return true;
	}
	return false;
}

/*
 * After an element of a bracketed sequence: the closing character ends the
 * sequence, a comma asks for the next element, anything else is not the
 * type's syntax.  One place for the rule every collection and UDT literal
 * follows.
 */
typedef enum
{
	SEQ_NEXT,
	SEQ_END,
	SEQ_BAD
} seq_step;

static seq_step
seq_after_element(pcur *c, char close)
{
	if (eat(c, close))
		return SEQ_END;
	return eat(c, ',') ? SEQ_NEXT : SEQ_BAD;
}

static bool
is_word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		(ch >= '0' && ch <= '9') || ch == '_';
}

/* The keyword null (any case in CQL, lower case in JSON) at the cursor? */
static bool
eat_null(pcur *c)
{
	size_t		p;

	skip_ws(c);
	p = c->pos;
	if (c->len - p < 4)
		return false;
	if (c->json ? memcmp(c->s + p, "null", 4) != 0 : !cql_word_eq(c->s + p, 4, "null"))
		return false;
	if (p + 4 < c->len && is_word_char(c->s[p + 4]))
		return false;
	c->pos = p + 4;
	return true;
}

/* ---------------------------------------------------------------------
 * Scalar tokens
 * ---------------------------------------------------------------------
 */
static void
put_utf8(cql_buf *b, uint32_t cp)
{
	uint8_t		u[4];
	size_t		n;

	if (cp < 0x80)
	{
		u[0] = (uint8_t) cp;
		n = 1;
	}
	else if (cp < 0x800)
	{
		u[0] = (uint8_t) (0xC0 | (cp >> 6));
		u[1] = (uint8_t) (0x80 | (cp & 0x3F));
		n = 2;
	}
	else if (cp < 0x10000)
	{
		u[0] = (uint8_t) (0xE0 | (cp >> 12));
		u[1] = (uint8_t) (0x80 | ((cp >> 6) & 0x3F));
		u[2] = (uint8_t) (0x80 | (cp & 0x3F));
		n = 3;
	}
	else
	{
		u[0] = (uint8_t) (0xF0 | (cp >> 18));
		u[1] = (uint8_t) (0x80 | ((cp >> 12) & 0x3F));
		u[2] = (uint8_t) (0x80 | ((cp >> 6) & 0x3F));
		u[3] = (uint8_t) (0x80 | (cp & 0x3F));
		n = 4;
	}
	cql_buf_put(b, u, n);
}

static bool
read_hex4(pcur *c, uint32_t *v)
{
	uint32_t	r = 0;

	if (c->len - c->pos < 4)
		return false;
	for (int i = 0; i < 4; i++)
	{
		char		ch = c->s[c->pos + (size_t) i];
		int			d;

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return false;
		r = r * 16 + (uint32_t) d;
	}
	c->pos += 4;
	*v = r;
	return true;
}

/* JSON string at the cursor (after the opening quote) into 'out'. */
static cql_status
read_json_string(pcur *c, cql_buf *out)
{
	for (;;)
	{
		size_t		start = c->pos;
		char		ch;

		while (c->pos < c->len && c->s[c->pos] != '"' && c->s[c->pos] != '\\' &&
			   (uint8_t) c->s[c->pos] >= 0x20)
			c->pos++;
		cql_buf_put(out, c->s + start, c->pos - start);
		if (c->pos >= c->len)
			return CQL_ERR_TYPE;
		ch = c->s[c->pos++];
		if (ch == '"')
			return cql_buf_status(out);
		if (ch != '\\')
			return CQL_ERR_TYPE;	/* raw control character */
		if (c->pos >= c->len)
			return CQL_ERR_TYPE;
		ch = c->s[c->pos++];
		switch (ch)
		{
			case '"':
			case '\\':
			case '/':
				cql_buf_u8(out, (uint8_t) ch);
				break;
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				{
					/* the control character each letter names */
					static const char letters[] = "bfnrt";
					static const char controls[] = "\b\f\n\r\t";

					cql_buf_u8(out, (uint8_t) controls[strchr(letters, ch) - letters]);
					break;
				}
			case 'u':
				{
					uint32_t	cp,
								lo;

					if (!read_hex4(c, &cp))
						return CQL_ERR_TYPE;
					if (cp >= 0xDC00 && cp <= 0xDFFF)
						return CQL_ERR_TYPE;	/* lone low surrogate */
					if (cp >= 0xD800 && cp <= 0xDBFF)
					{
						if (c->len - c->pos < 6 || c->s[c->pos] != '\\' ||
							c->s[c->pos + 1] != 'u')
							return CQL_ERR_TYPE;
						c->pos += 2;
						if (!read_hex4(c, &lo) || lo < 0xDC00 || lo > 0xDFFF)
							return CQL_ERR_TYPE;
						cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					}
					put_utf8(out, cp);
					break;
				}
			default:
				return CQL_ERR_TYPE;
		}
	}
}

/* CQL '...' (with '' escapes) or $$...$$ string at the cursor. */
static cql_status
read_cql_string(pcur *c, cql_buf *out)
{
	if (c->s[c->pos] == '$')
	{
		size_t		start = c->pos + 2;
		size_t		p = start;

		while (p + 1 < c->len && !(c->s[p] == '$' && c->s[p + 1] == '$'))
			p++;
		if (p + 1 >= c->len)
			return CQL_ERR_TYPE;
		cql_buf_put(out, c->s + start, p - start);
		c->pos = p + 2;
		return cql_buf_status(out);
	}
	c->pos++;					/* opening quote */
	for (;;)
	{
		size_t		start = c->pos;

		while (c->pos < c->len && c->s[c->pos] != '\'')
			c->pos++;
		if (c->pos >= c->len)
			return CQL_ERR_TYPE;
		cql_buf_put(out, c->s + start, c->pos - start);
		c->pos++;
		if (c->pos < c->len && c->s[c->pos] == '\'')
		{
			cql_buf_u8(out, '\'');
			c->pos++;
			continue;
		}
		return cql_buf_status(out);
	}
}

static bool
is_bare_char(char ch)
{
	return !(ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == ',' ||
			 ch == ':' || ch == '(' || ch == ')' || ch == '[' || ch == ']' ||
			 ch == '{' || ch == '}' || ch == '\'' || ch == '"');
}

/* Skip the digits at s[*i]; returns how many there were */
static size_t
skip_digits(const char *s, size_t n, size_t *i)
{
	size_t		d = 0;

	while (*i < n && cql_is_digit(s[*i]))
	{
		(*i)++;
		d++;
	}
	return d;
}

/*
 * An optional exponent, e[+-]digits (or E), at s[*i]: skipped, and false
 * when it is malformed.  Shared by the JSON and the CQL number syntax.
 */
static bool
skip_exponent(const char *s, size_t n, size_t *i, bool *integral)
{
	if (*i < n && (s[*i] == 'e' || s[*i] == 'E'))
	{
		*integral = false;
		(*i)++;
		if (*i < n && (s[*i] == '+' || s[*i] == '-'))
			(*i)++;
		if (skip_digits(s, n, i) == 0)
			return false;
	}
	return true;
}

/* Is [s, s+n) a JSON number (strict grammar)? */
static bool
json_number_syntax(const char *s, size_t n, bool *integral)
{
	size_t		i = 0;

	*integral = true;
	if (i < n && s[i] == '-')
		i++;
	if (i >= n || !cql_is_digit(s[i]))
		return false;
	if (s[i] == '0')
		i++;
	else
		(void) skip_digits(s, n, &i);
	if (i < n && s[i] == '.')
	{
		*integral = false;
		i++;
		if (skip_digits(s, n, &i) == 0)
			return false;
	}
	return skip_exponent(s, n, &i, integral) && i == n;
}

/*
 * Read one scalar token into 'tok' (decoded text) and tell its kind.
 */
static cql_status
read_scalar(pcur *c, cql_buf *tok, tok_kind *kind)
{
	skip_ws(c);
	if (c->pos >= c->len)
		return CQL_ERR_TYPE;
	if (c->json)
	{
		char		ch = c->s[c->pos];

		if (ch == '"')
		{
			c->pos++;
			*kind = TOK_STRING;
			return read_json_string(c, tok);
		}
		if (ch == '-' || cql_is_digit(ch))
		{
			size_t		start = c->pos;
			bool		integral;

			while (c->pos < c->len &&
				   (cql_is_digit(c->s[c->pos]) || c->s[c->pos] == '-' ||
					c->s[c->pos] == '+' || c->s[c->pos] == '.' ||
					c->s[c->pos] == 'e' || c->s[c->pos] == 'E'))
				c->pos++;
			if (!json_number_syntax(c->s + start, c->pos - start, &integral))
				return CQL_ERR_TYPE;
			*kind = TOK_NUMBER;
			cql_buf_put(tok, c->s + start, c->pos - start);
			return cql_buf_status(tok);
		}
		if (c->len - c->pos >= 4 && memcmp(c->s + c->pos, "true", 4) == 0)
		{
			c->pos += 4;
			*kind = TOK_BOOL;
			cql_buf_str(tok, "true");
			return cql_buf_status(tok);
		}
		if (c->len - c->pos >= 5 && memcmp(c->s + c->pos, "false", 5) == 0)
		{
			c->pos += 5;
			*kind = TOK_BOOL;
			cql_buf_str(tok, "false");
			return cql_buf_status(tok);
		}
		return CQL_ERR_TYPE;
	}
	else
	{
		char		ch = c->s[c->pos];

		if (ch == '\'' || (ch == '$' && c->pos + 1 < c->len && c->s[c->pos + 1] == '$'))
		{
			*kind = TOK_STRING;
			return read_cql_string(c, tok);
		}
		{
			size_t		start = c->pos;

			while (c->pos < c->len && is_bare_char(c->s[c->pos]))
				c->pos++;
			if (c->pos == start)
				return CQL_ERR_TYPE;
			*kind = TOK_BARE;
			cql_buf_put(tok, c->s + start, c->pos - start);
			return cql_buf_status(tok);
		}
	}
}

/* Strict number syntax for CQL literals: [+-]digits[.digits][e[+-]digits] */
static bool
cql_number_syntax(const char *s, size_t n, bool *integral)
{
	size_t		i = 0;
	size_t		d;

	*integral = true;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	d = skip_digits(s, n, &i);
	if (i < n && s[i] == '.')
	{
		*integral = false;
		i++;
		d += skip_digits(s, n, &i);
	}
	if (d == 0)
		return false;
	return skip_exponent(s, n, &i, integral) && i == n;
}

/* Textual number acceptable for a numeric type, given its token kind. */
static bool
numeric_token(const char *s, size_t n, tok_kind kind, bool *integral)
{
	switch (kind)
	{
		case TOK_NUMBER:
			return json_number_syntax(s, n, integral);
		case TOK_BARE:
			return cql_number_syntax(s, n, integral);
		case TOK_STRING:
			/* JSON only: "123" for a number, as Cassandra's fromJson allows */
			return cql_number_syntax(s, n, integral);
		default:
			return false;
	}
}

static cql_status
parse_hex_blob(const char *s, size_t n, cql_buf *content)
{
	if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || (n % 2) != 0)
		return CQL_ERR_TYPE;
	if (!cql_buf_reserve(content, (n - 2) / 2))
		return CQL_ERR_NOMEM;
	for (size_t i = 2; i < n; i += 2)
	{
		int			hi,
					lo;
		char		a = cql_lower(s[i]),
					b = cql_lower(s[i + 1]);

		hi = cql_is_digit(a) ? a - '0' : (a >= 'a' && a <= 'f') ? a - 'a' + 10 : -1;
		lo = cql_is_digit(b) ? b - '0' : (b >= 'a' && b <= 'f') ? b - 'a' + 10 : -1;
		if (hi < 0 || lo < 0)
			return CQL_ERR_TYPE;
		cql_buf_u8(content, (uint8_t) (hi * 16 + lo));
	}
	return cql_buf_status(content);
}

/* Parse a floating value; 'is_float' selects binary32. */
static cql_status
parse_floating(const char *s, size_t n, tok_kind kind, bool json, bool is_float,
			   cql_buf *content)
{
	char		tmp[512];
	bool		integral;
	double		d = 0;
	float		f = 0;
	bool		special = false;
	const char *t = s;
	size_t		tn = n;

	/* NaN / Infinity: bare words in CQL, strings in JSON */
	if ((json && kind == TOK_STRING) || (!json && kind == TOK_BARE))
	{
		bool		neg = false;

		if (tn > 0 && (t[0] == '-' || t[0] == '+'))
		{
			neg = t[0] == '-';
			t++;
			tn--;
		}
		if (cql_word_eq(t, tn, "nan") && s == t)
		{
			special = true;
			d = NAN;
			f = NAN;
		}
		else if (cql_word_eq(t, tn, "infinity"))
		{
			special = true;
			d = neg ? -INFINITY : INFINITY;
			f = neg ? -INFINITY : INFINITY;
		}
	}
	if (!special)
	{
		if (!numeric_token(s, n, kind, &integral) || n >= sizeof(tmp))
			return CQL_ERR_TYPE;
		if (kind == TOK_STRING && !json)
			return CQL_ERR_TYPE;
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		errno = 0;
		if (is_float)
		{
			f = strtof(tmp, NULL);
			if (isinf(f))
				return CQL_ERR_TYPE;	/* finite text beyond float range */
		}
		else
		{
			d = strtod(tmp, NULL);
			if (isinf(d))
				return CQL_ERR_TYPE;
		}
	}
	if (is_float)
		cql_encode_float(content, f);
	else
		cql_encode_double(content, d);
	return cql_buf_status(content);
}

static cql_status
parse_integer(const char *s, size_t n, tok_kind kind, bool json,
			  int64_t min, int64_t max, int64_t *v)
{
	bool		integral;

	if (kind == TOK_BOOL || (kind == TOK_STRING && !json))
		return CQL_ERR_TYPE;
	if (!numeric_token(s, n, kind, &integral) || !integral)
		return CQL_ERR_TYPE;
	if (cql_parse_int64(s, n, v) != CQL_OK || *v < min || *v > max)
		return CQL_ERR_TYPE;
	return CQL_OK;
}

/*
 * Convert one scalar token to value content.  'kind' tells what shape the
 * token had; each type accepts only the shapes listed in cql_types.h.
 */
static cql_status
scalar_content(const cql_type *t, const char *s, size_t n, tok_kind kind,
			   bool json, cql_buf *content)
{
	int64_t		v;
	cql_status	st;
	bool		str = kind == TOK_STRING;
	bool		bare = kind == TOK_BARE;

	switch (t->id)
	{
		case CQL_TYPE_ASCII:
		case CQL_TYPE_VARCHAR:
			if (!str)
				return CQL_ERR_TYPE;
			if (t->id == CQL_TYPE_ASCII)
			{
				for (size_t i = 0; i < n; i++)
					if ((uint8_t) s[i] >= 0x80)
						return CQL_ERR_TYPE;
			}
			else if (!cql_utf8_valid((const uint8_t *) s, n))
				return CQL_ERR_TYPE;
			cql_buf_put(content, s, n);
			return cql_buf_status(content);

		case CQL_TYPE_BLOB:
		case CQL_TYPE_CUSTOM:
			if (json ? !str : !bare)
				return CQL_ERR_TYPE;
			return parse_hex_blob(s, n, content);

		case CQL_TYPE_BOOLEAN:
			if (kind == TOK_NUMBER || (!json && str))
				return CQL_ERR_TYPE;
			if (cql_word_eq(s, n, "true"))
				cql_encode_boolean(content, true);
			else if (cql_word_eq(s, n, "false"))
				cql_encode_boolean(content, false);
			else
				return CQL_ERR_TYPE;
			return cql_buf_status(content);

		case CQL_TYPE_TINYINT:
		case CQL_TYPE_SMALLINT:
		case CQL_TYPE_INT:
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_COUNTER:
			{
				int64_t		min,
							max;

				cql_integer_range(t->id, &min, &max);
				if ((st = parse_integer(s, n, kind, json, min, max, &v)) != CQL_OK)
					return st;
				cql_encode_integer(content, t->id, v);
				return cql_buf_status(content);
			}

		case CQL_TYPE_VARINT:
			{
				bool		integral;

				if (kind == TOK_BOOL || (str && !json) ||
					!numeric_token(s, n, kind, &integral) || !integral)
					return CQL_ERR_TYPE;
				return cql_varint_from_string(s, n, content);
			}
		case CQL_TYPE_DECIMAL:
			{
				bool		integral;

				if (kind == TOK_BOOL || (str && !json) ||
					!numeric_token(s, n, kind, &integral))
					return CQL_ERR_TYPE;
				return cql_decimal_from_string(s, n, content);
			}
		case CQL_TYPE_FLOAT:
		case CQL_TYPE_DOUBLE:
			if (kind == TOK_BOOL)
				return CQL_ERR_TYPE;
			return parse_floating(s, n, kind, json, t->id == CQL_TYPE_FLOAT, content);

		case CQL_TYPE_UUID:
		case CQL_TYPE_TIMEUUID:
			{
				uint8_t		u[16];

				if (json ? !str : !bare)
					return CQL_ERR_TYPE;
				if ((st = cql_uuid_from_string(s, n, u)) != CQL_OK)
					return st;
				/* Cassandra only stores version-1 UUIDs in a timeuuid */
				if (t->id == CQL_TYPE_TIMEUUID && (u[6] >> 4) != 1)
					return CQL_ERR_TYPE;
				cql_encode_uuid(content, u);
				return cql_buf_status(content);
			}
		case CQL_TYPE_INET:
			{
				int			fam;
				uint8_t		addr[16];

				if (!str)
					return CQL_ERR_TYPE;
				if ((st = cql_inet_from_string(s, n, &fam, addr)) != CQL_OK)
					return st;
				return cql_encode_inet(content, fam, addr);
			}
		case CQL_TYPE_DATE:
			if (!str)
				return CQL_ERR_TYPE;
			if ((st = cql_date_parse(s, n, &v)) != CQL_OK)
				return st;
			cql_encode_date(content, v);
			return cql_buf_status(content);
		case CQL_TYPE_TIME:
			if (kind == TOK_BOOL)
				return CQL_ERR_TYPE;
			if (!str)
			{
				bool		integral;

				/* a bare/JSON integer is nanoseconds since midnight */
				if (!numeric_token(s, n, kind, &integral) || !integral ||
					cql_parse_int64(s, n, &v) != CQL_OK ||
					v < 0 || v >= INT64_C(86400000000000))
					return CQL_ERR_TYPE;
			}
			else if ((st = cql_time_parse(s, n, &v)) != CQL_OK)
				return st;
			cql_encode_bigint(content, v);
			return cql_buf_status(content);
		case CQL_TYPE_TIMESTAMP:
			if (kind == TOK_BOOL)
				return CQL_ERR_TYPE;
			if (!str)
			{
				if ((st = parse_integer(s, n, kind, json, INT64_MIN, INT64_MAX, &v)) != CQL_OK)
					return st;
			}
			else if ((st = cql_timestamp_parse(s, n, &v)) != CQL_OK)
				return st;
			cql_encode_bigint(content, v);
			return cql_buf_status(content);
		case CQL_TYPE_DURATION:
			{
				cql_duration d;

				if (json ? !str : !(str || bare))
					return CQL_ERR_TYPE;
				if ((st = cql_duration_parse(s, n, &d)) != CQL_OK)
					return st;
				return cql_encode_duration(content, &d);
			}
		default:
			return CQL_ERR_UNSUPPORTED;
	}
}

/* ---------------------------------------------------------------------
 * Composite values
 * ---------------------------------------------------------------------
 */
static cql_status parse_value(const cql_type *t, pcur *c, cql_buf *content,
							  bool *is_null, int depth);

/*
 * Parse one element and append it as a [bytes] (length back-patched).
 * 'null_ok' is false inside list/set/map/vector, where Cassandra refuses
 * null elements.
 */
static cql_status
parse_element(const cql_type *t, pcur *c, cql_buf *content, bool null_ok, int depth)
{
	size_t		mark = content->len;
	bool		isnull = false;
	cql_status	st;

	cql_buf_i32(content, 0);
	if ((st = parse_value(t, c, content, &isnull, depth)) != CQL_OK)
		return st;
	if (isnull)
	{
		if (!null_ok)
			return CQL_ERR_TYPE;
		cql_buf_patch_u32(content, mark, 0xFFFFFFFFu);
		return cql_buf_status(content);
	}
	if (content->len - mark - 4 > INT32_MAX)
		return CQL_ERR_TOO_LARGE;
	cql_buf_patch_u32(content, mark, (uint32_t) (content->len - mark - 4));
	return cql_buf_status(content);
}

/* Elements separated by ',' up to 'close'; calls per-element parsing. */
static cql_status
parse_list_like(const cql_type *t, pcur *c, char close, cql_buf *content, int depth)
{
	size_t		count_at = content->len;
	int64_t		count = 0;
	cql_status	st;
	seq_step	step;

	cql_buf_i32(content, 0);
	if (!eat(c, close))
	{
		for (;;)
		{
			if (t->id == CQL_TYPE_MAP)
			{
				/* CQL: k: v.  JSON arrays of pairs are handled by the caller. */
				if ((st = parse_element(t->sub[0], c, content, false, depth + 1)) != CQL_OK)
					return st;
				if (!eat(c, ':'))
					return CQL_ERR_TYPE;
				if ((st = parse_element(t->sub[1], c, content, false, depth + 1)) != CQL_OK)
					return st;
			}
			else if ((st = parse_element(t->sub[0], c, content, false, depth + 1)) != CQL_OK)
				return st;
			if (++count > CQL_MAX_COLLECTION_ELEMS)
				return CQL_ERR_TOO_LARGE;
			if ((step = seq_after_element(c, close)) == SEQ_END)
				break;
			if (step == SEQ_BAD)
				return CQL_ERR_TYPE;
		}
	}
	cql_buf_patch_u32(content, count_at, (uint32_t) count);
	/* sets and maps in CQL order without duplicates, at any depth */
	if (t->id != CQL_TYPE_LIST)
		return cql_collection_canonicalize(t, content, count_at);
	return cql_buf_status(content);
}

/* JSON map as an object: "key": value, the key text parsed as key type. */
static cql_status
parse_json_map_object(const cql_type *t, pcur *c, cql_buf *content, int depth)
{
	size_t		count_at = content->len;
	int64_t		count = 0;
	cql_status	st;
	seq_step	step;
	cql_buf		key;

	cql_buf_i32(content, 0);
	if (eat(c, '}'))
	{
		cql_buf_patch_u32(content, count_at, 0);
		return cql_buf_status(content);
	}
	cql_buf_init(&key, c->a);
	for (;;)
	{
		size_t		mark;

		if (!eat(c, '"'))
		{
			st = CQL_ERR_TYPE;
			break;
		}
		cql_buf_reset(&key);
		if ((st = read_json_string(c, &key)) != CQL_OK)
			break;
		mark = content->len;
		cql_buf_i32(content, 0);
		if (t->sub[0]->id < CQL_TYPE_LIST)
		{
			/* scalar key: the object key is its string form */
			st = scalar_content(t->sub[0], key.data ? (const char *) key.data : "",
								key.len, TOK_STRING, true, content);
		}
		else
		{
			/* composite key: the object key holds its JSON text */
			pcur		kc = {key.data ? (const char *) key.data : "", key.len, 0, true, c->a};
			bool		knull = false;

			st = parse_value(t->sub[0], &kc, content, &knull, depth + 1);
			skip_ws(&kc);
			if (st == CQL_OK && (knull || kc.pos != kc.len))
				st = CQL_ERR_TYPE;
		}
		if (st != CQL_OK)
			break;
		cql_buf_patch_u32(content, mark, (uint32_t) (content->len - mark - 4));
		if (!eat(c, ':'))
		{
			st = CQL_ERR_TYPE;
			break;
		}
		if ((st = parse_element(t->sub[1], c, content, false, depth + 1)) != CQL_OK)
			break;
		if (++count > CQL_MAX_COLLECTION_ELEMS)
		{
			st = CQL_ERR_TOO_LARGE;
			break;
		}
		if ((step = seq_after_element(c, '}')) != SEQ_NEXT)
		{
			st = step == SEQ_BAD ? CQL_ERR_TYPE : CQL_OK;
			break;
		}
	}
	cql_buf_free(&key);
	if (st != CQL_OK)
		return st;
	cql_buf_patch_u32(content, count_at, (uint32_t) count);
	return cql_collection_canonicalize(t, content, count_at);
}

/* JSON map as an array of [key, value] pairs. */
static cql_status
parse_json_map_pairs(const cql_type *t, pcur *c, cql_buf *content, int depth)
{
	size_t		count_at = content->len;
	int64_t		count = 0;
	cql_status	st;
	seq_step	step;

	cql_buf_i32(content, 0);
	if (!eat(c, ']'))
	{
		for (;;)
		{
			if (!eat(c, '['))
				return CQL_ERR_TYPE;
			if ((st = parse_element(t->sub[0], c, content, false, depth + 1)) != CQL_OK)
				return st;
			if (!eat(c, ','))
				return CQL_ERR_TYPE;
			if ((st = parse_element(t->sub[1], c, content, false, depth + 1)) != CQL_OK)
				return st;
			if (!eat(c, ']'))
				return CQL_ERR_TYPE;
			if (++count > CQL_MAX_COLLECTION_ELEMS)
				return CQL_ERR_TOO_LARGE;
			if ((step = seq_after_element(c, ']')) == SEQ_END)
				break;
			if (step == SEQ_BAD)
				return CQL_ERR_TYPE;
		}
	}
	cql_buf_patch_u32(content, count_at, (uint32_t) count);
	return cql_collection_canonicalize(t, content, count_at);
}

static cql_status
parse_tuple(const cql_type *t, pcur *c, char close, cql_buf *content, int depth)
{
	cql_status	st;

	for (int i = 0; i < t->nsub; i++)
	{
		if (i > 0 && !eat(c, ','))
			return CQL_ERR_TYPE;
		if ((st = parse_element(t->sub[i], c, content, true, depth + 1)) != CQL_OK)
			return st;
	}
	if (!eat(c, close))
		return CQL_ERR_TYPE;
	return cql_buf_status(content);
}

static cql_status
parse_vector(const cql_type *t, pcur *c, cql_buf *content, int depth)
{
	cql_buf		el;
	cql_status	st = CQL_OK;
	int			i;

	if (t->nsub != 1 || t->dimension <= 0)
		return CQL_ERR_INVALID_ARG;
	cql_buf_init(&el, c->a);
	for (i = 0; i < t->dimension; i++)
	{
		bool		isnull = false;

		if (i > 0 && !eat(c, ','))
		{
			st = CQL_ERR_TYPE;
			break;
		}
		cql_buf_reset(&el);
		if ((st = parse_value(t->sub[0], c, &el, &isnull, depth + 1)) != CQL_OK)
			break;
		if (isnull || el.len > INT32_MAX)
		{
			st = CQL_ERR_TYPE;
			break;
		}
		{
			int			fs = cql_type_fixed_size(t->sub[0]);

			if (fs >= 0 && el.len != (size_t) fs)
			{
				st = CQL_ERR_TYPE;
				break;
			}
		}
		cql_encode_vector_element(content, t->sub[0], el.data, (int32_t) el.len);
	}
	cql_buf_free(&el);
	if (st != CQL_OK)
		return st;
	if (!eat(c, ']'))
		return CQL_ERR_TYPE;	/* wrong dimension (too many) or junk */
	return cql_buf_status(content);
}

/* UDT field name: JSON string, or CQL identifier (folded unless quoted). */
static cql_status
read_field_name(pcur *c, cql_buf *name)
{
	skip_ws(c);
	if (c->pos >= c->len)
		return CQL_ERR_TYPE;
	if (c->json)
	{
		if (c->s[c->pos] != '"')
			return CQL_ERR_TYPE;
		c->pos++;
		return read_json_string(c, name);
	}
	if (c->s[c->pos] == '"')
	{
		c->pos++;
		for (;;)
		{
			if (c->pos >= c->len)
				return CQL_ERR_TYPE;
			if (c->s[c->pos] == '"')
			{
				if (c->pos + 1 < c->len && c->s[c->pos + 1] == '"')
				{
					cql_buf_u8(name, '"');
					c->pos += 2;
					continue;
				}
				c->pos++;
				return cql_buf_status(name);
			}
			cql_buf_u8(name, (uint8_t) c->s[c->pos++]);
		}
	}
	if (!((c->s[c->pos] >= 'a' && c->s[c->pos] <= 'z') ||
		  (c->s[c->pos] >= 'A' && c->s[c->pos] <= 'Z') || c->s[c->pos] == '_'))
		return CQL_ERR_TYPE;
	while (c->pos < c->len && is_word_char(c->s[c->pos]))
		cql_buf_u8(name, (uint8_t) cql_lower(c->s[c->pos++]));
	return cql_buf_status(name);
}

/* Index of the UDT field named exactly [name, name+len), or -1. */
static int
udt_field_index(const cql_type *t, const uint8_t *name, size_t len)
{
	for (int i = 0; i < t->nsub; i++)
	{
		const char *fname = t->field_names ? t->field_names[i] : NULL;

		if (fname && strlen(fname) == len &&
			(len == 0 || memcmp(fname, name, len) == 0))
			return i;
	}
	return -1;
}

/*
 * UDT: {field: value, ...} in any order; fields not mentioned are null and
 * the value is written in declared field order.
 */
static cql_status
parse_udt(const cql_type *t, pcur *c, cql_buf *content, int depth)
{
	cql_buf    *vals;
	bool	   *seen;
	cql_buf		name;
	cql_status	st = CQL_OK;
	seq_step	step;
	int			nf = t->nsub;

	vals = cql_alloc0(c->a, sizeof(cql_buf) * (size_t) (nf > 0 ? nf : 1));
	seen = cql_alloc0(c->a, sizeof(bool) * (size_t) (nf > 0 ? nf : 1));
	if (!vals || !seen)
	{
		cql_free(c->a, vals);
		cql_free(c->a, seen);
		return CQL_ERR_NOMEM;
	}
	for (int i = 0; i < nf; i++)
		cql_buf_init(&vals[i], c->a);
	cql_buf_init(&name, c->a);

	if (!eat(c, '}'))
	{
		for (;;)
		{
			int			fi = -1;

			cql_buf_reset(&name);
			if ((st = read_field_name(c, &name)) != CQL_OK)
				break;
			fi = udt_field_index(t, name.data, name.len);

			/*
			 * Cassandra's own JSON spells case-sensitive field names as
			 * quoted identifiers ("\"Zip\""); accept that form too.
			 */
			if (fi < 0 && c->json && name.len >= 2 && name.data[0] == '"' &&
				name.data[name.len - 1] == '"')
			{
				cql_buf		unq;

				cql_buf_init(&unq, c->a);
				for (size_t k = 1; k + 1 < name.len; k++)
				{
					cql_buf_u8(&unq, name.data[k]);
					if (name.data[k] == '"' && k + 2 < name.len && name.data[k + 1] == '"')
						k++;
				}
				fi = udt_field_index(t, unq.data, unq.len);
				cql_buf_free(&unq);
			}
			if (fi < 0 || seen[fi] || !eat(c, ':'))
			{
				st = CQL_ERR_TYPE;	/* unknown or repeated field */
				break;
			}
			seen[fi] = true;
			if ((st = parse_element(t->sub[fi], c, &vals[fi], true, depth + 1)) != CQL_OK)
				break;
			if ((step = seq_after_element(c, '}')) != SEQ_NEXT)
			{
				st = step == SEQ_BAD ? CQL_ERR_TYPE : CQL_OK;
				break;
			}
		}
	}
	if (st == CQL_OK)
	{
		for (int i = 0; i < nf; i++)
		{
			if (seen[i])
				cql_buf_put(content, vals[i].data, vals[i].len);
			else
				cql_buf_i32(content, -1);
		}
		st = cql_buf_status(content);
	}
	for (int i = 0; i < nf; i++)
		cql_buf_free(&vals[i]);
	cql_buf_free(&name);
	cql_free(c->a, vals);
	cql_free(c->a, seen);
	return st;
}

static cql_status
parse_value(const cql_type *t, pcur *c, cql_buf *content, bool *is_null, int depth)
{
	*is_null = false;
	if (!t)
		return CQL_ERR_INVALID_ARG;
	if (depth > CQL_MAX_TYPE_DEPTH + 1)
		return CQL_ERR_TOO_LARGE;
	if (eat_null(c))
	{
		*is_null = true;
		return CQL_OK;
	}
	switch (t->id)
	{
		case CQL_TYPE_LIST:
			if (t->nsub != 1 || !eat(c, '['))
				return CQL_ERR_TYPE;
			return parse_list_like(t, c, ']', content, depth);
		case CQL_TYPE_SET:
			if (t->nsub != 1)
				return CQL_ERR_INVALID_ARG;
			if (c->json ? !eat(c, '[') : !eat(c, '{'))
				return CQL_ERR_TYPE;
			return parse_list_like(t, c, c->json ? ']' : '}', content, depth);
		case CQL_TYPE_MAP:
			if (t->nsub != 2)
				return CQL_ERR_INVALID_ARG;
			if (c->json)
			{
				if (eat(c, '{'))
					return parse_json_map_object(t, c, content, depth);
				if (eat(c, '['))
					return parse_json_map_pairs(t, c, content, depth);
				return CQL_ERR_TYPE;
			}
			if (!eat(c, '{'))
				return CQL_ERR_TYPE;
			return parse_list_like(t, c, '}', content, depth);
		case CQL_TYPE_TUPLE:
			if (c->json ? !eat(c, '[') : !eat(c, '('))
				return CQL_ERR_TYPE;
			return parse_tuple(t, c, c->json ? ']' : ')', content, depth);
		case CQL_TYPE_UDT:
			if (!eat(c, '{'))
				return CQL_ERR_TYPE;
			return parse_udt(t, c, content, depth);
		case CQL_TYPE_VECTOR:
			if (!eat(c, '['))
				return CQL_ERR_TYPE;
			return parse_vector(t, c, content, depth);
		default:
			{
				cql_buf		tok;
				tok_kind	kind;
				cql_status	st;

				cql_buf_init(&tok, c->a);
				st = read_scalar(c, &tok, &kind);
				if (st == CQL_OK)
					st = scalar_content(t, tok.data ? (const char *) tok.data : "",
										tok.len, kind, c->json, content);
				cql_buf_free(&tok);
				return st;
			}
	}
}

cql_status
cql_value_parse(const cql_type *t, const char *text, size_t len,
				cql_format_style style, cql_buf *content, bool *is_null)
{
	pcur		c;
	size_t		mark = content->len;
	cql_status	st;

	*is_null = false;
	if (!t || (!text && len > 0))
		return CQL_ERR_INVALID_ARG;
	if (style == CQL_FORMAT_TEXT)
	{
		switch (t->id)
		{
			case CQL_TYPE_ASCII:
			case CQL_TYPE_VARCHAR:
				st = scalar_content(t, text ? text : "", len, TOK_STRING, false, content);
				if (st != CQL_OK && !content->failed)
					content->len = mark;
				return st;
			case CQL_TYPE_INET:
			case CQL_TYPE_DATE:
			case CQL_TYPE_TIME:
			case CQL_TYPE_TIMESTAMP:
				{
					size_t		b = 0,
								e = len;

					while (b < e && (text[b] == ' ' || text[b] == '\t' ||
									 text[b] == '\n' || text[b] == '\r'))
						b++;
					while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' ||
									 text[e - 1] == '\n' || text[e - 1] == '\r'))
						e--;
					st = scalar_content(t, text + b, e - b, TOK_STRING, false, content);
					if (st != CQL_OK && !content->failed)
						content->len = mark;
					return st;
				}
			default:
				style = CQL_FORMAT_LITERAL;
				break;
		}
	}
	c.s = text ? text : "";
	c.len = len;
	c.pos = 0;
	c.json = style == CQL_FORMAT_JSON;
	c.a = content->alloc;
	st = parse_value(t, &c, content, is_null, 1);
	if (st == CQL_OK)
	{
		skip_ws(&c);
		if (c.pos != c.len)
			st = CQL_ERR_TYPE;	/* trailing junk */
	}
	if (st == CQL_OK)
		st = cql_buf_status(content);
	if (st != CQL_OK)
	{
		*is_null = false;
		if (!content->failed)
			content->len = mark;
	}
	return st;
}

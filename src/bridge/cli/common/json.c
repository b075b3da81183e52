/*-------------------------------------------------------------------------
 *
 * json.c
 *	  A small JSON reader for the reports cqlbridge writes itself
 *	  (DIR/verify.json and DIR/diff.json, read back to draw report.html),
 *	  and the UTC time stamp those reports carry.
 *
 * The reader builds a tree of BridgeJson values from a whole text.  It
 * accepts any JSON (RFC 8259): a file edited by hand or cut short is
 * reported with the byte offset of the problem, never a crash, so the
 * caller can say which file is damaged and go on.  Numbers are kept as
 * doubles (the counts of a report fit in 53 bits).
 *
 * layer: common
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common/json.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"

/* nesting deeper than this is refused (no report of ours nests past 4) */
#define JSON_MAX_DEPTH 64

typedef struct JsonParser
{
	const char *p;
	const char *start;
	char	   *error;			/* the first error, allocated */
} JsonParser;

static BridgeJson *parse_value(JsonParser *jp, int depth);

/*
 * json_fail
 *		Record the first error with its byte offset; returns NULL so that
 *		callers can "return json_fail(...)".
 */
static BridgeJson *
json_fail(JsonParser *jp, const char *what)
{
	if (jp->error == NULL)
		jp->error = bridge_printf("%s at byte %ld", what, (long) (jp->p - jp->start));
	return NULL;
}

/*
 * skip_space
 *		Skip JSON white space (space, tab, newline, carriage return).
 */
static void
skip_space(JsonParser *jp)
{
	while (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r')
		jp->p++;
}

/*
 * hex4
 *		The value of four hexadecimal digits at s, -1 if they are not.
 */
static long
hex4(const char *s)
{
	long		v = 0;

	for (int i = 0; i < 4; i++)
	{
		char		c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * append_utf8
 *		A code point as UTF-8.  U+0000 (which a C string cannot hold) is
 *		kept as U+FFFD.
 */
static void
append_utf8(StrBuf *sb, long cp)
{
	if (cp == 0)
		cp = 0xFFFD;
	if (cp < 0x80)
		sb_appendc(sb, (char) cp);
	else if (cp < 0x800)
	{
		sb_appendc(sb, (char) (0xC0 | (cp >> 6)));
		sb_appendc(sb, (char) (0x80 | (cp & 0x3F)));
	}
	else if (cp < 0x10000)
	{
		sb_appendc(sb, (char) (0xE0 | (cp >> 12)));
		sb_appendc(sb, (char) (0x80 | ((cp >> 6) & 0x3F)));
		sb_appendc(sb, (char) (0x80 | (cp & 0x3F)));
	}
	else
	{
		sb_appendc(sb, (char) (0xF0 | (cp >> 18)));
		sb_appendc(sb, (char) (0x80 | ((cp >> 12) & 0x3F)));
		sb_appendc(sb, (char) (0x80 | ((cp >> 6) & 0x3F)));
		sb_appendc(sb, (char) (0x80 | (cp & 0x3F)));
	}
}

/*
 * parse_string
 *		The string at jp->p (which is at its opening quote), unescaped and
 *		allocated; NULL on an error.
 */
static char *
parse_string(JsonParser *jp)
{
	StrBuf		sb;

	jp->p++;
	sb_init(&sb);
	sb_append(&sb, "");
	for (;;)
	{
		unsigned char c = (unsigned char) *jp->p;

		if (c == '\0')
		{
			sb_free(&sb);
			json_fail(jp, "unterminated string");
			return NULL;
		}
		if (c < 0x20)
		{
			sb_free(&sb);
			json_fail(jp, "control character in a string");
			return NULL;
		}
		jp->p++;
		if (c == '"')
			return sb.data;
		if (c != '\\')
		{
			sb_appendc(&sb, (char) c);
			continue;
		}
		c = (unsigned char) *jp->p++;
		switch (c)
		{
			case '"':
			case '\\':
			case '/':
				sb_appendc(&sb, (char) c);
				break;
			case 'b':
				sb_appendc(&sb, '\b');
				break;
			case 'f':
				sb_appendc(&sb, '\f');
				break;
			case 'n':
				sb_appendc(&sb, '\n');
				break;
			case 'r':
				sb_appendc(&sb, '\r');
				break;
			case 't':
				sb_appendc(&sb, '\t');
				break;
			case 'u':
				{
					long		cp = hex4(jp->p);

					if (cp < 0)
					{
						sb_free(&sb);
						json_fail(jp, "bad \\u escape");
						return NULL;
					}
					jp->p += 4;
					/* a surrogate pair; a lone surrogate becomes U+FFFD */
					if (cp >= 0xD800 && cp <= 0xDBFF && jp->p[0] == '\\' && jp->p[1] == 'u')
					{
						long		lo = hex4(jp->p + 2);

						if (lo >= 0xDC00 && lo <= 0xDFFF)
						{
							cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
							jp->p += 6;
						}
					}
					if (cp >= 0xD800 && cp <= 0xDFFF)
						cp = 0xFFFD;
					append_utf8(&sb, cp);
					break;
				}
			default:
				jp->p--;
				sb_free(&sb);
				json_fail(jp, "bad escape in a string");
				return NULL;
		}
	}
}

/*
 * new_value
 *		A zeroed value of a type.
 */
static BridgeJson *
new_value(BridgeJsonType type)
{
	BridgeJson *v = bridge_malloc(sizeof(BridgeJson));

	memset(v, 0, sizeof(*v));
	v->type = type;
	return v;
}

/*
 * add_item
 *		Append an item (with its key, for objects) to an array or object.
 */
static void
add_item(BridgeJson *v, char *key, BridgeJson *item)
{
	BridgeJson **items = bridge_malloc(sizeof(BridgeJson *) * (v->n + 1));
	char	  **keys = bridge_malloc(sizeof(char *) * (v->n + 1));

	if (v->n > 0)
	{
		memcpy(items, v->items, sizeof(BridgeJson *) * v->n);
		memcpy(keys, v->keys, sizeof(char *) * v->n);
		free(v->items);
		free(v->keys);
	}
	items[v->n] = item;
	keys[v->n] = key;
	v->items = items;
	v->keys = keys;
	v->n++;
}

/*
 * parse_container
 *		An array or object at jp->p (at '[' or '{').
 */
static BridgeJson *
parse_container(JsonParser *jp, int depth)
{
	bool		object = *jp->p == '{';
	char		close = object ? '}' : ']';
	BridgeJson *v = new_value(object ? BRIDGE_JSON_OBJECT : BRIDGE_JSON_ARRAY);

	if (depth >= JSON_MAX_DEPTH)
		return json_fail(jp, "nesting too deep");
	jp->p++;
	skip_space(jp);
	if (*jp->p == close)
	{
		jp->p++;
		return v;
	}
	for (;;)
	{
		char	   *key = NULL;
		BridgeJson *item;

		skip_space(jp);
		if (object)
		{
			if (*jp->p != '"')
				return json_fail(jp, "expected a member name");
			if ((key = parse_string(jp)) == NULL)
				return NULL;
			skip_space(jp);
			if (*jp->p != ':')
				return json_fail(jp, "expected ':'");
			jp->p++;
		}
		if ((item = parse_value(jp, depth + 1)) == NULL)
			return NULL;
		add_item(v, key, item);
		skip_space(jp);
		if (*jp->p == ',')
		{
			jp->p++;
			continue;
		}
		if (*jp->p == close)
		{
			jp->p++;
			return v;
		}
		return json_fail(jp, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

/*
 * parse_value
 *		Any value at jp->p (after white space).
 */
static BridgeJson *
parse_value(JsonParser *jp, int depth)
{
	BridgeJson *v;

	skip_space(jp);
	switch (*jp->p)
	{
		case '{':
		case '[':
			return parse_container(jp, depth);
		case '"':
			{
				char	   *s = parse_string(jp);

				if (s == NULL)
					return NULL;
				v = new_value(BRIDGE_JSON_STRING);
				v->str = s;
				return v;
			}
		case 't':
		case 'f':
		case 'n':
			{
				static const char *const words[] = {"true", "false", "null"};

				for (int i = 0; i < 3; i++)
					if (strncmp(jp->p, words[i], strlen(words[i])) == 0)
					{
						jp->p += strlen(words[i]);
						v = new_value(i == 2 ? BRIDGE_JSON_NULL : BRIDGE_JSON_BOOL);
						v->boolean = (i == 0);
						return v;
					}
				return json_fail(jp, "unexpected word");
			}
		default:
			{
				const char *s = jp->p;
				char	   *end;
				double		d;

				/* JSON's number grammar, then strtod for the value */
				if (*s == '-')
					s++;
				if (!(*s >= '0' && *s <= '9'))
					return json_fail(jp, *jp->p ? "unexpected character" : "unexpected end");
				d = strtod(jp->p, &end);
				if (end == jp->p)
					return json_fail(jp, "bad number");
				jp->p = end;
				v = new_value(BRIDGE_JSON_NUMBER);
				v->number = d;
				return v;
			}
	}
}

/*
 * bridge_json_parse
 *		The tree of a whole JSON text, or NULL with *error set (allocated:
 *		what is wrong and at which byte).
 */
BridgeJson *
bridge_json_parse(const char *text, char **error)
{
	JsonParser	jp = {text, text, NULL};
	BridgeJson *v = parse_value(&jp, 0);

	if (v != NULL)
	{
		skip_space(&jp);
		if (*jp.p != '\0')
			v = json_fail(&jp, "text after the value");
	}
	if (v == NULL)
		*error = jp.error ? jp.error : bridge_strdup("not JSON");
	return v;
}

/*
 * bridge_json_get
 *		The member key of an object; NULL when v is no object or has no
 *		such member.
 */
const BridgeJson *
bridge_json_get(const BridgeJson *v, const char *key)
{
	if (v == NULL || v->type != BRIDGE_JSON_OBJECT)
		return NULL;
	for (int i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return v->items[i];
	return NULL;
}

/*
 * bridge_json_str
 *		The string member key of an object, NULL when absent or no string.
 */
const char *
bridge_json_str(const BridgeJson *v, const char *key)
{
	const BridgeJson *m = bridge_json_get(v, key);

	return m && m->type == BRIDGE_JSON_STRING ? m->str : NULL;
}

/*
 * bridge_json_num
 *		The number member key of an object, dflt when absent or no number.
 */
double
bridge_json_num(const BridgeJson *v, const char *key, double dflt)
{
	const BridgeJson *m = bridge_json_get(v, key);

	return m && m->type == BRIDGE_JSON_NUMBER ? m->number : dflt;
}

/*
 * bridge_utc_timestamp
 *		The current time as "YYYY-MM-DDTHH:MM:SSZ" (UTC, ISO 8601): when a
 *		check ran, in its report.
 */
char *
bridge_utc_timestamp(void)
{
	time_t		now = time(NULL);
	struct tm	tm;
	char		buf[32];

	if (gmtime_r(&now, &tm) == NULL ||
		strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return bridge_strdup("unknown");
	return bridge_strdup(buf);
}

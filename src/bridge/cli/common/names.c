/*-------------------------------------------------------------------------
 *
 * names.c
 *	  Names and literals in the SQL text cqlbridge generates: quoting,
 *	  parsing and splitting identifier lists, refusing control characters,
 *	  the per-plan schema and tag, dollar-quote tags, the schema check.
 *
 * layer: common
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common/names.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

/*
 * bridge_quote_ident
 *		An identifier always double-quoted ("" for a quote), for SQL and CQL
 *		text; values are never quoted into text but bound as parameters.
 */
char *
bridge_quote_ident(const char *ident)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "\"");
	for (const char *p = ident; *p; p++)
	{
		if (*p == '"')
			sb_appendc(&sb, '"');
		sb_appendc(&sb, *p);
	}
	sb_append(&sb, "\"");
	return sb.data;
}

/*
 * bridge_quote_literal
 *		A string as a SQL literal ('' for a quote; E'' form with doubled
 *		backslashes only when it holds one), for generated SQL text only.
 */
char *
bridge_quote_literal(const char *s)
{
	StrBuf		sb;
	bool		backslash = strchr(s, '\\') != NULL;

	sb_init(&sb);
	/* E'' form only when needed, so the text stays readable */
	sb_append(&sb, backslash ? "E'" : "'");
	for (const char *p = s; *p; p++)
	{
		if (*p == '\'' || *p == '\\')
			sb_appendc(&sb, *p);
		sb_appendc(&sb, *p);
	}
	sb_append(&sb, "'");
	return sb.data;
}

/* ------------------------------------------------------------------------
 * Names in generated files
 * ------------------------------------------------------------------------
 */

/*
 * bridge_has_control
 *		True when s holds a control character (bytes 0x01-0x1f and 0x7f):
 *		newline, carriage return, tab...  Such names are refused by plan:
 *		the generated files are line-oriented ("-- key: value" lines), and
 *		a newline in a name could forge a metadata line.
 */
bool
bridge_has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/*
 * bridge_show_name
 *		A name for a message: double-quoted, control characters written as
 *		\n, \r, \t or \xNN, so that the message stays on its line and shows
 *		what is wrong with the name.
 */
char *
bridge_show_name(const char *s)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "\"");
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if (*p == '\n')
			sb_append(&sb, "\\n");
		else if (*p == '\r')
			sb_append(&sb, "\\r");
		else if (*p == '\t')
			sb_append(&sb, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			sb_appendf(&sb, "\\x%02x", *p);
		else
			sb_appendc(&sb, (char) *p);
	}
	sb_append(&sb, "\"");
	return sb.data;
}

/*
 * bridge_parse_ident
 *		Parse one SQL identifier at *p (blanks before it are skipped): a
 *		double-quoted one ("" stands for a quote) or a plain one (letters,
 *		digits, '_', '$' and non-ASCII bytes, taken as written).  Returns the
 *		name without quotes (allocated) and advances *p past it, or NULL
 *		when there is no identifier at *p.
 */
char *
bridge_parse_ident(const char **p)
{
	const char *s = *p;
	StrBuf		sb;

	while (*s == ' ' || *s == '\t')
		s++;
	sb_init(&sb);
	if (*s == '"')
	{
		s++;
		for (;;)
		{
			if (*s == '\0')
			{
				sb_free(&sb);
				return NULL;	/* unterminated */
			}
			if (*s == '"' && s[1] != '"')
				break;
			if (*s == '"')
				s++;
			sb_appendc(&sb, *s);
			s++;
		}
		s++;
		if (sb.len == 0)
		{
			sb_free(&sb);
			return NULL;
		}
	}
	else
	{
		while (isalnum((unsigned char) *s) || *s == '_' || *s == '$' ||
			   (unsigned char) *s >= 0x80)
			sb_appendc(&sb, *s++);
		if (sb.len == 0)
		{
			sb_free(&sb);
			return NULL;
		}
	}
	*p = s;
	return sb.data;
}

/*
 * bridge_split_idents
 *		Split "a, \"B, c\", d" (SQL identifiers separated by commas, as the
 *		generated files write name lists) into the names, unquoted: a comma
 *		inside a quoted name does not split it.  Returns NULL on a syntax
 *		error (the caller names the file and line).
 */
char	  **
bridge_split_idents(const char *list, int *n)
{
	char	  **items = NULL;
	const char *p = list;

	*n = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0')
		return bridge_malloc(sizeof(char *));
	for (;;)
	{
		char	   *item = bridge_parse_ident(&p);

		if (item == NULL)
			return NULL;
		items = bridge_realloc(items, sizeof(char *) * (*n + 1));
		if (!items)
			bridge_fatal("out of memory");
		items[(*n)++] = item;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			return items;
		if (*p != ',')
			return NULL;
		p++;
	}
}

/*
 * bridge_valid_keyspace
 *		Keyspace names cqlbridge accepts: what Cassandra accepts unquoted
 *		and keeps as written, 1 to 48 of [a-z0-9_].  Every per-plan object
 *		name in PostgreSQL is derived from it (bridge_plan_schema,
 *		bridge_plan_tag), so it must be a plain name.
 */
bool
bridge_valid_keyspace(const char *ks)
{
	size_t		n = strlen(ks);

	if (n == 0 || n > 48)
		return false;
	for (const char *c = ks; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	return true;
}

/*
 * bridge_plan_schema
 *		The schema of a plan's own objects (source views, sync functions,
 *		the sync lock table): "cqlbridge_<keyspace>".  One per keyspace, so
 *		two plan directories of one database never redefine each other's
 *		objects; at most 58 bytes, within NAMEDATALEN.
 */
char *
bridge_plan_schema(const char *keyspace)
{
	return bridge_printf("cqlbridge_%s", keyspace);
}

/*
 * bridge_plan_tag
 *		A short token of the plan for names that also carry other parts
 *		(trigger names, temp tables, the pending-work setting): the keyspace
 *		when it has at most 20 bytes, else its first 12 bytes, '_' and 8 hex
 *		digits of a hash of it (21 bytes, so never equal to a short one).
 */
char *
bridge_plan_tag(const char *keyspace)
{
	uint32_t	h = 2166136261u;	/* FNV-1a */

	if (strlen(keyspace) <= 20)
		return bridge_strdup(keyspace);
	for (const unsigned char *c = (const unsigned char *) keyspace; *c; c++)
	{
		h ^= *c;
		h *= 16777619u;
	}
	return bridge_printf("%.12s_%08x", keyspace, (unsigned) h);
}

/*
 * bridge_finish_tags
 *		Replace every BRIDGE_TAG_MARK of text by a dollar-quote tag that
 *		occurs nowhere else in the text ("$cqlbridge$", else
 *		"$cqlbridge_2$", ...), so a name holding the tag cannot end a
 *		dollar-quoted function body early.  The text must not contain the
 *		mark otherwise (names with control characters are refused).
 */
char *
bridge_finish_tags(const char *text)
{
	char	   *tag = bridge_strdup("$cqlbridge$");
	StrBuf		sb;

	for (int i = 2; strstr(text, tag) != NULL; i++)
	{
		free(tag);
		tag = bridge_printf("$cqlbridge_%d$", i);
	}
	sb_init(&sb);
	for (const char *p = text; *p; p++)
	{
		if (*p == BRIDGE_TAG_MARK)
			sb_append(&sb, tag);
		else
			sb_appendc(&sb, *p);
	}
	free(tag);
	return sb.data;
}

/*
 * bridge_schema_check_sql
 *		A DO block (dollar quotes as BRIDGE_TAG marks) that creates each
 *		schema that does not exist, and refuses one that belongs to another
 *		role: the owner of a schema can drop or replace the objects in it
 *		(views read by the triggers, the sync functions, the foreign
 *		tables), so cqlbridge never adopts someone else's schema.
 */
char *
bridge_schema_check_sql(const char *const *schemas, int n)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb,
			  "-- Create the schemas, or check that they belong to the role running this.\n"
			  "DO " BRIDGE_TAG "\nDECLARE\n\ts text;\n\towner name;\nBEGIN\n\tFOREACH s IN ARRAY ARRAY[");
	for (int i = 0; i < n; i++)
	{
		char	   *lit = bridge_quote_literal(schemas[i]);

		sb_appendf(&sb, "%s%s", i ? ", " : "", lit);
		free(lit);
	}
	sb_append(&sb,
			  "]::text[] LOOP\n"
			  "\t\tSELECT pg_catalog.pg_get_userbyid(n.nspowner) INTO owner\n"
			  "\t\t\tFROM pg_catalog.pg_namespace n WHERE n.nspname = s;\n"
			  "\t\tIF NOT FOUND THEN\n"
			  "\t\t\tEXECUTE pg_catalog.format('CREATE SCHEMA %I', s);\n"
			  "\t\tELSIF owner <> CURRENT_USER THEN\n"
			  "\t\t\tRAISE EXCEPTION 'schema % belongs to role %, not to %', pg_catalog.quote_ident(s), owner, CURRENT_USER\n"
			  "\t\t\t\tUSING ERRCODE = 'insufficient_privilege',\n"
			  "\t\t\t\t\t  DETAIL = 'The owner of a schema can drop and replace the objects in it; cqlbridge keeps its objects in schemas of the role that runs it.',\n"
			  "\t\t\t\t\t  HINT = pg_catalog.format('Run cqlbridge as role %I, or take the schema over: ALTER SCHEMA %I OWNER TO %I.', owner, s, CURRENT_USER);\n"
			  "\t\tEND IF;\n"
			  "\tEND LOOP;\n"
			  "END\n" BRIDGE_TAG ";\n");
	return sb.data;
}

/*
 * bridge_plain_ident
 *		Can s be written without quotes in SQL or CQL: ASCII lower-case
 *		letters, digits and '_', not starting with a digit, and none of the
 *		keywords in the NULL-terminated list reserved?
 */
bool
bridge_plain_ident(const char *s, const char *const *reserved)
{
	if (!s[0] || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	for (int i = 0; reserved[i]; i++)
		if (strcmp(reserved[i], s) == 0)
			return false;
	return true;
}

/*
 * bridge_qi
 *		SQL identifier, quoted only when needed (so the generated SQL stays
 *		readable): reserved and type/function-name keywords of PostgreSQL.
 */
char *
bridge_qi(const char *s)
{
	static const char *const reserved[] = {
		"all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
		"authorization", "binary", "both", "case", "cast", "check", "collate", "collation",
		"column", "concurrently", "constraint", "create", "cross", "current_catalog",
		"current_date", "current_role", "current_schema", "current_time",
		"current_timestamp", "current_user", "default", "deferrable", "desc", "distinct",
		"do", "else", "end", "except", "false", "fetch", "for", "foreign", "freeze", "from",
		"full", "grant", "group", "having", "ilike", "in", "initially", "inner", "intersect",
		"into", "is", "isnull", "join", "lateral", "leading", "left", "like", "limit",
		"localtime", "localtimestamp", "natural", "not", "notnull", "null", "offset", "on",
		"only", "or", "order", "outer", "overlaps", "placing", "primary", "references",
		"returning", "right", "select", "session_user", "similar", "some", "symmetric",
		"system_user", "table", "tablesample", "then", "to", "trailing", "true", "union",
		"unique", "user", "using", "variadic", "verbose", "when", "where", "window", "with",
		NULL
	};

	return bridge_plain_ident(s, reserved) ? bridge_strdup(s) : bridge_quote_ident(s);
}

/*
 * bridge_text_array
 *		items as the text of a PostgreSQL text[] literal, {"a","b"}, each
 *		element quoted with '"' and '\\' escaped (allocated): the form in
 *		which type names are bound as one parameter (cast to regtype[]).
 */
char *
bridge_text_array(char *const *items, int n)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "{");
	for (int i = 0; i < n; i++)
	{
		sb_append(&sb, i ? ",\"" : "\"");
		for (const char *c = items[i]; *c; c++)
		{
			if (*c == '"' || *c == '\\')
				sb_appendc(&sb, '\\');
			sb_appendc(&sb, *c);
		}
		sb_append(&sb, "\"");
	}
	sb_append(&sb, "}");
	return sb.data;
}


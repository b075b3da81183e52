/*-------------------------------------------------------------------------
 *
 * cql_type_format.c
 *		Formatting: CQL identifiers (quoted when needed) and type
 *		descriptors as CQL type strings.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_type_format.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_types_int.h"

#include <stdio.h>
#include <string.h>

/*
 * Cassandra's reserved keywords (cql3/ReservedKeywords.java, plus a few
 * that became reserved in later releases).  Quoting a word that would not
 * have needed it is harmless: "name" and name are the same identifier when
 * the text is lower case.
 */
static const char *const reserved_words[] = {
	"add", "allow", "alter", "and", "apply", "asc", "authorize", "batch",
	"begin", "by", "columnfamily", "create", "default", "delete", "desc",
	"describe", "drop", "entries", "execute", "from", "full", "grant", "if",
	"in", "index", "infinity", "insert", "into", "is", "keyspace", "limit",
	"materialized", "mbean", "mbeans", "modify", "nan", "norecursive", "not",
	"null", "of", "on", "or", "order", "primary", "rename", "replace",
	"revoke", "schema", "select", "set", "table", "to", "token", "truncate",
	"unlogged", "unset", "update", "use", "using", "view", "where", "with",
	NULL
};

/*
 * Does this identifier need double quotes in CQL?  Anything that is not an
 * all-lower-case unquoted identifier does, and so do reserved keywords.
 */
bool
cql_ident_needs_quotes(const char *s)
{
	if (!s || !cql_is_ident_start(*s) || (*s >= 'A' && *s <= 'Z'))
		return true;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return true;
	for (int i = 0; reserved_words[i]; i++)
		if (strcmp(s, reserved_words[i]) == 0)
			return true;
	return false;
}

void
cql_format_ident(cql_buf *out, const char *s)
{
	if (!cql_ident_needs_quotes(s))
	{
		cql_buf_put(out, s, strlen(s));
		return;
	}
	cql_buf_u8(out, '"');
	for (const char *c = s ? s : ""; *c; c++)
	{
		if (*c == '"')
			cql_buf_u8(out, '"');
		cql_buf_u8(out, (uint8_t) *c);
	}
	cql_buf_u8(out, '"');
}

/*
 * format_udt_name
 *		A user-defined type's name: quoted also when, unquoted, it would
 *		read back as a native type or a type keyword (a UDT named "uuid"
 *		or "map" is legal in CQL), so that format and parse round-trip.
 */
static void
format_udt_name(cql_buf *out, const char *s)
{
	static const char *const type_words[] = {"frozen", "list", "set", "map", "tuple",
	"vector", NULL};
	cql_type_id id;
	bool		quote = cql_native_by_cql_name(s, strlen(s), &id);

	for (int i = 0; type_words[i] && !quote; i++)
		quote = strcmp(s, type_words[i]) == 0;
	if (!quote)
	{
		cql_format_ident(out, s);
		return;
	}
	cql_buf_u8(out, '"');
	cql_buf_put(out, s, strlen(s));	/* a native name has no quote in it */
	cql_buf_u8(out, '"');
}

static void
put_str(cql_buf *out, const char *s)
{
	cql_buf_put(out, s, strlen(s));
}

static cql_status
format_type(const cql_type *t, cql_buf *out, int depth)
{
	const char *nm;
	bool		wrap;

	if (!t || depth > CQL_MAX_TYPE_DEPTH)
		return CQL_ERR_INVALID_ARG;
	/*
	 * Print frozen<> like system_schema does: for frozen collections, UDTs
	 * and (always frozen) tuples, but never around vectors.
	 */
	wrap = t->frozen &&
		(t->id == CQL_TYPE_LIST || t->id == CQL_TYPE_SET ||
		 t->id == CQL_TYPE_MAP || t->id == CQL_TYPE_UDT ||
		 t->id == CQL_TYPE_TUPLE);
	if (wrap)
		put_str(out, "frozen<");
	switch (t->id)
	{
		case CQL_TYPE_LIST:
		case CQL_TYPE_SET:
		case CQL_TYPE_MAP:
		case CQL_TYPE_TUPLE:
			put_str(out, t->id == CQL_TYPE_LIST ? "list<" :
					t->id == CQL_TYPE_SET ? "set<" :
					t->id == CQL_TYPE_MAP ? "map<" : "tuple<");
			for (int i = 0; i < t->nsub; i++)
			{
				cql_status	st;

				if (i > 0)
					put_str(out, ", ");
				if ((st = format_type(t->sub[i], out, depth + 1)) != CQL_OK)
					return st;
			}
			cql_buf_u8(out, '>');
			break;
		case CQL_TYPE_VECTOR:
			{
				char		num[16];
				cql_status	st;

				if (t->nsub != 1)
					return CQL_ERR_INVALID_ARG;
				put_str(out, "vector<");
				if ((st = format_type(t->sub[0], out, depth + 1)) != CQL_OK)
					return st;
				snprintf(num, sizeof(num), ", %d>", t->dimension);
				put_str(out, num);
				break;
			}
		case CQL_TYPE_UDT:
			format_udt_name(out, t->name ? t->name : "");
			break;
		case CQL_TYPE_CUSTOM:
			cql_buf_u8(out, '\'');
			for (const char *c = t->name ? t->name : ""; *c; c++)
			{
				if (*c == '\'')
					cql_buf_u8(out, '\'');
				cql_buf_u8(out, (uint8_t) *c);
			}
			cql_buf_u8(out, '\'');
			break;
		default:
			nm = cql_type_name(t->id);
			if (!nm)
				return CQL_ERR_INVALID_ARG;
			put_str(out, nm);
			break;
	}
	if (wrap)
		cql_buf_u8(out, '>');
	return CQL_OK;
}

cql_status
cql_type_format(const cql_type *t, cql_buf *out)
{
	cql_status	st = format_type(t, out, 1);

	if (st != CQL_OK)
		return st;
	return cql_buf_status(out);
}

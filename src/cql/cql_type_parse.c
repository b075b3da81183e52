/*-------------------------------------------------------------------------
 *
 * cql_type_parse.c
 *		Type descriptors from text: Java marshal class names (custom types
 *		in [option], cql_type_parse_marshal) and CQL type strings from
 *		system_schema (cql_type_parse).  Both come from the server: they
 *		bound recursion by CQL_MAX_TYPE_DEPTH (see cql_types.c).
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_type_parse.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_types_int.h"
#include "cql_values_int.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Java marshal class names
 *
 * Grammar (as produced by AbstractType.toString() / TypeParser):
 *	 type   := class [ '(' params ')' ]
 *	 class  := [java.package.]ShortName
 *	 params := param (',' param)*
 * with class-specific params: ListType(T), SetType(T), MapType(K,V),
 * TupleType(T,...), FrozenType(T), ReversedType(T), VectorType(T, N),
 * UserType(ks, hexname, hexfield:T, ...).  Any other class (possibly with
 * its own parenthesised parameters) becomes a CQL_TYPE_CUSTOM node that
 * keeps its full text as name.
 * ---------------------------------------------------------------------
 */
static cql_status
parse_marshal_internal(const char *s, size_t len, size_t *pos,
					   const cql_allocator *a, cql_type **out, int depth);

#define MARSHAL_PREFIX "org.apache.cassandra.db.marshal."

static void
skip_ws(const char *s, size_t len, size_t *pos)
{
	while (*pos < len && (s[*pos] == ' ' || s[*pos] == '\t' ||
						  s[*pos] == '\n' || s[*pos] == '\r'))
		(*pos)++;
}

static bool
is_class_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '.' || c == '_' || c == '$' || c == '-';
}

static bool
eat(const char *s, size_t len, size_t *pos, char c)
{
	skip_ws(s, len, pos);
	if (*pos < len && s[*pos] == c)
	{
		(*pos)++;
		return true;
	}
	return false;
}

/* Skip a balanced parameter list starting at '(' (for unknown classes). */
static cql_status
skip_balanced(const char *s, size_t len, size_t *pos)
{
	int			level = 0;

	do
	{
		if (*pos >= len)
			return CQL_ERR_MALFORMED;
		if (s[*pos] == '(')
			level++;
		else if (s[*pos] == ')')
			level--;
		(*pos)++;
	} while (level > 0);
	return CQL_OK;
}

/* Decode hex [s, s+n) into a NUL-terminated allocation. */
static cql_status
unhex_dup(const char *s, size_t n, const cql_allocator *a, char **out)
{
	char	   *r;

	if (n % 2 != 0)
		return CQL_ERR_MALFORMED;
	r = cql_alloc(a, n / 2 + 1);
	if (!r)
		return CQL_ERR_NOMEM;
	for (size_t i = 0; i < n / 2; i++)
	{
		int			hi = cql_hex_digit(s[2 * i]),
					lo = cql_hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
		{
			cql_free(a, r);
			return CQL_ERR_MALFORMED;
		}
		r[i] = (char) (hi * 16 + lo);
	}
	r[n / 2] = '\0';
	*out = r;
	return CQL_OK;
}

/* A bare token up to ',' ')' ':' or whitespace. */
static void
read_token(const char *s, size_t len, size_t *pos, size_t *start, size_t *tlen)
{
	skip_ws(s, len, pos);
	*start = *pos;
	while (*pos < len && s[*pos] != ',' && s[*pos] != ')' && s[*pos] != '(' &&
		   s[*pos] != ':' && s[*pos] != ' ' && s[*pos] != '\t')
		(*pos)++;
	*tlen = *pos - *start;
}

/* Parse "(T, T, ...)" sub-types into a new node of the given id. */
static cql_status
marshal_params(const char *s, size_t len, size_t *pos, const cql_allocator *a,
			   cql_type_id id, int depth, cql_type **out)
{
	cql_type   *t;
	cql_status	st;

	if (!eat(s, len, pos, '('))
		return CQL_ERR_MALFORMED;
	if (!(t = cql_type_new(a, id, 0)))
		return CQL_ERR_NOMEM;
	if (!eat(s, len, pos, ')'))
	{
		for (;;)
		{
			cql_type   *sub;

			if ((st = parse_marshal_internal(s, len, pos, a, &sub, depth + 1)) != CQL_OK ||
				(st = cql_type_append(t, sub, NULL, a)) != CQL_OK)
				goto fail;
			if (eat(s, len, pos, ')'))
				break;
			if (!eat(s, len, pos, ','))
			{
				st = CQL_ERR_MALFORMED;
				goto fail;
			}
		}
	}
	*out = t;
	return CQL_OK;

fail:
	cql_type_free(t, a);
	return st;
}

static cql_status
marshal_user_type(const char *s, size_t len, size_t *pos, const cql_allocator *a,
				  int depth, cql_type **out)
{
	size_t		start,
				tl;
	cql_type   *t;
	cql_status	st;

	if (!eat(s, len, pos, '('))
		return CQL_ERR_MALFORMED;
	if (!(t = cql_type_new(a, CQL_TYPE_UDT, 0)))
		return CQL_ERR_NOMEM;
	read_token(s, len, pos, &start, &tl);
	if (tl == 0 || !eat(s, len, pos, ','))
	{
		st = CQL_ERR_MALFORMED;
		goto fail;
	}
	if (!(t->keyspace = cql_strndup(a, s + start, tl)))
	{
		st = CQL_ERR_NOMEM;
		goto fail;
	}
	read_token(s, len, pos, &start, &tl);
	if (tl == 0)
	{
		st = CQL_ERR_MALFORMED;
		goto fail;
	}
	if ((st = unhex_dup(s + start, tl, a, &t->name)) != CQL_OK)
		goto fail;
	while (!eat(s, len, pos, ')'))
	{
		char	   *fname;
		cql_type   *ftype;

		if (!eat(s, len, pos, ','))
		{
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
		read_token(s, len, pos, &start, &tl);
		if (tl == 0 || !eat(s, len, pos, ':'))
		{
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
		if ((st = unhex_dup(s + start, tl, a, &fname)) != CQL_OK)
			goto fail;
		if ((st = parse_marshal_internal(s, len, pos, a, &ftype, depth + 1)) != CQL_OK)
		{
			cql_free(a, fname);
			goto fail;
		}
		if ((st = cql_type_append(t, ftype, fname, a)) != CQL_OK)
			goto fail;
	}
	*out = t;
	return CQL_OK;

fail:
	cql_type_free(t, a);
	return st;
}

static cql_status
parse_marshal_internal(const char *s, size_t len, size_t *pos,
					   const cql_allocator *a, cql_type **out, int depth)
{
	size_t		start,
				cstart,
				clen;
	const char *cls;
	cql_status	st;

	*out = NULL;
	if (depth > CQL_MAX_TYPE_DEPTH)
		return CQL_ERR_TOO_LARGE;
	skip_ws(s, len, pos);
	start = *pos;
	while (*pos < len && is_class_char(s[*pos]))
		(*pos)++;
	if (*pos == start)
		return CQL_ERR_MALFORMED;
	cstart = start;
	clen = *pos - start;
	/* short name: strip the standard package if present */
	if (clen > strlen(MARSHAL_PREFIX) &&
		memcmp(s + cstart, MARSHAL_PREFIX, strlen(MARSHAL_PREFIX)) == 0)
	{
		cstart += strlen(MARSHAL_PREFIX);
		clen -= strlen(MARSHAL_PREFIX);
	}
	cls = s + cstart;
	skip_ws(s, len, pos);

#define CLS_IS(lit) (clen == sizeof(lit) - 1 && memcmp(cls, lit, clen) == 0)

	for (const cql_native_name *nn = cql_native_names; nn->cql; nn++)
	{
		if (clen == strlen(nn->marshal) && memcmp(cls, nn->marshal, clen) == 0)
		{
			if (!(*out = cql_type_new(a, nn->id, 0)))
				return CQL_ERR_NOMEM;
			return CQL_OK;
		}
	}

	if (CLS_IS("ListType") || CLS_IS("SetType") || CLS_IS("MapType") ||
		CLS_IS("TupleType"))
	{
		cql_type_id id = CLS_IS("ListType") ? CQL_TYPE_LIST :
		CLS_IS("SetType") ? CQL_TYPE_SET :
		CLS_IS("MapType") ? CQL_TYPE_MAP : CQL_TYPE_TUPLE;
		cql_type   *t;

		if ((st = marshal_params(s, len, pos, a, id, depth, &t)) != CQL_OK)
			return st;
		if ((id == CQL_TYPE_MAP && t->nsub != 2) ||
			((id == CQL_TYPE_LIST || id == CQL_TYPE_SET) && t->nsub != 1))
		{
			cql_type_free(t, a);
			return CQL_ERR_MALFORMED;
		}
		if (id == CQL_TYPE_TUPLE)
			t->frozen = true;
		*out = t;
		return CQL_OK;
	}
	if (CLS_IS("FrozenType") || CLS_IS("ReversedType"))
	{
		cql_type   *t,
				   *inner;

		if ((st = marshal_params(s, len, pos, a, CQL_TYPE_CUSTOM, depth, &t)) != CQL_OK)
			return st;
		if (t->nsub != 1)
		{
			cql_type_free(t, a);
			return CQL_ERR_MALFORMED;
		}
		inner = t->sub[0];
		t->sub[0] = NULL;
		cql_type_free(t, a);
		if (CLS_IS("FrozenType"))
			inner->frozen = true;
		*out = inner;
		return CQL_OK;
	}
	if (CLS_IS("VectorType"))
	{
		cql_type   *t,
				   *elem;
		size_t		ds,
					dl;
		int64_t		dim = 0;

		if (!eat(s, len, pos, '('))
			return CQL_ERR_MALFORMED;
		if ((st = parse_marshal_internal(s, len, pos, a, &elem, depth + 1)) != CQL_OK)
			return st;
		if (!eat(s, len, pos, ','))
		{
			cql_type_free(elem, a);
			return CQL_ERR_MALFORMED;
		}
		read_token(s, len, pos, &ds, &dl);
		for (size_t i = 0; i < dl; i++)
		{
			if (s[ds + i] < '0' || s[ds + i] > '9' || dim > CQL_MAX_COLLECTION_ELEMS)
			{
				dim = -1;
				break;
			}
			dim = dim * 10 + (s[ds + i] - '0');
		}
		if (dl == 0 || dim <= 0 || dim > CQL_MAX_COLLECTION_ELEMS ||
			!eat(s, len, pos, ')'))
		{
			cql_type_free(elem, a);
			return CQL_ERR_MALFORMED;
		}
		t = cql_type_new(a, CQL_TYPE_VECTOR, 1);
		if (!t)
		{
			cql_type_free(elem, a);
			return CQL_ERR_NOMEM;
		}
		t->sub[0] = elem;
		t->dimension = (int) dim;
		t->frozen = true;
		*out = t;
		return CQL_OK;
	}
	if (CLS_IS("UserType"))
	{
		/* a frozen UDT arrives wrapped in FrozenType(...); bare is multi-cell */
		return marshal_user_type(s, len, pos, a, depth, out);
	}

#undef CLS_IS

	/* Unknown class: keep its complete text, parameters included. */
	if (*pos < len && s[*pos] == '(')
	{
		if ((st = skip_balanced(s, len, pos)) != CQL_OK)
			return st;
	}
	{
		cql_type   *t = cql_type_new(a, CQL_TYPE_CUSTOM, 0);

		if (!t)
			return CQL_ERR_NOMEM;
		if (!(t->name = cql_strndup(a, s + start, *pos - start)))
		{
			cql_type_free(t, a);
			return CQL_ERR_NOMEM;
		}
		*out = t;
		return CQL_OK;
	}
}

cql_status
cql_type_parse_marshal(const char *text, size_t len, const cql_allocator *a,
					   cql_type **out)
{
	size_t		pos = 0;
	cql_status	st;

	*out = NULL;
	if (!text)
		return CQL_ERR_INVALID_ARG;
	st = parse_marshal_internal(text, len, &pos, a, out, 1);
	if (st != CQL_OK)
		return st;
	skip_ws(text, len, &pos);
	if (pos != len)
	{
		cql_type_free(*out, a);
		*out = NULL;
		return CQL_ERR_MALFORMED;
	}
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * CQL type strings (system_schema.columns.type)
 * ---------------------------------------------------------------------
 */
typedef struct type_lexer
{
	const char *s;
	size_t		pos;
	const char *keyspace;
	cql_udt_resolver resolve;
	void	   *ctx;
	const cql_allocator *a;
} type_lexer;

static bool
is_ident_char(char c)
{
	return cql_is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool
lex_eat(type_lexer *lx, char c)
{
	while (lx->s[lx->pos] == ' ' || lx->s[lx->pos] == '\t' || lx->s[lx->pos] == '\n')
		lx->pos++;
	if (lx->s[lx->pos] == c)
	{
		lx->pos++;
		return true;
	}
	return false;
}

/*
 * Read an identifier: unquoted (case-folded to lower case, as CQL does) or
 * double-quoted ("" escapes a quote; case preserved).  Result allocated.
 */
static cql_status
lex_ident(type_lexer *lx, char **out, bool *quoted)
{
	const char *s = lx->s;
	size_t		p;

	while (s[lx->pos] == ' ' || s[lx->pos] == '\t' || s[lx->pos] == '\n')
		lx->pos++;
	p = lx->pos;
	*quoted = false;
	if (s[p] == '"')
	{
		size_t		n = 0;
		char	   *r;

		/* first pass: measure */
		p++;
		for (;;)
		{
			if (s[p] == '\0')
				return CQL_ERR_MALFORMED;
			if (s[p] == '"')
			{
				if (s[p + 1] == '"')
				{
					p += 2;
					n++;
					continue;
				}
				break;
			}
			p++;
			n++;
		}
		if (n == 0)
			return CQL_ERR_MALFORMED;
		r = cql_alloc(lx->a, n + 1);
		if (!r)
			return CQL_ERR_NOMEM;
		n = 0;
		for (p = lx->pos + 1; !(s[p] == '"' && s[p + 1] != '"'); p++)
		{
			r[n++] = s[p];
			if (s[p] == '"')
				p++;
		}
		r[n] = '\0';
		lx->pos = p + 1;
		*quoted = true;
		*out = r;
		return CQL_OK;
	}
	if (!cql_is_ident_start(s[p]))
		return CQL_ERR_MALFORMED;
	while (is_ident_char(s[p]))
		p++;
	{
		char	   *r = cql_strndup(lx->a, s + lx->pos, p - lx->pos);

		if (!r)
			return CQL_ERR_NOMEM;
		for (char *c = r; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char) (*c - 'A' + 'a');
		lx->pos = p;
		*out = r;
		return CQL_OK;
	}
}

static cql_status lex_type(type_lexer *lx, int depth, cql_type **out);

static cql_status
lex_params(type_lexer *lx, int depth, cql_type_id id, int min, int max,
		   cql_type **out)
{
	cql_type   *t;
	cql_status	st;

	if (!lex_eat(lx, '<'))
		return CQL_ERR_MALFORMED;
	if (!(t = cql_type_new(lx->a, id, 0)))
		return CQL_ERR_NOMEM;
	for (;;)
	{
		cql_type   *sub;

		if (t->nsub >= max)
		{
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
		if ((st = lex_type(lx, depth + 1, &sub)) != CQL_OK ||
			(st = cql_type_append(t, sub, NULL, lx->a)) != CQL_OK)
			goto fail;
		if (lex_eat(lx, '>'))
			break;
		if (!lex_eat(lx, ','))
		{
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
	}
	if (t->nsub < min)
	{
		st = CQL_ERR_MALFORMED;
		goto fail;
	}
	*out = t;
	return CQL_OK;

fail:
	cql_type_free(t, lx->a);
	return st;
}

static cql_status
lex_type(type_lexer *lx, int depth, cql_type **out)
{
	char	   *word = NULL;
	bool		quoted;
	cql_status	st;
	cql_type_id id;

	*out = NULL;
	if (depth > CQL_MAX_TYPE_DEPTH)
		return CQL_ERR_TOO_LARGE;

	while (lx->s[lx->pos] == ' ' || lx->s[lx->pos] == '\t' || lx->s[lx->pos] == '\n')
		lx->pos++;

	/* 'java.class.Name' custom type literal */
	if (lx->s[lx->pos] == '\'')
	{
		const char *b = lx->s + lx->pos + 1;
		const char *e = strchr(b, '\'');

		if (!e)
			return CQL_ERR_MALFORMED;
		lx->pos = (size_t) (e - lx->s) + 1;
		return cql_type_parse_marshal(b, (size_t) (e - b), lx->a, out);
	}

	if ((st = lex_ident(lx, &word, &quoted)) != CQL_OK)
		return st;

	if (!quoted)
	{
		size_t		wl = strlen(word);

		if (cql_native_by_cql_name(word, wl, &id))
		{
			cql_free(lx->a, word);
			if (!(*out = cql_type_new(lx->a, id, 0)))
				return CQL_ERR_NOMEM;
			return CQL_OK;
		}
		if (strcmp(word, "frozen") == 0)
		{
			cql_type   *t;

			cql_free(lx->a, word);
			if ((st = lex_params(lx, depth, CQL_TYPE_CUSTOM, 1, 1, &t)) != CQL_OK)
				return st;
			*out = t->sub[0];
			t->sub[0] = NULL;
			cql_type_free(t, lx->a);
			(*out)->frozen = true;
			return CQL_OK;
		}
		if (strcmp(word, "list") == 0 || strcmp(word, "set") == 0 ||
			strcmp(word, "map") == 0 || strcmp(word, "tuple") == 0)
		{
			int			min,
						max;

			id = strcmp(word, "list") == 0 ? CQL_TYPE_LIST :
				strcmp(word, "set") == 0 ? CQL_TYPE_SET :
				strcmp(word, "map") == 0 ? CQL_TYPE_MAP : CQL_TYPE_TUPLE;
			cql_free(lx->a, word);
			min = max = (id == CQL_TYPE_MAP) ? 2 : 1;
			if (id == CQL_TYPE_TUPLE)
				max = 65535;
			if ((st = lex_params(lx, depth, id, min, max, out)) != CQL_OK)
				return st;
			/* tuples are always frozen in Cassandra */
			if (id == CQL_TYPE_TUPLE)
				(*out)->frozen = true;
			return CQL_OK;
		}
		if (strcmp(word, "vector") == 0)
		{
			cql_type   *elem,
					   *t;
			int64_t		dim = 0;
			size_t		p;

			cql_free(lx->a, word);
			if (!lex_eat(lx, '<'))
				return CQL_ERR_MALFORMED;
			if ((st = lex_type(lx, depth + 1, &elem)) != CQL_OK)
				return st;
			if (!lex_eat(lx, ','))
			{
				cql_type_free(elem, lx->a);
				return CQL_ERR_MALFORMED;
			}
			while (lx->s[lx->pos] == ' ')
				lx->pos++;
			p = lx->pos;
			while (lx->s[lx->pos] >= '0' && lx->s[lx->pos] <= '9' &&
				   dim <= CQL_MAX_COLLECTION_ELEMS)
				dim = dim * 10 + (lx->s[lx->pos++] - '0');
			if (p == lx->pos || dim <= 0 || dim > CQL_MAX_COLLECTION_ELEMS ||
				!lex_eat(lx, '>'))
			{
				cql_type_free(elem, lx->a);
				return CQL_ERR_MALFORMED;
			}
			if (!(t = cql_type_new(lx->a, CQL_TYPE_VECTOR, 1)))
			{
				cql_type_free(elem, lx->a);
				return CQL_ERR_NOMEM;
			}
			t->sub[0] = elem;
			t->dimension = (int) dim;
			t->frozen = true;
			*out = t;
			return CQL_OK;
		}
	}

	/* A user-defined type, possibly keyspace-qualified. */
	{
		char	   *ks = NULL;
		cql_type   *t;

		if (lx->s[lx->pos] == '.')
		{
			lx->pos++;
			ks = word;
			if ((st = lex_ident(lx, &word, &quoted)) != CQL_OK)
			{
				cql_free(lx->a, ks);
				return st;
			}
		}
		if (!lx->resolve)
		{
			cql_free(lx->a, ks);
			cql_free(lx->a, word);
			return CQL_ERR_UNSUPPORTED;
		}
		t = lx->resolve(lx->ctx, ks ? ks : lx->keyspace, word, lx->a);
		cql_free(lx->a, ks);
		cql_free(lx->a, word);
		if (!t)
			return CQL_ERR_UNSUPPORTED;
		*out = t;
		return CQL_OK;
	}
}

cql_status
cql_type_parse(const char *text, const char *keyspace,
			   cql_udt_resolver resolve_udt, void *ctx,
			   const cql_allocator *a, cql_type **out)
{
	type_lexer	lx;
	cql_status	st;

	*out = NULL;
	if (!text)
		return CQL_ERR_INVALID_ARG;
	lx.s = text;
	lx.pos = 0;
	lx.keyspace = keyspace;
	lx.resolve = resolve_udt;
	lx.ctx = ctx;
	lx.a = a;
	if ((st = lex_type(&lx, 1, out)) != CQL_OK)
		return st;
	while (text[lx.pos] == ' ' || text[lx.pos] == '\t' || text[lx.pos] == '\n')
		lx.pos++;
	if (text[lx.pos] != '\0')
	{
		cql_type_free(*out, a);
		*out = NULL;
		return CQL_ERR_MALFORMED;
	}
	return CQL_OK;
}

/*-------------------------------------------------------------------------
 *
 * cql_types.c
 *		CQL type descriptors: construction, copying, comparison, and the
 *		three textual/binary sources they come from: the native protocol
 *		[option], Java marshal class names (custom types), and CQL type
 *		strings from system_schema.
 *
 * Type descriptors are small trees; every input that builds them may come
 * from a hostile or confused peer, so all three parsers bound recursion by
 * CQL_MAX_TYPE_DEPTH and never trust a count before checking that the
 * remaining input could possibly hold that many entries.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_types.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_types.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Construction and destruction
 * ---------------------------------------------------------------------
 */
cql_type *
cql_type_new(const cql_allocator *a, cql_type_id id, int nsub)
{
	cql_type   *t;

	if (nsub < 0 || nsub > 65535)
		return NULL;
	t = cql_alloc0(a, sizeof(cql_type));
	if (!t)
		return NULL;
	t->id = id;
	t->nsub = nsub;
	if (nsub > 0)
	{
		t->sub = cql_alloc0(a, sizeof(cql_type *) * (size_t) nsub);
		if (!t->sub)
		{
			cql_free(a, t);
			return NULL;
		}
	}
	if (id == CQL_TYPE_UDT && nsub > 0)
	{
		t->field_names = cql_alloc0(a, sizeof(char *) * (size_t) nsub);
		if (!t->field_names)
		{
			cql_free(a, t->sub);
			cql_free(a, t);
			return NULL;
		}
	}
	return t;
}

void
cql_type_free(cql_type *t, const cql_allocator *a)
{
	if (!t)
		return;
	for (int i = 0; i < t->nsub; i++)
	{
		if (t->sub)
			cql_type_free(t->sub[i], a);
		if (t->field_names)
			cql_free(a, t->field_names[i]);
	}
	cql_free(a, t->sub);
	cql_free(a, t->field_names);
	cql_free(a, t->keyspace);
	cql_free(a, t->name);
	cql_free(a, t);
}

cql_type *
cql_type_copy(const cql_type *t, const cql_allocator *a)
{
	cql_type   *c;

	if (!t)
		return NULL;
	c = cql_type_new(a, t->id, t->nsub);
	if (!c)
		return NULL;
	c->frozen = t->frozen;
	c->dimension = t->dimension;
	if ((t->keyspace && !(c->keyspace = cql_strdup(a, t->keyspace))) ||
		(t->name && !(c->name = cql_strdup(a, t->name))))
		goto fail;
	/* a UDT built by hand may have nsub == 0 and no field_names array */
	if (t->field_names && !c->field_names && t->nsub > 0)
	{
		c->field_names = cql_alloc0(a, sizeof(char *) * (size_t) t->nsub);
		if (!c->field_names)
			goto fail;
	}
	for (int i = 0; i < t->nsub; i++)
	{
		if (t->sub && t->sub[i] && !(c->sub[i] = cql_type_copy(t->sub[i], a)))
			goto fail;
		if (t->field_names && t->field_names[i] &&
			!(c->field_names[i] = cql_strdup(a, t->field_names[i])))
			goto fail;
	}
	return c;

fail:
	cql_type_free(c, a);
	return NULL;
}

/*
 * Append a child (and, for UDTs, its field name) to a node, taking
 * ownership of both even on failure.  The arrays grow by doubling: the
 * capacity is implied by nsub (the next power of two), so no extra field
 * is needed in cql_type.
 */
static cql_status
type_append(cql_type *t, cql_type *child, char *name, const cql_allocator *a)
{
	int			n = t->nsub;

	if (n >= 65535)
	{
		cql_type_free(child, a);
		cql_free(a, name);
		return CQL_ERR_TOO_LARGE;
	}
	if ((n & (n - 1)) == 0)		/* 0, 1, 2, 4, ...: full, grow */
	{
		size_t		cap = n ? (size_t) n * 2 : 4;
		cql_type  **ns = cql_realloc(a, t->sub, cap * sizeof(cql_type *));

		if (!ns)
		{
			cql_type_free(child, a);
			cql_free(a, name);
			return CQL_ERR_NOMEM;
		}
		t->sub = ns;
		if (t->id == CQL_TYPE_UDT)
		{
			char	  **nn = cql_realloc(a, t->field_names, cap * sizeof(char *));

			if (!nn)
			{
				cql_type_free(child, a);
				cql_free(a, name);
				return CQL_ERR_NOMEM;
			}
			t->field_names = nn;
		}
	}
	t->sub[n] = child;
	if (t->id == CQL_TYPE_UDT)
		t->field_names[n] = name;
	else
		cql_free(a, name);
	t->nsub = n + 1;
	return CQL_OK;
}

static bool
str_eq(const char *x, const char *y)
{
	if (!x || !y)
		return x == y;
	return strcmp(x, y) == 0;
}

/*
 * Structural equality.  The frozen flag is deliberately ignored: the wire
 * never tells it, so a type read from RESULT metadata must compare equal to
 * the same type parsed from system_schema.  The UDT keyspace is compared
 * only when both sides know it.
 */
bool
cql_type_equal(const cql_type *x, const cql_type *y)
{
	if (x == y)
		return true;
	if (!x || !y)
		return false;
	if (x->id != y->id || x->nsub != y->nsub)
		return false;
	if (x->id == CQL_TYPE_VECTOR && x->dimension != y->dimension)
		return false;
	if (x->id == CQL_TYPE_UDT || x->id == CQL_TYPE_CUSTOM)
	{
		if (!str_eq(x->name, y->name))
			return false;
		if (x->keyspace && y->keyspace && strcmp(x->keyspace, y->keyspace) != 0)
			return false;
	}
	for (int i = 0; i < x->nsub; i++)
	{
		if (!cql_type_equal(x->sub[i], y->sub[i]))
			return false;
		if (x->id == CQL_TYPE_UDT &&
			!str_eq(x->field_names ? x->field_names[i] : NULL,
					y->field_names ? y->field_names[i] : NULL))
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------
 * Names
 * ---------------------------------------------------------------------
 */
typedef struct native_name
{
	const char *cql;			/* CQL name */
	const char *marshal;		/* Java class (short form) */
	cql_type_id id;
	bool		alias;			/* lookup only, never the canonical name */
} native_name;

static const native_name native_names[] = {
	{"ascii", "AsciiType", CQL_TYPE_ASCII},
	{"bigint", "LongType", CQL_TYPE_BIGINT},
	{"blob", "BytesType", CQL_TYPE_BLOB},
	{"boolean", "BooleanType", CQL_TYPE_BOOLEAN},
	{"counter", "CounterColumnType", CQL_TYPE_COUNTER},
	{"decimal", "DecimalType", CQL_TYPE_DECIMAL},
	{"double", "DoubleType", CQL_TYPE_DOUBLE},
	{"float", "FloatType", CQL_TYPE_FLOAT},
	{"int", "Int32Type", CQL_TYPE_INT},
	{"timestamp", "TimestampType", CQL_TYPE_TIMESTAMP},
	{"uuid", "UUIDType", CQL_TYPE_UUID},
	{"text", "UTF8Type", CQL_TYPE_VARCHAR},
	{"varint", "IntegerType", CQL_TYPE_VARINT},
	{"timeuuid", "TimeUUIDType", CQL_TYPE_TIMEUUID},
	{"inet", "InetAddressType", CQL_TYPE_INET},
	{"date", "SimpleDateType", CQL_TYPE_DATE},
	{"time", "TimeType", CQL_TYPE_TIME},
	{"smallint", "ShortType", CQL_TYPE_SMALLINT},
	{"tinyint", "ByteType", CQL_TYPE_TINYINT},
	{"duration", "DurationType", CQL_TYPE_DURATION},
	/* aliases, only for lookup */
	{"varchar", "", CQL_TYPE_VARCHAR, true},
	{"", "DateType", CQL_TYPE_TIMESTAMP, true},	/* legacy timestamp */
	{NULL, NULL, 0, false}
};

const char *
cql_type_name(cql_type_id id)
{
	for (const native_name *n = native_names; n->cql; n++)
		if (n->id == id && !n->alias)
			return n->cql;
	return NULL;
}

static bool
ci_eq_n(const char *s, size_t n, const char *word)
{
	size_t		wl = strlen(word);

	if (wl != n)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		char		c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		if (c != word[i])
			return false;
	}
	return true;
}

/* Native CQL type by (case-insensitive) name; returns false if none. */
static bool
native_by_cql_name(const char *s, size_t n, cql_type_id *id)
{
	for (const native_name *nn = native_names; nn->cql; nn++)
	{
		if (n > 0 && ci_eq_n(s, n, nn->cql))
		{
			*id = nn->id;
			return true;
		}
	}
	return false;
}

int
cql_type_fixed_size(const cql_type *t)
{
	/*
	 * This follows Cassandra's AbstractType.valueLengthIfFixed(), because
	 * that is what decides the vector element layout: smallint, tinyint,
	 * date, time and counter are NOT fixed there, even though their values
	 * have a constant size.
	 */
	if (!t)
		return -1;
	switch (t->id)
	{
		case CQL_TYPE_BOOLEAN:
			return 1;
		case CQL_TYPE_INT:
		case CQL_TYPE_FLOAT:
			return 4;
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_DOUBLE:
		case CQL_TYPE_TIMESTAMP:
			return 8;
		case CQL_TYPE_UUID:
		case CQL_TYPE_TIMEUUID:
			return 16;
		case CQL_TYPE_VECTOR:
			{
				int			es = (t->nsub == 1) ? cql_type_fixed_size(t->sub[0]) : -1;

				if (es < 0 || t->dimension <= 0 ||
					(int64_t) es * t->dimension > INT32_MAX)
					return -1;
				return es * t->dimension;
			}
		default:
			return -1;
	}
}

/* ---------------------------------------------------------------------
 * [option] parsing
 * ---------------------------------------------------------------------
 */
static cql_status read_option(cql_reader *r, const cql_allocator *a,
							  cql_type **out, int depth, int *budget);

static cql_status
parse_marshal_internal(const char *s, size_t len, size_t *pos,
					   const cql_allocator *a, cql_type **out, int depth);

/* Count the nodes of a type tree. */
static int
type_nodes(const cql_type *t)
{
	int			n = 1;

	for (int i = 0; t && i < t->nsub; i++)
		n += type_nodes(t->sub[i]);
	return n;
}

/*
 * read_option
 *		One [option], recursively.  *budget is the number of type nodes the
 *		caller still allows: every node takes one, and a tuple or UDT must
 *		fit all its fields in it before anything is allocated for them.
 *		Two bytes of option can describe a node of ~100 bytes, so without a
 *		ceiling a large response could expand ~40-fold in memory.
 */
static cql_status
read_option(cql_reader *r, const cql_allocator *a, cql_type **out, int depth,
			int *budget)
{
	uint16_t	id;
	cql_type   *t = NULL;
	cql_status	st;

	*out = NULL;
	if (depth > CQL_MAX_TYPE_DEPTH)
		return CQL_ERR_TOO_LARGE;
	if (*budget < 1)
		return CQL_ERR_TOO_LARGE;
	(*budget)--;
	if ((st = cql_read_u16(r, &id)) != CQL_OK)
		return st;

	switch (id)
	{
		case CQL_TYPE_CUSTOM:
			{
				const char *s;
				size_t		n;

				if ((st = cql_read_string(r, &s, &n)) != CQL_OK)
					return st;
				if ((st = cql_type_parse_marshal(s, n, a, out)) != CQL_OK)
					return st;
				/* the string's own nodes (at most ~n/2 of them) count too */
				*budget -= type_nodes(*out) - 1;
				if (*budget < 0)
				{
					cql_type_free(*out, a);
					*out = NULL;
					return CQL_ERR_TOO_LARGE;
				}
				return CQL_OK;
			}
		case 0x000A:			/* v1 "text": treat as varchar */
			id = CQL_TYPE_VARCHAR;
			/* FALLTHROUGH */
		case CQL_TYPE_ASCII:
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_BLOB:
		case CQL_TYPE_BOOLEAN:
		case CQL_TYPE_COUNTER:
		case CQL_TYPE_DECIMAL:
		case CQL_TYPE_DOUBLE:
		case CQL_TYPE_FLOAT:
		case CQL_TYPE_INT:
		case CQL_TYPE_TIMESTAMP:
		case CQL_TYPE_UUID:
		case CQL_TYPE_VARCHAR:
		case CQL_TYPE_VARINT:
		case CQL_TYPE_TIMEUUID:
		case CQL_TYPE_INET:
		case CQL_TYPE_DATE:
		case CQL_TYPE_TIME:
		case CQL_TYPE_SMALLINT:
		case CQL_TYPE_TINYINT:
		case CQL_TYPE_DURATION:
			t = cql_type_new(a, (cql_type_id) id, 0);
			if (!t)
				return CQL_ERR_NOMEM;
			*out = t;
			return CQL_OK;

		case CQL_TYPE_LIST:
		case CQL_TYPE_SET:
		case CQL_TYPE_MAP:
			{
				int			nsub = (id == CQL_TYPE_MAP) ? 2 : 1;

				t = cql_type_new(a, (cql_type_id) id, nsub);
				if (!t)
					return CQL_ERR_NOMEM;
				for (int i = 0; i < nsub; i++)
				{
					if ((st = read_option(r, a, &t->sub[i], depth + 1, budget)) != CQL_OK)
						goto fail;
				}
				*out = t;
				return CQL_OK;
			}

		case CQL_TYPE_UDT:
			{
				const char *s;
				size_t		n;
				uint16_t	nf;
				char	   *ks = NULL,
						   *name = NULL;

				if ((st = cql_read_string_dup(r, a, &ks)) != CQL_OK)
					return st;
				if ((st = cql_read_string_dup(r, a, &name)) != CQL_OK)
				{
					cql_free(a, ks);
					return st;
				}
				if ((st = cql_read_u16(r, &nf)) != CQL_OK)
				{
					cql_free(a, ks);
					cql_free(a, name);
					return st;
				}
				/* each field needs >= 2 bytes of name and 2 of option */
				if ((size_t) nf * 4 > cql_reader_remaining(r))
				{
					cql_free(a, ks);
					cql_free(a, name);
					return CQL_ERR_TRUNCATED;
				}
				if (nf > *budget)
				{
					cql_free(a, ks);
					cql_free(a, name);
					return CQL_ERR_TOO_LARGE;
				}
				t = cql_type_new(a, CQL_TYPE_UDT, nf);
				if (!t)
				{
					cql_free(a, ks);
					cql_free(a, name);
					return CQL_ERR_NOMEM;
				}
				t->keyspace = ks;
				t->name = name;
				for (int i = 0; i < nf; i++)
				{
					if ((st = cql_read_string(r, &s, &n)) != CQL_OK)
						goto fail;
					if (!(t->field_names[i] = cql_strndup(a, s, n)))
					{
						st = CQL_ERR_NOMEM;
						goto fail;
					}
					if ((st = read_option(r, a, &t->sub[i], depth + 1, budget)) != CQL_OK)
						goto fail;
				}
				*out = t;
				return CQL_OK;
			}

		case CQL_TYPE_TUPLE:
			{
				uint16_t	nf;

				if ((st = cql_read_u16(r, &nf)) != CQL_OK)
					return st;
				if ((size_t) nf * 2 > cql_reader_remaining(r))
					return CQL_ERR_TRUNCATED;
				if (nf > *budget)
					return CQL_ERR_TOO_LARGE;
				t = cql_type_new(a, CQL_TYPE_TUPLE, nf);
				if (!t)
					return CQL_ERR_NOMEM;
				t->frozen = true;	/* tuples are always frozen */
				for (int i = 0; i < nf; i++)
				{
					if ((st = read_option(r, a, &t->sub[i], depth + 1, budget)) != CQL_OK)
						goto fail;
				}
				*out = t;
				return CQL_OK;
			}

		default:
			return CQL_ERR_UNSUPPORTED;
	}

fail:
	cql_type_free(t, a);
	return st;
}

cql_status
cql_type_read_option(cql_reader *r, const cql_allocator *a, cql_type **out)
{
	int			budget = CQL_MAX_TYPE_NODES;

	return read_option(r, a, out, 1, &budget);
}

cql_status
cql_type_read_option_budget(cql_reader *r, const cql_allocator *a,
							cql_type **out, int *budget)
{
	int			local = *budget < CQL_MAX_TYPE_NODES ? *budget : CQL_MAX_TYPE_NODES;
	int			used;
	cql_status	st;

	st = read_option(r, a, out, 1, &local);
	used = (*budget < CQL_MAX_TYPE_NODES ? *budget : CQL_MAX_TYPE_NODES) - local;
	*budget -= used;
	return st;
}

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

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
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
		int			hi = hexval(s[2 * i]),
					lo = hexval(s[2 * i + 1]);

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
				(st = type_append(t, sub, NULL, a)) != CQL_OK)
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
		if ((st = type_append(t, ftype, fname, a)) != CQL_OK)
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

	for (const native_name *nn = native_names; nn->cql; nn++)
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
is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
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
	if (!is_ident_start(s[p]))
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
			(st = type_append(t, sub, NULL, lx->a)) != CQL_OK)
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

		if (native_by_cql_name(word, wl, &id))
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

/* ---------------------------------------------------------------------
 * Formatting
 * ---------------------------------------------------------------------
 */

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
	if (!s || !is_ident_start(*s) || (*s >= 'A' && *s <= 'Z'))
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
			cql_format_ident(out, t->name ? t->name : "");
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

/*-------------------------------------------------------------------------
 *
 * cql_types.c
 *		CQL type descriptors: construction, copying, comparison and names.
 *		The native protocol [option] reader is cql_type_option.c; the two
 *		textual sources are parsed in cql_type_parse.c (Java marshal class
 *		names, CQL type strings from system_schema); formatting is in
 *		cql_type_format.c.  This file calls none of them.
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
#include "cql_types_int.h"
#include "cql_values_int.h"

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
cql_status
cql_type_append(cql_type *t, cql_type *child, char *name, const cql_allocator *a)
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

/* Values made of elements (see cql_types.h) */
bool
cql_type_is_composite(const cql_type *t)
{
	switch (t->id)
	{
		case CQL_TYPE_LIST:
		case CQL_TYPE_SET:
		case CQL_TYPE_MAP:
		case CQL_TYPE_TUPLE:
		case CQL_TYPE_UDT:
		case CQL_TYPE_VECTOR:
			return true;
		default:
			return false;
	}
}

/* Whether a zero-length value is a value of the type (see cql_types.h) */
bool
cql_type_has_empty_form(const cql_type *t)
{
	switch (t->id)
	{
		case CQL_TYPE_ASCII:
		case CQL_TYPE_VARCHAR:
		case CQL_TYPE_BLOB:
		case CQL_TYPE_CUSTOM:
		case CQL_TYPE_LIST:
		case CQL_TYPE_SET:
		case CQL_TYPE_MAP:
		case CQL_TYPE_TUPLE:
		case CQL_TYPE_UDT:
			return true;
		default:
			return false;
	}
}

/* A valid ascii or text value (see cql_types.h) */
bool
cql_text_valid(const cql_type *t, const uint8_t *p, int32_t n)
{
	if (t->id == CQL_TYPE_ASCII)
	{
		for (int32_t i = 0; i < n; i++)
			if (p[i] >= 0x80)
				return false;
		return true;
	}
	return cql_utf8_valid(p, (size_t) n);
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
const cql_native_name cql_native_names[] = {
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
	for (const cql_native_name *n = cql_native_names; n->cql; n++)
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
bool
cql_native_by_cql_name(const char *s, size_t n, cql_type_id *id)
{
	for (const cql_native_name *nn = cql_native_names; nn->cql; nn++)
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

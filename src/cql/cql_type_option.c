/*-------------------------------------------------------------------------
 *
 * cql_type_option.c
 *		The native protocol [option] reader: a type descriptor from the
 *		bytes of a result's or a prepared statement's metadata.  A custom
 *		type names its Java marshal class, parsed by cql_type_parse.c.
 *
 * The input comes from the server: recursion is bounded by
 * CQL_MAX_TYPE_DEPTH and the number of type nodes by a budget (see
 * read_option), and no count is trusted before the remaining input could
 * hold that many entries.  Above cql_types.c and cql_type_parse.c, which
 * do not call it.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_type_option.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_types_int.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * [option] parsing
 * ---------------------------------------------------------------------
 */
static cql_status read_option(cql_reader *r, const cql_allocator *a,
							  cql_type **out, int depth, int *budget);

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

/*-------------------------------------------------------------------------
 *
 * cql_types_int.h
 *		Private: what the type descriptor files (cql_types.c,
 *		cql_type_option.c, cql_type_parse.c, cql_type_format.c) share.  Not
 *		part of the public API.
 *
 * layer: codec (private)
 *
 * IDENTIFICATION
 *		src/cql/cql_types_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_TYPES_INT_H
#define CQL_TYPES_INT_H

#include "cql_types.h"

/* Native types by CQL name and Java marshal class (cql_types.c) */
typedef struct cql_native_name
{
	const char *cql;			/* CQL name */
	const char *marshal;		/* Java class (short form) */
	cql_type_id id;
	bool		alias;			/* lookup only, never the canonical name */
} cql_native_name;

/* ends with an entry whose cql is NULL */
extern const cql_native_name cql_native_names[];

/* Native CQL type by (case-insensitive) name; returns false if none. */
extern bool cql_native_by_cql_name(const char *s, size_t n, cql_type_id *id);

/* Append a child (and, for UDTs, its field name) to a node, taking
 * ownership of both even on failure. */
extern cql_status cql_type_append(cql_type *t, cql_type *child, char *name,
								  const cql_allocator *a);

/* May an unquoted CQL identifier start with c? */
static inline bool
cql_is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

#endif							/* CQL_TYPES_INT_H */

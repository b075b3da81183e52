/*-------------------------------------------------------------------------
 *
 * cql_values_int.h
 *		Helpers shared by the value codec files (cql_values.c,
 *		cql_numeric.c, cql_datetime.c, cql_format.c, cql_parse.c,
 *		cql_collection_order.c) and the type parser (cql_type_parse.c).
 *		Not part of the library's public contract.
 *
 * layer: codec (private)
 *
 * IDENTIFICATION
 *		src/cql/cql_values_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_VALUES_INT_H
#define CQL_VALUES_INT_H

#include "cql_types.h"

#include <string.h>

/* Is [p, p+n) valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF)? */
extern bool cql_utf8_valid(const uint8_t *p, size_t n);

/* Append a NUL-free C string. */
static inline void
cql_buf_str(cql_buf *b, const char *s)
{
	cql_buf_put(b, s, strlen(s));
}

static inline bool
cql_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The value of a hexadecimal digit, -1 for any other character */
static inline int
cql_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static inline char
cql_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

/* Case-insensitive equality of [s, s+n) with a lower-case word. */
static inline bool
cql_word_eq(const char *s, size_t n, const char *word)
{
	size_t		i;

	for (i = 0; i < n; i++)
		if (word[i] == '\0' || cql_lower(s[i]) != word[i])
			return false;
	return word[i] == '\0';
}

/* Strict decimal integer parse of the whole of [s, s+n) into int64. */
extern cql_status cql_parse_int64(const char *s, size_t n, int64_t *v);

/*
 * Cassandra's order of two non-null serialized values of type t (its
 * AbstractType.compare): negative, 0 or positive.  *st is CQL_ERR_NOMEM
 * when memory ran out (decimals of different scales need some); the
 * result is then meaningless.  (cql_collection_order.c)
 */
extern int	cql_value_compare(const cql_type *t, const uint8_t *a, size_t an,
							  const uint8_t *b, size_t bn,
							  const cql_allocator *alloc, cql_status *st);

/*
 * Put the encoded set or map of type t that starts at content->data + at
 * (its element count) and ends at content->len into Cassandra's form:
 * elements (map: entries by key) sorted by cql_value_compare of the
 * element (key) type, equal ones dropped (a set keeps the first, a map the
 * first key with the last value).  content->len shrinks by what was
 * dropped.  Other types are left alone.  Errors: CQL_ERR_MALFORMED (not a
 * well-formed collection), CQL_ERR_NOMEM (content unchanged).
 */
extern cql_status cql_collection_canonicalize(const cql_type *t, cql_buf *content,
											  size_t at);

#endif							/* CQL_VALUES_INT_H */

/*-------------------------------------------------------------------------
 *
 * cql_values_int.h
 *		Helpers shared by the value codec files (cql_values.c,
 *		cql_numeric.c, cql_datetime.c, cql_format.c, cql_parse.c) and the
 *		type parser (cql_type_parse.c).
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

#endif							/* CQL_VALUES_INT_H */

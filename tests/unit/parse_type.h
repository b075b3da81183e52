/*-------------------------------------------------------------------------
 *
 * parse_type.h
 *		T("map<text, frozen<list<int>>>"): a CQL type from its text, for the
 *		unit tests of values and their order.  A type the test cannot parse
 *		is a bug of the test: it says which and exits with status 2 (the
 *		runner counts that as a failure).
 *
 * IDENTIFICATION
 *		tests/unit/parse_type.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_TEST_PARSE_TYPE_H
#define CQL_TEST_PARSE_TYPE_H

#include <stdio.h>
#include <stdlib.h>

#include "cql_types.h"

static cql_type *
T(const char *s)
{
	cql_type   *t = NULL;

	if (cql_type_parse(s, NULL, NULL, NULL, &cql_malloc_allocator, &t) != CQL_OK)
	{
		printf("# cannot parse type %s\n", s);
		exit(2);
	}
	return t;
}

#endif							/* CQL_TEST_PARSE_TYPE_H */

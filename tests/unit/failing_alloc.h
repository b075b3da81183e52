/*-------------------------------------------------------------------------
 *
 * failing_alloc.h
 *		A cql_allocator whose allocations fail on demand, for tests that
 *		drive an operation through every allocation failure point.
 *
 * Set fail_countdown to n before the operation: the n-th allocation (and
 * reallocation) from then on fails; -1 (the default) never fails.  Under
 * ASan/LeakSanitizer this checks that each failure is clean.
 *
 * IDENTIFICATION
 *		tests/unit/failing_alloc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_TEST_FAILING_ALLOC_H
#define CQL_TEST_FAILING_ALLOC_H

#include <stdlib.h>

#include "cql_core.h"

static long fail_countdown = -1;

static void *
failing_alloc(void *ctx, size_t size)
{
	if (fail_countdown == 0)
		return NULL;
	if (fail_countdown > 0)
		fail_countdown--;
	return malloc(size);
}

static void *
failing_realloc(void *ctx, void *p, size_t size)
{
	if (fail_countdown == 0)
		return NULL;
	if (fail_countdown > 0)
		fail_countdown--;
	return realloc(p, size);
}

static void
failing_free(void *ctx, void *p)
{
	free(p);
}

static const cql_allocator failing_allocator = {failing_alloc, failing_realloc, failing_free, NULL};

#endif							/* CQL_TEST_FAILING_ALLOC_H */

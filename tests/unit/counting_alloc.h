/*-------------------------------------------------------------------------
 *
 * counting_alloc.h
 *		A cql_allocator that counts live and peak bytes, for unit tests that
 *		assert an operation's memory stays small (e.g. a hostile length
 *		field must not turn into a large allocation).
 *
 * IDENTIFICATION
 *		tests/unit/counting_alloc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_TEST_COUNTING_ALLOC_H
#define CQL_TEST_COUNTING_ALLOC_H

#include <stdlib.h>
#include <string.h>

#include "cql_core.h"

typedef struct count_stats
{
	size_t		cur;
	size_t		peak;
	size_t		largest;		/* largest single request */
	size_t		nallocs;
} count_stats;

#define COUNT_HDR 16

static void *
count_alloc(void *ctx, size_t size)
{
	count_stats *c = ctx;
	unsigned char *p = malloc(size + COUNT_HDR);

	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	c->cur += size;
	c->nallocs++;
	if (size > c->largest)
		c->largest = size;
	if (c->cur > c->peak)
		c->peak = c->cur;
	return p + COUNT_HDR;
}

static void
count_free(void *ctx, void *ptr)
{
	count_stats *c = ctx;
	unsigned char *p;
	size_t		old;

	if (!ptr)
		return;
	p = (unsigned char *) ptr - COUNT_HDR;
	memcpy(&old, p, sizeof(old));
	c->cur -= old;
	free(p);
}

static void *
count_realloc(void *ctx, void *ptr, size_t size)
{
	count_stats *c = ctx;
	unsigned char *p;
	size_t		old;

	if (!ptr)
		return count_alloc(ctx, size);
	p = (unsigned char *) ptr - COUNT_HDR;
	memcpy(&old, p, sizeof(old));
	p = realloc(p, size + COUNT_HDR);
	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	c->cur = c->cur - old + size;
	if (size > c->largest)
		c->largest = size;
	if (c->cur > c->peak)
		c->peak = c->cur;
	return p + COUNT_HDR;
}

/* An allocator counting into *c (which is zeroed). */
static inline cql_allocator
counting_allocator(count_stats *c)
{
	cql_allocator a = {count_alloc, count_realloc, count_free, c};

	memset(c, 0, sizeof(*c));
	return a;
}

#endif							/* CQL_TEST_COUNTING_ALLOC_H */

/*-------------------------------------------------------------------------
 *
 * cql_palloc.c
 *		The protocol library's allocator over palloc, CQL type names for
 *		messages and values in the library's text forms: what every
 *		conversion of src/fdw needs to call the library's pure functions
 *		(split, format, parse, encode) from PostgreSQL.
 *
 * IDENTIFICATION
 *		src/fdw/cql_palloc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/attnum.h"

#include "convert.h"

/*
 * Allocator over palloc in the current memory context, for the pure
 * functions of the protocol library (split, format, parse): they keep no
 * state, so an out-of-memory longjmp through them loses nothing.
 */
static void *
palloc_alloc(void *ctx, size_t size)
{
	return palloc_extended(size ? size : 1, MCXT_ALLOC_HUGE);
}

/*
 * palloc_realloc
 *		Resize a block of cqlfdw_palloc_allocator (repalloc_huge; size 0
 *		keeps one byte).
 */
static void *
palloc_realloc(void *ctx, void *ptr, size_t size)
{
	return repalloc_huge(ptr, size ? size : 1);
}

/*
 * palloc_free
 *		Free a block of cqlfdw_palloc_allocator.
 */
static void
palloc_free(void *ctx, void *ptr)
{
	pfree(ptr);
}

const cql_allocator cqlfdw_palloc_allocator = {
	palloc_alloc, palloc_realloc, palloc_free, NULL
};

/* The CQL type as a string, for messages */
char *
cqlfdw_cql_type_string(const cql_type *t)
{
	cql_buf		b;
	char	   *s;

	cql_buf_init(&b, &cqlfdw_palloc_allocator);
	if (t == NULL || cql_type_format(t, &b) != CQL_OK)
		return pstrdup("?");
	s = pnstrdup((const char *) b.data, b.len);
	cql_buf_free(&b);
	return s;
}

/*
 * cqlfdw_format_cql
 *		A received value of CQL type t in the library's text form of style
 *		(cql_value_format), as a palloc'd string in *out (its length in *len
 *		when len is not NULL); the library's status, *out unset, on failure.
 */
cql_status
cqlfdw_format_cql(const cql_type *t, const uint8_t *p, int32_t n, cql_format_style style,
				  char **out, int *len)
{
	cql_buf		b;
	cql_status	st;

	cql_buf_init(&b, &cqlfdw_palloc_allocator);
	st = cql_value_format(t, p, n, style, &b);
	if (st == CQL_OK)
		st = cql_buf_status(&b);
	if (st == CQL_OK)
	{
		*out = pnstrdup((const char *) b.data, b.len);
		if (len)
			*len = (int) b.len;
	}
	cql_buf_free(&b);
	return st;
}

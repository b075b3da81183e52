/*-------------------------------------------------------------------------
 *
 * cql_core.h
 *		Basic contract of the CQL native protocol client: status codes,
 *		the caller-supplied allocator, and bounds-checked byte buffers.
 *
 * The protocol library (src/cql) includes no PostgreSQL header.  It talks to
 * its caller only through the types declared here: every function returns a
 * cql_status, every allocation goes through a cql_allocator, and every read
 * of untrusted bytes goes through a cql_reader that refuses to run past the
 * end of its input.  This is what lets the same code run inside a backend
 * (palloc, latch waits, ereport in the glue layer) and in unit tests and
 * fuzzers (malloc, poll).
 *
 * IDENTIFICATION
 *		src/cql/cql_core.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_CORE_H
#define CQL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Status codes.  CQL_OK is zero; everything else is a failure whose details,
 * where there are any, are in a cql_error filled in by the failing call.
 */
typedef enum cql_status
{
	CQL_OK = 0,
	CQL_ERR_NOMEM,				/* allocator returned NULL */
	CQL_ERR_INVALID_ARG,		/* caller passed something unusable */
	CQL_ERR_MALFORMED,			/* peer bytes violate the protocol */
	CQL_ERR_TRUNCATED,			/* need more bytes (internal; also short input) */
	CQL_ERR_TOO_LARGE,			/* a length or count over a sanity limit */
	CQL_ERR_CRC,				/* v5 frame header or payload CRC mismatch */
	CQL_ERR_COMPRESSION,		/* LZ4 (de)compression failed */
	CQL_ERR_UNSUPPORTED,		/* unknown opcode/type id/version feature */
	CQL_ERR_TYPE,				/* a value does not fit its CQL type */
	CQL_ERR_RESOLVE,			/* host name could not be resolved */
	CQL_ERR_CONNECT,			/* TCP connect failed */
	CQL_ERR_IO,					/* send/recv failed (errno in cql_error) */
	CQL_ERR_CLOSED,				/* peer closed the connection */
	CQL_ERR_TIMEOUT,			/* a deadline passed */
	CQL_ERR_INTERRUPTED,		/* the wait hook asked us to stop */
	CQL_ERR_PROTOCOL_VERSION,	/* server refused the protocol version */
	CQL_ERR_AUTH,				/* authentication failed or required */
	CQL_ERR_SERVER,				/* server answered ERROR; see cql_error */
	CQL_ERR_BUSY,				/* no free stream id */
	CQL_ERR_NO_HOST,			/* no contact point could be used */
	CQL_ERR_STATE,				/* connection unusable after an earlier error */
	CQL_ERR_TLS					/* TLS setup, handshake or certificate check */
} cql_status;

/* Human-readable, constant name of a status ("CQL_ERR_CRC" -> "bad CRC"). */
extern const char *cql_status_message(cql_status st);

/*
 * Caller-supplied allocator.  alloc/realloc return NULL on failure (the
 * library then returns CQL_ERR_NOMEM and leaves its objects consistent);
 * they must never longjmp.  Inside PostgreSQL use MCXT_ALLOC_NO_OOM.
 */
typedef struct cql_allocator
{
	void	   *(*alloc) (void *ctx, size_t size);
	void	   *(*realloc) (void *ctx, void *ptr, size_t size);
	void		(*free) (void *ctx, void *ptr);
	void	   *ctx;
} cql_allocator;

/* An allocator over malloc/realloc/free, for tests, fuzzers and tools. */
extern const cql_allocator cql_malloc_allocator;

extern void *cql_alloc(const cql_allocator *a, size_t size);
extern void *cql_alloc0(const cql_allocator *a, size_t size);
extern void *cql_realloc(const cql_allocator *a, void *ptr, size_t size);
extern void cql_free(const cql_allocator *a, void *ptr);
extern char *cql_strdup(const cql_allocator *a, const char *s);
extern char *cql_strndup(const cql_allocator *a, const char *s, size_t n);

/*
 * Sanity limits on lengths read from the wire.  A peer that claims more is
 * treated as hostile (CQL_ERR_TOO_LARGE) before anything is allocated.
 */
#define CQL_MAX_BODY_LENGTH		(256 * 1024 * 1024)	/* protocol cap */
#define CQL_MAX_COLLECTION_ELEMS (64 * 1024 * 1024)
#define CQL_MAX_TYPE_DEPTH		32	/* nesting of collection/UDT/tuple types */

/*
 * A growable output buffer.  Writers never fail individually: the first
 * allocation failure sets 'failed' and later writes are ignored, so callers
 * check once, at the end, with cql_buf_status().
 */
typedef struct cql_buf
{
	uint8_t    *data;
	size_t		len;
	size_t		cap;
	bool		failed;
	const cql_allocator *alloc;
} cql_buf;

extern void cql_buf_init(cql_buf *b, const cql_allocator *a);
extern void cql_buf_free(cql_buf *b);
extern void cql_buf_reset(cql_buf *b);	/* len = 0, keeps memory */
extern cql_status cql_buf_status(const cql_buf *b);
extern bool cql_buf_reserve(cql_buf *b, size_t extra);
extern void cql_buf_put(cql_buf *b, const void *p, size_t n);
extern void cql_buf_u8(cql_buf *b, uint8_t v);
extern void cql_buf_u16(cql_buf *b, uint16_t v);	/* big-endian */
extern void cql_buf_u32(cql_buf *b, uint32_t v);	/* big-endian */
extern void cql_buf_u64(cql_buf *b, uint64_t v);	/* big-endian */
extern void cql_buf_i32(cql_buf *b, int32_t v);
extern void cql_buf_i64(cql_buf *b, int64_t v);
extern void cql_buf_string(cql_buf *b, const char *s);	/* [string] */
extern void cql_buf_string_n(cql_buf *b, const char *s, size_t n);
extern void cql_buf_long_string(cql_buf *b, const char *s, size_t n);	/* [long string] */
extern void cql_buf_bytes(cql_buf *b, const void *p, int32_t n);	/* [bytes], n<0 = null */
extern void cql_buf_short_bytes(cql_buf *b, const void *p, uint16_t n);
extern void cql_buf_string_list(cql_buf *b, const char *const *v, int n);
extern void cql_buf_unsigned_vint(cql_buf *b, uint64_t v);
extern void cql_buf_vint(cql_buf *b, int64_t v);	/* zig-zag */
/* Overwrite 4 bytes at 'off' with a big-endian value (length back-patching). */
extern void cql_buf_patch_u32(cql_buf *b, size_t off, uint32_t v);

/*
 * A bounds-checked reader over bytes we do not trust.  Every accessor
 * returns CQL_ERR_TRUNCATED (never reads) when the input is too short, and
 * CQL_ERR_MALFORMED / CQL_ERR_TOO_LARGE on impossible lengths.
 * Pointers handed out point into the reader's input (no copies).
 */
typedef struct cql_reader
{
	const uint8_t *p;
	const uint8_t *end;
} cql_reader;

static inline void
cql_reader_init(cql_reader *r, const void *p, size_t n)
{
	r->p = (const uint8_t *) p;
	r->end = r->p + n;
}

static inline size_t
cql_reader_remaining(const cql_reader *r)
{
	return (size_t) (r->end - r->p);
}

extern cql_status cql_read_u8(cql_reader *r, uint8_t *v);
extern cql_status cql_read_u16(cql_reader *r, uint16_t *v);
extern cql_status cql_read_u32(cql_reader *r, uint32_t *v);
extern cql_status cql_read_i32(cql_reader *r, int32_t *v);
extern cql_status cql_read_i64(cql_reader *r, int64_t *v);
extern cql_status cql_read_raw(cql_reader *r, size_t n, const uint8_t **p);
extern cql_status cql_read_skip(cql_reader *r, size_t n);
/* [string]: *s is NOT NUL-terminated; *n is its length. */
extern cql_status cql_read_string(cql_reader *r, const char **s, size_t *n);
extern cql_status cql_read_long_string(cql_reader *r, const char **s, size_t *n);
/* [bytes]: *n = -1 for null (then *p = NULL). */
extern cql_status cql_read_bytes(cql_reader *r, const uint8_t **p, int32_t *n);
extern cql_status cql_read_short_bytes(cql_reader *r, const uint8_t **p, uint16_t *n);
/* [string] copied into a NUL-terminated allocation. */
extern cql_status cql_read_string_dup(cql_reader *r, const cql_allocator *a, char **out);
extern cql_status cql_read_unsigned_vint(cql_reader *r, uint64_t *v);
extern cql_status cql_read_vint(cql_reader *r, int64_t *v);

/* Big-/little-endian helpers for fixed-size fields. */
static inline uint16_t
cql_get_be16(const uint8_t *p)
{
	return (uint16_t) ((p[0] << 8) | p[1]);
}

static inline uint32_t
cql_get_be32(const uint8_t *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) |
		((uint32_t) p[2] << 8) | (uint32_t) p[3];
}

static inline uint64_t
cql_get_be64(const uint8_t *p)
{
	return ((uint64_t) cql_get_be32(p) << 32) | cql_get_be32(p + 4);
}

static inline void
cql_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) (v >> 24);
	p[1] = (uint8_t) (v >> 16);
	p[2] = (uint8_t) (v >> 8);
	p[3] = (uint8_t) v;
}

#endif							/* CQL_CORE_H */

/*-------------------------------------------------------------------------
 *
 * cql_wire.h
 *		Byte-level layer of the CQL native protocol (v4 and v5): protocol
 *		constants, the Murmur3 partitioner hash, request body builders and
 *		response decoders.  Envelopes, v4 LZ4 bodies, the v5 outer framing
 *		and its checksums are private to the library: cql_frame_int.h.
 *
 * Everything here is a pure function over byte buffers: no sockets, no
 * clocks, no global state.  The connection layer feeds received bytes into
 * a cql_segment_decoder (cql_frame_int.h), pulls complete envelopes out of
 * it and hands their bodies to the response decoders declared here;
 * requests are built into a cql_buf by one of the cql_write_* body
 * builders and wrapped into an envelope (and, for v5, frames) by the
 * connection.
 *
 * Ownership conventions:
 *	- Functions taking a cql_buf append to it and report failure through
 *	  the returned cql_status (which includes cql_buf_status()).
 *	- Decoded strings/arrays inside the response structs are allocated with
 *	  the allocator passed to the decoder and released by the matching
 *	  *_free function.  cql_error is the exception: it is fixed-size (no
 *	  allocation at all), so it can be copied and filled anywhere.
 *
 * IDENTIFICATION
 *		src/cql/cql_wire.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_WIRE_H
#define CQL_WIRE_H

#include "cql_core.h"
#include "cql_types.h"			/* cql_elem, cql_type */

/* ---------------------------------------------------------------------
 * Protocol constants
 * ---------------------------------------------------------------------
 */
#define CQL_PROTOCOL_V3			3
#define CQL_PROTOCOL_V4			4
#define CQL_PROTOCOL_V5			5

#define CQL_HEADER_LEN			9	/* envelope header */
#define CQL_VERSION_RESPONSE	0x80	/* direction bit of byte 0 */

/* Opcodes */
typedef enum cql_opcode
{
	CQL_OP_ERROR = 0x00,
	CQL_OP_STARTUP = 0x01,
	CQL_OP_READY = 0x02,
	CQL_OP_AUTHENTICATE = 0x03,
	CQL_OP_OPTIONS = 0x05,
	CQL_OP_SUPPORTED = 0x06,
	CQL_OP_QUERY = 0x07,
	CQL_OP_RESULT = 0x08,
	CQL_OP_PREPARE = 0x09,
	CQL_OP_EXECUTE = 0x0A,
	CQL_OP_REGISTER = 0x0B,
	CQL_OP_EVENT = 0x0C,
	CQL_OP_BATCH = 0x0D,
	CQL_OP_AUTH_CHALLENGE = 0x0E,
	CQL_OP_AUTH_RESPONSE = 0x0F,
	CQL_OP_AUTH_SUCCESS = 0x10
} cql_opcode;

/* "QUERY", "RESULT", ...; "UNKNOWN" for anything else. */
extern const char *cql_opcode_name(int opcode);

/* Envelope header flags */
#define CQL_FLAG_COMPRESSION	0x01	/* v4 only; ignored in v5 */
#define CQL_FLAG_TRACING		0x02
#define CQL_FLAG_CUSTOM_PAYLOAD	0x04
#define CQL_FLAG_WARNING		0x08
#define CQL_FLAG_USE_BETA		0x10

/* QUERY / EXECUTE / BATCH parameter flags ([byte] in v4, [int] in v5) */
#define CQL_QFLAG_VALUES				0x0001
#define CQL_QFLAG_SKIP_METADATA			0x0002
#define CQL_QFLAG_PAGE_SIZE				0x0004
#define CQL_QFLAG_WITH_PAGING_STATE		0x0008
#define CQL_QFLAG_WITH_SERIAL_CONSISTENCY 0x0010
#define CQL_QFLAG_WITH_DEFAULT_TIMESTAMP 0x0020
#define CQL_QFLAG_WITH_NAMES_FOR_VALUES	0x0040
#define CQL_QFLAG_WITH_KEYSPACE			0x0080	/* v5 */
#define CQL_QFLAG_WITH_NOW_IN_SECONDS	0x0100	/* v5 */

/* PREPARE flags (v5) */
#define CQL_PREPARE_FLAG_WITH_KEYSPACE	0x01

/* Consistency levels ([short]) */
typedef enum cql_consistency
{
	CQL_CONSISTENCY_ANY = 0x0000,
	CQL_CONSISTENCY_ONE = 0x0001,
	CQL_CONSISTENCY_TWO = 0x0002,
	CQL_CONSISTENCY_THREE = 0x0003,
	CQL_CONSISTENCY_QUORUM = 0x0004,
	CQL_CONSISTENCY_ALL = 0x0005,
	CQL_CONSISTENCY_LOCAL_QUORUM = 0x0006,
	CQL_CONSISTENCY_EACH_QUORUM = 0x0007,
	CQL_CONSISTENCY_SERIAL = 0x0008,
	CQL_CONSISTENCY_LOCAL_SERIAL = 0x0009,
	CQL_CONSISTENCY_LOCAL_ONE = 0x000A,
	CQL_CONSISTENCY_NODE_LOCAL = 0x000B
} cql_consistency;

/* "LOCAL_ONE" etc.; NULL for an unknown code. */
extern const char *cql_consistency_name(int code);

/*
 * Case-insensitive parse of a consistency name ("local_quorum"); returns
 * CQL_ERR_INVALID_ARG for an unknown name.
 */
extern cql_status cql_consistency_parse(const char *name, uint16_t *code);

/* RESULT kinds */
#define CQL_RESULT_VOID			0x0001
#define CQL_RESULT_ROWS			0x0002
#define CQL_RESULT_SET_KEYSPACE	0x0003
#define CQL_RESULT_PREPARED		0x0004
#define CQL_RESULT_SCHEMA_CHANGE 0x0005

/* Rows metadata flags */
#define CQL_ROWS_GLOBAL_TABLES_SPEC	0x0001
#define CQL_ROWS_HAS_MORE_PAGES		0x0002
#define CQL_ROWS_NO_METADATA		0x0004
#define CQL_ROWS_METADATA_CHANGED	0x0008	/* v5 */

/* BATCH types */
#define CQL_BATCH_LOGGED		0
#define CQL_BATCH_UNLOGGED		1
#define CQL_BATCH_COUNTER		2

/* ERROR codes */
#define CQL_ERRCODE_SERVER_ERROR		0x0000
#define CQL_ERRCODE_PROTOCOL_ERROR		0x000A
#define CQL_ERRCODE_AUTH_ERROR			0x0100
#define CQL_ERRCODE_UNAVAILABLE			0x1000
#define CQL_ERRCODE_OVERLOADED			0x1001
#define CQL_ERRCODE_IS_BOOTSTRAPPING	0x1002
#define CQL_ERRCODE_TRUNCATE_ERROR		0x1003
#define CQL_ERRCODE_WRITE_TIMEOUT		0x1100
#define CQL_ERRCODE_READ_TIMEOUT		0x1200
#define CQL_ERRCODE_READ_FAILURE		0x1300
#define CQL_ERRCODE_FUNCTION_FAILURE	0x1400
#define CQL_ERRCODE_WRITE_FAILURE		0x1500
#define CQL_ERRCODE_CDC_WRITE_FAILURE	0x1600
#define CQL_ERRCODE_CAS_WRITE_UNKNOWN	0x1700
#define CQL_ERRCODE_SYNTAX_ERROR		0x2000
#define CQL_ERRCODE_UNAUTHORIZED		0x2100
#define CQL_ERRCODE_INVALID				0x2200
#define CQL_ERRCODE_CONFIG_ERROR		0x2300
#define CQL_ERRCODE_ALREADY_EXISTS		0x2400
#define CQL_ERRCODE_UNPREPARED			0x2500

/* "Unavailable", "Write_timeout", ...; "Unknown" for unknown codes. */
extern const char *cql_error_code_name(int32_t code);

/* v5 failure reason (RequestFailureReason) of a read that met too many tombstones */
#define CQL_FAILURE_READ_TOO_MANY_TOMBSTONES	0x0001

struct cql_error;

/*
 * Did a Read_failure come from a replica that met more tombstones than
 * its tombstone_failure_threshold?  (The v5 reason map, or on v4 the
 * server's message, which names the reason.)
 */
extern bool cql_error_is_tombstone_failure(const struct cql_error *e);

/* ---------------------------------------------------------------------
 * Murmur3 partitioner - cql_murmur3.c
 * ---------------------------------------------------------------------
 */

/* Cassandra's MurmurHash3 x64-128 first half (signed-tail-byte quirk). */
extern int64_t cql_murmur3_h1(const uint8_t *key, size_t len);

/*
 * Token of a routing key: INT64_MIN for an empty key, otherwise h1 with
 * INT64_MIN normalised to INT64_MAX.
 */
extern int64_t cql_murmur3_token(const uint8_t *key, size_t len);

/*
 * Append the composite routing key of n partition-key components
 * ([u16 len][bytes][0x00] each).  A null/unset component (n < 0) gives
 * CQL_ERR_INVALID_ARG (no routing key), one over 65535 bytes
 * CQL_ERR_TOO_LARGE; nothing is appended on error.
 */
extern cql_status cql_routing_key_composite(cql_buf *out, const cql_elem *parts, int n);

/* ---------------------------------------------------------------------
 * Request bodies - cql_request.c
 *
 * Each cql_write_* appends the BODY of one request (wrap it with
 * cql_envelope_begin/end).  Arguments are validated before anything is
 * written; on error nothing useful is appended and the status says why.
 * ---------------------------------------------------------------------
 */
typedef struct cql_value_ref
{
	const uint8_t *p;
	int32_t		n;				/* >= 0 content length, or CQL_VALUE_* */
} cql_value_ref;

#define CQL_VALUE_NULL			(-1)
#define CQL_VALUE_UNSET			(-2)	/* v4+ only */

#define CQL_NO_TIMESTAMP		INT64_MIN

typedef struct cql_query_params
{
	uint16_t	consistency;	/* CQL_CONSISTENCY_* */
	uint16_t	serial_consistency;	/* 0 = none (else SERIAL/LOCAL_SERIAL) */
	int32_t		page_size;		/* 0 = no paging */
	const uint8_t *paging_state;	/* NULL = none */
	int32_t		paging_state_len;
	int64_t		default_timestamp;	/* CQL_NO_TIMESTAMP = none (microseconds) */
	bool		skip_metadata;
	const char *keyspace;		/* v5 only; NULL = none */
	int			nvalues;
	const cql_value_ref *values;
	const char *const *value_names; /* optional: names for values */
	int32_t		now_in_seconds; /* v5 only; 0 = none */
} cql_query_params;

/*
 * Initialise with defaults (ONE, no paging, no timestamp).  Use this (or
 * CQL_QUERY_PARAMS_INIT) rather than a zero fill: 0 is a valid timestamp.
 */
extern void cql_query_params_init(cql_query_params *p);

#define CQL_QUERY_PARAMS_INIT \
	{ CQL_CONSISTENCY_ONE, 0, 0, NULL, 0, CQL_NO_TIMESTAMP, false, NULL, 0, NULL, NULL, 0 }

/* STARTUP: [string map] of n key/value pairs */
extern cql_status cql_write_startup(cql_buf *b, const char *const *keys,
									const char *const *values, int n);

/* OPTIONS: empty body (provided for symmetry; appends nothing) */
extern cql_status cql_write_options(cql_buf *b);

/* AUTH_RESPONSE: [bytes] token (n = -1 for a null token) */
extern cql_status cql_write_auth_response(cql_buf *b, const uint8_t *token, int32_t n);

/* SASL PLAIN token "\0user\0password" (appended, no [bytes] length) */
extern cql_status cql_sasl_plain_token(cql_buf *out, const char *user, const char *password);

/* REGISTER: [string list] of event types */
extern cql_status cql_write_register(cql_buf *b, const char *const *events, int n);

/* QUERY: [long string] query + query parameters */
extern cql_status cql_write_query(cql_buf *b, int version, const char *query,
								  const cql_query_params *params);

/* PREPARE: v4 query only; v5 adds [int] flags and optional keyspace */
extern cql_status cql_write_prepare(cql_buf *b, int version, const char *query,
									const char *keyspace);

/* EXECUTE: id, (v5: result_metadata_id, mandatory), query parameters */
extern cql_status cql_write_execute(cql_buf *b, int version,
									const uint8_t *id, uint16_t id_len,
									const uint8_t *result_metadata_id,
									uint16_t result_metadata_id_len,
									const cql_query_params *params);

/* One statement of a BATCH: a query string (query != NULL) or a prepared id */
typedef struct cql_batch_stmt
{
	const char *query;
	const uint8_t *id;
	uint16_t	id_len;
	int			nvalues;
	const cql_value_ref *values;
} cql_batch_stmt;

/*
 * BATCH.  From params only consistency, serial_consistency,
 * default_timestamp, keyspace (v5) and now_in_seconds (v5) are used.
 */
extern cql_status cql_write_batch(cql_buf *b, int version, uint8_t batch_type,
								  const cql_batch_stmt *stmts, int nstmts,
								  const cql_query_params *params);

/* ---------------------------------------------------------------------
 * Responses - cql_response.c
 * ---------------------------------------------------------------------
 */

/*
 * The optional prefixes of a response body (tracing id, warnings, custom
 * payload), stripped by cql_response_strip().
 */
typedef struct cql_response_extras
{
	bool		has_tracing_id;
	uint8_t		tracing_id[16];
	int			nwarnings;
	char	  **warnings;		/* allocated, NUL-terminated */
	int			ncustom;		/* entries of the custom payload */
	const uint8_t *custom_payload;	/* borrowed raw [bytes map], or NULL */
	size_t		custom_payload_len;
} cql_response_extras;

/*
 * Parse the prefixes announced by 'flags'; *msg_offset gets the offset of
 * the message proper in body.  Free with cql_response_extras_free.
 */
extern cql_status cql_response_strip(const uint8_t *body, size_t n, uint8_t flags,
									 const cql_allocator *a,
									 cql_response_extras *ex, size_t *msg_offset);
extern void cql_response_extras_free(cql_response_extras *ex, const cql_allocator *a);

/* ERROR ----------------------------------------------------------------*/
#define CQL_ERROR_MAX_REASONS	8

typedef struct cql_failure_reason
{
	uint8_t		addr[16];
	uint8_t		addr_len;		/* 4 or 16 */
	uint16_t	code;			/* RequestFailureReason */
} cql_failure_reason;

/*
 * An error, from the server (code/message/fields decoded from ERROR) or
 * local (status set by the library or connection layer, code = -1).
 * Entirely fixed-size: strings are NUL-terminated and truncated to fit,
 * nothing to free.  Fields not carried by the error code stay zero/empty
 * (contentions: -1 when absent).
 */
typedef struct cql_error
{
	cql_status	status;			/* CQL_ERR_SERVER for server errors */
	int32_t		code;			/* CQL_ERRCODE_*, -1 if not a server error */
	char		message[512];
	char		host[64];		/* filled by the connection layer */
	int			sys_errno;		/* filled by the connection layer for IO */

	uint16_t	consistency;
	int32_t		received;
	int32_t		blockfor;		/* also 'required' of Unavailable */
	int32_t		alive;			/* Unavailable */
	char		write_type[32]; /* Write_timeout, Write_failure */
	bool		data_present;	/* Read_timeout, Read_failure */
	int32_t		numfailures;	/* v4; in v5 the reason-map count */
	int32_t		nreasons;		/* v5 reason map entries (full count) */
	cql_failure_reason reasons[CQL_ERROR_MAX_REASONS];	/* first entries */
	int32_t		contentions;	/* v5 CAS Write_timeout; -1 if absent */
	char		keyspace[256];	/* Already_exists, Function_failure */
	char		table[256];		/* Already_exists ("" for a keyspace) */
	char		function[256];	/* Function_failure */
	int32_t		nargs;			/* Function_failure arg types... */
	char		arg_types[512]; /* ...joined with ", " */
	uint8_t		unprepared_id[64];	/* Unprepared */
	uint16_t	unprepared_id_len;	/* real length (copy truncated to 64) */
} cql_error;

/* Reset to "no error" (status CQL_OK, code -1, empty strings). */
extern void cql_error_clear(cql_error *e);

/* Set a local error: status, code -1, printf-style message. */
extern void cql_error_setf(cql_error *e, cql_status st, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/*
 * Decode an ERROR message body (prefixes already stripped).  On success
 * err->status = CQL_ERR_SERVER and the return value is CQL_OK; a body that
 * cannot be decoded returns MALFORMED/TRUNCATED (err then holds what could
 * be read).  err->host is left untouched.
 */
extern cql_status cql_decode_error(const uint8_t *p, size_t n, int version, cql_error *err);

/* AUTHENTICATE: authenticator class name (allocated) */
extern cql_status cql_decode_authenticate(const uint8_t *p, size_t n,
										  const cql_allocator *a, char **class_name);

/* AUTH_CHALLENGE / AUTH_SUCCESS: token borrowed from p (n = -1 if null) */
extern cql_status cql_decode_auth_token(const uint8_t *p, size_t n,
										const uint8_t **token, int32_t *token_len);

/* READY: must be empty (trailing bytes are tolerated) */
extern cql_status cql_decode_ready(const uint8_t *p, size_t n);

/* SUPPORTED ---------------------------------------------------------*/
typedef struct cql_supported_entry
{
	char	   *key;
	int			nvalues;
	char	  **values;
} cql_supported_entry;

typedef struct cql_supported
{
	int			n;
	cql_supported_entry *entries;
} cql_supported;

extern cql_status cql_decode_supported(const uint8_t *p, size_t n,
									   const cql_allocator *a, cql_supported *out);
/* entry for key (case-sensitive), NULL if absent */
extern const cql_supported_entry *cql_supported_get(const cql_supported *s, const char *key);
/* does key list value (value compared case-insensitively)? */
extern bool cql_supported_has(const cql_supported *s, const char *key, const char *value);
extern void cql_supported_free(cql_supported *s, const cql_allocator *a);

/* SCHEMA_CHANGE (event and result) ------------------------------------*/
typedef struct cql_schema_change
{
	char	   *change;			/* CREATED / UPDATED / DROPPED */
	char	   *target;			/* KEYSPACE / TABLE / TYPE / FUNCTION / AGGREGATE */
	char	   *keyspace;
	char	   *name;			/* NULL for KEYSPACE */
	int			nargs;			/* FUNCTION / AGGREGATE */
	char	  **args;
} cql_schema_change;

extern void cql_schema_change_free(cql_schema_change *sc, const cql_allocator *a);

/* EVENT -------------------------------------------------------------*/
typedef enum cql_event_type
{
	CQL_EVENT_TOPOLOGY_CHANGE = 1,
	CQL_EVENT_STATUS_CHANGE = 2,
	CQL_EVENT_SCHEMA_CHANGE = 3
} cql_event_type;

typedef struct cql_event
{
	cql_event_type type;
	char	   *change;			/* NEW_NODE/REMOVED_NODE/UP/DOWN (topology,
								 * status); schema events use schema.change */
	uint8_t		addr[16];		/* topology/status: node address */
	uint8_t		addr_len;		/* 4 or 16 */
	int32_t		port;
	cql_schema_change schema;	/* SCHEMA_CHANGE */
} cql_event;

extern cql_status cql_decode_event(const uint8_t *p, size_t n,
								   const cql_allocator *a, cql_event *ev);
extern void cql_event_free(cql_event *ev, const cql_allocator *a);

/* RESULT ------------------------------------------------------------*/
typedef struct cql_column
{
	char	   *keyspace;
	char	   *table;
	char	   *name;
	cql_type   *type;
} cql_column;

/* Rows metadata (also the result metadata of a Prepared result) */
typedef struct cql_rows_metadata
{
	int32_t		flags;			/* CQL_ROWS_* */
	int32_t		ncols;
	cql_column *cols;			/* ncols entries, or the caller's cached
								 * columns / NULL under NO_METADATA */
	bool		cols_borrowed;	/* cols belong to the caller */
	uint8_t    *paging_state;	/* copy, NULL if no more pages */
	int32_t		paging_state_len;
	bool		has_new_metadata_id;	/* v5 METADATA_CHANGED */
	uint8_t    *new_metadata_id;
	uint16_t	new_metadata_id_len;
} cql_rows_metadata;

/* Bind-marker metadata of a Prepared result */
typedef struct cql_prepared_metadata
{
	int32_t		flags;
	int32_t		ncols;			/* number of bind markers */
	cql_column *cols;
	int32_t		npk;			/* partition-key components bound */
	uint16_t   *pk_indexes;		/* npk bind-marker indexes */
} cql_prepared_metadata;

typedef struct cql_result
{
	int32_t		kind;			/* CQL_RESULT_* */
	const cql_allocator *alloc;
	uint8_t    *body;			/* owned copy of the envelope body */
	size_t		body_len;
	cql_response_extras extras; /* tracing id, warnings */

	char	   *keyspace;		/* Set_keyspace */
	cql_schema_change schema;	/* Schema_change */

	/* Prepared */
	uint8_t    *prepared_id;
	uint16_t	prepared_id_len;
	uint8_t    *result_metadata_id;	/* v5 */
	uint16_t	result_metadata_id_len;
	cql_prepared_metadata bind;

	/* Rows (and the result metadata of Prepared) */
	cql_rows_metadata meta;
	int32_t		rows_count;
	cql_elem   *cells;			/* rows_count * meta.ncols cells, row-major,
								 * pointing into body; n = -1 for null */
} cql_result;

/*
 * Decode a RESULT envelope body (with its prefixes, announced by 'flags').
 * The body is copied; the _take variant instead takes ownership of 'body'
 * (allocated with 'a'), freeing it even on failure.  'cached'/'ncached' are
 * the column specs to use when a Rows result has NO_METADATA (may be NULL:
 * then meta.cols is NULL but cells are still indexed); they are referenced,
 * not copied, so they must outlive the result.  On failure the result is
 * left freed (safe to call cql_result_free again).
 */
extern cql_status cql_decode_result(cql_result *res, int version, uint8_t flags,
									const uint8_t *body, size_t n,
									const cql_allocator *a,
									const cql_column *cached, int ncached);
extern cql_status cql_decode_result_take(cql_result *res, int version, uint8_t flags,
										 uint8_t *body, size_t n,
										 const cql_allocator *a,
										 const cql_column *cached, int ncached);
extern void cql_result_free(cql_result *res);

/*
 * Shape of a decoded Rows result.  The decoder keeps it self-consistent:
 * every row has exactly meta.ncols cells (cells holds rows_count *
 * meta.ncols entries, NULL when that is 0), whatever the server said
 * before or what a prepared statement has cached.  But meta.ncols is the
 * SERVER's column count: it can be smaller or larger than what the caller
 * expects (a hostile or confused node, metadata changed mid-scan, a Rows
 * answer with ncols = 0), and meta.cols is NULL when a NO_METADATA answer
 * came without cached columns.  A consumer that reads cells by its own
 * column count must check the shape first, for every result/page:
 *
 * cql_result_has_columns(res, ncols): true iff res is a Rows result whose
 * rows carry exactly ncols cells each and whose column specs are known
 * (meta.cols != NULL when ncols > 0).  Then cql_result_cell(res, r, c) is
 * valid for every 0 <= r < rows_count, 0 <= c < ncols, and
 * meta.cols[0 .. ncols-1] may be read.
 *
 * cql_result_check_columns(res, ncols, err): the same check as a status:
 * CQL_OK, or CQL_ERR_MALFORMED with a message giving both counts.
 */
static inline bool
cql_result_has_columns(const cql_result *res, int32_t ncols)
{
	return res != NULL && res->kind == CQL_RESULT_ROWS && ncols >= 0 &&
		res->meta.ncols == ncols && res->rows_count >= 0 &&
		(ncols == 0 || res->meta.cols != NULL) &&
		(ncols == 0 || res->rows_count == 0 || res->cells != NULL);
}

extern cql_status cql_result_check_columns(const cql_result *res, int32_t ncols,
										   cql_error *err);

/*
 * Cell (row, col) of a Rows result, or NULL when (row, col) is outside the
 * result: row < 0 or >= rows_count, col < 0 or >= meta.ncols (never an
 * out-of-bounds read).  Check the shape first (above) rather than relying
 * on NULL here.
 */
static inline const cql_elem *
cql_result_cell(const cql_result *res, int32_t row, int32_t col)
{
	if (res == NULL || res->cells == NULL || row < 0 || col < 0 ||
		row >= res->rows_count || col >= res->meta.ncols)
		return NULL;
	return &res->cells[(size_t) row * (size_t) res->meta.ncols + (size_t) col];
}

/* Free an array of columns allocated by the decoder (deep). */
extern void cql_columns_free(cql_column *cols, int32_t n, const cql_allocator *a);
/* Deep copy of column specs (e.g. to cache a Prepared result's metadata). */
extern cql_status cql_columns_copy(const cql_column *cols, int32_t n,
								   const cql_allocator *a, cql_column **out);

#endif							/* CQL_WIRE_H */

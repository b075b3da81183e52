/*-------------------------------------------------------------------------
 *
 * cql_conn.h
 *		One connection to one Cassandra node: non-blocking socket, the
 *		STARTUP/auth handshake, many requests in flight matched by stream
 *		id, synchronous helpers, prepared statements and paging.
 *
 * Threading: a cql_conn is used by one thread at a time.
 *
 * Waiting: the library never blocks in the kernel except in getaddrinfo()
 * (pass numeric addresses to avoid DNS).  Every wait goes through the
 * caller's wait hook, which returns CQL_OK when the socket may be ready
 * (spurious wakeups are fine), CQL_ERR_TIMEOUT, or CQL_ERR_INTERRUPTED.
 *
 * Interrupts and timeouts: when the hook returns CQL_ERR_INTERRUPTED (or a
 * request's deadline passes) the call returns promptly with that status and
 * the connection STAYS USABLE: the request is still in flight and keeps its
 * stream id.  The caller may await it again, or free it with
 * cql_request_free(), which orphans it: its late response is drained and
 * discarded by later I/O on the connection, and only then is the stream id
 * reused, so responses can never be matched to the wrong request.  Bytes of
 * a request that were only partly written stay queued and are completed by
 * the next I/O.  The synchronous helpers orphan their request themselves.
 * (An interrupt during cql_connect() simply fails the connect.)
 *
 * Broken connections: a transport or protocol failure (peer closed, I/O
 * error, garbage bytes, CRC or size violations) marks the connection
 * broken: every request in flight completes with that status and every
 * later call returns CQL_ERR_STATE, with the original reason in the
 * message.  The caller closes it and opens a new one.
 *
 * IDENTIFICATION
 *		src/cql/cql_conn.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_CONN_H
#define CQL_CONN_H

#include "cql_core.h"
#include "cql_types.h"
#include "cql_wire.h"

/* Events for the wait hook */
#define CQL_WAIT_READ	0x01
#define CQL_WAIT_WRITE	0x02

typedef cql_status (*cql_wait_fn) (void *ctx, int fd, int events, int timeout_ms);

/* Default wait hook: poll() on the socket (tools and tests). */
extern cql_status cql_wait_poll(void *ctx, int fd, int events, int timeout_ms);

typedef enum cql_compression
{
	CQL_COMPRESSION_NONE = 0,
	CQL_COMPRESSION_LZ4 = 1		/* v4: LZ4 bodies; v5: LZ4 frame format */
} cql_compression;

/*
 * Server-pushed EVENT (stream -1).  'ev' and everything it points to is
 * valid during the call only.
 */
typedef void (*cql_event_fn) (void *ctx, const cql_event *ev);

/*
 * Descriptor budget of the caller: called with acquire = true before a
 * connection opens its socket (return false to refuse: the connect fails
 * with CQL_ERR_CONNECT, "too many open files") and with acquire = false
 * once when a connection that acquired closes.  A PostgreSQL backend
 * answers with AcquireExternalFD/ReleaseExternalFD, so that sockets count
 * against max_files_per_process like libpq's.
 */
typedef bool (*cql_fd_fn) (void *ctx, bool acquire);

/*
 * TLS (cql_tls.c, OpenSSL).  sslmode as in libpq: require = encrypted, the
 * certificate is not checked unless rootcert is given (then as verify-ca);
 * verify-ca = the chain must lead to rootcert; verify-full = also the host
 * name or IP address connected to must be in the certificate.  TLS 1.2 or
 * later.  One context per configuration, shared by all the connections
 * using it; it must outlive them.
 */
typedef enum cql_ssl_mode
{
	CQL_SSL_DISABLE = 0,
	CQL_SSL_REQUIRE,
	CQL_SSL_VERIFY_CA,
	CQL_SSL_VERIFY_FULL
} cql_ssl_mode;

typedef struct cql_tls_config
{
	cql_ssl_mode mode;
	const char *rootcert;		/* CA certificates (PEM file) */
	const char *cert;			/* client certificate chain (PEM), mutual TLS */
	const char *key;			/* its private key (PEM) */
	const char *key_password;	/* for an encrypted key; not kept */
	const cql_allocator *alloc; /* NULL = malloc */
} cql_tls_config;

typedef struct cql_tls_context cql_tls_context;

/* "disable", "require", "verify-ca", "verify-full" */
extern cql_status cql_ssl_mode_parse(const char *s, cql_ssl_mode *out);
extern const char *cql_ssl_mode_name(cql_ssl_mode m);

/*
 * Build a context: files are read now.  Errors (CQL_ERR_TLS,
 * CQL_ERR_INVALID_ARG) name the option (sslrootcert, sslcert, sslkey) and
 * the reason, never file contents or the passphrase.
 */
extern cql_status cql_tls_context_new(const cql_tls_config *cfg, cql_tls_context **out,
									  cql_error *err);
extern void cql_tls_context_free(cql_tls_context *t);

typedef struct cql_conn_options
{
	const char *host;			/* name or numeric address */
	int			port;			/* 0 = 9042 */
	int			protocol_version;	/* 0 = auto (v5, falling back to v4), 4, 5 */
	cql_compression compression;
	const char *username;		/* NULL = no credentials */
	const char *password;
	int			connect_timeout_ms; /* TCP connect + handshake; 0 = 10000 */
	int			request_timeout_ms; /* per request; 0 = 12000, < 0 = none */
	const char *keyspace;		/* optional: USE after connecting */
	const char *driver_name;	/* STARTUP DRIVER_NAME (NULL = "cql_fdw") */
	const char *driver_version; /* STARTUP DRIVER_VERSION */
	/*
	 * STARTUP APPLICATION_NAME, APPLICATION_VERSION and CLIENT_ID (a UUID
	 * in text form), as the DataStax drivers send them; Cassandra shows them
	 * in system_views.clients.  NULL or "" = not sent.
	 */
	const char *application_name;
	const char *application_version;
	const char *client_id;
	const cql_allocator *alloc; /* NULL = malloc */
	cql_wait_fn wait;			/* NULL = cql_wait_poll */
	void	   *wait_ctx;
	int			max_in_flight;	/* stream ids 0..max-1; 0 = 1024, <= 32768 */
	/*
	 * max_body: largest response body accepted; 0 = 256 MB (the protocol
	 * cap; larger values are capped to it), any smaller value is honoured.
	 * A response claiming more breaks the connection with
	 * CQL_ERR_TOO_LARGE ("invalid data or a response too large: ...
	 * larger than the limit of N bytes (max_body)"): a length is all the
	 * client sees, garbage and an oversized page look the same.  Memory follows the bytes really received, never a
	 * claimed length; a decoded Rows result costs about its body plus 16
	 * bytes per cell, so max_body bounds the memory of one response.
	 */
	size_t		max_body;
	cql_event_fn on_event;		/* NULL: events are dropped */
	void	   *event_ctx;
	cql_fd_fn	fd_budget;		/* NULL: no accounting */
	void	   *fd_budget_ctx;

	/*
	 * require_auth: the server must ask for authentication (answer STARTUP
	 * with AUTHENTICATE).  A server that answers READY is refused with
	 * CQL_ERR_AUTH ("did not ask for authentication"), so credentials can
	 * never silently be skipped, e.g. by a node that a hostile peer list
	 * points at.  Default false.
	 */
	bool		require_auth;

	/*
	 * tls: NULL = plaintext.  The handshake follows the TCP connect
	 * (CQL_ERR_TLS on failure: certificate, protocol, refused client).
	 * tls_server_name: name for SNI and verify-full (NULL = host).
	 */
	const cql_tls_context *tls;
	const char *tls_server_name;
} cql_conn_options;

/* Zero everything and set the defaults documented above. */
extern void cql_conn_options_init(cql_conn_options *o);

typedef struct cql_conn cql_conn;
typedef struct cql_request cql_request;

/*
 * Open a connection: TCP connect, OPTIONS/SUPPORTED, STARTUP, optional
 * authentication, optional USE.  Failures fill err (status, message, host
 * "addr:port"; the password never appears):
 *	CQL_ERR_RESOLVE/CONNECT/TIMEOUT/INTERRUPTED/IO/CLOSED: transport
 *	CQL_ERR_PROTOCOL_VERSION: the server refused the version asked for
 *	CQL_ERR_AUTH: bad credentials (server message kept), credentials
 *		required but not given, or require_auth set and the server did not
 *		ask for authentication
 *	CQL_ERR_UNSUPPORTED: lz4 asked for but not offered by the server
 *	CQL_ERR_SERVER: an ERROR answer to USE, etc.
 */
extern cql_status cql_connect(const cql_conn_options *o, cql_conn **out, cql_error *err);

/* Close the socket and free everything, including orphaned requests and
 * prepared statements.  Requests the caller still holds may (only) be
 * passed to cql_request_free afterwards. */
extern void cql_conn_close(cql_conn *c);

/* ---------------------------------------------------------------------
 * Connection info
 * ---------------------------------------------------------------------
 */
extern int	cql_conn_protocol_version(const cql_conn *c);
extern cql_compression cql_conn_compression(const cql_conn *c);
extern const cql_supported *cql_conn_supported(const cql_conn *c);	/* SUPPORTED */
extern int	cql_conn_fd(const cql_conn *c);
extern const char *cql_conn_host(const cql_conn *c);	/* as given */
extern int	cql_conn_port(const cql_conn *c);
extern const char *cql_conn_peer(const cql_conn *c);	/* "addr:port" */
extern const cql_allocator *cql_conn_allocator(const cql_conn *c);
/* Did the server ask for authentication (AUTHENTICATE) at STARTUP? */
extern bool cql_conn_authenticated(const cql_conn *c);
/* Authenticator class name announced by the server, or NULL. */
extern const char *cql_conn_authenticator(const cql_conn *c);
/* CQL_OK while usable; otherwise the status that broke it. */
extern cql_status cql_conn_status(const cql_conn *c);
/* Requests currently holding a stream id (including orphans). */
extern int	cql_conn_in_flight(const cql_conn *c);
/* Milliseconds since bytes were last received (or since connecting). */
extern int64_t cql_conn_idle_ms(const cql_conn *c);

/*
 * Mark a connection broken on the caller's decision (e.g. a peer that no
 * longer answers): every request in flight completes at once with st and
 * the reason; later calls return CQL_ERR_STATE.  No-op when already broken.
 */
extern void cql_conn_abort(cql_conn *c, cql_status st, const char *reason);
/* Keyspace of the last successful USE (NULL if none). */
extern const char *cql_conn_keyspace(const cql_conn *c);
extern void cql_conn_set_request_timeout(cql_conn *c, int timeout_ms);
extern int	cql_conn_request_timeout(const cql_conn *c);

/* ---------------------------------------------------------------------
 * Asynchronous requests
 * ---------------------------------------------------------------------
 */

/*
 * Queue a request with an already built body and try to send it without
 * waiting.  When all stream ids are taken it pumps I/O until one frees up
 * (CQL_ERR_BUSY if none does within the request timeout; TIMEOUT or
 * INTERRUPTED from the wait hook are passed on).  CQL_ERR_STATE on a
 * broken connection.  The request's deadline is now + request timeout.
 */
extern cql_status cql_conn_submit(cql_conn *c, uint8_t opcode, const cql_buf *body,
								  cql_request **req, cql_error *err);

/* Typed senders: build the body for the negotiated version and submit. */
extern cql_status cql_send_query(cql_conn *c, const char *query,
								 const cql_query_params *params,
								 cql_request **req, cql_error *err);
extern cql_status cql_send_prepare(cql_conn *c, const char *query,
								   cql_request **req, cql_error *err);

typedef struct cql_prepared cql_prepared;

/*
 * EXECUTE a prepared statement.  SKIP_METADATA is set when result columns
 * are cached; the result of the await is decoded with the columns cached
 * at send time.  The prepared statement must stay alive (it does while the
 * connection is open).
 */
extern cql_status cql_send_execute(cql_conn *c, cql_prepared *p,
								   const cql_query_params *params,
								   cql_request **req, cql_error *err);
extern cql_status cql_send_batch(cql_conn *c, uint8_t batch_type,
								 const cql_batch_stmt *stmts, int nstmts,
								 const cql_query_params *params,
								 cql_request **req, cql_error *err);

/*
 * Asynchronous BATCH of nrows executions of the prepared statement p;
 * rows[i] points to the nvalues bound values of execution i (e.g. the rows
 * of one partition).  Like cql_send_execute, an Unprepared answer is
 * recovered inside cql_conn_await: p is prepared again and the identical
 * batch is resent once (a statement id is a hash of the statement text,
 * so it survives the re-prepare; if it does not, the error is returned).
 */
extern cql_status cql_send_prepared_batch(cql_conn *c, uint8_t batch_type,
										  cql_prepared *p,
										  const cql_value_ref *const *rows,
										  int nrows, int nvalues,
										  const cql_query_params *params,
										  cql_request **req, cql_error *err);

/*
 * Pump I/O until 'req' completes, its deadline passes (CQL_ERR_TIMEOUT) or
 * the wait hook says CQL_ERR_INTERRUPTED.  Responses to other requests
 * arriving meanwhile are stored on them.  On a RESULT, *res is filled
 * (free it with cql_result_free); on an ERROR, CQL_ERR_SERVER and err has
 * every field.  For an EXECUTE, Rows metadata changes are applied to the
 * prepared statement.  After completion (success or not) the request may
 * only be freed.  res may be NULL (result discarded).
 */
extern cql_status cql_conn_await(cql_conn *c, cql_request *req,
								 cql_result *res, cql_error *err);

/*
 * Like cql_conn_await but hands out the raw response (any opcode), e.g.
 * SUPPORTED for OPTIONS or READY for REGISTER.  The body (prefixes not
 * stripped, flags say which are present) stays owned by the request.
 */
extern cql_status cql_conn_await_raw(cql_conn *c, cql_request *req,
									 uint8_t *opcode, uint8_t *flags,
									 const uint8_t **body, size_t *len,
									 cql_error *err);

/*
 * Make progress without blocking longer than timeout_ms (0 = just do what
 * is possible now, < 0 = wait until something arrives): flush queued
 * bytes, read and dispatch responses and events.  Returns CQL_OK also when
 * nothing happened.
 */
extern cql_status cql_conn_pump(cql_conn *c, int timeout_ms, cql_error *err);

/*
 * Pump until no request is in flight (orphans included) or timeout_ms
 * passes (CQL_ERR_TIMEOUT): e.g. at the end of a transaction, to know the
 * connection is quiet before reusing it; on timeout, closing it is the
 * safe choice.
 */
extern cql_status cql_conn_settle(cql_conn *c, int timeout_ms, cql_error *err);

/*
 * Cork the connection: submitted requests are queued instead of written at
 * once, and go out when CQL_CORK_FLUSH_BYTES have gathered, when the caller
 * waits (await, pump) or uncorks.  Many small requests (a bulk insert) then
 * take a few large writes and, in v5, a few frames instead of one system
 * call each.  Uncorking flushes.
 */
#define CQL_CORK_FLUSH_BYTES	(64 * 1024)
extern void cql_conn_cork(cql_conn *c, bool on);

extern bool cql_request_done(const cql_request *req);

/*
 * For a caller that waits on several connections at once (a poll of their
 * cql_conn_fd): the events (CQL_WAIT_READ, CQL_WAIT_WRITE) to wait for
 * before pumping this one again, or 0 when it must be pumped now without
 * waiting - responses already decoded or TLS records already buffered, or
 * the connection is broken (the pump reports why).
 */
extern int	cql_conn_wait_events(const cql_conn *c);

/*
 * Milliseconds left before a pending request's deadline (the connection's
 * request timeout): -1 when it has none or is done, 0 when it has passed.
 * A caller waiting on several requests at once (pumping their
 * connections) bounds its wait by the smallest, then awaits the expired
 * one, which fails at once with CQL_ERR_TIMEOUT.
 */
extern int	cql_request_remaining_ms(const cql_request *req);

/*
 * After cql_conn_await of an EXECUTE failed with CQL_ERR_MALFORMED: was it
 * because the server (v4) skipped result metadata that no longer matches
 * the cached columns?  Then re-prepare (cql_reprepare) and retry;
 * cql_execute does this itself.
 */
extern bool cql_request_metadata_stale(const cql_request *req);
extern int16_t cql_request_stream(const cql_request *req);

/* ---------------------------------------------------------------------
 * Retries (cql_retry.c).  The policy decides; the caller counts tries,
 * keeps a deadline, picks the next host (cql_cluster_conn_avoiding) and
 * resends.
 * ---------------------------------------------------------------------
 */
typedef enum cql_retry_decision
{
	CQL_RETRY_NO = 0,			/* return the error to the user */
	CQL_RETRY_SAME_HOST,		/* send it again on the same connection */
	CQL_RETRY_NEXT_HOST			/* send it to the next host of the plan */
} cql_retry_decision;

/*
 * The drivers' rules (see cql_retry.c): what a failure with st/err means
 * for a request that was retried 'tries' times before.  'idempotent': a
 * read, or a write whose replay changes nothing (client-timestamped
 * upsert or delete); never counters, IF conditions or list appends.
 */
extern cql_retry_decision cql_retry_decide(cql_status st, const cql_error *err,
										   bool idempotent, int tries);
extern const char *cql_retry_decision_name(cql_retry_decision d);

/*
 * Send a failed EXECUTE (or BATCH of one prepared statement) again on
 * another connection 'to', where its statement is prepared as p: same
 * values, consistency and write timestamp.  The failed request must not
 * have been freed yet.  CQL_ERR_UNSUPPORTED if it cannot be replayed there.
 */
extern cql_status cql_send_again(cql_conn *to, cql_prepared *p,
								 const cql_request *failed,
								 cql_request **req, cql_error *err);

/* Free a request; a request still in flight is orphaned (see header). */
extern void cql_request_free(cql_request *req);

/* ---------------------------------------------------------------------
 * Synchronous helpers.  'params' may be NULL (consistency ONE, no paging).
 * Each fills *res (free with cql_result_free) and err.
 * ---------------------------------------------------------------------
 */
extern cql_status cql_query(cql_conn *c, const char *query,
							const cql_query_params *params,
							cql_result *res, cql_error *err);

/* ---------------------------------------------------------------------
 * Prepared statements.  cql_prepare() looks the text up in the
 * connection's cache first; a cql_prepared is owned by the connection and
 * valid until it is closed or trimmed (cql_conn_trim_prepared below).
 * Re-preparing (after Unprepared) updates it in place.
 * ---------------------------------------------------------------------
 */
struct cql_prepared
{
	char	   *query;
	uint8_t    *id;
	uint16_t	id_len;
	uint8_t    *result_metadata_id; /* v5 */
	uint16_t	result_metadata_id_len;
	int32_t		nbind;			/* bind markers */
	cql_column *bind;
	int32_t		npk;			/* partition-key components bound */
	uint16_t   *pk_indexes;
	int32_t		ncols;			/* result columns (0 for non-SELECT) */
	cql_column *cols;
	int			reprepares;		/* times re-prepared after Unprepared */
	int			metadata_changes;	/* result metadata replacements */
	/* private */
	struct cql_prepared *next;
	struct cql_retired_cols *retired;
	int			nretired;		/* entries on 'retired' */
	uint64_t	last_used;		/* connection clock at the last prepare or
								 * execute (least recently used trimming) */
	bool		evicted;		/* dropped from the lookup cache */
	char	   *keyspace;		/* USE keyspace when prepared (NULL: none):
								 * part of the cache key, since unqualified
								 * names resolve against it */
};

extern cql_status cql_prepare(cql_conn *c, const char *query,
							  cql_prepared **out, cql_error *err);

/* Force a new PREPARE of p's text and update p (ids, bind and columns). */
extern cql_status cql_reprepare(cql_conn *c, cql_prepared *p, cql_error *err);

/*
 * EXECUTE with SKIP_METADATA and the cached result metadata; applies
 * METADATA_CHANGED (v5) and full metadata (v4); on ERROR Unprepared
 * re-prepares and retries exactly once.
 */
extern cql_status cql_execute(cql_conn *c, cql_prepared *p,
							  const cql_query_params *params,
							  cql_result *res, cql_error *err);

/* Make cql_prepare() forget every cached statement (the next call
 * prepares again).  Pointers handed out earlier stay valid until the
 * connection closes or cql_conn_trim_prepared() frees them. */
extern void cql_prepared_cache_clear(cql_conn *c);

/*
 * Bounding the prepared-statement cache.  Entries are never freed behind
 * the caller's back, because callers hold cql_prepared pointers while a
 * statement runs (a scan over many pages, writes batched until commit)
 * and results decoded under SKIP_METADATA borrow the statement's cached
 * column array (so do results decoded with columns since replaced: those
 * arrays are kept on a "retired" list).  The cache therefore grows until
 * the caller says it is safe to shrink it:
 *
 * cql_conn_trim_prepared(c, max_entries) frees every statement dropped by
 * cql_prepared_cache_clear(), every retired column array, and then the
 * least recently used statements (by cql_prepare/cql_send_execute/
 * cql_send_prepared_batch) until at most max_entries remain (0 = free
 * all).  Returns how many statements it freed.
 *
 * CONTRACT: call it only when no cql_prepared pointer obtained from this
 * connection will be used again (any may be freed: prepare again), no
 * cql_result of an EXECUTE on this connection (including pager pages) is
 * still alive, and no cql_pager over a prepared statement of this
 * connection will be continued.  Statements of requests still in flight
 * (not yet answered, also orphans) are kept with their columns, so
 * pipelined requests need not be drained first, but their results must
 * not outlive a later trim.  For a PostgreSQL backend: at the end of the
 * (sub)transaction, after every scan and modify state has been closed.
 *
 * Between trims the retired list of one statement is capped at
 * CQL_PREPARED_MAX_RETIRED arrays: past it, full metadata from the server
 * is still used for each result but no longer adopted as the cache, and
 * a re-prepare fails with CQL_ERR_TOO_LARGE (trim, or reconnect).
 */
#define CQL_PREPARED_MAX_RETIRED	64
extern int	cql_conn_trim_prepared(cql_conn *c, int max_entries);

/* Statements held by the connection (cached or dropped, not yet freed). */
extern int	cql_conn_prepared_count(const cql_conn *c);

/*
 * BATCH (CQL_BATCH_LOGGED/UNLOGGED/COUNTER).  Statements refer to query
 * text or prepared ids (fill with cql_batch_stmt_prepared).  An Unprepared
 * error for a statement prepared on this connection re-prepares it and
 * retries once; the re-prepare replaces the statement's id, so statements
 * filled before the call must be filled again for later batches.
 */
extern cql_status cql_batch(cql_conn *c, uint8_t batch_type,
							const cql_batch_stmt *stmts, int nstmts,
							const cql_query_params *params,
							cql_result *res, cql_error *err);
extern void cql_batch_stmt_prepared(cql_batch_stmt *s, const cql_prepared *p,
									const cql_value_ref *values, int nvalues);
extern void cql_batch_stmt_query(cql_batch_stmt *s, const char *query,
								 const cql_value_ref *values, int nvalues);

/* ---------------------------------------------------------------------
 * Paging: a pager re-issues a QUERY or EXECUTE with the paging state of
 * the previous page until the server reports no more pages.  Only one page
 * is held at a time, so memory stays bounded by the page size.
 * ---------------------------------------------------------------------
 */
typedef struct cql_pager
{
	cql_conn   *conn;
	const char *query;			/* or: */
	cql_prepared *prepared;
	cql_query_params params;	/* copied; values borrowed */
	uint8_t    *state;			/* paging state of the last page */
	int32_t		state_len;
	bool		done;			/* last page seen */
	int64_t		pages;
	int64_t		rows;
} cql_pager;

/* page_size in params (must be > 0 for paging to happen). */
extern void cql_pager_init(cql_pager *pg, cql_conn *c, const char *query,
						   cql_prepared *prepared, const cql_query_params *params);

/*
 * Fetch the next page into *page (freeing nothing: the caller frees each
 * page).  Returns CQL_OK with pg->done set after the last page; calling
 * again when done returns CQL_ERR_STATE.
 */
extern cql_status cql_pager_next(cql_pager *pg, cql_result *page, cql_error *err);
extern void cql_pager_free(cql_pager *pg);

/* Does a Rows result announce another page? */
static inline bool
cql_result_has_more_pages(const cql_result *res)
{
	return res->kind == CQL_RESULT_ROWS &&
		(res->meta.flags & CQL_ROWS_HAS_MORE_PAGES) != 0 &&
		res->meta.paging_state != NULL;
}

#endif							/* CQL_CONN_H */

/*-------------------------------------------------------------------------
 *
 * cql_conn_int.h
 *		Private structures of the transport layer (cql_socket.c,
 *		cql_conn.c, cql_handshake.c), also used from above by the session
 *		layer (cql_session_int.h).  Declares transport functions only.
 *		Not part of the public API.
 *
 * layer: transport (private)
 *
 * IDENTIFICATION
 *		src/cql/cql_conn_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_CONN_INT_H
#define CQL_CONN_INT_H

#include "cql_conn.h"
#include "cql_frame_int.h"

#define CQL_DEFAULT_PORT				9042
#define CQL_DEFAULT_CONNECT_TIMEOUT_MS	10000
#define CQL_DEFAULT_REQUEST_TIMEOUT_MS	12000
#define CQL_DEFAULT_MAX_IN_FLIGHT		1024
#define CQL_MAX_STREAMS					32768
#define CQL_RECV_CHUNK					65536
/*
 * Bytes one read_some() call takes from the socket before it returns to
 * the pump, so that a server that never stops sending (EVENT floods,
 * stray frames) cannot keep the caller from its deadline check and its
 * wait hook, where a backend notices cancel and terminate.
 */
#define CQL_READ_BUDGET					(256 * 1024)

/* ---- cql_socket.c ---- */
extern int64_t cql_now_ms(void);
extern int	cql_remaining_ms(int64_t deadline);
extern cql_status cql_sock_connect(const char *host, int port, int64_t deadline,
								   cql_wait_fn wait, void *wait_ctx,
								   int *fd_out, int *err_no);
extern cql_status cql_sock_resolve(const char *host, int64_t deadline,
								   cql_wait_fn wait, void *wait_ctx,
								   int *families, uint8_t (*addrs)[16], int max,
								   int *n, int *err_no);
extern cql_status cql_sock_send(int fd, const uint8_t *p, size_t n,
								size_t *sent, int *err_no);
extern cql_status cql_sock_recv(int fd, uint8_t *p, size_t cap,
								size_t *got, int *err_no);
extern void cql_sock_close(int fd);

/* ---- cql_tls.c ---- */
extern cql_status cql_tls_handshake(cql_conn *c, const cql_tls_context *t,
									int64_t deadline, cql_error *err);
extern cql_status cql_tls_send(cql_conn *c, const uint8_t *p, size_t n,
							   size_t *sent, int *err_no);
extern cql_status cql_tls_recv(cql_conn *c, uint8_t *p, size_t cap,
							   size_t *got, int *err_no);
extern bool cql_tls_pending(const cql_conn *c);
extern void cql_tls_close(cql_conn *c);

/* ---- requests ---- */
typedef enum cql_req_state
{
	CQL_REQ_PENDING = 0,		/* holds a stream id, waiting for the answer */
	CQL_REQ_DONE,				/* answered, or failed locally */
	CQL_REQ_ORPHAN				/* freed by the caller while pending */
} cql_req_state;

struct cql_request
{
	cql_conn   *conn;			/* NULL once detached by cql_conn_close */
	const cql_allocator *alloc;
	int16_t		stream;
	uint8_t		opcode;			/* request opcode */
	uint8_t		version;		/* protocol version it was encoded for */
	cql_req_state state;
	int64_t		deadline;		/* monotonic ms, 0 = none */

	/* completion */
	cql_status	status;			/* CQL_OK: a response is stored */
	uint8_t		resp_opcode;
	uint8_t		resp_flags;
	uint8_t		resp_version;
	uint8_t    *resp_body;		/* owned */
	size_t		resp_len;

	/* EXECUTE: prepared statement and its columns as sent */
	cql_prepared *prepared;
	const cql_column *cached_cols;
	int32_t		ncached;
	bool		stale_metadata; /* v4: skipped metadata did not match */
	/*
	 * EXECUTE: the body after the ids; BATCH of one prepared statement
	 * (cql_send_prepared_batch): the whole body.  Resent after re-preparing.
	 */
	uint8_t    *exec_params;
	size_t		exec_params_len;
	bool		reprepared;		/* already retried once after Unprepared */
};

/* ---- connection ---- */
struct cql_conn
{
	const cql_allocator *alloc;
	cql_wait_fn wait;
	void	   *wait_ctx;

	/* copied options */
	char	   *host;
	int			port;
	char		peer[64];
	char	   *username;
	char	   *password;		/* wiped on close */
	char	   *keyspace;		/* option, then current USE keyspace */
	char	   *driver_name;
	char	   *driver_version;
	char	   *application_name;	/* NULL = not sent */
	char	   *application_version;
	char	   *client_id;
	int			connect_timeout_ms;
	int			request_timeout_ms;
	bool		corked;			/* see cql_conn_cork() */
	int			max_in_flight;
	size_t		max_body;
	cql_event_fn on_event;
	void	   *event_ctx;
	cql_fd_fn	fd_budget;
	void	   *fd_budget_ctx;
	bool		fd_acquired;	/* fd_budget said yes; released on close */
	cql_compression compression;

	/* transport */
	int			fd;
	const cql_tls_context *tls; /* option: NULL = plaintext */
	char	   *tls_server_name;
	void	   *ssl;			/* SSL * while TLS is on */
	int			tls_wants;		/* CQL_WAIT_* OpenSSL needs before it can
								 * go on with the last read or write */
	int			version;		/* protocol version in use */
	bool		framed;			/* v5 outer framing active (send side) */
	bool		v4_lz4_out;		/* compress v4 request bodies */
	cql_frame_format frame_fmt;
	cql_status	broken;			/* CQL_OK while usable */
	cql_error	broken_err;		/* why it broke */

	/* handshake results */
	cql_supported supported;
	bool		auth_requested;
	bool		require_auth;	/* option: refuse a READY answer to STARTUP */
	bool		backlog;		/* read_some stopped on its budget with
								 * decoded bytes left: do not sleep */
	char	   *authenticator;
	bool		handshaking;	/* STARTUP sent, answer not yet read */

	/* outgoing bytes: out[out_pos..out.len) are still to be sent;
	 * staged holds v5 envelopes not yet packed into frames */
	cql_buf		out;
	size_t		out_pos;
	cql_buf		staged;

	/* incoming */
	cql_segment_decoder dec;
	uint8_t    *rbuf;

	/* stream table */
	cql_request **streams;		/* max_in_flight slots */
	int16_t    *free_ids;		/* stack of free ids */
	int			nfree;
	int			in_flight;

	/*
	 * Session layer state: the prepared statement cache (list; bounded by
	 * cql_conn_trim_prepared), kept by cql_session.c/cql_prepared.c.  The
	 * transport never calls that layer; on close it calls the hook the
	 * session layer installed, if any.
	 */
	cql_prepared *prepared;
	uint64_t	prepared_clock; /* ticks at every prepare/execute */
	void		(*release_session) (cql_conn *c);

	int64_t		last_recv_ms;	/* monotonic ms of the last bytes received
								 * (or of the connect) */

	/* statistics */
	uint64_t	events;
	uint64_t	stray_responses;
};

/* ---- cql_conn.c ---- */
extern cql_status cql_conn_new(const cql_conn_options *o, cql_conn **out, cql_error *err);
extern void cql_conn_fail(cql_conn *c, cql_status st, int sys_errno, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));
extern void cql_conn_set_error(const cql_conn *c, cql_error *err, cql_status st,
							   int sys_errno, const char *fmt,...)
			__attribute__((format(printf, 5, 6)));
extern cql_status cql_conn_check(const cql_conn *c, cql_error *err);
extern cql_status cql_conn_submit_internal(cql_conn *c, uint8_t opcode,
										   const uint8_t *body, size_t len,
										   bool never_compress,
										   cql_request **req, cql_error *err);
extern cql_status cql_conn_wait_request(cql_conn *c, cql_request *req,
										int64_t deadline, cql_error *err);
extern void cql_conn_reset_transport(cql_conn *c);
extern cql_status cql_conn_alloc_transport(cql_conn *c, cql_error *err);
extern cql_status cql_conn_complete(cql_conn *c, cql_request *req,
									cql_result *res, cql_error *err);
extern cql_status cql_conn_resubmit(cql_conn *c, cql_request *req,
									const uint8_t *body, size_t len,
									cql_error *err);

/* ---- cql_handshake.c ---- */
extern cql_status cql_handshake(cql_conn *c, int version, int64_t deadline,
								cql_error *err);
extern cql_status cql_conn_open(const cql_conn_options *o, cql_conn **out,
								cql_error *err);
extern void cql_conn_abandon(cql_conn *c, cql_error *err);

#endif							/* CQL_CONN_INT_H */

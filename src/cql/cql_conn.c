/*-------------------------------------------------------------------------
 *
 * cql_conn.c
 *		Connection object, stream table, outgoing queue, the I/O pump and
 *		the asynchronous request API.
 *
 * Design: every request gets a stream id from a free list and a slot in
 * the stream table; its envelope is appended to an outgoing byte queue (in
 * v5 first to a staging buffer of envelopes that the flush packs into
 * outer frames).  The pump writes what the socket accepts, reads what is
 * available, feeds the bytes to the incremental decoder and stores every
 * complete response on the request that owns its stream id, whatever
 * request the caller happens to be waiting for.  A stream id is released
 * only when its response has arrived (or the connection broke), so a late
 * answer to a timed-out or cancelled request can never be taken for the
 * answer to a newer one.
 *
 * layer: transport
 *
 * IDENTIFICATION
 *		src/cql/cql_conn.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_conn_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
cql_conn_options_init(cql_conn_options *o)
{
	memset(o, 0, sizeof(*o));
	o->host = "127.0.0.1";
	o->port = CQL_DEFAULT_PORT;
	o->protocol_version = 0;
	o->compression = CQL_COMPRESSION_NONE;
	o->connect_timeout_ms = CQL_DEFAULT_CONNECT_TIMEOUT_MS;
	o->request_timeout_ms = CQL_DEFAULT_REQUEST_TIMEOUT_MS;
	o->max_in_flight = CQL_DEFAULT_MAX_IN_FLIGHT;
}

/* ---------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------
 */

/*
 * cql_conn_set_error
 *		Fill a local error: status, message and the peer.  Messages are
 *		built from fixed text, host names and errno strings only, never
 *		from credentials.
 */
void
cql_conn_set_error(const cql_conn *c, cql_error *err, cql_status st,
				   int sys_errno, const char *fmt,...)
{
	va_list		ap;
	char		msg[sizeof(err->message)];

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cql_error_clear(err);
	if (c)
		snprintf(err->host, sizeof(err->host), "%s", c->peer);
	err->sys_errno = sys_errno;
	cql_error_setf(err, st, "%s", msg);
}

/*
 * cql_conn_check
 *		CQL_ERR_STATE (with the original reason) on a broken connection.
 */
cql_status
cql_conn_check(const cql_conn *c, cql_error *err)
{
	if (c == NULL)
	{
		if (err)
		{
			cql_error_clear(err);
			cql_error_setf(err, CQL_ERR_INVALID_ARG, "no connection");
		}
		return CQL_ERR_INVALID_ARG;
	}
	if (c->broken != CQL_OK)
	{
		cql_conn_set_error(c, err, CQL_ERR_STATE, c->broken_err.sys_errno,
						   "connection to %s is unusable: %s",
						   c->peer, c->broken_err.message);
		return CQL_ERR_STATE;
	}
	return CQL_OK;
}

static void
request_destroy(cql_request *req, const cql_allocator *a)
{
	cql_free(a, req->resp_body);
	cql_free(a, req->exec_params);
	cql_free(a, req);
}

static void
release_stream(cql_conn *c, int16_t id)
{
	c->streams[id] = NULL;
	c->free_ids[c->nfree++] = id;
	c->in_flight--;
}

/*
 * cql_conn_fail
 *		Mark the connection broken: every request in flight completes with
 *		'st', orphans are freed.  Later calls get CQL_ERR_STATE.  The first
 *		failure wins; the socket stays open until cql_conn_close so the fd
 *		number stays valid for callers that registered it somewhere.
 */
void
cql_conn_fail(cql_conn *c, cql_status st, int sys_errno, const char *fmt,...)
{
	va_list		ap;
	char		msg[sizeof(c->broken_err.message)];

	if (c->broken != CQL_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->broken = st;
	cql_conn_set_error(c, &c->broken_err, st, sys_errno, "%s", msg);

	if (c->streams == NULL)
		return;
	for (int i = 0; i < c->max_in_flight; i++)
	{
		cql_request *req = c->streams[i];

		if (req == NULL)
			continue;
		release_stream(c, (int16_t) i);
		if (req->state == CQL_REQ_ORPHAN)
			request_destroy(req, c->alloc);
		else
		{
			req->state = CQL_REQ_DONE;
			req->status = st;
		}
	}
}

/* ---------------------------------------------------------------------
 * Construction and teardown
 * ---------------------------------------------------------------------
 */
static char *
dup_opt(const cql_allocator *a, const char *s, bool *fail)
{
	char	   *r;

	if (s == NULL)
		return NULL;
	r = cql_strdup(a, s);
	if (r == NULL)
		*fail = true;
	return r;
}

/*
 * cql_conn_new
 *		Allocate a connection object from options (no I/O).
 */
cql_status
cql_conn_new(const cql_conn_options *o, cql_conn **out, cql_error *err)
{
	const cql_allocator *a = o->alloc ? o->alloc : &cql_malloc_allocator;
	cql_conn   *c;
	bool		fail = false;

	*out = NULL;
	if (o->host == NULL || o->host[0] == '\0')
	{
		cql_conn_set_error(NULL, err, CQL_ERR_INVALID_ARG, 0, "no host given");
		return CQL_ERR_INVALID_ARG;
	}
	if (o->protocol_version != 0 && o->protocol_version != 4 &&
		o->protocol_version != 5)
	{
		cql_conn_set_error(NULL, err, CQL_ERR_INVALID_ARG, 0,
						   "unsupported protocol version %d (use 0, 4 or 5)",
						   o->protocol_version);
		return CQL_ERR_INVALID_ARG;
	}
	if (o->max_in_flight < 0 || o->max_in_flight > CQL_MAX_STREAMS ||
		o->port < 0 || o->port > 65535)
	{
		cql_conn_set_error(NULL, err, CQL_ERR_INVALID_ARG, 0,
						   "invalid port or max_in_flight");
		return CQL_ERR_INVALID_ARG;
	}
	if (o->password && o->username == NULL)
	{
		cql_conn_set_error(NULL, err, CQL_ERR_INVALID_ARG, 0,
						   "password given without user name");
		return CQL_ERR_INVALID_ARG;
	}

	c = cql_alloc0(a, sizeof(*c));
	if (c == NULL)
	{
		cql_conn_set_error(NULL, err, CQL_ERR_NOMEM, 0, "out of memory");
		return CQL_ERR_NOMEM;
	}
	c->alloc = a;
	c->fd = -1;
	c->wait = o->wait ? o->wait : cql_wait_poll;
	c->wait_ctx = o->wait_ctx;
	c->port = o->port ? o->port : CQL_DEFAULT_PORT;
	c->host = dup_opt(a, o->host, &fail);
	c->tls = o->tls;
	c->tls_server_name = dup_opt(a, o->tls_server_name, &fail);
	c->username = dup_opt(a, o->username, &fail);
	c->password = dup_opt(a, o->password ? o->password : (o->username ? "" : NULL), &fail);
	c->keyspace = dup_opt(a, (o->keyspace && o->keyspace[0]) ? o->keyspace : NULL, &fail);
	c->driver_name = dup_opt(a, o->driver_name ? o->driver_name : "cql_fdw", &fail);
	c->driver_version = dup_opt(a, o->driver_version, &fail);
	c->application_name = dup_opt(a, (o->application_name && o->application_name[0]) ? o->application_name : NULL, &fail);
	c->application_version = dup_opt(a, (o->application_version && o->application_version[0]) ? o->application_version : NULL, &fail);
	c->client_id = dup_opt(a, (o->client_id && o->client_id[0]) ? o->client_id : NULL, &fail);
	c->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms
		: CQL_DEFAULT_CONNECT_TIMEOUT_MS;
	c->request_timeout_ms = o->request_timeout_ms ? o->request_timeout_ms
		: CQL_DEFAULT_REQUEST_TIMEOUT_MS;
	c->max_in_flight = o->max_in_flight ? o->max_in_flight : CQL_DEFAULT_MAX_IN_FLIGHT;
	c->max_body = (o->max_body && o->max_body < CQL_MAX_BODY_LENGTH) ? o->max_body
		: CQL_MAX_BODY_LENGTH;
	c->on_event = o->on_event;
	c->event_ctx = o->event_ctx;
	c->fd_budget = o->fd_budget;
	c->fd_budget_ctx = o->fd_budget_ctx;
	c->compression = o->compression;
	c->require_auth = o->require_auth;
	c->frame_fmt = CQL_FRAME_CRC;
	snprintf(c->peer, sizeof(c->peer), "%s:%d", o->host, c->port);
	cql_buf_init(&c->out, a);
	cql_buf_init(&c->staged, a);
	cql_segment_decoder_init(&c->dec, a, CQL_DECODE_ENVELOPES);
	if (fail)
	{
		cql_conn_close(c);
		cql_conn_set_error(NULL, err, CQL_ERR_NOMEM, 0, "out of memory");
		return CQL_ERR_NOMEM;
	}
	*out = c;
	return CQL_OK;
}

/*
 * cql_conn_alloc_transport
 *		Receive buffer and stream table for a fresh socket.
 */
cql_status
cql_conn_alloc_transport(cql_conn *c, cql_error *err)
{
	c->last_recv_ms = cql_now_ms();
	c->rbuf = cql_alloc(c->alloc, CQL_RECV_CHUNK);
	c->streams = cql_alloc0(c->alloc, sizeof(cql_request *) * (size_t) c->max_in_flight);
	c->free_ids = cql_alloc(c->alloc, sizeof(int16_t) * (size_t) c->max_in_flight);
	if (!c->rbuf || !c->streams || !c->free_ids)
	{
		cql_conn_set_error(c, err, CQL_ERR_NOMEM, 0, "out of memory");
		return CQL_ERR_NOMEM;
	}
	/* a stack: lowest ids are handed out first */
	c->nfree = 0;
	for (int i = c->max_in_flight - 1; i >= 0; i--)
		c->free_ids[c->nfree++] = (int16_t) i;
	c->in_flight = 0;
	cql_segment_decoder_free(&c->dec);
	cql_segment_decoder_init(&c->dec, c->alloc, CQL_DECODE_ENVELOPES);
	cql_segment_decoder_set_max_body(&c->dec, c->max_body);
	return CQL_OK;
}

/*
 * cql_conn_reset_transport
 *		Drop the socket and all per-socket state (used between the v5
 *		attempt and the v4 fallback, and by close).
 */
void
cql_conn_reset_transport(cql_conn *c)
{
	if (c->streams)
	{
		for (int i = 0; i < c->max_in_flight; i++)
		{
			cql_request *req = c->streams[i];

			if (req == NULL)
				continue;
			c->streams[i] = NULL;
			if (req->state == CQL_REQ_ORPHAN)
				request_destroy(req, c->alloc);
			else
			{
				/* caller still holds it: detach so freeing stays safe */
				req->state = CQL_REQ_DONE;
				req->status = CQL_ERR_STATE;
				req->conn = NULL;
			}
		}
	}
	cql_free(c->alloc, c->streams);
	cql_free(c->alloc, c->free_ids);
	cql_free(c->alloc, c->rbuf);
	c->streams = NULL;
	c->free_ids = NULL;
	c->rbuf = NULL;
	c->nfree = c->in_flight = 0;
	cql_tls_close(c);
	cql_sock_close(c->fd);
	c->fd = -1;
	cql_buf_free(&c->out);
	cql_buf_free(&c->staged);
	c->out_pos = 0;
	cql_segment_decoder_free(&c->dec);
	cql_segment_decoder_init(&c->dec, c->alloc, CQL_DECODE_ENVELOPES);
	c->framed = false;
	c->v4_lz4_out = false;
	c->handshaking = false;
	c->frame_fmt = CQL_FRAME_CRC;
	c->broken = CQL_OK;
	cql_error_clear(&c->broken_err);
	cql_supported_free(&c->supported, c->alloc);
	memset(&c->supported, 0, sizeof(c->supported));
	cql_free(c->alloc, c->authenticator);
	c->authenticator = NULL;
	c->auth_requested = false;
}

void
cql_conn_close(cql_conn *c)
{
	const cql_allocator *a;

	if (c == NULL)
		return;
	a = c->alloc;
	cql_conn_reset_transport(c);
	if (c->fd_acquired && c->fd_budget)
		c->fd_budget(c->fd_budget_ctx, false);
	c->fd_acquired = false;
	cql_segment_decoder_free(&c->dec);
	/* the session layer's state (prepared statements), if it kept any */
	if (c->release_session)
		c->release_session(c);
	if (c->password)
	{
		/* don't leave the secret lying around in freed memory */
		volatile char *p = c->password;

		while (*p)
			*p++ = '\0';
	}
	cql_free(a, c->host);
	cql_free(a, c->tls_server_name);
	cql_free(a, c->username);
	cql_free(a, c->password);
	cql_free(a, c->keyspace);
	cql_free(a, c->driver_name);
	cql_free(a, c->driver_version);
	cql_free(a, c->application_name);
	cql_free(a, c->application_version);
	cql_free(a, c->client_id);
	cql_free(a, c);
}

/* ---------------------------------------------------------------------
 * Info
 * ---------------------------------------------------------------------
 */
int
cql_conn_protocol_version(const cql_conn *c)
{
	return c->version;
}

cql_compression
cql_conn_compression(const cql_conn *c)
{
	return c->compression;
}

const cql_supported *
cql_conn_supported(const cql_conn *c)
{
	return &c->supported;
}

int
cql_conn_fd(const cql_conn *c)
{
	return c->fd;
}

const char *
cql_conn_host(const cql_conn *c)
{
	return c->host;
}

int
cql_conn_port(const cql_conn *c)
{
	return c->port;
}

const char *
cql_conn_peer(const cql_conn *c)
{
	return c->peer;
}

const cql_allocator *
cql_conn_allocator(const cql_conn *c)
{
	return c ? c->alloc : &cql_malloc_allocator;
}

bool
cql_conn_authenticated(const cql_conn *c)
{
	return c->auth_requested;
}

const char *
cql_conn_authenticator(const cql_conn *c)
{
	return c->authenticator;
}

cql_status
cql_conn_status(const cql_conn *c)
{
	return c->broken;
}

int
cql_conn_in_flight(const cql_conn *c)
{
	return c->in_flight;
}

/*
 * cql_conn_idle_ms
 *		Milliseconds since the connection last received bytes (or since it
 *		connected): how long it has gone without proof that the peer lives.
 */
int64_t
cql_conn_idle_ms(const cql_conn *c)
{
	return cql_now_ms() - c->last_recv_ms;
}

/*
 * cql_conn_abort
 *		Give up on a connection that is still formally usable (a peer that
 *		stopped answering): it is marked broken with st and the reason, and
 *		every request in flight completes with that status at once.  A
 *		connection already broken keeps its first reason.
 */
void
cql_conn_abort(cql_conn *c, cql_status st, const char *reason)
{
	if (c->broken != CQL_OK)
		return;
	cql_conn_fail(c, st == CQL_OK ? CQL_ERR_STATE : st, 0, "%s (%s)",
				  reason ? reason : "connection abandoned", c->peer);
}

const char *
cql_conn_keyspace(const cql_conn *c)
{
	return c->keyspace;
}

void
cql_conn_set_request_timeout(cql_conn *c, int timeout_ms)
{
	c->request_timeout_ms = timeout_ms ? timeout_ms : CQL_DEFAULT_REQUEST_TIMEOUT_MS;
}

int
cql_conn_request_timeout(const cql_conn *c)
{
	return c->request_timeout_ms;
}

/* ---------------------------------------------------------------------
 * Outgoing bytes
 * ---------------------------------------------------------------------
 */
static bool
out_pending(const cql_conn *c)
{
	return c->out_pos < c->out.len || c->staged.len > 0;
}

/*
 * flush_out
 *		Pack staged v5 envelopes into frames and write what the socket
 *		takes without blocking.
 */
static cql_status
flush_out(cql_conn *c)
{
	cql_status	st;
	int			err_no = 0;

	if (c->staged.len > 0)
	{
		/* compact the sent prefix away before growing the queue */
		if (c->out_pos == c->out.len)
		{
			cql_buf_reset(&c->out);
			c->out_pos = 0;
		}
		st = cql_frames_encode(&c->out, c->frame_fmt, c->staged.data, c->staged.len);
		if (st != CQL_OK)
		{
			cql_conn_fail(c, st, 0, "could not frame outgoing requests: %s",
						  cql_status_message(st));
			return st;
		}
		cql_buf_reset(&c->staged);
	}
	while (c->out_pos < c->out.len)
	{
		size_t		sent;

		if (c->ssl)
			st = cql_tls_send(c, c->out.data + c->out_pos,
							  c->out.len - c->out_pos, &sent, &err_no);
		else
			st = cql_sock_send(c->fd, c->out.data + c->out_pos,
							   c->out.len - c->out_pos, &sent, &err_no);
		if (st != CQL_OK)
		{
			if (c->broken != CQL_OK)
				return st;		/* the TLS layer said why */
			cql_conn_fail(c, st, err_no, "could not send to server: %s",
						  err_no ? strerror(err_no) : cql_status_message(st));
			return st;
		}
		if (sent == 0)
			break;
		c->out_pos += sent;
	}
	if (c->out_pos == c->out.len)
	{
		/* give back the memory of an exceptionally large request */
		if (c->out.cap > 4 * 1024 * 1024)
			cql_buf_free(&c->out);
		cql_buf_reset(&c->out);
		c->out_pos = 0;
	}
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * Incoming bytes
 * ---------------------------------------------------------------------
 */
static void
deliver_event(cql_conn *c, const cql_envelope *env)
{
	cql_response_extras ex;
	size_t		off;
	cql_event	ev;

	c->events++;
	if (c->on_event == NULL)
		return;
	memset(&ex, 0, sizeof(ex));
	if (cql_response_strip(env->body, env->body_len, env->hdr.flags, c->alloc,
						   &ex, &off) != CQL_OK)
	{
		cql_response_extras_free(&ex, c->alloc);
		return;
	}
	memset(&ev, 0, sizeof(ev));
	if (cql_decode_event(env->body + off, env->body_len - off, c->alloc, &ev) == CQL_OK)
		c->on_event(c->event_ctx, &ev);
	cql_event_free(&ev, c->alloc);
	cql_response_extras_free(&ex, c->alloc);
}

/*
 * dispatch
 *		Hand one decoded envelope to the request that owns its stream.
 */
static cql_status
dispatch(cql_conn *c, const cql_envelope *env)
{
	const cql_envelope_header *h = &env->hdr;
	cql_request *req;

	if (!h->response)
	{
		cql_conn_fail(c, CQL_ERR_MALFORMED, 0,
					  "server sent a request envelope (opcode 0x%02x)", h->opcode);
		return CQL_ERR_MALFORMED;
	}

	/*
	 * Before the handshake completes the server may answer with another
	 * version (a protocol error); afterwards every envelope must carry the
	 * negotiated one.
	 */
	if (h->version != c->version && !c->handshaking && h->opcode != CQL_OP_ERROR)
	{
		cql_conn_fail(c, CQL_ERR_MALFORMED, 0,
					  "server answered with protocol version %d on a v%d connection",
					  h->version, c->version);
		return CQL_ERR_MALFORMED;
	}

	if (h->stream < 0)
	{
		if (h->opcode == CQL_OP_EVENT)
			deliver_event(c, env);
		else
			c->stray_responses++;
		return CQL_OK;
	}
	if (h->stream >= c->max_in_flight || (req = c->streams[h->stream]) == NULL)
	{
		/* nobody asked: e.g. an error not attributable to a request */
		c->stray_responses++;
		return CQL_OK;
	}

	release_stream(c, h->stream);
	if (req->state == CQL_REQ_ORPHAN)
	{
		/* the late answer to a cancelled or timed-out request */
		request_destroy(req, c->alloc);
		return CQL_OK;
	}

	req->state = CQL_REQ_DONE;
	req->resp_opcode = h->opcode;
	req->resp_flags = h->flags;
	req->resp_version = h->version;
	req->resp_len = env->body_len;
	req->resp_body = cql_alloc(c->alloc, env->body_len ? env->body_len : 1);
	if (req->resp_body == NULL)
		req->status = CQL_ERR_NOMEM;
	else
	{
		if (env->body_len)
			memcpy(req->resp_body, env->body, env->body_len);
		req->status = CQL_OK;
	}

	/*
	 * v5: the server switches to framing right after writing its answer
	 * to STARTUP, so the bytes after READY/AUTHENTICATE are framed.  Switch
	 * the decoder now, before it looks at anything else already received.
	 */
	if (c->handshaking && req->opcode == CQL_OP_STARTUP)
	{
		c->handshaking = false;
		if (c->version >= CQL_PROTOCOL_V5 &&
			(h->opcode == CQL_OP_READY || h->opcode == CQL_OP_AUTHENTICATE))
		{
			cql_segment_decoder_set_mode(&c->dec,
										 c->frame_fmt == CQL_FRAME_LZ4
										 ? CQL_DECODE_FRAMES_LZ4
										 : CQL_DECODE_FRAMES_CRC);
			c->framed = true;
		}
	}
	return CQL_OK;
}

/*
 * drain_decoder
 *		Dispatch the envelopes the decoder already holds, adding their size
 *		to *total; stop (and note a backlog) once *total reaches the read
 *		budget.  CQL_OK when the decoder needs more bytes or the budget is
 *		spent; a failure breaks the connection.
 */
static cql_status
drain_decoder(cql_conn *c, cql_status st, size_t *total)
{
	for (;;)
	{
		cql_envelope env;

		if (st == CQL_OK)
		{
			if (*total >= CQL_READ_BUDGET)
			{
				c->backlog = true;
				return CQL_OK;
			}
			st = cql_segment_decoder_next(&c->dec, &env);
		}
		if (st == CQL_ERR_TRUNCATED)
			return CQL_OK;
		if (st == CQL_ERR_CRC && c->dec.fatal == CQL_OK)
		{
			/* one self-contained frame lost; its requests time out */
			st = CQL_OK;
			continue;
		}
		if (st == CQL_ERR_TOO_LARGE)
		{
			cql_conn_fail(c, st, 0,
						  "invalid data or a response too large: the server announced a message larger than the limit of %zu bytes (max_body)",
						  c->max_body);
			return st;
		}
		if (st != CQL_OK)
		{
			cql_conn_fail(c, st, 0, "invalid data from server: %s",
						  cql_status_message(st));
			return st;
		}
		*total += env.body_len + CQL_HEADER_LEN;
		if ((st = dispatch(c, &env)) != CQL_OK)
			return st;
	}
}

/*
 * read_some
 *		Dispatch what the decoder holds, then read and dispatch what is
 *		available without blocking.  Stops early once 'until' completes (the
 *		rest is picked up by the next call), and after CQL_READ_BUDGET
 *		bytes, counted both as received and as decoded (LZ4 frames expand
 *		up to 255 times): the caller must get back to its deadline check
 *		and its wait hook even when the server never stops sending.  Bytes
 *		left in the socket keep it readable; envelopes left in the decoder
 *		set c->backlog, so that conn_io polls instead of sleeping.
 */
static cql_status
read_some(cql_conn *c, const cql_request *until)
{
	size_t		total = 0;
	cql_status	st;

	c->backlog = false;
	if ((st = drain_decoder(c, CQL_OK, &total)) != CQL_OK || c->backlog)
		return st;
	for (;;)
	{
		size_t		got;
		int			err_no = 0;

		if (until && until->state != CQL_REQ_PENDING)
			return CQL_OK;
		if (total >= CQL_READ_BUDGET)
		{
			/* decrypted bytes left in OpenSSL: poll() cannot see them */
			if (cql_tls_pending(c))
				c->backlog = true;
			return CQL_OK;
		}

		if (c->ssl)
			st = cql_tls_recv(c, c->rbuf, CQL_RECV_CHUNK, &got, &err_no);
		else
			st = cql_sock_recv(c->fd, c->rbuf, CQL_RECV_CHUNK, &got, &err_no);
		if (st != CQL_OK)
		{
			if (c->broken != CQL_OK)
				return st;		/* the TLS layer said why */
			if (st == CQL_ERR_CLOSED)
				cql_conn_fail(c, st, err_no, "server closed the connection%s%s",
							  err_no ? ": " : "", err_no ? strerror(err_no) : "");
			else
				cql_conn_fail(c, st, err_no, "could not receive from server: %s",
							  strerror(err_no));
			return st;
		}
		if (got == 0)
			return CQL_OK;
		total += got;
		c->last_recv_ms = cql_now_ms();

		st = cql_segment_decoder_feed(&c->dec, c->rbuf, got);
		if ((st = drain_decoder(c, st, &total)) != CQL_OK || c->backlog)
			return st;
	}
}

/*
 * conn_io
 *		The pump.  Returns when 'until' completes (CQL_OK), when the
 *		deadline passes (CQL_ERR_TIMEOUT), when the wait hook interrupts,
 *		or, with 'once', after one wait.  Deadline 0 = none.
 */
static cql_status
conn_io(cql_conn *c, cql_request *until, int64_t deadline, bool once,
		cql_error *err)
{
	for (;;)
	{
		cql_status	st;
		int			left;
		int			events;

		if (c->broken != CQL_OK)
			break;
		if (flush_out(c) != CQL_OK)
			break;
		if (read_some(c, until) != CQL_OK)
			break;
		if (until && until->state != CQL_REQ_PENDING)
			return CQL_OK;
		/* flush again: reading may have made room in the send buffer */
		if (out_pending(c) && flush_out(c) != CQL_OK)
			break;

		left = cql_remaining_ms(deadline);
		if (left == 0)
		{
			if (once)
				return CQL_OK;
			cql_conn_set_error(c, err, CQL_ERR_TIMEOUT, ETIMEDOUT,
							   "timed out waiting for the server at %s", c->peer);
			return CQL_ERR_TIMEOUT;
		}
		events = CQL_WAIT_READ | (out_pending(c) ? CQL_WAIT_WRITE : 0) | c->tls_wants;
		/* decrypted bytes already held by OpenSSL: go and read them */
		if (cql_tls_pending(c))
			c->backlog = true;
		/* with decoded envelopes waiting: only let the hook see interrupts */
		st = c->wait(c->wait_ctx, c->fd, events, c->backlog ? 0 : left);
		if (st == CQL_ERR_INTERRUPTED)
		{
			cql_conn_set_error(c, err, CQL_ERR_INTERRUPTED, EINTR,
							   "interrupted while waiting for the server at %s",
							   c->peer);
			return CQL_ERR_INTERRUPTED;
		}
		if (st != CQL_OK && st != CQL_ERR_TIMEOUT)
		{
			cql_conn_set_error(c, err, st, 0, "wait for server at %s failed: %s",
							   c->peer, cql_status_message(st));
			return st;
		}
		if (once)
		{
			if (flush_out(c) != CQL_OK || read_some(c, until) != CQL_OK)
				break;
			return CQL_OK;
		}
	}

	/* broken: report the reason */
	if (err)
	{
		*err = c->broken_err;
	}
	return c->broken;
}

/*
 * cql_conn_wait_request
 *		Pump until 'req' is done or the deadline passes.
 */
cql_status
cql_conn_wait_request(cql_conn *c, cql_request *req, int64_t deadline,
					  cql_error *err)
{
	cql_status	st;

	if (req->state != CQL_REQ_PENDING)
		return CQL_OK;
	st = conn_io(c, req, deadline, false, err);
	/* a broken connection completes the request with its reason */
	if (req->state != CQL_REQ_PENDING)
		return CQL_OK;
	return st;
}

cql_status
cql_conn_pump(cql_conn *c, int timeout_ms, cql_error *err)
{
	cql_status	st;
	int64_t		deadline;

	if (err)
		cql_error_clear(err);
	if ((st = cql_conn_check(c, err)) != CQL_OK)
		return st;
	if (timeout_ms < 0)
		deadline = 0;
	else
		deadline = cql_now_ms() + (timeout_ms == 0 ? 0 : timeout_ms);
	if (timeout_ms == 0)
	{
		/* non-blocking: one pass of I/O, no wait */
		if (flush_out(c) != CQL_OK || read_some(c, NULL) != CQL_OK)
		{
			if (err)
				*err = c->broken_err;
			return c->broken;
		}
		return CQL_OK;
	}
	return conn_io(c, NULL, deadline, true, err);
}

cql_status
cql_conn_settle(cql_conn *c, int timeout_ms, cql_error *err)
{
	int64_t		deadline = cql_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	cql_status	st;

	if (err)
		cql_error_clear(err);
	if ((st = cql_conn_check(c, err)) != CQL_OK)
		return st;
	while (c->in_flight > 0)
	{
		if (cql_now_ms() >= deadline)
		{
			cql_conn_set_error(c, err, CQL_ERR_TIMEOUT, ETIMEDOUT,
							   "%d requests still unanswered by %s",
							   c->in_flight, c->peer);
			return CQL_ERR_TIMEOUT;
		}
		if ((st = conn_io(c, NULL, deadline, true, err)) != CQL_OK)
			return st;
	}
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * Submitting
 * ---------------------------------------------------------------------
 */
cql_status
cql_conn_submit_internal(cql_conn *c, uint8_t opcode, const uint8_t *body,
						 size_t len, bool never_compress,
						 cql_request **reqp, cql_error *err)
{
	cql_request *req;
	cql_buf    *target;
	size_t		old_len;
	int16_t		id;
	cql_status	st;
	bool		lz4;

	*reqp = NULL;
	if ((st = cql_conn_check(c, err)) != CQL_OK)
		return st;
	if (c->fd < 0 || c->streams == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_STATE, 0, "connection is not open");
		return CQL_ERR_STATE;
	}
	if (len > CQL_MAX_BODY_LENGTH)
	{
		cql_conn_set_error(c, err, CQL_ERR_TOO_LARGE, 0,
						   "request body of %zu bytes exceeds the protocol limit", len);
		return CQL_ERR_TOO_LARGE;
	}
	if (c->nfree == 0)
	{
		/*
		 * Every stream id is waiting for an answer: make progress until one
		 * frees up (answers are stored on their requests meanwhile), for at
		 * most one request timeout.
		 */
		int64_t		dl = c->request_timeout_ms > 0
			? cql_now_ms() + c->request_timeout_ms : 0;

		while (c->nfree == 0 && c->broken == CQL_OK)
		{
			if ((st = conn_io(c, NULL, dl, true, err)) != CQL_OK)
				return st;
			if (dl && cql_now_ms() >= dl)
				break;
		}
		if ((st = cql_conn_check(c, err)) != CQL_OK)
			return st;
	}
	if (c->nfree == 0)
	{
		cql_conn_set_error(c, err, CQL_ERR_BUSY, 0,
						   "all %d stream ids of the connection to %s are in use",
						   c->max_in_flight, c->peer);
		return CQL_ERR_BUSY;
	}
	req = cql_alloc0(c->alloc, sizeof(*req));
	if (req == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_NOMEM, 0, "out of memory");
		return CQL_ERR_NOMEM;
	}
	req->version = (uint8_t) c->version;

	id = c->free_ids[c->nfree - 1];
	target = c->framed ? &c->staged : &c->out;
	if (target == &c->out && c->out_pos == c->out.len)
	{
		cql_buf_reset(&c->out);
		c->out_pos = 0;
	}
	old_len = target->len;
	lz4 = c->v4_lz4_out && !never_compress && c->version < CQL_PROTOCOL_V5;
	st = cql_envelope_build(target, c->version, 0, id, opcode, body, len, lz4);
	if (st != CQL_OK)
	{
		/*
		 * Nothing of this envelope may reach the wire: cut it off again.
		 * The buffer's sticky failure flag only concerns the bytes we just
		 * removed, so clear it too.
		 */
		target->len = old_len;
		target->failed = false;
		cql_free(c->alloc, req);
		cql_conn_set_error(c, err, st, 0, "could not build %s request: %s",
						   cql_opcode_name(opcode), cql_status_message(st));
		return st;
	}
	c->nfree--;
	c->streams[id] = req;
	c->in_flight++;
	req->conn = c;
	req->alloc = c->alloc;
	req->stream = id;
	req->opcode = opcode;
	req->state = CQL_REQ_PENDING;
	req->deadline = c->request_timeout_ms > 0
		? cql_now_ms() + c->request_timeout_ms : 0;
	*reqp = req;

	/*
	 * Try to get it out now (a failure is reported through the request);
	 * corked, only once enough has gathered to fill a large write.
	 */
	if (!c->corked || c->staged.len + (c->out.len - c->out_pos) >= CQL_CORK_FLUSH_BYTES)
		(void) flush_out(c);
	return CQL_OK;
}

void
cql_conn_cork(cql_conn *c, bool on)
{
	c->corked = on;
	if (!on && out_pending(c))
		(void) flush_out(c);
}

cql_status
cql_conn_submit(cql_conn *c, uint8_t opcode, const cql_buf *body,
				cql_request **req, cql_error *err)
{
	cql_status	st;

	if (err)
		cql_error_clear(err);
	if (body && (st = cql_buf_status(body)) != CQL_OK)
	{
		cql_conn_set_error(c, err, st, 0, "request body could not be built");
		return st;
	}
	return cql_conn_submit_internal(c, opcode, body ? body->data : NULL,
									body ? body->len : 0, false, req, err);
}

/* ---------------------------------------------------------------------
 * Completion
 * ---------------------------------------------------------------------
 */
static cql_status
request_wait(cql_conn *c, cql_request *req, cql_error *err)
{
	cql_status	st;

	if (err)
		cql_error_clear(err);
	if (req == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_INVALID_ARG, 0, "no request");
		return CQL_ERR_INVALID_ARG;
	}
	if (req->state == CQL_REQ_PENDING)
	{
		if (c == NULL || req->conn != c)
		{
			cql_conn_set_error(c, err, CQL_ERR_INVALID_ARG, 0,
							   "request does not belong to this connection");
			return CQL_ERR_INVALID_ARG;
		}
		st = cql_conn_wait_request(c, req, req->deadline, err);
		if (st != CQL_OK)
			return st;
	}
	if (req->status != CQL_OK)
	{
		if (c && c->broken != CQL_OK && err)
		{
			*err = c->broken_err;
			err->status = req->status;
		}
		else
			cql_conn_set_error(c, err, req->status, 0, "request failed: %s",
							   cql_status_message(req->status));
		return req->status;
	}
	return CQL_OK;
}

cql_status
cql_conn_await_raw(cql_conn *c, cql_request *req, uint8_t *opcode,
				   uint8_t *flags, const uint8_t **body, size_t *len,
				   cql_error *err)
{
	cql_status	st = request_wait(c, req, err);

	if (st != CQL_OK)
		return st;
	*opcode = req->resp_opcode;
	*flags = req->resp_flags;
	*body = req->resp_body;
	*len = req->resp_len;
	return CQL_OK;
}

/*
 * decode_error_response
 *		ERROR body (with prefixes) into err; returns CQL_ERR_SERVER, or the
 *		decode failure.
 */
static cql_status
decode_error_response(cql_conn *c, const cql_request *req, cql_error *err)
{
	cql_response_extras ex;
	cql_error	tmp;
	cql_error  *e = err ? err : &tmp;
	size_t		off;
	cql_status	st;

	memset(&ex, 0, sizeof(ex));
	cql_error_clear(e);
	snprintf(e->host, sizeof(e->host), "%s", c->peer);
	st = cql_response_strip(req->resp_body, req->resp_len, req->resp_flags,
							c->alloc, &ex, &off);
	cql_response_extras_free(&ex, c->alloc);
	if (st == CQL_OK)
		st = cql_decode_error(req->resp_body + off, req->resp_len - off,
							  req->resp_version, e);
	if (st != CQL_OK)
	{
		cql_conn_set_error(c, e, st, 0, "undecodable ERROR response from %s", c->peer);
		return st;
	}
	return CQL_ERR_SERVER;
}

/*
 * rows_columns_stale
 *		Protocol v4 has no result metadata id: a server whose statement was
 *		re-prepared with different columns (by another client, after ALTER
 *		TABLE) still honours SKIP_METADATA.  The column count is the one
 *		thing we can check; a mismatch means our cache is stale.
 */
static bool
rows_columns_stale(cql_conn *c, const cql_request *req)
{
	cql_response_extras ex;
	cql_reader	r;
	size_t		off;
	int32_t		kind,
				flags,
				ncols;
	bool		stale = false;

	memset(&ex, 0, sizeof(ex));
	if (cql_response_strip(req->resp_body, req->resp_len, req->resp_flags,
						   c->alloc, &ex, &off) == CQL_OK)
	{
		cql_reader_init(&r, req->resp_body + off, req->resp_len - off);
		if (cql_read_i32(&r, &kind) == CQL_OK && kind == CQL_RESULT_ROWS &&
			cql_read_i32(&r, &flags) == CQL_OK &&
			cql_read_i32(&r, &ncols) == CQL_OK &&
			(flags & CQL_ROWS_NO_METADATA) && ncols != req->ncached)
			stale = true;
	}
	cql_response_extras_free(&ex, c->alloc);
	return stale;
}

bool
cql_request_metadata_stale(const cql_request *req)
{
	return req->stale_metadata;
}

/*
 * cql_conn_complete
 *		Wait for req and decode its answer: a RESULT into *res (with the
 *		columns cached on the request when the server skipped metadata), an
 *		ERROR into err (CQL_ERR_SERVER).  No policy: what a session does
 *		with the answer (adopting metadata, recovering from Unprepared) is
 *		up to cql_conn_await in cql_session.c.
 */
cql_status
cql_conn_complete(cql_conn *c, cql_request *req, cql_result *res, cql_error *err)
{
	cql_status	st;

	memset(res, 0, sizeof(*res));
	st = request_wait(c, req, err);
	if (st != CQL_OK)
		return st;

	switch (req->resp_opcode)
	{
		case CQL_OP_RESULT:
			if (req->opcode == CQL_OP_EXECUTE && req->ncached > 0 &&
				rows_columns_stale(c, req))
			{
				req->stale_metadata = true;
				cql_conn_set_error(c, err, CQL_ERR_MALFORMED, 0,
								   "result columns of the prepared statement changed on %s "
								   "(the server skipped metadata that no longer matches); "
								   "prepare it again", c->peer);
				return CQL_ERR_MALFORMED;
			}
			st = cql_decode_result_take(res, req->resp_version, req->resp_flags,
										req->resp_body, req->resp_len, c->alloc,
										req->cached_cols, req->ncached);
			req->resp_body = NULL;	/* taken, even on failure */
			req->resp_len = 0;
			if (st != CQL_OK)
			{
				cql_conn_set_error(c, err, st, 0, "undecodable RESULT from %s: %s",
								   c->peer, cql_status_message(st));
				return st;
			}
			return CQL_OK;
		case CQL_OP_ERROR:
			{
				cql_error	local;

				return decode_error_response(c, req, err ? err : &local);
			}
		default:
			cql_conn_set_error(c, err, CQL_ERR_MALFORMED, 0,
							   "unexpected %s response to %s",
							   cql_opcode_name(req->resp_opcode),
							   cql_opcode_name(req->opcode));
			return CQL_ERR_MALFORMED;
	}
}

/*
 * cql_conn_resubmit
 *		Send a new body with req's opcode under the caller's (completed)
 *		request handle: the new stream is moved onto req, whose previous
 *		answer is dropped.  Used by the session layer to resend a request
 *		after re-preparing its statement.
 */
cql_status
cql_conn_resubmit(cql_conn *c, cql_request *req, const uint8_t *body,
				  size_t len, cql_error *err)
{
	cql_request *nreq;
	cql_status	st;

	st = cql_conn_submit_internal(c, req->opcode, body, len, false, &nreq, err);
	if (st != CQL_OK)
		return st;
	cql_free(c->alloc, req->resp_body);
	req->resp_body = NULL;
	req->resp_len = 0;
	req->resp_opcode = 0;
	req->resp_flags = 0;
	req->status = CQL_OK;
	req->stream = nreq->stream;
	req->state = nreq->state;
	req->deadline = nreq->deadline;
	c->streams[req->stream] = req;
	request_destroy(nreq, c->alloc);
	return CQL_OK;
}

bool
cql_request_done(const cql_request *req)
{
	return req->state != CQL_REQ_PENDING;
}

int
cql_conn_wait_events(const cql_conn *c)
{
	if (c->broken != CQL_OK || c->backlog || cql_tls_pending(c))
		return 0;
	return CQL_WAIT_READ | (out_pending(c) ? CQL_WAIT_WRITE : 0) | c->tls_wants;
}

int
cql_request_remaining_ms(const cql_request *req)
{
	if (req->state != CQL_REQ_PENDING || req->deadline == 0)
		return -1;
	return cql_remaining_ms(req->deadline);
}

int16_t
cql_request_stream(const cql_request *req)
{
	return req->stream;
}

void
cql_request_free(cql_request *req)
{
	cql_conn   *c;

	if (req == NULL)
		return;
	c = req->conn;
	if (req->state == CQL_REQ_PENDING && c != NULL)
	{
		/* keep the stream reserved until the late answer is drained */
		req->state = CQL_REQ_ORPHAN;
		req->prepared = NULL;
		req->cached_cols = NULL;
		return;
	}
	/* done, or detached by cql_conn_close: only the allocator is needed */
	request_destroy(req, req->alloc);
}

/*-------------------------------------------------------------------------
 *
 * cql_handshake.c
 *		Opening a connection: TCP connect, OPTIONS/SUPPORTED, STARTUP,
 *		SASL PLAIN authentication and protocol version negotiation
 *		(cql_conn_open).  The initial USE of the keyspace option is sent by
 *		the session layer (cql_connect in cql_session.c).
 *
 * The handshake is a short fixed sequence, so it is written as straight
 * code over the asynchronous machinery of cql_conn.c (submit + wait for
 * one request at a time) rather than as an explicit state machine; the
 * one piece of state the pump must know about is 'handshaking', which
 * tells it to switch the decoder to v5 framing right after the answer to
 * STARTUP (see dispatch() in cql_conn.c).
 *
 * Version negotiation (protocol_version = 0): try v5 without the beta flag;
 * a server that does not speak it answers our first envelope with a
 * Protocol error and closes the socket, so we reconnect and use v4.
 *
 * layer: transport
 *
 * IDENTIFICATION
 *		src/cql/cql_handshake.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_conn_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#define CQL_MAX_AUTH_ROUNDS 8

/*
 * wait_handshake_reply
 *		Wait for the answer to one handshake request; on an ERROR answer
 *		decode it into err and return CQL_ERR_SERVER.  On success the
 *		request (still owned by the caller) holds the response.
 */
static cql_status
wait_handshake_reply(cql_conn *c, cql_request *req, int64_t deadline,
					 const char *what, cql_error *err)
{
	cql_status	st;

	st = cql_conn_wait_request(c, req, deadline, err);
	if (st == CQL_ERR_TIMEOUT)
	{
		cql_conn_set_error(c, err, st, ETIMEDOUT,
						   "timed out waiting for the answer to %s from %s",
						   what, c->peer);
		return st;
	}
	if (st != CQL_OK)
		return st;
	if (req->status != CQL_OK)
	{
		*err = c->broken_err;
		err->status = req->status;
		return req->status;
	}
	if (req->resp_opcode == CQL_OP_ERROR)
	{
		cql_response_extras ex;
		size_t		off = 0;

		memset(&ex, 0, sizeof(ex));
		cql_error_clear(err);
		snprintf(err->host, sizeof(err->host), "%s", c->peer);
		st = cql_response_strip(req->resp_body, req->resp_len, req->resp_flags,
								c->alloc, &ex, &off);
		cql_response_extras_free(&ex, c->alloc);
		if (st == CQL_OK)
			st = cql_decode_error(req->resp_body + off, req->resp_len - off,
								  req->resp_version, err);
		if (st != CQL_OK)
		{
			cql_conn_set_error(c, err, st, 0,
							   "undecodable ERROR answer to %s from %s", what, c->peer);
			return st;
		}
		return CQL_ERR_SERVER;
	}
	return CQL_OK;
}

/* Replace err's message, keeping the server fields. */
static void
prefix_message(cql_error *err, cql_status st, const char *prefix)
{
	char		msg[sizeof(err->message)];

	int			room = (int) (sizeof(msg) - strlen(prefix) - 3);

	/* explicit precision: the result always fits, nothing to warn about */
	snprintf(msg, sizeof(msg), "%s: %.*s", prefix, room > 0 ? room : 0, err->message);
	memcpy(err->message, msg, sizeof(msg));
	err->status = st;
}

static cql_status
submit_and_wait(cql_conn *c, uint8_t opcode, const cql_buf *body, bool never_compress,
				int64_t deadline, const char *what, cql_request **reqp,
				cql_error *err)
{
	cql_status	st;

	st = cql_conn_submit_internal(c, opcode, body ? body->data : NULL,
								  body ? body->len : 0, never_compress, reqp, err);
	if (st != CQL_OK)
		return st;
	return wait_handshake_reply(c, *reqp, deadline, what, err);
}

/*
 * authenticate
 *		SASL PLAIN as PasswordAuthenticator expects it; DseAuthenticator
 *		first wants the mechanism name and answers "PLAIN-START".
 */
static cql_status
authenticate(cql_conn *c, const cql_request *auth_req, int64_t deadline,
			 cql_error *err)
{
	cql_buf		plain;
	cql_buf		body;
	cql_status	st;
	bool		dse;
	bool		plain_sent = false;
	cql_request *req = NULL;

	st = cql_decode_authenticate(auth_req->resp_body, auth_req->resp_len,
								 c->alloc, &c->authenticator);
	if (st != CQL_OK)
	{
		cql_conn_set_error(c, err, st, 0, "undecodable AUTHENTICATE from %s", c->peer);
		return st;
	}
	c->auth_requested = true;
	if (c->username == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_AUTH, 0,
						   "server at %s requires authentication (%s) but no user name was given",
						   c->peer, c->authenticator);
		return CQL_ERR_AUTH;
	}
	dse = strstr(c->authenticator, "DseAuthenticator") != NULL;

	cql_buf_init(&plain, c->alloc);
	cql_buf_init(&body, c->alloc);
	st = cql_sasl_plain_token(&plain, c->username, c->password);
	if (st != CQL_OK)
	{
		cql_conn_set_error(c, err, st, 0, "could not build the authentication token: %s",
						   cql_status_message(st));
		goto done;
	}

	for (int round = 0;; round++)
	{
		const uint8_t *token;
		int32_t		token_len;

		if (round >= CQL_MAX_AUTH_ROUNDS)
		{
			cql_conn_set_error(c, err, CQL_ERR_AUTH, 0,
							   "authentication with %s did not complete after %d rounds",
							   c->peer, round);
			st = CQL_ERR_AUTH;
			goto done;
		}
		cql_buf_reset(&body);
		if (dse && round == 0)
			st = cql_write_auth_response(&body, (const uint8_t *) "PLAIN", 5);
		else
		{
			st = cql_write_auth_response(&body, plain.data, (int32_t) plain.len);
			plain_sent = true;
		}
		if (st != CQL_OK)
		{
			cql_conn_set_error(c, err, st, 0, "could not build AUTH_RESPONSE");
			goto done;
		}
		cql_request_free(req);
		req = NULL;
		st = submit_and_wait(c, CQL_OP_AUTH_RESPONSE, &body, false, deadline,
							 "AUTH_RESPONSE", &req, err);
		/* the body held the password: wipe it right away */
		memset(body.data, 0, body.cap);
		if (st == CQL_ERR_SERVER)
		{
			prefix_message(err, CQL_ERR_AUTH, "authentication failed");
			st = CQL_ERR_AUTH;
			goto done;
		}
		if (st != CQL_OK)
			goto done;
		if (req->resp_opcode == CQL_OP_AUTH_SUCCESS)
			break;
		if (req->resp_opcode != CQL_OP_AUTH_CHALLENGE)
		{
			cql_conn_set_error(c, err, CQL_ERR_MALFORMED, 0,
							   "unexpected %s during authentication with %s",
							   cql_opcode_name(req->resp_opcode), c->peer);
			st = CQL_ERR_MALFORMED;
			goto done;
		}
		st = cql_decode_auth_token(req->resp_body, req->resp_len, &token, &token_len);
		if (st != CQL_OK)
		{
			cql_conn_set_error(c, err, st, 0, "undecodable AUTH_CHALLENGE from %s", c->peer);
			goto done;
		}
		/* PLAIN is one step; only DSE's PLAIN-START may ask for it */
		if (plain_sent &&
			!(dse && token_len == 11 && memcmp(token, "PLAIN-START", 11) == 0))
		{
			cql_conn_set_error(c, err, CQL_ERR_AUTH, 0,
							   "unsupported authentication challenge from %s (%s)",
							   c->peer, c->authenticator);
			st = CQL_ERR_AUTH;
			goto done;
		}
	}
	st = CQL_OK;

done:
	cql_request_free(req);
	if (plain.data)
		memset(plain.data, 0, plain.cap);
	if (body.data)
		memset(body.data, 0, body.cap);
	cql_buf_free(&plain);
	cql_buf_free(&body);
	return st;
}

/*
 * startup_option
 *		Add one key/value pair to the STARTUP map being built, when the
 *		value is set (NULL: the option is not sent).
 */
static void
startup_option(const char **keys, const char **vals, int *n,
			   const char *key, const char *value)
{
	if (value == NULL)
		return;
	keys[*n] = key;
	vals[(*n)++] = value;
}

/*
 * cql_handshake
 *		OPTIONS, STARTUP, authentication on an open socket.
 */
cql_status
cql_handshake(cql_conn *c, int version, int64_t deadline, cql_error *err)
{
	cql_request *req = NULL;
	cql_buf		body;
	cql_status	st;
	const char *keys[7];
	const char *vals[7];
	int			n = 0;
	bool		lz4 = c->compression == CQL_COMPRESSION_LZ4;

	c->version = version;
	cql_buf_init(&body, c->alloc);

	/* OPTIONS: learn what the server offers (and whether it speaks v5) */
	st = submit_and_wait(c, CQL_OP_OPTIONS, NULL, true, deadline, "OPTIONS", &req, err);
	if (st == CQL_ERR_SERVER)
	{
		if (err->code == CQL_ERRCODE_PROTOCOL_ERROR)
		{
			prefix_message(err, CQL_ERR_PROTOCOL_VERSION, "protocol version refused");
			st = CQL_ERR_PROTOCOL_VERSION;
		}
		goto done;
	}
	if (st != CQL_OK)
		goto done;
	if (req->resp_opcode != CQL_OP_SUPPORTED)
	{
		cql_conn_set_error(c, err, CQL_ERR_MALFORMED, 0,
						   "unexpected %s answer to OPTIONS from %s",
						   cql_opcode_name(req->resp_opcode), c->peer);
		st = CQL_ERR_MALFORMED;
		goto done;
	}
	st = cql_decode_supported(req->resp_body, req->resp_len, c->alloc, &c->supported);
	if (st != CQL_OK)
	{
		cql_conn_set_error(c, err, st, 0, "undecodable SUPPORTED from %s", c->peer);
		goto done;
	}
	if (req->resp_version != version)
	{
		cql_conn_set_error(c, err, CQL_ERR_PROTOCOL_VERSION, 0,
						   "server at %s answered v%d to a v%d request",
						   c->peer, req->resp_version, version);
		st = CQL_ERR_PROTOCOL_VERSION;
		goto done;
	}
	cql_request_free(req);
	req = NULL;

	if (lz4 && !cql_supported_has(&c->supported, "COMPRESSION", "lz4"))
	{
		cql_conn_set_error(c, err, CQL_ERR_UNSUPPORTED, 0,
						   "server at %s does not offer lz4 compression", c->peer);
		st = CQL_ERR_UNSUPPORTED;
		goto done;
	}

	/* STARTUP */
	keys[n] = "CQL_VERSION";
	vals[n++] = "3.0.0";
	if (lz4)
	{
		keys[n] = "COMPRESSION";
		vals[n++] = "lz4";
	}
	startup_option(keys, vals, &n, "DRIVER_NAME", c->driver_name);
	startup_option(keys, vals, &n, "DRIVER_VERSION", c->driver_version);
	startup_option(keys, vals, &n, "APPLICATION_NAME", c->application_name);
	startup_option(keys, vals, &n, "APPLICATION_VERSION", c->application_version);
	startup_option(keys, vals, &n, "CLIENT_ID", c->client_id);
	st = cql_write_startup(&body, keys, vals, n);
	if (st != CQL_OK)
	{
		cql_conn_set_error(c, err, st, 0, "could not build STARTUP");
		goto done;
	}

	/*
	 * With lz4 the server sets up its compressor while processing STARTUP:
	 * in v4 its answer may already be compressed, in v5 everything after
	 * the (unframed, uncompressed) answer uses LZ4 frames.
	 */
	if (lz4)
	{
		if (version >= CQL_PROTOCOL_V5)
			c->frame_fmt = CQL_FRAME_LZ4;
		else
			cql_segment_decoder_set_v4_lz4(&c->dec, true);
	}
	c->handshaking = true;
	st = cql_conn_submit_internal(c, CQL_OP_STARTUP, body.data, body.len, true, &req, err);
	if (st != CQL_OK)
		goto done;
	if (lz4 && version < CQL_PROTOCOL_V5)
		c->v4_lz4_out = true;
	st = wait_handshake_reply(c, req, deadline, "STARTUP", err);
	if (st == CQL_ERR_SERVER)
	{
		if (err->code == CQL_ERRCODE_PROTOCOL_ERROR)
		{
			prefix_message(err, CQL_ERR_PROTOCOL_VERSION, "STARTUP refused");
			st = CQL_ERR_PROTOCOL_VERSION;
		}
		else if (err->code == CQL_ERRCODE_AUTH_ERROR)
		{
			prefix_message(err, CQL_ERR_AUTH, "authentication failed");
			st = CQL_ERR_AUTH;
		}
		goto done;
	}
	if (st != CQL_OK)
		goto done;

	switch (req->resp_opcode)
	{
		case CQL_OP_READY:
			if (c->require_auth)
			{
				/* the password is never part of this message */
				cql_conn_set_error(c, err, CQL_ERR_AUTH, 0,
								   "server at %s did not ask for authentication, "
								   "but authentication is required",
								   c->peer);
				st = CQL_ERR_AUTH;
				break;
			}
			st = CQL_OK;
			break;
		case CQL_OP_AUTHENTICATE:
			st = authenticate(c, req, deadline, err);
			break;
		default:
			cql_conn_set_error(c, err, CQL_ERR_MALFORMED, 0,
							   "unexpected %s answer to STARTUP from %s",
							   cql_opcode_name(req->resp_opcode), c->peer);
			st = CQL_ERR_MALFORMED;
			break;
	}

done:
	cql_request_free(req);
	cql_buf_free(&body);
	return st;
}

static cql_status
connect_attempt(cql_conn *c, int version, int64_t deadline, cql_error *err)
{
	cql_status	st;
	int			err_no = 0;

	/* one reservation per connection, kept across version fallbacks */
	if (c->fd_budget && !c->fd_acquired)
	{
		if (!c->fd_budget(c->fd_budget_ctx, true))
		{
			cql_conn_set_error(c, err, CQL_ERR_CONNECT, EMFILE,
							   "could not connect to %s: too many open files in this process",
							   c->peer);
			return CQL_ERR_CONNECT;
		}
		c->fd_acquired = true;
	}
	st = cql_sock_connect(c->host, c->port, deadline, c->wait, c->wait_ctx,
						  &c->fd, &err_no);
	if (st != CQL_OK)
	{
		if (st == CQL_ERR_RESOLVE)
			cql_conn_set_error(c, err, st, 0, "could not resolve host \"%s\": %s",
							   c->host, gai_strerror(-err_no));
		else if (st == CQL_ERR_TIMEOUT)
			cql_conn_set_error(c, err, st, ETIMEDOUT,
							   "timed out connecting to %s", c->peer);
		else if (st == CQL_ERR_INTERRUPTED)
			cql_conn_set_error(c, err, st, EINTR,
							   "interrupted while connecting to %s", c->peer);
		else
			cql_conn_set_error(c, err, st, err_no, "could not connect to %s: %s",
							   c->peer, err_no ? strerror(err_no) : cql_status_message(st));
		return st;
	}
	/* no STARTTLS in CQL: TLS starts with the connection's first byte */
	if (c->tls && (st = cql_tls_handshake(c, c->tls, deadline, err)) != CQL_OK)
		return st;
	if ((st = cql_conn_alloc_transport(c, err)) != CQL_OK)
		return st;
	return cql_handshake(c, version, deadline, err);
}

/*
 * cql_conn_open
 *		A connection from options, through the handshake (with the v5 -> v4
 *		fallback when no version is given); the initial USE is the session
 *		layer's (cql_connect in cql_session.c).  On failure nothing is
 *		returned and err names the peer.  err must not be NULL.
 */
cql_status
cql_conn_open(const cql_conn_options *o, cql_conn **out, cql_error *err)
{
	cql_conn   *c = NULL;
	cql_status	st;
	int64_t		deadline;

	*out = NULL;
	if ((st = cql_conn_new(o, &c, err)) != CQL_OK)
		return st;
	deadline = c->connect_timeout_ms > 0 ? cql_now_ms() + c->connect_timeout_ms : 0;

	st = connect_attempt(c, o->protocol_version ? o->protocol_version : 5,
						 deadline, err);
	if (o->protocol_version == 0 && st == CQL_ERR_PROTOCOL_VERSION)
	{
		/* the server closes after a version error: start over with v4 */
		cql_conn_reset_transport(c);
		cql_error_clear(err);
		st = connect_attempt(c, 4, deadline, err);
	}
	if (st != CQL_OK)
	{
		cql_conn_abandon(c, err);
		return st;
	}
	*out = c;
	return CQL_OK;
}

/*
 * cql_conn_abandon
 *		Close a connection that failed to open, naming its peer in err
 *		unless the error already names a host.
 */
void
cql_conn_abandon(cql_conn *c, cql_error *err)
{
	if (err->host[0] == '\0')
		snprintf(err->host, sizeof(err->host), "%s", c->peer);
	cql_conn_close(c);
}

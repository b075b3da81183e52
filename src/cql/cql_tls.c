/*-------------------------------------------------------------------------
 *
 * cql_tls.c
 *		TLS under the CQL transport (OpenSSL 3): the per-configuration
 *		context, the non-blocking handshake and encrypted reads and writes.
 *
 * The native protocol has no STARTTLS: a TLS client starts the handshake
 * with the first byte of the connection.  Everything here is non-blocking
 * and waits only through the caller's wait hook, like the plain socket
 * code, so cancel and deadlines work during a stalled handshake too.  A
 * read may want the socket writable (renegotiation, key update) and a
 * write readable: the connection remembers that (tls_wants) and the pump
 * waits for it.  Bytes OpenSSL has decrypted but the caller has not read
 * yet are invisible to poll(): cql_tls_pending() tells the pump not to
 * sleep while there are any.
 *
 * Modes have libpq's sslmode meanings: require encrypts without checking
 * the certificate (unless a root certificate is given: then, as in libpq,
 * it is verified like verify-ca); verify-ca checks the chain against the
 * root certificate; verify-full also checks that the certificate names the
 * host (DNS name or IP address SAN) we connected to.  TLS 1.2 at least.
 * Messages name options (sslrootcert, sslcert, sslkey), never the files'
 * contents or a key's passphrase.
 *
 * layer: transport
 *
 * IDENTIFICATION
 *		src/cql/cql_tls.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_conn_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct cql_tls_context
{
	const cql_allocator *alloc;
	SSL_CTX    *ctx;
	cql_ssl_mode mode;
	bool		verify;			/* check the chain */
	bool		verify_host;	/* and the name */
};

/*
 * openssl_reason
 *		The text of the oldest queued OpenSSL error (and clear the queue).
 */
static const char *
openssl_reason(char *buf, size_t cap)
{
	unsigned long e = ERR_get_error();
	unsigned long next;

	if (e == 0)
	{
		snprintf(buf, cap, "no details");
		return buf;
	}
	ERR_error_string_n(e, buf, cap);
	while ((next = ERR_get_error()) != 0)
		;
	/* "error:0A000086:SSL routines::certificate verify failed" -> reason */
	{
		const char *r = strrchr(buf, ':');

		if (r && r[1])
			return r + 1;
	}
	return buf;
}

/* ---------------------------------------------------------------------
 * Modes
 * ---------------------------------------------------------------------
 */
cql_status
cql_ssl_mode_parse(const char *s, cql_ssl_mode *out)
{
	static const struct
	{
		const char *name;
		cql_ssl_mode mode;
	}			modes[] = {
		{"disable", CQL_SSL_DISABLE},
		{"require", CQL_SSL_REQUIRE},
		{"verify-ca", CQL_SSL_VERIFY_CA},
		{"verify-full", CQL_SSL_VERIFY_FULL},
	};

	for (size_t i = 0; s && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(s, modes[i].name) == 0)
		{
			*out = modes[i].mode;
			return CQL_OK;
		}
	return CQL_ERR_INVALID_ARG;
}

const char *
cql_ssl_mode_name(cql_ssl_mode m)
{
	switch (m)
	{
		case CQL_SSL_DISABLE:
			return "disable";
		case CQL_SSL_REQUIRE:
			return "require";
		case CQL_SSL_VERIFY_CA:
			return "verify-ca";
		case CQL_SSL_VERIFY_FULL:
			return "verify-full";
	}
	return "?";
}

/* ---------------------------------------------------------------------
 * Context
 * ---------------------------------------------------------------------
 */

/* Passphrase callback: the configured password, never prompted for. */
static int
key_password_cb(char *buf, int size, int rwflag, void *userdata)
{
	const char *pw = (const char *) userdata;
	size_t		len;

	(void) rwflag;
	if (pw == NULL || size <= 0)
		return 0;
	len = strlen(pw);
	if (len >= (size_t) size)
		len = (size_t) size - 1;
	memcpy(buf, pw, len);
	buf[len] = '\0';
	return (int) len;
}

/*
 * file_problem
 *		Why a configured file cannot be used before OpenSSL even tries:
 *		missing or unreadable (the OS reason), or NULL when it can be read.
 */
static const char *
file_problem(const char *path)
{
	FILE	   *f = fopen(path, "r");

	if (f == NULL)
		return strerror(errno);
	fclose(f);
	return NULL;
}

/*
 * key_mode_problem
 *		libpq's rule for a private key file: when it belongs to us it must
 *		give group and others no access (0600 or less); when it belongs to
 *		root it may be readable by the group (0640, the usual way to share
 *		a key with a service user).  A key readable by others is refused
 *		rather than used: someone may already have copied it.  NULL when
 *		the file passes (or cannot be stat'ed: loading it then says why).
 */
static const char *
key_mode_problem(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return NULL;
	if ((sb.st_uid == geteuid() && (sb.st_mode & (S_IRWXG | S_IRWXO)) != 0) ||
		(sb.st_uid == 0 && (sb.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO)) != 0))
		return "the file has group or world access (it must have permissions u=rw (0600) or less if owned by the user reading it, or u=rw,g=r (0640) or less if owned by root)";
	return NULL;
}

/*
 * cql_tls_context_new
 *		One context per TLS configuration, shared by every connection that
 *		uses it (a cluster's control and per-host connections).  Loads the
 *		root certificate, and the client certificate and key when given
 *		(mutual TLS); a key that does not match the certificate, an
 *		unreadable file or bad PEM is an error naming the option.
 */
cql_status
cql_tls_context_new(const cql_tls_config *cfg, cql_tls_context **out, cql_error *err)
{
	cql_tls_context *t;
	char		reason[256];
	const char *why;

	*out = NULL;
	cql_error_clear(err);
	if (cfg == NULL || cfg->mode == CQL_SSL_DISABLE)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "TLS is disabled in this configuration");
		return CQL_ERR_INVALID_ARG;
	}
	if ((cfg->mode == CQL_SSL_VERIFY_CA || cfg->mode == CQL_SSL_VERIFY_FULL) &&
		(cfg->rootcert == NULL || cfg->rootcert[0] == '\0'))
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG,
					   "sslmode %s needs a root certificate (sslrootcert) to verify the server against",
					   cql_ssl_mode_name(cfg->mode));
		return CQL_ERR_INVALID_ARG;
	}
	if ((cfg->cert && cfg->cert[0]) != (cfg->key && cfg->key[0]))
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG,
					   "a client certificate needs both sslcert and sslkey");
		return CQL_ERR_INVALID_ARG;
	}

	t = cql_alloc0(cfg->alloc ? cfg->alloc : &cql_malloc_allocator, sizeof(*t));
	if (t == NULL)
	{
		cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
		return CQL_ERR_NOMEM;
	}
	t->alloc = cfg->alloc ? cfg->alloc : &cql_malloc_allocator;
	t->mode = cfg->mode;
	t->verify = cfg->mode != CQL_SSL_REQUIRE || (cfg->rootcert && cfg->rootcert[0]);
	t->verify_host = cfg->mode == CQL_SSL_VERIFY_FULL;
	ERR_clear_error();
	t->ctx = SSL_CTX_new(TLS_client_method());
	if (t->ctx == NULL ||
		!SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION))
	{
		cql_error_setf(err, CQL_ERR_TLS, "could not create a TLS context: %s",
					   openssl_reason(reason, sizeof(reason)));
		cql_tls_context_free(t);
		return CQL_ERR_TLS;
	}
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
					 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);

	if (cfg->rootcert && cfg->rootcert[0])
	{
		if ((why = file_problem(cfg->rootcert)) != NULL ||
			SSL_CTX_load_verify_locations(t->ctx, cfg->rootcert, NULL) != 1)
		{
			cql_error_setf(err, CQL_ERR_TLS,
						   "could not load the root certificate (sslrootcert): %s",
						   why ? why : openssl_reason(reason, sizeof(reason)));
			cql_tls_context_free(t);
			return CQL_ERR_TLS;
		}
	}
	SSL_CTX_set_verify(t->ctx, t->verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);

	if (cfg->cert && cfg->cert[0])
	{
		if ((why = file_problem(cfg->cert)) != NULL ||
			SSL_CTX_use_certificate_chain_file(t->ctx, cfg->cert) != 1)
		{
			cql_error_setf(err, CQL_ERR_TLS,
						   "could not load the client certificate (sslcert): %s",
						   why ? why : openssl_reason(reason, sizeof(reason)));
			cql_tls_context_free(t);
			return CQL_ERR_TLS;
		}
		SSL_CTX_set_default_passwd_cb(t->ctx, key_password_cb);
		SSL_CTX_set_default_passwd_cb_userdata(t->ctx, (void *) cfg->key_password);
		if ((why = file_problem(cfg->key)) != NULL ||
			(why = key_mode_problem(cfg->key)) != NULL ||
			SSL_CTX_use_PrivateKey_file(t->ctx, cfg->key, SSL_FILETYPE_PEM) != 1)
		{
			if (why == NULL)
				why = openssl_reason(reason, sizeof(reason));
			if (strstr(why, "key values mismatch"))
				cql_error_setf(err, CQL_ERR_TLS,
							   "the client key (sslkey) does not match the client certificate (sslcert)");
			else
				cql_error_setf(err, CQL_ERR_TLS,
							   "could not load the client key (sslkey): %s", why);
			SSL_CTX_set_default_passwd_cb_userdata(t->ctx, NULL);
			cql_tls_context_free(t);
			return CQL_ERR_TLS;
		}
		/* the passphrase is not kept: the key is loaded */
		SSL_CTX_set_default_passwd_cb_userdata(t->ctx, NULL);
		if (SSL_CTX_check_private_key(t->ctx) != 1)
		{
			cql_error_setf(err, CQL_ERR_TLS,
						   "the client key (sslkey) does not match the client certificate (sslcert)");
			ERR_clear_error();
			cql_tls_context_free(t);
			return CQL_ERR_TLS;
		}
	}
	*out = t;
	return CQL_OK;
}

void
cql_tls_context_free(cql_tls_context *t)
{
	if (t == NULL)
		return;
	if (t->ctx)
		SSL_CTX_free(t->ctx);
	cql_free(t->alloc, t);
}

/* ---------------------------------------------------------------------
 * Connection
 * ---------------------------------------------------------------------
 */

/* ---------------------------------------------------------------------
 * The socket under a TLS session
 *
 * OpenSSL's socket BIO writes with plain write(): a peer that has gone
 * away then raises SIGPIPE, which kills a tool or a test program (a
 * backend ignores the signal).  Our BIO reads with recv() and writes with
 * send(MSG_NOSIGNAL), as the plain socket path does (cql_sock_send); it is
 * built once per process.
 * ---------------------------------------------------------------------
 */
static BIO_METHOD *sock_bio_method;
static pthread_once_t sock_bio_once = PTHREAD_ONCE_INIT;

/* The descriptor a BIO of ours carries. */
static int
sock_bio_fd(BIO *b)
{
	return (int) (intptr_t) BIO_get_data(b);
}

/*
 * sock_bio_write / sock_bio_read
 *		send()/recv() on the descriptor; would-block becomes OpenSSL's
 *		"retry", anything else a failure with errno kept for the caller.
 */
static int
sock_bio_write(BIO *b, const char *buf, int len)
{
	ssize_t		rc;

	BIO_clear_retry_flags(b);
	rc = send(sock_bio_fd(b), buf, (size_t) len, MSG_NOSIGNAL);
	if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(b);
	return (int) rc;
}

static int
sock_bio_read(BIO *b, char *buf, int len)
{
	ssize_t		rc;

	BIO_clear_retry_flags(b);
	rc = recv(sock_bio_fd(b), buf, (size_t) len, 0);
	if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_read(b);
	return (int) rc;
}

/*
 * sock_bio_ctrl
 *		The controls OpenSSL uses on a socket: flush (nothing buffered
 *		here) and the descriptor.  Everything else is unsupported (0).
 */
static long
sock_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	switch (cmd)
	{
		case BIO_CTRL_FLUSH:
			return 1;
		case BIO_C_GET_FD:
			if (ptr)
				*(int *) ptr = sock_bio_fd(b);
			return sock_bio_fd(b);
		default:
			return 0;
	}
}

/* BIO creation: mark it ready (the descriptor is set by attach_socket). */
static int
sock_bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/*
 * make_sock_bio_method
 *		Build the method once per process; on failure it stays NULL and
 *		every TLS connect fails cleanly.
 */
static void
make_sock_bio_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK |
								 BIO_TYPE_DESCRIPTOR, "cql socket");

	if (m == NULL)
		return;
	if (!BIO_meth_set_write(m, sock_bio_write) ||
		!BIO_meth_set_read(m, sock_bio_read) ||
		!BIO_meth_set_ctrl(m, sock_bio_ctrl) ||
		!BIO_meth_set_create(m, sock_bio_create))
	{
		BIO_meth_free(m);
		return;
	}
	sock_bio_method = m;
}

/*
 * attach_socket
 *		Put fd under the session through our BIO (the socket stays ours
 *		to close).  False when OpenSSL could not make the BIO.
 */
static bool
attach_socket(SSL *ssl, int fd)
{
	BIO		   *bio;

	(void) pthread_once(&sock_bio_once, make_sock_bio_method);
	if (sock_bio_method == NULL || (bio = BIO_new(sock_bio_method)) == NULL)
		return false;
	BIO_set_data(bio, (void *) (intptr_t) fd);
	SSL_set_bio(ssl, bio, bio);
	return true;
}

/*
 * describe_reason
 *		"<what> <peer> failed: <OpenSSL's reason>", with what the reason
 *		usually means: a peer that does not speak TLS, or one that refused
 *		us (no or a wrong client certificate).
 */
static void
describe_reason(const cql_conn *c, const char *what, const char *reason,
				char *msg, size_t cap)
{
	if (strstr(reason, "wrong version number") || strstr(reason, "packet length too long") ||
		strstr(reason, "record layer failure"))
		snprintf(msg, cap, "%s %s failed: %s (the server does not speak TLS on this port?)",
				 what, c->peer, reason);
	else if (strstr(reason, "certificate required") || strstr(reason, "handshake failure") ||
			 strstr(reason, "bad certificate"))
		snprintf(msg, cap, "%s %s failed: the server refused the client: %s (does it require a client certificate, sslcert/sslkey?)",
				 what, c->peer, reason);
	else
		snprintf(msg, cap, "%s %s failed: %s", what, c->peer, reason);
}

/*
 * tls_failure
 *		Describe a failed TLS operation on c: the certificate check's
 *		result when that is what failed, else OpenSSL's reason, else the
 *		socket's.  Returns the status to fail with.
 */
static cql_status
tls_failure(cql_conn *c, SSL *ssl, int ret, bool handshake, char *msg, size_t cap)
{
	int			code = SSL_get_error(ssl, ret);
	long		vr = SSL_get_verify_result(ssl);
	char		buf[256];
	const char *reason;
	const char *what = handshake ? "TLS handshake with" : "TLS connection to";

	if (handshake && vr != X509_V_OK)
	{
		snprintf(msg, cap, "%s %s failed: server certificate verify failed: %s",
				 what, c->peer, X509_verify_cert_error_string(vr));
		ERR_clear_error();
		return CQL_ERR_TLS;
	}
	if (code == SSL_ERROR_ZERO_RETURN ||
		(code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && errno == 0))
	{
		snprintf(msg, cap, "%s %s failed: the server closed the connection%s",
				 what, c->peer,
				 handshake ? " during the handshake (is client encryption enabled on this port?)" : "");
		return handshake ? CQL_ERR_TLS : CQL_ERR_CLOSED;
	}
	if (code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
	{
		snprintf(msg, cap, "%s %s failed: %s", what, c->peer, strerror(errno));
		return handshake ? CQL_ERR_TLS : CQL_ERR_IO;
	}
	reason = openssl_reason(buf, sizeof(buf));
	describe_reason(c, what, reason, msg, cap);
	return CQL_ERR_TLS;
}

/*
 * cql_tls_handshake
 *		Wrap c's connected socket in TLS and complete the handshake before
 *		'deadline', waiting through the wait hook for what OpenSSL wants.
 *		The server name for SNI and verify-full is c->tls_server_name or
 *		the host connected to; a numeric address is checked against the
 *		certificate's IP addresses and sent without SNI.
 */
cql_status
cql_tls_handshake(cql_conn *c, const cql_tls_context *t, int64_t deadline,
				  cql_error *err)
{
	SSL		   *ssl;
	const char *name = c->tls_server_name ? c->tls_server_name : c->host;
	unsigned char ipbuf[16];
	bool		numeric = inet_pton(AF_INET, name, ipbuf) == 1 ||
		inet_pton(AF_INET6, name, ipbuf) == 1;
	char		msg[sizeof(err->message)];

	ERR_clear_error();
	ssl = SSL_new(t->ctx);
	if (ssl == NULL || !attach_socket(ssl, c->fd))
	{
		char		reason[256];

		if (ssl)
			SSL_free(ssl);
		cql_conn_set_error(c, err, CQL_ERR_TLS, 0, "could not start TLS with %s: %s",
						   c->peer, openssl_reason(reason, sizeof(reason)));
		return CQL_ERR_TLS;
	}
	if (!numeric)
		SSL_set_tlsext_host_name(ssl, name);
	if (t->verify_host)
	{
		int			okset = numeric
			? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name)
			: SSL_set1_host(ssl, name);

		if (okset != 1)
		{
			SSL_free(ssl);
			cql_conn_set_error(c, err, CQL_ERR_TLS, 0,
							   "cannot verify the server name \"%s\"", name);
			return CQL_ERR_TLS;
		}
		if (!numeric)
			SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	}
	c->ssl = ssl;

	for (;;)
	{
		int			ret,
					code,
					events,
					left;
		cql_status	st;

		errno = 0;
		ret = SSL_connect(ssl);
		if (ret == 1)
			return CQL_OK;
		code = SSL_get_error(ssl, ret);
		if (code == SSL_ERROR_WANT_READ)
			events = CQL_WAIT_READ;
		else if (code == SSL_ERROR_WANT_WRITE)
			events = CQL_WAIT_WRITE;
		else
		{
			st = tls_failure(c, ssl, ret, true, msg, sizeof(msg));
			cql_conn_set_error(c, err, st, 0, "%s", msg);
			return st;
		}
		left = cql_remaining_ms(deadline);
		if (left == 0)
		{
			cql_conn_set_error(c, err, CQL_ERR_TIMEOUT, ETIMEDOUT,
							   "timed out in the TLS handshake with %s", c->peer);
			return CQL_ERR_TIMEOUT;
		}
		st = c->wait(c->wait_ctx, c->fd, events, left);
		if (st == CQL_ERR_INTERRUPTED)
		{
			cql_conn_set_error(c, err, st, EINTR,
							   "interrupted during the TLS handshake with %s", c->peer);
			return st;
		}
		if (st != CQL_OK && st != CQL_ERR_TIMEOUT)
		{
			cql_conn_set_error(c, err, st, 0, "wait for server at %s failed: %s",
							   c->peer, cql_status_message(st));
			return st;
		}
	}
}

/*
 * peer_said_why
 *		After a write failed: did the server send an alert before it closed?
 *		With TLS 1.3 a node that requires a client certificate checks it
 *		after the handshake, sends "certificate required" and closes; our
 *		first request may then meet a reset instead of the alert, which is
 *		still in the receive queue (data before a reset stays readable).
 *		Read it without waiting; true with the alert described in msg.
 */
static bool
peer_said_why(cql_conn *c, char *msg, size_t cap)
{
	uint8_t		scratch[256];
	size_t		got = 0;
	int			ret;
	char		buf[256];
	const char *reason;

	ERR_clear_error();
	errno = 0;
	ret = SSL_read_ex(c->ssl, scratch, sizeof(scratch), &got);
	if (ret == 1 || SSL_get_error(c->ssl, ret) != SSL_ERROR_SSL ||
		ERR_peek_error() == 0)
	{
		ERR_clear_error();
		return false;
	}
	reason = openssl_reason(buf, sizeof(buf));
	if (strstr(reason, "alert") == NULL)
		return false;
	describe_reason(c, "TLS connection to", reason, msg, cap);
	return true;
}

/*
 * cql_tls_send
 *		Encrypt and send what can be sent now (*sent may be 0); like
 *		cql_sock_send.  A write that needs the socket readable first sets
 *		c->tls_wants.
 */
cql_status
cql_tls_send(cql_conn *c, const uint8_t *p, size_t n, size_t *sent, int *err_no)
{
	size_t		done = 0;
	int			ret;

	*sent = 0;
	c->tls_wants = 0;
	if (n == 0)
		return CQL_OK;
	errno = 0;
	ret = SSL_write_ex(c->ssl, p, n, &done);
	if (ret == 1)
	{
		*sent = done;
		return CQL_OK;
	}
	switch (SSL_get_error(c->ssl, ret))
	{
		case SSL_ERROR_WANT_WRITE:
			return CQL_OK;
		case SSL_ERROR_WANT_READ:
			c->tls_wants = CQL_WAIT_READ;
			return CQL_OK;
		default:
			{
				char		msg[512];
				int			sys_errno = errno;
				cql_status	st;

				if (peer_said_why(c, msg, sizeof(msg)))
					st = CQL_ERR_TLS;
				else
				{
					errno = sys_errno;
					st = tls_failure(c, c->ssl, ret, false, msg, sizeof(msg));
				}
				*err_no = sys_errno;
				cql_conn_fail(c, st, 0, "%s", msg);
				return st;
			}
	}
}

/*
 * cql_tls_recv
 *		Read decrypted bytes (*got = 0: nothing now); like cql_sock_recv.
 *		A read that needs the socket writable first sets c->tls_wants.
 *		A TLS alert from the server (e.g. "certificate required" after a
 *		TLS 1.3 handshake without client certificate) breaks the connection
 *		with its reason.
 */
cql_status
cql_tls_recv(cql_conn *c, uint8_t *p, size_t cap, size_t *got, int *err_no)
{
	size_t		done = 0;
	int			ret;

	*got = 0;
	c->tls_wants = 0;
	errno = 0;
	ret = SSL_read_ex(c->ssl, p, cap, &done);
	if (ret == 1)
	{
		*got = done;
		return CQL_OK;
	}
	switch (SSL_get_error(c->ssl, ret))
	{
		case SSL_ERROR_WANT_READ:
			return CQL_OK;
		case SSL_ERROR_WANT_WRITE:
			c->tls_wants = CQL_WAIT_WRITE;
			return CQL_OK;
		default:
			{
				char		msg[512];
				cql_status	st = tls_failure(c, c->ssl, ret, false, msg, sizeof(msg));

				*err_no = errno;
				cql_conn_fail(c, st, 0, "%s", msg);
				return st;
			}
	}
}

/* Decrypted bytes OpenSSL holds that the caller has not read yet? */
bool
cql_tls_pending(const cql_conn *c)
{
	return c->ssl != NULL && SSL_has_pending((SSL *) c->ssl) == 1;
}

/*
 * cql_tls_close
 *		Send close_notify if the socket takes it now (never waits), then
 *		free the TLS state.  The socket is closed by the caller.
 */
void
cql_tls_close(cql_conn *c)
{
	if (c->ssl == NULL)
		return;
	if (c->broken == CQL_OK)
		(void) SSL_shutdown((SSL *) c->ssl);
	ERR_clear_error();
	SSL_free((SSL *) c->ssl);
	c->ssl = NULL;
	c->tls_wants = 0;
}

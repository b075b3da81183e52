/*-------------------------------------------------------------------------
 *
 * cql_socket.c
 *		Non-blocking TCP sockets, the monotonic clock and the default
 *		poll()-based wait hook of the CQL connection layer.
 *
 * Nothing here blocks: every wait goes through the caller's wait hook, so
 * that inside a PostgreSQL backend the glue can wait on its latch and the
 * socket together and stop when a query cancel is pending.  That includes
 * name resolution: a host name (not a numeric address) is resolved with
 * glibc's getaddrinfo_a() while the hook is called every few milliseconds,
 * so a stalled DNS server cannot outlast the connect timeout or a cancel.
 * Elsewhere (no getaddrinfo_a) resolution falls back to getaddrinfo(),
 * which may block; numeric addresses never touch the network.
 *
 * layer: transport
 *
 * IDENTIFICATION
 *		src/cql/cql_socket.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* getaddrinfo_a */
#endif
#include "cql_conn_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * cql_now_ms
 *		Milliseconds on the monotonic clock.  Deadlines must not move when
 *		the wall clock is stepped.
 */
int64_t
cql_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * cql_remaining_ms
 *		Time left until 'deadline' (0 when passed); -1 for "no deadline".
 */
int
cql_remaining_ms(int64_t deadline)
{
	int64_t		left;

	if (deadline <= 0)
		return -1;
	left = deadline - cql_now_ms();
	if (left <= 0)
		return 0;
	if (left > INT32_MAX)
		return INT32_MAX;
	return (int) left;
}

/*
 * cql_wait_poll
 *		Default wait hook: poll() on the one socket.  EINTR counts as a
 *		spurious wakeup (the caller loops and re-checks its deadline).
 */
cql_status
cql_wait_poll(void *ctx, int fd, int events, int timeout_ms)
{
	struct pollfd pfd;
	int			rc;

	(void) ctx;
	pfd.fd = fd;
	pfd.events = 0;
	pfd.revents = 0;
	if (events & CQL_WAIT_READ)
		pfd.events |= POLLIN;
	if (events & CQL_WAIT_WRITE)
		pfd.events |= POLLOUT;
	rc = poll(&pfd, 1, timeout_ms);
	if (rc == 0)
		return CQL_ERR_TIMEOUT;
	/* errors and hangups are reported by the following recv/send */
	return CQL_OK;
}

static void
set_sock_options(int fd)
{
	int			one = 1;

	/*
	 * Requests are small and latency-bound; Nagle would hold the second
	 * pipelined request back until the first is acknowledged.
	 */
	(void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Detect dead peers on idle pooled connections eventually. */
	(void) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
#ifdef TCP_KEEPIDLE
	{
		int			idle = 60,
					intvl = 10,
					cnt = 6;

		(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
		(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
		(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	}
#endif
}

/*
 * connect_one
 *		Non-blocking connect to one resolved address, waiting through the
 *		hook until 'deadline'.
 */
static cql_status
connect_one(const struct addrinfo *ai, int64_t deadline,
			cql_wait_fn wait, void *wait_ctx, int *fd_out, int *err_no)
{
	int			fd;
	int			flags;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
	{
		*err_no = errno;
		return CQL_ERR_CONNECT;
	}
	flags = fcntl(fd, F_GETFL, 0);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
	{
		*err_no = errno;
		close(fd);
		return CQL_ERR_CONNECT;
	}
	set_sock_options(fd);

	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
	{
		if (errno != EINPROGRESS && errno != EINTR)
		{
			*err_no = errno;
			close(fd);
			return CQL_ERR_CONNECT;
		}
		for (;;)
		{
			struct pollfd pfd;
			int			soerr = 0;
			socklen_t	len = sizeof(soerr);
			int			left = cql_remaining_ms(deadline);
			cql_status	st;

			if (left == 0)
			{
				*err_no = ETIMEDOUT;
				close(fd);
				return CQL_ERR_TIMEOUT;
			}
			st = wait(wait_ctx, fd, CQL_WAIT_WRITE, left);
			if (st == CQL_ERR_INTERRUPTED)
			{
				*err_no = EINTR;
				close(fd);
				return st;
			}
			if (st != CQL_OK && st != CQL_ERR_TIMEOUT)
			{
				*err_no = 0;
				close(fd);
				return st;
			}

			/* Spurious wakeups are allowed: check writability ourselves. */
			pfd.fd = fd;
			pfd.events = POLLOUT;
			pfd.revents = 0;
			if (poll(&pfd, 1, 0) <= 0)
				continue;
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
				soerr = errno;
			if (soerr != 0)
			{
				*err_no = soerr;
				close(fd);
				return CQL_ERR_CONNECT;
			}
			break;
		}
	}
	*fd_out = fd;
	return CQL_OK;
}

#ifdef __GLIBC__
/* A lookup in flight: malloc'd, since a resolver thread may outlive us */
typedef struct AsyncLookup
{
	struct gaicb cb;
	struct addrinfo hints;
	char	   *host;
	char		port[16];
} AsyncLookup;

static void
lookup_free(AsyncLookup *l)
{
	free(l->host);
	free(l);
}
#endif

/*
 * resolve
 *		getaddrinfo() that waits through the hook.  Returns the getaddrinfo
 *		code; *st is CQL_ERR_TIMEOUT or CQL_ERR_INTERRUPTED when the wait
 *		ended first (the lookup is cancelled; if the resolver cannot cancel
 *		it, its small request block is left to it rather than freed under
 *		its feet), else CQL_OK.
 */
static int
resolve(const char *host, const char *port, const struct addrinfo *hints,
		int64_t deadline, cql_wait_fn wait, void *wait_ctx,
		struct addrinfo **res, cql_status *st)
{
	struct addrinfo numeric = *hints;
	int			rc;

	*st = CQL_OK;
	*res = NULL;

	/* a numeric address needs no lookup */
	numeric.ai_flags |= AI_NUMERICHOST;
	rc = getaddrinfo(host, port, &numeric, res);
	if (rc != EAI_NONAME)
		return rc;
	*res = NULL;

#ifdef __GLIBC__
	{
		AsyncLookup *l = calloc(1, sizeof(AsyncLookup));
		struct gaicb *list[1];

		if (l == NULL || (l->host = strdup(host)) == NULL)
		{
			free(l);
			return EAI_MEMORY;
		}
		l->hints = *hints;
		snprintf(l->port, sizeof(l->port), "%s", port);
		l->cb.ar_name = l->host;
		l->cb.ar_service = l->port;
		l->cb.ar_request = &l->hints;
		list[0] = &l->cb;
		if (getaddrinfo_a(GAI_NOWAIT, list, 1, NULL) != 0)
		{
			lookup_free(l);
			return getaddrinfo(host, port, hints, res);
		}
		for (;;)
		{
			int			left = cql_remaining_ms(deadline);
			cql_status	ws;

			rc = gai_error(&l->cb);
			if (rc != EAI_INPROGRESS)
				break;
			if (left == 0)
				ws = CQL_ERR_TIMEOUT;
			else
				ws = wait(wait_ctx, -1, 0, (left < 0 || left > 20) ? 20 : left);
			if (ws == CQL_ERR_TIMEOUT && cql_remaining_ms(deadline) != 0)
				continue;		/* just the polling interval */
			if (ws != CQL_OK)
			{
				if (gai_cancel(&l->cb) == EAI_CANCELED || gai_error(&l->cb) != EAI_INPROGRESS)
				{
					if (gai_error(&l->cb) == 0)
						freeaddrinfo(l->cb.ar_result);
					lookup_free(l);
				}
				*st = ws;
				return EAI_AGAIN;
			}
		}
		*res = l->cb.ar_result;
		lookup_free(l);
		return rc;
	}
#else
	return getaddrinfo(host, port, hints, res);
#endif
}

/*
 * cql_sock_resolve
 *		The addresses of 'host' (numeric or a name, every family), waiting
 *		through the hook like a connect does.  Up to 'max' addresses go to
 *		families[]/addrs[] (4 or 16 bytes used); *n gets how many.
 *		CQL_ERR_RESOLVE (with *err_no the negated getaddrinfo code),
 *		CQL_ERR_TIMEOUT or CQL_ERR_INTERRUPTED on failure.
 */
cql_status
cql_sock_resolve(const char *host, int64_t deadline, cql_wait_fn wait,
				 void *wait_ctx, int *families, uint8_t (*addrs)[16], int max,
				 int *n, int *err_no)
{
	struct addrinfo hints;
	struct addrinfo *res = NULL;
	cql_status	st;
	int			rc;

	*n = 0;
	*err_no = 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	rc = resolve(host, "9042", &hints, deadline, wait, wait_ctx, &res, &st);
	if (st != CQL_OK)
		return st;
	if (rc != 0)
	{
		*err_no = -rc;
		return CQL_ERR_RESOLVE;
	}
	for (struct addrinfo *ai = res; ai != NULL && *n < max; ai = ai->ai_next)
	{
		if (ai->ai_family == AF_INET)
		{
			families[*n] = AF_INET;
			memcpy(addrs[*n], &((struct sockaddr_in *) ai->ai_addr)->sin_addr, 4);
			(*n)++;
		}
		else if (ai->ai_family == AF_INET6)
		{
			families[*n] = AF_INET6;
			memcpy(addrs[*n], &((struct sockaddr_in6 *) ai->ai_addr)->sin6_addr, 16);
			(*n)++;
		}
	}
	freeaddrinfo(res);
	return CQL_OK;
}

/*
 * cql_sock_connect
 *		Resolve host:port and connect to the first address that answers.
 *
 * On failure *err_no holds the errno of the last attempt (or a getaddrinfo
 * code negated, for CQL_ERR_RESOLVE) so the caller can build a message.
 */
cql_status
cql_sock_connect(const char *host, int port, int64_t deadline,
				 cql_wait_fn wait, void *wait_ctx, int *fd_out, int *err_no)
{
	struct addrinfo hints;
	struct addrinfo *res = NULL;
	struct addrinfo *ai;
	char		portstr[16];
	int			rc;
	cql_status	st = CQL_ERR_CONNECT;

	*fd_out = -1;
	*err_no = 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%d", port);

	rc = resolve(host, portstr, &hints, deadline, wait, wait_ctx, &res, &st);
	if (st != CQL_OK)
		return st;
	if (rc != 0 || res == NULL)
	{
		*err_no = -rc;
		return CQL_ERR_RESOLVE;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next)
	{
		st = connect_one(ai, deadline, wait, wait_ctx, fd_out, err_no);
		if (st == CQL_OK || st == CQL_ERR_TIMEOUT || st == CQL_ERR_INTERRUPTED)
			break;
	}
	freeaddrinfo(res);
	return st;
}

/*
 * cql_sock_send
 *		Write what the kernel accepts now.  *sent may be 0 (would block).
 */
cql_status
cql_sock_send(int fd, const uint8_t *p, size_t n, size_t *sent, int *err_no)
{
	ssize_t		rc;

	*sent = 0;
	for (;;)
	{
		rc = send(fd, p, n, MSG_NOSIGNAL);
		if (rc >= 0)
		{
			*sent = (size_t) rc;
			return CQL_OK;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return CQL_OK;
		*err_no = errno;
		if (errno == EPIPE || errno == ECONNRESET)
			return CQL_ERR_CLOSED;
		return CQL_ERR_IO;
	}
}

/*
 * cql_sock_recv
 *		Read what is available now.  *got == 0 means "would block"; an
 *		orderly shutdown by the peer is CQL_ERR_CLOSED.
 */
cql_status
cql_sock_recv(int fd, uint8_t *p, size_t cap, size_t *got, int *err_no)
{
	ssize_t		rc;

	*got = 0;
	for (;;)
	{
		rc = recv(fd, p, cap, 0);
		if (rc > 0)
		{
			*got = (size_t) rc;
			return CQL_OK;
		}
		if (rc == 0)
		{
			*err_no = 0;
			return CQL_ERR_CLOSED;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return CQL_OK;
		*err_no = errno;
		if (errno == ECONNRESET)
			return CQL_ERR_CLOSED;
		return CQL_ERR_IO;
	}
}

void
cql_sock_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

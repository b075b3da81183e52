/*-------------------------------------------------------------------------
 *
 * itest.h
 *		Shared helpers for the integration tests of the CQL client library:
 *		connection settings from the environment, a counting allocator,
 *		and a tiny fault-injecting TCP proxy that runs in a thread.
 *
 * Environment: CQL_HOST (127.0.0.1), CQL_PORT (9042), CQL_AUTH_HOST
 * (127.0.0.4), CQL_AUTH_PORT (9042), CQL_USER / CQL_PASSWORD
 * (cassandra / cassandra).  An unreachable node is a test FAILURE, never a
 * skip: these programs exist to prove the library works against a server.
 *
 * IDENTIFICATION
 *		tests/integration/itest.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_ITEST_H
#define CQL_ITEST_H

#include "counting_alloc.h"
#include "tap.h"
#include "cql_conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <unistd.h>

static inline const char *
itest_env(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return (v && *v) ? v : dflt;
}

static inline const char *itest_host(void) { return itest_env("CQL_HOST", "127.0.0.1"); }
static inline int itest_port(void) { return atoi(itest_env("CQL_PORT", "9042")); }
static inline const char *itest_auth_host(void) { return itest_env("CQL_AUTH_HOST", "127.0.0.4"); }
static inline int itest_auth_port(void) { return atoi(itest_env("CQL_AUTH_PORT", "9042")); }
static inline const char *itest_user(void) { return itest_env("CQL_USER", "cassandra"); }
static inline const char *itest_password(void) { return itest_env("CQL_PASSWORD", "cassandra"); }

/* Options for the plain (no auth) node with test-friendly timeouts. */
static inline void
itest_options(cql_conn_options *o, int version, cql_compression comp)
{
	cql_conn_options_init(o);
	o->host = itest_host();
	o->port = itest_port();
	o->protocol_version = version;
	o->compression = comp;
	o->connect_timeout_ms = 10000;
	o->request_timeout_ms = 60000;
	o->driver_name = "cql_fdw-itest";
	o->driver_version = "0.1";
}

/* Print an error as a TAP diagnostic ('what' cut at 200 bytes: it may be a
 * long statement, a batch). */
static inline void
itest_diag_error(const char *what, cql_status st, const cql_error *err)
{
	diag("%.200s: %s (code 0x%04x): %s [%s]", what, cql_status_message(st),
		 (unsigned) err->code, err->message, err->host);
}

/*
 * Connect or bail out: without a node nothing else can be meaningfully
 * tested, so this fails the test and ends the program with a failing
 * exit status.
 */
static inline cql_conn *
itest_connect_or_die(const cql_conn_options *o)
{
	cql_conn   *c = NULL;
	cql_error	err;
	cql_status	st;

	st = cql_connect(o, &c, &err);
	if (st != CQL_OK)
	{
		ok(0, "connect to %s:%d", o->host, o->port);
		itest_diag_error("connect", st, &err);
		if (tap_planned < 0)
			printf("1..%d\n", tap_count);
		exit(1);
	}
	return c;
}

/*
 * Wait until every node reports the coordinator's schema version: on a
 * multi-node test bed a statement right after DDL may otherwise reach a
 * replica that does not know the table yet (INCOMPATIBLE_SCHEMA).  Gives up
 * after ~20 s (a down peer never agrees).
 */
static inline int
itest_schema_agree(cql_conn *c)
{
	for (int attempt = 0; attempt < 100; attempt++)
	{
		cql_result	local,
					peers;
		cql_error	err;
		int			agree = 0;

		if (cql_query(c, "SELECT schema_version FROM system.local", NULL, &local, &err) != CQL_OK)
			return 0;
		if (cql_query(c, "SELECT schema_version FROM system.peers", NULL, &peers, &err) == CQL_OK)
		{
			const cql_elem *mine = local.rows_count == 1 ? cql_result_cell(&local, 0, 0) : NULL;

			agree = mine != NULL && mine->n == 16;
			for (int32_t r = 0; agree && r < peers.rows_count; r++)
			{
				const cql_elem *e = cql_result_cell(&peers, r, 0);

				if (e->n == 16 && memcmp(e->p, mine->p, 16) != 0)
					agree = 0;
			}
			cql_result_free(&peers);
		}
		cql_result_free(&local);
		if (agree)
			return 1;
		usleep(200 * 1000);
	}
	diag("schema agreement not reached");
	return 0;
}

/* Run a statement and expect success; the result is freed.  After DDL,
 * wait for schema agreement. */
static inline int
itest_exec(cql_conn *c, const char *cql)
{
	cql_result	res;
	cql_error	err;
	cql_status	st;

	st = cql_query(c, cql, NULL, &res, &err);
	if (st != CQL_OK)
		itest_diag_error(cql, st, &err);
	else
	{
		if (res.kind == CQL_RESULT_SCHEMA_CHANGE)
			itest_schema_agree(c);
		cql_result_free(&res);
	}
	return st == CQL_OK;
}

/* Create a fresh SimpleStrategy RF 1 keyspace and USE it. */
static inline int
itest_keyspace(cql_conn *c, const char *ks)
{
	char		q[512];

	snprintf(q, sizeof(q),
			 "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
			 "{'class': 'SimpleStrategy', 'replication_factor': 1}", ks);
	if (!itest_exec(c, q))
		return 0;
	snprintf(q, sizeof(q), "USE %s", ks);
	return itest_exec(c, q);
}

/* ---------------------------------------------------------------------
 * Fault-injecting proxy.  One thread, poll() loop; forwards bytes between
 * each accepted client and a fresh upstream connection until the test
 * flips the mode:
 *	PASS	forward both ways
 *	STALL	stop reading from both sides (the client sees silence)
 *	GARBAGE	send 'garbage' to every client once, then drop server output
 *	RESET	close every client with SO_LINGER 0 (TCP RST)
 * With refuse_v5 set, a client whose first envelope is v5 gets the
 * Protocol error an old (v4-only) server sends, and is disconnected.
 * ---------------------------------------------------------------------
 */
enum
{
	ITEST_PROXY_PASS = 0,
	ITEST_PROXY_STALL,
	ITEST_PROXY_GARBAGE,
	ITEST_PROXY_RESET
};

#define ITEST_PROXY_MAXPAIRS 16

typedef struct itest_proxy
{
	int			listen_fd;
	int			port;
	struct sockaddr_in upstream;
	_Atomic int mode;
	_Atomic int stop;
	_Atomic int refuse_v5;
	unsigned char garbage[256];
	size_t		garbage_len;
	pthread_t	thread;
	int			cfd[ITEST_PROXY_MAXPAIRS];
	int			sfd[ITEST_PROXY_MAXPAIRS];
	int			garbage_sent[ITEST_PROXY_MAXPAIRS];
	int			first_seen[ITEST_PROXY_MAXPAIRS];
	_Atomic int refused;		/* v5 attempts refused */
} itest_proxy;

/* ERROR 0x000A as Cassandra 3.x answers a v5 envelope, then close. */
static void
itest_proxy_refuse(int fd)
{
	static const char msg[] = "Invalid or unsupported protocol version (5); "
		"supported versions are (3/v3, 4/v4, 5/v5-beta)";
	unsigned char out[128];
	size_t		mlen = sizeof(msg) - 1;
	size_t		blen = 4 + 2 + mlen;

	out[0] = 0x84;
	out[1] = 0;
	out[2] = 0;
	out[3] = 0;
	out[4] = 0x00;
	out[5] = out[6] = 0;
	out[7] = (unsigned char) (blen >> 8);
	out[8] = (unsigned char) blen;
	out[9] = out[10] = out[11] = 0;
	out[12] = 0x0A;
	out[13] = (unsigned char) (mlen >> 8);
	out[14] = (unsigned char) mlen;
	memcpy(out + 15, msg, mlen);
	if (write(fd, out, 15 + mlen) < 0)
		return;
}

static void
itest_proxy_drop(itest_proxy *p, int i, int rst)
{
	if (rst && p->cfd[i] >= 0)
	{
		struct linger lg = {1, 0};

		setsockopt(p->cfd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	if (p->cfd[i] >= 0)
		close(p->cfd[i]);
	if (p->sfd[i] >= 0)
		close(p->sfd[i]);
	p->cfd[i] = p->sfd[i] = -1;
}

static void *
itest_proxy_main(void *arg)
{
	itest_proxy *p = arg;
	unsigned char buf[65536];

	while (!atomic_load(&p->stop))
	{
		struct pollfd pf[1 + 2 * ITEST_PROXY_MAXPAIRS];
		int			n = 0;
		int			mode = atomic_load(&p->mode);

		pf[n].fd = p->listen_fd;
		pf[n].events = POLLIN;
		n++;
		for (int i = 0; i < ITEST_PROXY_MAXPAIRS; i++)
		{
			if (p->cfd[i] < 0)
				continue;
			if (mode == ITEST_PROXY_RESET)
			{
				itest_proxy_drop(p, i, 1);
				continue;
			}
			if (mode == ITEST_PROXY_GARBAGE && !p->garbage_sent[i])
			{
				if (write(p->cfd[i], p->garbage, p->garbage_len) < 0)
					itest_proxy_drop(p, i, 0);
				p->garbage_sent[i] = 1;
				continue;
			}
		}
		for (int i = 0; i < ITEST_PROXY_MAXPAIRS; i++)
		{
			if (p->cfd[i] < 0 || mode == ITEST_PROXY_STALL)
				continue;
			pf[n].fd = p->cfd[i];
			pf[n].events = POLLIN;
			n++;
			pf[n].fd = p->sfd[i];
			pf[n].events = POLLIN;
			n++;
		}
		if (poll(pf, n, 20) <= 0)
			continue;
		if (pf[0].revents & POLLIN)
		{
			int			cfd = accept(p->listen_fd, NULL, NULL);

			if (cfd >= 0)
			{
				int			slot = -1;
				int			sfd = socket(AF_INET, SOCK_STREAM, 0);

				for (int i = 0; i < ITEST_PROXY_MAXPAIRS; i++)
					if (p->cfd[i] < 0)
					{
						slot = i;
						break;
					}
				if (slot < 0 || sfd < 0 ||
					connect(sfd, (struct sockaddr *) &p->upstream, sizeof(p->upstream)) < 0)
				{
					close(cfd);
					if (sfd >= 0)
						close(sfd);
				}
				else
				{
					p->cfd[slot] = cfd;
					p->sfd[slot] = sfd;
					p->garbage_sent[slot] = 0;
					p->first_seen[slot] = 0;
				}
			}
		}
		for (int k = 1; k < n; k++)
		{
			int			i;
			int			from_client;
			ssize_t		got;

			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			for (i = 0; i < ITEST_PROXY_MAXPAIRS; i++)
				if (p->cfd[i] == pf[k].fd || p->sfd[i] == pf[k].fd)
					break;
			if (i == ITEST_PROXY_MAXPAIRS)
				continue;
			from_client = (p->cfd[i] == pf[k].fd);
			got = read(pf[k].fd, buf, sizeof(buf));
			if (got <= 0)
			{
				itest_proxy_drop(p, i, 0);
				continue;
			}
			if (!from_client && mode == ITEST_PROXY_GARBAGE)
				continue;		/* swallow the real answers */
			if (from_client && !p->first_seen[i])
			{
				p->first_seen[i] = 1;
				if (atomic_load(&p->refuse_v5) && buf[0] == 0x05)
				{
					itest_proxy_refuse(p->cfd[i]);
					atomic_fetch_add(&p->refused, 1);
					itest_proxy_drop(p, i, 0);
					continue;
				}
			}
			{
				int			to = from_client ? p->sfd[i] : p->cfd[i];
				ssize_t		off = 0;

				while (off < got)
				{
					ssize_t		w = write(to, buf + off, got - off);

					if (w <= 0)
						break;
					off += w;
				}
			}
		}
	}
	for (int i = 0; i < ITEST_PROXY_MAXPAIRS; i++)
		itest_proxy_drop(p, i, 0);
	close(p->listen_fd);
	return NULL;
}

/* Start a proxy in front of host:port (an IPv4 address). */
static inline int
itest_proxy_start(itest_proxy *p, const char *host, int port)
{
	struct sockaddr_in a;
	socklen_t	len = sizeof(a);
	int			one = 1;

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < ITEST_PROXY_MAXPAIRS; i++)
		p->cfd[i] = p->sfd[i] = -1;
	p->upstream.sin_family = AF_INET;
	p->upstream.sin_port = htons((uint16_t) port);
	if (inet_pton(AF_INET, host, &p->upstream.sin_addr) != 1)
		return 0;
	p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (p->listen_fd < 0)
		return 0;
	setsockopt(p->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = 0;
	if (bind(p->listen_fd, (struct sockaddr *) &a, sizeof(a)) < 0 ||
		listen(p->listen_fd, 16) < 0 ||
		getsockname(p->listen_fd, (struct sockaddr *) &a, &len) < 0)
	{
		close(p->listen_fd);
		return 0;
	}
	p->port = ntohs(a.sin_port);
	atomic_store(&p->mode, ITEST_PROXY_PASS);
	atomic_store(&p->stop, 0);
	return pthread_create(&p->thread, NULL, itest_proxy_main, p) == 0;
}

static inline void
itest_proxy_set_garbage(itest_proxy *p, const void *bytes, size_t n)
{
	if (n > sizeof(p->garbage))
		n = sizeof(p->garbage);
	memcpy(p->garbage, bytes, n);
	p->garbage_len = n;
}

static inline void
itest_proxy_mode(itest_proxy *p, int mode)
{
	atomic_store(&p->mode, mode);
}

static inline void
itest_proxy_stop(itest_proxy *p)
{
	atomic_store(&p->stop, 1);
	pthread_join(p->thread, NULL);
}

#endif							/* CQL_ITEST_H */

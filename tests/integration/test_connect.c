/*-------------------------------------------------------------------------
 *
 * test_connect.c
 *		Integration tests of connection setup against a live node:
 *		protocol versions and negotiation, lz4, authentication, keyspace,
 *		and transport failures injected by a proxy (stall, garbage,
 *		reset), request timeouts and wait-hook interrupts.
 *
 * IDENTIFICATION
 *		tests/integration/test_connect.c
 *
 *-------------------------------------------------------------------------
 */
#include "itest.h"

#include <time.h>

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SELECT from system.local: must give exactly one row with a version. */
static int
local_query_ok(cql_conn *c)
{
	cql_result	res;
	cql_error	err;
	cql_status	st;
	int			good;

	st = cql_query(c, "SELECT release_version, cql_version FROM system.local", NULL, &res, &err);
	if (st != CQL_OK)
	{
		itest_diag_error("system.local", st, &err);
		return 0;
	}
	good = res.kind == CQL_RESULT_ROWS && res.rows_count == 1 &&
		res.meta.ncols == 2 && cql_result_cell(&res, 0, 0)->n > 0 &&
		strcmp(res.meta.cols[0].name, "release_version") == 0;
	cql_result_free(&res);
	return good;
}

static void
test_versions(void)
{
	for (int v = 4; v <= 5; v++)
		for (int z = 0; z <= 1; z++)
		{
			cql_conn_options o;
			cql_conn   *c;
			const cql_supported *sup;

			itest_options(&o, v, z ? CQL_COMPRESSION_LZ4 : CQL_COMPRESSION_NONE);
			c = itest_connect_or_die(&o);
			is_int(cql_conn_protocol_version(c), v, "v%d %s: negotiated version", v, z ? "lz4" : "plain");
			is_int(cql_conn_compression(c), z ? CQL_COMPRESSION_LZ4 : CQL_COMPRESSION_NONE,
				   "v%d %s: compression", v, z ? "lz4" : "plain");
			sup = cql_conn_supported(c);
			ok(cql_supported_get(sup, "CQL_VERSION") != NULL &&
			   cql_supported_get(sup, "PROTOCOL_VERSIONS") != NULL &&
			   cql_supported_has(sup, "COMPRESSION", "lz4"),
			   "v%d %s: SUPPORTED has CQL_VERSION, PROTOCOL_VERSIONS, COMPRESSION lz4",
			   v, z ? "lz4" : "plain");
			ok(cql_conn_fd(c) >= 0, "v%d: fd exposed", v);
			ok(!cql_conn_authenticated(c), "v%d: plain node asks no authentication", v);
			ok(local_query_ok(c), "v%d %s: query system.local", v, z ? "lz4" : "plain");
			/* several round trips on the same connection */
			ok(local_query_ok(c) && local_query_ok(c), "v%d %s: repeated queries",
			   v, z ? "lz4" : "plain");
			cql_conn_close(c);
		}
}

static void
test_auto(void)
{
	cql_conn_options o;
	cql_conn   *c;

	itest_options(&o, 0, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	is_int(cql_conn_protocol_version(c), 5, "auto negotiates v5 with Cassandra 5");
	ok(local_query_ok(c), "auto: query works");
	cql_conn_close(c);

	itest_options(&o, 0, CQL_COMPRESSION_LZ4);
	c = itest_connect_or_die(&o);
	is_int(cql_conn_protocol_version(c), 5, "auto + lz4 negotiates v5");
	ok(local_query_ok(c), "auto + lz4: query works");
	cql_conn_close(c);
}

/* fd_budget: counts what is held; refuses when 'limit' is reached */
typedef struct FdBudget
{
	int			held;
	int			acquired;
	int			released;
	int			limit;
} FdBudget;

static bool
count_fds(void *ctx, bool acquire)
{
	FdBudget   *b = ctx;

	if (acquire)
	{
		if (b->held >= b->limit)
			return false;
		b->held++;
		b->acquired++;
	}
	else
	{
		b->held--;
		b->released++;
	}
	return true;
}

static void
test_fd_budget(void)
{
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_error	err;
	cql_status	st;
	FdBudget	b = {0, 0, 0, 1};

	itest_options(&o, 0, CQL_COMPRESSION_LZ4);
	o.fd_budget = count_fds;
	o.fd_budget_ctx = &b;
	st = cql_connect(&o, &c, &err);
	ok(st == CQL_OK, "fd budget: connect reserves a descriptor");
	is_int(b.held, 1, "fd budget: one held while open");
	if (st == CQL_OK)
	{
		cql_conn   *c2 = NULL;

		/* the budget is spent: the next connection is refused cleanly */
		st = cql_connect(&o, &c2, &err);
		is_int(st, CQL_ERR_CONNECT, "fd budget: refused when exhausted");
		ok(strstr(err.message, "too many open files") != NULL,
		   "fd budget: the error says why (%s)", err.message);
		is_int(b.held, 1, "fd budget: a refused connect holds nothing");
		ok(local_query_ok(c), "fd budget: the first connection still works");
		cql_conn_close(c);
	}
	is_int(b.held, 0, "fd budget: released on close");
	is_int(b.acquired, b.released, "fd budget: every reservation released once");

	/* a connect that fails after reserving releases too */
	o.port = 1;
	st = cql_connect(&o, &c, &err);
	ok(st != CQL_OK && b.held == 0, "fd budget: released after a failed connect");
}

static void
test_keyspace_option(void)
{
	cql_conn_options o;
	cql_conn   *c;
	cql_error	err;
	cql_status	st;

	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	setup_step(itest_keyspace(c, "itest_connect"), "create keyspace itest_connect");
	is_str(cql_conn_keyspace(c), "itest_connect", "USE tracked on the connection");
	cql_conn_close(c);

	o.keyspace = "itest_connect";
	c = itest_connect_or_die(&o);
	is_str(cql_conn_keyspace(c), "itest_connect", "keyspace option applied at connect");
	setup_step(itest_exec(c, "CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)"),
			   "unqualified DDL works in the option keyspace");
	cql_conn_close(c);

	o.keyspace = "itest_no_such_keyspace";
	c = NULL;
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_SERVER, "unknown keyspace option fails the connect");
	is_int(err.code, CQL_ERRCODE_INVALID, "... with the server's Invalid error");
	ok(c == NULL, "... and no connection is returned");
}

static void
test_auth(void)
{
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_error	err;
	cql_status	st;

	for (int v = 4; v <= 5; v++)
	{
		itest_options(&o, v, v == 5 ? CQL_COMPRESSION_LZ4 : CQL_COMPRESSION_NONE);
		o.host = itest_auth_host();
		o.port = itest_auth_port();
		o.username = itest_user();
		o.password = itest_password();
		st = cql_connect(&o, &c, &err);
		is_int(st, CQL_OK, "v%d: auth node, correct credentials", v);
		if (st != CQL_OK)
		{
			itest_diag_error("auth connect", st, &err);
			continue;
		}
		ok(cql_conn_authenticated(c), "v%d: server asked for authentication", v);
		ok(cql_conn_authenticator(c) &&
		   strstr(cql_conn_authenticator(c), "PasswordAuthenticator") != NULL,
		   "v%d: authenticator class recorded", v);
		ok(local_query_ok(c), "v%d: authenticated query works", v);
		cql_conn_close(c);
	}

	/* wrong password */
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.host = itest_auth_host();
	o.port = itest_auth_port();
	o.username = itest_user();
	o.password = "Wr0ngSecretPassw0rd";
	c = NULL;
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_AUTH, "wrong password -> CQL_ERR_AUTH");
	is_int(err.code, CQL_ERRCODE_AUTH_ERROR, "... server code 0x0100 kept");
	ok(strstr(err.message, "incorrect") != NULL || strstr(err.message, "rovided") != NULL,
	   "... server message kept: %s", err.message);
	ok(strstr(err.message, o.password) == NULL, "... password not in the message");
	ok(err.host[0] != '\0', "... host recorded (%s)", err.host);
	ok(c == NULL, "... no connection returned");

	/* no credentials */
	o.username = NULL;
	o.password = NULL;
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_AUTH, "no credentials on auth node -> CQL_ERR_AUTH");
	ok(strstr(err.message, "requires authentication") != NULL,
	   "... clear message: %s", err.message);

	/* credentials against a node without auth: accepted, nothing asked */
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.username = "cassandra";
	o.password = "cassandra";
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_OK, "credentials on a no-auth node are simply unused");
	if (st == CQL_OK)
	{
		ok(!cql_conn_authenticated(c), "... server asked for none");
		cql_conn_close(c);
	}
}

static void
test_connect_errors(void)
{
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_error	err;
	cql_status	st;
	int64_t		t0;

	/* a port nobody listens on */
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.port = 1;
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_CONNECT, "connection refused -> CQL_ERR_CONNECT");
	ok(strstr(err.message, ":1") != NULL, "... message names host:port: %s", err.message);

	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.host = "no-such-host.invalid";
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_RESOLVE, "unknown host -> CQL_ERR_RESOLVE");

	/* a name is resolved (asynchronously) before the connect */
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.host = "localhost";
	o.port = 1;
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_CONNECT, "host name resolved, then connection refused (%s)", err.message);

	/* resolution waits through the hook: a 1 ms deadline ends it early */
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.host = "no-such-host.invalid";
	o.connect_timeout_ms = 1;
	t0 = now_ms();
	st = cql_connect(&o, &c, &err);
	ok(st == CQL_ERR_TIMEOUT || st == CQL_ERR_RESOLVE,
	   "name lookup bounded by the connect deadline (%s)", cql_status_message(st));
	ok(now_ms() - t0 < 1000, "... returns within the deadline (%lld ms)",
	   (long long) (now_ms() - t0));

	/* unroutable address: connect timeout honoured */
	itest_options(&o, 5, CQL_COMPRESSION_NONE);
	o.host = "10.255.255.1";
	o.connect_timeout_ms = 300;
	t0 = now_ms();
	st = cql_connect(&o, &c, &err);
	/* (a sandbox may intercept outbound TCP: then any failure will do) */
	ok(st != CQL_OK && c == NULL, "unroutable address fails (%s)", cql_status_message(st));
	ok(now_ms() - t0 < 3000, "... within the connect deadline (%lld ms)",
	   (long long) (now_ms() - t0));

	itest_options(&o, 3, CQL_COMPRESSION_NONE);
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_INVALID_ARG, "protocol version 3 refused locally");
}

/* ---------------------------------------------------------------------
 * Failure injection through the proxy
 * ---------------------------------------------------------------------
 */
static void
proxy_options(cql_conn_options *o, itest_proxy *p, int v, cql_compression z)
{
	itest_options(o, v, z);
	o->host = "127.0.0.1";
	o->port = p->port;
	o->connect_timeout_ms = 3000;
	o->request_timeout_ms = 1000;
}

static void
test_stall(int v)
{
	itest_proxy px;
	cql_conn_options o;
	cql_conn   *c;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	int64_t		t0;

	if (!ok(itest_proxy_start(&px, itest_host(), itest_port()), "v%d: proxy started", v))
		return;
	proxy_options(&o, &px, v, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	ok(local_query_ok(c), "v%d: query through the proxy", v);

	itest_proxy_mode(&px, ITEST_PROXY_STALL);
	t0 = now_ms();
	st = cql_query(c, "SELECT key FROM system.local", NULL, &res, &err);
	is_int(st, CQL_ERR_TIMEOUT, "v%d: stalled server -> CQL_ERR_TIMEOUT", v);
	ok(now_ms() - t0 >= 900 && now_ms() - t0 < 3000,
	   "v%d: ... after the 1 s request deadline (%lld ms)", v, (long long) (now_ms() - t0));
	is_int(cql_conn_status(c), CQL_OK, "v%d: connection still usable after a timeout", v);
	is_int(cql_conn_in_flight(c), 1, "v%d: the timed-out stream stays reserved", v);

	/* the late answer is drained and discarded; ids never mix up */
	itest_proxy_mode(&px, ITEST_PROXY_PASS);
	ok(local_query_ok(c), "v%d: next query after the stall gets its own answer", v);
	is_int(cql_conn_settle(c, 2000, &err), CQL_OK, "v%d: cql_conn_settle drains the orphan", v);
	is_int(cql_conn_in_flight(c), 0, "v%d: orphaned stream released after its late answer", v);

	/* settle times out while the server is silent */
	itest_proxy_mode(&px, ITEST_PROXY_STALL);
	{
		cql_request *req;

		cql_send_query(c, "SELECT key FROM system.local", NULL, &req, &err);
		cql_request_free(req);
		is_int(cql_conn_settle(c, 200, &err), CQL_ERR_TIMEOUT,
			   "v%d: settle with a silent server -> CQL_ERR_TIMEOUT", v);
		itest_proxy_mode(&px, ITEST_PROXY_PASS);
		is_int(cql_conn_settle(c, 3000, &err), CQL_OK, "v%d: ... and settles once it answers", v);
	}
	cql_conn_close(c);
	itest_proxy_stop(&px);
}

static void
test_garbage(int v, cql_compression z)
{
	itest_proxy px;
	cql_conn_options o;
	cql_conn   *c;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	int64_t		t0;
	/* a response header claiming a 2 GB body, then junk */
	static const unsigned char huge_v4[] = {0x84, 0, 0, 1, 0x08, 0x7f, 0, 0, 0, 1, 2, 3};
	static const unsigned char junk[] = "this is not a CQL frame at all, certainly not one with a valid CRC";

	if (!ok(itest_proxy_start(&px, itest_host(), itest_port()), "proxy started"))
		return;
	proxy_options(&o, &px, v, z);
	c = itest_connect_or_die(&o);
	if (v == 4)
		itest_proxy_set_garbage(&px, huge_v4, sizeof(huge_v4));
	else
		itest_proxy_set_garbage(&px, junk, sizeof(junk));
	itest_proxy_mode(&px, ITEST_PROXY_GARBAGE);
	t0 = now_ms();
	st = cql_query(c, "SELECT key FROM system.local", NULL, &res, &err);
	ok(st == CQL_ERR_CRC || st == CQL_ERR_MALFORMED || st == CQL_ERR_TOO_LARGE ||
	   st == CQL_ERR_TIMEOUT || st == CQL_ERR_COMPRESSION,
	   "v%d%s: garbage from the server -> error (%s: %s)", v, z ? " lz4" : "",
	   cql_status_message(st), err.message);
	ok(now_ms() - t0 < 3000, "v%d: ... promptly", v);
	if (st != CQL_ERR_TIMEOUT)
	{
		is_int(cql_conn_status(c), st, "v%d: connection marked broken", v);
		st = cql_query(c, "SELECT key FROM system.local", NULL, &res, &err);
		is_int(st, CQL_ERR_STATE, "v%d: later calls -> CQL_ERR_STATE", v);
		ok(strstr(err.message, "unusable") != NULL, "v%d: ... with the reason: %s", v, err.message);
	}
	cql_conn_close(c);

	/* garbage in place of the handshake */
	c = NULL;
	t0 = now_ms();
	st = cql_connect(&o, &c, &err);
	ok(st != CQL_OK && c == NULL, "v%d: garbage handshake fails (%s)", v, cql_status_message(st));
	ok(now_ms() - t0 < 5000, "v%d: ... within the connect deadline", v);
	itest_proxy_stop(&px);
}

static void
test_reset(int v)
{
	itest_proxy px;
	cql_conn_options o;
	cql_conn   *c;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	cql_request *reqs[5];

	if (!ok(itest_proxy_start(&px, itest_host(), itest_port()), "proxy started"))
		return;
	proxy_options(&o, &px, v, CQL_COMPRESSION_NONE);
	o.request_timeout_ms = 5000;
	c = itest_connect_or_die(&o);
	ok(local_query_ok(c), "v%d: query before reset", v);
	itest_proxy_mode(&px, ITEST_PROXY_STALL);
	for (int i = 0; i < 5; i++)
		cql_send_query(c, "SELECT key FROM system.local", NULL, &reqs[i], &err);
	itest_proxy_mode(&px, ITEST_PROXY_RESET);
	st = cql_conn_await(c, reqs[0], &res, &err);
	ok(st == CQL_ERR_CLOSED || st == CQL_ERR_IO, "v%d: reset -> %s (%s)", v,
	   cql_status_message(st), err.message);
	{
		int			all = 1;

		for (int i = 1; i < 5; i++)
			if (cql_conn_await(c, reqs[i], &res, &err) != st)
				all = 0;
		ok(all, "v%d: every request in flight fails with the same status", v);
	}
	for (int i = 0; i < 5; i++)
		cql_request_free(reqs[i]);
	cql_conn_close(c);
	itest_proxy_stop(&px);
}

/* ---------------------------------------------------------------------
 * Interrupts through the wait hook
 * ---------------------------------------------------------------------
 */
typedef struct intr_ctx
{
	int			calls;
	int			interrupt;		/* return INTERRUPTED while set */
} intr_ctx;

static cql_status
intr_wait(void *ctx, int fd, int events, int timeout_ms)
{
	intr_ctx   *ic = ctx;

	ic->calls++;
	if (ic->interrupt)
		return CQL_ERR_INTERRUPTED;
	return cql_wait_poll(NULL, fd, events, timeout_ms);
}

static void
test_interrupt(void)
{
	itest_proxy px;
	cql_conn_options o;
	cql_conn   *c;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	intr_ctx	ic = {0, 0};
	int64_t		t0;

	if (!ok(itest_proxy_start(&px, itest_host(), itest_port()), "proxy started"))
		return;
	proxy_options(&o, &px, 5, CQL_COMPRESSION_NONE);
	o.request_timeout_ms = 30000;
	o.wait = intr_wait;
	o.wait_ctx = &ic;
	c = itest_connect_or_die(&o);
	ok(ic.calls > 0, "custom wait hook used (%d calls)", ic.calls);

	/* server silent, cancel pending: must return at once, not in 30 s */
	itest_proxy_mode(&px, ITEST_PROXY_STALL);
	ic.interrupt = 1;
	t0 = now_ms();
	st = cql_query(c, "SELECT key FROM system.local", NULL, &res, &err);
	is_int(st, CQL_ERR_INTERRUPTED, "wait hook INTERRUPTED -> CQL_ERR_INTERRUPTED");
	ok(now_ms() - t0 < 500, "... promptly (%lld ms)", (long long) (now_ms() - t0));
	is_int(cql_conn_status(c), CQL_OK, "connection still usable (request orphaned)");

	ic.interrupt = 0;
	itest_proxy_mode(&px, ITEST_PROXY_PASS);
	ok(local_query_ok(c), "after the interrupt the connection works and answers match");
	cql_conn_close(c);

	/* interrupt during connect */
	ic.interrupt = 1;
	itest_proxy_mode(&px, ITEST_PROXY_STALL);
	c = NULL;
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_INTERRUPTED, "interrupt during the handshake -> CQL_ERR_INTERRUPTED");
	ok(c == NULL, "... no connection returned");
	itest_proxy_stop(&px);
}

/* The server sends half an envelope header and then closes. */
static void
test_midframe(int v)
{
	itest_proxy px;
	cql_conn_options o;
	cql_conn   *c;
	cql_error	err;
	cql_result	res;
	cql_request *req;
	cql_status	st;
	static const unsigned char half[] = {0x84, 0x00, 0x00, 0x00, 0x08};
	static const unsigned char half5[] = {0x20, 0x00};	/* 2 of 6 frame header bytes */

	if (!ok(itest_proxy_start(&px, itest_host(), itest_port()), "proxy started"))
		return;
	proxy_options(&o, &px, v, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	if (v == 4)
		itest_proxy_set_garbage(&px, half, sizeof(half));
	else
		itest_proxy_set_garbage(&px, half5, sizeof(half5));
	itest_proxy_mode(&px, ITEST_PROXY_GARBAGE);
	st = cql_send_query(c, "SELECT key FROM system.local", NULL, &req, &err);
	for (int i = 0; i < 5; i++)
		cql_conn_pump(c, 20, &err);
	ok(st == CQL_OK && !cql_request_done(req), "v%d: half a header received: still waiting", v);
	itest_proxy_mode(&px, ITEST_PROXY_RESET);
	st = cql_conn_await(c, req, &res, &err);
	ok(st == CQL_ERR_CLOSED || st == CQL_ERR_IO,
	   "v%d: peer closes mid-frame -> %s", v, cql_status_message(st));
	cql_request_free(req);
	cql_conn_close(c);
	itest_proxy_stop(&px);
}

/* A v4-only server: auto must fall back, an explicit v5 must fail. */
static void
test_downgrade(void)
{
	itest_proxy px;
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_error	err;
	cql_status	st;

	if (!ok(itest_proxy_start(&px, itest_host(), itest_port()), "proxy started"))
		return;
	atomic_store(&px.refuse_v5, 1);
	proxy_options(&o, &px, 0, CQL_COMPRESSION_LZ4);
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_OK, "auto against a v4-only server connects");
	if (st == CQL_OK)
	{
		is_int(cql_conn_protocol_version(c), 4, "... after falling back to v4");
		is_int(atomic_load(&px.refused), 1, "... having tried v5 first");
		ok(local_query_ok(c), "... and works (lz4 too)");
		cql_conn_close(c);
	}
	else
		itest_diag_error("downgrade", st, &err);

	proxy_options(&o, &px, 5, CQL_COMPRESSION_NONE);
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_PROTOCOL_VERSION, "explicit v5 against a v4-only server -> CQL_ERR_PROTOCOL_VERSION");
	ok(strstr(err.message, "unsupported protocol version") != NULL,
	   "... with the server's message: %s", err.message);
	itest_proxy_stop(&px);
}

int
main(void)
{
	test_versions();
	test_auto();
	test_fd_budget();
	test_keyspace_option();
	test_auth();
	test_connect_errors();
	test_downgrade();
	test_stall(5);
	test_stall(4);
	test_garbage(5, CQL_COMPRESSION_NONE);
	test_garbage(5, CQL_COMPRESSION_LZ4);
	test_garbage(4, CQL_COMPRESSION_NONE);
	test_reset(5);
	test_reset(4);
	test_midframe(4);
	test_midframe(5);
	test_interrupt();
	return done_testing();
}

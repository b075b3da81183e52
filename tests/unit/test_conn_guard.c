/*
 * test_conn_guard.c
 *		The connection layer against a hostile server (tests/unit/
 *		fake_server.h, no Cassandra): require_auth refuses a server that does
 *		not ask for a password; a server flooding frames cannot keep the
 *		caller from its deadline or its wait hook (the only place a
 *		PostgreSQL backend notices cancel and terminate); a claimed length
 *		over max_body is refused with a message naming the limit, without
 *		allocating it.
 */
#include "tap.h"
#include "cql_conn.h"
#include "counting_alloc.h"
#include "fake_server.h"

static void
fake_options(cql_conn_options *o, const fake_server *s)
{
	cql_conn_options_init(o);
	o->host = "127.0.0.1";
	o->port = s->port;
	o->protocol_version = 4;
	o->connect_timeout_ms = 5000;
	o->request_timeout_ms = 5000;
}

/* ---------------------------------------------------------------------
 * require_auth
 * ---------------------------------------------------------------------
 */
static void
test_require_auth(void)
{
	fake_server s;
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_error	err;
	cql_status	st;

	if (!ok(fake_server_start(&s, FAKE_IDLE, false), "fake server (READY) started"))
		return;
	fake_options(&o, &s);
	o.username = "alice";
	o.password = "s3cr3t-pw";

	st = cql_connect(&o, &c, &err);
	ok(st == CQL_OK, "without require_auth a READY server is accepted");
	ok(c && !cql_conn_authenticated(c), "... and not authenticated");
	cql_conn_close(c);
	c = NULL;

	o.require_auth = true;
	st = cql_connect(&o, &c, &err);
	is_int(st, CQL_ERR_AUTH, "require_auth: READY answer refused with CQL_ERR_AUTH");
	ok(c == NULL, "... no connection handed out");
	ok(strstr(err.message, "did not ask for authentication") != NULL,
	   "... message says why: %s", err.message);
	ok(strstr(err.message, "s3cr3t") == NULL, "... and never shows the password");
	ok(strstr(err.host, "127.0.0.1") != NULL, "... host filled: %s", err.host);
	fake_server_stop(&s);

	if (!ok(fake_server_start(&s, FAKE_IDLE, true), "fake server (AUTHENTICATE) started"))
		return;
	fake_options(&o, &s);
	o.username = "alice";
	o.password = "s3cr3t-pw";
	o.require_auth = true;
	st = cql_connect(&o, &c, &err);
	ok(st == CQL_OK, "require_auth: a server asking for authentication is accepted (%s)",
	   err.message);
	ok(c && cql_conn_authenticated(c), "... and authenticated");
	cql_conn_close(c);
	fake_server_stop(&s);
}

/* ---------------------------------------------------------------------
 * Flooding server: deadline and wait hook must still be reached
 * ---------------------------------------------------------------------
 */
typedef struct hook_state
{
	_Atomic int interrupt;
	fake_server *server;
	int			calls;
} hook_state;

/* Interrupts once armed and the server's flood has begun. */
static cql_status
interrupting_wait(void *ctx, int fd, int events, int timeout_ms)
{
	hook_state *h = ctx;

	h->calls++;
	if (atomic_load(&h->interrupt) && atomic_load(&h->server->flooded) > 0)
		return CQL_ERR_INTERRUPTED;
	return cql_wait_poll(NULL, fd, events, timeout_ms > 50 || timeout_ms < 0 ? 50 : timeout_ms);
}

/*
 * An event consumer with a little work per event (a backend allocates,
 * logs...): slower than the server writes, so the socket never drains.
 */
static void
slow_event(void *ctx, const cql_event *ev)
{
	struct timespec a,
				b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 2000);
	(*(long *) ctx)++;
}

static void
test_flood(void)
{
	fake_server s;
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	int64_t		t0;
	int64_t		took;
	hook_state	h;
	long		events = 0;

	/* 1. the request deadline fires although bytes never stop arriving */
	if (!ok(fake_server_start(&s, FAKE_FLOOD, false), "fake server (flood) started"))
		return;
	fake_options(&o, &s);
	o.request_timeout_ms = 300;
	o.on_event = slow_event;
	o.event_ctx = &events;
	st = cql_connect(&o, &c, &err);
	if (!ok(st == CQL_OK, "connect to the flooding server (%s)", err.message))
	{
		fake_server_stop(&s);
		return;
	}
	t0 = fake_now_ms();
	st = cql_query(c, "SELECT 1", NULL, &res, &err);
	took = fake_now_ms() - t0;
	is_int(st, CQL_ERR_TIMEOUT, "flood: the request times out");
	ok(took < 1300, "flood: ... within ~1 s of its 300 ms deadline (%lld ms)",
	   (long long) took);
	ok(atomic_load(&s.flooded) > 1024 * 1024, "flood: the server really flooded (%ld bytes)",
	   (long) atomic_load(&s.flooded));
	ok(events > 0, "flood: events were delivered (%ld)", events);
	cql_conn_close(c);
	fake_server_stop(&s);

	/* 2. the wait hook is called and its interrupt honoured */
	if (!ok(fake_server_start(&s, FAKE_FLOOD, false), "fake server (flood) started again"))
		return;
	fake_options(&o, &s);
	o.request_timeout_ms = 20000;
	o.on_event = slow_event;
	o.event_ctx = &events;
	memset(&h, 0, sizeof(h));
	h.server = &s;
	o.wait = interrupting_wait;
	o.wait_ctx = &h;
	st = cql_connect(&o, &c, &err);
	if (!ok(st == CQL_OK, "connect with an interrupting wait hook (%s)", err.message))
	{
		fake_server_stop(&s);
		return;
	}
	atomic_store(&h.interrupt, 1);
	h.calls = 0;
	t0 = fake_now_ms();
	st = cql_query(c, "SELECT 1", NULL, &res, &err);
	took = fake_now_ms() - t0;
	is_int(st, CQL_ERR_INTERRUPTED, "flood: the wait hook's interrupt is honoured");
	ok(h.calls >= 1, "flood: ... the hook was called (%d)", h.calls);
	ok(took < 1000, "flood: ... promptly (%lld ms)", (long long) took);
	cql_conn_close(c);
	fake_server_stop(&s);

	/* 3. cql_conn_pump(0) does a bounded amount of work */
	if (!ok(fake_server_start(&s, FAKE_FLOOD, false), "fake server (flood) started a third time"))
		return;
	fake_options(&o, &s);
	o.on_event = slow_event;
	o.event_ctx = &events;
	st = cql_connect(&o, &c, &err);
	if (ok(st == CQL_OK, "connect (%s)", err.message))
	{
		cql_request *req = NULL;

		st = cql_send_query(c, "SELECT 1", NULL, &req, &err);
		ok(st == CQL_OK, "query sent");
		usleep(200 * 1000);		/* let the flood start */
		events = 0;
		t0 = fake_now_ms();
		for (int i = 0; i < 5; i++)
			(void) cql_conn_pump(c, 0, &err);
		took = fake_now_ms() - t0;

		/*
		 * Each pump may take one read budget (256 KiB) plus one receive
		 * chunk: with 37-byte events that is under 9000 events a pump.
		 * Unbounded, the first pump would run until the flood stops.
		 */
		ok(events > 0 && events <= 5 * 9000,
		   "flood: 5 non-blocking pumps do bounded work (%ld events, %lld ms)",
		   events, (long long) took);
		cql_request_free(req);
		cql_conn_close(c);
	}
	fake_server_stop(&s);
}

/* ---------------------------------------------------------------------
 * max_body: a claimed length over the limit
 * ---------------------------------------------------------------------
 */
static void
test_max_body(void)
{
	fake_server s;
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	count_stats cs;
	cql_allocator a = counting_allocator(&cs);

	if (!ok(fake_server_start(&s, FAKE_HUGE, false), "fake server (huge) started"))
		return;
	fake_options(&o, &s);
	o.alloc = &a;
	o.max_body = 1024 * 1024;
	st = cql_connect(&o, &c, &err);
	if (ok(st == CQL_OK, "connect with max_body 1 MB (%s)", err.message))
	{
		st = cql_query(c, "SELECT 1", NULL, &res, &err);
		is_int(st, CQL_ERR_TOO_LARGE, "a 200 MB claim over max_body is CQL_ERR_TOO_LARGE");
		ok(strstr(err.message, "1048576") != NULL,
		   "... and the message names the limit: %s", err.message);
		ok(cs.largest < 512 * 1024, "... no large allocation (largest %zu bytes)", cs.largest);
		cql_conn_close(c);
	}
	fake_server_stop(&s);

	/* under the default limit the claim is legal but must not be allocated */
	if (!ok(fake_server_start(&s, FAKE_HUGE, false), "fake server (huge) started again"))
		return;
	fake_options(&o, &s);
	a = counting_allocator(&cs);
	o.alloc = &a;
	o.request_timeout_ms = 300;
	st = cql_connect(&o, &c, &err);
	if (ok(st == CQL_OK, "connect with the default max_body (%s)", err.message))
	{
		st = cql_query(c, "SELECT 1", NULL, &res, &err);
		is_int(st, CQL_ERR_TIMEOUT, "a 200 MB claim that never arrives times out");
		ok(cs.peak < 4 * 1024 * 1024, "... with small peak memory (%zu bytes)", cs.peak);
		cql_conn_close(c);
	}
	fake_server_stop(&s);
}

/* ---------------------------------------------------------------------
 * A server flipping result metadata on every EXECUTE
 * ---------------------------------------------------------------------
 */
static void
test_metadata_flips(void)
{
	fake_server s;
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_prepared *p = NULL;
	cql_error	err;
	cql_status	st;
	int			consistent = 1;
	int			bad = 0;

	if (!ok(fake_server_start(&s, FAKE_IDLE, false), "fake server (flips) started"))
		return;
	fake_options(&o, &s);
	st = cql_connect(&o, &c, &err);
	if (!ok(st == CQL_OK, "connect (%s)", err.message))
	{
		fake_server_stop(&s);
		return;
	}
	st = cql_prepare(c, "SELECT a FROM ks.t", &p, &err);
	ok(st == CQL_OK && p && p->ncols == 1, "prepared: one result column (%s)", err.message);
	for (int i = 0; st == CQL_OK && i < 300; i++)
	{
		cql_result	res;

		st = cql_execute(c, p, NULL, &res, &err);
		if (st != CQL_OK)
			break;
		/* each result decodes with the columns it carries */
		if (!cql_result_has_columns(&res, 1) ||
			strcmp(res.meta.cols[0].name, (i & 1) ? "b" : "a") != 0 ||
			cql_result_cell(&res, 0, 0)->n != 4)
		{
			if (bad++ < 3)
				diag("execute %d: ncols %d name %s", i, res.meta.ncols,
					 res.meta.cols ? res.meta.cols[0].name : "(none)");
			consistent = 0;
		}
		cql_result_free(&res);
	}
	ok(st == CQL_OK, "300 executes with flipping metadata succeed (%s)", err.message);
	ok(consistent, "... every result decodes with its own columns");
	ok(p->nretired <= CQL_PREPARED_MAX_RETIRED,
	   "... retired column arrays stay bounded (%d <= %d)", p->nretired, CQL_PREPARED_MAX_RETIRED);
	is_int(cql_conn_trim_prepared(c, 10), 0, "trim frees no statement under the bound");
	is_int(p->nretired, 0, "... but frees the retired arrays");
	cql_conn_close(c);
	fake_server_stop(&s);
}

/* ---------------------------------------------------------------------
 * waiting on several connections: wait events and request deadlines
 * ---------------------------------------------------------------------
 */
static void
test_wait_events(void)
{
	fake_server s;
	cql_conn_options o;
	cql_conn   *c = NULL;
	cql_request *req = NULL;
	cql_result	res;
	cql_error	err;
	cql_status	st;
	int			left;
	int64_t		t0;

	if (!ok(fake_server_start(&s, FAKE_IDLE, false), "fake server (idle) started"))
		return;
	fake_options(&o, &s);
	o.request_timeout_ms = 300;
	st = cql_connect(&o, &c, &err);
	if (!ok(st == CQL_OK, "connect (%s)", err.message))
	{
		fake_server_stop(&s);
		return;
	}
	is_int(cql_conn_wait_events(c), CQL_WAIT_READ,
		   "an idle connection waits to read, nothing to write");
	st = cql_send_query(c, "SELECT 1", NULL, &req, &err);
	ok(st == CQL_OK, "query sent to a server that never answers");
	left = cql_request_remaining_ms(req);
	ok(left > 0 && left <= 300, "its deadline is the request timeout ahead (%d ms)", left);
	usleep(350 * 1000);
	is_int(cql_request_remaining_ms(req), 0, "after the timeout: 0 ms left");
	t0 = fake_now_ms();
	memset(&res, 0, sizeof(res));
	st = cql_conn_await(c, req, &res, &err);
	is_int(st, CQL_ERR_TIMEOUT, "awaiting it fails with CQL_ERR_TIMEOUT");
	ok(fake_now_ms() - t0 < 100, "... at once (%lld ms)", (long long) (fake_now_ms() - t0));
	is_int(cql_request_remaining_ms(req), 0,
		   "it stays pending (a late answer is dropped when it is freed)");
	cql_request_free(req);

	fake_server_stop(&s);		/* the peer closes the socket */
	(void) cql_conn_pump(c, 500, &err);
	ok(cql_conn_status(c) != CQL_OK, "the closed connection is broken");
	is_int(cql_conn_wait_events(c), 0, "... and is not to be waited on");
	cql_conn_close(c);
}

int
main(void)
{
	plan(54);
	test_wait_events();
	test_metadata_flips();
	test_require_auth();
	test_flood();
	test_max_body();
	return done_testing();
}

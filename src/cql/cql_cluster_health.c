/*-------------------------------------------------------------------------
 *
 * cql_cluster_health.c
 *		What the cluster learns about its hosts between requests: server
 *		events on the control connection (a node DOWN, UP again, joining or
 *		leaving the ring) and heartbeats on idle connections.
 *
 * A PostgreSQL backend has no background thread, so nothing here runs on
 * its own: events are read without blocking whenever a coordinator is
 * chosen (cql_cluster_poll_events), and heartbeats are sent when the
 * caller is about to use connections that have been idle for a while
 * (cql_cluster_heartbeat), e.g. at the start of a statement.  A half-open
 * connection to a node that died or was paused while the backend sat idle
 * is then found by a short OPTIONS round trip instead of by a user's
 * request waiting for its full timeout.  After a failed statement the
 * caller settles the cluster (cql_cluster_settle): requests it abandoned
 * are answered before it sends the next ones.
 *
 * Events are hints, as in the drivers: DOWN takes a host out of the plan
 * (its connection is retired, so requests still holding it fail over);
 * UP ends its backoff so it is used again at once; a topology change
 * makes the next routing call re-read system.local/peers and the token
 * map.  A wrong or hostile event costs at most a retry or a refresh.
 *
 * layer: cluster
 *
 * IDENTIFICATION
 *		src/cql/cql_cluster_health.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_cluster_int.h"
#include "cql_schema.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* How often routing calls read pending events (non-blocking). */
#define EVENT_POLL_INTERVAL_MS	100
/* REGISTER is one round trip on a connection that just answered STARTUP. */
#define REGISTER_TIMEOUT_MS		5000

/*
 * host_by_event_address
 *		The host an event names: its address in text form, compared with the
 *		addresses we connect to (numeric for peers), and its native port.
 *		-1 when the event names no known host.
 */
static int
host_by_event_address(cql_cluster *c, const cql_event *ev)
{
	char		text[INET6_ADDRSTRLEN];

	if (ev->addr_len == 4)
	{
		if (inet_ntop(AF_INET, ev->addr, text, sizeof(text)) == NULL)
			return -1;
	}
	else if (ev->addr_len == 16)
	{
		if (inet_ntop(AF_INET6, ev->addr, text, sizeof(text)) == NULL)
			return -1;
	}
	else
		return -1;
	for (int i = 0; i < c->nhosts; i++)
	{
		cluster_host *h = &c->hosts[i];

		if (h->address && strcmp(h->address, text) == 0 &&
			(ev->port <= 0 || h->port == ev->port))
			return i;
	}
	return -1;
}

/*
 * cql_cluster_on_event
 *		Event callback of every connection the cluster opens (only the
 *		REGISTERed one receives events).  Runs inside that connection's
 *		I/O, so it sends nothing: it records what changed, and a topology
 *		refresh is left to the next routing call.  The caller's own event
 *		callback, if any, is called as well.
 */
void
cql_cluster_on_event(void *ctx, const cql_event *ev)
{
	cql_cluster *c = (cql_cluster *) ctx;

	if (ev->type == CQL_EVENT_STATUS_CHANGE && ev->change)
	{
		int			h = host_by_event_address(c, ev);

		if (h >= 0 && strcmp(ev->change, "DOWN") == 0)
		{
			c->stats.events_down++;
			/* the control host itself: its connection stays until replaced */
			if (c->hosts[h].conn != c->control)
				cql_cluster_mark_down(c, &c->hosts[h]);
		}
		else if (h >= 0 && strcmp(ev->change, "UP") == 0)
		{
			c->stats.events_up++;
			cql_cluster_mark_up(&c->hosts[h]);
		}
		else if (h < 0 && strcmp(ev->change, "UP") == 0)
			c->topology_stale = true;	/* a node we do not know yet */
	}
	else if (ev->type == CQL_EVENT_TOPOLOGY_CHANGE)
	{
		c->stats.events_topology++;
		c->topology_stale = true;
	}
	if (c->user_on_event)
		c->user_on_event(c->user_event_ctx, ev);
}

/*
 * cql_cluster_register_events
 *		Ask the control connection for STATUS_CHANGE and TOPOLOGY_CHANGE
 *		events, once per control connection.  Best effort: a node that
 *		refuses leaves the cluster without events (failures and heartbeats
 *		still mark hosts down).
 */
void
cql_cluster_register_events(cql_cluster *c)
{
	static const char *const types[] = {"STATUS_CHANGE", "TOPOLOGY_CHANGE"};
	cql_buf		b;
	cql_request *req = NULL;
	cql_error	e;
	uint8_t		opcode = 0,
				flags = 0;
	const uint8_t *body;
	size_t		len;
	int			saved;

	if (!c->events_wanted || c->control == NULL || c->registered == c->control ||
		cql_conn_status(c->control) != CQL_OK)
		return;
	cql_error_clear(&e);
	cql_buf_init(&b, c->alloc);
	if (cql_write_register(&b, types, 2) != CQL_OK || cql_buf_status(&b) != CQL_OK)
	{
		cql_buf_free(&b);
		return;
	}
	saved = cql_conn_request_timeout(c->control);
	cql_conn_set_request_timeout(c->control, REGISTER_TIMEOUT_MS);
	if (cql_conn_submit(c->control, CQL_OP_REGISTER, &b, &req, &e) == CQL_OK &&
		cql_conn_await_raw(c->control, req, &opcode, &flags, &body, &len, &e) == CQL_OK &&
		opcode == CQL_OP_READY)
		c->registered = c->control;
	cql_conn_set_request_timeout(c->control, saved);
	if (req)
		cql_request_free(req);
	cql_buf_free(&b);
}

/*
 * cql_cluster_poll_events
 *		Read the events that have arrived (without waiting), at most every
 *		EVENT_POLL_INTERVAL_MS, and refresh the topology after a
 *		TOPOLOGY_CHANGE.  Called by every routing call; failures are left to
 *		the requests (a broken control connection is replaced when next
 *		needed).
 */
void
cql_cluster_poll_events(cql_cluster *c)
{
	int64_t		now = cql_now_ms();
	cql_error	e;

	if (c->registered == NULL || now - c->events_polled_at < EVENT_POLL_INTERVAL_MS)
		return;
	c->events_polled_at = now;
	cql_error_clear(&e);
	if (cql_conn_status(c->registered) == CQL_OK)
		(void) cql_conn_pump(c->registered, 0, &e);
	if (c->topology_stale && cql_conn_in_flight(c->control) == 0)
	{
		c->topology_stale = false;
		c->stats.topology_refreshes++;
		cql_error_clear(&e);
		(void) cql_cluster_refresh(c, &e);
	}
}

/*
 * cql_cluster_heartbeat
 *		Send OPTIONS on every open connection that has had nothing in flight
 *		and received nothing for idle_ms, and wait up to timeout_ms for the
 *		answers (all in flight at once).  A connection that fails or does
 *		not answer in time is retired and its host marked down, so that the
 *		caller's next request goes elsewhere.  Returns the number of hosts
 *		found dead.  An interrupt from the wait hook stops the check
 *		(CQL_ERR_INTERRUPTED in err) without marking anything.
 */
int
cql_cluster_heartbeat(cql_cluster *c, int idle_ms, int timeout_ms, cql_error *err)
{
	int64_t		now = cql_now_ms();
	int			dead = 0;
	cql_request **reqs;
	int			nsent = 0;

	cql_error_clear(err);
	if (idle_ms <= 0 || c->nhosts == 0)
		return 0;
	cql_cluster_poll_events(c);
	reqs = cql_alloc0(c->alloc, sizeof(cql_request *) * (size_t) c->nhosts);
	if (reqs == NULL)
		return 0;
	for (int i = 0; i < c->nhosts; i++)
	{
		cluster_host *h = &c->hosts[i];
		cql_buf		b;
		cql_error	e;
		int			saved;

		if (h->conn == NULL || cql_conn_status(h->conn) != CQL_OK ||
			cql_conn_in_flight(h->conn) > 0 ||
			cql_conn_idle_ms(h->conn) < idle_ms || now - h->heartbeat_at < idle_ms)
			continue;
		saved = cql_conn_request_timeout(h->conn);

		cql_buf_init(&b, c->alloc);
		cql_write_options(&b);
		cql_error_clear(&e);
		h->heartbeat_at = now;
		/* the request's deadline is set when it is submitted */
		cql_conn_set_request_timeout(h->conn, timeout_ms > 0 ? timeout_ms : 2000);
		if (cql_buf_status(&b) == CQL_OK &&
			cql_conn_submit(h->conn, CQL_OP_OPTIONS, &b, &reqs[i], &e) == CQL_OK)
		{
			nsent++;
			c->stats.heartbeats++;
		}
		else
			reqs[i] = NULL;
		cql_conn_set_request_timeout(h->conn, saved);
		cql_buf_free(&b);
	}
	for (int i = 0; i < c->nhosts && nsent > 0; i++)
	{
		cluster_host *h = &c->hosts[i];
		cql_status	st = CQL_OK;
		cql_error	e;
		uint8_t		opcode = 0,
					flags = 0;
		const uint8_t *body;
		size_t		len;

		if (reqs[i] == NULL)
			continue;
		cql_error_clear(&e);
		st = cql_conn_await_raw(h->conn, reqs[i], &opcode, &flags, &body, &len, &e);
		cql_request_free(reqs[i]);
		reqs[i] = NULL;
		if (st == CQL_ERR_INTERRUPTED)
		{
			*err = e;
			break;
		}
		if (st != CQL_OK || opcode != CQL_OP_SUPPORTED)
		{
			dead++;
			c->stats.heartbeat_failures++;
			/*
			 * Break it, so that requests still in flight on it fail now
			 * instead of at their own deadlines, and a control connection
			 * is replaced by the next cql_cluster_control().
			 */
			if (cql_conn_status(h->conn) == CQL_OK)
				cql_conn_abort(h->conn, st == CQL_OK ? CQL_ERR_MALFORMED : st,
							   "no answer to a heartbeat");
			cql_cluster_mark_down(c, h);
		}
	}
	for (int i = 0; i < c->nhosts; i++)
		if (reqs[i])
			cql_request_free(reqs[i]);
	cql_free(c->alloc, reqs);
	return dead;
}

/* Counters since the cluster was opened. */
const cql_cluster_stats *
cql_cluster_get_stats(const cql_cluster *c)
{
	return &c->stats;
}

/*
 * peer_counts
 *		Schema-agreement filter: a peer row counts when its host_id names a
 *		host of ours that is up (cql_schema_peer_filter).
 */
static bool
peer_counts(void *ctx, const uint8_t host_id[16])
{
	cql_cluster *c = ctx;
	char		id[37];
	int64_t		now = cql_now_ms();

	snprintf(id, sizeof(id),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 host_id[0], host_id[1], host_id[2], host_id[3], host_id[4], host_id[5],
			 host_id[6], host_id[7], host_id[8], host_id[9], host_id[10], host_id[11],
			 host_id[12], host_id[13], host_id[14], host_id[15]);
	for (int i = 0; i < c->nhosts; i++)
		if (strcmp(c->hosts[i].host_id, id) == 0)
			return cql_cluster_host_is_up(&c->hosts[i], now);
	return false;
}

cql_status
cql_cluster_await_schema_agreement(cql_cluster *c, cql_conn *conn, int timeout_ms,
								   cql_error *err)
{
	/* a DOWN event already waiting on the control connection counts */
	cql_cluster_poll_events(c);
	return cql_schema_await_agreement_among(conn ? conn : c->control, timeout_ms,
											peer_counts, c, err);
}

/*
 * settle_one
 *		Uncork conn and wait for its requests in flight until the monotonic
 *		deadline; a connection already broken counts as settled.  Sets
 *		*first (the first failure's status, err filled) when it is CQL_OK.
 */
static void
settle_one(cql_conn *conn, int64_t deadline, int *unsettled,
		   cql_status *first, cql_error *err)
{
	cql_error	e;
	cql_status	st;
	int64_t		left;

	if (conn == NULL || cql_conn_status(conn) != CQL_OK)
		return;
	cql_conn_cork(conn, false);
	if (cql_conn_in_flight(conn) == 0)
		return;
	left = deadline - cql_now_ms();
	cql_error_clear(&e);
	st = cql_conn_settle(conn, left > 0 ? (int) left : 0, &e);
	if (st == CQL_OK || cql_conn_status(conn) != CQL_OK)
		return;					/* answered, or broken meanwhile */
	(*unsettled)++;
	if (*first == CQL_OK)
	{
		*first = st;
		if (err)
			*err = e;
	}
}

cql_status
cql_cluster_settle(cql_cluster *c, int timeout_ms, int *unsettled, cql_error *err)
{
	int64_t		deadline = cql_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	cql_status	first = CQL_OK;
	int			n = 0;

	if (err)
		cql_error_clear(err);
	settle_one(c->control, deadline, &n, &first, err);
	for (int i = 0; i < c->nhosts; i++)
		if (c->hosts[i].conn != c->control)
			settle_one(c->hosts[i].conn, deadline, &n, &first, err);
	for (int i = 0; i < c->nretired; i++)
		settle_one(c->retired[i], deadline, &n, &first, err);
	if (unsettled)
		*unsettled = n;
	return first;
}

/*-------------------------------------------------------------------------
 *
 * cql_cluster.c
 *		The cluster handle: control connection, topology queries, per-host
 *		connections with failure backoff, events, token-aware coordinator
 *		choice.
 *
 * Built on pure parts in their own files, each using only the ones before:
 *	1. parsing: cql_contact_points.c, cql_sysrows.c (system table cells);
 *	2. cql_token_map.c (tokens, ring, replica placement, keyspace
 *	   replication) and cql_topology.c (system.local/peers rows), no I/O;
 *	3. this file.
 *
 * Server metadata is not trusted: every cell is length-checked, missing
 * or null columns make a peer row invalid (skipped, as the drivers do), and
 * any doubt about tokens turns routing off rather than guessing.
 *
 * layer: cluster
 *
 * IDENTIFICATION
 *		src/cql/cql_cluster.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_cluster_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void
cql_cluster_options_init(cql_cluster_options *o)
{
	memset(o, 0, sizeof(*o));
	o->token_aware = true;
	o->events = true;
	o->down_backoff_ms = 1000;
	o->max_backoff_ms = 60000;
}

/* Strdup that maps NULL to NULL; *fail set on allocation failure. */
static char *
dup_opt(const cql_allocator *a, const char *s, bool *fail)
{
	char	   *d;

	if (!s)
		return NULL;
	if (!(d = cql_strdup(a, s)))
		*fail = true;
	return d;
}

/*
 * retire
 *		Take a connection out of use without closing it: the caller may still
 *		hold it (a request in flight, a scan task about to be retried on
 *		another host), and must be able to ask its status, await its failed
 *		requests and free them.  cql_cluster_release_retired() closes it at
 *		a quiet point.  Without memory for the list it is closed at once.
 */
static void
retire(cql_cluster *c, cql_conn *conn)
{
	if (conn == NULL)
		return;
	for (int i = 0; i < c->nretired; i++)
		if (c->retired[i] == conn)
			return;
	if (c->registered == conn)
		c->registered = NULL;
	if (c->nretired == c->capretired)
	{
		int			cap = c->capretired ? c->capretired * 2 : 8;
		cql_conn  **n = cql_alloc(c->alloc, sizeof(cql_conn *) * (size_t) cap);

		if (n == NULL)
		{
			cql_conn_close(conn);
			return;
		}
		if (c->nretired)
			memcpy(n, c->retired, sizeof(cql_conn *) * (size_t) c->nretired);
		cql_free(c->alloc, c->retired);
		c->retired = n;
		c->capretired = cap;
	}
	c->retired[c->nretired++] = conn;
	c->stats.conns_retired++;
}

/*
 * cql_cluster_release_retired
 *		Close the connections taken out of use since the last call.  The
 *		caller guarantees it holds none of them any more.
 */
int
cql_cluster_release_retired(cql_cluster *c)
{
	int			n = c->nretired;

	for (int i = 0; i < c->nretired; i++)
		cql_conn_close(c->retired[i]);
	c->nretired = 0;
	return n;
}

static void
host_clear(cql_cluster *c, cluster_host *h)
{
	const cql_allocator *a = c->alloc;

	if (h->conn)
	{
		if (h->conn == c->control)
			c->control = NULL;
		retire(c, h->conn);
	}
	cql_free(a, h->address);
	cql_free(a, h->datacenter);
	cql_free(a, h->rack);
	cql_free(a, h->release_version);
	memset(h, 0, sizeof(*h));
}

void
cql_cluster_free(cql_cluster *c)
{
	const cql_allocator *a;

	if (!c)
		return;
	a = c->alloc;
	for (int i = 0; i < c->nhosts; i++)
		host_clear(c, &c->hosts[i]);
	if (c->control)
		retire(c, c->control);
	cql_cluster_release_retired(c);
	cql_free(a, c->retired);
	cql_free(a, c->hosts);
	cql_token_map_free(c->tm);
	cql_contact_points_free(c->cps, c->ncps, a);
	cql_address_set_free(c->allowed);
	cql_free(a, c->local_dc);
	cql_free(a, c->control_addr);
	cql_free(a, c->cluster_name);
	cql_free(a, c->partitioner);
	cql_free(a, c->plan);
	cql_free(a, c->reps);
	cql_free(a, c->scratch);
	cql_free(a, c->mark);
	cql_free(a, c->o_username);
	if (c->o_password)
	{
		/* do not leave the password lying around in freed memory */
		memset(c->o_password, 0, strlen(c->o_password));
		cql_free(a, c->o_password);
	}
	cql_free(a, c->o_keyspace);
	cql_free(a, c->o_driver_name);
	cql_free(a, c->o_driver_version);
	cql_free(a, c->o_application_name);
	cql_free(a, c->o_application_version);
	cql_free(a, c->o_client_id);
	cql_free(a, c);
}

/* Append "what: message" to an aggregate error text (bounded). */
static void
append_failure(char *buf, size_t cap, const char *host, int port, const cql_error *e)
{
	size_t		len = strlen(buf);

	if (len + 4 >= cap)
		return;
	snprintf(buf + len, cap - len, "%s%s:%d: %.240s", len ? "; " : "",
			 host, port, e->message[0] ? e->message : cql_status_message(e->status));
}

/*
 * Open a connection with the template options to host:port.  Every
 * connection of the cluster (control, replacement control, per host) is
 * opened here, so every connection option, require_auth included, applies
 * to each of them.
 */
static cql_status
open_conn(cql_cluster *c, const char *host, int port, cql_conn **out, cql_error *err)
{
	cql_conn_options o = c->opts;

	o.host = host;
	o.port = port;
	/* events (if this becomes the control connection) reach the cluster */
	o.on_event = cql_cluster_on_event;
	o.event_ctx = c;
	return cql_connect(&o, out, err);
}

/*
 * Detach a host's connection and close it -- unless it is the control
 * connection: callers hold on to cql_cluster_control() and must never see
 * it vanish, so it stays (perhaps broken, answering CQL_ERR_STATE) until a
 * working replacement exists.
 */
static void
host_drop_conn(cql_cluster *c, cluster_host *h)
{
	if (h->conn && h->conn != c->control)
		retire(c, h->conn);
	h->conn = NULL;
}

/* Make 'conn' (to host:port) the control connection, closing the old one
 * when no host uses it any more. */
static cql_status
replace_control(cql_cluster *c, cql_conn *conn, const char *host, int port)
{
	cql_conn   *old = c->control;
	char	   *addr = cql_strdup(c->alloc, host);

	if (!addr)
		return CQL_ERR_NOMEM;
	cql_free(c->alloc, c->control_addr);
	c->control_addr = addr;
	c->control_port = port;
	c->control = conn;
	if (old && old != conn && cql_cluster_host_of(c, old) < 0)
		retire(c, old);
	cql_cluster_register_events(c);
	return CQL_OK;
}

/*
 * cql_cluster_mark_down
 *		The host failed: skip it for a doubling backoff and take its
 *		connection out of use.
 */
void
cql_cluster_mark_down(cql_cluster *c, cluster_host *h)
{
	int			b = h->backoff_ms ? h->backoff_ms * 2 : c->down_backoff_ms;

	if (b > c->max_backoff_ms)
		b = c->max_backoff_ms;
	if (b < 1)
		b = 1;
	h->backoff_ms = b;
	h->down_until = cql_now_ms() + b;
	host_drop_conn(c, h);
	c->stats.hosts_marked_down++;
}

/* The host works (or says it is up again): no backoff. */
void
cql_cluster_mark_up(cluster_host *h)
{
	h->backoff_ms = 0;
	h->down_until = 0;
}

/*
 * Connect the control connection: contact points in order (shuffled if
 * asked), then, on a reconnect, the hosts we already know.
 */
static cql_status
connect_control(cql_cluster *c, bool shuffle, cql_error *err)
{
	char		failures[sizeof(err->message)] = "";
	int			order[CQL_CLUSTER_MAX_CONTACTS];
	cql_error	e;

	for (int i = 0; i < c->ncps; i++)
		order[i] = i;
	if (shuffle && c->ncps > 1)
	{
		uint64_t	x = (uint64_t) cql_now_ms() ^ ((uint64_t) getpid() << 32) ^ (uint64_t) (uintptr_t) c;

		for (int i = c->ncps - 1; i > 0; i--)
		{
			int			j,
						t;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			j = (int) (x % (uint64_t) (i + 1));
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	}

	/* known hosts first on a reconnect: the contact points may be gone */
	for (int i = 0; i < c->nhosts; i++)
	{
		cluster_host *h = &c->hosts[i];
		cql_conn   *conn = NULL;

		if (!h->allowed || !cql_cluster_host_is_up(h, cql_now_ms()))
			continue;
		if (h->conn && cql_conn_status(h->conn) == CQL_OK)
			conn = h->conn;
		else
		{
			host_drop_conn(c, h);
			cql_error_clear(&e);
			if (open_conn(c, h->address, h->port, &conn, &e) != CQL_OK)
			{
				append_failure(failures, sizeof(failures), h->address, h->port, &e);
				cql_cluster_mark_down(c, h);
				continue;
			}
			h->conn = conn;
			cql_cluster_mark_up(h);
		}
		if (replace_control(c, conn, h->address, h->port) != CQL_OK)
			goto nomem;
		return CQL_OK;
	}

	for (int k = 0; k < c->ncps; k++)
	{
		const cql_contact_point *cp = &c->cps[order[k]];
		cql_conn   *conn = NULL;

		cql_error_clear(&e);
		if (open_conn(c, cp->host, cp->port, &conn, &e) != CQL_OK)
		{
			append_failure(failures, sizeof(failures), cp->host, cp->port, &e);
			/* a server that answers but refuses us will refuse everywhere */
			if (e.status == CQL_ERR_AUTH || e.status == CQL_ERR_INTERRUPTED)
			{
				*err = e;
				return e.status;
			}
			continue;
		}
		if (replace_control(c, conn, cp->host, cp->port) != CQL_OK)
		{
			cql_conn_close(conn);
			goto nomem;
		}
		return CQL_OK;
	}
	cql_error_setf(err, CQL_ERR_NO_HOST, "no host could be reached: %s", failures);
	return CQL_ERR_NO_HOST;

nomem:
	cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
	return CQL_ERR_NOMEM;
}

/* Run a query on the control connection. */
static cql_status
control_query(cql_cluster *c, const char *q, cql_result *res, cql_error *err)
{
	memset(res, 0, sizeof(*res));
	cql_error_clear(err);
	return cql_query(c->control, q, NULL, res, err);
}

static cql_status
load_keyspaces(cql_cluster *c, cql_error *err)
{
	cql_result	res;
	cql_status	st;

	if (!c->tm)
		return CQL_OK;
	st = control_query(c, "SELECT keyspace_name, replication FROM system_schema.keyspaces",
					   &res, err);
	if (st == CQL_OK)
	{
		st = cql_token_map_load_keyspaces(c->tm, &res);
		if (st != CQL_OK)
			cql_error_setf(err, st, "cannot load keyspace replication: %s",
						   cql_status_message(st));
	}
	cql_result_free(&res);
	c->keyspaces_loaded_at = cql_now_ms();
	return st;
}

/*
 * Replace the host list with a new topology, keeping the connections and
 * failure state of hosts that are still there (same address and port).
 */
static cql_status
apply_topology(cql_cluster *c, cql_topology *t, cql_error *err)
{
	const cql_allocator *a = c->alloc;
	cluster_host *nh;
	int		   *plan,
			   *reps,
			   *scratch;
	bool	   *mark;
	cql_token_map *tm = NULL;
	cql_status	st;
	int			n = t->nhosts;

	if (c->token_aware_wanted && (st = cql_topology_token_map(t, a, &tm)) != CQL_OK)
	{
		if (st != CQL_ERR_TOO_LARGE)
		{
			cql_error_setf(err, st, "cannot build the token map: %s", cql_status_message(st));
			return st;
		}
		/* a ring beyond our limits: route without it */
		tm = NULL;
		if (t->token_aware)
		{
			t->token_aware = false;
			snprintf(t->why, sizeof(t->why),
					 "the ring has more than %d tokens", CQL_CLUSTER_MAX_TOKENS);
		}
	}
	/* allocate everything first: on failure the cluster stays as it was */
	nh = cql_alloc0(a, sizeof(cluster_host) * (size_t) (n + 1));
	plan = cql_alloc0(a, sizeof(int) * (size_t) (n + 1));
	reps = cql_alloc0(a, sizeof(int) * (size_t) (n + 1));
	scratch = cql_alloc0(a, sizeof(int) * (size_t) (n + 1));
	mark = cql_alloc0(a, sizeof(bool) * (size_t) (n + 1));
	if (!nh || !plan || !reps || !scratch || !mark)
	{
		cql_free(a, nh);
		cql_free(a, plan);
		cql_free(a, reps);
		cql_free(a, scratch);
		cql_free(a, mark);
		cql_token_map_free(tm);
		cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
		return CQL_ERR_NOMEM;
	}
	for (int i = 0; i < n; i++)
	{
		cql_topology_host *th = &t->hosts[i];

		/* steal the strings of the topology */
		nh[i].address = th->address;
		nh[i].port = th->port;
		nh[i].datacenter = th->datacenter;
		nh[i].rack = th->rack;
		nh[i].release_version = th->release_version;
		memcpy(nh[i].host_id, th->host_id, sizeof(nh[i].host_id));
		nh[i].ntokens = th->ntokens;
		/* hosts[0] is the control node, reached through an allowed address */
		nh[i].allowed = c->allowed == NULL || i == 0 ||
			cql_address_set_contains(c->allowed, th->address, th->port);
		th->address = th->datacenter = th->rack = th->release_version = NULL;
		for (int j = 0; j < c->nhosts; j++)
		{
			cluster_host *oh = &c->hosts[j];

			if (oh->address && oh->port == nh[i].port &&
				strcmp(oh->address, nh[i].address) == 0)
			{
				nh[i].conn = oh->conn;
				nh[i].down_until = oh->down_until;
				nh[i].backoff_ms = oh->backoff_ms;
				oh->conn = NULL;
				break;
			}
		}
	}
	/* the control connection belongs to hosts[0] */
	if (nh[0].conn && nh[0].conn != c->control)
		retire(c, nh[0].conn);
	nh[0].conn = c->control;
	cql_cluster_mark_up(&nh[0]);
	for (int j = 0; j < c->nhosts; j++)
	{
		if (c->hosts[j].conn == c->control)
			c->hosts[j].conn = NULL;
		host_clear(c, &c->hosts[j]);
	}
	cql_free(a, c->hosts);
	c->hosts = nh;
	c->nhosts = n;

	cql_free(a, c->plan);
	cql_free(a, c->reps);
	cql_free(a, c->scratch);
	cql_free(a, c->mark);
	c->plan = plan;
	c->reps = reps;
	c->scratch = scratch;
	c->mark = mark;

	cql_free(a, c->cluster_name);
	cql_free(a, c->partitioner);
	c->cluster_name = t->cluster_name;
	c->partitioner = t->partitioner;
	t->cluster_name = t->partitioner = NULL;
	cql_token_map_free(c->tm);
	c->tm = tm;
	if (!c->token_aware_wanted)
		snprintf(c->why, sizeof(c->why), "token-aware routing is switched off");
	else if (!t->token_aware)
		snprintf(c->why, sizeof(c->why), "%s", t->why);
	else
		c->why[0] = '\0';
	return CQL_OK;
}

static cql_status
load_topology(cql_cluster *c, cql_error *err)
{
	cql_result	local,
				peers;
	cql_topology *t = NULL;
	cql_status	st;

	st = control_query(c, "SELECT * FROM system.local WHERE key='local'", &local, err);
	if (st != CQL_OK)
	{
		cql_result_free(&local);
		return st;
	}
	st = control_query(c, "SELECT * FROM system.peers_v2", &peers, err);
	if (st == CQL_ERR_SERVER)
	{
		/* before 4.0 there is no peers_v2 */
		cql_result_free(&peers);
		st = control_query(c, "SELECT * FROM system.peers", &peers, err);
	}
	if (st != CQL_OK)
	{
		cql_result_free(&local);
		cql_result_free(&peers);
		return st;
	}

	st = cql_topology_parse(&local, &peers,
							c->control_addr, c->control_port, c->alloc, &t, err);
	cql_result_free(&local);
	cql_result_free(&peers);
	if (st != CQL_OK)
		return st;
	st = apply_topology(c, t, err);
	cql_topology_free(t, c->alloc);
	if (st != CQL_OK)
		return st;

	if (c->local_dc)
	{
		bool		found = false;

		for (int i = 0; i < c->nhosts && !found; i++)
			found = strcmp(c->hosts[i].datacenter, c->local_dc) == 0;
		if (!found)
		{
			char		dcs[256] = "";

			for (int i = 0; i < c->nhosts; i++)
				if (!strstr(dcs, c->hosts[i].datacenter) && strlen(dcs) < 200)
					snprintf(dcs + strlen(dcs), sizeof(dcs) - strlen(dcs), "%s\"%s\"",
							 dcs[0] ? ", " : "", c->hosts[i].datacenter);
			cql_error_setf(err, CQL_ERR_INVALID_ARG,
						   "local data center \"%s\" is not a data center of cluster \"%s\" (known: %s)",
						   c->local_dc, c->cluster_name, dcs);
			return CQL_ERR_INVALID_ARG;
		}
	}
	return load_keyspaces(c, err);
}

/*
 * Replace a broken control connection: its host is marked down (so that
 * other known hosts are tried first) and connect_control() looks for a new
 * one.  The broken connection stays in place until that succeeds.
 */
static cql_status
reconnect_control(cql_cluster *c, cql_error *err)
{
	if (c->control)
	{
		int			h = cql_cluster_host_of(c, c->control);

		if (h >= 0)
			cql_cluster_mark_down(c, &c->hosts[h]);
	}
	return connect_control(c, false, err);
}

/*
 * build_allowed
 *		contact_points_only: the endpoints we may connect to are the contact
 *		points, by name and by every address they resolve to now.
 */
static cql_status
build_allowed(cql_cluster *c, cql_error *err)
{
	cql_status	st = cql_address_set_create(c->alloc, &c->allowed);

	for (int i = 0; st == CQL_OK && i < c->ncps; i++)
		st = cql_address_set_add(c->allowed, c->cps[i].host, c->cps[i].port,
								 c->opts.wait, c->opts.wait_ctx,
								 c->opts.connect_timeout_ms > 0
								 ? c->opts.connect_timeout_ms : 10000);
	if (st == CQL_ERR_INTERRUPTED)
		cql_error_setf(err, st, "interrupted while resolving the contact points");
	else if (st != CQL_OK)
		cql_error_setf(err, st, "out of memory");
	return st;
}

cql_status
cql_cluster_connect_opts(const cql_cluster_options *o, cql_cluster **out,
						 cql_error *err)
{
	const cql_allocator *a;
	cql_cluster *c;
	cql_status	st;
	bool		fail = false;
	int			default_port;

	*out = NULL;
	cql_error_clear(err);
	if (!o || !o->conn)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "no connection options");
		return CQL_ERR_INVALID_ARG;
	}
	a = o->conn->alloc ? o->conn->alloc : &cql_malloc_allocator;
	if (!(c = cql_alloc0(a, sizeof(*c))))
	{
		cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
		return CQL_ERR_NOMEM;
	}
	c->alloc = a;
	c->opts = *o->conn;
	c->opts.alloc = a;
	c->opts.username = c->o_username = dup_opt(a, o->conn->username, &fail);
	c->opts.password = c->o_password = dup_opt(a, o->conn->password, &fail);
	c->opts.keyspace = c->o_keyspace = dup_opt(a, o->conn->keyspace, &fail);
	c->opts.driver_name = c->o_driver_name = dup_opt(a, o->conn->driver_name, &fail);
	c->opts.driver_version = c->o_driver_version = dup_opt(a, o->conn->driver_version, &fail);
	c->opts.application_name = c->o_application_name = dup_opt(a, o->conn->application_name, &fail);
	c->opts.application_version = c->o_application_version = dup_opt(a, o->conn->application_version, &fail);
	c->opts.client_id = c->o_client_id = dup_opt(a, o->conn->client_id, &fail);
	c->opts.host = NULL;
	if (o->local_dc && o->local_dc[0])
		c->local_dc = dup_opt(a, o->local_dc, &fail);
	if (fail)
	{
		cql_cluster_free(c);
		cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
		return CQL_ERR_NOMEM;
	}
	c->token_aware_wanted = o->token_aware;
	c->events_wanted = o->events;
	c->user_on_event = o->conn->on_event;
	c->user_event_ctx = o->conn->event_ctx;
	c->down_backoff_ms = o->down_backoff_ms > 0 ? o->down_backoff_ms : 1000;
	c->max_backoff_ms = o->max_backoff_ms >= c->down_backoff_ms ? o->max_backoff_ms : c->down_backoff_ms;

	default_port = o->conn->port > 0 ? o->conn->port : 9042;
	st = cql_contact_points_parse(o->hosts ? o->hosts : o->conn->host, default_port,
								  a, &c->cps, &c->ncps, err);
	if (st == CQL_OK && o->contact_points_only)
		st = build_allowed(c, err);
	if (st == CQL_OK)
		st = connect_control(c, o->shuffle_contact_points, err);
	if (st == CQL_OK)
		st = load_topology(c, err);
	if (st != CQL_OK)
	{
		cql_cluster_free(c);
		return st;
	}
	*out = c;
	return CQL_OK;
}

cql_status
cql_cluster_connect(const cql_conn_options *opts, const char *hosts,
					const char *local_dc, cql_cluster **out, cql_error *err)
{
	cql_cluster_options o;

	cql_cluster_options_init(&o);
	o.conn = opts;
	o.hosts = hosts;
	o.local_dc = local_dc;
	return cql_cluster_connect_opts(&o, out, err);
}

cql_conn *
cql_cluster_control(cql_cluster *c)
{
	if (c->control && cql_conn_status(c->control) != CQL_OK)
	{
		cql_error	e;

		/*
		 * Best effort: on failure the broken connection is returned and
		 * its calls fail with CQL_ERR_STATE and the original reason;
		 * cql_cluster_refresh() reports why no replacement was found.
		 */
		cql_error_clear(&e);
		(void) reconnect_control(c, &e);
	}
	return c->control;
}

cql_status
cql_cluster_refresh(cql_cluster *c, cql_error *err)
{
	cql_status	st;

	cql_error_clear(err);
	if ((!c->control || cql_conn_status(c->control) != CQL_OK) &&
		(st = reconnect_control(c, err)) != CQL_OK)
		return st;
	st = load_topology(c, err);
	if (st != CQL_OK && cql_conn_status(c->control) != CQL_OK)
	{
		/* the control connection broke during the refresh: one retry */
		if ((st = reconnect_control(c, err)) == CQL_OK)
			st = load_topology(c, err);
	}
	return st;
}

cql_status
cql_cluster_refresh_keyspaces(cql_cluster *c, cql_error *err)
{
	cql_error_clear(err);
	if (cql_conn_status(c->control) != CQL_OK)
		return cql_cluster_refresh(c, err);
	return load_keyspaces(c, err);
}

int
cql_cluster_hosts(cql_cluster *c, cql_host_info *out, int max)
{
	int64_t		now = cql_now_ms();

	for (int i = 0; i < c->nhosts && i < max && out; i++)
	{
		cluster_host *h = &c->hosts[i];

		out[i].address = h->address;
		out[i].port = h->port;
		out[i].datacenter = h->datacenter;
		out[i].rack = h->rack;
		out[i].host_id = h->host_id;
		out[i].release_version = h->release_version;
		out[i].ntokens = h->ntokens;
		out[i].is_control = h->conn != NULL && h->conn == c->control;
		out[i].connected = h->conn != NULL;
		out[i].up = cql_cluster_host_is_up(h, now);
		out[i].allowed = h->allowed;
	}
	return c->nhosts;
}

/*
 * cql_cluster_trim_prepared
 *		cql_conn_trim_prepared on every open connection of the cluster (the
 *		control connection included); same contract.  Returns the number of
 *		statements freed.
 */
int
cql_cluster_trim_prepared(cql_cluster *c, int max_entries)
{
	int			freed = 0;
	bool		control_seen = false;

	for (int i = 0; i < c->nhosts; i++)
	{
		cluster_host *h = &c->hosts[i];

		if (h->conn == NULL)
			continue;
		if (h->conn == c->control)
			control_seen = true;
		freed += cql_conn_trim_prepared(h->conn, max_entries);
	}
	if (c->control && !control_seen)
		freed += cql_conn_trim_prepared(c->control, max_entries);
	return freed;
}

int64_t
cql_cluster_token(const cql_cluster *c, const uint8_t *key, size_t len)
{
	return cql_murmur3_token(key, len);
}

bool
cql_cluster_token_aware(const cql_cluster *c, const char **why)
{
	if (why)
		*why = c->tm ? NULL : c->why;
	return c->tm != NULL;
}

const char *
cql_cluster_name(const cql_cluster *c)
{
	return c->cluster_name ? c->cluster_name : "";
}

const char *
cql_cluster_partitioner(const cql_cluster *c)
{
	return c->partitioner ? c->partitioner : "";
}

int
cql_cluster_replicas(cql_cluster *c, const char *keyspace, int64_t token,
					 int *hosts, int max)
{
	if (!c->tm || !keyspace)
		return 0;
	if (!cql_token_map_has_keyspace(c->tm, keyspace) && c->control &&
		cql_now_ms() - c->keyspaces_loaded_at >= 1000)
	{
		/* created after we connected?  Reload, at most once a second. */
		cql_error	e;

		cql_error_clear(&e);
		(void) load_keyspaces(c, &e);
	}
	return cql_token_map_replicas(c->tm, keyspace, token, hosts, max);
}

static bool
is_local(const cql_cluster *c, const cluster_host *h)
{
	return !c->local_dc || strcmp(h->datacenter, c->local_dc) == 0;
}

/*
 * The query plan: local replicas that are up, other local hosts that are
 * up (round robin), remote replicas, remote hosts, and last every host in
 * backoff (replicas first): better a retry than a certain failure.
 */
static int
build_plan(cql_cluster *c, const int *reps, int nreps)
{
	int64_t		now = cql_now_ms();
	int			n = 0;
	int			start = c->nhosts ? (int) (c->rr++ % (unsigned) c->nhosts) : 0;

	memset(c->mark, 0, sizeof(bool) * (size_t) c->nhosts);
	for (int pass = 0; pass < 6; pass++)
	{
		bool		want_local = pass == 0 || pass == 1;
		bool		want_up = pass < 4;
		bool		replicas_only = pass == 0 || pass == 2 || pass == 4;

		if (replicas_only)
		{
			for (int i = 0; i < nreps; i++)
			{
				int			h = reps[i];

				if (h < 0 || h >= c->nhosts || c->mark[h] || !c->hosts[h].allowed)
					continue;
				if (want_up && (!cql_cluster_host_is_up(&c->hosts[h], now) ||
								is_local(c, &c->hosts[h]) != want_local))
					continue;
				c->mark[h] = true;
				c->plan[n++] = h;
			}
		}
		else
		{
			for (int k = 0; k < c->nhosts; k++)
			{
				int			h = (start + k) % c->nhosts;

				if (c->mark[h] || !c->hosts[h].allowed)
					continue;
				if (want_up && (!cql_cluster_host_is_up(&c->hosts[h], now) ||
								is_local(c, &c->hosts[h]) != want_local))
					continue;
				c->mark[h] = true;
				c->plan[n++] = h;
			}
		}
	}
	return n;
}

/* Is host number h in the list? */
static bool
in_list(int h, const int *list, int n)
{
	for (int i = 0; i < n; i++)
		if (list[i] == h)
			return true;
	return false;
}

/*
 * choose
 *		Walk the query plan and return a connection to its first host that
 *		can be used, opening one when needed.  Hosts in 'avoid' (those a
 *		retry already tried) are skipped while any other host remains: a
 *		retry goes to the next host of the plan, and only when every host
 *		has been tried does it come back to one.
 */
static cql_status
choose(cql_cluster *c, const int *reps, int nreps, const int *avoid, int navoid,
	   cql_conn **conn, cql_error *err)
{
	char		failures[sizeof(err->message)] = "";
	int			n;

	*conn = NULL;
	cql_error_clear(err);
	if (c->nhosts == 0)
	{
		cql_error_setf(err, CQL_ERR_NO_HOST, "no host known");
		return CQL_ERR_NO_HOST;
	}
	n = build_plan(c, reps, nreps);
	if (navoid > 0)
	{
		int			k = 0;

		/* stable: the hosts to avoid go to the end of the plan */
		for (int i = 0; i < n; i++)
			if (!in_list(c->plan[i], avoid, navoid))
				c->scratch[k++] = c->plan[i];
		for (int i = 0; i < n; i++)
			if (in_list(c->plan[i], avoid, navoid))
				c->scratch[k++] = c->plan[i];
		memcpy(c->plan, c->scratch, sizeof(int) * (size_t) n);
	}
	for (int i = 0; i < n; i++)
	{
		cluster_host *h = &c->hosts[c->plan[i]];
		cql_error	e;

		/* broken (idle close, earlier error): try a fresh one at once */
		if (h->conn && cql_conn_status(h->conn) != CQL_OK)
			host_drop_conn(c, h);
		if (!h->conn)
		{
			cql_error_clear(&e);
			if (open_conn(c, h->address, h->port, &h->conn, &e) != CQL_OK)
			{
				h->conn = NULL;
				append_failure(failures, sizeof(failures), h->address, h->port, &e);
				if (e.status == CQL_ERR_INTERRUPTED)
				{
					*err = e;
					return e.status;
				}
				cql_cluster_mark_down(c, h);
				continue;
			}
			/* a working connection replaces a broken control connection */
			if (cql_conn_status(c->control) != CQL_OK)
				(void) replace_control(c, h->conn, h->address, h->port);
		}
		cql_cluster_mark_up(h);
		*conn = h->conn;
		return CQL_OK;
	}
	cql_error_setf(err, CQL_ERR_NO_HOST, "no host could be reached: %s", failures);
	return CQL_ERR_NO_HOST;
}

/*
 * cql_cluster_conn_avoiding
 *		The coordinator for a token (NULL: any host), as
 *		cql_cluster_conn_for_token, but hosts in 'avoid' come last.  Events
 *		that arrived on the control connection are applied first.
 */
cql_status
cql_cluster_conn_avoiding(cql_cluster *c, const char *keyspace,
						  const int64_t *token, const int *avoid, int navoid,
						  cql_conn **conn, cql_error *err)
{
	int			nreps = 0;

	cql_cluster_poll_events(c);
	if (token && keyspace && c->tm)
	{
		nreps = cql_cluster_replicas(c, keyspace, *token, c->reps, c->nhosts);
		if (nreps > c->nhosts)
			nreps = c->nhosts;
	}
	return choose(c, c->reps, nreps, avoid, navoid, conn, err);
}

cql_status
cql_cluster_conn_for_token(cql_cluster *c, const char *keyspace,
						   const int64_t *token, cql_conn **conn, cql_error *err)
{
	return cql_cluster_conn_avoiding(c, keyspace, token, NULL, 0, conn, err);
}

cql_status
cql_cluster_conn_for_key(cql_cluster *c, const char *keyspace,
						 const uint8_t *key, size_t len,
						 cql_conn **conn, cql_error *err)
{
	int64_t		token;

	if (!key)
		return cql_cluster_conn_for_token(c, keyspace, NULL, conn, err);
	token = cql_murmur3_token(key, len);
	return cql_cluster_conn_for_token(c, keyspace, &token, conn, err);
}

int
cql_cluster_host_of(const cql_cluster *c, const cql_conn *conn)
{
	if (!conn)
		return -1;
	for (int i = 0; i < c->nhosts; i++)
		if (c->hosts[i].conn == conn)
			return i;
	return -1;
}

void
cql_cluster_report_failure(cql_cluster *c, cql_conn *conn, cql_status st)
{
	int			h = cql_cluster_host_of(c, conn);

	if (h < 0)
		return;
	/*
	 * A server error means the host answered: it is not down.  A request
	 * that got no answer in time (TIMEOUT) is different: the node may be
	 * paused or overloaded, and the next requests should go elsewhere
	 * until its backoff ends.  Its connection is retired but not broken:
	 * other requests in flight on it may still be answered (a slow query
	 * is not a dead node); a heartbeat decides that one.
	 */
	if (cql_conn_status(conn) == CQL_OK &&
		st != CQL_ERR_IO && st != CQL_ERR_CLOSED && st != CQL_ERR_STATE &&
		st != CQL_ERR_CONNECT && st != CQL_ERR_TIMEOUT)
		return;
	cql_cluster_mark_down(c, &c->hosts[h]);
}

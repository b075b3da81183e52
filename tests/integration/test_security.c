/*
 * test_security.c
 *		Security options of the library against the live test bed:
 *		- require_auth on a cluster: the no-auth cluster is refused (every
 *		  connection the cluster opens uses the option); the auth cluster
 *		  (CQL_AUTH_HOST, cassandra/cassandra, three nodes) is accepted,
 *		  the peers it announces are found and keys of an RF 1 keyspace
 *		  are routed to every one of them over authenticated
 *		  connections; a wrong password is CQL_ERR_AUTH, with a message
 *		  that does not show it;
 *		- contact_points_only: with one contact point, no connection is ever
 *		  opened to the peers from system.peers_v2; without it routing uses
 *		  every host (multi-node bed only);
 *		- cql_conn_trim_prepared: the prepared-statement cache is bounded.
 *
 * Environment: CQL_HOST, CQL_PORT, CQL_AUTH_HOST, CQL_AUTH_PORT,
 * CQL_USER, CQL_PASSWORD (see itest.h), CQL_CLUSTER_SIZE (1 when absent:
 * then the peer checks are reduced to the single node),
 * CQL_AUTH_CLUSTER_SIZE (nodes of the auth cluster, 3 when absent).
 */
#include "cql_cluster.h"
#include "itest.h"

#define KS "cql_fdw_security_t"
#define KS_AUTH "cql_fdw_security_auth_t"
#define WRONG_PASSWORD "not-the-password-4711"

static void
cluster_options(cql_conn_options *o, const char *host, int port)
{
	itest_options(o, 0, CQL_COMPRESSION_NONE);
	o->host = host;
	o->port = port;
	o->connect_timeout_ms = 5000;
}

/*
 * route_keys
 *		Route 300 keys of an RF 1 keyspace, so that every key has exactly
 *		one replica; count the hosts used, the keys without a connection
 *		(*bad) and, when unauth is not NULL, the keys whose connection did
 *		not authenticate (*unauth).
 */
static int
route_keys(cql_cluster *cl, const char *ks, int *used_hosts, int *bad, int *unauth)
{
	int			counts[64] = {0};
	int			used = 0;

	*bad = 0;
	if (unauth)
		*unauth = 0;
	for (int i = 0; i < 300; i++)
	{
		uint8_t		k[4] = {(uint8_t) (i >> 24), (uint8_t) (i >> 16), (uint8_t) (i >> 8), (uint8_t) i};
		cql_conn   *conn = NULL;
		cql_error	err;
		int			h;

		if (cql_cluster_conn_for_key(cl, ks, k, 4, &conn, &err) != CQL_OK)
		{
			if ((*bad)++ < 3)
				diag("conn_for_key: %s", err.message);
			continue;
		}
		if (unauth && !cql_conn_authenticated(conn))
			(*unauth)++;
		h = cql_cluster_host_of(cl, conn);
		if (h >= 0 && h < 64)
			counts[h]++;
	}
	for (int i = 0; i < 64; i++)
		used += counts[i] > 0;
	*used_hosts = used;
	return used;
}

/* ---------------------------------------------------------------------
 * require_auth
 * ---------------------------------------------------------------------
 */
static void
test_require_auth(void)
{
	cql_conn_options o;
	cql_cluster_options co;
	cql_cluster *cl = NULL;
	cql_error	err;
	cql_status	st;
	char		hosts[128];
	int			size = atoi(itest_env("CQL_AUTH_CLUSTER_SIZE", "3"));

	/* the no-auth cluster: connecting fails, credentials or not */
	cluster_options(&o, itest_host(), itest_port());
	o.username = itest_user();
	o.password = itest_password();
	o.require_auth = true;
	cql_cluster_options_init(&co);
	co.conn = &o;
	snprintf(hosts, sizeof(hosts), "%s:%d", itest_host(), itest_port());
	co.hosts = hosts;
	st = cql_cluster_connect_opts(&co, &cl, &err);
	is_int(st, CQL_ERR_AUTH, "require_auth: cluster connect to the no-auth cluster refused");
	ok(cl == NULL, "... no cluster handed out");
	ok(strstr(err.message, "did not ask for authentication") != NULL,
	   "... message: %s", err.message);
	ok(strstr(err.message, itest_password()) == NULL || strlen(itest_password()) < 4,
	   "... without the password");
	cql_cluster_free(cl);
	cl = NULL;

	/* a plain connection too */
	{
		cql_conn   *c = NULL;

		st = cql_connect(&o, &c, &err);
		is_int(st, CQL_ERR_AUTH, "require_auth: plain connect to the no-auth node refused");
		cql_conn_close(c);
	}

	/* the auth cluster: accepted, and authenticated */
	cluster_options(&o, itest_auth_host(), itest_auth_port());
	o.username = itest_user();
	o.password = itest_password();
	o.require_auth = true;

	/*
	 * A keyspace with RF 1 on it, made before the cluster handle reads the
	 * schema: each key then has one replica, and the keys below spread
	 * over every node.
	 */
	{
		cql_conn   *c = NULL;

		st = cql_connect(&o, &c, &err);
		if (!ok(st == CQL_OK, "require_auth: plain connect to the auth node (%s)", err.message))
		{
			cql_conn_close(c);
			return;
		}
		ok(itest_exec(c, "CREATE KEYSPACE IF NOT EXISTS " KS_AUTH " WITH replication = "
					  "{'class': 'SimpleStrategy', 'replication_factor': 1}"),
		   "create keyspace " KS_AUTH " on the auth cluster");
		cql_conn_close(c);
	}

	/* one contact point: the other nodes come from system.peers */
	snprintf(hosts, sizeof(hosts), "%s:%d", itest_auth_host(), itest_auth_port());
	co.hosts = hosts;
	st = cql_cluster_connect_opts(&co, &cl, &err);
	if (!ok(st == CQL_OK, "require_auth: cluster connect to the auth node (%s)", err.message))
		return;
	ok(cql_conn_authenticated(cql_cluster_control(cl)), "... control connection authenticated");
	{
		cql_conn   *conn = NULL;
		uint8_t		key[4] = {0, 0, 0, 1};

		st = cql_cluster_conn_for_key(cl, "system", key, 4, &conn, &err);
		ok(st == CQL_OK && conn && cql_conn_authenticated(conn),
		   "... a routed connection is authenticated too (%s)", err.message);
	}

	/* every peer: keys routed to each node, over authenticated connections */
	{
		cql_host_info hi[64];
		int			nh,
					used,
					bad,
					unauth,
					connected = 0;

		nh = cql_cluster_hosts(cl, hi, 64);
		is_int(nh, size, "require_auth: the auth cluster's %d nodes are known", size);
		ok(cql_cluster_token_aware(cl, NULL), "... and routing is token-aware");
		route_keys(cl, KS_AUTH, &used, &bad, &unauth);
		is_int(bad, 0, "require_auth: a connection for every key of " KS_AUTH);
		is_int(used, size, "... keys routed to all %d nodes", size);
		is_int(unauth, 0, "... every routed connection authenticated");
		nh = cql_cluster_hosts(cl, hi, 64);
		for (int i = 0; i < nh && i < 64; i++)
		{
			connected += hi[i].connected;
			if (!hi[i].connected)
				diag("not connected: %s:%d", hi[i].address, hi[i].port);
		}
		is_int(connected, size, "... the handle holds a connection to each of the %d nodes", size);
	}
	cql_cluster_free(cl);
	cl = NULL;

	/* a wrong password: refused by every node, and not shown */
	o.password = WRONG_PASSWORD;
	st = cql_cluster_connect_opts(&co, &cl, &err);
	is_int(st, CQL_ERR_AUTH, "require_auth: wrong password on the auth cluster -> CQL_ERR_AUTH");
	ok(cl == NULL, "... no cluster handed out");
	ok(strstr(err.message, WRONG_PASSWORD) == NULL,
	   "... message without the password: %s", err.message);
	cql_cluster_free(cl);
}

/* ---------------------------------------------------------------------
 * contact_points_only
 * ---------------------------------------------------------------------
 */

static void
test_contact_points_only(void)
{
	cql_conn_options o;
	cql_cluster_options co;
	cql_cluster *cl = NULL;
	cql_error	err;
	cql_status	st;
	cql_host_info hosts[64];
	int			nh;
	int			used,
				bad;
	int			size = atoi(itest_env("CQL_CLUSTER_SIZE", "1"));
	char		cp[128];

	cluster_options(&o, itest_host(), itest_port());
	cql_cluster_options_init(&co);
	co.conn = &o;
	snprintf(cp, sizeof(cp), "%s:%d", itest_host(), itest_port());
	co.hosts = cp;

	/* keyspace with RF 1, so every key has exactly one replica */
	{
		cql_conn   *c = itest_connect_or_die(&o);

		ok(itest_exec(c, "CREATE KEYSPACE IF NOT EXISTS " KS " WITH replication = "
					  "{'class': 'SimpleStrategy', 'replication_factor': 1}"),
		   "create keyspace " KS);
		cql_conn_close(c);
	}

	/* on: only the contact point is ever connected */
	co.contact_points_only = true;
	st = cql_cluster_connect_opts(&co, &cl, &err);
	if (!ok(st == CQL_OK, "contact_points_only: connect (%s)", err.message))
		return;
	nh = cql_cluster_hosts(cl, hosts, 64);
	is_int(nh, size, "contact_points_only: every host is still known (token map)");
	ok(cql_cluster_token_aware(cl, NULL), "contact_points_only: still token-aware");
	route_keys(cl, KS, &used, &bad, NULL);
	is_int(bad, 0, "contact_points_only: a connection for every key");
	is_int(used, 1, "contact_points_only: every key goes to the one allowed host");
	nh = cql_cluster_hosts(cl, hosts, 64);
	{
		int			connected_disallowed = 0;
		int			allowed = 0;

		for (int i = 0; i < nh && i < 64; i++)
		{
			allowed += hosts[i].allowed;
			if (hosts[i].connected && !hosts[i].allowed)
				connected_disallowed++;
			if (hosts[i].connected)
				ok(strcmp(hosts[i].address, itest_host()) == 0,
				   "contact_points_only: connected host %s:%d is the contact point",
				   hosts[i].address, hosts[i].port);
		}
		is_int(allowed, 1, "contact_points_only: exactly one host allowed");
		is_int(connected_disallowed, 0, "contact_points_only: no peer ever connected");
	}
	/* the refresh path keeps the restriction */
	st = cql_cluster_refresh(cl, &err);
	ok(st == CQL_OK, "contact_points_only: refresh (%s)", err.message);
	route_keys(cl, KS, &used, &bad, NULL);
	is_int(used, 1, "contact_points_only: after refresh, still one host");
	cql_cluster_free(cl);
	cl = NULL;

	/* off: routing uses every host, as before */
	co.contact_points_only = false;
	st = cql_cluster_connect_opts(&co, &cl, &err);
	if (!ok(st == CQL_OK, "default: connect (%s)", err.message))
		return;
	route_keys(cl, KS, &used, &bad, NULL);
	is_int(bad, 0, "default: a connection for every key");
	is_int(used, size, "default: keys routed to all %d hosts", size);
	nh = cql_cluster_hosts(cl, hosts, 64);
	{
		int			allowed = 0;

		for (int i = 0; i < nh && i < 64; i++)
			allowed += hosts[i].allowed;
		is_int(allowed, nh, "default: every host allowed");
	}
	cql_cluster_free(cl);
}

/* ---------------------------------------------------------------------
 * cql_conn_trim_prepared
 * ---------------------------------------------------------------------
 */
static void
test_trim_prepared(void)
{
	cql_conn_options o;
	cql_conn   *c;
	cql_prepared *ps[20];
	cql_prepared *p;
	cql_error	err;
	cql_result	res;
	cql_status	st;
	int			good = 1;

	itest_options(&o, 0, CQL_COMPRESSION_NONE);
	c = itest_connect_or_die(&o);
	for (int i = 0; i < 20; i++)
	{
		char		q[128];

		snprintf(q, sizeof(q), "SELECT release_version, (int) %d FROM system.local WHERE key = 'local'", i);
		if (cql_prepare(c, q, &ps[i], &err) != CQL_OK)
		{
			good = 0;
			itest_diag_error("prepare", CQL_ERR_SERVER, &err);
		}
	}
	ok(good, "20 statements prepared");
	is_int(cql_conn_prepared_count(c), 20, "... all cached");

	/* use statement 0 last: it must survive a trim to 5 */
	st = cql_execute(c, ps[0], NULL, &res, &err);
	ok(st == CQL_OK && res.rows_count == 1, "statement 0 executed");
	if (st == CQL_OK)
		cql_result_free(&res);
	is_int(cql_conn_trim_prepared(c, 5), 15, "trim to 5 frees 15 statements");
	is_int(cql_conn_prepared_count(c), 5, "... 5 left");
	{
		char		q[128];

		snprintf(q, sizeof(q), "SELECT release_version, (int) %d FROM system.local WHERE key = 'local'", 0);
		ok(cql_prepare(c, q, &p, &err) == CQL_OK && p == ps[0],
		   "the most recently used statement was kept (same handle)");
		snprintf(q, sizeof(q), "SELECT release_version, (int) %d FROM system.local WHERE key = 'local'", 19);
		ok(cql_prepare(c, q, &p, &err) == CQL_OK && p == ps[19],
		   "the most recently prepared one too");
		snprintf(q, sizeof(q), "SELECT release_version, (int) %d FROM system.local WHERE key = 'local'", 1);
		ok(cql_prepare(c, q, &p, &err) == CQL_OK, "a trimmed statement is simply prepared again");
		is_int(cql_conn_prepared_count(c), 6, "... and cached again");
		st = cql_execute(c, p, NULL, &res, &err);
		ok(st == CQL_OK && res.rows_count == 1, "... and runs");
		if (st == CQL_OK)
			cql_result_free(&res);
	}

	/* a statement with a request in flight is kept */
	{
		cql_request *req = NULL;

		st = cql_send_execute(c, ps[0], NULL, &req, &err);
		ok(st == CQL_OK, "execute sent, not awaited");
		cql_conn_trim_prepared(c, 0);
		is_int(cql_conn_prepared_count(c), 1, "trim to 0 keeps only the statement in flight");
		st = cql_conn_await(c, req, &res, &err);
		ok(st == CQL_OK && res.kind == CQL_RESULT_ROWS && res.rows_count == 1 &&
		   res.meta.ncols == 2 && res.meta.cols != NULL,
		   "... whose answer still decodes with its columns (%s)", err.message);
		if (st == CQL_OK)
			cql_result_free(&res);
		cql_request_free(req);
		is_int(cql_conn_trim_prepared(c, 0), 1, "once answered, it can be trimmed");
		is_int(cql_conn_prepared_count(c), 0, "... nothing left");
	}

	/* cache_clear drops from lookup; trim frees them whatever the bound */
	ok(cql_prepare(c, "SELECT key FROM system.local", &p, &err) == CQL_OK, "prepare one more");
	cql_prepared_cache_clear(c);
	is_int(cql_conn_prepared_count(c), 1, "cache_clear keeps the statement alive");
	is_int(cql_conn_trim_prepared(c, 100), 1, "trim frees statements dropped by cache_clear");
	cql_conn_close(c);
}

int
main(void)
{
	test_trim_prepared();
	test_require_auth();
	test_contact_points_only();
	return done_testing();
}

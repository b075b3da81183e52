/*
 * test_cluster.c
 *		Cluster metadata against live nodes: contact point lists with dead
 *		entries, all dead -> NO_HOST, the topology read from system.local /
 *		system.peers_v2, token-aware coordinator choice, failure backoff,
 *		local data center checks and refresh.
 *
 * With CQL_TOPOLOGY=cluster (the 3-node bed on 127.0.0.1-3) the host count
 * must equal CQL_CLUSTER_SIZE (3) and coordinators must be spread over
 * the replicas; otherwise a single node is expected.
 *
 * Tool mode for crosscheck_replicas.py:
 *	test_cluster --print-replicas KEYSPACE NKEYS
 * prints
 *	host IDX ADDRESS PORT DC RACK NTOKENS
 *	key int VALUE HEX TOKEN COORDINATOR REPLICAS
 *	key bigint VALUE HEX TOKEN COORDINATOR REPLICAS
 *	key text TEXTHEX HEX TOKEN COORDINATOR REPLICAS
 *	key comp INT TEXTHEX HEX TOKEN COORDINATOR REPLICAS
 * (REPLICAS comma-separated addresses, "-" for none or empty bytes).
 *
 * Environment: CQL_HOST (127.0.0.1), CQL_PORT (9042), CQL_TOPOLOGY,
 * CQL_CLUSTER_SIZE (3), CQL_LOCAL_DC (optional), CQL_USER and
 * CQL_PASSWORD (only sent when set).
 */
#include "cql_cluster.h"
#include "cql_schema.h"
#include "itest.h"

#include <time.h>

static void
options(cql_conn_options *o)
{
	cql_conn_options_init(o);
	o->host = itest_host();
	o->port = itest_port();
	o->connect_timeout_ms = 5000;
	o->request_timeout_ms = 60000;
	o->driver_name = "cql_fdw-test_cluster";
	/* credentials only when asked for (the auth node of the bed) */
	o->username = getenv("CQL_USER");
	o->password = getenv("CQL_PASSWORD");
}

static void
hex(char *out, const uint8_t *p, size_t n)
{
	if (n == 0)
	{
		strcpy(out, "-");
		return;
	}
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/* ---------------------------------------------------------------------
 * Tool mode
 * ---------------------------------------------------------------------
 */
static void
print_key(cql_cluster *cl, const char *ks, const char *kind, const char *fields,
		  const uint8_t *key, size_t len)
{
	char		hk[1024];
	int64_t		token = cql_cluster_token(cl, key, len);
	int			reps[64];
	int			n = cql_cluster_replicas(cl, ks, token, reps, 64);
	cql_host_info hosts[64];
	int			nh = cql_cluster_hosts(cl, hosts, 64);
	cql_conn   *conn = NULL;
	cql_error	err;
	int			coord = -1;

	cql_error_clear(&err);
	if (cql_cluster_conn_for_key(cl, ks, key, len, &conn, &err) == CQL_OK)
		coord = cql_cluster_host_of(cl, conn);
	hex(hk, key, len);
	printf("key %s %s %s %" PRId64 " %s ", kind, fields, hk, token,
		   coord >= 0 && coord < nh ? hosts[coord].address : "?");
	if (n == 0)
		printf("-");
	for (int i = 0; i < n && i < 64; i++)
		printf("%s%s", i ? "," : "", reps[i] < nh ? hosts[reps[i]].address : "?");
	printf("\n");
}

static int
print_replicas(const char *ks, int nkeys)
{
	cql_conn_options o;
	cql_cluster *cl = NULL;
	cql_error	err;
	cql_status	st;
	cql_host_info hosts[64];
	int			nh;
	uint64_t	x = 88172645463325252ULL;

	options(&o);
	cql_error_clear(&err);
	st = cql_cluster_connect(&o, NULL, itest_env("CQL_LOCAL_DC", NULL), &cl, &err);
	if (st != CQL_OK)
	{
		fprintf(stderr, "connect: %s: %s\n", cql_status_message(st), err.message);
		return 1;
	}
	nh = cql_cluster_hosts(cl, hosts, 64);
	for (int i = 0; i < nh && i < 64; i++)
		printf("host %d %s %d %s %s %d\n", i, hosts[i].address, hosts[i].port,
			   hosts[i].datacenter, hosts[i].rack, hosts[i].ntokens);
	for (int i = 0; i < nkeys; i++)
	{
		uint8_t		k[64];
		char		f[256];
		int			kind = i % 4;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (kind == 0)
		{
			int32_t		v = (i % 8 == 0) ? i : (int32_t) x;

			cql_put_be32(k, (uint32_t) v);
			snprintf(f, sizeof(f), "%d", (int) v);
			print_key(cl, ks, "int", f, k, 4);
		}
		else if (kind == 1)
		{
			int64_t		v = (int64_t) x;

			cql_put_be32(k, (uint32_t) ((uint64_t) v >> 32));
			cql_put_be32(k + 4, (uint32_t) v);
			snprintf(f, sizeof(f), "%" PRId64, v);
			print_key(cl, ks, "bigint", f, k, 8);
		}
		else if (kind == 2)
		{
			/* text with high bytes, 1..40 bytes long */
			size_t		len = 1 + (size_t) (x % 40);

			for (size_t j = 0; j < len; j++)
				k[j] = (uint8_t) ((x >> (j % 56)) + j * 37);
			hex(f, k, len);
			print_key(cl, ks, "text", f, k, len);
		}
		else
		{
			cql_buf		rk;
			cql_elem	parts[2];
			uint8_t		iv[4];
			char		th[64];
			size_t		tl = (size_t) (x % 12);	/* may be empty */

			cql_put_be32(iv, (uint32_t) (int32_t) (x >> 20));
			for (size_t j = 0; j < tl; j++)
				k[j] = (uint8_t) (0x80 + ((x >> j) & 0x7f));
			parts[0].p = iv;
			parts[0].n = 4;
			parts[1].p = k;
			parts[1].n = (int32_t) tl;
			cql_buf_init(&rk, &cql_malloc_allocator);
			if (cql_routing_key_composite(&rk, parts, 2) != CQL_OK)
			{
				fprintf(stderr, "composite key failed\n");
				cql_buf_free(&rk);
				cql_cluster_free(cl);
				return 1;
			}
			hex(th, k, tl);
			snprintf(f, sizeof(f), "%d %s", (int) (int32_t) (x >> 20), th);
			print_key(cl, ks, "comp", f, rk.data, rk.len);
			cql_buf_free(&rk);
		}
	}
	cql_cluster_free(cl);
	return 0;
}

/* ---------------------------------------------------------------------
 * Tests
 * ---------------------------------------------------------------------
 */
static int64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * proxied_cluster
 *		A proxy in front of the test node and a cluster handle opened
 *		through it (the control connection goes through the proxy, whose
 *		mode the test then switches); false (proxy stopped) on failure.
 */
static bool
proxied_cluster(const cql_conn_options *o, itest_proxy *px, cql_cluster **cl,
				const char *what)
{
	char		spec[64];
	cql_error	err;
	cql_status	st;

	if (!ok(itest_proxy_start(px, itest_host(), itest_port()), "%s: proxy started", what))
		return false;
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", px->port);
	cql_error_clear(&err);
	st = cql_cluster_connect(o, spec, NULL, cl, &err);
	if (!ok(st == CQL_OK, "%s: cluster through the proxy (%s)", what, err.message))
	{
		itest_proxy_stop(px);
		return false;
	}
	return true;
}

/*
 * The control connection breaks (a proxy in front of the node resets every
 * connection): cql_cluster_control() must hand out a working replacement
 * and the cluster must keep working, without the caller ever seeing NULL.
 */
static void
test_control_failover(const cql_conn_options *o, int want_hosts)
{
	itest_proxy px;
	cql_cluster *cl = NULL;
	cql_conn   *ctl;
	cql_error	err;
	cql_status	st;
	cql_result	res;

	if (!proxied_cluster(o, &px, &cl, "control failover"))
		return;
	ctl = cql_cluster_control(cl);
	ok(itest_exec(ctl, "SELECT key FROM system.local"), "query on the control connection");

	itest_proxy_mode(&px, ITEST_PROXY_RESET);
	usleep(200 * 1000);
	memset(&res, 0, sizeof(res));
	cql_error_clear(&err);
	st = cql_query(ctl, "SELECT key FROM system.local", NULL, &res, &err);
	cql_result_free(&res);
	ok(st != CQL_OK && cql_conn_status(ctl) != CQL_OK, "control connection broken by the reset (%s)",
	   cql_status_message(st));
	itest_proxy_mode(&px, ITEST_PROXY_PASS);

	ctl = cql_cluster_control(cl);
	ok(ctl != NULL && cql_conn_status(ctl) == CQL_OK, "a working control connection replaces it");
	ok(ctl && itest_exec(ctl, "SELECT key FROM system.local"), "... and answers");
	cql_error_clear(&err);
	st = cql_cluster_refresh(cl, &err);
	ok(st == CQL_OK, "refresh after failover (%s)", err.message);
	is_int(cql_cluster_hosts(cl, NULL, 0), want_hosts, "host count after failover");
	{
		cql_conn   *conn = NULL;
		uint8_t		k[4] = {0, 0, 0, 1};

		cql_error_clear(&err);
		st = cql_cluster_conn_for_key(cl, "system_schema", k, 4, &conn, &err);
		ok(st == CQL_OK && conn && cql_conn_status(conn) == CQL_OK, "coordinator choice after failover");
	}

	/* nothing reachable at all: the broken connection, never NULL */
	itest_proxy_mode(&px, ITEST_PROXY_RESET);
	usleep(200 * 1000);
	if (want_hosts == 1)
	{
		memset(&res, 0, sizeof(res));
		(void) cql_query(cql_cluster_control(cl), "SELECT key FROM system.local", NULL, &res, &err);
		cql_result_free(&res);
		itest_proxy_stop(&px);	/* now connections are refused */
		ctl = cql_cluster_control(cl);
		ok(ctl != NULL && cql_conn_status(ctl) != CQL_OK,
		   "no host left: control is the broken connection, not NULL");
		cql_error_clear(&err);
		st = cql_cluster_refresh(cl, &err);
		ok(st == CQL_ERR_NO_HOST, "refresh with no host left: NO_HOST (%s)", err.message);
	}
	else
		itest_proxy_stop(&px);
	cql_cluster_free(cl);
}

/*
 * cql_cluster_settle: requests a caller abandoned (orphaned, or still
 * queued on a corked connection) are answered before it returns; a silent
 * server makes it time out and name what is unanswered, not hang.
 */
static void
test_settle(const cql_conn_options *o)
{
	itest_proxy px;
	cql_cluster *cl = NULL;
	cql_conn   *ctl;
	cql_request *req = NULL;
	cql_error	err;
	cql_status	st;
	int			unsettled = -1;

	if (!proxied_cluster(o, &px, &cl, "settle"))
		return;
	ctl = cql_cluster_control(cl);
	is_int(cql_cluster_settle(cl, 1000, &unsettled, &err), CQL_OK,
		   "settle with nothing in flight");
	is_int(unsettled, 0, "... nothing unsettled");

	/* an orphan whose answer the proxy holds */
	itest_proxy_mode(&px, ITEST_PROXY_STALL);
	st = cql_send_query(ctl, "SELECT key FROM system.local", NULL, &req, &err);
	ok(st == CQL_OK, "request sent through the stalled proxy");
	cql_request_free(req);
	st = cql_cluster_settle(cl, 300, &unsettled, &err);
	is_int(st, CQL_ERR_TIMEOUT, "settle with a silent server: CQL_ERR_TIMEOUT");
	is_int(unsettled, 1, "... one connection unsettled");
	ok(strstr(err.message, "unanswered") != NULL, "... named in the error (%s)", err.message);
	itest_proxy_mode(&px, ITEST_PROXY_PASS);
	is_int(cql_cluster_settle(cl, 3000, &unsettled, &err), CQL_OK,
		   "settle once the answer comes");
	is_int(cql_conn_in_flight(ctl), 0, "... the orphan's stream is free");

	/* a request queued on a corked connection goes out and is answered */
	cql_conn_cork(ctl, true);
	st = cql_send_query(ctl, "SELECT key FROM system.local", NULL, &req, &err);
	ok(st == CQL_OK, "request queued on the corked connection");
	cql_request_free(req);
	is_int(cql_cluster_settle(cl, 3000, &unsettled, &err), CQL_OK,
		   "settle uncorks and awaits the queued request");
	is_int(cql_conn_in_flight(ctl), 0, "... nothing left in flight");
	ok(itest_exec(ctl, "SELECT key FROM system.local"), "the connection works after settling");
	cql_cluster_free(cl);
	itest_proxy_stop(&px);
}

int
main(int argc, char **argv)
{
	cql_conn_options o;
	cql_cluster *cl = NULL;
	cql_error	err;
	cql_status	st;
	cql_host_info hosts[64];
	int			nh;
	bool		multi = strcmp(itest_env("CQL_TOPOLOGY", ""), "cluster") == 0;
	int			want_hosts = multi ? atoi(itest_env("CQL_CLUSTER_SIZE", "3")) : 1;
	const char *host = itest_host();
	int			port = itest_port();
	char		spec[256];
	const char *why = NULL;

	if (argc == 4 && strcmp(argv[1], "--print-replicas") == 0)
		return print_replicas(argv[2], atoi(argv[3]));

	options(&o);

	/* a dead contact point first: skipped */
	snprintf(spec, sizeof(spec), "127.0.0.1:1, %s:%d", host, port);
	cql_error_clear(&err);
	st = cql_cluster_connect(&o, spec, NULL, &cl, &err);
	if (!ok(st == CQL_OK && cl, "\"%s\": dead first contact point skipped", spec))
	{
		diag("%s: %s", cql_status_message(st), err.message);
		return done_testing();
	}
	nh = cql_cluster_hosts(cl, hosts, 64);
	is_int(nh, want_hosts, "host count (%s)", multi ? "CQL_TOPOLOGY=cluster" : "single node");
	ok(hosts[0].is_control && hosts[0].connected && hosts[0].up, "host 0 is the control node");
	is_str(hosts[0].address, host, "control node addressed as its contact point");
	is_int(hosts[0].port, port, "control node port");
	ok(hosts[0].datacenter[0] && hosts[0].rack[0], "control node dc \"%s\" rack \"%s\"",
	   hosts[0].datacenter, hosts[0].rack);
	ok(strlen(hosts[0].host_id) == 36, "host_id %s", hosts[0].host_id);
	ok(hosts[0].release_version[0] != '\0', "release_version %s", hosts[0].release_version);
	ok(hosts[0].ntokens >= 1, "control node owns %d tokens", hosts[0].ntokens);
	for (int i = 1; i < nh && i < 64; i++)
		ok(hosts[i].datacenter[0] && hosts[i].ntokens >= 1 && strlen(hosts[i].host_id) == 36 &&
		   !hosts[i].connected && strcmp(hosts[i].host_id, hosts[0].host_id) != 0,
		   "peer %s:%d dc %s rack %s, %d tokens, not connected yet", hosts[i].address,
		   hosts[i].port, hosts[i].datacenter, hosts[i].rack, hosts[i].ntokens);
	ok(cql_cluster_token_aware(cl, &why), "token-aware routing on (%s)", why ? why : "");
	{
		const char *p = cql_cluster_partitioner(cl);

		ok(strstr(p, "Murmur3Partitioner") != NULL, "partitioner %s", p);
	}
	ok(cql_cluster_name(cl)[0] != '\0', "cluster name %s", cql_cluster_name(cl));
	ok(cql_cluster_control(cl) != NULL, "control connection");

	/* a keyspace created after connecting is found (lazy reload) */
	setup_step(itest_exec(cql_cluster_control(cl), "DROP KEYSPACE IF EXISTS cql_fdw_cluster_t"), "drop old keyspace");
	setup_step(itest_exec(cql_cluster_control(cl),
					"CREATE KEYSPACE cql_fdw_cluster_t WITH replication = "
					"{'class': 'SimpleStrategy', 'replication_factor': 1}"), "create RF 1 keyspace");
	cql_error_clear(&err);
	st = cql_cluster_await_schema_agreement(cl, NULL, 30000, &err);
	ok(st == CQL_OK, "schema agreement (%s)", err.message);
	{
		int			counts[64] = {0};
		int			bad_reps = 0,
					bad_coord = 0,
					bad_conn = 0;
		int			nkeys = 600;
		int			reps[8];

		/* no reload within a second of the last one: wait it out */
		{
			int64_t		t0 = ms_now();

			while (ms_now() - t0 < 1100)
				;
		}
		for (int i = 0; i < nkeys; i++)
		{
			uint8_t		k[4];
			int64_t		tok;
			int			n;
			cql_conn   *conn = NULL;

			cql_put_be32(k, (uint32_t) (i * 2654435761u));
			tok = cql_cluster_token(cl, k, 4);
			n = cql_cluster_replicas(cl, "cql_fdw_cluster_t", tok, reps, 8);
			if (n != 1)
			{
				bad_reps++;
				continue;
			}
			cql_error_clear(&err);
			if (cql_cluster_conn_for_key(cl, "cql_fdw_cluster_t", k, 4, &conn, &err) != CQL_OK)
			{
				if (bad_conn++ < 3)
					diag("conn_for_key: %s", err.message);
				continue;
			}
			if (cql_cluster_host_of(cl, conn) != reps[0])
				bad_coord++;
			counts[reps[0]]++;
		}
		is_int(bad_reps, 0, "RF 1: exactly one replica for each of %d keys", nkeys);
		is_int(bad_conn, 0, "a connection for every key");
		is_int(bad_coord, 0, "the coordinator of every key is its replica");
		if (multi)
		{
			int			used = 0;

			for (int i = 0; i < nh && i < 64; i++)
				used += counts[i] > 0;
			is_int(used, nh, "keys spread over all %d hosts", nh);
			nh = cql_cluster_hosts(cl, hosts, 64);
			for (int i = 0; i < nh && i < 64; i++)
				ok(hosts[i].connected, "host %s connected lazily", hosts[i].address);
		}
		else
			is_int(counts[0], nkeys, "single node owns every key");
	}
	{
		int			reps[8];

		is_int(cql_cluster_replicas(cl, "system", 0, reps, 8), 0, "LocalStrategy keyspace: no replicas");
		is_int(cql_cluster_replicas(cl, "cql_fdw_never_created", 0, reps, 8), 0, "unknown keyspace: no replicas");
	}

	/* key-less choice and failure reporting */
	{
		cql_conn   *conn = NULL;
		int			h;

		cql_error_clear(&err);
		st = cql_cluster_conn_for_key(cl, NULL, NULL, 0, &conn, &err);
		ok(st == CQL_OK && conn, "key-less choice gives a connection");
		h = cql_cluster_host_of(cl, conn);
		ok(h >= 0, "... of a known host");
		cql_cluster_report_failure(cl, conn, CQL_ERR_SERVER);
		nh = cql_cluster_hosts(cl, hosts, 64);
		ok(h >= 0 && hosts[h].up && hosts[h].connected, "a server error does not mark the host down");
		cql_cluster_report_failure(cl, conn, CQL_ERR_IO);
		nh = cql_cluster_hosts(cl, hosts, 64);
		ok(h >= 0 && !hosts[h].up && !hosts[h].connected, "an I/O failure closes and marks the host down");
		if (!multi)
		{
			/* the only host is down: used anyway as a last resort */
			cql_error_clear(&err);
			st = cql_cluster_conn_for_key(cl, NULL, NULL, 0, &conn, &err);
			ok(st == CQL_OK && conn && cql_conn_status(conn) == CQL_OK,
			   "a host in backoff is still tried when nothing else is left (%s)", err.message);
			nh = cql_cluster_hosts(cl, hosts, 64);
			ok(hosts[0].up, "... and marked up after connecting");
		}
		ok(cql_cluster_control(cl) != NULL && cql_conn_status(cql_cluster_control(cl)) == CQL_OK,
		   "control connection available again");
	}

	cql_error_clear(&err);
	st = cql_cluster_refresh(cl, &err);
	ok(st == CQL_OK, "refresh (%s)", err.message);
	is_int(cql_cluster_hosts(cl, NULL, 0), want_hosts, "same host count after refresh");
	nh = cql_cluster_hosts(cl, hosts, 64);	/* strings of before are gone */
	setup_step(itest_exec(cql_cluster_control(cl), "DROP KEYSPACE cql_fdw_cluster_t"), "drop keyspace");
	{
		char		dc[128];

		snprintf(dc, sizeof(dc), "%s", hosts[0].datacenter);
		cql_cluster_free(cl);
		cl = NULL;

		/* local data center */
		cql_error_clear(&err);
		st = cql_cluster_connect(&o, NULL, dc, &cl, &err);
		ok(st == CQL_OK, "local_dc \"%s\" accepted", dc);
		cql_cluster_free(cl);
		cl = NULL;
		cql_error_clear(&err);
		st = cql_cluster_connect(&o, NULL, "no-such-dc", &cl, &err);
		ok(st == CQL_ERR_INVALID_ARG && !cl && strstr(err.message, "no-such-dc") && strstr(err.message, dc),
		   "unknown local_dc refused: %s", err.message);
	}

	/* token-aware routing switched off */
	{
		cql_cluster_options co;

		cql_cluster_options_init(&co);
		co.conn = &o;
		co.token_aware = false;
		co.shuffle_contact_points = true;
		cql_error_clear(&err);
		st = cql_cluster_connect_opts(&co, &cl, &err);
		why = NULL;
		{
			bool		aware = st == CQL_OK && cql_cluster_token_aware(cl, &why);

			ok(st == CQL_OK && !aware && why && why[0], "token_aware = false: %s", why ? why : "");
		}
		if (cl)
		{
			int			reps[4];

			is_int(cql_cluster_replicas(cl, "system_schema", 0, reps, 4), 0, "... no replicas");
		}
		cql_cluster_free(cl);
		cl = NULL;
	}

	test_control_failover(&o, want_hosts);
	test_settle(&o);

	/* all dead */
	cql_error_clear(&err);
	st = cql_cluster_connect(&o, "127.0.0.1:1,127.0.0.1:2", NULL, &cl, &err);
	ok(st == CQL_ERR_NO_HOST && !cl, "all contact points dead -> NO_HOST");
	ok(strstr(err.message, "127.0.0.1:1") && strstr(err.message, "127.0.0.1:2"),
	   "message names every contact point: %s", err.message);
	cql_error_clear(&err);
	st = cql_cluster_connect(&o, "bad:port:x]", NULL, &cl, &err);
	ok(st == CQL_ERR_INVALID_ARG && !cl, "unparsable contact points refused: %s", err.message);
	cql_error_clear(&err);
	st = cql_cluster_connect(NULL, "x", NULL, &cl, &err);
	ok(st == CQL_ERR_INVALID_ARG && !cl, "no options refused");

	return done_testing();
}

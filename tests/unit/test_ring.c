/*
 * test_ring.c
 *		Token ring and replica placement on fixtures (no server): token
 *		parsing, contact point lists, SimpleStrategy RF 1..3 on a 3-node
 *		ring, vnodes, NetworkTopologyStrategy over two data centers with
 *		racks, wrap-around, a key token equal to a ring token, the empty
 *		ring, hostile replication maps, and randomized comparison with
 *		independent brute-force placements.
 */
#include "cql_cluster.h"
#include "tap.h"
#include "failing_alloc.h"

static const cql_allocator *A = &cql_malloc_allocator;

/* Build a map from host specs; tokens listed per host. */
typedef struct fixture_host
{
	const char *dc;
	const char *rack;
	int			ntokens;
	int64_t		tokens[8];
} fixture_host;

static cql_token_map *
make_map(const fixture_host *hs, int n)
{
	cql_token_map *m = NULL;

	if (cql_token_map_create(A, &m) != CQL_OK)
		return NULL;
	for (int i = 0; i < n; i++)
		if (cql_token_map_add_host(m, hs[i].dc, hs[i].rack, hs[i].tokens, hs[i].ntokens) != CQL_OK)
		{
			cql_token_map_free(m);
			return NULL;
		}
	if (cql_token_map_build(m) != CQL_OK)
	{
		cql_token_map_free(m);
		return NULL;
	}
	return m;
}

static cql_status
set_ks(cql_token_map *m, const char *ks, const char *spec)
{
	/* spec: "k=v;k=v" */
	const char *keys[16];
	const char *vals[16];
	char		buf[512];
	int			n = 0;
	char	   *save = NULL;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *tok = strtok_r(buf, ";", &save); tok && n < 16; tok = strtok_r(NULL, ";", &save))
	{
		char	   *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		keys[n] = tok;
		vals[n] = eq + 1;
		n++;
	}
	return cql_token_map_set_keyspace(m, ks, keys, vals, n);
}

/* Replicas as a string of host letters, e.g. "ACB". */
static const char *
reps(cql_token_map *m, const char *ks, int64_t token, const char *names)
{
	static char out[64];
	int			h[32];
	int			n = cql_token_map_replicas(m, ks, token, h, 32);

	if (n > 32)
		n = 32;
	for (int i = 0; i < n; i++)
		out[i] = names[h[i]];
	out[n < 0 ? 0 : n] = '\0';
	return out;
}

static void
test_token_parse(void)
{
	int64_t		t = 0;

	ok(cql_token_parse("0", 1, &t) == CQL_OK && t == 0, "token 0");
	ok(cql_token_parse("-4069959284402364209", 20, &t) == CQL_OK && t == -4069959284402364209LL,
	   "negative token");
	ok(cql_token_parse("9223372036854775807", 19, &t) == CQL_OK && t == INT64_MAX, "INT64_MAX");
	ok(cql_token_parse("-9223372036854775808", 20, &t) == CQL_OK && t == INT64_MIN, "INT64_MIN");
	ok(cql_token_parse("9223372036854775808", 19, &t) == CQL_ERR_MALFORMED, "INT64_MAX+1 refused");
	ok(cql_token_parse("-9223372036854775809", 20, &t) == CQL_ERR_MALFORMED, "INT64_MIN-1 refused");
	ok(cql_token_parse("99999999999999999999", 20, &t) == CQL_ERR_MALFORMED, "20 digits refused");
	ok(cql_token_parse("", 0, &t) == CQL_ERR_MALFORMED, "empty refused");
	ok(cql_token_parse("-", 1, &t) == CQL_ERR_MALFORMED, "lone minus refused");
	ok(cql_token_parse("+1", 2, &t) == CQL_ERR_MALFORMED, "plus sign refused");
	ok(cql_token_parse(" 1", 2, &t) == CQL_ERR_MALFORMED, "leading blank refused");
	ok(cql_token_parse("12a", 3, &t) == CQL_ERR_MALFORMED, "trailing garbage refused");
	ok(cql_token_parse("1.5", 3, &t) == CQL_ERR_MALFORMED, "decimal point refused");
	ok(cql_token_parse("123456", 3, &t) == CQL_OK && t == 123, "length bounds the parse (no NUL needed)");
	ok(cql_token_parse(NULL, 0, &t) == CQL_ERR_MALFORMED, "NULL refused");
}

static void
test_contact_points(void)
{
	cql_contact_point *cp = NULL;
	int			n = 0;
	cql_error	err;
	const char *bad[] = {"", " , ,", "a:0", "a:65536", "a:", "a:12x", "[::1", "[::1]x",
	"[::1]:", "a b", "[]:9042", ":9042", "a:-1", "a:999999"};

	cql_error_clear(&err);
	ok(cql_contact_points_parse("h1,h2:9043", 9042, A, &cp, &n, &err) == CQL_OK && n == 2,
	   "two contact points");
	if (n == 2)
	{
		is_str(cp[0].host, "h1", "first host");
		is_int(cp[0].port, 9042, "default port");
		is_str(cp[1].host, "h2", "second host");
		is_int(cp[1].port, 9043, "explicit port");
	}
	cql_contact_points_free(cp, n, A);

	ok(cql_contact_points_parse(" [::1]:9044 , [fe80::1%lo] ,::1, 127.0.0.1:1 ,", 9042, A, &cp, &n, &err) == CQL_OK &&
	   n == 4, "IPv6 forms, blanks and a trailing comma");
	if (n == 4)
	{
		is_str(cp[0].host, "::1", "bracketed IPv6 host");
		is_int(cp[0].port, 9044, "bracketed IPv6 port");
		is_str(cp[1].host, "fe80::1%lo", "bracketed IPv6 without port");
		is_int(cp[1].port, 9042, "... takes the default port");
		is_str(cp[2].host, "::1", "bare IPv6 is a host");
		is_int(cp[2].port, 9042, "... with the default port");
		is_int(cp[3].port, 1, "port 1");
	}
	cql_contact_points_free(cp, n, A);

	ok(cql_contact_points_parse("a,a:9042,b,a", 9042, A, &cp, &n, &err) == CQL_OK && n == 2,
	   "duplicates dropped");
	cql_contact_points_free(cp, n, A);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		cql_error_clear(&err);
		cp = NULL;
		n = -1;
		ok(cql_contact_points_parse(bad[i], 9042, A, &cp, &n, &err) == CQL_ERR_INVALID_ARG &&
		   cp == NULL && n == 0 && err.message[0] != '\0',
		   "contact points \"%s\" refused (%s)", bad[i], err.message);
	}
	ok(cql_contact_points_parse("a", 0, A, &cp, &n, &err) == CQL_ERR_INVALID_ARG,
	   "default port 0 refused");
	{
		char		longname[400];

		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		ok(cql_contact_points_parse(longname, 9042, A, &cp, &n, &err) == CQL_ERR_INVALID_ARG,
		   "overlong host name refused");
	}
	{
		/* 300 distinct hosts: over the limit */
		static char many[300 * 12];
		size_t		off = 0;

		for (int i = 0; i < 300; i++)
			off += (size_t) snprintf(many + off, sizeof(many) - off, "h%d,", i);
		ok(cql_contact_points_parse(many, 9042, A, &cp, &n, &err) == CQL_ERR_TOO_LARGE && cp == NULL,
		   "too many contact points refused");
	}
}

static void
test_simple_three_nodes(void)
{
	fixture_host hs[] = {
		{"dc1", "r1", 1, {-100}},
		{"dc1", "r1", 1, {0}},
		{"dc1", "r1", 1, {100}},
	};
	const char *names = "ABC";
	cql_token_map *m = make_map(hs, 3);

	ok(m != NULL, "3-node ring built");
	if (!m)
		return;
	is_int(cql_token_map_ntokens(m), 3, "3 ring tokens");
	is_int(cql_token_map_owner(m, -150), 0, "token below the first is owned by the first");
	is_int(cql_token_map_owner(m, -100), 0, "token equal to a ring token is owned by that host");
	is_int(cql_token_map_owner(m, -99), 1, "token just above a ring token goes to the next");
	is_int(cql_token_map_owner(m, 0), 1, "token 0 equal to B's token");
	is_int(cql_token_map_owner(m, 100), 2, "token 100 -> C");
	is_int(cql_token_map_owner(m, 101), 0, "above the last token wraps to the first");
	is_int(cql_token_map_owner(m, INT64_MIN), 0, "INT64_MIN -> first");
	is_int(cql_token_map_owner(m, INT64_MAX), 0, "INT64_MAX wraps");

	ok(set_ks(m, "rf1", "class=org.apache.cassandra.locator.SimpleStrategy;replication_factor=1") == CQL_OK,
	   "SimpleStrategy RF 1 set");
	ok(set_ks(m, "rf2", "class=SimpleStrategy;replication_factor=2") == CQL_OK, "RF 2 (short class name)");
	ok(set_ks(m, "rf3", "class=SimpleStrategy;replication_factor=3") == CQL_OK, "RF 3");
	ok(set_ks(m, "rf5", "class=SimpleStrategy;replication_factor=5") == CQL_OK, "RF 5");
	is_str(reps(m, "rf1", -150, names), "A", "RF1 below first");
	is_str(reps(m, "rf1", 0, names), "B", "RF1 equal to ring token");
	is_str(reps(m, "rf1", 50, names), "C", "RF1 between");
	is_str(reps(m, "rf1", 1000, names), "A", "RF1 wrap");
	is_str(reps(m, "rf2", -150, names), "AB", "RF2 below first");
	is_str(reps(m, "rf2", 50, names), "CA", "RF2 wraps while walking");
	is_str(reps(m, "rf2", 1000, names), "AB", "RF2 after wrap");
	is_str(reps(m, "rf3", 1, names), "CAB", "RF3 all hosts from C");
	is_str(reps(m, "rf3", -100, names), "ABC", "RF3 from A");
	is_str(reps(m, "rf5", 1, names), "CAB", "RF above host count is capped");
	is_str(reps(m, "nosuch", 1, names), "", "unknown keyspace: no replicas");
	{
		int			h[1] = {-7};

		is_int(cql_token_map_replicas(m, "rf3", 1, h, 1), 3, "total returned even when max is smaller");
		is_int(h[0], 2, "... and only max entries written");
	}
	ok(set_ks(m, "rf3", "class=SimpleStrategy;replication_factor=1") == CQL_OK &&
	   strcmp(reps(m, "rf3", 1, names), "C") == 0, "keyspace replication can be replaced");
	cql_token_map_free(m);
}

static void
test_vnodes(void)
{
	fixture_host hs[] = {
		{"dc1", "r1", 2, {-100, 50}},
		{"dc1", "r1", 2, {100, -50}},	/* unsorted on purpose */
		{"dc1", "r1", 1, {0}},
	};
	const char *names = "ABC";
	cql_token_map *m = make_map(hs, 3);

	ok(m != NULL, "vnode ring built");
	if (!m)
		return;
	is_int(cql_token_map_ntokens(m), 5, "5 ring tokens");
	set_ks(m, "s2", "class=SimpleStrategy;replication_factor=2");
	set_ks(m, "s3", "class=SimpleStrategy;replication_factor=3");
	is_str(reps(m, "s2", 10, names), "AB", "vnodes RF2 from 50(A)");
	is_str(reps(m, "s2", 60, names), "BA", "vnodes RF2 from 100(B) wraps to -100(A)");
	is_str(reps(m, "s3", 60, names), "BAC", "vnodes RF3 skips repeated B at -50");
	is_str(reps(m, "s3", -75, names), "BCA", "vnodes RF3 from -50(B)");
	cql_token_map_free(m);
}

/*
 * Two data centers; dc1 has three hosts on two racks, dc2 two hosts on two
 * racks.  Ring: a1(0) b1(10) a2(20) b2(30) a3(40).
 */
static void
test_nts(void)
{
	fixture_host hs[] = {
		{"dc1", "r1", 1, {0}},		/* a1 */
		{"dc2", "rA", 1, {10}},		/* b1 */
		{"dc1", "r1", 1, {20}},		/* a2 */
		{"dc2", "rB", 1, {30}},		/* b2 */
		{"dc1", "r2", 1, {40}},		/* a3 */
	};
	const char *names = "abcde";	/* a1=a b1=b a2=c b2=d a3=e */
	cql_token_map *m = make_map(hs, 5);

	ok(m != NULL, "2-DC ring built");
	if (!m)
		return;
	set_ks(m, "n21", "class=org.apache.cassandra.locator.NetworkTopologyStrategy;dc1=2;dc2=1");
	set_ks(m, "n32", "class=NetworkTopologyStrategy;dc1=3;dc2=2");
	set_ks(m, "n10", "class=NetworkTopologyStrategy;dc1=1;dc2=0");
	set_ks(m, "n01", "class=NetworkTopologyStrategy;dc2=1;dc9=3");
	set_ks(m, "n95", "class=NetworkTopologyStrategy;dc1=9;dc2=5");
	set_ks(m, "tr", "class=NetworkTopologyStrategy;dc1=3/1;dc2=1");
	is_int(cql_token_map_keyspace_class(m, "n21", NULL), CQL_REPL_NTS, "NTS recognised");

	/* rack awareness: a2 shares a1's rack and is skipped for a3 */
	is_str(reps(m, "n21", 0, names), "abe", "NTS dc1=2 dc2=1 from a1: second dc1 replica on the other rack");
	is_str(reps(m, "n21", 15, names), "cde", "NTS from a2: a2, b2, a3");
	is_str(reps(m, "n21", 35, names), "eab", "NTS from a3 wraps: a3, a1, b1");
	is_str(reps(m, "n21", 41, names), "abe", "NTS above last token wraps to a1");
	is_str(reps(m, "n21", 40, names), "eab", "NTS token equal to a3's token");
	/* RF 3 on 2 racks: one rack repeat is allowed, in ring order */
	is_str(reps(m, "n32", 0, names), "abcde", "NTS dc1=3 dc2=2 from a1");
	is_str(reps(m, "n32", 35, names), "eabcd", "NTS dc1=3 dc2=2 from a3");
	is_str(reps(m, "n10", 5, names), "c", "NTS dc1=1 dc2=0: only dc1, first dc1 host from b1");
	is_str(reps(m, "n01", 0, names), "b", "NTS unknown DC ignored");
	is_str(reps(m, "n95", 0, names), "abcde", "NTS RF above DC size capped");
	is_str(reps(m, "tr", 0, names), "abce", "transient '3/1' counts as 3");
	cql_token_map_free(m);

	/* three racks, RF 2: never two replicas on one rack */
	{
		fixture_host h3[] = {
			{"dc1", "r1", 1, {0}},
			{"dc1", "r1", 1, {10}},
			{"dc1", "r1", 1, {20}},
			{"dc1", "r2", 1, {30}},
			{"dc1", "r3", 1, {40}},
		};

		m = make_map(h3, 5);
		ok(m != NULL, "3-rack ring built");
		if (!m)
			return;
		set_ks(m, "k", "class=NetworkTopologyStrategy;dc1=2");
		set_ks(m, "k4", "class=NetworkTopologyStrategy;dc1=4");
		is_str(reps(m, "k", 0, "ABCDE"), "AD", "RF2 on 3 racks skips same-rack hosts");
		is_str(reps(m, "k", 25, "ABCDE"), "DE", "RF2 from r2");
		is_str(reps(m, "k4", 0, "ABCDE"), "ABDE", "RF4 on 3 racks: one repeat, first in ring order");
		cql_token_map_free(m);
	}
}

static void
test_hostile_and_edge(void)
{
	cql_token_map *m = NULL;
	const char *why = NULL;
	int64_t		t0 = 0;
	int			h[4];

	/* empty ring */
	ok(cql_token_map_create(A, &m) == CQL_OK && cql_token_map_build(m) == CQL_OK, "empty ring builds");
	is_int(cql_token_map_owner(m, 5), -1, "empty ring has no owner");
	ok(set_ks(m, "k", "class=SimpleStrategy;replication_factor=3") == CQL_OK, "keyspace on empty ring");
	is_int(cql_token_map_replicas(m, "k", 5, h, 4), 0, "empty ring has no replicas");
	ok(cql_token_map_add_host(m, "dc", "r", &t0, 1) == CQL_ERR_INVALID_ARG, "no hosts after build");
	ok(cql_token_map_build(m) == CQL_ERR_INVALID_ARG, "build twice refused");
	cql_token_map_free(m);

	/* keyspace before build */
	cql_token_map_create(A, &m);
	ok(set_ks(m, "k", "class=SimpleStrategy;replication_factor=1") == CQL_ERR_INVALID_ARG,
	   "keyspace before build refused");
	ok(cql_token_map_add_host(m, "dc", "r", NULL, 3) == CQL_ERR_INVALID_ARG, "NULL tokens refused");
	ok(cql_token_map_add_host(m, "dc", "r", &t0, -1) == CQL_ERR_INVALID_ARG, "negative count refused");
	/* a host without tokens and NULL dc/rack */
	ok(cql_token_map_add_host(m, NULL, NULL, NULL, 0) == CQL_OK, "host without tokens, NULL dc/rack");
	{
		int64_t		ta[] = {0, 5};
		int64_t		tb[] = {0, 7};

		ok(cql_token_map_add_host(m, "dc", "r", ta, 2) == CQL_OK &&
		   cql_token_map_add_host(m, "dc", "r", tb, 2) == CQL_OK &&
		   cql_token_map_build(m) == CQL_OK, "ring with a duplicated token");
	}
	is_int(cql_token_map_ntokens(m), 3, "duplicate token kept once");
	is_int(cql_token_map_owner(m, 0), 1, "duplicate token: first host keeps it");
	set_ks(m, "s3", "class=SimpleStrategy;replication_factor=3");
	is_int(cql_token_map_replicas(m, "s3", 0, h, 4), 2, "host without tokens is never a replica");

	ok(set_ks(m, "bad1", "class=SimpleStrategy;replication_factor=x") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "bad1", &why) == CQL_REPL_NONE && why != NULL,
	   "invalid RF: not routable (%s)", why ? why : "");
	is_int(cql_token_map_replicas(m, "bad1", 0, h, 4), 0, "... and no replicas");
	ok(set_ks(m, "bad2", "class=SimpleStrategy") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "bad2", NULL) == CQL_REPL_NONE, "SimpleStrategy without RF");
	ok(set_ks(m, "bad3", "replication_factor=3") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "bad3", NULL) == CQL_REPL_NONE, "no class");
	ok(set_ks(m, "bad4", "class=com.example.WeirdStrategy;replication_factor=3") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "bad4", NULL) == CQL_REPL_NONE, "unknown class");
	ok(set_ks(m, "bad5", "class=NetworkTopologyStrategy;dc=-1") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "bad5", NULL) == CQL_REPL_NONE, "negative NTS RF");
	ok(set_ks(m, "bad6", "class=SimpleStrategy;replication_factor=99999999999999") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "bad6", NULL) == CQL_REPL_NONE, "absurd RF");
	ok(set_ks(m, "bad7", "class=SimpleStrategy;replication_factor=2/3") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "bad7", NULL) == CQL_REPL_NONE, "more transient than full");
	ok(set_ks(m, "loc", "class=org.apache.cassandra.locator.LocalStrategy") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "loc", NULL) == CQL_REPL_LOCAL, "LocalStrategy recognised");
	is_int(cql_token_map_replicas(m, "loc", 0, h, 4), 0, "LocalStrategy: no routing");
	ok(set_ks(m, "ev", "class=com.datastax.bdp.db.EverywhereStrategy") == CQL_OK &&
	   cql_token_map_keyspace_class(m, "ev", NULL) == CQL_REPL_EVERYWHERE, "EverywhereStrategy recognised");
	is_int(cql_token_map_replicas(m, "ev", 6, h, 4), 2, "EverywhereStrategy: every host with tokens");
	is_int(h[0], 2, "... primary first (token 7 owner)");
	ok(cql_token_map_set_keyspace(m, "k", NULL, NULL, 0) == CQL_OK &&
	   cql_token_map_keyspace_class(m, "k", NULL) == CQL_REPL_NONE, "empty replication map");
	cql_token_map_free(m);

	/* the host limit */
	cql_token_map_create(A, &m);
	{
		cql_status	st = CQL_OK;
		int			i;

		for (i = 0; i <= CQL_CLUSTER_MAX_HOSTS && st == CQL_OK; i++)
			st = cql_token_map_add_host(m, "dc", "r", NULL, 0);
		ok(st == CQL_ERR_TOO_LARGE && i == CQL_CLUSTER_MAX_HOSTS + 1, "host count is limited");
	}
	cql_token_map_free(m);
}

/* ---------------------------------------------------------------------
 * Randomized comparison with independent reference placements.
 * ---------------------------------------------------------------------
 */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#define RH 9
#define RT 6

typedef struct ref_ring
{
	int64_t		tok[RH * RT];
	int			own[RH * RT];
	int			n;
	int			dc[RH];
	int			rack[RH];		/* global rack number */
} ref_ring;

/* Owner by brute force: the smallest ring token >= t, else the smallest. */
static int
ref_start(const ref_ring *r, int64_t t)
{
	int			best = -1,
				min = 0;

	for (int i = 0; i < r->n; i++)
	{
		if (r->tok[i] < r->tok[min])
			min = i;
		if (r->tok[i] >= t && (best < 0 || r->tok[i] < r->tok[best]))
			best = i;
	}
	return best >= 0 ? best : min;
}

/* Ring positions in token order, starting at position s. */
static void
ref_order(const ref_ring *r, int s, int *order)
{
	/* selection by "next larger token" from s */
	int			cur = s;

	for (int k = 0; k < r->n; k++)
	{
		int			next = -1;

		order[k] = cur;
		for (int i = 0; i < r->n; i++)
			if (r->tok[i] > r->tok[cur] && (next < 0 || r->tok[i] < r->tok[next]))
				next = i;
		if (next < 0)
			for (int i = 0; i < r->n; i++)
				if (next < 0 || r->tok[i] < r->tok[next])
					next = i;
		cur = next;
	}
}

/*
 * The drivers' formulation of rack-aware NTS placement (python-driver
 * NetworkTopologyStrategy.make_token_replica_map): per DC, walk, take the
 * first host of each new rack, remember same-rack hosts, and once every
 * rack of the DC has a replica take the remembered ones, then go on in
 * ring order.  Output is a membership bitmap: the sets must match.
 */
static void
ref_nts(const ref_ring *r, const int *order, const int *dc_rf, int ndc, bool *in)
{
	memset(in, 0, sizeof(bool) * RH);
	for (int d = 0; d < ndc; d++)
	{
		int			nodes = 0,
					racks = 0;
		bool		rack_has[RH * 4] = {0};
		bool		rack_placed[RH * 4] = {0};
		int			placed_racks = 0;
		int			skipped[RH * RT];
		int			nskipped = 0;
		int			remaining = dc_rf[d];
		int			this_dc = 0;

		for (int h = 0; h < RH; h++)
			if (r->dc[h] == d)
			{
				nodes++;
				if (!rack_has[r->rack[h]])
					racks++;
				rack_has[r->rack[h]] = true;
			}
		for (int k = 0; k < r->n && remaining > 0 && this_dc < nodes; k++)
		{
			int			h = r->own[order[k]];
			bool		dup = false;

			if (r->dc[h] != d || in[h])
				continue;
			for (int s = 0; s < nskipped; s++)
				dup |= skipped[s] == h;
			if (rack_placed[r->rack[h]] && placed_racks < racks)
			{
				if (!dup)
					skipped[nskipped++] = h;
				continue;
			}
			in[h] = true;
			this_dc++;
			remaining--;
			if (!rack_placed[r->rack[h]])
				placed_racks++;
			rack_placed[r->rack[h]] = true;
			if (placed_racks == racks)
			{
				for (int s = 0; s < nskipped && remaining > 0; s++)
					if (!in[skipped[s]])
					{
						in[skipped[s]] = true;
						this_dc++;
						remaining--;
					}
				nskipped = 0;
			}
		}
	}
}

static void
test_random(void)
{
	int			mismatches_owner = 0,
				mismatches_simple = 0,
				mismatches_nts = 0,
				checks = 0;

	for (int round = 0; round < 40; round++)
	{
		ref_ring	r;
		cql_token_map *m = NULL;
		char		dcname[RH][8],
					rackname[RH][8];
		int			ndc = 1 + (int) (rng() % 3);
		int			dc_rf[3];
		int			simple_rf = 1 + (int) (rng() % 4);
		char		spec[256];

		memset(&r, 0, sizeof(r));
		cql_token_map_create(A, &m);
		for (int h = 0; h < RH; h++)
		{
			int64_t		t[RT];
			int			nt = 1 + (int) (rng() % RT);

			r.dc[h] = (int) (rng() % (uint64_t) ndc);
			r.rack[h] = r.dc[h] * 4 + (int) (rng() % 3);
			snprintf(dcname[h], sizeof(dcname[h]), "dc%d", r.dc[h]);
			snprintf(rackname[h], sizeof(rackname[h]), "r%d", r.rack[h] % 4);
			for (int i = 0; i < nt; i++)
			{
				bool		dup = false;

				/* small token space sometimes, to hit equal tokens */
				t[i] = (round % 4 == 0) ? (int64_t) (rng() % 64) - 32 : (int64_t) rng();

				for (int j = 0; j < r.n; j++)
					dup |= r.tok[j] == t[i];
				for (int j = 0; j < i; j++)
					dup |= t[j] == t[i];
				if (dup)
				{
					i--;
					continue;
				}
			}
			for (int i = 0; i < nt; i++)
			{
				r.tok[r.n] = t[i];
				r.own[r.n] = h;
				r.n++;
			}
			cql_token_map_add_host(m, dcname[h], rackname[h], t, nt);
		}
		cql_token_map_build(m);
		snprintf(spec, sizeof(spec), "class=SimpleStrategy;replication_factor=%d", simple_rf);
		set_ks(m, "s", spec);
		snprintf(spec, sizeof(spec), "class=NetworkTopologyStrategy");
		for (int d = 0; d < ndc; d++)
		{
			dc_rf[d] = (int) (rng() % 5);
			snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), ";dc%d=%d", d, dc_rf[d]);
		}
		set_ks(m, "n", spec);

		for (int q = 0; q < 50; q++)
		{
			int64_t		t = (q % 5 == 0) ? r.tok[rng() % (uint64_t) r.n] :
				(round % 4 == 0) ? (int64_t) (rng() % 80) - 40 : (int64_t) rng();
			int			s = ref_start(&r, t);
			int			order[RH * RT];
			int			got[RH];
			int			n;
			bool		in[RH];

			checks++;
			ref_order(&r, s, order);
			if (cql_token_map_owner(m, t) != r.own[s])
				mismatches_owner++;

			/* SimpleStrategy: distinct hosts in walk order */
			{
				int			want[RH],
							nw = 0;

				for (int k = 0; k < r.n && nw < simple_rf; k++)
				{
					bool		seen = false;

					for (int j = 0; j < nw; j++)
						seen |= want[j] == r.own[order[k]];
					if (!seen)
						want[nw++] = r.own[order[k]];
				}
				n = cql_token_map_replicas(m, "s", t, got, RH);
				if (n != nw || memcmp(got, want, sizeof(int) * (size_t) nw) != 0)
					mismatches_simple++;
			}

			/* NTS: same set as the drivers' formulation */
			{
				int			cnt = 0;

				ref_nts(&r, order, dc_rf, ndc, in);
				n = cql_token_map_replicas(m, "n", t, got, RH);
				for (int h = 0; h < RH; h++)
					cnt += in[h];
				if (n != cnt)
					mismatches_nts++;
				else
					for (int i = 0; i < n; i++)
						if (!in[got[i]])
						{
							mismatches_nts++;
							break;
						}
			}
		}
		cql_token_map_free(m);
	}
	is_int(mismatches_owner, 0, "random rings: owner matches brute force (%d lookups)", checks);
	is_int(mismatches_simple, 0, "random rings: SimpleStrategy matches the reference walk");
	is_int(mismatches_nts, 0, "random rings: NTS replica sets match the drivers' rack-aware placement");
}

/* ---------------------------------------------------------------------
 * Topology from fabricated system.local / system.peers_v2 rows
 * ---------------------------------------------------------------------
 */
#define FX_MAXCOLS 12
#define FX_MAXROWS 16

typedef struct fx_result
{
	cql_result	res;
	cql_column	cols[FX_MAXCOLS];
	cql_elem	cells[FX_MAXCOLS * FX_MAXROWS];
	cql_buf		store[FX_MAXCOLS * FX_MAXROWS];	/* owns cell bytes */
} fx_result;

static void
fx_init(fx_result *f, const char *const *names, int ncols)
{
	memset(f, 0, sizeof(*f));
	f->res.kind = CQL_RESULT_ROWS;
	f->res.meta.ncols = ncols;
	f->res.meta.cols = f->cols;
	f->res.cells = f->cells;
	for (int i = 0; i < ncols; i++)
		f->cols[i].name = (char *) names[i];
	for (int i = 0; i < FX_MAXCOLS * FX_MAXROWS; i++)
	{
		cql_buf_init(&f->store[i], A);
		f->cells[i].n = -1;
	}
}

static void
fx_free(fx_result *f)
{
	for (int i = 0; i < FX_MAXCOLS * FX_MAXROWS; i++)
		cql_buf_free(&f->store[i]);
}

static cql_buf *
fx_cell(fx_result *f, int row, int col)
{
	if (row >= f->res.rows_count)
		f->res.rows_count = row + 1;
	return &f->store[row * f->res.meta.ncols + col];
}

static void
fx_done_cell(fx_result *f, int row, int col)
{
	cql_buf    *b = &f->store[row * f->res.meta.ncols + col];

	f->cells[row * f->res.meta.ncols + col].p = b->data ? b->data : (const uint8_t *) "";
	f->cells[row * f->res.meta.ncols + col].n = (int32_t) b->len;
}

static void
fx_text(fx_result *f, int row, int col, const char *s)
{
	cql_buf    *b = fx_cell(f, row, col);

	if (!s)
		return;
	cql_buf_put(b, s, strlen(s));
	fx_done_cell(f, row, col);
}

static void
fx_raw(fx_result *f, int row, int col, const char *hex)
{
	unsigned char tmp[64];
	size_t		n = tap_unhex(hex, tmp, sizeof(tmp));

	cql_buf_put(fx_cell(f, row, col), tmp, n);
	fx_done_cell(f, row, col);
}

static void
fx_int(fx_result *f, int row, int col, int32_t v)
{
	cql_buf_i32(fx_cell(f, row, col), v);
	fx_done_cell(f, row, col);
}

/* set<text> / list<text> of NULL-terminated strings */
static void
fx_set(fx_result *f, int row, int col, const char *const *v)
{
	cql_buf    *b = fx_cell(f, row, col);
	int			n = 0;

	while (v[n])
		n++;
	cql_buf_i32(b, n);
	for (int i = 0; i < n; i++)
		cql_buf_bytes(b, v[i], (int32_t) strlen(v[i]));
	fx_done_cell(f, row, col);
}

/* map<text,text> from alternating keys and values */
static void
fx_map(fx_result *f, int row, int col, const char *const *kv)
{
	cql_buf    *b = fx_cell(f, row, col);
	int			n = 0;

	while (kv[2 * n])
		n++;
	cql_buf_i32(b, n);
	for (int i = 0; i < 2 * n; i++)
		cql_buf_bytes(b, kv[i], (int32_t) strlen(kv[i]));
	fx_done_cell(f, row, col);
}

static void
fx_uuid(fx_result *f, int row, int col, int seed)
{
	uint8_t		u[16];

	for (int i = 0; i < 16; i++)
		u[i] = (uint8_t) (seed * 17 + i);
	cql_buf_put(fx_cell(f, row, col), u, 16);
	fx_done_cell(f, row, col);
}

static void
fx_inet4(fx_result *f, int row, int col, int a, int b, int c, int d)
{
	uint8_t		ip[4] = {(uint8_t) a, (uint8_t) b, (uint8_t) c, (uint8_t) d};

	cql_buf_put(fx_cell(f, row, col), ip, 4);
	fx_done_cell(f, row, col);
}

enum
{
	L_CLUSTER, L_DC, L_RACK, L_ID, L_PART, L_REL, L_TOK, L_NCOLS
};
enum
{
	P_PEER, P_ADDR, P_PORT, P_DC, P_RACK, P_ID, P_TOK, P_NCOLS
};

static const char *local_cols[] = {"cluster_name", "data_center", "rack", "host_id",
"partitioner", "release_version", "tokens"};
static const char *peer_cols[] = {"peer", "native_address", "native_port", "data_center",
"rack", "host_id", "tokens"};

static void
fx_local(fx_result *f, const char *partitioner, const char *const *tokens)
{
	fx_init(f, local_cols, L_NCOLS);
	fx_text(f, 0, L_CLUSTER, "Test Cluster");
	fx_text(f, 0, L_DC, "dc1");
	fx_text(f, 0, L_RACK, "r1");
	fx_uuid(f, 0, L_ID, 1);
	fx_text(f, 0, L_PART, partitioner);
	fx_text(f, 0, L_REL, "5.0.2");
	if (tokens)
		fx_set(f, 0, L_TOK, tokens);
}

/* a valid peers_v2 row: 127.0.0.(2+i), host id seed 10+i */
static void
fx_peer(fx_result *f, int row, int i, const char *const *tokens)
{
	fx_inet4(f, row, P_PEER, 10, 0, 0, 2 + i);
	fx_inet4(f, row, P_ADDR, 127, 0, 0, 2 + i);
	fx_int(f, row, P_PORT, 9042);
	fx_text(f, row, P_DC, "dc1");
	fx_text(f, row, P_RACK, "r1");
	fx_uuid(f, row, P_ID, 10 + i);
	fx_set(f, row, P_TOK, tokens);
}

static void
test_topology(void)
{
	const char *M3 = "org.apache.cassandra.dht.Murmur3Partitioner";
	const char *ltok[] = {"-100", "0", NULL};
	const char *t100[] = {"100", NULL};
	const char *t200[] = {"200", NULL};
	const char *t300[] = {"300", NULL};
	const char *tnone[] = {NULL};
	fx_result  *local = calloc(1, sizeof(fx_result));
	fx_result  *peers = calloc(1, sizeof(fx_result));
	cql_topology *t = NULL;
	cql_error	err;
	cql_status	st;
	int			row = 0;

	fx_local(local, M3, ltok);
	fx_init(peers, peer_cols, P_NCOLS);
	fx_peer(peers, row++, 0, t100);	/* valid: 127.0.0.2 */
	fx_peer(peers, row, 1, t200);	/* no host_id */
	peers->cells[row * P_NCOLS + P_ID].n = -1;
	row++;
	fx_peer(peers, row, 2, t200);	/* no rack */
	peers->cells[row * P_NCOLS + P_RACK].n = -1;
	row++;
	fx_peer(peers, row, 3, t300);	/* 0.0.0.0: use peer 10.0.0.5, port absent */
	cql_buf_reset(&peers->store[row * P_NCOLS + P_ADDR]);
	fx_inet4(peers, row, P_ADDR, 0, 0, 0, 0);
	peers->cells[row * P_NCOLS + P_PORT].n = -1;
	row++;
	fx_peer(peers, row, 4, t200);	/* the control node itself */
	cql_buf_reset(&peers->store[row * P_NCOLS + P_ID]);
	fx_uuid(peers, row, P_ID, 1);
	row++;
	fx_peer(peers, row, 5, t200);	/* duplicate host id of the first peer */
	cql_buf_reset(&peers->store[row * P_NCOLS + P_ID]);
	fx_uuid(peers, row, P_ID, 10);
	row++;
	fx_peer(peers, row, 6, t200);	/* tokens null */
	peers->cells[row * P_NCOLS + P_TOK].n = -1;
	row++;
	fx_peer(peers, row, 7, tnone);	/* empty token set */
	row++;
	fx_peer(peers, row, 8, t200);	/* 5-byte inet */
	cql_buf_reset(&peers->store[row * P_NCOLS + P_ADDR]);
	fx_raw(peers, row, P_ADDR, "7f00000102");
	row++;
	fx_peer(peers, row, 9, t200);	/* 3-byte host id */
	cql_buf_reset(&peers->store[row * P_NCOLS + P_ID]);
	fx_raw(peers, row, P_ID, "010203");
	row++;
	fx_peer(peers, row, 10, t200);	/* NUL in data center */
	cql_buf_reset(&peers->store[row * P_NCOLS + P_DC]);
	fx_raw(peers, row, P_DC, "64006331");
	row++;

	cql_error_clear(&err);
	st = cql_topology_parse(&local->res, &peers->res, "localhost", 9042, A, &t, &err);
	ok(st == CQL_OK && t, "topology parsed from hostile peers (%s)", err.message);
	if (t)
	{
		is_int(t->nhosts, 3, "control node + 2 valid peers");
		is_int(t->nskipped, 9, "9 invalid peer rows skipped");
		ok(t->token_aware, "token-aware (%s)", t->why);
		is_str(t->hosts[0].address, "localhost", "control node keeps its contact address");
		is_str(t->hosts[0].datacenter, "dc1", "control dc");
		is_int(t->hosts[0].ntokens, 2, "control tokens");
		is_str(t->cluster_name, "Test Cluster", "cluster name");
		is_str(t->hosts[1].address, "127.0.0.2", "peer native_address");
		is_int(t->hosts[1].port, 9042, "peer native_port");
		is_str(t->hosts[2].address, "10.0.0.5", "0.0.0.0 replaced by peer");
		is_int(t->hosts[2].port, 9042, "absent native_port -> control port");
		is_int((int) strlen(t->hosts[1].host_id), 36, "host id rendered");
		{
			cql_token_map *m = NULL;

			ok(cql_topology_token_map(t, A, &m) == CQL_OK && m, "token map from topology");
			if (m)
			{
				is_int(cql_token_map_owner(m, 50), 1, "token 50 -> 127.0.0.2");
				is_int(cql_token_map_owner(m, 250), 2, "token 250 -> 10.0.0.5");
				is_int(cql_token_map_owner(m, 301), 0, "wrap -> control node");
			}
			cql_token_map_free(m);
		}
	}
	cql_topology_free(t, A);
	t = NULL;

	/* peers result of the legacy table: rpc_address, no port */
	{
		const char *legacy_cols[] = {"peer", "rpc_address", "data_center", "rack", "host_id", "tokens"};
		fx_result  *lp = calloc(1, sizeof(fx_result));

		fx_init(lp, legacy_cols, 6);
		fx_inet4(lp, 0, 0, 10, 1, 1, 1);
		fx_inet4(lp, 0, 1, 127, 0, 0, 9);
		fx_text(lp, 0, 2, "dc2");
		fx_text(lp, 0, 3, "rA");
		fx_uuid(lp, 0, 4, 40);
		fx_set(lp, 0, 5, t100);
		st = cql_topology_parse(&local->res, &lp->res, "127.0.0.1", 9999, A, &t, &err);
		ok(st == CQL_OK && t && t->nhosts == 2 && strcmp(t->hosts[1].address, "127.0.0.9") == 0 &&
		   t->hosts[1].port == 9999 && strcmp(t->hosts[1].datacenter, "dc2") == 0,
		   "legacy peers row: rpc_address and the control port");
		cql_topology_free(t, A);
		t = NULL;
		fx_free(lp);
		free(lp);
	}

	/* an absurd token anywhere switches routing off, with the reason */
	{
		const char *badtok[] = {"100", "12x\x01", NULL};
		fx_result  *bp = calloc(1, sizeof(fx_result));

		fx_init(bp, peer_cols, P_NCOLS);
		fx_peer(bp, 0, 0, badtok);
		st = cql_topology_parse(&local->res, &bp->res, "127.0.0.1", 9042, A, &t, &err);
		ok(st == CQL_OK && t && !t->token_aware && strstr(t->why, "127.0.0.2") &&
		   strstr(t->why, "12x?"), "absurd token: routing off (%s)", t ? t->why : "");
		ok(t && t->nhosts == 2, "... but the host is still usable");
		{
			cql_token_map *m = (cql_token_map *) 1;

			ok(t && cql_topology_token_map(t, A, &m) == CQL_OK && m == NULL, "... and no token map");
		}
		cql_topology_free(t, A);
		t = NULL;

		/* a token set claiming a huge count */
		fx_free(bp);
		fx_init(bp, peer_cols, P_NCOLS);
		fx_peer(bp, 0, 0, t100);
		cql_buf_reset(&bp->store[P_TOK]);
		fx_raw(bp, 0, P_TOK, "7fffffff 00000003 313030");
		st = cql_topology_parse(&local->res, &bp->res, "127.0.0.1", 9042, A, &t, &err);
		ok(st == CQL_OK && t && !t->token_aware && strstr(t->why, "undecodable"),
		   "token set with an absurd count: routing off (%s)", t ? t->why : "");
		cql_topology_free(t, A);
		t = NULL;
		fx_free(bp);
		free(bp);
	}

	/* other partitioners */
	fx_free(local);
	fx_local(local, "org.apache.cassandra.dht.RandomPartitioner", ltok);
	st = cql_topology_parse(&local->res, NULL, "127.0.0.1", 9042, A, &t, &err);
	ok(st == CQL_OK && t && !t->token_aware && strstr(t->why, "RandomPartitioner"),
	   "RandomPartitioner: routing off (%s)", t ? t->why : "");
	cql_topology_free(t, A);
	t = NULL;

	/* system.local with no row / with almost no columns */
	{
		fx_result  *e = calloc(1, sizeof(fx_result));
		const char *only[] = {"key"};

		fx_init(e, only, 1);
		cql_error_clear(&err);
		st = cql_topology_parse(&e->res, NULL, "127.0.0.1", 9042, A, &t, &err);
		ok(st == CQL_ERR_MALFORMED && !t && err.message[0], "system.local without a row refused");
		fx_text(e, 0, 0, "local");
		st = cql_topology_parse(&e->res, NULL, "127.0.0.1", 9042, A, &t, &err);
		ok(st == CQL_OK && t && t->nhosts == 1 && !t->token_aware &&
		   strcmp(t->hosts[0].datacenter, "") == 0, "system.local without columns: one host, no routing (%s)",
		   t ? t->why : "");
		cql_topology_free(t, A);
		t = NULL;
		fx_free(e);
		free(e);
	}
	fx_free(local);
	fx_free(peers);
	free(local);
	free(peers);
}

static void
test_keyspace_rows(void)
{
	const char *cols[] = {"keyspace_name", "replication"};
	fx_result  *r = calloc(1, sizeof(fx_result));
	cql_token_map *m = NULL;
	fixture_host hs[] = {{"dc1", "r1", 1, {0}}, {"dc1", "r1", 1, {100}}};
	const char *simple2[] = {"class", "org.apache.cassandra.locator.SimpleStrategy", "replication_factor", "2", NULL};
	const char *nts[] = {"class", "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1", "1", NULL};
	const char *local[] = {"class", "org.apache.cassandra.locator.LocalStrategy", NULL};
	int			h[4];

	fx_init(r, cols, 2);
	fx_text(r, 0, 0, "ks_simple");
	fx_map(r, 0, 1, simple2);
	fx_text(r, 1, 0, "ks_nts");
	fx_map(r, 1, 1, nts);
	fx_text(r, 2, 0, "system");
	fx_map(r, 2, 1, local);
	fx_text(r, 3, 0, "ks_trunc");	/* map claims 5 entries, has 1 */
	fx_raw(r, 3, 1, "00000005 00000005 636c617373 00000001 78");
	fx_text(r, 4, 0, "ks_nul");		/* NUL inside a key */
	fx_raw(r, 4, 1, "00000001 00000003 630061 00000001 31");
	fx_text(r, 5, 0, "ks_null");	/* replication null */
	fx_map(r, 6, 1, simple2);		/* keyspace name null */

	m = make_map(hs, 2);
	ok(m && cql_token_map_load_keyspaces(m, &r->res) == CQL_OK, "keyspace rows loaded");
	if (m)
	{
		is_int(cql_token_map_keyspace_class(m, "ks_simple", NULL), CQL_REPL_SIMPLE, "simple keyspace");
		is_int(cql_token_map_replicas(m, "ks_simple", 50, h, 4), 2, "RF 2 from the map");
		is_int(cql_token_map_keyspace_class(m, "ks_nts", NULL), CQL_REPL_NTS, "NTS keyspace");
		is_int(cql_token_map_replicas(m, "ks_nts", 50, h, 4), 1, "NTS dc1 RF 1");
		is_int(cql_token_map_keyspace_class(m, "system", NULL), CQL_REPL_LOCAL, "LocalStrategy keyspace");
		is_int(cql_token_map_keyspace_class(m, "ks_trunc", NULL), CQL_REPL_NONE, "truncated map ignored");
		is_int(cql_token_map_keyspace_class(m, "ks_nul", NULL), CQL_REPL_NONE, "NUL in map ignored");
		is_int(cql_token_map_keyspace_class(m, "ks_null", NULL), CQL_REPL_NONE, "null replication ignored");
	}
	cql_token_map_free(m);
	fx_free(r);
	free(r);
}

/* ---------------------------------------------------------------------
 * Allocation failures: the n-th allocation fails, for every n, until the
 * operation succeeds.  Each run must fail cleanly with NOMEM (ASan and
 * LeakSanitizer check that nothing leaks or is touched after free).
 * ---------------------------------------------------------------------
 */

static void
test_nomem(void)
{
	const char *M3 = "org.apache.cassandra.dht.Murmur3Partitioner";
	const char *ltok[] = {"-100", "0", NULL};
	const char *t100[] = {"100", "7", NULL};
	fx_result  *local = calloc(1, sizeof(fx_result));
	fx_result  *peers = calloc(1, sizeof(fx_result));
	const char *cols[] = {"keyspace_name", "replication"};
	fx_result  *ks = calloc(1, sizeof(fx_result));
	const char *nts[] = {"class", "NetworkTopologyStrategy", "dc1", "2", NULL};
	long		n;
	int			bad = 0;

	fx_local(local, M3, ltok);
	fx_init(peers, peer_cols, P_NCOLS);
	fx_peer(peers, 0, 0, t100);
	fx_peer(peers, 1, 1, t100);
	fx_init(ks, cols, 2);
	fx_text(ks, 0, 0, "k");
	fx_map(ks, 0, 1, nts);

	for (n = 0; n < 10000; n++)
	{
		cql_topology *t = NULL;
		cql_token_map *m = NULL;
		cql_contact_point *cp = NULL;
		int			ncp = 0;
		cql_error	err;
		cql_status	st;
		int			h[4];

		fail_countdown = n;
		cql_error_clear(&err);
		st = cql_contact_points_parse("a,b:1,[::1]:2", 9042, &failing_allocator, &cp, &ncp, &err);
		if (st == CQL_OK)
			st = cql_topology_parse(&local->res, &peers->res, "127.0.0.1", 9042, &failing_allocator, &t, &err);
		if (st == CQL_OK)
			st = cql_topology_token_map(t, &failing_allocator, &m);
		if (st == CQL_OK)
			st = cql_token_map_load_keyspaces(m, &ks->res);
		if (st == CQL_OK && cql_token_map_keyspace_class(m, "k", NULL) != CQL_REPL_NTS)
			st = CQL_ERR_NOMEM;	/* a dropped keyspace under NOMEM is fine */
		fail_countdown = -1;
		if (st == CQL_OK && cql_token_map_replicas(m, "k", 50, h, 4) != 2)
			bad++;
		cql_token_map_free(m);
		cql_topology_free(t, &failing_allocator);
		cql_contact_points_free(cp, ncp, &failing_allocator);
		if (st != CQL_OK && st != CQL_ERR_NOMEM)
			bad++;
		if (st == CQL_OK)
			break;
	}
	ok(n > 10 && n < 10000, "succeeds once allocations stop failing (after %ld failure points)", n);
	is_int(bad, 0, "every allocation failure gives NOMEM, never a crash or a leak");
	fx_free(local);
	fx_free(peers);
	fx_free(ks);
	free(local);
	free(peers);
	free(ks);
}

int
main(void)
{
	plan(165);		/* every assertion runs on a passing build */
	test_token_parse();
	test_contact_points();
	test_simple_three_nodes();
	test_vnodes();
	test_nts();
	test_hostile_and_edge();
	test_random();
	test_topology();
	test_keyspace_rows();
	test_nomem();
	return done_testing();
}

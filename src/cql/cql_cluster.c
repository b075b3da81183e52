/*-------------------------------------------------------------------------
 *
 * cql_cluster.c
 *		Contact points, topology, token ring, replica placement and
 *		token-aware coordinator choice.
 *
 * The file has three layers, each using only the ones above it:
 *	1. pure parsing (contact points, tokens, replication maps);
 *	2. the token map (ring + replica placement), no I/O;
 *	3. the cluster: control connection, topology queries, per-host
 *	   connections with failure backoff, coordinator choice.
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
#include "cql_cluster.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------
 * Contact points
 * ---------------------------------------------------------------------
 */

static bool
parse_port(const char *s, size_t n, int *port)
{
	int			v = 0;

	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	*port = v;
	return true;
}

/*
 * Split one trimmed item into host and port.  Returns false with a reason
 * for an unusable item.
 */
static bool
split_host_port(const char *s, size_t n, int default_port,
				const char **host, size_t *hostlen, int *port,
				const char **why)
{
	const char *colon;

	*port = default_port;
	if (s[0] == '[')
	{
		const char *close = memchr(s, ']', n);

		if (!close)
		{
			*why = "missing \"]\"";
			return false;
		}
		*host = s + 1;
		*hostlen = (size_t) (close - s) - 1;
		if (close + 1 < s + n)
		{
			if (close[1] != ':' ||
				!parse_port(close + 2, (size_t) (s + n - close - 2), port))
			{
				*why = "invalid port";
				return false;
			}
		}
	}
	else
	{
		const char *first = memchr(s, ':', n);

		colon = NULL;
		for (size_t i = n; i > 0; i--)
			if (s[i - 1] == ':')
			{
				colon = s + i - 1;
				break;
			}
		*host = s;
		*hostlen = n;
		/* exactly one colon: host:port; several: a bare IPv6 address */
		if (colon && colon == first)
		{
			*hostlen = (size_t) (colon - s);
			if (!parse_port(colon + 1, (size_t) (s + n - colon - 1), port))
			{
				*why = "invalid port";
				return false;
			}
		}
	}
	if (*hostlen == 0)
	{
		*why = "empty host name";
		return false;
	}
	if (*hostlen > CQL_CLUSTER_MAX_HOSTLEN)
	{
		*why = "host name too long";
		return false;
	}
	for (size_t i = 0; i < *hostlen; i++)
	{
		unsigned char ch = (unsigned char) (*host)[i];

		if (ch <= ' ' || ch == 0x7f || ch == '[' || ch == ']' || ch == '/')
		{
			*why = "invalid character in host name";
			return false;
		}
	}
	return true;
}

cql_status
cql_contact_points_parse(const char *spec, int default_port,
						 const cql_allocator *a,
						 cql_contact_point **out, int *n, cql_error *err)
{
	cql_contact_point *cps = NULL;
	int			ncps = 0;
	const char *p;

	*out = NULL;
	*n = 0;
	if (!spec)
		spec = "";
	if (default_port < 1 || default_port > 65535)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "invalid default port %d", default_port);
		return CQL_ERR_INVALID_ARG;
	}
	p = spec;
	for (;;)
	{
		const char *e = strchr(p, ',');
		const char *b = p;
		size_t		len;
		const char *host;
		size_t		hostlen;
		int			port;
		const char *why = NULL;
		bool		dup = false;

		if (!e)
			e = p + strlen(p);
		len = (size_t) (e - b);
		while (len > 0 && isspace((unsigned char) b[0]))
			b++, len--;
		while (len > 0 && isspace((unsigned char) b[len - 1]))
			len--;
		if (len > 0)
		{
			if (!split_host_port(b, len, default_port, &host, &hostlen, &port, &why))
			{
				cql_error_setf(err, CQL_ERR_INVALID_ARG,
							   "invalid contact point \"%.*s\": %s",
							   (int) (len > 300 ? 300 : len), b, why);
				cql_contact_points_free(cps, ncps, a);
				return CQL_ERR_INVALID_ARG;
			}
			for (int i = 0; i < ncps; i++)
				if (cps[i].port == port && strlen(cps[i].host) == hostlen &&
					memcmp(cps[i].host, host, hostlen) == 0)
					dup = true;
			if (!dup)
			{
				cql_contact_point *ncp;

				if (ncps >= CQL_CLUSTER_MAX_CONTACTS)
				{
					cql_error_setf(err, CQL_ERR_TOO_LARGE,
								   "more than %d contact points", CQL_CLUSTER_MAX_CONTACTS);
					cql_contact_points_free(cps, ncps, a);
					return CQL_ERR_TOO_LARGE;
				}
				ncp = cql_realloc(a, cps, sizeof(*cps) * (size_t) (ncps + 1));
				if (!ncp)
					goto nomem;
				cps = ncp;
				cps[ncps].port = port;
				if (!(cps[ncps].host = cql_strndup(a, host, hostlen)))
					goto nomem;
				ncps++;
			}
		}
		if (*e == '\0')
			break;
		p = e + 1;
	}
	if (ncps == 0)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "no contact point given");
		return CQL_ERR_INVALID_ARG;
	}
	*out = cps;
	*n = ncps;
	return CQL_OK;

nomem:
	cql_contact_points_free(cps, ncps, a);
	cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
	return CQL_ERR_NOMEM;
}

void
cql_contact_points_free(cql_contact_point *cps, int n, const cql_allocator *a)
{
	if (!cps)
		return;
	for (int i = 0; i < n; i++)
		cql_free(a, cps[i].host);
	cql_free(a, cps);
}

/* ---------------------------------------------------------------------
 * Tokens and replication factors
 * ---------------------------------------------------------------------
 */
cql_status
cql_token_parse(const char *s, size_t len, int64_t *out)
{
	bool		neg = false;
	uint64_t	v = 0;
	uint64_t	limit;
	size_t		i = 0;

	if (!s || len == 0)
		return CQL_ERR_MALFORMED;
	if (s[0] == '-')
	{
		neg = true;
		i = 1;
	}
	if (i == len || len - i > 19)
		return CQL_ERR_MALFORMED;
	limit = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
	for (; i < len; i++)
	{
		unsigned	d;

		if (s[i] < '0' || s[i] > '9')
			return CQL_ERR_MALFORMED;
		d = (unsigned) (s[i] - '0');
		if (v > (limit - d) / 10)
			return CQL_ERR_MALFORMED;
		v = v * 10 + d;
	}
	if (neg)
		*out = (v == (uint64_t) INT64_MAX + 1) ? INT64_MIN : -(int64_t) v;
	else
		*out = (int64_t) v;
	return CQL_OK;
}

/*
 * A replication factor: "3", or "3/1" (3 replicas of which 1 transient,
 * Cassandra 4.0+).  Returns -1 when unusable.
 */
static int
parse_rf(const char *s)
{
	long		full = 0;
	long		trans = 0;
	const char *p = s;

	if (!s)
		return -1;
	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9')
	{
		full = full * 10 + (*p++ - '0');
		if (full > 1000000)
			return -1;
	}
	if (*p == '/')
	{
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
		{
			trans = trans * 10 + (*p++ - '0');
			if (trans > 1000000)
				return -1;
		}
		if (trans > full)
			return -1;
	}
	while (*p == ' ')
		p++;
	if (*p != '\0')
		return -1;
	return (int) full;
}

/* "org.apache.cassandra.locator.SimpleStrategy" or "SimpleStrategy". */
static cql_replication_class
parse_strategy_class(const char *cls)
{
	const char *dot;

	if (!cls)
		return CQL_REPL_NONE;
	dot = strrchr(cls, '.');
	if (dot)
		cls = dot + 1;
	if (strcmp(cls, "SimpleStrategy") == 0)
		return CQL_REPL_SIMPLE;
	if (strcmp(cls, "NetworkTopologyStrategy") == 0)
		return CQL_REPL_NTS;
	if (strcmp(cls, "LocalStrategy") == 0)
		return CQL_REPL_LOCAL;
	if (strcmp(cls, "EverywhereStrategy") == 0)
		return CQL_REPL_EVERYWHERE;
	return CQL_REPL_NONE;
}

/* ---------------------------------------------------------------------
 * Token map
 * ---------------------------------------------------------------------
 */
typedef struct tm_host
{
	int			dc;				/* index into dc_names */
	int			rack;			/* global (dc, rack) index */
	int			ntokens;
} tm_host;

typedef struct tm_entry
{
	int64_t		token;
	int			host;
} tm_entry;

typedef struct tm_keyspace
{
	char	   *name;
	cql_replication_class cls;
	int			rf;				/* Simple */
	int		   *dc_rf;			/* NTS: per dc index, ndcs entries */
	const char *why;			/* static reason for CQL_REPL_NONE */
} tm_keyspace;

struct cql_token_map
{
	const cql_allocator *alloc;
	bool		built;

	tm_host    *hosts;
	int			nhosts;
	int			cap_hosts;

	char	  **dc_names;
	int			ndcs;
	char	  **rack_names;		/* global rack index -> name */
	int		   *rack_dc;		/* global rack index -> dc */
	int			nracks;

	tm_entry   *ring;
	int			nring;
	int			cap_ring;

	/* computed by build, per dc: hosts owning tokens, racks of those */
	int		   *dc_nodes;
	int		   *dc_rackcount;

	tm_keyspace *ks;
	int			nks;
	int			cap_ks;

	/* scratch for cql_token_map_replicas */
	int		   *s_reps;			/* nhosts */
	bool	   *s_in;			/* nhosts */
	bool	   *s_rack_seen;	/* nracks */
	int		   *s_rf_left;		/* ndcs */
	int		   *s_repeats;		/* ndcs */
};

cql_status
cql_token_map_create(const cql_allocator *a, cql_token_map **out)
{
	cql_token_map *m;

	*out = NULL;
	if (!(m = cql_alloc0(a, sizeof(*m))))
		return CQL_ERR_NOMEM;
	m->alloc = a;
	*out = m;
	return CQL_OK;
}

static void
free_strv(const cql_allocator *a, char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		cql_free(a, v[i]);
	cql_free(a, v);
}

void
cql_token_map_free(cql_token_map *m)
{
	const cql_allocator *a;

	if (!m)
		return;
	a = m->alloc;
	cql_free(a, m->hosts);
	free_strv(a, m->dc_names, m->ndcs);
	free_strv(a, m->rack_names, m->nracks);
	cql_free(a, m->rack_dc);
	cql_free(a, m->ring);
	cql_free(a, m->dc_nodes);
	cql_free(a, m->dc_rackcount);
	for (int i = 0; i < m->nks; i++)
	{
		cql_free(a, m->ks[i].name);
		cql_free(a, m->ks[i].dc_rf);
	}
	cql_free(a, m->ks);
	cql_free(a, m->s_reps);
	cql_free(a, m->s_in);
	cql_free(a, m->s_rack_seen);
	cql_free(a, m->s_rf_left);
	cql_free(a, m->s_repeats);
	cql_free(a, m);
}

/* Grow an array to hold at least 'need' elements of 'size' bytes. */
static bool
grow(const cql_allocator *a, void **arr, int *cap, int need, size_t size)
{
	int			ncap;
	void	   *p;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	if (!(p = cql_realloc(a, *arr, (size_t) ncap * size)))
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

static int
find_dc(const cql_token_map *m, const char *dc)
{
	for (int i = 0; i < m->ndcs; i++)
		if (strcmp(m->dc_names[i], dc) == 0)
			return i;
	return -1;
}

cql_status
cql_token_map_add_host(cql_token_map *m, const char *dc, const char *rack,
					   const int64_t *tokens, int ntokens)
{
	const cql_allocator *a = m->alloc;
	int			d;
	int			r = -1;
	tm_host    *h;

	if (m->built || ntokens < 0 || (ntokens > 0 && !tokens))
		return CQL_ERR_INVALID_ARG;
	if (m->nhosts >= CQL_CLUSTER_MAX_HOSTS ||
		ntokens > CQL_CLUSTER_MAX_TOKENS - m->nring)
		return CQL_ERR_TOO_LARGE;
	if (!dc)
		dc = "";
	if (!rack)
		rack = "";

	if ((d = find_dc(m, dc)) < 0)
	{
		char	  **nv = cql_realloc(a, m->dc_names, sizeof(char *) * (size_t) (m->ndcs + 1));

		if (!nv)
			return CQL_ERR_NOMEM;
		m->dc_names = nv;
		if (!(nv[m->ndcs] = cql_strdup(a, dc)))
			return CQL_ERR_NOMEM;
		d = m->ndcs++;
	}
	for (int i = 0; i < m->nracks; i++)
		if (m->rack_dc[i] == d && strcmp(m->rack_names[i], rack) == 0)
			r = i;
	if (r < 0)
	{
		char	  **nv = cql_realloc(a, m->rack_names, sizeof(char *) * (size_t) (m->nracks + 1));
		int		   *nd;

		if (!nv)
			return CQL_ERR_NOMEM;
		m->rack_names = nv;
		if (!(nd = cql_realloc(a, m->rack_dc, sizeof(int) * (size_t) (m->nracks + 1))))
			return CQL_ERR_NOMEM;
		m->rack_dc = nd;
		if (!(nv[m->nracks] = cql_strdup(a, rack)))
			return CQL_ERR_NOMEM;
		nd[m->nracks] = d;
		r = m->nracks++;
	}

	if (!grow(a, (void **) &m->hosts, &m->cap_hosts, m->nhosts + 1, sizeof(tm_host)) ||
		!grow(a, (void **) &m->ring, &m->cap_ring, m->nring + ntokens, sizeof(tm_entry)))
		return CQL_ERR_NOMEM;
	h = &m->hosts[m->nhosts];
	h->dc = d;
	h->rack = r;
	h->ntokens = ntokens;
	for (int i = 0; i < ntokens; i++)
	{
		m->ring[m->nring + i].token = tokens[i];
		m->ring[m->nring + i].host = m->nhosts;
	}
	m->nring += ntokens;
	m->nhosts++;
	return CQL_OK;
}

static int
cmp_entry(const void *x, const void *y)
{
	const tm_entry *a = x;
	const tm_entry *b = y;

	if (a->token != b->token)
		return a->token < b->token ? -1 : 1;
	/* equal tokens: earlier host first, so dedup keeps it */
	return a->host - b->host;
}

cql_status
cql_token_map_build(cql_token_map *m)
{
	const cql_allocator *a = m->alloc;
	int			w = 0;
	bool	   *rack_used;

	if (m->built)
		return CQL_ERR_INVALID_ARG;
	if (m->nring > 1)
		qsort(m->ring, (size_t) m->nring, sizeof(tm_entry), cmp_entry);
	for (int i = 0; i < m->nring; i++)
		if (w == 0 || m->ring[w - 1].token != m->ring[i].token)
			m->ring[w++] = m->ring[i];
	m->nring = w;

	/* +1 everywhere: zero-size allocations may legally return NULL */
	m->dc_nodes = cql_alloc0(a, sizeof(int) * (size_t) (m->ndcs + 1));
	m->dc_rackcount = cql_alloc0(a, sizeof(int) * (size_t) (m->ndcs + 1));
	m->s_reps = cql_alloc0(a, sizeof(int) * (size_t) (m->nhosts + 1));
	m->s_in = cql_alloc0(a, sizeof(bool) * (size_t) (m->nhosts + 1));
	m->s_rack_seen = cql_alloc0(a, sizeof(bool) * (size_t) (m->nracks + 1));
	m->s_rf_left = cql_alloc0(a, sizeof(int) * (size_t) (m->ndcs + 1));
	m->s_repeats = cql_alloc0(a, sizeof(int) * (size_t) (m->ndcs + 1));
	if (!m->dc_nodes || !m->dc_rackcount || !m->s_reps || !m->s_in ||
		!m->s_rack_seen || !m->s_rf_left || !m->s_repeats)
		return CQL_ERR_NOMEM;

	/*
	 * Count, per data center, the hosts that still own a token after the
	 * dedup and their racks: these bound how many replicas a DC can give
	 * and how many racks must be covered before a rack repeats.
	 */
	rack_used = m->s_rack_seen;
	for (int i = 0; i < m->nring; i++)
		m->s_in[m->ring[i].host] = true;
	for (int h = 0; h < m->nhosts; h++)
	{
		if (!m->s_in[h])
			continue;
		m->s_in[h] = false;
		m->dc_nodes[m->hosts[h].dc]++;
		if (!rack_used[m->hosts[h].rack])
		{
			rack_used[m->hosts[h].rack] = true;
			m->dc_rackcount[m->hosts[h].dc]++;
		}
	}
	memset(rack_used, 0, sizeof(bool) * (size_t) m->nracks);
	m->built = true;
	return CQL_OK;
}

static tm_keyspace *
find_keyspace(const cql_token_map *m, const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < m->nks; i++)
		if (strcmp(m->ks[i].name, name) == 0)
			return &m->ks[i];
	return NULL;
}

cql_status
cql_token_map_set_keyspace(cql_token_map *m, const char *keyspace,
						   const char *const *keys, const char *const *values,
						   int n)
{
	const cql_allocator *a = m->alloc;
	tm_keyspace *ks;
	const char *cls = NULL;

	if (!m->built || !keyspace || n < 0)
		return CQL_ERR_INVALID_ARG;
	if (!(ks = find_keyspace(m, keyspace)))
	{
		if (!grow(a, (void **) &m->ks, &m->cap_ks, m->nks + 1, sizeof(tm_keyspace)))
			return CQL_ERR_NOMEM;
		ks = &m->ks[m->nks];
		memset(ks, 0, sizeof(*ks));
		if (!(ks->name = cql_strdup(a, keyspace)))
			return CQL_ERR_NOMEM;
		if (!(ks->dc_rf = cql_alloc0(a, sizeof(int) * (size_t) (m->ndcs + 1))))
		{
			cql_free(a, ks->name);
			return CQL_ERR_NOMEM;
		}
		m->nks++;
	}
	ks->cls = CQL_REPL_NONE;
	ks->rf = 0;
	ks->why = NULL;
	memset(ks->dc_rf, 0, sizeof(int) * (size_t) (m->ndcs + 1));

	for (int i = 0; i < n; i++)
		if (keys && values && keys[i] && strcmp(keys[i], "class") == 0)
			cls = values[i];
	if (!cls)
	{
		ks->why = "replication has no class";
		return CQL_OK;
	}
	ks->cls = parse_strategy_class(cls);
	switch (ks->cls)
	{
		case CQL_REPL_NONE:
			ks->why = "unsupported replication strategy";
			break;
		case CQL_REPL_LOCAL:
			ks->why = "LocalStrategy: data is local to every node";
			break;
		case CQL_REPL_EVERYWHERE:
			break;
		case CQL_REPL_SIMPLE:
			ks->rf = -1;
			for (int i = 0; i < n; i++)
				if (keys[i] && strcmp(keys[i], "replication_factor") == 0)
					ks->rf = parse_rf(values[i]);
			if (ks->rf < 0)
			{
				ks->cls = CQL_REPL_NONE;
				ks->why = "SimpleStrategy without a valid replication_factor";
			}
			break;
		case CQL_REPL_NTS:
			for (int i = 0; i < n; i++)
			{
				int			d;
				int			rf;

				if (!keys[i] || strcmp(keys[i], "class") == 0 ||
					(d = find_dc(m, keys[i])) < 0)
					continue;	/* a DC without hosts: nothing to place */
				if ((rf = parse_rf(values[i])) < 0)
				{
					ks->cls = CQL_REPL_NONE;
					ks->why = "NetworkTopologyStrategy with an invalid replication factor";
					break;
				}
				ks->dc_rf[d] = rf;
			}
			break;
	}
	return CQL_OK;
}

cql_replication_class
cql_token_map_keyspace_class(const cql_token_map *m, const char *keyspace,
							 const char **why)
{
	tm_keyspace *ks = find_keyspace(m, keyspace);

	if (why)
		*why = ks ? ks->why : "unknown keyspace";
	return ks ? ks->cls : CQL_REPL_NONE;
}

int
cql_token_map_nhosts(const cql_token_map *m)
{
	return m->nhosts;
}

int
cql_token_map_ntokens(const cql_token_map *m)
{
	return m->built ? m->nring : 0;
}

int
cql_token_map_ring_index(const cql_token_map *m, int64_t token)
{
	int			lo = 0;
	int			hi;

	if (!m->built || m->nring == 0)
		return -1;
	/* first ring token >= token, like bisect_left */
	hi = m->nring;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (m->ring[mid].token < token)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == m->nring ? 0 : lo;
}

int
cql_token_map_owner(const cql_token_map *m, int64_t token)
{
	int			i = cql_token_map_ring_index(m, token);

	return i < 0 ? -1 : m->ring[i].host;
}

/* Take host h as the next replica. */
static inline void
take(cql_token_map *m, int *count, int h)
{
	m->s_in[h] = true;
	m->s_reps[(*count)++] = h;
}

int
cql_token_map_replicas(cql_token_map *m, const char *keyspace, int64_t token,
					   int *hosts, int max)
{
	tm_keyspace *ks = find_keyspace(m, keyspace);
	int			start = cql_token_map_ring_index(m, token);
	int			count = 0;

	if (!ks || start < 0)
		return 0;

	switch (ks->cls)
	{
		case CQL_REPL_NONE:
		case CQL_REPL_LOCAL:
			return 0;

		case CQL_REPL_SIMPLE:
		case CQL_REPL_EVERYWHERE:
			{
				int			want = ks->cls == CQL_REPL_SIMPLE ? ks->rf : m->nhosts;

				for (int i = 0; i < m->nring && count < want; i++)
				{
					int			h = m->ring[(start + i) % m->nring].host;

					if (!m->s_in[h])
						take(m, &count, h);
				}
				break;
			}

		case CQL_REPL_NTS:
			{
				int			to_fill = 0;

				for (int d = 0; d < m->ndcs; d++)
				{
					int			rf = ks->dc_rf[d];

					m->s_rf_left[d] = rf < m->dc_nodes[d] ? rf : m->dc_nodes[d];
					/* may be negative: then no rack may repeat at all */
					m->s_repeats[d] = rf - m->dc_rackcount[d];
					if (m->s_rf_left[d] > 0)
						to_fill++;
				}
				for (int i = 0; i < m->nring && to_fill > 0; i++)
				{
					int			h = m->ring[(start + i) % m->nring].host;
					int			d = m->hosts[h].dc;
					int			r = m->hosts[h].rack;

					if (m->s_rf_left[d] == 0 || m->s_in[h])
						continue;
					if (!m->s_rack_seen[r])
						m->s_rack_seen[r] = true;
					else if (m->s_repeats[d] > 0)
						m->s_repeats[d]--;
					else
						continue;
					take(m, &count, h);
					if (--m->s_rf_left[d] == 0)
						to_fill--;
				}
				memset(m->s_rack_seen, 0, sizeof(bool) * (size_t) m->nracks);
				break;
			}
	}

	for (int i = 0; i < count; i++)
	{
		m->s_in[m->s_reps[i]] = false;
		if (i < max && hosts)
			hosts[i] = m->s_reps[i];
	}
	return count;
}

/* ---------------------------------------------------------------------
 * Reading cells of system tables.  A missing column, a null or a value of
 * the wrong size all read as "absent"; callers decide whether that makes
 * the row unusable.
 * ---------------------------------------------------------------------
 */
static int
col_index(const cql_result *r, const char *name)
{
	if (!r || r->kind != CQL_RESULT_ROWS || !r->meta.cols)
		return -1;
	for (int i = 0; i < r->meta.ncols; i++)
		if (r->meta.cols[i].name && strcmp(r->meta.cols[i].name, name) == 0)
			return i;
	return -1;
}

static const cql_elem *
get_cell(const cql_result *r, int row, int col)
{
	const cql_elem *e;

	if (col < 0 || row < 0 || row >= r->rows_count || !r->cells)
		return NULL;
	e = cql_result_cell(r, row, col);
	return (!e || e->n < 0 || (e->n > 0 && !e->p)) ? NULL : e;
}

/* A text cell as a new string; NULL if absent, empty when 'nonempty', or
 * containing a NUL byte. */
static char *
cell_text(const cql_allocator *a, const cql_result *r, int row, int col,
		  bool nonempty, bool *nomem)
{
	const cql_elem *e = get_cell(r, row, col);
	char	   *s;

	if (!e || (nonempty && e->n == 0) || (e->n > 0 && memchr(e->p, 0, (size_t) e->n)))
		return NULL;
	if (!(s = cql_strndup(a, (const char *) e->p, (size_t) e->n)))
		*nomem = true;
	return s;
}

static bool
cell_inet(const cql_result *r, int row, int col, char out[46])
{
	const cql_elem *e = get_cell(r, row, col);
	int			family;
	uint8_t		addr[16];

	return e && cql_decode_inet(e->p, e->n, &family, addr) == CQL_OK &&
		cql_inet_to_string(family, addr, out) == CQL_OK;
}

static bool
cell_uuid(const cql_result *r, int row, int col, char out[37])
{
	const cql_elem *e = get_cell(r, row, col);
	uint8_t		u[16];

	if (!e || cql_decode_uuid(e->p, e->n, u) != CQL_OK)
		return false;
	cql_uuid_to_string(u, out);
	return true;
}

static bool
cell_int(const cql_result *r, int row, int col, int32_t *v)
{
	const cql_elem *e = get_cell(r, row, col);

	return e && cql_decode_int(e->p, e->n, v) == CQL_OK;
}

/*
 * tokens set<text>: [int n] then n [bytes].  Returns CQL_OK with the
 * parsed tokens, CQL_ERR_MALFORMED (with the offending text in 'bad') when
 * one does not parse, CQL_ERR_TRUNCATED when the cell is absent or empty.
 */
static cql_status
cell_tokens(const cql_allocator *a, const cql_result *r, int row, int col,
			int64_t **out, int *n, char *bad, size_t badlen)
{
	const cql_elem *e = get_cell(r, row, col);
	cql_reader	rd;
	int32_t		cnt;
	int64_t    *toks;

	*out = NULL;
	*n = 0;
	if (!e)
		return CQL_ERR_TRUNCATED;
	cql_reader_init(&rd, e->p, (size_t) e->n);
	if (cql_read_i32(&rd, &cnt) != CQL_OK || cnt < 0 ||
		(size_t) cnt > cql_reader_remaining(&rd) / 4)
	{
		snprintf(bad, badlen, "undecodable token set");
		return CQL_ERR_MALFORMED;
	}
	if (cnt == 0)
		return CQL_ERR_TRUNCATED;
	if (cnt > CQL_CLUSTER_MAX_TOKENS)
	{
		snprintf(bad, badlen, "%d tokens", (int) cnt);
		return CQL_ERR_MALFORMED;
	}
	if (!(toks = cql_alloc(a, sizeof(int64_t) * (size_t) cnt)))
		return CQL_ERR_NOMEM;
	for (int32_t i = 0; i < cnt; i++)
	{
		const uint8_t *p;
		int32_t		len;

		if (cql_read_bytes(&rd, &p, &len) != CQL_OK || len < 0)
		{
			snprintf(bad, badlen, "undecodable token set");
			cql_free(a, toks);
			return CQL_ERR_MALFORMED;
		}
		if (cql_token_parse((const char *) p, (size_t) len, &toks[i]) != CQL_OK)
		{
			snprintf(bad, badlen, "token \"%.*s\"", len > 40 ? 40 : (int) len, (const char *) p);
			for (char *c = bad; *c; c++)
				if ((unsigned char) *c < ' ' || (unsigned char) *c >= 0x7f)
					*c = '?';
			cql_free(a, toks);
			return CQL_ERR_MALFORMED;
		}
	}
	*out = toks;
	*n = cnt;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * Topology
 * ---------------------------------------------------------------------
 */
static void
topology_host_clear(cql_topology_host *h, const cql_allocator *a)
{
	cql_free(a, h->address);
	cql_free(a, h->datacenter);
	cql_free(a, h->rack);
	cql_free(a, h->release_version);
	cql_free(a, h->tokens);
	memset(h, 0, sizeof(*h));
}

void
cql_topology_free(cql_topology *t, const cql_allocator *a)
{
	if (!t)
		return;
	for (int i = 0; i < t->nhosts; i++)
		topology_host_clear(&t->hosts[i], a);
	cql_free(a, t->hosts);
	cql_free(a, t->cluster_name);
	cql_free(a, t->partitioner);
	cql_free(a, t);
}

static void
no_routing(cql_topology *t, const char *fmt, const char *arg1, const char *arg2)
{
	if (!t->token_aware)
		return;					/* keep the first reason */
	t->token_aware = false;
	snprintf(t->why, sizeof(t->why), fmt, arg1, arg2);
}

static bool
is_any_address(const char *s)
{
	return strcmp(s, "0.0.0.0") == 0 || strcmp(s, "::") == 0;
}

/*
 * Fill host h from row 'row' of r.  For the control node (is_local) the
 * address is given and missing fields are tolerated; a peer row missing
 * anything mandatory returns false (skip it).
 */
static bool
topology_read_row(cql_topology *t, cql_topology_host *h, const cql_result *r,
				  int row, bool is_local, int control_port,
				  const cql_allocator *a, bool *nomem)
{
	int			c_dc = col_index(r, "data_center");
	int			c_rack = col_index(r, "rack");
	int			c_id = col_index(r, "host_id");
	int			c_rel = col_index(r, "release_version");
	int			c_tok = col_index(r, "tokens");
	char		bad[80];
	cql_status	st;

	if (!cell_uuid(r, row, c_id, h->host_id))
		h->host_id[0] = '\0';
	h->datacenter = cell_text(a, r, row, c_dc, true, nomem);
	h->rack = cell_text(a, r, row, c_rack, true, nomem);
	h->release_version = cell_text(a, r, row, c_rel, false, nomem);
	if (*nomem)
		return false;

	if (!is_local)
	{
		char		addr[46];
		char		peer[46];
		int32_t		port = 0;
		bool		v2 = col_index(r, "native_address") >= 0;

		if (!h->host_id[0] || !h->datacenter || !h->rack)
			return false;
		if (!cell_inet(r, row, col_index(r, v2 ? "native_address" : "rpc_address"), addr))
			return false;
		if (is_any_address(addr))
		{
			if (!cell_inet(r, row, col_index(r, "peer"), peer))
				return false;
			memcpy(addr, peer, sizeof(addr));
		}
		if (!v2 || !cell_int(r, row, col_index(r, "native_port"), &port) ||
			port < 1 || port > 65535)
			port = control_port;
		h->port = port;
		if (!(h->address = cql_strdup(a, addr)))
		{
			*nomem = true;
			return false;
		}
	}
	if ((!h->datacenter && !(h->datacenter = cql_strdup(a, ""))) ||
		(!h->rack && !(h->rack = cql_strdup(a, ""))) ||
		(!h->release_version && !(h->release_version = cql_strdup(a, ""))))
	{
		*nomem = true;
		return false;
	}

	st = cell_tokens(a, r, row, c_tok, &h->tokens, &h->ntokens, bad, sizeof(bad));
	if (st == CQL_ERR_NOMEM)
	{
		*nomem = true;
		return false;
	}
	if (st == CQL_ERR_TRUNCATED)
	{
		/* no tokens: a peer is skipped, the control node just owns none */
		if (!is_local)
			return false;
		no_routing(t, "host %s has no tokens%s", h->address ? h->address : "?", "");
	}
	else if (st != CQL_OK)
	{
		char		who[80];

		snprintf(who, sizeof(who), "%s:%d", h->address ? h->address : "?", h->port);
		no_routing(t, "host %s: invalid %s", who, bad);
	}
	return true;
}

cql_status
cql_topology_parse(const cql_result *local, const cql_result *peers,
				   const char *control_host, int control_port,
				   const cql_allocator *a, cql_topology **out, cql_error *err)
{
	cql_topology *t;
	bool		nomem = false;
	int			maxhosts;

	*out = NULL;
	if (!local || local->kind != CQL_RESULT_ROWS || local->rows_count < 1)
	{
		cql_error_setf(err, CQL_ERR_MALFORMED, "system.local returned no row");
		return CQL_ERR_MALFORMED;
	}
	if (!control_host)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "no control host");
		return CQL_ERR_INVALID_ARG;
	}
	if (peers && peers->kind != CQL_RESULT_ROWS)
		peers = NULL;
	maxhosts = 1 + (peers ? peers->rows_count : 0);
	if (maxhosts > CQL_CLUSTER_MAX_HOSTS)
		maxhosts = CQL_CLUSTER_MAX_HOSTS;

	if (!(t = cql_alloc0(a, sizeof(*t))) ||
		!(t->hosts = cql_alloc0(a, sizeof(cql_topology_host) * (size_t) maxhosts)))
		goto nomem;
	t->token_aware = true;
	if (!(t->cluster_name = cell_text(a, local, 0, col_index(local, "cluster_name"), false, &nomem)) &&
		!nomem)
		t->cluster_name = cql_strdup(a, "");
	if (!(t->partitioner = cell_text(a, local, 0, col_index(local, "partitioner"), false, &nomem)) &&
		!nomem)
		t->partitioner = cql_strdup(a, "");
	if (nomem || !t->cluster_name || !t->partitioner)
		goto nomem;
	{
		size_t		pl = strlen(t->partitioner);
		const char *m3 = "Murmur3Partitioner";

		if (pl < strlen(m3) || strcmp(t->partitioner + pl - strlen(m3), m3) != 0)
			no_routing(t, "partitioner \"%s\" is not supported for token-aware routing%s",
					   pl ? t->partitioner : "(unknown)", "");
	}

	/* the control node */
	{
		cql_topology_host *h = &t->hosts[0];

		t->nhosts = 1;			/* from here on freed with t */
		h->port = control_port;
		if (!(h->address = cql_strdup(a, control_host)))
			goto nomem;
		topology_read_row(t, h, local, 0, true, control_port, a, &nomem);
		if (nomem)
			goto nomem;
	}

	for (int row = 0; peers && row < peers->rows_count; row++)
	{
		cql_topology_host *h;
		bool		skip = false;

		if (t->nhosts >= maxhosts)
		{
			t->nskipped += peers->rows_count - row;
			break;
		}
		h = &t->hosts[t->nhosts];
		if (!topology_read_row(t, h, peers, row, false, control_port, a, &nomem))
		{
			if (nomem)
			{
				topology_host_clear(h, a);
				goto nomem;
			}
			skip = true;
		}
		/* rows describing a host we already have (itself included) */
		for (int j = 0; !skip && j < t->nhosts; j++)
			if ((t->hosts[j].host_id[0] && strcmp(t->hosts[j].host_id, h->host_id) == 0) ||
				(strcmp(t->hosts[j].address, h->address) == 0 &&
				 t->hosts[j].port == h->port))
				skip = true;
		if (skip)
		{
			topology_host_clear(h, a);
			t->nskipped++;
			continue;
		}
		t->nhosts++;
	}
	*out = t;
	return CQL_OK;

nomem:
	cql_topology_free(t, a);
	cql_error_setf(err, CQL_ERR_NOMEM, "out of memory reading the topology");
	return CQL_ERR_NOMEM;
}

cql_status
cql_topology_token_map(const cql_topology *t, const cql_allocator *a,
					   cql_token_map **out)
{
	cql_token_map *m;
	cql_status	st;

	*out = NULL;
	if (!t->token_aware)
		return CQL_OK;
	if ((st = cql_token_map_create(a, &m)) != CQL_OK)
		return st;
	for (int i = 0; i < t->nhosts; i++)
	{
		const cql_topology_host *h = &t->hosts[i];

		if ((st = cql_token_map_add_host(m, h->datacenter, h->rack,
										 h->tokens, h->tokens ? h->ntokens : 0)) != CQL_OK)
		{
			cql_token_map_free(m);
			return st;
		}
	}
	if ((st = cql_token_map_build(m)) != CQL_OK)
	{
		cql_token_map_free(m);
		return st;
	}
	*out = m;
	return CQL_OK;
}

/* replication frozen<map<text, text>> -> set_keyspace */
static cql_status
apply_replication(cql_token_map *m, const char *ks, const cql_elem *e)
{
	const cql_allocator *a = m->alloc;
	cql_reader	rd;
	int32_t		cnt;
	char	  **keys = NULL;
	char	  **vals = NULL;
	int			n = 0;
	cql_status	st = CQL_OK;

	cql_reader_init(&rd, e->p, (size_t) e->n);
	if (cql_read_i32(&rd, &cnt) != CQL_OK || cnt < 0 ||
		(size_t) cnt > cql_reader_remaining(&rd) / 8 || cnt > 4096)
		return CQL_ERR_MALFORMED;
	if (!(keys = cql_alloc0(a, sizeof(char *) * (size_t) (cnt + 1))) ||
		!(vals = cql_alloc0(a, sizeof(char *) * (size_t) (cnt + 1))))
	{
		st = CQL_ERR_NOMEM;
		goto done;
	}
	for (; n < cnt; n++)
	{
		const uint8_t *kp,
				   *vp;
		int32_t		kn,
					vn;

		if (cql_read_bytes(&rd, &kp, &kn) != CQL_OK || kn < 0 ||
			cql_read_bytes(&rd, &vp, &vn) != CQL_OK || vn < 0 ||
			memchr(kp, 0, (size_t) kn) || memchr(vp, 0, (size_t) vn))
		{
			st = CQL_ERR_MALFORMED;
			goto done;
		}
		if (!(keys[n] = cql_strndup(a, (const char *) kp, (size_t) kn)) ||
			!(vals[n] = cql_strndup(a, (const char *) vp, (size_t) vn)))
		{
			n++;
			st = CQL_ERR_NOMEM;
			goto done;
		}
	}
	st = cql_token_map_set_keyspace(m, ks, (const char *const *) keys,
									(const char *const *) vals, n);
done:
	free_strv(a, keys, n);
	free_strv(a, vals, n);
	return st;
}

cql_status
cql_token_map_load_keyspaces(cql_token_map *m, const cql_result *rows)
{
	int			c_name = col_index(rows, "keyspace_name");
	int			c_repl = col_index(rows, "replication");

	if (!m->built)
		return CQL_ERR_INVALID_ARG;
	for (int row = 0; c_name >= 0 && c_repl >= 0 && row < rows->rows_count; row++)
	{
		bool		nomem = false;
		char	   *name = cell_text(m->alloc, rows, row, c_name, true, &nomem);
		const cql_elem *e = get_cell(rows, row, c_repl);
		cql_status	st = CQL_OK;

		if (nomem)
			return CQL_ERR_NOMEM;
		if (name && e)
			st = apply_replication(m, name, e);
		cql_free(m->alloc, name);
		if (st == CQL_ERR_NOMEM)
			return st;
		/* an undecodable map: that keyspace simply is not routable */
	}
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * Cluster
 * ---------------------------------------------------------------------
 */
typedef struct cluster_host
{
	char	   *address;
	int			port;
	char	   *datacenter;
	char	   *rack;
	char		host_id[37];
	char	   *release_version;
	int			ntokens;
	cql_conn   *conn;			/* lazily opened; the control conn for the
								 * control host */
	int64_t		down_until;		/* monotonic ms; 0 = up */
	int			backoff_ms;		/* last backoff, 0 after a success */
	bool		allowed;		/* may be connected to (contact_points_only) */
} cluster_host;

struct cql_cluster
{
	const cql_allocator *alloc;
	cql_conn_options opts;		/* template; strings below are ours */
	char	   *o_username;
	char	   *o_password;
	char	   *o_keyspace;
	char	   *o_driver_name;
	char	   *o_driver_version;

	cql_contact_point *cps;
	int			ncps;
	cql_address_set *allowed;	/* contact_points_only; NULL = any host */
	char	   *local_dc;		/* NULL = no preference */
	bool		token_aware_wanted;
	int			down_backoff_ms;
	int			max_backoff_ms;

	cql_conn   *control;		/* also hosts[control_host].conn */
	char	   *control_addr;	/* address/port the control conn uses */
	int			control_port;

	cluster_host *hosts;
	int			nhosts;
	char	   *cluster_name;
	char	   *partitioner;
	cql_token_map *tm;			/* NULL when not token-aware */
	char		why[256];		/* why not token-aware */
	int64_t		keyspaces_loaded_at;

	/* scratch for coordinator choice, nhosts entries each */
	int		   *plan;
	int		   *reps;
	bool	   *mark;
	unsigned	rr;				/* round robin for key-less choices */
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
cql_cluster_options_init(cql_cluster_options *o)
{
	memset(o, 0, sizeof(*o));
	o->token_aware = true;
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

static void
host_clear(cql_cluster *c, cluster_host *h)
{
	const cql_allocator *a = c->alloc;

	if (h->conn)
	{
		if (h->conn == c->control)
			c->control = NULL;
		cql_conn_close(h->conn);
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
		cql_conn_close(c->control);
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
	cql_free(a, c);
}

/* Append "what: message" to an aggregate error text (bounded). */
static void
append_failure(char *buf, size_t cap, const char *host, int port, const cql_error *e)
{
	size_t		len = strlen(buf);

	if (len + 4 >= cap)
		return;
	snprintf(buf + len, cap - len, "%s%s:%d: %.120s", len ? "; " : "",
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
	return cql_connect(&o, out, err);
}

static bool
host_is_up(const cluster_host *h, int64_t now)
{
	return h->down_until == 0 || now >= h->down_until;
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
		cql_conn_close(h->conn);
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
		cql_conn_close(old);
	return CQL_OK;
}

static void
mark_down(cql_cluster *c, cluster_host *h)
{
	int			b = h->backoff_ms ? h->backoff_ms * 2 : c->down_backoff_ms;

	if (b > c->max_backoff_ms)
		b = c->max_backoff_ms;
	if (b < 1)
		b = 1;
	h->backoff_ms = b;
	h->down_until = now_ms() + b;
	host_drop_conn(c, h);
}

static void
mark_up(cluster_host *h)
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
		uint64_t	x = (uint64_t) now_ms() ^ ((uint64_t) getpid() << 32) ^ (uint64_t) (uintptr_t) c;

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

		if (!h->allowed || !host_is_up(h, now_ms()))
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
				mark_down(c, h);
				continue;
			}
			h->conn = conn;
			mark_up(h);
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
	c->keyspaces_loaded_at = now_ms();
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
			   *reps;
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
	mark = cql_alloc0(a, sizeof(bool) * (size_t) (n + 1));
	if (!nh || !plan || !reps || !mark)
	{
		cql_free(a, nh);
		cql_free(a, plan);
		cql_free(a, reps);
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
		cql_conn_close(nh[0].conn);
	nh[0].conn = c->control;
	mark_up(&nh[0]);
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
	cql_free(a, c->mark);
	c->plan = plan;
	c->reps = reps;
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
			mark_down(c, &c->hosts[h]);
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
	int64_t		now = now_ms();

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
		out[i].up = host_is_up(h, now);
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
	if (!find_keyspace(c->tm, keyspace) && c->control &&
		now_ms() - c->keyspaces_loaded_at >= 1000)
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
	int64_t		now = now_ms();
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
				if (want_up && (!host_is_up(&c->hosts[h], now) ||
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
				if (want_up && (!host_is_up(&c->hosts[h], now) ||
								is_local(c, &c->hosts[h]) != want_local))
					continue;
				c->mark[h] = true;
				c->plan[n++] = h;
			}
		}
	}
	return n;
}

static cql_status
choose(cql_cluster *c, const int *reps, int nreps, cql_conn **conn, cql_error *err)
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
				mark_down(c, h);
				continue;
			}
			/* a working connection replaces a broken control connection */
			if (cql_conn_status(c->control) != CQL_OK)
				(void) replace_control(c, h->conn, h->address, h->port);
		}
		mark_up(h);
		*conn = h->conn;
		return CQL_OK;
	}
	cql_error_setf(err, CQL_ERR_NO_HOST, "no host could be reached: %s", failures);
	return CQL_ERR_NO_HOST;
}

cql_status
cql_cluster_conn_for_token(cql_cluster *c, const char *keyspace,
						   const int64_t *token, cql_conn **conn, cql_error *err)
{
	int			nreps = 0;

	if (token && keyspace && c->tm)
	{
		nreps = cql_cluster_replicas(c, keyspace, *token, c->reps, c->nhosts);
		if (nreps > c->nhosts)
			nreps = c->nhosts;
	}
	return choose(c, c->reps, nreps, conn, err);
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
	if (cql_conn_status(conn) == CQL_OK &&
		st != CQL_ERR_IO && st != CQL_ERR_CLOSED && st != CQL_ERR_STATE &&
		st != CQL_ERR_CONNECT)
		return;					/* the host answered: it is not down */
	mark_down(c, &c->hosts[h]);
}

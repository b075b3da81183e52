/*-------------------------------------------------------------------------
 *
 * cql_token_map.c
 *		Tokens, replication factors and the token map: the ring, replica
 *		placement (SimpleStrategy, NetworkTopologyStrategy) and keyspace
 *		replication read from system_schema.keyspaces.  No I/O.
 *
 * layer: cluster (pure, no I/O)
 *
 * IDENTIFICATION
 *		src/cql/cql_token_map.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_cluster_int.h"
#include "cql_sysrows.h"

#include <stdlib.h>
#include <string.h>

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
 * Replication of keyspaces (system_schema.keyspaces rows)
 * ---------------------------------------------------------------------
 */
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
	int			c_name = cql_sysrow_col(rows, "keyspace_name");
	int			c_repl = cql_sysrow_col(rows, "replication");

	if (!m->built)
		return CQL_ERR_INVALID_ARG;
	for (int row = 0; c_name >= 0 && c_repl >= 0 && row < rows->rows_count; row++)
	{
		bool		nomem = false;
		char	   *name = cql_sysrow_text(m->alloc, rows, row, c_name, true, &nomem);
		const cql_elem *e = cql_sysrow_cell(rows, row, c_repl);
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

/*
 * cql_token_map_has_keyspace
 *		Whether the map knows the keyspace's replication at all (even one
 *		that is not routable).
 */
bool
cql_token_map_has_keyspace(const cql_token_map *m, const char *keyspace)
{
	return find_keyspace(m, keyspace) != NULL;
}

/*-------------------------------------------------------------------------
 *
 * cql_topology.c
 *		Topology from system.local and system.peers(_v2) rows: one host per
 *		valid row (a peer row with missing or null columns is skipped, as
 *		the drivers do), its tokens, and the token map built from them.
 *		Any doubt about tokens turns routing off rather than guessing.
 *
 * layer: cluster (pure, no I/O)
 *
 * IDENTIFICATION
 *		src/cql/cql_topology.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_cluster.h"
#include "cql_sysrows.h"

#include <stdio.h>
#include <string.h>

/*
 * tokens set<text>: [int n] then n [bytes].  Returns CQL_OK with the
 * parsed tokens, CQL_ERR_MALFORMED (with the offending text in 'bad') when
 * one does not parse, CQL_ERR_TRUNCATED when the cell is absent or empty.
 */
static cql_status
cell_tokens(const cql_allocator *a, const cql_result *r, int row, int col,
			int64_t **out, int *n, char *bad, size_t badlen)
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);
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
	int			c_dc = cql_sysrow_col(r, "data_center");
	int			c_rack = cql_sysrow_col(r, "rack");
	int			c_id = cql_sysrow_col(r, "host_id");
	int			c_rel = cql_sysrow_col(r, "release_version");
	int			c_tok = cql_sysrow_col(r, "tokens");
	char		bad[80];
	cql_status	st;

	if (!cql_sysrow_uuid(r, row, c_id, h->host_id))
		h->host_id[0] = '\0';
	h->datacenter = cql_sysrow_text(a, r, row, c_dc, true, nomem);
	h->rack = cql_sysrow_text(a, r, row, c_rack, true, nomem);
	h->release_version = cql_sysrow_text(a, r, row, c_rel, false, nomem);
	if (*nomem)
		return false;

	if (!is_local)
	{
		char		addr[46];
		char		peer[46];
		int32_t		port = 0;
		bool		v2 = cql_sysrow_col(r, "native_address") >= 0;

		if (!h->host_id[0] || !h->datacenter || !h->rack)
			return false;
		if (!cql_sysrow_inet(r, row, cql_sysrow_col(r, v2 ? "native_address" : "rpc_address"), addr))
			return false;
		if (is_any_address(addr))
		{
			if (!cql_sysrow_inet(r, row, cql_sysrow_col(r, "peer"), peer))
				return false;
			memcpy(addr, peer, sizeof(addr));
		}
		if (!v2 || !cql_sysrow_int(r, row, cql_sysrow_col(r, "native_port"), &port) ||
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
	if (!(t->cluster_name = cql_sysrow_text(a, local, 0, cql_sysrow_col(local, "cluster_name"), false, &nomem)) &&
		!nomem)
		t->cluster_name = cql_strdup(a, "");
	if (!(t->partitioner = cql_sysrow_text(a, local, 0, cql_sysrow_col(local, "partitioner"), false, &nomem)) &&
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

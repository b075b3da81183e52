/*-------------------------------------------------------------------------
 *
 * cql_address_set.c
 *		The set of host:port endpoints a cluster may connect to when it is
 *		restricted to its contact points (contact_points_only).
 *
 * Peer addresses come from the server (system.peers / peers_v2), so a
 * hostile or misconfigured node can name any host:port.  With the
 * restriction on, the cluster only opens connections to endpoints in this
 * set: each contact point, by the name it was given and by every address
 * that name resolved to when the cluster connected.  Peer rows carry
 * numeric addresses, which are compared in binary form (so "::1" and
 * "0:0::1" match), always together with the port.
 *
 * layer: cluster
 *
 * IDENTIFICATION
 *		src/cql/cql_address_set.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_cluster.h"
#include "cql_conn_int.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define ADDRS_PER_NAME	16

typedef struct address_entry
{
	char	   *name;			/* as given, for name matches */
	int			family;			/* AF_INET, AF_INET6; 0 = name only */
	uint8_t		addr[16];
	int			port;
} address_entry;

struct cql_address_set
{
	const cql_allocator *alloc;
	address_entry *e;
	int			n;
	int			cap;
};

/*
 * cql_address_set_create
 *		An empty set.
 */
cql_status
cql_address_set_create(const cql_allocator *a, cql_address_set **out)
{
	cql_address_set *s;

	if (a == NULL)
		a = &cql_malloc_allocator;
	*out = NULL;
	if (!(s = cql_alloc0(a, sizeof(*s))))
		return CQL_ERR_NOMEM;
	s->alloc = a;
	*out = s;
	return CQL_OK;
}

void
cql_address_set_free(cql_address_set *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->n; i++)
		cql_free(s->alloc, s->e[i].name);
	cql_free(s->alloc, s->e);
	cql_free(s->alloc, s);
}

/* Append one entry (name is copied when given). */
static cql_status
push(cql_address_set *s, const char *name, int family, const uint8_t *addr, int port)
{
	address_entry *e;

	if (s->n == s->cap)
	{
		int			ncap = s->cap ? s->cap * 2 : 8;
		address_entry *ne = cql_realloc(s->alloc, s->e, sizeof(address_entry) * (size_t) ncap);

		if (!ne)
			return CQL_ERR_NOMEM;
		s->e = ne;
		s->cap = ncap;
	}
	e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	if (name && !(e->name = cql_strdup(s->alloc, name)))
		return CQL_ERR_NOMEM;
	e->family = family;
	if (addr)
		memcpy(e->addr, addr, family == AF_INET ? 4 : 16);
	e->port = port;
	s->n++;
	return CQL_OK;
}

/*
 * cql_address_set_add
 *		Add host:port: the name as given and each address it resolves to
 *		(numeric hosts need no lookup; names are looked up through the wait
 *		hook within timeout_ms).  A name that does not resolve is kept by
 *		name only: it is not an error here, the connect will report it.
 *		Only CQL_ERR_NOMEM and CQL_ERR_INTERRUPTED are returned as errors.
 */
cql_status
cql_address_set_add(cql_address_set *s, const char *host, int port,
					cql_wait_fn wait, void *wait_ctx, int timeout_ms)
{
	int			fam[ADDRS_PER_NAME];
	uint8_t		addrs[ADDRS_PER_NAME][16];
	int			n = 0;
	int			err_no;
	cql_status	st;
	int64_t		deadline = timeout_ms > 0 ? cql_now_ms() + timeout_ms : 0;

	if ((st = push(s, host, 0, NULL, port)) != CQL_OK)
		return st;
	st = cql_sock_resolve(host, deadline, wait ? wait : cql_wait_poll, wait_ctx,
						  fam, addrs, ADDRS_PER_NAME, &n, &err_no);
	if (st == CQL_ERR_INTERRUPTED)
		return st;
	for (int i = 0; st == CQL_OK && i < n; i++)
		if ((st = push(s, NULL, fam[i], addrs[i], port)) != CQL_OK)
			return st;
	return CQL_OK;
}

/*
 * cql_address_set_contains
 *		Is host:port in the set?  A numeric host matches a resolved address
 *		(binary compare, same family); any host also matches a contact
 *		point given by the same name (case-insensitive).
 */
bool
cql_address_set_contains(const cql_address_set *s, const char *host, int port)
{
	uint8_t		bin[16];
	int			family = 0;

	if (s == NULL || host == NULL)
		return false;
	if (inet_pton(AF_INET, host, bin) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, host, bin) == 1)
		family = AF_INET6;
	for (int i = 0; i < s->n; i++)
	{
		const address_entry *e = &s->e[i];

		if (e->port != port)
			continue;
		if (e->name && strcasecmp(e->name, host) == 0)
			return true;
		if (family != 0 && e->family == family &&
			memcmp(e->addr, bin, family == AF_INET ? 4 : 16) == 0)
			return true;
	}
	return false;
}

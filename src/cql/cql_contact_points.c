/*-------------------------------------------------------------------------
 *
 * cql_contact_points.c
 *		Parsing contact point lists ("host1,host2:9043,[::1]:9042") into
 *		host/port pairs.  Pure parsing, no I/O.
 *
 * layer: cluster (pure parsing, no I/O)
 *
 * IDENTIFICATION
 *		src/cql/cql_contact_points.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_cluster.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

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

/*
 * fuzz_metadata.c
 *		libFuzzer target for the metadata a server hands us outside result
 *		cells proper: the topology read from system.local and
 *		system.peers(_v2) (cql_topology_parse), the token map built from it,
 *		keyspace replication (cql_token_map_load_keyspaces,
 *		cql_token_map_set_keyspace) and replica placement; tokens, contact
 *		points and the address set; and schema assembly
 *		(cql_schema_build_table) from system_schema rows.
 *
 * Result sets are fabricated with the column names the library looks for;
 * only the cells come from the input, so the fuzzer spends its time on the
 * cell parsers instead of on guessing column names.
 *
 * Input layout: byte 0: bits 0-1 operation, bit 2 legacy system.peers
 * columns (else peers_v2), bits 4-7 number of peer rows.
 *	op 0: topology: cells, each [u16 BE length (0xffff = null)][bytes],
 *		  for system.local, the peer rows, then keyspace rows; then 8-byte
 *		  tokens whose replicas are computed
 *	op 1: replication maps: '\n'-separated "key=value" lines applied to a
 *		  small fixed ring (3 DCs, 2 racks) and queried
 *	op 2: token strings, contact point lists and the address set, one per
 *		  '\n'-separated line
 *	op 3: schema rows: records separated by 0x1e, fields by 0x1f:
 *		  "C" name kind position order type, or "U" name (fname ftype)...
 *
 * Build and run: see tests/fuzz/README.md.
 */
#include "cql_cluster.h"
#include "cql_schema.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static const cql_allocator *A = &cql_malloc_allocator;

static volatile unsigned sink;

#define MAXCOLS 10
#define MAXROWS 16

/* A fabricated Rows result: names given, cells point into the input. */
typedef struct fab
{
	cql_result	res;
	cql_column	cols[MAXCOLS];
	cql_elem	cells[MAXCOLS * MAXROWS];
} fab;

/* Next cell from the input: [u16 length][bytes]; 0xffff or no input = null. */
static cql_elem
next_cell(const uint8_t **p, size_t *n)
{
	cql_elem	e = {NULL, -1};
	size_t		len;

	if (*n < 2)
		return e;
	len = ((size_t) (*p)[0] << 8) | (*p)[1];
	*p += 2;
	*n -= 2;
	if (len == 0xffff)
		return e;
	if (len > *n)
		len = *n;
	e.p = *p;
	e.n = (int32_t) len;
	*p += len;
	*n -= len;
	return e;
}

static void
fab_fill(fab *f, const char *const *names, int ncols, int nrows,
		 const uint8_t **p, size_t *n)
{
	memset(f, 0, sizeof(*f));
	f->res.kind = CQL_RESULT_ROWS;
	f->res.meta.ncols = ncols;
	f->res.meta.cols = f->cols;
	f->res.cells = f->cells;
	f->res.rows_count = nrows;
	for (int i = 0; i < ncols; i++)
		f->cols[i].name = (char *) names[i];
	for (int i = 0; i < ncols * nrows; i++)
		f->cells[i] = next_cell(p, n);
}

static const char *const local_cols[] = {
	"cluster_name", "data_center", "rack", "host_id", "partitioner",
	"release_version", "tokens", "rpc_address"
};
static const char *const peers_v2_cols[] = {
	"peer", "native_address", "native_port", "data_center", "rack",
	"host_id", "release_version", "tokens"
};
static const char *const peers_cols[] = {
	"peer", "rpc_address", "data_center", "rack", "host_id",
	"release_version", "tokens"
};
static const char *const ks_cols[] = {"keyspace_name", "replication"};

static void
fuzz_topology(uint8_t ctl, const uint8_t *p, size_t n)
{
	fab		   *local = calloc(1, sizeof(fab));
	fab		   *peers = calloc(1, sizeof(fab));
	fab		   *ks = calloc(1, sizeof(fab));
	cql_topology *t = NULL;
	cql_token_map *m = NULL;
	cql_error	err;
	int			npeers = (ctl >> 4) & 15;

	if (!local || !peers || !ks)
		goto out;
	fab_fill(local, local_cols, 8, 1, &p, &n);
	if (ctl & 4)
		fab_fill(peers, peers_cols, 7, npeers, &p, &n);
	else
		fab_fill(peers, peers_v2_cols, 8, npeers, &p, &n);
	fab_fill(ks, ks_cols, 2, 4, &p, &n);

	if (cql_topology_parse(&local->res, &peers->res, "127.0.0.1", 9042, A, &t, &err) != CQL_OK)
		goto out;
	for (int i = 0; i < t->nhosts; i++)
		sink += (unsigned) strlen(t->hosts[i].address) + (unsigned) t->hosts[i].port +
			(unsigned) strlen(t->hosts[i].datacenter);
	if (cql_topology_token_map(t, A, &m) != CQL_OK || m == NULL)
		goto out;
	if (cql_token_map_load_keyspaces(m, &ks->res) != CQL_OK)
		goto out;
	for (int row = 0; row < 4; row++)
	{
		const cql_elem *e = cql_result_cell(&ks->res, row, 0);
		char		name[64];
		int			hosts[8];

		if (!e || e->n < 0 || e->n >= (int32_t) sizeof(name))
			continue;
		memcpy(name, e->p, (size_t) e->n);
		name[e->n] = '\0';
		for (size_t off = 0; off + 8 <= n && off < 64; off += 8)
		{
			int64_t		tok = 0;
			int			cnt;

			memcpy(&tok, p + off, 8);
			cnt = cql_token_map_replicas(m, name, tok, hosts, 8);
			for (int i = 0; i < cnt && i < 8; i++)
				if (hosts[i] < 0 || hosts[i] >= cql_token_map_nhosts(m))
					abort();
		}
		(void) cql_token_map_keyspace_class(m, name, NULL);
	}
out:
	cql_token_map_free(m);
	cql_topology_free(t, A);
	free(local);
	free(peers);
	free(ks);
}

/* Split input into NUL-terminated lines (a copy; caller frees *buf). */
static int
split_lines(const uint8_t *p, size_t n, char sep, char **buf, char ***lines)
{
	int			cnt = 1;
	char	   *b = malloc(n + 1);
	char	  **v;
	int			k = 0;

	*buf = b;
	*lines = NULL;
	if (!b)
		return 0;
	memcpy(b, p, n);
	b[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (b[i] == sep)
			cnt++;
	if (!(v = calloc((size_t) cnt, sizeof(char *))))
		return 0;
	v[k++] = b;
	for (size_t i = 0; i < n; i++)
		if (b[i] == sep)
		{
			b[i] = '\0';
			v[k++] = b + i + 1;
		}
	*lines = v;
	return k;
}

static void
fuzz_replication(const uint8_t *p, size_t n)
{
	static const char *const dcs[3] = {"dc1", "dc2", "dc3"};
	cql_token_map *m = NULL;
	char	   *buf;
	char	  **lines;
	int			nl = split_lines(p, n, '\n', &buf, &lines);
	const char **keys = NULL;
	const char **vals = NULL;
	int			nkv = 0;

	if (cql_token_map_create(A, &m) != CQL_OK)
		goto out;
	for (int h = 0; h < 9; h++)
	{
		int64_t		toks[2] = {(int64_t) h * 1000 - 4000, (int64_t) h * 777 + 5};

		if (cql_token_map_add_host(m, dcs[h % 3], (h & 1) ? "r1" : "r2", toks, 2) != CQL_OK)
			goto out;
	}
	if (cql_token_map_build(m) != CQL_OK || nl == 0)
		goto out;
	keys = calloc((size_t) nl, sizeof(char *));
	vals = calloc((size_t) nl, sizeof(char *));
	if (!keys || !vals)
		goto out;
	for (int i = 0; i < nl; i++)
	{
		char	   *eq = strchr(lines[i], '=');

		if (!eq)
			continue;
		*eq = '\0';
		keys[nkv] = lines[i];
		vals[nkv] = eq + 1;
		nkv++;
	}
	if (cql_token_map_set_keyspace(m, "ks", keys, vals, nkv) != CQL_OK)
		goto out;
	for (int64_t tok = -5000; tok < 8000; tok += 611)
	{
		int			hosts[16];
		int			cnt = cql_token_map_replicas(m, "ks", tok, hosts, 16);

		for (int i = 0; i < cnt && i < 16; i++)
			if (hosts[i] < 0 || hosts[i] >= 9)
				abort();
	}
out:
	free(keys);
	free(vals);
	free(lines);
	free(buf);
	cql_token_map_free(m);
}

static void
fuzz_strings(const uint8_t *p, size_t n)
{
	char	   *buf;
	char	  **lines;
	int			nl = split_lines(p, n, '\n', &buf, &lines);
	cql_address_set *set = NULL;

	(void) cql_address_set_create(A, &set);
	for (int i = 0; i < nl; i++)
	{
		int64_t		tok;
		cql_contact_point *cps = NULL;
		int			ncp = 0;
		cql_error	err;

		if (cql_token_parse(lines[i], strlen(lines[i]), &tok) == CQL_OK)
			sink += (unsigned) tok;
		if (cql_contact_points_parse(lines[i], 9042, A, &cps, &ncp, &err) == CQL_OK)
		{
			for (int k = 0; k < ncp; k++)
			{
				/* only numeric hosts: no DNS traffic from the fuzzer */
				uint8_t		bin[16];

				if (set && (inet_pton(AF_INET, cps[k].host, bin) == 1 ||
							inet_pton(AF_INET6, cps[k].host, bin) == 1))
					(void) cql_address_set_add(set, cps[k].host, cps[k].port, NULL, NULL, 10);
				sink += (unsigned) cql_address_set_contains(set, cps[k].host, cps[k].port);
			}
			cql_contact_points_free(cps, ncp, A);
		}
	}
	cql_address_set_free(set);
	free(lines);
	free(buf);
}

static void
fuzz_schema(const uint8_t *p, size_t n)
{
	char	   *buf;
	char	  **recs;
	int			nr = split_lines(p, n, 0x1e, &buf, &recs);
	cql_column_row *rows = calloc((size_t) nr + 1, sizeof(cql_column_row));
	cql_udt_meta *udts = calloc((size_t) nr + 1, sizeof(cql_udt_meta));
	char	  **fieldbufs = calloc((size_t) nr + 1, sizeof(char *));
	char	 ***fields = calloc((size_t) nr + 1, sizeof(char **));
	int			nrows = 0,
				nudts = 0;
	cql_table_meta *tm = NULL;
	cql_error	err;

	if (!rows || !udts || !fieldbufs || !fields)
		goto out;
	for (int i = 0; i < nr; i++)
	{
		int			nf = split_lines((const uint8_t *) recs[i], strlen(recs[i]), 0x1f,
									 &fieldbufs[i], &fields[i]);
		char	  **f = fields[i];

		if (nf < 2)
			continue;
		if (f[0][0] == 'C' && nf >= 6)
		{
			rows[nrows].name = f[1];
			rows[nrows].kind = f[2];
			rows[nrows].position = atoi(f[3]);
			rows[nrows].clustering_order = f[4][0] ? f[4] : NULL;
			rows[nrows].type = f[5];
			nrows++;
		}
		else if (f[0][0] == 'U')
		{
			int			nfields = (nf - 2) / 2;

			udts[nudts].keyspace = "ks";
			udts[nudts].name = f[1];
			udts[nudts].nfields = nfields;
			udts[nudts].field_names = calloc((size_t) nfields + 1, sizeof(char *));
			udts[nudts].field_types = calloc((size_t) nfields + 1, sizeof(char *));
			if (!udts[nudts].field_names || !udts[nudts].field_types)
			{
				free(udts[nudts].field_names);
				free(udts[nudts].field_types);
				continue;
			}
			for (int k = 0; k < nfields; k++)
			{
				udts[nudts].field_names[k] = f[2 + 2 * k];
				udts[nudts].field_types[k] = f[3 + 2 * k];
			}
			nudts++;
		}
	}
	if (cql_schema_build_table("ks", "t", rows, nrows, udts, nudts, A, &tm, &err) == CQL_OK)
	{
		for (int i = 0; i < tm->ncolumns; i++)
		{
			cql_buf		out;

			sink += (unsigned) strlen(tm->columns[i].name);
			if (!tm->columns[i].type)
				continue;
			cql_buf_init(&out, A);
			if (cql_type_format(tm->columns[i].type, &out) == CQL_OK)
				sink += (unsigned) out.len;
			cql_buf_free(&out);
		}
		for (int i = 0; i < tm->npartition; i++)
			if (tm->partition_key[i] < 0 || tm->partition_key[i] >= tm->ncolumns)
				abort();
		for (int i = 0; i < tm->nclustering; i++)
			if (tm->clustering_key[i] < 0 || tm->clustering_key[i] >= tm->ncolumns)
				abort();
		cql_table_meta_free(tm);
	}
	else
		sink += (unsigned) strlen(err.message);
out:
	for (int i = 0; udts && i < nudts; i++)
	{
		free(udts[i].field_names);
		free(udts[i].field_types);
	}
	for (int i = 0; fieldbufs && fields && i < nr; i++)
	{
		free(fieldbufs[i]);
		free(fields[i]);
	}
	free(fieldbufs);
	free(fields);
	free(rows);
	free(udts);
	free(recs);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		ctl;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;
	switch (ctl & 3)
	{
		case 0:
			fuzz_topology(ctl, data, size);
			break;
		case 1:
			fuzz_replication(data, size);
			break;
		case 2:
			fuzz_strings(data, size);
			break;
		case 3:
			fuzz_schema(data, size);
			break;
	}
	return 0;
}

/*-------------------------------------------------------------------------
 *
 * cql_schema.c
 *		Keyspace, table, column and UDT metadata from system_schema.
 *
 * The loader runs a handful of single-partition queries on one
 * connection (the cluster's control connection in practice) and turns
 * the rows into cql_table_meta.  Assembly and type resolution are pure
 * functions, so they are tested on fixtures as well as against a node.
 *
 * UDT resolution is recursive (a UDT field may itself be a UDT) and the
 * definitions come from the server, so it is bounded twice: by nesting
 * depth (a type that contains itself never ends) and by the total number
 * of type nodes created (ten fields of a type with ten fields of a type
 * ... is small to describe and huge to expand).
 *
 * layer: session
 *
 * IDENTIFICATION
 *		src/cql/cql_schema.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_conn_int.h"	/* cql_now_ms */
#include "cql_schema.h"
#include "cql_sysrows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *
cql_column_kind_name(cql_column_kind k)
{
	switch (k)
	{
		case CQL_COLUMN_PARTITION_KEY:
			return "partition_key";
		case CQL_COLUMN_CLUSTERING:
			return "clustering";
		case CQL_COLUMN_STATIC:
			return "static";
		case CQL_COLUMN_REGULAR:
			return "regular";
	}
	return "unknown";
}

const char *
cql_clustering_order_name(cql_clustering_order o)
{
	switch (o)
	{
		case CQL_ORDER_NONE:
			return "none";
		case CQL_ORDER_ASC:
			return "asc";
		case CQL_ORDER_DESC:
			return "desc";
	}
	return "unknown";
}

/* ---------------------------------------------------------------------
 * Type resolution
 * ---------------------------------------------------------------------
 */
typedef struct udt_ctx
{
	const char *keyspace;
	const cql_udt_meta *udts;
	int			nudts;
	int			depth;
	long		budget;			/* type strings parsed / UDT nodes left */
	cql_status	failure;		/* why the resolver returned NULL */
} udt_ctx;

static cql_type *resolve_udt(void *vctx, const char *keyspace, const char *name,
							 const cql_allocator *a);

static cql_status
parse_with_ctx(udt_ctx *ctx, const char *text, const cql_allocator *a,
			   cql_type **out)
{
	cql_status	st;

	if (--ctx->budget < 0)
	{
		ctx->failure = CQL_ERR_TOO_LARGE;
		return CQL_ERR_TOO_LARGE;
	}
	st = cql_type_parse(text, ctx->keyspace, resolve_udt, ctx, a, out);
	/* the parser reports a NULL resolver answer as UNSUPPORTED; be precise */
	if (st != CQL_OK && ctx->failure != CQL_OK)
		st = ctx->failure;
	return st;
}

static cql_type *
resolve_udt(void *vctx, const char *keyspace, const char *name,
			const cql_allocator *a)
{
	udt_ctx    *ctx = vctx;
	const cql_udt_meta *u = NULL;
	cql_type   *t;

	if (ctx->failure != CQL_OK)
		return NULL;
	if (!name || !keyspace || strcmp(keyspace, ctx->keyspace) != 0)
	{
		/* UDTs can only be used in their own keyspace */
		ctx->failure = CQL_ERR_UNSUPPORTED;
		return NULL;
	}
	for (int i = 0; i < ctx->nudts; i++)
		if (strcmp(ctx->udts[i].name, name) == 0)
		{
			u = &ctx->udts[i];
			break;
		}
	if (!u)
	{
		ctx->failure = CQL_ERR_UNSUPPORTED;
		return NULL;
	}
	if (ctx->depth >= CQL_MAX_TYPE_DEPTH)
	{
		ctx->failure = CQL_ERR_TOO_LARGE;	/* or a UDT containing itself */
		return NULL;
	}
	if (!(t = cql_type_new(a, CQL_TYPE_UDT, u->nfields)))
	{
		ctx->failure = CQL_ERR_NOMEM;
		return NULL;
	}
	if (!(t->keyspace = cql_strdup(a, u->keyspace)) ||
		!(t->name = cql_strdup(a, u->name)))
		goto nomem;
	ctx->depth++;
	for (int i = 0; i < u->nfields; i++)
	{
		if (!(t->field_names[i] = cql_strdup(a, u->field_names[i])))
		{
			ctx->depth--;
			goto nomem;
		}
		if (parse_with_ctx(ctx, u->field_types[i], a, &t->sub[i]) != CQL_OK)
		{
			if (ctx->failure == CQL_OK)
				ctx->failure = CQL_ERR_MALFORMED;
			ctx->depth--;
			cql_type_free(t, a);
			return NULL;
		}
	}
	ctx->depth--;
	return t;

nomem:
	ctx->failure = CQL_ERR_NOMEM;
	cql_type_free(t, a);
	return NULL;
}

cql_status
cql_schema_parse_type(const char *text, const char *keyspace,
					  const cql_udt_meta *udts, int nudts,
					  const cql_allocator *a, cql_type **out)
{
	udt_ctx		ctx;

	*out = NULL;
	if (!text || !keyspace || nudts < 0 || (nudts > 0 && !udts))
		return CQL_ERR_INVALID_ARG;
	ctx.keyspace = keyspace;
	ctx.udts = udts;
	ctx.nudts = nudts;
	ctx.depth = 0;
	ctx.budget = CQL_SCHEMA_MAX_TYPE_NODES;
	ctx.failure = CQL_OK;
	return parse_with_ctx(&ctx, text, a, out);
}

/* ---------------------------------------------------------------------
 * UDT and table metadata
 * ---------------------------------------------------------------------
 */
static void
udt_clear(cql_udt_meta *u, const cql_allocator *a)
{
	cql_free(a, u->keyspace);
	cql_free(a, u->name);
	for (int i = 0; i < u->nfields; i++)
	{
		if (u->field_names)
			cql_free(a, u->field_names[i]);
		if (u->field_types)
			cql_free(a, u->field_types[i]);
	}
	cql_free(a, u->field_names);
	cql_free(a, u->field_types);
	memset(u, 0, sizeof(*u));
}

void
cql_schema_udts_free(cql_udt_meta *udts, int n, const cql_allocator *a)
{
	if (!udts)
		return;
	for (int i = 0; i < n; i++)
		udt_clear(&udts[i], a);
	cql_free(a, udts);
}

static cql_status
udts_copy(const cql_udt_meta *src, int n, const cql_allocator *a,
		  cql_udt_meta **out)
{
	cql_udt_meta *d;

	*out = NULL;
	if (n == 0)
		return CQL_OK;
	if (!(d = cql_alloc0(a, sizeof(*d) * (size_t) n)))
		return CQL_ERR_NOMEM;
	for (int i = 0; i < n; i++)
	{
		const cql_udt_meta *s = &src[i];

		d[i].nfields = s->nfields;
		if (!(d[i].keyspace = cql_strdup(a, s->keyspace)) ||
			!(d[i].name = cql_strdup(a, s->name)) ||
			!(d[i].field_names = cql_alloc0(a, sizeof(char *) * (size_t) (s->nfields + 1))) ||
			!(d[i].field_types = cql_alloc0(a, sizeof(char *) * (size_t) (s->nfields + 1))))
			goto nomem;
		for (int f = 0; f < s->nfields; f++)
			if (!(d[i].field_names[f] = cql_strdup(a, s->field_names[f])) ||
				!(d[i].field_types[f] = cql_strdup(a, s->field_types[f])))
				goto nomem;
	}
	*out = d;
	return CQL_OK;

nomem:
	cql_schema_udts_free(d, n, a);
	return CQL_ERR_NOMEM;
}

void
cql_table_meta_free(cql_table_meta *t)
{
	const cql_allocator *a;

	if (!t)
		return;
	a = t->alloc;
	for (int i = 0; i < t->ncolumns; i++)
	{
		cql_free(a, t->columns[i].name);
		cql_free(a, t->columns[i].type_text);
		cql_free(a, t->columns[i].sai_index);
		cql_free(a, t->columns[i].sai_similarity);
		cql_free(a, t->columns[i].sai_values_index);
		cql_free(a, t->columns[i].sai_keys_index);
		cql_free(a, t->columns[i].sai_entries_index);
		cql_free(a, t->columns[i].mask);
		cql_type_free(t->columns[i].type, a);
	}
	cql_free(a, t->columns);
	cql_free(a, t->partition_key);
	cql_free(a, t->clustering_key);
	cql_schema_udts_free(t->udts, t->nudts, a);
	cql_free(a, t->keyspace);
	cql_free(a, t->name);
	cql_free(a, t);
}

const cql_column_meta *
cql_table_meta_column(const cql_table_meta *t, const char *name)
{
	if (!t || !name)
		return NULL;
	for (int i = 0; i < t->ncolumns; i++)
		if (strcmp(t->columns[i].name, name) == 0)
			return &t->columns[i];
	return NULL;
}

static int
kind_rank(cql_column_kind k)
{
	return (int) k;				/* enum is declared in output order */
}

static int
cmp_column(const void *x, const void *y)
{
	const cql_column_meta *a = x;
	const cql_column_meta *b = y;

	if (a->kind != b->kind)
		return kind_rank(a->kind) - kind_rank(b->kind);
	if (a->kind == CQL_COLUMN_PARTITION_KEY || a->kind == CQL_COLUMN_CLUSTERING)
		return a->position < b->position ? -1 : a->position > b->position;
	return strcmp(a->name, b->name);
}

static bool
parse_kind(const char *s, cql_column_kind *k)
{
	if (!s)
		return false;
	if (strcmp(s, "partition_key") == 0)
		*k = CQL_COLUMN_PARTITION_KEY;
	else if (strcmp(s, "clustering") == 0)
		*k = CQL_COLUMN_CLUSTERING;
	else if (strcmp(s, "static") == 0)
		*k = CQL_COLUMN_STATIC;
	else if (strcmp(s, "regular") == 0)
		*k = CQL_COLUMN_REGULAR;
	else
		return false;
	return true;
}

static bool
parse_order(const char *s, cql_clustering_order *o)
{
	if (!s || strcmp(s, "none") == 0)
		*o = CQL_ORDER_NONE;
	else if (strcmp(s, "asc") == 0)
		*o = CQL_ORDER_ASC;
	else if (strcmp(s, "desc") == 0)
		*o = CQL_ORDER_DESC;
	else
		return false;
	return true;
}

cql_status
cql_schema_build_table(const char *keyspace, const char *table,
					   const cql_column_row *rows, int nrows,
					   const cql_udt_meta *udts, int nudts,
					   const cql_allocator *a,
					   cql_table_meta **out, cql_error *err)
{
	cql_table_meta *t;
	cql_status	st;
	int			np = 0,
				nc = 0;

	*out = NULL;
	if (!keyspace || !table || nrows < 0 || (nrows > 0 && !rows) ||
		nudts < 0 || (nudts > 0 && !udts))
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "invalid arguments to cql_schema_build_table");
		return CQL_ERR_INVALID_ARG;
	}
	if (nrows > CQL_SCHEMA_MAX_COLUMNS)
	{
		cql_error_setf(err, CQL_ERR_TOO_LARGE, "table \"%s\".\"%s\" has %d columns",
					   keyspace, table, nrows);
		return CQL_ERR_TOO_LARGE;
	}
	if (!(t = cql_alloc0(a, sizeof(*t))))
		goto nomem;
	t->alloc = a;
	if (!(t->keyspace = cql_strdup(a, keyspace)) || !(t->name = cql_strdup(a, table)) ||
		!(t->columns = cql_alloc0(a, sizeof(cql_column_meta) * (size_t) (nrows + 1))))
		goto nomem;
	if ((st = udts_copy(udts, nudts, a, &t->udts)) != CQL_OK)
		goto nomem;
	t->nudts = nudts;

	for (int i = 0; i < nrows; i++)
	{
		const cql_column_row *r = &rows[i];
		cql_column_meta *c = &t->columns[i];

		t->ncolumns = i + 1;	/* so that the fail path frees this one */
		if (!r->name || !r->name[0] || !r->type || !r->type[0])
		{
			cql_error_setf(err, CQL_ERR_MALFORMED,
						   "table \"%s\".\"%s\": column %d has no name or type",
						   keyspace, table, i);
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
		if (!parse_kind(r->kind, &c->kind) || !parse_order(r->clustering_order, &c->order))
		{
			cql_error_setf(err, CQL_ERR_MALFORMED,
						   "table \"%s\".\"%s\": column \"%s\" has kind \"%s\" / order \"%s\"",
						   keyspace, table, r->name, r->kind ? r->kind : "(null)",
						   r->clustering_order ? r->clustering_order : "(null)");
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
		c->position = r->position;
		if (c->kind == CQL_COLUMN_PARTITION_KEY || c->kind == CQL_COLUMN_CLUSTERING)
		{
			if (r->position < 0 || r->position >= nrows)
			{
				cql_error_setf(err, CQL_ERR_MALFORMED,
							   "table \"%s\".\"%s\": key column \"%s\" has position %d",
							   keyspace, table, r->name, r->position);
				st = CQL_ERR_MALFORMED;
				goto fail;
			}
			if (c->kind == CQL_COLUMN_PARTITION_KEY)
				np++;
			else
				nc++;
		}
		else
			c->position = -1;
		if (!(c->name = cql_strdup(a, r->name)) || !(c->type_text = cql_strdup(a, r->type)))
			goto nomem;
		c->type_status = cql_schema_parse_type(r->type, keyspace, udts, nudts, a, &c->type);
		if (c->type_status == CQL_ERR_NOMEM)
			goto nomem;
	}
	if (np == 0)
	{
		cql_error_setf(err, CQL_ERR_MALFORMED,
					   "table \"%s\".\"%s\" has no partition key column", keyspace, table);
		st = CQL_ERR_MALFORMED;
		goto fail;
	}

	qsort(t->columns, (size_t) t->ncolumns, sizeof(cql_column_meta), cmp_column);
	for (int i = 1; i < t->ncolumns; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(t->columns[i].name, t->columns[j].name) == 0)
			{
				cql_error_setf(err, CQL_ERR_MALFORMED,
							   "table \"%s\".\"%s\": column \"%s\" appears twice",
							   keyspace, table, t->columns[i].name);
				st = CQL_ERR_MALFORMED;
				goto fail;
			}

	/* after sorting, key columns must sit at positions 0..n-1, no holes */
	if (!(t->partition_key = cql_alloc0(a, sizeof(int) * (size_t) (np + 1))) ||
		!(t->clustering_key = cql_alloc0(a, sizeof(int) * (size_t) (nc + 1))))
		goto nomem;
	for (int i = 0; i < np + nc; i++)
	{
		const cql_column_meta *c = &t->columns[i];
		int			want = i < np ? i : i - np;
		cql_column_kind k = i < np ? CQL_COLUMN_PARTITION_KEY : CQL_COLUMN_CLUSTERING;

		if (c->kind != k || c->position != want)
		{
			cql_error_setf(err, CQL_ERR_MALFORMED,
						   "table \"%s\".\"%s\": %s key positions are not 0..%d",
						   keyspace, table, cql_column_kind_name(k),
						   (k == CQL_COLUMN_PARTITION_KEY ? np : nc) - 1);
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
		if (i < np)
			t->partition_key[t->npartition++] = i;
		else
			t->clustering_key[t->nclustering++] = i;
	}
	*out = t;
	return CQL_OK;

nomem:
	cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
	st = CQL_ERR_NOMEM;
fail:
	cql_table_meta_free(t);
	return st;
}

/* ---------------------------------------------------------------------
 * Queries
 * ---------------------------------------------------------------------
 */

/* Run a query with up to two text values bound; no paging. */
static cql_status
run(cql_conn *c, const char *q, const char *v1, const char *v2,
	cql_result *res, cql_error *err)
{
	cql_query_params p;
	cql_value_ref v[2];

	cql_query_params_init(&p);
	if (v1)
	{
		v[0].p = (const uint8_t *) v1;
		v[0].n = (int32_t) strlen(v1);
		p.nvalues = 1;
	}
	if (v2)
	{
		v[1].p = (const uint8_t *) v2;
		v[1].n = (int32_t) strlen(v2);
		p.nvalues = 2;
	}
	p.values = v;
	memset(res, 0, sizeof(*res));
	cql_error_clear(err);
	return cql_query(c, q, &p, res, err);
}

/*
 * list<text> / set<text> cell -> array of strings.  CQL_ERR_MALFORMED for
 * an undecodable cell or null elements, CQL_ERR_TOO_LARGE over 'max'.
 */
static cql_status
cell_text_list(const cql_allocator *a, const cql_result *r, int row, int col,
			   int max, char ***out, int *n)
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);
	cql_reader	rd;
	int32_t		cnt;
	char	  **v;

	*out = NULL;
	*n = 0;
	if (!e)
		return CQL_ERR_MALFORMED;
	cql_reader_init(&rd, e->p, (size_t) e->n);
	if (cql_read_i32(&rd, &cnt) != CQL_OK || cnt < 0 ||
		(size_t) cnt > cql_reader_remaining(&rd) / 4)
		return CQL_ERR_MALFORMED;
	if (cnt > max)
		return CQL_ERR_TOO_LARGE;
	if (!(v = cql_alloc0(a, sizeof(char *) * (size_t) (cnt + 1))))
		return CQL_ERR_NOMEM;
	for (int32_t i = 0; i < cnt; i++)
	{
		const uint8_t *p;
		int32_t		len;

		if (cql_read_bytes(&rd, &p, &len) != CQL_OK || len < 0 ||
			memchr(p, 0, (size_t) len))
		{
			cql_schema_names_free(v, i, a);
			return CQL_ERR_MALFORMED;
		}
		if (!(v[i] = cql_strndup(a, (const char *) p, (size_t) len)))
		{
			cql_schema_names_free(v, i, a);
			return CQL_ERR_NOMEM;
		}
	}
	*out = v;
	*n = cnt;
	return CQL_OK;
}

void
cql_schema_names_free(char **names, int n, const cql_allocator *a)
{
	if (!names)
		return;
	for (int i = 0; i < n; i++)
		cql_free(a, names[i]);
	cql_free(a, names);
}

/* One text column of every row -> names. */
static cql_status
collect_names(const cql_result *r, const char *column, const cql_allocator *a,
			  char ***names, int *n, cql_error *err)
{
	int			col = cql_sysrow_col(r, column);
	char	  **v;
	int			k = 0;

	*names = NULL;
	*n = 0;
	if (col < 0)
	{
		cql_error_setf(err, CQL_ERR_MALFORMED, "result has no column \"%s\"", column);
		return CQL_ERR_MALFORMED;
	}
	if (!(v = cql_alloc0(a, sizeof(char *) * (size_t) (r->rows_count + 1))))
		goto nomem;
	for (int row = 0; row < r->rows_count; row++)
	{
		bool		nomem = false;
		char	   *s = cql_sysrow_text(a, r, row, col, false, &nomem);

		if (nomem)
		{
			cql_schema_names_free(v, k, a);
			goto nomem;
		}
		if (s)
			v[k++] = s;			/* null names are skipped */
	}
	*names = v;
	*n = k;
	return CQL_OK;

nomem:
	cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
	return CQL_ERR_NOMEM;
}

static cql_status
missing_keyspace(const char *ks, cql_error *err)
{
	cql_error_setf(err, CQL_ERR_INVALID_ARG, "keyspace \"%s\" does not exist", ks);
	return CQL_ERR_INVALID_ARG;
}

bool
cql_schema_missing(cql_status st, const cql_error *err)
{
	size_t		len;
	const char *tail = "\" does not exist";

	if (st != CQL_ERR_INVALID_ARG || !err)
		return false;
	len = strlen(err->message);
	return (strncmp(err->message, "keyspace \"", 10) == 0 ||
			strncmp(err->message, "table \"", 7) == 0) &&
		len > strlen(tail) && strcmp(err->message + len - strlen(tail), tail) == 0;
}

/*
 * Where does a keyspace live: 1 = system_schema, 2 = system_virtual_schema
 * (virtual tables, 4.0+), 0 = nowhere.
 */
static cql_status
keyspace_home(cql_conn *c, const char *ks, int *home, cql_error *err)
{
	cql_result	res;
	cql_status	st;

	*home = 0;
	st = run(c, "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?",
			 ks, NULL, &res, err);
	if (st == CQL_OK && res.kind == CQL_RESULT_ROWS && res.rows_count > 0)
		*home = 1;
	cql_result_free(&res);
	if (st != CQL_OK || *home)
		return st;
	st = run(c, "SELECT keyspace_name FROM system_virtual_schema.keyspaces WHERE keyspace_name = ?",
			 ks, NULL, &res, err);
	if (st == CQL_OK && res.kind == CQL_RESULT_ROWS && res.rows_count > 0)
		*home = 2;
	cql_result_free(&res);
	if (st == CQL_ERR_SERVER)
	{
		/* no virtual schema before 4.0: just "not there" */
		cql_error_clear(err);
		st = CQL_OK;
	}
	return st;
}

/*
 * The home of a keyspace that must exist (keyspace_home): a NULL name or a
 * keyspace found nowhere is CQL_ERR_INVALID_ARG with a message that says
 * which, as every reader of one keyspace's schema reports it.
 */
static cql_status
existing_keyspace_home(cql_conn *c, const char *ks, int *home, cql_error *err)
{
	cql_status	st;

	*home = 0;
	if (!ks)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "no keyspace given");
		return CQL_ERR_INVALID_ARG;
	}
	if ((st = keyspace_home(c, ks, home, err)) != CQL_OK)
		return st;
	if (!*home)
		return missing_keyspace(ks, err);
	return CQL_OK;
}

cql_status
cql_schema_keyspace_exists(cql_conn *c, const char *keyspace, bool *exists,
						   cql_error *err)
{
	int			home = 0;
	cql_status	st;

	*exists = false;
	if (!keyspace)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "no keyspace given");
		return CQL_ERR_INVALID_ARG;
	}
	st = keyspace_home(c, keyspace, &home, err);
	*exists = home != 0;
	return st;
}

cql_status
cql_schema_list_keyspaces(cql_conn *c, const cql_allocator *a,
						  char ***names, int *n, cql_error *err)
{
	cql_result	res;
	cql_status	st;

	*names = NULL;
	*n = 0;
	st = run(c, "SELECT keyspace_name FROM system_schema.keyspaces", NULL, NULL, &res, err);
	if (st == CQL_OK)
		st = collect_names(&res, "keyspace_name", a, names, n, err);
	cql_result_free(&res);
	return st;
}

cql_status
cql_schema_list_tables(cql_conn *c, const char *keyspace, const cql_allocator *a,
					   char ***names, int *n, cql_error *err)
{
	cql_result	res;
	cql_status	st;
	int			home;

	*names = NULL;
	*n = 0;
	if ((st = existing_keyspace_home(c, keyspace, &home, err)) != CQL_OK)
		return st;
	st = run(c, home == 1 ?
			 "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?" :
			 "SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = ?",
			 keyspace, NULL, &res, err);
	if (st == CQL_OK)
		st = collect_names(&res, "table_name", a, names, n, err);
	cql_result_free(&res);
	return st;
}

static cql_status
udts_from_rows(const cql_result *r, const char *keyspace, const cql_allocator *a,
			   cql_udt_meta **out, int *n, cql_error *err)
{
	int			c_name = cql_sysrow_col(r, "type_name");
	int			c_fn = cql_sysrow_col(r, "field_names");
	int			c_ft = cql_sysrow_col(r, "field_types");
	cql_udt_meta *u;
	int			k = 0;
	cql_status	st = CQL_OK;

	*out = NULL;
	*n = 0;
	if (r->rows_count == 0)
		return CQL_OK;
	if (c_name < 0 || c_fn < 0 || c_ft < 0)
	{
		cql_error_setf(err, CQL_ERR_MALFORMED, "system_schema.types result lacks columns");
		return CQL_ERR_MALFORMED;
	}
	if (r->rows_count > CQL_SCHEMA_MAX_UDTS)
	{
		cql_error_setf(err, CQL_ERR_TOO_LARGE, "keyspace \"%s\" has %d types",
					   keyspace, (int) r->rows_count);
		return CQL_ERR_TOO_LARGE;
	}
	if (!(u = cql_alloc0(a, sizeof(*u) * (size_t) r->rows_count)))
		goto nomem;
	for (int row = 0; row < r->rows_count; row++)
	{
		bool		nomem = false;
		int			nn = 0,
					nt = 0;
		cql_udt_meta *d = &u[k];

		d->name = cql_sysrow_text(a, r, row, c_name, false, &nomem);
		if (nomem || !(d->keyspace = cql_strdup(a, keyspace)))
		{
			udt_clear(d, a);
			goto nomem_free;
		}
		if (!d->name || !d->name[0])
		{
			st = CQL_ERR_MALFORMED;
			cql_error_setf(err, st, "keyspace \"%s\": a type without a name", keyspace);
			udt_clear(d, a);
			goto fail;
		}
		k++;
		if ((st = cell_text_list(a, r, row, c_fn, CQL_SCHEMA_MAX_FIELDS, &d->field_names, &nn)) != CQL_OK ||
			(st = cell_text_list(a, r, row, c_ft, CQL_SCHEMA_MAX_FIELDS, &d->field_types, &nt)) != CQL_OK ||
			nn != nt)
		{
			/* keep counts consistent so udt_clear frees what is there */
			if (d->field_names && !d->field_types)
			{
				cql_schema_names_free(d->field_names, nn, a);
				d->field_names = NULL;
			}
			else if (d->field_names && d->field_types)
			{
				cql_schema_names_free(d->field_names, nn, a);
				cql_schema_names_free(d->field_types, nt, a);
				d->field_names = d->field_types = NULL;
			}
			if (st == CQL_ERR_NOMEM)
				goto nomem_free;
			if (st == CQL_OK)
				st = CQL_ERR_MALFORMED;
			cql_error_setf(err, st, "type \"%s\".\"%s\": unusable field lists",
						   keyspace, d->name);
			goto fail;
		}
		d->nfields = nn;
	}
	*out = u;
	*n = k;
	return CQL_OK;

nomem_free:
	st = CQL_ERR_NOMEM;
	cql_error_setf(err, st, "out of memory");
fail:
	cql_schema_udts_free(u, k, a);
	return st;
nomem:
	cql_error_setf(err, CQL_ERR_NOMEM, "out of memory");
	return CQL_ERR_NOMEM;
}

static cql_status
load_udts_home(cql_conn *c, const char *keyspace, int home, const cql_allocator *a,
			   cql_udt_meta **udts, int *n, cql_error *err)
{
	cql_result	res;
	cql_status	st;

	*udts = NULL;
	*n = 0;
	if (home != 1)
		return CQL_OK;			/* virtual keyspaces have no UDTs */
	st = run(c, "SELECT type_name, field_names, field_types FROM system_schema.types "
			 "WHERE keyspace_name = ?", keyspace, NULL, &res, err);
	if (st == CQL_OK)
		st = udts_from_rows(&res, keyspace, a, udts, n, err);
	cql_result_free(&res);
	return st;
}

cql_status
cql_schema_load_udts(cql_conn *c, const char *keyspace, const cql_allocator *a,
					 cql_udt_meta **udts, int *n, cql_error *err)
{
	int			home;
	cql_status	st;

	*udts = NULL;
	*n = 0;
	if ((st = existing_keyspace_home(c, keyspace, &home, err)) != CQL_OK)
		return st;
	return load_udts_home(c, keyspace, home, a, udts, n, err);
}

/* Does a set<text> cell contain 'word'? */
static bool
set_contains(const cql_result *r, int row, int col, const char *word)
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);
	cql_reader	rd;
	int32_t		cnt;
	size_t		wl = strlen(word);

	if (!e)
		return false;
	cql_reader_init(&rd, e->p, (size_t) e->n);
	if (cql_read_i32(&rd, &cnt) != CQL_OK || cnt < 0)
		return false;
	for (int32_t i = 0; i < cnt; i++)
	{
		const uint8_t *p;
		int32_t		len;

		if (cql_read_bytes(&rd, &p, &len) != CQL_OK)
			return false;
		if (len == (int32_t) wl && memcmp(p, word, wl) == 0)
			return true;
	}
	return false;
}

/*
 * map_text_value
 *		The value of text key 'key' in a map<text, text> cell, copied into
 *		buf (cap bytes, truncated); false when absent or undecodable.
 */
static bool
map_text_value(const cql_result *r, int row, int col, const char *key,
			   char *buf, size_t cap)
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);
	cql_reader	rd;
	int32_t		cnt;
	size_t		kl = strlen(key);

	if (!e || cap == 0)
		return false;
	cql_reader_init(&rd, e->p, (size_t) e->n);
	if (cql_read_i32(&rd, &cnt) != CQL_OK || cnt < 0)
		return false;
	for (int32_t i = 0; i < cnt; i++)
	{
		const uint8_t *k,
				   *v;
		int32_t		klen,
					vlen;

		if (cql_read_bytes(&rd, &k, &klen) != CQL_OK ||
			cql_read_bytes(&rd, &v, &vlen) != CQL_OK)
			return false;
		if (klen == (int32_t) kl && memcmp(k, key, kl) == 0 && vlen >= 0)
		{
			size_t		n = (size_t) vlen < cap - 1 ? (size_t) vlen : cap - 1;

			memcpy(buf, v, n);
			buf[n] = '\0';
			return true;
		}
	}
	return false;
}

/*
 * load_column_masks
 *		The masking function of each masked column (Cassandra 5.0 dynamic
 *		data masking, system_schema.column_masks), as "keyspace.function".
 *		A node without the table (before 5.0) or a failure leaves the
 *		columns unmasked in the metadata.
 */
static void
load_column_masks(cql_conn *c, cql_table_meta *t, const cql_allocator *a)
{
	cql_result	res;
	cql_error	err;
	int			c_col,
				c_ks,
				c_fn;

	if (run(c, "SELECT column_name, function_keyspace, function_name "
			"FROM system_schema.column_masks WHERE keyspace_name = ? AND table_name = ?",
			t->keyspace, t->name, &res, &err) != CQL_OK)
		return;
	c_col = cql_sysrow_col(&res, "column_name");
	c_ks = cql_sysrow_col(&res, "function_keyspace");
	c_fn = cql_sysrow_col(&res, "function_name");
	for (int row = 0; res.kind == CQL_RESULT_ROWS && row < res.rows_count; row++)
	{
		bool		nomem = false;
		char	   *col = cql_sysrow_text(a, &res, row, c_col, false, &nomem);
		char	   *ks = cql_sysrow_text(a, &res, row, c_ks, true, &nomem);
		char	   *fn = cql_sysrow_text(a, &res, row, c_fn, false, &nomem);

		for (int i = 0; col && fn && i < t->ncolumns; i++)
		{
			size_t		n;

			if (strcmp(t->columns[i].name, col) != 0 || t->columns[i].mask)
				continue;
			n = (ks ? strlen(ks) + 1 : 0) + strlen(fn) + 1;
			t->columns[i].mask = cql_alloc(a, n);
			if (t->columns[i].mask)
				snprintf(t->columns[i].mask, n, "%s%s%s", ks ? ks : "", ks ? "." : "", fn);
		}
		cql_free(a, col);
		cql_free(a, ks);
		cql_free(a, fn);
	}
	cql_result_free(&res);
}

/*
 * cql_node_setting
 *		One row of system_views.settings of the node c is connected to:
 *		guardrails and other configuration that decide which statements
 *		the node accepts.  Missing setting or table: "" and CQL_OK.
 */
cql_status
cql_node_setting(cql_conn *c, const char *name, char *buf, size_t cap, cql_error *err)
{
	cql_result	res;
	cql_status	st;

	if (cap == 0)
		return CQL_ERR_INVALID_ARG;
	buf[0] = '\0';
	st = run(c, "SELECT value FROM system_views.settings WHERE name = ?", name, NULL, &res, err);
	if (st != CQL_OK)
	{
		/* no virtual tables (before 4.0): no guardrails either */
		if (cql_schema_missing(st, err))
		{
			cql_error_clear(err);
			return CQL_OK;
		}
		return st;
	}
	if (res.kind == CQL_RESULT_ROWS && res.rows_count > 0)
	{
		const cql_elem *e = cql_sysrow_cell(&res, 0, cql_sysrow_col(&res, "value"));

		if (e && e->n > 0)
		{
			size_t		n = (size_t) e->n < cap - 1 ? (size_t) e->n : cap - 1;

			memcpy(buf, e->p, n);
			buf[n] = '\0';
		}
	}
	cql_result_free(&res);
	return CQL_OK;
}

/*
 * unquote_name
 *		A column name as an index target writes it: plain, or in double
 *		quotes with "" for a quote.  False when it does not fit.
 */
static bool
unquote_name(const char *s, size_t len, char *out, size_t cap)
{
	size_t		n = 0;

	if (len >= 2 && s[0] == '"' && s[len - 1] == '"')
	{
		for (size_t i = 1; i + 1 < len; i++)
		{
			if (n + 1 >= cap)
				return false;
			out[n++] = s[i];
			if (s[i] == '"' && s[i + 1] == '"')
				i++;
		}
	}
	else
	{
		if (len + 1 > cap)
			return false;
		memcpy(out, s, len);
		n = len;
	}
	out[n] = '\0';
	return true;
}

/*
 * collection_target
 *		"values", "keys" or "entries" for an index target "values(c)",
 *		"keys(c)", "entries(c)" (the column's name into name), else NULL
 *		("full(c)" of a frozen collection and plain columns included).
 */
static const char *
collection_target(const char *target, char *name, size_t cap)
{
	static const char *const kinds[] = {"values", "keys", "entries"};
	size_t		tl = strlen(target);

	for (int k = 0; k < 3; k++)
	{
		size_t		kl = strlen(kinds[k]);

		if (tl > kl + 2 && strncmp(target, kinds[k], kl) == 0 && target[kl] == '(' &&
			target[tl - 1] == ')' &&
			unquote_name(target + kl + 1, tl - kl - 2, name, cap))
			return kinds[k];
	}
	return NULL;
}

/*
 * load_sai_indexes
 *		Name each column that has a Storage-Attached Index on its values
 *		(target "col" or "\"Col\"", class "sai" or StorageAttachedIndex),
 *		and the indexes on a collection's values, a map's keys and entries
 *		(targets values(c), keys(m), entries(m)); other index classes are
 *		not recorded.  An index on a vector column also gives
 *		its similarity function (ANN search: ORDER BY v ANN OF ?).  A
 *		failure leaves the table without index names (the caller's table
 *		is still good).
 */
static void
load_sai_indexes(cql_conn *c, cql_table_meta *t, const cql_allocator *a)
{
	cql_result	res;
	cql_error	err;

	if (run(c, "SELECT index_name, options FROM system_schema.indexes "
			"WHERE keyspace_name = ? AND table_name = ?",
			t->keyspace, t->name, &res, &err) != CQL_OK)
		return;
	for (int row = 0; res.kind == CQL_RESULT_ROWS && row < res.rows_count; row++)
	{
		char		cls[128],
					target[520],
					name[520];
		int			c_opts = cql_sysrow_col(&res, "options");
		bool		nomem = false;
		char	   *iname;
		size_t		tl;
		const char *coll;

		if (!map_text_value(&res, row, c_opts, "class_name", cls, sizeof(cls)) ||
			!map_text_value(&res, row, c_opts, "target", target, sizeof(target)))
			continue;
		if (strcmp(cls, "sai") != 0 && strstr(cls, "StorageAttachedIndex") == NULL)
			continue;
		tl = strlen(target);
		coll = collection_target(target, name, sizeof(name));
		if (coll != NULL)
		{
			/* values(c), keys(m), entries(m): CONTAINS, CONTAINS KEY, m[k] */
			for (int i = 0; i < t->ncolumns; i++)
			{
				char	  **slot;

				if (strcmp(t->columns[i].name, name) != 0)
					continue;
				slot = strcmp(coll, "values") == 0 ? &t->columns[i].sai_values_index
					: strcmp(coll, "keys") == 0 ? &t->columns[i].sai_keys_index
					: &t->columns[i].sai_entries_index;
				if (*slot == NULL)
					*slot = cql_sysrow_text(a, &res, row, cql_sysrow_col(&res, "index_name"),
											false, &nomem);
			}
			continue;
		}
		if (tl >= 2 && target[0] == '"' && target[tl - 1] == '"')
		{
			size_t		n = 0;

			/* "Col""x" -> Col"x */
			for (size_t i = 1; i + 1 < tl && n + 1 < sizeof(name); i++)
			{
				name[n++] = target[i];
				if (target[i] == '"' && target[i + 1] == '"')
					i++;
			}
			name[n] = '\0';
		}
		else if (strchr(target, '(') == NULL)
			snprintf(name, sizeof(name), "%s", target);
		else
			continue;			/* keys(m), values(s), entries(m), full(l) */
		for (int i = 0; i < t->ncolumns; i++)
		{
			if (strcmp(t->columns[i].name, name) != 0 || t->columns[i].sai_index)
				continue;
			iname = cql_sysrow_text(a, &res, row, cql_sysrow_col(&res, "index_name"),
									false, &nomem);
			t->columns[i].sai_index = iname;
			if (iname && t->columns[i].type && t->columns[i].type->id == CQL_TYPE_VECTOR)
			{
				char		sim[64];

				/* the index's similarity function; COSINE when not given */
				if (!map_text_value(&res, row, c_opts, "similarity_function", sim, sizeof(sim)))
					snprintf(sim, sizeof(sim), "cosine");
				for (char *p = sim; *p; p++)
					if (*p >= 'A' && *p <= 'Z')
						*p = (char) (*p - 'A' + 'a');
				t->columns[i].sai_similarity = cql_strdup(a, sim);
			}
		}
	}
	cql_result_free(&res);
}

cql_status
cql_schema_load_table(cql_conn *c, const char *keyspace, const char *table,
					  const cql_allocator *a, cql_table_meta **out, cql_error *err)
{
	cql_result	res;
	cql_status	st;
	int			home;
	bool		found = false,
				is_view = false,
				is_counter = false;
	cql_udt_meta *udts = NULL;
	int			nudts = 0;
	cql_column_row *rows = NULL;
	int			nrows = 0;
	char	  **strs = NULL;	/* every string of 'rows', for freeing */
	int			nstrs = 0;

	*out = NULL;
	cql_error_clear(err);
	if (!keyspace || !table)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "no keyspace or table given");
		return CQL_ERR_INVALID_ARG;
	}
	if ((st = existing_keyspace_home(c, keyspace, &home, err)) != CQL_OK)
		return st;

	/* a table, or else a materialized view */
	st = run(c, home == 1 ?
			 "SELECT table_name, flags FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?" :
			 "SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = ? AND table_name = ?",
			 keyspace, table, &res, err);
	if (st == CQL_OK && res.kind == CQL_RESULT_ROWS && res.rows_count > 0)
	{
		found = true;
		is_counter = set_contains(&res, 0, cql_sysrow_col(&res, "flags"), "counter");
	}
	cql_result_free(&res);
	if (st != CQL_OK)
		return st;
	if (!found && home == 1)
	{
		st = run(c, "SELECT view_name FROM system_schema.views WHERE keyspace_name = ? AND view_name = ?",
				 keyspace, table, &res, err);
		found = is_view = (st == CQL_OK && res.kind == CQL_RESULT_ROWS && res.rows_count > 0);
		cql_result_free(&res);
		if (st != CQL_OK)
			return st;
	}
	if (!found)
	{
		cql_error_setf(err, CQL_ERR_INVALID_ARG, "table \"%s\".\"%s\" does not exist",
					   keyspace, table);
		return CQL_ERR_INVALID_ARG;
	}

	if ((st = load_udts_home(c, keyspace, home, a, &udts, &nudts, err)) != CQL_OK)
		return st;

	st = run(c, home == 1 ?
			 "SELECT column_name, kind, position, clustering_order, type FROM system_schema.columns "
			 "WHERE keyspace_name = ? AND table_name = ?" :
			 "SELECT column_name, kind, position, clustering_order, type FROM system_virtual_schema.columns "
			 "WHERE keyspace_name = ? AND table_name = ?",
			 keyspace, table, &res, err);
	if (st == CQL_OK)
	{
		int			c_name = cql_sysrow_col(&res, "column_name");
		int			c_kind = cql_sysrow_col(&res, "kind");
		int			c_pos = cql_sysrow_col(&res, "position");
		int			c_ord = cql_sysrow_col(&res, "clustering_order");
		int			c_type = cql_sysrow_col(&res, "type");

		if (res.rows_count > CQL_SCHEMA_MAX_COLUMNS)
		{
			st = CQL_ERR_TOO_LARGE;
			cql_error_setf(err, st, "table \"%s\".\"%s\" has %d columns",
						   keyspace, table, (int) res.rows_count);
		}
		else if (!(rows = cql_alloc0(a, sizeof(*rows) * (size_t) (res.rows_count + 1))) ||
				 !(strs = cql_alloc0(a, sizeof(char *) * (size_t) (4 * res.rows_count + 1))))
		{
			st = CQL_ERR_NOMEM;
			cql_error_setf(err, st, "out of memory");
		}
		for (int row = 0; st == CQL_OK && row < res.rows_count; row++)
		{
			bool		nomem = false;
			cql_column_row *cr = &rows[nrows++];
			const cql_elem *pe = cql_sysrow_cell(&res, row, c_pos);
			int32_t		pos = -1;

			cr->name = strs[nstrs++] = cql_sysrow_text(a, &res, row, c_name, false, &nomem);
			cr->kind = strs[nstrs++] = cql_sysrow_text(a, &res, row, c_kind, false, &nomem);
			cr->clustering_order = strs[nstrs++] = cql_sysrow_text(a, &res, row, c_ord, false, &nomem);
			cr->type = strs[nstrs++] = cql_sysrow_text(a, &res, row, c_type, false, &nomem);
			if (pe && cql_decode_int(pe->p, pe->n, &pos) != CQL_OK)
				pos = INT32_MIN;	/* wrong size: refused below for keys */
			cr->position = pos;
			if (nomem)
			{
				st = CQL_ERR_NOMEM;
				cql_error_setf(err, st, "out of memory");
			}
		}
	}
	cql_result_free(&res);
	if (st == CQL_OK && nrows == 0)
	{
		/* dropped between our two queries */
		st = CQL_ERR_INVALID_ARG;
		cql_error_setf(err, st, "table \"%s\".\"%s\" does not exist", keyspace, table);
	}
	if (st == CQL_OK)
		st = cql_schema_build_table(keyspace, table, rows, nrows, udts, nudts, a, out, err);
	if (st == CQL_OK)
	{
		(*out)->is_view = is_view;
		(*out)->is_counter = is_counter;
		if (home == 1 && !is_view)
		{
			load_sai_indexes(c, *out, a);
			load_column_masks(c, *out, a);
		}
	}
	cql_schema_names_free(strs, nstrs, a);
	cql_free(a, rows);
	cql_schema_udts_free(udts, nudts, a);
	return st;
}

/* ---------------------------------------------------------------------
 * Schema agreement
 * ---------------------------------------------------------------------
 */
/*
 * Collect the distinct schema versions of a result into v (up to 2 kept,
 * all counted in *nv).  Rows of peers that 'counts' rejects, or without a
 * host_id where the result has that column, are left out.
 */
static void
collect_versions(const cql_result *r, cql_schema_peer_filter counts, void *ctx,
				 uint8_t v[2][16], int *nv)
{
	int			col = cql_sysrow_col(r, "schema_version");
	int			idcol = cql_sysrow_col(r, "host_id");

	for (int row = 0; col >= 0 && row < r->rows_count; row++)
	{
		const cql_elem *e = cql_sysrow_cell(r, row, col);
		bool		seen = false;

		if (!e || e->n != 16)
			continue;
		if (idcol >= 0)
		{
			const cql_elem *id = cql_sysrow_cell(r, row, idcol);

			if (!id || id->n != 16)
				continue;
			if (counts && !counts(ctx, id->p))
				continue;
		}
		for (int i = 0; i < *nv && i < 2; i++)
			seen |= memcmp(v[i], e->p, 16) == 0;
		if (!seen)
		{
			if (*nv < 2)
				memcpy(v[*nv], e->p, 16);
			(*nv)++;
		}
	}
}

cql_status
cql_schema_await_agreement(cql_conn *c, int timeout_ms, cql_error *err)
{
	return cql_schema_await_agreement_among(c, timeout_ms, NULL, NULL, err);
}

cql_status
cql_schema_await_agreement_among(cql_conn *c, int timeout_ms,
								 cql_schema_peer_filter counts, void *ctx,
								 cql_error *err)
{
	int64_t		deadline = cql_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	bool		use_v2 = true;

	for (;;)
	{
		cql_result	res;
		cql_status	st;
		uint8_t		v[2][16];
		int			nv = 0;

		st = run(c, "SELECT schema_version FROM system.local WHERE key = 'local'",
				 NULL, NULL, &res, err);
		if (st == CQL_OK)
			collect_versions(&res, NULL, NULL, v, &nv);
		cql_result_free(&res);
		if (st != CQL_OK)
			return st;
		st = run(c, use_v2 ? "SELECT host_id, schema_version FROM system.peers_v2" :
				 "SELECT host_id, schema_version FROM system.peers", NULL, NULL, &res, err);
		if (st == CQL_ERR_SERVER && use_v2)
		{
			cql_result_free(&res);
			use_v2 = false;
			continue;
		}
		if (st == CQL_OK)
			collect_versions(&res, counts, ctx, v, &nv);
		cql_result_free(&res);
		if (st != CQL_OK)
			return st;
		if (nv <= 1)
			return CQL_OK;
		if (cql_now_ms() >= deadline)
		{
			cql_error_setf(err, CQL_ERR_TIMEOUT,
						   "schema versions did not agree within %d ms (%d versions)",
						   timeout_ms, nv);
			return CQL_ERR_TIMEOUT;
		}
		/*
		 * Pause through the connection's wait hook (not a sleep): it is
		 * interruptible, so a query cancel is honoured while we wait.
		 */
		st = cql_conn_pump(c, 200, err);
		if (st != CQL_OK)
			return st;
	}
}

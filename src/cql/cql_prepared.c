/*-------------------------------------------------------------------------
 *
 * cql_prepared.c
 *		Per-connection cache of prepared statements and the bookkeeping of
 *		their ids and result metadata.
 *
 * A prepared id is only valid on the node that issued it, so the cache
 * lives on the connection.  Entries are never freed before the connection
 * closes: callers keep cql_prepared pointers across calls, and results
 * decoded under SKIP_METADATA borrow the cached column array.  When the
 * columns must be replaced (METADATA_CHANGED, full metadata on v4, or a
 * re-prepare), the old array is moved to a "retired" list instead of being
 * freed, for the same reason.  That list only grows with real schema
 * changes, which are rare.
 *
 * IDENTIFICATION
 *		src/cql/cql_prepared.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_conn_int.h"

#include <string.h>

static bool
same_keyspace(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

cql_prepared *
cql_prepared_lookup(cql_conn *c, const char *query)
{
	for (cql_prepared *p = c->prepared; p != NULL; p = p->next)
		if (!p->evicted && strcmp(p->query, query) == 0 &&
			same_keyspace(p->keyspace, c->keyspace))
			return p;
	return NULL;
}

/* Park a column array until the connection closes (see file header). */
static void
retire_columns(cql_conn *c, cql_prepared *p, cql_column *cols, int32_t ncols)
{
	cql_retired_cols *r;

	if (cols == NULL)
		return;
	r = cql_alloc(c->alloc, sizeof(*r));
	if (r == NULL)
	{
		/*
		 * Out of memory: leaking the array is the only safe choice, since
		 * a live result may still point into it.
		 */
		return;
	}
	r->cols = cols;
	r->ncols = ncols;
	r->next = p->retired;
	p->retired = r;
}

static bool
columns_equal(const cql_column *a, int32_t na, const cql_column *b, int32_t nb)
{
	if (na != nb)
		return false;
	for (int32_t i = 0; i < na; i++)
	{
		const char *x = a[i].name ? a[i].name : "";
		const char *y = b[i].name ? b[i].name : "";

		if (strcmp(x, y) != 0)
			return false;
		if ((a[i].type == NULL) != (b[i].type == NULL))
			return false;
		if (a[i].type && !cql_type_equal(a[i].type, b[i].type))
			return false;
	}
	return true;
}

/*
 * cql_prepared_from_result
 *		Fill (or refresh, after a re-prepare) p from a Prepared result,
 *		taking over the result's allocations.
 */
cql_status
cql_prepared_from_result(cql_conn *c, cql_prepared *p, cql_result *res,
						 cql_error *err)
{
	if (res->kind != CQL_RESULT_PREPARED || res->prepared_id == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_MALFORMED, 0,
						   "PREPARE answered with result kind %d", res->kind);
		return CQL_ERR_MALFORMED;
	}

	cql_free(c->alloc, p->id);
	p->id = res->prepared_id;
	p->id_len = res->prepared_id_len;
	res->prepared_id = NULL;

	cql_free(c->alloc, p->result_metadata_id);
	p->result_metadata_id = res->result_metadata_id;
	p->result_metadata_id_len = res->result_metadata_id_len;
	res->result_metadata_id = NULL;

	retire_columns(c, p, p->bind, p->nbind);
	p->bind = res->bind.cols;
	p->nbind = res->bind.ncols;
	res->bind.cols = NULL;
	res->bind.ncols = 0;

	cql_free(c->alloc, p->pk_indexes);
	p->pk_indexes = res->bind.pk_indexes;
	p->npk = res->bind.npk;
	res->bind.pk_indexes = NULL;
	res->bind.npk = 0;

	retire_columns(c, p, p->cols, p->ncols);
	p->cols = NULL;
	p->ncols = 0;
	if (!(res->meta.flags & CQL_ROWS_NO_METADATA) && !res->meta.cols_borrowed)
	{
		p->cols = res->meta.cols;
		p->ncols = res->meta.ncols;
		res->meta.cols = NULL;
		res->meta.ncols = 0;
	}
	return CQL_OK;
}

/*
 * cql_prepared_update_columns
 *		A Rows answer to EXECUTE carried full metadata.  In v5 with
 *		METADATA_CHANGED it also carries the new result metadata id that
 *		later EXECUTEs must send.  In v4 full metadata means the server's
 *		view differs from ours (or the statement always sends it, e.g.
 *		LWT): adopt it only if it really differs.
 */
void
cql_prepared_update_columns(cql_conn *c, cql_prepared *p, cql_result *res)
{
	cql_column *copy = NULL;

	if (res->meta.has_new_metadata_id && res->meta.new_metadata_id)
	{
		uint8_t    *id = cql_alloc(c->alloc, res->meta.new_metadata_id_len
								   ? res->meta.new_metadata_id_len : 1);

		if (id != NULL)
		{
			memcpy(id, res->meta.new_metadata_id, res->meta.new_metadata_id_len);
			cql_free(c->alloc, p->result_metadata_id);
			p->result_metadata_id = id;
			p->result_metadata_id_len = res->meta.new_metadata_id_len;
		}
	}
	if (res->meta.cols == NULL ||
		columns_equal(p->cols, p->ncols, res->meta.cols, res->meta.ncols))
		return;
	if (cql_columns_copy(res->meta.cols, res->meta.ncols, c->alloc, &copy) != CQL_OK)
		return;					/* keep the old cache; next answer retries */
	retire_columns(c, p, p->cols, p->ncols);
	p->cols = copy;
	p->ncols = res->meta.ncols;
	p->metadata_changes++;
}

static void
prepared_free(cql_conn *c, cql_prepared *p)
{
	const cql_allocator *a = c->alloc;

	while (p->retired)
	{
		cql_retired_cols *r = p->retired;

		p->retired = r->next;
		cql_columns_free(r->cols, r->ncols, a);
		cql_free(a, r);
	}
	cql_free(a, p->query);
	cql_free(a, p->keyspace);
	cql_free(a, p->id);
	cql_free(a, p->result_metadata_id);
	cql_columns_free(p->bind, p->nbind, a);
	cql_free(a, p->pk_indexes);
	cql_columns_free(p->cols, p->ncols, a);
	cql_free(a, p);
}

void
cql_prepared_cache_clear(cql_conn *c)
{
	for (cql_prepared *p = c->prepared; p != NULL; p = p->next)
		p->evicted = true;
}

void
cql_prepared_free_all(cql_conn *c)
{
	while (c->prepared)
	{
		cql_prepared *p = c->prepared;

		c->prepared = p->next;
		prepared_free(c, p);
	}
}

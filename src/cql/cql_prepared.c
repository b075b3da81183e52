/*-------------------------------------------------------------------------
 *
 * cql_prepared.c
 *		Per-connection cache of prepared statements and the bookkeeping of
 *		their ids and result metadata.
 *
 * A prepared id is only valid on the node that issued it, so the cache
 * lives on the connection.  Entries are never freed behind the caller's
 * back: callers keep cql_prepared pointers across calls, and results
 * decoded under SKIP_METADATA borrow the cached column array.  When the
 * columns must be replaced (METADATA_CHANGED, full metadata on v4, or a
 * re-prepare), the old array is moved to a "retired" list instead of being
 * freed, for the same reason.  The caller bounds both by calling
 * cql_conn_trim_prepared() when it knows nothing is in use (see the
 * contract in cql_conn.h); between trims a statement's retired list is
 * capped (CQL_PREPARED_MAX_RETIRED), since a hostile server could
 * otherwise flip the metadata on every page.
 *
 * layer: session
 *
 * IDENTIFICATION
 *		src/cql/cql_prepared.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_session_int.h"

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

/*
 * cql_prepared_touch
 *		Stamp p as just used, for least-recently-used trimming.
 */
void
cql_prepared_touch(cql_conn *c, cql_prepared *p)
{
	p->last_used = ++c->prepared_clock;
}

/* Park a column array until the connection closes or is trimmed (see
 * file header). */
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
	p->nretired++;
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
	/* a re-prepare retires two arrays; refuse to grow without bound */
	if (p->nretired + 2 > CQL_PREPARED_MAX_RETIRED)
	{
		cql_conn_set_error(c, err, CQL_ERR_TOO_LARGE, 0,
						   "prepared statement was re-prepared too often on %s "
						   "(%d column arrays kept); trim the prepared-statement "
						   "cache or reconnect",
						   c->peer, p->nretired);
		return CQL_ERR_TOO_LARGE;
	}

	/*
	 * The id is a hash of the text and keyspace and normally comes back
	 * the same: keep our copy then, so that BATCH statements and requests
	 * that point at it (cql_batch_stmt_prepared) stay valid.
	 */
	if (p->id == NULL || p->id_len != res->prepared_id_len ||
		memcmp(p->id, res->prepared_id, p->id_len) != 0)
	{
		cql_free(c->alloc, p->id);
		p->id = res->prepared_id;
		p->id_len = res->prepared_id_len;
		res->prepared_id = NULL;
	}

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

	/*
	 * Too many flips since the last trim: keep the old cache and the old
	 * metadata id, which goes with it, so the server keeps sending full
	 * metadata and every result still decodes with its own columns.
	 */
	if (p->nretired >= CQL_PREPARED_MAX_RETIRED)
		return;
	if (res->meta.ncols > 0 && res->meta.cols == NULL)
		return;					/* nothing to adopt */

	/*
	 * Columns first, then the id that names them: an id adopted without
	 * its columns would make the server skip metadata we do not have.
	 * Zero columns are adopted too (the cache then asks for full metadata
	 * again), so the cache never describes more columns than the server.
	 */
	if (!columns_equal(p->cols, p->ncols, res->meta.cols, res->meta.ncols))
	{
		if (res->meta.ncols > 0 &&
			cql_columns_copy(res->meta.cols, res->meta.ncols, c->alloc, &copy) != CQL_OK)
			return;				/* keep the old cache; next answer retries */
		retire_columns(c, p, p->cols, p->ncols);
		p->cols = copy;
		p->ncols = copy ? res->meta.ncols : 0;
		p->metadata_changes++;
	}
	if (res->meta.has_new_metadata_id && res->meta.new_metadata_id)
	{
		uint8_t    *id = cql_alloc(c->alloc, res->meta.new_metadata_id_len
								   ? res->meta.new_metadata_id_len : 1);

		/* on failure the old id makes the server send metadata again */
		if (id != NULL)
		{
			memcpy(id, res->meta.new_metadata_id, res->meta.new_metadata_id_len);
			cql_free(c->alloc, p->result_metadata_id);
			p->result_metadata_id = id;
			p->result_metadata_id_len = res->meta.new_metadata_id_len;
		}
	}
}

static void
free_retired(cql_conn *c, cql_prepared *p)
{
	while (p->retired)
	{
		cql_retired_cols *r = p->retired;

		p->retired = r->next;
		cql_columns_free(r->cols, r->ncols, c->alloc);
		cql_free(c->alloc, r);
	}
	p->nretired = 0;
}

static void
prepared_free(cql_conn *c, cql_prepared *p)
{
	const cql_allocator *a = c->alloc;

	free_retired(c, p);
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

/* Is p the statement of a request still waiting for its answer? */
static bool
prepared_in_flight(const cql_conn *c, const cql_prepared *p)
{
	if (c->in_flight == 0 || c->streams == NULL)
		return false;
	for (int i = 0; i < c->max_in_flight; i++)
	{
		const cql_request *req = c->streams[i];

		if (req && req->prepared == p)
			return true;
	}
	return false;
}

/*
 * cql_conn_trim_prepared
 *		Free dropped statements, retired column arrays and the least
 *		recently used statements beyond max_entries.  Safe only under the
 *		contract in cql_conn.h; statements of requests in flight are kept
 *		whole.
 */
int
cql_conn_trim_prepared(cql_conn *c, int max_entries)
{
	cql_prepared **pp;
	int			freed = 0;
	int			cached = 0;

	if (c == NULL)
		return 0;
	if (max_entries < 0)
		max_entries = 0;

	/* dropped statements go; the others lose their retired columns */
	pp = &c->prepared;
	while (*pp)
	{
		cql_prepared *p = *pp;

		if (prepared_in_flight(c, p))
		{
			pp = &p->next;
			if (!p->evicted)
				cached++;
			continue;
		}
		if (p->evicted)
		{
			*pp = p->next;
			prepared_free(c, p);
			freed++;
			continue;
		}
		free_retired(c, p);
		cached++;
		pp = &p->next;
	}

	/* then the least recently used, until max_entries remain */
	while (cached > max_entries)
	{
		cql_prepared **victim = NULL;

		for (pp = &c->prepared; *pp; pp = &(*pp)->next)
		{
			if ((*pp)->evicted || prepared_in_flight(c, *pp))
				continue;
			if (victim == NULL || (*pp)->last_used < (*victim)->last_used)
				victim = pp;
		}
		if (victim == NULL)
			break;				/* the rest are in flight */
		{
			cql_prepared *p = *victim;

			*victim = p->next;
			prepared_free(c, p);
		}
		freed++;
		cached--;
	}
	return freed;
}

int
cql_conn_prepared_count(const cql_conn *c)
{
	int			n = 0;

	for (const cql_prepared *p = c ? c->prepared : NULL; p != NULL; p = p->next)
		n++;
	return n;
}

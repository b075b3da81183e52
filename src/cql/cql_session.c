/*-------------------------------------------------------------------------
 *
 * cql_session.c
 *		Typed request senders (QUERY, PREPARE, EXECUTE, BATCH) and the
 *		synchronous helpers built on them: query, prepare, execute with
 *		transparent re-prepare, batch, and paging.
 *
 * The synchronous helpers are "submit + await + free": if the await ends
 * early (timeout, interrupt) the request is orphaned by cql_request_free,
 * so the connection stays usable and the late answer is discarded.
 *
 * layer: session
 *
 * IDENTIFICATION
 *		src/cql/cql_session.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_session_int.h"

#include <string.h>

static const cql_query_params *
params_or_default(const cql_query_params *params, cql_query_params *dflt)
{
	if (params)
		return params;
	cql_query_params_init(dflt);
	return dflt;
}

/* Submit a body built into b (which is freed). */
static cql_status
submit_built(cql_conn *c, uint8_t opcode, cql_buf *b, cql_status build_st,
			 cql_request **req, cql_error *err)
{
	cql_status	st = build_st;

	if (st == CQL_OK)
		st = cql_buf_status(b);
	if (st != CQL_OK)
	{
		cql_conn_set_error(c, err, st, 0, "could not build %s request: %s",
						   cql_opcode_name(opcode), cql_status_message(st));
		cql_buf_free(b);
		return st;
	}
	st = cql_conn_submit_internal(c, opcode, b->data, b->len, false, req, err);
	cql_buf_free(b);
	return st;
}

static cql_status
check_ready(cql_conn *c, cql_request **req, cql_error *err)
{
	if (req)
		*req = NULL;
	if (err)
		cql_error_clear(err);
	return cql_conn_check(c, err);
}

/* check_ready, and a statement's text must be given */
static cql_status
check_query_ready(cql_conn *c, const char *query, cql_request **req, cql_error *err)
{
	cql_status	st;

	if ((st = check_ready(c, req, err)) != CQL_OK)
		return st;
	if (query == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_INVALID_ARG, 0, "no query text");
		return CQL_ERR_INVALID_ARG;
	}
	return CQL_OK;
}

cql_status
cql_send_query(cql_conn *c, const char *query, const cql_query_params *params,
			   cql_request **req, cql_error *err)
{
	cql_query_params dflt;
	cql_buf		b;
	cql_status	st;

	if ((st = check_query_ready(c, query, req, err)) != CQL_OK)
		return st;
	cql_buf_init(&b, c->alloc);
	st = cql_write_query(&b, c->version, query, params_or_default(params, &dflt));
	return submit_built(c, CQL_OP_QUERY, &b, st, req, err);
}

cql_status
cql_send_prepare(cql_conn *c, const char *query, cql_request **req, cql_error *err)
{
	cql_buf		b;
	cql_status	st;

	if ((st = check_query_ready(c, query, req, err)) != CQL_OK)
		return st;
	cql_buf_init(&b, c->alloc);
	st = cql_write_prepare(&b, c->version, query, NULL);
	return submit_built(c, CQL_OP_PREPARE, &b, st, req, err);
}

cql_status
cql_send_execute(cql_conn *c, cql_prepared *p, const cql_query_params *params,
				 cql_request **req, cql_error *err)
{
	cql_query_params dflt;
	cql_query_params prm;
	cql_buf		b;
	cql_status	st;
	uint8_t    *tail = NULL;
	size_t		tail_len = 0;

	if ((st = check_ready(c, req, err)) != CQL_OK)
		return st;
	if (p == NULL || p->id == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_INVALID_ARG, 0, "no prepared statement");
		return CQL_ERR_INVALID_ARG;
	}
	prm = *params_or_default(params, &dflt);

	/*
	 * With result columns cached, ask the server to leave them out.  v5
	 * tells us through METADATA_CHANGED when our copy is stale (the id we
	 * send identifies it); v4 silently sends full metadata instead, which
	 * the decoder notices (no NO_METADATA flag).
	 */
	prm.skip_metadata = p->ncols > 0 && p->cols != NULL;

	cql_buf_init(&b, c->alloc);
	st = cql_write_execute(&b, c->version, p->id, p->id_len,
						   p->result_metadata_id ? p->result_metadata_id : (const uint8_t *) "",
						   p->result_metadata_id_len, &prm);

	/*
	 * Keep the parameters (the body after the ids) so that an Unprepared
	 * answer can be retried with fresh ids (see retry_reprepared).
	 */
	if (st == CQL_OK && cql_buf_status(&b) == CQL_OK)
	{
		size_t		ids = 2 + (size_t) p->id_len +
			(c->version >= CQL_PROTOCOL_V5 ? 2 + (size_t) p->result_metadata_id_len : 0);

		if (ids <= b.len)
		{
			tail_len = b.len - ids;
			tail = cql_alloc(c->alloc, tail_len ? tail_len : 1);
			if (tail)
				memcpy(tail, b.data + ids, tail_len);
		}
	}
	st = submit_built(c, CQL_OP_EXECUTE, &b, st, req, err);
	if (st == CQL_OK)
	{
		cql_prepared_touch(c, p);
		(*req)->prepared = p;
		(*req)->cached_cols = prm.skip_metadata ? p->cols : NULL;
		(*req)->ncached = prm.skip_metadata ? p->ncols : 0;
		(*req)->exec_params = tail;
		(*req)->exec_params_len = tail_len;
	}
	else
		cql_free(c->alloc, tail);
	return st;
}

/*
 * submit_batch
 *		Submit a built BATCH (status st of building it) and keep a copy of
 *		its body on the request: an Unprepared answer is recovered by
 *		resending it after re-preparing (retry_reprepared).
 */
static cql_status
submit_batch(cql_conn *c, cql_buf *b, cql_status st, cql_request **req, cql_error *err)
{
	uint8_t    *body = NULL;
	size_t		body_len = 0;

	if (st == CQL_OK && cql_buf_status(b) == CQL_OK)
	{
		body_len = b->len;
		body = cql_alloc(c->alloc, body_len ? body_len : 1);
		if (body)
			memcpy(body, b->data, body_len);
	}
	st = submit_built(c, CQL_OP_BATCH, b, st, req, err);
	if (st == CQL_OK)
	{
		(*req)->exec_params = body;
		(*req)->exec_params_len = body ? body_len : 0;
	}
	else
		cql_free(c->alloc, body);
	return st;
}

cql_status
cql_send_batch(cql_conn *c, uint8_t batch_type, const cql_batch_stmt *stmts,
			   int nstmts, const cql_query_params *params,
			   cql_request **req, cql_error *err)
{
	cql_query_params dflt;
	cql_buf		b;
	cql_status	st;

	if ((st = check_ready(c, req, err)) != CQL_OK)
		return st;
	cql_buf_init(&b, c->alloc);
	st = cql_write_batch(&b, c->version, batch_type, stmts, nstmts,
						 params_or_default(params, &dflt));
	return submit_batch(c, &b, st, req, err);
}

cql_status
cql_send_prepared_batch(cql_conn *c, uint8_t batch_type, cql_prepared *p,
						const cql_value_ref *const *rows, int nrows, int nvalues,
						const cql_query_params *params, cql_request **req,
						cql_error *err)
{
	cql_query_params dflt;
	cql_batch_stmt *stmts;
	cql_buf		b;
	cql_status	st;

	if ((st = check_ready(c, req, err)) != CQL_OK)
		return st;
	if (p == NULL || p->id == NULL || nrows <= 0 || nrows > 0xFFFF || rows == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_INVALID_ARG, 0,
						   "a prepared batch needs a prepared statement and 1 to 65535 rows");
		return CQL_ERR_INVALID_ARG;
	}
	stmts = cql_alloc(c->alloc, sizeof(cql_batch_stmt) * (size_t) nrows);
	if (stmts == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_NOMEM, 0, "out of memory");
		return CQL_ERR_NOMEM;
	}
	for (int i = 0; i < nrows; i++)
		cql_batch_stmt_prepared(&stmts[i], p, rows[i], nvalues);

	cql_buf_init(&b, c->alloc);
	st = cql_write_batch(&b, c->version, batch_type, stmts, nrows,
						 params_or_default(params, &dflt));
	cql_free(c->alloc, stmts);

	st = submit_batch(c, &b, st, req, err);
	if (st == CQL_OK)
	{
		cql_prepared_touch(c, p);
		(*req)->prepared = p;
	}
	return st;
}

/* ---------------------------------------------------------------------
 * Completion: result metadata and Unprepared recovery
 *
 * The transport (cql_conn.c) only waits for and decodes answers
 * (cql_conn_complete); what an answer means for the prepared-statement
 * cache is decided here, in the one place that recovers from Unprepared.
 * ---------------------------------------------------------------------
 */

/*
 * apply_rows_metadata
 *		An EXECUTE answered with full metadata (v4 metadata drift, or v5
 *		METADATA_CHANGED): make it the prepared statement's cache.
 *
 * Whatever is or is not adopted here, the result itself was decoded with
 * the columns it carries (or, under NO_METADATA, with cached columns of
 * the same count): meta.ncols is always the number of cells per row.
 * Callers reading by their own column count check it with
 * cql_result_has_columns().
 */
static void
apply_rows_metadata(cql_conn *c, cql_prepared *p, int version, cql_result *res)
{
	if (res->kind != CQL_RESULT_ROWS || p == NULL)
		return;
	if (res->meta.flags & CQL_ROWS_NO_METADATA)
		return;

	/*
	 * Conditional (LWT) statements always come with full metadata whose
	 * shape depends on whether they applied; that says nothing about the
	 * statement's result columns, and adopting it would flip the cache
	 * back and forth.  In v5 the server tells us explicitly when the
	 * columns changed; in v4 full metadata that differs from the cache
	 * is the only signal.
	 */
	if (res->meta.ncols > 0 && res->meta.cols && res->meta.cols[0].name &&
		strcmp(res->meta.cols[0].name, "[applied]") == 0)
		return;
	if (version >= CQL_PROTOCOL_V5 && !(res->meta.flags & CQL_ROWS_METADATA_CHANGED))
		return;
	cql_prepared_update_columns(c, p, res);
}

/* The cached statement whose id the server reported as unknown. */
static cql_prepared *
find_by_id(cql_conn *c, const cql_error *err)
{
	size_t		n = err->unprepared_id_len;

	if (n == 0 || n > sizeof(err->unprepared_id))
		return NULL;
	for (cql_prepared *p = c->prepared; p != NULL; p = p->next)
		if (p->id_len == n && memcmp(p->id, err->unprepared_id, n) == 0)
			return p;
	return NULL;
}

/* Did the node answer that it does not know the statement? */
static bool
is_unprepared(cql_status st, const cql_error *err)
{
	return st == CQL_ERR_SERVER && err->code == CQL_ERRCODE_UNPREPARED;
}

/*
 * needs_reprepare
 *		Is req's failure one that preparing the statement again repairs?
 *		The node answered Unprepared (it restarted, evicted the statement,
 *		or dropped it on ALTER TABLE), or - protocol v4 - an EXECUTE that
 *		skipped result metadata got rows whose columns no longer match the
 *		cache (the table changed behind our back).
 */
static bool
needs_reprepare(cql_status st, const cql_error *err, const cql_request *req)
{
	return is_unprepared(st, err) ||
		(st == CQL_ERR_MALFORMED && req->stale_metadata && req->opcode == CQL_OP_EXECUTE);
}

/*
 * retry_reprepared
 *		Recover req from a failure needs_reprepare() accepts: prepare the
 *		statement again and resend the same request once, under the
 *		caller's request handle, so that every caller - also one that
 *		pipelines many requests - recovers without knowing.  This is the one
 *		place that does it, for EXECUTE, prepared BATCH and any BATCH with
 *		prepared statements (whose forgotten statement is found by the id
 *		the node reports).
 *
 * An EXECUTE is rebuilt with the new ids (a changed table may change the
 * result metadata id; the statement id is a hash of the text and
 * keyspace).  A BATCH is resent as it was, which needs the statement id
 * unchanged: otherwise the node's answer stands.
 */
static cql_status
retry_reprepared(cql_conn *c, cql_request *req, cql_error *err)
{
	cql_prepared *p = req->prepared;
	cql_buf		nb;
	cql_status	st;

	if ((req->opcode != CQL_OP_EXECUTE && req->opcode != CQL_OP_BATCH) ||
		req->exec_params == NULL || req->reprepared)
		return CQL_ERR_STATE;

	if (req->opcode == CQL_OP_BATCH)
	{
		uint8_t		old_id[sizeof(err->unprepared_id)];
		size_t		old_len = err->unprepared_id_len;

		if (old_len == 0 || old_len > sizeof(old_id))
			return CQL_ERR_STATE;
		memcpy(old_id, err->unprepared_id, old_len);
		if (p == NULL || p->id_len != old_len || memcmp(p->id, old_id, old_len) != 0)
			p = find_by_id(c, err);
		if (p == NULL)
			return CQL_ERR_STATE;
		if ((st = cql_reprepare(c, p, err)) != CQL_OK)
			return st;
		if (p->id_len != old_len || memcmp(p->id, old_id, old_len) != 0)
			return CQL_ERR_STATE;
		st = cql_conn_resubmit(c, req, req->exec_params, req->exec_params_len, err);
		if (st != CQL_OK)
			return st;
	}
	else
	{
		if (p == NULL)
			return CQL_ERR_STATE;
		if ((st = cql_reprepare(c, p, err)) != CQL_OK)
			return st;
		cql_buf_init(&nb, c->alloc);
		cql_buf_short_bytes(&nb, p->id, p->id_len);
		if (c->version >= CQL_PROTOCOL_V5)
			cql_buf_short_bytes(&nb, p->result_metadata_id ? p->result_metadata_id : (const uint8_t *) "",
								p->result_metadata_id_len);
		cql_buf_put(&nb, req->exec_params, req->exec_params_len);
		if ((st = cql_buf_status(&nb)) == CQL_OK)
			st = cql_conn_resubmit(c, req, nb.data, nb.len, err);
		cql_buf_free(&nb);
		if (st != CQL_OK)
			return st;
		req->cached_cols = p->ncols > 0 ? p->cols : NULL;
		req->ncached = p->ncols > 0 ? p->ncols : 0;
	}
	req->stale_metadata = false;
	req->reprepared = true;
	if (err)
		cql_error_clear(err);
	return CQL_OK;
}

/*
 * cql_conn_await (declared in cql_conn.h)
 *		Wait for and decode req's answer; a full-metadata answer to EXECUTE
 *		updates the statement's cached columns, and an Unprepared answer (or
 *		v4 stale result metadata) is recovered once (retry_reprepared).
 */
cql_status
cql_conn_await(cql_conn *c, cql_request *req, cql_result *res, cql_error *err)
{
	cql_result	tmp;
	cql_result *r = res ? res : &tmp;
	cql_error	local;
	cql_error  *e = err ? err : &local;
	cql_status	st;

	for (;;)
	{
		/* into 'e' even without a caller's err: the code is needed */
		st = cql_conn_complete(c, req, r, e);
		if (st == CQL_OK)
		{
			if (req->opcode == CQL_OP_EXECUTE)
				apply_rows_metadata(c, req->prepared, req->resp_version, r);
			if (r == &tmp)
				cql_result_free(&tmp);
			return CQL_OK;
		}
		if (!needs_reprepare(st, e, req) || retry_reprepared(c, req, e) != CQL_OK)
			return st;
	}
}

/* ---------------------------------------------------------------------
 * Connecting: the transport's handshake, then the initial USE
 * ---------------------------------------------------------------------
 */
/*
 * quote_identifier
 *		Keyspace names as given are exact names: quote unless they are
 *		already a lower-case unquoted identifier.
 */
static void
quote_identifier(cql_buf *b, const char *name)
{
	bool		plain = (name[0] >= 'a' && name[0] <= 'z');

	for (const char *p = name; *p && plain; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			plain = false;
	if (plain)
	{
		cql_buf_put(b, name, strlen(name));
		return;
	}
	cql_buf_u8(b, '"');
	for (const char *p = name; *p; p++)
	{
		if (*p == '"')
			cql_buf_u8(b, '"');
		cql_buf_u8(b, (uint8_t) *p);
	}
	cql_buf_u8(b, '"');
}

cql_status
cql_connect(const cql_conn_options *o, cql_conn **out, cql_error *err)
{
	cql_conn   *c = NULL;
	cql_status	st;
	cql_error	tmp;

	if (err == NULL)
		err = &tmp;
	cql_error_clear(err);
	*out = NULL;
	if ((st = cql_conn_open(o, &c, err)) != CQL_OK)
		return st;
	if (c->keyspace)
	{
		cql_buf		q;
		cql_result	res;

		cql_buf_init(&q, c->alloc);
		cql_buf_put(&q, "USE ", 4);
		quote_identifier(&q, c->keyspace);
		cql_buf_u8(&q, '\0');
		st = cql_buf_status(&q);
		if (st == CQL_OK)
			st = cql_query(c, (const char *) q.data, NULL, &res, err);
		if (st == CQL_OK)
			cql_result_free(&res);
		cql_buf_free(&q);
	}
	if (st != CQL_OK)
	{
		cql_conn_abandon(c, err);
		return st;
	}
	*out = c;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * Synchronous helpers
 * ---------------------------------------------------------------------
 */

/* Await, then free (orphaning it if unfinished) the request. */
static cql_status
finish(cql_conn *c, cql_request *req, cql_result *res, cql_error *err)
{
	cql_status	st = cql_conn_await(c, req, res, err);

	cql_request_free(req);
	return st;
}

static void
remember_keyspace(cql_conn *c, const cql_result *res)
{
	char	   *ks;

	if (res->kind != CQL_RESULT_SET_KEYSPACE || res->keyspace == NULL)
		return;
	ks = cql_strdup(c->alloc, res->keyspace);
	if (ks == NULL)
		return;
	cql_free(c->alloc, c->keyspace);
	c->keyspace = ks;
}

/*
 * finish_sync
 *		The end of a synchronous QUERY or EXECUTE whose send returned
 *		'sent': the answer awaited into *res (dropped when res is NULL;
 *		*res is zeroed also when the send failed), and with use_keyspace the
 *		keyspace a USE chose remembered for the connection.
 */
static cql_status
finish_sync(cql_conn *c, cql_status sent, cql_request *req, cql_result *res,
			cql_error *err, bool use_keyspace)
{
	cql_result	tmp;
	cql_result *r = res ? res : &tmp;
	cql_status	st;

	memset(r, 0, sizeof(*r));
	if (sent != CQL_OK)
		return sent;
	st = finish(c, req, r, err);
	if (st == CQL_OK && use_keyspace)
		remember_keyspace(c, r);
	if (r == &tmp)
		cql_result_free(&tmp);
	return st;
}

cql_status
cql_query(cql_conn *c, const char *query, const cql_query_params *params,
		  cql_result *res, cql_error *err)
{
	cql_request *req = NULL;
	cql_status	st = cql_send_query(c, query, params, &req, err);

	return finish_sync(c, st, req, res, err, true);
}

/* PREPARE p->query and (re)fill p. */
static cql_status
do_prepare(cql_conn *c, cql_prepared *p, cql_error *err)
{
	cql_request *req;
	cql_result	res;
	cql_status	st;

	memset(&res, 0, sizeof(res));
	st = cql_send_prepare(c, p->query, &req, err);
	if (st != CQL_OK)
		return st;
	st = finish(c, req, &res, err);
	if (st == CQL_OK)
		st = cql_prepared_from_result(c, p, &res, err);
	cql_result_free(&res);
	return st;
}

cql_status
cql_prepare(cql_conn *c, const char *query, cql_prepared **out, cql_error *err)
{
	cql_prepared *p;
	cql_status	st;

	*out = NULL;
	if (err)
		cql_error_clear(err);
	if ((st = cql_conn_check(c, err)) != CQL_OK)
		return st;
	if (query == NULL)
	{
		cql_conn_set_error(c, err, CQL_ERR_INVALID_ARG, 0, "no query text");
		return CQL_ERR_INVALID_ARG;
	}
	if ((p = cql_prepared_lookup(c, query)) != NULL)
	{
		cql_prepared_touch(c, p);
		*out = p;
		return CQL_OK;
	}
	p = cql_alloc0(c->alloc, sizeof(*p));
	if (p == NULL || (p->query = cql_strdup(c->alloc, query)) == NULL ||
		(c->keyspace && (p->keyspace = cql_strdup(c->alloc, c->keyspace)) == NULL))
	{
		if (p)
		{
			cql_free(c->alloc, p->query);
			cql_free(c->alloc, p->keyspace);
		}
		cql_free(c->alloc, p);
		cql_conn_set_error(c, err, CQL_ERR_NOMEM, 0, "out of memory");
		return CQL_ERR_NOMEM;
	}
	st = do_prepare(c, p, err);
	if (st != CQL_OK)
	{
		cql_free(c->alloc, p->query);
		cql_free(c->alloc, p->keyspace);
		cql_free(c->alloc, p->id);
		cql_free(c->alloc, p->result_metadata_id);
		cql_columns_free(p->bind, p->nbind, c->alloc);
		cql_free(c->alloc, p->pk_indexes);
		cql_columns_free(p->cols, p->ncols, c->alloc);
		cql_free(c->alloc, p);
		return st;
	}
	p->next = c->prepared;
	c->prepared = p;
	c->release_session = cql_prepared_free_all;	/* the cache dies with c */
	cql_prepared_touch(c, p);
	*out = p;
	return CQL_OK;
}

cql_status
cql_reprepare(cql_conn *c, cql_prepared *p, cql_error *err)
{
	cql_status	st;

	if (err)
		cql_error_clear(err);
	if ((st = cql_conn_check(c, err)) != CQL_OK)
		return st;
	st = do_prepare(c, p, err);
	if (st == CQL_OK)
		p->reprepares++;
	return st;
}

cql_status
cql_execute(cql_conn *c, cql_prepared *p, const cql_query_params *params,
			cql_result *res, cql_error *err)
{
	cql_request *req = NULL;
	cql_status	st = cql_send_execute(c, p, params, &req, err);

	/* a forgotten statement or stale columns: recovered inside the await */
	return finish_sync(c, st, req, res, err, false);
}

void
cql_batch_stmt_prepared(cql_batch_stmt *s, const cql_prepared *p,
						const cql_value_ref *values, int nvalues)
{
	memset(s, 0, sizeof(*s));
	s->id = p->id;
	s->id_len = p->id_len;
	s->values = values;
	s->nvalues = nvalues;
}

void
cql_batch_stmt_query(cql_batch_stmt *s, const char *query,
					 const cql_value_ref *values, int nvalues)
{
	memset(s, 0, sizeof(*s));
	s->query = query;
	s->values = values;
	s->nvalues = nvalues;
}

cql_status
cql_batch(cql_conn *c, uint8_t batch_type, const cql_batch_stmt *stmts,
		  int nstmts, const cql_query_params *params,
		  cql_result *res, cql_error *err)
{
	cql_result	tmp;
	cql_result *r = res ? res : &tmp;
	cql_request *req;
	cql_status	st;

	memset(r, 0, sizeof(*r));
	st = cql_send_batch(c, batch_type, stmts, nstmts, params, &req, err);
	if (st != CQL_OK)
		return st;
	/* a forgotten prepared statement: recovered inside the await */
	st = finish(c, req, r, err);
	if (st == CQL_OK && r == &tmp)
		cql_result_free(&tmp);
	return st;
}

/* ---------------------------------------------------------------------
 * Paging
 * ---------------------------------------------------------------------
 */
void
cql_pager_init(cql_pager *pg, cql_conn *c, const char *query,
			   cql_prepared *prepared, const cql_query_params *params)
{
	memset(pg, 0, sizeof(*pg));
	pg->conn = c;
	pg->query = query;
	pg->prepared = prepared;
	if (params)
		pg->params = *params;
	else
		cql_query_params_init(&pg->params);
	/* the pager owns the paging state; a caller-supplied one starts it */
	pg->params.paging_state = NULL;
	pg->params.paging_state_len = 0;
	if (params && params->paging_state && params->paging_state_len > 0)
	{
		pg->state = cql_alloc(cql_conn_allocator(c), (size_t) params->paging_state_len);
		if (pg->state)
		{
			memcpy(pg->state, params->paging_state, (size_t) params->paging_state_len);
			pg->state_len = params->paging_state_len;
		}
	}
}

cql_status
cql_pager_next(cql_pager *pg, cql_result *page, cql_error *err)
{
	cql_query_params prm = pg->params;
	cql_conn   *c = pg->conn;
	cql_status	st;

	memset(page, 0, sizeof(*page));
	if (pg->done)
	{
		if (err)
		{
			cql_conn_set_error(c, err, CQL_ERR_STATE, 0, "no more pages");
		}
		return CQL_ERR_STATE;
	}
	if (pg->state)
	{
		prm.paging_state = pg->state;
		prm.paging_state_len = pg->state_len;
	}
	if (pg->prepared)
		st = cql_execute(c, pg->prepared, &prm, page, err);
	else
		st = cql_query(c, pg->query, &prm, page, err);
	if (st != CQL_OK)
		return st;

	pg->pages++;
	if (page->kind == CQL_RESULT_ROWS)
		pg->rows += page->rows_count;
	cql_free(c->alloc, pg->state);
	pg->state = NULL;
	pg->state_len = 0;
	if (cql_result_has_more_pages(page) && page->meta.paging_state_len > 0)
	{
		pg->state = cql_alloc(c->alloc, (size_t) page->meta.paging_state_len);
		if (pg->state == NULL)
		{
			cql_result_free(page);
			cql_conn_set_error(c, err, CQL_ERR_NOMEM, 0, "out of memory");
			return CQL_ERR_NOMEM;
		}
		memcpy(pg->state, page->meta.paging_state, (size_t) page->meta.paging_state_len);
		pg->state_len = page->meta.paging_state_len;
	}
	else
		pg->done = true;
	return CQL_OK;
}

void
cql_pager_free(cql_pager *pg)
{
	if (pg->conn)
		cql_free(cql_conn_allocator(pg->conn), pg->state);
	pg->state = NULL;
	pg->state_len = 0;
}

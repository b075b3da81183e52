/*-------------------------------------------------------------------------
 *
 * cql_retry.c
 *		The retry policy: may a failed request be sent again, and where?
 *
 * The rules are the DataStax drivers' (DefaultRetryPolicy of the Java
 * driver 4, the C/C++ driver's default policy), with idempotence deciding
 * everything that may have reached a replica:
 *
 *	never sent (connect refused, no stream):	handled by routing, any request
 *	connection lost / reset / no answer in time:	next host, idempotent only
 *	Unavailable:					next host, once (the coordinator's view of
 *									the ring may be stale)
 *	Overloaded, IsBootstrapping, Server_error, Truncate_error:
 *									next host, idempotent only
 *	Read_timeout:	enough replicas answered but the data did not arrive:
 *					the same host, once (the drivers' rule); otherwise the
 *					next host, idempotent reads only (a coordinator still
 *					waiting on a dead replica: another one may not be)
 *	Write_timeout:	BATCH_LOG: the same host (the batch log replays it);
 *					SIMPLE / UNLOGGED_BATCH of an idempotent write: next
 *					host; CAS, COUNTER, CDC, VIEW: never
 *	Read_failure, Write_failure, syntax, invalid, unauthorized, ...: never
 *
 * Idempotent means: a read, or a write whose replay changes nothing (an
 * upsert or delete carrying the client's write timestamp).  Counter
 * updates, lightweight transactions (IF ...) and list appends are not, and
 * are never replayed.  The caller decides that and bounds the tries and
 * the total time.
 *
 * layer: session
 *
 * IDENTIFICATION
 *		src/cql/cql_retry.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_session_int.h"

#include <string.h>

/*
 * cql_retry_decide
 *		The decision for a request that failed with st / err after 'tries'
 *		earlier retries of it.
 */
cql_retry_decision
cql_retry_decide(cql_status st, const cql_error *err, bool idempotent, int tries)
{
	switch (st)
	{
		case CQL_OK:
		case CQL_ERR_INTERRUPTED:	/* the caller's own cancel */
			return CQL_RETRY_NO;
		case CQL_ERR_IO:
		case CQL_ERR_CLOSED:
		case CQL_ERR_STATE:
		case CQL_ERR_TIMEOUT:
			/* it may have been applied: only if replaying is harmless */
			return idempotent ? CQL_RETRY_NEXT_HOST : CQL_RETRY_NO;
		case CQL_ERR_CONNECT:
		case CQL_ERR_RESOLVE:
			/* never sent */
			return CQL_RETRY_NEXT_HOST;
		case CQL_ERR_SERVER:
			break;
		default:
			/* local errors (malformed answers, memory, ...) are not retried */
			return CQL_RETRY_NO;
	}

	switch (err ? err->code : -1)
	{
		case CQL_ERRCODE_UNAVAILABLE:
			/* nothing was written or read: any statement, once */
			return tries == 0 ? CQL_RETRY_NEXT_HOST : CQL_RETRY_NO;
		case CQL_ERRCODE_OVERLOADED:
		case CQL_ERRCODE_IS_BOOTSTRAPPING:
		case CQL_ERRCODE_SERVER_ERROR:
		case CQL_ERRCODE_TRUNCATE_ERROR:
			return idempotent ? CQL_RETRY_NEXT_HOST : CQL_RETRY_NO;
		case CQL_ERRCODE_READ_TIMEOUT:
			if (!idempotent)
				return CQL_RETRY_NO;
			if (tries == 0 && err->received >= err->blockfor && !err->data_present)
				return CQL_RETRY_SAME_HOST;
			return CQL_RETRY_NEXT_HOST;
		case CQL_ERRCODE_WRITE_TIMEOUT:
			if (strcmp(err->write_type, "BATCH_LOG") == 0)
				return tries == 0 ? CQL_RETRY_SAME_HOST : CQL_RETRY_NO;
			if (idempotent && (strcmp(err->write_type, "SIMPLE") == 0 ||
							   strcmp(err->write_type, "UNLOGGED_BATCH") == 0))
				return CQL_RETRY_NEXT_HOST;
			return CQL_RETRY_NO;
		default:
			return CQL_RETRY_NO;
	}
}

/* Constant name of a decision, for logs. */
const char *
cql_retry_decision_name(cql_retry_decision d)
{
	switch (d)
	{
		case CQL_RETRY_NO:
			return "no retry";
		case CQL_RETRY_SAME_HOST:
			return "retry on the same host";
		case CQL_RETRY_NEXT_HOST:
			return "retry on the next host";
	}
	return "?";
}

/*
 * cql_send_again
 *		Send the request 'failed' (an EXECUTE, or a BATCH of one prepared
 *		statement, that failed on another connection) again on 'to', where
 *		the same statement is prepared as p.  The bound values, consistency
 *		and write timestamp are those of the first send, kept in the
 *		request, so the caller need not keep the values: that is what makes
 *		replaying a pipelined write possible.  CQL_ERR_UNSUPPORTED when the
 *		request cannot be replayed there (another kind of request, another
 *		protocol version, or a statement id that differs between the nodes).
 */
cql_status
cql_send_again(cql_conn *to, cql_prepared *p, const cql_request *failed,
			   cql_request **req, cql_error *err)
{
	cql_buf		b;
	cql_status	st;
	uint8_t    *copy;

	*req = NULL;
	if (failed == NULL || p == NULL || p->id == NULL || failed->exec_params == NULL ||
		(failed->opcode != CQL_OP_EXECUTE && failed->opcode != CQL_OP_BATCH) ||
		failed->version != cql_conn_protocol_version(to))
	{
		cql_conn_set_error(to, err, CQL_ERR_UNSUPPORTED, 0,
						   "this request cannot be sent again on another connection");
		return CQL_ERR_UNSUPPORTED;
	}
	cql_buf_init(&b, to->alloc);
	if (failed->opcode == CQL_OP_BATCH)
	{
		/* [byte type][short n][byte kind=1][short id len][id]...: same id */
		const uint8_t *body = failed->exec_params;
		size_t		id_len;

		if (failed->exec_params_len < 6 || body[3] != 1 ||
			(id_len = ((size_t) body[4] << 8) | body[5]) != p->id_len ||
			6 + id_len > failed->exec_params_len ||
			memcmp(body + 6, p->id, id_len) != 0)
		{
			cql_conn_set_error(to, err, CQL_ERR_UNSUPPORTED, 0,
							   "the batch's statement id differs on %s", cql_conn_peer(to));
			return CQL_ERR_UNSUPPORTED;
		}
		cql_buf_put(&b, body, failed->exec_params_len);
	}
	else
	{
		cql_buf_short_bytes(&b, p->id, p->id_len);
		if (to->version >= CQL_PROTOCOL_V5)
			cql_buf_short_bytes(&b, p->result_metadata_id ? p->result_metadata_id : (const uint8_t *) "",
								p->result_metadata_id_len);
		cql_buf_put(&b, failed->exec_params, failed->exec_params_len);
	}
	if ((st = cql_buf_status(&b)) != CQL_OK)
	{
		cql_buf_free(&b);
		cql_conn_set_error(to, err, st, 0, "out of memory");
		return st;
	}
	copy = cql_alloc(to->alloc, failed->exec_params_len ? failed->exec_params_len : 1);
	if (copy == NULL)
	{
		cql_buf_free(&b);
		cql_conn_set_error(to, err, CQL_ERR_NOMEM, 0, "out of memory");
		return CQL_ERR_NOMEM;
	}
	memcpy(copy, failed->exec_params, failed->exec_params_len);
	st = cql_conn_submit(to, failed->opcode, &b, req, err);
	cql_buf_free(&b);
	if (st != CQL_OK)
	{
		cql_free(to->alloc, copy);
		return st;
	}
	cql_prepared_touch(to, p);
	(*req)->prepared = p;
	(*req)->exec_params = copy;
	(*req)->exec_params_len = failed->exec_params_len;
	if (failed->opcode == CQL_OP_EXECUTE)
	{
		/* SKIP_METADATA is in the parameters: decode with p's columns */
		(*req)->cached_cols = failed->cached_cols ? p->cols : NULL;
		(*req)->ncached = failed->cached_cols ? p->ncols : 0;
	}
	return CQL_OK;
}

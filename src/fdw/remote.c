/*-------------------------------------------------------------------------
 *
 * remote.c
 *		The remote-statement handle: one statement's user, options, table
 *		layout and pinned connection, resolved once.
 *
 * Modelled on postgres_fdw's GetConnection/ReleaseConnection plus the
 * per-node state it builds from fdw_private once.  A handle is opened in
 * a Begin callback (or at the start of ANALYZE, TRUNCATE, cql_execute)
 * and released in the matching End; while open it counts in the cache
 * entry's busy count, so that an invalidation does not close the cluster
 * handle under it (the transaction-end callback resets busy counts after
 * an error, see connection.c).  A connection that was closed and reopened
 * meanwhile is detected by its generation: requests of the old one are
 * then never touched again.
 *
 * IDENTIFICATION
 *		src/fdw/remote.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "executor/executor.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "cql_cluster.h"
#include "compat.h"
#include "remote.h"
#include "write_metadata.h"

/*
 * cqlfdw_scan_userid, cqlfdw_result_userid
 *		The role whose user mapping a statement uses: the checkAsUser of the
 *		relation (a view owner's, for a foreign table read through a view),
 *		else the current user, as for the permission check.  For a
 *		ForeignScan (also a direct modify) and for a result relation; where
 *		the checkAsUser lives depends on the PostgreSQL version (compat.h).
 */
Oid
cqlfdw_scan_userid(EState *estate, ForeignScan *fsplan)
{
	Oid			checkasuser = cqlfdw_scan_checkasuser(fsplan, estate);

	return OidIsValid(checkasuser) ? checkasuser : GetUserId();
}

Oid
cqlfdw_result_userid(EState *estate, ResultRelInfo *rinfo)
{
	Oid			checkasuser = cqlfdw_resultrel_checkasuser(rinfo, estate);

	return OidIsValid(checkasuser) ? checkasuser : GetUserId();
}

/*
 * pin
 *		Take the user mapping's cluster handle (connecting if needed) and
 *		count this statement as a user of it.
 */
static void
pin(CqlRemote *r)
{
	r->entry = cqlfdw_get_connection(r->user, &r->opts);
	r->generation = r->entry->generation;
	r->entry->busy++;
	r->pinned = true;
}

/*
 * cqlfdw_remote_open_rel
 *		Open a handle for a statement on a foreign table, as userid: the
 *		resolution below, then the connection, pinned.
 *
 * cql may be NULL for callers that build their statement after looking at
 * the layout; they set r->cql then.
 */
void
cqlfdw_remote_open_rel(CqlRemote *r, Relation rel, Oid userid, const char *cql)
{
	cqlfdw_remote_resolve_rel(r, rel, userid, cql);
	pin(r);
}

/*
 * cqlfdw_resolve_table
 *		The one route to a foreign table's options and layout, for planning
 *		(planner_rel.c, modify.c) and for statement handles
 *		(cqlfdw_remote_resolve_rel): the options merged once (server, user
 *		mapping, table), the layout from the column options or, when they
 *		are incomplete, from the remote schema (cached per backend), and
 *		the write-metadata columns resolved.
 *
 * A statement handle (planning false) needs the user mapping: it is looked
 * up first, and a missing one is the error.  Planning looks it up only
 * when it must connect: for a layout from the remote schema, or to ask
 * whether the node lets SAI indexes answer without the partition key
 * (opts->index_needs_pk, only for a table with SAI indexes and
 * index_pushdown); so a table with key options plans without a mapping.
 * *user is the mapping, or NULL when planning did not need it.
 */
CqlFdwTable *
cqlfdw_resolve_table(Oid relid, Oid userid, bool planning, CqlFdwOptions *opts,
					 UserMapping **user)
{
	Oid			serverid = GetForeignServerIdByRelId(relid);
	UserMapping *um = NULL;
	bool		complete;
	CqlFdwTable *t;

	cqlfdw_get_options(serverid, InvalidOid, relid, opts);
	if (!planning)
	{
		um = GetUserMapping(userid, serverid);
		cqlfdw_options_add_mapping(opts, um);
	}
	t = cqlfdw_get_table(relid, opts, &complete);
	if (!complete)
	{
		if (um == NULL)
		{
			um = GetUserMapping(userid, serverid);
			cqlfdw_options_add_mapping(opts, um);
		}
		cqlfdw_complete_layout(t, relid, um, opts);
	}
	cqlfdw_meta_resolve(t, relid);

	/* a table with SAI indexes: may the node use them without a partition key? */
	if (planning && opts->index_pushdown)
	{
		bool		indexed = false;

		for (int i = 0; i < t->natts && !indexed; i++)
			indexed = t->cols[i].sai_index || t->cols[i].sai_values_index ||
				t->cols[i].sai_keys_index;
		if (indexed)
		{
			if (um == NULL)
			{
				um = GetUserMapping(userid, serverid);
				cqlfdw_options_add_mapping(opts, um);
			}
			opts->index_needs_pk = cqlfdw_index_needs_partition_key(um, opts);
		}
	}
	*user = um;
	return t;
}

/*
 * cqlfdw_remote_resolve_rel
 *		Everything but the connection, for callers that check options
 *		first (TRUNCATE): options and layout by cqlfdw_resolve_table.
 *		cqlfdw_remote_connect completes it.
 */
void
cqlfdw_remote_resolve_rel(CqlRemote *r, Relation rel, Oid userid, const char *cql)
{
	Oid			relid = RelationGetRelid(rel);

	memset(r, 0, sizeof(*r));
	r->serverid = GetForeignServerIdByRelId(relid);
	r->relid = relid;
	r->userid = userid;
	r->relname = pstrdup(RelationGetRelationName(rel));
	r->cql = cql;
	r->table = cqlfdw_resolve_table(relid, userid, false, &r->opts, &r->user);
	r->keyspace = r->table->keyspace;
}

/* Connect (or reuse the cached connection) and pin it. */
void
cqlfdw_remote_connect(CqlRemote *r)
{
	pin(r);
}

/*
 * cqlfdw_remote_open_server
 *		Open a handle for a statement that belongs to no foreign table
 *		(cql_execute); the caller has checked the privileges.
 */
void
cqlfdw_remote_open_server(CqlRemote *r, ForeignServer *server, Oid userid,
						  const char *cql)
{
	memset(r, 0, sizeof(*r));
	r->serverid = server->serverid;
	r->relid = InvalidOid;
	r->userid = userid;
	r->cql = cql;
	r->user = GetUserMapping(userid, server->serverid);
	cqlfdw_get_options(server->serverid, userid, InvalidOid, &r->opts);
	pin(r);
}

/*
 * cqlfdw_remote_release
 *		The statement no longer uses the connection.  Idempotent; after an
 *		error the transaction callback resets the count instead.
 */
void
cqlfdw_remote_release(CqlRemote *r)
{
	if (r->pinned && r->entry->busy > 0)
		r->entry->busy--;
	r->pinned = false;
}

/*
 * cqlfdw_remote_will_write
 *		The statement sends writes through the handle: should it fail with
 *		some still in flight, the abort settles the connections (see
 *		settle_after_abort in connection.c) before anything else is sent.
 */
void
cqlfdw_remote_will_write(CqlRemote *r)
{
	if (r->entry)
		r->entry->writes_sent = true;
}

/*
 * cqlfdw_remote_detach
 *		A copy of the handle in cxt for work that outlives the statement
 *		(writes deferred to COMMIT): it keeps what routing, prepare, retry
 *		and failure reports need (connection, generation, statement,
 *		keyspace, the retry options) and drops the statement-lifetime parts
 *		(the other options, layout, mapping).  Without the retry options a
 *		deferred write would never be sent again (max_retries 0).  It is
 *		not pinned: check cqlfdw_remote_alive before use.
 */
CqlRemote *
cqlfdw_remote_detach(const CqlRemote *r, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	CqlRemote  *d = palloc0(sizeof(CqlRemote));

	d->serverid = r->serverid;
	d->relid = r->relid;
	d->userid = r->userid;
	d->relname = r->relname ? pstrdup(r->relname) : NULL;
	d->cql = r->cql ? pstrdup(r->cql) : NULL;
	d->keyspace = r->keyspace ? pstrdup(r->keyspace) : NULL;
	d->entry = r->entry;
	d->generation = r->generation;
	d->opts.max_retries = r->opts.max_retries;
	d->opts.retry_timeout_ms = r->opts.retry_timeout_ms;
	MemoryContextSwitchTo(old);
	return d;
}

/*
 * cqlfdw_remote_alive
 *		Is the connection this handle was opened on still the entry's?
 *		(False after cql_fdw_disconnect or an invalidation closed it.)
 */
bool
cqlfdw_remote_alive(const CqlRemote *r)
{
	return r->entry && r->entry->cluster && r->entry->generation == r->generation;
}

/* The control connection of the handle's cluster. */
cql_conn *
cqlfdw_remote_control(CqlRemote *r)
{
	return cql_cluster_control(r->entry->cluster);
}

/*
 * cqlfdw_remote_prepare
 *		The handle's statement prepared on conn (NULL: the control
 *		connection), from the connection's cache when it has it; errors are
 *		raised.
 */
cql_prepared *
cqlfdw_remote_prepare(CqlRemote *r, cql_conn *conn)
{
	if (conn == NULL)
		conn = cqlfdw_remote_control(r);
	return cqlfdw_prepare(r->entry, r->generation, conn, r->cql);
}

/*
 * cqlfdw_remote_check_binds
 *		The prepared statement must have the bind markers the planner
 *		counted; anything else is an internal error.
 */
void
cqlfdw_remote_check_binds(CqlRemote *r, const cql_prepared *p, int nbinds)
{
	if (p->nbind != nbinds)
		elog(ERROR, "prepared statement has %d bind markers, expected %d",
			 p->nbind, nbinds);
}

/*
 * routed
 *		Common tail of the routing calls: a pending cancel is processed,
 *		a failure raised.
 */
static cql_conn *
routed(CqlRemote *r, cql_status s, cql_conn *conn, cql_error *err)
{
	if (s == CQL_ERR_INTERRUPTED)
		cqlfdw_check_interrupts();
	if (s != CQL_OK)
		cqlfdw_remote_fail(r, NULL, s, err);
	return conn;
}

/*
 * cqlfdw_remote_conn_for_key
 *		The connection to send a request for this partition (routing key;
 *		NULL: none) on: a replica when the cluster knows one, else any live
 *		node.  With rt (a request being retried), the hosts that already
 *		failed it come last: the next host of the query plan is used.
 */
cql_conn *
cqlfdw_remote_conn_for_key(CqlRemote *r, const CqlRetry *rt,
						   const uint8_t *key, size_t keylen)
{
	int64		token;

	if (key == NULL)
		return cqlfdw_remote_conn_for_token(r, rt, NULL);
	token = cql_cluster_token(r->entry->cluster, key, keylen);
	return cqlfdw_remote_conn_for_token(r, rt, &token);
}

/*
 * cqlfdw_remote_conn_for_token
 *		The connection for a token (a replica of it; NULL: any node), with
 *		the hosts of rt avoided as above.
 */
cql_conn *
cqlfdw_remote_conn_for_token(CqlRemote *r, const CqlRetry *rt, const int64 *token)
{
	cql_conn   *conn = NULL;
	cql_error	err;
	cql_status	s;
	int64_t		t = token ? *token : 0;

	cql_error_clear(&err);
	s = cql_cluster_conn_avoiding(r->entry->cluster, r->keyspace,
								  token ? &t : NULL,
								  rt ? rt->avoid : NULL, rt ? rt->navoid : 0,
								  &conn, &err);
	return routed(r, s, conn, &err);
}

/*
 * untried_hosts
 *		Hosts the cluster may use (allowed) that have not failed this
 *		request yet.  With none left, "retry on the next host" has nowhere
 *		to go: the error is returned (as a driver whose query plan is
 *		exhausted does), instead of trying the same node again.
 */
static int
untried_hosts(CqlRemote *r, const CqlRetry *rt)
{
	int			n = cql_cluster_hosts(r->entry->cluster, NULL, 0);
	cql_host_info *hosts;
	int			left = 0;

	if (n <= 0)
		return 0;
	hosts = palloc(sizeof(cql_host_info) * n);
	n = cql_cluster_hosts(r->entry->cluster, hosts, n);
	for (int i = 0; i < n; i++)
	{
		bool		tried = false;

		for (int k = 0; k < rt->navoid && !tried; k++)
			tried = rt->avoid[k] == i;
		if (hosts[i].allowed && !tried)
			left++;
	}
	pfree(hosts);
	return left;
}

/*
 * server_timed_out
 *		The coordinator answered that the replicas did not answer it in time
 *		(Read_timeout, Write_timeout): it is up, and it waited out its own
 *		timeout before saying so.  cql_retry_decide has already ruled out
 *		what must not be replayed (non-idempotent requests, CAS, counters).
 */
static bool
server_timed_out(cql_status s, const cql_error *err)
{
	return s == CQL_ERR_SERVER && err != NULL &&
		(err->code == CQL_ERRCODE_WRITE_TIMEOUT ||
		 err->code == CQL_ERRCODE_READ_TIMEOUT);
}

/*
 * cqlfdw_retry_start
 *		A request is sent for the first time: no tries yet, and the clock of
 *		its total retry time starts.
 */
void
cqlfdw_retry_start(CqlRetry *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->started = GetCurrentTimestamp();
}

/*
 * cqlfdw_remote_retry
 *		A request of this statement failed on conn with s/err: decide, by
 *		the library's retry policy (cql_retry.c: the drivers' rules), whether
 *		it is sent again, and raise the error when it is not.
 *
 * 'idempotent' is the caller's statement about the request: a read, or a
 * write that carries the client's timestamp and is no counter update, no
 * lightweight transaction and no list append.  At most max_retries tries
 * follow the first, and none is started retry_timeout after the first
 * send.  A transport failure or missing answer also marks the host down
 * (cql_cluster_report_failure), and a host that failed the request is
 * avoided by the next routing call for it (rt->avoid).  Returns
 * CQL_RETRY_NEXT_HOST (route again with rt) or CQL_RETRY_SAME_HOST; or
 * CQL_RETRY_NO, and then the caller frees what it holds and raises the
 * error with cqlfdw_remote_fail(r, conn, s, err).
 */
cql_retry_decision
cqlfdw_remote_retry(CqlRemote *r, CqlRetry *rt, cql_conn *conn, cql_status s,
					cql_error *err, bool idempotent)
{
	cql_retry_decision d;
	int			host = -1;
	bool		alive = cqlfdw_remote_alive(r);

	if (s == CQL_ERR_INTERRUPTED)
		cqlfdw_check_interrupts();
	d = cql_retry_decide(s, err, idempotent, rt->tries);
	if (d != CQL_RETRY_NO &&
		(!alive || rt->tries >= r->opts.max_retries ||
		 TimestampDifferenceExceeds(rt->started, GetCurrentTimestamp(),
									r->opts.retry_timeout_ms)))
	{
		if (alive && rt->tries > 0)
		{
			size_t		len = strlen(err->message);

			snprintf(err->message + len, sizeof(err->message) - len,
					 " (gave up after %d %s)", rt->tries,
					 rt->tries == 1 ? "retry" : "retries");
		}
		cqlfdw_stats.retries_exhausted++;
		d = CQL_RETRY_NO;
	}
	if (d == CQL_RETRY_NO)
		return d;

	if (conn)
		host = cql_cluster_host_of(r->entry->cluster, conn);
	if (d == CQL_RETRY_NEXT_HOST && host >= 0 && rt->navoid < CQLFDW_RETRY_MAX_AVOID)
		rt->avoid[rt->navoid++] = host;
	/*
	 * The next host: there must be one the request has not failed on.  When
	 * there is none, a coordinator that answered with its own timeout is
	 * alive and only slow (an overloaded one-node cluster): the idempotent
	 * request goes back to it, the timeout it waited being the backoff.
	 */
	if (d == CQL_RETRY_NEXT_HOST && untried_hosts(r, rt) == 0)
	{
		if (!server_timed_out(s, err))
			return CQL_RETRY_NO;
		d = CQL_RETRY_SAME_HOST;
	}
	if (s != CQL_ERR_SERVER && conn)
		cql_cluster_report_failure(r->entry->cluster, conn, s);
	rt->tries++;
	cqlfdw_stats.retries++;
	ereport(DEBUG1,
			(errmsg_internal("cql_fdw: %s after: %s",
							 cql_retry_decision_name(d),
							 err->message[0] ? err->message : cql_status_message(s))));
	return d;
}

/*
 * cqlfdw_remote_await_retrying
 *		Await the request *req on *conn into *res, and while it fails and
 *		the retry policy (cqlfdw_remote_retry, with the caller's word on
 *		'idempotent') allows, have it sent again by resend(arg, decision),
 *		which replaces *req (and *conn, for the next host) and frees the
 *		request it replaces.
 *
 * Returns CQL_OK with the answer in *res, or the status of the last
 * failure with *err (the handle's connection closed meanwhile counts as
 * not retryable); *req is freed and NULL either way.  The caller raises
 * the failure as it needs to (cqlfdw_remote_fail, cqlfdw_report_as).
 */
cql_status
cqlfdw_remote_await_retrying(CqlRemote *r, CqlRetry *rt, cql_conn **conn,
							 cql_request **req, bool idempotent,
							 CqlResendFn resend, void *arg,
							 cql_result *res, cql_error *err)
{
	for (;;)
	{
		cql_retry_decision d = CQL_RETRY_NO;
		cql_status	s;

		memset(res, 0, sizeof(*res));
		cql_error_clear(err);
		s = cqlfdw_await(*conn, *req, res, err);
		if (s != CQL_OK && cqlfdw_remote_alive(r))
			d = cqlfdw_remote_retry(r, rt, *conn, s, err, idempotent);
		if (s == CQL_OK || d == CQL_RETRY_NO)
		{
			cql_request_free(*req);
			*req = NULL;
			return s;
		}
		resend(arg, d);
	}
}

/*
 * cqlfdw_remote_send_execute
 *		EXECUTE the prepared statement p on conn without waiting for the
 *		answer: while every stream of the connection is in flight the send
 *		waits for answers (cqlfdw_retry_busy); a failure is raised.  The
 *		caller awaits and frees the returned request.
 */
cql_request *
cqlfdw_remote_send_execute(CqlRemote *r, cql_conn *conn, cql_prepared *p,
						   const cql_query_params *params)
{
	cql_request *req = NULL;
	cql_error	err;
	cql_status	s;

	cql_error_clear(&err);
	do
		s = cql_send_execute(conn, p, params, &req, &err);
	while (cqlfdw_retry_busy(conn, &s, &err));
	if (s != CQL_OK)
		cqlfdw_remote_fail(r, conn, s, &err);
	return req;
}

/*
 * cqlfdw_remote_fail
 *		Raise the error of a failed request of this statement (see
 *		cqlfdw_fail: a transport failure also marks the node).
 */
void
cqlfdw_remote_fail(CqlRemote *r, cql_conn *conn, cql_status s, cql_error *err)
{
	cqlfdw_fail(r->entry, r->generation, conn, s, err, r->cql);
}

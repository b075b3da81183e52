/*-------------------------------------------------------------------------
 *
 * connection.c
 *		Connection management for cql_fdw: one cluster handle (control
 *		connection plus lazily opened per-host connections) per user mapping.
 *
 * Modelled on postgres_fdw's connection.c: the cache is keyed by user
 * mapping OID, entries are invalidated when the server or user mapping
 * changes (closed at once when idle, otherwise at the end of the
 * transaction), and every wait for the network goes through a hook that
 * waits on the process latch and the socket together, so that query cancel,
 * statement_timeout and backend termination interrupt a slow Cassandra
 * request within a moment.
 *
 * It is also the one place where library errors become SQLSTATEs
 * (cqlfdw_report, cqlfdw_fail) and where interruptible waits live.  It
 * calls no other file of src/fdw but the option and layout code below it:
 * the statement handle (remote.c) and ad-hoc CQL (cql_execute.c,
 * cql_query.c) are built on it.
 *
 * The protocol library allocates with malloc: its objects are released
 * explicitly (or by memory-context reset callbacks of the scans that hold
 * them), and an out-of-memory inside the library is an error code, never a
 * longjmp through its frames.
 *
 * IDENTIFICATION
 *		src/fdw/connection.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/time.h>

#include "access/xact.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "common/hashfn.h"

#include "cql_fdw.h"
#include "compat.h"
#include "connection.h"
#include "cql_cluster.h"
#include "cql_conn.h"
#include "cql_schema.h"

static HTAB *ConnectionHash = NULL;

static void report_warnings(cql_conn *conn, const cql_response_extras *ex,
							const char *expected);

/* this backend's request statistics (cql_fdw_statistics) */
CqlFdwStats cqlfdw_stats;

/* host statistics of the cluster handles closed so far */
static cql_cluster_stats closed_cluster_stats;

/*
 * add_cluster_stats
 *		Accumulate one cluster handle's host statistics into *sum.
 */
static void
add_cluster_stats(cql_cluster_stats *sum, const cql_cluster_stats *s)
{
	sum->hosts_marked_down += s->hosts_marked_down;
	sum->conns_retired += s->conns_retired;
	sum->events_down += s->events_down;
	sum->events_up += s->events_up;
	sum->events_topology += s->events_topology;
	sum->topology_refreshes += s->topology_refreshes;
	sum->heartbeats += s->heartbeats;
	sum->heartbeat_failures += s->heartbeat_failures;
}

static void cql_inval_callback(Datum arg, int cacheid, uint32 hashvalue);
static void cql_xact_callback(XactEvent event, void *arg);
static void cql_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid, void *arg);

/*
 * cqlfdw_wait
 *		Wait hook of the protocol library: latch + socket.
 *
 * A pending query cancel or termination makes the library return
 * CQL_ERR_INTERRUPTED; the caller then leaves the library's frames and runs
 * CHECK_FOR_INTERRUPTS() itself, so no longjmp ever crosses library code.
 * Other interrupts (cache invalidation catch-up, barriers, ...) do not stop
 * a request: the next CHECK_FOR_INTERRUPTS after it handles them.  While
 * interrupts or cancels are held off (abort cleanup, COMMIT) we keep
 * waiting, else the caller would spin on an interrupt it cannot process.
 */
static cql_status
cqlfdw_wait(void *ctx, int fd, int events, int timeout_ms)
{
	int			wl = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;
	int			rc;

	if (events & CQL_WAIT_READ)
		wl |= WL_SOCKET_READABLE;
	if (events & CQL_WAIT_WRITE)
		wl |= WL_SOCKET_WRITEABLE;
	if (timeout_ms >= 0)
		wl |= WL_TIMEOUT;

	rc = WaitLatchOrSocket(MyLatch, wl, fd, timeout_ms, PG_WAIT_EXTENSION);
	if (rc & WL_LATCH_SET)
	{
		ResetLatch(MyLatch);
		if (InterruptPending && INTERRUPTS_CAN_BE_PROCESSED() &&
			(ProcDiePending || (QueryCancelPending && QueryCancelHoldoffCount == 0)))
			return CQL_ERR_INTERRUPTED;
	}
	if ((rc & WL_TIMEOUT) && !(rc & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE)))
		return CQL_ERR_TIMEOUT;
	return CQL_OK;
}

/*
 * cqlfdw_check_interrupts
 *		After the library returned CQL_ERR_INTERRUPTED: process the
 *		interrupt (this normally throws the cancel error).
 */
void
cqlfdw_check_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * entry_in_use
 *		Does anything still need this cluster handle: a running statement
 *		(busy), or writes deferred to COMMIT that will be sent on it?  Such
 *		a handle is only marked invalidated, never closed under them.
 */
static bool
entry_in_use(const CqlConnEntry *entry)
{
	return entry->busy > 0 || entry->pending_writes;
}

/*
 * close_entry
 *		Close the entry's cluster handle, if open, and bump its generation.
 *
 * The generation tells handles that outlive the statement (CqlRemote,
 * deferred writes) that their connections are gone and must not be touched.
 * The caller must know that no running statement uses the handle (busy == 0,
 * or the statement is being abandoned).
 */
static void
close_entry(CqlConnEntry *entry)
{
	if (entry->cluster)
	{
		elog(DEBUG3, "cql_fdw: closing connection for user mapping %u", entry->key);
		add_cluster_stats(&closed_cluster_stats, cql_cluster_get_stats(entry->cluster));
		cql_cluster_free(entry->cluster);
		cql_tls_context_free(entry->tls);
		entry->tls = NULL;
		entry->cluster = NULL;
		entry->generation++;
	}
	entry->invalidated = false;
}

/*
 * ensure_hash
 *		Create the connection cache on first use, and register once per
 *		backend the syscache callbacks for foreign servers and user mappings
 *		and the transaction callback.
 */
static void
ensure_hash(void)
{
	HASHCTL		ctl;

	if (ConnectionHash != NULL)
		return;
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(CqlConnEntry);
	ConnectionHash = hash_create("cql_fdw connections", 8, &ctl,
								 HASH_ELEM | HASH_BLOBS);
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, cql_inval_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(USERMAPPINGOID, cql_inval_callback, (Datum) 0);
	RegisterXactCallback(cql_xact_callback, NULL);
	RegisterSubXactCallback(cql_subxact_callback, NULL);
}

/*
 * auth_required
 *		Must this role's connections be authenticated by Cassandra?
 *
 * Non-superusers must authenticate with a password, as with postgres_fdw:
 * otherwise they would act with whatever access the PostgreSQL host has.
 * A superuser may waive that for a mapping (password_required 'false').
 * The mapping must name a username and password, else ERROR here, before
 * anything is sent.
 */
static bool
auth_required(const CqlFdwOptions *opts, UserMapping *user)
{
	if (superuser_arg(user->userid) || !opts->password_required)
		return false;
	if (opts->password == NULL || opts->password[0] == '\0' || opts->username == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("password is required"),
				 errdetail("Non-superusers must provide a username and password in the user mapping."),
				 errhint("Add the options username and password to the user mapping.")));
	return true;
}

/*
 * Sockets to Cassandra count against max_files_per_process like libpq's
 * (postgres_fdw does the same): fd.c then keeps enough descriptors free.
 */
static bool
cqlfdw_fd_budget(void *ctx, bool acquire)
{
	if (acquire)
		return AcquireExternalFD();
	ReleaseExternalFD();
	return true;
}

/*
 * tls_failed
 *		Did the connect fail in TLS (handshake, certificate)?  The cluster
 *		reports "no host could be reached: ..." with each host's message.
 */
static bool
tls_failed(const cql_error *err)
{
	return err->status == CQL_ERR_TLS || strstr(err->message, "TLS handshake") != NULL ||
		strstr(err->message, "TLS connection") != NULL;
}

/*
 * maybe_tls_only
 *		A plaintext connect that a TLS-only node would fail that way: the
 *		node closes the connection, or answers with bytes that are no CQL
 *		frame (a TLS alert), during the handshake.
 */
static bool
maybe_tls_only(const cql_error *err)
{
	return strstr(err->message, "closed the connection") != NULL ||
		strstr(err->message, "protocol version") != NULL ||
		strstr(err->message, "malformed") != NULL ||
		strstr(err->message, "invalid") != NULL;
}

/*
 * new_client_id
 *		A random (version 4) UUID in text form, the STARTUP CLIENT_ID of a
 *		new cluster handle: its connections show the same one in Cassandra's
 *		system_views.clients, as a DataStax driver session's do.
 */
static char *
new_client_id(void)
{
	uint8		b[16];

	if (!pg_strong_random(b, sizeof(b)))
		return NULL;
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	return psprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
					b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
					b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * connect_entry
 *		Open the cluster handle of a user mapping and record in the entry
 *		what it was opened for.
 *
 * With need_auth every connection the cluster ever opens (the control
 * connection, its replacements, and the per-host connections to the peers
 * it discovers) must be asked for a password by Cassandra: the library
 * checks that in each handshake, so a non-superuser can never end up on a
 * node without authentication.  Peers outside the host option are used
 * only with discover_peers, so a node cannot steer the backend elsewhere.
 */
static CqlConnEntry *
connect_entry(CqlConnEntry *entry, UserMapping *user, const CqlFdwOptions *opts,
			  bool need_auth)
{
	cql_tls_context *tls = NULL;
	cql_conn_options co;
	cql_cluster_options clo;
	cql_cluster *cluster = NULL;
	cql_error	err;
	cql_status	st;
	ForeignServer *server = GetForeignServer(user->serverid);

	cql_conn_options_init(&co);
	co.port = opts->port;
	co.protocol_version = opts->protocol_version;
	co.compression = opts->compression ? CQL_COMPRESSION_LZ4 : CQL_COMPRESSION_NONE;
	co.username = opts->username;
	co.password = opts->password;
	co.require_auth = need_auth;
	co.connect_timeout_ms = opts->connect_timeout_ms;
	co.request_timeout_ms = opts->request_timeout_ms;
	co.max_body = (size_t) opts->max_response_size;
	co.driver_name = "cql_fdw";
	co.driver_version = CQLFDW_VERSION;
	/* who is connected, in Cassandra's system_views.clients */
	co.application_name = opts->application_name ? opts->application_name
		: application_name;
	co.client_id = new_client_id();
	co.wait = cqlfdw_wait;
	co.wait_ctx = NULL;
	co.fd_budget = cqlfdw_fd_budget;

	/*
	 * TLS: one context per handle, from the merged options (the user
	 * mapping's client certificate over the server's).  A file that cannot
	 * be used is reported before anything connects.
	 */
	if (opts->sslmode != CQL_SSL_DISABLE)
	{
		cql_tls_config tc;

		memset(&tc, 0, sizeof(tc));
		tc.mode = (cql_ssl_mode) opts->sslmode;
		tc.rootcert = opts->sslrootcert;
		tc.cert = opts->sslcert;
		tc.key = opts->sslkey;
		tc.key_password = opts->sslpassword;
		cql_error_clear(&err);
		st = cql_tls_context_new(&tc, &tls, &err);
		if (st != CQL_OK)
			ereport(ERROR,
					(errcode(st == CQL_ERR_INVALID_ARG ? ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE
							 : ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
					 errmsg("could not set up TLS for Cassandra server \"%s\"", server->servername),
					 errdetail("%s", err.message),
					 errhint("Check the options sslmode, sslrootcert, sslcert and sslkey: the files must be readable PEM files of the PostgreSQL server's operating system user, and the key must belong to the certificate.")));
	}
	co.tls = tls;

	cql_cluster_options_init(&clo);
	clo.conn = &co;
	clo.hosts = opts->host;
	clo.local_dc = opts->local_dc;
	clo.contact_points_only = !opts->discover_peers;

	cql_error_clear(&err);
	st = cql_cluster_connect_opts(&clo, &cluster, &err);
	if (st != CQL_OK)
		cql_tls_context_free(tls);	/* no connection uses it */
	if (st == CQL_ERR_INTERRUPTED)
	{
		cqlfdw_check_interrupts();
		/* interrupt already processed elsewhere: still a failure */
	}
	/* the library's words for a node that answered STARTUP with READY */
	if (st != CQL_OK && need_auth &&
		strstr(err.message, "did not ask for authentication") != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("password is required"),
				 errdetail("The Cassandra server did not ask for authentication (%s).",
						   err.host[0] ? err.host : server->servername),
				 errhint("Target server's authentication method must be changed or password_required=false set in the user mapping attributes.")));
	if (st != CQL_OK)
		ereport(ERROR,
				(errcode(st == CQL_ERR_INVALID_ARG ? ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE
						 : ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("could not connect to Cassandra server \"%s\"", server->servername),
				 errdetail("%s", err.message[0] ? err.message : cql_status_message(st)),
				 st == CQL_ERR_AUTH
				 ? errhint("Check the username and password of the user mapping for server \"%s\".",
						   server->servername)
				 : tls_failed(&err)
				 ? errhint("Check sslmode, sslrootcert (the CA that signed the node's certificate), that the node's certificate names the host as given in option host (verify-full), that it has not expired, and sslcert/sslkey if the node requires client certificates.")
				 : (opts->sslmode == CQL_SSL_DISABLE && maybe_tls_only(&err))
				 ? errhint("The node may accept only encrypted connections: set the server option sslmode (require, verify-ca or verify-full).")
				 : errhint("Check the host and port options of server \"%s\" and that Cassandra is running.",
						   server->servername)));

	entry->cluster = cluster;
	entry->tls = tls;
	entry->invalidated = false;
	entry->keep_connections = opts->keep_connections;
	entry->auth_required = need_auth;
	entry->index_needs_pk = -1;
	entry->server_hashvalue =
		GetSysCacheHashValue1(FOREIGNSERVEROID, ObjectIdGetDatum(server->serverid));
	entry->mapping_hashvalue =
		GetSysCacheHashValue1(USERMAPPINGOID, ObjectIdGetDatum(user->umid));
	entry->serverid = server->serverid;
	return entry;
}

/*
 * cqlfdw_index_needs_partition_key
 *		Does the server refuse index queries without a partition-key
 *		restriction?  Cassandra 5.0's guardrail
 *		non_partition_restricted_index_query_enabled (false: refused), as the
 *		control connection's node reports it in system_views.settings; read
 *		once per connection.  The planner then evaluates such predicates
 *		locally instead of sending a statement the node rejects.  A node
 *		without the setting, or a role that may not read it, gets the
 *		default (allowed).  Superusers are spared by guardrails, but are
 *		treated alike.
 */
bool
cqlfdw_index_needs_partition_key(UserMapping *user, const CqlFdwOptions *opts)
{
	CqlConnEntry *entry = cqlfdw_get_connection(user, opts);

	if (entry->index_needs_pk < 0)
	{
		char		value[32];
		cql_error	err;
		cql_status	st;

		cql_error_clear(&err);
		st = cql_node_setting(cql_cluster_control(entry->cluster),
							  "non_partition_restricted_index_query_enabled",
							  value, sizeof(value), &err);
		if (st != CQL_OK && err.code == CQL_ERRCODE_UNAUTHORIZED)
			value[0] = '\0';	/* the role may not read settings: the default */
		else if (st != CQL_OK)
			cqlfdw_report(ERROR, st, &err, NULL);
		entry->index_needs_pk = (pg_strcasecmp(value, "false") == 0) ? 1 : 0;
	}
	return entry->index_needs_pk == 1;
}

/*
 * cqlfdw_get_connection
 *		The cluster handle for a user mapping, connecting if necessary.
 *
 * The cache is keyed by user mapping, and a PUBLIC mapping is shared by
 * every role: a handle opened for a superuser (who needs no password) is
 * not reused for a role that does.  The password rule is therefore checked
 * on every call, and a handle opened without it is reopened with it.
 */
CqlConnEntry *
cqlfdw_get_connection(UserMapping *user, const CqlFdwOptions *opts)
{
	CqlConnEntry *entry;
	bool		found;
	bool		need_auth = auth_required(opts, user);

	ensure_hash();
	entry = hash_search(ConnectionHash, &user->umid, HASH_ENTER, &found);
	if (!found)
	{
		entry->cluster = NULL;
		entry->tls = NULL;
		entry->invalidated = false;
		entry->busy = 0;
		entry->pending_writes = false;
		entry->generation = 0;
		entry->auth_required = false;
		entry->index_needs_pk = -1;
	}

	if (entry->cluster && need_auth && !entry->auth_required)
	{
		if (entry_in_use(entry))
			ereport(ERROR,
					(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
					 errmsg("password is required"),
					 errdetail("The connection to server \"%s\" in use by this query was opened without requiring authentication.",
							   GetForeignServer(user->serverid)->servername),
					 errhint("Run the statement in a query of its own.")));
		close_entry(entry);
	}

	/*
	 * Between statements nothing holds a prepared statement or a page of
	 * this cluster (every scan, write, ANALYZE and cql_execute pins the
	 * entry while it does; see remote.c): bound the prepared-statement
	 * caches and drop the column arrays that changed metadata retired.
	 */
	if (entry->cluster && entry->busy == 0)
	{
		(void) cql_cluster_trim_prepared(entry->cluster, CQLFDW_MAX_PREPARED);
		/* connections the cluster stopped using during earlier statements */
		(void) cql_cluster_release_retired(entry->cluster);
	}

	/*
	 * Connections that sat idle (the backend waited for its client) may
	 * have died or hang half-open meanwhile: a heartbeat finds them now,
	 * in a short round trip, before a user request waits on one.
	 */
	if (entry->cluster && entry->busy == 0 && opts->heartbeat_interval_ms > 0)
	{
		cql_error	err;

		cql_error_clear(&err);
		(void) cql_cluster_heartbeat(entry->cluster, opts->heartbeat_interval_ms,
									 Min(opts->request_timeout_ms, CQLFDW_HEARTBEAT_TIMEOUT),
									 &err);
		if (err.status == CQL_ERR_INTERRUPTED)
			cqlfdw_check_interrupts();
	}

	/* options changed, or the control connection broke while idle */
	if (entry->cluster && !entry_in_use(entry) &&
		(entry->invalidated ||
		 cql_conn_status(cql_cluster_control(entry->cluster)) != CQL_OK))
		close_entry(entry);

	if (entry->cluster == NULL)
		connect_entry(entry, user, opts, need_auth);
	return entry;
}

/*
 * cql_inval_callback
 *		Syscache invalidation of a foreign server or user mapping (hashvalue
 *		0: all of them).
 *
 * A matching handle that no statement uses is closed at once; one in use is
 * marked invalidated and closed when it is idle again (the next
 * cqlfdw_get_connection, or the end of the transaction).
 */
static void
cql_inval_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	HASH_SEQ_STATUS scan;
	CqlConnEntry *entry;

	hash_seq_init(&scan, ConnectionHash);
	while ((entry = (CqlConnEntry *) hash_seq_search(&scan)))
	{
		if (entry->cluster == NULL)
			continue;
		if (hashvalue == 0 ||
			(cacheid == FOREIGNSERVEROID && entry->server_hashvalue == hashvalue) ||
			(cacheid == USERMAPPINGOID && entry->mapping_hashvalue == hashvalue))
		{
			if (!entry_in_use(entry))
				close_entry(entry);
			else
				entry->invalidated = true;
		}
	}
}

/*
 * settle_after_abort
 *		A statement that fails may leave writes in flight (a pipelined
 *		COPY or bulk insert, the window of a deferred COMMIT, a cancelled
 *		cql_execute); they were orphaned, not withdrawn, and a coordinator
 *		could still apply one after the next statement's writes (a
 *		TRUNCATE, the same row written again).  So when a transaction or
 *		subtransaction aborts, every handle that wrote in this transaction
 *		is settled: its connections are uncorked and their answers awaited,
 *		for at most CQLFDW_SETTLE_TIMEOUT_MS (longer than Cassandra's write
 *		timeout, so a live coordinator always answers within it).  Interrupts
 *		are held off here, as postgres_fdw's abort cleanup waits for its
 *		cancel.  A handle still waiting after that is closed (at the end of
 *		the transaction for a subtransaction, which may have a running outer
 *		statement) with a WARNING: what a node that no longer answers does
 *		with those writes is out of our hands.
 */
static void
settle_after_abort(bool top_level)
{
	HASH_SEQ_STATUS scan;
	CqlConnEntry *entry;

	hash_seq_init(&scan, ConnectionHash);
	while ((entry = (CqlConnEntry *) hash_seq_search(&scan)))
	{
		cql_error	err;
		int			unsettled = 0;

		if (entry->cluster == NULL || !entry->writes_sent)
			continue;
		if (cql_cluster_settle(entry->cluster, CQLFDW_SETTLE_TIMEOUT_MS,
							   &unsettled, &err) == CQL_OK)
			continue;
		ereport(WARNING,
				(errcode(ERRCODE_FDW_UNABLE_TO_CREATE_EXECUTION),
				 errmsg("cql_fdw: requests of the aborted statement still unanswered after %d ms on %d connection(s)",
						CQLFDW_SETTLE_TIMEOUT_MS, unsettled),
				 errdetail("%s", err.message),
				 errhint("Writes sent before the error may still be applied by Cassandra later; the connection is closed.")));
		if (top_level)
			close_entry(entry);
		else
			entry->invalidated = true;
	}
}

/*
 * At the end of a transaction no scan can still use a connection and no
 * deferred write is left (sent at PRE_COMMIT, or forgotten): reset the busy
 * counts (an aborted scan does not decrement) and the deferred-write marks,
 * and close what was invalidated meanwhile, and the handles of servers with
 * keep_connections 'false' (as postgres_fdw).
 */
static void
cql_xact_callback(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS scan;
	CqlConnEntry *entry;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		settle_after_abort(true);
	hash_seq_init(&scan, ConnectionHash);
	while ((entry = (CqlConnEntry *) hash_seq_search(&scan)))
	{
		entry->busy = 0;
		entry->writes_sent = false;
		entry->pending_writes = false;	/* sent at PRE_COMMIT, or dropped */
		if (entry->cluster && (entry->invalidated || !entry->keep_connections))
			close_entry(entry);
	}
}

/*
 * cql_subxact_callback
 *		A subtransaction that aborts (an exception block, ROLLBACK TO
 *		SAVEPOINT) settles what its failed statement left in flight, so
 *		that the statements after it are not overtaken.
 */
static void
cql_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		settle_after_abort(false);
}

/* ---------------------------------------------------------------------
 * Error reporting
 * ---------------------------------------------------------------------
 */

/* SQLSTATE for a Cassandra error code, in one place (like oracle_fdw) */
static int
sqlstate_for_server_error(int32_t code)
{
	switch (code)
	{
		case CQL_ERRCODE_SYNTAX_ERROR:
			return ERRCODE_SYNTAX_ERROR;
		case CQL_ERRCODE_UNAUTHORIZED:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case CQL_ERRCODE_AUTH_ERROR:
			return ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION;
		case CQL_ERRCODE_ALREADY_EXISTS:
			return ERRCODE_DUPLICATE_OBJECT;
		case CQL_ERRCODE_FUNCTION_FAILURE:
			return ERRCODE_EXTERNAL_ROUTINE_EXCEPTION;
		case CQL_ERRCODE_UNAVAILABLE:
		case CQL_ERRCODE_OVERLOADED:
		case CQL_ERRCODE_IS_BOOTSTRAPPING:
		case CQL_ERRCODE_TRUNCATE_ERROR:
		case CQL_ERRCODE_WRITE_TIMEOUT:
		case CQL_ERRCODE_READ_TIMEOUT:
		case CQL_ERRCODE_READ_FAILURE:
		case CQL_ERRCODE_WRITE_FAILURE:
		case CQL_ERRCODE_CDC_WRITE_FAILURE:
		case CQL_ERRCODE_CAS_WRITE_UNKNOWN:
			return ERRCODE_FDW_UNABLE_TO_CREATE_EXECUTION;
		case CQL_ERRCODE_INVALID:
		case CQL_ERRCODE_CONFIG_ERROR:
		case CQL_ERRCODE_UNPREPARED:
		case CQL_ERRCODE_SERVER_ERROR:
		case CQL_ERRCODE_PROTOCOL_ERROR:
		default:
			return ERRCODE_FDW_ERROR;
	}
}

/*
 * sqlstate_for_status
 *		SQLSTATE for a library status other than CQL_ERR_SERVER: connection,
 *		transport, protocol and local failures.
 */
static int
sqlstate_for_status(cql_status st)
{
	switch (st)
	{
		case CQL_ERR_NOMEM:
			return ERRCODE_FDW_OUT_OF_MEMORY;
		case CQL_ERR_RESOLVE:
		case CQL_ERR_CONNECT:
		case CQL_ERR_NO_HOST:
		case CQL_ERR_AUTH:
		case CQL_ERR_PROTOCOL_VERSION:
			return ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION;
		case CQL_ERR_IO:
		case CQL_ERR_CLOSED:
		case CQL_ERR_STATE:
		case CQL_ERR_MALFORMED:
		case CQL_ERR_TRUNCATED:
		case CQL_ERR_CRC:
		case CQL_ERR_COMPRESSION:
		case CQL_ERR_TOO_LARGE:
		case CQL_ERR_UNSUPPORTED:
			return ERRCODE_CONNECTION_FAILURE;
		case CQL_ERR_TIMEOUT:
			return ERRCODE_FDW_UNABLE_TO_CREATE_EXECUTION;
		case CQL_ERR_TYPE:
			return ERRCODE_FDW_INVALID_DATA_TYPE;
		default:
			return ERRCODE_FDW_ERROR;
	}
}

/* Extra facts of the error for errdetail */
static void
describe_server_error(StringInfo buf, const cql_error *err)
{
	appendStringInfo(buf, "Cassandra error %s (0x%04X)",
					 cql_error_code_name(err->code), (unsigned) err->code);
	if (err->host[0])
		appendStringInfo(buf, " from %s", err->host);
	switch (err->code)
	{
		case CQL_ERRCODE_UNAVAILABLE:
			appendStringInfo(buf, ": consistency %s needs %d replicas, %d alive",
							 cql_consistency_name(err->consistency) ?
							 cql_consistency_name(err->consistency) : "?",
							 err->blockfor, err->alive);
			break;
		case CQL_ERRCODE_WRITE_TIMEOUT:
		case CQL_ERRCODE_WRITE_FAILURE:
			appendStringInfo(buf, ": consistency %s, %d of %d replicas acknowledged, write type %s",
							 cql_consistency_name(err->consistency) ?
							 cql_consistency_name(err->consistency) : "?",
							 err->received, err->blockfor, err->write_type);
			break;
		case CQL_ERRCODE_READ_TIMEOUT:
		case CQL_ERRCODE_READ_FAILURE:
			appendStringInfo(buf, ": consistency %s, %d of %d replicas responded",
							 cql_consistency_name(err->consistency) ?
							 cql_consistency_name(err->consistency) : "?",
							 err->received, err->blockfor);
			break;
		default:
			break;
	}
	appendStringInfoChar(buf, '.');
}

/*
 * cqlfdw_report
 *		Raise an error (or lower-level message) for a failed library call.
 *
 * 'cql' is the statement, shown as context.  Statements the FDW builds
 * never contain values (they are bound); cql_execute passes its text
 * through cqlfdw_redact_cql first.  A library call
 * that was interrupted processes the interrupt instead.
 */
void
cqlfdw_report(int elevel, cql_status st, const cql_error *err, const char *cql)
{
	cqlfdw_report_as(elevel, st, err, cql, NULL, NULL);
}

/*
 * cqlfdw_report_as
 *		cqlfdw_report for a caller that knows more about what failed: the
 *		message is prefixed by 'what' ("what: message") and 'detail', when
 *		given, replaces the description of the failure.  The SQLSTATE and
 *		the hint are the mapping's, as for every other failure.
 */
void
cqlfdw_report_as(int elevel, cql_status st, const cql_error *err, const char *cql,
				 const char *what, const char *detail_text)
{
	StringInfoData detail;
	const char *msg;

	if (st == CQL_ERR_INTERRUPTED)
		cqlfdw_check_interrupts();

	initStringInfo(&detail);
	if (st == CQL_ERR_SERVER)
	{
		if (detail_text)
			appendStringInfoString(&detail, detail_text);
		else
			describe_server_error(&detail, err);
		msg = err->message[0] ? err->message : "Cassandra returned an error";
		ereport(elevel,
				(errcode(sqlstate_for_server_error(err->code)),
				 what ? errmsg("%s: %s", what, msg) : errmsg("%s", msg),
				 errdetail("%s", detail.data),
				 err->code == CQL_ERRCODE_UNAVAILABLE
				 ? errhint("Lower the consistency level (options consistency and write_consistency) or bring more replicas up.")
				 : cql_error_is_tombstone_failure(err)
				 ? errhint("A replica met more deleted rows and cells (tombstones) in one read than its tombstone_failure_threshold allows (100000 by default); a foreign table scan tries pages down to one row before it fails so.  %s",
						   CQLFDW_TOMBSTONE_ADVICE)
				 : (err->code == CQL_ERRCODE_INVALID && strstr(err->message, "ALLOW FILTERING"))
				 ? errhint("A column option sai_index may name an index Cassandra no longer has (EXPLAIN shows which index a scan uses): drop that option, re-run IMPORT FOREIGN SCHEMA, or set index_pushdown 'false'; otherwise set allow_filtering 'true' on the foreign table.")
				 : 0,
				 cql ? errcontext("remote CQL: %s", cql) : 0));
	}
	else
	{
		if (detail_text)
			appendStringInfoString(&detail, detail_text);
		else if (err && err->host[0])
			appendStringInfo(&detail, "Host %s: %s.", err->host, cql_status_message(st));
		else
			appendStringInfo(&detail, "%s.", cql_status_message(st));
		msg = (err && err->message[0]) ? err->message : cql_status_message(st);
		ereport(elevel,
				(errcode(sqlstate_for_status(st)),
				 what ? errmsg("%s: %s", what, msg) : errmsg("%s", msg),
				 errdetail("%s", detail.data),
				 st == CQL_ERR_TIMEOUT
				 ? errhint("Raise the server option request_timeout (milliseconds) if Cassandra needs longer.")
				 : st == CQL_ERR_TOO_LARGE
				 ? errhint("Lower the option fetch_size, or raise the server option max_response_size (default 64MB).")
				 : 0,
				 cql ? errcontext("remote CQL: %s", cql) : 0));
	}
	pfree(detail.data);
}

/* ---------------------------------------------------------------------
 * Interruptible library calls shared by scans and writes
 * ---------------------------------------------------------------------
 */

/*
 * cqlfdw_await
 *		Await a request; a pending cancel is processed (and normally throws)
 *		after the library has returned, then the wait resumes.
 */
cql_status
cqlfdw_await(cql_conn *conn, cql_request *req, cql_result *res, cql_error *err)
{
	return cqlfdw_await_expecting(conn, req, res, err, NULL);
}

/*
 * cqlfdw_await_expecting
 *		cqlfdw_await for a request whose answer may carry a warning the
 *		caller expects (it asked for what Cassandra warns about on purpose):
 *		a warning starting with expected_warning is not passed on.
 */
cql_status
cqlfdw_await_expecting(cql_conn *conn, cql_request *req, cql_result *res, cql_error *err,
					   const char *expected_warning)
{
	cql_result	local;
	cql_result *r = res ? res : &local;

	if (r == &local)
		memset(&local, 0, sizeof(local));
	for (;;)
	{
		cql_status	s = cql_conn_await(conn, req, r, err);

		if (s == CQL_OK && r->extras.nwarnings > 0)
			report_warnings(conn, &r->extras, expected_warning);
		if (r == &local)
			cql_result_free(&local);
		if (s != CQL_ERR_INTERRUPTED)
			return s;
		cqlfdw_check_interrupts();
	}
}

/*
 * warning_hash
 *		A hash of a warning's text without its digits: the tombstone
 *		warning of every page of a scan ("Read 12 live rows and 3401
 *		tombstone cells for query ... token -4611...") differs only in its
 *		numbers, and is one warning to the user.
 */
static uint32
warning_hash(const char *w)
{
	uint32		h = 0;
	const char *run = w;

	for (const char *c = w;; c++)
	{
		if (*c == '\0' || (*c >= '0' && *c <= '9'))
		{
			if (c > run)
				h = hash_combine(h, hash_bytes((const unsigned char *) run, (int) (c - run)));
			if (*c == '\0')
				return h;
			run = c + 1;
		}
	}
}

/*
 * report_warnings
 *		Cassandra's warnings on a response (tombstones read, a large
 *		partition or batch, a guardrail's soft limit, an aggregation
 *		without partition key...) become PostgreSQL WARNINGs naming the
 *		coordinator.  A scan gets the same warning with every page: one
 *		text, up to its numbers (warning_hash), is reported once per
 *		statement; one the request expected (starting with 'expected', if
 *		not NULL) is not reported.
 */
static void
report_warnings(cql_conn *conn, const cql_response_extras *ex, const char *expected)
{
	static TimestampTz stmt_start = 0;
	static uint32 seen[16];
	static int	nseen = 0;
	TimestampTz now_stmt = GetCurrentStatementStartTimestamp();

	if (now_stmt != stmt_start)
	{
		stmt_start = now_stmt;
		nseen = 0;
	}
	for (int i = 0; i < ex->nwarnings; i++)
	{
		const char *w = ex->warnings[i] ? ex->warnings[i] : "";
		uint32		h = warning_hash(w);
		bool		dup = false;

		for (int k = 0; k < nseen && !dup; k++)
			dup = seen[k] == h;
		if (dup)
			continue;
		if (expected != NULL && strncmp(w, expected, strlen(expected)) == 0)
			continue;
		if (nseen < lengthof(seen))
			seen[nseen++] = h;
		cqlfdw_stats.warnings++;
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("Cassandra warning from %s: %s", cql_conn_peer(conn), w)));
	}
}

/*
 * cqlfdw_fail
 *		Report a failed request.  A transport failure (not a server error)
 *		also tells the cluster, so that the next request avoids that node,
 *		unless the connection was closed meanwhile.
 */
void
cqlfdw_fail(CqlConnEntry *entry, uint64 generation, cql_conn *conn,
			cql_status s, cql_error *err, const char *cql)
{
	if (s != CQL_ERR_SERVER && conn && entry->cluster &&
		entry->generation == generation)
		cql_cluster_report_failure(entry->cluster, conn, s);
	cqlfdw_report(ERROR, s, err, cql);
	pg_unreachable();
}

/*
 * cqlfdw_prepare
 *		Prepare (or find in the connection's cache) a statement; errors are
 *		raised.
 */
cql_prepared *
cqlfdw_prepare(CqlConnEntry *entry, uint64 generation, cql_conn *conn,
			   const char *cql)
{
	cql_prepared *p;
	cql_error	err;
	cql_status	s;

	cql_error_clear(&err);
	for (;;)
	{
		s = cql_prepare(conn, cql, &p, &err);
		if (s != CQL_ERR_INTERRUPTED)
			break;
		cqlfdw_check_interrupts();
	}
	if (s != CQL_OK)
		cqlfdw_fail(entry, generation, conn, s, &err, cql);
	return p;
}

/* ---------------------------------------------------------------------
 * SQL-callable functions
 * ---------------------------------------------------------------------
 */
PG_FUNCTION_INFO_V1(cql_fdw_get_connections);
PG_FUNCTION_INFO_V1(cql_fdw_statistics);
PG_FUNCTION_INFO_V1(cql_fdw_disconnect);
PG_FUNCTION_INFO_V1(cql_fdw_disconnect_all);

/*
 * cql_fdw_get_connections()
 *		One row per open connection of this backend.
 */
Datum
cql_fdw_get_connections(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS scan;
	CqlConnEntry *entry;

	InitMaterializedSRF(fcinfo, 0);
	if (ConnectionHash == NULL)
		PG_RETURN_VOID();

	hash_seq_init(&scan, ConnectionHash);
	while ((entry = (CqlConnEntry *) hash_seq_search(&scan)))
	{
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		ForeignServer *server;
		cql_conn   *control;

		if (entry->cluster == NULL)
			continue;
		server = GetForeignServerExtended(entry->serverid, FSV_MISSING_OK);
		control = cql_cluster_control(entry->cluster);
		if (server)
			values[0] = CStringGetTextDatum(server->servername);
		else
			nulls[0] = true;
		values[1] = CStringGetTextDatum(cql_conn_peer(control));
		values[2] = Int32GetDatum(cql_conn_protocol_version(control));
		values[3] = CStringGetTextDatum(cql_conn_compression(control) == CQL_COMPRESSION_LZ4
										? "lz4" : "none");
		values[4] = BoolGetDatum(!entry->invalidated &&
								 cql_conn_status(control) == CQL_OK);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * cql_fdw_statistics()
 *		What this backend's requests went through: retries and their
 *		outcome, speculative executions, server warnings, and what its
 *		cluster handles (open and closed) saw of the hosts: marked down,
 *		DOWN/UP events, topology refreshes, heartbeats and their failures.
 */
Datum
cql_fdw_statistics(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {0};
	cql_cluster_stats cs = closed_cluster_stats;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (ConnectionHash != NULL)
	{
		HASH_SEQ_STATUS scan;
		CqlConnEntry *entry;

		hash_seq_init(&scan, ConnectionHash);
		while ((entry = (CqlConnEntry *) hash_seq_search(&scan)))
			if (entry->cluster)
				add_cluster_stats(&cs, cql_cluster_get_stats(entry->cluster));
	}
	values[0] = Int64GetDatum(cqlfdw_stats.retries);
	values[1] = Int64GetDatum(cqlfdw_stats.retries_exhausted);
	values[2] = Int64GetDatum(cqlfdw_stats.speculative);
	values[3] = Int64GetDatum(cqlfdw_stats.speculative_won);
	values[4] = Int64GetDatum(cqlfdw_stats.warnings);
	values[5] = Int64GetDatum((int64) cs.hosts_marked_down);
	values[6] = Int64GetDatum((int64) cs.events_down);
	values[7] = Int64GetDatum((int64) cs.events_up);
	values[8] = Int64GetDatum((int64) cs.topology_refreshes);
	values[9] = Int64GetDatum((int64) cs.heartbeats);
	values[10] = Int64GetDatum((int64) cs.heartbeat_failures);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * disconnect_where
 *		Close the cached handles of server serverid (InvalidOid: of every
 *		server) that no running statement uses; those in use get a WARNING
 *		and stay open.  Returns whether any handle was closed.
 */
static bool
disconnect_where(Oid serverid)
{
	HASH_SEQ_STATUS scan;
	CqlConnEntry *entry;
	bool		result = false;

	if (ConnectionHash == NULL)
		return false;
	hash_seq_init(&scan, ConnectionHash);
	while ((entry = (CqlConnEntry *) hash_seq_search(&scan)))
	{
		if (entry->cluster == NULL)
			continue;
		if (OidIsValid(serverid) && entry->serverid != serverid)
			continue;
		if (entry->busy > 0)
		{
			ereport(WARNING,
					(errmsg("cannot close a connection to server in use by the current query")));
			continue;
		}
		if (entry->pending_writes)
		{
			ereport(WARNING,
					(errmsg("cannot close a connection to server with writes deferred to COMMIT"),
					 errhint("Commit or roll back the transaction first.")));
			continue;
		}
		close_entry(entry);
		result = true;
	}
	return result;
}

/*
 * cql_fdw_disconnect(server_name text) returns bool
 *		Close this backend's connections to one server, as
 *		postgres_fdw_disconnect does; true if any was closed.  An unknown
 *		server name is an error.
 */
Datum
cql_fdw_disconnect(PG_FUNCTION_ARGS)
{
	ForeignServer *server = GetForeignServerByName(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);

	PG_RETURN_BOOL(disconnect_where(server->serverid));
}

/*
 * cql_fdw_disconnect_all() returns bool
 *		Close this backend's connections to every cql_fdw server; true if
 *		any was closed.
 */
Datum
cql_fdw_disconnect_all(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(disconnect_where(InvalidOid));
}

/*
 * cqlfdw_write_timestamp
 *		Client-side write timestamp (microseconds since the Unix epoch),
 *		strictly increasing within this backend.
 *
 * Without it each coordinator stamps a write when it applies it, and the
 * writes of one statement or transaction that are pipelined on several
 * streams or sent to different coordinators may be applied in any order:
 * a DELETE followed by an INSERT of the same key (a sync trigger, a
 * deferred transaction) could leave the row deleted, and of two inserts of
 * one key the first could win.  Stamping at the time the statement produced
 * the write makes Cassandra's last-write-wins follow the order of the
 * PostgreSQL session, as the drivers' monotonic timestamp generators do.
 */
int64
cqlfdw_write_timestamp(void)
{
	static int64 last = 0;
	struct timeval tv;
	int64		now;

	gettimeofday(&tv, NULL);
	now = (int64) tv.tv_sec * INT64CONST(1000000) + tv.tv_usec;
	if (now <= last)
		now = last + 1;
	last = now;
	return now;
}

/*
 * cqlfdw_retry_busy
 *		After a send answered CQL_ERR_BUSY (every stream id of the
 *		connection is in flight): let answers arrive, then say "send
 *		again".  Returns false when *s is final: not BUSY, or the wait
 *		failed (then *s is that failure).  A pending cancel is processed
 *		while waiting.  Use as
 *			do s = cql_send_...(conn, ...); while (cqlfdw_retry_busy(conn, &s, &err));
 */
bool
cqlfdw_retry_busy(cql_conn *conn, cql_status *s, cql_error *err)
{
	cql_status	ps;

	if (*s != CQL_ERR_BUSY)
		return false;
	ps = cql_conn_pump(conn, 100, err);
	if (ps == CQL_ERR_INTERRUPTED)
		cqlfdw_check_interrupts();
	else if (ps != CQL_OK)
	{
		*s = ps;
		return false;
	}
	return true;
}

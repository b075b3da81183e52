/*-------------------------------------------------------------------------
 *
 * cql_cluster.h
 *		Cluster-level view of a Cassandra ring: contact points, the host
 *		list read from system.local / system.peers(_v2), the token ring,
 *		per-keyspace replica placement and token-aware coordinator choice
 *		with one lazily opened connection per host.
 *
 * The pure parts (contact point parsing, token parsing, cql_token_map) do
 * no I/O and are unit-tested on fixtures; cql_cluster ties them to the
 * connection layer.  Everything is single-threaded: one cql_cluster per
 * backend, never shared between threads.
 *
 * Token-aware routing is an optimisation, never a correctness matter: a
 * statement sent to a non-replica is forwarded by the server.  So any
 * doubt about the metadata (an unknown partitioner, a token we cannot
 * parse, a keyspace we do not know) switches routing off for that case
 * and the statement goes to some live host instead; the reason is kept
 * for diagnostics.
 *
 * IDENTIFICATION
 *		src/cql/cql_cluster.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_CLUSTER_H
#define CQL_CLUSTER_H

#include "cql_core.h"
#include "cql_wire.h"
#include "cql_conn.h"

/* Sanity limits on what hostile metadata may make us allocate. */
#define CQL_CLUSTER_MAX_HOSTS		4096
#define CQL_CLUSTER_MAX_TOKENS		(1024 * 1024)	/* whole ring */
#define CQL_CLUSTER_MAX_CONTACTS	256
#define CQL_CLUSTER_MAX_HOSTLEN		255

/* ---------------------------------------------------------------------
 * Contact points: "h1,h2:9043,[::1]:9042,[fe80::1]".  Items are separated
 * by commas and trimmed; a port after the last colon applies to that item
 * only; IPv6 addresses with a port must be bracketed (a bare "::1" is
 * taken as a host without port).  Duplicates are dropped.
 * ---------------------------------------------------------------------
 */
typedef struct cql_contact_point
{
	char	   *host;			/* brackets removed */
	int			port;
} cql_contact_point;

extern cql_status cql_contact_points_parse(const char *spec, int default_port,
										   const cql_allocator *a,
										   cql_contact_point **out, int *n,
										   cql_error *err);
extern void cql_contact_points_free(cql_contact_point *cps, int n,
									const cql_allocator *a);

/* ---------------------------------------------------------------------
 * Address set (cql_address_set.c): the endpoints a cluster restricted to
 * its contact points may connect to.  host:port is added by name and by
 * every address the name resolves to (through the wait hook; a name that
 * does not resolve is kept by name only).  contains() compares numeric
 * hosts in binary form and names case-insensitively, always with the
 * port.  Exported for unit tests.
 * ---------------------------------------------------------------------
 */
typedef struct cql_address_set cql_address_set;

extern cql_status cql_address_set_create(const cql_allocator *a, cql_address_set **out);
extern cql_status cql_address_set_add(cql_address_set *s, const char *host, int port,
									  cql_wait_fn wait, void *wait_ctx,
									  int timeout_ms);
extern bool cql_address_set_contains(const cql_address_set *s, const char *host,
									 int port);
extern void cql_address_set_free(cql_address_set *s);

/*
 * Parse a Murmur3 token ("-9223372036854775808" .. "9223372036854775807"):
 * optional '-', decimal digits only, no blanks; anything else or an
 * out-of-range value is CQL_ERR_MALFORMED.
 */
extern cql_status cql_token_parse(const char *s, size_t len, int64_t *out);

/* ---------------------------------------------------------------------
 * Token map: hosts (data center, rack, tokens) -> sorted ring; keyspace
 * replication -> replicas of a token.  Host numbers are the order of
 * cql_token_map_add_host calls.
 *
 * Ownership follows Cassandra: a host with ring token T owns (prev, T], so
 * the owner of a key token is the host of the first ring token >= it,
 * wrapping around to the first ring token.
 *
 * Replica placement follows the server (NetworkTopologyStrategy and
 * SimpleStrategy in org.apache.cassandra.locator), which gives the same
 * replica sets as the drivers' rack-aware walk:
 *	SimpleStrategy: walk the ring from the owner, taking distinct hosts
 *		until RF.
 *	NetworkTopologyStrategy: one walk; for each data center with RF > 0
 *		take hosts on racks not used yet; a host on an already used rack
 *		is taken only while RF - (racks of the DC) such repeats remain, so
 *		that every rack gets a replica before any rack gets two.  RF is
 *		capped by the hosts of the DC.
 *	EverywhereStrategy: every host, in ring order from the owner.
 *	LocalStrategy, unknown classes: no replicas (no routing).
 * RF "3/1" (transient replication) counts as 3: transient replicas are
 * replicas too.
 * ---------------------------------------------------------------------
 */
typedef struct cql_token_map cql_token_map;

typedef enum cql_replication_class
{
	CQL_REPL_NONE = 0,			/* unknown/invalid: no routing */
	CQL_REPL_SIMPLE,
	CQL_REPL_NTS,
	CQL_REPL_LOCAL,
	CQL_REPL_EVERYWHERE
} cql_replication_class;

extern cql_status cql_token_map_create(const cql_allocator *a, cql_token_map **out);
extern void cql_token_map_free(cql_token_map *m);

/* Add a host (before build).  dc/rack may be NULL (then "" is used). */
extern cql_status cql_token_map_add_host(cql_token_map *m, const char *dc,
										 const char *rack,
										 const int64_t *tokens, int ntokens);

/*
 * Sort the ring.  Two hosts claiming the same token: the one added first
 * keeps it (the drivers keep one owner too).  After this, no more hosts.
 */
extern cql_status cql_token_map_build(cql_token_map *m);

/*
 * Set (or replace) the replication of a keyspace from its
 * system_schema.keyspaces.replication map.  An unusable map is not an
 * error: the keyspace is recorded with CQL_REPL_NONE and the reason is
 * returned by cql_token_map_keyspace_class().
 */
extern cql_status cql_token_map_set_keyspace(cql_token_map *m, const char *keyspace,
											 const char *const *keys,
											 const char *const *values, int n);

/* The class recorded for a keyspace (CQL_REPL_NONE when unknown); *why
 * (optional) gets a static or map-owned explanation for CQL_REPL_NONE. */
extern cql_replication_class cql_token_map_keyspace_class(const cql_token_map *m,
														  const char *keyspace,
														  const char **why);

extern int	cql_token_map_nhosts(const cql_token_map *m);
extern int	cql_token_map_ntokens(const cql_token_map *m);

/* Index of the ring entry owning 'token' (-1 for an empty ring). */
extern int	cql_token_map_ring_index(const cql_token_map *m, int64_t token);

/* Host owning 'token' (-1 for an empty ring). */
extern int	cql_token_map_owner(const cql_token_map *m, int64_t token);

/*
 * Replicas of 'token' in 'keyspace': writes up to 'max' host numbers to
 * 'hosts' (primary owner first, then in placement order) and returns how
 * many there are in total (may exceed max).  0 when the keyspace is
 * unknown or not routable, or the ring is empty.  Not reentrant: uses
 * scratch space inside the map.
 */
extern int	cql_token_map_replicas(cql_token_map *m, const char *keyspace,
								   int64_t token, int *hosts, int max);

/* ---------------------------------------------------------------------
 * Topology: the rows of system.local and system.peers_v2 (or the legacy
 * system.peers) turned into a host list.  Pure: exported so that hostile
 * rows can be tested without a server.
 *
 * hosts[0] is the node of the control connection, addressed as the
 * control connection was (control_host:control_port).  Peer rows lacking
 * host_id, data_center, rack, an address or tokens are skipped, as are rows
 * describing the control node itself or repeating a host_id (the drivers
 * do the same).  A peer's address is native_address:native_port (peers_v2)
 * or rpc_address:control_port (peers); 0.0.0.0/:: means "use peer".
 *
 * Token-aware routing needs the Murmur3 partitioner and tokens that all
 * parse; otherwise token_aware is false and 'why' says what was wrong.
 * ---------------------------------------------------------------------
 */
typedef struct cql_topology_host
{
	char	   *address;
	int			port;
	char	   *datacenter;		/* "" when unknown (control node only) */
	char	   *rack;
	char		host_id[37];	/* "" when unknown */
	char	   *release_version;	/* "" when unknown */
	int			ntokens;
	int64_t    *tokens;			/* NULL when they did not parse */
} cql_topology_host;

typedef struct cql_topology
{
	char	   *cluster_name;	/* "" when absent */
	char	   *partitioner;	/* "" when absent */
	int			nhosts;
	cql_topology_host *hosts;
	int			nskipped;		/* invalid peer rows ignored */
	bool		token_aware;
	char		why[256];		/* reason when !token_aware */
} cql_topology;

/*
 * 'local': result of SELECT * FROM system.local WHERE key='local' (must
 * have a row); 'peers': result of the peers query (may be NULL).
 */
extern cql_status cql_topology_parse(const cql_result *local, const cql_result *peers,
									 const char *control_host, int control_port,
									 const cql_allocator *a,
									 cql_topology **out, cql_error *err);
extern void cql_topology_free(cql_topology *t, const cql_allocator *a);

/*
 * Build a token map (hosts in topology order) from a topology; NULL map
 * and CQL_OK when the topology is not token-aware.
 */
extern cql_status cql_topology_token_map(const cql_topology *t, const cql_allocator *a,
										 cql_token_map **out);

/*
 * Apply the rows of SELECT keyspace_name, replication FROM
 * system_schema.keyspaces to a built token map.  Rows with null or
 * undecodable cells are skipped.
 */
extern cql_status cql_token_map_load_keyspaces(cql_token_map *m, const cql_result *rows);

/* ---------------------------------------------------------------------
 * Cluster
 * ---------------------------------------------------------------------
 */
typedef struct cql_cluster cql_cluster;

typedef struct cql_cluster_options
{
	/*
	 * Template for every connection (control and per host).  host/port of
	 * the template are used only when 'hosts' is NULL.  The cluster copies
	 * the struct and the strings it knows about; callback contexts are
	 * borrowed and must outlive the cluster.  Every connection the cluster
	 * opens (control, replacement control, peers) uses this template, so
	 * e.g. require_auth holds for all of them.
	 */
	const cql_conn_options *conn;
	const char *hosts;			/* contact points, see above */
	const char *local_dc;		/* NULL/"" = no preference */
	bool		shuffle_contact_points; /* default false */
	bool		token_aware;	/* default true */
	int			down_backoff_ms;	/* first backoff of a failed host (1000) */
	int			max_backoff_ms; /* cap of the doubling backoff (60000) */

	/*
	 * contact_points_only (default false): never connect to a host that is
	 * not one of the contact points.  Peers read from system.peers(_v2)
	 * whose address:port is not a contact point (by name, or by an address
	 * the name resolved to when the cluster connected) stay in the host
	 * list and the token map, but are never used as coordinator or as a
	 * replacement control connection: routing falls back to an allowed
	 * host.  cql_host_info.allowed tells which hosts qualify.  Use it when
	 * the server's peer list is not trusted to steer connections (a
	 * hostile node could otherwise name any host:port).
	 */
	bool		contact_points_only;

	/*
	 * events (default true): REGISTER the control connection for
	 * STATUS_CHANGE and TOPOLOGY_CHANGE.  A DOWN event takes the host out
	 * of the query plans (its connection is retired), UP ends its backoff,
	 * a topology change re-reads hosts and tokens at the next routing
	 * call.  The template's on_event callback still sees every event.
	 */
	bool		events;
} cql_cluster_options;

extern void cql_cluster_options_init(cql_cluster_options *o);

/*
 * Connect the control connection to the first contact point that answers
 * (a dead one is skipped: connect error or timeout), then read the
 * topology and the keyspaces.  All dead -> CQL_ERR_NO_HOST with a message
 * naming every contact point and its error.  A local_dc that is not a data
 * center of the cluster is CQL_ERR_INVALID_ARG.
 */
extern cql_status cql_cluster_connect_opts(const cql_cluster_options *o,
										   cql_cluster **out, cql_error *err);

/* Shorthand: default options with these contact points and local DC. */
extern cql_status cql_cluster_connect(const cql_conn_options *opts,
									  const char *hosts, const char *local_dc,
									  cql_cluster **out, cql_error *err);

extern void cql_cluster_free(cql_cluster *c);

/*
 * The control connection; never NULL on a connected cluster.  When it has
 * broken, a replacement is looked for first (known hosts, then contact
 * points); if none can be opened the broken connection is returned, and its
 * calls fail with CQL_ERR_STATE carrying the original reason.
 */
extern cql_conn *cql_cluster_control(cql_cluster *c);

/* Re-read hosts, tokens and keyspace replication (after topology or
 * schema changes).  Reconnects the control connection if it broke. */
extern cql_status cql_cluster_refresh(cql_cluster *c, cql_error *err);

/* Re-read replication of all keyspaces only. */
extern cql_status cql_cluster_refresh_keyspaces(cql_cluster *c, cql_error *err);

/* Host description; strings are owned by the cluster and valid until the
 * next refresh or free. */
typedef struct cql_host_info
{
	const char *address;		/* what we connect to */
	int			port;
	const char *datacenter;
	const char *rack;
	const char *host_id;		/* "xxxxxxxx-xxxx-...", "" if unknown */
	const char *release_version;
	int			ntokens;
	bool		is_control;		/* host of the control connection */
	bool		connected;		/* has an open connection */
	bool		up;				/* not in a failure backoff */
	bool		allowed;		/* may be connected to (always true unless
								 * contact_points_only) */
} cql_host_info;

/* Fill up to max entries; returns the number of hosts. */
extern int	cql_cluster_hosts(cql_cluster *c, cql_host_info *out, int max);

/*
 * cql_conn_trim_prepared (cql_conn.h) on every connection of the cluster:
 * the caller guarantees what that function requires for all of them (no
 * prepared statement, result or pager of theirs is used again).
 */
extern int	cql_cluster_trim_prepared(cql_cluster *c, int max_entries);

/* Token of a routing key (Murmur3). */
extern int64_t cql_cluster_token(const cql_cluster *c, const uint8_t *key, size_t len);

/*
 * Is token-aware routing available?  When not, *why (optional) explains
 * (e.g. "partitioner org.apache.cassandra.dht.RandomPartitioner is not
 * supported").
 */
extern bool cql_cluster_token_aware(const cql_cluster *c, const char **why);

extern const char *cql_cluster_name(const cql_cluster *c);
extern const char *cql_cluster_partitioner(const cql_cluster *c);

/*
 * Replicas (host numbers as in cql_cluster_hosts) of a token in a
 * keyspace; returns the total (0 when routing is off or the keyspace is
 * unknown).  An unknown keyspace triggers one keyspace reload (rate
 * limited), so a keyspace created after connecting is found.
 */
extern int	cql_cluster_replicas(cql_cluster *c, const char *keyspace,
								 int64_t token, int *hosts, int max);

/*
 * Connection to the best coordinator for a partition: routing key (single
 * component value bytes, or a composite built with
 * cql_routing_key_composite) -> token -> replicas; local-DC replicas that
 * are up first, then other local hosts, then remote replicas and hosts,
 * then hosts still in backoff as a last resort.  key == NULL means "no
 * routing key": any live host, local DC first, round robin.  A host that
 * cannot be connected is marked down (doubling backoff) and the next one is
 * tried; nothing left -> CQL_ERR_NO_HOST naming each host and its error.
 * The connection stays owned by the cluster.
 */
extern cql_status cql_cluster_conn_for_key(cql_cluster *c, const char *keyspace,
										   const uint8_t *key, size_t len,
										   cql_conn **conn, cql_error *err);
extern cql_status cql_cluster_conn_for_token(cql_cluster *c, const char *keyspace,
											 const int64_t *token,
											 cql_conn **conn, cql_error *err);

/* Host number of a connection handed out by the cluster, or -1. */
extern int	cql_cluster_host_of(const cql_cluster *c, const cql_conn *conn);

/*
 * Tell the cluster a connection it handed out failed at the transport
 * level (IO, CLOSED, TIMEOUT, STATE...): it is closed and its host marked
 * down, so the next choice avoids it.  Server errors must not be
 * reported here: the host is fine.
 */
extern void cql_cluster_report_failure(cql_cluster *c, cql_conn *conn,
									   cql_status st);

/*
 * Like cql_cluster_conn_for_token (token NULL: no routing key), but the
 * hosts in 'avoid' (host numbers, e.g. those a retry already tried) are
 * moved to the end of the query plan: the next host of the plan is used,
 * and an avoided one only when nothing else is left.
 */
extern cql_status cql_cluster_conn_avoiding(cql_cluster *c, const char *keyspace,
											const int64_t *token,
											const int *avoid, int navoid,
											cql_conn **conn, cql_error *err);

/*
 * Connections the cluster stops using (host down, left the ring, control
 * connection replaced) are not closed at once: the caller may still hold
 * them, ask their status, await their failed requests and free those.
 * Call this when it holds none of them any more (e.g. between statements)
 * to close them; returns how many were closed.  cql_cluster_free closes
 * the rest.
 */
extern int	cql_cluster_release_retired(cql_cluster *c);

/*
 * Heartbeat (cql_cluster_health.c): OPTIONS on every open connection that
 * has had nothing in flight and received nothing for idle_ms, answers
 * awaited together for up to timeout_ms.  A connection that fails or does
 * not answer is broken and retired and its host marked down.  Returns the
 * number of hosts found dead; an interrupt stops it (err).  Meant for the
 * start of a statement after the handle sat idle, so that a half-open
 * connection is found before a user request waits on it.
 */
extern int	cql_cluster_heartbeat(cql_cluster *c, int idle_ms, int timeout_ms,
								  cql_error *err);

/*
 * Settle (cql_cluster_health.c): uncork every connection of the cluster
 * (hosts, control, retired) and wait until none has a request in flight,
 * orphans included, for up to timeout_ms together.  For the end of a
 * statement that failed with writes still in flight: once it returns
 * CQL_OK, Cassandra has answered every one of them, so none can be
 * applied after what the caller sends next.  A connection already broken
 * is skipped (its requests are gone).  CQL_ERR_TIMEOUT names the
 * unanswered requests in err; *unsettled (if not NULL) counts the
 * connections that still have requests in flight.
 */
extern cql_status cql_cluster_settle(cql_cluster *c, int timeout_ms,
									 int *unsettled, cql_error *err);

/*
 * Schema agreement as the drivers judge it (cql_cluster_health.c): wait
 * until system.local and every peer the cluster sees up report the same
 * schema_version, asked through conn (NULL: the control connection).  A
 * peer marked down (failures, a DOWN event, a heartbeat) or not known to
 * the cluster's host list does not count: a node that is down keeps its
 * last version in the peers table and would hold the wait to its timeout.
 */
extern cql_status cql_cluster_await_schema_agreement(cql_cluster *c, cql_conn *conn,
													 int timeout_ms, cql_error *err);

/* What the cluster has seen since it was opened. */
typedef struct cql_cluster_stats
{
	uint64_t	hosts_marked_down;	/* failures, heartbeats, DOWN events */
	uint64_t	conns_retired;
	uint64_t	events_down;
	uint64_t	events_up;
	uint64_t	events_topology;
	uint64_t	topology_refreshes; /* after TOPOLOGY_CHANGE */
	uint64_t	heartbeats;
	uint64_t	heartbeat_failures;
} cql_cluster_stats;

extern const cql_cluster_stats *cql_cluster_get_stats(const cql_cluster *c);

#endif							/* CQL_CLUSTER_H */

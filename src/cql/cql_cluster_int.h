/*-------------------------------------------------------------------------
 *
 * cql_cluster_int.h
 *		Private declarations shared by the files of the cluster layer
 *		(cql_cluster.c, cql_cluster_health.c, cql_token_map.c).  Not part
 *		of the public API.
 *
 * layer: cluster (private)
 *
 * IDENTIFICATION
 *		src/cql/cql_cluster_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_CLUSTER_INT_H
#define CQL_CLUSTER_INT_H

#include "cql_cluster.h"
#include "cql_conn_int.h"	/* cql_now_ms: the monotonic clock in ms */

/* ---- the cluster handle (cql_cluster.c, cql_cluster_health.c) ---- */
typedef struct cluster_host
{
	char	   *address;
	int			port;
	char	   *datacenter;
	char	   *rack;
	char		host_id[37];
	char	   *release_version;
	int			ntokens;
	cql_conn   *conn;			/* lazily opened; the control conn for the
								 * control host */
	int64_t		down_until;		/* monotonic ms; 0 = up */
	int			backoff_ms;		/* last backoff, 0 after a success */
	bool		allowed;		/* may be connected to (contact_points_only) */
	int64_t		heartbeat_at;	/* monotonic ms of the last heartbeat sent */
} cluster_host;

struct cql_cluster
{
	const cql_allocator *alloc;
	cql_conn_options opts;		/* template; strings below are ours */
	char	   *o_username;
	char	   *o_password;
	char	   *o_keyspace;
	char	   *o_driver_name;
	char	   *o_driver_version;
	char	   *o_application_name;
	char	   *o_application_version;
	char	   *o_client_id;

	cql_contact_point *cps;
	int			ncps;
	cql_address_set *allowed;	/* contact_points_only; NULL = any host */
	char	   *local_dc;		/* NULL = no preference */
	bool		token_aware_wanted;
	int			down_backoff_ms;
	int			max_backoff_ms;

	cql_conn   *control;		/* also hosts[control_host].conn */
	char	   *control_addr;	/* address/port the control conn uses */
	int			control_port;

	cluster_host *hosts;
	int			nhosts;
	char	   *cluster_name;
	char	   *partitioner;
	cql_token_map *tm;			/* NULL when not token-aware */
	char		why[256];		/* why not token-aware */
	int64_t		keyspaces_loaded_at;

	/* scratch for coordinator choice, nhosts entries each */
	int		   *plan;
	int		   *reps;
	int		   *scratch;
	bool	   *mark;
	unsigned	rr;				/* round robin for key-less choices */

	/*
	 * Connections taken from their host (it went down, left the ring, or
	 * the control connection was replaced) but possibly still referenced
	 * by the caller: a request in flight, a task about to be retried.
	 * Closed by cql_cluster_release_retired() at a quiet point, or on free.
	 */
	cql_conn  **retired;
	int			nretired;
	int			capretired;

	/* events (cql_cluster_health.c) */
	bool		events_wanted;	/* option: REGISTER the control connection */
	cql_event_fn user_on_event; /* the template's callback, chained */
	void	   *user_event_ctx;
	cql_conn   *registered;		/* connection REGISTERed for events */
	bool		topology_stale; /* TOPOLOGY_CHANGE seen: refresh when idle */
	int64_t		events_polled_at;	/* last non-blocking read of events */
	cql_cluster_stats stats;
};

/* ---- cql_cluster.c, used by cql_cluster_health.c ---- */

/* Not in a failure backoff at monotonic time 'now' (ms). */
static inline bool
cql_cluster_host_is_up(const cluster_host *h, int64_t now)
{
	return h->down_until == 0 || now >= h->down_until;
}

extern void cql_cluster_mark_down(cql_cluster *c, cluster_host *h);
extern void cql_cluster_mark_up(cluster_host *h);

/* ---- cql_cluster_health.c, used by cql_cluster.c ---- */
extern void cql_cluster_on_event(void *ctx, const cql_event *ev);
extern void cql_cluster_register_events(cql_cluster *c);
extern void cql_cluster_poll_events(cql_cluster *c);

/* ---- cql_token_map.c ---- */
extern bool cql_token_map_has_keyspace(const cql_token_map *m, const char *keyspace);

#endif							/* CQL_CLUSTER_INT_H */

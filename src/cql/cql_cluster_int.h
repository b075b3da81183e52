/*-------------------------------------------------------------------------
 *
 * cql_cluster_int.h
 *		Private declarations shared by the files of the cluster layer
 *		(cql_cluster.c, cql_token_map.c).  Not part of the public API.
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

/* ---- cql_token_map.c ---- */
extern bool cql_token_map_has_keyspace(const cql_token_map *m, const char *keyspace);

#endif							/* CQL_CLUSTER_INT_H */

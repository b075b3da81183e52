/*-------------------------------------------------------------------------
 *
 * cql_sysrows.h
 *		Private: cell readers for rows of system tables (cql_sysrows.c),
 *		used by cql_schema.c, cql_topology.c and cql_token_map.c.  Not
 *		part of the public API.
 *
 * layer: session (private)
 *
 * IDENTIFICATION
 *		src/cql/cql_sysrows.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_SYSROWS_H
#define CQL_SYSROWS_H

#include "cql_wire.h"

/* index of the column 'name' in a Rows result, -1 when absent */
extern int	cql_sysrow_col(const cql_result *r, const char *name);
/* the cell, or NULL when the row or column is absent or the value null */
extern const cql_elem *cql_sysrow_cell(const cql_result *r, int row, int col);
/* a text cell as a new string; NULL if absent, empty when 'nonempty', or
 * containing a NUL byte (*nomem set when allocation failed) */
extern char *cql_sysrow_text(const cql_allocator *a, const cql_result *r,
							 int row, int col, bool nonempty, bool *nomem);
extern bool cql_sysrow_inet(const cql_result *r, int row, int col, char out[46]);
extern bool cql_sysrow_uuid(const cql_result *r, int row, int col, char out[37]);
extern bool cql_sysrow_int(const cql_result *r, int row, int col, int32_t *v);

#endif							/* CQL_SYSROWS_H */

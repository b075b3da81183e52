/*-------------------------------------------------------------------------
 *
 * cql_sysrows.c
 *		Reading cells of system tables (system.local/peers,
 *		system_schema.*), shared by the topology, token-map and schema
 *		readers.  A missing column, a null or a value of the wrong size all
 *		read as "absent"; callers decide whether that makes the row
 *		unusable.  No I/O: helpers over decoded results.
 *
 * layer: session (no I/O; used by the session and cluster layers)
 *
 * IDENTIFICATION
 *		src/cql/cql_sysrows.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_sysrows.h"

#include <string.h>

int
cql_sysrow_col(const cql_result *r, const char *name)
{
	if (!r || r->kind != CQL_RESULT_ROWS || !r->meta.cols)
		return -1;
	for (int i = 0; i < r->meta.ncols; i++)
		if (r->meta.cols[i].name && strcmp(r->meta.cols[i].name, name) == 0)
			return i;
	return -1;
}

const cql_elem *
cql_sysrow_cell(const cql_result *r, int row, int col)
{
	const cql_elem *e;

	if (col < 0 || row < 0 || row >= r->rows_count || !r->cells)
		return NULL;
	e = cql_result_cell(r, row, col);
	return (!e || e->n < 0 || (e->n > 0 && !e->p)) ? NULL : e;
}

/* A text cell as a new string; NULL if absent, empty when 'nonempty', or
 * containing a NUL byte. */
char *
cql_sysrow_text(const cql_allocator *a, const cql_result *r, int row, int col,
		  bool nonempty, bool *nomem)
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);
	char	   *s;

	if (!e || (nonempty && e->n == 0) || (e->n > 0 && memchr(e->p, 0, (size_t) e->n)))
		return NULL;
	if (!(s = cql_strndup(a, (const char *) e->p, (size_t) e->n)))
		*nomem = true;
	return s;
}

bool
cql_sysrow_inet(const cql_result *r, int row, int col, char out[46])
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);
	int			family;
	uint8_t		addr[16];

	return e && cql_decode_inet(e->p, e->n, &family, addr) == CQL_OK &&
		cql_inet_to_string(family, addr, out) == CQL_OK;
}

bool
cql_sysrow_uuid(const cql_result *r, int row, int col, char out[37])
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);
	uint8_t		u[16];

	if (!e || cql_decode_uuid(e->p, e->n, u) != CQL_OK)
		return false;
	cql_uuid_to_string(u, out);
	return true;
}

bool
cql_sysrow_int(const cql_result *r, int row, int col, int32_t *v)
{
	const cql_elem *e = cql_sysrow_cell(r, row, col);

	return e && cql_decode_int(e->p, e->n, v) == CQL_OK;
}

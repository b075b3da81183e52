/*-------------------------------------------------------------------------
 *
 * modify_int.h
 *		State of a foreign table being written, shared by modify.c (plan,
 *		begin, one row, send and await) and insert.c (the INSERT paths
 *		above it: batches, COPY, tuple routing).  Private to those two.
 *
 * IDENTIFICATION
 *		src/fdw/modify_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_MODIFY_INT_H
#define CQL_FDW_MODIFY_INT_H

#include "nodes/execnodes.h"

#include "convert.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "remote.h"

/* requests, and rows in them, in flight at once for a pipelined insert */
#define MAX_WRITES_IN_FLIGHT	256
#define MAX_ROWS_IN_FLIGHT		512
/* connections (nodes) a batch insert corks at once */
#define CQLFDW_MAX_CORKED		64

/* fdw_private of a ModifyTable entry */
enum FdwModifyPrivateIndex
{
	FdwModifyPrivateCql,		/* String: the statement */
	FdwModifyPrivateBindAttrs,	/* IntList: attnum of each marker (0 = the
								 * option ttl) */
	FdwModifyPrivateBindKinds,	/* IntList: CqlModBind of each marker */
	FdwModifyPrivateHasReturning,	/* Integer */
	FdwModifyPrivateDoNothing	/* Integer: ON CONFLICT DO NOTHING */
};

/* Where the value of a bind marker comes from */
typedef enum CqlModBind
{
	MODBIND_NEW = 0,			/* the new row (INSERT values, UPDATE SET) */
	MODBIND_KEY,				/* the old row's key (junk column) */
	MODBIND_COUNTER,			/* counter delta of "n = n + x" */
	MODBIND_TTL,				/* USING TTL ?: a TTL column or option ttl */
	MODBIND_TIMESTAMP			/* USING TIMESTAMP ?: a write time column */
} CqlModBind;

typedef struct CqlPendingWrite
{
	cql_request *req;
	cql_conn   *conn;
	int			nrows;			/* rows in the request (a batch: several) */
	bool		has_token;		/* routing: token of the partition */
	int64		token;
	CqlRetry	retry;
	uint64		first_line;		/* COPY: lines of its rows (0 = not COPY) */
	uint64		last_line;
} CqlPendingWrite;

/* One encoded row of an insert, ready to be sent or grouped */
typedef struct CqlRowWrite
{
	cql_value_ref *values;
	const uint8_t *key;			/* routing key: the partition */
	size_t		keylen;
	uint8_t    *pkey;			/* the whole primary key, encoded */
	size_t		pkeylen;
	size_t		bytes;			/* size of the bound values */
	uint64		line;			/* COPY: the row's line (0 = not COPY) */
} CqlRowWrite;

typedef struct CqlModifyState
{
	CqlRemote	remote;			/* statement, options, layout, connection */
	Relation	rel;
	const char *relname;
	CmdType		operation;
	int			nbinds;
	AttrNumber *bind_attrs;
	CqlModBind *bind_kinds;
	AttrNumber *junk_attnos;	/* per bind: junk column of a key */
	CqlConv    *convs;			/* per bind */
	MemoryContext temp_cxt;		/* per row */
	int			batch_size;
	bool		has_returning;
	bool		stamp_writes;	/* send client-side write timestamps */
	AttrNumber *old_attnos;		/* DELETE RETURNING: junk column per attr */

	/* pipelined inserts */
	CqlPendingWrite *pending;
	int			npending;
	int			rows_in_flight;
	bool		cork;			/* batch insert: cork connections used */
	cql_conn   *corked[CQLFDW_MAX_CORKED];
	int			ncorked;

	/* INSERT ... ON CONFLICT DO NOTHING: IF NOT EXISTS, no error */
	bool		do_nothing;
	bool		not_applied;	/* the last row existed (DO NOTHING) */

	/* COPY (insert.c): rows staged one by one, sent as batches */
	bool		from_copy;		/* begun by BeginForeignInsert for COPY */
	bool		staging;
	CqlRowWrite *staged;		/* batch_size of them, in stage_cxt */
	int			nstaged;
	MemoryContext stage_cxt;
} CqlModifyState;

extern List *cqlfdw_modify_plan_insert(Relation rel, const CqlFdwTable *t,
									   const CqlFdwOptions *opts,
									   Bitmapset *inserted, bool do_nothing,
									   bool has_returning);
extern void cqlfdw_modify_begin(CqlModifyState *ms, Relation rel, List *fdw_private,
								EState *estate, ResultRelInfo *rinfo,
								List *subplan_tlist);
extern void cqlfdw_modify_prepare_row(CqlModifyState *ms, TupleTableSlot *slot,
									  TupleTableSlot *planSlot, CqlRowWrite *w);
extern bool cqlfdw_modify_send_row(CqlModifyState *ms, TupleTableSlot *slot,
								   TupleTableSlot *planSlot, CqlPendingWrite *pw);
extern void cqlfdw_modify_send_rows(CqlModifyState *ms, CqlRowWrite **rows,
									int nrows, CqlPendingWrite *pw);
extern void cqlfdw_modify_drain(CqlModifyState *ms, int keep);
extern void cqlfdw_modify_uncork(CqlModifyState *ms);
extern void cqlfdw_modify_write_one_row(CqlModifyState *ms, TupleTableSlot *slot,
										TupleTableSlot *planSlot);
extern void cqlfdw_modify_returning_as_stored(CqlModifyState *ms,
											  TupleTableSlot *slot);

#endif							/* CQL_FDW_MODIFY_INT_H */

/*-------------------------------------------------------------------------
 *
 * write_metadata.h
 *		Write metadata columns: WRITETIME() and TTL() of a column read, and
 *		USING TIMESTAMP / USING TTL written, through foreign-table columns
 *		(write_metadata.c).
 *
 * IDENTIFICATION
 *		src/fdw/write_metadata.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_WRITE_METADATA_H
#define CQL_FDW_WRITE_METADATA_H

#include "access/tupdesc.h"
#include "datatype/timestamp.h"
#include "executor/tuptable.h"
#include "nodes/bitmapset.h"

#include "cql_fdw.h"

/* Cassandra's largest TTL: 20 years (Attributes.MAX_TTL) */
#define CQLFDW_MAX_TTL			630720000

/* The metadata columns a write names, found by cqlfdw_meta_plan_write */
typedef struct CqlMetaWrite
{
	AttrNumber	ttl_attnum;		/* its value is USING TTL ?; 0 = none */
	AttrNumber	ts_attnum;		/* its value is USING TIMESTAMP ?; 0 = none */
} CqlMetaWrite;

extern void cqlfdw_meta_resolve(CqlFdwTable *t, Oid relid);
extern bool cqlfdw_meta_is_multicell(const char *cql_type);
extern void cqlfdw_meta_plan_write(const CqlFdwTable *t, TupleDesc tupdesc,
								   const char *relname, Bitmapset *written,
								   bool if_not_exists, CqlMetaWrite *mw);
extern int32 cqlfdw_meta_check_ttl(int32 ttl, const char *relname,
								   const char *colname);
extern int64 cqlfdw_meta_check_timestamp(int64 us, const char *relname,
										 const char *colname);

extern void cqlfdw_meta_check_timestamptz(TimestampTz ts, const char *relname,
										  const char *colname);

extern bool cqlfdw_meta_value(const CqlFdwTable *t, TupleTableSlot *slot,
							  AttrNumber a, bool is_ttl, int option_ttl,
							  const char *relname, Datum *d);

#endif							/* CQL_FDW_WRITE_METADATA_H */

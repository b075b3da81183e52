/*-------------------------------------------------------------------------
 *
 * bucket.h
 *		Bucket columns: a partition-key column whose value is computed from
 *		other columns (a time bucket of a timestamp, a hash bucket of key
 *		columns), so that wide partitions are split while the SQL stays the
 *		application's.
 *
 * IDENTIFICATION
 *		src/fdw/bucket.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_BUCKET_H
#define CQL_FDW_BUCKET_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "executor/tuptable.h"
#include "nodes/primnodes.h"

#include "cql_fdw.h"

/* hash buckets merged in clustering order by one scan, at most */
#define CQLFDW_MAX_MERGE_BUCKETS	64

/* the bucket values a range covers, in time order */
typedef struct CqlBucketList
{
	int			n;
	Datum	   *values;			/* of the bucket column's type */
} CqlBucketList;

extern bool cqlfdw_bucket_parse(const char *s, CqlBucketSpec *spec,
								const char **why);
extern const char *cqlfdw_bucket_describe(const CqlBucketSpec *spec);
extern void cqlfdw_bucket_resolve(CqlFdwTable *t, Oid relid, const char *relname);

extern TimestampTz cqlfdw_bucket_start(const CqlBucketSpec *spec, TimestampTz ts);
extern TimestampTz cqlfdw_bucket_next(const CqlBucketSpec *spec, TimestampTz start);
extern int32 cqlfdw_bucket_hash(int n, int nvals, const char *const *vals);
extern Datum cqlfdw_bucket_hash_datum(const CqlFdwTable *t, AttrNumber bucket_att,
									  const Datum *vals, const Oid *types);

extern bool cqlfdw_bucket_time_of(Datum d, Oid type, Oid coltype, TimestampTz *out);
extern Datum cqlfdw_bucket_datum(TimestampTz start, Oid bucket_type);
extern Datum cqlfdw_bucket_compute(const CqlFdwTable *t, AttrNumber bucket_att,
								   TupleTableSlot *slot, bool *isnull);
extern bool cqlfdw_bucket_range(const CqlFdwTable *t, AttrNumber bucket_att,
								bool has_lo, Datum lo, Oid lo_type, bool lo_incl,
								bool has_hi, Datum hi, Oid hi_type, bool hi_incl,
								bool descending, int max_buckets,
								const char *relname, CqlBucketList *out);
extern int	cqlfdw_bucket_count_planned(const CqlFdwTable *t, AttrNumber bucket_att,
										Expr *lo, int lo_kind, Expr *hi, int hi_kind,
										int max_buckets);

#endif							/* CQL_FDW_BUCKET_H */

/*-------------------------------------------------------------------------
 *
 * convert.h
 *		Conversion between CQL values and PostgreSQL Datums (convert.c).
 *
 * IDENTIFICATION
 *		src/fdw/convert.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_CONVERT_H
#define CQL_FDW_CONVERT_H

#include "fmgr.h"
#include "utils/array.h"

#include "cql_core.h"
#include "cql_types.h"
#include "cql_wire.h"

typedef enum CqlConvMethod
{
	CONV_BOOL,
	CONV_INT2,
	CONV_INT4,
	CONV_INT8,
	CONV_FLOAT4,
	CONV_FLOAT8,
	CONV_NUMERIC,
	CONV_TEXT,					/* text-like CQL types, raw */
	CONV_TEXT_LITERAL,			/* any CQL type as its CQL literal */
	CONV_TEXT_IO,				/* text-like CQL types as the text form of an
								 * enum, citext, cidr, macaddr (their I/O) */
	CONV_BYTEA,
	CONV_UUID,
	CONV_TIMESTAMPTZ,
	CONV_TIMESTAMP,				/* UTC wall clock */
	CONV_DATE,
	CONV_TIME,
	CONV_INTERVAL,
	CONV_INET,
	CONV_JSONB,					/* any CQL type as JSON */
	CONV_JSON,
	CONV_ARRAY,					/* list, set, vector -> array */
	CONV_PGVECTOR,				/* vector<float, n> -> pgvector's vector(n) */
	CONV_MICROS					/* bigint microseconds (a write time) ->
								 * timestamptz */
} CqlConvMethod;

/*
 * What a timestamp with digits below the millisecond becomes when it is
 * written (option timestamp_precision; docs/cql_fdw.md).  CQLTS_EXACT, the
 * zero value, is for values compared with stored ones (pushed-down
 * predicates, cql_query parameters): such an instant equals no stored
 * timestamp, so it is unrepresentable, never moved.
 */
typedef enum CqlTsPrecision
{
	CQLTS_EXACT = 0,
	CQLTS_TRUNCATE,				/* floor to the millisecond, as the Java driver */
	CQLTS_ROUND,				/* nearest millisecond, as ::timestamptz(3) */
	CQLTS_ERROR					/* refuse the write */
} CqlTsPrecision;

/*
 * Why cqlfdw_conv_write found no CQL value equal to a Datum: each refusal
 * gets its own detail and hint (cqlfdw_conv_refusal_errdetail).
 */
typedef enum CqlRefusal
{
	CQLREF_NONE = 0,
	CQLREF_INT_RANGE,			/* integer outside tinyint/smallint/int */
	CQLREF_FRACTION,			/* fractional numeric into an integer type */
	CQLREF_NOT_FINITE,			/* numeric NaN or +-Infinity */
	CQLREF_FLOAT_PRECISION,		/* double that no float equals */
	CQLREF_ASCII,				/* non-ASCII character for ascii */
	CQLREF_TIMEUUID,			/* UUID other than version 1 */
	CQLREF_SUBMS,				/* timestamp with sub-millisecond digits */
	CQLREF_INFINITE,			/* infinite timestamp or date */
	CQLREF_NETWORK,				/* inet/cidr with a netmask */
	CQLREF_NULL_ELEMENT,		/* NULL in an array for a collection */
	CQLREF_MULTIDIM,			/* array of more than one dimension */
	CQLREF_DIMENSION,			/* vector of another dimension */
	CQLREF_DURATION,			/* interval Cassandra's duration cannot hold */
	CQLREF_TIME_24,				/* time 24:00:00, past CQL's last time */
	CQLREF_LITERAL				/* text/JSON that is no value of the type */
} CqlRefusal;

/*
 * How to convert one column (or array element).  Built once per scan or
 * modify by cqlfdw_conv_init; ctype is borrowed and must outlive it.
 */
typedef struct CqlConv
{
	CqlConvMethod method;
	const cql_type *ctype;
	Oid			pgtype;
	int32		typmod;
	bool		use_infunc;		/* typmod-constrained: go through input */
	FmgrInfo	infunc;
	Oid			ioparam;
	FmgrInfo	outfunc;
	/* CONV_PGVECTOR: the type's binary receive and send functions */
	FmgrInfo	recvfunc;
	FmgrInfo	sendfunc;
	/* CONV_ARRAY */
	struct CqlConv *elem;
	Oid			elemtype;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	/* writes: sub-millisecond timestamps (also for array elements) */
	CqlTsPrecision ts_precision;
	/* set by cqlfdw_conv_write when it returns CQLW_UNREPRESENTABLE */
	CqlRefusal	refusal;
	const cql_type *refused_type;	/* the (element) type that refused */
} CqlConv;

/* Outcome of converting a Datum for Cassandra */
typedef enum CqlWriteResult
{
	CQLW_OK = 0,
	CQLW_UNREPRESENTABLE		/* no CQL value of that type equals it */
} CqlWriteResult;

/* palloc in the current context, for the library's stateless functions */
extern const cql_allocator cqlfdw_palloc_allocator;
extern void cqlfdw_array_elements(ArrayType *arr, Oid elemtype, Datum **elems,
								  bool **nulls, int *n, int16 *len, bool *byval);

extern bool cqlfdw_conv_init(CqlConv *cv, const cql_type *ctype, Oid pgtype,
							 int32 typmod);
extern void cqlfdw_conv_init_or_error(CqlConv *cv, const cql_type *ctype,
									  Oid pgtype, int32 typmod,
									  const char *relname, const char *colname);
struct CqlFdwTable;
extern void cqlfdw_conv_init_column(CqlConv *cv, const cql_type *ctype,
									const struct CqlFdwTable *t, AttrNumber a,
									Oid pgtype, int32 typmod,
									const char *relname, const char *colname);
/* convert_jsonb.c: a received value read as jsonb */
extern Datum cqlfdw_jsonb_from_cql(const cql_type *t, const uint8_t *p, int32_t n);
extern Datum cqlfdw_conv_read(CqlConv *cv, const uint8_t *p, int32_t n,
							  bool *isnull);
extern CqlWriteResult cqlfdw_conv_write(CqlConv *cv, Datum d, cql_buf *out);
extern void cqlfdw_conv_write_or_error(CqlConv *cv, Datum d, cql_buf *out);
extern void cqlfdw_conv_set_ts_precision(CqlConv *cv, CqlTsPrecision p);
extern int	cqlfdw_conv_refusal_errdetail(const CqlConv *cv);
extern bool cqlfdw_timestamp_to_millis(int64 pg_us, CqlTsPrecision p,
									   int64 *ms);
extern int64 cqlfdw_timestamp_as_stored(int64 pg_us, CqlTsPrecision p);
extern void cqlfdw_check_rows(const cql_result *page, int ncols,
							  const CqlConv *convs, int nconvs,
							  const char *what, const char *cql);
extern Oid	cqlfdw_pgvector_type(void);
extern char *cqlfdw_cql_type_string(const cql_type *t);
extern cql_status cqlfdw_format_cql(const cql_type *t, const uint8_t *p, int32_t n,
									cql_format_style style, char **out, int *len);
extern const uint8_t *cqlfdw_routing_key(const cql_elem *parts, int nparts,
										 size_t *len);

#endif							/* CQL_FDW_CONVERT_H */

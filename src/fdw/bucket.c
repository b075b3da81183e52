/*-------------------------------------------------------------------------
 *
 * bucket.c
 *		Bucket columns: a partition-key column whose value derives from
 *		other columns of the row, declared with the column options
 *		bucket ('day', '6 hours', 'month', 'hash 16', ...) and bucket_of
 *		(the source column, or the comma-separated columns of a hash).
 *
 * A partition that would grow past Cassandra's comfortable size (about
 * 100,000 values or 100 MB) gets a bucket column in its partition key.  The
 * application's SQL must not have to know it: a range on the source
 * column reads exactly the buckets that range covers (scan.c enumerates
 * them with cqlfdw_bucket_range), and INSERT fills the bucket column from
 * the source (cqlfdw_bucket_compute).
 *
 * Time buckets are aligned in UTC, as Cassandra's timestamps are: hours
 * and days counted from 1970-01-01 00:00, weeks from Monday 1970-01-05,
 * months from January 1970, each floored to a multiple of the bucket's
 * size; years to a multiple of their size.  The bucket column holds the
 * bucket's start (CQL timestamp, or date for units of a day or more).
 * Hash buckets hold Cassandra's Murmur3 token of the sources' text forms
 * (each as a 4-byte big-endian length and its bytes), modulo N, as int;
 * their sources are integers, text or uuid, whose text form is canonical.
 * cqlbridge computes the same values with the SQL functions
 * cql_time_bucket and cql_hash_bucket defined here.
 *
 * IDENTIFICATION
 *		src/fdw/bucket.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "bucket.h"
#include "cql_wire.h"

/* 1970-01-01 and Monday 1970-01-05 in PostgreSQL's microseconds */
#define UNIX_EPOCH_USECS	((int64) (UNIX_EPOCH_JDATE - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)
#define FIRST_MONDAY_USECS	(UNIX_EPOCH_USECS + 4 * USECS_PER_DAY)

/* ---------------------------------------------------------------------
 * The spec
 * ---------------------------------------------------------------------
 */

/* floor division and its remainder, for values before 1970 */
static int64
floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/*
 * cqlfdw_bucket_parse
 *		Parse the column option bucket: "[N ]unit[s]" with unit hour, day,
 *		week, month or year, or "hash N".  False with *why on bad input.
 */
bool
cqlfdw_bucket_parse(const char *s, CqlBucketSpec *spec, const char **why)
{
	static const struct
	{
		const char *name;
		CqlBucketUnit unit;
		int			max;		/* largest sensible multiple */
	}			units[] = {
		{"hour", CQLBUCKET_HOUR, 24 * 366},
		{"day", CQLBUCKET_DAY, 3660},
		{"week", CQLBUCKET_WEEK, 520},
		{"month", CQLBUCKET_MONTH, 1200},
		{"year", CQLBUCKET_YEAR, 1000},
	};
	char		word[16];
	long		n = 1;
	const char *p = s;
	int			len = 0;

	memset(spec, 0, sizeof(*spec));
	*why = NULL;
	while (*p == ' ')
		p++;
	if (strncmp(p, "hash", 4) == 0 && (p[4] == ' ' || p[4] == '\0'))
	{
		char	   *end;

		p += 4;
		while (*p == ' ')
			p++;
		n = strtol(p, &end, 10);
		if (end == p || *end != '\0' || n < 2 || n > 65536)
		{
			*why = "A hash bucket needs its number of buckets, from 2 to 65536.";
			return false;
		}
		spec->unit = CQLBUCKET_HASH;
		spec->n = (int) n;
		return true;
	}
	if (*p >= '0' && *p <= '9')
	{
		char	   *end;

		n = strtol(p, &end, 10);
		if (n < 1 || *end != ' ')
		{
			*why = "The multiple of a time unit must be a positive integer followed by a space.";
			return false;
		}
		p = end;
		while (*p == ' ')
			p++;
	}
	while (p[len] >= 'a' && p[len] <= 'z' && len < (int) sizeof(word) - 1)
	{
		word[len] = p[len];
		len++;
	}
	word[len] = '\0';
	if (p[len] != '\0' && p[len] != ' ')
	{
		*why = "Only lower-case unit names are understood.";
		return false;
	}
	for (const char *q = p + len; *q; q++)
		if (*q != ' ')
		{
			*why = "Unexpected text after the unit.";
			return false;
		}
	if (len > 1 && word[len - 1] == 's')
		word[len - 1] = '\0';
	for (int i = 0; i < lengthof(units); i++)
	{
		if (strcmp(word, units[i].name) != 0)
			continue;
		if (n > units[i].max)
		{
			*why = "The multiple is larger than any sensible bucket.";
			return false;
		}
		spec->unit = units[i].unit;
		spec->n = (int) n;
		return true;
	}
	*why = "Unknown unit.";
	return false;
}

/*
 * cqlfdw_bucket_describe
 *		"day", "6 hour", "hash 16": for EXPLAIN and messages (palloc'd).
 */
const char *
cqlfdw_bucket_describe(const CqlBucketSpec *spec)
{
	static const char *const names[] = {"", "hour", "day", "week", "month", "year", "hash"};

	if (spec->unit == CQLBUCKET_HASH || spec->n != 1)
		return psprintf("%s %d", names[spec->unit], spec->n);
	return names[spec->unit];
}

/* ---------------------------------------------------------------------
 * Time arithmetic (UTC)
 * ---------------------------------------------------------------------
 */

/*
 * months_to_timestamp
 *		Midnight UTC of the first day of month m counted from January 1970.
 */
static TimestampTz
months_to_timestamp(int64 m)
{
	struct pg_tm tm;
	Timestamp	result;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = (int) (1970 + floor_div(m, 12));
	tm.tm_mon = (int) (m - floor_div(m, 12) * 12) + 1;
	tm.tm_mday = 1;
	if (tm2timestamp(&tm, 0, NULL, &result) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("bucket start out of range")));
	return result;
}

/*
 * cqlfdw_bucket_start
 *		The start of the time bucket that holds ts (a finite timestamp,
 *		read as UTC).
 */
TimestampTz
cqlfdw_bucket_start(const CqlBucketSpec *spec, TimestampTz ts)
{
	int64		size;

	switch (spec->unit)
	{
		case CQLBUCKET_HOUR:
			size = (int64) spec->n * USECS_PER_HOUR;
			return UNIX_EPOCH_USECS + floor_div(ts - UNIX_EPOCH_USECS, size) * size;
		case CQLBUCKET_DAY:
			size = (int64) spec->n * USECS_PER_DAY;
			return UNIX_EPOCH_USECS + floor_div(ts - UNIX_EPOCH_USECS, size) * size;
		case CQLBUCKET_WEEK:
			size = (int64) spec->n * 7 * USECS_PER_DAY;
			return FIRST_MONDAY_USECS + floor_div(ts - FIRST_MONDAY_USECS, size) * size;
		case CQLBUCKET_MONTH:
		case CQLBUCKET_YEAR:
			{
				struct pg_tm tm;
				fsec_t		fsec;
				int64		m;

				if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
					ereport(ERROR,
							(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
							 errmsg("timestamp out of range")));
				if (spec->unit == CQLBUCKET_MONTH)
				{
					m = (int64) (tm.tm_year - 1970) * 12 + tm.tm_mon - 1;
					return months_to_timestamp(floor_div(m, spec->n) * spec->n);
				}
				m = floor_div(tm.tm_year, spec->n) * spec->n;
				return months_to_timestamp((m - 1970) * 12);
			}
		default:
			elog(ERROR, "not a time bucket");
	}
	return 0;					/* keep the compiler quiet */
}

/*
 * cqlfdw_bucket_next
 *		The start of the bucket after the one that starts at 'start'.
 */
TimestampTz
cqlfdw_bucket_next(const CqlBucketSpec *spec, TimestampTz start)
{
	switch (spec->unit)
	{
		case CQLBUCKET_HOUR:
			return start + (int64) spec->n * USECS_PER_HOUR;
		case CQLBUCKET_DAY:
			return start + (int64) spec->n * USECS_PER_DAY;
		case CQLBUCKET_WEEK:
			return start + (int64) spec->n * 7 * USECS_PER_DAY;
		case CQLBUCKET_MONTH:
		case CQLBUCKET_YEAR:
			{
				struct pg_tm tm;
				fsec_t		fsec;
				int64		m;

				if (timestamp2tm(start, NULL, &tm, &fsec, NULL, NULL) != 0)
					ereport(ERROR,
							(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
							 errmsg("timestamp out of range")));
				m = (int64) (tm.tm_year - 1970) * 12 + tm.tm_mon - 1;
				return months_to_timestamp(m + (spec->unit == CQLBUCKET_MONTH
												 ? spec->n : 12 * spec->n));
			}
		default:
			elog(ERROR, "not a time bucket");
	}
	return 0;
}

/*
 * cqlfdw_bucket_time_of
 *		The instant (UTC frame) a value d of type 'type' stands for when it
 *		is compared with a column of type coltype (timestamptz, timestamp or
 *		date): converted to the column's type first, as PostgreSQL's
 *		cross-type comparison does (a timestamp against a timestamptz column
 *		is read in the session's time zone).  A timestamp column and a
 *		date's midnight are read as UTC, as cql_fdw writes them.  False for
 *		infinities and types that are none of these.
 */
bool
cqlfdw_bucket_time_of(Datum d, Oid type, Oid coltype, TimestampTz *out)
{
	if (type != coltype)
	{
		PGFunction cast = NULL;

		if (coltype == TIMESTAMPTZOID)
			cast = type == TIMESTAMPOID ? timestamp_timestamptz :
				type == DATEOID ? date_timestamptz : NULL;
		else if (coltype == TIMESTAMPOID || coltype == DATEOID)
		{
			/* a date column: its midnight is compared as a timestamp */
			cast = type == TIMESTAMPTZOID ? timestamptz_timestamp :
				type == DATEOID ? date_timestamp : NULL;
			if (type == TIMESTAMPOID)
			{
				*out = DatumGetTimestamp(d);
				return !TIMESTAMP_NOT_FINITE(*out);
			}
		}
		if (cast == NULL)
			return false;
		d = DirectFunctionCall1(cast, d);
		type = coltype == DATEOID ? TIMESTAMPOID : coltype;
	}
	if (type == DATEOID)
	{
		DateADT		date = DatumGetDateADT(d);

		if (DATE_NOT_FINITE(date))
			return false;
		*out = (TimestampTz) date * USECS_PER_DAY;
		return true;
	}
	if (type != TIMESTAMPTZOID && type != TIMESTAMPOID)
		return false;
	*out = DatumGetTimestampTz(d);
	return !TIMESTAMP_NOT_FINITE(*out);
}

/*
 * cqlfdw_bucket_datum
 *		A bucket start as a value of the bucket column's type.
 */
Datum
cqlfdw_bucket_datum(TimestampTz start, Oid bucket_type)
{
	if (bucket_type == DATEOID)
		return DateADTGetDatum((DateADT) floor_div(start, USECS_PER_DAY));
	return TimestampTzGetDatum(start);
}

/* ---------------------------------------------------------------------
 * Hash buckets
 * ---------------------------------------------------------------------
 */

/*
 * cqlfdw_bucket_hash
 *		Bucket 0..n-1 of the values' text forms: Cassandra's Murmur3 token of
 *		their concatenation, each as a 4-byte big-endian length and bytes.
 */
int32
cqlfdw_bucket_hash(int n, int nvals, const char *const *vals)
{
	StringInfoData buf;
	int64		h;

	initStringInfo(&buf);
	for (int i = 0; i < nvals; i++)
	{
		uint32		len = (uint32) strlen(vals[i]);
		unsigned char be[4] = {len >> 24, len >> 16, len >> 8, len};

		appendBinaryStringInfo(&buf, (const char *) be, 4);
		appendBinaryStringInfo(&buf, vals[i], (int) len);
	}
	h = cql_murmur3_token((const uint8_t *) buf.data, buf.len);
	pfree(buf.data);
	h %= n;
	return (int32) (h < 0 ? h + n : h);
}

/*
 * cqlfdw_bucket_hash_datum
 *		The value of hash bucket column bucket_att for its source values
 *		(non-NULL, of the given types), through their text forms: what
 *		INSERT writes for a row and what a scan binding every source by =
 *		reads.
 */
Datum
cqlfdw_bucket_hash_datum(const CqlFdwTable *t, AttrNumber bucket_att,
						 const Datum *vals, const Oid *types)
{
	const CqlFdwColumn *c = &t->cols[bucket_att - 1];
	const char **texts = palloc(sizeof(char *) * c->nbucket_src);
	int32		b;

	for (int i = 0; i < c->nbucket_src; i++)
	{
		Oid			out;
		bool		varlena;

		getTypeOutputInfo(types[i], &out, &varlena);
		texts[i] = OidOutputFunctionCall(out, vals[i]);
	}
	b = cqlfdw_bucket_hash(c->bucket.n, c->nbucket_src, texts);
	return c->pgtype == INT8OID ? Int64GetDatum(b) : Int32GetDatum(b);
}

/* Types whose text form is one per value, and so hashable by text */
static bool
hashable_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID ||
		type == TEXTOID || type == VARCHAROID || type == UUIDOID;
}

/* ---------------------------------------------------------------------
 * The table's bucket columns
 * ---------------------------------------------------------------------
 */

/* time bucket column and source types */
static bool
time_type(Oid type)
{
	return type == TIMESTAMPTZOID || type == TIMESTAMPOID || type == DATEOID;
}

/*
 * cqlfdw_bucket_resolve
 *		Check the bucket columns of a table layout and resolve bucket_of to
 *		attribute numbers.  A column with one of the two options but not the
 *		other, an unknown source, a source of a type that cannot be
 *		bucketed, or a bucket column of the wrong type is an error: a wrong
 *		bucket would put rows in partitions where no read finds them.
 */
void
cqlfdw_bucket_resolve(CqlFdwTable *t, Oid relid, const char *relname)
{
	for (int i = 0; i < t->natts; i++)
	{
		CqlFdwColumn *c = &t->cols[i];
		List	   *names;
		ListCell   *lc;
		char	   *copy;
		const char *colname;

		if (c->remote_name == NULL ||
			(c->bucket.unit == CQLBUCKET_NONE && c->bucket_of == NULL))
			continue;
		colname = get_attname(relid, i + 1, false);
		if (c->bucket.unit == CQLBUCKET_NONE || c->bucket_of == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("column \"%s\" of foreign table \"%s\" needs both options bucket and bucket_of",
							colname, relname),
					 errhint("Example: OPTIONS (bucket 'day', bucket_of 'reported_at').")));
		copy = pstrdup(c->bucket_of);
		if (!SplitIdentifierString(copy, ',', &names) || names == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("invalid value for option \"bucket_of\" of column \"%s\": \"%s\"",
							colname, c->bucket_of),
					 errhint("Give the source column, or for a hash bucket the source columns separated by commas.")));
		if (c->bucket.unit != CQLBUCKET_HASH && list_length(names) != 1)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("time bucket column \"%s\" must have one source column", colname),
					 errhint("Only hash buckets (bucket 'hash N') take several columns.")));
		c->nbucket_src = 0;
		c->bucket_src = palloc(sizeof(AttrNumber) * list_length(names));
		foreach(lc, names)
		{
			const char *src = (const char *) lfirst(lc);
			AttrNumber	a = get_attnum(relid, src);
			Oid			st;

			if (a == InvalidAttrNumber || a > t->natts || t->cols[a - 1].remote_name == NULL ||
				a == i + 1)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("bucket_of of column \"%s\" names \"%s\", which is not another column of foreign table \"%s\"",
								colname, src, relname),
						 errhint("bucket_of takes column names of the same foreign table.")));
			st = t->cols[a - 1].pgtype;
			if (c->bucket.unit == CQLBUCKET_HASH ? !hashable_type(st) : !time_type(st))
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("column \"%s\" of type %s cannot be the source of a %s bucket",
								src, format_type_be(st),
								c->bucket.unit == CQLBUCKET_HASH ? "hash" : "time"),
						 c->bucket.unit == CQLBUCKET_HASH
						 ? errhint("Hash buckets take smallint, integer, bigint, text, varchar or uuid columns.")
						 : errhint("Time buckets take a timestamp with or without time zone or a date column.")));
			c->bucket_src[c->nbucket_src++] = a;
		}
		if (c->bucket.unit == CQLBUCKET_HASH
			? (c->pgtype != INT4OID && c->pgtype != INT8OID)
			: (!time_type(c->pgtype) ||
			   (c->pgtype == DATEOID && c->bucket.unit == CQLBUCKET_HOUR)))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("bucket column \"%s\" of type %s cannot hold %s buckets",
							colname, format_type_be(c->pgtype),
							cqlfdw_bucket_describe(&c->bucket)),
					 errhint("A time bucket column is a timestamp (any unit) or a date (a day or more); a hash bucket column is an integer.")));
	}
}

/*
 * cqlfdw_bucket_compute
 *		The bucket column's value for the row in slot, computed from its
 *		sources; *isnull when a source is NULL.
 */
Datum
cqlfdw_bucket_compute(const CqlFdwTable *t, AttrNumber bucket_att,
					  TupleTableSlot *slot, bool *isnull)
{
	const CqlFdwColumn *c = &t->cols[bucket_att - 1];

	*isnull = false;
	if (c->bucket.unit == CQLBUCKET_HASH)
	{
		Datum	   *vals = palloc(sizeof(Datum) * c->nbucket_src);
		Oid		   *types = palloc(sizeof(Oid) * c->nbucket_src);

		for (int i = 0; i < c->nbucket_src; i++)
		{
			AttrNumber	a = c->bucket_src[i];

			vals[i] = slot_getattr(slot, a, isnull);
			types[i] = t->cols[a - 1].pgtype;
			if (*isnull)
				return (Datum) 0;
		}
		return cqlfdw_bucket_hash_datum(t, bucket_att, vals, types);
	}
	else
	{
		AttrNumber	a = c->bucket_src[0];
		Oid			st = t->cols[a - 1].pgtype;
		Datum		d = slot_getattr(slot, a, isnull);
		TimestampTz ts;

		if (*isnull)
			return (Datum) 0;
		if (!cqlfdw_bucket_time_of(d, st, st, &ts))
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("an infinite %s cannot be put in a bucket",
							format_type_be(st))));
		return cqlfdw_bucket_datum(cqlfdw_bucket_start(&c->bucket, ts), c->pgtype);
	}
}

/*
 * enumerate_buckets
 *		The buckets of column bucket_att that a range of its source covers:
 *		lo/hi (of types lo_type/hi_type, inclusive or not) compared with the
 *		source column, in time order, into out (when not NULL).  Returns
 *		their number (0: the range is empty).  An open or infinite bound or
 *		more than max_buckets buckets is an error with a hint when 'raise',
 *		else -1.
 */
static int
enumerate_buckets(const CqlFdwTable *t, AttrNumber bucket_att,
				  bool has_lo, Datum lo, Oid lo_type, bool lo_incl,
				  bool has_hi, Datum hi, Oid hi_type, bool hi_incl,
				  int max_buckets, bool raise, const char *relname,
				  CqlBucketList *out)
{
	const CqlFdwColumn *c = &t->cols[bucket_att - 1];
	AttrNumber	sa = c->bucket_src[0];
	const char *src = t->cols[sa - 1].remote_name;
	Oid			st = t->cols[sa - 1].pgtype;
	TimestampTz lo_ts = 0,
				hi_ts = 0,
				b;
	int			n = 0;

	if (!has_lo || !has_hi ||
		!cqlfdw_bucket_time_of(lo, lo_type, st, &lo_ts) ||
		!cqlfdw_bucket_time_of(hi, hi_type, st, &hi_ts))
	{
		if (!raise)
			return -1;
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_CREATE_EXECUTION),
				 errmsg("cannot read the %s buckets of \"%s\" in foreign table \"%s\" for an open range",
						cqlfdw_bucket_describe(&c->bucket), src, relname),
				 errdetail("The range on \"%s\" has no %s bound, or an infinite one.", src,
						   !has_lo ? "lower" : !has_hi ? "upper" : "finite"),
				 errhint("Bound the range on both sides (%s >= ... AND %s < ...), or give the bucket column a value.",
						 src, src)));
	}
	if (lo_ts > hi_ts || (lo_ts == hi_ts && !(lo_incl && hi_incl)))
		return 0;

	/*
	 * A bucket starting at b meets the range when b <= hi (b < hi when the
	 * upper bound is exclusive: "< a bucket's start" ends in the one before)
	 */
	if (out)
		out->values = palloc(sizeof(Datum) * Min(max_buckets + 1, 1024));
	for (b = cqlfdw_bucket_start(&c->bucket, lo_ts);
		 hi_incl ? b <= hi_ts : b < hi_ts;
		 b = cqlfdw_bucket_next(&c->bucket, b))
	{
		if (n >= max_buckets)
		{
			if (!raise)
				return -1;
			ereport(ERROR,
					(errcode(ERRCODE_FDW_UNABLE_TO_CREATE_EXECUTION),
					 errmsg("the range on \"%s\" covers more than %d %s buckets of foreign table \"%s\"",
							src, max_buckets, cqlfdw_bucket_describe(&c->bucket), relname),
					 errhint("Narrow the range, or raise the table or server option max_buckets.")));
		}
		if (out)
		{
			if (n > 0 && n % 1024 == 0)
				out->values = repalloc(out->values, sizeof(Datum) * (n + 1024));
			out->values[n] = cqlfdw_bucket_datum(b, c->pgtype);
		}
		n++;
	}
	return n;
}

/*
 * cqlfdw_bucket_range
 *		The bucket values a scan reads (see enumerate_buckets), newest first
 *		when 'descending'; a hash bucket's are 0..N-1.  False when the range
 *		is empty.
 */
bool
cqlfdw_bucket_range(const CqlFdwTable *t, AttrNumber bucket_att,
					bool has_lo, Datum lo, Oid lo_type, bool lo_incl,
					bool has_hi, Datum hi, Oid hi_type, bool hi_incl,
					bool descending, int max_buckets,
					const char *relname, CqlBucketList *out)
{
	const CqlFdwColumn *c = &t->cols[bucket_att - 1];
	int			n;

	if (c->bucket.unit == CQLBUCKET_HASH)
	{
		out->n = c->bucket.n;
		out->values = palloc(sizeof(Datum) * out->n);
		for (int i = 0; i < out->n; i++)
			out->values[i] = c->pgtype == INT8OID ? Int64GetDatum(i) : Int32GetDatum(i);
		return true;
	}
	n = enumerate_buckets(t, bucket_att, has_lo, lo, lo_type, lo_incl,
						  has_hi, hi, hi_type, hi_incl, max_buckets, true,
						  relname, out);
	out->n = n;
	if (descending)
		for (int i = 0; i < n / 2; i++)
		{
			Datum		x = out->values[i];

			out->values[i] = out->values[n - 1 - i];
			out->values[n - 1 - i] = x;
		}
	return n > 0;
}

/*
 * cqlfdw_bucket_count_planned
 *		How many buckets a scan will read, for costs and EXPLAIN, when the
 *		planner knows it: hash buckets, or a range whose bounds are
 *		constants.  -1 when unknown (parameters, open or too wide ranges).
 */
int
cqlfdw_bucket_count_planned(const CqlFdwTable *t, AttrNumber bucket_att,
							Expr *lo, int lo_kind, Expr *hi, int hi_kind,
							int max_buckets)
{
	const CqlFdwColumn *c = &t->cols[bucket_att - 1];
	Const	   *l = (Const *) lo;
	Const	   *h = (Const *) hi;

	if (c->bucket.unit == CQLBUCKET_HASH)
		return c->bucket.n;
	if (l == NULL || h == NULL || !IsA(l, Const) || !IsA(h, Const))
		return -1;
	if (l->constisnull || h->constisnull)
		return 0;
	return enumerate_buckets(t, bucket_att, true, l->constvalue, l->consttype,
							 lo_kind != CQLBIND_GT, true, h->constvalue, h->consttype,
							 hi_kind != CQLBIND_LT, max_buckets, false, "", NULL);
}

/* ---------------------------------------------------------------------
 * SQL functions, for cqlbridge and users
 * ---------------------------------------------------------------------
 */

/* parse the spec argument of a SQL function, or raise the option's error */
static CqlBucketSpec
spec_arg(text *t, bool want_hash)
{
	CqlBucketSpec spec;
	const char *why;
	char	   *s = text_to_cstring(t);

	if (!cqlfdw_bucket_parse(s, &spec, &why) ||
		(spec.unit == CQLBUCKET_HASH) != want_hash)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid time bucket: \"%s\"", s),
				 errdetail("%s", why ? why : "A hash bucket is not a time bucket."),
				 errhint("Valid values are a time unit (hour, day, week, month, year), optionally with a multiple (\"6 hours\").")));
	return spec;
}

PG_FUNCTION_INFO_V1(cql_time_bucket_timestamptz);

/*
 * cql_time_bucket(spec text, ts timestamptz) -> timestamptz
 *		The start of ts's bucket, as the FDW computes a bucket column.  Also
 *		the timestamp variant: the same 64-bit microseconds, read as UTC.
 *		The date variant below reads the date's midnight as UTC.
 */
Datum
cql_time_bucket_timestamptz(PG_FUNCTION_ARGS)
{
	CqlBucketSpec spec = spec_arg(PG_GETARG_TEXT_PP(0), false);
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(1);

	if (TIMESTAMP_NOT_FINITE(ts))
		PG_RETURN_TIMESTAMPTZ(ts);
	PG_RETURN_TIMESTAMPTZ(cqlfdw_bucket_start(&spec, ts));
}

PG_FUNCTION_INFO_V1(cql_time_bucket_date);

Datum
cql_time_bucket_date(PG_FUNCTION_ARGS)
{
	CqlBucketSpec spec = spec_arg(PG_GETARG_TEXT_PP(0), false);
	DateADT		d = PG_GETARG_DATEADT(1);

	if (DATE_NOT_FINITE(d))
		PG_RETURN_DATEADT(d);
	if (spec.unit == CQLBUCKET_HOUR)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a date cannot be put in hour buckets"),
				 errhint("Use a unit of a day or more, or a timestamp.")));
	PG_RETURN_DATUM(cqlfdw_bucket_datum(cqlfdw_bucket_start(&spec, (TimestampTz) d * USECS_PER_DAY),
										DATEOID));
}

PG_FUNCTION_INFO_V1(cql_hash_bucket);

/*
 * cql_hash_bucket(n int, VARIADIC vals text[]) -> int
 *		The hash bucket of the values' text forms, as the FDW computes a
 *		bucket column bucket 'hash n'.  NULL when a value is NULL.
 */
Datum
cql_hash_bucket(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	const char **vals;

	if (n < 2 || n > 65536)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of hash buckets must be between 2 and 65536")));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);
	if (nelems == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cql_hash_bucket needs at least one value")));
	vals = palloc(sizeof(char *) * nelems);
	for (int i = 0; i < nelems; i++)
	{
		if (nulls[i])
			PG_RETURN_NULL();
		vals[i] = TextDatumGetCString(elems[i]);
	}
	PG_RETURN_INT32(cqlfdw_bucket_hash(n, nelems, vals));
}

/*-------------------------------------------------------------------------
 *
 * convert.c
 *		The one place where CQL values become PostgreSQL Datums and back.
 *
 * Default mapping (what IMPORT FOREIGN SCHEMA declares):
 *	ascii, text, varchar -> text         int -> integer
 *	bigint, counter -> bigint            smallint, tinyint -> smallint
 *	boolean -> boolean                   float -> real, double -> double precision
 *	decimal, varint -> numeric (exact)   uuid, timeuuid -> uuid
 *	timestamp -> timestamptz (ms, UTC)   date -> date, time -> time
 *	duration -> interval                 blob -> bytea, inet -> inet
 *	list/set of a scalar -> array        vector<float, n> -> real[], or
 *	                                     pgvector's vector(n) when the
 *	                                     extension is installed
 *	map, tuple, UDT, nested collections -> jsonb
 * A column may also be declared wider (integer types into wider integers
 * or numeric, float into double), as text (CQL literal form) or as jsonb
 * or json (JSON form) for any CQL type.  Anything else is refused when the
 * table is first used, naming the table and column.
 *
 * Binary conversions never depend on DateStyle, TimeZone or extra_float_
 * digits: timestamps are milliseconds since the epoch in UTC both ways.
 * A written timestamp with digits below the millisecond is truncated,
 * rounded or refused as option timestamp_precision says (the writers set
 * it on their converters); compared values are never moved.
 * Precision that PostgreSQL cannot hold is documented: CQL time and
 * duration carry nanoseconds, PostgreSQL microseconds (truncated on read).
 *
 * IDENTIFICATION
 *		src/fdw/convert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/socket.h>

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "libpq/pqformat.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/inet.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "compat.h"
#include "convert.h"
#include "cql_wire.h"
#include "cql_fdw.h"

/* Microseconds between the Unix epoch and the PostgreSQL epoch */
#define PG_EPOCH_OFFSET_US \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)
#define PG_EPOCH_OFFSET_DAYS (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE)

/*
 * is_text_like
 *		Is the CQL type one whose value is its UTF-8 text (ascii,
 *		text/varchar), read and written as raw bytes rather than through its
 *		literal form?
 */
static bool
is_text_like(cql_type_id id)
{
	return id == CQL_TYPE_ASCII || id == CQL_TYPE_VARCHAR;
}

/*
 * prepare_io
 *		Look up the input and output functions of cv->pgtype, for the
 *		conversions that go through text (numeric, the character types,
 *		json, jsonb).
 */
static void
prepare_io(CqlConv *cv)
{
	Oid			infunc;
	Oid			outfunc;
	bool		isvarlena;

	getTypeInputInfo(cv->pgtype, &infunc, &cv->ioparam);
	fmgr_info(infunc, &cv->infunc);
	getTypeOutputInfo(cv->pgtype, &outfunc, &isvarlena);
	fmgr_info(outfunc, &cv->outfunc);
}

/*
 * cqlfdw_pgvector_type
 *		OID of pgvector's "vector" type in this database, InvalidOid when the
 *		extension is not installed.
 */
Oid
cqlfdw_pgvector_type(void)
{
	Oid			ext = get_extension_oid("vector", true);

	if (!OidIsValid(ext))
		return InvalidOid;
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("vector"),
						   ObjectIdGetDatum(cqlfdw_extension_schema(ext)));
}

/*
 * init_pgvector
 *		vector<float, n> as pgvector's vector: its binary form (int16
 *		dimension, int16 unused, then big-endian float4s) ends with exactly
 *		the CQL value's bytes, so the conversion goes through the type's own
 *		receive and send functions and depends on no internal layout.  A
 *		typmod (vector(n)) must equal the CQL dimension.
 */
static bool
init_pgvector(CqlConv *cv, Oid base)
{
	Oid			recv;
	Oid			send;
	bool		isvarlena;

	cv->method = CONV_PGVECTOR;
	if (cv->ctype->id != CQL_TYPE_VECTOR || cv->ctype->nsub != 1 ||
		cv->ctype->sub[0]->id != CQL_TYPE_FLOAT)
		return false;
	if (cv->typmod >= 0 && cv->typmod != cv->ctype->dimension)
		return false;
	getTypeBinaryInputInfo(base, &recv, &cv->ioparam);
	fmgr_info(recv, &cv->recvfunc);
	getTypeBinaryOutputInfo(base, &send, &isvarlena);
	fmgr_info(send, &cv->sendfunc);
	return true;
}

/*
 * has_text_form
 *		Whether values of base type 'base' are kept exactly by their text
 *		form, so a CQL text column can hold them: an enum (its label), a
 *		string type of an extension (citext), cidr, macaddr and macaddr8.
 *		Reads go through the type's input function, writes through its
 *		output function.
 */
static bool
has_text_form(Oid base)
{
	char		category;
	bool		preferred;

	if (base == CIDROID || base == MACADDROID || base == MACADDR8OID || type_is_enum(base))
		return true;
	if (OidIsValid(get_element_type(base)))
		return false;
	get_type_category_preferred(base, &category, &preferred);
	return category == TYPCATEGORY_STRING;
}

/*
 * cqlfdw_conv_init
 *		Decide how CQL type 'ctype' converts to PostgreSQL type 'pgtype'.
 *		Returns false if they are incompatible.
 */
bool
cqlfdw_conv_init(CqlConv *cv, const cql_type *ctype, Oid pgtype, int32 typmod)
{
	cql_type_id id = ctype->id;
	Oid			base = getBaseType(pgtype);

	memset(cv, 0, sizeof(*cv));
	cv->ctype = ctype;
	cv->pgtype = pgtype;
	cv->typmod = typmod;

	switch (base)
	{
		case BOOLOID:
			cv->method = CONV_BOOL;
			return id == CQL_TYPE_BOOLEAN;
		case INT2OID:
			cv->method = CONV_INT2;
			return id == CQL_TYPE_SMALLINT || id == CQL_TYPE_TINYINT;
		case INT4OID:
			cv->method = CONV_INT4;
			return id == CQL_TYPE_INT || id == CQL_TYPE_SMALLINT ||
				id == CQL_TYPE_TINYINT;
		case INT8OID:
			cv->method = CONV_INT8;
			return id == CQL_TYPE_BIGINT || id == CQL_TYPE_COUNTER ||
				id == CQL_TYPE_INT || id == CQL_TYPE_SMALLINT ||
				id == CQL_TYPE_TINYINT;
		case FLOAT4OID:
			cv->method = CONV_FLOAT4;
			return id == CQL_TYPE_FLOAT;
		case FLOAT8OID:
			cv->method = CONV_FLOAT8;
			return id == CQL_TYPE_DOUBLE || id == CQL_TYPE_FLOAT;
		case NUMERICOID:
			cv->method = CONV_NUMERIC;
			prepare_io(cv);
			return id == CQL_TYPE_DECIMAL || id == CQL_TYPE_VARINT ||
				id == CQL_TYPE_BIGINT || id == CQL_TYPE_COUNTER ||
				id == CQL_TYPE_INT || id == CQL_TYPE_SMALLINT ||
				id == CQL_TYPE_TINYINT;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			prepare_io(cv);
			/* a domain's input function checks its constraint */
			cv->use_infunc = (base != TEXTOID || typmod >= 0 || pgtype != base);
			cv->method = is_text_like(id) ? CONV_TEXT : CONV_TEXT_LITERAL;
			return true;
		case BYTEAOID:
			cv->method = CONV_BYTEA;
			return id == CQL_TYPE_BLOB;
		case UUIDOID:
			cv->method = CONV_UUID;
			return id == CQL_TYPE_UUID || id == CQL_TYPE_TIMEUUID;
		case TIMESTAMPTZOID:
			cv->method = CONV_TIMESTAMPTZ;
			return id == CQL_TYPE_TIMESTAMP;
		case TIMESTAMPOID:
			cv->method = CONV_TIMESTAMP;
			return id == CQL_TYPE_TIMESTAMP;
		case DATEOID:
			cv->method = CONV_DATE;
			return id == CQL_TYPE_DATE;
		case TIMEOID:
			cv->method = CONV_TIME;
			return id == CQL_TYPE_TIME;
		case INTERVALOID:
			cv->method = CONV_INTERVAL;
			return id == CQL_TYPE_DURATION;
		case INETOID:
			cv->method = CONV_INET;
			return id == CQL_TYPE_INET;
		case JSONBOID:
			cv->method = CONV_JSONB;
			prepare_io(cv);
			return true;
		case JSONOID:
			cv->method = CONV_JSON;
			prepare_io(cv);
			return true;
		default:
			break;
	}

	/* an enum, citext, cidr, macaddr: its text form in a text column */
	if (is_text_like(id) && has_text_form(base))
	{
		cv->method = CONV_TEXT_IO;
		prepare_io(cv);
		return true;
	}

	/* pgvector's vector */
	if (!OidIsValid(get_element_type(base)) && base == cqlfdw_pgvector_type())
		return init_pgvector(cv, base);

	/* arrays: list, set or vector of something the element type takes */
	if (OidIsValid(get_element_type(base)) &&
		(id == CQL_TYPE_LIST || id == CQL_TYPE_SET || id == CQL_TYPE_VECTOR) &&
		ctype->nsub == 1)
	{
		const cql_type *et = ctype->sub[0];

		/* nested collections only go to jsonb */
		if (et->id == CQL_TYPE_LIST || et->id == CQL_TYPE_SET ||
			et->id == CQL_TYPE_MAP || et->id == CQL_TYPE_VECTOR)
			return false;
		cv->method = CONV_ARRAY;
		cv->elemtype = get_element_type(base);
		get_typlenbyvalalign(cv->elemtype, &cv->elmlen, &cv->elmbyval, &cv->elmalign);
		cv->elem = palloc(sizeof(CqlConv));
		return cqlfdw_conv_init(cv->elem, et, cv->elemtype, -1);
	}
	return false;
}

/*
 * cqlfdw_conv_init_or_error
 *		As cqlfdw_conv_init, but types that cannot be converted are an ERROR
 *		naming the foreign table and column.
 */
void
cqlfdw_conv_init_or_error(CqlConv *cv, const cql_type *ctype, Oid pgtype,
						  int32 typmod, const char *relname, const char *colname)
{
	if (!cqlfdw_conv_init(cv, ctype, pgtype, typmod))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("column \"%s\" of foreign table \"%s\" has type %s, which cannot hold Cassandra type %s",
						colname, relname, format_type_be(pgtype),
						cqlfdw_cql_type_string(ctype)),
				 errhint("Declare the column with a compatible type (IMPORT FOREIGN SCHEMA shows the default mapping), or as jsonb or text.")));
}

/*
 * cqlfdw_conv_init_column
 *		As cqlfdw_conv_init_or_error for attribute a of table t, whose
 *		value is read from or written to a result column or bind marker of
 *		CQL type ctype.  A write time column (write_metadata.c) of type
 *		timestamp with time zone is read from, and written as, the bigint
 *		microseconds since 1970-01-01 UTC of WRITETIME() and USING TIMESTAMP.
 */
void
cqlfdw_conv_init_column(CqlConv *cv, const cql_type *ctype,
						const CqlFdwTable *t, AttrNumber a, Oid pgtype,
						int32 typmod, const char *relname, const char *colname)
{
	if (t->cols[a - 1].meta == CQLMETA_WRITETIME &&
		getBaseType(pgtype) == TIMESTAMPTZOID && ctype->id == CQL_TYPE_BIGINT)
	{
		memset(cv, 0, sizeof(*cv));
		cv->method = CONV_MICROS;
		cv->ctype = ctype;
		cv->pgtype = pgtype;
		cv->typmod = typmod;
		return;
	}
	cqlfdw_conv_init_or_error(cv, ctype, pgtype, typmod, relname, colname);
}

/*
 * cqlfdw_check_rows
 *		Refuse a page of rows that does not have the shape it will be read
 *		with.
 *
 * Cells are read by position, into converters built for the statement's
 * result columns.  A server that is broken, hostile, or whose table changed
 * between pages could send a page with fewer columns, none at all, or
 * other types; reading it would run past the cell array or misread the
 * bytes.  Every consumer of rows (scans, ANALYZE, write results) calls
 * this before touching a cell.  ncols is the number of result columns of
 * the statement; convs, if not NULL, the converters of its first nconvs
 * columns, whose CQL types the page must still have.  what names the
 * relation for the message, cql is the statement for the context.
 */
void
cqlfdw_check_rows(const cql_result *page, int ncols, const CqlConv *convs,
				  int nconvs, const char *what, const char *cql)
{
	const char *problem = NULL;

	if (page->kind != CQL_RESULT_ROWS)
		problem = "a result that is not rows";
	else if (page->meta.ncols != ncols)
		problem = psprintf("%d result columns where %d were asked for",
						   page->meta.ncols, ncols);
	else if (!cql_result_has_columns(page, ncols))
		problem = "rows without column descriptions";
	else if (convs)
	{
		for (int i = 0; i < nconvs && i < ncols; i++)
			if (!cql_type_equal(page->meta.cols[i].type, convs[i].ctype))
			{
				problem = psprintf("column %d as %s where %s was prepared",
								   i + 1,
								   cqlfdw_cql_type_string(page->meta.cols[i].type),
								   cqlfdw_cql_type_string(convs[i].ctype));
				break;
			}
	}
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INCONSISTENT_DESCRIPTOR_INFORMATION),
				 errmsg("Cassandra returned rows that do not match the statement for %s", what),
				 errdetail("The server sent %s.", problem),
				 errhint("If the Cassandra table was altered, run the statement again (or recreate the foreign table with IMPORT FOREIGN SCHEMA); otherwise the server is not a working CQL node."),
				 cql ? errcontext("remote CQL: %s", cql) : 0));
}

/* ---------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------
 */

/*
 * bad_value
 *		ERROR for a received value that is not a valid value of its CQL type
 *		(wrong length, malformed content, a time out of range); st says why.
 */
static void
bad_value(CqlConv *cv, cql_status st)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("invalid %s value received from Cassandra: %s",
					cqlfdw_cql_type_string(cv->ctype), cql_status_message(st))));
}

/*
 * out_of_range
 *		ERROR for a received date or timestamp outside the range of the
 *		PostgreSQL type.
 */
static void
out_of_range(CqlConv *cv)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("Cassandra %s value is out of range for type %s",
					cqlfdw_cql_type_string(cv->ctype), format_type_be(cv->pgtype))));
}

/*
 * timestamp_out_of_range
 *		ERROR for a received CQL timestamp (ms since 1970-01-01 UTC) outside
 *		PostgreSQL's timestamp range, naming the value.
 */
static void
timestamp_out_of_range(CqlConv *cv, int64 ms)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("Cassandra timestamp %lld (milliseconds since 1970-01-01 UTC) is out of range for type %s",
					(long long) ms, format_type_be(cv->pgtype)),
			 errdetail("PostgreSQL's timestamps run from 4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999999 UTC."),
			 errhint("Declare the column as text or jsonb to read such values (as milliseconds since 1970-01-01), or correct the row in Cassandra.")));
}

/*
 * cqlfdw_array_elements
 *		The elements of a one-dimensional array whose elements are of type
 *		elemtype, as deconstruct_array gives them (palloc'd Datums and null
 *		flags) with the element type's storage looked up; *len and *byval
 *		(where not NULL) say how to copy or compare the Datums.
 */
void
cqlfdw_array_elements(ArrayType *arr, Oid elemtype, Datum **elems, bool **nulls,
					  int *n, int16 *len, bool *byval)
{
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;

	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign, elems, nulls, n);
	if (len)
		*len = elmlen;
	if (byval)
		*byval = elmbyval;
}

/* Integer of any CQL integer type, widened to int64 */
static int64
read_integer(CqlConv *cv, const uint8_t *p, int32_t n)
{
	int64_t		v;
	cql_status	st;

	/* the default: other integer-like types (timestamp, time) are 8 bytes */
	st = cql_decode_integer(cv->ctype->id == CQL_TYPE_TINYINT ||
							cv->ctype->id == CQL_TYPE_SMALLINT ||
							cv->ctype->id == CQL_TYPE_INT ?
							cv->ctype->id : CQL_TYPE_BIGINT, p, n, &v);
	if (st != CQL_OK)
		bad_value(cv, st);
	return v;
}

/* The value rendered by the protocol library, as a palloc'd C string */
static char *
format_value(CqlConv *cv, const uint8_t *p, int32_t n, cql_format_style style)
{
	char	   *s;
	cql_status	st = cqlfdw_format_cql(cv->ctype, p, n, style, &s, NULL);

	if (st != CQL_OK)
		bad_value(cv, st);
	return s;
}

/*
 * text_datum
 *		Datum of a UTF-8 string for a character column.
 *
 * The text is converted to the server encoding (invalid or unconvertible
 * text is an error).  With use_infunc (varchar, char, a typmod or a
 * domain) it goes through the type's input function, so that length
 * limits, padding and a domain's constraint apply; otherwise it becomes a
 * text Datum directly.
 */
static Datum
text_datum(CqlConv *cv, const char *utf8, int len)
{
	char	   *s = pg_any_to_server(utf8, len, PG_UTF8);

	if (cv->use_infunc)
	{
		if (s == utf8)
			s = pnstrdup(utf8, len);
		return InputFunctionCall(&cv->infunc, s, cv->ioparam, cv->typmod);
	}
	return PointerGetDatum(cstring_to_text_with_len(s, s == utf8 ? len : strlen(s)));
}

/*
 * read_array
 *		Datum of a list, set or vector cell: a one-dimensional array (lower
 *		bound 1) of the elements converted by cv->elem, a null element as
 *		NULL; an empty collection reads as an empty array.
 */
static Datum
read_array(CqlConv *cv, const uint8_t *p, int32_t n)
{
	cql_elem   *elems;
	int32_t		count;
	cql_status	st;
	Datum	   *values;
	bool	   *nulls;
	int			dims[1];
	int			lbs[1] = {1};

	st = cql_split_value(cv->ctype, p, n, &cqlfdw_palloc_allocator, &elems, &count);
	if (st != CQL_OK)
		bad_value(cv, st);
	values = palloc(sizeof(Datum) * Max(count, 1));
	nulls = palloc(sizeof(bool) * Max(count, 1));
	for (int i = 0; i < count; i++)
		values[i] = cqlfdw_conv_read(cv->elem, elems[i].p, elems[i].n, &nulls[i]);
	dims[0] = count;
	if (count == 0)
		return PointerGetDatum(construct_empty_array(cv->elemtype));
	return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs,
											  cv->elemtype, cv->elmlen,
											  cv->elmbyval, cv->elmalign));
}

/*
 * cqlfdw_conv_read
 *		Datum of one received cell (n == -1: NULL).
 *
 * A zero-length value of a type that is not a string, blob or collection is
 * Cassandra's "empty" value (legal for historical reasons); it reads as NULL.
 */
Datum
cqlfdw_conv_read(CqlConv *cv, const uint8_t *p, int32_t n, bool *isnull)
{
	cql_status	st;

	*isnull = false;
	if (n < 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (n == 0 && !is_text_like(cv->ctype->id) && cv->ctype->id != CQL_TYPE_BLOB &&
		cv->method != CONV_TEXT_LITERAL)
	{
		*isnull = true;
		return (Datum) 0;
	}

	switch (cv->method)
	{
		case CONV_BOOL:
			{
				bool		v;

				if ((st = cql_decode_boolean(p, n, &v)) != CQL_OK)
					bad_value(cv, st);
				return BoolGetDatum(v);
			}
		case CONV_INT2:
			return Int16GetDatum((int16) read_integer(cv, p, n));
		case CONV_INT4:
			return Int32GetDatum((int32) read_integer(cv, p, n));
		case CONV_INT8:
			return Int64GetDatum(read_integer(cv, p, n));
		case CONV_FLOAT4:
			{
				float		v;

				if ((st = cql_decode_float(p, n, &v)) != CQL_OK)
					bad_value(cv, st);
				return Float4GetDatum(v);
			}
		case CONV_FLOAT8:
			if (cv->ctype->id == CQL_TYPE_FLOAT)
			{
				float		v;

				if ((st = cql_decode_float(p, n, &v)) != CQL_OK)
					bad_value(cv, st);
				return Float8GetDatum((double) v);
			}
			else
			{
				double		v;

				if ((st = cql_decode_double(p, n, &v)) != CQL_OK)
					bad_value(cv, st);
				return Float8GetDatum(v);
			}
		case CONV_NUMERIC:
			{
				cql_buf		b;
				char	   *s;

				if (cv->ctype->id != CQL_TYPE_DECIMAL && cv->ctype->id != CQL_TYPE_VARINT)
					return DirectFunctionCall1(int8_numeric,
											   Int64GetDatum(read_integer(cv, p, n)));
				cql_buf_init(&b, &cqlfdw_palloc_allocator);
				st = (cv->ctype->id == CQL_TYPE_DECIMAL)
					? cql_decimal_to_string(p, n, &b)
					: cql_varint_to_string(p, n, &b);
				if (st == CQL_OK)
					st = cql_buf_status(&b);
				if (st != CQL_OK)
					bad_value(cv, st);
				s = pnstrdup((const char *) b.data, b.len);
				return InputFunctionCall(&cv->infunc, s, cv->ioparam, cv->typmod);
			}
		case CONV_TEXT:
			return text_datum(cv, (const char *) p, n);
		case CONV_TEXT_LITERAL:
			{
				char	   *s = format_value(cv, p, n, CQL_FORMAT_TEXT);

				return text_datum(cv, s, strlen(s));
			}
		case CONV_TEXT_IO:
			{
				char	   *s = pg_any_to_server((const char *) p, n, PG_UTF8);

				if (s == (const char *) p)
					s = pnstrdup((const char *) p, n);
				return InputFunctionCall(&cv->infunc, s, cv->ioparam, cv->typmod);
			}
		case CONV_BYTEA:
			{
				bytea	   *b = palloc(VARHDRSZ + n);

				SET_VARSIZE(b, VARHDRSZ + n);
				memcpy(VARDATA(b), p, n);
				return PointerGetDatum(b);
			}
		case CONV_UUID:
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				if ((st = cql_decode_uuid(p, n, u->data)) != CQL_OK)
					bad_value(cv, st);
				return UUIDPGetDatum(u);
			}
		case CONV_MICROS:
			{
				int64_t		us;

				if ((st = cql_decode_bigint(p, n, &us)) != CQL_OK)
					bad_value(cv, st);
				if (pg_sub_s64_overflow(us, PG_EPOCH_OFFSET_US, &us) ||
					!IS_VALID_TIMESTAMP(us))
					out_of_range(cv);
				return TimestampTzGetDatum(us);
			}
		case CONV_TIMESTAMPTZ:
		case CONV_TIMESTAMP:
			{
				int64_t		ms;
				int64		us;

				if ((st = cql_decode_bigint(p, n, &ms)) != CQL_OK)
					bad_value(cv, st);

				/*
				 * The epoch shift first, in milliseconds: microseconds since
				 * 1970 overflow for PostgreSQL's last ~30 years.
				 */
				if (pg_sub_s64_overflow(ms, PG_EPOCH_OFFSET_US / 1000, &us) ||
					pg_mul_s64_overflow(us, 1000, &us) ||
					!IS_VALID_TIMESTAMP(us))
					timestamp_out_of_range(cv, ms);
				return TimestampTzGetDatum(us);
			}
		case CONV_DATE:
			{
				int64_t		days;

				if ((st = cql_decode_date(p, n, &days)) != CQL_OK)
					bad_value(cv, st);
				days -= PG_EPOCH_OFFSET_DAYS;
				if (days < PG_INT32_MIN || days > PG_INT32_MAX || !IS_VALID_DATE(days))
					out_of_range(cv);
				return DateADTGetDatum((DateADT) days);
			}
		case CONV_TIME:
			{
				int64_t		ns;

				if ((st = cql_decode_bigint(p, n, &ns)) != CQL_OK)
					bad_value(cv, st);
				if (ns < 0 || ns >= (int64) USECS_PER_DAY * 1000)
					bad_value(cv, CQL_ERR_TYPE);
				return TimeADTGetDatum(ns / 1000);
			}
		case CONV_INTERVAL:
			{
				cql_duration d;
				Interval   *iv = palloc(sizeof(Interval));

				if ((st = cql_decode_duration(p, n, &d)) != CQL_OK)
					bad_value(cv, st);
				iv->month = d.months;
				iv->day = d.days;
				iv->time = d.nanoseconds / 1000;
				return IntervalPGetDatum(iv);
			}
		case CONV_INET:
			{
				int			family;
				uint8_t		addr[16];
				inet	   *ip = palloc0(sizeof(inet));

				if ((st = cql_decode_inet(p, n, &family, addr)) != CQL_OK)
					bad_value(cv, st);
				ip_family(ip) = (family == 4) ? PGSQL_AF_INET : PGSQL_AF_INET6;
				ip_bits(ip) = (family == 4) ? 32 : 128;
				memcpy(ip_addr(ip), addr, family == 4 ? 4 : 16);
				SET_INET_VARSIZE(ip);
				return InetPGetDatum(ip);
			}
		case CONV_JSONB:
			if (cv->pgtype == JSONBOID)
				return cqlfdw_jsonb_from_cql(cv->ctype, p, n);
			/* a domain over jsonb: its input function checks it */
			/* FALLTHROUGH */
		case CONV_JSON:
			{
				char	   *s = format_value(cv, p, n, CQL_FORMAT_JSON);
				char	   *conv = pg_any_to_server(s, strlen(s), PG_UTF8);

				return InputFunctionCall(&cv->infunc, conv, cv->ioparam, cv->typmod);
			}
		case CONV_ARRAY:
			return read_array(cv, p, n);
		case CONV_PGVECTOR:
			{
				int			dim = cv->ctype->dimension;
				StringInfoData buf;

				if (n != 4 * dim)
					bad_value(cv, CQL_ERR_MALFORMED);
				initStringInfo(&buf);
				pq_sendint16(&buf, (uint16) dim);
				pq_sendint16(&buf, 0);
				appendBinaryStringInfo(&buf, (const char *) p, n);
				return ReceiveFunctionCall(&cv->recvfunc, &buf, cv->ioparam, cv->typmod);
			}
	}
	elog(ERROR, "unexpected conversion method %d", (int) cv->method);
	return (Datum) 0;
}

/* ---------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------
 */

/*
 * refuse
 *		Record why no value of cv's CQL type equals the Datum being written
 *		(for cqlfdw_conv_refusal_errdetail) and say so.
 */
static CqlWriteResult
refuse(CqlConv *cv, CqlRefusal why)
{
	cv->refusal = why;
	cv->refused_type = cv->ctype;
	return CQLW_UNREPRESENTABLE;
}

/*
 * write_text
 *		Append UTF-8 text of ulen bytes as the value of a text-like CQL type;
 *		a non-ASCII character for ascii is refused.
 */
static CqlWriteResult
write_text(CqlConv *cv, const char *utf8, int ulen, cql_buf *out)
{
	if (cv->ctype->id == CQL_TYPE_ASCII)
		for (int i = 0; i < ulen; i++)
			if ((unsigned char) utf8[i] > 0x7F)
				return refuse(cv, CQLREF_ASCII);
	cql_buf_put(out, utf8, ulen);
	return CQLW_OK;
}

/*
 * cqlfdw_timestamp_to_millis
 *		The CQL timestamp (milliseconds since 1970-01-01 UTC) of the finite
 *		PostgreSQL timestamp pg_us (microseconds since 2000-01-01 UTC).
 *
 * Digits below the millisecond are handled as p says: CQLTS_TRUNCATE
 * floors toward negative infinity (as the Java driver's
 * Instant.toEpochMilli() and PostgreSQL's date_trunc('milliseconds') do,
 * also before 1970), CQLTS_ROUND takes the nearest millisecond with ties
 * away from 2000-01-01 (exactly what a cast to timestamptz(3) does), and
 * CQLTS_EXACT and CQLTS_ERROR return false.  Every finite PostgreSQL
 * timestamp has a CQL timestamp: the division comes before the epoch
 * shift, which cannot overflow in milliseconds.
 */
bool
cqlfdw_timestamp_to_millis(int64 pg_us, CqlTsPrecision p, int64 *ms)
{
	int64		rem = pg_us % 1000;
	int64		q = pg_us / 1000;	/* toward zero */

	if (rem != 0)
	{
		switch (p)
		{
			case CQLTS_TRUNCATE:
				if (rem < 0)
					q--;
				break;
			case CQLTS_ROUND:
				/* AdjustTimestampForTypmod's rule for typmod 3 */
				if (rem >= 500)
					q++;
				else if (rem <= -500)
					q--;
				break;
			case CQLTS_EXACT:
			case CQLTS_ERROR:
				return false;
		}
	}
	*ms = q + PG_EPOCH_OFFSET_US / 1000;
	return true;
}

/*
 * cqlfdw_timestamp_as_stored
 *		The PostgreSQL timestamp Cassandra stores for the finite pg_us
 *		written under p (truncate or round): what a later read returns.
 *		Values that are refused (exact, error) come back unchanged.
 */
int64
cqlfdw_timestamp_as_stored(int64 pg_us, CqlTsPrecision p)
{
	int64		ms;

	if (!cqlfdw_timestamp_to_millis(pg_us, p, &ms))
		return pg_us;
	return (ms - PG_EPOCH_OFFSET_US / 1000) * 1000;
}

/*
 * cqlfdw_conv_set_ts_precision
 *		Make the writer cv (and its array elements) store sub-millisecond
 *		timestamps as p says.  Only converters of values that are written
 *		get it; converters of compared values stay CQLTS_EXACT.
 */
void
cqlfdw_conv_set_ts_precision(CqlConv *cv, CqlTsPrecision p)
{
	for (; cv != NULL; cv = (cv->method == CONV_ARRAY) ? cv->elem : NULL)
		cv->ts_precision = p;
}

/* Encode an int64 as the column's CQL integer type, if it fits */
static CqlWriteResult
write_integer(CqlConv *cv, int64 v, cql_buf *out)
{
	switch (cv->ctype->id)
	{
		case CQL_TYPE_TINYINT:
			if (v < PG_INT8_MIN || v > PG_INT8_MAX)
				return refuse(cv, CQLREF_INT_RANGE);
			cql_encode_tinyint(out, (int8_t) v);
			return CQLW_OK;
		case CQL_TYPE_SMALLINT:
			if (v < PG_INT16_MIN || v > PG_INT16_MAX)
				return refuse(cv, CQLREF_INT_RANGE);
			cql_encode_smallint(out, (int16_t) v);
			return CQLW_OK;
		case CQL_TYPE_INT:
			if (v < PG_INT32_MIN || v > PG_INT32_MAX)
				return refuse(cv, CQLREF_INT_RANGE);
			cql_encode_int(out, (int32_t) v);
			return CQLW_OK;
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_COUNTER:
			cql_encode_bigint(out, v);
			return CQLW_OK;
		case CQL_TYPE_VARINT:
			cql_encode_varint_i64(out, v);
			return CQLW_OK;
		case CQL_TYPE_DECIMAL:
			cql_buf_i32(out, 0);
			cql_encode_varint_i64(out, v);
			return CQLW_OK;
		default:
			return refuse(cv, CQLREF_NONE);
	}
}

/*
 * write_parsed
 *		Append the value given as UTF-8 text (CQL literal or JSON, per
 *		style), parsed by the protocol library for the column's CQL type.
 *
 * CQLW_UNREPRESENTABLE, with out left as it was, when the text does not
 * parse as a value of that type or parses to null.
 */
static CqlWriteResult
write_parsed(CqlConv *cv, const char *s, cql_format_style style, cql_buf *out)
{
	bool		is_null = false;
	size_t		before = out->len;
	cql_status	st;

	st = cql_value_parse(cv->ctype, s, strlen(s), style, out, &is_null);
	if (st != CQL_OK || is_null)
	{
		out->len = before;
		return refuse(cv, CQLREF_LITERAL);
	}
	return CQLW_OK;
}

/*
 * write_array
 *		Append a one-dimensional array as a list or set (element count, then
 *		the elements) or as a vector (the elements only; the count must
 *		equal the dimension).
 *
 * A multi-dimensional array, a null element, or an element that does not
 * convert is CQLW_UNREPRESENTABLE; out may then hold a partial value, which
 * the caller must discard.
 */
static CqlWriteResult
write_array(CqlConv *cv, Datum d, cql_buf *out)
{
	ArrayType  *arr = DatumGetArrayTypeP(d);
	Datum	   *elems;
	bool	   *nulls;
	int			count;
	cql_buf		eb;

	if (ARR_NDIM(arr) > 1)
		return refuse(cv, CQLREF_MULTIDIM);
	deconstruct_array(arr, cv->elemtype, cv->elmlen, cv->elmbyval, cv->elmalign,
					  &elems, &nulls, &count);
	if (cv->ctype->id == CQL_TYPE_VECTOR && count != cv->ctype->dimension)
		return refuse(cv, CQLREF_DIMENSION);
	if (cv->ctype->id != CQL_TYPE_VECTOR)
		cql_encode_collection_begin(out, count);
	cql_buf_init(&eb, &cqlfdw_palloc_allocator);
	for (int i = 0; i < count; i++)
	{
		/* Cassandra has no null elements in collections or vectors */
		if (nulls[i])
			return refuse(cv, CQLREF_NULL_ELEMENT);
		cql_buf_reset(&eb);
		if (cqlfdw_conv_write(cv->elem, elems[i], &eb) != CQLW_OK)
		{
			/* the element's reason, for the element's type */
			cv->refusal = cv->elem->refusal;
			cv->refused_type = cv->elem->refused_type;
			return CQLW_UNREPRESENTABLE;
		}
		if (cv->ctype->id == CQL_TYPE_VECTOR)
			cql_encode_vector_element(out, cv->ctype->sub[0], eb.data, (int32_t) eb.len);
		else
			cql_encode_element(out, eb.data, (int32_t) eb.len);
	}
	cql_buf_free(&eb);
	return CQLW_OK;
}

/*
 * cqlfdw_conv_write
 *		Append the CQL content bytes of non-null Datum d.
 *
 * Returns CQLW_UNREPRESENTABLE when no value of the CQL type equals d
 * (out of range, sub-millisecond timestamp, fractional varint, partial inet
 * netmask, null collection element, ...): a pushed-down equality then
 * matches nothing, a write is an error.  cv->refusal says which.  A
 * sub-millisecond timestamp is stored truncated or rounded instead when
 * cv->ts_precision says so (writers only).
 */
CqlWriteResult
cqlfdw_conv_write(CqlConv *cv, Datum d, cql_buf *out)
{
	switch (cv->method)
	{
		case CONV_BOOL:
			cql_encode_boolean(out, DatumGetBool(d));
			return CQLW_OK;
		case CONV_INT2:
			return write_integer(cv, DatumGetInt16(d), out);
		case CONV_INT4:
			return write_integer(cv, DatumGetInt32(d), out);
		case CONV_INT8:
			return write_integer(cv, DatumGetInt64(d), out);
		case CONV_FLOAT4:
			cql_encode_float(out, DatumGetFloat4(d));
			return CQLW_OK;
		case CONV_FLOAT8:
			if (cv->ctype->id == CQL_TYPE_FLOAT)
			{
				double		v = DatumGetFloat8(d);
				float		f = (float) v;

				if ((double) f != v && !isnan(v))
					return refuse(cv, CQLREF_FLOAT_PRECISION);
				cql_encode_float(out, f);
			}
			else
				cql_encode_double(out, DatumGetFloat8(d));
			return CQLW_OK;
		case CONV_NUMERIC:
			{
				char	   *s = OutputFunctionCall(&cv->outfunc, d);
				size_t		before = out->len;
				cql_status	st;

				if (strcmp(s, "NaN") == 0 || strstr(s, "Infinity"))
					return refuse(cv, CQLREF_NOT_FINITE);
				/* integral values only beyond decimal: "12" or "12.000" */
				if (cv->ctype->id != CQL_TYPE_DECIMAL)
				{
					char	   *dot = strchr(s, '.');

					if (dot)
					{
						for (char *q = dot + 1; *q; q++)
							if (*q != '0')
								return refuse(cv, CQLREF_FRACTION);
						*dot = '\0';
					}
				}
				switch (cv->ctype->id)
				{
					case CQL_TYPE_DECIMAL:
						st = cql_decimal_from_string(s, strlen(s), out);
						break;
					case CQL_TYPE_VARINT:
						st = cql_varint_from_string(s, strlen(s), out);
						break;
					default:
						{
							char	   *end;
							long long	v;

							errno = 0;
							v = strtoll(s, &end, 10);
							if (errno != 0 || *end != '\0')
								return refuse(cv, CQLREF_INT_RANGE);
							return write_integer(cv, (int64) v, out);
						}
				}
				if (st != CQL_OK)
				{
					out->len = before;
					return refuse(cv, CQLREF_NONE);
				}
				return CQLW_OK;
			}
		case CONV_TEXT:
			{
				text	   *t = DatumGetTextPP(d);
				const char *s = VARDATA_ANY(t);
				int			len = VARSIZE_ANY_EXHDR(t);
				char	   *utf8 = pg_server_to_any(s, len, PG_UTF8);
				int			ulen = (utf8 == s) ? len : strlen(utf8);

				if (cv->pgtype == BPCHAROID)
				{
					/* char(n) pads with spaces that are not part of the value */
					while (ulen > 0 && utf8[ulen - 1] == ' ')
						ulen--;
				}
				return write_text(cv, utf8, ulen, out);
			}
		case CONV_TEXT_IO:
			{
				char	   *s = OutputFunctionCall(&cv->outfunc, d);
				char	   *utf8 = pg_server_to_any(s, strlen(s), PG_UTF8);

				return write_text(cv, utf8, strlen(utf8), out);
			}
		case CONV_TEXT_LITERAL:
			{
				char	   *s = TextDatumGetCString(d);
				char	   *utf8 = pg_server_to_any(s, strlen(s), PG_UTF8);

				return write_parsed(cv, utf8, CQL_FORMAT_TEXT, out);
			}
		case CONV_BYTEA:
			{
				bytea	   *b = DatumGetByteaPP(d);

				cql_buf_put(out, VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
				return CQLW_OK;
			}
		case CONV_UUID:
			{
				pg_uuid_t  *u = DatumGetUUIDP(d);

				/* a timeuuid must be a version 1 UUID */
				if (cv->ctype->id == CQL_TYPE_TIMEUUID && (u->data[6] >> 4) != 1)
					return refuse(cv, CQLREF_TIMEUUID);
				cql_encode_uuid(out, u->data);
				return CQLW_OK;
			}
		case CONV_MICROS:
			{
				TimestampTz ts = DatumGetTimestampTz(d);
				int64		us;

				if (TIMESTAMP_NOT_FINITE(ts) ||
					pg_add_s64_overflow(ts, PG_EPOCH_OFFSET_US, &us))
					return refuse(cv, CQLREF_INFINITE);
				cql_encode_bigint(out, us);
				return CQLW_OK;
			}
		case CONV_TIMESTAMPTZ:
		case CONV_TIMESTAMP:
			{
				TimestampTz ts = DatumGetTimestampTz(d);
				int64		ms;

				if (TIMESTAMP_NOT_FINITE(ts))
					return refuse(cv, CQLREF_INFINITE);
				if (!cqlfdw_timestamp_to_millis(ts, cv->ts_precision, &ms))
					return refuse(cv, CQLREF_SUBMS);
				cql_encode_bigint(out, ms);
				return CQLW_OK;
			}
		case CONV_DATE:
			{
				DateADT		dt = DatumGetDateADT(d);

				if (DATE_NOT_FINITE(dt))
					return refuse(cv, CQLREF_INFINITE);
				cql_encode_date(out, (int64) dt + PG_EPOCH_OFFSET_DAYS);
				return CQLW_OK;
			}
		case CONV_TIME:
			{
				TimeADT		t = DatumGetTimeADT(d);

				/* PostgreSQL's 24:00:00 is no CQL time (they end before it) */
				if (t < 0 || t >= USECS_PER_DAY)
					return refuse(cv, CQLREF_TIME_24);
				cql_encode_bigint(out, t * 1000);
				return CQLW_OK;
			}
		case CONV_INTERVAL:
			{
				Interval   *iv = DatumGetIntervalP(d);
				cql_duration du;
				int64		ns;

				if (pg_mul_s64_overflow(iv->time, 1000, &ns))
					return refuse(cv, CQLREF_DURATION);
				du.months = iv->month;
				du.days = iv->day;
				du.nanoseconds = ns;
				if (cql_encode_duration(out, &du) != CQL_OK)
					return refuse(cv, CQLREF_DURATION);
				return CQLW_OK;
			}
		case CONV_INET:
			{
				inet	   *ip = DatumGetInetPP(d);
				bool		v4 = ip_family(ip) == PGSQL_AF_INET;

				/* Cassandra stores addresses, not networks */
				if (ip_bits(ip) != (v4 ? 32 : 128))
					return refuse(cv, CQLREF_NETWORK);
				if (cql_encode_inet(out, v4 ? 4 : 6, ip_addr(ip)) != CQL_OK)
					return refuse(cv, CQLREF_NONE);
				return CQLW_OK;
			}
		case CONV_JSONB:
		case CONV_JSON:
			{
				char	   *s = OutputFunctionCall(&cv->outfunc, d);
				char	   *utf8 = pg_server_to_any(s, strlen(s), PG_UTF8);

				return write_parsed(cv, utf8, CQL_FORMAT_JSON, out);
			}
		case CONV_ARRAY:
			return write_array(cv, d, out);
		case CONV_PGVECTOR:
			{
				bytea	   *b = SendFunctionCall(&cv->sendfunc, d);
				const uint8 *data = (const uint8 *) VARDATA(b);
				int			len = VARSIZE(b) - VARHDRSZ;
				int			dim;

				if (len < 4)
					return refuse(cv, CQLREF_DIMENSION);
				dim = (data[0] << 8) | data[1];
				if (dim != cv->ctype->dimension || len != 4 + 4 * dim)
					return refuse(cv, CQLREF_DIMENSION);
				for (int i = 0; i < dim; i++)
					cql_encode_vector_element(out, cv->ctype->sub[0], data + 4 + 4 * i, 4);
				return CQLW_OK;
			}
	}
	return refuse(cv, CQLREF_NONE);
}

/*
 * cqlfdw_conv_refusal_errdetail
 *		errdetail and errhint, inside an ereport, of the rule that made the
 *		last cqlfdw_conv_write of cv refuse its value (cv->refusal): each
 *		refusal names its own rule and what to write instead.  Returns 0,
 *		as the errdetail functions do.
 */
int
cqlfdw_conv_refusal_errdetail(const CqlConv *cv)
{
	const cql_type *t = cv->refused_type ? cv->refused_type : cv->ctype;
	const char *tn = cqlfdw_cql_type_string(t);

	switch (cv->refusal)
	{
		case CQLREF_INT_RANGE:
			errdetail("The value is outside the range of Cassandra type %s (tinyint, smallint and int hold 8, 16 and 32 bits).", tn);
			errhint("Write a value in the type's range, or use a wider Cassandra column (bigint, varint).");
			break;
		case CQLREF_FRACTION:
			errdetail("Cassandra type %s holds whole numbers; the value has a fractional part.", tn);
			errhint("Round the value first (round() or trunc()), or use a Cassandra decimal column.");
			break;
		case CQLREF_NOT_FINITE:
			errdetail("Cassandra type %s has no NaN and no infinity.", tn);
			errhint("Write NULL instead (for example NULLIF(v, 'NaN')), or use a Cassandra double column, which holds NaN and infinities.");
			break;
		case CQLREF_FLOAT_PRECISION:
			errdetail("Cassandra type float has single precision, and no float equals this double precision value.");
			errhint("Cast the value to real first, or use a Cassandra double column.");
			break;
		case CQLREF_ASCII:
			errdetail("Cassandra type ascii holds only 7-bit ASCII characters.");
			errhint("Use a Cassandra text column for other characters.");
			break;
		case CQLREF_TIMEUUID:
			errdetail("Cassandra type timeuuid holds only version 1 (time-based) UUIDs.");
			errhint("Write a version 1 UUID (cql_timeuuid_now(), or cql_timeuuid(t) for a time t), or use a Cassandra uuid column.");
			break;
		case CQLREF_SUBMS:
			errdetail("Cassandra timestamps have millisecond precision, and the value has digits below the millisecond.");
			if (cv->ts_precision == CQLTS_ERROR)
				errhint("Option timestamp_precision is 'error': set it to 'truncate' (what the Java and Python drivers do) or 'round' on the column, the foreign table or the server, or write date_trunc('milliseconds', value).");
			else
				errhint("Pass date_trunc('milliseconds', value).");
			break;
		case CQLREF_INFINITE:
			errdetail("Cassandra type %s has no infinity.", tn);
			errhint("Write NULL or a finite value.");
			break;
		case CQLREF_NETWORK:
			errdetail("Cassandra type inet holds single addresses, not networks: the value has a netmask.");
			errhint("Write the address alone (host(v)::inet, a /32 or /128 netmask), or keep networks in a Cassandra text column.");
			break;
		case CQLREF_NULL_ELEMENT:
			errdetail("Cassandra collections and vectors cannot hold null elements.");
			errhint("Remove the nulls first (array_remove(v, NULL)), or write NULL for the whole value.");
			break;
		case CQLREF_MULTIDIM:
			errdetail("Cassandra type %s holds a one-dimensional array.", tn);
			errhint("Declare a nested collection as jsonb, or write a one-dimensional array.");
			break;
		case CQLREF_DIMENSION:
			errdetail("Cassandra type %s has a fixed number of elements.", tn);
			errhint("Write a vector with exactly that number of elements.");
			break;
		case CQLREF_DURATION:
			errdetail("Cassandra type duration holds months, days and nanoseconds of one sign, each in its range.");
			errhint("Write an interval whose parts are all positive or all negative.");
			break;
		case CQLREF_TIME_24:
			errdetail("Cassandra type time ends at 23:59:59.999999999; PostgreSQL's 24:00:00 is past it.");
			errhint("Write 00:00:00 (of the next day), or 23:59:59.999999 for the end of a day.");
			break;
		case CQLREF_LITERAL:
			errdetail("The text is no value of Cassandra type %s.", tn);
			errhint("Write the value as cql_fdw reads it back: a CQL literal for a text column, JSON for a json or jsonb column.");
			break;
		case CQLREF_NONE:
			errdetail("No value of Cassandra type %s equals it.", tn);
			break;
	}
	return 0;
}

/*
 * cqlfdw_conv_write_or_error
 *		As cqlfdw_conv_write, for values that must be stored: a value the
 *		CQL type cannot hold is an error (22003) with the rule that applies.
 */
void
cqlfdw_conv_write_or_error(CqlConv *cv, Datum d, cql_buf *out)
{
	if (cqlfdw_conv_write(cv, d, out) != CQLW_OK)
	{
		Oid			outfunc;
		bool		isvarlena;
		char	   *s;

		getTypeOutputInfo(cv->pgtype, &outfunc, &isvarlena);
		s = OidOutputFunctionCall(outfunc, d);

		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value %s cannot be stored as Cassandra type %s",
						s, cqlfdw_cql_type_string(cv->ctype)),
				 cqlfdw_conv_refusal_errdetail(cv)));
	}
	if (cql_buf_status(out) != CQL_OK)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory while encoding a value for Cassandra")));
}

/*
 * cqlfdw_routing_key
 *		The routing key of a partition from its encoded partition-key
 *		values (in partition-key order): the value itself for one column,
 *		the composite encoding for several.  NULL (no routing, any
 *		coordinator) when there are none or the values cannot be combined.
 *		The result is palloc'd or points into parts.
 */
const uint8_t *
cqlfdw_routing_key(const cql_elem *parts, int nparts, size_t *len)
{
	cql_buf		rk;

	*len = 0;
	if (nparts == 1)
	{
		*len = parts[0].n > 0 ? (size_t) parts[0].n : 0;
		return parts[0].p;
	}
	if (nparts < 1)
		return NULL;
	cql_buf_init(&rk, &cqlfdw_palloc_allocator);
	if (cql_routing_key_composite(&rk, parts, nparts) != CQL_OK)
		return NULL;
	*len = rk.len;
	return rk.data;
}

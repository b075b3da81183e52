/*-------------------------------------------------------------------------
 *
 * write_metadata.c
 *		Write metadata columns of a foreign table.
 *
 * A column declared with the option writetime_of 'v' reads WRITETIME("v"),
 * one with ttl_of 'v' reads TTL("v") (deparse.c puts them in the SELECT
 * list).  They are no Cassandra columns: Cassandra 5.0 accepts neither
 * function in WHERE nor in ORDER BY, so conditions and orderings on them are
 * evaluated locally.  Given in an INSERT or in the SET of an UPDATE, a
 * non-NULL value becomes USING TIMESTAMP ? or USING TTL ? of the statement
 * (modify.c binds it; it applies to every column the statement writes).
 *
 * This file checks the declarations against the table layout (the options
 * alone are checked in option.c when they are set) and the values before
 * they are sent.
 *
 * IDENTIFICATION
 *		src/fdw/write_metadata.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/formatting.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "write_metadata.h"

/*
 * cqlfdw_meta_is_multicell
 *		Is a column of CQL type cql_type stored as several cells: a
 *		non-frozen collection or user-defined type?  WRITETIME() and TTL()
 *		of such a column are lists (one entry per element) in Cassandra 5.0.
 */
bool
cqlfdw_meta_is_multicell(const char *cql_type)
{
	static const char *const single[] = {
		"ascii", "bigint", "blob", "boolean", "counter", "date", "decimal",
		"double", "duration", "float", "inet", "int", "smallint", "text",
		"time", "timestamp", "timeuuid", "tinyint", "uuid", "varchar",
		"varint", NULL
	};
	char	   *s;
	bool		multi;

	if (cql_type == NULL)
		return false;
	s = asc_tolower(cql_type, strlen(cql_type));
	while (*s == ' ')
		s++;
	if (strncmp(s, "frozen<", 7) == 0 || strncmp(s, "tuple<", 6) == 0 ||
		strncmp(s, "vector<", 7) == 0)
		return false;
	if (strncmp(s, "list<", 5) == 0 || strncmp(s, "set<", 4) == 0 ||
		strncmp(s, "map<", 4) == 0)
		return true;
	/* a native type, or else the name of a (non-frozen) user-defined type */
	multi = true;
	for (int i = 0; single[i]; i++)
		if (strcmp(s, single[i]) == 0)
			multi = false;
	return multi;
}

/*
 * meta_option
 *		The option name that declares a metadata column of kind k.
 */
static const char *
meta_option(CqlMetaKind k)
{
	return k == CQLMETA_TTL ? "ttl_of" : "writetime_of";
}

/*
 * cqlfdw_meta_resolve
 *		Resolve and check the metadata columns of a complete layout: the
 *		column named by writetime_of/ttl_of must be a regular or static
 *		column of the foreign table (Cassandra refuses WRITETIME and TTL of
 *		key columns), of a single-cell type (not a non-frozen collection or
 *		UDT, whose write times are per element), not a counter (Cassandra
 *		refuses a custom TTL or timestamp for counter updates).  The
 *		metadata column itself is bigint or timestamp with time zone for a
 *		write time, integer for a TTL.
 */
void
cqlfdw_meta_resolve(CqlFdwTable *t, Oid relid)
{
	const char *relname = NULL;

	for (int i = 0; i < t->natts; i++)
	{
		CqlFdwColumn *c = &t->cols[i];
		const CqlFdwColumn *src;
		const char *opt;
		char	   *colname;
		AttrNumber	a;
		Oid			base;

		if (c->meta == CQLMETA_NONE)
			continue;
		if (relname == NULL)
			relname = get_rel_name(relid);
		opt = meta_option(c->meta);
		colname = get_attname(relid, i + 1, false);
		a = get_attnum(relid, c->meta_of);
		if (a <= 0 || a > t->natts)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
					 errmsg("column \"%s\" named by option \"%s\" of column \"%s\" does not exist in foreign table \"%s\"",
							c->meta_of, opt, colname, relname),
					 errhint("Name another column of the foreign table (its name in PostgreSQL, not in Cassandra).")));
		src = &t->cols[a - 1];
		if (src->meta != CQLMETA_NONE || src->remote_name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("option \"%s\" of column \"%s\" of foreign table \"%s\" names write metadata column \"%s\"",
							opt, colname, relname, c->meta_of),
					 errhint("Name a column that is stored in Cassandra.")));
		if (src->kind == CQLCOL_PARTITION_KEY || src->kind == CQLCOL_CLUSTERING)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("option \"%s\" of column \"%s\" of foreign table \"%s\" names primary key column \"%s\"",
							opt, colname, relname, c->meta_of),
					 errdetail("Cassandra keeps no write time or TTL for key columns: only regular and static columns have them."),
					 errhint("Name a regular column of the table.")));
		if (src->cql_type && pg_strcasecmp(src->cql_type, "counter") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("option \"%s\" of column \"%s\" of foreign table \"%s\" names counter column \"%s\"",
							opt, colname, relname, c->meta_of),
					 errdetail("Cassandra refuses a custom TTL or write timestamp for counter updates."),
					 errhint("Remove the option from column \"%s\".", colname)));
		if (cqlfdw_meta_is_multicell(src->cql_type))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("option \"%s\" of column \"%s\" of foreign table \"%s\" names column \"%s\" of type %s",
							opt, colname, relname, c->meta_of, src->cql_type),
					 errdetail("Cassandra 5.0 returns one write time and TTL per element of a non-frozen collection or user-defined type."),
					 errhint("Name a column of a single-cell type (a native type, or a frozen collection or UDT).")));

		base = getBaseType(c->pgtype);
		if (c->meta == CQLMETA_WRITETIME ? (base != INT8OID && base != TIMESTAMPTZOID)
			: base != INT4OID)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("write metadata column \"%s\" of foreign table \"%s\" has type %s",
							colname, relname, format_type_be(c->pgtype)),
					 c->meta == CQLMETA_WRITETIME
					 ? errhint("A column with option writetime_of is bigint (microseconds since 1970-01-01 UTC) or timestamp with time zone.")
					 : errhint("A column with option ttl_of is integer (seconds).")));
		c->meta_attnum = a;
	}
}

/*
 * cqlfdw_meta_plan_write
 *		The metadata columns an INSERT or UPDATE writes (written: attnums
 *		offset by FirstLowInvalidHeapAttributeNumber, as in the planner):
 *		at most one TTL column and one write time column, as a CQL
 *		statement has one USING TTL and one USING TIMESTAMP, and each only
 *		with the column it names, which its value applies to.  A write
 *		time cannot go with if_not_exists: Cassandra takes the timestamp of
 *		a lightweight transaction from Paxos.
 */
void
cqlfdw_meta_plan_write(const CqlFdwTable *t, TupleDesc tupdesc,
					   const char *relname, Bitmapset *written,
					   bool if_not_exists, CqlMetaWrite *mw)
{
	mw->ttl_attnum = mw->ts_attnum = InvalidAttrNumber;
	for (int i = 0; i < t->natts; i++)
	{
		const CqlFdwColumn *c = &t->cols[i];
		AttrNumber *slot;
		const char *colname;

		if (c->meta == CQLMETA_NONE ||
			!bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, written))
			continue;
		colname = NameStr(TupleDescAttr(tupdesc, i)->attname);
		slot = (c->meta == CQLMETA_TTL) ? &mw->ttl_attnum : &mw->ts_attnum;
		if (*slot != InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot write both %s columns \"%s\" and \"%s\" of foreign table \"%s\" in one statement",
							c->meta == CQLMETA_TTL ? "TTL" : "write time",
							NameStr(TupleDescAttr(tupdesc, *slot - 1)->attname),
							colname, relname),
					 errdetail("A CQL statement has one USING %s for every column it writes.",
							   c->meta == CQLMETA_TTL ? "TTL" : "TIMESTAMP"),
					 errhint("Write the columns with different %s in separate statements.",
							 c->meta == CQLMETA_TTL ? "TTLs" : "write times")));
		if (!bms_is_member(c->meta_attnum - FirstLowInvalidHeapAttributeNumber, written))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot write %s column \"%s\" of foreign table \"%s\" without column \"%s\"",
							c->meta == CQLMETA_TTL ? "TTL" : "write time", colname,
							relname, c->meta_of),
					 errdetail("Its value becomes the USING %s of the cells the statement writes, and column \"%s\" is not one of them.",
							   c->meta == CQLMETA_TTL ? "TTL" : "TIMESTAMP", c->meta_of),
					 errhint("Write column \"%s\" in the same statement (in an UPDATE: SET %s = %s, %s = ...).",
							 c->meta_of, c->meta_of, c->meta_of, colname)));
		if (c->meta == CQLMETA_WRITETIME && if_not_exists)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot write write time column \"%s\" of foreign table \"%s\" with option if_not_exists",
							colname, relname),
					 errdetail("Cassandra refuses a custom timestamp for a lightweight transaction (INSERT ... IF NOT EXISTS)."),
					 errhint("Leave column \"%s\" out of the INSERT, or set if_not_exists to false.", colname)));
		*slot = i + 1;
	}
}

/*
 * cqlfdw_meta_check_ttl
 *		A TTL given for a row: between 0 (no TTL) and Cassandra's maximum,
 *		else an error before anything is sent.
 */
int32
cqlfdw_meta_check_ttl(int32 ttl, const char *relname, const char *colname)
{
	if (ttl < 0 || ttl > CQLFDW_MAX_TTL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("TTL %d in column \"%s\" of foreign table \"%s\" is out of range",
						ttl, colname, relname),
				 errdetail("Cassandra accepts a TTL from 0 (none) to %d seconds (20 years).",
						   CQLFDW_MAX_TTL),
				 errhint("Give a TTL in seconds between 0 and %d, or NULL for the table's default.",
						 CQLFDW_MAX_TTL)));
	return ttl;
}

/*
 * cqlfdw_meta_check_timestamp
 *		A write time given for a row, in microseconds since 1970-01-01 UTC:
 *		Cassandra accepts every bigint but the smallest one.
 */
int64
cqlfdw_meta_check_timestamp(int64 us, const char *relname, const char *colname)
{
	if (us == PG_INT64_MIN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("write time %lld in column \"%s\" of foreign table \"%s\" is out of range",
						(long long) us, colname, relname),
				 errdetail("Cassandra accepts write times from -9223372036854775807 to 9223372036854775807 microseconds."),
				 errhint("Give a write time in microseconds since 1970-01-01 UTC, or NULL for the current time.")));
	return us;
}

/*
 * cqlfdw_meta_check_timestamptz
 *		A write time given as timestamp with time zone: any finite one (its
 *		microseconds since 1970-01-01 UTC fit in a bigint).
 */
void
cqlfdw_meta_check_timestamptz(TimestampTz ts, const char *relname,
							  const char *colname)
{
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("write time %s in column \"%s\" of foreign table \"%s\" is out of range",
						TIMESTAMP_IS_NOBEGIN(ts) ? "-infinity" : "infinity",
						colname, relname),
				 errhint("Give a finite timestamp, or NULL for the current time.")));
}

/*
 * cqlfdw_meta_value
 *		The value of USING TTL ? (is_ttl) or USING TIMESTAMP ? for the row
 *		in slot: write metadata column a's value, checked; for a TTL, the
 *		option ttl (option_ttl) when the column is NULL or the statement has
 *		none (a = 0).  Returns false to bind the marker unset: Cassandra
 *		then applies the table's default TTL, or the statement's write
 *		timestamp (the client-side one of cqlfdw_write_timestamp).
 */
bool
cqlfdw_meta_value(const CqlFdwTable *t, TupleTableSlot *slot, AttrNumber a,
				  bool is_ttl, int option_ttl, const char *relname, Datum *d)
{
	bool		isnull = true;
	const char *colname;

	if (a > 0)
		*d = slot_getattr(slot, a, &isnull);
	if (isnull)
	{
		if (is_ttl && option_ttl > 0)
		{
			*d = Int32GetDatum(option_ttl);
			return true;
		}
		return false;
	}
	colname = NameStr(TupleDescAttr(slot->tts_tupleDescriptor, a - 1)->attname);
	if (is_ttl)
		(void) cqlfdw_meta_check_ttl(DatumGetInt32(*d), relname, colname);
	else if (getBaseType(t->cols[a - 1].pgtype) == INT8OID)
		(void) cqlfdw_meta_check_timestamp(DatumGetInt64(*d), relname, colname);
	else
		cqlfdw_meta_check_timestamptz(DatumGetTimestampTz(*d), relname, colname);
	return true;
}

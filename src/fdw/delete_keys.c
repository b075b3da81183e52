/*-------------------------------------------------------------------------
 *
 * delete_keys.c
 *		cql_bridge_delete_keys(target, key_columns, VARIADIC key_values):
 *		many DELETEs by key through one statement handle.
 *
 * The stream of cqlbridge deletes every key that left a query table: a
 * few hundred per flush.  As one DELETE statement per key (a PL/pgSQL loop
 * over the keys) each key paid an executor start, the foreign table's
 * resolution and the prepared statement's lookup: about 9 us of the source
 * database's CPU, half of what the stream cost the source per change
 * (bench/README.md, issue 42).  This function resolves the table and
 * prepares "DELETE FROM ks.t WHERE k1 = ? AND ..." once and sends a
 * DELETE per element of the key arrays, each as a direct DELETE would
 * (direct_modify.c's cqlfdw_direct_send): kept until COMMIT under
 * cql_fdw.write_mode 'on_commit', else sent and awaited one by one.
 *
 * The key columns are the whole partition key and a prefix of the
 * clustering columns (a row, a slice or a partition, as CQL's DELETE
 * addresses them), one array per column, in the order named; a NULL
 * element, or a value no CQL value equals, deletes nothing (as
 * "WHERE k = NULL" would).  The caller needs DELETE on the table and
 * SELECT on the key columns, as for "DELETE ... WHERE k = v".
 *
 * IDENTIFICATION
 *		src/fdw/delete_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "convert.h"
#include "cql_execute.h"
#include "cql_fdw.h"
#include "deparse.h"
#include "modify.h"
#include "planner.h"
#include "remote.h"

PG_FUNCTION_INFO_V1(cql_bridge_delete_keys);

/* One key column: its values and their conversion to the marker's type. */
typedef struct KeyArg
{
	AttrNumber	attnum;
	const char *name;			/* the column's name */
	Oid			coltype;		/* and type */
	Oid			elemtype;
	Datum	   *values;
	bool	   *nulls;
	int			n;
	int			pk_position;	/* -1: a clustering column */
	CqlConv		conv;
} KeyArg;

/*
 * check_target
 *		target must be a foreign table of cql_fdw that accepts deletes, and
 *		the user must hold DELETE on it.
 */
static void
check_target(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	AclResult	aclresult;

	if (rel->rd_rel->relkind != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a foreign table", RelationGetRelationName(rel)),
				 errhint("cql_bridge_delete_keys deletes from a foreign table of cql_fdw.")));
	if (!cqlfdw_server_is_ours(GetForeignServer(GetForeignServerIdByRelId(relid))))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("foreign table \"%s\" does not belong to cql_fdw",
						RelationGetRelationName(rel)),
				 errhint("cql_bridge_delete_keys deletes from a foreign table of cql_fdw.")));
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_DELETE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FOREIGN_TABLE, RelationGetRelationName(rel));
	if ((cqlIsForeignRelUpdatable(rel) & (1 << CMD_DELETE)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("foreign table \"%s\" does not allow deletes",
						RelationGetRelationName(rel)),
				 errhint("Its option updatable (or its server's) is false.")));
}

/* Whether attribute a is one of the nargs columns named. */
static bool
is_named(const KeyArg *args, int nargs, AttrNumber a)
{
	for (int i = 0; i < nargs; i++)
		if (args[i].attnum == a)
			return true;
	return false;
}

/*
 * key_columns
 *		The attribute numbers of the named columns: each a key column of t,
 *		no one twice, together the whole partition key and a prefix of the
 *		clustering columns.  The user needs SELECT on each (a DELETE's
 *		WHERE reads them).
 */
static void
key_columns(Relation rel, const CqlFdwTable *t, ArrayType *names, KeyArg *args, int nargs)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			nck = 0;
	const char *relname = RelationGetRelationName(rel);
	bool		table_select = pg_class_aclcheck(RelationGetRelid(rel), GetUserId(),
												 ACL_SELECT) == ACLCHECK_OK;

	deconstruct_array(names, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n != nargs)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cql_bridge_delete_keys got %d key columns and %d arrays of values", n, nargs),
				 errhint("Pass one array of values per key column, in the order of key_columns.")));
	for (int i = 0; i < n; i++)
	{
		char	   *name;
		AttrNumber	a;
		AclResult	aclresult;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("key column name %d of cql_bridge_delete_keys is NULL", i + 1)));
		name = TextDatumGetCString(elems[i]);
		a = get_attnum(RelationGetRelid(rel), name);
		if (a <= 0 || a > t->natts || t->cols[a - 1].remote_name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of foreign table \"%s\" does not exist", name, relname)));
		if (t->cols[a - 1].kind != CQLCOL_PARTITION_KEY && t->cols[a - 1].kind != CQLCOL_CLUSTERING)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
					 errmsg("column \"%s\" of foreign table \"%s\" is not a key column", name, relname),
					 errhint("Name the partition key columns and, optionally, a prefix of the clustering columns.")));
		if (is_named(args, i, a))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("key column \"%s\" is named twice", name)));
		/* SELECT on the table, or else on the column */
		if (!table_select &&
			(aclresult = pg_attribute_aclcheck(RelationGetRelid(rel), a, GetUserId(),
											   ACL_SELECT)) != ACLCHECK_OK)
			aclcheck_error(aclresult, OBJECT_COLUMN, name);
		args[i].attnum = a;
		args[i].name = name;
		args[i].coltype = TupleDescAttr(RelationGetDescr(rel), a - 1)->atttypid;
		args[i].pk_position = -1;
		for (int k = 0; k < t->npk; k++)
			if (t->pk[k] == a)
				args[i].pk_position = k;
		if (args[i].pk_position < 0)
			nck++;
	}
	/* every partition key column, and clustering columns 1..nck */
	for (int k = 0; k < t->npk + nck; k++)
	{
		bool		pk = k < t->npk;
		AttrNumber	a = pk ? t->pk[k] : t->ck[k - t->npk];

		if (!is_named(args, nargs, a))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
					 errmsg(pk ? "partition key column \"%s\" of foreign table \"%s\" is not named"
							: "clustering column \"%s\" of foreign table \"%s\" is not named, though a later one is",
							get_attname(RelationGetRelid(rel), a, false), relname),
					 errhint(pk ? "A DELETE by key names the whole partition key."
							 : "Name a prefix of the clustering columns.")));
	}
}

/* integers of any width, or strings of any kind */
static int
type_family(Oid t)
{
	switch (t)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return 1;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			return 2;
		default:
			return 0;
	}
}

/*
 * same_kind_of_type
 *		Whether values of type a may stand for a column of type b: the same
 *		type under domains, or two integer types (the value is range-checked
 *		against the CQL type), or two string types.  Anything else would
 *		compare values of different meaning (a text '2026-03-01' is no date):
 *		the caller casts.
 */
static bool
same_kind_of_type(Oid a, Oid b)
{
	a = getBaseType(a);
	b = getBaseType(b);
	return a == b || (type_family(a) != 0 && type_family(a) == type_family(b));
}

/*
 * key_values
 *		Argument i + 2 as the values of key column args[i]: a one-dimensional
 *		array, as long as the others.  Returns its length.
 */
static int
key_values(FunctionCallInfo fcinfo, int i, KeyArg *arg, const char *relname)
{
	Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, i + 2);
	ArrayType  *a;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	arg->elemtype = OidIsValid(argtype) ? get_element_type(argtype) : InvalidOid;
	if (!OidIsValid(arg->elemtype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("argument %d of cql_bridge_delete_keys is not an array", i + 3),
				 errhint("Pass each key column's values as an array of its type, e.g. $1::int[].")));
	if (!same_kind_of_type(arg->elemtype, arg->coltype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("key column \"%s\" of foreign table \"%s\" is of type %s, but its values are of type %s",
						arg->name, relname, format_type_be(arg->coltype), format_type_be(arg->elemtype)),
				 errhint("Cast the array to %s[].", format_type_be(arg->coltype))));
	if (PG_ARGISNULL(i + 2))
		return -1;
	a = PG_GETARG_ARRAYTYPE_P(i + 2);
	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("the values of key column %d of foreign table \"%s\" are a %d-dimensional array",
						i + 1, relname, ARR_NDIM(a)),
				 errhint("Pass a one-dimensional array per key column.")));
	get_typlenbyvalalign(arg->elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(a, arg->elemtype, typlen, typbyval, typalign,
					  &arg->values, &arg->nulls, &arg->n);
	return arg->n;
}

/*
 * cql_bridge_delete_keys(target regclass, key_columns text[],
 *						  VARIADIC key_values "any") returns bigint
 *		Delete the row (or slice, or partition) of every position of the
 *		key arrays; returns how many DELETEs were sent or kept for COMMIT
 *		(a NULL element or a value no CQL value equals is skipped).
 */
Datum
cql_bridge_delete_keys(PG_FUNCTION_ARGS)
{
	Oid			relid;
	int			nargs = PG_NARGS() - 2;
	Relation	rel;
	CqlRemote	remote;
	StringInfoData cql;
	cql_prepared *meta;
	KeyArg	   *args;
	cql_value_ref *values;
	cql_elem   *parts;
	int			nrows = -1;
	int64		sent = 0;
	bool		stamp_writes;
	bool		full_key;
	bool		any_null = false;
	MemoryContext rowcxt,
				old;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cql_bridge_delete_keys takes its key arrays as separate arguments"),
				 errhint("Call it without the VARIADIC keyword: cql_bridge_delete_keys(t, '{a,b}', $1::int[], $2::text[]).")));
	if (nargs < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cql_bridge_delete_keys needs the values of at least one key column")));
	relid = PG_GETARG_OID(0);
	rel = table_open(relid, RowExclusiveLock);
	check_target(rel);

	cqlfdw_remote_open_rel(&remote, rel, GetUserId(), NULL);
	args = palloc0(sizeof(KeyArg) * nargs);
	key_columns(rel, remote.table, PG_GETARG_ARRAYTYPE_P(1), args, nargs);
	full_key = (nargs == remote.table->npk + remote.table->nck);

	initStringInfo(&cql);
	appendStringInfoString(&cql, "DELETE FROM ");
	cqlfdw_append_table(&cql, remote.table);
	for (int i = 0; i < nargs; i++)
	{
		appendStringInfoString(&cql, i ? " AND " : " WHERE ");
		cqlfdw_append_ident(&cql, remote.table->cols[args[i].attnum - 1].remote_name);
		appendStringInfoString(&cql, " = ?");
	}
	remote.cql = cql.data;
	cqlfdw_remote_will_write(&remote);
	stamp_writes = !cqlfdw_table_has_counters(remote.table);
	meta = cqlfdw_remote_prepare(&remote, NULL);
	cqlfdw_remote_check_binds(&remote, meta, nargs);

	for (int i = 0; i < nargs; i++)
	{
		int			n = key_values(fcinfo, i, &args[i], RelationGetRelationName(rel));

		if (n < 0)
			any_null = true;	/* a NULL array: no key */
		else if (nrows >= 0 && n != nrows)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("the key arrays of cql_bridge_delete_keys differ in length (%d and %d)",
							nrows, n),
					 errhint("Pass one value per key column for every key.")));
		else
			nrows = n;
		cqlfdw_init_bind_conv(RelationGetRelationName(rel), &args[i].conv,
							  meta->bind[i].type, args[i].elemtype);
	}
	if (any_null || nrows < 0)
		nrows = 0;

	values = palloc0(sizeof(cql_value_ref) * nargs);
	parts = palloc0(sizeof(cql_elem) * Max(remote.table->npk, 1));
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "cql_bridge_delete_keys row",
								   ALLOCSET_SMALL_SIZES);
	for (int r = 0; r < nrows; r++)
	{
		bool		skip = false;
		const uint8_t *key;
		size_t		keylen = 0;
		cql_buf		row_key = {0};

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		for (int i = 0; i < nargs; i++)
		{
			cql_buf		b;

			/* a NULL, or a value no CQL value equals: no row qualifies */
			cql_buf_init(&b, &cqlfdw_palloc_allocator);
			skip = args[i].nulls[r] ||
				!cqlfdw_encode_bound(RelationGetRelationName(rel), &args[i].conv, CQLBIND_EQ,
									 args[i].values[r], args[i].elemtype, &b);
			if (skip)
				break;
			values[i].p = b.data ? b.data : (uint8_t *) "";
			values[i].n = (int32) b.len;
			if (args[i].pk_position >= 0)
			{
				parts[args[i].pk_position].p = values[i].p;
				parts[args[i].pk_position].n = values[i].n;
			}
		}
		if (!skip)
		{
			key = cqlfdw_routing_key(parts, remote.table->npk, &keylen);
			if (full_key && remote.opts.write_on_commit)
			{
				/* the row deleted: its key values (batched with others) */
				cql_buf_init(&row_key, &cqlfdw_palloc_allocator);
				for (int i = 0; i < nargs; i++)
					cql_encode_element(&row_key, values[i].p, values[i].n);
			}
			cqlfdw_direct_send(&remote, values, nargs, key, keylen, stamp_writes,
							   row_key.data, row_key.len);
			sent++;
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
	cqlfdw_remote_release(&remote);
	table_close(rel, NoLock);
	PG_RETURN_INT64(sent);
}

/*-------------------------------------------------------------------------
 *
 * token.c
 *		cql_token(key_types text[], VARIADIC key "any") -> bigint: the
 *		token Cassandra's Murmur3Partitioner gives a partition key, computed
 *		from PostgreSQL values.
 *
 * cqlbridge diff reads a query table's source view in the order of the
 * token-range scan of its Cassandra table (ORDER BY cql_token(...)), so
 * the two sides merge as two sorted streams.  The token must therefore be
 * exactly Cassandra's: each value is encoded for its CQL type by the FDW's
 * own conversion (cqlfdw_bind_prepare/encode, the encoder of cql_query's
 * parameters, over convert.c; prepared once per call site), the parts are
 * combined into the routing key the FDW routes writes with
 * (cqlfdw_routing_key: the value itself for one column, the composite
 * layout for several), and hashed by src/cql's Murmur3
 * (cql_murmur3_token, with Cassandra's sign-extension quirk).
 *
 * The CQL types are given, not derived from the arguments' PostgreSQL
 * types, because the bytes depend on them (a numeric is a decimal or a
 * varint, a timestamptz a timestamp or a date).  A type string is what
 * system_schema.columns.type holds ("int", "frozen<list<text>>",
 * "tuple<int, text>"); user-defined types cannot be resolved without the
 * cluster and are refused.  A NULL value has no token and an empty
 * single-column key is refused by Cassandra: both are errors, never a
 * silent NULL, so a diff cannot misplace a row.
 *
 * IDENTIFICATION
 *		src/fdw/token.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "convert.h"
#include "cql_execute.h"
#include "cql_types.h"
#include "cql_wire.h"

PG_FUNCTION_INFO_V1(cql_token);

/*
 * The parsed key types of one call site, kept in fn_extra, and how each
 * key value is encoded (made at the first row: the argument types of a
 * call site do not change).
 */
typedef struct TokenTypes
{
	struct varlena *spec;		/* the key_types argument they came from */
	int			n;
	cql_type  **types;
	CqlBindPlan *plans;			/* n of them, NULL until the first row */
	cql_buf    *bufs;			/* n of them: each row's encoded values, kept
								 * (in the function's context) for the next */
	cql_elem   *parts;			/* n of them: the values as routing-key parts */
} TokenTypes;

/*
 * parse_key_types
 *		The CQL types of key_types, parsed in the function's memory context
 *		and kept in fn_extra for the next rows of the same call site (the
 *		argument is a constant in every real use; a changed one is parsed
 *		again).
 */
static TokenTypes *
parse_key_types(FunctionCallInfo fcinfo, ArrayType *arr)
{
	TokenTypes *tt = (TokenTypes *) fcinfo->flinfo->fn_extra;
	Size		size = VARSIZE(arr);
	MemoryContext old;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (tt != NULL && VARSIZE(tt->spec) == size &&
		memcmp(tt->spec, arr, size) == 0)
		return tt;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("cql_token's key types must be a one-dimensional array")));
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	tt = palloc0(sizeof(TokenTypes));
	tt->spec = palloc(size);
	memcpy(tt->spec, arr, size);
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	tt->n = n;
	tt->types = palloc0(sizeof(cql_type *) * Max(n, 1));
	tt->plans = NULL;
	for (int i = 0; i < n; i++)
	{
		char	   *s;
		cql_status	st;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("key type %d of cql_token is NULL", i + 1),
					 errhint("Give the CQL type of every partition-key column, e.g. ARRAY['text', 'int'].")));
		s = TextDatumGetCString(elems[i]);
		st = cql_type_parse(s, NULL, NULL, NULL, &cqlfdw_palloc_allocator,
							&tt->types[i]);
		if (st != CQL_OK || tt->types[i] == NULL ||
			tt->types[i]->id == CQL_TYPE_CUSTOM)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("\"%s\" is not a CQL type cql_token can encode", s),
					 errhint("Give a type as system_schema.columns.type writes it (\"int\", \"frozen<list<text>>\", \"tuple<int, text>\"); user-defined types are not supported.")));
	}
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = tt;
	return tt;
}

/*
 * prepare_encoders
 *		How each key value of this call site is encoded for its CQL type
 *		(cqlfdw_bind_prepare: the type lookups, a cast), made once in the
 *		function's memory context: per row, only the encoding is left.
 */
static void
prepare_encoders(FunctionCallInfo fcinfo, TokenTypes *tt)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	CqlBindPlan *plans = palloc0(sizeof(CqlBindPlan) * tt->n);

	for (int i = 0; i < tt->n; i++)
	{
		Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, i + 1);

		if (!OidIsValid(argtype))
			ereport(ERROR,
					(errcode(ERRCODE_INDETERMINATE_DATATYPE),
					 errmsg("could not determine the type of key value $%d of cql_token", i + 1),
					 errhint("Cast the value to its PostgreSQL type.")));
		cqlfdw_bind_prepare("key value", i + 1, tt->types[i], argtype, &plans[i]);
	}
	tt->bufs = palloc(sizeof(cql_buf) * tt->n);
	for (int i = 0; i < tt->n; i++)
	{
		/* the first block made here: repalloc keeps later ones here too */
		cql_buf_init(&tt->bufs[i], &cqlfdw_palloc_allocator);
		(void) cql_buf_reserve(&tt->bufs[i], 64);
	}
	tt->parts = palloc(sizeof(cql_elem) * tt->n);
	MemoryContextSwitchTo(old);
	tt->plans = plans;
}

/*
 * cql_token
 *		The Murmur3 token of the partition key made of the arguments after
 *		the first, each of the CQL type at the same position of the first.
 *		Immutable: the token depends on the values and types only.
 */
Datum
cql_token(PG_FUNCTION_ARGS)
{
	int			nvals = PG_NARGS() - 1;
	TokenTypes *tt;
	cql_elem   *parts;
	const uint8_t *key;
	size_t		keylen;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("cql_token needs the CQL types of the key, not NULL"),
				 errhint("Give the CQL type of every partition-key column, e.g. ARRAY['text', 'int'].")));
	if (get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cql_token does not take its key values as a VARIADIC array"),
				 errhint("Pass each partition-key value as its own argument, so that each keeps its type.")));
	tt = parse_key_types(fcinfo, PG_GETARG_ARRAYTYPE_P(0));
	if (nvals < 1 || tt->n != nvals)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cql_token got %d key types and %d key values", tt->n, nvals),
				 errhint("Give one CQL type per partition-key value, in partition-key order.")));

	for (int i = 0; i < nvals; i++)
		if (PG_ARGISNULL(i + 1))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("key value $%d of cql_token is NULL", i + 1),
					 errdetail("Cassandra stores no row whose partition key has a NULL column, so it has no token."),
					 errhint("Leave out rows with a NULL key (WHERE ... IS NOT NULL).")));
	if (tt->plans == NULL)
		prepare_encoders(fcinfo, tt);

	parts = tt->parts;
	for (int i = 0; i < nvals; i++)
	{
		cql_buf    *b = &tt->bufs[i];

		/* grows (repalloc) in the function's context, where it was made */
		cql_buf_reset(b);
		cqlfdw_bind_encode("key value", i + 1, &tt->plans[i], PG_GETARG_DATUM(i + 1), b);
		parts[i].p = b->data;
		parts[i].n = (int32_t) b->len;
	}
	if (nvals == 1 && parts[0].n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an empty partition key has no token"),
				 errdetail("Cassandra refuses an empty value as a one-column partition key (\"Key may not be empty\")."),
				 errhint("Leave out rows whose key is empty.")));
	key = cqlfdw_routing_key(parts, nvals, &keylen);
	if (key == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a component of the partition key is longer than 65535 bytes"),
				 errdetail("Cassandra refuses such a key.")));
	PG_RETURN_INT64(cql_murmur3_token(key, keylen));
}

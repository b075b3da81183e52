/*-------------------------------------------------------------------------
 *
 * row_hash.c
 *	  cql_bridge_row_hash(VARIADIC "any"): a 64-bit hash of a row's values,
 *	  for the range hashes of "cqlbridge diff".
 *
 * cqlbridge diff compares each token range of a query table by its row
 * count and the XOR of a hash per row, computed on both sides (the source
 * view, cast to the foreign table's column types, and the foreign table)
 * before it merges the ranges that disagree row by row.  The hash was
 * hashtextextended(ROW(...)::text): every value through its output
 * function, a record formed and printed, then hashed.  Here each value
 * adds its bytes to one buffer, which is hashed once:
 *	- a by-value type (integers, floats, date, timestamp, bool, ...): the
 *	  bytes of the value itself;
 *	- text, varchar, bytea and uuid: the bytes of the value (detoasted);
 *	- jsonb and arrays: the bytes of the value too, rather than their send
 *	  form, which prints a jsonb as JSON text and sends each element of an
 *	  array through its own send function (a tenth of the Cassandra side's
 *	  CPU for the hotel's guests);
 *	- any other type: its binary send form (typsend; the output function
 *	  for a type without one).
 * Each value is preceded by its length (-1 for NULL), so ('a', 'bc') and
 * ('ab', 'c'), or NULL and '', never give the same bytes.
 *
 * Why this is safe for the diff: the hash is a function of the values'
 * bytes, and equal bytes of the same type print the same text, which is
 * what the merge compares; so rows the merge finds different hash
 * differently up to a 64-bit collision.  The converse need not hold (two
 * representations of one text would only send that range to the merge).
 * It does in practice for jsonb and arrays, whose bytes PostgreSQL builds
 * one way from a given value (a jsonb's keys sorted, its padding zeroed,
 * numbers detoasted; an array's elements detoasted into zeroed memory),
 * whether they come from an aggregate of the source view or from cql_fdw's
 * conversion; test_diff checks that equal tables need no merge.
 * Both sides are hashed in the same server with the same types, so the
 * byte order and layout of by-value types are the same on both.  The value
 * is not meant to be stored or compared across servers or versions.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/row_hash.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"

#include "compat.h"

PG_FUNCTION_INFO_V1(cql_bridge_row_hash);

/* How one argument's value becomes bytes */
typedef enum RowHashHow
{
	ROW_HASH_BYVAL,				/* the Datum's typlen bytes */
	ROW_HASH_VARLENA,			/* the varlena's data bytes */
	ROW_HASH_FIXED,				/* typlen bytes at the pointer */
	ROW_HASH_SEND,				/* the send function's bytea */
	ROW_HASH_OUTPUT				/* the output function's text */
} RowHashHow;

typedef struct RowHashArg
{
	int16		typlen;
	RowHashHow	how;
	FmgrInfo	func;			/* send or output function */
} RowHashArg;

/* Kept in fn_extra: one entry per argument and the buffer of a row */
typedef struct RowHashCache
{
	int			nargs;
	StringInfoData buf;
	RowHashArg	args[FLEXIBLE_ARRAY_MEMBER];
} RowHashCache;

/*
 * row_hash_how
 *		Decide how values of type typid are turned into bytes, and look up
 *		the function that does it when one is needed (the send function;
 *		the output function for a type without one).
 */
static void
row_hash_how(Oid typid, RowHashArg *arg, MemoryContext cxt)
{
	bool		byval;
	char		align;
	char		delim;
	Oid			ioparam;
	Oid			func;
	bool		varlena;

	get_type_io_data(typid, IOFunc_send, &arg->typlen, &byval, &align, &delim,
					 &ioparam, &func);
	if (byval && (arg->typlen == 1 || arg->typlen == 2 || arg->typlen == 4 || arg->typlen == 8))
	{
		arg->how = ROW_HASH_BYVAL;
		return;
	}
	if (typid == TEXTOID || typid == VARCHAROID || typid == BYTEAOID ||
		typid == JSONBOID || (arg->typlen == -1 && OidIsValid(get_element_type(typid))))
	{
		arg->how = ROW_HASH_VARLENA;
		return;
	}
	if (typid == UUIDOID)
	{
		arg->how = ROW_HASH_FIXED;
		return;
	}
	if (OidIsValid(func))
		arg->how = ROW_HASH_SEND;
	else
	{
		getTypeOutputInfo(typid, &func, &varlena);
		arg->how = ROW_HASH_OUTPUT;
	}
	fmgr_info_cxt(func, &arg->func, cxt);
}

/*
 * row_hash_cache
 *		The per-call-site state, built on the first call from the argument
 *		types the parser resolved.
 */
static RowHashCache *
row_hash_cache(FunctionCallInfo fcinfo)
{
	RowHashCache *c = (RowHashCache *) fcinfo->flinfo->fn_extra;
	int			nargs = PG_NARGS();

	if (c != NULL && c->nargs == nargs)
		return c;
	if (get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cql_bridge_row_hash does not take its values as a VARIADIC array"),
				 errhint("Pass each column as its own argument, so that each keeps its type.")));
	c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
							   offsetof(RowHashCache, args) + sizeof(RowHashArg) * nargs);
	c->nargs = nargs;
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		initStringInfo(&c->buf);
		MemoryContextSwitchTo(old);
	}
	for (int i = 0; i < nargs; i++)
	{
		Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, i);

		if (!OidIsValid(typid))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not determine the type of argument %d of cql_bridge_row_hash", i + 1),
					 errhint("Cast the argument to its type.")));
		row_hash_how(typid, &c->args[i], fcinfo->flinfo->fn_mcxt);
	}
	fcinfo->flinfo->fn_extra = c;
	return c;
}

/*
 * Append a length word, then len bytes: room made once, then copied (the
 * rows are hashed a few million times per diff; two appendBinaryStringInfo
 * calls per value were a fifth of a narrow table's source side).
 */
static inline void
append_value(StringInfo buf, const void *data, int32 len)
{
	int32		n = len > 0 ? len : 0;

	if (buf->len + (int) sizeof(len) + n >= buf->maxlen)
		enlargeStringInfo(buf, (int) sizeof(len) + n);
	memcpy(buf->data + buf->len, &len, sizeof(len));
	buf->len += sizeof(len);
	if (n > 0)
	{
		memcpy(buf->data + buf->len, data, n);
		buf->len += n;
	}
}

/*
 * cql_bridge_row_hash
 *		The hash of the arguments' values, in order (see the file header).
 *		Not strict: a NULL is a value of the row like any other.
 */
Datum
cql_bridge_row_hash(PG_FUNCTION_ARGS)
{
	RowHashCache *c = row_hash_cache(fcinfo);
	StringInfo	buf = &c->buf;

	resetStringInfo(buf);
	for (int i = 0; i < c->nargs; i++)
	{
		RowHashArg *arg = &c->args[i];
		Datum		d = PG_GETARG_DATUM(i);

		if (PG_ARGISNULL(i))
		{
			append_value(buf, NULL, -1);
			continue;
		}
		switch (arg->how)
		{
			case ROW_HASH_BYVAL:
				{
					union
					{
						int8		i1;
						int16		i2;
						int32		i4;
						int64		i8;
					}			v;

					switch (arg->typlen)
					{
						case 1:
							v.i1 = DatumGetChar(d);
							break;
						case 2:
							v.i2 = DatumGetInt16(d);
							break;
						case 4:
							v.i4 = DatumGetInt32(d);
							break;
						default:
							v.i8 = DatumGetInt64(d);
							break;
					}
					append_value(buf, &v, arg->typlen);
					break;
				}
			case ROW_HASH_VARLENA:
				{
					struct varlena *p = PG_DETOAST_DATUM_PACKED(d);

					append_value(buf, VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p));
					if ((Pointer) p != DatumGetPointer(d))
						pfree(p);
					break;
				}
			case ROW_HASH_FIXED:
				append_value(buf, DatumGetPointer(d), arg->typlen);
				break;
			case ROW_HASH_SEND:
				{
					bytea	   *b = SendFunctionCall(&arg->func, d);

					append_value(buf, VARDATA(b), VARSIZE(b) - VARHDRSZ);
					pfree(b);
					break;
				}
			case ROW_HASH_OUTPUT:
				{
					char	   *s = OutputFunctionCall(&arg->func, d);

					append_value(buf, s, strlen(s));
					pfree(s);
					break;
				}
		}
	}
	PG_RETURN_INT64((int64) hash_bytes_extended((const unsigned char *) buf->data, buf->len, 0));
}

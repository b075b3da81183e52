/*-------------------------------------------------------------------------
 *
 * convert_jsonb.c
 *		A received CQL value read as jsonb, built directly from its bytes.
 *
 * A column declared jsonb (maps, UDTs, tuples and nested collections by
 * default) read the value as JSON text, formatted by the protocol library
 * (cql_value_format's JSON style), and parsed again by jsonb_in: every
 * string escaped, then lexed and unescaped.  For the hotel's guests (a map
 * of addresses per row) that was half of the backend's CPU of a scan.
 * Here the value's JsonbValue tree is built as it is walked, and only
 * numbers go through text (numeric_in, as jsonb_in does).  The result is
 * the jsonb that parsing the JSON style would give, value for value:
 *	- list, set, tuple, vector: an array; a map whose keys are text or
 *	  ascii: an object; any other map: an array of [key, value] pairs; a
 *	  UDT: an object of its fields;
 *	- text and ascii: a string (converted to the server encoding); integers,
 *	  varint, decimal, finite floats: a number; boolean: true or false;
 *	- blob ("0x..."), uuid, inet, date, time, timestamp, duration and the
 *	  float specials (NaN, Infinity): a string of the library's form;
 *	- a null element, and an empty value of a type without an empty form,
 *	  null.
 * A column of a domain over jsonb, and json columns, keep the text path
 * (the domain's input function must run; json keeps the text itself).
 *
 * IDENTIFICATION
 *		src/fdw/convert_jsonb.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "cql_fdw.h"
#include "convert.h"

static void push_value(JsonbParseState **state, JsonbIteratorToken tok,
					   const cql_type *t, const uint8_t *p, int32_t n, int depth);

/*
 * bad_jsonb_value
 *		ERROR for a received value that is not a valid value of its CQL
 *		type, as the text path reports it.
 */
static void
bad_jsonb_value(const cql_type *t, cql_status st)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("invalid %s value received from Cassandra: %s",
					cqlfdw_cql_type_string(t), cql_status_message(st))));
}

/*
 * leaf_text
 *		The library's JSON form of a scalar leaf, as a palloc'd string of
 *		*len bytes (a string-like value still in its quotes).
 */
static char *
leaf_text(const cql_type *t, const uint8_t *p, int32_t n, int *len)
{
	char	   *s;
	cql_status	st = cqlfdw_format_cql(t, p, n, CQL_FORMAT_JSON, &s, len);

	if (st != CQL_OK)
		bad_jsonb_value(t, st);
	return s;
}

/*
 * scalar_value
 *		*v = the JsonbValue of a scalar leaf (n >= 0, and not an empty value
 *		of a type without an empty form: the caller made those null).
 */
static void
scalar_value(const cql_type *t, const uint8_t *p, int32_t n, JsonbValue *v)
{
	cql_status	st;
	char	   *s;
	int			len;

	switch (t->id)
	{
		case CQL_TYPE_ASCII:
		case CQL_TYPE_VARCHAR:
			if (!cql_text_valid(t, p, n))
				bad_jsonb_value(t, CQL_ERR_TYPE);
			/* rejects a NUL, converts to the server's encoding */
			s = pg_any_to_server((const char *) p, n, PG_UTF8);
			v->type = jbvString;
			v->val.string.val = s;
			v->val.string.len = s == (const char *) p ? n : (int) strlen(s);
			return;
		case CQL_TYPE_BOOLEAN:
			{
				bool		b;

				if ((st = cql_decode_boolean(p, n, &b)) != CQL_OK)
					bad_jsonb_value(t, st);
				v->type = jbvBool;
				v->val.boolean = b;
				return;
			}
		case CQL_TYPE_TINYINT:
		case CQL_TYPE_SMALLINT:
		case CQL_TYPE_INT:
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_COUNTER:
			{
				int64_t		i;

				if ((st = cql_decode_integer(t->id, p, n, &i)) != CQL_OK)
					bad_jsonb_value(t, st);
				v->type = jbvNumeric;
				v->val.numeric = int64_to_numeric(i);
				return;
			}
		case CQL_TYPE_VARINT:
		case CQL_TYPE_DECIMAL:
		case CQL_TYPE_FLOAT:
		case CQL_TYPE_DOUBLE:
			s = leaf_text(t, p, n, &len);
			if (s[0] != '"')
			{
				v->type = jbvNumeric;
				v->val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(s),
																	 ObjectIdGetDatum(InvalidOid),
																	 Int32GetDatum(-1)));
				return;
			}
			break;				/* NaN, Infinity: a string */
		default:
			/* blob, uuid, timeuuid, inet, date, time, timestamp, duration */
			s = leaf_text(t, p, n, &len);
			break;
	}

	/* "...": plain ASCII without escapes (hex, digits, '-', ':', ...) */
	if (len < 2 || s[0] != '"' || s[len - 1] != '"')
		bad_jsonb_value(t, CQL_ERR_MALFORMED);
	v->type = jbvString;
	v->val.string.val = s + 1;
	v->val.string.len = len - 2;
}

/*
 * push_composite
 *		Push a collection, tuple or UDT value (n >= 0) as an array or an
 *		object, its elements recursively.  Returns what the closing push
 *		returns: the finished value when it is the outermost one.
 */
static JsonbValue *
push_composite(JsonbParseState **state, const cql_type *t, const uint8_t *p, int32_t n,
			   int depth)
{
	cql_elem   *el = NULL;
	int32_t		cnt = 0;
	cql_status	st;
	JsonbValue *res;
	bool		object = t->id == CQL_TYPE_UDT ||
		(t->id == CQL_TYPE_MAP && (t->sub[0]->id == CQL_TYPE_VARCHAR ||
								   t->sub[0]->id == CQL_TYPE_ASCII));

	if ((st = cql_split_value(t, p, n, &cqlfdw_palloc_allocator, &el, &cnt)) != CQL_OK)
		bad_jsonb_value(t, st);
	(void) pushJsonbValue(state, object ? WJB_BEGIN_OBJECT : WJB_BEGIN_ARRAY, NULL);
	if (t->id == CQL_TYPE_MAP)
	{
		for (int32_t i = 0; i + 1 < cnt; i += 2)
		{
			if (object)
			{
				JsonbValue	key;

				if (el[i].n < 0)
					bad_jsonb_value(t, CQL_ERR_MALFORMED);
				scalar_value(t->sub[0], el[i].p ? el[i].p : (const uint8_t *) "", el[i].n, &key);
				(void) pushJsonbValue(state, WJB_KEY, &key);
				push_value(state, WJB_VALUE, t->sub[1], el[i + 1].p, el[i + 1].n, depth + 1);
			}
			else
			{
				(void) pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
				push_value(state, WJB_ELEM, t->sub[0], el[i].p, el[i].n, depth + 1);
				push_value(state, WJB_ELEM, t->sub[1], el[i + 1].p, el[i + 1].n, depth + 1);
				(void) pushJsonbValue(state, WJB_END_ARRAY, NULL);
			}
		}
	}
	else
	{
		for (int32_t i = 0; i < cnt; i++)
		{
			const cql_type *et = (t->id == CQL_TYPE_TUPLE || t->id == CQL_TYPE_UDT) ?
			t->sub[i] : t->sub[0];

			if (t->id == CQL_TYPE_UDT)
			{
				JsonbValue	key;
				const char *fname = (t->field_names && t->field_names[i]) ? t->field_names[i] : "";

				key.type = jbvString;
				key.val.string.val = (char *) fname;
				key.val.string.len = (int) strlen(fname);
				(void) pushJsonbValue(state, WJB_KEY, &key);
				push_value(state, WJB_VALUE, et, el[i].p, el[i].n, depth + 1);
			}
			else
				push_value(state, WJB_ELEM, et, el[i].p, el[i].n, depth + 1);
		}
	}
	res = pushJsonbValue(state, object ? WJB_END_OBJECT : WJB_END_ARRAY, NULL);
	pfree(el);
	return res;
}

/*
 * is_null_cell
 *		Whether a value of n bytes of CQL type t reads as JSON null: a null
 *		(n < 0), or an empty value of a type without an empty form
 *		(Cassandra's legacy "empty" int, uuid, vector, ...).
 */
static bool
is_null_cell(const cql_type *t, int32_t n)
{
	return n < 0 || (n == 0 && !cql_type_has_empty_form(t));
}

/*
 * cell_value
 *		The value of n bytes of CQL type t (n < 0: null).  A collection,
 *		tuple or UDT is pushed onto *state, and what its closing push
 *		returned is returned; any other value is made in *v, which is
 *		returned for the caller to push (or to make a scalar jsonb of).
 */
static JsonbValue *
cell_value(JsonbParseState **state, const cql_type *t, const uint8_t *p, int32_t n,
		   int depth, JsonbValue *v)
{
	if (n > 0 && p == NULL)
		bad_jsonb_value(t, CQL_ERR_MALFORMED);
	if (n == 0)
		p = (const uint8_t *) "";
	if (is_null_cell(t, n))
		v->type = jbvNull;
	else if (cql_type_is_composite(t))
		return push_composite(state, t, p, n, depth);
	else
		scalar_value(t, p, n, v);
	return v;
}

/*
 * push_value
 *		Push one element (tok WJB_ELEM) or object value (WJB_VALUE) of CQL
 *		type t; n < 0 is null.
 */
static void
push_value(JsonbParseState **state, JsonbIteratorToken tok, const cql_type *t,
		   const uint8_t *p, int32_t n, int depth)
{
	JsonbValue	v;

	check_stack_depth();
	if (t == NULL)
		bad_jsonb_value(t, CQL_ERR_INVALID_ARG);
	if (depth > CQL_MAX_TYPE_DEPTH + 1)
		bad_jsonb_value(t, CQL_ERR_TOO_LARGE);
	if (cell_value(state, t, p, n, depth, &v) == &v)
		(void) pushJsonbValue(state, tok, &v);
}

/*
 * cqlfdw_jsonb_from_cql
 *		The jsonb of a received value of CQL type t (n >= 0; a NULL cell is
 *		the caller's), as parsing its JSON form would give it.
 */
Datum
cqlfdw_jsonb_from_cql(const cql_type *t, const uint8_t *p, int32_t n)
{
	JsonbParseState *state = NULL;
	JsonbValue	v;

	return JsonbPGetDatum(JsonbValueToJsonb(cell_value(&state, t, p, n, 1, &v)));
}

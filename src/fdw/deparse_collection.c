/*-------------------------------------------------------------------------
 *
 * deparse_collection.c
 *		Conditions on collections that a Storage-Attached Index answers:
 *		membership (CONTAINS), map keys (CONTAINS KEY) and map entries
 *		(m[k] = v), recognised in the PostgreSQL forms a user writes over
 *		the arrays and jsonb cql_fdw reads collections as.  Part of the
 *		classification of deparse.c (cqlfdw_classify).
 *
 * IDENTIFICATION
 *		src/fdw/deparse_collection.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"

#include "convert.h"
#include "deparse.h"
#include "deparse_int.h"

/*
 * cqlfdw_is_collection_kind
 *		A condition on a collection's elements, keys or entries (one per
 *		column is sent; never with ALLOW FILTERING).
 */
bool
cqlfdw_is_collection_kind(CqlBindKind k)
{
	return k == CQLBIND_CONTAINS || k == CQLBIND_CONTAINS_KEY || k == CQLBIND_ENTRY;
}

/* does a CQL type string name a map whose keys (and values) are text? */
static bool
text_map(const char *cql_type, bool values_too)
{
	static const char *const text[] = {"text", "varchar", "ascii"};
	bool		key_ok = false,
				val_ok = !values_too;

	if (cql_type == NULL || pg_strncasecmp(cql_type, "map<", 4) != 0)
		return false;
	for (int i = 0; i < 3; i++)
	{
		size_t		n = strlen(text[i]);

		if (pg_strncasecmp(cql_type + 4, text[i], n) == 0 && cql_type[4 + n] == ',')
		{
			const char *v = cql_type + 4 + n + 1;

			key_ok = true;
			while (*v == ' ')
				v++;
			for (int j = 0; j < 3 && values_too; j++)
				if (pg_strncasecmp(v, text[j], strlen(text[j])) == 0 &&
					v[strlen(text[j])] == '>' && v[strlen(text[j]) + 1] == '\0')
					val_ok = true;
		}
	}
	return key_ok && val_ok;
}

/*
 * match_entry
 *		col ->> 'key' = value (either side) on a map<text, text> read as
 *		jsonb with an index on entries(col): col[?] = ?.  The key must be a
 *		non-NULL constant or parameter, the value a safe text expression;
 *		text equality under a deterministic collation is byte equality, as
 *		in Cassandra.
 */
static bool
match_entry(PlannerInfo *root, RelOptInfo *baserel, const CqlFdwTable *t,
			RestrictInfo *rinfo, Relids outer_ok, OpExpr *eq, CqlCond *cond)
{
	Index		relid = baserel->relid;

	for (int side = 0; side < 2; side++)
	{
		Expr	   *l = (Expr *) list_nth(eq->args, side);
		Expr	   *value = (Expr *) list_nth(eq->args, 1 - side);
		OpExpr	   *field;
		Var		   *var;
		Expr	   *key;
		const CqlFdwColumn *col;

		if (!IsA(l, OpExpr) || get_opcode(((OpExpr *) l)->opno) != F_JSONB_OBJECT_FIELD_TEXT)
			continue;
		field = (OpExpr *) l;
		if (list_length(field->args) != 2 ||
			(var = cqlfdw_our_var(linitial(field->args), relid)) == NULL ||
			var->vartype != JSONBOID || var->varattno > t->natts)
			continue;
		key = lsecond(field->args);
		col = &t->cols[var->varattno - 1];
		if (col->remote_name == NULL || col->masked != NULL || col->sai_entries_index == NULL ||
			!text_map(col->cql_type, true))
			return false;
		if (OidIsValid(eq->inputcollid) && !get_collation_isdeterministic(eq->inputcollid))
			return false;
		if (exprType((Node *) key) != TEXTOID || exprType((Node *) value) != TEXTOID ||
			(IsA(key, Const) && ((Const *) key)->constisnull) ||
			!cqlfdw_is_safe_value(root, key, relid, outer_ok) ||
			!cqlfdw_is_safe_value(root, value, relid, outer_ok))
			return false;
		cond->rinfo = rinfo;
		cond->attnum = var->varattno;
		cond->kind = CQLBIND_ENTRY;
		cond->key = key;
		cond->value = value;
		cond->value_type = TEXTOID;
		cond->is_join = !bms_is_empty(pull_varnos(root, (Node *) value)) ||
			!bms_is_empty(pull_varnos(root, (Node *) key));
		return true;
	}
	return false;
}

/*
 * cqlfdw_match_collection_condition
 *		A membership test Cassandra answers with a Storage-Attached Index on
 *		a collection (never with ALLOW FILTERING here):
 *		  value = ANY(col), col @> ARRAY[value]	-> col CONTAINS ?
 *			(a set or list column, index on values(col); one element)
 *		  col ? key								-> col CONTAINS KEY ?
 *			(a map<text, ...> read as jsonb, index on keys(col))
 *		  col ->> key = value					-> col[?] = ?
 *			(a map<text, text> read as jsonb, index on entries(col))
 *		Element equality must be exact as for = (eq_pushable_type, no
 *		numeric: 1.0 and 1.00 are two decimals to Cassandra; text under a
 *		deterministic collation).  Fills *cond on success.
 */
bool
cqlfdw_match_collection_condition(PlannerInfo *root, RelOptInfo *baserel, const CqlFdwTable *t,
						   RestrictInfo *rinfo, Relids outer_ok, CqlCond *cond)
{
	Expr	   *clause = rinfo->clause;
	Index		relid = baserel->relid;
	Var		   *var = NULL;
	Expr	   *value = NULL;
	Oid			elemtype = InvalidOid;
	Oid			collid = InvalidOid;
	CqlBindKind kind;
	const CqlFdwColumn *col;

	if (rinfo->pseudoconstant)
		return false;
	if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;
		Oid			opfamily;

		if (!saop->useOr || list_length(saop->args) != 2 ||
			(var = cqlfdw_our_var(lsecond(saop->args), relid)) == NULL)
			return false;
		elemtype = get_element_type(var->vartype);
		value = linitial(saop->args);
		if (!OidIsValid(elemtype) || exprType((Node *) value) != elemtype)
			return false;
		opfamily = cqlfdw_default_btree_opfamily(elemtype);
		if (!OidIsValid(opfamily) ||
			get_op_opfamily_strategy(saop->opno, opfamily) != BTEqualStrategyNumber)
			return false;
		collid = saop->inputcollid;
		kind = CQLBIND_CONTAINS;
	}
	else if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;
		RegProcedure fn = get_opcode(op->opno);
		Expr	   *r = lsecond(op->args);

		if (fn == F_TEXTEQ)
			return match_entry(root, baserel, t, rinfo, outer_ok, op, cond);
		if ((var = cqlfdw_our_var(linitial(op->args), relid)) == NULL)
			return false;
		if (fn == F_ARRAYCONTAINS)
		{
			Const	   *c = (Const *) r;
			ArrayType  *arr;
			Datum	   *elems;
			bool	   *nulls;
			int			n;
			int16		len;
			bool		byval;

			elemtype = get_element_type(var->vartype);
			if (!OidIsValid(elemtype) || !IsA(r, Const) || c->constisnull ||
				c->consttype != var->vartype)
				return false;
			arr = DatumGetArrayTypeP(c->constvalue);
			cqlfdw_array_elements(arr, elemtype, &elems, &nulls, &n, &len, &byval);
			if (n != 1 || nulls[0])
				return false;
			value = (Expr *) makeConst(elemtype, -1, c->constcollid, len,
									   datumCopy(elems[0], byval, len), false, byval);
			collid = op->inputcollid;
			kind = CQLBIND_CONTAINS;
		}
		else if (fn == F_JSONB_EXISTS && var->vartype == JSONBOID)
		{
			elemtype = TEXTOID;
			value = r;
			if (exprType((Node *) value) != TEXTOID)
				return false;
			kind = CQLBIND_CONTAINS_KEY;
		}
		else
			return false;
	}
	else
		return false;

	if (var->varattno > t->natts)
		return false;
	col = &t->cols[var->varattno - 1];
	if (col->remote_name == NULL || col->masked != NULL ||
		col->kind == CQLCOL_PARTITION_KEY || col->kind == CQLCOL_CLUSTERING)
		return false;
	if (kind == CQLBIND_CONTAINS)
	{
		if (col->sai_values_index == NULL || !cqlfdw_eq_pushable_type(elemtype) ||
			elemtype == NUMERICOID)
			return false;
		if (cqlfdw_is_text_type(elemtype) && OidIsValid(collid) &&
			!get_collation_isdeterministic(collid))
			return false;
	}
	else
	{
		/* map keys of text type: the jsonb keys are exactly their values */
		if (col->sai_keys_index == NULL || !text_map(col->cql_type, false))
			return false;
	}
	if (!cqlfdw_is_safe_value(root, value, relid, outer_ok))
		return false;

	cond->rinfo = rinfo;
	cond->attnum = var->varattno;
	cond->kind = kind;
	cond->value = value;
	cond->value_type = elemtype;
	cond->is_join = !bms_is_empty(pull_varnos(root, (Node *) value));
	return true;
}


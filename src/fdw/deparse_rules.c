/*-------------------------------------------------------------------------
 *
 * deparse_rules.c
 *		Type and expression rules of the scan classification, shared by
 *		deparse.c (comparisons on columns) and deparse_collection.c
 *		(conditions on collections): which types compare alike in
 *		PostgreSQL and Cassandra, which Var is ours, and which values the
 *		executor can compute before a request is sent.  Calls no other
 *		file of the classification.
 *
 * IDENTIFICATION
 *		src/fdw/deparse_rules.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"

#include "deparse_int.h"

/* what a type's comparisons mean in Cassandra (type_rules) */
#define CQLFDW_EQ_PUSHABLE		0x01
#define CQLFDW_RANGE_PUSHABLE	0x02

/*
 * type_rules
 *		Which comparisons of a PostgreSQL type mean in Cassandra what they
 *		mean in PostgreSQL, for the CQL types it maps to.
 *
 * Equality: float4/float8 are missing on purpose (Cassandra's
 * Float.compare() tells -0.0 from 0.0); an enum (stored as its label in
 * a text column) has equality only, since its order is not the labels'.  Ordering: uuid (Cassandra sorts
 * by version and time first), inet (family-length first in PostgreSQL)
 * and boolean are left out; text only under a bytewise collation, checked
 * by the caller.
 */
static int
type_rules(Oid typid)
{
	switch (typid)
	{
		case BOOLOID:
		case UUIDOID:
		case INETOID:
			return CQLFDW_EQ_PUSHABLE;
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
		case TEXTOID:
		case VARCHAROID:
		case BYTEAOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPTZOID:
			return CQLFDW_EQ_PUSHABLE | CQLFDW_RANGE_PUSHABLE;
		default:
			/* an enum is stored as its label: equal labels, equal values */
			if (type_is_enum(typid))
				return CQLFDW_EQ_PUSHABLE;
			return 0;
	}
}

/*
 * cqlfdw_eq_pushable_type
 *		Equality of the type means what Cassandra's equality means.
 */
bool
cqlfdw_eq_pushable_type(Oid typid)
{
	return (type_rules(typid) & CQLFDW_EQ_PUSHABLE) != 0;
}

/*
 * cqlfdw_range_pushable_type
 *		Ordering of the type agrees with Cassandra's.
 */
bool
cqlfdw_range_pushable_type(Oid typid)
{
	return (type_rules(typid) & CQLFDW_RANGE_PUSHABLE) != 0;
}

/*
 * is_text_type
 *		text or varchar: a value of one may be compared with a column of the
 *		other.
 */
bool
cqlfdw_is_text_type(Oid typid)
{
	return typid == TEXTOID || typid == VARCHAROID;
}

/*
 * default_btree_opfamily
 *		The btree operator family of the type's default operator class, or
 *		InvalidOid.  Used to recognize the type's own comparison operators
 *		and sort orders.
 */
Oid
cqlfdw_default_btree_opfamily(Oid typid)
{
	Oid			opclass = GetDefaultOpClass(typid, BTREE_AM_OID);

	return OidIsValid(opclass) ? get_opclass_family(opclass) : InvalidOid;
}

/* The Var of our relation under at most a binary-compatible relabeling */
Var *
cqlfdw_our_var(Expr *e, Index relid)
{
	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	if (e && IsA(e, Var))
	{
		Var		   *v = (Var *) e;

		if (v->varno == relid && v->varlevelsup == 0 && v->varattno > 0)
			return v;
	}
	return NULL;
}

/*
 * Can 'value' be evaluated by the executor before the remote request is
 * sent?  It must not read our relation, must not be volatile (it is
 * evaluated once per scan, not once per row), and may read other relations
 * only when they are the outer side of a parameterized path.
 */
bool
cqlfdw_is_safe_value(PlannerInfo *root, Expr *value, Index relid, Relids outer_ok)
{
	Relids		varnos;

	if (contain_volatile_functions((Node *) value) ||
		contain_subplans((Node *) value) ||
		contain_agg_clause((Node *) value) ||
		contain_window_function((Node *) value))
		return false;
	varnos = pull_varnos(root, (Node *) value);
	if (bms_is_member(relid, varnos))
		return false;
	return bms_is_subset(varnos, outer_ok);
}


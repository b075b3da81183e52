/*-------------------------------------------------------------------------
 *
 * deparse.c
 *		Which restrictions of a query Cassandra can answer exactly, and the
 *		CQL text of every statement the FDW sends: the SELECT of a scan (and
 *		of ANALYZE), INSERT, UPDATE and DELETE of the write path and of
 *		direct modify, TRUNCATE.
 *
 * Correctness first: a restriction is pushed only when Cassandra's answer
 * is exactly PostgreSQL's.  Cassandra compares text bytewise, orders uuids
 * and inets differently, distinguishes -0.0 from 0.0, and stores timestamps
 * in milliseconds; a comparison whose result could differ stays local.
 * Values are never written into the CQL text: every pushed comparison
 * becomes a bind marker whose value is computed by the executor from an
 * expression in fdw_exprs (a Const, a Param, or an outer-relation Var that
 * the planner turns into a nestloop Param), and every value of a write is a
 * bind marker too.  The callers (planner.c, modify.c, direct_modify.c,
 * analyze.c) decide where each marker's value comes from.
 *
 * The shape of a pushed statement follows what CQL accepts without ALLOW
 * FILTERING:
 *	- every partition-key column bound by = (or = ANY, run as one request per
 *	  partition), else a token-range scan of the whole table;
 *	- within a partition, = on a prefix of the clustering columns, then
 *	  either IN or one range (lower and/or upper bound) on the next one;
 *	- regular, static and left-over clustering restrictions only with the
 *	  table option allow_filtering.
 *
 * IDENTIFICATION
 *		src/fdw/deparse.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bucket.h"
#include "compat.h"
#include "convert.h"
#include "cql_fdw.h"
#include "cql_wire.h"
#include "deparse.h"
#include "deparse_int.h"
#include "timeuuid.h"

/* ---------------------------------------------------------------------
 * Type rules (those deparse_collection.c shares: deparse_rules.c)
 * ---------------------------------------------------------------------
 */

/*
 * is_integer_type
 *		int2, int4 or int8: a value of one may be compared with a column of
 *		another, the executor converts it exactly (cqlfdw_encode_bound).
 */
static bool
is_integer_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID;
}

/* Does the CQL type string name a type whose order Cassandra defines
 * differently (timeuuid: by time, not bytes)? */
static bool
cql_type_forbids_range(const CqlFdwColumn *c)
{
	return c->cql_type != NULL &&
		(pg_strcasecmp(c->cql_type, "timeuuid") == 0 ||
		 pg_strcasecmp(c->cql_type, "uuid") == 0 ||
		 pg_strcasecmp(c->cql_type, "inet") == 0 ||
		 pg_strcasecmp(c->cql_type, "float") == 0 ||
		 pg_strcasecmp(c->cql_type, "double") == 0);
}

/* Collations under which PostgreSQL compares text bytewise */
static bool
is_bytewise_collation(Oid collid)
{
	return collid == C_COLLATION_OID || collid == CQLFDW_POSIX_COLLATION_OID;
}

/*
 * A timestamptz constant that is not a whole number of milliseconds cannot
 * be compared in Cassandra without changing the answer (the bound value
 * would be truncated).  Runtime values (Params) are adjusted exactly by the
 * executor instead.
 */
static bool
const_has_submillisecond(Expr *value)
{
	Const	   *c;

	if (!IsA(value, Const))
		return false;
	c = (Const *) value;
	if (c->constisnull || c->consttype != TIMESTAMPTZOID)
		return false;
	return (DatumGetTimestampTz(c->constvalue) % 1000) != 0;
}

/* ---------------------------------------------------------------------
 * Clause matching
 * ---------------------------------------------------------------------
 */

/*
 * strategy_to_kind
 *		The bind kind of a btree strategy; with commuted (the column was the
 *		right operand) the direction is reversed.
 */
static CqlBindKind
strategy_to_kind(int strategy, bool commuted)
{
	switch (strategy)
	{
		case BTEqualStrategyNumber:
			return CQLBIND_EQ;
		case BTLessStrategyNumber:
			return commuted ? CQLBIND_GT : CQLBIND_LT;
		case BTLessEqualStrategyNumber:
			return commuted ? CQLBIND_GE : CQLBIND_LE;
		case BTGreaterStrategyNumber:
			return commuted ? CQLBIND_LT : CQLBIND_GT;
		case BTGreaterEqualStrategyNumber:
			return commuted ? CQLBIND_LE : CQLBIND_GE;
	}
	return CQLBIND_EQ;
}

/*
 * match_condition
 *		Is 'clause' a comparison Cassandra can evaluate exactly on one of
 *		our columns?  Fills *cond on success.
 */
static bool
match_condition(PlannerInfo *root, RelOptInfo *baserel, const CqlFdwTable *t,
				RestrictInfo *rinfo, Relids outer_ok, CqlCond *cond)
{
	Expr	   *clause = rinfo->clause;
	Index		relid = baserel->relid;
	Var		   *var;
	Expr	   *value;
	Oid			opno;
	Oid			inputcollid;
	bool		commuted = false;
	bool		is_in = false;
	bool		time_order = false;
	Oid			coltype;
	Oid			valtype;
	Oid			opfamily;
	int			strategy;
	const CqlFdwColumn *col;

	if (rinfo->pseudoconstant)
		return false;

	if (IsA(clause, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) clause;
		Expr	   *l,
				   *r;

		if (list_length(op->args) != 2)
			return false;
		l = linitial(op->args);
		r = lsecond(op->args);
		if ((var = cqlfdw_our_var(l, relid)) != NULL)
			value = r;
		else if ((var = cqlfdw_our_var(r, relid)) != NULL)
		{
			value = l;
			commuted = true;
		}
		else
			return false;
		opno = op->opno;
		inputcollid = op->inputcollid;
		valtype = exprType((Node *) value);
	}
	else if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;

		if (!saop->useOr || list_length(saop->args) != 2)
			return false;
		if ((var = cqlfdw_our_var(linitial(saop->args), relid)) == NULL)
			return false;
		value = lsecond(saop->args);
		opno = saop->opno;
		inputcollid = saop->inputcollid;
		valtype = get_element_type(exprType((Node *) value));
		if (!OidIsValid(valtype))
			return false;
		is_in = true;
	}
	else
		return false;

	if (var->varattno > t->natts)
		return false;
	col = &t->cols[var->varattno - 1];
	/* a masked column: Cassandra refuses it in WHERE to most roles */
	if (col->remote_name == NULL || col->masked != NULL)
		return false;
	/* a domain compares as its base type (the FDW stores the base value) */
	coltype = getBaseType(var->vartype);
	valtype = getBaseType(valtype);

	/* the operator must be the type's own btree comparison */
	opfamily = cqlfdw_default_btree_opfamily(coltype);
	if (!OidIsValid(opfamily))
		return false;
	strategy = get_op_opfamily_strategy(opno, opfamily);
	if (strategy == 0)
		return false;

	/*
	 * The value must be of the column's type; across the integer family the
	 * executor converts (out-of-range values are handled there exactly).
	 */
	if (valtype != coltype &&
		!(is_integer_type(valtype) && is_integer_type(coltype)) &&
		!(cqlfdw_is_text_type(valtype) && cqlfdw_is_text_type(coltype)))
		return false;

	if (strategy == BTEqualStrategyNumber)
	{
		if (!cqlfdw_eq_pushable_type(coltype))
			return false;

		/*
		 * Cassandra finds a partition by the bytes of its key: the decimals
		 * 1.0 and 1.00 are two partitions, but equal numerics.  Equality on
		 * a decimal partition key (or a numeric one of unknown CQL type)
		 * would miss rows.  Clustering columns compare numerically.
		 */
		if (col->kind == CQLCOL_PARTITION_KEY && coltype == NUMERICOID &&
			(col->cql_type == NULL || pg_strcasecmp(col->cql_type, "varint") != 0))
			return false;
		if (cqlfdw_is_text_type(coltype) && OidIsValid(inputcollid) &&
			!get_collation_isdeterministic(inputcollid))
			return false;
	}
	else if (!is_in && coltype == UUIDOID && col->cql_type != NULL &&
			 pg_strcasecmp(col->cql_type, "timeuuid") == 0 &&
			 cqlfdw_timeuuid_bound(value) != CQLTIMEUUID_NOT_BOUND)
	{
		/*
		 * A timeuuid against cql_min_timeuuid() or cql_max_timeuuid(): meant
		 * in Cassandra's order (by time), which PostgreSQL's uuid order is
		 * not.  Sent as a range; if it is not, the plan is refused
		 * (cqlfdw_check_local_timeuuid) rather than checked bytewise.
		 */
		time_order = true;
	}
	else
	{
		if (is_in || !cqlfdw_range_pushable_type(coltype) || cql_type_forbids_range(col))
			return false;
		if (cqlfdw_is_text_type(coltype) && !is_bytewise_collation(inputcollid))
			return false;
	}

	if (!cqlfdw_is_safe_value(root, value, relid, outer_ok))
		return false;
	if (const_has_submillisecond(value))
		return false;

	cond->rinfo = rinfo;
	cond->attnum = var->varattno;
	cond->kind = is_in ? CQLBIND_IN : strategy_to_kind(strategy, commuted);
	cond->value = value;
	cond->value_type = valtype;
	cond->is_join = !bms_is_empty(pull_varnos(root, (Node *) value));
	cond->time_order = time_order;
	return true;
}

/* Pick the best condition of 'kinds' on attnum from 'conds'. */
static CqlCond *
find_cond(List *conds, AttrNumber attnum, CqlBindKind kind, bool prefer_join)
{
	ListCell   *lc;
	CqlCond    *found = NULL;

	foreach(lc, conds)
	{
		CqlCond    *c = (CqlCond *) lfirst(lc);

		if (c->attnum != attnum || c->kind != kind || c->used)
			continue;
		if (found == NULL || (prefer_join && c->is_join && !found->is_join))
			found = c;
	}
	return found;
}

/*
 * push
 *		Mark c as pushed: its bind marker comes next in the statement, and
 *		its RestrictInfo is answered remotely.
 */
static void
push(CqlScanShape *shape, CqlCond *c)
{
	c->used = true;
	shape->pushed = lappend(shape->pushed, c);
	if (c->rinfo)
		shape->remote_conds = lappend(shape->remote_conds, c->rinfo);
}

/*
 * bucket_cond
 *		Can the scan enumerate the values of bucket column a, which the
 *		query does not bind?  A hash bucket always (all N values); a time
 *		bucket when its source column has a range (a bound of it is enough
 *		here: an open range is refused with a hint when the scan starts,
 *		rather than planned as a silent scan of the whole table).  Records
 *		the bucket and its range in the shape.
 */
static bool
bucket_cond(const CqlFdwTable *t, List *conds, AttrNumber a, CqlScanShape *shape)
{
	const CqlFdwColumn *col = &t->cols[a - 1];

	if (col->bucket.unit == CQLBUCKET_NONE || shape->bucket_attnum != InvalidAttrNumber)
		return false;
	if (col->bucket.unit != CQLBUCKET_HASH)
	{
		AttrNumber	src = col->bucket_src[0];
		CqlCond    *eq = find_cond(conds, src, CQLBIND_EQ, false);
		CqlCond    *lo = find_cond(conds, src, CQLBIND_GE, false);
		CqlCond    *hi = find_cond(conds, src, CQLBIND_LT, false);

		/* source = v: the one bucket of v */
		if (eq && !eq->is_join)
			lo = hi = eq;
		if (lo == NULL)
			lo = find_cond(conds, src, CQLBIND_GT, false);
		if (hi == NULL)
			hi = find_cond(conds, src, CQLBIND_LE, false);
		if (lo && lo->is_join)
			lo = NULL;
		if (hi && hi->is_join)
			hi = NULL;
		if (lo == NULL && hi == NULL)
			return false;
		shape->bucket_lo = lo;
		shape->bucket_hi = hi;
	}
	else
	{
		/* = on every source: the one bucket those values hash to */
		List	   *eqs = NIL;

		for (int i = 0; i < col->nbucket_src; i++)
		{
			CqlCond    *eq = find_cond(conds, col->bucket_src[i], CQLBIND_EQ, false);

			if (eq == NULL || eq->is_join)
			{
				eqs = NIL;
				break;
			}
			eqs = lappend(eqs, eq);
		}
		shape->bucket_eq = eqs;
	}
	shape->bucket_attnum = a;
	return true;
}

/* Push at most one lower and one upper bound on attnum. */
static bool
push_range(CqlScanShape *shape, List *conds, AttrNumber attnum)
{
	static const CqlBindKind lower[] = {CQLBIND_GT, CQLBIND_GE};
	static const CqlBindKind upper[] = {CQLBIND_LT, CQLBIND_LE};
	bool		any = false;

	for (int i = 0; i < 2; i++)
	{
		CqlCond    *c = find_cond(conds, attnum, lower[i], false);

		if (c)
		{
			push(shape, c);
			any = true;
			break;
		}
	}
	for (int i = 0; i < 2; i++)
	{
		CqlCond    *c = find_cond(conds, attnum, upper[i], false);

		if (c)
		{
			push(shape, c);
			any = true;
			break;
		}
	}
	return any;
}

/*
 * Number of distinct non-null elements of a constant array, or -1 if the
 * array is only known at run time.  The executor reads each distinct
 * partition once, so this is what EXPLAIN reports.
 */
static int
const_array_length(Expr *value)
{
	Const	   *c;
	ArrayType  *arr;
	int16		elmlen;
	bool		elmbyval;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			distinct = 0;

	if (!IsA(value, Const))
		return -1;
	c = (Const *) value;
	if (c->constisnull)
		return 0;
	arr = DatumGetArrayTypeP(c->constvalue);
	cqlfdw_array_elements(arr, ARR_ELEMTYPE(arr), &elems, &nulls, &n, &elmlen, &elmbyval);
	for (int i = 0; i < n; i++)
	{
		bool		dup = nulls[i];

		for (int j = 0; j < i && !dup; j++)
			dup = !nulls[j] && datumIsEqual(elems[i], elems[j], elmbyval, elmlen);
		if (!dup)
			distinct++;
	}
	return distinct;
}

/*
 * push_index_conds
 *		Push what Storage-Attached Indexes answer exactly, without ALLOW
 *		FILTERING: = on an indexed column of any type whose equality is
 *		pushable, and ranges on indexed columns of the types whose ranges
 *		are (not text: SAI refuses text ranges), next to the partition-key
 *		and clustering restrictions or the token range of a scan.  IN stays
 *		local (in 5.0 it is a post-filter, CASSANDRA-19829).  Predicates on
 *		two indexes are an intersection, which at consistency above ONE can
 *		miss rows (CASSANDRA-19007): then only the first index is used and
 *		the rest is checked locally.
 */
static void
push_index_conds(const CqlFdwTable *t, const CqlFdwOptions *opts, List *conds,
				 CqlScanShape *shape)
{
	bool		one_index = opts->consistency != CQL_CONSISTENCY_ONE &&
		opts->consistency != CQL_CONSISTENCY_LOCAL_ONE;
	bool		refused = shape->access == CQLACC_TOKEN_SCAN && opts->index_needs_pk;
	ListCell   *lc;

	foreach(lc, conds)
	{
		CqlCond    *c = (CqlCond *) lfirst(lc);
		const CqlFdwColumn *col = &t->cols[c->attnum - 1];
		const char *index;

		index = c->kind == CQLBIND_CONTAINS ? col->sai_values_index
			: c->kind == CQLBIND_CONTAINS_KEY ? col->sai_keys_index
			: c->kind == CQLBIND_ENTRY ? col->sai_entries_index
			: col->sai_index;
		if (c->used || c->is_join || c->kind == CQLBIND_IN || index == NULL ||
			col->kind == CQLCOL_PARTITION_KEY)
			continue;
		/* a timeuuid range goes to the clustering order only */
		if (c->time_order)
			continue;
		if (c->kind != CQLBIND_EQ && !cqlfdw_is_collection_kind(c->kind) &&
			cqlfdw_is_text_type(col->pgtype))
			continue;
		if (cqlfdw_cond_conflicts(shape->pushed, c))
			continue;
		if (one_index && shape->index_name && strcmp(shape->index_name, index) != 0)
			continue;
		if (refused)
		{
			/* the node would refuse it: evaluated locally, EXPLAIN says why */
			shape->index_refused = index;
			continue;
		}
		push(shape, c);
		if (shape->index_name == NULL)
			shape->index_name = index;
		shape->index_conds++;
	}
}

/*
 * cqlfdw_classify
 *		Split 'clauses' (RestrictInfos) into what the remote statement
 *		answers and what must be checked locally, and decide the access
 *		method.  'outer_ok' names the relations whose Vars may appear on the
 *		value side (the required outer rels of a parameterized path).
 *
 * prefer_join asks to bind the partition key from join clauses when both
 * a join clause and a restriction exist (a parameterized path is only
 * worth building when it uses its join clauses).
 */
void
cqlfdw_classify(PlannerInfo *root, RelOptInfo *baserel, const CqlFdwTable *t,
				const CqlFdwOptions *opts, List *clauses, Relids outer_ok,
				bool prefer_join, CqlScanShape *shape)
{
	List	   *conds = NIL;
	ListCell   *lc;
	bool		all_pk = (t->npk > 0);
	bool		stop = false;

	memset(shape, 0, sizeof(*shape));
	shape->npartitions = 1;

	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		CqlCond    *c = palloc0(sizeof(CqlCond));

		if (match_condition(root, baserel, t, rinfo, outer_ok, c) ||
			cqlfdw_match_collection_condition(root, baserel, t, rinfo, outer_ok, c))
			conds = lappend(conds, c);
		else
			pfree(c);
	}

	/* partition key: every column by = or IN, or an enumerable bucket */
	for (int i = 0; i < t->npk && all_pk; i++)
	{
		AttrNumber	a = t->pk[i];

		if (!find_cond(conds, a, CQLBIND_EQ, prefer_join) &&
			!find_cond(conds, a, CQLBIND_IN, prefer_join) &&
			!bucket_cond(t, conds, a, shape))
			all_pk = false;
	}
	if (!all_pk)
	{
		shape->bucket_attnum = InvalidAttrNumber;
		shape->bucket_lo = shape->bucket_hi = NULL;
		shape->bucket_eq = NIL;
	}

	if (all_pk)
	{
		shape->access = CQLACC_SINGLE_PARTITION;
		for (int i = 0; i < t->npk; i++)
		{
			AttrNumber	a = t->pk[i];
			CqlCond    *c = find_cond(conds, a, CQLBIND_EQ, prefer_join);

			if (c == NULL && a == shape->bucket_attnum &&
				find_cond(conds, a, CQLBIND_IN, prefer_join) == NULL)
			{
				/* one partition per bucket the range covers */
				c = palloc0(sizeof(CqlCond));
				c->attnum = a;
				c->kind = CQLBIND_BUCKET;
				shape->access = CQLACC_MULTI_PARTITION;
				push(shape, c);
				continue;
			}
			if (c == NULL)
			{
				int			n;

				c = find_cond(conds, a, CQLBIND_IN, prefer_join);
				shape->access = CQLACC_MULTI_PARTITION;
				shape->pk_has_in = true;
				n = const_array_length(c->value);
				if (n < 0 || shape->npartitions < 0)
					shape->npartitions = -1;
				else
					shape->npartitions *= n;
			}
			push(shape, c);
			if (c->is_join)
				shape->uses_join = true;
		}

		if (shape->bucket_attnum != InvalidAttrNumber)
		{
			int			nb = shape->bucket_eq != NIL ? 1 : cqlfdw_bucket_count_planned(t, shape->bucket_attnum,
														 shape->bucket_lo ? shape->bucket_lo->value : NULL,
														 shape->bucket_lo ? shape->bucket_lo->kind : 0,
														 shape->bucket_hi ? shape->bucket_hi->value : NULL,
														 shape->bucket_hi ? shape->bucket_hi->kind : 0,
														 opts->max_buckets);

			shape->npartitions = (nb < 0 || shape->npartitions < 0)
				? -1 : shape->npartitions * nb;
		}

		/* clustering: = prefix, then IN or one range */
		for (int i = 0; i < t->nck && !stop; i++)
		{
			AttrNumber	a = t->ck[i];
			CqlCond    *c;

			if ((c = find_cond(conds, a, CQLBIND_EQ, prefer_join)) != NULL)
			{
				push(shape, c);
				if (c->is_join)
					shape->uses_join = true;
				shape->ck_eq_prefix++;
				continue;
			}
			if ((c = find_cond(conds, a, CQLBIND_IN, false)) != NULL &&
				!c->is_join)
			{
				push(shape, c);
				shape->ck_has_in = true;
				stop = true;
				continue;
			}
			if (push_range(shape, conds, a))
				shape->ck_has_range = true;
			stop = true;
		}
	}
	else
	{
		shape->access = CQLACC_TOKEN_SCAN;
		shape->npartitions = -1;
	}

	if (opts->index_pushdown)
		push_index_conds(t, opts, conds, shape);

	/*
	 * Everything else is a filter: Cassandra evaluates it only with ALLOW
	 * FILTERING, which the user must ask for (it reads and discards rows).
	 * Partition-key columns are not filterable next to a token range, and IN
	 * is kept local.
	 */
	if (opts->allow_filtering)
	{
		foreach(lc, conds)
		{
			CqlCond    *c = (CqlCond *) lfirst(lc);

			if (c->used || c->kind == CQLBIND_IN || c->is_join ||
				cqlfdw_is_collection_kind(c->kind))
				continue;
			if (t->cols[c->attnum - 1].kind == CQLCOL_PARTITION_KEY)
				continue;
			/* only one restriction per column and direction */
			if (cqlfdw_cond_conflicts(shape->pushed, c))
				continue;
			push(shape, c);
			shape->filtering = true;
		}
	}

	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (!list_member_ptr(shape->remote_conds, rinfo))
			shape->local_conds = lappend(shape->local_conds, rinfo);
	}
}

/*
 * Would pushing 'c' next to the already pushed conditions give Cassandra
 * two restrictions of the same kind on one column (which it rejects)?
 */
bool
cqlfdw_cond_conflicts(List *pushed, const CqlCond *c)
{
	ListCell   *lc;

	foreach(lc, pushed)
	{
		CqlCond    *p = (CqlCond *) lfirst(lc);
		bool		p_lower = (p->kind == CQLBIND_GT || p->kind == CQLBIND_GE);
		bool		p_upper = (p->kind == CQLBIND_LT || p->kind == CQLBIND_LE);
		bool		c_lower = (c->kind == CQLBIND_GT || c->kind == CQLBIND_GE);
		bool		c_upper = (c->kind == CQLBIND_LT || c->kind == CQLBIND_LE);

		if (p->attnum != c->attnum)
			continue;
		/* one CONTAINS (KEY), m[k] per column: two are an index intersection */
		if (p->kind == c->kind && cqlfdw_is_collection_kind(c->kind))
			return true;
		if (cqlfdw_is_collection_kind(p->kind) || cqlfdw_is_collection_kind(c->kind))
			continue;
		if (p->kind == CQLBIND_EQ || c->kind == CQLBIND_EQ ||
			p->kind == CQLBIND_IN || c->kind == CQLBIND_IN ||
			(p_lower && c_lower) || (p_upper && c_upper))
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------------
 * ORDER BY
 * ---------------------------------------------------------------------
 */

/* Does ORDER BY on this column sort as Cassandra's clustering order does? */
static bool
order_pushable(const CqlFdwColumn *col, Oid collation)
{
	switch (col->pgtype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
		case FLOAT4OID:			/* -0.0 = 0.0 in PostgreSQL: either order ok */
		case FLOAT8OID:
		case BYTEAOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
			break;
		case TEXTOID:
		case VARCHAROID:
			if (!is_bytewise_collation(collation))
				return false;
			break;
		default:
			return false;
	}
	return !(col->cql_type &&
			 (pg_strcasecmp(col->cql_type, "timeuuid") == 0 ||
			  pg_strcasecmp(col->cql_type, "uuid") == 0 ||
			  pg_strcasecmp(col->cql_type, "inet") == 0));
}

/*
 * cqlfdw_order_matches
 *		Can the scan return rows in the order of 'pathkeys'?  Only within one
 *		partition, only along the clustering columns (those bound by = may be
 *		skipped), and only all in declared order or all reversed.
 *
 * Returns 0 if not, 1 for the declared order, -1 for the reversed order.
 */
int
cqlfdw_order_matches(PlannerInfo *root, RelOptInfo *baserel, const CqlFdwTable *t,
					 const CqlScanShape *shape, List *pathkeys)
{
	ListCell   *lc;
	int			next = 0;
	int			direction = 0;

	/*
	 * Time buckets read one after the other, in time order or newest first,
	 * return the rows in the order of the bucket's source column when it
	 * leads the ORDER BY: the buckets split the source's timeline.
	 */
	AttrNumber	bucket_src = InvalidAttrNumber;
	bool		bucket_merge = false;

	if (shape->access == CQLACC_MULTI_PARTITION && shape->bucket_attnum != InvalidAttrNumber &&
		!shape->pk_has_in)
	{
		const CqlFdwColumn *b = &t->cols[shape->bucket_attnum - 1];

		/*
		 * Hash buckets are all read at once and merged in clustering order
		 * (scan.c), for a bounded number of buckets.
		 */
		if (b->bucket.unit != CQLBUCKET_HASH)
			bucket_src = b->bucket_src[0];
		else
			bucket_merge = shape->bucket_eq != NIL || b->bucket.n <= CQLFDW_MAX_MERGE_BUCKETS;
	}

	if (pathkeys == NIL ||
		(shape->access != CQLACC_SINGLE_PARTITION && bucket_src == InvalidAttrNumber &&
		 !bucket_merge) ||
		shape->ck_has_in || t->nck == 0)
		return 0;
	/* masked clustering values are not in the order the rows come in */
	for (int i = 0; i < t->nck; i++)
		if (t->cols[t->ck[i] - 1].masked != NULL)
			return 0;

	foreach(lc, pathkeys)
	{
		PathKey    *pk = (PathKey *) lfirst(lc);
		EquivalenceClass *ec = pk->pk_eclass;
		ListCell   *lm;
		AttrNumber	attnum = InvalidAttrNumber;
		int			idx = -1;
		bool		asc;
		int			dir;

		if (ec->ec_has_volatile)
			return 0;
		foreach(lm, ec->ec_members)
		{
			EquivalenceMember *em = (EquivalenceMember *) lfirst(lm);
			Var		   *v = cqlfdw_our_var(em->em_expr, baserel->relid);

			if (v && bms_equal(em->em_relids, baserel->relids))
			{
				attnum = v->varattno;
				break;
			}
		}
		if (attnum == InvalidAttrNumber)
			return 0;

		/* skip clustering columns bound by = */
		for (int i = next; i < t->nck; i++)
		{
			if (t->ck[i] == attnum)
			{
				idx = i;
				break;
			}
			if (!cqlfdw_shape_binds_eq(shape, t->ck[i]))
				break;
		}
		if (idx < 0)
			return 0;
		if (bucket_src != InvalidAttrNumber && next == 0 && attnum != bucket_src)
			return 0;
		if (!order_pushable(&t->cols[attnum - 1], ec->ec_collation))
			return 0;
		if (pk->pk_opfamily != cqlfdw_default_btree_opfamily(t->cols[attnum - 1].pgtype))
			return 0;

		asc = cqlfdw_pathkey_is_asc(pk);
		dir = (asc != t->cols[attnum - 1].desc) ? 1 : -1;
		if (direction != 0 && dir != direction)
			return 0;
		direction = dir;
		next = idx + 1;
	}
	return direction;
}

/*
 * cqlfdw_shape_binds_eq
 *		Does the shape bind column attnum by "="?  (Such clustering columns
 *		may be skipped by ORDER BY.)
 */
bool
cqlfdw_shape_binds_eq(const CqlScanShape *shape, AttrNumber attnum)
{
	ListCell   *lc;

	foreach(lc, shape->pushed)
	{
		CqlCond    *c = (CqlCond *) lfirst(lc);

		if (c->attnum == attnum && c->kind == CQLBIND_EQ)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------------
 * CQL text
 * ---------------------------------------------------------------------
 */

/* Append a double-quoted CQL identifier ("" doubles a quote). */
void
cqlfdw_append_ident(StringInfo buf, const char *ident)
{
	appendStringInfoChar(buf, '"');
	for (const char *p = ident; *p; p++)
	{
		if (*p == '"')
			appendStringInfoChar(buf, '"');
		appendStringInfoChar(buf, *p);
	}
	appendStringInfoChar(buf, '"');
}

/*
 * cqlfdw_append_table
 *		Append "keyspace"."table" of the foreign table, both quoted.
 */
void
cqlfdw_append_table(StringInfo buf, const CqlFdwTable *t)
{
	cqlfdw_append_ident(buf, t->keyspace);
	appendStringInfoChar(buf, '.');
	cqlfdw_append_ident(buf, t->table);
}

/*
 * append_token_call
 *		Append token("pk1", "pk2", ...) over the partition-key columns, in
 *		key order.
 */
static void
append_token_call(StringInfo buf, const CqlFdwTable *t)
{
	appendStringInfoString(buf, "token(");
	for (int i = 0; i < t->npk; i++)
	{
		if (i > 0)
			appendStringInfoString(buf, ", ");
		cqlfdw_append_ident(buf, t->cols[t->pk[i] - 1].remote_name);
	}
	appendStringInfoChar(buf, ')');
}

/*
 * cqlfdw_bind_operator
 *		The CQL operator of a comparison bind kind; "?" for the others
 *		(token bounds, LIMIT), which are not written with it.
 */
const char *
cqlfdw_bind_operator(CqlBindKind k)
{
	switch (k)
	{
		case CQLBIND_EQ:
			return "=";
		case CQLBIND_IN:
			return "IN";
		case CQLBIND_GT:
			return ">";
		case CQLBIND_GE:
			return ">=";
		case CQLBIND_LT:
			return "<";
		case CQLBIND_LE:
			return "<=";
		case CQLBIND_BUCKET:
			return "=";
		case CQLBIND_CONTAINS:
			return "CONTAINS";
		case CQLBIND_CONTAINS_KEY:
			return "CONTAINS KEY";
		default:
			return "?";
	}
}

/*
 * cqlfdw_deparse_truncate
 *		TRUNCATE of the Cassandra table behind a foreign table.
 */
char *
cqlfdw_deparse_truncate(const CqlFdwTable *t)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "TRUNCATE ");
	cqlfdw_append_table(&buf, t);
	return buf.data;
}

/*
 * append_using
 *		" USING TTL ? AND TIMESTAMP ?", or either part alone, or nothing.
 */
static void
append_using(StringInfo buf, bool with_ttl, bool with_timestamp)
{
	if (with_ttl)
		appendStringInfoString(buf, " USING TTL ?");
	if (with_timestamp)
		appendStringInfoString(buf, with_ttl ? " AND TIMESTAMP ?" : " USING TIMESTAMP ?");
}

/*
 * cqlfdw_deparse_insert
 *		INSERT of the columns attrs (attnums, in marker order), each a bind
 *		marker; optionally IF NOT EXISTS and USING TTL ? AND TIMESTAMP ?
 *		(those markers last, in that order).
 */
char *
cqlfdw_deparse_insert(const CqlFdwTable *t, List *attrs, bool if_not_exists,
					  bool with_ttl, bool with_timestamp)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "INSERT INTO ");
	cqlfdw_append_table(&buf, t);
	appendStringInfoString(&buf, " (");
	foreach(lc, attrs)
	{
		if (foreach_current_index(lc) > 0)
			appendStringInfoString(&buf, ", ");
		cqlfdw_append_ident(&buf, t->cols[lfirst_int(lc) - 1].remote_name);
	}
	appendStringInfoString(&buf, ") VALUES (");
	for (int i = 0; i < list_length(attrs); i++)
		appendStringInfoString(&buf, i == 0 ? "?" : ", ?");
	appendStringInfoChar(&buf, ')');
	if (if_not_exists)
		appendStringInfoString(&buf, " IF NOT EXISTS");
	append_using(&buf, with_ttl, with_timestamp);
	return buf.data;
}

/*
 * append_conds
 *		" WHERE k = ? AND c >= ? ..." for the key conditions conds.
 */
static void
append_conds(StringInfo buf, const CqlFdwTable *t, List *conds)
{
	ListCell   *lc;

	foreach(lc, conds)
	{
		List	   *c = (List *) lfirst(lc);

		appendStringInfoString(buf, foreach_current_index(lc) == 0 ? " WHERE " : " AND ");
		cqlfdw_append_ident(buf, t->cols[linitial_int(c) - 1].remote_name);
		appendStringInfo(buf, " %s ?", cqlfdw_bind_operator(lsecond_int(c)));
	}
}

/*
 * cqlfdw_deparse_update
 *		UPDATE with the assignments sets and the key conditions conds; the
 *		markers of USING TTL ? AND TIMESTAMP ? (with_ttl, with_timestamp)
 *		come first in the text.
 */
char *
cqlfdw_deparse_update(const CqlFdwTable *t, List *sets, bool with_ttl,
					  bool with_timestamp, List *conds)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "UPDATE ");
	cqlfdw_append_table(&buf, t);
	append_using(&buf, with_ttl, with_timestamp);
	appendStringInfoString(&buf, " SET ");
	foreach(lc, sets)
	{
		List	   *set = (List *) lfirst(lc);
		const char *name = t->cols[linitial_int(set) - 1].remote_name;

		if (foreach_current_index(lc) > 0)
			appendStringInfoString(&buf, ", ");
		cqlfdw_append_ident(&buf, name);
		appendStringInfoString(&buf, " = ");
		if (lsecond_int(set) != CQLSET_VALUE)
		{
			cqlfdw_append_ident(&buf, name);
			appendStringInfoString(&buf, lsecond_int(set) == CQLSET_INCREMENT
								   ? " + " : " - ");
		}
		appendStringInfoChar(&buf, '?');
	}
	append_conds(&buf, t, conds);
	return buf.data;
}

/*
 * cqlfdw_deparse_delete
 *		DELETE of the row, slice or partition that conds name.
 */
char *
cqlfdw_deparse_delete(const CqlFdwTable *t, List *conds)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "DELETE FROM ");
	cqlfdw_append_table(&buf, t);
	append_conds(&buf, t, conds);
	return buf.data;
}

/*
 * cqlfdw_append_from_where
 *		" FROM ks.table WHERE ..." of a SELECT of shape 'shape': the token
 *		range of a token scan, then one condition per pushed restriction,
 *		every value a bind marker (in the order cqlfdw_shape_binds lists
 *		them).  Partition-key IN conditions are written as "=": the
 *		executor sends one request per partition.
 */
void
cqlfdw_append_from_where(StringInfo buf, const CqlFdwTable *t,
						 const CqlScanShape *shape)
{
	bool		first = true;
	ListCell   *lc;

	appendStringInfoString(buf, " FROM ");
	cqlfdw_append_table(buf, t);

	if (shape->access == CQLACC_TOKEN_SCAN && t->npk > 0)
	{
		appendStringInfoString(buf, " WHERE ");
		append_token_call(buf, t);
		appendStringInfoString(buf, " > ? AND ");
		append_token_call(buf, t);
		appendStringInfoString(buf, " <= ?");
		first = false;
	}
	foreach(lc, shape->pushed)
	{
		CqlCond    *c = (CqlCond *) lfirst(lc);
		const CqlFdwColumn *col = &t->cols[c->attnum - 1];
		CqlBindKind k = c->kind;

		if (k == CQLBIND_IN && col->kind == CQLCOL_PARTITION_KEY)
			k = CQLBIND_EQ;
		appendStringInfoString(buf, first ? " WHERE " : " AND ");
		cqlfdw_append_ident(buf, col->remote_name);
		if (k == CQLBIND_ENTRY)
			appendStringInfoString(buf, "[?] = ?");
		else
			appendStringInfo(buf, " %s ?", cqlfdw_bind_operator(k));
		first = false;
	}
}

/*
 * cqlfdw_deparse_select
 *		Build the SELECT for a scan of shape 'shape'.
 *
 * retrieved_attrs gets the attnums in SELECT-list order.  order_direction
 * is the result of cqlfdw_order_matches for the chosen path; with -1 the
 * whole clustering order is reversed (CQL reverses all columns or none).
 * Partition-key IN conditions are written as "=": the executor sends one
 * request per partition.
 */
char *
cqlfdw_deparse_select(const CqlFdwTable *t, const CqlScanShape *shape,
					  Bitmapset *attrs_used, int order_direction,
					  bool has_limit, List **retrieved_attrs)
{
	StringInfoData buf;
	bool		first = true;
	bool		whole_row = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber,
										  attrs_used);

	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT ");
	*retrieved_attrs = NIL;

	/*
	 * The table's columns, then the write metadata columns (write_metadata.c):
	 * WRITETIME("v"), TTL("v").
	 */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < t->natts; i++)
		{
			AttrNumber	a = i + 1;
			const CqlFdwColumn *col = &t->cols[i];

			if (pass == 0 ? col->remote_name == NULL : col->meta == CQLMETA_NONE)
				continue;
			if (!whole_row &&
				!bms_is_member(a - FirstLowInvalidHeapAttributeNumber, attrs_used))
				continue;
			if (!first)
				appendStringInfoString(&buf, ", ");
			if (pass == 0)
				cqlfdw_append_ident(&buf, col->remote_name);
			else
			{
				appendStringInfoString(&buf, col->meta == CQLMETA_TTL
									   ? "TTL(" : "WRITETIME(");
				cqlfdw_append_ident(&buf, t->cols[col->meta_attnum - 1].remote_name);
				appendStringInfoChar(&buf, ')');
			}
			*retrieved_attrs = lappend_int(*retrieved_attrs, a);
			first = false;
		}
	if (first)
	{
		/* no column needed (e.g. count(*)): fetch the smallest thing */
		AttrNumber	a = t->npk > 0 ? t->pk[0] : 1;

		cqlfdw_append_ident(&buf, t->cols[a - 1].remote_name);
	}

	cqlfdw_append_from_where(&buf, t, shape);

	if (shape->ann_attnum != InvalidAttrNumber)
	{
		appendStringInfoString(&buf, " ORDER BY ");
		cqlfdw_append_ident(&buf, t->cols[shape->ann_attnum - 1].remote_name);
		appendStringInfoString(&buf, " ANN OF ?");
	}
	else if (order_direction < 0)
	{
		appendStringInfoString(&buf, " ORDER BY ");
		for (int i = 0; i < t->nck; i++)
		{
			const CqlFdwColumn *col = &t->cols[t->ck[i] - 1];

			if (i > 0)
				appendStringInfoString(&buf, ", ");
			cqlfdw_append_ident(&buf, col->remote_name);
			appendStringInfoString(&buf, col->desc ? " ASC" : " DESC");
		}
	}
	if (has_limit)
		appendStringInfoString(&buf, " LIMIT ?");
	if (shape->filtering)
		appendStringInfoString(&buf, " ALLOW FILTERING");
	return buf.data;
}

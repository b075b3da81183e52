/*-------------------------------------------------------------------------
 *
 * vector_search.c
 *		Vector search: a query ordered by pgvector's distance between a
 *		vector column and a value, with a LIMIT, becomes Cassandra 5.0's
 *		ANN search on the column's Storage-Attached Index.
 *
 *		SELECT ... FROM items [WHERE <partition key> = ... AND ...]
 *		ORDER BY embedding <=> '[...]' LIMIT 10
 *	->	SELECT ... FROM "ks"."items" [WHERE ...]
 *		ORDER BY "embedding" ANN OF ? LIMIT ?
 *
 * Each pgvector operator orders like one similarity function of the SAI
 * index (Cassandra returns the most similar rows first, i.e. the smallest
 * distances): <=> (cosine distance) like COSINE, <-> (Euclidean distance)
 * like EUCLIDEAN, <#> (negative inner product) like DOT_PRODUCT.  Only the
 * operator that matches the index's similarity_function (column option
 * sai_similarity, from IMPORT FOREIGN SCHEMA or the table's schema) is
 * pushed; any other order is sorted locally over the rows read, which is
 * the exact answer.
 *
 * Conditions, checked on Cassandra 5.0: ascending order only, NULLS LAST,
 * the ORDER BY being the whole sort; LIMIT (+ OFFSET) known when planning
 * and at most 1000; the scan reads the whole table or one partition
 * (partition-key IN and bucket enumeration are refused by Cassandra with
 * ANN); every restriction is answered remotely (index filters and a
 * clustering range combine with ANN), so the rows returned are the
 * query's rows.  The distance itself, when selected, is computed locally
 * by pgvector from the vector read.
 *
 * ANN is approximate: the rows are the index's nearest neighbours, which
 * on small or well-indexed data are the exact top k; rows whose vector is
 * NULL are never returned (PostgreSQL would put them last).
 *
 * IDENTIFICATION
 *		src/fdw/vector_search.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "compat.h"
#include "convert.h"
#include "deparse.h"
#include "vector_search.h"

/*
 * similarity_of_operator
 *		The SAI similarity function ordering like pgvector's operator opno
 *		on vector type vectype, or NULL when opno is none of them.
 */
static const char *
similarity_of_operator(Oid opno, Oid vectype)
{
	HeapTuple	tp;
	Form_pg_operator op;
	const char *sim = NULL;
	Oid			typns;

	/* pgvector's own operators: in the schema of its type */
	tp = SearchSysCache1(TYPEOID, ObjectIdGetDatum(vectype));
	if (!HeapTupleIsValid(tp))
		return NULL;
	typns = ((Form_pg_type) GETSTRUCT(tp))->typnamespace;
	ReleaseSysCache(tp);

	tp = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	if (!HeapTupleIsValid(tp))
		return NULL;
	op = (Form_pg_operator) GETSTRUCT(tp);
	if (op->oprleft == vectype && op->oprright == vectype && op->oprnamespace == typns)
	{
		if (strcmp(NameStr(op->oprname), "<=>") == 0)
			sim = "cosine";
		else if (strcmp(NameStr(op->oprname), "<->") == 0)
			sim = "euclidean";
		else if (strcmp(NameStr(op->oprname), "<#>") == 0)
			sim = "dot_product";
	}
	ReleaseSysCache(tp);
	return sim;
}

/* the scan may carry ANN: whole table, or one partition without IN */
static bool
access_allows_ann(const CqlFdwTable *t, const CqlScanShape *shape)
{
	ListCell   *lc;

	if (shape->bucket_attnum != InvalidAttrNumber || shape->pk_has_in || shape->ck_has_in)
		return false;
	if (shape->access == CQLACC_SINGLE_PARTITION)
		return true;
	if (shape->access != CQLACC_TOKEN_SCAN)
		return false;
	/* a part of the partition key with ALLOW FILTERING: not with ANN */
	foreach(lc, shape->pushed)
	{
		CqlCond    *c = (CqlCond *) lfirst(lc);

		if (t->cols[c->attnum - 1].kind == CQLCOL_PARTITION_KEY)
			return false;
	}
	return true;
}

/*
 * cqlfdw_ann_match
 *		Is the query's ORDER BY an ANN search on this scan?  Fills *ann.
 *		The caller has checked that LIMIT may be sent (limit_pushable).
 */
bool
cqlfdw_ann_match(PlannerInfo *root, RelOptInfo *baserel, const CqlFdwTable *t,
				 const CqlScanShape *shape, CqlAnnSearch *ann)
{
	Oid			vectype = cqlfdw_pgvector_type();
	PathKey    *pk;
	ListCell   *lc;

	if (!OidIsValid(vectype) || list_length(root->query_pathkeys) != 1 ||
		list_length(root->parse->sortClause) != 1)
		return false;
	if (root->limit_tuples <= 0 || root->limit_tuples > CQLFDW_ANN_MAX_LIMIT)
		return false;
	if (!access_allows_ann(t, shape))
		return false;
	pk = linitial_node(PathKey, root->query_pathkeys);
	if (pk->pk_nulls_first || pk->pk_eclass->ec_has_volatile || !cqlfdw_pathkey_is_asc(pk))
		return false;

	foreach(lc, pk->pk_eclass->ec_members)
	{
		EquivalenceMember *em = (EquivalenceMember *) lfirst(lc);
		Expr	   *e = em->em_expr;
		OpExpr	   *op;
		const char *sim;
		Var		   *var = NULL;
		Expr	   *other = NULL;

		while (IsA(e, RelabelType))
			e = ((RelabelType *) e)->arg;
		if (!IsA(e, OpExpr) || list_length(((OpExpr *) e)->args) != 2)
			continue;
		op = (OpExpr *) e;
		sim = similarity_of_operator(op->opno, vectype);
		if (sim == NULL)
			continue;
		/* the distances are symmetric: the column may be on either side */
		for (int side = 0; side < 2 && var == NULL; side++)
		{
			Expr	   *a = (Expr *) list_nth(op->args, side);

			if (IsA(a, Var) && ((Var *) a)->varno == baserel->relid &&
				((Var *) a)->varlevelsup == 0 && ((Var *) a)->varattno > 0)
			{
				var = (Var *) a;
				other = (Expr *) list_nth(op->args, 1 - side);
			}
		}
		if (var == NULL || contain_var_clause((Node *) other) ||
			contain_volatile_functions((Node *) other) ||
			(IsA(other, Const) && ((Const *) other)->constisnull))
			continue;
		{
			const CqlFdwColumn *col = &t->cols[var->varattno - 1];

			if (col->remote_name == NULL || col->sai_index == NULL ||
				col->sai_similarity == NULL || strcmp(col->sai_similarity, sim) != 0 ||
				col->pgtype != vectype)
				continue;
		}
		ann->attnum = var->varattno;
		ann->query = other;
		ann->limit = root->limit_tuples;
		return true;
	}
	return false;
}

/* (attnum, query expression, limit) for a path's fdw_private */
List *
cqlfdw_ann_private(const CqlAnnSearch *ann)
{
	return list_make3(makeInteger(ann->attnum), ann->query,
					  makeInteger((int) ann->limit));
}

void
cqlfdw_ann_from_private(List *private, CqlAnnSearch *ann)
{
	ann->attnum = (AttrNumber) intVal(linitial(private));
	ann->query = (Expr *) lsecond(private);
	ann->limit = intVal(lthird(private));
}

/* "ANN search (index, similarity)" for EXPLAIN's Access */
const char *
cqlfdw_ann_explain(const CqlFdwTable *t, AttrNumber attnum)
{
	const CqlFdwColumn *col = &t->cols[attnum - 1];

	return psprintf("ANN search (%s, %s)", col->sai_index, col->sai_similarity);
}

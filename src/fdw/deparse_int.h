/*-------------------------------------------------------------------------
 *
 * deparse_int.h
 *		Type and expression rules shared by the files of the scan
 *		classification (deparse_rules.c, the lowest of them), and the
 *		conditions on collections (deparse_collection.c) that deparse.c
 *		asks for.  Private to the scan classification.
 *
 * IDENTIFICATION
 *		src/fdw/deparse_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_DEPARSE_INT_H
#define CQL_FDW_DEPARSE_INT_H

#include "postgres.h"

#include "nodes/pathnodes.h"

#include "cql_fdw.h"
#include "deparse.h"

/* deparse_rules.c */
extern bool cqlfdw_eq_pushable_type(Oid typid);
extern bool cqlfdw_range_pushable_type(Oid typid);
extern bool cqlfdw_is_text_type(Oid typid);
extern Oid	cqlfdw_default_btree_opfamily(Oid typid);
extern Var *cqlfdw_our_var(Expr *e, Index relid);
extern bool cqlfdw_is_safe_value(PlannerInfo *root, Expr *value, Index relid,
								 Relids outer_ok);

/* deparse_collection.c */
extern bool cqlfdw_is_collection_kind(CqlBindKind k);
extern bool cqlfdw_match_collection_condition(PlannerInfo *root, RelOptInfo *baserel,
											  const CqlFdwTable *t, RestrictInfo *rinfo,
											  Relids outer_ok, CqlCond *cond);

#endif							/* CQL_FDW_DEPARSE_INT_H */

/*-------------------------------------------------------------------------
 *
 * deparse.h
 *		Pushdown analysis and CQL text generation (deparse.c).
 *
 * IDENTIFICATION
 *		src/fdw/deparse.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_DEPARSE_H
#define CQL_FDW_DEPARSE_H

#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"

#include "cql_fdw.h"

/* A restriction Cassandra can evaluate exactly on one column */
typedef struct CqlCond
{
	RestrictInfo *rinfo;
	AttrNumber	attnum;
	CqlBindKind kind;			/* EQ, IN, GT, GE, LT, LE */
	Expr	   *value;			/* value (array for IN) */
	Expr	   *key;			/* CQLBIND_ENTRY: the map key */
	Oid			value_type;		/* element type for IN */
	bool		is_join;		/* value reads outer relations */
	bool		used;			/* pushed */
	bool		time_order;		/* a timeuuid range bounded by
								 * cql_min/max_timeuuid(): Cassandra's time
								 * order, never checked locally (timeuuid.c) */
} CqlCond;

/* The result of classifying a scan's restrictions */
typedef struct CqlScanShape
{
	CqlAccess	access;
	List	   *pushed;			/* CqlCond *, in bind-marker order */
	List	   *remote_conds;	/* RestrictInfos answered remotely */
	List	   *local_conds;	/* RestrictInfos checked locally */
	int			npartitions;	/* partitions read; -1 unknown/all */
	int			ck_eq_prefix;	/* clustering columns bound by = */
	bool		ck_has_in;
	bool		ck_has_range;
	bool		filtering;		/* needs ALLOW FILTERING */
	bool		uses_join;		/* binds a key from join clauses */
	bool		pk_has_in;		/* a partition-key column bound by IN */
	AttrNumber	bucket_attnum;	/* bucket column enumerated by the scan */
	CqlCond    *bucket_lo;		/* range on a time bucket's source */
	CqlCond    *bucket_hi;
	List	   *bucket_eq;		/* hash bucket: = on every source, or NIL */
	const char *index_name;		/* first SAI index a pushed predicate uses */
	int			index_conds;	/* predicates served by SAI indexes */
	AttrNumber	ann_attnum;		/* ORDER BY this vector ANN OF ?, or 0 (set
								 * by the planner, vector_search.c) */
	const char *index_refused;	/* an index the node's guardrail forbids
								 * without the partition key, or NULL */
} CqlScanShape;

/*
 * One assignment of an UPDATE: IntList (attnum, CqlSetKind).  One key
 * condition of an UPDATE or DELETE: IntList (attnum, CqlBindKind), in
 * statement order.  Every value is a bind marker.
 */
typedef enum CqlSetKind
{
	CQLSET_VALUE = 0,			/* col = ? */
	CQLSET_INCREMENT,			/* counter: col = col + ? */
	CQLSET_DECREMENT			/* counter: col = col - ? */
} CqlSetKind;

extern void cqlfdw_classify(PlannerInfo *root, RelOptInfo *baserel,
							const CqlFdwTable *t, const CqlFdwOptions *opts,
							List *clauses, Relids outer_ok, bool prefer_join,
							CqlScanShape *shape);
extern bool cqlfdw_cond_conflicts(List *pushed, const CqlCond *c);
extern bool cqlfdw_shape_binds_eq(const CqlScanShape *shape, AttrNumber attnum);
extern int	cqlfdw_order_matches(PlannerInfo *root, RelOptInfo *baserel,
								 const CqlFdwTable *t, const CqlScanShape *shape,
								 List *pathkeys);
extern const char *cqlfdw_bind_operator(CqlBindKind k);
extern void cqlfdw_append_ident(StringInfo buf, const char *ident);
extern void cqlfdw_append_table(StringInfo buf, const CqlFdwTable *t);
extern char *cqlfdw_deparse_truncate(const CqlFdwTable *t);
extern char *cqlfdw_deparse_insert(const CqlFdwTable *t, List *attrs,
								   bool if_not_exists, bool with_ttl,
								   bool with_timestamp);
extern char *cqlfdw_deparse_update(const CqlFdwTable *t, List *sets,
								   bool with_ttl, bool with_timestamp,
								   List *conds);
extern char *cqlfdw_deparse_delete(const CqlFdwTable *t, List *conds);
extern void cqlfdw_append_from_where(StringInfo buf, const CqlFdwTable *t,
									 const CqlScanShape *shape);
extern char *cqlfdw_deparse_select(const CqlFdwTable *t, const CqlScanShape *shape,
								   Bitmapset *attrs_used, int order_direction,
								   bool has_limit, List **retrieved_attrs);

#endif							/* CQL_FDW_DEPARSE_H */

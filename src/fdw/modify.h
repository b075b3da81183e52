/*-------------------------------------------------------------------------
 *
 * modify.h
 *		INSERT/UPDATE/DELETE/TRUNCATE callbacks of cql_fdw (modify.c).
 *
 * IDENTIFICATION
 *		src/fdw/modify.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_MODIFY_H
#define CQL_FDW_MODIFY_H

#include "foreign/fdwapi.h"

#include "compat.h"
#include "cql_fdw.h"
#include "cql_wire.h"
#include "remote.h"

extern void cqlAddForeignUpdateTargets(PlannerInfo *root, Index rtindex,
									   RangeTblEntry *target_rte,
									   Relation target_relation);
extern List *cqlPlanForeignModify(PlannerInfo *root, ModifyTable *plan,
								  Index resultRelation, int subplan_index);
extern void cqlBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
								  List *fdw_private, int subplan_index, int eflags);
extern TupleTableSlot *cqlExecForeignInsert(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot,
											TupleTableSlot *planSlot);
extern TupleTableSlot **cqlExecForeignBatchInsert(EState *estate, ResultRelInfo *rinfo,
												  TupleTableSlot **slots,
												  TupleTableSlot **planSlots,
												  int *numSlots);
extern int	cqlGetForeignModifyBatchSize(ResultRelInfo *rinfo);
extern TupleTableSlot *cqlExecForeignUpdate(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot,
											TupleTableSlot *planSlot);
extern TupleTableSlot *cqlExecForeignDelete(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot,
											TupleTableSlot *planSlot);
extern void cqlEndForeignModify(EState *estate, ResultRelInfo *rinfo);
extern void cqlExplainForeignModify(ModifyTableState *mtstate,
									ResultRelInfo *rinfo, List *fdw_private,
									int subplan_index, ExplainState *es);
extern void cqlBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern void cqlEndForeignInsert(EState *estate, ResultRelInfo *rinfo);
extern int	cqlIsForeignRelUpdatable(Relation rel);
extern void cqlExecForeignTruncate(List *rels, DropBehavior behavior,
								   bool restart_seqs);

extern bool cqlfdw_table_has_counters(const CqlFdwTable *t);
extern bool cqlfdw_is_key_column(const CqlFdwTable *t, AttrNumber a);
extern bool cqlfdw_is_counter_column(const CqlFdwTable *t, AttrNumber a);
extern bool cqlfdw_is_counter_increment(Expr *expr, Index rtindex,
										AttrNumber attnum);

/* in direct_modify.c: UPDATE/DELETE sent as one CQL statement */
extern bool cqlPlanDirectModify(PlannerInfo *root, ModifyTable *plan,
								Index resultRelation, int subplan_index);
extern void cqlBeginDirectModify(ForeignScanState *node, int eflags);
extern TupleTableSlot *cqlIterateDirectModify(ForeignScanState *node);
extern void cqlEndDirectModify(ForeignScanState *node);
extern void cqlExplainDirectModify(ForeignScanState *node, ExplainState *es);
extern void cqlfdw_direct_send(CqlRemote *r, cql_value_ref *values, int nvalues,
							   const uint8_t *key, size_t keylen, bool stamp_writes,
							   const uint8_t *row_key, size_t row_key_len);

#endif							/* CQL_FDW_MODIFY_H */

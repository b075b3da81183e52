/*-------------------------------------------------------------------------
 *
 * direct_modify.c
 *		UPDATE and DELETE sent to Cassandra as one CQL statement.
 *
 * When the WHERE clause of an UPDATE or DELETE pins rows the way a CQL
 * statement can address them, reading the rows first (the scan under
 * ModifyTable) is a wasted round trip:
 *	- UPDATE ... SET c = <value> WHERE <every primary-key column> = <value>
 *	  becomes UPDATE ks.t SET c = ? WHERE k1 = ? AND ...;
 *	- DELETE ... WHERE <partition key> = ... [AND <clustering prefix> = ...
 *	  [AND <range on the next clustering column>]] becomes one DELETE: a
 *	  row, a slice of a partition or a whole partition.
 * Conditions: the scan below ModifyTable reads one partition with every
 * restriction evaluated remotely (no local filter, no ALLOW FILTERING, no
 * IN list), the SET values do not read the old row (counters excepted:
 * "n = n + x" is CQL's own increment), no RETURNING, no row triggers (the
 * core planner checks those).  Anything else takes the read-then-write
 * path of modify.c.
 *
 * Semantics, as documented in docs/cql_fdw.md: a CQL UPDATE is an upsert,
 * so an UPDATE by full key of an absent row creates it; Cassandra does not
 * report how many rows a write touched, so the command tag counts the rows
 * addressed: 1 for a statement by full key, 0 for a slice or partition
 * delete.  The table or server option direct_modify 'false' restores
 * PostgreSQL's row-count semantics at the price of the read.
 *
 * IDENTIFICATION
 *		src/fdw/direct_modify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "connection.h"
#include "convert.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "deparse.h"
#include "modify.h"
#include "planner.h"
#include "remote.h"
#include "txn_writes.h"

/* fdw_private of a ForeignScan turned into a direct modify */
enum FdwDirectModifyPrivateIndex
{
	FdwDirectPrivateCql,		/* String: the statement */
	FdwDirectPrivateBinds,		/* List of IntList (role, attnum, expr index,
								 * CqlBindKind) in marker order */
	FdwDirectPrivateFullKey		/* Integer: addresses exactly one row */
};

/* Where the value of a bind marker comes from */
typedef enum DirectBindRole
{
	DIRECT_SET = 0,				/* SET col = ? */
	DIRECT_COUNTER,				/* SET n = n +/- ? */
	DIRECT_TTL,					/* USING TTL ? (option ttl) */
	DIRECT_KEY					/* WHERE key col <op> ? */
} DirectBindRole;

typedef struct DirectBind
{
	DirectBindRole role;
	AttrNumber	attnum;
	int			expr_index;		/* into fdw_exprs, -1 for TTL */
	CqlBindKind kind;			/* for keys: EQ, GT, GE, LT, LE */
	CqlConv		conv;
	Oid			value_type;
} DirectBind;

typedef struct CqlDirectState
{
	CqlRemote	remote;			/* statement, options, layout, connection */
	Relation	rel;
	const char *relname;
	int			nbinds;
	DirectBind *binds;
	List	   *exprs;			/* ExprState per fdw_exprs entry */
	bool		full_key;
	bool		stamp_writes;
	bool		done;
} CqlDirectState;

/* ---------------------------------------------------------------------
 * Planning
 * ---------------------------------------------------------------------
 */

/* How the scan under ModifyTable binds one column */
typedef struct KeyBinding
{
	Expr	   *eq;				/* col = eq */
	Expr	   *lower;			/* col >/>= lower */
	CqlBindKind lower_kind;
	Expr	   *upper;			/* col </<= upper */
	CqlBindKind upper_kind;
} KeyBinding;

/*
 * append_bind
 *		Append the source of one marker (role, attnum, fdw_exprs index, bind
 *		kind) to the bind list, in the IntList format of
 *		FdwDirectPrivateBinds.
 */
static void
append_bind(List **binds, DirectBindRole role, AttrNumber attnum, int expr_index,
			CqlBindKind kind)
{
	*binds = lappend(*binds, list_make4_int(role, attnum, expr_index, kind));
}

/*
 * append_key_cond
 *		Key condition "col <op> ?" bound to value: for deparse, a condition;
 *		for the executor, a marker evaluated from fdw_exprs.
 */
static void
append_key_cond(List **conds, List **binds, List **exprs, AttrNumber a,
				Expr *value, CqlBindKind kind)
{
	*conds = lappend(*conds, list_make2_int(a, kind));
	*exprs = lappend(*exprs, value);
	append_bind(binds, DIRECT_KEY, a, list_length(*exprs) - 1, kind);
}

/*
 * cqlPlanDirectModify
 *		PlanDirectModify: replace the ModifyTable's scan by one CQL UPDATE
 *		or DELETE when Cassandra can do the whole statement itself.
 *
 * The scan below must read this table only, with every WHERE clause sent
 * to Cassandra, and its shape (classified once by the planner, see
 * cqlfdw_classify) must name one partition: the partition key by =, then
 * a = prefix of the clustering key, then at most a range on the next
 * clustering column — no IN, no ALLOW FILTERING.  UPDATE needs the full
 * key (CQL updates exactly one row) and new values that do not read the old
 * row (a counter's delta excepted); DELETE can remove a row, a slice or a
 * partition.  On success the ForeignScan gets the operation, the new
 * fdw_exprs and fdw_private (FdwDirectModifyPrivateIndex), and the scan's
 * SELECT is dropped.  Returns false (and the executor reads, then writes
 * row by row) otherwise.
 */
bool
cqlPlanDirectModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
					int subplan_index)
{
	CmdType		operation = plan->operation;
	Plan	   *subplan = outerPlan(plan);
	ForeignScan *fscan;
	const CqlFdwOptions *optsp;
	const CqlFdwTable *t;
	const CqlScanShape *shape;
	KeyBinding *kb;
	ListCell   *lc;
	int			eq_prefix;
	AttrNumber	range_attr = InvalidAttrNumber;
	bool		full_key;
	char	   *cql;
	List	   *sets = NIL;
	List	   *conds = NIL;
	List	   *binds = NIL;
	List	   *exprs = NIL;
	CqlFdwOptions opts;

	if (operation != CMD_UPDATE && operation != CMD_DELETE)
		return false;
	if (subplan == NULL || !IsA(subplan, ForeignScan))
		return false;
	fscan = (ForeignScan *) subplan;
	if (fscan->scan.scanrelid != resultRelation)
		return false;
	/* every WHERE clause must have been sent to Cassandra */
	if (fscan->scan.plan.qual != NIL)
		return false;
	if (plan->returningLists != NIL || plan->withCheckOptionLists != NIL)
		return false;

	cqlfdw_planned_rel(find_base_rel(root, resultRelation), &t, &optsp, &shape);
	opts = *optsp;
	if (!opts.direct_modify)
		return false;

	/* one partition, no IN, no filtering, nothing checked locally */
	if (shape->access != CQLACC_SINGLE_PARTITION || shape->ck_has_in ||
		shape->filtering || shape->uses_join || shape->local_conds != NIL ||
		shape->index_name != NULL)
		return false;
	/* the scan must have been built from that shape (no OFFSET, no LIMIT) */
	if (list_length(fscan->fdw_exprs) != list_length(shape->pushed))
		return false;

	/* the values bound per key column */
	kb = palloc0(sizeof(KeyBinding) * (t->natts + 1));
	foreach(lc, shape->pushed)
	{
		const CqlCond *c = (const CqlCond *) lfirst(lc);
		KeyBinding *b = &kb[c->attnum];

		if (c->kind == CQLBIND_EQ)
			b->eq = c->value;
		else if (c->kind == CQLBIND_GT || c->kind == CQLBIND_GE)
		{
			b->lower = c->value;
			b->lower_kind = c->kind;
		}
		else if (c->kind == CQLBIND_LT || c->kind == CQLBIND_LE)
		{
			b->upper = c->value;
			b->upper_kind = c->kind;
		}
		else
			return false;
	}
	eq_prefix = shape->ck_eq_prefix;
	if (shape->ck_has_range)
		range_attr = t->ck[eq_prefix];
	full_key = (eq_prefix == t->nck && range_attr == InvalidAttrNumber);

	if (operation == CMD_UPDATE)
	{
		ListCell   *lu;
		int			pos = 0;

		/* CQL updates exactly one row, named by its full key */
		if (!full_key)
			return false;

		foreach(lu, root->update_colnos)
		{
			AttrNumber	a = lfirst_int(lu);
			TargetEntry *tle = list_nth(root->processed_tlist, pos++);
			Expr	   *value = tle->expr;

			if (a <= 0 || a > t->natts || t->cols[a - 1].remote_name == NULL)
				return false;
			/* modify.c raises the error for key columns */
			if (cqlfdw_is_key_column(t, a))
				return false;
			if (cqlfdw_is_counter_column(t, a))
			{
				OpExpr	   *op;

				if (!cqlfdw_is_counter_increment(value, resultRelation, a))
					return false;
				op = (OpExpr *) value;
				value = (Expr *) lsecond(op->args);
				if (contain_volatile_functions((Node *) value) ||
					contain_subplans((Node *) value))
					return false;
				sets = lappend(sets,
							   list_make2_int(a, strcmp(get_opname(op->opno), "-") == 0
											  ? CQLSET_DECREMENT : CQLSET_INCREMENT));
				exprs = lappend(exprs, value);
				append_bind(&binds, DIRECT_COUNTER, a, list_length(exprs) - 1, CQLBIND_EQ);
				continue;
			}
			/* a value computed from the old row needs the read */
			if (contain_var_clause((Node *) value) ||
				contain_volatile_functions((Node *) value) ||
				contain_subplans((Node *) value))
				return false;
			sets = lappend(sets, list_make2_int(a, CQLSET_VALUE));
			exprs = lappend(exprs, value);
			append_bind(&binds, DIRECT_SET, a, list_length(exprs) - 1, CQLBIND_EQ);
		}
		if (sets == NIL)
			return false;
		/* the TTL marker comes first in the statement text */
		if (opts.ttl > 0)
			binds = lcons(list_make4_int(DIRECT_TTL, 0, -1, CQLBIND_EQ), binds);
	}

	for (int k = 0; k < t->npk; k++)
		append_key_cond(&conds, &binds, &exprs, t->pk[k], kb[t->pk[k]].eq, CQLBIND_EQ);
	for (int k = 0; k < eq_prefix; k++)
		append_key_cond(&conds, &binds, &exprs, t->ck[k], kb[t->ck[k]].eq, CQLBIND_EQ);
	if (range_attr != InvalidAttrNumber)
	{
		KeyBinding *b = &kb[range_attr];

		if (b->lower)
			append_key_cond(&conds, &binds, &exprs, range_attr, b->lower, b->lower_kind);
		if (b->upper)
			append_key_cond(&conds, &binds, &exprs, range_attr, b->upper, b->upper_kind);
	}
	cql = (operation == CMD_UPDATE)
		? cqlfdw_deparse_update(t, sets, opts.ttl > 0, false, conds)
		: cqlfdw_deparse_delete(t, conds);

	fscan->operation = operation;
	fscan->resultRelation = resultRelation;
	fscan->fdw_exprs = exprs;
	fscan->fdw_private = list_make3(makeString(cql), binds,
									makeInteger(full_key));
	return true;
}

/* ---------------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------------
 */

/*
 * cqlBeginDirectModify
 *		BeginDirectModify callback: open the remote handle with the
 *		checkAsUser's user mapping and prepare the statement on the control
 *		connection for the CQL types of its markers.  SET values convert as
 *		the column's type, key values and counter deltas as comparison
 *		values (cqlfdw_init_bind_conv).  Nothing is done for EXPLAIN without
 *		ANALYZE.
 */
void
cqlBeginDirectModify(ForeignScanState *node, int eflags)
{
	ForeignScan *fsplan = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	CqlDirectState *dm;
	List	   *binds;
	ListCell   *lc;
	cql_prepared *meta;
	int			i = 0;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	dm = palloc0(sizeof(CqlDirectState));
	node->fdw_state = dm;
	dm->rel = node->ss.ss_currentRelation;
	dm->relname = pstrdup(RelationGetRelationName(dm->rel));
	dm->full_key = intVal(list_nth(fsplan->fdw_private, FdwDirectPrivateFullKey)) != 0;

	cqlfdw_remote_open_rel(&dm->remote, dm->rel,
						   cqlfdw_scan_userid(estate, fsplan),
						   strVal(list_nth(fsplan->fdw_private, FdwDirectPrivateCql)));
	cqlfdw_remote_will_write(&dm->remote);
	dm->stamp_writes = !cqlfdw_table_has_counters(dm->remote.table);

	dm->exprs = ExecInitExprList(fsplan->fdw_exprs, (PlanState *) node);

	/* bind marker types from the server */
	meta = cqlfdw_remote_prepare(&dm->remote, NULL);
	binds = (List *) list_nth(fsplan->fdw_private, FdwDirectPrivateBinds);
	dm->nbinds = list_length(binds);
	cqlfdw_remote_check_binds(&dm->remote, meta, dm->nbinds);
	dm->binds = palloc0(sizeof(DirectBind) * Max(dm->nbinds, 1));
	foreach(lc, binds)
	{
		List	   *b = (List *) lfirst(lc);
		DirectBind *db = &dm->binds[i];
		const cql_type *ct = meta->bind[i].type;

		db->role = linitial_int(b);
		db->attnum = lsecond_int(b);
		db->expr_index = lthird_int(b);
		db->kind = lfourth_int(b);
		if (db->role == DIRECT_TTL)
			cqlfdw_conv_init(&db->conv, ct, INT4OID, -1);
		else
		{
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(dm->rel),
												  db->attnum - 1);

			db->value_type = exprType(list_nth(fsplan->fdw_exprs, db->expr_index));
			if (db->role == DIRECT_SET)
			{
				cqlfdw_conv_init_or_error(&db->conv, ct, att->atttypid, att->atttypmod,
										  dm->relname, NameStr(att->attname));
				/* values written; the WHERE clause's compare exactly */
				cqlfdw_conv_set_ts_precision(&db->conv,
											 cqlfdw_timestamp_precision(RelationGetRelid(dm->rel),
																		db->attnum,
																		&dm->remote.opts));
			}
			else
				cqlfdw_init_bind_conv(dm->relname, &db->conv, ct, db->value_type);
		}
		i++;
	}
}

/*
 * Evaluate the values and send the statement.  Returns false when the
 * WHERE clause cannot match any row (a NULL or unrepresentable key), in
 * which case nothing is sent, as PostgreSQL would change nothing.
 */
static bool
execute_direct(CqlDirectState *dm, ExprContext *econtext)
{
	MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	cql_value_ref *values = palloc0(sizeof(cql_value_ref) * Max(dm->nbinds, 1));
	cql_elem   *parts = palloc0(sizeof(cql_elem) * Max(dm->remote.table->npk, 1));
	int			npk = 0;
	const uint8_t *key = NULL;
	size_t		keylen = 0;
	cql_buf		row_key;

	for (int i = 0; i < dm->nbinds; i++)
	{
		DirectBind *db = &dm->binds[i];
		Datum		d;
		bool		isnull = false;
		cql_buf		b;

		cql_buf_init(&b, &cqlfdw_palloc_allocator);
		if (db->role == DIRECT_TTL)
			d = Int32GetDatum(dm->remote.opts.ttl);
		else
			d = ExecEvalExpr((ExprState *) list_nth(dm->exprs, db->expr_index),
							 econtext, &isnull);

		switch (db->role)
		{
			case DIRECT_TTL:
				cqlfdw_conv_write_or_error(&db->conv, d, &b);
				break;
			case DIRECT_SET:
				if (isnull)
				{
					values[i].p = NULL;
					values[i].n = -1;
					continue;
				}
				cqlfdw_conv_write_or_error(&db->conv, d, &b);
				break;
			case DIRECT_COUNTER:
				if (isnull)
					ereport(ERROR,
							(errcode(ERRCODE_NOT_NULL_VIOLATION),
							 errmsg("cannot add NULL to counter column \"%s\" of foreign table \"%s\"",
									NameStr(TupleDescAttr(RelationGetDescr(dm->rel), db->attnum - 1)->attname),
									dm->relname),
							 errhint("Use COALESCE(x, 0) for the increment.")));
				if (!cqlfdw_encode_bound(dm->relname, &db->conv, CQLBIND_EQ, d,
										 db->value_type, &b))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("counter increment is not a whole number in range of bigint"),
							 errcontext("foreign table \"%s\"", dm->relname)));
				break;
			case DIRECT_KEY:
				/* "k = NULL", "k > NULL": no row qualifies */
				if (isnull)
				{
					MemoryContextSwitchTo(old);
					return false;
				}
				if (!cqlfdw_encode_bound(dm->relname, &db->conv, db->kind, d,
										 db->value_type, &b))
				{
					MemoryContextSwitchTo(old);
					return false;
				}
				if (dm->remote.table->cols[db->attnum - 1].kind == CQLCOL_PARTITION_KEY)
				{
					parts[npk].p = b.data ? b.data : (uint8_t *) "";
					parts[npk].n = (int32) b.len;
					npk++;
				}
				break;
		}
		values[i].p = b.data ? b.data : (uint8_t *) "";
		values[i].n = (int32) b.len;
	}

	key = cqlfdw_routing_key(parts, npk, &keylen);
	row_key.data = NULL;
	row_key.len = 0;
	if (dm->remote.opts.write_on_commit && dm->full_key)
	{
		/* the row written, when the WHERE names one: its key values */
		cql_buf_init(&row_key, &cqlfdw_palloc_allocator);
		for (int i = 0; i < dm->nbinds; i++)
			if (dm->binds[i].role == DIRECT_KEY)
				cql_encode_element(&row_key, values[i].p, values[i].n);
	}
	cqlfdw_direct_send(&dm->remote, values, dm->nbinds, key, keylen,
					   dm->stamp_writes, row_key.data, row_key.len);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * cqlfdw_direct_send
 *		Send one statement of the handle r with its encoded values: kept
 *		until COMMIT under write_mode 'on_commit' (row_key, when not NULL,
 *		names the one row it writes), else sent to a replica of the
 *		partition (routing key 'key') and awaited, a failure retried with
 *		the same timestamp when that is harmless (stamp_writes: not a
 *		counter table).  Shared by direct UPDATE/DELETE and
 *		cql_bridge_delete_keys (delete_keys.c).
 */
void
cqlfdw_direct_send(CqlRemote *r, cql_value_ref *values, int nvalues,
				   const uint8_t *key, size_t keylen, bool stamp_writes,
				   const uint8_t *row_key, size_t row_key_len)
{
	int64		timestamp = stamp_writes ? cqlfdw_write_timestamp() : CQL_NO_TIMESTAMP;
	cql_query_params params;
	CqlRetry	rt;
	cql_conn   *conn;
	cql_prepared *prep;
	cql_request *req;
	cql_result	res;
	cql_error	err;
	cql_status	s;

	if (r->opts.write_on_commit)
	{
		cqlfdw_defer_write(r, values, nvalues, key, keylen, r->opts.write_consistency, 0,
						   timestamp, row_key, row_key_len);
		return;
	}

	cql_query_params_init(&params);
	params.consistency = r->opts.write_consistency;
	params.default_timestamp = timestamp;
	params.nvalues = nvalues;
	params.values = values;

	cqlfdw_retry_start(&rt);
	conn = cqlfdw_remote_conn_for_key(r, NULL, key, keylen);
	for (;;)
	{
		cql_retry_decision d;

		prep = cqlfdw_remote_prepare(r, conn);
		req = cqlfdw_remote_send_execute(r, conn, prep, &params);
		memset(&res, 0, sizeof(res));
		cql_error_clear(&err);
		s = cqlfdw_await(conn, req, &res, &err);
		cql_request_free(req);
		if (s == CQL_OK)
			break;
		d = cqlfdw_remote_retry(r, &rt, conn, s, &err, stamp_writes);
		if (d == CQL_RETRY_NO)
			cqlfdw_remote_fail(r, conn, s, &err);
		if (d == CQL_RETRY_NEXT_HOST)
			conn = cqlfdw_remote_conn_for_key(r, &rt, key, keylen);
	}
	cql_result_free(&res);
}

/*
 * cqlIterateDirectModify
 *		IterateDirectModify callback: the first call evaluates and sends the
 *		statement (execute_direct) and counts the rows it addressed, 1 for a
 *		statement by full key and 0 otherwise (Cassandra does not say).
 *		Always an empty slot: there is no RETURNING.
 */
TupleTableSlot *
cqlIterateDirectModify(ForeignScanState *node)
{
	CqlDirectState *dm = (CqlDirectState *) node->fdw_state;
	EState	   *estate = node->ss.ps.state;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	if (!dm->done)
	{
		dm->done = true;
		if (execute_direct(dm, econtext) && dm->full_key)
			estate->es_processed += 1;
		ResetExprContext(econtext);
	}
	return ExecClearTuple(node->ss.ss_ScanTupleSlot);
}

/*
 * cqlEndDirectModify
 *		EndDirectModify callback: unpin the connection.
 */
void
cqlEndDirectModify(ForeignScanState *node)
{
	CqlDirectState *dm = (CqlDirectState *) node->fdw_state;

	if (dm == NULL)
		return;
	cqlfdw_remote_release(&dm->remote);
}

/*
 * cqlExplainDirectModify
 *		ExplainDirectModify callback: "Access" (one row by primary key, or
 *		single partition), and with VERBOSE the "Remote CQL".
 */
void
cqlExplainDirectModify(ForeignScanState *node, ExplainState *es)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	bool		full_key = intVal(list_nth(plan->fdw_private, FdwDirectPrivateFullKey)) != 0;

	ExplainPropertyText("Access", full_key ? "one row by primary key"
						: "single partition", es);
	if (es->verbose)
		ExplainPropertyText("Remote CQL",
							strVal(list_nth(plan->fdw_private, FdwDirectPrivateCql)), es);
}

/*-------------------------------------------------------------------------
 *
 * modify.c
 *		INSERT, UPDATE, DELETE and TRUNCATE on cql_fdw foreign tables.
 *
 * Cassandra writes are upserts identified by the full primary key
 * (partition key and clustering columns):
 *	- INSERT writes the columns the statement names (and those with a
 *	  DEFAULT); a column it omits is left untouched in Cassandra instead of
 *	  being overwritten with a tombstone.  With the table option
 *	  if_not_exists the row is written by a lightweight transaction and an
 *	  existing row is a unique violation.
 *	- UPDATE and DELETE act on the rows the scan below them found, one CQL
 *	  statement per row keyed by its primary key; UPDATE sends only the
 *	  assigned columns.  A counter column is changed by "SET n = n + x".
 *	- Several inserted rows (INSERT ... SELECT, multi-row VALUES) are sent
 *	  pipelined on many stream ids, each request to a replica of its
 *	  partition: the rows of one partition as one UNLOGGED BATCH, a row
 *	  alone in its partition as an EXECUTE; the statement fails with the
 *	  first Cassandra error.
 * Values are always bound, never written into the statement text.
 *
 * IDENTIFICATION
 *		src/fdw/modify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/appendinfo.h"
#include "optimizer/inherit.h"
#include "optimizer/pathnode.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bucket.h"
#include "connection.h"
#include "convert.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "deparse.h"
#include "modify.h"
#include "modify_int.h"
#include "planner.h"
#include "remote.h"
#include "txn_writes.h"
#include "write_metadata.h"


/*
 * is_key_column
 *		Is attribute a part of the primary key (a partition-key or
 *		clustering column)?
 */
static bool
is_key_column(const CqlFdwTable *t, AttrNumber a)
{
	return t->cols[a - 1].kind == CQLCOL_PARTITION_KEY ||
		t->cols[a - 1].kind == CQLCOL_CLUSTERING;
}

/*
 * is_counter_column
 *		Is attribute a CQL counter?  Known from its CQL type (column option
 *		cql_type or the remote schema); a column of unknown CQL type is
 *		taken for a regular one.
 */
static bool
is_counter_column(const CqlFdwTable *t, AttrNumber a)
{
	return t->cols[a - 1].cql_type &&
		pg_strcasecmp(t->cols[a - 1].cql_type, "counter") == 0;
}

/*
 * cqlfdw_is_key_column
 *		is_key_column, for direct_modify.c.
 */
bool
cqlfdw_is_key_column(const CqlFdwTable *t, AttrNumber a)
{
	return is_key_column(t, a);
}

/*
 * cqlfdw_is_counter_column
 *		is_counter_column, for direct_modify.c.
 */
bool
cqlfdw_is_counter_column(const CqlFdwTable *t, AttrNumber a)
{
	return is_counter_column(t, a);
}

/*
 * cqlfdw_table_has_counters
 *		Does the table have a counter column?  Writes to such a table are
 *		sent without client-side timestamps.
 */
bool
cqlfdw_table_has_counters(const CqlFdwTable *t)
{
	for (int i = 0; i < t->natts; i++)
		if (t->cols[i].remote_name && is_counter_column(t, i + 1))
			return true;
	return false;
}

/* Row identity column names: unique per relation */
static char *
key_junk_name(Oid relid, AttrNumber attnum)
{
	return psprintf("cqlkey_%u_%d", relid, attnum);
}

/*
 * old_junk_name
 *		Name of the junk column that carries the old value of non-key column
 *		attnum (DELETE RETURNING, counters): unique per relation.
 */
static char *
old_junk_name(Oid relid, AttrNumber attnum)
{
	return psprintf("cqlold_%u_%d", relid, attnum);
}

/* ---------------------------------------------------------------------
 * Planning
 * ---------------------------------------------------------------------
 */

/*
 * cqlAddForeignUpdateTargets
 *		AddForeignUpdateTargets callback.
 *
 * Cassandra identifies a row by its full primary key, so every partition-key
 * and clustering column travels up as a junk column (key_junk_name).  Also
 * added (old_junk_name): for DELETE ... RETURNING the other columns, since
 * Cassandra does not return the deleted row; and the old value of every
 * counter, from which an UPDATE computes the increment.  A table without a
 * partition key is an error.
 */
void
cqlAddForeignUpdateTargets(PlannerInfo *root, Index rtindex,
						   RangeTblEntry *target_rte, Relation target_relation)
{
	Oid			relid = RelationGetRelid(target_relation);
	CqlFdwOptions opts;
	CqlFdwTable *t;
	Oid			userid = cqlfdw_planner_userid(root, rtindex);
	UserMapping *user;

	t = cqlfdw_resolve_table(relid, userid, true, &opts, &user);
	if (t->npk == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("foreign table \"%s\" has no partition key columns",
						RelationGetRelationName(target_relation))));

	/* the full primary key identifies a row */
	for (int k = 0; k < t->npk + t->nck; k++)
	{
		AttrNumber	a = (k < t->npk) ? t->pk[k] : t->ck[k - t->npk];
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(target_relation), a - 1);
		Var		   *var = makeVar(rtindex, a, att->atttypid, att->atttypmod,
								  att->attcollation, 0);

		add_row_identity_var(root, var, rtindex, key_junk_name(relid, a));
	}

	/*
	 * DELETE ... RETURNING returns the deleted row: Cassandra does not send
	 * it back, so the scan's copy travels up, one junk column per non-key
	 * column (the key columns are there already).
	 */
	if (root->parse->commandType == CMD_DELETE && root->parse->returningList != NIL)
	{
		for (int i = 0; i < t->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(target_relation), i);

			if ((t->cols[i].remote_name == NULL &&
				 t->cols[i].meta == CQLMETA_NONE) || is_key_column(t, i + 1))
				continue;
			add_row_identity_var(root,
								 makeVar(rtindex, i + 1, att->atttypid, att->atttypmod,
										 att->attcollation, 0),
								 rtindex, old_junk_name(relid, i + 1));
		}
	}

	/*
	 * The old value of each counter: "n = n + x" is sent as an increment by
	 * exactly x (new minus old), never as an assignment.
	 */
	for (int i = 0; i < t->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(target_relation), i);

		if (t->cols[i].remote_name && is_counter_column(t, i + 1))
			add_row_identity_var(root,
								 makeVar(rtindex, i + 1, att->atttypid, att->atttypmod,
										 att->attcollation, 0),
								 rtindex, old_junk_name(relid, i + 1));
	}
}

/*
 * append_key_binds
 *		Every primary-key column as "col = ?", bound from the old row's key
 *		(junk columns): the one row an UPDATE or DELETE addresses.  Adds
 *		the conditions for deparse and the markers for the executor.
 */
static void
append_key_binds(const CqlFdwTable *t, List **conds, List **attrs, List **kinds)
{
	for (int k = 0; k < t->npk + t->nck; k++)
	{
		AttrNumber	a = (k < t->npk) ? t->pk[k] : t->ck[k - t->npk];

		*conds = lappend(*conds, list_make2_int(a, CQLBIND_EQ));
		*attrs = lappend_int(*attrs, a);
		*kinds = lappend_int(*kinds, MODBIND_KEY);
	}
}

/*
 * cqlfdw_is_counter_increment
 *		Is expr "n + x" or "n - x", n being column attnum of relation
 *		rtindex and x reading no column?  The SET value of a counter must
 *		be such an expression.  modify.c then sends new minus old as the
 *		increment; direct_modify.c sends x itself.
 */
bool
cqlfdw_is_counter_increment(Expr *expr, Index rtindex, AttrNumber attnum)
{
	OpExpr	   *op;
	char	   *opname;
	Expr	   *l;

	if (!IsA(expr, OpExpr))
		return false;
	op = (OpExpr *) expr;
	if (list_length(op->args) != 2)
		return false;
	opname = get_opname(op->opno);
	if (opname == NULL || (strcmp(opname, "+") != 0 && strcmp(opname, "-") != 0))
		return false;
	l = linitial(op->args);
	while (IsA(l, RelabelType))
		l = ((RelabelType *) l)->arg;
	return IsA(l, Var) && ((Var *) l)->varno == rtindex &&
		((Var *) l)->varattno == attnum &&
		!contain_var_clause(lsecond(op->args));
}

/*
 * append_meta_binds
 *		The markers of USING TTL ? and TIMESTAMP ? of a write: a TTL when
 *		the table has a ttl option or a ttl_of column, a timestamp when it
 *		has a writetime_of column (cqlfdw_meta_plan_write).
 */
static void
append_meta_binds(List **attrs, List **kinds, const CqlFdwOptions *opts,
				  const CqlMetaWrite *mw)
{
	if (opts->ttl > 0 || mw->ttl_attnum > 0)
	{
		*attrs = lappend_int(*attrs, mw->ttl_attnum);
		*kinds = lappend_int(*kinds, MODBIND_TTL);
	}
	if (mw->ts_attnum > 0)
	{
		*attrs = lappend_int(*attrs, mw->ts_attnum);
		*kinds = lappend_int(*kinds, MODBIND_TIMESTAMP);
	}
}

/*
 * cqlfdw_modify_plan_insert
 *		The fdw_private of an INSERT into rel (FdwModifyPrivateIndex): the
 *		statement and where each marker's value comes from.  For
 *		PlanForeignModify and for BeginForeignInsert (COPY, tuple routing),
 *		which has no planner.
 *
 * The row writes the columns in inserted (those the statement or COPY
 * names), those with a default and always the key columns; counters
 * cannot be inserted.  ON CONFLICT DO NOTHING (do_nothing) and the option
 * if_not_exists make it a lightweight transaction, IF NOT EXISTS.
 */
List *
cqlfdw_modify_plan_insert(Relation rel, const CqlFdwTable *t,
						  const CqlFdwOptions *opts, Bitmapset *inserted,
						  bool do_nothing, bool has_returning)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Bitmapset  *written = NULL;
	List	   *attrs = NIL;
	List	   *kinds = NIL;
	bool		lwt = opts->if_not_exists || do_nothing;
	CqlMetaWrite mw;
	char	   *cql;

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		AttrNumber	a = i + 1;

		if (att->attisdropped)
			continue;
		/* named by the statement, or filled by a DEFAULT */
		if (!bms_is_member(a - FirstLowInvalidHeapAttributeNumber, inserted) &&
			!att->atthasdef && !is_key_column(t, a))
			continue;
		written = bms_add_member(written, a - FirstLowInvalidHeapAttributeNumber);
		/* a write metadata column is USING TTL/TIMESTAMP, below */
		if (t->cols[i].meta != CQLMETA_NONE)
			continue;
		if (is_counter_column(t, a))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot INSERT into counter column \"%s\" of foreign table \"%s\"",
							NameStr(att->attname), RelationGetRelationName(rel)),
					 errhint("Change counters with UPDATE ... SET %s = %s + n.",
							 NameStr(att->attname), NameStr(att->attname))));
		attrs = lappend_int(attrs, a);
		kinds = lappend_int(kinds, MODBIND_NEW);
	}
	cqlfdw_meta_plan_write(t, tupdesc, RelationGetRelationName(rel), written,
						   lwt, &mw);
	cql = cqlfdw_deparse_insert(t, attrs, lwt, opts->ttl > 0 || mw.ttl_attnum > 0,
								mw.ts_attnum > 0);
	append_meta_binds(&attrs, &kinds, opts, &mw);
	return list_make5(makeString(cql), attrs, kinds, makeInteger(has_returning),
					  makeInteger(do_nothing));
}

/*
 * cqlPlanForeignModify
 *		PlanForeignModify callback: the one CQL statement sent per row, and
 *		where each bind marker's value comes from, in marker order
 *		(FdwModifyPrivateIndex).
 *
 * INSERT: cqlfdw_modify_plan_insert (also ON CONFLICT DO NOTHING, as IF NOT
 * EXISTS; PostgreSQL accepts no other ON CONFLICT on a foreign table, which
 * has no index to infer a target from).  UPDATE sets the
 * assigned columns, a counter only by "n = n + x" or "n = n - x" (sent as an
 * increment by new minus old), then names the row by its key; key columns
 * cannot be updated.  DELETE names the row by its key.  With the option ttl
 * the statement has USING TTL ? (INSERT, UPDATE); a write metadata column
 * the statement writes (write_metadata.c) gives the value of USING TTL ? or
 * USING TIMESTAMP ?.  Errors are raised here, at plan time.
 */
List *
cqlPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
					 int subplan_index)
{
	CmdType		operation = plan->operation;
	RangeTblEntry *rte = planner_rt_fetch(resultRelation, root);
	Relation	rel = table_open(rte->relid, NoLock);
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Oid			userid = cqlfdw_planner_userid(root, resultRelation);
	CqlFdwOptions opts;
	UserMapping *user;
	CqlFdwTable *t = cqlfdw_resolve_table(rte->relid, userid, true, &opts, &user);
	char	   *cql = NULL;
	List	   *attrs = NIL;
	List	   *kinds = NIL;
	bool		has_returning = plan->returningLists != NIL &&
		list_nth(plan->returningLists, subplan_index) != NIL;
	CqlMetaWrite mw;

	if (operation == CMD_INSERT)
	{
		List	   *priv;

		/* PostgreSQL infers no conflict target: foreign tables have no index */
		if (plan->onConflictAction != ONCONFLICT_NONE &&
			plan->onConflictAction != ONCONFLICT_NOTHING)
			elog(ERROR, "unexpected ON CONFLICT specification: %d",
				 (int) plan->onConflictAction);
		priv = cqlfdw_modify_plan_insert(rel, t, &opts,
										 cqlfdw_planner_inserted_cols(root, rte),
										 plan->onConflictAction == ONCONFLICT_NOTHING,
										 has_returning);
		table_close(rel, NoLock);
		return priv;
	}
	else if (operation == CMD_UPDATE)
	{
		RelOptInfo *relinfo = find_base_rel(root, resultRelation);
		Bitmapset  *updated = get_rel_all_updated_cols(root, relinfo);
		int			col = -1;
		List	   *set_attrs = NIL;
		List	   *set_kinds = NIL;
		List	   *sets = NIL;
		List	   *conds = NIL;

		while ((col = bms_next_member(updated, col)) >= 0)
		{
			AttrNumber	a = col + FirstLowInvalidHeapAttributeNumber;

			if (a <= InvalidAttrNumber)
				continue;
			/* a write metadata column is USING TTL/TIMESTAMP, below */
			if (t->cols[a - 1].meta != CQLMETA_NONE)
				continue;
			if (is_key_column(t, a))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot update primary key column \"%s\" of foreign table \"%s\"",
								NameStr(TupleDescAttr(tupdesc, a - 1)->attname),
								RelationGetRelationName(rel)),
						 errdetail("Cassandra identifies a row by its primary key; changing it makes another row."),
						 errhint("DELETE the row and INSERT it with the new key.")));
			if (is_counter_column(t, a))
			{
				TargetEntry *tle = NULL;
				ListCell   *lu;
				int			pos = 0;

				/* processed_tlist holds the new values in update_colnos order */
				foreach(lu, root->update_colnos)
				{
					if (lfirst_int(lu) == a)
						tle = list_nth(root->processed_tlist, pos);
					pos++;
				}
				if (tle == NULL || !cqlfdw_is_counter_increment(tle->expr, resultRelation, a))
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("counter column \"%s\" can only be incremented or decremented",
									NameStr(TupleDescAttr(tupdesc, a - 1)->attname)),
							 errhint("Write SET %s = %s + n or SET %s = %s - n.",
									 NameStr(TupleDescAttr(tupdesc, a - 1)->attname),
									 NameStr(TupleDescAttr(tupdesc, a - 1)->attname),
									 NameStr(TupleDescAttr(tupdesc, a - 1)->attname),
									 NameStr(TupleDescAttr(tupdesc, a - 1)->attname))));
				/* sent as an increment by new - old, even for "n = n - x" */
				sets = lappend(sets, list_make2_int(a, CQLSET_INCREMENT));
				set_attrs = lappend_int(set_attrs, a);
				set_kinds = lappend_int(set_kinds, MODBIND_COUNTER);
			}
			else
			{
				sets = lappend(sets, list_make2_int(a, CQLSET_VALUE));
				set_attrs = lappend_int(set_attrs, a);
				set_kinds = lappend_int(set_kinds, MODBIND_NEW);
			}
		}
		/* markers: USING TTL ? AND TIMESTAMP ?, the assignments, the key */
		cqlfdw_meta_plan_write(t, tupdesc, RelationGetRelationName(rel), updated,
							   false, &mw);
		append_meta_binds(&attrs, &kinds, &opts, &mw);
		attrs = list_concat(attrs, set_attrs);
		kinds = list_concat(kinds, set_kinds);
		append_key_binds(t, &conds, &attrs, &kinds);
		cql = cqlfdw_deparse_update(t, sets, opts.ttl > 0 || mw.ttl_attnum > 0,
									mw.ts_attnum > 0, conds);
	}
	else if (operation == CMD_DELETE)
	{
		List	   *conds = NIL;

		append_key_binds(t, &conds, &attrs, &kinds);
		cql = cqlfdw_deparse_delete(t, conds);
	}
	else
		elog(ERROR, "unexpected operation: %d", (int) operation);

	table_close(rel, NoLock);
	return list_make5(makeString(cql), attrs, kinds,
					  makeInteger(has_returning), makeInteger(false));
}

/* ---------------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------------
 */

/*
 * cqlfdw_modify_begin
 *		The state shared by BeginForeignModify: open the remote handle with
 *		the checkAsUser's user mapping, prepare the statement on the control
 *		connection for the CQL types of its markers, and build one converter
 *		per marker.
 *
 * subplan_tlist is the target list of the plan below ModifyTable (NIL for
 * INSERT): the junk columns of keys, counters and DELETE RETURNING are found
 * there.  Also decides whether writes carry client-side timestamps.
 */
void
cqlfdw_modify_begin(CqlModifyState *ms, Relation rel, List *fdw_private, EState *estate,
			 ResultRelInfo *rinfo, List *subplan_tlist)
{
	List	   *attrs = (List *) list_nth(fdw_private, FdwModifyPrivateBindAttrs);
	List	   *kinds = (List *) list_nth(fdw_private, FdwModifyPrivateBindKinds);
	cql_prepared *meta;
	ListCell   *la,
			   *lk;
	int			i = 0;

	ms->rel = rel;
	ms->relname = pstrdup(RelationGetRelationName(rel));
	ms->has_returning = intVal(list_nth(fdw_private, FdwModifyPrivateHasReturning)) != 0;
	ms->do_nothing = intVal(list_nth(fdw_private, FdwModifyPrivateDoNothing)) != 0;
	cqlfdw_remote_open_rel(&ms->remote, rel,
						   cqlfdw_result_userid(estate, rinfo),
						   strVal(list_nth(fdw_private, FdwModifyPrivateCql)));
	cqlfdw_remote_will_write(&ms->remote);
	/* DO NOTHING is sent as IF NOT EXISTS: the same LWT paths below */
	if (ms->do_nothing)
	{
		if (ms->remote.opts.write_on_commit)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("INSERT ... ON CONFLICT DO NOTHING into foreign table \"%s\" is not supported with write_mode 'on_commit'",
							ms->relname),
					 errdetail("A write deferred to COMMIT cannot tell the statement whether the row existed."),
					 errhint("Leave out ON CONFLICT DO NOTHING (the table option if_not_exists makes an existing row an error at COMMIT), or use write_mode 'immediate'.")));
		ms->remote.opts.if_not_exists = true;
	}
	if (ms->has_returning && ms->operation == CMD_DELETE)
	{
		TupleDesc	td = RelationGetDescr(rel);

		ms->old_attnos = palloc0(sizeof(AttrNumber) * Max(td->natts, 1));
		for (int a = 1; a <= td->natts; a++)
			if (!TupleDescAttr(td, a - 1)->attisdropped)
				ms->old_attnos[a - 1] =
					ExecFindJunkAttributeInTlist(subplan_tlist,
												 is_key_column(ms->remote.table, a)
												 ? key_junk_name(RelationGetRelid(rel), a)
												 : old_junk_name(RelationGetRelid(rel), a));
	}
	ms->nbinds = list_length(attrs);
	ms->bind_attrs = palloc0(sizeof(AttrNumber) * Max(ms->nbinds, 1));
	ms->bind_kinds = palloc0(sizeof(CqlModBind) * Max(ms->nbinds, 1));
	ms->junk_attnos = palloc0(sizeof(AttrNumber) * Max(ms->nbinds, 1));
	ms->convs = palloc0(sizeof(CqlConv) * Max(ms->nbinds, 1));
	ms->temp_cxt = AllocSetContextCreate(estate->es_query_cxt, "cql_fdw modify row",
										 ALLOCSET_SMALL_SIZES);

	/*
	 * Client-side timestamps order this session's writes (see
	 * cqlfdw_write_timestamp), except where Cassandra refuses or ignores
	 * them: lightweight transactions take theirs from Paxos, counter
	 * updates are not timestamped cells.
	 */
	ms->stamp_writes = !ms->remote.opts.if_not_exists && !cqlfdw_table_has_counters(ms->remote.table);

	/* bind marker types from the server */
	meta = cqlfdw_remote_prepare(&ms->remote, NULL);
	cqlfdw_remote_check_binds(&ms->remote, meta, ms->nbinds);

	forboth(la, attrs, lk, kinds)
	{
		AttrNumber	a = lfirst_int(la);

		ms->bind_attrs[i] = a;
		ms->bind_kinds[i] = lfirst_int(lk);
		if (ms->bind_kinds[i] == MODBIND_TTL)
			cqlfdw_conv_init(&ms->convs[i], meta->bind[i].type, INT4OID, -1);
		else
		{
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), a - 1);

			cqlfdw_conv_init_column(&ms->convs[i], meta->bind[i].type,
									ms->remote.table, a,
									ms->bind_kinds[i] == MODBIND_COUNTER ? INT8OID : att->atttypid,
									att->atttypmod, ms->relname,
									NameStr(att->attname));
			cqlfdw_conv_set_ts_precision(&ms->convs[i],
										 cqlfdw_timestamp_precision(RelationGetRelid(rel), a,
																	&ms->remote.opts));
			if (ms->bind_kinds[i] == MODBIND_KEY || ms->bind_kinds[i] == MODBIND_COUNTER)
			{
				ms->junk_attnos[i] =
					ExecFindJunkAttributeInTlist(subplan_tlist,
												 ms->bind_kinds[i] == MODBIND_KEY
												 ? key_junk_name(RelationGetRelid(rel), a)
												 : old_junk_name(RelationGetRelid(rel), a));
				if (!AttributeNumberIsValid(ms->junk_attnos[i]))
					elog(ERROR, "could not find key column %d of foreign table \"%s\"",
						 a, ms->relname);
			}
		}
		i++;
	}
}

/*
 * cqlBeginForeignModify
 *		BeginForeignModify callback: the per-relation state (cqlfdw_modify_begin)
 *		in ri_FdwState; nothing for EXPLAIN without ANALYZE.
 */
void
cqlBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
					  List *fdw_private, int subplan_index, int eflags)
{
	CqlModifyState *ms;
	List	   *tlist = NIL;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	ms = palloc0(sizeof(CqlModifyState));
	ms->operation = mtstate->operation;
	if (mtstate->operation != CMD_INSERT)
		tlist = outerPlanState(mtstate)->plan->targetlist;
	cqlfdw_modify_begin(ms, rinfo->ri_RelationDesc, fdw_private, mtstate->ps.state,
				 rinfo, tlist);
	rinfo->ri_FdwState = ms;
}

/*
 * bucket_of_stored
 *		The bucket of bucket column a for the row in slot, computed from its
 *		source as Cassandra stores it: under timestamp_precision 'round' the
 *		last half millisecond of a bucket is stored as the first instant of
 *		the next one, and the row must be in that one's partition.
 */
static Datum
bucket_of_stored(CqlModifyState *ms, TupleTableSlot *slot, AttrNumber a, bool *isnull)
{
	const CqlFdwColumn *c = &ms->remote.table->cols[a - 1];
	Datum		computed = cqlfdw_bucket_compute(ms->remote.table, a, slot, isnull);
	AttrNumber	src;
	Oid			st;
	TimestampTz ts;

	if (*isnull || c->bucket.unit == CQLBUCKET_HASH)
		return computed;
	src = c->bucket_src[0];
	st = ms->remote.table->cols[src - 1].pgtype;
	if ((st != TIMESTAMPTZOID && st != TIMESTAMPOID) ||
		cqlfdw_timestamp_precision(RelationGetRelid(ms->rel), src,
								   &ms->remote.opts) != CQLTS_ROUND)
		return computed;
	ts = DatumGetTimestampTz(slot_getattr(slot, src, isnull));
	if (TIMESTAMP_NOT_FINITE(ts))
		return computed;
	ts = cqlfdw_timestamp_as_stored(ts, CQLTS_ROUND);
	return cqlfdw_bucket_datum(cqlfdw_bucket_start(&c->bucket, ts), c->pgtype);
}

/*
 * bucket_value
 *		The value to write to bucket column a: computed from its source
 *		columns when the row leaves it NULL (INSERT without it), and the
 *		row's own value only when it is the one computed: a bucket written
 *		elsewhere would put the row where no read of its range finds it.
 */
static Datum
bucket_value(CqlModifyState *ms, TupleTableSlot *slot, AttrNumber a, Datum given,
			 bool *isnull)
{
	const CqlFdwColumn *c = &ms->remote.table->cols[a - 1];
	bool		given_null = *isnull;
	Datum		computed = bucket_of_stored(ms, slot, a, isnull);
	int16		typlen;
	bool		typbyval;
	const char *colname = NameStr(TupleDescAttr(RelationGetDescr(ms->rel), a - 1)->attname);

	if (*isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("null value in column(s) %s, the source of bucket column \"%s\" of foreign table \"%s\"",
						c->bucket_of, colname, ms->relname),
				 errdetail("The bucket column is part of the partition key and is computed from its source.")));
	if (given_null)
		return computed;
	/* integers, dates and timestamps: equal values are equal bytes */
	get_typlenbyval(c->pgtype, &typlen, &typbyval);
	if (!datumIsEqual(given, computed, typbyval, typlen))
	{
		Oid			out;
		bool		varlena;

		getTypeOutputInfo(c->pgtype, &out, &varlena);
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("value %s of bucket column \"%s\" of foreign table \"%s\" does not match its %s bucket %s",
						OidOutputFunctionCall(out, given), colname, ms->relname,
						cqlfdw_bucket_describe(&c->bucket),
						OidOutputFunctionCall(out, computed)),
				 errdetail("The bucket column is computed from column(s) %s.", c->bucket_of),
				 errhint("Leave the bucket column out of the INSERT (or set it to NULL): cql_fdw computes it.")));
	}
	return given;
}

/*
 * Bind values of one row, allocated in the current memory context (the
 * callers' temp_cxt), and the encoded partition-key values in pk_parts
 * (*npk of them) for the routing key.  A row that cannot be written (a
 * null key column, a value the CQL type cannot hold) raises an error.
 */
static void
encode_row(CqlModifyState *ms, TupleTableSlot *slot, TupleTableSlot *planSlot,
		   cql_value_ref *values, cql_elem *pk_parts, int *npk)
{
	*npk = 0;
	for (int i = 0; i < ms->nbinds; i++)
	{
		Datum		d;
		bool		isnull;
		cql_buf		b;
		AttrNumber	a = ms->bind_attrs[i];

		switch (ms->bind_kinds[i])
		{
			case MODBIND_TTL:
			case MODBIND_TIMESTAMP:
				if (!cqlfdw_meta_value(ms->remote.table, slot, a,
									   ms->bind_kinds[i] == MODBIND_TTL,
									   ms->remote.opts.ttl, ms->relname, &d))
				{
					/* unset: the option ttl, the table's default, "now" */
					values[i].p = NULL;
					values[i].n = CQL_VALUE_UNSET;
					continue;
				}
				isnull = false;
				break;
			case MODBIND_KEY:
				d = ExecGetJunkAttribute(planSlot, ms->junk_attnos[i], &isnull);
				break;
			case MODBIND_COUNTER:
				{
					/* the delta: new value minus the old one */
					Datum		newv = slot_getattr(slot, a, &isnull);
					bool		oldnull;
					Datum		oldv = ExecGetJunkAttribute(planSlot, ms->junk_attnos[i],
															&oldnull);

					if (!isnull)
						d = Int64GetDatum(DatumGetInt64(newv) -
										  (oldnull ? 0 : DatumGetInt64(oldv)));
					else
						d = (Datum) 0;
				}
				break;
			default:
				d = slot_getattr(slot, a, &isnull);
				if (a > 0 && ms->remote.table->cols[a - 1].bucket.unit != CQLBUCKET_NONE)
					d = bucket_value(ms, slot, a, d, &isnull);
				break;
		}

		if (isnull)
		{
			if (a > 0 && is_key_column(ms->remote.table, a))
				ereport(ERROR,
						(errcode(ERRCODE_NOT_NULL_VIOLATION),
						 errmsg("null value in primary key column \"%s\" of foreign table \"%s\"",
								NameStr(TupleDescAttr(RelationGetDescr(ms->rel), a - 1)->attname),
								ms->relname),
						 errdetail("Cassandra rows cannot have a null partition key or clustering column.")));
			values[i].p = NULL;
			values[i].n = CQL_VALUE_NULL;
			continue;
		}
		cql_buf_init(&b, &cqlfdw_palloc_allocator);
		cqlfdw_conv_write_or_error(&ms->convs[i], d, &b);
		values[i].p = b.data ? b.data : (uint8_t *) palloc(1);
		values[i].n = (int32) b.len;
		if (a > 0 && ms->remote.table->cols[a - 1].kind == CQLCOL_PARTITION_KEY &&
			(ms->bind_kinds[i] == MODBIND_NEW || ms->bind_kinds[i] == MODBIND_KEY))
		{
			pk_parts[*npk].p = values[i].p;
			pk_parts[*npk].n = values[i].n;
			(*npk)++;
		}
	}
}

/*
 * Encode one row: its bound values, its routing key (partition) and its
 * whole primary key (to keep two writes of one row out of one batch).
 */
void
cqlfdw_modify_prepare_row(CqlModifyState *ms, TupleTableSlot *slot, TupleTableSlot *planSlot,
			CqlRowWrite *w)
{
	cql_elem   *parts = palloc(sizeof(cql_elem) * Max(ms->remote.table->npk, 1));
	int			npk;
	cql_buf		pk;

	w->values = palloc(sizeof(cql_value_ref) * Max(ms->nbinds, 1));
	encode_row(ms, slot, planSlot, w->values, parts, &npk);
	w->key = cqlfdw_routing_key(parts, npk, &w->keylen);

	cql_buf_init(&pk, &cqlfdw_palloc_allocator);
	w->bytes = 0;
	for (int i = 0; i < ms->nbinds; i++)
	{
		AttrNumber	a = ms->bind_attrs[i];

		w->bytes += 4 + (w->values[i].n > 0 ? w->values[i].n : 0);
		if (a > 0 && is_key_column(ms->remote.table, a) &&
			(ms->bind_kinds[i] == MODBIND_NEW || ms->bind_kinds[i] == MODBIND_KEY))
			cql_encode_element(&pk, w->values[i].p, w->values[i].n);
	}
	w->pkey = pk.data;
	w->pkeylen = pk.len;
}

/*
 * Send rows of one partition to a replica of it: one row as an EXECUTE,
 * several as one UNLOGGED BATCH of the prepared statement (one mutation on
 * the replica: measured 2-3.5x faster than pipelined EXECUTEs for 10 rows
 * or more per partition, see bench/README.md).  The batch shares one write
 * timestamp, which is why callers never put two writes of one row in it.
 */
void
cqlfdw_modify_send_rows(CqlModifyState *ms, CqlRowWrite **rows, int nrows, CqlPendingWrite *pw)
{
	cql_query_params params;
	cql_prepared *prep;
	const cql_value_ref **vals;
	cql_error	err;
	cql_status	s;
	cql_request **req = &pw->req;
	cql_conn  **conn = &pw->conn;

	cql_error_clear(&err);
	pw->nrows = nrows;
	pw->first_line = pw->last_line = 0;
	pw->has_token = rows[0]->key != NULL;
	if (pw->has_token)
		pw->token = cql_cluster_token(ms->remote.entry->cluster, rows[0]->key,
									  rows[0]->keylen);
	cqlfdw_retry_start(&pw->retry);
	*conn = cqlfdw_remote_conn_for_token(&ms->remote, NULL,
										 pw->has_token ? &pw->token : NULL);
	prep = cqlfdw_remote_prepare(&ms->remote, *conn);
	if (ms->cork)
	{
		bool		known = false;

		for (int i = 0; i < ms->ncorked && !known; i++)
			known = (ms->corked[i] == *conn);
		if (!known && ms->ncorked < CQLFDW_MAX_CORKED)
		{
			cql_conn_cork(*conn, true);
			ms->corked[ms->ncorked++] = *conn;
		}
	}

	cql_query_params_init(&params);
	params.consistency = ms->remote.opts.write_consistency;
	if (ms->remote.opts.if_not_exists)
		params.serial_consistency = ms->remote.opts.serial_consistency;
	params.default_timestamp = ms->stamp_writes ? cqlfdw_write_timestamp()
		: CQL_NO_TIMESTAMP;
	params.nvalues = ms->nbinds;
	params.values = rows[0]->values;
	if (nrows == 1)
	{
		*req = cqlfdw_remote_send_execute(&ms->remote, *conn, prep, &params);
		return;
	}
	vals = palloc(sizeof(cql_value_ref *) * nrows);
	for (int i = 0; i < nrows; i++)
		vals[i] = rows[i]->values;
	do
		s = cql_send_prepared_batch(*conn, CQL_BATCH_UNLOGGED, prep,
									(const cql_value_ref *const *) vals,
									nrows, ms->nbinds, &params, req, &err);
	while (cqlfdw_retry_busy(*conn, &s, &err));
	if (s != CQL_OK)
		cqlfdw_remote_fail(&ms->remote, *conn, s, &err);
}

/*
 * Send one row's statement to a replica of its partition.  Returns false
 * when the write was deferred to COMMIT instead (write_mode 'on_commit').
 */
bool
cqlfdw_modify_send_row(CqlModifyState *ms, TupleTableSlot *slot, TupleTableSlot *planSlot,
		 CqlPendingWrite *pw)
{
	CqlRowWrite w;
	CqlRowWrite *one = &w;

	cqlfdw_modify_prepare_row(ms, slot, planSlot, &w);
	if (ms->remote.opts.write_on_commit)
	{
		cqlfdw_defer_write(&ms->remote, w.values,
						   ms->nbinds, w.key, w.keylen, ms->remote.opts.write_consistency,
						   ms->remote.opts.if_not_exists ? ms->remote.opts.serial_consistency : 0,
						   ms->stamp_writes ? cqlfdw_write_timestamp() : CQL_NO_TIMESTAMP,
						   w.pkey, w.pkeylen);
		return false;
	}
	cqlfdw_modify_send_rows(ms, &one, 1, pw);
	return true;
}

/*
 * resend_write
 *		Send a failed write again (cqlfdw_remote_retry decided so): on the
 *		next replica of its partition, or on the same connection, with the
 *		values, consistency and write timestamp of the first send, which the
 *		library kept in the request (cql_send_again); the row memory is long
 *		gone.  The failed request is freed and replaced in pw.
 */
static void
resend_write(CqlModifyState *ms, CqlPendingWrite *pw, cql_retry_decision d)
{
	cql_request *again = NULL;
	cql_prepared *prep;
	cql_error	err;
	cql_status	s;

	if (d == CQL_RETRY_NEXT_HOST)
		pw->conn = cqlfdw_remote_conn_for_token(&ms->remote, &pw->retry,
												pw->has_token ? &pw->token : NULL);
	prep = cqlfdw_remote_prepare(&ms->remote, pw->conn);
	cql_error_clear(&err);
	do
		s = cql_send_again(pw->conn, prep, pw->req, &again, &err);
	while (cqlfdw_retry_busy(pw->conn, &s, &err));
	cql_request_free(pw->req);
	pw->req = again;
	if (s != CQL_OK)
	{
		pw->req = NULL;
		cqlfdw_remote_fail(&ms->remote, pw->conn, s, &err);
	}
}

/* the argument of resend_pending */
typedef struct CqlResendArg
{
	CqlModifyState *ms;
	CqlPendingWrite *pw;
} CqlResendArg;

/* CqlResendFn of a pipelined write (resend_write) */
static void
resend_pending(void *arg, cql_retry_decision d)
{
	CqlResendArg *ra = (CqlResendArg *) arg;

	resend_write(ra->ms, ra->pw, d);
}

/*
 * Wait for one write; a lightweight transaction's [applied] is checked:
 * false is a unique violation, or with ON CONFLICT DO NOTHING sets
 * not_applied (the row is not counted).  A failure is retried on another replica when the write is idempotent
 * (client-timestamped, no counter, no IF NOT EXISTS: stamp_writes) and
 * the retry policy allows it; otherwise it is raised.
 */
static void
finish_write(CqlModifyState *ms, CqlPendingWrite *pw)
{
	cql_result	res;
	cql_error	err;
	cql_status	s;
	CqlResendArg ra = {ms, pw};

	s = cqlfdw_remote_await_retrying(&ms->remote, &pw->retry, &pw->conn, &pw->req,
									 ms->stamp_writes, resend_pending, &ra,
									 &res, &err);
	if (s != CQL_OK)
		cqlfdw_remote_fail(&ms->remote, pw->conn, s, &err);
	if (ms->remote.opts.if_not_exists && res.kind == CQL_RESULT_ROWS && res.rows_count > 0 &&
		cql_result_cell(&res, 0, 0) != NULL)
	{
		const cql_elem *applied = cql_result_cell(&res, 0, 0);
		bool		ok = applied->n == 1 && applied->p[0] != 0;

		cql_result_free(&res);
		if (!ok && ms->do_nothing)
			ms->not_applied = true;
		else if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("duplicate key value violates the primary key of foreign table \"%s\"",
							ms->relname),
					 errdetail("A row with this primary key already exists in Cassandra table \"%s\".\"%s\".",
							   ms->remote.table->keyspace, ms->remote.table->table),
					 errhint("Remove the table option if_not_exists to overwrite rows (Cassandra's upsert).")));
		return;
	}
	cql_result_free(&res);
}

/*
 * copy_lines_context
 *		Error context of a write of COPY rows (insert.c) awaited after COPY
 *		moved on: the lines of its rows.
 */
static void
copy_lines_context(void *arg)
{
	const CqlPendingWrite *pw = (const CqlPendingWrite *) arg;

	if (pw->nrows == 1)
		errcontext("COPY line " UINT64_FORMAT " (sent to Cassandra with later rows)",
				   pw->first_line);
	else
		errcontext("COPY lines " UINT64_FORMAT " to " UINT64_FORMAT " (%d rows of one partition, sent to Cassandra as one batch)",
				   pw->first_line, pw->last_line, pw->nrows);
}

/*
 * Wait for the oldest pending writes until only 'keep' remain.  Each
 * request is taken off the list before it is awaited, so that an error
 * raised for it leaves the list holding only requests still in flight.
 */
void
cqlfdw_modify_drain(CqlModifyState *ms, int keep)
{
	while (ms->npending > keep)
	{
		CqlPendingWrite w = ms->pending[0];
		ErrorContextCallback cb;

		ms->npending--;
		ms->rows_in_flight -= w.nrows;
		memmove(ms->pending, ms->pending + 1, sizeof(CqlPendingWrite) * ms->npending);
		cb.callback = copy_lines_context;
		cb.arg = &w;
		cb.previous = error_context_stack;
		if (w.first_line > 0)
			error_context_stack = &cb;
		finish_write(ms, &w);
		error_context_stack = cb.previous;
	}
}

/*
 * cqlfdw_modify_uncork
 *		Uncork the connections a batch insert corked, so that what they
 *		queued is sent; not touched when the connection was closed
 *		meanwhile.
 */
void
cqlfdw_modify_uncork(CqlModifyState *ms)
{
	if (cqlfdw_remote_alive(&ms->remote))
		for (int i = 0; i < ms->ncorked; i++)
			cql_conn_cork(ms->corked[i], false);
	ms->ncorked = 0;
}

/*
 * After an error: orphan what is still in flight; the abort that follows
 * settles the connections (settle_after_abort in connection.c), so their
 * answers arrive before the next statement sends anything.
 */
static void
release_pending(CqlModifyState *ms)
{
	if (cqlfdw_remote_alive(&ms->remote))
		for (int i = 0; i < ms->npending; i++)
			cql_request_free(ms->pending[i].req);
	ms->npending = 0;
	ms->rows_in_flight = 0;
}

/*
 * cqlfdw_modify_write_one_row
 *		One row written at once (or deferred to COMMIT); for ExecForeignInsert,
 *		Update and Delete.
 */
void
cqlfdw_modify_write_one_row(CqlModifyState *ms, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	MemoryContext old = MemoryContextSwitchTo(ms->temp_cxt);
	CqlPendingWrite pw;

	ms->not_applied = false;
	if (cqlfdw_modify_send_row(ms, slot, planSlot, &pw))
		finish_write(ms, &pw);
	MemoryContextSwitchTo(old);
	MemoryContextReset(ms->temp_cxt);
}

/*
 * value_as_stored
 *		The value Cassandra stores for d, written with converter cv, when
 *		that differs from d: a timestamp (or an array of them) with digits
 *		below the millisecond, truncated or rounded as option
 *		timestamp_precision says.  Otherwise d itself, *changed left alone.
 */
static Datum
value_as_stored(const CqlConv *cv, Datum d, bool *changed)
{
	if (cv->method == CONV_TIMESTAMPTZ || cv->method == CONV_TIMESTAMP)
	{
		TimestampTz ts = DatumGetTimestampTz(d);
		TimestampTz stored;

		if (TIMESTAMP_NOT_FINITE(ts))
			return d;
		stored = cqlfdw_timestamp_as_stored(ts, cv->ts_precision);
		if (stored == ts)
			return d;
		*changed = true;
		return TimestampTzGetDatum(stored);
	}
	if (cv->method == CONV_ARRAY &&
		(cv->elem->method == CONV_TIMESTAMPTZ || cv->elem->method == CONV_TIMESTAMP))
	{
		ArrayType  *arr = DatumGetArrayTypeP(d);
		Datum	   *elems;
		bool	   *nulls;
		int			n;
		bool		any = false;

		deconstruct_array(arr, cv->elemtype, cv->elmlen, cv->elmbyval, cv->elmalign,
						  &elems, &nulls, &n);
		for (int i = 0; i < n; i++)
			if (!nulls[i])
				elems[i] = value_as_stored(cv->elem, elems[i], &any);
		if (!any)
			return d;
		*changed = true;
		return PointerGetDatum(construct_md_array(elems, nulls, ARR_NDIM(arr),
												  ARR_DIMS(arr), ARR_LBOUND(arr),
												  cv->elemtype, cv->elmlen,
												  cv->elmbyval, cv->elmalign));
	}
	return d;
}

/*
 * cqlfdw_modify_returning_as_stored
 *		For RETURNING: the new row with its timestamps (also in arrays) as
 *		Cassandra stores them (truncated or rounded to the millisecond,
 *		option timestamp_precision), not as given.  The slot (a heap tuple
 *		slot for a foreign table) gets a new tuple, in its own memory
 *		context, only when a value changes.
 */
void
cqlfdw_modify_returning_as_stored(CqlModifyState *ms, TupleTableSlot *slot)
{
	TupleDesc	td = slot->tts_tupleDescriptor;
	Datum	   *values;
	bool	   *isnull;
	bool		changed = false;
	MemoryContext old;
	HeapTuple	tuple;

	if (!ms->has_returning)
		return;
	slot_getallattrs(slot);
	values = palloc(sizeof(Datum) * Max(td->natts, 1));
	isnull = palloc(sizeof(bool) * Max(td->natts, 1));
	memcpy(values, slot->tts_values, sizeof(Datum) * td->natts);
	memcpy(isnull, slot->tts_isnull, sizeof(bool) * td->natts);
	for (int i = 0; i < ms->nbinds; i++)
	{
		AttrNumber	a = ms->bind_attrs[i];

		if (ms->bind_kinds[i] == MODBIND_NEW && a > 0 && a <= td->natts && !isnull[a - 1])
			values[a - 1] = value_as_stored(&ms->convs[i], values[a - 1], &changed);
	}
	if (!changed)
		return;
	old = MemoryContextSwitchTo(slot->tts_mcxt);
	tuple = heap_form_tuple(td, values, isnull);
	MemoryContextSwitchTo(old);
	ExecForceStoreHeapTuple(tuple, slot, true);
}

/*
 * cqlExecForeignUpdate
 *		ExecForeignUpdate callback: one UPDATE of the assigned columns, the
 *		row named by its old key (junk columns); a counter is incremented by
 *		new minus old.  Sent and awaited, or kept for COMMIT.  The slot is
 *		returned as written (for RETURNING, timestamps as stored).
 */
TupleTableSlot *
cqlExecForeignUpdate(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	cqlfdw_modify_write_one_row((CqlModifyState *) rinfo->ri_FdwState, slot, planSlot);
	cqlfdw_modify_returning_as_stored((CqlModifyState *) rinfo->ri_FdwState, slot);
	return slot;
}

/*
 * cqlExecForeignDelete
 *		ExecForeignDelete callback: one DELETE of the row named by its old
 *		key (junk columns), sent and awaited or kept for COMMIT.
 *
 * For RETURNING the slot is filled from the junk columns of the old row
 * (cqlAddForeignUpdateTargets): the row as the scan saw it.
 */
TupleTableSlot *
cqlExecForeignDelete(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	CqlModifyState *ms = (CqlModifyState *) rinfo->ri_FdwState;

	cqlfdw_modify_write_one_row(ms, slot, planSlot);

	/* RETURNING of a DELETE: the row as the scan saw it */
	if (ms->old_attnos)
	{
		int			natts = slot->tts_tupleDescriptor->natts;

		ExecClearTuple(slot);
		for (int i = 0; i < natts; i++)
		{
			slot->tts_isnull[i] = true;
			slot->tts_values[i] = (Datum) 0;
			if (AttributeNumberIsValid(ms->old_attnos[i]))
				slot->tts_values[i] = ExecGetJunkAttribute(planSlot, ms->old_attnos[i],
															&slot->tts_isnull[i]);
		}
		ExecStoreVirtualTuple(slot);
		ExecMaterializeSlot(slot);
	}
	return slot;
}

/*
 * cqlEndForeignModify
 *		EndForeignModify callback: await the writes still in flight, so that
 *		a failure among them fails the statement; then, also when that
 *		fails, uncork, orphan what is left and unpin the connection.
 */
void
cqlEndForeignModify(EState *estate, ResultRelInfo *rinfo)
{
	CqlModifyState *ms = (CqlModifyState *) rinfo->ri_FdwState;

	if (ms == NULL)
		return;
	PG_TRY();
	{
		cqlfdw_modify_drain(ms, 0);
	}
	PG_FINALLY();
	{
		cqlfdw_modify_uncork(ms);
		release_pending(ms);
		cqlfdw_remote_release(&ms->remote);
	}
	PG_END_TRY();
}

/*
 * cqlExplainForeignModify
 *		ExplainForeignModify callback: with VERBOSE, the "Remote CQL" sent
 *		for each row, as postgres_fdw shows its "Remote SQL".
 */
void
cqlExplainForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
						List *fdw_private, int subplan_index, ExplainState *es)
{
	if (es->verbose)
		ExplainPropertyText("Remote CQL",
							strVal(list_nth(fdw_private, FdwModifyPrivateCql)), es);
}

/*
 * cqlIsForeignRelUpdatable
 *		IsForeignRelUpdatable callback: a cql_fdw table accepts INSERT,
 *		UPDATE and DELETE (and COPY FROM) unless option updatable, of the
 *		table or else of its server, is false, as in postgres_fdw.  What a
 *		statement may change (not key columns, counters only by increments)
 *		is checked when it is planned.
 */
int
cqlIsForeignRelUpdatable(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	CqlFdwOptions opts;

	cqlfdw_get_options(GetForeignServerIdByRelId(relid), InvalidOid, relid, &opts);
	if (opts.updatable == 0)
		return 0;
	return (1 << CMD_INSERT) | (1 << CMD_UPDATE) | (1 << CMD_DELETE);
}

/*
 * TRUNCATE runs CQL TRUNCATE on each table whose option truncatable is
 * true (table option over server option).
 */
void
cqlExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs)
{
	ListCell   *lc;

	foreach(lc, rels)
	{
		Relation	rel = (Relation) lfirst(lc);
		CqlRemote	remote;
		cql_result	res;
		cql_error	err;
		cql_status	s;
		cql_query_params params;

		/* TRUNCATE uses the current user's mapping, as postgres_fdw does */
		cqlfdw_remote_resolve_rel(&remote, rel, GetUserId(), NULL);
		if (!remote.opts.truncatable)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("foreign table \"%s\" does not allow truncates",
							RelationGetRelationName(rel)),
					 errhint("Set the option truncatable to 'true' on the foreign table or its server.")));
		remote.cql = cqlfdw_deparse_truncate(remote.table);
		cqlfdw_remote_connect(&remote);
		PG_TRY();
		{
			cql_query_params_init(&params);
			params.consistency = CQL_CONSISTENCY_ALL;
			memset(&res, 0, sizeof(res));
			cql_error_clear(&err);
			s = cql_query(cqlfdw_remote_control(&remote), remote.cql, &params,
						  &res, &err);
			if (s == CQL_ERR_INTERRUPTED)
				cqlfdw_check_interrupts();
			if (s != CQL_OK)
				cqlfdw_report(ERROR, s, &err, remote.cql);
			cql_result_free(&res);
		}
		PG_FINALLY();
		{
			cqlfdw_remote_release(&remote);
		}
		PG_END_TRY();
	}
}

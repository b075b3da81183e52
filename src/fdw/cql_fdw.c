/*-------------------------------------------------------------------------
 *
 * cql_fdw.c
 *		Foreign-data wrapper handler for Apache Cassandra (CQL).
 *
 * This file registers the FDW callbacks and reserves the GUC prefix
 * cql_fdw (there are no GUCs: everything is an option).  The callbacks
 * live in planner.c (scan planning, EXPLAIN), scan.c (scan execution),
 * modify.c (INSERT, UPDATE, DELETE, TRUNCATE), direct_modify.c (UPDATE and
 * DELETE as one CQL statement), analyze.c and import.c.  See
 * docs/architecture.md for the path of a query through the files.
 *
 * IDENTIFICATION
 *		src/fdw/cql_fdw.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "fmgr.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/guc.h"

#include "cql_fdw.h"
#include "analyze.h"
#include "import.h"
#include "modify.h"
#include "planner.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(cql_fdw_handler);

/*
 * _PG_init
 *		Module load.
 *
 * Defines the settings (option.c: the consistency levels of a session;
 * scan_ranges.c: cql_fdw.token_order_scan, whole-table scans in token
 * order, and cql_fdw.token_scan_after, whole-table scans that start after
 * a token, both for cqlbridge diff); reserving the prefix makes an unknown
 * one such as SET cql_fdw.fetch_size an error instead of a silently
 * created placeholder variable.  Installs option.c's ProcessUtility
 * hook, which tells the validator which options a statement sets.
 */
void
_PG_init(void)
{
	DefineCustomBoolVariable("cql_fdw.token_order_scan",
							 "Whole-table scans return their rows in token order.",
							 "Token ranges are still read concurrently (scan_window), but returned in ring order; parallel plans are not used for foreign scans while it is on.",
							 &cqlfdw_token_order_scan,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomStringVariable("cql_fdw.token_scan_after",
							   "Whole-table scans of this session read only the tokens after this one.",
							   "Empty: the whole token ring. The token ranges before it are not requested (cqlbridge diff resuming).",
							   &cqlfdw_token_scan_after_guc,
							   "",
							   PGC_USERSET,
							   0,
							   cqlfdw_check_token_scan_after, NULL, NULL);
	cqlfdw_define_settings();
	MarkGUCPrefixReserved("cql_fdw");
	cqlfdw_watch_option_statements();
}

/*
 * cql_fdw_handler
 *		The FdwRoutine of cql_fdw.
 *
 * Plan time, for a scan: GetForeignRelSize, GetForeignPaths (planner.c),
 * GetForeignUpperPaths (upper_plan.c), IsForeignPathAsyncCapable,
 * IsForeignScanParallelSafe, then GetForeignPlan of the chosen path
 * (planner.c; a pushed aggregate's: upper_plan.c).  Run time: Begin,
 * Iterate (the first starts the scan), ReScan, End, ExplainForeignScan
 * (scan.c; one task's requests: scan_task.c), the DSM callbacks of a
 * parallel token scan (scan_ranges.c) and the asynchronous ones under an
 * Append (scan_async.c).  Writes: PlanForeignModify / PlanDirectModify at
 * plan time, Begin/Exec/End at run time (modify.c, direct_modify.c);
 * analyze.c; import.c.  There are no join callbacks: joins run locally.
 */
Datum
cql_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = cqlGetForeignRelSize;
	routine->GetForeignPaths = cqlGetForeignPaths;
	routine->GetForeignPlan = cqlGetForeignPlan;
	routine->GetForeignUpperPaths = cqlGetForeignUpperPaths;
	routine->BeginForeignScan = cqlBeginForeignScan;
	routine->IterateForeignScan = cqlIterateForeignScan;
	routine->ReScanForeignScan = cqlReScanForeignScan;
	routine->EndForeignScan = cqlEndForeignScan;
	routine->ExplainForeignScan = cqlExplainForeignScan;
	routine->IsForeignScanParallelSafe = cqlIsForeignScanParallelSafe;
	routine->EstimateDSMForeignScan = cqlEstimateDSMForeignScan;
	routine->InitializeDSMForeignScan = cqlInitializeDSMForeignScan;
	routine->ReInitializeDSMForeignScan = cqlReInitializeDSMForeignScan;
	routine->InitializeWorkerForeignScan = cqlInitializeWorkerForeignScan;
	routine->IsForeignPathAsyncCapable = cqlIsForeignPathAsyncCapable;
	routine->ForeignAsyncRequest = cqlForeignAsyncRequest;
	routine->ForeignAsyncConfigureWait = cqlForeignAsyncConfigureWait;
	routine->ForeignAsyncNotify = cqlForeignAsyncNotify;
	routine->ImportForeignSchema = cqlImportForeignSchema;
	routine->AnalyzeForeignTable = cqlAnalyzeForeignTable;

	routine->AddForeignUpdateTargets = cqlAddForeignUpdateTargets;
	routine->PlanForeignModify = cqlPlanForeignModify;
	routine->BeginForeignModify = cqlBeginForeignModify;
	routine->ExecForeignInsert = cqlExecForeignInsert;
	routine->ExecForeignBatchInsert = cqlExecForeignBatchInsert;
	routine->GetForeignModifyBatchSize = cqlGetForeignModifyBatchSize;
	routine->ExecForeignUpdate = cqlExecForeignUpdate;
	routine->ExecForeignDelete = cqlExecForeignDelete;
	routine->EndForeignModify = cqlEndForeignModify;
	routine->ExplainForeignModify = cqlExplainForeignModify;
	routine->BeginForeignInsert = cqlBeginForeignInsert;
	routine->EndForeignInsert = cqlEndForeignInsert;
	routine->IsForeignRelUpdatable = cqlIsForeignRelUpdatable;
	routine->ExecForeignTruncate = cqlExecForeignTruncate;

	routine->PlanDirectModify = cqlPlanDirectModify;
	routine->BeginDirectModify = cqlBeginDirectModify;
	routine->IterateDirectModify = cqlIterateDirectModify;
	routine->EndDirectModify = cqlEndDirectModify;
	routine->ExplainDirectModify = cqlExplainDirectModify;

	PG_RETURN_POINTER(routine);
}


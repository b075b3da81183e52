/*-------------------------------------------------------------------------
 *
 * checks_html.h
 *	  The "Verification" section of report.html (render_checks.c): what
 *	  verify and diff found, drawn by plan and drawn again by verify and
 *	  diff after each run, from their reports DIR/verify.json and
 *	  DIR/diff.json.  Only this declaration is shared with check/, so the
 *	  commands that record a result need nothing else of plan.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/checks_html.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_CHECKS_HTML_H
#define CQLBRIDGE_CHECKS_HTML_H

#include "common/common.h"

/* the names of the reports in the plan directory */
#define PLAN_VERIFY_JSON	"verify.json"
#define PLAN_DIFF_JSON		"diff.json"

/*
 * The section for the query tables targets[] ("keyspace.table"), from the
 * reports in dir (NULL: no check ran yet), between its begin and end
 * markers.
 */
extern void plan_checks_html(StrBuf *sb, char *const *targets, int ntargets,
							 const char *dir);

/*
 * Record a check's report (name: PLAN_VERIFY_JSON or PLAN_DIFF_JSON) in
 * the plan directory dir, atomically, and draw report.html's section
 * again from both reports.
 */
extern void plan_record_check(const char *dir, const char *name, const char *json);

#endif							/* CQLBRIDGE_CHECKS_HTML_H */

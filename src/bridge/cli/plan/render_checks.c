/*-------------------------------------------------------------------------
 *
 * render_checks.c
 *	  The "Verification" section of report.html: per query table what the
 *	  last "cqlbridge verify" found (its queries passed and failed, the
 *	  samples) and what the last "cqlbridge diff" found (rows compared,
 *	  missing, extra and different rows, --repair), with the time each
 *	  ran; a check that never ran says so.
 *
 * plan draws the section with nothing run yet (render.c).  verify and diff
 * record their report (the JSON of --json) as DIR/verify.json and
 * DIR/diff.json and call plan_record_check, which draws the section again
 * from both reports and the tables of DIR/003_load.sql and replaces it in
 * report.html between its markers, so the diagrams and sizing tables that
 * only plan can draw are kept.  A report that is not JSON (edited by hand,
 * cut short) is shown as such and reported on stderr: the check's own
 * result and exit status are not lost for a damaged neighbour.  Every
 * text from a report is HTML-escaped.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/render_checks.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/checks_html.h"
#include "plan/plan.h"

#define SECTION_BEGIN "<!-- cqlbridge:verification -->\n"
#define SECTION_END "<!-- /cqlbridge:verification -->\n"

/* One report read back: its tree, or why there is none */
typedef struct CheckReport
{
	const char *name;			/* "verify" or "diff" */
	BridgeJson *json;			/* NULL: not run, or damaged */
	char	   *error;			/* damaged: what is wrong (allocated) */
} CheckReport;

/*
 * esc
 *		HTML-escaped text (allocated); NULL as "".
 */
static char *
esc(const char *s)
{
	return plan_html_escape(s ? s : "");
}

/*
 * read_report
 *		DIR/file read back into r: not there means the check never ran on
 *		this plan; a file that is not JSON, or not of the check, is kept
 *		as an error for the page (and said on stderr).
 */
static void
read_report(const char *dir, const char *file, const char *name, CheckReport *r)
{
	char	   *path;
	char	   *text;

	memset(r, 0, sizeof(*r));
	r->name = name;
	if (dir == NULL)
		return;
	path = bridge_path(dir, file);
	if (access(path, F_OK) != 0)
	{
		if (errno != ENOENT)
			r->error = bridge_printf("%s: %s", path, strerror(errno));
		free(path);
		return;
	}
	text = bridge_read_file(path);
	r->json = bridge_json_parse(text, &r->error);
	if (r->json && bridge_json_get(r->json, strcmp(name, "verify") == 0 ? "queries" : "tables") == NULL)
	{
		r->json = NULL;
		r->error = bridge_strdup("not a report of cqlbridge");
	}
	if (r->error)
	{
		char	   *e = bridge_printf("%s: %s", path, r->error);

		fprintf(stderr, "cqlbridge: %s is not a readable %s report (%s); report.html says so\n"
				"HINT:  Run \"cqlbridge %s %s\" again to write it anew.\n",
				path, name, r->error, name, dir);
		free(r->error);
		r->error = e;
	}
	free(text);
	free(path);
}

/*
 * items_of
 *		The array member key of a report (its "queries" or "tables"), or
 *		NULL.
 */
static const BridgeJson *
items_of(const CheckReport *r, const char *key)
{
	const BridgeJson *a = r->json ? bridge_json_get(r->json, key) : NULL;

	return a && a->type == BRIDGE_JSON_ARRAY ? a : NULL;
}

/*
 * same_table
 *		Does a report's "table" (keyspace.table) name the target?
 */
static bool
same_table(const BridgeJson *item, const char *target)
{
	const char *t = bridge_json_str(item, "table");

	return t != NULL && strcmp(t, target) == 0;
}

/*
 * table_part
 *		The table of "keyspace.table", as the other tables of the page name
 *		it.
 */
static const char *
table_part(const char *target)
{
	const char *dot = strchr(target, '.');

	return dot ? dot + 1 : target;
}

/*
 * when_text
 *		A report's "finished_at" for people: "2026-11-26 09:15:23 UTC" from
 *		"2026-11-26T09:15:23Z"; any other text as it is (escaped, allocated).
 */
static char *
when_text(const char *at)
{
	size_t		n = at ? strlen(at) : 0;

	if (n == 20 && at[10] == 'T' && at[19] == 'Z')
		return esc(bridge_printf("%.10s %.8s UTC", at, at + 11));
	return esc(at ? at : "an unknown time");
}

/*
 * summary
 *		The line of one check: when it ran and its totals, or that it never
 *		ran on this plan (or its report is damaged).
 */
static void
summary(StrBuf *sb, const CheckReport *r)
{
	char	   *when;

	if (r->error)
	{
		char	   *e = esc(r->error);

		sb_appendf(sb, "<p class=\"warn\" id=\"%s-summary\">The %s report could not be read: %s. "
				   "Run <code>cqlbridge %s DIR</code> again.</p>\n", r->name, r->name, e, r->name);
		free(e);
		return;
	}
	if (r->json == NULL)
	{
		sb_appendf(sb, "<p class=\"warn\" id=\"%s-summary\"><code>cqlbridge %s</code> has not been run on this plan%s.</p>\n",
				   r->name, r->name,
				   strcmp(r->name, "verify") == 0
				   ? " (it runs every workload query on both sides with sampled parameters and compares the answers)"
				   : " (it compares every row of every query table with its source view)");
		return;
	}
	when = when_text(bridge_json_str(r->json, "finished_at"));
	if (strcmp(r->name, "verify") == 0)
	{
		const BridgeJson *qs = items_of(r, "queries");
		int			n = qs ? qs->n : 0;
		int			failed = (int) bridge_json_num(r->json, "failed", 0);
		long		samples = 0;

		for (int i = 0; i < n; i++)
			samples += (long) bridge_json_num(qs->items[i], "samples", 0);
		sb_appendf(sb, "<p%s id=\"verify-summary\"><code>cqlbridge verify</code> ran at %s: %d quer%s, "
				   "%d passed, %d failed, %ld sample%s.</p>\n",
				   failed ? " class=\"warn\"" : "", when, n, n == 1 ? "y" : "ies",
				   n - failed, failed, samples, samples == 1 ? "" : "s");
	}
	else
	{
		const BridgeJson *ts = items_of(r, "tables");
		const BridgeJson *rep = bridge_json_get(r->json, "repair");
		bool		repair = rep && rep->type == BRIDGE_JSON_BOOL && rep->boolean;
		long long	diffs = (long long) bridge_json_num(r->json, "differences", 0);
		long long	left = 0;

		for (int i = 0; ts && i < ts->n; i++)
			left += (long long) bridge_json_num(ts->items[i], "still_different", 0);
		sb_appendf(sb, "<p%s id=\"diff-summary\"><code>cqlbridge diff</code> ran at %s%s: %d table%s compared, "
				   "%lld difference%s",
				   diffs && (!repair || left) ? " class=\"warn\"" : "", when,
				   repair ? " with --repair" : " without --repair",
				   ts ? ts->n : 0, ts && ts->n == 1 ? "" : "s", diffs, diffs == 1 ? "" : "s");
		if (repair)
			sb_appendf(sb, "; %lld still differ%s after the repair", left, left == 1 ? "s" : "");
		sb_append(sb, ".</p>\n");
	}
	free(when);
}

/*
 * verify_cells
 *		The verify cells of one table's row: its queries, passed, failed
 *		and samples; *failed_out counts the failures.
 */
static void
verify_cells(StrBuf *sb, const CheckReport *r, const char *target, int *failed_out)
{
	const BridgeJson *qs = items_of(r, "queries");
	int			n = 0,
				failed = 0;
	long		samples = 0;

	if (qs == NULL)
	{
		sb_append(sb, r->error ? "<td colspan=\"4\">report unreadable</td>" : "<td colspan=\"4\">not run</td>");
		return;
	}
	for (int i = 0; i < qs->n; i++)
	{
		const char *res = bridge_json_str(qs->items[i], "result");

		if (!same_table(qs->items[i], target))
			continue;
		n++;
		samples += (long) bridge_json_num(qs->items[i], "samples", 0);
		if (res == NULL || strcmp(res, "FAIL") == 0)
			failed++;
	}
	if (n == 0)
		sb_append(sb, "<td colspan=\"4\">not in the last run</td>");
	else
		sb_appendf(sb, "<td>%d</td><td>%d</td><td>%d</td><td>%ld</td>", n, n - failed, failed, samples);
	*failed_out += failed;
}

/*
 * diff_cells
 *		The diff cells of one table's row: rows on each side, missing,
 *		extra, different and (after --repair) repaired; *diffs_out counts
 *		the differences.
 */
static void
diff_cells(StrBuf *sb, const CheckReport *r, const char *target, long long *diffs_out)
{
	const BridgeJson *ts = items_of(r, "tables");
	const BridgeJson *t = NULL;

	if (ts == NULL)
	{
		sb_append(sb, r->error ? "<td colspan=\"5\">report unreadable</td>" : "<td colspan=\"5\">not run</td>");
		return;
	}
	for (int i = 0; i < ts->n && t == NULL; i++)
		if (same_table(ts->items[i], target))
			t = ts->items[i];
	if (t == NULL)
	{
		sb_append(sb, "<td colspan=\"5\">not in the last run</td>");
		return;
	}
	sb_appendf(sb, "<td>%.0f / %.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td>",
			   bridge_json_num(t, "source_rows", 0), bridge_json_num(t, "target_rows", 0),
			   bridge_json_num(t, "missing", 0), bridge_json_num(t, "extra", 0),
			   bridge_json_num(t, "different", 0));
	if (bridge_json_get(t, "repaired"))
		sb_appendf(sb, "<td>%.0f (%.0f still differ)</td>", bridge_json_num(t, "repaired", 0),
				   bridge_json_num(t, "still_different", 0));
	else
		sb_append(sb, "<td>-</td>");
	*diffs_out += (long long) (bridge_json_num(t, "missing", 0) + bridge_json_num(t, "extra", 0) +
							   bridge_json_num(t, "different", 0));
}

/*
 * key_text
 *		An example's key object as "col = value, ..." (escaped, allocated).
 */
static char *
key_text(const BridgeJson *key)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int k = 0; key && key->type == BRIDGE_JSON_OBJECT && k < key->n; k++)
	{
		const BridgeJson *v = key->items[k];
		char	   *name = esc(key->keys[k]);
		char	   *val = esc(v->type == BRIDGE_JSON_STRING ? v->str : "NULL");

		sb_appendf(&sb, "%s%s = %s", k ? ", " : "", name, val);
		free(name);
		free(val);
	}
	return sb.data;
}

/*
 * details
 *		Below the table: the first difference of every failed verify query,
 *		and the diff's examples and differing columns of every table.
 */
static void
details(StrBuf *sb, const CheckReport *v, const CheckReport *d)
{
	const BridgeJson *qs = items_of(v, "queries");
	const BridgeJson *ts = items_of(d, "tables");

	for (int i = 0; qs && i < qs->n; i++)
	{
		const char *res = bridge_json_str(qs->items[i], "result");
		char	   *q,
				   *t,
				   *why;

		if (res && strcmp(res, "FAIL") != 0)
			continue;
		q = esc(bridge_json_str(qs->items[i], "query"));
		t = esc(table_part(bridge_json_str(qs->items[i], "table") ? bridge_json_str(qs->items[i], "table") : "?"));
		why = esc(bridge_json_str(qs->items[i], "difference"));
		sb_appendf(sb, "<h3 class=\"warn\">verify: query %s (table %s) failed</h3>\n<pre>%s</pre>\n", q, t, why);
		free(q);
		free(t);
		free(why);
	}
	for (int i = 0; ts && i < ts->n; i++)
	{
		const BridgeJson *t = ts->items[i];
		const BridgeJson *ex = bridge_json_get(t, "examples");
		const BridgeJson *cols = bridge_json_get(t, "different_columns");
		double		total = bridge_json_num(t, "missing", 0) + bridge_json_num(t, "extra", 0) +
			bridge_json_num(t, "different", 0);
		char	   *name;

		if (total == 0)
			continue;
		name = esc(table_part(bridge_json_str(t, "table") ? bridge_json_str(t, "table") : "?"));
		sb_appendf(sb, "<h3 class=\"warn\">diff: %.0f difference%s in table %s</h3>\n",
				   total, total == 1 ? "" : "s", name);
		free(name);
		if (cols && cols->type == BRIDGE_JSON_OBJECT && cols->n > 0)
		{
			sb_append(sb, "<p>Rows per differing column:");
			for (int c = 0; c < cols->n; c++)
			{
				char	   *cn = esc(cols->keys[c]);

				sb_appendf(sb, "%s <code>%s</code> %.0f", c ? "," : "", cn,
						   cols->items[c]->type == BRIDGE_JSON_NUMBER ? cols->items[c]->number : 0);
				free(cn);
			}
			sb_append(sb, ".</p>\n");
		}
		if (ex == NULL || ex->type != BRIDGE_JSON_ARRAY || ex->n == 0)
			continue;
		sb_append(sb, "<table class=\"examples\">\n<tr><th>kind</th><th>key</th><th>columns that differ</th></tr>\n");
		for (int e = 0; e < ex->n; e++)
		{
			char	   *kind = esc(bridge_json_str(ex->items[e], "kind"));
			char	   *key = key_text(bridge_json_get(ex->items[e], "key"));
			char	   *cs = esc(bridge_json_str(ex->items[e], "columns"));

			sb_appendf(sb, "<tr><td>%s</td><td><code>%s</code></td><td>%s</td></tr>\n", kind, key, cs);
			free(kind);
			free(key);
			free(cs);
		}
		sb_append(sb, "</table>\n");
		if (ex->n < total)
			sb_appendf(sb, "<p>... and %.0f more (diff --examples N shows more).</p>\n", total - ex->n);
	}
}

/*
 * plan_checks_html
 *		The Verification section, between its markers: the two summaries,
 *		one row per query table with the verify and diff outcomes, then the
 *		details of what failed.  dir NULL: drawn by plan, nothing ran yet.
 */
void
plan_checks_html(StrBuf *sb, char *const *targets, int ntargets, const char *dir)
{
	CheckReport v,
				d;

	read_report(dir, PLAN_VERIFY_JSON, "verify", &v);
	read_report(dir, PLAN_DIFF_JSON, "diff", &d);
	sb_append(sb, SECTION_BEGIN);
	sb_append(sb, "<h2 id=\"verification\">Verification</h2>\n");
	sb_append(sb, "<p>What the checks found once the tables were loaded (<code>cqlbridge apply</code>): "
			  "<code>cqlbridge verify</code> runs each workload query on the relational tables and through the foreign table "
			  "with the same sampled parameters; <code>cqlbridge diff</code> compares every row of each query table with its source view. "
			  "Each run draws this section again (its report is verify.json or diff.json in the plan directory).</p>\n");
	summary(sb, &v);
	summary(sb, &d);
	sb_append(sb, "<table id=\"checks\">\n<tr><th rowspan=\"2\">table</th><th colspan=\"4\">verify</th><th colspan=\"5\">diff</th></tr>\n"
			  "<tr><th>queries</th><th>passed</th><th>failed</th><th>samples</th>"
			  "<th>rows source / Cassandra</th><th>missing</th><th>extra</th><th>different</th><th>repaired</th></tr>\n");
	for (int i = 0; i < ntargets; i++)
	{
		StrBuf		cells;
		int			failed = 0;
		long long	diffs = 0;
		char	   *name = esc(table_part(targets[i]));

		sb_init(&cells);
		verify_cells(&cells, &v, targets[i], &failed);
		diff_cells(&cells, &d, targets[i], &diffs);
		sb_appendf(sb, "<tr%s><td>%s</td>%s</tr>\n", failed || diffs ? " class=\"over\"" : "",
				   name, cells.data);
		sb_free(&cells);
		free(name);
	}
	sb_append(sb, "</table>\n");
	details(sb, &v, &d);
	sb_append(sb, SECTION_END);
}

/*
 * plan_record_check
 *		Write a check's report as DIR/name (atomically: bridge_write_file),
 *		then draw the Verification section again and put it into
 *		DIR/report.html in place of the old one (a report.html of an older
 *		cqlbridge, without the section, gets it before </body>).  A plan
 *		directory without report.html keeps the JSON only, and one that is
 *		not writable neither; both are said on stderr, and the check's
 *		result and exit status stand.
 */
void
plan_record_check(const char *dir, const char *name, const char *json)
{
	char	   *html_path = bridge_path(dir, "report.html");
	BridgeBlockFile *f = bridge_read_blocks(bridge_path(dir, "003_load.sql"));
	char	  **targets = bridge_malloc(sizeof(char *) * (f->nblocks + 1));
	char	   *html;
	const char *begin;
	const char *end;
	StrBuf		sb;

	/* a plan directory others own may be read-only: the check's result stands */
	if (access(dir, W_OK) != 0)
	{
		fprintf(stderr, "cqlbridge: could not record the result in \"%s\": %s; %s and report.html not written\n"
				"HINT:  Give --json FILE for the report, or run the check as a user who may write the plan directory.\n",
				dir, strerror(errno), name);
		return;
	}
	bridge_write_file(bridge_path(dir, name), json);
	if (access(html_path, F_OK) != 0)
	{
		fprintf(stderr, "cqlbridge: %s not found: the result is recorded in %s only\n"
				"HINT:  Run \"cqlbridge plan\" again for a report.html.\n",
				html_path, name);
		return;
	}
	html = bridge_read_file(html_path);
	begin = strstr(html, SECTION_BEGIN);
	end = begin ? strstr(begin, SECTION_END) : NULL;
	if (begin == NULL || end == NULL)
	{
		begin = end = strstr(html, "</body>");
		if (begin == NULL)
		{
			fprintf(stderr, "cqlbridge: %s has no </body>: it is not a report.html of cqlbridge plan; not changed\n"
					"HINT:  Run \"cqlbridge plan\" again for a new report.html.\n", html_path);
			return;
		}
	}
	else
		end += strlen(SECTION_END);
	for (int i = 0; i < f->nblocks; i++)
		targets[i] = (char *) bridge_block_require(f, &f->blocks[i], "table");

	sb_init(&sb);
	sb_appendf(&sb, "%.*s", (int) (begin - html), html);
	plan_checks_html(&sb, targets, f->nblocks, dir);
	sb_append(&sb, end);
	bridge_write_file(html_path, sb.data);
	sb_free(&sb);
	free(html);
	free(targets);
}

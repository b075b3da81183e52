/*-------------------------------------------------------------------------
 *
 * render.c
 *	  The diagrams rendered as SVG by Graphviz's dot, and report.html: the
 *	  logical and physical diagrams embedded with the sizing tables and the
 *	  Verification section (render_checks.c, drawn again by verify and
 *	  diff), for a browser.
 *
 * dot runs as a child process fed the DOT text on its standard input; the
 * SVG is read from its standard output, all in memory, so plan still
 * writes its directory only after everything succeeded.  When dot is not
 * installed (not found in PATH), the plan keeps logical.dot and
 * physical.dot, says so on stderr, and report.html says how to draw them;
 * a dot that fails on our DOT text is an error (a bug of cqlbridge).
 * The SVG bytes depend on the Graphviz version, so logical.svg,
 * physical.svg and report.html are not golden files (the .dot files are).
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/render.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/checks_html.h"
#include "plan/plan.h"

/* exit status of the child when dot cannot be executed */
#define DOT_NOT_FOUND 127

/*
 * write_all
 *		Write len bytes to fd; false on an error (EPIPE: dot exited early).
 */
static bool
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0)
	{
		ssize_t		n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t) n;
	}
	return true;
}

/*
 * run_dot
 *		The SVG of a DOT text from "dot -Tsvg" (allocated), or NULL when dot
 *		is not installed.  Any other failure of dot is fatal.
 *
 * dot reads its whole input before it writes, so the text is written and
 * the pipe closed before the answer is read; SIGPIPE is ignored meanwhile
 * so that a dot exiting early is reported, not fatal to cqlbridge.
 */
static char *
run_dot(const char *what, const char *dot)
{
	int			in[2],
				out[2];
	pid_t		pid;
	StrBuf		svg;
	char		buf[8192];
	int			status;
	bool		written;
	void		(*old_pipe) (int);

	if (pipe(in) != 0 || pipe(out) != 0)
		bridge_fatal("could not create a pipe for dot: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		bridge_fatal("could not start dot: %s", strerror(errno));
	if (pid == 0)
	{
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execlp("dot", "dot", "-Tsvg", (char *) NULL);
		_exit(DOT_NOT_FOUND);
	}
	close(in[0]);
	close(out[1]);
	old_pipe = signal(SIGPIPE, SIG_IGN);
	written = write_all(in[1], dot, strlen(dot));
	close(in[1]);
	sb_init(&svg);
	for (;;)
	{
		ssize_t		n = read(out[0], buf, sizeof(buf) - 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf[n] = '\0';
		sb_append(&svg, buf);
	}
	close(out[0]);
	signal(SIGPIPE, old_pipe);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			bridge_fatal("could not wait for dot: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == DOT_NOT_FOUND && svg.len == 0)
	{
		sb_free(&svg);
		return NULL;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !written || svg.len == 0)
		bridge_fatal_hint("Check the Graphviz installation (dot -V); the DOT text is kept in the plan directory of a run without dot in PATH.",
						  "dot -Tsvg failed on the %s diagram (%s %d)", what,
						  WIFEXITED(status) ? "exit status" : "signal",
						  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return svg.data;
}

/*
 * svg_element
 *		The <svg> element of dot's output, without the XML declaration and
 *		DOCTYPE before it, for embedding in HTML.
 */
static const char *
svg_element(const char *svg)
{
	const char *s = strstr(svg, "<svg");

	return s ? s : svg;
}

/*
 * html_merged
 *		The tables that serve several queries (merge.c): which queries, the
 *		writes saved per source relation, the row filter of each query
 *		whose rows are fewer.  Nothing when no table is merged.
 */
static void
html_merged(StrBuf *sb, Plan *p)
{
	bool		any = false;

	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];
		char	   *text;
		int			saved = plan_writes_saved(t, &text);

		if (!text)
			continue;
		if (!any)
			sb_append(sb, "<h2>Merged tables</h2>\n<table>\n<tr><th>table</th><th>serves</th>"
					  "<th>writes saved per change</th><th>source relations</th><th>rows read</th></tr>\n");
		any = true;
		sb_appendf(sb, "<tr><td>%s</td><td>", plan_html_escape(t->name));
		for (int k = 0; k < t->nqueries; k++)
			sb_appendf(sb, "%s%s", k ? ", " : "", plan_html_escape(t->queries[k]->name));
		sb_appendf(sb, "</td><td>%d</td><td>", saved);
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			sb_appendf(sb, "%s<br>", plan_html_escape(line));
		sb_append(sb, "</td><td>");
		for (int k = 0, n = 0; k < t->nqueries; k++)
			if (t->queries[k]->marker)
				sb_appendf(sb, "%s%s: <code>%s IS NOT NULL</code>", n++ ? "<br>" : "",
						   plan_html_escape(t->queries[k]->name), plan_html_escape(t->queries[k]->marker));
		sb_append(sb, "</td></tr>\n");
		free(text);
	}
	if (any)
		sb_append(sb, "</table>\n");
}

/*
 * html_tables
 *		The sizing tables of report.md as HTML: one row per query, one row
 *		per table with its sizes, and the plan's warnings.
 */
static void
html_tables(StrBuf *sb, Plan *p)
{
	sb_append(sb, "<h2>Queries</h2>\n<table>\n<tr><th>query</th><th>description</th><th>table</th><th>key</th><th>single partition</th></tr>\n");
	for (int qi = 0; qi < p->nqueries; qi++)
	{
		Query	   *q = &p->queries[qi];
		bool		bucketed = q->table->bucket && q->table->bucket->applied;

		if (q->compose)
		{
			sb_appendf(sb, "<tr><td>%s</td><td>%s</td><td>%s JOIN %s (composed)</td><td><code>%s</code>; lookups by <code>%s</code></td><td>no: 1 partition and at most %ld lookups</td></tr>\n",
					   plan_html_escape(q->name), plan_html_escape(q->description ? q->description : ""),
					   plan_html_escape(q->compose->drive->table->name),
					   plan_html_escape(q->compose->lookup->table->name),
					   plan_html_escape(plan_key_text(q->compose->drive->table)),
					   plan_html_escape(plan_key_text(q->compose->lookup->table)), plan_compose_bound(q));
			continue;
		}
		sb_appendf(sb, "<tr><td>%s</td><td>%s</td><td>%s</td><td><code>%s</code></td><td>%s</td></tr>\n",
				   plan_html_escape(q->name),
				   plan_html_escape(q->description ? q->description : ""),
				   plan_html_escape(q->table->name),
				   plan_html_escape(plan_key_text(q->table)),
				   bucketed ? plan_html_escape(bridge_printf("no: buckets %s", plan_bucket_text(q->table))) : "yes");
	}
	sb_append(sb, "</table>\n");

	sb_appendf(sb, "<h2>Tables</h2>\n<p>Replication factor %d; partition limits %ld values, %ld bytes.</p>\n<table>\n"
			   "<tr><th>table</th><th>rows</th><th>partitions</th><th>rows/partition max</th><th>p99</th><th>mean</th>"
			   "<th>Nv max</th><th>bytes/partition max</th><th>total bytes (&#215;RF)</th></tr>\n",
			   p->opts->replication_factor, p->opts->max_values, p->opts->max_bytes);
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];
		bool		over = t->nv_max > (double) p->opts->max_values ||
			t->bytes_max > (double) p->opts->max_bytes;

		sb_appendf(sb, "<tr%s><td>%s</td><td>%ld</td><td>%ld</td><td>%ld</td><td>%ld</td><td>%.2f</td>"
				   "<td>%.0f</td><td>%.0f</td><td>%.0f</td></tr>\n",
				   over ? " class=\"over\"" : "", plan_html_escape(t->name), t->rows, t->partitions,
				   t->max_rows, t->p99_rows, t->mean_rows, t->nv_max, t->bytes_max, t->bytes_total);
	}
	sb_append(sb, "</table>\n");
	html_merged(sb, p);

	for (int ti = 0; ti < p->ntables; ti++)
		for (int w = 0; w < p->tables[ti]->nwarn; w++)
			sb_appendf(sb, "<p class=\"warn\">%s: %s</p>\n", plan_html_escape(p->tables[ti]->name),
					   plan_html_escape(p->tables[ti]->warnings[w]));
	for (int w = 0; w < p->nwarn; w++)
		sb_appendf(sb, "<p class=\"warn\">%s</p>\n", plan_html_escape(p->warnings[w]));
}

/*
 * plan_render
 *		Render logical_dot and physical_dot with dot into *logical_svg and
 *		*physical_svg (NULL when dot is not installed) and return the text
 *		of report.html.
 */
char *
plan_render(Plan *p, const char *logical_dot, const char *physical_dot,
			char **logical_svg, char **physical_svg)
{
	StrBuf		sb;

	*logical_svg = run_dot("logical", logical_dot);
	*physical_svg = *logical_svg ? run_dot("physical", physical_dot) : NULL;

	sb_init(&sb);
	sb_appendf(&sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			   "<title>cqlbridge plan: keyspace %s</title>\n"
			   "<style>\n"
			   "body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; }\n"
			   "table { border-collapse: collapse; margin: 0.5em 0 1.5em; }\n"
			   "th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; }\n"
			   "th { background: #e8e8e8; }\n"
			   "tr.over td { background: #f8d7d7; }\n"
			   "pre { background: #f4f4f4; padding: 0.5em; overflow-x: auto; }\n"
			   ".warn { color: #8a4b00; }\n"
			   ".diagram { overflow-x: auto; border: 1px solid #ddd; padding: 0.5em; margin-bottom: 1.5em; }\n"
			   ".diagram svg { max-width: 100%%; height: auto; }\n"
			   "</style>\n</head>\n<body>\n",
			   plan_html_escape(p->keyspace));
	sb_appendf(&sb, "<h1>cqlbridge plan: keyspace <code>%s</code> from schema <code>%s</code></h1>\n",
			   plan_html_escape(p->keyspace), plan_html_escape(p->cat.schema));
	sb_append(&sb, "<p>The query tables cqlbridge derived from the workload, drawn as Chebotko diagrams: "
			  "each table with its columns (K partition key, B bucket, C&#8593;/C&#8595; clustering, S static), "
			  "the arrows the application workflow (each query follows the earlier one whose output names its parameters, or starts at the application). "
			  "Sizes were measured on the data; details in report.md and model.txt.</p>\n");
	if (*logical_svg)
	{
		sb_append(&sb, "<h2>Logical data model</h2>\n<div class=\"diagram\" id=\"logical\">\n");
		sb_append(&sb, svg_element(*logical_svg));
		sb_append(&sb, "</div>\n<h2>Physical data model</h2>\n<div class=\"diagram\" id=\"physical\">\n");
		sb_append(&sb, svg_element(*physical_svg));
		sb_append(&sb, "</div>\n");
	}
	else
		sb_append(&sb, "<p class=\"warn\" id=\"no-diagrams\">Graphviz's <code>dot</code> was not found when this plan was made: "
				  "the diagrams are in logical.dot and physical.dot. Install Graphviz and run cqlbridge plan again, "
				  "or draw them with <code>dot -Tsvg logical.dot &gt; logical.svg</code>.</p>\n");
	html_tables(&sb, p);
	if (p->nleft > 0)
	{
		sb_appendf(&sb, "<h2 id=\"left-out\">Statements left out</h2>\n<p class=\"warn\">%d of the workload's %d statements are not served by this plan: no query table serves them.</p>\n"
				   "<table>\n<tr><th>query</th><th>line</th><th>rule</th><th>reason</th><th>what would serve it</th></tr>\n",
				   p->nleft, p->nleft + plan_nworkload(p));
		for (int i = 0; i < p->nleft; i++)
			sb_appendf(&sb, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
					   plan_html_escape(p->left[i].name), p->left[i].line, plan_html_escape(p->left[i].rule),
					   plan_html_escape(p->left[i].reason),
					   p->left[i].hint ? plan_html_escape(p->left[i].hint) : "");
		sb_append(&sb, "</table>\n");
	}
	{
		char	  **targets = bridge_malloc(sizeof(char *) * (p->ntables + 1));

		/* no check has run on a new plan: the section says so */
		for (int ti = 0; ti < p->ntables; ti++)
			targets[ti] = bridge_printf("%s.%s", p->keyspace, p->tables[ti]->name);
		plan_checks_html(&sb, targets, p->ntables, NULL);
		for (int ti = 0; ti < p->ntables; ti++)
			free(targets[ti]);
		free(targets);
	}
	sb_append(&sb, "</body>\n</html>\n");
	return sb.data;
}

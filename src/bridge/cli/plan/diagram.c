/*-------------------------------------------------------------------------
 *
 * diagram.c
 *	  The plan's Chebotko diagrams as Graphviz DOT text: logical.dot (each
 *	  query table with its columns and key markers) and physical.dot (the
 *	  same with CQL types, buckets and the sizes measured on the data),
 *	  both with the application workflow drawn as arrows labelled with the
 *	  queries, as in the hotel example the mapping rules come from.
 *
 * The workflow is inferred from the workload, one arrow per query: query B
 * follows the query A listed before it whose output columns name the most
 * of B's parameters (Q1 returns hotel_id, which Q2, Q3 and Q4 take; Q4
 * returns hotel_id and room_number, Q5 takes both), and the arrow runs from
 * the table that serves A to the table that serves B; a query no earlier
 * query feeds is an entry point, reached from the "application" node.  Markers are those of
 * model.txt: K partition key, B bucket, C↑/C↓ clustering, S static.
 *
 * The text depends only on the plan and the numbers measured on the data
 * (no timings, no environment), so it is compared with golden files like
 * model.txt.  Every name is escaped for DOT's HTML-like labels; nothing of
 * a name reaches DOT syntax outside a quoted label.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/diagram.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/*
 * plan_html_escape
 *		s with &, <, >, " and ' replaced by entities (allocated): for DOT's
 *		HTML-like labels and for report.html.
 */
char *
plan_html_escape(const char *s)
{
	StrBuf		sb;

	sb_init(&sb);
	for (; *s; s++)
	{
		switch (*s)
		{
			case '&':
				sb_append(&sb, "&amp;");
				break;
			case '<':
				sb_append(&sb, "&lt;");
				break;
			case '>':
				sb_append(&sb, "&gt;");
				break;
			case '"':
				sb_append(&sb, "&quot;");
				break;
			case '\'':
				sb_append(&sb, "&#39;");
				break;
			default:
				sb_appendc(&sb, *s);
		}
	}
	return sb.data;
}

/* the index of table t in the plan (its node name is "t<index>") */
static int
table_index(const Plan *p, const Table *t)
{
	for (int i = 0; i < p->ntables; i++)
		if (p->tables[i] == t)
			return i;
	return -1;
}

/*
 * fed_params
 *		How many parameters of query b are named like an output column of
 *		query a.
 */
static int
fed_params(const Query *a, const Query *b)
{
	int			n = 0;

	for (int i = 0; i < b->nparams; i++)
		for (int j = 0; j < a->nvisible; j++)
			if (a->tnames[j] && strcmp(b->pnames[i], a->tnames[j]) == 0)
			{
				n++;
				break;
			}
	return n;
}

/*
 * predecessor
 *		The query before query qi in the workflow: of the queries listed
 *		before it in the workload, the one whose output names the most of
 *		its parameters (the first of equals); -1 when none names any (an
 *		entry point of the application).
 */
static int
predecessor(const Plan *p, int qi)
{
	int			best = -1,
				best_n = 0;

	for (int qa = 0; qa < qi; qa++)
	{
		int			n = fed_params(&p->queries[qa], &p->queries[qi]);

		if (n > best_n)
		{
			best = qa;
			best_n = n;
		}
	}
	return best;
}

/*
 * table_node
 *		The node of one table: an HTML-like table with the name, one row per
 *		column (name, CQL type when physical, marker), and for the physical
 *		diagram the bucket and the sizes measured on the data.
 */
static void
table_node(StrBuf *sb, const Plan *p, const Table *t, int idx, bool physical)
{
	int			span = physical ? 3 : 2;

	sb_appendf(sb, "  t%d [id=\"table_%d\", label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n", idx, idx);
	sb_appendf(sb, "    <tr><td colspan=\"%d\" bgcolor=\"#d7e3f4\"><b>%s</b></td></tr>\n",
			   span, plan_html_escape(t->name));
	for (int i = 0; i < t->ncols; i++)
	{
		const Column *c = &t->cols[i];
		char	   *mk = bridge_trim_copy(plan_column_marker(c), strlen(plan_column_marker(c)));

		sb_appendf(sb, "    <tr><td align=\"left\">%s</td>", plan_html_escape(c->name));
		if (physical)
			sb_appendf(sb, "<td align=\"left\">%s</td>", plan_html_escape(c->cql_type));
		sb_appendf(sb, "<td>%s</td></tr>\n", *mk ? mk : " ");
	}
	if (physical)
	{
		if (t->bucket && t->bucket->applied)
			sb_appendf(sb, "    <tr><td colspan=\"%d\" align=\"left\"><font point-size=\"10\">bucket: %s</font></td></tr>\n",
					   span, plan_html_escape(plan_bucket_text(t)));
		sb_appendf(sb, "    <tr><td colspan=\"%d\" align=\"left\"><font point-size=\"10\">%ld rows, %ld partitions<br align=\"left\"/>"
				   "rows/partition max %ld, mean %.2f<br align=\"left\"/>"
				   "Nv max %.0f, bytes/partition max %.0f<br align=\"left\"/>"
				   "total %.0f bytes (x RF %d)<br align=\"left\"/></font></td></tr>\n",
				   span, t->rows, t->partitions, t->max_rows, t->mean_rows, t->nv_max,
				   t->bytes_max, t->bytes_total, p->opts->replication_factor);
	}
	sb_append(sb, "  </table>>];\n");
}

/*
 * workflow_edges
 *		The application workflow: one arrow per query, labelled with its
 *		name, from the table of the query before it (predecessor) or from
 *		the entry node, to the table that serves it.
 */
static void
workflow_edges(StrBuf *sb, const Plan *p)
{
	for (int qi = 0; qi < p->nqueries; qi++)
	{
		const Query *q = &p->queries[qi];
		int			prev = predecessor(p, qi);

		if (prev < 0)
			sb_append(sb, "  app");
		else
			sb_appendf(sb, "  t%d", table_index(p, p->queries[prev].table));
		sb_appendf(sb, " -> t%d [label=\"%s\"];\n", table_index(p, q->table),
				   plan_html_escape(q->name));
	}
}

/*
 * diagram
 *		The DOT text of the logical or physical diagram.
 */
static char *
diagram(Plan *p, bool physical)
{
	StrBuf		sb;
	bool		buckets = false;

	for (int ti = 0; ti < p->ntables; ti++)
		if (p->tables[ti]->bucket && p->tables[ti]->bucket->applied)
			buckets = true;
	sb_init(&sb);
	sb_appendf(&sb, "// cqlbridge plan: %s Chebotko diagram of keyspace %s (render: dot -Tsvg)\n",
			   physical ? "physical" : "logical", p->keyspace);
	sb_appendf(&sb, "digraph %s {\n", physical ? "physical" : "logical");
	sb_appendf(&sb, "  graph [rankdir=LR, fontname=\"Helvetica\", labelloc=t, labeljust=l, label=<%s data model of keyspace&#160;<b>%s</b>&#160;from schema %s<br/>"
			   "<font point-size=\"10\">K partition key, %sC↑/C↓ clustering (ascending/descending), S static; "
			   "arrows: the application workflow (a query follows the earlier one whose output names its parameters)</font>>];\n",
			   physical ? "Physical" : "Logical", plan_html_escape(p->keyspace),
			   plan_html_escape(p->cat.schema), buckets ? "B bucket, " : "");
	sb_append(&sb, "  node [shape=plain, fontname=\"Helvetica\", fontsize=11];\n");
	sb_append(&sb, "  edge [fontname=\"Helvetica\", fontsize=10, color=\"#4a6fa5\"];\n");
	sb_append(&sb, "  app [id=\"application\", shape=box, style=rounded, label=\"application\"];\n");
	for (int ti = 0; ti < p->ntables; ti++)
		table_node(&sb, p, p->tables[ti], ti, physical);
	workflow_edges(&sb, p);
	sb_append(&sb, "}\n");
	return sb.data;
}

/* logical.dot: names and key markers */
char *
plan_logical_dot(Plan *p)
{
	return diagram(p, false);
}

/* physical.dot: with CQL types, buckets and sizes */
char *
plan_physical_dot(Plan *p)
{
	return diagram(p, true);
}

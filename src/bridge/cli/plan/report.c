/*-------------------------------------------------------------------------
 *
 * report.c
 *	  model.txt (the golden, deterministic description of the planned
 *	  tables) and report.md (sizes, checks, warnings and diagrams for a
 *	  human).
 *
 * Both are built only from the plan and numbers measured on the data,
 * never from timings or the environment, so the same data gives the same
 * bytes.  Markers: K partition key, B bucket (a partition-key column
 * cql_fdw computes, buckets.c), C↑/C↓ clustering ascending/descending,
 * S static.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/report.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/*
 * plan_column_marker
 *		The two-character marker of a column in model.txt: K, B (bucket),
 *		C↑/C↓, S or blank (diagram.c draws the same markers).
 */
const char *
plan_column_marker(const Column *c)
{
	switch (c->kind)
	{
		case COL_PARTITION:
			return c->bucket_spec ? "B " : "K ";
		case COL_CLUSTERING:
			return c->desc ? "C↓" : "C↑";
		case COL_STATIC:
			return "S ";
		case COL_REGULAR:
			break;
	}
	return "  ";
}

/*
 * widest
 *		The length of the longest column name (or CQL type, when type) of t,
 *		to align model.txt's columns.
 */
static int
widest(const Table *t, bool type)
{
	int			w = 0;

	for (int i = 0; i < t->ncols; i++)
	{
		int			l = (int) strlen(type ? t->cols[i].cql_type : t->cols[i].name);

		if (l > w)
			w = l;
	}
	return w;
}

/*
 * published_line
 *		The line of a query's published key check: not given, not comparable
 *		(why), or the key with the rows it loses.
 */
static void
published_line(StrBuf *sb, const Query *q, const char *indent)
{
	if (!q->published_key)
	{
		sb_appendf(sb, "%s%s: no published key given\n", indent, q->name);
		return;
	}
	if (q->pub_error)
		sb_appendf(sb, "%s%s: published %s %s: not comparable: %s\n", indent, q->name,
				   q->published_target ? q->published_target : "?", q->published_key, q->pub_error);
	else if (q->pub_lost > 0)
		sb_appendf(sb, "%s%s: published %s %s: LOSSY (MR5): %ld of %ld rows lost\n", indent, q->name,
				   q->published_target ? q->published_target : "?", q->published_key,
				   q->pub_lost, q->pub_rows);
	else
		sb_appendf(sb, "%s%s: published %s %s: unique on the data (0 of %ld rows lost)\n", indent, q->name,
				   q->published_target ? q->published_target : "?", q->published_key, q->pub_rows);
}

/*
 * fanout_lines
 *		The write amplification of t per source relation, as text lines or
 *		as rows of a Markdown table.
 */
static void
fanout_lines(StrBuf *sb, Plan *p, const Table *t, const char *indent, bool md)
{
	for (int i = 0; i < p->nfan; i++)
		if (strcmp(p->fan[i].table, t->name) == 0)
		{
			if (md)
				sb_appendf(sb, "| %s | %ld | %.2f |\n", p->fan[i].relation, p->fan[i].max_rows, p->fan[i].mean_rows);
			else
				sb_appendf(sb, "%s%s: max %ld, mean %.2f target rows per source row\n", indent,
						   p->fan[i].relation, p->fan[i].max_rows, p->fan[i].mean_rows);
		}
}

/* does any table have a bucket column (the legend then names B)? */
static bool
any_bucket(const Plan *p)
{
	for (int ti = 0; ti < p->ntables; ti++)
		if (p->tables[ti]->bucket && p->tables[ti]->bucket->applied)
			return true;
	return false;
}

/*
 * bucket_lines
 *		A wide table's bucket: what it was before, every candidate measured
 *		(widest partition, its values and bytes, partitions read by a
 *		typical query) and the choice.  Text lines for model.txt or a
 *		Markdown table for report.md.
 */
static void
bucket_lines(StrBuf *sb, Plan *p, const Table *t, bool md)
{
	const BucketChoice *bc = t->bucket;
	const char *state;

	if (bc->chosen < 0)
		state = "no bucket fits";
	else if (bc->applied)
		state = "applied";
	else
		state = "not applied (--no-bucket)";
	if (md)
	{
		sb_appendf(sb, "\nBucket (%s): %s.  Unbucketed, the widest partition holds %ld rows (Nv %.0f, %.0f bytes) in %ld partitions; "
				   "limits %ld values / %ld bytes with growth x%.2f.  Reads are partitions read by %s.\n\n",
				   state, plan_bucket_text(t), bc->wide_rows, bc->wide_nv, bc->wide_bytes, bc->wide_partitions,
				   p->opts->max_values, p->opts->max_bytes, p->opts->growth, bc->reads_what);
		if (bc->ncand > 0)
			sb_append(sb, "| bucket | rows/partition max | Nv max | bytes max | partitions | reads mean | reads max | fits |\n"
					  "|---|---:|---:|---:|---:|---:|---:|---|\n");
	}
	else
	{
		sb_appendf(sb, "  bucket: %s (%s)\n", plan_bucket_text(t), state);
		sb_appendf(sb, "    unbucketed: widest partition %ld rows, Nv %.0f, %.0f bytes; %ld partitions; growth x%.2f\n",
				   bc->wide_rows, bc->wide_nv, bc->wide_bytes, bc->wide_partitions, p->opts->growth);
		if (bc->ncand > 0)
			sb_appendf(sb, "    candidates (reads: partitions read by %s):\n", bc->reads_what);
	}
	for (int i = 0; i < bc->ncand; i++)
	{
		const BucketCandidate *c = &bc->cand[i];
		const char *verdict = i == bc->chosen ? "chosen" : c->fits ? "fits" : "too wide";

		if (md)
			sb_appendf(sb, "| %s | %ld | %.0f | %.0f | %ld | %.2f | %ld | %s |\n", c->spec, c->max_rows,
					   c->nv_max, c->bytes_max, c->partitions, c->reads_mean, c->reads_max,
					   i == bc->chosen ? "**chosen**" : verdict);
		else
			sb_appendf(sb, "      %-9s max %ld rows, Nv %.0f, %.0f bytes; %ld partitions; reads mean %.2f, max %ld: %s\n",
					   c->spec, c->max_rows, c->nv_max, c->bytes_max, c->partitions,
					   c->reads_mean, c->reads_max, verdict);
	}
	if (bc->why_none)
		sb_appendf(sb, md ? "\nNo bucket: %s.\n" : "    no bucket: %s\n", bc->why_none);
}

/*
 * column_note
 *		What the mapping of column c does to its values, with what was
 *		counted on the data (sub-millisecond digits), or NULL when the value
 *		is stored as it is.
 */
static char *
column_note(const Column *c)
{
	StrBuf		sb;

	if (!c->note || c->bucket_spec)
		return NULL;
	sb_init(&sb);
	sb_append(&sb, c->note);
	if (c->checks & CHECK_SUBMS)
		sb_appendf(&sb, "; %ld of %ld values have sub-millisecond digits", c->nsubms, c->nvalues);
	if (c->store == STORE_MILLISECONDS && c->nsubms > 0 &&
		(c->kind == COL_PARTITION || c->kind == COL_CLUSTERING))
		sb_append(&sb, " (a key column: values within one millisecond are one key; the MR5 check below counts the stored values)");
	if (c->kind == COL_CLUSTERING && strncmp(c->note, "enum", 4) == 0)
		sb_append(&sb, "; clusters by the bytes of the label, not by the enum's order: an ORDER BY of it is sorted by PostgreSQL "
				  "(a sort position would keep the order in Cassandra but make the foreign table column an integer, changing the application's queries)");
	return sb.data;
}

/*
 * merge_lines
 *		For a table that serves several queries: a line starting with head,
 *		the writes the merge saves per source relation, and the row filter
 *		of each query whose rows are fewer than the table's (merge.c), the
 *		lines after the first starting with indent2.  Nothing for a
 *		one-query table.
 */
static void
merge_lines(StrBuf *sb, const Table *t, const char *head, const char *indent2)
{
	char	   *text;
	int			saved = plan_writes_saved(t, &text);

	if (!text)
		return;
	sb_appendf(sb, "%sone table serves %d queries (%d table write%s saved per change, over the source relations):\n",
			   head, t->nqueries, saved, saved == 1 ? "" : "s");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		sb_appendf(sb, "%s%s\n", indent2, line);
	for (int k = 0; k < t->nqueries; k++)
		if (t->queries[k]->marker)
			sb_appendf(sb, "%s%s reads the rows where %s IS NOT NULL (the rows of its inner join)\n",
					   indent2, t->queries[k]->name, t->queries[k]->marker);
}

/*
 * notes_lines
 *		model.txt's "types:" lines of t: one per column whose values the
 *		mapping converts (typemap.c), nothing when there is none.
 */
static void
notes_lines(StrBuf *sb, const Table *t, const char *indent, const char *indent2)
{
	bool		any = false;

	for (int i = 0; i < t->ncols; i++)
	{
		char	   *n = column_note(&t->cols[i]);

		if (!n)
			continue;
		if (!any)
			sb_appendf(sb, "%stypes:\n", indent);
		any = true;
		sb_appendf(sb, "%s%s: %s\n", indent2, t->cols[i].name, n);
		free(n);
	}
}

/*
 * plan_serving_text
 *		How q is served, in one line: "<table> <key>", or for a composed
 *		answer "<drive> <key> JOIN <lookup> <key> (at most N lookups per
 *		call)" (allocated).
 */
char *
plan_serving_text(const Query *q)
{
	if (q->compose)
		return bridge_printf("%s %s JOIN %s %s (composed: at most %ld lookups per call)",
							 q->compose->drive->table->name, plan_key_text(q->compose->drive->table),
							 q->compose->lookup->table->name, plan_key_text(q->compose->lookup->table),
							 plan_compose_bound(q));
	return bridge_printf("%s %s%s", q->table->name, plan_key_text(q->table),
						 q->part_of ? bridge_printf("  (part of %s)", q->part_of->name) : "");
}

/*
 * composed_lines
 *		The composed answers of the plan (compose.c), for model.txt (md
 *		false) or report.md: per statement its two tables, the join, the
 *		conditions checked on the joined rows and the bound on the lookups
 *		one call makes.
 */
static void
composed_lines(StrBuf *sb, const Plan *p, bool md)
{
	bool		any = false;

	for (int i = 0; i < p->nqueries; i++)
	{
		const Query *q = &p->queries[i];
		const Compose *c = q->compose;

		if (!c)
			continue;
		if (!any)
			sb_append(sb, md ? "\n## Composed answers\n\nNo single query table serves these statements; each reads one partition of its drive table, "
					  "then looks every row's partner up by its full key in the lookup table (cql_fdw: a parameterized nested loop, one "
					  "single-partition read per row). Both parts are queries of the plan (verified on their own), and the statement is "
					  "verified against its source.\n\n| query | drive (partition read) | lookup (by key) | lookups per call |\n|---|---|---|---|\n"
					  : "\ncomposed answers (a partition read joined to lookups by key):\n");
		any = true;
		if (md)
			sb_appendf(sb, "| %s | %s `%s` | %s `%s` | at most %ld (%s) |\n", q->name,
					   c->drive->table->name, plan_key_text(c->drive->table),
					   c->lookup->table->name, plan_key_text(c->lookup->table), plan_compose_bound(q),
					   c->nlcond > 0 ? "the widest drive partition measured; conditions on the lookup's rows are checked after the join"
					   : "the widest drive partition measured, or the LIMIT");
		else
			sb_appendf(sb, "  %s: %s %s JOIN %s %s; at most %ld lookups per call\n", q->name,
					   c->drive->table->name, plan_key_text(c->drive->table),
					   c->lookup->table->name, plan_key_text(c->lookup->table), plan_compose_bound(q));
	}
}

/*
 * plan_model_txt
 *		The text of model.txt: deterministic (no timings, stable order),
 *		compared by the tests with the checked-in golden files.
 */
char *
plan_model_txt(Plan *p)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "# cqlbridge model: keyspace %s from schema %s\n", p->keyspace, p->cat.schema);
	if (any_bucket(p))
		sb_append(&sb, "# K partition key, B bucket (partition key computed by cql_fdw), C↑/C↓ clustering (ascending/descending), S static\n");
	else
		sb_append(&sb, "# K partition key, C↑/C↓ clustering (ascending/descending), S static\n");
	sb_appendf(&sb, "# replication factor %d, limits %ld values / %ld bytes per partition\n",
			   p->opts->replication_factor, p->opts->max_values, p->opts->max_bytes);
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];
		int			wn = widest(t, false);
		int			wt = widest(t, true);

		sb_appendf(&sb, "\ntable %s.%s\n", p->keyspace, t->name);
		sb_appendf(&sb, "  entity: %s\n", t->entity);
		sb_append(&sb, "  serves:");
		for (int q = 0; q < t->nqueries; q++)
			sb_appendf(&sb, " %s", t->queries[q]->name);
		sb_append(&sb, "\n");
		merge_lines(&sb, t, "  merged: ", "    ");
		sb_appendf(&sb, "  key: %s\n", plan_key_text(t));
		for (int i = 0; i < t->ncols; i++)
		{
			Column	   *c = &t->cols[i];

			sb_appendf(&sb, "  %s %-*s %-*s <- %s", plan_column_marker(c), wn, c->name, wt, c->cql_type, c->source);
			if (c->rule)
				sb_appendf(&sb, "  [%s]", c->rule);
			sb_append(&sb, "\n");
		}
		notes_lines(&sb, t, "  ", "    ");
		sb_append(&sb, "  MR5 check on the data:\n");
		sb_appendf(&sb, "    derived %s: %s (%ld distinct keys, %ld rows)\n", plan_key_text(t),
				   t->key_distinct == t->rows ? "unique" : "LOSSY", t->key_distinct, t->rows);
		for (int q = 0; q < t->nqueries; q++)
			published_line(&sb, t->queries[q], "    ");
		sb_appendf(&sb, "  rows %ld, partitions %ld, rows per partition max %ld, p99 %ld, mean %.2f\n",
				   t->rows, t->partitions, t->max_rows, t->p99_rows, t->mean_rows);
		sb_appendf(&sb, "  values per partition (Nv) max %.0f; bytes per partition max %.0f, mean %.0f; total %.0f (x RF %d)\n",
				   t->nv_max, t->bytes_max, t->bytes_mean, t->bytes_total, p->opts->replication_factor);
		sb_append(&sb, "  write amplification:\n");
		fanout_lines(&sb, p, t, "    ", false);
		if (t->nwarn > 0)
		{
			sb_append(&sb, "  warnings:\n");
			for (int w = 0; w < t->nwarn; w++)
				sb_appendf(&sb, "    - %s\n", t->warnings[w]);
		}
		if (t->bucket)
			bucket_lines(&sb, p, t, false);
	}
	composed_lines(&sb, p, false);
	if (p->nleft > 0)
	{
		sb_append(&sb, "\nleft out (no table serves them):\n");
		for (int i = 0; i < p->nleft; i++)
			sb_appendf(&sb, "  %s [%s]: %s%s%s\n", p->left[i].name, p->left[i].rule, p->left[i].reason,
					   p->left[i].hint ? "\n    hint: " : "", p->left[i].hint ? p->left[i].hint : "");
	}
	plan_write_profile_text(&sb, p, false);
	if (p->nwarn > 0)
	{
		sb_append(&sb, "\nwarnings:\n");
		for (int w = 0; w < p->nwarn; w++)
			sb_appendf(&sb, "  - %s\n", p->warnings[w]);
	}
	return sb.data;
}

/*
 * md_escape
 *		s with every '|' escaped, for a Markdown table cell (allocated).
 */
static char *
md_escape(const char *s)
{
	StrBuf		sb;

	sb_init(&sb);
	for (; *s; s++)
	{
		if (*s == '|')
			sb_append(&sb, "\\|");
		else
		{
			char		c[2] = {*s, '\0'};

			sb_append(&sb, c);
		}
	}
	return sb.data;
}

/*
 * plan_report_md
 *		The text of report.md: sizes of every table against the limits,
 *		buckets, write amplification, warnings and a diagram per query.
 */
char *
plan_report_md(Plan *p)
{
	StrBuf		sb;
	long		total_rows = 0;
	double		total_bytes = 0;

	sb_init(&sb);
	sb_appendf(&sb, "# cqlbridge plan: keyspace `%s` from schema `%s`\n\n", p->keyspace, p->cat.schema);
	sb_appendf(&sb, "Replication factor %d; partition limits %ld values, %ld bytes.  "
			   "Sizes use the documented formulas Nv = Nr·(Nc − Npk − Ns) + Ns and "
			   "St = Σpk + Σstatic + Nr·(Σregular + Σclustering) + 8·Nv with value sizes measured on the data.\n\n",
			   p->opts->replication_factor, p->opts->max_values, p->opts->max_bytes);

	sb_append(&sb, "## Queries\n\n| query | table | key | single partition | published key (MR5 on the data) |\n|---|---|---|---|---|\n");
	for (int qi = 0; qi < p->nqueries; qi++)
	{
		Query	   *q = &p->queries[qi];
		char	   *pub;

		if (!q->published_key)
			pub = bridge_strdup("–");
		else if (q->pub_error)
			pub = bridge_printf("%s: %s", q->published_key, q->pub_error);
		else if (q->pub_lost > 0)
			pub = bridge_printf("%s: **LOSSY**, %ld of %ld rows lost", q->published_key, q->pub_lost, q->pub_rows);
		else
			pub = bridge_printf("%s: unique (%ld rows)", q->published_key, q->pub_rows);
		if (q->compose)
			sb_appendf(&sb, "| %s | %s JOIN %s (composed) | %s; lookups by %s | no: 1 partition and at most %ld lookups | %s |\n",
					   q->name, q->compose->drive->table->name, q->compose->lookup->table->name,
					   plan_key_text(q->compose->drive->table), plan_key_text(q->compose->lookup->table),
					   plan_compose_bound(q), md_escape(pub));
		else
			sb_appendf(&sb, "| %s | %s | %s | %s | %s |\n", q->name, q->table->name,
					   plan_key_text(q->table),
					   q->table->bucket && q->table->bucket->applied
					   ? bridge_printf("no: buckets %s", plan_bucket_text(q->table)) : "yes",
					   md_escape(pub));
	}
	composed_lines(&sb, p, true);

	if (p->nleft > 0)
	{
		sb_appendf(&sb, "\n## Statements left out\n\n%d of the workload's %d statements are not served by this plan: no query table serves them. "
				   "The plan covers the others (exit status 3; `--strict` refuses the plan instead).\n\n"
				   "| query | line | rule | reason | what would serve it |\n|---|---:|---|---|---|\n",
				   p->nleft, p->nleft + plan_nworkload(p));
		for (int i = 0; i < p->nleft; i++)
			sb_appendf(&sb, "| %s | %d | %s | %s | %s |\n", md_escape(p->left[i].name), p->left[i].line,
					   p->left[i].rule, md_escape(p->left[i].reason),
					   p->left[i].hint ? md_escape(p->left[i].hint) : "");
	}
	sb_append(&sb, "\n## Tables\n\n| table | rows | partitions | rows/partition max | p99 | mean | Nv max | bytes/partition max | total bytes (×RF) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];

		sb_appendf(&sb, "| %s | %ld | %ld | %ld | %ld | %.2f | %.0f | %.0f | %.0f |\n", t->name, t->rows,
				   t->partitions, t->max_rows, t->p99_rows, t->mean_rows, t->nv_max, t->bytes_max, t->bytes_total);
		total_rows += t->rows;
		total_bytes += t->bytes_total;
	}
	sb_appendf(&sb, "| **total** | %ld | | | | | | | %.0f |\n", total_rows, total_bytes);

	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];
		int			wn = 0;

		for (int i = 0; i < t->ncols; i++)
			if ((int) strlen(t->cols[i].name) > wn)
				wn = (int) strlen(t->cols[i].name);
		sb_appendf(&sb, "\n### %s\n\nServes", t->name);
		for (int q = 0; q < t->nqueries; q++)
			sb_appendf(&sb, " %s", t->queries[q]->name);
		sb_appendf(&sb, "; entity %s.\n\n", t->entity);
		merge_lines(&sb, t, "Merged: ", "- ");
		sb_append(&sb, t->nqueries > 1 ? "\n```\n" : "```\n");
		/* a Chebotko-style box: name, type, marker; widths in characters */
		{
			int			wt = widest(t, true);
			int			inner;

			if ((int) strlen(t->name) + 4 > wn + wt + 6)
				wn = (int) strlen(t->name) + 4 - wt - 6;
			inner = wn + wt + 6;	/* " name type MK " */
			sb_appendf(&sb, "+-- %s ", t->name);
			for (int i = (int) strlen(t->name) + 4; i < inner; i++)
				sb_append(&sb, "-");
			sb_append(&sb, "+\n");
			for (int i = 0; i < t->ncols; i++)
				sb_appendf(&sb, "| %-*s %-*s %s |\n", wn, t->cols[i].name, wt, t->cols[i].cql_type, plan_column_marker(&t->cols[i]));
			sb_append(&sb, "+");
			for (int i = 0; i < inner; i++)
				sb_append(&sb, "-");
			sb_append(&sb, "+\n");
		}
		sb_append(&sb, "```\n\n| column | type | role | source |\n|---|---|---|---|\n");
		for (int i = 0; i < t->ncols; i++)
		{
			Column	   *c = &t->cols[i];

			sb_appendf(&sb, "| %s | %s | %s | %s |\n", c->name, md_escape(c->cql_type),
					   c->rule ? md_escape(c->rule) : "regular", md_escape(c->source));
		}
		{
			StrBuf		notes;

			sb_init(&notes);
			notes_lines(&notes, t, "", "- ");
			if (notes.len > 0)
				sb_appendf(&sb, "\nType mappings (what is stored):\n\n%s", notes.data + strlen("types:\n"));
			sb_free(&notes);
		}
		sb_append(&sb, "\nMR5 on the data:\n\n");
		sb_appendf(&sb, "- derived key %s: %s (%ld distinct keys for %ld rows)\n", plan_key_text(t),
				   t->key_distinct == t->rows ? "unique" : "**lossy**", t->key_distinct, t->rows);
		for (int q = 0; q < t->nqueries; q++)
			published_line(&sb, t->queries[q], "- ");
		sb_append(&sb, "\nWrite amplification (target rows written per changed source row):\n\n| source relation | max | mean |\n|---|---:|---:|\n");
		fanout_lines(&sb, p, t, "", true);
		if (t->bucket)
			bucket_lines(&sb, p, t, true);
		if (t->nwarn > 0)
		{
			sb_append(&sb, "\nWarnings:\n\n");
			for (int w = 0; w < t->nwarn; w++)
				sb_appendf(&sb, "- %s\n", t->warnings[w]);
		}
	}

	sb_append(&sb, "\n## Source relations\n\n| relation | rows (reltuples) | feeds |\n|---|---:|---|\n");
	for (int i = 0; i < p->cat.nrels; i++)
	{
		CatRel	   *r = &p->cat.rels[i];
		StrBuf		feeds;
		char	   *full = bridge_printf("%s.%s", p->cat.schema, r->name);

		sb_init(&feeds);
		for (int f = 0; f < p->nfan; f++)
			if (strcmp(p->fan[f].relation, full) == 0)
				sb_appendf(&feeds, "%s%s (≤%ld)", feeds.len ? ", " : "", p->fan[f].table, p->fan[f].max_rows);
		sb_appendf(&sb, "| %s | %.0f | %s |\n", r->name, r->reltuples < 0 ? 0 : r->reltuples,
				   feeds.len ? feeds.data : "–");
	}
	plan_write_profile_text(&sb, p, true);
	if (p->nwarn > 0)
	{
		sb_append(&sb, "\n## Analysis warnings\n\n");
		for (int w = 0; w < p->nwarn; w++)
			sb_appendf(&sb, "- %s\n", p->warnings[w]);
	}
	return sb.data;
}

/*
 * plan_json
 *		--json FILE of plan: the queries and their tables, every table's
 *		key, sizes, warnings and (with a write profile) writes per second,
 *		for tools that read the plan rather than model.txt.
 */
char *
plan_json(const Plan *p)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "{\n  \"command\": \"plan\",\n  \"keyspace\": ");
	bridge_json_string(&sb, p->keyspace);
	sb_append(&sb, ",\n  \"schema\": ");
	bridge_json_string(&sb, p->cat.schema);
	sb_appendf(&sb, ",\n  \"replication_factor\": %d,\n  \"queries\": [", p->opts->replication_factor);
	for (int i = 0; i < p->nqueries; i++)
	{
		const Query *q = &p->queries[i];

		sb_append(&sb, i ? ",\n    {\"query\": " : "\n    {\"query\": ");
		bridge_json_string(&sb, q->name);
		sb_append(&sb, ", \"table\": ");
		bridge_json_string(&sb, q->table->name);
		if (q->compose)
		{
			sb_append(&sb, ", \"composed\": {\"drive\": ");
			bridge_json_string(&sb, q->compose->drive->table->name);
			sb_append(&sb, ", \"lookup\": ");
			bridge_json_string(&sb, q->compose->lookup->table->name);
			sb_appendf(&sb, ", \"lookups_max\": %ld}", plan_compose_bound(q));
		}
		if (q->part_of)
		{
			sb_append(&sb, ", \"part_of\": ");
			bridge_json_string(&sb, q->part_of->name);
		}
		sb_appendf(&sb, ", \"published_key_rows_lost\": %ld", q->pub_lost);
		if (q->marker)
		{
			sb_append(&sb, ", \"rows_where_not_null\": ");
			bridge_json_string(&sb, q->marker);
		}
		sb_append(&sb, "}");
	}
	sb_append(&sb, "\n  ],\n  \"left_out\": [");
	for (int i = 0; i < p->nleft; i++)
	{
		sb_append(&sb, i ? ",\n    {\"query\": " : "\n    {\"query\": ");
		bridge_json_string(&sb, p->left[i].name);
		sb_appendf(&sb, ", \"line\": %d, \"rule\": ", p->left[i].line);
		bridge_json_string(&sb, p->left[i].rule);
		sb_append(&sb, ", \"reason\": ");
		bridge_json_string(&sb, p->left[i].reason);
		sb_append(&sb, ", \"hint\": ");
		if (p->left[i].hint)
			bridge_json_string(&sb, p->left[i].hint);
		else
			sb_append(&sb, "null");
		sb_append(&sb, "}");
	}
	sb_append(&sb, p->nleft ? "\n  ],\n  \"tables\": [" : "],\n  \"tables\": [");
	for (int i = 0; i < p->ntables; i++)
	{
		const Table *t = p->tables[i];
		double		w = plan_table_writes(p, t);

		sb_append(&sb, i ? ",\n    {\"table\": " : "\n    {\"table\": ");
		bridge_json_string(&sb, t->name);
		sb_append(&sb, ", \"key\": ");
		bridge_json_string(&sb, plan_key_text(t));
		sb_appendf(&sb, ", \"rows\": %ld, \"partitions\": %ld, \"rows_per_partition_max\": %ld, "
				   "\"values_per_partition_max\": %.0f, \"bytes_per_partition_max\": %.0f, \"bytes_total\": %.0f",
				   t->rows, t->partitions, t->max_rows, t->nv_max, t->bytes_max, t->bytes_total);
		if (w >= 0)
			sb_appendf(&sb, ", \"writes_per_second\": %.3f", w);
		sb_append(&sb, ", \"serves\": [");
		for (int k = 0; k < t->nqueries; k++)
		{
			if (k)
				sb_append(&sb, ", ");
			bridge_json_string(&sb, t->queries[k]->name);
		}
		{
			char	   *text;

			sb_appendf(&sb, "], \"writes_saved_per_change\": %d", plan_writes_saved(t, &text));
			free(text);
		}
		sb_append(&sb, ", \"warnings\": [");
		for (int k = 0; k < t->nwarn; k++)
		{
			if (k)
				sb_append(&sb, ", ");
			bridge_json_string(&sb, t->warnings[k]);
		}
		sb_append(&sb, "]}");
	}
	sb_append(&sb, "\n  ]\n}\n");
	return sb.data;
}

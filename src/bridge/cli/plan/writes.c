/*-------------------------------------------------------------------------
 *
 * writes.c
 *	  The write profile of a workload: the rows the application writes per
 *	  second to each source relation ("-- writes: ROWS/S RELATION" lines
 *	  of the workload's header, drafted by "cqlbridge workload" from
 *	  pg_stat_statements), turned into the Cassandra writes per second each
 *	  query table will receive once sync keeps it up to date:
 *
 *		writes/s of a table = sum over its source relations of
 *							  rows/s of the relation x mean target rows per
 *							  source row (the write amplification measured
 *							  on the data, sizing.c)
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/writes.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/*
 * plan_read_write_profile
 *		The "-- writes: RATE RELATION" lines of the workload's header (path
 *		for messages).  A malformed one is fatal: a profile silently read
 *		wrong would understate the load.
 */
void
plan_read_write_profile(Plan *p, const char *path, const char *header)
{
	const char *line = header;

	while (line && *line)
	{
		const char *nl = strchr(line, '\n');
		size_t		len = nl ? (size_t) (nl - line) : strlen(line);
		char	   *l = bridge_trim_copy(line, len);

		line = nl ? nl + 1 : NULL;
		if (strncmp(l, "-- writes:", 10) == 0)
		{
			char	   *end;
			double		rate;
			char	   *rel;

			rate = strtod(l + 10, &end);
			rel = bridge_trim_copy(end, strlen(end));
			if (end == l + 10 || !isspace((unsigned char) *end) || !isfinite(rate) || rate < 0 ||
				rel[0] == '\0' || strchr(rel, '.') == NULL)
				bridge_fatal_hint("Write it as \"-- writes: ROWS_PER_SECOND SCHEMA.TABLE\", e.g. \"-- writes: 12.5 hotel_rel.reservation\".",
								  "%s: bad write profile line \"%s\"", path, l);
			for (int i = 0; i < p->nprofile; i++)
				if (strcmp(p->prof_rel[i], rel) == 0)
					bridge_fatal_hint("Give one line per relation.",
									  "%s: relation %s appears twice in the write profile", path, rel);
			p->prof_rel = bridge_realloc(p->prof_rel, sizeof(char *) * (p->nprofile + 1));
			p->prof_rate = bridge_realloc(p->prof_rate, sizeof(double) * (p->nprofile + 1));
			if (!p->prof_rel || !p->prof_rate)
				bridge_fatal("out of memory");
			p->prof_rel[p->nprofile] = rel;
			p->prof_rate[p->nprofile] = rate;
			p->nprofile++;
		}
		free(l);
	}
}

/* the profile's rate of a relation ("schema.table"), -1 when absent */
static double
profile_rate(const Plan *p, const char *rel)
{
	for (int i = 0; i < p->nprofile; i++)
		if (strcmp(p->prof_rel[i], rel) == 0)
			return p->prof_rate[i];
	return -1;
}

/*
 * table_writes
 *		The Cassandra writes per second of table t under the profile, and
 *		(when why is given) the terms: "relation RATE x MEAN".
 */
static double
table_writes(const Plan *p, const Table *t, StrBuf *why)
{
	double		sum = 0;

	for (int f = 0; f < p->nfan; f++)
	{
		double		r;

		if (strcmp(p->fan[f].table, t->name) != 0)
			continue;
		r = profile_rate(p, p->fan[f].relation);
		if (r < 0)
			continue;
		sum += r * p->fan[f].mean_rows;
		if (why)
			sb_appendf(why, "%s%s %.3f/s x %.2f", why->len ? ", " : "",
					   p->fan[f].relation, r, p->fan[f].mean_rows);
	}
	return sum;
}

/*
 * plan_write_profile_text
 *		The write profile section of model.txt (md false) or report.md:
 *		per query table its Cassandra writes per second and their terms,
 *		then the profile's relations that feed no table.  Nothing without
 *		a profile.
 */
void
plan_write_profile_text(StrBuf *sb, const Plan *p, bool md)
{
	if (p->nprofile == 0)
		return;
	if (md)
		sb_append(sb, "\n## Write profile\n\nCassandra writes per second each query table receives under sync: the source rows written per second (the workload's `-- writes:` lines) times the mean target rows per source row.\n\n"
				  "| table | writes/s | from |\n|---|---:|---|\n");
	else
		sb_append(sb, "\nwrite profile (Cassandra writes/s per table = source rows written/s x mean target rows per source row):\n");
	for (int ti = 0; ti < p->ntables; ti++)
	{
		const Table *t = p->tables[ti];
		StrBuf		why;
		double		w;

		sb_init(&why);
		w = table_writes(p, t, &why);
		if (md)
			sb_appendf(sb, "| %s | %.3f | %s |\n", t->name, w, why.len ? why.data : "no write of its source relations");
		else
			sb_appendf(sb, "  %s.%s: %.3f writes/s%s%s%s\n", p->keyspace, t->name, w,
					   why.len ? " (" : "", why.len ? why.data : "", why.len ? ")" : "");
		sb_free(&why);
	}
	for (int i = 0; i < p->nprofile; i++)
	{
		bool		feeds = false;

		for (int f = 0; f < p->nfan; f++)
			if (strcmp(p->fan[f].relation, p->prof_rel[i]) == 0)
				feeds = true;
		if (!feeds)
			sb_appendf(sb, md ? "\n%s (%.3f rows/s written) feeds no query table.\n"
					   : "  %s (%.3f rows/s written) feeds no query table\n",
					   p->prof_rel[i], p->prof_rate[i]);
	}
}

/*
 * plan_table_writes
 *		Cassandra writes per second of t under the profile; -1 without one.
 */
double
plan_table_writes(const Plan *p, const Table *t)
{
	if (p->nprofile == 0)
		return -1;
	return table_writes(p, t, NULL);
}


/*-------------------------------------------------------------------------
 *
 * partition.c
 *	  The partition-size formulas of the Cassandra documentation
 *	  ("Evaluating and refining"), on the value sizes measured by
 *	  sizing.c, and the key columns of a shaped query: what both the
 *	  measurements (sizing.c) and the bucket choice (buckets.c) use.
 *
 *	  Nv = Nr * (Nc - Npk - Ns) + Ns
 *	  St = sum(partition key sizes) + sum(static sizes)
 *		   + Nr * (sum(regular sizes) + sum(clustering sizes)) + Nv * 8
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/partition.c
 *
 *-------------------------------------------------------------------------
 */
#include "plan/plan.h"

/*
 * plan_key_columns
 *		"v.a, v.b": the partition-key columns (and the clustering columns)
 *		of t, each prefixed with 'prefix' ("v.").
 */
char *
plan_key_columns(const Table *t, const char *prefix, bool with_clustering)
{
	StrBuf		sb;
	int			n = 0;

	sb_init(&sb);
	for (int i = 0; i < t->ncols; i++)
		if (t->cols[i].kind == COL_PARTITION ||
			(with_clustering && t->cols[i].kind == COL_CLUSTERING))
			sb_appendf(&sb, "%s%s%s", n++ ? ", " : "", prefix, plan_qi(t->cols[i].name));
	return sb.data;
}

/*
 * plan_partition_bytes
 *		St of a partition of nr rows, by the documented formula with the
 *		value sizes measured on the data.
 */
double
plan_partition_bytes(const Table *t, double nr)
{
	int			nc = t->ncols;
	int			npk = t->npk + t->nck;
	int			ns = 0;
	double		pk = 0,
				st = 0,
				reg = 0,
				ck = 0;
	double		nv;

	for (int i = 0; i < t->ncols; i++)
	{
		const Column *c = &t->cols[i];

		switch (c->kind)
		{
			case COL_PARTITION:
				pk += c->avg_size;
				break;
			case COL_CLUSTERING:
				ck += c->avg_size;
				break;
			case COL_STATIC:
				st += c->avg_size;
				ns++;
				break;
			case COL_REGULAR:
				reg += c->avg_size;
				break;
		}
	}
	nv = nr * (nc - npk - ns) + ns;
	return pk + st + nr * (reg + ck) + nv * 8;
}

/*
 * plan_partition_values
 *		Nv of a partition of nr rows.
 */
double
plan_partition_values(const Table *t, double nr)
{
	int			ns = 0;

	for (int i = 0; i < t->ncols; i++)
		if (t->cols[i].kind == COL_STATIC)
			ns++;
	return nr * (t->ncols - (t->npk + t->nck) - ns) + ns;
}

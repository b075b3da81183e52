/*-------------------------------------------------------------------------
 *
 * buckets.c
 *	  A bucket for a table whose widest partition passes the limits: the
 *	  candidates measured on the data, the choice, and the bucket column
 *	  added to the partition key.
 *
 * The documentation's sizing rule: a partition should stay under about
 * 100,000 values and 100 MB; one that would grow past that gets a bucket
 * column in its partition key.  Two kinds, as cql_fdw reads them
 * (docs/cql_fdw.md, "Bucket columns"):
 *
 *	  time	when the first clustering column is a date/timestamp and every
 *			query of the table bounds it on both sides: the coarsest of
 *			hour ... year (and multiples) whose widest bucketed partition,
 *			times --growth, fits the limits.  Coarse buckets mean fewer
 *			partitions per range query, fine ones smaller partitions.
 *	  hash	otherwise: cql_hash_bucket(N, clustering columns), the smallest
 *			N (a power of two) that fits; a query binding every source by
 *			= reads one bucket, the others read all N.
 *
 * Every candidate is measured on the table's shaped query with the
 * extension's own cql_time_bucket/cql_hash_bucket, so the numbers are of
 * the partitions the load will write.  The cost of a candidate is the
 * number of partitions a query reads: for time buckets, counted over
 * ranges of the width verify samples (7 days) starting at up to 100
 * values of the data, in verify's pseudo-random order.
 *
 * The chosen bucket is applied (--no-bucket keeps the table wide, with
 * the warning): a column <source>_bucket (time) or bucket (hash) at the
 * end of the partition key, computed in the source view, declared to
 * cql_fdw with the column options bucket and bucket_of, so the
 * application's SQL never names it.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/buckets.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* range width of a typical range query (verify's samples: lower + 7 days) */
#define RANGE_DAYS 7
/* lower bounds of sampled ranges */
#define RANGE_SAMPLES 100

/* a time bucket: the cql_fdw spec and its step as a PostgreSQL interval */
typedef struct TimeUnit
{
	const char *spec;
	const char *step;
	bool		timestamp_only; /* below a day: not for date columns */
} TimeUnit;

static const TimeUnit time_units[] = {
	{"hour", "1 hour", true},
	{"2 hours", "2 hours", true},
	{"3 hours", "3 hours", true},
	{"6 hours", "6 hours", true},
	{"12 hours", "12 hours", true},
	{"day", "1 day", false},
	{"2 days", "2 days", false},
	{"week", "7 days", false},
	{"2 weeks", "14 days", false},
	{"month", "1 month", false},
	{"3 months", "3 months", false},
	{"6 months", "6 months", false},
	{"year", "1 year", false},
};

#define NTIME_UNITS ((int) (sizeof(time_units) / sizeof(time_units[0])))

/*
 * plan_ext_schema
 *		The schema of the cql_fdw extension, whose cql_time_bucket and
 *		cql_hash_bucket the source views call (qualified, so the views do
 *		not depend on a search_path).  Fatal when the extension is older
 *		than the bucket functions.
 */
const char *
plan_ext_schema(Plan *p)
{
	PGresult   *res;

	if (p->ext_schema)
		return p->ext_schema;
	res = bridge_exec(p->conn, "finding the cql_fdw extension",
					  "SELECT n.nspname, "
					  "  EXISTS (SELECT 1 FROM pg_catalog.pg_proc f "
					  "          WHERE f.pronamespace = n.oid AND f.proname = 'cql_hash_bucket') "
					  "FROM pg_catalog.pg_extension e "
					  "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
					  "WHERE e.extname = 'cql_fdw'", 0, NULL);
	if (PQntuples(res) != 1)
		bridge_fatal_hint("CREATE EXTENSION cql_fdw in the database.",
						  "the cql_fdw extension is not installed");
	if (strcmp(PQgetvalue(res, 0, 1), "t") != 0)
		bridge_fatal_hint("Run ALTER EXTENSION cql_fdw UPDATE, or plan with --no-bucket.",
						  "the installed cql_fdw has no bucket functions (version 0.4 or later is needed to bucket a wide table)");
	p->ext_schema = plan_qi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return p->ext_schema;
}

/* does a partition of 'rows' rows (times the growth) fit the limits? */
static bool
fits(Plan *p, const Table *t, long rows, double *nv, double *bytes)
{
	double		r = (double) rows * p->opts->growth;

	/* the bucket column adds one partition-key value of about 8 bytes */
	*nv = plan_partition_values(t, (double) rows);
	*bytes = plan_partition_bytes(t, (double) rows) + 8;
	return plan_partition_values(t, r) <= p->opts->max_values &&
		plan_partition_bytes(t, r) + 8 <= p->opts->max_bytes;
}

/*
 * add_candidate
 *		Add a bucket candidate (a cql_fdw bucket spec) to be measured.
 */
static void
add_candidate(BucketChoice *bc, const char *spec)
{
	BucketCandidate *c;

	bc->cand = bridge_realloc(bc->cand, sizeof(BucketCandidate) * (bc->ncand + 1));
	if (!bc->cand)
		bridge_fatal("out of memory");
	c = &bc->cand[bc->ncand++];
	memset(c, 0, sizeof(*c));
	c->spec = bridge_strdup(spec);
}

/*
 * time_source
 *		The first clustering column when it can be a time bucket's source:
 *		a date or timestamp that every query of the table bounds on both
 *		sides (cql_fdw reads the buckets a range covers, and refuses an
 *		open range rather than reading every bucket).  -1 and *why
 *		otherwise.
 */
static int
time_source(const Table *t, char **why)
{
	int			ci = t->npk;
	const Column *c;

	if (t->nck == 0)
	{
		*why = bridge_strdup("the table has no clustering column");
		return -1;
	}
	c = &t->cols[ci];
	if (strcmp(c->cql_type, "date") != 0 && strcmp(c->cql_type, "timestamp") != 0)
	{
		*why = bridge_printf("the first clustering column %s is no date or timestamp", c->name);
		return -1;
	}
	for (int qi = 0; qi < t->nqueries; qi++)
	{
		const Query *q = t->queries[qi];
		bool		lower = false,
					upper = false;

		for (int k = 0; k < q->nparams; k++)
			if (q->puse[k].col == ci)
			{
				if (q->puse[k].op[0] == '>')
					lower = true;
				else if (q->puse[k].op[0] == '<')
					upper = true;
				else
					lower = upper = true;
			}
		if (!lower || !upper)
		{
			*why = bridge_printf("%s does not bound %s on both sides, so it would read every time bucket",
								 q->name, c->name);
			return -1;
		}
	}
	return ci;
}

/* "k1, k2": the aliases of the partition-key columns in the CTE f */
static char *
f_keys(const Table *t, const char *prefix)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int i = 0; i < t->npk; i++)
		sb_appendf(&sb, "%s%sk%d", i ? ", " : "", prefix, i + 1);
	return sb.data;
}

/* "1, 2, ..., n": GROUP BY the first n output columns */
static char *
positions(int n)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int i = 1; i <= n; i++)
		sb_appendf(&sb, "%s%d", i > 1 ? ", " : "", i);
	return sb.data;
}

/* "v.a AS k1, v.b AS k2" */
static char *
f_key_defs(const Table *t)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int i = 0; i < t->npk; i++)
		sb_appendf(&sb, "%sv.%s AS k%d", i ? ", " : "", plan_qi(t->cols[i].name), i + 1);
	return sb.data;
}

/*
 * measure_time
 *		Every time unit on the data: the widest partition and the number of
 *		partitions, from one pass that counts rows per partition and finest
 *		bucket (hours, or days for a date), which every coarser bucket
 *		contains; then the partitions a 7-day range reads.
 */
static void
measure_time(Plan *p, Table *t, BucketChoice *bc, int src)
{
	const Column *c = &t->cols[src];
	bool		is_date = strcmp(c->cql_type, "date") == 0;
	const char *ext = plan_ext_schema(p);
	char	   *ref = bridge_printf("(v.%s)::timestamp", plan_qi(c->name));
	StrBuf		specs;
	StrBuf		steps;
	PGresult   *res;
	int			first = -1;

	sb_init(&specs);
	sb_init(&steps);
	for (int u = 0; u < NTIME_UNITS; u++)
	{
		if (is_date && time_units[u].timestamp_only)
			continue;
		if (first < 0)
			first = u;
		add_candidate(bc, time_units[u].spec);
		sb_appendf(&specs, "%s%s", specs.len ? "," : "", time_units[u].spec);
		sb_appendf(&steps, "%s%s", steps.len ? "," : "", time_units[u].step);
	}
	res = bridge_exec(p->conn, bridge_printf("measuring time buckets of %s", t->name),
					  bridge_printf("WITH f AS MATERIALIZED ("
									"SELECT %s, %s.cql_time_bucket('%s', %s) AS b, count(*) AS c "
									"FROM (%s) v GROUP BY %s) "
									"SELECT (SELECT coalesce(max(x.c), 0) FROM (SELECT sum(f.c) AS c FROM f "
									"        GROUP BY %s, %s.cql_time_bucket(s.spec, f.b)) x), "
									"       (SELECT count(*) FROM (SELECT 1 FROM f "
									"        GROUP BY %s, %s.cql_time_bucket(s.spec, f.b)) y) "
									"FROM unnest($1::text[]) WITH ORDINALITY s(spec, i) ORDER BY s.i",
									f_key_defs(t), ext, time_units[first].spec, ref,
									t->shaped, positions(t->npk + 1),
									f_keys(t, "f."), ext, f_keys(t, "f."), ext),
					  1, (const char *[]) {bridge_printf("{%s}", specs.data)});
	for (int i = 0; i < bc->ncand; i++)
	{
		bc->cand[i].max_rows = plan_lval(res, i, 0);
		bc->cand[i].partitions = plan_lval(res, i, 1);
	}
	PQclear(res);

	/*
	 * Partitions read by ranges [lo, lo + 7 days): the bucket starts from
	 * the bucket of lo up to the range's end, for up to 100 lower bounds.
	 */
	res = bridge_exec(p->conn, bridge_printf("measuring the partitions a range reads from %s", t->name),
					  bridge_printf("WITH l AS MATERIALIZED ("
									"SELECT d.lo FROM (SELECT DISTINCT %s AS lo FROM (%s) v) d "
									"ORDER BY md5(d.lo::text) LIMIT %d) "
									"SELECT coalesce(round(avg(n.n), 2), 0), coalesce(max(n.n), 0) "
									"FROM unnest($1::text[], $2::interval[]) WITH ORDINALITY s(spec, step, i) "
									"CROSS JOIN l "
									"CROSS JOIN LATERAL (SELECT count(*) AS n FROM generate_series("
									"  %s.cql_time_bucket(s.spec, l.lo), "
									"  l.lo + interval '%d days' - interval '1 microsecond', s.step) g) n "
									"GROUP BY s.i ORDER BY s.i",
									ref, t->shaped, RANGE_SAMPLES, ext, RANGE_DAYS),
					  2, (const char *[]) {bridge_printf("{%s}", specs.data),
					  bridge_printf("{%s}", steps.data)});
	for (int i = 0; i < bc->ncand && i < PQntuples(res); i++)
	{
		bc->cand[i].reads_mean = atof(PQgetvalue(res, i, 0));
		bc->cand[i].reads_max = plan_lval(res, i, 1);
	}
	PQclear(res);
	bc->reads_what = bridge_printf("a %d-day range of %s", RANGE_DAYS, c->name);
}

/* is a clustering column a hash bucket's source for cql_fdw? */
static bool
hashable(const Column *c)
{
	static const char *const types[] = {"smallint", "int", "bigint", "text", "varchar", "uuid"};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(c->cql_type, types[i]) == 0)
			return true;
	return false;
}

/*
 * measure_hash
 *		Hash buckets of the hashable clustering columns: from the smallest
 *		power of two that an even spread would need, doubling until one
 *		fits (at most 65536); the one below is measured too, to show why it
 *		was not taken.  Queries binding every source by = read one bucket,
 *		the others all N.
 */
static void
measure_hash(Plan *p, Table *t, BucketChoice *bc, int *src, int nsrc)
{
	const char *ext = plan_ext_schema(p);
	StrBuf		arr;
	StrBuf		names;
	long		n;
	double		per_row_nv = plan_partition_values(t, 2) - plan_partition_values(t, 1);
	double		per_row_bytes = plan_partition_bytes(t, 2) - plan_partition_bytes(t, 1);
	double		need = 1;
	int			bound_all = 0;

	sb_init(&arr);
	sb_init(&names);
	for (int i = 0; i < nsrc; i++)
	{
		sb_appendf(&arr, "%s(v.%s)::text", i ? ", " : "", plan_qi(t->cols[src[i]].name));
		sb_appendf(&names, "%s%s", i ? ", " : "", t->cols[src[i]].name);
	}
	bc->source = names.data;

	/* an even spread: ceil(rows x growth / rows that fit) buckets */
	if (per_row_nv > 0 && (double) t->max_rows * p->opts->growth * per_row_nv / (double) p->opts->max_values > need)
		need = (double) t->max_rows * p->opts->growth * per_row_nv / (double) p->opts->max_values;
	if (per_row_bytes > 0 && (double) t->max_rows * p->opts->growth * per_row_bytes / (double) p->opts->max_bytes > need)
		need = (double) t->max_rows * p->opts->growth * per_row_bytes / (double) p->opts->max_bytes;
	for (n = 2; n < 65536 && (double) n < need; n *= 2)
		;

	for (int qi = 0; qi < t->nqueries; qi++)
	{
		const Query *q = t->queries[qi];
		int			bound = 0;

		for (int i = 0; i < nsrc; i++)
			for (int k = 0; k < q->nparams; k++)
				if (q->puse[k].col == src[i] && strcmp(q->puse[k].op, "=") == 0)
				{
					bound++;
					break;
				}
		if (bound == nsrc)
			bound_all++;
	}
	bc->reads_what = bridge_strdup("a query of the table");

	for (long m = n > 2 ? n / 2 : n; m <= 65536; m *= 2)
	{
		BucketCandidate *c;
		PGresult   *res;
		double		nv,
					bytes;

		add_candidate(bc, bridge_printf("hash %ld", m));
		c = &bc->cand[bc->ncand - 1];
		res = bridge_exec(p->conn, bridge_printf("measuring %ld hash buckets of %s", m, t->name),
						  bridge_printf("SELECT coalesce(max(x.c), 0), count(*) FROM ("
										"SELECT count(*) AS c FROM (%s) v "
										"GROUP BY %s, %s.cql_hash_bucket(%ld, %s)) x",
										t->shaped, plan_key_columns(t, "v.", false), ext, m, arr.data),
						  0, NULL);
		c->max_rows = plan_lval(res, 0, 0);
		c->partitions = plan_lval(res, 0, 1);
		PQclear(res);
		c->reads_mean = t->nqueries > 0
			? ((double) bound_all + (double) (t->nqueries - bound_all) * m) / t->nqueries : m;
		c->reads_max = bound_all == t->nqueries ? 1 : m;
		c->fits = fits(p, t, c->max_rows, &nv, &bytes);
		c->nv_max = nv;
		c->bytes_max = bytes;
		if (c->fits && m >= n)
			break;
	}
}

/*
 * add_bucket_column
 *		The chosen bucket as a column at the end of the partition key:
 *		computed in the source view by the extension's function, declared
 *		to cql_fdw by the column options bucket/bucket_of.  Column indexes
 *		of the table's queries behind it move by one.
 */
static void
add_bucket_column(Plan *p, Table *t, BucketChoice *bc, int *src, int nsrc)
{
	const BucketCandidate *cand = &bc->cand[bc->chosen];
	const char *old_select = plan_shape_select(t);
	const char *tail;
	const char *ext = plan_ext_schema(p);
	char	   *name = bc->is_time ? bridge_printf("%s_bucket", t->cols[src[0]].name)
		: bridge_strdup("bucket");
	int			at = t->npk;
	Column		col;
	StrBuf		of;
	StrBuf		args;

	if (strncmp(t->shaped, old_select, strlen(old_select)) != 0)
		bridge_fatal("internal error: the shaped query of %s does not start with its column list", t->name);
	tail = t->shaped + strlen(old_select);
	for (int suffix = 2; plan_find_column(t, name) >= 0; suffix++)
		name = bc->is_time ? bridge_printf("%s_bucket_%d", t->cols[src[0]].name, suffix)
			: bridge_printf("bucket_%d", suffix);

	sb_init(&of);
	sb_init(&args);
	for (int i = 0; i < nsrc; i++)
	{
		sb_appendf(&of, "%s%s", i ? ", " : "", plan_qi(t->cols[src[i]].name));
		sb_appendf(&args, ", (%s)::text", t->cols[src[i]].expr);
	}
	memset(&col, 0, sizeof(col));
	col.name = name;
	col.kind = COL_PARTITION;
	col.position = at;
	col.shape = SHAPE_HIDDEN;
	col.bucket_spec = cand->spec;
	col.bucket_of = of.data;
	if (bc->is_time)
	{
		col.cql_type = t->cols[src[0]].cql_type;
		col.pg_type = t->cols[src[0]].pg_type;
		col.expr = bridge_printf("%s.cql_time_bucket('%s', %s)", ext, cand->spec, t->cols[src[0]].expr);
		col.source = bridge_printf("%s bucket of %s (cql_time_bucket, UTC)", cand->spec, bc->source);
	}
	else
	{
		col.cql_type = "int";
		col.pg_type = "integer";
		col.expr = bridge_printf("%s.cql_hash_bucket(%s%s)", ext, cand->spec + 5, args.data);
		col.source = bridge_printf("Murmur3 hash of (%s) mod %s (cql_hash_bucket)", bc->source, cand->spec + 5);
	}
	col.rule = bridge_printf("bucket: widest partition %ld rows over the limits; %s",
							 bc->wide_rows, bc->is_time ? "coarsest time bucket that fits x growth"
							 : "smallest hash bucket count that fits x growth");

	t->cols = bridge_realloc(t->cols, sizeof(Column) * (t->ncols + 1));
	if (!t->cols)
		bridge_fatal("out of memory");
	memmove(&t->cols[at + 1], &t->cols[at], sizeof(Column) * (t->ncols - at));
	t->cols[at] = col;
	t->ncols++;
	t->npk++;
	for (int qi = 0; qi < t->nqueries; qi++)
	{
		Query	   *q = t->queries[qi];

		for (int o = 0; o < q->ntargets; o++)
			if (q->tcol[o] >= at)
				q->tcol[o]++;
		for (int k = 0; k < q->nparams; k++)
			if (q->puse[k].col >= at)
				q->puse[k].col++;
	}
	t->shaped = bridge_printf("%s%s", plan_shape_select(t), tail);
	bc->applied = true;
	bc->column = at;
}

/*
 * plan_choose_bucket
 *		For a table whose widest partition passes the limits (measured by
 *		plan_measure): measure the candidates, choose one, apply it unless
 *		--no-bucket.  t->bucket records it all for the reports.
 */
void
plan_choose_bucket(Plan *p, Table *t)
{
	BucketChoice *bc = bridge_malloc(sizeof(BucketChoice));
	char	   *why_time = NULL;
	int			tsrc;
	int		   *src = bridge_malloc(sizeof(int) * (t->ncols + 1));
	int			nsrc = 0;

	memset(bc, 0, sizeof(*bc));
	bc->chosen = -1;
	bc->column = -1;
	bc->wide_rows = t->max_rows;
	bc->wide_nv = t->nv_max;
	bc->wide_bytes = t->bytes_max;
	bc->wide_partitions = t->partitions;
	t->bucket = bc;

	tsrc = time_source(t, &why_time);
	if (tsrc >= 0)
	{
		bc->is_time = true;
		bc->source = t->cols[tsrc].name;
		src[nsrc++] = tsrc;
		measure_time(p, t, bc, tsrc);
		for (int i = 0; i < bc->ncand; i++)
		{
			double		nv,
						bytes;

			bc->cand[i].fits = fits(p, t, bc->cand[i].max_rows, &nv, &bytes);
			bc->cand[i].nv_max = nv;
			bc->cand[i].bytes_max = bytes;
			if (bc->cand[i].fits)
				bc->chosen = i; /* the coarsest that fits */
		}
		if (bc->chosen < 0)
			bc->why_none = bridge_printf("even %s buckets hold %ld rows in one partition",
										 bc->cand[0].spec, bc->cand[0].max_rows);
	}
	else
	{
		for (int i = t->npk; i < t->npk + t->nck; i++)
			if (hashable(&t->cols[i]))
				src[nsrc++] = i;
		if (nsrc == 0)
			bc->why_none = bridge_printf("no time bucket (%s) and no clustering column of a type cql_fdw hashes (smallint, int, bigint, text, uuid)",
										 why_time);
		else
		{
			measure_hash(p, t, bc, src, nsrc);
			for (int i = 0; i < bc->ncand; i++)
				if (bc->cand[i].fits)
				{
					bc->chosen = i;
					break;
				}
			if (bc->chosen < 0)
				bc->why_none = bridge_printf("even 65536 hash buckets hold %ld rows in one partition",
											 bc->cand[bc->ncand - 1].max_rows);
		}
		if (why_time)
			bc->reads_what = bridge_printf("%s (no time bucket: %s)",
										   bc->reads_what ? bc->reads_what : "a query", why_time);
	}

	if (bc->chosen < 0)
		plan_table_warn(t, "no bucket keeps the partitions of %s within the limits: %s", t->name, bc->why_none);
	else if (p->opts->no_bucket)
		plan_table_warn(t, "--no-bucket: %s stays unbucketed; bucket %s would keep it within the limits",
						t->name, plan_bucket_text(t));
	else
		add_bucket_column(p, t, bc, src, nsrc);
	free(src);
}

/*
 * plan_bucket_text
 *		"day of reported_at" / "hash 8 of (id)": the chosen bucket.
 */
char *
plan_bucket_text(const Table *t)
{
	const BucketChoice *bc = t->bucket;

	if (!bc || bc->chosen < 0)
		return bridge_strdup("none");
	if (bc->is_time)
		return bridge_printf("%s of %s", bc->cand[bc->chosen].spec, bc->source);
	return bridge_printf("%s of (%s)", bc->cand[bc->chosen].spec, bc->source);
}

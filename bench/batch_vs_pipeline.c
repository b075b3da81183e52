/*-------------------------------------------------------------------------
 *
 * batch_vs_pipeline.c
 *		Load the same rows into Cassandra three ways and print rows/s:
 *		  pipeline  single-row prepared EXECUTEs, a window of requests in
 *		            flight (what cql_fdw's batch insert does)
 *		  grouped   UNLOGGED BATCHes of rows of ONE partition
 *		  mixed     UNLOGGED BATCHes of rows of MANY partitions (the
 *		            anti-pattern, for contrast)
 *		The row count is checked with SELECT count(*) after each load.
 *
 * The table is shaped like the hotel availability table:
 *		PRIMARY KEY ((hotel_id text), date date, room_number smallint),
 *		is_available boolean
 * with a configurable number of rows per partition.
 *
 *	build/bench/batch_vs_pipeline --host 127.0.0.5 [--rows N]
 *		[--per-partition 1,10,100,1000] [--batch-sizes 10,50,100] [--window ROWS]
 *		[--keyspace bench_KS] [--no-lz4] [--only pipeline|grouped|mixed]
 *		[--warmup ROWS] [--repeat K] [--keep]
 * (built by bench/Makefile).  The keyspace (default bench_batch) is dropped
 * and re-created first and dropped at the end unless --keep.
 *
 * Everything goes over one connection, as the FDW's writes to one node do.
 * Meant for a single node: on a cluster every request here goes to the
 * contact node, so neither token awareness nor the coordinator fan-out that
 * makes mixed batches an anti-pattern would be measured fairly.
 *
 * IDENTIFICATION
 *		bench/batch_vs_pipeline.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_conn.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* rows written between uncorks, as the FDW's default batch_size */
#define FLUSH_EVERY_ROWS	100
#define MAX_LIST			16

typedef enum strategy
{
	STRAT_PIPELINE,
	STRAT_GROUPED,
	STRAT_MIXED
} strategy;

static const char *const strategy_names[] = {"pipeline", "grouped", "mixed"};

/* One generated row: bound values, already serialized */
typedef struct bench_row
{
	char		hotel[16];		/* "H000000" */
	uint8_t		date[4];
	uint8_t		room[2];
	uint8_t		avail[1];
	cql_value_ref values[4];
	int32_t		partition;
} bench_row;

/* One request in flight and the rows it carries */
typedef struct inflight
{
	cql_request *req;
	int			rows;
} inflight;

typedef struct bench
{
	cql_conn   *conn;
	const char *keyspace;
	cql_prepared *insert;
	int			window_rows;	/* rows in flight */
	/* per run */
	inflight   *ring;
	int			ring_cap;
	int			head;
	int			count;
	int			rows_in_flight;
	int64_t		requests;
	int64_t		warnings;
	char		first_warning[256];
} bench;

static void
die(const char *what, cql_status s, const cql_error *err)
{
	fprintf(stderr, "batch_vs_pipeline: %s failed: %s", what, cql_status_message(s));
	if (err && err->message[0])
		fprintf(stderr, ": %s [%s]", err->message, err->host);
	fputc('\n', stderr);
	exit(1);
}

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
run_cql(bench *b, const char *cql)
{
	cql_result	res;
	cql_error	err;
	cql_status	s;

	memset(&res, 0, sizeof(res));
	cql_error_clear(&err);
	s = cql_query(b->conn, cql, NULL, &res, &err);
	if (s != CQL_OK)
	{
		fprintf(stderr, "batch_vs_pipeline: while running: %s\n", cql);
		die("query", s, &err);
	}
	cql_result_free(&res);
}

static int
parse_list(const char *arg, int *out, const char *opt)
{
	int			n = 0;
	const char *p = arg;

	while (*p)
	{
		char	   *end;
		long		v = strtol(p, &end, 10);

		if (end == p || v <= 0 || v > 1000000 || n == MAX_LIST ||
			(*end != ',' && *end != '\0'))
		{
			fprintf(stderr, "batch_vs_pipeline: bad value \"%s\" for %s: expected a comma-separated list of positive integers\n",
					arg, opt);
			exit(2);
		}
		out[n++] = (int) v;
		p = (*end == ',') ? end + 1 : end;
	}
	return n;
}

/*
 * Rows in partition order: row i belongs to partition i / per_part, like an
 * INSERT ... SELECT from a table ordered by its key.  Inside a partition,
 * ten rooms per day.
 */
static bench_row *
make_rows(int nrows, int per_part)
{
	bench_row  *rows = calloc(nrows, sizeof(bench_row));

	if (rows == NULL)
	{
		fprintf(stderr, "batch_vs_pipeline: out of memory for %d rows\n", nrows);
		exit(1);
	}
	for (int i = 0; i < nrows; i++)
	{
		bench_row  *r = &rows[i];
		int			part = i / per_part;
		int			j = i % per_part;
		uint32_t	day = (uint32_t) (1u << 31) + 19723 + j / 10;	/* 2024-01-01 + */
		int			room = 100 + j % 10;
		int			len = snprintf(r->hotel, sizeof(r->hotel), "H%06d", part);

		r->partition = part;
		r->date[0] = day >> 24;
		r->date[1] = day >> 16;
		r->date[2] = day >> 8;
		r->date[3] = day;
		r->room[0] = room >> 8;
		r->room[1] = room;
		r->avail[0] = (i % 3) != 0;
		r->values[0] = (cql_value_ref) {(const uint8_t *) r->hotel, len};
		r->values[1] = (cql_value_ref) {r->date, 4};
		r->values[2] = (cql_value_ref) {r->room, 2};
		r->values[3] = (cql_value_ref) {r->avail, 1};
	}
	return rows;
}

/*
 * Order in which the mixed strategy takes the rows: round robin over the
 * partitions, so consecutive rows (and so a batch) belong to different
 * partitions as long as there are enough of them.
 */
static int *
mixed_order(int nrows, int per_part)
{
	int			nparts = (nrows + per_part - 1) / per_part;
	int		   *order = malloc(sizeof(int) * nrows);
	int			k = 0;

	if (order == NULL)
		exit(1);
	for (int j = 0; j < per_part; j++)
		for (int p = 0; p < nparts; p++)
			if (p * per_part + j < nrows)
				order[k++] = p * per_part + j;
	return order;
}

/* Wait for the oldest request in flight */
static void
await_oldest(bench *b, int64_t *done_rows)
{
	inflight   *f = &b->ring[b->head];
	cql_result	res;
	cql_error	err;
	cql_status	s;

	memset(&res, 0, sizeof(res));
	cql_error_clear(&err);
	s = cql_conn_await(b->conn, f->req, &res, &err);
	cql_request_free(f->req);
	if (s != CQL_OK)
		die("write", s, &err);
	if (res.extras.nwarnings > 0)
	{
		if (b->warnings == 0)
			snprintf(b->first_warning, sizeof(b->first_warning), "%s",
					 res.extras.warnings[0]);
		b->warnings += res.extras.nwarnings;
	}
	cql_result_free(&res);
	*done_rows += f->rows;
	b->rows_in_flight -= f->rows;
	b->head = (b->head + 1) % b->ring_cap;
	b->count--;
}

/*
 * Make room for a request of n rows.  The window counts rows, not
 * requests, so that every strategy keeps the same amount of work in
 * flight; as in the FDW, a full window is drained to half, so that the
 * next requests go out in a burst.
 */
static inflight *
slot_for_send(bench *b, int n, int64_t *done_rows)
{
	if (b->count == b->ring_cap || b->rows_in_flight + n > b->window_rows)
		while (b->count > 0 && b->rows_in_flight > b->window_rows / 2)
			await_oldest(b, done_rows);
	return &b->ring[(b->head + b->count) % b->ring_cap];
}

static void
send_retrying(bench *b, strategy st, const cql_batch_stmt *stmts, int n,
			  const cql_value_ref *values, inflight *f)
{
	cql_query_params params;
	cql_error	err;
	cql_status	s;

	cql_query_params_init(&params);
	params.consistency = CQL_CONSISTENCY_ONE;
	if (values)
	{
		params.nvalues = 4;
		params.values = values;
	}
	for (;;)
	{
		cql_error_clear(&err);
		if (st == STRAT_PIPELINE)
			s = cql_send_execute(b->conn, b->insert, &params, &f->req, &err);
		else
			s = cql_send_batch(b->conn, CQL_BATCH_UNLOGGED, stmts, n, &params,
							   &f->req, &err);
		if (s != CQL_ERR_BUSY)
			break;
		s = cql_conn_pump(b->conn, 100, &err);
		if (s != CQL_OK)
			break;
	}
	if (s != CQL_OK)
		die(st == STRAT_PIPELINE ? "EXECUTE" : "BATCH", s, &err);
	b->count++;
}

/* Load every row once with the given strategy; returns rows acknowledged */
static int64_t
load(bench *b, strategy st, const bench_row *rows, const int *order, int nrows,
	 int batch_size)
{
	cql_batch_stmt *stmts = calloc(batch_size, sizeof(cql_batch_stmt));
	int64_t		done_rows = 0;
	int			since_flush = 0;
	int			i = 0;

	b->ring_cap = b->window_rows;
	b->ring = calloc(b->ring_cap, sizeof(inflight));
	b->head = b->count = b->rows_in_flight = 0;
	b->requests = 0;
	b->warnings = 0;
	b->first_warning[0] = '\0';
	if (stmts == NULL || b->ring == NULL)
		exit(1);

	cql_conn_cork(b->conn, true);
	while (i < nrows)
	{
		inflight   *f;
		int			n = 0;

		if (st == STRAT_PIPELINE)
		{
			f = slot_for_send(b, 1, &done_rows);
			send_retrying(b, st, NULL, 0, rows[i].values, f);
			n = 1;
		}
		else
		{
			/* grouped: stop at the end of the partition; mixed: never */
			while (i + n < nrows && n < batch_size &&
				   (st == STRAT_MIXED ||
					rows[order[i + n]].partition == rows[order[i]].partition))
			{
				cql_batch_stmt_prepared(&stmts[n], b->insert,
										rows[order[i + n]].values, 4);
				n++;
			}
			f = slot_for_send(b, n, &done_rows);
			send_retrying(b, st, stmts, n, NULL, f);
		}
		b->requests++;
		b->rows_in_flight += n;
		f->rows = n;
		i += n;
		since_flush += n;
		if (since_flush >= FLUSH_EVERY_ROWS)
		{
			/* what was queued goes out now, as after each FDW batch */
			cql_conn_cork(b->conn, false);
			cql_conn_cork(b->conn, true);
			since_flush = 0;
		}
	}
	cql_conn_cork(b->conn, false);
	while (b->count > 0)
		await_oldest(b, &done_rows);
	free(b->ring);
	free(stmts);
	return done_rows;
}

static int64_t
count_rows(bench *b)
{
	char		q[256];
	cql_result	res;
	cql_error	err;
	cql_status	s;
	int64_t		n = -1;

	snprintf(q, sizeof(q), "SELECT count(*) FROM \"%s\".availability", b->keyspace);
	memset(&res, 0, sizeof(res));
	cql_error_clear(&err);
	s = cql_query(b->conn, q, NULL, &res, &err);
	if (s != CQL_OK)
		die("SELECT count(*)", s, &err);
	if (res.kind != CQL_RESULT_ROWS || res.rows_count != 1 ||
		cql_decode_bigint(cql_result_cell(&res, 0, 0)->p,
						  cql_result_cell(&res, 0, 0)->n, &n) != CQL_OK)
	{
		fprintf(stderr, "batch_vs_pipeline: SELECT count(*) did not return one bigint\n");
		exit(1);
	}
	cql_result_free(&res);
	return n;
}

/* Index of a (strategy, batch size) pair among the 1 + 2 * nsizes configs */
static int
conf_index(int st, int bi, int nsizes)
{
	return st == STRAT_PIPELINE ? 0 : st == STRAT_GROUPED ? 1 + bi : 1 + nsizes + bi;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static void
usage(void)
{
	fprintf(stderr,
			"usage: batch_vs_pipeline --host HOST [--port P] [--rows N] [--per-partition 1,10,100,1000]\n"
			"           [--batch-sizes 10,50,100] [--window ROWS] [--keyspace KS] [--no-lz4]\n"
			"           [--only pipeline|grouped|mixed] [--warmup ROWS] [--repeat K] [--keep]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"host", required_argument, NULL, 'h'},
		{"port", required_argument, NULL, 'p'},
		{"rows", required_argument, NULL, 'n'},
		{"per-partition", required_argument, NULL, 'r'},
		{"batch-sizes", required_argument, NULL, 'b'},
		{"window", required_argument, NULL, 'w'},
		{"keyspace", required_argument, NULL, 'k'},
		{"no-lz4", no_argument, NULL, 'z'},
		{"only", required_argument, NULL, 'o'},
		{"keep", no_argument, NULL, 'K'},
		{"warmup", required_argument, NULL, 'W'},
		{"repeat", required_argument, NULL, 'R'},
		{NULL, 0, NULL, 0}
	};
	cql_conn_options o;
	cql_error	err;
	cql_status	s;
	bench		b;
	char		q[512];
	int			per_part[MAX_LIST] = {1, 10, 100, 1000};
	int			nper = 4;
	int			sizes[MAX_LIST] = {10, 50, 100};
	int			nsizes = 3;
	int			nrows = 200000;
	int			only = -1;
	int			warmup = 50000;
	int			repeat = 1;
	int			nconf;
	double	   *rates;
	bool		keep = false;
	int			c;

	memset(&b, 0, sizeof(b));
	b.keyspace = "bench_batch";
	b.window_rows = 256;
	cql_conn_options_init(&o);
	o.host = "127.0.0.5";
	o.compression = CQL_COMPRESSION_LZ4;
	o.request_timeout_ms = 120000;
	o.driver_name = "cql_fdw-bench";

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'h':
				o.host = optarg;
				break;
			case 'p':
				o.port = atoi(optarg);
				break;
			case 'n':
				nrows = atoi(optarg);
				break;
			case 'r':
				nper = parse_list(optarg, per_part, "--per-partition");
				break;
			case 'b':
				nsizes = parse_list(optarg, sizes, "--batch-sizes");
				break;
			case 'w':
				b.window_rows = atoi(optarg);
				break;
			case 'k':
				b.keyspace = optarg;
				break;
			case 'z':
				o.compression = CQL_COMPRESSION_NONE;
				break;
			case 'o':
				for (int i = 0; i < 3; i++)
					if (strcmp(optarg, strategy_names[i]) == 0)
						only = i;
				if (only < 0)
					usage();
				break;
			case 'R':
				repeat = atoi(optarg);
				break;
			case 'W':
				warmup = atoi(optarg);
				break;
			case 'K':
				keep = true;
				break;
			default:
				usage();
		}
	}
	if (nrows <= 0 || b.window_rows <= 0 || warmup < 0 || repeat <= 0 || strncmp(b.keyspace, "bench_", 6) != 0 ||
		strchr(b.keyspace, '"') != NULL)
	{
		fprintf(stderr, "batch_vs_pipeline: --rows, --window and --repeat must be positive, --warmup not negative, and --keyspace must start with \"bench_\"\n");
		exit(2);
	}

	nconf = 1 + 2 * nsizes;

	cql_error_clear(&err);
	s = cql_connect(&o, &b.conn, &err);
	if (s != CQL_OK)
		die("connect", s, &err);

	snprintf(q, sizeof(q), "DROP KEYSPACE IF EXISTS \"%s\"", b.keyspace);
	run_cql(&b, q);
	snprintf(q, sizeof(q),
			 "CREATE KEYSPACE \"%s\" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			 b.keyspace);
	run_cql(&b, q);
	snprintf(q, sizeof(q),
			 "CREATE TABLE \"%s\".availability (hotel_id text, date date, room_number smallint, "
			 "is_available boolean, PRIMARY KEY ((hotel_id), date, room_number))",
			 b.keyspace);
	run_cql(&b, q);
	snprintf(q, sizeof(q),
			 "INSERT INTO \"%s\".availability (hotel_id, date, room_number, is_available) VALUES (?, ?, ?, ?)",
			 b.keyspace);
	s = cql_prepare(b.conn, q, &b.insert, &err);
	if (s != CQL_OK)
		die("PREPARE", s, &err);

	printf("# %d rows, host %s, protocol v%d%s, %d rows in flight, flush every %d rows\n",
		   nrows, cql_conn_peer(b.conn), cql_conn_protocol_version(b.conn),
		   cql_conn_compression(b.conn) == CQL_COMPRESSION_LZ4 ? " lz4" : "",
		   b.window_rows, FLUSH_EVERY_ROWS);
	/*
	 * Warm up (JIT of the node, prepared statement, memtable) with an
	 * untimed load, so that the first measured strategy is not penalised.
	 */
	if (warmup > 0)
	{
		bench_row  *rows = make_rows(warmup, 1);

		load(&b, STRAT_PIPELINE, rows, NULL, warmup, 1);
		free(rows);
	}

	printf("%-9s %-9s %5s %8s %9s %10s %8s  %s\n", "rows/part", "strategy", "batch",
		   "requests", "seconds", "rows/s", "warnings", "count check");
	fflush(stdout);

	rates = calloc((size_t) nper * nconf * repeat, sizeof(double));
	if (rates == NULL)
		exit(1);
	for (int rep = 0; rep < repeat; rep++)
	{
		for (int pi = 0; pi < nper; pi++)
		{
			bench_row  *rows = make_rows(nrows, per_part[pi]);
			int		   *inorder = malloc(sizeof(int) * nrows);
			int		   *mixed = mixed_order(nrows, per_part[pi]);

			if (inorder == NULL)
				exit(1);
			for (int i = 0; i < nrows; i++)
				inorder[i] = i;

			for (int st = 0; st < 3; st++)
			{
				int			nb = st == STRAT_PIPELINE ? 1 : nsizes;

				if (only >= 0 && st != only)
					continue;
				for (int bi = 0; bi < nb; bi++)
				{
					int			bs = st == STRAT_PIPELINE ? 1 : sizes[bi];
					double		t0,
								t1;
					int64_t		acked,
								counted;

					snprintf(q, sizeof(q), "TRUNCATE \"%s\".availability", b.keyspace);
					run_cql(&b, q);
					t0 = now_seconds();
					acked = load(&b, st, rows, st == STRAT_MIXED ? mixed : inorder,
								 nrows, bs);
					t1 = now_seconds();
					counted = count_rows(&b);
					rates[(pi * nconf + conf_index(st, bi, nsizes)) * repeat + rep] = acked / (t1 - t0);
					printf("%-9d %-9s %5d %8lld %9.2f %10.0f %8lld  %s (%lld)\n",
						   per_part[pi], strategy_names[st], bs, (long long) b.requests,
						   t1 - t0, acked / (t1 - t0), (long long) b.warnings,
						   counted == nrows && acked == nrows ? "ok" : "MISMATCH",
						   (long long) counted);
					if (b.warnings > 0 && rep == 0)
						printf("#   first warning: %.200s\n", b.first_warning);
					fflush(stdout);
					if (counted != nrows || acked != nrows)
					{
						fprintf(stderr, "batch_vs_pipeline: %s load of %d rows: %lld acknowledged, %lld counted\n",
								strategy_names[st], nrows, (long long) acked, (long long) counted);
						exit(1);
					}
				}
			}
			free(rows);
			free(inorder);
			free(mixed);
		}

	}

	/* medians: the machine is shared, single runs are noisy */
	if (repeat > 1)
	{
		printf("\n%-9s %-9s %5s %10s %10s %10s   (rows/s over %d runs)\n", "rows/part",
			   "strategy", "batch", "median", "min", "max", repeat);
		for (int pi = 0; pi < nper; pi++)
			for (int st = 0; st < 3; st++)
				for (int bi = 0; bi < (st == STRAT_PIPELINE ? 1 : nsizes); bi++)
				{
					double	   *r = &rates[(pi * nconf + conf_index(st, bi, nsizes)) * repeat];

					if (only >= 0 && st != only)
						continue;
					qsort(r, repeat, sizeof(double), cmp_double);
					printf("%-9d %-9s %5d %10.0f %10.0f %10.0f\n", per_part[pi],
						   strategy_names[st], st == STRAT_PIPELINE ? 1 : sizes[bi],
						   repeat % 2 ? r[repeat / 2] : (r[repeat / 2 - 1] + r[repeat / 2]) / 2,
						   r[0], r[repeat - 1]);
				}
	}
	free(rates);

	if (!keep)
	{
		snprintf(q, sizeof(q), "DROP KEYSPACE IF EXISTS \"%s\"", b.keyspace);
		run_cql(&b, q);
	}
	cql_conn_close(b.conn);
	return 0;
}

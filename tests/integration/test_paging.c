/*-------------------------------------------------------------------------
 *
 * test_paging.c
 *		Integration test of paging: 100,000 rows (> 25 MB of payload) read
 *		with page size 5000 through a counting allocator, asserting that
 *		peak memory stays far below the data size; paging of prepared
 *		statements; manual re-issue with a paging state.
 *
 * IDENTIFICATION
 *		tests/integration/test_paging.c
 *
 *-------------------------------------------------------------------------
 */
#include "itest.h"

#define NROWS		100000
#define PER_PART	1000
#define PAYLOAD		260
#define BATCH_ROWS	50
#define WINDOW		64

/* Deterministic payload of row (p, c). */
static void
make_payload(int p, int c, char *out)
{
	int			n = snprintf(out, PAYLOAD + 1, "row-%d-%d-", p, c);

	for (int i = n; i < PAYLOAD; i++)
		out[i] = (char) ('a' + (p * 7 + c * 13 + i) % 26);
	out[PAYLOAD] = '\0';
}

static int
already_loaded(cql_conn *c)
{
	cql_result	res;
	cql_error	err;
	int			yes = 0;

	if (cql_query(c, "SELECT n FROM loaded WHERE id = 1", NULL, &res, &err) == CQL_OK)
	{
		yes = res.rows_count == 1 && cql_result_cell(&res, 0, 0)->n == 4 &&
			(int32_t) cql_get_be32(cql_result_cell(&res, 0, 0)->p) == NROWS;
		cql_result_free(&res);
	}
	return yes;
}

/* Load with pipelined single-partition UNLOGGED batches. */
static int
load(cql_conn *c)
{
	cql_prepared *ins;
	cql_error	err;
	static uint8_t keys[WINDOW][BATCH_ROWS][8];
	static char pay[WINDOW][BATCH_ROWS][PAYLOAD + 1];
	static cql_value_ref vals[WINDOW][BATCH_ROWS][3];
	static cql_batch_stmt stmts[WINDOW][BATCH_ROWS];
	cql_request *reqs[WINDOW] = {0};
	int			nbatches = NROWS / BATCH_ROWS;
	int			failures = 0;

	if (cql_prepare(c, "INSERT INTO rows (p, c, payload) VALUES (?, ?, ?)", &ins, &err) != CQL_OK)
		return 0;
	for (int b = 0; b < nbatches + WINDOW; b++)
	{
		int			slot = b % WINDOW;

		if (reqs[slot])
		{
			if (cql_conn_await(c, reqs[slot], NULL, &err) != CQL_OK)
			{
				itest_diag_error("load batch", CQL_ERR_SERVER, &err);
				failures++;
			}
			cql_request_free(reqs[slot]);
			reqs[slot] = NULL;
		}
		if (b >= nbatches)
			continue;
		for (int i = 0; i < BATCH_ROWS; i++)
		{
			int			row = b * BATCH_ROWS + i;
			int			p = row / PER_PART;
			int			cc = row % PER_PART;

			cql_put_be32(keys[slot][i], (uint32_t) p);
			cql_put_be32(keys[slot][i] + 4, (uint32_t) cc);
			make_payload(p, cc, pay[slot][i]);
			vals[slot][i][0].p = keys[slot][i];
			vals[slot][i][0].n = 4;
			vals[slot][i][1].p = keys[slot][i] + 4;
			vals[slot][i][1].n = 4;
			vals[slot][i][2].p = (const uint8_t *) pay[slot][i];
			vals[slot][i][2].n = PAYLOAD;
			cql_batch_stmt_prepared(&stmts[slot][i], ins, vals[slot][i], 3);
		}
		if (cql_send_batch(c, CQL_BATCH_UNLOGGED, stmts[slot], BATCH_ROWS, NULL,
						   &reqs[slot], &err) != CQL_OK)
		{
			itest_diag_error("send batch", CQL_ERR_STATE, &err);
			return 0;
		}
	}
	if (failures)
		return 0;
	return itest_exec(c, "INSERT INTO loaded (id, n) VALUES (1, 100000)");
}

static void
scan_all(int v, cql_compression z)
{
	count_stats cnt;
	cql_allocator ca = counting_allocator(&cnt);
	cql_conn_options o;
	cql_conn   *c;
	cql_pager	pg;
	cql_query_params prm;
	cql_error	err;
	uint8_t    *seen = calloc(NROWS, 1);
	int64_t		rows = 0,
				dups = 0,
				bad = 0;
	size_t		bytes = 0;
	size_t		base;
	int			pages_ok = 1;
	char		expect[PAYLOAD + 1];

	itest_options(&o, v, z);
	o.keyspace = "itest_paging";
	o.alloc = &ca;
	c = itest_connect_or_die(&o);
	base = cnt.cur;
	cnt.peak = cnt.cur;

	cql_query_params_init(&prm);
	prm.page_size = 5000;
	cql_pager_init(&pg, c, "SELECT p, c, payload FROM rows", NULL, &prm);
	while (!pg.done)
	{
		cql_result	page;
		cql_status	st = cql_pager_next(&pg, &page, &err);

		if (st != CQL_OK)
		{
			itest_diag_error("page", st, &err);
			pages_ok = 0;
			break;
		}
		if (page.rows_count > 5000)
			pages_ok = 0;
		for (int32_t r = 0; r < page.rows_count; r++)
		{
			const cql_elem *pe = cql_result_cell(&page, r, 0);
			const cql_elem *ce = cql_result_cell(&page, r, 1);
			const cql_elem *ye = cql_result_cell(&page, r, 2);
			int			p,
						cc;

			if (pe->n != 4 || ce->n != 4)
			{
				bad++;
				continue;
			}
			p = (int) cql_get_be32(pe->p);
			cc = (int) cql_get_be32(ce->p);
			if (p < 0 || cc < 0 || cc >= PER_PART || p * PER_PART + cc >= NROWS)
			{
				bad++;
				continue;
			}
			if (seen[p * PER_PART + cc]++)
				dups++;
			make_payload(p, cc, expect);
			if (ye->n != PAYLOAD || memcmp(ye->p, expect, PAYLOAD) != 0)
				bad++;
			bytes += (size_t) ye->n + 8;
		}
		rows += page.rows_count;
		cql_result_free(&page);
	}
	ok(pages_ok, "v%d%s: all pages fetched, none over the page size", v, z ? "+lz4" : "");
	is_int(rows, NROWS, "v%d%s: 100,000 rows read", v, z ? "+lz4" : "");
	is_int(dups, 0, "v%d%s: no row twice", v, z ? "+lz4" : "");
	is_int(bad, 0, "v%d%s: every payload correct", v, z ? "+lz4" : "");
	ok(pg.pages >= NROWS / 5000, "v%d%s: %lld pages", v, z ? "+lz4" : "", (long long) pg.pages);
	ok(bytes > 25u * 1024 * 1024, "v%d%s: data read %zu bytes (> 25 MB)", v, z ? "+lz4" : "", bytes);
	ok(cnt.peak - base < 20u * 1024 * 1024 && cnt.peak * 4 < bytes,
	   "v%d%s: peak library memory %zu bytes, far below the data size",
	   v, z ? "+lz4" : "", cnt.peak - base);
	cql_pager_free(&pg);
	cql_conn_close(c);
	is_int(cnt.cur, 0, "v%d%s: every byte given back after close", v, z ? "+lz4" : "");
	free(seen);
}

static void
prepared_paging(int v)
{
	cql_conn_options o;
	cql_conn   *c;
	cql_prepared *p;
	cql_pager	pg;
	cql_query_params prm;
	cql_error	err;
	cql_value_ref val;
	uint8_t		key[4];
	int64_t		rows = 0;
	int			ordered = 1;
	int32_t		last = -1;

	itest_options(&o, v, CQL_COMPRESSION_NONE);
	o.keyspace = "itest_paging";
	c = itest_connect_or_die(&o);
	if (!ok(cql_prepare(c, "SELECT c FROM rows WHERE p = ?", &p, &err) == CQL_OK,
			"v%d: prepare partition select", v))
	{
		cql_conn_close(c);
		return;
	}
	cql_put_be32(key, 42);
	val.p = key;
	val.n = 4;
	cql_query_params_init(&prm);
	prm.page_size = 100;
	prm.values = &val;
	prm.nvalues = 1;
	cql_pager_init(&pg, c, NULL, p, &prm);
	while (!pg.done)
	{
		cql_result	page;

		if (cql_pager_next(&pg, &page, &err) != CQL_OK)
			break;
		for (int32_t r = 0; r < page.rows_count; r++)
		{
			int32_t		cc = (int32_t) cql_get_be32(cql_result_cell(&page, r, 0)->p);

			if (cc != last + 1)
				ordered = 0;
			last = cc;
		}
		rows += page.rows_count;
		cql_result_free(&page);
	}
	is_int(rows, PER_PART, "v%d: prepared paging reads the whole partition", v);
	ok(pg.pages >= 10, "v%d: ... in %lld pages of 100", v, (long long) pg.pages);
	ok(ordered, "v%d: ... in clustering order across page boundaries", v);
	is_int(cql_pager_next(&pg, &(cql_result) {0}, &err), CQL_ERR_STATE,
		   "v%d: next after the last page -> CQL_ERR_STATE", v);
	cql_pager_free(&pg);

	/* manual: re-issue with the paging state of the first page */
	{
		cql_result	p1,
					p2;

		cql_query_params_init(&prm);
		prm.page_size = 10;
		if (cql_query(c, "SELECT c FROM rows WHERE p = 7", &prm, &p1, &err) == CQL_OK)
		{
			ok(cql_result_has_more_pages(&p1) && p1.rows_count == 10,
			   "v%d: first page of 10 announces more", v);
			prm.paging_state = p1.meta.paging_state;
			prm.paging_state_len = p1.meta.paging_state_len;
			if (cql_query(c, "SELECT c FROM rows WHERE p = 7", &prm, &p2, &err) == CQL_OK)
			{
				ok(p2.rows_count == 10 &&
				   cql_get_be32(cql_result_cell(&p2, 0, 0)->p) == 10,
				   "v%d: re-issue with the paging state continues at row 10", v);
				cql_result_free(&p2);
			}
			else
				ok(0, "v%d: second page", v);
			cql_result_free(&p1);
		}
		else
			ok(0, "v%d: first page", v);
	}
	cql_conn_close(c);
}

int
main(void)
{
	cql_conn_options o;
	cql_conn   *c;

	plan(47);					/* every assertion below runs on a passing run */
	itest_options(&o, 5, CQL_COMPRESSION_LZ4);
	o.request_timeout_ms = 120000;
	c = itest_connect_or_die(&o);
	setup_step(itest_keyspace(c, "itest_paging"), "keyspace itest_paging");
	setup_step(itest_exec(c, "CREATE TABLE IF NOT EXISTS rows (p int, c int, payload text, PRIMARY KEY (p, c))") &&
			   itest_exec(c, "CREATE TABLE IF NOT EXISTS loaded (id int PRIMARY KEY, n int)"),
			   "tables");
	if (!already_loaded(c))
	{
		itest_exec(c, "TRUNCATE rows");
		ok(load(c), "loaded 100,000 rows with pipelined batches");
	}
	else
		skip("loaded 100,000 rows with pipelined batches", "the rows were loaded by an earlier run");
	cql_conn_close(c);

	scan_all(5, CQL_COMPRESSION_NONE);
	scan_all(5, CQL_COMPRESSION_LZ4);
	scan_all(4, CQL_COMPRESSION_NONE);
	scan_all(4, CQL_COMPRESSION_LZ4);
	prepared_paging(5);
	prepared_paging(4);
	return done_testing();
}

--
-- Aggregate pushdown: count, min, max and sum of one partition computed by
-- Cassandra (optionally grouped by a clustering prefix), each shape
-- asserted by the plan (EXPLAIN VERBOSE shows the remote CQL) and by the
-- answer, compared with the same rows in a local table; and the shapes
-- that stay local (a local Aggregate above the scan).
--
\i sql/include/cql_server.sql
\set ks regress_agg
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_agg.m (
      p int, c1 int, c2 text, i int, si smallint, b bigint, v varint,
      t text, ts timestamp, d date, f double,
      PRIMARY KEY (p, c1, c2))');
END $$;

CREATE SCHEMA agg;
IMPORT FOREIGN SCHEMA regress_agg FROM SERVER cass INTO agg;
CREATE TABLE agg.local_m (LIKE agg.m);

-- partition 1: 2000 rows (every 7th i NULL, sums beyond int and bigint);
-- partition 2: 50 rows; partition 3: i always NULL; partition 99: none
INSERT INTO agg.local_m (p, c1, c2, i, si, b, v, t, ts, d, f)
SELECT 1, g % 20, lpad(g::text, 5, '0'),
       CASE WHEN g % 7 = 0 THEN NULL ELSE 2000000000 - g * 3 END,
       (g % 300 - 150)::smallint,
       CASE WHEN g % 500 = 1 THEN 9223372036854775000 ELSE g * 1000 END,
       (g::numeric * 100000000000000000000),
       CASE WHEN g % 11 = 0 THEN NULL
            ELSE (ARRAY['apple', 'Zebra', 'éclair', 'zz', '', 'Äpfel'])[1 + g % 6] || (g % 13) END,
       timestamptz '2024-03-01 00:00:00+00' + make_interval(secs => g * 61.25),
       date '2020-01-01' + g,
       g / 8.0
FROM generate_series(1, 2000) g;
INSERT INTO agg.local_m (p, c1, c2, i, si, b, v, t, ts, d, f)
SELECT 2, g % 4, g::text, -g, g::smallint, -g, g, 'p2-' || g,
       timestamptz '1969-12-31 23:59:00+00' + make_interval(secs => g), date '1960-01-01' + g, -g
FROM generate_series(1, 50) g;
INSERT INTO agg.local_m (p, c1, c2, t) SELECT 3, g, 'x', 'only' FROM generate_series(1, 5) g;
INSERT INTO agg.m SELECT * FROM agg.local_m;
SELECT p, count(*) FROM agg.m GROUP BY p ORDER BY p;

-- count, sum (exact: CQL's sum(int) would wrap), min, max of one partition
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*), count(i), count(t), sum(i), sum(si), sum(b), sum(v),
       min(i), max(i), min(b), max(b), min(v), max(si), min(ts), max(ts), min(d), max(d)
FROM agg.m WHERE p = 1;
SELECT count(*), count(i), count(t), sum(i), sum(si), sum(b), sum(v),
       min(i), max(i), min(b), max(b), min(v), max(si), min(ts), max(ts), min(d), max(d)
FROM agg.m WHERE p = 1;
SELECT count(*), count(i), count(t), sum(i), sum(si), sum(b), sum(v),
       min(i), max(i), min(b), max(b), min(v), max(si), min(ts), max(ts), min(d), max(d)
FROM agg.local_m WHERE p = 1;

-- negative values, timestamps before 1970, dates before 1970
SELECT count(*), sum(i), sum(b), min(i), max(b), min(ts), max(ts), min(d), max(d)
FROM agg.m WHERE p = 2;
SELECT count(*), sum(i), sum(b), min(i), max(b), min(ts), max(ts), min(d), max(d)
FROM agg.local_m WHERE p = 2;

-- no value: a sum of NULLs is NULL (CQL says 0), count 0
SELECT count(*), count(i), sum(i), sum(b), min(i), max(ts) FROM agg.m WHERE p = 3;
SELECT count(*), count(i), sum(i), sum(b), min(i), max(ts) FROM agg.local_m WHERE p = 3;
-- an empty partition: one row, count 0, the others NULL
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*), count(i), sum(i), min(d), max(t COLLATE "C") FROM agg.m WHERE p = 99;
SELECT count(*), count(i), sum(i), min(d), max(t COLLATE "C") FROM agg.m WHERE p = 99;
SELECT count(*), count(i), sum(i), min(d), max(t COLLATE "C") FROM agg.local_m WHERE p = 99;

-- text: only under the C collation, where the order is that of the bytes
EXPLAIN (VERBOSE, COSTS OFF)
SELECT min(t COLLATE "C"), max(t COLLATE "C"), min(c2 COLLATE "C") FROM agg.m WHERE p = 1;
SELECT min(t COLLATE "C"), max(t COLLATE "C"), min(c2 COLLATE "C") FROM agg.m WHERE p = 1;
SELECT min(t COLLATE "C"), max(t COLLATE "C"), min(c2 COLLATE "C") FROM agg.local_m WHERE p = 1;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT min(t) FROM agg.m WHERE p = 1;

-- with clustering restrictions (bound, never spliced)
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*), sum(i), max(c2 COLLATE "C") FROM agg.m WHERE p = 1 AND c1 >= 5 AND c1 < 10;
SELECT count(*), sum(i), max(c2 COLLATE "C") FROM agg.m WHERE p = 1 AND c1 >= 5 AND c1 < 10;
SELECT count(*), sum(i), max(c2 COLLATE "C") FROM agg.local_m WHERE p = 1 AND c1 >= 5 AND c1 < 10;
SELECT count(*), sum(b) FROM agg.m WHERE p = 1 AND c1 = 7 AND c2 > '01000';
SELECT count(*), sum(b) FROM agg.local_m WHERE p = 1 AND c1 = 7 AND c2 > '01000';

-- expressions over aggregates are computed locally from the pushed ones
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*) * 2 AS twice, sum(i) / count(i) AS mean FROM agg.m WHERE p = 1;
SELECT count(*) * 2 AS twice, sum(i) / count(i) AS mean FROM agg.m WHERE p = 1;
SELECT count(*) * 2 AS twice, sum(i) / count(i) AS mean FROM agg.local_m WHERE p = 1;

-- a parameter: a NULL key value matches nothing, still one row
PREPARE q(int) AS SELECT count(*), sum(i), max(b) FROM agg.m WHERE p = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE q(1);
EXECUTE q(1);
EXECUTE q(99);
EXECUTE q(NULL);
RESET plan_cache_mode;
DEALLOCATE q;

-- rescans: a correlated subquery reads one partition per outer row
EXPLAIN (VERBOSE, COSTS OFF)
SELECT x, (SELECT count(*) FROM agg.m WHERE p = x), (SELECT sum(i) FROM agg.m WHERE p = x)
FROM generate_series(1, 4) x;
SELECT x, (SELECT count(*) FROM agg.m WHERE p = x), (SELECT sum(i) FROM agg.m WHERE p = x)
FROM generate_series(1, 4) x;
SELECT x, (SELECT count(*) FROM agg.local_m WHERE p = x), (SELECT sum(i) FROM agg.local_m WHERE p = x)
FROM generate_series(1, 4) x;

-- GROUP BY a clustering prefix within the partition
EXPLAIN (VERBOSE, COSTS OFF)
SELECT c1, count(*), count(i), sum(i), min(b), max(ts) FROM agg.m WHERE p = 1 GROUP BY c1 ORDER BY c1;
SELECT c1, count(*), count(i), sum(i), min(b), max(ts) FROM agg.m WHERE p = 1 GROUP BY c1 ORDER BY c1 LIMIT 5;
SELECT count(*) AS differences FROM (
  (SELECT c1, count(*), count(i), sum(i), min(b), max(ts) FROM agg.m WHERE p = 1 GROUP BY c1
   EXCEPT ALL
   SELECT c1, count(*), count(i), sum(i), min(b), max(ts) FROM agg.local_m WHERE p = 1 GROUP BY c1)
  UNION ALL
  (SELECT c1, count(*), count(i), sum(i), min(b), max(ts) FROM agg.local_m WHERE p = 1 GROUP BY c1
   EXCEPT ALL
   SELECT c1, count(*), count(i), sum(i), min(b), max(ts) FROM agg.m WHERE p = 1 GROUP BY c1)) d;
-- grouping column in an expression; the groups of partition 2
EXPLAIN (VERBOSE, COSTS OFF)
SELECT c1 * 10 AS c, count(*) + 1 AS n, sum(si) FROM agg.m WHERE p = 2 GROUP BY c1 ORDER BY c;
SELECT c1 * 10 AS c, count(*) + 1 AS n, sum(si) FROM agg.m WHERE p = 2 GROUP BY c1 ORDER BY c;
SELECT c1 * 10 AS c, count(*) + 1 AS n, sum(si) FROM agg.local_m WHERE p = 2 GROUP BY c1 ORDER BY c;
-- the second clustering column, the first bound by equality
EXPLAIN (VERBOSE, COSTS OFF)
SELECT c2, count(*), sum(b) FROM agg.m WHERE p = 2 AND c1 = 3 GROUP BY c2 ORDER BY c2;
SELECT c2, count(*), sum(b) FROM agg.m WHERE p = 2 AND c1 = 3 GROUP BY c2 ORDER BY c2;
SELECT c2, count(*), sum(b) FROM agg.local_m WHERE p = 2 AND c1 = 3 GROUP BY c2 ORDER BY c2;
-- no group of an empty partition
SELECT c1, count(*) FROM agg.m WHERE p = 99 GROUP BY c1;

-- not pushed: a local Aggregate above the scan
-- avg (CQL's avg of integers divides in integers)
EXPLAIN (VERBOSE, COSTS OFF) SELECT avg(i) FROM agg.m WHERE p = 1;
SELECT avg(i) FROM agg.m WHERE p = 1;
SELECT avg(i) FROM agg.local_m WHERE p = 1;
-- float: -0.0 and NaN order differently
EXPLAIN (VERBOSE, COSTS OFF) SELECT sum(f), max(f) FROM agg.m WHERE p = 1;
-- a condition checked locally
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM agg.m WHERE p = 1 AND i % 2 = 0;
SELECT count(*) FROM agg.m WHERE p = 1 AND i % 2 = 0;
SELECT count(*) FROM agg.local_m WHERE p = 1 AND i % 2 = 0;
-- the whole table: counts only, one count per token range (the ranges
-- counted concurrently) summed into one row
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*), count(i) FROM agg.m;
SELECT count(*), count(i) FROM agg.m;
SELECT count(*), count(i) FROM agg.local_m;
SELECT count(*) * 2 AS twice, count(t) FROM agg.m;
SELECT count(*) * 2 AS twice, count(t) FROM agg.local_m;
-- inside a larger query
SELECT k, (SELECT count(*) FROM agg.m) - k AS n FROM generate_series(1, 3) k;
-- with any other aggregate, or a condition, the rows are read
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*), max(i) FROM agg.m;
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM agg.m WHERE i > 5;
-- several partitions
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM agg.m WHERE p IN (1, 2);
-- DISTINCT, FILTER, ORDER BY within the aggregate, HAVING
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(DISTINCT si) FROM agg.m WHERE p = 1;
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FILTER (WHERE si > 0) FROM agg.m WHERE p = 1;
EXPLAIN (VERBOSE, COSTS OFF) SELECT string_agg(c2, ',' ORDER BY c2) FROM agg.m WHERE p = 3;
EXPLAIN (VERBOSE, COSTS OFF) SELECT c1, count(*) FROM agg.m WHERE p = 1 GROUP BY c1 HAVING count(*) > 100;
-- GROUP BY a column that is not a clustering prefix
EXPLAIN (VERBOSE, COSTS OFF) SELECT c2, count(*) FROM agg.m WHERE p = 2 GROUP BY c2;
EXPLAIN (VERBOSE, COSTS OFF) SELECT si, count(*) FROM agg.m WHERE p = 2 GROUP BY si;
-- switched off
ALTER FOREIGN TABLE agg.m OPTIONS (ADD aggregate_pushdown 'false');
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM agg.m WHERE p = 1;
SELECT count(*) FROM agg.m WHERE p = 1;
ALTER FOREIGN TABLE agg.m OPTIONS (DROP aggregate_pushdown);

DROP SCHEMA agg CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_agg');

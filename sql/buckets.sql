--
-- Bucket columns: a partition-key column computed from another column
-- (column options bucket and bucket_of).  A range on the source reads
-- exactly the buckets it covers, in order, and stops early with LIMIT;
-- INSERT fills the bucket; hash buckets are all read.
--
\i sql/include/cql_server.sql
\set ks regress_buckets
\i sql/include/keyspace.sql
SET TimeZone = 'UTC';
-- the Access and Partitions read lines of EXPLAIN ANALYZE (whose other
-- lines differ between PostgreSQL versions)
CREATE FUNCTION pg_temp.reads(q text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ '(Access|Partitions read):' THEN
      RETURN NEXT trim(l);
    END IF;
  END LOOP;
END $f$;

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_buckets.readings (sensor int, day timestamp, reported_at timestamp, value double, PRIMARY KEY ((sensor, day), reported_at))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_buckets.latest (sensor int, month date, taken date, value int, PRIMARY KEY ((sensor, month), taken)) WITH CLUSTERING ORDER BY (taken DESC)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_buckets.orders (customer int, b int, order_id bigint, total int, PRIMARY KEY ((customer, b), order_id))');
END $$;
CREATE SCHEMA bk;
IMPORT FOREIGN SCHEMA regress_buckets FROM SERVER cass INTO bk;

-- the values cql_fdw computes, also for cqlbridge's views (UTC-aligned)
SELECT cql_time_bucket('day', timestamptz '2026-03-02 23:59:59.999+00') AS day,
       cql_time_bucket('6 hours', timestamptz '2026-03-02 13:00+00') AS six_hours,
       cql_time_bucket('week', timestamptz '2026-03-01 12:00+00') AS week_from_monday,
       cql_time_bucket('2 weeks', timestamptz '1970-01-05 00:00+00') AS two_weeks_1970,
       cql_time_bucket('3 months', date '2026-05-31') AS quarter,
       cql_time_bucket('year', date '1969-07-20') AS year_1969,
       cql_time_bucket('10 years', timestamp '2026-03-02 10:00') AS decade;
SELECT cql_time_bucket('day', timestamptz '2026-03-02 01:00+05') AS day_of_an_instant,
       cql_time_bucket('hours', timestamptz '2026-03-02 01:30:00+00') AS plural_unit;
SELECT cql_hash_bucket(16, '42') = cql_hash_bucket(16, 42::text) AS same_text,
       cql_hash_bucket(16, 'a', 'bc') <> cql_hash_bucket(16, 'ab', 'c') AS lengths_count,
       cql_hash_bucket(16, NULL, 'x') IS NULL AS null_in_null_out,
       (SELECT count(DISTINCT cql_hash_bucket(8, i::text)) FROM generate_series(1, 1000) i) AS buckets_used,
       cql_hash_bucket(65536, 'sensor-1') AS pinned;  -- the Python driver's Murmur3Token agrees
SELECT cql_time_bucket('fortnight', now());
SELECT cql_time_bucket('hash 4', now());
SELECT cql_time_bucket('hour', date '2026-03-02');
SELECT cql_hash_bucket(1, 'x');

-- declaring the buckets
ALTER FOREIGN TABLE bk.readings ALTER COLUMN day OPTIONS (ADD bucket 'fortnight');
ALTER FOREIGN TABLE bk.readings ALTER COLUMN day OPTIONS (ADD bucket 'day');
SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-02' AND reported_at < '2026-03-03';
ALTER FOREIGN TABLE bk.readings ALTER COLUMN day OPTIONS (ADD bucket_of 'value');
SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-02' AND reported_at < '2026-03-03';
ALTER FOREIGN TABLE bk.readings ALTER COLUMN day OPTIONS (SET bucket_of 'nosuch');
SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-02' AND reported_at < '2026-03-03';
ALTER FOREIGN TABLE bk.readings ALTER COLUMN day OPTIONS (SET bucket_of 'reported_at');
ALTER FOREIGN TABLE bk.latest ALTER COLUMN month OPTIONS (ADD bucket 'month', ADD bucket_of 'taken');
ALTER FOREIGN TABLE bk.orders ALTER COLUMN b OPTIONS (ADD bucket 'hash 8', ADD bucket_of 'order_id');

-- INSERT computes the bucket (10 days of hourly readings, 2 sensors)
INSERT INTO bk.readings (sensor, reported_at, value)
SELECT s, timestamptz '2026-03-01 00:00+00' + h * interval '1 hour', h
FROM generate_series(1, 2) s, generate_series(0, 239) h;
-- ... an explicit value must be the computed one
INSERT INTO bk.readings VALUES (1, '2026-03-05', '2026-03-04 10:00', -1);
INSERT INTO bk.readings VALUES (1, '2026-03-04', '2026-03-04 10:30', 10.5);
INSERT INTO bk.readings (sensor, value) VALUES (1, 0);
-- each row sits in its day's partition: read a partition by its key
SELECT day, count(*), min(reported_at), max(reported_at)
FROM bk.readings WHERE sensor = 1 AND day IN ('2026-03-02', '2026-03-04', '2026-03-11')
GROUP BY day ORDER BY day;

-- a range reads the buckets it covers, edges exact
EXPLAIN (VERBOSE, COSTS OFF)
SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-02' AND reported_at < '2026-03-04';
SELECT count(*), min(reported_at), max(reported_at)
FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-02' AND reported_at < '2026-03-04';
EXPLAIN (COSTS OFF)
SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at > '2026-03-02' AND reported_at <= '2026-03-04';
SELECT count(*), min(reported_at), max(reported_at)
FROM bk.readings WHERE sensor = 1 AND reported_at > '2026-03-02' AND reported_at <= '2026-03-04';
EXPLAIN (COSTS OFF)
SELECT * FROM bk.readings WHERE sensor = 2 AND reported_at BETWEEN '2026-03-02 23:00' AND '2026-03-03 01:00';
SELECT reported_at, value FROM bk.readings
WHERE sensor = 2 AND reported_at BETWEEN '2026-03-02 23:00' AND '2026-03-03 01:00';
-- one instant: its one bucket
EXPLAIN (COSTS OFF)
SELECT * FROM bk.readings WHERE sensor = 2 AND reported_at = '2026-03-05 07:00';
SELECT value FROM bk.readings WHERE sensor = 2 AND reported_at = '2026-03-05 07:00';
-- empty ranges read nothing
SELECT pg_temp.reads($$SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-04' AND reported_at < '2026-03-04'$$);
SELECT pg_temp.reads($$SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-05' AND reported_at < '2026-03-02'$$);
-- an open range is refused with a hint, not scanned
SELECT count(*) FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-02';
SELECT count(*) FROM bk.readings WHERE sensor = 1 AND reported_at < 'infinity' AND reported_at > '2026-03-02';
-- without a range on the source: a token scan, as for any incomplete key
EXPLAIN (COSTS OFF) SELECT count(*) FROM bk.readings WHERE sensor = 1;
-- at most max_buckets partitions
ALTER FOREIGN TABLE bk.readings OPTIONS (ADD max_buckets '5');
SELECT count(*) FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-01' AND reported_at < '2026-03-07';
SELECT count(*) FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-01' AND reported_at < '2026-03-06';
ALTER FOREIGN TABLE bk.readings OPTIONS (DROP max_buckets);

-- time zones: the session's day is two UTC buckets
SET TimeZone = 'America/New_York';
EXPLAIN (COSTS OFF)
SELECT * FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-03' AND reported_at < '2026-03-04';
SELECT count(*), min(reported_at), max(reported_at)
FROM bk.readings WHERE sensor = 1 AND reported_at >= '2026-03-03' AND reported_at < '2026-03-04';
SET TimeZone = 'UTC';

-- in clustering order across buckets; DESC + LIMIT stops early
EXPLAIN (VERBOSE, COSTS OFF)
SELECT reported_at FROM bk.readings
WHERE sensor = 1 AND reported_at >= '2026-03-01' AND reported_at < '2026-03-11'
ORDER BY reported_at DESC LIMIT 3;
SELECT pg_temp.reads($$SELECT reported_at FROM bk.readings
WHERE sensor = 1 AND reported_at >= '2026-03-01' AND reported_at < '2026-03-11'
ORDER BY reported_at DESC LIMIT 3$$);
SELECT reported_at FROM bk.readings
WHERE sensor = 1 AND reported_at >= '2026-03-01' AND reported_at < '2026-03-11'
ORDER BY reported_at DESC LIMIT 3;
SELECT reported_at FROM bk.readings
WHERE sensor = 1 AND reported_at >= '2026-03-03 22:00' AND reported_at < '2026-03-11'
ORDER BY reported_at LIMIT 4;
SELECT bool_and(reported_at > prev) AS ascending, count(*)
FROM (SELECT reported_at, lag(reported_at) OVER () AS prev FROM bk.readings
      WHERE sensor = 2 AND reported_at >= '2026-03-01' AND reported_at < '2026-03-11'
      ORDER BY reported_at) s WHERE prev IS NOT NULL;
-- a source declared DESC: newest bucket first in declared order
INSERT INTO bk.latest (sensor, taken, value)
SELECT 1, date '2026-01-01' + d, d FROM generate_series(0, 119) d;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT taken, value FROM bk.latest
WHERE sensor = 1 AND taken >= '2026-01-15' AND taken < '2026-04-01' ORDER BY taken DESC LIMIT 2;
SELECT taken, value FROM bk.latest
WHERE sensor = 1 AND taken >= '2026-01-15' AND taken < '2026-04-01' ORDER BY taken DESC LIMIT 2;
SELECT taken, value FROM bk.latest
WHERE sensor = 1 AND taken >= '2026-01-15' AND taken < '2026-04-01' ORDER BY taken LIMIT 2;
SELECT month, count(*) FROM bk.latest WHERE sensor = 1 AND taken >= '2026-01-01' AND taken <= '2026-04-30'
GROUP BY month ORDER BY month;

-- parameters and generic plans
PREPARE span(int, timestamptz, timestamptz) AS
SELECT count(*), min(reported_at), max(reported_at) FROM bk.readings
WHERE sensor = $1 AND reported_at >= $2 AND reported_at < $3;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE span(1, '2026-03-02', '2026-03-05');
EXECUTE span(1, '2026-03-02', '2026-03-05');
EXECUTE span(2, '2026-03-09 12:00', '2026-03-20');
EXECUTE span(2, NULL, '2026-03-20');
RESET plan_cache_mode;
DEALLOCATE span;
-- a join parameterizes the sensor, the range stays constant
SELECT s.sensor, count(r.*) FROM (VALUES (1), (2), (3)) s(sensor)
LEFT JOIN bk.readings r ON r.sensor = s.sensor AND r.reported_at >= '2026-03-02' AND r.reported_at < '2026-03-03'
GROUP BY s.sensor ORDER BY s.sensor;

-- UPDATE and DELETE by key find the row's bucket
UPDATE bk.readings SET value = 1000 WHERE sensor = 2 AND reported_at = '2026-03-06 06:00';
SELECT value FROM bk.readings WHERE sensor = 2 AND day = '2026-03-06' AND reported_at = '2026-03-06 06:00';
DELETE FROM bk.readings WHERE sensor = 2 AND reported_at >= '2026-03-06 06:00' AND reported_at < '2026-03-06 09:00';
SELECT count(*) FROM bk.readings WHERE sensor = 2 AND day = '2026-03-06';

-- hash buckets: every bucket is read, rows land where the hash says
INSERT INTO bk.orders (customer, order_id, total)
SELECT c, o, o % 100 FROM generate_series(1, 2) c, generate_series(1, 200) o;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM bk.orders WHERE customer = 1;
SELECT count(*), count(DISTINCT b), sum(total) FROM bk.orders WHERE customer = 1;
SELECT count(*) FILTER (WHERE b <> cql_hash_bucket(8, order_id::text)) AS misplaced
FROM bk.orders WHERE customer = 2;
SELECT count(*) FROM bk.orders WHERE customer = 2 AND b = cql_hash_bucket(8, '17');
SELECT order_id, total FROM bk.orders WHERE customer = 2 AND order_id BETWEEN 17 AND 19 ORDER BY order_id;
-- ORDER BY along the clustering key: the buckets are merged, no Sort
EXPLAIN (VERBOSE, COSTS OFF)
SELECT order_id, total FROM bk.orders WHERE customer = 1 ORDER BY order_id DESC LIMIT 5;
SELECT order_id, total FROM bk.orders WHERE customer = 1 ORDER BY order_id DESC LIMIT 5;
SELECT order_id FROM bk.orders WHERE customer = 1 AND order_id > 100 ORDER BY order_id LIMIT 3;
-- ... the whole merge, over many small pages, equals a local sort
ALTER FOREIGN TABLE bk.orders OPTIONS (ADD fetch_size '7');
EXPLAIN (COSTS OFF) SELECT order_id FROM bk.orders WHERE customer = 2 ORDER BY order_id;
WITH merged AS MATERIALIZED (
  SELECT row_number() OVER () AS n, order_id FROM
    (SELECT order_id FROM bk.orders WHERE customer = 2 ORDER BY order_id) m),
     sorted AS MATERIALIZED (
  SELECT row_number() OVER (ORDER BY order_id) AS n, order_id FROM
    (SELECT order_id FROM bk.orders WHERE customer = 2 OFFSET 0) u)
SELECT count(*) AS rows, count(*) FILTER (WHERE m.order_id IS DISTINCT FROM s.order_id) AS out_of_order
FROM merged m FULL JOIN sorted s USING (n);
ALTER FOREIGN TABLE bk.orders OPTIONS (DROP fetch_size);
-- = on the hash's sources: the one bucket they hash to
EXPLAIN (VERBOSE, COSTS OFF) SELECT total FROM bk.orders WHERE customer = 2 AND order_id = 17;
SELECT total FROM bk.orders WHERE customer = 2 AND order_id = 17;
PREPARE one(int, bigint) AS SELECT b, total FROM bk.orders WHERE customer = $1 AND order_id = $2;
SET plan_cache_mode = force_generic_plan;
SELECT pg_temp.reads('EXECUTE one(1, 199)');
EXECUTE one(1, 199);
EXECUTE one(1, 1000);
RESET plan_cache_mode;
DEALLOCATE one;
INSERT INTO bk.orders VALUES (1, (cql_hash_bucket(8, '17') + 1) % 8, 17, 0);
-- a source type without a canonical text form cannot be hashed
ALTER FOREIGN TABLE bk.orders ALTER COLUMN b OPTIONS (SET bucket_of 'customer, total');
SELECT count(*) FROM bk.orders WHERE customer = 1;
ALTER FOREIGN TABLE bk.orders ALTER COLUMN total TYPE numeric;
SELECT count(*) FROM bk.orders WHERE customer = 1;

DROP SCHEMA bk CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_buckets');

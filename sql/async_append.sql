--
-- Asynchronous execution under an Append: a partitioned table whose
-- partitions are Cassandra tables (one per bucket), and a UNION ALL of
-- foreign tables, read their members concurrently.  The answers equal a
-- local copy's; a member that fails ends the query with a clean error,
-- and nothing leaks (the backend's open descriptors stay the same).
--
\i sql/include/cql_server.sql
\set ks regress_async
\i sql/include/keyspace.sql

DO $$
BEGIN
  FOR b IN 0..3 LOOP
    PERFORM cql_execute('cass', format(
      'CREATE TABLE regress_async.events_%s (bucket int, day int, seq int, v text, PRIMARY KEY ((bucket, day), seq))', b));
  END LOOP;
END $$;
CREATE SCHEMA asy;
CREATE TABLE asy.events (bucket int, day int, seq int, v text) PARTITION BY LIST (bucket);
CREATE FOREIGN TABLE asy.events_0 PARTITION OF asy.events FOR VALUES IN (0)
  SERVER cass OPTIONS (keyspace 'regress_async', "table" 'events_0');
CREATE FOREIGN TABLE asy.events_1 PARTITION OF asy.events FOR VALUES IN (1)
  SERVER cass OPTIONS (keyspace 'regress_async', "table" 'events_1');
CREATE FOREIGN TABLE asy.events_2 PARTITION OF asy.events FOR VALUES IN (2)
  SERVER cass OPTIONS (keyspace 'regress_async', "table" 'events_2');
CREATE FOREIGN TABLE asy.events_3 PARTITION OF asy.events FOR VALUES IN (3)
  SERVER cass OPTIONS (keyspace 'regress_async', "table" 'events_3');

-- each partition loaded through its foreign table
INSERT INTO asy.events_0 SELECT 0, d, s, md5('0/' || d || '/' || s)
FROM generate_series(1, 10) d, generate_series(1, 500) s;
INSERT INTO asy.events_1 SELECT 1, d, s, md5('1/' || d || '/' || s)
FROM generate_series(1, 10) d, generate_series(1, 500) s;
INSERT INTO asy.events_2 SELECT 2, d, s, md5('2/' || d || '/' || s)
FROM generate_series(1, 10) d, generate_series(1, 500) s;
INSERT INTO asy.events_3 SELECT 3, d, s, md5('3/' || d || '/' || s)
FROM generate_series(1, 10) d, generate_series(1, 500) s;
CREATE TABLE asy.local_events AS
SELECT b AS bucket, d AS day, s AS seq, md5(b || '/' || d || '/' || s) AS v
FROM generate_series(0, 3) b, generate_series(1, 10) d, generate_series(1, 500) s;

-- the whole table: every member a concurrent token scan
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*), sum(hashtext(bucket || '/' || day || '/' || seq || '/' || v)) FROM asy.events;
SELECT count(*), sum(hashtext(bucket || '/' || day || '/' || seq || '/' || v)) FROM asy.events;
SELECT count(*), sum(hashtext(bucket || '/' || day || '/' || seq || '/' || v)) FROM asy.local_events;

-- per member: the rows come back complete, whichever member answers first
SELECT bucket, count(*), min(seq), max(seq) FROM asy.events GROUP BY bucket ORDER BY bucket;

-- pruned to two members, each a single-partition read
EXPLAIN (VERBOSE, COSTS OFF)
SELECT bucket, seq, v FROM asy.events WHERE bucket IN (1, 2) AND day = 7 AND seq <= 3;
SELECT bucket, seq, v FROM asy.events WHERE bucket IN (1, 2) AND day = 7 AND seq <= 3
ORDER BY bucket, seq;

-- a local filter on the members, and a LIMIT above the Append
SELECT count(*) FROM asy.events WHERE v LIKE 'a%';
SELECT count(*) FROM asy.local_events WHERE v LIKE 'a%';
SELECT count(*) FROM (SELECT * FROM asy.events LIMIT 777) s;

-- UNION ALL of whole foreign tables in FROM is an Append too (branches
-- with their own WHERE, or a UNION ALL at the top of a query, are planned
-- apart by PostgreSQL: their scans run one after another)
EXPLAIN (COSTS OFF)
SELECT count(*), sum(seq) FROM (
  SELECT seq FROM asy.events_0 UNION ALL SELECT seq FROM asy.events_3) u;
SELECT count(*), sum(seq) FROM (
  SELECT seq FROM asy.events_0 UNION ALL SELECT seq FROM asy.events_3) u;

-- members read the rows again on a rescan (the inner side of a nested loop)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT k.day, count(*) FROM (VALUES (2), (9)) k(day)
  JOIN asy.events e ON e.day = k.day AND e.seq = 5
GROUP BY k.day ORDER BY k.day;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- async_capable 'false' (table or server): the members are read one after
-- another
ALTER FOREIGN TABLE asy.events_1 OPTIONS (ADD async_capable 'false');
EXPLAIN (COSTS OFF) SELECT count(*) FROM asy.events;
ALTER FOREIGN TABLE asy.events_1 OPTIONS (DROP async_capable);
ALTER SERVER cass OPTIONS (ADD async_capable 'false');
EXPLAIN (COSTS OFF) SELECT count(*) FROM asy.events;
SELECT count(*), sum(hashtext(bucket || '/' || day || '/' || seq || '/' || v)) FROM asy.events;
ALTER SERVER cass OPTIONS (DROP async_capable);
ALTER SERVER cass OPTIONS (ADD async_capable 'sometimes');

-- one member fails (its Cassandra table is gone): a clean error, and the
-- backend holds the same descriptors after ten more such queries
SELECT cql_execute('cass', 'DROP TABLE regress_async.events_2');
\set VERBOSITY terse
SELECT count(*) FROM asy.events;
SELECT count(*) AS fds_before FROM pg_ls_dir('/proc/self/fd') \gset
DO $$
BEGIN
  FOR i IN 1..10 LOOP
    BEGIN
      PERFORM count(*) FROM asy.events;
      RAISE EXCEPTION 'the query did not fail';
    EXCEPTION WHEN fdw_error OR fdw_table_not_found OR undefined_table OR fdw_unable_to_create_execution THEN
      NULL;
    END;
  END LOOP;
END $$;
\set VERBOSITY default
SELECT count(*) - :fds_before AS fds_leaked FROM pg_ls_dir('/proc/self/fd');
-- the other members still answer
SELECT bucket, count(*) FROM asy.events WHERE bucket <> 2 GROUP BY bucket ORDER BY bucket;

DROP SCHEMA asy CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_async');

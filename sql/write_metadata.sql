--
-- Write metadata columns: WRITETIME() and TTL() of a column read through
-- foreign-table columns (options writetime_of, ttl_of), and written as
-- USING TIMESTAMP ? / USING TTL ? of INSERT and UPDATE.
--
\i sql/include/cql_server.sql
\set ks regress_wmeta
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_wmeta.kv (k int, c int, v text, w int, s int static, l list<int>, fl frozen<list<int>>, PRIMARY KEY ((k), c))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_wmeta.hits (page text PRIMARY KEY, views counter)');
END $$;
CREATE SCHEMA wm;
IMPORT FOREIGN SCHEMA regress_wmeta FROM SERVER cass INTO wm;

-- an error as SQLSTATE, message and hint (no line numbers, no context)
CREATE FUNCTION wm.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; hint text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  RETURN st || ': ' || msg || coalesce(' HINT: ' || nullif(hint, ''), '');
END $$;

-- IMPORT FOREIGN SCHEMA adds no metadata columns: they are added by hand
ALTER FOREIGN TABLE wm.kv
  ADD COLUMN v_wt bigint OPTIONS (writetime_of 'v'),
  ADD COLUMN v_ttl integer OPTIONS (ttl_of 'v'),
  ADD COLUMN v_at timestamptz OPTIONS (writetime_of 'v'),
  ADD COLUMN s_wt bigint OPTIONS (writetime_of 's'),
  ADD COLUMN fl_ttl integer OPTIONS (ttl_of 'fl');

-- reads: WRITETIME("v") and TTL("v") in the SELECT list
EXPLAIN (VERBOSE, COSTS OFF) SELECT k, c, v, v_wt, v_ttl, v_at FROM wm.kv WHERE k = 1;
-- Cassandra accepts them neither in WHERE nor in ORDER BY: both stay local
EXPLAIN (VERBOSE, COSTS OFF) SELECT c, v FROM wm.kv WHERE k = 1 AND v_ttl > 10 AND v_wt < 5;
EXPLAIN (VERBOSE, COSTS OFF) SELECT c, v FROM wm.kv WHERE k = 1 ORDER BY v_wt;

-- writes: a metadata column named by the INSERT is USING TTL ? / TIMESTAMP ?
EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO wm.kv (k, c, v, v_wt, v_ttl) VALUES (1, 1, 'a', 1000, 60);
EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO wm.kv (k, c, v, v_ttl) VALUES (1, 1, 'a', 60);
EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO wm.kv (k, c, v, v_at) VALUES (1, 1, 'a', now());
EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO wm.kv (k, c, v) VALUES (1, 1, 'a');

-- an explicit write time is read back as written; NULL TTL: none
INSERT INTO wm.kv (k, c, v, v_wt) VALUES (1, 1, 'a', 1234567);
SELECT c, v, v_wt, v_ttl, v_at = '1970-01-01 00:00:01.234567+00' AS v_at_right FROM wm.kv WHERE k = 1 AND c = 1;
-- as timestamptz: microseconds since 1970-01-01 UTC, both ways
INSERT INTO wm.kv (k, c, v, v_at) VALUES (1, 2, 'b', '2024-05-06 07:08:09.123456+00');
SELECT c, v_wt, v_at = '2024-05-06 07:08:09.123456+00' AS same_instant FROM wm.kv WHERE k = 1 AND c = 2;

-- no write time given: the client-side one, within seconds of now
SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS t0 \gset
INSERT INTO wm.kv (k, c, v) VALUES (1, 3, 'c');
SELECT v_wt BETWEEN :t0 - 5000000 AND (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + 5000000 AS near_now,
       v_at = 'epoch'::timestamptz + v_wt * interval '1 microsecond' AS same_as_bigint,
       v_ttl IS NULL AS no_ttl
  FROM wm.kv WHERE k = 1 AND c = 3;

-- a TTL given is read back, counting down from it
INSERT INTO wm.kv (k, c, v, v_ttl) VALUES (1, 4, 'd', 1000);
SELECT v_ttl BETWEEN 990 AND 1000 AS ttl_read_back FROM wm.kv WHERE k = 1 AND c = 4;
-- the largest TTL Cassandra accepts (20 years) and 0 (none)
INSERT INTO wm.kv (k, c, v, v_ttl) VALUES (1, 5, 'e', 630720000), (1, 6, 'f', 0);
SELECT c, v_ttl > 630700000 AS max_ttl, v_ttl IS NULL AS no_ttl FROM wm.kv WHERE k = 1 AND c IN (5, 6) ORDER BY c;
-- the TTL and write time apply to every column the statement writes
INSERT INTO wm.kv (k, c, v, w, fl, v_ttl, v_wt) VALUES (1, 7, 'g', 7, '{1,2}', 2000, 7777);
SELECT v_wt, fl_ttl BETWEEN 1990 AND 2000 AS fl_has_the_ttl FROM wm.kv WHERE k = 1 AND c = 7;
-- a static column's write time
INSERT INTO wm.kv (k, c, s) VALUES (1, 7, 70);
SELECT DISTINCT s, s_wt BETWEEN :t0 - 5000000 AND (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + 5000000 AS near_now
  FROM wm.kv WHERE k = 1;

-- last write wins by timestamp: an older explicit write time loses ...
INSERT INTO wm.kv (k, c, v) VALUES (1, 8, 'new');
INSERT INTO wm.kv (k, c, v, v_wt) VALUES (1, 8, 'old', 1000);
SELECT v FROM wm.kv WHERE k = 1 AND c = 8;
-- ... and one a minute ahead wins over a later write without one
SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + 60000000 AS ahead \gset
INSERT INTO wm.kv (k, c, v, v_wt) VALUES (1, 8, 'ahead', :ahead);
INSERT INTO wm.kv (k, c, v) VALUES (1, 8, 'now');
SELECT v, v_wt = :ahead AS ahead_kept FROM wm.kv WHERE k = 1 AND c = 8;

-- several rows of one INSERT (a batch of one partition), each with its own
-- TTL and write time, or none
INSERT INTO wm.kv (k, c, v, v_wt, v_ttl)
  SELECT 3, i, 'r' || i, CASE WHEN i % 3 <> 0 THEN 5000 + i END,
         CASE WHEN i % 2 = 0 THEN 3000 + i END
    FROM generate_series(1, 30) i;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE i % 3 <> 0 AND v_wt = 5000 + i) AS wt_given,
       count(*) FILTER (WHERE i % 3 = 0 AND v_wt > 1000000000000000) AS wt_default,
       count(*) FILTER (WHERE i % 2 = 0 AND v_ttl BETWEEN 2990 + i AND 3000 + i) AS ttl_given,
       count(*) FILTER (WHERE i % 2 = 1 AND v_ttl IS NULL) AS ttl_none
  FROM (SELECT c AS i, v_wt, v_ttl FROM wm.kv WHERE k = 3) s;
-- rows of several partitions
INSERT INTO wm.kv (k, c, v, v_wt, v_ttl)
  SELECT 10 + i % 4, i, 'p', 9000 + i, CASE WHEN i > 5 THEN 4000 END
    FROM generate_series(1, 12) i;
SELECT count(*) FILTER (WHERE v_wt = 9000 + c) AS wt_given,
       count(*) FILTER (WHERE (c > 5) = coalesce(v_ttl BETWEEN 3990 AND 4000, false)) AS ttl_right
  FROM wm.kv WHERE k IN (10, 11, 12, 13);

-- ANALYZE reads them too
ANALYZE wm.kv;
SELECT attname FROM pg_stats WHERE schemaname = 'wm' AND tablename = 'kv' AND attname LIKE 'v\_%' ORDER BY 1;

-- a row with TTL 2 disappears (waited for at most 15 seconds)
INSERT INTO wm.kv (k, c, v, v_ttl) VALUES (2, 1, 'short-lived', 2);
SELECT count(*) AS before_expiry FROM wm.kv WHERE k = 2;
DO $$
DECLARE
  n int;
BEGIN
  FOR i IN 1 .. 60 LOOP
    SELECT count(*) INTO n FROM wm.kv WHERE k = 2;
    EXIT WHEN n = 0;
    PERFORM pg_sleep(0.25);
  END LOOP;
  RAISE NOTICE 'expired: %', n = 0;
END $$;

-- with the table option ttl: a NULL TTL column means the option's TTL
ALTER FOREIGN TABLE wm.kv OPTIONS (ADD ttl '5000');
INSERT INTO wm.kv (k, c, v, v_ttl) VALUES (4, 1, 'x', NULL), (4, 2, 'y', 100), (4, 3, 'z', 0);
INSERT INTO wm.kv (k, c, v) VALUES (4, 4, 'o');
SELECT c, v_ttl BETWEEN 4990 AND 5000 AS option_ttl, v_ttl BETWEEN 90 AND 100 AS given_ttl,
       v_ttl IS NULL AS no_ttl
  FROM wm.kv WHERE k = 4 ORDER BY c;
ALTER FOREIGN TABLE wm.kv OPTIONS (DROP ttl);

-- UPDATE: the assigned metadata column gives USING TTL/TIMESTAMP of the
-- assigned columns (not a direct modify)
EXPLAIN (VERBOSE, COSTS OFF) UPDATE wm.kv SET v = 'u', v_ttl = 500, v_wt = 4444 WHERE k = 1 AND c = 1;
-- an UPDATE older than the row's write time (1234567) loses too
UPDATE wm.kv SET v = 'u', v_ttl = 500, v_wt = 4444 WHERE k = 1 AND c = 1;
SELECT v, v_wt, v_ttl FROM wm.kv WHERE k = 1 AND c = 1;
UPDATE wm.kv SET v = 'u', v_ttl = 500, v_wt = 2000000 WHERE k = 1 AND c = 1;
SELECT v, v_wt, v_ttl BETWEEN 490 AND 500 AS ttl_set FROM wm.kv WHERE k = 1 AND c = 1;
-- a TTL reset on the value already there
UPDATE wm.kv SET v = v, v_ttl = 800 WHERE k = 1 AND c = 1;
SELECT v, v_ttl BETWEEN 790 AND 800 AS ttl_reset, v_wt > 2000000 AS rewritten FROM wm.kv WHERE k = 1 AND c = 1;
-- without a metadata column, a direct modify as before
EXPLAIN (VERBOSE, COSTS OFF) UPDATE wm.kv SET v = 'u2' WHERE k = 1 AND c = 1;
-- a condition on a metadata column is checked locally: no direct modify
EXPLAIN (VERBOSE, COSTS OFF) UPDATE wm.kv SET v = 'u3' WHERE k = 1 AND c = 1 AND v_ttl > 100;
EXPLAIN (VERBOSE, COSTS OFF) DELETE FROM wm.kv WHERE k = 1 AND c = 3 AND v_wt < 1000;
DELETE FROM wm.kv WHERE k = 1 AND c = 3 AND v_wt < 1000;
SELECT count(*) AS kept FROM wm.kv WHERE k = 1 AND c = 3;
-- DELETE ... RETURNING returns the metadata as the scan read it
DELETE FROM wm.kv WHERE k = 1 AND c = 2 RETURNING c, v, v_wt;

-- write_mode 'on_commit': the values are kept with the write
ALTER FOREIGN TABLE wm.kv OPTIONS (ADD write_mode 'on_commit');
BEGIN;
INSERT INTO wm.kv (k, c, v, v_wt, v_ttl) VALUES (5, 1, 'later', 5555, 700), (5, 2, 'later', NULL, NULL);
COMMIT;
ALTER FOREIGN TABLE wm.kv OPTIONS (DROP write_mode);
SELECT c, v_wt = 5555 AS wt_given, v_wt > 1000000000000000 AS wt_default,
       v_ttl BETWEEN 690 AND 700 AS ttl_given, v_ttl IS NULL AS no_ttl
  FROM wm.kv WHERE k = 5 ORDER BY c;

-- errors in values, raised before anything is sent
SELECT wm.err($q$INSERT INTO wm.kv (k, c, v, v_ttl) VALUES (6, 1, 'x', -1)$q$);
SELECT wm.err($q$INSERT INTO wm.kv (k, c, v, v_ttl) VALUES (6, 1, 'x', 630720001)$q$);
SELECT wm.err($q$INSERT INTO wm.kv (k, c, v, v_wt) VALUES (6, 1, 'x', -9223372036854775808)$q$);
SELECT wm.err($q$INSERT INTO wm.kv (k, c, v, v_at) VALUES (6, 1, 'x', 'infinity')$q$);
SELECT wm.err($q$UPDATE wm.kv SET v = 'x', v_ttl = -5 WHERE k = 1 AND c = 1$q$);
SELECT count(*) AS nothing_written FROM wm.kv WHERE k = 6;
-- errors in statements
SELECT wm.err($q$INSERT INTO wm.kv (k, c, w, v_ttl) VALUES (6, 1, 1, 10)$q$);
SELECT wm.err($q$UPDATE wm.kv SET v_ttl = 10 WHERE k = 1 AND c = 1$q$);
SELECT wm.err($q$INSERT INTO wm.kv (k, c, v, v_wt, v_at) VALUES (6, 1, 'x', 1, now())$q$);
ALTER FOREIGN TABLE wm.kv OPTIONS (ADD if_not_exists 'true');
SELECT wm.err($q$INSERT INTO wm.kv (k, c, v, v_wt) VALUES (6, 1, 'x', 1)$q$);
ALTER FOREIGN TABLE wm.kv OPTIONS (DROP if_not_exists);

-- errors in options, when they are set
SELECT wm.err($q$ALTER FOREIGN TABLE wm.kv ADD COLUMN bad bigint OPTIONS (writetime_of 'v', ttl_of 'v')$q$);
SELECT wm.err($q$ALTER FOREIGN TABLE wm.kv ADD COLUMN bad bigint OPTIONS (writetime_of 'v', kind 'regular')$q$);
SELECT wm.err($q$ALTER FOREIGN TABLE wm.kv ADD COLUMN bad bigint OPTIONS (writetime_of '')$q$);
SELECT wm.err($q$ALTER FOREIGN TABLE wm.kv ALTER COLUMN v_wt OPTIONS (ADD column_name 'w')$q$);
-- ... and against the table's layout, when it is first used
CREATE FUNCTION wm.bad(decl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  EXECUTE format($f$CREATE FOREIGN TABLE wm.bad (k int, c int, v text, w int, l int[], fl int[], %s) SERVER cass OPTIONS (keyspace 'regress_wmeta', table 'kv')$f$, decl);
  r := wm.err('SELECT * FROM wm.bad');
  DROP FOREIGN TABLE wm.bad;
  RETURN r;
END $$;
SELECT wm.bad($d$x bigint OPTIONS (writetime_of 'nope')$d$);
SELECT wm.bad($d$x bigint OPTIONS (writetime_of 'k')$d$);
SELECT wm.bad($d$x integer OPTIONS (ttl_of 'c')$d$);
SELECT wm.bad($d$x integer OPTIONS (ttl_of 'l')$d$);
SELECT wm.bad($d$x integer OPTIONS (ttl_of 'fl')$d$);
SELECT wm.bad($d$x bigint OPTIONS (ttl_of 'v')$d$);
SELECT wm.bad($d$x text OPTIONS (writetime_of 'v')$d$);
SELECT wm.bad($d$x bigint OPTIONS (writetime_of 'v'), y bigint OPTIONS (writetime_of 'x')$d$);
SELECT wm.bad($d$x bigint OPTIONS (writetime_of 'x')$d$);
CREATE FOREIGN TABLE wm.bad_hits (page text, views bigint, views_wt bigint OPTIONS (writetime_of 'views'))
  SERVER cass OPTIONS (keyspace 'regress_wmeta', table 'hits');
SELECT wm.err('SELECT * FROM wm.bad_hits');
DROP FOREIGN TABLE wm.bad_hits;

DROP SCHEMA wm CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_wmeta');

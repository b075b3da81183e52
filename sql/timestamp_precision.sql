--
-- Option timestamp_precision: what a written timestamp with digits below the
-- millisecond becomes in Cassandra, whose timestamps are milliseconds:
-- 'truncate' (the default: floored, as the Java driver does), 'round' (as a
-- cast to timestamptz(3)) or 'error'.  Set on the server, the foreign table
-- or the column (column > table > server).  Values compared with stored ones
-- (pushed-down predicates, the key of a direct UPDATE/DELETE) are never
-- moved, so answers stay PostgreSQL's.  Also: the hint of each value that
-- is still refused.
--
\i sql/include/cql_server.sql
\set ks regress_tsprec
\i sql/include/keyspace.sql
SET TimeZone = 'UTC';

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_tsprec.t (k int, c int, ts timestamp, tl list<timestamp>, PRIMARY KEY ((k), c))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_tsprec.ev (k int, at timestamp, v text, PRIMARY KEY ((k), at))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_tsprec.bk (day timestamp, at timestamp, v text, PRIMARY KEY ((day), at))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_tsprec.r (k int PRIMARY KEY, l list<int>, s set<text>, ip inet, d decimal, n varint)');
END $$;
-- a server of its own, so that its options concern this suite only
CREATE SERVER tp_srv FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_host');
CREATE USER MAPPING FOR CURRENT_USER SERVER tp_srv;
CREATE SCHEMA tp;
IMPORT FOREIGN SCHEMA regress_tsprec FROM SERVER tp_srv INTO tp;

-- SQLSTATE and hint of an error, in one line (not the message: values
-- of now() in it would change from run to run)
CREATE FUNCTION tp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  st text; hint text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, hint = PG_EXCEPTION_HINT;
  RETURN st || coalesce(' HINT: ' || nullif(hint, ''), '');
END $$;

-- bad values are refused where they are set (HV024), naming the values
CREATE SERVER tp_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (timestamp_precision 'nearest');
SELECT tp.err($$CREATE SERVER tp_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (timestamp_precision 'nearest')$$);
SELECT tp.err($$ALTER FOREIGN TABLE tp.t OPTIONS (ADD timestamp_precision 'TRUNCATE')$$);
SELECT tp.err($$ALTER FOREIGN TABLE tp.t ALTER COLUMN ts OPTIONS (ADD timestamp_precision '')$$);
SELECT tp.err($$CREATE USER MAPPING FOR PUBLIC SERVER tp_srv OPTIONS (timestamp_precision 'round')$$);

-- default 'truncate': digits below the millisecond are dropped; before 1970
-- too toward the past (floor), as the Java driver's Instant.toEpochMilli()
-- and date_trunc('milliseconds') do
INSERT INTO tp.t (k, c, ts) VALUES
  (1, 1, '2024-05-06 07:08:09.123456+00'),
  (1, 2, '2024-05-06 07:08:09.999999+00'),
  (1, 3, '1969-12-31 23:59:59.999500+00'),
  (1, 4, '1900-01-01 00:00:00.000999+00'),
  (1, 5, '2024-05-06 07:08:09.123+00');
SELECT c, ts FROM tp.t WHERE k = 1 ORDER BY c;
-- RETURNING shows the value as stored
INSERT INTO tp.t (k, c, ts, tl) VALUES (1, 6, '2024-05-06 07:08:09.123456+00', '{2024-05-06 07:08:09.999999+00}') RETURNING c, ts, tl;
-- a column declared timestamp (without time zone: UTC wall clock) likewise
CREATE FOREIGN TABLE tp.t_wall (k int, c int, ts timestamp) SERVER tp_srv OPTIONS (keyspace 'regress_tsprec', "table" 't');
INSERT INTO tp.t_wall (k, c, ts) VALUES (9, 1, '2024-05-06 07:08:09.123456'), (9, 2, '1969-12-31 23:59:59.999999');
SELECT c, ts FROM tp.t_wall WHERE k = 9 ORDER BY c;
-- what date_trunc('milliseconds') gives
SELECT c, ts = date_trunc('milliseconds', v) AS as_date_trunc
FROM tp.t JOIN (VALUES (1, timestamptz '2024-05-06 07:08:09.123456+00'), (2, '2024-05-06 07:08:09.999999+00'),
                       (3, '1969-12-31 23:59:59.999500+00'), (4, '1900-01-01 00:00:00.000999+00')) x(c2, v) ON c = c2
WHERE k = 1 ORDER BY c;
-- Cassandra's own reading of the stored milliseconds (negative before 1970)
SELECT r->>'c' AS c, r->>'ms' AS ms
FROM cql_query('cass', 'SELECT c, blobAsBigint(timestampAsBlob(ts)) AS ms FROM regress_tsprec.t WHERE k = 1') r
ORDER BY (r->>'c')::int;

-- now() and clock_timestamp(), which carry microseconds, can be written
BEGIN;
INSERT INTO tp.t (k, c, ts, tl) VALUES (2, 1, now(), ARRAY[now(), now() - interval '1.5 ms']);
SELECT ts = date_trunc('milliseconds', now()) AS now_truncated,
       tl = ARRAY[date_trunc('milliseconds', now()), date_trunc('milliseconds', now() - interval '1.5 ms')] AS list_truncated
FROM tp.t WHERE k = 2 AND c = 1;
COMMIT;
CREATE TEMP TABLE clock AS SELECT clock_timestamp() AS t;
INSERT INTO tp.t (k, c, ts) SELECT 2, 2, t FROM clock;
SELECT ts = date_trunc('milliseconds', (SELECT t FROM clock)) AS clock_truncated FROM tp.t WHERE k = 2 AND c = 2;
-- UPDATE (here one CQL statement by key: direct modify) and UPDATE of rows
-- read first
EXPLAIN (COSTS OFF) UPDATE tp.t SET ts = '2024-01-01 00:00:00.000700+00' WHERE k = 2 AND c = 2;
UPDATE tp.t SET ts = '2024-01-01 00:00:00.000700+00' WHERE k = 2 AND c = 2;
UPDATE tp.t SET ts = '2024-01-01 00:00:00.002700+00' WHERE k = 2 AND c = 1 AND ts IS NOT NULL;
SELECT c, ts FROM tp.t WHERE k = 2 ORDER BY c;
-- write_mode 'on_commit': encoded by the statement, sent at COMMIT
ALTER FOREIGN TABLE tp.t OPTIONS (ADD write_mode 'on_commit');
BEGIN;
INSERT INTO tp.t (k, c, ts) VALUES (2, 3, '2024-05-06 07:08:09.555555+00');
COMMIT;
ALTER FOREIGN TABLE tp.t OPTIONS (DROP write_mode);
SELECT c, ts FROM tp.t WHERE k = 2 AND c = 3;
-- INSERT ... SELECT in batches (the bulk path; what cqlbridge apply and sync
-- send through): 250 rows 333 microseconds apart
INSERT INTO tp.t (k, c, ts)
SELECT 3, g, timestamptz '2024-05-06 07:08:09+00' + g * interval '333 microseconds' FROM generate_series(1, 250) g;
SELECT count(*) AS rows_as_date_trunc FROM tp.t
WHERE k = 3 AND ts = date_trunc('milliseconds', timestamptz '2024-05-06 07:08:09+00' + c * interval '333 microseconds');
-- COPY FROM into the foreign table (rows staged, then sent in batches as
-- above: sql/copy.sql), and COPY into a table and INSERT ... SELECT from it
COPY tp.t (k, c, ts) FROM stdin;
4	3	2024-05-06 07:08:09.123456+00
4	4	1969-07-20 20:17:40.000001+00
\.
CREATE TEMP TABLE copied (k int, c int, ts timestamptz);
COPY copied FROM stdin;
4	1	2024-05-06 07:08:09.123456+00
4	2	1969-07-20 20:17:40.000001+00
\.
INSERT INTO tp.t (k, c, ts) SELECT * FROM copied;
SELECT c, ts FROM tp.t WHERE k = 4 ORDER BY c;

-- a key column: two values within one millisecond are one key, so the
-- second write overwrites the first row (one row results)
INSERT INTO tp.ev (k, at, v) VALUES (1, '2024-01-01 00:00:00.000100+00', 'first');
INSERT INTO tp.ev (k, at, v) VALUES (1, '2024-01-01 00:00:00.000900+00', 'second');
-- ... also within one statement (one batch): the later row wins
INSERT INTO tp.ev (k, at, v) VALUES (2, '2024-01-01 00:00:00.000100+00', 'first'), (2, '2024-01-01 00:00:00.000900+00', 'second');
SELECT k, at, v FROM tp.ev ORDER BY k, at;

-- predicates compare exactly: a sub-millisecond constant is not sent to
-- Cassandra (a local filter) and matches no stored value, as in PostgreSQL
EXPLAIN (COSTS OFF) SELECT v FROM tp.ev WHERE k = 1 AND at = '2024-01-01 00:00:00.000900+00';
SELECT count(*) FROM tp.ev WHERE k = 1 AND at = '2024-01-01 00:00:00.000900+00';
SELECT count(*) FROM tp.ev WHERE k = 1 AND at = '2024-01-01 00:00:00+00';
SELECT count(*) FROM tp.ev WHERE k = 1 AND at >= '2024-01-01 00:00:00.000100+00';
SELECT count(*) FROM tp.ev WHERE k = 1 AND at <= '2024-01-01 00:00:00.000100+00';
-- ... and a runtime value (a parameter, sent to Cassandra) likewise: an
-- equality that no millisecond value satisfies reads nothing, a range bound
-- moves to the millisecond that selects the same rows
PREPARE at_eq(timestamptz) AS SELECT v FROM tp.ev WHERE k = 1 AND at = $1;
PREPARE at_ge(timestamptz) AS SELECT v FROM tp.ev WHERE k = 1 AND at >= $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF, VERBOSE) EXECUTE at_eq('2024-01-01 00:00:00.000900+00');
EXECUTE at_eq('2024-01-01 00:00:00.000900+00');
EXECUTE at_eq('2024-01-01 00:00:00+00');
EXECUTE at_ge('2024-01-01 00:00:00.000100+00');
EXECUTE at_ge('2023-12-31 23:59:59.999900+00');
RESET plan_cache_mode;
-- a direct DELETE/UPDATE by a sub-millisecond key changes nothing, as no row
-- has that key (the stored row at .000 stays)
DELETE FROM tp.ev WHERE k = 1 AND at = '2024-01-01 00:00:00.000900+00';
UPDATE tp.ev SET v = 'changed' WHERE k = 1 AND at = '2024-01-01 00:00:00.000900+00';
SELECT k, at, v FROM tp.ev WHERE k = 1;

-- 'round' on the table: the nearest millisecond, as ::timestamptz(3) (a
-- tie goes away from 2000-01-01, PostgreSQL's epoch)
ALTER FOREIGN TABLE tp.t OPTIONS (ADD timestamp_precision 'round');
INSERT INTO tp.t (k, c, ts) VALUES
  (5, 1, '2024-05-06 07:08:09.123456+00'),
  (5, 2, '2024-05-06 07:08:09.123500+00'),
  (5, 3, '2024-05-06 07:08:09.999999+00'),
  (5, 4, '1990-01-01 00:00:00.000500+00'),
  (5, 5, '1969-12-31 23:59:59.999500+00'),
  (5, 6, '1969-12-31 23:59:59.999600+00');
SELECT c, ts FROM tp.t WHERE k = 5 ORDER BY c;
SELECT c, ts = v::timestamptz(3) AS as_timestamptz_3
FROM tp.t JOIN (VALUES (1, timestamptz '2024-05-06 07:08:09.123456+00'), (2, '2024-05-06 07:08:09.123500+00'),
                       (3, '2024-05-06 07:08:09.999999+00'), (4, '1990-01-01 00:00:00.000500+00'),
                       (5, '1969-12-31 23:59:59.999500+00'), (6, '1969-12-31 23:59:59.999600+00')) x(c2, v) ON c = c2
WHERE k = 5 ORDER BY c;
BEGIN;
INSERT INTO tp.t (k, c, ts, tl) VALUES (5, 7, now(), ARRAY[now()]);
SELECT ts = now()::timestamptz(3) AS now_rounded, tl = ARRAY[now()::timestamptz(3)] AS list_rounded
FROM tp.t WHERE k = 5 AND c = 7;
COMMIT;
UPDATE tp.t SET ts = '2024-01-01 00:00:00.000700+00' WHERE k = 5 AND c = 1;
SELECT ts FROM tp.t WHERE k = 5 AND c = 1;
UPDATE tp.t SET ts = '2024-01-01 00:00:00.000300+00' WHERE k = 5 AND c = 2 RETURNING c, ts;

-- 'error' on the column wins over the table's 'round': refused (22003),
-- nothing written; whole milliseconds still go
ALTER FOREIGN TABLE tp.t ALTER COLUMN ts OPTIONS (ADD timestamp_precision 'error');
INSERT INTO tp.t (k, c, ts) VALUES (6, 1, '2024-05-06 07:08:09.123456+00');
SELECT tp.err($$INSERT INTO tp.t (k, c, ts) VALUES (6, 1, date_trunc('milliseconds', now()) - interval '0.5 ms')$$);
SELECT tp.err($$UPDATE tp.t SET ts = '2024-05-06 07:08:09.123456+00' WHERE k = 5 AND c = 1$$);
SELECT tp.err($$UPDATE tp.t SET ts = '2024-05-06 07:08:09.123456+00' WHERE k = 5 AND ts IS NOT NULL$$);
SELECT tp.err($$INSERT INTO tp.t (k, c, ts) SELECT 6, g, now() - g * interval '0.5 ms' FROM generate_series(1, 10) g$$);
-- (the list column has no option of its own: the table's 'round')
INSERT INTO tp.t (k, c, ts, tl) VALUES (6, 2, '2024-05-06 07:08:09.123+00', ARRAY[timestamptz '2024-05-06 07:08:09.123756+00']);
SELECT c, ts, tl FROM tp.t WHERE k = 6 ORDER BY c;
ALTER FOREIGN TABLE tp.t ALTER COLUMN ts OPTIONS (DROP timestamp_precision);
ALTER FOREIGN TABLE tp.t OPTIONS (DROP timestamp_precision);

-- the server's option applies to its tables without one, the table's wins
ALTER SERVER tp_srv OPTIONS (ADD timestamp_precision 'error');
SELECT tp.err($$INSERT INTO tp.t (k, c, ts) VALUES (7, 1, '2024-05-06 07:08:09.123456+00')$$);
ALTER FOREIGN TABLE tp.t OPTIONS (ADD timestamp_precision 'truncate');
INSERT INTO tp.t (k, c, ts) VALUES (7, 2, '2024-05-06 07:08:09.123456+00');
ALTER FOREIGN TABLE tp.t OPTIONS (DROP timestamp_precision);
ALTER SERVER tp_srv OPTIONS (SET timestamp_precision 'round');
INSERT INTO tp.t (k, c, ts) VALUES (7, 3, '2024-05-06 07:08:09.123856+00');
SELECT c, ts FROM tp.t WHERE k = 7 ORDER BY c;

-- a bucket computed from a rounded source is the bucket of the stored value
-- (the last half millisecond of a day is stored as the next midnight)
ALTER FOREIGN TABLE tp.bk ALTER COLUMN day OPTIONS (ADD bucket 'day', ADD bucket_of 'at');
INSERT INTO tp.bk (at, v) VALUES ('2024-01-01 23:59:59.999600+00', 'rounded up'), ('2024-01-01 23:59:59.999400+00', 'rounded down');
SELECT day, at, v FROM tp.bk WHERE at >= '2024-01-01' AND at < '2024-01-03' ORDER BY at;
SELECT v FROM tp.bk WHERE at >= '2024-01-02' AND at < '2024-01-03';
ALTER SERVER tp_srv OPTIONS (DROP timestamp_precision);

-- infinite timestamps stay refused, with their own hint
INSERT INTO tp.t (k, c, ts) VALUES (8, 1, 'infinity');

-- the refusals that stay each name their rule (SQLSTATE 22003)
INSERT INTO tp.r (k, l) VALUES (1, '{1,NULL,3}');
INSERT INTO tp.r (k, s) VALUES (1, '{a,NULL}');
INSERT INTO tp.r (k, ip) VALUES (1, '10.0.0.0/8');
INSERT INTO tp.r (k, ip) VALUES (1, '10.0.0.0/8'::cidr);
INSERT INTO tp.r (k, d) VALUES (1, 'NaN');
INSERT INTO tp.r (k, d) VALUES (1, '-Infinity');
INSERT INTO tp.r (k, n) VALUES (1, 1.5);
SELECT tp.err($$INSERT INTO tp.r (k, d) VALUES (1, 'NaN')$$);
SELECT tp.err($$INSERT INTO tp.r (k, l) VALUES (1, '{1,NULL,3}')$$);
SELECT tp.err($$INSERT INTO tp.r (k, ip) VALUES (1, '10.0.0.0/8')$$);
-- ... and what the hints suggest is stored
INSERT INTO tp.r (k, l, s, ip, d) VALUES (1, array_remove('{1,NULL,3}'::int[], NULL), '{a}', host('10.0.0.0/8'::cidr)::inet, NULLIF('NaN'::numeric, 'NaN'));
SELECT k, l, s, ip, d FROM tp.r;

SET client_min_messages = warning;
DROP SCHEMA tp CASCADE;
DROP USER MAPPING FOR CURRENT_USER SERVER tp_srv;
DROP SERVER tp_srv;
RESET client_min_messages;

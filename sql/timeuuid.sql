--
-- Time-ordered keys from SQL (issue 41): cql_timeuuid_now(),
-- cql_timeuuid(t), cql_min_timeuuid(t), cql_max_timeuuid(t) and
-- cql_timeuuid_time(id), checked against Cassandra's now(), minTimeuuid(),
-- maxTimeuuid() and toTimestamp(); a range such as
-- commentid > cql_min_timeuuid(now() - interval '1 hour') on a timeuuid
-- clustering column is sent to Cassandra as a clustering range with bound
-- values, and refused when it could only be checked locally (PostgreSQL
-- compares uuids bytewise, Cassandra timeuuids by time).
--
\i sql/include/cql_server.sql
\set ks regress_timeuuid
\i sql/include/keyspace.sql
SET TimeZone = 'UTC';

-- the bounds are Cassandra's, byte for byte (microseconds dropped, as a
-- CQL timestamp has none)
SELECT cql_min_timeuuid('2013-01-01 00:05+00') AS lo,
       cql_max_timeuuid('2013-01-01 00:05+00') AS hi,
       cql_max_timeuuid('2013-01-01 00:05:00.000999+00') = cql_max_timeuuid('2013-01-01 00:05+00') AS same_ms;
SELECT r->>'lo' AS lo, r->>'hi' AS hi FROM cql_query('cass',
  'SELECT minTimeuuid(?) AS lo, maxTimeuuid(?) AS hi FROM system.local',
  timestamptz '2013-01-01 00:05+00', timestamptz '2013-01-01 00:05+00') r;
-- for many times, before and after 1970, and toTimestamp of both
SELECT count(*) AS times,
       count(*) FILTER (WHERE (r->>'lo')::uuid = cql_min_timeuuid(t)
                          AND (r->>'hi')::uuid = cql_max_timeuuid(t)) AS bounds_equal,
       count(*) FILTER (WHERE (r->>'tlo')::timestamptz = cql_timeuuid_time(cql_min_timeuuid(t))) AS time_equal
FROM (SELECT timestamptz '1600-01-01 00:00+00' + g * interval '3 years 17 days 5 hours 1.234 seconds' AS t
      FROM generate_series(0, 200) g) s,
     LATERAL cql_query('cass',
       'SELECT minTimeuuid(?) AS lo, maxTimeuuid(?) AS hi, toTimestamp(minTimeuuid(?)) AS tlo FROM system.local',
       t, t, t) r;
-- the time of an id is its millisecond, rounded down
SELECT cql_timeuuid_time(cql_max_timeuuid('2024-05-06 07:08:09.123456+00')) AS t_max,
       cql_timeuuid_time(cql_timeuuid('2024-05-06 07:08:09.123999+00')) AS t_new;
-- a new id of a time: version 1, the RFC 4122 variant, distinct each call
SELECT count(DISTINCT id) AS distinct_ids,
       bool_and(substr(id::text, 15, 1) = '1') AS version_1,
       bool_and(substr(id::text, 20, 1) IN ('8', '9', 'a', 'b')) AS variant,
       bool_and(cql_timeuuid_time(id) = '2020-02-29 12:00:00.001+00') AS time
FROM (SELECT cql_timeuuid('2020-02-29 12:00:00.001999+00') AS id FROM generate_series(1, 100)) s;

-- errors
SELECT cql_timeuuid_time('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
SELECT cql_min_timeuuid('infinity');
SELECT cql_max_timeuuid('1582-10-14 23:59:59+00');
SELECT cql_timeuuid('6000-01-01+00');
-- NULL in, NULL out
SELECT cql_min_timeuuid(NULL) IS NULL AS min_null, cql_timeuuid_time(NULL) IS NULL AS time_null;

-- comments by video, newest first, as in Cassandra's sample schemas
SELECT cql_execute('cass', 'CREATE TABLE regress_timeuuid.comments (
  videoid uuid, commentid timeuuid, body text,
  PRIMARY KEY ((videoid), commentid)) WITH CLUSTERING ORDER BY (commentid DESC)');
CREATE FOREIGN TABLE comments (videoid uuid, commentid uuid, body text)
  SERVER cass OPTIONS (keyspace 'regress_timeuuid', "table" 'comments');
\set v1 '''11111111-1111-1111-1111-111111111111'''
\set v2 '''22222222-2222-2222-2222-222222222222'''
-- ids of known times (one in the first and one in the last microsecond of
-- a millisecond), and ids of the last hour
INSERT INTO comments VALUES
  (:v1, cql_timeuuid('2024-01-01 09:59:59.999999+00'), 'a 09:59:59.999999'),
  (:v1, cql_timeuuid('2024-01-01 10:00:00.000000+00'), 'b 10:00:00.000000'),
  (:v1, cql_timeuuid('2024-01-01 10:00:00.000900+00'), 'c 10:00:00.000900'),
  (:v1, cql_timeuuid('2024-01-01 10:30:00+00'), 'd 10:30'),
  (:v1, cql_timeuuid('2024-01-01 11:00:00.000999+00'), 'e 11:00:00.000999'),
  (:v1, cql_timeuuid('2024-01-01 11:00:00.001+00'), 'f 11:00:00.001'),
  (:v1, cql_timeuuid(now() - interval '2 hours'), 'g 2 hours ago'),
  (:v1, cql_timeuuid(now() - interval '50 minutes'), 'h 50 minutes ago'),
  (:v1, cql_timeuuid_now(), 'i now'),
  (:v2, cql_timeuuid(now() - interval '10 minutes'), 'j other video');
-- a comment Cassandra made with now()
SELECT cql_execute('cass', 'INSERT INTO regress_timeuuid.comments (videoid, commentid, body)
  VALUES (11111111-1111-1111-1111-111111111111, now(), ''k cassandra now()'')');

-- the comments of the last hour: one clustering range, its bound a value
-- computed once by the executor, never written into the CQL
EXPLAIN (VERBOSE, COSTS OFF)
SELECT body FROM comments
WHERE videoid = :v1 AND commentid > cql_min_timeuuid(now() - interval '1 hour');
SELECT body FROM comments
WHERE videoid = :v1 AND commentid > cql_min_timeuuid(now() - interval '1 hour');
-- Cassandra's own answer to the same question
SELECT r->>'body' AS body FROM cql_query('cass',
  'SELECT body FROM regress_timeuuid.comments WHERE videoid = ? AND commentid > minTimeuuid(?)',
  :v1::uuid, date_trunc('milliseconds', now() - interval '1 hour')) r;

-- both bounds of constants: every id of the bounds' milliseconds is in
EXPLAIN (VERBOSE, COSTS OFF)
SELECT body FROM comments
WHERE videoid = :v1 AND commentid >= cql_min_timeuuid('2024-01-01 10:00+00')
  AND commentid <= cql_max_timeuuid('2024-01-01 11:00+00');
SELECT body, cql_timeuuid_time(commentid) AS t FROM comments
WHERE videoid = :v1 AND commentid >= cql_min_timeuuid('2024-01-01 10:00+00')
  AND commentid <= cql_max_timeuuid('2024-01-01 11:00+00');
-- the bound on the left, the operator commuted
SELECT body FROM comments
WHERE videoid = :v1 AND cql_max_timeuuid('2024-01-01 10:00+00') < commentid
  AND cql_min_timeuuid('2024-01-01 11:00+00') > commentid;
-- ORDER BY a uuid sorts bytewise in PostgreSQL; by time: cql_timeuuid_time()
SELECT body FROM comments
WHERE videoid = :v1 AND commentid < cql_min_timeuuid('2024-01-01 11:00:00.001+00')
ORDER BY cql_timeuuid_time(commentid), body;
-- a parameter
PREPARE since(uuid, timestamptz) AS
  SELECT count(*) FROM comments WHERE videoid = $1 AND commentid >= cql_min_timeuuid($2);
EXECUTE since(:v1, '2024-01-01 10:00+00');
EXECUTE since(:v1, now() - interval '1 day');
DEALLOCATE since;
-- the bytewise comparison PostgreSQL would make is no order of time: the
-- low bits of the time come first in a version 1 UUID (10:04 is "before"
-- 10:00 in bytes)
SELECT cql_min_timeuuid('2024-01-01 10:04+00') > cql_min_timeuuid('2024-01-01 10:00+00') AS bytewise_after,
       cql_timeuuid_time(cql_min_timeuuid('2024-01-01 10:04+00')) >
       cql_timeuuid_time(cql_min_timeuuid('2024-01-01 10:00+00')) AS by_time_after;
-- so the comments of 10:04 are missed when a uuid range is checked locally
INSERT INTO comments VALUES (:v2, cql_timeuuid('2024-01-01 10:04+00'), 'l 10:04');
CREATE TEMP TABLE local_copy AS SELECT * FROM comments WHERE videoid = :v2;
SELECT count(*) FILTER (WHERE commentid > cql_min_timeuuid('2024-01-01 10:00+00')) AS bytewise,
       count(*) FILTER (WHERE cql_timeuuid_time(commentid) >= '2024-01-01 10:00+00') AS by_time
FROM local_copy WHERE body = 'l 10:04';
SELECT body FROM comments WHERE videoid = :v2 AND commentid > cql_min_timeuuid('2024-01-01 10:00+00')
  AND commentid < cql_max_timeuuid('2024-01-01 11:00+00');

-- not sent (no partition key): refused, never compared bytewise
SELECT body FROM comments WHERE commentid > cql_min_timeuuid(now() - interval '1 hour');
SELECT body FROM comments WHERE videoid = :v1 AND (commentid > cql_min_timeuuid(now() - interval '1 hour') OR body = 'x');
-- compared by time instead: checked locally, the same rows as Cassandra's
SELECT body FROM comments
WHERE cql_timeuuid_time(commentid) >= date_trunc('milliseconds', now() - interval '1 hour')
ORDER BY body;
-- toTimestamp of every stored id
SELECT count(*) AS ids, count(*) FILTER (WHERE (r->>'t')::timestamptz = cql_timeuuid_time((r->>'commentid')::uuid)) AS equal
FROM cql_query('cass', 'SELECT commentid, toTimestamp(commentid) AS t FROM regress_timeuuid.comments') r;

-- ids of one session are increasing in Cassandra's order (a partition's
-- rows come in its clustering order, newest first)
INSERT INTO comments SELECT :v2, cql_timeuuid_now(), lpad(g::text, 4, '0') FROM generate_series(1, 300) g;
SELECT count(*) AS ids, bool_and(body < prev) AS newest_first
FROM (SELECT body, lag(body) OVER () AS prev FROM comments
      WHERE videoid = :v2 AND commentid > cql_min_timeuuid(now() - interval '5 minutes')) s
WHERE prev IS NOT NULL AND body ~ '^[0-9]';

-- a range DELETE is sent whole
EXPLAIN (VERBOSE, COSTS OFF)
DELETE FROM comments WHERE videoid = :v1 AND commentid < cql_min_timeuuid('2024-01-01 10:30+00');
DELETE FROM comments WHERE videoid = :v1 AND commentid < cql_min_timeuuid('2024-01-01 10:30+00');
SELECT body FROM comments WHERE videoid = :v1 AND commentid < cql_max_timeuuid('2024-01-01 11:00+00');

DROP FOREIGN TABLE comments;

--
-- UPDATE and DELETE sent as one CQL statement (direct modify) when the
-- WHERE clause names rows the way CQL can: a full primary key, a slice of
-- one partition, a whole partition.  Everything else reads the rows first.
-- Also: client-side write timestamps keep the session's order of writes.
--
\i sql/include/cql_server.sql
\set ks regress_direct
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_direct.ev (dev text, seq int, at timestamp, v text, w int, PRIMARY KEY ((dev), seq, at))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_direct.hits (page text PRIMARY KEY, views counter)');
END $$;
CREATE SCHEMA dm;
IMPORT FOREIGN SCHEMA regress_direct FROM SERVER cass INTO dm;
INSERT INTO dm.ev SELECT 'd' || d, s, timestamptz '2026-01-01 00:00:00+00' + s * interval '1 minute', 'v' || d || '.' || s, s
FROM generate_series(1, 3) d, generate_series(1, 10) s;

-- full primary key: one CQL UPDATE / DELETE, no read
EXPLAIN (VERBOSE, COSTS OFF)
UPDATE dm.ev SET v = 'new', w = 0 WHERE dev = 'd1' AND seq = 2 AND at = '2026-01-01 00:02:00+00';
UPDATE dm.ev SET v = 'new', w = 0 WHERE dev = 'd1' AND seq = 2 AND at = '2026-01-01 00:02:00+00';
SELECT seq, v, w FROM dm.ev WHERE dev = 'd1' AND seq = 2;
EXPLAIN (VERBOSE, COSTS OFF)
DELETE FROM dm.ev WHERE dev = 'd1' AND seq = 3 AND at = '2026-01-01 00:03:00+00';
DELETE FROM dm.ev WHERE dev = 'd1' AND seq = 3 AND at = '2026-01-01 00:03:00+00';
SELECT count(*) FROM dm.ev WHERE dev = 'd1';

-- a CQL UPDATE is an upsert: an absent key is created (documented)
UPDATE dm.ev SET v = 'upserted' WHERE dev = 'd9' AND seq = 1 AND at = '2026-01-01 00:00:00+00';
SELECT dev, seq, v, w FROM dm.ev WHERE dev = 'd9';
-- SET NULL removes the cell; a row made by UPDATE has no row marker, so
-- without a cell left it is gone (CQL semantics)
UPDATE dm.ev SET v = NULL WHERE dev = 'd9' AND seq = 1 AND at = '2026-01-01 00:00:00+00';
SELECT dev, seq, v FROM dm.ev WHERE dev = 'd9';

-- a slice of a partition: one CQL range delete (the tag reports 0 rows:
-- Cassandra does not say how many it removed)
EXPLAIN (VERBOSE, COSTS OFF)
DELETE FROM dm.ev WHERE dev = 'd2' AND seq >= 3 AND seq < 7;
DELETE FROM dm.ev WHERE dev = 'd2' AND seq >= 3 AND seq < 7;
SELECT seq FROM dm.ev WHERE dev = 'd2' ORDER BY seq;
-- a slice after an equality prefix
EXPLAIN (VERBOSE, COSTS OFF)
DELETE FROM dm.ev WHERE dev = 'd2' AND seq = 8 AND at > '2026-01-01 00:07:00+00';
-- a whole partition
EXPLAIN (VERBOSE, COSTS OFF)
DELETE FROM dm.ev WHERE dev = 'd3';
DELETE FROM dm.ev WHERE dev = 'd3';
SELECT dev, count(*) FROM dm.ev GROUP BY dev ORDER BY dev;

-- NULL or unrepresentable keys match nothing: nothing is sent
UPDATE dm.ev SET v = 'never' WHERE dev = NULL AND seq = 1 AND at = '2026-01-01 00:01:00+00';
DELETE FROM dm.ev WHERE dev = 'd1' AND seq = 1 AND at = '2026-01-01 00:01:00.0005+00';
DELETE FROM dm.ev WHERE dev = 'd1' AND seq > NULL;
SELECT count(*) FROM dm.ev WHERE dev = 'd1';

-- parameters, also in a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE upd(text, int, timestamptz, text) AS
  UPDATE dm.ev SET v = $4 WHERE dev = $1 AND seq = $2 AND at = $3;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE upd('d1', 4, '2026-01-01 00:04:00+00', 'p');
EXECUTE upd('d1', 4, '2026-01-01 00:04:00+00', 'p1');
EXECUTE upd('d1', 4, '2026-01-01 00:04:00+00', 'p2');
PREPARE del(text, int) AS DELETE FROM dm.ev WHERE dev = $1 AND seq <= $2;
EXECUTE del('d2', 1);
RESET plan_cache_mode;
SELECT seq, v FROM dm.ev WHERE dev = 'd1' AND seq = 4;
SELECT min(seq) FROM dm.ev WHERE dev = 'd2';

-- counters: CQL's own increment
UPDATE dm.hits SET views = views + 5 WHERE page = '/';
EXPLAIN (VERBOSE, COSTS OFF) UPDATE dm.hits SET views = views - 2 WHERE page = '/';
UPDATE dm.hits SET views = views - 2 WHERE page = '/';
SELECT page, views FROM dm.hits;
UPDATE dm.hits SET views = views + NULL WHERE page = '/';

-- not direct: these read the rows first (exact row counts)
EXPLAIN (VERBOSE, COSTS OFF)	-- a filter Cassandra cannot evaluate
DELETE FROM dm.ev WHERE dev = 'd1' AND w = 5;
EXPLAIN (VERBOSE, COSTS OFF)	-- a value computed from the old row
UPDATE dm.ev SET w = w + 1 WHERE dev = 'd1' AND seq = 5 AND at = '2026-01-01 00:05:00+00';
EXPLAIN (VERBOSE, COSTS OFF)	-- UPDATE needs the full key in CQL
UPDATE dm.ev SET v = 'x' WHERE dev = 'd1' AND seq = 5;
EXPLAIN (VERBOSE, COSTS OFF)	-- RETURNING needs the row
DELETE FROM dm.ev WHERE dev = 'd1' AND seq = 5 AND at = '2026-01-01 00:05:00+00' RETURNING v;
EXPLAIN (VERBOSE, COSTS OFF)	-- several partitions
DELETE FROM dm.ev WHERE dev IN ('d1', 'd2') AND seq = 5;
UPDATE dm.ev SET w = w + 1 WHERE dev = 'd1' AND seq = 5 AND at = '2026-01-01 00:05:00+00';
SELECT w FROM dm.ev WHERE dev = 'd1' AND seq = 5;
-- the option direct_modify 'false' keeps PostgreSQL's row counts
ALTER FOREIGN TABLE dm.ev OPTIONS (ADD direct_modify 'false');
EXPLAIN (VERBOSE, COSTS OFF)
DELETE FROM dm.ev WHERE dev = 'd1' AND seq = 6 AND at = '2026-01-01 00:06:00+00';
DELETE FROM dm.ev WHERE dev = 'd1' AND seq = 6 AND at = '2026-01-01 00:06:00+00';
DELETE FROM dm.ev WHERE dev = 'd1' AND seq = 6 AND at = '2026-01-01 00:06:00+00';
ALTER FOREIGN TABLE dm.ev OPTIONS (DROP direct_modify);
ALTER FOREIGN TABLE dm.ev OPTIONS (ADD direct_modify 'maybe');

-- write timestamps: the session's order wins, also for writes pipelined
-- in one statement (500 upserts of one key: the last one is kept) ...
INSERT INTO dm.ev (dev, seq, at, v)
SELECT 'ts', 1, '2026-01-01 00:00:00+00', 'w' || g FROM generate_series(1, 500) g;
SELECT v FROM dm.ev WHERE dev = 'ts';
-- ... and for a transaction's deferred writes: delete then re-insert
ALTER FOREIGN TABLE dm.ev OPTIONS (ADD write_mode 'on_commit');
BEGIN;
DELETE FROM dm.ev WHERE dev = 'ts' AND seq = 1 AND at = '2026-01-01 00:00:00+00';
INSERT INTO dm.ev (dev, seq, at, v) VALUES ('ts', 1, '2026-01-01 00:00:00+00', 'again');
DELETE FROM dm.ev WHERE dev = 'ts' AND seq = 2 AND at = '2026-01-01 00:00:00+00';
UPDATE dm.ev SET v = 'deleted before' WHERE dev = 'ts' AND seq = 3 AND at = '2026-01-01 00:00:00+00';
DELETE FROM dm.ev WHERE dev = 'ts';
INSERT INTO dm.ev (dev, seq, at, v) VALUES ('ts', 4, '2026-01-01 00:00:00+00', 'after the partition delete');
COMMIT;
SELECT seq, v FROM dm.ev WHERE dev = 'ts' ORDER BY seq;
-- a rolled-back direct write is never sent
BEGIN;
DELETE FROM dm.ev WHERE dev = 'ts';
ROLLBACK;
SELECT seq, v FROM dm.ev WHERE dev = 'ts' ORDER BY seq;
ALTER FOREIGN TABLE dm.ev OPTIONS (DROP write_mode);

DROP SCHEMA dm CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_direct');

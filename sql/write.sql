--
-- Writes through cql_fdw: upserts by primary key, only the named columns,
-- RETURNING, counters, TTL, lightweight-transaction inserts, TRUNCATE, and
-- errors for what Cassandra cannot store.
--
\i sql/include/cql_server.sql
\set ks regress_write
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.kv (k int, c int, v text, n bigint, tags set<text>, at timestamp, PRIMARY KEY ((k), c))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.hits (page text PRIMARY KEY, views counter)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.sessions (id int PRIMARY KEY, who text)');
END $$;
CREATE SCHEMA wr;
IMPORT FOREIGN SCHEMA regress_write FROM SERVER cass INTO wr;

-- INSERT is an upsert; a column the INSERT does not name keeps its value
INSERT INTO wr.kv (k, c, v, n, tags) VALUES (1, 1, 'one', 10, '{a,b}'), (1, 2, 'two', 20, NULL);
INSERT INTO wr.kv (k, c, n) VALUES (1, 1, 11);
SELECT k, c, v, n, tags FROM wr.kv WHERE k = 1;
-- ... while an explicit NULL removes it
INSERT INTO wr.kv (k, c, v) VALUES (1, 1, NULL);
SELECT k, c, v, n FROM wr.kv WHERE k = 1 AND c = 1;
-- the written values are exactly what Cassandra's own reader returns
SELECT cql_execute('cass', $c$INSERT INTO regress_write.kv (k, c, v, at) VALUES (9, 9, 'by cql', '2024-05-06 07:08:09.010Z')$c$);
INSERT INTO wr.kv (k, c, v, at) VALUES (9, 10, 'by fdw', '2024-05-06 07:08:09.010+00');
SELECT c, v, at = '2024-05-06 07:08:09.010+00' AS same_instant FROM wr.kv WHERE k = 9 ORDER BY c;

-- UPDATE sends only the assigned columns, keyed by the full primary key
EXPLAIN (VERBOSE, COSTS OFF) UPDATE wr.kv SET v = 'uno' WHERE k = 1 AND c = 1;
UPDATE wr.kv SET v = 'uno' WHERE k = 1 AND c = 1 RETURNING k, c, v, n;
UPDATE wr.kv SET n = n + 100 WHERE k = 1;
SELECT k, c, v, n FROM wr.kv WHERE k = 1 ORDER BY c;
UPDATE wr.kv SET k = 2 WHERE k = 1;
UPDATE wr.kv SET c = 5 WHERE k = 1 AND c = 1;

-- DELETE of rows found by a non-key condition: read the keys, then delete
EXPLAIN (VERBOSE, COSTS OFF) DELETE FROM wr.kv WHERE k = 1 AND v = 'two';
DELETE FROM wr.kv WHERE k = 1 AND v = 'two' RETURNING k, c, v, n;
SELECT k, c, v FROM wr.kv WHERE k = 1;

-- counters: only increments and decrements; by key they are CQL's own
-- increment, which (like every CQL UPDATE) also starts an absent counter
UPDATE wr.hits SET views = views + 1 WHERE page = '/';
SELECT cql_execute('cass', $c$UPDATE regress_write.hits SET views = views + 40 WHERE page = '/'$c$);
UPDATE wr.hits SET views = views + 3 WHERE page = '/' RETURNING page, views;
UPDATE wr.hits SET views = views - 1 WHERE page = '/';
SELECT page, views FROM wr.hits;
UPDATE wr.hits SET views = 7 WHERE page = '/';
INSERT INTO wr.hits VALUES ('/x', 1);

-- what Cassandra cannot store is refused, and nothing is written
INSERT INTO wr.kv (k, c, v) VALUES (NULL, 1, 'x');
-- (a sub-millisecond timestamp only with timestamp_precision 'error': the
-- default truncates, see timestamp_precision.sql)
ALTER FOREIGN TABLE wr.kv OPTIONS (ADD timestamp_precision 'error');
INSERT INTO wr.kv (k, c, at) VALUES (3, 3, '2024-01-01 00:00:00.0001+00');
ALTER FOREIGN TABLE wr.kv OPTIONS (DROP timestamp_precision);
INSERT INTO wr.kv (k, c, tags) VALUES (3, 3, '{a,NULL}');
SELECT count(*) FROM wr.kv WHERE k = 3;

-- a failed row fails the whole statement with the Cassandra error
ALTER FOREIGN TABLE wr.kv OPTIONS (ADD write_consistency 'THREE');
-- (the detail names the coordinator, which depends on the topology)
DO $$
BEGIN
  INSERT INTO wr.kv (k, c, v) VALUES (4, 1, 'needs three replicas');
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, SQLERRM;
END $$;
SELECT count(*) FROM wr.kv WHERE k = 4;
ALTER FOREIGN TABLE wr.kv OPTIONS (DROP write_consistency);

-- if_not_exists: a lightweight transaction, an existing row is a conflict
ALTER FOREIGN TABLE wr.sessions OPTIONS (ADD if_not_exists 'true');
INSERT INTO wr.sessions VALUES (1, 'alice');
INSERT INTO wr.sessions VALUES (1, 'mallory');
SELECT * FROM wr.sessions;

-- TTL: the row disappears by itself.  Cassandra counts a TTL in whole
-- seconds of its clock (expiry = the insert's second + ttl), so a row with
-- ttl 1 written at x.99 s is gone 10 ms later: ttl 2 keeps it for at least
-- one second, and 2.5 s later it is gone.
ALTER FOREIGN TABLE wr.sessions OPTIONS (DROP if_not_exists, ADD ttl '2');
INSERT INTO wr.sessions VALUES (2, 'short-lived');
SELECT count(*) FROM wr.sessions WHERE id = 2;
SELECT pg_sleep(2.5);
SELECT count(*) FROM wr.sessions WHERE id = 2;
ALTER FOREIGN TABLE wr.sessions OPTIONS (DROP ttl);

-- write_mode 'on_commit': writes wait for COMMIT, ROLLBACK forgets them
ALTER FOREIGN TABLE wr.sessions OPTIONS (ADD write_mode 'on_commit');
BEGIN;
INSERT INTO wr.sessions VALUES (10, 'rolled back');
SELECT count(*) AS visible_before_commit FROM wr.sessions WHERE id = 10;
ROLLBACK;
SELECT count(*) AS after_rollback FROM wr.sessions WHERE id = 10;
BEGIN;
INSERT INTO wr.sessions VALUES (11, 'committed');
SAVEPOINT s1;
INSERT INTO wr.sessions VALUES (12, 'after the savepoint');
UPDATE wr.sessions SET who = 'changed after the savepoint' WHERE id = 1;
ROLLBACK TO SAVEPOINT s1;
INSERT INTO wr.sessions VALUES (13, 'also committed');
COMMIT;
SELECT id, who FROM wr.sessions WHERE id IN (1, 10, 11, 12, 13) ORDER BY id;
-- deferred writes keep their connection: a server option changed and
-- cql_fdw_disconnect_all() in the same transaction do not close it
BEGIN;
INSERT INTO wr.sessions VALUES (16, 'deferred across ALTER SERVER');
ALTER SERVER cass OPTIONS (ADD fetch_size '4000');
SELECT cql_fdw_disconnect_all();
COMMIT;
ALTER SERVER cass OPTIONS (DROP fetch_size);
SELECT id, who FROM wr.sessions WHERE id = 16;
-- a write that fails at COMMIT fails the COMMIT
ALTER FOREIGN TABLE wr.sessions OPTIONS (ADD write_consistency 'THREE');
BEGIN;
INSERT INTO wr.sessions VALUES (14, 'cannot be written');
COMMIT;
SELECT count(*) FROM wr.sessions WHERE id = 14;
-- a prepared transaction could not send them later
BEGIN;
INSERT INTO wr.sessions VALUES (15, 'pending');
PREPARE TRANSACTION 'cql_fdw_regress';
SELECT count(*) FROM wr.sessions WHERE id = 15;
ALTER FOREIGN TABLE wr.sessions OPTIONS (DROP write_consistency, DROP write_mode);

-- deferred writes at COMMIT: a run of one statement's writes to different
-- rows goes as one UNLOGGED BATCH per partition (one request, one write
-- timestamp); a row written again, or another statement in between, keeps
-- the order of the writes
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.runs (p int, c int, v text, PRIMARY KEY ((p), c))');
END $$;
IMPORT FOREIGN SCHEMA regress_write LIMIT TO (runs) FROM SERVER cass INTO wr;
ALTER FOREIGN TABLE wr.runs ADD COLUMN v_wt bigint OPTIONS (writetime_of 'v');
INSERT INTO wr.runs (p, c, v) SELECT g % 3, g, 'row ' || g FROM generate_series(1, 30) g;
BEGIN;
SET LOCAL cql_fdw.write_mode = 'on_commit';
DO $$
BEGIN
  -- one statement, 30 rows of 3 partitions: three batches
  FOR i IN 1..30 LOOP
    UPDATE wr.runs SET v = 'updated ' || i WHERE p = i % 3 AND c = i;
  END LOOP;
  -- the same row twice in one run: the later value wins (a shared
  -- timestamp would let Cassandra keep the greater value, 'zzz')
  UPDATE wr.runs SET v = 'zzz' WHERE p = 0 AND c = 3;
  UPDATE wr.runs SET v = 'twice' WHERE p = 0 AND c = 6;
  UPDATE wr.runs SET v = 'aaa' WHERE p = 0 AND c = 3;
  -- a row deleted, written by another statement, and a second row deleted
  DELETE FROM wr.runs WHERE p = 1 AND c = 1;
  INSERT INTO wr.runs (p, c, v) VALUES (1, 1, 'back');
  DELETE FROM wr.runs WHERE p = 1 AND c = 4;
END $$;
COMMIT;
SELECT p, count(*) AS rows, count(DISTINCT v_wt) AS write_timestamps,
       string_agg(c || '=' || v, ', ' ORDER BY c) FILTER (WHERE v NOT LIKE 'updated %') AS not_updated
FROM wr.runs GROUP BY p ORDER BY p;
-- rows read and written back (an UPDATE that is not pushed down), batched
-- per partition too; with batch_size 1 every write goes alone
BEGIN;
SET LOCAL cql_fdw.write_mode = 'on_commit';
UPDATE wr.runs SET v = v || '!' WHERE p = 2;
COMMIT;
ALTER FOREIGN TABLE wr.runs OPTIONS (ADD batch_size '1');
BEGIN;
SET LOCAL cql_fdw.write_mode = 'on_commit';
UPDATE wr.runs SET v = v || '?' WHERE p = 1;
COMMIT;
SELECT p, count(*) AS rows, count(DISTINCT v_wt) AS write_timestamps,
       count(*) FILTER (WHERE v LIKE '%!' OR v LIKE '%?') AS changed
FROM wr.runs WHERE p IN (1, 2) GROUP BY p ORDER BY p;

-- INSERT ... SELECT: many rows, pipelined, none lost or duplicated
INSERT INTO wr.kv (k, c, v, n) SELECT g % 50, g, 'row ' || g, g FROM generate_series(1, 5000) g;
SELECT count(*), sum(n), count(DISTINCT (k, c)) FROM wr.kv WHERE k >= 0 AND c > 2;

-- TRUNCATE only where allowed
TRUNCATE wr.kv;
ALTER FOREIGN TABLE wr.kv OPTIONS (ADD truncatable 'true');
TRUNCATE wr.kv;
SELECT count(*) FROM wr.kv;

-- the Cassandra table changes shape: Cassandra forgets its prepared
-- statements, they are prepared again transparently
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.shape (k int PRIMARY KEY, a text, b text)');
END $$;
IMPORT FOREIGN SCHEMA regress_write LIMIT TO (shape) FROM SERVER cass INTO wr;
INSERT INTO wr.shape VALUES (1, 'a1', 'b1');
SELECT * FROM wr.shape WHERE k = 1;
SELECT cql_execute('cass', 'ALTER TABLE regress_write.shape ADD c int');
INSERT INTO wr.shape VALUES (2, 'a2', 'b2');
INSERT INTO wr.shape SELECT g, 'a' || g, 'b' || g FROM generate_series(3, 300) g;
SELECT count(*) FROM wr.shape;
SELECT * FROM wr.shape WHERE k IN (1, 2) ORDER BY k;
-- ... also for rows sent as batches of one partition
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.wide (k int, c int, a text, PRIMARY KEY (k, c))');
END $$;
IMPORT FOREIGN SCHEMA regress_write LIMIT TO (wide) FROM SERVER cass INTO wr;
INSERT INTO wr.wide SELECT g / 30, g, 'a' || g FROM generate_series(0, 299) g;
SELECT cql_execute('cass', 'ALTER TABLE regress_write.wide ADD d int');
INSERT INTO wr.wide SELECT g / 30, g, 'b' || g FROM generate_series(0, 599) g;
SELECT count(*), count(DISTINCT k), sum(c), count(*) FILTER (WHERE a LIKE 'b%') AS rewritten FROM wr.wide;
-- a mapped column dropped in Cassandra is a clear error
SELECT cql_execute('cass', 'ALTER TABLE regress_write.shape DROP b');
DO $$
BEGIN
  INSERT INTO wr.shape VALUES (301, 'a', 'b');
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, SQLERRM;
END $$;
DO $$
BEGIN
  PERFORM * FROM wr.shape WHERE k = 1;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, SQLERRM;
END $$;
-- time: PostgreSQL's 24:00:00 is past CQL's last time (23:59:59.999999999):
-- a write is refused (nothing is written); compared, it gives PostgreSQL's
-- answer (after every stored time, equal to none)
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.times (k int, c time, v text, l list<time>, PRIMARY KEY (k, c))');
END $$;
IMPORT FOREIGN SCHEMA regress_write LIMIT TO (times) FROM SERVER cass INTO wr;
INSERT INTO wr.times (k, c, v) VALUES (1, '00:00:00', 'first'), (1, '23:59:59.999999', 'last');
INSERT INTO wr.times (k, c, v) VALUES (1, '24:00:00', 'midnight');
INSERT INTO wr.times (k, c, v) VALUES (2, '12:00:00', 'noon'), (2, '24:00:00', 'midnight');
INSERT INTO wr.times (k, c, l) VALUES (3, '12:00:00', ARRAY[time '01:00', time '24:00']);
UPDATE wr.times SET l = ARRAY[time '24:00'] WHERE k = 1 AND c = '00:00:00';
SELECT k, c, v FROM wr.times ORDER BY k, c;
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM wr.times WHERE k = 1 AND c < '24:00:00';
SELECT c FROM wr.times WHERE k = 1 AND c < '24:00:00' ORDER BY c;
SELECT c FROM wr.times WHERE k = 1 AND c <= '24:00:00' ORDER BY c;
SELECT c FROM wr.times WHERE k = 1 AND c > '24:00:00';
SELECT c FROM wr.times WHERE k = 1 AND c >= '24:00:00';
SELECT c FROM wr.times WHERE k = 1 AND c = '24:00:00';
SELECT c FROM wr.times WHERE k = 1 AND c IN ('24:00:00', '00:00:00');
PREPARE t24(time) AS SELECT count(*) FROM wr.times WHERE k = 1 AND c < $1;
EXECUTE t24('24:00:00');
DEALLOCATE t24;
UPDATE wr.times SET v = 'changed' WHERE k = 1 AND c = '24:00:00';
DELETE FROM wr.times WHERE k = 1 AND c = '24:00:00';
SELECT k, c, v FROM wr.times ORDER BY k, c;
-- sets and maps inside a UDT or tuple are sent in CQL order without
-- duplicates (Cassandra sorts only top-level collections; a repeated map
-- key keeps its last value): Cassandra's own JSON of the stored key
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TYPE regress_write.tagged (name text, tags frozen<set<text>>, m frozen<map<int, text>>)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_write.nested (k frozen<tagged> PRIMARY KEY, v int)');
END $$;
IMPORT FOREIGN SCHEMA regress_write LIMIT TO (nested) FROM SERVER cass INTO wr;
INSERT INTO wr.nested VALUES
  ('{"name": "a", "tags": ["work", "home", "work"], "m": [[10, "x"], [9, "y"], [10, "z"]]}', 1);
SELECT k, v FROM wr.nested;
SELECT * FROM cql_query('cass', 'SELECT toJson(k) AS k FROM regress_write.nested');
-- so a lookup of that key written in another order finds it
SELECT * FROM cql_query('cass', 'SELECT v FROM regress_write.nested WHERE k = ?',
  '{"name": "a", "tags": ["work", "home"], "m": [[10, "z"], [9, "y"]]}'::jsonb);

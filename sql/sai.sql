--
-- Storage-Attached Indexes (Cassandra 5.0): predicates on indexed columns
-- are answered by the index, without ALLOW FILTERING, alone or next to the
-- partition key; what SAI cannot serve stays local.  Every answer is
-- compared with the same query on a local copy.
--
\i sql/include/cql_server.sql
\set ks regress_sai
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_sai.t (k int, c int, a int, b bigint, t text, d date, ts timestamp, u uuid, f double, PRIMARY KEY (k, c))');
  PERFORM cql_execute('cass', 'CREATE INDEX t_a ON regress_sai.t (a) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX t_b ON regress_sai.t (b) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX t_t ON regress_sai.t (t) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX t_d ON regress_sai.t (d) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE CUSTOM INDEX t_ts ON regress_sai.t (ts) USING ''StorageAttachedIndex''');
  PERFORM cql_execute('cass', 'CREATE INDEX t_u ON regress_sai.t (u) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX t_f ON regress_sai.t (f) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX t_c ON regress_sai.t (c) USING ''sai''');
END $$;
\i sql/include/await_cql.sql
-- a query over all token ranges through every index
SELECT pg_temp.await_cql('cass', 'SELECT k FROM regress_sai.t WHERE a = 0 AND b = 0 AND t = ''-'' AND d = ''2026-01-01'' AND ts = 0 AND u = 00000000-0000-0000-0000-000000000000 AND f = 0 AND c = 0');
CREATE SCHEMA sai;
-- IMPORT records each column's index
IMPORT FOREIGN SCHEMA regress_sai FROM SERVER cass INTO sai;
SELECT attname, array_to_string(attfdwoptions, ', ') AS options
FROM pg_attribute WHERE attrelid = 'sai.t'::regclass AND attnum > 0 ORDER BY attnum;

INSERT INTO sai.t (k, c, a, b, t, d, ts, u, f)
SELECT i % 7, i, i % 10, i * 1000, 'x' || (i % 4), date '2026-01-01' + i % 30,
       timestamptz '2026-01-01 00:00+00' + i * interval '1 hour',
       ('00000000-0000-0000-0000-' || lpad((i % 5)::text, 12, '0'))::uuid, i / 4.0
FROM generate_series(1, 300) i;
CREATE TABLE sai_local AS SELECT * FROM sai.t;
-- the same Cassandra table, never through the index
CREATE FOREIGN TABLE sai.t_plain (k int, c int, a int, b bigint, t text, d date, ts timestamptz, u uuid, f double precision)
  SERVER cass OPTIONS (keyspace 'regress_sai', "table" 't', index_pushdown 'false', allow_filtering 'false');

-- compare(query over "src"): the rows differing between the foreign table and the local copy
CREATE FUNCTION sai_check(cond text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n_remote bigint; diff bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM sai.t WHERE %s', cond) INTO n_remote;
  EXECUTE format('SELECT count(*) FROM ((SELECT * FROM sai.t WHERE %1$s EXCEPT ALL SELECT * FROM sai_local WHERE %1$s)
                  UNION ALL (SELECT * FROM sai_local WHERE %1$s EXCEPT ALL SELECT * FROM sai.t WHERE %1$s)) x', cond) INTO diff;
  RETURN format('%s rows, %s differ', n_remote, diff);
END $$;

-- = on an indexed column of each type class, ranges on numbers, dates, timestamps
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.t WHERE a = 3;
SELECT sai_check('a = 3');
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE b > 100000 AND b <= 150000;
SELECT sai_check('b > 100000 AND b <= 150000');
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE t = 'x2';
SELECT sai_check($$t = 'x2'$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE d BETWEEN '2026-01-05' AND '2026-01-07';
SELECT sai_check($$d BETWEEN '2026-01-05' AND '2026-01-07'$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE ts >= '2026-01-03 00:00+00' AND ts < '2026-01-04 00:00+00';
SELECT sai_check($$ts >= '2026-01-03 00:00+00' AND ts < '2026-01-04 00:00+00'$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE u = '00000000-0000-0000-0000-000000000003';
SELECT sai_check($$u = '00000000-0000-0000-0000-000000000003'$$);
-- an indexed clustering column without the partition key
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE c >= 290;
SELECT sai_check('c >= 290');
-- two indexes ANDed (consistency LOCAL_ONE), with a partition key, with a clustering range
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.t WHERE a = 3 AND t = 'x1';
SELECT sai_check($$a = 3 AND t = 'x1'$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.t WHERE k = 2 AND a = 3;
SELECT sai_check('k = 2 AND a = 3');
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.t WHERE k = 2 AND c > 100 AND b < 250000;
SELECT sai_check('k = 2 AND c > 100 AND b < 250000');
-- what SAI cannot serve stays local: text ranges, IN, OR, <>, float equality
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE t > 'x1';
SELECT sai_check($$t > 'x1'$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE a IN (1, 2);
SELECT sai_check('a IN (1, 2)');
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE a = 1 OR a = 2;
SELECT sai_check('a = 1 OR a = 2');
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE a <> 1 AND b = 5000;
SELECT sai_check('a <> 1 AND b = 5000');
EXPLAIN (COSTS OFF) SELECT c FROM sai.t WHERE f = 2.5;
SELECT sai_check('f = 2.5');
-- parameters and generic plans
PREPARE byidx(int, text) AS SELECT count(*) FROM sai.t WHERE a = $1 AND t = $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE byidx(3, 'x1');
EXECUTE byidx(3, 'x1');
EXECUTE byidx(4, NULL);
RESET plan_cache_mode;
DEALLOCATE byidx;
-- LIMIT goes along with the index predicate
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.t WHERE a = 3 LIMIT 2;
SELECT count(*) FROM (SELECT c FROM sai.t WHERE a = 3 LIMIT 2) x;

-- at a consistency above ONE an intersection can miss rows: one index only
ALTER FOREIGN TABLE sai.t OPTIONS (ADD consistency 'QUORUM');
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.t WHERE a = 3 AND t = 'x1';
SELECT sai_check($$a = 3 AND t = 'x1'$$);
ALTER FOREIGN TABLE sai.t OPTIONS (DROP consistency);
-- index_pushdown off: the token range scan and a local filter
EXPLAIN (COSTS OFF) SELECT c FROM sai.t_plain WHERE a = 3;
-- a foreign table written by hand learns the indexes from Cassandra
CREATE FOREIGN TABLE sai.by_hand (k int, c int, a int) SERVER cass OPTIONS (keyspace 'regress_sai', "table" 't');
EXPLAIN (COSTS OFF) SELECT c FROM sai.by_hand WHERE a = 3;
SELECT count(*) FROM sai.by_hand WHERE a = 3;

-- the planner: a query table's partition key beats the index, which beats a scan
ANALYZE sai.t;
EXPLAIN (COSTS OFF) SELECT * FROM sai.t WHERE k = 3 AND a = 3;
EXPLAIN (COSTS OFF) SELECT * FROM sai.t WHERE b = 7000;

-- an index dropped in Cassandra but still named in sai_index
SELECT cql_execute('cass', 'DROP INDEX regress_sai.t_b');
SELECT count(*) FROM sai.t WHERE b = 7000;
ALTER FOREIGN TABLE sai.t ALTER COLUMN b OPTIONS (DROP sai_index);
SELECT count(*) FROM sai.t WHERE b = 7000;

-- collections: = ANY(col) and col @> ARRAY[x] as CONTAINS on an index of a
-- set's or list's values, col ? key as CONTAINS KEY on an index of a map's
-- keys, col ->> key = value as col[key] = value on an index of a map's
-- entries (maps read as jsonb); compared with a local copy
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_sai.coll (k int, c int, s set<text>, l list<int>, m map<text, int>, mi map<int, text>, f set<double>, u set<uuid>, mt map<text, text>, PRIMARY KEY (k, c))');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_s ON regress_sai.coll (s) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_l ON regress_sai.coll (values(l)) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_mk ON regress_sai.coll (keys(m)) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_me ON regress_sai.coll (entries(m)) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_mi ON regress_sai.coll (keys(mi)) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_f ON regress_sai.coll (f) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_u ON regress_sai.coll (u) USING ''sai''');
  PERFORM cql_execute('cass', 'CREATE INDEX coll_mt ON regress_sai.coll (entries(mt)) USING ''sai''');
END $$;
SELECT pg_temp.await_cql('cass', 'SELECT k FROM regress_sai.coll WHERE s CONTAINS ''-'' AND l CONTAINS 0 AND m CONTAINS KEY ''-'' AND mi CONTAINS KEY 0 AND f CONTAINS 0 AND u CONTAINS 00000000-0000-0000-0000-000000000000 AND mt[''-''] = ''-''');
IMPORT FOREIGN SCHEMA regress_sai LIMIT TO (coll) FROM SERVER cass INTO sai;
SELECT attname, array_to_string(attfdwoptions, ', ') AS options
FROM pg_attribute WHERE attrelid = 'sai.coll'::regclass AND attnum > 0 ORDER BY attnum;
INSERT INTO sai.coll (k, c, s, l, m, mi, f, u, mt)
SELECT i % 5, i,
       CASE WHEN i % 6 <> 0 THEN ARRAY['x' || (i % 4), 'y' || (i % 3)] END,
       CASE WHEN i % 7 <> 0 THEN ARRAY[i % 10, i % 3, i % 3] END,
       CASE WHEN i % 5 <> 0 THEN jsonb_build_object('a' || (i % 3), i, 'b', i % 2) END,
       jsonb_build_object((i % 4)::text, 'v' || i),
       ARRAY[i / 2.0],
       ARRAY[('00000000-0000-0000-0000-' || lpad((i % 3)::text, 12, '0'))::uuid],
       jsonb_build_object('k' || (i % 2), 'v' || (i % 5), 'z', 'same')
FROM generate_series(1, 120) i;
CREATE TABLE coll_local AS SELECT * FROM sai.coll;
CREATE FUNCTION coll_check(cond text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n_remote bigint; diff bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM sai.coll WHERE %s', cond) INTO n_remote;
  EXECUTE format('SELECT count(*) FROM ((SELECT k, c FROM sai.coll WHERE %1$s EXCEPT ALL SELECT k, c FROM coll_local WHERE %1$s)
                  UNION ALL (SELECT k, c FROM coll_local WHERE %1$s EXCEPT ALL SELECT k, c FROM sai.coll WHERE %1$s)) x', cond) INTO diff;
  RETURN format('%s rows, %s differ', n_remote, diff);
END $$;
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.coll WHERE 'x1' = ANY(s);
SELECT coll_check($$'x1' = ANY(s)$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.coll WHERE s @> ARRAY['y2'];
SELECT coll_check($$s @> ARRAY['y2']$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.coll WHERE k = 2 AND 3 = ANY(l);
SELECT coll_check($$k = 2 AND 3 = ANY(l)$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.coll WHERE m ? 'a1';
SELECT coll_check($$m ? 'a1'$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.coll WHERE '00000000-0000-0000-0000-000000000002' = ANY(u);
SELECT coll_check($$'00000000-0000-0000-0000-000000000002' = ANY(u)$$);
-- map entries: col ->> key = value on a map<text, text>
EXPLAIN (VERBOSE, COSTS OFF) SELECT c FROM sai.coll WHERE mt ->> 'k1' = 'v3';
SELECT coll_check($$mt ->> 'k1' = 'v3'$$);
SELECT coll_check($$'same' = mt ->> 'z'$$);
PREPARE ent_q(text, text) AS SELECT count(*) FROM sai.coll WHERE mt ->> $1 = $2;
EXPLAIN (COSTS OFF) EXECUTE ent_q('k0', 'v2');
EXECUTE ent_q('k0', 'v2');
SELECT count(*) FROM coll_local WHERE mt ->> 'k0' = 'v2';
DEALLOCATE ent_q;
-- a parameter, also in a generic plan
PREPARE coll_q(text) AS SELECT count(*) FROM sai.coll WHERE $1 = ANY(s);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE coll_q('x2');
EXECUTE coll_q('x2');
EXECUTE coll_q(NULL);
RESET plan_cache_mode;
DEALLOCATE coll_q;
SELECT count(*) FROM coll_local WHERE 'x2' = ANY(s);
-- stays local: two elements (an intersection), a map with int keys (jsonb
-- keys are text), float elements, NOT, entries of a map with int values
EXPLAIN (COSTS OFF) SELECT c FROM sai.coll WHERE s @> ARRAY['x1', 'y1'];
SELECT coll_check($$s @> ARRAY['x1', 'y1']$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.coll WHERE mi ? '1';
SELECT coll_check($$mi ? '1'$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.coll WHERE 1.5 = ANY(f);
SELECT coll_check($$1.5 = ANY(f)$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.coll WHERE NOT ('x1' = ANY(s));
SELECT coll_check($$NOT ('x1' = ANY(s))$$);
EXPLAIN (COSTS OFF) SELECT c FROM sai.coll WHERE m ->> 'a1' = '7';
SELECT coll_check($$m ->> 'a1' = '7'$$);
-- CONTAINS next to an index on another column: one index at QUORUM
ALTER FOREIGN TABLE sai.coll OPTIONS (ADD consistency 'QUORUM');
EXPLAIN (COSTS OFF) SELECT c FROM sai.coll WHERE 'x1' = ANY(s) AND m ? 'a1';
SELECT coll_check($$'x1' = ANY(s) AND m ? 'a1'$$);
ALTER FOREIGN TABLE sai.coll OPTIONS (DROP consistency);
DROP FUNCTION coll_check(text);
DROP TABLE coll_local;

DROP FUNCTION sai_check(text);
DROP TABLE sai_local;
DROP SCHEMA sai CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_sai');

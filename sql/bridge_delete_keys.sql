--
-- cql_bridge_delete_keys(): many DELETEs by key through one resolved,
-- prepared statement handle (src/fdw/delete_keys.c), as cqlbridge's stream
-- deletes the keys that left a query table at each flush.  Rows, slices
-- and partitions; NULL and unrepresentable keys skipped; write_mode
-- 'on_commit' (kept until COMMIT, gone on ROLLBACK); every bad call gets
-- an error with its SQLSTATE.
--
\i sql/include/cql_server.sql
\set ks regress_delkeys
\i sql/include/keyspace.sql

SELECT cql_execute('cass', 'CREATE TABLE regress_delkeys.ev (dev text, day date, seq int, at timestamp, v text, PRIMARY KEY ((dev, day), seq, at))');
SELECT cql_execute('cass', 'CREATE TABLE regress_delkeys.hits (page text PRIMARY KEY, views counter)');
CREATE SCHEMA dk;
IMPORT FOREIGN SCHEMA regress_delkeys FROM SERVER cass INTO dk;
INSERT INTO dk.ev SELECT 'd' || d, date '2026-03-01' + (s % 2), s,
       timestamp '2026-03-01 00:00:00' + s * interval '1 minute', 'v' || d || '.' || s
FROM generate_series(1, 3) d, generate_series(1, 10) s;
SELECT count(*) FROM dk.ev;

-- whole keys, in any column order; a NULL element and a key that is not
-- there are fine (a DELETE of nothing), a NULL is not sent
SELECT cql_bridge_delete_keys('dk.ev', '{seq,dev,at,day}',
       ARRAY[1, 2, 3, 4], ARRAY['d1', 'd1', NULL, 'd9'],
       ARRAY[timestamp '2026-03-01 00:01:00', '2026-03-01 00:02:00', '2026-03-01 00:03:00', '2026-03-01 00:04:00'],
       ARRAY[date '2026-03-02', '2026-03-01', '2026-03-02', '2026-03-01']);
SELECT dev, day, seq FROM dk.ev WHERE dev = 'd1' AND day IN ('2026-03-01', '2026-03-02') AND seq <= 4 ORDER BY 1, 2, 3;
-- a timestamp with microseconds is no millisecond value: no row equals it
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day,seq,at}', ARRAY['d1'], ARRAY[date '2026-03-01'],
       ARRAY[4], ARRAY[timestamp '2026-03-01 00:04:00.000001']);
SELECT count(*) FROM dk.ev WHERE dev = 'd1' AND day = '2026-03-01' AND seq = 4;

-- a slice (partition key and the first clustering column) and a whole partition
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day,seq}', ARRAY['d2', 'd2'], ARRAY[date '2026-03-01', '2026-03-02'], ARRAY[6, 7]);
SELECT seq FROM dk.ev WHERE dev = 'd2' AND day IN ('2026-03-01', '2026-03-02') ORDER BY seq;
SELECT cql_bridge_delete_keys('dk.ev', '{day,dev}', ARRAY[date '2026-03-01'], ARRAY['d3']);
SELECT day, count(*) FROM dk.ev WHERE dev = 'd3' AND day IN ('2026-03-01', '2026-03-02') GROUP BY day ORDER BY day;
-- empty arrays, a NULL array: nothing
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY[]::text[], ARRAY[]::date[]);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', NULL::text[], ARRAY[date '2026-03-02']);

-- write_mode 'on_commit': kept until COMMIT, dropped by ROLLBACK
BEGIN;
SET LOCAL cql_fdw.write_mode = 'on_commit';
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY['d2'], ARRAY[date '2026-03-02']);
SELECT count(*) AS still_there FROM dk.ev WHERE dev = 'd2' AND day = '2026-03-02';
ROLLBACK;
SELECT count(*) AS after_rollback FROM dk.ev WHERE dev = 'd2' AND day = '2026-03-02';
BEGIN;
SET LOCAL cql_fdw.write_mode = 'on_commit';
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day,seq,at}',
       (SELECT array_agg(dev) FROM dk.ev WHERE dev = 'd2' AND day = '2026-03-02'),
       (SELECT array_agg(day) FROM dk.ev WHERE dev = 'd2' AND day = '2026-03-02'),
       (SELECT array_agg(seq) FROM dk.ev WHERE dev = 'd2' AND day = '2026-03-02'),
       (SELECT array_agg(at) FROM dk.ev WHERE dev = 'd2' AND day = '2026-03-02'));
COMMIT;
SELECT count(*) AS after_commit FROM dk.ev WHERE dev = 'd2' AND day = '2026-03-02';

-- a counter table's row
UPDATE dk.hits SET views = views + 3 WHERE page = 'p';
SELECT cql_bridge_delete_keys('dk.hits', '{page}', ARRAY['p']);
SELECT count(*) FROM dk.hits WHERE page = 'p';

-- bad calls
\set VERBOSITY sqlstate
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day,v}', ARRAY['d1'], ARRAY[date '2026-03-01'], ARRAY['x']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev}', ARRAY['d1']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day,at}', ARRAY['d1'], ARRAY[date '2026-03-01'], ARRAY[timestamp '2026-03-01']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,dev}', ARRAY['d1'], ARRAY['d1']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,nope}', ARRAY['d1'], ARRAY['d1']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY['d1']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY['d1', 'd2'], ARRAY[date '2026-03-01']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', 'd1'::text, ARRAY[date '2026-03-01']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY[['d1']], ARRAY[[date '2026-03-01']]);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', VARIADIC ARRAY[ARRAY['d1'], ARRAY['2026-03-01']]);
-- values of another type: cast them (a text is no date)
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY['d1'], ARRAY['2026-03-01']);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY['d1'], ARRAY[1.5]);
\set VERBOSITY default
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY['d1'], ARRAY['2026-03-01']);
\set VERBOSITY sqlstate
-- integers of another width, strings of another kind: fine (range-checked)
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day,seq}', ARRAY['d1'::varchar], ARRAY[date '2026-03-01'], ARRAY[99999999999]);
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day,seq}', ARRAY['d1'::varchar], ARRAY[date '2026-03-01'], ARRAY[99::bigint]);
CREATE TABLE dk.local (k int PRIMARY KEY);
SELECT cql_bridge_delete_keys('dk.local', '{k}', ARRAY[1]);
ALTER FOREIGN TABLE dk.hits OPTIONS (ADD updatable 'false');
SELECT cql_bridge_delete_keys('dk.hits', '{page}', ARRAY['p']);
-- an option change is seen at once (the merged options are cached)
ALTER FOREIGN TABLE dk.hits OPTIONS (DROP updatable);
SELECT cql_bridge_delete_keys('dk.hits', '{page}', ARRAY['p']);
CREATE ROLE regress_delkeys_reader;
GRANT USAGE ON SCHEMA dk TO regress_delkeys_reader;
GRANT SELECT ON dk.ev TO regress_delkeys_reader;
SET ROLE regress_delkeys_reader;
SELECT cql_bridge_delete_keys('dk.ev', '{dev,day}', ARRAY['d1'], ARRAY[date '2026-03-01']);
RESET ROLE;
\set VERBOSITY default
SELECT count(*) FROM dk.ev WHERE dev = 'd1' AND day = '2026-03-01';

SET client_min_messages = warning;
DROP SCHEMA dk CASCADE;
RESET client_min_messages;
DROP ROLE regress_delkeys_reader;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_delkeys');

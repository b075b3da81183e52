--
-- COPY FROM into a foreign table and tuple routing into foreign partitions
-- (BeginForeignInsert), and INSERT ... ON CONFLICT DO NOTHING as IF NOT
-- EXISTS.
--
\i sql/include/cql_server.sql
\set ks regress_copy
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_copy.ev (k int, c int, at timestamp, v text, tags set<text>, PRIMARY KEY ((k), c))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_copy.byname (name text PRIMARY KEY, n int)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_copy.ev2 (k int, c int, v text, PRIMARY KEY ((k), c))');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_copy.ev3 (k int, c int, v text, PRIMARY KEY ((k), c))');
END $$;
CREATE SCHEMA ce;
IMPORT FOREIGN SCHEMA regress_copy FROM SERVER cass INTO ce;
-- (the routing test below writes ev2 and ev3 through partitions)

-- CSV as applications write it: timestamps with microseconds (stored
-- truncated to the millisecond), NULLs, quotes, commas, newlines, unicode
COPY ce.ev (k, c, at, v, tags) FROM stdin WITH (FORMAT csv);
1,1,2026-11-26 08:15:02.123456+00,"plain",{a}
1,2,2026-11-26 08:15:02.999999+00,"with ""quotes"", a comma",
1,3,,"two
lines","{x,""y z""}"
2,1,1969-07-20 20:17:40.000001+00,"ünïcødé ✓",{}
2,2,2026-11-26 08:15:03+00,,
\.
SELECT k, c, at, v, tags FROM ce.ev ORDER BY k, c;
-- an empty string is not NULL
SELECT k, c, v IS NULL AS v_null, v = '' AS v_empty FROM ce.ev WHERE k = 2 AND c = 2;
COPY ce.ev (k, c, v) FROM stdin WITH (FORMAT csv);
2,2,""
\.
SELECT k, c, v IS NULL AS v_null, v = '' AS v_empty FROM ce.ev WHERE k = 2 AND c = 2;

-- a column COPY does not name is left untouched (as by INSERT)
COPY ce.ev (k, c, at) FROM stdin;
1	1	2026-11-26 09:00:00.5+00
\.
SELECT k, c, at, v, tags FROM ce.ev WHERE k = 1 AND c = 1;

-- many rows: staged and sent in batches (batch_size), as INSERT ... SELECT
COPY ce.ev (k, c, v) FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= 3000; i++) printf "%d,%d,row %d\n", 100 + i % 7, i, i }''' WITH (FORMAT csv);
SELECT count(*), count(DISTINCT k), sum(c), min(v), max(v) FROM ce.ev WHERE k >= 100;
SELECT count(*) FROM ce.ev WHERE k = 103 AND v = 'row ' || c;

-- a bad row is reported with its line, here after batches were sent
COPY ce.ev (k, c, v) FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= 300; i++) printf "%s,%d,bad %d\n", (i == 250 ? "" : 200), i, i }''' WITH (FORMAT csv);
-- a value Cassandra cannot store, also with its line
ALTER FOREIGN TABLE ce.ev OPTIONS (ADD timestamp_precision 'error');
COPY ce.ev (k, c, at) FROM stdin WITH (FORMAT csv);
3,1,2026-11-26 08:15:02.123+00
3,2,2026-11-26 08:15:02.123456+00
\.
ALTER FOREIGN TABLE ce.ev OPTIONS (DROP timestamp_precision);
-- ... and an error Cassandra returns once COPY has moved on (an empty
-- partition key) names the lines of the rows it was about.  copy_error
-- shows a COPY's error with the COPY lines of its context (not the
-- DETAIL, which names the node).
CREATE FUNCTION pg_temp.copy_error(cmd text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  msg text;
  ctx text;
BEGIN
  EXECUTE cmd;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, ctx = PG_EXCEPTION_CONTEXT;
  RETURN msg || ' | ' || array_to_string(ARRAY(
    SELECT l FROM regexp_split_to_table(ctx, E'\n') l WHERE l ~ '^COPY'), ' | ');
END $$;
SELECT pg_temp.copy_error($c$COPY ce.byname FROM PROGRAM 'printf ''a,1\n"",2\nb,3\n''' WITH (FORMAT csv)$c$);
-- ... also when it arrives while COPY sends a later batch (line 600, the
-- window of requests in flight full): COPY's own context then names only
-- the table, not line 600
SELECT pg_temp.copy_error($c$COPY ce.byname FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= 1000; i++) printf "%s,%d\n", (i == 2 ? "\"\"" : "big" i), i }''' WITH (FORMAT csv)$c$);
SELECT cql_execute('cass', 'TRUNCATE regress_copy.byname');
INSERT INTO ce.byname VALUES ('a', 1), ('b', 3);
-- a foreign table with if_not_exists goes row by row: the duplicate's line
ALTER FOREIGN TABLE ce.byname OPTIONS (ADD if_not_exists 'true');
COPY ce.byname FROM stdin WITH (FORMAT csv);
c,1
a,2
\.
ALTER FOREIGN TABLE ce.byname OPTIONS (DROP if_not_exists);
SELECT name, n FROM ce.byname ORDER BY name;

-- tuple routing: a partitioned table whose partitions are foreign tables
CREATE TABLE ce.parts (k int, c int, v text) PARTITION BY LIST (k);
CREATE FOREIGN TABLE ce.parts1 PARTITION OF ce.parts FOR VALUES IN (1)
  SERVER cass OPTIONS (keyspace 'regress_copy', "table" 'ev2');
CREATE FOREIGN TABLE ce.parts2 PARTITION OF ce.parts FOR VALUES IN (2, 3)
  SERVER cass OPTIONS (keyspace 'regress_copy', "table" 'ev3');
INSERT INTO ce.parts VALUES (1, 1, 'insert one'), (2, 1, 'insert two');
INSERT INTO ce.parts SELECT 3, g, 'select ' || g FROM generate_series(1, 500) g;
COPY ce.parts FROM stdin WITH (FORMAT csv);
1,2,copy one
2,2,copy two
\.
SELECT tableoid::regclass, k, c, v FROM ce.parts WHERE k IN (1, 2) ORDER BY k, c;
SELECT count(*), sum(c) FROM ce.parts WHERE k = 3;
SELECT k, c, v FROM ce.ev3 WHERE k = 2 ORDER BY c;
-- a row no partition accepts
COPY ce.parts FROM stdin WITH (FORMAT csv);
9,1,nowhere
\.

-- INSERT ... ON CONFLICT DO NOTHING is IF NOT EXISTS: an existing row is
-- kept and not counted
EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO ce.byname VALUES ('a', 10) ON CONFLICT DO NOTHING;
INSERT INTO ce.byname VALUES ('a', 10) ON CONFLICT DO NOTHING;
INSERT INTO ce.byname VALUES ('d', 4) ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO ce.byname VALUES ('a', 11), ('e', 5), ('b', 12) ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO ce.byname SELECT 'f' || g, g FROM generate_series(1, 3) g ON CONFLICT DO NOTHING;
INSERT INTO ce.byname SELECT 'f' || g, 10 * g FROM generate_series(1, 4) g ON CONFLICT DO NOTHING;
SELECT name, n FROM ce.byname ORDER BY name;
-- ... also when routed into a foreign partition
INSERT INTO ce.parts VALUES (1, 1, 'again'), (1, 5, 'new') ON CONFLICT DO NOTHING;
SELECT k, c, v FROM ce.parts WHERE k = 1 ORDER BY c;
-- a conflict target needs a unique index, which a foreign table has none of
INSERT INTO ce.byname VALUES ('a', 1) ON CONFLICT (name) DO NOTHING;
-- a write deferred to COMMIT cannot tell whether the row existed
ALTER FOREIGN TABLE ce.byname OPTIONS (ADD write_mode 'on_commit');
INSERT INTO ce.byname VALUES ('a', 1) ON CONFLICT DO NOTHING;
ALTER FOREIGN TABLE ce.byname OPTIONS (DROP write_mode);

DROP SCHEMA ce CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_copy');

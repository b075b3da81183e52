--
-- Every CQL type read through cql_fdw.  Rows are written by Cassandra's
-- own CQL parser (cql_execute), so these checks do not rely on our encoder.
--
\i sql/include/cql_server.sql
\set ks regress_types
\i sql/include/keyspace.sql
\i sql/include/scalar_rows.sql

\i sql/include/collection_rows.sql
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_types.counters (id int PRIMARY KEY, n counter)');
  PERFORM cql_execute('cass', 'UPDATE regress_types.counters SET n = n + 41 WHERE id = 1');
  PERFORM cql_execute('cass', 'UPDATE regress_types.counters SET n = n + 1 WHERE id = 1');
END $$;

CREATE SCHEMA ty;
IMPORT FOREIGN SCHEMA regress_types FROM SERVER cass INTO ty;

-- the imported definitions: default type mapping and key options
\d ty.scalars
\d ty.collections
\d ty.counters

-- scalars
SET timezone = 'UTC';
SELECT id, a, b, bl, bo, dt, de, d, du, f, i, s FROM ty.scalars ORDER BY id;
SELECT id, t, tm, ts, tu, ti, u, vc, vi FROM ty.scalars ORDER BY id;
-- NULL is NULL, empty text and blob are empty, not NULL
SELECT id, a IS NULL AS a_null, a = '' AS a_empty, bl = '' AS bl_empty, t = '' AS t_empty
FROM ty.scalars ORDER BY id;
-- exact numerics keep every digit
SELECT de = -12345678901234567890.123456789 AS de_exact,
       vi = -123456789012345678901234567890 AS vi_exact,
       b = 9223372036854775807 AS b_max
FROM ty.scalars WHERE id = 1;
SELECT d::text, f::text FROM ty.scalars WHERE id = 2;

-- timestamps are instants: the session time zone changes only the display
SET timezone = 'America/New_York';
SELECT id, ts, ts = '2024-01-02 03:04:05.678+00' AS same_instant FROM ty.scalars WHERE id = 1;
SET timezone = 'Asia/Kolkata';
SELECT id, ts, extract(epoch FROM ts) AS epoch FROM ty.scalars WHERE id IN (1, 2) ORDER BY id;
SET timezone = 'UTC';

-- collections, tuples, UDTs, vectors
SELECT id, l, st, m, fl FROM ty.collections ORDER BY id;
SELECT id, tp, ad FROM ty.collections ORDER BY id;
SELECT id, addrs, nested, ve, ts FROM ty.collections ORDER BY id;
SELECT ad->>'city' AS city, (ad->>'zip')::int AS zip, tp->>1 AS second, m->'y' AS y
FROM ty.collections WHERE id = 1;
-- a frozen empty list is an empty array; a non-frozen one is NULL in Cassandra
SELECT id, fl, cardinality(fl) AS n, l FROM ty.collections WHERE id = 2;
SELECT n FROM ty.counters WHERE id = 1;

-- a column declared wider, as text, or as jsonb reads the same values
CREATE FOREIGN TABLE ty.scalars_alt (
  id int, s bigint, ti integer, f double precision, vi text, ts text, du jsonb, u text
) SERVER cass OPTIONS (keyspace 'regress_types', "table" 'scalars');
SELECT * FROM ty.scalars_alt WHERE id = 1;

-- an incompatible declaration is refused at first use, naming the column
CREATE FOREIGN TABLE ty.scalars_bad (id int, t integer)
  SERVER cass OPTIONS (keyspace 'regress_types', "table" 'scalars');
SELECT * FROM ty.scalars_bad;
CREATE FOREIGN TABLE ty.scalars_missing (id int, nosuch text)
  SERVER cass OPTIONS (keyspace 'regress_types', "table" 'scalars');
SELECT * FROM ty.scalars_missing;
CREATE FOREIGN TABLE ty.nosuchtable (id int)
  SERVER cass OPTIONS (keyspace 'regress_types', "table" 'nosuchtable');
SELECT * FROM ty.nosuchtable;

-- timestamps: CQL's reach far beyond PostgreSQL's (4714 BC .. 294276 AD);
-- the last and first PostgreSQL instants read exactly, one millisecond
-- past either end is an error naming the value
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_types.ts_edge (id int PRIMARY KEY, ts timestamp)');
  PERFORM cql_execute('cass', 'INSERT INTO regress_types.ts_edge (id, ts) VALUES (1, 9224318015999999)');
  PERFORM cql_execute('cass', 'INSERT INTO regress_types.ts_edge (id, ts) VALUES (2, -210866803200000)');
  PERFORM cql_execute('cass', 'INSERT INTO regress_types.ts_edge (id, ts) VALUES (3, 9224318016000000)');
  PERFORM cql_execute('cass', 'INSERT INTO regress_types.ts_edge (id, ts) VALUES (4, -210866803200001)');
  PERFORM cql_execute('cass', 'INSERT INTO regress_types.ts_edge (id, ts) VALUES (5, 9223372036854775807)');
  PERFORM cql_execute('cass', 'INSERT INTO regress_types.ts_edge (id, ts) VALUES (6, -9223372036854775808)');
END $$;
IMPORT FOREIGN SCHEMA regress_types LIMIT TO (ts_edge) FROM SERVER cass INTO ty;
SET timezone = 'UTC';
SELECT id, ts, (extract(epoch FROM ts) * 1000)::bigint AS ms FROM ty.ts_edge WHERE id IN (1, 2) ORDER BY id;
SELECT ts FROM ty.ts_edge WHERE id = 3;
SELECT ts FROM ty.ts_edge WHERE id = 4;
SELECT ts FROM ty.ts_edge WHERE id = 5;
SELECT ts FROM ty.ts_edge WHERE id = 6;
-- declared as text, every value reads (milliseconds beyond year 9999)
CREATE FOREIGN TABLE ty.ts_edge_text (id int, ts text)
  SERVER cass OPTIONS (keyspace 'regress_types', "table" 'ts_edge');
SELECT id, ts FROM ty.ts_edge_text ORDER BY id;

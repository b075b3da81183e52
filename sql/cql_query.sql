--
-- cql_query() and cql_query_records(): ad-hoc CQL SELECTs on a foreign
-- server.  Rows as jsonb (every CQL type class, NULLs, the same objects as
-- to_jsonb() of a foreign table's rows) or as records of a column
-- definition list; bound parameters of many types; paging over 100,000
-- rows with a small page size; cancel by statement_timeout; what is
-- refused (non-SELECT, wrong parameters, mismatched columns) and the
-- privileges (those of cql_execute).
--
\i sql/include/cql_server.sql
\set ks regress_cql_query
\i sql/include/keyspace.sql
\i sql/include/scalar_rows.sql
SET timezone = 'UTC';

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TYPE regress_cql_query.address (street text, city text, zip int)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_cql_query.collections (
      id int PRIMARY KEY, l list<int>, st set<text>, m map<text, int>, mi map<int, text>,
      fl frozen<list<bigint>>, tp tuple<int, text, boolean>, ad frozen<address>,
      addrs map<text, frozen<address>>, nested list<frozen<list<int>>>,
      ve vector<float, 3>, ts set<timestamp>, lb list<blob>)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_cql_query.counters (id int PRIMARY KEY, n counter)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_cql_query.big (p int, c int, v bigint, PRIMARY KEY ((p), c))');

  -- row 1 of the shared rows with this suite's d (a double that JSON
  -- prints in full) and t (a double quote for JSON to escape)
  PERFORM cql_execute('cass', $c$UPDATE regress_cql_query.scalars
      SET d = 1.25e15, t = 'grüße, 世界 ''quoted'' "dq"' WHERE id = 1$c$);
  PERFORM cql_execute('cass', $c$INSERT INTO regress_cql_query.collections
      (id, l, st, m, mi, fl, tp, ad, addrs, nested, ve, ts, lb) VALUES
      (1, [3, 1, 2], {'b', 'a', 'é'}, {'x': 1, 'y': -2}, {2: 'two', 1: 'one'}, [9007199254740993],
       (7, 'seven', true), {street: '1 Main St', city: 'Springfield', zip: 12345},
       {'home': {street: 'a', city: 'b', zip: 1}, 'work': {street: 'c', city: null, zip: 2}},
       [[1], [2, 3], []], [1.0, 2.5, -3.25], {'2024-01-01 00:00:00Z', '2023-06-01 12:00:00.5Z'},
       [0x00ff, 0x])$c$);
  PERFORM cql_execute('cass', $c$INSERT INTO regress_cql_query.collections (id, fl, l) VALUES (2, [], [])$c$);
  PERFORM cql_execute('cass', 'INSERT INTO regress_cql_query.collections (id) VALUES (3)');
  PERFORM cql_execute('cass', 'UPDATE regress_cql_query.counters SET n = n + 42 WHERE id = 1');
END $$;
CREATE SCHEMA cq;
IMPORT FOREIGN SCHEMA regress_cql_query FROM SERVER cass INTO cq;

-- every scalar type: numbers as JSON numbers (varint and decimal exact),
-- text and ascii as strings, booleans, uuid/timeuuid/inet/date/time/
-- timestamp/duration as strings, blobs as "\x..." hex strings
SELECT key, value, jsonb_typeof(value) AS json_type
FROM cql_query('cass', 'SELECT * FROM regress_cql_query.scalars WHERE id = 1') r, jsonb_each(r)
ORDER BY key;
SELECT r FROM cql_query('cass', 'SELECT id, a, bl, d, f, t, vc, vi FROM regress_cql_query.scalars WHERE id = 2') r;
-- NULL is JSON null; every result column is a key
SELECT r FROM cql_query('cass', 'SELECT id, a, bl, bo, de, t, ts, u FROM regress_cql_query.scalars WHERE id = 3') r;

-- collections as arrays (sets in CQL order), maps as objects (text keys)
-- or as arrays of [key, value] pairs, tuples as arrays, UDTs as objects,
-- vectors as arrays of numbers
SELECT key, value FROM cql_query('cass', 'SELECT * FROM regress_cql_query.collections WHERE id = 1') r, jsonb_each(r)
ORDER BY key;
SELECT r FROM cql_query('cass', 'SELECT id, l, fl, m, ad, ve FROM regress_cql_query.collections WHERE id IN (2, 3)') r
ORDER BY r->'id';
SELECT r FROM cql_query('cass', 'SELECT * FROM regress_cql_query.counters') r;
SELECT r FROM cql_query('cass', 'SELECT count(*), max(t) AS top FROM regress_cql_query.scalars WHERE id = 2') r;

-- a row is what to_jsonb() gives for the same row of a foreign table with
-- IMPORT FOREIGN SCHEMA's types (vectors aside: real[] here, pgvector's
-- vector in a foreign table where that extension is installed)
SELECT (SELECT jsonb_agg(r ORDER BY (r->>'id')::int)
          FROM cql_query('cass', 'SELECT * FROM regress_cql_query.scalars') r)
     = (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM cq.scalars x) AS scalars_same;
SELECT (SELECT jsonb_agg(r ORDER BY (r->>'id')::int)
          FROM cql_query('cass', 'SELECT id, l, st, m, mi, fl, tp, ad, addrs, nested, ts, lb FROM regress_cql_query.collections') r)
     = (SELECT jsonb_agg(to_jsonb(x) - 've' ORDER BY x.id) FROM cq.collections x) AS collections_same;

-- in the select list too
SELECT cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = 1');

-- bound parameters: each converted from its PostgreSQL type to the
-- marker's CQL type; an untyped literal is read as a CQL literal
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', 1) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', '2') r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', 3::smallint) r;
SELECT r->'id' AS id FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id IN ?', ARRAY[1, 3]) r
ORDER BY 1;
SELECT r FROM cql_query('cass', 'SELECT id, t FROM regress_cql_query.scalars WHERE id = :id', 1) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id IN (?, ?) AND t = ? ALLOW FILTERING',
                         1, 2, 'grüße, 世界 ''quoted'' "dq"'::text) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE b = ? ALLOW FILTERING', 9223372036854775807) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE vi = ? ALLOW FILTERING', -123456789012345678901234567890) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE vi = ? ALLOW FILTERING', 0) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE de = ? ALLOW FILTERING', 0.000001) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE d = ? AND f = ? ALLOW FILTERING', 1.25e15::float8, 3.25::real) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE bo = ? AND bl = ? ALLOW FILTERING', true, '\xcafebabe'::bytea) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE u = ? ALLOW FILTERING', '5bcb5e6c-5e9a-4f0b-a1f1-2b8e1c7c9d10'::uuid) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE ts = ? ALLOW FILTERING', '2024-01-02 03:04:05.678+00'::timestamptz) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE ts = ? ALLOW FILTERING', '1969-07-20 20:17:40'::timestamp) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE dt = ? AND i = ? ALLOW FILTERING', '2024-02-29'::date, '192.168.1.10'::inet) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE tm = ? ALLOW FILTERING', '00:00:00'::time) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.collections WHERE ad = ? ALLOW FILTERING',
                         '{"street": "1 Main St", "city": "Springfield", "zip": 12345}'::jsonb) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.collections WHERE st CONTAINS ? AND m CONTAINS KEY ? ALLOW FILTERING', 'é', 'y'::varchar) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.collections WHERE fl = ? ALLOW FILTERING', ARRAY[9007199254740993]) r;
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ? LIMIT ?', 1, 1) r;
-- an explicit VARIADIC array
SELECT r FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', VARIADIC ARRAY[2]) r;

-- parameters that cannot be bound
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?');
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', 1, 2);
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars', 1);
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', NULL::int);
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', VARIADIC NULL::int[]);
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', 'one');
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', 4294967296);
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', point(1, 2));
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE ts = ? ALLOW FILTERING', '2024-01-02 03:04:05.6789+00'::timestamptz);
SELECT * FROM cql_query('cass', NULL);

-- records: columns by position, each read as its declared type
SELECT * FROM cql_query_records('cass', 'SELECT id, t, b, ts, de, vi FROM regress_cql_query.scalars WHERE id = 1')
  AS t(id int, t text, b bigint, ts timestamptz, de numeric, vi numeric);
SELECT * FROM cql_query_records('cass', 'SELECT id, l, m, ad, tp FROM regress_cql_query.collections WHERE id = ?', 1)
  AS t(id bigint, l int[], m jsonb, ad jsonb, tp text);
SELECT * FROM cql_query_records('cass', 'SELECT id, t, bl, u, i FROM regress_cql_query.scalars') AS t(id int, t text, bl bytea, u uuid, i inet)
ORDER BY id;
SELECT * FROM cql_query_records('cass', 'SELECT id, ts, dt, tm, du FROM regress_cql_query.scalars WHERE id = 1')
  AS t(id numeric, ts timestamp, dt date, tm time, du interval);
-- mismatches
SELECT * FROM cql_query_records('cass', 'SELECT id, t FROM regress_cql_query.scalars') AS t(id int);
SELECT * FROM cql_query_records('cass', 'SELECT id FROM regress_cql_query.scalars') AS t(id int, t text);
SELECT * FROM cql_query_records('cass', 'SELECT id, t FROM regress_cql_query.scalars') AS t(id int, t int);
SELECT * FROM cql_query_records('cass', 'SELECT b FROM regress_cql_query.scalars') AS t(b int);
SELECT * FROM cql_query_records('cass', 'SELECT t FROM regress_cql_query.scalars WHERE id = 1') AS t(t varchar(3));
SELECT cql_query_records('cass', 'SELECT id FROM regress_cql_query.scalars');

-- only statements that return rows; the refused write is not applied
SELECT * FROM cql_query('cass', 'INSERT INTO regress_cql_query.scalars (id) VALUES (99)');
SELECT * FROM cql_query('cass', 'UPDATE regress_cql_query.scalars SET t = ? WHERE id = 1', 'x');
SELECT * FROM cql_query('cass', 'CREATE TABLE regress_cql_query.never (id int PRIMARY KEY)');
SELECT * FROM cql_query_records('cass', 'DELETE FROM regress_cql_query.scalars WHERE id = 1') AS t(x int);
SELECT count(*) FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars');
-- Cassandra's errors
SELECT * FROM cql_query('cass', 'SELEC id FROM regress_cql_query.scalars');
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.no_such_table');
SELECT * FROM cql_query('cass', 'SELECT nope FROM regress_cql_query.scalars');
-- a statement mentioning a password is redacted in the error context
SELECT * FROM cql_query('cass', 'SELEC password FROM regress_cql_query.scalars WHERE t = ''s3cret-4711''');
-- servers
SELECT * FROM cql_query('no_such_server', 'SELECT id FROM regress_cql_query.scalars');

-- paging: 100,000 rows through a server reading 1,000 rows per page
INSERT INTO cq.big (p, c, v) SELECT g % 100, g, g FROM generate_series(1, 100000) g;
CREATE SERVER cass_paged FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_host', fetch_size '1000');
CREATE USER MAPPING FOR CURRENT_USER SERVER cass_paged;
SELECT count(*), sum((r->>'v')::bigint) AS sum, count(DISTINCT r->>'c') AS distinct_rows
FROM cql_query('cass_paged', 'SELECT c, v FROM regress_cql_query.big') r;
SELECT count(*), sum(v), min(c), max(c)
FROM cql_query_records('cass_paged', 'SELECT c, v FROM regress_cql_query.big') AS t(c int, v bigint);
SELECT count(*), sum(v)
FROM cql_query_records('cass_paged', 'SELECT v FROM regress_cql_query.big WHERE p = ?', 7) AS t(v bigint);
-- cancel: statement_timeout interrupts a long query, and the connection
-- stays usable
ALTER SERVER cass_paged OPTIONS (SET fetch_size '100');
SET statement_timeout = '20ms';
SELECT count(*) FROM cql_query('cass_paged', 'SELECT c, v FROM regress_cql_query.big');
RESET statement_timeout;
SELECT count(*) FROM cql_query('cass_paged', 'SELECT v FROM regress_cql_query.big WHERE p = 7');
-- neither the cancel nor an error caught in PL/pgSQL leaves the connection
-- marked in use: it can be closed (no WARNING)
DO $$
BEGIN
  PERFORM * FROM cql_query('cass_paged', 'SELECT v FROM regress_cql_query.big WHERE p = ?', 'x');
EXCEPTION WHEN invalid_parameter_value THEN
  RAISE NOTICE 'caught: %', SQLERRM;
END $$;
SELECT cql_fdw_disconnect('cass_paged');

-- privileges: those of cql_execute (EXECUTE not granted to PUBLIC, and
-- USAGE on the server)
CREATE ROLE regress_cql_query_user;
SET ROLE regress_cql_query_user;
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = 1');
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', 1);
SELECT * FROM cql_query_records('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = 1') AS t(id int);
RESET ROLE;
GRANT EXECUTE ON FUNCTION cql_query(text, text), cql_query(text, text, "any") TO regress_cql_query_user;
SET ROLE regress_cql_query_user;
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = 1');
SELECT * FROM cql_query('cass', 'SELECT id FROM regress_cql_query.scalars WHERE id = ?', 1);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION cql_query(text, text), cql_query(text, text, "any") FROM regress_cql_query_user;
DROP ROLE regress_cql_query_user;

DROP USER MAPPING FOR CURRENT_USER SERVER cass_paged;
DROP SERVER cass_paged;
DROP SCHEMA cq CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_cql_query');

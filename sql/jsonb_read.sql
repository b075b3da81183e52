--
-- Values read as jsonb are built straight from the CQL bytes
-- (src/fdw/convert_jsonb.c), not formatted as JSON text and parsed again.
-- Each column below is read twice, by a foreign table that declares it
-- jsonb and by one that declares it json (which keeps the text path):
-- both must give the same jsonb, value for value.
--
\i sql/include/cql_server.sql
\set ks regress_jsonb_read
\i sql/include/keyspace.sql

SELECT cql_execute('cass', format('CREATE TYPE %I.point (x double, y double, tag ascii)', :'ks'))
  AS point_created \gset
SELECT cql_execute('cass', format($c$CREATE TABLE %I.cells (
      id int PRIMARY KEY,
      t text, a ascii, i int, bi bigint, ti tinyint, si smallint, vi varint, de decimal,
      d double, f float, bo boolean, bl blob, u uuid, tu timeuuid, ip inet, dt date,
      tm time, ts timestamp, du duration,
      mi map<int, text>, md map<ascii, double>, mb map<text, blob>,
      tp tuple<uuid, inet, date, time, timestamp, duration, decimal, varint, tinyint, smallint, boolean>,
      nested list<frozen<map<text, frozen<list<text>>>>>, sa set<ascii>, pt frozen<point>,
      mp map<frozen<tuple<int, text>>, frozen<set<int>>>, ve vector<float, 3>,
      lt list<frozen<tuple<text, int>>>)$c$, :'ks'))
  AS cells_created \gset
SELECT cql_execute('cass', format($c$INSERT INTO %I.cells (id, t, a, i, bi, ti, si, vi, de, d, f, bo, bl,
      u, tu, ip, dt, tm, ts, du, mi, md, mb, tp, nested, sa, pt, mp, ve, lt) VALUES
      (1, 'quote " backslash \ tab	newline
 é €  😀', 'plain', -2147483648, 9223372036854775807, -128, 32767,
       -123456789012345678901234567890, -12345678901234567890.123456789000, 1.5e10, -3.5, true,
       0x00ff10, 123e4567-e89b-12d3-a456-426614174000, 50554d6e-29bb-11e5-b345-feff819cdc9f,
       '::ffff:10.0.0.1', '2024-02-29', '23:59:59.999999999', '2023-06-01 12:00:00.5Z', 1y2mo3d4h5m6s7ms8us9ns,
       {3: 'three', -1: ''}, {'nan': NaN, 'inf': Infinity, 'ninf': -Infinity, 'zero': -0.0, 'small': 2.5e-7},
       {'': 0x, 'k"ey': 0xcafe},
       (123e4567-e89b-12d3-a456-426614174000, '2001:db8::1', '1970-01-01', '00:00:00', '1969-12-31 23:59:59.999Z',
        -1mo, 0.000000000000000000001, 0, 0, -1, false),
       [{'a': ['x', 'y'], 'b': []}, {}], {'z', 'a', ''}, {x: 0.1, y: NaN, tag: 'p'},
       {(1, 'one'): {1, 2}, (0, ''): {}}, [1.5, -0.0, 3.4028235e38],
       [('a', 1), (null, null)])$c$, :'ks'))
  AS row1 \gset
-- empty collections, empty strings and blobs, and only the key
SELECT cql_execute('cass', format($c$INSERT INTO %I.cells (id, t, a, bl, mi, mb, nested, sa, lt)
      VALUES (2, '', '', 0x, {}, {}, [], {}, [])$c$, :'ks')) AS row2 \gset
SELECT cql_execute('cass', format('INSERT INTO %I.cells (id) VALUES (3)', :'ks')) AS row3 \gset

CREATE SCHEMA jr;
SELECT format('CREATE FOREIGN TABLE jr.as_%s (id int, %s) SERVER cass OPTIONS (keyspace %L, table %L)',
              kind, string_agg(format('%I %s', col, kind), ', '), :'ks', 'cells')
FROM unnest(ARRAY['t', 'a', 'i', 'bi', 'ti', 'si', 'vi', 'de', 'd', 'f', 'bo', 'bl', 'u', 'tu', 'ip',
                  'dt', 'tm', 'ts', 'du', 'mi', 'md', 'mb', 'tp', 'nested', 'sa', 'pt', 'mp', 've', 'lt']) AS col,
     unnest(ARRAY['json', 'jsonb']) AS kind
GROUP BY kind \gexec

-- every cell: the same jsonb both ways (no row expected)
SELECT b.id, e.key, e.value AS direct, (to_jsonb(j) -> e.key)::text::jsonb AS parsed
FROM jr.as_jsonb b JOIN jr.as_json j USING (id), jsonb_each(to_jsonb(b)) e
WHERE e.key <> 'id' AND e.value IS DISTINCT FROM (to_jsonb(j) -> e.key)::text::jsonb;
SELECT count(*) AS cells FROM jr.as_jsonb b, jsonb_each(to_jsonb(b)) e WHERE e.key <> 'id';

-- what they look like
SELECT t, a, i, bi, ti, si, vi, de FROM jr.as_jsonb WHERE id = 1;
SELECT d, f, bo, bl, u, tu, ip, dt, tm, ts, du FROM jr.as_jsonb WHERE id = 1;
SELECT mi, md, mb FROM jr.as_jsonb WHERE id = 1;
SELECT tp, nested FROM jr.as_jsonb WHERE id = 1;
SELECT sa, pt, mp, ve, lt FROM jr.as_jsonb WHERE id = 1;
SELECT * FROM jr.as_jsonb WHERE id > 1 ORDER BY id;
-- scalars inside are typed: numbers, booleans, strings, nulls
SELECT jsonb_typeof(i) AS i, jsonb_typeof(vi) AS vi, jsonb_typeof(de) AS de, jsonb_typeof(d) AS d,
       jsonb_typeof(md -> 'nan') AS nan, jsonb_typeof(bo) AS bo, jsonb_typeof(u) AS u,
       jsonb_typeof(lt -> 1 -> 0) AS null_elem, jsonb_typeof(pt -> 'y') AS udt_nan
FROM jr.as_jsonb WHERE id = 1;
-- a domain over jsonb still gets its check
CREATE DOMAIN jr.small_json AS jsonb CHECK (pg_column_size(VALUE) < 40);
CREATE FOREIGN TABLE jr.dom (id int, t jr.small_json, mi jr.small_json) SERVER cass
  OPTIONS (keyspace :'ks', table 'cells');
SELECT id, t FROM jr.dom WHERE id = 2;
SELECT id, mi FROM jr.dom WHERE id = 1;

SET client_min_messages = warning;
DROP SCHEMA jr CASCADE;
RESET client_min_messages;
SELECT cql_execute('cass', :'ks_drop') AS ks_dropped \gset

-- The table :ks.scalars, a column of every scalar CQL type, and its three
-- rows, written by Cassandra's own CQL parser (cql_execute): row 1 typical
-- and non-ASCII values and the extremes of bigint/smallint/tinyint, row 2
-- the other edges (empty strings and blob, -0.0, a negative duration,
-- dates before the epoch, zero uuids), row 3 only its key.  Shared by
-- types.sql and cql_query.sql (which changes d and t of row 1 after it).
-- Prints nothing.
SELECT cql_execute('cass', format($c$CREATE TABLE %I.scalars (
      id int PRIMARY KEY, a ascii, b bigint, bl blob, bo boolean, dt date,
      de decimal, d double, du duration, f float, i inet, s smallint, t text,
      tm time, ts timestamp, tu timeuuid, ti tinyint, u uuid, vc varchar, vi varint)$c$, :'ks'))
  AS scalars_created \gset
SELECT cql_execute('cass', format($c$INSERT INTO %I.scalars
      (id, a, b, bl, bo, dt, de, d, du, f, i, s, t, tm, ts, tu, ti, u, vc, vi) VALUES
      (1, 'plain ascii', 9223372036854775807, 0xcafebabe, true, '2024-02-29',
       -12345678901234567890.123456789, 1.5e300, 1y2mo3d4h5m6s7ms8us9ns, 3.25, '192.168.1.10',
       -32768, 'grüße, 世界 ''quoted''', '12:34:56.789123456', '2024-01-02 03:04:05.678Z',
       50554d6e-29bb-11e5-b345-feff819cdc9f, -128, 5bcb5e6c-5e9a-4f0b-a1f1-2b8e1c7c9d10,
       'varchar', -123456789012345678901234567890)$c$, :'ks'))
  AS scalars_row1 \gset
SELECT cql_execute('cass', format($c$INSERT INTO %I.scalars
      (id, a, b, bl, bo, dt, de, d, du, f, i, s, t, tm, ts, tu, ti, u, vc, vi) VALUES
      (2, '', -9223372036854775808, 0x, false, '1969-12-31', 0.000001, -0.0, -5d, -1.5e-10, '::1',
       32767, '', '00:00:00', '1969-07-20 20:17:40.000Z', 00000000-0000-1000-8000-000000000000, 127,
       00000000-0000-0000-0000-000000000000, '', 0)$c$, :'ks'))
  AS scalars_row2 \gset
SELECT cql_execute('cass', format('INSERT INTO %I.scalars (id) VALUES (3)', :'ks'))
  AS scalars_row3 \gset

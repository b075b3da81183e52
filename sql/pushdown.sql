--
-- Pushdown rules of cql_fdw, each asserted twice: by the plan (EXPLAIN
-- VERBOSE shows the access method and the exact remote CQL) and by the
-- answer, compared with the same rows in a local table.
--
\i sql/include/cql_server.sql
\set ks regress_pushdown
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_pushdown.events (
      tenant int, day date, seq int, at timestamp, kind text, amount bigint, id uuid,
      PRIMARY KEY ((tenant, day), seq, at)) WITH CLUSTERING ORDER BY (seq ASC, at DESC)');
END $$;

CREATE SCHEMA pd;
IMPORT FOREIGN SCHEMA regress_pushdown FROM SERVER cass INTO pd;

-- the same rows, locally
CREATE TABLE pd.local_events AS
SELECT t AS tenant, date '2024-01-01' + d AS day, s AS seq,
       timestamptz '2024-01-01 00:00:00+00' + make_interval(hours => s * 7 + t, secs => d * 0.25) AS at,
       (ARRAY['click', 'view', 'Buy', 'éclair'])[1 + (s + d) % 4] AS kind,
       (t * 1000 + d * 10 + s)::bigint AS amount,
       md5(t || '/' || d || '/' || s)::uuid AS id
FROM generate_series(1, 3) t, generate_series(0, 4) d, generate_series(1, 6) s;

-- written by Cassandra's own CQL parser, so reading checks our decoding
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM pd.local_events LOOP
    PERFORM cql_execute('cass', format(
      'INSERT INTO regress_pushdown.events (tenant, day, seq, at, kind, amount, id) VALUES (%s, %L, %s, %L, %L, %s, %s)',
      r.tenant, to_char(r.day, 'YYYY-MM-DD'), r.seq, to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS"Z"'),
      r.kind, r.amount, r.id));
  END LOOP;
END $$;
SELECT count(*) FROM pd.events;

-- a query, its rows through the FDW, and whether they equal the local
-- answer (order included when the query orders)
CREATE FUNCTION pd.same(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
  remote text;
  loc text;
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*), string_agg(s::text, '';'') FROM (%s) s', format(q, 'pd.events')) INTO n, remote;
  EXECUTE format('SELECT string_agg(s::text, '';'') FROM (%s) s', format(q, 'pd.local_events')) INTO loc;
  IF remote IS NOT DISTINCT FROM loc THEN
    RETURN format('%s rows, same as local', n);
  END IF;
  RETURN format('DIFFERENT: remote %s / local %s', remote, loc);
END $f$;

-- full partition key by =: one partition
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq, amount FROM pd.events WHERE tenant = 2 AND day = '2024-01-03';
SELECT pd.same($$SELECT seq, at, amount FROM %s WHERE tenant = 2 AND day = '2024-01-03' ORDER BY seq, at DESC$$);

-- partition key by IN: one request per distinct partition
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant IN (1, 3, 3) AND day = '2024-01-02';
SELECT pd.same($$SELECT tenant, seq, at FROM %s WHERE tenant IN (1, 3, 3) AND day = '2024-01-02' ORDER BY 1, 2, 3$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = ANY ('{1,2}') AND day IN ('2024-01-01', '2024-01-05');
SELECT pd.same($$SELECT tenant, day, seq, at FROM %s WHERE tenant = ANY ('{1,2}') AND day IN ('2024-01-01', '2024-01-05') ORDER BY 1, 2, 3, 4$$);

-- part of the partition key: token range scan, filter stays local
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1;
SELECT pd.same($$SELECT day, seq, at FROM %s WHERE tenant = 1 ORDER BY 1, 2, 3$$);

-- clustering: = prefix then one range, BETWEEN included
EXPLAIN (VERBOSE, COSTS OFF) SELECT at FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND seq = 3 AND at > '2024-01-01 10:00+00';
SELECT pd.same($$SELECT at FROM %s WHERE tenant = 1 AND day = '2024-01-01' AND seq = 3 AND at > '2024-01-01 10:00+00' ORDER BY 1$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND seq BETWEEN 2 AND 4;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 1 AND day = '2024-01-01' AND seq BETWEEN 2 AND 4 ORDER BY 1, 2$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND seq IN (2, 5);
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 1 AND day = '2024-01-01' AND seq IN (2, 5) ORDER BY 1, 2$$);

-- a range on the second clustering column without = on the first: local
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND at < '2024-01-01 12:00+00';
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 1 AND day = '2024-01-01' AND at < '2024-01-01 12:00+00' ORDER BY 1, 2$$);

-- ORDER BY in clustering order (no Sort), and exactly reversed
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq, at FROM pd.events WHERE tenant = 3 AND day = '2024-01-04' ORDER BY seq, at DESC;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 3 AND day = '2024-01-04' ORDER BY seq, at DESC$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq, at FROM pd.events WHERE tenant = 3 AND day = '2024-01-04' ORDER BY seq DESC, at;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 3 AND day = '2024-01-04' ORDER BY seq DESC, at$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT at FROM pd.events WHERE tenant = 3 AND day = '2024-01-04' AND seq = 2 ORDER BY at;
-- mixed directions are not a clustering order: local Sort
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq, at FROM pd.events WHERE tenant = 3 AND day = '2024-01-04' ORDER BY seq, at;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 3 AND day = '2024-01-04' ORDER BY seq, at$$);
-- ORDER BY across partitions: local Sort
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant IN (1, 2) AND day = '2024-01-04' ORDER BY seq, at DESC;

-- LIMIT: pushed when every restriction is remote
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq, at FROM pd.events WHERE tenant = 2 AND day = '2024-01-02' ORDER BY seq DESC, at LIMIT 3;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 2 AND day = '2024-01-02' ORDER BY seq DESC, at LIMIT 3$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq, at FROM pd.events WHERE tenant = 2 AND day = '2024-01-02' ORDER BY seq, at DESC LIMIT 2 OFFSET 3;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 2 AND day = '2024-01-02' ORDER BY seq, at DESC LIMIT 2 OFFSET 3$$);
-- ... and not when a filter stays local
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 2 AND day = '2024-01-02' AND amount > 0 LIMIT 3;
-- ... nor with a Sort above the scan
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 2 AND day = '2024-01-02' ORDER BY amount LIMIT 3;

-- regular columns: local unless allow_filtering
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND amount = 1015;
ALTER FOREIGN TABLE pd.events OPTIONS (ADD allow_filtering 'true');
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND amount >= 1004;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 1 AND day = '2024-01-01' AND amount >= 1004 ORDER BY 1, 2$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE kind = 'view';
SELECT pd.same($$SELECT tenant, day, seq, at FROM %s WHERE kind = 'view' ORDER BY 1, 2, 3, 4$$);
ALTER FOREIGN TABLE pd.events OPTIONS (DROP allow_filtering);

-- never pushed: OR, <>, IS NULL, text ranges outside "C", uuid ranges,
-- sub-millisecond timestamp constants, volatile values
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE (tenant = 1 OR tenant = 2) AND day = '2024-01-01';
SELECT pd.same($$SELECT tenant, seq, at FROM %s WHERE (tenant = 1 OR tenant = 2) AND day = '2024-01-01' ORDER BY 1, 2, 3$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND seq <> 3;
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND seq IS NULL;
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND seq = 1 AND at > '2024-01-01 00:00:00.0005+00';
SELECT pd.same($$SELECT at FROM %s WHERE tenant = 1 AND day = '2024-01-01' AND seq = 1 AND at > '2024-01-01 00:00:00.0005+00' ORDER BY 1$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND seq = (random() * 0)::int + 1;
ALTER FOREIGN TABLE pd.events OPTIONS (ADD allow_filtering 'true');
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE kind > 'b';
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE kind > 'b' COLLATE "C";
SELECT pd.same($$SELECT tenant, day, seq, at FROM %s WHERE kind > 'b' COLLATE "C" ORDER BY 1, 2, 3, 4$$);
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE id > '80000000-0000-0000-0000-000000000000';
SELECT pd.same($$SELECT tenant, day, seq, at FROM %s WHERE id > '80000000-0000-0000-0000-000000000000' ORDER BY 1, 2, 3, 4$$);
ALTER FOREIGN TABLE pd.events OPTIONS (DROP allow_filtering);

-- values computed once per scan are bound, not spliced into the text
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq FROM pd.events WHERE tenant = 1 + 1 AND day = date '2024-01-01' + 2;
SELECT pd.same($$SELECT seq, at FROM %s WHERE tenant = 1 + 1 AND day = date '2024-01-01' + 2 ORDER BY 1, 2$$);
-- a key value that no row can have: no rows (and no error)
SELECT count(*) FROM pd.events WHERE tenant = 1 AND day = '2024-01-01' AND at = '2024-01-01 07:00:00.0001+00';
SELECT count(*) FROM pd.events WHERE tenant = 5000000000 AND day = '2024-01-01';
SELECT count(*) FROM pd.events WHERE tenant = NULL::int AND day = '2024-01-01';

-- a count of one partition is computed by Cassandra (more in aggregates.sql)
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM pd.events WHERE tenant = 2 AND day = '2024-01-02';
SELECT count(*) FROM pd.events WHERE tenant = 2 AND day = '2024-01-02';

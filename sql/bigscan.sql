--
-- Bulk load and big scan: INSERT ... SELECT of 62,500 generated rows
-- arrives complete (count and an order-independent checksum equal on both
-- sides), and scanning them (61 MB of payload, 1 kB a row) runs page by
-- page: the backend's peak memory grows by far less than the data it
-- reads.  (A sixteenth of the rows of 1,000,000 with 64-byte payloads, the
-- same data volume: the load's cost is mostly per row, and the memory
-- bound is about bytes.)
--
\i sql/include/cql_server.sql
\set ks regress_big
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_big.items (id int PRIMARY KEY, payload text, n bigint)');
END $$;
CREATE SCHEMA bg;
IMPORT FOREIGN SCHEMA regress_big FROM SERVER cass INTO bg;

INSERT INTO bg.items (id, payload, n)
SELECT g, repeat(md5(g::text) || md5((-g)::text), 16), g FROM generate_series(1, 62500) g;

-- nothing lost, nothing duplicated, nothing changed
SELECT count(*), sum(hashtextextended(g || '|' || repeat(md5(g::text) || md5((-g)::text), 16) || '|' || g, 0)::numeric) AS checksum
FROM generate_series(1, 62500) g;
SELECT count(*), sum(hashtextextended(id || '|' || payload || '|' || n, 0)::numeric) AS checksum
FROM bg.items;

-- a fresh backend, so its peak RSS says only what the scan needed
\c
SELECT (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+) kB'))[1]::bigint AS hwm_before \gset
SELECT count(*) AS rows, sum(length(payload)) / (1024 * 1024) AS payload_mb, sum(n) = 62500::bigint * 62501 / 2 AS all_rows
FROM bg.items;
SELECT (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+) kB'))[1]::bigint AS hwm_after \gset
SELECT :hwm_after - :hwm_before < 32 * 1024 AS peak_growth_under_32mb;
\if :{?cql_verbose}
SELECT :hwm_before AS hwm_before_kb, :hwm_after AS hwm_after_kb;
\endif

-- ANALYZE reads the table once and gives the planner real numbers
ANALYZE bg.items;
SELECT reltuples FROM pg_class WHERE oid = 'bg.items'::regclass;
SELECT attname, n_distinct, null_frac FROM pg_stats
WHERE schemaname = 'bg' AND tablename = 'items' ORDER BY attname;
CREATE FUNCTION bg.estimated_rows(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
    IF line LIKE '%Foreign Scan%' THEN
      RETURN (regexp_match(line, 'rows=(\d+)'))[1]::bigint;
    END IF;
  END LOOP;
END $$;
SELECT bg.estimated_rows('SELECT * FROM bg.items') AS whole_table,
       bg.estimated_rows('SELECT * FROM bg.items WHERE id = 42') AS one_key,
       bg.estimated_rows('SELECT * FROM bg.items WHERE id IN (1, 2, 3)') AS three_keys;

-- Above analyze_rows (default 1,000,000) ANALYZE reads token ranges in
-- random order and extrapolates the row count: here about a fifth of the
-- ring for 12,500 rows.
ALTER FOREIGN TABLE bg.items OPTIONS (ADD analyze_rows '12500');
ANALYZE bg.items;
SELECT reltuples BETWEEN 56250 AND 68750 AS estimate_within_10_percent
FROM pg_class WHERE oid = 'bg.items'::regclass;
SELECT bg.estimated_rows('SELECT * FROM bg.items WHERE id = 42') AS one_key_after_sampling;
ALTER FOREIGN TABLE bg.items OPTIONS (DROP analyze_rows);
ALTER FOREIGN TABLE bg.items OPTIONS (ADD analyze_rows '-1');

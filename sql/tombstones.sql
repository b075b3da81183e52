--
-- Reads through partitions full of tombstones (src/fdw/scan_task.c).
-- Cassandra stops a read command that meets more tombstones than its
-- tombstone_failure_threshold (100000); a page is one read command, so a
-- scan whose page fails that way reads the same page again in smaller
-- pages (an eighth each time, down to one row), once reported as a
-- WARNING, and returns every live row.  Tombstones that lie together
-- beyond the threshold fail even a page of one row: the error says so,
-- with SQLSTATE HV00L and a hint.  Expired TTL rows are tombstones; rows
-- written with ttl '1' make them quickly.
--
\i sql/include/cql_server.sql
\set ks regress_tomb
\i sql/include/keyspace.sql

SELECT cql_execute('cass', 'CREATE TABLE regress_tomb.t (p int, c int, v text, PRIMARY KEY (p, c))');
CREATE SCHEMA tb;
IMPORT FOREIGN SCHEMA regress_tomb FROM SERVER cass INTO tb;
CREATE FOREIGN TABLE tb.t_expiring (p int, c int, v text)
  SERVER cass OPTIONS (keyspace 'regress_tomb', "table" 't', ttl '1');

-- partition 1: 37 live rows, 3000 expired ones between each two of them;
-- partition 2: 110000 expired rows and nothing else
INSERT INTO tb.t_expiring SELECT p, c, 'gone' FROM generate_series(1, 2) p, generate_series(1, 110000) c;
INSERT INTO tb.t SELECT 1, c, 'live ' || c FROM generate_series(1500, 110000, 3000) c;
SELECT pg_sleep(2.1);

-- a page of 5000 rows meets them all; pages of 9 rows (27000 tombstones) do not
EXPLAIN (VERBOSE, COSTS OFF) SELECT c, v FROM tb.t WHERE p = 1 ORDER BY c;
SELECT count(*), min(c), max(c), sum(c) FROM (SELECT c, v FROM tb.t WHERE p = 1 ORDER BY c) s;
-- the aggregate pushed down pages inside Cassandra with the same page size
SELECT count(*) FROM tb.t WHERE p = 1;
-- a smaller fetch_size from the start: no retry needed, no WARNING of ours
ALTER FOREIGN TABLE tb.t OPTIONS (ADD fetch_size '8');
SELECT count(*), sum(c) FROM (SELECT c FROM tb.t WHERE p = 1 OFFSET 0) s;
ALTER FOREIGN TABLE tb.t OPTIONS (DROP fetch_size);

-- 110000 tombstones in a row: even pages of one row fail
SELECT c FROM tb.t WHERE p = 2;
\echo :LAST_ERROR_SQLSTATE

SET client_min_messages = warning;
DROP SCHEMA tb CASCADE;
RESET client_min_messages;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_tomb');

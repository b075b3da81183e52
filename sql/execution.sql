--
-- Execution: prepared statements keep their pushdown under generic plans,
-- joins on the partition key become per-key lookups, rescans re-read,
-- NULL parameters match nothing, and a slow scan can be cancelled.
--
\i sql/include/cql_server.sql
\set ks regress_exec
\i sql/include/keyspace.sql

DO $$
DECLARE
  stmt text;
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_exec.users (user_id int PRIMARY KEY, name text)');
  PERFORM cql_execute('cass', 'CREATE TABLE regress_exec.orders (user_id int, order_no int, total decimal, PRIMARY KEY ((user_id), order_no)) WITH CLUSTERING ORDER BY (order_no DESC)');
  FOR u IN 1..200 LOOP
    stmt := format('BEGIN UNLOGGED BATCH INSERT INTO regress_exec.users (user_id, name) VALUES (%s, %L); ', u, 'user ' || u);
    FOR o IN 1..(u % 7) LOOP
      stmt := stmt || format('INSERT INTO regress_exec.orders (user_id, order_no, total) VALUES (%s, %s, %s); ', u, o, u * 10 + o + 0.5);
    END LOOP;
    PERFORM cql_execute('cass', stmt || 'APPLY BATCH');
  END LOOP;
END $$;

CREATE SCHEMA ex;
IMPORT FOREIGN SCHEMA regress_exec FROM SERVER cass INTO ex;
SELECT count(*) FROM ex.users;
SELECT count(*) FROM ex.orders;

-- prepared statements: the parameter is bound, also in the generic plan
PREPARE user_orders(int) AS SELECT order_no, total FROM ex.orders WHERE user_id = $1 ORDER BY order_no DESC;
EXECUTE user_orders(13);
EXECUTE user_orders(20);
EXECUTE user_orders(27);
EXECUTE user_orders(34);
EXECUTE user_orders(41);
EXECUTE user_orders(48);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE user_orders(6);
EXECUTE user_orders(6);
-- a NULL parameter matches nothing, without a round trip
EXECUTE user_orders(NULL);
PREPARE in_list(int[]) AS SELECT user_id, name FROM ex.users WHERE user_id = ANY ($1) ORDER BY user_id;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE in_list('{1,2}');
EXECUTE in_list('{5, 3, 5, NULL, 7}');
EXECUTE in_list('{}');
EXECUTE in_list(NULL);
RESET plan_cache_mode;

-- a local table joined on the partition key: one lookup per outer row
CREATE TABLE ex.wanted (user_id int, note text);
INSERT INTO ex.wanted VALUES (3, 'c'), (10, 'j'), (10, 'j again'), (150, 'x'), (999, 'missing');
ANALYZE ex.wanted;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT w.note, u.name FROM ex.wanted w JOIN ex.users u ON u.user_id = w.user_id ORDER BY w.note;
SELECT w.note, u.name FROM ex.wanted w JOIN ex.users u ON u.user_id = w.user_id ORDER BY w.note;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT w.note, o.order_no, o.total FROM ex.wanted w JOIN ex.orders o ON o.user_id = w.user_id AND o.order_no <= 2
ORDER BY w.note, o.order_no;
SELECT w.note, o.order_no, o.total FROM ex.wanted w JOIN ex.orders o ON o.user_id = w.user_id AND o.order_no <= 2
ORDER BY w.note, o.order_no;
-- LEFT JOIN keeps outer rows without a partition
SELECT w.user_id, u.name FROM ex.wanted w LEFT JOIN ex.users u ON u.user_id = w.user_id ORDER BY 1, 2;
-- a correlated subquery rescans the foreign scan with new parameters
SELECT w.user_id, (SELECT count(*) FROM ex.orders o WHERE o.user_id = w.user_id) AS n
FROM ex.wanted w ORDER BY 1;
-- LATERAL with LIMIT: newest order of each wanted user
SELECT w.user_id, l.order_no FROM ex.wanted w,
  LATERAL (SELECT order_no FROM ex.orders o WHERE o.user_id = w.user_id ORDER BY order_no DESC LIMIT 1) l
ORDER BY 1, 2;

-- foreign to foreign: users of the orders of user 6, by key
EXPLAIN (COSTS OFF)
SELECT u.name FROM ex.orders o JOIN ex.users u ON u.user_id = o.order_no WHERE o.user_id = 6;
SELECT u.name FROM ex.orders o JOIN ex.users u ON u.user_id = o.order_no WHERE o.user_id = 6 ORDER BY 1;

-- a cancelled scan stops promptly and leaves the connection usable: without
-- Materialize the inner scan is re-read from Cassandra for each of the 598
-- outer rows (seconds of work); statement_timeout stops it, and the
-- statement ends within a second of its start
SET enable_material = off;
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '100ms';
SELECT count(*) FROM ex.orders a, ex.orders b;
RESET statement_timeout;
SELECT clock_timestamp() - :'t0' < interval '1 second' AS canceled_within_a_second;
RESET enable_material;
SELECT count(*) FROM ex.users WHERE user_id IN (1, 2, 3);

-- connections are cached per user mapping and dropped on ALTER SERVER
SELECT server_name, protocol_version, compression, valid FROM cql_fdw_get_connections();
ALTER SERVER cass OPTIONS (ADD compression 'none');
SELECT count(*) FROM ex.users WHERE user_id = 1;
SELECT server_name, protocol_version, compression, valid FROM cql_fdw_get_connections();
ALTER SERVER cass OPTIONS (ADD protocol_version '4');
SELECT name FROM ex.users WHERE user_id = 77;
SELECT server_name, protocol_version, compression, valid FROM cql_fdw_get_connections();
ALTER SERVER cass OPTIONS (DROP compression, DROP protocol_version);
SELECT count(*) FROM cql_fdw_get_connections();
SELECT count(*) FROM ex.users WHERE user_id = 2;
SELECT cql_fdw_disconnect('cass');
SELECT count(*) FROM cql_fdw_get_connections();
SELECT cql_fdw_disconnect_all();

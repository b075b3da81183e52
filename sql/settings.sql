--
-- Settings per session or transaction (cql_fdw.consistency,
-- cql_fdw.write_consistency, cql_fdw.serial_consistency, cql_fdw.write_mode)
-- over the options,
-- the option serial_consistency, the user mapping option "user", and time
-- options with units.
--
\i sql/include/cql_server.sql
-- A keyspace with more replicas than any test cluster has nodes: ONE works,
-- a level that needs several replicas is refused by Cassandra with
-- "Cannot achieve consistency level X", naming the level the request
-- carried.  (Its warning about the replication factor is not shown.)
SET client_min_messages = error;
SELECT cql_execute('cass', 'DROP KEYSPACE IF EXISTS regress_settings');
SELECT cql_execute('cass', $$CREATE KEYSPACE regress_settings WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 7}$$);
SELECT cql_execute('cass', 'CREATE TABLE regress_settings.kv (k int PRIMARY KEY, v text)');
RESET client_min_messages;
CREATE SCHEMA gs;
IMPORT FOREIGN SCHEMA regress_settings FROM SERVER cass INTO gs;
-- the error without the node's address and replica counts, which differ
-- between a single node and a cluster
\set VERBOSITY terse

SHOW cql_fdw.consistency;
INSERT INTO gs.kv VALUES (1, 'one');
SELECT * FROM gs.kv;
-- SET LOCAL: one transaction
BEGIN;
SET LOCAL cql_fdw.consistency = 'all';
SELECT * FROM gs.kv;
ROLLBACK;
SELECT * FROM gs.kv;
-- a cached plan takes the setting of its execution
PREPARE q AS SELECT v FROM gs.kv WHERE k = 1;
EXECUTE q;
SET cql_fdw.consistency = 'QUORUM';
EXECUTE q;
RESET cql_fdw.consistency;
EXECUTE q;
-- a setting that is set wins over the table (and server) option
ALTER FOREIGN TABLE gs.kv OPTIONS (ADD consistency 'ALL');
SELECT * FROM gs.kv;
SET cql_fdw.consistency = 'ONE';
SELECT * FROM gs.kv;
RESET cql_fdw.consistency;
ALTER FOREIGN TABLE gs.kv OPTIONS (DROP consistency);

-- writes
BEGIN;
SET LOCAL cql_fdw.write_consistency = 'ALL';
INSERT INTO gs.kv VALUES (2, 'two');
COMMIT;
SELECT * FROM gs.kv WHERE k = 2;

-- lightweight transactions: SERIAL by default (Cassandra names its Paxos
-- quorum, QUORUM), LOCAL_SERIAL (LOCAL_QUORUM) from the option or setting
INSERT INTO gs.kv VALUES (3, 'three') ON CONFLICT DO NOTHING;
BEGIN;
SET LOCAL cql_fdw.serial_consistency = 'local_serial';
INSERT INTO gs.kv VALUES (3, 'three') ON CONFLICT DO NOTHING;
COMMIT;
ALTER FOREIGN TABLE gs.kv OPTIONS (ADD serial_consistency 'LOCAL_SERIAL', ADD if_not_exists 'true');
INSERT INTO gs.kv VALUES (3, 'three');
SET cql_fdw.serial_consistency = 'SERIAL';
INSERT INTO gs.kv VALUES (3, 'three');
RESET cql_fdw.serial_consistency;
-- ... also cql_execute's statements with IF
SET cql_fdw.serial_consistency = 'LOCAL_SERIAL';
SELECT cql_execute('cass', 'INSERT INTO regress_settings.kv (k, v) VALUES (4, ''four'') IF NOT EXISTS');
RESET cql_fdw.serial_consistency;
ALTER FOREIGN TABLE gs.kv OPTIONS (DROP serial_consistency, DROP if_not_exists);

-- cql_fdw.write_mode: 'on_commit' for one transaction without changing the
-- options (cqlbridge stream's DELETEs): writes, a DELETE by key too, wait
-- for COMMIT and ROLLBACK forgets them; a set setting wins over the option
BEGIN;
SET LOCAL cql_fdw.write_mode = 'on_commit';
INSERT INTO gs.kv (k, v) VALUES (8, 'eight');
DELETE FROM gs.kv WHERE k = 1;
SELECT k FROM gs.kv WHERE k IN (1, 8) ORDER BY k;
ROLLBACK;
SELECT k FROM gs.kv WHERE k IN (1, 8) ORDER BY k;
BEGIN;
SET LOCAL cql_fdw.write_mode = 'ON_COMMIT';
INSERT INTO gs.kv (k, v) VALUES (8, 'eight');
COMMIT;
SELECT k FROM gs.kv WHERE k IN (1, 8) ORDER BY k;
SHOW cql_fdw.write_mode;
ALTER FOREIGN TABLE gs.kv OPTIONS (ADD write_mode 'on_commit');
BEGIN;
SET LOCAL cql_fdw.write_mode = 'immediate';
DELETE FROM gs.kv WHERE k = 8;
ROLLBACK;
SELECT k FROM gs.kv WHERE k IN (1, 8) ORDER BY k;
ALTER FOREIGN TABLE gs.kv OPTIONS (DROP write_mode);

-- levels a direction does not accept, with the valid ones as hint
\set VERBOSITY default
SET cql_fdw.consistency = 'EACH_QUORUM';
SET cql_fdw.write_mode = 'later';
SET cql_fdw.write_consistency = 'serial';
SET cql_fdw.serial_consistency = 'QUORUM';
SET cql_fdw.fetch_size = 10;
ALTER FOREIGN TABLE gs.kv OPTIONS (ADD serial_consistency 'ONE');

-- the user mapping names the Cassandra role "user" (postgres_fdw, libpq)
-- or "username", not both
CREATE SERVER settings_s FOREIGN DATA WRAPPER cql_fdw OPTIONS (host 'localhost');
CREATE USER MAPPING FOR CURRENT_USER SERVER settings_s OPTIONS (user 'app', password 'x');
ALTER USER MAPPING FOR CURRENT_USER SERVER settings_s OPTIONS (ADD username 'app');
ALTER USER MAPPING FOR CURRENT_USER SERVER settings_s OPTIONS (DROP user, ADD username 'app');
SELECT umoptions FROM pg_user_mappings WHERE srvname = 'settings_s';
DROP USER MAPPING FOR CURRENT_USER SERVER settings_s;
CREATE USER MAPPING FOR CURRENT_USER SERVER settings_s OPTIONS (username 'a', user 'b');

-- time options take PostgreSQL's units; a bare number keeps its unit
-- (milliseconds, seconds for ttl)
ALTER SERVER settings_s OPTIONS (ADD connect_timeout '10s', ADD request_timeout '1min',
  ADD retry_timeout '90000', ADD speculative_delay '250ms', ADD heartbeat_interval '0');
ALTER SERVER settings_s OPTIONS (SET connect_timeout '10 parsecs');
ALTER SERVER settings_s OPTIONS (SET connect_timeout '0s');
ALTER SERVER settings_s OPTIONS (SET request_timeout '-1s');
ALTER SERVER settings_s OPTIONS (ADD ttl '1 fortnight');
SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'settings_s';
-- ttl in seconds: '2h' is 7200, '90' is 90 seconds
ALTER FOREIGN TABLE gs.kv ADD COLUMN v_ttl integer OPTIONS (ttl_of 'v');
ALTER FOREIGN TABLE gs.kv OPTIONS (ADD ttl '2h');
INSERT INTO gs.kv (k, v) VALUES (5, 'five');
ALTER FOREIGN TABLE gs.kv OPTIONS (SET ttl '90');
INSERT INTO gs.kv (k, v) VALUES (6, 'six');
SELECT k, v, v_ttl BETWEEN 7100 AND 7200 AS two_hours, v_ttl BETWEEN 1 AND 90 AS ninety_s
FROM gs.kv WHERE k IN (5, 6) ORDER BY k;


-- updatable 'false' (table, else server), as postgres_fdw: reads only
ALTER FOREIGN TABLE gs.kv OPTIONS (ADD updatable 'false');
INSERT INTO gs.kv (k, v) VALUES (7, 'seven');
COPY gs.kv (k, v) FROM stdin;
7	seven
\.
DELETE FROM gs.kv WHERE k = 5;
SELECT count(*) FROM gs.kv WHERE k = 5;
ALTER SERVER cass OPTIONS (ADD updatable 'false');
ALTER FOREIGN TABLE gs.kv OPTIONS (SET updatable 'true');
INSERT INTO gs.kv (k, v) VALUES (7, 'seven');
ALTER FOREIGN TABLE gs.kv OPTIONS (DROP updatable);
UPDATE gs.kv SET v = 'x' WHERE k = 7;
ALTER SERVER cass OPTIONS (DROP updatable);

-- the application name in the STARTUP message: PostgreSQL's
-- application_name when the connection opens, or the server option;
-- Cassandra shows it (and the CLIENT_ID, a UUID) in system_views.clients
SET application_name = 'regress_settings_app';
SELECT cql_fdw_disconnect('cass');
SELECT count(*) > 0 AS seen,
       bool_and(r->'client_options'->>'CLIENT_ID' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$') AS client_id_uuid,
       bool_and(r->'client_options'->>'DRIVER_NAME' = 'cql_fdw') AS driver
FROM cql_query('cass', 'SELECT client_options FROM system_views.clients') r
WHERE r->'client_options'->>'APPLICATION_NAME' = 'regress_settings_app';
ALTER SERVER cass OPTIONS (ADD application_name 'regress_etl');
SELECT count(*) > 0 AS seen
FROM cql_query('cass', 'SELECT client_options FROM system_views.clients') r
WHERE r->'client_options'->>'APPLICATION_NAME' = 'regress_etl';
ALTER SERVER cass OPTIONS (DROP application_name);
RESET application_name;

-- keep_connections 'false': the connection is closed at the end of each
-- transaction (as postgres_fdw); by default it stays cached
SELECT count(*) FROM gs.kv WHERE k = 1;
SELECT count(*) AS cached FROM cql_fdw_get_connections() WHERE server_name = 'cass';
ALTER SERVER cass OPTIONS (ADD keep_connections 'false');
SELECT count(*) FROM gs.kv WHERE k = 1;
SELECT count(*) AS cached FROM cql_fdw_get_connections() WHERE server_name = 'cass';
BEGIN;
SELECT count(*) FROM gs.kv WHERE k = 1;
SELECT count(*) AS cached_in_transaction FROM cql_fdw_get_connections() WHERE server_name = 'cass';
COMMIT;
SELECT count(*) AS cached FROM cql_fdw_get_connections() WHERE server_name = 'cass';
ALTER SERVER cass OPTIONS (DROP keep_connections);

-- IMPORT FOREIGN SCHEMA ... OPTIONS (write_metadata 'true'): a write time
-- and a TTL column for each regular or static column of a single-cell type
SELECT cql_execute('cass', 'CREATE TABLE regress_settings.wm (k int, c int, s text static, v text, n int, l list<int>, fl frozen<list<int>>, PRIMARY KEY ((k), c))');
CREATE SCHEMA gsw;
IMPORT FOREIGN SCHEMA regress_settings LIMIT TO (wm) FROM SERVER cass INTO gsw OPTIONS (write_metadata 'true');
SELECT attname, format_type(atttypid, atttypmod), attfdwoptions
FROM pg_attribute WHERE attrelid = 'gsw.wm'::regclass AND attnum > 0 AND attname ~ '_(writetime|ttl)$'
ORDER BY attnum;
INSERT INTO gsw.wm (k, c, v, v_ttl, n) VALUES (1, 1, 'x', 600, 7);
-- (the TTL applies to every column the INSERT writes: n's too)
SELECT v, v_ttl BETWEEN 590 AND 600 AS v_ttl_600, n_ttl BETWEEN 590 AND 600 AS n_ttl_600,
       v_writetime BETWEEN now() - interval '1 hour' AND clock_timestamp() AS v_written_now
FROM gsw.wm WHERE k = 1;
IMPORT FOREIGN SCHEMA regress_settings LIMIT TO (wm) FROM SERVER cass INTO gsw OPTIONS (ttl_columns 'true');

DROP SERVER settings_s CASCADE;
DROP SCHEMA gsw CASCADE;
DROP SCHEMA gs CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_settings');

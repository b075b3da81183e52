--
-- tests/pgtap/10_errors.sql
--		pgTAP: every class of failure of cql_fdw raises an ERROR with the
--		right SQLSTATE (never a crash), and secrets stay out of messages.
--
-- Needs the Cassandra test nodes: CQL_HOST (default 127.0.0.1) and the
-- PasswordAuthenticator node CQL_AUTH_HOST (default 127.0.0.4).
--
\ir include/setup.sql

BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
SELECT plan(32);

CREATE SERVER tap_cass FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_host');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_cass;
\set ks tap_errors
\set ks_server tap_cass
\set ks_drop_test 'cql_execute runs DDL'
\ir include/keyspace.sql
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_cass', 'CREATE TABLE tap_errors.t (k int, c int, v text, PRIMARY KEY ((k), c))')$$,
                          'table created');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_cass', 'CREATE TABLE tap_errors.s (id int PRIMARY KEY, who text)')$$,
                          'second table created');
CREATE SCHEMA tap;
IMPORT FOREIGN SCHEMA tap_errors FROM SERVER tap_cass INTO tap;

-- options
SELECT throws_ok($$CREATE SERVER x FOREIGN DATA WRAPPER cql_fdw OPTIONS (hots 'a')$$,
                 'HV00D', NULL, 'unknown option: HV00D');
SELECT throws_ok($$CREATE SERVER x FOREIGN DATA WRAPPER cql_fdw OPTIONS (port 'x')$$,
                 'HV024', NULL, 'bad option value: HV024');
SELECT throws_ok($$ALTER FOREIGN TABLE tap.s ALTER COLUMN who OPTIONS (ADD sai_similarity 'manhattan')$$,
                 'HV024', NULL, 'bad vector similarity function: HV024');
SELECT throws_ok($$CREATE SERVER x FOREIGN DATA WRAPPER cql_fdw OPTIONS (timestamp_precision 'nearest')$$,
                 'HV024', 'invalid value for option "timestamp_precision": "nearest"',
                 'bad server timestamp_precision: HV024');
SELECT throws_ok($$ALTER FOREIGN TABLE tap.s ALTER COLUMN who OPTIONS (ADD timestamp_precision 'ceil')$$,
                 'HV024', NULL, 'bad column timestamp_precision: HV024');
SELECT throws_ok($$CREATE USER MAPPING FOR PUBLIC SERVER tap_cass OPTIONS (timestamp_precision 'round')$$,
                 'HV00D', NULL, 'timestamp_precision is no user mapping option: HV00D');

-- values Cassandra cannot store: 22003 (a sub-millisecond timestamp only
-- under timestamp_precision 'error'; the default truncates)
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_cass', 'CREATE TABLE tap_errors.tsp (k int PRIMARY KEY, at timestamp, ip inet)')$$,
                          'timestamp table created');
CREATE FOREIGN TABLE tap.tsp (k int, at timestamptz OPTIONS (timestamp_precision 'error'), ip inet)
  SERVER tap_cass OPTIONS (keyspace 'tap_errors', "table" 'tsp');
SELECT throws_ok($$INSERT INTO tap.tsp (k, at) VALUES (1, '2024-01-01 00:00:00.000001+00')$$,
                 '22003', NULL, 'sub-millisecond timestamp under timestamp_precision error: 22003');
SELECT throws_ok($$INSERT INTO tap.tsp (k, ip) VALUES (1, '10.0.0.0/8')$$,
                 '22003', NULL, 'inet with a netmask: 22003');
ALTER FOREIGN TABLE tap.tsp ALTER COLUMN at OPTIONS (DROP timestamp_precision);
SELECT lives_ok($$INSERT INTO tap.tsp (k, at) VALUES (1, now())$$,
                'now() is written under the default timestamp_precision (truncate)');

-- connections
CREATE SERVER tap_dead FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '127.0.0.1:1', connect_timeout '2000');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_dead;
SELECT throws_ok($$SELECT cql_execute('tap_dead', 'SELECT now() FROM system.local')$$,
                 'HV00N', NULL, 'unreachable host: HV00N');
CREATE SERVER tap_some_dead FOREIGN DATA WRAPPER cql_fdw
  OPTIONS (host :'cql_host', port '9042');
ALTER SERVER tap_some_dead OPTIONS (SET host '127.0.0.1:1');
ALTER SERVER tap_some_dead OPTIONS (SET host :'cql_host');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_some_dead;
SELECT lives_ok($$SELECT cql_execute('tap_some_dead', 'SELECT now() FROM system.local')$$,
                'a server whose options changed reconnects');

-- authentication (PasswordAuthenticator node).  The messages are checked
-- too (pg_temp.error_text, from include/setup.sql): a node that is down
-- also fails with HV00N.
CREATE SERVER tap_auth FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_auth_host');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_auth OPTIONS (username 'cassandra', password 'not-the-password-4711');
SELECT throws_ok($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$,
                 'HV00N', NULL, 'wrong password: HV00N');
SELECT alike(pg_temp.error_text($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$),
             '%authentication failed%password are incorrect%', 'wrong password: Cassandra''s reason is shown');
SELECT unalike(pg_temp.error_text($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$),
               '%not-the-password-4711%', 'the password never appears in the error');
ALTER USER MAPPING FOR CURRENT_USER SERVER tap_auth OPTIONS (DROP username, DROP password);
SELECT throws_ok($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$,
                 'HV00N', NULL, 'credentials required but not given: HV00N');
SELECT alike(pg_temp.error_text($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$),
             '%requires authentication%', 'missing credentials: the reason is shown');
ALTER USER MAPPING FOR CURRENT_USER SERVER tap_auth OPTIONS (ADD username 'cassandra', ADD password 'cassandra');
SELECT lives_ok($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$,
                'correct credentials connect');
-- "user" (postgres_fdw's and libpq's name) is the role, as "username"
ALTER USER MAPPING FOR CURRENT_USER SERVER tap_auth OPTIONS (DROP username, ADD user 'tap_no_such_role');
SELECT throws_ok($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$,
                 'HV00N', NULL, 'option user names the role: an unknown one fails');
ALTER USER MAPPING FOR CURRENT_USER SERVER tap_auth OPTIONS (SET user 'cassandra');
SELECT lives_ok($$SELECT cql_execute('tap_auth', 'SELECT now() FROM system.local')$$,
                'option user connects as username does');

-- a non-superuser must use a password, and Cassandra must ask for it
CREATE ROLE tap_regress_user;
GRANT USAGE ON FOREIGN SERVER tap_cass TO tap_regress_user;
GRANT USAGE ON SCHEMA tap TO tap_regress_user;
GRANT SELECT ON tap.t TO tap_regress_user;
CREATE USER MAPPING FOR tap_regress_user SERVER tap_cass;
SET ROLE tap_regress_user;
SELECT throws_ok($$SELECT * FROM tap.t WHERE k = 1$$, '2F003', 'password is required',
                 'non-superuser without password: 2F003');
RESET ROLE;
ALTER USER MAPPING FOR tap_regress_user SERVER tap_cass OPTIONS (ADD username 'u', ADD password 'p');
SET ROLE tap_regress_user;
SELECT throws_ok($$SELECT * FROM tap.t WHERE k = 1$$, '2F003', 'password is required',
                 'non-superuser to a server without authentication: 2F003');
RESET ROLE;

-- Cassandra's own errors
SELECT throws_ok($$SELECT cql_execute('tap_cass', 'SELEKT * FROM tap_errors.t')$$,
                 '42601', NULL, 'CQL syntax error: 42601');
SELECT throws_ok($$SELECT cql_execute('tap_cass', 'SELECT * FROM tap_errors.nosuch')$$,
                 'HV000', NULL, 'invalid request: HV000');
SELECT throws_ok($$SELECT cql_execute('tap_cass', 'CREATE TABLE tap_errors.t (k int PRIMARY KEY)')$$,
                 '42710', NULL, 'already exists: 42710');
ALTER FOREIGN TABLE tap.t OPTIONS (ADD write_consistency 'ALL', ADD consistency 'THREE');
SELECT throws_ok($$SELECT * FROM tap.t WHERE k = 1$$, 'HV00L', NULL,
                 'unavailable replicas: HV00L');
ALTER FOREIGN TABLE tap.t OPTIONS (DROP write_consistency, DROP consistency);

-- schema mismatches
SELECT throws_ok($$IMPORT FOREIGN SCHEMA no_such_keyspace FROM SERVER tap_cass INTO tap$$,
                 'HV00Q', NULL, 'unknown keyspace: HV00Q');
CREATE FOREIGN TABLE tap.missing (k int) SERVER tap_cass OPTIONS (keyspace 'tap_errors', "table" 'missing');
SELECT throws_ok($$SELECT * FROM tap.missing$$, 'HV00R', NULL, 'unknown table: HV00R');
CREATE FOREIGN TABLE tap.badcol (k int, nosuch int) SERVER tap_cass OPTIONS (keyspace 'tap_errors', "table" 't');
SELECT throws_ok($$SELECT * FROM tap.badcol$$, 'HV005', NULL, 'unknown column: HV005');
CREATE FOREIGN TABLE tap.badtype (k int, c int, v int) SERVER tap_cass OPTIONS (keyspace 'tap_errors', "table" 't');
SELECT throws_ok($$SELECT * FROM tap.badtype$$, 'HV004', NULL, 'incompatible column type: HV004');

-- writes
SELECT throws_ok($$INSERT INTO tap.t (k, c, v) VALUES (NULL, 1, 'x')$$, '23502', NULL,
                 'null key: 23502');
SELECT throws_ok($$UPDATE tap.t SET c = 2 WHERE k = 1$$, '0A000', NULL, 'key update: 0A000');
ALTER FOREIGN TABLE tap.s OPTIONS (ADD if_not_exists 'true');
INSERT INTO tap.s VALUES (1, 'first');
SELECT throws_ok($$INSERT INTO tap.s VALUES (1, 'second')$$, '23505', NULL,
                 'existing row with if_not_exists: 23505');

SELECT * FROM finish();
ROLLBACK;

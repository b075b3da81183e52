--
-- tests/pgtap/20_privileges.sql
--		pgTAP: who may talk to Cassandra through cql_fdw, and with which
--		credentials.
--
-- cql_execute() sends any CQL with the credentials of a user mapping, so
-- EXECUTE is not granted to PUBLIC and the caller also needs USAGE on the
-- foreign server.  A non-superuser's connections must all be asked for a
-- password by Cassandra, also when the backend already holds a connection
-- of a PUBLIC user mapping that a superuser opened.  CQL that carries a
-- password is redacted in error contexts.  Response sizes are bounded.
--
-- Needs the Cassandra test nodes (include/setup.sql).  Everything in
-- PostgreSQL is rolled back; the keyspace tap_priv stays in Cassandra.
--
\ir include/setup.sql

BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
SELECT plan(25);

CREATE ROLE tap_mallory;
CREATE ROLE tap_owner;
CREATE SCHEMA tap_priv;
GRANT USAGE ON SCHEMA tap_priv TO tap_mallory, tap_owner;

-- a server whose PUBLIC mapping holds credentials (the case of the report)
CREATE SERVER tap_priv_cass FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_host');
CREATE USER MAPPING FOR PUBLIC SERVER tap_priv_cass
  OPTIONS (username 'cassandra', password 'cassandra');
\set ks tap_priv
\set ks_server tap_priv_cass
\set ks_drop_test 'superuser runs DDL'
\ir include/keyspace.sql
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_priv_cass', 'CREATE TABLE tap_priv.big (k int PRIMARY KEY, v text)')$$,
                          'table created');
CREATE FOREIGN TABLE tap_priv.keyspaces (keyspace_name text)
  SERVER tap_priv_cass OPTIONS (keyspace 'system_schema', "table" 'keyspaces');

-- 1. EXECUTE on cql_execute is not PUBLIC's
SELECT ok(NOT has_function_privilege('tap_mallory', 'cql_execute(text, text)', 'EXECUTE'),
          'EXECUTE on cql_execute is not granted to PUBLIC');
SET ROLE tap_mallory;
SELECT throws_ok($$SELECT cql_execute('tap_priv_cass', 'DROP KEYSPACE tap_priv')$$,
                 '42501', 'permission denied for function cql_execute',
                 'a role without EXECUTE cannot call cql_execute');
RESET ROLE;

-- 2. ... and a role with EXECUTE still needs USAGE on the server
GRANT EXECUTE ON FUNCTION cql_execute(text, text) TO tap_mallory;
SELECT ok(NOT has_server_privilege('tap_mallory', 'tap_priv_cass', 'USAGE'),
          'tap_mallory has no USAGE on the server');
SET ROLE tap_mallory;
SELECT throws_ok($$SELECT cql_execute('tap_priv_cass', 'DROP KEYSPACE tap_priv')$$,
                 '42501', 'permission denied for foreign server tap_priv_cass',
                 'no USAGE on the server: cql_execute refuses (the reported DROP KEYSPACE)');
RESET ROLE;
SELECT is((SELECT count(*)::int FROM tap_priv.keyspaces WHERE keyspace_name = 'tap_priv'),
          1, 'the keyspace is still there');

-- 3. USAGE given: the PUBLIC mapping's password is required to be asked
--    for.  The superuser's connection of the same mapping is cached in
--    this backend (opened without requiring authentication: the test
--    cluster has none); reusing it must not let the non-superuser in.
GRANT USAGE ON FOREIGN SERVER tap_priv_cass TO tap_mallory;
SELECT lives_ok($$SELECT cql_execute('tap_priv_cass', 'SELECT now() FROM system.local')$$,
                'the superuser''s connection of the PUBLIC mapping is open');
SELECT ok(EXISTS (SELECT 1 FROM cql_fdw_get_connections() WHERE server_name = 'tap_priv_cass'),
          'and cached');
SET ROLE tap_mallory;
SELECT throws_ok($$SELECT cql_execute('tap_priv_cass', 'SELECT now() FROM system.local')$$,
                 '2F003', 'password is required',
                 'a non-superuser does not reuse it: the server did not ask for a password');
SELECT alike(pg_temp.error_text($$SELECT cql_execute('tap_priv_cass', 'SELECT now() FROM system.local')$$),
             '%did not ask for authentication%', 'the reason is given');
RESET ROLE;
SELECT lives_ok($$SELECT cql_execute('tap_priv_cass', 'SELECT now() FROM system.local')$$,
                'the superuser still connects');

-- 4. a non-superuser mapping without a password is refused before anything is sent
CREATE USER MAPPING FOR tap_mallory SERVER tap_priv_cass;
SET ROLE tap_mallory;
SELECT throws_ok($$SELECT cql_execute('tap_priv_cass', 'SELECT now() FROM system.local')$$,
                 '2F003', 'password is required', 'no password in the mapping: 2F003');
RESET ROLE;

-- 5. against a node that asks for a password, the non-superuser works,
--    also on a server the role owns
GRANT USAGE ON FOREIGN DATA WRAPPER cql_fdw TO tap_owner;
GRANT EXECUTE ON FUNCTION cql_execute(text, text) TO tap_owner;
SET ROLE tap_owner;
CREATE SERVER tap_priv_own FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_auth_host');
CREATE USER MAPPING FOR tap_owner SERVER tap_priv_own
  OPTIONS (username 'cassandra', password 'cassandra');
SELECT lives_ok($$SELECT cql_execute('tap_priv_own', 'SELECT now() FROM system.local')$$,
                'owner of a server, password asked for: works');
SELECT lives_ok($$SELECT cql_execute('tap_priv_own', 'SELECT now() FROM system.local')$$,
                'and again on the cached connection');
SELECT throws_ok($$ALTER USER MAPPING FOR tap_owner SERVER tap_priv_own OPTIONS (ADD password_required 'false')$$,
                 '42501', NULL, 'a non-superuser cannot waive the password');
-- the same role pointing its server at nodes without authentication
ALTER SERVER tap_priv_own OPTIONS (SET host :'cql_host');
SELECT throws_ok($$SELECT cql_execute('tap_priv_own', 'SELECT now() FROM system.local')$$,
                 '2F003', 'password is required',
                 'own server moved to nodes without authentication: 2F003');
RESET ROLE;

-- 6. a password in cql_execute's text stays out of the error context
--    (each statement fails: the last option is not one of CQL's)
SELECT unalike(pg_temp.error_text('SELECT cql_execute($1, $2)', 'tap_priv_cass',
                                  $c$CREATE ROLE tap_x WITH PASSWORD = 'sekrit-0815' AND BOGUS = true$c$),
               '%sekrit-0815%', 'CREATE ROLE ... PASSWORD: the password is in no part of the error');
SELECT alike(pg_temp.error_text('SELECT cql_execute($1, $2)', 'tap_priv_cass',
                                $c$CREATE ROLE tap_x WITH PASSWORD = 'sekrit-0815' AND BOGUS = true$c$),
             '%remote CQL: CREATE ROLE tap_x WITH PASSWORD = ''***'' AND BOGUS = true%',
             'the statement is shown with its literals redacted');
SELECT unalike(pg_temp.error_text('SELECT cql_execute($1, $2)', 'tap_priv_cass',
                                  $c$ALTER USER tap_x WITH PASSWORD $$sekrit-0815$$ AND BOGUS = true$c$),
               '%sekrit-0815%', 'ALTER USER ... PASSWORD $$...$$: the password is in no part of the error');
SELECT alike(pg_temp.error_text('SELECT cql_execute($1, $2)', 'tap_priv_cass',
                                $c$ALTER USER tap_x WITH PASSWORD $$sekrit-0815$$ AND BOGUS = true$c$),
             '%remote CQL: ALTER USER tap_x WITH PASSWORD ''***'' AND BOGUS = true%',
             'ALTER USER ... PASSWORD $$...$$: redacted');
SELECT alike(pg_temp.error_text($$SELECT cql_execute('tap_priv_cass', 'SELEKT 1')$$),
             '%remote CQL: SELEKT 1%', 'other statements are shown as they are');

-- 7. responses are bounded by max_response_size
SELECT throws_ok($$ALTER SERVER tap_priv_cass OPTIONS (ADD max_response_size '1kB')$$,
                 'HV024', NULL, 'max_response_size below 64kB is refused');
SELECT throws_ok($$ALTER SERVER tap_priv_cass OPTIONS (ADD discover_peers 'maybe')$$,
                 '42601', NULL, 'discover_peers is a boolean');
CREATE FOREIGN TABLE tap_priv.big (k int, v text)
  SERVER tap_priv_cass OPTIONS (keyspace 'tap_priv', "table" 'big');
INSERT INTO tap_priv.big SELECT g, repeat('x', 100000) FROM generate_series(1, 3) g;
SELECT is((SELECT sum(length(v))::int FROM tap_priv.big), 300000, 'a 300 kB result with the default limit');
ALTER SERVER tap_priv_cass OPTIONS (ADD max_response_size '64kB');
SELECT throws_ok($$SELECT sum(length(v)) FROM tap_priv.big$$, '08006', NULL,
                 'a response over max_response_size: connection failure SQLSTATE');
SELECT alike(pg_temp.error_text($$SELECT sum(length(v)) FROM tap_priv.big$$),
             '%max_response_size%', 'the hint names the option');

SELECT * FROM finish();
ROLLBACK;

--
-- tests/pgtap/30_cql_query.sql
--		pgTAP: cql_query() and cql_query_records() (extension 0.5) raise
--		each class of failure with its SQLSTATE, have the privileges of
--		cql_execute(), and keep secrets out of messages.
--
-- Needs the Cassandra test cluster (include/setup.sql).  Everything in
-- PostgreSQL is rolled back; the keyspace tap_query stays in Cassandra.
--
\ir include/setup.sql

BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
SELECT plan(34);

CREATE SERVER tap_q FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_host', fetch_size '7');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_q;
\set ks tap_query
\set ks_server tap_q
\set ks_drop_test 'cql_execute runs DDL'
\ir include/keyspace.sql
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_q', 'CREATE TABLE tap_query.t (k int, c int, v text, PRIMARY KEY ((k), c))')$$,
                          'table created');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_q', 'INSERT INTO tap_query.t (k, c, v) VALUES (1, 1, ''one'')')$$,
                          'row written');
SELECT pg_temp.setup_step($$SELECT count(cql_execute('tap_q', format('INSERT INTO tap_query.t (k, c, v) VALUES (3, %s, ''x'')', g)))
                            FROM generate_series(1, 30) g$$,
                          '30 rows written in partition 3');

-- the functions
SELECT function_returns('cql_query', ARRAY['text', 'text'], 'setof jsonb',
                        'cql_query(text, text) returns setof jsonb');
SELECT function_returns('cql_query', ARRAY['text', 'text', '"any"'], 'setof jsonb',
                        'cql_query(text, text, VARIADIC "any") returns setof jsonb');
SELECT function_returns('cql_query_records', ARRAY['text', 'text', '"any"'], 'setof record',
                        'cql_query_records(text, text, VARIADIC "any") returns setof record');
SELECT isnt_strict('cql_query', ARRAY['text', 'text', '"any"'],
                   'cql_query is not strict: a null argument is an error, not an empty result');
SELECT volatility_is('cql_query', ARRAY['text', 'text', '"any"'], 'volatile',
                     'cql_query is volatile');

-- what works
SELECT is((SELECT r FROM cql_query('tap_q', 'SELECT k, c, v FROM tap_query.t WHERE k = ?', 1) r),
          '{"k": 1, "c": 1, "v": "one"}'::jsonb, 'a row as jsonb, with a bound parameter');
SELECT is((SELECT v FROM cql_query_records('tap_q', 'SELECT v FROM tap_query.t WHERE k = ? AND c = ?', 1, 1) AS t(v text)),
          'one', 'a row as a record');
SELECT is((SELECT array_agg(c ORDER BY c) FROM cql_query_records('tap_q', 'SELECT c FROM tap_query.t WHERE k = ?', 3) AS t(c int)),
          (SELECT array_agg(g) FROM generate_series(1, 30) g),
          'paging (fetch_size 7) returns every row once');

-- arguments and parameters
SELECT throws_ok($$SELECT * FROM cql_query(NULL, 'SELECT k FROM tap_query.t')$$,
                 '22004', NULL, 'null server name: 22004');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', NULL::int)$$,
                 '22004', NULL, 'null parameter: 22004');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', VARIADIC NULL::int[])$$,
                 '22004', NULL, 'null VARIADIC array: 22004');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?')$$,
                 '42601', 'wrong number of parameters for the CQL statement', 'too few parameters: 42601');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', 1, 2)$$,
                 '42601', 'wrong number of parameters for the CQL statement', 'too many parameters: 42601');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', now())$$,
                 '42804', NULL, 'a parameter type the marker cannot take: 42804');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', 'x')$$,
                 '22023', NULL, 'a text parameter that is no CQL int literal: 22023');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', 2147483648)$$,
                 '22023', NULL, 'a parameter out of the marker type''s range: 22023');

-- records
SELECT throws_ok($$SELECT * FROM cql_query_records('tap_q', 'SELECT k, v FROM tap_query.t') AS t(k int)$$,
                 '42804', 'CQL result has 2 columns, but the column definition list has 1',
                 'column count mismatch: 42804');
SELECT throws_ok($$SELECT * FROM cql_query_records('tap_q', 'SELECT k, v FROM tap_query.t') AS t(k int, v int)$$,
                 '42804', NULL, 'column type mismatch: 42804');
SELECT throws_ok($$SELECT cql_query_records('tap_q', 'SELECT k FROM tap_query.t')$$,
                 '0A000', NULL, 'records without a column definition list: 0A000');

-- statements and Cassandra's errors
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'INSERT INTO tap_query.t (k, c, v) VALUES (2, 2, ''two'')')$$,
                 '2F003', 'CQL statement does not return rows', 'INSERT through cql_query: 2F003');
SELECT is((SELECT count(*)::int FROM cql_query('tap_q', 'SELECT k FROM tap_query.t WHERE k = 2')),
          0, 'and the refused INSERT was not applied');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'DROP TABLE tap_query.t')$$,
                 '2F003', 'CQL statement does not return rows', 'DDL through cql_query: 2F003');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELEC k FROM tap_query.t')$$,
                 '42601', NULL, 'a CQL syntax error: 42601');
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.nope')$$,
                 'HV000', NULL, 'an unknown table (Cassandra''s Invalid): HV000');
SELECT unalike(pg_temp.error_text($$SELECT * FROM cql_query('tap_q', $1)$$,
                                  $$SELEC password FROM tap_query.t WHERE v = 's3cret-4711'$$),
               '%s3cret-4711%', 'a literal of a statement mentioning a password never appears in the error');

-- servers
SELECT throws_ok($$SELECT * FROM cql_query('tap_no_such_server', 'SELECT k FROM tap_query.t')$$,
                 '42704', NULL, 'unknown server: 42704');
CREATE FOREIGN DATA WRAPPER tap_q_other_fdw;
CREATE SERVER tap_q_other FOREIGN DATA WRAPPER tap_q_other_fdw;
SELECT throws_ok($$SELECT * FROM cql_query('tap_q_other', 'SELECT k FROM tap_query.t')$$,
                 '42809', 'server "tap_q_other" is not a cql_fdw server', 'a server of another wrapper: 42809');
CREATE SERVER tap_q_dead FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '127.0.0.1:1', connect_timeout '2000');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_q_dead;
SELECT throws_ok($$SELECT * FROM cql_query('tap_q_dead', 'SELECT k FROM tap_query.t')$$,
                 'HV00N', NULL, 'unreachable host: HV00N');

-- privileges: those of cql_execute
CREATE ROLE tap_q_user;
CREATE USER MAPPING FOR tap_q_user SERVER tap_q;
SELECT ok(NOT has_function_privilege('tap_q_user', 'cql_query(text, text, "any")', 'EXECUTE'),
          'EXECUTE on cql_query is not granted to PUBLIC');
SET ROLE tap_q_user;
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t')$$,
                 '42501', 'permission denied for function cql_query', 'no EXECUTE: 42501');
SELECT throws_ok($$SELECT * FROM cql_query_records('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', 1) AS t(k int)$$,
                 '42501', 'permission denied for function cql_query_records', 'no EXECUTE on cql_query_records: 42501');
RESET ROLE;
GRANT EXECUTE ON FUNCTION cql_query(text, text), cql_query_records(text, text, "any") TO tap_q_user;
SET ROLE tap_q_user;
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t')$$,
                 '42501', 'permission denied for foreign server tap_q', 'EXECUTE without USAGE on the server: 42501');
SELECT throws_ok($$SELECT * FROM cql_query_records('tap_q', 'SELECT k FROM tap_query.t WHERE k = ?', 1) AS t(k int)$$,
                 '42501', 'permission denied for foreign server tap_q', '... for cql_query_records too');
RESET ROLE;
GRANT USAGE ON FOREIGN SERVER tap_q TO tap_q_user;
SET ROLE tap_q_user;
SELECT throws_ok($$SELECT * FROM cql_query('tap_q', 'SELECT k FROM tap_query.t')$$,
                 '2F003', 'password is required', 'USAGE, but a non-superuser''s mapping without password: 2F003');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

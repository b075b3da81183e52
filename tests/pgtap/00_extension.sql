--
-- tests/pgtap/00_extension.sql
--		pgTAP: the cql_fdw extension installs and exposes its SQL API.
--
-- Runs in one transaction that is rolled back, so it leaves nothing behind
-- and does not depend on the state of the database.  Needs no Cassandra:
-- nothing here connects.
--
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
DROP EXTENSION IF EXISTS cql_fdw CASCADE;

SELECT plan(51);

-- installation
SELECT lives_ok('CREATE EXTENSION cql_fdw', 'CREATE EXTENSION cql_fdw works');
SELECT has_extension('cql_fdw', 'extension cql_fdw is installed');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'cql_fdw'),
          '0.9', 'installed version is 0.9');
SELECT ok(NOT has_function_privilege('public', 'cql_execute(text, text)', 'EXECUTE'),
          'EXECUTE on cql_execute is not granted to PUBLIC');

-- the foreign-data wrapper and its handler/validator
SELECT ok(EXISTS (SELECT 1 FROM pg_foreign_data_wrapper WHERE fdwname = 'cql_fdw'),
          'foreign-data wrapper cql_fdw exists');
SELECT is((SELECT fdwhandler::regproc::text FROM pg_foreign_data_wrapper WHERE fdwname = 'cql_fdw'),
          'cql_fdw_handler', 'wrapper uses cql_fdw_handler');
SELECT is((SELECT fdwvalidator::regproc::text FROM pg_foreign_data_wrapper WHERE fdwname = 'cql_fdw'),
          'cql_fdw_validator', 'wrapper uses cql_fdw_validator');

SELECT has_function('cql_fdw_handler', ARRAY[]::name[], 'cql_fdw_handler() exists');
SELECT function_returns('cql_fdw_handler', ARRAY[]::name[], 'fdw_handler',
                        'cql_fdw_handler() returns fdw_handler');
SELECT function_lang_is('cql_fdw_handler', ARRAY[]::name[], 'c',
                        'cql_fdw_handler() is written in C');

SELECT has_function('cql_fdw_validator', ARRAY['text[]', 'oid'],
                    'cql_fdw_validator(text[], oid) exists');
SELECT function_returns('cql_fdw_validator', ARRAY['text[]', 'oid'], 'void',
                        'cql_fdw_validator(text[], oid) returns void');

-- cql_execute(server text, cql text) returns void
SELECT has_function('cql_execute', ARRAY['text', 'text'],
                    'cql_execute(text, text) exists');
SELECT function_returns('cql_execute', ARRAY['text', 'text'], 'void',
                        'cql_execute(text, text) returns void');
SELECT function_lang_is('cql_execute', ARRAY['text', 'text'], 'c',
                        'cql_execute(text, text) is written in C');
SELECT volatility_is('cql_execute', ARRAY['text', 'text'], 'volatile',
                     'cql_execute(text, text) is volatile');
SELECT is_strict('cql_execute', ARRAY['text', 'text'],
                 'cql_execute(text, text) is strict');

-- every function belongs to the extension (DROP EXTENSION removes them)
SELECT is((SELECT count(*)::int
             FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
            WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'cql_fdw')
              AND d.classid = 'pg_proc'::regclass
              AND p.proname IN ('cql_fdw_handler', 'cql_fdw_validator', 'cql_execute')),
          3, 'handler, validator and cql_execute are members of the extension');

-- the validator: a valid server definition is accepted ...
SELECT lives_ok($$CREATE SERVER pgtap_cql FOREIGN DATA WRAPPER cql_fdw
                  OPTIONS (host '127.0.0.1', port '9042')$$,
                'server with host and port is accepted');
SELECT lives_ok($$CREATE USER MAPPING FOR CURRENT_USER SERVER pgtap_cql
                  OPTIONS (username 'cassandra', password 'cassandra')$$,
                'user mapping with username/password is accepted');
-- ... unknown options and bad values are not
SELECT throws_ok($$CREATE SERVER pgtap_bad1 FOREIGN DATA WRAPPER cql_fdw
                   OPTIONS (no_such_option 'x')$$,
                 'HV00D', NULL, 'unknown server option is rejected');
SELECT throws_ok($$CREATE SERVER pgtap_bad2 FOREIGN DATA WRAPPER cql_fdw
                   OPTIONS (port 'not-a-number')$$,
                 'HV024', NULL, 'non-numeric port is rejected');
SELECT throws_ok($$CREATE USER MAPPING FOR CURRENT_USER SERVER pgtap_cql_2
                   OPTIONS (username 'x')$$,
                 '42704', NULL, 'user mapping for a missing server is rejected');
SELECT throws_ok($$CREATE SERVER pgtap_bad3 FOREIGN DATA WRAPPER cql_fdw
                   OPTIONS (username 'cassandra')$$,
                 'HV00D', NULL, 'user-mapping option on a server is rejected');
SELECT throws_ok($$CREATE SERVER pgtap_bad7 FOREIGN DATA WRAPPER cql_fdw
                   OPTIONS (timestamp_precision 'floor')$$,
                 'HV024', 'invalid value for option "timestamp_precision": "floor"',
                 'timestamp_precision takes truncate, round or error');
SELECT lives_ok($$ALTER SERVER pgtap_cql OPTIONS (ADD timestamp_precision 'round')$$,
                'timestamp_precision round is accepted on a server');

-- cql_execute: STRICT, so NULL arguments return NULL without connecting
-- (run through lives_ok so a missing function is a failure, not an abort)
SELECT lives_ok($$SELECT cql_execute(NULL, NULL)$$,
                'cql_execute(NULL, NULL) returns without connecting');
SELECT throws_ok($$SELECT cql_execute('pgtap_no_such_server', 'SELECT 1')$$,
                 '42704', NULL, 'cql_execute on a missing server raises undefined_object');

-- cql_fdw_statistics(): this backend's counters, readable by everyone
SELECT has_function('cql_fdw_statistics', ARRAY[]::name[], 'cql_fdw_statistics() exists (0.3)');
SELECT is((SELECT retries + retries_exhausted + speculative_executions + warnings
             FROM cql_fdw_statistics()), 0::bigint,
          'a backend that sent nothing has retried nothing');
SELECT ok(has_function_privilege('public', 'cql_fdw_statistics()', 'EXECUTE'),
          'cql_fdw_statistics() is executable by PUBLIC');
SELECT has_function('cql_bridge_cursor_rows', ARRAY['text', 'bigint', 'text[]', 'anyelement'],
                    'cql_bridge_cursor_rows() exists (0.6: cqlbridge apply streams through it)');
SELECT has_function('cql_token', ARRAY['text[]', '"any"'],
                    'cql_token(text[], VARIADIC "any") exists (0.7: cqlbridge diff orders by it)');
SELECT has_function('cql_bridge_delete_keys', ARRAY['regclass', 'text[]', '"any"'],
                    'cql_bridge_delete_keys(regclass, text[], VARIADIC "any") exists (0.8: the stream deletes through it)');
SELECT has_function('cql_bridge_autogroup_nice', ARRAY['integer', 'integer'],
                    'cql_bridge_autogroup_nice(integer, integer) exists (0.9: --priority auto moves its sessions with it)');
SELECT volatility_is('cql_token', ARRAY['text[]', '"any"'], 'immutable',
                     'cql_token() is immutable');
SELECT is(cql_token(ARRAY['text'], 'local'::text), -7564491331177403445::bigint,
          'cql_token of text ''local'' is Cassandra''s token of system.local''s key');

-- TLS options: libpq's sslmode values, files only for superusers
SELECT throws_ok($$CREATE SERVER pgtap_bad4 FOREIGN DATA WRAPPER cql_fdw
                   OPTIONS (sslmode 'prefer')$$,
                 'HV024', 'invalid value for option "sslmode": "prefer"',
                 'sslmode prefer (a silent plaintext fallback) is rejected');
SELECT throws_ok($$CREATE SERVER pgtap_bad5 FOREIGN DATA WRAPPER cql_fdw
                   OPTIONS (sslmode 'verify-full', sslrootcert 'relative/ca.pem')$$,
                 'HV024', 'option "sslrootcert" must be an absolute path',
                 'a relative certificate path is rejected');
SELECT throws_ok($$CREATE SERVER pgtap_bad6 FOREIGN DATA WRAPPER cql_fdw
                   OPTIONS (sslmode 'verify-full')$$,
                 'HV00D', 'sslmode "verify-full" needs option "sslrootcert"',
                 'verify-full without a root certificate is refused at CREATE SERVER');
SELECT throws_ok($$ALTER SERVER pgtap_cql OPTIONS (ADD sslmode 'verify-ca')$$,
                 'HV00D', 'sslmode "verify-ca" needs option "sslrootcert"',
                 '... and verify-ca at ALTER SERVER');
SELECT lives_ok($$ALTER USER MAPPING FOR CURRENT_USER SERVER pgtap_cql
                  OPTIONS (ADD sslcert '/etc/cql/client.pem', ADD sslkey '/etc/cql/client.key',
                           ADD sslpassword 'secret')$$,
                'a superuser sets a client certificate in a user mapping');

-- a database that has 0.1 gets the same privileges by ALTER EXTENSION UPDATE
SELECT lives_ok('DROP EXTENSION cql_fdw CASCADE', 'drop for the update test');
SELECT lives_ok($$CREATE EXTENSION cql_fdw VERSION '0.1'$$, 'version 0.1 installs');
SELECT lives_ok('ALTER EXTENSION cql_fdw UPDATE', 'ALTER EXTENSION cql_fdw UPDATE works');
SELECT ok((SELECT extversion FROM pg_extension WHERE extname = 'cql_fdw') = '0.9'
          AND to_regprocedure('cql_bridge_cursor_last_key()') IS NOT NULL
          AND to_regprocedure('cql_bridge_delete_keys(regclass,text[],"any")') IS NOT NULL
          AND to_regprocedure('cql_bridge_autogroup_nice(integer,integer)') IS NOT NULL
          AND obj_description('cql_fdw_statistics()'::regprocedure, 'pg_proc') IS NOT NULL,
          'the update reaches 0.9, with the functions apply and the stream use and the comments of 0.7');
SELECT ok(NOT has_function_privilege('public', 'cql_execute(text, text)', 'EXECUTE'),
          'after the update EXECUTE on cql_execute is not PUBLIC''s either');
SELECT ok(NOT has_function_privilege('public', 'cql_query(text, text, "any")', 'EXECUTE')
          AND NOT has_function_privilege('public', 'cql_query(text, text)', 'EXECUTE'),
          'after the update EXECUTE on cql_query (0.5) is not PUBLIC''s either');
SELECT ok(NOT has_function_privilege('public', 'cql_query_records(text, text, "any")', 'EXECUTE')
          AND NOT has_function_privilege('public', 'cql_query_records(text, text)', 'EXECUTE'),
          '... nor on cql_query_records');

-- dropping the extension removes the wrapper
SELECT lives_ok('DROP EXTENSION cql_fdw CASCADE', 'DROP EXTENSION cql_fdw CASCADE works');
SELECT ok(NOT EXISTS (SELECT 1 FROM pg_foreign_data_wrapper WHERE fdwname = 'cql_fdw'),
          'wrapper is gone after DROP EXTENSION');

SELECT * FROM finish();
ROLLBACK;

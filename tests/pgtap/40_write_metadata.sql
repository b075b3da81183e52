--
-- tests/pgtap/30_write_metadata.sql
--		pgTAP: the error classes of write metadata columns (column options
--		writetime_of and ttl_of): options, table layout, statements and
--		values, each with its SQLSTATE.
--
-- Needs the Cassandra test nodes: CQL_HOST (default 127.0.0.1).
--
\ir include/setup.sql

BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
SELECT plan(18);

CREATE SERVER tap_wm FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_host');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_wm;
\set ks tap_wmeta
\set ks_server tap_wm
\set ks_drop_test 'keyspace dropped'
\ir include/keyspace.sql
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_wm', 'CREATE TABLE tap_wmeta.t (k int, c int, v text, l list<int>, PRIMARY KEY ((k), c))')$$,
                          'table created');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_wm', 'CREATE TABLE tap_wmeta.n (k int PRIMARY KEY, hits counter)')$$,
                          'counter table created');
CREATE SCHEMA tapwm;
CREATE FOREIGN TABLE tapwm.t (k int, c int, v text,
                              v_wt bigint OPTIONS (writetime_of 'v'),
                              v_at timestamptz OPTIONS (writetime_of 'v'),
                              v_ttl integer OPTIONS (ttl_of 'v'))
  SERVER tap_wm OPTIONS (keyspace 'tap_wmeta', "table" 't');

-- options, checked when they are set
SELECT throws_ok($$ALTER FOREIGN TABLE tapwm.t ADD COLUMN x bigint OPTIONS (writetime_of 'v', ttl_of 'v')$$,
                 'HV00D', NULL, 'writetime_of with ttl_of: HV00D');
SELECT throws_ok($$ALTER FOREIGN TABLE tapwm.t ADD COLUMN x bigint OPTIONS (writetime_of 'v', column_name 'v')$$,
                 'HV00D', NULL, 'writetime_of with column_name: HV00D');
SELECT throws_ok($$ALTER FOREIGN TABLE tapwm.t ADD COLUMN x integer OPTIONS (ttl_of '')$$,
                 'HV024', NULL, 'empty ttl_of: HV024');

-- the named column, checked against the layout at first use
CREATE FOREIGN TABLE tapwm.nope (k int, c int, v text, x bigint OPTIONS (writetime_of 'w'))
  SERVER tap_wm OPTIONS (keyspace 'tap_wmeta', "table" 't');
SELECT throws_ok($$SELECT * FROM tapwm.nope$$, 'HV005', NULL, 'unknown column: HV005');
CREATE FOREIGN TABLE tapwm.key (k int, c int, v text, x bigint OPTIONS (writetime_of 'c'))
  SERVER tap_wm OPTIONS (keyspace 'tap_wmeta', "table" 't');
SELECT throws_ok($$SELECT * FROM tapwm.key$$, 'HV024', NULL, 'key column: HV024');
CREATE FOREIGN TABLE tapwm.multi (k int, c int, l int[], x integer OPTIONS (ttl_of 'l'))
  SERVER tap_wm OPTIONS (keyspace 'tap_wmeta', "table" 't');
SELECT throws_ok($$SELECT * FROM tapwm.multi$$, '0A000', NULL, 'non-frozen collection: 0A000');
CREATE FOREIGN TABLE tapwm.typ (k int, c int, v text, x smallint OPTIONS (ttl_of 'v'))
  SERVER tap_wm OPTIONS (keyspace 'tap_wmeta', "table" 't');
SELECT throws_ok($$SELECT * FROM tapwm.typ$$, 'HV004', NULL, 'wrong type: HV004');
CREATE FOREIGN TABLE tapwm.n (k int, hits bigint, x bigint OPTIONS (writetime_of 'hits'))
  SERVER tap_wm OPTIONS (keyspace 'tap_wmeta', "table" 'n');
SELECT throws_ok($$SELECT * FROM tapwm.n$$, '0A000', NULL, 'counter column: 0A000');

-- values, refused before they are sent
SELECT throws_ok($$INSERT INTO tapwm.t (k, c, v, v_ttl) VALUES (1, 1, 'x', -1)$$,
                 '22023', NULL, 'negative TTL: 22023');
SELECT throws_ok($$INSERT INTO tapwm.t (k, c, v, v_ttl) VALUES (1, 1, 'x', 630720001)$$,
                 '22023', NULL, 'TTL above 20 years: 22023');
SELECT throws_ok($$INSERT INTO tapwm.t (k, c, v, v_wt) VALUES (1, 1, 'x', -9223372036854775808)$$,
                 '22023', NULL, 'smallest bigint write time: 22023');
SELECT throws_ok($$INSERT INTO tapwm.t (k, c, v, v_at) VALUES (1, 1, 'x', '-infinity')$$,
                 '22023', NULL, 'infinite write time: 22023');

-- statements, refused when they are planned
SELECT throws_ok($$INSERT INTO tapwm.t (k, c, v_ttl) VALUES (1, 1, 10)$$,
                 '0A000', NULL, 'TTL without its column: 0A000');
SELECT throws_ok($$INSERT INTO tapwm.t (k, c, v, v_wt, v_at) VALUES (1, 1, 'x', 1, now())$$,
                 '0A000', NULL, 'two write time columns: 0A000');
ALTER FOREIGN TABLE tapwm.t OPTIONS (ADD if_not_exists 'true');
SELECT throws_ok($$INSERT INTO tapwm.t (k, c, v, v_wt) VALUES (1, 1, 'x', 1)$$,
                 '0A000', NULL, 'write time with if_not_exists: 0A000');
ALTER FOREIGN TABLE tapwm.t OPTIONS (DROP if_not_exists);

-- and what works
SELECT lives_ok($$INSERT INTO tapwm.t (k, c, v, v_wt, v_ttl) VALUES (1, 1, 'x', 42, 630720000)$$,
                'INSERT with a write time and the largest TTL');
SELECT is((SELECT v_wt FROM tapwm.t WHERE k = 1 AND c = 1), 42::bigint,
          'the write time is read back');
SELECT throws_ok($$UPDATE tapwm.t SET v = 'y', v_ttl = 630720001 WHERE k = 1 AND c = 1$$,
                 '22023', NULL, 'UPDATE of the row with a TTL above 20 years: 22023');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_wm', 'DROP KEYSPACE tap_wmeta')$$, 'keyspace dropped at the end');

SELECT * FROM finish();
ROLLBACK;

--
-- tests/pgtap/50_cassandra5.sql
--		pgTAP: Cassandra 5.0 behaviours a node can switch on, on the auth test
--		node (scripts/cassandra.sh: dynamic data masking on, the guardrail
--		non_partition_restricted_index_query_enabled false).
--
-- Guardrail: the node refuses an index query without a partition-key
-- restriction; cql_fdw reads the guardrail (system_views.settings) and
-- evaluates such a predicate locally, EXPLAIN saying why, while an index
-- filter inside a partition is still pushed.
-- Masking: a role without UNMASK reads masked values and may not filter on
-- a masked column; cql_fdw never pushes a predicate on a masked column
-- (IMPORT records the column's mask), so the query runs and filters what
-- the role sees.
--
-- Needs the auth node (include/setup.sql).  Everything in PostgreSQL is
-- rolled back; the keyspace tap_c5 and the Cassandra role tap_c5_reader stay.
--
\ir include/setup.sql

BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
SELECT plan(12);

CREATE SERVER tap_c5 FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_auth_host');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_c5 OPTIONS (username 'cassandra', password 'cassandra');
\set ks tap_c5
\set ks_server tap_c5
\set ks_drop_test 'keyspace dropped'
\ir include/keyspace.sql
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_c5', 'CREATE TABLE tap_c5.t (k int, c int, a int, secret text MASKED WITH mask_default(), PRIMARY KEY (k, c))')$$,
                          'a table with a masked column');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_c5', 'CREATE INDEX t_a ON tap_c5.t (a) USING ''sai''')$$,
                          'an SAI index');
\ir ../../sql/include/await_cql.sql
SELECT pg_temp.await_cql('tap_c5', 'SELECT k FROM tap_c5.t WHERE k = 0 AND a = 0') \gset
CREATE SCHEMA tap_c5s;
IMPORT FOREIGN SCHEMA tap_c5 FROM SERVER tap_c5 INTO tap_c5s;
INSERT INTO tap_c5s.t (k, c, a, secret)
SELECT i % 4, i, i % 5, 'real-' || i FROM generate_series(1, 40) i;

CREATE FUNCTION pg_temp.access(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN ' || q LOOP
    IF l LIKE '%Access:%' THEN RETURN trim(l); END IF;
  END LOOP;
  RETURN NULL;
END $f$;

-- a role without UNMASK, to whom guardrails apply (superusers are spared)
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_c5', 'DROP ROLE IF EXISTS tap_c5_reader')$$, 'no reader role left');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_c5', 'CREATE ROLE tap_c5_reader WITH PASSWORD = ''reader-pw'' AND LOGIN = true')$$,
                          'a role without UNMASK');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_c5', 'GRANT SELECT ON KEYSPACE tap_c5 TO tap_c5_reader')$$,
                          'may read the keyspace');
SELECT pg_temp.setup_step($$SELECT cql_execute('tap_c5', 'GRANT SELECT ON system_views.settings TO tap_c5_reader')$$,
                          'and the node''s settings (the guardrail)');
CREATE SERVER tap_c5r FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_auth_host');
CREATE USER MAPPING FOR CURRENT_USER SERVER tap_c5r OPTIONS (username 'tap_c5_reader', password 'reader-pw');
CREATE FOREIGN TABLE tap_c5s.t_reader (k int, c int, a int, secret text)
  SERVER tap_c5r OPTIONS (keyspace 'tap_c5', "table" 't');

-- guardrail ---------------------------------------------------------------------
SELECT matches(pg_temp.error_text($$SELECT cql_execute('tap_c5r', 'SELECT k FROM tap_c5.t WHERE a = 3')$$),
               'non_partition_restricted_index_query_enabled',
               'the node refuses the role an index query without the partition key');
SELECT is(pg_temp.access('SELECT c FROM tap_c5s.t_reader WHERE a = 3'),
          'Access: token range scan, index t_a not used: guardrail non_partition_restricted_index_query_enabled is false',
          'cql_fdw evaluates the index predicate locally, and EXPLAIN says why');
SELECT is((SELECT count(*) FROM tap_c5s.t_reader WHERE a = 3), 8::bigint,
          'and the query answers: 8 rows');
SELECT is(pg_temp.access('SELECT c FROM tap_c5s.t_reader WHERE k = 1 AND a = 3'),
          'Access: single partition, index filter (t_a)',
          'inside a partition the index is still used');
SELECT is((SELECT array_agg(c ORDER BY c) FROM tap_c5s.t_reader WHERE k = 1 AND a = 3), '{13,33}'::int[],
          'and answers');

-- masking -----------------------------------------------------------------------
SELECT is((SELECT option_value FROM pg_options_to_table(
             (SELECT attfdwoptions FROM pg_attribute WHERE attrelid = 'tap_c5s.t'::regclass AND attname = 'secret'))
           WHERE option_name = 'masked'), 'system.mask_default',
          'IMPORT FOREIGN SCHEMA records the column''s mask');
SELECT is((SELECT secret FROM tap_c5s.t WHERE k = 1 AND c = 13), 'real-13',
          'a superuser (UNMASK) reads the value');
SELECT is((SELECT secret FROM tap_c5s.t_reader WHERE k = 1 AND c = 13), '****',
          'a role without UNMASK reads the masked value');
SELECT matches(pg_temp.error_text($$SELECT cql_execute('tap_c5r', 'SELECT k FROM tap_c5.t WHERE k = 1 AND secret = ''real-13'' ALLOW FILTERING')$$),
               'SELECT_MASKED|UNMASK|masked',
               'the node refuses that role a WHERE on the masked column');
SELECT is(pg_temp.access($$SELECT c FROM tap_c5s.t_reader WHERE k = 1 AND secret = 'real-13'$$),
          'Access: single partition',
          'cql_fdw does not push a predicate on a masked column (a table written by hand learns the mask)');
SELECT is((SELECT count(*) FROM tap_c5s.t_reader WHERE k = 1 AND secret = 'real-13'), 0::bigint,
          'the role cannot find a row by the value it cannot see');
SELECT is((SELECT count(*) FROM tap_c5s.t_reader WHERE k = 1 AND secret = '****'), 10::bigint,
          'it filters the values it sees');

SELECT * FROM finish();
ROLLBACK;

-- tests/pgtap/include/keyspace.sql
--		The keyspace fixture of the regression suites
--		(sql/include/keyspace_cql.sql) as two pgTAP tests (count them in
--		plan()): a fresh keyspace :ks through cql_execute on the server
--		:ks_server.  :ks_drop_test names the first test (the DROP), the
--		second is 'keyspace created'.
\ir ../../../sql/include/keyspace_cql.sql
SELECT lives_ok(format('SELECT cql_execute(%L, %L)', :'ks_server', :'ks_drop'), :'ks_drop_test');
SELECT lives_ok(format('SELECT cql_execute(%L, %L)', :'ks_server', :'ks_create'), 'keyspace created');

-- tests/pgtap/include/keyspace.sql
--		The keyspace fixture of the regression suites
--		(sql/include/keyspace_cql.sql) as two setup steps (not tests: not
--		in plan(); pg_temp.setup_step of include/setup.sql): a fresh
--		keyspace :ks through cql_execute on the server :ks_server.
--		:ks_drop_test names the first step (the DROP), the second is
--		'keyspace created'.
\ir ../../../sql/include/keyspace_cql.sql
SELECT pg_temp.setup_step(format('SELECT cql_execute(%L, %L)', :'ks_server', :'ks_drop'), :'ks_drop_test');
SELECT pg_temp.setup_step(format('SELECT cql_execute(%L, %L)', :'ks_server', :'ks_create'), 'keyspace created');

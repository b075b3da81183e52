-- tests/pgtap/include/setup.sql
--		Shared preamble of the pgTAP files that talk to Cassandra: psql
--		settings for TAP output, and the test nodes as psql variables:
--		:cql_host (CQL_HOST, default 127.0.0.1, the test cluster) and
--		:cql_auth_host (CQL_AUTH_HOST, default 127.0.0.4, the
--		PasswordAuthenticator node, superuser cassandra/cassandra).
--		pg_temp.error_text(sql [, $1 [, $2]]) runs a statement (with the
--		optional text parameters, so that a value can stay out of the SQL
--		text PL/pgSQL shows as context) and returns its error as
--		'message | detail | hint | context' ('no error' if it worked).
--		pg_temp.setup_step(sql, what) runs a setup statement (a keyspace or
--		a table made, rows written: not a test, so not in plan()) and
--		returns the TAP comment '# setup ok - what', which
--		scripts/lib_tap.sh counts apart from the tests; if the statement
--		fails, '# setup not ok - what: error' (a failure there) and a
--		"Bail out!" line, which stops pg_prove: the tests after a failed
--		setup step would only fail because of it.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
\getenv cql_host CQL_HOST
\if :{?cql_host}
\else
\set cql_host 127.0.0.1
\endif
\getenv cql_auth_host CQL_AUTH_HOST
\if :{?cql_auth_host}
\else
\set cql_auth_host 127.0.0.4
\endif

CREATE FUNCTION pg_temp.error_text(q text, a1 text DEFAULT NULL, a2 text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE m text; d text; h text; c text;
BEGIN
  EXECUTE q USING a1, a2;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT, c = PG_EXCEPTION_CONTEXT;
  RETURN concat_ws(' | ', m, d, h, c);
END $f$;

CREATE FUNCTION pg_temp.setup_step(q text, what text)
RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE q;
  RETURN '# setup ok - ' || what;
EXCEPTION WHEN OTHERS THEN
  RETURN '# setup not ok - ' || what || ': ' || replace(SQLERRM, E'\n', ' ') ||
         E'\nBail out! setup step failed: ' || what;
END $f$;

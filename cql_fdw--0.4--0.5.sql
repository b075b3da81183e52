/* cql_fdw--0.4--0.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.5'" to load this file. \quit

-- Ad-hoc CQL that returns rows (docs/cql_fdw.md, "Raw CQL"): the statement
-- is prepared and the arguments after it are bound to its markers, never
-- spliced into the text; rows are read page by page (option fetch_size).
-- Not STRICT: a null argument is an error, not an empty result.  A
-- variadic "any" needs at least one argument, hence the forms without.
CREATE FUNCTION cql_query(server_name text, cql text)
RETURNS SETOF jsonb
AS 'MODULE_PATHNAME', 'cqlfdw_query_jsonb'
LANGUAGE C VOLATILE;

CREATE FUNCTION cql_query(server_name text, cql text, VARIADIC params "any")
RETURNS SETOF jsonb
AS 'MODULE_PATHNAME', 'cqlfdw_query_jsonb'
LANGUAGE C VOLATILE;

CREATE FUNCTION cql_query_records(server_name text, cql text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'cqlfdw_query_records'
LANGUAGE C VOLATILE;

CREATE FUNCTION cql_query_records(server_name text, cql text, VARIADIC params "any")
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'cqlfdw_query_records'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION cql_query(text, text) IS
  'rows of a CQL SELECT on a cql_fdw foreign server, as jsonb';
COMMENT ON FUNCTION cql_query(text, text, "any") IS
  'rows of a CQL SELECT with bound parameters on a cql_fdw foreign server, as jsonb';
COMMENT ON FUNCTION cql_query_records(text, text) IS
  'rows of a CQL SELECT on a cql_fdw foreign server, as records (column definition list)';
COMMENT ON FUNCTION cql_query_records(text, text, "any") IS
  'rows of a CQL SELECT with bound parameters on a cql_fdw foreign server, as records (column definition list)';

-- The same privileges as cql_execute(): the statement runs with the
-- Cassandra credentials of a user mapping and may read any table they
-- reach, so a DBA grants EXECUTE to the roles that may send CQL directly;
-- the functions also check USAGE on the foreign server.
REVOKE EXECUTE ON FUNCTION cql_query(text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION cql_query(text, text, "any") FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION cql_query_records(text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION cql_query_records(text, text, "any") FROM PUBLIC;

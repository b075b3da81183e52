/* cql_fdw--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.2'" to load this file. \quit

-- cql_execute() runs any CQL (DROP KEYSPACE, CREATE ROLE, ...) with the
-- Cassandra credentials of a user mapping, so it is not for every role:
-- a DBA grants EXECUTE to the roles that may send CQL directly.  The
-- function also checks USAGE on the foreign server, as dblink does.
REVOKE EXECUTE ON FUNCTION cql_execute(text, text) FROM PUBLIC;

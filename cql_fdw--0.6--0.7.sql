/* cql_fdw--0.6--0.7.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.7'" to load this file. \quit

-- 0.7: objects added for the whole-table diff (Murmur3 token of a partition
-- key computed in PostgreSQL), real application data and the front-door
-- work.  Each object below has its COMMENT.

CREATE FUNCTION cql_token(key_types text[], VARIADIC key "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'cql_token'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION cql_token(text[], "any") IS
'Cassandra''s Murmur3 token of a partition key: the values after the first, each encoded as the CQL type at its position in key_types (e.g. cql_token(ARRAY[''text'', ''int''], hotel_id, room)); NULL or empty keys are errors';

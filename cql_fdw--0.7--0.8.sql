/* cql_fdw--0.7--0.8.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.8'" to load this file. \quit

-- 0.8: many DELETEs by key through one statement handle, for the keys
-- cqlbridge's stream removes from its query tables at each flush.

CREATE FUNCTION cql_bridge_delete_keys(target regclass, key_columns text[],
                                       VARIADIC key_values "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'cql_bridge_delete_keys'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION cql_bridge_delete_keys(regclass, text[], "any") IS
  'deletes by key from a cql_fdw foreign table: one array of values per named key column (the partition key and a clustering prefix); returns the DELETEs sent';

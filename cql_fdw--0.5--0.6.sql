/* cql_fdw--0.5--0.6.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.6'" to load this file. \quit

-- cqlbridge apply streams a table in one pass of its source view: the rows
-- of the caller's own cursor, read while an INSERT ... SELECT writes them
-- (in the target list, so they stream), and the partition key of the last
-- row of the batch, recorded as the point to resume from.  Only cursors of
-- the calling session are reachable.
CREATE FUNCTION cql_bridge_cursor_rows(cursor_name text, max_rows bigint,
                                       key_columns text[], row_type anyelement)
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME', 'cql_bridge_cursor_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION cql_bridge_cursor_rows(text, bigint, text[], anyelement) IS
  'cqlbridge apply: up to max_rows further rows of an open cursor, as values of row_type';

CREATE FUNCTION cql_bridge_cursor_last_key()
RETURNS text[]
AS 'MODULE_PATHNAME', 'cql_bridge_cursor_last_key'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION cql_bridge_cursor_last_key() IS
  'cqlbridge apply: key columns (text) of the last row the last complete cql_bridge_cursor_rows() returned';

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

-- 0.8: cql_bridge_cpu_priority also takes 'background' (its autogroup at
-- nice 10 and a long time slice: yield to the other sessions without
-- leaving the normal class), and 'idle' lowers the autogroup too (the class
-- alone ranks a backend against nothing: PostgreSQL makes every backend a
-- session, so an autogroup, of its own).  Same C function.
COMMENT ON FUNCTION cql_bridge_cpu_priority(text) IS
'cqlbridge stream: ''background'' lowers this backend''s Linux autogroup to nice 10 and asks for a long time slice, ''idle'' puts it into SCHED_IDLE with its autogroup at nice 19, both for the rest of its life; ''normal'' checks it was not lowered; superusers and REPLICATION roles only';

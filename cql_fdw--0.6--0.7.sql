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

-- cqlbridge diff reads whole source views: the same query with its
-- correlated aggregate subqueries computed once per key and joined.
CREATE FUNCTION cql_bridge_bulk_form(view regclass)
RETURNS text
AS 'MODULE_PATHNAME', 'cql_bridge_bulk_form'
LANGUAGE C STRICT STABLE PARALLEL SAFE
SET search_path = '';

COMMENT ON FUNCTION cql_bridge_bulk_form(regclass) IS
'cqlbridge diff: the query of a view with its correlated aggregate subqueries (equalities on outer columns) turned into LEFT JOINs of grouped subqueries, equal row for row; NULL when none qualifies';

-- cqlbridge diff hashes every row of both sides per token range.
CREATE FUNCTION cql_bridge_row_hash(VARIADIC "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'cql_bridge_row_hash'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION cql_bridge_row_hash("any") IS
'cqlbridge diff: a 64-bit hash of the values given (NULLs included), from their bytes or binary send form; equal values of equal types hash alike within one server';

-- cqlbridge stream --priority idle: its backend and walsender run only
-- when the CPU is otherwise free (Linux SCHED_IDLE).  EXECUTE stays with
-- PUBLIC: the function itself admits superusers and REPLICATION roles.
CREATE FUNCTION cql_bridge_cpu_priority(priority text)
RETURNS text
AS 'MODULE_PATHNAME', 'cql_bridge_cpu_priority'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION cql_bridge_cpu_priority(text) IS
'cqlbridge stream: ''idle'' puts this backend into Linux''s SCHED_IDLE class for the rest of its life (it runs only when no other task wants the CPU); ''normal'' checks it is not; superusers and REPLICATION roles only';

-- Time-ordered keys (Cassandra's timeuuid) from SQL: what CQL says with
-- now(), minTimeuuid(t), maxTimeuuid(t) and toTimestamp(id).  The bounds
-- are STABLE, not IMMUTABLE: a call on constants must stay a call, which
-- the planner sends as a bound value of a clustering range in Cassandra's
-- time order (folded into a uuid constant it would be compared bytewise).
CREATE FUNCTION cql_timeuuid_now()
RETURNS uuid
AS 'MODULE_PATHNAME', 'cql_timeuuid_now'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION cql_timeuuid_now() IS
'a new version 1 (time-based) UUID of the current time, as CQL''s now(): increasing within a session, random clock sequence and node';

CREATE FUNCTION cql_timeuuid(t timestamptz)
RETURNS uuid
AS 'MODULE_PATHNAME', 'cql_timeuuid'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION cql_timeuuid(timestamptz) IS
'a new version 1 (time-based) UUID of time t (to the microsecond), unique by its random clock sequence and node';

CREATE FUNCTION cql_min_timeuuid(t timestamptz)
RETURNS uuid
AS 'MODULE_PATHNAME', 'cql_min_timeuuid'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION cql_min_timeuuid(timestamptz) IS
'CQL''s minTimeuuid(t): the smallest timeuuid of t''s millisecond in Cassandra''s order, a bound for ranges on timeuuid clustering columns (sent to Cassandra; PostgreSQL''s uuid comparison is bytewise)';

CREATE FUNCTION cql_max_timeuuid(t timestamptz)
RETURNS uuid
AS 'MODULE_PATHNAME', 'cql_max_timeuuid'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION cql_max_timeuuid(timestamptz) IS
'CQL''s maxTimeuuid(t): the largest timeuuid of t''s millisecond in Cassandra''s order, a bound for ranges on timeuuid clustering columns (sent to Cassandra; PostgreSQL''s uuid comparison is bytewise)';

CREATE FUNCTION cql_timeuuid_time(id uuid)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'cql_timeuuid_time'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION cql_timeuuid_time(uuid) IS
'CQL''s toTimestamp(id): the time of a version 1 UUID, to the millisecond (rounded down); other versions are errors';

-- Functions of earlier versions that had no COMMENT (\df+ and \dd show it;
-- tests/pgtap/05_docs.sql checks that every function of the extension has
-- one and an entry in docs/cql_fdw.md).
COMMENT ON FUNCTION cql_fdw_handler() IS
  'cql_fdw: the foreign-data wrapper handler (planner and executor callbacks)';
COMMENT ON FUNCTION cql_fdw_validator(text[], oid) IS
  'cql_fdw: checks the options of the wrapper, servers, user mappings, foreign tables and columns';
COMMENT ON FUNCTION cql_fdw_get_connections() IS
  'the Cassandra connections this backend has cached: server, host, protocol version, compression, valid';
COMMENT ON FUNCTION cql_fdw_disconnect(text) IS
  'closes this backend''s connections to one cql_fdw server; true if any was closed';
COMMENT ON FUNCTION cql_fdw_disconnect_all() IS
  'closes this backend''s connections to every cql_fdw server; true if any was closed';
COMMENT ON FUNCTION cql_fdw_statistics() IS
  'what this backend''s Cassandra requests went through: retries, speculative executions, warnings, host events, heartbeats';
COMMENT ON FUNCTION cql_time_bucket(text, timestamptz) IS
  'the start of the time bucket (spec such as ''1 day'' or ''month'') that holds a timestamptz, as a bucket column stores it';
COMMENT ON FUNCTION cql_time_bucket(text, timestamp) IS
  'the start of the time bucket (spec such as ''1 day'' or ''month'') that holds a timestamp, as a bucket column stores it';
COMMENT ON FUNCTION cql_time_bucket(text, date) IS
  'the start of the time bucket (spec such as ''1 day'' or ''month'') that holds a date, as a bucket column stores it';
COMMENT ON FUNCTION cql_hash_bucket(int, text[]) IS
  'the hash bucket (0 .. n-1) of the given values, as a hash bucket column stores it';

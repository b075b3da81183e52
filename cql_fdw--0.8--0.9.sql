/* cql_fdw--0.8--0.9.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.9'" to load this file. \quit

-- 0.9: "cqlbridge stream --priority auto" (its default): its backend and
-- walsender yield to the application while the stream keeps up and take a
-- full share while it lags.  cql_bridge_cpu_priority takes 'auto'
-- (SCHED_IDLE where the session's autogroup counts; same C function), and
-- the autogroup's nice value, which an unprivileged process may raise
-- again, is moved by cql_bridge_autogroup_nice.  EXECUTE stays with
-- PUBLIC: the function itself admits superusers and REPLICATION roles, and
-- another process only when it is a session (backend or walsender) of the
-- caller's role.
CREATE FUNCTION cql_bridge_autogroup_nice(nice integer, pid integer DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'cql_bridge_autogroup_nice'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION cql_bridge_autogroup_nice(integer, integer) IS
'cqlbridge stream --priority auto: sets the Linux autogroup nice value (0 to 19) of this backend, or of another session (backend or walsender) of the same role; returns it, or NULL where the process has no autogroup of its own; superusers and REPLICATION roles only';

COMMENT ON FUNCTION cql_bridge_cpu_priority(text) IS
'cqlbridge stream: ''background'' lowers this backend''s Linux autogroup to nice 10 and asks for a long time slice, ''idle'' puts it into SCHED_IDLE with its autogroup at nice 19, both for the rest of its life; ''auto'' puts it into SCHED_IDLE where its autogroup counts (cql_bridge_autogroup_nice moves that); ''normal'' checks it was not lowered; superusers and REPLICATION roles only';

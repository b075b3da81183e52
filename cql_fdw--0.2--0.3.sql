/* cql_fdw--0.2--0.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.3'" to load this file. \quit

-- What this backend's requests went through since it started: retries on
-- other hosts (and how many gave up), speculative executions, Cassandra
-- warnings reported, and what the cluster handles saw of the hosts.
CREATE FUNCTION cql_fdw_statistics(
	OUT retries bigint,
	OUT retries_exhausted bigint,
	OUT speculative_executions bigint,
	OUT speculative_won bigint,
	OUT warnings bigint,
	OUT hosts_marked_down bigint,
	OUT events_down bigint,
	OUT events_up bigint,
	OUT topology_refreshes bigint,
	OUT heartbeats bigint,
	OUT heartbeat_failures bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'cql_fdw_statistics'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

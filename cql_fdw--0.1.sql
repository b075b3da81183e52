/* cql_fdw--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION cql_fdw" to load this file. \quit

CREATE FUNCTION cql_fdw_handler()
RETURNS fdw_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FUNCTION cql_fdw_validator(text[], oid)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER cql_fdw
  HANDLER cql_fdw_handler
  VALIDATOR cql_fdw_validator;

COMMENT ON FOREIGN DATA WRAPPER cql_fdw IS
  'foreign-data wrapper for Apache Cassandra and compatible CQL databases';

-- Run one CQL statement (DDL included) on a foreign server, as the current
-- user's user mapping.  Values are not interpolated: pass complete CQL.
CREATE FUNCTION cql_execute(server_name text, cql text)
RETURNS void
AS 'MODULE_PATHNAME', 'cqlfdw_execute_sql'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION cql_execute(text, text) IS
  'run a CQL statement on a cql_fdw foreign server';

-- Connection cache administration, modelled on postgres_fdw.
CREATE FUNCTION cql_fdw_get_connections(OUT server_name text,
                                        OUT host text,
                                        OUT protocol_version int,
                                        OUT compression text,
                                        OUT valid boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT PARALLEL RESTRICTED;

CREATE FUNCTION cql_fdw_disconnect(text)
RETURNS bool
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT PARALLEL RESTRICTED;

CREATE FUNCTION cql_fdw_disconnect_all()
RETURNS bool
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT PARALLEL RESTRICTED;

-- cqlbridge: one workload query analyzed by PostgreSQL's own parser and
-- analyzer (nothing is executed); see docs/cqlbridge-design.md, section 1.
CREATE FUNCTION cql_bridge_analyze(query text,
                                   param_types regtype[] DEFAULT '{}',
                                   OUT kind text, OUT level int, OUT ord int,
                                   OUT alias text, OUT schema_name text,
                                   OUT table_name text, OUT column_name text,
                                   OUT type_name text, OUT op text,
                                   OUT param int, OUT other_alias text,
                                   OUT other_column text, OUT name text,
                                   OUT detail text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'cql_bridge_analyze'
LANGUAGE C STRICT STABLE PARALLEL UNSAFE;

COMMENT ON FUNCTION cql_bridge_analyze(text, regtype[]) IS
  'cqlbridge: relations, joins, parameter conditions, order and output of one SELECT';

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

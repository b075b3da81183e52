-- The cql_fdw server "cass" every suite uses: contact point CQL_HOST
-- (default 127.0.0.1, the test cluster), and a user mapping for the
-- current user.
\getenv cql_host CQL_HOST
\if :{?cql_host}
\else
\set cql_host 127.0.0.1
\endif
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
CREATE SERVER IF NOT EXISTS cass FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'cql_host');
CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER cass;
RESET client_min_messages;

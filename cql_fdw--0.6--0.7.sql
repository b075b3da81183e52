/* cql_fdw--0.6--0.7.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.7'" to load this file. \quit

-- 0.7: objects added for the whole-table diff (Murmur3 token of a partition
-- key computed in PostgreSQL), real application data and the front-door
-- work.  Each object below has its COMMENT.

/* cql_fdw--0.3--0.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION cql_fdw UPDATE TO '0.4'" to load this file. \quit

-- Bucket columns (column options bucket and bucket_of, docs/cql_fdw.md):
-- the value cql_fdw computes for a bucket column, for cqlbridge's load
-- views and sync triggers and for users who fill or check one by hand.
-- Time buckets are aligned in UTC; the timestamp and date variants read
-- their argument as UTC, as cql_fdw writes those types.
CREATE FUNCTION cql_time_bucket(spec text, ts timestamptz)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'cql_time_bucket_timestamptz'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION cql_time_bucket(spec text, ts timestamp)
RETURNS timestamp
AS 'MODULE_PATHNAME', 'cql_time_bucket_timestamptz'  -- the same representation
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION cql_time_bucket(spec text, d date)
RETURNS date
AS 'MODULE_PATHNAME', 'cql_time_bucket_date'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- Hash bucket 0..n-1 of the values' text forms (bucket 'hash n'); NULL
-- when a value is NULL (the function is not STRICT on the array's items).
CREATE FUNCTION cql_hash_bucket(n int, VARIADIC vals text[])
RETURNS int
AS 'MODULE_PATHNAME', 'cql_hash_bucket'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

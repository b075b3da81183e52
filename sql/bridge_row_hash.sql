--
-- cql_bridge_row_hash(VARIADIC "any"): the hash of a row that "cqlbridge
-- diff" XORs per token range on both sides (src/bridge/row_hash.c).  Rows
-- the diff's merge would find different must hash differently: values
-- that print differently, NULL against empty, values moved between
-- columns.  And the values cql_fdw reads from Cassandra must hash like the
-- same values made by PostgreSQL's input functions (the source side), for
-- every CQL type, or every range of an equal table would be merged.
--
\i sql/include/cql_server.sql
\set ks regress_row_hash
\i sql/include/keyspace.sql
\i sql/include/scalar_rows.sql
\i sql/include/collection_rows.sql

-- the same values hash alike, call after call and toasted or not
SELECT cql_bridge_row_hash(1, 'a'::text, NULL::date) = cql_bridge_row_hash(1, 'a'::text, NULL::date) AS same;
CREATE TABLE rh_long (t text);
INSERT INTO rh_long VALUES (repeat('toast me ', 20000));
SELECT pg_column_size(t) < octet_length(t) AS compressed,
       cql_bridge_row_hash(t) = cql_bridge_row_hash(repeat('toast me ', 20000)) AS same_as_plain
FROM rh_long;

-- what tells rows apart
SELECT cql_bridge_row_hash('a'::text, 'bc'::text) <> cql_bridge_row_hash('ab'::text, 'c'::text) AS boundary_moved,
       cql_bridge_row_hash(NULL::text) <> cql_bridge_row_hash(''::text) AS null_not_empty,
       cql_bridge_row_hash(NULL::int, 1) <> cql_bridge_row_hash(1, NULL::int) AS null_moved,
       cql_bridge_row_hash(1, 2) <> cql_bridge_row_hash(2, 1) AS order_counts,
       cql_bridge_row_hash(1.0::numeric) <> cql_bridge_row_hash(1.00::numeric) AS numeric_scale,
       cql_bridge_row_hash('-0'::float8) <> cql_bridge_row_hash('0'::float8) AS negative_zero,
       cql_bridge_row_hash(ARRAY[1, 2]) <> cql_bridge_row_hash(ARRAY[2, 1]) AS list_order,
       cql_bridge_row_hash('{"a": 1}'::jsonb) <> cql_bridge_row_hash('{"a": 2}'::jsonb) AS jsonb_value,
       cql_bridge_row_hash(true) <> cql_bridge_row_hash(false) AS bool_value;

-- Every column read through cql_fdw hashes like its value printed and
-- read again by the type's input function, for every CQL type: the
-- columns where any row's hash differs (none)
CREATE SCHEMA rh;
IMPORT FOREIGN SCHEMA regress_row_hash FROM SERVER cass INTO rh;
CREATE FUNCTION rh_columns_hashing_apart(tab regclass, OUT n_columns int, OUT rows_read bigint, OUT differing text[])
LANGUAGE plpgsql AS $$
DECLARE
  col record;
  bad bigint;
BEGIN
  n_columns := 0;
  differing := '{}';
  EXECUTE format('SELECT count(*) FROM %s', tab) INTO rows_read;
  FOR col IN SELECT attname, format_type(atttypid, atttypmod) AS typ FROM pg_attribute
             WHERE attrelid = tab AND attnum > 0 AND NOT attisdropped ORDER BY attnum LOOP
    EXECUTE format('SELECT count(*) FROM %s f WHERE cql_bridge_row_hash(f.%I) IS DISTINCT FROM cql_bridge_row_hash(f.%I::text::%s)',
                   tab, col.attname, col.attname, col.typ) INTO bad;
    n_columns := n_columns + 1;
    IF bad > 0 THEN
      differing := differing || (col.attname || ' ' || col.typ);
    END IF;
  END LOOP;
END $$;
SET timezone = 'UTC';
SELECT * FROM rh_columns_hashing_apart('rh.scalars');
SELECT * FROM rh_columns_hashing_apart('rh.collections');
-- whole rows too, against a local copy made through the input functions
SELECT format('CREATE TABLE rh_scalars_local AS SELECT %s FROM rh.scalars',
              string_agg(format('%I::text::%s AS %I', attname, format_type(atttypid, atttypmod), attname), ', ' ORDER BY attnum))
FROM pg_attribute WHERE attrelid = 'rh.scalars'::regclass AND attnum > 0 \gexec
SELECT format('SELECT count(*) AS rows_hashing_alike FROM rh.scalars f JOIN rh_scalars_local l USING (id) WHERE cql_bridge_row_hash(%s) = cql_bridge_row_hash(%s)',
              string_agg(format('f.%I', attname), ', ' ORDER BY attnum), string_agg(format('l.%I', attname), ', ' ORDER BY attnum))
FROM pg_attribute WHERE attrelid = 'rh.scalars'::regclass AND attnum > 0 \gexec

-- bad input
SELECT cql_bridge_row_hash(VARIADIC ARRAY[1, 2]);
SELECT cql_bridge_row_hash();
SELECT cql_bridge_row_hash(NULL) IS NOT NULL AS null_hashes;

DROP SCHEMA rh CASCADE;
DROP TABLE rh_long, rh_scalars_local;
DROP FUNCTION rh_columns_hashing_apart(regclass);
SELECT cql_execute('cass', 'DROP KEYSPACE regress_row_hash');

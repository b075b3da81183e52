--
-- cql_token(key_types, VARIADIC key): Cassandra's Murmur3 token of a
-- partition key computed in PostgreSQL, compared with Cassandra's own
-- token() for random keys of every key type cql_fdw maps, composite keys
-- and bucket columns; NULL, empty and mistyped keys are refused.
--
\i sql/include/cql_server.sql
\set ks regress_token
\i sql/include/keyspace.sql
SET TimeZone = 'UTC';
SELECT setseed(0.23);

-- name, CQL key type(s), PostgreSQL column type(s), random value(s) of the row g
CREATE TEMP TABLE key_kinds (name text, cql text[], pg text[], gen text[]);
INSERT INTO key_kinds VALUES
 ('t_ascii', '{ascii}', '{text}', ARRAY['md5(random()::text)']),
 ('t_text', '{text}', '{text}', ARRAY[$$chr(32 + (random() * 900)::int) || 'é☃' || md5(random()::text) || repeat('x', (random() * 40)::int)$$]),
 ('t_varchar', '{varchar}', '{text}', ARRAY['md5(random()::text)']),
 ('t_tinyint', '{tinyint}', '{smallint}', ARRAY['(random() * 255 - 128)::int']),
 ('t_smallint', '{smallint}', '{smallint}', ARRAY['(random() * 65535 - 32768)::int']),
 ('t_int', '{int}', '{integer}', ARRAY['(random() * 4294967295 - 2147483648)::bigint']),
 ('t_bigint', '{bigint}', '{bigint}', ARRAY['((random() - 0.5) * 9.2e18)::bigint']),
 ('t_varint', '{varint}', '{numeric}', ARRAY['trunc((random() - 0.5) * 10 ^ (random() * 40))']),
 ('t_decimal', '{decimal}', '{numeric}', ARRAY['round(((random() - 0.5) * 10 ^ (random() * 20))::numeric, (random() * 10)::int)']),
 ('t_float', '{float}', '{real}', ARRAY['((random() - 0.5) * 1e6)::real']),
 ('t_double', '{double}', '{double precision}', ARRAY['(random() - 0.5) * 1e12']),
 ('t_boolean', '{boolean}', '{boolean}', ARRAY['random() < 0.5']),
 ('t_blob', '{blob}', '{bytea}', ARRAY[$$decode(md5(random()::text) || 'ff80', 'hex')$$]),
 ('t_uuid', '{uuid}', '{uuid}', ARRAY['md5(random()::text)::uuid']),
 ('t_date', '{date}', '{date}', ARRAY[$$date '1900-01-01' + (random() * 100000)::int$$]),
 ('t_time', '{time}', '{time}', ARRAY[$$time '00:00' + (random() * 86399999)::int * interval '1 ms'$$]),
 ('t_timestamp', '{timestamp}', '{timestamptz}', ARRAY[$$date_trunc('milliseconds', timestamptz '1950-01-01 UTC' + random() * interval '100 years')$$]),
 ('t_inet', '{inet}', '{inet}', ARRAY[$$CASE WHEN random() < 0.5 THEN ('10.' || (random() * 255)::int || '.' || (random() * 255)::int || '.' || (random() * 255)::int)::inet ELSE ('2001:db8::' || to_hex((random() * 65535)::int))::inet END$$]),
 ('t_list', '{frozen<list<int>>}', '{integer[]}', ARRAY['ARRAY[(random() * 1000)::int, (random() * -1000)::int]']),
 ('t_set', '{frozen<set<text>>}', '{text[]}', ARRAY[$$ARRAY[md5(random()::text), 'b', 'a']$$]),
 ('t_map', ARRAY['frozen<map<text, int>>'], '{jsonb}', ARRAY[$$jsonb_build_object(md5(random()::text), (random() * 100)::int, 'k', 1)$$]),
 ('t_tuple', ARRAY['tuple<int, text>'], '{jsonb}', ARRAY[$$jsonb_build_array((random() * 100)::int, md5(random()::text))$$]),
 ('t_composite', '{int,text,timestamp}', '{integer,text,timestamptz}',
   ARRAY['(random() * 1000)::int', 'md5(random()::text)', $$date_trunc('milliseconds', now() - random() * interval '3 years')$$]),
 ('t_time_bucket', '{text,timestamp}', '{text,timestamptz}',
   ARRAY['md5(random()::text)', $$cql_time_bucket('2 weeks', now() - random() * interval '1 year')$$]),
 ('t_hash_bucket', '{bigint,int}', '{bigint,integer}',
   ARRAY['(random() * 1e9)::bigint', 'cql_hash_bucket(16, md5(random()::text))']);

-- one Cassandra table per kind, 40 random keys written through cql_fdw
CREATE SCHEMA tk;
DO $$
DECLARE
  r record;
  cols text;
  keys text;
BEGIN
  FOR r IN SELECT * FROM key_kinds ORDER BY name LOOP
    SELECT string_agg(format('k%s %s', i, r.cql[i]), ', '), string_agg('k' || i, ', ')
      INTO cols, keys FROM generate_subscripts(r.cql, 1) i;
    PERFORM cql_execute('cass', format('CREATE TABLE regress_token.%s (%s, v int, PRIMARY KEY ((%s)))', r.name, cols, keys));
    SELECT string_agg(format('k%s %s', i, r.pg[i]), ', ') INTO cols FROM generate_subscripts(r.cql, 1) i;
    EXECUTE format('CREATE FOREIGN TABLE tk.%s (%s, v int) SERVER cass OPTIONS (keyspace %L, "table" %L)',
                   r.name, cols, 'regress_token', r.name);
    SELECT string_agg(r.gen[i], ', ') INTO cols FROM generate_subscripts(r.cql, 1) i;
    EXECUTE format('INSERT INTO tk.%s SELECT %s, g FROM generate_series(1, 40) g', r.name, cols);
  END LOOP;
END $$;
-- timeuuid keys are made by Cassandra
DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_token.t_timeuuid (k1 timeuuid PRIMARY KEY, v int)');
  FOR i IN 1..20 LOOP
    PERFORM cql_execute('cass', 'INSERT INTO regress_token.t_timeuuid (k1, v) VALUES (now(), ' || i || ')');
  END LOOP;
END $$;
INSERT INTO key_kinds VALUES ('t_timeuuid', '{timeuuid}', '{uuid}', NULL);

-- every row: Cassandra's token() of the stored key = cql_token of the key
-- read back through cql_query_records
CREATE FUNCTION pg_temp.compare(r key_kinds) RETURNS TABLE (rows bigint, equal bigint)
LANGUAGE plpgsql AS $f$
DECLARE
  keys text;
  defs text;
  vals text;
BEGIN
  SELECT string_agg('k' || i, ', '), string_agg(format('k%s %s', i, r.pg[i]), ', '),
         string_agg('k' || i, ', ')
    INTO keys, defs, vals FROM generate_subscripts(r.cql, 1) i;
  RETURN QUERY EXECUTE format(
    'SELECT count(*), count(*) FILTER (WHERE t = cql_token(%L::text[], %s))
       FROM cql_query_records(''cass'', %L) AS q(%s, t bigint)',
    r.cql, vals, format('SELECT %s, token(%s) FROM regress_token.%s', keys, keys, r.name), defs);
END $f$;
SELECT k.name, array_to_string(k.cql, ', ') AS key_types,
       c.rows > 1 AND c.equal = c.rows AS all_equal
FROM key_kinds k, LATERAL pg_temp.compare(k) c ORDER BY k.name;

-- known values (Cassandra 5.0: SELECT token(...) of these keys)
SELECT cql_token('{text}', 'local'::text) AS local_text,
       cql_token('{int}', 1) AS int_1,
       cql_token('{bigint}', 1) AS bigint_1,
       cql_token('{int,text}', 1, 'x'::text) AS composite;
-- an integer literal is encoded as the CQL type given, not as its own
SELECT cql_token('{smallint}', 7) = cql_token('{smallint}', 7::smallint) AS same,
       cql_token('{smallint}', 7) <> cql_token('{int}', 7) AS differs;
-- a text value for another type is read as a CQL literal of that type
SELECT cql_token('{uuid}', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::text)
     = cql_token('{uuid}', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid) AS literal;
-- a one-column empty key is refused, an empty component of a composite is not
SELECT cql_token('{text}', ''::text);
SELECT cql_token('{blob}', ''::bytea);
SELECT cql_token('{int,text}', 1, ''::text) IS NOT NULL AS empty_component;

-- errors
SELECT cql_token('{text}', NULL::text);
SELECT cql_token('{int,text}', 1, NULL::text);
SELECT cql_token(NULL, 1);
SELECT cql_token('{int,int}', 1);
SELECT cql_token('{int}', 1, 2);
SELECT cql_token('{nosuchtype}', 1);
SELECT cql_token('{frozen<address>}', '{}'::jsonb);
SELECT cql_token('{int}', 'x'::text);
SELECT cql_token('{int}', 3000000000);
SELECT cql_token('{timestamp}', timestamptz '2026-01-01 10:00:00.123456+00');
SELECT cql_token('{tinyint}', 300);
SELECT cql_token('{int}', VARIADIC ARRAY[1]);
SELECT cql_token('{int}', point '(1,2)');
SELECT cql_token(ARRAY[NULL]::text[], 1);

-- cql_fdw.token_order_scan: a whole-table scan returns its rows in token
-- order (the ranges still read concurrently), as cqlbridge diff needs
INSERT INTO tk.t_int SELECT g, g FROM generate_series(1, 3000) g;
SET cql_fdw.token_order_scan = on;
SELECT count(*) >= 3000 AS rows, count(*) FILTER (WHERE t < prev) AS out_of_order
FROM (SELECT t, lag(t) OVER () AS prev
      FROM (SELECT cql_token('{int}', k1) AS t FROM tk.t_int) s) q;
EXPLAIN (COSTS OFF) SELECT * FROM tk.t_int;
-- pages of 7 rows: the ranges waiting their turn hold pages ahead (up to 4)
-- and keep asking; still every row once (against Cassandra's own count), in
-- token order
ALTER FOREIGN TABLE tk.t_int OPTIONS (ADD fetch_size '7');
SELECT count(*) = (SELECT count(*) FROM tk.t_int) AS all_rows,
       count(DISTINCT k1) = count(*) AS once,
       count(*) FILTER (WHERE t < prev) AS out_of_order
FROM (SELECT k1, t, lag(t) OVER () AS prev
      FROM (SELECT k1, cql_token('{int}', k1) AS t FROM tk.t_int) s) q;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tk.t_int;
ALTER FOREIGN TABLE tk.t_int OPTIONS (DROP fetch_size);
RESET cql_fdw.token_order_scan;

-- cql_fdw.token_scan_after: whole-table scans read only the tokens after it
-- (no local filter here: Cassandra returns only those), counts too
SELECT count(*) AS after0 FROM tk.t_int WHERE cql_token('{int}', k1) > 0 \gset
SET cql_fdw.token_scan_after = '0';
SELECT count(*) = :after0 AS same_rows, min(cql_token('{int}', k1)) > 0 AS all_after
FROM tk.t_int;
SELECT count(*) = :after0 AS same_count FROM tk.t_int;
EXPLAIN (VERBOSE, COSTS OFF) SELECT k1 FROM tk.t_int;
SET cql_fdw.token_scan_after = '9223372036854775807';
SELECT count(*) AS none FROM tk.t_int;
SET cql_fdw.token_scan_after = '-9223372036854775808';
SELECT count(*) >= 3000 AS all_rows FROM tk.t_int;
SET cql_fdw.token_scan_after = '12abc';
SET cql_fdw.token_scan_after = '9223372036854775808';
RESET cql_fdw.token_scan_after;
EXPLAIN (COSTS OFF) SELECT k1 FROM tk.t_int;

DROP SCHEMA tk CASCADE;
SELECT cql_execute('cass', 'DROP KEYSPACE regress_token');

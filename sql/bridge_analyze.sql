--
-- cql_bridge_analyze(): PostgreSQL's own parser and analyzer applied to
-- workload queries (docs/cqlbridge-design.md, section 1).  No Cassandra
-- needed: nothing is executed by the function; the "base" and "lineage"
-- texts it returns are executed here to prove they run unchanged with an
-- empty search_path.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
RESET client_min_messages;

-- the relational hotel schema, as the migration files create it
\set ECHO none
\i migrations/hotel/schema/001_hotel_poi.sql
\i migrations/hotel/schema/002_room_amenity.sql
\i migrations/hotel/schema/003_room_availability.sql
\i migrations/hotel/schema/004_guest.sql
\i migrations/hotel/schema/005_reservation.sql
\i migrations/hotel/schema/006_workload_indexes.sql
\set ECHO all
RESET search_path;

-- a few rows, so that executing base and lineage returns something
INSERT INTO hotel_rel.hotel VALUES
  ('AZ123', 'Super Hotel', '1-888-555-0100', '1 Main St', 'Phoenix', 'AZ', '85001', 'USA'),
  ('NY229', 'Hotel Ace', '1-888-555-0200', '9 Broadway', 'New York', 'NY', '10001', 'USA');
INSERT INTO hotel_rel.point_of_interest VALUES
  (1, 'WestWorld', 'theme park'), (2, 'Union Station', 'railway station');
INSERT INTO hotel_rel.hotel_poi VALUES ('AZ123', 1), ('AZ123', 2), ('NY229', 2);
INSERT INTO hotel_rel.room VALUES ('AZ123', 101, 120.00), ('AZ123', 102, 99.50);
INSERT INTO hotel_rel.amenity VALUES (1, 'minibar', 'drinks'), (2, 'wifi', 'internet');
INSERT INTO hotel_rel.room_amenity VALUES ('AZ123', 101, 1), ('AZ123', 101, 2);
INSERT INTO hotel_rel.room_availability VALUES
  ('AZ123', 101, '2026-01-01', true), ('AZ123', 102, '2026-01-01', false);
INSERT INTO hotel_rel.guest VALUES
  ('1e4b4cef-a8d3-4c9a-8928-9892cdb7d790', 'Jane', 'Smith', 'Dr.');
INSERT INTO hotel_rel.guest_email VALUES
  ('1e4b4cef-a8d3-4c9a-8928-9892cdb7d790', 'jane@example.org');
INSERT INTO hotel_rel.guest_phone VALUES
  ('1e4b4cef-a8d3-4c9a-8928-9892cdb7d790', 1, '555-0101'),
  ('1e4b4cef-a8d3-4c9a-8928-9892cdb7d790', 2, '555-0102');
INSERT INTO hotel_rel.guest_address VALUES
  ('1e4b4cef-a8d3-4c9a-8928-9892cdb7d790', 'home', '2 Elm St', 'Mesa', 'AZ', '85201', 'USA');
INSERT INTO hotel_rel.reservation VALUES
  ('0LONMD', '1e4b4cef-a8d3-4c9a-8928-9892cdb7d790', 'AZ123', 101, '2026-01-01', '2026-01-03');

-- Q1..Q9 as migrations/hotel/workload.sql has them, split by the block
-- format of its header: each :'name' replaced by $k in params order, casts
-- kept, with the declared parameter types.
CREATE TABLE bridge_q (name text PRIMARY KEY, types regtype[] NOT NULL, sql text NOT NULL);
CREATE TEMP TABLE bridge_workload (n serial, line text);
\copy bridge_workload (line) FROM 'migrations/hotel/workload.sql' WITH (FORMAT csv, DELIMITER E'\x01', QUOTE E'\x02')
DO $$
DECLARE
  b record;
  params text[];
  stmt text;
BEGIN
  FOR b IN
    SELECT max(substring(line FROM '^-- name: (.*)$')) AS name,
           max(substring(line FROM '^-- params: (.*)$')) AS params,
           string_agg(line, E'\n' ORDER BY n) FILTER (WHERE line !~ '^--') AS sql
    FROM (SELECT n, line, count(*) FILTER (WHERE line ~ '^-- name: ') OVER (ORDER BY n) AS blk
          FROM bridge_workload WHERE line <> '') l
    WHERE blk > 0 GROUP BY blk ORDER BY blk
  LOOP
    params := CASE WHEN b.params = 'none' THEN '{}' ELSE regexp_split_to_array(b.params, '\s*,\s*') END;
    stmt := rtrim(b.sql, ';');
    FOR k IN 1 .. cardinality(params) LOOP
      stmt := replace(stmt, ':''' || substring(params[k] FROM '^(\S+) ') || '''', '$' || k);
    END LOOP;
    INSERT INTO bridge_q VALUES (b.name, ARRAY(SELECT substring(p FROM '^\S+ (.+)$')
                                               FROM unnest(params) WITH ORDINALITY u(p, k) ORDER BY k)::regtype[], stmt);
  END LOOP;
END
$$;
DROP TABLE bridge_workload;

-- The rows of one query, in the order the function returns them, without
-- the (long) sql rows, which are shown below.
CREATE FUNCTION bridge_rows(qname text)
RETURNS TABLE (kind text, level int, ord int, alias text, schema_name text,
               table_name text, column_name text, type_name text, op text,
               param int, other_alias text, other_column text, name text,
               detail text)
LANGUAGE sql AS $$
  SELECT r.kind, r.level, r.ord, r.alias, r.schema_name, r.table_name,
         r.column_name, r.type_name, r.op, r.param, r.other_alias,
         r.other_column, r.name, r.detail
  FROM bridge_q q, cql_bridge_analyze(q.sql, q.types) r
  WHERE q.name = qname AND r.kind <> 'sql'
$$;

\pset null '-'
SELECT * FROM bridge_rows('Q1_hotels_by_poi');
SELECT * FROM bridge_rows('Q2_hotel_by_id');
SELECT * FROM bridge_rows('Q3_pois_by_hotel');
SELECT * FROM bridge_rows('Q4_available_rooms_by_hotel_date');
SELECT * FROM bridge_rows('Q5_amenities_by_room');
SELECT * FROM bridge_rows('Q6_reservation_by_confirmation');
SELECT * FROM bridge_rows('Q7_reservations_by_hotel_date');
SELECT * FROM bridge_rows('Q8_reservations_by_guest');
SELECT * FROM bridge_rows('Q9_guest_by_id');

-- the rewritten texts: base (no parameter conditions, no ORDER BY/LIMIT)
-- and lineage (base + lin_<alias>_<pk column> per level-0 relation)
SELECT q.name AS query, r.name, r.detail
FROM bridge_q q, cql_bridge_analyze(q.sql, q.types) r
WHERE r.kind = 'sql' ORDER BY q.name, r.ord;

-- they run as they are, with an empty search_path
CREATE TABLE bridge_sql AS
  SELECT q.name AS query, r.name, r.detail
  FROM bridge_q q, cql_bridge_analyze(q.sql, q.types) r WHERE r.kind = 'sql';
SET search_path = '';
DO $$
DECLARE
  s record;
  n bigint;
BEGIN
  FOR s IN SELECT * FROM public.bridge_sql ORDER BY query, name LOOP
    EXECUTE format('SELECT count(*) FROM (%s) x', s.detail) INTO n;
    RAISE NOTICE '%: % returns % rows', s.query, s.name, n;
  END LOOP;
END
$$;
-- lineage values identify the source rows
DO $$
DECLARE
  s record;
  j text;
BEGIN
  FOR s IN SELECT * FROM public.bridge_sql
           WHERE name = 'lineage' AND query IN ('Q1_hotels_by_poi', 'Q5_amenities_by_room', 'Q9_guest_by_id')
           ORDER BY query LOOP
    EXECUTE format('SELECT string_agg(to_jsonb(x)::text, E''\n'' ORDER BY to_jsonb(x)::text) FROM (%s) x', s.detail) INTO j;
    RAISE NOTICE E'%:\n%', s.query, j;
  END LOOP;
END
$$;
RESET search_path;

-- the texts are schema-qualified even when the query relied on search_path
SET search_path = hotel_rel, public;
SELECT name, detail FROM cql_bridge_analyze(
  'SELECT h.id, h.name FROM hotel h WHERE h.id = $1', '{text}')
WHERE kind IN ('relation', 'sql');
RESET search_path;

-- nothing hotel-specific: a small video site
CREATE SCHEMA video_rel;
CREATE TABLE video_rel.users (user_id bigint PRIMARY KEY, login text NOT NULL UNIQUE, display_name text NOT NULL);
CREATE TABLE video_rel.videos (video_id uuid PRIMARY KEY, owner_id bigint NOT NULL REFERENCES video_rel.users,
                               title text NOT NULL, uploaded_at timestamptz NOT NULL);
CREATE TABLE video_rel.comments (video_id uuid NOT NULL REFERENCES video_rel.videos, comment_id bigint NOT NULL,
                                 user_id bigint NOT NULL REFERENCES video_rel.users, posted_at timestamptz NOT NULL,
                                 body text NOT NULL, PRIMARY KEY (video_id, comment_id));
CREATE TABLE video_rel.tags (tag_id int PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE video_rel.video_tag (video_id uuid NOT NULL REFERENCES video_rel.videos, tag_id int NOT NULL REFERENCES video_rel.tags,
                                  PRIMARY KEY (video_id, tag_id));

INSERT INTO bridge_q VALUES
('V1_comments_by_video', '{uuid,integer}', $q$SELECT c.video_id, c.posted_at, c.comment_id, u.login AS author, c.body
FROM video_rel.comments c
JOIN video_rel.users u ON u.user_id = c.user_id
WHERE c.video_id = $1
ORDER BY c.posted_at DESC, c.comment_id DESC
LIMIT $2$q$),
('V2_videos_by_tag', '{text,timestamptz}', $q$SELECT t.name AS tag, v.uploaded_at, v.video_id, v.title, u.display_name AS owner,
       (SELECT array_agg(t2.name ORDER BY t2.name)
        FROM video_rel.video_tag vt2
        JOIN video_rel.tags t2 ON t2.tag_id = vt2.tag_id
        WHERE vt2.video_id = v.video_id) AS all_tags
FROM video_rel.tags t
JOIN video_rel.video_tag vt USING (tag_id)
JOIN video_rel.videos v ON v.video_id = vt.video_id
JOIN video_rel.users u ON u.user_id = v.owner_id
WHERE t.name = $1 AND $2 <= v.uploaded_at
ORDER BY v.uploaded_at DESC, v.video_id
LIMIT 50$q$),
('V3_commented_videos_of_user', '{bigint}', $q$SELECT v.video_id, v.title, upper(v.title) AS shout
FROM video_rel.videos v
WHERE v.owner_id = $1
  AND EXISTS (SELECT 1 FROM video_rel.comments c WHERE c.video_id = v.video_id)
  AND v.title <> ''
ORDER BY lower(v.title) NULLS FIRST$q$);

SELECT * FROM bridge_rows('V1_comments_by_video');
SELECT * FROM bridge_rows('V2_videos_by_tag');
SELECT * FROM bridge_rows('V3_commented_videos_of_user');
SELECT q.name AS query, r.name, r.detail
FROM bridge_q q, cql_bridge_analyze(q.sql, q.types) r
WHERE r.kind = 'sql' AND q.name LIKE 'V%' ORDER BY q.name, r.ord;
SET search_path = '';
DO $$
DECLARE
  s record;
  n bigint;
BEGIN
  FOR s IN SELECT q.name AS query, r.name, r.detail
           FROM public.bridge_q q, public.cql_bridge_analyze(q.sql, q.types) r
           WHERE r.kind = 'sql' AND q.name LIKE 'V%' ORDER BY 1, 2 LOOP
    EXECUTE format('SELECT count(*) FROM (%s) x', s.detail) INTO n;
    RAISE NOTICE '%: % returns % rows', s.query, s.name, n;
  END LOOP;
END
$$;
RESET search_path;

-- every query: rows come ordered by (kind as listed in the contract, level,
-- ord), and (kind, level, ord) is unique
SELECT q.name,
       bool_and(r.ordinality = r.expected) AS ordered,
       count(*) = count(DISTINCT (r.kind, r.level, r.ord)) AS unique_keys
FROM bridge_q q,
     LATERAL (SELECT a.kind, a.level, a.ord, a.ordinality,
                     row_number() OVER (ORDER BY array_position(
                       ARRAY['param', 'relation', 'join', 'correlation', 'equality',
                             'range', 'filter', 'order', 'limit', 'target', 'aggregate',
                             'aggregate_order', 'aggregate_field', 'sql', 'warning'],
                       a.kind), a.level, a.ord) AS expected
              FROM cql_bridge_analyze(q.sql, q.types) WITH ORDINALITY a) r
GROUP BY q.name ORDER BY q.name;

-- a declared but unused parameter is a warning; NULL input gives no rows
SELECT kind, ord, type_name, detail FROM cql_bridge_analyze(
  'SELECT h.id FROM hotel_rel.hotel h WHERE h.id = $1', '{text,integer}')
WHERE kind IN ('param', 'warning');
-- an output column named like a lineage column is reported
SELECT kind, detail FROM cql_bridge_analyze(
  'SELECT h.name AS lin_h_id FROM hotel_rel.hotel h')
WHERE kind = 'warning';
-- a table without primary key is reported (no lineage column for it)
CREATE TABLE public.bridge_nopk (a int, b text);
SELECT kind, op, detail FROM cql_bridge_analyze(
  'SELECT x.b FROM public.bridge_nopk x JOIN hotel_rel.hotel h ON h.id = x.b WHERE x.a >= $1', '{int}')
WHERE kind IN ('relation', 'range', 'sql', 'warning');
DROP TABLE public.bridge_nopk;
SELECT count(*) FROM cql_bridge_analyze(NULL);
SELECT count(*) FROM cql_bridge_analyze('SELECT 1', NULL);

-- refused and invalid queries: SQLSTATE, message and hint
CREATE FUNCTION bridge_error(q text, t regtype[] DEFAULT '{}') RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  st text;
  msg text;
  hint text;
BEGIN
  PERFORM * FROM cql_bridge_analyze(q, t);
  RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  RAISE NOTICE '% %', st, msg;
  IF hint <> '' THEN
    RAISE NOTICE 'HINT: %', hint;
  END IF;
END
$$;
-- two statements, none
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h; SELECT 1');
SELECT bridge_error('  -- nothing');
-- not a SELECT
SELECT bridge_error('INSERT INTO hotel_rel.amenity (id, name, description) VALUES ($1, $2, $3)', '{smallint,text,text}');
SELECT bridge_error('DELETE FROM hotel_rel.hotel');
-- set operation, CTE, subquery in FROM, VALUES, locking, SELECT INTO
SELECT bridge_error('SELECT id FROM hotel_rel.hotel UNION SELECT hotel_id FROM hotel_rel.room');
SELECT bridge_error('WITH x AS (SELECT id FROM hotel_rel.hotel) SELECT x.id FROM x');
SELECT bridge_error('SELECT s.id FROM (SELECT h.id FROM hotel_rel.hotel h) s');
SELECT bridge_error('VALUES (1)');
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h FOR UPDATE');
SELECT bridge_error('SELECT h.id INTO hotel_copy FROM hotel_rel.hotel h');
-- the analyzer's own errors
SELECT bridge_error('SELECT x.id FROM hotel_rel.no_such_table x');
SELECT bridge_error('SELECT h.no_such_column FROM hotel_rel.hotel h');
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h WHERE h.id = $1 AND h.city = $2', '{text}');
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h WHERE h.id = $1', '{unknown}');
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h WHERE h.id = $1', '{text,NULL}');
SELECT bridge_error('SELEKT 1');
-- window function, grouping, aggregates at the top level
SELECT bridge_error('SELECT h.id, row_number() OVER (ORDER BY h.id) FROM hotel_rel.hotel h');
-- top-level aggregates: refused beyond count/sum/min/max/avg of a column
-- grouped by columns (analyze_aggregate.c)
SELECT bridge_error('SELECT h.city, count(*) FROM hotel_rel.hotel h GROUP BY h.city HAVING count(*) > 1');
SELECT bridge_error('SELECT h.city, count(*) FROM hotel_rel.hotel h GROUP BY ROLLUP (h.city)');
SELECT bridge_error('SELECT sum(r.rate * 2) FROM hotel_rel.room r WHERE r.hotel_id = $1', '{text}');
SELECT bridge_error('SELECT string_agg(h.name, '','') FROM hotel_rel.hotel h WHERE h.city = $1', '{text}');
SELECT bridge_error('SELECT count(*) FILTER (WHERE r.rate > 1) FROM hotel_rel.room r WHERE r.hotel_id = $1', '{text}');
SELECT bridge_error('SELECT r.room_number, count(*) FROM hotel_rel.room r WHERE r.hotel_id = $1 GROUP BY r.hotel_id', '{text}');
SELECT bridge_error('SELECT sum(r.rate) + 1 FROM hotel_rel.room r WHERE r.hotel_id = $1', '{text}');
SELECT bridge_error('SELECT count(*) FROM hotel_rel.room r WHERE r.hotel_id = $1 ORDER BY max(r.rate)', '{text}');
SELECT bridge_error('SELECT lower(h.city), count(*) FROM hotel_rel.hotel h GROUP BY lower(h.city)');
SELECT bridge_error('SELECT DISTINCT ON (h.city) h.city, h.id FROM hotel_rel.hotel h');
SELECT bridge_error('SELECT generate_series(1, 3) FROM hotel_rel.hotel h');
-- joins
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h FULL JOIN hotel_rel.room r ON r.hotel_id = h.id');
SELECT bridge_error('SELECT j.id FROM (hotel_rel.hotel h JOIN hotel_rel.room r ON r.hotel_id = h.id) AS j');
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h LEFT JOIN hotel_rel.room r ON r.hotel_id = h.id AND r.room_number = $1', '{smallint}');
-- parameters and subqueries in the wrong places
SELECT bridge_error('SELECT h.id, $1 AS x FROM hotel_rel.hotel h', '{text}');
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h WHERE h.id IN (SELECT r.hotel_id FROM hotel_rel.room r)');
SELECT bridge_error('SELECT h.id, (SELECT max(r.rate) FROM hotel_rel.room r WHERE r.hotel_id = h.id AND r.room_number = $1) FROM hotel_rel.hotel h', '{smallint}');
SELECT bridge_error('SELECT r.room_number, (SELECT h.name FROM hotel_rel.hotel h WHERE h.id = r.hotel_id) FROM hotel_rel.room r');
SELECT bridge_error('SELECT h.id, ARRAY(SELECT r.room_number FROM hotel_rel.room r WHERE r.hotel_id = h.id) FROM hotel_rel.hotel h');
SELECT bridge_error('SELECT h.id, coalesce((SELECT max(r.rate) FROM hotel_rel.room r WHERE r.hotel_id = h.id), 0) FROM hotel_rel.hotel h');
SELECT bridge_error('SELECT h.id, (SELECT count(*) FILTER (WHERE r.rate > 100) FROM hotel_rel.room r WHERE r.hotel_id = h.id) FROM hotel_rel.hotel h');
SELECT bridge_error('SELECT h.id FROM hotel_rel.hotel h ORDER BY (SELECT 1)');
SELECT bridge_error('SELECT 1');
-- a top-level aggregate: the rows it aggregates (targets, the GROUP BY
-- column ordered, the searched column selected too), and what it
-- computes of them (result, result_order, group)
SELECT kind, ord, alias, column_name, type_name, op, param, other_column, name, detail
FROM cql_bridge_analyze('SELECT r.room_number, count(*) AS n, sum(r.rate) AS total, max(r.rate) AS top, avg(r.rate) AS mean, count(DISTINCT r.rate) AS rates FROM hotel_rel.room r WHERE r.hotel_id = $1 GROUP BY r.room_number ORDER BY total DESC, r.room_number', '{text}')
ORDER BY kind, ord;
SELECT detail FROM cql_bridge_analyze('SELECT count(*) AS n FROM hotel_rel.room r WHERE r.hotel_id = $1', '{text}') WHERE name = 'base';

-- IN lists and ORs of equalities on parameters; a LIMIT parameter; a
-- searched column the query does not select
SELECT kind, ord, alias, column_name, op, param, name
FROM cql_bridge_analyze('SELECT h.name FROM hotel_rel.hotel h WHERE h.id = ANY ($1) AND (h.city = $2 OR h.city = $3) AND h.state_or_province IN ($4, $5) ORDER BY h.name LIMIT $6', '{text[],text,text,text,text,bigint}')
WHERE kind IN ('equality', 'filter', 'limit', 'target')
ORDER BY kind, ord;

-- an error leaves the caller's search_path alone (the function deparses
-- with an empty one)
SHOW search_path;

DROP FUNCTION bridge_error(text, regtype[]);
DROP FUNCTION bridge_rows(text);
DROP TABLE bridge_sql, bridge_q;
SET client_min_messages = warning;
DROP SCHEMA video_rel CASCADE;
DROP SCHEMA hotel_rel CASCADE;
RESET client_min_messages;


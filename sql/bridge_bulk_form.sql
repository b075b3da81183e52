--
-- cql_bridge_bulk_form(view): the query of a source view with its
-- correlated aggregate subqueries computed once per key and LEFT JOINed
-- (src/bridge/bulk_form.c), which "cqlbridge diff" reads instead of the
-- view.  Every rewritten view is checked equal to its bulk form, row for
-- row, in both directions; the subqueries the rewrite is not proven for
-- are left as they are.  No Cassandra needed.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
RESET client_min_messages;
CREATE SCHEMA bf;
SET search_path = bf, public;

CREATE TABLE guest (id int PRIMARY KEY, name text, region text);
CREATE TABLE guest_email (gid int, email text, PRIMARY KEY (gid, email));
CREATE TABLE guest_phone (gid int, pos int, phone text);
CREATE TABLE guest_address (gid int, kind text, city text, region text);
INSERT INTO guest SELECT g, 'guest ' || g, CASE WHEN g % 3 = 0 THEN 'east' END
FROM generate_series(1, 60) g;
-- guests 1-20 have emails, 11-40 phones (some NULL), 31-50 addresses;
-- 51-60 have none of them
INSERT INTO guest_email SELECT g, 'e' || g || '-' || i || '@x' FROM generate_series(1, 20) g, generate_series(1, g % 3 + 1) i;
INSERT INTO guest_phone SELECT g, i, CASE WHEN g % 4 = 0 THEN NULL ELSE '555-' || g || i END
FROM generate_series(11, 40) g, generate_series(1, 2) i;
INSERT INTO guest_phone VALUES (NULL, 1, 'no guest'), (12, 3, NULL);
INSERT INTO guest_address SELECT g, k, 'city ' || g, CASE WHEN g % 2 = 0 THEN 'east' ELSE 'west' END
FROM generate_series(31, 50) g, unnest(ARRAY['home', 'work']) k;
ANALYZE guest, guest_email, guest_phone, guest_address;

-- checks that a view and its bulk form have the same rows (EXCEPT ALL,
-- both ways: duplicates count too) and how many
CREATE FUNCTION bf_same(v regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	bulk text := public.cql_bridge_bulk_form(v);
	only_view bigint;
	only_bulk bigint;
	n bigint;
BEGIN
	IF bulk IS NULL THEN
		RETURN 'no bulk form';
	END IF;
	EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL SELECT * FROM (%s) b) d', v, bulk) INTO only_view;
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', bulk, v) INTO only_bulk;
	EXECUTE format('SELECT count(*) FROM %s', v) INTO n;
	RETURN format('%s rows, %s only in the view, %s only in the bulk form', n, only_view, only_bulk);
END $$;

-- the shape of the hotel's guests view (Q9): three collections per guest,
-- in a subquery as cqlbridge's source views have it
CREATE VIEW guests_src WITH (security_invoker = true) AS
SELECT q.* FROM (
  SELECT g.id, g.name,
         (SELECT array_agg(e.email ORDER BY e.email) FROM guest_email e WHERE e.gid = g.id) AS emails,
         (SELECT array_agg(p.phone ORDER BY p.pos) FROM guest_phone p WHERE p.gid = g.id) AS phones,
         (SELECT jsonb_object_agg(a.kind, jsonb_build_object('city', a.city))
            FROM guest_address a WHERE g.id = a.gid) AS addresses
  FROM guest g) q;
SELECT bf_same('guests_src');
-- the view runs three subqueries per guest (SubPlans); its bulk form
-- joins grouped rows, and its "WHERE false" subqueries run once
-- (InitPlans).  Counted in EXPLAIN's JSON, whose layout every version
-- shares.
CREATE FUNCTION bf_subplans(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
	per_row bigint;
	once bigint;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON, COSTS OFF) ' || query INTO plan;
	SELECT count(*) FILTER (WHERE n #>> '{}' LIKE 'SubPlan%'),
	       count(*) FILTER (WHERE n #>> '{}' LIKE 'InitPlan%')
	  INTO per_row, once
	  FROM jsonb_path_query(plan, 'strict $.**."Subplan Name"') n;
	RETURN format('%s subqueries run per row, %s run once', per_row, once);
END $$;
SELECT bf_subplans('SELECT * FROM guests_src') AS view,
       bf_subplans(cql_bridge_bulk_form('guests_src')) AS bulk_form;
-- the text names every schema: it runs whatever the search_path
SET search_path = pg_catalog;
SELECT bf.bf_same('bf.guests_src');
SET search_path = bf, public;

-- an aggregate whose value over no rows is not NULL (count: 0), one that
-- is NULL in a group with rows (max of NULL phones), a subquery inside an
-- expression, a condition of its own, and two correlation keys
CREATE VIEW counts_src WITH (security_invoker = true) AS
SELECT g.id,
       (SELECT count(*) FROM guest_phone p WHERE p.gid = g.id) AS phones,
       (SELECT max(p.phone) FROM guest_phone p WHERE p.gid = g.id) AS last_phone,
       coalesce((SELECT string_agg(e.email, ',' ORDER BY e.email) FROM guest_email e
                 WHERE e.gid = g.id AND e.email LIKE '%-1@%'), '-') AS first_email,
       (SELECT count(a.city) FROM guest_address a WHERE a.gid = g.id AND a.region = g.region) AS same_region
FROM guest g;
SELECT cql_bridge_bulk_form('counts_src');
SELECT bf_same('counts_src');
SELECT * FROM counts_src WHERE id IN (4, 12, 36, 55) ORDER BY id;

-- the FROM item a join: the grouped subqueries join on top of it
CREATE VIEW joined_src WITH (security_invoker = true) AS
SELECT g.id, a.kind,
       (SELECT count(*) FROM guest_email e WHERE e.gid = g.id) AS emails
FROM guest g JOIN guest_address a ON a.gid = g.id;
SELECT bf_same('joined_src');

-- left as they are (the rewrite is not proven for them); a view with
-- nothing else has no bulk form
CREATE VIEW kept_src WITH (security_invoker = true) AS
SELECT g.id,
       (SELECT count(*) FROM guest_email e WHERE e.gid < g.id) AS not_equality,
       (SELECT count(*) FROM guest_email e WHERE e.gid = g.id AND random() >= 0) AS volatile,
       (SELECT e.email FROM guest_email e WHERE e.gid = g.id ORDER BY e.email LIMIT 1) AS not_aggregate,
       (SELECT count(*) FROM guest_email e WHERE e.gid::bigint = g.id::bigint + 0) AS outer_expression,
       (SELECT count(*) FROM guest_phone p WHERE p.gid::bigint = g.id) AS cross_type,
       (SELECT count(*) FROM guest_email e WHERE e.email = g.name COLLATE "C") AS other_collation,
       (SELECT max(e.email || g.name) FROM guest_email e WHERE e.gid = g.id) AS outer_in_value,
       (SELECT count(*) FROM guest_email e WHERE e.gid = g.id GROUP BY e.gid) AS grouped,
       (SELECT count(*) FROM guest_email e WHERE e.gid = g.id
          AND EXISTS (SELECT 1 FROM guest_phone p WHERE p.gid = e.gid)) AS nested
FROM guest g;
SELECT cql_bridge_bulk_form('kept_src') IS NULL AS no_bulk_form;
-- an aggregating outer query: a join below its GROUP BY would change it
CREATE VIEW grouped_src WITH (security_invoker = true) AS
SELECT g.region, (SELECT count(*) FROM guest_email e WHERE e.gid = min(g.id)) AS n
FROM guest g GROUP BY g.region;
SELECT cql_bridge_bulk_form('grouped_src') IS NULL AS no_bulk_form;
-- one subquery rewritten, one kept
CREATE VIEW mixed_src WITH (security_invoker = true) AS
SELECT g.id,
       (SELECT count(*) FROM guest_email e WHERE e.gid = g.id) AS emails,
       (SELECT count(*) FROM guest_email e WHERE e.gid < g.id) AS below
FROM guest g;
SELECT cql_bridge_bulk_form('mixed_src');
SELECT bf_same('mixed_src');

-- a view with its owner's rights: its query would read the tables with
-- the caller's privileges and row security instead, so there is no bulk
-- form (cqlbridge's source views are security_invoker)
CREATE VIEW definer_src AS
SELECT g.id, (SELECT count(*) FROM guest_email e WHERE e.gid = g.id) AS emails FROM guest g;
SELECT cql_bridge_bulk_form('definer_src') IS NULL AS no_bulk_form;
ALTER VIEW definer_src SET (security_invoker = true);
SELECT bf_same('definer_src');

-- not a view (42809)
SELECT cql_bridge_bulk_form('guest');
\set VERBOSITY sqlstate
SELECT cql_bridge_bulk_form('guest');
\set VERBOSITY default
SELECT cql_bridge_bulk_form(NULL) IS NULL AS strict;

DROP SCHEMA bf CASCADE;

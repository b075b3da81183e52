--
-- check.sql
--	  Self-check of the hotel migrations: data invariants, the deliberate
--	  traps, the format of workload.sql and a non-empty result for each of
--	  its queries.  Any failure is an ERROR (RAISE EXCEPTION), so psql with
--	  ON_ERROR_STOP exits non-zero.
--
-- Usage, from the repository root, on data made by generate.sql (written
-- for the default scale=3; any scale >= 3 passes too):
--	  psql -X -v ON_ERROR_STOP=1 -d DB -f migrations/hotel/check.sql
-- Variables: workload - path of workload.sql for the parser check, relative
-- to the current directory (default migrations/hotel/workload.sql).
--
-- Two paths run each query:
--	1. psql: sample parameters are \gset as psql variables and workload.sql
--	   is included with \ir, as a user would run it;
--	2. the splitter: the file is split into blocks by the documented format
--	   (as a C program would), each block is checked (metadata, one
--	   statement, declared params = used params), PREPAREd with $k and the
--	   declared types, and run with the sample values; zero rows, or several
--	   rows without ORDER BY, is an error.
--
-- IDENTIFICATION
--	  migrations/hotel/check.sql
--
\set ON_ERROR_STOP on
\if :{?workload}
\else
\set workload migrations/hotel/workload.sql
\endif
SET search_path = hotel_rel;
SET client_min_messages = notice;

-- ---------------------------------------------------------------------
-- 1. Data invariants
-- ---------------------------------------------------------------------
DO $$
DECLARE
	n bigint;
	m bigint;
BEGIN
	SELECT count(*) INTO n FROM hotel;
	IF n < 3 THEN
		RAISE EXCEPTION 'check: expected at least 3 hotels (generate.sql scale >= 3), found %', n;
	END IF;

	-- stays of one room never overlap
	SELECT count(*) INTO n
	FROM reservation a
	JOIN reservation b ON b.hotel_id = a.hotel_id AND b.room_number = a.room_number
		AND b.confirm_number > a.confirm_number
		AND b.start_date < a.end_date AND a.start_date < b.end_date;
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % pairs of overlapping reservations', n;
	END IF;

	-- every room has one availability row per night of the same window
	SELECT count(DISTINCT c) INTO n
	FROM (SELECT count(*) AS c FROM room_availability GROUP BY hotel_id, room_number) s;
	SELECT count(*) INTO m FROM room r
	WHERE NOT EXISTS (SELECT 1 FROM room_availability ra
					  WHERE ra.hotel_id = r.hotel_id AND ra.room_number = r.room_number);
	IF n <> 1 OR m > 0 THEN
		RAISE EXCEPTION 'check: availability windows differ between rooms (% sizes, % rooms without rows)', n, m;
	END IF;

	-- a night is unavailable exactly when a reservation covers it
	SELECT count(*) INTO n
	FROM reservation r
	CROSS JOIN LATERAL generate_series(r.start_date, r.end_date - 1, interval '1 day') d
	LEFT JOIN room_availability ra ON ra.hotel_id = r.hotel_id AND ra.room_number = r.room_number
		AND ra.date = d::date
	WHERE ra.is_available IS DISTINCT FROM false;
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % reserved nights are missing or marked available', n;
	END IF;
	SELECT count(*) INTO n FROM room_availability WHERE NOT is_available;
	SELECT coalesce(sum(end_date - start_date), 0) INTO m FROM reservation;
	IF n <> m THEN
		RAISE EXCEPTION 'check: % unavailable nights but % reserved nights', n, m;
	END IF;

	-- POI names are unique per hotel (pois_by_hotel and hotels.pois rely on it)
	SELECT count(*) INTO n FROM (
		SELECT 1 FROM hotel_poi hp JOIN point_of_interest p ON p.id = hp.poi_id
		GROUP BY hp.hotel_id, p.name HAVING count(*) > 1) s;
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % hotels are near two POIs with the same name', n;
	END IF;

	-- collection sizes: 0-3 emails, 1-2 phones at positions 1..n, a home address
	SELECT count(*) INTO n FROM guest g
	WHERE (SELECT count(*) FROM guest_email e WHERE e.guest_id = g.guest_id) > 3
	   OR (SELECT count(*) FROM guest_phone p WHERE p.guest_id = g.guest_id) NOT BETWEEN 1 AND 2
	   OR (SELECT max(position) FROM guest_phone p WHERE p.guest_id = g.guest_id)
		  <> (SELECT count(*) FROM guest_phone p WHERE p.guest_id = g.guest_id)
	   OR NOT EXISTS (SELECT 1 FROM guest_address a WHERE a.guest_id = g.guest_id AND a.kind = 'home');
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % guests with unexpected emails, phones or addresses', n;
	END IF;
END $$;

-- ---------------------------------------------------------------------
-- 2. The deliberate traps (README.md, "Traps in the data"): each must be
--	  present, or the bridge's detection of it is not tested.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE check_trap AS
SELECT 1 AS ord, 'reservations_by_guest rows lost to ((last_name), hotel_id)' AS trap,
	   (SELECT count(*) - count(DISTINCT (g.last_name, r.hotel_id))
		FROM reservation r JOIN guest g USING (guest_id)) AS n
UNION ALL
SELECT 2, '(last_name, hotel_id) groups with different guests',
	   (SELECT count(*) FROM (
			SELECT 1 FROM reservation r JOIN guest g USING (guest_id)
			GROUP BY g.last_name, r.hotel_id HAVING count(DISTINCT r.guest_id) > 1) s)
UNION ALL
SELECT 3, 'POI names shared by POIs of different cities',
	   (SELECT count(*) FROM (SELECT name FROM point_of_interest GROUP BY name HAVING count(*) > 1) s)
UNION ALL
SELECT 4, 'POI names near hotels in more than one city (Q1 merges them)',
	   (SELECT count(*) FROM (SELECT p.name FROM hotel_poi hp JOIN point_of_interest p ON p.id = hp.poi_id
							  GROUP BY p.name HAVING count(DISTINCT p.id) > 1) s)
UNION ALL
SELECT 4, 'POIs near more than one hotel (m:n)',
	   (SELECT count(*) FROM (SELECT poi_id FROM hotel_poi GROUP BY poi_id HAVING count(*) > 1) s)
UNION ALL
SELECT 5, 'reservations lost even with guest_id in the key (logical diagram)',
	   (SELECT count(*) - count(DISTINCT (g.last_name, r.hotel_id, r.guest_id))
		FROM reservation r JOIN guest g USING (guest_id))
UNION ALL
SELECT 6, 'guests without title (NULL)', (SELECT count(*) FROM guest WHERE title IS NULL)
UNION ALL
SELECT 7, 'guests without email (empty set)',
	   (SELECT count(*) FROM guest g WHERE NOT EXISTS (SELECT 1 FROM guest_email e WHERE e.guest_id = g.guest_id))
UNION ALL
SELECT 8, 'values with a quote or non-ASCII letter',
	   (SELECT count(*) FROM (SELECT name FROM point_of_interest UNION ALL SELECT city FROM hotel
							  UNION ALL SELECT last_name FROM guest UNION ALL SELECT first_name FROM guest) s (v)
		WHERE v ~ '''' OR v ~ '[^[:ascii:]]');
SELECT trap, n FROM check_trap ORDER BY ord;
DO $$
DECLARE
	t record;
BEGIN
	FOR t IN SELECT * FROM check_trap LOOP
		IF t.n = 0 THEN
			RAISE EXCEPTION 'check: trap "%" is absent from the data', t.trap;
		END IF;
	END LOOP;
END $$;

-- ---------------------------------------------------------------------
-- 3. Sample parameters, taken from the data so they work at any scale/seed:
--	  a reservation (earliest at the first hotel) whose guest has emails and
--	  whose last name occurs more than once at that hotel, a POI near its
--	  hotel (most hotels first), a week of availability from its start.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE check_param AS
SELECT r.hotel_id, r.start_date::text AS start_date, (r.start_date + 7)::text AS end_date,
	   r.room_number::text AS room_number, r.confirm_number, g.last_name, r.guest_id::text AS guest_id,
	   (SELECT p.name FROM hotel_poi hp JOIN point_of_interest p ON p.id = hp.poi_id
		WHERE hp.hotel_id = r.hotel_id
		ORDER BY (SELECT count(*) FROM point_of_interest p2 JOIN hotel_poi hp2 ON hp2.poi_id = p2.id
				  WHERE p2.name = p.name) DESC, p.name
		LIMIT 1) AS poi_name
FROM reservation r
JOIN guest g USING (guest_id)
WHERE EXISTS (SELECT 1 FROM guest_email e WHERE e.guest_id = r.guest_id)
  AND (SELECT count(*) FROM reservation r2 JOIN guest g2 USING (guest_id)
	   WHERE r2.hotel_id = r.hotel_id AND g2.last_name = g.last_name) > 1
ORDER BY r.hotel_id, r.start_date, r.room_number
LIMIT 1;
SELECT count(*) = 1 AS have_params FROM check_param \gset
\if :have_params
\else
DO $$ BEGIN RAISE EXCEPTION 'check: no reservation fits the sample-parameter rules'; END $$;
\endif
SELECT * FROM check_param \gset
\echo check: parameters hotel_id=:hotel_id start_date=:start_date end_date=:end_date room_number=:room_number confirm_number=:confirm_number last_name=:last_name guest_id=:guest_id poi_name=:poi_name

-- ---------------------------------------------------------------------
-- 4a. psql path: the file as a user runs it (output discarded)
-- ---------------------------------------------------------------------
\o /dev/null
\ir workload.sql
\o

-- ---------------------------------------------------------------------
-- 4b. splitter path
-- ---------------------------------------------------------------------
\set workload_text `cat :workload`
CREATE TEMP TABLE check_workload AS SELECT :'workload_text'::text AS body;

CREATE TEMP TABLE check_result (name text, rows bigint, params text);
DO $$
DECLARE
	body		text;
	blocks		text[];
	blk			text;
	lines		text[];
	ln			text;
	li			int;
	meta		jsonb;
	stmt		text;
	prepared	text;
	executed	text;
	pname		text;
	ptype		text;
	pnames		text[];
	ptypes		text[];
	used		text[];
	val			text;
	vals		text[];
	nrows		bigint;
	names		text[] := '{}';
	pv			jsonb;
	k			int;
BEGIN
	SELECT w.body INTO body FROM check_workload w;
	SELECT to_jsonb(p) INTO pv FROM check_param p;
	body := replace(body, E'\r\n', E'\n');
	IF position(E'\n-- name: ' IN E'\n' || body) = 0 THEN
		RAISE EXCEPTION 'workload: no "-- name:" block';
	END IF;
	-- header = everything before the first "-- name:" line
	blocks := regexp_split_to_array(substr(body, position(E'\n-- name: ' IN E'\n' || body)),
									E'\n(?=-- name: )');
	FOREACH blk IN ARRAY blocks LOOP
		lines := string_to_array(rtrim(blk, E'\n'), E'\n');
		meta := '{}';
		li := 1;
		WHILE li <= cardinality(lines) AND lines[li] ~ '^-- [a-z_]+: ' LOOP
			meta := meta || jsonb_build_object(substring(lines[li] FROM '^-- ([a-z_]+): '),
											   substring(lines[li] FROM '^-- [a-z_]+: (.*)$'));
			li := li + 1;
		END LOOP;
		IF NOT (meta ? 'name' AND meta ? 'description' AND meta ? 'params' AND meta ? 'target')
		   OR meta->>'name' !~ '^Q[0-9]+_[A-Za-z0-9_]+$' THEN
			RAISE EXCEPTION 'workload: bad metadata in block starting %', quote_literal(lines[1]);
		END IF;
		IF meta->>'name' = ANY (names) THEN
			RAISE EXCEPTION 'workload: duplicate name %', meta->>'name';
		END IF;
		names := names || (meta->>'name');

		-- the statement: up to the first line ending in ";", then nothing
		stmt := NULL;
		FOR k IN li .. cardinality(lines) LOOP
			ln := lines[k];
			IF ln ~ '^\s*$' OR ln ~ '^\s*--' THEN
				RAISE EXCEPTION 'workload %: blank or comment line inside the statement', meta->>'name';
			END IF;
			stmt := coalesce(stmt || E'\n', '') || ln;
			IF ln ~ ';$' THEN
				IF k <> cardinality(lines) THEN
					RAISE EXCEPTION 'workload %: text after the statement', meta->>'name';
				END IF;
				EXIT;
			END IF;
		END LOOP;
		IF stmt IS NULL OR stmt !~ ';$' OR position(';' IN left(stmt, -1)) > 0 THEN
			RAISE EXCEPTION 'workload %: need exactly one statement ending with ";" at end of line', meta->>'name';
		END IF;
		stmt := left(stmt, -1);

		-- declared parameters vs used ones
		pnames := '{}';
		ptypes := '{}';
		IF meta->>'params' <> 'none' THEN
			FOREACH ln IN ARRAY string_to_array(meta->>'params', ',') LOOP
				pname := substring(btrim(ln) FROM '^([A-Za-z_][A-Za-z0-9_]*) ');
				ptype := substring(btrim(ln) FROM '^[A-Za-z_][A-Za-z0-9_]* (.+)$');
				IF pname IS NULL OR ptype IS NULL THEN
					RAISE EXCEPTION 'workload %: bad params entry %', meta->>'name', quote_literal(ln);
				END IF;
				pnames := pnames || pname;
				ptypes := ptypes || ptype;
			END LOOP;
		END IF;
		SELECT coalesce(array_agg(DISTINCT m[1] ORDER BY m[1]), '{}') INTO used
		FROM regexp_matches(stmt, ':''([A-Za-z_][A-Za-z0-9_]*)''', 'g') m;
		IF used IS DISTINCT FROM (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(pnames) x)
		   OR cardinality(pnames) <> (SELECT count(DISTINCT x) FROM unnest(pnames) x) THEN
			RAISE EXCEPTION 'workload %: params % declared, % used', meta->>'name', pnames, used;
		END IF;

		-- as a program would: $k with the declared types
		prepared := stmt;
		executed := stmt;
		vals := '{}';
		FOR k IN 1 .. cardinality(pnames) LOOP
			val := pv->>pnames[k];
			IF val IS NULL THEN
				RAISE EXCEPTION 'workload %: no sample value for parameter %', meta->>'name', pnames[k];
			END IF;
			prepared := replace(prepared, ':''' || pnames[k] || '''', '$' || k);
			executed := replace(executed, ':''' || pnames[k] || '''', '$' || k);
			vals := vals || format('%L::%s', val, ptypes[k]);
		END LOOP;
		IF position(':''' IN prepared) > 0 THEN
			RAISE EXCEPTION 'workload %: stray :'' left after substitution', meta->>'name';
		END IF;
		EXECUTE format('PREPARE check_stmt%s AS %s',
					   CASE WHEN cardinality(ptypes) > 0 THEN '(' || array_to_string(ptypes, ', ') || ')' ELSE '' END,
					   prepared);
		DEALLOCATE check_stmt;
		-- and count its rows with the values bound through the same $k
		FOR k IN REVERSE cardinality(pnames) .. 1 LOOP
			executed := replace(executed, '$' || k, vals[k]);
		END LOOP;
		EXECUTE format('SELECT count(*) FROM (%s) q', executed) INTO nrows;
		IF nrows = 0 THEN
			RAISE EXCEPTION 'workload %: no rows for %', meta->>'name', vals;
		END IF;
		IF nrows > 1 AND stmt !~* '\morder\s+by\M[^)]*$' THEN
			RAISE EXCEPTION 'workload %: % rows but no final ORDER BY', meta->>'name', nrows;
		END IF;
		INSERT INTO check_result VALUES (meta->>'name', nrows, array_to_string(vals, ', '));
	END LOOP;
	IF names IS DISTINCT FROM ARRAY(SELECT x FROM unnest(names) x ORDER BY substring(x FROM '^Q([0-9]+)')::int)
	   OR cardinality(names) <> 9 THEN
		RAISE EXCEPTION 'workload: expected Q1..Q9 in order, found %', names;
	END IF;
END $$;
SELECT name, rows, params FROM check_result ORDER BY substring(name FROM '^Q([0-9]+)')::int;

-- ---------------------------------------------------------------------
-- 5. Fingerprint of the whole data set: equal on every machine for the
--	  same generate.sql variables (README.md lists the value for the
--	  defaults).  Row text is independent of locale thanks to COLLATE "C"
--	  and DateStyle ISO.
-- ---------------------------------------------------------------------
SET DateStyle = ISO;
SELECT md5(string_agg(x, E'\n' ORDER BY x COLLATE "C")) AS data_fingerprint
FROM (SELECT 'hotel ' || t::text FROM hotel t
	  UNION ALL SELECT 'point_of_interest ' || t::text FROM point_of_interest t
	  UNION ALL SELECT 'hotel_poi ' || t::text FROM hotel_poi t
	  UNION ALL SELECT 'room ' || t::text FROM room t
	  UNION ALL SELECT 'amenity ' || t::text FROM amenity t
	  UNION ALL SELECT 'room_amenity ' || t::text FROM room_amenity t
	  UNION ALL SELECT 'room_availability ' || t::text FROM room_availability t
	  UNION ALL SELECT 'guest ' || t::text FROM guest t
	  UNION ALL SELECT 'guest_email ' || t::text FROM guest_email t
	  UNION ALL SELECT 'guest_phone ' || t::text FROM guest_phone t
	  UNION ALL SELECT 'guest_address ' || t::text FROM guest_address t
	  UNION ALL SELECT 'reservation ' || t::text FROM reservation t) s (x);
RESET DateStyle;
\echo check.sql: all checks passed

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

\set expected_queries 9
\ir ../lib/check_workload.sql

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

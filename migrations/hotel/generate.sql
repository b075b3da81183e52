--
-- generate.sql
--	  Deterministic data for the hotel_rel schema (schema/001-006).
--
-- Usage (from the repository root, after the schema files):
--	  psql -X -v ON_ERROR_STOP=1 -d DB -f migrations/hotel/generate.sql
--	  psql -X -v ON_ERROR_STOP=1 -d DB -v scale=50 -v rooms=100 -v days=730 \
--		   -f migrations/hotel/generate.sql
--
-- Variables (all optional):
--	  scale		 number of hotels						default 3
--	  rooms		 rooms per hotel (1..6000)				default 10
--	  days		 nights of availability per room		default 30
--	  start		 first night							default 2026-01-01
--	  seed		 any text; changes every derived value	default 1
--	  occupancy	 % of room-weeks with a single booking	default 50
--	  group_pct	 % of neighbouring room pairs booked	default 15
--				 together by one family (same last name)
--	  guests	 number of guests (even)				default max(20, scale*rooms*days/12)
--	  chunk		 hotels per availability INSERT			default 10
--				 (each chunk is sorted in memory: ~100 bytes
--				 per room-night must fit in work_mem, 128MB)
--
-- Determinism: no random(); every choice is a field of md5(seed:kind:ids), so
-- the same variables give byte-identical tables on any machine and any
-- PostgreSQL version (md5 is fully specified, unlike hashtext()).
--
-- The script TRUNCATEs the twelve tables and fills them in one transaction.
-- For speed it drops the foreign keys and the secondary indexes of schema
-- hotel_rel first and re-creates them from their saved definitions at the
-- end (one validating join per foreign key instead of one trigger call per
-- row); primary keys and unique constraints stay.  Then VACUUM ANALYZE
-- (visibility map for index-only scans, statistics for the planner).  See README.md for the shape of the data and
-- the traps it contains on purpose.
--
-- IDENTIFICATION
--	  migrations/hotel/generate.sql
--
\set ON_ERROR_STOP on

\if :{?scale}
\else
\set scale 3
\endif
\if :{?rooms}
\else
\set rooms 10
\endif
\if :{?days}
\else
\set days 30
\endif
\if :{?start}
\else
\set start 2026-01-01
\endif
\if :{?seed}
\else
\set seed 1
\endif
\if :{?occupancy}
\else
\set occupancy 50
\endif
\if :{?group_pct}
\else
\set group_pct 15
\endif
\if :{?chunk}
\else
\set chunk 10
\endif
\if :{?guests}
\else
SELECT greatest(20, (:scale::bigint * :rooms * :days / 12) / 2 * 2) AS guests \gset
\endif

SET search_path = hotel_rel;
SET client_min_messages = warning;
SET work_mem = '128MB';
SET enable_memoize = off;		-- every cache key is distinct here

-- ---------------------------------------------------------------------
-- Helpers: session-local (pg_temp), so the schema stays clean.  The SQL
-- functions are single expressions that use each argument once, so the
-- planner inlines them.
-- ---------------------------------------------------------------------

-- 32-bit field k (0..3) of a 32-digit md5 hex string, as a bigint >= 0
CREATE OR REPLACE FUNCTION pg_temp.f(m text, k int) RETURNS bigint
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT ('x' || substr(m, 1 + 8 * k, 8))::bit(32)::bigint $$;

-- six base-36 digits of n (0 <= n < 36^6), least significant first
CREATE OR REPLACE FUNCTION pg_temp.b36(n bigint) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', (n % 36)::int + 1, 1)
			  || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', (n / 36 % 36)::int + 1, 1)
			  || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', (n / 1296 % 36)::int + 1, 1)
			  || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', (n / 46656 % 36)::int + 1, 1)
			  || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', (n / 1679616 % 36)::int + 1, 1)
			  || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', (n / 60466176 % 36)::int + 1, 1) $$;

-- a guest's uuid: md5 of seed and guest number, stamped as an RFC 4122
-- version 4 uuid (version nibble 4, variant nibble 8)
CREATE OR REPLACE FUNCTION pg_temp.guest_uuid(seed text, g bigint) RETURNS uuid
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT overlay(overlay(md5(seed || ':guest:' || g) PLACING '4' FROM 13)
						 PLACING '8' FROM 17)::uuid $$;

CREATE OR REPLACE FUNCTION pg_temp.assert(ok boolean, msg text) RETURNS void
	LANGUAGE plpgsql
	AS $$ BEGIN IF NOT ok THEN RAISE EXCEPTION 'generate.sql: %', msg; END IF; END $$;

SELECT pg_temp.assert(:scale >= 1, 'scale must be >= 1'),
	   pg_temp.assert(:rooms BETWEEN 1 AND 6000, 'rooms must be 1..6000 (room numbers are smallint floor*100+n)'),
	   pg_temp.assert(:days >= 1, 'days must be >= 1'),
	   pg_temp.assert(:guests >= 2 AND :guests % 2 = 0, 'guests must be even and >= 2'),
	   pg_temp.assert(:occupancy BETWEEN 0 AND 100 AND :group_pct BETWEEN 0 AND 100, 'percentages must be 0..100'),
	   pg_temp.assert(:scale::bigint * ((:days + 6) / 7) * :rooms < 2176782336, 'too many room-weeks for 6-digit confirmation numbers')
\g /dev/null

\echo generate.sql: scale=:scale rooms=:rooms days=:days start=:start seed=:seed occupancy=:occupancy group_pct=:group_pct guests=:guests

BEGIN;
TRUNCATE reservation, room_availability, room_amenity, room, amenity,
		 hotel_poi, point_of_interest, hotel,
		 guest_address, guest_phone, guest_email, guest;

-- foreign keys and plain indexes of the schema: saved, dropped, re-created
-- after the load (ORDER BY makes the DDL order, hence any error, stable)
CREATE TEMP TABLE gen_ddl ON COMMIT DROP AS
SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname) AS drop_sql,
	   format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname,
			  pg_get_constraintdef(c.oid)) AS create_sql,
	   1 AS phase, c.conname::text AS name
FROM pg_constraint c
WHERE c.contype = 'f' AND c.connamespace = 'hotel_rel'::regnamespace
UNION ALL
SELECT format('DROP INDEX hotel_rel.%I', i.indexrelid::regclass::text),
	   pg_get_indexdef(i.indexrelid), 0, i.indexrelid::regclass::text
FROM pg_index i
JOIN pg_class t ON t.oid = i.indrelid
WHERE t.relnamespace = 'hotel_rel'::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid);
SELECT drop_sql FROM gen_ddl ORDER BY phase DESC, name
\gexec

-- ---------------------------------------------------------------------
-- Word lists.  Cities have distinct state/province codes so hotel ids
-- (code + number) never clash; a few names carry quotes and accents on
-- purpose (Fisherman's Wharf, Montréal, O'Brien, Chloé) to exercise
-- quoting and UTF-8 on every path.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_city ON COMMIT DROP AS
SELECT * FROM (VALUES
	(0, 'Phoenix', 'AZ', 'USA', '850', '602', 'WestWorld', 'Western-themed events park', 'Desert Botanical Garden', 'Cacti and desert plants'),
	(1, 'New York', 'NY', 'USA', '100', '212', 'Statue of Liberty', 'Copper lady in the harbour', 'Central Park', 'Large urban park'),
	(2, 'Chicago', 'IL', 'USA', '606', '312', 'Millennium Park', 'Park with the Cloud Gate sculpture', 'Navy Pier', 'Lakefront pier with rides'),
	(3, 'San Francisco', 'CA', 'USA', '941', '415', 'Golden Gate Bridge', 'Suspension bridge over the strait', 'Fisherman''s Wharf', 'Waterfront with sea lions'),
	(4, 'Austin', 'TX', 'USA', '787', '512', 'Texas State Capitol', 'Granite capitol building', 'Zilker Park', 'Park with a spring-fed pool'),
	(5, 'Seattle', 'WA', 'USA', '981', '206', 'Space Needle', 'Observation tower', 'Pike Place Market', 'Public market since 1907'),
	(6, 'Denver', 'CO', 'USA', '802', '303', 'Red Rocks Amphitheatre', 'Open-air rock amphitheatre', 'Union Station', 'Historic railway station'),
	(7, 'Boston', 'MA', 'USA', '021', '617', 'Freedom Trail', 'Walk through revolutionary history', 'Fenway Park', 'Baseball park'),
	(8, 'Miami', 'FL', 'USA', '331', '305', 'South Beach', 'Art deco beachfront', 'Little Havana', 'Cuban neighbourhood'),
	(9, 'Atlanta', 'GA', 'USA', '303', '404', 'Georgia Aquarium', 'Large aquarium', 'Centennial Olympic Park', 'Park of the 1996 games'),
	(10, 'Las Vegas', 'NV', 'USA', '891', '702', 'The Strip', 'Boulevard of casinos', 'Fremont Street', 'Downtown light show'),
	(11, 'Portland', 'OR', 'USA', '972', '503', 'Powell''s City of Books', 'Huge bookstore', 'Washington Park', 'Park with rose garden'),
	(12, 'Nashville', 'TN', 'USA', '372', '615', 'Grand Ole Opry', 'Country music stage', 'Music Row', 'Recording studios'),
	(13, 'New Orleans', 'LA', 'USA', '701', '504', 'French Quarter', 'Historic district', 'Garden District', 'Mansions and oaks'),
	(14, 'Minneapolis', 'MN', 'USA', '554', '612', 'Mall of America', 'Shopping mall', 'Stone Arch Bridge', 'Former railroad bridge'),
	(15, 'Philadelphia', 'PA', 'USA', '191', '215', 'Liberty Bell', 'Cracked bell', 'Reading Terminal Market', 'Indoor market'),
	(16, 'Toronto', 'ON', 'Canada', 'M5V', '416', 'CN Tower', 'Communications tower', 'Distillery District', 'Victorian industrial quarter'),
	(17, 'Vancouver', 'BC', 'Canada', 'V6B', '604', 'Stanley Park', 'Seaside park', 'Granville Island', 'Public market and arts'),
	(18, 'Montréal', 'QC', 'Canada', 'H2Y', '514', 'Vieux-Port', 'Old port on the St. Lawrence', 'Mont Royal', 'Hill above the city'),
	(19, 'Washington', 'DC', 'USA', '200', '202', 'National Mall', 'Monuments and museums', 'Union Station', 'Historic railway station')
) v (c, city, state, country, postal_prefix, area, lm1, lm1_desc, lm2, lm2_desc);

-- generic POI names: the same name in many cities (trap 3)
CREATE TEMP TABLE gen_generic_poi ON COMMIT DROP AS
SELECT * FROM (VALUES
	(1, 'Convention Center', 'Convention center'), (2, 'City Museum', 'Museum of local history'),
	(3, 'Art Museum', 'Fine arts museum'), (4, 'Old Town', 'Historic centre'),
	(5, 'Central Station', 'Main railway station'), (6, 'Stadium', 'Sports stadium'),
	(7, 'Zoo', 'Zoological garden'), (8, 'Aquarium', 'Public aquarium'),
	(9, 'University Campus', 'Main university campus'), (10, 'Cathedral', 'Cathedral church'),
	(11, 'Riverfront', 'Walk along the water'), (12, 'Opera House', 'Opera and ballet'),
	(13, 'Science Center', 'Hands-on science museum'), (14, 'Farmers Market', 'Weekly market'),
	(15, 'Chinatown', 'Chinese quarter'), (16, 'Airport', 'International airport')
) v (j, name, descr);

CREATE TEMP TABLE gen_word (list text, j int, w text, female boolean) ON COMMIT DROP;
INSERT INTO gen_word
SELECT 'brand', ord - 1, w, NULL::boolean FROM unnest(ARRAY[
	'Super Hotel', 'Grand Hotel', 'Comfort Inn', 'Plaza Hotel', 'Waterfront Hotel',
	'Budget Stay', 'Royal Suites', 'Park Lodge', 'Harbor Inn', 'Sunset Resort']) WITH ORDINALITY u (w, ord)
UNION ALL
SELECT 'district', ord - 1, w, NULL FROM unnest(ARRAY[
	'Downtown', 'Airport', 'Midtown', 'Uptown', 'Riverside', 'Convention District', 'Old Quarter', 'Suites']) WITH ORDINALITY u (w, ord)
UNION ALL
SELECT 'street', ord - 1, w, NULL FROM unnest(ARRAY[
	'Main St', 'Oak Ave', 'Maple Dr', 'Cedar Ln', 'Park Ave', 'Elm St', 'Lake Shore Dr',
	'Pine St', 'Washington Blvd', 'Market St', '1st Ave', 'Broadway']) WITH ORDINALITY u (w, ord)
UNION ALL
SELECT 'first', ord - 1, w, ord <= 20 FROM unnest(ARRAY[
	'Mary', 'Patricia', 'Jennifer', 'Linda', 'Elizabeth', 'Barbara', 'Susan', 'Jessica', 'Sarah', 'Karen',
	'Nancy', 'Lisa', 'Betty', 'Sandra', 'Ashley', 'Emily', 'Chloé', 'Zoë', 'Maria', 'Aisha',
	'James', 'John', 'Robert', 'Michael', 'William', 'David', 'Richard', 'Joseph', 'Thomas', 'Charles',
	'Daniel', 'Matthew', 'Anthony', 'Mark', 'José', 'Kevin', 'Brian', 'George', 'Liam', 'Noah']) WITH ORDINALITY u (w, ord)
UNION ALL
-- common surnames, drawn with a skew toward the head of the list
SELECT 'last', ord - 1, w, NULL FROM unnest(ARRAY[
	'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
	'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin',
	'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson',
	'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores',
	'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell', 'O''Brien', 'Okafor']) WITH ORDINALITY u (w, ord)
UNION ALL
-- long tail: root + suffix, 200 rarer surnames (Ashford, Thornwood, ...)
SELECT 'tail', (r.ord - 1) * 10 + (s.ord - 1), r.w || s.w, NULL
FROM unnest(ARRAY['Ash', 'Black', 'Brook', 'Cald', 'Crom', 'Dun', 'Fair', 'Hart', 'Kings', 'Lang',
				  'Mor', 'Nor', 'Ox', 'Pem', 'Rad', 'Stan', 'Thorn', 'Wake', 'Wes', 'Whit']) WITH ORDINALITY r (w, ord),
	 unnest(ARRAY['ford', 'ley', 'ton', 'wood', 'field', 'well', 'by', 'more', 'ham', 'worth']) WITH ORDINALITY s (w, ord);
CREATE INDEX ON gen_word (list, j);
ANALYZE gen_word;

-- ---------------------------------------------------------------------
-- Hotels.  Hotels are spread round-robin over ncities = min(20,
-- ceil(scale/2)) cities, so even scale=3 has two hotels in one city that
-- share points of interest.  Hotel 1 is the docs' sample, AZ123 "Super
-- Hotel at WestWorld".  Id number: a permutation of 100..999 per city
-- (k-th hotel of the city), then 1000+k.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_hotel ON COMMIT DROP AS
SELECT i, c, k, m,
	   ct.state || CASE WHEN k < 900 THEN (100 + (k * 7919 + 23) % 900)::text
						ELSE (1000 + k)::text END AS id
FROM (SELECT i, (i - 1) % least(20, (:scale + 1) / 2) AS c, (i - 1) / least(20, (:scale + 1) / 2) AS k,
			 md5(:'seed' || ':hotel:' || i) AS m
	  FROM generate_series(1, :scale) i) h
JOIN gen_city ct USING (c);
CREATE UNIQUE INDEX ON gen_hotel (i);
ANALYZE gen_hotel;

INSERT INTO hotel (id, name, phone, street, city, state_or_province, postal_code, country)
SELECT h.id,
	   CASE WHEN h.i = 1 THEN 'Super Hotel at WestWorld'
			ELSE b.w || ' ' || ct.city || ' ' || d.w END,
	   CASE WHEN h.i = 1 THEN '1-888-999-9999'
			ELSE '1-' || ct.area || '-555-' || lpad((pg_temp.f(h.m, 2) % 10000)::text, 4, '0') END,
	   CASE WHEN h.i = 1 THEN '1 Rodeo Dr'
			ELSE (1 + pg_temp.f(h.m, 3) % 9899)::text || ' ' || s.w END,
	   ct.city, ct.state,
	   CASE WHEN h.i = 1 THEN '85001'
			WHEN ct.country = 'USA' THEN ct.postal_prefix || lpad((pg_temp.f(h.m, 2) / 10000 % 100)::text, 2, '0')
			ELSE ct.postal_prefix || ' ' || (pg_temp.f(h.m, 1) % 10)::text
				 || substr('ABCEGHJKLMNPRSTVWXYZ', 1 + (pg_temp.f(h.m, 1) / 10 % 20)::int, 1)
				 || (pg_temp.f(h.m, 1) / 200 % 10)::text END,
	   ct.country
FROM gen_hotel h
JOIN gen_city ct USING (c)
JOIN gen_word b ON b.list = 'brand' AND b.j = pg_temp.f(h.m, 0) % 10
JOIN gen_word d ON d.list = 'district' AND d.j = pg_temp.f(h.m, 1) % 8
JOIN gen_word s ON s.list = 'street' AND s.j = pg_temp.f(h.m, 3) / 9899 % 12;

-- ---------------------------------------------------------------------
-- Points of interest of the cities in use: two landmarks each (id c*100+1,
-- c*100+2) and about 60% of the generic names (id c*100+10+j).  Names are
-- unique within a city, so a hotel (near POIs of its own city only) is never
-- near two POIs with the same name.
-- ---------------------------------------------------------------------
INSERT INTO point_of_interest (id, name, description)
SELECT ct.c * 100 + 1, ct.lm1, ct.lm1_desc FROM gen_city ct WHERE ct.c IN (SELECT c FROM gen_hotel)
UNION ALL
SELECT ct.c * 100 + 2, ct.lm2, ct.lm2_desc FROM gen_city ct WHERE ct.c IN (SELECT c FROM gen_hotel)
UNION ALL
SELECT ct.c * 100 + 10 + g.j, g.name, g.descr || ' in ' || ct.city
FROM gen_city ct CROSS JOIN gen_generic_poi g
WHERE ct.c IN (SELECT c FROM gen_hotel)
  AND (g.j = 1 OR pg_temp.f(md5(:'seed' || ':poi:' || ct.c || ':' || g.j), 0) % 100 < 60);

-- every hotel is near its city's first landmark (so POIs are shared m:n),
-- the first hotel of every city is near its Convention Center (every city
-- has one, so that name always spans several cities), and any hotel is
-- near each other POI of its city with probability 35%
INSERT INTO hotel_poi (hotel_id, poi_id)
SELECT h.id, p.id
FROM gen_hotel h
JOIN point_of_interest p ON p.id / 100 = h.c
WHERE p.id % 100 = 1
   OR (p.id % 100 = 11 AND h.k = 0)
   OR pg_temp.f(md5(:'seed' || ':near:' || h.i || ':' || p.id), 0) % 100 < 35;

-- ---------------------------------------------------------------------
-- Amenities and rooms.  Room r (1-based) is number floor*100 + n with 20
-- rooms per floor: 101..120, 201..  The rate depends on the hotel's tier,
-- the floor and the room.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_amenity ON COMMIT DROP AS
SELECT * FROM (VALUES
	(1, 'Wi-Fi', 'Free wireless internet', 100),
	(2, 'Mini bar', 'Stocked daily', 50),
	(3, 'Coffee maker', 'Espresso machine with pods', 60),
	(4, 'Air conditioning', 'Individually controlled', 80),
	(5, 'Flat-screen TV', '55-inch TV with streaming', 70),
	(6, 'Safe', 'In-room safe, fits a laptop', 50),
	(7, 'Balcony', 'Private balcony', 25),
	(8, 'Jacuzzi', 'Whirlpool bath', 10),
	(9, 'Kitchenette', 'Two hobs, fridge and microwave', 15),
	(10, 'Work desk', 'Desk with ergonomic chair', 40),
	(11, 'Bathtub', 'Full-size bathtub', 35),
	(12, 'Pet friendly', 'Pets allowed, bowls provided', 20)
) v (id, name, description, pct);		-- pct: share of rooms that have it

INSERT INTO amenity (id, name, description)
SELECT id, name, description FROM gen_amenity;

INSERT INTO room (hotel_id, room_number, rate)
SELECT h.id, ((r - 1) / 20 + 1) * 100 + (r - 1) % 20 + 1,
	   (89 + 40 * (pg_temp.f(h.m, 0) / 10 % 5)			-- hotel tier: 89 .. 249
		+ 5 * ((r - 1) / 20)								-- higher floors cost more
		+ 10 * (pg_temp.f(x.rm, 0) % 6))::numeric		-- room category
	   + CASE WHEN pg_temp.f(x.rm, 1) % 2 = 0 THEN 0.00 ELSE 0.99 END
FROM gen_hotel h
CROSS JOIN generate_series(1, :rooms) r
CROSS JOIN LATERAL (SELECT md5(:'seed' || ':room:' || h.i || ':' || r) AS rm OFFSET 0) x;

INSERT INTO room_amenity (hotel_id, room_number, amenity_id)
SELECT h.id, ((r - 1) / 20 + 1) * 100 + (r - 1) % 20 + 1, a.id
FROM gen_hotel h
CROSS JOIN generate_series(1, :rooms) r
CROSS JOIN gen_amenity a
WHERE a.pct = 100
   OR pg_temp.f(md5(:'seed' || ':amenity:' || h.i || ':' || r || ':' || a.id), 0) % 100 < a.pct;

-- ---------------------------------------------------------------------
-- Guests.  Guests come in households of two: guests 2h+1 and 2h+2 share a
-- last name (about 70% from the 50 common surnames, skewed toward Smith,
-- the rest from 200 rarer ones).  Group bookings below put both members of
-- a household in neighbouring rooms of the same hotel, which is the MR5
-- trap of reservations_by_guest ((guest_last_name), hotel_id).
-- 0-3 emails, 1-2 phones, a home address and for 45% a work address.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_guest ON COMMIT DROP AS
SELECT g, pg_temp.guest_uuid(:'seed', g) AS guest_id, x.gm, x.hm
FROM generate_series(1, :guests) g
CROSS JOIN LATERAL (SELECT md5(:'seed' || ':person:' || g) AS gm,
						   md5(:'seed' || ':household:' || (g - 1) / 2) AS hm OFFSET 0) x;
CREATE UNIQUE INDEX ON gen_guest (guest_id);
ANALYZE gen_guest;

INSERT INTO guest (guest_id, first_name, last_name, title)
SELECT gg.guest_id, fn.w, ln.w,
	   CASE WHEN pg_temp.f(gg.gm, 1) % 100 < 15 THEN NULL
			WHEN pg_temp.f(gg.gm, 1) % 100 < 25 THEN 'Dr.'
			WHEN pg_temp.f(gg.gm, 1) % 100 < 28 THEN 'Mx.'
			WHEN NOT fn.female THEN 'Mr.'
			WHEN pg_temp.f(gg.gm, 1) % 2 = 0 THEN 'Ms.'
			ELSE 'Mrs.' END
FROM gen_guest gg
JOIN gen_word fn ON fn.list = 'first' AND fn.j = pg_temp.f(gg.gm, 0) % 40
JOIN gen_word ln ON (ln.list, ln.j) =
	(CASE WHEN pg_temp.f(gg.hm, 0) % 100 < 70 THEN 'last' ELSE 'tail' END,
	 CASE WHEN pg_temp.f(gg.hm, 0) % 100 < 70
		  THEN floor(50 * power(pg_temp.f(gg.hm, 1) / 4294967296.0, 2))::int
		  ELSE (pg_temp.f(gg.hm, 1) % 200)::int END);

INSERT INTO guest_email (guest_id, email)
SELECT gg.guest_id,
	   CASE e WHEN 1 THEN n.lf || '.' || n.ll || gg.g || '@example.com'
			  WHEN 2 THEN left(n.lf, 1) || n.ll || gg.g || '@example.net'
			  ELSE n.ll || '.' || n.lf || gg.g || '@work.example.org' END
FROM gen_guest gg
JOIN guest gu USING (guest_id)
CROSS JOIN LATERAL (SELECT translate(lower(gu.first_name), 'éëóö''', 'eeoo') AS lf,
						   translate(lower(gu.last_name), 'éëóö''', 'eeoo') AS ll) n
CROSS JOIN LATERAL generate_series(1, CASE WHEN pg_temp.f(gg.gm, 2) % 10 = 0 THEN 0	-- 10%: none
										   WHEN pg_temp.f(gg.gm, 2) % 10 < 6 THEN 1
										   WHEN pg_temp.f(gg.gm, 2) % 10 < 9 THEN 2
										   ELSE 3 END) e;

INSERT INTO guest_phone (guest_id, position, phone)
SELECT gg.guest_id, p,
	   '+1-' || ct.area || '-555-'
	   || lpad((pg_temp.f(gg.gm, 3) / CASE p WHEN 1 THEN 1 ELSE 10000 END % 10000)::text, 4, '0')
FROM gen_guest gg
JOIN gen_city ct ON ct.c = pg_temp.f(gg.hm, 2) % 20
CROSS JOIN LATERAL generate_series(1, 1 + (pg_temp.f(gg.gm, 2) / 10 % 10 < 4)::int) p;

INSERT INTO guest_address (guest_id, kind, street, city, state_or_province, postal_code, country)
SELECT gg.guest_id, a.kind,
	   (1 + a.am / 12 % 9899)::text || ' ' || s.w,
	   ct.city, ct.state,
	   CASE WHEN ct.country = 'USA' THEN ct.postal_prefix || lpad((a.am / 200000 % 100)::text, 2, '0')
			ELSE ct.postal_prefix || ' ' || (a.am / 200000 % 10)::text
				 || substr('ABCEGHJKLMNPRSTVWXYZ', 1 + (a.am / 2000000 % 20)::int, 1)
				 || (a.am / 40000000 % 10)::text END,
	   ct.country
FROM gen_guest gg
CROSS JOIN LATERAL (VALUES ('home', pg_temp.f(gg.hm, 3), pg_temp.f(gg.hm, 2) % 20),	-- the household's home
						   ('work', pg_temp.f(gg.gm, 3), pg_temp.f(gg.gm, 3) / 7 % 20)) a (kind, am, c)
JOIN gen_city ct ON ct.c = a.c
JOIN gen_word s ON s.list = 'street' AND s.j = a.am % 12
WHERE a.kind = 'home' OR pg_temp.f(gg.gm, 2) / 100 % 100 < 45;

-- ---------------------------------------------------------------------
-- Stays.  The calendar of each room is cut into weeks (slots of 7 nights,
-- the last one possibly shorter).  A slot holds at most one stay, which
-- starts 0-2 nights into the slot and ends inside it, so stays of a room
-- never overlap.  Rooms are paired (1-2, 3-4, ...); a pair is a group
-- booking in the first week of every hotel (so the trap exists at every
-- scale) and with probability group_pct later: both rooms, same dates,
-- the two members of one household.  Otherwise a room is booked with
-- probability occupancy, by a guest drawn from all guests.
-- gen_stay is a view so reservations and availability are derived from the
-- same expressions and cannot disagree.
-- ---------------------------------------------------------------------
CREATE TEMP VIEW gen_stay AS
SELECT h.i, h.id AS hotel_id, t, r,
	   (((r - 1) / 20 + 1) * 100 + (r - 1) % 20 + 1)::smallint AS room_number,
	   x.len,
	   g.grp OR pg_temp.f(x.rm, 0) % 100 < :occupancy AS reserved,
	   s.off,
	   1 + pg_temp.f(g.m, 2) % (x.len - s.off) AS nights,
	   CASE WHEN g.grp THEN 2 * (pg_temp.f(x.pm, 3) % (:guests / 2)) + 1 + (r - 1) % 2
			ELSE 1 + pg_temp.f(x.rm, 3) % :guests END AS guest_no
FROM gen_hotel h
CROSS JOIN generate_series(0, (:days + 6) / 7 - 1) t
CROSS JOIN generate_series(1, :rooms) r
CROSS JOIN LATERAL (SELECT least(7, :days - 7 * t) AS len,
						   r % 2 = 0 OR r < :rooms AS paired,
						   md5(:'seed' || ':pair:' || h.i || ':' || t || ':' || (r - 1) / 2) AS pm,
						   md5(:'seed' || ':stay:' || h.i || ':' || t || ':' || r) AS rm
					OFFSET 0) x
CROSS JOIN LATERAL (SELECT x.paired AND ((t = 0 AND r <= 2) OR pg_temp.f(x.pm, 0) % 100 < :group_pct) AS grp
					OFFSET 0) g0
CROSS JOIN LATERAL (SELECT g0.grp, CASE WHEN g0.grp THEN x.pm ELSE x.rm END AS m OFFSET 0) g
CROSS JOIN LATERAL (SELECT pg_temp.f(g.m, 1) % least(x.len, 3) AS off OFFSET 0) s;

-- confirmation number: a bijection of the room-week number onto six
-- base-36 digits (affine map mod 36^6 with a multiplier coprime to 36),
-- least significant digit first: unique without a lookup, and
-- neighbouring stays get unrelated-looking numbers
SELECT pg_temp.f(md5(:'seed' || ':confirm'), 0) AS confirm_offset \gset
INSERT INTO reservation (confirm_number, guest_id, hotel_id, room_number, start_date, end_date)
SELECT pg_temp.b36(c.n), pg_temp.guest_uuid(:'seed', c.guest_no),
	   hotel_id, room_number,
	   :'start'::date + 7 * t + off::int,
	   :'start'::date + 7 * t + off::int + nights::int
FROM gen_stay
CROSS JOIN LATERAL (SELECT ((((i - 1)::bigint * ((:days + 6) / 7) + t) * :rooms + r - 1) * 1103515249
							+ :confirm_offset) % 2176782336 AS n,
						   guest_no
					OFFSET 0) c
WHERE reserved;

-- availability: every room and night of the window; a night is taken when
-- the slot's stay covers it.  Inserted per chunk of hotels in primary-key
-- order (hotel, date, room) so Q4 reads a few adjacent heap pages.
SELECT format($f$
INSERT INTO room_availability (hotel_id, room_number, date, is_available)
SELECT hotel_id, room_number, %L::date + 7 * t + o,
	   NOT (reserved AND o >= off AND o < off + nights)
FROM gen_stay
CROSS JOIN LATERAL generate_series(0, len - 1) o
WHERE i BETWEEN %s AND %s
ORDER BY i, t, o, r$f$, :'start', lo, least(lo + :chunk - 1, :scale))
FROM generate_series(1, :scale, :chunk) lo
\gexec

DROP VIEW gen_stay;

SELECT create_sql FROM gen_ddl ORDER BY phase, name
\gexec
COMMIT;

VACUUM ANALYZE hotel, point_of_interest, hotel_poi, room, amenity, room_amenity,
	room_availability, guest, guest_email, guest_phone, guest_address, reservation;

-- row counts (plain SQL: query_to_xml() would need a server built with libxml)
SELECT t AS "table", n AS "rows"
FROM (VALUES
	(1, 'hotel', (SELECT count(*) FROM hotel_rel.hotel)),
	(2, 'point_of_interest', (SELECT count(*) FROM hotel_rel.point_of_interest)),
	(3, 'hotel_poi', (SELECT count(*) FROM hotel_rel.hotel_poi)),
	(4, 'room', (SELECT count(*) FROM hotel_rel.room)),
	(5, 'amenity', (SELECT count(*) FROM hotel_rel.amenity)),
	(6, 'room_amenity', (SELECT count(*) FROM hotel_rel.room_amenity)),
	(7, 'room_availability', (SELECT count(*) FROM hotel_rel.room_availability)),
	(8, 'guest', (SELECT count(*) FROM hotel_rel.guest)),
	(9, 'guest_email', (SELECT count(*) FROM hotel_rel.guest_email)),
	(10, 'guest_phone', (SELECT count(*) FROM hotel_rel.guest_phone)),
	(11, 'guest_address', (SELECT count(*) FROM hotel_rel.guest_address)),
	(12, 'reservation', (SELECT count(*) FROM hotel_rel.reservation))) AS u (ord, t, n)
ORDER BY ord;

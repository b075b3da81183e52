--
-- workload.sql
--	  The nine application queries of the hotel example (Q1-Q9 of the
--	  Cassandra documentation) as plain SQL over schema hotel_rel.
--
-- Run in psql (every parameter given with -v; the file prints nine results):
--	  psql -X -d DB -v poi_name=WestWorld -v hotel_id=AZ123 \
--		   -v start_date=2026-01-01 -v end_date=2026-01-08 -v room_number=101 \
--		   -v confirm_number=0LONMD -v last_name=Smith \
--		   -v guest_id=1e4b4cef-a8d3-4c9a-8928-9892cdb7d790 \
--		   -f migrations/hotel/workload.sql
--	  (values that exist in generate.sql's default data; check.sql runs every
--	  query with values it picks from the data and checks this format)
--
-- FORMAT (stable; a program may split this file without a SQL parser):
--	* Everything before the first line starting with "-- name:" is this header.
--	* A block is: metadata lines "-- <key>: <value>" (first key is "name";
--	  then "description", "params", "target"; unknown keys are to be ignored),
--	  then exactly one SQL statement.  Blocks are separated by one blank line.
--	* name:		  Q<n>_<words>, unique, [A-Za-z0-9_].
--	  description: one line.
--	  params:	  comma-separated "<name> <PostgreSQL type>" pairs in order of
--				  first use, or "none".
--	  target:	  the table serving this query in the published Cassandra
--				  model (keyspace.table), for comparison only.
--	  published_key: optional; that table's primary key as published, in
--				  CQL syntax ((partition key), clustering...), for comparison
--				  only (cqlbridge plan checks it against the data, MR5).
--	* The statement starts at the first line after the metadata, ends at the
--	  first line whose last character is ";", and contains no other ";",
--	  no comment lines and no blank lines.
--	* A parameter appears only as :'<name>' (psql's quoted-literal
--	  interpolation), followed by an explicit cast when its type is not text.
--	  A program replaces each :'<name>' by $k (k = position in params) and
--	  prepares the statement with the declared types; psql substitutes the
--	  -v value as a quoted literal.  The character sequence :' occurs
--	  nowhere else.
--	* Tables are schema-qualified (hotel_rel.), so no search_path is needed.
--
-- CONVENTIONS:
--	* Each query returns the rows of its target table: the key columns it
--	  searches by and the columns the target stores, under the target's
--	  column names (poi_name, hotel_id, amenity_name, guest_last_name, ...).
--	* Address parts stay flat columns (street ... country); the bridge
--	  assembles the "address" UDT.  Where a target column is a collection
--	  the query aggregates, in cql_fdw's representation of that CQL type:
--	  set<text> -> text[] sorted and distinct, list<text> -> text[] in list
--	  order, map<text, frozen<address>> -> jsonb {kind: {street: ...}}.
--	  An empty collection is NULL, as in Cassandra.
--	* Deterministic: every query that can return more than one row has an
--	  ORDER BY on the target's clustering order, made total by the source key
--	  where the data alone keeps it unique (Q1, Q3: p.id; POI names are unique
--	  per hotel in the generated data, which check.sql verifies).
--	* Date ranges are half-open: start inclusive, end exclusive.
--
-- IDENTIFICATION
--	  migrations/hotel/workload.sql
--

-- name: Q1_hotels_by_poi
-- description: hotels near a given point of interest (by name; several POIs may share it)
-- params: poi_name text
-- target: hotel.hotels_by_poi
-- published_key: ((poi_name), hotel_id)
SELECT p.name AS poi_name, h.id AS hotel_id, h.name, h.phone,
       h.street, h.city, h.state_or_province, h.postal_code, h.country
FROM hotel_rel.point_of_interest p
JOIN hotel_rel.hotel_poi hp ON hp.poi_id = p.id
JOIN hotel_rel.hotel h ON h.id = hp.hotel_id
WHERE p.name = :'poi_name'
ORDER BY h.id, p.id;

-- name: Q2_hotel_by_id
-- description: information about a given hotel, with the names of the points of interest near it
-- params: hotel_id text
-- target: hotel.hotels
-- published_key: ((id))
SELECT h.id, h.name, h.phone,
       h.street, h.city, h.state_or_province, h.postal_code, h.country,
       (SELECT array_agg(DISTINCT p.name ORDER BY p.name)
        FROM hotel_rel.hotel_poi hp
        JOIN hotel_rel.point_of_interest p ON p.id = hp.poi_id
        WHERE hp.hotel_id = h.id) AS pois
FROM hotel_rel.hotel h
WHERE h.id = :'hotel_id';

-- name: Q3_pois_by_hotel
-- description: points of interest near a given hotel
-- params: hotel_id text
-- target: hotel.pois_by_hotel
-- published_key: ((hotel_id), poi_name)
SELECT hp.hotel_id, p.name AS poi_name, p.description
FROM hotel_rel.hotel_poi hp
JOIN hotel_rel.point_of_interest p ON p.id = hp.poi_id
WHERE hp.hotel_id = :'hotel_id'
ORDER BY p.name, p.id;

-- name: Q4_available_rooms_by_hotel_date
-- description: rooms of a hotel free on each night of [start_date, end_date), by night then room
-- params: hotel_id text, start_date date, end_date date
-- target: hotel.available_rooms_by_hotel_date
-- published_key: ((hotel_id), date, room_number)
SELECT ra.hotel_id, ra.date, ra.room_number, ra.is_available
FROM hotel_rel.room_availability ra
WHERE ra.hotel_id = :'hotel_id'
  AND ra.date >= :'start_date'::date
  AND ra.date < :'end_date'::date
  AND ra.is_available
ORDER BY ra.date, ra.room_number;

-- name: Q5_amenities_by_room
-- description: nightly rate and amenities of a room (one row per amenity; a room without amenities gives one row with NULL amenity)
-- params: hotel_id text, room_number smallint
-- target: hotel.amenities_by_room
-- published_key: ((hotel_id, room_number), amenity_name)
SELECT r.hotel_id, r.room_number, r.rate, a.name AS amenity_name, a.description
FROM hotel_rel.room r
LEFT JOIN hotel_rel.room_amenity ra ON ra.hotel_id = r.hotel_id AND ra.room_number = r.room_number
LEFT JOIN hotel_rel.amenity a ON a.id = ra.amenity_id
WHERE r.hotel_id = :'hotel_id'
  AND r.room_number = :'room_number'::smallint
ORDER BY a.name;

-- name: Q6_reservation_by_confirmation
-- description: a reservation by its confirmation number
-- params: confirm_number text
-- target: reservation.reservations_by_confirmation
-- published_key: ((confirm_number))
SELECT r.confirm_number, r.hotel_id, r.start_date, r.end_date, r.room_number, r.guest_id
FROM hotel_rel.reservation r
WHERE r.confirm_number = :'confirm_number';

-- name: Q7_reservations_by_hotel_date
-- description: reservations of a hotel starting on a given date, by room
-- params: hotel_id text, start_date date
-- target: reservation.reservations_by_hotel_date
-- published_key: ((hotel_id, start_date), room_number)
SELECT r.hotel_id, r.start_date, r.room_number, r.end_date, r.confirm_number, r.guest_id
FROM hotel_rel.reservation r
WHERE r.hotel_id = :'hotel_id'
  AND r.start_date = :'start_date'::date
ORDER BY r.room_number;

-- name: Q8_reservations_by_guest
-- description: reservations of every guest with a given last name, by hotel, start date and room
-- params: last_name text
-- target: reservation.reservations_by_guest
-- published_key: ((guest_last_name), hotel_id)
SELECT g.last_name AS guest_last_name, r.hotel_id, r.start_date, r.end_date,
       r.room_number, r.confirm_number, r.guest_id
FROM hotel_rel.guest g
JOIN hotel_rel.reservation r ON r.guest_id = g.guest_id
WHERE g.last_name = :'last_name'
ORDER BY r.hotel_id, r.start_date, r.room_number;

-- name: Q9_guest_by_id
-- description: a guest with emails (set), phone numbers (list) and addresses (map kind -> address)
-- params: guest_id uuid
-- target: reservation.guests
-- published_key: ((guest_id))
SELECT g.guest_id, g.first_name, g.last_name, g.title,
       (SELECT array_agg(e.email ORDER BY e.email)
        FROM hotel_rel.guest_email e
        WHERE e.guest_id = g.guest_id) AS emails,
       (SELECT array_agg(ph.phone ORDER BY ph.position)
        FROM hotel_rel.guest_phone ph
        WHERE ph.guest_id = g.guest_id) AS phone_numbers,
       (SELECT jsonb_object_agg(a.kind, jsonb_build_object(
                   'street', a.street, 'city', a.city,
                   'state_or_province', a.state_or_province,
                   'postal_code', a.postal_code, 'country', a.country))
        FROM hotel_rel.guest_address a
        WHERE a.guest_id = g.guest_id) AS addresses
FROM hotel_rel.guest g
WHERE g.guest_id = :'guest_id'::uuid;

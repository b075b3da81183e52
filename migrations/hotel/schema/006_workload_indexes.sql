--
-- 006_workload_indexes.sql
--	  Secondary indexes so the relational side answers Q1-Q9 by index too.
--
-- Primary keys and unique constraints of 001-005 already serve:
--	  Q2 hotel (id); Q3 hotel_poi (hotel_id, ...); Q4 room_availability
--	  (hotel_id, date, room_number); Q5 room (hotel_id, room_number) and
--	  room_amenity (hotel_id, room_number, ...); Q6 reservation
--	  (confirm_number); Q7 reservation (hotel_id, start_date, room_number);
--	  Q9 guest (guest_id) and the child tables (guest_id, ...).
-- What is missing are the reverse directions by a natural attribute:
--	  Q1 poi name -> poi -> hotels; Q8 last name -> guests -> reservations.
--
-- For a large load, apply this file after generate.sql: building an index
-- once is cheaper than maintaining it row by row.
--
-- IDENTIFICATION
--	  migrations/hotel/schema/006_workload_indexes.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS hotel_rel;
SET search_path = hotel_rel;

-- Q1: POI by name, then hotels by POI
CREATE INDEX IF NOT EXISTS point_of_interest_name_idx ON point_of_interest (name);
CREATE INDEX IF NOT EXISTS hotel_poi_poi_id_idx ON hotel_poi (poi_id, hotel_id);

-- Q8: guests by last name, then their reservations (also the FK's index)
CREATE INDEX IF NOT EXISTS guest_last_name_idx ON guest (last_name);
CREATE INDEX IF NOT EXISTS reservation_guest_id_idx ON reservation (guest_id);
COMMIT;

--
-- 003_room_availability.sql
--	  One row per room and night: is the room free that night?
--
-- The primary key is the set {hotel_id, room_number, date}; its column order
-- (hotel_id, date, room_number) is chosen for Q4 (one hotel, a date range,
-- ordered by date then room), so the key index serves Q4 directly and the
-- largest table of the data set needs no second index.  The generator
-- inserts each hotel's rows in that order, so Q4 also reads few heap pages.
--
-- The column is named "date" like the target's clustering column (legal in
-- PostgreSQL without quotes).
--
-- IDENTIFICATION
--	  migrations/hotel/schema/003_room_availability.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS hotel_rel;
SET search_path = hotel_rel;

CREATE TABLE IF NOT EXISTS room_availability (
	hotel_id			text NOT NULL,
	room_number			smallint NOT NULL,
	date				date NOT NULL,
	is_available		boolean NOT NULL,
	PRIMARY KEY (hotel_id, date, room_number),
	FOREIGN KEY (hotel_id, room_number) REFERENCES room (hotel_id, room_number) ON DELETE CASCADE
);
COMMENT ON TABLE room_availability IS 'Per room and night: false when a reservation covers the night (start_date <= date < end_date).';
COMMIT;

--
-- 005_reservation.sql
--	  Reservations: a guest books one room of a hotel for [start_date, end_date).
--
-- end_date is the check-out day (exclusive), so nights = end_date - start_date
-- (the "nights" column of one published diagram is derived, not stored).
--
-- UNIQUE (hotel_id, start_date, room_number): a room cannot have two
-- reservations starting the same day.  It is the key of the target
-- reservations_by_hotel_date ((hotel_id, start_date), room_number), so that
-- target is provably MR5-safe from the constraints alone; its index also
-- serves Q7.  The stronger rule "stays of one room never overlap" would need
-- an exclusion constraint (btree_gist); the generator guarantees it and
-- check.sql verifies it, to keep this schema free of extensions.
--
-- IDENTIFICATION
--	  migrations/hotel/schema/005_reservation.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS hotel_rel;
SET search_path = hotel_rel;

CREATE TABLE IF NOT EXISTS reservation (
	confirm_number		text PRIMARY KEY,
	guest_id			uuid NOT NULL REFERENCES guest (guest_id),
	hotel_id			text NOT NULL,
	room_number			smallint NOT NULL,
	start_date			date NOT NULL,
	end_date			date NOT NULL,
	CHECK (end_date > start_date),
	UNIQUE (hotel_id, start_date, room_number),
	FOREIGN KEY (hotel_id, room_number) REFERENCES room (hotel_id, room_number)
);
COMMENT ON TABLE reservation IS 'A stay in one room from start_date (check-in) to end_date (check-out, exclusive).';
COMMIT;

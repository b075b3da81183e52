--
-- 002_room_amenity.sql
--	  Rooms of a hotel, the amenity catalogue and the m:n room-amenity link.
--
-- The docs' Room has a surrogate RoomID; here a room is identified by
-- (hotel_id, room_number) as in every published Cassandra table, so no
-- target column needs a lookup through a surrogate.  Rate lives on the room
-- (the docs' conceptual model puts it on availability, the query Q5 asks for
-- it per room).  Amenity gets the description the target amenities_by_room
-- needs and the docs' Amenity table lacks.
--
-- IDENTIFICATION
--	  migrations/hotel/schema/002_room_amenity.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS hotel_rel;
SET search_path = hotel_rel;

CREATE TABLE IF NOT EXISTS room (
	hotel_id			text NOT NULL REFERENCES hotel (id) ON DELETE CASCADE,
	room_number			smallint NOT NULL CHECK (room_number > 0),
	rate				numeric(8,2) NOT NULL CHECK (rate > 0),
	PRIMARY KEY (hotel_id, room_number)
);
COMMENT ON TABLE room IS 'A room of a hotel; rate is the nightly rate.';

-- Amenity names are unique: this is what makes amenities_by_room
-- ((hotel_id, room_number), amenity_name) a safe key (MR5) without a
-- look at the data.
CREATE TABLE IF NOT EXISTS amenity (
	id					smallint PRIMARY KEY,
	name				text NOT NULL UNIQUE,
	description			text NOT NULL
);
COMMENT ON TABLE amenity IS 'Amenity catalogue; name is unique.';

CREATE TABLE IF NOT EXISTS room_amenity (
	hotel_id			text NOT NULL,
	room_number			smallint NOT NULL,
	amenity_id			smallint NOT NULL REFERENCES amenity (id),
	PRIMARY KEY (hotel_id, room_number, amenity_id),
	FOREIGN KEY (hotel_id, room_number) REFERENCES room (hotel_id, room_number) ON DELETE CASCADE
);
COMMENT ON TABLE room_amenity IS 'm:n: the room has the amenity (RoomToAmenity in the docs).';
COMMIT;

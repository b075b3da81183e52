--
-- 001_hotel_poi.sql
--	  Hotels, points of interest and the m:n "near" relationship between them.
--
-- Relational side of the hotel example of the Cassandra documentation's data
-- modeling chapter (tables Hotel, PointOfInterest, HotelToPOI), extended so
-- that every column of the published Cassandra tables has a source: the
-- hotel address is split into the parts of the "address" UDT.
--
-- Every migration file of this directory is self-contained: it creates the
-- schema if needed and sets search_path itself, so a runner may apply the
-- files one by one, in name order, each in its own session.  IF NOT EXISTS
-- makes a second run a no-op (it does not alter existing tables).
--
-- IDENTIFICATION
--	  migrations/hotel/schema/001_hotel_poi.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS hotel_rel;
SET search_path = hotel_rel;

CREATE TABLE IF NOT EXISTS hotel (
	id					text PRIMARY KEY CHECK (id ~ '^[A-Z]{2}[0-9]{3,}$'),
	name				text NOT NULL,
	phone				text NOT NULL,
	street				text NOT NULL,
	city				text NOT NULL,
	state_or_province	text NOT NULL,
	postal_code			text NOT NULL,
	country				text NOT NULL
);
COMMENT ON TABLE hotel IS 'A hotel; id is a short code like AZ123 (state or province + number). Source of hotels, hotels_by_poi.';
COMMENT ON COLUMN hotel.street IS 'Address part; the Cassandra side stores the five parts as a frozen<address> UDT.';

-- POI names are natural attributes, NOT unique: generic names such as
-- "Convention Center" or "Union Station" exist in several cities and are
-- different POIs.  The docs give PointOfInterest a surrogate POIID for the
-- same reason.  Queries still select by name (=), so the Cassandra tables
-- keyed by poi_name merge same-named POIs; see README.md, trap 3.
CREATE TABLE IF NOT EXISTS point_of_interest (
	id					integer PRIMARY KEY,
	name				text NOT NULL,
	description			text NOT NULL
);
COMMENT ON TABLE point_of_interest IS 'A point of interest. name is not unique across cities (trap 3); within one city it is.';

CREATE TABLE IF NOT EXISTS hotel_poi (
	hotel_id			text NOT NULL REFERENCES hotel (id) ON DELETE CASCADE,
	poi_id				integer NOT NULL REFERENCES point_of_interest (id) ON DELETE CASCADE,
	PRIMARY KEY (hotel_id, poi_id)
);
COMMENT ON TABLE hotel_poi IS 'm:n: the hotel is near the point of interest (HotelToPOI in the docs).';
COMMIT;

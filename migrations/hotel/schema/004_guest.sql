--
-- 004_guest.sql
--	  Guests and their emails, phone numbers and addresses.
--
-- The docs' Guest has only Name and Email; the target reservation.guests has
-- first_name, last_name, title, emails set<text>, phone_numbers list<text>
-- and addresses map<text, frozen<address>>.  Each collection becomes a child
-- table whose key says which collection semantics it has:
--	  guest_email	(guest_id, email)		-- a set: no order, no duplicates
--	  guest_phone	(guest_id, position)	-- a list: ordered by position
--	  guest_address (guest_id, kind)		-- a map: kind ('home', 'work') -> address
--
-- IDENTIFICATION
--	  migrations/hotel/schema/004_guest.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS hotel_rel;
SET search_path = hotel_rel;

CREATE TABLE IF NOT EXISTS guest (
	guest_id			uuid PRIMARY KEY,
	first_name			text NOT NULL,
	last_name			text NOT NULL,
	title				text			-- NULL for some guests: not everyone gives one
);
COMMENT ON TABLE guest IS 'A guest. last_name is not unique (trap 1/3: reservations_by_guest keys on it).';
COMMENT ON COLUMN guest.title IS 'Mr., Ms., Mrs., Dr., Mx. or NULL.';

CREATE TABLE IF NOT EXISTS guest_email (
	guest_id			uuid NOT NULL REFERENCES guest (guest_id) ON DELETE CASCADE,
	email				text NOT NULL CHECK (email LIKE '%_@_%'),
	PRIMARY KEY (guest_id, email)
);
COMMENT ON TABLE guest_email IS 'Set of emails of a guest (0 or more).';

CREATE TABLE IF NOT EXISTS guest_phone (
	guest_id			uuid NOT NULL REFERENCES guest (guest_id) ON DELETE CASCADE,
	position			integer NOT NULL CHECK (position > 0),
	phone				text NOT NULL,
	PRIMARY KEY (guest_id, position)
);
COMMENT ON TABLE guest_phone IS 'Ordered list of phone numbers of a guest; position 1 is the first.';

CREATE TABLE IF NOT EXISTS guest_address (
	guest_id			uuid NOT NULL REFERENCES guest (guest_id) ON DELETE CASCADE,
	kind				text NOT NULL,
	street				text NOT NULL,
	city				text NOT NULL,
	state_or_province	text NOT NULL,
	postal_code			text NOT NULL,
	country				text NOT NULL,
	PRIMARY KEY (guest_id, kind)
);
COMMENT ON TABLE guest_address IS 'Map kind -> address of a guest (kind is e.g. home or work).';
COMMIT;

-- 002_foreign_tables.sql: foreign tables of keyspace hotel and the source views
-- (the target rows computed from the relational tables, in CQL shape, then lineage columns).
-- Run in one transaction; re-runnable.
-- Create the schemas, or check that they belong to the role running this.
DO $cqlbridge$
DECLARE
	s text;
	owner name;
BEGIN
	FOREACH s IN ARRAY ARRAY['cqlbridge', 'cqlbridge_hotel', 'hotel_cql']::text[] LOOP
		SELECT pg_catalog.pg_get_userbyid(n.nspowner) INTO owner
			FROM pg_catalog.pg_namespace n WHERE n.nspname = s;
		IF NOT FOUND THEN
			EXECUTE pg_catalog.format('CREATE SCHEMA %I', s);
		ELSIF owner <> CURRENT_USER THEN
			RAISE EXCEPTION 'schema % belongs to role %, not to %', pg_catalog.quote_ident(s), owner, CURRENT_USER
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'The owner of a schema can drop and replace the objects in it; cqlbridge keeps its objects in schemas of the role that runs it.',
					  HINT = pg_catalog.format('Run cqlbridge as role %I, or take the schema over: ALTER SCHEMA %I OWNER TO %I.', owner, s, CURRENT_USER);
		END IF;
	END LOOP;
END
$cqlbridge$;

DROP FOREIGN TABLE IF EXISTS hotel_cql.hotels_by_poi_name;
CREATE FOREIGN TABLE hotel_cql.hotels_by_poi_name (
    poi_name text OPTIONS (column_name 'poi_name', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    hotel_id text OPTIONS (column_name 'hotel_id', kind 'clustering', position '0', clustering_order 'asc', cql_type 'text') NOT NULL,
    point_of_interest_id integer OPTIONS (column_name 'point_of_interest_id', kind 'clustering', position '1', clustering_order 'asc', cql_type 'int') NOT NULL,
    name text OPTIONS (column_name 'name', kind 'regular', cql_type 'text'),
    phone text OPTIONS (column_name 'phone', kind 'regular', cql_type 'text'),
    address jsonb OPTIONS (column_name 'address', kind 'regular', cql_type 'frozen<address>')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'hotels_by_poi_name');
DROP VIEW IF EXISTS cqlbridge_hotel.hotels_by_poi_name_src;
CREATE VIEW cqlbridge_hotel.hotels_by_poi_name_src WITH (security_invoker = true) AS
SELECT q.poi_name, q.hotel_id, q.lin_p_id AS point_of_interest_id, q.name, q.phone, jsonb_build_object('street', q.street, 'city', q.city, 'state_or_province', q.state_or_province, 'postal_code', q.postal_code, 'country', q.country) AS address, q.lin_p_id, q.lin_hp_hotel_id, q.lin_hp_poi_id, q.lin_h_id
FROM ( SELECT p.name AS poi_name,
    h.id AS hotel_id,
    h.name,
    h.phone,
    h.street,
    h.city,
    h.state_or_province,
    h.postal_code,
    h.country,
    p.id AS lin_p_id,
    hp.hotel_id AS lin_hp_hotel_id,
    hp.poi_id AS lin_hp_poi_id,
    h.id AS lin_h_id
   FROM ((hotel_rel.point_of_interest p
     JOIN hotel_rel.hotel_poi hp ON ((hp.poi_id = p.id)))
     JOIN hotel_rel.hotel h ON ((h.id = hp.hotel_id)))) q;

DROP FOREIGN TABLE IF EXISTS hotel_cql.hotels;
CREATE FOREIGN TABLE hotel_cql.hotels (
    id text OPTIONS (column_name 'id', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    name text OPTIONS (column_name 'name', kind 'regular', cql_type 'text'),
    phone text OPTIONS (column_name 'phone', kind 'regular', cql_type 'text'),
    address jsonb OPTIONS (column_name 'address', kind 'regular', cql_type 'frozen<address>'),
    pois text[] OPTIONS (column_name 'pois', kind 'regular', cql_type 'set<text>')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'hotels');
DROP VIEW IF EXISTS cqlbridge_hotel.hotels_src;
CREATE VIEW cqlbridge_hotel.hotels_src WITH (security_invoker = true) AS
SELECT q.id, q.name, q.phone, jsonb_build_object('street', q.street, 'city', q.city, 'state_or_province', q.state_or_province, 'postal_code', q.postal_code, 'country', q.country) AS address, q.pois, q.lin_h_id
FROM ( SELECT id,
    name,
    phone,
    street,
    city,
    state_or_province,
    postal_code,
    country,
    ( SELECT array_agg(DISTINCT p.name ORDER BY p.name) AS array_agg
           FROM (hotel_rel.hotel_poi hp
             JOIN hotel_rel.point_of_interest p ON ((p.id = hp.poi_id)))
          WHERE (hp.hotel_id = h.id)) AS pois,
    id AS lin_h_id
   FROM hotel_rel.hotel h) q;

DROP FOREIGN TABLE IF EXISTS hotel_cql.points_of_interest_by_hotel_id;
CREATE FOREIGN TABLE hotel_cql.points_of_interest_by_hotel_id (
    hotel_id text OPTIONS (column_name 'hotel_id', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    poi_name text OPTIONS (column_name 'poi_name', kind 'clustering', position '0', clustering_order 'asc', cql_type 'text') NOT NULL,
    point_of_interest_id integer OPTIONS (column_name 'point_of_interest_id', kind 'clustering', position '1', clustering_order 'asc', cql_type 'int') NOT NULL,
    description text OPTIONS (column_name 'description', kind 'regular', cql_type 'text')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'points_of_interest_by_hotel_id');
DROP VIEW IF EXISTS cqlbridge_hotel.points_of_interest_by_hotel_id_src;
CREATE VIEW cqlbridge_hotel.points_of_interest_by_hotel_id_src WITH (security_invoker = true) AS
SELECT q.hotel_id, q.poi_name, q.lin_p_id AS point_of_interest_id, q.description, q.lin_hp_hotel_id, q.lin_hp_poi_id, q.lin_p_id
FROM ( SELECT hp.hotel_id,
    p.name AS poi_name,
    p.description,
    hp.hotel_id AS lin_hp_hotel_id,
    hp.poi_id AS lin_hp_poi_id,
    p.id AS lin_p_id
   FROM (hotel_rel.hotel_poi hp
     JOIN hotel_rel.point_of_interest p ON ((p.id = hp.poi_id)))) q;

DROP FOREIGN TABLE IF EXISTS hotel_cql.room_availabilities_by_hotel_id;
CREATE FOREIGN TABLE hotel_cql.room_availabilities_by_hotel_id (
    hotel_id text OPTIONS (column_name 'hotel_id', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    date date OPTIONS (column_name 'date', kind 'clustering', position '0', clustering_order 'asc', cql_type 'date') NOT NULL,
    room_number smallint OPTIONS (column_name 'room_number', kind 'clustering', position '1', clustering_order 'asc', cql_type 'smallint') NOT NULL,
    is_available boolean OPTIONS (column_name 'is_available', kind 'regular', cql_type 'boolean')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'room_availabilities_by_hotel_id');
DROP VIEW IF EXISTS cqlbridge_hotel.room_availabilities_by_hotel_id_src;
CREATE VIEW cqlbridge_hotel.room_availabilities_by_hotel_id_src WITH (security_invoker = true) AS
SELECT q.hotel_id, q.date, q.room_number, q.is_available, q.lin_ra_hotel_id, q.lin_ra_date, q.lin_ra_room_number
FROM ( SELECT hotel_id,
    date,
    room_number,
    is_available,
    hotel_id AS lin_ra_hotel_id,
    date AS lin_ra_date,
    room_number AS lin_ra_room_number
   FROM hotel_rel.room_availability ra
  WHERE is_available) q;

DROP FOREIGN TABLE IF EXISTS hotel_cql.rooms_by_hotel_id_room_number;
CREATE FOREIGN TABLE hotel_cql.rooms_by_hotel_id_room_number (
    hotel_id text OPTIONS (column_name 'hotel_id', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    room_number smallint OPTIONS (column_name 'room_number', kind 'partition_key', position '1', cql_type 'smallint') NOT NULL,
    amenity_name text OPTIONS (column_name 'amenity_name', kind 'clustering', position '0', clustering_order 'asc', cql_type 'text') NOT NULL,
    rate numeric OPTIONS (column_name 'rate', kind 'static', cql_type 'decimal'),
    description text OPTIONS (column_name 'description', kind 'regular', cql_type 'text')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'rooms_by_hotel_id_room_number');
DROP VIEW IF EXISTS cqlbridge_hotel.rooms_by_hotel_id_room_number_src;
CREATE VIEW cqlbridge_hotel.rooms_by_hotel_id_room_number_src WITH (security_invoker = true) AS
SELECT q.hotel_id, q.room_number, q.amenity_name, q.rate, q.description, q.lin_r_hotel_id, q.lin_r_room_number, q.lin_ra_hotel_id, q.lin_ra_room_number, q.lin_ra_amenity_id, q.lin_a_id
FROM ( SELECT r.hotel_id,
    r.room_number,
    r.rate,
    a.name AS amenity_name,
    a.description,
    r.hotel_id AS lin_r_hotel_id,
    r.room_number AS lin_r_room_number,
    ra.hotel_id AS lin_ra_hotel_id,
    ra.room_number AS lin_ra_room_number,
    ra.amenity_id AS lin_ra_amenity_id,
    a.id AS lin_a_id
   FROM ((hotel_rel.room r
     LEFT JOIN hotel_rel.room_amenity ra ON (((ra.hotel_id = r.hotel_id) AND (ra.room_number = r.room_number))))
     LEFT JOIN hotel_rel.amenity a ON ((a.id = ra.amenity_id)))) q
WHERE q.amenity_name IS NOT NULL;

DROP FOREIGN TABLE IF EXISTS hotel_cql.reservations;
CREATE FOREIGN TABLE hotel_cql.reservations (
    confirm_number text OPTIONS (column_name 'confirm_number', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    hotel_id text OPTIONS (column_name 'hotel_id', kind 'regular', cql_type 'text'),
    start_date date OPTIONS (column_name 'start_date', kind 'regular', cql_type 'date'),
    end_date date OPTIONS (column_name 'end_date', kind 'regular', cql_type 'date'),
    room_number smallint OPTIONS (column_name 'room_number', kind 'regular', cql_type 'smallint'),
    guest_id uuid OPTIONS (column_name 'guest_id', kind 'regular', cql_type 'uuid')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'reservations');
DROP VIEW IF EXISTS cqlbridge_hotel.reservations_src;
CREATE VIEW cqlbridge_hotel.reservations_src WITH (security_invoker = true) AS
SELECT q.confirm_number, q.hotel_id, q.start_date, q.end_date, q.room_number, q.guest_id, q.lin_r_confirm_number
FROM ( SELECT confirm_number,
    hotel_id,
    start_date,
    end_date,
    room_number,
    guest_id,
    confirm_number AS lin_r_confirm_number
   FROM hotel_rel.reservation r) q;

DROP FOREIGN TABLE IF EXISTS hotel_cql.reservations_by_hotel_id_start_date;
CREATE FOREIGN TABLE hotel_cql.reservations_by_hotel_id_start_date (
    hotel_id text OPTIONS (column_name 'hotel_id', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    start_date date OPTIONS (column_name 'start_date', kind 'partition_key', position '1', cql_type 'date') NOT NULL,
    room_number smallint OPTIONS (column_name 'room_number', kind 'clustering', position '0', clustering_order 'asc', cql_type 'smallint') NOT NULL,
    end_date date OPTIONS (column_name 'end_date', kind 'regular', cql_type 'date'),
    confirm_number text OPTIONS (column_name 'confirm_number', kind 'regular', cql_type 'text'),
    guest_id uuid OPTIONS (column_name 'guest_id', kind 'regular', cql_type 'uuid')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'reservations_by_hotel_id_start_date');
DROP VIEW IF EXISTS cqlbridge_hotel.reservations_by_hotel_id_start_date_src;
CREATE VIEW cqlbridge_hotel.reservations_by_hotel_id_start_date_src WITH (security_invoker = true) AS
SELECT q.hotel_id, q.start_date, q.room_number, q.end_date, q.confirm_number, q.guest_id, q.lin_r_confirm_number
FROM ( SELECT hotel_id,
    start_date,
    room_number,
    end_date,
    confirm_number,
    guest_id,
    confirm_number AS lin_r_confirm_number
   FROM hotel_rel.reservation r) q;

DROP FOREIGN TABLE IF EXISTS hotel_cql.reservations_by_guest_last_name;
CREATE FOREIGN TABLE hotel_cql.reservations_by_guest_last_name (
    guest_last_name text OPTIONS (column_name 'guest_last_name', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    hotel_id text OPTIONS (column_name 'hotel_id', kind 'clustering', position '0', clustering_order 'asc', cql_type 'text') NOT NULL,
    start_date date OPTIONS (column_name 'start_date', kind 'clustering', position '1', clustering_order 'asc', cql_type 'date') NOT NULL,
    room_number smallint OPTIONS (column_name 'room_number', kind 'clustering', position '2', clustering_order 'asc', cql_type 'smallint') NOT NULL,
    end_date date OPTIONS (column_name 'end_date', kind 'regular', cql_type 'date'),
    confirm_number text OPTIONS (column_name 'confirm_number', kind 'regular', cql_type 'text'),
    guest_id uuid OPTIONS (column_name 'guest_id', kind 'regular', cql_type 'uuid')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'reservations_by_guest_last_name');
DROP VIEW IF EXISTS cqlbridge_hotel.reservations_by_guest_last_name_src;
CREATE VIEW cqlbridge_hotel.reservations_by_guest_last_name_src WITH (security_invoker = true) AS
SELECT q.guest_last_name, q.hotel_id, q.start_date, q.room_number, q.end_date, q.confirm_number, q.guest_id, q.lin_g_guest_id, q.lin_r_confirm_number
FROM ( SELECT g.last_name AS guest_last_name,
    r.hotel_id,
    r.start_date,
    r.end_date,
    r.room_number,
    r.confirm_number,
    r.guest_id,
    g.guest_id AS lin_g_guest_id,
    r.confirm_number AS lin_r_confirm_number
   FROM (hotel_rel.guest g
     JOIN hotel_rel.reservation r ON ((r.guest_id = g.guest_id)))) q;

DROP FOREIGN TABLE IF EXISTS hotel_cql.guests;
CREATE FOREIGN TABLE hotel_cql.guests (
    guest_id uuid OPTIONS (column_name 'guest_id', kind 'partition_key', position '0', cql_type 'uuid') NOT NULL,
    first_name text OPTIONS (column_name 'first_name', kind 'regular', cql_type 'text'),
    last_name text OPTIONS (column_name 'last_name', kind 'regular', cql_type 'text'),
    title text OPTIONS (column_name 'title', kind 'regular', cql_type 'text'),
    emails text[] OPTIONS (column_name 'emails', kind 'regular', cql_type 'set<text>'),
    phone_numbers text[] OPTIONS (column_name 'phone_numbers', kind 'regular', cql_type 'list<text>'),
    addresses jsonb OPTIONS (column_name 'addresses', kind 'regular', cql_type 'map<text, frozen<address>>')
) SERVER cqlbridge OPTIONS (keyspace 'hotel', "table" 'guests');
DROP VIEW IF EXISTS cqlbridge_hotel.guests_src;
CREATE VIEW cqlbridge_hotel.guests_src WITH (security_invoker = true) AS
SELECT q.guest_id, q.first_name, q.last_name, q.title, q.emails, q.phone_numbers, q.addresses, q.lin_g_guest_id
FROM ( SELECT guest_id,
    first_name,
    last_name,
    title,
    ( SELECT array_agg(e.email ORDER BY e.email) AS array_agg
           FROM hotel_rel.guest_email e
          WHERE (e.guest_id = g.guest_id)) AS emails,
    ( SELECT array_agg(ph.phone ORDER BY ph."position") AS array_agg
           FROM hotel_rel.guest_phone ph
          WHERE (ph.guest_id = g.guest_id)) AS phone_numbers,
    ( SELECT jsonb_object_agg(a.kind, jsonb_build_object('street', a.street, 'city', a.city, 'state_or_province', a.state_or_province, 'postal_code', a.postal_code, 'country', a.country)) AS jsonb_object_agg
           FROM hotel_rel.guest_address a
          WHERE (a.guest_id = g.guest_id)) AS addresses,
    guest_id AS lin_g_guest_id
   FROM hotel_rel.guest g) q;

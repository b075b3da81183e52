-- 004_verify.sql: per workload query, parameter samples from the source view and the searched relation,
-- the original query (source) and the same question asked of the foreign table (target).

-- query: Q1_hotels_by_poi
-- description: hotels near a given point of interest (by name; several POIs may share it)
-- params: poi_name text
-- table: hotel.hotels_by_poi_name
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.poi_name FROM (SELECT DISTINCT s.poi_name FROM cqlbridge_hotel.hotels_by_poi_name_src s) d ORDER BY md5(d.poi_name::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.poi_name FROM (SELECT DISTINCT r.name AS poi_name FROM hotel_rel.point_of_interest r WHERE r.name IS NOT NULL) d ORDER BY md5(d.poi_name::text) LIMIT $1 / 2) r;
-- source
SELECT p.name AS poi_name, h.id AS hotel_id, h.name, h.phone,
       h.street, h.city, h.state_or_province, h.postal_code, h.country
FROM hotel_rel.point_of_interest p
JOIN hotel_rel.hotel_poi hp ON hp.poi_id = p.id
JOIN hotel_rel.hotel h ON h.id = hp.hotel_id
WHERE p.name = $1
ORDER BY h.id, p.id;
-- target
SELECT t.poi_name, t.hotel_id, t.name, t.phone, (t.address->>'street')::text AS street, (t.address->>'city')::text AS city, (t.address->>'state_or_province')::text AS state_or_province, (t.address->>'postal_code')::text AS postal_code, (t.address->>'country')::text AS country
FROM hotel_cql.hotels_by_poi_name t
WHERE t.poi_name = $1
ORDER BY t.hotel_id, t.point_of_interest_id;

-- query: Q2_hotel_by_id
-- description: information about a given hotel, with the names of the points of interest near it
-- params: hotel_id text
-- table: hotel.hotels
-- ordered: false
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.id FROM (SELECT DISTINCT s.id FROM cqlbridge_hotel.hotels_src s) d ORDER BY md5(d.id::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.id FROM (SELECT DISTINCT r.id AS id FROM hotel_rel.hotel r WHERE r.id IS NOT NULL) d ORDER BY md5(d.id::text) LIMIT $1 / 2) r;
-- source
SELECT h.id, h.name, h.phone,
       h.street, h.city, h.state_or_province, h.postal_code, h.country,
       (SELECT array_agg(DISTINCT p.name ORDER BY p.name)
        FROM hotel_rel.hotel_poi hp
        JOIN hotel_rel.point_of_interest p ON p.id = hp.poi_id
        WHERE hp.hotel_id = h.id) AS pois
FROM hotel_rel.hotel h
WHERE h.id = $1;
-- target
SELECT t.id, t.name, t.phone, (t.address->>'street')::text AS street, (t.address->>'city')::text AS city, (t.address->>'state_or_province')::text AS state_or_province, (t.address->>'postal_code')::text AS postal_code, (t.address->>'country')::text AS country, CASE WHEN t.pois IS NULL THEN NULL ELSE ARRAY(SELECT e FROM unnest(t.pois) e ORDER BY e) END AS pois
FROM hotel_cql.hotels t
WHERE t.id = $1;

-- query: Q3_pois_by_hotel
-- description: points of interest near a given hotel
-- params: hotel_id text
-- table: hotel.points_of_interest_by_hotel_id
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.hotel_id FROM (SELECT DISTINCT s.hotel_id FROM cqlbridge_hotel.points_of_interest_by_hotel_id_src s) d ORDER BY md5(d.hotel_id::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.hotel_id FROM (SELECT DISTINCT r.hotel_id AS hotel_id FROM hotel_rel.hotel_poi r WHERE r.hotel_id IS NOT NULL) d ORDER BY md5(d.hotel_id::text) LIMIT $1 / 2) r;
-- source
SELECT hp.hotel_id, p.name AS poi_name, p.description
FROM hotel_rel.hotel_poi hp
JOIN hotel_rel.point_of_interest p ON p.id = hp.poi_id
WHERE hp.hotel_id = $1
ORDER BY p.name, p.id;
-- target
SELECT t.hotel_id, t.poi_name, t.description
FROM hotel_cql.points_of_interest_by_hotel_id t
WHERE t.hotel_id = $1
ORDER BY t.poi_name, t.point_of_interest_id;

-- query: Q4_available_rooms_by_hotel_date
-- description: rooms of a hotel free on each night of [start_date, end_date), by night then room
-- params: hotel_id text, start_date date, end_date date
-- table: hotel.room_availabilities_by_hotel_id
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.hotel_id, d.date, (d.date + 7) FROM (SELECT DISTINCT s.hotel_id, s.date FROM cqlbridge_hotel.room_availabilities_by_hotel_id_src s) d ORDER BY md5(d.hotel_id::text || '|' || d.date::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.hotel_id, d.date, (d.date + 7) FROM (SELECT DISTINCT r.hotel_id AS hotel_id, r.date AS date FROM hotel_rel.room_availability r WHERE r.hotel_id IS NOT NULL AND r.date IS NOT NULL) d ORDER BY md5(d.hotel_id::text || '|' || d.date::text) LIMIT $1 / 2) r;
-- source
SELECT ra.hotel_id, ra.date, ra.room_number, ra.is_available
FROM hotel_rel.room_availability ra
WHERE ra.hotel_id = $1
  AND ra.date >= $2::date
  AND ra.date < $3::date
  AND ra.is_available
ORDER BY ra.date, ra.room_number;
-- target
SELECT t.hotel_id, t.date, t.room_number, t.is_available
FROM hotel_cql.room_availabilities_by_hotel_id t
WHERE t.hotel_id = $1 AND t.date >= $2 AND t.date < $3
ORDER BY t.date, t.room_number;

-- query: Q5_amenities_by_room
-- description: nightly rate and amenities of a room (one row per amenity; a room without amenities gives one row with NULL amenity)
-- params: hotel_id text, room_number smallint
-- table: hotel.rooms_by_hotel_id_room_number
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.hotel_id, d.room_number FROM (SELECT DISTINCT s.hotel_id, s.room_number FROM cqlbridge_hotel.rooms_by_hotel_id_room_number_src s) d ORDER BY md5(d.hotel_id::text || '|' || d.room_number::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.hotel_id, d.room_number FROM (SELECT DISTINCT r.hotel_id AS hotel_id, r.room_number AS room_number FROM hotel_rel.room r WHERE r.hotel_id IS NOT NULL AND r.room_number IS NOT NULL) d ORDER BY md5(d.hotel_id::text || '|' || d.room_number::text) LIMIT $1 / 2) r;
-- source
SELECT r.hotel_id, r.room_number, r.rate, a.name AS amenity_name, a.description
FROM hotel_rel.room r
LEFT JOIN hotel_rel.room_amenity ra ON ra.hotel_id = r.hotel_id AND ra.room_number = r.room_number
LEFT JOIN hotel_rel.amenity a ON a.id = ra.amenity_id
WHERE r.hotel_id = $1
  AND r.room_number = $2::smallint
ORDER BY a.name;
-- target
SELECT t.hotel_id, t.room_number, (t.rate)::numeric(8,2) AS rate, t.amenity_name, t.description
FROM hotel_cql.rooms_by_hotel_id_room_number t
WHERE t.hotel_id = $1 AND t.room_number = $2
ORDER BY t.amenity_name;

-- query: Q6_reservation_by_confirmation
-- description: a reservation by its confirmation number
-- params: confirm_number text
-- table: hotel.reservations
-- ordered: false
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.confirm_number FROM (SELECT DISTINCT s.confirm_number FROM cqlbridge_hotel.reservations_src s) d ORDER BY md5(d.confirm_number::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.confirm_number FROM (SELECT DISTINCT r.confirm_number AS confirm_number FROM hotel_rel.reservation r WHERE r.confirm_number IS NOT NULL) d ORDER BY md5(d.confirm_number::text) LIMIT $1 / 2) r;
-- source
SELECT r.confirm_number, r.hotel_id, r.start_date, r.end_date, r.room_number, r.guest_id
FROM hotel_rel.reservation r
WHERE r.confirm_number = $1;
-- target
SELECT t.confirm_number, t.hotel_id, t.start_date, t.end_date, t.room_number, t.guest_id
FROM hotel_cql.reservations t
WHERE t.confirm_number = $1;

-- query: Q7_reservations_by_hotel_date
-- description: reservations of a hotel starting on a given date, by room
-- params: hotel_id text, start_date date
-- table: hotel.reservations_by_hotel_id_start_date
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.hotel_id, d.start_date FROM (SELECT DISTINCT s.hotel_id, s.start_date FROM cqlbridge_hotel.reservations_by_hotel_id_start_date_src s) d ORDER BY md5(d.hotel_id::text || '|' || d.start_date::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.hotel_id, d.start_date FROM (SELECT DISTINCT r.hotel_id AS hotel_id, r.start_date AS start_date FROM hotel_rel.reservation r WHERE r.hotel_id IS NOT NULL AND r.start_date IS NOT NULL) d ORDER BY md5(d.hotel_id::text || '|' || d.start_date::text) LIMIT $1 / 2) r;
-- source
SELECT r.hotel_id, r.start_date, r.room_number, r.end_date, r.confirm_number, r.guest_id
FROM hotel_rel.reservation r
WHERE r.hotel_id = $1
  AND r.start_date = $2::date
ORDER BY r.room_number;
-- target
SELECT t.hotel_id, t.start_date, t.room_number, t.end_date, t.confirm_number, t.guest_id
FROM hotel_cql.reservations_by_hotel_id_start_date t
WHERE t.hotel_id = $1 AND t.start_date = $2
ORDER BY t.room_number;

-- query: Q8_reservations_by_guest
-- description: reservations of every guest with a given last name, by hotel, start date and room
-- params: last_name text
-- table: hotel.reservations_by_guest_last_name
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.guest_last_name FROM (SELECT DISTINCT s.guest_last_name FROM cqlbridge_hotel.reservations_by_guest_last_name_src s) d ORDER BY md5(d.guest_last_name::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.guest_last_name FROM (SELECT DISTINCT r.last_name AS guest_last_name FROM hotel_rel.guest r WHERE r.last_name IS NOT NULL) d ORDER BY md5(d.guest_last_name::text) LIMIT $1 / 2) r;
-- source
SELECT g.last_name AS guest_last_name, r.hotel_id, r.start_date, r.end_date,
       r.room_number, r.confirm_number, r.guest_id
FROM hotel_rel.guest g
JOIN hotel_rel.reservation r ON r.guest_id = g.guest_id
WHERE g.last_name = $1
ORDER BY r.hotel_id, r.start_date, r.room_number;
-- target
SELECT t.guest_last_name, t.hotel_id, t.start_date, t.end_date, t.room_number, t.confirm_number, t.guest_id
FROM hotel_cql.reservations_by_guest_last_name t
WHERE t.guest_last_name = $1
ORDER BY t.hotel_id, t.start_date, t.room_number;

-- query: Q9_guest_by_id
-- description: a guest with emails (set), phone numbers (list) and addresses (map kind -> address)
-- params: guest_id uuid
-- table: hotel.guests
-- ordered: false
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.guest_id FROM (SELECT DISTINCT s.guest_id FROM cqlbridge_hotel.guests_src s) d ORDER BY md5(d.guest_id::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.guest_id FROM (SELECT DISTINCT r.guest_id AS guest_id FROM hotel_rel.guest r WHERE r.guest_id IS NOT NULL) d ORDER BY md5(d.guest_id::text) LIMIT $1 / 2) r;
-- source
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
WHERE g.guest_id = $1::uuid;
-- target
SELECT t.guest_id, t.first_name, t.last_name, t.title, CASE WHEN t.emails IS NULL THEN NULL ELSE ARRAY(SELECT e FROM unnest(t.emails) e ORDER BY e) END AS emails, t.phone_numbers, t.addresses
FROM hotel_cql.guests t
WHERE t.guest_id = $1;

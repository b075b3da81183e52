-- 003_load.sql: per target table, the SELECT of its rows (columns in the order of "columns").
-- apply streams them into the foreign table in one pass, ordered by the partition key and
-- resumable batch by batch, or with --chunks N in hash chunks of whole partitions.
-- "affected" lines: source relation (primary key) | key columns of the target rows it feeds.
-- Names are SQL identifiers, quoted where needed; the keyspace names the plan's objects.
-- keyspace: hotel

-- table: hotel.hotels_by_poi_name
-- foreign_table: hotel_cql.hotels_by_poi_name
-- source_view: cqlbridge_hotel.hotels_by_poi_name_src
-- columns: poi_name, hotel_id, point_of_interest_id, name, phone, address
-- key: poi_name, hotel_id, point_of_interest_id
-- partition_key: poi_name
-- rows: 13
-- affected: hotel_rel.point_of_interest (id) | SELECT s.poi_name, s.hotel_id, s.point_of_interest_id FROM cqlbridge_hotel.hotels_by_poi_name_src s WHERE s.lin_p_id = $1
-- affected: hotel_rel.hotel_poi (hotel_id, poi_id) | SELECT s.poi_name, s.hotel_id, s.point_of_interest_id FROM cqlbridge_hotel.hotels_by_poi_name_src s WHERE s.lin_hp_hotel_id = $1 AND s.lin_hp_poi_id = $2
-- affected: hotel_rel.hotel (id) | SELECT s.poi_name, s.hotel_id, s.point_of_interest_id FROM cqlbridge_hotel.hotels_by_poi_name_src s WHERE s.lin_h_id = $1
SELECT s.poi_name, s.hotel_id, s.point_of_interest_id, s.name, s.phone, s.address
FROM cqlbridge_hotel.hotels_by_poi_name_src s;

-- table: hotel.hotels
-- foreign_table: hotel_cql.hotels
-- source_view: cqlbridge_hotel.hotels_src
-- columns: id, name, phone, address, pois
-- key: id
-- partition_key: id
-- rows: 3
-- affected: hotel_rel.hotel (id) | SELECT s.id FROM cqlbridge_hotel.hotels_src s WHERE s.lin_h_id = $1
-- affected: hotel_rel.hotel_poi (hotel_id, poi_id) | SELECT s.id FROM cqlbridge_hotel.hotels_src s WHERE (s.lin_h_id) IN (SELECT hp.hotel_id FROM hotel_rel.hotel_poi hp WHERE hp.hotel_id = $1 AND hp.poi_id = $2)
-- affected: hotel_rel.point_of_interest (id) | SELECT s.id FROM cqlbridge_hotel.hotels_src s WHERE (s.lin_h_id) IN (SELECT hp.hotel_id FROM hotel_rel.point_of_interest p, hotel_rel.hotel_poi hp WHERE p.id = hp.poi_id AND p.id = $1)
SELECT s.id, s.name, s.phone, s.address, s.pois
FROM cqlbridge_hotel.hotels_src s;

-- table: hotel.points_of_interest_by_hotel_id
-- foreign_table: hotel_cql.points_of_interest_by_hotel_id
-- source_view: cqlbridge_hotel.points_of_interest_by_hotel_id_src
-- columns: hotel_id, poi_name, point_of_interest_id, description
-- key: hotel_id, poi_name, point_of_interest_id
-- partition_key: hotel_id
-- rows: 13
-- affected: hotel_rel.hotel_poi (hotel_id, poi_id) | SELECT s.hotel_id, s.poi_name, s.point_of_interest_id FROM cqlbridge_hotel.points_of_interest_by_hotel_id_src s WHERE s.lin_hp_hotel_id = $1 AND s.lin_hp_poi_id = $2
-- affected: hotel_rel.point_of_interest (id) | SELECT s.hotel_id, s.poi_name, s.point_of_interest_id FROM cqlbridge_hotel.points_of_interest_by_hotel_id_src s WHERE s.lin_p_id = $1
SELECT s.hotel_id, s.poi_name, s.point_of_interest_id, s.description
FROM cqlbridge_hotel.points_of_interest_by_hotel_id_src s;

-- table: hotel.room_availabilities_by_hotel_id
-- foreign_table: hotel_cql.room_availabilities_by_hotel_id
-- source_view: cqlbridge_hotel.room_availabilities_by_hotel_id_src
-- columns: hotel_id, date, room_number, is_available
-- key: hotel_id, date, room_number
-- partition_key: hotel_id
-- rows: 616
-- affected: hotel_rel.room_availability (hotel_id, date, room_number) | SELECT s.hotel_id, s.date, s.room_number FROM cqlbridge_hotel.room_availabilities_by_hotel_id_src s WHERE s.lin_ra_hotel_id = $1 AND s.lin_ra_date = $2 AND s.lin_ra_room_number = $3
SELECT s.hotel_id, s.date, s.room_number, s.is_available
FROM cqlbridge_hotel.room_availabilities_by_hotel_id_src s;

-- table: hotel.rooms_by_hotel_id_room_number
-- foreign_table: hotel_cql.rooms_by_hotel_id_room_number
-- source_view: cqlbridge_hotel.rooms_by_hotel_id_room_number_src
-- columns: hotel_id, room_number, amenity_name, rate, description
-- key: hotel_id, room_number, amenity_name
-- partition_key: hotel_id, room_number
-- rows: 167
-- affected: hotel_rel.room (hotel_id, room_number) | SELECT s.hotel_id, s.room_number, s.amenity_name FROM cqlbridge_hotel.rooms_by_hotel_id_room_number_src s WHERE s.lin_r_hotel_id = $1 AND s.lin_r_room_number = $2
-- affected: hotel_rel.room_amenity (hotel_id, room_number, amenity_id) | SELECT s.hotel_id, s.room_number, s.amenity_name FROM cqlbridge_hotel.rooms_by_hotel_id_room_number_src s WHERE s.lin_ra_hotel_id = $1 AND s.lin_ra_room_number = $2 AND s.lin_ra_amenity_id = $3
-- affected: hotel_rel.amenity (id) | SELECT s.hotel_id, s.room_number, s.amenity_name FROM cqlbridge_hotel.rooms_by_hotel_id_room_number_src s WHERE s.lin_a_id = $1
SELECT s.hotel_id, s.room_number, s.amenity_name, s.rate, s.description
FROM cqlbridge_hotel.rooms_by_hotel_id_room_number_src s;

-- table: hotel.reservations
-- foreign_table: hotel_cql.reservations
-- source_view: cqlbridge_hotel.reservations_src
-- columns: confirm_number, hotel_id, start_date, end_date, room_number, guest_id
-- key: confirm_number
-- partition_key: confirm_number
-- rows: 92
-- affected: hotel_rel.reservation (confirm_number) | SELECT s.confirm_number FROM cqlbridge_hotel.reservations_src s WHERE s.lin_r_confirm_number = $1
SELECT s.confirm_number, s.hotel_id, s.start_date, s.end_date, s.room_number, s.guest_id
FROM cqlbridge_hotel.reservations_src s;

-- table: hotel.reservations_by_hotel_id_start_date
-- foreign_table: hotel_cql.reservations_by_hotel_id_start_date
-- source_view: cqlbridge_hotel.reservations_by_hotel_id_start_date_src
-- columns: hotel_id, start_date, room_number, end_date, confirm_number, guest_id
-- key: hotel_id, start_date, room_number
-- partition_key: hotel_id, start_date
-- rows: 92
-- affected: hotel_rel.reservation (confirm_number) | SELECT s.hotel_id, s.start_date, s.room_number FROM cqlbridge_hotel.reservations_by_hotel_id_start_date_src s WHERE s.lin_r_confirm_number = $1
SELECT s.hotel_id, s.start_date, s.room_number, s.end_date, s.confirm_number, s.guest_id
FROM cqlbridge_hotel.reservations_by_hotel_id_start_date_src s;

-- table: hotel.reservations_by_guest_last_name
-- foreign_table: hotel_cql.reservations_by_guest_last_name
-- source_view: cqlbridge_hotel.reservations_by_guest_last_name_src
-- columns: guest_last_name, hotel_id, start_date, room_number, end_date, confirm_number, guest_id
-- key: guest_last_name, hotel_id, start_date, room_number
-- partition_key: guest_last_name
-- rows: 92
-- affected: hotel_rel.guest (guest_id) | SELECT s.guest_last_name, s.hotel_id, s.start_date, s.room_number FROM cqlbridge_hotel.reservations_by_guest_last_name_src s WHERE s.lin_g_guest_id = $1
-- affected: hotel_rel.reservation (confirm_number) | SELECT s.guest_last_name, s.hotel_id, s.start_date, s.room_number FROM cqlbridge_hotel.reservations_by_guest_last_name_src s WHERE s.lin_r_confirm_number = $1
SELECT s.guest_last_name, s.hotel_id, s.start_date, s.room_number, s.end_date, s.confirm_number, s.guest_id
FROM cqlbridge_hotel.reservations_by_guest_last_name_src s;

-- table: hotel.guests
-- foreign_table: hotel_cql.guests
-- source_view: cqlbridge_hotel.guests_src
-- columns: guest_id, first_name, last_name, title, emails, phone_numbers, addresses
-- key: guest_id
-- partition_key: guest_id
-- rows: 74
-- affected: hotel_rel.guest (guest_id) | SELECT s.guest_id FROM cqlbridge_hotel.guests_src s WHERE s.lin_g_guest_id = $1
-- affected: hotel_rel.guest_email (guest_id, email) | SELECT s.guest_id FROM cqlbridge_hotel.guests_src s WHERE (s.lin_g_guest_id) IN (SELECT e.guest_id FROM hotel_rel.guest_email e WHERE e.guest_id = $1 AND e.email = $2)
-- affected: hotel_rel.guest_phone (guest_id, position) | SELECT s.guest_id FROM cqlbridge_hotel.guests_src s WHERE (s.lin_g_guest_id) IN (SELECT ph.guest_id FROM hotel_rel.guest_phone ph WHERE ph.guest_id = $1 AND ph.position = $2)
-- affected: hotel_rel.guest_address (guest_id, kind) | SELECT s.guest_id FROM cqlbridge_hotel.guests_src s WHERE (s.lin_g_guest_id) IN (SELECT a.guest_id FROM hotel_rel.guest_address a WHERE a.guest_id = $1 AND a.kind = $2)
SELECT s.guest_id, s.first_name, s.last_name, s.title, s.emails, s.phone_numbers, s.addresses
FROM cqlbridge_hotel.guests_src s;

--
-- The hotel example of the Cassandra documentation: its two keyspaces as
-- published, sample data, and the nine application queries written as SQL
-- over the imported foreign tables.  Each must be a single-partition read.
--
\i sql/include/cql_server.sql
\set ks hotel
\i sql/include/keyspace.sql
\set ks reservation
\i sql/include/keyspace.sql

DO $$
DECLARE
  ks text;
BEGIN
  FOREACH ks IN ARRAY ARRAY['hotel', 'reservation'] LOOP
    PERFORM cql_execute('cass', format('CREATE TYPE %I.address (street text, city text, state_or_province text, postal_code text, country text)', ks));
  END LOOP;

  -- hotel.cql
  PERFORM cql_execute('cass', $c$CREATE TABLE hotel.hotels_by_poi (
      poi_name text, hotel_id text, name text, phone text, address frozen<address>,
      PRIMARY KEY ((poi_name), hotel_id))
    WITH comment = 'Q1. Find hotels near given poi' AND CLUSTERING ORDER BY (hotel_id ASC)$c$);
  PERFORM cql_execute('cass', $c$CREATE TABLE hotel.hotels (
      id text PRIMARY KEY, name text, phone text, address frozen<address>, pois set<text>)
    WITH comment = 'Q2. Find information about a hotel'$c$);
  PERFORM cql_execute('cass', $c$CREATE TABLE hotel.pois_by_hotel (
      poi_name text, hotel_id text, description text, PRIMARY KEY ((hotel_id), poi_name))
    WITH comment = 'Q3. Find pois near a hotel'$c$);
  PERFORM cql_execute('cass', $c$CREATE TABLE hotel.available_rooms_by_hotel_date (
      hotel_id text, date date, room_number smallint, is_available boolean,
      PRIMARY KEY ((hotel_id), date, room_number))
    WITH comment = 'Q4. Find available rooms by hotel date'$c$);
  PERFORM cql_execute('cass', $c$CREATE TABLE hotel.amenities_by_room (
      hotel_id text, room_number smallint, amenity_name text, description text,
      PRIMARY KEY ((hotel_id, room_number), amenity_name))
    WITH comment = 'Q5. Find amenities for a room'$c$);

  -- reservation.cql
  PERFORM cql_execute('cass', $c$CREATE TABLE reservation.reservations_by_confirmation (
      confirm_number text, hotel_id text, start_date date, end_date date,
      room_number smallint, guest_id uuid, PRIMARY KEY (confirm_number))
    WITH comment = 'Q6. Find reservations by confirmation number'$c$);
  PERFORM cql_execute('cass', $c$CREATE TABLE reservation.reservations_by_hotel_date (
      hotel_id text, start_date date, end_date date, room_number smallint,
      confirm_number text, guest_id uuid, PRIMARY KEY ((hotel_id, start_date), room_number))
    WITH comment = 'Q7. Find reservations by hotel and date'$c$);
  PERFORM cql_execute('cass', $c$CREATE TABLE reservation.reservations_by_guest (
      guest_last_name text, hotel_id text, start_date date, end_date date,
      room_number smallint, confirm_number text, guest_id uuid,
      PRIMARY KEY ((guest_last_name), hotel_id))
    WITH comment = 'Q8. Find reservations by guest name'$c$);
  PERFORM cql_execute('cass', $c$CREATE TABLE reservation.guests (
      guest_id uuid PRIMARY KEY, first_name text, last_name text, title text,
      emails set<text>, phone_numbers list<text>, addresses map<text, frozen<address>>,
      confirm_number text)
    WITH comment = 'Q9. Find guest by ID'$c$);
END $$;

-- sample data, written by Cassandra's own CQL parser
DO $$
DECLARE
  stmt text;
  d int;
  r int;
BEGIN
  FOREACH stmt IN ARRAY ARRAY[
    $c$INSERT INTO hotel.hotels (id, name, phone, address, pois) VALUES ('AZ123', 'Super Hotel at WestWorld', '1-888-999-9999',
       {street: '1 Rodeo Dr', city: 'Phoenix', state_or_province: 'AZ', postal_code: '85001', country: 'USA'}, {'WestWorld', 'Desert Botanical Garden'})$c$,
    $c$INSERT INTO hotel.hotels (id, name, phone, address, pois) VALUES ('NY229', 'Waterfront Hotel', '1-212-555-0100',
       {street: '2 Pier Ave', city: 'New York', state_or_province: 'NY', postal_code: '10001', country: 'USA'}, {'Statue of Liberty'})$c$,
    $c$INSERT INTO hotel.hotels_by_poi (poi_name, hotel_id, name, phone, address) VALUES ('WestWorld', 'AZ123', 'Super Hotel at WestWorld', '1-888-999-9999',
       {street: '1 Rodeo Dr', city: 'Phoenix', state_or_province: 'AZ', postal_code: '85001', country: 'USA'})$c$,
    $c$INSERT INTO hotel.hotels_by_poi (poi_name, hotel_id, name, phone, address) VALUES ('Desert Botanical Garden', 'AZ123', 'Super Hotel at WestWorld', '1-888-999-9999',
       {street: '1 Rodeo Dr', city: 'Phoenix', state_or_province: 'AZ', postal_code: '85001', country: 'USA'})$c$,
    $c$INSERT INTO hotel.hotels_by_poi (poi_name, hotel_id, name, phone, address) VALUES ('Desert Botanical Garden', 'AZ456', 'Cactus Lodge', '1-602-555-0142',
       {street: '9 Saguaro Rd', city: 'Phoenix', state_or_province: 'AZ', postal_code: '85008', country: 'USA'})$c$,
    $c$INSERT INTO hotel.hotels_by_poi (poi_name, hotel_id, name, phone, address) VALUES ('Statue of Liberty', 'NY229', 'Waterfront Hotel', '1-212-555-0100',
       {street: '2 Pier Ave', city: 'New York', state_or_province: 'NY', postal_code: '10001', country: 'USA'})$c$,
    $c$INSERT INTO hotel.pois_by_hotel (hotel_id, poi_name, description) VALUES ('AZ123', 'WestWorld', 'Theme park with robots')$c$,
    $c$INSERT INTO hotel.pois_by_hotel (hotel_id, poi_name, description) VALUES ('AZ123', 'Desert Botanical Garden', 'Cacti and more cacti')$c$,
    $c$INSERT INTO hotel.pois_by_hotel (hotel_id, poi_name, description) VALUES ('NY229', 'Statue of Liberty', 'Copper lady in the harbour')$c$,
    $c$INSERT INTO hotel.amenities_by_room (hotel_id, room_number, amenity_name, description) VALUES ('AZ123', 101, 'wifi', 'Free wireless internet')$c$,
    $c$INSERT INTO hotel.amenities_by_room (hotel_id, room_number, amenity_name, description) VALUES ('AZ123', 101, 'minibar', 'Stocked daily')$c$,
    $c$INSERT INTO hotel.amenities_by_room (hotel_id, room_number, amenity_name, description) VALUES ('AZ123', 102, 'wifi', 'Free wireless internet')$c$,
    $c$INSERT INTO reservation.reservations_by_confirmation (confirm_number, hotel_id, start_date, end_date, room_number, guest_id)
       VALUES ('RS2G0Z', 'AZ123', '2024-06-02', '2024-06-04', 101, 1b4d86f4-ccff-4256-a63d-45c905df2677)$c$,
    $c$INSERT INTO reservation.reservations_by_confirmation (confirm_number, hotel_id, start_date, end_date, room_number, guest_id)
       VALUES ('QX7K2M', 'AZ123', '2024-06-02', '2024-06-03', 102, 7a3c2b14-1f5e-4a0e-9a3b-2c4d5e6f7a8b)$c$,
    $c$INSERT INTO reservation.reservations_by_hotel_date (hotel_id, start_date, end_date, room_number, confirm_number, guest_id)
       VALUES ('AZ123', '2024-06-02', '2024-06-04', 101, 'RS2G0Z', 1b4d86f4-ccff-4256-a63d-45c905df2677)$c$,
    $c$INSERT INTO reservation.reservations_by_hotel_date (hotel_id, start_date, end_date, room_number, confirm_number, guest_id)
       VALUES ('AZ123', '2024-06-02', '2024-06-03', 102, 'QX7K2M', 7a3c2b14-1f5e-4a0e-9a3b-2c4d5e6f7a8b)$c$,
    $c$INSERT INTO reservation.reservations_by_guest (guest_last_name, hotel_id, start_date, end_date, room_number, confirm_number, guest_id)
       VALUES ('Nguyen', 'AZ123', '2024-06-02', '2024-06-04', 101, 'RS2G0Z', 1b4d86f4-ccff-4256-a63d-45c905df2677)$c$,
    $c$INSERT INTO reservation.reservations_by_guest (guest_last_name, hotel_id, start_date, end_date, room_number, confirm_number, guest_id)
       VALUES ('Okafor', 'AZ123', '2024-06-02', '2024-06-03', 102, 'QX7K2M', 7a3c2b14-1f5e-4a0e-9a3b-2c4d5e6f7a8b)$c$,
    $c$INSERT INTO reservation.guests (guest_id, first_name, last_name, title, emails, phone_numbers, addresses, confirm_number)
       VALUES (1b4d86f4-ccff-4256-a63d-45c905df2677, 'Mai', 'Nguyen', 'Dr.', {'mai@example.com', 'mai.nguyen@work.example'},
               ['+1-555-0101', '+1-555-0102'],
               {'home': {street: '5 Elm St', city: 'Tempe', state_or_province: 'AZ', postal_code: '85281', country: 'USA'}}, 'RS2G0Z')$c$
  ] LOOP
    PERFORM cql_execute('cass', stmt);
  END LOOP;

  -- Q4 data: three rooms over five days
  FOR d IN 0..4 LOOP
    FOR r IN 101..103 LOOP
      PERFORM cql_execute('cass', format(
        'INSERT INTO hotel.available_rooms_by_hotel_date (hotel_id, date, room_number, is_available) VALUES (%L, %L, %s, %s)',
        'AZ123', to_char(date '2024-06-01' + d, 'YYYY-MM-DD'), r,
        CASE WHEN (d + r) % 3 <> 0 THEN 'true' ELSE 'false' END));
    END LOOP;
  END LOOP;
END $$;

CREATE SCHEMA hotel;
CREATE SCHEMA reservation;
IMPORT FOREIGN SCHEMA hotel FROM SERVER cass INTO hotel;
IMPORT FOREIGN SCHEMA reservation FROM SERVER cass INTO reservation;
\det+ hotel.*
\det+ reservation.*

-- Q1. hotels near a given point of interest
EXPLAIN (VERBOSE, COSTS OFF)
SELECT hotel_id, name, phone, address->>'city' AS city FROM hotel.hotels_by_poi WHERE poi_name = 'Desert Botanical Garden';
SELECT hotel_id, name, phone, address->>'city' AS city FROM hotel.hotels_by_poi WHERE poi_name = 'Desert Botanical Garden';

-- Q2. information about a given hotel
EXPLAIN (VERBOSE, COSTS OFF) SELECT name, phone, address, pois FROM hotel.hotels WHERE id = 'AZ123';
SELECT name, phone, address, pois FROM hotel.hotels WHERE id = 'AZ123';

-- Q3. points of interest near a given hotel
EXPLAIN (VERBOSE, COSTS OFF) SELECT poi_name, description FROM hotel.pois_by_hotel WHERE hotel_id = 'AZ123';
SELECT poi_name, description FROM hotel.pois_by_hotel WHERE hotel_id = 'AZ123';

-- Q4. available rooms at a hotel in a date range (range on the clustering column)
EXPLAIN (VERBOSE, COSTS OFF)
SELECT date, room_number FROM hotel.available_rooms_by_hotel_date
WHERE hotel_id = 'AZ123' AND date >= '2024-06-02' AND date < '2024-06-04' AND is_available;
SELECT date, room_number FROM hotel.available_rooms_by_hotel_date
WHERE hotel_id = 'AZ123' AND date >= '2024-06-02' AND date < '2024-06-04' AND is_available;

-- Q5. rate and amenities of a room (composite partition key)
EXPLAIN (VERBOSE, COSTS OFF)
SELECT amenity_name, description FROM hotel.amenities_by_room WHERE hotel_id = 'AZ123' AND room_number = 101;
SELECT amenity_name, description FROM hotel.amenities_by_room WHERE hotel_id = 'AZ123' AND room_number = 101;

-- Q6. reservation by confirmation number
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM reservation.reservations_by_confirmation WHERE confirm_number = 'RS2G0Z';
SELECT * FROM reservation.reservations_by_confirmation WHERE confirm_number = 'RS2G0Z';

-- Q7. reservations by hotel and date
EXPLAIN (VERBOSE, COSTS OFF)
SELECT room_number, confirm_number, end_date FROM reservation.reservations_by_hotel_date
WHERE hotel_id = 'AZ123' AND start_date = '2024-06-02';
SELECT room_number, confirm_number, end_date FROM reservation.reservations_by_hotel_date
WHERE hotel_id = 'AZ123' AND start_date = '2024-06-02';

-- Q8. reservations by guest name
EXPLAIN (VERBOSE, COSTS OFF)
SELECT hotel_id, start_date, end_date, room_number, confirm_number FROM reservation.reservations_by_guest
WHERE guest_last_name = 'Nguyen';
SELECT hotel_id, start_date, end_date, room_number, confirm_number FROM reservation.reservations_by_guest
WHERE guest_last_name = 'Nguyen';

-- Q9. guest details
EXPLAIN (VERBOSE, COSTS OFF)
SELECT first_name, last_name, title, emails, phone_numbers, addresses FROM reservation.guests
WHERE guest_id = '1b4d86f4-ccff-4256-a63d-45c905df2677';
SELECT first_name, last_name, title, emails, phone_numbers, addresses FROM reservation.guests
WHERE guest_id = '1b4d86f4-ccff-4256-a63d-45c905df2677';

-- the queries compose: a guest's reservations with their hotel, by key lookups only
EXPLAIN (COSTS OFF)
SELECT g.last_name, r.confirm_number, h.name
FROM reservation.guests g
JOIN reservation.reservations_by_confirmation r ON r.confirm_number = g.confirm_number
JOIN hotel.hotels h ON h.id = r.hotel_id
WHERE g.guest_id = '1b4d86f4-ccff-4256-a63d-45c905df2677';
SELECT g.last_name, r.confirm_number, h.name
FROM reservation.guests g
JOIN reservation.reservations_by_confirmation r ON r.confirm_number = g.confirm_number
JOIN hotel.hotels h ON h.id = r.hotel_id
WHERE g.guest_id = '1b4d86f4-ccff-4256-a63d-45c905df2677';

-- tests/bridge/workload_sim/setup.sql - the parameter values the simulated
-- application picks from (schema sim, numbered rows; the pgbench scripts
-- read one by a random number).  Its statements do not name hotel_rel, so
-- "cqlbridge workload" does not draft them.
CREATE SCHEMA sim;
CREATE TABLE sim.poi AS SELECT row_number() OVER (ORDER BY name) AS i, name AS v
  FROM (SELECT DISTINCT name FROM hotel_rel.point_of_interest) s;
CREATE TABLE sim.hotel AS SELECT row_number() OVER (ORDER BY id) AS i, id AS v FROM hotel_rel.hotel;
CREATE TABLE sim.avail AS SELECT row_number() OVER (ORDER BY hotel_id, date, room_number) AS i,
  hotel_id AS h, room_number AS r, date AS d, date + 7 AS d2 FROM hotel_rel.room_availability;
CREATE TABLE sim.room AS SELECT row_number() OVER (ORDER BY hotel_id, room_number) AS i,
  hotel_id AS h, room_number AS r FROM hotel_rel.room;
CREATE TABLE sim.res AS SELECT row_number() OVER (ORDER BY confirm_number) AS i,
  confirm_number AS c, hotel_id AS h, start_date AS d FROM hotel_rel.reservation;
CREATE TABLE sim.guest AS SELECT row_number() OVER (ORDER BY guest_id) AS i,
  guest_id AS g, last_name AS n FROM hotel_rel.guest;
CREATE INDEX ON sim.poi (i); CREATE INDEX ON sim.hotel (i); CREATE INDEX ON sim.avail (i);
CREATE INDEX ON sim.room (i); CREATE INDEX ON sim.res (i); CREATE INDEX ON sim.guest (i);

--
-- tests/bridge/evolve/workload_v2.sql
--	  The workload of workload.sql a release later, for
--	  tests/bridge/test_stream_replan.sh: Q1 and Q2 as they were; Q3 also
--	  returns the venue's capacity (a column added to venue meanwhile);
--	  Q4 is new: the tickets sold in a city's venues, newest first.
--

-- name: Q1_venue_by_id
-- description: a venue with its slug (generated column) and its tags (set)
-- params: venue_id int
-- target: evolve.venues
-- published_key: ((venue_id))
SELECT v.venue_id, v.name, v.city, v.slug,
       (SELECT array_agg(t.tag ORDER BY t.tag)
        FROM evolve.venue_tag t
        WHERE t.venue_id = v.venue_id) AS tags
FROM evolve.venue v
WHERE v.venue_id = :'venue_id'::int;

-- name: Q2_tickets_by_venue
-- description: tickets of a venue, newest first, with the venue's name
-- params: venue_id int
-- target: evolve.tickets_by_venue
-- published_key: ((venue_id), sold_at, ticket_id)
SELECT t.venue_id, t.sold_at, t.ticket_id, v.name AS venue_name, t.price, t.note
FROM evolve.ticket t
JOIN evolve.venue v ON v.venue_id = t.venue_id
WHERE t.venue_id = :'venue_id'::int
ORDER BY t.sold_at DESC, t.ticket_id;

-- name: Q3_venues_by_city
-- description: venues of a city, by id
-- params: city text
-- target: evolve.venues_by_city
-- published_key: ((city), venue_id)
SELECT v.city, v.venue_id, v.name, v.slug, v.capacity
FROM evolve.venue v
WHERE v.city = :'city'
ORDER BY v.venue_id;

-- name: Q4_tickets_by_city
-- description: tickets sold in the venues of a city, newest first
-- params: city text
-- target: evolve.tickets_by_city
-- published_key: ((city), sold_at, venue_id, ticket_id)
SELECT v.city, t.sold_at, t.venue_id, t.ticket_id, t.price
FROM evolve.ticket t
JOIN evolve.venue v ON v.venue_id = t.venue_id
WHERE v.city = :'city'
ORDER BY t.sold_at DESC, t.venue_id, t.ticket_id;

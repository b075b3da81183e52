--
-- tests/bridge/evolve/workload.sql
--	  Three queries over the schema of schema.sql, in the block format of
--	  migrations/hotel/workload.sql: a venue with its tags (a set) and its
--	  generated slug; the tickets of a venue, newest first, with the venue's
--	  name joined in; the venues of a city.
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
SELECT v.city, v.venue_id, v.name, v.slug
FROM evolve.venue v
WHERE v.city = :'city'
ORDER BY v.venue_id;

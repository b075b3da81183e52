--
-- tests/bridge/evolve/workload_v3.sql
--	  Q3 of workload.sql ordered by the venue's name: its table gets another
--	  primary key, which Cassandra cannot change in place
--	  (tests/bridge/test_stream_replan.sh: refused online, naming it).
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

-- name: Q3_venues_by_city
-- description: venues of a city, by name
-- params: city text
-- target: evolve.venues_by_city
-- published_key: ((city), name, venue_id)
SELECT v.city, v.name, v.venue_id, v.slug
FROM evolve.venue v
WHERE v.city = :'city'
ORDER BY v.name, v.venue_id;

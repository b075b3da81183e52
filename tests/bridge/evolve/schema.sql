--
-- tests/bridge/evolve/schema.sql
--	  A small source schema for tests/bridge/test_stream_ddl.sh (schema
--	  changes during a migration, issue 38): venues with a STORED generated
--	  column (slug) and a child table of tags (a set<text> of the venue's
--	  query table), and tickets partitioned by month on sold_at (2026-01 ..
--	  2026-04; the primary key on the partitioned table, so every partition
--	  has one), timestamps in whole milliseconds (what a CQL timestamp
--	  keeps).  ticket.channel and ticket.row_no are read by no query of
--	  workload.sql: the test drops one and changes the type of the other.
--
CREATE SCHEMA evolve;
CREATE TABLE evolve.venue (
	venue_id	int PRIMARY KEY,
	name		text NOT NULL,
	city		text NOT NULL,
	slug		text GENERATED ALWAYS AS (lower(replace(name, ' ', '-'))) STORED
);
CREATE TABLE evolve.venue_tag (
	venue_id	int NOT NULL REFERENCES evolve.venue,
	tag			text NOT NULL,
	PRIMARY KEY (venue_id, tag)
);
CREATE TABLE evolve.ticket (
	venue_id	int NOT NULL,
	sold_at		timestamptz NOT NULL,
	ticket_id	int NOT NULL,
	price		numeric(8,2) NOT NULL,
	note		text,
	channel		text,
	row_no		smallint,
	PRIMARY KEY (venue_id, sold_at, ticket_id)
) PARTITION BY RANGE (sold_at);
CREATE TABLE evolve.ticket_2026_01 PARTITION OF evolve.ticket
	FOR VALUES FROM ('2026-01-01 00:00:00+00') TO ('2026-02-01 00:00:00+00');
CREATE TABLE evolve.ticket_2026_02 PARTITION OF evolve.ticket
	FOR VALUES FROM ('2026-02-01 00:00:00+00') TO ('2026-03-01 00:00:00+00');
CREATE TABLE evolve.ticket_2026_03 PARTITION OF evolve.ticket
	FOR VALUES FROM ('2026-03-01 00:00:00+00') TO ('2026-04-01 00:00:00+00');
CREATE TABLE evolve.ticket_2026_04 PARTITION OF evolve.ticket
	FOR VALUES FROM ('2026-04-01 00:00:00+00') TO ('2026-05-01 00:00:00+00');

-- 120 venues in 7 cities
INSERT INTO evolve.venue (venue_id, name, city)
SELECT v, 'Venue ' || v || CASE WHEN v % 5 = 0 THEN E' \u00e9t\u00e9 "Q''s"' ELSE '' END,
	   'City ' || (v % 7)
FROM generate_series(1, 120) v;
-- 0 to 3 tags a venue (venues with v % 4 = 0 have none: an empty set is NULL)
INSERT INTO evolve.venue_tag
SELECT v, t
FROM generate_series(1, 120) v,
	 unnest(ARRAY['jazz', 'rock', 'outdoor', 'family', 'late']) WITH ORDINALITY AS x(t, k)
WHERE v % 4 <> 0 AND (v + k) % 3 <> 0 AND k <= 1 + v % 4;
-- 3000 tickets from 2026-01-01 to 2026-04-25, one every 55 min 1.234 s
INSERT INTO evolve.ticket
SELECT 1 + g % 120,
	   timestamptz '2026-01-01 00:00:00+00' + g * interval '55 min 1.234 s',
	   g, 10 + (g % 50) * 1.25,
	   CASE WHEN g % 9 = 0 THEN NULL ELSE 'note ' || g || E' \u00fc' END,
	   'web', (g % 30)::smallint
FROM generate_series(1, 3000) g;

--
-- tests/bridge/partitioned/schema.sql
--	  A partitioned source relation for tests/bridge/test_stream_partitions.sh:
--	  device events partitioned by month, primary key on the partitioned
--	  table (so every partition has one), timestamps in whole milliseconds
--	  (what a CQL timestamp keeps).
--
CREATE SCHEMA part_rel;
CREATE TABLE part_rel.events (
	device_id	int NOT NULL,
	happened_at timestamptz NOT NULL,
	kind		text NOT NULL,
	payload		text,
	PRIMARY KEY (device_id, happened_at)
) PARTITION BY RANGE (happened_at);
CREATE TABLE part_rel.events_2026_01 PARTITION OF part_rel.events
	FOR VALUES FROM ('2026-01-01 00:00:00+00') TO ('2026-02-01 00:00:00+00');
CREATE TABLE part_rel.events_2026_02 PARTITION OF part_rel.events
	FOR VALUES FROM ('2026-02-01 00:00:00+00') TO ('2026-03-01 00:00:00+00');
INSERT INTO part_rel.events
SELECT d, timestamptz '2026-01-01 00:00:00+00' + g * interval '7 hours 1.5 seconds',
	   'k' || (g % 5), CASE WHEN g % 7 = 0 THEN NULL ELSE 'p' || g || E' \u00e9 "q''' END
FROM generate_series(1, 4) d, generate_series(0, 200) g;

--
-- 001_telemetry.sql
--	  A small time-series schema: sites, their sensors, the sensors'
--	  readings and the alerts raised at a site.
--
-- readings grows without bound per sensor (one row a minute), and alerts
-- per site: the query tables derived from them get partitions far over
-- Cassandra's sizing limits unless cqlbridge adds a bucket to their
-- partition keys (a time bucket for readings, which are read by time
-- range; a hash bucket for alerts, which are read by site only).
--
-- IDENTIFICATION
--	  migrations/telemetry/schema/001_telemetry.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS telemetry_rel;
SET search_path = telemetry_rel;

CREATE TABLE IF NOT EXISTS sites (
	site_id				int PRIMARY KEY,
	name				text NOT NULL
);

CREATE TABLE IF NOT EXISTS sensors (
	sensor_id			int PRIMARY KEY,
	site_id				int NOT NULL REFERENCES sites (site_id),
	kind				text NOT NULL,
	label				text NOT NULL
);

CREATE TABLE IF NOT EXISTS readings (
	sensor_id			int NOT NULL REFERENCES sensors (sensor_id) ON DELETE CASCADE,
	reported_at			timestamptz NOT NULL,
	value				double precision NOT NULL,
	quality				smallint NOT NULL,
	PRIMARY KEY (sensor_id, reported_at)
);
COMMENT ON TABLE readings IS 'One reading a minute per sensor: the naive partition (one per sensor) passes 100,000 values after about 35 days.';

CREATE TABLE IF NOT EXISTS alerts (
	alert_id			bigint PRIMARY KEY,
	site_id				int NOT NULL REFERENCES sites (site_id),
	sensor_id			int NOT NULL REFERENCES sensors (sensor_id),
	raised_at			timestamptz NOT NULL,
	severity			smallint NOT NULL,
	message				text NOT NULL
);
CREATE INDEX IF NOT EXISTS alerts_site ON alerts (site_id, alert_id);
COMMIT;

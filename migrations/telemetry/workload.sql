--
-- workload.sql
--	  The three application queries of the telemetry example as plain SQL
--	  over schema telemetry_rel, in the block format of
--	  migrations/hotel/workload.sql (see its header).
--
-- Run in psql (every parameter given with -v):
--	  psql -X -d DB -v sensor_id=1 -v from='2026-01-10 00:00:00+00' \
--		   -v to='2026-01-11 00:00:00+00' -v site_id=1 \
--		   -f migrations/telemetry/workload.sql
--
-- Q1 and Q2 read tables whose naive partitions pass the sizing limits on
-- generate.sql's data: cqlbridge plan buckets them (Q1 by time, since it
-- reads a time range; Q2 by a hash of the alert id, since it reads a whole
-- site).  The SQL stays as it is: cql_fdw enumerates the buckets.
--
-- IDENTIFICATION
--	  migrations/telemetry/workload.sql
--

-- name: Q1_readings_by_sensor_range
-- description: readings of a sensor in [from, to), newest first
-- params: sensor_id int, from timestamptz, to timestamptz
-- target: telemetry.readings_by_sensor_id
-- published_key: ((sensor_id, reported_at_bucket), reported_at)
SELECT r.sensor_id, r.reported_at, r.value, r.quality
FROM telemetry_rel.readings r
WHERE r.sensor_id = :'sensor_id'::int
  AND r.reported_at >= :'from'::timestamptz
  AND r.reported_at < :'to'::timestamptz
ORDER BY r.reported_at DESC;

-- name: Q2_alerts_by_site
-- description: alerts raised at a site, by alert id
-- params: site_id int
-- target: telemetry.alerts_by_site_id
-- published_key: ((site_id, bucket), alert_id)
SELECT a.site_id, a.alert_id, a.sensor_id, a.raised_at, a.severity, a.message
FROM telemetry_rel.alerts a
WHERE a.site_id = :'site_id'::int
ORDER BY a.alert_id;

-- name: Q3_sensors_by_site
-- description: the sensors of a site
-- params: site_id int
-- target: telemetry.sensors_by_site_id
-- published_key: ((site_id), sensor_id)
SELECT s.site_id, s.sensor_id, s.kind, s.label
FROM telemetry_rel.sensors s
WHERE s.site_id = :'site_id'::int
ORDER BY s.sensor_id;

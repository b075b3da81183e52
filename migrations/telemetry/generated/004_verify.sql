-- 004_verify.sql: per workload query, parameter samples from the source view and the searched relation,
-- the original query (source) and the same question asked of the foreign table (target).

-- query: Q1_readings_by_sensor_range
-- description: readings of a sensor in [from, to), newest first
-- params: sensor_id int, from timestamptz, to timestamptz
-- table: telemetry.readings_by_sensor_id
-- ordered: true
-- single_partition: false
-- buckets: 2 weeks of reported_at
-- sample
SELECT * FROM (SELECT d.sensor_id, d.reported_at, (d.reported_at + interval '7 days') FROM (SELECT DISTINCT s.sensor_id, s.reported_at FROM cqlbridge_telemetry.readings_by_sensor_id_src s) d ORDER BY md5(d.sensor_id::text || '|' || d.reported_at::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.sensor_id, d.reported_at, (d.reported_at + interval '7 days') FROM (SELECT DISTINCT r.sensor_id AS sensor_id, date_trunc('milliseconds', r.reported_at) AS reported_at FROM telemetry_rel.readings r WHERE r.sensor_id IS NOT NULL AND r.reported_at IS NOT NULL) d ORDER BY md5(d.sensor_id::text || '|' || d.reported_at::text) LIMIT $1 / 2) r;
-- source
SELECT s.sensor_id, date_trunc('milliseconds', s.reported_at) AS reported_at, s.value, s.quality FROM (SELECT r.sensor_id, r.reported_at, r.value, r.quality
FROM telemetry_rel.readings r
WHERE r.sensor_id = $1::int
  AND r.reported_at >= $2::timestamptz
  AND r.reported_at < $3::timestamptz
ORDER BY r.reported_at DESC) s;
-- target
SELECT t.sensor_id, t.reported_at, t.value, t.quality
FROM telemetry_cql.readings_by_sensor_id t
WHERE t.sensor_id = $1 AND t.reported_at >= $2 AND t.reported_at < $3
ORDER BY t.reported_at DESC;

-- query: Q2_alerts_by_site
-- description: alerts raised at a site, by alert id
-- params: site_id int
-- table: telemetry.alerts_by_site_id
-- ordered: true
-- single_partition: false
-- buckets: hash 4 of (alert_id)
-- sample
SELECT * FROM (SELECT d.site_id FROM (SELECT DISTINCT s.site_id FROM cqlbridge_telemetry.alerts_by_site_id_src s) d ORDER BY md5(d.site_id::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.site_id FROM (SELECT DISTINCT r.site_id AS site_id FROM telemetry_rel.alerts r WHERE r.site_id IS NOT NULL) d ORDER BY md5(d.site_id::text) LIMIT $1 / 2) r;
-- source
SELECT s.site_id, s.alert_id, s.sensor_id, date_trunc('milliseconds', s.raised_at) AS raised_at, s.severity, s.message FROM (SELECT a.site_id, a.alert_id, a.sensor_id, a.raised_at, a.severity, a.message
FROM telemetry_rel.alerts a
WHERE a.site_id = $1::int
ORDER BY a.alert_id) s;
-- target
SELECT t.site_id, t.alert_id, t.sensor_id, t.raised_at, t.severity, t.message
FROM telemetry_cql.alerts_by_site_id t
WHERE t.site_id = $1
ORDER BY t.alert_id;

-- query: Q3_sensors_by_site
-- description: the sensors of a site
-- params: site_id int
-- table: telemetry.sensors_by_site_id
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.site_id FROM (SELECT DISTINCT s.site_id FROM cqlbridge_telemetry.sensors_by_site_id_src s) d ORDER BY md5(d.site_id::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.site_id FROM (SELECT DISTINCT r.site_id AS site_id FROM telemetry_rel.sensors r WHERE r.site_id IS NOT NULL) d ORDER BY md5(d.site_id::text) LIMIT $1 / 2) r;
-- source
SELECT s.site_id, s.sensor_id, s.kind, s.label
FROM telemetry_rel.sensors s
WHERE s.site_id = $1::int
ORDER BY s.sensor_id;
-- target
SELECT t.site_id, t.sensor_id, t.kind, t.label
FROM telemetry_cql.sensors_by_site_id t
WHERE t.site_id = $1
ORDER BY t.sensor_id;

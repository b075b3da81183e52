-- 003_load.sql: one INSERT ... SELECT per target table, run in chunks:
-- $1 = chunk number (0..n-1), $2 = chunk count; a chunk is a set of whole partitions.
-- "affected" lines: source relation (primary key) | key columns of the target rows it feeds.
-- Names are SQL identifiers, quoted where needed; the keyspace names the plan's objects.
-- keyspace: telemetry

-- table: telemetry.readings_by_sensor_id
-- foreign_table: telemetry_cql.readings_by_sensor_id
-- source_view: cqlbridge_telemetry.readings_by_sensor_id_src
-- columns: sensor_id, reported_at_bucket, reported_at, value, quality
-- key: sensor_id, reported_at_bucket, reported_at
-- partition_key: sensor_id, reported_at_bucket
-- rows: 117120
-- affected: telemetry_rel.readings (sensor_id, reported_at) | SELECT s.sensor_id, s.reported_at_bucket, s.reported_at FROM cqlbridge_telemetry.readings_by_sensor_id_src s WHERE s.lin_r_sensor_id = $1 AND s.lin_r_reported_at = $2
INSERT INTO telemetry_cql.readings_by_sensor_id (sensor_id, reported_at_bucket, reported_at, value, quality)
SELECT s.sensor_id, s.reported_at_bucket, s.reported_at, s.value, s.quality
FROM cqlbridge_telemetry.readings_by_sensor_id_src s
WHERE (hashtext((s.sensor_id)::text || '|' || (s.reported_at_bucket)::text) & 2147483647) % $2 = $1
ORDER BY s.sensor_id, s.reported_at_bucket;

-- table: telemetry.alerts_by_site_id
-- foreign_table: telemetry_cql.alerts_by_site_id
-- source_view: cqlbridge_telemetry.alerts_by_site_id_src
-- columns: site_id, bucket, alert_id, sensor_id, raised_at, severity, message
-- key: site_id, bucket, alert_id
-- partition_key: site_id, bucket
-- rows: 30040
-- affected: telemetry_rel.alerts (alert_id) | SELECT s.site_id, s.bucket, s.alert_id FROM cqlbridge_telemetry.alerts_by_site_id_src s WHERE s.lin_a_alert_id = $1
INSERT INTO telemetry_cql.alerts_by_site_id (site_id, bucket, alert_id, sensor_id, raised_at, severity, message)
SELECT s.site_id, s.bucket, s.alert_id, s.sensor_id, s.raised_at, s.severity, s.message
FROM cqlbridge_telemetry.alerts_by_site_id_src s
WHERE (hashtext((s.site_id)::text || '|' || (s.bucket)::text) & 2147483647) % $2 = $1
ORDER BY s.site_id, s.bucket;

-- table: telemetry.sensors_by_site_id
-- foreign_table: telemetry_cql.sensors_by_site_id
-- source_view: cqlbridge_telemetry.sensors_by_site_id_src
-- columns: site_id, sensor_id, kind, label
-- key: site_id, sensor_id
-- partition_key: site_id
-- rows: 4
-- affected: telemetry_rel.sensors (sensor_id) | SELECT s.site_id, s.sensor_id FROM cqlbridge_telemetry.sensors_by_site_id_src s WHERE s.lin_s_sensor_id = $1
INSERT INTO telemetry_cql.sensors_by_site_id (site_id, sensor_id, kind, label)
SELECT s.site_id, s.sensor_id, s.kind, s.label
FROM cqlbridge_telemetry.sensors_by_site_id_src s
WHERE (hashtext((s.site_id)::text) & 2147483647) % $2 = $1
ORDER BY s.site_id;

-- 003_load.sql: per target table, the SELECT of its rows (columns in the order of "columns").
-- apply streams them into the foreign table in one pass, ordered by the partition key and
-- resumable batch by batch, or with --chunks N in hash chunks of whole partitions.
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
SELECT s.sensor_id, s.reported_at_bucket, s.reported_at, s.value, s.quality
FROM cqlbridge_telemetry.readings_by_sensor_id_src s;

-- table: telemetry.alerts_by_site_id
-- foreign_table: telemetry_cql.alerts_by_site_id
-- source_view: cqlbridge_telemetry.alerts_by_site_id_src
-- columns: site_id, bucket, alert_id, sensor_id, raised_at, severity, message
-- key: site_id, bucket, alert_id
-- partition_key: site_id, bucket
-- rows: 30040
-- affected: telemetry_rel.alerts (alert_id) | SELECT s.site_id, s.bucket, s.alert_id FROM cqlbridge_telemetry.alerts_by_site_id_src s WHERE s.lin_a_alert_id = $1
SELECT s.site_id, s.bucket, s.alert_id, s.sensor_id, s.raised_at, s.severity, s.message
FROM cqlbridge_telemetry.alerts_by_site_id_src s;

-- table: telemetry.sensors_by_site_id
-- foreign_table: telemetry_cql.sensors_by_site_id
-- source_view: cqlbridge_telemetry.sensors_by_site_id_src
-- columns: site_id, sensor_id, kind, label
-- key: site_id, sensor_id
-- partition_key: site_id
-- rows: 4
-- affected: telemetry_rel.sensors (sensor_id) | SELECT s.site_id, s.sensor_id FROM cqlbridge_telemetry.sensors_by_site_id_src s WHERE s.lin_s_sensor_id = $1
SELECT s.site_id, s.sensor_id, s.kind, s.label
FROM cqlbridge_telemetry.sensors_by_site_id_src s;

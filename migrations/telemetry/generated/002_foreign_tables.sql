-- 002_foreign_tables.sql: foreign tables of keyspace telemetry and the source views
-- (the target rows computed from the relational tables, in CQL shape, then lineage columns).
-- Run in one transaction; re-runnable.
-- Create the schemas, or check that they belong to the role running this.
DO $cqlbridge$
DECLARE
	s text;
	owner name;
BEGIN
	FOREACH s IN ARRAY ARRAY['cqlbridge', 'cqlbridge_telemetry', 'telemetry_cql']::text[] LOOP
		SELECT pg_catalog.pg_get_userbyid(n.nspowner) INTO owner
			FROM pg_catalog.pg_namespace n WHERE n.nspname = s;
		IF NOT FOUND THEN
			EXECUTE pg_catalog.format('CREATE SCHEMA %I', s);
		ELSIF owner <> CURRENT_USER THEN
			RAISE EXCEPTION 'schema % belongs to role %, not to %', pg_catalog.quote_ident(s), owner, CURRENT_USER
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'The owner of a schema can drop and replace the objects in it; cqlbridge keeps its objects in schemas of the role that runs it.',
					  HINT = pg_catalog.format('Run cqlbridge as role %I, or take the schema over: ALTER SCHEMA %I OWNER TO %I.', owner, s, CURRENT_USER);
		END IF;
	END LOOP;
END
$cqlbridge$;

DROP FOREIGN TABLE IF EXISTS telemetry_cql.readings_by_sensor_id;
CREATE FOREIGN TABLE telemetry_cql.readings_by_sensor_id (
    sensor_id integer OPTIONS (column_name 'sensor_id', kind 'partition_key', position '0', cql_type 'int') NOT NULL,
    reported_at_bucket timestamp with time zone OPTIONS (column_name 'reported_at_bucket', kind 'partition_key', position '1', cql_type 'timestamp', bucket '2 weeks', bucket_of 'reported_at') NOT NULL,
    reported_at timestamp with time zone OPTIONS (column_name 'reported_at', kind 'clustering', position '0', clustering_order 'desc', cql_type 'timestamp') NOT NULL,
    value double precision OPTIONS (column_name 'value', kind 'regular', cql_type 'double'),
    quality smallint OPTIONS (column_name 'quality', kind 'regular', cql_type 'smallint')
) SERVER cqlbridge OPTIONS (keyspace 'telemetry', "table" 'readings_by_sensor_id');
DROP VIEW IF EXISTS cqlbridge_telemetry.readings_by_sensor_id_src;
CREATE VIEW cqlbridge_telemetry.readings_by_sensor_id_src WITH (security_invoker = true) AS
SELECT q.sensor_id, public.cql_time_bucket('2 weeks', q.reported_at) AS reported_at_bucket, date_trunc('milliseconds', q.reported_at) AS reported_at, q.value, q.quality, q.lin_r_sensor_id, q.lin_r_reported_at
FROM ( SELECT sensor_id,
    reported_at,
    value,
    quality,
    sensor_id AS lin_r_sensor_id,
    reported_at AS lin_r_reported_at
   FROM telemetry_rel.readings r) q;

DROP FOREIGN TABLE IF EXISTS telemetry_cql.alerts_by_site_id;
CREATE FOREIGN TABLE telemetry_cql.alerts_by_site_id (
    site_id integer OPTIONS (column_name 'site_id', kind 'partition_key', position '0', cql_type 'int') NOT NULL,
    bucket integer OPTIONS (column_name 'bucket', kind 'partition_key', position '1', cql_type 'int', bucket 'hash 4', bucket_of 'alert_id') NOT NULL,
    alert_id bigint OPTIONS (column_name 'alert_id', kind 'clustering', position '0', clustering_order 'asc', cql_type 'bigint') NOT NULL,
    sensor_id integer OPTIONS (column_name 'sensor_id', kind 'regular', cql_type 'int'),
    raised_at timestamp with time zone OPTIONS (column_name 'raised_at', kind 'regular', cql_type 'timestamp'),
    severity smallint OPTIONS (column_name 'severity', kind 'regular', cql_type 'smallint'),
    message text OPTIONS (column_name 'message', kind 'regular', cql_type 'text')
) SERVER cqlbridge OPTIONS (keyspace 'telemetry', "table" 'alerts_by_site_id');
DROP VIEW IF EXISTS cqlbridge_telemetry.alerts_by_site_id_src;
CREATE VIEW cqlbridge_telemetry.alerts_by_site_id_src WITH (security_invoker = true) AS
SELECT q.site_id, public.cql_hash_bucket(4, (q.alert_id)::text) AS bucket, q.alert_id, q.sensor_id, date_trunc('milliseconds', q.raised_at) AS raised_at, q.severity, q.message, q.lin_a_alert_id
FROM ( SELECT site_id,
    alert_id,
    sensor_id,
    raised_at,
    severity,
    message,
    alert_id AS lin_a_alert_id
   FROM telemetry_rel.alerts a) q;

DROP FOREIGN TABLE IF EXISTS telemetry_cql.sensors_by_site_id;
CREATE FOREIGN TABLE telemetry_cql.sensors_by_site_id (
    site_id integer OPTIONS (column_name 'site_id', kind 'partition_key', position '0', cql_type 'int') NOT NULL,
    sensor_id integer OPTIONS (column_name 'sensor_id', kind 'clustering', position '0', clustering_order 'asc', cql_type 'int') NOT NULL,
    kind text OPTIONS (column_name 'kind', kind 'regular', cql_type 'text'),
    label text OPTIONS (column_name 'label', kind 'regular', cql_type 'text')
) SERVER cqlbridge OPTIONS (keyspace 'telemetry', "table" 'sensors_by_site_id');
DROP VIEW IF EXISTS cqlbridge_telemetry.sensors_by_site_id_src;
CREATE VIEW cqlbridge_telemetry.sensors_by_site_id_src WITH (security_invoker = true) AS
SELECT q.site_id, q.sensor_id, q.kind, q.label, q.lin_s_sensor_id
FROM ( SELECT site_id,
    sensor_id,
    kind,
    label,
    sensor_id AS lin_s_sensor_id
   FROM telemetry_rel.sensors s) q;

--
-- generate.sql
--	  Deterministic data for the telemetry_rel schema (schema/001).
--
-- Usage (from the repository root, after the schema file):
--	  psql -X -v ON_ERROR_STOP=1 -d DB -f migrations/telemetry/generate.sql
--	  psql -X -v ON_ERROR_STOP=1 -d DB -v days=90 -f migrations/telemetry/generate.sql
--
-- Variables (all optional):
--	  sites		 number of sites						default 2
--	  sensors	 sensors per site						default 2 (site 1 has them all busy)
--	  days		 days of readings, one a minute			default 40
--	  alerts	 alerts of site 1 (the busy one)		default 30000
--	  start		 first reading (timestamptz)			default 2026-01-01 00:00:00+00
--
-- Shape: every sensor of site 1 reports once a minute for 'days' days
-- (57,600 readings at the default: 115,200 values in one naive partition,
-- over the 100,000 of the sizing rule); the sensors of the other sites
-- report once an hour.  Site 1 raises 'alerts' alerts (4 values each: a
-- naive partition of 120,000 values), the others one a day.
-- Determinism: no random(); values are integer arithmetic of the row
-- number; times are whole seconds added to start, so the session's
-- TimeZone cannot change a value.
--
-- IDENTIFICATION
--	  migrations/telemetry/generate.sql
--
\set ON_ERROR_STOP on
\set QUIET on

\if :{?sites}
\else
\set sites 2
\endif
\if :{?sensors}
\else
\set sensors 2
\endif
\if :{?days}
\else
\set days 40
\endif
\if :{?alerts}
\else
\set alerts 30000
\endif
\if :{?start}
\else
\set start '2026-01-01 00:00:00+00'
\endif

SET search_path = telemetry_rel;
BEGIN;
TRUNCATE alerts, readings, sensors, sites;

INSERT INTO sites (site_id, name)
SELECT s, 'site ' || s FROM generate_series(1, :sites) s;

INSERT INTO sensors (sensor_id, site_id, kind, label)
SELECT (s - 1) * :sensors + k, s,
	   (ARRAY['temperature', 'humidity', 'pressure'])[1 + (s + k) % 3],
	   'S' || s || '-' || k
FROM generate_series(1, :sites) s, generate_series(1, :sensors) k;

-- site 1: a reading a minute; the other sites: one an hour
INSERT INTO readings (sensor_id, reported_at, value, quality)
SELECT n.sensor_id,
	   timestamptz :'start' + make_interval(secs => g * n.every + n.sensor_id),
	   ((g * 7919 + n.sensor_id * 104729) % 100000) / 100.0,
	   ((g + n.sensor_id) % 4)::smallint
FROM (SELECT sensor_id, CASE WHEN site_id = 1 THEN 60 ELSE 3600 END AS every
	  FROM sensors) n,
	 LATERAL generate_series(0, :days * 86400 / n.every - 1) g;

-- site 1: 'alerts' alerts spread over the days; the others one a day
INSERT INTO alerts (alert_id, site_id, sensor_id, raised_at, severity, message)
SELECT g, 1, 1 + g % :sensors,
	   timestamptz :'start' + make_interval(secs => (g * (:days * 86400 / :alerts))::double precision),
	   (g % 5)::smallint,
	   'threshold ' || (g % 97) || ' crossed on S1-' || (1 + g % :sensors)
FROM generate_series(1, :alerts) g;
INSERT INTO alerts (alert_id, site_id, sensor_id, raised_at, severity, message)
SELECT 1000000 * s + d, s, (s - 1) * :sensors + 1,
	   timestamptz :'start' + make_interval(secs => d * 86400 + 3600),
	   (d % 5)::smallint, 'daily check of site ' || s
FROM generate_series(2, :sites) s, generate_series(0, :days - 1) d;
COMMIT;

VACUUM ANALYZE sites, sensors, readings, alerts;
\unset QUIET
SELECT (SELECT count(*) FROM sites) AS sites, (SELECT count(*) FROM sensors) AS sensors,
	   (SELECT count(*) FROM readings) AS readings, (SELECT count(*) FROM alerts) AS alerts;

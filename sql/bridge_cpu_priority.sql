--
-- cql_bridge_cpu_priority(text): "cqlbridge stream --priority idle" puts
-- its backend and walsender into Linux's SCHED_IDLE class with it
-- (src/bridge/cpu_priority.c).  Checked against the kernel's own record
-- of the backend's class: field 41 of /proc/PID/stat (0 SCHED_OTHER,
-- 5 SCHED_IDLE).
--
\i sql/include/cql_server.sql
CREATE FUNCTION pg_temp.sched_policy() RETURNS int LANGUAGE sql AS $$
	SELECT split_part(regexp_replace(pg_read_file('/proc/' || pg_backend_pid() || '/stat'),
									 '^.*\) ', ''), ' ', 39)::int $$;

-- a new session is normal, and 'normal' says so without changing it
SELECT cql_bridge_cpu_priority('normal') AS class, pg_temp.sched_policy() AS policy;

-- anything else than idle or normal: 22023, with a hint
SELECT cql_bridge_cpu_priority('low');
SELECT cql_bridge_cpu_priority(NULL) IS NULL AS strict;

-- a role without REPLICATION may not (42501), one with it may
CREATE ROLE regress_cpu_plain;
CREATE ROLE regress_cpu_streamer REPLICATION;
SET ROLE regress_cpu_plain;
SELECT cql_bridge_cpu_priority('idle');
RESET ROLE;
SELECT pg_temp.sched_policy() AS still_normal;
SET ROLE regress_cpu_streamer;
SELECT cql_bridge_cpu_priority('idle') AS class;
RESET ROLE;
SELECT pg_temp.sched_policy() AS policy;

-- idle for the rest of the session: asking again is harmless, going back
-- is refused (55000), and work goes on
SELECT cql_bridge_cpu_priority('idle') AS class;
SELECT cql_bridge_cpu_priority('normal');
SELECT count(*) FROM generate_series(1, 100000);

DROP ROLE regress_cpu_plain;
DROP ROLE regress_cpu_streamer;
